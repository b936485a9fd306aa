/*
 * net.c -- Hrana over HTTP and WebSocket: the libwebsockets callbacks.
 *
 * HTTP routes (Hrana 2 and 3, JSON; Hrana 3 in Protobuf):
 *   POST /v2/pipeline, /v3/pipeline  {baton, requests} -> {baton, base_url, results}
 *   POST /v3/cursor                  {baton, batch} -> a line {baton, base_url},
 *                                    then one line per cursor entry
 *   POST /v3-protobuf/pipeline, /v3-protobuf/cursor: the same in Protobuf
 *                                    (application/x-protobuf; the cursor's
 *                                    messages each behind a varint length)
 *   GET /v2, /v3, /v3-protobuf  200 (the version is spoken)    GET /health  200
 *   GET /version  the server's version           anything else: 404
 * Non-2xx answers carry {"message", "code"} with Content-Type:
 * application/json. Auth: "Authorization: Bearer <JWT>" on every request.
 *
 * WebSocket (any path, subprotocols hrana1/hrana2/hrana3, text frames of
 * JSON, and hrana3-protobuf, binary frames of Protobuf): hello (re-hello from v2 on), then requests
 * with request_id, each answered by response_ok/response_error in the order they arrived; many
 * streams per socket; sql_ids belong to the socket; v3 cursors. Responses
 * wait in a queue; at --max-inflight queued ones the socket stops being read
 * (back-pressure) until the queue is half drained.
 *
 * Invariants:
 *  1. One Session per HTTP transaction or WebSocket (libwebsockets'
 *     per-session memory, zeroed by it, and allocated anew for each request
 *     of a keep-alive connection); the HTTP part is used before an upgrade,
 *     the WS part after it. A Session owns no memory of an HTTP request: its
 *     body buffer is on body_busy (freed at drop or at net_shutdown).
 *  2. An HTTP response is fully built (JSON dumped straight into the shared
 *     buffer http_out, behind room for the headers) before anything goes
 *     out; headers and body leave in one lws_write, right in the callback
 *     that finished the request, after which the transaction completes
 *     (keep-alive) or the connection closes.
 *  3. Closing a socket closes its streams (rolling back their transactions)
 *     and frees its cursors, stored SQL and queued responses.
 *  4. A protocol violation on a WebSocket closes it with code 1002 and a
 *     reason; errors of a request are response_error, never a close.
 *  5. The encoding is a Codec (hjson_codec, proto_codec): bodies and
 *     messages are decoded into the request structures, in an Arena that
 *     also holds the answer and dies when the answer is written, so every
 *     route and request runs one code for both. Error bodies of non-2xx
 *     answers stay JSON (their Content-Type says so).
 */
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* ---- per-connection state ---- */

typedef struct WsStream {
  int64_t id;
  Stream *s;
} WsStream;
typedef struct WsCursor {
  int64_t id;
  Arena arena; /* holds the entries */
  HEntry *entries;
  size_t n, pos;
} WsCursor;
typedef struct OutBuf {
  unsigned char *p;
  size_t n, cap;
} OutBuf;
typedef struct OutMsg {
  unsigned char *buf;
  size_t len;
} OutMsg; /* buf has LWS_PRE room */

typedef struct WsConn {
  struct WsConn *next, *prev; /* all open sockets (for the sweep) */
  struct lws *wsi;
  int version, hello_done, readonly;
  int protobuf; /* hrana3-protobuf: binary frames of Protobuf */
  char *rx;
  size_t rx_n, rx_cap;
  OutMsg *out;
  size_t out_head, out_n, out_cap;
  int flow_off;
  WsStream *streams;
  int n_streams, cap_streams;
  WsCursor *cursors;
  int n_cursors, cap_cursors;
  SqlStore sqls;
} WsConn;

/* A request body being received (see "Buffers" below). */
typedef struct BodyBuf {
  struct BodyBuf *next, *prev;
  char *p;
  size_t cap;
} BodyBuf;

typedef struct HttpConn {
  char path[64];
  int is_post, readonly, auth_failed;
  const char *auth_why;
  BodyBuf *body; /* NULL until the first body bytes */
  size_t n;      /* bytes of the body in body->p */
  int too_big;
  int answered; /* the response of this request is written */
} HttpConn;

typedef struct Session {
  int kind; /* 0 http, 1 ws */
  HttpConn h;
  WsConn w;
} Session;

static WsConn *ws_all;

/* ---- response buffers ---- */

/* Room before the body for LWS_PRE and the HTTP headers, so that headers and
 * body leave in one write without moving the body. */
#define HDR_ROOM 512

/* Make room for k more bytes. */
static int ob_reserve(OutBuf *b, size_t k) {
  if (b->n + k <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + k) cap *= 2;
  unsigned char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int ob_put(const char *s, size_t k, void *arg) {
  OutBuf *b = arg;
  if (ob_reserve(b, k)) return -1;
  memcpy(b->p + b->n, s, k);
  b->n += k;
  return 0;
}

/* Empty the buffer, leaving `room` bytes in front of what comes next. */
static int ob_start(OutBuf *b, size_t room) {
  b->n = 0;
  if (ob_reserve(b, room)) return -1;
  b->n = room;
  return 0;
}

static void ob_free(OutBuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* ---- HTTP ---- */

/* Buffers. libwebsockets gives every HTTP transaction its own Session (it
 * binds the protocol, allocating the per-session memory, anew for each
 * request of a keep-alive connection, and frees the old one after
 * LWS_CALLBACK_HTTP_DROP_PROTOCOL), so a buffer kept in a Session would not
 * outlive its request, and one it still held when libwebsockets freed it
 * without that callback would leak. So no buffer lives in a Session:
 *  - a response is built and written within one callback, so one buffer,
 *    http_out, serves every response;
 *  - a request body arrives over several callbacks, interleaved with other
 *    connections', into a BodyBuf taken from a small pool of free ones at its
 *    first bytes, on the busy list until the request is answered or dropped
 *    (LWS_CALLBACK_HTTP_DROP_PROTOCOL), then back in the pool.
 * net_shutdown frees http_out and both lists. Buffers over KEEP_MAX are not
 * kept. */
#define KEEP_MAX (1 << 20)
#define BODY_POOL 8
static OutBuf http_out;
static BodyBuf *body_busy, *body_free;
static int n_body_free;

static BodyBuf *body_take(void) {
  BodyBuf *b = body_free;
  if (b) {
    body_free = b->next;
    n_body_free--;
  } else if (!(b = calloc(1, sizeof *b))) {
    return NULL;
  }
  b->prev = NULL;
  b->next = body_busy;
  if (body_busy) body_busy->prev = b;
  body_busy = b;
  return b;
}

static void body_give(BodyBuf *b) {
  if (b->prev)
    b->prev->next = b->next;
  else
    body_busy = b->next;
  if (b->next) b->next->prev = b->prev;
  if (n_body_free >= BODY_POOL || b->cap > KEEP_MAX) {
    free(b->p);
    free(b);
    return;
  }
  b->prev = NULL;
  b->next = body_free;
  body_free = b;
  n_body_free++;
}

/* A request begins, or the Session goes (answered, closed, upgraded). */
static void http_reset(HttpConn *h) {
  if (h->body) body_give(h->body);
  memset(h, 0, sizeof *h);
}

void net_shutdown(void) {
  while (body_busy) body_give(body_busy);
  for (BodyBuf *b = body_free, *next; b; b = next) {
    next = b->next;
    free(b->p);
    free(b);
  }
  body_free = NULL;
  n_body_free = 0;
  ob_free(&http_out);
}

/* Send the response whose body is http_out.p[HDR_ROOM .. http_out.n): the
 * headers go right in front of it and both leave in one write (libwebsockets
 * buffers what the socket does not take at once); then the HTTP transaction
 * completes (keep-alive) or the connection closes. */
static int http_send(struct lws *wsi, HttpConn *h, unsigned status, const char *ctype) {
  if (h->answered) return 0; /* one response per request */
  h->answered = 1;
  size_t n = http_out.n - HDR_ROOM;
  unsigned char hdr[HDR_ROOM], *p = hdr, *end = hdr + sizeof hdr - LWS_PRE;
  if (lws_add_http_common_headers(wsi, status, ctype, (lws_filepos_t)n, &p, end) ||
      lws_finalize_http_header(wsi, &p, end))
    return -1;
  size_t hn = (size_t)(p - hdr);
  unsigned char *start = http_out.p + HDR_ROOM - hn;
  memcpy(start, hdr, hn);
  int w = lws_write(wsi, start, hn + n, LWS_WRITE_HTTP_HEADERS);
  if (http_out.cap > KEEP_MAX) ob_free(&http_out);
  if (w < 0) return -1;
  return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int http_text(struct lws *wsi, HttpConn *h, unsigned status, const char *text) {
  if (ob_start(&http_out, HDR_ROOM) || ob_put(text, strlen(text), &http_out)) return -1;
  return http_send(wsi, h, status, "text/plain");
}

/* A non-2xx answer: the Error err (taken) as JSON. */
static int http_error(struct lws *wsi, HttpConn *h, unsigned status, HErr *err) {
  int rc = ob_start(&http_out, HDR_ROOM) || hjson_error(err, ob_put, &http_out);
  free(err);
  return rc ? -1 : http_send(wsi, h, status, "application/json");
}

static HResp *simple_resp(Arena *a, HReqType type) {
  HResp *r = arena_alloc(a, sizeof *r);
  if (r) r->type = type;
  return r;
}

static int http_pipeline(struct lws *wsi, HttpConn *h, int version, const Codec *c, HBody *b,
                         Arena *a) {
  HErr *err = NULL;
  Stream *s = stream_http_get(b->baton, h->readonly, &err);
  if (!s) return http_error(wsi, h, 400, err);
  HResultItem *items = arena_alloc(a, (b->n_reqs + 1) * sizeof *items);
  if (!items) return http_error(wsi, h, 500, herr("SQLITE_NOMEM", "out of memory"));
  int closed = 0;
  for (size_t i = 0; i < b->n_reqs; i++) {
    const HReq *r = &b->reqs[i];
    HResp *resp = NULL;
    err = NULL;
    if (closed) {
      err = herr("STREAM_CLOSED", "the stream was closed by an earlier request");
    } else if (!r->name) {
      err = herr("REQUEST_INVALID", "a request needs a type");
    } else if (r->type == HQ_CLOSE) {
      closed = 1;
      resp = simple_resp(a, HQ_CLOSE);
    } else {
      resp = hrana_request(s, &s->sqls, r, version, a, &err);
    }
    items[i].ok = resp;
    items[i].err = herr_keep(a, err);
  }
  char next[96];
  if (closed)
    stream_http_close(s);
  else
    stream_http_baton(s, next, sizeof next);
  if (ob_start(&http_out, HDR_ROOM) ||
      c->pipeline(closed ? NULL : next, items, b->n_reqs, ob_put, &http_out))
    return -1;
  return http_send(wsi, h, 200, c->content_type);
}

static int http_cursor(struct lws *wsi, HttpConn *h, const Codec *c, HBody *b, Arena *a) {
  HErr *err = NULL;
  Stream *s = stream_http_get(b->baton, h->readonly, &err);
  if (!s) return http_error(wsi, h, 400, err);
  s->last_used = server_now_ms();
  size_t n = 0;
  HEntry *entries = hrana_cursor(s, &s->sqls, b->batch, a, &n, &err), one = {.type = HE_ERROR};
  if (!entries) {
    one.err = herr_keep(a, err);
    entries = &one;
    n = 1;
  }
  char next[96];
  stream_http_baton(s, next, sizeof next);
  /* the head, then the entries */
  OutBuf *o = &http_out;
  int rc = ob_start(o, HDR_ROOM) || c->cursor_head(next, ob_put, o);
  for (size_t i = 0; !rc && i < n; i++) rc = c->cursor_entry(&entries[i], ob_put, o);
  return rc ? -1 : http_send(wsi, h, 200, c == &hjson_codec ? "text/plain" : c->content_type);
}

static int http_post(struct lws *wsi, HttpConn *h) {
  if (h->auth_failed) return http_error(wsi, h, 401, herr("AUTH_FAILED", "%s", h->auth_why));
  if (h->too_big)
    return http_error(wsi, h, 413,
                      herr("HTTP_BODY_TOO_LARGE", "the request body is over %zu bytes (--max-body)",
                           g_cfg.max_body));
  static const struct {
    const char *path;
    int version, pb, cursor;
  } routes[] = {
      {"/v2/pipeline", 2, 0, 0},          {"/v3/pipeline", 3, 0, 0},        {"/v3/cursor", 3, 0, 1},
      {"/v3-protobuf/pipeline", 3, 1, 0}, {"/v3-protobuf/cursor", 3, 1, 1},
  };
  size_t r = 0, nr = sizeof routes / sizeof routes[0];
  while (r < nr && strcmp(h->path, routes[r].path)) r++;
  if (r == nr)
    return http_error(wsi, h, 404, herr("HTTP_NOT_FOUND", "no route for POST %s", h->path));
  int version = routes[r].version, cursor = routes[r].cursor;
  const Codec *c = routes[r].pb ? &proto_codec : &hjson_codec;
  Arena a = {0};
  HBody b = {0};
  int bad = c->body(h->body ? h->body->p : "", h->n, cursor, &a, &b);
  if (h->body) { /* the decoded message holds copies */
    body_give(h->body);
    h->body = NULL;
  }
  int rc = bad      ? http_error(wsi, h, 400,
                                 herr("HTTP_BODY_INVALID", "%s", b.bad ? b.bad : "malformed body"))
           : cursor ? http_cursor(wsi, h, c, &b, &a)
                    : http_pipeline(wsi, h, version, c, &b, &a);
  arena_free(&a);
  return rc;
}

static int http_get(struct lws *wsi, HttpConn *h) {
  const char *p = h->path;
  if (!strcmp(p, "/health")) return http_text(wsi, h, 200, "ok\n");
  if (!strcmp(p, "/version"))
    return http_text(wsi, h, 200,
                     "shale-server " SHALE_VERSION " (Hrana 1-3, JSON; Hrana 3, Protobuf)\n");
  if (!strcmp(p, "/v2") || !strcmp(p, "/v3") || !strcmp(p, "/v3-protobuf") || !strcmp(p, "/"))
    return http_text(wsi, h, 200, "Hrana over HTTP: POST .../pipeline\n");
  return http_error(wsi, h, 404, herr("HTTP_NOT_FOUND", "no route for GET %s", p));
}

static void http_auth(struct lws *wsi, HttpConn *h) {
  char hdr[8192]; /* not zeroed: lws_hdr_copy terminates what it copies */
  const char *jwt = NULL;
  hdr[0] = 0;
  int n = lws_hdr_copy(wsi, hdr, sizeof hdr, WSI_TOKEN_HTTP_AUTHORIZATION);
  if (n > 7 && !strncasecmp(hdr, "Bearer ", 7))
    jwt = hdr + 7;
  else if (n > 0)
    jwt = "-"; /* some other scheme: not a token */
  h->auth_failed = auth_check(jwt, &h->readonly, &h->auth_why) != 0;
}

/* ---- WebSocket ---- */

static const Codec *ws_codec(const WsConn *w) { return w->protobuf ? &proto_codec : &hjson_codec; }

/* Queue a server message (ok or err, both borrowed) for the socket. */
static void ws_send(WsConn *w, HServerMsgType type, int64_t id, const HResp *ok, const HErr *err) {
  OutBuf b = {0};
  if (ob_start(&b, LWS_PRE) || ws_codec(w)->server_msg(type, id, ok, err, ob_put, &b)) {
    ob_free(&b);
    return;
  }
  if (w->out_head + w->out_n == w->out_cap) {
    if (w->out_head > 0) {
      memmove(w->out, w->out + w->out_head, w->out_n * sizeof *w->out);
      w->out_head = 0;
    } else {
      OutMsg *out = realloc(w->out, (w->out_cap ? w->out_cap * 2 : 16) * sizeof *w->out);
      if (!out) {
        ob_free(&b);
        return;
      }
      w->out = out;
      w->out_cap = w->out_cap ? w->out_cap * 2 : 16;
    }
  }
  OutMsg *m = &w->out[w->out_head + w->out_n++];
  m->buf = b.p;
  m->len = b.n - LWS_PRE;
  if ((int)w->out_n >= g_cfg.max_inflight && !w->flow_off) {
    w->flow_off = 1;
    lws_rx_flow_control(w->wsi, 0);
  }
  lws_callback_on_writable(w->wsi);
}

/* Answer request id with resp, or with err (taken) when resp is NULL. */
static void ws_reply(WsConn *w, int64_t id, const HResp *resp, HErr *err) {
  if (resp)
    ws_send(w, HS_RESPONSE_OK, id, resp, NULL);
  else
    ws_send(w, HS_RESPONSE_ERROR, id, NULL, err);
  free(err);
}

static int ws_close(WsConn *w, enum lws_close_status st, const char *why) {
  lws_close_reason(w->wsi, st, (unsigned char *)why, strlen(why));
  return -1;
}

static WsStream *ws_stream(WsConn *w, const HReq *req) {
  if (!req->has_stream_id) return NULL;
  for (int i = 0; i < w->n_streams; i++)
    if (w->streams[i].id == req->stream_id) return &w->streams[i];
  return NULL;
}

static int ws_cursor_find(WsConn *w, const HReq *req) {
  for (int i = 0; req->has_cursor_id && i < w->n_cursors; i++)
    if (w->cursors[i].id == req->cursor_id) return i;
  return -1;
}

static void ws_cursor_drop(WsConn *w, int i) {
  arena_free(&w->cursors[i].arena);
  w->cursors[i] = w->cursors[--w->n_cursors];
}

/* Grow an array of *cap elements of size sz to hold n + 1. */
static int grow(void *pv, int n, int *cap, size_t sz) {
  void **p = pv;
  if (n < *cap) return 0;
  int c = *cap ? *cap * 2 : 4;
  void *q = realloc(*p, (size_t)c * sz);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

/* A request of an open socket, decoded in a. Returns -1 to close the socket. */
static int ws_request(WsConn *w, Arena *a, int64_t id, const HReq *req) {
  HErr *err = NULL;
  if (!req->name) return ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "request without a type");
  if (req->type == HQ_OPEN_STREAM) {
    if (!req->has_stream_id) return ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "bad stream_id");
    if (ws_stream(w, req)) return ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "stream_id in use");
    Stream *s = stream_open(w->readonly, &err);
    if (s && grow(&w->streams, w->n_streams, &w->cap_streams, sizeof *w->streams)) {
      stream_close(s);
      s = NULL;
      err = herr("SQLITE_NOMEM", "out of memory");
    }
    if (s) w->streams[w->n_streams++] = (WsStream){req->stream_id, s};
    ws_reply(w, id, s ? simple_resp(a, HQ_OPEN_STREAM) : NULL, err);
    return 0;
  }
  if (req->type == HQ_CLOSE_STREAM) {
    WsStream *ws = ws_stream(w, req);
    if (ws) {
      stream_close(ws->s);
      *ws = w->streams[--w->n_streams];
    }
    ws_reply(w, id, simple_resp(a, HQ_CLOSE_STREAM), NULL);
    return 0;
  }
  if (w->version >= 3 && req->type == HQ_FETCH_CURSOR) {
    int i = ws_cursor_find(w, req);
    if (i < 0 || !req->has_max_count || req->max_count < 0)
      return ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "fetch_cursor: bad cursor_id or max_count");
    WsCursor *c = &w->cursors[i];
    HResp *r = simple_resp(a, HQ_FETCH_CURSOR);
    size_t k = c->n - c->pos;
    if ((uint64_t)req->max_count < k) k = (size_t)req->max_count;
    if (r) {
      r->entries = c->entries + c->pos;
      r->n_entries = k;
      r->flag = c->pos + k >= c->n;
      c->pos += k;
    }
    ws_reply(w, id, r, NULL);
    return 0;
  }
  if (w->version >= 3 && req->type == HQ_CLOSE_CURSOR) {
    int i = ws_cursor_find(w, req);
    if (i >= 0) ws_cursor_drop(w, i);
    ws_reply(w, id, simple_resp(a, HQ_CLOSE_CURSOR), NULL);
    return 0;
  }
  int needs_stream = req->type != HQ_STORE_SQL && req->type != HQ_CLOSE_SQL;
  WsStream *ws = needs_stream ? ws_stream(w, req) : NULL;
  if (needs_stream && !ws) {
    ws_reply(w, id, NULL, herr("STREAM_NOT_FOUND", "no open stream with this stream_id"));
    return 0;
  }
  if (ws && ws->s->timed_out) {
    ws->s->timed_out = 0;
    ws_reply(w, id, NULL,
             herr("TRANSACTION_TIMEOUT",
                  "the stream's transaction sat idle over %d ms and "
                  "was rolled back",
                  g_cfg.txn_timeout_ms));
    return 0;
  }
  if (w->version >= 3 && req->type == HQ_OPEN_CURSOR) {
    if (!req->has_cursor_id || ws_cursor_find(w, req) >= 0)
      return ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "open_cursor: bad or used cursor_id");
    ws->s->last_used = server_now_ms();
    WsCursor c = {.id = req->cursor_id};
    c.entries = hrana_cursor(ws->s, &w->sqls, req->batch, &c.arena, &c.n, &err);
    if (c.entries && grow(&w->cursors, w->n_cursors, &w->cap_cursors, sizeof *w->cursors)) {
      c.entries = NULL;
      err = herr("SQLITE_NOMEM", "out of memory");
    }
    if (!c.entries) {
      arena_free(&c.arena);
      ws_reply(w, id, NULL, err);
      return 0;
    }
    w->cursors[w->n_cursors++] = c;
    ws_reply(w, id, simple_resp(a, HQ_OPEN_CURSOR), NULL);
    return 0;
  }
  HResp *resp = hrana_request(ws ? ws->s : NULL, &w->sqls, req, w->version, a, &err);
  ws_reply(w, id, resp, err);
  return 0;
}

static int ws_message(WsConn *w, const char *buf, size_t n) {
  Arena a = {0};
  HClientMsg m = {0};
  int rc = 0;
  ws_codec(w)->client_msg(buf, n, &a, &m);
  if (m.type == HM_NONE) {
    rc = ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR,
                  w->protobuf ? "message is not a ClientMsg with hello or request"
                              : "message is not a JSON object with a type");
  } else if (m.type == HM_HELLO) {
    const char *why = NULL;
    if (w->hello_done && w->version < 2) {
      rc = ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "hello sent twice (hrana1)");
    } else if (auth_check(m.jwt, &w->readonly, &why)) {
      HErr *e = herr("AUTH_FAILED", "%s", why);
      ws_send(w, HS_HELLO_ERROR, 0, NULL, e);
      free(e);
      w->hello_done = -1; /* refused: the socket closes once this is written */
    } else {
      w->hello_done = 1;
      ws_send(w, HS_HELLO_OK, 0, NULL, NULL);
    }
  } else if (m.type == HM_REQUEST) {
    if (w->hello_done != 1)
      rc = ws_close(w, LWS_CLOSE_STATUS_POLICY_VIOLATION, "request before a successful hello");
    else if (!m.has_request_id || !m.req)
      rc = ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "request needs request_id and request");
    else
      rc = ws_request(w, &a, m.request_id, m.req);
  } else {
    rc = ws_close(w, LWS_CLOSE_STATUS_PROTOCOL_ERR, "unknown message type");
  }
  arena_free(&a);
  return rc;
}

static void ws_free(WsConn *w) {
  for (int i = 0; i < w->n_streams; i++) stream_close(w->streams[i].s);
  free(w->streams);
  while (w->n_cursors > 0) ws_cursor_drop(w, w->n_cursors - 1);
  free(w->cursors);
  sqlstore_clear(&w->sqls);
  for (size_t i = 0; i < w->out_n; i++) free(w->out[w->out_head + i].buf);
  free(w->out);
  free(w->rx);
  if (w->prev)
    w->prev->next = w->next;
  else if (ws_all == w)
    ws_all = w->next;
  if (w->next) w->next->prev = w->prev;
  w->next = w->prev = NULL;
}

void net_sweep(void) {
  int64_t now = server_now_ms();
  for (WsConn *w = ws_all; w; w = w->next)
    for (int i = 0; i < w->n_streams; i++) {
      Stream *s = w->streams[i].s;
      if (!shale_get_autocommit(s->db) && now - s->last_used > g_cfg.txn_timeout_ms) {
        shale_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        s->timed_out = 1;
      }
    }
}

/* ---- the callback ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len) {
  Session *se = user;
  switch (reason) {
    case LWS_CALLBACK_HTTP: {
      HttpConn *h = &se->h;
      http_reset(h);
      se->kind = 0;
      snprintf(h->path, sizeof h->path, "%s", (const char *)in);
      h->is_post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
      if (h->is_post) {
        http_auth(wsi, h);
        char cl[32] = "";
        /* no body to wait for: answer now */
        if (lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 && atoll(cl) == 0)
          return http_post(wsi, h);
        return 0;
      }
      if (!lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
        return http_error(wsi, h, 405, herr("HTTP_METHOD", "only GET and POST are served"));
      return http_get(wsi, h);
    }
    case LWS_CALLBACK_HTTP_BODY: {
      HttpConn *h = &se->h;
      if (!len) return 0;
      if (h->too_big || h->n + len > g_cfg.max_body) {
        h->too_big = 1;
        return 0;
      }
      if (!h->body && !(h->body = body_take())) return -1;
      BodyBuf *k = h->body;
      if (h->n + len > k->cap) {
        size_t cap = (h->n + len) * 2;
        if (cap > g_cfg.max_body + 1) cap = g_cfg.max_body + 1;
        char *b = realloc(k->p, cap);
        if (!b) return -1;
        k->p = b;
        k->cap = cap;
      }
      memcpy(k->p + h->n, in, len);
      h->n += len;
      return 0;
    }
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
      return http_post(wsi, &se->h);
    case LWS_CALLBACK_HTTP_WRITEABLE: /* responses leave in one write (http_send) */
      return 0;
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL: /* the Session is about to be freed */
      if (se && se->kind == 0) http_reset(&se->h);
      return 0;
    case LWS_CALLBACK_ESTABLISHED: {
      const struct lws_protocols *p = lws_get_protocol(wsi);
      if (!p || strncmp(p->name, "hrana", 5)) return -1; /* no Hrana subprotocol asked for */
      http_reset(&se->h);
      se->kind = 1;
      memset(&se->w, 0, sizeof se->w);
      se->w.wsi = wsi;
      se->w.version = p->name[5] - '0';
      se->w.protobuf = strstr(p->name, "protobuf") != NULL;
      se->w.next = ws_all;
      if (ws_all) ws_all->prev = &se->w;
      ws_all = &se->w;
      return 0;
    }
    case LWS_CALLBACK_RECEIVE: {
      WsConn *w = &se->w;
      if (!lws_frame_is_binary(wsi) != !w->protobuf) /* the frame type is the encoding's */
        return ws_close(w, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
                        w->protobuf ? "text messages are not spoken on hrana3-protobuf"
                                    : "binary messages are not spoken");
      if (w->rx_n + len > g_cfg.max_body)
        return ws_close(w, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message over --max-body");
      if (!len && !w->rx) w->rx = malloc(1);
      if (w->rx_n + len > w->rx_cap) {
        w->rx_cap = (w->rx_n + len) * 2;
        w->rx = realloc(w->rx, w->rx_cap);
      }
      if (len) memcpy(w->rx + w->rx_n, in, len);
      w->rx_n += len;
      if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) return 0;
      size_t n = w->rx_n;
      w->rx_n = 0;
      return ws_message(w, w->rx, n);
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
      WsConn *w = &se->w;
      if (!w->out_n)
        return w->hello_done < 0
                   ? ws_close(w, LWS_CLOSE_STATUS_POLICY_VIOLATION, "authentication failed")
                   : 0;
      OutMsg m = w->out[w->out_head++];
      w->out_n--;
      int n =
          lws_write(wsi, m.buf + LWS_PRE, m.len, w->protobuf ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
      free(m.buf);
      if (n < (int)m.len) return -1;
      if (w->flow_off && (int)w->out_n <= g_cfg.max_inflight / 2) {
        w->flow_off = 0;
        lws_rx_flow_control(wsi, 1);
      }
      if (w->out_n || w->hello_done < 0) lws_callback_on_writable(wsi);
      return 0;
    }
    case LWS_CALLBACK_CLOSED:
      if (se->kind == 1) ws_free(&se->w);
      return 0;
    default:
      return 0;
  }
}

static const struct lws_protocols protocols[] = {
    {"http", callback, sizeof(Session), 0, 0, NULL, 0},
    {"hrana3", callback, sizeof(Session), 0, 0, NULL, 0},
    {"hrana3-protobuf", callback, sizeof(Session), 0, 0, NULL, 0},
    {"hrana2", callback, sizeof(Session), 0, 0, NULL, 0},
    {"hrana1", callback, sizeof(Session), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

const struct lws_protocols *net_protocol_table(void) { return protocols; }
