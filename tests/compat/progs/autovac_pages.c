/* autovac_pages.c -- sqlite3_autovacuum_pages: the callback's arguments at
 * each commit of auto_vacuum=FULL files (main and attached), the number of
 * pages it lets the commit free (none, some, all, more than all), the file
 * size and free list after each commit, its replacement and destructor.
 * The output is the result: SQLite and Shale must print the same. */
#include <unistd.h>

#include "prog.h"

#define ROWS(n) "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < " #n ") "

static unsigned answer; /* what the callback returns */
static int destroyed;

static unsigned pages_cb(void *arg, const char *schema, unsigned npages, unsigned nfree,
                         unsigned page_size) {
  printf("  cb(%s, %s, pages %u, free %u, page size %u) -> %u\n", (const char *)arg, schema, npages,
         nfree, page_size, answer);
  return answer;
}

static void destroy(void *arg) {
  destroyed++;
  printf("  destroy(%s)\n", (const char *)arg);
}

static int pragma_int(sqlite3 *db, const char *schema, const char *name) {
  char sql[128];
  sqlite3_stmt *q = NULL;
  int v = -1;
  snprintf(sql, sizeof sql, "PRAGMA %s.%s", schema, name);
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    v = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  return v;
}

static void show(sqlite3 *db, const char *schema) {
  printf("  %s: %d pages, %d free\n", schema, pragma_int(db, schema, "page_count"),
         pragma_int(db, schema, "freelist_count"));
}

static void step(sqlite3 *db, const char *sql) {
  printf("%s\n", sql);
  EXEC_OK(db, sql);
  show(db, "main");
}

int main(void) {
  char dir[] = "/tmp/compat-autovac-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[512], path2[512], sql[700];
  snprintf(path, sizeof path, "%s/a.db", dir);
  snprintf(path2, sizeof path2, "%s/b.db", dir);
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  EXEC_OK(db, "PRAGMA auto_vacuum=FULL; CREATE TABLE t(x)");
  EXPECT_INT(sqlite3_autovacuum_pages(db, pages_cb, "one", destroy), SQLITE_OK);
  answer = 0;
  step(db, "INSERT INTO t " ROWS(40) "SELECT zeroblob(3000) FROM c");
  step(db, "DELETE FROM t WHERE rowid % 2 = 0"); /* nothing freed: 0 */
  answer = 5;
  step(db, "INSERT INTO t VALUES (1)"); /* five of them */
  answer = 3;
  step(db, "DELETE FROM t WHERE rowid > 30");
  answer = 1000000; /* more than there are: all */
  step(db, "UPDATE t SET x = 2 WHERE rowid = 1");
  EXEC_OK(db, "PRAGMA integrity_check");

  /* a transaction over two files: the callback once per file written */
  snprintf(sql, sizeof sql, "ATTACH '%s' AS aux", path2);
  EXEC_OK(db, sql);
  EXEC_OK(db, "PRAGMA aux.auto_vacuum=FULL; CREATE TABLE aux.u(y)");
  answer = 0;
  step(db, "INSERT INTO aux.u " ROWS(20) "SELECT zeroblob(3000) FROM c");
  step(db, "BEGIN; DELETE FROM aux.u WHERE rowid < 10; DELETE FROM t WHERE rowid < 5; COMMIT");
  show(db, "aux");
  answer = 2;
  step(db, "BEGIN; DELETE FROM aux.u WHERE rowid < 12; INSERT INTO t VALUES (3); COMMIT");
  show(db, "aux");

  /* replaced: the old destructor runs; NULL: every free page goes */
  EXPECT_INT(sqlite3_autovacuum_pages(db, pages_cb, "two", destroy), SQLITE_OK);
  EXPECT_INT(destroyed, 1);
  answer = 1;
  step(db, "DELETE FROM t WHERE rowid < 10");
  EXPECT_INT(sqlite3_autovacuum_pages(db, NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(destroyed, 2);
  step(db, "DELETE FROM t WHERE rowid < 20");
  /* a rollback-mode file without auto_vacuum: never asked */
  EXPECT_INT(sqlite3_autovacuum_pages(db, pages_cb, "three", destroy), SQLITE_OK);
  EXEC_OK(db, "DETACH aux");
  EXEC_OK(db, "CREATE TEMP TABLE tt(z); INSERT INTO tt VALUES (1)");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(destroyed, 3); /* at close */

  db = NULL;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  EXEC_OK(db, "PRAGMA integrity_check");
  show(db, "main");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  unlink(path);
  unlink(path2);
  rmdir(dir);
  return prog_done();
}
