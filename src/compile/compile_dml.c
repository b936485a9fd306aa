/*
 * compile_dml.c -- the parts INSERT, UPDATE and DELETE share: expression
 * copies, rows in registers, the Writer (cursors and key registers of a
 * table and its indexes, index entries read, deleted and written, REPLACE
 * victims deleted, the row written), generated columns, the target lookup
 * (tables, views through INSTEAD OF triggers), and RETURNING. The statements
 * themselves are compile_insert.c and compile_update.c (UPDATE, DELETE); the
 * constraint checks compile_constraint.c; dml_int.h is their interface.
 *
 * Owns: compile_dml_expr_dup, compile_dml_list_dup, the Writer (compile_dml_writer_open, ...),
 * compile_dml_table, compile_dml_view_dml, dml_returning_*.
 *
 * Row layout: a row is ncol+1 consecutive registers, the rowid first, then
 * every column in table order (the compile_trigger_code layout). The rowid alias
 * column's register holds the rowid; the stored record holds NULL there.
 *
 * Invariants:
 *  1. Every value an old row keeps across a cursor move is a deep copy (Copy
 *     from a scratch block): Column reads are borrowed from the page.
 *  2. Expressions from the schema (DEFAULT, CHECK, index expressions, partial
 *     WHERE) are copied into the Parse arena before resolution: the schema's
 *     AST is shared by every statement and never annotated.
 *  3. A Writer's indexes are in check order (compile_constraint.c invariant
 *     1): the order its cursors, key and record registers are indexed by.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

/* ---------------------------------------------------------------- copies */

SqlExprList *compile_dml_list_dup(Parse *p, const SqlExprList *l) {
  if (!l) return NULL;
  SqlExprList *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  n->n = n->cap = l->n;
  if (l->n > 0) {
    n->a = compile_parse_alloc(p, (size_t)l->n * sizeof *n->a);
    if (!n->a) return NULL;
    for (int i = 0; i < l->n; i++) {
      n->a[i] = l->a[i];
      n->a[i].expr = compile_dml_expr_dup(p, l->a[i].expr);
    }
  }
  return n;
}

SqlExpr *compile_dml_expr_dup(Parse *p, const SqlExpr *e) {
  if (!e) return NULL;
  SqlExpr *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  *n = *e; /* absent operands stay NULL without a call */
  if (e->a) n->a = compile_dml_expr_dup(p, e->a);
  if (e->b) n->b = compile_dml_expr_dup(p, e->b);
  if (e->c) n->c = compile_dml_expr_dup(p, e->c);
  if (e->filter) n->filter = compile_dml_expr_dup(p, e->filter);
  if (e->list) n->list = compile_dml_list_dup(p, e->list);
  if (e->order) n->order = compile_dml_list_dup(p, e->order);
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
    SqlExpr *o = compile_parse_alloc(rb->p, sizeof *o);
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
void compile_dml_bind_row(Parse *p, SqlExpr *e, int cursor, int rowid, int cols) {
  RowBind rb = {p, cursor, rowid, cols, -1};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (e) sql_walk_expr(&w, e);
}

/* Re-point the column references of cursor `from` at cursor `to` (a table
 * cursor positioned on the row): unlike compile_dml_bind_row this keeps them column
 * reads, so a subquery using them stays correlated (evaluated per row). */
void compile_dml_remap_cursor(Parse *p, SqlExpr *e, int from, int to) {
  RowBind rb = {p, from, 0, 0, to};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (e) sql_walk_expr(&w, e);
}
void compile_dml_remap_cursor_select(Parse *p, SqlSelect *s, int from, int to) {
  RowBind rb = {p, from, 0, 0, to};
  SqlWalker w = {bind_expr_cb, bind_select_cb, &rb};
  if (s) sql_walk_select(&w, s);
}

void compile_dml_trig_nc(Parse *p, NameCtx *nc) {
  TrigFrame *f = dml_frame(p);
  if (f && f->trig) {
    nc->trig_tab = p->trig_tab;
    nc->trig_mask = f->trig->event == TRIGGER_INSERT ? 2 : f->trig->event == TRIGGER_DELETE ? 1 : 3;
  }
}

/* A copy of the schema expression e, resolved against tab and bound to the
 * row in registers (rowid, cols). NULL after an error. */
SqlExpr *compile_dml_row_expr(Parse *p, Table *tab, const SqlExpr *e, int rowid, int cols,
                              int flags, const char *ctx) {
  SqlExpr *c = compile_dml_expr_dup(p, e);
  if (!c) return NULL;
  SrcList *src = compile_src_single(p, tab, NULL);
  if (!src) return NULL;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  nc.flags = flags | NC_FROM_SCHEMA;
  nc.err_ctx = ctx;
  if (compile_resolve_expr(p, &nc, c) || parse_failed(p)) return NULL;
  compile_dml_bind_row(p, c, src->a[0].cursor, rowid, cols);
  return c;
}

/* A DEFAULT expression (no column references) into target. */
void compile_dml_code_default(Parse *p, Column *col, int target) {
  if (!col->dflt) {
    emit(p, OP_Null, 0, target, 0);
    return;
  }
  SqlExpr *c = compile_dml_expr_dup(p, col->dflt);
  if (!c) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.flags = NC_NO_COLUMN | NC_NO_SUBQUERY | NC_FROM_SCHEMA;
  if (compile_resolve_expr(p, &nc, c) || parse_failed(p)) return;
  compile_expr_code(p, c, target);
}

int compile_dml_is_rowid_name(const char *z) {
  return !strcasecmp(z, "rowid") || !strcasecmp(z, "oid") || !strcasecmp(z, "_rowid_");
}

/* Affinity string of every column in table order (arena). */
static const char *col_aff_str(Parse *p, const Table *tab) {
  char *z = compile_parse_alloc(p, (size_t)tab->ncol + 1);
  if (!z) return NULL;
  for (int i = 0; i < tab->ncol; i++)
    z[i] = tab->cols[i].affinity ? tab->cols[i].affinity : AFF_BLOB;
  return z;
}

int compile_dml_pick_oe(int stmt_oe, int cons_oe) {
  if (stmt_oe) return stmt_oe;
  if (cons_oe) return cons_oe;
  return SQL_OE_ABORT;
}

/* The statement's own OR clause, overridden in a trigger body by the outer
 * statement's (dml_int.h invariant 2). */
/* 1 if a conflict writing tab under the statement's OR clause may be
 * resolved by REPLACE (deleting rows). */
int compile_dml_may_replace(const Table *tab, int stmt_oe) {
  if (stmt_oe) return stmt_oe == SQL_OE_REPLACE;
  if (tab->pk_conflict == SQL_OE_REPLACE) return 1;
  for (const Index *x = tab->indexes; x; x = x->next)
    if (x->on_conflict == SQL_OE_REPLACE) return 1;
  return 0;
}

int compile_dml_stmt_oe_of(Parse *p, int own) {
  TrigFrame *f = dml_frame(p);
  if (f && f->oe) return f->oe;
  return own;
}

void compile_dml_halt_msg(Parse *p, int code, int oe, const char *msg) {
  vm_builder_add_text(&p->b, OP_Halt, code, oe, 0, msg, -1);
}

/* ---------------------------------------------------------------- writer */

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
    int j = schema_table_column_index(r->tab, e->z);
    if (j >= 0 ? r->chg[j] || (r->gen_changed && r->tab->cols[j].gen != NULL)
               : (r->rowid_changed || !compile_dml_is_rowid_name(e->z)))
      return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

int compile_dml_reads_changed(const Table *tab, SqlExpr *e, const uint8_t *chg, int rowid_changed,
                              int gen_changed) {
  if (!e) return 0;
  ChangedRef r = {tab, chg, rowid_changed, gen_changed};
  SqlWalker wk = {changed_ref_cb, NULL, &r};
  return sql_walk_expr(&wk, e) == SQL_WALK_ABORT;
}

/* The columns an UPDATE assigning changed[] (and the rowid when
 * rowid_changed) changes: those, and every generated column computed from a
 * changed one, to a fixpoint (as SQLite marks them). Arena; NULL on OOM. */
uint8_t *compile_dml_changed_closure(Parse *p, const Table *tab, const uint8_t *changed,
                                     int rowid_changed) {
  uint8_t *chg = compile_parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1));
  if (!chg) return NULL;
  memcpy(chg, changed, (size_t)tab->ncol);
  for (int again = tab->has_generated; again;) {
    again = 0;
    for (int j = 0; j < tab->ncol; j++) {
      if (chg[j] || !tab->cols[j].gen) continue;
      if (compile_dml_reads_changed(tab, tab->cols[j].gen, chg, rowid_changed, 0))
        chg[j] = again = 1;
    }
  }
  return chg;
}

/* 1 if an UPDATE changing the columns chg[] (compile_dml_changed_closure) may change
 * index x's entry: a key column, a column its expressions or its partial
 * WHERE read (SQLite's rule). The rowid changing is the caller's case. */
int compile_dml_index_affected(const Index *x, const uint8_t *chg) {
  const Table *tab = x->table;
  if (x->where && compile_dml_reads_changed(tab, x->where, chg, 0, 0)) return 1;
  for (int j = 0; j < x->ncol; j++) {
    int c = x->cols[j].col;
    if (c == INDEX_COL_EXPR ? compile_dml_reads_changed(tab, x->cols[j].expr, chg, 0, 0)
                            : c >= 0 && chg[c])
      return 1;
  }
  return 0;
}

/* Mark the indexes an UPDATE assigning the columns in changed[] leaves
 * alone (Writer.keep): those no changed column feeds (compile_dml_index_affected). A
 * key change and BEFORE triggers (they may rewrite the row) keep nothing. */
void compile_dml_writer_keep_unchanged(Writer *w, const uint8_t *changed, int key_change,
                                       int before) {
  w->keep = NULL;
  if (key_change || before || w->nidx == 0) return;
  for (int c = 0; c < w->tab->ncol; c++)
    if (changed[c] && w->tab->cols[c].pk) return; /* every entry holds the key */
  const uint8_t *chg = compile_dml_changed_closure(w->p, w->tab, changed, 0);
  uint8_t *keep = compile_parse_alloc(w->p, (size_t)w->nidx);
  if (!keep || !chg) return;
  for (int i = 0; i < w->nidx; i++) {
    const Index *x = w->idx[i];
    keep[i] = x != w->tab->pk_index && !compile_dml_index_affected(x, chg);
  }
  w->keep = keep;
}

int compile_dml_kept(const Writer *w, int i) { return w->keep && w->keep[i]; }

/* The UPSERT clause for index i (i < 0: the rowid), or -1. */
int compile_dml_up_clause(const Writer *w, int i) {
  if (!w->nup) return -1;
  int c = i < 0 ? w->up_ipk : w->up_of[i];
  return c >= 0 ? c : w->up_any;
}

/* Open the writer's cursors: the table's (tabcur < 0; else the caller's
 * cursor tabcur, already open for writing) and every index's but those
 * use (may be NULL) says are not needed. With use->changed, w->keep is
 * compile_dml_writer_keep_unchanged's answer. */
/* The scratch rows, allocated when first needed: most statements use
 * neither, and every register costs each run of the program. */
static int writer_vrow(Writer *w) {
  if (!w->vrow) w->vrow = emit_regs(w->p, w->tab->ncol + 1);
  return w->vrow;
}
static int writer_vtmp(Writer *w) {
  if (!w->vtmp) w->vtmp = emit_regs(w->p, w->tab->ncol + 1);
  return w->vtmp;
}

int compile_dml_writer_open_for(Parse *p, Writer *w, Table *tab, int stmt_oe, int tabcur,
                                const WriterUse *use) {
  memset(w, 0, sizeof *w);
  w->p = p;
  w->tab = tab;
  w->stmt_oe = stmt_oe;
  w->on_victim = -1;
  w->on_scan = -1;
  int n = 0;
  for (Index *x = tab->indexes; x; x = x->next) n++;
  w->nidx = n;
  if (n) {
    w->idx = compile_parse_alloc(p, (size_t)n * sizeof *w->idx);
    w->cur = compile_parse_alloc(p, (size_t)n * sizeof *w->cur);
    w->key = compile_parse_alloc(p, (size_t)n * sizeof *w->key);
    w->rec = compile_parse_alloc(p, (size_t)n * sizeof *w->rec);
    w->okey = compile_parse_alloc(p, (size_t)n * sizeof *w->okey);
    if (!w->idx || !w->cur || !w->key || !w->rec || !w->okey) return 1;
    /* SQLite's list: newest first, REPLACE indexes appended in creation
     * order. */
    Index **all = compile_parse_alloc(p, (size_t)n * sizeof *all);
    if (!all) return 1;
    int k = 0, m = 0;
    for (Index *x = tab->indexes; x; x = x->next) all[k++] = x;
    for (int i = n - 1; i >= 0; i--)
      if (all[i]->on_conflict != SQL_OE_REPLACE) w->idx[m++] = all[i];
    for (int i = 0; i < n; i++)
      if (all[i]->on_conflict == SQL_OE_REPLACE) w->idx[m++] = all[i];
  }
  w->caff = col_aff_str(p, tab);
  compile_parse_need_write(p);
  if (tabcur >= 0) {
    w->tabcur = tabcur;
  } else {
    w->tabcur = emit_cursor(p);
    compile_parse_open_table(p, w->tabcur, tab, 1);
  }
  /* An UPDATE that cannot delete rows (no REPLACE) never touches the
   * indexes it keeps: their cursors stay closed (-1), as SQLite's. */
  uint8_t *keep = NULL;
  if (use && use->changed) {
    compile_dml_writer_keep_unchanged(w, use->changed, use->key_change, use->before);
    keep = w->keep;
    if (compile_dml_may_replace(tab, stmt_oe)) w->keep = NULL; /* victims: every index */
  }
  for (int i = 0; i < n; i++) {
    Index *x = w->idx[i];
    if (x == tab->pk_index) {
      w->cur[i] = w->tabcur;
    } else if (use && x == use->scan && use->scan_cur >= 0) {
      w->cur[i] = use->scan_cur; /* the loop opened it for writing */
      w->on_scan = i;
    } else if (compile_dml_kept(w, i)) {
      w->cur[i] = -1;
    } else {
      w->cur[i] = emit_cursor(p);
      compile_parse_open_index(p, w->cur[i], x, 1);
    }
    w->key[i] = emit_regs(p, x->ncol);
    w->okey[i] = emit_regs(p, x->ncol);
    w->rec[i] = emit_regs(p, 1);
  }
  w->keep = keep; /* vrow, vtmp: at their first use (writer_vrow, writer_vtmp) */
  if (tab->without_rowid && tab->npk) w->pkreg = emit_regs(p, tab->npk);
  return parse_failed(p);
}

int compile_dml_writer_open(Parse *p, Writer *w, Table *tab, int stmt_oe, int tabcur) {
  return compile_dml_writer_open_for(p, w, tab, stmt_oe, tabcur, NULL);
}

/* Affinity string of index x's stored key (arena). */
static const char *index_aff(Parse *p, const Index *x, SqlExpr **exprs) {
  char *z = compile_parse_alloc(p, (size_t)x->ncol + 1);
  if (!z) return NULL;
  for (int j = 0; j < x->ncol; j++) {
    int c = x->cols[j].col;
    if (c == INDEX_COL_ROWID)
      z[j] = AFF_INTEGER;
    else if (c == INDEX_COL_EXPR) {
      char a = exprs && exprs[j] ? compile_expr_affinity(exprs[j]) : 0;
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
    if (c == INDEX_COL_ROWID && w->keys_from_row) {
      if (w->tab->without_rowid)
        emit(p, OP_Null, 0, regs + j, 0);
      else
        emit(p, OP_Rowid, w->tabcur, regs + j, 0);
    } else if (c == INDEX_COL_ROWID) {
      emit(p, OP_SCopy, rowid, regs + j, 0);
    } else if (c == INDEX_COL_EXPR) {
      if (!ex) ex = compile_parse_alloc(p, (size_t)x->ncol * sizeof *ex);
      if (!ex) return;
      ex[j] = compile_dml_row_expr(p, w->tab, x->cols[j].expr, rowid, cols,
                                   NC_IS_INDEX | NC_NO_SUBQUERY, "index expressions");
      if (!ex[j]) return;
      compile_expr_code(p, ex[j], regs + j);
    } else if (w->keys_from_row) {
      compile_code_column(p, w->tab, w->tabcur, c, regs + j);
    } else {
      emit(p, OP_SCopy, cols + c, regs + j, 0);
    }
  }
  if (exprs_out) *exprs_out = ex;
}

/* Partial index x's WHERE for the row (rowid, cols): jumps to *absent (a
 * new label; *done another, for partial_null) when it is not true. 1 after
 * an error. */
static int partial_if_false(Writer *w, const Index *x, int rowid, int cols, int *absent,
                            int *done) {
  Parse *p = w->p;
  SqlExpr *e = compile_dml_row_expr(p, w->tab, x->where, rowid, cols,
                                    NC_IS_PARTIAL | NC_NO_SUBQUERY, "index expressions");
  if (!e) return 1;
  *absent = emit_label(p);
  *done = emit_label(p);
  compile_expr_if_false(p, e, *absent, 1);
  return 0;
}

/* After the record rec of a partial index's key: where its WHERE was not
 * true (partial_if_false's labels), rec is NULL instead. */
static void partial_null(Parse *p, int absent, int done, int rec) {
  emit(p, OP_Goto, 0, done, 0);
  emit_resolve(p, absent);
  emit(p, OP_Null, 0, rec, 0);
  emit_resolve(p, done);
}

/* New key and record of every index for the row (rowid, cols); a partial
 * index whose WHERE fails gets a NULL record. */
void compile_dml_build_new_keys(Writer *w, int rowid, int cols) {
  Parse *p = w->p;
  for (int i = 0; i < w->nidx && !parse_failed(p); i++) {
    Index *x = w->idx[i];
    int skip = 0, done = 0;
    if (compile_dml_kept(w, i)) continue;
    if (x->where && partial_if_false(w, x, rowid, cols, &skip, &done)) return;
    SqlExpr **ex = NULL;
    build_key_regs(w, i, rowid, cols, w->key[i], &ex);
    const char *aff = index_aff(p, x, ex);
    if (!aff) return;
    if (w->cols_aff && !ex && !strchr(aff, AFF_REAL)) /* the values have them already */
      emit(p, OP_MakeRecord, w->key[i], x->ncol, w->rec[i]);
    else
      vm_builder_add_text(&p->b, OP_MakeRecord, w->key[i], x->ncol, w->rec[i], aff, -1);
    if (skip) partial_null(p, skip, done, w->rec[i]);
  }
}

/* Writer.same_keys: the record of index i's old key (registers okey[i],
 * expressions ex from build_key_regs) into orec[i], with the key's
 * affinities as the new key's record got them; NULL when the index is
 * partial and its WHERE is false for the old row (rowid, cols). */
static void old_key_record(Writer *w, int i, SqlExpr **ex, int rowid, int cols) {
  Parse *p = w->p;
  Index *x = w->idx[i];
  if (!w->orec) w->orec = compile_parse_alloc(p, (size_t)w->nidx * sizeof *w->orec);
  if (!w->orec) return;
  const char *aff = index_aff(p, x, ex);
  if (!aff) return;
  int r = w->orec[i] = emit_regs(p, 1), absent = 0, done = 0;
  if (x->where && partial_if_false(w, x, rowid, cols, &absent, &done)) return;
  vm_builder_add_text(&p->b, OP_MakeRecord, w->okey[i], x->ncol, r, aff, -1);
  if (absent) partial_null(p, absent, done, r);
}

/* Delete the index entries of the row (rowid, cols); WITHOUT ROWID: also
 * the row itself when with_pk (its PK index entry is the row). */
void compile_dml_delete_keys(Writer *w, int rowid, int cols, int with_pk) {
  Parse *p = w->p;
  /* every key first: a key read from the row (keys_from_row) is read
   * before any index write clears the table cursor's row cache */
  for (int i = 0; i < w->nidx && !parse_failed(p); i++) {
    Index *x = w->idx[i];
    if ((x == w->tab->pk_index && !with_pk) || compile_dml_kept(w, i)) continue;
    if (i == w->on_victim || i == w->on_scan) continue;
    SqlExpr **ex = NULL;
    build_key_regs(w, i, rowid, cols, w->okey[i], &ex);
    if (w->same_keys && x != w->tab->pk_index) old_key_record(w, i, ex, rowid, cols);
  }
  for (int i = 0; i < w->nidx && !parse_failed(p); i++) {
    Index *x = w->idx[i];
    if ((x == w->tab->pk_index && !with_pk) || compile_dml_kept(w, i)) continue;
    if (i == w->on_victim || i == w->on_scan) {
      emit(p, OP_Delete, w->cur[i], 0, 0); /* the cursor is on the entry */
      continue;
    }
    int same = 0;
    if (w->orec && w->orec[i]) {
      same = emit_label(p);
      if (x->where) emit(p, OP_IsNull, w->orec[i], same, 0); /* the old row had no entry */
      emit(p, OP_Eq, w->rec[i], same, w->orec[i]);
    }
    /* the PK entry of a WITHOUT ROWID table is found by its PK alone: a row
     * written before ALTER TABLE ADD COLUMN has fewer fields than ncol */
    int row = x == w->tab->pk_index && w->tab->without_rowid;
    int a = emit(p, OP_IdxDelete, w->cur[i], w->okey[i], row ? w->tab->npk : x->ncol);
    /* with_pk: an UPDATE rewriting the row; the preupdate hook reports it
     * at the Insert of the new one (compile_dml_write_row) */
    if (row) vm_builder_set_p5(&p->b, a, VM_OPFLAG_ISUPDATE);
    if (same) emit_resolve(p, same);
  }
}

/* Read the row tabcur is on into dst (ncol+1 registers, deep copies). */
void compile_dml_read_row(Writer *w, int dst) {
  Parse *p = w->p;
  Table *tab = w->tab;
  int t = writer_vtmp(w);
  if (tab->without_rowid)
    emit(p, OP_Null, 0, t, 0);
  else
    emit(p, OP_Rowid, w->tabcur, t, 0);
  for (int j = 0; j < tab->ncol; j++) compile_code_column(p, tab, w->tabcur, j, t + 1 + j);
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
    int j = schema_table_column_index(u->tab, e->z);
    if (j >= 0)
      u->mask[j] = 1;
    else if (!compile_dml_is_rowid_name(e->z))
      u->unknown = 1;
  }
  return SQL_WALK_CONTINUE;
}

/* Mark in mask (ncol) the columns the index entries the Writer deletes
 * are built from: key columns, the columns expressions and partial WHEREs
 * name, of every index but the PRIMARY KEY's, those kept and the one
 * deleted where the loop stands. Returns 1 when a name is no column (all
 * are then needed). */
static int index_cols_mask(const Writer *w, uint8_t *mask) {
  const Table *tab = w->tab;
  ColUse u = {tab, mask, 0};
  SqlWalker wk = {col_use_cb, NULL, &u};
  for (int i = 0; i < w->nidx; i++) {
    const Index *x = w->idx[i];
    if (x == tab->pk_index) continue; /* the row itself (compile_dml_delete_keys skips it) */
    if (i == w->on_scan || compile_dml_kept(w, i)) continue; /* no key to build */
    if (x->where) sql_walk_expr(&wk, x->where);
    for (int j = 0; j < x->ncol; j++) {
      int c = x->cols[j].col;
      if (c == INDEX_COL_EXPR)
        sql_walk_expr(&wk, x->cols[j].expr);
      else if (c >= 0)
        mask[c] = 1;
    }
  }
  return u.unknown;
}

/* Read into dst (ncol+1 registers) the rowid and the columns the index
 * entries of the row tabcur is on are built from (index_cols_mask): a
 * DELETE with no trigger, foreign key or RETURNING needs no other. The
 * values are borrowed from the row: valid until the table cursor moves or
 * writes (only index writes come before the row's own delete). */
void compile_dml_read_index_cols(Writer *w, int dst) {
  Parse *p = w->p;
  Table *tab = w->tab;
  if (w->nidx == 0) return;
  uint8_t *mask = compile_parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1));
  if (!mask) return;
  int all = index_cols_mask(w, mask);
  if (tab->without_rowid)
    emit(p, OP_Null, 0, dst, 0);
  else
    emit(p, OP_Rowid, w->tabcur, dst, 0);
  for (int j = 0; j < tab->ncol; j++)
    if (mask[j] || all) compile_code_column(p, tab, w->tabcur, j, dst + 1 + j);
}

void compile_dml_delete_row_keys(Writer *w, int dst) {
  const Table *tab = w->tab;
  int expr = 0; /* an expression key: computed from the columns read into dst */
  for (int i = 0; i < w->nidx && !expr; i++) {
    const Index *x = w->idx[i];
    if (x == tab->pk_index || i == w->on_scan || i == w->on_victim || compile_dml_kept(w, i))
      continue;
    for (int j = 0; j < x->ncol; j++) expr |= x->cols[j].col == INDEX_COL_EXPR;
  }
  if (expr) compile_dml_read_index_cols(w, dst);
  w->keys_from_row = 1;
  compile_dml_delete_keys(w, dst, dst + 1, 0);
  w->keys_from_row = 0;
}

typedef struct RefUse {
  int cursor;
  int ncol;
  uint8_t *mask;
} RefUse;

static int ref_use_cb(SqlWalker *wk, SqlExpr *e) {
  RefUse *u = wk->arg;
  if (e->op == SQL_E_COLREF && e->cursor == u->cursor && e->column >= 0 && e->column < u->ncol)
    u->mask[e->column] = 1;
  return SQL_WALK_CONTINUE;
}

void compile_dml_read_row_borrowed(Writer *w, int dst, const uint8_t *changed, SqlExpr **set,
                                   int cursor) {
  Parse *p = w->p;
  Table *tab = w->tab;
  uint8_t *mask = compile_parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1));
  if (!mask) return;
  int all = index_cols_mask(w, mask);
  RefUse ru = {cursor, tab->ncol, mask};
  SqlWalker wk = {ref_use_cb, NULL, &ru};
  for (int j = 0; j < tab->ncol; j++)
    if (set[j]) sql_walk_expr(&wk, set[j]);
  emit(p, OP_Rowid, w->tabcur, dst, 0);
  for (int j = 0; j < tab->ncol; j++)
    if (!changed[j] || mask[j] || all) compile_code_column(p, tab, w->tabcur, j, dst + 1 + j);
}

int compile_dml_record_applies_affinity(const Writer *w) {
  const Table *tab = w->tab;
  if (tab->strict || tab->ncheck > 0 || tab->has_generated) return 0;
  for (int i = 0; i < w->nidx; i++) {
    const Index *x = w->idx[i];
    if (compile_dml_kept(w, i)) continue;
    if (x->where) return 0;
    for (int j = 0; j < x->ncol; j++)
      if (x->cols[j].col == INDEX_COL_EXPR) return 0;
  }
  return 1;
}

/* Before an UPDATE writes the row: AFTER UPDATE triggers read the new
 * values afterwards, and a SET value read from the row itself (`c = CASE
 * ... t.c ...`) still points into the record the write moves: deep copies
 * into scratch registers, borrowed back (valid for this row). */
void compile_dml_own_new_row(Parse *p, Table *tab, int cols) {
  if (!compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER)) return;
  int tmp = emit_regs(p, tab->ncol);
  emit(p, OP_Copy, cols, tmp, tab->ncol - 1);
  for (int j = 0; j < tab->ncol; j++) emit(p, OP_SCopy, tmp + j, cols + j, 0);
}

/* Delete the row tabcur is on (REPLACE victims): index entries, then the
 * row. count: counts as a change. keep_row: only the index entries go, the
 * row is left for the Insert of the new row with the same rowid to
 * overwrite (the caller knows that Insert follows). */
int compile_dml_victim_triggers(Parse *p, const Table *tab) {
  return p->env && p->env->recursive_triggers &&
         (compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE) ||
          compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_AFTER));
}

/* A rowid table's REPLACE victim with DELETE triggers (recursive_triggers
 * on, as SQLite fires them only then): BEFORE triggers with the row as
 * old, the row sought again (a trigger may have moved or deleted it) and
 * read again for its index keys, the delete, AFTER triggers; counted in
 * trigcnt so the REPLACE constraints are checked again. RAISE(IGNORE)
 * skips the victim. */
static void delete_victim_triggered(Writer *w, int count, int fk) {
  Parse *p = w->p;
  int vrow = writer_vrow(w);
  const Table *tab = w->tab;
  int skip = emit_label(p);
  if (w->trigcnt) emit(p, OP_AddImm, w->trigcnt, 1, 0); /* before: IGNORE keeps the victim */
  compile_trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE, NULL, vrow, 0, SQL_OE_REPLACE, skip);
  if (fk) compile_fk_check(p, tab, vrow, 0, NULL, 0);
  emit(p, OP_NotExists, w->tabcur, skip, vrow);
  int now = emit_regs(p, tab->ncol + 1); /* the row as it is now: its index keys */
  compile_dml_delete_row_keys(w, now);
  int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, tab->name, -1);
  if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
  if (fk) compile_fk_actions(p, tab, vrow, 0, NULL, 0);
  compile_trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_AFTER, NULL, vrow, 0, SQL_OE_REPLACE, skip);
  emit_resolve(p, skip);
}

void compile_dml_delete_current(Writer *w, int count, int keep_row) {
  Parse *p = w->p;
  int vrow = writer_vrow(w);
  uint8_t *keep = w->keep;
  w->keep = NULL;                                   /* a victim loses every index entry */
  int fk = compile_fk_required(p, w->tab, NULL, 0); /* a victim is deleted as by DELETE (FK) */
  int trig = compile_dml_victim_triggers(p, w->tab);
  if (fk || trig) {
    compile_dml_read_row(w, vrow);
    if (trig && !w->tab->without_rowid) {
      delete_victim_triggered(w, count, fk);
      w->keep = keep;
      return;
    }
  } else {
    /* The table cursor is on the victim (NotExists, or for a WITHOUT
     * ROWID table the PRIMARY KEY's NoConflict or NotFound) and only
     * index writes through other cursors come before its Delete: no
     * re-seek, and only the index entries need the row's values. */
    compile_dml_delete_row_keys(w, vrow);
    /* keep_row: a no-op Delete, so that the preupdate hook still sees the
     * victim go (SQLite's OPFLAG_ISNOOP) */
    int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, w->tab->name, -1);
    if (keep_row && !w->tab->without_rowid)
      vm_builder_set_p5(&p->b, a, VM_OPFLAG_ISNOOP);
    else if (count)
      vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    w->keep = keep;
    return;
  }
  if ((fk || trig) && w->trigcnt) emit(p, OP_AddImm, w->trigcnt, 1, 0);
  int wskip = trig ? emit_label(p) : 0; /* WITHOUT ROWID victim with triggers: */
  if (trig)                             /* BEFORE triggers first (the row in vrow) */
    compile_trigger_code(p, w->tab, TRIGGER_DELETE, TRIGGER_BEFORE, NULL, vrow, 0, SQL_OE_REPLACE,
                         wskip);
  if (fk) compile_fk_check(p, w->tab, vrow, 0, NULL, 0);
  if (w->tab->without_rowid) {
    /* the PK entry is the row: reposition on it by its full key, delete */
    compile_dml_delete_keys(w, vrow, vrow + 1, 0);
    int i = 0;
    while (i < w->nidx && w->idx[i] != w->tab->pk_index) i++;
    if (i == w->nidx) {
      if (trig) emit_resolve(p, wskip);
      w->keep = keep;
      return;
    }
    int skip = emit_label(p);
    build_key_regs(w, i, vrow, vrow + 1, w->okey[i], NULL);
    vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, skip, w->okey[i], w->tab->npk);
    int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, w->tab->name, -1);
    if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    emit_resolve(p, skip);
    if (fk) compile_fk_actions(p, w->tab, vrow, 0, NULL, 0);
    if (trig) {
      compile_trigger_code(p, w->tab, TRIGGER_DELETE, TRIGGER_AFTER, NULL, vrow, 0, SQL_OE_REPLACE,
                           wskip);
      emit_resolve(p, wskip);
    }
  } else {
    compile_dml_delete_keys(w, vrow, vrow + 1, 0);
    int skip = emit_label(p);
    emit(p, OP_NotExists, w->tabcur, skip, vrow);
    int a = vm_builder_add_text(&p->b, OP_Delete, w->tabcur, 0, 0, w->tab->name, -1);
    if (count) vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
    emit_resolve(p, skip);
    if (fk) compile_fk_actions(p, w->tab, vrow, 0, NULL, 0);
  }
  w->keep = keep;
}

/* Insert record rec as rowid into the table (a counted change).
 * lastrowid = 0: an UPDATE (or upsert) writing the row (the update hook
 * says so). */
static void insert_record(Writer *w, int rec, int rowid, int lastrowid) {
  Parse *p = w->p;
  int a = vm_builder_add_text(&p->b, OP_Insert, w->tabcur, rec, rowid, w->tab->name, -1);
  vm_builder_set_p5(&p->b, a,
                    VM_OPFLAG_NCHANGE | (lastrowid ? VM_OPFLAG_LASTROWID : VM_OPFLAG_ISUPDATE) |
                        (lastrowid && w->append ? VM_OPFLAG_APPEND : 0));
}

/* Write the new row: index entries, then the record. lastrowid: INSERT. */
void compile_dml_write_row(Writer *w, int rowid, int cols, int lastrowid) {
  Parse *p = w->p;
  Table *tab = w->tab;
  int pkrec = 0;
  for (int i = 0; i < w->nidx; i++) {
    if (w->idx[i] == tab->pk_index) {
      pkrec = w->rec[i];
      continue;
    }
    if (compile_dml_kept(w, i)) continue;
    int skip = emit_label(p);
    if (w->idx[i]->where)
      emit(p, OP_IsNull, w->rec[i], skip, 0); /* a partial index's NULL record */
    if (w->orec && w->orec[i]) emit(p, OP_Eq, w->rec[i], skip, w->orec[i]); /* entry unchanged */
    if (w->keyregs)
      vm_builder_add_i4(&p->b, OP_IdxInsert, w->cur[i], w->rec[i], w->key[i], w->idx[i]->ncol);
    else
      emit(p, OP_IdxInsert, w->cur[i], w->rec[i], 0);
    emit_resolve(p, skip);
  }
  if (tab->without_rowid) {
    /* p3 (the NULL rowid) is not read: the key is the record */
    int a = vm_builder_add_text(&p->b, OP_Insert, w->tabcur, pkrec, rowid, tab->name, -1);
    vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE | (lastrowid ? 0 : VM_OPFLAG_ISUPDATE));
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
    if (w->cols_aff && !memchr(w->caff, AFF_REAL, (size_t)n)) /* applied already */
      emit(p, OP_MakeRecord, cols, n, rec);
    else
      vm_builder_add_text(&p->b, OP_MakeRecord, cols, n, rec, w->caff, n);
    if (tab->rowid_alias >= 0) emit(p, OP_SCopy, rowid, cols + tab->rowid_alias, 0);
    insert_record(w, rec, rowid, lastrowid);
    return;
  }
  int base = emit_regs(p, n > 0 ? n : 1);
  char *aff = compile_parse_alloc(p, (size_t)n + 1);
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
  if (w->cols_aff && !strchr(aff, AFF_REAL)) /* applied already */
    emit(p, OP_MakeRecord, base, n, rec);
  else
    vm_builder_add_text(&p->b, OP_MakeRecord, base, n, rec, aff, -1);
  insert_record(w, rec, rowid, lastrowid);
}

/* Generated columns of the row (after the others are known). */
void compile_dml_code_generated(Parse *p, Table *tab, int rowid, int cols) {
  if (!tab->has_generated) return;
  for (int j = 0; j < tab->ncol && !parse_failed(p); j++) {
    Column *c = &tab->cols[j];
    if (!c->gen) continue;
    SqlExpr *e = compile_dml_row_expr(p, tab, c->gen, rowid, cols, NC_IS_GENCOL | NC_NO_SUBQUERY,
                                      "generated columns");
    if (!e) return;
    compile_expr_code(p, e, cols + j);
    char a = c->affinity ? c->affinity : AFF_BLOB;
    vm_builder_add_text(&p->b, OP_Affinity, cols + j, 1, 0, &a, 1);
  }
}

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
void compile_dml_attach_with(SqlWith *with, SqlExpr *e) {
  SqlWalker w = {with_expr_cb, with_select_cb, with};
  if (with && e) sql_walk_expr(&w, e);
}
void compile_dml_attach_with_list(SqlWith *with, SqlExprList *l) {
  for (int i = 0; with && l && i < l->n; i++) compile_dml_attach_with(with, l->a[i].expr);
}

/* ---------------------------------------------------------------- lookup */

/* A write to the eponymous table of a module without xUpdate, which SQLite
 * finds under any schema name: "table X may not be modified". 1 when
 * refused (or out of memory), 0 when there is no such module. */
static int eponymous_refused(Parse *p, const char *name) {
  const char *epo = compile_vtab_eponymous_readonly(p, name);
  if (epo) compile_parse_error(p, "table %s may not be modified", epo);
  return epo != NULL || parse_failed(p);
}

Table *compile_dml_table(Parse *p, const char *schema, const char *name, View **view) {
  *view = NULL;
  if (schema &&
      (compile_parse_find_db(p, schema) < 0 || compile_parse_find_db(p, schema) != p->idb)) {
    if (!eponymous_refused(p, name)) compile_parse_error(p, "no such table: %s.%s", schema, name);
    return NULL;
  }
  Table *t = compile_parse_schema_table(p, p->schema, name);
  if (t) {
    if (t->is_schema && !(p->env && p->env->writable_schema)) {
      compile_parse_error(p, "table %s may not be modified", "sqlite_master");
      return NULL;
    }
    if (compile_vtab_shadow_refused(p, p->schema, t, "modified")) return NULL;
    return t->vtab_module ? compile_parse_vtab_connect(p, t, p->idb) : t; /* compile_vtab_dml.c */
  }
  View *v = schema_find_view(p->schema, name);
  if (v) {
    *view = v;
    return NULL;
  }
  if (eponymous_refused(p, name)) return NULL;
  if (schema)
    compile_parse_error(p, "no such table: %s.%s", schema, name);
  else if (p->scope_db1 > 0) /* a trigger's step: the trigger's database */
    compile_parse_error(p, "no such table: %s.%s", compile_parse_db_name(p, p->scope_db1 - 1),
                        name);
  else
    compile_parse_error(p, "no such table: %s", name);
  return NULL;
}

/* A view's Table (for INSTEAD OF triggers) and its SELECT, or NULL when it
 * has no INSTEAD OF trigger for op ("cannot modify v because it is a
 * view"). */
static SrcList *view_src(Parse *p, View *v, int op, const char *alias) {
  Table fake;
  memset(&fake, 0, sizeof fake);
  fake.name = v->name;
  if (!compile_trigger_exists(p, &fake, op, TRIGGER_INSTEAD_OF)) {
    compile_parse_error(p, "cannot modify %s because it is a view", v->name);
    return NULL;
  }
  SqlSrcList *sl = compile_parse_alloc(p, sizeof *sl);
  SqlSrcItem *it = compile_parse_alloc(p, sizeof *it);
  if (!sl || !it) return NULL;
  it->name = v->name;
  it->alias = alias;
  sl->n = sl->cap = 1;
  sl->a = it;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  compile_dml_trig_nc(p, &nc);
  SrcList *src = compile_src_from_ast(p, sl, p->nested ? &nc : NULL);
  if (!src || src->n != 1 || parse_failed(p)) return NULL;
  return src;
}

Table *compile_dml_view_table(Parse *p, View *v, int op) {
  SrcList *src = view_src(p, v, op, NULL);
  return src ? src->a[0].tab : NULL;
}

/* UPDATE (set != NULL) or DELETE of a view: its INSTEAD OF triggers run for
 * every row the WHERE selects. The rows (old values, then new ones) are
 * collected into an ephemeral table first: the triggers may change the
 * tables the view reads. */
/* A SET list (name = expr, (a, b) = (x, y)) of a view's UPDATE or an
 * UPSERT's DO UPDATE: each value duplicated and resolved in nc, into
 * set[column] with changed[column] = 1. 1 after compile_parse_error. */
int compile_dml_set_list_resolve(Parse *p, const SqlExprList *setl, Table *tab, NameCtx *nc,
                                 SqlExpr **set, uint8_t *changed) {
  for (int i = 0; i < setl->n; i++) {
    SqlExprItem *it = &setl->a[i];
    int nn = it->nnames > 0 ? it->nnames : 1;
    for (int k = 0; k < nn; k++) {
      const char *nm = it->nnames > 0 ? it->names[k] : it->name;
      SqlExpr *e = it->expr;
      if (it->nnames > 0) {
        if (e->op != SQL_E_ROW || !e->list || e->list->n != it->nnames) {
          compile_parse_error(p, "%d columns assigned %d values", it->nnames,
                              e->op == SQL_E_ROW && e->list ? e->list->n : 1);
          return 1;
        }
        e = e->list->a[k].expr;
      }
      int j = schema_table_column_index(tab, nm);
      if (j < 0) {
        compile_parse_error(p, "no such column: %s", nm);
        return 1;
      }
      e = compile_dml_expr_dup(p, e);
      if (!e || compile_resolve_expr(p, nc, e) || parse_failed(p)) return 1;
      set[j] = e;
      changed[j] = 1;
    }
  }
  return 0;
}

int compile_dml_view_dml(Parse *p, View *v, int op, const char *alias, const SqlExprList *setl,
                         const SqlExpr *where_ast, int stmt_oe) {
  SrcList *src = view_src(p, v, op, alias);
  if (!src) return 1;
  Table *vt = src->a[0].tab;
  int ncol = vt->ncol;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  compile_dml_trig_nc(p, &nc);
  SqlExpr **set = NULL;
  uint8_t *changed = NULL;
  if (setl) {
    set = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *set);
    changed = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1));
    if (!set || !changed) return 1;
    if (compile_dml_set_list_resolve(p, setl, vt, &nc, set, changed)) return 1;
  }
  SqlExpr *where = compile_dml_expr_dup(p, where_ast);
  if (where && (compile_resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  int nrec = setl ? 2 * ncol : ncol;
  int eph = emit_cursor(p), vals = emit_regs(p, nrec > 0 ? nrec : 1), rec = emit_regs(p, 1),
      rid = emit_regs(p, 1);
  emit(p, OP_OpenEphemeral, eph, nrec, 0);
  WhereInfo *wi = compile_where_begin(p, src, where, NULL, 0);
  if (!wi) return 1;
  int cur = src->a[0].cursor;
  for (int j = 0; j < ncol; j++) compile_code_column(p, vt, cur, j, vals + j);
  for (int j = 0; setl && j < ncol; j++) {
    if (set[j])
      compile_expr_code(p, set[j], vals + ncol + j);
    else
      emit(p, OP_SCopy, vals + j, vals + ncol + j, 0);
  }
  emit(p, OP_MakeRecord, vals, nrec, rec);
  emit(p, OP_NewRowid, eph, rid, 0);
  emit(p, OP_Insert, eph, rec, rid);
  compile_where_end(wi);
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
  compile_trigger_code(p, vt, op, TRIGGER_INSTEAD_OF, changed, old, nw, stmt_oe, next);
  emit_resolve(p, next);
  emit(p, OP_Next, eph, top, 0);
  emit_resolve(p, done);
  return parse_failed(p);
}

/* ------------------------------------------------------------- RETURNING */

int compile_dml_returning_setup(Parse *p, Table *tab, const char *alias, const SqlExprList *ast,
                                Returning *r) {
  memset(r, 0, sizeof *r);
  if (!ast) return 0;
  int n = 0;
  for (int i = 0; i < ast->n; i++) n += ast->a[i].expr->op == SQL_E_STAR ? tab->ncol : 1;
  SqlExprList *l = compile_parse_alloc(p, sizeof *l);
  if (!l) return 1;
  l->a = compile_parse_alloc(p, (size_t)(n ? n : 1) * sizeof *l->a);
  if (!l->a) return 1;
  l->cap = n;
  for (int i = 0; i < ast->n; i++) {
    const SqlExprItem *it = &ast->a[i];
    if (it->expr->op == SQL_E_STAR) {
      if (it->expr->table) { /* SQLite 3.40.1 refuses every TABLE.* here */
        compile_parse_error(p, "RETURNING may not use \"TABLE.*\" wildcards");
        return 1;
      }
      for (int j = 0; j < tab->ncol; j++) {
        if (tab->cols[j].hidden == COL_HIDDEN) continue; /* a virtual table's hidden columns */
        SqlExpr *e = compile_parse_alloc(p, sizeof *e);
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
      l->a[l->n].expr = compile_dml_expr_dup(p, it->expr);
      if (!l->a[l->n].expr) return 1;
      if (!it->name) {
        const SqlExpr *e = it->expr;
        if (e->op == SQL_E_ID || e->op == SQL_E_COLUMN) {
          int j = schema_table_column_index(tab, e->z);
          l->a[l->n].name = j >= 0 ? tab->cols[j].name : e->z;
        } else {
          char *z = compile_parse_alloc(p, (size_t)it->span.len + 1);
          if (!z) return 1;
          memcpy(z, p->sql + it->span.start, (size_t)it->span.len);
          l->a[l->n].name = z;
        }
      }
      l->n++;
    }
  }
  SrcList *src = compile_src_single(p, tab, alias);
  if (!src) return 1;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  if (compile_resolve_list(p, &nc, l) || parse_failed(p)) return 1;
  r->list = l;
  r->n = l->n;
  r->cursor = src->a[0].cursor;
  r->eph = emit_cursor(p);
  r->vals = emit_regs(p, r->n);
  emit(p, OP_OpenEphemeral, r->eph, r->n, 0);
  if (!p->nested) {
    p->cols = compile_parse_alloc(p, (size_t)r->n * sizeof *p->cols);
    if (!p->cols) return 1;
    for (int i = 0; i < r->n; i++) p->cols[i].name = l->a[i].name;
    p->ncol = r->n;
  }
  return 0;
}

/* 1 if e is a plain reference to a column of cursor (under COLLATE or a
 * unary +, which SQLite drops when coding). */
static int bare_column(const SqlExpr *e, int cursor) {
  while (e && (e->op == SQL_E_COLLATE || (e->op == SQL_E_UNARY && e->sub == TK_PLUS))) e = e->a;
  return e && e->op == SQL_E_COLREF && e->cursor == cursor;
}

void compile_dml_returning_row_bare(Parse *p, Returning *r, int rowid, int cols, int bare) {
  if (!r->list) return;
  SqlExprList *l = compile_dml_list_dup(p, r->list);
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    int c = bare_column(l->a[i].expr, r->cursor) ? bare : cols;
    compile_dml_bind_row(p, l->a[i].expr, r->cursor, rowid, c);
  }
  compile_expr_code_list(p, l, r->vals);
  int rec = emit_regs(p, 1), rid = emit_regs(p, 1);
  emit(p, OP_MakeRecord, r->vals, r->n, rec);
  emit(p, OP_NewRowid, r->eph, rid, 0);
  emit(p, OP_Insert, r->eph, rec, rid);
}

/* Buffer one RETURNING row computed from the row in registers. */
void compile_dml_returning_row(Parse *p, Returning *r, int rowid, int cols) {
  compile_dml_returning_row_bare(p, r, rowid, cols, cols);
}

/* After the statement: hand the buffered rows out. */
void compile_dml_returning_end(Parse *p, Returning *r) {
  if (!r->list) return;
  int done = emit_label(p), top = emit_label(p);
  emit(p, OP_Rewind, r->eph, done, 0);
  emit_resolve(p, top);
  for (int i = 0; i < r->n; i++) emit(p, OP_Column, r->eph, i, r->vals + i);
  emit(p, OP_ResultRow, r->vals, r->n, 0);
  emit(p, OP_Next, r->eph, top, 0);
  emit_resolve(p, done);
}
