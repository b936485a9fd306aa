/*
 * api.c -- the native C API (include/shale.h): connections, prepared
 * statements, binding, result columns, errors, transactions as the VM's
 * connection hooks, schema reloads and the statement cache.
 *
 * Owns: struct shale and struct shale_stmt (api_int.h); every statement of a
 * connection is on db->stmts until finalized.
 *
 * Invariants (see also api_int.h):
 *  1. Every entry point that takes a connection leaves db->err (code and message)
 *     describing its outcome, as SQLite: prepare and step set them; reset and
 *     finalize restore the statement's last error (or OK after a success).
 *  2. shale_step returns primary codes unless extended result codes are on
 *     (SHALE_OPEN_EXRESCODE / shale_extended_result_codes).
 *  3. A Vm borrows its statement's program: the Vm is freed before the
 *     program whenever a statement is recompiled or finalized.
 *  4. SHALE_SCHEMA from the VM (the file's schema cookie moved) reloads the
 *     schema, recompiles the statement from its text and runs it again, up to
 *     API_MAX_SCHEMA_RETRY times, before any row was returned.
 *  5. Bound TEXT/BLOB bytes live in st->varbuf (st->vars own nothing); they
 *     change only by a bind, which is refused while the statement runs
 *     (clear_bindings only makes the values NULL), so a run reads them
 *     through the Vm's views (vm_bind_view) uncopied.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../compile/schema_load.h"
#include "../ext/ext.h"
#include "api_int.h"

/* ---------------------------------------------------------------- errors */

static void set_error_msg(shale *db, int rc, char *msg) {
  shale_free(db->err.msg);
  db->err.msg = msg;
  db->err.code = rc;
  shale_free(db->err.sql); /* the error offset belongs to the error */
  db->err.sql = NULL;
}

void api_error(shale *db, int rc, const char *fmt, ...) {
  char *msg = NULL;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    msg = util_vmprintf(fmt, ap);
    va_end(ap);
  }
  set_error_msg(db, rc, msg);
}

static void clear_error(shale *db) { set_error_msg(db, SHALE_OK, NULL); }

/* A step's SHALE_ROW or SHALE_DONE is the connection's result code until
 * the next call sets one, as SQLite's (errcode 100 / 101, "another row
 * available", "no more rows available"); reset and finalize clear it. */
static inline void step_code(shale *db, int rc) {
  if (__builtin_expect(db->err.code != rc || db->err.msg != NULL, 0)) set_error_msg(db, rc, NULL);
}

static int api_rc(shale *db, int rc) { return rc & db->err.mask; }

/* -------------------------------------------------------------- rowsets */

int api_rows_add(ApiRows *r, const ShValue *vals) {
  if (r->nrow == r->cap) {
    int cap = r->cap ? r->cap * 2 : 16;
    ShValue *v = shale_realloc(r->v, sizeof *v * (size_t)cap * (size_t)(r->ncol ? r->ncol : 1));
    if (!v) return SHALE_NOMEM;
    r->v = v;
    r->cap = cap;
  }
  ShValue *dst = &r->v[(size_t)r->nrow * (size_t)r->ncol];
  for (int i = 0; i < r->ncol; i++) {
    dst[i] = vals[i];
    if ((dst[i].type == SHALE_TEXT || dst[i].type == SHALE_BLOB) && !(dst[i].flags & VAL_OWNED)) {
      if (record_value_make_owned(&dst[i]) != SHALE_OK) {
        for (int j = 0; j < i; j++) value_clear(&dst[j]);
        return SHALE_NOMEM;
      }
    }
  }
  r->nrow++;
  return SHALE_OK;
}

static void rows_clear(ApiRows *r) {
  for (size_t i = 0; i < (size_t)r->nrow * (size_t)r->ncol; i++) value_clear(&r->v[i]);
  shale_free(r->v);
  r->v = NULL;
  r->nrow = r->cap = 0;
}

/* -------------------------------------------------------------- schemas */

static void schema_unref(ApiSchema *s) {
  if (s && --s->refs == 0) {
    schema_free(s->s);
    shale_free(s);
  }
}

static void xrefs_drop(ApiXRefs *x) {
  for (int i = 0; i < x->n; i++) {
    schema_unref(x->s[i]);
    x->s[i] = NULL;
  }
  x->n = 0;
}

static void xrefs_take(shale *db, ApiXRefs *x) {
  xrefs_drop(x);
  int n = db->ndb < API_MAX_DB ? db->ndb : API_MAX_DB;
  for (int i = 1; i < n; i++)
    if ((x->s[i] = db->dbx[i].schema) != NULL) x->s[i]->refs++;
  x->n = n;
  x->gen = db->xgen;
}

/* What an entry holds, freed (the entry itself is left). */
static void cache_entry_clear(shale *db, ApiCached *c) {
  compile_stmt_free_keep(&c->cs, &db->prog_spare);
  xrefs_drop(&c->x);
  schema_unref(c->schema);
  shale_free(c->key);
}

static void cache_entry_free(shale *db, ApiCached *c) {
  cache_entry_clear(db, c);
  shale_free(c);
}

static void cache_clear(shale *db) {
  while (db->cache) {
    ApiCached *c = db->cache;
    db->cache = c->next;
    cache_entry_free(db, c);
  }
  db->cache_last = NULL;
  db->ncache = 0;
}

/* Take entry c out of the cache's list. */
static void cache_unlink(shale *db, ApiCached *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    db->cache = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    db->cache_last = c->prev;
  db->ncache--;
}

void api_cache_clear(shale *db) { cache_clear(db); }

void api_expire(shale *db) {
  for (shale_stmt *s = db->stmts; s; s = s->next) s->settings = -1; /* never api_settings() */
  cache_clear(db);
}

/* Load the schema from the file (within the open transaction, if any). */
static int schema_reload(shale *db) {
  Schema *s = NULL;
  char *msg = NULL;
  SchemaFuncs sf = {&db->funcs, !(db->set.pflags & API_PF_TRUSTED_SCHEMA)};
  int rc = compile_schema_load_fn(db->dbx[0].bt, 0, &sf, &s, &msg);
  if ((rc == SHALE_CORRUPT || rc == SHALE_NOTADB) && db->cfg.reset_database) {
    /* db_config RESET_DATABASE: a schema that cannot be read is taken as
     * empty, so that the VACUUM which resets the database can run */
    shale_free(msg);
    msg = NULL;
    rc = (s = schema_new()) != NULL ? SHALE_OK : SHALE_NOMEM;
    if (s && btree_get_meta(db->dbx[0].bt, BTREE_META_SCHEMA_COOKIE, &s->cookie) != SHALE_OK)
      s->cookie = 0;
  }
  if (rc != SHALE_OK) {
    if (!msg && rc != SHALE_NOMEM) {
      const char *m = btree_errmsg(db->dbx[0].bt);
      msg = util_strdup(m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
    }
    set_error_msg(db, rc, msg);
    return rc;
  }
  shale_free(msg);
  ApiSchema *as = shale_malloc(sizeof *as);
  if (!as) {
    schema_free(s);
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  as->s = s;
  as->refs = 1;
  if (db->dbx[0]
          .schema) { /* the planner's per-connection hints outlive a reload (PRAGMA optimize) */
    int pos = 0;
    Table *t;
    while ((t = schema_map_next(&db->dbx[0].schema->s->tables, &pos)) != NULL) {
      Table *nt = t->stats_used ? schema_find_table(s, t->name) : NULL;
      if (nt) nt->stats_used = 1;
    }
  }
  schema_unref(db->dbx[0].schema);
  db->dbx[0].schema = as;
  db->text_enc = (uint8_t)s->text_enc;
  db->count.schema_loads++;
  cache_clear(db);
  return SHALE_OK;
}

static int schema_ensure(shale *db) {
  if (db->dbx[0].schema) return SHALE_OK;
  return schema_reload(db);
}

/* Replace database i's (i >= 1) schema by s (NULL: a new empty one). */
static int schema_set_db(shale *db, int i, Schema *s) {
  if (!s && !(s = schema_new())) return SHALE_NOMEM;
  ApiSchema *as = shale_malloc(sizeof *as);
  if (!as) {
    schema_free(s);
    return SHALE_NOMEM;
  }
  as->s = s;
  as->refs = 1;
  schema_unref(db->dbx[i].schema);
  db->dbx[i].schema = as;
  db->xgen++;
  cache_clear(db);
  return SHALE_OK;
}

/* Load database i's (i >= 1) schema from its file (an empty one for a
 * temp database not opened yet). */
static int schema_reload_db(shale *db, int i) {
  Btree *bt = db->dbx[i].bt;
  if (!bt) {
    int rc = db->dbx[i].schema ? SHALE_OK : schema_set_db(db, i, NULL);
    if (rc) api_error(db, rc, NULL);
    return rc;
  }
  Schema *s = NULL;
  char *msg = NULL;
  SchemaFuncs sf = {&db->funcs, !(db->set.pflags & API_PF_TRUSTED_SCHEMA)};
  int rc = compile_schema_load_fn(bt, i == 1, &sf, &s, &msg);
  if (rc == SHALE_OK) rc = schema_set_db(db, i, s);
  if (rc != SHALE_OK) {
    if (!msg && rc != SHALE_NOMEM) {
      const char *m = btree_errmsg(bt);
      msg = util_strdup(m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
    }
    set_error_msg(db, rc, msg);
    return rc;
  }
  shale_free(msg);
  return SHALE_OK;
}

/* Reload every database's schema (after DDL, a rollback of DDL, SHALE_SCHEMA). */
static int schema_reload_all(shale *db) {
  int rc = schema_reload(db);
  for (int i = 1; i < db->ndb && rc == SHALE_OK; i++)
    if (db->dbx[i].bt || !db->dbx[i].schema) rc = schema_reload_db(db, i);
  return rc;
}

/* Reload the schemas of databases 1.. whose file's cookie moved (another
 * connection changed an attached database). */
static int schema_check_others(shale *db) {
  for (int i = 2; i < db->ndb; i++) {
    Btree *bt = db->dbx[i].bt;
    if (!bt) continue;
    int began = btree_txn_state(bt) == PAGER_TXN_NONE;
    int rc = began ? btree_begin(bt, BTREE_TXN_READ) : SHALE_OK;
    uint32_t cookie = 0;
    if (rc == SHALE_OK) rc = btree_get_meta(bt, BTREE_META_SCHEMA_COOKIE, &cookie);
    if (rc == SHALE_OK && (!db->dbx[i].schema || db->dbx[i].schema->s->cookie != cookie))
      rc = schema_reload_db(db, i);
    if (began && btree_txn_state(bt) != PAGER_TXN_NONE) btree_commit(bt);
    if (rc) return rc;
  }
  return SHALE_OK;
}

int api_db_index(shale *db, const char *name) {
  if (!name) return 0;
  /* "main" names database 0 even after db_config MAINDBNAME renamed it */
  if (!util_stricmp(name, "main") || (db->cfg.main_name && !util_stricmp(name, db->cfg.main_name)))
    return 0;
  for (int i = 1; i < db->ndb; i++)
    if (!util_stricmp(db->dbx[i].name, name)) return i;
  return -1;
}

int api_db_of_bt(const shale *db, const Btree *bt) {
  for (int i = 0; i < db->ndb; i++)
    if (api_db_bt(db, i) == bt) return i;
  return -1;
}

const char *api_db_name(shale *db, int i) {
  if (i == 0) return db->cfg.main_name ? db->cfg.main_name : "main";
  return db->dbx[i].name;
}

int api_is_main(shale *db, const char *name) { return !name || api_db_index(db, name) == 0; }

const char *api_db_file(shale *db, int i) {
  Btree *b = api_db_bt(db, i);
  if (!b) return NULL;
  Pager *pg = btree_pager(b);
  const char *f = pager_is_memory(pg) || db->dbx[i].memory ? "" : pager_filename(pg);
  return f ? f : "";
}

int api_temp_open(shale *db) {
  if (db->dbx[1].bt) return SHALE_OK;
  int rc = btree_open(NULL, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &db->dbx[1].bt);
  if (rc != SHALE_OK) {
    db->dbx[1].bt = NULL;
    api_error(db, rc, "unable to open a temporary database file for storing temporary tables");
    return rc;
  }
  pager_set_busy_handler(btree_pager(db->dbx[1].bt), NULL, NULL);
  btree_set_new_encoding(db->dbx[1].bt, db->text_enc); /* temp text is main's encoding */
  api_autovac_install(db, db->dbx[1].bt);
  return SHALE_OK;
}

Schema *api_db_schema(shale *db, int i) {
  if (i == 0) return schema_ensure(db) == SHALE_OK ? db->dbx[0].schema->s : NULL;
  if (i < 0 || i >= db->ndb) return NULL;
  if (!db->dbx[i].schema && schema_reload_db(db, i) != SHALE_OK) return NULL;
  return db->dbx[i].schema->s;
}

int api_any_txn(const shale *db, int level) {
  for (int i = 0; i < db->ndb; i++) {
    Btree *b = api_db_bt(db, i);
    if (b && btree_txn_state(b) >= level) return 1;
  }
  return 0;
}

int api_txn_begin(shale *db, int level, int *began) {
  *began = 0;
  int st = btree_txn_state(db->dbx[0].bt);
  int want = level >= BTREE_TXN_WRITE ? PAGER_TXN_WRITE : PAGER_TXN_READ;
  if (st >= want) return SHALE_OK;
  int rc = btree_begin(db->dbx[0].bt, level);
  if (rc != SHALE_OK) {
    const char *m = btree_errmsg(db->dbx[0].bt);
    api_error(db, rc, "%s", m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
    return rc;
  }
  if (st == PAGER_TXN_NONE && db->txn.autocommit) {
    if (db->txn.nactive == 0)
      *began = 1;
    else
      db->txn.api_txn = 1; /* ended when the last active statement stops */
  }
  return SHALE_OK;
}

int api_txn_end(shale *db, int began, int rc) {
  if (!began) return rc;
  if (rc == SHALE_OK) {
    char *msg = NULL;
    int r2 = api_commit(db, &msg);
    if (r2 != SHALE_OK) {
      if (btree_txn_state(db->dbx[0].bt) != PAGER_TXN_NONE) api_rollback(db, 0);
      set_error_msg(db, r2, msg);
      return r2;
    }
    shale_free(msg);
    return SHALE_OK;
  }
  api_rollback(db, 0);
  return rc;
}

int api_schema_current(shale *db) {
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  uint32_t cookie = 0;
  rc = btree_get_meta(db->dbx[0].bt, BTREE_META_SCHEMA_COOKIE, &cookie);
  if (rc == SHALE_OK && (!db->dbx[0].schema || db->dbx[0].schema->s->cookie != cookie))
    rc = schema_reload(db);
  if (rc && rc != db->err.code) api_error(db, rc, "%s", shale_errstr(rc));
  if (began) {
    int r2 = btree_commit(db->dbx[0].bt);
    if (rc == SHALE_OK) rc = r2;
  }
  if (rc == SHALE_OK) rc = schema_check_others(db);
  return rc;
}

static void db_free(shale *db);

void api_schema_reset(shale *db) {
  cache_clear(db);
  schema_unref(db->dbx[0].schema);
  db->dbx[0].schema = NULL;
}

void api_schema_reset_db(shale *db, int i) {
  if (i <= 0 || i >= db->ndb) {
    api_schema_reset(db);
    return;
  }
  schema_unref(db->dbx[i].schema);
  db->dbx[i].schema = NULL; /* reloaded at its next use */
  db->xgen++;
  cache_clear(db);
}

/* ---------------------------------------------------------- ATTACH/DETACH */

void shale_attach_resolver(shale *db,
                           int (*fn)(void *arg, const char *file, shale_attach_target *t),
                           void *arg) {
  if (!api_db_enter(db)) return;
  db->attach_fn = fn;
  db->attach_arg = arg;
  api_leave(db);
}

void *shale_db_attach_cookie(shale *db, const char *zdb) {
  if (!api_db_enter(db)) return NULL;
  int i = zdb ? api_db_index(db, zdb) : -1;
  void *c = i >= 2 ? db->dbx[i].cookie : NULL;
  api_leave(db);
  return c;
}

/* A resolver's target, freed (its cookie released unless kept). */
static void target_free(shale_attach_target *t, int keep_cookie) {
  shale_free(t->path);
  shale_free(t->vfs);
  shale_free(t->errmsg);
  if (!keep_cookie && t->release) t->release(t->cookie);
}

static int attach_db(shale *db, const char *file, const char *name) {
  if (!file) file = "";
  if (!name) name = "";
  int max = db->set.limits[SHALE_LIMIT_ATTACHED];
  if (db->ndb >= 2 + max || db->ndb >= API_MAX_DB) {
    api_error(db, SHALE_ERROR, "too many attached databases - max %d", max);
    return SHALE_ERROR;
  }
  if (api_db_index(db, name) >= 0) {
    api_error(db, SHALE_ERROR, "database %s is already in use", name);
    return SHALE_ERROR;
  }
  int ro = pager_readonly(btree_pager(db->dbx[0].bt));
  shale_attach_target t = {0};
  t.flags = ro ? SHALE_OPEN_READONLY : (SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE);
  if (db->attach_fn) {
    int rc = db->attach_fn(db->attach_arg, file, &t);
    if (rc != SHALE_OK) { /* an error of the ATTACH function: SHALE_ERROR, as SQLite's */
      rc = rc == SHALE_NOMEM ? rc : SHALE_ERROR;
      api_error(db, rc, "%s", t.errmsg ? t.errmsg : shale_errstr(rc));
      target_free(&t, 0);
      return rc;
    }
  }
  const char *path = t.path ? t.path : file;
  int memflag = (t.flags & SHALE_OPEN_MEMORY) != 0;
  int mem = !path[0] || !strcmp(path, ":memory:") || (memflag && !t.vfs);
  int oflags = t.flags & (SHALE_OPEN_READONLY | SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE |
                          SHALE_OPEN_NOLOCK | SHALE_OPEN_IMMUTABLE);
  Btree *bt = NULL;
  /* a file opens through the main database's VFS, as SQLite's ATTACH,
   * unless the resolver named one */
  Pager *mp = btree_pager(db->dbx[0].bt);
  OsVfs *vfs = mem || (pager_is_memory(mp) && !t.vfs) ? NULL : pager_vfs(mp);
  if (!mem && t.vfs && !(vfs = os_vfs_find(t.vfs))) {
    api_error(db, SHALE_ERROR, "no such vfs: %s", t.vfs);
    target_free(&t, 0);
    return SHALE_ERROR;
  }
  /* a memory database of a named VFS is shared by name (the drop-in
   * library's shared cache): once per connection, as SQLite's */
  for (int k = 0; memflag && vfs && k < db->ndb; k++) {
    Btree *b = db->dbx[k].bt;
    if (b && db->dbx[k].memory && pager_vfs(btree_pager(b)) == vfs &&
        !strcmp(pager_filename(btree_pager(b)), path)) {
      api_error(db, SHALE_ERROR, "database is already attached");
      target_free(&t, 0);
      return SHALE_ERROR;
    }
  }
  int rc = btree_open(vfs, mem ? NULL : path, oflags, &bt);
  if (rc != SHALE_OK) {
    rc = rc == SHALE_NOMEM ? rc : SHALE_CANTOPEN;
    api_error(db, rc, "unable to open database: %s", file);
    target_free(&t, 0);
    return rc;
  }
  pager_set_busy_handler(btree_pager(bt), NULL, NULL);
  api_autovac_install(db, bt);
  ApiDb *d = &db->dbx[db->ndb];
  memset(d, 0, sizeof *d);
  d->bt = bt;
  d->name = util_strdup(name);
  d->filename = util_strdup(mem || memflag ? "" : path);
  d->memory = (uint8_t)memflag;
  d->cookie = t.cookie;
  d->release = t.release;
  target_free(&t, 1);
  if (!d->name || !d->filename) {
    rc = SHALE_NOMEM;
    api_error(db, rc, NULL);
  } else {
    Schema *s = NULL;
    char *msg = NULL;
    SchemaFuncs sf = {&db->funcs, !(db->set.pflags & API_PF_TRUSTED_SCHEMA)};
    btree_set_new_encoding(bt, db->text_enc); /* an empty file takes main's */
    rc = compile_schema_load_fn(bt, 0, &sf, &s, &msg);
    if (rc == SHALE_OK && s->text_enc != db->text_enc) {
      schema_free(s);
      rc = SHALE_ERROR;
      api_error(db, rc, "attached databases must use the same text encoding as main database");
    } else if (rc == SHALE_OK) {
      db->ndb++;
      rc = schema_set_db(db, db->ndb - 1, s);
      if (rc) db->ndb--;
    } else {
      api_error(db, rc, "%s", msg ? msg : shale_errstr(rc));
    }
    shale_free(msg);
  }
  if (rc != SHALE_OK) {
    btree_close(bt);
    schema_unref(d->schema);
    shale_free(d->name);
    shale_free(d->filename);
    if (d->release) d->release(d->cookie);
    memset(d, 0, sizeof *d);
    return rc;
  }
  db->xgen++;
  cache_clear(db);
  return SHALE_OK;
}

static int detach_db(shale *db, const char *name) {
  if (!name) name = "";
  int i = api_db_index(db, name);
  if (i < 0) {
    api_error(db, SHALE_ERROR, "no such database: %s", name);
    return SHALE_ERROR;
  }
  if (i < 2) {
    api_error(db, SHALE_ERROR, "cannot detach database %s", name);
    return SHALE_ERROR;
  }
  ApiDb *d = &db->dbx[i];
  if (btree_txn_state(d->bt) != PAGER_TXN_NONE || d->nbackup) {
    api_error(db, SHALE_ERROR, "database %s is locked", name);
    return SHALE_ERROR;
  }
  btree_close(d->bt);
  schema_unref(d->schema);
  shale_free(d->name);
  shale_free(d->filename);
  if (d->release) d->release(d->cookie);
  for (int k = i; k + 1 < db->ndb; k++) db->dbx[k] = db->dbx[k + 1];
  db->ndb--;
  memset(&db->dbx[db->ndb], 0, sizeof db->dbx[0]);
  db->xgen++;
  cache_clear(db);
  return SHALE_OK;
}

static char *value_dup_text(const ShValue *v) {
  if (v->type == SHALE_NULL) return NULL;
  if (v->type == SHALE_TEXT || v->type == SHALE_BLOB) {
    char *z = shale_malloc(v->n + 1);
    if (z) {
      memcpy(z, v->z, v->n);
      z[v->n] = 0;
    }
    return z;
  }
  char buf[64];
  if (v->type == SHALE_INTEGER)
    snprintf(buf, sizeof buf, "%lld", (long long)v->i);
  else
    snprintf(buf, sizeof buf, "%.15g", v->r);
  return util_strdup(buf);
}

/* Run an ATTACH/DETACH statement: its program yields the argument values
 * (one row), then the connection attaches or detaches. */
static int run_attach(shale_stmt *st) {
  shale *db = st->db;
  Vm *vm = NULL;
  int rc = vm_new(st->cs.prog, db->dbx[0].bt, 0, &vm);
  if (rc) return rc;
  vm_set_conn(vm, db, &db->conn_cb);
  vm_set_hooks(vm, &db->hooks);
  for (int i = 1; i <= st->nvar && i <= st->cs.prog->nvar && rc == SHALE_OK; i++)
    rc = vm_bind_value(vm, i, &st->vars[i]);
  char *a = NULL, *b = NULL;
  if (rc == SHALE_OK) {
    rc = vm_step(vm);
    if (rc == SHALE_ROW) {
      a = value_dup_text(vm_column(vm, 0));
      if (vm_column_count(vm) > 1) b = value_dup_text(vm_column(vm, 1));
      rc = SHALE_OK;
    } else {
      const char *m = vm_errmsg(vm);
      api_error(db, rc, "%s", m ? m : shale_errstr(rc));
    }
  }
  vm_free(vm);
  if (rc == SHALE_OK) {
    if (st->cs.kind == SQL_STMT_ATTACH)
      rc = attach_db(db, a, b);
    else
      rc = detach_db(db, a);
  }
  shale_free(a);
  shale_free(b);
  return rc;
}

void api_handle_release(shale *db) {
  db->nhandles--;
  if (db->zombie && !db->stmts && !db->nhandles) db_free(db);
}

long api_cache_hits(shale *db) { return db->count.cache_hits; }
long api_schema_loads(shale *db) { return db->count.schema_loads; }

/* ------------------------------------------------------- connection hooks */

static int64_t cb_last_rowid(void *conn) { return ((shale *)conn)->count.last_rowid; }
static int64_t cb_changes(void *conn) { return ((shale *)conn)->count.changes; }
static int64_t cb_total_changes(void *conn) { return ((shale *)conn)->count.total_changes; }

/* The active statements give up a transaction their Vm began: it now belongs
 * to an explicit transaction or to the API (invariant 2 of api_int.h). */
static int release_vm_txns(shale *db) {
  int any = 0;
  for (shale_stmt *s = db->stmts; s; s = s->next)
    if (s->active && s->vm && vm_release_txn(s->vm)) any = 1;
  return any;
}

static void savepoints_clear(shale *db) {
  db->vtabs.nsavepoint = 0;
  for (int i = 0; i < db->txn.nsp; i++) shale_free(db->txn.sp[i].name);
  db->txn.nsp = 0;
  db->txn.sp_txn = 0;
}

static void txn_ended(shale *db) {
  db->txn.deferred_fk = db->txn.deferred_imm_fk = 0;
  db->txn.autocommit = 1;
  db->txn.api_txn = 0;
  db->set.defer_foreign_keys = 0;
  savepoints_clear(db);
}

/* COMMIT (or RELEASE of the outermost savepoint): as SQLite, other active
 * statements that write make it fail; readers still running defer the
 * B-tree commit to when the last of them stops (the connection is back in
 * autocommit mode at once). */
static int commit_txn(shale *db, char **errmsg) {
  int others = 0;
  if (db->txn.deferred_fk + db->txn.deferred_imm_fk >
      0) { /* as SQLite: the transaction stays open */
    *errmsg = util_strdup("FOREIGN KEY constraint failed");
    return SHALE_CONSTRAINT_FOREIGNKEY;
  }
  for (shale_stmt *s = db->stmts; s; s = s->next) {
    if (!s->active || s->cs.is_txn_ctl) continue;
    if (!s->cs.readonly) {
      *errmsg = util_strdup("cannot commit transaction - SQL statements in progress");
      return SHALE_BUSY;
    }
    others++;
  }
  if (others) {
    /* As SQLite: the changes are committed now; the read transaction stays
     * until the last reader stops. */
    int rc = api_commit_write(db, errmsg);
    if (rc == SHALE_CONSTRAINT_COMMITHOOK) { /* vetoed: rolled back */
      if (db->txn.txn_ddl) db->txn.schema_dirty = 1;
      db->txn.txn_ddl = 0;
      txn_ended(db);
    }
    if (rc != SHALE_OK) return rc;
    db->txn.txn_ddl = 0;
    txn_ended(db);
    db->txn.api_txn = 1;
    return SHALE_OK;
  }
  if (api_any_txn(db, PAGER_TXN_READ)) {
    int rc = api_commit(db, errmsg);
    /* vetoed, or a failed multi-file commit: rolled back */
    if (rc == SHALE_CONSTRAINT_COMMITHOOK || (rc != SHALE_OK && !api_any_txn(db, PAGER_TXN_READ))) {
      if (db->txn.txn_ddl) db->txn.schema_dirty = 1;
      db->txn.txn_ddl = 0;
      txn_ended(db);
    }
    if (rc != SHALE_OK) return rc;
  }
  db->txn.txn_ddl = 0;
  txn_ended(db);
  return SHALE_OK;
}

static int hook_autocommit(void *ctx, int on, int rollback, char **errmsg) {
  shale *db = ctx;
  if (!on) {
    if (!db->txn.autocommit) {
      *errmsg = util_strdup("cannot start a transaction within a transaction");
      return SHALE_ERROR;
    }
    release_vm_txns(db);
    db->txn.autocommit = 0;
    db->txn.api_txn = 0;
    db->txn.sp_txn = 0;
    db->txn.txn_ddl = 0;
    return SHALE_OK;
  }
  if (db->txn.autocommit) {
    *errmsg = util_strdup(rollback ? "cannot rollback - no transaction is active"
                                   : "cannot commit - no transaction is active");
    return SHALE_ERROR;
  }
  if (!rollback) return commit_txn(db, errmsg);
  api_rollback(db, 1);
  /* As SQLite's reset of the schemas after rolling DDL back: the virtual
   * tables disconnect (unless another statement may have cursors on them) */
  if (db->txn.txn_ddl && db->txn.nactive <= 1) vtab_disconnect_db(&db->vtabs, -1);
  if (db->txn.txn_ddl) db->txn.schema_dirty = 1;
  db->txn.txn_ddl = 0;
  txn_ended(db);
  return SHALE_OK;
}

static int hook_savepoint(void *ctx, int op, const char *name, char **errmsg) {
  shale *db = ctx;
  if (!name) name = "";
  if (op == 0) {
    if (db->txn.nsp == db->txn.capsp) {
      int cap = db->txn.capsp ? db->txn.capsp * 2 : 8;
      ApiSavepoint *sp = shale_realloc(db->txn.sp, sizeof *sp * (size_t)cap);
      if (!sp) return SHALE_NOMEM;
      db->txn.sp = sp;
      db->txn.capsp = cap;
    }
    char *z = util_strdup(name);
    if (!z) return SHALE_NOMEM;
    /* the virtual tables in the transaction: xSavepoint (SQLite's
     * numbering), before the B-tree savepoints open, so what a module
     * writes there stays on a ROLLBACK TO (SQLite opens them later) */
    if (!db->txn.autocommit) {
      int rc = vtab_savepoint(&db->vtabs, 0, db->vtabs.nsavepoint, errmsg);
      if (rc != SHALE_OK) {
        shale_free(z);
        return rc;
      }
      db->vtabs.nsavepoint++;
    }
    for (int k = 0; k < db->ndb; k++) {
      Btree *b = api_db_bt(db, k);
      if (!b || btree_txn_state(b) != PAGER_TXN_WRITE) continue;
      int rc = btree_savepoint_open(b, db->txn.nsp + 1);
      if (rc != SHALE_OK) {
        if (!db->txn.autocommit) db->vtabs.nsavepoint--; /* reused by the next one */
        shale_free(z);
        return rc;
      }
    }
    if (db->txn.autocommit) {
      release_vm_txns(db);
      db->txn.autocommit = 0;
      db->txn.api_txn = 0;
      db->txn.sp_txn = 1;
      db->txn.txn_ddl = 0;
    }
    db->txn.sp[db->txn.nsp].deferred_fk = db->txn.deferred_fk;
    db->txn.sp[db->txn.nsp].deferred_imm_fk = db->txn.deferred_imm_fk;
    db->txn.sp[db->txn.nsp++].name = z;
    return SHALE_OK;
  }
  int i = db->txn.nsp - 1;
  while (i >= 0 && util_stricmp(db->txn.sp[i].name, name) != 0) i--;
  if (i < 0) {
    *errmsg = util_mprintf("no such savepoint: %s", name);
    return SHALE_ERROR;
  }
  if (op == 1) { /* RELEASE */
    if (i == 0 && db->txn.sp_txn) return commit_txn(db, errmsg);
    for (int k = 0; k < db->ndb; k++) {
      Btree *b = api_db_bt(db, k);
      if (!b || btree_txn_state(b) != PAGER_TXN_WRITE) continue;
      int rc = btree_savepoint_release(b, i);
      if (rc != SHALE_OK) return rc;
    }
    for (int k = i; k < db->txn.nsp; k++) shale_free(db->txn.sp[k].name);
    db->txn.nsp = i;
    int vi = i - (db->txn.sp_txn ? 1 : 0); /* SQLite's index: the transaction's own not counted */
    db->vtabs.nsavepoint = vi;
    return vtab_savepoint(&db->vtabs, 1, vi, errmsg);
  }
  /* ROLLBACK TO: undo to savepoint i, keep it, drop later ones */
  for (int k = 0; k < db->ndb; k++) {
    Btree *b = api_db_bt(db, k);
    if (!b || btree_txn_state(b) != PAGER_TXN_WRITE) continue;
    int rc = btree_savepoint_rollback(b, i);
    if (rc == SHALE_OK && pager_savepoint_count(btree_pager(b)) > i + 1)
      rc = btree_savepoint_release(b, i + 1);
    if (rc != SHALE_OK) return rc;
  }
  for (int k = i + 1; k < db->txn.nsp; k++) shale_free(db->txn.sp[k].name);
  db->txn.nsp = i + 1;
  db->txn.deferred_fk = db->txn.sp[i].deferred_fk;
  db->txn.deferred_imm_fk = db->txn.sp[i].deferred_imm_fk;
  if (db->txn.txn_ddl) db->txn.schema_dirty = 1;
  /* SQLite resets the schemas here after any schema change of the transaction */
  if (db->txn.txn_ddl && db->txn.nactive <= 1) vtab_schema_reset(&db->vtabs, UINT32_MAX);
  int vi = i - (db->txn.sp_txn ? 1 : 0);
  db->vtabs.nsavepoint = vi + 1;
  return vtab_savepoint(&db->vtabs, 2, vi, errmsg);
}

static int hook_parse_schema(void *ctx, int idb, const char *where, char **errmsg) {
  shale *db = ctx;
  db->txn.schema_dirty = 1;
  return SHALE_OK;
}

static int hook_drop_object(void *ctx, int idb, int kind, const char *name, char **errmsg) {
  shale *db = ctx;
  db->txn.schema_dirty = 1;
  ApiSchema *as = idb >= 0 && idb < db->ndb ? db->dbx[idb].schema : NULL;
  if (!as || !name) return SHALE_OK;
  Schema *s = as->s;
  switch (kind) {
    case 0:
      schema_remove_table(s, name);
      break;
    case 1:
      schema_remove_index(s, name);
      break;
    case 2:
      schema_remove_trigger(s, name);
      break;
    default:
      schema_remove_view(s, name);
      break;
  }
  return SHALE_OK;
}

/* --------------------------------------------------------- open / close */

int shale_open_v2(const char *filename, shale **out, int flags, const char *vfs_name) {
  if (!out) return SHALE_MISUSE;
  *out = NULL;
  shale *db = api_db_alloc(!(flags & SHALE_OPEN_NOMUTEX));
  if (!db) return SHALE_NOMEM;
  db->txn.autocommit = 1;
  db->ndb = 2;
  db->set.sync_level = 2;
  db->set.wal_autocheckpoint = 1000;
  db->set.pflags = API_PF_DEFAULT;
  db->set.cache_spill = 1;
  db->set.journal_size_limit = -1;
  db->set.secure_delete = 1; /* Debian's build: SQLITE_SECURE_DELETE */
  db->hooks.query_only = &db->set.query_only;
  db->hooks.text_enc = &db->text_enc;
  db->text_enc = RECORD_ENC_UTF8;
  db->err.mask = (flags & SHALE_OPEN_EXRESCODE) ? ~0 : 0xff;
  db->open_flags = flags;
  db->conn_cb.last_insert_rowid = cb_last_rowid;
  db->conn_cb.changes = cb_changes;
  db->conn_cb.total_changes = cb_total_changes;
  db->conn_cb.load_extension = api_loadext_sql;
  db->hooks.ctx = db;
  db->hooks.autocommit = hook_autocommit;
  db->hooks.savepoint = hook_savepoint;
  db->hooks.parse_schema = hook_parse_schema;
  db->hooks.drop_object = hook_drop_object;
  db->hooks.vacuum = api_vacuum_hook;
  db->hooks.vtabs = &db->vtabs;
  db->hooks.deferred_fk = &db->txn.deferred_fk;
  db->hooks.deferred_imm_fk = &db->txn.deferred_imm_fk;
  db->hooks.defer_fks = &db->set.defer_foreign_keys;
  api_hooks_init(db);
  *out = db;
  if (!filename) filename = "";
  /* MEMORY with a VFS name: a file of that VFS that reports itself as a
   * memory database (the drop-in library's shared-cache memory databases) */
  int memflag = (flags & SHALE_OPEN_MEMORY) != 0;
  int mem = !filename[0] || !strcmp(filename, ":memory:") || (memflag && !vfs_name);
  db->dbx[0].memory = (uint8_t)memflag;
  db->dbx[0].filename = util_strdup(filename);
  db->dbx[1].name = util_strdup("temp");
  db->dbx[1].filename = util_strdup("");
  if (!db->dbx[0].filename || !db->dbx[1].name || !db->dbx[1].filename) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  if (func_registry_init(&db->funcs) != SHALE_OK) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  db->funcs_ok = 1;
  if (api_func_init(db) != SHALE_OK) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  vtab_reg_init(&db->vtabs, db);
  db->vtabs.make_module = api_pragma_vtab_make;
  if (vtab_builtin_register(&db->vtabs) != SHALE_OK ||
      api_stmt_vtab_register(&db->vtabs) != SHALE_OK ||
      api_dbstat_register(&db->vtabs) != SHALE_OK) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  int rw = flags & (SHALE_OPEN_READONLY | SHALE_OPEN_READWRITE);
  if (rw != SHALE_OPEN_READONLY && rw != SHALE_OPEN_READWRITE) {
    api_error(db, SHALE_MISUSE, "bad parameter or other API misuse");
    return SHALE_MISUSE;
  }
  OsVfs *vfs = NULL;
  if (vfs_name) {
    vfs = os_vfs_find(vfs_name);
    if (!vfs) {
      api_error(db, SHALE_ERROR, "no such vfs: %s", vfs_name);
      return SHALE_ERROR;
    }
  }
  int oflags = flags & (SHALE_OPEN_READONLY | SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE |
                        SHALE_OPEN_NOLOCK | SHALE_OPEN_IMMUTABLE);
  int rc = btree_open(vfs, mem ? NULL : filename, oflags, &db->dbx[0].bt);
  if (rc != SHALE_OK) {
    db->dbx[0].bt = NULL;
    api_error(db, rc, "%s", rc == SHALE_NOMEM ? "out of memory" : "unable to open database file");
    return api_rc(db, rc);
  }
  pager_set_busy_handler(btree_pager(db->dbx[0].bt), NULL, NULL);
  /* the absolute name (sqlite3_db_filename): the pager's, as the VFS
   * resolved it when opening */
  db->fullname = util_strdup(mem || memflag ? "" : pager_filename(btree_pager(db->dbx[0].bt)));
  if (!db->fullname || ext_builtin_register(db) != SHALE_OK) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  return api_auto_extensions(db);
}

int shale_open(const char *filename, shale **db) {
  return shale_open_v2(filename, db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
}

static void db_free(shale *db) {
  cache_clear(db);
  for (int i = 0; i < API_MAX_DB && db->cfg.no_ckpt_on_close; i++) {
    Btree *b = db->dbx[i].bt;
    if (b) pager_set_keep_wal(btree_pager(b), 1);
  }
  for (int i = 0; i < API_MAX_DB; i++) { /* main first */
    if (db->dbx[i].bt) btree_close(db->dbx[i].bt);
    schema_unref(db->dbx[i].schema);
    shale_free(db->dbx[i].name);
    shale_free(db->dbx[i].filename);
    if (db->dbx[i].release) db->dbx[i].release(db->dbx[i].cookie);
  }
  vtab_reg_free(&db->vtabs); /* modules may use functions: first */
  if (db->funcs_ok) func_registry_free(&db->funcs);
  api_func_close(db);
  vm_spare_free(&db->vm_spare);
  vm_spare_free(&db->prog_spare);
  savepoints_clear(db);
  shale_free(db->txn.sp);
  shale_free(db->err.msg);
  shale_free(db->err.sql);
  shale_free(db->fullname);
  shale_free(db->cfg.main_name);
  api_autovac_free(db);
  api_loadext_close(db); /* last: what was registered may point into them */
  api_db_retire(db);     /* the struct goes to the free list at the last leave */
}

/* The connection's contents are freed when it has no statements or handles
 * left; shale_close refuses otherwise, shale_close_v2 leaves a "zombie" that
 * the last statement's finalize (or handle's close) frees. */
static int close_common(shale *db, int v2) {
  if (!db) return SHALE_OK;
  if (!api_db_enter(db)) return SHALE_MISUSE;
  int rc = SHALE_OK;
  /* As SQLite's close: virtual tables disconnect first, so statements a
   * module keeps on its own tables (R-Tree's) are finalized before the
   * check for unfinalized statements; with a statement running, cursors
   * may be open on them (fts5's): they are left as they are. */
  if (db->txn.nactive == 0) vtab_disconnect_closing(&db->vtabs);
  if (!v2 && (db->stmts || db->nhandles)) {
    api_error(db, SHALE_BUSY,
              "unable to close due to unfinalized statements or unfinished backups");
    rc = SHALE_BUSY;
  } else {
    api_trace_close(db);
    if (!db->stmts && !db->nhandles) {
      db_free(db);
    } else {
      for (shale_stmt *s = db->stmts; s; s = s->next) shale_reset(s);
      db->zombie = 1;
      api_set_magic(db, API_DB_ZOMBIE);
    }
  }
  api_leave_maybe_free(db);
  return rc;
}
int shale_close(shale *db) { return close_common(db, 0); }
int shale_close_v2(shale *db) { return close_common(db, 1); }

/* ---------------------------------------------------------------- prepare */

void api_compile_env(shale *db, CompileEnv *env) {
  memset(env, 0, sizeof *env);
  env->prog_spare = &db->prog_spare;
  env->bt = db->dbx[0].bt;
  env->schema = db->dbx[0].schema ? db->dbx[0].schema->s : NULL;
  env->funcs = &db->funcs;
  env->vtabs = &db->vtabs;
  env->max_vars = db->set.limits[SHALE_LIMIT_VARIABLE_NUMBER];
  env->max_sql_length = db->set.limits[SHALE_LIMIT_SQL_LENGTH];
  env->max_length = db->set.limits[SHALE_LIMIT_LENGTH];
  env->max_expr_depth = db->set.limits[SHALE_LIMIT_EXPR_DEPTH];
  env->max_compound = db->set.limits[SHALE_LIMIT_COMPOUND_SELECT];
  env->max_columns = db->set.limits[SHALE_LIMIT_COLUMN];
  env->max_function_arg = db->set.limits[SHALE_LIMIT_FUNCTION_ARG];
  if (db->cb.auth) {
    env->auth = db->cb.auth; /* same signature and answer codes */
    env->auth_ctx = db->cb.auth_arg;
  }
  env->max_trigger_depth = db->set.limits[SHALE_LIMIT_TRIGGER_DEPTH];
  env->recursive_triggers = db->set.recursive_triggers;
  env->foreign_keys = db->set.foreign_keys;
  env->defer_foreign_keys = db->set.defer_foreign_keys;
  env->in_txn = !db->txn.autocommit;
  env->reverse_unordered = db->set.reverse_unordered;
  env->no_auto_index = !(db->set.pflags & API_PF_AUTOMATIC_INDEX);
  env->ignore_checks = (db->set.pflags & API_PF_IGNORE_CHECKS) != 0;
  /* SQLite's sqlite3WritableSchema and sqlite3ReadOnlyShadowTables: DEFENSIVE
   * cancels writable_schema, and makes shadow tables read-only to SQL
   * compiled outside a module's xCreate/xConnect, a running statement and
   * the xSync calls of a commit */
  int defensive = (db->set.pflags & API_PF_DEFENSIVE) != 0;
  env->writable_schema = (db->set.pflags & API_PF_WRITABLE_SCHEMA) != 0 && !defensive;
  env->shadow_ro = defensive && !db->stepping && !db->vtabs.connecting && !db->txn.vtab_syncing;
  env->no_triggers = db->cfg.no_triggers;
  env->no_views = db->cfg.no_views;
  env->no_dqs_dml = db->cfg.no_dqs_dml;
  env->no_dqs_ddl = db->cfg.no_dqs_ddl;
  env->untrusted = !(db->set.pflags & API_PF_TRUSTED_SCHEMA);
  env->trigger_eqp = db->cfg.trigger_eqp;
  int full = (db->set.pflags & API_PF_FULL_COLUMN_NAMES) != 0,
      shortn = (db->set.pflags & API_PF_SHORT_COLUMN_NAMES) != 0;
  env->col_names = full ? (shortn ? COMPILE_NAMES_BOTH : COMPILE_NAMES_FULL)
                        : (shortn ? COMPILE_NAMES_SHORT : COMPILE_NAMES_SPAN);
  env->legacy_alter = (db->set.pflags & API_PF_LEGACY_ALTER_TABLE) != 0;
  env->legacy_file_format = db->cfg.legacy_format;
  if (db->dbx[0].schema) {
    db->cdbs[0].name = api_db_name(db, 0);
    db->cdbs[0].schema = db->dbx[0].schema->s;
    db->cdbs[0].file = api_db_file(db, 0);
    db->cdbs[0].bt = db->dbx[0].bt;
    for (int i = 1; i < db->ndb; i++) {
      if (!db->dbx[i].schema) schema_reload_db(db, i); /* temp: an empty one */
      db->cdbs[i].name = db->dbx[i].name;
      db->cdbs[i].schema = db->dbx[i].schema ? db->dbx[i].schema->s : NULL;
      db->cdbs[i].file = api_db_file(db, i);
      db->cdbs[i].bt = db->dbx[i].bt;
    }
    env->ndb = db->ndb;
    env->dbs = db->cdbs;
  }
}

/* The connection settings a compiled program depends on: a statement
 * compiled under other settings is recompiled (as SQLite expires them). */
static int api_settings(const shale *db) {
  return (db->set.foreign_keys | db->set.recursive_triggers << 1 | db->set.reverse_unordered << 2 |
          db->set.case_sensitive_like << 3 | db->cfg.no_triggers << 26 | db->cfg.no_views << 27 |
          db->cfg.trigger_eqp << 24 | db->cfg.legacy_format << 25 | db->cfg.no_dqs_dml << 28 |
          db->cfg.no_dqs_ddl << 29 | db->set.defer_foreign_keys << 30) ^
         (int)(db->cb.auth_gen << 4) ^ (int)(db->set.pflags << 8); /* pflags: bits 8..22 */
}

static const char *const explain_names[8] = {"addr", "opcode", "p1", "p2",
                                             "p3",   "p4",     "p5", "comment"};
static const char *const eqp_names[4] = {"id", "parent", "notused", "detail"};

/* As SQLite, a PRAGMA goes to its database file's VFS first, at prepare
 * (OS_FCNTL_PRAGMA): a VFS that knows it runs it -- the statement's one row
 * is then its result text, in a column that text names -- or fails it. */
static int stmt_pragma_vfs(shale_stmt *st) {
  shale *db = st->db;
  const PragmaReq *req = &st->cs.pragma;
  shale_free(st->pragma_res);
  st->pragma_res = NULL;
  st->pragma_vfs = 0;
  int i = req->schema ? api_db_index(db, req->schema) : 0;
  if (i < 0) { /* as SQLite: at prepare, for every pragma */
    api_error(db, SHALE_ERROR, "unknown database %s", req->schema);
    return SHALE_ERROR;
  }
  if (st->cs.explain || req->ignored || !req->name) return SHALE_OK;
  Btree *b = api_db_bt(db, i);
  if (!b) return SHALE_OK;
  char *arg[4] = {NULL, (char *)req->name, (char *)req->value, NULL};
  int rc = os_file_control(pager_file(btree_pager(b)), OS_FCNTL_PRAGMA, arg);
  if (rc == SHALE_OK) {
    st->pragma_vfs = 1;
    st->pragma_res = arg[0];
    return SHALE_OK;
  }
  if (rc != SHALE_NOTFOUND) api_error(db, rc, "%s", arg[0] ? arg[0] : shale_errstr(rc));
  shale_free(arg[0]);
  return rc == SHALE_NOTFOUND ? SHALE_OK : rc;
}

/* Column count and names of a compiled statement's result; a PRAGMA's VFS
 * may fail it (stmt_pragma_vfs). */
static int stmt_setup_columns(shale_stmt *st) {
  rows_clear(&st->rows);
  st->rows.ncol = 0;
  st->rows.names = NULL;
  if (st->cs.explain == 1) {
    st->rows.ncol = 8;
    st->rows.names = (const char **)explain_names;
  } else if (st->cs.explain == 2) {
    st->rows.ncol = 4;
    st->rows.names = (const char **)eqp_names;
  } else if (st->cs.kind == SQL_STMT_PRAGMA) {
    int rc = stmt_pragma_vfs(st);
    if (rc != SHALE_OK) return rc;
    if (st->pragma_vfs) {
      st->rows.ncol = 1;
      st->rows.names = (const char **)&st->pragma_res;
      return SHALE_OK;
    }
    const char *const *names = NULL;
    api_pragma_columns(&st->cs.pragma, &st->rows.ncol, &names);
    st->rows.names = (const char **)names;
  }
  return SHALE_OK;
}

static int stmt_is_rows(const shale_stmt *st) {
  return st->cs.explain || st->cs.kind == SQL_STMT_PRAGMA || st->cs.kind == SQL_STMT_ATTACH ||
         st->cs.kind == SQL_STMT_DETACH;
}

static int stmt_ncol(const shale_stmt *st) {
  return stmt_is_rows(st) ? st->rows.ncol : st->cs.ncol;
}

/* Compile st->sql against the current schema into st->cs. */
/* compile_sql; as SQLite (schemaIsValid), a compile that fails with
 * SHALE_ERROR ("no such table", ...) checks the file's schema cookie, and
 * if another connection changed the schema, reloads it and compiles once
 * more. env is (re)filled here. */
static int compile_checked(shale *db, CompileEnv *env, const char *sql, int n, CompiledStmt *cs,
                           const char **end, char **msg) {
  int rc;
  for (int attempt = 0;; attempt++) {
    api_compile_env(db, env);
    rc = compile_sql(env, sql, n, cs, end, msg);
    if (rc != SHALE_ERROR || attempt > 0 || db->txn.txn_ddl) break;
    long loads = db->count.schema_loads;
    if (api_schema_current(db) != SHALE_OK || db->count.schema_loads == loads) break;
    shale_free(*msg);
    *msg = NULL;
    memset(cs, 0, sizeof *cs);
  }
  return rc;
}

static int stmt_compile(shale_stmt *st) {
  shale *db = st->db;
  int rc = schema_ensure(db);
  if (rc) return rc;
  if (st->vm) {
    api_stmt_keep_stats(st);
    vm_free(st->vm);
    st->vm = NULL;
  }
  compile_stmt_free(&st->cs);
  memset(&st->cs, 0, sizeof st->cs);
  schema_unref(st->schema);
  st->schema = NULL;
  CompileEnv env;
  char *msg = NULL;
  const char *tail = NULL;
  rc = compile_checked(db, &env, st->sql, -1, &st->cs, &tail, &msg);
  if (rc != SHALE_OK) {
    memset(&st->cs, 0, sizeof st->cs);
    set_error_msg(db, rc, msg);
    return rc;
  }
  shale_free(msg);
  st->schema = db->dbx[0].schema;
  st->schema->refs++;
  xrefs_take(db, &st->x);
  st->in_txn = env.in_txn;
  st->settings = api_settings(db);
  return stmt_setup_columns(st);
}

static int stmt_vars_init(shale_stmt *st) {
  int n = st->cs.nvar;
  if (n <= st->nvar) return SHALE_OK;
  ApiVarBuf *b = shale_realloc(st->varbuf, sizeof *b * (size_t)(n + 1));
  if (!b) return SHALE_NOMEM;
  st->varbuf = b;
  for (int i = st->vars ? st->nvar + 1 : 0; i <= n; i++) b[i] = (ApiVarBuf){NULL, 0, 0};
  ShValue *v = shale_realloc(st->vars, sizeof *v * (size_t)(n + 1));
  if (!v) return SHALE_NOMEM;
  for (int i = st->nvar + 1; i <= n; i++) value_set_null(&v[i]);
  if (st->nvar == 0) value_set_null(&v[0]);
  st->vars = v;
  st->nvar = n;
  return SHALE_OK;
}

/* The last 8 bytes of z[0..n) (all of them when shorter, zero-padded): a
 * cached key's tag, compared before its text. Texts prepared one after the
 * other mostly differ at their end (the literal values), so this one
 * comparison turns almost every other entry away. */
static uint64_t text_tail8(const char *z, int n) {
  uint64_t v = 0;
  if (n >= 8)
    memcpy(&v, z + n - 8, 8);
  else if (n > 0)
    memcpy(&v, z, (size_t)n);
  return v;
}

/* Look for a cached compilation of the statement at the start of sql[0..n):
 * an entry whose key is all of it, or a prefix of it ending with ';'. */
static ApiCached *cache_take(shale *db, const char *sql, int n) {
  if (db->cb.auth || !db->cache) return NULL; /* the authorizer sees every prepare */
  uint64_t tail = text_tail8(sql, n);
  int settings = 0, have_settings = 0;
  for (ApiCached *c = db->cache; c; c = c->next) {
    if (c->nkey == n ? c->tail8 != tail : c->nkey > n || !c->semi_end) continue;
    if (c->nkey == 0 || memcmp(c->key, sql, (size_t)c->nkey) != 0) continue;
    if (!have_settings) settings = api_settings(db), have_settings = 1;
    if (c->schema != db->dbx[0].schema || c->x.gen != db->xgen ||
        c->in_txn != !db->txn.autocommit || c->settings != settings)
      continue;
    cache_unlink(db, c);
    return c;
  }
  return NULL;
}

static void cache_put(shale *db, shale_stmt *st) {
  if (!st->schema || st->schema != db->dbx[0].schema || st->x.gen != db->xgen || !st->sql) return;
  int n = (int)strlen(st->sql);
  if (n > 4000 || st->cs.kind < 0 || st->cs.uses_vtab) return;
  ApiCached *c;
  if (db->ncache >= API_CACHE_MAX) { /* full: the least recently used entry makes room */
    c = db->cache_last;
    cache_unlink(db, c);
    cache_entry_clear(db, c);
  } else {
    c = shale_malloc(sizeof *c);
    if (!c) return;
  }
  /* every field set below (no memset: cs and x are large) */
  c->tail = 0;
  c->key = st->sql;
  st->sql = NULL;
  c->nkey = n;
  c->tail8 = text_tail8(c->key, n);
  c->semi_end = n > 0 && c->key[n - 1] == ';';
  c->cs = st->cs;
  memset(&st->cs, 0, sizeof st->cs);
  c->schema = st->schema;
  st->schema = NULL;
  c->x = st->x;
  memset(&st->x, 0, sizeof st->x);
  c->in_txn = st->in_txn;
  c->settings = st->settings;
  c->prev = NULL;
  c->next = db->cache;
  if (c->next)
    c->next->prev = c;
  else
    db->cache_last = c;
  db->cache = c;
  db->ncache++;
}

/* Parameter i back to NULL; a pointer bound there is released. */
static void var_release(shale_stmt *st, int i) {
  ShValue *d = &st->vars[i];
  if (d->flags & VAL_POINTER) {
    ValPtr *vp = (ValPtr *)(void *)st->varbuf[i].z;
    if (vp->destroy) vp->destroy(vp->p);
  }
  value_clear(d);
  value_set_null(d);
  if (st->varbuf) st->varbuf[i].zero = 0;
}

static void stmt_free(shale_stmt *st) {
  if (st->vm) vm_free(st->vm);
  compile_stmt_free_keep(&st->cs, &st->db->prog_spare);
  schema_unref(st->schema);
  xrefs_drop(&st->x);
  rows_clear(&st->rows);
  for (int i = 0; i <= st->nvar && st->vars; i++) var_release(st, i);
  shale_free(st->vars);
  for (int i = 0; i <= st->nvar && st->varbuf; i++) shale_free(st->varbuf[i].z);
  shale_free(st->varbuf);
  for (int i = 0; i < st->ncells; i++) {
    if (st->cells[i].v.flags & VAL_OWNED) value_clear(&st->cells[i].v);
    shale_free(st->cells[i].buf);
  }
  shale_free(st->cells);
  shale_free(st->sql);
  shale_free(st->errmsg_copy);
  shale_free(st->pragma_res);
  api_handle_retire(&st->db->free_stmts, st);
}

static int prepare_in_scope(shale *db, const char *sql, int nbyte, unsigned flags, shale_stmt **out,
                            const char **tail);

/* The bytes of records a sorter (ORDER BY, GROUP BY, CREATE INDEX, hash
 * sets) keeps in memory before it spills, as SQLite's (vdbesort.c): the main
 * database's cache size in bytes (cache_size pages, or -N KiB), at least 250
 * pages, at most 512 MiB; read at every run, so PRAGMA cache_size applies. */
static uint64_t sorter_budget(shale *db) {
  Pager *pg = btree_pager(db->dbx[0].bt);
  int64_t cs = pager_cache_size(pg), psz = pager_page_size(pg);
  int64_t b = cs < 0 ? -1024 * cs : cs * psz;
  if (b > ((int64_t)1 << 29)) b = (int64_t)1 << 29;
  if (b < 250 * psz) b = 250 * psz;
  return (uint64_t)b;
}

int shale_prepare_v3(shale *db, const char *sql, int nbyte, unsigned flags, shale_stmt **out,
                     const char **tail) {
  if (!api_db_enter(db)) {
    if (out) *out = NULL;
    if (tail) *tail = sql;
    return SHALE_MISUSE;
  }
  const CollationScope *save = record_collation_scope(&db->coll_scope);
  int rc = prepare_in_scope(db, sql, nbyte, flags, out, tail);
  record_collation_scope(save);
  if (rc != SHALE_OK && sql && db->err.code != SHALE_OK) { /* for shale_error_offset */
    size_t n = nbyte < 0 ? strlen(sql) : strnlen(sql, (size_t)nbyte);
    db->err.sql = shale_malloc(n + 1);
    if (db->err.sql) {
      memcpy(db->err.sql, sql, n);
      db->err.sql[n] = 0;
    }
  }
  api_leave(db);
  return rc;
}

static int prepare_in_scope(shale *db, const char *sql, int nbyte, unsigned flags, shale_stmt **out,
                            const char **tail) {
  if (out) *out = NULL;
  if (tail) *tail = sql;
  if (!db || !out || !sql) {
    if (db) api_error(db, SHALE_MISUSE, "bad parameter or other API misuse");
    return SHALE_MISUSE;
  }
  if (!db->dbx[0].bt) { /* the open failed: as SQLite's "sick" handle, misuse, its error kept */
    return SHALE_MISUSE;
  }
  int n = nbyte < 0 ? (int)strlen(sql) : (int)strnlen(sql, (size_t)nbyte);
  if (n > db->set.limits[SHALE_LIMIT_SQL_LENGTH]) {
    api_error(db, SHALE_TOOBIG, "string or blob too big"); /* SQLite's final text */
    return api_rc(db, SHALE_TOOBIG);
  }
  int rc = schema_ensure(db);
  if (rc) return api_rc(db, rc);
  shale_stmt *st = api_handle_alloc(db, &db->free_stmts, sizeof *st, API_STMT_LIVE);
  if (!st) {
    api_error(db, SHALE_NOMEM, "out of memory");
    return api_rc(db, SHALE_NOMEM);
  }
  st->db = db;
  ApiCached *c = cache_take(db, sql, n);
  if (c) {
    st->cs = c->cs;
    st->schema = c->schema;
    st->x = c->x;
    st->in_txn = c->in_txn;
    st->settings = c->settings;
    st->sql = c->key;
    if (tail) *tail = sql + c->nkey;
    shale_free(c);
    db->count.cache_hits++;
    if ((rc = stmt_setup_columns(st)) != SHALE_OK) {
      stmt_free(st);
      return api_rc(db, rc);
    }
  } else {
    CompileEnv env;
    char *msg = NULL;
    const char *end = NULL;
    rc = compile_checked(db, &env, sql, n, &st->cs, &end, &msg);
    if (rc != SHALE_OK) {
      set_error_msg(db, rc, msg);
      memset(&st->cs, 0, sizeof st->cs);
      stmt_free(st);
      return api_rc(db, rc);
    }
    shale_free(msg);
    if (!end) end = sql + n;
    if (tail) *tail = end;
    if (st->cs.kind < 0) { /* only white space / comments */
      stmt_free(st);
      clear_error(db);
      return SHALE_OK;
    }
    st->sql = shale_malloc((size_t)(end - sql) + 1);
    if (!st->sql) {
      stmt_free(st);
      api_error(db, SHALE_NOMEM, "out of memory");
      return api_rc(db, SHALE_NOMEM);
    }
    memcpy(st->sql, sql, (size_t)(end - sql));
    st->sql[end - sql] = 0;
    st->schema = db->dbx[0].schema;
    st->schema->refs++;
    xrefs_take(db, &st->x);
    st->in_txn = env.in_txn;
    st->settings = api_settings(db);
    if ((rc = stmt_setup_columns(st)) != SHALE_OK) {
      stmt_free(st);
      return api_rc(db, rc);
    }
  }
  if (stmt_vars_init(st) != SHALE_OK) {
    stmt_free(st);
    api_error(db, SHALE_NOMEM, "out of memory");
    return api_rc(db, SHALE_NOMEM);
  }
  st->next = db->stmts;
  db->stmts = st;
  *out = st;
  clear_error(db);
  return SHALE_OK;
}

int shale_prepare_v2(shale *db, const char *sql, int nbyte, shale_stmt **stmt, const char **tail) {
  return shale_prepare_v3(db, sql, nbyte, 0, stmt, tail);
}

int shale_prepare(shale *db, const char *sql, int nbyte, shale_stmt **stmt, const char **tail) {
  return shale_prepare_v3(db, sql, nbyte, 0, stmt, tail);
}

/* ------------------------------------------------------------------- step */

static int build_explain(shale_stmt *st) {
  const VmProgram *p = st->cs.prog;
  if (!p) return SHALE_OK;
  char buf[256];
  for (int i = 0; i < p->nop; i++) {
    const VmOp *op = &p->ops[i];
    ShValue v[8];
    value_set_int(&v[0], i);
    const char *name = vm_opcode_name(op->op);
    value_set_text(&v[1], name ? name : "?", (uint32_t)strlen(name ? name : "?"));
    value_set_int(&v[2], op->p1);
    value_set_int(&v[3], op->p2);
    value_set_int(&v[4], op->p3);
    buf[0] = 0;
    vm_explain_p4(op, buf, sizeof buf);
    if (buf[0])
      value_set_text(&v[5], buf, (uint32_t)strlen(buf));
    else
      value_set_null(&v[5]);
    value_set_int(&v[6], op->p5);
    value_set_null(&v[7]);
    if (api_rows_add(&st->rows, v) != SHALE_OK) return SHALE_NOMEM;
  }
  return SHALE_OK;
}

static int build_eqp(shale_stmt *st) {
  for (int i = 0; i < st->cs.neqp; i++) {
    const EqpRow *r = &st->cs.eqp[i];
    ShValue v[4];
    value_set_int(&v[0], r->id);
    value_set_int(&v[1], r->parent);
    value_set_int(&v[2], 0);
    const char *d = r->detail ? r->detail : "";
    value_set_text(&v[3], d, (uint32_t)strlen(d));
    if (api_rows_add(&st->rows, v) != SHALE_OK) return SHALE_NOMEM;
  }
  return SHALE_OK;
}

/* Writing statements inside a transaction with savepoints: the write
 * transaction and the savepoints exist before the statement's own
 * statement savepoint (invariant 3 of api_int.h). */
static int open_savepoints(shale *db, uint32_t wmask) {
  if (db->txn.autocommit || db->txn.nsp == 0) return SHALE_OK;
  int rc = SHALE_OK;
  if (!wmask) wmask = 1;
  for (int i = 0; i < db->ndb && rc == SHALE_OK; i++) {
    Btree *b = api_db_bt(db, i);
    if (!(wmask & (1u << i)) || !b) continue;
    if (btree_txn_state(b) != PAGER_TXN_WRITE) rc = btree_begin(b, BTREE_TXN_WRITE);
    if (rc == SHALE_OK && pager_savepoint_count(btree_pager(b)) < db->txn.nsp)
      rc = btree_savepoint_open(b, db->txn.nsp);
  }
  if (rc) api_error(db, rc, "%s", shale_errstr(rc));
  return rc;
}

static void stmt_deactivate(shale_stmt *st) {
  shale *db = st->db;
  if (!st->active) return;
  st->active = 0;
  st->has_row = 0;
  api_trace_end(st);
  if (--db->txn.nactive == 0) {
    db->interrupted = 0;
    if (db->txn.api_txn && db->txn.autocommit) {
      db->txn.api_txn = 0;
      db->txn.deferred_fk = db->txn.deferred_imm_fk = 0; /* as SQLite at a transaction's end */
      db->set.defer_foreign_keys = 0;
      if (api_any_txn(db, PAGER_TXN_READ)) {
        char *msg = NULL;
        int rc = api_commit(db, &msg);
        if (rc != SHALE_OK) {
          if (api_any_txn(db, PAGER_TXN_READ)) api_rollback(db, 0);
          if (st->last_rc == SHALE_OK || st->last_rc == SHALE_DONE) {
            st->last_rc = rc;
            set_error_msg(db, rc, msg);
            msg = NULL;
          }
        }
        shale_free(msg);
      }
    }
  }
}

/* A writing statement stopped in autocommit mode while other statements of
 * the connection still read (the API holds the transaction, api_txn): as
 * SQLite, its changes are committed at once and only the read transaction
 * waits for the last reader. When the commit cannot happen now (another
 * connection's lock), it stays deferred to that point. */
static int commit_early(shale_stmt *st) {
  shale *db = st->db;
  if (!db->txn.autocommit || !db->txn.api_txn || db->txn.nactive == 0 || st->cs.readonly ||
      db->txn.vtab_syncing)
    return SHALE_OK;
  if (!api_any_txn(db, PAGER_TXN_WRITE)) return SHALE_OK;
  for (shale_stmt *s = db->stmts; s; s = s->next)
    if (s->active && !s->cs.readonly) return SHALE_OK;
  char *msg = NULL;
  int rc = api_commit_write(db, &msg);
  if (rc == SHALE_CONSTRAINT_COMMITHOOK) { /* the commit hook vetoed: the statement fails */
    api_error(db, rc, "%s", msg ? msg : "constraint failed");
    shale_free(msg);
    return rc;
  }
  shale_free(msg);
  return SHALE_OK;
}

static void stmt_keep_error(shale_stmt *st, int rc) {
  shale *db = st->db;
  st->last_rc = rc;
  shale_free(st->errmsg_copy);
  st->errmsg_copy = db->err.msg ? util_strdup(db->err.msg) : NULL;
}

/* xRollback of the virtual tables in the transaction, if any. */
static void vtabs_rollback(shale *db) {
  if (!vtab_in_txn(&db->vtabs)) return;
  vtab_rollback(&db->vtabs);
  db->vtabs.nsavepoint = 0;
}

/* A statement's failure ended the transaction: back to autocommit, the
 * schema reloaded if the transaction changed it. */
static void txn_rolled_back(shale *db) {
  if (db->txn.txn_ddl) db->txn.schema_dirty = 1;
  db->txn.txn_ddl = 0;
  txn_ended(db);
}

/* The statement stopped (DONE or an error): counters, transaction state,
 * schema reload. Returns the code for shale_step. */
static int stmt_finish(shale_stmt *st, int rc) {
  shale *db = st->db;
  if (st->vm && !stmt_is_rows(st)) {
    /* as SQLite: a statement that failed (its changes undone) counts 0 */
    int64_t n = rc == SHALE_DONE ? vm_changes(st->vm) : 0;
    int k = st->cs.kind;
    if (k == SQL_STMT_INSERT || k == SQL_STMT_UPDATE || k == SQL_STMT_DELETE) {
      db->count.changes = n;
      if (k == SQL_STMT_INSERT && vm_last_rowid_set(st->vm))
        db->count.last_rowid = vm_last_rowid(st->vm);
    }
    if (rc == SHALE_DONE) db->count.total_changes += vm_total_changes(st->vm);
    if (rc != SHALE_DONE) {
      const char *m = vm_errmsg(st->vm);
      api_error(db, rc, "%s", m ? m : shale_errstr(rc));
    }
    if (vm_txn_rolled_back(st->vm)) { /* OR ROLLBACK, or one of SQLite's special errors */
      vtabs_rollback(db);             /* the virtual tables' part of it goes too */
      txn_rolled_back(db);
    }
    if (rc != SHALE_DONE && st->cs.kind >= SQL_STMT_CREATE_TABLE && st->cs.kind <= SQL_STMT_ALTER)
      db->txn.schema_dirty = 1;
    /* SQLite reparses the altered database's schema and temp's after an
     * ALTER TABLE (unless other statements may have cursors on the virtual
     * tables) */
    if (rc == SHALE_DONE && st->cs.kind == SQL_STMT_ALTER && db->txn.nactive <= 1)
      vtab_schema_reset(&db->vtabs, st->cs.db_wmask | 1u << 1);
    /* it began the transaction, its own nested statements took it over, and
     * it failed: as SQLite's only writer, the whole transaction goes (with
     * other statements still active it is left to them) */
    if (rc != SHALE_DONE && vm_undo_released_txn(st->vm) && db->txn.autocommit && db->txn.api_txn &&
        db->txn.nactive == 1 && api_any_txn(db, PAGER_TXN_READ)) {
      api_rollback(db, 0);
      txn_rolled_back(db);
    }
    /* autocommit mode's only writer failed while others read: SQLite rolls
     * the transaction back (the readers go on), so the virtual tables get
     * xRollback; the files' part was undone by the statement savepoint */
    if (rc != SHALE_DONE && vm_undo_vtabs(st->vm)) vtabs_rollback(db);
  }
  st->halted = 1;
  st->last_rc = rc;
  stmt_deactivate(st);
  if (rc == SHALE_DONE) {
    int r2 = commit_early(st);
    if (r2 != SHALE_OK) rc = r2;
  } else {
    commit_early(st);
  }
  if (db->txn.schema_dirty) {
    db->txn.schema_dirty = 0;
    if (!db->txn.autocommit) db->txn.txn_ddl = 1;
    int r2 = schema_reload_all(db);
    if (r2 != SHALE_OK && rc == SHALE_DONE) rc = r2;
  }
  if (rc == SHALE_DONE && db->txn.autocommit && db->cb.wal) api_wal_notify(db);
  if (rc == SHALE_DONE)
    step_code(db, SHALE_DONE);
  else
    stmt_keep_error(st, rc);
  st->last_rc = rc;
  return rc;
}

/* First step: (re)compile if stale, make rows or the Vm, push bindings. */
static int stmt_start(shale_stmt *st) {
  shale *db = st->db;
  int rc;
  if (db->txn.nactive == 0) db->interrupted = 0;
  if (!db->dbx[0].schema || st->schema != db->dbx[0].schema || st->x.gen != db->xgen ||
      st->settings != api_settings(db) ||
      (st->cs.is_txn_ctl && st->in_txn != !db->txn.autocommit)) {
    rc = stmt_compile(st);
    if (rc) return rc;
    st->stat[SHALE_STMTSTATUS_REPREPARE]++;
    if ((rc = stmt_vars_init(st)) != SHALE_OK) return rc;
  }
  rows_clear(&st->rows);
  st->rowpos = 0;
  if (st->cs.kind == SQL_STMT_VACUUM && !st->cs.explain) { /* SQLite's run-time checks */
    if (!db->txn.autocommit) {
      api_error(db, SHALE_ERROR, "cannot VACUUM from within a transaction");
      return SHALE_ERROR;
    }
    if (db->txn.nactive > 0 || db->nblobs > 0) { /* a blob handle is a statement to SQLite */
      api_error(db, SHALE_ERROR, "cannot VACUUM - SQL statements in progress");
      return SHALE_ERROR;
    }
  }
  if (db->txn.nactive > db->vtabs.destroying && st->cs.prog && !st->cs.explain) {
    /* as SQLite's Destroy: no tree is dropped while other statements run */
    for (int i = 0; i < st->cs.prog->nop; i++)
      if (st->cs.prog->ops[i].op == OP_Destroy) {
        api_error(db, SHALE_LOCKED, "database table is locked");
        return SHALE_LOCKED;
      }
  }
  if (st->cs.explain == 1) {
    rc = build_explain(st);
  } else if (st->cs.explain == 2) {
    rc = build_eqp(st);
  } else if (st->cs.kind == SQL_STMT_PRAGMA && st->pragma_vfs) {
    if (st->pragma_res) { /* the VFS's answer (stmt_pragma_vfs) */
      ShValue v;
      value_set_text(&v, st->pragma_res, (uint32_t)strlen(st->pragma_res));
      if ((rc = api_rows_add(&st->rows, &v)) != SHALE_OK) return rc;
    }
  } else if (st->cs.kind == SQL_STMT_PRAGMA) {
    rc = api_pragma_run(db, &st->cs.pragma, &st->rows);
    if (rc) return rc;
  } else if (st->cs.kind == SQL_STMT_ATTACH || st->cs.kind == SQL_STMT_DETACH) {
    rc = run_attach(st);
    if (rc) return rc;
  } else {
    int flags;
    if (st->cs.is_txn_ctl) {
      flags = 0;
    } else if (db->txn.autocommit) {
      if (!api_any_txn(db, PAGER_TXN_READ)) {
        flags = VM_AUTOCOMMIT | VM_STMT_JOURNAL; /* this Vm begins and ends it */
      } else { /* active statements hold it: the API ends it after the last */
        release_vm_txns(db);
        db->txn.api_txn = 1;
        flags = st->cs.stmt_journal ? VM_STMT_JOURNAL : 0;
        if (st->cs.vtab_stmt_sp) flags |= VM_STMT_JOURNAL | VM_VTAB_SAVEPOINT;
      }
    } else {
      flags = st->cs.stmt_journal ? VM_STMT_JOURNAL : 0;
      if (st->cs.vtab_stmt_sp) flags |= VM_STMT_JOURNAL | VM_VTAB_SAVEPOINT;
      if (!st->cs.readonly && (rc = open_savepoints(db, st->cs.db_wmask)) != SHALE_OK) return rc;
    }
    if (st->vm && st->vm_flags != flags) {
      api_stmt_keep_stats(st);
      vm_free(st->vm);
      st->vm = NULL;
    }
    if ((st->cs.db_rmask & 2) && !db->dbx[1].bt && (rc = api_temp_open(db)) != SHALE_OK) return rc;
    if (!st->vm) {
      if (!st->cs.prog) {
        api_error(db, SHALE_INTERNAL, "statement has no program");
        return SHALE_INTERNAL;
      }
      rc = vm_new_reuse(st->cs.prog, db->dbx[0].bt, flags, &db->vm_spare, &st->vm);
      if (rc) return rc;
      st->vm_flags = flags;
      vm_set_conn(st->vm, db, &db->conn_cb);
      vm_set_hooks(st->vm, &db->hooks);
    }
    vm_set_sorter_budget(st->vm, sorter_budget(db));
    if (db->ndb > 2 || db->dbx[1].bt) {
      Btree *dbs[API_MAX_DB];
      for (int i = 0; i < db->ndb; i++) dbs[i] = api_db_bt(db, i);
      vm_set_dbs(st->vm, dbs, db->ndb);
    }
    for (int i = 1; i <= st->nvar && i <= st->cs.prog->nvar; i++) {
      rc = vm_bind_view(st->vm, i, &st->vars[i]); /* vars own nothing: varbuf holds the bytes */
      if (rc) return rc;
    }
  }
  if (rc) return rc;
  if (st->cs.uses_vtab && !st->cs.readonly && st->vm) {
    /* autocommit mode's only writer (vm_set_sole_writer; only a program on
     * virtual tables reads it, a new Vm starts with it off) */
    int sole = db->txn.autocommit;
    for (shale_stmt *s = db->txn.nactive ? db->stmts : NULL; s && sole; s = s->next)
      if (s != st && s->active && !s->cs.readonly) sole = 0;
    vm_set_sole_writer(st->vm, sole);
  }
  st->active = 1;
  st->halted = 0;
  st->produced = 0;
  db->txn.nactive++;
  st->stat[SHALE_STMTSTATUS_RUN]++;
  api_trace_start(st);
  return SHALE_OK;
}

static void stmt_halt_reset(shale_stmt *st) {
  if (st->vm) vm_reset(st->vm);
  st->halted = 0;
  st->has_row = 0;
  st->rowpos = 0;
}

static int stmt_readonly_impl(shale_stmt *st);

/* A statement locked out before it began asks the busy handler whether to
 * run again; a writer waiting for the main database's WAL WRITE lock wakes
 * as soon as the holder commits (pager_busy.c invariant 3). */
static int stmt_busy_wait(shale_stmt *st) {
  shale *db = st->db;
  Pager *p = btree_pager(db->dbx[0].bt); /* BEGIN IMMEDIATE is "readonly" too */
  pager_busy_watch_log(p, 1);
  int again = api_busy(db, st->nbusy++);
  pager_busy_watch_log(p, 0);
  return again;
}

/* Room for the row's column values (st->cells), made when a step produces
 * the row so that reading a column never fails for memory. */
__attribute__((noinline)) static int cells_grow(shale_stmt *st) {
  shale_value *c = shale_realloc(st->cells, sizeof *c * (size_t)st->row_n);
  if (!c) return SHALE_NOMEM;
  memset(c + st->ncells, 0, sizeof *c * (size_t)(st->row_n - st->ncells));
  st->cells = c;
  st->ncells = st->row_n;
  return SHALE_OK;
}

/* A row came but there is no room for its column values: the statement
 * stops with SHALE_NOMEM, as after an allocation failure in its program. */
__attribute__((cold, noinline)) static int step_nomem(shale_stmt *st) {
  if (st->vm) vm_reset(st->vm);
  st->has_row = 0;
  api_error(st->db, SHALE_NOMEM, NULL);
  st->halted = 1;
  stmt_deactivate(st);
  stmt_keep_error(st, SHALE_NOMEM);
  return SHALE_NOMEM;
}

static int step_in_scope(shale_stmt *st) {
  shale *db = st->db;
  if (st->halted) stmt_halt_reset(st);
  if (db->stmts->next && !stmt_readonly_impl(st)) api_detach_rows(db, st);
  for (int retry = 0;; retry++) {
    if (!st->active) {
      int rc = stmt_start(st);
      if (rc) {
        if (!db->err.msg || db->err.code != rc) api_error(db, rc, "%s", shale_errstr(rc));
        st->halted = 1;
        stmt_keep_error(st, rc);
        return api_rc(db, rc);
      }
    }
    if (db->interrupted) {
      if (st->vm) vm_reset(st->vm);
      api_error(db, SHALE_INTERRUPT, "interrupted");
      st->halted = 1;
      stmt_deactivate(st);
      stmt_keep_error(st, SHALE_INTERRUPT);
      return SHALE_INTERRUPT;
    }
    st->gen++;
    if (stmt_is_rows(st)) {
      if (st->rowpos < st->rows.nrow) {
        st->row = &st->rows.v[(size_t)st->rowpos * (size_t)st->rows.ncol];
        st->vals = st->row;
        st->row_n = st->rows.ncol;
        st->rowpos++;
        st->has_row = 1;
        if (__builtin_expect(st->ncells < st->row_n, 0) && cells_grow(st) != SHALE_OK)
          return step_nomem(st);
        step_code(db, SHALE_ROW);
        api_trace_row(st);
        return SHALE_ROW;
      }
      st->has_row = 0;
      return stmt_finish(st, SHALE_DONE);
    }
    db->cb.busy_ran = 0;
    shale_stmt *outer = db->stepping; /* a module's statement runs inside another */
    db->stepping = st;
    int rc = vm_step(st->vm);
    db->stepping = outer;
    if (rc == SHALE_ROW) {
      st->has_row = 1;
      st->produced = 1;
      st->nbusy = 0;
      st->row = NULL;
      st->vals = vm_row(st->vm, &st->row_n);
      if (__builtin_expect(st->ncells < st->row_n, 0) && cells_grow(st) != SHALE_OK)
        return step_nomem(st);
      step_code(db, SHALE_ROW);
      if (__builtin_expect(db->cb.trace_mask & SHALE_TRACE_ROW, 0)) api_trace_row(st);
      return SHALE_ROW;
    }
    st->has_row = 0;
    /* Locked out before anything happened: the busy handler decides
     * whether to try again (SQLite's B-tree loops so on BEGIN). */
    if ((rc & 0xff) == SHALE_BUSY && !st->produced && (db->set.busy_ms > 0 || db->cb.busy) &&
        !db->cb.busy_ran && /* the pager's lock loop already asked the handler */
        btree_txn_state(db->dbx[0].bt) == PAGER_TXN_NONE && stmt_busy_wait(st)) {
      vm_reset(st->vm);
      stmt_deactivate(st);
      retry--;
      continue;
    }
    st->nbusy = 0;
    if (rc == SHALE_SCHEMA && retry < API_MAX_SCHEMA_RETRY) {
      vm_reset(st->vm);
      stmt_deactivate(st);
      int began, r2 = api_txn_begin(db, BTREE_TXN_READ, &began);
      if (r2 == SHALE_OK) r2 = schema_reload_all(db);
      r2 = api_txn_end(db, began, r2);
      if (r2 == SHALE_OK) r2 = stmt_compile(st);
      if (r2 == SHALE_OK) st->stat[SHALE_STMTSTATUS_REPREPARE]++;
      if (r2 == SHALE_OK) r2 = stmt_vars_init(st);
      if (r2 != SHALE_OK) {
        st->halted = 1;
        stmt_keep_error(st, r2);
        return api_rc(db, r2);
      }
      continue;
    }
    rc = stmt_finish(st, rc);
    return rc == SHALE_DONE ? rc : api_rc(db, rc);
  }
}

/* Statements compile and run with the connection's collations in scope. */
int shale_step(shale_stmt *st) {
  shale *db = api_stmt_enter(st);
  if (!db) return SHALE_MISUSE;
  const CollationScope *save = record_collation_scope(&db->coll_scope);
  int rc = step_in_scope(st);
  record_collation_scope(save);
  api_leave(db);
  return rc;
}

static int stmt_restore_error(shale_stmt *st) {
  shale *db = st->db;
  int rc = st->last_rc;
  if (rc == SHALE_DONE || rc == SHALE_ROW) rc = SHALE_OK;
  if (rc == SHALE_OK)
    clear_error(db);
  else
    api_error(db, rc, "%s", st->errmsg_copy ? st->errmsg_copy : shale_errstr(rc));
  return api_rc(db, rc);
}

static int stmt_reset(shale_stmt *st) {
  int ran = st->active || st->halted;
  if (st->vm) vm_reset(st->vm);
  if (st->active) st->last_rc = SHALE_OK;
  stmt_deactivate(st);
  st->halted = 0;
  st->has_row = 0;
  st->rowpos = 0;
  int rc = ran ? stmt_restore_error(st) : SHALE_OK;
  st->last_rc = SHALE_OK;
  shale_free(st->errmsg_copy);
  st->errmsg_copy = NULL;
  return rc;
}

int shale_reset(shale_stmt *st) {
  if (!st) return SHALE_OK;
  API_ST_CALL(st, SHALE_MISUSE, stmt_reset(st));
}

int shale_finalize(shale_stmt *st) {
  if (!st) return SHALE_OK;
  shale *db = api_stmt_enter(st);
  if (!db) return SHALE_MISUSE;
  int rc = stmt_reset(st);
  shale_stmt **pp = &db->stmts;
  while (*pp && *pp != st) pp = &(*pp)->next;
  if (*pp) *pp = st->next;
  if (st->vm) {
    vm_free_keep(st->vm, &db->vm_spare);
    st->vm = NULL;
  }
  if (!db->zombie) cache_put(db, st);
  stmt_free(st);
  if (db->zombie && !db->stmts && !db->nhandles) db_free(db); /* shale_close_v2 was called */
  api_leave_maybe_free(db);
  return rc;
}

/* ---------------------------------------------------------------- columns */

static _Thread_local shale_value null_cell; /* per thread: callers write it */

/* cell's every other case: no row or no such column (a NULL, and
 * SHALE_RANGE, as SQLite's), a cell holding a copy api_detach_rows made. */
__attribute__((noinline)) static shale_value *cell_slow(shale_stmt *st, int i) {
  if (!st || !st->has_row || i < 0 || i >= st->row_n) {
    if (st) set_error_msg(st->db, SHALE_RANGE, NULL);
    value_set_null(&null_cell.v);
    return &null_cell;
  }
  shale_value *c = &st->cells[i]; /* room made by the step that produced the row */
  if (c->gen != st->gen) {
    if (c->v.flags & VAL_OWNED) value_clear(&c->v); /* a copy api_detach_rows made */
    c->v = st->vals[i];
    c->v.flags &= (uint8_t)~VAL_OWNED; /* borrowed */
    c->gen = st->gen;
    c->buf16 = 0;
  }
  return c;
}

/* Column i of st's current row as a cell: the row's value, copied into the
 * cell at the first read of the row (conversions then change the cell, not
 * the row). Inline in every column_* entry point for the usual case. */
static inline __attribute__((always_inline)) shale_value *cell(shale_stmt *st, int i) {
  if (__builtin_expect(st && st->has_row && (unsigned)i < (unsigned)st->row_n, 1)) {
    shale_value *c = &st->cells[i];
    if (c->gen == st->gen) return c;
    if (!(c->v.flags & VAL_OWNED)) {
      c->v = st->vals[i];
      c->v.flags &= (uint8_t)~VAL_OWNED; /* borrowed */
      c->gen = st->gen;
      c->buf16 = 0;
      return c;
    }
  }
  return cell_slow(st, i);
}

/* A statement's current row borrows text and blobs from its cursors'
 * pages; a write by another statement of the connection (or a blob handle)
 * may change those bytes, while SQLite's column values stay valid until the
 * statement's own next step. So before such a write, every other statement
 * showing a row gets its row's values copied into its cells (once per row). */
void api_detach_rows(shale *db, shale_stmt *except) {
  for (shale_stmt *s = db->stmts; s; s = s->next) {
    if (s == except || !s->has_row || s->row || s->detached_gen == s->gen) continue;
    s->detached_gen = s->gen;
    for (int i = 0; i < s->row_n; i++) {
      shale_value *c = cell(s, i);
      if (c == &null_cell || (c->v.flags & VAL_OWNED)) continue;
      if ((c->v.type == SHALE_TEXT || c->v.type == SHALE_BLOB) &&
          record_value_make_owned(&c->v) != SHALE_OK)
        value_set_null(&c->v); /* out of memory: as SQLite's column_* after OOM */
    }
  }
}

/* NUL-terminated text form of a value (in c->buf), NULL for NULL. */
static const char *cell_text(shale_value *c, uint32_t *nout) {
  const ShValue *v = &c->v;
  char tmp[32];
  const char *z = NULL;
  uint32_t n = 0;
  switch (v->type) {
    case SHALE_INTEGER:
      n = (uint32_t)record_int_to_text(v->i, tmp);
      z = tmp;
      break;
    case SHALE_FLOAT:
      n = (uint32_t)record_real_to_text(v->r, tmp);
      z = tmp;
      break;
    case SHALE_TEXT:
    case SHALE_BLOB:
      z = v->z;
      n = v->n;
      break;
    default:
      if (nout) *nout = 0;
      return NULL;
  }
  if (c->cap < (size_t)n + 1) {
    size_t cap = (size_t)n + 1 < 64 ? 64 : (size_t)n + 1;
    char *b = shale_realloc(c->buf, cap);
    if (!b) return NULL;
    c->buf = b;
    c->cap = cap;
  }
  if (n) memcpy(c->buf, z, n);
  c->buf[n] = 0;
  c->buf16 = 0;
  if (nout) *nout = n;
  return c->buf;
}

static int column_count_impl(shale_stmt *st) { return st ? stmt_ncol(st) : 0; }
static int data_count_impl(shale_stmt *st) { return st && st->has_row ? st->row_n : 0; }

/* The getters of a (non-NULL) value, shared by shale_value_* and the
 * column_* entry points, which inline them (the exported functions are
 * interposable in the shared library, so calls to them stay calls). */
static inline int64_t value_int64_of(const shale_value *v) {
  return v->v.type == SHALE_INTEGER ? v->v.i : record_value_int64(&v->v);
}
static inline double value_double_of(const shale_value *v) {
  return v->v.type == SHALE_FLOAT ? v->v.r : record_value_double(&v->v);
}
static inline const void *value_blob_of(shale_value *v) {
  if (v->v.type == SHALE_BLOB || v->v.type == SHALE_TEXT) return v->v.n ? v->v.z : NULL;
  return cell_text(v, NULL);
}
static inline int value_bytes_of(shale_value *v) {
  if (v->v.type == SHALE_BLOB || v->v.type == SHALE_TEXT) return (int)v->v.n;
  uint32_t n = 0;
  cell_text(v, &n);
  return (int)n;
}

int shale_value_type(shale_value *v) { return v ? v->v.type : SHALE_NULL; }
int shale_value_int(shale_value *v) { return v ? (int)value_int64_of(v) : 0; }
shale_int64 shale_value_int64(shale_value *v) { return v ? value_int64_of(v) : 0; }
double shale_value_double(shale_value *v) { return v ? value_double_of(v) : 0.0; }
const unsigned char *shale_value_text(shale_value *v) {
  return v ? (const unsigned char *)cell_text(v, NULL) : NULL;
}
const void *shale_value_blob(shale_value *v) { return v ? value_blob_of(v) : NULL; }
int shale_value_bytes(shale_value *v) { return v ? value_bytes_of(v) : 0; }

static int column_type_impl(shale_stmt *st, int i) { return cell(st, i)->v.type; }
static int column_int_impl(shale_stmt *st, int i) { return (int)value_int64_of(cell(st, i)); }
static shale_int64 column_int64_impl(shale_stmt *st, int i) { return value_int64_of(cell(st, i)); }
static double column_double_impl(shale_stmt *st, int i) { return value_double_of(cell(st, i)); }
static const unsigned char *column_text_impl(shale_stmt *st, int i) {
  shale_value *c = cell(st, i);
  /* a long text the VM holds NUL-terminated (an overflowing record it
   * gathered, a bound parameter): returned as it is, not copied again */
  if (c->v.type == SHALE_TEXT && c->v.n >= 64 && !(c->v.flags & VAL_OWNED) && !st->row && st->vm &&
      vm_text_terminated(st->vm, c->v.z, c->v.n))
    return (const unsigned char *)c->v.z;
  return (const unsigned char *)cell_text(c, NULL);
}
static const void *column_blob_impl(shale_stmt *st, int i) { return value_blob_of(cell(st, i)); }
static int column_bytes_impl(shale_stmt *st, int i) { return value_bytes_of(cell(st, i)); }
static shale_value *column_value_impl(shale_stmt *st, int i) { return cell(st, i); }

static const ResultCol *result_col(shale_stmt *st, int i) {
  if (!st || stmt_is_rows(st) || i < 0 || i >= st->cs.ncol || !st->cs.cols) return NULL;
  return &st->cs.cols[i];
}

static const char *column_name_impl(shale_stmt *st, int i) {
  if (!st || i < 0 || i >= stmt_ncol(st)) return NULL;
  if (stmt_is_rows(st)) return st->rows.names ? st->rows.names[i] : NULL;
  const ResultCol *c = result_col(st, i);
  return c ? c->name : NULL;
}
static const char *column_decltype_impl(shale_stmt *st, int i) {
  const ResultCol *c = result_col(st, i);
  return c ? c->decltype : NULL;
}
static const char *column_table_name_impl(shale_stmt *st, int i) {
  const ResultCol *c = result_col(st, i);
  return c ? c->table : NULL;
}
static const char *column_origin_name_impl(shale_stmt *st, int i) {
  const ResultCol *c = result_col(st, i);
  return c ? c->origin : NULL;
}
static const char *column_database_name_impl(shale_stmt *st, int i) {
  const ResultCol *c = result_col(st, i);
  return c ? c->db : NULL;
}

/* ---------------------------------------------------------------- binding */

static int bind_check(shale_stmt *st, int i) {
  if (!st) return SHALE_MISUSE;
  if (st->active || st->halted) {
    api_error(st->db, SHALE_MISUSE, "bad parameter or other API misuse");
    return SHALE_MISUSE;
  }
  if (i < 1 || i > st->nvar) {
    api_error(st->db, SHALE_RANGE, "column index out of range");
    return SHALE_RANGE;
  }
  var_release(st, i);
  return SHALE_OK;
}

static int bind_null_impl(shale_stmt *st, int i) { return bind_check(st, i); }

static int bind_int64_impl(shale_stmt *st, int i, shale_int64 v) {
  int rc = bind_check(st, i);
  if (rc == SHALE_OK) value_set_int(&st->vars[i], v);
  return rc;
}
static int bind_int_impl(shale_stmt *st, int i, int v) { return bind_int64_impl(st, i, v); }

static int bind_double_impl(shale_stmt *st, int i, double v) {
  int rc = bind_check(st, i);
  if (rc == SHALE_OK) {
    if (v != v)
      value_set_null(&st->vars[i]); /* NaN binds as NULL, as SQLite */
    else
      value_set_real(&st->vars[i], v);
  }
  return rc;
}

/* Copy len bytes (zeros when z is NULL) and a NUL into parameter buffer b,
 * growing it when it is too short (z may lie in b itself: a new block is
 * filled before the old one goes); a buffer over 64 KiB is given back when
 * the value needs less than an eighth of it. NULL when out of memory (b
 * unchanged). */
static char *var_buf(ApiVarBuf *b, const void *z, size_t len) {
  size_t need = len + 1;
  if (b->cap < need || (b->cap > 65536 && need < b->cap / 8)) {
    size_t cap = need < 32 ? 32 : need;
    if (b->cap < need && cap < (size_t)b->cap * 2) cap = (size_t)b->cap * 2; /* growing */
    char *nz = shale_malloc(cap);
    if (!nz) return NULL;
    if (len && z) memcpy(nz, z, len);
    shale_free(b->z);
    b->z = nz;
    b->cap = (uint32_t)cap;
  } else if (len && z) {
    memmove(b->z, z, len);
  }
  if (!z) memset(b->z, 0, len);
  b->z[len] = 0;
  return b->z;
}

static int bind_bytes(shale_stmt *st, int i, const void *z, int n, void (*destroy)(void *),
                      int type) {
  int rc = bind_check(st, i);
  if (rc == SHALE_OK && z && (n < 0 ? strlen(z) : (size_t)n) > (size_t)st->db->set.limits[0]) {
    rc = SHALE_TOOBIG; /* SQLITE_LIMIT_LENGTH */
    api_error(st->db, rc, "string or blob too big");
    z = destroy != SHALE_STATIC && destroy != SHALE_TRANSIENT ? z : NULL;
    if (z) destroy((void *)z);
    return rc;
  }
  if (rc == SHALE_OK && z) {
    /* text keeps every byte given, embedded NULs too, as SQLite (length()
     * and the text functions stop at the first NUL themselves) */
    size_t len = n < 0 ? strlen(z) : (size_t)n;
    char *buf = var_buf(&st->varbuf[i], z, len);
    if (!buf) {
      rc = SHALE_NOMEM;
      api_error(st->db, rc, "out of memory");
    } else if (type == SHALE_TEXT) {
      value_set_text(&st->vars[i], buf, (uint32_t)len);
    } else {
      value_set_blob(&st->vars[i], buf, (uint32_t)len);
    }
  }
  if (destroy != SHALE_STATIC && destroy != SHALE_TRANSIENT && z) destroy((void *)z);
  return rc;
}

static int bind_text_impl(shale_stmt *st, int i, const char *z, int n, void (*destroy)(void *)) {
  return bind_bytes(st, i, z, n, destroy, SHALE_TEXT);
}
static int bind_blob_impl(shale_stmt *st, int i, const void *z, int n, void (*destroy)(void *)) {
  return bind_bytes(st, i, z, n, destroy, SHALE_BLOB);
}

static int bind_zeroblob_impl(shale_stmt *st, int i, int n) {
  int rc = bind_check(st, i);
  if (rc != SHALE_OK) return rc;
  if (n < 0) n = 0;
  char *z = var_buf(&st->varbuf[i], NULL, (size_t)n);
  if (!z) {
    api_error(st->db, SHALE_NOMEM, "out of memory");
    return SHALE_NOMEM;
  }
  value_set_blob(&st->vars[i], z, (uint32_t)n);
  st->varbuf[i].zero = 1;
  return SHALE_OK;
}

static int bind_value_impl(shale_stmt *st, int i, const shale_value *v) {
  if (!v) return bind_null_impl(st, i);
  switch (v->v.type) {
    case SHALE_INTEGER:
      return bind_int64_impl(st, i, v->v.i);
    case SHALE_FLOAT:
      return bind_double_impl(st, i, v->v.r);
    case SHALE_TEXT:
      return bind_text_impl(st, i, v->v.z, (int)v->v.n, SHALE_TRANSIENT);
    case SHALE_BLOB:
      return bind_blob_impl(st, i, v->v.z, (int)v->v.n, SHALE_TRANSIENT);
    default:
      return bind_null_impl(st, i);
  }
}

static int bind_parameter_count_impl(shale_stmt *st) { return st ? st->cs.nvar : 0; }

static const char *bind_parameter_name_impl(shale_stmt *st, int i) {
  if (!st || i < 1 || i > st->cs.nvar || !st->cs.var_names) return NULL;
  return st->cs.var_names[i - 1];
}

static int bind_parameter_index_impl(shale_stmt *st, const char *name) {
  if (!st || !name || !st->cs.var_names) return 0;
  for (int i = 0; i < st->cs.nvar; i++)
    if (st->cs.var_names[i] && strcmp(st->cs.var_names[i], name) == 0) return i + 1;
  return 0;
}

static int clear_bindings_impl(shale_stmt *st) {
  if (!st) return SHALE_OK;
  for (int i = 1; i <= st->nvar; i++) var_release(st, i);
  return SHALE_OK;
}

/* ------------------------------------------------------------------- exec */

static int exec_impl(shale *db, const char *sql, shale_callback cb, void *arg, char **errmsg) {
  if (errmsg) *errmsg = NULL;
  if (!db) return SHALE_MISUSE;
  int rc = SHALE_OK;
  const char *z = sql ? sql : "";
  char **cols = NULL;
  while (*z) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    rc = shale_prepare_v2(db, z, -1, &st, &tail);
    if (rc != SHALE_OK) break;
    if (!st) {
      z = tail && tail > z ? tail : z + strlen(z);
      continue;
    }
    int ncol = column_count_impl(st);
    for (;;) {
      rc = shale_step(st);
      if (rc != SHALE_ROW) break;
      if (!cb) continue;
      if (!cols) {
        cols = shale_malloc(sizeof *cols * (size_t)(2 * ncol + 1));
        if (!cols) {
          rc = SHALE_NOMEM;
          break;
        }
        for (int i = 0; i < ncol; i++) cols[i] = (char *)column_name_impl(st, i);
      }
      for (int i = 0; i < ncol; i++) cols[ncol + i] = (char *)column_text_impl(st, i);
      if (cb(arg, ncol, cols + ncol, cols)) {
        rc = SHALE_ABORT;
        break;
      }
    }
    shale_free(cols);
    cols = NULL;
    if (rc == SHALE_ABORT) {
      shale_finalize(st);
      api_error(db, SHALE_ABORT, "query aborted");
      break;
    }
    if (rc == SHALE_NOMEM) {
      shale_finalize(st);
      api_error(db, SHALE_NOMEM, "out of memory");
      break;
    }
    int r2 = shale_finalize(st);
    if (rc == SHALE_DONE) rc = r2;
    if (rc != SHALE_OK) break;
    z = tail && tail > z ? tail : z + strlen(z);
  }
  if (rc != SHALE_OK && errmsg) *errmsg = util_strdup(shale_errmsg(db));
  return api_rc(db, rc);
}

/* ------------------------------------------------------------------ misc */

/* NULL is a connection that could not be allocated ("out of memory"); a
 * closed one is misuse. The message stays valid until the next call on db. */
const char *shale_errmsg(shale *db) {
  if (!db) return "out of memory";
  if (!api_db_enter(db)) return "bad parameter or other API misuse";
  const char *z = db->err.code == SHALE_OK ? "not an error"
                  : db->err.msg            ? db->err.msg
                                           : shale_errstr(db->err.code);
  api_leave(db);
  return z;
}
int shale_errcode(shale *db) {
  if (!db) return SHALE_NOMEM;
  API_DB_CALL(db, SHALE_MISUSE, db->err.code & 0xff);
}
int shale_extended_errcode(shale *db) {
  if (!db) return SHALE_NOMEM;
  API_DB_CALL(db, SHALE_MISUSE, db->err.code);
}
static int extended_result_codes_impl(shale *db, int onoff) {
  if (!db) return SHALE_MISUSE;
  db->err.mask = onoff ? ~0 : 0xff;
  return SHALE_OK;
}

static int changes_impl(shale *db) { return db ? (int)db->count.changes : 0; }
static shale_int64 changes64_impl(shale *db) { return db ? db->count.changes : 0; }
static int total_changes_impl(shale *db) { return db ? (int)db->count.total_changes : 0; }
static shale_int64 total_changes64_impl(shale *db) { return db ? db->count.total_changes : 0; }
static shale_int64 last_insert_rowid_impl(shale *db) { return db ? db->count.last_rowid : 0; }
static int get_autocommit_impl(shale *db) { return db ? db->txn.autocommit : 0; }

/* Called from any thread while db runs: no lock (as SQLite). */
void shale_interrupt(shale *db) {
  if (api_magic(db) == API_DB_OPEN && db->txn.nactive > 0) db->interrupted = 1;
}

static int stmt_readonly_impl(shale_stmt *st) {
  if (!st) return 1;
  if (st->cs.kind == SQL_STMT_PRAGMA) return st->cs.pragma.value == NULL;
  return st->cs.readonly;
}
static int stmt_busy_impl(shale_stmt *st) { return st && st->active; }
static const char *sql_impl(shale_stmt *st) { return st ? st->sql : NULL; }
static shale *db_handle_impl(shale_stmt *st) { return st ? st->db : NULL; }
shale_stmt *shale_next_stmt(shale *db, shale_stmt *st) {
  if (st && !shale_stmt_live(st)) return NULL;
  API_DB_CALL(db, NULL, st ? st->next : db->stmts);
}

/* sqlite3_complete's rule, trigger bodies included (src/parse/complete.c). */
int shale_complete(const char *z) { return z ? sql_complete(z) : 0; }

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

int shale_column_count(shale_stmt *st) { API_ST_CALL(st, 0, column_count_impl(st)); }

int shale_data_count(shale_stmt *st) { API_ST_CALL(st, 0, data_count_impl(st)); }

int shale_column_type(shale_stmt *st, int i) {
  API_ST_CALL(st, SHALE_NULL, column_type_impl(st, i));
}

int shale_column_int(shale_stmt *st, int i) { API_ST_CALL(st, 0, column_int_impl(st, i)); }

shale_int64 shale_column_int64(shale_stmt *st, int i) {
  API_ST_CALL(st, 0, column_int64_impl(st, i));
}

double shale_column_double(shale_stmt *st, int i) {
  API_ST_CALL(st, 0.0, column_double_impl(st, i));
}

const unsigned char *shale_column_text(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_text_impl(st, i));
}

const void *shale_column_blob(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_blob_impl(st, i));
}

int shale_column_bytes(shale_stmt *st, int i) { API_ST_CALL(st, 0, column_bytes_impl(st, i)); }

shale_value *shale_column_value(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_value_impl(st, i));
}

const char *shale_column_name(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_name_impl(st, i));
}

const char *shale_column_decltype(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_decltype_impl(st, i));
}

const char *shale_column_table_name(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_table_name_impl(st, i));
}

const char *shale_column_origin_name(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_origin_name_impl(st, i));
}

const char *shale_column_database_name(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, column_database_name_impl(st, i));
}

int shale_bind_null(shale_stmt *st, int i) { API_ST_CALL(st, SHALE_MISUSE, bind_null_impl(st, i)); }

int shale_bind_int64(shale_stmt *st, int i, shale_int64 v) {
  API_ST_CALL(st, SHALE_MISUSE, bind_int64_impl(st, i, v));
}

int shale_bind_int(shale_stmt *st, int i, int v) {
  API_ST_CALL(st, SHALE_MISUSE, bind_int_impl(st, i, v));
}

int shale_bind_double(shale_stmt *st, int i, double v) {
  API_ST_CALL(st, SHALE_MISUSE, bind_double_impl(st, i, v));
}

/* A statement that is not live still gets its destructor called, as SQLite. */
static int bind_bytes_entry(shale_stmt *st, int i, const void *z, int n, void (*destroy)(void *),
                            int type) {
  shale *db = api_stmt_enter(st);
  if (!db) {
    if (destroy != SHALE_STATIC && destroy != SHALE_TRANSIENT) destroy((void *)z);
    return SHALE_MISUSE;
  }
  int rc = bind_bytes(st, i, z, n, destroy, type);
  api_leave(db);
  return rc;
}
int shale_bind_text(shale_stmt *st, int i, const char *z, int n, void (*destroy)(void *)) {
  return bind_bytes_entry(st, i, z, n, destroy, SHALE_TEXT);
}
int shale_bind_blob(shale_stmt *st, int i, const void *z, int n, void (*destroy)(void *)) {
  return bind_bytes_entry(st, i, z, n, destroy, SHALE_BLOB);
}

int shale_bind_zeroblob(shale_stmt *st, int i, int n) {
  API_ST_CALL(st, SHALE_MISUSE, bind_zeroblob_impl(st, i, n));
}

/* The ValPtr lives in the parameter's byte buffer (invariant 5). */
static int bind_pointer_impl(shale_stmt *st, int i, void *p, const char *type,
                             void (*destroy)(void *)) {
  int rc = bind_check(st, i);
  ValPtr *vp = rc == SHALE_OK ? (ValPtr *)(void *)var_buf(&st->varbuf[i], NULL, sizeof *vp) : NULL;
  if (!vp) {
    if (rc == SHALE_OK) {
      rc = SHALE_NOMEM;
      api_error(st->db, rc, "out of memory");
    }
    if (destroy) destroy(p);
    return rc;
  }
  *vp = (ValPtr){p, type ? type : "", destroy};
  st->vars[i].flags = VAL_POINTER;
  st->vars[i].z = (const char *)(const void *)vp;
  return SHALE_OK;
}
int shale_bind_pointer(shale_stmt *st, int i, void *p, const char *type, void (*destroy)(void *)) {
  if (!st) {
    if (destroy) destroy(p);
    return SHALE_MISUSE;
  }
  API_ST_CALL(st, SHALE_MISUSE, bind_pointer_impl(st, i, p, type, destroy));
}

/* Each binding of from moves to to (bytes, pointers and all); from's become
 * NULL. SQLite's deprecated sqlite3_transfer_bindings. */
static int transfer_bindings_impl(shale_stmt *from, shale_stmt *to) {
  if (from->nvar != to->nvar) return SHALE_ERROR;
  if (to->active || to->halted || from->active || from->halted) return SHALE_MISUSE;
  for (int i = 1; i <= to->nvar; i++) {
    var_release(to, i);
    ApiVarBuf b = to->varbuf[i];
    to->varbuf[i] = from->varbuf[i];
    from->varbuf[i] = b;
    to->vars[i] = from->vars[i];
    value_set_null(&from->vars[i]); /* its bytes went with the buffer */
  }
  return SHALE_OK;
}
int shale_transfer_bindings(shale_stmt *from, shale_stmt *to) {
  if (!from || !to || shale_db_handle(from) != shale_db_handle(to)) return SHALE_MISUSE;
  API_ST_CALL(to, SHALE_MISUSE, transfer_bindings_impl(from, to));
}

int shale_bind_value(shale_stmt *st, int i, const shale_value *v) {
  API_ST_CALL(st, SHALE_MISUSE, bind_value_impl(st, i, v));
}

int shale_bind_parameter_count(shale_stmt *st) {
  API_ST_CALL(st, 0, bind_parameter_count_impl(st));
}

const char *shale_bind_parameter_name(shale_stmt *st, int i) {
  API_ST_CALL(st, NULL, bind_parameter_name_impl(st, i));
}

int shale_bind_parameter_index(shale_stmt *st, const char *name) {
  API_ST_CALL(st, 0, bind_parameter_index_impl(st, name));
}

int shale_clear_bindings(shale_stmt *st) { API_ST_CALL(st, SHALE_MISUSE, clear_bindings_impl(st)); }

int shale_exec(shale *db, const char *sql, shale_callback cb, void *arg, char **errmsg) {
  if (errmsg) *errmsg = NULL;
  API_DB_CALL(db, SHALE_MISUSE, exec_impl(db, sql, cb, arg, errmsg));
}

int shale_extended_result_codes(shale *db, int onoff) {
  API_DB_CALL(db, SHALE_MISUSE, extended_result_codes_impl(db, onoff));
}

int shale_changes(shale *db) { API_DB_CALL(db, 0, changes_impl(db)); }

shale_int64 shale_changes64(shale *db) { API_DB_CALL(db, 0, changes64_impl(db)); }

int shale_total_changes(shale *db) { API_DB_CALL(db, 0, total_changes_impl(db)); }

shale_int64 shale_total_changes64(shale *db) { API_DB_CALL(db, 0, total_changes64_impl(db)); }

shale_int64 shale_last_insert_rowid(shale *db) { API_DB_CALL(db, 0, last_insert_rowid_impl(db)); }

int shale_get_autocommit(shale *db) { API_DB_CALL(db, 0, get_autocommit_impl(db)); }

int shale_stmt_readonly(shale_stmt *st) { API_ST_CALL(st, 1, stmt_readonly_impl(st)); }

int shale_stmt_busy(shale_stmt *st) { API_ST_CALL(st, 0, stmt_busy_impl(st)); }

const char *shale_sql(shale_stmt *st) { API_ST_CALL(st, NULL, sql_impl(st)); }

shale *shale_db_handle(shale_stmt *st) { API_ST_CALL(st, NULL, db_handle_impl(st)); }
