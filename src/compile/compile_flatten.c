/*
 * compile_flatten.c -- SQLite's query flattener: a FROM subquery (or view,
 * or CTE read once) simple enough is spliced into the query that reads it,
 * so the planner sees its tables instead of a co-routine or a materialized
 * table (sqlite.org/optoverview.html, "Query Flattening").
 *
 * Runs once per core, when its code is about to be generated
 * (compile_select_code), after the whole statement was resolved: result
 * names, decltypes and the Tables of subqueries were computed before and
 * stay as they were.
 *
 * Owns: nothing beyond the Parse arena (the new FROM arrays, the copies).
 *
 * Invariants:
 *  1. A subquery S at item i of core Q is flattened only when all of these
 *     hold (SQLite's numbered restrictions in parentheses; the rest are
 *     conservative limits of this implementation):
 *     Q and S have no window functions (25); S has a FROM clause (7), is no
 *     compound, no VALUES, not DISTINCT (4), not an aggregate, has no
 *     LIMIT/OFFSET (8, 9, 13, 14, 15, 19, 21); an ORDER BY that invariant 6
 *     left in S only when Q has none and is no aggregate, no window query
 *     and no compound's core (11, 16);
 *     S is not a recursive CTE (22) nor a MATERIALIZED CTE or one read
 *     twice (28); S is not on the right of a RIGHT/FULL JOIN (26), nor on the
 *     right of a LEFT JOIN but as one table of no virtual kind under a Q
 *     that is not DISTINCT (3), whose expression columns read there have no
 *     affinity (see if_null_row); S left of a RIGHT/FULL JOIN of Q (SQLite's
 *     JT_LTORJ) is one table as in (3), left of the first such join, each
 *     term of its WHERE reading that table (where_reads); S holds a
 *     RIGHT/FULL JOIN only as Q's first item (27a);
 *     no parenthesized join in S, nor is S one kept as a subquery (an S
 *     inside one spliced into Q joins its group: nest_n, in_nest);
 *     S reads no outer query and its result expressions hold no subquery.
 *  2. Every reference to S's column j -- in Q, in its ON clauses and in
 *     every subquery nested in Q, at any depth d -- becomes a copy of S's
 *     result expression j whose column references are d queries out. A
 *     copy that is not a plain column reference (or whose top is a COLLATE)
 *     gets an implicit COLLATE (SQL_E_COLLATE with sub = 1) naming S's
 *     column collation, as SQLite's substExpr adds one: the comparison
 *     rules see the subquery column's collation, never an explicit one.
 *     S on the right of a LEFT JOIN: a copy that is not a column of S's
 *     table reads NULL on the join's NULL row (if_null_row).
 *  3. S's items take its place in Q's FROM list (the first one with S's
 *     join type and ON); S's WHERE is ANDed before Q's (into the ON of its
 *     one table when that is NULL-padded: LEFT JOIN, JT_LTORJ); S's ORDER BY
 *     becomes Q's, each term computed as written (no result column).
 *  4. The column-used masks of S's items are recomputed from the
 *     references left after substitution (columns of S no query reads no
 *     longer count, as SQLite: covering indexes depend on it).
 *  5. After flattening, SQLite's push-down (optoverview.html, "The Push-Down
 *     Optimization"; pushDownWhereTerms): a FROM subquery left as one item
 *     gets a copy of each outer term that reads only constants and its
 *     columns (substituted as in 2), in its WHERE (HAVING when it is an
 *     aggregate), so it makes fewer rows and may search an index. The
 *     outer query still tests the term, so the rows it keeps are the same.
 *     push_down lists the conditions.
 *  6. Before an item is tried, its subquery's ORDER BY is dropped when it
 *     cannot matter, as SQLite's sqlite3Select does before it flattens
 *     (omit_sub_order lists the conditions): the subquery then sorts
 *     nothing, whether it is flattened or not.
 */
#include <string.h>

#include "select_int.h"

static void and_terms(SqlExpr *e, SqlExpr **a, int *n, int cap);

typedef struct Subst {
  Parse *p;
  int cursor;                /* S's item cursor in Q */
  const SqlExprList *result; /* S's result list */
  const Table *tab;          /* S's item Table (its columns' collations) */
  SrcItem *padded;           /* S NULL-padded by a join: its one table */
} Subst;

/* Call fn on every expression node under e (subqueries included). */
typedef void (*NodeFn)(void *arg, SqlExpr *e);
static void walk_select(SqlSelect *s, NodeFn fn, void *arg);

static void walk_list(SqlExprList *l, NodeFn fn, void *arg);

static void walk_expr(SqlExpr *e, NodeFn fn, void *arg) {
  if (!e) return;
  fn(arg, e);
  walk_expr(e->a, fn, arg);
  walk_expr(e->b, fn, arg);
  walk_expr(e->c, fn, arg);
  walk_list(e->list, fn, arg);
  walk_expr(e->filter, fn, arg);
  walk_list(e->order, fn, arg);
  if (e->over) {
    walk_list(e->over->partition, fn, arg);
    walk_list(e->over->order, fn, arg);
    walk_expr(e->over->start_expr, fn, arg);
    walk_expr(e->over->end_expr, fn, arg);
  }
  if (e->op == SQL_E_REG && e->orig) walk_expr((SqlExpr *)e->orig, fn, arg);
  if (e->select) walk_select(e->select, fn, arg);
}

static void walk_list(SqlExprList *l, NodeFn fn, void *arg) {
  for (int i = 0; l && i < l->n; i++) walk_expr(l->a[i].expr, fn, arg);
}

static void walk_select(SqlSelect *s, NodeFn fn, void *arg) {
  for (; s; s = s->prior) {
    SelInfo *info = s->info;
    if (!info) continue;
    if (s->kind == SQL_SEL_VALUES) {
      walk_list(s->cols, fn, arg);
      continue;
    }
    walk_list(info->result, fn, arg);
    walk_expr(s->where, fn, arg);
    walk_list(s->group_by, fn, arg);
    walk_expr(s->having, fn, arg);
    walk_list(s->order_by, fn, arg);
    walk_expr(s->limit, fn, arg);
    walk_expr(s->offset, fn, arg);
    for (int i = 0; info->src && i < info->src->n; i++) {
      SrcItem *it = &info->src->a[i];
      walk_expr(it->on, fn, arg);
      walk_list(it->tvf_args, fn, arg);
      if (it->sub && it->sub != s) walk_select(it->sub, fn, arg);
    }
  }
}

/* q and what the Parse keeps beside its AST that may read q's items: the
 * arguments of table-valued functions and recursive CTEs' recursive
 * parts (reached through no FROM item). */
static void walk_all(Parse *p, SqlSelect *q, NodeFn fn, void *arg) {
  walk_select(q, fn, arg);
  SelectState *st = compile_select_state(p);
  for (struct TvfItem *ti = st ? st->tvfs : NULL; ti; ti = ti->next) walk_list(ti->args, fn, arg);
  for (struct RecCte *r = st ? st->recs : NULL; r; r = r->next) walk_select(r->rec, fn, arg);
}

/* ---- the checks of invariant 1 ---- */

static void find_sub(void *arg, SqlExpr *e) {
  if (e->select || e->op == SQL_E_REG) *(int *)arg = 1;
}

static int has_nest(const SrcList *s) {
  for (int i = 0; s && i < s->n; i++)
    if (s->a[i].nest || s->a[i].in_nest) return 1;
  return 0;
}

/* The last item of s joined by RIGHT/FULL JOIN, or -1. */
static int last_right_join(const SrcList *s) {
  int k = -1;
  for (int i = 0; s && i < s->n; i++)
    if (s->a[i].jointype & SQL_JOIN_RIGHT) k = i;
  return k;
}

/* The first item of s joined by RIGHT/FULL JOIN, or -1. */
static int first_right_join(const SrcList *s) {
  for (int i = 0; s && i < s->n; i++)
    if (s->a[i].jointype & SQL_JOIN_RIGHT) return i;
  return -1;
}

/* 1 if item i of s is on the left of a RIGHT/FULL JOIN (SQLite's
 * JT_LTORJ): the join's pass over unmatched rows reads it as a NULL row. */
static int left_of_right(const SrcList *s, int i) { return i < last_right_join(s); }

static int is_rec_cte(Parse *p, const SrcItem *it) {
  SelectState *st = compile_select_state(p);
  for (struct RecCte *r = st ? st->recs : NULL; r; r = r->next)
    if (r->cursor == it->cursor || r->cur_cursor == it->cursor) return 1;
  return !st;
}

static int can_flatten(Parse *p, SqlSelect *q, SrcItem *it, int i, int compound) {
  SqlSelect *s = it->sub;
  SelInfo *qi = q->info;
  if (it->kind != SRC_SUBQUERY || !s || s->prior || s->kind != SQL_SEL_SELECT) return 0;
  SelInfo *si = s->info;
  if (!si || si->state != 2 || !si->src || si->src->n == 0 || !si->result) return 0; /* (7) */
  if (it->nest == s) return 0;                 /* a parenthesized join kept as one subquery */
  if (it->jointype & SQL_JOIN_RIGHT) return 0; /* (26) */
  if ((it->jointype & SQL_JOIN_LEFT) || left_of_right(qi->src, i)) {
    /* (3): the right side of a LEFT JOIN, or an item left of a RIGHT JOIN,
     * is one table, no virtual one, and the outer query is not DISTINCT */
    const SrcItem *t = &si->src->a[0];
    if (si->src->n != 1 || t->kind != SRC_TABLE || !t->tab || t->tab->vtab || t->tab->vtab_module ||
        q->distinct == 1)
      return 0;
  }
  if (s->distinct == 1 || si->is_agg || s->limit || s->offset) return 0;
  /* (11), (16): an ORDER BY left in S (omit_sub_order kept it) moves to Q,
   * which has none, is no aggregate and no window query (whose rows SQLite
   * orders in a subquery of its own); nor a compound's arm (SQLite sorts
   * that arm alone, Shale leaves S as it is) */
  if (s->order_by && (q->order_by || compound || qi->is_agg || compile_window_in_core(q))) return 0;
  if (compile_window_in_core(s) || compile_sel_has_correl(s)) return 0; /* (25) */
  if (si->from_nc.flags & NC_HAS_CORREL) return 0;
  if (it->cte_materialized || is_rec_cte(p, it)) return 0; /* (28), (22) */
  if (it->cte_use && it->cte_use->nuse >= 2 && it->cte_use->cte->materialized != 2) return 0;
  /* (27a): a RIGHT/FULL JOIN inside S only when S is Q's first item */
  if (has_nest(si->src) || (i > 0 && last_right_join(si->src) >= 0)) return 0;
  if (si->result->n != it->tab->ncol) return 0;
  int sub = 0;
  walk_list(si->result, find_sub, &sub);
  return !sub;
}

/* ---- substitution (invariant 2) ---- */

static void add_depth(void *arg, SqlExpr *e) {
  if (e->op == SQL_E_COLREF) e->depth = (uint8_t)(e->depth + *(int *)arg);
}

/* c, a copy of S's result expression that is not a column of t (the one
 * table of S, NULL-padded: the right side of a LEFT JOIN or an item left
 * of a RIGHT JOIN) read d queries out, as
 * SQLite's TK_IF_NULL_ROW: NULL while t's row is the NULL row of the
 * join, else c -- CASE WHEN t.rowid IS NULL THEN NULL ELSE c END (a
 * WITHOUT ROWID table's first PRIMARY KEY column, never NULL in a row).
 * Subquery columns so read have no affinity (can_flatten), nor has CASE. */
static SqlExpr *if_null_row(Parse *p, SrcItem *t, SqlExpr *c, int d) {
  SqlExpr *key = compile_sel_new_expr(p, SQL_E_COLREF);
  SqlExpr *test = compile_sel_new_expr(p, SQL_E_ISNULL);
  SqlExpr *w = compile_sel_new_expr(p, SQL_E_CASE);
  SqlExprList *l = compile_sel_list_add(p, NULL, test);
  l = compile_sel_list_add(p, l, compile_sel_new_expr(p, SQL_E_NULL));
  if (!key || !test || !w || !l || l->n != 2 || !l->a[1].expr) return NULL;
  const Table *tab = t->tab;
  compile_sel_colref(key, t, tab->without_rowid && tab->npk > 0 ? tab->pk_cols[0] : -1);
  key->depth = (uint8_t)d;
  test->a = key;
  test->height = 2;
  w->list = l;
  w->b = c;
  w->height = (uint16_t)((c->height > 2 ? c->height : 2) + 1);
  return w;
}

static void subst_node(void *arg, SqlExpr *e) {
  Subst *x = arg;
  if (e->op != SQL_E_COLREF || e->cursor != x->cursor || parse_failed(x->p)) return;
  int j = e->column;
  if (j < 0 || j >= x->result->n) return; /* (can_flatten: no rowid of S is read) */
  SqlExpr *c = compile_expr_dup(x->p, x->result->a[j].expr);
  if (!c) return;
  int d = e->depth;
  if (d) walk_expr(c, add_depth, &d);
  if (x->padded && (c->op != SQL_E_COLREF || c->cursor != x->padded->cursor) &&
      !(c = if_null_row(x->p, x->padded, c, d)))
    return;
  const char *coll = x->tab->cols[j].coll ? x->tab->cols[j].coll : "BINARY";
  const Collation *nat = compile_sel_coll_of(x->p, c);
  int same = util_stricmp(nat && nat->name ? nat->name : "BINARY", coll) == 0;
  if (same && c->op == SQL_E_COLLATE) {
    c->sub = 1;
  } else if (!same || c->op != SQL_E_COLREF) {
    /* (a compound's arm may read another collation than its first arm's,
     * which names the column's) */
    SqlExpr *w = compile_sel_new_expr(x->p, SQL_E_COLLATE);
    if (!w) return;
    w->z = coll;
    w->sub = 1;
    w->a = c;
    w->height = (uint16_t)(c->height + 1);
    c = w;
  }
  SqlSpan sp = e->span;
  *e = *c;
  e->span = sp;
}

/* 1 if some reference to S's cursor reads its rowid (or a column it has
 * not), or, S on the right of a LEFT JOIN, an expression column with an
 * affinity: if_null_row's CASE would lose it (SQLite's TK_IF_NULL_ROW
 * passes its operand's on). S is then left alone. */
typedef struct RowidScan {
  const SrcItem *it;
  int left, bad;
} RowidScan;

static void rowid_node(void *arg, SqlExpr *e) {
  RowidScan *r = arg;
  if (e->op != SQL_E_COLREF || e->cursor != r->it->cursor) return;
  const SqlExprList *res = r->it->sub->info->result;
  if (e->column < 0 || e->column >= r->it->tab->ncol || e->column >= res->n)
    r->bad = 1;
  else if (r->left && res->a[e->column].expr->op != SQL_E_COLREF &&
           compile_src_item_col_aff(r->it, e->column))
    r->bad = 1;
}

/* 1 if every AND-term of s's WHERE reads the item at cursor: left of a
 * RIGHT JOIN such a term, made an inner ON term, is tested at that item's
 * loop; one reading no item would be tested once before every loop (the
 * planner's constant terms), as SQLite's ON term of that loop is not. */
static void cursor_node(void *arg, SqlExpr *e) {
  int *c = arg;
  if (e->op == SQL_E_COLREF && e->cursor == c[0]) c[1] = 1;
}

static int where_reads(SqlSelect *s, int cursor) {
  SqlExpr *terms[64];
  int n = 0;
  and_terms(s->where, terms, &n, 64);
  if (n == 64) return 0;
  for (int k = 0; k < n; k++) {
    int c[2] = {cursor, 0};
    walk_expr(terms[k], cursor_node, c);
    if (!c[1]) return 0;
  }
  return 1;
}

/* ---- column-used masks (invariant 4) ---- */

typedef struct UsedScan {
  SrcItem *items;
  int n;
} UsedScan;

static void used_node(void *arg, SqlExpr *e) {
  UsedScan *u = arg;
  if (e->op != SQL_E_COLREF || e->column < 0) return;
  for (int k = 0; k < u->n; k++)
    if (u->items[k].cursor == e->cursor) {
      int c = e->column;
      u->items[k].colused |= c >= 63 ? (uint64_t)1 << 63 : (uint64_t)1 << c;
    }
}

/* Flatten item i (a checked subquery) of core q: 1 done, 0 left alone,
 * -1 out of memory. */
static int flatten_item(Parse *p, SqlSelect *q, int i, int ltorj) {
  SelInfo *qi = q->info;
  SrcList *src = qi->src;
  SrcItem old = src->a[i];
  SqlSelect *s = old.sub;
  SrcList *in = s->info->src;
  int n = src->n - 1 + in->n;
  if (n > 64) return 0; /* SQLite's join limit: left as one item */
  SrcItem *a = compile_parse_alloc(p, sizeof(SrcItem) * (size_t)n);
  if (!a) return -1;
  memcpy(a, src->a, sizeof(SrcItem) * (size_t)i);
  memcpy(a + i, in->a, sizeof(SrcItem) * (size_t)in->n);
  memcpy(a + i + in->n, src->a + i + 1, sizeof(SrcItem) * (size_t)(src->n - i - 1));
  /* S inside a flattened parenthesized join (SQLite flattens the join's
   * SELECT * first, then S into the query): its items join that group,
   * the first of them its head when S was */
  int head = -1;
  if (old.nest) {
    head = i;
    a[i].nest = old.nest;
    a[i].nest_tab = old.nest_tab;
    a[i].nest_alias = old.nest_alias;
    a[i].nest_n = old.nest_n;
  } else if (old.in_nest) {
    for (int g = i - 1; g >= 0 && head < 0; g--)
      if (a[g].nest && a[g].nest != a[g].sub && g + a[g].nest_n > i) head = g;
  }
  if (head >= 0) {
    a[head].nest_n += in->n - 1;
    for (int k = 0; k < in->n; k++) a[i + k].in_nest = i + k != head;
  }
  a[i].jointype = old.jointype;
  a[i].on = compile_sel_and(p, a[i].on, old.on);
  if (old.on && !a[i].on) return -1;
  src->a = a;
  src->n = n;
  int padded = (old.jointype & SQL_JOIN_LEFT) || ltorj;
  Subst x = {p, old.cursor, s->info->result, old.tab, padded ? &a[i] : NULL};
  walk_all(p, q, subst_node, &x);
  if (parse_failed(p)) return -1;
  if (s->where && padded) {
    /* (3): the one table's ON clause, so it filters before the join (left
     * of a RIGHT JOIN, an inner ON there is tested at its loop, before the
     * right row is marked matched; the WHERE only after the pass over
     * unmatched rows) */
    a[i].on = compile_sel_and(p, s->where, a[i].on);
    if (!a[i].on) return -1;
  } else if (s->where) {
    q->where = compile_sel_and(p, s->where, q->where);
    if (!q->where) return -1;
    /* (the statement's tree holds that WHERE once: a subquery in it keeps
     * its EXPLAIN QUERY PLAN number, counted by walking the tree) */
    s->where = NULL;
  }
  if (s->order_by) { /* (11): Q has none; its terms read S's items, now Q's */
    qi->order_col = compile_parse_alloc(p, sizeof(int) * (size_t)s->order_by->n);
    if (!qi->order_col) return -1;
    /* (as SQLite clears iOrderByCol: each term is computed as written) */
    for (int k = 0; k < s->order_by->n; k++) qi->order_col[k] = -1;
    q->order_by = s->order_by;
    s->order_by = NULL;
  }
  for (int k = 0; k < in->n; k++) a[i + k].colused = 0;
  UsedScan u = {a + i, in->n};
  walk_all(p, q, used_node, &u);
  return 1;
}

/* ---- a FROM subquery's ORDER BY that makes no difference (invariant 6) ---- */

/* 1 if e (not looking into subqueries) calls an aggregate whose result may
 * depend on the order of its rows: any but the built-in count(), min() and
 * max() (SQLite's NC_OrderAgg). */
static int order_agg(const SqlExpr *e);

static int order_agg_list(const SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (order_agg(l->a[i].expr)) return 1;
  return 0;
}

static int order_agg(const SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->func && func_is_aggregate(e->func) && !e->over) {
    const FuncDef *f = e->func;
    int any_order = (f->flags & FUNC_BUILTIN) && ((f->flags & (FUNC_MINMAX | FUNC_COUNT)) ||
                                                  util_stricmp(f->name, "count") == 0);
    if (!any_order) return 1;
  }
  if (e->op == SQL_E_REG && e->orig) return order_agg(e->orig);
  return order_agg(e->a) || order_agg(e->b) || order_agg(e->c) || order_agg_list(e->list) ||
         order_agg(e->filter) || order_agg_list(e->order);
}

/* SQLite drops the ORDER BY of FROM subquery S at item i of core q before
 * it tries to flatten it when it cannot matter: S has no LIMIT, is no
 * aggregate nor a recursive CTE; the query reading it (q, or the SELECT *
 * of the parenthesized join S is in) has an ORDER BY of its own (ordered)
 * or more than one FROM item, and neither window functions nor an
 * aggregate whose result depends on the order of its rows. */
static void omit_sub_order(Parse *p, SqlSelect *q, int i, int ordered) {
  SrcItem *it = &q->info->src->a[i];
  SqlSelect *s = it->sub;
  if (it->kind != SRC_SUBQUERY || !s || !s->order_by || s->limit ||
      (it->nest && it->sub == it->nest))
    return;
  if (!s->info || s->info->state != 2 || s->info->is_agg || is_rec_cte(p, it)) return;
  if (!it->in_nest && !it->nest) { /* (a parenthesized join's SELECT * joins 2+ items) */
    SelInfo *qi = q->info;
    int items = 0;
    for (int k = 0; k < qi->src->n; k++) items += !qi->src->a[k].in_nest;
    if (!ordered && items < 2) return;
    if (compile_window_in_core(q) || order_agg_list(qi->result) || order_agg(q->having) ||
        (!q->prior && order_agg_list(q->order_by)))
      return;
  }
  s->order_by = NULL;
}

/* ---- WHERE push-down (invariant 5) ---- */

typedef struct TabConst {
  int cursor, ncol, bad;
} TabConst;

/* SQLite's sqlite3ExprIsTableConstant: only constants and columns of the
 * item -- no subquery, no other item, no non-deterministic function. */
static void tabconst_node(void *arg, SqlExpr *e) {
  TabConst *t = arg;
  if (e->op == SQL_E_COLREF) {
    if (e->cursor != t->cursor || e->depth || e->column < 0 || e->column >= t->ncol) t->bad = 1;
    return;
  }
  if (e->select || e->op == SQL_E_REG || e->op == SQL_E_CTIME) {
    t->bad = 1;
    return;
  }
  SqlExpr node = *e;
  node.a = node.b = node.c = NULL;
  node.list = NULL;
  if (!compile_expr_is_constant(&node)) t->bad = 1;
}

/* The subquery of item it may take outer terms: no LIMIT (3), not a
 * recursive CTE (2), nor a MATERIALIZED one or one read twice (7), every
 * arm a SELECT joined by UNION ALL (8); window functions only in a lone
 * core, all partitioned alike (6; push_term checks the term). */
static int can_push(Parse *p, const SrcItem *it) {
  SqlSelect *s = it->sub;
  if (it->kind != SRC_SUBQUERY || !s || it->nest || s->limit || s->offset) return 0;
  if (it->cte_materialized || is_rec_cte(p, it)) return 0;
  if (it->cte_use && it->cte_use->nuse >= 2) return 0;
  for (SqlSelect *c = s; c; c = c->prior) {
    SelInfo *ci = c->info;
    if (c->kind != SQL_SEL_SELECT || !ci || ci->state != 2 || !ci->result) return 0;
    if (ci->result->n != it->tab->ncol) return 0;
    if (c->prior && c->compound != SQL_COMPOUND_UNION_ALL) return 0;
    if (compile_window_in_core(c) && (c->prior || c != s || !compile_window_partition(c))) return 0;
  }
  return 1;
}

/* Copy term into every arm of it's subquery, its references to the item
 * replaced by the arm's result expressions (with the column's collation
 * as SQLite's substExpr); into HAVING for an aggregate arm. */
static int push_term(Parse *p, SrcItem *it, const SqlExpr *term) {
  for (SqlSelect *c = it->sub; c; c = c->prior) {
    SqlExpr *t = compile_expr_dup(p, term);
    if (!t) return -1;
    Subst x = {p, it->cursor, c->info->result, it->tab, NULL};
    walk_expr(t, subst_node, &x);
    int sub = 0;
    walk_expr(t, find_sub, &sub);
    if (parse_failed(p)) return -1;
    if (sub) return 0; /* (a result expression holds a subquery: left alone) */
    /* (6c) with windows: only constants and PARTITION BY terms, so whole
     * partitions go and every window sees the rows it saw */
    const SqlExprList *part = compile_window_in_core(c) ? compile_window_partition(c) : NULL;
    if (part && !compile_sel_group_only(p, part, t)) return 0;
    SqlExpr **dst = c->info->is_agg ? &c->having : &c->where;
    *dst = compile_sel_and(p, *dst, t);
    if (!*dst) return -1;
  }
  return 1;
}

/* The AND-terms of e into a[], *n of them so far (at most cap). */
static void and_terms(SqlExpr *e, SqlExpr **a, int *n, int cap) {
  if (!e) return;
  if (e->op == SQL_E_BINARY && e->sub == TK_AND) {
    and_terms(e->a, a, n, cap);
    and_terms(e->b, a, n, cap);
  } else if (*n < cap) {
    a[(*n)++] = e;
  }
}

/* SQLite's WHERE holds the ON terms too (each marked with its join):
 * a subquery item takes the terms made only of constants and its own
 * columns -- from WHERE and inner joins' ON clauses when it is inner-joined,
 * from its own ON clause when it is a LEFT JOIN's right side (4, 5); never
 * an item left of a RIGHT JOIN or on the right of one. Terms are copied,
 * last first, as pushDownWhereTerms walks them; the outer query still
 * tests them. */
static int push_down(Parse *p, SqlSelect *q) {
  SrcList *src = q->info->src;
  int lrj = last_right_join(src);
  for (int i = 0; i < src->n; i++) {
    SrcItem *it = &src->a[i];
    if (i < lrj || (it->jointype & SQL_JOIN_RIGHT) || !can_push(p, it)) continue;
    SqlExpr *terms[64];
    int n = 0;
    int left = (it->jointype & SQL_JOIN_LEFT) != 0;
    if (!left) and_terms(q->where, terms, &n, 64);
    for (int k = 0; k < src->n; k++)
      if (left ? k == i : !(src->a[k].jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)))
        and_terms(src->a[k].on, terms, &n, 64);
    for (int j = n - 1; j >= 0; j--) {
      TabConst t = {it->cursor, it->tab->ncol, 0};
      walk_expr(terms[j], tabconst_node, &t);
      if (t.bad) continue;
      if (push_term(p, it, terms[j]) < 0) return -1;
    }
  }
  return 0;
}

int compile_flatten_core(Parse *p, SqlSelect *q, int compound) {
  SelInfo *qi = q->info;
  if (!qi || qi->state != 2 || qi->flattened || q->kind != SQL_SEL_SELECT || !qi->src) return 0;
  qi->flattened = 1;
  int ordered = compound ? compound == 2 : q->order_by != NULL;
  for (int i = 0; i < qi->src->n; i++) omit_sub_order(p, q, i, ordered);
  /* (25) does not stop a core with window functions: SQLite first moves
   * its FROM list into a subquery without them, which it flattens */
  /* SQLite turns LEFT JOINs the WHERE clause makes inner into inner joins
   * before it flattens (and the planner would anyway): their right sides
   * then flatten and take terms as inner-joined items */
  compile_where_simplify_left_joins(qi->src, q->where);
  for (int i = 0; i < qi->src->n; i++) {
    SrcItem *it = &qi->src->a[i];
    /* an item left of a RIGHT JOIN (SQLite's JT_LTORJ) flattens with its
     * WHERE as an ON term of its own loop, under restriction 3; one between
     * two RIGHT JOINs is left alone (the planner defers inner ON terms
     * right of the first one); items past the last are as in a query
     * without */
    omit_sub_order(p, q, i, ordered); /* (an item spliced in by the last step) */
    int ltorj = left_of_right(qi->src, i);
    if (ltorj && i > first_right_join(qi->src)) continue;
    if (!can_flatten(p, q, it, i, compound)) continue;
    RowidScan r = {it, (it->jointype & SQL_JOIN_LEFT) || ltorj, 0};
    walk_select(q, rowid_node, &r);
    if (r.bad) continue;
    if (ltorj && !(it->jointype & SQL_JOIN_LEFT) &&
        !where_reads(it->sub, it->sub->info->src->a[0].cursor))
      continue;
    int rc = flatten_item(p, q, i, ltorj);
    if (rc < 0) {
      compile_parse_nomem(p);
      return 1;
    }
    if (rc) i--; /* the first spliced item may itself be a subquery to flatten */
  }
  if (push_down(p, q) < 0) compile_parse_nomem(p);
  return parse_failed(p);
}
