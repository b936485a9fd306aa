/*
 * hrana.c -- the Hrana stream requests on one stream's connection: execute,
 * batch (every condition type), sequence, describe, store_sql/close_sql,
 * get_autocommit, and batches run as v3 cursors. Also the value encoding,
 * the Error objects and base64 (OpenSSL's EVP codec).
 *
 * Values (the spec's JSON encoding):
 *   {"type":"null"} {"type":"integer","value":"-12"} (decimal text, 64-bit)
 *   {"type":"float","value":1.5} {"type":"text","value":"..."}
 *   {"type":"blob","base64":"..."} (sent padded; padded or not accepted)
 *
 * Invariants:
 *  1. A request either returns its response object or sets *err: never both,
 *     never neither.
 *  2. Every statement prepared here is finalized, or reset and given to the
 *     connection's statement cache (execute, batch and cursor steps), before
 *     the request returns.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* ---- errors ---- */

json_t *herr(const char *code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return json_pack("{s:s,s:s}", "message", buf, "code", code);
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

json_t *herr_db(shale *db, int rc) {
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

static json_t *req_store_sql(SqlStore *s, json_t *req, json_t **err) {
  json_t *jid = json_object_get(req, "sql_id"), *jsql = json_object_get(req, "sql");
  if (!json_is_integer(jid) || !json_is_string(jsql)) {
    *err = herr("PROTO_INVALID", "store_sql needs an integer sql_id and a string sql");
    return NULL;
  }
  int64_t id = json_integer_value(jid);
  if (sqlstore_find(s, id) >= 0) {
    *err = herr("SQL_ID_IN_USE", "sql_id %lld is already stored", (long long)id);
    return NULL;
  }
  if (s->n >= g_cfg.max_sql) {
    *err = herr("SQL_STORE_TOO_MANY", "too many stored SQL texts (limit %d)", g_cfg.max_sql);
    return NULL;
  }
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 8;
    void *v = realloc(s->v, (size_t)cap * sizeof s->v[0]);
    if (!v) {
      *err = herr("SQLITE_NOMEM", "out of memory");
      return NULL;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n].id = id;
  s->v[s->n].sql = strndup(json_string_value(jsql), json_string_length(jsql));
  s->n++;
  return json_pack("{s:s}", "type", "store_sql");
}

static json_t *req_close_sql(SqlStore *s, json_t *req, json_t **err) {
  json_t *jid = json_object_get(req, "sql_id");
  if (!json_is_integer(jid)) {
    *err = herr("PROTO_INVALID", "close_sql needs an integer sql_id");
    return NULL;
  }
  int i = sqlstore_find(s, json_integer_value(jid));
  if (i >= 0) { /* closing an unknown id is not an error (spec) */
    free(s->v[i].sql);
    s->v[i] = s->v[--s->n];
  }
  return json_pack("{s:s}", "type", "close_sql");
}

/* The SQL text of a request: its "sql" or its stored "sql_id" (exactly one).
 * Borrowed from the request or the store. */
static const char *get_sql(SqlStore *store, json_t *obj, size_t *len, json_t **err) {
  json_t *jsql = json_object_get(obj, "sql"), *jid = json_object_get(obj, "sql_id");
  if (jsql && json_is_null(jsql)) jsql = NULL;
  if (jid && json_is_null(jid)) jid = NULL;
  if (jsql && jid) {
    *err = herr("PROTO_INVALID", "give either sql or sql_id, not both");
    return NULL;
  }
  if (jsql) {
    if (!json_is_string(jsql)) {
      *err = herr("PROTO_INVALID", "sql must be a string");
      return NULL;
    }
    *len = json_string_length(jsql);
    return json_string_value(jsql);
  }
  if (jid) {
    int i = json_is_integer(jid) ? sqlstore_find(store, json_integer_value(jid)) : -1;
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

/* {"type": T} plus, when val, {key: val}: built directly (json_pack parses
 * its format on every call, and values are the hot path). */
static json_t *tagged(const char *type, const char *key, json_t *val) {
  json_t *o = json_object();
  json_object_set_new_nocheck(o, "type", json_string_nocheck(type));
  if (val) json_object_set_new_nocheck(o, key, val);
  return o;
}

/* Length of the well-formed UTF-8 sequence at p (before end): 1-4, or 0
 * when the byte there starts none (a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, or cut short). */
static int utf8_seq(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (n == 0 || c > 0xf4 || end - p < n) return 0;
  for (int k = 1; k < n; k++)
    if ((p[k] & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))) return 0;
  if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))) return 0;
  return n;
}

/* A JSON string of text t (n bytes): jansson refuses to encode bytes that
 * are not UTF-8, which SQLite text may hold, so each byte that starts no
 * well-formed sequence becomes U+FFFD (as a browser decodes it). */
static json_t *text_string(const char *t, int n) {
  const unsigned char *p = (const unsigned char *)t, *end = p + n;
  int k;
  while (p < end && (k = utf8_seq(p, end)) > 0) p += k;
  if (p == end) return json_stringn_nocheck(t, (size_t)n);
  size_t cap = (size_t)n * 3 + 1, o = (size_t)(p - (const unsigned char *)t);
  char *buf = malloc(cap);
  if (!buf) return NULL;
  memcpy(buf, t, o);
  while (p < end) {
    k = utf8_seq(p, end);
    if (k > 0) {
      memcpy(buf + o, p, (size_t)k);
      o += (size_t)k;
      p += k;
    } else {
      memcpy(buf + o, "\xef\xbf\xbd", 3);
      o += 3;
      p++;
    }
  }
  json_t *v = json_stringn_nocheck(buf, o);
  free(buf);
  return v;
}

static json_t *value_out(shale_stmt *st, int i) {
  switch (shale_column_type(st, i)) {
    case SHALE_INTEGER: {
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)shale_column_int64(st, i));
      return tagged("integer", "value", json_string_nocheck(buf));
    }
    case SHALE_FLOAT: {
      double d = shale_column_double(st, i);
      /* JSON has no infinities: the largest finite double stands in. */
      if (isinf(d)) d = d > 0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
      if (isnan(d)) return tagged("null", NULL, NULL);
      return tagged("float", "value", json_real(d));
    }
    case SHALE_TEXT: {
      const char *t = (const char *)shale_column_text(st, i);
      int n = shale_column_bytes(st, i);
      return tagged("text", "value", text_string(t ? t : "", t ? n : 0));
    }
    case SHALE_BLOB: {
      const unsigned char *b = shale_column_blob(st, i);
      char *enc = b64_encode(b, (size_t)shale_column_bytes(st, i));
      json_t *v = tagged("blob", "base64", json_string_nocheck(enc ? enc : ""));
      free(enc);
      return v;
    }
    default:
      return tagged("null", NULL, NULL);
  }
}

/* Bind one Hrana value to parameter idx. */
static int bind_value(shale_stmt *st, int idx, json_t *v, json_t **err) {
  const char *type = json_string_value(json_object_get(v, "type"));
  json_t *val = json_object_get(v, "value");
  int rc;
  if (!json_is_object(v) || !type) {
    *err = herr("ARGS_INVALID", "argument %d is not a Hrana value", idx);
    return -1;
  }
  if (!strcmp(type, "null")) {
    rc = shale_bind_null(st, idx);
  } else if (!strcmp(type, "integer")) {
    long long x;
    if (json_is_string(val)) {
      const char *s = json_string_value(val);
      char *end;
      errno = 0;
      x = strtoll(s, &end, 10);
      if (!*s || *end || errno) {
        *err = herr("ARGS_INVALID", "argument %d: \"%s\" is not a 64-bit integer", idx, s);
        return -1;
      }
    } else if (json_is_integer(val)) {
      x = json_integer_value(val);
    } else {
      *err = herr("ARGS_INVALID", "argument %d: integer value must be a decimal string", idx);
      return -1;
    }
    rc = shale_bind_int64(st, idx, x);
  } else if (!strcmp(type, "float")) {
    if (!json_is_number(val)) {
      *err = herr("ARGS_INVALID", "argument %d: float value must be a number", idx);
      return -1;
    }
    rc = shale_bind_double(st, idx, json_number_value(val));
  } else if (!strcmp(type, "text")) {
    if (!json_is_string(val)) {
      *err = herr("ARGS_INVALID", "argument %d: text value must be a string", idx);
      return -1;
    }
    rc = shale_bind_text(st, idx, json_string_value(val), (int)json_string_length(val),
                         SHALE_TRANSIENT);
  } else if (!strcmp(type, "blob")) {
    json_t *b = json_object_get(v, "base64");
    unsigned char *data = NULL;
    long n =
        json_is_string(b) ? b64_decode(json_string_value(b), json_string_length(b), &data) : -1;
    if (n < 0) {
      *err = herr("ARGS_INVALID", "argument %d: blob needs valid base64", idx);
      return -1;
    }
    rc = shale_bind_blob(st, idx, data, (int)n, SHALE_TRANSIENT);
    free(data);
  } else {
    *err = herr("ARGS_INVALID", "argument %d: unknown value type \"%s\"", idx, type);
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

static int bind_args(shale_stmt *st, json_t *stmt, json_t **err) {
  json_t *args = json_object_get(stmt, "args"), *named = json_object_get(stmt, "named_args");
  if (args && !json_is_null(args)) {
    if (!json_is_array(args)) {
      *err = herr("ARGS_INVALID", "args must be an array");
      return -1;
    }
    for (size_t i = 0; i < json_array_size(args); i++)
      if (bind_value(st, (int)i + 1, json_array_get(args, i), err)) return -1;
  }
  if (named && !json_is_null(named)) {
    if (!json_is_array(named)) {
      *err = herr("ARGS_INVALID", "named_args must be an array");
      return -1;
    }
    for (size_t i = 0; i < json_array_size(named); i++) {
      json_t *a = json_array_get(named, i);
      const char *name = json_string_value(json_object_get(a, "name"));
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
      if (bind_value(st, idx, json_object_get(a, "value"), err)) return -1;
    }
  }
  return 0;
}

/* ---- statements ---- */

static int is_parse_error(const char *msg) {
  return msg && (strstr(msg, "syntax error") || strstr(msg, "unrecognized token") ||
                 strstr(msg, "incomplete input"));
}

/* Compile the single statement of sql[0..len). */
static shale_stmt *prepare_one(Stream *s, const char *sql, size_t len, json_t **err) {
  shale_stmt *st = NULL;
  const char *tail = NULL;
  int rc = shale_prepare_v2(s->db, sql, (int)len, &st, &tail);
  if (rc != SHALE_OK) {
    const char *msg = shale_errmsg(s->db);
    *err = is_parse_error(msg) ? herr("SQL_PARSE_ERROR", "%s", msg) : herr_db(s->db, rc);
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
    *err = herr("SQLITE_READONLY", "this client is read-only: writes are refused");
    return NULL;
  }
  return st;
}

static json_t *cols_of(shale_stmt *st) {
  json_t *cols = json_array();
  for (int i = 0; i < shale_column_count(st); i++) {
    const char *name = shale_column_name(st, i), *decl = shale_column_decltype(st, i);
    json_t *c = json_object();
    json_object_set_new_nocheck(c, "name",
                                name ? text_string(name, (int)strlen(name)) : json_null());
    json_object_set_new_nocheck(c, "decltype",
                                decl ? text_string(decl, (int)strlen(decl)) : json_null());
    json_array_append_new(cols, c);
  }
  return cols;
}

/* Step a bound statement to its end. Returns StmtResult or NULL + *err. */
static json_t *run_stmt(Stream *s, shale_stmt *st, int want_rows, json_t **err) {
  shale_int64 before = shale_total_changes64(s->db);
  json_t *rows = json_array();
  int ncol, nrows = 0, rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    if (!want_rows) continue;
    /* read after the step: a statement recompiled for a moved schema (a
     * cached one, say) may have gained or lost columns */
    ncol = shale_column_count(st);
    if (++nrows > g_cfg.max_rows) {
      json_decref(rows);
      *err = herr("RESPONSE_TOO_LARGE", "the result has more than %d rows (--max-rows)",
                  g_cfg.max_rows);
      return NULL;
    }
    json_t *row = json_array();
    for (int i = 0; i < ncol; i++) json_array_append_new(row, value_out(st, i));
    json_array_append_new(rows, row);
  }
  if (rc != SHALE_DONE) {
    json_decref(rows);
    *err = herr_db(s->db, rc);
    return NULL;
  }
  shale_int64 changed = shale_total_changes64(s->db) - before;
  char rowid[32];
  snprintf(rowid, sizeof rowid, "%lld", (long long)shale_last_insert_rowid(s->db));
  json_t *res = json_object();
  json_object_set_new_nocheck(res, "cols", cols_of(st));
  json_object_set_new_nocheck(res, "rows", rows);
  json_object_set_new_nocheck(res, "affected_row_count",
                              json_integer(changed > 0 ? shale_changes64(s->db) : 0));
  json_object_set_new_nocheck(res, "last_insert_rowid", json_string_nocheck(rowid));
  return res;
}

static json_t *exec_stmt(Stream *s, SqlStore *store, json_t *stmt, json_t **err) {
  size_t len;
  if (!json_is_object(stmt)) {
    *err = herr("PROTO_INVALID", "stmt must be an object");
    return NULL;
  }
  const char *sql = get_sql(store, stmt, &len, err);
  if (!sql) return NULL;
  shale_stmt *st = stream_stmt_take(s, sql, len);
  if (st && s->readonly && !shale_stmt_readonly(st)) { /* cached for a writer */
    stream_stmt_give(s, sql, len, st);
    *err = herr("SQLITE_READONLY", "this client is read-only: writes are refused");
    return NULL;
  }
  if (!st && !(st = prepare_one(s, sql, len, err))) return NULL;
  json_t *res = NULL;
  if (bind_args(st, stmt, err) == 0)
    res = run_stmt(s, st, !json_is_false(json_object_get(stmt, "want_rows")), err);
  stream_stmt_give(s, sql, len, st);
  return res;
}

/* ---- batches ---- */

/* Evaluate a batch condition over the steps run so far (ok[i] / bad[i]: step
 * i ran and succeeded / failed). -1 with *err for a malformed condition. */
static int eval_cond(Stream *s, json_t *c, const char *ok, const char *bad, size_t nsteps,
                     json_t **err) {
  const char *type = json_string_value(json_object_get(c, "type"));
  if (!type) goto bad_cond;
  if (!strcmp(type, "ok") || !strcmp(type, "error")) {
    json_t *js = json_object_get(c, "step");
    if (!json_is_integer(js) || json_integer_value(js) < 0 ||
        (size_t)json_integer_value(js) >= nsteps)
      goto bad_cond;
    size_t i = (size_t)json_integer_value(js);
    return type[0] == 'o' ? ok[i] : bad[i];
  }
  if (!strcmp(type, "not")) {
    int r = eval_cond(s, json_object_get(c, "cond"), ok, bad, nsteps, err);
    return r < 0 ? r : !r;
  }
  if (!strcmp(type, "and") || !strcmp(type, "or")) {
    json_t *conds = json_object_get(c, "conds");
    int is_and = type[0] == 'a', acc = is_and;
    if (!json_is_array(conds)) goto bad_cond;
    for (size_t i = 0; i < json_array_size(conds); i++) {
      int r = eval_cond(s, json_array_get(conds, i), ok, bad, nsteps, err);
      if (r < 0) return r;
      acc = is_and ? acc && r : acc || r;
    }
    return acc;
  }
  if (!strcmp(type, "is_autocommit")) return shale_get_autocommit(s->db) != 0;
bad_cond:
  *err = herr("BATCH_COND_INVALID", "malformed batch condition");
  return -1;
}

/* Called per step with its result or its error (both NULL: skipped). */
typedef void (*StepSink)(void *arg, size_t i, json_t *result, json_t *error);

static int run_batch(Stream *s, SqlStore *store, json_t *batch, StepSink sink, void *arg,
                     json_t **err) {
  json_t *steps = json_object_get(batch, "steps");
  if (!json_is_object(batch) || !json_is_array(steps)) {
    *err = herr("PROTO_INVALID", "batch needs a steps array");
    return -1;
  }
  size_t n = json_array_size(steps);
  char *ok = calloc(n + 1, 2), *bad = ok + n + 1;
  for (size_t i = 0; i < n; i++) {
    json_t *step = json_array_get(steps, i), *cond = json_object_get(step, "condition");
    if (cond && !json_is_null(cond)) {
      int r = eval_cond(s, cond, ok, bad, n, err);
      if (r < 0) {
        free(ok);
        return -1;
      }
      if (!r) {
        sink(arg, i, NULL, NULL);
        continue;
      }
    }
    json_t *e = NULL, *res = exec_stmt(s, store, json_object_get(step, "stmt"), &e);
    ok[i] = res != NULL;
    bad[i] = res == NULL;
    sink(arg, i, res, e);
  }
  free(ok);
  return 0;
}

typedef struct {
  json_t *results, *errors;
} BatchOut;

static void batch_sink(void *arg, size_t i, json_t *res, json_t *e) {
  BatchOut *b = arg;
  json_array_append_new(b->results, res ? res : json_null());
  json_array_append_new(b->errors, e ? e : json_null());
}

static json_t *exec_batch(Stream *s, SqlStore *store, json_t *batch, json_t **err) {
  BatchOut b = {json_array(), json_array()};
  if (run_batch(s, store, batch, batch_sink, &b, err)) {
    json_decref(b.results);
    json_decref(b.errors);
    return NULL;
  }
  return json_pack("{s:o,s:o}", "step_results", b.results, "step_errors", b.errors);
}

/* Cursor entries: step_begin, rows, step_end per executed step. */
static void cursor_sink(void *arg, size_t i, json_t *res, json_t *e) {
  json_t *out = arg;
  if (e) {
    json_array_append_new(
        out, json_pack("{s:s,s:I,s:o}", "type", "step_error", "step", (json_int_t)i, "error", e));
  } else if (res) {
    json_array_append_new(out, json_pack("{s:s,s:I,s:O}", "type", "step_begin", "step",
                                         (json_int_t)i, "cols", json_object_get(res, "cols")));
    json_t *rows = json_object_get(res, "rows");
    for (size_t r = 0; r < json_array_size(rows); r++)
      json_array_append_new(out,
                            json_pack("{s:s,s:O}", "type", "row", "row", json_array_get(rows, r)));
    json_array_append_new(out,
                          json_pack("{s:s,s:O,s:O}", "type", "step_end", "affected_row_count",
                                    json_object_get(res, "affected_row_count"), "last_insert_rowid",
                                    json_object_get(res, "last_insert_rowid")));
    json_decref(res);
  }
}

json_t *hrana_cursor(Stream *s, SqlStore *store, json_t *batch, json_t **err) {
  json_t *out = json_array();
  if (run_batch(s, store, batch, cursor_sink, out, err)) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* ---- sequence, describe ---- */

static json_t *exec_sequence(Stream *s, SqlStore *store, json_t *req, json_t **err) {
  size_t len;
  const char *sql = get_sql(store, req, &len, err), *end = sql + len;
  if (!sql) return NULL;
  while (sql < end) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    int rc = shale_prepare_v2(s->db, sql, (int)(end - sql), &st, &tail);
    if (rc != SHALE_OK) {
      const char *msg = shale_errmsg(s->db);
      *err = is_parse_error(msg) ? herr("SQL_PARSE_ERROR", "%s", msg) : herr_db(s->db, rc);
      return NULL;
    }
    if (!st) break;
    if (s->readonly && !shale_stmt_readonly(st)) {
      shale_finalize(st);
      *err = herr("SQLITE_READONLY", "this client is read-only: writes are refused");
      return NULL;
    }
    while ((rc = shale_step(st)) == SHALE_ROW) {
    }
    if (rc != SHALE_DONE) {
      *err = herr_db(s->db, rc);
      shale_finalize(st);
      return NULL;
    }
    shale_finalize(st);
    sql = tail ? tail : end;
  }
  return json_pack("{s:s}", "type", "sequence");
}

static int is_explain(const char *sql) {
  while (isspace((unsigned char)*sql)) sql++;
  return strncasecmp(sql, "explain", 7) == 0 && !isalnum((unsigned char)sql[7]) && sql[7] != '_';
}

static json_t *exec_describe(Stream *s, SqlStore *store, json_t *req, json_t **err) {
  size_t len;
  const char *sql = get_sql(store, req, &len, err);
  if (!sql) return NULL;
  int ro = s->readonly;
  s->readonly = 0; /* describing a write is allowed: nothing runs */
  shale_stmt *st = prepare_one(s, sql, len, err);
  s->readonly = ro;
  if (!st) return NULL;
  json_t *params = json_array();
  for (int i = 1; i <= shale_bind_parameter_count(st); i++)
    json_array_append_new(params, json_pack("{s:s?}", "name", shale_bind_parameter_name(st, i)));
  json_t *res = json_pack("{s:o,s:o,s:b,s:b}", "params", params, "cols", cols_of(st), "is_explain",
                          is_explain(shale_sql(st)), "is_readonly", shale_stmt_readonly(st));
  shale_finalize(st);
  return json_pack("{s:s,s:o}", "type", "describe", "result", res);
}

/* ---- dispatch ---- */

json_t *hrana_request(Stream *s, SqlStore *store, const char *type, json_t *req, int version,
                      json_t **err) {
  json_t *r;
  if (s) s->last_used = server_now_ms();
  if (!strcmp(type, "store_sql") && version >= 2) return req_store_sql(store, req, err);
  if (!strcmp(type, "close_sql") && version >= 2) return req_close_sql(store, req, err);
  if (!s) {
    *err = herr("STREAM_NOT_FOUND", "the request needs a stream");
    return NULL;
  }
  if (!strcmp(type, "execute")) {
    if (!(r = exec_stmt(s, store, json_object_get(req, "stmt"), err))) return NULL;
    return tagged("execute", "result", r);
  }
  if (!strcmp(type, "batch")) {
    if (!(r = exec_batch(s, store, json_object_get(req, "batch"), err))) return NULL;
    return json_pack("{s:s,s:o}", "type", "batch", "result", r);
  }
  if (version >= 2) {
    if (!strcmp(type, "sequence")) return exec_sequence(s, store, req, err);
    if (!strcmp(type, "describe")) return exec_describe(s, store, req, err);
  }
  if (version >= 3 && !strcmp(type, "get_autocommit"))
    return json_pack("{s:s,s:b}", "type", "get_autocommit", "is_autocommit",
                     shale_get_autocommit(s->db) != 0);
  *err =
      herr("REQUEST_UNKNOWN", "unknown request type \"%s\" for protocol version %d", type, version);
  return NULL;
}
