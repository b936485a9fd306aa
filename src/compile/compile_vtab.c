/*
 * compile_vtab.c -- virtual tables in the code generator: connecting a
 * schema's virtual table on first use (its declared columns become a Table
 * of its own), the xDestroy of DROP TABLE (CREATE VIRTUAL TABLE: compile_ddl.c), and the
 * WHERE side of a scan: the constraints offered to xBestIndex, its answers
 * as planner paths (PlanVpath), and the VFilter/VNext loop of the chosen one.
 *
 * Owns: per connected table, a private Schema holding its declared Table
 * (VtabTable.decl_obj, freed by the registry); the VtabWhere of a scan
 * (Parse arena; the index infos are freed before compile_vtab_where_plan returns).
 *
 * Invariants:
 *  1. The declared Table is never in a schema's lists: tab->vtab is set,
 *     its name is the schema table's, its rowid_alias is -1 (a virtual
 *     table's "INTEGER PRIMARY KEY" is an ordinary column, as SQLite's).
 *  2. Constraints are offered in SQLite's order: the column-op-value terms
 *     in WHERE order, then the auxiliary operators (!=, IS NOT, NOT NULL,
 *     LIKE, GLOB, MATCH, REGEXP) of the terms in reverse order, as SQLite's
 *     exprAnalyze appends them walking the terms backwards.
 *  3. xBestIndex is called as SQLite's whereLoopAddVirtual does: all
 *     constraints usable; then, when that plan needs items the table need
 *     not follow anyway (LEFT/CROSS JOIN, table-valued arguments), once
 *     with only the constraints on those. A tie in cost goes to the path
 *     needing fewer items.
 *  4. A constraint the chosen plan marks omit is not tested again; every
 *     other term is (compile_where.c invariant 1).
 */
#include <stdlib.h>
#include <string.h>

#include "../plan/plan.h"
#include "../vtab/vtab.h"
#include "compile.h"
#include "schema_load.h"
#include "select_int.h"

/* ---- connecting ---- */

typedef struct DeclObj {
  Schema *s;
  Table *t;
} DeclObj;

static void decl_free(void *p) {
  DeclObj *d = p;
  schema_free(d->s);
  shale_free(d);
}

/* HIDDEN in a declared type hides the column and leaves the type
 * (SQLite's rule: the word anywhere in the type, whole). */
static void strip_hidden(Schema *s, Column *c) {
  if (!c->type) return;
  const char *ty = c->type;
  size_t n = strlen(ty);
  for (size_t i = 0; i + 6 <= n; i++) {
    if (util_strnicmp(ty + i, "hidden", 6) != 0) continue;
    int before = i == 0 || ty[i - 1] == ' ';
    int after = i + 6 == n || ty[i + 6] == ' ';
    if (!before || !after) continue;
    char *z = util_arena_alloc(schema_arena(s), n + 1);
    if (!z) return;
    size_t a = i, b = i + 6;
    while (a > 0 && ty[a - 1] == ' ') a--;
    if (a == 0)
      while (b < n && ty[b] == ' ') b++;
    memcpy(z, ty, a);
    memcpy(z + a, ty + b, n - b + 1);
    c->type = z[0] ? z : NULL;
    c->hidden = COL_HIDDEN;
    return;
  }
}

/* The declared Table of connected table vt (built once, invariant 1). */
static Table *decl_table(Parse *p, VtabTable *vt, const char *name, const char *module,
                         const char *sql) {
  p->uses_vtab = 1;
  if (vt->decl_obj) return ((DeclObj *)vt->decl_obj)->t;
  DeclObj *d = shale_malloc(sizeof *d);
  Schema *s = schema_new();
  if (!d || !s) {
    shale_free(d);
    schema_free(s);
    compile_parse_nomem(p);
    return NULL;
  }
  d->s = s;
  d->t = NULL;
  SqlStmt *st = NULL;
  char *err = NULL;
  int rc = sql_parse(schema_arena(s), vt->decl, -1, &st, NULL, &err);
  Table *tab = NULL;
  if (rc == SHALE_OK) rc = compile_schema_table_from_create(s, st, vt->decl, &tab, &err);
  size_t nn = strlen(name) + 1, nm_len = strlen(module) + 1;
  char *nm = tab ? util_arena_alloc(schema_arena(s), nn + nm_len) : NULL;
  if (rc != SHALE_OK || !tab || !nm) {
    if (rc == SHALE_OK)
      compile_parse_nomem(p);
    else
      compile_parse_error(p, "%s", err ? err : "vtable constructor failed");
    shale_free(err);
    decl_free(d);
    return NULL;
  }
  memcpy(nm, name, nn);
  memcpy(nm + nn, module, nm_len);
  tab->name = nm;
  tab->vtab_module = nm + nn;
  tab->vtab = vt;
  tab->rowid_alias = -1; /* invariant 1 */
  tab->sql = sql;
  for (int c = 0; c < tab->ncol; c++) strip_hidden(s, &tab->cols[c]);
  d->t = tab;
  vt->decl_obj = d;
  vt->decl_free = decl_free;
  return tab;
}

const Table *compile_vtab_declared_table(const VtabTable *vt) {
  return vt && vt->decl_obj ? ((const DeclObj *)vt->decl_obj)->t : NULL;
}

Table *compile_parse_vtab_connect(Parse *p, const Table *t, int idb) {
  VtabReg *r = p->env ? p->env->vtabs : NULL;
  if (!r) {
    compile_parse_error(p, "no such module: %s", t->vtab_module);
    return NULL;
  }
  VtabTable *vt = NULL;
  char *msg = NULL;
  int rc = vtab_connect_sql(r, 0, idb, compile_parse_db_name(p, idb), t->sql, &vt, &msg);
  if (rc) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error_code(p, rc, "%s", msg ? msg : "vtable constructor failed");
    shale_free(msg);
    return NULL;
  }
  shale_free(msg);
  return decl_table(p, vt, t->name, t->vtab_module, t->sql);
}

/* ---- eponymous tables and table-valued functions ---- */

static int tvf_args(Parse *p, SrcItem *it, const SqlSrcItem *a, Table *tab, int idb);

/* A virtual table of the schema written with arguments, t('x') (SQLite's
 * table-valued form of any virtual table): -1 if name is no such table. */
int compile_vtab_schema_item(Parse *p, SrcItem *it, const SqlSrcItem *a) {
  int tdb = 0;
  const char *zdb = compile_parse_ndb(p) > 1 ? a->schema : NULL;
  Table *t = compile_parse_find_object(p, PARSE_OBJ_TABLE, zdb, a->name, &tdb);
  if (!t || !t->vtab_module) return -1;
  if (!(t = compile_parse_vtab_connect(p, t, tdb))) return 1;
  return tvf_args(p, it, a, t, tdb);
}

/* The eponymous module called name, or NULL (*nomem set when making a
 * pragma_NAME module ran out of memory). */
static VtabModule *eponymous_module(Parse *p, const char *name, int *nomem) {
  VtabReg *r = p->env ? p->env->vtabs : NULL;
  *nomem = 0;
  if (!r || !name) return NULL;
  VtabModule *m = vtab_module_find(r, name);
  if (!m && r->make_module) { /* pragma_NAME: made at its first use */
    int rc = r->make_module(r, name);
    if (rc == SHALE_NOMEM) {
      *nomem = 1;
      return NULL;
    }
    if (rc == SHALE_OK) m = vtab_module_find(r, name);
  }
  /* eponymous: no xCreate, or xCreate == xConnect (SQLite's rule) */
  if (!m || !m->m->xConnect || (m->m->xCreate && m->m->xCreate != m->m->xConnect)) return NULL;
  return m;
}

const char *compile_vtab_eponymous_name(Parse *p, const char *name) {
  int nomem;
  VtabModule *m = eponymous_module(p, name, &nomem);
  if (nomem) compile_parse_nomem(p);
  return m ? m->name : NULL;
}

const char *compile_vtab_eponymous_readonly(Parse *p, const char *name) {
  int nomem;
  VtabModule *m = eponymous_module(p, name, &nomem);
  if (nomem) compile_parse_nomem(p);
  return m && !m->m->xUpdate ? m->name : NULL;
}

int compile_vtab_from_item(Parse *p, SrcItem *it, const SqlSrcItem *a) {
  VtabReg *r = p->env ? p->env->vtabs : NULL;
  int nomem; /* any schema name: SQLite ignores it here */
  VtabModule *m = eponymous_module(p, a->name, &nomem);
  if (nomem) {
    compile_parse_nomem(p);
    return 1;
  }
  if (!m) return -1;
  VtabTable *vt = NULL;
  char *msg = NULL;
  int rc = vtab_connect(r, 0, 0, "main", m->name, m->name, 0, NULL, "", &vt, &msg);
  if (rc) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error_code(p, rc, "%s", msg ? msg : "vtable constructor failed");
    shale_free(msg);
    return 1;
  }
  vt->eponymous = 1;
  Table *tab = decl_table(p, vt, m->name, m->name, NULL);
  if (!tab) return 1;
  return tvf_args(p, it, a, tab, 0);
}

/* tab (a connected virtual table of database idb) as item it, with the
 * arguments written after its name bound to its hidden columns. */
static int tvf_args(Parse *p, SrcItem *it, const SqlSrcItem *a, Table *tab, int idb) {
  int nargs = a->args ? a->args->n : 0, nhidden = 0;
  for (int c = 0; c < tab->ncol; c++) nhidden += tab->cols[c].hidden == COL_HIDDEN;
  if (nargs > nhidden) {
    compile_parse_error(p, "too many arguments on %s() - max %d", a->name, nhidden);
    return 1;
  }
  it->kind = SRC_TABLE;
  it->tab = tab;
  it->name = a->alias ? a->alias : a->name;
  it->idb = idb;
  compile_parse_need_db(p, idb, 0);
  if (nargs) { /* resolved with the FROM list in scope (compile_sel_tvf_resolve) */
    SelectState *st = compile_select_state(p);
    struct TvfItem *ti = compile_parse_alloc(p, sizeof *ti);
    if (!st || !ti) return 1;
    memset(ti, 0, sizeof *ti);
    ti->cursor = it->cursor;
    ti->args = a->args;
    ti->next = st->tvfs;
    st->tvfs = ti;
  }
  return parse_failed(p);
}

/* Column of the k-th hidden column of tab, or -1. */
static int hidden_col(const Table *tab, int k) {
  for (int c = 0; c < tab->ncol; c++)
    if (tab->cols[c].hidden == COL_HIDDEN && k-- == 0) return c;
  return -1;
}

void compile_vtab_where_args(Parse *p, SrcItem *it, Planner *pl, int on) {
  const SqlExprList *args = it->tvf_args;
  for (int k = 0; args && k < args->n; k++) {
    int c = hidden_col(it->tab, k);
    SqlExpr *col = compile_sel_new_expr(p, SQL_E_COLREF),
            *eq = compile_sel_new_expr(p, SQL_E_BINARY);
    if (c < 0 || !col || !eq) return;
    col->cursor = it->cursor;
    col->column = c;
    col->tab = it->tab;
    col->aff = it->tab->cols[c].affinity;
    col->height = 1;
    eq->sub = TK_EQ;
    eq->a = col;
    eq->b = args->a[k].expr;
    eq->height = args->a[k].expr->height + 1;
    plan_add_clause(pl, eq, on);
    it->colused |= (uint64_t)1 << (c < 63 ? c : 63);
  }
}

int compile_parse_vtab_missing(Parse *p, const Table *t) {
  if (!t || !t->vtab_module) return 0;
  return compile_parse_vtab_connect(p, t, compile_parse_table_db(p, t)) == NULL;
}

void compile_parse_vtab_destroy(Parse *p, const Table *t) {
  Table *d = compile_parse_vtab_connect(p, t, p->idb);
  if (d) vm_builder_add_p4(&p->b, OP_VDestroy, p->idb, 0, 0, P4_VTAB, d->vtab);
}

/* ---- shadow tables ---- */

int compile_vtab_is_shadow(Parse *p, Schema *s, const Table *t) {
  VtabReg *r = p->env ? p->env->vtabs : NULL;
  const char *tail = t && !t->vtab_module ? strrchr(t->name, '_') : NULL;
  if (!r || !s || !tail) return 0;
  size_t n = (size_t)(tail - t->name);
  char *owner = compile_parse_alloc(p, n + 1);
  if (!owner) return 0;
  memcpy(owner, t->name, n);
  owner[n] = 0;
  const Table *v = schema_find_table(s, owner);
  const VtabModule *m = v && v->vtab_module ? vtab_module_find(r, v->vtab_module) : NULL;
  if (!m || !m->m || m->m->iVersion < 3 || !m->m->xShadowName) return 0;
  return m->m->xShadowName(tail + 1) != 0;
}

int compile_vtab_shadow_refused(Parse *p, Schema *s, const Table *t, const char *what) {
  if (!p->env || !p->env->shadow_ro || !compile_vtab_is_shadow(p, s, t)) return 0;
  compile_parse_error(p, "table %s may not be %s", t->name, what);
  return 1;
}

/* ---- function overloading ---- */

const FuncDef *compile_vtab_overload_call(Parse *p, const FuncDef *f, const char *name, int nargs,
                                          const SqlExpr *col) {
  VtabReg *r = p->env ? p->env->vtabs : NULL;
  if (!r || !col || col->op != SQL_E_COLREF || !col->tab || !col->tab->vtab) return f;
  int nomem = 0;
  const FuncDef *o = vtab_overload(r, col->tab->vtab, f, f ? f->name : name, nargs, &nomem);
  if (nomem) compile_parse_nomem(p);
  return o;
}

/* ---- WHERE: xBestIndex and the scan ---- */

static SqlExpr *reg_expr(Parse *p, const SqlExpr *lit, int reg) {
  if (lit && lit->op == SQL_E_INTEGER) return (SqlExpr *)lit; /* rhs_value sees it */
  SqlExpr *e = compile_sel_new_expr(p, SQL_E_REG);
  if (e) {
    e->reg = reg;
    e->height = 1;
  }
  return e;
}

void compile_vtab_limit_offer(Parse *p, const SrcList *src, const SqlSelect *s, int limit_reg,
                              int offset_reg) {
  p->vl_src = src;
  p->vl_limit = reg_expr(p, s->limit, limit_reg);
  p->vl_offset = s->offset ? reg_expr(p, s->offset, offset_reg) : NULL;
  p->vl_offset_reg = s->offset ? offset_reg : 0;
  p->vl_order = s->order_by;
}

typedef struct VCons {
  int term;        /* planner term */
  int op;          /* SHALE_INDEX_CONSTRAINT_* */
  int column;      /* -1 rowid */
  SqlExpr *value;  /* NULL for ISNULL / ISNOTNULL */
  uint64_t prereq; /* items the value reads */
  uint8_t is_in;   /* col IN (...): offered as EQ, one xFilter per value
                     unless the module takes it whole (sqlite3_vtab_in) */
} VCons;           /* term < 0: LIMIT or OFFSET (no planner term) */

typedef struct VPlan {
  uint8_t omit_offset; /* the module applies OFFSET itself: the counter is zeroed */
  uint8_t unique;      /* idxFlags has SQLITE_INDEX_SCAN_UNIQUE: at most one row */
  int idx_num;
  const char *idx_str;
  int nargv;
  int *argv_cons; /* argv[k] is constraint argv_cons[k] */
  uint8_t *omit;  /* per constraint */
  uint8_t *whole; /* per constraint: an IN passed whole (sqlite3_vtab_in) */
} VPlan;

#define VTAB_MAX_PLANS 16

struct VtabWhere {
  VtabTable *t;
  int cursor;
  /* compile_vtab_where_code: IN terms looped value by value that the module
   * did not omit, checked per row against the loop's value (recheck_reg) */
  int nrecheck;
  int *recheck_term, *recheck_reg;
  int ncons;
  VCons *cons;
  int nplan;
  VPlan plans[VTAB_MAX_PLANS];
  PlanVpath paths[VTAB_MAX_PLANS];
};

static int map_op(int op) {
  switch (op) {
    case PLAN_OP_EQ:
      return SHALE_INDEX_CONSTRAINT_EQ;
    case PLAN_OP_IS:
      return SHALE_INDEX_CONSTRAINT_IS;
    case PLAN_OP_LT:
      return SHALE_INDEX_CONSTRAINT_LT;
    case PLAN_OP_LE:
      return SHALE_INDEX_CONSTRAINT_LE;
    case PLAN_OP_GT:
      return SHALE_INDEX_CONSTRAINT_GT;
    case PLAN_OP_GE:
      return SHALE_INDEX_CONSTRAINT_GE;
    case PLAN_OP_ISNULL:
      return SHALE_INDEX_CONSTRAINT_ISNULL;
    case PLAN_OP_IN:
      return SHALE_INDEX_CONSTRAINT_EQ;
    default:
      return 0;
  }
}

static int colref_of(const SqlExpr *e, int cursor) {
  while (e && e->op == SQL_E_COLLATE) e = e->a;
  return e && e->op == SQL_E_COLREF && e->cursor == cursor && e->depth == 0;
}

static int term_ok(const PlanTerm *t, int item, int left) {
  if (left) return t->on_item == item;
  return t->on_item == -1;
}

/* A two-argument call as a constraint (SQLite's isAuxiliaryVtabOperator):
 * match/glob/like/regexp(x, col), or f(col, x) when t's xFindFunction
 * answers SQLITE_INDEX_CONSTRAINT_FUNCTION or more for f as written. */
static int func_cons(const SqlExpr *e, int cursor, VtabTable *t, const SqlExpr **col,
                     SqlExpr **val) {
  static const struct {
    const char *name;
    int op;
  } ops[] = {{"match", SHALE_INDEX_CONSTRAINT_MATCH},
             {"glob", SHALE_INDEX_CONSTRAINT_GLOB},
             {"like", SHALE_INDEX_CONSTRAINT_LIKE},
             {"regexp", SHALE_INDEX_CONSTRAINT_REGEXP}};
  if (!e->list || e->list->n != 2 || !e->z || e->over || e->filter) return 0;
  SqlExpr *a0 = e->list->a[0].expr, *a1 = e->list->a[1].expr;
  if (a1 && a1->op == SQL_E_COLREF && colref_of(a1, cursor))
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
      if (util_stricmp(e->z, ops[i].name) == 0) {
        *col = a1;
        *val = a0;
        return ops[i].op;
      }
  if (!a0 || a0->op != SQL_E_COLREF || !colref_of(a0, cursor)) return 0;
  shale_func_fn fn;
  void *arg;
  int op = vtab_find_function(t, 2, e->z, &fn, &arg);
  if (op < SHALE_INDEX_CONSTRAINT_FUNCTION || op > 255) return 0;
  *col = a0;
  *val = a1;
  return op;
}

/* The auxiliary constraint of expression e on the item's cursor, if any. */
static int aux_cons(const SqlExpr *e, int cursor, VtabTable *t, const SqlExpr **col,
                    SqlExpr **val) {
  switch (e->op) {
    case SQL_E_FUNC:
      return func_cons(e, cursor, t, col, val);
    case SQL_E_BINARY:
      if (e->sub != TK_NE) return 0;
      if (colref_of(e->a, cursor))
        *col = e->a, *val = e->b;
      else if (colref_of(e->b, cursor))
        *col = e->b, *val = e->a;
      else
        return 0;
      return SHALE_INDEX_CONSTRAINT_NE;
    case SQL_E_ISNOT:
      if (colref_of(e->a, cursor) && e->b && e->b->op == SQL_E_NULL) {
        *col = e->a; /* x IS NOT NULL: SQLite's TK_NOTNULL */
        *val = NULL;
        return SHALE_INDEX_CONSTRAINT_ISNOTNULL;
      }
      if (colref_of(e->a, cursor))
        *col = e->a, *val = e->b;
      else if (colref_of(e->b, cursor))
        *col = e->b, *val = e->a;
      else
        return 0;
      return SHALE_INDEX_CONSTRAINT_ISNOT;
    case SQL_E_NOTNULL:
      if (!colref_of(e->a, cursor)) return 0;
      *col = e->a;
      *val = NULL;
      return SHALE_INDEX_CONSTRAINT_ISNOTNULL;
    case SQL_E_LIKE:
      if ((e->flags & SQL_EF_NOT) || e->c || !colref_of(e->a, cursor)) return 0;
      *col = e->a;
      *val = e->b;
      return e->sub == TK_GLOB     ? SHALE_INDEX_CONSTRAINT_GLOB
             : e->sub == TK_MATCH  ? SHALE_INDEX_CONSTRAINT_MATCH
             : e->sub == TK_REGEXP ? SHALE_INDEX_CONSTRAINT_REGEXP
                                   : SHALE_INDEX_CONSTRAINT_LIKE;
    default:
      return 0;
  }
}

static int add_cons(Parse *p, VtabWhere *vw, int *cap, VCons c) {
  if (vw->ncons == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    VCons *a = compile_parse_alloc(p, sizeof *a * (size_t)nc);
    if (!a) return 1;
    if (vw->ncons) memcpy(a, vw->cons, sizeof *a * (size_t)vw->ncons);
    vw->cons = a;
    *cap = nc;
  }
  vw->cons[vw->ncons++] = c;
  return 0;
}

/* A literal's value for sqlite3_vtab_rhs_value (arena), or NULL. */
static ShValue *rhs_literal(Parse *p, const SqlExpr *e) {
  if (!e) return NULL;
  ShValue *v = compile_parse_alloc(p, sizeof *v);
  if (!v) return NULL;
  memset(v, 0, sizeof *v);
  if (e->op == SQL_E_INTEGER && e->z && strncmp(e->z, "0x", 2) && strncmp(e->z, "0X", 2)) {
    char *endp;
    long long x = strtoll(e->z, &endp, 10);
    if (*endp) return NULL;
    value_set_int(v, x);
  } else if (e->op == SQL_E_FLOAT && e->z) {
    v->type = SHALE_FLOAT;
    v->r = strtod(e->z, NULL);
  } else if (e->op == SQL_E_STRING && e->z) {
    v->type = SHALE_TEXT;
    v->z = e->z;
    v->n = (uint32_t)strlen(e->z);
  } else {
    return NULL;
  }
  return v;
}

/* Ask xBestIndex with the constraints whose prereqs lie in usable_mask
 * usable; record the answer as plan k. 0, 1 on error, 2 on
 * SQLITE_CONSTRAINT (no plan). */
static int ask(Parse *p, VtabWhere *vw, VtabIndex *x, uint64_t usable_mask, int no_in,
               int *used_in) {
  *used_in = 0;
  if (vw->nplan == VTAB_MAX_PLANS) return 2;
  int k = vw->nplan;
  vtab_index_reset(x);
  for (int i = 0; i < vw->ncons; i++)
    x->info.aConstraint[i].usable =
        (vw->cons[i].prereq & ~usable_mask) == 0 && !(no_in && vw->cons[i].is_in);
  char *msg = NULL;
  int rc = vtab_best_index(vw->t, x, &msg);
  if (rc == SHALE_CONSTRAINT) {
    shale_free(msg);
    return 2;
  }
  if (rc) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error_code(p, rc, "%s", msg ? msg : shale_errstr(rc));
    shale_free(msg);
    return 1;
  }
  VPlan *vp = &vw->plans[k];
  PlanVpath *pp = &vw->paths[k];
  memset(vp, 0, sizeof *vp);
  memset(pp, 0, sizeof *pp);
  vp->idx_num = x->info.idxNum;
  vp->idx_str = x->info.idxStr ? compile_parse_strdup(p, x->info.idxStr) : NULL;
  vp->argv_cons = compile_parse_alloc(p, sizeof(int) * (size_t)(vw->ncons + 1));
  vp->omit = compile_parse_alloc(p, (size_t)(vw->ncons + 1));
  vp->whole = compile_parse_alloc(p, (size_t)(vw->ncons + 1));
  if (!vp->argv_cons || !vp->omit || !vp->whole) return 1;
  memset(vp->omit, 0, (size_t)(vw->ncons + 1));
  memset(vp->whole, 0, (size_t)(vw->ncons + 1));
  int n = 0, in_loops = 0;
  for (int i = 0; i < vw->ncons; i++) {
    int a = x->info.aConstraintUsage[i].argvIndex;
    if (a <= 0) continue;
    if (a > vw->ncons || !x->info.aConstraint[i].usable) {
      compile_parse_error(p, "%s.xBestIndex malfunction", vw->t->mod ? vw->t->mod->name : "?");
      return 1;
    }
    vp->argv_cons[a - 1] = i;
    if (a > n) n = a;
    vp->omit[i] = x->info.aConstraintUsage[i].omit;
    if (vp->omit[i] && vw->cons[i].op == SHALE_INDEX_CONSTRAINT_OFFSET) vp->omit_offset = 1;
    pp->prereq |= vw->cons[i].prereq;
    if (vw->cons[i].is_in && x->in_take[i])
      vp->whole[i] = 1; /* SQLite's mHandleIn: only with an argvIndex */
    else if (vw->cons[i].is_in)
      *used_in = in_loops = 1;
  }
  vp->nargv = n;
  pp->cost = x->info.estimatedCost;
  pp->rows = (double)(x->info.estimatedRows > 0 ? x->info.estimatedRows : 1);
  pp->order = x->info.orderByConsumed != 0;
  /* an IN looped value by value is no longer one row (SQLite clears the flag) */
  vp->unique = (x->info.idxFlags & SHALE_INDEX_SCAN_UNIQUE) != 0 && !in_loops;
  vw->nplan = k + 1;
  return 0;
}

int compile_vtab_where_plan(Parse *p, SrcItem *it, int item, PlanItem *pi, Planner *pl,
                            SqlExprList *order_by, VtabWhere **out) {
  *out = NULL;
  VtabWhere *vw = compile_parse_alloc(p, sizeof *vw);
  if (!vw) return 1;
  memset(vw, 0, sizeof *vw);
  vw->t = it->tab->vtab;
  vw->cursor = it->cursor;
  int left = (it->jointype & SQL_JOIN_LEFT) != 0;
  int cap = 0;
  uint64_t self = (uint64_t)1 << (item < 63 ? item : 63);
  for (int k = 0; k < pl->nterm; k++) { /* invariant 2 */
    PlanTerm *t = &pl->terms[k];
    if (t->item != item || !term_ok(t, item, left) || !map_op(t->op)) continue;
    if (t->group >= 0) continue; /* a conjunct of one OR disjunct: restricts only that one */
    if (t->prereq & self) continue;
    int op = map_op(t->op);
    if (op == SHALE_INDEX_CONSTRAINT_IS && t->value && t->value->op == SQL_E_NULL)
      op = SHALE_INDEX_CONSTRAINT_ISNULL; /* x IS NULL, as SQLite's TK_ISNULL */
    VCons c = {k,         op,
               t->column, t->op == PLAN_OP_ISNULL ? NULL : t->value,
               t->prereq, t->op == PLAN_OP_IN};
    if (add_cons(p, vw, &cap, c)) return 1;
  }
  for (int k = pl->nterm - 1; k >= 0; k--) {
    PlanTerm *t = &pl->terms[k];
    if (t->parent >= 0 || t->group >= 0 || !term_ok(t, item, left)) continue;
    const SqlExpr *col = NULL;
    SqlExpr *val = NULL;
    int op = aux_cons(t->expr, it->cursor, vw->t, &col, &val);
    if (!op) continue;
    uint64_t pre = val ? pl->hooks.mask(pl->hooks.ctx, val) : 0;
    if (pre & self) continue;
    while (col->op == SQL_E_COLLATE) col = col->a;
    VCons c = {k, op, col->column, val, pre, 0};
    if (add_cons(p, vw, &cap, c)) return 1;
  }
  /* LIMIT / OFFSET (SQLite's sqlite3WhereAddLimit): when every term is a
   * constraint of this table and ORDER BY reads only its columns */
  if (p->vl_src && p->vl_src->n == 1 && &p->vl_src->a[0] == it && p->vl_limit) {
    int ok = 1;
    for (int k = 0; k < pl->nterm && ok; k++) {
      int has_child = 0, is_cons = 0;
      for (int j = 0; j < pl->nterm; j++) has_child |= pl->terms[j].parent == k;
      for (int i = 0; i < vw->ncons; i++) is_cons |= vw->cons[i].term == k;
      if (!has_child && !is_cons && pl->terms[k].parent < 0) ok = 0;
      if (!has_child && !is_cons && pl->terms[k].parent >= 0 && pl->terms[k].item != item) ok = 0;
    }
    for (int i = 0; ok && p->vl_order && i < p->vl_order->n; i++) {
      const SqlExpr *e = p->vl_order->a[i].expr;
      if (!e || e->op != SQL_E_COLREF || e->cursor != it->cursor) ok = 0;
    }
    VCons lim = {-1, SHALE_INDEX_CONSTRAINT_LIMIT, 0, p->vl_limit, 0, 0};
    VCons off = {-1, SHALE_INDEX_CONSTRAINT_OFFSET, 0, p->vl_offset, 0, 0};
    if (ok && add_cons(p, vw, &cap, lim)) return 1;
    if (ok && p->vl_offset && add_cons(p, vw, &cap, off)) return 1;
  }
  /* ORDER BY: only when every term is a column of this table */
  int norder = 0;
  if (order_by && order_by->n > 0) {
    norder = order_by->n;
    for (int i = 0; i < order_by->n; i++)
      if (!colref_of(order_by->a[i].expr, it->cursor) || order_by->a[i].expr->op != SQL_E_COLREF)
        norder = 0;
  }
  VtabIndex *x = vtab_index_new(vw->ncons, norder);
  if (!x) return compile_parse_nomem(p), 1;
  for (int i = 0; i < vw->ncons; i++) {
    VCons *c = &vw->cons[i];
    x->info.aConstraint[i].iColumn = c->column;
    x->info.aConstraint[i].op = (unsigned char)c->op;
    x->info.aConstraint[i].iTermOffset = c->term >= 0 ? c->term : 0;
    x->colls[i] = c->term >= 0 ? pl->terms[c->term].coll : NULL;
    x->rhs[i] = rhs_literal(p, c->value);
    x->in_ok[i] = c->is_in && i < 32; /* SQLite's mIn: the first 32 constraints */
  }
  for (int i = 0; i < norder; i++) {
    x->info.aOrderBy[i].iColumn = order_by->a[i].expr->column;
    x->info.aOrderBy[i].desc = order_by->a[i].sort == SQL_SORT_DESC;
  }
  x->info.colUsed = it->colused;
  /* the items it must follow anyway (SQLite's mPrereq) */
  uint64_t must = pi->after;
  if (it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_CROSS)) must |= self - 1;
  int in1 = 0, inx = 0;
  int rc = ask(p, vw, x, ~(uint64_t)0, 0, &in1); /* invariant 3 */
  uint64_t best = rc == 0 ? vw->paths[vw->nplan - 1].prereq & ~must : 0;
  if (rc != 1 && (best || in1)) {
    int seen0 = 0, seen0_noin = 0;
    uint64_t best_noin = 0;
    if (in1) {
      rc = ask(p, vw, x, ~(uint64_t)0, 1, &inx);
      if (rc == 0) best_noin = vw->paths[vw->nplan - 1].prereq & ~must;
      if (rc == 0 && !best_noin) seen0 = seen0_noin = 1;
    }
    for (uint64_t prev = 0; rc != 1;) { /* each distinct prerequisite set, smallest first */
      uint64_t next = ~(uint64_t)0;
      for (int i = 0; i < vw->ncons; i++) {
        uint64_t m = vw->cons[i].prereq & ~must;
        if (m > prev && m < next) next = m;
      }
      prev = next;
      if (next == ~(uint64_t)0) break;
      if (next == best || next == best_noin) continue;
      int n0 = vw->nplan;
      rc = ask(p, vw, x, next | must, 0, &inx);
      if (rc == 0 && vw->nplan > n0 && (vw->paths[vw->nplan - 1].prereq & ~must) == 0) {
        seen0 = 1;
        if (!inx) seen0_noin = 1;
      }
    }
    if (rc != 1 && !seen0) {
      rc = ask(p, vw, x, must, 0, &inx);
      if (!inx) seen0_noin = 1;
    }
    if (rc != 1 && !seen0_noin) rc = ask(p, vw, x, must, 1, &inx);
  }
  if (rc == 1) {
    vtab_index_free(x);
    return 1;
  }
  vtab_index_free(x);
  if (vw->nplan == 0) { /* every call said SQLITE_CONSTRAINT */
    compile_parse_error(p, "no query solution");
    return 1;
  }
  pi->nvpath = vw->nplan;
  pi->vpath = vw->paths;
  *out = vw;
  return 0;
}

void compile_vtab_where_code(Parse *p, VtabWhere *vw, const PlanLevel *L, uint8_t *coded,
                             const PlanTerm *terms, int brk, VtabInLoop in_loop, void *ctx) {
  if (L->vpath < 0 || L->vpath >= vw->nplan) {
    compile_parse_error(p, "no query solution");
    return;
  }
  const VPlan *vp = &vw->plans[L->vpath];
  int base = emit_regs(p, vp->nargv + 2);
  int exit = brk;
  vw->nrecheck = 0;
  for (int k = 0; k < vp->nargv; k++) { /* IN values: one loop each, outside the VFilter */
    int ci = vp->argv_cons[k];
    const VCons *c = &vw->cons[ci];
    if (!c->is_in || vp->whole[ci]) continue;
    exit = in_loop(ctx, c->term, base + 2 + k, 0);
    /* not omitted: the row is checked against this value, not the whole
     * IN again (SQLite's), so a row the module returns for several values
     * comes once */
    if (vp->omit[ci] || c->term < 0 || terms[c->term].parent >= 0 || !coded) continue;
    if (!vw->recheck_term) {
      vw->recheck_term = compile_parse_alloc(p, sizeof(int) * (size_t)vp->nargv);
      vw->recheck_reg = compile_parse_alloc(p, sizeof(int) * (size_t)vp->nargv);
      if (!vw->recheck_term || !vw->recheck_reg) return;
    }
    coded[c->term] = 1;
    vw->recheck_term[vw->nrecheck] = c->term;
    vw->recheck_reg[vw->nrecheck++] = base + 2 + k;
  }
  for (int k = 0; k < vp->nargv; k++) {
    const VCons *c = &vw->cons[vp->argv_cons[k]];
    if (c->is_in && vp->whole[vp->argv_cons[k]]) in_loop(ctx, c->term, base + 2 + k, 1);
    if (c->is_in) continue;
    if (c->value)
      compile_expr_code(p, c->value, base + 2 + k);
    else
      emit(p, OP_Null, 0, base + 2 + k, 0);
  }
  if (vp->omit_offset && p->vl_offset_reg) emit(p, OP_Integer, 0, p->vl_offset_reg, 0);
  emit(p, OP_Integer, vp->idx_num, base, 0);
  emit(p, OP_Integer, vp->nargv, base + 1, 0);
  if (vp->idx_str)
    vm_builder_add_text(&p->b, OP_VFilter, vw->cursor, exit, base, vp->idx_str, -1);
  else
    emit(p, OP_VFilter, vw->cursor, exit, base);
  for (int i = 0; i < vw->ncons; i++) { /* invariant 4 */
    if (!vp->omit[i] || vw->cons[i].term < 0) continue;
    const PlanTerm *t = &terms[vw->cons[i].term];
    if (t->parent < 0 && coded) coded[vw->cons[i].term] = 1;
  }
}

void compile_vtab_where_recheck(Parse *p, const VtabWhere *vw, const PlanTerm *terms, int cont) {
  for (int i = 0; i < vw->nrecheck; i++) {
    const PlanTerm *t = &terms[vw->recheck_term[i]];
    SqlExpr *eq = compile_expr_eq_reg(p, t->left ? t->left : t->expr->a, vw->recheck_reg[i]);
    if (!eq) return;
    compile_expr_if_false(p, eq, cont, 1);
  }
}

int compile_vtab_where_unique(const VtabWhere *vw, const PlanLevel *L) {
  return vw && L->vpath >= 0 && L->vpath < vw->nplan && vw->plans[L->vpath].unique;
}

void compile_vtab_where_eqp(Parse *p, const VtabWhere *vw, const PlanLevel *L, const char *name,
                            const char *lj) {
  const VPlan *vp = L->vpath >= 0 && L->vpath < vw->nplan ? &vw->plans[L->vpath] : NULL;
  compile_parse_eqp(p, "SCAN %s VIRTUAL TABLE INDEX %d:%s%s", name, vp ? vp->idx_num : 0,
                    vp && vp->idx_str ? vp->idx_str : "", lj);
}
