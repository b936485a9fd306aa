/*
 * api_ext.c -- small native entry points the sqlite3 compatibility layer
 * (compat/) needs beyond SQLite's shape of the API: setting a connection's
 * error, the database file name and read-only state, standalone copies of
 * values (sqlite3_value_dup, and made from scratch for changeset
 * iterators), a value's numeric type, and the statement text
 * with its bound parameters expanded.
 *
 * Owns: nothing beyond what it returns (documented per function in shale.h).
 *
 * Invariants:
 *  1. Additive only: nothing here changes the state api.c keeps except
 *     db->err through api_error.
 *  2. A value from shale_value_dup owns its bytes (one shale_malloc block
 *     for the struct, one for the bytes) and is independent of any statement.
 *  3. shale_expanded_sql renders each bound value as an SQL literal the way
 *     SQLite's sqlite3_expanded_sql does: NULL, integers, reals as %!.15g,
 *     'text' with quotes doubled, x'hex' blobs; unbound parameters are NULL.
 */
#include <stdio.h>
#include <string.h>

#include "api_int.h"

static void set_error_impl(shale *db, int rc, const char *msg) {
  if (!db) return;
  api_error(db, rc, "%s", msg ? msg : shale_errstr(rc));
}

/* The name of database i (0 main, 1 temp, 2.. attached), NULL past them. */
static const char *db_name_impl(shale *db, int i) {
  if (!db || i < 0 || i >= db->ndb) return NULL;
  return api_db_name(db, i);
}

/* Attached and temp databases: their file name as PRAGMA database_list
 * shows it ("" for memory and temp), NULL for an unknown name. */
static const char *db_filename_impl(shale *db, const char *zdb) {
  if (!db) return NULL;
  if (api_is_main(db, zdb)) return db->fullname;
  int i = api_db_index(db, zdb);
  if (i <= 0) return NULL;
  const char *f = api_db_file(db, i);
  return f ? f : "";
}

static int db_readonly_impl(shale *db, const char *zdb) {
  if (!db) return -1;
  if (api_is_main(db, zdb)) return (db->open_flags & SHALE_OPEN_READONLY) ? 1 : 0;
  int i = api_db_index(db, zdb);
  if (i <= 0) return -1;
  Btree *b = api_db_bt(db, i);
  return b && pager_readonly(btree_pager(b)) ? 1 : 0;
}

shale_value *shale_value_dup(const shale_value *v) {
  if (!v) return NULL;
  shale_value *d = shale_malloc(sizeof *d);
  if (!d) return NULL;
  memset(d, 0, sizeof *d);
  d->v = v->v;
  if (v->v.type == SHALE_TEXT || v->v.type == SHALE_BLOB) {
    char *z = shale_malloc((size_t)v->v.n + 1);
    if (!z) {
      shale_free(d);
      return NULL;
    }
    if (v->v.n) memcpy(z, v->v.z, v->v.n);
    z[v->v.n] = 0;
    d->v.z = z;
    d->v.flags = 0;
  }
  return d;
}

shale_value *shale_value_make(int type, shale_int64 i, double r, const void *p, int n) {
  shale_value tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.v.type = SHALE_NULL;
  if (type == SHALE_INTEGER) {
    tmp.v.type = SHALE_INTEGER;
    tmp.v.i = i;
  } else if (type == SHALE_FLOAT) {
    tmp.v.type = SHALE_FLOAT;
    tmp.v.r = r;
  } else if ((type == SHALE_TEXT || type == SHALE_BLOB) && n >= 0) {
    tmp.v.type = (uint8_t)type;
    tmp.v.z = p ? p : "";
    tmp.v.n = (uint32_t)n;
  }
  return shale_value_dup(&tmp);
}

void shale_value_free(shale_value *v) {
  if (!v) return;
  if (v->v.type == SHALE_TEXT || v->v.type == SHALE_BLOB) shale_free((void *)v->v.z);
  shale_free(v->buf);
  shale_free(v);
}

int shale_value_numeric_type(shale_value *v) {
  if (!v) return SHALE_NULL;
  if (v->v.type != SHALE_TEXT) return v->v.type;
  ShValue t = v->v;
  return record_value_numeric_type(&t);
}

/* ---- expanded SQL ---- */

static void append_value(StrBuf *b, const ShValue *v) {
  char tmp[32];
  static const char hex[] = "0123456789abcdef";
  switch (v ? v->type : SHALE_NULL) {
    case SHALE_INTEGER:
      strbuf_append(b, tmp, record_int_to_text(v->i, tmp));
      break;
    case SHALE_FLOAT:
      strbuf_append(b, tmp, record_real_to_text(v->r, tmp));
      break;
    case SHALE_TEXT: {
      strbuf_append(b, "'", 1);
      uint32_t s = 0;
      for (uint32_t i = 0; i < v->n; i++) {
        if (v->z[i] == '\'') {
          strbuf_append(b, v->z + s, i + 1 - s);
          strbuf_append(b, "'", 1);
          s = i + 1;
        }
      }
      strbuf_append(b, v->z + s, v->n - s);
      strbuf_append(b, "'", 1);
      break;
    }
    case SHALE_BLOB:
      strbuf_append(b, "x'", 2);
      for (uint32_t i = 0; i < v->n; i++) {
        char h[2] = {hex[(uint8_t)v->z[i] >> 4], hex[(uint8_t)v->z[i] & 15]};
        strbuf_append(b, h, 2);
      }
      strbuf_append(b, "'", 1);
      break;
    default:
      strbuf_append(b, "NULL", 4);
      break;
  }
}

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (c & 0x80);
}

static char *expanded_sql_impl(shale_stmt *st) {
  if (!st || !st->sql) return NULL;
  const char *z = st->sql;
  size_t n = strlen(z), i = 0, s = 0;
  int maxidx = 0;
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  while (i < n) {
    char c = z[i];
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char end = c == '[' ? ']' : c;
      i++;
      while (i < n && z[i] != end) i++;
      i++;
    } else if (c == '-' && i + 1 < n && z[i + 1] == '-') {
      while (i < n && z[i] != '\n') i++;
    } else if (c == '/' && i + 1 < n && z[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(z[i] == '*' && z[i + 1] == '/')) i++;
      i += 2;
    } else if (c == '?' || c == ':' || c == '@' || c == '$') {
      size_t j = i + 1;
      int idx = 0;
      if (c == '?') {
        while (j < n && z[j] >= '0' && z[j] <= '9') {
          if (idx < 1000000) idx = idx * 10 + (z[j] - '0');
          j++;
        }
        if (j == i + 1) idx = maxidx + 1;
      } else {
        while (j < n && ident_char(z[j])) j++;
        if (j == i + 1) {
          i++;
          continue;
        }
        char name[256];
        size_t len = j - i < sizeof name ? j - i : sizeof name - 1;
        memcpy(name, z + i, len);
        name[len] = 0;
        idx = shale_bind_parameter_index(st, name);
      }
      if (idx > maxidx) maxidx = idx;
      strbuf_append(&b, z + s, i - s);
      const ShValue *v = idx >= 1 && idx <= st->nvar && st->vars ? &st->vars[idx] : NULL;
      if (v && st->varbuf && st->varbuf[idx].zero) { /* as SQLite writes a zeroblob */
        char zb[32];
        snprintf(zb, sizeof zb, "zeroblob(%u)", (unsigned)v->n);
        strbuf_append(&b, zb, strlen(zb));
      } else {
        append_value(&b, v);
      }
      i = s = j;
    } else if (ident_char(c)) {
      while (i < n && ident_char(z[i])) i++;
    } else {
      i++;
    }
  }
  if (i > n) i = n;
  strbuf_append(&b, z + s, n - s);
  return strbuf_finish(&b);
}

static void set_last_insert_rowid_impl(shale *db, shale_int64 rowid) {
  if (db) db->count.last_rowid = rowid;
}

/* sqlite3_db_config(SQLITE_DBCONFIG_ENABLE_FKEY): unlike PRAGMA foreign_keys
 * this also works inside a transaction, as SQLite's flag does; statements
 * compiled under the other setting recompile (api_settings). */
static int foreign_keys_impl(shale *db, int onoff) {
  if (!db) return 0;
  if (onoff >= 0) db->set.foreign_keys = (uint8_t)(onoff != 0);
  return db->set.foreign_keys;
}

/* The value's text form as UTF-16 (be: big-endian), written over v->buf (so
 * it replaces an earlier text pointer of the value, as a conversion does in
 * SQLite; asking again in the same byte order returns the same pointer),
 * NUL-terminated; *nbytes its length. NULL for NULL and on out-of-memory
 * (*nbytes 0). */
const void *shale_value_text16(shale_value *v, int be, int *nbytes) {
  if (nbytes) *nbytes = 0;
  if (!v) return NULL;
  if (v->buf16 == (be ? 2 : 1) && v->buf) { /* converted already: the same pointer */
    if (nbytes) *nbytes = (int)v->n16;
    return v->buf;
  }
  const char *z = (const char *)shale_value_text(v); /* into v->buf */
  if (!z) return NULL;
  size_t n = (size_t)shale_value_bytes(v);
  uint8_t *o = shale_malloc(2 * n + 2);
  if (!o) return NULL;
  size_t m = util_utf8_to_utf16(z, n, be, o);
  o[m] = o[m + 1] = 0;
  shale_free(v->buf);
  v->buf = (char *)o;
  v->cap = 2 * n + 2;
  v->buf16 = be ? 2 : 1;
  v->n16 = (uint32_t)m;
  if (nbytes) *nbytes = (int)m;
  return o;
}

/* Bytes of the value's UTF-16 form: both byte orders have the same length, so
 * a form already made (either order) answers without converting again. */
int shale_value_bytes16(shale_value *v) {
  if (!v) return 0;
  if (v->buf16 && v->buf) return (int)v->n16;
  int n = 0;
  shale_value_text16(v, 0, &n);
  return n;
}

/* sqlite3_txn_state: the transaction state of database zdb (NULL: the
 * highest over all of them), SHALE_TXN_NONE/READ/WRITE, -1 for an unknown
 * name. A database not opened yet (temp) has none. */
static int txn_state_impl(shale *db, const char *zdb) {
  if (!db) return -1;
  int lo = 0, hi = db->ndb - 1;
  if (zdb) {
    lo = hi = api_db_index(db, zdb);
    if (lo < 0) return -1;
  }
  int st = SHALE_TXN_NONE;
  for (int i = lo; i <= hi; i++) {
    Btree *bt = api_db_bt(db, i);
    int s = bt ? btree_txn_state(bt) : PAGER_TXN_NONE;
    int t = s == PAGER_TXN_WRITE  ? SHALE_TXN_WRITE
            : s == PAGER_TXN_READ ? SHALE_TXN_READ
                                  : SHALE_TXN_NONE;
    if (t > st) st = t;
  }
  return st;
}

/* The db_config switches Shale has (SQLite's option numbers): ENABLE_TRIGGER
 * 1003, DQS_DML 1013, DQS_DDL 1014 and ENABLE_VIEW 1015 (CompileEnv);
 * WRITABLE_SCHEMA 1011, LEGACY_ALTER_TABLE 1012 and TRUSTED_SCHEMA 1017 (the
 * pragmas' flags, as in SQLite: the two read and set one bit); DEFENSIVE
 * 1010 (CompileEnv.shadow_ro; writable_schema, still set and reported, then
 * has no effect);
 * ENABLE_LOAD_EXTENSION 1005 (the C call's switch, api_loadext.c);
 * NO_CKPT_ON_CLOSE 1006 (on: closing leaves each WAL file as it is);
 * RESET_DATABASE 1009 (on: VACUUM and VACUUM INTO write an empty database,
 * api_vacuum.c); TRIGGER_EQP 1008 (CompileEnv.trigger_eqp); LEGACY_FILE_FORMAT
 * 1016 (CompileEnv.legacy_file_format: new files get schema format 1);
 * ENABLE_FTS3_TOKENIZER 1004 (on by default, as Debian builds SQLite) and
 * ENABLE_QPSG 1007 (kept and
 * reported: there is no FTS3, and no plan depends on a bound value, so both
 * hold as set). onoff 1/0 sets, < 0 reads; returns the state in force (1
 * on), or -1 for another option. Statements compiled under the other state
 * recompile (api_settings). */
static int db_config_switch_impl(shale *db, int op, int onoff) {
  uint32_t pf = !db          ? 0
                : op == 1011 ? API_PF_WRITABLE_SCHEMA
                : op == 1012 ? API_PF_LEGACY_ALTER_TABLE
                : op == 1017 ? API_PF_TRUSTED_SCHEMA
                : op == 1010 ? API_PF_DEFENSIVE
                             : 0;
  if (pf) {
    if (onoff > 0) db->set.pflags |= pf;
    if (onoff == 0) db->set.pflags &= ~pf;
    return (db->set.pflags & pf) != 0;
  }
  if (db && op == 1005) return api_loadext_switch(db, onoff);
  if (db && op == 1006) {
    if (onoff >= 0) db->cfg.no_ckpt_on_close = onoff != 0;
    return db->cfg.no_ckpt_on_close;
  }
  uint8_t *on = !db          ? NULL
                : op == 1007 ? &db->cfg.qpsg
                : op == 1008 ? &db->cfg.trigger_eqp
                : op == 1009 ? &db->cfg.reset_database
                : op == 1016 ? &db->cfg.legacy_format
                             : NULL;
  if (on) {
    if (onoff >= 0) *on = onoff != 0;
    return *on;
  }
  uint8_t *off = !db          ? NULL
                 : op == 1003 ? &db->cfg.no_triggers
                 : op == 1004 ? &db->cfg.no_fts3_tokenizer
                 : op == 1013 ? &db->cfg.no_dqs_dml
                 : op == 1014 ? &db->cfg.no_dqs_ddl
                 : op == 1015 ? &db->cfg.no_views
                              : NULL;
  if (!off) return -1;
  if (onoff >= 0) *off = onoff == 0;
  return !*off;
}

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

void shale_set_error(shale *db, int rc, const char *msg) {
  if (!api_db_enter(db)) return;
  set_error_impl(db, rc, msg);
  api_leave(db);
}

const char *shale_db_filename(shale *db, const char *zdb) {
  API_DB_CALL(db, NULL, db_filename_impl(db, zdb));
}

static void *db_vfs_impl(shale *db, const char *zdb) {
  int i = api_is_main(db, zdb) ? 0 : api_db_index(db, zdb);
  Btree *b = i < 0 ? NULL : api_db_bt(db, i);
  return b ? (void *)pager_vfs(btree_pager(b)) : NULL;
}

void *shale_db_vfs(shale *db, const char *zdb) { API_DB_CALL(db, NULL, db_vfs_impl(db, zdb)); }

static Pager *db_pager(shale *db, const char *zdb) {
  int i = !zdb || api_is_main(db, zdb) ? 0 : api_db_index(db, zdb);
  Btree *b = i < 0 ? NULL : api_db_bt(db, i);
  return b ? btree_pager(b) : NULL;
}

static void *db_file_impl(shale *db, const char *zdb, int journal) {
  Pager *p = db_pager(db, zdb);
  return !p ? NULL : journal ? (void *)pager_journal_file(p) : (void *)pager_file(p);
}

void *shale_db_file(shale *db, const char *zdb, int journal) {
  API_DB_CALL(db, NULL, db_file_impl(db, zdb, journal));
}

static int file_control_impl(shale *db, const char *zdb, int op, void *arg) {
  Pager *p = db_pager(db, zdb);
  return p ? os_file_control(pager_file(p), op, arg) : SHALE_ERROR;
}

int shale_file_control(shale *db, const char *zdb, int op, void *arg) {
  API_DB_CALL(db, SHALE_MISUSE, file_control_impl(db, zdb, op, arg));
}

int shale_db_readonly(shale *db, const char *zdb) {
  API_DB_CALL(db, -1, db_readonly_impl(db, zdb));
}

char *shale_expanded_sql(shale_stmt *st) { API_ST_CALL(st, NULL, expanded_sql_impl(st)); }

void shale_set_last_insert_rowid(shale *db, shale_int64 rowid) {
  if (!api_db_enter(db)) return;
  set_last_insert_rowid_impl(db, rowid);
  api_leave(db);
}

int shale_foreign_keys(shale *db, int onoff) { API_DB_CALL(db, 0, foreign_keys_impl(db, onoff)); }

void *shale_db_userptr(shale *db) { return db ? db->userptr : NULL; }
void shale_db_set_userptr(shale *db, void *p) {
  if (db) db->userptr = p;
}
void *shale_stmt_userptr(shale_stmt *st) { return st ? st->userptr : NULL; }
void shale_stmt_set_userptr(shale_stmt *st, void *p) {
  if (st) st->userptr = p;
}

const char *shale_db_name(shale *db, int i) { API_DB_CALL(db, NULL, db_name_impl(db, i)); }

int shale_txn_state(shale *db, const char *zdb) { API_DB_CALL(db, -1, txn_state_impl(db, zdb)); }

/* Every database in a write transaction writes its dirty pages now; a busy
 * one does not stop the others (SQLite's order: BUSY reported at the end,
 * any other error at once). */
static int cacheflush_impl(shale *db) {
  int busy = 0;
  for (int i = 0; i < db->ndb; i++) {
    Btree *bt = api_db_bt(db, i);
    if (!bt) continue;
    int rc = pager_cacheflush(btree_pager(bt));
    if (rc == SHALE_BUSY) {
      busy = 1;
    } else if (rc != SHALE_OK) {
      api_error(db, rc, "%s", shale_errstr(rc));
      return rc;
    }
  }
  if (busy) api_error(db, SHALE_BUSY, "%s", shale_errstr(SHALE_BUSY));
  return busy ? SHALE_BUSY : SHALE_OK;
}
int shale_db_cacheflush(shale *db) { API_DB_CALL(db, SHALE_MISUSE, cacheflush_impl(db)); }

static int release_memory_impl(shale *db) {
  for (int i = 0; i < db->ndb; i++) {
    Btree *bt = api_db_bt(db, i);
    if (bt) pager_shrink(btree_pager(bt));
  }
  return SHALE_OK;
}

int shale_db_release_memory(shale *db) { API_DB_CALL(db, SHALE_MISUSE, release_memory_impl(db)); }

/* db_config MAINDBNAME: database 0 is called name (a copy; NULL: "main")
 * from now on; "main" still names it too (api_db_index). */
static int db_config_maindbname_impl(shale *db, const char *name) {
  if (!db) return SHALE_MISUSE;
  char *copy = NULL;
  if (name && !(copy = util_mprintf("%s", name))) return SHALE_NOMEM;
  shale_free(db->cfg.main_name);
  db->cfg.main_name = copy;
  api_expire(db); /* compiled programs hold the old name */
  return SHALE_OK;
}

int shale_db_config_maindbname(shale *db, const char *name) {
  API_DB_CALL(db, SHALE_MISUSE, db_config_maindbname_impl(db, name));
}

int shale_db_config_switch(shale *db, int op, int onoff) {
  API_DB_CALL(db, -1, db_config_switch_impl(db, op, onoff));
}
