/*
 * compile.c -- compile_sql (parse, dispatch, program shape), the Parse
 * helpers every code generator uses (errors, arena, transaction needs,
 * covering-index redirections, EXPLAIN QUERY PLAN rows, cursor opening,
 * KeyInfos), and the transaction-control statements (BEGIN, COMMIT,
 * ROLLBACK, SAVEPOINT, RELEASE).
 *
 * Owns: the Parse of one compile_sql call (its arena, the builder until the
 * program is handed over) and everything in CompiledStmt.arena.
 *
 * Invariants:
 *  1. compile_sql leaves nothing behind on error: the builder is aborted, the
 *     Parse arena freed, *out emptied (compile_stmt_free on it is a no-op).
 *  2. Program shape (compile.h invariant 4): Init (-> epilogue); body; Halt;
 *     epilogue = [Transaction p1=0 p2=need_write p3=cookie p5=CHECK_COOKIE]
 *     [hoisted constant ops]; Goto 1 (the first op of the body).
 *  3. KeyInfos handed to the program (P4_KEYINFO) live in the program's arena
 *     (p->b.prog->arena), never in the Parse arena: the program outlives it.
 *  4. Hoisted constant code (Parse.const_ops) contains no jumps and binds no
 *     label, so it can be moved to the epilogue as raw ops.
 */
#include "compile.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../os/os.h"
#include "dml_int.h"

/* ---- errors and memory ---- */

static void verror(Parse *p, int rc, const char *fmt, va_list ap) {
  if (p->rc) return;
  p->rc = rc;
  p->errmsg = util_vmprintf(fmt, ap);
  if (!p->errmsg) p->rc = SHALE_NOMEM;
}

void compile_parse_error(Parse *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, SHALE_ERROR, fmt, ap);
  va_end(ap);
}

void compile_parse_error_code(Parse *p, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, rc, fmt, ap);
  va_end(ap);
}

void compile_parse_nomem(Parse *p) {
  if (!p->rc) p->rc = SHALE_NOMEM;
}

void *compile_parse_alloc(Parse *p, size_t n) {
  void *r = util_arena_zalloc(&p->arena, n ? n : 1);
  if (!r) compile_parse_nomem(p);
  return r;
}

char *compile_parse_strdup(Parse *p, const char *z) {
  if (!z) return NULL;
  char *r = util_arena_strndup(&p->arena, z, strlen(z));
  if (!r) compile_parse_nomem(p);
  return r;
}

/* ---- transaction needs, covers, EQP ---- */

void compile_parse_need_read(Parse *p) { compile_parse_need_db(p, p->idb, 0); }
void compile_parse_need_write(Parse *p) { compile_parse_need_db(p, p->idb, 1); }
void compile_parse_need_db(Parse *p, int idb, int write) {
  if (idb < 0 || idb >= 32) idb = 0;
  p->need_read = 1;
  p->rmask |= 1u << idb;
  if (write) {
    p->need_write = 1;
    p->wmask |= 1u << idb;
  }
}

/* ---- databases ---- */

const char *compile_parse_db_name(const Parse *p, int i) {
  if (p->env && p->env->ndb > 0 && i >= 0 && i < p->env->ndb) return p->env->dbs[i].name;
  return i == 1 ? "temp" : "main";
}

Btree *compile_parse_db_bt(const Parse *p, int i) {
  if (!p->env) return NULL;
  if (i == 0 || p->env->ndb == 0) return p->env->bt;
  return i > 0 && i < p->env->ndb ? p->env->dbs[i].bt : NULL;
}

int compile_parse_find_db(const Parse *p, const char *name) {
  if (!name) return -1;
  int n = compile_parse_ndb(p);
  for (int i = 0; i < n; i++)
    if (!util_stricmp(compile_parse_db_name(p, i), name)) return i;
  /* "main" stays database 0's name after db_config MAINDBNAME renamed it */
  return util_stricmp(name, "main") ? -1 : 0;
}

int compile_parse_table_db(Parse *p, const Table *tab) {
  int n = compile_parse_ndb(p);
  if (n <= 1 || !tab || !tab->name) return 0;
  if (tab == p->tdb_tab) return p->tdb_db;
  for (int k = 0; k < n; k++) {
    int i = k == 0 ? 0 : k == 1 ? 1 : k; /* main first: the common case */
    const Schema *s = compile_parse_db_schema(p, i);
    if (!s) continue;
    if (s->schema_table == tab || schema_find_table(s, tab->name) == tab) {
      p->tdb_tab = tab;
      p->tdb_db = i;
      return i;
    }
  }
  return p->idb; /* a table being built (ALTER): the statement's database */
}

/* Every name of the built-in schema tables begins with "sqlite_" (ASCII
 * case folded, as util_stricmp): other names skip the compares. */
static int maybe_builtin(const char *n) {
  return (n[0] | 0x20) == 's' && (n[1] | 0x20) == 'q' && (n[2] | 0x20) == 'l' &&
         (n[3] | 0x20) == 'i' && (n[4] | 0x20) == 't' && (n[5] | 0x20) == 'e' && n[6] == '_';
}

static int is_temp_master(const char *name) {
  return maybe_builtin(name) &&
         (!util_stricmp(name, "sqlite_temp_master") || !util_stricmp(name, "sqlite_temp_schema"));
}

static void *find_in(Parse *p, int i, int kind, const char *name) {
  Schema *s = compile_parse_db_schema(p, i);
  if (!s) return NULL;
  switch (kind) {
    case PARSE_OBJ_TABLE:
      if (i == 1 && is_temp_master(name)) return s->schema_table;
      /* a schema holding only the built-in table (temp, mostly) has no
       * other name to look up */
      if (!maybe_builtin(name) && !schema_has_user_tables(s)) return NULL;
      return schema_find_table(s, name);
    case PARSE_OBJ_INDEX:
      return schema_find_index(s, name);
    case PARSE_OBJ_VIEW:
      return schema_find_view(s, name);
    default:
      return schema_find_trigger(s, name);
  }
}

Table *compile_parse_schema_table(Parse *p, const Schema *s, const char *name) {
  if (name && name == p->target_name && s == p->target_schema) return p->target_tab;
  return schema_find_table(s, name);
}

void *compile_parse_find_object(Parse *p, int kind, const char *zdb, const char *name, int *idb) {
  *idb = -1;
  if (!name) return NULL;
  if (zdb) {
    int i = compile_parse_find_db(p, zdb);
    void *o = i >= 0 ? find_in(p, i, kind, name) : NULL;
    if (o) *idb = i;
    return o;
  }
  int n = compile_parse_ndb(p);
  if (p->scope_db1 > 0 && p->scope_db1 <= n) {
    int i = p->scope_db1 - 1;
    void *o = find_in(p, i, kind, name);
    if (o) *idb = i;
    return o;
  }
  for (int k = 0; k < n; k++) {
    int i = n == 1 ? 0 : k == 0 ? 1 : k == 1 ? 0 : k; /* temp, main, attached */
    if (i == 1 && kind == PARSE_OBJ_TABLE && maybe_builtin(name) &&
        (!util_stricmp(name, "sqlite_master") || !util_stricmp(name, "sqlite_schema")))
      continue; /* temp's is sqlite_temp_master unless qualified */
    void *o = find_in(p, i, kind, name);
    if (o) {
      *idb = i;
      if (kind == PARSE_OBJ_TABLE) { /* compile_parse_table_db's answer for it */
        p->tdb_tab = o;
        p->tdb_db = i;
      }
      return o;
    }
  }
  return NULL;
}

/* The errors SQLite reports while preparing a PRAGMA (the API runs it):
 * table_info/table_xinfo of a virtual table (SQLite connects it: "no such
 * module"), temp_store_directory set to what is not a writable directory. */
static int pragma_prepare_checks(Parse *p, const PragmaReq *q) {
  if (!q->value) return 0;
  if (!util_stricmp(q->name, "encoding")) {
    /* as SQLite: only while the database is empty (later the value is
     * ignored, whatever it is) */
    if (p->schema && p->schema->cookie != 0) return 0;
    static const char *const encs[] = {"UTF8",    "UTF-8",   "UTF-16le", "UTF-16be",
                                       "UTF16le", "UTF16be", "UTF-16",   "UTF16"};
    for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++)
      if (!util_stricmp(q->value, encs[i])) return 0;
    compile_parse_error(p, "unsupported encoding: %s", q->value);
    return 1;
  }
  if (!util_stricmp(q->name, "temp_store_directory")) {
    OsVfs *vfs = os_vfs_find(NULL);
    int ok = 0;
    if (!q->value[0]) return 0; /* clears it */
    if (vfs && vfs->access(vfs, q->value, OS_ACCESS_READWRITE, &ok) == SHALE_OK && ok) return 0;
    compile_parse_error(p, "not a writable directory");
    return 1;
  }
  if (util_stricmp(q->name, "table_info") && util_stricmp(q->name, "table_xinfo")) return 0;
  int idb;
  const Table *t = compile_parse_find_object(p, PARSE_OBJ_TABLE, q->schema, q->value, &idb);
  return compile_parse_vtab_missing(p, t);
}

int compile_parse_other_db(const Parse *p, const char *zdb) {
  if (!zdb) return 0;
  if (compile_parse_ndb(p) == 1) return util_stricmp(zdb, "main") && util_stricmp(zdb, "temp");
  return compile_parse_find_db(p, zdb) != p->idb;
}

void compile_parse_set_db(Parse *p, int idb) {
  if (idb < 0 || idb >= compile_parse_ndb(p)) idb = 0;
  p->idb = idb;
  p->schema = NULL;
  p->schema = compile_parse_db_schema(p, idb);
}

/* The redirection entry of cursor tab_cur; a new zeroed one when create
 * (NULL when there is none, or out of memory). */
static struct ParseCover *cover_entry(Parse *p, int tab_cur, int create) {
  for (int i = 0; i < p->ncover; i++)
    if (p->covers[i].tab_cur == tab_cur) return &p->covers[i];
  if (!create) return NULL;
  if (p->ncover == p->capcover) {
    int cap = p->capcover ? p->capcover * 2 : 8;
    struct ParseCover *a = compile_parse_alloc(p, sizeof *a * (size_t)cap);
    if (!a) return NULL;
    if (p->ncover) memcpy(a, p->covers, sizeof *a * (size_t)p->ncover);
    p->covers = a;
    p->capcover = cap;
  }
  struct ParseCover *c = &p->covers[p->ncover++];
  memset(c, 0, sizeof *c);
  c->tab_cur = tab_cur;
  return c;
}

void compile_parse_set_cover(Parse *p, int tab_cur, const Index *idx, int idx_cur) {
  struct ParseCover *c = cover_entry(p, tab_cur, idx != NULL);
  if (!c) return;
  c->idx = idx;
  c->idx_cur = idx_cur;
  c->seek_reg = 0;
}

void compile_parse_set_cover_seek(Parse *p, int tab_cur, int seek_reg) {
  struct ParseCover *c = cover_entry(p, tab_cur, 0);
  if (c && c->idx) c->seek_reg = seek_reg;
}

const struct ParseCover *compile_parse_find_cover(const Parse *p, int tab_cur) {
  for (int i = 0; i < p->ncover; i++)
    if (p->covers[i].tab_cur == tab_cur && (p->covers[i].idx || p->covers[i].reg))
      return &p->covers[i];
  return NULL;
}

void compile_parse_set_coroutine(Parse *p, int tab_cur, int reg) {
  struct ParseCover *c = cover_entry(p, tab_cur, reg != 0);
  if (c) c->reg = reg;
}

int compile_parse_eqp(Parse *p, const char *fmt, ...) {
  /* the rows are only read by EXPLAIN QUERY PLAN: other statements take
   * the id alone (no formatting) */
  if (p->is_explain != 2) return ++p->eqp_next_id;
  if (p->neqp == p->capeqp) {
    int cap = p->capeqp ? p->capeqp * 2 : 8;
    EqpRow *a = compile_parse_alloc(p, sizeof *a * (size_t)cap);
    if (!a) return 0;
    if (p->neqp) memcpy(a, p->eqp, sizeof *a * (size_t)p->neqp);
    p->eqp = a;
    p->capeqp = cap;
  }
  va_list ap;
  va_start(ap, fmt);
  char *z = util_vmprintf(fmt, ap);
  va_end(ap);
  if (!z) {
    compile_parse_nomem(p);
    return 0;
  }
  char *d = compile_parse_strdup(p, z);
  shale_free(z);
  if (!d) return 0;
  EqpRow *r = &p->eqp[p->neqp++];
  r->id = ++p->eqp_next_id;
  r->parent = p->eqp_parent;
  r->detail = d;
  return r->id;
}

/* ---- KeyInfos and cursors ---- */

KeyInfo *compile_parse_keyinfo(Parse *p, int n, const Collation **coll, const uint8_t *desc) {
  if (!p->b.prog) {
    compile_parse_nomem(p);
    return NULL;
  }
  UtilArena *a = &p->b.prog->arena;
  KeyInfo *ki = util_arena_zalloc(a, sizeof *ki);
  const Collation **c = util_arena_zalloc(a, sizeof *c * (size_t)(n > 0 ? n : 1));
  uint8_t *d = util_arena_zalloc(a, (size_t)(n > 0 ? n : 1));
  if (!ki || !c || !d) {
    compile_parse_nomem(p);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    c[i] = coll ? coll[i] : NULL;
    d[i] = desc ? desc[i] : 0;
  }
  ki->ncol = n;
  ki->coll = c;
  ki->desc = d;
  return ki;
}

KeyInfo *compile_parse_index_keyinfo(Parse *p, const Index *idx) {
  int n = idx->ncol;
  const Collation **coll = compile_parse_alloc(p, sizeof *coll * (size_t)(n > 0 ? n : 1));
  uint8_t *desc = compile_parse_alloc(p, (size_t)(n > 0 ? n : 1));
  if (!coll || !desc) return NULL;
  for (int i = 0; i < n; i++) {
    const char *name = idx->cols[i].coll;
    const Collation *c = NULL;
    if (name && util_stricmp(name, "BINARY") != 0) {
      c = record_collation_find(name);
      if (!c) {
        compile_parse_error_code(p, SHALE_ERROR_MISSING_COLLSEQ, "no such collation sequence: %s",
                                 name);
        return NULL;
      }
    }
    coll[i] = c;
    desc[i] = idx->cols[i].desc;
  }
  return compile_parse_keyinfo(p, n, coll, desc);
}

void compile_parse_open_index(Parse *p, int cur, const Index *idx, int write) {
  KeyInfo *ki = compile_parse_index_keyinfo(p, idx);
  if (!ki) return;
  int idb = compile_parse_table_db(p, idx->table);
  compile_parse_need_db(p, idb, write);
  vm_builder_add_p4(&p->b, write ? OP_OpenWrite : OP_OpenRead, cur, (int)idx->root, idb, P4_KEYINFO,
                    ki);
}

void compile_parse_open_table(Parse *p, int cur, const Table *tab, int write) {
  if (tab->vtab) {
    vm_builder_add_p4(&p->b, OP_VOpen, cur, 0, 0, P4_VTAB, tab->vtab);
    return;
  }
  if (tab->without_rowid && tab->pk_index) {
    compile_parse_open_index(p, cur, tab->pk_index, write);
    return;
  }
  int idb = compile_parse_table_db(p, tab);
  compile_parse_need_db(p, idb, write);
  int ncol = tab->nstored > 0 ? tab->nstored : tab->ncol;
  vm_builder_add_i4(&p->b, write ? OP_OpenWrite : OP_OpenRead, cur, (int)tab->root, idb, ncol);
}

/* ---- transaction control ---- */

static int compile_txn(Parse *p, const SqlStmt *s) {
  switch (s->kind) {
    case SQL_STMT_BEGIN:
      if (s->u.begin.mode == TK_IMMEDIATE || s->u.begin.mode == TK_EXCLUSIVE)
        for (int i = 0; i < compile_parse_ndb(p); i++) /* every database, as SQLite */
          emit(p, OP_Transaction, i, s->u.begin.mode == TK_EXCLUSIVE ? 2 : 1, 0);
      emit(p, OP_AutoCommit, 0, 0, 0);
      break;
    case SQL_STMT_COMMIT:
      emit(p, OP_AutoCommit, 1, 0, 0);
      break;
    case SQL_STMT_ROLLBACK:
      if (s->u.rollback.savepoint)
        vm_builder_add_text(&p->b, OP_Savepoint, 2, 0, 0, s->u.rollback.savepoint, -1);
      else
        emit(p, OP_AutoCommit, 1, 1, 0);
      break;
    case SQL_STMT_SAVEPOINT:
      vm_builder_add_text(&p->b, OP_Savepoint, 0, 0, 0, s->u.savepoint.name, -1);
      break;
    case SQL_STMT_RELEASE:
      vm_builder_add_text(&p->b, OP_Savepoint, 1, 0, 0, s->u.savepoint.name, -1);
      break;
  }
  return p->rc;
}

static int compile_select_stmt(Parse *p, const SqlStmt *s) {
  SqlSelect *sel = s->u.select;
  if (compile_select_resolve(p, sel, NULL)) return p->rc ? p->rc : SHALE_ERROR;
  if (p->nested == 0 && !p->trig_tab && s == p->stmt) {
    if (compile_select_result_names(p, sel)) return p->rc ? p->rc : SHALE_ERROR;
  }
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_OUTPUT;
  compile_select_code(p, sel, &d);
  return p->rc;
}

/* ---- the authorizer ---- */

/* The innermost trigger being coded (the authorizer's last argument). */
static const char *auth_trigger(Parse *p) {
  TrigFrame *f = dml_frame(p);
  return f && f->trig ? f->trig->name : NULL;
}

int compile_parse_auth(Parse *p, int action, const char *a, const char *b, const char *db) {
  const CompileEnv *env = p->env;
  if (!env || !env->auth || parse_failed(p)) return AUTH_OK;
  int rc = env->auth(env->auth_ctx, action, a, b, db, auth_trigger(p));
  if (rc == AUTH_OK || rc == AUTH_IGNORE) return rc;
  if (rc == AUTH_DENY)
    compile_parse_error_code(p, SHALE_AUTH, "not authorized");
  else
    compile_parse_error(p, "authorizer malfunction");
  return AUTH_DENY;
}

static const char *drop_table_of(Parse *p, const SqlDrop *d) {
  if (!p->schema) return NULL;
  if (d->object == TK_INDEX) {
    Index *x = schema_find_index(p->schema, d->name.name);
    return x && x->table ? x->table->name : NULL;
  }
  if (d->object == TK_TRIGGER) {
    Trigger *t = schema_find_trigger(p->schema, d->name.name);
    return t ? t->table : NULL;
  }
  return NULL;
}

/* Whether table (or view) name exists where zdb says: SQLite looks a
 * statement's table up before it asks the authorizer, so a missing one gives
 * its error without a call. */
static int auth_has_table(Parse *p, const char *zdb, const char *name) {
  int idb = -1;
  return compile_parse_find_object(p, PARSE_OBJ_TABLE, zdb, name, &idb) ||
         compile_parse_find_object(p, PARSE_OBJ_VIEW, zdb, name, &idb);
}

/* The statement-level actions SQLite checks before it codes a statement:
 * AUTH_OK to go on, AUTH_IGNORE to code nothing (a no-op), AUTH_DENY. */
static int auth_stmt(Parse *p, const SqlStmt *s) {
  if (!p->env || !p->env->auth) return AUTH_OK;
  /* the database the statement works in, by its name (stmt_target chose
   * p->idb); TEMP objects have their own action codes */
  const char *dbn = compile_parse_db_name(p, p->idb);
  int tmp = p->idb == 1;
  switch (s->kind) {
    case SQL_STMT_SELECT:
      return compile_parse_auth(p, AUTH_SELECT, NULL, NULL, NULL);
    case SQL_STMT_ATTACH: {
      const SqlExpr *f = s->u.attach.file;
      return compile_parse_auth(p, AUTH_ATTACH, f->op == SQL_E_STRING ? f->z : NULL, NULL, NULL);
    }
    case SQL_STMT_DETACH: {
      const SqlExpr *f = s->u.detach.schema;
      return compile_parse_auth(
          p, AUTH_DETACH, f->op == SQL_E_STRING || f->op == SQL_E_ID ? f->z : NULL, NULL, NULL);
    }
    case SQL_STMT_INSERT: {
      if (!auth_has_table(p, s->u.insert.table.schema, s->u.insert.table.name)) return AUTH_OK;
      int rc = compile_parse_auth(p, AUTH_INSERT, s->u.insert.table.name, NULL, dbn);
      const SqlSelect *sel = s->u.insert.select;
      if (rc == AUTH_OK && sel &&
          (sel->kind != SQL_SEL_VALUES || sel->prior || (sel->cols && sel->cols->n > 1)))
        rc = compile_parse_auth(p, AUTH_SELECT, NULL, NULL, NULL);
      return rc;
    }
    case SQL_STMT_DELETE: { /* IGNORE: the rows are deleted all the same (SQLite) */
      if (!auth_has_table(p, s->u.del.table->schema, s->u.del.table->name)) return AUTH_OK;
      int rc = compile_parse_auth(p, AUTH_DELETE, s->u.del.table->name, NULL, dbn);
      return rc == AUTH_IGNORE ? AUTH_OK : rc;
    }
    case SQL_STMT_CREATE_TABLE:
      return compile_parse_auth(p, tmp ? AUTH_CREATE_TEMP_TABLE : AUTH_CREATE_TABLE,
                                s->u.create_table.name.name, NULL, dbn);
    case SQL_STMT_CREATE_VTAB:
      return compile_parse_auth(p, AUTH_CREATE_VTABLE, s->u.create_vtab.name.name,
                                s->u.create_vtab.module, dbn);
    case SQL_STMT_CREATE_INDEX: {
      const SqlCreateIndex *c = &s->u.create_index;
      if (!auth_has_table(p, compile_parse_db_name(p, p->idb), c->table)) return AUTH_OK;
      return compile_parse_auth(p, tmp ? AUTH_CREATE_TEMP_INDEX : AUTH_CREATE_INDEX, c->name.name,
                                c->table, dbn);
    }
    case SQL_STMT_CREATE_VIEW:
      return compile_parse_auth(p, tmp ? AUTH_CREATE_TEMP_VIEW : AUTH_CREATE_VIEW,
                                s->u.create_view.name.name, NULL, dbn);
    case SQL_STMT_CREATE_TRIGGER: {
      const SqlCreateTrigger *c = &s->u.create_trigger;
      if (!auth_has_table(p, c->table_schema, c->table)) return AUTH_OK;
      return compile_parse_auth(p, tmp ? AUTH_CREATE_TEMP_TRIGGER : AUTH_CREATE_TRIGGER,
                                c->name.name, c->table, dbn);
    }
    case SQL_STMT_DROP: {
      const SqlDrop *d = &s->u.drop;
      const char *n = d->name.name;
      int rc;
      switch (d->object) {
        case TK_TABLE: {
          const Table *t = p->schema ? schema_find_table(p->schema, n) : NULL;
          if (p->schema && !t) return AUTH_OK; /* error later */
          const char *mod = t ? t->vtab_module : NULL;
          int act = mod ? AUTH_DROP_VTABLE : tmp ? AUTH_DROP_TEMP_TABLE : AUTH_DROP_TABLE;
          rc = compile_parse_auth(p, act, n, mod, dbn);
          return rc == AUTH_OK ? compile_parse_auth(p, AUTH_DELETE, n, NULL, dbn) : rc;
        }
        case TK_VIEW:
          if (p->schema && !schema_find_view(p->schema, n)) return AUTH_OK;
          rc = compile_parse_auth(p, tmp ? AUTH_DROP_TEMP_VIEW : AUTH_DROP_VIEW, n, NULL, dbn);
          return rc == AUTH_OK ? compile_parse_auth(p, AUTH_DELETE, n, NULL, dbn) : rc;
        case TK_INDEX:
          if (!drop_table_of(p, d)) return AUTH_OK;
          return compile_parse_auth(p, tmp ? AUTH_DROP_TEMP_INDEX : AUTH_DROP_INDEX, n,
                                    drop_table_of(p, d), dbn);
        default:
          if (!drop_table_of(p, d)) return AUTH_OK;
          return compile_parse_auth(p, tmp ? AUTH_DROP_TEMP_TRIGGER : AUTH_DROP_TRIGGER, n,
                                    drop_table_of(p, d), dbn);
      }
    }
    case SQL_STMT_ALTER:
      if (!auth_has_table(p, s->u.alter.table.schema, s->u.alter.table.name)) return AUTH_OK;
      return compile_parse_auth(p, AUTH_ALTER_TABLE, dbn, s->u.alter.table.name, NULL);
    case SQL_STMT_BEGIN:
      return compile_parse_auth(p, AUTH_TRANSACTION, "BEGIN", NULL, NULL);
    case SQL_STMT_COMMIT:
      return compile_parse_auth(p, AUTH_TRANSACTION, "COMMIT", NULL, NULL);
    case SQL_STMT_ROLLBACK:
      if (s->u.rollback.savepoint)
        return compile_parse_auth(p, AUTH_SAVEPOINT, "ROLLBACK", s->u.rollback.savepoint, NULL);
      return compile_parse_auth(p, AUTH_TRANSACTION, "ROLLBACK", NULL, NULL);
    case SQL_STMT_SAVEPOINT:
      return compile_parse_auth(p, AUTH_SAVEPOINT, "BEGIN", s->u.savepoint.name, NULL);
    case SQL_STMT_RELEASE:
      return compile_parse_auth(p, AUTH_SAVEPOINT, "RELEASE", s->u.savepoint.name, NULL);
    case SQL_STMT_REINDEX:
    case SQL_STMT_ANALYZE: {
      /* REINDEX: per index rebuilt; ANALYZE: per table analyzed (an index
       * named: its table), in the database(s) the statement covers */
      int act = s->kind == SQL_STMT_REINDEX ? AUTH_REINDEX : AUTH_ANALYZE;
      const SqlQualName *q = &s->u.analyze.name;
      int i0 = 0, i1 = compile_parse_ndb(p); /* databases [i0, i1) */
      if (s->u.analyze.has_name) {
        int idb = q->schema ? -1 : compile_parse_find_db(p, q->name);
        if (idb < 0) {
          const Schema *sc = p->schema;
          const Index *x = sc ? schema_find_index(sc, q->name) : NULL;
          const Table *t = x ? x->table : sc ? schema_find_table(sc, q->name) : NULL;
          if (act == AUTH_ANALYZE)
            return compile_parse_auth(p, act, t ? t->name : q->name, NULL, dbn);
          if (x) return compile_parse_auth(p, act, x->name, NULL, dbn);
          for (x = t ? t->indexes : NULL; x; x = x->next) {
            int rc = compile_parse_auth(p, act, x->name, NULL, dbn);
            if (rc != AUTH_OK) return rc;
          }
          return AUTH_OK;
        }
        i0 = idb; /* ANALYZE schema, REINDEX schema */
        i1 = idb + 1;
      }
      for (int i = i0; i < i1; i++) {
        const Schema *sc = compile_parse_db_schema(p, i);
        if (!sc || (act == AUTH_ANALYZE && i == 1 && i1 - i0 > 1)) continue;
        const SchemaMap *m = act == AUTH_REINDEX ? &sc->indexes : &sc->tables;
        for (int k = 0; k < m->cap; k++) {
          if (!m->slots[k].key) continue;
          const char *n = act == AUTH_REINDEX ? ((const Index *)m->slots[k].val)->name
                                              : ((const Table *)m->slots[k].val)->name;
          if (act == AUTH_ANALYZE && !util_strnicmp(n, "sqlite_", 7)) continue;
          int rc = compile_parse_auth(p, act, n, NULL, compile_parse_db_name(p, i));
          if (rc != AUTH_OK) return rc;
        }
      }
      return AUTH_OK;
    }
    default:
      return AUTH_OK;
  }
}

/* The database index a statement's schema name designates: 0 for main (or
 * no name), 1 for temp, 2.. attached (compile_parse_find_db); else "unknown
 * database X" and -1. */
static int schema_db_index(Parse *p, const char *name) {
  if (!name) return 0;
  int i = compile_parse_find_db(p, name);
  if (i < 0) compile_parse_error(p, "unknown database %s", name);
  return i;
}

/* VACUUM [schema] [INTO expr]: r[reg] = the file name expression (no
 * columns, no aggregates), then one Vacuum op; the connection's vacuum hook
 * does the work at run time, outside any transaction of this program. */
static int compile_vacuum(Parse *p, const SqlStmt *s) {
  int db = schema_db_index(p, s->u.vacuum.schema);
  if (db < 0) return p->rc;
  if (db == 1) return p->rc; /* SQLite: VACUUM temp [INTO anything] does nothing */
  int reg = 0;
  if (s->u.vacuum.into) {
    NameCtx nc;
    memset(&nc, 0, sizeof nc);
    if (compile_resolve_expr(p, &nc, s->u.vacuum.into) || parse_failed(p)) return p->rc;
    reg = emit_regs(p, 1);
    compile_expr_code(p, s->u.vacuum.into, reg);
  }
  emit(p, OP_Vacuum, db, reg, 0);
  return p->rc;
}

/* A qualified name's database for CREATE: the schema written (unknown:
 * "unknown database X"), temp for TEMP ("temporary table name must be
 * unqualified" for another one), else dflt. -1 after an error. */
static int create_db(Parse *p, const SqlQualName *q, int temp, int dflt) {
  int idb = dflt;
  if (q->schema) {
    idb = compile_parse_find_db(p, q->schema);
    if (idb < 0) {
      compile_parse_error(p, "unknown database %s", q->schema);
      return -1;
    }
  }
  if (temp) {
    if (q->schema && idb != 1) {
      compile_parse_error(p, "temporary table name must be unqualified");
      return -1;
    }
    idb = 1;
  }
  return idb;
}

/* An existing object's database: found by name (kinds tried in order), or
 * the database written when not found (-1 for an unknown one: the caller
 * reports "no such ..."). */
static int object_db(Parse *p, const char *zdb, const char *name, int k1, int k2) {
  int idb = -1;
  void *o = compile_parse_find_object(p, k1, zdb, name, &idb);
  /* compile_parse_schema_table's answer for it (not the schema table: temp's
   * is found here by names its map does not hold) */
  if (o && k1 == PARSE_OBJ_TABLE && !((Table *)o)->is_schema) {
    p->target_name = name;
    p->target_schema = compile_parse_db_schema(p, idb);
    p->target_tab = o;
  }
  if (!o && k2 >= 0) compile_parse_find_object(p, k2, zdb, name, &idb);
  if (idb < 0 && zdb) idb = compile_parse_find_db(p, zdb);
  return idb;
}

/* A non-TEMP view may only name tables of its own database. */
struct FixCheck {
  Parse *p;
  int idb;
  const char *bad;
};

static int fix_src(struct FixCheck *fc, const SqlSrcList *l) {
  for (int i = 0; l && i < l->n; i++) {
    const SqlSrcItem *it = &l->a[i];
    if (it->schema && compile_parse_find_db(fc->p, it->schema) != fc->idb) {
      fc->bad = it->schema;
      return 1;
    }
    if (fix_src(fc, it->nested)) return 1;
  }
  return 0;
}

static int fix_select_cb(SqlWalker *w, SqlSelect *sel) {
  struct FixCheck *fc = w->arg;
  return fix_src(fc, sel->from) ? SQL_WALK_ABORT : SQL_WALK_CONTINUE;
}

static int fix_expr_cb(SqlWalker *w, SqlExpr *e) { return SQL_WALK_CONTINUE; }

/* Choose the database a statement works in (Parse.idb and .schema). */
static int stmt_target(Parse *p, const SqlStmt *s) {
  int idb = 0;
  switch (s->kind) {
    case SQL_STMT_INSERT:
      idb = object_db(p, s->u.insert.table.schema, s->u.insert.table.name, PARSE_OBJ_TABLE,
                      PARSE_OBJ_VIEW);
      break;
    case SQL_STMT_UPDATE:
    case SQL_STMT_DELETE: {
      const SqlSrcItem *it = s->kind == SQL_STMT_UPDATE ? s->u.update.table : s->u.del.table;
      if (it) idb = object_db(p, it->schema, it->name, PARSE_OBJ_TABLE, PARSE_OBJ_VIEW);
      break;
    }
    case SQL_STMT_CREATE_TABLE:
      idb = create_db(p, &s->u.create_table.name, s->u.create_table.temp, 0);
      break;
    case SQL_STMT_CREATE_VTAB:
      idb = create_db(p, &s->u.create_vtab.name, 0, 0);
      break;
    case SQL_STMT_CREATE_VIEW:
      idb = create_db(p, &s->u.create_view.name, s->u.create_view.temp, 0);
      if (idb > 1 || idb == 0) {
        struct FixCheck fc = {p, idb, NULL};
        SqlWalker w = {fix_expr_cb, fix_select_cb, &fc};
        if (s->u.create_view.select) sql_walk_select(&w, s->u.create_view.select);
        if (fc.bad) {
          compile_parse_error(p, "view %s cannot reference objects in database %s",
                              s->u.create_view.name.name, fc.bad);
          return -1;
        }
      }
      break;
    case SQL_STMT_CREATE_TRIGGER: {
      const SqlCreateTrigger *tr = &s->u.create_trigger;
      if (tr->temp && tr->name.schema) {
        compile_parse_error(p, "temporary trigger may not have qualified name");
        return -1;
      }
      int dflt = 0;
      if (!tr->name.schema && !tr->table_schema) { /* a trigger on a TEMP table is TEMP */
        int t = -1;
        if (!compile_parse_find_object(p, PARSE_OBJ_TABLE, NULL, tr->table, &t))
          compile_parse_find_object(p, PARSE_OBJ_VIEW, NULL, tr->table, &t);
        if (t == 1) dflt = 1;
      }
      idb = create_db(p, &tr->name, tr->temp, dflt);
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      const SqlCreateIndex *ci = &s->u.create_index;
      if (ci->name.schema) {
        idb = create_db(p, &ci->name, 0, 0);
      } else { /* main, unless the table is a TEMP one */
        int t = -1;
        idb = compile_parse_find_object(p, PARSE_OBJ_TABLE, "temp", ci->table, &t) ? 1 : 0;
      }
      break;
    }
    case SQL_STMT_DROP: {
      const SqlDrop *d = &s->u.drop;
      int k = d->object == TK_TABLE   ? PARSE_OBJ_TABLE
              : d->object == TK_INDEX ? PARSE_OBJ_INDEX
              : d->object == TK_VIEW  ? PARSE_OBJ_VIEW
                                      : PARSE_OBJ_TRIGGER;
      idb = object_db(p, d->name.schema, d->name.name, k,
                      k == PARSE_OBJ_TABLE  ? PARSE_OBJ_VIEW
                      : k == PARSE_OBJ_VIEW ? PARSE_OBJ_TABLE
                                            : -1);
      break;
    }
    case SQL_STMT_ALTER:
      idb = object_db(p, s->u.alter.table.schema, s->u.alter.table.name, PARSE_OBJ_TABLE,
                      PARSE_OBJ_VIEW);
      break;
    case SQL_STMT_REINDEX:
    case SQL_STMT_ANALYZE:
      if (s->u.analyze.has_name && s->u.analyze.name.schema) {
        idb = compile_parse_find_db(p, s->u.analyze.name.schema);
        if (idb < 0) {
          compile_parse_error(p, "unknown database %s", s->u.analyze.name.schema);
          return -1;
        }
      }
      break;
    default:
      return 0;
  }
  if (idb < 0) idb = p->scope_db1 > 0 ? p->scope_db1 - 1 : 0; /* reported by the statement */
  compile_parse_set_db(p, idb);
  return idb;
}

/* ATTACH/DETACH: the program computes the arguments (file, name; or the
 * name) as one row; the API layer attaches or detaches with them. A bare
 * identifier is its name as a string (as SQLite). */
static int compile_attach(Parse *p, const SqlStmt *s) {
  SqlExpr *args[2];
  int n = 0;
  if (s->kind == SQL_STMT_ATTACH) {
    args[n++] = s->u.attach.file;
    args[n++] = s->u.attach.schema;
  } else {
    args[n++] = s->u.detach.schema;
  }
  int r = emit_regs(p, n);
  for (int i = 0; i < n; i++) {
    SqlExpr *e = args[i];
    if (e->op == SQL_E_ID) e->op = SQL_E_STRING;
    NameCtx nc;
    memset(&nc, 0, sizeof nc);
    nc.flags = NC_NO_COLUMN;
    if (compile_resolve_expr(p, &nc, e)) return p->rc ? p->rc : SHALE_ERROR;
    compile_expr_code(p, e, r + i);
  }
  emit(p, OP_ResultRow, r, n, 0);
  return p->rc;
}

int compile_stmt(Parse *p, const SqlStmt *s) {
  if (parse_failed(p)) return p->rc;
  if (compile_parse_ndb(p) > 1 && stmt_target(p, s) < 0) return p->rc;
  int auth = auth_stmt(p, s);
  if (auth != AUTH_OK) return p->rc; /* IGNORE: a statement that does nothing */
  switch (s->kind) {
    case SQL_STMT_SELECT:
      return compile_select_stmt(p, s);
    case SQL_STMT_INSERT:
      return compile_dml_insert(p, s);
    case SQL_STMT_UPDATE:
      return compile_dml_update(p, s);
    case SQL_STMT_DELETE:
      return compile_dml_delete(p, s);
    case SQL_STMT_CREATE_TABLE:
      return compile_ddl_create_table(p, s);
    case SQL_STMT_CREATE_INDEX:
      return compile_ddl_create_index(p, s);
    case SQL_STMT_CREATE_VIEW:
      return compile_ddl_create_view(p, s);
    case SQL_STMT_CREATE_TRIGGER:
      return compile_ddl_create_trigger(p, s);
    case SQL_STMT_DROP:
      return compile_drop(p, s);
    case SQL_STMT_ALTER:
      return compile_alter(p, s);
    case SQL_STMT_REINDEX:
      return compile_ddl_reindex(p, s);
    case SQL_STMT_BEGIN:
    case SQL_STMT_COMMIT:
    case SQL_STMT_ROLLBACK:
    case SQL_STMT_SAVEPOINT:
    case SQL_STMT_RELEASE:
      return compile_txn(p, s);
    case SQL_STMT_CREATE_VTAB:
      return compile_ddl_create_vtab(p, s);
    case SQL_STMT_ANALYZE:
      return compile_ddl_analyze(p, s);
    case SQL_STMT_VACUUM:
      return compile_vacuum(p, s);
    case SQL_STMT_ATTACH:
    case SQL_STMT_DETACH:
      return compile_attach(p, s);
    default:
      compile_parse_error(p, "statement not supported");
      return p->rc;
  }
}

/* ---- program shape ---- */

/* Append the epilogue (invariant 2) and hand the program over. */
static int finish_program(Parse *p, int body_start, VmProgram **out) {
  emit(p, OP_Halt, 0, 0, 0);
  emit_resolve(p, p->once_label);
  for (int i = 0; i < compile_parse_ndb(p) && i < 32; i++) {
    if (!((p->rmask | p->wmask) & (1u << i))) continue;
    const Schema *sc = compile_parse_db_schema(p, i);
    uint32_t cookie = sc ? sc->cookie : 0;
    int a = emit(p, OP_Transaction, i, (p->wmask >> i) & 1, (int)cookie);
    vm_builder_set_p5(&p->b, a, VM_TXN_CHECK_COOKIE);
  }
  for (int i = 0; i < p->nconst_ops; i++) {
    int a = emit(p, OP_Noop, 0, 0, 0);
    if (a >= 0) p->b.prog->ops[a] = p->const_ops[i];
  }
  emit(p, OP_Goto, 0, body_start, 0);
  if (p->b.rc) {
    int rc = p->b.rc; /* vm_builder_abort clears the builder, rc included */
    vm_builder_abort(&p->b);
    return rc;
  }
  return vm_builder_finish(&p->b, out);
}

static char *out_strdup(CompiledStmt *out, const char *z) {
  if (!z) return NULL;
  return util_arena_strndup(&out->arena, z, strlen(z));
}

static int fill_pragma(CompiledStmt *out, const SqlStmt *s) {
  const SqlPragma *pr = &s->u.pragma;
  PragmaReq *q = &out->pragma;
  q->call = pr->call;
  if (pr->name.schema && !(q->schema = out_strdup(out, pr->name.schema))) return SHALE_NOMEM;
  if (!(q->name = out_strdup(out, pr->name.name))) return SHALE_NOMEM;
  const SqlExpr *v = pr->value;
  if (v) {
    const char *z = NULL;
    char *neg = NULL;
    int minus = 0;
    while (v->op == SQL_E_UNARY && (v->sub == TK_MINUS || v->sub == TK_PLUS)) {
      if (v->sub == TK_MINUS) minus = !minus;
      v = v->a;
    }
    if (v->op == SQL_E_STRING || v->op == SQL_E_ID || v->op == SQL_E_INTEGER ||
        v->op == SQL_E_FLOAT || v->op == SQL_E_BLOB) {
      z = v->z;
    } else if (v->op == SQL_E_NULL) {
      z = "null";
    } else if (v->z) {
      z = v->z;
    }
    if (z && minus) {
      size_t n = strlen(z);
      neg = util_arena_alloc(&out->arena, n + 2);
      if (!neg) return SHALE_NOMEM;
      neg[0] = '-';
      memcpy(neg + 1, z, n + 1);
      q->value = neg;
    } else if (z) {
      if (!(q->value = out_strdup(out, z))) return SHALE_NOMEM;
    }
  }
  return SHALE_OK;
}

static int fill_out(Parse *p, CompiledStmt *out, const SqlStmt *s) {
  out->nvar = s->nvar;
  if (s->nvar > 0) {
    out->var_names = util_arena_zalloc(&out->arena, sizeof(char *) * (size_t)s->nvar);
    if (!out->var_names) return SHALE_NOMEM;
    for (int i = 0; i < s->nvar_names; i++) {
      int k = s->var_names[i].num;
      if (k < 1 || k > s->nvar) continue;
      if (!(out->var_names[k - 1] = out_strdup(out, s->var_names[i].name))) return SHALE_NOMEM;
    }
  }
  if (p->ncol > 0) {
    out->cols = util_arena_zalloc(&out->arena, sizeof(ResultCol) * (size_t)p->ncol);
    if (!out->cols) return SHALE_NOMEM;
    for (int i = 0; i < p->ncol; i++) {
      const ResultCol *c = &p->cols[i];
      ResultCol *d = &out->cols[i];
      if ((c->name && !(d->name = out_strdup(out, c->name))) ||
          (c->decltype && !(d->decltype = out_strdup(out, c->decltype))) ||
          (c->table && !(d->table = out_strdup(out, c->table))) ||
          (c->origin && !(d->origin = out_strdup(out, c->origin))) ||
          (c->db && !(d->db = out_strdup(out, c->db))))
        return SHALE_NOMEM;
    }
    out->ncol = p->ncol;
  }
  if (p->neqp_trig > 0) compile_trigger_eqp_flush(p);
  if (p->neqp > 0) {
    out->eqp = util_arena_zalloc(&out->arena, sizeof(EqpRow) * (size_t)p->neqp);
    if (!out->eqp) return SHALE_NOMEM;
    for (int i = 0; i < p->neqp; i++) {
      out->eqp[i].id = p->eqp[i].id;
      out->eqp[i].parent = p->eqp[i].parent;
      if (!(out->eqp[i].detail = out_strdup(out, p->eqp[i].detail))) return SHALE_NOMEM;
    }
    out->neqp = p->neqp;
  }
  return SHALE_OK;
}

/* Parameter limits below the parser's fixed maximum. */
static int check_vars(Parse *p, const SqlStmt *s) {
  int max = p->env->max_vars > 0 ? p->env->max_vars : 32766;
  for (int i = 0; i < s->nvar_names; i++) {
    const char *n = s->var_names[i].name;
    if (n && n[0] == '?' && s->var_names[i].num > max) {
      compile_parse_error(p, "variable number must be between ?1 and ?%d", max);
      return p->rc;
    }
  }
  if (s->nvar > max) compile_parse_error(p, "too many SQL variables");
  return p->rc;
}

/* The DDL statements for which SQLite opens a statement journal inside a
 * transaction (so the virtual tables in it see xSavepoint/xRelease): all
 * that write the schema but CREATE/DROP TRIGGER and DROP VIEW (SQLite
 * begins their write with no statement, and a view has no tree to drop), and
 * PRAGMA. A statement with nothing to do opens no transaction and so no
 * savepoint (the VM opens it at the write Transaction op). */
static int ddl_stmt_sp(const SqlStmt *s) {
  switch (s->kind) {
    case SQL_STMT_CREATE_TABLE:
    case SQL_STMT_CREATE_INDEX:
    case SQL_STMT_CREATE_VIEW:
    case SQL_STMT_CREATE_VTAB:
    case SQL_STMT_ALTER:
    case SQL_STMT_ANALYZE:
    case SQL_STMT_REINDEX:
      return 1;
    case SQL_STMT_DROP:
      return s->u.drop.object == TK_TABLE || s->u.drop.object == TK_INDEX;
    default:
      return 0;
  }
}

/* SQLite's "may abort" rule for a writing statement: the program (with its
 * trigger sub-programs) calls a function, halts with an error under ABORT
 * (constraint, RAISE(ABORT)) or drops a tree. Only then, and when it may
 * write several rows, does a failed run inside a transaction undo its own
 * changes; otherwise the rows written before the error stay (SQLite opens
 * no statement journal for it). */
static int program_may_abort(const VmProgram *prog) {
  for (int i = 0; i < prog->nop; i++) {
    const VmOp *op = &prog->ops[i];
    switch (op->op) {
      case OP_Function:
      case OP_Destroy:
      case OP_VUpdate: /* xUpdate may fail after writing (SQLite's sqlite3MayAbort) */
        return 1;
      case OP_FkCounter: /* an immediate FK violation fails the statement at its end */
        if (op->p1 == 0 && op->p2 > 0) return 1;
        break;
      case OP_Halt:
      case OP_HaltIfNull:
        if ((op->p1 != SHALE_OK || op->op == OP_HaltIfNull) && op->p2 == VM_OE_ABORT) return 1;
        break;
      case OP_Program:
        if (op->p4type == P4_PROGRAM && program_may_abort(op->p4.sub)) return 1;
        break;
      default:
        break;
    }
  }
  return 0;
}

int compile_sql(const CompileEnv *env, const char *sql, int nbytes, CompiledStmt *out,
                const char **tail, char **errmsg) {
  memset(out, 0, sizeof *out);
  out->kind = -1;
  util_arena_init(&out->arena, 0);
  if (errmsg) *errmsg = NULL;
  if (nbytes < 0) nbytes = (int)strlen(sql);
  Parse p;
  memset(&p, 0, sizeof p);
  p.env = env;
  p.schema = env->schema;
  p.sql = sql;
  /* the parse tree and the compile's scratch die with this call: their
   * first chunk is on the stack (a one-table statement needs about 4 KB) */
  uint64_t first_chunk[1024];
  util_arena_init_buf(&p.arena, 0, first_chunk, sizeof first_chunk);
  SqlStmt *s = NULL;
  const char *end = NULL;
  char *perr = NULL;
  int rc = sql_parse_limited(&p.arena, sql, nbytes, &s, &end, &perr, env->max_expr_depth);
  if (tail) *tail = end ? end : sql + nbytes;
  SqlStmt *hdr = NULL;
  if (rc == SHALE_ERROR && sql_parse_trigger_header(&p.arena, sql, nbytes, &hdr) &&
      ((compile_parse_ndb(&p) > 1 && stmt_target(&p, hdr) < 0) ||
       compile_ddl_trigger_header_error(&p, hdr))) {
    /* SQLite stops at the header's error before it reads the body */
    shale_free(perr);
    perr = p.errmsg;
    rc = p.rc;
  }
  if (rc) {
    if (errmsg)
      *errmsg = perr;
    else
      shale_free(perr);
    util_arena_free(&p.arena);
    if (tail) *tail = sql + nbytes;
    return rc;
  }
  if (!s) {
    util_arena_free(&p.arena);
    return SHALE_OK;
  }
  p.stmt = s;
  p.is_explain = s->explain;
  out->kind = s->kind;
  out->explain = s->explain;
  if (check_vars(&p, s)) goto fail;
  if (s->kind == SQL_STMT_PRAGMA) {
    rc = fill_pragma(out, s);
    if (!rc) rc = fill_out(&p, out, s);
    if (rc) {
      compile_parse_nomem(&p);
      goto fail;
    }
    if (!util_stricmp(out->pragma.name, "foreign_key_check") &&
        (!out->pragma.schema || !util_stricmp(out->pragma.schema, "main")) &&
        compile_fk_check_pragma_prepare(&p, out->pragma.value)) /* SQLite's prepare-time errors */
      goto fail;
    if (pragma_prepare_checks(&p, &out->pragma)) goto fail;
    if (env->auth) {
      const PragmaReq *q = &out->pragma;
      int qdb = q->schema ? compile_parse_find_db(&p, q->schema) : -1;
      const char *zdb = qdb >= 0 ? compile_parse_db_name(&p, qdb) : q->schema;
      int a = compile_parse_auth(&p, AUTH_PRAGMA, q->name, q->value, zdb);
      if (a == AUTH_DENY) goto fail;
      if (a == AUTH_IGNORE) out->pragma.ignored = 1;
    }
    util_arena_free(&p.arena);
    return SHALE_OK;
  }
  out->is_txn_ctl = s->kind == SQL_STMT_BEGIN || s->kind == SQL_STMT_COMMIT ||
                    s->kind == SQL_STMT_ROLLBACK || s->kind == SQL_STMT_SAVEPOINT ||
                    s->kind == SQL_STMT_RELEASE;
  {
    /* The program's SQL text: the statement as given, up to the tail. */
    int n = (int)((end ? end : sql + nbytes) - sql);
    if (vm_builder_init_reuse(&p.b, sql, n, env->prog_spare)) {
      compile_parse_nomem(&p);
      goto fail;
    }
  }
  p.once_label = emit_label(&p);
  p.init_addr = emit(&p, OP_Init, 0, p.once_label, 0);
  int body_start = emit_addr(&p);
  compile_stmt(&p, s);
  if (parse_failed(&p)) goto fail;
  if (p.b.rc) {
    compile_parse_nomem(&p);
    goto fail;
  }
  rc = finish_program(&p, body_start, &out->prog);
  if (rc) {
    p.rc = rc;
    if (rc != SHALE_NOMEM && !p.errmsg) p.errmsg = util_strdup("internal error");
    goto fail_noabort;
  }
  if (out->prog->nvar < s->nvar) out->prog->nvar = s->nvar;
  /* SQLite: BEGIN IMMEDIATE/EXCLUSIVE, ANALYZE and VACUUM are not read-only */
  out->readonly = !p.need_write && !p.schema_changed && s->kind != SQL_STMT_ANALYZE &&
                  s->kind != SQL_STMT_VACUUM &&
                  !(s->kind == SQL_STMT_BEGIN &&
                    (s->u.begin.mode == TK_IMMEDIATE || s->u.begin.mode == TK_EXCLUSIVE));
  out->uses_vtab = p.uses_vtab;
  out->db_rmask = p.rmask | p.wmask;
  out->db_wmask = p.wmask;
  if (s->kind == SQL_STMT_BEGIN &&
      (s->u.begin.mode == TK_IMMEDIATE || s->u.begin.mode == TK_EXCLUSIVE))
    out->db_rmask |= (compile_parse_ndb(&p) >= 32 ? ~0u : (1u << compile_parse_ndb(&p)) - 1) & ~2u;
  out->stmt_journal = 1;
  if (s->kind == SQL_STMT_INSERT || s->kind == SQL_STMT_UPDATE || s->kind == SQL_STMT_DELETE) {
    out->stmt_journal = p.multi_write && program_may_abort(out->prog);
    /* foreign-key action programs (owned by the program, called by
     * reference) count too */
    for (int i = 0; i < out->prog->nsub && !out->stmt_journal; i++)
      if (p.multi_write && program_may_abort(out->prog->subs[i])) out->stmt_journal = 1;
    out->vtab_stmt_sp = p.vtab_sp ? p.vtab_sp == 2 : out->stmt_journal;
  } else {
    out->vtab_stmt_sp = ddl_stmt_sp(s);
  }
  if (fill_out(&p, out, s)) {
    compile_parse_nomem(&p);
    goto fail_noabort;
  }
  util_arena_free(&p.arena);
  return SHALE_OK;

fail:
  if (p.b.prog) vm_builder_abort(&p.b);
fail_noabort:
  rc = p.rc ? p.rc : SHALE_ERROR;
  if (errmsg)
    *errmsg = p.errmsg;
  else
    shale_free(p.errmsg);
  util_arena_free(&p.arena);
  compile_stmt_free(out);
  if (tail) *tail = sql + nbytes;
  return rc;
}

void compile_stmt_free(CompiledStmt *c) { compile_stmt_free_keep(c, NULL); }

void compile_stmt_free_keep(CompiledStmt *c, VmSpare *spare) {
  if (!c) return;
  if (c->prog) vm_program_free_keep(c->prog, spare);
  util_arena_free(&c->arena);
  memset(c, 0, sizeof *c);
  c->kind = -1;
  util_arena_init(&c->arena, 0);
}
