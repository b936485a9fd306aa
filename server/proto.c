/*
 * proto.c -- Hrana 3's Protobuf encoding (POST /v3-protobuf/pipeline and
 * /v3-protobuf/cursor, the WebSocket subprotocol hrana3-protobuf):
 * protobuf-c's code for the schema in server/proto/ (generated into the
 * build folder) unpacks a message, which is read into the request
 * structures of server.h; answers are built as protobuf-c messages straight
 * from the result structures and packed. No JSON on either side.
 *
 * The messages whose oneof member names are the requests' names (requests,
 * responses) are read and filled through protobuf-c's descriptors, by field
 * name; the structured ones (values, statements, batches, conditions,
 * results, cursor entries) by hand.
 *
 * Invariants:
 *  1. A message nested deeper than MAX_DEPTH is refused before it is
 *     unpacked (protobuf-c recurses without a limit).
 *  2. The unpacked message lives as long as the request's arena (its done
 *     hook frees it): the request structures borrow its strings and bytes.
 *     What an encoder builds is in the answer's arena, its strings and bytes
 *     borrowed from the results, which outlive the packing.
 *  3. Fields the spec's proto3 schema has without `optional` read as their
 *     default when absent (proto3 omits defaults), `optional` ones as absent.
 *  4. Values keep their bytes: text is a bytes field in our copy of the
 *     schema (the same wire format as the spec's string), so a NUL inside
 *     text travels both ways; floats are any double, as SQLite binds them
 *     (NaN binds as NULL) and stores them (infinities travel as such).
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

static void unpacked_free(void *m) { protobuf_c_message_free_unpacked(m, NULL); }

/* Unpack buf as a message of type d whose life is a's (invariant 2). */
static void *unpack(const ProtobufCMessageDescriptor *d, const void *buf, size_t n, Arena *a) {
  if (depth_ok(d, buf, (const uint8_t *)buf + n, 0)) return NULL;
  ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, buf);
  if (m) {
    a->done = unpacked_free;
    a->done_arg = m;
  }
  return m;
}

/* ---- decoding ---- */

static void dec_value(const Hrana__Value *v, HValue *out) {
  switch (v ? v->value_case : HRANA__VALUE__VALUE__NOT_SET) {
    case HRANA__VALUE__VALUE_NULL:
      out->type = HV_NULL;
      return;
    case HRANA__VALUE__VALUE_INTEGER:
      out->type = HV_INTEGER;
      out->i = v->integer;
      return;
    case HRANA__VALUE__VALUE_FLOAT:
      out->type = HV_FLOAT;
      out->d = v->float_;
      return;
    case HRANA__VALUE__VALUE_TEXT:
    case HRANA__VALUE__VALUE_BLOB: {
      const ProtobufCBinaryData *b =
          v->value_case == HRANA__VALUE__VALUE_TEXT ? &v->text : &v->blob;
      out->type = v->value_case == HRANA__VALUE__VALUE_TEXT ? HV_TEXT : HV_BLOB;
      out->p = b->data ? (const char *)b->data : "";
      out->n = b->len;
      return;
    }
    default:
      out->type = HV_BAD;
      out->p = "not a Hrana value";
  }
}

static HStmt *dec_stmt(Arena *a, const Hrana__Stmt *s) {
  HStmt *q = s ? arena_alloc(a, sizeof *q) : NULL;
  if (!q) return NULL;
  if (s->sql) {
    q->sql = s->sql;
    q->sql_len = strlen(s->sql);
  }
  q->has_sql_id = s->has_sql_id;
  q->sql_id = s->sql_id;
  q->want_rows = s->has_want_rows ? s->want_rows : 1;
  q->n_args = s->n_args;
  q->args = arena_alloc(a, (s->n_args + 1) * sizeof *q->args);
  q->n_named = s->n_named_args;
  q->named = arena_alloc(a, (s->n_named_args + 1) * sizeof *q->named);
  if (!q->args || !q->named) return NULL;
  for (size_t i = 0; i < s->n_args; i++) dec_value(s->args[i], &q->args[i]);
  for (size_t i = 0; i < s->n_named_args; i++) {
    q->named[i].name = s->named_args[i]->name;
    dec_value(s->named_args[i]->value, &q->named[i].value);
  }
  return q;
}

static void dec_cond(Arena *a, const Hrana__BatchCond *c, HCond *out) {
  const Hrana__BatchCond__CondList *list = NULL;
  out->type = HC_BAD;
  switch (c ? c->cond_case : HRANA__BATCH_COND__COND__NOT_SET) {
    case HRANA__BATCH_COND__COND_STEP_OK:
      out->type = HC_OK;
      out->step = c->step_ok;
      return;
    case HRANA__BATCH_COND__COND_STEP_ERROR:
      out->type = HC_ERROR;
      out->step = c->step_error;
      return;
    case HRANA__BATCH_COND__COND_NOT:
      if (!(out->conds = arena_alloc(a, sizeof *out->conds))) return;
      out->type = HC_NOT;
      out->n = 1;
      dec_cond(a, c->not_, out->conds);
      return;
    case HRANA__BATCH_COND__COND_AND:
    case HRANA__BATCH_COND__COND_OR:
      list = c->cond_case == HRANA__BATCH_COND__COND_AND ? c->and_ : c->or_;
      out->n = list ? list->n_conds : 0;
      if (!(out->conds = arena_alloc(a, (out->n + 1) * sizeof *out->conds))) return;
      out->type = c->cond_case == HRANA__BATCH_COND__COND_AND ? HC_AND : HC_OR;
      for (size_t i = 0; i < out->n; i++) dec_cond(a, list->conds[i], &out->conds[i]);
      return;
    case HRANA__BATCH_COND__COND_IS_AUTOCOMMIT:
      out->type = HC_IS_AUTOCOMMIT;
      return;
    default:
      return;
  }
}

static HBatch *dec_batch(Arena *a, const Hrana__Batch *b) {
  HBatch *out = b ? arena_alloc(a, sizeof *out) : NULL;
  if (!out || !(out->steps = arena_alloc(a, (b->n_steps + 1) * sizeof *out->steps))) return NULL;
  out->n = b->n_steps;
  for (size_t i = 0; i < b->n_steps; i++) {
    const Hrana__BatchStep *st = b->steps[i];
    if (st->condition && (out->steps[i].cond = arena_alloc(a, sizeof(HCond))))
      dec_cond(a, st->condition, out->steps[i].cond);
    out->steps[i].stmt = dec_stmt(a, st->stmt);
  }
  return out;
}

/* A request message m (the member of a RequestMsg or StreamRequest oneof
 * named `name`): its fields read by their names, which are the JSON ones.
 * sql_id is optional beside an optional sql (sequence, describe); every
 * other integer reads 0 when absent (invariant 3). */
static void dec_request(Arena *a, const ProtobufCMessage *m, const char *name, HReq *q) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  HStmt *own = arena_alloc(a, sizeof *own);
  q->name = name;
  q->type = hreq_type(name);
  int sql_id_optional = q->type != HQ_STORE_SQL && q->type != HQ_CLOSE_SQL;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const char *at = (const char *)m + f->offset;
    int has = f->quantifier_offset &&
              *(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset);
    if (f->type == PROTOBUF_C_TYPE_INT32 || f->type == PROTOBUF_C_TYPE_UINT32) {
      int64_t v = f->type == PROTOBUF_C_TYPE_INT32 ? (int64_t) * (const int32_t *)at
                                                   : (int64_t) * (const uint32_t *)at;
      if (!strcmp(f->name, "sql_id")) {
        if (own && (has || !sql_id_optional)) {
          own->has_sql_id = 1;
          own->sql_id = v;
        }
      } else if (!strcmp(f->name, "stream_id")) {
        q->has_stream_id = 1;
        q->stream_id = v;
      } else if (!strcmp(f->name, "cursor_id")) {
        q->has_cursor_id = 1;
        q->cursor_id = v;
      } else if (!strcmp(f->name, "max_count")) {
        q->has_max_count = 1;
        q->max_count = v;
      }
    } else if (f->type == PROTOBUF_C_TYPE_STRING && !strcmp(f->name, "sql")) {
      const char *sql = *(char *const *)at;
      if (own && sql) {
        own->sql = sql;
        own->sql_len = strlen(sql);
      }
    } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
      const void *sub = *(const void *const *)at;
      if (f->descriptor == &hrana__stmt__descriptor) q->stmt = dec_stmt(a, sub);
      if (f->descriptor == &hrana__batch__descriptor) q->batch = dec_batch(a, sub);
    }
  }
  if (q->type != HQ_EXECUTE) q->stmt = own;
}

/* The member set in the oneof whose case is at case_off of m, read into q
 * (no member: a request without a type). */
static void dec_oneof_request(Arena *a, const ProtobufCMessage *m, size_t case_off, HReq *q) {
  uint32_t id = *(const uint32_t *)((const char *)m + case_off);
  const ProtobufCFieldDescriptor *f =
      id ? protobuf_c_message_descriptor_get_field(m->descriptor, id) : NULL;
  const ProtobufCMessage *sub =
      f ? *(const ProtobufCMessage *const *)((const char *)m + f->offset) : NULL;
  if (sub) dec_request(a, sub, f->name, q);
}

static int p_body(const void *buf, size_t n, int cursor, Arena *a, HBody *b) {
  if (cursor) {
    const Hrana__Http__CursorReqBody *m =
        unpack(&hrana__http__cursor_req_body__descriptor, buf, n, a);
    if (!m) {
      b->bad = "the body is not a Protobuf CursorReqBody";
      return -1;
    }
    b->baton = m->baton;
    if (!m->batch) {
      b->bad = "batch must be an object";
      return -1;
    }
    b->batch = dec_batch(a, m->batch);
    return 0;
  }
  const Hrana__Http__PipelineReqBody *m =
      unpack(&hrana__http__pipeline_req_body__descriptor, buf, n, a);
  if (!m) {
    b->bad = "the body is not a Protobuf PipelineReqBody";
    return -1;
  }
  b->baton = m->baton;
  b->n_reqs = m->n_requests;
  if (!(b->reqs = arena_alloc(a, (m->n_requests + 1) * sizeof *b->reqs))) {
    b->bad = "out of memory";
    return -1;
  }
  for (size_t i = 0; i < m->n_requests; i++)
    dec_oneof_request(a, &m->requests[i]->base, offsetof(Hrana__Http__StreamRequest, request_case),
                      &b->reqs[i]);
  return 0;
}

static int p_client_msg(const void *buf, size_t n, Arena *a, HClientMsg *out) {
  const Hrana__Ws__ClientMsg *m = unpack(&hrana__ws__client_msg__descriptor, buf, n, a);
  out->type = HM_NONE;
  if (!m) return -1;
  if (m->msg_case == HRANA__WS__CLIENT_MSG__MSG_HELLO && m->hello) {
    out->type = HM_HELLO;
    out->jwt = m->hello->jwt;
  } else if (m->msg_case == HRANA__WS__CLIENT_MSG__MSG_REQUEST && m->request) {
    out->type = HM_REQUEST;
    out->has_request_id = 1;
    out->request_id = m->request->request_id;
    if ((out->req = arena_alloc(a, sizeof *out->req)))
      dec_oneof_request(a, &m->request->base, offsetof(Hrana__Ws__RequestMsg, request_case),
                        out->req);
  }
  return 0;
}

/* ---- encoding ---- */

/* A new message of type d (initialized), or NULL (a->failed). */
static void *new_msg(Arena *a, const ProtobufCMessageDescriptor *d) {
  void *m = arena_alloc(a, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

/* An array of n pointers (NULL when n is 0). */
static void **new_ptrs(Arena *a, size_t n) { return n ? arena_alloc(a, n * sizeof(void *)) : NULL; }

static Hrana__Error *enc_error(Arena *a, const HErr *e) {
  Hrana__Error *m = new_msg(a, &hrana__error__descriptor);
  if (!m) return NULL;
  m->message = e ? (char *)e->message : "out of memory";
  m->code = e ? (char *)e->code : "SQLITE_NOMEM";
  return m;
}

static Hrana__Value *enc_value(Arena *a, const HValue *v) {
  Hrana__Value *m = new_msg(a, &hrana__value__descriptor);
  if (!m) return NULL;
  switch (v->type) {
    case HV_INTEGER:
      m->value_case = HRANA__VALUE__VALUE_INTEGER;
      m->integer = v->i;
      break;
    case HV_FLOAT:
      m->value_case = HRANA__VALUE__VALUE_FLOAT;
      m->float_ = v->d;
      break;
    case HV_TEXT:
      m->value_case = HRANA__VALUE__VALUE_TEXT;
      m->text.data = (uint8_t *)v->p;
      m->text.len = v->n;
      break;
    case HV_BLOB:
      m->value_case = HRANA__VALUE__VALUE_BLOB;
      m->blob.data = (uint8_t *)v->p;
      m->blob.len = v->n;
      break;
    default:
      m->value_case = HRANA__VALUE__VALUE_NULL;
      m->null = new_msg(a, &hrana__value__null__descriptor);
  }
  return m;
}

static Hrana__Row *enc_row(Arena *a, const HRow *r) {
  Hrana__Row *m = new_msg(a, &hrana__row__descriptor);
  if (!m) return NULL;
  m->values = (Hrana__Value **)new_ptrs(a, r->n);
  m->n_values = m->values ? r->n : 0;
  for (size_t i = 0; i < m->n_values; i++) m->values[i] = enc_value(a, &r->v[i]);
  return m;
}

static Hrana__Col **enc_cols(Arena *a, const HCol *c, size_t nc, size_t *n) {
  Hrana__Col **v = (Hrana__Col **)new_ptrs(a, nc);
  *n = v ? nc : 0;
  for (size_t i = 0; i < *n; i++) {
    if (!(v[i] = new_msg(a, &hrana__col__descriptor))) break;
    v[i]->name = (char *)c[i].name;
    v[i]->decltype = (char *)c[i].decltype;
  }
  return v;
}

/* affected_row_count and last_insert_rowid of a result. */
static void enc_counts(const HResult *r, protobuf_c_boolean *has_arc, uint64_t *arc,
                       protobuf_c_boolean *has_rowid, int64_t *rowid) {
  *has_arc = *has_rowid = 1;
  *arc = (uint64_t)r->affected;
  *rowid = r->rowid;
}

static Hrana__StmtResult *enc_stmt_result(Arena *a, const HResult *r) {
  Hrana__StmtResult *m = new_msg(a, &hrana__stmt_result__descriptor);
  if (!m) return NULL;
  m->cols = enc_cols(a, r->cols, r->n_cols, &m->n_cols);
  m->rows = (Hrana__Row **)new_ptrs(a, r->n_rows);
  m->n_rows = m->rows ? r->n_rows : 0;
  for (size_t i = 0; i < m->n_rows; i++) m->rows[i] = enc_row(a, &r->rows[i]);
  enc_counts(r, &m->has_affected_row_count, &m->affected_row_count, &m->has_last_insert_rowid,
             &m->last_insert_rowid);
  return m;
}

/* A map<uint32, V> field of a BatchResult from per-step pointers (NULL:
 * none): an entry (of type d: key, value) for each one set, its value made
 * by enc. Returns the entries, *n their count. */
static void **enc_step_map(Arena *a, const void *const *per_step, size_t steps,
                           const ProtobufCMessageDescriptor *d, void *(*enc)(Arena *, const void *),
                           size_t *n) {
  const ProtobufCFieldDescriptor *key = &d->fields[0], *val = &d->fields[1];
  void **v = new_ptrs(a, steps);
  *n = 0;
  for (size_t i = 0; v && i < steps; i++) {
    char *e;
    if (!per_step[i] || !(e = new_msg(a, d))) continue;
    *(protobuf_c_boolean *)(e + key->quantifier_offset) = 1;
    *(uint32_t *)(e + key->offset) = (uint32_t)i;
    *(void **)(e + val->offset) = enc(a, per_step[i]);
    v[(*n)++] = e;
  }
  return v;
}

static void *enc_stmt_result_v(Arena *a, const void *r) { return enc_stmt_result(a, r); }
static void *enc_error_v(Arena *a, const void *e) { return enc_error(a, e); }

static Hrana__BatchResult *enc_batch_result(Arena *a, const HBatchResult *r) {
  Hrana__BatchResult *m = new_msg(a, &hrana__batch_result__descriptor);
  if (!m) return NULL;
  m->step_results = (Hrana__BatchResult__StepResultsEntry **)enc_step_map(
      a, (const void *const *)r->results, r->n,
      &hrana__batch_result__step_results_entry__descriptor, enc_stmt_result_v, &m->n_step_results);
  m->step_errors = (Hrana__BatchResult__StepErrorsEntry **)enc_step_map(
      a, (const void *const *)r->errors, r->n, &hrana__batch_result__step_errors_entry__descriptor,
      enc_error_v, &m->n_step_errors);
  return m;
}

static Hrana__DescribeResult *enc_describe_result(Arena *a, const HDescribe *d) {
  Hrana__DescribeResult *m = new_msg(a, &hrana__describe_result__descriptor);
  if (!m) return NULL;
  m->params = (Hrana__DescribeParam **)new_ptrs(a, d->n_params);
  m->n_params = m->params ? d->n_params : 0;
  for (size_t i = 0; i < m->n_params; i++)
    if ((m->params[i] = new_msg(a, &hrana__describe_param__descriptor)))
      m->params[i]->name = (char *)d->params[i];
  m->cols = (Hrana__DescribeCol **)new_ptrs(a, d->n_cols);
  m->n_cols = m->cols ? d->n_cols : 0;
  for (size_t i = 0; i < m->n_cols; i++) {
    if (!(m->cols[i] = new_msg(a, &hrana__describe_col__descriptor))) break;
    m->cols[i]->name = d->cols[i].name ? (char *)d->cols[i].name : "";
    m->cols[i]->decltype = (char *)d->cols[i].decltype;
  }
  m->has_is_explain = m->has_is_readonly = 1;
  m->is_explain = d->is_explain;
  m->is_readonly = d->is_readonly;
  return m;
}

static Hrana__CursorEntry *enc_cursor_entry(Arena *a, const HEntry *e) {
  Hrana__CursorEntry *m = new_msg(a, &hrana__cursor_entry__descriptor);
  if (!m) return NULL;
  switch (e->type) {
    case HE_STEP_BEGIN: {
      Hrana__StepBeginEntry *b = new_msg(a, &hrana__step_begin_entry__descriptor);
      if (!b) return m;
      b->has_step = 1;
      b->step = e->step;
      b->cols = enc_cols(a, e->res->cols, e->res->n_cols, &b->n_cols);
      m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_BEGIN;
      m->step_begin = b;
      break;
    }
    case HE_STEP_END: {
      Hrana__StepEndEntry *s = new_msg(a, &hrana__step_end_entry__descriptor);
      if (!s) return m;
      enc_counts(e->res, &s->has_affected_row_count, &s->affected_row_count,
                 &s->has_last_insert_rowid, &s->last_insert_rowid);
      m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_END;
      m->step_end = s;
      break;
    }
    case HE_STEP_ERROR: {
      Hrana__StepErrorEntry *s = new_msg(a, &hrana__step_error_entry__descriptor);
      if (!s) return m;
      s->has_step = 1;
      s->step = e->step;
      s->error = enc_error(a, e->err);
      m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_STEP_ERROR;
      m->step_error = s;
      break;
    }
    case HE_ROW:
      m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_ROW;
      m->row = enc_row(a, &e->res->rows[e->row]);
      break;
    default:
      m->entry_case = HRANA__CURSOR_ENTRY__ENTRY_ERROR;
      m->error = enc_error(a, e->err);
  }
  return m;
}

/* Set the member of m's oneof named after the response's type (a
 * ResponseOkMsg's or a StreamResponse's), filling its fields: result (a
 * StmtResult, BatchResult or DescribeResult), entries, and the booleans
 * done and is_autocommit. */
static void enc_response(Arena *a, ProtobufCMessage *m, const HResp *r) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, hreq_name(r->type));
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return;
  ProtobufCMessage *sub = new_msg(a, f->descriptor);
  if (!sub) return;
  const ProtobufCMessageDescriptor *d = f->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *g = &d->fields[i];
    char *at = (char *)sub + g->offset;
    if (g->type == PROTOBUF_C_TYPE_BOOL) {
      *(protobuf_c_boolean *)at = r->flag != 0;
      *(protobuf_c_boolean *)((char *)sub + g->quantifier_offset) = 1;
    } else if (g->descriptor == &hrana__stmt_result__descriptor && r->result) {
      *(void **)at = enc_stmt_result(a, r->result);
    } else if (g->descriptor == &hrana__batch_result__descriptor && r->batch) {
      *(void **)at = enc_batch_result(a, r->batch);
    } else if (g->descriptor == &hrana__describe_result__descriptor && r->describe) {
      *(void **)at = enc_describe_result(a, r->describe);
    } else if (g->descriptor == &hrana__cursor_entry__descriptor) {
      Hrana__CursorEntry **es = (Hrana__CursorEntry **)new_ptrs(a, r->n_entries);
      for (size_t k = 0; es && k < r->n_entries; k++) es[k] = enc_cursor_entry(a, &r->entries[k]);
      *(size_t *)((char *)sub + g->quantifier_offset) = es ? r->n_entries : 0;
      *(void **)at = es;
    }
  }
  *(uint32_t *)((char *)m + f->quantifier_offset) = f->id;
  *(void **)((char *)m + f->offset) = sub;
}

/* Pack m (built in a; a is freed) to put, behind its varint length when
 * delimited (the cursor's framing). */
static int pack(Arena *a, const ProtobufCMessage *m, int delimited, PutFn put, void *arg) {
  size_t size = m && !a->failed ? protobuf_c_message_get_packed_size(m) : 0, k = 0;
  uint8_t *out = m && !a->failed ? arena_alloc(a, size + 10) : NULL;
  if (out && delimited)
    for (uint64_t n = size; k == 0 || n; n >>= 7)
      out[k++] = (uint8_t)((n & 0x7f) | (n >> 7 ? 0x80 : 0));
  /* packed into one flat buffer: protobuf-c's buffer-callback packing
   * appends field by field */
  int rc = out ? put((const char *)out, k + protobuf_c_message_pack(m, out + k), arg) : -1;
  arena_free(a);
  return rc ? -1 : 0;
}

static int p_pipeline(const char *baton, const HResultItem *items, size_t n, PutFn put, void *arg) {
  Arena a = {0};
  Hrana__Http__PipelineRespBody *m = new_msg(&a, &hrana__http__pipeline_resp_body__descriptor);
  if (m) {
    m->baton = (char *)baton;
    m->results = (Hrana__Http__StreamResult **)new_ptrs(&a, n);
    m->n_results = m->results ? n : 0;
  }
  for (size_t i = 0; m && i < m->n_results; i++) {
    Hrana__Http__StreamResult *sr = new_msg(&a, &hrana__http__stream_result__descriptor);
    if (!(m->results[i] = sr)) break;
    if (items[i].ok) {
      Hrana__Http__StreamResponse *ok = new_msg(&a, &hrana__http__stream_response__descriptor);
      if (ok) enc_response(&a, &ok->base, items[i].ok);
      sr->result_case = HRANA__HTTP__STREAM_RESULT__RESULT_OK;
      sr->ok = ok;
    } else {
      sr->result_case = HRANA__HTTP__STREAM_RESULT__RESULT_ERROR;
      sr->error = enc_error(&a, items[i].err);
    }
  }
  return pack(&a, m ? &m->base : NULL, 0, put, arg);
}

static int p_server_msg(HServerMsgType type, int64_t id, const HResp *ok, const HErr *err,
                        PutFn put, void *arg) {
  Arena a = {0};
  Hrana__Ws__ServerMsg *m = new_msg(&a, &hrana__ws__server_msg__descriptor);
  if (!m) return pack(&a, NULL, 0, put, arg);
  if (type == HS_HELLO_OK) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_HELLO_OK;
    m->hello_ok = new_msg(&a, &hrana__ws__hello_ok_msg__descriptor);
  } else if (type == HS_HELLO_ERROR) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_HELLO_ERROR;
    if ((m->hello_error = new_msg(&a, &hrana__ws__hello_error_msg__descriptor)))
      m->hello_error->error = enc_error(&a, err);
  } else if (type == HS_RESPONSE_OK) {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_RESPONSE_OK;
    if ((m->response_ok = new_msg(&a, &hrana__ws__response_ok_msg__descriptor))) {
      m->response_ok->has_request_id = 1;
      m->response_ok->request_id = (int32_t)id;
      enc_response(&a, &m->response_ok->base, ok);
    }
  } else {
    m->msg_case = HRANA__WS__SERVER_MSG__MSG_RESPONSE_ERROR;
    if ((m->response_error = new_msg(&a, &hrana__ws__response_error_msg__descriptor))) {
      m->response_error->has_request_id = 1;
      m->response_error->request_id = (int32_t)id;
      m->response_error->error = enc_error(&a, err);
    }
  }
  return pack(&a, &m->base, 0, put, arg);
}

static int p_cursor_head(const char *baton, PutFn put, void *arg) {
  Arena a = {0};
  Hrana__Http__CursorRespBody *m = new_msg(&a, &hrana__http__cursor_resp_body__descriptor);
  if (m) m->baton = (char *)baton;
  return pack(&a, m ? &m->base : NULL, 1, put, arg);
}

static int p_cursor_entry(const HEntry *e, PutFn put, void *arg) {
  Arena a = {0};
  Hrana__CursorEntry *m = enc_cursor_entry(&a, e);
  return pack(&a, m ? &m->base : NULL, 1, put, arg);
}

const Codec proto_codec = {
    "application/x-protobuf", p_body, p_client_msg, p_pipeline, p_server_msg, p_cursor_head,
    p_cursor_entry,
};
