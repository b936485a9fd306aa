/*
 * pager_int.h -- private declarations shared by the pager's files.
 *
 * pager.c          open/close, configuration, transactions, commit, rollback,
 *                  savepoints, get/write, check/stats.
 * pager_cache.c    the page cache: hash table pgno -> page, LRU of clean
 *                  unreferenced pages, dirty list, eviction and spilling.
 * pager_journal.c  the rollback journal: segment headers, page records,
 *                  syncs, finalisation per journal_mode, playback (own and
 *                  hot journals, SQLite's format), super-journal names.
 *
 * Nothing outside src/pager/ includes this header.
 *
 * Invariants (checked by pager_check()):
 *  1. Every cached page is in the hash table and on the all_head list
 *     exactly once. A page is on the LRU list iff nref == 0 and it is
 *     clean; on the dirty list iff dirty.
 *  2. ncached <= budget, or the LRU list is empty (everything over budget is
 *     referenced or dirty and could not be spilled).
 *  3. A dirty page with pgno <= orig_size is in the journalled set (unless
 *     journal_mode is OFF or it is the lock-byte page).
 *  4. err != SHALE_OK means the error state of pager.h invariant 5.
 *  5. A dirty page whose spgen equals the pager's is in the saved set of
 *     every open savepoint that covers it (pgno <= its db_size): with
 *     invariant 3 it needs nothing before another change, so pager_write
 *     returns at once (the savepoints opened or rolled back since it was
 *     prepared change spgen).
 */
#ifndef SHALE_PAGER_INT_H
#define SHALE_PAGER_INT_H

#include <stdint.h>
#include <string.h>

#include "pager.h"
#include "wal.h"

/* Page flags. */
#define PG_DIRTY 0x01

/* Auto-checkpoint threshold in frames (SQLite's wal_autocheckpoint). */
#define PAGER_WAL_AUTOCHECKPOINT 1000

struct PgPage {
  PgPageView v; /* data, extra (first: pager_data/pager_extra, pager.h) */
  Pager *pager;
  uint32_t pgno;
  int nref;
  int flags;
  uint32_t spgen;        /* Pager.spgen when pager_write last prepared it (invariant 5) */
  PgPage *hnext;         /* hash chain */
  PgPage *aprev, *anext; /* list of every cached page (cache walks) */
  PgPage *lprev, *lnext; /* LRU list (clean, unreferenced) */
  PgPage *dprev, *dnext; /* dirty list */
  PgPage *sort;          /* scratch link for sorting at commit */
  PagerAppPage *app;     /* the application cache's page holding this one, or NULL */
  uint32_t app_gen;      /* Pager.app_gen when it was last unpinned (invariant 9) */
};

/* A set of page numbers (open addressing, 0 = empty slot). */
typedef struct PgSet {
  uint32_t *slot;
  uint32_t cap; /* power of two or 0 */
  uint32_t n;
} PgSet;

/* One saved page image of the sub-journal: in memory (data) or, past a
 * limit, in a temporary file (data NULL, image at off of sjfd). */
typedef struct SubRec {
  uint32_t pgno;
  uint8_t *data;
  int64_t off;
} SubRec;

typedef struct Savepoint {
  uint32_t db_size; /* database size when opened */
  int sub_start;    /* first sub-journal record that belongs to it */
  PgSet saved;      /* pages with a record at index >= sub_start */
} Savepoint;

struct Pager {
  OsVfs *vfs;
  OsFile *fd;     /* database file */
  OsFile *jfd;    /* journal (file or memdb anonymous file), or NULL */
  OsFile *jspare; /* emptied in-memory journal kept for the next txn */
  char *path;     /* full path of the database, NULL if in-memory */
  char *jpath;    /* path of the journal, NULL if in-memory */
  int readonly;
  uint64_t data_version; /* pager_data_version() */
  uint32_t max_pgno;     /* pager_max_page_count() */
  uint64_t ext_version;  /* pager_ext_version() */
  int memory;            /* private to this pager: ":memory:" or a temporary database */
  int temp;              /* temporary database: its file and journal are spill files */
  int extra_size;

  uint32_t page_size;
  int reserve;
  int cache_cfg; /* as set by pager_set_cache_size */
  int budget;    /* cache bound in pages */
  int lru_max;   /* pager_unref trims past this many cached pages: budget, or
                  * -1 when the application's cache unpins (pager_cache.c 9) */
  int journal_mode;
  int sync_level;
  int (*busy)(void *, int);
  void *busy_arg;

  int txn;                /* PAGER_TXN_* */
  int lock;               /* lock level we hold on fd */
  int err;                /* error state (pager.h invariant 5) */
  uint32_t db_size;       /* size in pages seen by the transaction */
  uint32_t orig_size;     /* size when the write transaction began */
  uint8_t hdr[16];        /* bytes 24..39 of the file the cache reflects */
  uint8_t commit_hdr[16]; /* hdr as phase one of a commit wrote it (phase two adopts it) */
  uint8_t phase1;         /* pager_commit_phase1 ran; the journal awaits phase two */
  int hdr_valid;
  int dbmod;         /* database file written in this write txn */
  int wrote;         /* pager_write/pager_truncate called in this txn */
  uint32_t min_size; /* smallest db_size in this write txn (truncation) */

  /* Journal writing state. */
  int jopen_tried;  /* journal opened for this write txn */
  int64_t jhdr;     /* offset of the current segment header */
  int64_t jofs;     /* where the next record goes */
  uint32_t jnrec;   /* records in the current segment */
  uint32_t jnonce;  /* nonce of the current segment */
  int jneed_hdr;    /* a new segment header is due before the next record */
  int junsynced;    /* records written since the last sync */
  uint32_t jsector; /* header area size (512) */
  PgSet journaled;  /* pages whose original is in the journal */
  uint8_t *jbuf;    /* page_size + 8 bytes: one record being written */

  /* Savepoints and the in-memory sub-journal. */
  Savepoint *sp;
  int nsp, spcap;
  uint32_t spgen; /* changes whenever a savepoint opens or rolls back (never 0) */
  SubRec *sub;
  int nsub, subcap;
  int nsub_mem;  /* records held in memory */
  OsFile *sjfd;  /* temporary file for the rest, or NULL */
  int64_t sjend; /* bytes used in sjfd */

  /* In-memory page store (pager_mem.c): transaction-start images. */
  SubRec *mimg;
  int nmimg, mimgcap;
  uint8_t *mspare[32]; /* spare image buffers */
  int nmspare;

  /* Cache. */
  PgPage **hash;
  uint32_t nhash; /* power of two */
  int ncached;
  int ndirty;
  int nrefd;        /* pages with nref > 0 */
  PgPage *all_head; /* every cached page, through aprev/anext */
  PgPage *lru_head, *lru_tail;
  PgPage *dirty_head, *dirty_tail;
  PgPage *spare;          /* page blocks of spare_sz bytes kept for reuse (hnext) */
  int nspare;             /* ncached + nspare <= budget (pager_cache.c invariant 8) */
  size_t spare_sz;        /* the block size they were made for */
  int in_spill;           /* re-entrancy guard */
  int spill_busy;         /* a spill in this write txn found EXCLUSIVE busy */
  int64_t wal_foreign_ms; /* os_now_ms() when the log's WRITE lock was last busy
                           * while we held the process's writer token: a
                           * writer of another process (pager.c) */
  /* Turns at the WRITE lock with other processes' writers (pager_fair.c). */
  int64_t fair_run_us;        /* os_now_us() when our current run began (0: none) */
  int64_t fair_run_len;       /* its length once contended (0: not drawn yet) */
  int64_t fair_yield_us;      /* our last commit was a yield commit, at this time */
  int fair_empty;             /* turns in a row that nobody took */
  int64_t fair_balance_us;    /* our turns minus the others' runs we ended */
  int64_t fair_other_seen_us; /* os_now_us() at the last commit of another engine seen */
  uint32_t fair_own_change;   /* iChange of our last commit */
  uint32_t fair_seen_change;  /* waiting: the last commit seen, its kind */
  int fair_seen_kind;
  int64_t fair_hold_us;                  /* waiting: do not retry before this (a turn left free) */
  int64_t fair_other_us, fair_other_len; /* waiting: another engine's run */

  /* WAL mode (journal_mode == PAGER_JOURNAL_WAL with a Wal open). */
  Wal *wal;          /* open log, or NULL; SHARED is kept while it is open */
  int hdr_wal;       /* the file header read last says 2/2 (bytes 18/19) */
  int ckpt_due;      /* a commit grew the log past the auto-checkpoint mark */
  int no_wal;        /* leaving WAL mode: don't reopen the log at begin_read */
  uint8_t immutable; /* SHALE_OPEN_IMMUTABLE: no hot journal, no WAL is looked at */
  uint8_t nolock;    /* SHALE_OPEN_NOLOCK: the VFS takes no locks (WAL only exclusive) */
  int wal_spilled;   /* this WAL write txn appended uncommitted frames (pager_wal.c) */
  int excl_mode;     /* locking_mode=EXCLUSIVE (pager_wal.c) */
  int keep_wal;      /* pager_set_keep_wal: close leaves the log */
  int wal_heap;      /* the Wal's index is in heap memory (exclusive mode) */
  /* the next read transaction opens at this snapshot (pager_wal.c) */
  const uint8_t *snap_next;

  /* Mapped reads (pager_cache.c; docs/architecture.md departure on mmap). */
  int64_t mmap_user;    /* PRAGMA mmap_size as set, -1 = never set (reports 0) */
  int64_t mmap_limit;   /* bytes the map may cover; 0 = read() only */
  int64_t fsz;          /* file size learned by the last fstat, -1 = unknown */
  int map_refresh;      /* fstat again at the next read transaction */
  uint32_t wal_mx_seen; /* the log's mxFrame at the last WAL snapshot */
  int64_t map_len;      /* size last given to os_map (0 = none) */
  uint8_t *map;         /* fetched during a read transaction: the file's start */
  int64_t map_bytes;    /* bytes [0, map_bytes) of the file are read from map */

  /* The application's page cache (pager_cache.c invariant 9). */
  PagerCacheMethods app; /* app.fetch NULL: the built-in cache */
  void *appc;            /* its cache for this pager, made at the first page */
  uint32_t app_gen;      /* changes when unpinned pages it holds went stale */
  int app_pages;         /* the cache size it was last told, in pages */
  uint8_t *peek_buf;     /* pager_peek's copy of a page it holds (page_size bytes) */

  PagerStats stats;
};

/* Internal map limit when PRAGMA mmap_size was never set (SQLite's largest
 * mmap_size, 0x7fff0000): reads of pages in the file go through the map. */
#define PAGER_MMAP_MAX ((int64_t)0x7fff0000)
#define PAGER_MMAP_DEFAULT PAGER_MMAP_MAX

/* Bytes a temporary database's file or journal keeps in memory before it
 * moves to disk: the cache bound (pager_cache_set_budget) in bytes. */
int64_t pager_temp_limit(Pager *);

/* An in-memory database whose pages live in the cache alone (pager_mem.c):
 * ":memory:" and other private ones, not a temporary database. */
static inline int pager_memstore(const Pager *p) { return p->memory && !p->temp; }

/* ---- in-memory page store (pager_mem.c) ---- */
/* Save the image of pg (pgno <= orig_size, not yet saved) before its first
 * change in the write transaction; adds it to the journalled set. */
int pager_mem_save(Pager *, PgPage *);
/* Commit: dirty pages made clean, images dropped. */
void pager_mem_commit(Pager *);
/* Rollback: images copied back, added pages dropped, size restored. */
void pager_mem_rollback(Pager *);
void pager_mem_free(Pager *);

/* ---- pgset (pager_cache.c) ---- */
void pager_pgset_clear(PgSet *);
/* Empty the set for the next transaction, keeping a small slot array (no
 * allocation per transaction); a large one is freed as by pager_pgset_clear. */
void pager_pgset_reset(PgSet *);
int pager_pgset_has(const PgSet *, uint32_t pgno);
/* Make room so that `more` inserts cannot fail. SHALE_NOMEM on failure. */
int pager_pgset_reserve(PgSet *, uint32_t more);
/* Insert (room must have been reserved). */
void pager_pgset_add(PgSet *, uint32_t pgno);

/* ---- cache (pager_cache.c) ---- */
/* The pager takes the configured application cache, if any (pager_open). */
int pager_cache_init(Pager *);
/* Pages of the application's cache are pinned only while the pager refers
 * to them or they are dirty (not for an in-memory database, whose pages are
 * its content: those stay pinned). */
static inline int pager_app_unpins(const Pager *p) { return p->app.fetch && !pager_memstore(p); }
/* The application's cache holds page pgno unpinned and still valid: it is
 * pinned again and comes back linked into the cache with nref 1; else NULL. */
PgPage *pager_cache_app_kept(Pager *, uint32_t pgno);
/* A page from pager_cache_alloc that will not be inserted after all. */
void pager_cache_discard(Pager *, PgPage *);
/* Page size changes: the application's cache (made for the old size) goes. */
void pager_cache_app_reset(Pager *);
void pager_cache_free_all(Pager *); /* frees every page, referenced or not */
PgPage *pager_cache_find(Pager *, uint32_t pgno);
/* Page pgno was read from the map: counted, and reported to the OS layer
 * (invariant 7 of pager_cache.c). */
void pager_map_count(Pager *, uint32_t pgno);
/* Obtain a page struct for pgno (not yet in the cache), evicting or spilling
 * if over budget. The page comes back unlinked with nref 0 -- or, with
 * PAGER_CACHE_KEPT, as pager_cache_app_kept gives it: the application's
 * cache still held the page, whose content is valid. */
#define PAGER_CACHE_KEPT (-1)
int pager_cache_alloc(Pager *, uint32_t pgno, PgPage **out);
void pager_cache_insert(Pager *, PgPage *);
void pager_cache_remove(Pager *, PgPage *); /* unlink from hash/LRU/dirty, free */
void pager_cache_make_dirty(Pager *, PgPage *);
void pager_cache_make_clean(Pager *, PgPage *);
/* A dirty page just used: to the tail of the dirty list (oldest use first). */
void pager_cache_dirty_touch(Pager *, PgPage *);
void pager_cache_lru_add(Pager *, PgPage *);
void pager_cache_lru_del(Pager *, PgPage *);
/* Evict clean unreferenced pages while over budget. */
void pager_cache_trim(Pager *);
/* Drop every page: unreferenced ones are freed, referenced ones reloaded
 * from disk (or zeroed past db_size) with extra zeroed and made clean.
 * clean_only: leave dirty pages alone. */
int pager_cache_invalidate(Pager *, int clean_only);
/* Forget pg's content: removed (and freed) if unreferenced, else made
 * clean and reloaded from disk (the read's error is returned). */
int pager_cache_forget(Pager *, PgPage *);
/* Drop (unreferenced) or reload (referenced) cached pages lo..hi. */
int pager_cache_reload_range(Pager *, uint32_t lo, uint32_t hi);
/* Drop cached pages with pgno > n (truncate / savepoint rollback). */
void pager_cache_drop_above(Pager *, uint32_t n);
/* Dirty list sorted by pgno, linked through ->sort. */
PgPage *pager_cache_sorted_dirty(Pager *);
void pager_cache_set_budget(Pager *);
/* Read page content from disk into pg (zeros past db_size or EOF). */
int pager_read_page(Pager *, PgPage *);
/* Mapped reads for the read transaction being started (file size known in
 * fsz): (re)map up to min(fsz, mmap_limit) and fetch it. No-op for a VFS
 * without maps, an in-memory db, or mmap_limit 0. Failures just leave the
 * pager reading with os_read. */
void pager_map_begin(Pager *);
/* Release the fetch of pager_map_begin (end of the read transaction). */
void pager_map_end(Pager *);
/* Truncate the database file to size bytes: the map stops short of the new
 * end first (invariant 6 of pager_cache.c). */
int pager_file_truncate(Pager *, int64_t size);
/* pg's own buffer: the application page's under an application cache
 * (invariant 9 of pager_cache.c), else the bytes after the struct. */
static inline uint8_t *pager_page_buf(PgPage *pg) {
  return pg->app ? pg->app->buf : (uint8_t *)(pg + 1);
}
/* 1 if pg's data is read in place from the map (invariant 10 of
 * pager_cache.c), not its own buffer; never under an application cache. */
static inline int pager_page_mapped(PgPage *pg) { return pg->v.data != pager_page_buf(pg); }
/* Give a mapped page its own buffer again before anything writes its data:
 * the mapped bytes copied when keep, else left (the caller overwrites all). */
static inline void pager_page_own(Pager *p, PgPage *pg, int keep) {
  uint8_t *own = pager_page_buf(pg);
  if (pg->v.data == own) return;
  if (keep) memcpy(own, pg->v.data, p->page_size);
  pg->v.data = own;
}
/* Every mapped page of the cache to its own buffer (a copy): before the map
 * they point into goes (os_map with another size, a truncation). */
void pager_cache_own_all(Pager *, uint32_t above);

/* ---- transactions (pager.c) ---- */
/* Acquire lock level with the busy handler. */
int pager_lock_wait(Pager *, int level);
/* Write the given sorted dirty pages to the db file (EXCLUSIVE must be
 * held, journal synced); marks them clean. */
int pager_write_pages(Pager *, PgPage *list);
/* Enter the error state with rc (if rc is an I/O-type error). */
int pager_set_error(Pager *, int rc);
uint32_t pager_lock_page(Pager *);

/* ---- WAL extras (pager_wal.c) ---- */
/* Append every unreferenced dirty page to the log as uncommitted frames and
 * mark them clean (WAL write transaction, cache full). Errors put the pager
 * in the error state. */
/* Write up to max unreferenced dirty pages, oldest first, as uncommitted
 * frames (INT_MAX: all of them). */
int pager_wal_spill(Pager *, int max);
/* After a WAL rollback: drop the cache if pages were spilled. */
int pager_wal_after_rollback(Pager *);
/* Exclusive locking mode: take EXCLUSIVE on the database file (busy
 * handler) unless held; a no-op in normal mode. */
int pager_wal_exclusive_lock(Pager *);

/* ---- turns at the WAL WRITE lock (pager_fair.c) ---- */
/* Writers of other processes competed for the log's WRITE lock within the
 * last second (wal_foreign_ms). */
int pager_fair_contended(Pager *);
/* Before a write transaction takes its snapshot, holding the writer token:
 * after a yield commit, wait until another writer committed or the turn
 * ran out (pager_fair.c invariant 2). */
void pager_fair_pause(Pager *);
/* WRITE was just taken: a run begins unless the last commit was ours. */
void pager_fair_acquired(Pager *);
/* Before the commit's frames: sets the log's yield flag; returns it. */
int pager_fair_before_commit(Pager *);
/* After the commit was published, with the flag pager_fair_before_commit gave. */
void pager_fair_committed(Pager *, int yield);

/* ---- journal (pager_journal.c) ---- */
int pager_journal_uses_file(Pager *); /* DELETE/TRUNCATE/PERSIST */
/* Append the original image of pg to the journal (opening it if needed). */
int pager_journal_page(Pager *, PgPage *);
/* Sync the journal (closing the current segment). */
int pager_journal_sync(Pager *);
/* Append the super-journal record (marker, name, length, checksum, magic)
 * to the open journal, before it is synced. */
int pager_journal_write_super(Pager *, const char *super);
/* Finish the journal after commit or rollback, per journal_mode. */
int pager_journal_finalize(Pager *);
/* Play back the open journal (own rollback or hot). is_hot: check the
 * super-journal first. Truncates the db file to the journal's initial size.
 * *played is set to 1 if the database file may have changed. */
int pager_journal_playback(Pager *, int is_hot, int *played);
/* Error-state rollback after a failed commit closed the journal: open the
 * journal on disk, if any, and play it back as a hot one (left open). */
int pager_journal_playback_disk(Pager *, int *played);
/* Hot journal detection and rollback, called at begin_read with SHARED
 * held. *rolled set to 1 if the database file changed. */
int pager_hot_journal(Pager *, int *rolled);
uint32_t pager_journal_cksum(uint32_t nonce, const uint8_t *data, uint32_t page_size);
void pager_journal_close(Pager *);

#endif /* SHALE_PAGER_INT_H */
