/*
 * test_pragma_tvf.c -- table-valued pragmas (pragma_NAME(...) in FROM) and
 * result column names, through the native API next to the reference SQLite:
 * bound parameters as arguments, re-running a statement with new bindings,
 * EXPLAIN QUERY PLAN rows, errors, and the column names of expressions
 * followed by comments (names are not checked by the tests/sql scripts),
 * json_each/json_tree and pragma_NAME as the eponymous virtual tables they
 * are, and the memory a recursive CTE feeding an INSERT needs.
 *
 * Invariants:
 *  1. Each case builds the same schema on both engines first.
 */
#include "../../../src/util/util.h"
#include "../../test.h"
#include "test_api_util.h"

static const char *setup_sql =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 'x', c);"
    "CREATE TABLE u(k, v REFERENCES t(a));"
    "CREATE INDEX ub ON u(v, k);"
    "CREATE VIEW w AS SELECT a, b || c FROM t;";

/* Run sql with text parameter ?1 = p1 on both engines, rendered alike
 * (only column `only` when it is >= 0). */
static char *sh_bound(shale *db, const char *sql, const char *p1, int only) {
  TBuf b = {0};
  tb_add(&b, "%s", "");
  shale_stmt *st = NULL;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    tb_add(&b, "error: %s", shale_errmsg(db));
    return b.z;
  }
  if (p1) shale_bind_text(st, 1, p1, -1, SHALE_TRANSIENT);
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++)
      if (only < 0 || i == only)
        tb_add(&b, "%s%s", i ? "|" : "", (const char *)shale_column_text(st, i));
    tb_add(&b, "\n");
  }
  if (rc != SHALE_DONE) tb_add(&b, "error: %s", shale_errmsg(db));
  shale_finalize(st);
  return b.z;
}

static char *sq_bound(sqlite3 *db, const char *sql, const char *p1, int only) {
  TBuf b = {0};
  tb_add(&b, "%s", "");
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    tb_add(&b, "error: %s", sqlite3_errmsg(db));
    return b.z;
  }
  if (p1) sqlite3_bind_text(st, 1, p1, -1, SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++)
      if (only < 0 || i == only)
        tb_add(&b, "%s%s", i ? "|" : "", (const char *)sqlite3_column_text(st, i));
    tb_add(&b, "\n");
  }
  if (rc != SQLITE_DONE) tb_add(&b, "error: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return b.z;
}

typedef struct Pair {
  shale *db;
  sqlite3 *sq;
} Pair;

static Pair pair_open(void) {
  Pair p = {NULL, NULL};
  CHECK_OK(shale_open(":memory:", &p.db));
  CHECK_EQ(sqlite3_open(":memory:", &p.sq), SQLITE_OK);
  SH_EXEC(p.db, setup_sql);
  sqlite3_exec(p.sq, setup_sql, NULL, NULL, NULL);
  return p;
}

static void pair_close(Pair *p) {
  CHECK_OK(shale_close(p->db));
  sqlite3_close(p->sq);
}

#define CHECK_BOUND_COL(p, sql, p1, only)                                            \
  do {                                                                               \
    char *a_ = sh_bound((p).db, (sql), (p1), (only));                                \
    char *b_ = sq_bound((p).sq, (sql), (p1), (only));                                \
    if (strcmp(a_, b_) != 0)                                                         \
      test_fail(__FILE__, __LINE__, "%s [%s]\n--- shale:\n%s--- sqlite:\n%s", (sql), \
                (p1) ? (p1) : "NULL", a_, b_);                                       \
    free(a_);                                                                        \
    free(b_);                                                                        \
  } while (0)
#define CHECK_BOUND(p, sql, p1) CHECK_BOUND_COL(p, sql, p1, -1)

TEST(pragma_tvf_bound_arguments) {
  Pair p = pair_open();
  static const char *const args[] = {"t", "u", "w", "nosuch", NULL, "ub"};
  static const char *const q[] = {
      "SELECT cid, name, type, \"notnull\", dflt_value, pk, arg FROM pragma_table_info(?1)",
      "SELECT * FROM pragma_table_xinfo(?1, 'main')",
      "SELECT name FROM pragma_table_info WHERE arg = ?1",
      "SELECT * FROM pragma_index_list(?1)",
      "SELECT * FROM pragma_index_xinfo(?1)",
      "SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1)",
      "SELECT * FROM pragma_table_list(?1) ORDER BY 2",
      "SELECT count(*) FROM t, pragma_table_info(?1)",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
    for (size_t k = 0; k < sizeof args / sizeof args[0]; k++) CHECK_BOUND(p, q[i], args[k]);
  pair_close(&p);
}

TEST(pragma_tvf_rebind_and_reset) {
  /* one statement stepped with several bindings: the rows follow them */
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  SH_EXEC(db, setup_sql);
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?)", -1, &st, NULL));
  static const struct {
    const char *name;
    int n;
  } want[] = {{"t", 3}, {"u", 2}, {"w", 2}, {"x", 0}, {"t", 3}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CHECK_OK(shale_bind_text(st, 1, want[i].name, -1, SHALE_STATIC));
    CHECK_EQ(shale_step(st), SHALE_ROW);
    CHECK_EQ(shale_column_int(st, 0), want[i].n);
    CHECK_OK(shale_reset(st));
  }
  CHECK_OK(shale_finalize(st));
  CHECK_OK(shale_close(db));
}

TEST(pragma_tvf_plans_and_errors) {
  Pair p = pair_open();
  static const char *const q[] = {
      "SELECT * FROM pragma_table_info('t', 'main', 1)",
      "SELECT * FROM pragma_function_list(1)",
      "SELECT * FROM pragma_table_info('t', 'aux')",
      "SELECT * FROM pragma_journal_mode('x''y')",
      "SELECT * FROM pragma_nosuch",
      "SELECT * FROM pragma_nosuch('t')",
      "SELECT cid, name FROM pragma_table_info('t') AS x",
      "SELECT x.* FROM pragma_index_list('u') AS x",
      "PRAGMA database_list = 1",
      "PRAGMA database_list",
      "PRAGMA main.database_list",
      "PRAGMA aux.nosuch",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) CHECK_SAME(p.db, p.sq, q[i]);
  /* plans: the detail column (ids are addresses of SQLite's opcodes) */
  static const char *const plans[] = {
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info('t')",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_compile_options",
      "EXPLAIN QUERY PLAN SELECT * FROM t, pragma_table_info(t.b) AS x",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_user_version",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info AS y WHERE arg = 'u'",
  };
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) CHECK_BOUND_COL(p, plans[i], NULL, 3);
  pair_close(&p);
}

/* json_each, json_tree and pragma_NAME are eponymous virtual tables on the
 * one mechanism (src/vtab/vtab_json.c, src/api/api_pragma_vtab.c): answers,
 * rowids, hidden columns written as arguments or as WHERE equalities,
 * correlated arguments (usable only after the item they read), schema
 * arguments, module_list listing a pragma's module once it was used,
 * PRAGMA table_info/table_xinfo of the eponymous tables, and the plans
 * ("VIRTUAL TABLE INDEX n:"). */
TEST(builtin_vtabs_as_sqlite) {
  Pair p = pair_open();
  static const char *const setup =
      "CREATE TABLE j(id INTEGER PRIMARY KEY, doc);"
      "INSERT INTO j VALUES(1, '[1,2]'), (2, "
      "'{\"a\":[3,{\"b\":4}]}'), (3, NULL);";
  SH_EXEC(p.db, setup);
  sqlite3_exec(p.sq, setup, NULL, NULL, NULL);
  static const char *const q[] = {
      "SELECT rowid, key, value FROM json_each('[10,20,30]')",
      "SELECT rowid, fullkey, id, parent FROM json_tree('{\"a\":[1,[2]]}')",
      "SELECT key, json, root FROM json_each WHERE json = '[5,6]'",
      "SELECT key FROM json_each WHERE json = '{\"x\":{\"y\":1}}' AND root = '$.x'",
      "SELECT key FROM json_each WHERE root = '$'",
      "SELECT j.id, e.key, e.value FROM j, json_each(j.doc) AS e ORDER BY 1, 2",
      "SELECT j.id, e.fullkey FROM j, json_tree(j.doc, '$.a') AS e ORDER BY 1, 2",
      "SELECT j.id, e.key FROM j, json_each AS e WHERE e.json = j.doc ORDER BY 1, 2",
      "SELECT j.id, e.key FROM json_each AS e, j WHERE e.json = j.doc ORDER BY 1, 2",
      "SELECT j.id, (SELECT count(*) FROM json_tree(j.doc)) FROM j",
      "SELECT j.id FROM j WHERE 2 IN (SELECT value FROM json_each(j.doc))",
      "SELECT value FROM json_each('[3,1,2]') ORDER BY value DESC",
      "SELECT json_array(value), json_type(value) FROM json_each('[[1],{\"k\":[]},\"s\"]')",
      "SELECT * FROM json_each('[1,2]', '$[') ",
      "SELECT * FROM json_each('{bad')",
      "SELECT * FROM json_each('[1]', '$', 'x')",
      "SELECT * FROM main.json_each('[7]')",
      "SELECT * FROM temp.json_each('[7]')",
      "SELECT rowid, name FROM pragma_table_info('t')",
      "SELECT name, arg, schema FROM pragma_table_info('t', 'main')",
      "SELECT name, arg, schema FROM pragma_table_info WHERE arg = 'u' AND schema = 'main'",
      "SELECT name FROM pragma_table_info WHERE schema = 'main'",
      "SELECT *, schema FROM pragma_page_count",
      "SELECT *, schema FROM pragma_page_count('main')",
      "SELECT *, schema FROM pragma_page_count('nosuch')",
      "SELECT * FROM pragma_user_version",
      "SELECT name, seq FROM pragma_index_list('u')",
      "SELECT m.name, x.name FROM sqlite_master AS m, pragma_index_list(m.name) AS x ORDER BY 1",
      "SELECT m.name, x.cid, x.name FROM sqlite_master AS m JOIN pragma_table_info AS x"
      " ON x.arg = m.name WHERE m.type = 'table' ORDER BY 1, 2",
      "SELECT name, narg FROM pragma_function_list WHERE name IN ('json_each', 'json_tree',"
      " 'json_extract', 'printf') ORDER BY 1, 2",
      "SELECT count(*) > 100 FROM pragma_function_list",
      "SELECT * FROM pragma_table_xinfo('json_each')",
      "SELECT * FROM pragma_table_xinfo('pragma_table_info')",
      "SELECT * FROM pragma_table_xinfo('pragma_page_count')",
      "SELECT * FROM pragma_table_info('JSON_TREE')",
      "PRAGMA table_xinfo(json_each)",
      "SELECT * FROM pragma_table_info('pragma_nosuch')",
      "SELECT * FROM pragma_table_info('rtree')",
      "SELECT name FROM pragma_module_list WHERE name LIKE 'pragma%' OR name LIKE 'json%'"
      " ORDER BY 1",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) CHECK_SAME(p.db, p.sq, q[i]);
  static const char *const plans[] = {
      "EXPLAIN QUERY PLAN SELECT * FROM json_each('[1]')",
      "EXPLAIN QUERY PLAN SELECT * FROM json_each('[1]', '$')",
      "EXPLAIN QUERY PLAN SELECT * FROM json_each",
      "EXPLAIN QUERY PLAN SELECT * FROM json_tree('[1]')",
      "EXPLAIN QUERY PLAN SELECT * FROM json_each WHERE root = '$'",
      "EXPLAIN QUERY PLAN SELECT * FROM j, json_each(j.doc)",
      "EXPLAIN QUERY PLAN SELECT * FROM json_each AS e, j WHERE e.json = j.doc",
      "EXPLAIN QUERY PLAN SELECT * FROM j LEFT JOIN json_tree(j.doc, '$.a') AS e",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info('t', 'main')",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_function_list",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_page_count",
      "EXPLAIN QUERY PLAN SELECT * FROM sqlite_master AS m, pragma_index_list(m.name)",
      "EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info AS x, sqlite_master AS m"
      " WHERE x.arg = m.name",
      "EXPLAIN QUERY PLAN SELECT * FROM temp.json_each('[1]')",
      "EXPLAIN QUERY PLAN SELECT * FROM main.pragma_page_count",
  };
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) CHECK_BOUND_COL(p, plans[i], NULL, 3);
  pair_close(&p);
}

TEST(result_names_keep_trailing_comments) {
  Pair p = pair_open();
  static const char *const q[] = {
      "SELECT a /* c */ FROM t",
      "SELECT a -- c\n FROM t",
      "SELECT a+1 /* c */, b  -- x\n , b /*y*/ AS z FROM t",
      "SELECT (a /* in */ + 1) /* c */ FROM t",
      "SELECT a+1 -- c\n\n , c+2   /* x */\t\n FROM t",
      "SELECT (a+1)/**/FROM t",
      "SELECT +a/**/ FROM t",
      "SELECT a/**/+1 FROM t",
      "SELECT 1+1 -- c",
      "SELECT 1+1 /* c */",
      "SELECT 1+1 /* c",
      "SELECT 1+1 /* c */ ;",
      "SELECT * FROM (SELECT 1+1 /*c*/)",
      "SELECT 1+1 /*c*/ UNION SELECT 3",
      "SELECT 1+1 /*c*/ ORDER BY 1",
      "SELECT max(a) /* m */ FROM t GROUP BY b /* g */",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) CHECK_SAME(p.db, p.sq, q[i]);
  pair_close(&p);
}

/* A recursive CTE feeding an INSERT: the current-row table it opens for
 * every row is reused, so 300,000 rows stay within a few MB (each open used
 * to leave a table of the statement's ephemeral database behind: ~1 GB). */
TEST(recursive_cte_memory_is_bounded) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  SH_EXEC(db, "CREATE TABLE t(x)");
  int n = test_long() ? 300000 : 100000;
  char sql[256];
  snprintf(sql, sizeof sql,
           "INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
           "WHERE x<%d) SELECT x FROM c",
           n);
  util_alloc_highwater(1);
  SH_EXEC(db, sql);
  int64_t peak = util_alloc_highwater(0);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), n);
  CHECK_EQ(sh_int(db, "SELECT sum(x) FROM t"), (int64_t)n * (n + 1) / 2);
  /* the table itself (~2 MB per 100,000 rows in memory) plus the CTE's rows */
  if (peak > (int64_t)n * 80) test_fail(__FILE__, __LINE__, "peak %lld bytes", (long long)peak);
  CHECK_OK(shale_close(db));
}
