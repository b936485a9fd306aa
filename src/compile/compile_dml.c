/*
 * compile_dml.c -- INSERT, UPDATE and DELETE: row values, constraint checks
 * (NOT NULL, CHECK, rowid and UNIQUE/PRIMARY KEY conflicts with every
 * conflict resolution), index maintenance, and the trigger calls around
 * each row (compile_trigger.c builds the trigger programs).
 *
 * Owns: dml_insert, dml_update, dml_delete, dml_expr_dup, dml_list_dup.
 *
 * Row layout: a row is ncol+1 consecutive registers, the rowid first, then
 * every column in table order (the trigger_code layout). The rowid alias
 * column's register holds the rowid; the stored record holds NULL there.
 *
 * Invariants:
 *  1. Every value an old row keeps across a cursor move is a deep copy (Copy
 *     from a scratch block): Column reads are borrowed from the page.
 *  2. Column affinity is applied to the new row (Affinity) before BEFORE
 *     triggers and constraint checks, so index keys, CHECK expressions and
 *     the record see the converted values (as SQLite does).
 *  3. Expressions from the schema (DEFAULT, CHECK, index expressions, partial
 *     WHERE) are copied into the Parse arena before resolution: the schema's
 *     AST is shared by every statement and never annotated.
 *  4. Unique checks run, like SQLite's, in the table's index order with the
 *     REPLACE indexes last; every check happens before any write of the row,
 *     so an ABORT/FAIL/IGNORE leaves the row untouched.
 *  5. UPDATE and DELETE change each row inside the WHERE loop, through the
 *     loop's own table cursor (one pass), only where the loop cannot see its
 *     own changes and nothing needs the whole set first (onepass_mode:
 *     SQLite's rules); otherwise they collect the rows first (RowSet of
 *     rowids, or an ephemeral index of PRIMARY KEYs for WITHOUT ROWID
 *     tables), then change them.
 *  6. INSERT ... SELECT inserts each row as the SELECT produces it, unless
 *     the SELECT's code opens the target table or one of its indexes, or the
 *     target has INSERT triggers or RETURNING: then every row is staged in
 *     an ephemeral table first (SQLite 3.40's rule).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

/* ---------------------------------------------------------------- copies */

SqlExprList *dml_list_dup(Parse *p, const SqlExprList *l) {
  if (!l) return NULL;
  SqlExprList *n = parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  n->n = n->cap = l->n;
  if (l->n > 0) {
    n->a = parse_alloc(p, (size_t)l->n * sizeof *n->a);
    if (!n->a) return NULL;
    for (int i = 0; i < l->n; i++) {
      n->a[i] = l->a[i];
      n->a[i].expr = dml_expr_dup(p, l->a[i].expr);
    }
  }
  return n;
}

SqlExpr *dml_expr_dup(Parse *p, const SqlExpr *e) {
  if (!e) return NULL;
  SqlExpr *n = parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  *n = *e;
  n->a = dml_expr_dup(p, e->a);
  n->b = dml_expr_dup(p, e->b);
  n->c = dml_expr_dup(p, e->c);
  n->filter = dml_expr_dup(p, e->filter);
  n->list = dml_list_dup(p, e->list);
  n->order = dml_list_dup(p, e->order);
  return n;
}

/* ------------------------------------------------------ rows in registers */

typedef struct RowBind {
  Parse *p;
  int cursor, rowid, cols;
  int to; /* >= 0: re-point the references at cursor `to` instead */
} RowBind;

static int bind_expr_cb(SqlWalker *w, SqlExpr *e) {
  RowBind *rb = w->arg;
  if (e->op == SQL_E_COLREF && e->cursor == rb->cursor && rb->to >= 0) {
    e->cursor = rb->to;
    return SQL_WALK_CONTINUE;
  }
  if (e->op == SQL_E_COLREF && e->cursor == rb->cursor) {
    SqlExpr *o = parse_alloc(rb->p, sizeof *o);
    if (!o) return SQL_WALK_ABORT;
    *o = *e;
    e->op = SQL_E_REG;
    e->reg = e->column < 0 ? rb->rowid : rb->cols + e->column;
    e->orig = o;
    return SQL_WALK_PRUNE;
  }
  return SQL_WALK_CONTINUE;
}
static int bind_select_cb(SqlWalker *w, SqlSelect *s) {
  (void)w;
  (void)s;
  return SQL_WALK_CONTINUE;
}

/* Turn the column references of cursor into reads of the row in registers. */
static void bind_row(Parse *p, SqlExpr *e, int cursor, int rowid, int cols) {
  RowBind rb = {p, cursor, rowid, cols, -1};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (e) sql_walk_expr(&w, e);
}

/* Re-point the column references of cursor `from` at cursor `to` (a table
 * cursor positioned on the row): unlike bind_row this keeps them column
 * reads, so a subquery using them stays correlated (evaluated per row). */
static void remap_cursor(Parse *p, SqlExpr *e, int from, int to) {
  RowBind rb = {p, from, 0, 0, to};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (e) sql_walk_expr(&w, e);
}
static void remap_cursor_select(Parse *p, SqlSelect *s, int from, int to) {
  RowBind rb = {p, from, 0, 0, to};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (s) sql_walk_select(&w, s);
}

static void trig_nc(Parse *p, NameCtx *nc) {
  TrigFrame *f = dml_frame(p);
  if (f && f->trig) {
    nc->trig_tab = p->trig_tab;
    nc->trig_mask = f->trig->event == TRIGGER_INSERT   ? 2
                    : f->trig->event == TRIGGER_DELETE ? 1
                                                       : 3;
  }
}

/* A copy of the schema expression e, resolved against tab and bound to the
 * row in registers (rowid, cols). NULL after an error. */
static SqlExpr *row_expr(Parse *p, Table *tab, const SqlExpr *e, int rowid, int cols, int flags,
                         const char *ctx) {
  SqlExpr *c = dml_expr_dup(p, e);
  if (!c) return NULL;
  SrcList *src = src_single(p, tab, NULL);
  if (!src) return NULL;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  nc.flags = flags;
  nc.err_ctx = ctx;
  if (resolve_expr(p, &nc, c) || parse_failed(p)) return NULL;
  bind_row(p, c, src->a[0].cursor, rowid, cols);
  return c;
}

/* A DEFAULT expression (no column references) into target. */
static void code_default(Parse *p, Column *col, int target) {
  if (!col->dflt) {
    emit(p, OP_Null, 0, target, 0);
    return;
  }
  SqlExpr *c = dml_expr_dup(p, col->dflt);
  if (!c) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.flags = NC_NO_COLUMN | NC_NO_SUBQUERY;
  if (resolve_expr(p, &nc, c) || parse_failed(p)) return;
  expr_code(p, c, target);
}

static int is_rowid_name(const char *z) {
  return !strcasecmp(z, "rowid") || !strcasecmp(z, "oid") || !strcasecmp(z, "_rowid_");
}

/* Affinity string of every column in table order (arena). */
static const char *col_aff_str(Parse *p, const Table *tab) {
  char *z = parse_alloc(p, (size_t)tab->ncol + 1);
  if (!z) return NULL;
  for (int i = 0; i < tab->ncol; i++) z[i] = tab->cols[i].affinity ? tab->cols[i].affinity : AFF_BLOB;
  return z;
}

static int pick_oe(int stmt_oe, int cons_oe) {
  if (stmt_oe) return stmt_oe;
  if (cons_oe) return cons_oe;
  return SQL_OE_ABORT;
}

/* The statement's own OR clause, overridden in a trigger body by the outer
 * statement's (dml_int.h invariant 2). */
/* 1 if a conflict writing tab under the statement's OR clause may be
 * resolved by REPLACE (deleting rows). */
static int may_replace(const Table *tab, int stmt_oe) {
  if (stmt_oe) return stmt_oe == SQL_OE_REPLACE;
  if (tab->pk_conflict == SQL_OE_REPLACE) return 1;
  for (const Index *x = tab->indexes; x; x = x->next)
    if (x->on_conflict == SQL_OE_REPLACE) return 1;
  return 0;
}

static int stmt_oe_of(Parse *p, int own) {
  TrigFrame *f = dml_frame(p);
  if (f && f->oe) return f->oe;
  return own;
}

static void halt_msg(Parse *p, int code, int oe, const char *msg) {
  vm_builder_add_text(&p->b, OP_Halt, code, oe, 0, msg, -1);
}

/* ---------------------------------------------------------------- writer */

typedef struct Writer {
  Parse *p;
  Table *tab;
  int tabcur;
  int nidx;
  Index **idx; /* check order (invariant 4) */
  int *cur;    /* cursor per index (tabcur for a WITHOUT ROWID PK) */
  int *key;    /* new key registers per index (ncol each) */
  int *rec;    /* new key record per index (NULL: partial WHERE false) */
  int *okey;   /* old key registers per index */
  int stmt_oe;
  int zero;    /* holds 0: the rowid operand of a WITHOUT ROWID Insert */
  int vrow;    /* scratch row for REPLACE victims (ncol+1) */
  int vtmp;    /* scratch (ncol+1) */
  int pkreg;   /* WITHOUT ROWID: PRIMARY KEY values (npk) */
  const char *caff;
  /* UPSERT: a conflict on a clause's target (index up_of[i], the rowid
   * up_ipk; any other uniqueness constraint: up_any) goes to that clause's
   * label with the table cursor on the existing row, or to the ignore label
   * for DO NOTHING. -1 = no clause. */
  int nup;
  int *up_of, up_ipk, up_any;
  int *up_nothing, *up_label;
  int up_front; /* the first up_front indexes are UPSERT targets (checked before the rowid) */
  /* UPDATE: per index, 1 when the update cannot change its entry (no key
   * column assigned, rowid/PRIMARY KEY unchanged): its key is not rebuilt,
   * checked, deleted or written, as SQLite skips such indexes. NULL = none
   * kept. REPLACE victims still lose every entry (delete_current). */
  uint8_t *keep;
  /* UPDATE: the columns assigned (NULL: an INSERT, every column is new);
   * NOT NULL and CHECK constraints on other columns alone are not checked,
   * as SQLite skips them. rowid_changed: the rowid is assigned too. */
  const uint8_t *changed;
  int rowid_changed;
  /* foreign keys on: REPLACE victims are deleted with FK checks and actions
   * and counted here; if any was, the REPLACE constraints are checked again
   * afterwards with ABORT (SQLite's "recheck" after replace triggers). 0 =
   * not needed. */
  int trigcnt;
  /* REPLACE: the index (position in idx) whose cursor the conflict check
   * left on the victim's entry, or -1: delete_keys deletes that entry where
   * the cursor is, without a seek */
  int on_victim;
} Writer;

/* Does an (unresolved, schema) expression read a column marked in chg[]
 * (or the rowid when rowid_changed, or a name that is no column)?
 * gen_changed: every generated column counts as changed too. */
typedef struct ChangedRef {
  const Table *tab;
  const uint8_t *chg;
  int rowid_changed, gen_changed;
} ChangedRef;

static int changed_ref_cb(SqlWalker *wk, SqlExpr *e) {
  const ChangedRef *r = wk->arg;
  if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) {
    int j = table_column_index(r->tab, e->z);
    if (j >= 0 ? r->chg[j] || (r->gen_changed && r->tab->cols[j].gen != NULL)
               : (r->rowid_changed || !is_rowid_name(e->z)))
      return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

static int reads_changed(const Table *tab, SqlExpr *e, const uint8_t *chg, int rowid_changed,
                         int gen_changed) {
  if (!e) return 0;
  ChangedRef r = {tab, chg, rowid_changed, gen_changed};
  SqlWalker wk = {changed_ref_cb, NULL, &r};
  return sql_walk_expr(&wk, e) == SQL_WALK_ABORT;
}

/* The columns an UPDATE assigning changed[] (and the rowid when
 * rowid_changed) changes: those, and every generated column computed from a
 * changed one, to a fixpoint (as SQLite marks them). Arena; NULL on OOM. */
static uint8_t *changed_closure(Parse *p, const Table *tab, const uint8_t *changed,
                                int rowid_changed) {
  uint8_t *chg = parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1));
  if (!chg) return NULL;
  memcpy(chg, changed, (size_t)tab->ncol);
  for (int again = tab->has_generated; again;) {
    again = 0;
    for (int j = 0; j < tab->ncol; j++) {
      if (chg[j] || !tab->cols[j].gen) continue;
      if (reads_changed(tab, tab->cols[j].gen, chg, rowid_changed, 0)) chg[j] = again = 1;
    }
  }
  return chg;
}

/* 1 if an UPDATE changing the columns chg[] (changed_closure) may change
 * index x's entry: a key column, a column its expressions or its partial
 * WHERE read (SQLite's rule). The rowid changing is the caller's case. */
static int index_affected(const Index *x, const uint8_t *chg) {
  const Table *tab = x->table;
  if (x->where && reads_changed(tab, x->where, chg, 0, 0)) return 1;
  for (int j = 0; j < x->ncol; j++) {
    int c = x->cols[j].col;
    if (c == INDEX_COL_EXPR ? reads_changed(tab, x->cols[j].expr, chg, 0, 0) : c >= 0 && chg[c])
      return 1;
  }
  return 0;
}

/* Mark the indexes an UPDATE assigning the columns in changed[] leaves
 * alone (Writer.keep): those no changed column feeds (index_affected). A
 * key change and BEFORE triggers (they may rewrite the row) keep nothing. */
static void writer_keep_unchanged(Writer *w, const uint8_t *changed, int key_change, int before) {
  w->keep = NULL;
  if (key_change || before || w->nidx == 0) return;
  for (int c = 0; c < w->tab->ncol; c++)
    if (changed[c] && w->tab->cols[c].pk) return; /* every entry holds the key */
  const uint8_t *chg = changed_closure(w->p, w->tab, changed, 0);
  w->keep = parse_alloc(w->p, (size_t)w->nidx);
  if (!w->keep || !chg) return;
  for (int i = 0; i < w->nidx; i++) {
    const Index *x = w->idx[i];
    w->keep[i] = x != w->tab->pk_index && !index_affected(x, chg);
  }
}

static int kept(const Writer *w, int i) { return w->keep && w->keep[i]; }

/* The UPSERT clause for index i (i < 0: the rowid), or -1. */
static int up_clause(const Writer *w, int i) {
  if (!w->nup) return -1;
  int c = i < 0 ? w->up_ipk : w->up_of[i];
  return c >= 0 ? c : w->up_any;
}

/* Open the writer's cursors: the table's (tabcur < 0; else the caller's
 * cursor tabcur, already open for writing) and every index's. */
static int writer_open(Parse *p, Writer *w, Table *tab, int stmt_oe, int tabcur) {
  memset(w, 0, sizeof *w);
  w->p = p;
  w->tab = tab;
  w->stmt_oe = stmt_oe;
  w->on_victim = -1;
  int n = 0;
  for (Index *x = tab->indexes; x; x = x->next) n++;
  w->nidx = n;
  if (n) {
    w->idx = parse_alloc(p, (size_t)n * sizeof *w->idx);
    w->cur = parse_alloc(p, (size_t)n * sizeof *w->cur);
    w->key = parse_alloc(p, (size_t)n * sizeof *w->key);
    w->rec = parse_alloc(p, (size_t)n * sizeof *w->rec);
    w->okey = parse_alloc(p, (size_t)n * sizeof *w->okey);
    if (!w->idx || !w->cur || !w->key || !w->rec || !w->okey) return 1;
    /* SQLite's list: newest first, REPLACE indexes appended in creation
     * order. */
    Index **all = parse_alloc(p, (size_t)n * sizeof *all);
    if (!all) return 1;
    int k = 0, m = 0;
    for (Index *x = tab->indexes; x; x = x->next) all[k++] = x;
    for (int i = n - 1; i >= 0; i--)
      if (all[i]->on_conflict != SQL_OE_REPLACE) w->idx[m++] = all[i];
    for (int i = 0; i < n; i++)
      if (all[i]->on_conflict == SQL_OE_REPLACE) w->idx[m++] = all[i];
  }
  w->caff = col_aff_str(p, tab);
  parse_need_write(p);
  if (tabcur >= 0) {
    w->tabcur = tabcur;
  } else {
    w->tabcur = emit_cursor(p);
    parse_open_table(p, w->tabcur, tab, 1);
  }
  for (int i = 0; i < n; i++) {
    Index *x = w->idx[i];
    if (x == tab->pk_index) {
      w->cur[i] = w->tabcur;
    } else {
      w->cur[i] = emit_cursor(p);
      parse_open_index(p, w->cur[i], x, 1);
    }
    w->key[i] = emit_regs(p, x->ncol);
    w->okey[i] = emit_regs(p, x->ncol);
    w->rec[i] = emit_regs(p, 1);
  }
  w->zero = emit_regs(p, 1);
  emit(p, OP_Integer, 0, w->zero, 0);
  w->vrow = emit_regs(p, tab->ncol + 1);
  w->vtmp = emit_regs(p, tab->ncol + 1);
  if (tab->without_rowid && tab->npk) w->pkreg = emit_regs(p, tab->npk);
  return parse_failed(p);
}

/* Affinity string of index x's stored key (arena). */
static const char *index_aff(Parse *p, const Index *x, SqlExpr **exprs) {
  char *z = parse_alloc(p, (size_t)x->ncol + 1);
  if (!z) return NULL;
  for (int j = 0; j < x->ncol; j++) {
    int c = x->cols[j].col;
    if (c == INDEX_COL_ROWID)
      z[j] = AFF_INTEGER;
    else if (c == INDEX_COL_EXPR) {
      char a = exprs && exprs[j] ? expr_affinity(exprs[j]) : 0;
      z[j] = a ? a : AFF_BLOB;
    } else
      z[j] = x->table->cols[c].affinity ? x->table->cols[c].affinity : AFF_BLOB;
  }
  return z;
}

/* Key values of index i for the row (rowid, cols) into regs. */
static void build_key_regs(Writer *w, int i, int rowid, int cols, int regs, SqlExpr ***exprs_out) {
  Parse *p = w->p;
  Index *x = w->idx[i];
  SqlExpr **ex = NULL;
  for (int j = 0; j < x->ncol; j++) {
    int c = x->cols[j].col;
    if (c == INDEX_COL_ROWID) {
      emit(p, OP_SCopy, rowid, regs + j, 0);
    } else if (c == INDEX_COL_EXPR) {
      if (!ex) ex = parse_alloc(p, (size_t)x->ncol * sizeof *ex);
      if (!ex) return;
      ex[j] = row_expr(p, w->tab, x->cols[j].expr, rowid, cols, NC_IS_INDEX | NC_NO_SUBQUERY,
                       "index expressions");
      if (!ex[j]) return;
      expr_code(p, ex[j], regs + j);
    } else {
      emit(p, OP_SCopy, cols + c, regs + j, 0);
    }
  }
  if (exprs_out) *exprs_out = ex;
}

/* New key and record of every index for the row (rowid, cols); a partial
 * index whose WHERE fails gets a NULL record. */
static void build_new_keys(Writer *w, int rowid, int cols) {
  Parse *p = w->p;
  for (int i = 0; i < w->nidx && !parse_failed(p); i++) {
    Index *x = w->idx[i];
    int skip = 0, done = 0;
    if (kept(w, i)) continue;
    if (x->where) {
      SqlExpr *e = row_expr(p, w->tab, x->where, rowid, cols, NC_IS_PARTIAL | NC_NO_SUBQUERY,
                            "index expressions");
      if (!e) return;
      skip = emit_label(p);
      done = emit_label(p);
      expr_if_false(p, e, skip, 1);
    }
    SqlExpr **ex = NULL;
    build_key_regs(w, i, rowid, cols, w->key[i], &ex);
    const char *aff = index_aff(p, x, ex);
    if (!aff) return;
    vm_builder_add_text(&p->b, OP_MakeRecord, w->key[i], x->ncol, w->rec[i], aff, -1);
    if (skip) {
      emit(p, OP_Goto, 0, done, 0);
      emit_resolve(p, skip);
      emit(p, OP_Null, 0, w->rec[i], 0);
      emit_resolve(p, done);
    }
  }
}

/* Delete the index entries of the row (rowid, cols); WITHOUT ROWID: also
 * the row itself when with_pk (its PK index entry is the row). */
static void delete_keys(Writer *w, int rowid, int cols, int with_pk) {
  Parse *p = w->p;
  for (int i = 0; i < w->nidx && !parse_failed(p); i++) {
    Index *x = w->idx[i];
    if ((x == w->tab->pk_index && !with_pk) || kept(w, i)) continue;
    build_key_regs(w, i, rowid, cols, w->okey[i], NULL);
    /* the PK entry of a WITHOUT ROWID table is found by its PK alone: a row
     * written before ALTER TABLE ADD COLUMN has fewer fields than ncol */
    int nk = (x == w->tab->pk_index && w->tab->without_rowid) ? w->tab->npk : x->ncol;
    if (i == w->on_victim) {
      emit(p, OP_Delete, w->cur[i], 0, 0); /* the cursor is on the entry */
      continue;
    }
    emit(p, OP_IdxDelete, w->cur[i], w->okey[i], nk);
  }
}

/* Read the row tabcur is on into dst (ncol+1 registers, deep copies). */
static void read_row(Writer *w, int dst) {
  Parse *p = w->p;
  Table *tab = w->tab;
  int t = w->vtmp;
  if (tab->without_rowid)
    emit(p, OP_Null, 0, t, 0);
  else
    emit(p, OP_Rowid, w->tabcur, t, 0);
  for (int j = 0; j < tab->ncol; j++) code_column(p, tab, w->tabcur, j, t + 1 + j);
  emit(p, OP_Copy, t, dst, tab->ncol);
}

typedef struct ColUse {
  const Table *tab;
  uint8_t *mask; /* ncol: 1 for each column named */
  int unknown;   /* a name that is no column (nor the rowid) */
} ColUse;

static int col_use_cb(SqlWalker *wk, SqlExpr *e) {
  ColUse *u = wk->arg;
  if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) {
    int j = table_column_index(u->tab, e->z);
    if (j >= 0)
      u->mask[j] = 1;
    else if (!is_rowid_name(e->z))
      u->unknown = 1;
  }
  return SQL_WALK_CONTINUE;
}

/* Read into dst (ncol+1 registers) the rowid and the columns the index
 * entries of the row tabcur is on are built from (key columns, the columns
 * expressions and partial WHEREs name): a DELETE with no trigger, foreign
 * key or RETURNING needs no other. The values are borrowed from the row:
 * valid until the table cursor moves or writes (only index writes come
 * before the row's own delete). */
static void read_index_cols(Writer *w, int dst) {
  Parse *p = w->p;
  Table *tab = w->tab;
  if (w->nidx == 0) return;
  uint8_t *mask = parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1));
  if (!mask) return;
  ColUse u = {tab, mask, 0};
  SqlWalker wk = {col_use_cb, NULL, &u};
  for (int i = 0; i < w->nidx; i++) {
    const Index *x = w->idx[i];
    if (x == tab->pk_index) continue; /* the row itself (delete_keys skips it) */
    if (x->where) sql_walk_expr(&wk, x->where);
    for (int j = 0; j < x->ncol; j++) {
      int c = x->cols[j].col;
      if (c == INDEX_COL_EXPR)
        sql_walk_expr(&wk, x->cols[j].expr);
      else if (c >= 0)
        mask[c] = 1;
    }
  }
  if (tab->without_rowid)
    emit(p, OP_Null, 0, dst, 0);
  else
    emit(p, OP_Rowid, w->tabcur, dst, 0);
  for (int j = 0; j < tab->ncol; j++)
    if (mask[j] || u.unknown) code_column(p, tab, w->tabcur, j, dst + 1 + j);
}

/* Before an UPDATE writes the row: AFTER UPDATE triggers read the new
 * values afterwards, and a SET value read from the row itself (`c = CASE
 * ... t.c ...`) still points into the record the write moves: deep copies
 * into scratch registers, borrowed back (valid for this row). */
static void own_new_row(Parse *p, Table *tab, int cols) {
  if (!trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER)) return;
  int tmp = emit_regs(p, tab->ncol);
  emit(p, OP_Copy, cols, tmp, tab->ncol - 1);
  for (int j = 0; j < tab->ncol; j++) emit(p, OP_SCopy, tmp + j, cols + j, 0);
}

static void read_index_cols(Writer *w, int dst);

/* Delete the row tabcur is on (REPLACE victims): index entries, then the
 * row. count: counts as a change. keep_row: only the index entries go, the
 * row is left for the Insert of the new row with the same rowid to
 * overwrite (the caller knows that Insert follows). */
static void delete_current(Writer *w, int count, int keep_row) {
  Parse *p = w->p;
  uint8_t *keep = w->keep;
  w->keep = NULL; /* a victim loses every index entry */
  int fk = fk_required(p, w->tab, NULL, 0); /* a victim is deleted as by DELETE (FK) */
  if (fk || w->tab->without_rowid) {
    read_row(w, w->vrow);
  } else {
    read_index_cols(w, w->vrow); /* only its index entries need its values */
    delete_keys(w, w->vrow, w->vrow + 1, 0);
    /* keep_row: a no-op Delete, so that the preupdate hook still sees the
     * victim go (SQLite's OPFLAG_ISNOOP) */
    int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, w->tab->name, -1);
    if (keep_row) vm_builder_set_p5(&p->b, a, VM_OPFLAG_ISNOOP);
    else if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    w->keep = keep;
    return;
  }
  if (fk) fk_check(p, w->tab, w->vrow, 0, NULL, 0);
  if (fk && w->trigcnt) emit(p, OP_AddImm, w->trigcnt, 1, 0);
  if (w->tab->without_rowid) {
    /* the PK entry is the row: reposition on it by its full key, delete */
    delete_keys(w, w->vrow, w->vrow + 1, 0);
    int i = 0;
    while (i < w->nidx && w->idx[i] != w->tab->pk_index) i++;
    if (i == w->nidx) {
      w->keep = keep;
      return;
    }
    int skip = emit_label(p);
    build_key_regs(w, i, w->vrow, w->vrow + 1, w->okey[i], NULL);
    vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, skip, w->okey[i], w->tab->npk);
    int a = emit(p, OP_Delete, w->tabcur, 0, 0);
    if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    emit_resolve(p, skip);
    if (fk) fk_actions(p, w->tab, w->vrow, 0, NULL, 0);
  } else {
    delete_keys(w, w->vrow, w->vrow + 1, 0);
    int skip = emit_label(p);
    emit(p, OP_NotExists, w->tabcur, skip, w->vrow);
    int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, w->tab->name, -1);
    if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    emit_resolve(p, skip);
    if (fk) fk_actions(p, w->tab, w->vrow, 0, NULL, 0);
  }
  w->keep = keep;
}

static const char *unique_msg(Parse *p, const Index *x) {
  char buf[1024];
  size_t n = 0;
  buf[0] = 0;
  for (int j = 0; j < x->nkey; j++) {
    if (x->cols[j].col == INDEX_COL_EXPR) {
      snprintf(buf, sizeof buf, "UNIQUE constraint failed: index '%s'", x->name);
      return parse_strdup(p, buf);
    }
  }
  n = (size_t)snprintf(buf, sizeof buf, "UNIQUE constraint failed: ");
  for (int j = 0; j < x->nkey && n < sizeof buf; j++) {
    int c = x->cols[j].col;
    const char *cn = c >= 0 ? x->table->cols[c].name : "rowid";
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s.%s", j ? ", " : "", x->table->name, cn);
  }
  return parse_strdup(p, buf);
}

/* STRICT tables: each column's declared type, after affinity. Always an
 * abort (OR IGNORE / OR REPLACE do not apply); generated columns are not
 * checked. As SQLite, it runs where the table's affinity is applied: before
 * the CHECK constraints when there are some, else after the rowid conflict
 * check and before the UNIQUE indexes. */
static void check_types(Writer *w, int cols) {
  Table *tab = w->tab;
  char buf[512];
  for (int j = 0; tab->strict && j < tab->ncol; j++) {
    Column *c = &tab->cols[j];
    if (j == tab->rowid_alias || c->gen || !c->type) continue;
    static const char *const names[] = {"INT", "INTEGER", "REAL", "TEXT", "BLOB"};
    static const int codes[] = {1, 1, 2, 3, 4};
    for (int k = 0; k < 5; k++) {
      if (util_stricmp(c->type, names[k]) != 0) continue;
      snprintf(buf, sizeof buf, "%s column %s.%s", names[k], tab->name, c->name);
      vm_builder_add_text(&w->p->b, OP_TypeCheck, cols + j, codes[k], 0, buf, -1);
      break;
    }
  }
}

static void code_generated(Parse *p, Table *tab, int rowid, int cols);

/* A STRICT table with generated columns has its (other) columns' types
 * checked before everything else: SQLite checks them where it would apply
 * their affinity before computing the generated columns. */
static int types_early(const Table *tab) {
  for (int j = 0; tab->strict && j < tab->ncol; j++)
    if (tab->cols[j].gen) return 1;
  return 0;
}

/* Checks for the new row (rowid, cols) before any write: check_row (NOT
 * NULL, CHECK; may put a default in place: before the keys are built), then
 * check_unique (after build_new_keys).
 *   old:        UPDATE: the old row (ncol+1 registers), else 0
 *   rowid_chk:  the rowid is given (INSERT with an INTEGER PRIMARY KEY value,
 *               UPDATE of the rowid): check it is free
 *   ignore:     where OR IGNORE goes (skip the row) */
/* Does CHECK expression e read a column the UPDATE assigns (or a generated
 * column, or a name it cannot place)? Always 1 for an INSERT. */
static int check_reads_changed(const Writer *w, SqlExpr *e) {
  if (!w->changed) return 1;
  return reads_changed(w->tab, e, w->changed, w->rowid_changed, 1);
}

static void check_row(Writer *w, int rowid, int cols, int ignore) {
  Parse *p = w->p;
  Table *tab = w->tab;
  char buf[512];
  int early = types_early(tab);
  if (early) check_types(w, cols);
  int replaced = 0; /* a NOT NULL column may get its default: generated ones again */
  /* NOT NULL */
  for (int j = 0; j < tab->ncol; j++) {
    Column *c = &tab->cols[j];
    if (!c->notnull || j == tab->rowid_alias) continue;
    if (w->changed && !w->changed[j] && !c->gen) continue; /* UPDATE leaves it */
    int oe = pick_oe(w->stmt_oe, c->notnull_conflict);
    if (oe == SQL_OE_REPLACE && !c->dflt) oe = SQL_OE_ABORT;
    snprintf(buf, sizeof buf, "NOT NULL constraint failed: %s.%s", tab->name, c->name);
    if (oe == SQL_OE_IGNORE) {
      emit(p, OP_IsNull, cols + j, ignore, 0);
    } else if (oe == SQL_OE_REPLACE) {
      int ok = emit_label(p);
      replaced = 1;
      emit(p, OP_NotNull, cols + j, ok, 0);
      code_default(p, c, cols + j);
      vm_builder_add_text(&p->b, OP_Affinity, cols + j, 1, 0, w->caff + j, 1);
      /* a NULL default still fails; as in SQLite this check also makes the
       * statement one that may abort (its statement journal, compile.c) */
      vm_builder_add_text(&p->b, OP_HaltIfNull, SHALE_CONSTRAINT_NOTNULL, SQL_OE_ABORT, cols + j,
                          buf, -1);
      emit_resolve(p, ok);
    } else {
      vm_builder_add_text(&p->b, OP_HaltIfNull, SHALE_CONSTRAINT_NOTNULL, oe, cols + j, buf, -1);
    }
  }
  if (replaced) code_generated(p, tab, rowid, cols); /* as SQLite: over the defaults */
  if (tab->ncheck > 0 && !early) check_types(w, cols);
  /* CHECK (none under PRAGMA ignore_check_constraints) */
  for (int k = 0; k < tab->ncheck && !parse_failed(p) && !(p->env && p->env->ignore_checks); k++) {
    Check *ck = &tab->checks[k];
    if (!check_reads_changed(w, ck->expr)) continue;
    SqlExpr *e = row_expr(p, tab, ck->expr, rowid, cols, NC_IS_CHECK | NC_NO_SUBQUERY,
                          "CHECK constraints");
    if (!e) return;
    int oe = pick_oe(w->stmt_oe, 0);
    if (oe == SQL_OE_REPLACE) oe = SQL_OE_ABORT;
    int ok = emit_label(p);
    expr_if_true(p, e, ok, 1);
    if (oe == SQL_OE_IGNORE) {
      emit(p, OP_Goto, 0, ignore, 0);
    } else {
      snprintf(buf, sizeof buf, "CHECK constraint failed: %s",
               ck->name ? ck->name : ck->sql ? ck->sql : "");
      halt_msg(p, SHALE_CONSTRAINT_CHECK, oe, buf);
    }
    emit_resolve(p, ok);
  }
}

/* Uniqueness checks for the new row (keys built by build_new_keys). */
/* After REPLACE victims were deleted with FK actions (w->trigcnt > 0), the
 * REPLACE constraints must hold again (the actions may have written rows):
 * otherwise ABORT, as SQLite. */
static void recheck_replaced(Writer *w, int rowid, int old, int rowid_chk) {
  Parse *p = w->p;
  Table *tab = w->tab;
  char buf[512];
  int done = emit_label(p);
  emit(p, OP_IfNot, w->trigcnt, done, 0);
  if (rowid_chk && !tab->without_rowid &&
      pick_oe(w->stmt_oe, tab->pk_conflict) == SQL_OE_REPLACE && up_clause(w, -1) < 0) {
    int ok = emit_label(p);
    if (old) emit(p, OP_Eq, old, ok, rowid);
    emit(p, OP_NotExists, w->tabcur, ok, rowid);
    const char *cn = tab->rowid_alias >= 0 ? tab->cols[tab->rowid_alias].name : "rowid";
    snprintf(buf, sizeof buf, "UNIQUE constraint failed: %s.%s", tab->name, cn);
    halt_msg(p, SHALE_CONSTRAINT_PRIMARYKEY, SQL_OE_ABORT, buf);
    emit_resolve(p, ok);
  }
  for (int i = 0; i < w->nidx; i++) {
    Index *x = w->idx[i];
    if (!x->unique || kept(w, i) || (x == tab->pk_index && w->keep) || up_clause(w, i) >= 0)
      continue;
    if (pick_oe(w->stmt_oe, x->on_conflict) != SQL_OE_REPLACE) continue;
    int ok = emit_label(p);
    emit(p, OP_IsNull, w->rec[i], ok, 0);
    vm_builder_add_i4(&p->b, OP_NoConflict, w->cur[i], ok, w->key[i], x->nkey);
    if (old && !tab->without_rowid) {
      int t = emit_regs(p, 1);
      emit(p, OP_IdxRowid, w->cur[i], t, 0);
      emit(p, OP_Eq, old, ok, t);
    }
    const char *msg = unique_msg(p, x);
    if (!msg) return;
    halt_msg(p, x->origin == INDEX_ORIGIN_PK ? SHALE_CONSTRAINT_PRIMARYKEY : SHALE_CONSTRAINT_UNIQUE,
             SQL_OE_ABORT, msg);
    emit_resolve(p, ok);
  }
  emit_resolve(p, done);
}

static void check_unique(Writer *w, int rowid, int cols, int old, int rowid_chk, int ignore) {
  Parse *p = w->p;
  Table *tab = w->tab;
  char buf[512];
  if (parse_failed(p)) return;
  if (w->trigcnt) emit(p, OP_Integer, 0, w->trigcnt, 0);
  /* rowid conflict (deferred after the indexes when the table's own
   * REPLACE rule applies and other constraints may say otherwise) */
  int ipk_oe = pick_oe(w->stmt_oe, tab->pk_conflict);
  int defer = rowid_chk && ipk_oe == SQL_OE_REPLACE && w->stmt_oe != SQL_OE_REPLACE && w->nidx &&
              up_clause(w, -1) < 0;
  int do_rowid = rowid_chk && !tab->without_rowid;
  /* where the rowid is checked among the indexes: first; after the UPSERT
   * target indexes (moved to the front) when the rowid is no target; last
   * when deferred */
  int at = -1;
  if (do_rowid && defer) {
    at = w->nidx;
  } else if (do_rowid) { /* UPSERT targets go in clause order, the rowid too */
    at = 0;
    while (at < w->up_front && (w->up_ipk < 0 || w->up_of[at] < w->up_ipk)) at++;
  }
  /* A rowid REPLACE deletes its victim: STRICT type errors are raised
   * before that, so a failing row never costs the row it would replace
   * (SQLite 3.40 raises them after the delete, which there only removes
   * index entries; the rows seen are the same). */
  int types_first = do_rowid && ipk_oe == SQL_OE_REPLACE && up_clause(w, -1) < 0;
  if (types_early(tab)) types_first = 1; /* done by check_row */
  else if (types_first && tab->ncheck == 0) check_types(w, cols);
  for (int i = 0; i <= w->nidx && !parse_failed(p); i++) {
    if (i == at) {
      int ok = emit_label(p);
      if (old) emit(p, OP_Eq, old, ok, rowid);
      emit(p, OP_NotExists, w->tabcur, ok, rowid);
      int uc = up_clause(w, -1);
      if (uc >= 0) {
        emit(p, OP_Goto, 0, w->up_nothing[uc] ? ignore : w->up_label[uc], 0);
      } else if (ipk_oe == SQL_OE_REPLACE) {
        /* the victim's index entries go before the new row is checked
         * against the indexes: SQLite's sqlite3MultiWrite. An INSERT whose
         * later checks can only replace (or come before) writes the new row
         * over the victim: its record need not be deleted first. */
        if (w->nidx) p->multi_write = 1;
        int last = !old && !w->nup && (i == w->nidx || w->stmt_oe == SQL_OE_REPLACE);
        delete_current(w, 0, last);
      } else if (ipk_oe == SQL_OE_IGNORE) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else {
        const char *cn = tab->rowid_alias >= 0 ? tab->cols[tab->rowid_alias].name : "rowid";
        snprintf(buf, sizeof buf, "UNIQUE constraint failed: %s.%s", tab->name, cn);
        halt_msg(p, SHALE_CONSTRAINT_PRIMARYKEY, ipk_oe, buf);
      }
      emit_resolve(p, ok);
    }
    if (i == 0 && tab->ncheck == 0 && !types_first) check_types(w, cols);
    if (i == w->nidx) break;
    /* UNIQUE index i */
    {
      Index *x = w->idx[i];
      if (!x->unique || kept(w, i)) continue;
      if (x == tab->pk_index && w->keep) continue; /* UPDATE keeping the PRIMARY KEY */
      int oe = pick_oe(w->stmt_oe, x->on_conflict);
      int ok = emit_label(p);
      emit(p, OP_IsNull, w->rec[i], ok, 0);
      vm_builder_add_i4(&p->b, OP_NoConflict, w->cur[i], ok, w->key[i], x->nkey);
      if (old) {
        /* the row's own entry is no conflict */
        if (!tab->without_rowid) {
          int t = emit_regs(p, 1);
          emit(p, OP_IdxRowid, w->cur[i], t, 0);
          emit(p, OP_Eq, old, ok, t);
        } else {
          Index *pk = tab->pk_index;
          int diff = emit_label(p), t = emit_regs(p, 1);
          for (int j = 0; j < pk->nkey; j++) {
            int pc = pk->cols[j].col, pos = -1;
            for (int k = 0; k < x->ncol; k++)
              if (x->cols[k].col == pc) {
                pos = k;
                break;
              }
            if (pos < 0) continue;
            emit(p, OP_Column, w->cur[i], pos, t);
            emit(p, OP_Ne, old + 1 + pc, diff, t);
          }
          emit(p, OP_Goto, 0, ok, 0);
          emit_resolve(p, diff);
        }
      }
      int uc = up_clause(w, i);
      if (uc >= 0 && w->up_nothing[uc]) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else if (uc >= 0) {
        /* put the table cursor on the existing row, then DO UPDATE */
        if (tab->without_rowid) {
          if (x != tab->pk_index) {
            Index *pk = tab->pk_index;
            for (int j = 0; j < pk->nkey; j++) {
              int pc = pk->cols[j].col, pos = 0;
              for (int k = 0; k < x->ncol; k++)
                if (x->cols[k].col == pc) {
                  pos = k;
                  break;
                }
              emit(p, OP_Column, w->cur[i], pos, w->pkreg + j);
            }
            vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, ignore, w->pkreg, pk->nkey);
          }
        } else {
          int t = emit_regs(p, 1);
          emit(p, OP_IdxRowid, w->cur[i], t, 0);
          emit(p, OP_NotExists, w->tabcur, ignore, t);
        }
        emit(p, OP_Goto, 0, w->up_label[uc], 0);
      } else if (oe == SQL_OE_REPLACE) {
        if (tab->without_rowid) {
          if (x != tab->pk_index) {
            Index *pk = tab->pk_index;
            int skip = emit_label(p);
            for (int j = 0; j < pk->nkey; j++) {
              int pc = pk->cols[j].col, pos = 0;
              for (int k = 0; k < x->ncol; k++)
                if (x->cols[k].col == pc) {
                  pos = k;
                  break;
                }
              emit(p, OP_Column, w->cur[i], pos, w->pkreg + j);
            }
            vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, skip, w->pkreg, pk->nkey);
            delete_current(w, 0, 0);
            emit_resolve(p, skip);
          } else {
            delete_current(w, 0, 0);
          }
        } else {
          int skip = emit_label(p), t = emit_regs(p, 1);
          emit(p, OP_IdxRowid, w->cur[i], t, 0);
          emit(p, OP_NotExists, w->tabcur, skip, t);
          /* nothing moves cursor i before the victim's entries go (foreign
           * key checks might: then it is found again by its key) */
          if (!fk_required(p, tab, NULL, 0)) w->on_victim = i;
          delete_current(w, 0, 0);
          w->on_victim = -1;
          emit_resolve(p, skip);
        }
      } else if (oe == SQL_OE_IGNORE) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else {
        const char *msg = unique_msg(p, x);
        if (!msg) return;
        halt_msg(p, x->origin == INDEX_ORIGIN_PK ? SHALE_CONSTRAINT_PRIMARYKEY
                                                 : SHALE_CONSTRAINT_UNIQUE,
                 oe, msg);
      }
      emit_resolve(p, ok);
    }
  }
  if (w->trigcnt) recheck_replaced(w, rowid, old, rowid_chk);
}

/* Insert record rec as rowid into the table (a counted change).
 * lastrowid = 0: an UPDATE (or upsert) writing the row (the update hook
 * says so). */
static void insert_record(Writer *w, int rec, int rowid, int lastrowid) {
  Parse *p = w->p;
  int a = vm_builder_add_text(&p->b, OP_Insert, w->tabcur, rec, rowid, w->tab->name, -1);
  vm_builder_set_p5(&p->b, a,
                    VM_OPFLAG_NCHANGE | (lastrowid ? VM_OPFLAG_LASTROWID : VM_OPFLAG_ISUPDATE));
}

/* Write the new row: index entries, then the record. lastrowid: INSERT. */
static void write_row(Writer *w, int rowid, int cols, int lastrowid) {
  Parse *p = w->p;
  Table *tab = w->tab;
  int pkrec = 0;
  for (int i = 0; i < w->nidx; i++) {
    if (w->idx[i] == tab->pk_index) {
      pkrec = w->rec[i];
      continue;
    }
    if (kept(w, i)) continue;
    int skip = emit_label(p);
    emit(p, OP_IsNull, w->rec[i], skip, 0);
    emit(p, OP_IdxInsert, w->cur[i], w->rec[i], 0);
    emit_resolve(p, skip);
  }
  if (tab->without_rowid) {
    int a = emit(p, OP_Insert, w->tabcur, pkrec, w->zero);
    vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    return;
  }
  int n = tab->nstored;
  int in_place = n == tab->ncol && n > 0; /* every column in its own slot, in order */
  for (int j = 0; j < tab->ncol && in_place; j++) in_place = tab->cols[j].storage == j;
  if (in_place) {
    /* the record straight from the row's registers: the rowid alias is
     * stored as NULL, its register gets the rowid back afterwards */
    if (tab->rowid_alias >= 0) emit(p, OP_Null, 0, cols + tab->rowid_alias, 0);
    int rec = emit_regs(p, 1);
    vm_builder_add_text(&p->b, OP_MakeRecord, cols, n, rec, w->caff, n);
    if (tab->rowid_alias >= 0) emit(p, OP_SCopy, rowid, cols + tab->rowid_alias, 0);
    insert_record(w, rec, rowid, lastrowid);
    return;
  }
  int base = emit_regs(p, n > 0 ? n : 1);
  char *aff = parse_alloc(p, (size_t)n + 1);
  if (!aff) return;
  for (int j = 0; j < tab->ncol; j++) {
    int s = tab->cols[j].storage;
    if (s < 0 || s >= n) continue;
    aff[s] = w->caff[j];
    if (j == tab->rowid_alias)
      emit(p, OP_Null, 0, base + s, 0);
    else
      emit(p, OP_SCopy, cols + j, base + s, 0);
  }
  for (int s = 0; s < n; s++)
    if (!aff[s]) aff[s] = AFF_BLOB;
  int rec = emit_regs(p, 1);
  vm_builder_add_text(&p->b, OP_MakeRecord, base, n, rec, aff, -1);
  insert_record(w, rec, rowid, lastrowid);
}

/* Generated columns of the row (after the others are known). */
static void code_generated(Parse *p, Table *tab, int rowid, int cols) {
  if (!tab->has_generated) return;
  for (int j = 0; j < tab->ncol && !parse_failed(p); j++) {
    Column *c = &tab->cols[j];
    if (!c->gen) continue;
    SqlExpr *e = row_expr(p, tab, c->gen, rowid, cols, NC_IS_GENCOL | NC_NO_SUBQUERY,
                          "generated columns");
    if (!e) return;
    expr_code(p, e, cols + j);
    char a = c->affinity ? c->affinity : AFF_BLOB;
    vm_builder_add_text(&p->b, OP_Affinity, cols + j, 1, 0, &a, 1);
  }
}

static void reseek_row(Parse *p, Writer *w, int old, int next);

/* WITH on UPDATE/DELETE: the CTEs are given to every outermost subquery of
 * the statement's expressions (their scope), before resolution. */
static int with_select_cb(SqlWalker *w, SqlSelect *sel) {
  if (!sel->with) sel->with = (SqlWith *)w->arg;
  return SQL_WALK_PRUNE;
}
static int with_expr_cb(SqlWalker *w, SqlExpr *e) {
  (void)w;
  (void)e;
  return SQL_WALK_CONTINUE;
}
static void attach_with(SqlWith *with, SqlExpr *e) {
  SqlWalker w = {with_expr_cb, with_select_cb, with};
  if (with && e) sql_walk_expr(&w, e);
}
static void attach_with_list(SqlWith *with, SqlExprList *l) {
  for (int i = 0; with && l && i < l->n; i++) attach_with(with, l->a[i].expr);
}

/* ---------------------------------------------------------------- lookup */

static Table *dml_table(Parse *p, const char *schema, const char *name, View **view) {
  *view = NULL;
  if (schema && (parse_find_db(p, schema) < 0 || parse_find_db(p, schema) != p->idb)) {
    parse_error(p, "no such table: %s.%s", schema, name);
    return NULL;
  }
  Table *t = schema_find_table(p->schema, name);
  if (t) {
    if (t->is_schema && !(p->env && p->env->writable_schema)) {
      parse_error(p, "table %s may not be modified", "sqlite_master");
      return NULL;
    }
    return t->vtab_module ? parse_vtab_connect(p, t, p->idb) : t; /* compile_vtab_dml.c */
  }
  View *v = schema_find_view(p->schema, name);
  if (v) {
    *view = v;
    return NULL;
  }
  if (schema)
    parse_error(p, "no such table: %s.%s", schema, name);
  else
    parse_error(p, "no such table: %s", name);
  return NULL;
}

/* A view's Table (for INSTEAD OF triggers) and its SELECT, or NULL when it
 * has no INSTEAD OF trigger for op ("cannot modify v because it is a
 * view"). */
static SrcList *view_src(Parse *p, View *v, int op, const char *alias) {
  Table fake;
  memset(&fake, 0, sizeof fake);
  fake.name = v->name;
  if (!trigger_exists(p, &fake, op, TRIGGER_INSTEAD_OF)) {
    parse_error(p, "cannot modify %s because it is a view", v->name);
    return NULL;
  }
  SqlSrcList *sl = parse_alloc(p, sizeof *sl);
  SqlSrcItem *it = parse_alloc(p, sizeof *it);
  if (!sl || !it) return NULL;
  it->name = v->name;
  it->alias = alias;
  sl->n = sl->cap = 1;
  sl->a = it;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  trig_nc(p, &nc);
  SrcList *src = src_from_ast(p, sl, p->nested ? &nc : NULL);
  if (!src || src->n != 1 || parse_failed(p)) return NULL;
  return src;
}

static Table *view_table(Parse *p, View *v, int op) {
  SrcList *src = view_src(p, v, op, NULL);
  return src ? src->a[0].tab : NULL;
}

/* UPDATE (set != NULL) or DELETE of a view: its INSTEAD OF triggers run for
 * every row the WHERE selects. The rows (old values, then new ones) are
 * collected into an ephemeral table first: the triggers may change the
 * tables the view reads. */
/* A SET list (name = expr, (a, b) = (x, y)) of a view's UPDATE or an
 * UPSERT's DO UPDATE: each value duplicated and resolved in nc, into
 * set[column] with changed[column] = 1. 1 after parse_error. */
static int set_list_resolve(Parse *p, const SqlExprList *setl, Table *tab, NameCtx *nc,
                            SqlExpr **set, uint8_t *changed) {
  for (int i = 0; i < setl->n; i++) {
    SqlExprItem *it = &setl->a[i];
    int nn = it->nnames > 0 ? it->nnames : 1;
    for (int k = 0; k < nn; k++) {
      const char *nm = it->nnames > 0 ? it->names[k] : it->name;
      SqlExpr *e = it->expr;
      if (it->nnames > 0) {
        if (e->op != SQL_E_ROW || !e->list || e->list->n != it->nnames) {
          parse_error(p, "%d columns assigned %d values", it->nnames,
                      e->op == SQL_E_ROW && e->list ? e->list->n : 1);
          return 1;
        }
        e = e->list->a[k].expr;
      }
      int j = table_column_index(tab, nm);
      if (j < 0) {
        parse_error(p, "no such column: %s", nm);
        return 1;
      }
      e = dml_expr_dup(p, e);
      if (!e || resolve_expr(p, nc, e) || parse_failed(p)) return 1;
      set[j] = e;
      changed[j] = 1;
    }
  }
  return 0;
}

static int view_dml(Parse *p, View *v, int op, const char *alias, const SqlExprList *setl,
                    const SqlExpr *where_ast, int stmt_oe) {
  SrcList *src = view_src(p, v, op, alias);
  if (!src) return 1;
  Table *vt = src->a[0].tab;
  int ncol = vt->ncol;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  trig_nc(p, &nc);
  SqlExpr **set = NULL;
  uint8_t *changed = NULL;
  if (setl) {
    set = parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *set);
    changed = parse_alloc(p, (size_t)(ncol ? ncol : 1));
    if (!set || !changed) return 1;
    if (set_list_resolve(p, setl, vt, &nc, set, changed)) return 1;
  }
  SqlExpr *where = dml_expr_dup(p, where_ast);
  if (where && (resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  int nrec = setl ? 2 * ncol : ncol;
  int eph = emit_cursor(p), vals = emit_regs(p, nrec > 0 ? nrec : 1), rec = emit_regs(p, 1),
      rid = emit_regs(p, 1);
  emit(p, OP_OpenEphemeral, eph, nrec, 0);
  WhereInfo *wi = where_begin(p, src, where, NULL, 0);
  if (!wi) return 1;
  int cur = src->a[0].cursor;
  for (int j = 0; j < ncol; j++) code_column(p, vt, cur, j, vals + j);
  for (int j = 0; setl && j < ncol; j++) {
    if (set[j])
      expr_code(p, set[j], vals + ncol + j);
    else
      emit(p, OP_SCopy, vals + j, vals + ncol + j, 0);
  }
  emit(p, OP_MakeRecord, vals, nrec, rec);
  emit(p, OP_NewRowid, eph, rid, 0);
  emit(p, OP_Insert, eph, rec, rid);
  where_end(wi);
  int old = emit_regs(p, ncol + 1), nw = setl ? emit_regs(p, ncol + 1) : 0;
  int done = emit_label(p), top = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, eph, done, 0);
  emit_resolve(p, top);
  emit(p, OP_Null, 0, old, 0);
  for (int j = 0; j < ncol; j++) emit(p, OP_Column, eph, j, old + 1 + j);
  if (setl) {
    emit(p, OP_Null, 0, nw, 0);
    for (int j = 0; j < ncol; j++) emit(p, OP_Column, eph, ncol + j, nw + 1 + j);
  }
  trigger_code(p, vt, op, TRIGGER_INSTEAD_OF, changed, old, nw, stmt_oe, next);
  emit_resolve(p, next);
  emit(p, OP_Next, eph, top, 0);
  emit_resolve(p, done);
  return parse_failed(p);
}

/* ------------------------------------------------------------- RETURNING */

/* RETURNING: the list resolved against the table (cursor), rows buffered in
 * ephemeral table eph during the statement and returned after it, as
 * SQLite does. */
typedef struct Returning {
  SqlExprList *list;
  int cursor, eph, vals, n;
} Returning;

static int returning_setup(Parse *p, Table *tab, const char *alias, const SqlExprList *ast,
                           Returning *r) {
  memset(r, 0, sizeof *r);
  if (!ast) return 0;
  int n = 0;
  for (int i = 0; i < ast->n; i++)
    n += ast->a[i].expr->op == SQL_E_STAR ? tab->ncol : 1;
  SqlExprList *l = parse_alloc(p, sizeof *l);
  if (!l) return 1;
  l->a = parse_alloc(p, (size_t)(n ? n : 1) * sizeof *l->a);
  if (!l->a) return 1;
  l->cap = n;
  for (int i = 0; i < ast->n; i++) {
    const SqlExprItem *it = &ast->a[i];
    if (it->expr->op == SQL_E_STAR) {
      if (it->expr->table && strcasecmp(it->expr->table, alias ? alias : tab->name) != 0) {
        parse_error(p, "no such table: %s", it->expr->table);
        return 1;
      }
      for (int j = 0; j < tab->ncol; j++) {
        SqlExpr *e = parse_alloc(p, sizeof *e);
        if (!e) return 1;
        e->op = SQL_E_ID;
        e->z = tab->cols[j].name;
        e->height = 1;
        l->a[l->n].expr = e;
        l->a[l->n].name = tab->cols[j].name;
        l->n++;
      }
    } else {
      l->a[l->n] = *it;
      l->a[l->n].expr = dml_expr_dup(p, it->expr);
      if (!l->a[l->n].expr) return 1;
      if (!it->name) {
        const SqlExpr *e = it->expr;
        if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) {
          int j = table_column_index(tab, e->z);
          l->a[l->n].name = j >= 0 ? tab->cols[j].name : e->z;
        } else {
          char *z = parse_alloc(p, (size_t)it->span.len + 1);
          if (!z) return 1;
          memcpy(z, p->sql + it->span.start, (size_t)it->span.len);
          l->a[l->n].name = z;
        }
      }
      l->n++;
    }
  }
  SrcList *src = src_single(p, tab, alias);
  if (!src) return 1;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  if (resolve_list(p, &nc, l) || parse_failed(p)) return 1;
  r->list = l;
  r->n = l->n;
  r->cursor = src->a[0].cursor;
  r->eph = emit_cursor(p);
  r->vals = emit_regs(p, r->n);
  emit(p, OP_OpenEphemeral, r->eph, r->n, 0);
  if (!p->nested) {
    p->cols = parse_alloc(p, (size_t)r->n * sizeof *p->cols);
    if (!p->cols) return 1;
    for (int i = 0; i < r->n; i++) p->cols[i].name = l->a[i].name;
    p->ncol = r->n;
  }
  return 0;
}

/* Buffer one RETURNING row computed from the row in registers. */
static void returning_row(Parse *p, Returning *r, int rowid, int cols) {
  if (!r->list) return;
  SqlExprList *l = dml_list_dup(p, r->list);
  if (!l) return;
  for (int i = 0; i < l->n; i++) bind_row(p, l->a[i].expr, r->cursor, rowid, cols);
  expr_code_list(p, l, r->vals);
  int rec = emit_regs(p, 1), rid = emit_regs(p, 1);
  emit(p, OP_MakeRecord, r->vals, r->n, rec);
  emit(p, OP_NewRowid, r->eph, rid, 0);
  emit(p, OP_Insert, r->eph, rec, rid);
}

/* After the statement: hand the buffered rows out. */
static void returning_end(Parse *p, Returning *r) {
  if (!r->list) return;
  int done = emit_label(p), top = emit_label(p);
  emit(p, OP_Rewind, r->eph, done, 0);
  emit_resolve(p, top);
  for (int i = 0; i < r->n; i++) emit(p, OP_Column, r->eph, i, r->vals + i);
  emit(p, OP_ResultRow, r->vals, r->n, 0);
  emit(p, OP_Next, r->eph, top, 0);
  emit_resolve(p, done);
}

/* ---------------------------------------------------------------- INSERT */

typedef struct InsertCtx {
  Table *tab;
  int is_view;
  int *colmap; /* column -> value index, or -1 */
  int ipk;     /* value index of the rowid, or -1 */
  int vals;
  int newrow;  /* nonzero: the row's registers, vals = newrow + 1 (the values
                  are the columns in table order: no copy) */
  Writer w;
  /* AUTOINCREMENT: the table's sqlite_sequence value and row */
  Table *seqtab;
  int seqcur, seqval, seqrow;
  /* UPSERT DO UPDATE: SET per column (NULL = unchanged), WHERE, and the
   * cursors of the target table / "excluded" items they were resolved with */
  struct UpsertDo {
    SqlExpr **set;
    uint8_t *changed;
    SqlExpr *where;
    int cur, excl;
  } * ups;
  Returning ret;
} InsertCtx;

/* AUTOINCREMENT: load the table's largest rowid ever from sqlite_sequence
 * into ic->seqval (NULL when it has no row yet; its rowid in ic->seqrow). */
static void autoinc_begin(Parse *p, InsertCtx *ic) {
  Table *tab = ic->tab;
  if (!tab->autoincrement || tab->without_rowid) return;
  ic->seqtab = schema_find_table(p->schema, "sqlite_sequence");
  if (!ic->seqtab) return;
  ic->seqcur = emit_cursor(p);
  ic->seqval = emit_regs(p, 1);
  ic->seqrow = emit_regs(p, 1);
  int name = emit_regs(p, 1), t = emit_regs(p, 1);
  int done = emit_label(p), top = emit_label(p), next = emit_label(p);
  parse_open_table(p, ic->seqcur, ic->seqtab, 1);
  /* no row yet: 0, as SQLite (a negative rowid never lowers it, and the
   * statement writes the row even when it inserts nothing) */
  emit(p, OP_Integer, 0, ic->seqval, 0);
  emit(p, OP_Null, 0, ic->seqrow, 0);
  vm_builder_add_text(&p->b, OP_String, 0, name, 0, tab->name, -1);
  emit(p, OP_Rewind, ic->seqcur, done, 0);
  emit_resolve(p, top);
  emit(p, OP_Column, ic->seqcur, 0, t);
  emit(p, OP_Ne, name, next, t);
  emit(p, OP_Rowid, ic->seqcur, ic->seqrow, 0);
  emit(p, OP_Column, ic->seqcur, 1, t);
  emit(p, OP_Copy, t, ic->seqval, 0);
  emit(p, OP_Goto, 0, done, 0);
  emit_resolve(p, next);
  emit(p, OP_Next, ic->seqcur, top, 0);
  emit_resolve(p, done);
}

/* Once a row's rowid is known: keep the largest in ic->seqval. */
static void autoinc_note(Parse *p, InsertCtx *ic, int rowid) {
  if (!ic->seqtab) return;
  int skip = emit_label(p), set = emit_label(p);
  emit(p, OP_IsNull, ic->seqval, set, 0);
  emit(p, OP_Ge, rowid, skip, ic->seqval);
  emit_resolve(p, set);
  emit(p, OP_Copy, rowid, ic->seqval, 0);
  emit_resolve(p, skip);
}

/* End of the statement: write ic->seqval back to sqlite_sequence. */
static void autoinc_end(Parse *p, InsertCtx *ic) {
  if (!ic->seqtab) return;
  int skip = emit_label(p), have = emit_label(p), write = emit_label(p);
  int r = emit_regs(p, 2), rec = emit_regs(p, 1);
  emit(p, OP_IsNull, ic->seqval, skip, 0);
  emit(p, OP_NotNull, ic->seqrow, have, 0);
  emit(p, OP_NewRowid, ic->seqcur, ic->seqrow, 0);
  emit(p, OP_Goto, 0, write, 0);
  emit_resolve(p, have);
  emit_resolve(p, write);
  vm_builder_add_text(&p->b, OP_String, 0, r, 0, ic->tab->name, -1);
  emit(p, OP_SCopy, ic->seqval, r + 1, 0);
  emit(p, OP_MakeRecord, r, 2, rec);
  emit(p, OP_Insert, ic->seqcur, rec, ic->seqrow);
  emit_resolve(p, skip);
}

/* DO UPDATE of the row the table cursor is on; newrow is the row that was
 * being inserted (the "excluded" values). */
static void upsert_update(Parse *p, InsertCtx *ic, int c, int newrow, int ignore) {
  Table *tab = ic->tab;
  Writer *w = &ic->w;
  struct UpsertDo *u = &ic->ups[c];
  int ncol = tab->ncol;
  int old = emit_regs(p, ncol + 1), nrow = emit_regs(p, ncol + 1), cols = nrow + 1;
  read_row(w, old);
  for (int j = 0; j < ncol; j++) {
    if (u->set[j]) {
      remap_cursor(p, u->set[j], u->cur, w->tabcur);
      bind_row(p, u->set[j], u->excl, newrow, newrow + 1);
      expr_code(p, u->set[j], cols + j);
    } else {
      emit(p, OP_SCopy, old + 1 + j, cols + j, 0);
    }
  }
  int key_change = tab->rowid_alias >= 0 && u->set[tab->rowid_alias];
  if (tab->without_rowid) {
    emit(p, OP_Null, 0, nrow, 0);
  } else if (key_change) {
    emit(p, OP_SCopy, cols + tab->rowid_alias, nrow, 0);
    emit(p, OP_MustBeInt, nrow, 0, 0);
  } else {
    emit(p, OP_SCopy, old, nrow, 0);
  }
  if (tab->rowid_alias >= 0) emit(p, OP_SCopy, nrow, cols + tab->rowid_alias, 0);
  if (u->where) {
    remap_cursor(p, u->where, u->cur, w->tabcur);
    bind_row(p, u->where, u->excl, newrow, newrow + 1);
    expr_if_false(p, u->where, ignore, 1);
  }
  vm_builder_add_text(&p->b, OP_Affinity, cols, ncol, 0, w->caff, ncol);
  code_generated(p, tab, nrow, cols);
  if (trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE)) {
    trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE, u->changed, old, nrow, 0, ignore);
    reseek_row(p, w, old, ignore);
  }
  /* the update's own conflicts: ABORT, no UPSERT */
  Writer saved = *w;
  w->nup = 0;
  w->stmt_oe = SQL_OE_ABORT;
  w->trigcnt = 0;
  w->changed = u->changed;
  w->rowid_changed = key_change;
  check_row(w, nrow, cols, ignore);
  int fk = fk_required(p, tab, u->changed, key_change);
  writer_keep_unchanged(w, u->changed, key_change || fk == 2,
                        trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE));
  build_new_keys(w, nrow, cols);
  check_unique(w, nrow, cols, old, key_change, ignore);
  if (fk) fk_check(p, tab, old, 0, u->changed, key_change);
  /* RETURNING reads the new row now: unchanged columns still point into
   * the old record, which the writes below may move */
  returning_row(p, &ic->ret, nrow, cols);
  own_new_row(p, tab, cols);
  delete_keys(w, old, old + 1, 1);
  if (key_change) {
    int same = emit_label(p);
    emit(p, OP_Eq, old, same, nrow);
    emit(p, OP_NotExists, w->tabcur, same, old);
    emit(p, OP_Delete, w->tabcur, 0, 0);
    emit_resolve(p, same);
  }
  if (fk) fk_check(p, tab, 0, nrow, u->changed, key_change);
  write_row(w, nrow, cols, 0);
  if (fk) fk_actions(p, tab, old, nrow, u->changed, key_change);
  *w = saved;
  if (trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER))
    trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER, u->changed, old, nrow, 0, ignore);
}

static void insert_row(Parse *p, InsertCtx *ic, int ignore) {
  Table *tab = ic->tab;
  int newrow = ic->newrow ? ic->newrow : emit_regs(p, tab->ncol + 1), cols = newrow + 1;
  for (int j = 0; j < tab->ncol && !parse_failed(p); j++) {
    if (ic->colmap[j] >= 0 && ic->vals + ic->colmap[j] == cols + j)
      continue; /* the value is in place */
    if (ic->colmap[j] >= 0)
      emit(p, OP_SCopy, ic->vals + ic->colmap[j], cols + j, 0);
    else if (tab->cols[j].gen)
      emit(p, OP_Null, 0, cols + j, 0);
    else
      code_default(p, &tab->cols[j], cols + j);
  }
  if (parse_failed(p)) return;
  if (ic->is_view) {
    emit(p, OP_Null, 0, newrow, 0);
    trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_INSTEAD_OF, NULL, 0, newrow, ic->w.stmt_oe,
                 ignore);
    return;
  }
  int before = trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE);
  int after = trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER);
  vm_builder_add_text(&p->b, OP_Affinity, cols, tab->ncol, 0, ic->w.caff, tab->ncol);
  if (before) {
    if (ic->ipk >= 0) {
      int l = emit_label(p);
      emit(p, OP_SCopy, ic->vals + ic->ipk, newrow, 0);
      emit(p, OP_NotNull, newrow, l, 0);
      emit(p, OP_Integer, -1, newrow, 0);
      emit_resolve(p, l);
      emit(p, OP_MustBeInt, newrow, 0, 0);
    } else {
      emit(p, OP_Integer, -1, newrow, 0);
    }
    if (tab->rowid_alias >= 0) emit(p, OP_SCopy, newrow, cols + tab->rowid_alias, 0);
    code_generated(p, tab, newrow, cols);
    trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE, NULL, 0, newrow, ic->w.stmt_oe, ignore);
  }
  if (tab->without_rowid) {
    emit(p, OP_Null, 0, newrow, 0);
  } else if (ic->ipk >= 0) {
    int have = emit_label(p), got = emit_label(p);
    emit(p, OP_SCopy, ic->vals + ic->ipk, newrow, 0);
    emit(p, OP_NotNull, newrow, have, 0);
    emit(p, OP_NewRowid, ic->w.tabcur, newrow, ic->seqtab ? ic->seqval : 0);
    emit(p, OP_Goto, 0, got, 0);
    emit_resolve(p, have);
    emit(p, OP_MustBeInt, newrow, 0, 0);
    emit_resolve(p, got);
  } else {
    emit(p, OP_NewRowid, ic->w.tabcur, newrow, ic->seqtab ? ic->seqval : 0);
  }
  if (tab->rowid_alias >= 0) emit(p, OP_SCopy, newrow, cols + tab->rowid_alias, 0);
  /* as SQLite, the largest rowid counts once it is known, also for a row
   * that a check then ignores or an UPSERT turns into an update */
  autoinc_note(p, ic, newrow);
  code_generated(p, tab, newrow, cols);
  check_row(&ic->w, newrow, cols, ignore);
  build_new_keys(&ic->w, newrow, cols);
  check_unique(&ic->w, newrow, cols, 0, ic->ipk >= 0, ignore);
  fk_check(p, tab, 0, newrow, NULL, 0);
  returning_row(p, &ic->ret, newrow, cols); /* before the write moves any source record */
  write_row(&ic->w, newrow, cols, 1);
  if (after)
    trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_AFTER, NULL, 0, newrow, ic->w.stmt_oe, ignore);
  if (ic->w.nup) {
    emit(p, OP_Goto, 0, ignore, 0);
    for (int c = 0; c < ic->w.nup; c++) {
      if (ic->w.up_nothing[c]) continue;
      emit_resolve(p, ic->w.up_label[c]);
      upsert_update(p, ic, c, newrow, ignore);
      emit(p, OP_Goto, 0, ignore, 0);
    }
  }
}

/* 1 if the ops emitted in [from, to) open tab or one of its indexes (the
 * code reads the table: SQLite's readsTable). */
static int code_reads_table(Parse *p, int from, int to, const Table *tab) {
  const VmProgram *prog = p->b.prog;
  if (!prog) return 1;
  int idb = parse_table_db(p, tab);
  for (int a = from; a < to && a < prog->nop; a++) {
    const VmOp *op = &prog->ops[a];
    if ((op->op != OP_OpenRead && op->op != OP_OpenWrite) || op->p3 != idb) continue;
    if ((uint32_t)op->p2 == tab->root) return 1;
    for (const Index *x = tab->indexes; x; x = x->next)
      if ((uint32_t)op->p2 == x->root) return 1;
  }
  return 0;
}

/* 1 if two unresolved expressions are written alike (names any case). */
static int ast_same(const SqlExpr *a, const SqlExpr *b) {
  if (!a || !b) return a == b;
  if (a->op == SQL_E_COLLATE && b->op != SQL_E_COLLATE) return 0;
  if (a->op != b->op || a->sub != b->sub || (a->flags & SQL_EF_NOT) != (b->flags & SQL_EF_NOT))
    return 0;
  if ((a->z == NULL) != (b->z == NULL)) return 0;
  if (a->z) {
    int ci = a->op == SQL_E_ID || a->op == SQL_E_COLUMN || a->op == SQL_E_FUNC ||
             a->op == SQL_E_COLLATE || a->op == SQL_E_CAST;
    if (ci ? strcasecmp(a->z, b->z) != 0 : strcmp(a->z, b->z) != 0) return 0;
  }
  if ((a->table == NULL) != (b->table == NULL)) return 0;
  if (a->table && strcasecmp(a->table, b->table) != 0) return 0;
  if (!ast_same(a->a, b->a) || !ast_same(a->b, b->b) || !ast_same(a->c, b->c)) return 0;
  if ((a->list == NULL) != (b->list == NULL)) return 0;
  if (a->list) {
    if (a->list->n != b->list->n) return 0;
    for (int i = 0; i < a->list->n; i++)
      if (!ast_same(a->list->a[i].expr, b->list->a[i].expr)) return 0;
  }
  return a->select == NULL && b->select == NULL;
}

/* Match the UPSERT target, resolve DO UPDATE's SET and WHERE. */
/* Move index i to position pos of the check order (targets first). */
static void writer_move_index(Writer *w, int i, int pos) {
  Index *xi = w->idx[i];
  int ci = w->cur[i], ki = w->key[i], ri = w->rec[i], oi = w->okey[i], ui = w->up_of[i];
  for (int j = i; j > pos; j--) {
    w->idx[j] = w->idx[j - 1];
    w->cur[j] = w->cur[j - 1];
    w->key[j] = w->key[j - 1];
    w->rec[j] = w->rec[j - 1];
    w->okey[j] = w->okey[j - 1];
    w->up_of[j] = w->up_of[j - 1];
  }
  w->idx[pos] = xi;
  w->cur[pos] = ci;
  w->key[pos] = ki;
  w->rec[pos] = ri;
  w->okey[pos] = oi;
  w->up_of[pos] = ui;
}

/* Match clause c's target; -1 after an error. Returns 0. */
static int upsert_target(Parse *p, InsertCtx *ic, const SqlUpsert *u, int c, int *front) {
  Table *tab = ic->tab;
  Writer *w = &ic->w;
  if (!u->target) {
    if (w->up_any < 0) w->up_any = c;
    return 0;
  }
  int n = u->target->n;
  int *cols = parse_alloc(p, (size_t)n * sizeof(int));
  if (!cols) return -1;
  for (int i = 0; i < n; i++) {
    const SqlExpr *e = u->target->a[i].expr;
    while (e && e->op == SQL_E_COLLATE) e = e->a;
    cols[i] = e && e->op == SQL_E_ID ? table_column_index(tab, e->z) : INDEX_COL_EXPR;
    if (cols[i] < 0 && e && e->op == SQL_E_ID && is_rowid_name(e->z) && !tab->without_rowid)
      cols[i] = -1;
  }
  if (n == 1 && !tab->without_rowid &&
      (cols[0] == -1 || (tab->rowid_alias >= 0 && cols[0] == tab->rowid_alias))) {
    if (w->up_ipk < 0) w->up_ipk = c;
    return 0;
  }
  for (int i = 0; i < w->nidx; i++) {
    Index *x = w->idx[i];
    if (!x->unique || x->nkey != n) continue;
    /* a partial index is a target when ON CONFLICT's WHERE is its WHERE (as
     * SQLite's sqlite3UpsertAnalyzeTarget) */
    if (x->where && (!u->target_where || !ast_same(u->target_where, x->where))) continue;
    int all = 1;
    for (int k = 0; k < n && all; k++) {
      int hit = 0;
      const SqlExpr *te = u->target->a[k].expr;
      while (te && te->op == SQL_E_COLLATE) te = te->a;
      for (int j = 0; j < n; j++) {
        if (cols[k] == INDEX_COL_EXPR) {
          if (x->cols[j].col == INDEX_COL_EXPR && ast_same(te, x->cols[j].expr)) hit = 1;
        } else if (x->cols[j].col == cols[k]) {
          hit = 1;
        }
      }
      all = hit;
    }
    if (all) {
      if (w->up_of[i] < 0) {
        w->up_of[i] = c;
        if (i >= *front) writer_move_index(w, i, (*front)++); /* targets are checked first */
      }
      return 0;
    }
  }
  if (ic->w.nup > 1) { /* several clauses: SQLite names the one by its ordinal */
    int n1 = c + 1;
    const char *sfx = (n1 % 100) / 10 == 1 ? "th"
                      : n1 % 10 == 1       ? "st"
                      : n1 % 10 == 2       ? "nd"
                      : n1 % 10 == 3       ? "rd"
                                           : "th";
    parse_error(p, "%d%s ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint",
                n1, sfx);
  } else {
    parse_error(p, "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint");
  }
  return -1;
}

/* Match the UPSERT targets, resolve each DO UPDATE's SET and WHERE. */
static int upsert_setup(Parse *p, InsertCtx *ic, const SqlInsert *ins) {
  Table *tab = ic->tab;
  Writer *w = &ic->w;
  int nup = 0, front = 0;
  for (const SqlUpsert *u = ins->upsert; u; u = u->next) nup++;
  w->up_of = parse_alloc(p, (size_t)(w->nidx ? w->nidx : 1) * sizeof(int));
  w->up_nothing = parse_alloc(p, (size_t)nup * sizeof(int));
  w->up_label = parse_alloc(p, (size_t)nup * sizeof(int));
  ic->ups = parse_alloc(p, (size_t)nup * sizeof *ic->ups);
  if (!w->up_of || !w->up_nothing || !w->up_label || !ic->ups) return 1;
  for (int i = 0; i < w->nidx; i++) w->up_of[i] = -1;
  w->up_ipk = w->up_any = -1;
  w->nup = nup;
  int c = 0;
  for (const SqlUpsert *u = ins->upsert; u; u = u->next, c++) {
    w->up_nothing[c] = u->do_nothing;
    w->up_label[c] = u->do_nothing ? 0 : emit_label(p);
    if (upsert_target(p, ic, u, c, &front)) return 1;
    w->up_front = front;
    if (u->do_nothing) continue;
    struct UpsertDo *ud = &ic->ups[c];
    /* bare names are the existing row; "excluded" only qualified: it sits
     * one level out so it never makes a bare name ambiguous */
    SrcList *s1 = src_single(p, tab, ins->alias);
    SrcList *s2 = src_single(p, tab, "excluded");
    if (!s1 || !s2) return 1;
    ud->cur = s1->a[0].cursor;
    ud->excl = s2->a[0].cursor;
    NameCtx ncx, nc;
    memset(&ncx, 0, sizeof ncx);
    memset(&nc, 0, sizeof nc);
    ncx.src = s2;
    trig_nc(p, &ncx);
    nc.src = s1;
    nc.outer = &ncx;
    int ncol = tab->ncol;
    ud->set = parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *ud->set);
    ud->changed = parse_alloc(p, (size_t)(ncol ? ncol : 1));
    if (!ud->set || !ud->changed) return 1;
    if (u->set && set_list_resolve(p, u->set, tab, &nc, ud->set, ud->changed)) return 1;
    if (u->where) {
      ud->where = dml_expr_dup(p, u->where);
      if (!ud->where || resolve_expr(p, &nc, ud->where) || parse_failed(p)) return 1;
    }
  }
  return 0;
}

int dml_insert(Parse *p, const SqlStmt *s) {
  const SqlInsert *ins = &s->u.insert;
  SqlSelect *sel = ins->select;
  if (ins->with && sel) {
    /* WITH ... INSERT ... SELECT: the CTEs belong to the SELECT (DEFAULT
     * VALUES reads nothing: the WITH is unused) */
    if (sel->with) {
      parse_error(p, "WITH is not supported on this INSERT yet");
      return 1;
    }
    sel->with = ins->with;
  }
  View *view = NULL;
  InsertCtx ic;
  memset(&ic, 0, sizeof ic);
  Table *tab = dml_table(p, ins->table.schema, ins->table.name, &view);
  if (!tab && view) tab = view_table(p, view, TRIGGER_INSERT);
  if (!tab || parse_failed(p)) return 1;
  if (tab->vtab) return vtab_insert(p, ins, tab, stmt_oe_of(p, ins->or_conflict));
  ic.tab = tab;
  ic.is_view = view != NULL;
  int stmt_oe = stmt_oe_of(p, ins->or_conflict);

  /* the values' shape */
  int direct = sel && sel->kind == SQL_SEL_VALUES && !sel->prior && !sel->with && !sel->order_by &&
               !sel->limit;
  int nvals = 0;
  /* as SQLite: several rows, or triggers, may be written */
  if ((sel && (!direct || sel->cols->n > 1)) || ic.is_view || trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE) ||
      trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER))
    p->multi_write = 1;
  /* as SQLite: a REPLACE deleting rows, or an UPSERT's UPDATE, with
   * foreign keys writes several */
  int fk_replace = !ic.is_view && fk_required(p, tab, NULL, 0) && may_replace(tab, stmt_oe);
  if (fk_replace || (!ic.is_view && ins->upsert && fk_required(p, tab, NULL, 0)))
    p->multi_write = 1;
  if (direct) {
    nvals = sel->cols->a[0].expr->list ? sel->cols->a[0].expr->list->n : 0;
  } else if (sel) {
    NameCtx nc;
    memset(&nc, 0, sizeof nc);
    trig_nc(p, &nc);
    if (select_resolve(p, sel, p->nested ? &nc : NULL) || parse_failed(p)) return 1;
    nvals = select_ncol(sel);
  }
  int ninsertable = 0;
  for (int j = 0; j < tab->ncol; j++)
    if (!tab->cols[j].gen) ninsertable++;
  ic.colmap = parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1) * sizeof(int));
  if (!ic.colmap) return 1;
  for (int j = 0; j < tab->ncol; j++) ic.colmap[j] = -1;
  ic.ipk = -1;
  if (ins->columns) {
    for (int i = 0; i < ins->columns->n; i++) {
      const char *nm = ins->columns->a[i];
      int j = table_column_index(tab, nm);
      if (j < 0) {
        if (is_rowid_name(nm) && !tab->without_rowid && !ic.is_view) {
          ic.ipk = i;
          continue;
        }
        parse_error(p, "table %s has no column named %s", tab->name, nm);
        return 1;
      }
      if (tab->cols[j].gen) {
        parse_error(p, "cannot INSERT into generated column \"%s\"", tab->cols[j].name);
        return 1;
      }
      ic.colmap[j] = i;
      if (j == tab->rowid_alias) ic.ipk = i;
    }
    if (sel && nvals != ins->columns->n) {
      parse_error(p, "%d values for %d columns", nvals, ins->columns->n);
      return 1;
    }
  } else if (sel) {
    if (nvals != ninsertable) {
      parse_error(p, "table %s has %d columns but %d values were supplied", tab->name,
                  ninsertable, nvals);
      return 1;
    }
    for (int j = 0, k = 0; j < tab->ncol; j++)
      if (!tab->cols[j].gen) ic.colmap[j] = k++;
    if (tab->rowid_alias >= 0) ic.ipk = ic.colmap[tab->rowid_alias];
  }
  if (ic.is_view) ic.ipk = -1;

  if (ic.is_view) {
    memset(&ic.w, 0, sizeof ic.w);
    ic.w.p = p;
    ic.w.tab = tab;
    ic.w.stmt_oe = stmt_oe;
    ic.w.on_victim = -1;
  } else if (writer_open(p, &ic.w, tab, stmt_oe, -1)) {
    return 1;
  } else {
    if (fk_replace) ic.w.trigcnt = emit_regs(p, 1);
    autoinc_begin(p, &ic);
    if (ins->upsert && upsert_setup(p, &ic, ins)) return 1;
    if (returning_setup(p, tab, ins->alias, ins->returning, &ic.ret)) return 1;
  }
  if (ic.is_view && ins->returning) {
    parse_error(p, "cannot use RETURNING on a view");
    return 1;
  }
  /* values that are the columns in table order go straight into the row's
   * registers (insert_row) */
  int identity = !ic.is_view && nvals == tab->ncol && nvals > 0 && !tab->has_generated &&
                 !trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE); /* it reads the
                                                    INTEGER PRIMARY KEY value twice */
  for (int j = 0; j < tab->ncol && identity; j++) identity = ic.colmap[j] == j;
  if (identity) {
    ic.newrow = emit_regs(p, tab->ncol + 1);
    ic.vals = ic.newrow + 1;
  } else {
    ic.vals = emit_regs(p, nvals > 0 ? nvals : 1);
  }
  int ret = emit_regs(p, 1), lrow = emit_label(p), ldone = emit_label(p), direct_sink = 0;

  if (!sel) {
    emit(p, OP_Gosub, ret, lrow, 0);
  } else if (direct) {
    for (int r = 0; r < sel->cols->n && !parse_failed(p); r++) {
      SqlExpr *row = sel->cols->a[r].expr;
      int n = row->list ? row->list->n : 0;
      if (n != nvals) {
        parse_error(p, "all VALUES must have the same number of terms");
        return 1;
      }
      SqlExprList *l = dml_list_dup(p, row->list);
      if (!l && n) return 1;
      NameCtx nc;
      memset(&nc, 0, sizeof nc);
      trig_nc(p, &nc);
      if (l && (resolve_list(p, &nc, l) || parse_failed(p))) return 1;
      if (l) expr_code_list(p, l, ic.vals);
      emit(p, OP_Gosub, ret, lrow, 0);
    }
  } else {
    /* The SELECT hands each row to a routine (SD_REGS). As SQLite 3.40,
     * the rows go straight to the insert unless the SELECT reads the
     * target table or the table has INSERT triggers or RETURNING: then
     * they are all staged in an ephemeral table first. Which one is known
     * once the SELECT's code is there: the jump at its head goes to the
     * staging table's OpenEphemeral when needed. */
    int head = emit(p, OP_Goto, 0, 0, 0);
    int start = vm_builder_addr(&p->b), sink = emit_label(p);
    SelectDest d;
    memset(&d, 0, sizeof d);
    d.kind = SD_REGS;
    d.reg = ret;
    d.cursor = sink;
    d.out = ic.vals;
    d.nreg = nvals;
    if (select_code(p, sel, &d) || parse_failed(p)) return 1;
    int stage = ic.is_view || ins->returning ||
                trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE) ||
                trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER) ||
                code_reads_table(p, start, vm_builder_addr(&p->b), tab);
    if (!stage) {
      vm_builder_set_p2(&p->b, head, start);
      direct_sink = sink; /* the SELECT's Gosubs go to the insert itself */
    } else {
      int eph = emit_cursor(p), loop = emit_label(p), top = emit_label(p);
      int rec = emit_regs(p, 1), rid = emit_regs(p, 1);
      emit(p, OP_Goto, 0, loop, 0);
      vm_builder_set_p2(&p->b, head, vm_builder_addr(&p->b));
      emit(p, OP_OpenEphemeral, eph, nvals, 0);
      emit(p, OP_Goto, 0, start, 0);
      emit_resolve(p, sink);
      emit(p, OP_MakeRecord, ic.vals, nvals, rec);
      emit(p, OP_NewRowid, eph, rid, 0);
      emit(p, OP_Insert, eph, rec, rid);
      emit(p, OP_Return, ret, 0, 0);
      emit_resolve(p, loop);
      emit(p, OP_Rewind, eph, ldone, 0);
      emit_resolve(p, top);
      for (int i = 0; i < nvals; i++) emit(p, OP_Column, eph, i, ic.vals + i);
      emit(p, OP_Gosub, ret, lrow, 0);
      emit(p, OP_Next, eph, top, 0);
    }
  }
  emit(p, OP_Goto, 0, ldone, 0);
  emit_resolve(p, lrow);
  if (direct_sink) emit_resolve(p, direct_sink);
  int lnext = emit_label(p);
  insert_row(p, &ic, lnext);
  emit_resolve(p, lnext);
  emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, ldone);
  autoinc_end(p, &ic);
  returning_end(p, &ic.ret);
  return parse_failed(p);
}

/* ------------------------------------------------------- UPDATE / DELETE */

/* The rows to change, collected before any change (invariant 5). */
typedef struct RowList {
  int set;  /* RowSet register (rowid tables in rowid order), or 0 */
  int eph;  /* ephemeral table (scan order) / index (PK order), or -1 */
  int nkey; /* values per entry in eph: 1 (rowid) or npk */
} RowList;

/* Collect the rows of the planned loop wi (over src item 0, cursor scur):
 * rowids in a RowSet (read back in rowid order), PRIMARY KEYs of a WITHOUT
 * ROWID table in an ephemeral index (PRIMARY KEY order), as SQLite's
 * two-pass UPDATE/DELETE. Emits the loop (where_code) and closes it. */
static void collect_rows(Parse *p, WhereInfo *wi, int scur, Table *tab, RowList *rl) {
  memset(rl, 0, sizeof *rl);
  rl->eph = -1;
  rl->nkey = tab->without_rowid ? tab->npk : 1;
  if (!tab->without_rowid) {
    rl->set = emit_regs(p, 1);
    emit(p, OP_Null, 0, rl->set, 0);
  } else {
    rl->eph = emit_cursor(p);
    KeyInfo *ki = parse_keyinfo(p, rl->nkey, NULL, NULL);
    if (!ki) return;
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, rl->eph, rl->nkey, 0, P4_KEYINFO, ki);
  }
  if (where_code(wi)) return;
  int k = emit_regs(p, rl->nkey);
  if (tab->without_rowid) {
    for (int j = 0; j < tab->npk; j++) code_column(p, tab, scur, tab->pk_cols[j], k + j);
    int rec = emit_regs(p, 1);
    emit(p, OP_MakeRecord, k, rl->nkey, rec);
    emit(p, OP_IdxInsert, rl->eph, rec, 0);
  } else {
    emit(p, OP_Rowid, scur, k, 0);
    emit(p, OP_RowSetAdd, rl->set, k, 0);
  }
  where_end(wi);
}

static int sub_cb(SqlWalker *w, SqlSelect *s) {
  (void)s;
  *(int *)w->arg = 1;
  return SQL_WALK_ABORT;
}
static int sub_expr_cb(SqlWalker *w, SqlExpr *e) {
  if (e->op == SQL_E_IN && e->table) { /* x IN table */
    *(int *)w->arg = 1;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}
/* 1 if e holds a subquery. */
static int has_subquery(SqlExpr *e) {
  int found = 0;
  SqlWalker w = {sub_expr_cb, sub_cb, &found};
  if (e) sql_walk_expr(&w, e);
  return found;
}

/* How UPDATE/DELETE visit their rows. A one-pass statement changes each row
 * inside the WHERE loop, with the loop's table cursor (SQLite's rules):
 * ONEPASS_ONE when the loop visits at most one row (rowid or UNIQUE "="),
 * whatever else the statement does; ONEPASS_MULTI when multi_ok (no
 * trigger, foreign key, RETURNING, REPLACE, key change or subquery: nothing
 * that must see the whole set first, or may change rows the loop has still
 * to visit) and the loop does not walk an index the statement changes.
 * Otherwise the rows are collected first (collect_rows). */
enum { ONEPASS_OFF, ONEPASS_ONE, ONEPASS_MULTI };

static int onepass_mode(WhereInfo *wi, int multi_ok, const uint8_t *chg) {
  if (where_one_row(wi)) return ONEPASS_ONE;
  if (!multi_ok) return ONEPASS_OFF;
  const Index *x = where_scan_index(wi);
  if (x && chg && index_affected(x, chg)) return ONEPASS_OFF;
  return ONEPASS_MULTI;
}

/* UPDATE/DELETE ... [ORDER BY ...] LIMIT ...: the rows are those of
 * "SELECT rowid (or the PRIMARY KEY) FROM item WHERE ... ORDER BY ... LIMIT
 * ... OFFSET ...", in that order. */
static void collect_rows_limited(Parse *p, const SqlSrcItem *item, const SqlExpr *where,
                                 const SqlExprList *order_by, const SqlExpr *limit,
                                 const SqlExpr *offset, Table *tab, SqlWith *with, RowList *rl) {
  memset(rl, 0, sizeof *rl);
  rl->eph = -1;
  rl->nkey = tab->without_rowid ? tab->npk : 1;
  SqlSelect *sel = parse_alloc(p, sizeof *sel);
  SqlExprList *cols = parse_alloc(p, sizeof *cols);
  SqlSrcList *from = parse_alloc(p, sizeof *from);
  SqlSrcItem *it = parse_alloc(p, sizeof *it);
  if (!sel || !cols || !from || !it) return;
  cols->a = parse_alloc(p, (size_t)rl->nkey * sizeof *cols->a);
  if (!cols->a) return;
  for (int j = 0; j < rl->nkey; j++) {
    SqlExpr *e = parse_alloc(p, sizeof *e);
    if (!e) return;
    e->op = SQL_E_ID;
    e->height = 1;
    e->z = tab->without_rowid ? tab->cols[tab->pk_cols[j]].name : "rowid";
    cols->a[j].expr = e;
  }
  cols->n = cols->cap = rl->nkey;
  *it = *item;
  it->on = NULL;
  it->using_cols = NULL;
  from->n = from->cap = 1;
  from->a = it;
  sel->kind = SQL_SEL_SELECT;
  sel->cols = cols;
  sel->from = from;
  sel->where = dml_expr_dup(p, where);
  sel->order_by = dml_list_dup(p, order_by);
  sel->limit = dml_expr_dup(p, limit);
  sel->offset = dml_expr_dup(p, offset);
  sel->with = with;
  if (parse_failed(p)) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  trig_nc(p, &nc);
  if (select_resolve(p, sel, p->nested ? &nc : NULL) || parse_failed(p)) return;
  rl->eph = emit_cursor(p);
  emit(p, OP_OpenEphemeral, rl->eph, rl->nkey, 0);
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_TABLE;
  d.cursor = rl->eph;
  d.nreg = rl->nkey;
  select_code(p, sel, &d);
}

/* Loop head over collected rows: positions the writer's table cursor on
 * each one; jumps to done when there are no more. Returns the label that
 * goes to the next row. */
static int rows_loop_begin(Parse *p, Writer *w, RowList *rl, int done, int *top_out) {
  Table *tab = w->tab;
  int top = emit_label(p), next = emit_label(p);
  if (rl->set) {
    int r = emit_regs(p, 1);
    emit_resolve(p, top);
    emit(p, OP_RowSetRead, rl->set, done, r);
    emit(p, OP_NotExists, w->tabcur, next, r);
  } else if (rl->nkey < 0) {
    int r = emit_regs(p, 1);
    emit(p, OP_Rewind, rl->eph, done, 0);
    emit_resolve(p, top);
    emit(p, OP_Rowid, rl->eph, r, 0);
    emit(p, OP_NotExists, w->tabcur, next, r);
  } else {
    emit(p, OP_Rewind, rl->eph, done, 0);
    emit_resolve(p, top);
    if (tab->without_rowid) {
      for (int j = 0; j < tab->npk; j++) emit(p, OP_Column, rl->eph, j, w->pkreg + j);
      vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, next, w->pkreg, tab->npk);
    } else {
      int r = emit_regs(p, 1);
      emit(p, OP_Column, rl->eph, 0, r);
      emit(p, OP_NotExists, w->tabcur, next, r);
    }
  }
  *top_out = top;
  return next;
}

static void rows_loop_end(Parse *p, RowList *rl, int top, int next) {
  emit_resolve(p, next);
  if (rl->set)
    emit(p, OP_Goto, 0, top, 0);
  else
    emit(p, OP_Next, rl->eph, top, 0);
}

/* Start of the per-row code, the table cursor on the row: inside the WHERE
 * loop wi (one pass), or in a loop over the rows collected by it (wi not
 * NULL; scur its cursor) or before (rl). Returns the label that goes to the
 * next row, 0 after an error. */
static int dml_loop_begin(Parse *p, WhereInfo *wi, int onepass, Writer *w, RowList *rl,
                          int scur, int done, int *top) {
  if (onepass) {
    if (where_code(wi)) return 0;
    return onepass == ONEPASS_ONE ? where_break_label(wi) : where_continue_label(wi);
  }
  if (wi) collect_rows(p, wi, scur, w->tab, rl);
  if (parse_failed(p)) return 0;
  return rows_loop_begin(p, w, rl, done, top);
}

/* End of the per-row code: the WHERE loop's (one pass; after its one row
 * the loop is left, as SQLite does not step a one-row loop) or the loop
 * over the collected rows. */
static void dml_loop_end(Parse *p, WhereInfo *wi, int onepass, RowList *rl, int top, int next) {
  if (!onepass) {
    rows_loop_end(p, rl, top, next);
    return;
  }
  if (onepass == ONEPASS_ONE) emit(p, OP_Goto, 0, where_break_label(wi), 0);
  where_end(wi);
}

/* Reposition the table cursor on the old row after triggers ran; -> next
 * if it is gone. */
static void reseek_row(Parse *p, Writer *w, int old, int next) {
  Table *tab = w->tab;
  if (tab->without_rowid) {
    for (int j = 0; j < tab->npk; j++)
      emit(p, OP_SCopy, old + 1 + tab->pk_cols[j], w->pkreg + j, 0);
    vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, next, w->pkreg, tab->npk);
  } else {
    emit(p, OP_NotExists, w->tabcur, next, old);
  }
}

int dml_update(Parse *p, const SqlStmt *s) {
  const SqlUpdate *u = &s->u.update;
  int nsetcol = 0; /* SQLite's SQLITE_LIMIT_COLUMN check, made while parsing */
  for (int i = 0; u->set && i < u->set->n; i++) nsetcol += u->set->a[i].names ? u->set->a[i].nnames : 1;
  if (p->env && p->env->max_columns > 0 && nsetcol > p->env->max_columns) {
    parse_error(p, "too many columns in set list");
    return 1;
  }
  if (u->order_by && !u->limit) {
    parse_error(p, "ORDER BY without LIMIT on UPDATE");
    return 1;
  }
  if (u->with) {
    attach_with(u->with, u->where);
    attach_with_list(u->with, u->set);
    attach_with_list(u->with, u->returning);
    attach_with_list(u->with, u->order_by);
  }
  View *view = NULL;
  Table *tab = dml_table(p, u->table->schema, u->table->name, &view);
  if (!tab && view)
    return view_dml(p, view, TRIGGER_UPDATE, u->table->alias, u->set, u->where,
                    stmt_oe_of(p, u->or_conflict));
  if (tab && tab->vtab) return vtab_update_stmt(p, u, tab, stmt_oe_of(p, u->or_conflict));
  if (!tab || parse_failed(p)) return 1;
  int stmt_oe = stmt_oe_of(p, u->or_conflict);
  SrcList *src;
  if (u->from) {
    /* UPDATE ... FROM: the target joined with the FROM list */
    if (u->limit) {
      parse_error(p, "this form of UPDATE ... FROM is not supported yet");
      return 1;
    }
    SqlSrcList *all = parse_alloc(p, sizeof *all);
    if (!all) return 1;
    all->n = all->cap = u->from->n + 1;
    all->a = parse_alloc(p, (size_t)all->n * sizeof *all->a);
    if (!all->a) return 1;
    all->a[0] = *u->table;
    for (int i = 0; i < u->from->n; i++) all->a[i + 1] = u->from->a[i];
    if (!(all->a[1].jointype & ~SQL_JOIN_COMMA)) all->a[1].jointype = SQL_JOIN_INNER | SQL_JOIN_COMMA;
    NameCtx onc;
    memset(&onc, 0, sizeof onc);
    trig_nc(p, &onc);
    src = src_from_ast(p, all, p->nested ? &onc : NULL);
    if (!src || parse_failed(p)) return 1;
    if (src->a[0].tab != tab || src->a[0].kind != SRC_TABLE) {
      parse_error(p, "this form of UPDATE ... FROM is not supported yet");
      return 1;
    }
  } else {
    src = src_single(p, tab, u->table->alias);
  }
  if (!src) return 1;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  trig_nc(p, &nc);

  if (u->from) {
    if (src_resolve_joins(p, src) || parse_failed(p)) return 1;
    for (int i = 1; i < src->n; i++) {
      if (!src->a[i].on) continue;
      nc.flags |= NC_IN_ON;
      int bad = resolve_expr(p, &nc, src->a[i].on) || parse_failed(p);
      nc.flags &= ~NC_IN_ON;
      if (bad) return 1;
    }
  }

  /* SET targets */
  int ncol = tab->ncol;
  SqlExpr **set = parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *set);
  uint8_t *changed = parse_alloc(p, (size_t)(ncol ? ncol : 1));
  if (!set || !changed) return 1;
  SqlExpr *rowid_expr = NULL;
  /* SET (a, b) = (SELECT ...): the subquery fills n registers per row */
  SqlSelect **rsub = parse_alloc(p, (size_t)u->set->n * sizeof *rsub);
  int *rbase = parse_alloc(p, (size_t)u->set->n * sizeof(int));
  if (!rsub || !rbase) return 1;
  for (int i = 0; i < u->set->n; i++) {
    SqlExprItem *it = &u->set->a[i];
    int nn = it->nnames > 0 ? it->nnames : 1;
    if (it->nnames > 0 && it->expr->op == SQL_E_SUBQUERY && u->from) {
      parse_error(p, "this form of UPDATE ... FROM is not supported yet");
      return 1;
    }
    if (it->nnames > 0 && it->expr->op == SQL_E_SUBQUERY) {
      if (select_resolve(p, it->expr->select, &nc) || parse_failed(p)) return 1;
      int w = select_ncol(it->expr->select);
      if (w != it->nnames) {
        parse_error(p, "%d columns assigned %d values", it->nnames, w);
        return 1;
      }
      rsub[i] = it->expr->select;
      rbase[i] = emit_regs(p, nn);
    }
    for (int k = 0; k < nn; k++) {
      const char *nm = it->nnames > 0 ? it->names[k] : it->name;
      SqlExpr *e;
      if (rsub[i]) {
        SqlExpr *nul = parse_alloc(p, sizeof *nul);
        e = parse_alloc(p, sizeof *e);
        if (!e || !nul) return 1;
        nul->op = SQL_E_NULL;
        nul->height = 1;
        e->op = SQL_E_REG;
        e->height = 1;
        e->reg = rbase[i] + k;
        e->orig = nul;
      } else if (it->nnames > 0) {
        if (it->expr->op != SQL_E_ROW || !it->expr->list || it->expr->list->n != it->nnames) {
          parse_error(p, "%d columns assigned %d values", it->nnames,
                      it->expr->op == SQL_E_ROW && it->expr->list ? it->expr->list->n : 1);
          return 1;
        }
        e = it->expr->list->a[k].expr;
      } else {
        e = it->expr;
      }
      if (!rsub[i]) e = dml_expr_dup(p, e);
      if (!e) return 1;
      int j = table_column_index(tab, nm);
      if (j < 0) {
        if (is_rowid_name(nm) && !tab->without_rowid) {
          rowid_expr = e;
          continue;
        }
        parse_error(p, "no such column: %s", nm);
        return 1;
      }
      if (tab->cols[j].gen) {
        parse_error(p, "cannot UPDATE generated column \"%s\"", tab->cols[j].name);
        return 1;
      }
      set[j] = e;
      changed[j] = 1;
      if (j == tab->rowid_alias) rowid_expr = e;
    }
  }
  for (int j = 0; j < ncol; j++) {
    if (set[j] && set[j]->op != SQL_E_REG && (resolve_expr(p, &nc, set[j]) || parse_failed(p)))
      return 1;
    if (set[j] && p->env && p->env->auth) { /* UPDATE per column; IGNORE keeps it as it is */
      int rc = parse_auth(p, AUTH_UPDATE, tab->name, tab->cols[j].name, "main");
      if (rc == AUTH_DENY) return 1;
      if (rc == AUTH_IGNORE) {
        if (rowid_expr == set[j]) rowid_expr = NULL;
        set[j] = NULL;
        changed[j] = 0;
      }
    }
  }
  if (rowid_expr && tab->rowid_alias < 0 &&
      (resolve_expr(p, &nc, rowid_expr) || parse_failed(p)))
    return 1;
  SqlExpr *where = dml_expr_dup(p, u->where);
  if (where && (resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  if (u->from && rowid_expr) {
    parse_error(p, "this form of UPDATE ... FROM is not supported yet");
    return 1;
  }

  parse_need_write(p);
  /* SQLite changes rows in scan order (one pass) unless the key changes, a
   * REPLACE may delete rows, or triggers run; then in key order */
  int replace = stmt_oe == SQL_OE_REPLACE;
  if (!stmt_oe) {
    replace = tab->pk_conflict == SQL_OE_REPLACE;
    for (Index *x = tab->indexes; x; x = x->next)
      if (x->on_conflict == SQL_OE_REPLACE) replace = 1;
    for (int j = 0; j < ncol; j++)
      if (tab->cols[j].notnull_conflict == SQL_OE_REPLACE) replace = 1;
  }
  int key_change = rowid_expr != NULL;
  for (int j = 0; j < ncol; j++)
    if (set[j] && tab->cols[j].pk) key_change = 1;
  int trig = trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE) ||
             trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER);
  int fk = fk_required(p, tab, changed, rowid_expr != NULL);
  if (trig || fk || u->from || u->limit) p->multi_write = 1;
  RowList rl;
  memset(&rl, 0, sizeof rl);
  WhereInfo *wi = NULL; /* the WHERE loop (no FROM, no LIMIT) */
  int onepass = ONEPASS_OFF;
  int nset = 0;
  for (int j = 0; j < ncol; j++) nset += set[j] != NULL;
  /* UPDATE ... FROM: where the new values sit in the first pass's rows */
  int voff = u->from && tab->without_rowid ? tab->npk : 0;
  if (u->from) {
    /* first pass: per target row, the new values (a rowid table keeps the
     * join's last match, a WITHOUT ROWID table its first: SQL leaves it
     * open) */
    memset(&rl, 0, sizeof rl);
    rl.eph = emit_cursor(p);
    if (tab->without_rowid) {
      rl.nkey = tab->npk; /* an index on the PRIMARY KEY, the values after it */
      KeyInfo *ki = parse_keyinfo(p, tab->npk, NULL, NULL);
      if (!ki) return 1;
      vm_builder_add_p4(&p->b, OP_OpenEphemeral, rl.eph, voff + nset, 0, P4_KEYINFO, ki);
    } else {
      rl.nkey = -1; /* keyed by the target rowid, values in columns */
      emit(p, OP_OpenEphemeral, rl.eph, nset, 0);
    }
    WhereInfo *fw = where_begin(p, src, where, NULL, 0);
    if (!fw) return 1;
    int vals = emit_regs(p, voff + (nset > 0 ? nset : 1)), r = emit_regs(p, 1),
        rec = emit_regs(p, 1);
    for (int j = 0, k = 0; j < ncol; j++)
      if (set[j]) expr_code(p, set[j], vals + voff + k++);
    if (tab->without_rowid) {
      int skip = emit_label(p);
      for (int j = 0; j < tab->npk; j++)
        code_column(p, tab, src->a[0].cursor, tab->pk_cols[j], vals + j);
      vm_builder_add_i4(&p->b, OP_Found, rl.eph, skip, vals, tab->npk);
      emit(p, OP_MakeRecord, vals, voff + nset, rec);
      emit(p, OP_IdxInsert, rl.eph, rec, 0);
      emit_resolve(p, skip);
    } else {
      code_column(p, tab, src->a[0].cursor, -1, r); /* the loop may scan a covering index */
      emit(p, OP_MakeRecord, vals, nset, rec);
      emit(p, OP_Insert, rl.eph, rec, r);
    }
    where_end(fw);
  } else if (u->limit) {
    collect_rows_limited(p, u->table, u->where, u->order_by, u->limit, u->offset, tab, u->with,
                         &rl);
  } else {
    wi = where_plan(p, src, where, NULL, WHERE_ONEPASS);
    if (!wi) return 1;
    int sub = has_subquery(where);
    for (int i = 0; i < u->set->n; i++) sub |= rsub[i] != NULL;
    for (int j = 0; j < ncol; j++) sub |= set[j] && has_subquery(set[j]);
    int multi_ok = !replace && !key_change && !trig && !fk && !u->returning && !sub;
    const uint8_t *chg = multi_ok ? changed_closure(p, tab, changed, 0) : NULL;
    onepass = onepass_mode(wi, multi_ok, chg);
    if (onepass != ONEPASS_ONE) p->multi_write = 1;
  }
  if (parse_failed(p)) return 1;
  Writer w;
  /* the loop and the writes share the table cursor (the loop opens it) */
  if (writer_open(p, &w, tab, stmt_oe, wi ? src->a[0].cursor : -1)) return 1;
  if (replace && fk_required(p, tab, NULL, 0)) w.trigcnt = emit_regs(p, 1);
  Returning ret;
  if (returning_setup(p, tab, u->table->alias, u->returning, &ret)) return 1;
  int old = emit_regs(p, ncol + 1), newrow = emit_regs(p, ncol + 1), cols = newrow + 1;
  int done = emit_label(p), top = 0;
  int next = dml_loop_begin(p, wi, onepass, &w, &rl, src->a[0].cursor, done, &top);
  if (!next) return 1;
  read_row(&w, old);
  int scur = src->a[0].cursor;
  for (int i = 0; i < u->set->n; i++) {
    if (!rsub[i]) continue;
    remap_cursor_select(p, rsub[i], scur, w.tabcur);
    SelectDest d;
    memset(&d, 0, sizeof d);
    d.kind = SD_MEM;
    d.reg = rbase[i];
    d.nreg = u->set->a[i].nnames;
    select_code(p, rsub[i], &d);
  }
  for (int j = 0, k = 0; j < ncol; j++) {
    if (set[j] && u->from) {
      emit(p, OP_Column, rl.eph, voff + k++, cols + j);
    } else if (set[j]) {
      remap_cursor(p, set[j], scur, w.tabcur);
      expr_code(p, set[j], cols + j);
    } else {
      emit(p, OP_SCopy, old + 1 + j, cols + j, 0);
    }
  }
  if (tab->without_rowid) {
    emit(p, OP_Null, 0, newrow, 0);
  } else if (rowid_expr) {
    remap_cursor(p, rowid_expr, scur, w.tabcur);
    if (tab->rowid_alias < 0 || !set[tab->rowid_alias])
      expr_code(p, rowid_expr, newrow);
    else
      emit(p, OP_SCopy, cols + tab->rowid_alias, newrow, 0);
    emit(p, OP_MustBeInt, newrow, 0, 0);
  } else {
    emit(p, OP_SCopy, old, newrow, 0);
  }
  if (tab->rowid_alias >= 0) emit(p, OP_SCopy, newrow, cols + tab->rowid_alias, 0);
  vm_builder_add_text(&p->b, OP_Affinity, cols, ncol, 0, w.caff, ncol);
  code_generated(p, tab, newrow, cols);
  if (trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE)) {
    trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE, changed, old, newrow, stmt_oe, next);
    reseek_row(p, &w, old, next);
  }
  w.changed = changed;
  w.rowid_changed = rowid_expr != NULL;
  check_row(&w, newrow, cols, next);
  writer_keep_unchanged(&w, changed, key_change || fk == 2,
                        trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE));
  build_new_keys(&w, newrow, cols);
  check_unique(&w, newrow, cols, old, rowid_expr != NULL, next);
  if (fk) fk_check(p, tab, old, 0, changed, rowid_expr != NULL);
  /* RETURNING reads the new row now: unchanged columns still point into
   * the old record, which the writes below may move */
  returning_row(p, &ret, newrow, cols);
  own_new_row(p, tab, cols);
  delete_keys(&w, old, old + 1, 1);
  if (rowid_expr && !tab->without_rowid) {
    int same = emit_label(p);
    emit(p, OP_Eq, old, same, newrow);
    emit(p, OP_NotExists, w.tabcur, same, old);
    emit(p, OP_Delete, w.tabcur, 0, 0);
    emit_resolve(p, same);
  }
  if (fk) fk_check(p, tab, 0, newrow, changed, rowid_expr != NULL);
  write_row(&w, newrow, cols, 0);
  if (fk) fk_actions(p, tab, old, newrow, changed, rowid_expr != NULL);
  if (trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER))
    trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER, changed, old, newrow, stmt_oe, next);
  dml_loop_end(p, wi, onepass, &rl, top, next);
  emit_resolve(p, done);
  returning_end(p, &ret);
  return parse_failed(p);
}

int dml_delete(Parse *p, const SqlStmt *s) {
  const SqlDelete *d = &s->u.del;
  if (d->order_by && !d->limit) {
    parse_error(p, "ORDER BY without LIMIT on DELETE");
    return 1;
  }
  if (d->with) {
    attach_with(d->with, d->where);
    attach_with_list(d->with, d->returning);
    attach_with_list(d->with, d->order_by);
  }
  View *view = NULL;
  Table *tab = dml_table(p, d->table->schema, d->table->name, &view);
  if (!tab && view)
    return view_dml(p, view, TRIGGER_DELETE, d->table->alias, NULL, d->where, stmt_oe_of(p, 0));
  if (tab && tab->vtab) return vtab_delete_stmt(p, d, tab);
  if (!tab || parse_failed(p)) return 1;
  int before = trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE);
  int after = trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_AFTER);
  int fk = fk_required(p, tab, NULL, 0);
  if (before || after || fk || d->limit) p->multi_write = 1;
  parse_need_write(p);
  if (!d->where && !before && !after && !fk && !d->returning && !d->limit) {
    for (Index *x = tab->indexes; x; x = x->next)
      if (x != tab->pk_index) emit(p, OP_Clear, (int)x->root, p->idb, 0);
    /* p4: the table's name, for the preupdate hook (rowid tables) */
    if (tab->without_rowid)
      emit(p, OP_Clear, (int)tab->root, p->idb, 1);
    else
      vm_builder_add_text(&p->b, OP_Clear, (int)tab->root, p->idb, 1, tab->name, -1);
    return parse_failed(p);
  }
  SrcList *src = src_single(p, tab, d->table->alias);
  if (!src) return 1;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  trig_nc(p, &nc);
  SqlExpr *where = dml_expr_dup(p, d->where);
  if (where && (resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  RowList rl;
  memset(&rl, 0, sizeof rl);
  WhereInfo *wi = NULL;
  int onepass = ONEPASS_OFF;
  if (d->limit) {
    collect_rows_limited(p, d->table, d->where, d->order_by, d->limit, d->offset, tab, d->with,
                         &rl);
  } else {
    wi = where_plan(p, src, where, NULL, WHERE_ONEPASS);
    if (!wi) return 1;
    onepass = onepass_mode(wi, !before && !after && !fk && !d->returning && !has_subquery(where),
                           NULL);
    if (onepass != ONEPASS_ONE) p->multi_write = 1;
  }
  if (parse_failed(p)) return 1;
  Writer w;
  if (writer_open(p, &w, tab, 0, wi ? src->a[0].cursor : -1)) return 1;
  Returning ret;
  if (returning_setup(p, tab, d->table->alias, d->returning, &ret)) return 1;
  int old = emit_regs(p, tab->ncol + 1);
  int done = emit_label(p), top = 0;
  int next = dml_loop_begin(p, wi, onepass, &w, &rl, src->a[0].cursor, done, &top);
  if (!next) return 1;
  /* the old row: every column for triggers, foreign keys and RETURNING,
   * else only what the index entries hold */
  if (before || after || fk || d->returning)
    read_row(&w, old);
  else
    read_index_cols(&w, old);
  if (before) {
    trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE, NULL, old, 0, 0, next);
    reseek_row(p, &w, old, next);
  }
  if (fk) fk_check(p, tab, old, 0, NULL, 0);
  returning_row(p, &ret, old, old + 1);
  delete_keys(&w, old, old + 1, 0);
  if (tab->without_rowid) {
    int a = emit(p, OP_Delete, w.tabcur, 0, 0);
    vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
  } else {
    int a = vm_builder_add_text(&p->b, OP_Delete, w.tabcur, 0, 0, tab->name, -1);
    vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
  }
  if (fk) fk_actions(p, tab, old, 0, NULL, 0);
  if (after) trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_AFTER, NULL, old, 0, 0, next);
  dml_loop_end(p, wi, onepass, &rl, top, next);
  emit_resolve(p, done);
  returning_end(p, &ret);
  return parse_failed(p);
}
