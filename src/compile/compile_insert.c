/*
 * compile_insert.c -- INSERT: VALUES rows through one row routine
 * (insert_row), INSERT ... SELECT, DEFAULT VALUES, AUTOINCREMENT's
 * sqlite_sequence, UPSERT (ON CONFLICT targets and DO UPDATE/NOTHING),
 * INSERT into a view through INSTEAD OF triggers, RETURNING.
 *
 * Owns: compile_dml_insert.
 *
 * Invariants:
 *  1. Column affinity is applied to the new row (Affinity) before BEFORE
 *     triggers and constraint checks, so index keys, CHECK expressions and
 *     the record see the converted values (as SQLite does). When nothing
 *     but the record reads them (no trigger, CHECK, STRICT, generated
 *     column, index besides a WITHOUT ROWID table's PRIMARY KEY, foreign
 *     key, UPSERT or RETURNING) the op is left out: the record's MakeRecord
 *     applies the same affinities.
 *  2. INSERT ... SELECT inserts each row as the SELECT produces it, unless
 *     the SELECT's code opens the target table or one of its indexes, or the
 *     target has INSERT triggers or RETURNING: then every row is staged in
 *     an ephemeral table first (SQLite 3.40's rule).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

/* ---------------------------------------------------------------- INSERT */

typedef struct InsertCtx {
  Table *tab;
  int is_view;
  int *colmap; /* column -> value index, or -1 */
  int ipk;     /* value index of the rowid, or -1 */
  int vals;
  int *valreg; /* NULL, or value i's register (the row's own register of
                  its column where it has one: no copy) */
  int newrow;  /* nonzero: the row's registers; vals = newrow + 1 when the
                  values are the columns in table order (no copy) */
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
  compile_parse_open_table(p, ic->seqcur, ic->seqtab, 1);
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
  compile_dml_read_row(w, old);
  for (int j = 0; j < ncol; j++) {
    if (u->set[j]) {
      compile_dml_remap_cursor(p, u->set[j], u->cur, w->tabcur);
      compile_dml_bind_row(p, u->set[j], u->excl, newrow, newrow + 1);
      compile_expr_code(p, u->set[j], cols + j);
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
    compile_dml_remap_cursor(p, u->where, u->cur, w->tabcur);
    compile_dml_bind_row(p, u->where, u->excl, newrow, newrow + 1);
    compile_expr_if_false(p, u->where, ignore, 1);
  }
  vm_builder_add_text(&p->b, OP_Affinity, cols, ncol, 0, w->caff, ncol);
  compile_dml_code_generated(p, tab, nrow, cols);
  if (compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE)) {
    compile_trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE, u->changed, old, nrow, 0, ignore);
    compile_dml_reseek_row(p, w, old, ignore);
  }
  /* the update's own conflicts: ABORT, no UPSERT */
  Writer saved = *w;
  w->nup = 0;
  w->stmt_oe = SQL_OE_ABORT;
  w->trigcnt = 0;
  w->changed = u->changed;
  w->rowid_changed = key_change;
  compile_dml_check_row(w, nrow, cols, ignore);
  int fk = compile_fk_required(p, tab, u->changed, key_change);
  compile_dml_writer_keep_unchanged(w, u->changed, key_change || fk == 2,
                                    compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE));
  compile_dml_build_new_keys(w, nrow, cols);
  compile_dml_check_unique(w, nrow, cols, old, key_change, ignore);
  if (fk) compile_fk_check(p, tab, old, 0, u->changed, key_change);
  /* RETURNING reads the new row now: unchanged columns still point into
   * the old record, which the writes below may move */
  compile_dml_returning_row(p, &ic->ret, nrow, cols);
  compile_dml_own_new_row(p, tab, cols);
  compile_dml_delete_keys(w, old, old + 1, 1);
  if (key_change) {
    int same = emit_label(p);
    emit(p, OP_Eq, old, same, nrow);
    emit(p, OP_NotExists, w->tabcur, same, old);
    emit(p, OP_Delete, w->tabcur, 0, 0);
    emit_resolve(p, same);
  }
  if (fk) compile_fk_check(p, tab, 0, nrow, u->changed, key_change);
  compile_dml_write_row(w, nrow, cols, 0);
  if (fk) compile_fk_actions(p, tab, old, nrow, u->changed, key_change);
  *w = saved;
  if (compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER))
    compile_trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER, u->changed, old, nrow, 0, ignore);
}

/* The register value i of a row is coded into. */
static int val_reg(const InsertCtx *ic, int i) { return ic->valreg ? ic->valreg[i] : ic->vals + i; }

static void insert_row(Parse *p, InsertCtx *ic, int ignore) {
  Table *tab = ic->tab;
  int newrow = ic->newrow ? ic->newrow : emit_regs(p, tab->ncol + 1), cols = newrow + 1;
  for (int j = 0; j < tab->ncol && !parse_failed(p); j++) {
    if (ic->colmap[j] >= 0 && val_reg(ic, ic->colmap[j]) == cols + j)
      continue; /* the value is in place */
    if (ic->colmap[j] >= 0)
      emit(p, OP_SCopy, val_reg(ic, ic->colmap[j]), cols + j, 0);
    else if (j == tab->rowid_alias && !ic->is_view && !tab->without_rowid)
      continue; /* the rowid is copied there below, once it is known */
    else if (tab->cols[j].gen)
      emit(p, OP_Null, 0, cols + j, 0);
    else
      compile_dml_code_default(p, &tab->cols[j], cols + j);
  }
  if (parse_failed(p)) return;
  if (ic->is_view) {
    emit(p, OP_Null, 0, newrow, 0);
    compile_trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_INSTEAD_OF, NULL, 0, newrow, ic->w.stmt_oe,
                         ignore);
    return;
  }
  int before = compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE);
  int after = compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER);
  int secondary = 0; /* an index entry besides the row (each would apply them again) */
  for (int i = 0; i < ic->w.nidx; i++) secondary |= ic->w.idx[i] != tab->pk_index;
  if (!before && !after && !secondary && !ic->w.nup && !ic->ret.list &&
      !compile_fk_required(p, tab, NULL, 0) && compile_dml_record_applies_affinity(&ic->w)) {
    /* invariant 1's exception: only the record reads the values, and its
     * MakeRecord applies the same affinities; a rowid value coded into its
     * column's register is read by MustBeInt below */
    if (ic->ipk >= 0 && tab->rowid_alias >= 0 && val_reg(ic, ic->ipk) == cols + tab->rowid_alias)
      vm_builder_add_text(&p->b, OP_Affinity, cols + tab->rowid_alias, 1, 0,
                          ic->w.caff + tab->rowid_alias, 1);
  } else {
    vm_builder_add_text(&p->b, OP_Affinity, cols, tab->ncol, 0, ic->w.caff, tab->ncol);
    ic->w.cols_aff = 1;
  }
  if (before) {
    if (ic->ipk >= 0) {
      int l = emit_label(p);
      emit(p, OP_SCopy, val_reg(ic, ic->ipk), newrow, 0);
      emit(p, OP_NotNull, newrow, l, 0);
      emit(p, OP_Integer, -1, newrow, 0);
      emit_resolve(p, l);
      emit(p, OP_MustBeInt, newrow, 0, 0);
    } else {
      emit(p, OP_Integer, -1, newrow, 0);
    }
    if (tab->rowid_alias >= 0) emit(p, OP_SCopy, newrow, cols + tab->rowid_alias, 0);
    compile_dml_code_generated(p, tab, newrow, cols);
    compile_trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE, NULL, 0, newrow, ic->w.stmt_oe,
                         ignore);
  }
  if (tab->without_rowid) {
    emit(p, OP_Null, 0, newrow, 0);
  } else if (ic->ipk >= 0) {
    int have = emit_label(p), got = emit_label(p);
    emit(p, OP_SCopy, val_reg(ic, ic->ipk), newrow, 0);
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
  compile_dml_code_generated(p, tab, newrow, cols);
  compile_dml_check_row(&ic->w, newrow, cols, ignore);
  compile_dml_build_new_keys(&ic->w, newrow, cols);
  compile_dml_check_unique(&ic->w, newrow, cols, 0, ic->ipk >= 0, ignore);
  compile_fk_check(p, tab, 0, newrow, NULL, 0);
  compile_dml_returning_row(p, &ic->ret, newrow,
                            cols); /* before the write moves any source record */
  ic->w.keyregs = !compile_dml_may_replace(tab, ic->w.stmt_oe) ||
                  (!compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE) &&
                   !compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_AFTER) &&
                   !compile_fk_required(p, tab, NULL, 0));
  ic->w.append = !tab->without_rowid && ic->ipk < 0;
  compile_dml_write_row(&ic->w, newrow, cols, 1);
  ic->w.keyregs = 0;
  ic->w.append = 0;
  ic->w.cols_aff = 0;
  if (after)
    compile_trigger_code(p, tab, TRIGGER_INSERT, TRIGGER_AFTER, NULL, 0, newrow, ic->w.stmt_oe,
                         ignore);
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
  int idb = compile_parse_table_db(p, tab);
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
  int *cols = compile_parse_alloc(p, (size_t)n * sizeof(int));
  if (!cols) return -1;
  for (int i = 0; i < n; i++) {
    const SqlExpr *e = u->target->a[i].expr;
    while (e && e->op == SQL_E_COLLATE) e = e->a;
    cols[i] = e && e->op == SQL_E_ID ? schema_table_column_index(tab, e->z) : INDEX_COL_EXPR;
    if (cols[i] < 0 && e && e->op == SQL_E_ID && compile_dml_is_rowid_name(e->z) &&
        !tab->without_rowid)
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
    compile_parse_error(
        p, "%d%s ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint", n1, sfx);
  } else {
    compile_parse_error(p,
                        "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint");
  }
  return -1;
}

/* Match the UPSERT targets, resolve each DO UPDATE's SET and WHERE. */
static int upsert_setup(Parse *p, InsertCtx *ic, const SqlInsert *ins) {
  Table *tab = ic->tab;
  Writer *w = &ic->w;
  int nup = 0, front = 0;
  for (const SqlUpsert *u = ins->upsert; u; u = u->next) nup++;
  w->up_of = compile_parse_alloc(p, (size_t)(w->nidx ? w->nidx : 1) * sizeof(int));
  w->up_nothing = compile_parse_alloc(p, (size_t)nup * sizeof(int));
  w->up_label = compile_parse_alloc(p, (size_t)nup * sizeof(int));
  ic->ups = compile_parse_alloc(p, (size_t)nup * sizeof *ic->ups);
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
    SrcList *s1 = compile_src_single(p, tab, ins->alias);
    SrcList *s2 = compile_src_single(p, tab, "excluded");
    if (!s1 || !s2) return 1;
    ud->cur = s1->a[0].cursor;
    ud->excl = s2->a[0].cursor;
    NameCtx ncx, nc;
    memset(&ncx, 0, sizeof ncx);
    memset(&nc, 0, sizeof nc);
    ncx.src = s2;
    compile_dml_trig_nc(p, &ncx);
    nc.src = s1;
    nc.outer = &ncx;
    int ncol = tab->ncol;
    ud->set = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *ud->set);
    ud->changed = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1));
    if (!ud->set || !ud->changed) return 1;
    if (u->set && compile_dml_set_list_resolve(p, u->set, tab, &nc, ud->set, ud->changed)) return 1;
    if (u->where) {
      ud->where = compile_dml_expr_dup(p, u->where);
      if (!ud->where || compile_resolve_expr(p, &nc, ud->where) || parse_failed(p)) return 1;
    }
  }
  return 0;
}

int compile_dml_insert(Parse *p, const SqlStmt *s) {
  const SqlInsert *ins = &s->u.insert;
  SqlSelect *sel = ins->select;
  if (ins->with && sel) {
    /* WITH ... INSERT ... SELECT: the CTEs belong to the SELECT (DEFAULT
     * VALUES reads nothing: the WITH is unused) */
    if (sel->with) {
      compile_parse_error(p, "WITH is not supported on this INSERT yet");
      return 1;
    }
    sel->with = ins->with;
  }
  View *view = NULL;
  InsertCtx ic;
  memset(&ic, 0, sizeof ic);
  Table *tab = compile_dml_table(p, ins->table.schema, ins->table.name, &view);
  if (!tab && view) tab = compile_dml_view_table(p, view, TRIGGER_INSERT);
  if (!tab || parse_failed(p)) return 1;
  if (tab->vtab)
    return compile_vtab_insert(p, ins, tab, compile_dml_stmt_oe_of(p, ins->or_conflict));
  ic.tab = tab;
  ic.is_view = view != NULL;
  int stmt_oe = compile_dml_stmt_oe_of(p, ins->or_conflict);

  /* the values' shape */
  int direct = sel && sel->kind == SQL_SEL_VALUES && !sel->prior && !sel->with && !sel->order_by &&
               !sel->limit;
  int nvals = 0;
  /* as SQLite: several rows, or triggers, may be written */
  if ((sel && (!direct || sel->cols->n > 1)) || ic.is_view ||
      compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE) ||
      compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER))
    p->multi_write = 1;
  /* as SQLite: a REPLACE deleting rows, or an UPSERT's UPDATE, with
   * foreign keys writes several */
  int fk_replace = !ic.is_view &&
                   (compile_fk_required(p, tab, NULL, 0) || compile_dml_victim_triggers(p, tab)) &&
                   compile_dml_may_replace(tab, stmt_oe);
  if (fk_replace || (!ic.is_view && ins->upsert && compile_fk_required(p, tab, NULL, 0)))
    p->multi_write = 1;
  if (direct) {
    nvals = sel->cols->a[0].expr->list ? sel->cols->a[0].expr->list->n : 0;
  } else if (sel) {
    NameCtx nc;
    memset(&nc, 0, sizeof nc);
    compile_dml_trig_nc(p, &nc);
    if (compile_select_resolve(p, sel, p->nested ? &nc : NULL) || parse_failed(p)) return 1;
    nvals = compile_select_ncol(sel);
  }
  int ninsertable = 0;
  for (int j = 0; j < tab->ncol; j++)
    if (!tab->cols[j].gen) ninsertable++;
  ic.colmap = compile_parse_alloc(p, (size_t)(tab->ncol ? tab->ncol : 1) * sizeof(int));
  if (!ic.colmap) return 1;
  for (int j = 0; j < tab->ncol; j++) ic.colmap[j] = -1;
  ic.ipk = -1;
  if (ins->columns) {
    for (int i = 0; i < ins->columns->n; i++) {
      const char *nm = ins->columns->a[i];
      int j = schema_table_column_index(tab, nm);
      if (j < 0) {
        if (compile_dml_is_rowid_name(nm) && !tab->without_rowid && !ic.is_view) {
          ic.ipk = i;
          continue;
        }
        compile_parse_error(p, "table %s has no column named %s", tab->name, nm);
        return 1;
      }
      if (tab->cols[j].gen) {
        compile_parse_error(p, "cannot INSERT into generated column \"%s\"", tab->cols[j].name);
        return 1;
      }
      /* a column named twice takes the first value, the rowid the last
       * (as SQLite) */
      if (ic.colmap[j] < 0) ic.colmap[j] = i;
      if (j == tab->rowid_alias) ic.ipk = i;
    }
    if (sel && nvals != ins->columns->n) {
      compile_parse_error(p, "%d values for %d columns", nvals, ins->columns->n);
      return 1;
    }
  } else if (sel) {
    if (nvals != ninsertable) {
      compile_parse_error(p, "table %s has %d columns but %d values were supplied", tab->name,
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
  } else if (compile_dml_writer_open(p, &ic.w, tab, stmt_oe, -1)) {
    return 1;
  } else {
    if (fk_replace) ic.w.trigcnt = emit_regs(p, 1);
    autoinc_begin(p, &ic);
    if (ins->upsert && upsert_setup(p, &ic, ins)) return 1;
    if (compile_dml_returning_setup(p, tab, ins->alias, ins->returning, &ic.ret)) return 1;
  }
  if (ic.is_view && ins->returning) {
    compile_parse_error(p, "cannot use RETURNING on a view");
    return 1;
  }
  /* values that are the first columns in table order (all of them, or a
   * prefix, the rest taking their defaults) go straight into the row's
   * registers (insert_row) */
  int identity = !ic.is_view && nvals <= tab->ncol && nvals > 0 && !tab->has_generated &&
                 !compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE); /* it reads the
                                                    INTEGER PRIMARY KEY value twice */
  for (int j = 0; j < tab->ncol && identity; j++)
    identity = j < nvals ? ic.colmap[j] == j : ic.colmap[j] < 0;
  /* VALUES in any other order (a column list): each value is coded into
   * its column's register of the row, those of no column (a repeated
   * name, a rowid named by "rowid") into registers of their own */
  int placed = !identity && direct && !ic.is_view && nvals > 0 && !tab->has_generated &&
               !compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE);
  if (identity) {
    ic.newrow = emit_regs(p, tab->ncol + 1);
    ic.vals = ic.newrow + 1;
  } else if (placed) {
    ic.newrow = emit_regs(p, tab->ncol + 1);
    ic.valreg = compile_parse_alloc(p, (size_t)nvals * sizeof(int));
    if (!ic.valreg) return 1;
    for (int i = 0; i < nvals; i++) ic.valreg[i] = 0;
    for (int j = 0; j < tab->ncol; j++)
      if (ic.colmap[j] >= 0) ic.valreg[ic.colmap[j]] = ic.newrow + 1 + j;
    for (int i = 0; i < nvals; i++)
      if (!ic.valreg[i]) ic.valreg[i] = emit_regs(p, 1);
  } else {
    ic.vals = emit_regs(p, nvals > 0 ? nvals : 1);
  }
  int ret = emit_regs(p, 1), lrow = emit_label(p), ldone = emit_label(p), direct_sink = 0;
  /* one row (DEFAULT VALUES, a single VALUES row): its code runs inline,
   * no subroutine */
  const int one_row = !sel || (direct && sel->cols->n == 1);

  if (direct) {
    for (int r = 0; r < sel->cols->n && !parse_failed(p); r++) {
      SqlExpr *row = sel->cols->a[r].expr;
      int n = row->list ? row->list->n : 0;
      if (n != nvals) {
        compile_parse_error(p, "all VALUES must have the same number of terms");
        return 1;
      }
      SqlExprList *l = compile_dml_list_dup(p, row->list);
      if (!l && n) return 1;
      NameCtx nc;
      memset(&nc, 0, sizeof nc);
      compile_dml_trig_nc(p, &nc);
      if (l && (compile_resolve_list(p, &nc, l) || parse_failed(p))) return 1;
      for (int i = 0; l && i < l->n; i++) compile_expr_code(p, l->a[i].expr, val_reg(&ic, i));
      if (!one_row) emit(p, OP_Gosub, ret, lrow, 0);
    }
  } else if (sel) {
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
    if (compile_select_code(p, sel, &d) || parse_failed(p)) return 1;
    int stage = ic.is_view || ins->returning ||
                compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_BEFORE) ||
                compile_trigger_exists(p, tab, TRIGGER_INSERT, TRIGGER_AFTER) ||
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
  if (!one_row) emit(p, OP_Goto, 0, ldone, 0);
  emit_resolve(p, lrow);
  if (direct_sink) emit_resolve(p, direct_sink);
  int lnext = emit_label(p);
  insert_row(p, &ic, lnext);
  emit_resolve(p, lnext);
  if (!one_row) emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, ldone);
  autoinc_end(p, &ic);
  compile_dml_returning_end(p, &ic.ret);
  return parse_failed(p);
}
