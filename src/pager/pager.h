/*
 * pager.h -- page cache, transactions, rollback journal and WAL (through wal.h).
 *
 * The pager turns a file into numbered pages with atomic, durable
 * transactions. It knows just enough of the database header to do its job:
 * the page size (offset 16), reserved bytes (20), the change counter (24),
 * the in-header database size (28), version-valid-for (92) and the version
 * stamp (96). Everything else in the file belongs to the b-tree layer.
 *
 * Locking follows SQLite exactly (docs/format.md §9 and Part II):
 * a read transaction holds SHARED; the first write takes RESERVED; commit
 * escalates through PENDING to EXCLUSIVE before it overwrites the database
 * file; a cache spill may escalate earlier. A hot journal found at the start
 * of a read transaction is rolled back (this works for journals left by
 * SQLite too, since the format is SQLite's).
 *
 * Invariants:
 *  1. No database page is written to the file before the journal holding its
 *     original content is synced (unless synchronous=OFF or journal_mode=OFF/
 *     MEMORY, where the user gave that guarantee up).
 *  2. Each page is journalled at most once per transaction, and only pages
 *     that existed when the transaction began (pgno <= original size).
 *  3. A page with a reference count > 0 is never evicted; the data pointer of
 *     a referenced page stays valid until its last unref.
 *  4. pager_extra() memory is zeroed whenever the page content is (re)loaded
 *     from disk or restored by a rollback, so the layer above can cache a
 *     parse of the page there and know when it went stale (all zero).
 *  5. After an I/O error in the middle of a commit or rollback the pager is
 *     in an error state: every call returns that error until the transaction
 *     is rolled back, which reloads from disk (and a hot journal if any).
 */
#ifndef SHALE_PAGER_H
#define SHALE_PAGER_H

#include <stdint.h>

#include "../os/os.h"

typedef struct Pager Pager;
typedef struct PgPage PgPage;

/* journal_mode values, as SQLite's PAGER_JOURNALMODE_*. */
#define PAGER_JOURNAL_DELETE 0
#define PAGER_JOURNAL_PERSIST 1
#define PAGER_JOURNAL_OFF 2
#define PAGER_JOURNAL_TRUNCATE 3
#define PAGER_JOURNAL_MEMORY 4
#define PAGER_JOURNAL_WAL 5

/* synchronous values, as PRAGMA synchronous. */
#define PAGER_SYNC_OFF 0
#define PAGER_SYNC_NORMAL 1
#define PAGER_SYNC_FULL 2
#define PAGER_SYNC_EXTRA 3

/* Transaction state. */
#define PAGER_TXN_NONE 0
#define PAGER_TXN_READ 1
#define PAGER_TXN_WRITE 2

/* pager_get() flags. */
#define PAGER_GET_NOCONTENT 0x01 /* caller will overwrite it all: don't read */

#define PAGER_DEFAULT_PAGE_SIZE 4096
#define PAGER_DEFAULT_CACHE_SIZE (-2000)
/* The version stamp written at offset 96 (the SQLite level implemented). */
#define PAGER_VERSION_STAMP 3040001

/* Open the pager on `path` through `vfs`. path NULL or ":memory:" gives a
 * private in-memory database (memdb VFS, journal_mode MEMORY). path "" gives
 * a private temporary database (as SQLite's): the same, except that its
 * file and journal stay in memory only up to the cache bound and then move
 * to an anonymous file of vfs (NULL: the default VFS). open_flags are
 * SHALE_OPEN_READONLY / READWRITE / CREATE (others passed to the VFS).
 * extra_size bytes of per-page scratch space are reserved (see invariant 4).
 * The file is not read until the first read transaction.
 * Errors: SHALE_CANTOPEN, SHALE_NOMEM. */
int pager_open(OsVfs *vfs, const char *path, int open_flags, int extra_size, Pager **out);
/* Roll back any open transaction, release every lock, free the cache. Every
 * page must have been unreferenced. Always frees the pager. */
int pager_close(Pager *);
/* keep 1: pager_close leaves a write-ahead log as it is (no checkpoint, the
 * -wal and -shm files stay), as SQLite's SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE;
 * 0 (the default): the last user checkpoints and deletes them. */
void pager_set_keep_wal(Pager *, int keep);

/* Page size: settable (512..65536, power of two) only while the database has
 * no pages and no transaction is open; otherwise the call is ignored and
 * returns SHALE_READONLY. reserve = bytes kept at the end of each page. */
int pager_set_page_size(Pager *, uint32_t page_size, int reserve);
uint32_t pager_page_size(Pager *);
uint32_t pager_usable_size(Pager *); /* page size minus reserved bytes */

/* cache_size as PRAGMA cache_size: n > 0 pages, n < 0 means -n KiB. */
void pager_set_cache_size(Pager *, int n);
int pager_cache_size(Pager *);

/* An application's page cache (SQLite's sqlite3_pcache_methods2): with
 * methods configured, pagers opened afterwards keep their pages in caches
 * made by create() -- one per pager, made at its first page -- instead of
 * the built-in one; NULL goes back to the built-in cache for later opens.
 * The table is copied. A fetched page is "pinned" until unpin(); the cache
 * may drop or reuse an unpinned page at any of its calls, so the pager never
 * touches one after unpin() (pager_cache.c invariant 9). fetch()'s create:
 * 0 = only a page already held, 1 = create one if that is easy, 2 = create
 * one if at all possible; NULL when it can't. extra is extra_size bytes that
 * the cache keeps with the page and never reads. */
typedef struct PagerAppPage {
  void *buf;   /* page_size bytes of page content */
  void *extra; /* extra_size bytes for the pager, 8-byte aligned */
} PagerAppPage;
typedef struct PagerCacheMethods {
  void *(*create)(int page_size, int extra_size, int purgeable);
  void (*cachesize)(void *cache, int npages);
  int (*pagecount)(void *cache);
  PagerAppPage *(*fetch)(void *cache, unsigned key, int create);
  void (*unpin)(void *cache, PagerAppPage *page, int discard);
  void (*truncate)(void *cache, unsigned limit); /* drops pages with key >= limit */
  void (*destroy)(void *cache);
  void (*shrink)(void *cache); /* frees what memory it can */
} PagerCacheMethods;
void pager_config_cache(const PagerCacheMethods *m);
/* Give back the memory of the clean unreferenced pages (SQLite's
 * sqlite3PagerShrink, for sqlite3_db_release_memory): they leave the cache,
 * or the application's cache is asked to shrink. An in-memory database's
 * pages are its content and stay. */
void pager_shrink(Pager *);
/* Returns the mode in force afterwards (a change may be refused, e.g. to
 * WAL for an in-memory or empty db or inside a transaction, out of WAL while
 * others are connected, or out of MEMORY for an in-memory db). */
int pager_set_journal_mode(Pager *, int mode);
int pager_journal_mode(Pager *);
void pager_set_synchronous(Pager *, int level);
int pager_synchronous(Pager *);
/* Called with the number of prior calls when a lock is busy; return nonzero
 * to retry (after sleeping as it likes), zero to give up with SHALE_BUSY. */
void pager_set_busy_handler(Pager *, int (*handler)(void *arg, int count), void *arg);
/* A ready-made handler for a busy timeout: arg points to an int holding the
 * timeout in milliseconds (read at each call). It sleeps 1, 2, 5, ... up to
 * 100 ms between retries and gives up once the timeout is spent. */
int pager_busy_wait(void *timeout_ms, int count);
/* For the calling thread's next handler calls (NULL: none): ready(arg)
 * says whether to retry now (PAGER_WATCH_GO: the lock awaited is about to be
 * free), only on the handler's schedule (WAIT), or not even then (HOLD:
 * the lock is left to others); pager_busy.c invariant 3. */
#define PAGER_WATCH_WAIT 0
#define PAGER_WATCH_GO 1
#define PAGER_WATCH_HOLD 2
void pager_busy_watch(int (*ready)(void *), void *arg);
/* The same for a writer of p waiting for its log's WRITE lock (on = 0:
 * stop watching), taking turns with other processes' writers
 * (pager_fair.c); nothing outside WAL mode. */
void pager_busy_watch_log(Pager *p, int on);

/* PRAGMA mmap_size, as SQLite: n < 0 gives 0, larger than 0x7fff0000 is
 * cut to it; returns the value in force, which pager_mmap_size reports (0
 * until set). Reads of database pages go through a read-only map of the
 * file of up to that many bytes (0: read() only) -- and, until the pragma is
 * set, up to 0x7fff0000 bytes (docs/architecture.md, "mapped reads"; the
 * environment variable SHALE_NO_MMAP=1 turns that default off). Takes
 * effect at the next read transaction. */
int64_t pager_set_mmap_size(Pager *, int64_t n);
int64_t pager_mmap_size(Pager *);
int pager_readonly(Pager *);
int pager_is_memory(Pager *);
const char *pager_filename(Pager *);
OsVfs *pager_vfs(Pager *);
/* The database file, and the journal or log file open now (NULL if none):
 * for file controls (SQLITE_FCNTL_FILE_POINTER, JOURNAL_POINTER, the VFS's
 * own ops). */
OsFile *pager_file(Pager *);
OsFile *pager_journal_file(Pager *);
int pager_txn_state(Pager *);
/* In a write transaction, write every unreferenced dirty page now (to the
 * database file after journalling it, or to the log as uncommitted frames
 * in WAL mode), as a cache spill does; nothing to do otherwise.
 * SHALE_OK, SHALE_BUSY (the file's EXCLUSIVE lock could not be had: nothing
 * written), or an I/O error (the pager is in the error state). */
int pager_cacheflush(Pager *);

/* locking_mode, as PRAGMA locking_mode (SQLite's pager semantics):
 * EXCLUSIVE keeps every lock taken at the end of transactions (rollback
 * journal: SHARED after a read, EXCLUSIVE after a write; WAL: EXCLUSIVE on
 * the database file from the first write, or from the opening of the log,
 * whose wal-index then lives in heap memory and no -shm exists). NORMAL
 * releases them at the end of the next transaction; it is refused while the
 * wal-index is in heap memory, and an in-memory database is always
 * EXCLUSIVE. Any other mode value just queries. Returns the mode in force. */
#define PAGER_LOCKING_NORMAL 0
#define PAGER_LOCKING_EXCLUSIVE 1
int pager_set_locking_mode(Pager *, int mode);
int pager_locking_mode(Pager *);

/* Start a read transaction: SHARED lock (busy handler on contention), hot
 * journal rollback, cache invalidation if the file changed since the last
 * transaction (change counter at offset 24), header sanity (magic ->
 * SHALE_NOTADB; bad page size -> SHALE_NOTADB / SHALE_CORRUPT). A no-op if
 * one is already open. */
int pager_begin_read(Pager *);
/* End the read transaction (drop to NONE). A write transaction must have
 * been committed or rolled back first. */
void pager_end_read(Pager *);
/* Start a write transaction (starts a read one first if needed): RESERVED,
 * or EXCLUSIVE at once when exclusive != 0. SHALE_BUSY if another connection
 * holds RESERVED+; SHALE_READONLY if the pager is read-only. */
int pager_begin_write(Pager *, int exclusive);
/* Make the write transaction durable and end it, leaving the read
 * transaction open. Bumps the change counter, version-valid-for and version
 * stamp, and the in-header size, on page 1. A transaction that never called
 * pager_write/pager_truncate commits without touching the file. SHALE_BUSY
 * (readers still present) leaves the write transaction open: retry or roll
 * back. Other errors leave the pager in the error state. */
int pager_commit(Pager *);
/* pager_commit, then (if it succeeded) pager_end_read. In WAL mode a
 * commit that makes the auto-checkpoint due keeps the process's writer
 * token until that checkpoint is over (wal_hold_token), so that the next
 * writer of the process restarts the log. */
int pager_commit_end_read(Pager *);
/* A commit in two phases, for a transaction over several files tied by a
 * super-journal (SQLite's protocol, docs/architecture.md): phase one writes
 * the super-journal's name into the journal (super != NULL), syncs the
 * journal, writes and syncs the database file; the journal stays, so until
 * phase two the transaction can still be rolled back (pager_rollback plays
 * the journal back) and a crash leaves a hot journal that names the
 * super-journal. Phase two finalizes the journal and ends the transaction.
 * pager_commit is phase one (no super-journal) then phase two; in WAL mode
 * phase one does nothing and phase two is pager_commit. */
int pager_commit_phase1(Pager *, const char *super);
int pager_commit_phase2(Pager *);
/* 1 when the open write transaction has changes to commit through a
 * journal file (not WAL, not in memory): a super-journal can cover it. */
int pager_commit_wants_super(Pager *);
/* The journal's path (NULL for an in-memory database). */
const char *pager_journal_path(Pager *);
/* Undo the write transaction (if any) and end it, leaving the read
 * transaction open. Also the way out of the error state: the journal on disk
 * then decides (played back if still valid; if a failed commit had already
 * passed its commit point, the transaction stands). With journal_mode=OFF
 * only the cache is discarded: pages a spill already wrote stay in the file
 * (as SQLite, where rollback is undefined in that mode). */
int pager_rollback(Pager *);

/* Savepoints within a write transaction: n = how many must exist (opening
 * the missing ones at the current state). Rolling back to savepoint i
 * restores the state when it was opened and keeps it open; releasing i
 * discards i and every later one. Statement rollback is savepoint 0 of the
 * layer above. */
int pager_savepoint_open(Pager *, int n);
int pager_savepoint_release(Pager *, int idx);
int pager_savepoint_rollback(Pager *, int idx);
int pager_savepoint_count(Pager *);

/* Database size in pages as seen by the current transaction (pages written
 * past the end count; pages truncated away don't). */
uint32_t pager_db_size(Pager *);
/* Shrink the database to n pages at commit (write transaction only). */
int pager_truncate(Pager *, uint32_t n);

/* Get page pgno (1-based; 0 or beyond 2^31 is SHALE_CORRUPT) with a new
 * reference. A page past the end of the file reads as zeros. The database
 * size comes from the header (offset 28) when valid; a valid size larger
 * than the file makes pager_begin_read fail with SHALE_CORRUPT, as SQLite
 * (pages would be missing); extra pages past it are ignored. With
 * PAGER_GET_NOCONTENT an uncached page inside the database comes back
 * zero-filled, and one past its end with undefined bytes: the caller must
 * overwrite all of it (pager_extra() is zeroed either way). */
int pager_get(Pager *, uint32_t pgno, int flags, PgPage **out);
/* The page if it is in the cache (new reference), else NULL. No I/O. */
PgPage *pager_lookup(Pager *, uint32_t pgno);
/* A read-only view of page pgno's bytes for a caller that copies out of it
 * at once (overflow chains): *out points into the cache, or, for a page not
 * cached and not in the log, straight into the read map (SQLite's direct
 * overflow read: the page takes no cache slot and evicts nothing); else the
 * page is read into the cache as pager_get does. Valid until the next call
 * on the pager; never write through it. Errors as pager_get. */
int pager_peek(Pager *, uint32_t pgno, const uint8_t **out);
void pager_ref(PgPage *);
void pager_unref(PgPage *);
/* References held on the page (the caller's included). A page taken from
 * the freelist must have no other holder, else the file is corrupt. */
int pager_refcount(PgPage *);
/* Make the page writable in the current write transaction: journal its
 * original content if needed and mark it dirty. Writing a page past the
 * current size grows the database to include it. */
int pager_write(PgPage *);
int pager_is_writable(PgPage *);

/* The first member of every PgPage, public so that the two accessors below
 * inline on the btree's hot paths; the rest of PgPage stays private
 * (pager_int.h). Only the pager writes these fields. */
typedef struct PgPageView {
  uint8_t *data; /* page_size bytes, right after the PgPage */
  void *extra;   /* extra_size bytes, after the data */
} PgPageView;
/* (a pointer to a struct is a pointer to its first member) */
static inline uint8_t *pager_data(PgPage *pg) { return ((PgPageView *)(void *)pg)->data; }
static inline void *pager_extra(PgPage *pg) { return ((PgPageView *)(void *)pg)->extra; }
uint32_t pager_pgno(PgPage *);
Pager *pager_of(PgPage *);

/* A number that changes whenever the content seen through this pager may
 * have changed: at the end of each write transaction of this pager and
 * whenever a read transaction found the file changed by someone else (the
 * cache was invalidated). For backups, incremental blob handles and
 * SQLITE_FCNTL_DATA_VERSION. */
uint64_t pager_data_version(Pager *);
/* The largest page number a write may reach (PRAGMA max_page_count;
 * 1073741823 at open): past it pager_write fails with SHALE_FULL, as
 * SQLite's pager. n > 0 sets it (never below the current page count),
 * n <= 0 only reads; returns the value now in force. */
uint32_t pager_max_page_count(Pager *, int64_t n);
/* How many times a read transaction found the database changed by another
 * connection since this pager's first read (PRAGMA data_version). */
uint64_t pager_ext_version(Pager *);
/* Mark the page's pager_extra() scratch stale (zero it), after its data was
 * overwritten wholesale by the caller (backup). */
void pager_zero_extra(PgPage *);
/* Make the pager read-only (writes then fail with SHALE_READONLY) or
 * writable again; for sqlite3_deserialize(READONLY). */
void pager_set_readonly(Pager *, int on);

/* Statistics for tests and PRAGMAs. */
typedef struct PagerStats {
  long hits, misses, writes, spills, syncs;
  int cached, dirty, refs;
  long mapped; /* misses served from the map of the database file */
} PagerStats;
void pager_stats(Pager *, PagerStats *);

/* Check internal consistency (refcounts, dirty list, cache bound); returns
 * SHALE_OK or SHALE_INTERNAL. For tests. */
int pager_check(Pager *);

/* VACUUM with a new page size (rollback journal, file database): commit
 * the write transaction by replacing the whole file with npage pages of
 * page_size bytes, page k filled by get(ctx, k, buf) (page 1 carries the
 * whole new header; the pager sets its own fields in it). Nothing may have
 * been written in the transaction, no page may be referenced and no
 * savepoint open (else SHALE_MISUSE). Every original page is journalled
 * first at the old size, the journal synced, then the pages are written
 * straight to the file, which is cut, synced and the journal finalized (the
 * commit point); a crash before that point is rolled back by the journal.
 * On error the pager is in the error state (roll back). Afterwards the
 * pager uses the new page size and only the read transaction is open. */
int pager_commit_replace(Pager *, uint32_t page_size, uint32_t npage,
                         int (*get)(void *ctx, uint32_t pgno, uint8_t *buf), void *ctx);
/* ---- WAL mode (pager_set_journal_mode(p, PAGER_JOURNAL_WAL)) ----
 * Switching to WAL (file-backed, non-empty, no transaction open) commits
 * bytes 18/19 = 2 with the rollback journal, then opens the -wal log; a
 * database whose header says 2/2 opens its log at the first read. SHARED
 * is kept on the file while the log is open. Commits append frames (no
 * rollback journal; a full cache spills pages into the log as uncommitted
 * frames, forgotten by a rollback, seen by no other connection); after a
 * commit that leaves >= 1000 frames a PASSIVE checkpoint runs when the read
 * transaction ends. Leaving WAL needs EXCLUSIVE (fails while others are
 * connected), checkpoints TRUNCATE, deletes -wal/-shm, sets 18/19 = 1.
 * pager_close checkpoints and deletes the files when it is the last user. */
#define PAGER_CKPT_PASSIVE 0
#define PAGER_CKPT_FULL 1
#define PAGER_CKPT_RESTART 2
#define PAGER_CKPT_TRUNCATE 3
/* Checkpoint (outside transactions: SHALE_LOCKED otherwise). *nlog and
 * *nckpt as PRAGMA wal_checkpoint (-1/-1 when not in WAL mode). SHALE_BUSY
 * if the mode could not be completed. */
int pager_wal_checkpoint(Pager *, int mode, int *nlog, int *nckpt);
/* Frames in the WAL (0 when not in WAL mode): sqlite3_wal_hook's count. */
int pager_wal_frames(Pager *);

/* Snapshots of a WAL database (pager_wal.c; wal.h): PAGER_SNAPSHOT_SIZE
 * bytes naming a state of the log. All SHALE_ERROR when the pager has no
 * log open (not in WAL mode, or not read yet). */
#define PAGER_SNAPSHOT_SIZE 48
/* The open read transaction's snapshot (none, or writing: SHALE_ERROR). */
int pager_snapshot_get(Pager *, uint8_t out[PAGER_SNAPSHOT_SIZE]);
/* The next read transaction (pager_begin_read) opens at snap, which the
 * caller keeps until pager_snapshot_next(p, NULL); begin_read then fails
 * with SHALE_ERROR_SNAPSHOT if the log no longer holds it. */
int pager_snapshot_next(Pager *, const uint8_t *snap);
/* Inside a read transaction: SHALE_OK when snap can still be opened, with
 * checkpoints held off until pager_snapshot_unlock (which is also right
 * after an error); else SHALE_ERROR_SNAPSHOT. */
int pager_snapshot_check(Pager *, const uint8_t snap[PAGER_SNAPSHOT_SIZE]);
void pager_snapshot_unlock(Pager *);
/* Inside a read transaction: sqlite3_snapshot_recover (wal.h). */
int pager_snapshot_recover(Pager *);
/* Order of two snapshots of one database: <0, 0, >0. */
int pager_snapshot_cmp(const uint8_t a[PAGER_SNAPSHOT_SIZE], const uint8_t b[PAGER_SNAPSHOT_SIZE]);

#endif /* SHALE_PAGER_H */
