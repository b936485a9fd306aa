/*
 * plan.c -- term analysis, access paths, costs and the join order.
 *
 * Owns nothing beyond the caller's arena (terms, levels). Costs and row
 * counts are SQLite's LogEst (10 * log2 as small integers) with SQLite's
 * formulas: a table of LogEst 200 rows without statistics, sqlite_stat1's
 * or sqlite3DefaultRowEst's rows per index prefix, N + 16 for a full scan,
 * log N per seek, 1 + 15 * szIdx / szTab per index entry, 16 per table row
 * looked up, a quarter of the rows per range bound, SQLite's truth
 * heuristic for the terms a path does not use (residual); the join order
 * is SQLite's N-best solver (solve), so near-ties break as in SQLite.
 *
 * Invariants:
 *  1. A term drives a path only if it is usable for that item: its value
 *     reads only items already looped (prereq), and for a LEFT JOIN item
 *     only that item's ON terms qualify (plan.h invariant 2).
 *  2. plan_index_col_ok holds for every term a PlanLevel names.
 *  3. Levels are a permutation of the items that keeps every LEFT/CROSS
 *     JOIN item after all items to its left.
 *  4. Terms of an OR disjunct (group >= 0) drive only that disjunct's
 *     sub-path of a MULTI-INDEX OR level (cur_group selects them while the
 *     sub-paths are searched); they are never coded themselves (the OR term
 *     is).
 *  5. The only write to the schema: Table.stats_used is set on a table whose
 *     index search was weighed (a per-connection hint, as SQLite's
 *     TF_StatsUsed, read by PRAGMA optimize).
 */
#include "plan.h"

#include <math.h>
#include <string.h>

#define TAB_EST 200 /* LogEst of the rows assumed in a table (1048576) */

static uint64_t bit(int i) { return (uint64_t)1 << (i < 63 ? i : 63); }

/* ---- LogEst arithmetic (SQLite's sqlite3LogEst / LogEstAdd / estLog) ---- */

PlanLogEst plan_logest(uint64_t x) {
  static const int a[] = {0, 2, 3, 5, 6, 7, 8, 9};
  int y = 40;
  if (x < 8) {
    if (x < 2) return 0;
    while (x < 8) {
      y -= 10;
      x <<= 1;
    }
  } else {
    while (x > 255) {
      y += 40;
      x >>= 4;
    }
    while (x > 15) {
      y += 10;
      x >>= 1;
    }
  }
  return (PlanLogEst)(a[x & 7] + y - 10);
}

PlanLogEst plan_logest_add(PlanLogEst a, PlanLogEst b) {
  /* what adding the smaller adds to the larger, by their difference */
  static const uint8_t x[] = {10, 10, 9, 9, 8, 8, 7, 7, 7, 6, 6, 6, 5, 5, 5, 4,
                              4,  4,  4, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2};
  if (a < b) {
    PlanLogEst t = a;
    a = b;
    b = t;
  }
  if (a > b + 49) return a;
  if (a > b + 31) return (PlanLogEst)(a + 1);
  return (PlanLogEst)(a + x[a - b]);
}

/* LogEst of a double (SQLite's sqlite3LogEstFromDouble). */
static PlanLogEst est_from_double(double x) {
  if (!(x > 1)) return 0;
  if (x <= 2000000000.0) return plan_logest((uint64_t)x);
  int e;
  (void)frexp(x, &e);
  return (PlanLogEst)(e * 10 > 32767 ? 32767 : e * 10);
}

/* The LogEst of log2(N) for a LogEst N, no less than 0 (SQLite's estLog:
 * the cost of one seek into a b-tree of N rows). */
static PlanLogEst est_log(PlanLogEst n) {
  return n <= 10 ? 0 : (PlanLogEst)(plan_logest((uint64_t)n) - 33);
}

/* Rows in a table (LogEst): its sqlite_stat1 count, else TAB_EST. As
 * SQLite, a table with an index that has no statistics counts at least
 * LogEst 99 (~1000: sqlite3DefaultRowEst raises the table's estimate). */
static PlanLogEst table_est(const Table *tab) {
  if (!tab || !tab->has_stat) return TAB_EST;
  PlanLogEst n = plan_logest(tab->stat_rows);
  if (n < 99)
    for (const Index *x = tab->indexes; x; x = x->next)
      if (x->nstat == 0) return 99;
  return n;
}

/* Rows of item it: a subquery's estimate, else its table's. */
static PlanLogEst item_est(const PlanItem *it) {
  if (it->is_sub) return it->sub_rows >= 0 ? it->sub_rows : TAB_EST;
  return table_est(it->tab);
}

/* SQLite's aiRowLogEst[j] of idx: j = 0 its entries, j >= 1 the entries
 * per distinct value of its first j key columns. From sqlite_stat1 when it
 * has statistics, else sqlite3DefaultRowEst's guesses: the table's rows
 * (half for a partial index), then 10, 9, 8, 7, 6 rows and 5 for further
 * columns; a UNIQUE index's full key 1. */
static PlanLogEst idx_est(const Index *idx, PlanLogEst tab_est, int j) {
  static const PlanLogEst dflt[] = {33, 32, 30, 28, 26};
  if (idx->nstat > j) return plan_logest(idx->stat[j]);
  if (j == 0) return (PlanLogEst)(idx->where ? tab_est - 10 : tab_est);
  if (idx->unique && j >= idx->nkey) return 0;
  return j <= 5 ? dflt[j - 1] : 23;
}

/* ---- row widths (SQLite's szEst / szTabRow / szIdxRow) ----
 *
 * SQLite estimates a column's size from its declared type (an integer is
 * 1): TEXT, CLOB, BLOB 5; CHAR(k)/VARCHAR(k)/BLOB(k) k/4 + 1; other TEXT or
 * BLOB affinity types without a size 1; numeric types and no type 1. A row
 * is the LogEst of 4x the sum (a rowid table without an INTEGER PRIMARY
 * KEY adds 1); an index row sums its columns, rowid included. A full scan
 * of a covering index is weighed only when its row is narrower. */

static int col_size_est(const Column *c) {
  const char *z = c->type;
  if (!z || !*z) return 1;
  if (c->affinity != AFF_TEXT && c->affinity != AFF_BLOB) return 1;
  /* SQLite's standard type ANY has NUMERIC affinity for the estimate */
  if (util_stricmp(z, "ANY") == 0) return 1;
  /* where a size may follow: after "CHAR", or after "BLOB" directly followed by '(' */
  const char *size_at = NULL;
  uint32_t h = 0;
  for (const char *p = z; *p; p++) {
    char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p + 32) : *p;
    h = (h << 8) + (uint8_t)ch;
    if (h == (('c' << 24) | ('h' << 16) | ('a' << 8) | 'r'))
      size_at = p + 1;
    else if (h == (('b' << 24) | ('l' << 16) | ('o' << 8) | 'b') && p[1] == '(')
      size_at = p + 1;
  }
  long v = 0;
  if (size_at) {
    while (*size_at && !(*size_at >= '0' && *size_at <= '9')) size_at++;
    while (*size_at >= '0' && *size_at <= '9' && v < 100000) v = v * 10 + (*size_at++ - '0');
  } else {
    v = 16;
  }
  v = v / 4 + 1;
  return v > 255 ? 255 : (int)v;
}

static int table_width(const Table *tab) {
  uint64_t w = 0;
  for (int c = 0; c < tab->ncol; c++) w += (uint64_t)col_size_est(&tab->cols[c]);
  if (tab->rowid_alias < 0 || tab->without_rowid) w++;
  return plan_logest(w * 4);
}

static int index_width(const Table *tab, const Index *idx) {
  uint64_t w = 0;
  if (tab->without_rowid && idx == tab->pk_index) {
    /* SQLite's PRIMARY KEY index of a WITHOUT ROWID table holds every
     * stored column (all but the VIRTUAL generated ones) */
    for (int c = 0; c < tab->ncol; c++)
      if (tab->cols[c].hidden != COL_VIRTUAL) w += (uint64_t)col_size_est(&tab->cols[c]);
    return plan_logest(w * 4);
  }
  for (int j = 0; j < idx->ncol; j++) {
    int c = idx->cols[j].col;
    w += c >= 0 && c < tab->ncol ? (uint64_t)col_size_est(&tab->cols[c]) : 1;
  }
  if (!tab->without_rowid && idx->ncol == idx->nkey) w++; /* the rowid suffix */
  return plan_logest(w * 4);
}

/* The indexes of tab in SQLite's list order (the order it tries them, so
 * the first of equally good paths wins as there): newest first, ON
 * CONFLICT REPLACE ones after the others. Returns the count (at most cap;
 * more: creation order, the first cap). */
static int sqlite_index_order(const Table *tab, const Index **a, int cap) {
  int k = 0;
  for (const Index *x = tab->indexes; x; x = x->next) {
    if (k == cap) {
      k = 0;
      for (const Index *y = tab->indexes; y && k < cap; y = y->next) a[k++] = y;
      return k;
    }
    int pos = 0;
    if (x->on_conflict == SCHEMA_OE_REPLACE && k > 0 && a[0]->on_conflict != SCHEMA_OE_REPLACE) {
      pos = 1;
      while (pos < k && a[pos]->on_conflict != SCHEMA_OE_REPLACE) pos++;
    }
    memmove(&a[pos + 1], &a[pos], sizeof *a * (size_t)(k - pos));
    a[pos] = x;
    k++;
  }
  return k;
}

const Index *plan_count_index(const Table *tab, int not_indexed) {
  const Index *best = tab->without_rowid ? tab->pk_index : NULL;
  int bw = best ? index_width(tab, best) : 0, tw = table_width(tab);
  const Index *a[64];
  int n = not_indexed ? 0 : sqlite_index_order(tab, a, 64);
  for (int i = 0; i < n; i++) {
    const Index *x = a[i];
    if (x->where) continue;
    int w = index_width(tab, x);
    if (w < tw && (!best || w < bw)) {
      best = x;
      bw = w;
    }
  }
  return best;
}

void plan_init(Planner *pl, UtilArena *arena, const PlanHooks *hooks, int nitem,
               const PlanItem *items) {
  memset(pl, 0, sizeof *pl);
  pl->arena = arena;
  pl->hooks = *hooks;
  pl->nitem = nitem;
  pl->items = items;
  pl->cur_group = -1;
}

/* ---- term analysis ---- */

static PlanTerm *new_term(Planner *pl) {
  if (pl->rc) return NULL;
  if (pl->nterm == pl->capterm) {
    int cap = pl->capterm ? pl->capterm * 2 : 16;
    PlanTerm *t = util_arena_alloc(pl->arena, sizeof(PlanTerm) * (size_t)cap);
    if (!t) {
      pl->rc = SHALE_NOMEM;
      return NULL;
    }
    if (pl->nterm) memcpy(t, pl->terms, sizeof(PlanTerm) * (size_t)pl->nterm);
    pl->terms = t;
    pl->capterm = cap;
  }
  PlanTerm *t = &pl->terms[pl->nterm++];
  memset(t, 0, sizeof *t);
  t->parent = -1;
  t->on_item = -1;
  t->item = -1;
  t->group = -1;
  return t;
}

static SqlExpr *skip_collate(SqlExpr *e) {
  while (e && e->op == SQL_E_COLLATE) e = e->a;
  return e;
}

/* The item whose column e is (depth 0, a base table), or -1. */
static int col_item(const Planner *pl, SqlExpr *e, int *column) {
  e = skip_collate(e);
  if (!e || e->op != SQL_E_COLREF || e->depth != 0) return -1;
  for (int i = 0; i < pl->nitem; i++) {
    if (pl->items[i].cursor != e->cursor) continue;
    const Table *tab = pl->items[i].tab;
    if (!tab) return -1;
    int c = e->column;
    if (c >= 0 && c == tab->rowid_alias && !tab->without_rowid) c = -1;
    if (c < 0 && tab->without_rowid) return -1;
    if (c >= tab->ncol) return -1;
    *column = c;
    return i;
  }
  return -1;
}

static int commute(int op) {
  switch (op) {
    case PLAN_OP_LT:
      return PLAN_OP_GT;
    case PLAN_OP_LE:
      return PLAN_OP_GE;
    case PLAN_OP_GT:
      return PLAN_OP_LT;
    case PLAN_OP_GE:
      return PLAN_OP_LE;
    default:
      return op;
  }
}

/* Fill the column-op-value form of t (or of a new derived term when t
 * already has one). */
static void add_form(Planner *pl, int ti, int op, SqlExpr *col, SqlExpr *value, SqlExpr *left,
                     SqlExpr *right) {
  int column;
  int item = col_item(pl, col, &column);
  if (item < 0) return;
  uint64_t prereq = value ? pl->hooks.mask(pl->hooks.ctx, value) : 0;
  if (op == PLAN_OP_IN) {
    /* the IN expression minus its left operand */
    SqlExpr tmp = *value;
    tmp.a = NULL;
    prereq = pl->hooks.mask(pl->hooks.ctx, &tmp);
  }
  if (prereq & bit(item)) return;
  PlanTerm *t = &pl->terms[ti];
  if (t->op) {
    PlanTerm *d = new_term(pl);
    if (!d) return;
    t = &pl->terms[ti];
    d->expr = t->expr;
    d->mask = t->mask;
    d->on_item = t->on_item;
    d->varies = t->varies;
    d->group = t->group;
    d->parent = ti;
    t = d;
  }
  t->op = op;
  t->item = item;
  t->column = column;
  t->col_expr = skip_collate(col);
  t->value = value;
  t->left = left;
  t->right = right;
  t->prereq = prereq;
  t->usable = 1;
  if (pl->hooks.term_info) pl->hooks.term_info(pl->hooks.ctx, t);
}

/* a = c1 OR a = c2 OR ...: an IN list on a (constants only). */
static int or_collect(Planner *pl, SqlExpr *e, SqlExpr **col, SqlExprList *list) {
  if (e->op == SQL_E_BINARY && e->sub == TK_OR)
    return or_collect(pl, e->a, col, list) && or_collect(pl, e->b, col, list);
  if (e->op != SQL_E_BINARY || e->sub != TK_EQ) return 0;
  SqlExpr *c = e->a, *v = e->b;
  int column;
  if (!c || !v) return 0;
  if (c->op != SQL_E_COLREF) {
    SqlExpr *x = c;
    c = v;
    v = x;
  }
  if (c->op != SQL_E_COLREF || col_item(pl, c, &column) < 0) return 0;
  if (v->op != SQL_E_INTEGER && v->op != SQL_E_FLOAT && v->op != SQL_E_STRING &&
      v->op != SQL_E_VARIABLE && v->op != SQL_E_NULL)
    return 0;
  if (*col && ((*col)->cursor != c->cursor || (*col)->column != c->column)) return 0;
  *col = c;
  if (list->n == list->cap) {
    int cap = list->cap ? list->cap * 2 : 4;
    SqlExprItem *a = util_arena_zalloc(pl->arena, sizeof(SqlExprItem) * (size_t)cap);
    if (!a) {
      pl->rc = SHALE_NOMEM;
      return 0;
    }
    if (list->n) memcpy(a, list->a, sizeof(SqlExprItem) * (size_t)list->n);
    list->a = a;
    list->cap = cap;
  }
  list->a[list->n++].expr = v;
  return 1;
}

static void analyse(Planner *pl, int ti);

/* Conjuncts of one OR disjunct d become terms of a new group. */
static void add_group_terms(Planner *pl, int ti, int g, SqlExpr *d) {
  if (d->op == SQL_E_BINARY && d->sub == TK_AND) {
    add_group_terms(pl, ti, g, d->a);
    add_group_terms(pl, ti, g, d->b);
    return;
  }
  PlanTerm *t = new_term(pl);
  if (!t) return;
  const PlanTerm * or = &pl->terms[ti];
  t->expr = d;
  t->mask = pl->hooks.mask(pl->hooks.ctx, d);
  t->on_item = or->on_item;
  t->parent = ti;
  t->group = g;
  if (d->op == SQL_E_BINARY && d->sub == TK_OR) return; /* nested OR: no path */
  analyse(pl, pl->nterm - 1);
}

static void add_or_disjuncts(Planner *pl, int ti, SqlExpr *e) {
  if (e->op == SQL_E_BINARY && e->sub == TK_OR) {
    add_or_disjuncts(pl, ti, e->a);
    add_or_disjuncts(pl, ti, e->b);
    return;
  }
  if (pl->rc) return;
  if (pl->ngroup == pl->capgroup) {
    int cap = pl->capgroup ? pl->capgroup * 2 : 8;
    int *a = util_arena_alloc(pl->arena, sizeof(int) * (size_t)cap);
    if (!a) {
      pl->rc = SHALE_NOMEM;
      return;
    }
    if (pl->ngroup) memcpy(a, pl->group_or, sizeof(int) * (size_t)pl->ngroup);
    pl->group_or = a;
    pl->capgroup = cap;
  }
  int g = pl->ngroup++;
  pl->group_or[g] = ti;
  add_group_terms(pl, ti, g, e);
}

/* An OR term whose every disjunct might have an index path of its own. */
static void add_or_groups(Planner *pl, int ti, SqlExpr *e) {
  if (e->height > 100) return;
  add_or_disjuncts(pl, ti, e);
}

/* A string literal node in the arena. */
static SqlExpr *str_expr(Planner *pl, const char *z, size_t n, const SqlExpr *like) {
  SqlExpr *x = util_arena_zalloc(pl->arena, sizeof *x);
  char *c = util_arena_strndup(pl->arena, z, n);
  if (!x || !c) {
    pl->rc = SHALE_NOMEM;
    return NULL;
  }
  x->op = SQL_E_STRING;
  x->z = c;
  x->height = 1;
  x->span = like->b->span;
  return x;
}

/* col LIKE 'abc%' (NOCASE column) / col GLOB 'abc*' (BINARY column), TEXT
 * affinity, no ESCAPE: two derived ranges col >= 'abc' AND col < 'abd' (the
 * LIKE itself is still tested on every row). */
static void like_ranges(Planner *pl, int ti, SqlExpr *e) {
  if ((e->flags & SQL_EF_NOT) || e->c || !e->a || !e->b || e->b->op != SQL_E_STRING) return;
  int glob = e->sub == TK_GLOB;
  if (e->sub != TK_LIKE && !glob) return;
  int column;
  int item = col_item(pl, e->a, &column);
  if (item < 0 || column < 0 || pl->items[item].is_sub) return;
  if (pl->items[item].tab->cols[column].affinity != AFF_TEXT) return;
  const char *z = e->b->z;
  size_t n = 0;
  while (z[n] &&
         !(glob ? (z[n] == '*' || z[n] == '?' || z[n] == '[') : (z[n] == '%' || z[n] == '_')))
    n++;
  if (n == 0) return;
  unsigned char last = (unsigned char)z[n - 1];
  /* the upper bound increments the last byte; skip the cases where that
   * leaves the letters (case folding would reorder it) or overflows */
  if (last == 0xff || last == 0xbf || last == 0x7f) return;
  if (!glob && (last == 'Z' || last == 'z' || last == '@' || last == '`')) return;
  SqlExpr *lov = str_expr(pl, z, n, e), *hiv = str_expr(pl, z, n, e);
  if (!lov || !hiv) return;
  ((char *)hiv->z)[n - 1] = (char)(last + 1);
  int li = pl->nterm;
  PlanTerm *lo = new_term(pl);
  if (!lo) return;
  *lo = pl->terms[ti];
  lo->parent = ti;
  int hj = pl->nterm;
  PlanTerm *hi = new_term(pl);
  if (!hi) return;
  *hi = pl->terms[ti];
  hi->parent = ti;
  add_form(pl, li, PLAN_OP_GE, e->a, lov, e->a, lov);
  add_form(pl, hj, PLAN_OP_LT, e->a, hiv, e->a, hiv);
  /* LIKE folds ASCII case: the ranges hold in NOCASE order (a NOCASE index
   * serves them, whatever the column's collation); GLOB: in BINARY order */
  for (int k = li; k <= hj && k < pl->nterm; k++) {
    PlanTerm *t = &pl->terms[k];
    t->coll = glob ? NULL : "NOCASE";
    t->collseq = glob ? NULL : &record_coll_nocase;
  }
}

static void analyse(Planner *pl, int ti) {
  SqlExpr *e = pl->terms[ti].expr;
  switch (e->op) {
    case SQL_E_BINARY: {
      int op = 0;
      switch (e->sub) {
        case TK_EQ:
          op = PLAN_OP_EQ;
          break;
        case TK_IS:
          op = PLAN_OP_IS;
          break;
        case TK_LT:
          op = PLAN_OP_LT;
          break;
        case TK_LE:
          op = PLAN_OP_LE;
          break;
        case TK_GT:
          op = PLAN_OP_GT;
          break;
        case TK_GE:
          op = PLAN_OP_GE;
          break;
        case TK_OR: {
          SqlExpr *col = NULL;
          SqlExprList *list = util_arena_zalloc(pl->arena, sizeof *list);
          SqlExpr *in = util_arena_zalloc(pl->arena, sizeof *in);
          if (!list || !in) {
            pl->rc = SHALE_NOMEM;
            return;
          }
          if (!or_collect(pl, e, &col, list) || !col || list->n < 2) {
            if (pl->terms[ti].group < 0) add_or_groups(pl, ti, e);
            return;
          }
          in->op = SQL_E_IN;
          in->a = col;
          in->list = list;
          in->span = e->span;
          in->height = e->height;
          add_form(pl, ti, PLAN_OP_IN, col, in, col, NULL);
          return;
        }
        default:
          return;
      }
      if (!e->a || !e->b) return;
      add_form(pl, ti, op, e->a, e->b, e->a, e->b);
      add_form(pl, ti, commute(op), e->b, e->a, e->a, e->b);
      return;
    }
    case SQL_E_ISNULL:
      add_form(pl, ti, PLAN_OP_ISNULL, e->a, NULL, e->a, NULL);
      return;
    case SQL_E_BETWEEN:
      if (e->flags & SQL_EF_NOT) return;
      if (!e->a || !e->b || !e->c) return;
      {
        /* two derived ranges, "a >= b" and "a <= c", each with its commuted
         * form as SQLite's exprAnalyze (11 BETWEEN x AND y is y >= 11); the
         * BETWEEN itself has no form */
        int column;
        if (col_item(pl, e->a, &column) < 0 && col_item(pl, e->b, &column) < 0 &&
            col_item(pl, e->c, &column) < 0)
          return;
        PlanTerm *lo = new_term(pl);
        if (!lo) return;
        *lo = pl->terms[ti];
        lo->parent = ti;
        int li = pl->nterm - 1;
        PlanTerm *hi = new_term(pl);
        if (!hi) return;
        *hi = pl->terms[ti];
        hi->parent = ti;
        int hj = pl->nterm - 1;
        add_form(pl, li, PLAN_OP_GE, e->a, e->b, e->a, e->b);
        add_form(pl, li, PLAN_OP_LE, e->b, e->a, e->a, e->b);
        add_form(pl, hj, PLAN_OP_LE, e->a, e->c, e->a, e->c);
        add_form(pl, hj, PLAN_OP_GE, e->c, e->a, e->a, e->c);
      }
      return;
    case SQL_E_LIKE:
      like_ranges(pl, ti, e);
      return;
    case SQL_E_IN:
      if (e->flags & (SQL_EF_NOT | SQL_EF_TVF)) return;
      if (e->table || !e->a || e->a->op == SQL_E_ROW) return;
      if (!e->list && !e->select) return;
      add_form(pl, ti, PLAN_OP_IN, e->a, e, e->a, NULL);
      return;
    default:
      return;
  }
}

void plan_add_clause(Planner *pl, SqlExpr *e, int on_item) {
  if (!e || pl->rc) return;
  if (e->op == SQL_E_BINARY && e->sub == TK_AND) {
    plan_add_clause(pl, e->a, on_item);
    plan_add_clause(pl, e->b, on_item);
    return;
  }
  PlanTerm *t = new_term(pl);
  if (!t) return;
  t->expr = e;
  t->on_item = on_item;
  t->mask = pl->hooks.mask(pl->hooks.ctx, e);
  if (t->mask == 0 && !pl->hooks.is_constant(pl->hooks.ctx, e)) t->varies = 1;
  analyse(pl, pl->nterm - 1);
}

/* ---- index column rules ---- */

static int is_numeric_aff(char a) { return a == AFF_NUMERIC || a == AFF_INTEGER || a == AFF_REAL; }

int plan_aff_ok(const PlanTerm *t, char caff) {
  char a = t->aff;
  if (a == 0 || a == AFF_BLOB) return 1;
  if (a == AFF_TEXT) return caff == AFF_TEXT;
  return is_numeric_aff(caff);
}

int plan_index_col_ok(const PlanTerm *t, const Table *tab, const Index *idx, int j) {
  int col = idx ? idx->cols[j].col : -1;
  if (col == INDEX_COL_EXPR) return 0;
  if (t->column != col) return 0;
  if (col >= 0) {
    const char *ic = idx->cols[j].coll ? idx->cols[j].coll : "BINARY";
    const char *tc = t->coll ? t->coll : "BINARY";
    if (util_stricmp(ic, tc) != 0) return 0;
  }
  return plan_aff_ok(t, col >= 0 ? tab->cols[col].affinity : AFF_INTEGER);
}

/* ---- partial indexes ---- */

/* Is a term from clause on_item acceptable under the mask ok_on (bit 0 =
 * WHERE/inner ON, bit i+1 = ON of item i)? on_item -2 (WHERE after a
 * RIGHT JOIN) never is. */
static int on_ok(uint64_t ok_on, int on_item) {
  if (on_item < -1) return 0;
  return (int)((ok_on >> (on_item + 1 < 63 ? on_item + 1 : 63)) & 1);
}

static int lit_op(int op) {
  return op == SQL_E_INTEGER || op == SQL_E_FLOAT || op == SQL_E_STRING || op == SQL_E_BLOB ||
         op == SQL_E_NULL;
}

/* Does the schema expression ie (unresolved, on tab) equal the resolved qe? */
static int compile_expr_same(const Table *tab, int cursor, const SqlExpr *ie, const SqlExpr *qe) {
  if (!ie || !qe) return ie == qe;
  if (ie->op == SQL_E_ID || ie->op == SQL_E_COLUMN) {
    if (qe->op != SQL_E_COLREF || qe->cursor != cursor || qe->depth != 0) return 0;
    int c = schema_table_column_index(tab, ie->z);
    if (c < 0) {
      if (util_stricmp(ie->z, "rowid") == 0 || util_stricmp(ie->z, "oid") == 0 ||
          util_stricmp(ie->z, "_rowid_") == 0)
        c = -1;
      else
        return 0;
    }
    int qc = qe->column;
    if (c >= 0 && c == tab->rowid_alias) c = -1;
    if (qc >= 0 && qc == tab->rowid_alias) qc = -1;
    return c == qc;
  }
  if (ie->op != qe->op || ie->sub != qe->sub) return 0;
  if (lit_op(ie->op)) {
    if (ie->op == SQL_E_NULL) return 1;
    return ie->z && qe->z && strcmp(ie->z, qe->z) == 0;
  }
  switch (ie->op) {
    case SQL_E_UNARY:
    case SQL_E_BINARY:
    case SQL_E_ISNOT:
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL:
      if ((ie->flags & SQL_EF_NOT) != (qe->flags & SQL_EF_NOT)) return 0;
      return compile_expr_same(tab, cursor, ie->a, qe->a) &&
             compile_expr_same(tab, cursor, ie->b, qe->b);
    default:
      return 0;
  }
}

/* Is "col IS NOT NULL" (ie) implied by a query term comparing that column? */
static int implies_notnull(const Planner *pl, int item, const SqlExpr *ie, uint64_t ok_on) {
  const SqlExpr *c = NULL;
  if (ie->op == SQL_E_NOTNULL)
    c = ie->a;
  else if (ie->op == SQL_E_ISNOT && ie->b && ie->b->op == SQL_E_NULL)
    c = ie->a;
  if (!c || (c->op != SQL_E_ID && c->op != SQL_E_COLUMN)) return 0;
  const Table *tab = pl->items[item].tab;
  int col = schema_table_column_index(tab, c->z);
  if (col < 0) return 0;
  if (col == tab->rowid_alias && !tab->without_rowid) col = -1;
  for (int i = 0; i < pl->nterm; i++) {
    const PlanTerm *t = &pl->terms[i];
    if (t->item != item || t->column != col || t->group >= 0) continue;
    if (!on_ok(ok_on, t->on_item)) continue;
    if (t->op & (PLAN_OP_EQ | PLAN_OP_RANGE | PLAN_OP_IN)) return 1;
  }
  return 0;
}

static int partial_ok_expr(const Planner *pl, int item, SqlExpr *w, uint64_t ok_on) {
  if (w->op == SQL_E_BINARY && w->sub == TK_AND)
    return partial_ok_expr(pl, item, w->a, ok_on) && partial_ok_expr(pl, item, w->b, ok_on);
  if (implies_notnull(pl, item, w, ok_on)) return 1;
  for (int i = 0; i < pl->nterm; i++) {
    const PlanTerm *t = &pl->terms[i];
    if (t->parent >= 0) continue;
    if (!on_ok(ok_on, t->on_item)) continue;
    if (compile_expr_same(pl->items[item].tab, pl->items[item].cursor, w, t->expr)) return 1;
  }
  return 0;
}

/* ---- access paths ---- */

static int is_left(const PlanItem *it) { return (it->jointype & SQL_JOIN_LEFT) != 0; }

/* May term t restrict item i's loop when the items in avail are looped? */
static int term_usable(const Planner *pl, const PlanTerm *t, int i, uint64_t avail) {
  if (!t->op || !t->usable || t->item != i) return 0;
  if (t->group != pl->cur_group) return 0;
  if (t->prereq & ~avail) return 0;
  if (is_left(&pl->items[i])) return t->on_item == i;
  return t->on_item == -1;
}

/* The columns of idx SQLite counts as held by it: all of them, but for the
 * UNIQUE and PRIMARY KEY constraint indexes of a WITHOUT ROWID table only
 * the declared key (SQLite builds those before it appends the primary key
 * columns, and never counts the appended ones as covered). */
static int cover_cols(const Table *tab, const Index *idx) {
  if (tab->without_rowid && idx != tab->pk_index && idx->origin != INDEX_ORIGIN_CREATE)
    return idx->nkey;
  return idx->ncol;
}

/* Does idx hold every column the query reads? A generated column read
 * needs the whole row (SQLite counts every column as used then). */
static int covers(const PlanItem *it, const Index *idx) {
  const Table *tab = it->tab;
  if (it->no_cover) return 0;
  if (it->colused & bit(63)) return 0;
  int ncov = cover_cols(tab, idx);
  for (int c = 0; c < tab->ncol && c < 63; c++) {
    if (!(it->colused & bit(c))) continue;
    if (tab->cols[c].hidden == COL_VIRTUAL || tab->cols[c].hidden == COL_STORED) return 0;
    if (c == tab->rowid_alias && !tab->without_rowid) continue;
    int found = 0;
    for (int j = 0; j < ncov && !found; j++) found = idx->cols[j].col == c;
    if (!found) return 0;
  }
  return 1;
}

/* ---- terms an index covers (SQLite's sqlite3ExprCoveredByIndex) ---- */

typedef struct CoverWalk {
  const PlanItem *it;
  const Index *idx;
  int miss;
} CoverWalk;

static int cover_walk(SqlWalker *w, SqlExpr *e) {
  CoverWalk *cw = w->arg; /* (subqueries are not entered, as in SQLite) */
  if (e->op != SQL_E_COLREF || e->cursor != cw->it->cursor) return SQL_WALK_CONTINUE;
  const Table *tab = cw->it->tab;
  int c = e->column;
  if (!tab->without_rowid && (c < 0 || c == tab->rowid_alias)) return SQL_WALK_CONTINUE;
  for (int j = 0; j < cw->idx->ncol; j++)
    if (cw->idx->cols[j].col == c) return SQL_WALK_CONTINUE;
  cw->miss = 1;
  return SQL_WALK_ABORT;
}

int plan_index_covers_expr(const PlanItem *it, const Index *idx, SqlExpr *e) {
  CoverWalk cw = {it, idx, 0};
  SqlWalker w = {cover_walk, NULL, &cw};
  sql_walk_expr(&w, e);
  return !cw.miss;
}

/* Would a scan of idx (not covering) help an order the query asks for:
 * does it hold a column of item i the order names (SQLite's
 * indexMightHelpWithOrderBy)? */
static int index_may_order(const Planner *pl, int i, const Index *idx) {
  const SqlExprList *ob = pl->want_ob;
  if (!ob) return 0;
  const Table *tab = pl->items[i].tab;
  for (int k = 0; k < ob->n; k++) {
    int c;
    if (col_item(pl, ob->a[k].expr, &c) != i) continue;
    if (c < 0 && !tab->without_rowid) return 1;
    for (int j = 0; j < idx->nkey; j++)
      if (idx->cols[j].col == c) return 1;
  }
  return 0;
}

/* The cost of the table rows a scan of idx (not covering) looks up, of
 * rsize entries (SQLite's nLookup): N + 16, less what the terms the index
 * entry answers leave out (plan_index_covers_expr, in the order of the
 * terms up to the first it does not), as SQLite's truth heuristic:
 * LogEst 1 each, 20 for an = or IS. The loop looks a row up only when
 * the query reads a column the index lacks (compile_where.c: SQLite's
 * deferred seek), so a term of the index's columns tested in a loop
 * further in saves lookups too. */
static PlanLogEst lookup_est(const Planner *pl, int i, const Index *idx, PlanLogEst rsize) {
  int n = rsize + 16, w0 = pl->where_first;
  /* SQLite's list: the WHERE's terms, then the ON clauses', then the
   * terms derived from them (its virtual terms: a column comparison's
   * commuted form, BETWEEN's halves, ...; not the transitive ones) */
  for (int j = 0; j < 2 * pl->nterm; j++) {
    int derived = j >= pl->nterm, k = derived ? j - pl->nterm : (w0 + j) % pl->nterm;
    const PlanTerm *t = &pl->terms[k];
    if ((t->parent >= 0) != derived || t->group >= 0 || t->equiv) continue;
    if (!plan_index_covers_expr(&pl->items[i], idx, t->expr)) break;
    n -= (t->op & (PLAN_OP_EQ | PLAN_OP_IS)) ? 20 : 1;
  }
  return (PlanLogEst)n;
}

/* Cost of the sorter when the loops deliver the first k of the n terms of
 * the order (SQLite's whereSortingCost): rows times log rows of the rows
 * sorted (pl->sort_rows: the estimate of the query's rows, SQLite's
 * nRowEst), scaled by the share of terms left; the result columns are
 * taken as at most 30 (nCol LogEst 10) and a DISTINCT sort as keeping
 * half the rows. */
static PlanLogEst sort_est(const Planner *pl, int k, int n) {
  PlanLogEst rows = pl->sort_rows > 0 ? pl->sort_rows : 0;
  int c = rows + 10;
  if (k > 0 && k < n) c += plan_logest((uint64_t)((n - k) * 100 / n)) - 66;
  if (pl->distinct && rows > 10) rows -= 10;
  c += est_log(rows);
  return (PlanLogEst)c;
}

/* A cost plus the sorter's for k of n terms delivered, and SQLite's small
 * penalty (3) that favours plans needing no sort. */
static PlanLogEst with_sort(const Planner *pl, PlanLogEst cost, int k, int n) {
  return (PlanLogEst)(plan_logest_add(cost, sort_est(pl, k, n)) + 3);
}

/* May term t hold ORDER BY term e (a column of t's item) constant? Its
 * collation must be the ORDER BY's, or rows equal under it may still
 * differ in order. */
static int pin_coll_ok(const Planner *pl, const PlanTerm *t, SqlExpr *e, int column) {
  const char *oc = pl->hooks.coll_name ? pl->hooks.coll_name(pl->hooks.ctx, e) : NULL;
  return column < 0 || t->op == PLAN_OP_ISNULL ||
         util_stricmp(oc ? oc : "BINARY", t->coll ? t->coll : "BINARY") == 0;
}

/* Is the ORDER BY term e (column of L's item) held constant in L's loop by
 * one of its equality terms, the items of outer looped outside? */
static int order_pinned(const Planner *pl, const PlanLevel *L, SqlExpr *e, int column,
                        uint64_t outer) {
  for (int j = 0; j < L->neq; j++) {
    const PlanTerm *t = &pl->terms[L->eq[j]];
    if (t->column != column || t->op == PLAN_OP_IN) continue;
    if (pin_coll_ok(pl, t, e, column)) return 1;
  }
  /* or by a WHERE term col = / IS value, col IS NULL, whose value reads
   * only the loops outside (SQLite's WHERE-term pass of
   * wherePathSatisfiesOrderBy): every row the loop hands out for one outer
   * row holds that value */
  for (int i = 0; i < pl->nterm; i++) {
    const PlanTerm *t = &pl->terms[i];
    if (t->item != L->item || t->column != column || t->on_item != -1 || t->group >= 0) continue;
    if (!(t->op & (PLAN_OP_EQ | PLAN_OP_IS | PLAN_OP_ISNULL)) || t->varies) continue;
    if ((t->prereq & ~outer) || !pin_coll_ok(pl, t, e, column)) continue;
    if (t->equiv == 2) continue; /* its comparison's affinity may let several values by */
    return 1;
  }
  return 0;
}

/* Is the column NOT NULL (a WITHOUT ROWID table's primary key columns are)? */
static int col_notnull(const Table *tab, int c) {
  if (c < 0) return 1;
  if (c >= tab->ncol) return 0;
  if (tab->cols[c].notnull) return 1;
  for (int j = 0; tab->without_rowid && tab->pk_index && j < tab->pk_index->nkey; j++)
    if (tab->pk_index->cols[j].col == c) return 1;
  return 0;
}

/* Once the first pos key columns of L's UNIQUE index are held (equality
 * terms) or delivered in order (NOT NULL columns), every row of the loop
 * differs: SQLite's order-distinct loop, past which later ORDER BY terms on
 * it are settled. */
static int unique_run(const Planner *pl, const PlanLevel *L, int pos) {
  const Index *idx = L->idx;
  if (!idx->unique || pos < idx->nkey) return 0;
  for (int j = 0; j < idx->nkey; j++) {
    int c = idx->cols[j].col;
    if (c == INDEX_COL_EXPR) return 0;
    if (j < L->neq) {
      int op = pl->terms[L->eq[j]].op;
      if (op == PLAN_OP_IN || (op != PLAN_OP_EQ && !col_notnull(idx->table, c))) return 0;
    } else if (!col_notnull(idx->table, c)) {
      return 0;
    }
  }
  return 1;
}

/* The index column at position pos of level L's order (-1: the rowid)
 * and its collation. */
static int order_col_at(const PlanLevel *L, int pos, const char **coll) {
  const Index *idx = L->idx;
  *coll = "BINARY";
  if (!idx || pos >= idx->nkey) return -1;
  if (idx->cols[pos].coll) *coll = idx->cols[pos].coll;
  return idx->cols[pos].col;
}

/* order_run for a GROUP BY whose groups may come in any order of its terms
 * (SQLite's WHERE_GROUPBY without WHERE_SORTBYGROUP): each column of the
 * loop's order may hold any term from k0 on not yet held, as long as
 * every row of a group comes together. Returns ob->n when all are held,
 * else k0 plus the number of leading terms from k0 held. */
static int group_run(const Planner *pl, const PlanLevel *L, SqlExprList *ob, int k0,
                     uint64_t settled, int ncols, int *distinct) {
  int n = ob->n - k0;
  uint64_t held = 0, all = n == 64 ? ~(uint64_t)0 : (bit(n) - 1);
  for (int pos = 0;;) {
    for (int k = 0; k < n; k++) {
      if (held & bit(k)) continue;
      SqlExpr *e = ob->a[k0 + k].expr;
      uint64_t done = settled | (*distinct ? bit(L->item) : 0);
      int column;
      if ((done && pl->hooks.mask && (pl->hooks.mask(pl->hooks.ctx, e) & ~done) == 0) ||
          (col_item(pl, e, &column) == L->item && order_pinned(pl, L, e, column, settled)))
        held |= bit(k);
    }
    if (held == all || *distinct) break;
    while (pos < L->neq && pl->terms[L->eq[pos]].op != PLAN_OP_IN) pos++;
    if (pos >= ncols) break;
    const char *icoll;
    int icol = order_col_at(L, pos, &icoll), k = 0;
    for (; k < n; k++) {
      int column;
      SqlExpr *e = ob->a[k0 + k].expr;
      if ((held & bit(k)) || col_item(pl, e, &column) != L->item || column != icol) continue;
      const char *oc = pl->hooks.coll_name ? pl->hooks.coll_name(pl->hooks.ctx, e) : NULL;
      if (icol < 0 || util_stricmp(oc ? oc : "BINARY", icoll) == 0) break;
    }
    if (k == n) break;
    held |= bit(k);
    if (icol < 0) *distinct = 1;
    pos++;
    if (L->idx && unique_run(pl, L, pos)) *distinct = 1;
  }
  if (held == all) return ob->n;
  int k = 0;
  while (k < n && (held & bit(k))) k++;
  return k0 + k;
}

/* How far does level L deliver ob, starting at term k0? Returns the first
 * term it does not deliver (ob->n: all). Terms reading only the items of
 * settled (outer loops whose rows are already all distinct) are skipped;
 * *dir is the scan direction the terms ask for (-1: any, 1: backwards);
 * *distinct is set once the order reaches the rowid, past which every row
 * of the loop differs (SQLite's order-distinct loop). */
static int order_run(const Planner *pl, const PlanLevel *L, SqlExprList *ob, int k0, int groupby,
                     uint64_t settled, int *dir, int *distinct) {
  const PlanItem *it = &pl->items[L->item];
  const Table *tab = it->tab;
  *dir = -1;
  *distinct = 0;
  if (!tab || it->is_sub || !ob || k0 >= ob->n) return k0;
  /* the ordering columns: table column numbers (-1 rowid) with collation and desc */
  const Index *idx = L->idx;
  int ncols = 0;
  if (L->kind == PLAN_AUTO || L->kind == PLAN_OR || L->kind == PLAN_VTAB) return k0;
  if (L->kind == PLAN_ROWID_EQ) {
    /* one row per outer row unless it is an IN list */
    if (pl->terms[L->eq[0]].op == PLAN_OP_IN) return k0;
    *distinct = 1;
  } else if (idx) {
    /* equality columns are constant; an IN column orders like the index
     * (its set is read in the index column's collation order) */
    ncols = idx->nkey;
    if (!tab->without_rowid) ncols = idx->nkey + 1; /* then the rowid */
  } else if (tab->without_rowid) {
    return k0;
  } else {
    ncols = 1; /* rowid */
  }
  int pos = 0;
  /* every key column of a UNIQUE index held: one row */
  if (idx && L->kind == PLAN_INDEX && L->lo < 0 && L->hi < 0 && unique_run(pl, L, L->neq))
    *distinct = 1;
  if (groupby == 2 && ob->n - k0 <= 64) return group_run(pl, L, ob, k0, settled, ncols, distinct);
  for (int k = k0; k < ob->n; k++) {
    int column;
    SqlExpr *e = ob->a[k].expr;
    uint64_t done = settled | (*distinct ? bit(L->item) : 0);
    if (done && pl->hooks.mask && (pl->hooks.mask(pl->hooks.ctx, e) & ~done) == 0) continue;
    if (*distinct) return k;
    int item = col_item(pl, e, &column);
    if (item != L->item) return k;
    if (order_pinned(pl, L, e, column, settled)) continue;
    while (pos < L->neq && pl->terms[L->eq[pos]].op != PLAN_OP_IN) pos++;
    if (pos >= ncols) return k;
    int icol, idesc = 0;
    const char *icoll = "BINARY";
    if (idx && pos < idx->nkey) {
      icol = idx->cols[pos].col;
      idesc = pos < L->neq ? 0 : idx->cols[pos].desc; /* an IN set is ascending */
      icoll = idx->cols[pos].coll ? idx->cols[pos].coll : "BINARY";
    } else {
      icol = -1;
    }
    if (icol != column) return k;
    if (icol >= 0) {
      const char *oc = pl->hooks.coll_name ? pl->hooks.coll_name(pl->hooks.ctx, e) : NULL;
      if (util_stricmp(oc ? oc : "BINARY", icoll) != 0) return k;
    }
    if (!groupby) {
      int desc = ob->a[k].sort == SQL_SORT_DESC;
      /* NULLS placed against the index order (a rowid is never NULL) */
      if (icol >= 0 && ob->a[k].nulls == SQL_NULLS_LAST && !desc) return k;
      if (icol >= 0 && ob->a[k].nulls == SQL_NULLS_FIRST && desc) return k;
      int r = desc ^ idesc;
      if (*dir >= 0 && *dir != r) return k;
      *dir = r;
    }
    if (icol < 0) *distinct = 1;
    pos++;
    if (idx && unique_run(pl, L, pos)) *distinct = 1;
  }
  return ob->n;
}

/* Does level L alone deliver order_by? Sets *rev. */
static int order_ok(const Planner *pl, const PlanLevel *L, SqlExprList *ob, int groupby, int *rev) {
  int dir, distinct;
  if (!ob || ob->n == 0 || order_run(pl, L, ob, 0, groupby, 0, &dir, &distinct) < ob->n) return 0;
  *rev = dir > 0;
  return 1;
}

/* Follow ob through the loops lv[0..n), each level continuing the order
 * where the one outside it stopped. Returns the first term not delivered;
 * *live: every level so far ended distinct, so an inner loop may continue;
 * *settled: those levels' items; *rev: the levels that scan backwards. */
static int chain_walk(const Planner *pl, const PlanLevel *lv, int n, SqlExprList *ob, int groupby,
                      uint64_t *settled, uint64_t *rev, int *live) {
  int k = 0;
  *settled = *rev = 0;
  *live = ob && ob->n > 0 && n < 64;
  for (int d = 0; d < n && *live && k < ob->n; d++) {
    int dir, distinct;
    k = order_run(pl, &lv[d], ob, k, groupby, *settled, &dir, &distinct);
    if (dir > 0) *rev |= bit(d);
    *live = distinct;
    *settled |= bit(lv[d].item);
  }
  return *live || (ob && k == ob->n) ? k : 0;
}

/* The leading terms of ob the loops lv[0..n) deliver, each level continuing
 * where the one outside it stopped while those ended distinct, as SQLite's
 * wherePathSatisfiesOrderBy finds a prefix: only when the walk stops at a
 * loop that is not order-distinct (0 when every loop walked was, or at a
 * virtual table or a MULTI-INDEX OR loop); *rev: the levels that scan
 * backwards. */
static int chain_prefix(const Planner *pl, const PlanLevel *lv, int n, SqlExprList *ob, int groupby,
                        uint64_t *rev) {
  int k = 0;
  *rev = 0;
  uint64_t settled = 0;
  for (int d = 0; d < n && d < 64 && ob && k < ob->n; d++) {
    if (lv[d].kind == PLAN_OR || lv[d].kind == PLAN_VTAB) return 0;
    int dir, distinct;
    k = order_run(pl, &lv[d], ob, k, groupby, settled, &dir, &distinct);
    if (dir > 0) *rev |= bit(d);
    if (!distinct) return k;
    settled |= bit(lv[d].item);
  }
  return ob && k == ob->n ? k : 0;
}

/* Do the loops lv[0..n) deliver ob together? Sets *revmask. */
static int chain_order(const Planner *pl, const PlanLevel *lv, int n, SqlExprList *ob, int groupby,
                       uint64_t *revmask) {
  uint64_t settled;
  int live;
  return ob && ob->n > 0 && chain_walk(pl, lv, n, ob, groupby, &settled, revmask, &live) == ob->n;
}

/* cost plus the sorting of the rows that the loops lv[0..n) do not
 * deliver in ob's order: with a prefix of an ORDER BY delivered only the
 * rest is sorted, in runs, as SQLite's whereSortingCost scales it (by the
 * share of the terms left). A GROUP BY, or a caller that sorts in full
 * anyway (no PLAN_ORDER_PREFIX), pays the whole sort. */
static PlanLogEst sort_part(const Planner *pl, const PlanLevel *lv, int n, SqlExprList *ob,
                            int groupby, PlanLogEst cost) {
  uint64_t rev;
  int k = groupby || !pl->prefix ? 0 : chain_prefix(pl, lv, n, ob, groupby, &rev);
  return with_sort(pl, cost, k, ob->n);
}

/* After the choice: the loops deliver ob together when level 0 alone does
 * not; a level 0 that delivers no order scans forwards. */
static void finish_order(const Planner *pl, Plan *out, SqlExprList *ob, int groupby) {
  uint64_t rev;
  if (!out->order_ok && chain_order(pl, out->levels, out->nlevel, ob, groupby, &rev)) {
    out->order_ok = 1;
    for (int d = 0; d < out->nlevel; d++) out->levels[d].reverse = (rev & bit(d)) != 0;
  }
  if (!out->order_ok) out->levels[0].reverse = 0;
  if (!out->order_ok && ob && !groupby && pl->prefix) {
    /* a prefix delivered: the sorter orders each run of rows equal on it */
    int k = chain_prefix(pl, out->levels, out->nlevel, ob, groupby, &rev);
    if (k > 0 && k < ob->n) {
      out->order_prefix = k;
      for (int d = 0; d < out->nlevel; d++) out->levels[d].reverse = (rev & bit(d)) != 0;
    }
  }
}

/* Is e an integer literal between -1 and 1 (SQLite's sqlite3ExprIsInteger
 * test in its truth heuristic)? */
static int small_int(const SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_UNARY && (e->sub == TK_MINUS || e->sub == TK_PLUS) && e->a) e = e->a;
  if (e->op != SQL_E_INTEGER || !e->z) return 0;
  return strcmp(e->z, "0") == 0 || strcmp(e->z, "1") == 0;
}

/* The items a path depends on, as SQLite's WhereLoop.prereq: those the
 * values of the terms it uses read, and for a LEFT, RIGHT or CROSS JOIN
 * item every item on its left (SQLite's mPrereq, which keeps the order). */
static uint64_t level_prereq(const Planner *pl, const PlanLevel *L) {
  const PlanItem *it = &pl->items[L->item];
  uint64_t m = it->after;
  if (it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT | SQL_JOIN_CROSS))
    m |= L->item >= 63 ? ~(uint64_t)0 >> 1 : bit(L->item) - 1;
  if (L->kind == PLAN_VTAB) return m | (L->vpath >= 0 ? it->vpath[L->vpath].prereq : 0);
  for (int j = 0; j < L->neq; j++) m |= pl->terms[L->eq[j]].prereq;
  if (L->lo >= 0) m |= pl->terms[L->lo].prereq;
  if (L->hi >= 0) m |= pl->terms[L->hi].prereq;
  if (L->kind == PLAN_OR) m |= pl->terms[L->or_term].mask & ~bit(L->item);
  return m;
}

#define NO_ADJUST INT16_MIN /* residual: the path's rows are not adjusted */

/* Rows left after the terms on item i the path does not use, as SQLite's
 * whereLoopOutputAdjust guesses without likelihood(): each such term
 * takes LogEst 1 off (93%), and an equality (= or IS) caps the rows at
 * the index's (or table's) nrow less 20 (a quarter; 10, half, when
 * compared with -1, 0 or 1). As SQLite, only terms that read no item
 * beyond the path's own prerequisites count: a join term never reduces
 * the rows of a scan (its estimate holds whatever is looped outside it). */
static PlanLogEst residual(const Planner *pl, const PlanLevel *L, PlanLogEst nout,
                           PlanLogEst nrow) {
  uint64_t have = level_prereq(pl, L) | bit(L->item);
  int reduce = 0, n = nout;
  for (int i = 0; i < pl->nterm; i++) {
    const PlanTerm *t = &pl->terms[i];
    uint64_t mask = t->pmask ? t->pmask : t->mask;
    if (t->parent >= 0 || !(mask & bit(L->item)) || (mask & ~have)) continue;
    if (t->group >= 0) continue;
    int used = 0;
    for (int j = 0; j < L->neq && !used; j++)
      used = L->eq[j] == i || pl->terms[L->eq[j]].parent == i;
    if (L->lo >= 0 && (L->lo == i || pl->terms[L->lo].parent == i)) used = 1;
    if (L->hi >= 0 && (L->hi == i || pl->terms[L->hi].parent == i)) used = 1;
    if (L->kind == PLAN_OR && L->or_term == i) used = 1;
    if (used) continue;
    n--;
    if (t->pmask ? t->peq : (t->op & (PLAN_OP_EQ | PLAN_OP_IS)) != 0) {
      int k = small_int(t->pmask ? t->pconst : t->value) ? 10 : 20;
      if (reduce < k) reduce = k;
    }
  }
  if (n > nrow - reduce) n = nrow - reduce;
  return (PlanLogEst)n;
}

/* The LogEst of the values of an IN term (a list's length, 25 for a
 * subquery: SQLite's guess), 0 for another term. */
static PlanLogEst in_est(const PlanTerm *t) {
  if (t->op != PLAN_OP_IN) return 0;
  if (t->value->list) return plan_logest((uint64_t)t->value->list->n);
  return 46;
}

/* The rows of nout left by range bounds lo / hi (-1: none), as SQLite's
 * whereRangeScanEst without STAT4: each bound keeps a quarter, both
 * another quarter (1/64 in all), no fewer than LogEst 10, always fewer
 * than nout. */
static PlanLogEst range_est(PlanLogEst nout, int lo, int hi) {
  int nb = (lo >= 0) + (hi >= 0);
  int n = nout - 20 * nb - (nb == 2 ? 20 : 0);
  if (n < 10) n = 10;
  return (PlanLogEst)(n < nout - nb ? n : nout - nb);
}

/* The cost of a path at a position where outer rows (LogEst) are looped
 * outside it (SQLite's rSetup + nRow * rRun). */
static PlanLogEst run_cost(const PlanLevel *L, PlanLogEst outer) {
  return plan_logest_add(L->rsetup, (PlanLogEst)(L->rrun + outer));
}

/* Is a better than b: lower cost, then fewer rows, then a lower cost
 * before the sort (SQLite's solver compares (rCost, nRow, rUnsorted)); a
 * tie keeps b, the earlier candidate, as SQLite does. */
static int better(PlanLogEst acost, PlanLogEst arows, PlanLogEst aun, PlanLogEst bcost,
                  PlanLogEst brows, PlanLogEst bun) {
  if (acost != bcost) return acost < bcost;
  if (arows != brows) return arows < brows;
  return aun < bun;
}

/* The cost before the sort as SQLite's solver keeps it (rUnsorted): a plan
 * that needs no sort counts LogEst 2 less (its slight bias for them). */
static PlanLogEst unsorted(PlanLogEst cost, int sorted) {
  return (PlanLogEst)(sorted ? cost : cost - 2);
}

/* Consider a candidate; keep it in *best when cheaper. nrow: the rows of
 * the table or index the terms it does not use are capped at (NO_ADJUST:
 * none). orows: the rows looped outside (LogEst). */
static void consider(const Planner *pl, PlanLevel *cand, PlanLogEst nrow, PlanLogEst orows,
                     SqlExprList *ob, int groupby, int outer, PlanLevel *best, int *best_order) {
  if (nrow != NO_ADJUST) cand->nout = residual(pl, cand, cand->nout, nrow);
  int rev = 0, ord = 0;
  PlanLogEst cost = run_cost(cand, orows);
  if (pl->chain_ob && pl->cur_group < 0) {
    /* only paths that continue the order of the loops outside; the sort
     * they save is counted once the loops are complete */
    int distinct, k = order_run(pl, cand, pl->chain_ob, pl->chain_k, groupby, pl->chain_settled,
                                &rev, &distinct);
    if (k < pl->chain_ob->n && !distinct) return;
    PlanLogEst bc = best->kind >= 0 ? run_cost(best, orows) : 0;
    if (best->kind < 0 || better(cost, cand->nout, cost, bc, best->nout, bc)) {
      *best = *cand;
      best->reverse = 0;
      *best_order = 0;
    }
    return;
  }
  PlanLogEst un = cost, bcost = best->kind >= 0 ? run_cost(best, orows) : 0, bun = bcost;
  if (outer && ob) {
    ord = order_ok(pl, cand, ob, groupby, &rev);
    if (!ord) cost = sort_part(pl, cand, 1, ob, groupby, cost);
    un = unsorted(un, !ord);
    if (best->kind >= 0) {
      if (!*best_order) bcost = sort_part(pl, best, 1, ob, groupby, bcost);
      bun = unsorted(bun, !*best_order);
    }
  }
  if (best->kind < 0 || better(cost, cand->nout, un, bcost, best->nout, bun)) {
    *best = *cand;
    best->reverse = (uint8_t)(ord && rev);
    *best_order = ord;
  }
}

/* Find the range terms on column j of idx (idx NULL: rowid). */
static void find_range(const Planner *pl, int i, uint64_t avail, const Index *idx, int j, int *lo,
                       int *hi) {
  *lo = *hi = -1;
  const Table *tab = pl->items[i].tab;
  for (int k = 0; k < pl->nterm; k++) {
    const PlanTerm *t = &pl->terms[k];
    if (!(t->op & PLAN_OP_RANGE) || !term_usable(pl, t, i, avail)) continue;
    if (idx ? !plan_index_col_ok(t, tab, idx, j) : !plan_index_col_ok(t, tab, NULL, 0)) continue;
    if (t->op & (PLAN_OP_GT | PLAN_OP_GE)) {
      if (*lo < 0) *lo = k;
    } else if (*hi < 0) {
      *hi = k;
    }
  }
}

static void best_path(const Planner *pl, int i, uint64_t avail, PlanLogEst outer_rows,
                      SqlExprList *ob, int groupby, int outer, PlanLevel *best, int *best_order);

/* MULTI-INDEX OR: for each OR term on item i whose every disjunct has an
 * index (or rowid) path, a path through all of them: as SQLite's
 * whereLoopAddOr, the sum of the disjuncts' costs and rows, and LogEst 1
 * more cost (so it never ties its dearest disjunct). */
static void or_path(const Planner *pl, int i, uint64_t avail, PlanLogEst orows, SqlExprList *ob,
                    int groupby, int outer, PlanLevel *best, int *best_order) {
  Planner *mpl = (Planner *)pl; /* cur_group is scratch state of the search */
  for (int ti = 0; ti < pl->nterm; ti++) {
    const PlanTerm *t = &pl->terms[ti];
    if (t->parent >= 0 || t->group >= 0 || t->expr->op != SQL_E_BINARY || t->expr->sub != TK_OR)
      continue;
    if (!(t->mask & bit(i)) || (t->mask & ~(avail | bit(i)))) continue;
    if (is_left(&pl->items[i]) ? t->on_item != i : t->on_item != -1) continue;
    int nsub = 0;
    for (int g = 0; g < pl->ngroup; g++) nsub += pl->group_or[g] == ti;
    if (nsub < 2) continue;
    PlanLevel *subs = util_arena_zalloc(pl->arena, sizeof(PlanLevel) * (size_t)nsub);
    if (!subs) {
      mpl->rc = SHALE_NOMEM;
      return;
    }
    int k = 0, ok = 1;
    PlanLogEst rows = 0, cost = 0;
    for (int g = 0; g < pl->ngroup && ok; g++) {
      if (pl->group_or[g] != ti) continue;
      int ord;
      mpl->cur_group = g;
      best_path(pl, i, avail, 0, NULL, 0, 0, &subs[k], &ord);
      mpl->cur_group = -1;
      if (subs[k].kind < 0 || subs[k].kind == PLAN_SCAN) ok = 0;
      rows = k ? plan_logest_add(rows, subs[k].nout) : subs[k].nout;
      cost = k ? plan_logest_add(cost, subs[k].rrun) : subs[k].rrun;
      k++;
    }
    if (!ok) continue;
    PlanLevel c;
    memset(&c, 0, sizeof c);
    c.item = i;
    c.kind = PLAN_OR;
    c.lo = c.hi = -1;
    c.nsub = nsub;
    c.sub = subs;
    c.or_term = ti;
    c.nout = rows;
    c.rrun = (PlanLogEst)(cost + 1);
    consider(pl, &c, NO_ADJUST, orows, ob, groupby, outer, best, best_order);
  }
}

/* An automatic index on the join columns of item i (an inner loop that
 * would otherwise scan), built once per run of the loops: SQLite's costs
 * (a build of N log N times 7, or a half for a subquery; 20 rows per
 * lookup), never for a loop run fewer than LogEst 3 times. */
static void auto_path(const Planner *pl, int i, uint64_t avail, PlanLogEst outer_rows,
                      SqlExprList *ob, int groupby, int outer, PlanLevel *best, int *best_order) {
  const PlanItem *it = &pl->items[i];
  const Table *tab = it->tab;
  PlanLogEst N = item_est(it);
  PlanLevel c;
  if (pl->no_auto || outer_rows < 3) return;
  if (avail && best->kind == PLAN_SCAN && !it->not_indexed && !it->indexed_by && !it->no_cover &&
      !tab->has_generated) {
    memset(&c, 0, sizeof c);
    c.item = i;
    c.kind = PLAN_AUTO;
    c.lo = c.hi = -1;
    /* key columns in the order SQLite's EXPLAIN shows them: last term first */
    for (int k = pl->nterm - 1; k >= 0 && c.neq < 8; k--) {
      const PlanTerm *t = &pl->terms[k];
      if (!(t->op & (PLAN_OP_EQ | PLAN_OP_IS)) || !t->prereq || t->column < 0) continue;
      if (!term_usable(pl, t, i, avail) || !plan_aff_ok(t, tab->cols[t->column].affinity)) continue;
      int dup = 0;
      for (int j = 0; j < c.neq; j++) dup |= pl->terms[c.eq[j]].column == t->column;
      if (!dup) c.eq[c.neq++] = k;
    }
    if (c.neq > 0) {
      PlanLogEst rlog = est_log(N);
      int setup = rlog + N + (it->is_sub ? -10 : 28);
      c.rsetup = (PlanLogEst)(setup > 0 ? setup : 0);
      c.nout = 43;
      c.rrun = plan_logest_add(rlog, 43);
      c.covering = 1;
      consider(pl, &c, NO_ADJUST, outer_rows, ob, groupby, outer, best, best_order);
    }
  }
}

/* An index loop weighed so far for an item (the WHERE_INDEXED loops
 * SQLite's whereLoopAdjustCost compares): its costs, the terms it uses
 * and whether it covers. */
typedef struct Seen {
  PlanLogEst rrun, nout;
  uint8_t cov;
  int nterm;
  int terms[10];
} Seen;

#define MAX_SEEN 32

/* SQLite's whereLoopCheaperProperSubset: x uses a proper subset of y's
 * terms yet costs no more or returns no more rows (and covers only if y
 * does). */
static int cheaper_subset(const Seen *x, const Seen *y) {
  if (x->nterm >= y->nterm) return 0;
  if (x->rrun > y->rrun && x->nout > y->nout) return 0;
  for (int i = 0; i < x->nterm; i++) {
    int j = 0;
    while (j < y->nterm && y->terms[j] != x->terms[i]) j++;
    if (j == y->nterm) return 0;
  }
  return !(x->cov && !y->cov);
}

/* Weigh index loop c (its rows capped at nrow by the terms it does not
 * use), first adjusted against the index loops weighed before it as
 * SQLite's whereLoopAdjustCost does: a loop using a proper superset of
 * another's terms costs no more and returns fewer rows than it; one using
 * a proper subset, no less and more. */
static void index_candidate(const Planner *pl, PlanLevel *c, int cov, PlanLogEst nrow, Seen *seen,
                            int *nseen, PlanLogEst orows, SqlExprList *ob, int groupby, int outer,
                            PlanLevel *best, int *best_order) {
  c->nout = residual(pl, c, c->nout, nrow);
  Seen me;
  me.rrun = c->rrun;
  me.nout = c->nout;
  me.cov = (uint8_t)cov;
  me.nterm = 0;
  int ok = c->neq + (c->lo >= 0) + (c->hi >= 0) <= 10;
  for (int j = 0; ok && j < c->neq; j++) me.terms[me.nterm++] = c->eq[j];
  if (ok && c->lo >= 0) me.terms[me.nterm++] = c->lo;
  if (ok && c->hi >= 0) me.terms[me.nterm++] = c->hi;
  for (int k = 0; ok && k < *nseen; k++) {
    const Seen *p = &seen[k];
    if (cheaper_subset(p, &me)) {
      if (p->rrun < me.rrun) me.rrun = p->rrun;
      if (p->nout - 1 < me.nout) me.nout = (PlanLogEst)(p->nout - 1);
    } else if (cheaper_subset(&me, p)) {
      if (p->rrun > me.rrun) me.rrun = p->rrun;
      if (p->nout + 1 > me.nout) me.nout = (PlanLogEst)(p->nout + 1);
    }
  }
  c->rrun = me.rrun;
  c->nout = me.nout;
  consider(pl, c, NO_ADJUST, orows, ob, groupby, outer, best, best_order);
  if (ok && *nseen < MAX_SEEN) seen[(*nseen)++] = me;
}

/* The best access path for item i given the items in avail are looped
 * outside it (outer_rows of them, LogEst). outer: i is the outermost loop
 * (ORDER BY can be delivered). The costs are SQLite's (whereLoopAddBtree,
 * whereLoopAddBtreeIndex), in LogEst: a full scan N + 16 (3 per row); a
 * search log N for the seek, then per row 1 + 15 * (index row width /
 * table row width) in the index and 16 for the table row when the index
 * does not cover; an IN multiplies by its values. */
/* The rowid lookup of item i (a rowid table) through its first usable
 * `rowid = / IS / IN` term, into *c; 0 when it has none. N: its rows. */
static int rowid_eq_path(const Planner *pl, int i, uint64_t avail, PlanLogEst N, PlanLevel *c) {
  const Table *tab = pl->items[i].tab;
  for (int k = 0; k < pl->nterm; k++) {
    const PlanTerm *t = &pl->terms[k];
    if (t->column != -1 || !(t->op & (PLAN_OP_EQ | PLAN_OP_IS | PLAN_OP_IN))) continue;
    if (!term_usable(pl, t, i, avail) || !plan_index_col_ok(t, tab, NULL, 0)) continue;
    memset(c, 0, sizeof *c);
    c->item = i;
    c->lo = c->hi = -1;
    c->kind = PLAN_ROWID_EQ;
    c->neq = 1;
    c->eq[0] = k;
    c->nout = in_est(t);
    c->rrun = (PlanLogEst)(plan_logest_add(est_log(N), 16) + in_est(t));
    return 1;
  }
  return 0;
}

static void best_path(const Planner *pl, int i, uint64_t avail, PlanLogEst outer_rows,
                      SqlExprList *ob, int groupby, int outer, PlanLevel *best, int *best_order) {
  const PlanItem *it = &pl->items[i];
  const Table *tab = it->tab;
  PlanLogEst N = item_est(it);
  PlanLevel c;
  memset(best, 0, sizeof *best);
  best->kind = -1;
  *best_order = 0;
  memset(&c, 0, sizeof c);
  c.item = i;
  c.lo = c.hi = -1;
  int sub = pl->cur_group >= 0; /* an OR disjunct's path: no scans */
  if (it->nvpath) {             /* a virtual table: the cheapest answer its prereqs allow */
    for (int k = 0; k < it->nvpath; k++) {
      const PlanVpath *vp = &it->vpath[k];
      if (vp->prereq & ~avail) continue;
      PlanLogEst vcost = est_from_double(vp->cost);
      PlanLogEst cost = (PlanLogEst)(vcost + outer_rows), bcost = 0;
      if (outer && ob && !vp->order) cost = with_sort(pl, cost, 0, ob->n);
      if (best->kind >= 0) {
        bcost = run_cost(best, outer_rows);
        if (outer && ob && !*best_order) bcost = with_sort(pl, bcost, 0, ob->n);
      }
      /* a tie goes to the path needing fewer items (SQLite's whereLoopInsert) */
      if (best->kind >= 0 &&
          (cost > bcost ||
           (cost == bcost && __builtin_popcountll(vp->prereq) >=
                                 __builtin_popcountll(it->vpath[best->vpath].prereq))))
        continue;
      c.kind = PLAN_VTAB;
      c.vpath = k;
      c.nout = plan_logest(vp->rows > 1 ? (uint64_t)vp->rows : 1);
      c.rrun = vcost;
      *best = c;
      *best_order = outer && ob && vp->order;
    }
    if (best->kind < 0) { /* none usable here: a last resort (the caller reports it) */
      c.kind = PLAN_VTAB;
      c.vpath = -1;
      c.nout = 30000;
      c.rrun = 30000;
      *best = c;
    }
    return;
  }
  int st = 1; /* the table row's width, computed where an index is weighed */
  if (tab && (tab->without_rowid || tab->indexes)) st = table_width(tab);
  if (st <= 0) st = 1;
  /* full scan (of a WITHOUT ROWID table: its PRIMARY KEY's, weighed in
   * the place SQLite's index list gives it, unless INDEXED BY skips it) */
  c.kind = PLAN_SCAN;
  c.nout = N;
  c.rrun = (PlanLogEst)(N + 16);
  int pk_scan_later = tab && tab->without_rowid && !it->indexed_by;
  if (tab && tab->without_rowid) {
    c.idx = tab->pk_index;
    c.is_pk = 1;
    c.rrun = (PlanLogEst)(N + 1 + (15 * index_width(tab, tab->pk_index)) / st);
  }
  /* INDEXED BY: the named index's paths only (SQLite's probe list holds it
   * alone), a full scan of it included */
  if (!sub && !pk_scan_later && !it->indexed_by)
    consider(pl, &c, N, outer_rows, ob, groupby, outer, best, best_order);
  if (!tab) return;
  if (it->is_sub) {
    if (it->auto_ok) auto_path(pl, i, avail, outer_rows, ob, groupby, outer, best, best_order);
    return;
  }
  PlanLogEst rlog = est_log(N);
  /* rowid paths */
  if (!tab->without_rowid && !it->indexed_by) {
    if (rowid_eq_path(pl, i, avail, N, &c))
      consider(pl, &c, N, outer_rows, ob, groupby, outer, best, best_order);
    int lo, hi;
    find_range(pl, i, avail, NULL, 0, &lo, &hi);
    if (lo >= 0 || hi >= 0) {
      memset(&c, 0, sizeof c);
      c.item = i;
      c.kind = PLAN_ROWID_RANGE;
      c.lo = lo;
      c.hi = hi;
      c.nout = range_est(N, lo, hi);
      c.rrun = plan_logest_add(rlog, (PlanLogEst)(c.nout + 16));
      consider(pl, &c, N, outer_rows, ob, groupby, outer, best, best_order);
    }
  }
  /* indexes */
  const Index *order[64];
  int norder = sqlite_index_order(tab, order, 64), nseen = 0;
  Seen seen[MAX_SEEN];
  for (int oi = 0; oi < norder; oi++) {
    const Index *idx = order[oi];
    if (it->not_indexed && idx != tab->pk_index) continue;
    if (it->indexed_by && util_stricmp(it->indexed_by, idx->name) != 0) continue;
    if (idx->where && sub) continue;
    if (idx->where) {
      uint64_t ok_on = is_left(it) ? bit(i + 1) : 1; /* on_item + 1 bits */
      if (!partial_ok_expr(pl, i, idx->where, ok_on)) continue;
    }
    int is_pk = idx == tab->pk_index;
    int cov = is_pk || covers(it, idx);
    memset(&c, 0, sizeof c);
    c.item = i;
    c.kind = PLAN_INDEX;
    c.idx = idx;
    c.is_pk = (uint8_t)is_pk;
    c.covering = (uint8_t)(cov && !is_pk);
    c.lo = c.hi = -1;
    PlanLogEst rsize = idx_est(idx, N, 0), irlog = est_log(rsize);
    int nin = 0, nnull = 0;
    int pin[PLAN_MAX_EQ + 1], pnull[PLAN_MAX_EQ + 1]; /* nin, nnull of each prefix */
    pin[0] = pnull[0] = 0;
    int j = 0;
    for (; j < idx->nkey && j < PLAN_MAX_EQ; j++) {
      int found = -1;
      /* prefer =, then IS / IS NULL, then IN */
      for (int pass = 0; pass < 3 && found < 0; pass++) {
        for (int k = 0; k < pl->nterm && found < 0; k++) {
          const PlanTerm *t = &pl->terms[k];
          int want = pass == 0   ? PLAN_OP_EQ
                     : pass == 1 ? (PLAN_OP_IS | PLAN_OP_ISNULL)
                                 : PLAN_OP_IN;
          if (!(t->op & want) || !term_usable(pl, t, i, avail)) continue;
          if (!plan_index_col_ok(t, tab, idx, j)) continue;
          found = k;
        }
      }
      if (found < 0) break;
      const PlanTerm *ft = &pl->terms[found];
      if (ft->op == PLAN_OP_IN && idx->nstat > 0 && irlog >= 10) {
        /* SQLite: with statistics, an IN whose values cost more to seek
         * than the rows they select to scan is tested on the rows instead
         * (M log K < K log N), unless no IN precedes it (a seek-scan) */
        PlanLogEst k = in_est(ft);
        int x = idx_est(idx, N, j) + est_log(k) + 10 - (k + irlog);
        if (x < 0 && nin >= 2) break;
      }
      c.eq[j] = found;
      nin += in_est(ft);
      if (ft->op == PLAN_OP_ISNULL) nnull++;
      pin[j + 1] = nin;
      pnull[j + 1] = nnull;
    }
    c.neq = j;
    int lo = -1, hi = -1;
    int rj = j;
    if (j < idx->nkey || (j == idx->nkey && !tab->without_rowid && j < idx->ncol))
      find_range(pl, i, avail, idx, rj, &lo, &hi);
    c.lo = lo;
    c.hi = hi;
    int si = index_width(tab, idx);
    if (c.neq == 0 && lo < 0 && hi < 0) {
      /* a full index scan (SQLite's rule): for order, of a WITHOUT ROWID
       * table, a partial index or the INDEXED BY one, or because it covers
       * and its rows are narrower than the table's; each entry costs 1 +
       * 15 * szIdx / szTab, 16 more for the table row when the index does
       * not cover */
      c.kind = PLAN_SCAN;
      c.nout = rsize;
      if (sub) continue;
      /* SQLite's: an index that may help the order, any index of a
       * WITHOUT ROWID table, a partial or INDEXED BY one; else one that
       * covers with narrower rows */
      if (!is_pk && !index_may_order(pl, i, idx) && !tab->without_rowid && !idx->where &&
          !it->indexed_by && !(cov && si < st))
        continue;
      c.rrun = (PlanLogEst)(rsize + 1 + (15 * si) / st);
      if (!cov) c.rrun = plan_logest_add(c.rrun, lookup_est(pl, i, idx, rsize));
      index_candidate(pl, &c, cov, rsize, seen, &nseen, outer_rows, ob, groupby, outer, best,
                      best_order);
      continue;
    }
    ((Table *)tab)->stats_used = 1; /* invariant 5: PRAGMA optimize's hint */
    /* as SQLite, each prefix of the equality terms is a loop of its own,
     * then the one with the range */
    int neq = c.neq, nrng = lo >= 0 || hi >= 0;
    for (int d = neq > 0 ? 1 : 0; d <= neq + nrng; d++) {
      int q = d <= neq ? d : neq, rng = d > neq;
      if (!rng && d == 0) continue;
      PlanLevel cd = c;
      cd.neq = q;
      cd.lo = rng ? lo : -1;
      cd.hi = rng ? hi : -1;
      int nout = q > 0 ? idx_est(idx, N, q) + 10 * pnull[q] : rsize;
      if (rng) nout = range_est((PlanLogEst)nout, lo, hi);
      int rcost = plan_logest_add(irlog, (PlanLogEst)(nout + 1 + (15 * si) / st));
      if (!cov) rcost = plan_logest_add((PlanLogEst)rcost, (PlanLogEst)(nout + 16));
      cd.rrun = (PlanLogEst)(rcost + pin[q]);
      cd.nout = (PlanLogEst)(nout + pin[q]);
      index_candidate(pl, &cd, cov, rsize, seen, &nseen, outer_rows, ob, groupby, outer, best,
                      best_order);
    }
  }
  if (!sub && !tab->without_rowid && !it->not_indexed && !it->indexed_by)
    or_path(pl, i, avail, outer_rows, ob, groupby, outer, best, best_order);
  if (!sub) auto_path(pl, i, avail, outer_rows, ob, groupby, outer, best, best_order);
}

/* ---- join order ---- */

static int may_place(const Planner *pl, int i, uint64_t placed) {
  const PlanItem *it = &pl->items[i];
  if ((it->after & placed) != it->after) return 0;
  if (it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_CROSS)) {
    uint64_t need = i >= 63 ? ~(uint64_t)0 >> 1 : bit(i) - 1;
    if ((placed & need) != need) return 0;
  }
  /* an item right of a LEFT/CROSS item that must stay after it: none */
  return 1;
}

/* The cost of a path after adding level L at depth (outer_rows looped
 * outside it) and, in *rows, its rows. SQLite's WHERE_VIEWSCAN tuning: a
 * full scan of a subquery, view or CTE as the outermost loop of a join
 * counts LogEst 10 less cost and 30 fewer rows, so such an item goes
 * outside a table that is no bigger. */
static PlanLogEst step_cost(const Planner *pl, const PlanLevel *L, int depth, PlanLogEst outer_rows,
                            PlanLogEst cost, PlanLogEst *rows) {
  PlanLogEst lcost = run_cost(L, outer_rows);
  *rows = (PlanLogEst)(outer_rows + L->nout);
  if (depth == 0 && pl->nitem > 1 && L->kind == PLAN_SCAN && pl->items[L->item].is_sub) {
    *rows = (PlanLogEst)(*rows - 30);
    lcost = (PlanLogEst)(lcost - 10);
  }
  return depth == 0 ? lcost : plan_logest_add(cost, lcost);
}

static int same_path(const PlanLevel *a, const PlanLevel *b) {
  return a->kind == b->kind && a->idx == b->idx && a->neq == b->neq && a->lo == b->lo &&
         a->hi == b->hi;
}

/* No path for an item (an INDEXED BY index that cannot answer): SQLite's
 * "no query solution". */
static int no_solution(Planner *pl) {
  pl->no_solution = 1;
  return pl->rc = SHALE_ERROR;
}

/* ---- the solver (SQLite's wherePathSolver) ----
 *
 * Paths grow one loop per step. Each step keeps at most mx paths (1 for
 * one item, 5 for two, 10 for more): of the paths over the same items
 * whose order is decided alike (SQLite's isOrdered, undecided or not) the
 * better by (cost, rows, cost before the sort); when full, a candidate no
 * better than the worst kept is dropped, else it replaces the worst. The
 * loops a path may add for an item: its cheapest path at that place and,
 * while the order is still being delivered, its cheapest path continuing
 * it. A path whose order is decided short of the whole pays the sort. */

typedef struct SolvePath {
  uint64_t placed;
  PlanLogEst rows, cost, un;
  int ordered; /* -1: the order so far may still be continued; else the terms delivered */
  int ord0;    /* the outermost loop alone delivers the order */
  PlanLevel *lv;
} SolvePath;

/* SQLite's isOrdered of the loops lv[0..n): all of ob delivered (ob->n),
 * -1 while the loops so far deliver a prefix ending on order-distinct
 * loops (an inner loop may continue it), else the prefix delivered (0:
 * none, or the caller sorts in full). */
static int path_ordered(const Planner *pl, const PlanLevel *lv, int n, SqlExprList *ob, int groupby,
                        int ord0) {
  uint64_t settled, rev;
  int live;
  if (ord0) return ob->n;
  int k = chain_walk(pl, lv, n, ob, groupby, &settled, &rev, &live);
  if (k == ob->n) return ob->n;
  if (live && n < pl->nitem) return -1;
  return groupby || !pl->prefix ? 0 : chain_prefix(pl, lv, n, ob, groupby, &rev);
}

typedef struct Solver {
  Planner *pl;
  SqlExprList *ob;
  int groupby, n, mx, nto;
  SolvePath *to;
  PlanLevel *scratch;
  PlanLogEst mxcost, mxun;
  int mxi;
} Solver;

/* Offer the path from + L (L at depth d) to the next step. */
static void solve_offer(Solver *v, const SolvePath *from, int d, const PlanLevel *L, int ord) {
  const Planner *pl = v->pl;
  SolvePath c;
  memcpy(v->scratch, from->lv, sizeof(PlanLevel) * (size_t)d);
  v->scratch[d] = *L;
  c.placed = from->placed | bit(L->item);
  c.un = step_cost(pl, L, d, from->rows, from->un, &c.rows);
  c.ord0 = d == 0 ? ord : from->ord0;
  c.ordered = v->ob ? path_ordered(pl, v->scratch, d + 1, v->ob, v->groupby, c.ord0) : 0;
  PlanLogEst rcost = c.un;
  if (v->ob && c.ordered >= 0 && c.ordered < v->ob->n)
    rcost = with_sort(pl, c.un, c.ordered, v->ob->n);
  else
    c.un = (PlanLogEst)(c.un - 2);
  c.cost = rcost;
  int j = 0;
  for (; j < v->nto; j++)
    if (v->to[j].placed == c.placed && (v->to[j].ordered < 0) == (c.ordered < 0)) break;
  if (j == v->nto) {
    if (v->nto >= v->mx && (rcost > v->mxcost || (rcost == v->mxcost && c.un >= v->mxun))) return;
    j = v->nto < v->mx ? v->nto++ : v->mxi;
  } else if (!better(rcost, c.rows, c.un, v->to[j].cost, v->to[j].rows, v->to[j].un)) {
    return;
  }
  PlanLevel *keep = v->to[j].lv;
  v->to[j] = c;
  v->to[j].lv = keep;
  memcpy(keep, v->scratch, sizeof(PlanLevel) * (size_t)(d + 1));
  if (v->nto >= v->mx) {
    v->mxi = 0;
    v->mxcost = v->to[0].cost;
    v->mxun = v->to[0].un;
    for (int k = 1; k < v->mx; k++) {
      if (v->to[k].cost > v->mxcost || (v->to[k].cost == v->mxcost && v->to[k].un > v->mxun)) {
        v->mxcost = v->to[k].cost;
        v->mxun = v->to[k].un;
        v->mxi = k;
      }
    }
  }
}

static int solve(Planner *pl, SqlExprList *ob, int groupby, Plan *out) {
  int n = pl->nitem, mx = n <= 1 ? 1 : n == 2 ? 5 : 10;
  SolvePath *a = util_arena_zalloc(pl->arena, sizeof(SolvePath) * (size_t)mx * 2);
  /* not zeroed: a path's levels are written before they are read */
  PlanLevel *buf =
      util_arena_alloc(pl->arena, sizeof(PlanLevel) * (size_t)n * (size_t)(2 * mx + 1));
  if (!a || !buf) return pl->rc = SHALE_NOMEM;
  for (int k = 0; k < 2 * mx; k++) a[k].lv = buf + (size_t)k * (size_t)n;
  Solver v = {.pl = pl,
              .ob = ob,
              .groupby = groupby,
              .n = n,
              .mx = mx,
              .scratch = buf + (size_t)(2 * mx) * (size_t)n};
  SolvePath *from = a, *to = a + mx;
  int nfrom = 1;
  from[0].placed = 0;
  from[0].rows = from[0].cost = from[0].un = 0;
  from[0].ordered = ob ? -1 : 0;
  for (int d = 0; d < n; d++) {
    v.to = to;
    v.nto = 0;
    for (int f = 0; f < nfrom; f++) {
      const SolvePath *p = &from[f];
      uint64_t settled = 0, rev;
      int live = 0, k = 0;
      if (ob && p->ordered < 0) k = chain_walk(pl, p->lv, d, ob, groupby, &settled, &rev, &live);
      live = live && ob && k < ob->n;
      for (int i = 0; i < n; i++) {
        if ((p->placed & bit(i)) || !may_place(pl, i, p->placed)) continue;
        PlanLevel L;
        int ord = 0;
        best_path(pl, i, p->placed, p->rows, d == 0 ? ob : NULL, groupby, d == 0, &L, &ord);
        if (L.kind < 0) continue;
        solve_offer(&v, p, d, &L, ord);
        if (!live || pl->rc) continue;
        pl->chain_ob = ob;
        pl->chain_k = k;
        pl->chain_settled = settled;
        PlanLevel C;
        best_path(pl, i, p->placed, p->rows, d == 0 ? ob : NULL, groupby, d == 0, &C, &ord);
        pl->chain_ob = NULL;
        if (C.kind >= 0 && !same_path(&C, &L)) solve_offer(&v, p, d, &C, 0);
      }
    }
    if (pl->rc) return pl->rc;
    if (v.nto == 0) return no_solution(pl);
    SolvePath *t = from;
    from = to;
    to = t;
    nfrom = v.nto;
  }
  int b = 0;
  for (int k = 1; k < nfrom; k++)
    if (from[b].cost > from[k].cost) b = k;
  memcpy(out->levels, from[b].lv, sizeof(PlanLevel) * (size_t)n);
  out->order_ok = (uint8_t)from[b].ord0;
  out->cost = from[b].cost;
  out->rows = from[b].rows;
  finish_order(pl, out, ob, groupby);
  return SHALE_OK;
}

/* One pass of the choice for order_by (NULL: none weighed). */
static int choose_pass(Planner *pl, SqlExprList *order_by, int flags, int groupby, Plan *out) {
  int n = pl->nitem;
  memset(out, 0, sizeof *out);
  out->nlevel = n;
  out->levels = util_arena_zalloc(pl->arena, sizeof(PlanLevel) * (size_t)n);
  if (!out->levels) return pl->rc = SHALE_NOMEM;
  if (flags & PLAN_NO_REORDER) {
    /* FROM order: each depth takes the first item it may place */
    uint64_t placed = 0;
    PlanLogEst rows = 0, cost = 0;
    for (int d = 0; d < n; d++) {
      int pick = -1, ord = 0;
      for (int i = 0; i < n && pick < 0; i++)
        if (!(placed & bit(i)) && may_place(pl, i, placed)) pick = i;
      if (pick < 0) return pl->rc = SHALE_INTERNAL;
      best_path(pl, pick, placed, rows, d == 0 ? order_by : NULL, groupby, d == 0, &out->levels[d],
                &ord);
      if (out->levels[d].kind < 0) return no_solution(pl);
      if (d == 0) out->order_ok = (uint8_t)ord;
      placed |= bit(pick);
      cost = step_cost(pl, &out->levels[d], d, rows, cost, &rows);
    }
    out->cost = cost;
    out->rows = rows;
    finish_order(pl, out, order_by, groupby);
    return SHALE_OK;
  }
  return solve(pl, order_by, groupby, out);
}

/* The collation name of column c of item (NULL = BINARY). */
static const char *col_coll(const Planner *pl, int item, int c) {
  const Table *tab = pl->items[item].tab;
  return c >= 0 && c < tab->ncol ? tab->cols[c].coll : NULL;
}

static int coll_same(const char *a, const char *b) {
  if (a == b) return 1; /* the same name, or both BINARY by default */
  return util_stricmp(a ? a : "BINARY", b ? b : "BINARY") == 0;
}

/* Is term e "A.x = B.y" (or IS) between two columns whose values equal
 * under it are the same values (SQLite's termIsEquivalence: the same
 * affinity or both numeric; a BINARY comparison, or both columns of its
 * collation)? Sets the column sides. */
static int is_equivalence(const Planner *pl, const PlanTerm *e, int *ai, int *ac, int *bi,
                          int *bc) {
  if (e->parent >= 0 || e->group >= 0 || e->on_item != -1 || !e->op) return 0;
  if (e->expr->op != SQL_E_BINARY || (e->expr->sub != TK_EQ && e->expr->sub != TK_IS)) return 0;
  *ai = col_item(pl, e->expr->a, ac);
  *bi = col_item(pl, e->expr->b, bc);
  if (*ai < 0 || *bi < 0 || (*ai == *bi && *ac == *bc)) return 0;
  if (pl->items[*ai].is_sub || pl->items[*bi].is_sub) return 0;
  const Table *ta = pl->items[*ai].tab, *tb = pl->items[*bi].tab;
  char fa = *ac >= 0 ? ta->cols[*ac].affinity : AFF_INTEGER;
  char fb = *bc >= 0 ? tb->cols[*bc].affinity : AFF_INTEGER;
  if (fa != fb && !(is_numeric_aff(fa) && is_numeric_aff(fb))) return 0;
  if (coll_same(e->coll, NULL)) return 1;
  return coll_same(e->coll, col_coll(pl, *ai, *ac)) && coll_same(e->coll, col_coll(pl, *bi, *bc));
}

/* SQLite's transitive constraints (whereScanNext following WO_EQUIV terms):
 * for "A.x = B.y" and a comparison of B.y with a value that does not read
 * A, the same comparison of A.x drives A's paths (a derived term, equiv
 * set; its parent is still tested where it is). Chains of equalities are
 * followed until nothing new comes. */
static void add_equiv_terms(Planner *pl) {
  for (int round = 0; round < 4; round++) {
    int added = 0, n = pl->nterm;
    for (int ei = 0; ei < n && !pl->rc; ei++) {
      int ai, ac, bi, bc;
      if (!is_equivalence(pl, &pl->terms[ei], &ai, &ac, &bi, &bc)) continue;
      for (int side = 0; side < 2; side++) {
        int to = side ? bi : ai, tc = side ? bc : ac, from = side ? ai : bi, fc = side ? ac : bc;
        const Table *tt = pl->items[to].tab;
        if (!tt || tt->vtab || pl->items[to].nvpath) continue;
        for (int k = 0; k < n && pl->nterm < 4096; k++) {
          const PlanTerm *t = &pl->terms[k];
          if (t->item != from || t->column != fc || t->group >= 0 || t->on_item != -1) continue;
          if (!(t->op & (PLAN_OP_EQ | PLAN_OP_IS | PLAN_OP_ISNULL | PLAN_OP_RANGE))) continue;
          if (t->expr == pl->terms[ei].expr || (t->prereq & bit(to)) || !t->usable) continue;
          if (t->expr->op != SQL_E_BINARY && t->expr->op != SQL_E_BETWEEN &&
              t->expr->op != SQL_E_ISNULL)
            continue;
          if (!coll_same(t->coll, col_coll(pl, from, fc))) continue;
          int dup = 0; /* already derived (or written) for the target column */
          for (int q = 0; q < pl->nterm && !dup; q++) {
            const PlanTerm *u = &pl->terms[q];
            dup = u->item == to && u->column == tc && u->op == t->op && u->value == t->value &&
                  u->group < 0;
          }
          if (dup) continue;
          PlanTerm *d = new_term(pl);
          if (!d) return;
          t = &pl->terms[k];
          *d = *t;
          d->parent = k;
          d->item = to;
          d->column = tc;
          d->col_expr = skip_collate(side ? pl->terms[ei].expr->b : pl->terms[ei].expr->a);
          d->equiv = 1;
          added = 1;
        }
      }
    }
    if (!added) break;
  }
}

/* SQLite's WHERE constant propagation (propagateConstants), for the plan:
 * with a term "A.x = constant" (A.x a column as written, the constant of
 * no affinity, a BINARY comparison), a comparison "A.x op B.y" of the
 * WHERE or an inner ON is planned as "constant op B.y": its B.y form gets
 * a copy valued by the constant (equiv: it drives B's paths and never
 * stands for the comparison, which is still tested as written), its forms
 * on A.x drive nothing, and it counts as a term of B alone in the rows
 * (pmask). A column of BLOB affinity is replaced only as the left operand,
 * or the right one of a left operand not of TEXT affinity (SQLite's
 * bHasAffBlob rule). A query with a RIGHT JOIN holds no such term. */
static void propagate_constants(Planner *pl) {
  int n = pl->nterm;
  for (int ci = 0; ci < n && !pl->rc; ci++) {
    const PlanTerm *c = &pl->terms[ci];
    if (c->parent >= 0 || c->group >= 0 || c->on_item != -1 || c->op != PLAN_OP_EQ) continue;
    SqlExpr *ce = c->expr;
    if (ce->op != SQL_E_BINARY || ce->sub != TK_EQ || c->prereq || c->varies) continue;
    SqlExpr *ccol = c->col_expr == ce->a ? ce->a : c->col_expr == ce->b ? ce->b : NULL;
    if (!ccol || ccol->op != SQL_E_COLREF || !coll_same(c->coll, NULL)) continue;
    SqlExpr *cv = skip_collate(c->value);
    if (!cv || cv->op == SQL_E_CAST || cv->op == SQL_E_COLLATE || cv != c->value) continue;
    if (!pl->hooks.is_constant(pl->hooks.ctx, c->value)) continue;
    if (pl->items[c->item].is_sub || !pl->items[c->item].tab) continue;
    const Table *ta = pl->items[c->item].tab;
    char aff = c->column >= 0 ? ta->cols[c->column].affinity : AFF_INTEGER;
    int blob = aff == AFF_BLOB || aff == 0, first = 1;
    for (int k = ci + 1; k < n && first; k++) { /* one constant a column: SQLite's last */
      const PlanTerm *o = &pl->terms[k];
      if (o->parent < 0 && o->group < 0 && o->on_item == -1 && o->op == PLAN_OP_EQ &&
          o->item == c->item && o->column == c->column && !o->prereq && !o->varies &&
          o->expr->op == SQL_E_BINARY && o->expr->sub == TK_EQ)
        first = 0;
    }
    if (!first) continue;
    int a = c->item, x = c->column;
    SqlExpr *cval = c->value;
    for (int ti = 0; ti < n && !pl->rc; ti++) {
      PlanTerm *t = &pl->terms[ti];
      if (ti == ci || t->parent >= 0 || t->group >= 0 || t->on_item != -1 || t->pmask) continue;
      SqlExpr *e = t->expr;
      if (e->op != SQL_E_BINARY || !e->a || !e->b) continue;
      if (e->sub != TK_EQ && e->sub != TK_NE && e->sub != TK_LT && e->sub != TK_LE &&
          e->sub != TK_GT && e->sub != TK_GE && e->sub != TK_IS)
        continue;
      int ca, cb, ia = col_item(pl, e->a, &ca), ib = col_item(pl, e->b, &cb);
      int side = ia == a && ca == x && e->a->op == SQL_E_COLREF   ? 0
                 : ib == a && cb == x && e->b->op == SQL_E_COLREF ? 1
                                                                  : -1;
      if (side < 0) continue;
      if (blob && side == 1) {
        /* the right operand only when the left one is not of TEXT affinity */
        int lc, li = col_item(pl, e->a, &lc);
        if (li >= 0 && lc >= 0 && pl->items[li].tab->cols[lc].affinity == AFF_TEXT) continue;
      }
      SqlExpr *other = side ? e->a : e->b;
      uint64_t om = pl->hooks.mask(pl->hooks.ctx, other);
      int oc, oi = col_item(pl, other, &oc);
      /* the other operand reads items but A only as another column of it */
      if (!om || ((om & bit(a)) && (om != bit(a) || oi != a || oc == x))) continue;
      t->pmask = om;
      t->pconst = cval;
      t->peq = (uint8_t)(e->sub == TK_EQ && oi >= 0);
      /* its forms: on A.x none; on the other side valued by the constant */
      for (int k = 0; k < pl->nterm && !pl->rc; k++) {
        PlanTerm *f = &pl->terms[k];
        if (k != ti && f->parent != ti) continue;
        if (!f->op || f->equiv) continue;
        if (f->item == a && f->column == x) {
          f->usable = 0;
          continue;
        }
        if (f->item != oi || f->column != oc || skip_collate(f->value) == NULL) continue;
        int va, vi = col_item(pl, f->value, &va);
        if (vi != a || va != x) continue;
        PlanTerm *d = new_term(pl);
        if (!d) return;
        f = &pl->terms[k];
        *d = *f;
        d->parent = ti;
        d->value = cval;
        d->prereq = 0;
        d->equiv = 2;
        d->pmask = 0;
        f->usable = 0;
      }
    }
  }
}

/* SQLite's whereShortCut: the loop over one plain rowid table (not virtual,
 * not a subquery, no INDEXED BY or NOT INDEXED) whose WHERE has a term
 * `rowid = v` or `rowid IS v` (v reading no column of it) is that rowid
 * lookup, planned without weighing any other path: it finds one row at
 * most, and SQLite chooses it whatever its other paths cost. The term is
 * the one best_path would take (the first rowid equality); when that is an
 * IN the solver weighs the paths. 1 when out holds the plan. */
static int shortcut(Planner *pl, SqlExprList *ob, int groupby, Plan *out) {
  const PlanItem *it = &pl->items[0];
  const Table *tab = it->tab;
  if (pl->nitem != 1 || !tab || it->is_sub || it->nvpath || tab->vtab_module ||
      tab->without_rowid || it->indexed_by || it->not_indexed)
    return 0;
  PlanLevel c, best;
  PlanLogEst N = item_est(it);
  if (!rowid_eq_path(pl, 0, 0, N, &c) || pl->terms[c.eq[0]].op == PLAN_OP_IN) return 0;
  out->levels = util_arena_zalloc(pl->arena, sizeof(PlanLevel));
  if (!out->levels) return pl->rc = SHALE_NOMEM, 1;
  best.kind = -1;
  int ord = 0;
  consider(pl, &c, N, 0, ob, groupby, 1, &best, &ord);
  out->levels[0] = best;
  out->order_ok = (uint8_t)ord;
  out->cost = step_cost(pl, &best, 0, 0, 0, &out->rows);
  finish_order(pl, out, ob, groupby);
  return 1;
}

int plan_choose(Planner *pl, SqlExprList *order_by, int flags, Plan *out) {
  memset(out, 0, sizeof *out);
  if (pl->rc) return pl->rc;
  int n = pl->nitem;
  out->nlevel = n;
  if (n == 0) return SHALE_OK;
  /* 2: a GROUP BY whose terms the loops may deliver in any order */
  int groupby = !(flags & PLAN_GROUPBY) ? 0 : (flags & PLAN_SORTBYGROUP) ? 1 : 2;
  pl->no_auto = (flags & PLAN_NO_AUTO) != 0;
  pl->prefix = (flags & PLAN_ORDER_PREFIX) != 0;
  pl->distinct = (flags & PLAN_DISTINCT) != 0;
  if (order_by && order_by->n == 0) order_by = NULL;
  propagate_constants(pl);
  add_equiv_terms(pl);
  if (pl->rc) return pl->rc;
  pl->sort_rows = -1;
  pl->want_ob = order_by;
  if (shortcut(pl, order_by, groupby, out)) return pl->rc;
  if (order_by) {
    /* as SQLite's two solver passes: the rows of the best plan without
     * the order are the rows whose sort the second pass weighs */
    int rc = choose_pass(pl, NULL, flags, groupby, out);
    if (rc) return rc;
    pl->sort_rows = (PlanLogEst)(out->rows + 1);
  }
  return choose_pass(pl, order_by, flags, groupby, out);
}
