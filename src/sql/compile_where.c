/*
 * compile_where.c -- nested loops over a FROM list (where_begin/where_end),
 * on the plan chosen by src/plan/.
 *
 * Owns: the WhereInfo of one loop nest (Parse arena). The terms of WHERE and
 * of every ON clause are split into AND-terms; each term is coded once, at
 * the innermost loop it needs (a LEFT JOIN item's ON terms at that item's
 * loop, before its match flag is set).
 *
 * Code shape for one level (item X, LEFT JOIN when match != 0):
 *     [match = 0; null = 0]
 *     open loop (Rewind / seek / Yield)         -> brk when empty
 *   top:
 *     ON terms of X (LEFT JOIN)                  false -> cont
 *     [match = 1]
 *   body:
 *     terms whose innermost item is X            false -> cont
 *     ... inner levels / caller's code ...
 *   cont:
 *     [if null -> done]                          (a padded row does not advance)
 *     advance (Next/Prev/Goto)                   -> top
 *   brk:
 *     [if match -> done; NullRow X; null = 1; match = 1; -> body]
 *   done:
 *
 * Invariants:
 *  1. Every AND-term is coded exactly once, or used by an access path that
 *     makes it true for every row the path visits (it may still be coded:
 *     re-testing is always allowed).
 *  2. A WHERE term never restricts the loop of a LEFT JOIN's right-hand item
 *     (only that item's ON terms may), and a LEFT JOIN item's ON terms are
 *     coded at its own level so that failing them pads instead of dropping.
 *  3. A LEFT JOIN or CROSS JOIN item comes after every item to its left in
 *     loop order.
 */
#include <string.h>

#include "../plan/plan.h"
#include "compile.h"

typedef struct WTerm {
  SqlExpr *expr;
  uint64_t mask;  /* FROM items the term reads (bit = index in src) */
  int on_item;    /* index of the LEFT JOIN item whose ON this is, or -1 */
  uint8_t coded;  /* already coded (or fully served by an access path) */
  uint8_t varies; /* reads no item but is not constant (random(), subquery) */
} WTerm;

typedef struct WLevel {
  int item;          /* index in src */
  int cont, brk;     /* labels */
  int top;           /* label of the loop's first op after the open */
  int body;          /* label after the match flag is set */
  int done;          /* label after padding */
  int adv_op;        /* OP_Next, OP_Prev, OP_Goto (coroutine), or 0 (one row) */
  int adv_cur;       /* cursor for adv_op */
  int match_reg;     /* LEFT JOIN match flag, else 0 */
  int null_reg;      /* LEFT JOIN: 1 while the row is padded */
  int in_nloop;      /* IN loops wrapped around the access (planner) */
  PlanLevel *plan;   /* access path (NULL: full scan) */
  int idx_cur;       /* index cursor or -1 */
} WLevel;

struct WhereInfo {
  Parse *p;
  SrcList *src;
  int nlevel;
  WLevel *lv;
  int nterm, capterm;
  WTerm *terms;
  int brk;        /* after every loop */
  int order_ok;   /* the loops deliver order_by */
  int saved_eqp_parent;
};

/* ---- term collection ---- */

typedef struct MaskCtx {
  SrcList *src;
  uint64_t mask;
} MaskCtx;

static int mask_cb(SqlWalker *w, SqlExpr *e) {
  MaskCtx *m = w->arg;
  if (e->op == SQL_E_COLREF) {
    for (int i = 0; i < m->src->n; i++)
      if (m->src->a[i].cursor == e->cursor) m->mask |= (uint64_t)1 << (i < 63 ? i : 63);
  }
  return SQL_WALK_CONTINUE;
}
static int mask_sel_cb(SqlWalker *w, SqlSelect *s) {
  (void)w;
  (void)s;
  return SQL_WALK_CONTINUE;
}

static uint64_t expr_mask(SrcList *src, SqlExpr *e) {
  MaskCtx m = {src, 0};
  SqlWalker w = {mask_cb, mask_sel_cb, &m};
  sql_walk_expr(&w, e);
  return m.mask;
}

static void add_term(WhereInfo *w, SqlExpr *e, int on_item) {
  if (!e) return;
  if (e->op == SQL_E_BINARY && e->sub == TK_AND) {
    add_term(w, e->a, on_item);
    add_term(w, e->b, on_item);
    return;
  }
  if (w->nterm == w->capterm) {
    int cap = w->capterm ? w->capterm * 2 : 16;
    WTerm *t = parse_alloc(w->p, sizeof(WTerm) * (size_t)cap);
    if (!t) return;
    if (w->nterm) memcpy(t, w->terms, sizeof(WTerm) * (size_t)w->nterm);
    w->terms = t;
    w->capterm = cap;
  }
  WTerm *t = &w->terms[w->nterm++];
  memset(t, 0, sizeof *t);
  t->expr = e;
  t->on_item = on_item;
  t->mask = expr_mask(w->src, e);
  if (t->mask == 0 && !expr_is_constant(e)) t->varies = 1;
}

/* ---- emitting ---- */

static void code_term(WhereInfo *w, WTerm *t, int label) {
  t->coded = 1;
  expr_if_false(w->p, t->expr, label, 1);
}

/* Terms that can be coded once the items in `have` are positioned, at the
 * level whose item is `item` (-1: before any loop). */
static void code_ready_terms(WhereInfo *w, uint64_t have, int item, int label, int last) {
  for (int i = 0; i < w->nterm; i++) {
    WTerm *t = &w->terms[i];
    if (t->coded || t->on_item >= 0) continue;
    if ((t->mask & ~have) != 0) continue;
    if (t->varies && !last) continue;
    (void)item;
    code_term(w, t, label);
  }
}

static const char *item_name(const SrcItem *it) {
  if (it->name) return it->name;
  if (it->tab && it->tab->name) return it->tab->name;
  return "(subquery)";
}

static int src_is_left(const SrcItem *it) { return (it->jointype & SQL_JOIN_LEFT) != 0; }

WhereInfo *where_begin(Parse *p, SrcList *src, SqlExpr *where, SqlExprList *order_by, int flags) {
  (void)flags;
  (void)order_by;
  if (parse_failed(p)) return NULL;
  WhereInfo *w = parse_alloc(p, sizeof *w);
  if (!w) return NULL;
  w->p = p;
  w->src = src;
  int n = src ? src->n : 0;
  w->nlevel = n;
  w->lv = n ? parse_alloc(p, sizeof(WLevel) * (size_t)n) : NULL;
  if (n && !w->lv) return NULL;
  w->brk = emit_label(p);

  for (int i = 0; i < n; i++) {
    SrcItem *it = &src->a[i];
    if (it->jointype & SQL_JOIN_RIGHT) {
      parse_error(p, "RIGHT and FULL OUTER JOINs are not supported");
      return NULL;
    }
    add_term(w, it->on, src_is_left(it) ? i : -1);
  }
  add_term(w, where, -1);
  if (parse_failed(p)) return NULL;

  /* Loop order: FROM order for now. */
  for (int k = 0; k < n; k++) w->lv[k].item = k;

  /* Open the tables' cursors once, before the loops. */
  for (int k = 0; k < n; k++) {
    SrcItem *it = &src->a[w->lv[k].item];
    if (it->kind == SRC_TABLE) {
      parse_need_read(p);
      parse_open_table(p, it->cursor, it->tab, 0);
    }
  }

  /* Constant terms: before every loop. */
  code_ready_terms(w, 0, -1, w->brk, n == 0);

  uint64_t have = 0;
  for (int k = 0; k < n; k++) {
    WLevel *L = &w->lv[k];
    SrcItem *it = &src->a[L->item];
    L->cont = emit_label(p);
    L->brk = emit_label(p);
    L->top = emit_label(p);
    L->body = emit_label(p);
    L->done = emit_label(p);
    L->idx_cur = -1;
    if (src_is_left(it)) {
      L->match_reg = emit_regs(p, 1);
      L->null_reg = emit_regs(p, 1);
      it->null_reg = L->null_reg;
      emit(p, OP_Integer, 0, L->match_reg, 0);
      emit(p, OP_Integer, 0, L->null_reg, 0);
    }
    if (it->kind == SRC_SUBQUERY) {
      src_code_subquery(p, it);
      if (it->co_reg) {
        emit_resolve(p, L->top);
        emit(p, OP_Yield, it->co_reg, L->brk, 0);
        L->adv_op = OP_Goto;
        L->adv_cur = 0;
      } else {
        emit(p, OP_Rewind, it->cursor, L->brk, 0);
        emit_resolve(p, L->top);
        L->adv_op = OP_Next;
        L->adv_cur = it->cursor;
      }
      parse_eqp(p, "SCAN %s%s", item_name(it), src_is_left(it) ? " LEFT-JOIN" : "");
    } else {
      emit(p, OP_Rewind, it->cursor, L->brk, 0);
      emit_resolve(p, L->top);
      L->adv_op = OP_Next;
      L->adv_cur = it->cursor;
      parse_eqp(p, "SCAN %s%s", item_name(it), src_is_left(it) ? " LEFT-JOIN" : "");
    }
    have |= (uint64_t)1 << (L->item < 63 ? L->item : 63);
    /* ON terms of a LEFT JOIN item: here, before the match flag. */
    for (int i = 0; i < w->nterm; i++) {
      WTerm *t = &w->terms[i];
      if (t->on_item == L->item && !t->coded) code_term(w, t, L->cont);
    }
    if (L->match_reg) emit(p, OP_Integer, 1, L->match_reg, 0);
    emit_resolve(p, L->body);
    code_ready_terms(w, have, L->item, L->cont, k == n - 1);
  }
  if (parse_failed(p)) return NULL;
  return w;
}

int where_order_satisfied(const WhereInfo *w) { return w ? w->order_ok : 0; }

int where_continue_label(const WhereInfo *w) {
  if (!w) return 0;
  return w->nlevel ? w->lv[w->nlevel - 1].cont : w->brk;
}

int where_break_label(const WhereInfo *w) { return w ? w->brk : 0; }

void where_end(WhereInfo *w) {
  if (!w) return;
  Parse *p = w->p;
  for (int k = w->nlevel - 1; k >= 0; k--) {
    WLevel *L = &w->lv[k];
    SrcItem *it = &w->src->a[L->item];
    emit_resolve(p, L->cont);
    if (L->null_reg) emit(p, OP_If, L->null_reg, L->done, 0);
    if (L->adv_op == OP_Goto) emit(p, OP_Goto, 0, L->top, 0);
    else if (L->adv_op) emit(p, L->adv_op, L->adv_cur, L->top, 0);
    emit_resolve(p, L->brk);
    if (L->match_reg) {
      emit(p, OP_If, L->match_reg, L->done, 0);
      if (it->kind == SRC_SUBQUERY && it->co_reg) {
        if (it->tab && it->tab->ncol > 0)
          emit(p, OP_Null, 0, it->co_out, it->co_out + it->tab->ncol - 1);
      } else {
        emit(p, OP_NullRow, it->cursor, 0, 0);
      }
      if (L->idx_cur >= 0) emit(p, OP_NullRow, L->idx_cur, 0, 0);
      emit(p, OP_Integer, 1, L->null_reg, 0);
      emit(p, OP_Integer, 1, L->match_reg, 0);
      emit(p, OP_Goto, 0, L->body, 0);
    }
    emit_resolve(p, L->done);
  }
  emit_resolve(p, w->brk);
}
