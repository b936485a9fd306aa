/*
 * overhead.c -- the cost of the sqlite3_* layer (compat/) over the native
 * shale_* API: the same prepared-statement loops built twice, once calling
 * shale_* from build/libshale.so (-DAPI_NATIVE) and once calling sqlite3_*
 * from build/compat/libsqlite3.so.0. Compare the two under callgrind:
 *
 *   make build/bench-api-native build/bench-api-compat
 *   valgrind --tool=callgrind build/bench-api-native 20000
 *   valgrind --tool=callgrind build/bench-api-compat 20000
 *
 * Workload (argument N, default 20000): an in-memory table t(a INTEGER
 * PRIMARY KEY, b TEXT); N prepared INSERTs in one transaction (bind_int64,
 * bind_text, step, reset), then N prepared point SELECTs (bind_int64, step,
 * column_int64, column_text, column_bytes, reset). Prints a checksum so both
 * builds can be seen to do the same work.
 *
 * Invariants:
 *  1. Both builds run exactly the same sequence of calls (one source, the
 *     prefix chosen by a macro).
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef API_NATIVE
#include "shale.h"
#define API(x) shale_##x
#define C(x) SHALE_##x
typedef shale Db;
typedef shale_stmt Stmt;
#else
#include "sqlite3.h"
#define API(x) sqlite3_##x
#define C(x) SQLITE_##x
typedef sqlite3 Db;
typedef sqlite3_stmt Stmt;
#endif

static void die(Db *db, const char *what) {
  fprintf(stderr, "%s: %s\n", what, API(errmsg)(db));
  exit(1);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000;
  Db *db = NULL;
  if (API(open)(":memory:", &db) != C(OK)) die(db, "open");
  if (API(exec)(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)", NULL, NULL, NULL))
    die(db, "create");
  Stmt *ins = NULL, *sel = NULL;
  if (API(prepare_v2)(db, "INSERT INTO t VALUES(?1, ?2)", -1, &ins, NULL)) die(db, "prepare");
  if (API(prepare_v2)(db, "SELECT a, b FROM t WHERE a = ?1", -1, &sel, NULL)) die(db, "prepare");
  if (API(exec)(db, "BEGIN", NULL, NULL, NULL)) die(db, "begin");
  for (long i = 0; i < n; i++) {
    API(bind_int64)(ins, 1, i);
    API(bind_text)(ins, 2, "some text value", -1, C(STATIC));
    if (API(step)(ins) != C(DONE)) die(db, "insert");
    API(reset)(ins);
  }
  if (API(exec)(db, "COMMIT", NULL, NULL, NULL)) die(db, "commit");
  unsigned long sum = 0;
  for (long i = 0; i < n; i++) {
    API(bind_int64)(sel, 1, (i * 7919) % n);
    if (API(step)(sel) != C(ROW)) die(db, "select");
    sum += (unsigned long)API(column_int64)(sel, 0);
    sum += API(column_text)(sel, 1)[0];
    sum += (unsigned long)API(column_bytes)(sel, 1);
    API(reset)(sel);
  }
  API(finalize)(ins);
  API(finalize)(sel);
  API(close)(db);
  printf("%lu\n", sum);
  return 0;
}
