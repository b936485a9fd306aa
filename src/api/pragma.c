/*
 * pragma.c -- the PRAGMA statements, run natively by the API layer
 * (CompiledStmt.pragma): SQLite's result rows and column names.
 *
 * Owns: nothing beyond the rows it adds to the caller's ApiRows.
 *
 * Invariants:
 *  1. The column names of a pragma's result are decided at prepare time from
 *     the request alone (api_pragma_columns); api_pragma_run only adds rows.
 *  2. A pragma that reads or writes the file runs in the connection's open
 *     transaction, or in one of its own (committed before returning).
 *  3. Unknown pragmas, and known ones given an unusable argument, return no
 *     rows and no error, as SQLite does.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compile/analyze.h"
#include "api_int.h"

enum {
  PR_UNKNOWN,
#define PRAGMA(name, id, ncol, cols, when_set, needs_arg, tab) PR_##id,
#include "../compile/pragma.def"
};

#define PRAGMA_COLS(id, ...) static const char *const id[] = {__VA_ARGS__};
#include "../compile/pragma.def"

typedef struct PragmaDef {
  const char *name;
  int id;
  int ncol;                 /* columns when read (or when it returns rows) */
  const char *const *names; /* NULL: one column named after the pragma */
  uint8_t rows_when_set;    /* setting it still returns its value */
  uint8_t needs_arg;        /* without an argument it does nothing */
} PragmaDef;

/* pragma.def's list: SQLite's pragma_list order (alphabetical) */
static const PragmaDef defs[] = {
#define PRAGMA(name, id, ncol, cols, when_set, needs_arg, tab) \
  {#name, PR_##id, ncol, cols, when_set, needs_arg},
#include "../compile/pragma.def"
};

static const PragmaDef *find_def(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (util_stricmp(defs[i].name, name) == 0) return &defs[i];
  return NULL;
}

void api_pragma_columns(const PragmaReq *req, int *ncol, const char *const **names) {
  *ncol = 0;
  *names = NULL;
  const PragmaDef *d = find_def(req->name);
  if (!d || req->ignored) return;
  /* as SQLite: the columns are named even when no row can come (a pragma
   * that needs an argument and has none) */
  if (req->value && !d->rows_when_set && !d->needs_arg) return;
  if (d->id == PR_TABLE_LIST) {
    *ncol = d->ncol;
    *names = d->names;
    return;
  }
  *ncol = d->ncol;
  *names = d->names ? d->names : &d->name;
}

/* ---- helpers ---- */

static int add_int(ApiRows *r, int64_t i) {
  ShValue v;
  value_set_int(&v, i);
  return api_rows_add(r, &v);
}

static int add_text(ApiRows *r, const char *z) {
  ShValue v;
  if (z)
    value_set_text(&v, z, (uint32_t)strlen(z));
  else
    value_set_null(&v);
  return api_rows_add(r, &v);
}

static void set_text(ShValue *v, const char *z) {
  if (z)
    value_set_text(v, z, (uint32_t)strlen(z));
  else
    value_set_null(v);
}

static int add_seq_name(ApiRows *out, int seq, const char *name) {
  ShValue v[2];
  value_set_int(&v[0], seq);
  set_text(&v[1], name);
  return api_rows_add(out, v);
}

/* One row of PRAGMA function_list: name, builtin, type (s scalar, a
 * aggregate, w window), enc, narg, flags (SQLite's bits for deterministic,
 * direct-only and innocuous). */
static int function_list_row(void *arg, const FuncDef *d) {
  ShValue v[6];
  unsigned flags = (d->flags & FUNC_DETERMINISTIC ? 0x800u : 0) |
                   (d->flags & FUNC_DIRECTONLY ? 0x80000u : 0) |
                   (d->flags & FUNC_INNOCUOUS ? 0x200000u : 0);
  if (d->flags & FUNC_BUILTIN) {
    /* SQLite 3.40.1's built-ins: all innocuous but the JSON functions and
     * load_extension (direct-only); its aggregates are not deterministic
     * (json_group_* are, with SQLITE_RESULT_SUBTYPE), nor are
     * current_*() and sqlite_version()/sqlite_source_id() */
    const char *n = d->name;
    int json = !util_strnicmp(n, "json", 4) || n[0] == '-';
    if (!util_stricmp(n, "load_extension"))
      flags = 0x80000u;
    else if (json && func_is_aggregate(d))
      flags = 0x100800u;
    else
      flags = (json ? 0 : 0x200000u) | (func_is_deterministic(d) ? 0x800u : 0);
  }
  char *name = util_mprintf("%s", d->name); /* SQLite keeps function names in lower case */
  if (!name) return SHALE_NOMEM;
  for (char *z = name; *z; z++)
    if (*z >= 'A' && *z <= 'Z') *z = (char)(*z - 'A' + 'a');
  set_text(&v[0], name);
  value_set_int(&v[1], (d->flags & FUNC_BUILTIN) != 0);
  set_text(&v[2], !func_is_aggregate(d) ? "s" : d->inverse || d->value ? "w" : "a");
  set_text(&v[3], "utf8");
  value_set_int(&v[4], d->nargs);
  value_set_int(&v[5], flags);
  int rc = api_rows_add((ApiRows *)arg, v);
  shale_free(name);
  return rc;
}

/* SQLite's sqlite3Atoi: an optional sign and decimal digits (up to 10,
 * within 32 bits), or 0x and up to 8 hex digits below 0x80000000; anything
 * after the number is ignored; no number or out of range gives 0. */
static int64_t parse_int(const char *z) {
  int neg = 0;
  if (*z == '-') {
    neg = 1;
    z++;
  } else if (*z == '+') {
    z++;
  } else if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X') && isxdigit((unsigned char)z[2])) {
    uint32_t u = 0;
    int i;
    z += 2;
    while (*z == '0') z++;
    for (i = 0; i < 8 && isxdigit((unsigned char)z[i]); i++)
      u = u * 16 + (uint32_t)(isdigit((unsigned char)z[i]) ? z[i] - '0' : (z[i] | 0x20) - 'a' + 10);
    return (u & 0x80000000u) == 0 && !isxdigit((unsigned char)z[i]) ? (int64_t)u : 0;
  }
  if (!isdigit((unsigned char)*z)) return 0;
  while (*z == '0') z++;
  int64_t v = 0;
  int i;
  for (i = 0; i < 11 && isdigit((unsigned char)z[i]); i++) v = v * 10 + (z[i] - '0');
  if (i > 10 || v - neg > 2147483647) return 0;
  return neg ? -v : v;
}

/* SQLite's sqlite3DecOrHexToI64 as PRAGMA mmap_size uses it: leading
 * spaces, an optional sign and decimal digits (the prefix counts; overflow
 * saturates), or 0x and up to 16 hex digits; no number gives 0. */
static int64_t parse_i64(const char *z) {
  while (*z == ' ' || *z == '\t') z++;
  if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) {
    uint64_t u = 0;
    z += 2;
    while (*z == '0') z++;
    for (int i = 0; i < 16 && isxdigit((unsigned char)z[i]); i++)
      u = u * 16 + (uint64_t)(isdigit((unsigned char)z[i]) ? z[i] - '0' : (z[i] | 0x20) - 'a' + 10);
    return (int64_t)u;
  }
  int neg = 0;
  if (*z == '-' || *z == '+') neg = *z++ == '-';
  uint64_t v = 0;
  for (; isdigit((unsigned char)*z); z++) {
    if (v > (UINT64_C(0x7fffffffffffffff) - 9) / 10) return neg ? INT64_MIN : INT64_MAX;
    v = v * 10 + (uint64_t)(*z - '0');
  }
  return neg ? -(int64_t)v : (int64_t)v;
}

/* SQLite's boolean pragma values (getSafetyLevel without full/extra): a
 * leading digit gives the number's low byte != 0; on/yes/true 1,
 * off/no/false 0; anything else 0. */
/* SQLite's sqlite3GetBoolean: a number (its low byte), on/yes/true,
 * off/no/false; anything else is dflt. */
static int parse_bool_dflt(const char *z, int dflt) {
  if (isdigit((unsigned char)*z)) return (uint8_t)parse_int(z) != 0;
  if (!util_stricmp(z, "on") || !util_stricmp(z, "yes") || !util_stricmp(z, "true")) return 1;
  if (!util_stricmp(z, "off") || !util_stricmp(z, "no") || !util_stricmp(z, "false")) return 0;
  return dflt;
}
static int parse_bool(const char *z) { return parse_bool_dflt(z, 0); }

/* PRAGMA temp_store_directory: process-wide, as SQLite's
 * sqlite3_temp_directory; reported only (temp files go where the VFS puts
 * them). The value is checked when the statement is prepared
 * (sql_pragma_prepare_check: "not a writable directory"). */
static pthread_mutex_t temp_dir_mu = PTHREAD_MUTEX_INITIALIZER;
static char *temp_dir;

static int temp_dir_pragma(shale *db, const char *val, ApiRows *out) {
  int rc = SHALE_OK;
  pthread_mutex_lock(&temp_dir_mu);
  if (val) {
    char *z = val[0] ? util_strdup(val) : NULL;
    if (val[0] && !z) {
      rc = SHALE_NOMEM;
    } else {
      shale_free(temp_dir);
      temp_dir = z;
    }
  } else if (temp_dir) {
    rc = add_text(out, temp_dir);
  }
  pthread_mutex_unlock(&temp_dir_mu);
  if (rc) api_error(db, rc, "%s", shale_errstr(rc));
  return rc;
}

/* The flag pragmas (SQLite's db->flags bits) and their API_PF_* bit. */
static uint32_t flag_bit(int id) {
  switch (id) {
    case PR_AUTOMATIC_INDEX:
      return API_PF_AUTOMATIC_INDEX;
    case PR_CELL_SIZE_CHECK:
      return API_PF_CELL_SIZE_CHECK;
    case PR_CHECKPOINT_FULLFSYNC:
      return API_PF_CHECKPOINT_FULLFSYNC;
    case PR_COUNT_CHANGES:
      return API_PF_COUNT_CHANGES;
    case PR_EMPTY_RESULT_CALLBACKS:
      return API_PF_EMPTY_RESULT_CALLBACKS;
    case PR_FULL_COLUMN_NAMES:
      return API_PF_FULL_COLUMN_NAMES;
    case PR_FULLFSYNC:
      return API_PF_FULLFSYNC;
    case PR_IGNORE_CHECK_CONSTRAINTS:
      return API_PF_IGNORE_CHECKS;
    case PR_LEGACY_ALTER_TABLE:
      return API_PF_LEGACY_ALTER_TABLE;
    case PR_QUERY_ONLY:
      return API_PF_QUERY_ONLY;
    case PR_READ_UNCOMMITTED:
      return API_PF_READ_UNCOMMITTED;
    case PR_SHORT_COLUMN_NAMES:
      return API_PF_SHORT_COLUMN_NAMES;
    case PR_TRUSTED_SCHEMA:
      return API_PF_TRUSTED_SCHEMA;
    case PR_WRITABLE_SCHEMA:
      return API_PF_WRITABLE_SCHEMA;
    default:
      return 0;
  }
}

/* PRAGMA cache_spill's answer: SQLite's spill threshold in pages, the
 * larger of the cache's size in pages (a negative cache_size is KiB over
 * the page plus SQLite's 136 bytes of per-page overhead) and the value
 * last set. */
static int64_t spill_pages(shale *db) {
  int64_t cs = pager_cache_size(btree_pager(db->dbx[0].bt));
  int64_t pages = cs >= 0 ? cs : (-1024 * cs) / ((int64_t)btree_page_size(db->dbx[0].bt) + 136);
  int64_t spill = db->set.cache_spill;
  if (spill < 0) spill = (-1024 * spill) / ((int64_t)btree_page_size(db->dbx[0].bt) + 136);
  return pages > spill ? pages : spill;
}

/* PRAGMA data_version: 1 plus the changes other connections committed
 * since this connection opened the database (its own commits do not
 * count, as SQLite's). */
static int data_version_pragma(shale *db, ApiRows *out) {
  int began;
  int rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  rc = add_int(out, 1 + (int64_t)pager_ext_version(btree_pager(db->dbx[0].bt)));
  return api_txn_end(db, began, rc);
}

/* PRAGMA default_cache_size: the header's value (absolute), or SQLite's
 * default -2000 when it is 0; setting writes |N| and sets cache_size. */
static int default_cache_pragma(shale *db, const char *val, ApiRows *out) {
  int began, rc;
  if (val) {
    int64_t n = parse_int(val);
    if (n < 0) n = -n;
    if (n > 0x7fffffff) n = 0x7fffffff;
    rc = api_txn_begin(db, BTREE_TXN_WRITE, &began);
    if (rc) return rc;
    rc = btree_update_meta(db->dbx[0].bt, BTREE_META_DEFAULT_CACHE, (uint32_t)n);
    if (rc)
      api_error(db, rc, "%s", shale_errstr(rc));
    else
      pager_set_cache_size(btree_pager(db->dbx[0].bt), (int)n);
    return api_txn_end(db, began, rc);
  }
  rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  uint32_t x = 0;
  if (btree_page_count(db->dbx[0].bt))
    rc = btree_get_meta(db->dbx[0].bt, BTREE_META_DEFAULT_CACHE, &x);
  int32_t m = (int32_t)x;
  if (rc == SHALE_OK) rc = add_int(out, m > 0 ? m : m < 0 ? -(int64_t)m : -2000);
  return api_txn_end(db, began, rc);
}

static const char *const journal_names[] = {"delete",   "persist", "off",
                                            "truncate", "memory",  "wal"};

static int meta_pragma(shale *db, const PragmaReq *req, int idx, ApiRows *out) {
  int began, rc;
  if (req->value) {
    rc = api_txn_begin(db, BTREE_TXN_WRITE, &began);
    if (rc) return rc;
    rc = btree_update_meta(db->dbx[0].bt, idx, (uint32_t)(int32_t)parse_int(req->value));
    if (rc) api_error(db, rc, "%s", shale_errstr(rc));
    return api_txn_end(db, began, rc);
  }
  rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  uint32_t x = 0;
  rc = btree_get_meta(db->dbx[0].bt, idx, &x);
  if (rc == SHALE_OK) rc = add_int(out, idx == BTREE_META_FREE_COUNT ? (int64_t)x : (int32_t)x);
  if (rc) api_error(db, rc, "%s", shale_errstr(rc));
  return api_txn_end(db, began, rc);
}

/* ---- auto_vacuum / incremental_vacuum (helper E's section) ---- */

/* SQLite's getAutoVacuum: none/full/incremental or 0..2; anything else 0. */
static int auto_vacuum_mode(const char *z) {
  if (!util_stricmp(z, "none")) return 0;
  if (!util_stricmp(z, "full")) return 1;
  if (!util_stricmp(z, "incremental")) return 2;
  int64_t i = parse_int(z);
  return i >= 0 && i <= 2 ? (int)i : 0;
}

/* Reading gives 0/1/2. Setting: on an empty database the mode is written
 * into the new page 1 (the file is created, as SQLite does for full and
 * incremental); on a file with content only full <-> incremental changes
 * (header offset 64), anything else is remembered for VACUUM. */
/* PRAGMA encoding: the main database's text encoding; set (as SQLite) only
 * while the database is empty, for it and the temp database. */
static int encoding_pragma(shale *db, const char *val, ApiRows *out) {
  static const struct {
    const char *name;
    uint8_t enc;
  } encs[] = {{"UTF-8", RECORD_ENC_UTF8},         {"UTF8", RECORD_ENC_UTF8},
              {"UTF-16le", RECORD_ENC_UTF16LE},   {"UTF-16be", RECORD_ENC_UTF16BE},
              {"UTF16le", RECORD_ENC_UTF16LE},    {"UTF16be", RECORD_ENC_UTF16BE},
              {"UTF-16", RECORD_ENC_UTF16NATIVE}, {"UTF16", RECORD_ENC_UTF16NATIVE}};
  if (!val) {
    static const char *const names[] = {"UTF-8", "UTF-8", "UTF-16le", "UTF-16be"};
    return add_text(out, names[db->text_enc <= 3 ? db->text_enc : 1]);
  }
  if (db->dbx[0].schema && db->dbx[0].schema->s->cookie != 0) return SHALE_OK; /* ignored */
  for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++) {
    if (!util_stricmp(val, encs[i].name)) return shale_db_new_encoding(db, encs[i].enc);
  }
  return SHALE_OK; /* the compiler refused other names */
}

int shale_db_new_encoding(shale *db, int enc) {
  if (enc < RECORD_ENC_UTF8 || enc > RECORD_ENC_UTF16BE) return SHALE_MISUSE;
  if (db->dbx[0].schema && db->dbx[0].schema->s->cookie != 0)
    return SHALE_OK; /* the file's stays */
  db->text_enc = (uint8_t)enc;
  for (int k = 0; k < db->ndb && k < 2; k++)
    if (api_db_bt(db, k)) btree_set_new_encoding(api_db_bt(db, k), enc);
  if (db->dbx[0].schema) db->dbx[0].schema->s->text_enc = enc;
  return SHALE_OK;
}

static int auto_vacuum_pragma(shale *db, const char *val, ApiRows *out) {
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  if (!val) {
    rc = add_int(out, btree_get_auto_vacuum(db->dbx[0].bt));
    return api_txn_end(db, began, rc);
  }
  int mode = auto_vacuum_mode(val);
  if (btree_set_auto_vacuum(db->dbx[0].bt, mode) != SHALE_OK || mode == 0)
    return api_txn_end(db, began, SHALE_OK);
  int began_w; /* 0: the read transaction above is upgraded */
  rc = api_txn_begin(db, BTREE_TXN_WRITE, &began_w);
  if (rc) {
    api_txn_end(db, began, rc);
    return rc;
  }
  uint32_t top = 0;
  rc = btree_get_meta(db->dbx[0].bt, BTREE_META_LARGEST_ROOT, &top);
  if (rc == SHALE_OK && top != 0)
    rc = btree_update_meta(db->dbx[0].bt, BTREE_META_INCR_VACUUM, (uint32_t)(mode - 1));
  if (rc) api_error(db, rc, "%s", shale_errstr(rc));
  return api_txn_end(db, began, rc);
}

/* PRAGMA incremental_vacuum(N): free up to N pages (N <= 0 or none: all)
 * from the end of an auto-vacuum file. No rows. */
static int incremental_vacuum_pragma(shale *db, const char *val) {
  int64_t n = val ? parse_int(val) : 0;
  if (n <= 0 || n > 0x7fffffff) n = 0x7fffffff;
  int began, rc = api_txn_begin(db, BTREE_TXN_WRITE, &began);
  if (rc) return rc;
  for (int64_t i = 0; i < n && rc == SHALE_OK; i++) rc = btree_incr_vacuum(db->dbx[0].bt);
  if (rc == SHALE_DONE) rc = SHALE_OK;
  if (rc) {
    const char *m = btree_errmsg(db->dbx[0].bt);
    api_error(db, rc, "%s", m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
  }
  return api_txn_end(db, began, rc);
}

/* Compile "SELECT * FROM view" into *cs (its result columns are the
 * view's); on failure the connection's error is set. */
/* Undo (undo = 1) or redo api_pragma_run's stand-in of database i for
 * main (main's own Btree and schema wait in db->standin). */
static void standin_undo(shale *db, int i, int undo) {
  ApiDb *x = &db->dbx[i];
  if (undo) {
    x->bt = db->dbx[0].bt;
    x->schema = db->dbx[0].schema;
    db->dbx[0].bt = db->standin.bt;
    db->dbx[0].schema = db->standin.schema;
  } else {
    db->standin.bt = db->dbx[0].bt;
    db->standin.schema = db->dbx[0].schema;
    db->dbx[0].bt = x->bt;
    db->dbx[0].schema = x->schema;
    x->bt = NULL;
    x->schema = NULL;
  }
}

/* "name" with its double quotes doubled, appended at sql + *k. */
static void put_quoted(char *sql, size_t *k, const char *name) {
  sql[(*k)++] = '"';
  for (const char *z = name; *z; z++) {
    sql[(*k)++] = *z;
    if (*z == '"') sql[(*k)++] = '"';
  }
  sql[(*k)++] = '"';
}

/* Compile SELECT * FROM the view vw of database idb (the pragma's: main,
 * or the one standing in for it), in the connection's real layout, so the
 * view's own qualified names ("aux.t") resolve. */
static int view_compile_in(shale *db, int idb, const View *vw, CompiledStmt *cs) {
  int standin = db->pragma_standin;
  if (idb == 0 && standin > 0) idb = standin;
  const char *dbname = idb > 0 ? api_db_name(db, idb) : NULL;
  size_t n = strlen(vw->name) + (dbname ? strlen(dbname) : 0);
  char *sql = shale_malloc(2 * n + 24);
  if (!sql) return SHALE_NOMEM;
  size_t k = 14;
  memcpy(sql, "SELECT * FROM ", k);
  if (dbname) {
    put_quoted(sql, &k, dbname);
    sql[k++] = '.';
  }
  put_quoted(sql, &k, vw->name);
  sql[k] = 0;
  if (standin > 0) standin_undo(db, standin, 1);
  db->pragma_standin = 0;
  CompileEnv env;
  api_compile_env(db, &env);
  env.auth = NULL;
  memset(cs, 0, sizeof *cs);
  char *msg = NULL;
  int rc = compile_sql(&env, sql, -1, cs, NULL, &msg);
  if (standin > 0) standin_undo(db, standin, 0);
  db->pragma_standin = standin;
  shale_free(sql);
  if (rc != SHALE_OK) api_error(db, rc, "%s", msg ? msg : shale_errstr(rc));
  shale_free(msg);
  return rc;
}

static int view_compile(shale *db, const View *vw, CompiledStmt *cs) {
  return view_compile_in(db, 0, vw, cs);
}

/* A view's columns: their names and declared types. */
static int view_info(shale *db, const View *vw, int extended, ApiRows *out) {
  CompiledStmt cs;
  int rc = view_compile(db, vw, &cs);
  if (rc != SHALE_OK) return rc;
  for (int i = 0; i < cs.ncol && rc == SHALE_OK; i++) {
    ShValue v[7];
    value_set_int(&v[0], i);
    set_text(&v[1], cs.cols[i].name);
    set_text(&v[2], cs.cols[i].decltype ? cs.cols[i].decltype : "");
    value_set_int(&v[3], 0);
    value_set_null(&v[4]);
    value_set_int(&v[5], 0);
    value_set_int(&v[6], 0);
    rc = api_rows_add(out, v);
  }
  (void)extended;
  compile_stmt_free(&cs);
  return rc;
}

/* A virtual table's declared columns: compiling a read of it connects it
 * (xConnect if it is not yet: the error is the connection's). */
static const Table *vtab_columns(shale *db, const Table *t) {
  const View fake = {.name = t->name};
  CompiledStmt cs;
  if (view_compile(db, &fake, &cs) != SHALE_OK) return NULL;
  compile_stmt_free(&cs);
  const Table *d = compile_vtab_declared_table(vtab_find(&db->vtabs, 0, t->name));
  if (!d) api_error(db, SHALE_ERROR, "no such module: %s", t->vtab_module);
  return d;
}

/* *out: the declared columns of eponymous table name (json_each,
 * pragma_NAME, a module's own), connected as a read of it connects it, or
 * NULL when name is no such module. SHALE_OK or the connection's error. */
static int eponymous_columns(shale *db, const char *name, const Table **out) {
  *out = NULL;
  const VtabModule *m = vtab_module_find(&db->vtabs, name);
  if (m && (!m->m->xConnect || (m->m->xCreate && m->m->xCreate != m->m->xConnect))) return SHALE_OK;
  if (!m && !(util_strnicmp(name, "pragma_", 7) == 0 && compile_sql_pragma_tab(name + 7)))
    return SHALE_OK;
  const View fake = {.name = name};
  CompiledStmt cs;
  int rc = view_compile(db, &fake, &cs);
  if (rc != SHALE_OK) return rc;
  compile_stmt_free(&cs);
  const VtabTable *vt = vtab_find(&db->vtabs, 0, name);
  if (vt && vt->eponymous) *out = compile_vtab_declared_table(vt);
  return SHALE_OK;
}

static int table_info(shale *db, const char *name, int extended, ApiRows *out) {
  const Table *t = schema_find_table(db->dbx[0].schema->s, name);
  if (!t && name &&
      (!util_stricmp(name, "sqlite_temp_schema") || !util_stricmp(name, "sqlite_temp_master")))
    t = schema_find_table(db->dbx[0].schema->s, "sqlite_schema"); /* the same columns */
  if (!t) {
    View *vw = schema_find_view(db->dbx[0].schema->s, name);
    if (vw) return view_info(db, vw, extended, out);
    int rc = name ? eponymous_columns(db, name, &t) : SHALE_OK; /* as SQLite: its columns */
    if (rc != SHALE_OK || !t) return rc;
  }
  if (t->vtab_module) { /* SQLite connects it first (schema.h invariant 5) */
    t = vtab_columns(db, t);
    if (!t) return SHALE_ERROR;
  }
  int cid = 0;
  for (int i = 0; i < t->ncol; i++) {
    const Column *c = &t->cols[i];
    if (!extended && c->hidden != COL_NORMAL) continue; /* SQLite skips them */
    ShValue v[7];
    value_set_int(&v[0], extended ? i : cid);
    set_text(&v[1], c->name);
    char up[16];
    const char *type = c->type ? c->type : "";
    if (t->is_schema && strlen(type) < sizeof up) { /* SQLite declares them in capitals */
      size_t k = 0;
      for (; type[k]; k++)
        up[k] = (char)(type[k] >= 'a' && type[k] <= 'z' ? type[k] - 32 : type[k]);
      up[k] = 0;
      type = up;
    }
    set_text(&v[2], type);
    value_set_int(&v[3], c->notnull != 0);
    set_text(&v[4], c->hidden >= COL_VIRTUAL ? NULL : c->dflt_sql);
    value_set_int(&v[5], c->pk);
    value_set_int(&v[6], c->hidden);
    int rc = api_rows_add(out, v);
    if (rc) return rc;
    cid++;
  }
  return SHALE_OK;
}

static int index_list(shale *db, const char *name, ApiRows *out) {
  Table *t = schema_find_table(db->dbx[0].schema->s, name);
  if (!t) return SHALE_OK;
  int n = 0;
  for (Index *ix = t->indexes; ix; ix = ix->next) n++;
  /* SQLite lists the most recently created index first */
  int seq = 0;
  for (int k = n - 1; k >= 0; k--) {
    Index *ix = t->indexes;
    for (int j = 0; j < k; j++) ix = ix->next;
    if (t->without_rowid && ix == t->pk_index && 0) continue;
    ShValue v[5];
    value_set_int(&v[0], seq++);
    set_text(&v[1], ix->name);
    value_set_int(&v[2], ix->unique);
    set_text(&v[3], schema_index_origin_name(ix));
    value_set_int(&v[4], ix->where != NULL);
    int rc = api_rows_add(out, v);
    if (rc) return rc;
  }
  return SHALE_OK;
}

static int index_info(shale *db, const char *name, int extended, ApiRows *out) {
  Index *ix = schema_find_index(db->dbx[0].schema->s, name);
  if (!ix) {
    /* a WITHOUT ROWID table's name gives its PRIMARY KEY index */
    Table *t = schema_find_table(db->dbx[0].schema->s, name);
    if (!t || !t->pk_index) return SHALE_OK;
    ix = t->pk_index;
  }
  const Table *t = ix->table;
  int n = extended ? ix->ncol : ix->nkey;
  for (int i = 0; i < n; i++) {
    const IndexColumn *ic = &ix->cols[i];
    ShValue v[6];
    value_set_int(&v[0], i);
    value_set_int(&v[1], ic->col);
    if (ic->col >= 0 && t && ic->col < t->ncol)
      set_text(&v[2], t->cols[ic->col].name);
    else
      value_set_null(&v[2]);
    value_set_int(&v[3], ic->desc);
    set_text(&v[4], ic->coll ? ic->coll : "BINARY");
    value_set_int(&v[5], i < ix->nkey);
    int rc = api_rows_add(out, v);
    if (rc) return rc;
  }
  return SHALE_OK;
}

/* ---- integrity_check's table/index content checks (after the B-tree
 * checks, as SQLite: NOT NULL columns, rows missing from indexes, index
 * entry counts). Partial indexes are not row-checked or counted; expression
 * indexes are counted only; WITHOUT ROWID tables get the count check. ---- */

typedef struct CkState {
  shale *db;
  ApiRows *out;
  int budget; /* rows of errors still allowed */
  uint8_t *buf;
  uint32_t cap;
  int clean;                   /* the B-tree checks found nothing: every tree's order holds */
  const BtreeCheckRoot *roots; /* what they checked, and for the index */
  const BtreeCheckSum *sums;   /* trees entry counts and hash sums */
  const UtilHashKey *hkey;     /* the sums' key, drawn for this check */
  int nroot;
} CkState;

static int ck_msg(CkState *c, char *msg) {
  if (!msg) return SHALE_NOMEM;
  int rc = c->budget > 0 ? add_text(c->out, msg) : SHALE_OK;
  c->budget--;
  shale_free(msg);
  return rc;
}

/* The whole payload under cur (borrowed, or gathered into c->buf). */
static int ck_payload(CkState *c, BtCursor *cur, const uint8_t **rec, uint32_t *n) {
  const void *p;
  uint32_t avail, size;
  int rc = btree_payload(cur, &p, &size, &avail);
  if (rc) return rc;
  if (!p) return SHALE_CORRUPT; /* (on an entry: the scan's btree_first / btree_next) */
  *n = size;
  if (avail >= size) {
    *rec = p;
    return SHALE_OK;
  }
  if (c->cap < size) {
    uint8_t *b = shale_realloc(c->buf, size);
    if (!b) return SHALE_NOMEM;
    c->buf = b;
    c->cap = size;
  }
  *rec = c->buf;
  return btree_payload_read(cur, 0, size, c->buf);
}

static int ck_index_usable(const Index *ix) {
  if (ix->where || ix->root == 0) return 0;
  for (int k = 0; k < ix->ncol; k++)
    if (ix->cols[k].col == INDEX_COL_EXPR) return 0;
  return 1;
}

/* An index's KeyInfo for the records of the main database: for a UTF-16
 * one, collations other than BINARY see UTF-8 (src/record/textenc.c). */
static KeyInfo *ck_keyinfo(shale *db, Index *ix, int *unknown) {
  KeyInfo *ki = schema_index_keyinfo(ix, unknown);
  int rc;
  KeyInfo *k = ki ? record_keyinfo_for_enc(ki, db->text_enc, &rc) : NULL;
  if (!k) return ki;
  shale_free(ki);
  return k;
}

/* An index whose order follows the rowid's (a key growing with the rows,
 * as most inserted in order) has each row's entry just after the previous
 * row's: ck_table tries the entry after the cursor's place (one step, one
 * compare) before a seek from the root. An index that misses CK_NEAR_TRIES
 * times running is tried again only every CK_NEAR_RETRY + 1 rows. */
#define CK_NEAR_TRIES 2
#define CK_NEAR_RETRY 63

/* *hit = 1 if the entry after cur's place is the key of rs (cmp says
 * equal: the same values, no more columns); 0 leaves cur anywhere (the
 * seek that follows starts from the root). */
static int ck_near(BtCursor *cur, RecordSeekCmp cmp, RecordSeek *rs, int *hit) {
  int eof = 1;
  *hit = 0;
  if (btree_eof(cur)) return SHALE_OK;
  int rc = btree_next(cur, &eof);
  if (rc || eof) return rc;
  const void *p;
  uint32_t n, avail;
  rc = btree_payload(cur, &p, &n, &avail);
  if (rc || !p || avail < n) return rc; /* an entry on overflow pages: the seek */
  *hit = cmp(rs, p, n) == 0 && !(rs->ki && rs->ki->corrupt);
  return SHALE_OK;
}

/* Row rec[0..n) of t (rowid) decoded into vals[0..t->ncol): a column past
 * the record's nf stored ones, or not stored, is NULL. */
static int ck_row(const Table *t, const uint8_t *rec, uint32_t n, int64_t rowid, ShValue *vals,
                  uint32_t *types, uint32_t *offs, int *nf) {
  int rc = record_parse_header(rec, n, types, offs, t->nstored, nf);
  if (rc) return rc;
  for (int i = 0; i < t->ncol; i++) {
    const Column *col = &t->cols[i];
    if (i == t->rowid_alias)
      value_set_int(&vals[i], rowid);
    else if (col->storage >= 0 && col->storage < *nf)
      record_decode_value(types[col->storage], rec + offs[col->storage], &vals[i]);
    else
      value_set_null(&vals[i]);
  }
  return SHALE_OK;
}

/* The key index ix needs for a row (vals, nf as ck_row, rowid) in
 * kv[0..ix->ncol); 0 if the row's entry is not checked (a column added
 * after the row was written, a VIRTUAL generated column, an expression). */
static int ck_key(const Table *t, const Index *ix, const ShValue *vals, int nf, int64_t rowid,
                  ShValue *kv) {
  for (int j = 0; j < ix->ncol; j++) {
    int cj = ix->cols[j].col;
    if (cj == INDEX_COL_ROWID) {
      value_set_int(&kv[j], rowid);
    } else if (cj >= 0 && cj < t->ncol) {
      if (t->cols[cj].storage >= nf && cj != t->rowid_alias) return 0; /* added column */
      /* a VIRTUAL generated column is computed, not stored: like an
       * index on an expression, its entries are not checked here */
      if (t->cols[cj].storage < 0 && cj != t->rowid_alias) return 0;
      kv[j] = vals[cj];
    } else {
      return 0;
    }
  }
  return 1;
}

/* 1 if column i of a row (vals, nf as ck_row) breaks its NOT NULL. */
static int ck_null_bad(const Table *t, int i, const ShValue *vals, int nf) {
  const Column *col = &t->cols[i];
  int short_rec = col->storage >= nf && col->storage >= 0;
  return col->notnull && vals[i].type == SHALE_NULL && !short_rec && col->hidden == COL_NORMAL &&
         i != t->rowid_alias;
}

/* The index check by hashing (rowid table t, B-tree checks clean): for
 * each index k with hashed[k] = 1, every row's entry as the row's bytes
 * make it (the key columns and the rowid, encoded) is hashed into sum[k] in
 * one pass over the table; then the index's entries are hashed in one pass
 * over it. The same count and sum mean the entries are the rows' own (a
 * difference goes unseen with odds of 2^-64), so every row's seek would
 * find its entry: hashed[k] stays 1 and the rows do not seek. Anything
 * else -- a row whose entry is not checked (ck_key), one not encoded as its
 * entry is (e.g. a REAL stored as an integer), an entry on overflow pages,
 * an error -- clears hashed[k], and the rows seek their entries one by
 * one, reporting exactly as before. */
static int ck_by_hash(CkState *c, const Table *t, Index **ixs, int nix, uint8_t *hashed,
                      uint64_t *sum, BtCursor *tc, ShValue *vals, uint32_t *types, uint32_t *offs,
                      int64_t *rows) {
  uint8_t *kb = NULL;
  size_t kcap = 0;
  int64_t nrows = 0;
  int eof = 1, clean = 1;
  if (btree_first(tc, &eof) != SHALE_OK) goto fail;
  while (!eof) {
    const uint8_t *rec;
    uint32_t n;
    int nf = 0;
    int64_t rowid = btree_rowid(tc);
    if (ck_payload(c, tc, &rec, &n) != SHALE_OK ||
        ck_row(t, rec, n, rowid, vals, types, offs, &nf) != SHALE_OK)
      goto fail;
    for (int i = 0; i < t->ncol; i++) clean = clean && !ck_null_bad(t, i, vals, nf);
    for (int k = 0; k < nix; k++) {
      ShValue kv[64];
      if (!hashed[k]) continue;
      if (!ck_key(t, ixs[k], vals, nf, rowid, kv)) {
        hashed[k] = 0;
        continue;
      }
      uint32_t st[64], hdr;
      size_t need = record_size_types(kv, ixs[k]->ncol, st, &hdr);
      need += RECORD_ENCODE_SLACK; /* the typed writer's 8-byte stores */
      if (need > kcap) {
        uint8_t *b = need < UINT32_MAX ? shale_realloc(kb, need) : NULL;
        if (!b) goto fail;
        kb = b;
        kcap = need;
      }
      need = record_encode_types(kv, ixs[k]->ncol, st, hdr, kb);
      sum[k] += util_hash_keyed(c->hkey, kb, need);
    }
    nrows++;
    if (btree_next(tc, &eof) != SHALE_OK) goto fail;
  }
  /* the index's count and sum, from the B-tree check's walk over it */
  for (int k = 0; k < nix; k++) {
    int64_t cnt = -1;
    uint64_t h = 0;
    for (int j = 0; j < c->nroot; j++) {
      if (!c->roots[j].intkey && c->roots[j].root == ixs[k]->root) {
        cnt = c->sums[j].count;
        h = c->sums[j].hash;
      }
    }
    hashed[k] = hashed[k] && cnt == nrows && h == sum[k];
  }
  shale_free(kb);
  *rows = nrows;
  return clean;
fail:
  for (int k = 0; k < nix; k++) hashed[k] = 0;
  shale_free(kb);
  return 0;
}

static int ck_table(CkState *c, Table *t, int quick) {
  Btree *bt = c->db->dbx[0].bt;
  int nix = 0;
  for (Index *ix = t->indexes; ix; ix = ix->next) nix++;
  BtCursor *tc = NULL;
  BtCursor **icur = shale_malloc(sizeof *icur * (size_t)(nix + 1));
  KeyInfo **iki = shale_malloc(sizeof *iki * (size_t)(nix + 1));
  Index **ixs = shale_malloc(sizeof *ixs * (size_t)(nix + 1));
  ShValue *vals = shale_malloc(sizeof *vals * (size_t)(t->ncol + 2));
  uint32_t *types = shale_malloc(sizeof *types * (size_t)(t->nstored + 1) * 2);
  /* per index: ck_near's misses running; then 1 if ck_by_hash
   * checked it (no row seeks) */
  uint64_t *hsum = shale_malloc(sizeof *hsum * ((size_t)nix + 1));
  uint8_t *miss = shale_malloc(2 * ((size_t)nix + 1));
  int rc = SHALE_OK;
  if (!icur || !iki || !ixs || !vals || !types || !miss || !hsum) {
    rc = SHALE_NOMEM;
    goto done;
  }
  uint32_t *offs = types + t->nstored + 1;
  uint8_t *hashed = miss + nix + 1;
  int k = 0;
  /* SQLite checks the most recently created index first (its list order,
   * as index_list shows): a row missing from several is reported so */
  for (Index *ix = t->indexes; ix; ix = ix->next, k++) {
    ixs[nix - 1 - k] = ix;
    icur[k] = NULL;
    iki[k] = NULL;
    miss[k] = 0;
    hashed[k] = 0;
  }
  KeyInfo *tki = NULL; /* WITHOUT ROWID: the table tree's order */
  if (t->without_rowid && t->pk_index) {
    int unknown = 0;
    tki = ck_keyinfo(c->db, t->pk_index, &unknown);
  }
  rc = btree_cursor_open(bt, t->root, 0, tki ? record_compare : NULL, tki, &tc);
  int64_t nrows = 0;
  int done_flag = 0;
  /* ck_by_hash only when the B-tree checks passed: every tree's order holds,
   * so a row's seek finds its entry whenever the index has it */
  int byhash = rc == SHALE_OK && c->clean && !quick && !t->without_rowid;
  for (k = 0; rc == SHALE_OK && k < nix; k++) {
    if (ixs[k] == t->pk_index) continue;
    int unknown = 0;
    iki[k] = ck_keyinfo(c->db, ixs[k], &unknown);
    if (!iki[k]) {
      rc = SHALE_NOMEM;
      break;
    }
    rc = btree_cursor_open(bt, ixs[k]->root, 0, record_compare, iki[k], &icur[k]);
    hashed[k] = (uint8_t)(rc == SHALE_OK && byhash && !unknown && ck_index_usable(ixs[k]) &&
                          ixs[k]->ncol <= 64);
    hsum[k] = 0;
  }
  if (rc == SHALE_OK && byhash &&
      ck_by_hash(c, t, ixs, nix, hashed, hsum, tc, vals, types, offs, &nrows)) {
    /* no NULL where NOT NULL, and every index the rows would seek in
     * checked: the row-by-row pass has nothing to report */
    done_flag = 1;
    for (k = 0; k < nix; k++)
      if (icur[k] && ck_index_usable(ixs[k]) && ixs[k]->ncol <= 64 && !hashed[k]) done_flag = 0;
  }
  if (!done_flag) nrows = 0;
  if (rc == SHALE_OK && !done_flag) rc = btree_first(tc, &done_flag);
  while (rc == SHALE_OK && !done_flag) {
    nrows++;
    const uint8_t *rec;
    uint32_t n;
    rc = ck_payload(c, tc, &rec, &n);
    if (rc) break;
    int nf = 0;
    int64_t rowid = t->without_rowid ? 0 : btree_rowid(tc);
    rc = ck_row(t, rec, n, rowid, vals, types, offs, &nf);
    if (rc) break;
    for (int i = 0; i < t->ncol; i++) {
      if (ck_null_bad(t, i, vals, nf)) {
        rc = ck_msg(c, util_mprintf("NULL value in %s.%s", t->name, t->cols[i].name));
        if (rc) break;
      }
    }
    if (rc || quick || t->without_rowid) goto next;
    for (k = 0; k < nix && rc == SHALE_OK; k++) {
      Index *ix = ixs[k];
      if (!icur[k] || !ck_index_usable(ix) || hashed[k]) continue;
      ShValue kv[64];
      if (ix->ncol > 64 || !ck_key(t, ix, vals, nf, rowid, kv)) continue;
      /* the entry the row needs, sought with its key unpacked (the row's
       * values: typed compares, no record built per row and index) */
      RecordSeek rs = {.ki = iki[k], .key = kv, .nkey = ix->ncol, .default_rc = RECORD_SEEK_WHOLE};
      RecordSeekCmp cmp = record_seek_pick(&rs);
      int hit = 0;
      if (miss[k] < CK_NEAR_TRIES || (nrows & CK_NEAR_RETRY) == 0) {
        rc = ck_near(icur[k], cmp, &rs, &hit);
        miss[k] = hit ? 0 : miss[k] < CK_NEAR_TRIES ? miss[k] + 1 : miss[k];
      }
      if (rc == SHALE_OK && !hit) {
        int res = 1;
        rc = btree_seek_cmp(icur[k], cmp, &rs, &res);
        if (rc == SHALE_OK && (res != 0 || btree_eof(icur[k])))
          rc =
              ck_msg(c, util_mprintf("row %lld missing from index %s", (long long)nrows, ix->name));
      }
    }
  next:
    if (rc == SHALE_OK) rc = btree_next(tc, &done_flag);
  }
  for (k = 0; rc == SHALE_OK && !quick && k < nix; k++) {
    if (!icur[k] || ixs[k]->where) continue;
    int64_t cnt = 0;
    rc = btree_count(icur[k], &cnt);
    if (rc == SHALE_OK && cnt != nrows)
      rc = ck_msg(c, util_mprintf("wrong # of entries in index %s", ixs[k]->name));
  }
  if (tc) btree_cursor_close(tc);
  shale_free(tki);
  for (k = 0; k < nix; k++) {
    if (icur && icur[k]) btree_cursor_close(icur[k]);
    if (iki) shale_free(iki[k]);
  }
done:
  shale_free(icur);
  shale_free(iki);
  shale_free(ixs);
  shale_free(vals);
  shale_free(types);
  shale_free(miss);
  shale_free(hsum);
  return rc;
}

static int integrity(shale *db, const PragmaReq *req, int quick, ApiRows *out) {
  int maxerr = req->value ? (int)parse_int(req->value) : 100;
  if (maxerr <= 0) maxerr = 100;
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  Schema *s = db->dbx[0].schema->s;
  int cap = 1;
  int pos = 0;
  Table *t;
  while ((t = schema_map_next(&s->tables, &pos)) != NULL) {
    cap++;
    for (Index *ix = t->indexes; ix; ix = ix->next) cap++;
  }
  BtreeCheckRoot *roots = shale_malloc(sizeof *roots * (size_t)cap);
  KeyInfo **keys = shale_malloc(sizeof *keys * (size_t)cap);
  BtreeCheckSum *sums = shale_malloc(sizeof *sums * (size_t)cap); /* the index trees' */
  int n = 0;
  char *report = NULL;
  int nerr = 0;
  if (!roots || !keys || !sums) {
    rc = SHALE_NOMEM;
    goto done;
  }
  if (btree_page_count(db->dbx[0].bt) > 0) {
    keys[n] = NULL;
    roots[n++] = (BtreeCheckRoot){1, 1, NULL, NULL};
  }
  pos = 0;
  while ((t = schema_map_next(&s->tables, &pos)) != NULL) {
    if (t->is_schema || t->root == 0) continue;
    if (!t->without_rowid) {
      keys[n] = NULL;
      roots[n++] = (BtreeCheckRoot){t->root, 1, NULL, NULL};
    }
    for (Index *ix = t->indexes; ix; ix = ix->next) {
      if (ix->root == 0) continue;
      int unknown = 0;
      KeyInfo *ki = ck_keyinfo(db, ix, &unknown);
      if (ki && unknown) {
        shale_free(ki);
        ki = NULL;
      }
      keys[n] = ki;
      roots[n++] = (BtreeCheckRoot){ix->root, 0, ki ? record_compare : NULL, ki};
    }
  }
  UtilHashKey hkey; /* fresh each check: a file cannot be made to match sums it cannot predict */
  util_hash_key_new(&hkey);
  rc = btree_integrity_check_sums(db->dbx[0].bt, roots, n, maxerr, &report, &nerr, &hkey, sums);
  int nbefore = out->nrow;
  if (rc == SHALE_OK && report) {
    size_t len = strlen(report);
    while (len && report[len - 1] == '\n') report[--len] = 0;
    char *row = util_mprintf("*** in database main ***\n%s", report);
    rc = row ? add_text(out, row) : SHALE_NOMEM;
    shale_free(row);
  }
  if (rc == SHALE_OK && maxerr - nerr > 0) {
    CkState ck = {db, out, maxerr - nerr, NULL, 0, nerr == 0 && !report, roots, sums, &hkey, n};
    pos = 0;
    while (rc == SHALE_OK && ck.budget > 0 && (t = schema_map_next(&s->tables, &pos)) != NULL) {
      if (t->is_schema || t->root == 0) continue;
      rc = ck_table(&ck, t, quick);
    }
    shale_free(ck.buf);
  }
  if (rc == SHALE_OK && out->nrow == nbefore) rc = add_text(out, "ok");
done:
  for (int i = 0; keys && i < n; i++) shale_free(keys[i]);
  shale_free(keys);
  shale_free(roots);
  shale_free(sums);
  shale_free(report);
  if (rc) {
    const char *m = btree_errmsg(db->dbx[0].bt);
    api_error(db, rc, "%s", m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
  }
  return api_txn_end(db, began, rc);
}

static int journal_mode(shale *db, const PragmaReq *req, ApiRows *out) {
  Pager *pg = btree_pager(db->dbx[0].bt);
  int mode = pager_journal_mode(pg);
  if (req->value) {
    int want = -1;
    for (int i = 0; i < 6; i++)
      if (!util_stricmp(req->value, journal_names[i])) want = i;
    if (want == PAGER_JOURNAL_OFF && (db->set.pflags & API_PF_DEFENSIVE))
      want = -1; /* db_config DEFENSIVE: no journal_mode=OFF (the mode stays) */
    if (want >= 0 && want != mode && (want == PAGER_JOURNAL_WAL || mode == PAGER_JOURNAL_WAL) &&
        !pager_is_memory(pg) && !db->txn.autocommit) {
      api_error(db, SHALE_ERROR, "cannot change %s wal mode from within a transaction",
                want == PAGER_JOURNAL_WAL ? "into" : "out of");
      return SHALE_ERROR;
    }
    if (want >= 0) {
      if (want == PAGER_JOURNAL_WAL || mode == PAGER_JOURNAL_WAL) {
        /* the switch needs the file's header: read it first */
        int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
        if (rc) return rc;
        if (want == PAGER_JOURNAL_WAL && pager_db_size(pg) == 0 && began) {
          /* An empty file has no header to mark: as SQLite, write page 1
           * first (a write transaction on an empty file creates it). */
          rc = btree_begin(db->dbx[0].bt, BTREE_TXN_WRITE);
          if (rc == SHALE_OK) rc = btree_commit(db->dbx[0].bt);
        }
        rc = api_txn_end(db, began, rc);
        if (rc) return rc;
      }
      mode = pager_set_journal_mode(pg, want);
    }
  }
  if (mode < 0 || mode > 5) mode = 0;
  return add_text(out, journal_names[mode]);
}

/* One row of PRAGMA table_list: table t or view vw of main. */
static int table_list_row(shale *db, int idb, const Table *t, const View *vw, ApiRows *out) {
  ShValue v[6];
  set_text(&v[0], api_db_name(db, idb));
  if (t) {
    set_text(&v[1], t->is_schema ? (idb == 1 ? "sqlite_temp_schema" : "sqlite_schema") : t->name);
    set_text(&v[2], t->vtab_module ? "virtual" : "table");
    value_set_int(&v[3], t->ncol);
    value_set_int(&v[4], t->without_rowid);
    value_set_int(&v[5], t->strict);
  } else {
    set_text(&v[1], vw->name);
    set_text(&v[2], "view");
    int ncol = vw->ncol;
    if (!ncol) { /* no column list: as many as its SELECT gives */
      CompiledStmt cs;
      int rc = view_compile_in(db, idb, vw, &cs);
      if (rc) return rc;
      ncol = cs.ncol;
      compile_stmt_free(&cs);
    }
    value_set_int(&v[3], ncol);
    value_set_int(&v[4], 0);
    value_set_int(&v[5], 0);
  }
  return api_rows_add(out, v);
}

/* The tables and views of database idb's schema s for PRAGMA table_list
 * (every one, or the one named), in the order SQLite's table hash lists
 * them (its schema table entered first, then the sqlite_schema rows'
 * objects). */
static int table_list_db(shale *db, int idb, Schema *s, const char *only, ApiRows *out) {
  int rc = SHALE_OK;
  const char *master = idb == 1 ? "sqlite_temp_master" : "sqlite_master";
  const char *schema_name = idb == 1 ? "sqlite_temp_schema" : "sqlite_schema";
  int n = s->order ? s->norder + 1 : 0;
  const char **names = n ? shale_malloc(sizeof(char *) * (size_t)n) : NULL;
  int *ord = NULL;
  if (names) {
    names[0] = master;
    for (int i = 1; i < n; i++) names[i] = s->order[i - 1];
    ord = compile_sql_table_hash_order(names, n);
  }
  if (n && (!names || !ord)) {
    shale_free(names);
    return SHALE_NOMEM;
  }
  if (ord) {
    for (int k = 0; k < n && rc == SHALE_OK; k++) {
      const char *nm = names[ord[k]];
      Table *t = ord[k] == 0 ? s->schema_table : schema_find_table(s, nm);
      View *vw = t ? NULL : schema_find_view(s, nm);
      if (!t && !vw) continue;
      if (only && util_stricmp(only, t && t->is_schema ? master : nm) != 0 &&
          !(t && t->is_schema && !util_stricmp(only, schema_name)))
        continue;
      rc = table_list_row(db, idb, t, vw, out);
    }
  } else { /* a schema without its row order: tables, views, sqlite_schema */
    int pos = 0;
    Table *t;
    while (rc == SHALE_OK && (t = schema_map_next(&s->tables, &pos)) != NULL)
      if (!t->is_schema && (!only || !util_stricmp(only, t->name)))
        rc = table_list_row(db, idb, t, NULL, out);
    pos = 0;
    View *vw;
    while (rc == SHALE_OK && (vw = schema_map_next(&s->views, &pos)) != NULL)
      if (!only || !util_stricmp(only, vw->name)) rc = table_list_row(db, idb, NULL, vw, out);
    if (rc == SHALE_OK &&
        (!only || !util_stricmp(only, schema_name) || !util_stricmp(only, master)))
      rc = table_list_row(db, idb, s->schema_table, NULL, out);
  }
  shale_free(ord);
  shale_free(names);
  return rc;
}

/* temp's schema table while temp is not open (as SQLite finds it by name:
 * sqlite_temp_master, not sqlite_temp_schema). */
static int temp_schema_row(const char *only, ApiRows *out) {
  if (only && util_stricmp(only, "sqlite_temp_master")) return SHALE_OK;
  ShValue v[6];
  set_text(&v[0], "temp");
  set_text(&v[1], "sqlite_temp_schema");
  set_text(&v[2], "table");
  value_set_int(&v[3], 5);
  value_set_int(&v[4], 0);
  value_set_int(&v[5], 0);
  return api_rows_add(out, v);
}

/* PRAGMA table_list[(name)]: main's (or only the named database's:
 * main_only), then temp's and each attached database's, as SQLite. */
static int table_list(shale *db, const char *only, int main_only, ApiRows *out) {
  int rc = table_list_db(db, db->pragma_standin, db->dbx[0].schema->s, only, out);
  for (int i = 1; rc == SHALE_OK && !main_only && i < db->ndb; i++) {
    Schema *s = i > 1 || db->dbx[1].bt ? api_db_schema(db, i) : NULL;
    if (s)
      rc = table_list_db(db, i, s, only, out);
    else if (i == 1)
      rc = temp_schema_row(only, out);
  }
  return rc;
}

static int fk_list(shale *db, const char *name, ApiRows *out) {
  Table *t = schema_find_table(db->dbx[0].schema->s, name);
  if (!t) return SHALE_OK;
  static const char *const act[] = {"NO ACTION", "SET NULL", "SET DEFAULT",
                                    "CASCADE",   "RESTRICT", "NO ACTION"};
  for (int k = t->nfk - 1, id = 0; k >= 0; k--, id++) {
    const ForeignKey *fk = &t->fks[k];
    for (int j = 0; j < fk->ncol; j++) {
      ShValue v[8];
      value_set_int(&v[0], id);
      value_set_int(&v[1], j);
      set_text(&v[2], fk->parent);
      set_text(&v[3], fk->cols[j] >= 0 && fk->cols[j] < t->ncol ? t->cols[fk->cols[j]].name : NULL);
      set_text(&v[4], fk->parent_cols ? fk->parent_cols[j] : NULL);
      set_text(&v[5], act[fk->on_update <= 5 ? fk->on_update : 0]);
      set_text(&v[6], act[fk->on_delete <= 5 ? fk->on_delete : 0]);
      set_text(&v[7], "NONE");
      int rc = api_rows_add(out, v);
      if (rc) return rc;
    }
  }
  return SHALE_OK;
}

/* ---- PRAGMA foreign_key_check ---- */

static void fks_id(StrBuf *b, const char *s) {
  char one[2] = {0, 0};
  strbuf_appendz(b, "\"");
  for (; *s; s++) {
    one[0] = *s;
    strbuf_appendz(b, *s == '"' ? "\"\"" : one);
  }
  strbuf_appendz(b, "\"");
}

/* One query over t: its rowid (NULL without one), then per foreign key (in
 * SQLite's id order) 1 when the row's key is complete and has no parent. */
static char *fk_check_sql(const Schema *s, const Table *t) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, t->without_rowid ? "SELECT NULL" : "SELECT \"fk_c\".rowid");
  for (int k = t->nfk - 1; k >= 0; k--) {
    const ForeignKey *fk = &t->fks[k];
    const Table *par = schema_find_table(s, fk->parent);
    const Index *idx = NULL;
    int aicol[64];
    if (fk->ncol > 64) {
      strbuf_appendz(&b, ", 0");
      continue;
    }
    if (!par || compile_fk_parent_key(par, fk, &idx, aicol)) {
      for (int i = 0; i < fk->ncol; i++) aicol[i] = fk->cols[i];
      par = NULL;
    }
    strbuf_appendz(&b, ", (1");
    for (int i = 0; i < fk->ncol; i++) {
      strbuf_appendz(&b, " AND \"fk_c\".");
      fks_id(&b, t->cols[aicol[i]].name);
      strbuf_appendz(&b, " IS NOT NULL");
    }
    if (par) {
      strbuf_appendz(&b, " AND NOT EXISTS (SELECT 1 FROM ");
      fks_id(&b, par->name);
      strbuf_appendz(&b, " AS \"fk_p\" WHERE 1");
      for (int i = 0; i < fk->ncol; i++) {
        strbuf_appendz(&b, " AND \"fk_p\".");
        if (idx)
          fks_id(&b, par->cols[idx->cols[i].col].name);
        else
          strbuf_appendz(&b, "rowid");
        strbuf_appendz(&b, " = \"fk_c\".");
        fks_id(&b, t->cols[aicol[i]].name);
      }
      strbuf_appendz(&b, ")");
    }
    strbuf_appendz(&b, ")");
  }
  strbuf_appendz(&b, " FROM ");
  fks_id(&b, t->name);
  strbuf_appendz(&b, " AS \"fk_c\"");
  return strbuf_finish(&b);
}

static int fk_check_table(shale *db, const Table *t, ApiRows *out) {
  char *sql = fk_check_sql(db->dbx[0].schema->s, t);
  if (!sql) return SHALE_NOMEM;
  CompileEnv env;
  api_compile_env(db, &env);
  env.auth = NULL;
  env.foreign_keys = 0;
  CompiledStmt cs;
  char *err = NULL;
  int rc = compile_sql(&env, sql, -1, &cs, NULL, &err);
  shale_free(sql);
  if (rc) {
    api_error(db, rc, "%s", err ? err : shale_errstr(rc));
    shale_free(err);
    return rc;
  }
  Vm *v = NULL;
  rc = cs.prog ? vm_new(cs.prog, db->dbx[0].bt, 0, &v) : SHALE_INTERNAL;
  if (rc == SHALE_OK) {
    vm_set_conn(v, db, &db->conn_cb);
    while ((rc = vm_step(v)) == SHALE_ROW) {
      for (int id = 0; id < t->nfk && rc == SHALE_ROW; id++) {
        const ShValue *x = vm_column(v, 1 + id);
        if (x->type != SHALE_INTEGER || x->i == 0) continue;
        ShValue row[4];
        set_text(&row[0], t->name);
        row[1] = *vm_column(v, 0);
        set_text(&row[2], t->fks[t->nfk - 1 - id].parent);
        value_set_int(&row[3], id);
        if (api_rows_add(out, row) != SHALE_OK) rc = SHALE_NOMEM;
      }
    }
    if (rc == SHALE_DONE) {
      rc = SHALE_OK;
    } else {
      const char *m = vm_errmsg(v);
      api_error(db, rc, "%s", m ? m : shale_errstr(rc));
    }
  }
  vm_free(v);
  compile_stmt_free(&cs);
  return rc;
}

static int tab_root_desc(const void *a, const void *b) {
  const Table *x = *(Table *const *)a, *y = *(Table *const *)b;
  return x->root > y->root ? -1 : x->root < y->root ? 1 : 0;
}

/* SQLite's order: one table, or every table with foreign keys, most
 * recently created first (approximated by the root page); per table, rows
 * in scan order, foreign keys in id order. A parent key that is not
 * PRIMARY KEY/UNIQUE fails the whole pragma. */
static int fk_check_pragma(shale *db, const char *name, ApiRows *out) {
  Schema *s = db->dbx[0].schema->s;
  Table **list = NULL;
  int n = 0;
  if (name) {
    Table *t = schema_find_table(s, name);
    if (!t) {
      api_error(db, SHALE_ERROR, "no such table: %s", name);
      return SHALE_ERROR;
    }
    list = shale_malloc(sizeof *list);
    if (!list) return SHALE_NOMEM;
    list[n++] = t;
  } else {
    int pos = 0, cap = 0;
    Table *t;
    while ((t = schema_map_next(&s->tables, &pos)) != NULL) cap++;
    list = shale_malloc(sizeof *list * (size_t)(cap + 1));
    if (!list) return SHALE_NOMEM;
    pos = 0;
    while ((t = schema_map_next(&s->tables, &pos)) != NULL)
      if (t->nfk > 0) list[n++] = t;
    qsort(list, (size_t)n, sizeof *list, tab_root_desc);
  }
  int rc = SHALE_OK;
  for (int i = 0; i < n && rc == SHALE_OK; i++) {
    const Table *t = list[i];
    for (int k = t->nfk - 1; k >= 0; k--) {
      const ForeignKey *fk = &t->fks[k];
      const Table *par = schema_find_table(s, fk->parent);
      const Index *idx;
      int aicol[64];
      if (par && (fk->ncol > 64 || compile_fk_parent_key(par, fk, &idx, aicol))) {
        api_error(db, SHALE_ERROR, "foreign key mismatch - \"%s\" referencing \"%s\"", t->name,
                  fk->parent);
        rc = SHALE_ERROR;
        break;
      }
    }
  }
  if (rc == SHALE_OK) {
    int began;
    rc = api_txn_begin(db, BTREE_TXN_READ, &began);
    for (int i = 0; i < n && rc == SHALE_OK; i++)
      if (list[i]->nfk > 0) rc = fk_check_table(db, list[i], out);
    rc = api_txn_end(db, began, rc);
  }
  shale_free(list);
  return rc;
}

/* ---- PRAGMA optimize / analysis_limit ---- */

/* SQLite's sqlite3Atoi: hex 0x..., or a sign and the decimal digits
 * before the first other character (none, or a leading space: 0). */
static int64_t atoi_prefix(const char *z) {
  if (*z == ' ' || (*z >= '\t' && *z <= '\r')) return 0;
  if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) return (int64_t)strtoull(z + 2, NULL, 16);
  return strtoll(z, NULL, 10);
}

/* SQLite's sqlite3DecOrHexToI64: a whole integer (spaces around a decimal
 * one allowed) or 0x hex; 0 when z is not one. */
static int dec_or_hex(const char *z, int64_t *v) {
  if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) {
    uint64_t u = 0;
    const char *q = z + 2;
    if (!*q) return 0;
    for (; *q; q++) {
      int d = (*q >= '0' && *q <= '9')   ? *q - '0'
              : (*q >= 'a' && *q <= 'f') ? *q - 'a' + 10
              : (*q >= 'A' && *q <= 'F') ? *q - 'A' + 10
                                         : -1;
      if (d < 0) return 0;
      u = u * 16 + (uint64_t)d;
    }
    *v = (int64_t)u;
    return 1;
  }
  char *end;
  long long x = strtoll(z, &end, 10);
  if (end == z) return 0;
  while (*end == ' ' || (*end >= '\t' && *end <= '\r')) end++;
  if (*end) return 0;
  *v = x;
  return 1;
}

/* "%w" of SQLite's printf: z with every '"' doubled (shale_malloc'ed). */
static char *ident_w(const char *z) {
  size_t n = 0;
  for (const char *q = z; *q; q++) n += 1 + (*q == '"');
  char *r = shale_malloc(n + 1), *w = r;
  if (!r) return NULL;
  for (const char *q = z; *q; q++) {
    *w++ = *q;
    if (*q == '"') *w++ = '"';
  }
  *w = 0;
  return r;
}

/* PRAGMA optimize[(mask)], SQLite 3.40.1: with bit 0x02 (default mask
 * 0xfffe), every table whose index searches the planner weighed on this
 * connection (Table.stats_used) and that has an index without statistics,
 * or has 25 times the rows its statistics say, is analyzed -- or, with bit
 * 0x01, the ANALYZE statement is returned as a row instead. Tables in
 * ANALYZE's order. */
static int optimize_pragma(shale *db, const char *val, ApiRows *out) {
  uint32_t mask = val ? (uint32_t)atoi_prefix(val) : 0xfffe;
  if (!(mask & 0x02)) return SHALE_OK;
  int rc = api_schema_current(db);
  if (rc) return rc;
  Table **t;
  int n;
  if (compile_analyze_table_order(db->dbx[0].schema->s, &t, &n) != SHALE_OK) return SHALE_NOMEM;
  /* the statements first: running one reloads the schema */
  char **sqls = n ? shale_malloc(sizeof(char *) * (size_t)n) : NULL;
  int nsql = 0;
  if (n && !sqls) rc = SHALE_NOMEM;
  for (int i = 0; i < n && !rc; i++) {
    Table *x = t[i];
    if (!x->stats_used || !x->root || !util_strnicmp(x->name, "sqlite_", 7)) continue;
    int need = 0;
    for (Index *ix = x->indexes; ix; ix = ix->next) need |= ix->nstat == 0;
    char *w = ident_w(x->name);
    if (!w) {
      rc = SHALE_NOMEM;
      break;
    }
    if (!need && x->has_stat) {
      char *q =
          util_mprintf("SELECT count(*) >= 25 * %lld FROM main.\"%s\"", (long long)x->stat_rows, w);
      if (!q) {
        shale_free(w);
        rc = SHALE_NOMEM;
        break;
      }
      shale_stmt *st = NULL;
      if (shale_prepare_v2(db, q, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
        need = shale_column_int(st, 0);
      shale_finalize(st);
      shale_free(q);
    }
    if (!need) {
      shale_free(w);
      continue;
    }
    sqls[nsql] = util_mprintf("ANALYZE \"main\".\"%s\"", w);
    shale_free(w);
    if (!sqls[nsql])
      rc = SHALE_NOMEM;
    else
      nsql++;
  }
  shale_free(t);
  for (int i = 0; i < nsql; i++) {
    if (!rc) {
      if (mask & 0x01) {
        rc = add_text(out, sqls[i]);
      } else {
        char *err = NULL;
        rc = shale_exec(db, sqls[i], NULL, NULL, &err);
        shale_free(err);
      }
    }
    shale_free(sqls[i]);
  }
  shale_free(sqls);
  return rc;
}

static int analysis_limit_pragma(shale *db, const char *val, ApiRows *out) {
  int64_t v;
  if (val && dec_or_hex(val, &v) && v >= 0) db->set.analysis_limit = (int)(v & 0x7fffffff);
  return add_int(out, db->set.analysis_limit);
}

static int pragma_run_db(shale *db, const PragmaDef *d, const PragmaReq *req, ApiRows *out);

/* The database a pragma works on: the schema written, else for the pragmas
 * naming a table or index the first database holding it (temp, main,
 * attached), else main. -1 after "unknown database X". */
static int pragma_db(shale *db, const PragmaDef *d, const PragmaReq *req) {
  if (req->schema) {
    int i = api_db_index(db, req->schema);
    if (i < 0) api_error(db, SHALE_ERROR, "unknown database %s", req->schema);
    return i;
  }
  int named = d->id == PR_TABLE_INFO || d->id == PR_TABLE_XINFO || d->id == PR_INDEX_LIST ||
              d->id == PR_INDEX_INFO || d->id == PR_INDEX_XINFO || d->id == PR_FOREIGN_KEY_LIST;
  if (!named || !req->value || (db->ndb <= 2 && !db->dbx[1].bt)) return 0;
  if (api_schema_current(db) != SHALE_OK) return 0;
  for (int k = 0; k < db->ndb; k++) {
    int i = k == 0 ? 1 : k == 1 ? 0 : k;
    if (i == 1 && !db->dbx[1].bt) continue;
    Schema *s = api_db_schema(db, i);
    if (s && (schema_find_table(s, req->value) || schema_find_index(s, req->value) ||
              schema_find_view(s, req->value)))
      return i;
  }
  return 0;
}

int api_pragma_run(shale *db, const PragmaReq *req, ApiRows *out) {
  const PragmaDef *d = find_def(req->name);
  if (req->ignored) return SHALE_OK;                      /* the authorizer's IGNORE */
  if (req->schema && api_db_index(db, req->schema) < 0) { /* also for an unknown pragma */
    api_error(db, SHALE_ERROR, "unknown database %s", req->schema);
    return SHALE_ERROR;
  }
  if (d && d->id == PR_WAL_CHECKPOINT && req->schema && !util_stricmp(req->schema, "temp")) {
    ShValue v[3]; /* the temp database has no WAL: SQLite's 0|-1|-1 */
    value_set_int(&v[0], 0);
    value_set_int(&v[1], -1);
    value_set_int(&v[2], -1);
    return api_rows_add(out, v);
  }
  if (!d) return SHALE_OK; /* invariant 3 */
  int i = pragma_db(db, d, req);
  if (i < 0) return SHALE_ERROR;
  if (i == 0 || d->id == PR_DATABASE_LIST) return pragma_run_db(db, d, req, out);
  /* another database: run the pragma with it standing in for main */
  if (i == 1 && !db->dbx[1].bt && api_temp_open(db) != SHALE_OK) return db->err.code;
  if (!api_db_schema(db, i)) return db->err.code;
  ApiSchema *xs = NULL;
  standin_undo(db, i, 0);
  db->pragma_standin = i;
  int rc = pragma_run_db(db, d, req, out);
  db->pragma_standin = 0;
  (void)xs;
  standin_undo(db, i, 1);
  db->xgen++; /* statements see the database anew (it may have been reloaded) */
  return rc;
}

static int pragma_run_db(shale *db, const PragmaDef *d, const PragmaReq *req, ApiRows *out) {
  if (d->needs_arg && !req->value) return SHALE_OK;
  int rc = SHALE_OK;
  Pager *pg = btree_pager(db->dbx[0].bt);
  const char *val = req->value;
  switch (d->id) {
    case PR_TABLE_INFO:
    case PR_TABLE_XINFO:
    case PR_INDEX_LIST:
    case PR_INDEX_INFO:
    case PR_INDEX_XINFO:
    case PR_TABLE_LIST:
    case PR_FOREIGN_KEY_LIST:
    case PR_FOREIGN_KEY_CHECK:
      rc = api_schema_current(db);
      if (rc) return rc;
      if (d->id == PR_FOREIGN_KEY_CHECK) return fk_check_pragma(db, val, out);
      if (d->id == PR_TABLE_INFO) return table_info(db, val, 0, out);
      if (d->id == PR_TABLE_XINFO) return table_info(db, val, 1, out);
      if (d->id == PR_INDEX_LIST) return index_list(db, val, out);
      if (d->id == PR_INDEX_INFO) return index_info(db, val, 0, out);
      if (d->id == PR_INDEX_XINFO) return index_info(db, val, 1, out);
      if (d->id == PR_FOREIGN_KEY_LIST) return fk_list(db, val, out);
      return table_list(db, val, req->schema != NULL, out);
    case PR_JOURNAL_MODE:
      return journal_mode(db, req, out);
    case PR_SYNCHRONOUS:
      if (val) {
        /* SQLite's getSafetyLevel, then (level + 1) & 7, 0 taken as 1 */
        int lvl;
        if (!util_stricmp(val, "full"))
          lvl = 2;
        else if (!util_stricmp(val, "extra"))
          lvl = 3;
        else if (isdigit((unsigned char)*val))
          lvl = (((uint8_t)parse_int(val) + 1) & 7 ? (((uint8_t)parse_int(val) + 1) & 7) : 1) - 1;
        else
          lvl = parse_bool_dflt(val, 1);
        pager_set_synchronous(pg, lvl > 3 ? 3 : lvl);
        db->set.sync_level = lvl;
        return SHALE_OK;
      }
      return add_int(out, db->set.sync_level);
    case PR_CACHE_SIZE:
      if (val) {
        pager_set_cache_size(pg, (int)parse_int(val));
        return SHALE_OK;
      }
      return add_int(out, pager_cache_size(pg));
    case PR_PAGE_SIZE:
      if (val) {
        int64_t n = parse_int(val);
        if (n >= 512 && n <= 65536 && (n & (n - 1)) == 0) {
          btree_set_page_size(db->dbx[0].bt, (uint32_t)n,
                              (int)(pager_page_size(pg) - pager_usable_size(pg)));
          db->set.next_page_size = (uint32_t)n; /* for VACUUM */
        }
        return SHALE_OK;
      }
      return add_int(out, btree_page_size(db->dbx[0].bt));
    case PR_PAGE_COUNT:
    case PR_FREELIST_COUNT: {
      int began;
      rc = api_txn_begin(db, BTREE_TXN_READ, &began);
      if (rc) return rc;
      if (d->id == PR_PAGE_COUNT) {
        rc = add_int(out, btree_page_count(db->dbx[0].bt));
      } else {
        uint32_t x = 0;
        rc = btree_page_count(db->dbx[0].bt)
                 ? btree_get_meta(db->dbx[0].bt, BTREE_META_FREE_COUNT, &x)
                 : 0;
        if (rc == SHALE_OK) rc = add_int(out, x);
      }
      return api_txn_end(db, began, rc);
    }
    case PR_USER_VERSION:
      return meta_pragma(db, req, BTREE_META_USER_VERSION, out);
    case PR_APPLICATION_ID:
      return meta_pragma(db, req, BTREE_META_APPLICATION_ID, out);
    case PR_SCHEMA_VERSION:
      if (val && (db->set.pflags & API_PF_DEFENSIVE)) return SHALE_OK; /* DEFENSIVE: a no-op */
      return meta_pragma(db, req, BTREE_META_SCHEMA_COOKIE, out);
    case PR_INTEGRITY_CHECK:
    case PR_QUICK_CHECK:
      rc = api_schema_current(db);
      if (rc) return rc;
      return integrity(db, req, d->id == PR_QUICK_CHECK, out);
    case PR_BUSY_TIMEOUT:
      if (val) shale_busy_timeout(db, (int)parse_int(val));
      return add_int(out, db->set.busy_ms);
    case PR_FOREIGN_KEYS:
      if (val) {
        if (db->txn.autocommit) db->set.foreign_keys = (uint8_t)parse_bool(val);
        return SHALE_OK;
      }
      return add_int(out, db->set.foreign_keys);
    case PR_DEFER_FOREIGN_KEYS: /* as SQLite: cleared at the end of every transaction */
      if (val) {
        db->set.defer_foreign_keys = (uint8_t)parse_bool(val);
        if (!db->set.defer_foreign_keys) db->txn.deferred_imm_fk = 0; /* as SQLite */
        return SHALE_OK;
      }
      return add_int(out, db->set.defer_foreign_keys);
    case PR_COMPILE_OPTIONS:
      for (int i = 0; func_compileoption_get(i); i++) {
        int r = add_text(out, func_compileoption_get(i));
        if (r) return r;
      }
      return SHALE_OK;
    case PR_COLLATION_LIST: { /* the connection's own collations, then the built-ins */
      int seq = 0, r = SHALE_OK;
      static const Collation *const builtin[] = {&record_coll_rtrim, &record_coll_nocase,
                                                 &record_coll_binary};
      for (ApiColl *c = db->colls; c && r == SHALE_OK; c = c->next)
        r = add_seq_name(out, seq++, c->c.name);
      for (int i = 0; i < 3 && r == SHALE_OK; i++) r = add_seq_name(out, seq++, builtin[i]->name);
      return r;
    }
    case PR_FUNCTION_LIST:
      return func_registry_each(&db->funcs, function_list_row, out);
    case PR_RECURSIVE_TRIGGERS:
      if (val) {
        db->set.recursive_triggers = (uint8_t)parse_bool(val);
        return SHALE_OK;
      }
      return add_int(out, db->set.recursive_triggers);
    case PR_REVERSE_UNORDERED:
      if (val) {
        db->set.reverse_unordered = (uint8_t)parse_bool(val);
        return SHALE_OK;
      }
      return add_int(out, db->set.reverse_unordered);
    case PR_CASE_SENSITIVE_LIKE:
      /* like() is replaced in the registry: running programs borrow it, so
       * nothing changes while other statements run (as SQLite refuses to
       * redefine functions then) */
      if (db->txn.nactive > 0) return SHALE_OK;
      db->set.case_sensitive_like = (uint8_t)parse_bool(val);
      rc = func_set_case_sensitive_like(&db->funcs, db->set.case_sensitive_like);
      if (rc) api_error(db, rc, "%s", shale_errstr(rc));
      api_expire(db); /* cached programs hold the like() they were compiled with */
      return rc;
    case PR_DATABASE_LIST: {
      for (int i = 0; i < db->ndb && rc == SHALE_OK; i++) {
        Btree *b = api_db_bt(db, i);
        if (!b) continue; /* temp not opened */
        ShValue v[3];
        value_set_int(&v[0], i);
        set_text(&v[1], api_db_name(db, i));
        set_text(&v[2], api_db_file(db, i));
        rc = api_rows_add(out, v);
      }
      return rc;
    }
    case PR_ENCODING:
      return encoding_pragma(db, val, out);
    case PR_WAL_CHECKPOINT: {
      int mode = PAGER_CKPT_PASSIVE;
      if (val) {
        if (!util_stricmp(val, "full")) mode = PAGER_CKPT_FULL;
        if (!util_stricmp(val, "restart")) mode = PAGER_CKPT_RESTART;
        if (!util_stricmp(val, "truncate")) mode = PAGER_CKPT_TRUNCATE;
      }
      int nlog = -1, nckpt = -1;
      rc = pager_is_memory(pg) ? SHALE_OK : pager_wal_checkpoint(pg, mode, &nlog, &nckpt);
      ShValue v[3];
      value_set_int(&v[0], rc == SHALE_BUSY || rc == SHALE_LOCKED);
      value_set_int(&v[1], nlog);
      value_set_int(&v[2], nckpt);
      if (rc != SHALE_OK && rc != SHALE_BUSY && rc != SHALE_LOCKED) {
        api_error(db, rc, "%s", shale_errstr(rc));
        return rc;
      }
      return api_rows_add(out, v);
    }
    case PR_OPTIMIZE:
      return optimize_pragma(db, val, out);
    case PR_ANALYSIS_LIMIT:
      return analysis_limit_pragma(db, val, out);
    case PR_WAL_AUTOCHECKPOINT:
      if (val) db->set.wal_autocheckpoint = (int)parse_int(val);
      return add_int(out, db->set.wal_autocheckpoint);
    case PR_MMAP_SIZE:
      /* as SQLite: no row for an in-memory database (no map there) */
      if (pager_is_memory(pg)) return SHALE_OK;
      if (val) pager_set_mmap_size(pg, parse_i64(val));
      return add_int(out, pager_mmap_size(pg));
    case PR_AUTO_VACUUM:
      return auto_vacuum_pragma(db, val, out);
    case PR_INCREMENTAL_VACUUM:
      return incremental_vacuum_pragma(db, val);
    case PR_LOCKING_MODE: {
      /* As SQLite: without a schema name and without a valid value it
       * reports the connection's default (the last value set); otherwise it
       * sets the default (no schema name) and the pager's mode, and reports
       * the pager's answer (which may refuse, e.g. a heap wal-index). */
      int mode = -1;
      if (val && !util_stricmp(val, "exclusive")) mode = PAGER_LOCKING_EXCLUSIVE;
      if (val && !util_stricmp(val, "normal")) mode = PAGER_LOCKING_NORMAL;
      if (!req->schema && mode < 0) {
        mode = db->set.dflt_lock_mode;
      } else {
        if (!req->schema)
          db->set.dflt_lock_mode = (uint8_t)(mode < 0 ? db->set.dflt_lock_mode : mode);
        mode = pager_set_locking_mode(pg, mode);
      }
      return add_text(out, mode == PAGER_LOCKING_EXCLUSIVE ? "exclusive" : "normal");
    }
    case PR_AUTOMATIC_INDEX:
    case PR_CELL_SIZE_CHECK:
    case PR_CHECKPOINT_FULLFSYNC:
    case PR_COUNT_CHANGES:
    case PR_EMPTY_RESULT_CALLBACKS:
    case PR_FULL_COLUMN_NAMES:
    case PR_FULLFSYNC:
    case PR_IGNORE_CHECK_CONSTRAINTS:
    case PR_LEGACY_ALTER_TABLE:
    case PR_QUERY_ONLY:
    case PR_READ_UNCOMMITTED:
    case PR_SHORT_COLUMN_NAMES:
    case PR_TRUSTED_SCHEMA:
    case PR_WRITABLE_SCHEMA: {
      uint32_t bit = flag_bit(d->id);
      if (!val) return add_int(out, (db->set.pflags & bit) != 0);
      if (parse_bool(val))
        db->set.pflags |= bit;
      else
        db->set.pflags &= ~bit;
      db->set.query_only = (db->set.pflags & API_PF_QUERY_ONLY) != 0;
      api_expire(db); /* as SQLite's OP_Expire after a flag pragma */
      return SHALE_OK;
    }
    case PR_CACHE_SPILL: {
      if (!val) return add_int(out, (db->set.pflags & API_PF_CACHE_SPILL) ? spill_pages(db) : 0);
      int64_t n = 1;
      int isnum = dec_or_hex(val, &n) && n >= INT32_MIN && n <= INT32_MAX;
      if (isnum && n != 0) db->set.cache_spill = (int)n;
      if (isnum ? n != 0 : parse_bool_dflt(val, 1))
        db->set.pflags |= API_PF_CACHE_SPILL;
      else
        db->set.pflags &= ~(uint32_t)API_PF_CACHE_SPILL;
      return SHALE_OK;
    }
    case PR_DATA_VERSION:
      return data_version_pragma(db, out);
    case PR_DEFAULT_CACHE_SIZE:
      return default_cache_pragma(db, val, out);
    case PR_HARD_HEAP_LIMIT: {
      int64_t n;
      if (val && dec_or_hex(val, &n)) {
        int64_t prior = util_alloc_hard_limit(-1);
        if (n > 0 && (prior == 0 || prior > n)) util_alloc_hard_limit(n);
      }
      return add_int(out, util_alloc_hard_limit(-1));
    }
    case PR_SOFT_HEAP_LIMIT: {
      int64_t n;
      if (val && dec_or_hex(val, &n)) util_alloc_soft_limit(n);
      return add_int(out, util_alloc_soft_limit(-1));
    }
    case PR_JOURNAL_SIZE_LIMIT:
      if (val) {
        int64_t n;
        if (!dec_or_hex(val, &n)) n = atoi_prefix(val); /* as SQLite: what a prefix gives */
        db->set.journal_size_limit = n < -1 ? -1 : n;
      }
      return add_int(out, db->set.journal_size_limit);
    case PR_MAX_PAGE_COUNT: {
      int64_t n = 0;
      if (!val || !dec_or_hex(val, &n) || n < 0) n = 0;
      int began;
      rc = api_txn_begin(db, BTREE_TXN_READ, &began);
      if (rc) return rc;
      rc = add_int(out, pager_max_page_count(pg, n));
      return api_txn_end(db, began, rc);
    }
    case PR_MODULE_LIST: {
      /* the registered modules in the order they were registered (the
       * registry lists the newest first) */
      int n = 0;
      for (const VtabModule *m = db->vtabs.mods; m; m = m->next) n++;
      const char **names = shale_malloc((size_t)(n ? n : 1) * sizeof *names);
      if (!names) return SHALE_NOMEM;
      int k = n;
      for (const VtabModule *m = db->vtabs.mods; m; m = m->next) names[--k] = m->name;
      int *ord = compile_sql_table_hash_order(names, n); /* SQLite's module hash */
      if (!ord) {
        shale_free(names);
        return SHALE_NOMEM;
      }
      for (int i = 0; i < n && rc == SHALE_OK; i++) rc = add_text(out, names[ord[i]]);
      shale_free(ord);
      shale_free(names);
      return rc;
    }
    case PR_PRAGMA_LIST:
      for (size_t i = 0; i < sizeof defs / sizeof defs[0] && rc == SHALE_OK; i++)
        rc = add_text(out, defs[i].name);
      return rc;
    case PR_SECURE_DELETE:
      if (val) db->set.secure_delete = !util_stricmp(val, "fast") ? 2 : (uint8_t)parse_bool(val);
      return add_int(out, db->set.secure_delete);
    case PR_THREADS: {
      int64_t n;
      if (val && dec_or_hex(val, &n) && n >= 0)
        shale_limit(db, SHALE_LIMIT_WORKER_THREADS, (int)(n & 0x7fffffff));
      return add_int(out, shale_limit(db, SHALE_LIMIT_WORKER_THREADS, -1));
    }
    case PR_SHRINK_MEMORY:
      return SHALE_OK; /* caches shrink as pages are released */
    case PR_TEMP_STORE_DIRECTORY:
      return temp_dir_pragma(db, val, out);
    case PR_TEMP_STORE:
      if (val) {
        if (!util_stricmp(val, "default"))
          db->set.temp_store = 0;
        else if (!util_stricmp(val, "file"))
          db->set.temp_store = 1;
        else if (!util_stricmp(val, "memory"))
          db->set.temp_store = 2;
        else /* as SQLite's getTempStore: a first digit 0..2, else 0 */
          db->set.temp_store = (uint8_t)(val[0] >= '0' && val[0] <= '2' ? val[0] - '0' : 0);
        return SHALE_OK;
      }
      return add_int(out, db->set.temp_store);
    default:
      return SHALE_OK;
  }
}
