/*
 * extras.c -- the rest of the functions include/sqlite3.h declares, so that
 * any program built against SQLite finds every symbol it may import:
 * sqlite3_get_table, the sqlite3_str builder, strglob/strlike, keywords,
 * sqlite3_complete (src/parse/complete.c's, through shale_complete),
 * mutexes, stmt_isexplain, set_last_insert_rowid, bind_pointer, WAL
 * snapshots (over shale_snapshot_*, src/api/api_snapshot.c),
 * autovacuum_pages (shale_autovacuum_pages); the testing and deprecated
 * leftovers answer as SQLite's do.
 *
 * Owns: nothing (mutexes, the static ones included, are the native
 * shale_mutex_*: src/api/api_mutex.c).
 *
 * Invariants:
 *  1. Nothing here fails with "not supported": every call does what
 *     SQLite's does (unsupported.c keeps the refusals).
 *  2. sqlite3_get_table's array has SQLite's layout: entry -1 (hidden) holds
 *     the number of entries, then column names, then values row by row; all
 *     of it freed by sqlite3_free_table.
 *  3. sqlite3_str_new never returns NULL: on out-of-memory it returns a
 *     shared object whose error code is SQLITE_NOMEM, as SQLite does.
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "../src/func/func.h"
#include "../src/parse/parse.h"
#include "compat_int.h"

/* ---------------------------------------------------------------- get_table */

typedef struct Table {
  char **a; /* a[0] = count (as intptr), a[1..] entries */
  size_t n, cap;
  int ncol, nrow, rc;
  char *err;
} Table;

static int tbl_push(Table *t, const char *z) {
  if (t->n + 1 >= t->cap) {
    size_t cap = t->cap * 2;
    char **a = sqlite3_realloc64(t->a, cap * sizeof *a);
    if (!a) return 0;
    t->a = a;
    t->cap = cap;
  }
  char *c = NULL;
  if (z) {
    c = sqlite3_mprintf("%s", z);
    if (!c) return 0;
  }
  t->a[++t->n] = c;
  return 1;
}

static int tbl_cb(void *arg, int n, char **vals, char **names) {
  Table *t = arg;
  if (t->nrow == 0 && t->ncol == 0) {
    t->ncol = n;
    for (int i = 0; i < n; i++)
      if (!tbl_push(t, names[i])) goto oom;
  } else if (t->ncol != n) {
    t->err = sqlite3_mprintf("sqlite3_get_table() called with two or more incompatible queries");
    t->rc = SQLITE_ERROR;
    return 1;
  }
  for (int i = 0; i < n; i++)
    if (!tbl_push(t, vals[i])) goto oom;
  t->nrow++;
  return 0;
oom:
  t->rc = SQLITE_NOMEM;
  return 1;
}

void sqlite3_free_table(char **result) {
  if (!result) return;
  char **a = result - 1;
  size_t n = (size_t)(intptr_t)a[0];
  for (size_t i = 1; i <= n; i++) sqlite3_free(a[i]);
  sqlite3_free(a);
}

int sqlite3_get_table(sqlite3 *db, const char *sql, char ***presult, int *pnrow, int *pncol,
                      char **perr) {
  if (presult) *presult = NULL;
  if (pnrow) *pnrow = 0;
  if (pncol) *pncol = 0;
  if (perr) *perr = NULL;
  if (!shale_db_live((shale *)db) || !presult) return SQLITE_MISUSE;
  Table t = {0};
  t.cap = 20;
  t.a = sqlite3_malloc64(t.cap * sizeof *t.a);
  if (!t.a) return SQLITE_NOMEM;
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, tbl_cb, &t, &err);
  t.a[0] = (char *)(intptr_t)t.n;
  if (rc == SQLITE_ABORT && t.rc) {
    rc = t.rc;
    sqlite3_free(err);
    err = t.err;
    t.err = NULL;
    if (rc == SQLITE_NOMEM) err = NULL;
    shale_set_error((shale *)db, rc, err);
  }
  sqlite3_free(t.err);
  if (rc != SQLITE_OK) {
    sqlite3_free_table(t.a + 1);
    if (perr)
      *perr = err;
    else
      sqlite3_free(err);
    return rc;
  }
  sqlite3_free(err);
  *presult = t.a + 1;
  if (pnrow) *pnrow = t.nrow;
  if (pncol) *pncol = t.ncol;
  return SQLITE_OK;
}

/* ---------------------------------------------------------------- sqlite3_str */

struct sqlite3_str {
  char *z;
  size_t n, cap;
  int err;
};
static struct sqlite3_str oom_str = {NULL, 0, 0, SQLITE_NOMEM};

sqlite3_str *sqlite3_str_new(sqlite3 *db) {
  sqlite3_str *s = sqlite3_malloc64(sizeof *s);
  if (!s) return &oom_str;
  memset(s, 0, sizeof *s);
  return s;
}

void sqlite3_str_append(sqlite3_str *s, const char *z, int n) {
  if (!s || s->err || n <= 0 || !z) return;
  if (s->n + (size_t)n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->n + (size_t)n + 1) cap *= 2;
    if (cap > 1000000000) {
      s->err = SQLITE_TOOBIG;
      return;
    }
    char *p = sqlite3_realloc64(s->z, cap);
    if (!p) {
      s->err = SQLITE_NOMEM;
      return;
    }
    s->z = p;
    s->cap = cap;
  }
  memcpy(s->z + s->n, z, (size_t)n);
  s->n += (size_t)n;
  s->z[s->n] = 0;
}
void sqlite3_str_appendall(sqlite3_str *s, const char *z) {
  if (z) sqlite3_str_append(s, z, (int)strlen(z));
}
void sqlite3_str_appendchar(sqlite3_str *s, int n, char c) {
  char buf[64];
  memset(buf, c, sizeof buf);
  while (n > 0) {
    int k = n < (int)sizeof buf ? n : (int)sizeof buf;
    sqlite3_str_append(s, buf, k);
    n -= k;
  }
}
void sqlite3_str_vappendf(sqlite3_str *s, const char *fmt, va_list ap) {
  if (!s || s->err) return;
  char *z = sqlite3_vmprintf(fmt, ap);
  if (!z) {
    s->err = SQLITE_NOMEM;
    return;
  }
  sqlite3_str_appendall(s, z);
  sqlite3_free(z);
}
void sqlite3_str_appendf(sqlite3_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_str_vappendf(s, fmt, ap);
  va_end(ap);
}
void sqlite3_str_reset(sqlite3_str *s) {
  if (!s || s == &oom_str) return;
  sqlite3_free(s->z);
  s->z = NULL;
  s->n = s->cap = 0;
  s->err = 0;
}
int sqlite3_str_errcode(sqlite3_str *s) { return s ? s->err : SQLITE_NOMEM; }
int sqlite3_str_length(sqlite3_str *s) { return s && !s->err ? (int)s->n : 0; }
char *sqlite3_str_value(sqlite3_str *s) { return s && !s->err && s->n ? s->z : NULL; }
char *sqlite3_str_finish(sqlite3_str *s) {
  if (!s || s == &oom_str) return NULL;
  char *z = s->err || !s->n ? NULL : s->z;
  if (!z) sqlite3_free(s->z);
  sqlite3_free(s);
  return z;
}

/* ---------------------------------------------------------------- text helpers */

int sqlite3_strglob(const char *glob, const char *str) {
  if (!glob) return str ? -1 : 0;
  if (!str) return 1;
  return func_glob_match(glob, (int)strlen(glob), str, (int)strlen(str)) ? 0 : 1;
}
int sqlite3_strlike(const char *pat, const char *str, unsigned int esc) {
  if (!pat) return str ? -1 : 0;
  if (!str) return 1;
  return func_like_match(pat, (int)strlen(pat), str, (int)strlen(str), esc, 1) ? 0 : 1;
}

int sqlite3_keyword_count(void) { return TK_COUNT - TK_FIRST_KEYWORD - 1; }
int sqlite3_keyword_name(int i, const char **pz, int *pn) {
  if (i < 0 || i >= sqlite3_keyword_count()) return SQLITE_ERROR;
  const char *z = sql_keyword_name(TK_FIRST_KEYWORD + 1 + i);
  if (!z) return SQLITE_ERROR;
  if (pz) *pz = z;
  if (pn) *pn = (int)strlen(z);
  return SQLITE_OK;
}
int sqlite3_keyword_check(const char *z, int n) { return z && n > 0 && sql_keyword(z, n) != TK_ID; }
int sqlite3_complete(const char *sql) { return shale_complete(sql); }

/* ---------------------------------------------------------------- mutexes */

/* An sqlite3_mutex IS a shale_mutex (the kinds have SQLite's numbers), so
 * the connection's own mutex (sqlite3_db_mutex) works with them; with the
 * application's methods installed (SQLITE_CONFIG_MUTEX) it is theirs, and
 * these calls are theirs, as SQLite's. */
#define MU(m) ((shale_mutex *)(m))
sqlite3_mutex *sqlite3_mutex_alloc(int kind) {
  const sqlite3_mutex_methods *a = compat_app_mutex();
  return a ? a->xMutexAlloc(kind) : (sqlite3_mutex *)shale_mutex_alloc(kind);
}
void sqlite3_mutex_free(sqlite3_mutex *m) {
  const sqlite3_mutex_methods *a = compat_app_mutex();
  if (!a)
    shale_mutex_free(MU(m));
  else if (m)
    a->xMutexFree(m);
}
void sqlite3_mutex_enter(sqlite3_mutex *m) {
  const sqlite3_mutex_methods *a = compat_app_mutex();
  if (!a)
    shale_mutex_enter(MU(m));
  else if (m)
    a->xMutexEnter(m);
}
int sqlite3_mutex_try(sqlite3_mutex *m) {
  const sqlite3_mutex_methods *a = compat_app_mutex();
  if (!a) return shale_mutex_try(MU(m));
  return m ? a->xMutexTry(m) : SQLITE_OK;
}
void sqlite3_mutex_leave(sqlite3_mutex *m) {
  const sqlite3_mutex_methods *a = compat_app_mutex();
  if (!a)
    shale_mutex_leave(MU(m));
  else if (m)
    a->xMutexLeave(m);
}
sqlite3_mutex *sqlite3_db_mutex(sqlite3 *db) {
  shale_mutex *m = shale_db_mutex((shale *)db);
  void *a = shale_mutex_app(m);
  return (sqlite3_mutex *)(a ? a : (void *)m);
}

/* ---------------------------------------------------------------- statements */

static const char *skip_space(const char *p) {
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f') p++;
    if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      p = e ? e + 2 : p + strlen(p);
    } else {
      return p;
    }
  }
}
static int word_at(const char **pp, const char *w) {
  size_t n = strlen(w);
  const char *p = skip_space(*pp);
  if (strncasecmp(p, w, n)) return 0;
  char c = p[n];
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
    return 0;
  *pp = p + n;
  return 1;
}
int sqlite3_stmt_isexplain(sqlite3_stmt *st) {
  if (!shale_stmt_live((shale_stmt *)st)) return 0;
  const char *p = shale_sql((shale_stmt *)st);
  if (!p || !word_at(&p, "EXPLAIN")) return 0;
  return word_at(&p, "QUERY") && word_at(&p, "PLAN") ? 2 : 1;
}
int sqlite3_bind_pointer(sqlite3_stmt *st, int i, void *p, const char *type,
                         void (*destroy)(void *)) {
  if (!shale_stmt_live((shale_stmt *)st)) {
    if (destroy) destroy(p);
    return SQLITE_MISUSE;
  }
  return shale_bind_pointer((shale_stmt *)st, i, p, type, destroy);
}
void *sqlite3_value_pointer(sqlite3_value *v, const char *type) {
  return shale_value_pointer((shale_value *)v, type);
}
int sqlite3_expired(sqlite3_stmt *st) { return st ? 0 : 1; }
int sqlite3_transfer_bindings(sqlite3_stmt *from, sqlite3_stmt *to) {
  if (!shale_stmt_live((shale_stmt *)from) || !shale_stmt_live((shale_stmt *)to))
    return SQLITE_MISUSE;
  return shale_transfer_bindings((shale_stmt *)from, (shale_stmt *)to);
}
int sqlite3_stmt_scanstatus(sqlite3_stmt *st, int idx, int op, void *out) { return 1; }
void sqlite3_stmt_scanstatus_reset(sqlite3_stmt *st) {}
int sqlite3_aggregate_count(sqlite3_context *c) { return 0; }

/* ---------------------------------------------------------------- connections */

void sqlite3_set_last_insert_rowid(sqlite3 *db, sqlite3_int64 rowid) {
  if (shale_db_live((shale *)db)) shale_set_last_insert_rowid((shale *)db, rowid);
}
int sqlite3_txn_state(sqlite3 *db, const char *schema) {
  if (!shale_db_live((shale *)db)) return -1;
  return shale_txn_state((shale *)db, schema);
}
int sqlite3_db_release_memory(sqlite3 *db) {
  return shale_db_live((shale *)db) ? shale_db_release_memory((shale *)db) : SQLITE_MISUSE;
}
int sqlite3_db_cacheflush(sqlite3 *db) {
  return shale_db_live((shale *)db) ? shale_db_cacheflush((shale *)db) : SQLITE_MISUSE;
}
int sqlite3_autovacuum_pages(sqlite3 *db,
                             unsigned (*cb)(void *, const char *, unsigned, unsigned, unsigned),
                             void *arg, void (*destroy)(void *)) {
  return shale_autovacuum_pages((shale *)db, cb, arg, destroy);
}
/* A connection waits for another only on shared-cache table locks
 * (SQLITE_LOCKED_SHAREDCACHE), which Shale never takes: its shared-cache
 * memory databases lock the whole file (SQLITE_BUSY). So a connection is
 * never blocked, and SQLite's rule for one that is not applies: the callback
 * runs at once (a NULL one cancels nothing). */
int sqlite3_unlock_notify(sqlite3 *db, void (*cb)(void **, int), void *arg) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  if (cb) cb(&arg, 1);
  return SQLITE_OK;
}
int sqlite3_overload_function(sqlite3 *db, const char *name, int n) {
  return shale_db_live((shale *)db) ? shale_overload_function((shale *)db, name, n) : SQLITE_MISUSE;
}

void sqlite3_result_pointer(sqlite3_context *c, void *p, const char *t, void (*d)(void *)) {
  shale_result_pointer((shale_context *)c, p, t, d);
}

/* extensions: compat/ext.c; virtual tables: compat/vtab.c */

/* ---------------------------------------------------------------- snapshots */

/* sqlite3_snapshot has shale_snapshot's 48 bytes (include/shale.h). */
_Static_assert(sizeof(sqlite3_snapshot) == sizeof(shale_snapshot), "same snapshot layout");

int sqlite3_snapshot_get(sqlite3 *db, const char *schema, sqlite3_snapshot **out) {
  return shale_snapshot_get((shale *)db, schema, (shale_snapshot **)out);
}
int sqlite3_snapshot_open(sqlite3 *db, const char *schema, sqlite3_snapshot *snap) {
  return shale_snapshot_open((shale *)db, schema, (const shale_snapshot *)snap);
}
void sqlite3_snapshot_free(sqlite3_snapshot *snap) { shale_snapshot_free((shale_snapshot *)snap); }
int sqlite3_snapshot_cmp(sqlite3_snapshot *a, sqlite3_snapshot *b) {
  return shale_snapshot_cmp((const shale_snapshot *)a, (const shale_snapshot *)b);
}
int sqlite3_snapshot_recover(sqlite3 *db, const char *schema) {
  return shale_snapshot_recover((shale *)db, schema);
}

/* ---------------------------------------------------------------- deprecated / testing */

int sqlite3_test_control(int op, ...) { return 0; }
int sqlite3_global_recover(void) { return SQLITE_OK; }
void sqlite3_thread_cleanup(void) {}
int sqlite3_memory_alarm(void (*cb)(void *, sqlite3_int64, int), void *arg, sqlite3_int64 n) {
  return SQLITE_OK; /* a no-op in SQLite too since 3.7 */
}
