/*
 * vfs.c -- sqlite3_vfs_find and the sqlite3_vfs objects describing Shale's
 * built-in VFSes ("unix", the default, and "memdb"), sqlite3_file_control,
 * and the process-wide memory statistics and limits (sqlite3_status/64,
 * sqlite3_memory_highwater, sqlite3_release_memory, sqlite3_soft/hard_heap_
 * limit64).
 *
 * Owns: two static sqlite3_vfs tables and the soft heap limit value.
 *
 * Invariants:
 *  1. Each sqlite3_vfs forwards to the OsVfs of the same name (src/os):
 *     xOpen gives an sqlite3_file whose io methods (version 2: shared
 *     memory, no mmap) call the OsFile's; xFullPathname, xRandomness,
 *     xSleep, xCurrentTime(Int64), xAccess and xDelete are the OsVfs's;
 *     xDlOpen, xDlSym, xDlClose and xDlError are the shared-library calls the
 *     extension loader uses (src/os/os_dl.c).
 *  2. sqlite3_vfs_register of these two changes only which is the default;
 *     any other sqlite3_vfs is the application's, adopted by vfs_app.c (SQL
 *     runs over it); sqlite3_vfs_find answers with the sqlite3_vfs of the
 *     OsVfs registered under the name.
 *  3. The hard heap limit is enforced by shale_malloc (util_alloc_limit);
 *     the soft limit is recorded and reported only (advisory in SQLite too),
 *     capped by the hard limit as SQLite does.
 */
#include <errno.h>
#include <string.h>

#include "../src/os/os.h"
#include "compat_int.h"

typedef struct CFile {
  sqlite3_file base;
  OsFile *f;
  int borrowed; /* a connection's file (SQLITE_FCNTL_FILE_POINTER): never closed here */
} CFile;

static OsVfs *os_of(sqlite3_vfs *v) { return os_vfs_find((const char *)v->pAppData); }
static OsFile *F(sqlite3_file *p) { return ((CFile *)p)->f; }

static int c_close(sqlite3_file *p) {
  if (((CFile *)p)->borrowed) return SQLITE_OK; /* the connection closes it */
  int rc = os_close_free(F(p));
  ((CFile *)p)->f = NULL;
  p->pMethods = NULL;
  return rc;
}
static int c_read(sqlite3_file *p, void *b, int n, sqlite3_int64 o) {
  return os_read(F(p), b, n, o);
}
static int c_write(sqlite3_file *p, const void *b, int n, sqlite3_int64 o) {
  return os_write(F(p), b, n, o);
}
static int c_truncate(sqlite3_file *p, sqlite3_int64 n) { return os_truncate(F(p), n); }
static int c_sync(sqlite3_file *p, int fl) { return os_sync(F(p), fl); }
static int c_size(sqlite3_file *p, sqlite3_int64 *n) {
  int64_t s = 0;
  int rc = os_file_size(F(p), &s);
  *n = s;
  return rc;
}
static int c_lock(sqlite3_file *p, int l) { return os_lock(F(p), l); }
static int c_unlock(sqlite3_file *p, int l) { return os_unlock(F(p), l); }
static int c_reserved(sqlite3_file *p, int *r) { return os_check_reserved(F(p), r); }
static int c_fcntl(sqlite3_file *p, int op, void *arg) { return os_file_control(F(p), op, arg); }
static int c_sector(sqlite3_file *p) { return os_sector_size(F(p)); }
static int c_devchar(sqlite3_file *p) { return os_device_characteristics(F(p)); }

static int c_shm_map(sqlite3_file *p, int region, int size, int extend, volatile void **pp) {
  return F(p)->methods->shm_map(F(p), region, size, extend, pp);
}
static int c_shm_lock(sqlite3_file *p, int off, int n, int flags) {
  return F(p)->methods->shm_lock(F(p), off, n, flags);
}
static void c_shm_barrier(sqlite3_file *p) { F(p)->methods->shm_barrier(F(p)); }
static int c_shm_unmap(sqlite3_file *p, int del) { return F(p)->methods->shm_unmap(F(p), del); }

static const sqlite3_io_methods c_methods = {
    2,          c_close,       c_read,      c_write, c_truncate, c_sync,    c_size,
    c_lock,     c_unlock,      c_reserved,  c_fcntl, c_sector,   c_devchar, c_shm_map,
    c_shm_lock, c_shm_barrier, c_shm_unmap, NULL,    NULL};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *p, int flags, int *out) {
  CFile *c = (CFile *)p;
  c->base.pMethods = NULL;
  c->f = NULL;
  c->borrowed = 0;
  OsVfs *o = os_of(v);
  if (!o) return SQLITE_CANTOPEN;
  int rc = os_open_alloc(o, name, flags, out, &c->f);
  if (rc != SQLITE_OK) {
    c->f = NULL;
    return rc;
  }
  c->base.pMethods = &c_methods;
  return SQLITE_OK;
}
static int v_delete(sqlite3_vfs *v, const char *name, int sync_dir) {
  OsVfs *o = os_of(v);
  return o ? o->delete (o, name, sync_dir) : SQLITE_IOERR_DELETE;
}
static int v_access(sqlite3_vfs *v, const char *name, int flags, int *res) {
  OsVfs *o = os_of(v);
  return o ? o->access(o, name, flags, res) : SQLITE_IOERR_ACCESS;
}
static int v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out) {
  OsVfs *o = os_of(v);
  return o ? o->full_pathname(o, name, n, out) : SQLITE_CANTOPEN;
}
static void *v_dlopen(sqlite3_vfs *v, const char *f) { return os_dl_open(f); }
static void v_dlerror(sqlite3_vfs *v, int n, char *out) { os_dl_error(out, n); }
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void) {
  return (void (*)(void))os_dl_sym(h, sym);
}
static void v_dlclose(sqlite3_vfs *v, void *h) { os_dl_close(h); }
static int v_random(sqlite3_vfs *v, int n, char *out) {
  OsVfs *o = os_of(v);
  if (!o || n <= 0) return 0;
  return o->randomness(o, n, out); /* bytes written */
}
static int v_sleep(sqlite3_vfs *v, int us) {
  OsVfs *o = os_of(v);
  if (o && us > 0) o->sleep(o, us);
  return us;
}
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out) {
  OsVfs *o = os_of(v);
  int64_t ms = 0;
  int rc = o ? o->current_time_ms(o, &ms) : SQLITE_ERROR;
  *out = ms;
  return rc;
}
static int v_time(sqlite3_vfs *v, double *out) {
  sqlite3_int64 ms = 0;
  int rc = v_time64(v, &ms);
  *out = (double)ms / 86400000.0;
  return rc;
}
static int v_lasterr(sqlite3_vfs *v, int n, char *out) {
  if (n > 0 && out) out[0] = 0;
  return errno;
}

#define CVFS(zname)                                                                                \
  {                                                                                                \
    2, (int)sizeof(CFile), 512, NULL, zname, (void *)zname, v_open, v_delete, v_access,            \
        v_fullpath, v_dlopen, v_dlerror, v_dlsym, v_dlclose, v_random, v_sleep, v_time, v_lasterr, \
        v_time64, NULL, NULL, NULL                                                                 \
  }

static sqlite3_vfs vfs_unix = CVFS("unix");
static sqlite3_vfs vfs_memdb = CVFS("memdb");

/* The sqlite3_vfs of a registered OsVfs: an application's (vfs_app.c) or
 * one of the two tables here. */
static sqlite3_vfs *vfs_of(OsVfs *o) {
  if (!o) return NULL;
  sqlite3_vfs *v = compat_vfs_app_of(o);
  if (v) return v;
  if (!strcmp(o->name, "unix")) return &vfs_unix;
  if (!strcmp(o->name, "memdb")) return &vfs_memdb;
  return NULL;
}

sqlite3_vfs *sqlite3_vfs_find(const char *name) {
  sqlite3_initialize();
  return vfs_of(os_vfs_find(name));
}
int sqlite3_vfs_register(sqlite3_vfs *v, int dflt) {
  if (!v) return SQLITE_MISUSE;
  sqlite3_initialize();
  if (v == &vfs_unix || v == &vfs_memdb) { /* Shale's own: registered already */
    OsVfs *o = os_vfs_find(v->zName);
    return o ? os_vfs_register(o, dflt) : SQLITE_ERROR;
  }
  return compat_vfs_app_register(v, dflt);
}
int sqlite3_vfs_unregister(sqlite3_vfs *v) {
  if (!v) return SQLITE_OK;
  if (v == &vfs_unix || v == &vfs_memdb) {
    OsVfs *o = os_vfs_find(v->zName);
    return o ? os_vfs_unregister(o) : SQLITE_OK;
  }
  return compat_vfs_app_unregister(v);
}

/* ---- file control ---- */

/* An sqlite3_file for a connection's file f: an application VFS's own, or
 * one over Shale's file kept with the connection for its life (slots
 * COMPAT_SLOT_FILEOBJ - k, one per file asked for). */
static sqlite3_file *file_object(sqlite3 *db, OsFile *f) {
  sqlite3_file *sf = compat_vfs_app_file(f);
  if (sf) return sf;
  for (int k = 0; k < 64; k++) {
    CFile *c = compat_held(db, COMPAT_SLOT_FILEOBJ - k);
    if (c && c->f == f) return &c->base;
    if (c) continue;
    c = shale_malloc(sizeof *c);
    if (!c) return NULL;
    c->base.pMethods = &c_methods;
    c->f = f;
    c->borrowed = 1;
    if (!compat_hold(db, COMPAT_SLOT_FILEOBJ - k, c, shale_free)) {
      shale_free(c);
      return NULL;
    }
    return &c->base;
  }
  return NULL;
}

/* As SQLite's: the ops about the connection (data version, VFS, file and
 * journal objects) answered here; every other op goes to the file's VFS
 * (an application's xFileControl, or Shale's own: LOCKSTATE, VFSNAME,
 * HAS_MOVED). */
int sqlite3_file_control(sqlite3 *db, const char *zdb, int op, void *arg) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  shale *s = (shale *)db;
  const char *name = zdb ? zdb : "main";
  OsVfs *vfs = shale_db_vfs(s, name);
  if (!vfs) return SQLITE_ERROR; /* no such database (or temp not opened yet) */
  switch (op) {
    case SQLITE_FCNTL_DATA_VERSION:
      if (!arg) return SQLITE_MISUSE;
      return shale_data_version(s, zdb, (unsigned *)arg);
    case SQLITE_FCNTL_VFS_POINTER:
      if (!arg) return SQLITE_MISUSE;
      *(sqlite3_vfs **)arg = vfs_of(vfs);
      if (!*(sqlite3_vfs **)arg) *(sqlite3_vfs **)arg = &vfs_memdb;
      return SQLITE_OK;
    case SQLITE_FCNTL_FILE_POINTER:
    case SQLITE_FCNTL_JOURNAL_POINTER: {
      if (!arg) return SQLITE_MISUSE;
      OsFile *f = shale_db_file(s, name, op == SQLITE_FCNTL_JOURNAL_POINTER);
      *(sqlite3_file **)arg = f ? file_object(db, f) : NULL;
      return f && !*(sqlite3_file **)arg ? SQLITE_NOMEM : SQLITE_OK;
    }
    default:
      return shale_file_control(s, name, op, arg);
  }
}

/* ---- memory statistics and limits ---- */

int sqlite3_status64(int op, sqlite3_int64 *cur, sqlite3_int64 *hi, int reset) {
  if (op < 0 || op > SQLITE_STATUS_MALLOC_COUNT || !cur || !hi) return SQLITE_MISUSE;
  switch (op) {
    case SQLITE_STATUS_MEMORY_USED:
      *cur = util_alloc_bytes();
      *hi = util_alloc_highwater(reset);
      break;
    case SQLITE_STATUS_MALLOC_COUNT:
      *cur = util_alloc_outstanding();
      *hi = util_alloc_blocks_highwater(reset);
      break;
    case SQLITE_STATUS_MALLOC_SIZE:
      *cur = 0;
      *hi = util_alloc_max_request(reset);
      break;
    default: /* page cache and scratch memory are not pre-allocated pools */
      *cur = *hi = 0;
      break;
  }
  if (*hi < *cur) *hi = *cur;
  return SQLITE_OK;
}

int sqlite3_status(int op, int *cur, int *hi, int reset) {
  if (!cur || !hi) return SQLITE_MISUSE;
  sqlite3_int64 c = 0, h = 0;
  int rc = sqlite3_status64(op, &c, &h, reset);
  if (rc == SQLITE_OK) {
    *cur = (int)c;
    *hi = (int)h;
  }
  return rc;
}

sqlite3_int64 sqlite3_memory_highwater(int reset) {
  sqlite3_int64 h = util_alloc_highwater(reset), c = util_alloc_bytes();
  return h > c ? h : c;
}

int sqlite3_release_memory(int n) { return 0; } /* caches are per connection */

sqlite3_int64 sqlite3_soft_heap_limit64(sqlite3_int64 n) { return util_alloc_soft_limit(n); }

sqlite3_int64 sqlite3_hard_heap_limit64(sqlite3_int64 n) { return util_alloc_hard_limit(n); }

void sqlite3_soft_heap_limit(int n) { sqlite3_soft_heap_limit64(n < 0 ? 0 : n); }
