/* session.c -- the session extension recording the same workloads on both
 * libraries: each changeset and patchset is printed in hex, so
 * tests/compat/test_compat.c compares them byte for byte (table order, row
 * order in SQLite's hash order, the encoding of every value type). Covers
 * attach(NULL) and named tables, table_filter, rowid tables with integer,
 * text and composite keys (declared out of column order), tables without a
 * key (ignored), change accumulation (INSERT+UPDATE, INSERT+DELETE,
 * DELETE+INSERT, UPDATE of the key, no-op UPDATE), indirect changes
 * (triggers, sqlite3session_indirect), enable, isempty, object_config, an
 * attached database, the streaming forms, changeset_size (SQLite's running
 * bound, with OBJCONFIG_SIZE on), and a thousand rows (the hash
 * table growing); then the same for WITHOUT ROWID tables (integer, text,
 * composite, DESC and COLLATE keys, REAL columns, a secondary UNIQUE index
 * with REPLACE victims, UPSERT, trigger changes, a thousand rows, mixed
 * with rowid tables in one session, temp and attached databases). */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

static void dump(sqlite3_session *s, const char *label) {
  int n = -1;
  void *p = NULL;
  printf("== %s isempty=%d changeset_size=%lld\n", label, sqlite3session_isempty(s),
         (long long)sqlite3session_changeset_size(s));
  int rc = sqlite3session_changeset(s, &n, &p);
  printf("changeset rc=%d\n", rc);
  prog_hex("C", n, p);
  sqlite3_free(p);
  p = NULL;
  rc = sqlite3session_patchset(s, &n, &p);
  printf("patchset rc=%d\n", rc);
  prog_hex("P", n, p);
  sqlite3_free(p);
}

static int only_t2(void *ctx, const char *tab) {
  (*(int *)ctx)++;
  return !strcmp(tab, "t2") || !strcmp(tab, "t3");
}

typedef struct Out {
  unsigned char a[1 << 16];
  int n, calls;
} Out;

static int collect(void *arg, const void *p, int n) {
  Out *o = arg;
  memcpy(o->a + o->n, p, (size_t)n);
  o->n += n;
  o->calls++;
  return SQLITE_OK;
}

int main(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c);"
          "CREATE TABLE t2(a, b, c REAL, PRIMARY KEY(c, a));"
          "CREATE TABLE t3(x TEXT PRIMARY KEY, y);"
          "CREATE TABLE nokey(x, y);"
          "CREATE TABLE log(id INTEGER PRIMARY KEY, what);"
          "CREATE TRIGGER t1_log AFTER INSERT ON t1 BEGIN INSERT INTO log(what) VALUES(new.b); END;"
          "INSERT INTO t1 VALUES(1, 'one', 1.5), (2, x'0102', NULL), (3, 3, 'three');"
          "INSERT INTO t2 VALUES(1, 'a', 1.0), (2, 'b', 2.5);"
          "INSERT INTO t3 VALUES('k1', 1), ('k2', 2);");

  sqlite3_session *s = NULL;
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  printf("isempty %d enable %d indirect %d\n", sqlite3session_isempty(s),
         sqlite3session_enable(s, -1), sqlite3session_indirect(s, -1));
  int sz = -1;
  EXPECT_INT(sqlite3session_object_config(s, SQLITE_SESSION_OBJCONFIG_SIZE, &sz), SQLITE_OK);
  printf("size config %d\n", sz);
  sz = 1;
  EXPECT_INT(sqlite3session_object_config(s, SQLITE_SESSION_OBJCONFIG_SIZE, &sz), SQLITE_OK);
  printf("size config %d\n", sz);
  EXPECT_INT(sqlite3session_object_config(s, 99, &sz), SQLITE_MISUSE);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  dump(s, "nothing yet");
  EXEC_OK(db,
          "INSERT INTO t1 VALUES(10, 'ten', 10);" /* insert */
          "INSERT INTO t1 VALUES(11, 'x', 11); UPDATE t1 SET b = 'eleven' WHERE a = 11;"
          "INSERT INTO t1 VALUES(12, 'gone', 12); DELETE FROM t1 WHERE a = 12;"
          "UPDATE t1 SET c = 2.5 WHERE a = 1;" /* update one column */
          "UPDATE t1 SET b = b WHERE a = 3;"   /* no-op update */
          "DELETE FROM t1 WHERE a = 2;"        /* delete */
          "UPDATE t1 SET a = 30 WHERE a = 3;"  /* key change */
          "INSERT INTO nokey VALUES(1, 2);"
          "UPDATE t2 SET b = 'bb' WHERE a = 2;"
          "DELETE FROM t2 WHERE a = 1; INSERT INTO t2 VALUES(1, 'again', 1.0);"
          "INSERT INTO t2 VALUES(3, NULL, -0.25);"
          "UPDATE t3 SET y = y + 100;"
          "DELETE FROM t3 WHERE x = 'k1';");
  dump(s, "mixed");
  EXPECT(sqlite3session_memory_used(s) > 0);
  printf("isempty %d\n", sqlite3session_isempty(s));

  /* streaming: the same bytes */
  static Out o;
  o.n = 0;
  EXPECT_INT(sqlite3session_changeset_strm(s, collect, &o), SQLITE_OK);
  int n = 0;
  void *p = NULL;
  EXPECT_INT(sqlite3session_changeset(s, &n, &p), SQLITE_OK);
  EXPECT_INT(o.n, n);
  EXPECT(n == o.n && !memcmp(o.a, p, (size_t)n));
  sqlite3_free(p);
  o.n = 0;
  EXPECT_INT(sqlite3session_patchset_strm(s, collect, &o), SQLITE_OK);
  EXPECT_INT(sqlite3session_patchset(s, &n, &p), SQLITE_OK);
  EXPECT(n == o.n && !memcmp(o.a, p, (size_t)n));
  sqlite3_free(p);

  /* disabled: nothing more is recorded */
  EXPECT_INT(sqlite3session_enable(s, 0), 0);
  EXEC_OK(db, "INSERT INTO t1 VALUES(50, 'unseen', 0);");
  EXPECT_INT(sqlite3session_enable(s, 1), 1);
  /* indirect: marks new changes; a later direct change clears it */
  EXPECT_INT(sqlite3session_indirect(s, 1), 1);
  EXEC_OK(db, "INSERT INTO t3 VALUES('k3', 3), ('k4', 4);");
  EXPECT_INT(sqlite3session_indirect(s, 0), 0);
  EXEC_OK(db, "UPDATE t3 SET y = 33 WHERE x = 'k3';");
  dump(s, "indirect and disabled");
  sqlite3session_delete(s);

  /* named tables and a filter */
  sqlite3_session *s1 = NULL, *s2 = NULL;
  EXPECT_INT(sqlite3session_create(db, "main", &s1), SQLITE_OK);
  EXPECT_INT(sqlite3session_create(db, "main", &s2), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s1, "t3"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s1, "t1"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s1, "t1"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s1, "missing"), SQLITE_OK);
  int calls = 0;
  sqlite3session_table_filter(s2, only_t2, &calls);
  EXEC_OK(db,
          "INSERT INTO t1 VALUES(60, 'sixty', 6);"
          "INSERT INTO t2 VALUES(60, 'sixty', 6);"
          "INSERT INTO t3 VALUES('k60', 60);"
          "INSERT INTO nokey VALUES(6, 0);");
  printf("filter calls %d\n", calls);
  dump(s1, "named t3, t1 (log via trigger is not attached)");
  dump(s2, "filter t2/t3");
  sqlite3session_delete(s1);
  sqlite3session_delete(s2);

  /* a trigger's changes are indirect */
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  EXEC_OK(db, "INSERT INTO t1 VALUES(70, 'seventy', 7);");
  dump(s, "trigger");
  sqlite3session_delete(s);

  /* a thousand rows: the hash grows; row order is SQLite's */
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  sz = 1;
  EXPECT_INT(sqlite3session_object_config(s, SQLITE_SESSION_OBJCONFIG_SIZE, &sz), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "t3"), SQLITE_OK);
  EXPECT_INT(sqlite3session_object_config(s, SQLITE_SESSION_OBJCONFIG_SIZE, &sz), SQLITE_MISUSE);
  EXPECT_INT(sqlite3session_attach(s, "t1"), SQLITE_OK);
  EXEC_OK(db,
          "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM c WHERE i < 1000) "
          "INSERT INTO t1 SELECT 1000 + i, i * 7, i / 3.0 FROM c;"
          "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
          "INSERT INTO t3 SELECT 'key' || i, CAST(i * 3 AS BLOB) FROM c;"
          "UPDATE t1 SET b = -b WHERE a % 5 = 0; DELETE FROM t1 WHERE a % 7 = 0;");
  dump(s, "many rows");
  sqlite3session_delete(s);

  /* an attached database */
  EXEC_OK(db, "ATTACH ':memory:' AS aux; CREATE TABLE aux.t(k PRIMARY KEY, v);");
  EXPECT_INT(sqlite3session_create(db, "aux", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  EXEC_OK(db,
          "INSERT INTO aux.t VALUES(1, 'a'), (2.5, 'b'), ('three', x'00ff'), (x'01', NULL);"
          "INSERT INTO main.t3 VALUES('notseen', 0);");
  dump(s, "aux");
  sqlite3session_delete(s);

  /* WITHOUT ROWID tables */
  EXEC_OK(db,
          "CREATE TABLE w1(k INTEGER PRIMARY KEY, v, r REAL) WITHOUT ROWID;"
          "CREATE TABLE w2(a TEXT, b INT, c REAL, d, PRIMARY KEY(c DESC, a)) WITHOUT ROWID;"
          "CREATE TABLE w3(t TEXT COLLATE nocase PRIMARY KEY, u UNIQUE, x) WITHOUT ROWID;"
          "CREATE TABLE wlog(k PRIMARY KEY, n) WITHOUT ROWID;"
          "CREATE TRIGGER w1_log AFTER UPDATE ON w1 BEGIN "
          "INSERT INTO wlog VALUES(new.k, 1) ON CONFLICT(k) DO UPDATE SET n = n + 1; END;"
          "INSERT INTO w1 VALUES(1, 'one', 1), (2, 'two', 2.5), (3, x'03', NULL);"
          "INSERT INTO w2 VALUES('a', 1, 1.0, 'd1'), ('b', 2, 2.5, NULL), ('c', 3, 1.0, 3);"
          "INSERT INTO w3 VALUES('Aa', 1, 'x'), ('bB', 2, 'y');");
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  EXEC_OK(db,
          "INSERT INTO w1 VALUES(10, 'ten', 10);"
          "INSERT INTO w1 VALUES(11, 'x', 11); UPDATE w1 SET v = 'eleven' WHERE k = 11;"
          "INSERT INTO w1 VALUES(12, 'gone', 12); DELETE FROM w1 WHERE k = 12;"
          "UPDATE w1 SET r = 7 WHERE k = 1;"
          "UPDATE w1 SET v = v WHERE k = 2;"
          "DELETE FROM w1 WHERE k = 3; INSERT INTO w1 VALUES(3, 'back', 3);"
          "UPDATE w1 SET k = 30 WHERE k = 2;"
          "UPDATE w2 SET d = 'dd' WHERE a = 'b';"
          "UPDATE w2 SET c = 9.5 WHERE a = 'a';"
          "DELETE FROM w2 WHERE a = 'c';"
          "INSERT INTO w2 VALUES('e', 5, -0.25, x'');"
          "INSERT OR REPLACE INTO w3 VALUES('aA', 2, 'z');"
          "INSERT INTO w3 VALUES('cc', 3, 'w') ON CONFLICT DO NOTHING;"
          "INSERT INTO w3 VALUES('CC', 9, 'v') ON CONFLICT(t) DO UPDATE SET x = excluded.x;"
          "INSERT INTO t1 VALUES(80, 'rowid table', 8);");
  dump(s, "without rowid");
  sqlite3session_delete(s);

  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "w2"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "w1"), SQLITE_OK);
  EXEC_OK(db,
          "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM c WHERE i < 1000) "
          "INSERT INTO w1 SELECT 1000 + i, i * 7, i / 3.0 FROM c;"
          "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
          "INSERT INTO w2 SELECT 'key' || i, i, i / 7.0, CAST(i * 3 AS BLOB) FROM c;"
          "UPDATE w1 SET v = -v WHERE k % 5 = 0; DELETE FROM w1 WHERE k % 7 = 0;"
          "DELETE FROM w2 WHERE b % 3 = 0;");
  dump(s, "without rowid, many rows");
  sqlite3session_delete(s);

  EXEC_OK(db,
          "CREATE TABLE aux.w(k, j, v, PRIMARY KEY(j, k)) WITHOUT ROWID;"
          "CREATE TEMP TABLE tw(k PRIMARY KEY, v) WITHOUT ROWID;");
  sqlite3_session *s3 = NULL;
  EXPECT_INT(sqlite3session_create(db, "aux", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_create(db, "temp", &s3), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s3, NULL), SQLITE_OK);
  EXEC_OK(db,
          "INSERT INTO aux.w VALUES(1, 'a', 1), (2.5, 'b', 2), ('three', x'00ff', 3);"
          "UPDATE aux.w SET v = v * 10 WHERE k = 1; DELETE FROM aux.w WHERE j = 'b';"
          "INSERT INTO tw VALUES('t', 1), ('u', 2); UPDATE tw SET v = 3 WHERE k = 'u';"
          "DELETE FROM tw;");
  dump(s, "without rowid, aux");
  dump(s3, "without rowid, temp");
  sqlite3session_delete(s);
  sqlite3session_delete(s3);

  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_failed ? 1 : 0;
}
