/*
 * hjson.c -- Hrana's JSON encoding (jansson): request bodies and WebSocket
 * messages into the request structures of server.h, answers out of the
 * result structures.
 *
 * Values (the spec's JSON encoding):
 *   {"type":"null"} {"type":"integer","value":"-12"} (decimal text, 64-bit)
 *   {"type":"float","value":1.5} {"type":"text","value":"..."}
 *   {"type":"blob","base64":"..."} (sent padded; padded or not accepted)
 *
 * Invariants:
 *  1. A decoded message borrows the strings of its jansson tree, which the
 *     arena frees (its done hook) after the answer is sent.
 *  2. A field of the wrong JSON type is no decoding error: it becomes the
 *     request's own error (bad / args_bad / HV_BAD / HC_BAD), given when
 *     the request runs, in the order the requests are run.
 *  3. Every text sent is UTF-8 (jansson refuses anything else): a byte that
 *     starts no well-formed sequence becomes U+FFFD; a float that JSON
 *     cannot write (an infinity) becomes the largest finite double, NaN
 *     (not stored by SQLite, so not expected) null.
 *  4. Every float sent, and every string that needs escaping or holds
 *     non-ASCII bytes, is encoded by jansson; the writer below adds only
 *     punctuation, the spec's keys and type names, digits, and strings of
 *     printable ASCII that jansson would copy unchanged.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* ---- decoding ---- */

static void dec_value(Arena *a, json_t *v, HValue *out) {
  const char *type = json_string_value(json_object_get(v, "type"));
  json_t *val = json_object_get(v, "value");
  out->type = HV_BAD;
  if (!json_is_object(v) || !type) {
    out->p = "not a Hrana value";
  } else if (!strcmp(type, "null")) {
    out->type = HV_NULL;
  } else if (!strcmp(type, "integer")) {
    if (json_is_string(val)) {
      const char *s = json_string_value(val);
      char *end;
      errno = 0;
      long long x = strtoll(s, &end, 10);
      if (!*s || *end || errno) {
        out->p = arena_printf(a, "\"%s\" is not a 64-bit integer", s);
        return;
      }
      out->type = HV_INTEGER;
      out->i = x;
    } else if (json_is_integer(val)) {
      out->type = HV_INTEGER;
      out->i = json_integer_value(val);
    } else {
      out->p = "integer value must be a decimal string";
    }
  } else if (!strcmp(type, "float")) {
    if (!json_is_number(val)) {
      out->p = "float value must be a number";
      return;
    }
    out->type = HV_FLOAT;
    out->d = json_number_value(val);
  } else if (!strcmp(type, "text")) {
    if (!json_is_string(val)) {
      out->p = "text value must be a string";
      return;
    }
    out->type = HV_TEXT;
    out->p = json_string_value(val);
    out->n = json_string_length(val);
  } else if (!strcmp(type, "blob")) {
    json_t *b = json_object_get(v, "base64");
    unsigned char *data = NULL;
    long n =
        json_is_string(b) ? b64_decode(json_string_value(b), json_string_length(b), &data) : -1;
    if (n < 0) {
      out->p = "blob needs valid base64";
      return;
    }
    out->type = HV_BLOB;
    out->p = arena_dup(a, data, (size_t)n);
    out->n = (size_t)n;
    free(data);
  } else {
    out->p = arena_printf(a, "unknown value type \"%s\"", type);
  }
}

/* The statement object o (or the request holding sql / sql_id itself):
 * NULL when o is no object. */
static HStmt *dec_stmt(Arena *a, json_t *o) {
  if (!json_is_object(o)) return NULL;
  HStmt *q = arena_alloc(a, sizeof *q);
  if (!q) return NULL;
  json_t *jsql = json_object_get(o, "sql"), *jid = json_object_get(o, "sql_id");
  json_t *args = json_object_get(o, "args"), *named = json_object_get(o, "named_args");
  if (jsql && !json_is_null(jsql)) {
    if (json_is_string(jsql)) {
      q->sql = json_string_value(jsql);
      q->sql_len = json_string_length(jsql);
    } else {
      q->bad = "sql must be a string";
    }
  }
  if (jid && !json_is_null(jid)) {
    if (json_is_integer(jid)) {
      q->has_sql_id = 1;
      q->sql_id = json_integer_value(jid);
    } else if (!q->bad && !q->sql) {
      q->bad_code = "SQL_ID_INVALID";
      q->bad = "sql_id is not stored";
    }
  }
  if (args && !json_is_null(args)) {
    if (!json_is_array(args)) {
      q->args_bad = "args must be an array";
    } else if ((q->n_args = json_array_size(args))) {
      q->args = arena_alloc(a, q->n_args * sizeof *q->args);
      for (size_t i = 0; q->args && i < q->n_args; i++)
        dec_value(a, json_array_get(args, i), &q->args[i]);
    }
  }
  if (named && !json_is_null(named) && !q->args_bad) {
    if (!json_is_array(named)) {
      q->args_bad = "named_args must be an array";
    } else if ((q->n_named = json_array_size(named))) {
      q->named = arena_alloc(a, q->n_named * sizeof *q->named);
      for (size_t i = 0; q->named && i < q->n_named; i++) {
        json_t *na = json_array_get(named, i);
        q->named[i].name = json_string_value(json_object_get(na, "name"));
        dec_value(a, json_object_get(na, "value"), &q->named[i].value);
      }
    }
  }
  q->want_rows = !json_is_false(json_object_get(o, "want_rows"));
  return q;
}

static void dec_cond(Arena *a, json_t *c, HCond *out) {
  const char *type = json_string_value(json_object_get(c, "type"));
  out->type = HC_BAD;
  if (!type) return;
  if (!strcmp(type, "ok") || !strcmp(type, "error")) {
    json_t *js = json_object_get(c, "step");
    if (!json_is_integer(js)) return;
    out->type = type[0] == 'o' ? HC_OK : HC_ERROR;
    out->step = json_integer_value(js);
  } else if (!strcmp(type, "not")) {
    if (!(out->conds = arena_alloc(a, sizeof *out->conds))) return;
    out->type = HC_NOT;
    out->n = 1;
    dec_cond(a, json_object_get(c, "cond"), out->conds);
  } else if (!strcmp(type, "and") || !strcmp(type, "or")) {
    json_t *conds = json_object_get(c, "conds");
    if (!json_is_array(conds)) return;
    out->n = json_array_size(conds);
    if (!(out->conds = arena_alloc(a, (out->n + 1) * sizeof *out->conds))) return;
    out->type = type[0] == 'a' ? HC_AND : HC_OR;
    for (size_t i = 0; i < out->n; i++) dec_cond(a, json_array_get(conds, i), &out->conds[i]);
  } else if (!strcmp(type, "is_autocommit")) {
    out->type = HC_IS_AUTOCOMMIT;
  }
}

/* NULL when b is no object with a steps array. */
static HBatch *dec_batch(Arena *a, json_t *b) {
  json_t *steps = json_object_get(b, "steps");
  if (!json_is_object(b) || !json_is_array(steps)) return NULL;
  HBatch *out = arena_alloc(a, sizeof *out);
  if (!out) return NULL;
  out->n = json_array_size(steps);
  if (!(out->steps = arena_alloc(a, (out->n + 1) * sizeof *out->steps))) return NULL;
  for (size_t i = 0; i < out->n; i++) {
    json_t *step = json_array_get(steps, i), *cond = json_object_get(step, "condition");
    if (cond && !json_is_null(cond) && (out->steps[i].cond = arena_alloc(a, sizeof(HCond))))
      dec_cond(a, cond, out->steps[i].cond);
    out->steps[i].stmt = dec_stmt(a, json_object_get(step, "stmt"));
  }
  return out;
}

static int dec_int(json_t *o, const char *key, int64_t *v) {
  json_t *j = json_object_get(o, key);
  if (!json_is_integer(j)) return 0;
  *v = json_integer_value(j);
  return 1;
}

static void dec_request(Arena *a, json_t *r, HReq *q) {
  q->name = json_string_value(json_object_get(r, "type"));
  q->type = hreq_type(q->name);
  q->stmt = q->type == HQ_EXECUTE ? dec_stmt(a, json_object_get(r, "stmt")) : dec_stmt(a, r);
  q->batch = dec_batch(a, json_object_get(r, "batch"));
  q->has_stream_id = dec_int(r, "stream_id", &q->stream_id);
  q->has_cursor_id = dec_int(r, "cursor_id", &q->cursor_id);
  q->has_max_count = dec_int(r, "max_count", &q->max_count);
}

static void tree_free(void *j) { json_decref(j); }

/* Parse buf into a's tree (freed with a). */
static json_t *parse(const void *buf, size_t n, Arena *a, json_error_t *jerr) {
  json_t *j = json_loadb(buf, n, JSON_ALLOW_NUL, jerr);
  if (j) {
    a->done = tree_free;
    a->done_arg = j;
  }
  return j;
}

static int j_body(const void *buf, size_t n, int cursor, Arena *a, HBody *b) {
  json_error_t jerr;
  json_t *j = parse(buf, n, a, &jerr);
  if (!json_is_object(j)) {
    b->bad = arena_printf(a, "the body is not a JSON object: %s", j ? "not an object" : jerr.text);
    return -1;
  }
  json_t *baton = json_object_get(j, "baton");
  if (baton && !json_is_null(baton) && !json_is_string(baton)) {
    b->bad = "baton must be a string or null";
    return -1;
  }
  b->baton = json_string_value(baton);
  if (cursor) {
    json_t *batch = json_object_get(j, "batch");
    if (!json_is_object(batch)) {
      b->bad = "batch must be an object";
      return -1;
    }
    b->batch = dec_batch(a, batch);
    return 0;
  }
  json_t *reqs = json_object_get(j, "requests");
  if (!json_is_array(reqs)) {
    b->bad = "requests must be an array";
    return -1;
  }
  b->n_reqs = json_array_size(reqs);
  if (!(b->reqs = arena_alloc(a, (b->n_reqs + 1) * sizeof *b->reqs))) {
    b->bad = "out of memory";
    return -1;
  }
  for (size_t i = 0; i < b->n_reqs; i++) dec_request(a, json_array_get(reqs, i), &b->reqs[i]);
  return 0;
}

static int j_client_msg(const void *buf, size_t n, Arena *a, HClientMsg *m) {
  json_t *j = parse(buf, n, a, &(json_error_t){0});
  const char *type = json_string_value(json_object_get(j, "type"));
  m->type = HM_NONE;
  if (!type) return -1;
  if (!strcmp(type, "hello")) {
    m->type = HM_HELLO;
    m->jwt = json_string_value(json_object_get(j, "jwt"));
  } else if (!strcmp(type, "request")) {
    json_t *r = json_object_get(j, "request");
    m->type = HM_REQUEST;
    m->has_request_id = dec_int(j, "request_id", &m->request_id);
    if (json_is_object(r) && (m->req = arena_alloc(a, sizeof *m->req))) dec_request(a, r, m->req);
  } else {
    m->type = HM_OTHER;
  }
  return 0;
}

/* ---- encoding ---- */

/* The answers are written as they are walked: jansson encodes every string
 * and number (escapes, float formatting) from a few leaves reused across
 * answers (one thread: server.h invariant 1), and the writer puts the fixed
 * punctuation and keys between them. A tree would cost an allocation per
 * node and jansson's dump a pointer-keyed loop check per object and array,
 * which was most of a small answer's cost. */
typedef struct Jw {
  PutFn put;
  void *arg;
  int rc; /* -1 once a put failed */
} Jw;

static json_t *leaf_str, *leaf_real;

static void jw_raw(Jw *w, const char *s, size_t n) {
  if (!w->rc && w->put(s, n, w->arg)) w->rc = -1;
}

/* A literal (a string literal only: its size is taken): punctuation, keys
 * and fixed ASCII names. */
#define JW(w, lit) jw_raw((w), "" lit, sizeof(lit) - 1)

static void jw_leaf(Jw *w, json_t *leaf) {
  if (!w->rc && (!leaf || json_dump_callback(leaf, w->put, w->arg, JSON_ENCODE_ANY))) w->rc = -1;
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

static void jw_str_leaf(Jw *w, const char *t, size_t n) {
  if (!leaf_str) leaf_str = json_string("");
  if (!leaf_str || json_string_setn_nocheck(leaf_str, t, n))
    w->rc = -1;
  else
    jw_leaf(w, leaf_str);
}

/* Text t (n bytes) as a JSON string, invalid UTF-8 replaced (invariant 3).
 * Printable ASCII other than '"' and '\\' is what jansson writes unchanged
 * (without JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH), so text of nothing else
 * (names, numbers, most values) is copied between quotes; any other text
 * goes to jansson. */
static void jw_text(Jw *w, const char *t, size_t n) {
  const unsigned char *p = (const unsigned char *)t, *end = p + n;
  while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') p++;
  if (p == end) {
    JW(w, "\"");
    jw_raw(w, t, n);
    JW(w, "\"");
    return;
  }
  int k;
  while (p < end && (k = utf8_seq(p, end)) > 0) p += k;
  if (p == end) {
    jw_str_leaf(w, t, n);
    return;
  }
  size_t o = (size_t)(p - (const unsigned char *)t);
  char *buf = malloc(n * 3 + 1);
  if (!buf) {
    w->rc = -1;
    return;
  }
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
  jw_str_leaf(w, buf, o);
  free(buf);
}

static void jw_str_or_null(Jw *w, const char *s) {
  if (s)
    jw_text(w, s, strlen(s));
  else
    JW(w, "null");
}

/* x in decimal (no escaping needed), quoted as the spec's integers are. */
static void jw_int(Jw *w, int64_t x, int quoted) {
  char buf[24], *p = buf + sizeof buf;
  uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  if (quoted) *--p = '"';
  do *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (x < 0) *--p = '-';
  if (quoted) *--p = '"';
  jw_raw(w, p, (size_t)(buf + sizeof buf - p));
}

static void jw_real(Jw *w, double d) {
  if (!leaf_real) leaf_real = json_real(0);
  if (!leaf_real || json_real_set(leaf_real, d))
    w->rc = -1;
  else
    jw_leaf(w, leaf_real);
}

static void jw_value(Jw *w, const HValue *v) {
  switch (v->type) {
    case HV_INTEGER:
      JW(w, "{\"type\":\"integer\",\"value\":");
      jw_int(w, v->i, 1);
      JW(w, "}");
      return;
    case HV_FLOAT: {
      double d = v->d;
      if (isnan(d)) break;
      if (isinf(d)) d = d > 0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
      JW(w, "{\"type\":\"float\",\"value\":");
      jw_real(w, d);
      JW(w, "}");
      return;
    }
    case HV_TEXT:
      JW(w, "{\"type\":\"text\",\"value\":");
      jw_text(w, v->p, v->n);
      JW(w, "}");
      return;
    case HV_BLOB: {
      char *enc = b64_encode((const unsigned char *)v->p, v->n);
      JW(w, "{\"type\":\"blob\",\"base64\":\"");
      if (enc) /* base64's alphabet needs no escaping */
        jw_raw(w, enc, strlen(enc));
      else
        w->rc = -1;
      JW(w, "\"}");
      free(enc);
      return;
    }
    default:
      break;
  }
  JW(w, "{\"type\":\"null\"}");
}

static void jw_row(Jw *w, const HRow *r) {
  JW(w, "[");
  for (size_t i = 0; i < r->n; i++) {
    if (i) JW(w, ",");
    jw_value(w, &r->v[i]);
  }
  JW(w, "]");
}

static void jw_cols(Jw *w, const HCol *c, size_t n) {
  JW(w, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) JW(w, ",");
    JW(w, "{\"name\":");
    jw_str_or_null(w, c[i].name);
    JW(w, ",\"decltype\":");
    jw_str_or_null(w, c[i].decltype);
    JW(w, "}");
  }
  JW(w, "]");
}

static void jw_error(Jw *w, const HErr *e) {
  JW(w, "{\"message\":");
  jw_text(w, e ? e->message : "out of memory", strlen(e ? e->message : "out of memory"));
  JW(w, ",\"code\":");
  jw_str_or_null(w, e ? e->code : "SQLITE_NOMEM");
  JW(w, "}");
}

/* ,"affected_row_count":N,"last_insert_rowid":"R" */
static void jw_counts(Jw *w, const HResult *r) {
  JW(w, ",\"affected_row_count\":");
  jw_int(w, r->affected, 0);
  JW(w, ",\"last_insert_rowid\":");
  jw_int(w, r->rowid, 1);
}

static void jw_result(Jw *w, const HResult *r) {
  JW(w, "{\"cols\":");
  jw_cols(w, r->cols, r->n_cols);
  JW(w, ",\"rows\":[");
  for (size_t i = 0; i < r->n_rows; i++) {
    if (i) JW(w, ",");
    jw_row(w, &r->rows[i]);
  }
  JW(w, "]");
  jw_counts(w, r);
  JW(w, "}");
}

static void jw_batch(Jw *w, const HBatchResult *b) {
  JW(w, "{\"step_results\":[");
  for (size_t i = 0; i < b->n; i++) {
    if (i) JW(w, ",");
    if (b->results[i])
      jw_result(w, b->results[i]);
    else
      JW(w, "null");
  }
  JW(w, "],\"step_errors\":[");
  for (size_t i = 0; i < b->n; i++) {
    if (i) JW(w, ",");
    if (b->errors[i])
      jw_error(w, b->errors[i]);
    else
      JW(w, "null");
  }
  JW(w, "]}");
}

static void jw_bool(Jw *w, int b) {
  if (b)
    JW(w, "true");
  else
    JW(w, "false");
}

static void jw_describe(Jw *w, const HDescribe *d) {
  JW(w, "{\"params\":[");
  for (size_t i = 0; i < d->n_params; i++) {
    if (i) JW(w, ",");
    JW(w, "{\"name\":");
    jw_str_or_null(w, d->params[i]);
    JW(w, "}");
  }
  JW(w, "],\"cols\":");
  jw_cols(w, d->cols, d->n_cols);
  JW(w, ",\"is_explain\":");
  jw_bool(w, d->is_explain);
  JW(w, ",\"is_readonly\":");
  jw_bool(w, d->is_readonly);
  JW(w, "}");
}

static void jw_entry(Jw *w, const HEntry *e) {
  switch (e->type) {
    case HE_STEP_BEGIN:
      JW(w, "{\"type\":\"step_begin\",\"step\":");
      jw_int(w, e->step, 0);
      JW(w, ",\"cols\":");
      jw_cols(w, e->res->cols, e->res->n_cols);
      break;
    case HE_ROW:
      JW(w, "{\"type\":\"row\",\"row\":");
      jw_row(w, &e->res->rows[e->row]);
      break;
    case HE_STEP_END:
      JW(w, "{\"type\":\"step_end\"");
      jw_counts(w, e->res);
      break;
    case HE_STEP_ERROR:
      JW(w, "{\"type\":\"step_error\",\"step\":");
      jw_int(w, e->step, 0);
      JW(w, ",\"error\":");
      jw_error(w, e->err);
      break;
    default:
      JW(w, "{\"type\":\"error\",\"error\":");
      jw_error(w, e->err);
  }
  JW(w, "}");
}

static void jw_resp(Jw *w, const HResp *r) {
  const char *name = hreq_name(r->type); /* an ASCII identifier: no escapes */
  JW(w, "{\"type\":\"");
  jw_raw(w, name, strlen(name));
  JW(w, "\"");
  if (r->result || r->batch || r->describe) JW(w, ",\"result\":");
  if (r->result) jw_result(w, r->result);
  if (r->batch) jw_batch(w, r->batch);
  if (r->describe) jw_describe(w, r->describe);
  if (r->type == HQ_GET_AUTOCOMMIT) {
    JW(w, ",\"is_autocommit\":");
    jw_bool(w, r->flag);
  }
  if (r->type == HQ_FETCH_CURSOR) {
    JW(w, ",\"entries\":[");
    for (size_t i = 0; i < r->n_entries; i++) {
      if (i) JW(w, ",");
      jw_entry(w, &r->entries[i]);
    }
    JW(w, "],\"done\":");
    jw_bool(w, r->flag);
  }
  JW(w, "}");
}

static int j_pipeline(const char *baton, const HResultItem *items, size_t n, PutFn put, void *arg) {
  Jw w = {put, arg, 0};
  JW(&w, "{\"baton\":");
  jw_str_or_null(&w, baton);
  JW(&w, ",\"base_url\":null,\"results\":[");
  for (size_t i = 0; i < n; i++) {
    if (i) JW(&w, ",");
    if (items[i].ok) {
      JW(&w, "{\"type\":\"ok\",\"response\":");
      jw_resp(&w, items[i].ok);
    } else {
      JW(&w, "{\"type\":\"error\",\"error\":");
      jw_error(&w, items[i].err);
    }
    JW(&w, "}");
  }
  JW(&w, "]}");
  return w.rc;
}

static int j_server_msg(HServerMsgType type, int64_t id, const HResp *ok, const HErr *err,
                        PutFn put, void *arg) {
  Jw w = {put, arg, 0};
  switch (type) {
    case HS_HELLO_OK:
      JW(&w, "{\"type\":\"hello_ok\"}");
      break;
    case HS_HELLO_ERROR:
      JW(&w, "{\"type\":\"hello_error\",\"error\":");
      jw_error(&w, err);
      JW(&w, "}");
      break;
    default:
      if (type == HS_RESPONSE_OK)
        JW(&w, "{\"type\":\"response_ok\",\"request_id\":");
      else
        JW(&w, "{\"type\":\"response_error\",\"request_id\":");
      jw_int(&w, id, 0);
      if (type == HS_RESPONSE_OK) {
        JW(&w, ",\"response\":");
        jw_resp(&w, ok);
      } else {
        JW(&w, ",\"error\":");
        jw_error(&w, err);
      }
      JW(&w, "}");
  }
  return w.rc;
}

static int j_cursor_head(const char *baton, PutFn put, void *arg) {
  Jw w = {put, arg, 0};
  JW(&w, "{\"baton\":");
  jw_str_or_null(&w, baton);
  JW(&w, ",\"base_url\":null}\n");
  return w.rc;
}

static int j_cursor_entry(const HEntry *e, PutFn put, void *arg) {
  Jw w = {put, arg, 0};
  jw_entry(&w, e);
  JW(&w, "\n");
  return w.rc;
}

int hjson_error(const HErr *e, PutFn put, void *arg) {
  Jw w = {put, arg, 0};
  jw_error(&w, e);
  return w.rc;
}

void hjson_shutdown(void) {
  json_decref(leaf_str);
  json_decref(leaf_real);
  leaf_str = leaf_real = NULL;
}

const Codec hjson_codec = {
    "application/json", j_body,        j_client_msg,   j_pipeline,
    j_server_msg,       j_cursor_head, j_cursor_entry,
};
