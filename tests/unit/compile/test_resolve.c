/*
 * test_resolve.c -- name resolution (src/compile/resolve.c) and compile_select_resolve
 * seen from inside: the fields SQL_E_COLREF nodes get (cursor, column,
 * affinity, depth), colused bits, correlation flags, aggregate ownership,
 * alias and ordinal substitution, double-quoted strings, '*' expansion and
 * result names, on a Schema built from CREATE statements (no database).
 *
 * Invariants:
 *  1. Each case compiles its statements in a Parse of its own (arena freed
 *     at the end), so nothing leaks between cases.
 */
#include <string.h>

#include "../../../src/compile/schema_load.h"
#include "../../../src/compile/select_int.h"
#include "../../test.h"

typedef struct Fx {
  FuncRegistry fr;
  CompileEnv env;
  Schema *schema;
  UtilArena ddl; /* the CREATE ASTs the schema points into */
  Parse p;
  SqlSelect *sel;
} Fx;

static void fx_table(Fx *f, const char *sql, uint32_t root) {
  SqlStmt *st = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&f->ddl, sql, -1, &st, NULL, &err));
  Table *t = NULL;
  CHECK_OK(compile_schema_table_from_create(f->schema, st, sql, &t, &err));
  if (!t) return;
  t->root = root;
  CHECK_OK(schema_add_table(f->schema, t));
}

static void fx_open(Fx *f) {
  memset(f, 0, sizeof *f);
  CHECK_OK(func_registry_init(&f->fr));
  f->env.funcs = &f->fr;
  f->env.max_vars = 32766;
  f->schema = schema_new();
  CHECK(f->schema != NULL);
  f->env.schema = f->schema;
  util_arena_init(&f->ddl, 0);
  fx_table(f, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d)", 2);
  fx_table(f, "CREATE TABLE u(x INT, y TEXT COLLATE NOCASE, b)", 3);
}

/* Parse and resolve one SELECT in a fresh Parse; returns the parse result. */
static int fx_resolve(Fx *f, const char *sql) {
  memset(&f->p, 0, sizeof f->p);
  f->p.env = &f->env;
  f->p.schema = f->schema;
  f->p.sql = sql;
  util_arena_init(&f->p.arena, 0);
  CHECK_OK(vm_builder_init(&f->p.b, sql));
  SqlStmt *st = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&f->p.arena, sql, -1, &st, NULL, &err));
  f->sel = st ? st->u.select : NULL;
  if (!f->sel) return -1;
  return compile_select_resolve(&f->p, f->sel, NULL);
}

static void fx_done_parse(Fx *f) {
  vm_builder_abort(&f->p.b);
  shale_free(f->p.errmsg);
  util_arena_free(&f->p.arena);
  memset(&f->p, 0, sizeof f->p);
}

static void fx_close(Fx *f) {
  schema_free(f->schema);
  util_arena_free(&f->ddl);
  func_registry_free(&f->fr);
}

static SqlExpr *res(Fx *f, int i) { return compile_select_result(f->sel)->a[i].expr; }

TEST(resolve_column_refs) {
  Fx f;
  fx_open(&f);
  CHECK_EQ(fx_resolve(&f, "SELECT t.b, t.c, t.rowid, main.t.d, x FROM t, u WHERE a > 1"), 0);
  SrcList *src = f.sel->info->src;
  CHECK_EQ(src->n, 2);
  SqlExpr *e = res(&f, 0);
  CHECK_EQ(e->op, SQL_E_COLREF);
  CHECK_EQ(e->cursor, src->a[0].cursor);
  CHECK_EQ(e->column, 1);
  CHECK_EQ(e->aff, AFF_TEXT);
  CHECK_EQ(e->depth, 0);
  CHECK_EQ(res(&f, 1)->column, 2);
  CHECK_EQ(res(&f, 1)->aff, AFF_REAL);
  /* rowid of a table with an INTEGER PRIMARY KEY is that column */
  CHECK_EQ(res(&f, 2)->column, 0);
  CHECK_EQ(res(&f, 3)->column, 3);
  CHECK_EQ(res(&f, 4)->cursor, src->a[1].cursor);
  CHECK_EQ(res(&f, 4)->aff, AFF_INTEGER);
  /* colused: a (WHERE), b, c, d of t; x of u */
  CHECK_EQ(src->a[0].colused, (uint64_t)0xf);
  CHECK_EQ(src->a[1].colused, (uint64_t)0x1);
  CHECK_EQ(f.sel->where->a->op, SQL_E_COLREF);
  fx_done_parse(&f);
  /* a table without an INTEGER PRIMARY KEY: rowid is column -1 and not counted */
  CHECK_EQ(fx_resolve(&f, "SELECT oid, _rowid_ FROM u"), 0);
  CHECK_EQ(res(&f, 0)->column, -1);
  CHECK_EQ(res(&f, 1)->column, -1);
  CHECK_EQ(f.sel->info->src->a[0].colused, (uint64_t)0);
  fx_done_parse(&f);
  fx_close(&f);
}

TEST(resolve_errors) {
  Fx f;
  fx_open(&f);
  static const char *const cases[][2] = {
      {"SELECT zz FROM t", "no such column: zz"},
      {"SELECT t.zz FROM t", "no such column: t.zz"},
      {"SELECT b FROM t, u", "ambiguous column name: b"},
      {"SELECT q.b FROM t", "no such column: q.b"},
      {"SELECT nosuch(1)", "no such function: nosuch"},
      {"SELECT abs()", "wrong number of arguments to function abs()"},
      {"SELECT a FROM t WHERE max(a)", "misuse of aggregate function max()"},
      {"SELECT sum(count(a)) FROM t", "misuse of aggregate function count()"},
      {"SELECT a FROM t ORDER BY 3", "1st ORDER BY term out of range - should be between 1 and 1"},
      {"SELECT a, b FROM t GROUP BY 1, 0",
       "2nd GROUP BY term out of range - should be between 1 and 2"},
      {"SELECT a FROM t HAVING b", "HAVING clause on a non-aggregate query"},
      {"SELECT a FROM t UNION SELECT x, y FROM u",
       "SELECTs to the left and right of UNION do not have the same number of result columns"},
      {"SELECT * FROM nosuch", "no such table: nosuch"},
      {"SELECT nosuch.* FROM t", "no such table: nosuch"},
      {"SELECT *", "no tables specified"},
      {"SELECT (SELECT a, b FROM t)", "sub-select returns 2 columns - expected 1"},
      {"SELECT * FROM t JOIN u USING (y)",
       "cannot join using column y - column not present in both tables"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK(fx_resolve(&f, cases[i][0]) != 0);
    if (f.p.errmsg && strcmp(f.p.errmsg, cases[i][1]) != 0)
      test_fail(__FILE__, __LINE__, "%s: got \"%s\", want \"%s\"", cases[i][0], f.p.errmsg,
                cases[i][1]);
    CHECK(f.p.errmsg != NULL);
    fx_done_parse(&f);
  }
  fx_close(&f);
}

TEST(resolve_correlation_and_aggregates) {
  Fx f;
  fx_open(&f);
  CHECK_EQ(fx_resolve(&f, "SELECT (SELECT max(x) FROM u WHERE u.b = t.b) FROM t"), 0);
  SqlSelect *sub = res(&f, 0)->select;
  CHECK(sub != NULL);
  CHECK(sub->info->nc.flags & NC_HAS_CORREL);
  CHECK(sub->info->nc.flags & NC_HAS_AGG);
  CHECK(!(f.sel->info->nc.flags & NC_HAS_CORREL));
  CHECK(!f.sel->info->is_agg);
  SqlExpr *w = sub->where; /* u.b = t.b */
  CHECK_EQ(w->a->depth, 0);
  CHECK_EQ(w->b->depth, 1);
  CHECK_EQ(w->b->cursor, f.sel->info->src->a[0].cursor);
  fx_done_parse(&f);
  /* max(t.a) reads only the outer query's column: the outer's aggregate */
  CHECK_EQ(fx_resolve(&f, "SELECT (SELECT max(t.a) FROM u) FROM t"), 0);
  sub = res(&f, 0)->select;
  SqlExpr *m = sub->info->result->a[0].expr;
  CHECK_EQ(m->op, SQL_E_FUNC);
  CHECK_EQ(m->agg, 1);
  CHECK_EQ(m->depth, 1);
  CHECK(f.sel->info->is_agg);
  CHECK(!sub->info->is_agg);
  fx_done_parse(&f);
  fx_close(&f);
}

TEST(resolve_aliases_ordinals_strings) {
  Fx f;
  fx_open(&f);
  /* result alias in WHERE (no column of that name), ORDER BY alias/ordinal */
  CHECK_EQ(fx_resolve(&f, "SELECT a + 1 AS k, b FROM t WHERE k > 2 ORDER BY k, 2"), 0);
  CHECK_EQ(f.sel->where->a->op, SQL_E_BINARY);
  CHECK(f.sel->where->a != res(&f, 0)); /* a copy, not the result node */
  CHECK_EQ(f.sel->info->order_col[0], 0);
  CHECK_EQ(f.sel->info->order_col[1], 1);
  CHECK_EQ(f.sel->order_by->a[1].expr->op, SQL_E_COLREF);
  fx_done_parse(&f);
  /* a column wins over an alias in WHERE; an alias wins in ORDER BY */
  CHECK_EQ(fx_resolve(&f, "SELECT c AS b FROM t WHERE b = 'x' ORDER BY b"), 0);
  CHECK_EQ(f.sel->where->a->column, 1);
  CHECK_EQ(f.sel->order_by->a[0].expr->column, 2);
  fx_done_parse(&f);
  /* "x" matching no column is a string; 'x' quoted as a column is the column */
  CHECK_EQ(fx_resolve(&f, "SELECT \"nosuch\", \"b\" FROM t"), 0);
  CHECK_EQ(res(&f, 0)->op, SQL_E_STRING);
  CHECK_STR(res(&f, 0)->z, "nosuch");
  CHECK_EQ(res(&f, 1)->op, SQL_E_COLREF);
  fx_done_parse(&f);
  fx_close(&f);
}

TEST(resolve_star_and_using) {
  Fx f;
  fx_open(&f);
  CHECK_EQ(fx_resolve(&f, "SELECT * FROM t JOIN u USING (b)"), 0);
  /* t.a t.b t.c t.d u.x u.y: the USING column once */
  CHECK_EQ(compile_select_ncol(f.sel), 6);
  SrcList *src = f.sel->info->src;
  CHECK(src->a[1].on != NULL); /* USING became an ON term */
  CHECK_EQ(src->a[1].on->op, SQL_E_BINARY);
  CHECK_EQ(res(&f, 1)->cursor, src->a[0].cursor);
  /* unqualified b is the left one, not ambiguous */
  fx_done_parse(&f);
  CHECK_EQ(fx_resolve(&f, "SELECT b FROM t NATURAL JOIN u"), 0);
  CHECK_EQ(res(&f, 0)->cursor, f.sel->info->src->a[0].cursor);
  fx_done_parse(&f);
  CHECK_EQ(fx_resolve(&f, "SELECT u.*, t.a FROM t, u"), 0);
  CHECK_EQ(compile_select_ncol(f.sel), 4);
  fx_done_parse(&f);
  /* names: alias, column name, source text */
  CHECK_EQ(fx_resolve(&f, "SELECT a AS one, b, c  +  1, (d) FROM t"), 0);
  CHECK_EQ(compile_select_result_names(&f.p, f.sel), 0);
  CHECK_EQ(f.p.ncol, 4);
  CHECK_STR(f.p.cols[0].name, "one");
  CHECK_STR(f.p.cols[1].name, "b");
  CHECK_STR(f.p.cols[1].decltype, "TEXT");
  CHECK_STR(f.p.cols[1].table, "t");
  CHECK_STR(f.p.cols[2].name, "c  +  1");
  CHECK(f.p.cols[2].table == NULL);
  CHECK_STR(f.p.cols[3].name, "d");
  fx_done_parse(&f);
  fx_close(&f);
}
