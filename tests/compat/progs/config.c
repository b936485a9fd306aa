/* config.c -- sqlite3_config's subsystem options on both libraries, before
 * the library initializes: SQLITE_CONFIG_GETMALLOC and SQLITE_CONFIG_MALLOC
 * with a counting wrapper around the default methods (every block the
 * library takes and gives back goes through it; xInit runs at initialize,
 * xShutdown at shutdown), GETMUTEX (NULL methods until the first
 * initialize, then working ones, accepted back by SQLITE_CONFIG_MUTEX),
 * SQLITE_CONFIG_LOG (failed prepares as SQLite logs
 * them, from prepare_v2 and exec, and sqlite3_log's own formatting and
 * 209-character limit), the options both accept or refuse (PAGECACHE,
 * PCACHE, PCACHE_HDRSZ, HEAP, WIN32_HEAPSIZE, SORTERREF_SIZE, SQLLOG,
 * GETPCACHE). tests/compat/test_compat.c
 * requires the same output from both. */
#include "prog.h"

static sqlite3_mem_methods orig;
static long nmalloc, nfree, nrealloc, live, ninit, nshutdown;

static void *w_malloc(int n) {
  void *p = orig.xMalloc(n);
  if (p) nmalloc++, live++;
  return p;
}
static void w_free(void *p) {
  if (p) nfree++, live--;
  orig.xFree(p);
}
static void *w_realloc(void *p, int n) {
  nrealloc++;
  return orig.xRealloc(p, n);
}
static int w_size(void *p) { return orig.xSize(p); }
static int w_roundup(int n) { return orig.xRoundup(n); }
static int w_init(void *a) {
  ninit++;
  return SQLITE_OK;
}
static void w_shutdown(void *a) { nshutdown++; }

static void logger(void *arg, int rc, const char *msg) {
  printf("log(%s) %d %s\n", (const char *)arg, rc, msg);
}

int main(void) {
  static char buf[1 << 16];
  printf("pagecache %d\n", sqlite3_config(SQLITE_CONFIG_PAGECACHE, buf, 1024, 64));
  printf("pcache %d\n", sqlite3_config(SQLITE_CONFIG_PCACHE, NULL));
  printf("getpcache %d\n", sqlite3_config(SQLITE_CONFIG_GETPCACHE, NULL));
  int hdr = -1;
  printf("pcache_hdrsz %d\n", sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr));
  EXPECT(hdr >= 0);
  printf("heap %d\n", sqlite3_config(SQLITE_CONFIG_HEAP, buf, (int)sizeof buf, 64));
  printf("win32_heapsize %d\n", sqlite3_config(SQLITE_CONFIG_WIN32_HEAPSIZE, 1000));
  printf("sorterref_size %d\n", sqlite3_config(SQLITE_CONFIG_SORTERREF_SIZE, 1000));
  printf("sqllog %d\n", sqlite3_config(SQLITE_CONFIG_SQLLOG, NULL, NULL));

  /* never initialized: the mutex methods are not chosen yet (all NULL) */
  sqlite3_mutex_methods mx;
  memset(&mx, 1, sizeof mx);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETMUTEX, &mx), SQLITE_OK);
  printf("getmutex before initialize: alloc %s\n", mx.xMutexAlloc ? "set" : "NULL");
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &orig), SQLITE_OK);
  EXPECT(orig.xMalloc && orig.xFree && orig.xRealloc && orig.xSize && orig.xRoundup);
  void *p = orig.xMalloc(100);
  EXPECT(p && orig.xSize(p) >= 100 && orig.xRoundup(5) >= 5);
  p = orig.xRealloc(p, 1000);
  EXPECT(p && orig.xSize(p) >= 1000);
  orig.xFree(p);
  sqlite3_mem_methods w = {w_malloc,  w_free, w_realloc,  w_size,
                           w_roundup, w_init, w_shutdown, NULL};
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MALLOC, &w), SQLITE_OK);
  sqlite3_mem_methods now;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &now), SQLITE_OK);
  EXPECT(now.xMalloc == w_malloc && now.xFree == w_free);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_LOG, logger, "L"), SQLITE_OK);

  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  printf("after initialize: init %ld\n", ninit);
  /* (config now is misuse, which SQLite also logs with its source line:
   * unsupported.c checks the code) */
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, randomblob(100000));");
  char *s = sqlite3_mprintf("%0*d", 5000, 7);
  EXPECT(s && strlen(s) == 5000);
  sqlite3_free(s);
  printf("blocks through the wrapper: %s\n", nmalloc > 0 && live > 0 ? "yes" : "no");

  /* the log */
  sqlite3_stmt *st = NULL;
  printf("prepare %d\n", sqlite3_prepare_v2(db, "SELECT nosuch FROM t", -1, &st, NULL));
  printf("prepare %d\n", sqlite3_prepare_v2(db, "SELEC 1; SELECT 2", 8, &st, NULL));
  printf("prepare %d\n", sqlite3_prepare_v3(db, "SELECT * FROM t WHERE", -1, 0, &st, NULL));
  printf("exec %d\n", sqlite3_exec(db, "SELECT 1;  \n SELECT x FROM nope; SELECT 3", 0, 0, 0));
  sqlite3_log(SQLITE_WARNING, "warning %d %s %q", 42, "text", "it's");
  char big[400];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  sqlite3_log(SQLITE_NOTICE, "long: %s", big);

  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  printf("all given back: %s\n", live == 0 ? "yes" : "no");
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  printf("after shutdown: shutdown %ld\n", nshutdown);
  /* now they are, and work; given back unchanged they are accepted */
  memset(&mx, 0, sizeof mx);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETMUTEX, &mx), SQLITE_OK);
  EXPECT(mx.xMutexInit && mx.xMutexAlloc && mx.xMutexEnter && mx.xMutexTry && mx.xMutexLeave);
  if (mx.xMutexAlloc) {
    EXPECT_INT(mx.xMutexInit(), SQLITE_OK);
    sqlite3_mutex *m = mx.xMutexAlloc(SQLITE_MUTEX_RECURSIVE);
    EXPECT(m != NULL);
    mx.xMutexEnter(m);
    EXPECT_INT(mx.xMutexTry(m), SQLITE_OK);
    mx.xMutexLeave(m);
    mx.xMutexLeave(m);
    mx.xMutexFree(m);
  }
  printf("mutex (the same methods back) %d\n", sqlite3_config(SQLITE_CONFIG_MUTEX, &mx));
  /* the defaults back; the library still works */
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MALLOC, &orig), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_LOG, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1);");
  printf("prepare %d\n", sqlite3_prepare_v2(db, "SELECT nosuch FROM t", -1, &st, NULL));
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
