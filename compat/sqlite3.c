/*
 * sqlite3.c -- the sqlite3_* entry points of build/compat/libsqlite3.so.0 that
 * map onto Shale's native API (include/shale.h).
 *
 * Handles: an sqlite3 IS a shale connection, an sqlite3_stmt IS a shale_stmt
 * and an sqlite3_value IS a shale_value (the header declares them opaque, so
 * a cast is all the mapping needed). Chosen over wrappers because the native
 * API already has SQLite's semantics (zombie connections after close_v2,
 * db_handle, next_stmt, column_value objects, the connection mutex of
 * serialized mode, misuse detection) and a wrapper would have to mirror each
 * of those relations.
 *
 * Owns: the library's configuration state (initialized, the threading mode
 * sqlite3_config chose for new connections).
 *
 * Invariants:
 *  1. Handles are checked by the native calls (a state field inside each
 *     object, read without a lock; src/api/api_int.h invariant 6): a NULL,
 *     closed or finalized handle is misuse, entry points return
 *     SQLITE_MISUSE (or 0/NULL where they return a value), and exactly where
 *     SQLite documents NULL as harmless they return SQLITE_OK (close,
 *     close_v2, finalize and reset of NULL). No lock and no lookup is added
 *     per call: each call on a connection or its statements holds only that
 *     connection's mutex (native), as SQLite's serialized mode.
 *  2. An entry point made of several native calls (exec, wal_checkpoint_v2,
 *     db_config) holds the connection's mutex across them, so its error
 *     message is its own.
 *  3. Result codes and error messages are Shale's, which are SQLite's.
 *  4. Memory handed to the caller (exec's *errmsg, mprintf, expanded_sql,
 *     sqlite3_malloc) is shale_malloc memory, released by sqlite3_free.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../src/os/os.h"
#include "compat_int.h"

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
/* Serialized, as Debian's build (SQLITE_THREADSAFE=1): a connection may be
 * shared by threads unless opened with SQLITE_OPEN_NOMUTEX or after
 * sqlite3_config(SQLITE_CONFIG_MULTITHREAD / SINGLETHREAD). */
int sqlite3_threadsafe(void) { return 1; }

static int initialized;     /* sqlite3_initialize ran (no sqlite3_shutdown since) */
static int default_nomutex; /* CONFIG_MULTITHREAD / SINGLETHREAD: no connection mutex */

int sqlite3_initialize(void) {
  if (__atomic_load_n(&initialized, __ATOMIC_ACQUIRE)) return SQLITE_OK;
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&mu);
  int rc = SQLITE_OK;
  if (!__atomic_load_n(&initialized, __ATOMIC_RELAXED)) {
    compat_mem_init();
    compat_ext_init();
    rc = compat_pcache_init();
    if (rc == SQLITE_OK) __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&mu);
  return rc;
}
int sqlite3_shutdown(void) {
  if (__atomic_exchange_n(&initialized, 0, __ATOMIC_ACQ_REL)) {
    compat_pcache_shutdown();
    compat_mem_shutdown();
  }
  return SQLITE_OK;
}
int sqlite3_os_init(void) { return SQLITE_OK; }
int sqlite3_os_end(void) { return SQLITE_OK; }

/* As SQLite: only before sqlite3_initialize (or after sqlite3_shutdown),
 * else SQLITE_MISUSE. */
int sqlite3_config(int op, ...) {
  if (__atomic_load_n(&initialized, __ATOMIC_RELAXED)) return SQLITE_MISUSE;
  if (op == SQLITE_CONFIG_URI) { /* the default for opens without SQLITE_OPEN_URI */
    va_list ap;
    va_start(ap, op);
    compat_config_uri(va_arg(ap, int));
    va_end(ap);
    return SQLITE_OK;
  }
  va_list ap;
  va_start(ap, op);
  int rc = SQLITE_OK;
  switch (op) {
    case SQLITE_CONFIG_MALLOC:
      rc = compat_config_malloc(va_arg(ap, const sqlite3_mem_methods *));
      break;
    case SQLITE_CONFIG_GETMALLOC:
      compat_config_getmalloc(va_arg(ap, sqlite3_mem_methods *));
      break;
    case SQLITE_CONFIG_MUTEX:
      rc = compat_config_mutex(va_arg(ap, const sqlite3_mutex_methods *));
      break;
    case SQLITE_CONFIG_GETMUTEX:
      compat_config_getmutex(va_arg(ap, sqlite3_mutex_methods *));
      break;
    case SQLITE_CONFIG_LOG: {
      void (*fn)(void *, int, const char *) = va_arg(ap, void (*)(void *, int, const char *));
      compat_config_log(fn, va_arg(ap, void *));
      break;
    }
    case SQLITE_CONFIG_PCACHE_HDRSZ: /* Shale's page cache needs no such memory */
      *va_arg(ap, int *) = 0;
      break;
    case SQLITE_CONFIG_PCACHE2:
      rc = compat_config_pcache(va_arg(ap, const sqlite3_pcache_methods2 *));
      break;
    case SQLITE_CONFIG_GETPCACHE2:
      compat_config_getpcache(va_arg(ap, sqlite3_pcache_methods2 *));
      break;
    default:
      rc = SQLITE_ERROR;
  }
  va_end(ap);
  if (rc != SQLITE_ERROR || op == SQLITE_CONFIG_MALLOC || op == SQLITE_CONFIG_MUTEX ||
      op == SQLITE_CONFIG_PCACHE2)
    return rc;
  switch (op) {
    case SQLITE_CONFIG_SINGLETHREAD:
    case SQLITE_CONFIG_MULTITHREAD:
      __atomic_store_n(&default_nomutex, 1, __ATOMIC_RELAXED);
      return SQLITE_OK;
    case SQLITE_CONFIG_SERIALIZED:
      __atomic_store_n(&default_nomutex, 0, __ATOMIC_RELAXED);
      return SQLITE_OK;
    case SQLITE_CONFIG_MEMSTATUS:
    case SQLITE_CONFIG_LOOKASIDE:
    case SQLITE_CONFIG_COVERING_INDEX_SCAN:
    case SQLITE_CONFIG_MMAP_SIZE:
    case SQLITE_CONFIG_STMTJRNL_SPILL:
    case SQLITE_CONFIG_SMALL_MALLOC:
    case SQLITE_CONFIG_MEMDB_MAXSIZE:
    case SQLITE_CONFIG_PMASZ:
    case SQLITE_CONFIG_PAGECACHE: /* memory for pages: Shale takes its pages from malloc */
    case SQLITE_CONFIG_PCACHE:    /* obsolete: a no-op in SQLite too */
      return SQLITE_OK;           /* tuning hints: accepted, nothing to tune */
    default:
      /* what Debian's build refuses too (HEAP, SCRATCH, SQLLOG,
       * WIN32_HEAPSIZE, SORTERREF_SIZE, GETPCACHE) */
      return SQLITE_ERROR;
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
 * error and refuses statements, as SQLite's. The connection keeps its
 * filename object (COMPAT_SLOT_FNAME) and its shared memdb reference. */
int sqlite3_open_v2(const char *filename, sqlite3 **ppdb, int flags, const char *vfs) {
  if (!ppdb) return SQLITE_MISUSE;
  *ppdb = NULL;
  int irc = sqlite3_initialize(); /* an application's page cache may refuse (xInit) */
  if (irc != SQLITE_OK) return irc;
  if (!(flags & (SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_FULLMUTEX)) &&
      __atomic_load_n(&default_nomutex, __ATOMIC_RELAXED))
    flags |= SQLITE_OPEN_NOMUTEX;
  CompatOpen o;
  int prc = compat_open_parse(filename, flags, vfs, &o);
  shale *db = NULL;
  int app = !prc && o.fname && compat_vfs_app_of(os_vfs_find(o.vfs));
  if (app) compat_vfs_app_pending(o.fname + 4);
  int rc = prc ? shale_open_v2("", &db, flags & (SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_FULLMUTEX), NULL)
               : shale_open_v2(o.path, &db, o.flags, o.vfs);
  if (app) compat_vfs_app_pending(NULL);
  if (prc && db) {
    shale_set_error(db, prc, o.err ? o.err : "out of memory");
    rc = prc;
  }
  if (db && o.fname) {
    if (!compat_hold(db, COMPAT_SLOT_FNAME, o.fname, free)) {
      shale_close(db);
      db = NULL;
      rc = SQLITE_NOMEM;
    } else {
      o.fname = NULL; /* the connection's now */
    }
  }
  if (db && o.shared) {
    if (compat_hold(db, COMPAT_SLOT_SHARED, o.shared, shared_release)) o.shared = NULL;
  }
  if (db) compat_attach_install(db, flags);
  if (o.shared) compat_shared_unref(o.shared);
  compat_open_free(&o);
  *ppdb = (sqlite3 *)db;
  return rc;
}

int sqlite3_open(const char *filename, sqlite3 **ppdb) {
  return sqlite3_open_v2(filename, ppdb, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
}

/* What the connection holds (held.c) is released once it has closed (a
 * zombie, close_v2 with statements open, counts as closed: its filename
 * object is no longer reported), and kept when the close fails. */
static int close_common(sqlite3 *db, int v2) {
  if (!db) return SQLITE_OK;
  if (!shale_db_live(DB(db))) return SQLITE_MISUSE;
  void *held = compat_take_db(db);
  int rc = v2 ? shale_close_v2(DB(db)) : shale_close(DB(db));
  if (rc == SQLITE_OK)
    compat_release(held);
  else
    compat_give_back_db(db, held);
  return rc;
}
int sqlite3_close(sqlite3 *db) { return close_common(db, 0); }
int sqlite3_close_v2(sqlite3 *db) { return close_common(db, 1); }

/* For entry points that do more than one native call: misuse unless db is
 * an open connection. */
#define CHECK_DB(db, ret)                   \
  do {                                      \
    if (!shale_db_live(DB(db))) return ret; \
  } while (0)

int sqlite3_extended_result_codes(sqlite3 *db, int onoff) {
  return shale_extended_result_codes(DB(db), onoff);
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
                 char **errmsg) {
  if (errmsg) *errmsg = NULL;
  CHECK_DB(db, SQLITE_MISUSE);
  shale_mutex *mu = shale_db_mutex(DB(db)); /* invariant 2 */
  shale_mutex_enter(mu);
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
    while (*z == ' ' || (*z >= '\t' && *z <= '\r')) z++; /* as SQLite's exec */
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
  shale_mutex_leave(mu);
  return rc;
}

sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db) { return shale_last_insert_rowid(DB(db)); }
int sqlite3_changes(sqlite3 *db) { return shale_changes(DB(db)); }
sqlite3_int64 sqlite3_changes64(sqlite3 *db) { return shale_changes64(DB(db)); }
int sqlite3_total_changes(sqlite3 *db) { return shale_total_changes(DB(db)); }
sqlite3_int64 sqlite3_total_changes64(sqlite3 *db) { return shale_total_changes64(DB(db)); }
void sqlite3_interrupt(sqlite3 *db) { shale_interrupt(DB(db)); }
int sqlite3_busy_timeout(sqlite3 *db, int ms) { return shale_busy_timeout(DB(db), ms); }
int sqlite3_get_autocommit(sqlite3 *db) { return shale_get_autocommit(DB(db)); }

/* NULL: "out of memory" / SQLITE_NOMEM; closed: misuse (native). */
int sqlite3_errcode(sqlite3 *db) { return shale_errcode(DB(db)); }
int sqlite3_extended_errcode(sqlite3 *db) { return shale_extended_errcode(DB(db)); }
const char *sqlite3_errmsg(sqlite3 *db) { return shale_errmsg(DB(db)); }

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
  if (!zdb || !sqlite3_stricmp(zdb, "main")) {
    const char *fo = compat_held(db, COMPAT_SLOT_FNAME);
    return fo ? fo + 4 : f;
  }
  const char *fo = compat_attach_fname(DB(db), zdb);
  if (fo) return fo;
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
int sqlite3_db_readonly(sqlite3 *db, const char *zdb) { return shale_db_readonly(DB(db), zdb); }
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

static int checkpoint(sqlite3 *db, const char *zdb, int mode, int *plog, int *pckpt) {
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
int sqlite3_wal_checkpoint_v2(sqlite3 *db, const char *zdb, int mode, int *plog, int *pckpt) {
  if (plog) *plog = -1;
  if (pckpt) *pckpt = -1;
  CHECK_DB(db, SQLITE_MISUSE);
  shale_mutex *mu = shale_db_mutex(DB(db)); /* invariant 2 */
  shale_mutex_enter(mu);
  int rc = checkpoint(db, zdb, mode, plog, pckpt);
  shale_mutex_leave(mu);
  return rc;
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

/* sqlite3_db_config: every on/off option of 3.40.1 is a setting of the
 * connection (foreign keys here, the others shale_db_config_switch); an
 * option number outside them is SQLITE_ERROR, as SQLite's, with a message. */
static int unknown_option(sqlite3 *db, int op) {
  char *m = sqlite3_mprintf("sqlite3_db_config option %d is not supported by Shale yet", op);
  shale_set_error(DB(db), SQLITE_ERROR, m);
  sqlite3_free(m);
  return SQLITE_ERROR;
}
static int db_config(sqlite3 *db, int op, int onoff, int *pres) {
  if (op < SQLITE_DBCONFIG_ENABLE_FKEY || op > SQLITE_DBCONFIG_MAX) return unknown_option(db, op);
  if (op == SQLITE_DBCONFIG_ENABLE_FKEY) {
    int now = shale_foreign_keys(DB(db), onoff);
    if (pres) *pres = now;
    return SQLITE_OK;
  }
  int sw = shale_db_config_switch(DB(db), op, onoff < 0 ? -1 : onoff != 0);
  if (sw < 0) return unknown_option(db, op);
  if (pres) *pres = sw;
  return SQLITE_OK;
}
int sqlite3_db_config(sqlite3 *db, int op, ...) {
  CHECK_DB(db, SQLITE_MISUSE);
  if (op == SQLITE_DBCONFIG_LOOKASIDE) return SQLITE_OK; /* a memory hint */
  if (op == SQLITE_DBCONFIG_MAINDBNAME) {
    va_list ap;
    va_start(ap, op);
    const char *name = va_arg(ap, const char *);
    va_end(ap);
    return shale_db_config_maindbname(DB(db), name);
  }
  va_list ap;
  va_start(ap, op);
  int onoff = 0, *pres = NULL;
  if (op >= SQLITE_DBCONFIG_ENABLE_FKEY && op <= SQLITE_DBCONFIG_MAX) {
    onoff = va_arg(ap, int);
    pres = va_arg(ap, int *);
  }
  va_end(ap);
  shale_mutex *mu = shale_db_mutex(DB(db)); /* invariant 2 */
  shale_mutex_enter(mu);
  int rc = db_config(db, op, onoff, pres);
  shale_mutex_leave(mu);
  return rc;
}

/* ---------------------------------------------------------------- statements */

/* The native calls check the handles and lock the connection (invariant 1):
 * each entry point below is one call. */

/* A failed prepare is logged as SQLite logs it (compat_log_prepare). */
int sqlite3_prepare(sqlite3 *db, const char *sql, int n, sqlite3_stmt **pst, const char **tail) {
  int rc = shale_prepare_v2(DB(db), sql, n, (shale_stmt **)pst, tail);
  return rc ? compat_log_prepare(db, rc, sql, n) : rc;
}
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **pst, const char **tail) {
  int rc = shale_prepare_v2(DB(db), sql, n, (shale_stmt **)pst, tail);
  return rc ? compat_log_prepare(db, rc, sql, n) : rc;
}
int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned flags, sqlite3_stmt **pst,
                       const char **tail) {
  int rc = shale_prepare_v3(DB(db), sql, n, flags, (shale_stmt **)pst, tail);
  return rc ? compat_log_prepare(db, rc, sql, n) : rc;
}

int sqlite3_step(sqlite3_stmt *st) { return shale_step(ST(st)); }
int sqlite3_reset(sqlite3_stmt *st) { return shale_reset(ST(st)); }
int sqlite3_finalize(sqlite3_stmt *st) {
  if (st && shale_stmt_live(ST(st))) compat_forget_stmt(st); /* its UTF-16 names */
  return shale_finalize(ST(st));
}

const char *sqlite3_sql(sqlite3_stmt *st) { return shale_sql(ST(st)); }
char *sqlite3_expanded_sql(sqlite3_stmt *st) { return shale_expanded_sql(ST(st)); }
char *sqlite3_normalized_sql(sqlite3_stmt *st) { return NULL; }
int sqlite3_stmt_readonly(sqlite3_stmt *st) { return shale_stmt_readonly(ST(st)); }
int sqlite3_stmt_busy(sqlite3_stmt *st) { return shale_stmt_busy(ST(st)); }
sqlite3 *sqlite3_db_handle(sqlite3_stmt *st) { return (sqlite3 *)shale_db_handle(ST(st)); }
sqlite3_stmt *sqlite3_next_stmt(sqlite3 *db, sqlite3_stmt *st) {
  return (sqlite3_stmt *)shale_next_stmt(DB(db), ST(st));
}
int sqlite3_data_count(sqlite3_stmt *st) { return shale_data_count(ST(st)); }

/* ---- binding ---- */

static void drop(const void *p, void (*destroy)(void *)) {
  if (destroy && destroy != SQLITE_STATIC && destroy != SQLITE_TRANSIENT) destroy((void *)p);
}

int sqlite3_bind_null(sqlite3_stmt *st, int i) { return shale_bind_null(ST(st), i); }
int sqlite3_bind_int(sqlite3_stmt *st, int i, int v) { return shale_bind_int(ST(st), i, v); }
int sqlite3_bind_int64(sqlite3_stmt *st, int i, sqlite3_int64 v) {
  return shale_bind_int64(ST(st), i, v);
}
int sqlite3_bind_double(sqlite3_stmt *st, int i, double v) {
  return shale_bind_double(ST(st), i, v);
}
/* A statement that is not live: the native bind calls the destructor. */
int sqlite3_bind_text(sqlite3_stmt *st, int i, const char *z, int n, void (*d)(void *)) {
  return shale_bind_text(ST(st), i, z, n, d);
}
int sqlite3_bind_blob(sqlite3_stmt *st, int i, const void *z, int n, void (*d)(void *)) {
  return shale_bind_blob(ST(st), i, z, n, d);
}
int sqlite3_bind_text64(sqlite3_stmt *st, int i, const char *z, sqlite3_uint64 n, void (*d)(void *),
                        unsigned char enc) {
  if (!shale_stmt_live(ST(st))) {
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
  if (!shale_stmt_live(ST(st))) {
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
  return shale_bind_zeroblob(ST(st), i, n);
}
int sqlite3_bind_zeroblob64(sqlite3_stmt *st, int i, sqlite3_uint64 n) {
  if (!shale_stmt_live(ST(st))) return SQLITE_MISUSE;
  if (n > 1000000000) return SQLITE_TOOBIG;
  return shale_bind_zeroblob(ST(st), i, (int)n);
}
int sqlite3_bind_value(sqlite3_stmt *st, int i, const sqlite3_value *v) {
  return shale_bind_value(ST(st), i, (const shale_value *)v);
}
int sqlite3_bind_parameter_count(sqlite3_stmt *st) { return shale_bind_parameter_count(ST(st)); }
int sqlite3_bind_parameter_index(sqlite3_stmt *st, const char *name) {
  return shale_bind_parameter_index(ST(st), name);
}
const char *sqlite3_bind_parameter_name(sqlite3_stmt *st, int i) {
  return shale_bind_parameter_name(ST(st), i);
}
int sqlite3_clear_bindings(sqlite3_stmt *st) { return shale_clear_bindings(ST(st)); }

/* ---- columns ---- */

int sqlite3_column_count(sqlite3_stmt *st) { return shale_column_count(ST(st)); }
int sqlite3_column_type(sqlite3_stmt *st, int i) { return shale_column_type(ST(st), i); }
int sqlite3_column_int(sqlite3_stmt *st, int i) { return shale_column_int(ST(st), i); }
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *st, int i) {
  return shale_column_int64(ST(st), i);
}
double sqlite3_column_double(sqlite3_stmt *st, int i) { return shale_column_double(ST(st), i); }
const unsigned char *sqlite3_column_text(sqlite3_stmt *st, int i) {
  return shale_column_text(ST(st), i);
}
const void *sqlite3_column_blob(sqlite3_stmt *st, int i) { return shale_column_blob(ST(st), i); }
int sqlite3_column_bytes(sqlite3_stmt *st, int i) { return shale_column_bytes(ST(st), i); }
sqlite3_value *sqlite3_column_value(sqlite3_stmt *st, int i) {
  return (sqlite3_value *)shale_column_value(ST(st), i);
}
const char *sqlite3_column_name(sqlite3_stmt *st, int i) { return shale_column_name(ST(st), i); }
const char *sqlite3_column_decltype(sqlite3_stmt *st, int i) {
  return shale_column_decltype(ST(st), i);
}
const char *sqlite3_column_table_name(sqlite3_stmt *st, int i) {
  return shale_column_table_name(ST(st), i);
}
const char *sqlite3_column_origin_name(sqlite3_stmt *st, int i) {
  return shale_column_origin_name(ST(st), i);
}
const char *sqlite3_column_database_name(sqlite3_stmt *st, int i) {
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
int sqlite3_value_nochange(sqlite3_value *v) { return shale_value_nochange((shale_value *)v); }
int sqlite3_value_frombind(sqlite3_value *v) { return 0; }
unsigned int sqlite3_value_subtype(sqlite3_value *v) { return shale_value_subtype(VAL(v)); }
sqlite3_value *sqlite3_value_dup(const sqlite3_value *v) {
  return (sqlite3_value *)shale_value_dup((const shale_value *)v);
}
void sqlite3_value_free(sqlite3_value *v) { shale_value_free(VAL(v)); }
