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
 *     cannot write (an infinity) becomes the largest finite double.
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

/* A JSON string of text t (n bytes), invalid UTF-8 replaced (invariant 3). */
static json_t *text_string(const char *t, size_t n) {
  const unsigned char *p = (const unsigned char *)t, *end = p + n;
  int k;
  while (p < end && (k = utf8_seq(p, end)) > 0) p += k;
  if (p == end) return json_stringn_nocheck(t, n);
  size_t o = (size_t)(p - (const unsigned char *)t);
  char *buf = malloc(n * 3 + 1);
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

static json_t *str_or_null(const char *s) { return s ? text_string(s, strlen(s)) : json_null(); }

static json_t *enc_value(const HValue *v) {
  switch (v->type) {
    case HV_INTEGER: {
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)v->i);
      return tagged("integer", "value", json_string_nocheck(buf));
    }
    case HV_FLOAT: {
      double d = v->d;
      if (isnan(d)) return tagged("null", NULL, NULL);
      if (isinf(d)) d = d > 0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
      return tagged("float", "value", json_real(d));
    }
    case HV_TEXT:
      return tagged("text", "value", text_string(v->p, v->n));
    case HV_BLOB: {
      char *enc = b64_encode((const unsigned char *)v->p, v->n);
      json_t *o = tagged("blob", "base64", json_string_nocheck(enc ? enc : ""));
      free(enc);
      return o;
    }
    default:
      return tagged("null", NULL, NULL);
  }
}

static json_t *enc_row(const HRow *r) {
  json_t *row = json_array();
  for (size_t i = 0; i < r->n; i++) json_array_append_new(row, enc_value(&r->v[i]));
  return row;
}

static json_t *enc_cols(const HCol *c, size_t n) {
  json_t *cols = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "name", str_or_null(c[i].name));
    json_object_set_new_nocheck(o, "decltype", str_or_null(c[i].decltype));
    json_array_append_new(cols, o);
  }
  return cols;
}

static json_t *enc_error(const HErr *e) {
  if (!e) return json_pack("{s:s,s:s}", "message", "out of memory", "code", "SQLITE_NOMEM");
  json_t *o = json_object();
  json_object_set_new_nocheck(o, "message", text_string(e->message, strlen(e->message)));
  json_object_set_new_nocheck(o, "code", json_string(e->code));
  return o;
}

static void enc_counts(json_t *o, const HResult *r) {
  char rowid[32];
  snprintf(rowid, sizeof rowid, "%lld", (long long)r->rowid);
  json_object_set_new_nocheck(o, "affected_row_count", json_integer(r->affected));
  json_object_set_new_nocheck(o, "last_insert_rowid", json_string_nocheck(rowid));
}

static json_t *enc_result(const HResult *r) {
  json_t *o = json_object(), *rows = json_array();
  for (size_t i = 0; i < r->n_rows; i++) json_array_append_new(rows, enc_row(&r->rows[i]));
  json_object_set_new_nocheck(o, "cols", enc_cols(r->cols, r->n_cols));
  json_object_set_new_nocheck(o, "rows", rows);
  enc_counts(o, r);
  return o;
}

static json_t *enc_batch(const HBatchResult *b) {
  json_t *res = json_array(), *errs = json_array();
  for (size_t i = 0; i < b->n; i++) {
    json_array_append_new(res, b->results[i] ? enc_result(b->results[i]) : json_null());
    json_array_append_new(errs, b->errors[i] ? enc_error(b->errors[i]) : json_null());
  }
  return json_pack("{s:o,s:o}", "step_results", res, "step_errors", errs);
}

static json_t *enc_describe(const HDescribe *d) {
  json_t *params = json_array();
  for (size_t i = 0; i < d->n_params; i++)
    json_array_append_new(params, json_pack("{s:o}", "name", str_or_null(d->params[i])));
  return json_pack("{s:o,s:o,s:b,s:b}", "params", params, "cols", enc_cols(d->cols, d->n_cols),
                   "is_explain", d->is_explain, "is_readonly", d->is_readonly);
}

static json_t *enc_entry(const HEntry *e) {
  json_t *o;
  switch (e->type) {
    case HE_STEP_BEGIN:
      o = tagged("step_begin", "step", json_integer(e->step));
      json_object_set_new_nocheck(o, "cols", enc_cols(e->res->cols, e->res->n_cols));
      return o;
    case HE_ROW:
      return tagged("row", "row", enc_row(&e->res->rows[e->row]));
    case HE_STEP_END:
      o = tagged("step_end", NULL, NULL);
      enc_counts(o, e->res);
      return o;
    case HE_STEP_ERROR:
      o = tagged("step_error", "step", json_integer(e->step));
      json_object_set_new_nocheck(o, "error", enc_error(e->err));
      return o;
    default:
      return tagged("error", "error", enc_error(e->err));
  }
}

static json_t *enc_resp(const HResp *r) {
  json_t *o = tagged(hreq_name(r->type), NULL, NULL);
  if (r->result) json_object_set_new_nocheck(o, "result", enc_result(r->result));
  if (r->batch) json_object_set_new_nocheck(o, "result", enc_batch(r->batch));
  if (r->describe) json_object_set_new_nocheck(o, "result", enc_describe(r->describe));
  if (r->type == HQ_GET_AUTOCOMMIT)
    json_object_set_new_nocheck(o, "is_autocommit", json_boolean(r->flag));
  if (r->type == HQ_FETCH_CURSOR) {
    json_t *es = json_array();
    for (size_t i = 0; i < r->n_entries; i++) json_array_append_new(es, enc_entry(&r->entries[i]));
    json_object_set_new_nocheck(o, "entries", es);
    json_object_set_new_nocheck(o, "done", json_boolean(r->flag));
  }
  return o;
}

/* Dump j (taken) as compact JSON, then `tail` (may be ""). */
static int dump(json_t *j, const char *tail, PutFn put, void *arg) {
  int rc = j ? json_dump_callback(j, put, arg, JSON_COMPACT) : -1;
  json_decref(j);
  return rc || (*tail && put(tail, strlen(tail), arg)) ? -1 : 0;
}

static int j_pipeline(const char *baton, const HResultItem *items, size_t n, PutFn put, void *arg) {
  json_t *results = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "type", json_string_nocheck(items[i].ok ? "ok" : "error"));
    json_object_set_new_nocheck(o, items[i].ok ? "response" : "error",
                                items[i].ok ? enc_resp(items[i].ok) : enc_error(items[i].err));
    json_array_append_new(results, o);
  }
  return dump(json_pack("{s:s?,s:n,s:o}", "baton", baton, "base_url", "results", results), "", put,
              arg);
}

static int j_server_msg(HServerMsgType type, int64_t id, const HResp *ok, const HErr *err,
                        PutFn put, void *arg) {
  static const char *const names[] = {"hello_ok", "hello_error", "response_ok", "response_error"};
  json_t *o = tagged(names[type], NULL, NULL);
  if (type == HS_RESPONSE_OK || type == HS_RESPONSE_ERROR)
    json_object_set_new_nocheck(o, "request_id", json_integer(id));
  if (type == HS_RESPONSE_OK) json_object_set_new_nocheck(o, "response", enc_resp(ok));
  if (type == HS_HELLO_ERROR || type == HS_RESPONSE_ERROR)
    json_object_set_new_nocheck(o, "error", enc_error(err));
  return dump(o, "", put, arg);
}

static int j_cursor_head(const char *baton, PutFn put, void *arg) {
  return dump(json_pack("{s:s,s:n}", "baton", baton, "base_url"), "\n", put, arg);
}

static int j_cursor_entry(const HEntry *e, PutFn put, void *arg) {
  return dump(enc_entry(e), "\n", put, arg);
}

int hjson_error(const HErr *e, PutFn put, void *arg) { return dump(enc_error(e), "", put, arg); }

const Codec hjson_codec = {
    "application/json", j_body,        j_client_msg,   j_pipeline,
    j_server_msg,       j_cursor_head, j_cursor_entry,
};
