/*
 * test_attach.c -- ATTACH of database files (tests/sql/attach.test covers
 * ':memory:' ones): the same scripts on Shale and on the reference SQLite,
 * each engine with files of its own; transactions spanning main and an
 * attached file (COMMIT writes both files, ROLLBACK / SAVEPOINT undo both,
 * checked by reopening the files with the reference SQLite); DETACH of a
 * database in a transaction; another connection changing an attached
 * database's schema; sqlite3_db_filename / db_readonly for attached names.
 *
 * Invariants:
 *  1. Every case closes what it opens (leak-checked); files live under
 *     test_path().
 */
#include <unistd.h>

#include "../../../src/api/api_int.h"
#include "../../test.h"
#include "test_api_util.h"

static void rm_db(const char *path) {
  char buf[1024];
  unlink(path);
  snprintf(buf, sizeof buf, "%s-journal", path);
  unlink(buf);
  snprintf(buf, sizeof buf, "%s-wal", path);
  unlink(buf);
}

/* Run script on both engines; "%s" in a statement is the engine's aux file. */
static void same_with_files(shale *db, sqlite3 *sq, const char *aux_sh, const char *aux_sq,
                            const char *const *script, int n) {
  char a[2048], b[2048];
  for (int i = 0; i < n; i++) {
    snprintf(a, sizeof a, script[i], aux_sh);
    snprintf(b, sizeof b, script[i], aux_sq);
    char *x = sh_run(db, a), *y = sq_run(sq, b);
    if (strcmp(x, y) != 0)
      test_fail(__FILE__, __LINE__, "%s\n--- shale:\n%s--- sqlite:\n%s", script[i], x, y);
    free(x);
    free(y);
    if (shale_get_autocommit(db) != sqlite3_get_autocommit(sq))
      test_fail(__FILE__, __LINE__, "autocommit differs after: %s", script[i]);
  }
}

TEST(attach_files_as_sqlite) {
  char m1[512], a1[512], m2[512], a2[512];
  snprintf(m1, sizeof m1, "%s", test_path("att_sh_main.db"));
  snprintf(a1, sizeof a1, "%s", test_path("att_sh_aux.db"));
  snprintf(m2, sizeof m2, "%s", test_path("att_sq_main.db"));
  snprintf(a2, sizeof a2, "%s", test_path("att_sq_aux.db"));
  rm_db(m1);
  rm_db(a1);
  rm_db(m2);
  rm_db(a2);
  shale *db = NULL;
  sqlite3 *sq = NULL;
  CHECK_OK(shale_open(m1, &db));
  CHECK_EQ(sqlite3_open(m2, &sq), SQLITE_OK);
  static const char *const script[] = {
      "CREATE TABLE t(a)",
      "INSERT INTO t VALUES(1)",
      "ATTACH '%s' AS aux",
      "SELECT name FROM pragma_database_list ORDER BY seq",
      "CREATE TABLE aux.u(x PRIMARY KEY, y)",
      "INSERT INTO aux.u VALUES(1, 'one'), (2, 'two')",
      "SELECT * FROM u ORDER BY x",
      "BEGIN",
      "INSERT INTO t VALUES(2)",
      "INSERT INTO aux.u VALUES(3, 'three')",
      "COMMIT",
      "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM aux.u)",
      "BEGIN",
      "INSERT INTO t VALUES(3)",
      "UPDATE aux.u SET y = upper(y)",
      "ROLLBACK",
      "SELECT (SELECT count(*) FROM t), (SELECT group_concat(y) FROM aux.u)",
      "SAVEPOINT s",
      "DELETE FROM aux.u WHERE x = 1",
      "SAVEPOINT s2",
      "DELETE FROM main.t",
      "INSERT INTO aux.u VALUES(4, 'four')",
      "ROLLBACK TO s2",
      "RELEASE s",
      "SELECT (SELECT count(*) FROM t), (SELECT group_concat(x) FROM aux.u)",
      "INSERT INTO aux.u VALUES(2, 'dup')",
      "BEGIN",
      "INSERT INTO t VALUES(9)",
      "INSERT INTO aux.u VALUES(2, 'dup')",
      "SELECT count(*) FROM t",
      "COMMIT",
      "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM aux.u)",
      "BEGIN",
      "SELECT count(*) FROM aux.u",
      "DETACH aux",
      "COMMIT",
      "DETACH aux",
      "SELECT * FROM aux.u",
      "ATTACH '%s' AS aux2",
      "SELECT x, y FROM aux2.u ORDER BY x",
      "PRAGMA aux2.user_version = 3",
      "PRAGMA aux2.user_version",
      "PRAGMA aux2.integrity_check",
      "PRAGMA aux2.table_info(u)",
      "PRAGMA aux2.index_list(u)",
      "CREATE INDEX aux2.uy ON u(y)",
      "SELECT name, tbl_name FROM aux2.sqlite_master ORDER BY name",
      "ATTACH '/no/such/dir/shale-attach-x.db' AS bad",
      "DETACH aux2",
  };
  same_with_files(db, sq, a1, a2, script, (int)(sizeof script / sizeof script[0]));
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
  /* both files hold what Shale committed, as read by the reference SQLite */
  sqlite3 *r = NULL;
  CHECK_EQ(sqlite3_open(a1, &r), SQLITE_OK);
  char *x = sq_run(r, "SELECT x, y FROM u ORDER BY x; PRAGMA user_version; PRAGMA integrity_check");
  sqlite3_close(r);
  CHECK_EQ(sqlite3_open(a2, &r), SQLITE_OK);
  char *y = sq_run(r, "SELECT x, y FROM u ORDER BY x; PRAGMA user_version; PRAGMA integrity_check");
  sqlite3_close(r);
  CHECK_STR(x, y);
  free(x);
  free(y);
  rm_db(m1);
  rm_db(a1);
  rm_db(m2);
  rm_db(a2);
}

/* A transaction over two files: COMMIT writes both, ROLLBACK neither. */
TEST(attach_transaction_two_files) {
  char m[512], a[512], sql[1200];
  snprintf(m, sizeof m, "%s", test_path("att2_main.db"));
  snprintf(a, sizeof a, "%s", test_path("att2_aux.db"));
  rm_db(m);
  rm_db(a);
  shale *db = NULL;
  CHECK_OK(shale_open(m, &db));
  snprintf(sql, sizeof sql,
           "CREATE TABLE t(a); ATTACH '%s' AS aux; CREATE TABLE aux.at(b);"
           "BEGIN; INSERT INTO main.t VALUES(1); INSERT INTO aux.at VALUES(10); COMMIT;"
           "BEGIN; INSERT INTO main.t VALUES(2); INSERT INTO aux.at VALUES(20); ROLLBACK;"
           "INSERT INTO aux.at SELECT a * 100 FROM main.t;",
           a);
  CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
  /* a statement writing both databases in autocommit mode commits both */
  CHECK_OK(shale_exec(db,
                      "CREATE TEMP TRIGGER tr AFTER INSERT ON main.t BEGIN "
                      "INSERT INTO at VALUES(new.a + 1000); END;"
                      "INSERT INTO main.t VALUES(5)",
                      NULL, NULL, NULL));
  /* a failing statement undoes its changes in both */
  CHECK(shale_exec(db,
                   "CREATE TABLE aux.uq(k UNIQUE);"
                   "CREATE TEMP TRIGGER tr2 AFTER INSERT ON main.t BEGIN "
                   "INSERT INTO uq VALUES(1); END;"
                   "INSERT INTO main.t VALUES(6), (7)",
                   NULL, NULL, NULL) == SHALE_CONSTRAINT);
  CHECK_OK(shale_close(db));
  sqlite3 *r = NULL;
  CHECK_EQ(sqlite3_open(m, &r), SQLITE_OK);
  char *x = sq_run(r, "SELECT group_concat(a) FROM (SELECT a FROM t ORDER BY a)");
  CHECK(strstr(x, "\n1,5\n") != NULL);
  free(x);
  sqlite3_close(r);
  CHECK_EQ(sqlite3_open(a, &r), SQLITE_OK);
  x = sq_run(r, "SELECT group_concat(b) FROM (SELECT b FROM at ORDER BY b)");
  CHECK(strstr(x, "\n10,100,1005\n") != NULL);
  free(x);
  x = sq_run(r, "SELECT count(*) FROM uq; PRAGMA integrity_check");
  CHECK(strstr(x, "\n0\n") != NULL && strstr(x, "\nok\n") != NULL);
  free(x);
  sqlite3_close(r);
  rm_db(m);
  rm_db(a);
}

/* Another connection changes the attached file's schema: statements see it. */
TEST(attach_schema_changed_elsewhere) {
  char m[512], a[512], sql[1200];
  snprintf(m, sizeof m, "%s", test_path("att3_main.db"));
  snprintf(a, sizeof a, "%s", test_path("att3_aux.db"));
  rm_db(m);
  rm_db(a);
  shale *db = NULL, *other = NULL;
  CHECK_OK(shale_open(m, &db));
  snprintf(sql, sizeof sql,
           "ATTACH '%s' AS aux; CREATE TABLE aux.t(b); INSERT INTO aux.t VALUES(1)", a);
  CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT count(*) FROM aux.t", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 1);
  shale_reset(st);
  CHECK_OK(shale_open(a, &other));
  CHECK_OK(shale_exec(other, "CREATE TABLE u(c); INSERT INTO u VALUES(7); INSERT INTO t VALUES(2)",
                      NULL, NULL, NULL));
  CHECK_OK(shale_close(other));
  /* the prepared statement recompiles (cookie moved) and sees the new row */
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 2);
  shale_finalize(st);
  char *x = sh_run(db, "SELECT c FROM aux.u");
  CHECK(strstr(x, "\n7\n") != NULL);
  free(x);
  /* names of attached databases in the C API */
  CHECK(shale_db_filename(db, "aux") != NULL &&
        strstr(shale_db_filename(db, "aux"), "att3_aux.db"));
  CHECK(shale_db_filename(db, "nosuch") == NULL);
  CHECK_EQ(shale_db_readonly(db, "aux"), 0);
  CHECK_EQ(shale_db_readonly(db, "nosuch"), -1);
  CHECK_OK(shale_close(db));
  rm_db(m);
  rm_db(a);
}

/* TEMP objects vanish at close; main is untouched by them. */
TEST(temp_dropped_at_close) {
  char m[512];
  snprintf(m, sizeof m, "%s", test_path("att4_main.db"));
  rm_db(m);
  shale *db = NULL;
  CHECK_OK(shale_open(m, &db));
  CHECK_OK(shale_exec(db,
                      "CREATE TABLE t(a); CREATE TEMP TABLE t(b); INSERT INTO t VALUES('temp');"
                      "CREATE TEMP VIEW v AS SELECT 1; INSERT INTO main.t VALUES('main')",
                      NULL, NULL, NULL));
  CHECK_OK(shale_close(db));
  CHECK_OK(shale_open(m, &db));
  char *x = sh_run(db, "SELECT * FROM t; SELECT count(*) FROM sqlite_temp_master");
  CHECK(strstr(x, "\nmain\n") != NULL && strstr(x, "\n0\n") != NULL);
  free(x);
  /* database_list lists temp once it is used (reading sqlite_temp_master
   * opens it, as in SQLite) */
  x = sh_run(db, "SELECT group_concat(name) FROM pragma_database_list");
  CHECK(strstr(x, "\nmain,temp\n") != NULL);
  free(x);
  CHECK_OK(shale_close(db));
  CHECK_OK(shale_open(m, &db));
  x = sh_run(db, "SELECT group_concat(name) FROM pragma_database_list");
  CHECK(strstr(x, "\nmain\n") != NULL);
  free(x);
  CHECK_OK(shale_close(db));
  rm_db(m);
}
