/*
 * compile_window.c -- window functions: OVER name / OVER (base ...) merged
 * with the WINDOW clause, the checks SQLite makes on window calls, and the
 * code that computes window calls for a SELECT core.
 *
 * The plan (SQLite's, without rewriting the query): the core's loop (or,
 * in an aggregate query, each finished group) computes one "input row":
 * every value the result list and ORDER BY read outside the window calls
 * (the leaves: columns of this core, aggregate registers), then for every
 * window its PARTITION BY and ORDER BY values, and every window call's
 * arguments and FILTER. The rows go through one pass per distinct window
 * (SQLite's comparison: partition, order, frame, exclusion), the window
 * that appears last first: a sorter orders the rows by the window's
 * partition and ORDER BY (a sequence number keeps ties in arrival order),
 * the VM's window engine (WinOpen/WinPush/WinEnd/WinRow, vm_window.c)
 * buffers each partition and appends one value per window call. After the
 * last pass the leaves and window calls of the result list and ORDER BY
 * are replaced by the registers of the row and the caller's output code
 * runs; the nodes are put back afterwards.
 *
 * Owns: WinCtx and the VmWinSpec of each pass (program arena).
 *
 * Invariants:
 *  1. A window call's SqlWindow (e->over) is, after compile_window_prepare, a full
 *     definition of its own (named windows copied in), never shared with
 *     the WINDOW clause.
 *  2. Built-in window functions other than first_value/last_value/
 *     nth_value get SQLite's fixed frame (row_number: ROWS UNBOUNDED
 *     PRECEDING..CURRENT ROW, ...) when windows are grouped into passes; the
 *     engine computes them from partition positions and peers.
 *  3. The output order without ORDER BY is SQLite's: that of the first
 *     window's sort, ties in the order the previous pass produced them.
 */
#include <limits.h>
#include <string.h>

#include "select_int.h"

/* ---- named windows and checks (resolution time) ---- */

static SqlWindow *find_window(SqlWindow *list, const char *name) {
  SqlWindow *found = NULL;
  for (SqlWindow *w = list; w; w = w->next)
    if (w->name && util_stricmp(w->name, name) == 0) found = w; /* the last one wins */
  return found;
}

/* The full definition of a WINDOW clause entry (its base chained in). */
static SqlWindow *chain_window(Parse *p, SqlWindow *list, SqlWindow *w, int depth);

static SqlWindow *apply_base(Parse *p, SqlWindow *list, SqlWindow *w, int depth) {
  if (!w->base) return w;
  SqlWindow *b = find_window(list, w->base);
  if (!b || depth > 100) {
    compile_parse_error(p, "no such window: %s", w->base);
    return NULL;
  }
  b = chain_window(p, list, b, depth + 1);
  if (!b) return NULL;
  const char *what = NULL;
  if (w->partition)
    what = "PARTITION clause";
  else if (b->order && w->order)
    what = "ORDER BY clause";
  else if (b->frame != SQL_FRAME_NONE)
    what = "frame specification";
  if (what) {
    compile_parse_error(p, "cannot override %s of window: %s", what, w->base);
    return NULL;
  }
  SqlWindow *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  *n = *w;
  n->base = NULL;
  n->next = NULL;
  n->partition = b->partition;
  if (!n->order) n->order = b->order;
  return n;
}

static SqlWindow *chain_window(Parse *p, SqlWindow *list, SqlWindow *w, int depth) {
  return apply_base(p, list, w, depth);
}

/* Give a window call its own full definition (invariant 1). */
static int merge_over(Parse *p, SqlSelect *s, SqlExpr *e) {
  SqlWindow *o = e->over, *def;
  if (o->name && !o->base && !o->partition && !o->order && o->frame == SQL_FRAME_NONE) {
    /* OVER name */
    SqlWindow *w = find_window(s->windows, o->name);
    if (!w) {
      compile_parse_error(p, "no such window: %s", o->name);
      return 1;
    }
    def = chain_window(p, s->windows, w, 0);
  } else if (o->base) {
    def = apply_base(p, s->windows, o, 0);
  } else {
    def = o;
  }
  if (!def) return 1;
  SqlWindow *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return 1;
  *n = *def;
  n->name = NULL;
  n->base = NULL;
  n->next = NULL;
  n->partition = compile_expr_list_dup(p, def->partition);
  n->order = compile_expr_list_dup(p, def->order);
  n->start_expr = compile_expr_dup(p, def->start_expr);
  n->end_expr = compile_expr_dup(p, def->end_expr);
  if (parse_failed(p)) return 1;
  e->over = n;
  return 0;
}

static int prepare_expr(Parse *p, SqlSelect *s, SqlExpr *e);

static int prepare_list(Parse *p, SqlSelect *s, SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (prepare_expr(p, s, l->a[i].expr)) return 1;
  return 0;
}

static int prepare_expr(Parse *p, SqlSelect *s, SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->over && e->agg != 2) {
    if (e->flags & SQL_EF_DISTINCT) {
      compile_parse_error(p, "DISTINCT is not supported for window functions");
      return 1;
    }
    if (merge_over(p, s, e)) return 1;
    if (prepare_list(p, s, e->over->partition) || prepare_list(p, s, e->over->order)) return 1;
  }
  if (prepare_expr(p, s, e->a) || prepare_expr(p, s, e->b) || prepare_expr(p, s, e->c) ||
      prepare_list(p, s, e->list) || prepare_expr(p, s, e->filter))
    return 1;
  return 0;
}

int compile_window_prepare(Parse *p, SqlSelect *s) {
  if (prepare_list(p, s, s->cols)) return 1;
  if (!s->prior && prepare_list(p, s, s->order_by)) return 1;
  return 0;
}

int compile_window_check_call(Parse *p, SqlExpr *e) {
  SqlWindow *w = e->over;
  if (e->filter && e->func && (e->func->flags & FUNC_WINDOW)) {
    compile_parse_error(p, "FILTER clause may only be used with aggregate window functions");
    return 1;
  }
  if (w->frame == SQL_FRAME_RANGE && (w->start_expr || w->end_expr) &&
      (!w->order || w->order->n != 1)) {
    compile_parse_error(p,
                        "RANGE with offset PRECEDING/FOLLOWING requires one ORDER BY expression");
    return 1;
  }
  /* SQLite sorts by the partition and ORDER BY terms together */
  return compile_resolve_terms_limit(
      p, (w->partition ? w->partition->n : 0) + (w->order ? w->order->n : 0), "ORDER");
}

/* ---- code ---- */

/* A window's effective frame (invariant 2). */
typedef struct WinFrame {
  uint8_t frame, start, end, exclude;
  SqlExpr *start_expr, *end_expr;
} WinFrame;

typedef struct WinPass {
  SqlWindow *w; /* partition and ORDER BY */
  WinFrame fr;
  int nfn;                 /* window calls in this pass */
  int *fn;                 /* their indexes in WinCtx.fns */
  int part_col, order_col; /* first column of its partition / order values */
  int nkey;                /* sorter key columns (before the sequence) */
  uint8_t presorted;       /* its rows come from the next pass already in its order */
  int sorter;              /* sorter cursor */
  int wcur;                /* window cursor */
  int in_width;            /* columns of the rows it reads */
} WinPass;

typedef struct WinFn {
  SqlExpr *e;
  int pass;
  int arg_col, filter_col; /* in the input row */
} WinFn;

struct WinCtx {
  SqlSelect *s;
  SelInfo *info;
  int nfn, capfn;
  WinFn *fns;
  int npass;
  WinPass *passes; /* in order of first appearance; run last to first */
  int nleaf, capleaf;
  SqlExpr **leaves;
  int m; /* input row width */
  /* columns of the rows between passes: ids 0..m-1 are the input row's,
   * m + i the result of call i; owner[id] is the pass whose input id is
   * (-1: a leaf), pos[id] its place in the current pass's row (-1: not
   * carried) */
  int *owner, *pos;
  int *sel;        /* scratch: the positions carried into the next pass */
  int ins;         /* registers of a sorter insert, shared by every pass */
  int bank;        /* a pass's row registers (m + nfn), then its output's */
  SqlExpr **saved; /* replaced nodes (compile_window_end) */
  int nsaved;
  /* EXPLAIN QUERY PLAN: one "CO-ROUTINE (subquery-N)" row per pass */
  int eqp_save, eqp_base;
  uint8_t defer_last; /* the last pass's sorter opens once the loop is planned */
  int *eqp_id;
};

/* SQLite's parser numbers each SELECT core as it ends, and the SELECT * it
 * makes for a parenthesized join as that FROM item (with its ON clause)
 * ends; the subqueries it makes later (a window's) come after all of them.
 * CoreCount counts those ending before end. */
typedef struct CoreCount {
  int end, n;
} CoreCount;

static int span_end(SqlSpan sp) { return sp.start + sp.len; }

/* Where a parenthesized join's item ends (its ON clause included). */
static int item_end(const SqlSrcItem *it) {
  int e = span_end(it->span);
  return it->on && span_end(it->on->span) > e ? span_end(it->on->span) : e;
}

static void count_nested(const SqlSrcList *from, CoreCount *c) {
  for (int i = 0; from && i < from->n; i++) {
    const SqlSrcItem *it = &from->a[i];
    if (!it->nested) continue;
    count_nested(it->nested, c);
    /* (the parser splices a first item without alias, and one table alone) */
    if ((i == 0 && !it->alias && !it->on && !it->using_cols) || it->nested->n == 1) continue;
    if (item_end(it) < c->end) c->n++;
  }
}

static int count_cores_cb(SqlWalker *w, SqlSelect *s) {
  CoreCount *c = w->arg;
  for (SqlSelect *x = s; x; x = x->prior) {
    if (x->kind == SQL_SEL_VALUES && x->cols) { /* (SQLite: a SELECT per row) */
      for (int i = 0; i < x->cols->n; i++)
        if (span_end(x->cols->a[i].expr->span) < c->end) c->n++;
    } else if (span_end(x->span) < c->end) {
      c->n++;
    }
    count_nested(x->from, c);
  }
  return SQL_WALK_CONTINUE;
}

int compile_cores_before(Parse *p, int end) {
  CoreCount c = {end, 0};
  SqlWalker w = {NULL, count_cores_cb, &c};
  const SqlStmt *st = p->stmt;
  if (!st || p->nested > 0 || p->trig_tab) return 0;
  switch (st->kind) {
    case SQL_STMT_SELECT:
      sql_walk_select(&w, st->u.select);
      break;
    case SQL_STMT_INSERT:
      sql_walk_select(&w, st->u.insert.select);
      break;
    case SQL_STMT_UPDATE:
      for (int i = 0; st->u.update.set && i < st->u.update.set->n; i++)
        sql_walk_expr(&w, st->u.update.set->a[i].expr);
      sql_walk_expr(&w, st->u.update.where);
      break;
    case SQL_STMT_DELETE:
      sql_walk_expr(&w, st->u.del.where);
      break;
    default:
      break;
  }
  return c.n;
}

int compile_nest_number(Parse *p, const SqlSrcItem *a) {
  return compile_cores_before(p, item_end(a)) + 1;
}

int compile_window_statement_cores(Parse *p) {
  const SqlStmt *st = p->stmt;
  if (!st || p->nested > 0 || p->trig_tab) return 1;
  return compile_cores_before(p, INT_MAX);
}

static void fixed_frame(const SqlExpr *e, WinFrame *fr, Parse *p) {
  const FuncDef *f = e->func;
  SqlWindow *w = e->over;
  fr->frame = w->frame == SQL_FRAME_NONE ? SQL_FRAME_RANGE : w->frame;
  if (w->frame == SQL_FRAME_NONE) {
    fr->start = SQL_BOUND_UNBOUNDED_PRECEDING;
    fr->end = SQL_BOUND_CURRENT_ROW;
  } else {
    fr->start = w->start;
    fr->end = w->end;
  }
  fr->exclude = w->exclude;
  fr->start_expr = w->start_expr;
  fr->end_expr = w->end_expr;
  if (!f || !(f->flags & FUNC_WINDOW)) return;
  int kind = (int)(intptr_t)f->user_data;
  static const struct {
    int kind;
    uint8_t frame, start, end;
  } up[] = {
      {FUNC_WIN_ROW_NUMBER, SQL_FRAME_ROWS, SQL_BOUND_UNBOUNDED_PRECEDING, SQL_BOUND_CURRENT_ROW},
      {FUNC_WIN_DENSE_RANK, SQL_FRAME_RANGE, SQL_BOUND_UNBOUNDED_PRECEDING, SQL_BOUND_CURRENT_ROW},
      {FUNC_WIN_RANK, SQL_FRAME_RANGE, SQL_BOUND_UNBOUNDED_PRECEDING, SQL_BOUND_CURRENT_ROW},
      {FUNC_WIN_PERCENT_RANK, SQL_FRAME_GROUPS, SQL_BOUND_CURRENT_ROW,
       SQL_BOUND_UNBOUNDED_FOLLOWING},
      {FUNC_WIN_CUME_DIST, SQL_FRAME_GROUPS, SQL_BOUND_FOLLOWING, SQL_BOUND_UNBOUNDED_FOLLOWING},
      {FUNC_WIN_NTILE, SQL_FRAME_ROWS, SQL_BOUND_CURRENT_ROW, SQL_BOUND_UNBOUNDED_FOLLOWING},
      {FUNC_WIN_LEAD, SQL_FRAME_ROWS, SQL_BOUND_UNBOUNDED_PRECEDING, SQL_BOUND_UNBOUNDED_FOLLOWING},
      {FUNC_WIN_LAG, SQL_FRAME_ROWS, SQL_BOUND_UNBOUNDED_PRECEDING, SQL_BOUND_CURRENT_ROW},
  };
  for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
    if (up[i].kind != kind) continue;
    fr->frame = up[i].frame;
    fr->start = up[i].start;
    fr->end = up[i].end;
    fr->exclude = SQL_EXCLUDE_NONE;
    fr->start_expr = fr->end_expr = NULL;
    if (fr->start == SQL_BOUND_FOLLOWING) {
      SqlExpr *one = compile_parse_alloc(p, sizeof *one);
      if (one) {
        one->op = SQL_E_INTEGER;
        one->z = "1";
        one->height = 1;
      }
      fr->start_expr = one;
    }
    return;
  }
}

static int list_same(const SqlExprList *a, const SqlExprList *b) {
  int na = a ? a->n : 0, nb = b ? b->n : 0;
  if (na != nb) return 0;
  for (int i = 0; i < na; i++) {
    if (a->a[i].sort != b->a[i].sort || a->a[i].nulls != b->a[i].nulls) return 0;
    if (!compile_expr_same(a->a[i].expr, b->a[i].expr)) return 0;
  }
  return 1;
}

static int same_pass(const WinPass *ps, const SqlWindow *w, const WinFrame *fr) {
  return ps->fr.frame == fr->frame && ps->fr.start == fr->start && ps->fr.end == fr->end &&
         ps->fr.exclude == fr->exclude &&
         ((!ps->fr.start_expr && !fr->start_expr) ||
          (ps->fr.start_expr && fr->start_expr &&
           compile_expr_same(ps->fr.start_expr, fr->start_expr))) &&
         ((!ps->fr.end_expr && !fr->end_expr) ||
          (ps->fr.end_expr && fr->end_expr && compile_expr_same(ps->fr.end_expr, fr->end_expr))) &&
         list_same(ps->w->partition, w->partition) && list_same(ps->w->order, w->order);
}

static int add_fn(Parse *p, WinCtx *wc, SqlExpr *e) {
  for (int i = 0; i < wc->nfn; i++)
    if (wc->fns[i].e == e) return 0;
  if (wc->nfn == wc->capfn) {
    int cap = wc->capfn ? wc->capfn * 2 : 8;
    WinFn *a = compile_parse_alloc(p, sizeof(WinFn) * (size_t)cap);
    if (!a) return 1;
    if (wc->nfn) memcpy(a, wc->fns, sizeof(WinFn) * (size_t)wc->nfn);
    wc->fns = a;
    wc->capfn = cap;
  }
  WinFn *f = &wc->fns[wc->nfn++];
  memset(f, 0, sizeof *f);
  f->e = e;
  f->filter_col = -1;
  return 0;
}

/* Window calls of this core (not of its subqueries). */
static int collect_fns(Parse *p, WinCtx *wc, SqlExpr *e) {
  if (!e || e->op == SQL_E_REG) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) return add_fn(p, wc, e);
  if (collect_fns(p, wc, e->a) || collect_fns(p, wc, e->b) || collect_fns(p, wc, e->c)) return 1;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (collect_fns(p, wc, e->list->a[i].expr)) return 1;
  return 0;
}

static int has_window_call(const SqlExpr *e) {
  if (!e || e->op == SQL_E_REG) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) return 1;
  if (has_window_call(e->a) || has_window_call(e->b) || has_window_call(e->c)) return 1;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (has_window_call(e->list->a[i].expr)) return 1;
  return 0;
}

/* ---- leaves ---- */

typedef struct LeafWalk {
  Parse *p;
  WinCtx *wc;
  int rc;
} LeafWalk;

static int is_our_col(WinCtx *wc, const SqlExpr *e) {
  return e->op == SQL_E_COLREF && compile_src_find_cursor(wc->info->src, e->cursor) != NULL;
}

static int add_leaf(Parse *p, WinCtx *wc, SqlExpr *e) {
  for (int i = 0; i < wc->nleaf; i++)
    if (wc->leaves[i] == e) return 0;
  if (wc->nleaf == wc->capleaf) {
    int cap = wc->capleaf ? wc->capleaf * 2 : 8;
    SqlExpr **a = compile_parse_alloc(p, sizeof(SqlExpr *) * (size_t)cap);
    if (!a) return 1;
    if (wc->nleaf) memcpy(a, wc->leaves, sizeof(SqlExpr *) * (size_t)wc->nleaf);
    wc->leaves = a;
    wc->capleaf = cap;
  }
  wc->leaves[wc->nleaf++] = e;
  return 0;
}

static int leaf_walk_expr(SqlWalker *w, SqlExpr *e) {
  LeafWalk *lw = w->arg;
  if (e->op == SQL_E_REG || is_our_col(lw->wc, e)) {
    if (add_leaf(lw->p, lw->wc, e)) {
      lw->rc = 1;
      return SQL_WALK_ABORT;
    }
    return SQL_WALK_PRUNE;
  }
  return SQL_WALK_CONTINUE;
}

static int leaf_walk_select(SqlWalker *w, SqlSelect *s) {
  (void)w;
  (void)s;
  return SQL_WALK_CONTINUE;
}

static int collect_leaves(Parse *p, WinCtx *wc, SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) return 0; /* computed by the passes */
  if (e->op == SQL_E_REG || is_our_col(wc, e)) return add_leaf(p, wc, e);
  if (collect_leaves(p, wc, e->a) || collect_leaves(p, wc, e->b) || collect_leaves(p, wc, e->c))
    return 1;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (collect_leaves(p, wc, e->list->a[i].expr)) return 1;
  if (e->filter && collect_leaves(p, wc, e->filter)) return 1;
  if (e->select) {
    LeafWalk lw = {p, wc, 0};
    SqlWalker w = {leaf_walk_expr, leaf_walk_select, &lw};
    sql_walk_select(&w, e->select);
    if (lw.rc) return 1;
  }
  return 0;
}

/* ORDER BY terms the output evaluates (not plain references to a result
 * column). */
static SqlExpr *order_term(WinCtx *wc, int i) {
  SqlSelect *s = wc->s;
  if (!s->order_by || s->prior) return NULL;
  if (wc->info->order_col && wc->info->order_col[i] >= 0) return NULL;
  return s->order_by->a[i].expr;
}

static void pass_sorter(Parse *p, WinPass *ps, int seq_desc);

/* SQLite runs an aggregate query with windows as a subquery whose ORDER
 * BY is the innermost window's sort, and gives its GROUP BY terms that
 * ORDER BY's ASC/DESC flags when the two have as many terms: with every
 * term DESC the groups come out in reverse order, which decides the order
 * of ties in that window. The sequence column then sorts descending. */
static int groups_reversed(SqlSelect *s, SelInfo *info, WinPass *ps) {
  SqlWindow *w = ps->w;
  int np = w->partition ? w->partition->n : 0, no = w->order ? w->order->n : 0;
  if (!info->is_agg || !s->group_by || np != 0 || no == 0 || s->group_by->n != no) return 0;
  for (int i = 0; i < no; i++)
    if (w->order->a[i].sort != SQL_SORT_DESC) return 0;
  return 1;
}

/* ---- SQLite's expression depth over window passes ----
 *
 * SQLite computes each distinct window in a subquery of its own, nested
 * one inside the other (the first window outermost), and while it codes a
 * nested subquery it adds the expression height of every enclosing one to
 * the depth it checks against SQLITE_LIMIT_EXPR_DEPTH. So many windows fail
 * with "Expression tree is too large" (500 of sum(x) OVER (...)): Shale
 * reports the same, computing the heights of SQLite's nesting. Not counted:
 * the heights of SELECTs enclosing this one. */

static int height_list(const SqlExprList *l) {
  int h = 0;
  for (int i = 0; l && i < l->n; i++)
    if (l->a[i].expr && l->a[i].expr->height > h) h = l->a[i].expr->height;
  return h;
}

/* Height of e in the outermost subquery: window calls of other passes and
 * aggregates are columns of the subquery below (height 1). */
static int height_outer(const WinCtx *wc, const SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) {
    for (int i = 0; i < wc->nfn; i++)
      if (wc->fns[i].e == e) return wc->fns[i].pass == 0 ? e->height : 1;
    return e->height;
  }
  if (e->op == SQL_E_FUNC && e->agg == 1) return 1;
  if (e->select) return e->height;
  int h = height_outer(wc, e->a);
  int x = height_outer(wc, e->b);
  if (x > h) h = x;
  if ((x = height_outer(wc, e->c)) > h) h = x;
  for (int i = 0; e->list && i < e->list->n; i++)
    if ((x = height_outer(wc, e->list->a[i].expr)) > h) h = x;
  return h + 1;
}

/* Height of the inputs pass k computes below it: partition, ORDER BY,
 * arguments and FILTER of its calls. */
static int height_inputs(const WinCtx *wc, int k) {
  const WinPass *ps = &wc->passes[k];
  int h = height_list(ps->w->partition), x = height_list(ps->w->order);
  if (x > h) h = x;
  for (int j = 0; j < ps->nfn; j++) {
    const SqlExpr *e = wc->fns[ps->fn[j]].e;
    if ((x = height_list(e->list)) > h) h = x;
    if (e->filter && e->filter->height > h) h = e->filter->height;
  }
  return h;
}

static int window_depth_check(Parse *p, WinCtx *wc) {
  int max = p->env && p->env->max_expr_depth > 0 ? p->env->max_expr_depth : 1000;
  int n = wc->npass;
  if (n < 2) return 0;
  SqlSelect *s = wc->s;
  int acc = 0; /* heights of the subqueries enclosing level L */
  for (int L = 0; L < n; L++) {
    /* level L + 1 as SQLite resolves it, inside levels 0 .. L - 1 */
    int h = height_inputs(wc, L);
    if (L + 1 < n) {
      for (int i = 0; i < wc->nfn; i++)
        if (wc->fns[i].pass > L && wc->fns[i].e->height > h) h = wc->fns[i].e->height;
    } else {
      if (s->where && s->where->height > h) h = s->where->height;
      if (s->having && s->having->height > h) h = s->having->height;
      int x = height_list(s->group_by);
      if (x > h) h = x;
    }
    if (h < 1) h = 1;
    if (acc + h > max) {
      compile_parse_error(p, "Expression tree is too large (maximum depth %d)", max);
      return 1;
    }
    /* this level's own height, for the levels inside it */
    int own = 1;
    if (L == 0) {
      for (int i = 0; i < wc->info->result->n; i++) {
        int x = height_outer(wc, wc->info->result->a[i].expr);
        if (x > own) own = x;
      }
      for (int i = 0; s->order_by && i < s->order_by->n; i++) {
        int x = height_outer(wc, order_term(wc, i));
        if (x > own) own = x;
      }
    } else {
      for (int j = 0; j < wc->passes[L].nfn; j++) {
        int x = wc->fns[wc->passes[L].fn[j]].e->height;
        if (x > own) own = x;
      }
    }
    acc += own;
  }
  return 0;
}

static int nulls_key(const SqlExprItem *t) {
  return (t->nulls == SQL_NULLS_LAST && t->sort != SQL_SORT_DESC) ||
         (t->nulls == SQL_NULLS_FIRST && t->sort == SQL_SORT_DESC);
}

/* Sort term i of a pass (partition terms, then ORDER BY terms). */
static const SqlExprItem *sort_term(const WinPass *ps, int i, int *is_part) {
  int np = ps->w->partition ? ps->w->partition->n : 0;
  *is_part = i < np;
  return i < np ? &ps->w->partition->a[i] : &ps->w->order->a[i - np];
}

/* Are a's sort terms the first ones of b's (same expressions, collations,
 * directions and NULL placement)? */
static int keys_prefix(Parse *p, const WinPass *a, const WinPass *b) {
  int na = (a->w->partition ? a->w->partition->n : 0) + (a->w->order ? a->w->order->n : 0);
  int nb = (b->w->partition ? b->w->partition->n : 0) + (b->w->order ? b->w->order->n : 0);
  if (na == 0 || na > nb) return 0;
  for (int i = 0; i < na; i++) {
    int pa, pb;
    const SqlExprItem *x = sort_term(a, i, &pa), *y = sort_term(b, i, &pb);
    int dx = !pa && x->sort == SQL_SORT_DESC, dy = !pb && y->sort == SQL_SORT_DESC;
    int nx = !pa && nulls_key(x), ny = !pb && nulls_key(y);
    if (dx != dy || nx != ny || !compile_expr_same(x->expr, y->expr)) return 0;
    if (compile_expr_collation(p, x->expr) != compile_expr_collation(p, y->expr)) return 0;
  }
  return 1;
}

WinCtx *compile_window_begin(Parse *p, SqlSelect *s, SelInfo *info) {
  if (parse_failed(p) || s->kind == SQL_SEL_VALUES || !info || !info->result) return NULL;
  WinCtx *wc = compile_parse_alloc(p, sizeof *wc);
  if (!wc) return NULL;
  wc->s = s;
  wc->info = info;
  for (int i = 0; i < info->result->n; i++)
    if (collect_fns(p, wc, info->result->a[i].expr)) return NULL;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_fns(p, wc, order_term(wc, i))) return NULL;
  if (!wc->nfn) return NULL;
  /* group the calls into passes */
  wc->passes = compile_parse_alloc(p, sizeof(WinPass) * (size_t)wc->nfn);
  if (!wc->passes) return NULL;
  for (int i = 0; i < wc->nfn; i++) {
    SqlExpr *e = wc->fns[i].e;
    WinFrame fr;
    fixed_frame(e, &fr, p);
    int k = 0;
    while (k < wc->npass && !same_pass(&wc->passes[k], e->over, &fr)) k++;
    if (k == wc->npass) {
      WinPass *ps = &wc->passes[wc->npass++];
      memset(ps, 0, sizeof *ps);
      ps->w = e->over;
      ps->fr = fr;
      ps->fn = compile_parse_alloc(p, sizeof(int) * (size_t)wc->nfn);
      if (!ps->fn) return NULL;
    }
    wc->fns[i].pass = k;
    wc->passes[k].fn[wc->passes[k].nfn++] = i;
  }
  if (window_depth_check(p, wc)) return NULL;
  /* EXPLAIN QUERY PLAN: the loop's rows go under the innermost co-routine */
  SelectState *sst = compile_select_state(p);
  wc->eqp_id = compile_parse_alloc(p, sizeof(int) * (size_t)wc->npass);
  if (!sst || !wc->eqp_id) return NULL;
  wc->eqp_base = compile_window_statement_cores(p) + 1 + sst->nwinsub;
  sst->nwinsub += wc->npass;
  wc->eqp_save = p->eqp_parent;
  for (int k = 0; k < wc->npass; k++) {
    wc->eqp_id[k] = compile_parse_eqp(p, "CO-ROUTINE (subquery-%d)", wc->eqp_base + k);
    p->eqp_parent = wc->eqp_id[k];
  }
  /* a pass whose partition and ORDER BY terms begin the next pass's (the
   * one run before it) gets that pass's rows in its own order: as SQLite
   * drops the ORDER BY of such a window subquery, its rows are kept in
   * arrival order (the sorter orders by the sequence alone) */
  for (int k = 0; k + 1 < wc->npass; k++)
    wc->passes[k].presorted = (uint8_t)keys_prefix(p, &wc->passes[k], &wc->passes[k + 1]);
  /* every pass's sorter, opened before the rows come; outside an
   * aggregate the one the loop fills waits for the loop's plan
   * (compile_window_loop_planned) */
  wc->defer_last = (uint8_t)!info->is_agg;
  for (int k = 0; k < wc->npass - wc->defer_last; k++)
    pass_sorter(p, &wc->passes[k], k == wc->npass - 1 && groups_reversed(s, info, &wc->passes[k]));
  return parse_failed(p) ? NULL : wc;
}

SqlExprList *compile_window_loop_order(Parse *p, WinCtx *wc) {
  if (!wc || !wc->defer_last) return NULL;
  SqlWindow *w = wc->passes[wc->npass - 1].w;
  SqlExprList *l = NULL;
  for (int i = 0; w->partition && i < w->partition->n; i++)
    if (!(l = compile_sel_list_add(p, l, w->partition->a[i].expr))) return NULL;
  for (int i = 0; w->order && i < w->order->n; i++) {
    if (!(l = compile_sel_list_add(p, l, w->order->a[i].expr))) return NULL;
    l->a[l->n - 1].sort = w->order->a[i].sort;
    l->a[l->n - 1].nulls = w->order->a[i].nulls;
  }
  return l;
}

void compile_window_loop_planned(Parse *p, WinCtx *wc, int ordered) {
  if (!wc || !wc->defer_last) return;
  WinPass *ps = &wc->passes[wc->npass - 1];
  if (ordered) ps->presorted = 1;
  pass_sorter(p, ps, 0);
}

/* Open a pass's sorter: key = partition values, ORDER BY values (with a
 * NULL-placement column where needed), sequence. */
static void pass_sorter(Parse *p, WinPass *ps, int seq_desc) {
  SqlWindow *w = ps->w;
  int np = w->partition ? w->partition->n : 0, no = w->order ? w->order->n : 0;
  if (ps->presorted) np = no = 0; /* the sequence alone */
  int nk = np;
  for (int i = 0; i < no; i++) nk += 1 + nulls_key(&w->order->a[i]);
  const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1));
  uint8_t *desc = compile_parse_alloc(p, (size_t)(nk + 1));
  if (!coll || !desc) return;
  int k = 0;
  for (int i = 0; i < np; i++) coll[k++] = compile_expr_collation(p, w->partition->a[i].expr);
  for (int i = 0; i < no; i++) {
    SqlExprItem *t = &w->order->a[i];
    uint8_t d = t->sort == SQL_SORT_DESC;
    if (nulls_key(t)) desc[k++] = d;
    coll[k] = compile_expr_collation(p, t->expr);
    desc[k++] = d;
  }
  desc[nk] = (uint8_t)seq_desc;
  KeyInfo *ki = compile_parse_keyinfo(p, nk + 1, coll, desc);
  if (!ki) return;
  ps->nkey = nk;
  ps->sorter = emit_cursor(p);
  vm_builder_add_p4(&p->b, OP_SorterOpen, ps->sorter, nk + 1, 0, P4_KEYINFO, ki);
}

/* Insert a row into pass ps's sorter: its key from the registers at src
 * (column id c at src + srcpos[c]), then the n registers src + sel[i]. */
static void pass_insert(Parse *p, WinCtx *wc, WinPass *ps, int src, const int *srcpos,
                        const int *sel, int n) {
  SqlWindow *w = ps->w;
  int np = w->partition ? w->partition->n : 0, no = w->order ? w->order->n : 0;
  if (ps->presorted) np = no = 0;
  int base = wc->ins;
  int k = base;
  for (int i = 0; i < np; i++) emit(p, OP_SCopy, src + srcpos[ps->part_col + i], k++, 0);
  for (int i = 0; i < no; i++) {
    int v = src + srcpos[ps->order_col + i];
    if (nulls_key(&w->order->a[i])) {
      int l = emit_label(p);
      emit(p, OP_Integer, 0, k, 0);
      emit(p, OP_NotNull, v, l, 0);
      emit(p, OP_Integer, 1, k, 0);
      emit_resolve(p, l);
      k++;
    }
    emit(p, OP_SCopy, v, k++, 0);
  }
  emit(p, OP_Sequence, ps->sorter, k++, 0);
  for (int i = 0; i < n; i++) emit(p, OP_SCopy, src + sel[i], k + i, 0);
  int rec = emit_regs(p, 1);
  emit(p, OP_MakeRecord, base, ps->nkey + 1 + n, rec);
  emit(p, OP_SorterInsert, ps->sorter, rec, 0);
}

/* Every window call under e has the PARTITION BY list *part (the first
 * found sets it); 0 when one has another or none. */
static int same_partition(const SqlExpr *e, const SqlExprList **part) {
  if (!e || e->op == SQL_E_REG) return 1;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) {
    const SqlExprList *l = e->over->partition;
    if (!l || l->n == 0) return 0;
    if (!*part) {
      *part = l;
    } else {
      if ((*part)->n != l->n) return 0;
      for (int i = 0; i < l->n; i++)
        if (!compile_expr_same((*part)->a[i].expr, l->a[i].expr)) return 0;
    }
  }
  if (!same_partition(e->a, part) || !same_partition(e->b, part) || !same_partition(e->c, part))
    return 0;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (!same_partition(e->list->a[i].expr, part)) return 0;
  return 1;
}

const SqlExprList *compile_window_partition(const SqlSelect *s) {
  const SelInfo *info = s->info;
  const SqlExprList *part = NULL;
  if (!info || !info->result || s->kind == SQL_SEL_VALUES) return NULL;
  for (int i = 0; i < info->result->n; i++)
    if (!same_partition(info->result->a[i].expr, &part)) return NULL;
  for (int i = 0; s->order_by && !s->prior && i < s->order_by->n; i++)
    if ((!info->order_col || info->order_col[i] < 0) &&
        !same_partition(s->order_by->a[i].expr, &part))
      return NULL;
  return part;
}

int compile_window_in_core(const SqlSelect *s) {
  const SelInfo *info = s->info;
  if (!info || !info->result || s->kind == SQL_SEL_VALUES) return 0;
  for (int i = 0; i < info->result->n; i++)
    if (has_window_call(info->result->a[i].expr)) return 1;
  for (int i = 0; s->order_by && !s->prior && i < s->order_by->n; i++)
    if ((!info->order_col || info->order_col[i] < 0) && has_window_call(s->order_by->a[i].expr))
      return 1;
  return 0;
}

/* The first window call of a core (result list, then evaluated ORDER BY
 * terms), or NULL. */
static SqlExpr *first_call(SqlExpr *e) {
  if (!e || e->op == SQL_E_REG) return NULL;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over) return e;
  SqlExpr *r;
  if ((r = first_call(e->a)) || (r = first_call(e->b)) || (r = first_call(e->c))) return r;
  for (int i = 0; e->list && i < e->list->n; i++)
    if ((r = first_call(e->list->a[i].expr))) return r;
  return NULL;
}

int compile_window_sorts_output(Parse *p, SqlSelect *s) {
  SelInfo *info = s->info;
  if (s->prior || !s->order_by || !info || !info->result || s->kind == SQL_SEL_VALUES) return 0;
  SqlExpr *f = NULL;
  for (int i = 0; !f && i < info->result->n; i++) f = first_call(info->result->a[i].expr);
  for (int i = 0; !f && i < s->order_by->n; i++)
    if (!info->order_col || info->order_col[i] < 0) f = first_call(s->order_by->a[i].expr);
  if (!f) return 0;
  SqlWindow *w = f->over;
  int np = w->partition ? w->partition->n : 0, no = w->order ? w->order->n : 0;
  if (s->order_by->n > np + no) return 0;
  for (int i = 0; i < s->order_by->n; i++) {
    SqlExprItem *t = &s->order_by->a[i];
    SqlExpr *oe = info->order_col && info->order_col[i] >= 0
                      ? info->result->a[info->order_col[i]].expr
                      : t->expr;
    const SqlExprItem *k = i < np ? &w->partition->a[i] : &w->order->a[i - np];
    uint8_t ks = i < np ? SQL_SORT_NONE : k->sort, kn = i < np ? SQL_NULLS_NONE : k->nulls;
    if ((t->sort == SQL_SORT_DESC) != (ks == SQL_SORT_DESC)) return 0;
    if (t->nulls != kn || !oe || !compile_expr_same(oe, k->expr)) return 0;
    if (compile_expr_collation(p, oe) != compile_expr_collation(p, k->expr)) return 0;
  }
  return 1;
}

void compile_window_push(Parse *p, WinCtx *wc) {
  if (parse_failed(p)) return;
  SqlSelect *s = wc->s;
  SelInfo *info = wc->info;
  /* leaves: read now (after an aggregate query replaced its calls) */
  wc->nleaf = 0;
  for (int i = 0; i < info->result->n; i++)
    if (collect_leaves(p, wc, info->result->a[i].expr)) return;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_leaves(p, wc, order_term(wc, i))) return;
  /* layout of the input row */
  int m = wc->nleaf;
  for (int k = 0; k < wc->npass; k++) {
    WinPass *ps = &wc->passes[k];
    ps->part_col = m;
    m += ps->w->partition ? ps->w->partition->n : 0;
    ps->order_col = m;
    m += ps->w->order ? ps->w->order->n : 0;
  }
  for (int i = 0; i < wc->nfn; i++) {
    WinFn *f = &wc->fns[i];
    f->arg_col = m;
    m += f->e->list ? f->e->list->n : 0;
    if (f->e->filter) f->filter_col = m++;
  }
  wc->m = m;
  int nid = m + wc->nfn, maxkey = 0;
  wc->owner = compile_parse_alloc(p, sizeof(int) * (size_t)(nid + 1));
  wc->pos = compile_parse_alloc(p, sizeof(int) * (size_t)(nid + 1));
  wc->sel = compile_parse_alloc(p, sizeof(int) * (size_t)(3 * nid + 1));
  if (!wc->owner || !wc->pos || !wc->sel) return;
  for (int c = 0; c < nid; c++) {
    wc->owner[c] = -1;
    wc->pos[c] = c < m ? c : -1;
    wc->sel[c] = c;
  }
  for (int k = 0; k < wc->npass; k++) {
    WinPass *ps = &wc->passes[k];
    int n = (ps->w->partition ? ps->w->partition->n : 0) + (ps->w->order ? ps->w->order->n : 0);
    for (int c = ps->part_col; c < ps->part_col + n; c++) wc->owner[c] = k;
    if (ps->nkey > maxkey) maxkey = ps->nkey;
  }
  for (int i = 0; i < wc->nfn; i++) {
    WinFn *f = &wc->fns[i];
    int n = (f->e->list ? f->e->list->n : 0) + (f->e->filter ? 1 : 0);
    for (int c = f->arg_col; c < f->arg_col + n; c++) wc->owner[c] = f->pass;
  }
  /* registers shared by the passes: each pass runs to its end before the
   * next one starts, and an insert's registers die at its MakeRecord */
  wc->ins = emit_regs(p, maxkey + 1 + nid);
  wc->bank = emit_regs(p, 2 * nid + 1);
  int row = emit_regs(p, m > 0 ? m : 1);
  for (int i = 0; i < wc->nleaf; i++) compile_expr_code(p, wc->leaves[i], row + i);
  for (int k = 0; k < wc->npass; k++) {
    WinPass *ps = &wc->passes[k];
    if (ps->w->partition) compile_expr_code_list(p, ps->w->partition, row + ps->part_col);
    for (int i = 0; ps->w->order && i < ps->w->order->n; i++)
      compile_expr_code(p, ps->w->order->a[i].expr, row + ps->order_col + i);
  }
  for (int i = 0; i < wc->nfn; i++) {
    WinFn *f = &wc->fns[i];
    if (f->e->list) compile_expr_code_list(p, f->e->list, row + f->arg_col);
    if (f->e->filter) compile_expr_code(p, f->e->filter, row + f->filter_col);
  }
  pass_insert(p, wc, &wc->passes[wc->npass - 1], row, wc->pos, wc->sel, m);
}

/* A frame offset: constant expressions only, as SQLite judges them while
 * parsing (no names, subqueries or function calls); it turns any other
 * into NULL, which the engine then refuses. */
static int offset_reg(Parse *p, SqlExpr *e) {
  if (!e) return 0;
  int r = emit_regs(p, 1);
  int bad = 0;
  /* names and subqueries make it non-constant */
  SqlExpr *stack[64];
  int sp = 0;
  stack[sp++] = e;
  while (sp > 0 && !bad) {
    SqlExpr *x = stack[--sp];
    if (!x) continue;
    if (x->op == SQL_E_ID || x->op == SQL_E_COLUMN || x->op == SQL_E_COLREF || x->select ||
        x->op == SQL_E_STAR || x->op == SQL_E_TRIGREF || x->op == SQL_E_FUNC ||
        x->op == SQL_E_RAISE || x->op == SQL_E_CTIME) {
      bad = 1;
      break;
    }
    if (sp + 3 + (x->list ? x->list->n : 0) >= 64) {
      bad = 1;
      break;
    }
    stack[sp++] = x->a;
    stack[sp++] = x->b;
    stack[sp++] = x->c;
    for (int i = 0; x->list && i < x->list->n; i++) stack[sp++] = x->list->a[i].expr;
  }
  if (!bad) {
    NameCtx nc;
    memset(&nc, 0, sizeof nc);
    if (compile_resolve_expr(p, &nc, e)) return r;
    if (!compile_expr_is_constant(e)) bad = 1;
  }
  if (bad)
    emit(p, OP_Null, 0, r, 0);
  else
    compile_expr_code(p, e, r);
  return r;
}

static int vf_nargs_of(const WinFn *f) { return f->e->list ? f->e->list->n : 0; }

static VmWinSpec *pass_spec(Parse *p, WinCtx *wc, WinPass *ps, int width) {
  UtilArena *a = &p->b.prog->arena;
  VmWinSpec *sp = util_arena_zalloc(a, sizeof *sp);
  SqlWindow *w = ps->w;
  int np = w->partition ? w->partition->n : 0, no = w->order ? w->order->n : 0;
  int *part = util_arena_zalloc(a, sizeof(int) * (size_t)(np + 1));
  const Collation **pcoll = util_arena_zalloc(a, sizeof(Collation *) * (size_t)(np + 1));
  int *order = util_arena_zalloc(a, sizeof(int) * (size_t)(no + 1));
  const Collation **ocoll = util_arena_zalloc(a, sizeof(Collation *) * (size_t)(no + 1));
  uint8_t *desc = util_arena_zalloc(a, (size_t)(no + 1));
  uint8_t *nf = util_arena_zalloc(a, (size_t)(no + 1));
  VmWinFunc *fns = util_arena_zalloc(a, sizeof(VmWinFunc) * (size_t)(ps->nfn + 1));
  if (!sp || !part || !pcoll || !order || !ocoll || !desc || !nf || !fns) {
    compile_parse_nomem(p);
    return NULL;
  }
  sp->ncol = width;
  sp->npart = np;
  for (int i = 0; i < np; i++) {
    part[i] = wc->pos[ps->part_col + i];
    pcoll[i] = compile_expr_collation(p, w->partition->a[i].expr);
  }
  sp->part = part;
  sp->part_coll = pcoll;
  sp->norder = no;
  for (int i = 0; i < no; i++) {
    SqlExprItem *t = &w->order->a[i];
    order[i] = wc->pos[ps->order_col + i];
    ocoll[i] = compile_expr_collation(p, t->expr);
    desc[i] = t->sort == SQL_SORT_DESC;
    nf[i] = t->nulls == SQL_NULLS_FIRST || (t->nulls == SQL_NULLS_NONE && !desc[i]);
  }
  sp->order = order;
  sp->order_coll = ocoll;
  sp->order_desc = desc;
  sp->order_nulls_first = nf;
  sp->frame = ps->fr.frame;
  sp->start = ps->fr.start;
  sp->end = ps->fr.end;
  sp->exclude = ps->fr.exclude;
  sp->nfunc = ps->nfn;
  for (int j = 0; j < ps->nfn; j++) {
    WinFn *f = &wc->fns[ps->fn[j]];
    VmWinFunc *vf = &fns[j];
    vf->def = f->e->func;
    vf->arg = vf_nargs_of(f) ? wc->pos[f->arg_col] : 0;
    vf->nargs = f->e->list ? f->e->list->n : 0;
    vf->filter = f->filter_col >= 0 ? wc->pos[f->filter_col] : -1;
    if ((vf->def->flags & FUNC_NEEDCOLL) && vf->nargs > 0)
      vf->coll = compile_expr_collation(p, f->e->list->a[0].expr);
  }
  sp->funcs = fns;
  return sp;
}

/* Replace node e by register reg, keeping the original (as the aggregate
 * code does), and remember it for compile_window_end's restore. */
static void node_to_reg(Parse *p, WinCtx *wc, SqlExpr *e, int reg) {
  if (compile_select_expr_to_reg(p, e, reg, 1)) wc->saved[wc->nsaved++] = e;
}

/* After pass ps (its rows of width in_width, then one value per call):
 * the positions carried into the next pass (wc->sel, returned count) --
 * every column but the pass's own inputs, and its results -- and their
 * places there (wc->pos). */
static int pass_carry(WinCtx *wc, int k, int in_width) {
  WinPass *ps = &wc->passes[k];
  int nid = wc->m + wc->nfn, n = 0;
  for (int j = 0; j < ps->nfn; j++) wc->pos[wc->m + ps->fn[j]] = in_width + j;
  /* ids in order of their current place, so a call's arguments stay together */
  int *by_pos = wc->sel + nid; /* scratch after sel (allocated 2 * nid + 1) */
  for (int q = 0; q < in_width + ps->nfn; q++) by_pos[q] = -1;
  for (int c = 0; c < nid; c++)
    if (wc->pos[c] >= 0) by_pos[wc->pos[c]] = c;
  for (int q = 0; q < in_width + ps->nfn; q++) {
    int c = by_pos[q];
    if (c < 0) continue;
    if (c < wc->m && wc->owner[c] == k) {
      wc->pos[c] = -1;
      continue;
    }
    wc->sel[n] = q;
    wc->pos[c] = n++;
  }
  return n;
}

void compile_window_end(Parse *p, WinCtx *wc, void (*out)(Parse *, void *), void *arg) {
  if (parse_failed(p)) return;
  int width = wc->m;
  int nid = wc->m + wc->nfn;
  int rowregs = wc->bank, outregs = wc->bank + nid;
  for (int k = wc->npass - 1; k >= 0 && !parse_failed(p); k--) {
    WinPass *ps = &wc->passes[k];
    int in_width = width;
    VmWinSpec *spec = pass_spec(p, wc, ps, in_width);
    if (!spec) return;
    if (ps->nkey) compile_parse_eqp(p, "USE TEMP B-TREE FOR ORDER BY");
    p->eqp_parent = k > 0 ? wc->eqp_id[k - 1] : wc->eqp_save;
    compile_parse_eqp(p, "SCAN (subquery-%d)", wc->eqp_base + k);
    int r0 = offset_reg(p, ps->fr.start_expr);
    int r1 = offset_reg(p, ps->fr.end_expr);
    if (parse_failed(p)) return;
    int rec = emit_regs(p, 1);
    int retreg = emit_regs(p, 1);
    int pseudo = emit_cursor(p);
    ps->wcur = emit_cursor(p);
    int l_end = emit_label(p), l_top = emit_label(p), l_drain = emit_label(p),
        l_ret = emit_label(p), l_after = emit_label(p);
    vm_builder_add_p4(&p->b, OP_WinOpen, ps->wcur, r0, r1, P4_WINDOW, spec);
    emit(p, OP_OpenPseudo, pseudo, rec, ps->nkey + 1 + in_width);
    emit(p, OP_SorterSort, ps->sorter, l_end, 0);
    emit_resolve(p, l_top);
    emit(p, OP_SorterData, ps->sorter, rec, pseudo);
    for (int i = 0; i < in_width; i++) emit(p, OP_Column, pseudo, ps->nkey + 1 + i, rowregs + i);
    emit(p, OP_WinPush, ps->wcur, rowregs, in_width);
    emit(p, OP_Gosub, retreg, l_drain, 0);
    emit(p, OP_SorterNext, ps->sorter, l_top, 0);
    emit_resolve(p, l_end);
    emit(p, OP_WinEnd, ps->wcur, 0, 0);
    emit(p, OP_Gosub, retreg, l_drain, 0);
    emit(p, OP_Goto, 0, l_after, 0);
    emit_resolve(p, l_drain);
    emit(p, OP_WinRow, ps->wcur, l_ret, outregs);
    if (k > 0) {
      /* the positions in this pass's output of the next pass's key columns
       * are still those of wc->pos before the carry */
      int nsel = pass_carry(wc, k, in_width);
      /* pass_carry renumbered pos to the next row: the key columns are
       * read through the carried list */
      int *srcpos = wc->sel + nid;
      for (int c = 0; c < nid; c++) srcpos[c] = wc->pos[c] >= 0 ? wc->sel[wc->pos[c]] : -1;
      pass_insert(p, wc, &wc->passes[k - 1], outregs, srcpos, wc->sel, nsel);
      width = nsel;
    } else {
      /* the output: leaves and window calls read the row's registers */
      for (int j = 0; j < ps->nfn; j++) wc->pos[wc->m + ps->fn[j]] = in_width + j;
      wc->saved = compile_parse_alloc(p, sizeof(SqlExpr *) * (size_t)(wc->nleaf + wc->nfn + 1));
      if (!wc->saved) return;
      wc->nsaved = 0;
      for (int i = 0; i < wc->nfn; i++)
        node_to_reg(p, wc, wc->fns[i].e, outregs + wc->pos[wc->m + i]);
      for (int i = 0; i < wc->nleaf; i++) node_to_reg(p, wc, wc->leaves[i], outregs + wc->pos[i]);
      if (!parse_failed(p)) out(p, arg);
      for (int i = wc->nsaved - 1; i >= 0; i--) {
        SqlExpr *e = wc->saved[i];
        if (e->op == SQL_E_REG && e->orig) *e = *e->orig;
      }
      wc->nsaved = 0;
    }
    emit(p, OP_Goto, 0, l_drain, 0);
    emit_resolve(p, l_ret);
    emit(p, OP_Return, retreg, 0, 0);
    emit_resolve(p, l_after);
    emit(p, OP_Close, ps->wcur, 0, 0);
    /* this pass's rows are no longer needed: with many windows the sorters
     * of the passes done would otherwise hold every pass's rows at once */
    emit(p, OP_Close, ps->sorter, 1, 0);
  }
  p->eqp_parent = wc->eqp_save;
}
