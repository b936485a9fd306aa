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
 *   proto.c   the Protobuf encoding (protobuf-c), as a translation to and from
 *             the JSON trees that hrana.c and net.c run
 *
 * Invariants:
 *  1. One thread: every callback runs on the event loop, so no locks; a
 *     stream's connection is only used from the loop.
 *  2. Errors travel as Hrana Error objects ({message, code}, json_t owned
 *     by whoever holds the pointer); codes are SQLite's names (SQLITE_*) for
 *     engine errors and the protocol's own names otherwise.
 *  3. Every limit (body size, rows, streams, stored SQL, queued responses)
 *     has a named error, never a silent truncation.
 */
#ifndef SHALE_SERVER_H
#define SHALE_SERVER_H

#include <jansson.h>
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

/* ---- errors (hrana.c) ---- */
/* A new Error object {message, code}. */
json_t *herr(const char *code, const char *fmt, ...);
/* The Error for the connection's last failure with result code rc. */
json_t *herr_db(shale *db, int rc);

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
Stream *stream_open(int readonly, json_t **err);
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
Stream *stream_http_get(const char *baton, int readonly, json_t **err);
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
/* Run one stream request of type `type` (execute, batch, sequence, describe,
 * store_sql, close_sql, get_autocommit) whose fields are in req; `store` is
 * where sql_ids live (the stream's for HTTP, the socket's for WS). Returns the
 * response object ({type, ...}) or NULL with *err set. `version` is the
 * negotiated protocol version (1..3): requests it lacks are refused. */
json_t *hrana_request(Stream *s, SqlStore *store, const char *type, json_t *req, int version,
                      json_t **err);
/* Run a batch as a v3 cursor: the entries (step_begin, row, step_end,
 * step_error, error), in order, as a JSON array. NULL with *err for a
 * malformed batch. */
json_t *hrana_cursor(Stream *s, SqlStore *store, json_t *batch, json_t **err);

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

/* ---- the Protobuf encoding (proto.c) ---- */
/* Hrana 3 in Protobuf is run as the JSON trees of the same messages: the
 * decoders give the tree a JSON client would have sent, the encoder packs a
 * result tree. */
/* A /v3-protobuf/pipeline body (PipelineReqBody; cursor: a /v3-protobuf/
 * cursor CursorReqBody) as the JSON body tree ({baton, requests} / {baton,
 * batch}); NULL for bytes that are not one. The caller owns the tree. */
json_t *proto_http_body(const void *buf, size_t n, int cursor);
/* A hrana3-protobuf ClientMsg as its JSON message tree ({type: "hello", jwt}
 * or {type: "request", request_id, request}; an object without a type when
 * it holds neither); NULL for bytes that are no ClientMsg. */
json_t *proto_ws_client_msg(const void *buf, size_t n);
typedef enum ProtoKind {
  PROTO_PIPELINE_RESP, /* {baton, base_url, results} as PipelineRespBody */
  PROTO_SERVER_MSG,    /* a WebSocket server message as ServerMsg */
  PROTO_CURSOR_HEAD,   /* {baton, base_url} as CursorRespBody, length-delimited */
  PROTO_CURSOR_ENTRY,  /* a cursor entry as CursorEntry, length-delimited */
} ProtoKind;
/* Pack tree j (borrowed) as the message of `kind`, handing the bytes to put
 * (jansson's dump-callback type, so an output buffer serves both
 * encodings). 0, or -1 when out of memory or put failed. */
int proto_encode(ProtoKind kind, json_t *j, int (*put)(const char *, size_t, void *), void *arg);

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
