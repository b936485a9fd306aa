/*
 * compile_vtab_dml.c -- INSERT, UPDATE and DELETE on a virtual table: each
 * row change is one xUpdate (OP_VUpdate), with SQLite's argv:
 *     DELETE  argc 1: old rowid
 *     INSERT  argc 2 + ncol: NULL, new rowid (NULL when not given), columns
 *     UPDATE  argc 2 + ncol: old rowid, new rowid, columns
 * compile_dml.c hands a statement whose table is virtual over to here.
 *
 * Owns: nothing beyond the Parse arena.
 *
 * Invariants:
 *  1. The statement first runs OP_VBegin (xBegin once per transaction),
 *     as SQLite's sqlite3VtabMakeWritable does.
 *  2. UPDATE and DELETE scan first and write after, as SQLite does for a
 *     virtual table (no one-pass: the scan never sees its own writes):
 *     UPDATE collects the argv rows in an ephemeral table (scan order),
 *     DELETE the rowids in a RowSet (deleted in rowid order, once each).
 *  3. The conflict mode reaches the module as sqlite3_vtab_on_conflict's
 *     answer (VUpdate p5: the statement's OR clause, ABORT by default).
 *  4. INSERT ... SELECT whose SELECT reads the target table collects the
 *     rows in an ephemeral table before the first xUpdate (SQLite's
 *     readsTable), so the SELECT never sees the rows being inserted.
 *  5. INSERT ... RETURNING reads the values handed to xUpdate, as SQLite
 *     3.40.1: the columns as written (NULL where not) under their declared
 *     affinities, the rowid as written or -1 (not the one the module chose). UPDATE and DELETE
 *     RETURNING are refused with SQLite's messages.
 */
#include <string.h>

#include "../vtab/vtab.h"
#include "compile.h"
#include "dml_int.h"
#include "select_int.h"

/* One RETURNING row of an INSERT from the values handed to xUpdate (in
 * cols): SQLite applies the columns' affinities to them first (xUpdate saw
 * them as written), and shows a plain REAL column in its stored form (2.0
 * as 2: NUMERIC affinity), an expression over it as REAL (invariant 5). */
static void returning_row(Parse *p, const Table *tab, Returning *ret, int rid, int cols) {
  int n = tab->ncol;
  char *aff = compile_parse_alloc(p, (size_t)n + 1), *sto = compile_parse_alloc(p, (size_t)n + 1);
  if (!aff || !sto) return;
  int nreal = 0;
  for (int j = 0; j < n; j++) {
    aff[j] = tab->cols[j].affinity ? tab->cols[j].affinity : AFF_BLOB;
    sto[j] = aff[j] == AFF_REAL ? AFF_NUMERIC : AFF_BLOB;
    nreal += aff[j] == AFF_REAL;
  }
  int val = emit_regs(p, n ? n : 1), bare = val;
  if (n) {
    emit(p, OP_Copy, cols, val, n - 1);
    vm_builder_add_text(&p->b, OP_Affinity, val, n, 0, aff, n);
  }
  if (nreal) {
    bare = emit_regs(p, n);
    emit(p, OP_Copy, val, bare, n - 1);
    vm_builder_add_text(&p->b, OP_Affinity, bare, n, 0, sto, n);
  }
  compile_dml_returning_row_bare(p, ret, rid, val, bare);
}

/* multi: the statement may call xUpdate more than once (SQLite's
 * isMultiWrite): with an xUpdate that may fail (every one), a run inside a
 * transaction then gets a statement journal. A one-row INSERT gets none, as
 * in SQLite: its single xUpdate either fails before writing or the module
 * undoes its own work. */
static void vbegin(Parse *p, const Table *tab, int multi) {
  compile_parse_need_write(p);
  if (multi) p->multi_write = 1;
  vm_builder_add_p4(&p->b, OP_VBegin, 0, 0, 0, P4_VTAB, tab->vtab);
}

static int col_index(const Table *tab, const char *name) {
  for (int j = 0; j < tab->ncol; j++)
    if (util_stricmp(tab->cols[j].name, name) == 0) return j;
  return -1;
}

static int is_rowid(const char *n) {
  return !util_stricmp(n, "rowid") || !util_stricmp(n, "oid") || !util_stricmp(n, "_rowid_");
}

/* 1 if the ops emitted in [from, to) open a cursor on vt (SQLite's
 * readsTable for a virtual table). */
static int code_reads_vtab(Parse *p, int from, int to, const VtabTable *vt) {
  const VmProgram *prog = p->b.prog;
  if (!prog) return 1;
  for (int a = from; a < to && a < prog->nop; a++)
    if (prog->ops[a].op == OP_VOpen && prog->ops[a].p4.vtab == vt) return 1;
  return 0;
}

int compile_vtab_insert(Parse *p, const SqlInsert *ins, Table *tab, int oe) {
  SqlSelect *sel = ins->select;
  if (ins->upsert) {
    compile_parse_error(p, "UPSERT not implemented for virtual table \"%s\"", tab->name);
    return 1;
  }
  int nvals = 0;
  if (sel) {
    NameCtx nc; /* in a trigger body: NEW / OLD, as compile_insert does */
    memset(&nc, 0, sizeof nc);
    compile_dml_trig_nc(p, &nc);
    if (compile_select_resolve(p, sel, p->nested ? &nc : NULL) || parse_failed(p)) return 1;
    nvals = compile_select_ncol(sel);
  }
  int *colmap = compile_parse_alloc(p, sizeof(int) * (size_t)(tab->ncol + 1));
  if (!colmap) return 1;
  for (int j = 0; j < tab->ncol; j++) colmap[j] = -1;
  int ipk = -1;
  if (ins->columns) {
    for (int i = 0; i < ins->columns->n; i++) {
      int j = col_index(tab, ins->columns->a[i]);
      if (j < 0 && is_rowid(ins->columns->a[i])) {
        ipk = i;
        continue;
      }
      if (j < 0) {
        compile_parse_error(p, "table %s has no column named %s", tab->name, ins->columns->a[i]);
        return 1;
      }
      colmap[j] = i;
    }
    if (sel && nvals != ins->columns->n) {
      compile_parse_error(p, "%d values for %d columns", nvals, ins->columns->n);
      return 1;
    }
  } else if (sel) {
    int nvis = 0;
    for (int j = 0; j < tab->ncol; j++)
      if (tab->cols[j].hidden != COL_HIDDEN) colmap[j] = nvis++;
    if (nvals != nvis) {
      compile_parse_error(p, "table %s has %d columns but %d values were supplied", tab->name, nvis,
                          nvals);
      return 1;
    }
  }
  int one_row = !sel || (sel->kind == SQL_SEL_VALUES && !sel->prior && !sel->with &&
                         !sel->order_by && !sel->limit && sel->cols->n == 1);
  vbegin(p, tab, !one_row);
  Returning ret;
  if (compile_dml_returning_setup(p, tab, ins->alias, ins->returning, &ret)) return 1;
  p->vtab_sp = one_row ? 1 : 2;
  int argc = 2 + tab->ncol;
  int base = emit_regs(p, argc);
  int done = emit_label(p);
  int top = emit_label(p);
  int out = 0, co = 0, staged = -1;
  if (sel) {
    co = emit_regs(p, 1);
    out = emit_regs(p, nvals ? nvals : 1);
    int after = emit_label(p), a = emit_addr(p);
    emit(p, OP_InitCoroutine, co, after, a + 1);
    SelectDest d = {SD_COROUTINE, 0, co, out, nvals, NULL, NULL, 0};
    int from = vm_builder_addr(&p->b);
    compile_select_code(p, sel, &d);
    int reads_self = code_reads_vtab(p, from, vm_builder_addr(&p->b), tab->vtab);
    emit(p, OP_EndCoroutine, co, 0, 0);
    emit_resolve(p, after);
    if (reads_self) { /* invariant 4: the rows first, then the writes */
      staged = emit_cursor(p);
      int rec = emit_regs(p, 1), rid = emit_regs(p, 1), fill = emit_label(p),
          filled = emit_label(p);
      emit(p, OP_OpenEphemeral, staged, nvals, 0);
      emit_resolve(p, fill);
      emit(p, OP_Yield, co, filled, 0);
      emit(p, OP_MakeRecord, out, nvals, rec);
      emit(p, OP_NewRowid, staged, rid, 0);
      emit(p, OP_Insert, staged, rec, rid);
      emit(p, OP_Goto, 0, fill, 0);
      emit_resolve(p, filled);
      emit(p, OP_Rewind, staged, done, 0);
      emit_resolve(p, top);
      for (int i = 0; i < nvals; i++) emit(p, OP_Column, staged, i, out + i);
    } else {
      emit_resolve(p, top);
      emit(p, OP_Yield, co, done, 0);
    }
  }
  emit(p, OP_Null, 0, base, 0);
  if (ipk >= 0)
    emit(p, OP_Copy, out + ipk, base + 1, 0);
  else
    emit(p, OP_Null, 0, base + 1, 0);
  for (int j = 0; j < tab->ncol; j++) {
    if (colmap[j] >= 0)
      emit(p, OP_Copy, out + colmap[j], base + 2 + j, 0);
    else
      emit(p, OP_Null, 0, base + 2 + j, 0);
  }
  int a = vm_builder_add_p4(&p->b, OP_VUpdate, 1, argc, base, P4_VTAB, tab->vtab);
  if (a >= 0) vm_builder_set_p5(&p->b, a, (uint16_t)oe);
  if (ret.list) { /* invariant 5 */
    int rid = emit_regs(p, 1), given = emit_label(p);
    emit(p, OP_Copy, base + 1, rid, 0);
    emit(p, OP_NotNull, rid, given, 0);
    emit(p, OP_Integer, -1, rid, 0);
    emit_resolve(p, given);
    returning_row(p, tab, &ret, rid, base + 2);
  }
  if (sel && staged >= 0)
    emit(p, OP_Next, staged, top, 0);
  else if (sel)
    emit(p, OP_Goto, 0, top, 0);
  emit_resolve(p, done);
  compile_dml_returning_end(p, &ret);
  return parse_failed(p);
}

/* xUpdate of argc registers from row, under conflict mode oe */
static void emit_vupdate(Parse *p, const Table *tab, int argc, int row, int oe) {
  int a = vm_builder_add_p4(&p->b, OP_VUpdate, 0, argc, row, P4_VTAB, tab->vtab);
  if (a >= 0) vm_builder_set_p5(&p->b, a, (uint16_t)oe);
}

/* UPDATE's new column values into row + 2..: the SET expressions, the
 * others read under sqlite3_vtab_nochange (VColumn's p5) */
static void update_args(Parse *p, const Table *tab, int cur, const int *setcol,
                        const SqlExprList *vals, int row) {
  for (int j = 0; j < tab->ncol; j++) {
    if (setcol[j] >= 0)
      compile_expr_code(p, vals->a[setcol[j]].expr, row + 2 + j);
    else
      vm_builder_set_p5(&p->b, emit(p, OP_VColumn, cur, j, row + 2 + j), 1);
  }
}

/* UPDATE (set != NULL) or DELETE: scan with the WHERE (UPDATE: joined with
 * from, when given), collect the argv rows, then xUpdate each (invariant
 * 2; with FROM, one per joined row, as SQLite). */
static int scan_write(Parse *p, Table *tab, const SqlSrcItem *target, const SqlSrcList *from,
                      const SqlExpr *where0, const SqlExprList *set, int oe) {
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  SrcList *src = from ? compile_dml_update_from(p, tab, target, from, &nc)
                      : compile_src_single(p, tab, target->alias);
  if (!src) return 1;
  nc.src = src;
  compile_dml_trig_nc(p, &nc); /* in a trigger body: NEW / OLD */
  SqlExpr *where = compile_dml_expr_dup(p, where0);
  if (where && (compile_resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  int *setcol = NULL;
  SqlExprList *vals = NULL;
  int rowid_set = -1;
  if (set) {
    setcol = compile_parse_alloc(p, sizeof(int) * (size_t)(tab->ncol + 1));
    vals = compile_dml_list_dup(p, set);
    if (!setcol || !vals) return 1;
    for (int j = 0; j < tab->ncol; j++) setcol[j] = -1;
    for (int i = 0; i < vals->n; i++) {
      const char *nm = vals->a[i].name;
      if (!nm) {
        compile_parse_error(p, "row-value SET on a virtual table is not supported by Shale yet");
        return 1;
      }
      int j = col_index(tab, nm);
      if (j < 0 && is_rowid(nm)) {
        rowid_set = i;
      } else if (j < 0) {
        compile_parse_error(p, "no such column: %s", nm);
        return 1;
      } else {
        setcol[j] = i;
      }
      if (compile_resolve_expr(p, &nc, vals->a[i].expr) || parse_failed(p)) return 1;
    }
  }
  /* SQLite's one-pass strategy: with one table and an answer the module
   * marks SQLITE_INDEX_SCAN_UNIQUE, the row found is changed inside the
   * scan, whose cursor is closed first (no RowSet or staging table, not a
   * multi-row write: no statement savepoint) */
  WhereInfo *wi = compile_where_plan(p, src, where, NULL, 0);
  if (!wi) return 1;
  int onepass = !from && compile_where_one_row(wi);
  vbegin(p, tab, !onepass);
  p->vtab_sp = onepass ? 1 : 2;
  int argc = set ? 2 + tab->ncol : 1;
  int row = emit_regs(p, argc + 1);
  int cur = src->a[0].cursor;
  int done = emit_label(p);
  if (onepass) {
    if (compile_where_code(wi)) return 1;
    if (set) {
      update_args(p, tab, cur, setcol, vals, row);
      emit(p, OP_VRowid, cur, row, 0);
      if (rowid_set >= 0)
        compile_expr_code(p, vals->a[rowid_set].expr, row + 1);
      else
        emit(p, OP_Copy, row, row + 1, 0);
    } else {
      emit(p, OP_VRowid, cur, row, 0);
    }
    emit(p, OP_Close, cur, 0, 0);
    emit_vupdate(p, tab, argc, row, oe);
    emit(p, OP_Goto, 0, done, 0);
    compile_where_end(wi);
    emit_resolve(p, done);
    return parse_failed(p);
  }
  if (!set) { /* DELETE: the rowids into a RowSet, deleted in rowid order */
    int rs = emit_regs(p, 1);
    emit(p, OP_Null, 0, rs, 0);
    if (compile_where_code(wi)) return 1;
    emit(p, OP_VRowid, cur, row, 0);
    emit(p, OP_RowSetAdd, rs, row, 0);
    compile_where_end(wi);
    int top = emit_addr(p);
    emit(p, OP_RowSetRead, rs, done, row);
    emit_vupdate(p, tab, 1, row, oe);
    emit(p, OP_Goto, 0, top, 0);
    emit_resolve(p, done);
    return parse_failed(p);
  }
  int eph = emit_cursor(p);
  emit(p, OP_OpenEphemeral, eph, argc, 0);
  if (compile_where_code(wi)) return 1;
  emit(p, OP_VRowid, cur, row, 0);
  if (rowid_set >= 0)
    compile_expr_code(p, vals->a[rowid_set].expr, row + 1);
  else
    emit(p, OP_Copy, row, row + 1, 0);
  update_args(p, tab, cur, setcol, vals, row);
  int rec = emit_regs(p, 2);
  emit(p, OP_MakeRecord, row, argc, rec);
  emit(p, OP_NewRowid, eph, rec + 1, 0);
  emit(p, OP_Insert, eph, rec, rec + 1);
  compile_where_end(wi);
  emit(p, OP_Rewind, eph, done, 0);
  int top = emit_addr(p);
  for (int k = 0; k < argc; k++) emit(p, OP_Column, eph, k, row + k);
  emit_vupdate(p, tab, argc, row, oe);
  emit(p, OP_Next, eph, top, 0);
  emit_resolve(p, done);
  return parse_failed(p);
}

int compile_vtab_update_stmt(Parse *p, const SqlUpdate *u, Table *tab, int oe) {
  if (u->returning) {
    compile_parse_error(p, "UPDATE RETURNING is not available on virtual tables");
    return 1;
  }
  if (u->limit || u->order_by) {
    compile_parse_error(p, "this UPDATE form on a virtual table is not supported by Shale yet");
    return 1;
  }
  return scan_write(p, tab, u->table, u->from, u->where, u->set, oe);
}

int compile_vtab_delete_stmt(Parse *p, const SqlDelete *d, Table *tab) {
  if (d->returning) {
    compile_parse_error(p, "DELETE RETURNING is not available on virtual tables");
    return 1;
  }
  if (d->limit || d->order_by) {
    compile_parse_error(p, "this DELETE form on a virtual table is not supported by Shale yet");
    return 1;
  }
  return scan_write(p, tab, d->table, NULL, d->where, NULL, 0);
}
