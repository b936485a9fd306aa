/*
 * compile_where.c -- nested loops over a FROM list (compile_where_begin/where_end),
 * on the plan chosen by src/plan/.
 *
 * Owns: the WhereInfo of one loop nest (Parse arena). The terms of WHERE and
 * of every ON clause are split into AND-terms (plan_add_clause); the planner
 * picks an access path per item and the loop order; this file emits the
 * loops and codes each term once, at the innermost loop it needs (a LEFT
 * JOIN item's ON terms at that item's loop, before its match flag is set).
 *
 * Code shape for one level (item X; LEFT JOIN when match != 0):
 *     [match = 0; null = 0]
 *     [IN loops: fill ephemeral set; Rewind -> brk; in_top: key = Column]
 *     open (Rewind / Seek* / SeekRowid)          -> seek_brk when nothing
 *   top:
 *     [end test (IdxGT..., rowid compare)        -> seek_brk]
 *     [table row from the index entry]
 *     ON terms of X (LEFT JOIN)                  false -> cont
 *     [match = 1]
 *   body:
 *     terms whose innermost item is X            false -> cont
 *     ... inner levels / caller's code ...
 *   cont:
 *     [if null -> done]                          (a padded row does not advance)
 *     advance (Next/Prev/Goto top)
 *   seek_brk / in_next: Next in_cursor -> in_top  (innermost IN first)
 *   brk:
 *     [if match -> done; NullRow X; null = 1; match = 1; -> body]
 *   done:
 *
 * compile_where_begin = compile_where_plan (terms analysed, loops chosen, no code) +
 * compile_where_code (the code below); DML calls them apart to choose one pass or
 * two from the plan (WHERE_ONEPASS: item 0's cursor is opened for writing).
 *
 * Before the loops: table cursors opened, materialized FROM subqueries
 * filled, automatic indexes built, constant terms tested. A MULTI-INDEX OR
 * level runs each disjunct's path into a RowSet and then visits the rows by
 * rowid. A RIGHT/FULL JOIN item (the last one) records the keys of its rows
 * that matched; after the loops a pass over its unmatched rows runs the body
 * with every item on its left NULL (rj_pass).
 *
 * Invariants:
 *  1. Every AND-term is coded (re-tested) at its level, whether or not the
 *     access path already enforces it: correctness does not rest on the
 *     planner's affinity reasoning alone. The exceptions (term_enforced):
 *     "rowid = value" with numeric affinity driving a SeekRowid (which
 *     applies the same conversion), a rowid range's end bound (the end test
 *     is its comparison), and the "=" and range terms of a real index's
 *     seek and end test (same collation, the term's affinity on the key).
 *  2. A WHERE term never restricts the loop of a LEFT JOIN's right-hand item
 *     (only that item's ON terms may), and a LEFT JOIN item's ON terms are
 *     coded at its own level so that failing them pads instead of dropping.
 *  3. A LEFT JOIN or CROSS JOIN item comes after every item to its left in
 *     loop order (plan.h invariant 2).
 *  4. A covering index redirection (compile_parse_set_cover) lasts from compile_where_begin
 *     to compile_where_end; automatic indexes are always covering. So does the one of a
 *     deferred lookup (WLevel.seek_reg): its table row is read only after the seek that a
 *     read of a column the index lacks does first (compile_code_column), never directly.
 *  5. Every key register of a seek is a register this file owns (values are
 *     coded into it, then affinity is applied in place), never a column
 *     cache register of the expression code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plan/plan.h"
#include "compile.h"
#include "select_int.h"

#define MAX_IN 8 /* IN loops per level */

typedef struct WInLoop {
  int next_op; /* OP_Next, or OP_Prev for a descending ORDER BY */
  int cursor;  /* ephemeral set */
  int top;     /* label: read the next value */
  int next;    /* label: Next on the set */
} WInLoop;

typedef struct WLevel {
  int item;           /* index in src */
  PlanLevel *pl;      /* access path */
  int cont, brk;      /* labels */
  int top;            /* label of the loop body start (after positioning) */
  int body;           /* label after the match flag is set */
  int done;           /* label after padding */
  int adv_op;         /* OP_Next, OP_Prev, OP_Goto (coroutine), or 0 (one row) */
  int adv_cur;        /* cursor for adv_op */
  int match_reg;      /* LEFT JOIN match flag, else 0 */
  int null_reg;       /* LEFT JOIN: 1 while the row is padded */
  int idx_cur;        /* index cursor or -1 */
  int pre_cur;        /* 1 + the index cursor opened before the loops, or 0 */
  int auto_cur;       /* PLAN_AUTO: the automatic index's ephemeral cursor */
  int rj_mode;        /* RIGHT/FULL JOIN item: register, 1 during its unmatched-rows pass */
  int rj_set;         /* ... cursor: keys of its rows that matched */
  int rj_next;        /* ... label: next row of the unmatched-rows pass */
  uint8_t rowid_only; /* a MULTI-INDEX OR sub-path: only the rowid is needed */
  int seek_reg;       /* a scan of an index not covering whose table row is looked up at the
                         first read of a column the index lacks (ParseCover.seek_reg), or 0 */
  int nin;
  WInLoop in[MAX_IN];
} WLevel;

struct WhereInfo {
  Parse *p;
  int right; /* index of the first RIGHT/FULL JOIN item, or -1 */
  SrcList *src;
  int nlevel;
  WLevel *lv;
  Planner pl;
  Plan plan;
  PlanItem *items;
  /* terms [on_start[i], on_start[i + 1]) came from item i's ON clause,
   * [on_start[n], nterm) from WHERE */
  int *on_start;
  int brk;          /* after every loop */
  int order_ok;     /* the loops deliver order_by */
  int order_prefix; /* else the leading order_by terms they deliver (0: none) */
  int flags;        /* compile_where_plan flags (WHERE_*) */
  uint8_t *coded;   /* per term: coded already (or enforced by the access path) */
  VtabWhere **vw;   /* per item: a virtual table's xBestIndex answers (compile_vtab.c), or NULL */
  int wcur; /* compile_where_write_index: level 0's index cursor (opened for writing), or -1 */
  uint64_t omitted; /* items compile_where_omit_noop dropped (their ON terms count as coded) */
};

/* ---- planner hooks ---- */

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

typedef struct HookCtx {
  Parse *p;
  SrcList *src;
} HookCtx;

static uint64_t hook_mask(void *ctx, SqlExpr *e) {
  HookCtx *h = ctx;
  MaskCtx m = {h->src, 0};
  SqlWalker w = {mask_cb, mask_sel_cb, &m};
  sql_walk_expr(&w, e);
  return m.mask;
}

static int hook_is_constant(void *ctx, SqlExpr *e) {
  (void)ctx;
  return compile_expr_is_constant(e);
}

static void hook_term_info(void *ctx, PlanTerm *t) {
  HookCtx *h = ctx;
  Parse *p = h->p;
  if (parse_failed(p)) {
    t->usable = 0;
    return;
  }
  const Collation *coll = NULL;
  char aff = 0;
  if (t->op == PLAN_OP_ISNULL) {
    aff = 0;
  } else if (t->op == PLAN_OP_IN) {
    SqlExpr *in = t->value;
    if (in->select) {
      SqlExprList *res =
          compile_select_ncol(in->select) == 1 ? compile_select_result(in->select) : NULL;
      if (!res || res->n != 1) {
        t->usable = 0;
        return;
      }
      aff = compile_expr_cmp_affinity(t->left, res->a[0].expr);
      coll = compile_expr_cmp_collation(p, t->left, res->a[0].expr);
    } else {
      aff = compile_expr_affinity(t->left);
      coll = compile_expr_collation(p, t->left);
    }
  } else {
    aff = compile_expr_cmp_affinity(t->left, t->right);
    coll = compile_expr_cmp_collation(p, t->left, t->right);
  }
  if (parse_failed(p)) {
    t->usable = 0;
    return;
  }
  t->aff = aff;
  t->collseq = coll;
  t->coll = coll ? coll->name : NULL;
}

static const char *hook_coll_name(void *ctx, SqlExpr *e) {
  HookCtx *h = ctx;
  const Collation *c = compile_expr_collation(h->p, e);
  return c ? c->name : NULL;
}

/* ---- helpers ---- */

static uint64_t bit(int i) { return (uint64_t)1 << (i < 63 ? i : 63); }

static int src_is_left(const SrcItem *it) { return (it->jointype & SQL_JOIN_LEFT) != 0; }

static const char *item_name(const SrcItem *it) {
  if (it->name) return it->name;
  if (it->tab && it->tab->name) return it->tab->name;
  return "(subquery)";
}

static void code_term(WhereInfo *w, PlanTerm *t, int label) {
  (void)w;
  compile_expr_if_false(w->p, t->expr, label, 1);
}

/* Terms (not derived ones) that can be coded once `have` items are
 * positioned; `coded` marks them. */
static void code_ready_terms(WhereInfo *w, uint8_t *coded, uint64_t have, int label, int last) {
  for (int i = 0; i < w->pl.nterm; i++) {
    PlanTerm *t = &w->pl.terms[i];
    if (coded[i] || t->parent >= 0 || t->on_item >= 0) continue;
    int from = -1; /* the item whose ON holds the term, -1 for WHERE */
    for (int k = 0; k < w->src->n && w->on_start; k++)
      if (i >= w->on_start[k] && i < w->on_start[k + 1]) from = k;
    /* the ON of an inner join right of a RIGHT JOIN: at its own item's
     * loop or later (never filtering the rows a RIGHT JOIN item on its
     * left matches); WHERE: after every loop */
    if (t->on_item == -2 && !last && (from < 0 || !(have & bit(from)))) continue;
    if ((t->mask & ~have) != 0) continue;
    /* a term that reads no item but is not constant (a subquery, a
     * non-deterministic function): at the first loop, as SQLite codes it
     * (after every loop when a RIGHT JOIN's unmatched rows must see it) */
    if (t->varies && !last && (have == 0 || w->right >= 0)) continue;
    coded[i] = 1;
    /* the ON of an inner join left of a RIGHT/FULL JOIN item belongs to
     * that join's left side: not tested on its unmatched rows (SQLite
     * tests only WHERE terms there) */
    int skip = 0;
    for (int k = 0; from >= 0 && k < w->nlevel; k++) {
      WLevel *R = &w->lv[k];
      if (!R->rj_mode || R->item <= from) continue;
      if (!skip) skip = emit_label(w->p);
      emit(w->p, OP_If, R->rj_mode, skip, 0);
    }
    code_term(w, t, label);
    if (skip) emit_resolve(w->p, skip);
  }
}

static char aff_letter(char a) { return a ? a : AFF_BLOB; }

/* Fill ephemeral index cursor `cursor` with the distinct values of IN term
 * t (its affinity and collation). */
static void build_in_set(Parse *p, PlanTerm *t, int cursor) {
  const Collation *coll = t->collseq;
  KeyInfo *ki = compile_parse_keyinfo(p, 1, &coll, NULL);
  if (!ki) return;
  vm_builder_add_p4(&p->b, OP_OpenEphemeral, cursor, 1, 0, P4_KEYINFO, ki);
  char affs[2] = {aff_letter(t->aff), 0};
  SqlExpr *e = t->value;
  if (e->select) {
    SelectDest d;
    memset(&d, 0, sizeof d);
    d.kind = SD_SET;
    d.cursor = cursor;
    d.nreg = 1;
    d.aff = compile_parse_strdup(p, affs);
    /* its plan rows come from the term's own test (LIST SUBQUERY) */
    int neqp = p->neqp;
    compile_select_code(p, e->select, &d);
    p->neqp = neqp;
  } else {
    int r = emit_regs(p, 2);
    for (int i = 0; e->list && i < e->list->n; i++) {
      compile_expr_code(p, e->list->a[i].expr, r);
      vm_builder_add_text(&p->b, OP_MakeRecord, r, 1, r + 1, affs, 1);
      emit(p, OP_IdxInsert, cursor, r + 1, 0);
    }
  }
}

/* Build the ephemeral set of an IN term and open its loop; the value is
 * read into reg at each iteration. exit = where to go when the set is done. */
static void open_in_loop(WhereInfo *w, WLevel *L, PlanTerm *t, int reg, int exit) {
  Parse *p = w->p;
  if (L->nin >= MAX_IN) {
    compile_parse_error(p, "too many IN terms");
    return;
  }
  WInLoop *in = &L->in[L->nin++];
  in->cursor = emit_cursor(p);
  in->top = emit_label(p);
  in->next = emit_label(p);
  build_in_set(p, t, in->cursor);
  int rev = L->pl && L->pl->reverse;
  in->next_op = rev ? OP_Prev : OP_Next;
  emit(p, rev ? OP_Last : OP_Rewind, in->cursor, exit, 0);
  emit_resolve(p, in->top);
  emit(p, OP_Column, in->cursor, 0, reg);
}

static void level_eqp_one(WhereInfo *w, WLevel *L, const char *lj);

/* A virtual table's IN constraint (compile_vtab.c): an IN loop of level L. */
typedef struct VtabInCtx {
  WhereInfo *w;
  WLevel *L;
} VtabInCtx;

static int vtab_in_loop(void *ctx, int term, int reg, int whole) {
  VtabInCtx *c = ctx;
  if (whole) { /* sqlite3_vtab_in: the set itself is the argument */
    int cursor = emit_cursor(c->w->p);
    build_in_set(c->w->p, &c->w->pl.terms[term], cursor);
    emit(c->w->p, OP_VInitIn, cursor, reg, 0);
    return 0;
  }
  int exit = c->L->nin ? c->L->in[c->L->nin - 1].next : c->L->brk;
  open_in_loop(c->w, c->L, &c->w->pl.terms[term], reg, exit);
  return c->L->in[c->L->nin - 1].next;
}

/* EXPLAIN QUERY PLAN text of one level. */
static void level_eqp(WhereInfo *w, WLevel *L) {
  SrcItem *it = &w->src->a[L->item];
  level_eqp_one(w, L, src_is_left(it) ? " LEFT-JOIN" : "");
}

/* The name SQLite's "RIGHT-JOIN" row gives an item: that of its table (a
 * base table's, a view's or a CTE's, whatever the alias), else the alias. */
static const char *right_join_name(const SrcItem *it) {
  if (it->kind == SRC_TABLE && it->tab && it->tab->name) return it->tab->name;
  if (it->ast && it->ast->name && !it->ast->select) return it->ast->name;
  return item_name(it);
}

/* EXPLAIN QUERY PLAN's name of an item, as SQLite writes it: the alias when
 * one is written, else schema.table when the schema is written. */
static const char *eqp_item_name(Parse *p, const SrcItem *it) {
  const SqlSrcItem *a = it->ast;
  if (!a || a->alias || !a->schema || !a->name || a->select || it->kind != SRC_TABLE)
    return item_name(it);
  size_t ns = strlen(a->schema), nn = strlen(a->name);
  char *z = compile_parse_alloc(p, ns + nn + 2);
  if (!z) return item_name(it);
  memcpy(z, a->schema, ns);
  z[ns] = '.';
  memcpy(z + ns + 1, a->name, nn + 1);
  return z;
}

static void level_eqp_one(WhereInfo *w, WLevel *L, const char *lj) {
  Parse *p = w->p;
  SrcItem *it = &w->src->a[L->item];
  PlanLevel *pl = L->pl;
  const char *name = eqp_item_name(p, it);
  const Table *tab = it->tab;
  if (pl->kind == PLAN_VTAB) {
    compile_vtab_where_eqp(p, w->vw[L->item], pl, name, lj);
    return;
  }
  if (it->kind == SRC_TABLE && pl->kind == PLAN_OR) {
    int save = p->eqp_parent, flags = w->flags;
    int top = compile_parse_eqp(p, "MULTI-INDEX OR");
    w->flags &= ~(WHERE_ORDERBY_MIN | WHERE_ORDERBY_MAX); /* the disjuncts' own loops */
    for (int k = 0; k < pl->nsub; k++) {
      p->eqp_parent = top;
      p->eqp_parent = compile_parse_eqp(p, "INDEX %d", k + 1);
      WLevel S;
      memset(&S, 0, sizeof S);
      S.item = L->item;
      S.pl = &pl->sub[k];
      level_eqp_one(w, &S, "");
    }
    w->flags = flags;
    p->eqp_parent = save;
    return;
  }
  if ((it->kind != SRC_TABLE && pl->kind != PLAN_AUTO) || pl->kind == PLAN_SCAN) {
    /* every loop of a min()/max() query is a SEARCH to SQLite */
    const char *verb = (w->flags & (WHERE_ORDERBY_MIN | WHERE_ORDERBY_MAX)) ? "SEARCH" : "SCAN";
    if (it->kind == SRC_TABLE && pl->idx && !pl->is_pk)
      compile_parse_eqp(p, "%s %s USING %sINDEX %s%s", verb, name, pl->covering ? "COVERING " : "",
                        pl->idx->name, lj);
    else if (it->kind == SRC_TABLE && pl->is_pk && tab->without_rowid && verb[1] == 'E')
      /* a WITHOUT ROWID table's key searched for min()/max(): SQLite names it */
      compile_parse_eqp(p, "SEARCH %s USING PRIMARY KEY%s", name, lj);
    else
      compile_parse_eqp(p, "%s %s%s", verb, name, lj);
    return;
  }
  if (pl->kind == PLAN_ROWID_EQ) {
    compile_parse_eqp(p, "SEARCH %s USING INTEGER PRIMARY KEY (rowid=?)%s", name, lj);
    return;
  }
  int is_auto = pl->kind == PLAN_AUTO;
  char buf[1024];
  int n = 0;
  buf[0] = 0;
#define ADD(...)                                                                          \
  do {                                                                                    \
    if (n < (int)sizeof buf) n += snprintf(buf + n, sizeof buf - (size_t)n, __VA_ARGS__); \
  } while (0)
  if (pl->kind == PLAN_ROWID_RANGE) {
    if (pl->lo >= 0) ADD("rowid>?");
    if (pl->hi >= 0) ADD("%srowid<?", pl->lo >= 0 ? " AND " : "");
    compile_parse_eqp(p, "SEARCH %s USING INTEGER PRIMARY KEY (%s)%s", name, buf, lj);
    return;
  }
  const Index *idx = pl->idx;
  for (int j = 0; j < pl->neq; j++) {
    int c = idx->cols[j].col;
    ADD("%s%s=?", j ? " AND " : "", c >= 0 ? tab->cols[c].name : "rowid");
  }
  if (pl->lo >= 0 || pl->hi >= 0) {
    int c = idx->cols[pl->neq].col;
    const char *cn = c >= 0 ? tab->cols[c].name : "rowid";
    if (pl->lo >= 0) ADD("%s%s>?", n ? " AND " : "", cn);
    if (pl->hi >= 0) ADD("%s%s<?", n ? " AND " : "", cn);
  }
#undef ADD
  if (is_auto)
    compile_parse_eqp(p, "SEARCH %s USING AUTOMATIC COVERING INDEX (%s)%s", name, buf, lj);
  else if (pl->is_pk)
    compile_parse_eqp(p, "SEARCH %s USING PRIMARY KEY (%s)%s", name, buf, lj);
  else
    compile_parse_eqp(p, "SEARCH %s USING %sINDEX %s (%s)%s", name, pl->covering ? "COVERING " : "",
                      idx->name, buf, lj);
}

void compile_where_seek_row(Parse *p, const Table *tab, int tab_cur, const Index *idx, int idx_cur,
                            int miss) {
  if (!tab->without_rowid) {
    int r = emit_regs(p, 1);
    emit(p, OP_IdxRowid, idx_cur, r, 0);
    emit(p, OP_SeekRowid, tab_cur, miss, r);
    return;
  }
  int npk = tab->npk;
  int r = emit_regs(p, npk > 0 ? npk : 1);
  for (int k = 0; k < npk; k++) {
    int pos = -1;
    for (int j = 0; j < idx->ncol && pos < 0; j++)
      if (idx->cols[j].col == tab->pk_cols[k]) pos = j;
    if (pos < 0) {
      compile_parse_error(p, "index %s lacks a PRIMARY KEY column", idx->name);
      return;
    }
    emit(p, OP_Column, idx_cur, pos, r + k);
  }
  vm_builder_add_i4(&p->b, OP_NotFound, tab_cur, miss, r, npk);
}

/* Move the table cursor to the row of the index entry (not covering). */
static void code_row_lookup(WhereInfo *w, WLevel *L, int miss) {
  SrcItem *it = &w->src->a[L->item];
  compile_where_seek_row(w->p, it->tab, it->cursor, L->pl->idx, L->idx_cur, miss);
}

/* Code the value of term t into reg (IS NULL: NULL). */
static void code_value(Parse *p, PlanTerm *t, int reg) {
  if (t->op == PLAN_OP_ISNULL)
    emit(p, OP_Null, 0, reg, 0);
  else
    compile_expr_code(p, t->value, reg);
}

/* 1 when derived term t is its parent comparison with the operands
 * swapped (plan.c's analyse: "a op b" also gives "b commute(op) a", the same
 * expression, its affinity and collation taken from the operands as
 * written): it tests exactly what the parent tests. */
static int term_commuted(const WhereInfo *w, const PlanTerm *t) {
  if (t->parent < 0 || t->equiv) return 0;
  const PlanTerm *up = &w->pl.terms[t->parent];
  const SqlExpr *e = t->expr;
  if (e != up->expr || !e || e->op != SQL_E_BINARY || t->group != up->group) return 0;
  return e->sub == TK_EQ || e->sub == TK_IS || e->sub == TK_LT || e->sub == TK_LE ||
         e->sub == TK_GT || e->sub == TK_GE;
}

/* Term ti is enforced exactly by the level's seek and end test: it needs no
 * re-test (invariant 1). Only original WHERE terms (a BETWEEN through both
 * of its halves, a comparison through its commuted form), never ON terms or
 * other derived ones (LIKE ranges, OR disjuncts). */
static void term_enforced(WhereInfo *w, int ti) {
  PlanTerm *t = &w->pl.terms[ti];
  if (term_commuted(w, t)) {
    ti = t->parent;
    t = &w->pl.terms[ti];
  }
  if (w->coded && t->on_item == -1 && t->parent < 0) w->coded[ti] = 1;
}

/* Both halves lo, hi of a BETWEEN are enforced: the BETWEEN is. */
static void between_enforced(WhereInfo *w, int lo, int hi) {
  if (lo < 0 || hi < 0) return;
  PlanTerm *a = &w->pl.terms[lo], *b = &w->pl.terms[hi];
  if (a->parent < 0 || a->parent != b->parent) return;
  PlanTerm *t = &w->pl.terms[a->parent];
  if (t->expr->op == SQL_E_BETWEEN && !(t->expr->flags & SQL_EF_NOT) && t->parent < 0)
    term_enforced(w, a->parent);
}

/* The comparison applies numeric affinity to the value (a rowid term). */
static int numeric_cmp(const PlanTerm *t) { return t->aff == AFF_INTEGER || t->aff == AFF_NUMERIC; }

/* Does the access path of a table level read through an index cursor of
 * its own (not the table's, not an automatic index's)? */
static int level_own_index(const PlanLevel *pl) {
  if (pl->kind == PLAN_SCAN) return pl->idx && !pl->is_pk;
  return pl->kind == PLAN_INDEX && pl->idx && !pl->is_pk;
}

/* The level's index cursor: the one opened before the loops, else one
 * opened here (a MULTI-INDEX OR sub-path). */
static int level_index_cursor(WhereInfo *w, WLevel *L, const Index *idx) {
  if (L->pre_cur) return L->pre_cur - 1;
  int cur = emit_cursor(w->p);
  compile_parse_open_index(w->p, cur, idx, 0);
  return cur;
}

/* Does a term read level L's item through its index's columns alone (a
 * term its scan may test before the table row is looked up)? */
static int index_filters(const WhereInfo *w, const WLevel *L) {
  for (int i = 0; i < w->pl.nterm; i++) {
    const PlanTerm *t = &w->pl.terms[i];
    if (t->parent >= 0 || t->group >= 0 || !(t->mask & bit(L->item))) continue;
    if (plan_index_covers_expr(&w->items[L->item], L->pl->idx, t->expr)) return 1;
  }
  return 0;
}

/* Open the loop of a base-table level with its access path. */
static void open_table_level(WhereInfo *w, WLevel *L) {
  Parse *p = w->p;
  SrcItem *it = &w->src->a[L->item];
  PlanLevel *pl = L->pl;
  PlanTerm *terms = w->pl.terms;
  int rev = pl->reverse;
  L->idx_cur = -1;

  if (pl->kind == PLAN_SCAN) {
    int cur = it->cursor;
    if (pl->idx && !pl->is_pk) {
      L->idx_cur = level_index_cursor(w, L, pl->idx);
      cur = L->idx_cur;
    }
    emit(p, rev ? OP_Last : OP_Rewind, cur, L->brk, 0);
    emit_resolve(p, L->top);
    if (L->idx_cur >= 0 && !pl->covering) {
      /* SQLite's deferred seek: the table row only for an entry whose
       * row the query reads beyond the index (its terms on the index's
       * columns first), when a term of the item's that the index answers
       * may spare lookups. Not in a query with a RIGHT JOIN (its
       * unmatched-row pass moves the table cursor), for a write (it needs
       * the row) or an OR sub-path. */
      if (w->right < 0 && !w->items[L->item].no_cover && !L->rowid_only && index_filters(w, L)) {
        L->seek_reg = emit_regs(p, 1);
        emit(p, OP_Integer, 0, L->seek_reg, 0);
      } else {
        code_row_lookup(w, L, L->cont);
      }
    }
    L->adv_op = rev ? OP_Prev : OP_Next;
    L->adv_cur = cur;
    return;
  }

  if (pl->kind == PLAN_ROWID_EQ) {
    PlanTerm *t = &terms[pl->eq[0]];
    int r = emit_regs(p, 1);
    int exit = L->brk;
    if (t->op == PLAN_OP_IN) {
      open_in_loop(w, L, t, r, L->brk);
      exit = L->in[L->nin - 1].next;
    } else {
      code_value(p, t, r);
    }
    emit(p, OP_SeekRowid, it->cursor, exit, r);
    emit_resolve(p, L->top);
    L->adv_op = 0;
    /* "rowid = value" under numeric affinity holds exactly for the row
     * SeekRowid finds (it converts the value the same way, and finds
     * nothing for NULL, a blob or a non-integral number): the term needs
     * no re-test (invariant 1's one exception) */
    if (t->op == PLAN_OP_EQ && !L->rowid_only && numeric_cmp(t)) term_enforced(w, pl->eq[0]);
    return;
  }

  if (pl->kind == PLAN_ROWID_RANGE) {
    int exit = L->brk;
    PlanTerm *lo = pl->lo >= 0 ? &terms[pl->lo] : NULL;
    PlanTerm *hi = pl->hi >= 0 ? &terms[pl->hi] : NULL;
    PlanTerm *first = rev ? hi : lo, *last = rev ? lo : hi;
    int rlast = 0;
    if (last) {
      rlast = emit_regs(p, 1);
      code_value(p, last, rlast);
      emit(p, OP_IsNull, rlast, exit, 0);
    }
    if (first) {
      int r = emit_regs(p, 1);
      code_value(p, first, r);
      emit(p, OP_IsNull, r, exit, 0);
      int strict = (first->op & (PLAN_OP_GT | PLAN_OP_LT)) != 0;
      /* numeric text becomes a number here, in a register we own (the seek
       * then only reads it) */
      vm_builder_add_text(&p->b, OP_Affinity, r, 1, 0, "C", 1);
      if (!rev) {
        emit(p, strict ? OP_SeekGT : OP_SeekGE, it->cursor, exit, r);
      } else {
        /* text or blob upper bound: every rowid is below it */
        int at_last = emit_label(p), go = emit_label(p);
        int inf = emit_regs(p, 1);
        vm_builder_add_real(&p->b, OP_Real, 0, inf, 0, HUGE_VAL);
        emit(p, OP_Gt, inf, at_last, r);
        emit(p, strict ? OP_SeekLT : OP_SeekLE, it->cursor, exit, r);
        emit(p, OP_Goto, 0, go, 0);
        emit_resolve(p, at_last);
        emit(p, OP_Last, it->cursor, exit, 0);
        emit_resolve(p, go);
      }
    } else {
      emit(p, rev ? OP_Last : OP_Rewind, it->cursor, exit, 0);
    }
    emit_resolve(p, L->top);
    if (last) {
      int rr = emit_regs(p, 1);
      emit(p, OP_Rowid, it->cursor, rr, 0);
      int strict = (last->op & (PLAN_OP_GT | PLAN_OP_LT)) != 0;
      int op;
      if (!rev)
        op = strict ? OP_Ge : OP_Gt; /* stop when rowid >= / > hi */
      else
        op = strict ? OP_Le : OP_Lt; /* stop when rowid <= / < lo */
      int a = emit(p, op, rlast, exit, rr);
      vm_builder_set_p5(&p->b, a, VM_CMP_AFF(AFF_NUMERIC) | VM_JUMPIFNULL);
      /* the end test is the term's own comparison (numeric affinity) */
      if (!L->rowid_only && numeric_cmp(last) && last->expr->op != SQL_E_BETWEEN)
        term_enforced(w, (int)(last - terms));
    }
    L->adv_op = rev ? OP_Prev : OP_Next;
    L->adv_cur = it->cursor;
    return;
  }

  /* PLAN_INDEX, PLAN_AUTO (index built by build_auto_index) */
  const Index *idx = pl->idx;
  int cur;
  if (pl->is_pk) {
    cur = it->cursor;
  } else if (pl->kind == PLAN_AUTO) {
    L->idx_cur = L->auto_cur;
    cur = L->idx_cur;
  } else {
    L->idx_cur = level_index_cursor(w, L, idx);
    cur = L->idx_cur;
  }
  int neq = pl->neq;
  int has_range = pl->lo >= 0 || pl->hi >= 0;
  int key = emit_regs(p, neq + 1);
  int exit = L->brk;
  char *affs = compile_parse_alloc(p, (size_t)neq + 2);
  if (!affs) return;
  /* IN loops first (outermost), each reading its value into its key slot */
  for (int j = 0; j < neq; j++) {
    PlanTerm *t = &terms[pl->eq[j]];
    affs[j] = aff_letter(t->aff);
    if (t->op == PLAN_OP_IN) {
      open_in_loop(w, L, t, key + j, exit);
      exit = L->in[L->nin - 1].next;
    }
  }
  for (int j = 0; j < neq; j++) {
    PlanTerm *t = &terms[pl->eq[j]];
    if (t->op != PLAN_OP_IN) code_value(p, t, key + j);
  }
  if (neq > 0) {
    affs[neq] = 0;
    vm_builder_add_text(&p->b, OP_Affinity, key, neq, 0, affs, neq);
    for (int j = 0; j < neq; j++) {
      PlanTerm *t = &terms[pl->eq[j]];
      if (t->op == PLAN_OP_EQ || t->op == PLAN_OP_IN) emit(p, OP_IsNull, key + j, exit, 0);
    }
  }
  /* range bounds in value order; a missing lower bound skips NULLs */
  PlanTerm *lo = pl->lo >= 0 ? &terms[pl->lo] : NULL;
  PlanTerm *hi = pl->hi >= 0 ? &terms[pl->hi] : NULL;
  int d = rev ^ (has_range ? idx->cols[neq].desc : 0);
  /* first bound: the one the scan starts from; implicit NULL = "not NULL" */
  PlanTerm *first = d ? hi : lo, *last = d ? lo : hi;
  int first_null = has_range && !lo && !d; /* start after the NULLs */
  int last_null = has_range && !lo && d;   /* stop at the NULLs */
  int nstart = neq, nend = neq;
  int start_strict = 0, end_strict = 0;
  if (first || first_null) {
    if (first) {
      code_value(p, first, key + neq);
      char a[2] = {aff_letter(first->aff), 0};
      vm_builder_add_text(&p->b, OP_Affinity, key + neq, 1, 0, a, 1);
      emit(p, OP_IsNull, key + neq, exit, 0);
      start_strict = (first->op & (PLAN_OP_GT | PLAN_OP_LT)) != 0;
    } else {
      emit(p, OP_Null, 0, key + neq, 0);
      start_strict = 1;
    }
    nstart = neq + 1;
  }
  int ekey = 0;
  if (last || last_null || neq > 0) {
    ekey = emit_regs(p, neq + 1);
    if (neq > 0) emit(p, OP_Copy, key, ekey, neq - 1);
    if (last) {
      code_value(p, last, ekey + neq);
      char a[2] = {aff_letter(last->aff), 0};
      vm_builder_add_text(&p->b, OP_Affinity, ekey + neq, 1, 0, a, 1);
      emit(p, OP_IsNull, ekey + neq, exit, 0);
      end_strict = (last->op & (PLAN_OP_GT | PLAN_OP_LT)) != 0;
      nend = neq + 1;
    } else if (last_null) {
      emit(p, OP_Null, 0, ekey + neq, 0);
      end_strict = 1;
      nend = neq + 1;
    }
  }
  /* position */
  if (nstart == 0) {
    emit(p, rev ? OP_Last : OP_Rewind, cur, exit, 0);
  } else {
    int op;
    if (!rev)
      op = (nstart > neq && start_strict) ? OP_SeekGT : OP_SeekGE;
    else
      op = (nstart > neq && start_strict) ? OP_SeekLT : OP_SeekLE;
    vm_builder_add_i4(&p->b, op, cur, exit, key, nstart);
  }
  emit_resolve(p, L->top);
  if (ekey && nend > 0) {
    int op;
    int strict_end = nend > neq && end_strict;
    if (!rev)
      op = strict_end ? OP_IdxGE : OP_IdxGT;
    else
      op = strict_end ? OP_IdxLE : OP_IdxLT;
    vm_builder_add_i4(&p->b, op, cur, exit, ekey, nend);
  }
  if (!pl->is_pk && !pl->covering && !L->rowid_only) code_row_lookup(w, L, L->cont);
  L->adv_op = rev ? OP_Prev : OP_Next;
  L->adv_cur = cur;
  /* A real index (not an automatic one) holds exactly the entries of "=" and
   * range terms between the seek and the end test: the same collation
   * (plan_index_col_ok) and the term's affinity applied to the key. */
  if (pl->kind == PLAN_INDEX && !L->rowid_only) {
    for (int j = 0; j < neq; j++)
      if (terms[pl->eq[j]].op == PLAN_OP_EQ) term_enforced(w, pl->eq[j]);
    if (pl->lo >= 0 && terms[pl->lo].expr->op != SQL_E_BETWEEN) term_enforced(w, pl->lo);
    if (pl->hi >= 0 && terms[pl->hi].expr->op != SQL_E_BETWEEN) term_enforced(w, pl->hi);
    between_enforced(w, pl->lo, pl->hi);
  }
}

/* MULTI-INDEX OR: every disjunct's path adds rowids to a RowSet; the level
 * then visits each rowid once, in rowid order. */
static void open_or_level(WhereInfo *w, WLevel *L) {
  Parse *p = w->p;
  SrcItem *it = &w->src->a[L->item];
  PlanLevel *pl = L->pl;
  int set = emit_regs(p, 1), r = emit_regs(p, 1);
  /* empty the set first (an earlier run may have stopped early) */
  int drain = emit_label(p), fill = emit_label(p);
  emit_resolve(p, drain);
  emit(p, OP_RowSetRead, set, fill, r);
  emit(p, OP_Goto, 0, drain, 0);
  emit_resolve(p, fill);
  for (int k = 0; k < pl->nsub; k++) {
    WLevel S;
    memset(&S, 0, sizeof S);
    S.item = L->item;
    S.pl = &pl->sub[k];
    S.cont = emit_label(p);
    S.brk = emit_label(p);
    S.top = emit_label(p);
    S.idx_cur = -1;
    S.rowid_only = 1;
    open_table_level(w, &S);
    if (S.idx_cur >= 0)
      emit(p, OP_IdxRowid, S.idx_cur, r, 0);
    else
      emit(p, OP_Rowid, it->cursor, r, 0);
    emit(p, OP_RowSetAdd, set, r, 0);
    emit_resolve(p, S.cont);
    if (S.adv_op) emit(p, S.adv_op, S.adv_cur, S.top, 0);
    for (int j = S.nin - 1; j >= 0; j--) {
      emit_resolve(p, S.in[j].next);
      emit(p, S.in[j].next_op, S.in[j].cursor, S.in[j].top, 0);
    }
    emit_resolve(p, S.brk);
  }
  emit_resolve(p, L->top);
  emit(p, OP_RowSetRead, set, L->brk, r);
  emit(p, OP_SeekRowid, it->cursor, L->cont, r);
  L->adv_op = OP_Goto;
}

/* ---- automatic indexes ---- */

static int correl_cb(SqlWalker *w, SqlExpr *e) {
  if ((e->op == SQL_E_COLREF && e->depth > 0) || e->op == SQL_E_TRIGREF) {
    *(int *)w->arg = 1;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

/* 1 if the subquery may read anything of an enclosing query (then its rows
 * may change while the loops run). Conservative: a reference from a nested
 * subquery to its own parent counts too. */
static int sub_is_correlated(SqlSelect *s) {
  int found = 0;
  SqlWalker w = {correl_cb, mask_sel_cb, &found};
  sql_walk_select(&w, s);
  return found;
}

/* Is it a recursive CTE (coded from its setup and recursive parts)? */
static int is_rec_item(Parse *p, const SrcItem *it) {
  SelectState *st = compile_select_state(p);
  for (struct RecCte *r = st ? st->recs : NULL; r; r = r->next)
    if (r->cursor == it->cursor) return 1;
  return 0;
}

/* The LogEst of a LIMIT written as an integer literal (>= 1), else -1. */
static int limit_est(const SqlExpr *e) {
  if (!e || e->op != SQL_E_INTEGER || !e->z) return -1;
  char *end;
  double v = strtod(e->z, &end);
  return *end == 0 && v >= 1 ? plan_logest(v < 1e18 ? (uint64_t)v : (uint64_t)1e18) : -1;
}

/* The rows a FROM subquery gives (LogEst), as SQLite's nSelectRow
 * estimates them before the outer query is planned, or -1 when that comes
 * from its own WHERE estimate (the planner's default then): a GROUP BY
 * gives at most 100 rows (LogEst 66), a VALUES of k rows LogEst k
 * (multiSelectValues), a LIMIT literal at most its value; compounds add
 * (UNION, UNION ALL), keep the left (EXCEPT) or the smaller (INTERSECT). */
static int sub_rows_est(const SqlSelect *s) {
  int r;
  if (s->kind == SQL_SEL_VALUES && !s->prior)
    r = s->cols ? s->cols->n : 1;
  else if (!s->from && !s->prior)
    r = 0;
  else if (s->group_by && !s->prior)
    r = 66;
  else
    r = -1;
  if (s->prior) {
    int l = sub_rows_est(s->prior), c;
    SqlSelect core = *s;
    core.prior = NULL;
    core.limit = NULL;
    c = sub_rows_est(&core);
    if (s->compound == SQL_COMPOUND_EXCEPT)
      r = l;
    else if (s->compound == SQL_COMPOUND_INTERSECT)
      r = l >= 0 && c >= 0 ? (l < c ? l : c) : l >= 0 ? l : c;
    else
      r = l >= 0 && c >= 0 ? plan_logest_add((PlanLogEst)l, (PlanLogEst)c) : -1;
  }
  int lim = limit_est(s->limit);
  if (lim >= 0 && (r < 0 || lim < r)) r = lim;
  return r;
}

/* Fill an ephemeral covering index on the join columns of level L's table:
 * key columns first (with the terms' collations), then every other column
 * read (the PRIMARY KEY of a WITHOUT ROWID table), then the rowid. Sets
 * L->pl->idx to a description of it (compile_code_column reads through it). */
static void build_auto_index(WhereInfo *w, WLevel *L) {
  Parse *p = w->p;
  SrcItem *it = &w->src->a[L->item];
  const Table *tab = it->tab;
  PlanLevel *pl = L->pl;
  int cap = pl->neq + tab->ncol + 1;
  IndexColumn *cols = compile_parse_alloc(p, sizeof(IndexColumn) * (size_t)cap);
  const Collation **colls = compile_parse_alloc(p, sizeof(Collation *) * (size_t)cap);
  Index *ix = compile_parse_alloc(p, sizeof(Index));
  if (!cols || !colls || !ix) return;
  int nc = 0;
  for (int j = 0; j < pl->neq; j++) {
    PlanTerm *t = &w->pl.terms[pl->eq[j]];
    cols[nc].col = t->column;
    cols[nc].coll = t->coll ? t->coll : "BINARY";
    colls[nc++] = t->collseq;
  }
  int all = (int)((it->colused >> 63) & 1) || it->kind == SRC_SUBQUERY;
  for (int c = 0; c < tab->ncol; c++) {
    if (c == tab->rowid_alias && !tab->without_rowid) continue;
    int pk = tab->without_rowid && tab->cols[c].pk;
    int used = all || (c < 63 && ((it->colused >> c) & 1)) || pk;
    /* a WITHOUT ROWID key column is kept even when it is an equality column:
     * compared in the term's collation (NOCASE, ...) two rows could share a
     * key, and the later would replace the earlier */
    for (int j = 0; j < nc && used && !pk; j++) used = cols[j].col != c;
    if (!used) continue;
    cols[nc].col = c;
    cols[nc].coll = "BINARY";
    colls[nc++] = NULL;
  }
  if (!tab->without_rowid) {
    cols[nc].col = INDEX_COL_ROWID;
    cols[nc].coll = "BINARY";
    colls[nc++] = NULL;
  }
  ix->name = "auto";
  ix->table = (Table *)tab;
  ix->nkey = pl->neq;
  ix->ncol = nc;
  ix->cols = cols;
  KeyInfo *ki = compile_parse_keyinfo(p, nc, colls, NULL);
  if (!ki) return;
  L->auto_cur = emit_cursor(p);
  vm_builder_add_p4(&p->b, OP_OpenEphemeral, L->auto_cur, nc, 0, P4_KEYINFO, ki);
  int regs = emit_regs(p, nc + 1);
  int done = emit_label(p), top = emit_label(p);
  emit(p, OP_Rewind, it->cursor, done, 0);
  emit_resolve(p, top);
  for (int j = 0; j < nc; j++) compile_code_column(p, tab, it->cursor, cols[j].col, regs + j);
  emit(p, OP_MakeRecord, regs, nc, regs + nc);
  emit(p, OP_IdxInsert, L->auto_cur, regs + nc, 0);
  emit(p, OP_Next, it->cursor, top, 0);
  emit_resolve(p, done);
  pl->idx = ix;
}

/* ---- RIGHT JOIN: the key identifying a row of the right item ---- */

static int rj_key_count(const SrcItem *it) {
  if (it->kind == SRC_TABLE && it->tab->without_rowid) return it->tab->npk;
  return 1;
}

/* The key of the right item's current row into r[k..]. */
static void rj_key(Parse *p, const SrcItem *it, int k) {
  if (it->kind == SRC_TABLE && it->tab->without_rowid) {
    for (int j = 0; j < it->tab->npk; j++) emit(p, OP_Column, it->cursor, j, k + j);
  } else {
    emit(p, OP_Rowid, it->cursor, k, 0);
  }
}

/* After the loops: every row of the right item that matched no row on its
 * left runs the body once with the left items NULL. */
static void rj_pass(WhereInfo *w, WLevel *L) {
  Parse *p = w->p;
  SrcItem *r = &w->src->a[L->item];
  int done = emit_label(p), top = emit_label(p);
  int nk = rj_key_count(r);
  int kr = emit_regs(p, nk);
  emit(p, OP_Integer, 1, L->rj_mode, 0);
  if (L->null_reg) emit(p, OP_Integer, 0, L->null_reg, 0);
  emit(p, OP_Rewind, r->cursor, done, 0);
  emit_resolve(p, top);
  rj_key(p, r, kr);
  vm_builder_add_i4(&p->b, OP_Found, L->rj_set, L->rj_next, kr, nk);
  /* every item on its left is NULL (loops keep the FROM order here) */
  for (int k = 0; k < w->nlevel; k++) {
    WLevel *M = &w->lv[k];
    if (M->item >= L->item) continue;
    SrcItem *it = &w->src->a[M->item];
    if (it->kind == SRC_SUBQUERY && it->co_reg) {
      if (it->tab && it->tab->ncol > 0)
        emit(p, OP_Null, 0, it->co_out, it->co_out + it->tab->ncol - 1);
    } else {
      emit(p, OP_NullRow, it->cursor, 0, 0);
    }
    if (M->idx_cur >= 0) emit(p, OP_NullRow, M->idx_cur, 0, 0);
    if (it->null_reg) emit(p, OP_Integer, 1, it->null_reg, 0);
  }
  emit(p, OP_Goto, 0, L->body, 0);
  emit_resolve(p, L->rj_next);
  emit(p, OP_Next, r->cursor, top, 0);
  emit_resolve(p, done);
}

/* ---- compile_where_begin / compile_where_end ---- */

/* ---- LEFT JOIN simplification ----
 *
 * SQLite turns "a LEFT JOIN b" into an inner join when the WHERE clause
 * cannot be true on b's NULL row (sqlite3ExprImpliesNonNullRow): the rows
 * it would add are all rejected. The walk follows SQLite's: a column of b
 * outside IS / IS NOT / IS NULL / NOT NULL / OR / CASE / IN / a function
 * call / a row value / a subquery proves it; AND needs both sides, BETWEEN
 * its left operand; a comparison with a virtual table's column proves
 * nothing. */

static int is_vtab_col(SrcList *src, const SqlExpr *e) {
  if (!e || e->op != SQL_E_COLREF) return 0;
  const SrcItem *it = compile_src_find_cursor(src, e->cursor);
  return it && it->kind == SRC_TABLE && it->tab && it->tab->vtab;
}

static int nonnull_walk(SrcList *src, const SqlExpr *e, int cursor) {
  if (!e) return 0;
  switch (e->op) {
    case SQL_E_ISNOT:
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL:
    case SQL_E_CASE:
    case SQL_E_IN:
    case SQL_E_FUNC:
    case SQL_E_ROW:
    case SQL_E_EXISTS:
    case SQL_E_SUBQUERY:
      return 0;
    case SQL_E_COLREF:
      return e->cursor == cursor && e->depth == 0;
    case SQL_E_BETWEEN:
      return nonnull_walk(src, e->a, cursor);
    case SQL_E_BINARY:
      switch (e->sub) {
        case TK_IS:
        case TK_OR:
          return 0;
        case TK_AND:
          return nonnull_walk(src, e->a, cursor) && nonnull_walk(src, e->b, cursor);
        case TK_EQ:
        case TK_NE:
        case TK_LT:
        case TK_LE:
        case TK_GT:
        case TK_GE:
          if (is_vtab_col(src, e->a) || is_vtab_col(src, e->b)) return 0;
          break;
        default:
          break;
      }
      break;
    default:
      break;
  }
  if (nonnull_walk(src, e->a, cursor) || nonnull_walk(src, e->b, cursor) ||
      nonnull_walk(src, e->c, cursor))
    return 1;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (nonnull_walk(src, e->list->a[i].expr, cursor)) return 1;
  return 0;
}

/* e without COLLATE and likely()/unlikely()/likelihood() on top. */
static const SqlExpr *skip_collate_likely(const SqlExpr *e) {
  while (e) {
    if (e->op == SQL_E_COLLATE)
      e = e->a;
    else if (e->op == SQL_E_FUNC && e->z && e->list && e->list->n >= 1 &&
             (util_stricmp(e->z, "likely") == 0 || util_stricmp(e->z, "unlikely") == 0 ||
              util_stricmp(e->z, "likelihood") == 0))
      e = e->list->a[0].expr;
    else
      break;
  }
  return e;
}

static int implies_nonnull_row(SrcList *src, const SqlExpr *e, int cursor) {
  e = skip_collate_likely(e);
  if (!e) return 0;
  if (e->op == SQL_E_NOTNULL) {
    e = e->a;
  } else {
    while (e && e->op == SQL_E_BINARY && e->sub == TK_AND) {
      if (implies_nonnull_row(src, e->a, cursor)) return 1;
      e = skip_collate_likely(e->b);
    }
  }
  return nonnull_walk(src, e, cursor);
}

/* Lists with a RIGHT or FULL JOIN are left as written. SQLite's WHERE holds
 * the ON terms of inner joins too (and those of a LEFT JOIN once it became
 * inner, items left to right), so they prove as much as WHERE terms. */
void compile_where_simplify_left_joins(SrcList *src, const SqlExpr *where) {
  if (!src) return;
  for (int i = 0; i < src->n; i++)
    if (src->a[i].jointype & SQL_JOIN_RIGHT) return;
  for (int i = 0; i < src->n; i++) {
    SrcItem *it = &src->a[i];
    if (!(it->jointype & SQL_JOIN_LEFT)) continue;
    int inner = implies_nonnull_row(src, where, it->cursor);
    for (int k = 0; !inner && k < src->n; k++) {
      int jt = src->a[k].jointype; /* (one made inner counts for later items only) */
      if (k != i && !(jt & SQL_JOIN_LEFT) && (k < i || !(jt & SRC_JOIN_WAS_LEFT)))
        inner = implies_nonnull_row(src, src->a[k].on, it->cursor);
    }
    if (inner)
      it->jointype =
          (uint8_t)((it->jointype & ~(SQL_JOIN_LEFT | SQL_JOIN_OUTER)) | SRC_JOIN_WAS_LEFT);
  }
}

WhereInfo *compile_where_plan(Parse *p, SrcList *src, SqlExpr *where, SqlExprList *order_by,
                              int flags) {
  if (parse_failed(p)) return NULL;
  WhereInfo *w = compile_parse_alloc(p, sizeof *w);
  if (!w) return NULL;
  w->p = p;
  w->flags = flags;
  w->src = src;
  int n = src ? src->n : 0;
  if (n > 64) {
    compile_parse_error(p, "at most 64 tables in a join");
    return NULL;
  }
  w->nlevel = n;
  w->lv = n ? compile_parse_alloc(p, sizeof(WLevel) * (size_t)n) : NULL;
  w->items = n ? compile_parse_alloc(p, sizeof(PlanItem) * (size_t)n) : NULL;
  HookCtx *hc = compile_parse_alloc(p, sizeof *hc);
  if ((n && (!w->lv || !w->items)) || !hc) return NULL;
  w->brk = emit_label(p);
  w->wcur = -1;
  hc->p = p;
  hc->src = src;

  /* A LEFT JOIN whose right item the WHERE clause needs non-NULL is an
   * inner join (SQLite's simplification, before it plans): its ON terms
   * restrict like any, and the join order is free */
  compile_where_simplify_left_joins(src, where);

  /* A subquery, view or CTE as the first item, alone or followed by an
   * outer or CROSS join, in a list without RIGHT JOIN (SQLite's rule: the
   * loops keep it outermost) runs as a co-routine: its rows stream to the
   * loops, so a LIMIT or an early exit stops it */
  int co_first = 0;
  if (n > 0 && !(flags & WHERE_ONEPASS) && compile_src_can_coroutine(p, &src->a[0]) &&
      (n == 1 || (src->a[1].jointype & (SQL_JOIN_LEFT | SQL_JOIN_CROSS)))) {
    co_first = 1;
    for (int i = 0; i < n; i++)
      if (src->a[i].jointype & SQL_JOIN_RIGHT) co_first = 0;
  }
  if (co_first) {
    SrcItem *f = &src->a[0];
    f->co_reg = emit_regs(p, 1);
    f->co_out = emit_regs(p, f->tab->ncol > 0 ? f->tab->ncol : 1);
    compile_parse_set_coroutine(p, f->cursor, f->co_out);
  }
  w->right = -1;
  for (int i = 0; i < n; i++) {
    SrcItem *it = &src->a[i];
    if (it->jointype & SQL_JOIN_RIGHT) {
      if (it->kind == SRC_SUBQUERY && it->co_reg) {
        compile_parse_error(p, "RIGHT and FULL OUTER JOINs of a coroutine are not supported");
        return NULL;
      }
      if (w->right < 0) w->right = i;
    }
    PlanItem *pi = &w->items[i];
    pi->tab = it->tab;
    if (it->kind == SRC_SUBQUERY) {
      pi->is_sub = 1;
      pi->auto_ok = !it->co_reg && it->sub && !sub_is_correlated(it->sub);
      /* a recursive CTE: SQLite assumes 4 billion rows (its sub is the setup) */
      pi->sub_rows = (PlanLogEst)(it->sub && !is_rec_item(p, it) ? sub_rows_est(it->sub) : -1);
    }
    pi->cursor = it->cursor;
    pi->jointype = it->jointype;
    pi->not_indexed = it->not_indexed;
    pi->indexed_by = it->indexed_by;
    pi->colused = it->colused;
    pi->no_cover = (flags & WHERE_ONEPASS) || !it->ast || (it->jointype & SQL_JOIN_RIGHT);
    /* the planner treats a RIGHT JOIN item like a LEFT one: only its ON
     * terms restrict it, and it stays after the items on its left */
    if (it->jointype & SQL_JOIN_RIGHT) pi->jointype |= SQL_JOIN_LEFT;
    if (co_first && i > 0) pi->after |= 1; /* the co-routine stays outermost */
    if (it->kind == SRC_TABLE && !compile_src_indexed_by_ok(p, it->tab, it->indexed_by))
      return NULL;
  }
  PlanHooks hooks = {hc, hook_mask, hook_is_constant, hook_term_info, hook_coll_name};
  plan_init(&w->pl, &p->arena, &hooks, n, w->items);
  /* With a RIGHT JOIN the WHERE (and the ON of an inner join right of it)
   * applies after the unmatched rows are added: it filters nothing before
   * the last loop (on_item -2) */
  w->on_start = compile_parse_alloc(p, sizeof(int) * (size_t)(n + 1));
  if (!w->on_start) return NULL;
  for (int i = 0; i < n; i++) {
    SrcItem *it = &src->a[i];
    int on = (it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) ? i : -1;
    if (on < 0 && w->right >= 0 && i > w->right) on = -2;
    w->on_start[i] = w->pl.nterm;
    plan_add_clause(&w->pl, it->on, on);
  }
  w->on_start[n] = w->pl.nterm;
  w->pl.where_first = w->pl.nterm;
  plan_add_clause(&w->pl, where, w->right >= 0 ? -2 : -1);
  for (int i = 0; i < n; i++) /* a table-valued function's arguments, after WHERE */
    if (src->a[i].tab && src->a[i].tab->vtab && src->a[i].tvf_args)
      compile_vtab_where_args(p, &src->a[i], &w->pl, (src->a[i].jointype & SQL_JOIN_LEFT) ? i : -1);
  if (parse_failed(p)) return NULL;
  for (int i = 0; i < n; i++) {
    SrcItem *it = &src->a[i];
    if (it->kind != SRC_TABLE || !it->tab->vtab) continue;
    if (!w->vw && !(w->vw = compile_parse_alloc(p, sizeof *w->vw * (size_t)n))) return NULL;
    w->vw[i] = NULL;
    if (compile_vtab_where_plan(p, it, i, &w->items[i], &w->pl, order_by, &w->vw[i])) return NULL;
  }
  int pflags = 0;
  if ((flags & WHERE_NO_REORDER) || w->right >= 0) pflags |= PLAN_NO_REORDER;
  if (flags & WHERE_GROUPBY) pflags |= PLAN_GROUPBY;
  if (flags & WHERE_SORTBYGROUP) pflags |= PLAN_SORTBYGROUP;
  if (flags & WHERE_ORDER_PREFIX) pflags |= PLAN_ORDER_PREFIX;
  if (flags & WHERE_DISTINCT) pflags |= PLAN_DISTINCT;
  if (p->env && p->env->no_auto_index) pflags |= PLAN_NO_AUTO;
  int rc = plan_choose(&w->pl, order_by, pflags, &w->plan);
  if (rc) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else if (w->pl.no_solution)
      compile_parse_error(p, "no query solution");
    else
      compile_parse_error_code(p, rc, "query planner failed");
    return NULL;
  }
  /* the unmatched rows of a RIGHT/FULL JOIN come after the loops: no
   * order is delivered then */
  w->order_ok = order_by && order_by->n > 0 && w->plan.order_ok && w->right < 0;
  w->order_prefix = order_by && !w->order_ok && w->right < 0 ? w->plan.order_prefix : 0;
  for (int k = 0; k < n; k++) {
    w->lv[k].pl = &w->plan.levels[k];
    w->lv[k].item = w->plan.levels[k].item;
  }
  return w;
}

/* ---- joins that change nothing (SQLite's omit-noop-join) ----
 *
 * The right item of a LEFT JOIN that nothing but its own ON clause reads,
 * looked up as at most one row (or in a DISTINCT query, any number of
 * rows), adds nothing: each row on its left comes out once either way. Its
 * loop is dropped after the plan is chosen, innermost first, never the
 * outermost one. */

/* 1 if level L visits at most one row per outer row (SQLite's
 * WHERE_ONEROW): the rowid by = or IS, or every column of a UNIQUE index
 * by = / IS with no IN, NOT NULL columns unless the index has one column
 * and its term is "=". */
static int level_one_row(const WhereInfo *w, const PlanLevel *pl) {
  if (pl->kind == PLAN_ROWID_EQ)
    return (w->pl.terms[pl->eq[0]].op & (PLAN_OP_EQ | PLAN_OP_IS)) != 0;
  const Index *x = pl->idx;
  if (pl->kind != PLAN_INDEX || !x || !x->unique || pl->neq != x->nkey || pl->lo >= 0 ||
      pl->hi >= 0)
    return 0;
  const Table *tab = x->table;
  int notnull = 1, op = 0;
  for (int i = 0; i < pl->neq; i++) {
    op = w->pl.terms[pl->eq[i]].op;
    if (!(op & (PLAN_OP_EQ | PLAN_OP_IS))) return 0;
    int c = x->cols[i].col, nn = c == INDEX_COL_ROWID || (c >= 0 && tab->cols[c].notnull);
    /* a WITHOUT ROWID table's primary key columns are NOT NULL */
    for (int j = 0; !nn && c >= 0 && tab->without_rowid && tab->pk_index && j < tab->pk_index->nkey;
         j++)
      nn = tab->pk_index->cols[j].col == c;
    if (!nn) notnull = 0;
  }
  return notnull || (x->nkey == 1 && op == PLAN_OP_EQ);
}

static uint64_t list_mask(WhereInfo *w, const SqlExprList *l) {
  HookCtx hc = {w->p, w->src};
  uint64_t m = 0;
  for (int i = 0; l && i < l->n; i++) m |= hook_mask(&hc, l->a[i].expr);
  return m;
}

void compile_where_omit_noop(WhereInfo *w, const SqlExprList *result, const SqlExprList *order_by,
                             int distinct) {
  if (!w || w->nlevel < 2 || w->right >= 0 || !result) return;
  uint64_t used = list_mask(w, result) | list_mask(w, order_by);
  for (int k = w->nlevel - 1; k >= 1; k--) {
    WLevel *L = &w->lv[k];
    const SrcItem *it = &w->src->a[L->item];
    if ((it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) != SQL_JOIN_LEFT || L->item >= 63)
      continue;
    if (!distinct && !level_one_row(w, L->pl)) continue;
    if (used & bit(L->item)) continue;
    int other = 0;
    for (int i = 0; i < w->pl.nterm && !other; i++) {
      const PlanTerm *t = &w->pl.terms[i];
      if ((t->mask & bit(L->item)) && t->on_item != L->item) other = 1;
    }
    if (other) continue;
    w->omitted |= bit(L->item);
    memmove(L, L + 1, sizeof(WLevel) * (size_t)(w->nlevel - 1 - k));
    w->nlevel--;
  }
}

int compile_where_code(WhereInfo *w) {
  Parse *p = w->p;
  SrcList *src = w->src;
  int n = w->nlevel;
  if (parse_failed(p)) return 1;
  uint8_t *coded = w->pl.nterm ? compile_parse_alloc(p, (size_t)w->pl.nterm) : NULL;
  if (w->pl.nterm && !coded) return 1;
  w->coded = coded;
  for (int i = 0; i < w->pl.nterm && w->omitted; i++)
    if (w->pl.terms[i].on_item >= 0 && (w->omitted & bit(w->pl.terms[i].on_item))) coded[i] = 1;

  /* Open the tables' cursors once, before the loops (WHERE_ONEPASS: item 0
   * for writing, the caller writes through it), and the index cursors of
   * their access paths too, as SQLite does: an inner level's index is then
   * not reopened for every row of the outer loops. */
  for (int k = 0; k < n; k++) {
    SrcItem *it = &src->a[w->lv[k].item];
    if (it->kind == SRC_TABLE) {
      int write = (w->flags & WHERE_ONEPASS) && w->lv[k].item == 0;
      if (!write) compile_parse_need_read(p);
      compile_parse_open_table(p, it->cursor, it->tab, write);
      if (!it->tab->vtab && level_own_index(w->lv[k].pl)) {
        /* compile_where_write_index handed level 0's out: opened for writing */
        int wr = k == 0 && w->wcur >= 0;
        int cur = wr ? w->wcur : emit_cursor(p);
        compile_parse_open_index(p, cur, w->lv[k].pl->idx, wr);
        w->lv[k].pre_cur = cur + 1;
      }
    }
  }

  for (int k = 0; k < n && w->right >= 0; k++) {
    WLevel *L = &w->lv[k];
    SrcItem *r = &src->a[L->item];
    if (!(r->jointype & SQL_JOIN_RIGHT)) continue;
    int nk = rj_key_count(r);
    L->rj_mode = emit_regs(p, 1);
    L->rj_set = emit_cursor(p);
    L->rj_next = emit_label(p);
    emit(p, OP_Integer, 0, L->rj_mode, 0);
    KeyInfo *ki = compile_parse_keyinfo(p, nk, NULL, NULL);
    if (!ki) return 1;
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, L->rj_set, nk, 0, P4_KEYINFO, ki);
    /* every item left of it may be padded */
    for (int i = 0; i < L->item; i++) {
      SrcItem *it = &src->a[i];
      if (!it->null_reg) it->null_reg = emit_regs(p, 1);
      emit(p, OP_Integer, 0, it->null_reg, 0);
    }
  }

  /* Materialized subqueries (no FROM item can read a sibling, so their rows
   * do not depend on the loops): filled before the loops, as SQLite does. */
  for (int k = 0; k < n; k++) {
    WLevel *L = &w->lv[k];
    SrcItem *it = &src->a[L->item];
    if (it->kind != SRC_SUBQUERY || it->co_reg) continue;
    compile_src_code_subquery(p, it);
    if (L->pl->kind == PLAN_AUTO) {
      int built = emit_label(p);
      emit(p, OP_Once, 0, built, 0);
      build_auto_index(w, L);
      emit_resolve(p, built);
    }
  }

  /* Automatic indexes: filled before the loops. */
  for (int k = 0; k < n; k++)
    if (w->lv[k].pl->kind == PLAN_AUTO && src->a[w->lv[k].item].kind == SRC_TABLE)
      build_auto_index(w, &w->lv[k]);

  /* Constant terms: before every loop. */
  code_ready_terms(w, coded, 0, w->brk, n == 0);

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
      L->null_reg = it->null_reg ? it->null_reg : emit_regs(p, 1);
      it->null_reg = L->null_reg;
      emit(p, OP_Integer, 0, L->match_reg, 0);
      emit(p, OP_Integer, 0, L->null_reg, 0);
    }
    if (it->kind == SRC_SUBQUERY && L->pl->kind == PLAN_AUTO) {
      /* materialized and indexed before the loops: search like a table */
      level_eqp(w, L);
      open_table_level(w, L);
      if (L->idx_cur >= 0) compile_parse_set_cover(p, it->cursor, L->pl->idx, L->idx_cur);
    } else if (it->kind == SRC_SUBQUERY) {
      if (it->co_reg) compile_src_code_subquery(p, it); /* restarts the coroutine */
      if (it->co_reg) {
        emit_resolve(p, L->top);
        emit(p, OP_Yield, it->co_reg, L->brk, 0);
        L->adv_op = OP_Goto;
      } else {
        emit(p, OP_Rewind, it->cursor, L->brk, 0);
        emit_resolve(p, L->top);
        L->adv_op = OP_Next;
        L->adv_cur = it->cursor;
      }
      level_eqp(w, L);
    } else {
      level_eqp(w, L);
      if (L->pl->kind == PLAN_VTAB) { /* VFilter ... VNext (compile_vtab.c) */
        VtabInCtx ic = {w, L};
        compile_vtab_where_code(p, w->vw[L->item], L->pl, coded, w->pl.terms, L->brk, vtab_in_loop,
                                &ic);
        emit_resolve(p, L->top);
        compile_vtab_where_recheck(p, w->vw[L->item], w->pl.terms, L->cont);
        L->adv_op = OP_VNext;
        L->adv_cur = it->cursor;
      } else if (L->pl->kind == PLAN_OR)
        open_or_level(w, L);
      else
        open_table_level(w, L);
      if (L->idx_cur >= 0 && (L->pl->covering || L->seek_reg))
        compile_parse_set_cover(p, it->cursor, L->pl->idx, L->idx_cur);
      if (L->seek_reg) compile_parse_set_cover_seek(p, it->cursor, L->seek_reg);
    }
    have |= bit(L->item);
    /* ON terms of a LEFT JOIN item: here, before the match flag. */
    for (int i = 0; i < w->pl.nterm; i++) {
      PlanTerm *t = &w->pl.terms[i];
      if (t->on_item == L->item && t->parent < 0 && !coded[i]) {
        coded[i] = 1;
        code_term(w, t, L->cont);
      }
    }
    if (it->jointype & SQL_JOIN_RIGHT) {
      /* remember the right item's row as matched */
      int nk = rj_key_count(it);
      int kr = emit_regs(p, nk + 1);
      rj_key(p, it, kr);
      emit(p, OP_MakeRecord, kr, nk, kr + nk);
      emit(p, OP_IdxInsert, L->rj_set, kr + nk, 0);
    }
    if (L->match_reg) emit(p, OP_Integer, 1, L->match_reg, 0);
    emit_resolve(p, L->body);
    code_ready_terms(w, coded, have, L->cont, k == n - 1);
  }
  return parse_failed(p);
}

WhereInfo *compile_where_begin(Parse *p, SrcList *src, SqlExpr *where, SqlExprList *order_by,
                               int flags) {
  WhereInfo *w = compile_where_plan(p, src, where, order_by, flags);
  if (!w || compile_where_code(w)) return NULL;
  return w;
}

int compile_where_order_satisfied(const WhereInfo *w) { return w ? w->order_ok : 0; }

int compile_where_order_prefix(const WhereInfo *w) { return w ? w->order_prefix : 0; }

int compile_where_one_row(const WhereInfo *w) {
  if (!w || w->plan.nlevel != 1) return 0;
  const PlanLevel *lv = &w->plan.levels[0];
  int neq;
  if (lv->kind == PLAN_VTAB) /* the module's own word (SQLite's WHERE_ONEROW) */
    return w->vw && compile_vtab_where_unique(w->vw[lv->item], lv);
  if (lv->kind == PLAN_ROWID_EQ)
    neq = 1;
  else if (lv->kind == PLAN_INDEX && lv->idx && lv->idx->unique && !lv->idx->where &&
           lv->neq == lv->idx->nkey && lv->lo < 0 && lv->hi < 0)
    neq = lv->neq;
  else
    return 0;
  for (int i = 0; i < neq; i++)
    if (w->pl.terms[lv->eq[i]].op != PLAN_OP_EQ) return 0;
  return 1;
}

const Index *compile_where_scan_index(const WhereInfo *w) {
  if (!w || w->plan.nlevel != 1) return NULL;
  const PlanLevel *lv = &w->plan.levels[0];
  if ((lv->kind == PLAN_SCAN || lv->kind == PLAN_INDEX) && lv->idx && !lv->is_pk) return lv->idx;
  return NULL;
}

int compile_where_write_index(WhereInfo *w, const Index **idx) {
  *idx = NULL;
  if (!w || !(w->flags & WHERE_ONEPASS) || w->plan.nlevel != 1) return -1;
  const PlanLevel *lv = &w->plan.levels[0];
  if ((lv->kind != PLAN_SCAN && lv->kind != PLAN_INDEX) || !lv->idx || lv->is_pk) return -1;
  if (w->wcur < 0) w->wcur = emit_cursor(w->p);
  *idx = lv->idx;
  return w->wcur;
}

int compile_where_continue_label(const WhereInfo *w) {
  if (!w) return 0;
  return w->nlevel ? w->lv[w->nlevel - 1].cont : w->brk;
}

int compile_where_break_label(const WhereInfo *w) { return w ? w->brk : 0; }

void compile_where_end(WhereInfo *w) {
  if (!w) return;
  Parse *p = w->p;
  for (int k = w->nlevel - 1; k >= 0; k--) {
    WLevel *L = &w->lv[k];
    SrcItem *it = &w->src->a[L->item];
    emit_resolve(p, L->cont);
    if (L->rj_mode) emit(p, OP_If, L->rj_mode, L->rj_next, 0);
    if (L->null_reg) emit(p, OP_If, L->null_reg, L->done, 0);
    if (L->adv_op == OP_Goto)
      emit(p, OP_Goto, 0, L->top, 0);
    else if (L->adv_op)
      emit(p, L->adv_op, L->adv_cur, L->top, 0);
    for (int j = L->nin - 1; j >= 0; j--) {
      emit_resolve(p, L->in[j].next);
      emit(p, L->in[j].next_op, L->in[j].cursor, L->in[j].top, 0);
    }
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
      if (L->seek_reg) emit(p, OP_Integer, 1, L->seek_reg, 0); /* the NULL row is in place */
      emit(p, OP_Integer, 1, L->null_reg, 0);
      emit(p, OP_Integer, 1, L->match_reg, 0);
      emit(p, OP_Goto, 0, L->body, 0);
    }
    emit_resolve(p, L->done);
    if (L->idx_cur >= 0 && L->pl && (L->pl->covering || L->seek_reg))
      compile_parse_set_cover(p, it->cursor, NULL, 0);
  }
  /* EXPLAIN QUERY PLAN: the unmatched-row passes come here, after the
   * body's rows (SQLite's sqlite3WhereEnd) */
  for (int k = 0; k < w->nlevel; k++) {
    SrcItem *r = &w->src->a[w->lv[k].item];
    if (!(r->jointype & SQL_JOIN_RIGHT)) continue;
    int save = p->eqp_parent;
    p->eqp_parent = compile_parse_eqp(p, "RIGHT-JOIN %s", right_join_name(r));
    compile_parse_eqp(p, "SCAN %s", item_name(r));
    p->eqp_parent = save;
  }
  /* unmatched rows of each RIGHT/FULL item, left to right (a later pass
   * sees the rows an earlier one added) */
  for (int k = 0; k < w->nlevel; k++)
    if (w->lv[k].rj_mode) rj_pass(w, &w->lv[k]);
  emit_resolve(p, w->brk);
  for (int k = 0; k < w->nlevel; k++) {
    SrcItem *it = &w->src->a[w->lv[k].item];
    if (it->co_reg) compile_parse_set_coroutine(p, it->cursor, 0);
  }
}
