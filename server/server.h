/*
 * server.h -- the pieces of build/shale-server (server/): the libSQL Hrana
 * protocol (versions 1-3, JSON; version 3 also in Protobuf) over HTTP and
 * WebSocket, on Shale's native API (include/shale.h) only.
 *
 *   main.c    options, the libwebsockets context and event loop, timers
 *   net.c     HTTP routes and WebSocket messages (libwebsockets callbacks)
 *   hrana.c   Hrana requests on a stream: execute, batch, sequence, describe,
 *             store_sql/close_sql, get_autocommit, cursors; values, errors
 *   stream.c  streams (one shale connection each), the connection pool, HTTP
 *             batons and idle expiry
 *   auth.c    Bearer JWTs: Ed25519 signatures (OpenSSL), exp, access level
 *   hjson.c   the JSON encoding (jansson): bodies and messages into the
 *             request structures below, answers out of the result ones
 *   proto.c   the Protobuf encoding (protobuf-c), the same both ways
 *
 * Invariants:
 *  1. One thread: every callback runs on the event loop, so no locks; a
 *     stream's connection is only used from the loop.
 *  2. Errors travel as HErr ({message, code}, malloc'ed, owned by whoever
 *     holds the pointer, until kept in an arena); codes are SQLite's names
 *     (SQLITE_*) for engine errors and the protocol's own names otherwise.
 *  4. No encoding reaches hrana.c: the codecs decode into the H* request
 *     structures and encode from the H* answers, so JSON and Protobuf run
 *     every request on the same code and neither goes through the other.
 *  3. Every limit (body size, rows, streams, stored SQL, queued responses)
 *     has a named error, never a silent truncation.
 */
#ifndef SHALE_SERVER_H
#define SHALE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "shale.h"

/* ---- configuration (main.c) ---- */
typedef struct ServerConfig {
  const char *db_path;   /* --db (default shale-server.db) */
  const char *host;      /* --listen host part */
  int port;              /* --listen port part; 0: pick a free one */
  const char *key_file;  /* --auth-jwt-key-file: NULL = no auth */
  int readonly;          /* --readonly: every client read-only */
  int stream_timeout_ms; /* idle HTTP stream (and its transaction) expiry */
  int txn_timeout_ms;    /* WS stream idle inside a transaction: rolled back */
  size_t max_body;       /* request body / WS message bytes */
  int max_rows;          /* rows of one statement result */
  int max_streams;       /* open streams, all clients together */
  int max_sql;           /* stored SQL texts per stream / WS connection */
  int max_inflight;      /* queued WS responses before reading stops */
  int busy_ms;           /* busy timeout of each connection */
  int journal_wal;       /* WAL mode (default on; --no-wal) */
} ServerConfig;

extern ServerConfig g_cfg;

/* Milliseconds on a monotonic clock. */
int64_t server_now_ms(void);

/* ---- arenas (hrana.c) ---- */
/* Memory that dies together: a decoded message and the answer built for it,
 * or a WebSocket cursor's entries. One hook runs at arena_free (the decoded
 * message's own free: jansson's tree, protobuf-c's unpacked message). */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
  ArenaChunk *head;
  int failed; /* an allocation failed */
  void (*done)(void *);
  void *done_arg;
} Arena;
/* n zeroed bytes, or NULL (and a->failed set) when out of memory. */
void *arena_alloc(Arena *a, size_t n);
/* A copy of p[0..n) with a NUL after it, or NULL. */
char *arena_dup(Arena *a, const void *p, size_t n);
/* printf's text (cut at 1023 bytes) in a, or NULL. */
const char *arena_printf(Arena *a, const char *fmt, ...);
void arena_free(Arena *a);
/* Free the chunk kept for the next arena (shutdown). */
void arena_release(void);

/* ---- errors (hrana.c) ---- */
/* A Hrana Error {message, code}: one malloc'ed block (free() it), or kept
 * in an arena by herr_keep. code is a static string. */
typedef struct HErr {
  const char *code;
  char message[];
} HErr;
/* A new Error (NULL only when out of memory). */
HErr *herr(const char *code, const char *fmt, ...);
/* The Error for the connection's last failure with result code rc. */
HErr *herr_db(shale *db, int rc);
/* e moved into arena a (e is freed); NULL stays NULL. */
HErr *herr_keep(Arena *a, HErr *e);

/* ---- Hrana messages, encoding-free (decoded by hjson.c and proto.c) ---- */
/* Every pointer below is borrowed from the arena the message was decoded
 * into (or from the message it was decoded from, which that arena frees). */
typedef enum HValueType { HV_NULL, HV_INTEGER, HV_FLOAT, HV_TEXT, HV_BLOB, HV_BAD } HValueType;
typedef struct HValue {
  HValueType type;
  int64_t i;     /* HV_INTEGER */
  double d;      /* HV_FLOAT (any double: NaN binds as NULL, as in SQLite) */
  const char *p; /* HV_TEXT, HV_BLOB: the bytes; HV_BAD: why (ARGS_INVALID) */
  size_t n;
} HValue;
typedef struct HNamedArg {
  const char *name; /* NULL: none given (ARGS_INVALID) */
  HValue value;
} HNamedArg;
typedef struct HStmt {
  const char *sql; /* NULL: no sql given */
  size_t sql_len;
  int has_sql_id;
  int64_t sql_id;
  HValue *args;
  size_t n_args;
  HNamedArg *named;
  size_t n_named;
  int want_rows;
  /* a malformed statement: bad_code/bad is the error given before it is
   * compiled, args_bad the ARGS_INVALID one given when it is bound */
  const char *bad_code, *bad, *args_bad;
} HStmt;
typedef enum HCondType {
  HC_OK,
  HC_ERROR,
  HC_NOT,
  HC_AND,
  HC_OR,
  HC_IS_AUTOCOMMIT,
  HC_BAD
} HCondType;
typedef struct HCond {
  HCondType type;
  int64_t step;        /* HC_OK, HC_ERROR */
  struct HCond *conds; /* HC_NOT (one), HC_AND, HC_OR */
  size_t n;
} HCond;
typedef struct HStep {
  HCond *cond; /* NULL: none */
  HStmt *stmt; /* NULL: missing or not a statement (PROTO_INVALID) */
} HStep;
typedef struct HBatch {
  HStep *steps;
  size_t n;
} HBatch;
typedef enum HReqType {
  HQ_UNKNOWN, /* name says which (NULL: no type given) */
  HQ_CLOSE,
  HQ_EXECUTE,
  HQ_BATCH,
  HQ_SEQUENCE,
  HQ_DESCRIBE,
  HQ_STORE_SQL,
  HQ_CLOSE_SQL,
  HQ_GET_AUTOCOMMIT,
  HQ_OPEN_STREAM, /* WebSocket only, from here on */
  HQ_CLOSE_STREAM,
  HQ_OPEN_CURSOR,
  HQ_CLOSE_CURSOR,
  HQ_FETCH_CURSOR,
} HReqType;
typedef struct HReq {
  HReqType type;
  const char *name; /* the type's name as sent */
  /* execute: the statement; sequence, describe: sql / sql_id in it;
   * store_sql: both; close_sql: sql_id. NULL: execute without a stmt. */
  HStmt *stmt;
  HBatch *batch; /* batch, open_cursor; NULL: missing (PROTO_INVALID) */
  int has_stream_id, has_cursor_id, has_max_count;
  int64_t stream_id, cursor_id, max_count;
} HReq;
/* A request's name -> its type (HQ_UNKNOWN when none), and back. */
HReqType hreq_type(const char *name);
const char *hreq_name(HReqType type);

/* Answers, built by hrana.c in the request's arena. */
typedef struct HCol {
  const char *name, *decltype; /* NULL: null */
} HCol;
typedef struct HRow {
  HValue *v;
  size_t n;
} HRow;
typedef struct HResult {
  HCol *cols;
  size_t n_cols;
  HRow *rows;
  size_t n_rows;
  int64_t affected, rowid;
} HResult;
typedef struct HBatchResult {
  size_t n;
  HResult **results; /* per step: NULL when it did not run or failed */
  HErr **errors;     /* per step: NULL when it did not fail */
} HBatchResult;
typedef struct HDescribe {
  const char **params; /* names, NULL: unnamed */
  size_t n_params;
  HCol *cols;
  size_t n_cols;
  int is_explain, is_readonly;
} HDescribe;
typedef enum HEntryType { HE_STEP_BEGIN, HE_ROW, HE_STEP_END, HE_STEP_ERROR, HE_ERROR } HEntryType;
typedef struct HEntry {
  HEntryType type;
  uint32_t step;
  const HResult *res; /* STEP_BEGIN (cols), ROW (rows[row]), STEP_END (counts) */
  size_t row;
  const HErr *err; /* STEP_ERROR, ERROR */
} HEntry;
typedef struct HResp {
  HReqType type;
  HResult *result;       /* execute */
  HBatchResult *batch;   /* batch */
  HDescribe *describe;   /* describe */
  int flag;              /* get_autocommit: is_autocommit; fetch_cursor: done */
  const HEntry *entries; /* fetch_cursor */
  size_t n_entries;
} HResp;

/* ---- the two encodings (hjson.c, proto.c) ---- */
/* An HTTP body: a pipeline's {baton, requests} or a cursor's {baton, batch}. */
typedef struct HBody {
  const char *baton; /* NULL: none */
  const char *bad;   /* not NULL: the body is malformed, why (HTTP_BODY_INVALID) */
  HReq *reqs;
  size_t n_reqs;
  HBatch *batch; /* cursor */
} HBody;
/* A pipeline's answer: the per-request results, each a response or an error. */
typedef struct HResultItem {
  HResp *ok;
  const HErr *err;
} HResultItem;
/* A WebSocket client message. */
typedef struct HClientMsg {
  enum { HM_NONE, HM_OTHER, HM_HELLO, HM_REQUEST } type; /* NONE: no type; OTHER: unknown */
  const char *jwt;
  int has_request_id;
  int64_t request_id;
  HReq *req; /* HM_REQUEST; NULL: no request object */
} HClientMsg;
typedef enum HServerMsgType {
  HS_HELLO_OK,
  HS_HELLO_ERROR,
  HS_RESPONSE_OK,
  HS_RESPONSE_ERROR
} HServerMsgType;
/* The output callback (jansson's dump-callback type, so one buffer serves
 * both encodings): 0, or -1 when it could not take the bytes. */
typedef int (*PutFn)(const char *, size_t, void *);
typedef struct Codec {
  const char *content_type;
  /* Decode an HTTP body (cursor: a cursor body) into *b in a: -1 when the
   * bytes are no body at all (b->bad says why). */
  int (*body)(const void *buf, size_t n, int cursor, Arena *a, HBody *b);
  /* Decode a WebSocket message: -1 when the bytes are no message. */
  int (*client_msg)(const void *buf, size_t n, Arena *a, HClientMsg *m);
  int (*pipeline)(const char *baton, const HResultItem *items, size_t n, PutFn put, void *arg);
  int (*server_msg)(HServerMsgType type, int64_t request_id, const HResp *ok, const HErr *err,
                    PutFn put, void *arg);
  /* The cursor's head {baton, base_url} and its entries, each framed as the
   * encoding frames them (a line; a varint length). */
  int (*cursor_head)(const char *baton, PutFn put, void *arg);
  int (*cursor_entry)(const HEntry *e, PutFn put, void *arg);
} Codec;
extern const Codec hjson_codec, proto_codec;
/* An Error as a JSON body (non-2xx answers are JSON in both encodings). */
int hjson_error(const HErr *e, PutFn put, void *arg);
/* Free what the JSON encoder keeps between answers (shutdown). */
void hjson_shutdown(void);

/* ---- stored SQL (hrana.c) ---- */
typedef struct SqlStore {
  int n, cap;
  struct {
    int64_t id;
    char *sql;
  } * v;
} SqlStore;
void sqlstore_clear(SqlStore *s);

/* ---- streams (stream.c) ---- */
/* A connection's compiled statements, kept reset between uses and keyed by
 * their SQL text, so a repeated statement skips prepare and finalize. A
 * cached statement recompiles itself when the schema moved (the native
 * API's step does so on SHALE_SCHEMA). */
#define STMT_CACHE_MAX 16
typedef struct StmtCache {
  int n;
  struct {
    char *sql;
    size_t len;
    shale_stmt *st;
  } v[STMT_CACHE_MAX]; /* v[n-1] most recently used */
} StmtCache;

typedef struct Stream Stream;
struct Stream {
  shale *db;         /* this stream's connection (from the pool) */
  StmtCache *cache;  /* the connection's statements (pooled with it) */
  int readonly;      /* the client's access level */
  SqlStore sqls;     /* HTTP streams: this stream's store_sql texts */
  int64_t last_used; /* server_now_ms() of the last request */
  int timed_out;     /* WS: its transaction was rolled back by the timeout */
  /* HTTP streams only: */
  int http_slot;           /* index in the baton table, -1 for WS streams */
  unsigned char token[16]; /* the one valid baton's secret */
  uint32_t gen;            /* bumped at every baton issued */
};

/* Open a stream: a pooled connection (or a new one). NULL with *err when
 * the stream limit is reached or the database cannot be opened. */
Stream *stream_open(int readonly, HErr **err);
/* Close a stream: roll back an open transaction, return the connection to
 * the pool (or close it), free the stream. */
void stream_close(Stream *s);
/* The cached statement for sql[0..len), taken out of the cache (NULL:
 * none), or give one back after use: it is reset, its bindings cleared,
 * and it is cached (the least recently used one finalized when full) or
 * finalized. */
shale_stmt *stream_stmt_take(Stream *s, const char *sql, size_t len);
void stream_stmt_give(Stream *s, const char *sql, size_t len, shale_stmt *st);
/* Number of open streams. */
int stream_count(void);

/* HTTP streams: resolve a baton (NULL: open a new stream). A baton is
 * "slot.gen.hex-token"; only the last one issued for a stream is valid
 * (single use); an unknown, stale or forged one gives STREAM_EXPIRED or
 * BATON_INVALID. */
Stream *stream_http_get(const char *baton, int readonly, HErr **err);
/* Issue the stream's next baton into buf (>= 80 bytes); the old one dies. */
void stream_http_baton(Stream *s, char *buf, size_t n);
/* Drop an HTTP stream (the "close" request, or a fatal error). */
void stream_http_close(Stream *s);
/* Expire HTTP streams idle longer than the stream timeout. */
void stream_http_sweep(void);
/* Close every stream and the pool (shutdown). */
void stream_shutdown(void);
void stream_init(void);

/* ---- Hrana requests (hrana.c) ---- */
/* Run one stream request (execute, batch, sequence, describe, store_sql,
 * close_sql, get_autocommit); `store` is where sql_ids live (the stream's
 * for HTTP, the socket's for WS); s may be NULL for store_sql/close_sql. The
 * response is built in a; NULL with *err (malloc'ed) on failure. `version`
 * is the negotiated protocol version (1..3): requests it lacks are
 * refused. */
HResp *hrana_request(Stream *s, SqlStore *store, const HReq *req, int version, Arena *a,
                     HErr **err);
/* Run a batch as a v3 cursor: its entries (step_begin, row, step_end,
 * step_error), in order, built in a, *n of them. NULL with *err for a
 * malformed batch. */
HEntry *hrana_cursor(Stream *s, SqlStore *store, const HBatch *batch, Arena *a, size_t *n,
                     HErr **err);

/* ---- auth (auth.c) ---- */
/* Load --auth-jwt-key-file: PEM public keys and/or lines of raw base64url
 * Ed25519 keys. 0 on success, -1 (message printed) on failure. */
int auth_load(const char *path);
/* Is auth required? */
int auth_enabled(void);
/* Check a JWT (NULL or "": missing). 0: valid, *readonly set from its
 * access claim; -1: refused, *why says why. */
int auth_check(const char *jwt, int *readonly, const char **why);
void auth_free(void);
/* `shale-server token`: print a JWT signed with the Ed25519 private key in
 * key_path (PEM), expiring in ttl seconds (0: never), read-only if asked.
 * Returns the exit status. */
int auth_make_token(const char *key_path, long ttl, int readonly);

/* ---- base64 (OpenSSL's codec; hrana.c) ---- */
/* Decode standard or URL-safe base64, padded or not, into a malloc'ed buffer.
 * Returns the length, or -1 for invalid input. */
long b64_decode(const char *in, size_t n, unsigned char **out);
/* Encode as padded standard base64; malloc'ed NUL-terminated text. */
char *b64_encode(const unsigned char *in, size_t n);

/* ---- network (net.c) ---- */
struct lws_protocols;
/* The protocol table ("http", "hrana3", "hrana2", "hrana1"). */
const struct lws_protocols *net_protocol_table(void);
/* Sweep WS streams that sat idle in a transaction too long. */
void net_sweep(void);
/* Free what HTTP connections still open at lws_context_destroy kept (call
 * after it). */
void net_shutdown(void);

#endif
