/*
 * compile_constraint.c -- the checks of a new row before it is written: NOT
 * NULL (with OR REPLACE's default), CHECK, STRICT column types, and the
 * rowid and UNIQUE/PRIMARY KEY conflicts with every conflict resolution
 * (ABORT/FAIL/ROLLBACK halts, IGNORE skips the row, REPLACE deletes the
 * victims, UPSERT targets go to their DO clause).
 *
 * Owns: compile_dml_check_row, compile_dml_check_unique (and their helpers).
 *
 * Invariants:
 *  1. Unique checks run, like SQLite's, in the table's index order with the
 *     REPLACE indexes last; every check happens before any write of the row,
 *     so an ABORT/FAIL/IGNORE leaves the row untouched.
 *  2. An UPDATE checks NOT NULL and CHECK constraints only where they read an
 *     assigned column (Writer.changed), as SQLite skips the others.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

static const char *unique_msg(Parse *p, const Index *x) {
  char buf[1024];
  size_t n = 0;
  buf[0] = 0;
  for (int j = 0; j < x->nkey; j++) {
    if (x->cols[j].col == INDEX_COL_EXPR) {
      snprintf(buf, sizeof buf, "UNIQUE constraint failed: index '%s'", x->name);
      return compile_parse_strdup(p, buf);
    }
  }
  n = (size_t)snprintf(buf, sizeof buf, "UNIQUE constraint failed: ");
  for (int j = 0; j < x->nkey && n < sizeof buf; j++) {
    int c = x->cols[j].col;
    const char *cn = c >= 0 ? x->table->cols[c].name : "rowid";
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s.%s", j ? ", " : "", x->table->name, cn);
  }
  return compile_parse_strdup(p, buf);
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

/* A STRICT table with generated columns has its (other) columns' types
 * checked before everything else: SQLite checks them where it would apply
 * their affinity before computing the generated columns. */
static int types_early(const Table *tab) {
  for (int j = 0; tab->strict && j < tab->ncol; j++)
    if (tab->cols[j].gen) return 1;
  return 0;
}

/* Checks for the new row (rowid, cols) before any write: compile_dml_check_row (NOT
 * NULL, CHECK; may put a default in place: before the keys are built), then
 * compile_dml_check_unique (after compile_dml_build_new_keys).
 *   old:        UPDATE: the old row (ncol+1 registers), else 0
 *   rowid_chk:  the rowid is given (INSERT with an INTEGER PRIMARY KEY value,
 *               UPDATE of the rowid): check it is free
 *   ignore:     where OR IGNORE goes (skip the row) */
/* Does CHECK expression e read a column the UPDATE assigns (or a generated
 * column, or a name it cannot place)? Always 1 for an INSERT. */
static int check_reads_changed(const Writer *w, SqlExpr *e) {
  if (!w->changed) return 1;
  return compile_dml_reads_changed(w->tab, e, w->changed, w->rowid_changed, 1);
}

void compile_dml_check_row(Writer *w, int rowid, int cols, int ignore) {
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
    int oe = compile_dml_pick_oe(w->stmt_oe, c->notnull_conflict);
    if (oe == SQL_OE_REPLACE && !c->dflt) oe = SQL_OE_ABORT;
    snprintf(buf, sizeof buf, "NOT NULL constraint failed: %s.%s", tab->name, c->name);
    if (oe == SQL_OE_IGNORE) {
      emit(p, OP_IsNull, cols + j, ignore, 0);
    } else if (oe == SQL_OE_REPLACE) {
      int ok = emit_label(p);
      replaced = 1;
      emit(p, OP_NotNull, cols + j, ok, 0);
      compile_dml_code_default(p, c, cols + j);
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
  if (replaced) compile_dml_code_generated(p, tab, rowid, cols); /* as SQLite: over the defaults */
  if (tab->ncheck > 0 && !early) check_types(w, cols);
  /* CHECK (none under PRAGMA ignore_check_constraints) */
  for (int k = 0; k < tab->ncheck && !parse_failed(p) && !(p->env && p->env->ignore_checks); k++) {
    Check *ck = &tab->checks[k];
    if (!check_reads_changed(w, ck->expr)) continue;
    SqlExpr *e = compile_dml_row_expr(p, tab, ck->expr, rowid, cols, NC_IS_CHECK | NC_NO_SUBQUERY,
                                      "CHECK constraints");
    if (!e) return;
    int oe = compile_dml_pick_oe(w->stmt_oe, 0);
    if (oe == SQL_OE_REPLACE) oe = SQL_OE_ABORT;
    int ok = emit_label(p);
    compile_expr_if_true(p, e, ok, 1);
    if (oe == SQL_OE_IGNORE) {
      emit(p, OP_Goto, 0, ignore, 0);
    } else {
      snprintf(buf, sizeof buf, "CHECK constraint failed: %s",
               ck->name  ? ck->name
               : ck->sql ? ck->sql
                         : "");
      compile_dml_halt_msg(p, SHALE_CONSTRAINT_CHECK, oe, buf);
    }
    emit_resolve(p, ok);
  }
}

/* Uniqueness checks for the new row (keys built by compile_dml_build_new_keys). */
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
      compile_dml_pick_oe(w->stmt_oe, tab->pk_conflict) == SQL_OE_REPLACE &&
      compile_dml_up_clause(w, -1) < 0) {
    int ok = emit_label(p);
    if (old) emit(p, OP_Eq, old, ok, rowid);
    emit(p, OP_NotExists, w->tabcur, ok, rowid);
    const char *cn = tab->rowid_alias >= 0 ? tab->cols[tab->rowid_alias].name : "rowid";
    snprintf(buf, sizeof buf, "UNIQUE constraint failed: %s.%s", tab->name, cn);
    compile_dml_halt_msg(p, SHALE_CONSTRAINT_PRIMARYKEY, SQL_OE_ABORT, buf);
    emit_resolve(p, ok);
  }
  for (int i = 0; i < w->nidx; i++) {
    Index *x = w->idx[i];
    if (!x->unique || compile_dml_kept(w, i) || (x == tab->pk_index && w->keep) ||
        compile_dml_up_clause(w, i) >= 0)
      continue;
    if (compile_dml_pick_oe(w->stmt_oe, x->on_conflict) != SQL_OE_REPLACE) continue;
    int ok = emit_label(p);
    if (x->where) emit(p, OP_IsNull, w->rec[i], ok, 0); /* (a partial index's NULL record) */
    vm_builder_add_i4(&p->b, OP_NoConflict, w->cur[i], ok, w->key[i], x->nkey);
    if (old && !tab->without_rowid) {
      int t = emit_regs(p, 1);
      emit(p, OP_IdxRowid, w->cur[i], t, 0);
      emit(p, OP_Eq, old, ok, t);
    }
    const char *msg = unique_msg(p, x);
    if (!msg) return;
    compile_dml_halt_msg(
        p, x->origin == INDEX_ORIGIN_PK ? SHALE_CONSTRAINT_PRIMARYKEY : SHALE_CONSTRAINT_UNIQUE,
        SQL_OE_ABORT, msg);
    emit_resolve(p, ok);
  }
  emit_resolve(p, done);
}

/* WITHOUT ROWID: the PRIMARY KEY of the entry index i's cursor is on, read
 * from that entry's columns into w->pkreg.. (to find the table row). */
static void load_pk_of_entry(Writer *w, int i, const Index *x) {
  const Index *pk = w->tab->pk_index;
  for (int j = 0; j < pk->nkey; j++) {
    int pc = pk->cols[j].col, pos = 0;
    for (int k = 0; k < x->ncol; k++)
      if (x->cols[k].col == pc) {
        pos = k;
        break;
      }
    emit(w->p, OP_Column, w->cur[i], pos, w->pkreg + j);
  }
}

void compile_dml_check_unique(Writer *w, int rowid, int cols, int old, int rowid_chk, int ignore) {
  Parse *p = w->p;
  Table *tab = w->tab;
  char buf[512];
  if (parse_failed(p)) return;
  if (w->trigcnt) emit(p, OP_Integer, 0, w->trigcnt, 0);
  /* rowid conflict (deferred after the indexes when the table's own
   * REPLACE rule applies and other constraints may say otherwise) */
  int ipk_oe = compile_dml_pick_oe(w->stmt_oe, tab->pk_conflict);
  int defer = rowid_chk && ipk_oe == SQL_OE_REPLACE && w->stmt_oe != SQL_OE_REPLACE && w->nidx &&
              compile_dml_up_clause(w, -1) < 0;
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
  int types_first = do_rowid && ipk_oe == SQL_OE_REPLACE && compile_dml_up_clause(w, -1) < 0;
  if (types_early(tab))
    types_first = 1; /* done by compile_dml_check_row */
  else if (types_first && tab->ncheck == 0)
    check_types(w, cols);
  for (int i = 0; i <= w->nidx && !parse_failed(p); i++) {
    if (i == at) {
      int ok = emit_label(p);
      if (old) emit(p, OP_Eq, old, ok, rowid);
      emit(p, OP_NotExists, w->tabcur, ok, rowid);
      int uc = compile_dml_up_clause(w, -1);
      if (uc >= 0) {
        emit(p, OP_Goto, 0, w->up_nothing[uc] ? ignore : w->up_label[uc], 0);
      } else if (ipk_oe == SQL_OE_REPLACE) {
        /* the victim's index entries go before the new row is checked
         * against the indexes: SQLite's sqlite3MultiWrite. An INSERT whose
         * later checks can only replace (or come before) writes the new row
         * over the victim: its record need not be deleted first. */
        if (w->nidx) p->multi_write = 1;
        int last = !old && !w->nup && (i == w->nidx || w->stmt_oe == SQL_OE_REPLACE);
        compile_dml_delete_current(w, 0, last);
      } else if (ipk_oe == SQL_OE_IGNORE) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else {
        const char *cn = tab->rowid_alias >= 0 ? tab->cols[tab->rowid_alias].name : "rowid";
        snprintf(buf, sizeof buf, "UNIQUE constraint failed: %s.%s", tab->name, cn);
        compile_dml_halt_msg(p, SHALE_CONSTRAINT_PRIMARYKEY, ipk_oe, buf);
      }
      emit_resolve(p, ok);
    }
    if (i == 0 && tab->ncheck == 0 && !types_first) check_types(w, cols);
    if (i == w->nidx) break;
    /* UNIQUE index i */
    {
      Index *x = w->idx[i];
      if (!x->unique || compile_dml_kept(w, i)) continue;
      if (x == tab->pk_index && w->keep) continue; /* UPDATE keeping the PRIMARY KEY */
      int oe = compile_dml_pick_oe(w->stmt_oe, x->on_conflict);
      int ok = emit_label(p);
      /* only a partial index whose WHERE fails has a NULL record */
      if (x->where) emit(p, OP_IsNull, w->rec[i], ok, 0);
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
      int uc = compile_dml_up_clause(w, i);
      if (uc >= 0 && w->up_nothing[uc]) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else if (uc >= 0) {
        /* put the table cursor on the existing row, then DO UPDATE */
        if (tab->without_rowid) {
          if (x != tab->pk_index) {
            Index *pk = tab->pk_index;
            load_pk_of_entry(w, i, x);
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
            load_pk_of_entry(w, i, x);
            vm_builder_add_i4(&p->b, OP_NotFound, w->tabcur, skip, w->pkreg, pk->nkey);
            compile_dml_delete_current(w, 0, 0);
            emit_resolve(p, skip);
          } else {
            compile_dml_delete_current(w, 0, 0);
          }
        } else {
          int skip = emit_label(p), t = emit_regs(p, 1);
          emit(p, OP_IdxRowid, w->cur[i], t, 0);
          emit(p, OP_NotExists, w->tabcur, skip, t);
          /* nothing moves cursor i before the victim's entries go (foreign
           * key checks might: then it is found again by its key) */
          if (!compile_fk_required(p, tab, NULL, 0)) w->on_victim = i;
          compile_dml_delete_current(w, 0, 0);
          w->on_victim = -1;
          emit_resolve(p, skip);
        }
      } else if (oe == SQL_OE_IGNORE) {
        emit(p, OP_Goto, 0, ignore, 0);
      } else {
        const char *msg = unique_msg(p, x);
        if (!msg) return;
        compile_dml_halt_msg(
            p, x->origin == INDEX_ORIGIN_PK ? SHALE_CONSTRAINT_PRIMARYKEY : SHALE_CONSTRAINT_UNIQUE,
            oe, msg);
      }
      emit_resolve(p, ok);
    }
  }
  if (w->trigcnt) recheck_replaced(w, rowid, old, rowid_chk);
}
