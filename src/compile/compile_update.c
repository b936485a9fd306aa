/*
 * compile_update.c -- UPDATE (also UPDATE ... FROM, row-value SET, ORDER
 * BY/LIMIT) and DELETE: the rows found by the WHERE loop, changed in one
 * pass or collected first, the old row in registers for triggers, foreign
 * keys and RETURNING, the new row checked and written by the Writer.
 *
 * Owns: compile_dml_update, compile_dml_delete, compile_dml_reseek_row.
 *
 * Invariants:
 *  1. Column affinity is applied to the new row (Affinity) before BEFORE
 *     triggers and constraint checks, so index keys, CHECK expressions and
 *     the record see the converted values (as SQLite does).
 *  2. UPDATE and DELETE change each row inside the WHERE loop, through the
 *     loop's own table cursor (one pass), only where the loop cannot see its
 *     own changes and nothing needs the whole set first (onepass_mode:
 *     SQLite's rules); otherwise they collect the rows first (RowSet of
 *     rowids, or an ephemeral index of PRIMARY KEYs for WITHOUT ROWID
 *     tables), then change them.
 *  3. A "plain" UPDATE (no trigger, foreign key, REPLACE, key change,
 *     RETURNING, subquery or FROM; a rowid table) moves the table cursor
 *     only by its final Insert: it reads the old row borrowed from the page,
 *     only the columns the new record, the deleted index entries and the
 *     SET expressions need (compile_dml_read_row_borrowed); the SET
 *     expressions read those registers. When nothing reads the new values
 *     but plain index keys and the record, invariant 1's Affinity op is left
 *     out: MakeRecord applies the same affinity to the key and record values
 *     (compile_dml_record_applies_affinity).
 *  4. An index entry the update leaves byte for byte as it was (the new
 *     key's record equals the old one's; a partial index: the old row had
 *     an entry) is neither deleted nor inserted again (Writer.same_keys).
 *     Only where nothing between the deletes and the inserts reads the
 *     table's indexes or may have changed the row the old keys come from:
 *     no BEFORE trigger, no REPLACE victim deleted through triggers or
 *     foreign-key actions, no foreign key of the table to itself (the new
 *     row's checks look in its indexes in between). UNIQUE checks run as
 *     before; after the writes the indexes are the same either way.
 *  5. BEFORE triggers may change the row being updated (SQLite leaves it
 *     undefined but behaves so): after them the row is read again; the
 *     columns the statement does not assign take its values, and the index
 *     entries deleted are those of the row as it now is. OLD stays the row
 *     before the triggers.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

/* ------------------------------------------------------- UPDATE / DELETE */

/* The rows to change, collected before any change (invariant 2). */
typedef struct RowList {
  int set;  /* RowSet register (rowid tables in rowid order), or 0 */
  int eph;  /* ephemeral table (scan order) / index (PK order), or -1 */
  int nkey; /* values per entry in eph: 1 (rowid) or npk */
} RowList;

/* Collect the rows of the planned loop wi (over src item 0, cursor scur):
 * rowids in a RowSet (read back in rowid order), PRIMARY KEYs of a WITHOUT
 * ROWID table in an ephemeral index (PRIMARY KEY order), as SQLite's
 * two-pass UPDATE/DELETE. Emits the loop (compile_where_code) and closes it. */
static void collect_rows(Parse *p, WhereInfo *wi, int scur, Table *tab, RowList *rl) {
  memset(rl, 0, sizeof *rl);
  rl->eph = -1;
  rl->nkey = tab->without_rowid ? tab->npk : 1;
  if (!tab->without_rowid) {
    rl->set = emit_regs(p, 1);
    emit(p, OP_Null, 0, rl->set, 0);
  } else {
    rl->eph = emit_cursor(p);
    KeyInfo *ki = compile_parse_keyinfo(p, rl->nkey, NULL, NULL);
    if (!ki) return;
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, rl->eph, rl->nkey, 0, P4_KEYINFO, ki);
  }
  if (compile_where_code(wi)) return;
  int k = emit_regs(p, rl->nkey);
  if (tab->without_rowid) {
    for (int j = 0; j < tab->npk; j++) compile_code_column(p, tab, scur, tab->pk_cols[j], k + j);
    int rec = emit_regs(p, 1);
    emit(p, OP_MakeRecord, k, rl->nkey, rec);
    emit(p, OP_IdxInsert, rl->eph, rec, 0);
  } else {
    emit(p, OP_Rowid, scur, k, 0);
    emit(p, OP_RowSetAdd, rl->set, k, 0);
  }
  compile_where_end(wi);
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
  if (compile_where_one_row(wi)) return ONEPASS_ONE;
  if (!multi_ok) return ONEPASS_OFF;
  const Index *x = compile_where_scan_index(wi);
  if (x && chg && compile_dml_index_affected(x, chg)) return ONEPASS_OFF;
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
  SqlSelect *sel = compile_parse_alloc(p, sizeof *sel);
  SqlExprList *cols = compile_parse_alloc(p, sizeof *cols);
  SqlSrcList *from = compile_parse_alloc(p, sizeof *from);
  SqlSrcItem *it = compile_parse_alloc(p, sizeof *it);
  if (!sel || !cols || !from || !it) return;
  cols->a = compile_parse_alloc(p, (size_t)rl->nkey * sizeof *cols->a);
  if (!cols->a) return;
  for (int j = 0; j < rl->nkey; j++) {
    SqlExpr *e = compile_parse_alloc(p, sizeof *e);
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
  sel->where = compile_dml_expr_dup(p, where);
  sel->order_by = compile_dml_list_dup(p, order_by);
  sel->limit = compile_dml_expr_dup(p, limit);
  sel->offset = compile_dml_expr_dup(p, offset);
  sel->with = with;
  if (parse_failed(p)) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  compile_dml_trig_nc(p, &nc);
  if (compile_select_resolve(p, sel, p->nested ? &nc : NULL) || parse_failed(p)) return;
  rl->eph = emit_cursor(p);
  emit(p, OP_OpenEphemeral, rl->eph, rl->nkey, 0);
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_TABLE;
  d.cursor = rl->eph;
  d.nreg = rl->nkey;
  compile_select_code(p, sel, &d);
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
static int dml_loop_begin(Parse *p, WhereInfo *wi, int onepass, Writer *w, RowList *rl, int scur,
                          int done, int *top) {
  if (onepass) {
    if (compile_where_code(wi)) return 0;
    return onepass == ONEPASS_ONE ? compile_where_break_label(wi)
                                  : compile_where_continue_label(wi);
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
  if (onepass == ONEPASS_ONE) emit(p, OP_Goto, 0, compile_where_break_label(wi), 0);
  compile_where_end(wi);
}

/* Reposition the table cursor on the old row after triggers ran; -> next
 * if it is gone. */
void compile_dml_reseek_row(Parse *p, Writer *w, int old, int next) {
  Table *tab = w->tab;
  if (tab->without_rowid) {
    for (int j = 0; j < tab->npk; j++)
      emit(p, OP_SCopy, old + 1 + tab->pk_cols[j], w->pkreg + j, 0);
    vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, next, w->pkreg, tab->npk);
  } else {
    emit(p, OP_NotExists, w->tabcur, next, old);
  }
}

SrcList *compile_dml_update_from(Parse *p, const Table *tab, const SqlSrcItem *target,
                                 const SqlSrcList *from, NameCtx *nc) {
  SqlSrcList *all = compile_parse_alloc(p, sizeof *all);
  if (!all) return NULL;
  all->n = all->cap = from->n + 1;
  all->a = compile_parse_alloc(p, (size_t)all->n * sizeof *all->a);
  if (!all->a) return NULL;
  all->a[0] = *target;
  for (int i = 0; i < from->n; i++) all->a[i + 1] = from->a[i];
  if (!(all->a[1].jointype & ~SQL_JOIN_COMMA)) all->a[1].jointype = SQL_JOIN_INNER | SQL_JOIN_COMMA;
  NameCtx onc;
  memset(&onc, 0, sizeof onc);
  compile_dml_trig_nc(p, &onc);
  SrcList *src = compile_src_from_ast(p, all, p->nested ? &onc : NULL);
  if (!src || parse_failed(p)) return NULL;
  if (src->a[0].tab != tab || src->a[0].kind != SRC_TABLE) {
    compile_parse_error(p, "this form of UPDATE ... FROM is not supported yet");
    return NULL;
  }
  nc->src = src;
  compile_dml_trig_nc(p, nc);
  if (compile_src_resolve_joins(p, src) || parse_failed(p)) return NULL;
  for (int i = 1; i < src->n; i++) {
    if (!src->a[i].on) continue;
    nc->flags |= NC_IN_ON;
    int bad = compile_resolve_expr(p, nc, src->a[i].on) || parse_failed(p);
    nc->flags &= ~NC_IN_ON;
    if (bad) return NULL;
  }
  return src;
}

/* 1 if a foreign key of tab names tab as its parent: its checks of the new
 * row look in tab's own indexes (invariant 4). */
static int fk_self_reference(const Table *tab) {
  for (int k = 0; k < tab->nfk; k++)
    if (util_stricmp(tab->fks[k].parent, tab->name) == 0) return 1;
  return 0;
}

int compile_dml_update(Parse *p, const SqlStmt *s) {
  const SqlUpdate *u = &s->u.update;
  int nsetcol = 0; /* SQLite's SQLITE_LIMIT_COLUMN check, made while parsing */
  for (int i = 0; u->set && i < u->set->n; i++)
    nsetcol += u->set->a[i].names ? u->set->a[i].nnames : 1;
  if (p->env && p->env->max_columns > 0 && nsetcol > p->env->max_columns) {
    compile_parse_error(p, "too many columns in set list");
    return 1;
  }
  if (u->order_by && !u->limit) {
    compile_parse_error(p, "ORDER BY without LIMIT on UPDATE");
    return 1;
  }
  if (u->with) {
    compile_dml_attach_with(u->with, u->where);
    compile_dml_attach_with_list(u->with, u->set);
    compile_dml_attach_with_list(u->with, u->returning);
    compile_dml_attach_with_list(u->with, u->order_by);
  }
  View *view = NULL;
  Table *tab = compile_dml_table(p, u->table->schema, u->table->name, &view);
  if (!tab && view)
    return compile_dml_view_dml(p, view, TRIGGER_UPDATE, u->table->alias, u->set, u->where,
                                compile_dml_stmt_oe_of(p, u->or_conflict));
  if (tab && tab->vtab)
    return compile_vtab_update_stmt(p, u, tab, compile_dml_stmt_oe_of(p, u->or_conflict));
  if (!tab || parse_failed(p)) return 1;
  int stmt_oe = compile_dml_stmt_oe_of(p, u->or_conflict);
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  SrcList *src;
  if (u->from) {
    if (u->limit) {
      compile_parse_error(p, "this form of UPDATE ... FROM is not supported yet");
      return 1;
    }
    src = compile_dml_update_from(p, tab, u->table, u->from, &nc);
  } else {
    src = compile_src_single(p, tab, u->table->alias);
    if (src) compile_src_index_hint(src, u->table);
  }
  if (!src) return 1;
  nc.src = src;
  compile_dml_trig_nc(p, &nc);

  /* SET targets */
  int ncol = tab->ncol;
  SqlExpr **set = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1) * sizeof *set);
  uint8_t *changed = compile_parse_alloc(p, (size_t)(ncol ? ncol : 1));
  if (!set || !changed) return 1;
  SqlExpr *rowid_expr = NULL;
  /* SET (a, b) = (SELECT ...): the subquery fills n registers per row */
  SqlSelect **rsub = compile_parse_alloc(p, (size_t)u->set->n * sizeof *rsub);
  int *rbase = compile_parse_alloc(p, (size_t)u->set->n * sizeof(int));
  if (!rsub || !rbase) return 1;
  for (int i = 0; i < u->set->n; i++) {
    SqlExprItem *it = &u->set->a[i];
    int nn = it->nnames > 0 ? it->nnames : 1;
    if (it->nnames > 0 && it->expr->op == SQL_E_SUBQUERY && u->from) {
      compile_parse_error(p, "this form of UPDATE ... FROM is not supported yet");
      return 1;
    }
    if (it->nnames > 0 && it->expr->op == SQL_E_SUBQUERY) {
      if (compile_select_resolve(p, it->expr->select, &nc) || parse_failed(p)) return 1;
      int w = compile_select_ncol(it->expr->select);
      if (w != it->nnames) {
        compile_parse_error(p, "%d columns assigned %d values", it->nnames, w);
        return 1;
      }
      rsub[i] = it->expr->select;
      rbase[i] = emit_regs(p, nn);
    }
    for (int k = 0; k < nn; k++) {
      const char *nm = it->nnames > 0 ? it->names[k] : it->name;
      SqlExpr *e;
      if (rsub[i]) {
        SqlExpr *nul = compile_parse_alloc(p, sizeof *nul);
        e = compile_parse_alloc(p, sizeof *e);
        if (!e || !nul) return 1;
        nul->op = SQL_E_NULL;
        nul->height = 1;
        e->op = SQL_E_REG;
        e->height = 1;
        e->reg = rbase[i] + k;
        e->orig = nul;
      } else if (it->nnames > 0) {
        if (it->expr->op != SQL_E_ROW || !it->expr->list || it->expr->list->n != it->nnames) {
          compile_parse_error(p, "%d columns assigned %d values", it->nnames,
                              it->expr->op == SQL_E_ROW && it->expr->list ? it->expr->list->n : 1);
          return 1;
        }
        e = it->expr->list->a[k].expr;
      } else {
        e = it->expr;
      }
      if (!rsub[i]) e = compile_dml_expr_dup(p, e);
      if (!e) return 1;
      int j = schema_table_column_index(tab, nm);
      if (j < 0) {
        if (compile_dml_is_rowid_name(nm) && !tab->without_rowid) {
          rowid_expr = e;
          continue;
        }
        compile_parse_error(p, "no such column: %s", nm);
        return 1;
      }
      if (tab->cols[j].gen) {
        compile_parse_error(p, "cannot UPDATE generated column \"%s\"", tab->cols[j].name);
        return 1;
      }
      set[j] = e;
      changed[j] = 1;
      if (j == tab->rowid_alias) rowid_expr = e;
    }
  }
  for (int j = 0; j < ncol; j++) {
    if (set[j] && set[j]->op != SQL_E_REG &&
        (compile_resolve_expr(p, &nc, set[j]) || parse_failed(p)))
      return 1;
    if (set[j] && p->env && p->env->auth) { /* UPDATE per column; IGNORE keeps it as it is */
      int rc = compile_parse_auth(p, AUTH_UPDATE, tab->name, tab->cols[j].name,
                                  compile_parse_db_name(p, p->idb));
      if (rc == AUTH_DENY) return 1;
      if (rc == AUTH_IGNORE) {
        if (rowid_expr == set[j]) rowid_expr = NULL;
        set[j] = NULL;
        changed[j] = 0;
      }
    }
  }
  if (rowid_expr && tab->rowid_alias < 0 &&
      (compile_resolve_expr(p, &nc, rowid_expr) || parse_failed(p)))
    return 1;
  SqlExpr *where = compile_dml_expr_dup(p, u->where);
  if (where && (compile_resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  if (u->from && rowid_expr) {
    compile_parse_error(p, "this form of UPDATE ... FROM is not supported yet");
    return 1;
  }

  compile_parse_need_write(p);
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
  int trig = compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE) ||
             compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER);
  int fk = compile_fk_required(p, tab, changed, rowid_expr != NULL);
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
      KeyInfo *ki = compile_parse_keyinfo(p, tab->npk, NULL, NULL);
      if (!ki) return 1;
      vm_builder_add_p4(&p->b, OP_OpenEphemeral, rl.eph, voff + nset, 0, P4_KEYINFO, ki);
    } else {
      rl.nkey = -1; /* keyed by the target rowid, values in columns */
      emit(p, OP_OpenEphemeral, rl.eph, nset, 0);
    }
    WhereInfo *fw = compile_where_begin(p, src, where, NULL, 0);
    if (!fw) return 1;
    int vals = emit_regs(p, voff + (nset > 0 ? nset : 1)), r = emit_regs(p, 1),
        rec = emit_regs(p, 1);
    for (int j = 0, k = 0; j < ncol; j++)
      if (set[j]) compile_expr_code(p, set[j], vals + voff + k++);
    if (tab->without_rowid) {
      int skip = emit_label(p);
      for (int j = 0; j < tab->npk; j++)
        compile_code_column(p, tab, src->a[0].cursor, tab->pk_cols[j], vals + j);
      vm_builder_add_i4(&p->b, OP_Found, rl.eph, skip, vals, tab->npk);
      emit(p, OP_MakeRecord, vals, voff + nset, rec);
      emit(p, OP_IdxInsert, rl.eph, rec, 0);
      emit_resolve(p, skip);
    } else {
      compile_code_column(p, tab, src->a[0].cursor, -1, r); /* the loop may scan a covering index */
      emit(p, OP_MakeRecord, vals, nset, rec);
      emit(p, OP_Insert, rl.eph, rec, r);
    }
    compile_where_end(fw);
  } else if (u->limit) {
    collect_rows_limited(p, u->table, u->where, u->order_by, u->limit, u->offset, tab, u->with,
                         &rl);
  }
  int sub = has_subquery(where);
  for (int i = 0; i < u->set->n; i++) sub |= rsub[i] != NULL;
  for (int j = 0; j < ncol; j++) sub |= set[j] && has_subquery(set[j]);
  /* invariant 3: nothing but the index writes comes between reading the old
   * row and writing the new one */
  int plain = !replace && !key_change && !trig && !fk && !u->returning && !sub && !u->from &&
              !tab->without_rowid;
  if (!u->from && !u->limit) {
    wi = compile_where_plan(p, src, where, NULL, WHERE_ONEPASS);
    if (!wi) return 1;
    int multi_ok = !replace && !key_change && !trig && !fk && !u->returning && !sub;
    const uint8_t *chg = multi_ok ? compile_dml_changed_closure(p, tab, changed, 0) : NULL;
    onepass = onepass_mode(wi, multi_ok, chg);
    if (onepass != ONEPASS_ONE) p->multi_write = 1;
  }
  if (parse_failed(p)) return 1;
  Writer w;
  int before = compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE);
  WriterUse use = {NULL, -1, changed, key_change || fk == 2, before};
  /* the loop and the writes share the table cursor (the loop opens it) */
  if (compile_dml_writer_open_for(p, &w, tab, stmt_oe, wi ? src->a[0].cursor : -1, &use)) return 1;
  uint8_t *keep = w.keep; /* compile_dml_writer_keep_unchanged's answer */
  w.keep = NULL;
  if (replace && (compile_fk_required(p, tab, NULL, 0) || compile_dml_victim_triggers(p, tab)))
    w.trigcnt = emit_regs(p, 1);
  Returning ret;
  if (compile_dml_returning_setup(p, tab, u->table->alias, u->returning, &ret)) return 1;
  int old = emit_regs(p, ncol + 1), newrow = emit_regs(p, ncol + 1), cols = newrow + 1;
  int done = emit_label(p), top = 0;
  int next = dml_loop_begin(p, wi, onepass, &w, &rl, src->a[0].cursor, done, &top);
  if (!next) return 1;
  if (plain) {
    w.keep = keep;
    compile_dml_read_row_borrowed(&w, old, changed, set, src->a[0].cursor);
    w.keep = NULL;
  } else {
    compile_dml_read_row(&w, old);
  }
  int scur = src->a[0].cursor;
  for (int i = 0; i < u->set->n; i++) {
    if (!rsub[i]) continue;
    compile_dml_remap_cursor_select(p, rsub[i], scur, w.tabcur);
    SelectDest d;
    memset(&d, 0, sizeof d);
    d.kind = SD_MEM;
    d.reg = rbase[i];
    d.nreg = u->set->a[i].nnames;
    compile_select_code(p, rsub[i], &d);
  }
  for (int j = 0, k = 0; j < ncol; j++) {
    if (set[j] && u->from) {
      emit(p, OP_Column, rl.eph, voff + k++, cols + j);
    } else if (set[j] && plain) {
      compile_dml_bind_row(p, set[j], scur, old, old + 1); /* read above */
      compile_expr_code(p, set[j], cols + j);
    } else if (set[j]) {
      compile_dml_remap_cursor(p, set[j], scur, w.tabcur);
      compile_expr_code(p, set[j], cols + j);
    } else {
      emit(p, OP_SCopy, old + 1 + j, cols + j, 0);
    }
  }
  if (tab->without_rowid) {
    emit(p, OP_Null, 0, newrow, 0);
  } else if (rowid_expr) {
    compile_dml_remap_cursor(p, rowid_expr, scur, w.tabcur);
    if (tab->rowid_alias < 0 || !set[tab->rowid_alias])
      compile_expr_code(p, rowid_expr, newrow);
    else
      emit(p, OP_SCopy, cols + tab->rowid_alias, newrow, 0);
    emit(p, OP_MustBeInt, newrow, 0, 0);
  } else {
    emit(p, OP_SCopy, old, newrow, 0);
  }
  if (tab->rowid_alias >= 0) emit(p, OP_SCopy, newrow, cols + tab->rowid_alias, 0);
  w.keep = keep;
  if (!plain || !compile_dml_record_applies_affinity(&w)) {
    vm_builder_add_text(&p->b, OP_Affinity, cols, ncol, 0, w.caff, ncol);
    w.cols_aff = 1;
  }
  w.keep = NULL;
  compile_dml_code_generated(p, tab, newrow, cols);
  int cur = old; /* the row as it is before the writes (invariant 5) */
  if (before) {
    compile_trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_BEFORE, changed, old, newrow, stmt_oe,
                         next);
    compile_dml_reseek_row(p, &w, old, next);
    cur = emit_regs(p, ncol + 1);
    compile_dml_read_row(&w, cur);
    for (int j = 0; j < ncol; j++)
      if (!set[j] && j != tab->rowid_alias) emit(p, OP_SCopy, cur + 1 + j, cols + j, 0);
    compile_dml_code_generated(p, tab, newrow, cols);
  }
  w.changed = changed;
  w.rowid_changed = rowid_expr != NULL;
  compile_dml_check_row(&w, newrow, cols, next);
  w.keep = keep;
  compile_dml_build_new_keys(&w, newrow, cols);
  compile_dml_check_unique(&w, newrow, cols, old, rowid_expr != NULL, next);
  if (fk) compile_fk_check(p, tab, old, 0, changed, rowid_expr != NULL);
  /* RETURNING reads the new row now: unchanged columns still point into
   * the old record, which the writes below may move */
  compile_dml_returning_row(p, &ret, newrow, cols);
  compile_dml_own_new_row(p, tab, cols);
  /* invariant 4 */
  w.same_keys = !before && !w.trigcnt && !(fk && fk_self_reference(tab));
  compile_dml_delete_keys(&w, cur, cur + 1, 1);
  w.same_keys = 0;
  if (rowid_expr && !tab->without_rowid) {
    int same = emit_label(p);
    emit(p, OP_Eq, old, same, newrow);
    emit(p, OP_NotExists, w.tabcur, same, old);
    emit(p, OP_Delete, w.tabcur, 0, 0);
    emit_resolve(p, same);
  }
  if (fk) compile_fk_check(p, tab, 0, newrow, changed, rowid_expr != NULL);
  /* the new keys' registers (Writer.keyregs) stay valid until their
   * IdxInserts when nothing before them moves or frees what they may
   * borrow: no REPLACE victim, no delete of the row for a new rowid, no
   * WITHOUT ROWID row (its PRIMARY KEY entry, the row, goes first), no
   * AFTER UPDATE trigger (compile_dml_own_new_row writes the new row's
   * registers over, freeing the values their affinity made) */
  w.keyregs = !tab->without_rowid && !rowid_expr && !compile_dml_may_replace(tab, stmt_oe) &&
              !compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER);
  compile_dml_write_row(&w, newrow, cols, 0);
  w.keyregs = 0;
  w.cols_aff = 0;
  if (fk) compile_fk_actions(p, tab, old, newrow, changed, rowid_expr != NULL);
  if (compile_trigger_exists(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER))
    compile_trigger_code(p, tab, TRIGGER_UPDATE, TRIGGER_AFTER, changed, old, newrow, stmt_oe,
                         next);
  dml_loop_end(p, wi, onepass, &rl, top, next);
  emit_resolve(p, done);
  compile_dml_returning_end(p, &ret);
  return parse_failed(p);
}

int compile_dml_delete(Parse *p, const SqlStmt *s) {
  const SqlDelete *d = &s->u.del;
  if (d->order_by && !d->limit) {
    compile_parse_error(p, "ORDER BY without LIMIT on DELETE");
    return 1;
  }
  if (d->with) {
    compile_dml_attach_with(d->with, d->where);
    compile_dml_attach_with_list(d->with, d->returning);
    compile_dml_attach_with_list(d->with, d->order_by);
  }
  View *view = NULL;
  Table *tab = compile_dml_table(p, d->table->schema, d->table->name, &view);
  if (!tab && view)
    return compile_dml_view_dml(p, view, TRIGGER_DELETE, d->table->alias, NULL, d->where,
                                compile_dml_stmt_oe_of(p, 0));
  if (tab && tab->vtab) return compile_vtab_delete_stmt(p, d, tab);
  if (!tab || parse_failed(p) || !compile_src_indexed_by_ok(p, tab, d->table->indexed_by)) return 1;
  int before = compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE);
  int after = compile_trigger_exists(p, tab, TRIGGER_DELETE, TRIGGER_AFTER);
  int fk = compile_fk_required(p, tab, NULL, 0);
  if (before || after || fk || d->limit) p->multi_write = 1;
  compile_parse_need_write(p);
  if (!d->where && !before && !after && !fk && !d->returning && !d->limit) {
    for (Index *x = tab->indexes; x; x = x->next)
      if (x != tab->pk_index) emit(p, OP_Clear, (int)x->root, p->idb, 0);
    /* p4: the table's name, for the preupdate hook */
    vm_builder_add_text(&p->b, OP_Clear, (int)tab->root, p->idb, 1, tab->name, -1);
    return parse_failed(p);
  }
  SrcList *src = compile_src_single(p, tab, d->table->alias);
  if (src) compile_src_index_hint(src, d->table);
  if (!src) return 1;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  compile_dml_trig_nc(p, &nc);
  SqlExpr *where = compile_dml_expr_dup(p, d->where);
  if (where && (compile_resolve_expr(p, &nc, where) || parse_failed(p))) return 1;
  RowList rl;
  memset(&rl, 0, sizeof rl);
  WhereInfo *wi = NULL;
  int onepass = ONEPASS_OFF;
  if (d->limit) {
    collect_rows_limited(p, d->table, d->where, d->order_by, d->limit, d->offset, tab, d->with,
                         &rl);
  } else {
    wi = compile_where_plan(p, src, where, NULL, WHERE_ONEPASS);
    if (!wi) return 1;
    onepass =
        onepass_mode(wi, !before && !after && !fk && !d->returning && !has_subquery(where), NULL);
    if (onepass != ONEPASS_ONE) p->multi_write = 1;
  }
  if (parse_failed(p)) return 1;
  /* a one-pass loop over an index deletes the row's entry there (no seek);
   * BEFORE triggers may move the loop's cursor first */
  WriterUse use = {NULL, -1, NULL, 0, 0};
  if (onepass && !before) use.scan_cur = compile_where_write_index(wi, &use.scan);
  Writer w;
  if (compile_dml_writer_open_for(p, &w, tab, 0, wi ? src->a[0].cursor : -1, &use)) return 1;
  Returning ret;
  if (compile_dml_returning_setup(p, tab, d->table->alias, d->returning, &ret)) return 1;
  int old = emit_regs(p, tab->ncol + 1);
  int done = emit_label(p), top = 0;
  int next = dml_loop_begin(p, wi, onepass, &w, &rl, src->a[0].cursor, done, &top);
  if (!next) return 1;
  /* the old row: every column for triggers, foreign keys and RETURNING,
   * else only what the index entries hold */
  int whole = before || after || fk || d->returning;
  if (whole) compile_dml_read_row(&w, old);
  if (before) {
    compile_trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_BEFORE, NULL, old, 0, 0, next);
    compile_dml_reseek_row(p, &w, old, next);
  }
  if (fk) compile_fk_check(p, tab, old, 0, NULL, 0);
  compile_dml_returning_row(p, &ret, old, old + 1);
  if (whole)
    compile_dml_delete_keys(&w, old, old + 1, 0);
  else /* only the index entries need the row: their keys read from it */
    compile_dml_delete_row_keys(&w, old);
  int a = vm_builder_add_text(&p->b, OP_Delete, w.tabcur, 0, 0, tab->name, -1);
  vm_builder_set_p5(&p->b, a, VM_OPFLAG_NCHANGE);
  if (fk) compile_fk_actions(p, tab, old, 0, NULL, 0);
  if (after) compile_trigger_code(p, tab, TRIGGER_DELETE, TRIGGER_AFTER, NULL, old, 0, 0, next);
  dml_loop_end(p, wi, onepass, &rl, top, next);
  emit_resolve(p, done);
  compile_dml_returning_end(p, &ret);
  return parse_failed(p);
}
