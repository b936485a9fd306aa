/*
 * test_api_txn.c -- transactions through SQL (BEGIN/COMMIT/ROLLBACK,
 * SAVEPOINT/RELEASE/ROLLBACK TO) compared with the reference SQLite, schema
 * reloads when another connection changes the schema, the statement cache,
 * and locking between two connections on one file (busy, busy_timeout).
 *
 * Invariants:
 *  1. Every case closes what it opens (leak-checked).
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../../../src/api/api_int.h"
#include "../../test.h"
#include "test_api_util.h"

static shale *open_file(const char *path) {
  shale *db = NULL;
  int rc = shale_open_v2(path, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
  if (rc != SHALE_OK) test_fail(__FILE__, __LINE__, "open %s failed: %d", path, rc);
  return db;
}

/* The same script on both engines, statement by statement. */
static void same_script(shale *db, sqlite3 *sq, const char *const *sql, int n) {
  for (int i = 0; i < n; i++) {
    CHECK_SAME(db, sq, sql[i]);
    if (shale_get_autocommit(db) != sqlite3_get_autocommit(sq))
      test_fail(__FILE__, __LINE__, "autocommit differs after: %s", sql[i]);
  }
}

TEST(begin_commit_rollback) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  static const char *const script[] = {
      "CREATE TABLE t(a)",
      "BEGIN",
      "INSERT INTO t VALUES(1)",
      "BEGIN",
      "SELECT a FROM t",
      "COMMIT",
      "SELECT a FROM t",
      "COMMIT",
      "ROLLBACK",
      "BEGIN DEFERRED",
      "INSERT INTO t VALUES(2)",
      "ROLLBACK",
      "SELECT a FROM t",
      "BEGIN IMMEDIATE",
      "INSERT INTO t VALUES(3)",
      "END",
      "BEGIN EXCLUSIVE TRANSACTION",
      "INSERT INTO t VALUES(4)",
      "ROLLBACK TRANSACTION",
      "SELECT a FROM t",
      "BEGIN",
      "CREATE TABLE u(x)",
      "INSERT INTO u VALUES(1)",
      "ROLLBACK",
      "SELECT * FROM u",
      "BEGIN",
      "CREATE TABLE u(y)",
      "COMMIT",
      "SELECT * FROM u",
      "BEGIN",
      "VACUUM",
      "COMMIT",
      "VACUUM",
  };
  same_script(db, sq, script, (int)(sizeof script / sizeof script[0]));
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(savepoints) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  static const char *const script[] = {
      "CREATE TABLE t(a)",
      "SAVEPOINT one",
      "INSERT INTO t VALUES(1)",
      "SAVEPOINT two",
      "INSERT INTO t VALUES(2)",
      "ROLLBACK TO two",
      "SELECT a FROM t",
      "INSERT INTO t VALUES(3)",
      "RELEASE two",
      "SELECT a FROM t",
      "RELEASE nosuch",
      "BEGIN",
      "RELEASE one",
      "SELECT a FROM t",
      "SAVEPOINT a",
      "INSERT INTO t VALUES(4)",
      "ROLLBACK TO a",
      "ROLLBACK TO a",
      "RELEASE a",
      "SELECT a FROM t",
      "BEGIN",
      "SAVEPOINT x",
      "INSERT INTO t VALUES(5)",
      "SAVEPOINT y",
      "INSERT INTO t VALUES(6)",
      "RELEASE x",
      "SELECT a FROM t",
      "ROLLBACK",
      "SELECT a FROM t",
      "SAVEPOINT s1",
      "SAVEPOINT s2",
      "INSERT INTO t VALUES(7)",
      "ROLLBACK TO s1",
      "INSERT INTO t VALUES(8)",
      "COMMIT",
      "SELECT a FROM t",
      "SAVEPOINT q",
      "CREATE TABLE v(z)",
      "ROLLBACK TO q",
      "SELECT * FROM v",
      "RELEASE q",
  };
  same_script(db, sq, script, (int)(sizeof script / sizeof script[0]));
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(constraint_error_inside_transaction_keeps_earlier_work) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  static const char *const script[] = {
      "CREATE TABLE t(a UNIQUE)", "BEGIN",  "INSERT INTO t VALUES(1)", "INSERT INTO t VALUES(1)",
      "INSERT INTO t VALUES(2)",  "COMMIT", "SELECT a FROM t",         "INSERT INTO t VALUES(1)",
      "SELECT a FROM t",
  };
  same_script(db, sq, script, (int)(sizeof script / sizeof script[0]));
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(schema_change_by_another_connection) {
  const char *f = test_path("schema.db");
  shale *a = open_file(f), *b = open_file(f);
  SH_EXEC(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 1);
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(b, "SELECT * FROM t", -1, &st, NULL));
  CHECK_EQ(shale_column_count(st), 1);
  /* a changes the schema: b's prepared statement is recompiled at its step */
  SH_EXEC(a, "DROP TABLE t; CREATE TABLE t(x, y DEFAULT 7); INSERT INTO t(x) VALUES(1);");
  long loads = api_schema_loads(b);
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK(api_schema_loads(b) > loads);
  CHECK_EQ(shale_column_count(st), 2);
  CHECK_EQ(shale_column_int(st, 1), 7);
  CHECK_OK(shale_finalize(st));
  /* a new table made by a is visible to b's next prepare after the reload */
  SH_EXEC(a, "CREATE TABLE u(z); INSERT INTO u VALUES(9);");
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 1); /* reloads on SHALE_SCHEMA */
  CHECK_EQ(sh_int(b, "SELECT z FROM u"), 9);
  /* and the reference SQLite changes it too */
  sqlite3 *sq = NULL;
  sqlite3_open(f, &sq);
  sqlite3_exec(sq, "DROP TABLE u; CREATE TABLE w(k); INSERT INTO w VALUES(3);", NULL, NULL, NULL);
  sqlite3_close(sq);
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 1);
  CHECK_EQ(sh_int(b, "SELECT k FROM w"), 3);
  char *got = sh_run(b, "SELECT z FROM u");
  CHECK_STR(got, "error 1: no such table: u\n");
  free(got);
  CHECK_OK(shale_close(a));
  CHECK_OK(shale_close(b));
}

/* Prepared statements run many times (each run reads the schema cookie,
 * cached per read transaction) must still see a schema change made by the
 * reference SQLite between two runs -- from this process and from the
 * sqlite3 shell, in rollback-journal and WAL mode -- and re-prepare. (Not
 * WAL from this process: POSIX locks belong to the process, so the
 * reference library's close would take our read locks for its own and
 * delete the -wal and -shm under us, as SQLite warns.) */
static void cookie_case(const char *name, const char *mode, int shell) {
  const char *f = test_path(name);
  shale *b = open_file(f);
  char sql[256];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; CREATE TABLE t(x); INSERT INTO t VALUES(1);",
           mode);
  SH_EXEC(b, sql);
  shale_stmt *ins = NULL, *sel = NULL;
  CHECK_OK(shale_prepare_v2(b, "INSERT INTO t(x) VALUES(?1)", -1, &ins, NULL));
  CHECK_OK(shale_prepare_v2(b, "SELECT * FROM t WHERE rowid = 1", -1, &sel, NULL));
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 5; i++) { /* warm: the cookie is read each run */
      CHECK_OK(shale_bind_int(ins, 1, 10 + i));
      CHECK_EQ(shale_step(ins), SHALE_DONE);
      CHECK_OK(shale_reset(ins));
      CHECK_EQ(shale_step(sel), SHALE_ROW);
      CHECK_EQ(shale_column_count(sel), 1 + round);
      CHECK_OK(shale_reset(sel));
    }
    /* the table is dropped and made again (new root page) with one more
     * column each round */
    char cols[64] = "x";
    for (int k = 0; k <= round; k++)
      snprintf(cols + strlen(cols), sizeof cols - strlen(cols), ", c%d%s", k,
               k == 0 ? " DEFAULT 5" : "");
    snprintf(sql, sizeof sql,
             "CREATE TABLE pad(p); DROP TABLE t; CREATE TABLE t(%s); INSERT INTO t(x) VALUES(1);",
             cols);
    if (shell) {
      char cmd[1024];
      snprintf(cmd, sizeof cmd, "sqlite3 '%s' '%s DROP TABLE pad;' >/dev/null 2>&1", f, sql);
      CHECK_EQ(system(cmd), 0);
    } else {
      sqlite3 *sq = NULL;
      CHECK_EQ(sqlite3_open(f, &sq), SQLITE_OK);
      CHECK_EQ(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK);
      CHECK_EQ(sqlite3_exec(sq, "DROP TABLE pad", NULL, NULL, NULL), SQLITE_OK);
      sqlite3_close(sq);
    }
  }
  CHECK_EQ(shale_step(sel), SHALE_ROW); /* re-prepared: 1 + 3 columns */
  CHECK_EQ(shale_column_count(sel), 4);
  CHECK_EQ(shale_column_int(sel, 1), 5);
  CHECK_OK(shale_finalize(sel));
  CHECK_OK(shale_finalize(ins));
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 1);
  CHECK_OK(shale_close(b));
  sqlite3 *sq = NULL;
  CHECK_EQ(sqlite3_open(f, &sq), SQLITE_OK);
  sqlite3_stmt *ck = NULL;
  CHECK_EQ(sqlite3_prepare_v2(sq, "PRAGMA integrity_check", -1, &ck, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(ck), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(ck, 0), "ok");
  sqlite3_finalize(ck);
  sqlite3_close(sq);
}

TEST(schema_change_between_runs_of_prepared_statements) {
  cookie_case("cookie_j.db", "delete", 0);
  cookie_case("cookie_js.db", "delete", 1);
  cookie_case("cookie_ws.db", "wal", 1);
}

/* Our own schema changes undone by ROLLBACK and ROLLBACK TO leave the cached
 * cookie right: the statement prepared before them still runs, one prepared
 * inside sees its table gone. */
TEST(schema_cookie_after_own_rollbacks) {
  shale *db = open_file(test_path("cookie_rb.db"));
  SH_EXEC(db, "CREATE TABLE t(x)");
  shale_stmt *ins = NULL;
  CHECK_OK(shale_prepare_v2(db, "INSERT INTO t VALUES(1)", -1, &ins, NULL));
  SH_EXEC(db, "BEGIN; SAVEPOINT s; CREATE TABLE u(y);");
  shale_stmt *su = NULL;
  CHECK_OK(shale_prepare_v2(db, "INSERT INTO u VALUES(2)", -1, &su, NULL));
  CHECK_EQ(shale_step(su), SHALE_DONE);
  CHECK_OK(shale_reset(su));
  CHECK_EQ(shale_step(ins), SHALE_DONE);
  CHECK_OK(shale_reset(ins));
  SH_EXEC(db, "ROLLBACK TO s");
  CHECK_EQ(shale_step(ins), SHALE_DONE); /* schema back as it was */
  CHECK_OK(shale_reset(ins));
  CHECK_EQ(shale_step(su), SHALE_ERROR); /* u is gone */
  shale_finalize(su);
  SH_EXEC(db, "CREATE TABLE v(z); INSERT INTO v VALUES(3);");
  CHECK_EQ(sh_int(db, "SELECT z FROM v"), 3);
  SH_EXEC(db, "ROLLBACK");
  CHECK_EQ(shale_step(ins), SHALE_DONE);
  CHECK_OK(shale_finalize(ins));
  char *got = sh_run(db, "SELECT z FROM v");
  CHECK_STR(got, "error 1: no such table: v\n");
  free(got);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 1); /* the others were undone */
  CHECK_OK(shale_close(db));
}

/* Prepared statements run again and again inside transactions keep their
 * table and index cursors between runs (parked, vm_close_run): the rows
 * they see and write must stay SQLite's while other statements insert,
 * delete, update, clear and drop under them, savepoints roll back, indexes
 * come and go, and transactions end and begin. Both engines get the same
 * random sequence of runs; every run's output is compared. */
#define KEPT_NSTMT 9
static const char *const kept_sql[KEPT_NSTMT] = {
    "INSERT INTO t(b, c) VALUES(?1, ?2)",
    "INSERT INTO t(b, c) VALUES(?1, ?2)",
    "SELECT a, b, c FROM t WHERE b = ?1 ORDER BY a",
    "SELECT a, c FROM t WHERE a = ?1",
    "DELETE FROM t WHERE a = (SELECT max(a) FROM t) - ?1 % 3",
    "UPDATE t SET b = b + ?2 WHERE a = ?1",
    "INSERT INTO u VALUES(?1)",
    "SELECT count(*), sum(b), max(a) FROM t",
    "SELECT x FROM u WHERE rowid = ?1 % 7",
};
static const char *const kept_ddl[] = {
    "SAVEPOINT s",
    "ROLLBACK TO s",
    "RELEASE s",
    "CREATE INDEX IF NOT EXISTS tc ON t(c)",
    "DROP INDEX IF EXISTS tc",
    "DROP TABLE u; CREATE TABLE u(x)",
    "DELETE FROM u",
    "COMMIT",
    "BEGIN",
    "INSERT INTO t(b, c) SELECT b, c FROM t WHERE a % 5 = 0",
    "DELETE FROM t WHERE a % 4 = 1",
};

static char *run_sh_stmt(shale_stmt *st, int a, int b) {
  TBuf out = {0};
  tb_add(&out, "%s", "");
  shale_bind_int(st, 1, a);
  if (shale_bind_parameter_count(st) > 1) shale_bind_int(st, 2, b);
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW)
    for (int i = 0; i < shale_column_count(st); i++)
      tb_add(&out, "%s%s",
             shale_column_text(st, i) ? (const char *)shale_column_text(st, i) : "NULL",
             i + 1 < shale_column_count(st) ? "|" : "\n");
  if (rc != SHALE_DONE) tb_add(&out, "rc %d\n", rc);
  shale_reset(st);
  return out.z;
}

static char *run_sq_stmt(sqlite3_stmt *st, int a, int b) {
  TBuf out = {0};
  tb_add(&out, "%s", "");
  sqlite3_bind_int(st, 1, a);
  if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_int(st, 2, b);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(st); i++)
      tb_add(&out, "%s%s",
             sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "NULL",
             i + 1 < sqlite3_column_count(st) ? "|" : "\n");
  if (rc != SQLITE_DONE) tb_add(&out, "rc %d\n", rc);
  sqlite3_reset(st);
  return out.z;
}

static void kept_cursors_case(const char *mode) {
  char name[64];
  snprintf(name, sizeof name, "kept_%s.db", mode);
  shale *db = open_file(test_path(name));
  snprintf(name, sizeof name, "kept_%s_ref.db", mode);
  sqlite3 *sq = NULL;
  CHECK_EQ(sqlite3_open(test_path(name), &sq), SQLITE_OK);
  char sql[200];
  snprintf(sql, sizeof sql,
           "PRAGMA journal_mode=%s; PRAGMA synchronous=OFF;"
           "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c);"
           "CREATE INDEX tb ON t(b); CREATE TABLE u(x); BEGIN;",
           mode);
  SH_EXEC(db, sql);
  CHECK_EQ(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK);
  shale_stmt *sh[KEPT_NSTMT];
  sqlite3_stmt *sr[KEPT_NSTMT];
  for (int i = 0; i < KEPT_NSTMT; i++) {
    CHECK_OK(shale_prepare_v2(db, kept_sql[i], -1, &sh[i], NULL));
    CHECK_EQ(sqlite3_prepare_v2(sq, kept_sql[i], -1, &sr[i], NULL), SQLITE_OK);
  }
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  for (int step = 0; step < 3000; step++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned k = (unsigned)(r >> 33);
    int a = (int)(k % 97), b = (int)((k >> 8) % 13);
    if (k % 23 == 0) { /* a statement that changes things under the kept cursors */
      const char *d = kept_ddl[(k >> 5) % (sizeof kept_ddl / sizeof *kept_ddl)];
      CHECK_SAME(db, sq, d);
      continue;
    }
    int i = (int)((k >> 3) % KEPT_NSTMT);
    if (i < 2) a = 1000 + step; /* the inserts: mostly ascending rowids */
    char *x = run_sh_stmt(sh[i], a, b), *y = run_sq_stmt(sr[i], a, b);
    if (strcmp(x, y) != 0)
      test_fail(__FILE__, __LINE__, "step %d: %s (%d, %d)\n--- shale:\n%s--- sqlite:\n%s", step,
                kept_sql[i], a, b, x, y);
    free(x);
    free(y);
  }
  for (int i = 0; i < KEPT_NSTMT; i++) {
    shale_finalize(sh[i]);
    sqlite3_finalize(sr[i]);
  }
  CHECK_SAME(db, sq, "COMMIT");
  CHECK_SAME(db, sq, "SELECT count(*), sum(a), sum(b), sum(c) FROM t");
  CHECK_SAME(db, sq, "SELECT * FROM t ORDER BY a");
  CHECK_SAME(db, sq, "PRAGMA integrity_check");
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
}

TEST(cursors_kept_across_runs_in_a_transaction) {
  kept_cursors_case("delete");
  kept_cursors_case("wal");
}

TEST(statement_cache_reuse) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  SH_EXEC(db, "CREATE TABLE t(a)");
  long h0 = api_cache_hits(db);
  for (int i = 0; i < 10; i++) {
    shale_stmt *st = NULL;
    CHECK_OK(shale_prepare_v2(db, "INSERT INTO t VALUES(?1)", -1, &st, NULL));
    CHECK_OK(shale_bind_int(st, 1, i));
    CHECK_EQ(shale_step(st), SHALE_DONE);
    CHECK_OK(shale_finalize(st));
  }
  CHECK_EQ(api_cache_hits(db) - h0, 9);
  CHECK_EQ(sh_int(db, "SELECT sum(a) FROM t"), 45);
  /* the same text followed by more statements reuses the first one */
  long h1 = api_cache_hits(db);
  SH_EXEC(db, "INSERT INTO t VALUES(?1); SELECT 1");
  SH_EXEC(db, "INSERT INTO t VALUES(?1); SELECT 2");
  CHECK(api_cache_hits(db) - h1 >= 1);
  /* a different text that starts the same is not confused with it */
  CHECK_EQ(sh_int(db, "SELECT 1"), 1);
  CHECK_EQ(sh_int(db, "SELECT 12"), 12);
  /* a schema change invalidates the cache */
  SH_EXEC(db, "CREATE TABLE u(b)");
  long h2 = api_cache_hits(db);
  CHECK_EQ(sh_int(db, "SELECT 12"), 12);
  CHECK_EQ(api_cache_hits(db), h2);
  CHECK_EQ(sh_int(db, "SELECT 12"), 12);
  CHECK_EQ(api_cache_hits(db), h2 + 1);
  CHECK_OK(shale_close(db));
}

static void cache_fn_one(shale_context *c, int n, shale_value **v) {
  (void)n, (void)v;
  shale_result_int64(c, 1);
}
static void cache_fn_two(shale_context *c, int n, shale_value **v) {
  (void)n, (void)v;
  shale_result_int64(c, 2);
}
static int cache_coll_rev(void *u, int n1, const void *a, int n2, const void *b) {
  (void)u;
  int n = n1 < n2 ? n1 : n2, d = memcmp(a, b, (size_t)n);
  return -(d ? d : n1 - n2);
}
static int cache_coll_fwd(void *u, int n1, const void *a, int n2, const void *b) {
  return -cache_coll_rev(u, n1, a, n2, b);
}

/* Columns of a statement prepared (through the cache) from sql. */
static int cache_ncol(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) return -1;
  int n = shale_column_count(st);
  shale_finalize(st);
  return n;
}

/* Every change that alters what a text compiles to makes the cached
 * program unusable: schema changes (ALTER/DROP/CREATE), ATTACH/DETACH, user
 * functions and collations redefined, pragmas read at compile time; and a
 * full cache (16 entries) evicts without confusing texts. */
TEST(statement_cache_invalidation) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  SH_EXEC(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 2)");
  for (int i = 0; i < 2; i++) CHECK_EQ(cache_ncol(db, "SELECT * FROM t"), 2);
  SH_EXEC(db, "ALTER TABLE t ADD COLUMN c DEFAULT 7");
  CHECK_EQ(cache_ncol(db, "SELECT * FROM t"), 3);
  CHECK_EQ(sh_int(db, "SELECT c FROM t"), 7);
  SH_EXEC(db, "ALTER TABLE t RENAME COLUMN c TO d");
  char *got = sh_run(db, "SELECT c FROM t");
  CHECK_STR(got, "error 1: no such column: c\n");
  free(got);
  SH_EXEC(db, "DROP TABLE t; CREATE TABLE t(x)");
  CHECK_EQ(cache_ncol(db, "SELECT * FROM t"), 1);
  SH_EXEC(db, "CREATE INDEX tx ON t(x); INSERT INTO t VALUES(5)");
  CHECK_EQ(sh_int(db, "SELECT x FROM t WHERE x = 5"), 5);
  SH_EXEC(db, "DROP INDEX tx");
  CHECK_EQ(sh_int(db, "SELECT x FROM t WHERE x = 5"), 5);
  /* user functions */
  CHECK_OK(shale_create_function_v2(db, "f", 0, SHALE_UTF8, NULL, cache_fn_one, NULL, NULL, NULL));
  CHECK_EQ(sh_int(db, "SELECT f()"), 1);
  CHECK_EQ(sh_int(db, "SELECT f()"), 1);
  CHECK_OK(shale_create_function_v2(db, "f", 0, SHALE_UTF8, NULL, cache_fn_two, NULL, NULL, NULL));
  CHECK_EQ(sh_int(db, "SELECT f()"), 2);
  /* collations */
  CHECK_OK(shale_create_collation_v2(db, "c", SHALE_UTF8, NULL, cache_coll_rev, NULL));
  CHECK_EQ(sh_int(db, "SELECT 'a' < 'b' COLLATE c"), 0);
  CHECK_EQ(sh_int(db, "SELECT 'a' < 'b' COLLATE c"), 0);
  CHECK_OK(shale_create_collation_v2(db, "c", SHALE_UTF8, NULL, cache_coll_fwd, NULL));
  CHECK_EQ(sh_int(db, "SELECT 'a' < 'b' COLLATE c"), 1);
  /* ATTACH / DETACH */
  got = sh_run(db, "SELECT count(*) FROM aux.t2");
  CHECK_STR(got, "error 1: no such table: aux.t2\n");
  free(got);
  SH_EXEC(db, "ATTACH ':memory:' AS aux; CREATE TABLE aux.t2(y); INSERT INTO aux.t2 VALUES(1)");
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM aux.t2"), 1);
  SH_EXEC(db, "DETACH aux");
  got = sh_run(db, "SELECT count(*) FROM aux.t2");
  CHECK_STR(got, "error 1: no such table: aux.t2\n");
  free(got);
  /* a TEMP table of the same name hides the main one */
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 1);
  SH_EXEC(db, "CREATE TEMP TABLE t(x); INSERT INTO temp.t VALUES(1), (2)");
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 2);
  SH_EXEC(db, "DROP TABLE temp.t");
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 1);
  /* pragmas the compiler reads */
  CHECK_EQ(sh_int(db, "SELECT 'A' LIKE 'a'"), 1);
  CHECK_EQ(sh_int(db, "SELECT 'A' LIKE 'a'"), 1);
  SH_EXEC(db, "PRAGMA case_sensitive_like = 1");
  CHECK_EQ(sh_int(db, "SELECT 'A' LIKE 'a'"), 0);
  SH_EXEC(db, "PRAGMA case_sensitive_like = 0");
  CHECK_EQ(sh_int(db, "SELECT 'A' LIKE 'a'"), 1);
  SH_EXEC(db, "CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(pid REFERENCES p(id))");
  SH_EXEC(db, "INSERT INTO c VALUES(9)"); /* foreign keys off: accepted */
  SH_EXEC(db, "DELETE FROM c");
  SH_EXEC(db, "PRAGMA foreign_keys = 1");
  got = sh_run(db, "INSERT INTO c VALUES(9)");
  CHECK_STR(got, "error 19: FOREIGN KEY constraint failed\n");
  free(got);
  /* more texts than entries: the oldest are evicted, none is confused */
  char sql[64];
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 40; i++) {
      snprintf(sql, sizeof sql, "SELECT %d + x FROM t", i);
      CHECK_EQ(sh_int(db, sql), i + 5);
    }
  long h = api_cache_hits(db);
  for (int i = 24; i < 40; i++) { /* the 16 most recent are still there */
    snprintf(sql, sizeof sql, "SELECT %d + x FROM t", i);
    CHECK_EQ(sh_int(db, sql), i + 5);
  }
  CHECK_EQ(api_cache_hits(db) - h, 16);
  CHECK_OK(shale_close(db));
}

TEST(two_connections_lock_and_busy) {
  const char *f = test_path("busy.db");
  shale *a = open_file(f), *b = open_file(f);
  SH_EXEC(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  SH_EXEC(a, "BEGIN IMMEDIATE");
  CHECK_EQ(shale_get_autocommit(a), 0);
  /* readers still read; a second writer is locked out */
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 1);
  char *err = NULL;
  CHECK_EQ(shale_exec(b, "INSERT INTO t VALUES(2)", NULL, NULL, &err), SHALE_BUSY);
  CHECK_STR(err, "database is locked");
  shale_free(err);
  CHECK_EQ(shale_exec(b, "BEGIN IMMEDIATE", NULL, NULL, NULL), SHALE_BUSY);
  CHECK_EQ(shale_get_autocommit(b), 1);
  /* with a busy timeout the writer waits, then gives up */
  CHECK_OK(shale_busy_timeout(b, 150));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_EQ(shale_exec(b, "INSERT INTO t VALUES(2)", NULL, NULL, NULL), SHALE_BUSY);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  CHECK(ms >= 100);
  SH_EXEC(a, "COMMIT");
  SH_EXEC(b, "INSERT INTO t VALUES(2)");
  CHECK_EQ(sh_int(a, "SELECT count(*) FROM t"), 2);
  CHECK_OK(shale_close(a));
  CHECK_OK(shale_close(b));
}

typedef struct Releaser {
  shale *db;
  int delay_ms;
} Releaser;

static void *release_later(void *arg) {
  Releaser *r = arg;
  usleep((useconds_t)r->delay_ms * 1000);
  char *m = NULL;
  shale_exec(r->db, "COMMIT", NULL, NULL, &m);
  shale_free(m);
  return NULL;
}

TEST(busy_timeout_waits_for_the_lock) {
  const char *f = test_path("wait.db");
  shale *a = open_file(f), *b = open_file(f);
  SH_EXEC(a, "CREATE TABLE t(x)");
  SH_EXEC(a, "BEGIN IMMEDIATE; INSERT INTO t VALUES(1);");
  CHECK_OK(shale_busy_timeout(b, 5000));
  Releaser r = {a, 100};
  pthread_t th;
  pthread_create(&th, NULL, release_later, &r);
  SH_EXEC(b, "INSERT INTO t VALUES(2)"); /* waits until a commits */
  pthread_join(th, NULL);
  CHECK_EQ(sh_int(b, "SELECT count(*) FROM t"), 2);
  CHECK_EQ(sh_int(b, "PRAGMA busy_timeout"), 5000);
  CHECK_OK(shale_close(a));
  CHECK_OK(shale_close(b));
}

TEST(reader_active_while_writing) {
  shale *db = NULL;
  CHECK_OK(shale_open(test_path("rw.db"), &db));
  SH_EXEC(db,
          "CREATE TABLE t(a); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);"
          "CREATE TABLE u(b);");
  shale_stmt *rd = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT a FROM t", -1, &rd, NULL));
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  /* a write while the reader is active joins its transaction */
  SH_EXEC(db, "INSERT INTO u VALUES(10)");
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  CHECK_EQ(shale_step(rd), SHALE_DONE);
  CHECK_OK(shale_finalize(rd));
  /* the write was committed when the last statement stopped */
  sqlite3 *sq = NULL;
  sqlite3_open(test_path("rw.db"), &sq);
  char *got = sq_run(sq, "SELECT b FROM u");
  CHECK_STR(got, "names: b\n10\n");
  free(got);
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

/* A statement without a transaction of its own (SELECT 1) is active while
 * another one writes and a pragma reads: no transaction may stay open. */
TEST(active_statement_without_transaction) {
  const char *f = test_path("notxn.db");
  shale *db = open_file(f);
  SH_EXEC(db, "CREATE TABLE t(a)");
  shale_stmt *one = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT 1 UNION ALL SELECT 2", -1, &one, NULL));
  CHECK_EQ(shale_step(one), SHALE_ROW);
  SH_EXEC(db, "INSERT INTO t VALUES(1)");
  CHECK_EQ(sh_int(db, "PRAGMA user_version"), 0);
  sqlite3 *sq = NULL;
  sqlite3_open(f, &sq);
  CHECK_EQ(sqlite3_exec(sq, "INSERT INTO t VALUES(2)", NULL, NULL, NULL), SQLITE_OK);
  CHECK_EQ(shale_step(one), SHALE_ROW);
  CHECK_EQ(shale_step(one), SHALE_DONE);
  CHECK_OK(shale_finalize(one));
  CHECK_EQ(sqlite3_exec(sq, "INSERT INTO t VALUES(3)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(sq);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 3);
  CHECK_OK(shale_close(db));
}

/* COMMIT while a reader of the same connection is still stepping succeeds
 * (as SQLite); the data reaches the file when the reader stops. */
TEST(commit_with_reader_active) {
  const char *f = test_path("commitrd.db");
  shale *db = open_file(f);
  SH_EXEC(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1), (2);");
  SH_EXEC(db, "BEGIN; INSERT INTO t VALUES(3);");
  shale_stmt *rd = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT a FROM t", -1, &rd, NULL));
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  SH_EXEC(db, "COMMIT");
  CHECK_EQ(shale_get_autocommit(db), 1);
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  CHECK_EQ(shale_step(rd), SHALE_DONE);
  CHECK_OK(shale_finalize(rd));
  sqlite3 *sq = NULL;
  sqlite3_open(f, &sq);
  char *got = sq_run(sq, "SELECT count(*) FROM t");
  CHECK_STR(got, "names: count(*)\n3\n");
  free(got);
  CHECK_EQ(sqlite3_exec(sq, "INSERT INTO t VALUES(4)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(sq);
  /* the same through RELEASE of a savepoint that began the transaction */
  SH_EXEC(db, "SAVEPOINT s; INSERT INTO t VALUES(5);");
  CHECK_OK(shale_prepare_v2(db, "SELECT a FROM t", -1, &rd, NULL));
  CHECK_EQ(shale_step(rd), SHALE_ROW);
  SH_EXEC(db, "RELEASE s");
  CHECK_EQ(shale_get_autocommit(db), 1);
  CHECK_OK(shale_finalize(rd));
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 5);
  sqlite3_open(f, &sq);
  CHECK_EQ(sqlite3_exec(sq, "INSERT INTO t VALUES(6)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

static shale *g_db;
static sqlite3 *g_sq;
static char g_out[2][512];

static int inner_shale(void *arg, int n, char **v, char **c) {
  char *m = NULL;
  int rc = shale_exec(g_db, arg, NULL, NULL, &m);
  size_t k = strlen(g_out[0]);
  snprintf(g_out[0] + k, sizeof g_out[0] - k, "%s: %d %s\n", (char *)arg, rc, m ? m : "");
  shale_free(m);
  return 1;
}

static int inner_sqlite(void *arg, int n, char **v, char **c) {
  char *m = NULL;
  int rc = sqlite3_exec(g_sq, arg, NULL, NULL, &m);
  size_t k = strlen(g_out[1]);
  snprintf(g_out[1] + k, sizeof g_out[1] - k, "%s: %d %s\n", (char *)arg, rc, m ? m : "");
  sqlite3_free(m);
  return 1;
}

/* Statements run from inside a query's callback (the query still active),
 * as SQLite answers them. */
TEST(statements_inside_a_running_query) {
  CHECK_OK(shale_open(":memory:", &g_db));
  sqlite3_open(":memory:", &g_sq);
  const char *setup =
      "CREATE TABLE t(a); CREATE TABLE u(b); CREATE TABLE w(c);"
      "CREATE VIEW v AS SELECT a FROM t; INSERT INTO t VALUES(1), (2);";
  SH_EXEC(g_db, setup);
  sqlite3_exec(g_sq, setup, NULL, NULL, NULL);
  static const char *const q[] = {
      "INSERT INTO u VALUES(1)", "DROP TABLE t", "DROP TABLE w", "DROP VIEW v",
      "CREATE TABLE x(y)",       "BEGIN",        "COMMIT",       "CREATE INDEX ti ON t(a)",
      "DELETE FROM u",           "SAVEPOINT s",  "RELEASE s",    "SELECT count(*) FROM u",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    g_out[0][0] = g_out[1][0] = 0;
    shale_exec(g_db, "SELECT a FROM t", inner_shale, (void *)q[i], NULL);
    sqlite3_exec(g_sq, "SELECT a FROM t", inner_sqlite, (void *)q[i], NULL);
    CHECK_STR(g_out[0], g_out[1]);
    CHECK_EQ(shale_get_autocommit(g_db), sqlite3_get_autocommit(g_sq));
  }
  CHECK_SAME(g_db, g_sq, "SELECT * FROM u");
  CHECK_SAME(g_db, g_sq, "SELECT name FROM sqlite_schema ORDER BY name");
  sqlite3_close(g_sq);
  CHECK_OK(shale_close(g_db));
}

/* One scenario on either engine; the counts each step observes. */
static void reader_commit_scenario_shale(const char *f, int wal, char *out, size_t n) {
  shale *a = open_file(f), *b = open_file(f);
  if (wal) SH_EXEC(a, "PRAGMA journal_mode=WAL");
  SH_EXEC(a, "CREATE TABLE t(a); INSERT INTO t VALUES(1), (2); CREATE TABLE u(b);");
  shale_stmt *rd = NULL;
  shale_prepare_v2(a, "SELECT a FROM t", -1, &rd, NULL);
  int s1 = shale_step(rd);
  int ins = shale_exec(a, "INSERT INTO u VALUES(10)", NULL, NULL, NULL);
  int seen1 = sh_int(b, "SELECT count(*) FROM u");
  int other = shale_exec(b, "INSERT INTO u VALUES(11)", NULL, NULL, NULL);
  int bg = shale_exec(a, "BEGIN", NULL, NULL, NULL);
  int ins2 = shale_exec(a, "INSERT INTO u VALUES(12)", NULL, NULL, NULL);
  int cm = shale_exec(a, "COMMIT", NULL, NULL, NULL);
  int seen2 = sh_int(b, "SELECT count(*) FROM u");
  int s2 = shale_step(rd), s3 = shale_step(rd);
  shale_finalize(rd);
  snprintf(out, n, "%d %d %d %d %d %d %d %d %d %d %d", s1, ins, shale_get_autocommit(a), seen1,
           other, bg, ins2 & 0xff, cm, seen2, s2, s3);
  shale_close(b);
  shale_close(a);
}

static int sq_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *s = NULL;
  int v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return v;
}

static void reader_commit_scenario_sqlite(const char *f, int wal, char *out, size_t n) {
  sqlite3 *a = NULL, *b = NULL;
  sqlite3_open(f, &a);
  sqlite3_open(f, &b);
  if (wal) sqlite3_exec(a, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  sqlite3_exec(a, "CREATE TABLE t(a); INSERT INTO t VALUES(1), (2); CREATE TABLE u(b);", NULL, NULL,
               NULL);
  sqlite3_stmt *rd = NULL;
  sqlite3_prepare_v2(a, "SELECT a FROM t", -1, &rd, NULL);
  int s1 = sqlite3_step(rd);
  int ins = sqlite3_exec(a, "INSERT INTO u VALUES(10)", NULL, NULL, NULL);
  int seen1 = sq_int(b, "SELECT count(*) FROM u");
  int other = sqlite3_exec(b, "INSERT INTO u VALUES(11)", NULL, NULL, NULL);
  int bg = sqlite3_exec(a, "BEGIN", NULL, NULL, NULL);
  int ins2 = sqlite3_exec(a, "INSERT INTO u VALUES(12)", NULL, NULL, NULL);
  int cm = sqlite3_exec(a, "COMMIT", NULL, NULL, NULL);
  int seen2 = sq_int(b, "SELECT count(*) FROM u");
  int s2 = sqlite3_step(rd), s3 = sqlite3_step(rd);
  sqlite3_finalize(rd);
  snprintf(out, n, "%d %d %d %d %d %d %d %d %d %d %d", s1, ins, sqlite3_get_autocommit(a), seen1,
           other, bg, ins2 & 0xff, cm, seen2, s2, s3);
  sqlite3_close(b);
  sqlite3_close(a);
}

/* A write in autocommit mode (and a COMMIT) while another statement of the
 * connection still reads is committed at once, as in SQLite: another
 * connection sees it before the reader finishes. Rollback journal and WAL;
 * the codes and counts each step observes equal SQLite's. */
TEST(autocommit_write_commits_while_reader_active) {
  for (int wal = 0; wal < 2; wal++) {
    char got[128], want[128];
    const char *fs = test_path(wal ? "rcw_s.db" : "rcj_s.db");
    const char *fq = test_path(wal ? "rcw_q.db" : "rcj_q.db");
    reader_commit_scenario_shale(fs, wal, got, sizeof got);
    reader_commit_scenario_sqlite(fq, wal, want, sizeof want);
    CHECK_STR(got, want);
  }
}
