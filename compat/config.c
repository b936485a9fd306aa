/*
 * config.c -- the parts of sqlite3_config that replace a subsystem: the
 * memory allocator (SQLITE_CONFIG_MALLOC / GETMALLOC) and the error log
 * (SQLITE_CONFIG_LOG, sqlite3_log); sqlite3.c's sqlite3_config hands them
 * here.
 *
 * The allocator: shale_malloc keeps its own 16-byte header and asks the
 * system allocator under it for whole blocks (src/util/alloc.c); an
 * application's sqlite3_mem_methods become that system allocator (its
 * xMalloc sees each request 16 bytes larger than Shale's). The default
 * methods GETMALLOC reports are libc's with an 8-byte size prefix, as
 * SQLite's, so an application may wrap them and install the wrapper.
 *
 * The mutexes: GETMUTEX reports methods over Shale's own (the sqlite3_mutex_*
 * calls) -- all NULL before the first initialize, as SQLite's -- or the
 * application's once MUTEX installed them: then every connection opened
 * afterwards locks through a recursive mutex of theirs (the native
 * shale_config_mutex) and sqlite3_mutex_* call them; their xMutexInit runs
 * at initialize, xMutexEnd at shutdown. MUTEX with Shale's own methods (or
 * the NULL ones) goes back to Shale's.
 *
 * The log: sqlite3_log formats into a 210-byte buffer, as SQLite, and calls
 * the application's function; Shale reports what SQLite reports when a
 * prepare fails ("MSG in \"SQL\"") and its session extension's warnings.
 *
 * Owns: the installed methods (one copy per SQLITE_CONFIG_MALLOC, kept for
 * the process's life: blocks it made go back to it), the log function.
 *
 * Invariants:
 *  1. Set only before sqlite3_initialize (sqlite3_config's rule); xInit runs
 *     at the initialize that follows, xShutdown at sqlite3_shutdown.
 *  2. A table handed to util_alloc_set_system is never freed or changed.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/util.h"
#include "compat_int.h"

/* ---------------------------------------------------------------- default methods */

static void *dflt_malloc(int n) {
  if (n <= 0) return NULL;
  sqlite3_int64 *p = malloc((size_t)n + 8);
  if (!p) return NULL;
  p[0] = n;
  return p + 1;
}
static void dflt_free(void *p) {
  if (p) free((sqlite3_int64 *)p - 1);
}
static void *dflt_realloc(void *p, int n) {
  if (!p) return dflt_malloc(n);
  if (n <= 0) return NULL;
  sqlite3_int64 *q = realloc((sqlite3_int64 *)p - 1, (size_t)n + 8);
  if (!q) return NULL;
  q[0] = n;
  return q + 1;
}
static int dflt_size(void *p) { return p ? (int)((sqlite3_int64 *)p)[-1] : 0; }
static int dflt_roundup(int n) { return (n + 7) & ~7; }
static int dflt_init(void *x) { return SQLITE_OK; }
static void dflt_shutdown(void *x) {}

static const sqlite3_mem_methods dflt = {dflt_malloc,  dflt_free, dflt_realloc,  dflt_size,
                                         dflt_roundup, dflt_init, dflt_shutdown, NULL};

/* ---------------------------------------------------------------- the installed ones */

typedef struct Installed {
  UtilSysAlloc sys; /* sys.ctx is this */
  sqlite3_mem_methods m;
} Installed;

static Installed *current; /* NULL: libc under shale_malloc */
static int inited;         /* xInit ran (invariant 1) */
static int ever_inited;    /* SQLite chooses its mutex methods at the first initialize */
/* The application's mutex methods (a copy; the native table is over them). */
static sqlite3_mutex_methods app_mx;
static int app_mx_set, app_mx_inited;

static void *tr_malloc(void *ctx, size_t n) {
  const Installed *in = ctx;
  return n > INT_MAX ? NULL : in->m.xMalloc((int)n);
}
static void *tr_realloc(void *ctx, void *p, size_t n) {
  const Installed *in = ctx;
  return n > INT_MAX ? NULL : in->m.xRealloc(p, (int)n);
}
static void tr_free(void *ctx, void *p) {
  const Installed *in = ctx;
  in->m.xFree(p);
}

int compat_config_malloc(const sqlite3_mem_methods *m) {
  if (!m || (m->xMalloc == dflt.xMalloc && m->xFree == dflt.xFree)) {
    util_alloc_set_system(NULL); /* libc's, which the defaults are */
    current = NULL;
    return SQLITE_OK;
  }
  if (!m->xMalloc || !m->xFree || !m->xRealloc) return SQLITE_MISUSE;
  Installed *in = malloc(sizeof *in); /* invariant 2: kept for good */
  if (!in) return SQLITE_NOMEM;
  in->m = *m;
  in->sys = (UtilSysAlloc){tr_malloc, tr_realloc, tr_free, in};
  if (util_alloc_set_system(&in->sys)) {
    free(in);
    return SQLITE_ERROR; /* more than 8 allocators in one process */
  }
  current = in;
  inited = 0;
  return SQLITE_OK;
}

void compat_config_getmalloc(sqlite3_mem_methods *out) {
  if (out) *out = current ? current->m : dflt;
}

void compat_mem_init(void) {
  ever_inited = 1;
  if (app_mx_set && !app_mx_inited && app_mx.xMutexInit) app_mx.xMutexInit();
  app_mx_inited = app_mx_set;
  if (current && !inited && current->m.xInit) current->m.xInit(current->m.pAppData);
  inited = 1;
}

void compat_mem_shutdown(void) {
  if (app_mx_set && app_mx_inited && app_mx.xMutexEnd) app_mx.xMutexEnd();
  app_mx_inited = 0;
  if (current && inited && current->m.xShutdown) current->m.xShutdown(current->m.pAppData);
  inited = 0;
}

/* ---------------------------------------------------------------- mutexes */

static int mx_init(void) { return SQLITE_OK; }
static int mx_end(void) { return SQLITE_OK; }

static const sqlite3_mutex_methods mutexes = {mx_init,
                                              mx_end,
                                              sqlite3_mutex_alloc,
                                              sqlite3_mutex_free,
                                              sqlite3_mutex_enter,
                                              sqlite3_mutex_try,
                                              sqlite3_mutex_leave,
                                              NULL,
                                              NULL};

static void *am_alloc(int kind) { return app_mx.xMutexAlloc(kind); }
static void am_free(void *m) { app_mx.xMutexFree(m); }
static void am_enter(void *m) { app_mx.xMutexEnter(m); }
static int am_try(void *m) { return app_mx.xMutexTry(m); }
static void am_leave(void *m) { app_mx.xMutexLeave(m); }
static int am_held(void *m) { return app_mx.xMutexHeld(m); }

const sqlite3_mutex_methods *compat_app_mutex(void) { return app_mx_set ? &app_mx : NULL; }

void compat_config_getmutex(sqlite3_mutex_methods *out) {
  static const sqlite3_mutex_methods none;
  if (out) *out = app_mx_set ? app_mx : ever_inited ? mutexes : none;
}

/* Shale's own methods (or the NULL ones) back: Shale's mutexes again;
 * others are the application's, used for every connection opened from
 * then on and by the sqlite3_mutex_* calls (extras.c). */
int compat_config_mutex(const sqlite3_mutex_methods *m) {
  static const sqlite3_mutex_methods none;
  if (!m || !memcmp(m, &mutexes, sizeof *m) || !memcmp(m, &none, sizeof *m)) {
    app_mx_set = 0;
    shale_config_mutex(NULL);
    return SQLITE_OK;
  }
  if (!m->xMutexAlloc || !m->xMutexFree || !m->xMutexEnter || !m->xMutexTry || !m->xMutexLeave)
    return SQLITE_MISUSE;
  app_mx = *m;
  app_mx_set = 1;
  app_mx_inited = 0;
  shale_mutex_methods nm = {NULL,     NULL,   am_alloc, am_free,
                            am_enter, am_try, am_leave, m->xMutexHeld ? am_held : NULL,
                            NULL};
  shale_config_mutex(&nm);
  return SQLITE_OK;
}

/* ---------------------------------------------------------------- the log */

static void (*log_fn)(void *, int, const char *);
static void *log_arg;

void compat_config_log(void (*fn)(void *, int, const char *), void *arg) {
  log_fn = fn;
  log_arg = arg;
}

void sqlite3_log(int rc, const char *fmt, ...) {
  if (!log_fn) return;
  char buf[210]; /* SQLite's: 3 * SQLITE_PRINT_BUF_SIZE */
  va_list ap;
  va_start(ap, fmt);
  sqlite3_vsnprintf(sizeof buf, buf, fmt, ap);
  va_end(ap);
  log_fn(log_arg, rc, buf);
}

int compat_log_prepare(sqlite3 *db, int rc, const char *sql, int n) {
  if (rc != SQLITE_OK && log_fn && sql)
    sqlite3_log(rc, "%s in \"%.*s\"", sqlite3_errmsg(db), n < 0 ? (int)strlen(sql) : n, sql);
  return rc;
}
