/*
 * compile_agg.c -- aggregate queries: GROUP BY through a hash table of
 * groups (rows of keys new past the budget through a sorter), through a
 * sorter, or one group; bare columns, SQLite's min/max rule, DISTINCT
 * arguments. Split from compile_select.c at its "aggregates" banner; the
 * helpers the two files share are sel_* in select_int.h.
 *
 * Owns: nothing beyond the Parse arena.
 *
 * Invariants:
 *  1. compile_select.c invariant 3: the loop computes every aggregate
 *     argument and bare column first; only then are the calls and bare
 *     columns of the result, HAVING and ORDER BY replaced in place by
 *     SQL_E_REG nodes, and put back afterwards.
 */
#include <stdio.h>
#include <string.h>

#include "../plan/plan.h"
#include "select_int.h"

/* ---- aggregates ---- */

typedef struct AggWork {
  AggInfo *ai;
  SrcList *src;
  int *arg_reg;    /* per func: first argument input register */
  int *filter_reg; /* per func: FILTER input register or 0 */
  int *col_in;     /* per col: input register */
  int *col_dup;    /* per col: an earlier col reading the same column (sharing its
                      registers), or -1 */
  int minmax;      /* the min/max rule applies (some min()/max() call) */
  int *rule_call;  /* per func: 1 for a min()/max() call of the rule (AggHit) */
  int hit_reg;     /* 1: the last min/max call run did not take this row */
  int loaded_reg;  /* 1 once the bare columns hold the group's first row */
  SqlExpr **nodes; /* nodes replaced by agg_replace, for agg_restore */
  SqlExpr **dup;   /* calls equal to an earlier one (SQLite's analyzeAggregate */
  int *dup_of;     /*   shares them): dup[k] reads funcs[dup_of[k]] */
  int ndup, capdup;
  int nnodes;
  int in_base, nin;
} AggWork;

/* Index of an earlier call equal to e (same function, arguments, DISTINCT
 * and FILTER; no ORDER BY inside either), or -1. */
static int agg_same_func(const AggInfo *ai, const SqlExpr *e) {
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].func == e->func && !e->order && !ai->funcs[i].expr->order &&
        compile_expr_same(ai->funcs[i].expr, e))
      return i;
  return -1;
}

static int agg_add_dup(Parse *p, AggWork *aw, SqlExpr *e, int of) {
  for (int k = 0; k < aw->ndup; k++)
    if (aw->dup[k] == e) return 0;
  if (aw->ndup == aw->capdup) {
    int cap = aw->capdup ? aw->capdup * 2 : 4;
    SqlExpr **d = compile_parse_alloc(p, sizeof(SqlExpr *) * (size_t)cap);
    int *o = compile_parse_alloc(p, sizeof(int) * (size_t)cap);
    if (!d || !o) return 1;
    if (aw->ndup) {
      memcpy(d, aw->dup, sizeof(SqlExpr *) * (size_t)aw->ndup);
      memcpy(o, aw->dup_of, sizeof(int) * (size_t)aw->ndup);
    }
    aw->dup = d;
    aw->dup_of = o;
    aw->capdup = cap;
  }
  aw->dup[aw->ndup] = e;
  aw->dup_of[aw->ndup++] = of;
  return 0;
}

static int agg_add_func(Parse *p, AggWork *aw, SqlExpr *e) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].expr == e) return 0;
  int same = agg_same_func(ai, e);
  if (same >= 0) return agg_add_dup(p, aw, e, same);
  if (ai->nfunc == ai->capfunc) {
    int cap = ai->capfunc ? ai->capfunc * 2 : 8;
    AggFunc *a = compile_parse_alloc(p, sizeof(AggFunc) * (size_t)cap);
    if (!a) return 1;
    if (ai->nfunc) memcpy(a, ai->funcs, sizeof(AggFunc) * (size_t)ai->nfunc);
    ai->funcs = a;
    ai->capfunc = cap;
  }
  AggFunc *f = &ai->funcs[ai->nfunc++];
  f->expr = e;
  f->func = e->func;
  f->distinct_cursor = -1;
  e->agg_slot = ai->nfunc - 1;
  return 0;
}

static int agg_add_col(Parse *p, AggInfo *ai, SqlExpr *e) {
  for (int i = 0; i < ai->ncol; i++)
    if (ai->cols[i].expr == e) return 0; /* reached twice (a shared subquery) */
  if (ai->ncol == ai->capcol) {
    int cap = ai->capcol ? ai->capcol * 2 : 8;
    AggCol *a = compile_parse_alloc(p, sizeof(AggCol) * (size_t)cap);
    if (!a) return 1;
    if (ai->ncol) memcpy(a, ai->cols, sizeof(AggCol) * (size_t)ai->ncol);
    ai->cols = a;
    ai->capcol = cap;
  }
  AggCol *c = &ai->cols[ai->ncol++];
  c->expr = e;
  e->agg_slot = ai->ncol - 1;
  return 0;
}

static int collect_funcs_at(Parse *p, AggWork *aw, SqlExpr *e, int level);

static int collect_funcs_list(Parse *p, AggWork *aw, SqlExprList *l, int level) {
  for (int i = 0; l && i < l->n; i++)
    if (collect_funcs_at(p, aw, l->a[i].expr, level)) return 1;
  return 0;
}

/* Aggregate calls of this query: at level 0 its own, and inside expression
 * subqueries (level n) those whose arguments read only this query's columns
 * (resolve.c stored the owner's distance in depth). */
static int collect_funcs_at(Parse *p, AggWork *aw, SqlExpr *e, int level) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 1) return e->depth == level ? agg_add_func(p, aw, e) : 0;
  if (e->op == SQL_E_REG) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over &&
      (collect_funcs_at(p, aw, e->filter, level) ||
       collect_funcs_list(p, aw, e->over->partition, level) ||
       collect_funcs_list(p, aw, e->over->order, level)))
    return 1;
  if (collect_funcs_at(p, aw, e->a, level) || collect_funcs_at(p, aw, e->b, level) ||
      collect_funcs_at(p, aw, e->c, level) || collect_funcs_list(p, aw, e->list, level))
    return 1;
  for (SqlSelect *c = e->select; c; c = c->prior) {
    if (!c->info) continue;
    if (collect_funcs_list(p, aw, c->info->result, level + 1) ||
        collect_funcs_at(p, aw, c->where, level + 1) ||
        collect_funcs_at(p, aw, c->having, level + 1) ||
        collect_funcs_list(p, aw, c->order_by, level + 1))
      return 1;
  }
  return 0;
}

static int collect_funcs(Parse *p, AggWork *aw, SqlExpr *e) {
  return collect_funcs_at(p, aw, e, 0);
}

typedef struct ColWalk {
  Parse *p;
  AggWork *aw;
  AggInfo *ai;
  SrcList *src;
  int rc;
} ColWalk;

static int is_agg_func_of(const AggWork *aw, const SqlExpr *e) {
  for (int i = 0; i < aw->ai->nfunc; i++)
    if (aw->ai->funcs[i].expr == e) return 1;
  for (int k = 0; k < aw->ndup; k++)
    if (aw->dup[k] == e) return 1;
  return 0;
}

static int colwalk_expr(SqlWalker *w, SqlExpr *e) {
  ColWalk *cw = w->arg;
  if (is_agg_func_of(cw->aw, e)) return SQL_WALK_PRUNE;
  if (e->op == SQL_E_COLREF && compile_src_find_cursor(cw->src, e->cursor)) {
    if (agg_add_col(cw->p, cw->ai, e)) {
      cw->rc = 1;
      return SQL_WALK_ABORT;
    }
  }
  return SQL_WALK_CONTINUE;
}

static int colwalk_select(SqlWalker *w, SqlSelect *s) {
  (void)w;
  (void)s;
  return SQL_WALK_CONTINUE;
}

static int collect_cols(Parse *p, AggWork *aw, SrcList *src, SqlExpr *e) {
  if (!e) return 0;
  ColWalk cw = {p, aw, aw->ai, src, 0};
  SqlWalker w = {colwalk_expr, colwalk_select, &cw};
  sql_walk_expr(&w, e);
  return cw.rc;
}

/* Replace node e by a SQL_E_REG for register reg (the original kept in
 * orig). An outer reference (a column, a call, or with outer_regs an
 * earlier REG, of depth > 0) stays visible below the new node. */
int compile_select_expr_to_reg(Parse *p, SqlExpr *e, int reg, int outer_regs) {
  SqlExpr *o = compile_parse_alloc(p, sizeof *o);
  if (!o) return 0;
  *o = *e;
  SqlSpan sp = e->span;
  uint8_t fl = e->flags & SQL_EF_PAREN;
  memset(e, 0, sizeof *e);
  e->op = SQL_E_REG;
  e->reg = reg;
  e->orig = o;
  e->span = sp;
  e->flags = fl;
  e->height = 1;
  e->aff = o->aff;
  if ((o->op == SQL_E_COLREF || o->op == SQL_E_FUNC || (outer_regs && o->op == SQL_E_REG)) &&
      o->depth > 0) {
    /* keep the outer reference visible to correlation checks (a walker
     * sees it below the REG node; the value comes from reg) */
    e->a = o;
    e->depth = o->depth;
  }
  return 1;
}

/* Replace calls and bare columns by their registers (invariant 3); the
 * AggInfo then points at the original nodes. */
static void agg_replace(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  aw->nodes =
      compile_parse_alloc(p, sizeof(SqlExpr *) * (size_t)(ai->nfunc + aw->ndup + ai->ncol + 1));
  if (!aw->nodes) return;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    compile_select_expr_to_reg(p, e, ai->funcs[i].acc_reg, 0);
    if (e->op == SQL_E_REG && e->orig) {
      ai->funcs[i].expr = (SqlExpr *)e->orig;
      aw->nodes[aw->nnodes++] = e;
    }
  }
  for (int k = 0; k < aw->ndup; k++) {
    SqlExpr *e = aw->dup[k];
    compile_select_expr_to_reg(p, e, ai->funcs[aw->dup_of[k]].acc_reg, 0);
    if (e->op == SQL_E_REG && e->orig) {
      aw->dup[k] = (SqlExpr *)e->orig;
      aw->nodes[aw->nnodes++] = e;
    }
  }
  for (int i = 0; i < ai->ncol; i++) {
    SqlExpr *e = ai->cols[i].expr;
    compile_select_expr_to_reg(p, e, ai->cols[i].reg, 0);
    if (e->op == SQL_E_REG && e->orig) {
      ai->cols[i].expr = (SqlExpr *)e->orig;
      aw->nodes[aw->nnodes++] = e;
    }
  }
}

/* Put the replaced nodes back (the same SELECT may be coded again, e.g.
 * an IN subquery the planner codes twice). */
static void agg_restore(AggWork *aw) {
  for (int i = aw->nnodes - 1; i >= 0; i--) {
    SqlExpr *e = aw->nodes[i];
    if (e->op == SQL_E_REG && e->orig) *e = *e->orig;
  }
  aw->nnodes = 0;
}

/* Per row: compute every input into aw->in_base... */
static void agg_inputs(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    if (e->list) compile_expr_code_list(p, e->list, aw->arg_reg[i]);
    if (e->filter) compile_expr_code(p, e->filter, aw->filter_reg[i]);
  }
  for (int i = 0; i < ai->ncol; i++)
    if (aw->col_dup[i] < 0) compile_expr_code(p, ai->cols[i].expr, aw->col_in[i]);
}

static void agg_bare_load(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->ncol; i++)
    if (aw->col_dup[i] < 0) emit(p, OP_Copy, aw->col_in[i], ai->cols[i].reg, 0);
}

/* Bare columns take the group's first row (as SQLite 3.40 does) unless the
 * min/max rule applies. */
static void agg_bare_first(Parse *p, AggWork *aw) {
  if (!aw->ai->ncol) return;
  int skip = emit_label(p);
  emit(p, OP_If, aw->loaded_reg, skip, 0);
  agg_bare_load(p, aw);
  emit(p, OP_Integer, 1, aw->loaded_reg, 0);
  emit_resolve(p, skip);
}

/* Per row: step every accumulator from the inputs; load bare columns. */
static void agg_step(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    SqlExpr *e = f->expr;
    int nargs = e->list ? e->list->n : 0;
    int skip = emit_label(p);
    /* a min()/max() with a FILTER: rows it skips load the bare columns only
     * on the group's first row (SQLite's "magnet" register) */
    if (e->filter && aw->minmax && aw->rule_call[i])
      emit(p, OP_Copy, aw->loaded_reg, aw->hit_reg, 0);
    if (e->filter) emit(p, OP_IfNot, aw->filter_reg[i], skip, 1);
    if ((f->func->flags & FUNC_NEEDCOLL) && nargs > 0) {
      const Collation *c = compile_sel_coll_of(p, e->list->a[0].expr);
      vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, c);
    }
    int a = vm_builder_add_p4(&p->b, OP_AggStep, f->distinct_cursor, aw->arg_reg[i], f->acc_reg,
                              P4_FUNC, f->func);
    vm_builder_set_p5(&p->b, a, nargs);
    /* SQLite's rule: each min()/max() call says whether this row became its
     * new best (ties and NULLs after a best do not; a DISTINCT value seen
     * before says nothing); the last call run decides whether the bare
     * columns are loaded from the row */
    if (aw->minmax && aw->rule_call[i]) emit(p, OP_AggHit, aw->hit_reg, 0, 0);
    emit_resolve(p, skip);
  }
  if (aw->minmax) {
    if (ai->ncol) {
      int skip = emit_label(p);
      emit(p, OP_If, aw->hit_reg, skip, 0);
      agg_bare_load(p, aw);
      emit_resolve(p, skip);
    }
    emit(p, OP_Integer, 1, aw->loaded_reg, 0);
  } else {
    agg_bare_first(p, aw);
  }
}

/* Fresh accumulators (start of the query or of a new group). */
static void agg_reset(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    emit(p, OP_Null, 0, f->acc_reg, 0);
    if (f->distinct_cursor >= 0) {
      const Collation *c = compile_sel_coll_of(p, f->expr->list->a[0].expr);
      KeyInfo *ki = compile_parse_keyinfo(p, 1, &c, NULL);
      if (compile_sel_hashable_coll(c))
        vm_builder_add_p4(&p->b, OP_HashAggOpen, f->distinct_cursor, 0, 0, P4_KEYINFO, ki);
      else
        vm_builder_add_p4(&p->b, OP_OpenEphemeral, f->distinct_cursor, 1, 0, P4_KEYINFO, ki);
    }
  }
  if (aw->minmax) emit(p, OP_Integer, 0, aw->hit_reg, 0);
  if (aw->loaded_reg) emit(p, OP_Integer, 0, aw->loaded_reg, 0);
}

/* EQP: one temp b-tree per DISTINCT aggregate (SQLite's resetAccumulator
 * rows: before the loop without GROUP BY, after the GROUP BY sorter with). */
static void agg_distinct_eqp(Parse *p, const AggInfo *ai) {
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].distinct_cursor >= 0)
      compile_parse_eqp(p, "USE TEMP B-TREE FOR %s(DISTINCT)", ai->funcs[i].func->name);
}

static void agg_final(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    int nargs = f->expr->list ? f->expr->list->n : 0;
    if ((f->func->flags & FUNC_NEEDCOLL) && nargs > 0) {
      const Collation *c = compile_sel_coll_of(p, f->expr->list->a[0].expr);
      vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, c);
    }
    vm_builder_add_p4(&p->b, OP_AggFinal, f->acc_reg, nargs, 0, P4_FUNC, f->func);
  }
}

/* The result row of a finished group: HAVING, result columns, output. */
static void agg_output(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, WinCtx *wc) {
  int skip = emit_label(p);
  if (s->having) compile_expr_if_false(p, s->having, skip, 1);
  if (wc) {
    compile_window_push(p, wc); /* the group's row goes to the window passes */
  } else {
    int regs = emit_regs(p, oc->ncol);
    compile_expr_code_list(p, info->result, regs);
    compile_sel_emit_output(p, oc, regs);
  }
  emit_resolve(p, skip);
}

void compile_sel_win_output(Parse *p, void *arg) {
  WinOut *wo = arg;
  int regs = emit_regs(p, wo->oc->ncol);
  compile_expr_code_list(p, wo->info->result, regs);
  compile_sel_emit_output(p, wo->oc, regs);
}

/* GROUP BY through a hash table (vm_hash.c) when every group's state is
 * registers the table can swap: no DISTINCT or ORDER BY inside a call, no
 * window pass, and key collations the table hashes (BINARY, NOCASE, RTRIM).
 * The output order is the sort's: groups by key, each fed in scan order. */
static int hash_group_ok(const AggInfo *ai, const WinCtx *wc, const Collation **coll, int nk) {
  if (wc) return 0;
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].distinct_cursor >= 0 || ai->funcs[i].expr->order) return 0;
  for (int i = 0; i < nk; i++)
    if (!compile_sel_hashable_coll(coll[i])) return 0;
  return 1;
}

/* GROUP BY over rows that come in group order (the loops of l are open,
 * the group's key and inputs go to kbase..): a group is output when a row
 * with another key comes, the last one after the loops. */
static void group_stream(Parse *p, AggWork *aw, SqlSelect *s, SelInfo *info, OutCtx *oc,
                         KeyInfo *ki, int kbase, int prev, int has_group, int ret, Loop *l) {
  int nk = s->group_by->n;
  int l_new = emit_label(p), l_same = emit_label(p), l_first = emit_label(p);
  int l_out = emit_label(p), l_rest = emit_label(p), l_end = emit_label(p);
  compile_expr_code_list(p, s->group_by, kbase);
  agg_inputs(p, aw);
  emit(p, OP_IfNot, has_group, l_first, 1);
  vm_builder_add_p4(&p->b, OP_Compare, kbase, prev, nk, P4_KEYINFO, ki);
  emit(p, OP_Jump, l_new, l_same, l_new);
  emit_resolve(p, l_new);
  emit(p, OP_Gosub, ret, l_out, 0);
  agg_reset(p, aw);
  emit_resolve(p, l_first);
  emit(p, OP_Copy, kbase, prev, nk - 1);
  emit(p, OP_Integer, 1, has_group, 0);
  emit_resolve(p, l_same);
  agg_step(p, aw);
  compile_sel_loop_end(p, l);
  agg_distinct_eqp(p, aw->ai);
  agg_replace(p, aw);
  emit(p, OP_IfNot, has_group, l_rest, 1);
  emit(p, OP_Gosub, ret, l_out, 0);
  emit_resolve(p, l_rest);
  emit(p, OP_Goto, 0, l_end, 0);
  /* subroutine: one finished group */
  emit_resolve(p, l_out);
  agg_final(p, aw);
  agg_output(p, s, info, oc, NULL);
  emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, l_end);
  agg_restore(aw);
}

/* Output (subroutine l_out) every group of hash cursor hcur in key order,
 * while its key is below the registers at bound (bound 0: all). */
static void hash_groups_out(Parse *p, int hcur, int bound, int ret, int l_out) {
  int top = emit_label(p), done = emit_label(p);
  emit_resolve(p, top);
  emit(p, OP_HashAggNext, hcur, done, bound);
  emit(p, OP_Gosub, ret, l_out, 0);
  emit(p, OP_Goto, 0, top, 0);
  emit_resolve(p, done);
}

/* ---- HAVING terms that read only GROUP BY terms (SQLite's havingToWhere) ----
 *
 * An AND-term of HAVING built from constants and GROUP BY terms of BINARY
 * collation only (no aggregate, subquery or non-deterministic function) is
 * as true for a group as for each of its rows: SQLite moves it to WHERE,
 * where it filters rows before they are grouped and may drive a search. */

static int binary_coll(const Collation *c) {
  return !c || c == &record_coll_binary || (c->name && util_stricmp(c->name, "BINARY") == 0);
}

int compile_sel_group_only(Parse *p, const SqlExprList *gb, const SqlExpr *e) {
  if (!e) return 1;
  for (int i = 0; i < gb->n; i++)
    if (compile_expr_same(e, gb->a[i].expr))
      return binary_coll(compile_sel_coll_of(p, gb->a[i].expr));
  /* the node itself, without its operands */
  SqlExpr node = *e;
  node.a = node.b = node.c = NULL;
  node.list = NULL;
  if (!compile_expr_is_constant(&node)) return 0;
  if (!compile_sel_group_only(p, gb, e->a) || !compile_sel_group_only(p, gb, e->b) ||
      !compile_sel_group_only(p, gb, e->c))
    return 0;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (!compile_sel_group_only(p, gb, e->list->a[i].expr)) return 0;
  return 1;
}

/* SQLite's ExprAlwaysFalse: an integer literal 0 stays in HAVING. */
static int literal_false(const SqlExpr *e) {
  while (e && e->op == SQL_E_UNARY && e->sub == TK_MINUS) e = e->a;
  return e && e->op == SQL_E_INTEGER && e->z && strspn(e->z, "0") == strlen(e->z);
}

/* The terms of h that stay (moved ones ANDed to *where, left to right). */
static SqlExpr *having_split(Parse *p, const SqlExprList *gb, SqlExpr *h, SqlExpr **where) {
  if (!h || parse_failed(p)) return h;
  if (h->op == SQL_E_BINARY && h->sub == TK_AND) {
    SqlExpr *a = having_split(p, gb, h->a, where);
    SqlExpr *b = having_split(p, gb, h->b, where);
    if (a == h->a && b == h->b) return h;
    if (!a || !b) return a ? a : b;
    return compile_sel_and(p, a, b);
  }
  if (literal_false(h) || !compile_sel_group_only(p, gb, h)) return h;
  *where = compile_sel_and(p, *where, h);
  return NULL;
}

static void having_to_where(Parse *p, SqlSelect *s, SelInfo *info) {
  if (info->having_moved || !s->group_by || !s->having) return;
  info->having_moved = 1;
  SqlExpr *where = s->where;
  s->having = having_split(p, s->group_by, s->having, &where);
  s->where = where;
}

/* ---- SELECT count(*) FROM table (SQLite's isSimpleCount) ----
 *
 * The one result is count(*) of one table with no WHERE, GROUP BY or
 * HAVING: the entries of the table's b-tree (or of its narrowest index)
 * are counted by OP_Count, no row is read. */

static SqlExpr *simple_count(const SqlSelect *s, const SelInfo *info, const WinCtx *wc) {
  if (wc || s->where || s->group_by || s->having || !info->src || info->src->n != 1) return NULL;
  if (!info->result || info->result->n != 1) return NULL;
  const SrcItem *it = &info->src->a[0];
  /* INDEXED BY does not pick the index counted (SQLite 3.40 counts its
   * narrowest all the same) */
  if (it->kind != SRC_TABLE || !it->tab || it->tab->vtab || it->tab->vtab_module) return NULL;
  SqlExpr *e = info->result->a[0].expr;
  if (!e || e->op != SQL_E_FUNC || e->agg != 1 || e->depth != 0 || e->over || e->filter ||
      (e->flags & SQL_EF_DISTINCT) || (e->list && e->list->n) || !e->func ||
      !(e->func->flags & FUNC_COUNT))
    return NULL;
  return e;
}

static void simple_count_code(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, SqlExpr *e) {
  const SrcItem *it = &info->src->a[0];
  const Table *tab = it->tab;
  const Index *idx = plan_count_index(tab, it->not_indexed);
  int cur = emit_cursor(p), reg = emit_regs(p, 1);
  compile_parse_need_read(p);
  if (idx && !(tab->without_rowid && idx == tab->pk_index))
    compile_parse_open_index(p, cur, idx, 0);
  else
    compile_parse_open_table(p, cur, tab, 0);
  emit(p, OP_Count, cur, reg, 0);
  emit(p, OP_Close, cur, 0, 0);
  /* SQLite names the table as stored, never an alias or a database */
  const char *name = tab->name;
  if (tab->is_schema)
    name = compile_parse_table_db(p, tab) == 1 ? "sqlite_temp_master" : "sqlite_master";
  if (idx && (!tab->without_rowid || idx != tab->pk_index))
    compile_parse_eqp(p, "SCAN %s USING COVERING INDEX %s", name, idx->name);
  else
    compile_parse_eqp(p, "SCAN %s", name);
  if (!compile_select_expr_to_reg(p, e, reg, 0)) return;
  agg_output(p, s, info, oc, NULL);
  if (e->op == SQL_E_REG && e->orig) *e = *e->orig;
}

/* ---- min()/max() of a whole query (SQLite's minMaxQuery) ----
 *
 * The one aggregate call of a query without GROUP BY is min(x) or max(x):
 * the loops are asked for x's order (ascending for min, descending for
 * max, NULLs last); when they deliver it the first row in that order is
 * the answer and the loops stop there. EXPLAIN QUERY PLAN says SEARCH for every loop. */

static int minmax_query(Parse *p, const SqlSelect *s, const AggInfo *ai, const WinCtx *wc,
                        SqlExprList **ob) {
  *ob = NULL;
  if (wc || s->group_by || s->having || ai->nfunc != 1) return 0;
  const SqlExpr *e = ai->funcs[0].expr;
  if (!e->list || e->list->n != 1 || e->over || e->filter || e->order ||
      (e->flags & SQL_EF_DISTINCT) || !e->z || !(ai->funcs[0].func->flags & FUNC_MINMAX))
    return 0;
  int flag = util_stricmp(e->z, "min") == 0   ? WHERE_ORDERBY_MIN
             : util_stricmp(e->z, "max") == 0 ? WHERE_ORDERBY_MAX
                                              : 0;
  if (!flag) return 0;
  SqlExprList *l = compile_parse_alloc(p, sizeof *l);
  SqlExprItem *it = compile_parse_alloc(p, sizeof *it);
  SqlExpr *x = compile_expr_dup(p, e->list->a[0].expr);
  if (!l || !it || !x) return 0;
  memset(it, 0, sizeof *it);
  it->expr = x;
  it->sort = flag == WHERE_ORDERBY_MAX ? SQL_SORT_DESC : SQL_SORT_ASC;
  l->n = l->cap = 1;
  l->a = it;
  *ob = l;
  return flag;
}

void compile_sel_agg_code(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, WinCtx *wc) {
  having_to_where(p, s, info);
  SqlExpr *count = simple_count(s, info, wc);
  if (count) {
    if (compile_src_indexed_by_ok(p, info->src->a[0].tab, info->src->a[0].indexed_by))
      simple_count_code(p, s, info, oc, count);
    return;
  }
  AggInfo *ai = compile_parse_alloc(p, sizeof *ai);
  if (!ai) return;
  ai->group_by = s->group_by;
  AggWork aw;
  memset(&aw, 0, sizeof aw);
  aw.ai = ai;
  aw.src = info->src;
  SqlExprList *res = info->result;
  for (int i = 0; i < res->n; i++)
    if (collect_funcs(p, &aw, res->a[i].expr)) return;
  if (collect_funcs(p, &aw, s->having)) return;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_funcs(p, &aw, s->order_by->a[i].expr)) return;
  for (int i = 0; i < res->n; i++)
    if (collect_cols(p, &aw, info->src, res->a[i].expr)) return;
  if (collect_cols(p, &aw, info->src, s->having)) return;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_cols(p, &aw, info->src, s->order_by->a[i].expr)) return;
  info->nc.agg = ai;

  aw.arg_reg = compile_parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  aw.filter_reg = compile_parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  aw.col_in = compile_parse_alloc(p, sizeof(int) * (size_t)(ai->ncol + 1));
  aw.col_dup = compile_parse_alloc(p, sizeof(int) * (size_t)(ai->ncol + 1));
  if (!aw.arg_reg || !aw.filter_reg || !aw.col_in || !aw.col_dup) return;
  /* the same column read twice (k in "k % 10" and in "k + 1") is one input */
  for (int i = 0; i < ai->ncol; i++) {
    const SqlExpr *e = ai->cols[i].expr;
    aw.col_dup[i] = -1;
    for (int j = 0; j < i && aw.col_dup[i] < 0; j++) {
      const SqlExpr *f = ai->cols[j].expr;
      if (aw.col_dup[j] < 0 && e->op == SQL_E_COLREF && f->op == SQL_E_COLREF &&
          e->cursor == f->cursor && e->column == f->column && e->tab == f->tab &&
          e->depth == f->depth)
        aw.col_dup[i] = j;
    }
  }
  int nk = s->group_by ? s->group_by->n : 0;
  int nin = 0;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    nin += (e->list ? e->list->n : 0) + (e->filter ? 1 : 0);
  }
  for (int i = 0; i < ai->ncol; i++) nin += aw.col_dup[i] < 0;
  /* keys then inputs, contiguous (the sorter record) */
  int kbase = emit_regs(p, nk + nin + 1);
  int r = kbase + nk;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    aw.arg_reg[i] = r;
    r += e->list ? e->list->n : 0;
    if (e->filter) aw.filter_reg[i] = r++;
  }
  for (int i = 0; i < ai->ncol; i++)
    aw.col_in[i] = aw.col_dup[i] < 0 ? r++ : aw.col_in[aw.col_dup[i]];
  aw.in_base = kbase + nk;
  aw.nin = nin;
  ai->first_reg = emit_regs(p, ai->nfunc + ai->ncol + 1);
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    f->acc_reg = ai->first_reg + i;
    if (f->expr->flags & SQL_EF_DISTINCT) f->distinct_cursor = emit_cursor(p);
  }
  for (int i = 0; i < ai->ncol; i++)
    ai->cols[i].reg =
        aw.col_dup[i] < 0 ? ai->first_reg + ai->nfunc + i : ai->cols[aw.col_dup[i]].reg;
  aw.rule_call = compile_parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  if (!aw.rule_call) return;
  /* (the rule only picks the row the bare columns are read from) */
  for (int i = 0; ai->ncol > 0 && i < ai->nfunc; i++) {
    const SqlExpr *fe = ai->funcs[i].expr;
    if ((ai->funcs[i].func->flags & FUNC_MINMAX) && fe->list && fe->list->n == 1) {
      aw.minmax = 1;
      aw.rule_call[i] = 1;
    }
  }
  if (aw.minmax) aw.hit_reg = emit_regs(p, 1);
  aw.loaded_reg = emit_regs(p, 1);
  if (ai->ncol)
    emit(p, OP_Null, 0, ai->first_reg + ai->nfunc, ai->first_reg + ai->nfunc + ai->ncol - 1);
  agg_reset(p, &aw);

  Loop loop;
  if (nk == 0) {
    agg_distinct_eqp(p, ai);
    SqlExprList *mm_ob;
    int mm = minmax_query(p, s, ai, wc, &mm_ob);
    if (compile_sel_loop_begin(p, info, s, mm_ob, mm, &loop)) return;
    int first_only = mm && loop.w && compile_where_order_satisfied(loop.w);
    agg_inputs(p, &aw);
    agg_step(p, &aw);
    if (first_only) {
      /* min: rows whose x is NULL come first in the index but last in
       * SQLite's order (NULLS LAST): the loops go on past them (the first
       * one still gives the bare columns when every x is NULL) */
      int go_on = emit_label(p);
      if (mm == WHERE_ORDERBY_MIN) emit(p, OP_IsNull, aw.arg_reg[0], go_on, 0);
      emit(p, OP_Goto, 0, compile_where_break_label(loop.w), 0);
      emit_resolve(p, go_on);
    }
    compile_sel_loop_end(p, &loop);
    /* replace calls and bare columns by their registers, then output */
    agg_replace(p, &aw);
    agg_final(p, &aw);
    agg_output(p, s, info, oc, wc);
    if (wc) {
      WinOut wo = {oc, info};
      compile_window_end(p, wc, compile_sel_win_output, &wo);
    }
    agg_restore(&aw);
    return;
  }
  /* GROUP BY: rows into a sorter by the keys, then groups in order; or
   * (hash_group_ok) each row stepped at once in its group of a hash table,
   * rows of new keys going to the sorter only once the table is full */
  const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)nk);
  if (!coll) return;
  for (int i = 0; i < nk; i++) coll[i] = compile_sel_coll_of(p, s->group_by->a[i].expr);
  KeyInfo *ki = compile_parse_keyinfo(p, nk, coll, NULL);
  int hcur = hash_group_ok(ai, wc, coll, nk) ? emit_cursor(p) : -1;
  int a_hopen = -1;
  if (hcur >= 0)
    a_hopen = vm_builder_add_p4(&p->b, OP_HashAggOpen, hcur, aw.loaded_reg - ai->first_reg + 1,
                                ai->first_reg, P4_KEYINFO, ki);
  /* the sorter also compares the sequence number: groups keep the rows in
   * the order they came (first row, min/max ties, group_concat order) */
  const Collation **coll2 = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1));
  if (!coll2) return;
  memcpy(coll2, coll, sizeof(Collation *) * (size_t)nk);
  KeyInfo *ski = compile_parse_keyinfo(p, nk + 1, coll2, NULL);
  int scur = emit_cursor(p);
  int a_sopen = vm_builder_add_p4(&p->b, OP_SorterOpen, scur, nk + 1, 0, P4_KEYINFO, ski);
  int prev = emit_regs(p, nk);
  int has_group = emit_regs(p, 1);
  int ret = emit_regs(p, 1);
  emit(p, OP_Integer, 0, has_group, 0);
  /* the loops may deliver the rows in GROUP BY order (an index, the rowid):
   * then each group is finished as the next one starts, with no sorter */
  /* (in any order of its terms, unless the ORDER BY, dropped, is the
   * GROUP BY: then in its order, as SQLite's WHERE_SORTBYGROUP) */
  int strict = info->distinct_group || (s->order_by && compile_sel_group_is_order(p, s, info));
  if (compile_sel_loop_begin(p, info, s, wc ? NULL : s->group_by,
                             WHERE_GROUPBY | (strict ? WHERE_SORTBYGROUP : 0), &loop))
    return;
  if (loop.w && compile_where_order_satisfied(loop.w)) {
    if (p->b.rc) return;
    p->b.prog->ops[a_sopen].op = OP_Noop;
    if (a_hopen >= 0) p->b.prog->ops[a_hopen].op = OP_Noop;
    group_stream(p, &aw, s, info, oc, ki, kbase, prev, has_group, ret, &loop);
    return;
  }
  /* SQLite names the GROUP BY sorter as soon as the loops are open, before
   * the body (its subqueries) and the RIGHT JOIN passes */
  compile_parse_eqp(p, "USE TEMP B-TREE FOR %s", info->distinct_group ? "DISTINCT" : "GROUP BY");
  int srec = emit_regs(p, nk + 1 + nin + 1);
  compile_expr_code_list(p, s->group_by, kbase);
  agg_inputs(p, &aw);
  int l_spill = emit_label(p), l_stepped = emit_label(p);
  if (hcur >= 0) {
    emit(p, OP_HashAggFind, hcur, l_spill, kbase);
    agg_step(p, &aw);
    emit(p, OP_Goto, 0, l_stepped, 0);
  }
  emit_resolve(p, l_spill);
  emit(p, OP_Copy, kbase, srec, nk - 1);
  emit(p, OP_Sequence, scur, srec + nk, 0);
  if (nin) emit(p, OP_Copy, kbase + nk, srec + nk + 1, nin - 1);
  int rec = srec + nk + 1 + nin;
  emit(p, OP_MakeRecord, srec, nk + 1 + nin, rec);
  emit(p, OP_SorterInsert, scur, rec, 0);
  emit_resolve(p, l_stepped);
  compile_sel_loop_end(p, &loop);
  agg_distinct_eqp(p, ai);
  if (hcur >= 0) {
    emit(p, OP_HashAggSave, hcur, 0, 0);
    emit(p, OP_HashAggSort, hcur, 0, 0);
  }

  agg_replace(p, &aw);

  int rec2 = emit_regs(p, 1);
  int pseudo = emit_cursor(p);
  int l_end = emit_label(p), l_top = emit_label(p), l_new = emit_label(p), l_same = emit_label(p),
      l_first = emit_label(p), l_out = emit_label(p), l_fin = emit_label(p), l_rest = emit_label(p);
  emit(p, OP_OpenPseudo, pseudo, rec2, nk + 1 + nin);
  emit(p, OP_Null, 0, prev, prev + nk - 1);
  emit(p, OP_Integer, 0, has_group, 0);
  emit(p, OP_SorterSort, scur, l_fin, 0);
  emit_resolve(p, l_top);
  emit(p, OP_SorterData, scur, rec2, pseudo);
  for (int i = 0; i < nk + nin; i++) emit(p, OP_Column, pseudo, i < nk ? i : i + 1, kbase + i);
  emit(p, OP_IfNot, has_group, l_first, 1);
  vm_builder_add_p4(&p->b, OP_Compare, kbase, prev, nk, P4_KEYINFO, ki);
  emit(p, OP_Jump, l_new, l_same, l_new);
  emit_resolve(p, l_new);
  emit(p, OP_Gosub, ret, l_out, 0);
  if (hcur < 0) agg_reset(p, &aw);
  emit_resolve(p, l_first);
  if (hcur >= 0) {
    /* the hash table's groups (keys disjoint from the sorter's) below this
     * key come first */
    hash_groups_out(p, hcur, kbase, ret, l_out);
    agg_reset(p, &aw);
  }
  emit(p, OP_Copy, kbase, prev, nk - 1);
  emit(p, OP_Integer, 1, has_group, 0);
  emit_resolve(p, l_same);
  agg_step(p, &aw);
  emit(p, OP_SorterNext, scur, l_top, 0);
  emit_resolve(p, l_fin);
  emit(p, OP_IfNot, has_group, l_rest, 1);
  emit(p, OP_Gosub, ret, l_out, 0);
  emit_resolve(p, l_rest);
  if (hcur >= 0) hash_groups_out(p, hcur, 0, ret, l_out);
  emit(p, OP_Goto, 0, l_end, 0);
  /* subroutine: one finished group */
  emit_resolve(p, l_out);
  agg_final(p, &aw);
  agg_output(p, s, info, oc, wc);
  emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, l_end);
  if (wc) {
    WinOut wo = {oc, info};
    compile_window_end(p, wc, compile_sel_win_output, &wo);
  }
  agg_restore(&aw);
}
