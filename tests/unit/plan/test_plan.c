/*
 * test_plan.c -- the planner on its own (src/plan/): a schema built from
 * CREATE statements, a SELECT parsed and its column names bound by hand
 * (a minimal resolver for this test), hooks with SQLite's affinity and
 * collation rules for plain columns and literals; checks the access path,
 * the terms it uses, the loop order and ORDER BY delivery.
 *
 * Invariants:
 *  1. Item i has cursor 100 + i; a column name binds to the first FROM item
 *     that has it (or to the qualified one).
 */
#include <string.h>

#include "../../../src/compile/schema_load.h"
#include "../../../src/parse/parse.h"
#include "../../../src/plan/plan.h"
#include "../../test.h"

typedef struct Fix {
  UtilArena arena;
  Schema *s;
  int n;
  PlanItem items[8];
  Planner pl;
  Plan plan;
  SqlSelect *sel;
} Fix;

static void fix_ddl(Fix *f, const char *sql) {
  const char *tail = sql;
  while (tail && *tail) {
    SqlStmt *st = NULL;
    char *msg = NULL;
    int rc = sql_parse(&f->arena, tail, -1, &st, &tail, &msg);
    if (rc) test_fail(__FILE__, __LINE__, "%s", msg ? msg : "?");
    shale_free(msg);
    if (rc || !st) break;
    if (st->kind == SQL_STMT_CREATE_TABLE) {
      Table *t;
      CHECK_OK(compile_schema_table_from_create(f->s, st, tail, &t, NULL));
      CHECK_OK(schema_add_table(f->s, t));
      for (Index *i = t->indexes; i; i = i->next) CHECK_OK(schema_add_index(f->s, i));
    } else if (st->kind == SQL_STMT_CREATE_INDEX) {
      Index *idx;
      CHECK_OK(compile_schema_index_from_create(f->s, st, tail, &idx, NULL));
      CHECK_OK(schema_add_index(f->s, idx));
    }
  }
}

/* ---- a tiny resolver ---- */
static void bind(Fix *f, SqlExpr *e) {
  if (!e) return;
  if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) {
    for (int i = 0; i < f->n; i++) {
      const Table *t = f->items[i].tab;
      const SqlSrcItem *si = &f->sel->from->a[i];
      const char *nm = si->alias ? si->alias : si->name;
      if (e->op == SQL_E_COLUMN && util_stricmp(e->table, nm) != 0) continue;
      int c = schema_table_column_index(t, e->z);
      if (c < 0 && util_stricmp(e->z, "rowid") == 0)
        c = -1;
      else if (c < 0)
        continue;
      e->op = SQL_E_COLREF;
      e->cursor = 100 + i;
      e->column = c;
      e->tab = t;
      e->aff = c >= 0 ? t->cols[c].affinity : AFF_INTEGER;
      if (c >= 0) f->items[i].colused |= (uint64_t)1 << c;
      return;
    }
    return;
  }
  bind(f, e->a);
  bind(f, e->b);
  bind(f, e->c);
  for (int i = 0; e->list && i < e->list->n; i++) bind(f, e->list->a[i].expr);
}

static uint64_t h_mask(void *ctx, SqlExpr *e) {
  if (!e) return 0;
  uint64_t m = 0;
  if (e->op == SQL_E_COLREF) m |= (uint64_t)1 << (e->cursor - 100);
  m |= h_mask(ctx, e->a) | h_mask(ctx, e->b) | h_mask(ctx, e->c);
  for (int i = 0; e->list && i < e->list->n; i++) m |= h_mask(ctx, e->list->a[i].expr);
  return m;
}
static int h_const(void *ctx, SqlExpr *e) { return h_mask(ctx, e) == 0 && !e->select; }

static char aff_of(const SqlExpr *e) {
  if (e->op == SQL_E_COLLATE) return aff_of(e->a);
  if (e->op == SQL_E_COLREF) return e->aff;
  return 0;
}
static const char *coll_of(const SqlExpr *e) {
  if (e->op == SQL_E_COLLATE) return e->z;
  if (e->op == SQL_E_COLREF && e->column >= 0) return e->tab->cols[e->column].coll;
  return NULL;
}
static void h_term(void *ctx, PlanTerm *t) {
  (void)ctx;
  char l = aff_of(t->left), r = t->right ? aff_of(t->right) : 0;
  char a;
  if (t->op == PLAN_OP_IN)
    a = l;
  else if (l && r)
    a = (l >= AFF_NUMERIC || r >= AFF_NUMERIC) ? AFF_NUMERIC : AFF_BLOB;
  else if (!l && !r)
    a = AFF_BLOB;
  else
    a = l ? l : r;
  if (t->op == PLAN_OP_ISNULL) a = 0;
  t->aff = a;
  /* an explicit COLLATE wins (left first), then a column's collation */
  const char *c = NULL;
  if (t->left->op == SQL_E_COLLATE)
    c = t->left->z;
  else if (t->right && t->right->op == SQL_E_COLLATE)
    c = t->right->z;
  else
    c = coll_of(t->left) ? coll_of(t->left) : t->right ? coll_of(t->right) : NULL;
  t->coll = c;
}
static const char *h_coll(void *ctx, SqlExpr *e) {
  (void)ctx;
  return coll_of(e);
}

/* Plan "SELECT ... FROM ... WHERE ... ORDER BY ..." on the fixture's schema. */
static int plan_sql(Fix *f, const char *sql, int flags) {
  SqlStmt *st = NULL;
  char *msg = NULL;
  int rc = sql_parse(&f->arena, sql, -1, &st, NULL, &msg);
  if (rc) {
    test_fail(__FILE__, __LINE__, "%s: %s", sql, msg ? msg : "?");
    shale_free(msg);
    return rc;
  }
  f->sel = st->u.select;
  f->n = f->sel->from->n;
  memset(f->items, 0, sizeof f->items);
  for (int i = 0; i < f->n; i++) {
    SqlSrcItem *si = &f->sel->from->a[i];
    f->items[i].tab = schema_find_table(f->s, si->name);
    CHECK(f->items[i].tab != NULL);
    f->items[i].cursor = 100 + i;
    f->items[i].jointype = si->jointype;
    f->items[i].not_indexed = si->not_indexed;
    f->items[i].indexed_by = si->indexed_by;
  }
  for (int i = 0; f->sel->cols && i < f->sel->cols->n; i++) {
    SqlExpr *e = f->sel->cols->a[i].expr;
    if (e->op == SQL_E_STAR)
      for (int k = 0; k < f->n; k++) f->items[k].colused = ~(uint64_t)0 >> 1;
    else
      bind(f, e);
  }
  bind(f, f->sel->where);
  for (int i = 0; i < f->n; i++) bind(f, f->sel->from->a[i].on);
  for (int i = 0; f->sel->order_by && i < f->sel->order_by->n; i++)
    bind(f, f->sel->order_by->a[i].expr);
  PlanHooks h = {f, h_mask, h_const, h_term, h_coll};
  plan_init(&f->pl, &f->arena, &h, f->n, f->items);
  for (int i = 0; i < f->n; i++) {
    SqlSrcItem *si = &f->sel->from->a[i];
    plan_add_clause(&f->pl, si->on, (si->jointype & SQL_JOIN_LEFT) ? i : -1);
  }
  plan_add_clause(&f->pl, f->sel->where, -1);
  return plan_choose(&f->pl, f->sel->order_by, flags, &f->plan);
}

static const char *const ddl =
    "CREATE TABLE t(a, b, c);"
    "CREATE INDEX ta ON t(a);"
    "CREATE INDEX tbc ON t(b, c);"
    "CREATE TABLE u(x INTEGER PRIMARY KEY, y, z);"
    "CREATE INDEX uy ON u(y DESC);"
    "CREATE TABLE w(k TEXT, j INT, v, PRIMARY KEY(k, j)) WITHOUT ROWID;"
    "CREATE INDEX wv ON w(v);"
    "CREATE TABLE s(a TEXT, b INTEGER, n TEXT COLLATE NOCASE);"
    "CREATE INDEX sa ON s(a); CREATE INDEX sb ON s(b); CREATE INDEX sn ON s(n);"
    "CREATE TABLE p(a, b);"
    "CREATE INDEX pa ON p(a) WHERE a IS NOT NULL;";

static void fix_open(Fix *f) {
  memset(f, 0, sizeof *f);
  util_arena_init(&f->arena, 0);
  f->s = schema_new();
  fix_ddl(f, ddl);
}
static void fix_close(Fix *f) {
  schema_free(f->s);
  util_arena_free(&f->arena);
}

/* Level k's path as text: "SCAN", "SCAN ta", "ROWID=", "ROWID lo hi", "ta 1 lo hi". */
static const char *desc(Fix *f, int k, char *buf, size_t n) {
  PlanLevel *L = &f->plan.levels[k];
  const char *tn = f->items[L->item].tab->name;
  switch (L->kind) {
    case PLAN_SCAN:
      snprintf(buf, n, "%s SCAN%s%s%s", tn, L->idx && !L->is_pk ? " " : "",
               L->idx && !L->is_pk ? L->idx->name : "", L->reverse ? " rev" : "");
      break;
    case PLAN_ROWID_EQ:
      snprintf(buf, n, "%s ROWID=", tn);
      break;
    case PLAN_AUTO:
      snprintf(buf, n, "%s AUTO %d", tn, L->neq);
      break;
    case PLAN_OR:
      snprintf(buf, n, "%s OR %d", tn, L->nsub);
      break;
    case PLAN_ROWID_RANGE:
      snprintf(buf, n, "%s ROWID%s%s%s", tn, L->lo >= 0 ? " lo" : "", L->hi >= 0 ? " hi" : "",
               L->reverse ? " rev" : "");
      break;
    default:
      snprintf(buf, n, "%s %s %d%s%s%s%s", tn, L->idx->name, L->neq, L->lo >= 0 ? " lo" : "",
               L->hi >= 0 ? " hi" : "", L->covering ? " cov" : "", L->reverse ? " rev" : "");
  }
  return buf;
}

static void expect(const char *sql, int flags, const char *want0, const char *want1, int order) {
  Fix f;
  fix_open(&f);
  char b[128];
  if (plan_sql(&f, sql, flags) == SHALE_OK) {
    CHECK_STR(desc(&f, 0, b, sizeof b), want0);
    if (want1) CHECK_STR(desc(&f, 1, b, sizeof b), want1);
    if (order >= 0) CHECK_EQ(f.plan.order_ok, order);
  }
  fix_close(&f);
}

TEST(plan_single_table_paths) {
  expect("SELECT * FROM t", 0, "t SCAN", NULL, -1);
  expect("SELECT * FROM t WHERE a = 1", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE 1 = a", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE a IS NULL", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE a ISNULL", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE a > 1", 0, "t ta 0 lo", NULL, -1);
  expect("SELECT * FROM t WHERE 1 > a", 0, "t ta 0 hi", NULL, -1);
  expect("SELECT * FROM t WHERE a BETWEEN 1 AND 2", 0, "t ta 0 lo hi", NULL, -1);
  expect("SELECT * FROM t WHERE a IN (1, 2)", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE a = 1 OR a = 2", 0, "t ta 1", NULL, -1);
  expect("SELECT * FROM t WHERE a = 1 OR b = 2", 0, "t OR 2", NULL, -1);
  expect("SELECT * FROM t WHERE a = 1 OR c = 2", 0, "t SCAN", NULL, -1);
  expect("SELECT * FROM t WHERE a = 1 OR (b = 2 AND c > 3) OR a > 7", 0, "t OR 3", NULL, -1);
  expect("SELECT * FROM u WHERE x = 1 OR y = 2", 0, "u OR 2", NULL, -1);
  expect("SELECT * FROM t WHERE b = 1 AND c > 2", 0, "t tbc 1 lo", NULL, -1);
  expect("SELECT b, c FROM t WHERE b = 1 AND c = 2", 0, "t tbc 2 cov", NULL, -1);
  expect("SELECT * FROM t WHERE a > 1 AND b = 2", 0, "t tbc 1", NULL, -1);
  expect("SELECT * FROM t WHERE c = 1", 0, "t SCAN", NULL, -1);
  expect("SELECT * FROM t WHERE a != 1", 0, "t SCAN", NULL, -1);
  expect("SELECT * FROM t WHERE a + 0 = 1", 0, "t SCAN", NULL, -1);
  expect("SELECT a FROM t", 0, "t SCAN ta", NULL, -1);
  expect("SELECT * FROM u WHERE x = 5", 0, "u ROWID=", NULL, -1);
  expect("SELECT * FROM u WHERE rowid = 5", 0, "u ROWID=", NULL, -1);
  expect("SELECT * FROM u WHERE x IN (1, 2)", 0, "u ROWID=", NULL, -1);
  expect("SELECT * FROM u WHERE x > 5 AND x < 9", 0, "u ROWID lo hi", NULL, -1);
  expect("SELECT * FROM u WHERE x > 5 AND x < 9 AND y = 1", 0, "u uy 1 lo hi", NULL, -1);
  expect("SELECT * FROM w WHERE k = 'a'", 0, "w sqlite_autoindex_w_1 1", NULL, -1);
  expect("SELECT * FROM w WHERE k = 'a' AND j > 1", 0, "w sqlite_autoindex_w_1 1 lo", NULL, -1);
  expect("SELECT * FROM w WHERE v = 1", 0, "w wv 1 cov", NULL, -1);
  expect("SELECT * FROM t NOT INDEXED WHERE a = 1", 0, "t SCAN", NULL, -1);
  expect("SELECT * FROM u NOT INDEXED WHERE x = 1", 0, "u ROWID=", NULL, -1);
  expect("SELECT * FROM t INDEXED BY tbc WHERE a = 1 AND b = 1", 0, "t tbc 1", NULL, -1);
}

TEST(plan_affinity_collation) {
  /* TEXT column: numeric and text values both fit (TEXT affinity) */
  expect("SELECT * FROM s WHERE a = 1", 0, "s sa 1", NULL, -1);
  expect("SELECT * FROM s WHERE b = '1'", 0, "s sb 1", NULL, -1);
  /* column against column: TEXT vs INTEGER is numeric: the TEXT index cannot serve */
  expect("SELECT * FROM s WHERE a = b", 0, "s SCAN", NULL, -1);
  expect("SELECT * FROM s WHERE n = 'x'", 0, "s sn 1", NULL, -1);
  expect("SELECT * FROM s WHERE n = 'x' COLLATE BINARY", 0, "s SCAN", NULL, -1);
  expect("SELECT * FROM s WHERE a = 'x' COLLATE NOCASE", 0, "s SCAN", NULL, -1);
  expect("SELECT * FROM s WHERE a COLLATE BINARY = 'x'", 0, "s sa 1", NULL, -1);
  /* partial index: usable only when the WHERE implies its condition */
  expect("SELECT * FROM p WHERE a = 3", 0, "p pa 1", NULL, -1);
  expect("SELECT * FROM p WHERE a IS NULL", 0, "p SCAN", NULL, -1);
  expect("SELECT * FROM p WHERE a IS 3", 0, "p SCAN", NULL, -1);
}

TEST(plan_order_by) {
  expect("SELECT * FROM t ORDER BY a", 0, "t SCAN ta", NULL, 1);
  expect("SELECT * FROM t ORDER BY a DESC", 0, "t SCAN ta rev", NULL, 1);
  expect("SELECT * FROM t WHERE b = 1 ORDER BY c", 0, "t tbc 1", NULL, 1);
  expect("SELECT * FROM t WHERE b = 1 ORDER BY c DESC", 0, "t tbc 1 rev", NULL, 1);
  expect("SELECT * FROM t WHERE b = 1 ORDER BY b, c", 0, "t tbc 1", NULL, 1);
  expect("SELECT * FROM t WHERE a = 1 ORDER BY b", 0, "t ta 1", NULL, 0);
  expect("SELECT * FROM t ORDER BY a NULLS LAST", 0, "t SCAN", NULL, 0);
  expect("SELECT * FROM t ORDER BY b, c DESC", 0, "t SCAN", NULL, 0);
  expect("SELECT * FROM u ORDER BY x DESC", 0, "u SCAN rev", NULL, 1);
  expect("SELECT * FROM u WHERE x < 5 ORDER BY x DESC", 0, "u ROWID hi rev", NULL, 1);
  expect("SELECT * FROM u WHERE y > 5 ORDER BY y", 0, "u uy 0 lo rev", NULL, 1);
  expect("SELECT * FROM w ORDER BY k, j", 0, "w SCAN", NULL, 1);
  expect("SELECT * FROM t ORDER BY rowid", 0, "t SCAN", NULL, 1);
  expect("SELECT * FROM t WHERE a = 2 ORDER BY rowid", 0, "t ta 1", NULL, 1);
  expect("SELECT * FROM s ORDER BY n", 0, "s SCAN sn", NULL, 1);
  expect("SELECT * FROM s ORDER BY n COLLATE BINARY", 0, "s SCAN", NULL, 0);
  expect("SELECT * FROM t GROUP BY a", PLAN_GROUPBY, "t SCAN", NULL, -1);
}

TEST(plan_join_order) {
  expect("SELECT * FROM t, u WHERE t.a = u.x", 0, "t SCAN", "u ROWID=", -1);
  expect("SELECT * FROM u, t WHERE t.a = u.x", 0, "t SCAN", "u ROWID=", -1);
  expect("SELECT * FROM t, u WHERE t.a = u.y", 0, "t SCAN", "u uy 1", -1);
  expect("SELECT * FROM u CROSS JOIN t WHERE t.a = u.y", 0, "u SCAN", "t ta 1", -1);
  expect("SELECT * FROM u, t WHERE t.a = u.y", PLAN_NO_REORDER, "u SCAN", "t ta 1", -1);
  /* a LEFT JOIN item stays right of its left side, and WHERE terms do not drive it */
  expect("SELECT * FROM t LEFT JOIN u ON t.a = u.x", 0, "t SCAN", "u ROWID=", -1);
  expect("SELECT * FROM t LEFT JOIN u ON t.b = u.z WHERE u.x = 1", 0, "t SCAN", "u AUTO 1", -1);
  expect("SELECT * FROM u LEFT JOIN t ON t.a = 1", 0, "u SCAN", "t ta 1", -1);
  /* no index on the join column: an automatic one */
  expect("SELECT * FROM t AS x, t AS y WHERE x.c = y.c", 0, "t SCAN", "t AUTO 1", -1);
  expect("SELECT * FROM t AS x, t AS y WHERE x.c = y.c AND x.b = y.b", 0, "t SCAN", "t tbc 2", -1);
  expect("SELECT * FROM t AS x LEFT JOIN p ON x.c = p.b", 0, "t SCAN", "p AUTO 1", -1);
}

TEST(plan_index_col_rules) {
  Fix f;
  fix_open(&f);
  const Table *s = schema_find_table(f.s, "s");
  const Index *sa = schema_find_index(f.s, "sa"), *sb = schema_find_index(f.s, "sb");
  const Index *sn = schema_find_index(f.s, "sn");
  PlanTerm t;
  memset(&t, 0, sizeof t);
  t.column = 0;
  t.aff = AFF_TEXT;
  CHECK(plan_index_col_ok(&t, s, sa, 0));
  t.aff = AFF_NUMERIC;
  CHECK(!plan_index_col_ok(&t, s, sa, 0));
  t.aff = AFF_BLOB;
  CHECK(plan_index_col_ok(&t, s, sa, 0));
  t.column = 1;
  t.aff = AFF_NUMERIC;
  CHECK(plan_index_col_ok(&t, s, sb, 0));
  t.aff = AFF_TEXT;
  CHECK(!plan_index_col_ok(&t, s, sb, 0));
  CHECK(!plan_index_col_ok(&t, s, sa, 0)); /* wrong column */
  t.column = 1;
  t.aff = AFF_BLOB;
  CHECK(plan_index_col_ok(&t, s, sb, 1) == 0); /* trailing rowid is not column 1 */
  t.column = -1;
  CHECK(plan_index_col_ok(&t, s, sb, 1));
  t.column = 2;
  t.aff = AFF_TEXT;
  t.coll = "NOCASE";
  CHECK(plan_index_col_ok(&t, s, sn, 0));
  t.coll = NULL;
  CHECK(!plan_index_col_ok(&t, s, sn, 0));
  fix_close(&f);
}
