/*
 * utf16.c -- the UTF-16 entry points of the sqlite3 API: open16,
 * prepare16(_v2/_v3), bind_text16 (and bind_text64 with a UTF-16
 * encoding), column_text16/bytes16 and the column name16 family, errmsg16,
 * value_text16(le/be)/bytes16, value_encoding, the result_text16 family,
 * create_function16, create_collation16 (and UTF-16 collations through
 * create_collation), collation_needed16, complete16.
 *
 * Shale keeps text as UTF-8 inside (UTF-16 databases convert at the record
 * boundary, src/record/textenc.c): UTF-16 coming in is
 * converted to UTF-8 at the door, UTF-16 going out is converted from it
 * (src/util/utf16.c, with SQLite's rules for bad input). SQLITE_UTF16 means
 * the machine's byte order (little-endian here); a byte-order mark at the
 * start of bound or returned UTF-16 text picks the order and is dropped, as
 * SQLite does for values.
 *
 * Owns: nothing itself; the UTF-16 strings whose life SQLite ties to a
 * handle (column names and declared types until the statement is finalized,
 * errmsg16 until the next call, collation_needed16 adapters until the
 * connection closes) are held for their handle by held.c.
 *
 * Invariants:
 *  1. A held string lives until its handle is finalized or closed, or until
 *     the same (handle, slot) is converted again.
 *  2. Text values converted for value/column_text16 live in the value's own
 *     buffer (shale_value_text16), so they are valid exactly as long as
 *     SQLite's are: until the value changes or is converted again.
 *  3. A destructor passed with UTF-16 text runs once, right after the text
 *     was converted (Shale keeps only its UTF-8 copy).
 */
#include <string.h>

#include "compat_int.h"

#define BE_NATIVE 0 /* x86 and most ARM: SQLITE_UTF16 is UTF-16LE */

/* ---------------------------------------------------------------- conversions */

/* UTF-8 z (NUL-terminated) as a shale_malloc'ed UTF-16 (native) string. */
static void *to16(const char *z) {
  if (!z) return NULL;
  size_t n = strlen(z);
  uint8_t *o = shale_malloc(2 * n + 2);
  if (!o) return NULL;
  size_t m = util_utf8_to_utf16(z, n, BE_NATIVE, o);
  o[m] = o[m + 1] = 0;
  return o;
}

/* UTF-16 text of a value being stored (bind, result): nbytes < 0 up to the
 * terminator; enc SQLITE_UTF16 / LE / BE; a leading byte-order mark picks
 * the order and is dropped. UTF-8 result, *n8 its length. */
static char *value_from16(const void *z, sqlite3_int64 nbytes, int enc, int *n8) {
  const uint8_t *p = z;
  size_t n = nbytes < 0 ? util_utf16_len(z) : (size_t)nbytes;
  int be = enc == SQLITE_UTF16BE ? 1 : enc == SQLITE_UTF16LE ? 0 : BE_NATIVE;
  if (n >= 2 && ((p[0] == 0xfe && p[1] == 0xff) || (p[0] == 0xff && p[1] == 0xfe))) {
    be = p[0] == 0xfe;
    p += 2;
    n -= 2;
  }
  return util_utf16_to_utf8(p, (int)n, be, n8);
}

/* SQL text or a name in native UTF-16: nbytes < 0 up to the terminator, else
 * at most nbytes, stopping at a terminator (as SQLite's prepare16). */
static char *sql_from16(const void *z, int nbytes, int *n8) {
  const uint8_t *p = z;
  size_t n = 0;
  if (nbytes < 0)
    n = util_utf16_len(z);
  else
    while (n + 1 < (size_t)nbytes && (p[n] || p[n + 1])) n += 2;
  return util_utf16_to_utf8(p, (int)n, BE_NATIVE, n8);
}

static void run_dtor(const void *z, void (*d)(void *)) {
  if (z && d && d != SQLITE_STATIC && d != SQLITE_TRANSIENT) d((void *)z);
}

/* ---------------------------------------------------------------- connections */

int sqlite3_open16(const void *filename, sqlite3 **ppdb) {
  if (!ppdb) return SQLITE_MISUSE;
  *ppdb = NULL;
  char *f = util_utf16_to_utf8(filename ? filename : "\0", -1, BE_NATIVE, NULL);
  if (!f) return SQLITE_NOMEM;
  int rc = sqlite3_open_v2(f, ppdb, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  shale_free(f);
  /* as SQLite: a new database made through open16 is UTF-16 in the
   * machine's byte order */
  if (rc == SQLITE_OK) shale_db_new_encoding((shale *)*ppdb, BE_NATIVE ? 3 : 2);
  return rc;
}

const void *sqlite3_errmsg16(sqlite3 *db) {
  static const uint16_t oom[] = {'o', 'u', 't', ' ', 'o', 'f', ' ',
                                 'm', 'e', 'm', 'o', 'r', 'y', 0};
  static const char misuse[] = "bad parameter or other API misuse";
  static uint16_t misuse16[sizeof misuse];
  if (!db) return oom;
  if (!shale_db_live((shale *)db)) {
    for (size_t i = 0; i < sizeof misuse; i++) misuse16[i] = (uint16_t)misuse[i];
    return misuse16;
  }
  void *z = to16(sqlite3_errmsg(db));
  if (!z || !compat_hold(db, COMPAT_SLOT_ERRMSG, z, shale_free)) {
    shale_free(z);
    return oom;
  }
  return z;
}

int sqlite3_complete16(const void *sql) {
  char *z = util_utf16_to_utf8(sql, -1, BE_NATIVE, NULL);
  if (!z) return SQLITE_NOMEM;
  int rc = sqlite3_complete(z);
  shale_free(z);
  return rc;
}

/* ---------------------------------------------------------------- prepare */

static int prep16(sqlite3 *db, const void *sql, int nbytes, unsigned flags, int v3,
                  sqlite3_stmt **pst, const void **tail) {
  if (pst) *pst = NULL;
  if (tail) *tail = sql;
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  if (!pst || !sql)
    return v3 ? sqlite3_prepare_v3(db, NULL, 0, flags, pst, NULL)
              : sqlite3_prepare_v2(db, NULL, 0, pst, NULL);
  int n8 = 0;
  char *z = sql_from16(sql, nbytes, &n8);
  if (!z) return SQLITE_NOMEM;
  const char *t8 = NULL;
  int rc = v3 ? sqlite3_prepare_v3(db, z, n8 + 1, flags, pst, &t8)
              : sqlite3_prepare_v2(db, z, n8 + 1, pst, &t8);
  if (tail && t8) { /* the same character in the UTF-16 text */
    size_t k = (size_t)(t8 - z);
    uint8_t *tmp = shale_malloc(2 * k + 2);
    if (tmp) *tail = (const uint8_t *)sql + util_utf8_to_utf16(z, k, BE_NATIVE, tmp);
    shale_free(tmp);
  }
  shale_free(z);
  return rc;
}
int sqlite3_prepare16(sqlite3 *db, const void *sql, int n, sqlite3_stmt **pst, const void **tail) {
  return prep16(db, sql, n, 0, 0, pst, tail);
}
int sqlite3_prepare16_v2(sqlite3 *db, const void *sql, int n, sqlite3_stmt **pst,
                         const void **tail) {
  return prep16(db, sql, n, 0, 0, pst, tail);
}
int sqlite3_prepare16_v3(sqlite3 *db, const void *sql, int n, unsigned f, sqlite3_stmt **pst,
                         const void **tail) {
  return prep16(db, sql, n, f, 1, pst, tail);
}

/* ---------------------------------------------------------------- binding */

int compat_bind_text16(sqlite3_stmt *st, int i, const void *z, sqlite3_int64 n, void (*d)(void *),
                       int enc) {
  if (!shale_stmt_live((shale_stmt *)st)) {
    run_dtor(z, d);
    return SQLITE_MISUSE;
  }
  if (!z) return sqlite3_bind_null(st, i);
  int n8 = 0;
  char *z8 = value_from16(z, n, enc, &n8);
  run_dtor(z, d); /* invariant 3 */
  if (!z8) return SQLITE_NOMEM;
  return sqlite3_bind_text(st, i, z8, n8, sqlite3_free);
}
int sqlite3_bind_text16(sqlite3_stmt *st, int i, const void *z, int n, void (*d)(void *)) {
  return compat_bind_text16(st, i, z, n, d, SQLITE_UTF16);
}

/* ---------------------------------------------------------------- columns */

const void *sqlite3_column_text16(sqlite3_stmt *st, int i) {
  if (!shale_stmt_live((shale_stmt *)st)) return NULL;
  return shale_value_text16(shale_column_value((shale_stmt *)st, i), BE_NATIVE, NULL);
}
int sqlite3_column_bytes16(sqlite3_stmt *st, int i) {
  if (!shale_stmt_live((shale_stmt *)st)) return 0;
  return shale_value_bytes16(shale_column_value((shale_stmt *)st, i));
}

/* A name of column i (kind k of the five) as UTF-16, held until finalize. */
static const void *name16(sqlite3_stmt *st, int i, int k, const char *z) {
  if (!z) return NULL;
  int slot = i * 8 + k;
  void *p = compat_held(st, slot);
  if (p) return p;
  p = to16(z);
  if (!p || !compat_hold(st, slot, p, shale_free)) {
    shale_free(p);
    return NULL;
  }
  return p;
}
const void *sqlite3_column_name16(sqlite3_stmt *st, int i) {
  return name16(st, i, 0, sqlite3_column_name(st, i));
}
const void *sqlite3_column_database_name16(sqlite3_stmt *st, int i) {
  return name16(st, i, 1, sqlite3_column_database_name(st, i));
}
const void *sqlite3_column_table_name16(sqlite3_stmt *st, int i) {
  return name16(st, i, 2, sqlite3_column_table_name(st, i));
}
const void *sqlite3_column_origin_name16(sqlite3_stmt *st, int i) {
  return name16(st, i, 3, sqlite3_column_origin_name(st, i));
}
const void *sqlite3_column_decltype16(sqlite3_stmt *st, int i) {
  return name16(st, i, 4, sqlite3_column_decltype(st, i));
}

/* ---------------------------------------------------------------- values */

const void *sqlite3_value_text16(sqlite3_value *v) {
  return shale_value_text16((shale_value *)v, BE_NATIVE, NULL);
}
const void *sqlite3_value_text16le(sqlite3_value *v) {
  return shale_value_text16((shale_value *)v, 0, NULL);
}
const void *sqlite3_value_text16be(sqlite3_value *v) {
  return shale_value_text16((shale_value *)v, 1, NULL);
}
int sqlite3_value_bytes16(sqlite3_value *v) { return shale_value_bytes16((shale_value *)v); }
/* Values are UTF-8 inside Shale (databases are UTF-8). */
int sqlite3_value_encoding(sqlite3_value *v) { return SQLITE_UTF8; }

/* ---------------------------------------------------------------- results */

void compat_result_text16(sqlite3_context *c, const void *z, sqlite3_int64 n, void (*d)(void *),
                          int enc) {
  if (!z) {
    sqlite3_result_null(c);
    return;
  }
  int n8 = 0;
  char *z8 = value_from16(z, n, enc, &n8);
  run_dtor(z, d);
  if (!z8) {
    sqlite3_result_error_nomem(c);
    return;
  }
  sqlite3_result_text(c, z8, n8, sqlite3_free);
}
void sqlite3_result_text16(sqlite3_context *c, const void *z, int n, void (*d)(void *)) {
  compat_result_text16(c, z, n, d, SQLITE_UTF16);
}
void sqlite3_result_text16le(sqlite3_context *c, const void *z, int n, void (*d)(void *)) {
  compat_result_text16(c, z, n, d, SQLITE_UTF16LE);
}
void sqlite3_result_text16be(sqlite3_context *c, const void *z, int n, void (*d)(void *)) {
  compat_result_text16(c, z, n, d, SQLITE_UTF16BE);
}
void sqlite3_result_error16(sqlite3_context *c, const void *z, int n) {
  int n8 = 0;
  char *z8 = z ? value_from16(z, n, SQLITE_UTF16, &n8) : NULL;
  if (z && !z8) {
    sqlite3_result_error_nomem(c);
    return;
  }
  sqlite3_result_error(c, z8 ? z8 : "", n8);
  shale_free(z8);
}

/* ---------------------------------------------------------------- functions */

int sqlite3_create_function16(sqlite3 *db, const void *name, int n, int enc, void *app,
                              void (*f)(sqlite3_context *, int, sqlite3_value **),
                              void (*s)(sqlite3_context *, int, sqlite3_value **),
                              void (*fin)(sqlite3_context *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  char *z = name ? sql_from16(name, -1, NULL) : NULL;
  if (name && !z) return SQLITE_NOMEM;
  int rc = sqlite3_create_function(db, z, n, enc, app, f, s, fin);
  shale_free(z);
  return rc;
}

/* ---------------------------------------------------------------- collations */

/* A collation whose comparator wants UTF-16: registered as a UTF-8 one
 * whose comparison converts both strings first. */
typedef struct Coll16 {
  int (*cmp)(void *, int, const void *, int, const void *);
  void *arg;
  void (*destroy)(void *);
  int be;
} Coll16;

static int coll16_cmp(void *p, int na, const void *a, int nb, const void *b) {
  Coll16 *c = p;
  uint8_t buf[512], *x = buf, *y;
  size_t need = 2 * ((size_t)na + (size_t)nb) + 4;
  if (need > sizeof buf && !(x = shale_malloc(need))) return na - nb; /* no memory: an order */
  y = x + 2 * (size_t)na + 2;
  size_t ma = util_utf8_to_utf16(a, (size_t)na, c->be, x);
  size_t mb = util_utf8_to_utf16(b, (size_t)nb, c->be, y);
  int r = c->cmp(c->arg, (int)ma, x, (int)mb, y);
  if (x != buf) shale_free(x);
  return r;
}

static void coll16_free(void *p) {
  Coll16 *c = p;
  if (c->destroy) c->destroy(c->arg);
  shale_free(c);
}

int compat_collation16(sqlite3 *db, const char *name, int enc, void *arg,
                       int (*cmp)(void *, int, const void *, int, const void *),
                       void (*destroy)(void *)) {
  if (!cmp) return shale_create_collation_v2((shale *)db, name, SQLITE_UTF8, arg, NULL, destroy);
  Coll16 *c = shale_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  c->cmp = cmp;
  c->arg = arg;
  c->destroy = destroy;
  c->be = enc == SQLITE_UTF16BE ? 1 : enc == SQLITE_UTF16LE ? 0 : BE_NATIVE;
  int rc = shale_create_collation_v2((shale *)db, name, SQLITE_UTF8, c, coll16_cmp, coll16_free);
  if (rc) shale_free(c); /* the destructor does not run when the call fails */
  return rc;
}

int sqlite3_create_collation16(sqlite3 *db, const void *name, int enc, void *arg,
                               int (*cmp)(void *, int, const void *, int, const void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  char *z = name ? sql_from16(name, -1, NULL) : NULL;
  if (name && !z) return SQLITE_NOMEM;
  int rc = sqlite3_create_collation_v2(db, z, enc, arg, cmp, NULL);
  shale_free(z);
  return rc;
}

typedef struct Needed16 {
  void (*cb)(void *, sqlite3 *, int, const void *);
  void *arg;
} Needed16;

static void needed16_tramp(void *p, shale *db, int enc, const char *name) {
  Needed16 *n = p;
  void *z = to16(name);
  if (!z) return;
  n->cb(n->arg, (sqlite3 *)db, enc, z);
  shale_free(z);
}

/* collation_needed and collation_needed16 share one slot, as in SQLite. */
int sqlite3_collation_needed16(sqlite3 *db, void *arg,
                               void (*cb)(void *, sqlite3 *, int, const void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  if (!cb) return shale_collation_needed((shale *)db, arg, NULL);
  Needed16 *n = shale_malloc(sizeof *n);
  if (!n) return SQLITE_NOMEM;
  n->cb = cb;
  n->arg = arg;
  int rc = shale_collation_needed((shale *)db, n, needed16_tramp);
  if (rc || !compat_hold(db, COMPAT_SLOT_NEEDED, n, shale_free)) {
    if (!rc) shale_collation_needed((shale *)db, NULL, NULL);
    shale_free(n);
    return rc ? rc : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}
