/*
 * compile_fk.c -- FOREIGN KEY enforcement (PRAGMA foreign_keys=ON): the code
 * an INSERT, UPDATE, DELETE, UPSERT, REPLACE or DROP TABLE runs for each row
 * it removes or adds, following SQLite 3.40's rules.
 *
 *  - Child side (the row's own foreign keys): the new key is looked up in
 *    the parent (its rowid, or the UNIQUE index the key names); not found
 *    adds 1 to a violation counter. A removed child row whose parent is
 *    missing takes 1 back (it was counted when it was written). A NULL in
 *    any key column means no check.
 *  - Parent side (foreign keys naming the row's table): the children of a
 *    removed parent key are counted (+1 each), those of an added one
 *    subtracted (they were orphans), with a scan of the child table built
 *    as a WHERE loop (child indexes are used).
 *  - Counters: FkCounter p1 = 0 (immediate: the statement's, checked when it
 *    ends) or 1 (DEFERRABLE INITIALLY DEFERRED: the connection's, checked at
 *    COMMIT). A single-row INSERT outside triggers halts at once instead.
 *  - Actions (ON DELETE / ON UPDATE CASCADE, SET NULL, SET DEFAULT,
 *    RESTRICT) are AFTER triggers built as SQL text and compiled by
 *    compile_trigger.c; each is compiled once per statement and called by
 *    reference (P4_SUBREF), so a cascade through a self-referencing table
 *    recurses at run time (limit: SQLITE_LIMIT_TRIGGER_DEPTH).
 *
 * Owns: compile_fk_required, compile_fk_check, compile_fk_actions, compile_fk_drop_table, and the
 * FkAct list of the outermost Parse.
 *
 * Invariants:
 *  1. Foreign keys of a table are visited last declared first (SQLite's
 *     list, PRAGMA foreign_key_list's id order); the foreign keys naming a
 *     parent, most recently created child table first.
 *  2. An action program lives in the outermost program (vm_builder_adopt)
 *     and its cell in that program's arena; the FkAct entry is made before
 *     the program is compiled, so a use inside it refers to the same cell.
 *  3. Comparisons are SQLite's: a child value looked up in a parent index
 *     gets the parent column's affinity first; a child scan compares the
 *     parent value (parent affinity, parent collation -- explicit) with the
 *     child column.
 */
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "dml_int.h"

#define FK_MAX_DEPTH 1000 /* SQLITE_MAX_TRIGGER_DEPTH */
#define FK_MAX_COLS 64

struct FkAct {
  const ForeignKey *fk;
  int upd;          /* 0: ON DELETE, 1: ON UPDATE */
  int action;       /* SCHEMA_FK_* */
  Trigger *trig;    /* the synthetic trigger (its frame identifies the program) */
  VmProgram **cell; /* invariant 2 */
  struct FkAct *next;
};

/* A child foreign key: its table and the key. */
typedef struct FkRef {
  Table *child;
  const ForeignKey *fk;
} FkRef;

static Parse *fk_root(Parse *p) {
  while (p->nested > 0 && dml_frame(p)) p = dml_frame(p)->outer;
  return p;
}

static int fk_on(const Parse *p) { return p->env && p->env->foreign_keys; }
static int fk_defer_env(const Parse *p) { return p->env && p->env->defer_foreign_keys; }

/* ---------------------------------------------------------------- lookup */

static int ref_cmp(const FkRef *a, const FkRef *b) {
  /* most recently created child first (root page as the proxy), then the
   * child's foreign keys last declared first */
  if (a->child != b->child) {
    if (a->child->root != b->child->root) return a->child->root > b->child->root ? -1 : 1;
    return util_stricmp(a->child->name, b->child->name);
  }
  return a->fk > b->fk ? -1 : a->fk < b->fk ? 1 : 0;
}

/* Every foreign key naming tab as its parent (invariant 1), arena array. */
static int fk_refs(Parse *p, const Table *tab, FkRef **out) {
  *out = NULL;
  if (!p->schema) return 0;
  int n = 0, cap = 0, pos = 0;
  FkRef *a = NULL;
  Table *t;
  while ((t = schema_map_next(&p->schema->tables, &pos)) != NULL) {
    for (int k = 0; k < t->nfk; k++) {
      if (util_stricmp(t->fks[k].parent, tab->name) != 0) continue;
      if (n == cap) {
        int ncap = cap ? cap * 2 : 8;
        FkRef *b = compile_parse_alloc(p, (size_t)ncap * sizeof *b);
        if (!b) return 0;
        if (n) memcpy(b, a, (size_t)n * sizeof *b);
        a = b;
        cap = ncap;
      }
      a[n].child = t;
      a[n].fk = &t->fks[k];
      n++;
    }
  }
  for (int i = 1; i < n; i++) { /* insertion sort: lists are short */
    FkRef x = a[i];
    int j = i - 1;
    while (j >= 0 && ref_cmp(&a[j], &x) > 0) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
  *out = a;
  return n;
}

static int has_refs(Parse *p, const Table *tab) {
  if (!p->schema) return 0;
  int pos = 0;
  Table *t;
  while ((t = schema_map_next(&p->schema->tables, &pos)) != NULL)
    for (int k = 0; k < t->nfk; k++)
      if (util_stricmp(t->fks[k].parent, tab->name) == 0) return 1;
  return 0;
}

/* SQLite's parent key (compile.h): the rowid (*idx = NULL) for a one-column key naming
 * the INTEGER PRIMARY KEY (or none), else a UNIQUE non-partial index on
 * exactly the named columns with the columns' declared collations (the
 * PRIMARY KEY when none are named). aicol[i] = child column matched with
 * the index's column i. 1 = none: "foreign key mismatch" recorded if report. */
int compile_fk_parent_key(const Table *par, const ForeignKey *fk, const Index **idx, int *aicol) {
  int n = fk->ncol;
  const char *key0 = fk->parent_cols ? fk->parent_cols[0] : NULL;
  *idx = NULL;
  if (n == 1 && par->rowid_alias >= 0 && !par->without_rowid &&
      (!key0 || util_stricmp(par->cols[par->rowid_alias].name, key0) == 0)) {
    aicol[0] = fk->cols[0];
    return 0;
  }
  for (const Index *x = par->indexes; x; x = x->next) {
    if (x->nkey != n || !x->unique || x->where) continue;
    if (!key0) {
      if (x->origin != INDEX_ORIGIN_PK) continue;
      for (int i = 0; i < n; i++) aicol[i] = fk->cols[i];
      *idx = x;
      return 0;
    }
    int i;
    for (i = 0; i < n; i++) {
      int c = x->cols[i].col;
      if (c < 0) break;
      const char *dc = par->cols[c].coll ? par->cols[c].coll : "BINARY";
      if (util_stricmp(x->cols[i].coll ? x->cols[i].coll : "BINARY", dc) != 0) break;
      int j;
      for (j = 0; j < n; j++)
        if (fk->parent_cols[j] && util_stricmp(fk->parent_cols[j], par->cols[c].name) == 0) {
          aicol[i] = fk->cols[j];
          break;
        }
      if (j == n) break;
    }
    if (i == n) {
      *idx = x;
      return 0;
    }
  }
  return 1;
}

static int fk_locate(Parse *p, const Table *par, const Table *child, const ForeignKey *fk,
                     const Index **idx, int *aicol, int report) {
  if (fk->ncol > FK_MAX_COLS) return 1;
  if (compile_fk_parent_key(par, fk, idx, aicol) == 0) return 0;
  if (report)
    compile_parse_error(p, "foreign key mismatch - \"%s\" referencing \"%s\"", child->name,
                        fk->parent);
  return 1;
}

static int child_modified(const Table *tab, const ForeignKey *fk, const uint8_t *changed,
                          int rowid_changed) {
  for (int i = 0; i < fk->ncol; i++) {
    int c = fk->cols[i];
    if (c >= 0 && c < tab->ncol && changed[c]) return 1;
    if (c == tab->rowid_alias && rowid_changed) return 1;
  }
  return 0;
}

static int parent_modified(const Table *tab, const ForeignKey *fk, const uint8_t *changed,
                           int rowid_changed) {
  for (int i = 0; i < fk->ncol; i++) {
    const char *key = fk->parent_cols ? fk->parent_cols[i] : NULL;
    for (int c = 0; c < tab->ncol; c++) {
      if (!changed[c] && !(c == tab->rowid_alias && rowid_changed)) continue;
      if (key ? util_stricmp(tab->cols[c].name, key) == 0 : tab->cols[c].pk != 0) return 1;
    }
  }
  return 0;
}

int compile_fk_required(Parse *p, const Table *tab, const uint8_t *changed, int rowid_changed) {
  if (!fk_on(p) || !tab || !p->schema) return 0;
  if (!changed) return tab->nfk > 0 || has_refs(p, tab);
  int ret = 0;
  for (int k = 0; k < tab->nfk; k++)
    if (child_modified(tab, &tab->fks[k], changed, rowid_changed)) {
      if (util_stricmp(tab->fks[k].parent, tab->name) == 0) ret = 2;
      if (!ret) ret = 1;
    }
  FkRef *refs;
  int n = fk_refs(p, tab, &refs);
  for (int i = 0; i < n; i++)
    if (parent_modified(tab, refs[i].fk, changed, rowid_changed)) {
      int a = refs[i].fk->on_update;
      if (a != SCHEMA_FK_NONE && a != SCHEMA_FK_NO_ACTION) return 2;
      if (!ret) ret = 1;
    }
  return ret;
}

/* ------------------------------------------------------------ child side */

static void fk_violation(Parse *p, const ForeignKey *fk, int incr) {
  if (!fk->deferred && !fk_defer_env(p) && p->nested == 0 && !p->multi_write) {
    /* a single-row INSERT: no statement journal, so fail before writing */
    vm_builder_add_text(&p->b, OP_Halt, SHALE_CONSTRAINT_FOREIGNKEY, VM_OE_ABORT, 0,
                        "FOREIGN KEY constraint failed", -1);
  } else {
    emit(p, OP_FkCounter, fk->deferred ? 1 : 0, incr, 0);
  }
}

/* The child row in reg (rowid, columns) against its parent par. */
static void lookup_parent(Parse *p, const Table *par, const Index *idx, const ForeignKey *fk,
                          const int *aicol, const Table *child, int reg, int incr) {
  int ok = emit_label(p);
  int n = fk->ncol;
  if (incr < 0) emit(p, OP_FkIfZero, fk->deferred ? 1 : 0, ok, 0);
  for (int i = 0; i < n; i++) emit(p, OP_IsNull, reg + 1 + fk->cols[i], ok, 0);
  int cur = emit_cursor(p);
  int missing = emit_label(p);
  if (!idx) {
    int t = emit_regs(p, 1);
    emit(p, OP_Copy, reg + 1 + aicol[0], t, 0);
    emit(p, OP_MustBeInt, t, missing, 0);
    if (par == child && incr == 1) emit(p, OP_Eq, reg, ok, t); /* the row itself */
    compile_parse_open_table(p, cur, par, 0);
    emit(p, OP_NotExists, cur, missing, t);
    emit(p, OP_Goto, 0, ok, 0);
  } else {
    int t = emit_regs(p, n);
    for (int i = 0; i < n; i++) emit(p, OP_Copy, reg + 1 + aicol[i], t + i, 0);
    if (par == child && incr == 1) {
      /* a row referring to itself is its own parent */
      int differ = emit_label(p);
      for (int i = 0; i < n; i++) {
        int pc = idx->cols[i].col;
        int preg = pc == par->rowid_alias ? reg : reg + 1 + pc;
        int a = emit(p, OP_Ne, reg + 1 + aicol[i], differ, preg);
        vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
      }
      emit(p, OP_Goto, 0, ok, 0);
      emit_resolve(p, differ);
    }
    char *aff = compile_parse_alloc(p, (size_t)n + 1);
    if (!aff) return;
    for (int i = 0; i < n; i++) {
      int pc = idx->cols[i].col;
      char a = pc >= 0 ? par->cols[pc].affinity : AFF_INTEGER;
      aff[i] = a ? a : AFF_BLOB;
    }
    vm_builder_add_text(&p->b, OP_Affinity, t, n, 0, aff, n);
    compile_parse_open_index(p, cur, idx, 0);
    vm_builder_add_i4(&p->b, OP_Found, cur, ok, t, n);
  }
  emit_resolve(p, missing);
  fk_violation(p, fk, incr);
  emit_resolve(p, ok);
  emit(p, OP_Close, cur, 0, 0);
}

/* ----------------------------------------------------------- parent side */

static SqlExpr *new_node(Parse *p, int op) {
  SqlExpr *e = compile_parse_alloc(p, sizeof *e);
  if (e) {
    e->op = (uint8_t)op;
    e->height = 1;
  }
  return e;
}

static SqlExpr *bin_node(Parse *p, int tk, SqlExpr *a, SqlExpr *b) {
  if (!a) return b;
  if (!b) return a;
  SqlExpr *e = new_node(p, SQL_E_BINARY);
  if (!e) return NULL;
  e->sub = (uint16_t)tk;
  e->a = a;
  e->b = b;
  e->height = (a->height > b->height ? a->height : b->height) + 1;
  return e;
}

/* The parent row's column col (-1: rowid) from registers, with the parent
 * column's affinity and (explicit) collation. */
static SqlExpr *parent_value(Parse *p, const Table *par, int reg, int col) {
  SqlExpr *o = new_node(p, SQL_E_COLREF);
  SqlExpr *r = new_node(p, SQL_E_REG);
  if (!o || !r) return NULL;
  o->tab = par;
  o->cursor = -1;
  if (col < 0 || col == par->rowid_alias) {
    o->column = -1;
    o->aff = AFF_INTEGER;
    r->reg = reg;
    r->orig = o;
    return r;
  }
  o->column = col;
  o->aff = par->cols[col].affinity;
  r->reg = reg + 1 + col;
  r->orig = o;
  SqlExpr *c = new_node(p, SQL_E_COLLATE);
  if (!c) return NULL;
  c->z = par->cols[col].coll ? par->cols[col].coll : "BINARY";
  c->a = r;
  c->height = 2;
  return c;
}

static SqlExpr *child_column(Parse *p, const Table *child, int col) {
  SqlExpr *e = new_node(p, SQL_E_ID);
  if (e) {
    e->z = col < 0 ? "rowid" : child->cols[col].name;
    e->flags |= SQL_EF_QUOTED;
  }
  return e;
}

/* Count (incr) the rows of child whose key equals the parent key in reg. */
static void scan_children(Parse *p, const Table *par, const Index *idx, const ForeignKey *fk,
                          const int *aicol, Table *child, int reg, int incr) {
  int done = emit_label(p);
  if (incr < 0) emit(p, OP_FkIfZero, fk->deferred ? 1 : 0, done, 0);
  SrcList *src = compile_src_single(p, child, NULL);
  if (!src) return;
  SqlExpr *where = NULL;
  for (int i = 0; i < fk->ncol; i++) {
    int pc = idx ? idx->cols[i].col : -1;
    SqlExpr *eq =
        bin_node(p, TK_EQ, parent_value(p, par, reg, pc), child_column(p, child, aicol[i]));
    where = bin_node(p, TK_AND, where, eq);
  }
  if (par == child && incr > 0) { /* the row does not count as its own child */
    SqlExpr *ne;
    if (!par->without_rowid) {
      SqlExpr *rc = new_node(p, SQL_E_COLREF);
      if (!rc) return;
      rc->tab = child;
      rc->cursor = src->a[0].cursor;
      rc->column = -1;
      rc->aff = AFF_INTEGER;
      ne = bin_node(p, TK_NE, parent_value(p, par, reg, -1), rc);
    } else {
      SqlExpr *all = NULL;
      for (int i = 0; i < idx->nkey; i++) {
        int pc = idx->cols[i].col;
        all =
            bin_node(p, TK_AND, all,
                     bin_node(p, TK_IS, parent_value(p, par, reg, pc), child_column(p, child, pc)));
      }
      ne = new_node(p, SQL_E_UNARY);
      if (!ne) return;
      ne->sub = TK_NOT;
      ne->a = all;
      ne->height = all ? all->height + 1 : 1;
    }
    where = bin_node(p, TK_AND, where, ne);
  }
  if (!where || parse_failed(p)) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  if (compile_resolve_expr(p, &nc, where) || parse_failed(p)) return;
  WhereInfo *wi = compile_where_begin(p, src, where, NULL, 0);
  if (!wi) return;
  emit(p, OP_FkCounter, fk->deferred ? 1 : 0, incr, 0);
  compile_where_end(wi);
  emit_resolve(p, done);
}

/* SQLite's isSetNullAction: when the trigger program compiled last in the
 * statement is fk's SET NULL action (so inside it, the child rows it sets
 * to NULL), new child keys of fk are not looked up. Like SQLite, this also
 * holds for a later row check of the statement (a REPLACE victim's action
 * compiled just before). */
static int in_set_null_action(Parse *p, const ForeignKey *fk) {
  Parse *root = fk_root(p);
  if (!root->last_trig) return 0;
  for (struct FkAct *a = root->fk_acts; a; a = a->next)
    if (a->trig == root->last_trig) return a->fk == fk && a->action == SCHEMA_FK_SET_NULL;
  return 0;
}

void compile_fk_check(Parse *p, const Table *tab, int old_reg, int new_reg, const uint8_t *changed,
                      int rowid_changed) {
  if (!fk_on(p) || parse_failed(p) || !p->schema) return;
  int ignore_errors = p->disable_triggers; /* DROP TABLE's implicit DELETE */
  int aicol[FK_MAX_COLS];
  for (int k = tab->nfk - 1; k >= 0 && !parse_failed(p); k--) {
    const ForeignKey *fk = &tab->fks[k];
    if (fk->ncol > FK_MAX_COLS) continue;
    if (changed && !child_modified(tab, fk, changed, rowid_changed)) continue;
    Table *par = schema_find_table(p->schema, fk->parent);
    const Index *idx = NULL;
    if (!par || fk_locate(p, par, tab, fk, &idx, aicol, !ignore_errors)) {
      if (!ignore_errors) {
        if (!par) compile_parse_error(p, "no such table: main.%s", fk->parent);
        return;
      }
      if (!par && old_reg) { /* a missing parent is an empty one */
        int skip = emit_label(p);
        for (int i = 0; i < fk->ncol; i++) emit(p, OP_IsNull, old_reg + 1 + fk->cols[i], skip, 0);
        emit(p, OP_FkCounter, fk->deferred ? 1 : 0, -1, 0);
        emit_resolve(p, skip);
      }
      continue;
    }
    if (old_reg) lookup_parent(p, par, idx, fk, aicol, tab, old_reg, -1);
    if (new_reg && !in_set_null_action(p, fk))
      lookup_parent(p, par, idx, fk, aicol, tab, new_reg, 1);
  }
  FkRef *refs;
  int n = fk_refs(p, tab, &refs);
  for (int i = 0; i < n && !parse_failed(p); i++) {
    const ForeignKey *fk = refs[i].fk;
    if (fk->ncol > FK_MAX_COLS) continue;
    if (changed && !parent_modified(tab, fk, changed, rowid_changed)) continue;
    if (!fk->deferred && !fk_defer_env(p) && p->nested == 0 && !p->multi_write) continue;
    const Index *idx = NULL;
    if (fk_locate(p, tab, refs[i].child, fk, &idx, aicol, !ignore_errors)) {
      if (!ignore_errors) return;
      continue;
    }
    if (new_reg) scan_children(p, tab, idx, fk, aicol, refs[i].child, new_reg, -1);
    if (old_reg) scan_children(p, tab, idx, fk, aicol, refs[i].child, old_reg, 1);
  }
}

/* --------------------------------------------------------------- actions */

/* A growing text in the Parse arena (txt_id: as a quoted identifier). */
typedef struct Txt {
  Parse *p;
  char *z;
  size_t n, cap;
} Txt;

static void txt_add(Txt *t, const char *s, size_t len) {
  if (t->n + len + 1 > t->cap) {
    size_t cap = (t->cap ? t->cap * 2 : 256) + len;
    char *z = compile_parse_alloc(t->p, cap);
    if (!z) return;
    if (t->n) memcpy(z, t->z, t->n);
    t->z = z;
    t->cap = cap;
  }
  if (!t->z) return;
  memcpy(t->z + t->n, s, len);
  t->n += len;
  t->z[t->n] = 0;
}
static void txt_s(Txt *t, const char *s) { txt_add(t, s, strlen(s)); }
static void txt_id(Txt *t, const char *s) {
  txt_s(t, "\"");
  for (const char *c = s; *c; c++) txt_add(t, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1);
  txt_s(t, "\"");
}

/* The name of the parent key's column i (index order), "oid" for the rowid. */
static void parent_key_name(Txt *t, const Table *par, const Index *idx, int i) {
  if (!idx)
    txt_s(t, "oid");
  else
    txt_id(t, par->cols[idx->cols[i].col].name);
}

/* The action trigger's SQL (NULL if none applies). */
static const char *action_sql(Parse *p, const Table *par, const Table *child, const ForeignKey *fk,
                              int upd, int action) {
  int aicol[FK_MAX_COLS];
  const Index *idx = NULL;
  if (fk_locate(p, par, child, fk, &idx, aicol, 1)) return NULL;
  Txt t = {p, NULL, 0, 0};
  txt_s(&t, upd ? "CREATE TRIGGER fk AFTER UPDATE ON " : "CREATE TRIGGER fk AFTER DELETE ON ");
  txt_id(&t, par->name);
  if (upd) {
    txt_s(&t, " WHEN NOT (");
    for (int i = 0; i < fk->ncol; i++) {
      if (i) txt_s(&t, " AND ");
      txt_s(&t, "old.");
      parent_key_name(&t, par, idx, i);
      txt_s(&t, " IS new.");
      parent_key_name(&t, par, idx, i);
    }
    txt_s(&t, ")");
  }
  txt_s(&t, " BEGIN ");
  if (action == SCHEMA_FK_RESTRICT) {
    txt_s(&t, "SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed') FROM ");
    txt_id(&t, child->name);
  } else if (action == SCHEMA_FK_CASCADE && !upd) {
    txt_s(&t, "DELETE FROM ");
    txt_id(&t, child->name);
  } else {
    txt_s(&t, "UPDATE ");
    txt_id(&t, child->name);
    txt_s(&t, " SET ");
    for (int i = 0; i < fk->ncol; i++) {
      const Column *c = &child->cols[aicol[i]];
      if (i) txt_s(&t, ", ");
      txt_id(&t, c->name);
      txt_s(&t, " = ");
      if (action == SCHEMA_FK_CASCADE) {
        txt_s(&t, "new.");
        parent_key_name(&t, par, idx, i);
      } else if (action == SCHEMA_FK_SET_DEFAULT && c->dflt_sql && !c->gen) {
        txt_s(&t, "(");
        txt_s(&t, c->dflt_sql);
        txt_s(&t, ")");
      } else {
        txt_s(&t, "NULL");
      }
    }
  }
  txt_s(&t, " WHERE ");
  for (int i = 0; i < fk->ncol; i++) {
    if (i) txt_s(&t, " AND ");
    txt_s(&t, "old.");
    parent_key_name(&t, par, idx, i);
    txt_s(&t, " = ");
    txt_id(&t, child->cols[aicol[i]].name);
  }
  txt_s(&t, "; END");
  return t.z;
}

/* The cached (or newly compiled) action program of fk for upd. */
static struct FkAct *action_get(Parse *p, const Table *par, const Table *child,
                                const ForeignKey *fk, int upd, int action) {
  Parse *root = fk_root(p);
  for (struct FkAct *a = root->fk_acts; a; a = a->next)
    if (a->fk == fk && a->upd == upd) return a;
  const char *sql = action_sql(p, par, child, fk, upd, action);
  if (!sql) return NULL;
  struct FkAct *a = compile_parse_alloc(root, sizeof *a);
  Trigger *tr = compile_parse_alloc(root, sizeof *tr);
  VmProgram **cell = root->b.prog ? util_arena_alloc(&root->b.prog->arena, sizeof *cell) : NULL;
  if (!a || !tr || !cell) {
    compile_parse_nomem(p);
    return NULL;
  }
  *cell = NULL;
  tr->table = par->name;
  tr->timing = TRIGGER_AFTER;
  tr->event = upd ? TRIGGER_UPDATE : TRIGGER_DELETE;
  tr->sql = sql;
  a->fk = fk;
  a->upd = upd;
  a->action = action;
  a->trig = tr;
  a->cell = cell;
  a->next = root->fk_acts;
  root->fk_acts = a; /* before compiling: invariant 2 */
  VmProgram *sub = compile_trigger_program_of(p, tr, par, SQL_OE_ABORT);
  if (!sub) return NULL;
  if (vm_builder_adopt(&root->b, sub)) {
    compile_parse_nomem(p);
    return NULL;
  }
  *cell = sub;
  return a;
}

void compile_fk_actions(Parse *p, const Table *tab, int old_reg, int new_reg,
                        const uint8_t *changed, int rowid_changed) {
  if (!fk_on(p) || parse_failed(p) || !p->schema || !old_reg) return;
  FkRef *refs;
  int n = fk_refs(p, tab, &refs);
  int base = 0;
  for (int i = 0; i < n && !parse_failed(p); i++) {
    const ForeignKey *fk = refs[i].fk;
    if (changed && !parent_modified(tab, fk, changed, rowid_changed)) continue;
    int upd = changed != NULL;
    int action = upd ? fk->on_update : fk->on_delete;
    if (action == SCHEMA_FK_NONE || action == SCHEMA_FK_NO_ACTION) continue;
    if (action == SCHEMA_FK_RESTRICT && fk_defer_env(p)) continue;
    if (action == SCHEMA_FK_CASCADE && upd && !new_reg) continue;
    struct FkAct *a = action_get(p, tab, refs[i].child, fk, upd, action);
    if (!a) return;
    int ncol = tab->ncol;
    if (!base) {
      base = emit_regs(p, 2 * (ncol + 1));
      for (int k = 0; k <= ncol; k++) {
        emit(p, OP_SCopy, old_reg + k, base + k, 0);
        if (new_reg)
          emit(p, OP_SCopy, new_reg + k, base + ncol + 1 + k, 0);
        else
          emit(p, OP_Null, 0, base + ncol + 1 + k, 0);
      }
    }
    int lim = p->env->max_trigger_depth > 0 ? p->env->max_trigger_depth : FK_MAX_DEPTH;
    int after = emit_label(p);
    vm_builder_add_program_ref(&p->b, OP_Program, base, after, lim, a->cell);
    emit_resolve(p, after);
  }
}

/* ------------------------------------------------------------ DROP TABLE */

void compile_fk_drop_table(Parse *p, const Table *tab) {
  if (!fk_on(p) || parse_failed(p) || !tab || tab->is_schema || !p->schema) return;
  int skip = 0;
  if (!has_refs(p, tab)) {
    /* only deferred violations this table's rows may hold can change */
    int k;
    for (k = 0; k < tab->nfk; k++)
      if (tab->fks[k].deferred || fk_defer_env(p)) break;
    if (k == tab->nfk) return;
    skip = emit_label(p);
    emit(p, OP_FkIfZero, 1, skip, 0);
  }
  SqlStmt *s = compile_parse_alloc(p, sizeof *s);
  SqlSrcItem *it = compile_parse_alloc(p, sizeof *it);
  if (!s || !it) return;
  s->kind = SQL_STMT_DELETE;
  it->name = tab->name;
  s->u.del.table = it;
  int cur0 = p->b.prog ? p->b.prog->ncursor : 0;
  p->disable_triggers = 1;
  compile_dml_delete(p, s);
  p->disable_triggers = 0;
  /* no cursor may stay open on a tree the DROP destroys */
  int cur1 = p->b.prog ? p->b.prog->ncursor : 0;
  for (int c = cur0; c < cur1; c++) emit(p, OP_Close, c, 0, 0);
  if (!fk_defer_env(p)) {
    int ok = emit_label(p);
    emit(p, OP_FkIfZero, 0, ok, 0);
    vm_builder_add_text(&p->b, OP_Halt, SHALE_CONSTRAINT_FOREIGNKEY, VM_OE_ABORT, 0,
                        "FOREIGN KEY constraint failed", -1);
    emit_resolve(p, ok);
  }
  if (skip) emit_resolve(p, skip);
}

/* ----------------------------------------------- PRAGMA foreign_key_check */

static int fk_table_mismatch(Parse *p, const Table *t) {
  int aicol[FK_MAX_COLS];
  for (int k = t->nfk - 1; k >= 0; k--) {
    const ForeignKey *fk = &t->fks[k];
    const Table *par = schema_find_table(p->schema, fk->parent);
    const Index *idx;
    if (par && fk_locate(p, par, t, fk, &idx, aicol, 1)) return 1;
  }
  return 0;
}

int compile_fk_check_pragma_prepare(Parse *p, const char *table) {
  if (!p->schema) return 0;
  if (table) {
    const Table *t = schema_find_table(p->schema, table);
    if (!t) {
      compile_parse_error(p, "no such table: %s", table);
      return 1;
    }
    return fk_table_mismatch(p, t);
  }
  /* the table pragma.c reports first (most recent) that has a mismatch */
  const Table *bad = NULL;
  int pos = 0, aicol[FK_MAX_COLS];
  const Table *t;
  while ((t = schema_map_next(&p->schema->tables, &pos)) != NULL) {
    for (int k = 0; k < t->nfk; k++) {
      const Table *par = schema_find_table(p->schema, t->fks[k].parent);
      const Index *idx;
      if (par &&
          (t->fks[k].ncol > FK_MAX_COLS || compile_fk_parent_key(par, &t->fks[k], &idx, aicol))) {
        if (!bad || t->root > bad->root) bad = t;
        break;
      }
    }
  }
  return bad ? fk_table_mismatch(p, bad) : 0;
}
