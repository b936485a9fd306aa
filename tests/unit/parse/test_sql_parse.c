/*
 * test_sql_parse.c -- the parser: operator precedence (printed trees),
 * statement shapes, source spans, tails, and out-of-memory behaviour.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../../../src/parse/ast.h"
#include "../../test.h"

static char printed[8192];

/* Parse sql and return its printed AST (or "ERROR: msg"). */
static const char *pr(const char *sql) {
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  char *err = NULL;
  int rc = sql_parse(&a, sql, -1, &s, NULL, &err);
  if (rc) {
    snprintf(printed, sizeof printed, "ERROR: %s", err ? err : "(null)");
  } else {
    char *t = sql_ast_print(s);
    snprintf(printed, sizeof printed, "%s", t ? t : "(oom)");
    shale_free(t);
  }
  shale_free(err);
  util_arena_free(&a);
  return printed;
}

/* Printed tree of the single result expression of "SELECT <expr>". */
static const char *ex(const char *expr) {
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  const char *t = pr(sql);
  static char out[8192];
  if (!strncmp(t, "(SELECT (COLS ", 14)) {
    size_t n = strlen(t);
    snprintf(out, sizeof out, "%.*s", (int)(n - 16), t + 14);
    return out;
  }
  return t;
}

TEST(precedence) {
  static const char *const cases[][2] = {
      {"1 < 2 = 1", "(= (< 1 2) 1)"},
      {"NOT 1 = 2", "(NOT (= 1 2))"},
      {"- 2 || 3", "(|| (- 2) 3)"},
      {"1 BETWEEN 0 AND 2 AND 0", "(AND (BETWEEN 1 0 2) 0)"},
      {"1 + 2 * 3", "(+ 1 (* 2 3))"},
      {"1 - 2 - 3", "(- (- 1 2) 3)"},
      {"8 / 4 % 3 * 2", "(* (% (/ 8 4) 3) 2)"},
      {"a OR b AND c", "(OR a (AND b c))"},
      {"a AND NOT b OR c", "(OR (AND a (NOT b)) c)"},
      {"NOT NOT a", "(NOT (NOT a))"},
      {"a = b IS NOT NULL", "(IS NOT (= a b) NULL)"},
      {"a IS DISTINCT FROM b", "(IS NOT a b)"},
      {"a IS NOT DISTINCT FROM b", "(IS a b)"},
      {"a NOT NULL = 0", "(= (NOTNULL a) 0)"},
      {"a ISNULL OR b NOTNULL", "(OR (ISNULL a) (NOTNULL b))"},
      {"1 & 2 < 3", "(< (& 1 2) 3)"},
      {"1 << 2 + 3", "(<< 1 (+ 2 3))"},
      {"1 | 2 & 3", "(& (| 1 2) 3)"},
      {"a || b -> c", "(-> (|| a b) c)"},
      {"a ->> '$.x' + 1", "(+ (->> a '$.x') 1)"},
      {"-a COLLATE nocase", "(COLLATE (- a) nocase)"},
      {"a || b COLLATE x", "(|| a (COLLATE b x))"},
      {"a COLLATE x COLLATE y", "(COLLATE (COLLATE a x) y)"},
      {"~a + b", "(+ (~ a) b)"},
      {"- - 1", "(- (- 1))"},
      {"2 * -3", "(* 2 (- 3))"},
      {"1 IS - 1", "(IS 1 (- 1))"},
      {"1 = 1 IS 1", "(IS (= 1 1) 1)"},
      {"a = 1 < 2", "(= a (< 1 2))"},
      {"a <> b != c == d", "(= (<> (<> a b) c) d)"},
      {"a LIKE b || c ESCAPE d", "(LIKE a (|| b c) (ESCAPE d))"},
      {"a NOT GLOB b", "(NOT GLOB a b)"},
      {"a REGEXP b AND c MATCH d", "(AND (REGEXP a b) (MATCH c d))"},
      {"'a' LIKE 'A' = 1", "(= (LIKE 'a' 'A') 1)"},
      {"a NOT IN (1, 2) AND b", "(AND (NOT IN a (LIST 1 2)) b)"},
      {"a IN ()", "(IN a (LIST))"},
      {"a IN (SELECT 1)", "(IN a (SELECT (COLS 1)))"},
      {"x IN t", "(IN x (TABLE t))"},
      {"x IN s.f(1, 2)", "(IN x (TABLE s.f 1 2))"},
      {"a BETWEEN b + 1 AND c * 2 = 1", "(= (BETWEEN a (+ b 1) (* c 2)) 1)"},
      {"a NOT BETWEEN 1 AND 2", "(NOT BETWEEN a 1 2)"},
      {"NOT a BETWEEN 1 AND 2", "(NOT (BETWEEN a 1 2))"},
      {"1 BETWEEN 0 = 0 AND 2", "(BETWEEN 1 (= 0 0) 2)"},
      {"2 BETWEEN 1 AND 3 BETWEEN 1 AND 1", "(BETWEEN (BETWEEN 2 1 3) 1 1)"},
      {"(1, 2) = (3, 4)", "(= (ROW 1 2) (ROW 3 4))"},
      {"(1 + 2) * 3", "(* (+ 1 2) 3)"},
      {"EXISTS (SELECT 1)", "(EXISTS (SELECT (COLS 1)))"},
      {"NOT EXISTS (SELECT 1) = 0", "(NOT (= (EXISTS (SELECT (COLS 1))) 0))"},
      {"(SELECT 1) + 1", "(+ (SUBQUERY (SELECT (COLS 1))) 1)"},
      {"CASE WHEN a THEN b WHEN c THEN d ELSE e END", "(CASE (WHEN a b) (WHEN c d) (ELSE e))"},
      {"CASE x WHEN 1 THEN 2 END", "(CASE x (WHEN 1 2))"},
      {"CAST(a AS VARCHAR(10))", "(CAST a VARCHAR(10))"},
      {"CAST(a + 1 AS UNSIGNED BIG INT)", "(CAST (+ a 1) UNSIGNED BIG INT)"},
      {"count(*)", "(CALL count *)"},
      {"count(DISTINCT a)", "(CALL count DISTINCT a)"},
      {"f()", "(CALL f)"},
      {"replace(a, 'x', 'y')", "(CALL replace a 'x' 'y')"},
      {"t.a + s.t.b", "(+ t.a s.t.b)"},
      {"\"x y\" + [z] + `w`", "(+ (+ x y z) w)"},
      {"'it''s'", "'it''s'"},
      {"x'0aff' || ?1 || :v || @w || $x || ?", "(|| (|| (|| (|| (|| x'0aff' ?1) :v) @w) $x) ?)"},
      {"CURRENT_TIME", "CURRENT_TIME"},
      {"NULL IS NULL", "(IS NULL NULL)"},
      {"key + action + first + replace + temp + row + value",
       "(+ (+ (+ (+ (+ (+ key action) first) replace) temp) row) value)"},
      {"left + right", "(+ left right)"},
      {"sum(a) FILTER (WHERE a > 0) OVER w", "(CALL sum a (FILTER (> a 0)) (OVER (WINDOW w)))"},
      {"rank() OVER (PARTITION BY a ORDER BY b DESC ROWS UNBOUNDED PRECEDING)",
       "(CALL rank (OVER (WINDOW (PARTITION a) (ORDER (b DESC)) (ROWS UNBOUNDED PRECEDING CURRENT "
       "ROW))))"},
      {"max(a) OVER (w GROUPS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING EXCLUDE NO OTHERS)",
       "(CALL max a (OVER (WINDOW (BASE w) (GROUPS 1 FOLLOWING UNBOUNDED FOLLOWING EXCLUDE NO "
       "OTHERS))))"},
      {"RAISE(IGNORE)", "(RAISE IGNORE)"},
      {"RAISE(FAIL, 'msg')", "(RAISE FAIL 'msg')"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = ex(cases[i][0]);
    if (strcmp(got, cases[i][1]))
      test_fail(__FILE__, __LINE__, "%s\n      got:      %s\n      expected: %s", cases[i][0], got,
                cases[i][1]);
  }
}

TEST(statements_print) {
  static const char *const cases[][2] = {
      {"SELECT a AS x, t.* FROM t AS u LEFT JOIN v USING (id) WHERE a GROUP BY b HAVING c "
       "ORDER BY a DESC NULLS FIRST LIMIT 1, 2",
       "(QUERY (SELECT (COLS (AS x a) t.*) (FROM (t AS u) (LEFT JOIN) (v (USING (id)))) "
       "(WHERE a) (GROUP b) (HAVING c)) (ORDER (a DESC NULLS FIRST)) (LIMIT 2) (OFFSET 1))"},
      {"SELECT 1 UNION ALL SELECT 2 EXCEPT VALUES (3), (4)",
       "(EXCEPT (UNION ALL (SELECT (COLS 1)) (SELECT (COLS 2))) (VALUES (ROW 3) (ROW 4)))"},
      {"VALUES (1) UNION SELECT 2 ORDER BY 1",
       "(QUERY (UNION (VALUES (ROW 1)) (SELECT (COLS 2))) (ORDER 1))"},
      {"WITH RECURSIVE c(x) AS NOT MATERIALIZED (SELECT 1) SELECT x FROM c",
       "(QUERY (WITH RECURSIVE (c (x) NOT MATERIALIZED (SELECT (COLS 1)))) (SELECT (COLS x) (FROM "
       "(c))))"},
      {"SELECT * FROM a NATURAL FULL OUTER JOIN b CROSS JOIN f(1) x, (SELECT 1) s, t INDEXED BY i",
       "(SELECT (COLS *) (FROM (a) (NATURAL FULL JOIN) (b) (CROSS JOIN) (f (ARGS 1) AS x) (,) "
       "((SELECT (COLS 1)) AS s) (,) (t INDEXED BY i)))"},
      {"SELECT * FROM (a JOIN b ON 1) AS j",
       "(SELECT (COLS *) (FROM (NEST (a) (INNER JOIN) (b (ON 1)) AS j)))"},
      {"SELECT 1 'str', 2 \"q\", 3 AS [b]", "(SELECT (COLS (AS str 1) (AS q 2) (AS b 3)))"},
      {"INSERT OR IGNORE INTO main.t AS x (a, b) VALUES (1, 2) ON CONFLICT (a) DO NOTHING "
       "RETURNING a",
       "(INSERT (OR IGNORE) main.t (AS x) (a b) (VALUES (ROW 1 2)) (ON CONFLICT (TARGET a) "
       "NOTHING) "
       "(RETURNING a))"},
      {"REPLACE INTO t DEFAULT VALUES", "(INSERT (OR REPLACE) t DEFAULT VALUES)"},
      {"UPDATE OR FAIL t AS x INDEXED BY i SET a = 1, (b, c) = (2, 3) FROM u WHERE d "
       "RETURNING * ORDER BY a LIMIT 5",
       "(UPDATE (OR FAIL) t (AS x) (INDEXED BY i) (SET (a 1) ((b c) (ROW 2 3))) (FROM (u)) "
       "(WHERE d) (RETURNING *) (ORDER a) (LIMIT 5))"},
      {"DELETE FROM t NOT INDEXED WHERE a RETURNING a + 1 AS z",
       "(DELETE t (NOT INDEXED) (WHERE a) (RETURNING (AS z (+ a 1))))"},
      {"CREATE TEMP TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY ASC ON CONFLICT FAIL "
       "AUTOINCREMENT, b TEXT CONSTRAINT nn NOT NULL DEFAULT -1 COLLATE nocase, c AS (a*2) "
       "STORED, CONSTRAINT u UNIQUE (b, c) CHECK (a > 0)) WITHOUT ROWID",
       "(CREATE TABLE TEMP IF NOT EXISTS t (COLUMN a (TYPE INTEGER) (PRIMARY KEY ASC "
       "(ON CONFLICT FAIL) AUTOINCREMENT)) (COLUMN b (TYPE TEXT) (NOT NULL (NAME nn)) "
       "(DEFAULT (- 1)) (COLLATE nocase)) (COLUMN c (GENERATED (* a 2) STORED)) "
       "(UNIQUE (NAME u) b c) (CHECK (> a 0)) WITHOUT ROWID)"},
      {"CREATE TABLE t(a INT GENERATED ALWAYS AS (1), b REFERENCES p(x) ON UPDATE SET DEFAULT "
       "MATCH full NOT DEFERRABLE)",
       "(CREATE TABLE t (COLUMN a (TYPE INT) (GENERATED 1)) (COLUMN b (REFERENCES p (x) "
       "(ON UPDATE SET DEFAULT) (MATCH full) (DEFERRABLE 3))))"},
      {"CREATE TABLE t AS SELECT 1", "(CREATE TABLE t (AS (SELECT (COLS 1))))"},
      {"CREATE UNIQUE INDEX IF NOT EXISTS s.i ON t(a COLLATE nocase DESC, lower(b)) WHERE a",
       "(CREATE UNIQUE INDEX IF NOT EXISTS s.i (ON t ((COLLATE a nocase) DESC) (CALL lower b)) "
       "(WHERE a))"},
      {"CREATE VIEW v(a) AS SELECT 1", "(CREATE VIEW v (a) (SELECT (COLS 1)))"},
      {"CREATE TRIGGER r INSTEAD OF UPDATE OF a ON v FOR EACH ROW WHEN 1 BEGIN "
       "DELETE FROM t; SELECT RAISE(ABORT, 'x'); END",
       "(CREATE TRIGGER r INSTEAD OF UPDATE (OF (a)) (ON v) FOR EACH ROW (WHEN 1) (BEGIN "
       "(DELETE t) (SELECT (COLS (RAISE ABORT 'x')))))"},
      {"CREATE VIRTUAL TABLE x USING m(a b, (c, d))",
       "(CREATE VIRTUAL TABLE x (USING m [31+3] [36+6]))"},
      {"DROP TRIGGER IF EXISTS s.r", "(DROP TRIGGER IF EXISTS s.r)"},
      {"ALTER TABLE t RENAME COLUMN a TO b", "(ALTER TABLE t (RENAME COLUMN a TO b))"},
      {"ALTER TABLE t ADD c INT NOT NULL DEFAULT 0",
       "(ALTER TABLE t (ADD (COLUMN c (TYPE INT) (NOT NULL) (DEFAULT 0))))"},
      {"ALTER TABLE t DROP COLUMN c", "(ALTER TABLE t (DROP COLUMN c))"},
      {"BEGIN EXCLUSIVE", "(BEGIN EXCLUSIVE)"},
      {"END TRANSACTION", "(COMMIT)"},
      {"ROLLBACK TRANSACTION TO SAVEPOINT s", "(ROLLBACK TO s)"},
      {"RELEASE SAVEPOINT s", "(RELEASE s)"},
      {"PRAGMA s.journal_mode = WAL", "(PRAGMA s.journal_mode (= WAL))"},
      {"PRAGMA cache_size(-100)", "(PRAGMA cache_size (CALL -100))"},
      {"ATTACH 'f.db' AS aux KEY 'k'", "(ATTACH 'f.db' aux (KEY 'k'))"},
      {"DETACH DATABASE aux", "(DETACH aux)"},
      {"VACUUM main INTO 'x.db'", "(VACUUM main (INTO 'x.db'))"},
      {"ANALYZE s.t", "(ANALYZE s.t)"},
      {"REINDEX", "(REINDEX)"},
      {"EXPLAIN QUERY PLAN SELECT 1", "(EXPLAIN QUERY PLAN (SELECT (COLS 1)))"},
      {"CREATE TABLE key(action, first, replace, temp, row, value)",
       "(CREATE TABLE key (COLUMN action) (COLUMN first) (COLUMN replace) (COLUMN temp) "
       "(COLUMN row) (COLUMN value))"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = pr(cases[i][0]);
    if (strcmp(got, cases[i][1]))
      test_fail(__FILE__, __LINE__, "%s\n      got:      %s\n      expected: %s", cases[i][0], got,
                cases[i][1]);
  }
}

TEST(spans_and_tail) {
  const char *sql = "  SELECT a+1, b AS x, ( c ), count(*)  FROM t; SELECT 2";
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  const char *tail = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&a, sql, -1, &s, &tail, &err));
  CHECK(s && s->kind == SQL_STMT_SELECT);
  CHECK_STR(tail, " SELECT 2");
  CHECK_EQ(s->span.start, 2);
  CHECK_EQ(s->span.len, (int)strlen("SELECT a+1, b AS x, ( c ), count(*)  FROM t"));
  SqlExprList *cols = s->u.select->cols;
  CHECK_EQ(cols->n, 4);
  const char *want[] = {"a+1", "b", "( c )", "count(*)"};
  for (int i = 0; i < 4 && i < cols->n; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", cols->a[i].span.len, sql + cols->a[i].span.start);
    CHECK_STR(buf, want[i]);
  }
  CHECK_STR(cols->a[1].name, "x");
  util_arena_free(&a);

  /* nbytes limits the text; an embedded NUL ends it too */
  util_arena_init(&a, 0);
  CHECK_OK(sql_parse(&a, "SELECT 1; garbage", 8, &s, &tail, &err));
  CHECK(s != NULL);
  CHECK_RC(sql_parse(&a, "SELECT 1 +", 10, &s, &tail, &err), SHALE_ERROR);
  CHECK_STR(err, "incomplete input");
  shale_free(err);
  CHECK_OK(sql_parse(&a, "SELECT 1\0 garbage", 17, &s, &tail, &err));
  /* empty statements */
  CHECK_OK(sql_parse(&a, " ;; -- c\n", -1, &s, &tail, &err));
  CHECK(s == NULL);
  CHECK_OK(sql_parse(&a, ";SELECT 3;", -1, &s, &tail, &err));
  CHECK(s != NULL && *tail == 0);
  /* CREATE text span, for sqlite_schema */
  const char *ct = "create table t(a, b) ; ";
  CHECK_OK(sql_parse(&a, ct, -1, &s, &tail, &err));
  CHECK_EQ(s->span.len, (int)strlen("create table t(a, b)"));
  util_arena_free(&a);
}

TEST(errors_basic) {
  CHECK_STR(pr("selec 1"), "ERROR: near \"selec\": syntax error");
  CHECK_STR(pr("SELECT * FROM t LIMIT 1 OFFSET"), "ERROR: incomplete input");
  CHECK_STR(pr("SELECT X'1'"), "ERROR: unrecognized token: \"X'1'\"");
  CHECK_STR(pr("SELECT 1 ORDER BY 1 UNION SELECT 2"),
            "ERROR: ORDER BY clause should come after UNION not before");
  char deep[4000];
  int n = 0;
  n += sprintf(deep + n, "SELECT ");
  for (int i = 0; i < 1100; i++) n += sprintf(deep + n, "1+");
  sprintf(deep + n, "1");
  CHECK_STR(pr(deep), "ERROR: Expression tree is too large (maximum depth 1000)");
  n = sprintf(deep, "SELECT ");
  for (int i = 0; i < 200; i++) n += sprintf(deep + n, "(");
  n += sprintf(deep + n, "1");
  for (int i = 0; i < 200; i++) n += sprintf(deep + n, ")");
  CHECK_STR(pr(deep), "ERROR: parser stack overflow");
  /* a compound of 501 terms */
  static char big[20000];
  n = sprintf(big, "SELECT 1");
  for (int i = 0; i < 500; i++) n += sprintf(big + n, " UNION SELECT 1");
  CHECK_STR(pr(big), "ERROR: too many terms in compound SELECT");
}

/* Every allocation failure gives SHALE_NOMEM (or success) and leaks nothing. */
TEST(oom_sweep) {
  static const char *const stmts[] = {
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 10) SELECT x, "
      "sum(x) OVER (ORDER BY x ROWS 2 PRECEDING), CASE WHEN x IN (1,2,3,4,5,6) THEN 'a' END "
      "FROM c JOIN (SELECT 1 AS y) ON x = y WHERE x BETWEEN 1 AND 9 GROUP BY x ORDER BY 1",
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 'x' CHECK (length(b) > 0), "
      "c REFERENCES u(id) ON DELETE CASCADE, d, e, f, g, h, UNIQUE (b, c), FOREIGN KEY (d) "
      "REFERENCES v)",
      "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO u VALUES (new.a, 1, 2, 3, 4, 5); "
      "UPDATE v SET (a, b) = (1, 2) WHERE c; DELETE FROM w; END",
      "INSERT INTO t (a, b, c, d, e) VALUES (1,2,3,4,5),(6,7,8,9,10) ON CONFLICT (a) DO UPDATE "
      "SET b = excluded.b RETURNING *",
      "SELECT 1 +", /* error path: the message allocation may fail too */
  };
  for (size_t k = 0; k < sizeof stmts / sizeof stmts[0]; k++) {
    for (int persist = 0; persist < 2; persist++) {
      for (long n = 1; n < 1000; n++) {
        long before = util_alloc_outstanding();
        UtilArena a;
        util_arena_init(&a, 128); /* small chunks: many allocation points */
        SqlStmt *s = NULL;
        char *err = NULL;
        util_fault_alloc(n, persist);
        int rc = sql_parse(&a, stmts[k], -1, &s, NULL, &err);
        long hits = util_fault_alloc_hits();
        util_fault_alloc(0, 0);
        int expect_err = k == 4;
        if (hits == 0) {
          CHECK_RC(rc, expect_err ? SHALE_ERROR : SHALE_OK);
          shale_free(err);
          util_arena_free(&a);
          break;
        }
        if (rc != SHALE_NOMEM && !(rc == SHALE_OK && !expect_err) &&
            !(rc == SHALE_ERROR && expect_err))
          test_fail(__FILE__, __LINE__, "stmt %zu n=%ld: rc=%d", k, n, rc);
        if (rc == SHALE_OK) {
          char *t = sql_ast_print(s); /* printer handles OOM too (not armed here) */
          CHECK(t != NULL);
          shale_free(t);
        }
        shale_free(err);
        util_arena_free(&a);
        CHECK_EQ(util_alloc_outstanding(), before);
      }
    }
  }
}

/* sqlite_schema.sql is "CREATE <KIND> " + the text from the object name to
 * the end of the statement: the spans give exactly what the reference stores. */
TEST(schema_text_from_spans) {
  static const char *const stmts[] = {
      "create table if not exists main . t2(y)  ",
      "create unique index if not exists main.i on t2(y) where y>0",
      "create view if not exists v ( a ) as select 1 ",
      "create trigger if not exists tr after insert on t2 begin select 1; end",
      "CREATE TABLE \"T 1\"  ( x int, [y z] text )",
      "create index \"q\" on t2(y desc)",
  };
  static const char *const kinds[] = {"TABLE", "UNIQUE INDEX", "VIEW", "TRIGGER", "TABLE", "INDEX"};
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
    CHECK_OK(sqlite3_exec(db, stmts[i], NULL, NULL, NULL));
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    char *err = NULL;
    CHECK_OK(sql_parse(&a, stmts[i], -1, &s, NULL, &err));
    const SqlQualName *q = s->kind == SQL_STMT_CREATE_TABLE   ? &s->u.create_table.name
                           : s->kind == SQL_STMT_CREATE_INDEX ? &s->u.create_index.name
                           : s->kind == SQL_STMT_CREATE_VIEW  ? &s->u.create_view.name
                                                              : &s->u.create_trigger.name;
    char mine[512];
    snprintf(mine, sizeof mine, "CREATE %s %.*s", kinds[i],
             s->span.start + s->span.len - q->name_start, stmts[i] + q->name_start);
    sqlite3_stmt *st;
    CHECK_OK(
        sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_schema WHERE name = ?1", -1, &st, NULL));
    sqlite3_bind_text(st, 1, q->name, -1, SQLITE_STATIC);
    CHECK_RC(sqlite3_step(st), SQLITE_ROW);
    CHECK_STR(mine, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    util_arena_free(&a);
  }
  sqlite3_close(db);
}

/* Column types as SQLite records them (PRAGMA table_info). */
TEST(declared_types_match_reference) {
  static const char *const types[] = {"int",
                                      "Integer",
                                      "text(5)",
                                      "'any'",
                                      "\"weird\"x",
                                      "blob",
                                      "real",
                                      "\"int\"(3)",
                                      "varchar  ( 10 )",
                                      "\"double\"   precision",
                                      "[int]",
                                      "`Text`",
                                      "unsigned    big int",
                                      "int generated always",
                                      "DOUBLE",
                                      "'it''s'",
                                      "INT KEY",
                                      "anything(1, -2)",
                                      "\"a\"\"b\""};
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE t%zu(x %s)", i, types[i]);
    CHECK_OK(sqlite3_exec(db, sql, NULL, NULL, NULL));
    char q[64];
    snprintf(q, sizeof q, "SELECT type FROM pragma_table_info('t%zu')", i);
    sqlite3_stmt *st;
    CHECK_OK(sqlite3_prepare_v2(db, q, -1, &st, NULL));
    CHECK_RC(sqlite3_step(st), SQLITE_ROW);
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    char *err = NULL;
    CHECK_OK(sql_parse(&a, sql, -1, &s, NULL, &err));
    if (s) CHECK_STR(s->u.create_table.cols[0].decl_type, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    util_arena_free(&a);
  }
  sqlite3_close(db);
}

/* ---- walker ---- */
typedef struct Counts {
  int exprs, columns, selects, stop_at;
} Counts;

static int count_expr(SqlWalker *w, SqlExpr *e) {
  Counts *c = w->arg;
  c->exprs++;
  if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) c->columns++;
  if (c->stop_at && c->exprs == c->stop_at) return SQL_WALK_ABORT;
  if (e->op == SQL_E_CASE) return SQL_WALK_PRUNE;
  return SQL_WALK_CONTINUE;
}
static int count_select(SqlWalker *w, SqlSelect *s) {
  ((Counts *)w->arg)->selects++;
  return SQL_WALK_CONTINUE;
}

TEST(walker) {
  const char *sql =
      "WITH c AS (SELECT x FROM u) SELECT a + 1, CASE WHEN b THEN c END, (SELECT max(y) FROM v "
      "WHERE v.z = t.a) FROM t JOIN (SELECT q FROM w) ON t.a = q WHERE a IN (SELECT 1) "
      "AND sum(d) OVER (PARTITION BY e ORDER BY f ROWS g PRECEDING) > 0 GROUP BY h "
      "HAVING i UNION SELECT m ORDER BY j LIMIT k OFFSET l";
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&a, sql, -1, &s, NULL, &err));
  if (!s) {
    test_fail(__FILE__, __LINE__, "%s", err);
    shale_free(err);
    util_arena_free(&a);
    return;
  }
  Counts c = {0, 0, 0, 0};
  SqlWalker w = {count_expr, count_select, &c};
  CHECK_EQ(sql_walk_select(&w, s->u.select), SQL_WALK_CONTINUE);
  /* columns: x, a, (b c pruned), y, v.z, t.a, q, t.a, q, a, d, e, f, g, h, i, j, k, l, m */
  CHECK_EQ(c.columns, 19);
  CHECK_EQ(c.selects, 5); /* the compound, CTE, scalar subquery, FROM subquery, IN subquery */
  Counts c2 = {0, 0, 0, 0};
  SqlWalker w2 = {count_expr, NULL, &c2}; /* no subqueries */
  CHECK_EQ(sql_walk_select(&w2, s->u.select), SQL_WALK_CONTINUE);
  CHECK_EQ(c2.selects, 0);
  CHECK_EQ(c2.columns, 14);
  Counts c3 = {0, 0, 0, 3};
  SqlWalker w3 = {count_expr, count_select, &c3};
  CHECK_EQ(sql_walk_select(&w3, s->u.select), SQL_WALK_ABORT);
  CHECK_EQ(c3.exprs, 3);
  util_arena_free(&a);
}

TEST(primary_key_checks) {
  CHECK_STR(pr("CREATE TABLE t(a INTEGER PRIMARY KEY DESC AUTOINCREMENT)"),
            "ERROR: AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY");
  CHECK_STR(pr("CREATE TABLE t(a INT PRIMARY KEY AUTOINCREMENT)"),
            "ERROR: AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY");
  CHECK_STR(pr("CREATE TABLE \"x y\"(a PRIMARY KEY, b PRIMARY KEY)"),
            "ERROR: table \"x y\" has more than one primary key");
  CHECK_STR(pr("CREATE TABLE t(a AS (1), PRIMARY KEY (a))"),
            "ERROR: generated columns cannot be part of the PRIMARY KEY");
  CHECK(strncmp(pr("CREATE TABLE t(a integer, PRIMARY KEY (A DESC AUTOINCREMENT))"), "ERROR", 5));
}

/* Parameters are numbered as SQLite numbers them (sqlite3_bind_parameter_*). */
TEST(parameter_numbers) {
  static const char *const stmts[] = {
      "SELECT ?, ?, ?",
      "SELECT ?2, :a, ?, @b, :a, $c, ?3, ?1",
      "SELECT :a, ?1, :a, ?5, ?",
      "SELECT $x::y(z), $x::y(z), @x, :x, #x",
      "SELECT ?10, ?",
      "SELECT 1",
  };
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  CHECK_OK(sqlite3_exec(db, "CREATE TABLE t(a)", NULL, NULL, NULL));
  for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
    sqlite3_stmt *st;
    CHECK_OK(sqlite3_prepare_v2(db, stmts[i], -1, &st, NULL));
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    char *err = NULL;
    CHECK_OK(sql_parse(&a, stmts[i], -1, &s, NULL, &err));
    if (s) {
      CHECK_EQ(s->nvar, sqlite3_bind_parameter_count(st));
      for (int k = 1; k <= s->nvar; k++) {
        const char *on = NULL, *rn = sqlite3_bind_parameter_name(st, k);
        for (int j = 0; j < s->nvar_names; j++)
          if (s->var_names[j].num == k) on = s->var_names[j].name;
        if ((on == NULL) != (rn == NULL) || (on && strcmp(on, rn)))
          test_fail(__FILE__, __LINE__, "%s: parameter %d: %s vs %s", stmts[i], k, on ? on : "-",
                    rn ? rn : "-");
      }
    }
    sqlite3_finalize(st);
    util_arena_free(&a);
  }
  sqlite3_close(db);
  /* the expression carries its number */
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&a, "SELECT :x, ?, :x", -1, &s, NULL, &err));
  CHECK_EQ(s->u.select->cols->a[0].expr->ivar, 1);
  CHECK_EQ(s->u.select->cols->a[1].expr->ivar, 2);
  CHECK_EQ(s->u.select->cols->a[2].expr->ivar, 1);
  util_arena_free(&a);
  CHECK_STR(pr("CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT ?; END"),
            "ERROR: trigger cannot use variables");
  CHECK_STR(pr("CREATE VIEW v AS SELECT :a"), "ERROR: parameters are not allowed in views");
}
