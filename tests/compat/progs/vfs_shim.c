/* vfs_shim.c -- SQL over an application's VFS: a pass-through shim over
 * the default VFS (as checksumming, encrypting and tracing VFSes are made)
 * registered by name and as the default, in rollback and WAL mode; the
 * shim sees the main database, journal and WAL opens with the right flags,
 * finds the database file of a journal or WAL with
 * sqlite3_database_file_object, reads URI parameters from the main file's
 * name, and every read and write of the database goes through it (the
 * shim flips a byte of every page on disk, so a file written around it
 * would be corrupt for it). Then sqlite3_vfs_find, unregister and
 * re-registering the original default. File controls: the shim runs
 * pragmas of its own (SQLITE_FCNTL_PRAGMA: an answer, an error, no row)
 * and an op of its own through sqlite3_file_control; FILE_POINTER and
 * JOURNAL_POINTER give its files; the default VFS's answers (VFSNAME,
 * LOCKSTATE, HAS_MOVED) reach through it. Portable: printed output compared
 * between SQLite and Shale (test_compat). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

typedef struct ShimFile {
  sqlite3_file base;
  sqlite3_file *real; /* right after */
  int main_db;
} ShimFile;

static sqlite3_vfs *orig;
static int n_main, n_journal, n_wal, n_other, dbobj_ok, dbobj_bad, uri_seen;
static sqlite3_file *last_main;

#define REAL(p) (((ShimFile *)(p))->real)

/* Byte 100 of every page past the first is flipped on disk (a toy
 * transform: only a file read back through the shim makes sense). */
static void flip(void *buf, int n, sqlite3_int64 off, int main_db) {
  if (!main_db || n < 4096 || off < 4096) return;
  for (int k = 0; k + 4096 <= n; k += 4096) ((unsigned char *)buf)[k + 100] ^= 0x5a;
}

static int s_close(sqlite3_file *p) { return REAL(p)->pMethods->xClose(REAL(p)); }
static int s_read(sqlite3_file *p, void *b, int n, sqlite3_int64 o) {
  int rc = REAL(p)->pMethods->xRead(REAL(p), b, n, o);
  if (rc == SQLITE_OK) flip(b, n, o, ((ShimFile *)p)->main_db);
  return rc;
}
static int s_write(sqlite3_file *p, const void *b, int n, sqlite3_int64 o) {
  int main_db = ((ShimFile *)p)->main_db;
  if (!main_db || n < 4096 || o < 4096) return REAL(p)->pMethods->xWrite(REAL(p), b, n, o);
  void *c = malloc((size_t)n);
  if (!c) return SQLITE_NOMEM;
  memcpy(c, b, (size_t)n);
  flip(c, n, o, 1);
  int rc = REAL(p)->pMethods->xWrite(REAL(p), c, n, o);
  free(c);
  return rc;
}
static int s_truncate(sqlite3_file *p, sqlite3_int64 n) {
  return REAL(p)->pMethods->xTruncate(REAL(p), n);
}
static int s_sync(sqlite3_file *p, int f) { return REAL(p)->pMethods->xSync(REAL(p), f); }
static int s_size(sqlite3_file *p, sqlite3_int64 *n) {
  return REAL(p)->pMethods->xFileSize(REAL(p), n);
}
static int s_lock(sqlite3_file *p, int l) { return REAL(p)->pMethods->xLock(REAL(p), l); }
static int s_unlock(sqlite3_file *p, int l) { return REAL(p)->pMethods->xUnlock(REAL(p), l); }
static int s_reserved(sqlite3_file *p, int *r) {
  return REAL(p)->pMethods->xCheckReservedLock(REAL(p), r);
}
#define SHIM_FCNTL_ANSWER 0x7a11 /* an op of the shim's own */
static int n_pragma_fcntl;

static int s_fcntl(sqlite3_file *p, int op, void *a) {
  if (op == SHIM_FCNTL_ANSWER) {
    *(int *)a = 42;
    return SQLITE_OK;
  }
  if (op == SQLITE_FCNTL_PRAGMA) {
    char **arg = a;
    n_pragma_fcntl++;
    if (!sqlite3_stricmp(arg[1], "shim_hello")) {
      arg[0] = sqlite3_mprintf("hello %s", arg[2] ? arg[2] : "(no value)");
      return SQLITE_OK;
    }
    if (!sqlite3_stricmp(arg[1], "shim_null")) return SQLITE_OK; /* no row */
    if (!sqlite3_stricmp(arg[1], "shim_fail")) {
      arg[0] = sqlite3_mprintf("the shim refuses %s", arg[2] ? arg[2] : "it");
      return SQLITE_ERROR;
    }
    if (!sqlite3_stricmp(arg[1], "shim_busy")) return SQLITE_BUSY; /* no message */
  }
  return REAL(p)->pMethods->xFileControl(REAL(p), op, a);
}
static int s_sector(sqlite3_file *p) { return REAL(p)->pMethods->xSectorSize(REAL(p)); }
static int s_devchar(sqlite3_file *p) { return REAL(p)->pMethods->xDeviceCharacteristics(REAL(p)); }
static int s_shm_map(sqlite3_file *p, int i, int sz, int ext, void volatile **pp) {
  return REAL(p)->pMethods->xShmMap(REAL(p), i, sz, ext, pp);
}
static int s_shm_lock(sqlite3_file *p, int off, int n, int fl) {
  return REAL(p)->pMethods->xShmLock(REAL(p), off, n, fl);
}
static void s_shm_barrier(sqlite3_file *p) { REAL(p)->pMethods->xShmBarrier(REAL(p)); }
static int s_shm_unmap(sqlite3_file *p, int del) {
  return REAL(p)->pMethods->xShmUnmap(REAL(p), del);
}

static const sqlite3_io_methods shim_io = {
    2,          s_close,       s_read,      s_write, s_truncate, s_sync,    s_size,
    s_lock,     s_unlock,      s_reserved,  s_fcntl, s_sector,   s_devchar, s_shm_map,
    s_shm_lock, s_shm_barrier, s_shm_unmap, NULL,    NULL};

static int shim_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out) {
  ShimFile *s = (ShimFile *)f;
  s->real = (sqlite3_file *)(s + 1);
  s->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  if (flags & SQLITE_OPEN_MAIN_DB) {
    n_main++;
    last_main = f;
    if (name && sqlite3_uri_parameter(name, "shimkey")) uri_seen++;
  } else if (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL)) {
    if (flags & SQLITE_OPEN_MAIN_JOURNAL)
      n_journal++;
    else
      n_wal++;
    if (name && sqlite3_database_file_object(name) == last_main)
      dbobj_ok++;
    else
      dbobj_bad++;
  } else {
    n_other++;
  }
  int rc = orig->xOpen(orig, name, s->real, flags, out);
  f->pMethods = s->real->pMethods ? &shim_io : NULL;
  return rc;
}
static int shim_delete(sqlite3_vfs *v, const char *z, int d) { return orig->xDelete(orig, z, d); }
static int shim_access(sqlite3_vfs *v, const char *z, int f, int *r) {
  return orig->xAccess(orig, z, f, r);
}
static int shim_full(sqlite3_vfs *v, const char *z, int n, char *o) {
  return orig->xFullPathname(orig, z, n, o);
}
static int shim_random(sqlite3_vfs *v, int n, char *o) { return orig->xRandomness(orig, n, o); }
static int shim_sleep(sqlite3_vfs *v, int us) { return orig->xSleep(orig, us); }
static int shim_time(sqlite3_vfs *v, double *t) { return orig->xCurrentTime(orig, t); }
static int shim_lasterr(sqlite3_vfs *v, int n, char *o) { return orig->xGetLastError(orig, n, o); }

static sqlite3_vfs shim = {1,         0,           0,           NULL,       "shim",    NULL,
                           shim_open, shim_delete, shim_access, shim_full,  NULL,      NULL,
                           NULL,      NULL,        shim_random, shim_sleep, shim_time, shim_lasterr,
                           NULL,      NULL,        NULL,        NULL};

static void show(const char *what) {
  printf("%s: main %d journal %d wal %d other>0 %d db_object ok>0 %d bad %d uri %d\n", what,
         n_main > 0, n_journal > 0, n_wal > 0, n_other > 0, dbobj_ok > 0, dbobj_bad, uri_seen > 0);
  n_main = n_journal = n_wal = n_other = dbobj_ok = dbobj_bad = uri_seen = 0;
}

static void rows(sqlite3 *db, const char *q) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
  printf("  %s ->", q);
  if (rc) printf(" prepare %d %s", rc, sqlite3_errmsg(db));
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = sqlite3_step(st)) != SQLITE_ROW) break;
    for (int i = 0; i < sqlite3_column_count(st); i++) printf(" %s", sqlite3_column_text(st, i));
  }
  if (rc != SQLITE_DONE && rc != SQLITE_OK) printf(" step %d %s", rc, sqlite3_errmsg(db));
  printf("\n");
  sqlite3_finalize(st);
}

static void columns(sqlite3 *db, const char *q) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
  printf("  %s: prepare %d", q, rc);
  if (rc == SQLITE_OK) {
    printf(", %d column(s) named", sqlite3_column_count(st));
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const char *n = sqlite3_column_name(st, i);
      printf(" [%s]", n ? n : "NULL");
    }
  }
  printf("\n");
  sqlite3_finalize(st);
}

static void file_controls(sqlite3 *db, int shimmed) {
  n_pragma_fcntl = 0;
  rows(db, "PRAGMA shim_hello");
  rows(db, "PRAGMA shim_hello = 'world'");
  rows(db, "PRAGMA main.shim_hello(-5)");
  columns(db, "PRAGMA shim_hello = x");
  rows(db, "PRAGMA shim_null");
  columns(db, "PRAGMA shim_null");
  rows(db, "PRAGMA shim_fail = 3");
  rows(db, "PRAGMA shim_busy");
  rows(db, "PRAGMA nosuch.shim_hello");
  rows(db, "PRAGMA user_version");
  printf("  pragmas the VFS saw: %s\n", n_pragma_fcntl == 0 ? "none" : "some");
  int v = 0;
  printf("  own op: %d", sqlite3_file_control(db, "main", SHIM_FCNTL_ANSWER, &v));
  printf(" -> %d\n", v);
  printf("  unknown op: %d\n", sqlite3_file_control(db, NULL, 0x7a12, &v));
  printf("  unknown database: %d\n", sqlite3_file_control(db, "nosuch", SHIM_FCNTL_ANSWER, &v));
  sqlite3_file *f = NULL;
  printf("  file pointer: %d", sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f));
  printf(" the shim's %d\n", f && f->pMethods == &shim_io);
  EXPECT(f && f->pMethods);
  char *name = NULL;
  if (f && f->pMethods) {
    int rc = f->pMethods->xFileControl(f, SQLITE_FCNTL_VFSNAME, &name);
    printf("  through the file: VFSNAME %d %s\n", rc, name ? name : "NULL");
    sqlite3_free(name);
  }
  name = NULL;
  printf("  VFSNAME %d", sqlite3_file_control(db, "main", SQLITE_FCNTL_VFSNAME, &name));
  printf(" %s\n", name ? name : "NULL");
  sqlite3_free(name);
  int moved = -1;
  printf("  HAS_MOVED %d", sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved));
  printf(" -> %d\n", moved);
  int lock = -1;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_LOCKSTATE, &lock);
  printf("  lock outside a transaction %d\n", lock);
  EXEC_OK(db, "BEGIN; INSERT INTO t(b) VALUES('fcntl')");
  sqlite3_file_control(db, "main", SQLITE_FCNTL_LOCKSTATE, &lock);
  printf("  lock in a write transaction %d\n", lock);
  sqlite3_file *j = NULL;
  printf("  journal pointer: %d",
         sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &j));
  printf(" open %d, the shim's %d\n", j && j->pMethods, j && j->pMethods == &shim_io);
  EXEC_OK(db, "ROLLBACK");
  (void)shimmed;
}

static void workload(sqlite3 *db, const char *mode) {
  char q[128];
  snprintf(q, sizeof q, "PRAGMA journal_mode=%s", mode);
  rows(db, q);
  EXEC_OK(db, "CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b TEXT)");
  EXEC_OK(db, "BEGIN");
  for (int i = 0; i < 500; i++) {
    snprintf(q, sizeof q, "INSERT INTO t(b) VALUES(printf('%%0500d', %d))", i);
    EXEC_OK(db, q);
  }
  EXEC_OK(db, "COMMIT");
  EXEC_OK(db, "UPDATE t SET b = upper(b) || 'x' WHERE a % 7 = 0");
  rows(db, "SELECT count(*), sum(length(b)), min(a), max(a) FROM t");
  rows(db, "PRAGMA integrity_check");
}

int main(void) {
  char dir[] = "/tmp/compat-shim-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[256], uri[300];
  snprintf(path, sizeof path, "%s/s.db", dir);
  snprintf(uri, sizeof uri, "file:%s?shimkey=7", path);
  orig = sqlite3_vfs_find(NULL);
  EXPECT(orig != NULL);
  shim.szOsFile = (int)sizeof(ShimFile) + orig->szOsFile;
  shim.mxPathname = orig->mxPathname;
  EXPECT_INT(sqlite3_vfs_register(&shim, 0), SQLITE_OK);
  EXPECT(sqlite3_vfs_find("shim") == &shim);
  EXPECT(sqlite3_vfs_find(NULL) == orig);

  /* by name, rollback journal, then WAL */
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                             "shim"),
             SQLITE_OK);
  sqlite3_vfs *used = NULL;
  EXPECT_INT(sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &used), SQLITE_OK);
  EXPECT(used == &shim);
  workload(db, "delete");
  printf("file controls through the shim:\n");
  file_controls(db, 1);
  sqlite3_close(db);
  show("by name, delete");
  /* an ATTACHed URI through the shim: its parameters reach xOpen */
  EXPECT_INT(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                             "shim"),
             SQLITE_OK);
  show("reopened");
  char att[400];
  snprintf(att, sizeof att, "ATTACH 'file:%s/aux.db?shimkey=9&vfs=shim' AS aux", dir);
  EXEC_OK(db, att);
  EXEC_OK(db, "CREATE TABLE aux.x(a); INSERT INTO aux.x VALUES(1)");
  rows(db, "SELECT count(*) FROM aux.x");
  sqlite3_close(db);
  show("attached");
  EXPECT_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, "shim"), SQLITE_OK);
  workload(db, "wal");
  sqlite3_close(db);
  show("by name, wal");

  /* the file is readable through the shim only (its pages are flipped) */
  EXPECT_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE b LIKE '%x'", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  printf("  without the shim: %s\n", rc == SQLITE_ROW ? "a row" : "an error");
  sqlite3_finalize(st);
  sqlite3_close(db);
  show("without the shim");
  char plain[300]; /* the shim's file reads as corrupt without it: another one */
  snprintf(plain, sizeof plain, "%s/plain.db", dir);
  EXPECT_INT(sqlite3_open_v2(plain, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
             SQLITE_OK);
  EXEC_OK(db, "PRAGMA journal_mode=delete");
  EXEC_OK(db, "CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b TEXT)");
  printf("file controls on the default VFS:\n");
  file_controls(db, 0);
  sqlite3_close(db);

  /* as the default */
  EXPECT_INT(sqlite3_vfs_register(&shim, 1), SQLITE_OK);
  EXPECT(sqlite3_vfs_find(NULL) == &shim);
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  rows(db, "PRAGMA journal_mode=delete");
  rows(db, "SELECT count(*) FROM t WHERE b LIKE '%x'");
  rows(db, "ATTACH '' AS tmp2");
  sqlite3_close(db);
  show("default");

  /* unregistered: the original default again */
  EXPECT_INT(sqlite3_vfs_unregister(&shim), SQLITE_OK);
  EXPECT(sqlite3_vfs_find("shim") == NULL);
  EXPECT(sqlite3_vfs_find(NULL) == orig);
  EXPECT_INT(sqlite3_vfs_register(orig, 1), SQLITE_OK);
  EXPECT(sqlite3_vfs_find(NULL) == orig);
  db = NULL;
  rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, "shim");
  printf("open with an unregistered vfs: %d %s\n", rc, sqlite3_errmsg(db));
  sqlite3_close(db);
  show("after unregister");

  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) return 2;
  return prog_done();
}
