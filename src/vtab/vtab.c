/*
 * vtab.c -- the module registry, connected tables and the calls into a
 * module's methods (vtab.h).
 *
 * Owns: the VtabModule and VtabTable lists of a registry (shale_malloc), the
 * cursors it opens, index infos it allocates.
 *
 * Invariants: those of vtab.h, and
 *  1. Module callbacks get shale_value cells over the VM's registers
 *     (borrowed); text conversions the module asked for are freed when the
 *     call returns (vtab_cells_free).
 *  2. The result of an xColumn the VM runs for an UPDATE of an unchanged
 *     column starts as a NULL marked VAL_NOCHANGE (sqlite3_vtab_nochange
 *     tests the mark; any result the module sets clears it).
 */
#include "vtab.h"

#include <string.h>

#include "../parse/ast.h"
#include "../parse/parse.h"
#include "../util/util.h"

void vtab_reg_init(VtabReg *r, void *db) {
  memset(r, 0, sizeof *r);
  r->db = db;
}

static void take_err(shale_vtab *vt, char **errmsg) {
  if (!vt || !vt->zErrMsg) return;
  if (errmsg && !*errmsg)
    *errmsg = vt->zErrMsg;
  else
    shale_free(vt->zErrMsg);
  vt->zErrMsg = NULL;
}

static void set_err(char **errmsg, char *m) {
  if (!errmsg) {
    shale_free(m);
    return;
  }
  shale_free(*errmsg);
  *errmsg = m;
}

static void disconnect(VtabTable *t) {
  t->stale = 0;
  if (t->vt) {
    shale_vtab *vt = t->vt;
    t->vt = NULL;
    t->in_txn = 0;
    if (t->mod && t->mod->m && t->mod->m->xDisconnect) t->mod->m->xDisconnect(vt);
  }
  if (t->decl_obj && t->decl_free) t->decl_free(t->decl_obj);
  t->decl_obj = NULL;
  shale_free(t->decl);
  t->decl = NULL;
  shale_free(t->sql);
  t->sql = NULL;
}

static void free_module(VtabModule *m) {
  if (m->destroy) m->destroy(m->aux);
  shale_free(m->name);
  shale_free(m);
}

/* Disconnect the tables from the newest back (SQLite's schema hash lists the
 * latest table first). */
static void disconnect_rev(VtabTable *t) {
  if (!t) return;
  disconnect_rev(t->next);
  disconnect(t);
}

void vtab_reg_free(VtabReg *r) {
  disconnect_rev(r->tabs);
  while (r->funcs) {
    VtabFunc *f = r->funcs;
    r->funcs = f->next;
    shale_free(f);
  }
  while (r->tabs) {
    VtabTable *t = r->tabs;
    r->tabs = t->next;
    shale_free(t->name);
    shale_free(t);
  }
  while (r->mods) {
    VtabModule *m = r->mods;
    r->mods = m->next;
    free_module(m);
  }
}

VtabModule *vtab_module_find(const VtabReg *r, const char *name) {
  for (VtabModule *m = r->mods; m; m = m->next)
    if (util_stricmp(m->name, name) == 0) return m;
  return NULL;
}

/* Unlink module m: its tables are disconnected and forget it. */
static void unlink_module(VtabReg *r, VtabModule *m) {
  for (VtabTable *t = r->tabs; t; t = t->next)
    if (t->mod == m) {
      disconnect(t);
      t->mod = NULL;
    }
  for (VtabModule **pp = &r->mods; *pp; pp = &(*pp)->next)
    if (*pp == m) {
      *pp = m->next;
      break;
    }
  free_module(m);
}

int vtab_module_set(VtabReg *r, const char *name, const shale_module *m, void *aux,
                    void (*destroy)(void *)) {
  VtabModule *old = vtab_module_find(r, name);
  if (old) unlink_module(r, old);
  if (!m) {
    if (destroy) destroy(aux);
    return SHALE_OK;
  }
  VtabModule *n = shale_malloc(sizeof *n);
  char *nm = util_strdup(name);
  if (!n || !nm) {
    shale_free(n);
    shale_free(nm);
    if (destroy) destroy(aux);
    return SHALE_NOMEM;
  }
  n->name = nm;
  n->m = m;
  n->aux = aux;
  n->destroy = destroy;
  n->next = r->mods;
  r->mods = n;
  return SHALE_OK;
}

void vtab_modules_drop(VtabReg *r, const char **keep) {
  VtabModule *m = r->mods;
  while (m) {
    VtabModule *next = m->next;
    int kept = 0;
    for (int i = 0; keep && keep[i] && !kept; i++) kept = util_stricmp(keep[i], m->name) == 0;
    if (!kept) unlink_module(r, m);
    m = next;
  }
}

VtabTable *vtab_find(const VtabReg *r, int idb, const char *name) {
  for (VtabTable *t = r->tabs; t; t = t->next)
    if (t->vt && !t->stale && t->idb == idb && util_stricmp(t->name, name) == 0) return t;
  return NULL;
}

void vtab_disconnect_closing(VtabReg *r) { disconnect_rev(r->tabs); }

void vtab_disconnect_db(VtabReg *r, int idb) {
  for (VtabTable *t = r->tabs; t; t = t->next)
    if (idb < 0 || t->idb == idb) disconnect(t);
}

void vtab_schema_reset(VtabReg *r, uint32_t dbmask) {
  for (VtabTable *t = r->tabs; t; t = t->next) {
    int in = t->idb < 32 ? (int)(dbmask >> t->idb & 1) : dbmask == UINT32_MAX;
    if (!in) continue;
    if (t->vt && t->in_txn)
      t->stale = 1;
    else
      disconnect(t);
  }
}

int vtab_connect(VtabReg *r, int create, int idb, const char *dbname, const char *name,
                 const char *module, int nargs, const char *const *args, const char *sql,
                 VtabTable **out, char **errmsg) {
  *out = NULL;
  VtabTable *t = vtab_find(r, idb, name);
  if (t && t->sql && sql && strcmp(t->sql, sql) == 0 && !create) {
    *out = t;
    return SHALE_OK;
  }
  if (t) disconnect(t); /* the schema changed under it */
  VtabModule *m = vtab_module_find(r, module);
  /* CREATE needs xCreate and xDestroy (SQLite: else "no such module") */
  if (!m || (create && (!m->m->xCreate || !m->m->xDestroy))) {
    set_err(errmsg, util_mprintf("no such module: %s", module));
    return SHALE_ERROR;
  }
  if (!t) {
    for (t = r->tabs; t; t = t->next)
      if (!t->vt && t->idb == idb && util_stricmp(t->name, name) == 0) break;
  }
  if (!t) {
    t = shale_malloc(sizeof *t);
    if (!t) return SHALE_NOMEM;
    memset(t, 0, sizeof *t);
    if (!(t->name = util_strdup(name))) {
      shale_free(t);
      return SHALE_NOMEM;
    }
    t->idb = idb;
    VtabTable **pp = &r->tabs; /* creation order: disconnects go in it */
    while (*pp) pp = &(*pp)->next;
    *pp = t;
  }
  t->mod = m;
  t->constraint_support = t->innocuous = t->directonly = 0;
  if (sql && !(t->sql = util_strdup(sql))) return SHALE_NOMEM;
  const char *stack[16];
  const char **argv = nargs + 3 <= 16 ? stack : shale_malloc(sizeof(char *) * (size_t)(nargs + 3));
  if (!argv) return SHALE_NOMEM;
  argv[0] = module;
  argv[1] = dbname;
  argv[2] = name;
  for (int i = 0; i < nargs; i++) argv[3 + i] = args[i];
  VtabTable *save = r->connecting;
  int save_decl = r->declared;
  r->connecting = t;
  r->declared = 0;
  shale_vtab *vt = NULL;
  char *msg = NULL;
  int (*fn)(shale *, void *, int, const char *const *, shale_vtab **, char **) =
      create && m->m->xCreate ? m->m->xCreate : m->m->xConnect;
  int rc = fn ? fn((shale *)r->db, m->aux, nargs + 3, argv, &vt, &msg) : SHALE_ERROR;
  int declared = r->declared;
  r->connecting = save;
  r->declared = save_decl;
  if (argv != stack) shale_free((void *)argv);
  if (rc != SHALE_OK) {
    if (msg)
      set_err(errmsg, util_mprintf("%s", msg));
    else
      set_err(errmsg, util_mprintf("vtable constructor failed: %s", name));
    shale_free(msg);
    shale_free(t->sql);
    t->sql = NULL;
    return rc == SHALE_NOMEM ? rc : SHALE_ERROR;
  }
  shale_free(msg);
  if (!vt) {
    set_err(errmsg, util_mprintf("vtable constructor failed: %s", name));
    return SHALE_ERROR;
  }
  vt->pModule = m->m;
  vt->nRef = 1;
  vt->zErrMsg = NULL;
  t->vt = vt;
  t->reg = r;
  if (create) { /* in the transaction without xBegin, as SQLite's VCreate */
    t->in_txn = 1;
    t->txn_seq = ++r->txn_seq;
  }
  if (!declared || !t->decl) {
    set_err(errmsg, util_mprintf("vtable constructor did not declare schema: %s", name));
    disconnect(t);
    return SHALE_ERROR;
  }
  *out = t;
  return SHALE_OK;
}

int vtab_destroy(VtabReg *r, VtabTable *t, char **errmsg) {
  if (!t->vt) return SHALE_OK;
  shale_vtab *vt = t->vt;
  int rc = SHALE_OK;
  if (t->mod && t->mod->m->xDestroy) {
    r->destroying++; /* the module may drop its own tables (vtab.h) */
    rc = t->mod->m->xDestroy(vt);
    r->destroying--;
    if (rc != SHALE_OK) {
      take_err(vt, errmsg);
      return rc;
    }
    t->vt = NULL;
  }
  disconnect(t);
  return SHALE_OK;
}

int vtab_declare(VtabReg *r, const char *sql, char **errmsg) {
  VtabTable *t = r->connecting;
  if (!t || !sql) return SHALE_MISUSE;
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *st = NULL;
  char *err = NULL;
  int rc = sql_parse(&a, sql, -1, &st, NULL, &err);
  if (rc == SHALE_OK &&
      (!st || st->kind != SQL_STMT_CREATE_TABLE || st->u.create_table.as_select)) {
    rc = SHALE_ERROR;
  }
  util_arena_free(&a);
  if (rc == SHALE_NOMEM) { /* not the declaration's fault */
    shale_free(err);
    return SHALE_NOMEM;
  }
  if (rc != SHALE_OK) {
    set_err(errmsg, err ? err : util_mprintf("syntax error"));
    return SHALE_ERROR;
  }
  shale_free(err);
  char *copy = util_strdup(sql);
  if (!copy) return SHALE_NOMEM;
  shale_free(t->decl);
  t->decl = copy;
  if (t->decl_obj && t->decl_free) t->decl_free(t->decl_obj);
  t->decl_obj = NULL;
  r->declared = 1;
  return SHALE_OK;
}

/* ---- xBestIndex ---- */

VtabIndex *vtab_index_new(int ncons, int norder) {
  size_t nc = (size_t)(ncons > 0 ? ncons : 1), no = (size_t)(norder > 0 ? norder : 1);
  VtabIndex *x = shale_malloc(sizeof *x);
  if (!x) return NULL;
  memset(x, 0, sizeof *x);
  x->info.aConstraint = shale_malloc(sizeof *x->info.aConstraint * nc);
  x->info.aOrderBy = shale_malloc(sizeof *x->info.aOrderBy * no);
  x->info.aConstraintUsage = shale_malloc(sizeof *x->info.aConstraintUsage * nc);
  x->colls = shale_malloc(sizeof *x->colls * nc);
  x->rhs = shale_malloc(sizeof *x->rhs * nc);
  x->rhs_cells = shale_malloc(sizeof *x->rhs_cells * nc);
  x->in_ok = shale_malloc(nc);
  x->in_take = shale_malloc(nc);
  if (!x->info.aConstraint || !x->info.aOrderBy || !x->info.aConstraintUsage || !x->colls ||
      !x->rhs || !x->rhs_cells || !x->in_ok || !x->in_take) {
    vtab_index_free(x);
    return NULL;
  }
  memset(x->info.aConstraint, 0, sizeof *x->info.aConstraint * nc);
  memset(x->info.aOrderBy, 0, sizeof *x->info.aOrderBy * no);
  memset(x->colls, 0, sizeof *x->colls * nc);
  memset(x->rhs, 0, sizeof *x->rhs * nc);
  memset(x->rhs_cells, 0, sizeof *x->rhs_cells * nc);
  memset(x->in_ok, 0, nc);
  memset(x->in_take, 0, nc);
  x->info.nConstraint = ncons;
  x->info.nOrderBy = norder;
  return x;
}

static void free_idxstr(shale_index_info *info) {
  if (info->needToFreeIdxStr) shale_free(info->idxStr);
  info->idxStr = NULL;
  info->needToFreeIdxStr = 0;
}

void vtab_index_free(VtabIndex *x) {
  if (!x) return;
  free_idxstr(&x->info);
  if (x->rhs_cells)
    for (int i = 0; i < x->info.nConstraint; i++) shale_free(x->rhs_cells[i].buf);
  shale_free(x->info.aConstraint);
  shale_free(x->info.aOrderBy);
  shale_free(x->info.aConstraintUsage);
  shale_free(x->colls);
  shale_free(x->rhs);
  shale_free(x->rhs_cells);
  shale_free(x->in_ok);
  shale_free(x->in_take);
  shale_free(x);
}

void vtab_index_reset(VtabIndex *x) {
  shale_index_info *in = &x->info;
  free_idxstr(in);
  memset(in->aConstraintUsage, 0,
         sizeof *in->aConstraintUsage * (size_t)(in->nConstraint > 0 ? in->nConstraint : 1));
  in->idxNum = 0;
  in->orderByConsumed = 0;
  in->estimatedCost = 5e98; /* SQLITE_BIG_DBL / 2 */
  in->estimatedRows = 25;
  in->idxFlags = 0;
  memset(x->in_take, 0, (size_t)(in->nConstraint > 0 ? in->nConstraint : 1));
}

int vtab_best_index(VtabTable *t, VtabIndex *x, char **errmsg) {
  if (!t->vt) return SHALE_ERROR;
  int rc = t->mod->m->xBestIndex(t->vt, &x->info);
  if (rc != SHALE_OK && rc != SHALE_CONSTRAINT) {
    if (t->vt->zErrMsg)
      take_err(t->vt, errmsg);
    else if (rc != SHALE_NOMEM)
      set_err(errmsg, util_mprintf("%s", shale_errstr(rc)));
    return rc;
  }
  if (t->vt->zErrMsg) {
    take_err(t->vt, errmsg);
    return SHALE_ERROR;
  }
  return rc;
}

/* ---- values ---- */

void vtab_cells(shale_value *cells, shale_value **ptrs, ShValue *argv, int argc) {
  for (int i = 0; i < argc; i++) {
    memset(&cells[i], 0, sizeof cells[i]);
    cells[i].v = argv[i];
    cells[i].v.flags &= (uint8_t)~VAL_OWNED; /* borrowed (invariant 1) */
    ptrs[i] = &cells[i];
  }
}

void vtab_cells_free(shale_value *cells, int argc) {
  for (int i = 0; i < argc; i++) shale_free(cells[i].buf);
}

/* ---- cursors ---- */

int vtab_open(VtabTable *t, VtabCur **out, char **errmsg) {
  *out = NULL;
  if (!t->vt) {
    set_err(errmsg, util_mprintf("no such table: %s", t->name));
    return SHALE_ERROR;
  }
  VtabCur *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  shale_vtab_cursor *vc = NULL;
  int rc = t->mod->m->xOpen(t->vt, &vc);
  if (rc != SHALE_OK || !vc) {
    take_err(t->vt, errmsg);
    shale_free(c);
    return rc ? rc : SHALE_ERROR;
  }
  vc->pVtab = t->vt;
  c->t = t;
  c->c = vc;
  c->eof = 1;
  value_set_null(&c->ctx.result);
  c->ctx.aux = &c->ptrs;
  t->vt->nRef++;
  *out = c;
  return SHALE_OK;
}

void vtab_close(VtabCur *c) {
  if (!c) return;
  value_clear(&c->ctx.result);
  func_auxdata_clear(&c->ptrs);
  shale_free(c->ctx.errmsg);
  if (c->c && c->t->vt) {
    c->t->vt->nRef--;
    c->t->mod->m->xClose(c->c);
  }
  shale_free(c);
}

#define STACK_ARGS 8

/* argv as shale_value cells: on the stack up to STACK_ARGS, else heap. */
typedef struct Cells {
  shale_value cells[STACK_ARGS], *ptrs[STACK_ARGS];
  shale_value *cv, **pv;
  int n;
} Cells;

static int cells_open(Cells *c, ShValue *argv, int argc) {
  c->cv = c->cells;
  c->pv = c->ptrs;
  c->n = argc;
  if (argc > STACK_ARGS) {
    c->cv = shale_malloc(sizeof *c->cv * (size_t)argc);
    c->pv = shale_malloc(sizeof *c->pv * (size_t)argc);
    if (!c->cv || !c->pv) {
      shale_free(c->cv);
      shale_free(c->pv);
      return SHALE_NOMEM;
    }
  }
  vtab_cells(c->cv, c->pv, argv, argc);
  return SHALE_OK;
}

static void cells_close(Cells *c) {
  vtab_cells_free(c->cv, c->n);
  if (c->cv != c->cells) {
    shale_free(c->cv);
    shale_free(c->pv);
  }
}

int vtab_filter(VtabCur *c, int idx_num, const char *idx_str, int argc, ShValue *argv,
                char **errmsg) {
  shale_vtab *vt = c->t->vt;
  if (!vt) return SHALE_ERROR;
  Cells cs;
  if (cells_open(&cs, argv, argc)) return SHALE_NOMEM;
  func_auxdata_clear(&c->ptrs);
  shale_value **pv = cs.pv;
  int rc = vt->pModule->xFilter(c->c, idx_num, idx_str, argc, argc ? pv : NULL);
  cells_close(&cs);
  if (rc != SHALE_OK) {
    take_err(vt, errmsg);
    return rc;
  }
  c->eof = vt->pModule->xEof(c->c) != 0;
  return SHALE_OK;
}

int vtab_next(VtabCur *c, char **errmsg) {
  shale_vtab *vt = c->t->vt;
  if (!vt) return SHALE_ERROR;
  func_auxdata_clear(&c->ptrs);
  int rc = vt->pModule->xNext(c->c);
  if (rc != SHALE_OK) {
    take_err(vt, errmsg);
    return rc;
  }
  c->eof = vt->pModule->xEof(c->c) != 0;
  return SHALE_OK;
}

void vtab_cursor_ctx(VtabCur *c, void *conn, const FuncConnCallbacks *cb, int64_t max_length,
                     int max_like_pattern) {
  c->ctx.conn = conn;
  c->ctx.cb = cb;
  c->ctx.max_length = max_length;
  c->ctx.max_like_pattern = max_like_pattern;
}

int vtab_column(VtabCur *c, int col, int nochange, ShValue *out, char **errmsg) {
  shale_vtab *vt = c->t->vt;
  if (!vt) return SHALE_ERROR;
  FuncCtx *ctx = &c->ctx;
  if (nochange) ctx->result.flags = VAL_NOCHANGE; /* invariant 2 */
  int rc = vt->pModule->xColumn(c->c, (shale_context *)ctx, col);
  if (ctx->rc | rc) {
    if (ctx->rc) rc = ctx->rc;
    ctx->rc = SHALE_OK;
    ctx->subtype = 0;
    value_clear(&ctx->result);
    if (ctx->errmsg) {
      set_err(errmsg, ctx->errmsg);
      ctx->errmsg = NULL;
    }
    take_err(vt, errmsg);
    return rc;
  }
  if (ctx->errmsg) { /* a message with no error: dropped */
    shale_free(ctx->errmsg);
    ctx->errmsg = NULL;
  }
  *out = ctx->result; /* func_ctx_take_result, inline: one call per column read */
  if (ctx->subtype) {
    out->flags |= VAL_SUBTYPE;
    out->subtype = ctx->subtype;
    ctx->subtype = 0;
  }
  value_set_null(&ctx->result);
  return SHALE_OK;
}

int vtab_rowid(VtabCur *c, int64_t *rowid, char **errmsg) {
  shale_vtab *vt = c->t->vt;
  if (!vt) return SHALE_ERROR;
  shale_int64 r = 0;
  int rc = vt->pModule->xRowid(c->c, &r);
  if (rc != SHALE_OK) {
    take_err(vt, errmsg);
    return rc;
  }
  *rowid = r;
  return SHALE_OK;
}

/* ---- function overloading ---- */

int vtab_find_function(VtabTable *t, int nargs, const char *name, shale_func_fn *fn, void **arg) {
  *fn = NULL;
  *arg = NULL;
  shale_vtab *vt = t->vt;
  if (!vt || !vt->pModule->xFindFunction) return 0;
  return vt->pModule->xFindFunction(vt, nargs, name, fn, arg);
}

void vtab_func_scalar(FuncCtx *ctx, int argc, ShValue *argv) {
  const VtabFunc *f = (const VtabFunc *)(const void *)ctx->def; /* def is its first member */
  Cells cs;
  if (cells_open(&cs, argv, argc)) {
    func_result_error_nomem(ctx);
    return;
  }
  f->fn((shale_context *)ctx, argc, cs.pv);
  cells_close(&cs);
}

const FuncDef *vtab_overload(VtabReg *r, VtabTable *t, const FuncDef *base, const char *name,
                             int nargs, int *nomem) {
  size_t n = strlen(name);
  char *lower = shale_malloc(n + 1);
  if (!lower) {
    *nomem = 1;
    return base;
  }
  for (size_t i = 0; i <= n; i++)
    lower[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
  shale_func_fn fn;
  void *arg;
  int rc = vtab_find_function(t, nargs, lower, &fn, &arg);
  if (rc == 0 || !fn) {
    shale_free(lower);
    return base;
  }
  VtabFunc *f = r->funcs;
  while (f && !(f->t == t && f->fn == fn && f->arg == arg && f->def.nargs == nargs &&
                strcmp(f->def.name, base ? base->name : lower) == 0))
    f = f->next;
  if (!f) { /* a new one: the base's definition with the module's function */
    const char *nm = base ? base->name : lower;
    size_t nn = strlen(nm) + 1;
    f = shale_malloc(sizeof *f + nn);
    if (!f) {
      shale_free(lower);
      *nomem = 1;
      return base;
    }
    memset(f, 0, sizeof *f);
    if (base) f->def = *base;
    memcpy(f + 1, nm, nn);
    f->def.name = (const char *)(f + 1);
    f->def.nargs = nargs;
    f->def.scalar = vtab_func_scalar;
    f->def.step = NULL;
    f->def.step_state = NULL;
    f->def.final = f->def.value = NULL;
    f->def.inverse = NULL;
    f->def.user_data = NULL;
    f->def.destroy = NULL;
    /* what the VM reads of a plain scalar's definition */
    f->def.flags &= FUNC_DETERMINISTIC | FUNC_NEEDCOLL | FUNC_DIRECTONLY | FUNC_INNOCUOUS;
    f->fn = fn;
    f->arg = arg;
    f->t = t;
    f->next = r->funcs;
    r->funcs = f;
  }
  shale_free(lower);
  return &f->def;
}

/* ---- writes and transactions ---- */

int vtab_update(VtabReg *r, VtabTable *t, int argc, ShValue *argv, int oe, int64_t *rowid,
                char **errmsg) {
  shale_vtab *vt = t->vt;
  if (!vt) return SHALE_ERROR;
  if (!vt->pModule->xUpdate) {
    set_err(errmsg, util_mprintf("table %s may not be modified", t->name));
    return SHALE_ERROR;
  }
  Cells cs;
  if (cells_open(&cs, argv, argc)) return SHALE_NOMEM;
  shale_value **pv = cs.pv;
  int save = r->on_conflict;
  r->on_conflict = oe;
  shale_int64 rid = 0;
  int rc = vt->pModule->xUpdate(vt, argc, pv, &rid);
  r->on_conflict = save;
  cells_close(&cs);
  if (rc != SHALE_OK) {
    take_err(vt, errmsg);
    return rc;
  }
  *rowid = rid;
  return SHALE_OK;
}

int vtab_begin(VtabReg *r, VtabTable *t, int nsavepoint, char **errmsg) {
  shale_vtab *vt = t->vt;
  if (!vt || t->in_txn) return SHALE_OK;
  const shale_module *m = vt->pModule;
  if (m->xBegin) {
    int rc = m->xBegin(vt);
    if (rc != SHALE_OK) {
      take_err(vt, errmsg);
      return rc;
    }
  }
  t->in_txn = 1;
  t->txn_seq = ++r->txn_seq;
  t->isp = 0;
  if (nsavepoint > 0 && m->xBegin && m->iVersion >= 2 && m->xSavepoint) {
    t->isp = nsavepoint;
    int rc = m->xSavepoint(vt, nsavepoint - 1);
    if (rc != SHALE_OK) {
      take_err(vt, errmsg);
      return rc;
    }
  }
  return SHALE_OK;
}

int vtab_rename(VtabReg *r, VtabTable *t, const char *name, char **errmsg) {
  shale_vtab *vt = t->vt;
  if (vt && vt->pModule->xRename) {
    int rc = vt->pModule->xRename(vt, name);
    if (rc != SHALE_OK) {
      take_err(vt, errmsg);
      return rc;
    }
  }
  vtab_disconnect_db(r, t->idb);
  return SHALE_OK;
}

/* The tables in the transaction, in the order they began (invariant 3):
 * the list is short, so a scan per step. */
static VtabTable *next_in_txn(VtabReg *r, int after) {
  VtabTable *best = NULL;
  for (VtabTable *t = r->tabs; t; t = t->next)
    if (t->in_txn && t->vt && t->txn_seq > after && (!best || t->txn_seq < best->txn_seq)) best = t;
  return best;
}

int vtab_sync(VtabReg *r, char **errmsg) {
  for (VtabTable *t = next_in_txn(r, 0); t; t = next_in_txn(r, t->txn_seq)) {
    if (!t->vt->pModule->xSync) continue;
    int rc = t->vt->pModule->xSync(t->vt);
    if (rc != SHALE_OK) {
      take_err(t->vt, errmsg);
      return rc;
    }
  }
  return SHALE_OK;
}

/* As SQLite's: each table's xCommit/xRollback, then the release of the
 * transaction's reference, which disconnects a stale table. */
static void end_txn(VtabReg *r, int commit) {
  for (VtabTable *t = next_in_txn(r, 0); t;) {
    const shale_module *m = t->vt->pModule;
    int (*fn)(shale_vtab *) = commit ? m->xCommit : m->xRollback;
    if (fn) fn(t->vt);
    VtabTable *next = next_in_txn(r, t->txn_seq);
    if (t->stale) disconnect(t);
    t = next;
  }
  for (VtabTable *t = r->tabs; t; t = t->next) {
    t->in_txn = 0;
    if (t->stale) disconnect(t);
  }
  r->txn_seq = 0;
}

void vtab_commit(VtabReg *r) { end_txn(r, 1); }
void vtab_rollback(VtabReg *r) { end_txn(r, 0); }

int vtab_savepoint(VtabReg *r, int op, int n, char **errmsg) {
  for (VtabTable *t = next_in_txn(r, 0); t; t = next_in_txn(r, t->txn_seq)) {
    const shale_module *m = t->vt->pModule;
    if (m->iVersion < 2 || !m->xBegin) continue;
    int (*fn)(shale_vtab *, int) = op == 0 ? m->xSavepoint : op == 1 ? m->xRelease : m->xRollbackTo;
    if (op == 0) t->isp = n + 1;
    if (!fn || t->isp <= n) continue;
    int rc = fn(t->vt, n);
    if (rc != SHALE_OK) {
      take_err(t->vt, errmsg);
      return rc;
    }
  }
  return SHALE_OK;
}

int vtab_in_txn(const VtabReg *r) {
  for (VtabTable *t = r->tabs; t; t = t->next)
    if (t->in_txn && t->vt) return 1;
  return 0;
}

int vtab_connect_sql(VtabReg *r, int create, int idb, const char *dbname, const char *sql,
                     VtabTable **out, char **errmsg) {
  *out = NULL;
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *st = NULL;
  char *err = NULL;
  int rc = sql_parse(&a, sql, -1, &st, NULL, &err);
  if (rc || !st || st->kind != SQL_STMT_CREATE_VTAB) {
    util_arena_free(&a);
    set_err(errmsg, err);
    return rc ? rc : SHALE_INTERNAL;
  }
  const SqlCreateVtab *vt = &st->u.create_vtab;
  char **args = vt->nargs ? util_arena_alloc(&a, sizeof(char *) * (size_t)vt->nargs) : NULL;
  rc = vt->nargs && !args ? SHALE_NOMEM : SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < vt->nargs; i++) {
    args[i] = util_arena_alloc(&a, (size_t)vt->args[i].len + 1);
    if (!args[i]) {
      rc = SHALE_NOMEM;
    } else {
      memcpy(args[i], sql + vt->args[i].start, (size_t)vt->args[i].len);
      args[i][vt->args[i].len] = 0;
    }
  }
  if (rc == SHALE_OK)
    rc = vtab_connect(r, create, idb, dbname, vt->name.name, vt->module, vt->nargs,
                      (const char *const *)args, sql, out, errmsg);
  util_arena_free(&a);
  return rc;
}
