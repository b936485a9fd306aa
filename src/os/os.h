/*
 * os.h -- the VFS: files, locks, shared memory, time and randomness.
 *
 * The shape mirrors SQLite's sqlite3_vfs / sqlite3_io_methods so that the
 * compat layer can map one onto the other, and so that a wrapping VFS (the
 * fault injector) is a table of function pointers over another VFS.
 *
 * Three VFSes are built in:
 *   "unix"   POSIX files; SQLite's lock byte ranges; one lock table per inode
 *            so two connections of one process never drop each other's locks.
 *   "memdb"  files living in memory, for ":memory:" databases and temp files.
 *   "fault"  created on demand by os_fault_vfs_create() over another VFS.
 *
 * Invariants:
 *  1. A file's lock level only moves NONE->SHARED->RESERVED->(PENDING)->
 *     EXCLUSIVE upward via lock(), and downward only to SHARED or NONE via
 *     unlock(), exactly as SQLite's unix VFS.
 *  2. read() past end of file zero-fills the rest of the buffer and returns
 *     SHALE_IOERR_SHORT_READ; any other failure returns an SHALE_IOERR_* code.
 *  3. Byte ranges (database file, not -shm): PENDING_BYTE = 0x40000000,
 *     RESERVED_BYTE = PENDING_BYTE+1, SHARED_FIRST = PENDING_BYTE+2,
 *     SHARED_SIZE = 510. These are SQLite's and must never change.
 */
#ifndef SHALE_OS_H
#define SHALE_OS_H

#include <stdint.h>

#include "../util/util.h"

/* Lock levels, as SQLite's. */
#define OS_LOCK_NONE 0
#define OS_LOCK_SHARED 1
#define OS_LOCK_RESERVED 2
#define OS_LOCK_PENDING 3
#define OS_LOCK_EXCLUSIVE 4

#define OS_PENDING_BYTE 0x40000000
#define OS_RESERVED_BYTE (OS_PENDING_BYTE + 1)
#define OS_SHARED_FIRST (OS_PENDING_BYTE + 2)
#define OS_SHARED_SIZE 510

/* sync() flags, as SQLite's. */
#define OS_SYNC_NORMAL 0x02
#define OS_SYNC_FULL 0x03
#define OS_SYNC_DATAONLY 0x10

/* access() flags. */
#define OS_ACCESS_EXISTS 0
#define OS_ACCESS_READWRITE 1
#define OS_ACCESS_READ 2

/* shm_lock() flags, as SQLite's. */
#define OS_SHM_UNLOCK 1
#define OS_SHM_LOCK 2
#define OS_SHM_SHARED 4
#define OS_SHM_EXCLUSIVE 8
#define OS_SHM_NLOCK 8

/* device_characteristics() bits used by the pager. */
#define OS_IOCAP_ATOMIC 0x00000001
#define OS_IOCAP_SAFE_APPEND 0x00000200
#define OS_IOCAP_SEQUENTIAL 0x00000400
#define OS_IOCAP_UNDELETABLE_WHEN_OPEN 0x00000800
#define OS_IOCAP_POWERSAFE_OVERWRITE 0x00001000

typedef struct OsFile OsFile;
typedef struct OsFileMethods OsFileMethods;
typedef struct OsVfs OsVfs;

/* An open file. Each VFS allocates a larger struct whose first member is
 * this one; the caller provides vfs->file_size bytes for it. */
struct OsFile {
  const OsFileMethods *methods; /* NULL if open failed */
};

struct OsFileMethods {
  int (*close)(OsFile *);
  int (*read)(OsFile *, void *buf, int amt, int64_t off);
  int (*write)(OsFile *, const void *buf, int amt, int64_t off);
  int (*truncate)(OsFile *, int64_t size);
  int (*sync)(OsFile *, int flags);
  int (*file_size)(OsFile *, int64_t *size);
  int (*lock)(OsFile *, int level);          /* SHALE_BUSY if it cannot be had now */
  int (*unlock)(OsFile *, int level);        /* level is SHARED or NONE */
  int (*check_reserved)(OsFile *, int *out); /* 1 if any process holds RESERVED+ */
  int (*sector_size)(OsFile *);
  int (*device_characteristics)(OsFile *);
  /* Shared memory for the WAL index (docs/format.md). Region i is
   * region_size bytes at offset i*region_size of "<db>-shm" (unix) or of
   * private memory (memdb). extend=0 returns *pp=NULL if not yet present. */
  int (*shm_map)(OsFile *, int region, int region_size, int extend, volatile void **pp);
  int (*shm_lock)(OsFile *, int offset, int n, int flags);
  void (*shm_barrier)(OsFile *);
  int (*shm_unmap)(OsFile *, int delete_flag);
  /* Memory-mapped reads (optional: NULL in a VFS without them -- memdb,
   * fault, compat -- whose users then read()). map() makes [0, size) of
   * the file readable through a read-only shared map (size 0 unmaps); it may
   * grow or move the map, so it returns SHALE_BUSY while fetches are out.
   * The caller guarantees size <= the file's size when it calls, and never
   * touches mapped bytes past the file's current end (another process may
   * truncate it: SIGBUS). fetch() sets *pp to the mapped bytes [off,
   * off+amt), or NULL when they are not mapped; each non-NULL fetch is
   * released by one unfetch() with the same pointer. */
  int (*map)(OsFile *, int64_t size);
  int (*fetch)(OsFile *, int64_t off, int amt, void **pp);
  void (*unfetch)(OsFile *, int64_t off, void *p);
  /* Optional (NULL: nothing to do): the caller read the bytes [off,
   * off+amt) of its map. The 4 KiB units of the map first read since its
   * pages were last released count toward the map's resident bytes (a unit
   * read again adds nothing: it is mapped in already), which the connections
   * of the process that map the file share; once they pass os_map_window(),
   * the map's pages are dropped from the process's resident set (their
   * content stays in the file and the kernel's cache, fetched pointers stay
   * valid and the next touch maps a page back in), so that a scan of a large
   * file does not grow the process by the file's size. */
  void (*map_read)(OsFile *, int64_t off, int amt);
  /* Optional (NULL: SHALE_NOTFOUND for every op): a request by number, as
   * SQLite's xFileControl -- the op numbers are SQLite's SQLITE_FCNTL_*
   * ones, so that an application's VFS gets them unchanged. SHALE_NOTFOUND
   * for an op the file does not know. */
  int (*file_control)(OsFile *, int op, void *arg);
};

/* The file-control ops the engine itself sends or the built-in VFSes answer
 * (SQLite's numbers). */
#define OS_FCNTL_LOCKSTATE 1 /* int *: the file's lock level */
#define OS_FCNTL_VFSNAME 12  /* char **: the VFS's name, shale_malloc'ed */
/* char *[3] (SQLite's SQLITE_FCNTL_PRAGMA): [1] the pragma's name, [2] its
 * value or NULL; SHALE_OK means the file ran the pragma, its result text
 * (shale_malloc'ed, or NULL) in [0]; another code than SHALE_NOTFOUND is an
 * error whose message (shale_malloc'ed, or NULL) is in [0]. */
#define OS_FCNTL_PRAGMA 14
#define OS_FCNTL_HAS_MOVED 20 /* int *: 1 if the path no longer names the open file */

struct OsVfs {
  const char *name;
  int file_size; /* bytes the caller allocates for an OsFile of this VFS */
  int max_pathname;
  void *app_data;
  /* path NULL means an anonymous temp file deleted on close. flags are
   * SHALE_OPEN_*; *out_flags (may be NULL) receives the flags granted. */
  int (*open)(OsVfs *, const char *path, OsFile *, int flags, int *out_flags);
  int (*delete)(OsVfs *, const char *path, int sync_dir);
  int (*access)(OsVfs *, const char *path, int flags, int *res);
  int (*full_pathname)(OsVfs *, const char *path, int nout, char *out);
  int (*randomness)(OsVfs *, int n, char *out);
  int (*sleep)(OsVfs *, int microseconds);
  int (*current_time_ms)(OsVfs *, int64_t *julian_ms); /* Julian day * 86400000 */
};

/* Look a VFS up by name; NULL name gives the default ("unix"). */
OsVfs *os_vfs_find(const char *name);
/* Register a VFS (make_default != 0 makes it the default). Not thread-safe
 * against concurrent lookups of the same name; done at setup. */
int os_vfs_register(OsVfs *, int make_default);
int os_vfs_unregister(OsVfs *);

/* Convenience wrappers: call through the method tables. */
static inline int os_read(OsFile *f, void *b, int n, int64_t o) {
  return f->methods->read(f, b, n, o);
}
static inline int os_write(OsFile *f, const void *b, int n, int64_t o) {
  return f->methods->write(f, b, n, o);
}
static inline int os_truncate(OsFile *f, int64_t s) { return f->methods->truncate(f, s); }
static inline int os_sync(OsFile *f, int fl) { return f->methods->sync(f, fl); }
static inline int os_file_size(OsFile *f, int64_t *s) { return f->methods->file_size(f, s); }
static inline int os_lock(OsFile *f, int l) { return f->methods->lock(f, l); }
static inline int os_unlock(OsFile *f, int l) { return f->methods->unlock(f, l); }
static inline int os_check_reserved(OsFile *f, int *r) { return f->methods->check_reserved(f, r); }
static inline int os_sector_size(OsFile *f) { return f->methods->sector_size(f); }
static inline int os_device_characteristics(OsFile *f) {
  return f->methods->device_characteristics(f);
}
/* Mapped reads: os_can_map() is 0 for a VFS without them. */
static inline int os_can_map(OsFile *f) { return f->methods->map != NULL; }
static inline int os_map(OsFile *f, int64_t s) { return f->methods->map(f, s); }
static inline int os_fetch(OsFile *f, int64_t o, int n, void **pp) {
  return f->methods->fetch(f, o, n, pp);
}
static inline void os_unfetch(OsFile *f, int64_t o, void *p) { f->methods->unfetch(f, o, p); }
static inline void os_map_read(OsFile *f, int64_t off, int amt) {
  if (f->methods->map_read) f->methods->map_read(f, off, amt);
}
static inline int os_file_control(OsFile *f, int op, void *arg) {
  return f->methods->file_control ? f->methods->file_control(f, op, arg) : SHALE_NOTFOUND;
}
/* The process's budget of mapped bytes: the distinct bytes read from all its
 * maps since their pages were last released (os_map_read; plus the kernel's
 * fault-around). A read that takes the total past OS_MAP_WINDOW releases the
 * pages of every map of the process (the newest map of each file; an older
 * one still in use gives its count back when it is unmapped). Every mapping
 * keeps its own resident pages (RSS counts a page once per mapping); the
 * connections of the process that map one file share one map, and the maps
 * of 64 files share one budget. 8 MiB: the pages of a table and index of a
 * few MiB that a cache of 2 MiB keeps evicting and reading again stay mapped
 * (with 4 MiB divided among the live maps, a join over a 4 MiB table
 * released its map 92 times a run, a page fault on every page touched again
 * after each). */
#define OS_MAP_WINDOW ((int64_t)8 << 20)
/* Add delta to the process's count (os_group.c); the new total. */
int64_t os_map_resident(int64_t delta);

/* Open into freshly allocated memory of vfs->file_size bytes; on success *out
 * is the file, to be released with os_close_free(). */
int os_open_alloc(OsVfs *, const char *path, int flags, int *out_flags, OsFile **out);
/* Close (if open) and free an OsFile from os_open_alloc. NULL is a no-op. */
int os_close_free(OsFile *);

/* ---- spill files (os_spill.c) ----
 * A private temporary file (nobody else can open it: locks are always
 * granted, sync does nothing) kept in memory while it holds at most limit
 * bytes; a write or truncate past that moves it, once, to an anonymous file
 * of `disk` (NULL: the default VFS). For temporary databases and journals
 * whose size the cache bound should bound in memory. Close with
 * os_close_free(). */
int os_open_spill(OsVfs *disk, int64_t limit, int flags, OsFile **out);
/* 1 once a spill file has moved to disk (for tests). */
int os_spill_on_disk(OsFile *);

/* ---- the fault-injecting VFS (os_fault.c), for tests ---- */

/* Counters of operations that can be made to fail. */
#define OS_FAULT_READ 0
#define OS_FAULT_WRITE 1
#define OS_FAULT_SYNC 2
#define OS_FAULT_TRUNCATE 3
#define OS_FAULT_NKIND 4

/* Create a VFS named `name` that forwards to `base`, registered (not as
 * default). Destroy with os_fault_vfs_destroy after all its files closed. */
OsVfs *os_fault_vfs_create(const char *name, OsVfs *base);
void os_fault_vfs_destroy(OsVfs *);
/* Fail the n-th operation of `kind` from now (n >= 1, 0 disarms); with
 * persist every later one fails too. Failing ops return SHALE_IOERR_<kind>. */
void os_fault_arm(OsVfs *, int kind, long n, int persist);
/* Operations of each kind seen since creation. */
long os_fault_count(OsVfs *, int kind);
/* Simulate power loss on every file of this VFS: every write not yet
 * followed by a sync of its file is undone (newest first), except that when
 * keep_unsynced > 0 the oldest keep_unsynced unsynced writes of each file
 * survive, and if tear is set the last surviving unsynced write is torn (only
 * its first half, rounded to 512 bytes, survives). File sizes revert with
 * them. After this call every open file of the VFS returns SHALE_IOERR on
 * every operation until closed ("the machine is off"); the files on the base
 * VFS hold the post-crash image. */
void os_fault_power_loss(OsVfs *, int keep_unsynced, int tear);
/* Number of writes not yet synced, over all files of this VFS. */
long os_fault_unsynced(OsVfs *);

/* ---- group commit (os_group.c): one meeting point per WAL file ----
 * Connections of this process writing the same log (same VFS and path)
 * share an OsGroup: a queued token in front of the log's WRITE lock and a
 * coordinator that lets one sync of the log cover many commits. */
typedef struct OsGroup OsGroup;
/* Find or create the group of (vfs, path); release with os_group_detach. */
int os_group_attach(OsVfs *vfs, const char *path, OsGroup **out);
void os_group_detach(OsGroup *);
/* Take the writer token. If another connection holds it: SHALE_BUSY at once
 * when busy is NULL; otherwise wait in a queue (a running thread may take a
 * free token ahead of the head waiter, at most 64 times), calling busy(arg, n)
 * (which sleeps) only after the token has not changed hands for 10 ms;
 * SHALE_BUSY once busy returns 0. */
int os_group_enter(OsGroup *, int (*busy)(void *, int), void *arg);
/* Give the token up, handing it to the first waiter. */
void os_group_leave(OsGroup *);
/* Announce a commit whose frames are all written; returns its number. */
uint64_t os_group_commit(OsGroup *);
/* Return once commit `seq` is durable: if no sync is running, sync f (any
 * handle of the log) with flags, covering every commit announced so far;
 * else wait for the running one and check again. A failed sync's error goes
 * to every commit it covered. */
int os_group_sync(OsGroup *, uint64_t seq, OsFile *f, int flags);
/* Commits announced and syncs led so far (for tests). */
void os_group_stats(OsGroup *, uint64_t *ncommit, long *nsync);

/* Whether the last shm_lock() of this thread refused with SHALE_BUSY was
 * refused by another connection of this process (the built-in VFSes'
 * in-process arbiter, os_lock.c) rather than by another process's lock.
 * Meaningful only right after such a refusal by a built-in VFS. */
int os_shm_busy_in_process(void);

/* Milliseconds since an arbitrary epoch, monotonic; for busy timeouts. */
int64_t os_now_ms(void);
/* The same clock in microseconds. */
int64_t os_now_us(void);

/* Shared libraries (os_dl.c): open (RTLD_NOW | RTLD_GLOBAL; NULL on
 * failure), a symbol's address (NULL if absent), close, and the dynamic
 * linker's message for the last failure copied into buf (n bytes with the
 * NUL; buf unchanged when there is none). */
void *os_dl_open(const char *path);
void *os_dl_sym(void *lib, const char *name);
void os_dl_close(void *lib);
void os_dl_error(char *buf, int n);

#endif /* SHALE_OS_H */
