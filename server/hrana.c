/*
 * hrana.c -- the Hrana stream requests on one stream's connection: execute,
 * batch (every condition type), sequence, describe, store_sql/close_sql,
 * get_autocommit, and batches run as v3 cursors; on the encoding-free
 * request structures of server.h, answering in the H* result structures
 * (the codecs, hjson.c and proto.c, turn them into bytes). Also the arenas,
 * the Error objects and base64 (OpenSSL's EVP codec).
 *
 * Invariants:
 *  1. A request either returns its response or sets *err: never both,
 *     never neither.
 *  2. Every statement prepared here is finalized, or reset and given to the
 *     connection's statement cache (execute, batch and cursor steps), before
 *     the request returns; what an answer holds of a statement (its values,
 *     column names) is copied into the arena first.
 *  3. Result codes map to "SQLITE_<PRIMARY>" through the one list of codes
 *     (src/util/result_codes.def, read as data: no engine internals).
 *  4. A read-only stream never steps a statement that is not read-only
 *     (shale_stmt_readonly; BEGIN/COMMIT/ROLLBACK/SELECT pass).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* ---- arenas ---- */

struct ArenaChunk {
  ArenaChunk *next;
  size_t used, cap;
  max_align_t data[];
};

/* One chunk of the usual size kept from the last arena freed, so a request
 * does not malloc and free one (a malloc past 1 KiB also makes glibc
 * consolidate its fast bins, which cost more than the rest of the arena's
 * work). One thread, so no lock (server.h invariant 1). */
#define CHUNK 8192
static ArenaChunk *spare;

void *arena_alloc(Arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  ArenaChunk *c = a->head;
  if (!c || c->used + n > c->cap) {
    size_t cap = n > CHUNK ? n : CHUNK;
    if (cap == CHUNK && spare) {
      c = spare;
      spare = NULL;
    } else if (!(c = malloc(sizeof *c + cap))) {
      a->failed = 1;
      return NULL;
    }
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_dup(Arena *a, const void *p, size_t n) {
  char *d = arena_alloc(a, n + 1);
  if (d && n) memcpy(d, p, n);
  return d;
}

void arena_free(Arena *a) {
  if (a->done) a->done(a->done_arg);
  for (ArenaChunk *c = a->head, *next; c; c = next) {
    next = c->next;
    if (c->cap == CHUNK && !spare)
      spare = c;
    else
      free(c);
  }
  memset(a, 0, sizeof *a);
}

void arena_release(void) {
  free(spare);
  spare = NULL;
}

/* ---- errors ---- */

/* fmt's text into buf[1024], cut to fit: its length. */
static size_t format(char *buf, const char *fmt, va_list ap) {
  int n = vsnprintf(buf, 1024, fmt, ap);
  return n < 0 ? 0 : n >= 1024 ? 1023 : (size_t)n;
}

const char *arena_printf(Arena *a, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  size_t n = format(buf, fmt, ap);
  va_end(ap);
  return arena_dup(a, buf, n);
}

HErr *herr(const char *code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  size_t n = format(buf, fmt, ap);
  va_end(ap);
  HErr *e = malloc(sizeof *e + n + 1);
  if (!e) return NULL;
  e->code = code;
  memcpy(e->message, buf, n + 1);
  return e;
}

HErr *herr_keep(Arena *a, HErr *e) {
  if (!e) return NULL;
  size_t n = strlen(e->message);
  HErr *k = arena_alloc(a, sizeof *k + n + 1);
  if (k) {
    k->code = e->code;
    memcpy(k->message, e->message, n + 1);
  }
  free(e);
  return k;
}

static const struct {
  int rc;
  const char *name;
} primary_names[] = {
#define PRIMARY(NAME, num, text) {num, "SQLITE_" #NAME},
#define EXTENDED(NAME, P, detail, text)
#include "../src/util/result_codes.def"
#undef PRIMARY
#undef EXTENDED
};

static const char *code_name(int rc) {
  rc &= 0xff;
  for (size_t i = 0; i < sizeof primary_names / sizeof primary_names[0]; i++)
    if (primary_names[i].rc == rc) return primary_names[i].name;
  return "SQLITE_ERROR";
}

HErr *herr_db(shale *db, int rc) {
  const char *msg = db ? shale_errmsg(db) : shale_errstr(rc);
  if (!msg || !*msg) msg = shale_errstr(rc);
  return herr(code_name(rc), "%s", msg);
}

/* ---- base64 ---- */

long b64_decode(const char *in, size_t n, unsigned char **out) {
  size_t pad = 0;
  while (n > 0 && in[n - 1] == '=') n--, pad++;
  if (pad > 2 || n % 4 == 1) return -1;
  size_t full = (n + 3) / 4 * 4;
  char *norm = malloc(full + 1);
  unsigned char *dst = malloc(full / 4 * 3 + 1);
  if (!norm || !dst) {
    free(norm);
    free(dst);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    char c = in[i];
    norm[i] = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  for (size_t i = n; i < full; i++) norm[i] = '=';
  norm[full] = 0;
  long len = full ? EVP_DecodeBlock(dst, (unsigned char *)norm, (int)full) : 0;
  free(norm);
  if (len < 0) {
    free(dst);
    return -1;
  }
  len -= (long)(full - n); /* EVP_DecodeBlock counts padding as zero bytes */
  *out = dst;
  return len;
}

char *b64_encode(const unsigned char *in, size_t n) {
  char *out = malloc((n + 2) / 3 * 4 + 1);
  if (!out) return NULL;
  int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
  out[len] = 0;
  return out;
}

/* ---- stored SQL ---- */

void sqlstore_clear(SqlStore *s) {
  for (int i = 0; i < s->n; i++) free(s->v[i].sql);
  free(s->v);
  memset(s, 0, sizeof *s);
}

static int sqlstore_find(SqlStore *s, int64_t id) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].id == id) return i;
  return -1;
}

static int req_store_sql(SqlStore *s, const HStmt *q, HErr **err) {
  if (!q || !q->has_sql_id || !q->sql || q->bad) {
    *err = herr("PROTO_INVALID", "store_sql needs an integer sql_id and a string sql");
    return -1;
  }
  if (sqlstore_find(s, q->sql_id) >= 0) {
    *err = herr("SQL_ID_IN_USE", "sql_id %lld is already stored", (long long)q->sql_id);
    return -1;
  }
  if (s->n >= g_cfg.max_sql) {
    *err = herr("SQL_STORE_TOO_MANY", "too many stored SQL texts (limit %d)", g_cfg.max_sql);
    return -1;
  }
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 8;
    void *v = realloc(s->v, (size_t)cap * sizeof s->v[0]);
    if (!v) {
      *err = herr("SQLITE_NOMEM", "out of memory");
      return -1;
    }
    s->v = v;
    s->cap = cap;
  }
  char *sql = strndup(q->sql, q->sql_len);
  if (!sql) {
    *err = herr("SQLITE_NOMEM", "out of memory");
    return -1;
  }
  s->v[s->n].id = q->sql_id;
  s->v[s->n].sql = sql;
  s->n++;
  return 0;
}

static int req_close_sql(SqlStore *s, const HStmt *q, HErr **err) {
  if (!q || !q->has_sql_id || q->bad) {
    *err = herr("PROTO_INVALID", "close_sql needs an integer sql_id");
    return -1;
  }
  int i = sqlstore_find(s, q->sql_id);
  if (i >= 0) { /* closing an unknown id is not an error (spec) */
    free(s->v[i].sql);
    s->v[i] = s->v[--s->n];
  }
  return 0;
}

/* The SQL text of a statement: its sql or its stored sql_id (exactly one).
 * Borrowed from the request or the store. */
static const char *get_sql(SqlStore *store, const HStmt *q, size_t *len, HErr **err) {
  if (!q) {
    *err = herr("PROTO_INVALID", "sql or sql_id is required");
    return NULL;
  }
  if (q->bad) {
    *err = herr(q->bad_code ? q->bad_code : "PROTO_INVALID", "%s", q->bad);
    return NULL;
  }
  if (q->sql && q->has_sql_id) {
    *err = herr("PROTO_INVALID", "give either sql or sql_id, not both");
    return NULL;
  }
  if (q->sql) {
    *len = q->sql_len;
    return q->sql;
  }
  if (q->has_sql_id) {
    int i = sqlstore_find(store, q->sql_id);
    if (i < 0) {
      *err = herr("SQL_ID_INVALID", "sql_id is not stored");
      return NULL;
    }
    *len = strlen(store->v[i].sql);
    return store->v[i].sql;
  }
  *err = herr("PROTO_INVALID", "sql or sql_id is required");
  return NULL;
}

/* ---- values ---- */

/* Column i of the row st is on, copied into a. */
static int value_out(Arena *a, shale_stmt *st, int i, HValue *v) {
  switch (shale_column_type(st, i)) {
    case SHALE_INTEGER:
      v->type = HV_INTEGER;
      v->i = shale_column_int64(st, i);
      return 0;
    case SHALE_FLOAT:
      v->type = HV_FLOAT;
      v->d = shale_column_double(st, i);
      return 0;
    case SHALE_TEXT:
    case SHALE_BLOB: {
      int blob = shale_column_type(st, i) == SHALE_BLOB;
      const void *p = blob ? shale_column_blob(st, i) : (const void *)shale_column_text(st, i);
      v->type = blob ? HV_BLOB : HV_TEXT;
      v->n = p ? (size_t)shale_column_bytes(st, i) : 0;
      v->p = arena_dup(a, p, v->n);
      return v->p ? 0 : -1;
    }
    default:
      v->type = HV_NULL;
      return 0;
  }
}

/* Bind one Hrana value to parameter idx. */
static int bind_value(shale_stmt *st, int idx, const HValue *v, HErr **err) {
  int rc;
  switch (v->type) {
    case HV_NULL:
      rc = shale_bind_null(st, idx);
      break;
    case HV_INTEGER:
      rc = shale_bind_int64(st, idx, v->i);
      break;
    case HV_FLOAT:
      rc = shale_bind_double(st, idx, v->d);
      break;
    case HV_TEXT:
      rc = shale_bind_text(st, idx, v->p, (int)v->n, SHALE_TRANSIENT);
      break;
    case HV_BLOB:
      rc = shale_bind_blob(st, idx, v->p, (int)v->n, SHALE_TRANSIENT);
      break;
    default:
      *err = herr("ARGS_INVALID", "argument %d: %s", idx, v->p ? v->p : "not a Hrana value");
      return -1;
  }
  if (rc != SHALE_OK) {
    *err = rc == SHALE_RANGE ? herr("ARGS_INVALID",
                                    "argument %d is out of range: the statement "
                                    "has %d parameters",
                                    idx, shale_bind_parameter_count(st))
                             : herr_db(shale_db_handle(st), rc);
    return -1;
  }
  return 0;
}

static int bind_args(shale_stmt *st, const HStmt *q, HErr **err) {
  if (q->args_bad) {
    *err = herr("ARGS_INVALID", "%s", q->args_bad);
    return -1;
  }
  for (size_t i = 0; i < q->n_args; i++)
    if (bind_value(st, (int)i + 1, &q->args[i], err)) return -1;
  for (size_t i = 0; i < q->n_named; i++) {
    const char *name = q->named[i].name;
    if (!name) {
      *err = herr("ARGS_INVALID", "named argument %zu has no name", i);
      return -1;
    }
    int idx = shale_bind_parameter_index(st, name);
    if (!idx && name[0] != ':' && name[0] != '@' && name[0] != '$') {
      static const char prefixes[] = ":@$";
      char buf[256];
      for (int p = 0; p < 3 && !idx; p++) {
        snprintf(buf, sizeof buf, "%c%s", prefixes[p], name);
        idx = shale_bind_parameter_index(st, buf);
      }
    }
    if (!idx) continue; /* a name the statement lacks binds nothing */
    if (bind_value(st, idx, &q->named[i].value, err)) return -1;
  }
  return 0;
}

/* ---- statements ---- */

static int is_parse_error(const char *msg) {
  return msg && (strstr(msg, "syntax error") || strstr(msg, "unrecognized token") ||
                 strstr(msg, "incomplete input"));
}

static HErr *prepare_error(shale *db, int rc) {
  const char *msg = shale_errmsg(db);
  return is_parse_error(msg) ? herr("SQL_PARSE_ERROR", "%s", msg) : herr_db(db, rc);
}

static HErr *readonly_error(void) {
  return herr("SQLITE_READONLY", "this client is read-only: writes are refused");
}

/* Compile the single statement of sql[0..len). */
static shale_stmt *prepare_one(Stream *s, const char *sql, size_t len, HErr **err) {
  shale_stmt *st = NULL;
  const char *tail = NULL;
  int rc = shale_prepare_v2(s->db, sql, (int)len, &st, &tail);
  if (rc != SHALE_OK) {
    *err = prepare_error(s->db, rc);
    return NULL;
  }
  if (!st) {
    *err = herr("SQL_NO_STATEMENT", "the SQL text has no statement");
    return NULL;
  }
  const char *end = sql + len;
  while (tail && tail < end && isspace((unsigned char)*tail)) tail++;
  if (tail && tail < end) {
    shale_stmt *next = NULL;
    rc = shale_prepare_v2(s->db, tail, (int)(end - tail), &next, NULL);
    if (rc != SHALE_OK || next) {
      shale_finalize(next);
      shale_finalize(st);
      *err = herr("SQL_MANY_STATEMENTS", "the SQL text has more than one statement");
      return NULL;
    }
  }
  if (s->readonly && !shale_stmt_readonly(st)) {
    shale_finalize(st);
    *err = readonly_error();
    return NULL;
  }
  return st;
}

static HCol *cols_of(Arena *a, shale_stmt *st, size_t *n) {
  int k = shale_column_count(st);
  HCol *cols = arena_alloc(a, (size_t)(k > 0 ? k : 1) * sizeof *cols);
  *n = 0;
  for (int i = 0; cols && i < k; i++) {
    const char *name = shale_column_name(st, i), *decl = shale_column_decltype(st, i);
    cols[i].name = name ? arena_dup(a, name, strlen(name)) : NULL;
    cols[i].decltype = decl ? arena_dup(a, decl, strlen(decl)) : NULL;
    *n = (size_t)i + 1;
  }
  return cols;
}

static HErr *nomem(void) { return herr("SQLITE_NOMEM", "out of memory"); }

/* Step a bound statement to its end, its rows and counts into a. */
static HResult *run_stmt(Stream *s, shale_stmt *st, int want_rows, Arena *a, HErr **err) {
  shale_int64 before = shale_total_changes64(s->db);
  HResult *res = arena_alloc(a, sizeof *res);
  size_t cap = 0;
  int rc;
  if (!res) {
    *err = nomem();
    return NULL;
  }
  while ((rc = shale_step(st)) == SHALE_ROW) {
    if (!want_rows) continue;
    if (res->n_rows >= (size_t)g_cfg.max_rows) {
      *err = herr("RESPONSE_TOO_LARGE", "the result has more than %d rows (--max-rows)",
                  g_cfg.max_rows);
      return NULL;
    }
    if (res->n_rows == cap) { /* the old array stays in the arena: at most as much again */
      HRow *rows = arena_alloc(a, (cap = cap ? cap * 2 : 4) * sizeof *rows);
      if (!rows) break;
      if (res->n_rows) memcpy(rows, res->rows, res->n_rows * sizeof *rows);
      res->rows = rows;
    }
    /* read after the step: a statement recompiled for a moved schema (a
     * cached one, say) may have gained or lost columns */
    int ncol = shale_column_count(st);
    HRow *row = &res->rows[res->n_rows++];
    row->v = arena_alloc(a, (size_t)(ncol > 0 ? ncol : 1) * sizeof *row->v);
    row->n = row->v ? (size_t)ncol : 0;
    for (int i = 0; row->v && i < ncol; i++)
      if (value_out(a, st, i, &row->v[i])) break;
  }
  if (a->failed) {
    *err = nomem();
    return NULL;
  }
  if (rc != SHALE_DONE) {
    *err = herr_db(s->db, rc);
    return NULL;
  }
  shale_int64 changed = shale_total_changes64(s->db) - before;
  res->cols = cols_of(a, st, &res->n_cols);
  res->affected = changed > 0 ? shale_changes64(s->db) : 0;
  res->rowid = shale_last_insert_rowid(s->db);
  if (a->failed) {
    *err = nomem();
    return NULL;
  }
  return res;
}

static HResult *exec_stmt(Stream *s, SqlStore *store, const HStmt *q, Arena *a, HErr **err) {
  size_t len;
  if (!q) {
    *err = herr("PROTO_INVALID", "stmt must be an object");
    return NULL;
  }
  const char *sql = get_sql(store, q, &len, err);
  if (!sql) return NULL;
  shale_stmt *st = stream_stmt_take(s, sql, len);
  if (st && s->readonly && !shale_stmt_readonly(st)) { /* cached for a writer */
    stream_stmt_give(s, sql, len, st);
    *err = readonly_error();
    return NULL;
  }
  if (!st && !(st = prepare_one(s, sql, len, err))) return NULL;
  HResult *res = NULL;
  if (bind_args(st, q, err) == 0) res = run_stmt(s, st, q->want_rows, a, err);
  stream_stmt_give(s, sql, len, st);
  return res;
}

/* ---- batches ---- */

/* Evaluate a batch condition over the steps run so far (ok[i] / bad[i]: step
 * i ran and succeeded / failed). -1 with *err for a malformed condition. */
static int eval_cond(Stream *s, const HCond *c, const char *ok, const char *bad, size_t nsteps,
                     HErr **err) {
  switch (c ? c->type : HC_BAD) {
    case HC_OK:
    case HC_ERROR:
      if (c->step < 0 || (uint64_t)c->step >= nsteps) break;
      return c->type == HC_OK ? ok[c->step] : bad[c->step];
    case HC_NOT: {
      int r = eval_cond(s, c->n ? c->conds : NULL, ok, bad, nsteps, err);
      return r < 0 ? r : !r;
    }
    case HC_AND:
    case HC_OR: {
      int is_and = c->type == HC_AND, acc = is_and;
      for (size_t i = 0; i < c->n; i++) {
        int r = eval_cond(s, &c->conds[i], ok, bad, nsteps, err);
        if (r < 0) return r;
        acc = is_and ? acc && r : acc || r;
      }
      return acc;
    }
    case HC_IS_AUTOCOMMIT:
      return shale_get_autocommit(s->db) != 0;
    default:
      break;
  }
  *err = herr("BATCH_COND_INVALID", "malformed batch condition");
  return -1;
}

/* Called per step with its result or its error (both NULL: skipped). */
typedef void (*StepSink)(void *arg, size_t i, HResult *result, HErr *error);

static int run_batch(Stream *s, SqlStore *store, const HBatch *batch, Arena *a, StepSink sink,
                     void *arg, HErr **err) {
  if (!batch) {
    *err = herr("PROTO_INVALID", "batch needs a steps array");
    return -1;
  }
  size_t n = batch->n;
  char *ok = calloc(n + 1, 2), *bad = ok + n + 1;
  if (!ok) {
    *err = nomem();
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const HStep *step = &batch->steps[i];
    if (step->cond) {
      int r = eval_cond(s, step->cond, ok, bad, n, err);
      if (r < 0) {
        free(ok);
        return -1;
      }
      if (!r) {
        sink(arg, i, NULL, NULL);
        continue;
      }
    }
    HErr *e = NULL;
    HResult *res = exec_stmt(s, store, step->stmt, a, &e);
    ok[i] = res != NULL;
    bad[i] = res == NULL;
    sink(arg, i, res, herr_keep(a, e));
  }
  free(ok);
  return 0;
}

static void batch_sink(void *arg, size_t i, HResult *res, HErr *e) {
  HBatchResult *b = arg;
  b->results[i] = res;
  b->errors[i] = e;
}

static HBatchResult *exec_batch(Stream *s, SqlStore *store, const HBatch *batch, Arena *a,
                                HErr **err) {
  HBatchResult *b = arena_alloc(a, sizeof *b);
  size_t n = batch ? batch->n : 0;
  if (b) {
    b->n = n;
    b->results = arena_alloc(a, (n + 1) * sizeof *b->results);
    b->errors = arena_alloc(a, (n + 1) * sizeof *b->errors);
  }
  if (a->failed) {
    *err = nomem();
    return NULL;
  }
  return run_batch(s, store, batch, a, batch_sink, b, err) ? NULL : b;
}

/* Cursor entries: step_begin, rows, step_end per executed step. */
typedef struct CursorOut {
  Arena *a;
  HEntry *v;
  size_t n, cap;
} CursorOut;

static HEntry *entry_add(CursorOut *c, HEntryType type, size_t step) {
  if (c->n == c->cap) {
    HEntry *v = arena_alloc(c->a, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof *v);
    if (!v) return NULL;
    if (c->n) memcpy(v, c->v, c->n * sizeof *v);
    c->v = v;
  }
  HEntry *e = &c->v[c->n++];
  e->type = type;
  e->step = (uint32_t)step;
  return e;
}

static void cursor_sink(void *arg, size_t i, HResult *res, HErr *err) {
  CursorOut *c = arg;
  HEntry *e;
  if (err) {
    if ((e = entry_add(c, HE_STEP_ERROR, i))) e->err = err;
  } else if (res) {
    if ((e = entry_add(c, HE_STEP_BEGIN, i))) e->res = res;
    for (size_t r = 0; r < res->n_rows; r++)
      if ((e = entry_add(c, HE_ROW, i))) {
        e->res = res;
        e->row = r;
      }
    if ((e = entry_add(c, HE_STEP_END, i))) e->res = res;
  }
}

HEntry *hrana_cursor(Stream *s, SqlStore *store, const HBatch *batch, Arena *a, size_t *n,
                     HErr **err) {
  CursorOut c = {a, NULL, 0, 0};
  if (run_batch(s, store, batch, a, cursor_sink, &c, err)) return NULL;
  if (a->failed) {
    *err = nomem();
    return NULL;
  }
  *n = c.n;
  return c.v ? c.v : arena_alloc(a, sizeof *c.v);
}

/* ---- sequence, describe ---- */

static int exec_sequence(Stream *s, SqlStore *store, const HStmt *q, HErr **err) {
  size_t len;
  const char *sql = get_sql(store, q, &len, err), *end = sql + len;
  if (!sql) return -1;
  while (sql < end) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    int rc = shale_prepare_v2(s->db, sql, (int)(end - sql), &st, &tail);
    if (rc != SHALE_OK) {
      *err = prepare_error(s->db, rc);
      return -1;
    }
    if (!st) break;
    if (s->readonly && !shale_stmt_readonly(st)) {
      shale_finalize(st);
      *err = readonly_error();
      return -1;
    }
    while ((rc = shale_step(st)) == SHALE_ROW) {
    }
    if (rc != SHALE_DONE) {
      *err = herr_db(s->db, rc);
      shale_finalize(st);
      return -1;
    }
    shale_finalize(st);
    sql = tail ? tail : end;
  }
  return 0;
}

static int is_explain(const char *sql) {
  while (isspace((unsigned char)*sql)) sql++;
  return strncasecmp(sql, "explain", 7) == 0 && !isalnum((unsigned char)sql[7]) && sql[7] != '_';
}

static HDescribe *exec_describe(Stream *s, SqlStore *store, const HStmt *q, Arena *a, HErr **err) {
  size_t len;
  const char *sql = get_sql(store, q, &len, err);
  if (!sql) return NULL;
  int ro = s->readonly;
  s->readonly = 0; /* describing a write is allowed: nothing runs */
  shale_stmt *st = prepare_one(s, sql, len, err);
  s->readonly = ro;
  if (!st) return NULL;
  HDescribe *d = arena_alloc(a, sizeof *d);
  int np = shale_bind_parameter_count(st);
  if (d && (d->params = arena_alloc(a, (size_t)(np + 1) * sizeof *d->params))) {
    for (int i = 1; i <= np; i++) {
      const char *name = shale_bind_parameter_name(st, i);
      d->params[i - 1] = name ? arena_dup(a, name, strlen(name)) : NULL;
    }
    d->n_params = (size_t)np;
    d->cols = cols_of(a, st, &d->n_cols);
    d->is_explain = is_explain(shale_sql(st));
    d->is_readonly = shale_stmt_readonly(st) != 0;
  }
  shale_finalize(st);
  if (a->failed) {
    *err = nomem();
    return NULL;
  }
  return d;
}

/* ---- dispatch ---- */

static const char *const names[] = {
    [HQ_CLOSE] = "close",
    [HQ_EXECUTE] = "execute",
    [HQ_BATCH] = "batch",
    [HQ_SEQUENCE] = "sequence",
    [HQ_DESCRIBE] = "describe",
    [HQ_STORE_SQL] = "store_sql",
    [HQ_CLOSE_SQL] = "close_sql",
    [HQ_GET_AUTOCOMMIT] = "get_autocommit",
    [HQ_OPEN_STREAM] = "open_stream",
    [HQ_CLOSE_STREAM] = "close_stream",
    [HQ_OPEN_CURSOR] = "open_cursor",
    [HQ_CLOSE_CURSOR] = "close_cursor",
    [HQ_FETCH_CURSOR] = "fetch_cursor",
};

const char *hreq_name(HReqType type) {
  return type > 0 && (size_t)type < sizeof names / sizeof names[0] ? names[type] : "";
}

HReqType hreq_type(const char *name) {
  for (size_t i = 1; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) return (HReqType)i;
  return HQ_UNKNOWN;
}

HResp *hrana_request(Stream *s, SqlStore *store, const HReq *req, int version, Arena *a,
                     HErr **err) {
  HResp *r = arena_alloc(a, sizeof *r);
  int rc = 0;
  if (!r) {
    *err = nomem();
    return NULL;
  }
  r->type = req->type;
  if (s) s->last_used = server_now_ms();
  if (req->type == HQ_STORE_SQL && version >= 2) {
    rc = req_store_sql(store, req->stmt, err);
  } else if (req->type == HQ_CLOSE_SQL && version >= 2) {
    rc = req_close_sql(store, req->stmt, err);
  } else if (!s) {
    *err = herr("STREAM_NOT_FOUND", "the request needs a stream");
    rc = -1;
  } else if (req->type == HQ_EXECUTE) {
    rc = (r->result = exec_stmt(s, store, req->stmt, a, err)) ? 0 : -1;
  } else if (req->type == HQ_BATCH) {
    rc = (r->batch = exec_batch(s, store, req->batch, a, err)) ? 0 : -1;
  } else if (req->type == HQ_SEQUENCE && version >= 2) {
    rc = exec_sequence(s, store, req->stmt, err);
  } else if (req->type == HQ_DESCRIBE && version >= 2) {
    rc = (r->describe = exec_describe(s, store, req->stmt, a, err)) ? 0 : -1;
  } else if (req->type == HQ_GET_AUTOCOMMIT && version >= 3) {
    r->flag = shale_get_autocommit(s->db) != 0;
  } else {
    *err = herr("REQUEST_UNKNOWN", "unknown request type \"%s\" for protocol version %d",
                req->name ? req->name : "", version);
    rc = -1;
  }
  return rc ? NULL : r;
}
