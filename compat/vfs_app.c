/*
 * vfs_app.c -- the application's VFSes: an sqlite3_vfs given to
 * sqlite3_vfs_register becomes an OsVfs of src/os (an "adopted" VFS) that
 * the pager opens its files through, so SQL runs over a VFS shim, an
 * encrypting or checksumming VFS, or one of the application's own; and
 * sqlite3_database_file_object for the code of such a VFS.
 *
 * Owns: the adopted VFS list (AppVfs, never freed: a VFS unregistered while
 * files are open stays valid for them; registering it again reuses it), and
 * per open main database file its filename block.
 *
 * Invariants:
 *  1. An AppVfs forwards every method to its sqlite3_vfs; an AppFile's
 *     sqlite3_file lives right after it (the OsVfs's file_size covers both)
 *     and gets xClose once if its xOpen set pMethods, as SQLite's rule for a
 *     failed xOpen says.
 *  2. The name a main database file is opened with is a filename object in
 *     SQLite's layout, inside a block that starts with the database file's
 *     sqlite3_file pointer: ptr | 4 zero bytes | db\0 | \0 | journal\0 |
 *     wal\0 | \0\0. Its journal and WAL files are opened with the names in
 *     that block, so sqlite3_database_file_object(name) walks back to the
 *     four zero bytes and reads the pointer before them, as in SQLite. The
 *     block lives until the main file closes (journal and WAL close first).
 *  3. Memory mapping is not offered (the pager reads through xRead), shared
 *     memory only when the file's io methods have version 2 or more.
 *  4. app_mu guards the list and the open main files' blocks.
 *  5. sqlite3_open_v2 and ATTACH name, for the thread they run on, the
 *     filename object (with its URI parameters) of the file they open
 *     through an application's VFS (compat_vfs_app_pending); the VFS's main
 *     file takes it when its absolute name is that object's. The copy is
 *     the thread's until taken or replaced (an ATTACH that fails before its
 *     open leaves it to the thread's next open or ATTACH, which replace it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../src/os/os.h"
#include "compat_int.h"

typedef struct AppVfs {
  OsVfs base;
  sqlite3_vfs *v;
  struct AppVfs *next;
} AppVfs;

typedef struct AppFile {
  OsFile base;
  AppVfs *vfs;
  char *block;             /* main database: invariant 2's block; else NULL */
  struct AppFile *next_db; /* open main database files of every AppVfs */
  sqlite3_file *sf;        /* right after this struct */
} AppFile;

#define APP_FILE_HDR ((sizeof(AppFile) + 15) & ~(size_t)15)

static pthread_mutex_t app_mu = PTHREAD_MUTEX_INITIALIZER;
static AppVfs *apps;
static AppFile *open_dbs;
/* The filename object (a copy) of the open or ATTACH this thread is in,
 * whose main file an application's VFS opens next (invariant 5). */
static __thread char *pending;

void compat_vfs_app_pending(const char *fname) {
  free(pending);
  pending = NULL;
  if (!fname) return;
  const char *fo = fname - 4;
  size_t n = compat_fname_size(fo);
  if ((pending = malloc(n)) != NULL) memcpy(pending, fo, n);
}

static sqlite3_file *SF(OsFile *f) { return ((AppFile *)f)->sf; }
static const sqlite3_io_methods *M(OsFile *f) { return SF(f)->pMethods; }

/* ------------------------------------------------------------ the files */

static int f_close(OsFile *pf) {
  AppFile *f = (AppFile *)pf;
  int rc = M(pf) ? M(pf)->xClose(f->sf) : SQLITE_OK;
  f->sf->pMethods = NULL;
  if (f->block) {
    pthread_mutex_lock(&app_mu);
    for (AppFile **p = &open_dbs; *p; p = &(*p)->next_db)
      if (*p == f) {
        *p = f->next_db;
        break;
      }
    pthread_mutex_unlock(&app_mu);
    free(f->block);
    f->block = NULL;
  }
  return rc;
}
static int f_read(OsFile *f, void *b, int n, int64_t o) { return M(f)->xRead(SF(f), b, n, o); }
static int f_write(OsFile *f, const void *b, int n, int64_t o) {
  return M(f)->xWrite(SF(f), b, n, o);
}
static int f_truncate(OsFile *f, int64_t n) { return M(f)->xTruncate(SF(f), n); }
static int f_sync(OsFile *f, int fl) { return M(f)->xSync(SF(f), fl); }
static int f_size(OsFile *f, int64_t *n) {
  sqlite3_int64 s = 0;
  int rc = M(f)->xFileSize(SF(f), &s);
  *n = s;
  return rc;
}
static int f_lock(OsFile *f, int l) { return M(f)->xLock(SF(f), l); }
static int f_unlock(OsFile *f, int l) { return M(f)->xUnlock(SF(f), l); }
static int f_reserved(OsFile *f, int *r) { return M(f)->xCheckReservedLock(SF(f), r); }
static int f_sector(OsFile *f) { return M(f)->xSectorSize ? M(f)->xSectorSize(SF(f)) : 4096; }
static int f_devchar(OsFile *f) {
  return M(f)->xDeviceCharacteristics ? M(f)->xDeviceCharacteristics(SF(f)) : 0;
}
static int has_shm(OsFile *f) { return M(f)->iVersion >= 2 && M(f)->xShmMap; }
static int f_shm_map(OsFile *f, int region, int size, int extend, volatile void **pp) {
  *pp = NULL;
  return has_shm(f) ? M(f)->xShmMap(SF(f), region, size, extend, pp) : SQLITE_IOERR_SHMMAP;
}
static int f_shm_lock(OsFile *f, int off, int n, int flags) {
  return has_shm(f) ? M(f)->xShmLock(SF(f), off, n, flags) : SQLITE_IOERR_SHMLOCK;
}
static void f_shm_barrier(OsFile *f) {
  if (has_shm(f)) M(f)->xShmBarrier(SF(f));
}
static int f_shm_unmap(OsFile *f, int del) {
  return has_shm(f) ? M(f)->xShmUnmap(SF(f), del) : SQLITE_OK;
}

static int f_fcntl(OsFile *f, int op, void *arg) { /* the op numbers are SQLite's */
  return M(f)->xFileControl ? M(f)->xFileControl(SF(f), op, arg) : SQLITE_NOTFOUND;
}

static const OsFileMethods app_methods = {
    f_close,     f_read,     f_write,  f_truncate, f_sync,    f_size,     f_lock,
    f_unlock,    f_reserved, f_sector, f_devchar,  f_shm_map, f_shm_lock, f_shm_barrier,
    f_shm_unmap, NULL,       NULL,     NULL,       NULL,      f_fcntl};

sqlite3_file *compat_vfs_app_file(OsFile *f) {
  return f && f->methods == &app_methods ? SF(f) : NULL;
}

/* The name of path in an open main database's block (its journal or WAL
 * name), or NULL. app_mu held. */
static const char *name_in_block(const char *path) {
  for (AppFile *f = open_dbs; f; f = f->next_db) {
    const char *db = f->block + sizeof(sqlite3_file *) + 4;
    const char *j = sqlite3_filename_journal(db), *w = sqlite3_filename_wal(db);
    if (j && !strcmp(j, path)) return j;
    if (w && !strcmp(w, path)) return w;
  }
  return NULL;
}

static int a_open(OsVfs *ov, const char *path, OsFile *pf, int flags, int *out_flags) {
  AppVfs *a = (AppVfs *)ov;
  AppFile *f = (AppFile *)pf;
  memset(f, 0, sizeof *f);
  f->vfs = a;
  f->sf = (sqlite3_file *)((char *)f + APP_FILE_HDR);
  memset(f->sf, 0, (size_t)a->v->szOsFile);
  const char *name = path;
  if (path && (flags & SHALE_OPEN_MAIN_DB)) {
    char *fo; /* 4 zero bytes first: the open's own, with its URI parameters */
    if (pending && !strcmp(pending + 4, path)) {
      fo = pending;
      pending = NULL;
    } else {
      fo = compat_fname_file(path, 0, NULL);
    }
    if (!fo) return SQLITE_NOMEM;
    size_t n = compat_fname_size(fo);
    f->block = malloc(sizeof(sqlite3_file *) + n);
    if (!f->block) {
      free(fo);
      return SQLITE_NOMEM;
    }
    memcpy(f->block, &f->sf, sizeof(sqlite3_file *));
    memcpy(f->block + sizeof(sqlite3_file *), fo, n);
    free(fo);
    name = f->block + sizeof(sqlite3_file *) + 4;
  } else if (path && (flags & (SHALE_OPEN_MAIN_JOURNAL | SHALE_OPEN_WAL))) {
    pthread_mutex_lock(&app_mu);
    const char *in = name_in_block(path);
    pthread_mutex_unlock(&app_mu);
    if (in) name = in;
  }
  int got = 0;
  int rc =
      a->v->xOpen(a->v, name, f->sf, flags & ~(SHALE_OPEN_NOLOCK | SHALE_OPEN_IMMUTABLE), &got);
  if (rc != SQLITE_OK || !f->sf->pMethods) {
    if (f->sf->pMethods) f->sf->pMethods->xClose(f->sf);
    f->sf->pMethods = NULL;
    free(f->block);
    f->block = NULL;
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  if (out_flags) *out_flags = got;
  f->base.methods = &app_methods;
  if (f->block) {
    pthread_mutex_lock(&app_mu);
    f->next_db = open_dbs;
    open_dbs = f;
    pthread_mutex_unlock(&app_mu);
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------- the VFS */

static sqlite3_vfs *V(OsVfs *o) { return ((AppVfs *)o)->v; }
static int a_delete(OsVfs *o, const char *path, int sync_dir) {
  return V(o)->xDelete ? V(o)->xDelete(V(o), path, sync_dir) : SQLITE_IOERR_DELETE;
}
static int a_access(OsVfs *o, const char *path, int flags, int *res) {
  *res = 0;
  return V(o)->xAccess(V(o), path, flags, res);
}
static int a_fullpath(OsVfs *o, const char *path, int n, char *out) {
  return V(o)->xFullPathname(V(o), path, n, out);
}
static int a_random(OsVfs *o, int n, char *out) {
  return V(o)->xRandomness ? V(o)->xRandomness(V(o), n, out) : 0;
}
static int a_sleep(OsVfs *o, int us) { return V(o)->xSleep ? V(o)->xSleep(V(o), us) : 0; }
static int a_time(OsVfs *o, int64_t *ms) {
  sqlite3_vfs *v = V(o);
  if (v->iVersion >= 2 && v->xCurrentTimeInt64) {
    sqlite3_int64 t = 0;
    int rc = v->xCurrentTimeInt64(v, &t);
    *ms = t;
    return rc;
  }
  double d = 0;
  int rc = v->xCurrentTime ? v->xCurrentTime(v, &d) : SQLITE_ERROR;
  *ms = (int64_t)(d * 86400000.0);
  return rc;
}

/* The adopted VFS of v, made at first use (NULL: out of memory). */
static AppVfs *adopt(sqlite3_vfs *v) {
  pthread_mutex_lock(&app_mu);
  AppVfs *a = apps;
  while (a && a->v != v) a = a->next;
  if (!a && (a = calloc(1, sizeof *a)) != NULL) {
    a->v = v;
    a->base.name = v->zName;
    a->base.file_size = (int)(APP_FILE_HDR + (size_t)(v->szOsFile > 0 ? v->szOsFile : 0));
    a->base.max_pathname = v->mxPathname;
    a->base.open = a_open;
    a->base.delete = a_delete;
    a->base.access = a_access;
    a->base.full_pathname = a_fullpath;
    a->base.randomness = a_random;
    a->base.sleep = a_sleep;
    a->base.current_time_ms = a_time;
    a->next = apps;
    apps = a;
  }
  pthread_mutex_unlock(&app_mu);
  return a;
}

int compat_vfs_app_register(sqlite3_vfs *v, int dflt) {
  if (!v->zName || !v->xOpen || !v->xAccess || !v->xFullPathname) return SQLITE_MISUSE;
  AppVfs *a = adopt(v);
  return a ? os_vfs_register(&a->base, dflt) : SQLITE_NOMEM;
}

int compat_vfs_app_unregister(sqlite3_vfs *v) {
  pthread_mutex_lock(&app_mu);
  AppVfs *a = apps;
  while (a && a->v != v) a = a->next;
  pthread_mutex_unlock(&app_mu);
  if (a) os_vfs_unregister(&a->base);
  return SQLITE_OK;
}

sqlite3_vfs *compat_vfs_app_of(OsVfs *o) {
  pthread_mutex_lock(&app_mu);
  AppVfs *a = apps;
  while (a && &a->base != o) a = a->next;
  pthread_mutex_unlock(&app_mu);
  return a ? a->v : NULL;
}

sqlite3_file *sqlite3_database_file_object(const char *z) {
  if (!z) return NULL;
  while (z[-1] || z[-2] || z[-3] || z[-4]) z--;
  sqlite3_file *f;
  memcpy(&f, z - 4 - sizeof f, sizeof f);
  return f;
}
