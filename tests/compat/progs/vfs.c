/* vfs.c -- sqlite3_vfs_find ("unix" by default, with mxPathname 512 and
 * working xOpen/xAccess/xDelete/xFullPathname/xRandomness/xSleep/
 * xCurrentTime(Int64)/xGetLastError), sqlite3_file_control (DATA_VERSION,
 * VFS_POINTER, unknown op and schema), sqlite3_status/status64 (ops,
 * high-water marks, bad ops), sqlite3_memory_highwater and the soft/hard
 * heap limits (previous values returned; the hard limit makes a large
 * allocation fail with SQLITE_NOMEM). Portable: must pass on SQLite and on
 * Shale. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

static int count(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return n;
}

int main(void) {
  char dir[] = "/tmp/compat-vfs-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[256], raw[256];
  snprintf(path, sizeof path, "%s/v.db", dir);
  snprintf(raw, sizeof raw, "%s/raw.bin", dir);

  sqlite3_vfs *v = sqlite3_vfs_find(NULL);
  EXPECT(v != NULL);
  if (!v) return prog_done();
  EXPECT_STR(v->zName, "unix");
  EXPECT(sqlite3_vfs_find("unix") == v);
  EXPECT(sqlite3_vfs_find("no-such-vfs") == NULL);
  EXPECT_INT(v->mxPathname, 512);
  EXPECT(v->iVersion >= 2);
  EXPECT(v->szOsFile > 0);
  double jd = 0;
  EXPECT_INT(v->xCurrentTime(v, &jd), SQLITE_OK);
  EXPECT(jd > 2460000.0 && jd < 2500000.0);
  sqlite3_int64 ms = 0;
  EXPECT_INT(v->xCurrentTimeInt64(v, &ms), SQLITE_OK);
  EXPECT(ms / 86400000.0 - jd < 1.0 && ms / 86400000.0 - jd > -1.0);
  char full[600];
  EXPECT_INT(v->xFullPathname(v, raw, (int)sizeof full, full), SQLITE_OK);
  EXPECT(full[0] == '/' && strstr(full, "/raw.bin") != NULL);
  char rnd[16];
  EXPECT_INT(v->xRandomness(v, (int)sizeof rnd, rnd), (int)sizeof rnd);
  EXPECT(v->xSleep(v, 1000) >= 1000);
  char msg[64];
  v->xGetLastError(v, (int)sizeof msg, msg);

  /* a file through the VFS */
  sqlite3_file *f = calloc(1, (size_t)v->szOsFile);
  int got = 0;
  EXPECT_INT(
      v->xOpen(v, raw, f, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB, &got),
      SQLITE_OK);
  EXPECT(f->pMethods != NULL);
  if (f->pMethods) {
    EXPECT_INT(f->pMethods->xWrite(f, "hello vfs", 9, 100), SQLITE_OK);
    sqlite3_int64 sz = 0;
    EXPECT_INT(f->pMethods->xFileSize(f, &sz), SQLITE_OK);
    EXPECT_INT(sz, 109);
    char back[9];
    EXPECT_INT(f->pMethods->xRead(f, back, 9, 100), SQLITE_OK);
    EXPECT(!memcmp(back, "hello vfs", 9));
    EXPECT_INT(f->pMethods->xRead(f, back, 9, 105), SQLITE_IOERR_SHORT_READ);
    EXPECT_INT(f->pMethods->xTruncate(f, 50), SQLITE_OK);
    EXPECT_INT(f->pMethods->xFileSize(f, &sz), SQLITE_OK);
    EXPECT_INT(sz, 50);
    EXPECT_INT(f->pMethods->xLock(f, SQLITE_LOCK_SHARED), SQLITE_OK);
    EXPECT_INT(f->pMethods->xUnlock(f, SQLITE_LOCK_NONE), SQLITE_OK);
    EXPECT_INT(f->pMethods->xClose(f), SQLITE_OK);
  }
  free(f);
  int res = -1;
  EXPECT_INT(v->xAccess(v, raw, SQLITE_ACCESS_EXISTS, &res), SQLITE_OK);
  EXPECT_INT(res, 1);
  EXPECT_INT(v->xDelete(v, raw, 0), SQLITE_OK);
  EXPECT_INT(v->xAccess(v, raw, SQLITE_ACCESS_EXISTS, &res), SQLITE_OK);
  EXPECT_INT(res, 0);

  /* file control */
  sqlite3 *a = NULL, *b = NULL;
  EXPECT_INT(sqlite3_open(path, &a), SQLITE_OK);
  EXPECT_INT(sqlite3_open(path, &b), SQLITE_OK);
  EXEC_OK(a, "CREATE TABLE t(x)");
  EXPECT_INT(count(b, "SELECT count(*) FROM t"), 0);
  unsigned dv1 = 0, dv2 = 0, dv3 = 0;
  EXPECT_INT(sqlite3_file_control(b, "main", SQLITE_FCNTL_DATA_VERSION, &dv1), SQLITE_OK);
  EXPECT_INT(count(b, "SELECT count(*) FROM t"), 0);
  EXPECT_INT(sqlite3_file_control(b, "main", SQLITE_FCNTL_DATA_VERSION, &dv2), SQLITE_OK);
  EXPECT_INT(dv1, dv2);
  EXEC_OK(a, "INSERT INTO t VALUES(1)");
  EXPECT_INT(count(b, "SELECT count(*) FROM t"), 1);
  EXPECT_INT(sqlite3_file_control(b, NULL, SQLITE_FCNTL_DATA_VERSION, &dv3), SQLITE_OK);
  EXPECT(dv3 != dv2);
  sqlite3_vfs *pv = NULL;
  EXPECT_INT(sqlite3_file_control(a, "main", SQLITE_FCNTL_VFS_POINTER, &pv), SQLITE_OK);
  EXPECT(pv != NULL && !strcmp(pv->zName, "unix"));
  int x = 0;
  EXPECT_INT(sqlite3_file_control(a, "main", 9999, &x), SQLITE_NOTFOUND);
  EXPECT_INT(sqlite3_file_control(a, "nosuch", SQLITE_FCNTL_DATA_VERSION, &dv1), SQLITE_ERROR);

  /* status */
  sqlite3_int64 cur = -1, hi = -1;
  EXPECT_INT(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &cur, &hi, 0), SQLITE_OK);
  EXPECT(cur > 0 && hi >= cur);
  EXPECT(cur == sqlite3_memory_used());
  EXPECT(sqlite3_memory_highwater(0) >= cur);
  EXPECT_INT(sqlite3_status64(SQLITE_STATUS_MALLOC_COUNT, &cur, &hi, 0), SQLITE_OK);
  EXPECT(cur > 0 && hi >= cur);
  EXPECT_INT(sqlite3_status64(SQLITE_STATUS_MALLOC_SIZE, &cur, &hi, 0), SQLITE_OK);
  EXPECT(hi > 0);
  for (int op = 1; op <= 8; op++) {
    cur = hi = -1;
    EXPECT_INT(sqlite3_status64(op, &cur, &hi, 0), SQLITE_OK);
    EXPECT(cur >= 0 && hi >= 0);
  }
  EXPECT_INT(sqlite3_status64(-1, &cur, &hi, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_status64(10, &cur, &hi, 0), SQLITE_MISUSE);
  int c32 = -1, h32 = -1;
  EXPECT_INT(sqlite3_status(SQLITE_STATUS_MEMORY_USED, &c32, &h32, 1), SQLITE_OK);
  EXPECT(c32 > 0 && h32 >= c32);
  EXPECT(sqlite3_release_memory(1000) >= 0);

  /* heap limits: each call returns the previous value; the hard limit caps
   * the soft one and makes a large allocation fail */
  EXPECT_INT(sqlite3_soft_heap_limit64(-1), 0);
  EXPECT_INT(sqlite3_soft_heap_limit64(100000000), 0);
  EXPECT_INT(sqlite3_soft_heap_limit64(-1), 100000000);
  EXPECT_INT(sqlite3_hard_heap_limit64(-1), 0);
  sqlite3_int64 lim = sqlite3_memory_used() + 4000000;
  EXPECT_INT(sqlite3_hard_heap_limit64(lim), 0);
  EXPECT_INT(sqlite3_hard_heap_limit64(-1), lim);
  EXPECT_INT(sqlite3_soft_heap_limit64(-1), lim);
  EXPECT_INT(sqlite3_soft_heap_limit64(lim * 2), lim);
  EXPECT_INT(sqlite3_soft_heap_limit64(-1), lim);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(a, "SELECT length(randomblob(20000000))", -1, &st, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_NOMEM);
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_hard_heap_limit64(0), lim);
  EXPECT_INT(sqlite3_soft_heap_limit64(-1), 0); /* hard(0) cleared it too */
  EXPECT_INT(sqlite3_hard_heap_limit64(-1), 0);
  EXPECT_INT(count(a, "SELECT length(randomblob(20000000))"), 20000000);

  sqlite3_close(b);
  sqlite3_close(a);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) return 2;
  return prog_done();
}
