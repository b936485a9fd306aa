/*
 * dml_int.h -- private interface of the DML files: compile_dml.c (shared
 * parts: rows, Writer, lookup, RETURNING), compile_constraint.c,
 * compile_insert.c, compile_update.c, and compile_trigger.c (owned by the
 * dml part). The dml_* functions below are theirs alone.
 *
 * A trigger body is compiled by a nested Parse wrapped in a TrigFrame; the
 * frames form a stack (outer) so a trigger can see which triggers are being
 * compiled around it (recursive triggers off: a trigger does not fire
 * itself) and the conflict resolution the outermost statement imposes.
 *
 * Invariants:
 *  1. A Parse with nested > 0 made by compile_trigger.c is always the first
 *     member of a TrigFrame, so dml_frame() may cast it.
 *  2. TrigFrame.oe is the outer statement's OR clause (SQL_OE_*, 0 = none):
 *     when set it overrides the conflict resolution of the body statements.
 */
#ifndef SHALE_SQL_DML_INT_H
#define SHALE_SQL_DML_INT_H

#include "compile.h"

typedef struct TrigFrame {
  Parse p; /* must be first (invariant 1) */
  Parse *outer;
  const Trigger *trig;
  int oe;
  int nprog; /* root frame: trigger programs compiled below it */
} TrigFrame;

static inline TrigFrame *dml_frame(Parse *p) { return p->nested > 0 ? (TrigFrame *)p : NULL; }

/* Deep copy of an expression tree into the Parse arena (subqueries shared). */
SqlExpr *compile_dml_expr_dup(Parse *, const SqlExpr *);
SqlExprList *compile_dml_list_dup(Parse *, const SqlExprList *);

/* The table being written and its indexes: cursors, key registers, the
 * conflict resolution (compile_dml.c). */
typedef struct Writer {
  Parse *p;
  Table *tab;
  int tabcur;
  int nidx;
  Index **idx; /* check order (compile_constraint.c invariant 1) */
  int *cur;    /* cursor per index (tabcur for a WITHOUT ROWID PK) */
  int *key;    /* new key registers per index (ncol each) */
  int *rec;    /* new key record per index (NULL: partial WHERE false) */
  int *okey;   /* old key registers per index */
  int stmt_oe;
  int vrow;  /* scratch row for REPLACE victims (ncol+1; 0 until first used) */
  int vtmp;  /* scratch (ncol+1; 0 until first used) */
  int pkreg; /* WITHOUT ROWID: PRIMARY KEY values (npk) */
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
   * kept. REPLACE victims still lose every entry (compile_dml_delete_current).
   * A Writer opened knowing the kept set (WriterUse.changed, no REPLACE
   * possible) leaves their cursors closed: cur[i] = -1. */
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
   * left on the victim's entry, or -1: compile_dml_delete_keys deletes that entry where
   * the cursor is, without a seek */
  int on_victim;
  /* DELETE: the index (position in idx) the one-pass loop walks, its cursor
   * standing on the row's entry (WriterUse.scan): compile_dml_delete_keys
   * deletes that entry there, without a seek. -1 = none. */
  int on_scan;
  /* INSERT: IdxInsert is given the new key's registers (p3, p4 = count), so
   * the VM compares them instead of unpacking the record it just built
   * (SQLite's unpacked IdxInsert). Set only where nothing between the
   * key's MakeRecord and the IdxInsert can move what those registers
   * borrow: an INSERT row (its values are the statement's own, or a
   * source the write does not touch), and no REPLACE victim whose delete
   * runs triggers or foreign-key actions. */
  int keyregs;
  /* INSERT: the new rowid came from NewRowid (no INTEGER PRIMARY KEY value
   * given): the Insert hints an append (VM_OPFLAG_APPEND), so a table
   * cursor moved away since (a REPLACE victim's delete) seeks the row's
   * place from the right. */
  int append;
  /* INSERT, UPDATE: an Affinity over every column of the new row ran (and
   * each value set since got its column's affinity: generated columns, a
   * NOT NULL default), so the index keys of plain columns and the row's
   * record are made without applying the affinities again
   * (compile_dml_build_new_keys, compile_dml_write_row). A REAL affinity
   * is still applied there (it stores integral values as integers). Set by
   * the caller around those calls. */
  int cols_aff;
  /* compile_dml_delete_row_keys: the old keys' plain columns and rowid are
   * read from the table cursor's row straight into the key registers
   * (build_key_regs), not copied from a row read before. */
  int keys_from_row;
  /* UPDATE: an index entry the update leaves byte for byte as it was is
   * neither deleted nor written again. compile_dml_delete_keys builds the
   * old key's record into orec[i] (NULL when a partial index's WHERE is
   * false for the old row: no entry to delete) and skips the IdxDelete when
   * it equals the new key's record w->rec[i] (a blob compare, so a NOCASE
   * 'a' -> 'A' is still rewritten); compile_dml_write_row skips the
   * IdxInsert then. Set by the caller around those two calls, only where
   * nothing between them reads the index (compile_update.c invariant 4).
   * orec: registers per index, allocated at the first use. */
  int same_keys;
  int *orec;
} Writer;

/* What an UPDATE or DELETE knows before it opens its Writer
 * (compile_dml_writer_open_for). */
typedef struct WriterUse {
  /* DELETE without BEFORE triggers: the index the one-pass loop walks with
   * cursor scan_cur (compile_where_write_index), or NULL */
  const Index *scan;
  int scan_cur;
  /* UPDATE: the columns assigned and compile_dml_writer_keep_unchanged's
   * other arguments; the indexes kept are not opened unless a REPLACE may
   * delete rows. NULL = open every index. */
  const uint8_t *changed;
  int key_change, before;
} WriterUse;

/* RETURNING: the list resolved against the table (cursor), rows buffered in
 * ephemeral table eph during the statement and returned after it, as
 * SQLite does. */
typedef struct Returning {
  SqlExprList *list;
  int cursor, eph, vals, n;
} Returning;

/* compile_dml.c */
void compile_dml_bind_row(Parse *p, SqlExpr *e, int cursor, int rowid, int cols);
void compile_dml_remap_cursor(Parse *p, SqlExpr *e, int from, int to);
void compile_dml_remap_cursor_select(Parse *p, SqlSelect *s, int from, int to);
void compile_dml_trig_nc(Parse *p, NameCtx *nc);
SqlExpr *compile_dml_row_expr(Parse *p, Table *tab, const SqlExpr *e, int rowid, int cols,
                              int flags, const char *ctx);
void compile_dml_code_default(Parse *p, Column *col, int target);
int compile_dml_is_rowid_name(const char *z);
int compile_dml_pick_oe(int stmt_oe, int cons_oe);
int compile_dml_may_replace(const Table *tab, int stmt_oe);
int compile_dml_stmt_oe_of(Parse *p, int own);
void compile_dml_halt_msg(Parse *p, int code, int oe, const char *msg);
int compile_dml_reads_changed(const Table *tab, SqlExpr *e, const uint8_t *chg, int rowid_changed,
                              int gen_changed);
uint8_t *compile_dml_changed_closure(Parse *p, const Table *tab, const uint8_t *changed,
                                     int rowid_changed);
int compile_dml_index_affected(const Index *x, const uint8_t *chg);
void compile_dml_writer_keep_unchanged(Writer *w, const uint8_t *changed, int key_change,
                                       int before);
int compile_dml_kept(const Writer *w, int i);
int compile_dml_up_clause(const Writer *w, int i);
int compile_dml_writer_open(Parse *p, Writer *w, Table *tab, int stmt_oe, int tabcur);
int compile_dml_writer_open_for(Parse *p, Writer *w, Table *tab, int stmt_oe, int tabcur,
                                const WriterUse *use);
void compile_dml_build_new_keys(Writer *w, int rowid, int cols);
void compile_dml_delete_keys(Writer *w, int rowid, int cols, int with_pk);
void compile_dml_read_row(Writer *w, int dst);
void compile_dml_read_index_cols(Writer *w, int dst);
/* Delete the index entries of the row tabcur is on (a DELETE or a REPLACE
 * victim that needs nothing else of it): each key read from the row into
 * its registers, as SQLite's; dst (ncol+1 registers) gets the columns
 * expression keys are computed from. */
void compile_dml_delete_row_keys(Writer *w, int dst);
/* UPDATE (compile_update.c invariant 3): read the row tabcur is on into dst
 * (ncol+1 registers) borrowed from the page, valid until the table cursor
 * moves or writes: the rowid, every column not in changed[], those the
 * index entries to delete are built from (w->keep set) and those the SET
 * expressions set[] (ncol, NULL = not assigned) read through cursor. */
void compile_dml_read_row_borrowed(Writer *w, int dst, const uint8_t *changed, SqlExpr **set,
                                   int cursor);
/* 1 if nothing but plain index keys and the record reads the new values of
 * an UPDATE without triggers (w->keep set): no STRICT types, CHECK,
 * generated column, or expression or partial index written. MakeRecord then
 * applies the columns' affinity itself. */
int compile_dml_record_applies_affinity(const Writer *w);
void compile_dml_own_new_row(Parse *p, Table *tab, int cols);
/* REPLACE victims of tab fire its DELETE triggers (recursive_triggers on
 * and tab has some): they are deleted through their triggers. */
int compile_dml_victim_triggers(Parse *, const Table *tab);
void compile_dml_delete_current(Writer *w, int count, int keep_row);
void compile_dml_write_row(Writer *w, int rowid, int cols, int lastrowid);
void compile_dml_code_generated(Parse *p, Table *tab, int rowid, int cols);
void compile_dml_attach_with(SqlWith *with, SqlExpr *e);
void compile_dml_attach_with_list(SqlWith *with, SqlExprList *l);
Table *compile_dml_table(Parse *p, const char *schema, const char *name, View **view);
Table *compile_dml_view_table(Parse *p, View *v, int op);
int compile_dml_set_list_resolve(Parse *p, const SqlExprList *setl, Table *tab, NameCtx *nc,
                                 SqlExpr **set, uint8_t *changed);
int compile_dml_view_dml(Parse *p, View *v, int op, const char *alias, const SqlExprList *setl,
                         const SqlExpr *where_ast, int stmt_oe);
/* UPDATE ... FROM: the target item joined with the FROM list (the first
 * join made an inner one), its USING/NATURAL merged, its ON terms resolved
 * with nc (nc->src set, the trigger context added). NULL after an error.
 * compile_update.c; compile_vtab_dml.c uses it for virtual tables. */
SrcList *compile_dml_update_from(Parse *p, const Table *tab, const SqlSrcItem *target,
                                 const SqlSrcList *from, NameCtx *nc);
int compile_dml_returning_setup(Parse *p, Table *tab, const char *alias, const SqlExprList *ast,
                                Returning *r);
/* Buffer one RETURNING row computed from the row in registers (rowid, cols). */
void compile_dml_returning_row(Parse *p, Returning *r, int rowid, int cols);
/* The same, but a result that is only a column of the row (bare_column)
 * reads it from the block bare instead: SQLite's virtual-table rows, whose
 * plain columns show the values in their stored form (a REAL column's 2.0
 * as 2) while any expression over them sees the column's affinity. */
void compile_dml_returning_row_bare(Parse *p, Returning *r, int rowid, int cols, int bare);
void compile_dml_returning_end(Parse *p, Returning *r);

/* compile_constraint.c */
void compile_dml_check_row(Writer *w, int rowid, int cols, int ignore);
void compile_dml_check_unique(Writer *w, int rowid, int cols, int old, int rowid_chk, int ignore);

/* compile_update.c */
void compile_dml_reseek_row(Parse *p, Writer *w, int old, int next);

#endif
