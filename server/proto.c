/*
 * proto.c -- Hrana 3's Protobuf encoding (POST /v3-protobuf/pipeline and
 * /v3-protobuf/cursor, the WebSocket subprotocol hrana3-protobuf), as a
 * translation to and from the JSON encoding's trees.
 *
 * The requests are run by hrana.c and net.c on one internal form, the
 * jansson tree of the spec's JSON encoding: a decoded Protobuf message
 * (protoc-c's code for the schema in server/proto/, generated into the build
 * folder) becomes the tree a JSON client would have sent, and a result tree
 * becomes the Protobuf message, so the two encodings share every line of
 * request handling and cannot drift apart. The envelope messages whose
 * oneof field names are the JSON "type" names (requests, responses) are
 * mapped by protobuf-c's descriptors; the structured ones (values, batches,
 * conditions, results, cursor entries) by hand.
 *
 * Invariants:
 *  1. A message nested deeper than MAX_DEPTH is refused before it is
 *     unpacked (protobuf-c recurses without a limit).
 *  2. What an encoder builds lives in one Arena freed when the message is
 *     packed; strings point into the borrowed tree, which outlives it.
 *  3. Fields the spec's proto3 schema has without `optional` read as their
 *     default when absent (proto3 omits defaults), `optional` ones as absent.
 */
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>

#include "hrana.pb-c.h"
#include "hrana_http.pb-c.h"
#include "hrana_ws.pb-c.h"
#include "server.h"

#define MAX_DEPTH 64

/* ---- nesting depth, checked on the wire ---- */

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

/* Walk the bytes of a message of type d: 0 when no embedded message is
 * deeper than MAX_DEPTH (and the framing holds), -1 otherwise. */
static int depth_ok(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
                    int depth) {
  if (depth > MAX_DEPTH) return -1;
  while (p < end) {
    uint64_t key, n;
    if (varint(&p, end, &key)) return -1;
    switch (key & 7) {
      case 0:
        if (varint(&p, end, &n)) return -1;
        break;
      case 1:
      case 5: {
        size_t k = (key & 7) == 1 ? 8 : 4;
        if ((size_t)(end - p) < k) return -1;
        p += k;
        break;
      }
      case 2: {
        if (varint(&p, end, &n) || n > (uint64_t)(end - p)) return -1;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && depth_ok(f->descriptor, p, p + n, depth + 1))
          return -1;
        p += n;
        break;
      }
      default:
        return -1;
    }
  }
  return p == end ? 0 : -1;
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, const void *buf, size_t n) {
  if (depth_ok(d, buf, (const uint8_t *)buf + n, 0)) return NULL;
  return protobuf_c_message_unpack(d, NULL, n, buf);
}

/* ---- decoding: Protobuf -> the JSON trees ---- */

static json_t *obj_type(const char *type) {
  json_t *o = json_object();
  json_object_set_new_nocheck(o, "type", json_string_nocheck(type));
  return o;
}

static json_t *dec_value(const Hrana__Value *v) {
  json_t *o;
  switch (v ? v->value_case : HRANA__VALUE__VALUE__NOT_SET) {
    case HRANA__VALUE__VALUE_NULL:
      return obj_type("null");
    case HRANA__VALUE__VALUE_INTEGER:
      o = obj_type("integer");
      json_object_set_new_nocheck(o, "value", json_integer(v->integer));
      return o;
    case HRANA__VALUE__VALUE_FLOAT: /* not finite: no JSON number, so ARGS_INVALID */
      o = obj_type("float");
      json_object_set_new_nocheck(o, "value", json_real(v->float_));
      return o;
    case HRANA__VALUE__VALUE_TEXT:
      o = obj_type("text");
      json_object_set_new_nocheck(o, "value", json_string_nocheck(v->text ? v->text : ""));
      return o;
    case HRANA__VALUE__VALUE_BLOB: {
      char *enc = b64_encode(v->blob.data, v->blob.len);
      o = obj_type("blob");
      json_object_set_new_nocheck(o, "base64", json_string_nocheck(enc ? enc : ""));
      free(enc);
      return o;
    }
    default:
      return json_object(); /* no value: ARGS_INVALID when bound */
  }
}

static json_t *dec_stmt(const Hrana__Stmt *s) {
  json_t *o = json_object(), *args = json_array(), *named = json_array();
  if (s->sql) json_object_set_new_nocheck(o, "sql", json_string_nocheck(s->sql));
  if (s->has_sql_id) json_object_set_new_nocheck(o, "sql_id", json_integer(s->sql_id));
  for (size_t i = 0; i < s->n_args; i++) json_array_append_new(args, dec_value(s->args[i]));
  for (size_t i = 0; i < s->n_named_args; i++) {
    const Hrana__NamedArg *a = s->named_args[i];
    json_t *na = json_object();
    if (a->name) json_object_set_new_nocheck(na, "name", json_string_nocheck(a->name));
    json_object_set_new_nocheck(na, "value", dec_value(a->value));
    json_array_append_new(named, na);
  }
  json_object_set_new_nocheck(o, "args", args);
  json_object_set_new_nocheck(o, "named_args", named);
  if (s->has_want_rows) json_object_set_new_nocheck(o, "want_rows", json_boolean(s->want_rows));
  return o;
}

static json_t *dec_cond(const Hrana__BatchCond *c) {
  json_t *o, *conds;
  const Hrana__BatchCond__CondList *list = NULL;
  switch (c ? c->cond_case : HRANA__BATCH_COND__COND__NOT_SET) {
    case HRANA__BATCH_COND__COND_STEP_OK:
    case HRANA__BATCH_COND__COND_STEP_ERROR:
      o = obj_type(c->cond_case == HRANA__BATCH_COND__COND_STEP_OK ? "ok" : "error");
      json_object_set_new_nocheck(
          o, "step",
          json_integer(c->cond_case == HRANA__BATCH_COND__COND_STEP_OK ? c->step_ok
                                                                       : c->step_error));
      return o;
    case HRANA__BATCH_COND__COND_NOT:
      o = obj_type("not");
      json_object_set_new_nocheck(o, "cond", dec_cond(c->not_));
      return o;
    case HRANA__BATCH_COND__COND_AND:
    case HRANA__BATCH_COND__COND_OR:
      list = c->cond_case == HRANA__BATCH_COND__COND_AND ? c->and_ : c->or_;
      o = obj_type(c->cond_case == HRANA__BATCH_COND__COND_AND ? "and" : "or");
      conds = json_array();
      for (size_t i = 0; list && i < list->n_conds; i++)
        json_array_append_new(conds, dec_cond(list->conds[i]));
      json_object_set_new_nocheck(o, "conds", conds);
      return o;
    case HRANA__BATCH_COND__COND_IS_AUTOCOMMIT:
      return obj_type("is_autocommit");
    default:
      return json_object(); /* BATCH_COND_INVALID when evaluated */
  }
}

static json_t *dec_batch(const Hrana__Batch *b) {
  json_t *o = json_object(), *steps = json_array();
  for (size_t i = 0; i < b->n_steps; i++) {
    const Hrana__BatchStep *st = b->steps[i];
    json_t *js = json_object();
    if (st->condition) json_object_set_new_nocheck(js, "condition", dec_cond(st->condition));
    if (st->stmt) json_object_set_new_nocheck(js, "stmt", dec_stmt(st->stmt));
    json_array_append_new(steps, js);
  }
  json_object_set_new_nocheck(o, "steps", steps);
  return o;
}

/* A request message (the member of a RequestMsg or StreamRequest oneof
 * named `type`): its scalar, string, Stmt and Batch fields under their own
 * names, which are the JSON ones. sql_id is optional beside an optional sql
 * (sequence, describe); every other integer reads 0 when absent. */
static json_t *dec_request(const ProtobufCMessage *m, const char *type) {
  json_t *o = obj_type(type);
  const ProtobufCMessageDescriptor *d = m->descriptor;
  int sql_id_optional = strcmp(type, "store_sql") && strcmp(type, "close_sql");
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const char *at = (const char *)m + f->offset;
    int has = f->quantifier_offset &&
              *(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset);
    json_t *v = NULL;
    switch (f->type) {
      case PROTOBUF_C_TYPE_INT32:
      case PROTOBUF_C_TYPE_UINT32:
        if (!has && sql_id_optional && !strcmp(f->name, "sql_id")) break;
        v = json_integer(f->type == PROTOBUF_C_TYPE_INT32 ? (json_int_t) * (const int32_t *)at
                                                          : (json_int_t) * (const uint32_t *)at);
        break;
      case PROTOBUF_C_TYPE_STRING:
        if (*(char *const *)at) v = json_string_nocheck(*(char *const *)at);
        break;
      case PROTOBUF_C_TYPE_MESSAGE: {
        const void *sub = *(const void *const *)at;
        if (sub && f->descriptor == &hrana__stmt__descriptor) v = dec_stmt(sub);
        if (sub && f->descriptor == &hrana__batch__descriptor) v = dec_batch(sub);
        break;
      }
      default:
        break;
    }
    if (v) json_object_set_new_nocheck(o, f->name, v);
  }
  return o;
}

/* The member set in the oneof whose case is at case_off of m: its request
 * tree, or an object without a type (an unknown request) when none is. */
static json_t *dec_oneof_request(const ProtobufCMessage *m, size_t case_off) {
  uint32_t id = *(const uint32_t *)((const char *)m + case_off);
  const ProtobufCFieldDescriptor *f =
      id ? protobuf_c_message_descriptor_get_field(m->descriptor, id) : NULL;
  const ProtobufCMessage *sub =
      f ? *(const ProtobufCMessage *const *)((const char *)m + f->offset) : NULL;
  return sub ? dec_request(sub, f->name) : json_object();
}

json_t *proto_http_body(const void *buf, size_t n, int cursor) {
  json_t *o = json_object();
  if (cursor) {
    Hrana__Http__CursorReqBody *b =
        (Hrana__Http__CursorReqBody *)unpack(&hrana__http__cursor_req_body__descriptor, buf, n);
    if (!b) goto bad;
    json_object_set_new_nocheck(o, "baton", b->baton ? json_string_nocheck(b->baton) : json_null());
    if (b->batch) json_object_set_new_nocheck(o, "batch", dec_batch(b->batch));
    hrana__http__cursor_req_body__free_unpacked(b, NULL);
    return o;
  }
  Hrana__Http__PipelineReqBody *b =
      (Hrana__Http__PipelineReqBody *)unpack(&hrana__http__pipeline_req_body__descriptor, buf, n);
  if (!b) goto bad;
  json_t *reqs = json_array();
  json_object_set_new_nocheck(o, "baton", b->baton ? json_string_nocheck(b->baton) : json_null());
  for (size_t i = 0; i < b->n_requests; i++)
    json_array_append_new(reqs,
                          dec_oneof_request(&b->requests[i]->base,
                                            offsetof(Hrana__Http__StreamRequest, request_case)));
  json_object_set_new_nocheck(o, "requests", reqs);
  hrana__http__pipeline_req_body__free_unpacked(b, NULL);
  return o;
bad:
  json_decref(o);
  return NULL;
}

json_t *proto_ws_client_msg(const void *buf, size_t n) {
  Hrana__Ws__ClientMsg *m =
      (Hrana__Ws__ClientMsg *)unpack(&hrana__ws__client_msg__descriptor, buf, n);
  json_t *o = NULL;
  if (!m) return NULL;
  if (m->msg_case == HRANA__WS__CLIENT_MSG__MSG_HELLO && m->hello) {
    o = obj_type("hello");
    json_object_set_new_nocheck(o, "jwt",
                                m->hello->jwt ? json_string_nocheck(m->hello->jwt) : json_null());
  } else if (m->msg_case == HRANA__WS__CLIENT_MSG__MSG_REQUEST && m->request) {
    o = obj_type("request");
    json_object_set_new_nocheck(o, "request_id", json_integer(m->request->request_id));
    json_object_set_new_nocheck(
        o, "request",
        dec_oneof_request(&m->request->base, offsetof(Hrana__Ws__RequestMsg, request_case)));
  }
  hrana__ws__client_msg__free_unpacked(m, NULL);
  return o ? o : json_object(); /* no known message: a protocol error */
}

/* ---- encoding: the JSON trees -> Protobuf ---- */

/* Everything one encoding builds; freed together (invariant 2). */
typedef struct Chunk {
  struct Chunk *next;
  size_t used, cap;
  max_align_t data[];
} Chunk;
typedef struct Arena {
  Chunk *head;
  int failed;
} Arena;

static void *arena_alloc(Arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  Chunk *c = a->head;
  if (!c || c->used + n > c->cap) {
    size_t cap = n > 8192 ? n : 8192;
    if (!(c = malloc(sizeof *c + cap))) {
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

static void arena_free(Arena *a) {
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
}

/* A new message of type d (initialized), or NULL (a->failed). */
static void *new_msg(Arena *a, const ProtobufCMessageDescriptor *d) {
  void *m = arena_alloc(a, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

/* An array of n pointers (NULL when n is 0). */
static void **new_ptrs(Arena *a, size_t n) { return n ? arena_alloc(a, n * sizeof(void *)) : NULL; }

/* The tree's string field `key`, or NULL: borrowed from the tree. */
static char *str_of(json_t *o, const char *key) {
  return (char *)json_string_value(json_object_get(o, key));
}

static Hrana__Error *enc_error(Arena *a, json_t *e) {
  Hrana__Error *m = new_msg(a, &hrana__error__descriptor);
  if (!m) return NULL;
  m->message = str_of(e, "message");
  if (!m->message) m->message = "";
  m->code = str_of(e, "code");
  return m;
}

static Hrana__Value *enc_value(Arena *a, json_t *v) {
  Hrana__Value *m = new_msg(a, &hrana__value__descriptor);
  const char *type = str_of(v, "type");
  if (!m || !type) return m;
  json_t *val = json_object_get(v, "value");
  if (!strcmp(type, "integer")) {
    m->value_case = HRANA__VALUE__VALUE_INTEGER;
    m->integer = strtoll(json_string_value(val) ? json_string_value(val) : "0", NULL, 10);
  } else if (!strcmp(type, "float")) {
    m->value_case = HRANA__VALUE__VALUE_FLOAT;
    m->float_ = json_number_value(val);
  } else if (!strcmp(type, "text")) {
    m->value_case = HRANA__VALUE__VALUE_TEXT;
    m->text = (char *)(json_string_value(val) ? json_string_value(val) : "");
  } else if (!strcmp(type, "blob")) {
    json_t *b = json_object_get(v, "base64");
    unsigned char *data = NULL;
    long n =
        b64_decode(json_string_value(b) ? json_string_value(b) : "", json_string_length(b), &data);
    m->value_case = HRANA__VALUE__VALUE_BLOB;
    m->blob.len = n > 0 ? (size_t)n : 0;
    m->blob.data = m->blob.len ? arena_alloc(a, m->blob.len) : NULL;
    if (m->blob.data) memcpy(m->blob.data, data, m->blob.len);
    free(data);
  } else {
    m->value_case = HRANA__VALUE__VALUE_NULL;
    m->null = new_msg(a, &hrana__value__null__descriptor);
  }
  return m;
}

static Hrana__Row *enc_row(Arena *a, json_t *vals) {
  Hrana__Row *m = new_msg(a, &hrana__row__descriptor);
  if (!m) return NULL;
  m->n_values = json_array_size(vals);
  m->values = (Hrana__Value **)new_ptrs(a, m->n_values);
  for (size_t i = 0; m->values && i < m->n_values; i++)
    m->values[i] = enc_value(a, json_array_get(vals, i));
  return m;
}

static Hrana__Col **enc_cols(Arena *a, json_t *cols, size_t *n) {
  *n = json_array_size(cols);
  Hrana__Col **v = (Hrana__Col **)new_ptrs(a, *n);
  for (size_t i = 0; v && i < *n; i++) {
    json_t *c = json_array_get(cols, i);
    if (!(v[i] = new_msg(a, &hrana__col__descriptor))) break;
    v[i]->name = str_of(c, "name");
    v[i]->decltype = str_of(c, "decltype");
  }
  return v;
}

/* affected_row_count and last_insert_rowid ("123" or null) of a tree. */
static void enc_counts(json_t *o, protobuf_c_boolean *has_arc, uint64_t *arc,
                       protobuf_c_boolean *has_rowid, int64_t *rowid) {
  *has_arc = 1;
  *arc = (uint64_t)json_integer_value(json_object_get(o, "affected_row_count"));
  const char *r = str_of(o, "last_insert_rowid");
  *has_rowid = r != NULL;
  *rowid = r ? strtoll(r, NULL, 10) : 0;
}

static Hrana__StmtResult *enc_stmt_result(Arena *a, json_t *r) {
  Hrana__StmtResult *m = new_msg(a, &hrana__stmt_result__descriptor);
  if (!m) return NULL;
  json_t *rows = json_object_get(r, "rows");
  m->cols = enc_cols(a, json_object_get(r, "cols"), &m->n_cols);
  m->n_rows = json_array_size(rows);
  m->rows = (Hrana__Row **)new_ptrs(a, m->n_rows);
  for (size_t i = 0; m->rows && i < m->n_rows; i++)
    m->rows[i] = enc_row(a, json_array_get(rows, i));
  enc_counts(r, &m->has_affected_row_count, &m->affected_row_count, &m->has_last_insert_rowid,
             &m->last_insert_rowid);
  return m;
}

/* A map<uint32, V> field of a BatchResult from an array with nulls (index
 * -> element): an entry (of type d: key, value) for each element that is
 * not null, its value made by enc. Returns the entries, *n their count. */
static void **enc_step_map(Arena *a, json_t *arr, const ProtobufCMessageDescriptor *d,
                           void *(*enc)(Arena *, json_t *), size_t *n) {
  const ProtobufCFieldDescriptor *key = &d->fields[0], *val = &d->fields[1];
  void **v = new_ptrs(a, json_array_size(arr));
  *n = 0;
  for (size_t i = 0; v && i < json_array_size(arr); i++) {
    json_t *x = json_array_get(arr, i);
    char *e;
    if (json_is_null(x) || !(e = new_msg(a, d))) continue;
    *(protobuf_c_boolean *)(e + key->quantifier_offset) = 1;
    *(uint32_t *)(e + key->offset) = (uint32_t)i;
    *(void **)(e + val->offset) = enc(a, x);
    v[(*n)++] = e;
  }
  return v;
}

static void *enc_stmt_result_v(Arena *a, json_t *r) { return enc_stmt_result(a, r); }
static void *enc_error_v(Arena *a, json_t *e) { return enc_error(a, e); }

static Hrana__BatchResult *enc_batch_result(Arena *a, json_t *r) {
  Hrana__BatchResult *m = new_msg(a, &hrana__batch_result__descriptor);
  if (!m) return NULL;
  m->step_results = (Hrana__BatchResult__StepResultsEntry **)enc_step_map(
      a, json_object_get(r, "step_results"), &hrana__batch_result__step_results_entry__descriptor,
      enc_stmt_result_v, &m->n_step_results);
  m->step_errors = (Hrana__BatchResult__StepErrorsEntry **)enc_step_map(
      a, json_object_get(r, "step_errors"), &hrana__batch_result__step_errors_entry__descriptor,
      enc_error_v, &m->n_step_errors);
  return m;
}

static Hrana__DescribeResult *enc_describe_result(Arena *a, json_t *r) {
  Hrana__DescribeResult *m = new_msg(a, &hrana__describe_result__descriptor);
  json_t *params = json_object_get(r, "params"), *cols = json_object_get(r, "cols");
  if (!m) return NULL;
  m->n_params = json_array_size(params);
  m->params = (Hrana__DescribeParam **)new_ptrs(a, m->n_params);
  for (size_t i = 0; m->params && i < m->n_params; i++)
    if ((m->params[i] = new_msg(a, &hrana__describe_param__descriptor)))
      m->params[i]->name = str_of(json_array_get(params, i), "name");
  m->n_cols = json_array_size(cols);
  m->cols = (Hrana__DescribeCol **)new_ptrs(a, m->n_cols);
  for (size_t i = 0; m->cols && i < m->n_cols; i++) {
    json_t *c = json_array_get(cols, i);
    if (!(m->cols[i] = new_msg(a, &hrana__describe_col__descriptor))) break;
    m->cols[i]->name = str_of(c, "name") ? str_of(c, "name") : "";
    m->cols[i]->decltype = str_of(c, "decltype");
  }
  m->has_is_explain = m->has_is_readonly = 1;
  m->is_explain = json_is_true(json_object_get(r, "is_explain"));
  m->is_readonly = json_is_true(json_object_get(r, "is_readonly"));
  return m;
}

static Hrana__CursorEntry *enc_cursor_entry(Arena *a, json_t *e) {
  Hrana__CursorEntry *m = new_msg(a, &hrana__cursor_entry__descriptor);
  const char *type = str_of(e, "type");
  if (!m || !type) return m;
  if (!strcmp(type, "step_begin")) {
    Hrana__StepBeginEntry *b = new_msg(a, &hrana__step_begin_entry__descriptor);
    if (!b) return m;
    b->has_step = 1;
    b->step = (uint32_t)json_integer_value(json_object_get(e, "step"));
    b->cols = enc_cols(a, json_object_get(e, "cols"), &b->n_cols);
    m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_BEGIN;
    m->step_begin = b;
  } else if (!strcmp(type, "step_end")) {
    Hrana__StepEndEntry *s = new_msg(a, &hrana__step_end_entry__descriptor);
    if (!s) return m;
    enc_counts(e, &s->has_affected_row_count, &s->affected_row_count, &s->has_last_insert_rowid,
               &s->last_insert_rowid);
    m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_END;
    m->step_end = s;
  } else if (!strcmp(type, "step_error")) {
    Hrana__StepErrorEntry *s = new_msg(a, &hrana__step_error_entry__descriptor);
    if (!s) return m;
    s->has_step = 1;
    s->step = (uint32_t)json_integer_value(json_object_get(e, "step"));
    s->error = enc_error(a, json_object_get(e, "error"));
    m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_ERROR;
    m->step_error = s;
  } else if (!strcmp(type, "row")) {
    m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_ROW;
    m->row = enc_row(a, json_object_get(e, "row"));
  } else {
    m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_ERROR;
    m->error = enc_error(a, json_object_get(e, "error"));
  }
  return m;
}

/* Set the member of m's oneof named after the response tree's type (a
 * ResponseOkMsg's or a StreamResponse's), filling its fields from the tree:
 * result (a StmtResult, BatchResult or DescribeResult), entries, and the
 * booleans done and is_autocommit. */
static void enc_response(Arena *a, ProtobufCMessage *m, json_t *resp) {
  const char *type = str_of(resp, "type");
  const ProtobufCFieldDescriptor *f =
      type ? protobuf_c_message_descriptor_get_field_by_name(m->descriptor, type) : NULL;
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return;
  ProtobufCMessage *sub = new_msg(a, f->descriptor);
  if (!sub) return;
  const ProtobufCMessageDescriptor *d = f->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *g = &d->fields[i];
    char *at = (char *)sub + g->offset;
    json_t *v = json_object_get(resp, g->name);
    if (!v) continue;
    if (g->type == PROTOBUF_C_TYPE_BOOL) {
      *(protobuf_c_boolean *)at = json_is_true(v);
      *(protobuf_c_boolean *)((char *)sub + g->quantifier_offset) = 1;
    } else if (g->descriptor == &hrana__stmt_result__descriptor) {
      *(void **)at = enc_stmt_result(a, v);
    } else if (g->descriptor == &hrana__batch_result__descriptor) {
      *(void **)at = enc_batch_result(a, v);
    } else if (g->descriptor == &hrana__describe_result__descriptor) {
      *(void **)at = enc_describe_result(a, v);
    } else if (g->descriptor == &hrana__cursor_entry__descriptor) {
      size_t n = json_array_size(v);
      Hrana__CursorEntry **es = (Hrana__CursorEntry **)new_ptrs(a, n);
      for (size_t k = 0; es && k < n; k++) es[k] = enc_cursor_entry(a, json_array_get(v, k));
      *(size_t *)((char *)sub + g->quantifier_offset) = es ? n : 0;
      *(void **)at = es;
    }
  }
  *(uint32_t *)((char *)m + f->quantifier_offset) = f->id;
  *(void **)((char *)m + f->offset) = sub;
}

static ProtobufCMessage *enc_pipeline_resp(Arena *a, json_t *j) {
  Hrana__Http__PipelineRespBody *m = new_msg(a, &hrana__http__pipeline_resp_body__descriptor);
  json_t *results = json_object_get(j, "results");
  if (!m) return NULL;
  m->baton = str_of(j, "baton");
  m->base_url = str_of(j, "base_url");
  m->n_results = json_array_size(results);
  m->results = (Hrana__Http__StreamResult **)new_ptrs(a, m->n_results);
  for (size_t i = 0; m->results && i < m->n_results; i++) {
    json_t *r = json_array_get(results, i);
    Hrana__Http__StreamResult *sr = new_msg(a, &hrana__http__stream_result__descriptor);
    if (!(m->results[i] = sr)) break;
    json_t *resp = json_object_get(r, "response");
    if (resp) {
      Hrana__Http__StreamResponse *ok = new_msg(a, &hrana__http__stream_response__descriptor);
      if (ok) enc_response(a, &ok->base, resp);
      sr->result_case = HRANA__HTTP__STREAM_RESULT__RESULT_OK;
      sr->ok = ok;
    } else {
      sr->result_case = HRANA__HTTP__STREAM_RESULT__RESULT_ERROR;
      sr->error = enc_error(a, json_object_get(r, "error"));
    }
  }
  return &m->base;
}

static ProtobufCMessage *enc_server_msg(Arena *a, json_t *j) {
  Hrana__Ws__ServerMsg *m = new_msg(a, &hrana__ws__server_msg__descriptor);
  const char *type = str_of(j, "type");
  if (!m || !type) return NULL;
  int32_t id = (int32_t)json_integer_value(json_object_get(j, "request_id"));
  if (!strcmp(type, "hello_ok")) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_HELLO_OK;
    m->hello_ok = new_msg(a, &hrana__ws__hello_ok_msg__descriptor);
  } else if (!strcmp(type, "hello_error")) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_HELLO_ERROR;
    if ((m->hello_error = new_msg(a, &hrana__ws__hello_error_msg__descriptor)))
      m->hello_error->error = enc_error(a, json_object_get(j, "error"));
  } else if (!strcmp(type, "response_ok")) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_RESPONSE_OK;
    if ((m->response_ok = new_msg(a, &hrana__ws__response_ok_msg__descriptor))) {
      m->response_ok->has_request_id = 1;
      m->response_ok->request_id = id;
      enc_response(a, &m->response_ok->base, json_object_get(j, "response"));
    }
  } else {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_RESPONSE_ERROR;
    if ((m->response_error = new_msg(a, &hrana__ws__response_error_msg__descriptor))) {
      m->response_error->has_request_id = 1;
      m->response_error->request_id = id;
      m->response_error->error = enc_error(a, json_object_get(j, "error"));
    }
  }
  return &m->base;
}

static ProtobufCMessage *enc_cursor_head(Arena *a, json_t *j) {
  Hrana__Http__CursorRespBody *m = new_msg(a, &hrana__http__cursor_resp_body__descriptor);
  if (!m) return NULL;
  m->baton = str_of(j, "baton");
  m->base_url = str_of(j, "base_url");
  return &m->base;
}

int proto_encode(ProtoKind kind, json_t *j, int (*put)(const char *, size_t, void *), void *arg) {
  Arena a = {0};
  ProtobufCMessage *m = kind == PROTO_PIPELINE_RESP ? enc_pipeline_resp(&a, j)
                        : kind == PROTO_SERVER_MSG  ? enc_server_msg(&a, j)
                        : kind == PROTO_CURSOR_HEAD ? enc_cursor_head(&a, j)
                                                    : (ProtobufCMessage *)enc_cursor_entry(&a, j);
  size_t size = m && !a.failed ? protobuf_c_message_get_packed_size(m) : 0, k = 0;
  uint8_t *out = m && !a.failed ? arena_alloc(&a, size + 10) : NULL;
  if (out && kind != PROTO_PIPELINE_RESP && kind != PROTO_SERVER_MSG) {
    /* the cursor's framing: a varint length before each message */
    for (uint64_t n = size; k == 0 || n; n >>= 7)
      out[k++] = (uint8_t)((n & 0x7f) | (n >> 7 ? 0x80 : 0));
  }
  /* packed into one flat buffer: protobuf-c's buffer-callback packing
   * appends field by field */
  int rc = out ? put((const char *)out, k + protobuf_c_message_pack(m, out + k), arg) : -1;
  arena_free(&a);
  return rc ? -1 : 0;
}
