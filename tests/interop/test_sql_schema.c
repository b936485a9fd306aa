/*
 * test_sql_schema.c -- schemas across the two engines. Shale creates tables
 * (every constraint kind, WITHOUT ROWID, AUTOINCREMENT), indexes (partial,
 * expression, DESC, NOCASE), views and triggers, fills them and drops some;
 * then the reference SQLite opens the file: integrity_check is "ok", the
 * sqlite_schema rows equal those SQLite writes for the same statements, and
 * SQLite queries and modifies every table. The other way round, a schema
 * SQLite wrote (every object kind) is loaded and used by Shale.
 *
 * Invariants:
 *  1. The same statements run on a Shale file and an SQLite file; the files
 *     are compared through SQLite only once Shale's statements ended.
 *  2. Data sizes span several pages per tree (interior pages in the index
 *     trees Shale fills).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tsql.h"
#include "../test.h"
#include "shale.h"

static int exec_shale(shale *db, const char *sql, int line) {
  char *err = NULL;
  int rc = shale_exec(db, sql, NULL, NULL, &err);
  if (rc != SHALE_OK) test_fail(__FILE__, line, "shale: %.200s: %s", sql, err ? err : "?");
  shale_free(err);
  return rc;
}
#define SH(db, sql) exec_shale(db, sql, __LINE__)

static int exec_ref(sqlite3 *db, const char *sql, int line) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) test_fail(__FILE__, line, "sqlite: %.200s: %s", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}
#define REF(db, sql) exec_ref(db, sql, __LINE__)

static void same_dump_at(const char *a_path, const char *b_path, const char *q, int line) {
  char *a = tsql_dump(a_path, q), *b = tsql_dump(b_path, q);
  if (strcmp(a, b))
    test_fail(__FILE__, line, "%s differs:\n--- shale file\n%.3000s--- sqlite file\n%.3000s", q, a,
              b);
  free(a);
  free(b);
}
#define SAME_DUMP(a, b, q) same_dump_at(a, b, q, __LINE__)
#define SCHEMA_Q "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid"

static void intact_at(const char *path, int line) {
  char msg[2048];
  if (!tsql_integrity(path, msg, sizeof msg)) test_fail(__FILE__, line, "integrity_check: %s", msg);
}
#define INTACT(path) intact_at(path, __LINE__)

/* The schema both engines build; run statement by statement. */
static const char *const SCHEMA[] = {
    "CREATE TABLE cust(id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE, "
    "email TEXT UNIQUE, score REAL DEFAULT 0.5 CHECK(score >= 0), "
    "created TEXT DEFAULT '2000-01-01', UNIQUE(name, email))",
    "CREATE TABLE ord(oid INTEGER PRIMARY KEY AUTOINCREMENT, cust INTEGER REFERENCES cust(id) "
    "ON DELETE CASCADE, amount NUM NOT NULL ON CONFLICT REPLACE DEFAULT 0, note BLOB, "
    "total AS (amount * 2) STORED, half AS (amount / 2))",
    "CREATE TABLE kv(k TEXT PRIMARY KEY, v, ts INT) WITHOUT ROWID",
    "CREATE TABLE pair(a INT, b TEXT COLLATE NOCASE, c, PRIMARY KEY(b DESC, a), UNIQUE(c)) "
    "WITHOUT ROWID",
    "CREATE TABLE plain(x, y, z)",
    "CREATE TABLE st(i INTEGER PRIMARY KEY, t TEXT, r REAL, b BLOB, a ANY) STRICT",
    "CREATE INDEX cust_score ON cust(score DESC)",
    "CREATE INDEX cust_lname ON cust(lower(name), id)",
    "CREATE UNIQUE INDEX ord_note ON ord(note) WHERE note IS NOT NULL",
    "CREATE INDEX ord_amt ON ord(cust, amount DESC) WHERE amount > 10",
    "CREATE INDEX kv_v ON kv(v COLLATE NOCASE)",
    "CREATE INDEX pair_ac ON pair(a, c)",
    "CREATE INDEX plain_xyz ON plain(x, y + z)",
    "CREATE VIEW big AS SELECT id, name FROM cust WHERE score > 0.75",
    "CREATE VIEW totals(c, s) AS SELECT cust, sum(amount) FROM ord GROUP BY cust",
    "CREATE TRIGGER ord_ins AFTER INSERT ON ord BEGIN "
    "UPDATE cust SET score = score + 0.001 WHERE id = new.cust; END",
    "CREATE TRIGGER big_del INSTEAD OF DELETE ON big BEGIN DELETE FROM cust WHERE id = old.id; END",
    NULL};

static void fill(void *db, int is_shale) {
  char sql[512];
  const char *stmts[8];
  for (int i = 1; i <= 300; i++) {
    int n = 0;
    char a[256], b[256], c[256], d[256], e[256], f[256];
    snprintf(a, sizeof a,
             "INSERT INTO cust(id, name, email, score, created) VALUES(%d, 'Name%03d', "
             "'user%d@example.com', %d.%02d, '2020-01-01')",
             i, i % 250, i, i % 3, i % 100);
    snprintf(b, sizeof b, "INSERT INTO ord(cust, amount, note) VALUES(%d, %d, %s)", i, (i * 7) % 50,
             i % 4 ? "NULL" : "randomblob(8)");
    snprintf(c, sizeof c, "INSERT INTO kv VALUES('key%05d', 'Val%d', %d)", i * 13 % 1000, i % 20,
             i);
    snprintf(d, sizeof d, "INSERT INTO pair VALUES(%d, 'b%03d', %d)", i % 17, i, i * 3);
    snprintf(e, sizeof e, "INSERT INTO plain VALUES(%d, %d, 'z%d')", i % 10, i, i);
    snprintf(f, sizeof f, "INSERT INTO st VALUES(%d, 't%d', %d.5, x'%02x', %d)", i, i, i, i % 256,
             i);
    stmts[n++] = a, stmts[n++] = b, stmts[n++] = c, stmts[n++] = d, stmts[n++] = e, stmts[n++] = f;
    for (int k = 0; k < n; k++) {
      snprintf(sql, sizeof sql, "%s", stmts[k]);
      if (is_shale)
        SH(db, sql);
      else
        REF(db, sql);
    }
  }
}

/* Statements after the fill that change the schema again. */
static const char *const CHANGES[] = {
    "DROP INDEX plain_xyz",
    "DROP VIEW big",
    "CREATE TABLE extra(a UNIQUE, b UNIQUE, c)",
    "CREATE INDEX extra_c ON extra(c)",
    "DROP TABLE pair",
    "CREATE INDEX plain_y ON plain(y)",
    "CREATE TABLE copy AS SELECT id, name, score FROM cust WHERE id % 3 = 0",
    "DROP TRIGGER ord_ins",
    NULL};

TEST(schema_shale_writes_sqlite_reads) {
  const char *sp = test_path("sw.db");
  char rp[600];
  snprintf(rp, sizeof rp, "%s-ref", sp);
  remove(sp);
  remove(rp);
  shale *s = NULL;
  CHECK_OK(shale_open(sp, &s));
  sqlite3 *q = tsql_open(rp);
  for (int i = 0; SCHEMA[i]; i++) {
    SH(s, SCHEMA[i]);
    REF(q, SCHEMA[i]);
  }
  SAME_DUMP(sp, rp, SCHEMA_Q);
  INTACT(sp);
  SH(s, "BEGIN");
  REF(q, "BEGIN");
  fill(s, 1);
  fill(q, 0);
  SH(s, "COMMIT");
  REF(q, "COMMIT");
  INTACT(sp);
  for (int i = 0; CHANGES[i]; i++) {
    SH(s, CHANGES[i]);
    REF(q, CHANGES[i]);
  }
  CHECK_OK(shale_close(s));
  sqlite3_close(q);
  SAME_DUMP(sp, rp, SCHEMA_Q);
  INTACT(sp);
  /* sqlite_sequence content is INSERT's (AUTOINCREMENT): its table is ours */
  SAME_DUMP(sp, rp, "SELECT name FROM sqlite_sequence WHERE 0");
  SAME_DUMP(sp, rp, "SELECT id, name, email, score FROM cust ORDER BY id");
  SAME_DUMP(sp, rp, "SELECT name FROM cust INDEXED BY cust_lname WHERE lower(name) = 'name007'");
  SAME_DUMP(sp, rp, "SELECT count(*) FROM ord INDEXED BY ord_amt WHERE cust > 100 AND amount > 10");
  SAME_DUMP(sp, rp, "SELECT k FROM kv INDEXED BY kv_v WHERE v = 'VAL3' ORDER BY k");
  SAME_DUMP(sp, rp, "SELECT * FROM copy ORDER BY id");
  SAME_DUMP(sp, rp, "SELECT * FROM totals ORDER BY c LIMIT 20");
  /* SQLite modifies the Shale-made file and it stays intact */
  sqlite3 *q2 = tsql_open(sp);
  REF(q2,
      "INSERT INTO cust(name, email) VALUES('late', 'late@x'); "
      "UPDATE cust SET name = upper(name) WHERE id % 7 = 0; DELETE FROM ord WHERE oid % 5 = 0;"
      "INSERT INTO ord(cust, amount) VALUES(1, 99); DELETE FROM kv WHERE ts % 2 = 0;"
      "CREATE INDEX late_i ON plain(z); DROP TABLE extra;");
  sqlite3_close(q2);
  INTACT(sp);
}

TEST(schema_sqlite_writes_shale_reads) {
  const char *rp = test_path("rw.db");
  remove(rp);
  sqlite3 *q = tsql_open(rp);
  for (int i = 0; SCHEMA[i]; i++) REF(q, SCHEMA[i]);
  REF(q, "BEGIN");
  fill(q, 0);
  REF(q, "COMMIT");
  sqlite3_close(q);
  /* Shale loads it, uses and changes every kind of object */
  shale *s = NULL;
  CHECK_OK(shale_open(rp, &s));
  SH(s, "INSERT INTO cust(name, email) VALUES('shale', 'shale@x')");
  SH(s, "INSERT INTO ord(cust, amount, note) VALUES(301, 20, x'01')");
  SH(s, "INSERT INTO kv VALUES('zz', 'v', 1)");
  SH(s, "INSERT INTO pair VALUES(1, 'new', 99999)");
  SH(s, "CREATE INDEX cust_email2 ON cust(email, score)");
  SH(s, "REINDEX");
  SH(s, "DROP TRIGGER ord_ins");
  SH(s, "DROP VIEW totals");
  SH(s, "DROP TABLE pair");
  SH(s, "CREATE VIEW again AS SELECT k FROM kv");
  CHECK_OK(shale_close(s));
  INTACT(rp);
  char *d = tsql_dump(rp, "SELECT name FROM sqlite_schema ORDER BY rowid");
  CHECK(strstr(d, "cust_email2") && strstr(d, "again") && !strstr(d, "pair_ac") &&
        !strstr(d, "ord_ins") && !strstr(d, "totals"));
  free(d);
  d = tsql_dump(rp, "SELECT count(*) FROM cust INDEXED BY cust_email2 WHERE email > ''");
  CHECK_STR(d, "301\n");
  free(d);
}

/* Statistics SQLite's ANALYZE wrote go with the objects Shale drops. */
TEST(schema_drop_clears_stats) {
  const char *sp = test_path("st.db");
  char rp[600];
  snprintf(rp, sizeof rp, "%s-ref", sp);
  remove(sp);
  remove(rp);
  const char *setup =
      "CREATE TABLE a(x, y UNIQUE); CREATE INDEX ax ON a(x); CREATE TABLE b(z PRIMARY KEY, w);"
      "CREATE INDEX bw ON b(w);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50)"
      " INSERT INTO a SELECT i % 7, i FROM c;"
      "INSERT INTO b SELECT x * 100 + y, y FROM a; ANALYZE;";
  sqlite3 *q = tsql_open(sp);
  REF(q, setup);
  sqlite3_close(q);
  q = tsql_open(rp);
  REF(q, setup);
  shale *s = NULL;
  CHECK_OK(shale_open(sp, &s));
  const char *drops = "DROP INDEX ax; DROP TABLE b; CREATE INDEX ay ON a(y, x)";
  SH(s, drops);
  REF(q, drops);
  CHECK_OK(shale_close(s));
  sqlite3_close(q);
  SAME_DUMP(sp, rp, "SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx");
  SAME_DUMP(sp, rp, SCHEMA_Q);
  INTACT(sp);
}
