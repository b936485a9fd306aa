/*
 * sqlite3.c -- the sqlite3_* entry points of build/compat/libsqlite3.so.0 that
 * map onto Shale's native API (include/shale.h).
 *
 * Handles: an sqlite3 IS a shale connection, an sqlite3_stmt IS a shale_stmt
 * and an sqlite3_value IS a shale_value (the header declares them opaque, so
 * a cast is all the mapping needed). Chosen over wrappers because the native
 * API already has SQLite's semantics (zombie connections after close_v2,
 * db_handle, next_stmt, column_value objects) and a wrapper would have to
 * mirror each of those relations; extra per-connection state lives in the
 * handle registry below instead.
 *
 * Owns: the registry of live handles (every connection opened and statement
 * prepared through this layer), with the absolute file name of each
 * connection (sqlite3_db_filename).
 *
 * Invariants:
 *  1. A handle not in the registry (NULL, closed, finalized, or never ours)
 *     is misuse: entry points return SQLITE_MISUSE (or 0/NULL where they
 *     return a value), exactly where SQLite documents NULL as harmless they
 *     return SQLITE_OK (close, close_v2, finalize and reset of NULL).
 *  2. The registry is guarded by one mutex; a lookup never calls into Shale.
 *  3. Result codes and error messages are Shale's, which are SQLite's.
 *  4. Memory handed to the caller (exec's *errmsg, mprintf, expanded_sql,
 *     sqlite3_malloc) is shale_malloc memory, released by sqlite3_free.
 *  5. The registry itself (table and file names) uses the C allocator: it
 *     lives as long as the process, outside shale_malloc's per-test leak
 *     accounting, and is never handed to the caller.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "compat_int.h"

/* ---------------------------------------------------------------- registry */

typedef struct Entry {
  const void *key; /* NULL empty, TOMB deleted */
  int kind;
  char *fullname; /* connections: filename object (uri.c; the name 4 bytes in) */
} Entry;

#define TOMB ((const void *)1)
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static Entry *reg;
static size_t reg_cap, reg_used; /* used counts live + tombstones */

static size_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static Entry *reg_find(const void *p) {
  if (!reg_cap) return NULL;
  size_t m = reg_cap - 1;
  for (size_t i = hash_ptr(p) & m;; i = (i + 1) & m) {
    if (reg[i].key == p) return &reg[i];
    if (!reg[i].key) return NULL;
  }
}

static int reg_grow(void) {
  size_t cap = reg_cap ? reg_cap * 2 : 64;
  size_t live = 0;
  for (size_t i = 0; i < reg_cap; i++)
    if (reg[i].key && reg[i].key != TOMB) live++;
  if (live * 4 < reg_cap) cap = reg_cap; /* mostly tombstones: rehash in place size */
  Entry *n = calloc(cap, sizeof *n);
  if (!n) return 0;
  for (size_t i = 0; i < reg_cap; i++) {
    if (!reg[i].key || reg[i].key == TOMB) continue;
    size_t j = hash_ptr(reg[i].key) & (cap - 1);
    while (n[j].key) j = (j + 1) & (cap - 1);
    n[j] = reg[i];
  }
  free(reg);
  reg = n;
  reg_cap = cap;
  reg_used = live;
  return 1;
}

int compat_reg_add(const void *p, int kind, char *fullname) {
  pthread_mutex_lock(&reg_mu);
  int ok = 1;
  if ((reg_used + 1) * 2 > reg_cap) ok = reg_grow();
  if (ok) {
    size_t m = reg_cap - 1, i = hash_ptr(p) & m;
    while (reg[i].key && reg[i].key != TOMB) i = (i + 1) & m;
    if (!reg[i].key) reg_used++;
    reg[i].key = p;
    reg[i].kind = kind;
    reg[i].fullname = fullname;
  }
  pthread_mutex_unlock(&reg_mu);
  return ok;
}

void compat_reg_del(const void *p) {
  pthread_mutex_lock(&reg_mu);
  Entry *e = reg_find(p);
  if (e) {
    free(e->fullname);
    e->fullname = NULL;
    e->key = TOMB;
    e->kind = 0;
  }
  pthread_mutex_unlock(&reg_mu);
}

int compat_reg_has(const void *p, int kind) {
  if (!p) return 0;
  pthread_mutex_lock(&reg_mu);
  Entry *e = reg_find(p);
  int ok = e && e->kind == kind;
  pthread_mutex_unlock(&reg_mu);
  return ok;
}

/* The stored absolute name of a connection (stable until it closes). */
static const char *reg_fullname(const void *p) {
  pthread_mutex_lock(&reg_mu);
  Entry *e = reg_find(p);
  const char *z = e && e->fullname ? e->fullname + 4 : NULL; /* uri.c's filename object */
  pthread_mutex_unlock(&reg_mu);
  return z;
}

#define DB(x) ((shale *)(x))
#define ST(x) ((shale_stmt *)(x))
#define VAL(x) ((shale_value *)(x))

/* ---------------------------------------------------------------- library */

const char sqlite3_version[] = SQLITE_VERSION;
char *sqlite3_temp_directory = NULL;
char *sqlite3_data_directory = NULL;

const char *sqlite3_libversion(void) { return sqlite3_version; }
const char *sqlite3_sourceid(void) { return SQLITE_SOURCE_ID; }
int sqlite3_libversion_number(void) { return SQLITE_VERSION_NUMBER; }
/* Connections may be used from any thread, one thread at a time. */
int sqlite3_threadsafe(void) { return 2; }
int sqlite3_initialize(void) { return SQLITE_OK; }
int sqlite3_shutdown(void) { return SQLITE_OK; }
int sqlite3_os_init(void) { return SQLITE_OK; }
int sqlite3_os_end(void) { return SQLITE_OK; }

int sqlite3_config(int op, ...) {
  if (op == SQLITE_CONFIG_URI) { /* the default for opens without SQLITE_OPEN_URI */
    va_list ap;
    va_start(ap, op);
    compat_config_uri(va_arg(ap, int));
    va_end(ap);
    return SQLITE_OK;
  }
  switch (op) {
    case SQLITE_CONFIG_SINGLETHREAD:
    case SQLITE_CONFIG_MULTITHREAD:
    case SQLITE_CONFIG_SERIALIZED:
    case SQLITE_CONFIG_MEMSTATUS:
    case SQLITE_CONFIG_LOOKASIDE:
    case SQLITE_CONFIG_COVERING_INDEX_SCAN:
    case SQLITE_CONFIG_MMAP_SIZE:
    case SQLITE_CONFIG_STMTJRNL_SPILL:
    case SQLITE_CONFIG_SMALL_MALLOC:
    case SQLITE_CONFIG_SORTERREF_SIZE:
    case SQLITE_CONFIG_MEMDB_MAXSIZE:
    case SQLITE_CONFIG_PMASZ:
    case SQLITE_CONFIG_WIN32_HEAPSIZE:
      return SQLITE_OK; /* tuning hints: accepted, nothing to tune */
    default:
      return SQLITE_ERROR; /* replacing a subsystem (malloc, mutex, pcache, log...) */
  }
}

/* ---------------------------------------------------------------- memory */

void *sqlite3_malloc(int n) { return n <= 0 ? NULL : shale_malloc((size_t)n); }
void *sqlite3_malloc64(sqlite3_uint64 n) {
  return n == 0 || n > 0x7fffff00u ? NULL : shale_malloc((size_t)n);
}
void *sqlite3_realloc(void *p, int n) {
  if (n <= 0) {
    shale_free(p);
    return NULL;
  }
  return shale_realloc(p, (size_t)n);
}
void *sqlite3_realloc64(void *p, sqlite3_uint64 n) {
  if (n == 0) {
    shale_free(p);
    return NULL;
  }
  if (n > 0x7fffff00u) return NULL;
  return shale_realloc(p, (size_t)n);
}
void sqlite3_free(void *p) { shale_free(p); }
/* shale_malloc keeps the payload size in the 16 bytes before the payload
 * (src/util/alloc.c); tests/compat checks this stays true. */
sqlite3_uint64 sqlite3_msize(void *p) {
  if (!p) return 0;
  size_t n;
  memcpy(&n, (const char *)p - 16, sizeof n);
  return n;
}
sqlite3_int64 sqlite3_memory_used(void) { return util_alloc_bytes(); }

void sqlite3_randomness(int n, void *p) {
  if (n <= 0 || !p) return;
  util_random(p, n);
}

int sqlite3_sleep(int ms) {
  if (ms < 0) ms = 0;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
  return ms;
}

static int fold(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
int sqlite3_strnicmp(const char *a, const char *b, int n) {
  if (!a) return b ? -1 : 0;
  if (!b) return 1;
  for (; n > 0; n--, a++, b++) {
    int d = fold((unsigned char)*a) - fold((unsigned char)*b);
    if (d || !*a) return d;
  }
  return 0;
}
int sqlite3_stricmp(const char *a, const char *b) { return sqlite3_strnicmp(a, b, INT_MAX); }

const char *sqlite3_errstr(int rc) { return shale_errstr(rc); }

/* ---------------------------------------------------------------- connections */

static void shared_release(void *name) {
  compat_shared_unref(name);
  free(name);
}

/* The file name goes through uri.c first (URIs, modes, shared memory
 * databases); a name it rejects still gives a handle, which reports the
 * error and refuses statements, as SQLite's. */
int sqlite3_open_v2(const char *filename, sqlite3 **ppdb, int flags, const char *vfs) {
  if (!ppdb) return SQLITE_MISUSE;
  CompatOpen o;
  int prc = compat_open_parse(filename, flags, vfs, &o);
  shale *db = NULL;
  int rc = prc ? shale_open_v2("", &db, 0, NULL) : shale_open_v2(o.path, &db, o.flags, o.vfs);
  if (prc && db) {
    shale_set_error(db, prc, o.err ? o.err : "out of memory");
    rc = prc;
  }
  if (db && !compat_reg_add(db, COMPAT_DB, o.fname)) {
    shale_close(db);
    db = NULL;
    rc = SQLITE_NOMEM;
  } else {
    o.fname = NULL; /* the registry's now */
  }
  if (db && o.shared) {
    if (compat_hold(db, COMPAT_SLOT_SHARED, o.shared, shared_release)) o.shared = NULL;
  }
  if (o.shared) compat_shared_unref(o.shared);
  compat_open_free(&o);
  *ppdb = (sqlite3 *)db;
  return rc;
}

int sqlite3_open(const char *filename, sqlite3 **ppdb) {
  return sqlite3_open_v2(filename, ppdb, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
}

static int close_common(sqlite3 *db, int v2) {
  if (!db) return SQLITE_OK;
  if (!compat_reg_has(db, COMPAT_DB)) return SQLITE_MISUSE;
  int rc = v2 ? shale_close_v2(DB(db)) : shale_close(DB(db));
  if (rc == SQLITE_OK) {
    compat_reg_del(db);
    compat_forget(db);
  }
  return rc;
}
int sqlite3_close(sqlite3 *db) { return close_common(db, 0); }
int sqlite3_close_v2(sqlite3 *db) { return close_common(db, 1); }

#define CHECK_DB(db, ret) \
  do { \
    if (!compat_reg_has((db), COMPAT_DB)) return ret; \
  } while (0)

int sqlite3_extended_result_codes(sqlite3 *db, int onoff) {
  CHECK_DB(db, SQLITE_MISUSE);
  return shale_extended_result_codes(DB(db), onoff);
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **),
                 void *arg, char **errmsg) {
  if (errmsg) *errmsg = NULL;
  CHECK_DB(db, SQLITE_MISUSE);
  /* statements through sqlite3_prepare_v2, so that callbacks handed one of
   * them (trace, authorizer) can use it as an sqlite3_stmt */
  const char *z = sql ? sql : "";
  int rc = SQLITE_OK;
  char **cols = NULL;
  while (*z && rc == SQLITE_OK) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    rc = sqlite3_prepare_v2(db, z, -1, &st, &tail);
    if (rc != SQLITE_OK) break;
    z = tail && tail > z ? tail : z + strlen(z);
    if (!st) continue;
    int ncol = sqlite3_column_count(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (!cb) continue;
      if (!cols) {
        cols = sqlite3_malloc64(sizeof *cols * (size_t)(2 * ncol + 1));
        if (!cols) {
          rc = SQLITE_NOMEM;
          break;
        }
        for (int i = 0; i < ncol; i++) cols[i] = (char *)sqlite3_column_name(st, i);
      }
      for (int i = 0; i < ncol; i++) cols[ncol + i] = (char *)sqlite3_column_text(st, i);
      cols[2 * ncol] = NULL;
      if (cb(arg, ncol, cols + ncol, cols)) {
        rc = SQLITE_ABORT;
        break;
      }
    }
    sqlite3_free(cols);
    cols = NULL;
    if (rc == SQLITE_ABORT || rc == SQLITE_NOMEM) {
      sqlite3_finalize(st);
      shale_set_error(DB(db), rc, rc == SQLITE_ABORT ? "query aborted" : "out of memory");
      break;
    }
    int r2 = sqlite3_finalize(st);
    rc = rc == SQLITE_DONE ? r2 : r2 ? r2 : rc;
  }
  if (rc != SQLITE_OK && errmsg) *errmsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_last_insert_rowid(DB(db));
}
int sqlite3_changes(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_changes(DB(db));
}
sqlite3_int64 sqlite3_changes64(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_changes64(DB(db));
}
int sqlite3_total_changes(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_total_changes(DB(db));
}
sqlite3_int64 sqlite3_total_changes64(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_total_changes64(DB(db));
}
void sqlite3_interrupt(sqlite3 *db) {
  if (compat_reg_has(db, COMPAT_DB)) shale_interrupt(DB(db));
}
int sqlite3_busy_timeout(sqlite3 *db, int ms) {
  CHECK_DB(db, SQLITE_MISUSE);
  return shale_busy_timeout(DB(db), ms);
}
int sqlite3_get_autocommit(sqlite3 *db) {
  CHECK_DB(db, 0);
  return shale_get_autocommit(DB(db));
}

int sqlite3_errcode(sqlite3 *db) {
  if (!db) return SQLITE_NOMEM;
  CHECK_DB(db, SQLITE_MISUSE);
  return shale_errcode(DB(db));
}
int sqlite3_extended_errcode(sqlite3 *db) {
  if (!db) return SQLITE_NOMEM;
  CHECK_DB(db, SQLITE_MISUSE);
  return shale_extended_errcode(DB(db));
}
const char *sqlite3_errmsg(sqlite3 *db) {
  if (!db) return "out of memory";
  CHECK_DB(db, "bad parameter or other API misuse");
  return shale_errmsg(DB(db));
}

static void free_block(void *p) { free(p); }

/* main: the connection's filename object; temp, memory: an empty one;
 * attached files: one made and held for the connection (attached names may
 * change with ATTACH/DETACH, so it is remade when the file differs). */
int sqlite3_error_offset(sqlite3 *db) {
  CHECK_DB(db, -1);
  return shale_error_offset(DB(db));
}

const char *sqlite3_db_filename(sqlite3 *db, const char *zdb) {
  static const char empty[10];
  CHECK_DB(db, NULL);
  const char *f = shale_db_filename(DB(db), zdb);
  if (!f) return NULL;
  if (!zdb || !sqlite3_stricmp(zdb, "main")) return reg_fullname(db);
  if (!f[0]) return empty + 4;
  int i = 2;
  for (const char *n; (n = shale_db_name(DB(db), i)) != NULL && sqlite3_stricmp(n, zdb); i++) {
  }
  char *b = compat_held(db, COMPAT_SLOT_DBFILE - i);
  char *want = compat_fname_file(f, 0, NULL);
  if (!want) return NULL;
  if (b && !strcmp(b + 4, want + 4)) {
    free(want);
    return b + 4;
  }
  if (!compat_hold(db, COMPAT_SLOT_DBFILE - i, want, free_block)) {
    free(want);
    return NULL;
  }
  return want + 4;
}
int sqlite3_db_readonly(sqlite3 *db, const char *zdb) {
  CHECK_DB(db, -1);
  return shale_db_readonly(DB(db), zdb);
}
const char *sqlite3_db_name(sqlite3 *db, int n) {
  CHECK_DB(db, NULL);
  return shale_db_name(DB(db), n);
}

/* Run a one-row PRAGMA; copies up to 3 integer columns into out[]. */
static int pragma_row(sqlite3 *db, const char *sql, int out[3]) {
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(DB(db), sql, -1, &st, NULL);
  if (rc) return rc;
  rc = shale_step(st);
  if (rc == SQLITE_ROW) {
    int n = shale_column_count(st);
    for (int i = 0; i < n && i < 3; i++) out[i] = shale_column_int(st, i);
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  int rc2 = shale_finalize(st);
  return rc ? rc : rc2;
}

int sqlite3_wal_checkpoint_v2(sqlite3 *db, const char *zdb, int mode, int *plog, int *pckpt) {
  if (plog) *plog = -1;
  if (pckpt) *pckpt = -1;
  CHECK_DB(db, SQLITE_MISUSE);
  static const char *const modes[] = {"PASSIVE", "FULL", "RESTART", "TRUNCATE"};
  if (mode < SQLITE_CHECKPOINT_PASSIVE || mode > SQLITE_CHECKPOINT_TRUNCATE) {
    shale_set_error(DB(db), SQLITE_MISUSE, "bad parameter or other API misuse");
    return SQLITE_MISUSE;
  }
  if (zdb && zdb[0] && strcmp(zdb, "main")) {
    char *m = sqlite3_mprintf("unknown database: %s", zdb);
    shale_set_error(DB(db), SQLITE_ERROR, m);
    sqlite3_free(m);
    return SQLITE_ERROR;
  }
  char sql[64];
  sqlite3_snprintf(sizeof sql, sql, "PRAGMA main.wal_checkpoint(%s)", modes[mode]);
  int r[3] = {0, -1, -1};
  int rc = pragma_row(db, sql, r);
  if (rc) return rc;
  if (plog) *plog = r[1];
  if (pckpt) *pckpt = r[2];
  return r[0] ? SQLITE_BUSY : SQLITE_OK;
}
int sqlite3_wal_checkpoint(sqlite3 *db, const char *zdb) {
  return sqlite3_wal_checkpoint_v2(db, zdb, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}
int sqlite3_wal_autocheckpoint(sqlite3 *db, int n) {
  CHECK_DB(db, SQLITE_MISUSE);
  char sql[64];
  sqlite3_snprintf(sizeof sql, sql, "PRAGMA wal_autocheckpoint=%d", n);
  int r[3];
  return pragma_row(db, sql, r);
}

/* sqlite3_db_config: foreign key enforcement, triggers, views and
 * double-quoted strings (DML, DDL) are settings of the connection; the
 * other on/off options are at the state Shale has fixed (trusted schema on;
 * the rest off). Reading or re-setting that state succeeds; a change away
 * from it is refused with a message. */
int sqlite3_db_config(sqlite3 *db, int op, ...) {
  CHECK_DB(db, SQLITE_MISUSE);
  if (op == SQLITE_DBCONFIG_LOOKASIDE) return SQLITE_OK; /* a memory hint */
  if (op < SQLITE_DBCONFIG_ENABLE_FKEY || op > SQLITE_DBCONFIG_MAX) {
    char *m = sqlite3_mprintf("sqlite3_db_config option %d is not supported by Shale yet", op);
    shale_set_error(DB(db), SQLITE_ERROR, m);
    sqlite3_free(m);
    return SQLITE_ERROR;
  }
  va_list ap;
  va_start(ap, op);
  int onoff = va_arg(ap, int);
  int *pres = va_arg(ap, int *);
  va_end(ap);
  if (op == SQLITE_DBCONFIG_ENABLE_FKEY) {
    int now = shale_foreign_keys(DB(db), onoff);
    if (pres) *pres = now;
    return SQLITE_OK;
  }
  int sw = shale_db_config_switch(DB(db), op, onoff < 0 ? -1 : onoff != 0);
  if (sw >= 0) { /* triggers, views, double-quoted strings: real switches */
    if (pres) *pres = sw;
    return SQLITE_OK;
  }
  int fixed_on = op == SQLITE_DBCONFIG_ENABLE_TRIGGER || op == SQLITE_DBCONFIG_ENABLE_VIEW ||
                 op == SQLITE_DBCONFIG_DQS_DML || op == SQLITE_DBCONFIG_DQS_DDL ||
                 op == SQLITE_DBCONFIG_TRUSTED_SCHEMA;
  if (onoff >= 0 && (onoff != 0) != fixed_on) {
    char *m = sqlite3_mprintf("sqlite3_db_config option %d set to %d is not supported by Shale yet",
                              op, onoff != 0);
    shale_set_error(DB(db), SQLITE_ERROR, m);
    sqlite3_free(m);
    return SQLITE_ERROR;
  }
  if (pres) *pres = fixed_on;
  return SQLITE_OK;
}

/* ---------------------------------------------------------------- statements */

static int prepare_common(sqlite3 *db, const char *sql, int n, unsigned flags, int v3,
                          sqlite3_stmt **pst, const char **tail) {
  if (pst) *pst = NULL;
  if (tail) *tail = sql;
  CHECK_DB(db, SQLITE_MISUSE);
  if (!pst || !sql) {
    shale_set_error(DB(db), SQLITE_MISUSE, "bad parameter or other API misuse");
    return SQLITE_MISUSE;
  }
  shale_stmt *st = NULL;
  int rc = v3 ? shale_prepare_v3(DB(db), sql, n, flags, &st, tail)
              : shale_prepare_v2(DB(db), sql, n, &st, tail);
  if (st && !compat_reg_add(st, COMPAT_STMT, NULL)) {
    shale_finalize(st);
    st = NULL;
    shale_set_error(DB(db), SQLITE_NOMEM, "out of memory");
    rc = SQLITE_NOMEM;
  }
  *pst = (sqlite3_stmt *)st;
  return rc;
}
int sqlite3_prepare(sqlite3 *db, const char *sql, int n, sqlite3_stmt **pst, const char **tail) {
  return prepare_common(db, sql, n, 0, 0, pst, tail);
}
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **pst,
                       const char **tail) {
  return prepare_common(db, sql, n, 0, 0, pst, tail);
}
int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned flags, sqlite3_stmt **pst,
                       const char **tail) {
  return prepare_common(db, sql, n, flags, 1, pst, tail);
}

#define LIVE(st) compat_reg_has((st), COMPAT_STMT)
#define CHECK_ST(st, ret) \
  do { \
    if (!LIVE(st)) return ret; \
  } while (0)

int sqlite3_step(sqlite3_stmt *st) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_step(ST(st));
}
int sqlite3_reset(sqlite3_stmt *st) {
  if (!st) return SQLITE_OK;
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_reset(ST(st));
}
int sqlite3_finalize(sqlite3_stmt *st) {
  if (!st) return SQLITE_OK;
  CHECK_ST(st, SQLITE_MISUSE);
  compat_reg_del(st);
  compat_forget(st);
  return shale_finalize(ST(st));
}

const char *sqlite3_sql(sqlite3_stmt *st) {
  CHECK_ST(st, NULL);
  return shale_sql(ST(st));
}
char *sqlite3_expanded_sql(sqlite3_stmt *st) {
  CHECK_ST(st, NULL);
  return shale_expanded_sql(ST(st));
}
char *sqlite3_normalized_sql(sqlite3_stmt *st) { return NULL; }
int sqlite3_stmt_readonly(sqlite3_stmt *st) {
  CHECK_ST(st, 1);
  return shale_stmt_readonly(ST(st));
}
int sqlite3_stmt_busy(sqlite3_stmt *st) {
  CHECK_ST(st, 0);
  return shale_stmt_busy(ST(st));
}
sqlite3 *sqlite3_db_handle(sqlite3_stmt *st) {
  CHECK_ST(st, NULL);
  return (sqlite3 *)shale_db_handle(ST(st));
}
sqlite3_stmt *sqlite3_next_stmt(sqlite3 *db, sqlite3_stmt *st) {
  CHECK_DB(db, NULL);
  if (st && !LIVE(st)) return NULL;
  return (sqlite3_stmt *)shale_next_stmt(DB(db), ST(st));
}
int sqlite3_data_count(sqlite3_stmt *st) {
  CHECK_ST(st, 0);
  return shale_data_count(ST(st));
}

/* ---- binding ---- */

static void drop(const void *p, void (*destroy)(void *)) {
  if (destroy && destroy != SQLITE_STATIC && destroy != SQLITE_TRANSIENT) destroy((void *)p);
}

int sqlite3_bind_null(sqlite3_stmt *st, int i) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_null(ST(st), i);
}
int sqlite3_bind_int(sqlite3_stmt *st, int i, int v) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_int(ST(st), i, v);
}
int sqlite3_bind_int64(sqlite3_stmt *st, int i, sqlite3_int64 v) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_int64(ST(st), i, v);
}
int sqlite3_bind_double(sqlite3_stmt *st, int i, double v) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_double(ST(st), i, v);
}
int sqlite3_bind_text(sqlite3_stmt *st, int i, const char *z, int n, void (*d)(void *)) {
  if (!LIVE(st)) {
    drop(z, d);
    return SQLITE_MISUSE;
  }
  return shale_bind_text(ST(st), i, z, n, d);
}
int sqlite3_bind_blob(sqlite3_stmt *st, int i, const void *z, int n, void (*d)(void *)) {
  if (!LIVE(st)) {
    drop(z, d);
    return SQLITE_MISUSE;
  }
  return shale_bind_blob(ST(st), i, z, n, d);
}
int sqlite3_bind_text64(sqlite3_stmt *st, int i, const char *z, sqlite3_uint64 n,
                        void (*d)(void *), unsigned char enc) {
  if (!LIVE(st)) {
    drop(z, d);
    return SQLITE_MISUSE;
  }
  if (n > 0x7fffffff) {
    drop(z, d);
    return SQLITE_TOOBIG;
  }
  if (enc == SQLITE_UTF16 || enc == SQLITE_UTF16LE || enc == SQLITE_UTF16BE)
    return compat_bind_text16(st, i, z, (sqlite3_int64)n, d, enc);
  return shale_bind_text(ST(st), i, z, (int)n, d);
}
int sqlite3_bind_blob64(sqlite3_stmt *st, int i, const void *z, sqlite3_uint64 n,
                        void (*d)(void *)) {
  if (!LIVE(st)) {
    drop(z, d);
    return SQLITE_MISUSE;
  }
  if (n > 0x7fffffff) {
    drop(z, d);
    return SQLITE_TOOBIG;
  }
  return shale_bind_blob(ST(st), i, z, (int)n, d);
}
int sqlite3_bind_zeroblob(sqlite3_stmt *st, int i, int n) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_zeroblob(ST(st), i, n);
}
int sqlite3_bind_zeroblob64(sqlite3_stmt *st, int i, sqlite3_uint64 n) {
  CHECK_ST(st, SQLITE_MISUSE);
  if (n > 1000000000) return SQLITE_TOOBIG;
  return shale_bind_zeroblob(ST(st), i, (int)n);
}
int sqlite3_bind_value(sqlite3_stmt *st, int i, const sqlite3_value *v) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_bind_value(ST(st), i, (const shale_value *)v);
}
int sqlite3_bind_parameter_count(sqlite3_stmt *st) {
  CHECK_ST(st, 0);
  return shale_bind_parameter_count(ST(st));
}
int sqlite3_bind_parameter_index(sqlite3_stmt *st, const char *name) {
  CHECK_ST(st, 0);
  return name ? shale_bind_parameter_index(ST(st), name) : 0;
}
const char *sqlite3_bind_parameter_name(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_bind_parameter_name(ST(st), i);
}
int sqlite3_clear_bindings(sqlite3_stmt *st) {
  CHECK_ST(st, SQLITE_MISUSE);
  return shale_clear_bindings(ST(st));
}

/* ---- columns ---- */

int sqlite3_column_count(sqlite3_stmt *st) {
  CHECK_ST(st, 0);
  return shale_column_count(ST(st));
}
int sqlite3_column_type(sqlite3_stmt *st, int i) {
  CHECK_ST(st, SQLITE_NULL);
  return shale_column_type(ST(st), i);
}
int sqlite3_column_int(sqlite3_stmt *st, int i) {
  CHECK_ST(st, 0);
  return shale_column_int(ST(st), i);
}
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *st, int i) {
  CHECK_ST(st, 0);
  return shale_column_int64(ST(st), i);
}
double sqlite3_column_double(sqlite3_stmt *st, int i) {
  CHECK_ST(st, 0.0);
  return shale_column_double(ST(st), i);
}
const unsigned char *sqlite3_column_text(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_text(ST(st), i);
}
const void *sqlite3_column_blob(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_blob(ST(st), i);
}
int sqlite3_column_bytes(sqlite3_stmt *st, int i) {
  CHECK_ST(st, 0);
  return shale_column_bytes(ST(st), i);
}
sqlite3_value *sqlite3_column_value(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return (sqlite3_value *)shale_column_value(ST(st), i);
}
const char *sqlite3_column_name(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_name(ST(st), i);
}
const char *sqlite3_column_decltype(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_decltype(ST(st), i);
}
const char *sqlite3_column_table_name(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_table_name(ST(st), i);
}
const char *sqlite3_column_origin_name(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_origin_name(ST(st), i);
}
const char *sqlite3_column_database_name(sqlite3_stmt *st, int i) {
  CHECK_ST(st, NULL);
  return shale_column_database_name(ST(st), i);
}

/* ---- values (column_value results and value_dup copies) ---- */

const void *sqlite3_value_blob(sqlite3_value *v) { return shale_value_blob(VAL(v)); }
double sqlite3_value_double(sqlite3_value *v) { return shale_value_double(VAL(v)); }
int sqlite3_value_int(sqlite3_value *v) { return shale_value_int(VAL(v)); }
sqlite3_int64 sqlite3_value_int64(sqlite3_value *v) { return shale_value_int64(VAL(v)); }
const unsigned char *sqlite3_value_text(sqlite3_value *v) { return shale_value_text(VAL(v)); }
int sqlite3_value_bytes(sqlite3_value *v) { return shale_value_bytes(VAL(v)); }
int sqlite3_value_type(sqlite3_value *v) { return shale_value_type(VAL(v)); }
int sqlite3_value_numeric_type(sqlite3_value *v) { return shale_value_numeric_type(VAL(v)); }
int sqlite3_value_nochange(sqlite3_value *v) { return 0; }
int sqlite3_value_frombind(sqlite3_value *v) { return 0; }
unsigned int sqlite3_value_subtype(sqlite3_value *v) { return shale_value_subtype(VAL(v)); }
sqlite3_value *sqlite3_value_dup(const sqlite3_value *v) {
  return (sqlite3_value *)shale_value_dup((const shale_value *)v);
}
void sqlite3_value_free(sqlite3_value *v) { shale_value_free(VAL(v)); }
