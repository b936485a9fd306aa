/*
 * test_ddl.c -- CREATE/DROP/REINDEX through the shale_* API, compared with
 * the reference SQLite statement by statement: the same result code and
 * message for every statement, then the same sqlite_schema rows (type,
 * name, tbl_name, rootpage, sql) in the two files and an intact Shale file.
 *
 * Invariants:
 *  1. Every case runs the same statements on a Shale file and an SQLite file
 *     (fresh ones per case) and compares after each statement.
 *  2. Files are compared through the reference SQLite only, after Shale's
 *     statements ended (no lock left).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "../../common/tsql.h"
#include "../../test.h"
#include "shale.h"

typedef struct Pair {
  shale *s;
  sqlite3 *q;
  char spath[512], qpath[520];
} Pair;

static void pair_open(Pair *p, const char *name) {
  snprintf(p->spath, sizeof p->spath, "%s", test_path(name));
  snprintf(p->qpath, sizeof p->qpath, "%s-ref", p->spath);
  remove(p->spath);
  remove(p->qpath);
  p->s = NULL;
  CHECK_OK(shale_open(p->spath, &p->s));
  p->q = tsql_open(p->qpath);
  CHECK(p->q != NULL);
}

static void pair_close(Pair *p) {
  CHECK_OK(shale_close(p->s));
  sqlite3_close(p->q);
}

/* Run one statement on Shale: result code (extended) and message. */
static int run_shale(shale *db, const char *sql, char *msg, size_t nmsg) {
  shale_stmt *st = NULL;
  msg[0] = 0;
  int rc = shale_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SHALE_OK && st) {
    while ((rc = shale_step(st)) == SHALE_ROW) {
    }
    if (rc == SHALE_DONE) rc = SHALE_OK;
    shale_finalize(st);
  }
  if (rc != SHALE_OK) {
    rc = shale_extended_errcode(db);
    snprintf(msg, nmsg, "%s", shale_errmsg(db));
  }
  return rc;
}

static int run_ref(sqlite3 *db, const char *sql, char *msg, size_t nmsg) {
  sqlite3_stmt *st = NULL;
  msg[0] = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK && st) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(st);
  }
  if (rc != SQLITE_OK) {
    rc = sqlite3_extended_errcode(db);
    snprintf(msg, nmsg, "%s", sqlite3_errmsg(db));
  }
  return rc;
}

/* The same statement on both: same code and message. */
static int same_at(Pair *p, const char *sql, int line) {
  char ms[512], mq[512];
  int rs = run_shale(p->s, sql, ms, sizeof ms);
  int rq = run_ref(p->q, sql, mq, sizeof mq);
  if (rs != rq || strcmp(ms, mq)) {
    test_fail(__FILE__, line, "%s\n    shale: %d %s\n    sqlite: %d %s", sql, rs, ms, rq, mq);
    return 0;
  }
  return 1;
}
#define SAME(p, sql) same_at(p, sql, __LINE__)

/* Several statements that must succeed on both. */
static void both_at(Pair *p, const char *sql, int line) {
  char *err = NULL;
  int rs = shale_exec(p->s, sql, NULL, NULL, &err);
  if (rs != SHALE_OK) test_fail(__FILE__, line, "shale: %s: %s", sql, err ? err : "?");
  shale_free(err);
  char *e2 = NULL;
  int rq = sqlite3_exec(p->q, sql, NULL, NULL, &e2);
  if (rq != SQLITE_OK) test_fail(__FILE__, line, "sqlite: %s: %s", sql, e2 ? e2 : "?");
  sqlite3_free(e2);
}
#define BOTH(p, sql) both_at(p, sql, __LINE__)

#define SCHEMA_Q "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid"

/* Same query result on both files (read by SQLite). */
static void same_dump_at(Pair *p, const char *query, int line) {
  char *a = tsql_dump(p->spath, query), *b = tsql_dump(p->qpath, query);
  if (strcmp(a, b))
    test_fail(__FILE__, line, "%s differs:\n--- shale\n%s--- sqlite\n%s", query, a, b);
  free(a);
  free(b);
}
#define SAME_SCHEMA(p) same_dump_at(p, SCHEMA_Q, __LINE__)
#define SAME_DUMP(p, q) same_dump_at(p, q, __LINE__)

static void intact_at(Pair *p, int line) {
  char msg[1024];
  if (!tsql_integrity(p->spath, msg, sizeof msg))
    test_fail(__FILE__, line, "integrity_check of the Shale file: %s", msg);
}
#define INTACT(p) intact_at(p, __LINE__)

/* ------------------------------------------------------------------ cases */

TEST(ddl_create_table_rows) {
  Pair p;
  pair_open(&p, "ct.db");
  SAME(&p, "create   table   t1 (a integer primary key, b text unique, c, unique(c,b)) ;");
  SAME(&p, "CREATE TABLE IF NOT EXISTS \"t 2\"(x)");
  SAME(&p, "create table main.m(x)");
  SAME(&p, "CREATE TABLE w(a, b, primary key(b,a), unique(a)) without rowid");
  SAME(&p, "CREATE TABLE w2(a INTEGER PRIMARY KEY, b UNIQUE, c UNIQUE) WITHOUT ROWID");
  SAME(&p,
       "CREATE TABLE w3(a UNIQUE, b PRIMARY KEY, c UNIQUE, UNIQUE(c, a), UNIQUE(a)) WITHOUT ROWID");
  SAME(&p, "CREATE TABLE ai(a integer primary key autoincrement, b)");
  SAME(&p, "CREATE TABLE ai2(a integer primary key autoincrement)");
  SAME(&p,
       "CREATE TABLE k(a PRIMARY KEY, b UNIQUE, c CHECK(c > 0), d DEFAULT 5 NOT NULL, "
       "e REFERENCES t1(a), f AS (a + 1), g COLLATE NOCASE UNIQUE) -- comment");
  SAME(&p, "CREATE TABLE s(a INT, b TEXT, c ANY) STRICT");
  SAME(&p, "CREATE TABLE s2(a INT, b TEXT, c ANY) STRICT ;");
  SAME(&p, "CREATE TABLE s3(a PRIMARY KEY) WITHOUT ROWID /* c */ ;");
  SAME(&p, "CREATE TABLE s4(a PRIMARY KEY) WITHOUT ROWID -- c");
  SAME(&p, "CREATE TABLE s5(a) /* c */ ;");
  SAME(&p, "CREATE TABLE IF NOT EXISTS t1(zzz)");
  SAME(&p, "create table [br](x) ; ");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_create_errors) {
  Pair p;
  pair_open(&p, "ce.db");
  BOTH(&p,
       "CREATE TABLE t(a, b); CREATE TABLE u(a UNIQUE); CREATE INDEX i ON t(b);"
       "CREATE VIEW v AS SELECT 1; CREATE TRIGGER g AFTER DELETE ON t BEGIN SELECT 1; END;");
  static const char *const cases[] = {
      "create table t(b)",
      "create table \"T\"(b)",
      "create table [t](b)",
      "create table main.T(b)",
      "create table v(b)",
      "create table \"V\"(b)",
      "create table i(b)",
      "create table \"I\"(b)",
      "create view t as select 1",
      "create view v as select 1",
      "create view i as select 1",
      "create view w as select ?",
      "create view v as select ?",
      "create table sqlite_x(a)",
      "create table \"sqlite_X\"(a)",
      "create table sqlite_t(a, a)",
      "create table t(a, a)",
      "create table other.q(a)",
      "create temp table main.q(a)",
      "create table q(a, a)",
      "create table q(a primary key, b primary key)",
      "create table q(a text primary key autoincrement)",
      "create table q(a) without rowid",
      "create table q(a integer primary key autoincrement) without rowid",
      "create table q(a, check((select 1)))",
      "create table q(a default (b))",
      "create table q(a collate nosuch)",
      "create table q(a, unique(nosuch))",
      "create table q(a, primary key(a+1))",
      "create table q(a, foreign key(z) references t(a))",
      "create index t on t(a)",
      "create index v on t(a)",
      "create index i on t(a)",
      "create index \"I\" on t(a)",
      "create index if not exists t on t(a)",
      "create index if not exists i on t(nosuch)",
      "create index x on nosuch(a)",
      "create index x on \"NoSuch\"(a)",
      "create index t on nosuch(a)",
      "create index x on v(a)",
      "create index x on sqlite_schema(a)",
      "create index x on sqlite_master(a)",
      "create index sqlite_x on t(a)",
      "create index sqlite_autoindex_u_1 on t(a)",
      "create index x on t(nosuch)",
      "create index x on t(a collate nosuch)",
      "create index x on t(random())",
      "create index x on t((select 1))",
      "create index x on t(a) where b > ?",
      "create index x on t(a) where (select 1)",
      "create index x on other.t(a)",
      "create trigger g after insert on t begin select 1; end",
      "create trigger \"G\" after insert on t begin select 1; end",
      "create trigger x after insert on nosuch begin select 1; end",
      "create trigger sqlite_x after insert on nosuch begin select 1; end",
      "create trigger sqlite_x after insert on t begin select 1; end",
      "create trigger x before insert on v begin select 1; end",
      "create trigger x after insert on v begin select 1; end",
      "create trigger x instead of insert on t begin select 1; end",
      "create trigger x after insert on sqlite_schema begin select 1; end",
      "create trigger x after insert on t begin select ?; end",
      "create temp trigger main.x after insert on t begin select 1; end",
      "create trigger x after insert on temp.t begin select 1; end",
      "create trigger if not exists g after insert on nosuch begin select 1; end",
      "create trigger if not exists g after insert on t begin select 1; end",
      "create table if not exists t(a, a)",
      "create view if not exists v as select 1",
      "create table if not exists i(x)",
      NULL};
  for (int i = 0; cases[i]; i++) SAME(&p, cases[i]);
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(compile_drop) {
  Pair p;
  pair_open(&p, "dr.db");
  BOTH(&p,
       "CREATE TABLE t(a, b UNIQUE, c PRIMARY KEY); CREATE TABLE u(a UNIQUE);"
       "CREATE INDEX i ON t(a); CREATE INDEX i2 ON u(a, a);"
       "CREATE VIEW v AS SELECT 1; CREATE VIEW v2 AS SELECT 2;"
       "CREATE TRIGGER g AFTER DELETE ON t BEGIN SELECT 1; END;"
       "CREATE TRIGGER g2 AFTER DELETE ON u BEGIN SELECT 1; END;"
       "CREATE TRIGGER g3 INSTEAD OF DELETE ON v BEGIN SELECT 1; END;"
       "CREATE TABLE a1(x INTEGER PRIMARY KEY AUTOINCREMENT);"
       "CREATE TABLE w(a, b, PRIMARY KEY(a), UNIQUE(b)) WITHOUT ROWID;");
  static const char *const cases[] = {"drop table nosuch",
                                      "drop table \"NoSuch\"",
                                      "drop table main.nosuch",
                                      "drop table other.nosuch",
                                      "drop table if exists nosuch",
                                      "drop table if exists other.nosuch",
                                      "drop table v",
                                      "drop table \"V\"",
                                      "drop view t",
                                      "drop view nosuch",
                                      "drop view if exists nosuch",
                                      "drop index nosuch",
                                      "drop index main.nosuch",
                                      "drop index if exists nosuch",
                                      "drop index sqlite_autoindex_u_1",
                                      "drop index sqlite_autoindex_t_2",
                                      "drop trigger nosuch",
                                      "drop trigger main.\"NoSuch\"",
                                      "drop trigger if exists nosuch",
                                      "drop table sqlite_schema",
                                      "drop table sqlite_master",
                                      "drop table sqlite_sequence",
                                      "drop index i",
                                      "drop trigger g2",
                                      "drop view v",
                                      "drop table t",
                                      "drop table w",
                                      "drop table a1",
                                      "drop table IF EXISTS u",
                                      "drop view v2",
                                      NULL};
  for (int i = 0; cases[i]; i++) SAME(&p, cases[i]);
  SAME_SCHEMA(&p);
  INTACT(&p);
  /* the freed pages are reused as SQLite reuses them */
  BOTH(&p,
       "CREATE TABLE n1(a UNIQUE, b UNIQUE); CREATE INDEX n1i ON n1(b, a);"
       "CREATE TABLE n2(x)");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_views_triggers) {
  Pair p;
  pair_open(&p, "vt.db");
  BOTH(&p, "CREATE TABLE t(a, b)");
  SAME(&p, "create view v1 as select a from t ;");
  SAME(&p, "create view v2(x,y) as select 1,2");
  SAME(&p, "Create View IF NOT EXISTS main.v3 as select * from t where a > 1 /* c */");
  SAME(&p, "create view v5 as select nosuch from nosuch");
  SAME(&p, "create trigger tr1 after insert on t begin select 1; end");
  SAME(&p,
       "CREATE TRIGGER IF NOT EXISTS main.tr2 BEFORE UPDATE OF a ON t FOR EACH ROW WHEN "
       "new.a > 0 BEGIN UPDATE t SET b = 1 WHERE a = new.a; DELETE FROM t; END ;");
  SAME(&p, "create trigger tr3 instead of delete on v1 begin select 1; end");
  SAME(&p, "create trigger tr4 delete on t begin select nosuch from nosuch; end");
  SAME(&p, "create view v6 as select 1 -- c\n ; ");
  SAME(&p, "create trigger tr5 delete on t begin select 1; end /* c */ ;");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

/* No temp database yet: TEMP objects are made in main (they work, but
 * persist). */
TEST(ddl_temp_objects) {
  shale *db = NULL;
  const char *path = test_path("temp.db");
  remove(path);
  CHECK_OK(shale_open(path, &db));
  CHECK_OK(shale_exec(db,
                      "CREATE TEMP TABLE t1(x); CREATE TEMPORARY VIEW v1 AS SELECT 1;"
                      "CREATE TEMP TRIGGER g1 AFTER INSERT ON t1 BEGIN SELECT 1; END;"
                      "CREATE TABLE temp.t2(y); DROP VIEW v1; DROP TABLE temp.t2;",
                      NULL, NULL, NULL));
  CHECK_OK(shale_close(db));
}

TEST(ddl_create_index_rows) {
  Pair p;
  pair_open(&p, "ci.db");
  BOTH(&p,
       "CREATE TABLE t(a, b, c REAL); CREATE TABLE w(x, y, z, PRIMARY KEY(y, x)) WITHOUT ROWID");
  SAME(&p, "create index i1 on t(a)");
  SAME(&p, "create unique index  i2 on t(c desc) where c > 0 ;");
  SAME(&p, "CREATE INDEX IF NOT EXISTS i3 ON t(a COLLATE NOCASE, b DESC)");
  SAME(&p, "CREATE INDEX i4 ON t(a + b, lower(b))");
  SAME(&p, "CREATE INDEX i5 ON w(z)");
  SAME(&p, "CREATE INDEX main.i6 ON w(z, x)");
  SAME(&p, "CREATE INDEX i7 ON t(a) WHERE b IS NOT NULL");
  SAME(&p, "CREATE INDEX i8 ON t(b) /* c */ ;");
  SAME(&p, "CREATE INDEX i9 ON t(b)  -- c");
  SAME(&p, "CREATE INDEX i10 ON t(c)  ");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_create_index_data) {
  Pair p;
  pair_open(&p, "cd.db");
  BOTH(&p,
       "CREATE TABLE t(a, b, c REAL, d TEXT COLLATE NOCASE);"
       "CREATE TABLE w(x, y, z, PRIMARY KEY(y, x)) WITHOUT ROWID");
  BOTH(&p,
       "INSERT INTO t VALUES(1, 2, 3, 'a'), (1, 3, 4.5, 'A'), (2, 2, NULL, 'b'),"
       "(NULL, NULL, 7, NULL), (NULL, 5, 7, 'c');"
       "INSERT INTO w VALUES(1, 2, 3), (2, 2, 3), (3, 1, NULL)");
  SAME(&p, "CREATE UNIQUE INDEX u1 ON t(a)");
  SAME(&p, "CREATE UNIQUE INDEX u2 ON t(b, a)");
  SAME(&p, "CREATE UNIQUE INDEX u3 ON t(a + 1)");
  SAME(&p, "CREATE UNIQUE INDEX u4 ON t(d)");
  SAME(&p, "CREATE UNIQUE INDEX u5 ON w(z)");
  SAME(&p, "CREATE UNIQUE INDEX u6 ON t(a) WHERE b > 2");
  SAME(&p, "CREATE UNIQUE INDEX u7 ON t(c) WHERE c IS NOT NULL");
  SAME(&p, "CREATE UNIQUE INDEX u8 ON t(c)");
  SAME(&p, "CREATE INDEX i1 ON t(a)");
  SAME(&p, "CREATE INDEX i2 ON t(c DESC, d)");
  SAME(&p, "CREATE INDEX i3 ON t(a * 10 + b) WHERE a IS NOT NULL");
  SAME(&p, "CREATE INDEX i4 ON w(z)");
  SAME(&p, "CREATE UNIQUE INDEX u9 ON w(z, y)");
  BOTH(&p,
       "CREATE TABLE wd(a, b TEXT COLLATE NOCASE, c, PRIMARY KEY(a DESC, b)) WITHOUT ROWID;"
       "INSERT INTO wd VALUES(1, 'x', 5), (1, 'Y', 6), (2, 'x', 7), (3, 'z', NULL)");
  SAME(&p, "CREATE INDEX wd1 ON wd(c)");
  SAME(&p, "CREATE INDEX wd2 ON wd(b, c DESC)");
  SAME(&p, "CREATE INDEX wd3 ON wd(c * 2) WHERE c > 5");
  SAME(&p, "CREATE UNIQUE INDEX wd4 ON wd(b)");
  SAME(&p, "CREATE UNIQUE INDEX wd5 ON wd(b COLLATE BINARY, a)");
  SAME(&p, "REINDEX wd");
  SAME_SCHEMA(&p);
  INTACT(&p);
  /* the indexes serve queries SQLite runs on the Shale file */
  SAME_DUMP(&p, "SELECT a, b FROM t INDEXED BY i1 WHERE a = 1 ORDER BY b");
  SAME_DUMP(&p, "SELECT c, d FROM t INDEXED BY i2 WHERE c > 3 ORDER BY c DESC, d");
  SAME_DUMP(&p, "SELECT x, y FROM w INDEXED BY i4 WHERE z = 3 ORDER BY x");
  SAME(&p, "REINDEX");
  SAME(&p, "REINDEX t");
  SAME(&p, "REINDEX i3");
  SAME(&p, "REINDEX nocase");
  SAME(&p, "REINDEX main.t");
  SAME(&p, "REINDEX main.nocase");
  SAME(&p, "REINDEX nosuch");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_create_table_as) {
  Pair p;
  pair_open(&p, "ctas.db");
  BOTH(&p,
       "CREATE TABLE t(a integer, b text, c, d VARCHAR(3), e REAL, f BLOB);"
       "INSERT INTO t VALUES(1, 'x', 2.5, 'abc', 3, x'00'), (2, 'y', NULL, 7, 4.5, 'z')");
  SAME(&p,
       "create table c1 as select a, b as \"x y\", c+1, 1.5, 'a', a||b, cast(a as int) k,"
       " cast(a as numeric) FROM t");
  SAME(&p, "create table c2 as select 1 as \"select\", 2 as \"9a\", 3 as a_b, 4 as [a\"b]");
  SAME(&p,
       "create table c3 as select * from (select 1 as aaaaaaaaaaaaaaaaaaaaaaaaaaaaa,"
       " 2 as bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 3 as c)");
  SAME(&p, "create table c4 as select d, e, f, a, a from t");
  SAME(&p, "create table if not exists c4 as select 1");
  SAME(&p, "create table c5 as select nosuch from t");
  SAME(&p, "create table c6 as select * from t where 0");
  SAME(&p, "create table c7 as select 1 as x union select 2 order by 1");
  SAME(&p, "create table c1 as select 1");
  SAME(&p,
       "create table c8 as select a, b, e from t union all select '5', 6, '7.5' "
       "union all select 'x', 8.0, 9");
  SAME(&p, "create table c9 as select count(*), max(a) m, group_concat(b) from t");
  SAME_SCHEMA(&p);
  SAME_DUMP(&p, "SELECT * FROM c1");
  SAME_DUMP(&p, "SELECT * FROM c4");
  SAME_DUMP(&p, "SELECT typeof(d), typeof(e), typeof(f) FROM c4");
  SAME_DUMP(&p, "SELECT * FROM c7");
  SAME_DUMP(&p, "SELECT a, typeof(a), b, typeof(b), e, typeof(e) FROM c8");
  SAME_DUMP(&p, "SELECT * FROM c9");
  INTACT(&p);
  pair_close(&p);
}

/* The cookie moves once per DDL statement, as in SQLite, and the file
 * format/encoding bytes are SQLite's. */
TEST(ddl_header) {
  Pair p;
  pair_open(&p, "hd.db");
  SAME(&p, "CREATE TABLE t(a)");
  SAME(&p, "CREATE INDEX i ON t(a)");
  SAME(&p, "CREATE VIEW v AS SELECT 1");
  SAME(&p, "DROP INDEX i");
  SAME(&p, "CREATE TABLE IF NOT EXISTS t(b)");
  SAME_DUMP(&p, "PRAGMA schema_version");
  FILE *a = fopen(p.spath, "rb"), *b = fopen(p.qpath, "rb");
  unsigned char ha[100] = {0}, hb[100] = {0};
  CHECK(a && b && fread(ha, 1, 100, a) == 100 && fread(hb, 1, 100, b) == 100);
  if (a) fclose(a);
  if (b) fclose(b);
  CHECK(!memcmp(ha + 40, hb + 40, 24)); /* cookie, format, cache, vacuum, encoding */
  pair_close(&p);
}

/* DDL inside a transaction is undone by ROLLBACK; a failed DDL leaves
 * nothing behind. */
TEST(ddl_rollback) {
  Pair p;
  pair_open(&p, "rb.db");
  BOTH(&p, "CREATE TABLE t(a)");
  BOTH(&p, "BEGIN; CREATE TABLE u(x UNIQUE); CREATE INDEX i ON t(a); DROP TABLE t; ROLLBACK");
  SAME_SCHEMA(&p);
  BOTH(&p, "INSERT INTO t VALUES(1), (1)");
  SAME(&p, "CREATE UNIQUE INDEX ui ON t(a)");
  SAME(&p, "CREATE TABLE z(a)");
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_alter_add_column) {
  Pair p;
  pair_open(&p, "aa.db");
  BOTH(&p,
       "CREATE TABLE t(a, b, UNIQUE(a)); CREATE TABLE e(a); CREATE VIEW v AS SELECT 1;"
       "CREATE TABLE w(k PRIMARY KEY, z) WITHOUT ROWID; INSERT INTO t VALUES(1, 2), (3, 4);"
       "INSERT INTO w VALUES(1, 2)");
  static const char *const cases[] = {
      "alter table t add column c", "alter table t add d integer default 5 ;",
      "alter table t add column f not null", "alter table e add column f not null",
      "alter table t add column g not null default 0", "alter table t add column h primary key",
      "alter table t add column h unique", "alter table t add column h default (1+1)",
      "alter table e add column h default (1+1)", "alter table t add column h default current_time",
      "alter table t add column i default -5", "alter table t add column j default (5)",
      "alter table t add column k as (a+1)", "alter table t add column l as (a+1) stored",
      "alter table e add column l as (a+1) stored", "alter table t add column a",
      "alter table t add column \"A\" text", "alter table v add column c",
      "alter table nosuch add column c", "alter table main.nosuch add column c",
      "alter table sqlite_schema add column c",
      "alter table t add column m references u(x) default 5",
      "alter table t add column n check(n > 0)", "alter table t add column o collate nosuch",
      "alter table w add column c",
      /* "alter table t add column p default true": compile_schema_load refuses DEFAULT true */
      "alter table t add column \"x y\" text /* c */ ;", "alter table w add q default 'q'",
      "alter table e add column r default 0 check(r > 0)",
      "alter table t add column s default 0 check(a > 1)",
      "alter table t add column u default 5 check(u > 0)",
      "alter table t add column v as (a) not null",
      "alter table t add column x as (a + 10) not null",
      "alter table t add column y check(y is null)",
      "alter table w add column z default -1 check(z > k)", NULL};
  for (int i = 0; cases[i]; i++) SAME(&p, cases[i]);
  SAME_SCHEMA(&p);
  INTACT(&p);
  SAME_DUMP(&p, "SELECT * FROM t");
  SAME_DUMP(&p, "SELECT * FROM w");
  BOTH(&p, "INSERT INTO t(a, b) VALUES(5, 6); INSERT INTO w(k, z) VALUES(9, 9)");
  SAME_DUMP(&p, "SELECT * FROM t");
  SAME_DUMP(&p, "SELECT * FROM w");
  INTACT(&p);
  pair_close(&p);
}

TEST(ddl_alter_rename) {
  Pair p;
  pair_open(&p, "ar.db");
  BOTH(&p,
       "create table t(a integer primary key autoincrement, b unique, c);"
       "create index i on t(b, c); create index i2 on t(c) where c > 0;"
       "create table r(x references t(a), y references \"T\", z, foreign key(z) references t);"
       "create view v as select t.a, x.b from t, t as x where t.a = 1;"
       "create view v2 as select * from (select a from t) union select b from main.t;"
       "create trigger g after insert on t begin update t set c = 1 where a = new.a;"
       " insert into r values(new.a, 1, 2); delete from t where a in (select a from t); end;"
       "create trigger g2 after insert on r begin select * from t; end;"
       "create table other(q); create view v3 as select q from other;"
       "insert into t values(null, 1, 2);"
       "delete from sqlite_sequence; insert into sqlite_sequence values('t', 7);");
  SAME(&p, "alter table t rename to \"New Name\"");
  SAME(&p, "alter table \"New Name\" rename to t3");
  SAME(&p, "alter table t3 rename to v");
  SAME(&p, "alter table t3 rename to i");
  SAME(&p, "alter table t3 rename to sqlite_x");
  SAME(&p, "alter table nosuch rename to x");
  SAME(&p, "alter table v rename to x");
  SAME(&p, "alter table sqlite_master rename to x");
  SAME(&p, "alter table other rename to o2");
  BOTH(&p,
       "create table q(b); create trigger gq after insert on q begin insert into nosuch values(1); "
       "end");
  SAME(&p, "alter table o2 rename to o3");
  BOTH(&p, "drop trigger gq; create trigger gq after update on q begin update q set zz = 1; end");
  SAME(&p, "alter table o2 rename to o3");
  BOTH(&p, "drop trigger gq; create trigger gq before delete on q begin select new.b; end");
  SAME(&p, "alter table o2 rename to o3");
  BOTH(&p, "drop trigger gq; create trigger gq before delete on q begin select old.b from o2; end");
  SAME(&p, "alter table o2 rename to o3");
  SAME_SCHEMA(&p);
  SAME_DUMP(&p, "SELECT * FROM sqlite_sequence");
  SAME_DUMP(&p, "SELECT * FROM v");
  INTACT(&p);
  pair_close(&p);
}

/* A statement prepared before a schema change runs against the new schema
 * (the cookie check makes the API prepare it again): the index created in
 * between is maintained. */
TEST(ddl_prepared_across_change) {
  Pair p;
  pair_open(&p, "pc.db");
  BOTH(&p, "CREATE TABLE t(a, b)");
  shale_stmt *ins = NULL;
  CHECK_OK(shale_prepare_v2(p.s, "INSERT INTO t VALUES(?, ?)", -1, &ins, NULL));
  for (int i = 0; i < 50; i++) {
    if (i == 20) BOTH(&p, "CREATE INDEX tb ON t(b); CREATE UNIQUE INDEX ta ON t(a)");
    if (i == 35) BOTH(&p, "DROP INDEX tb");
    CHECK_OK(shale_bind_int(ins, 1, i));
    CHECK_OK(shale_bind_int(ins, 2, i % 5));
    CHECK_RC(shale_step(ins), SHALE_DONE);
    CHECK_OK(shale_reset(ins));
    char sql[64];
    snprintf(sql, sizeof sql, "INSERT INTO t VALUES(%d, %d)", i, i % 5);
    char *e = NULL;
    CHECK_RC(sqlite3_exec(p.q, sql, NULL, NULL, &e), SQLITE_OK);
    sqlite3_free(e);
  }
  shale_finalize(ins);
  SAME(&p, "INSERT INTO t VALUES(3, 3)");
  SAME_SCHEMA(&p);
  SAME_DUMP(&p, "SELECT a, b FROM t INDEXED BY ta WHERE a > 10 ORDER BY a");
  INTACT(&p);
  pair_close(&p);
}

/* Random DDL sequences (tables with random constraints, indexes, views,
 * triggers, drops, ADD COLUMN, RENAME) on both engines: every statement
 * gives the same answer and the files keep the same sqlite_schema. */
static const char *pick(uint64_t *s, const char *const *a, int n) {
  return a[test_rand(s) % (uint64_t)n];
}

static void random_table(uint64_t *s, char *out, size_t cap, int k) {
  static const char *const types[] = {"",      " INTEGER", " INT",        " TEXT",
                                      " REAL", " BLOB",    " VARCHAR(5)", " NUMERIC"};
  static const char *const cons[] = {"",
                                     "",
                                     "",
                                     " UNIQUE",
                                     " NOT NULL",
                                     " PRIMARY KEY",
                                     " DEFAULT 3",
                                     " COLLATE NOCASE",
                                     " CHECK(c0 IS NOT c1)",
                                     " UNIQUE ON CONFLICT IGNORE",
                                     " PRIMARY KEY DESC"};
  /* at most one PRIMARY KEY: Shale's parser reports "more than one primary
   * key" before the compiler can say "table t already exists" */
  int ncol = 1 + (int)(test_rand(s) % 4), pk = 0;
  size_t n = (size_t)snprintf(out, cap, "CREATE TABLE %st%d(",
                              test_rand(s) % 5 ? "" : "IF NOT EXISTS ", k);
  for (int i = 0; i < ncol; i++) {
    const char *c = pick(s, cons, 11);
    if (strstr(c, "PRIMARY") && pk++) c = "";
    n += (size_t)snprintf(out + n, cap - n, "%sc%d%s%s", i ? ", " : "", i, pick(s, types, 8), c);
  }
  if (test_rand(s) % 3 == 0)
    n += (size_t)snprintf(out + n, cap - n, ", UNIQUE(c%d, c0)",
                          (int)(test_rand(s) % (uint64_t)ncol));
  if (test_rand(s) % 4 == 0 && !pk) n += (size_t)snprintf(out + n, cap - n, ", PRIMARY KEY(c0)");
  snprintf(out + n, cap - n, ")%s", test_rand(s) % 3 == 0 ? " WITHOUT ROWID" : "");
}

TEST(ddl_random_sequences) {
  uint64_t seed = test_seed() ^ 0xdd1ULL;
  int rounds = test_long() ? 2000 : 300;
  Pair p;
  pair_open(&p, "rnd.db");
  char sql[1024];
  for (int r = 0; r < rounds; r++) {
    int k = (int)(test_rand(&seed) % 6), j = (int)(test_rand(&seed) % 6);
    switch (test_rand(&seed) % 10) {
      case 0:
      case 1:
      case 2:
        random_table(&seed, sql, sizeof sql, k);
        break;
      case 3:
        snprintf(sql, sizeof sql, "CREATE %sINDEX i%d ON t%d(c0%s)%s",
                 test_rand(&seed) % 3 ? "" : "UNIQUE ", j, k, test_rand(&seed) % 2 ? " DESC" : "",
                 test_rand(&seed) % 4 ? "" : " WHERE c0 > 1");
        break;
      case 4:
        snprintf(sql, sizeof sql, "DROP TABLE %st%d", test_rand(&seed) % 2 ? "IF EXISTS " : "", k);
        break;
      case 5:
        snprintf(sql, sizeof sql, "DROP INDEX i%d", j);
        break;
      case 6:
        snprintf(sql, sizeof sql, "CREATE VIEW v%d AS SELECT * FROM t%d", j, k);
        break;
      case 7:
        snprintf(sql, sizeof sql, "%s", test_rand(&seed) % 2 ? "DROP VIEW v1" : "DROP TRIGGER g1");
        break;
      case 8:
        snprintf(sql, sizeof sql, "CREATE TRIGGER g%d AFTER INSERT ON t%d BEGIN SELECT 1; END",
                 j % 2, k);
        break;
      default:
        if (test_rand(&seed) % 2)
          snprintf(sql, sizeof sql, "ALTER TABLE t%d ADD COLUMN x%d DEFAULT %d", k, r, r);
        else
          snprintf(sql, sizeof sql, "ALTER TABLE t%d RENAME TO t%d", k, j);
        break;
    }
    if (getenv("DDL_TRACE")) fprintf(stderr, "%s\n", sql);
    if (!SAME(&p, sql)) break;
    if (r % 7 == 0) {
      snprintf(sql, sizeof sql, "INSERT INTO t%d(c0) VALUES(%d)", k, r % 13);
      if (getenv("DDL_TRACE")) fprintf(stderr, "%s\n", sql);
      SAME(&p, sql);
    }
  }
  SAME_SCHEMA(&p);
  INTACT(&p);
  pair_close(&p);
}

/* shale_stmt_readonly of DDL statements, no-ops included, is SQLite's. */
TEST(ddl_readonly_flag) {
  Pair p;
  pair_open(&p, "ro.db");
  BOTH(&p,
       "create table t(a); create index i on t(a); create view v as select 1;"
       "create trigger g after insert on t begin select 1; end");
  static const char *const q[] = {
      "create table if not exists t(b)",
      "create index if not exists i on t(a)",
      "create view if not exists v as select 2",
      "create trigger if not exists g after insert on t begin select 1; end",
      "drop table if exists nosuch",
      "drop index if exists nosuch",
      "drop view if exists nosuch",
      "drop trigger if exists nosuch",
      "reindex",
      "create table x(a)",
      "drop table t",
      "alter table t add column b",
      NULL};
  for (int i = 0; q[i]; i++) {
    shale_stmt *a = NULL;
    sqlite3_stmt *b = NULL;
    CHECK_OK(shale_prepare_v2(p.s, q[i], -1, &a, NULL));
    CHECK_RC(sqlite3_prepare_v2(p.q, q[i], -1, &b, NULL), SQLITE_OK);
    if (a && b && shale_stmt_readonly(a) != sqlite3_stmt_readonly(b))
      test_fail(__FILE__, __LINE__, "%s: readonly %d, SQLite %d", q[i], shale_stmt_readonly(a),
                sqlite3_stmt_readonly(b));
    shale_finalize(a);
    sqlite3_finalize(b);
  }
  pair_close(&p);
}
