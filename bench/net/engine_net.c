/*
 * engine_net.c -- the benchmark workloads compiled a third time, against a
 * small SQLite-shaped client of build/shale-server: every call that needs
 * the database is a Hrana 2 pipeline request (JSON over HTTP/1.1 with
 * keep-alive, libcurl + jansson), the way a remote libSQL client reaches
 * sqld. shale-netbench (netbench.c) runs these rows next to the same rows
 * on the embedded native API.
 *
 * The client, one object per call of the API shape workloads.inc uses:
 *   net_open_v2   starts (once per database path and process) a
 *                 shale-server child on a loopback port for the file and
 *                 opens one HTTP connection (a curl handle) to it;
 *   net_prepare_v2 keeps the SQL text: like @libsql/client, nothing goes to
 *                 the server until the statement runs;
 *   net_step      the first step after a reset sends one execute request with
 *                 the bound arguments and receives every row; later steps
 *                 walk the received rows;
 *   net_exec      one sequence request (several statements, no rows).
 *
 * Invariants:
 *  1. One connection is one Hrana stream: the baton of each response goes
 *     with the next request, so BEGIN ... COMMIT spanning requests runs on
 *     the same server-side connection, as an interactive transaction does.
 *  2. Values cross the wire as the spec encodes them (integers as decimal
 *     strings, floats as numbers, blobs as base64) and come back with their
 *     types, so a workload's checksum is the embedded engine's.
 *  3. The server child dies with this process (PR_SET_PDEATHSIG) and is
 *     stopped by FINISH_NAME; a database path of ":memory:" is refused (each
 *     server connection would see its own database).
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define NET_OK 0
#define NET_ERROR 1
#define NET_BUSY 5
#define NET_CONSTRAINT 19
#define NET_ROW 100
#define NET_DONE 101
#define NET_INTEGER 1
#define NET_FLOAT 2
#define NET_TEXT 3
#define NET_BLOB 4
#define NET_NULL 5

typedef void (*net_destructor)(void *);
#define NET_STATIC ((net_destructor)0)
#define NET_TRANSIENT ((net_destructor)-1)

/* ------------------------------------------------------------ the server */

static struct {
  char path[512]; /* database the server serves ("" when none runs) */
  pid_t pid;
  char url[128]; /* http://127.0.0.1:PORT/v2/pipeline */
} g_server;

static void server_stop(void) {
  if (!g_server.path[0]) return;
  kill(g_server.pid, SIGTERM);
  waitpid(g_server.pid, NULL, 0);
  g_server.path[0] = 0;
}

/* The shale-server binary: $SHALE_SERVER, else beside this program. */
static void server_binary(char *out, size_t n) {
  const char *env = getenv("SHALE_SERVER");
  if (env && *env) {
    snprintf(out, n, "%s", env);
    return;
  }
  char self[1024];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  self[k > 0 ? k : 0] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  snprintf(out, n, "%s/shale-server", slash ? self : ".");
}

/* Start a server for path unless one runs for it; 0 on success. The
 * server's busy timeout is the workloads' (10 s) so that no statement fails
 * with SQLITE_BUSY where the embedded engine would wait. */
static int server_start(const char *path, char *err, size_t errn) {
  if (g_server.path[0] && !strcmp(g_server.path, path)) return 0;
  server_stop();
  char bin[1100];
  server_binary(bin, sizeof bin);
  int fds[2];
  if (pipe(fds)) return snprintf(err, errn, "pipe: %s", strerror(errno)), 1;
  pid_t pid = fork();
  if (pid < 0) return snprintf(err, errn, "fork: %s", strerror(errno)), 1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(bin, "shale-server", "--db", path, "--listen", "127.0.0.1:0", "--busy-timeout", "10000",
          "--max-rows", "10000000", "--max-body", "268435456", (char *)NULL);
    fprintf(stderr, "cannot run %s: %s\n", bin, strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[256] = {0};
  int port = 0;
  while (in && fgets(line, sizeof line, in))
    if (sscanf(line, "listening on %*[^:]:%d", &port) == 1) break;
  if (in) fclose(in);
  if (port <= 0) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    return snprintf(err, errn, "%.400s did not start (is it built? make server)", bin), 1;
  }
  g_server.pid = pid;
  snprintf(g_server.path, sizeof g_server.path, "%s", path);
  snprintf(g_server.url, sizeof g_server.url, "http://127.0.0.1:%d/v2/pipeline", port);
  return 0;
}

/* ------------------------------------------------------------ connections */

typedef struct NetDb {
  CURL *curl;
  struct curl_slist *headers;
  char *baton; /* the stream's baton, NULL before the first request */
  char err[512];
  long long changes, last_rowid;
  char *body; /* the last response body */
  size_t len, cap;
} NetDb;

typedef struct NetStmt {
  NetDb *db;
  char *sql;
  json_t *args;   /* array of encoded values, index = parameter - 1 */
  json_t *result; /* the execute result of the current run, or NULL */
  size_t row;     /* rows stepped so far */
  size_t nrows;
  int ncols;
  char **cache; /* decoded text/blob of the current row, per column */
  int *cache_n;
} NetStmt;

static size_t on_body(char *p, size_t size, size_t n, void *arg) {
  NetDb *db = arg;
  size_t k = size * n;
  if (db->len + k + 1 > db->cap) {
    size_t cap = db->cap ? db->cap : 4096;
    while (cap < db->len + k + 1) cap *= 2;
    char *b = realloc(db->body, cap);
    if (!b) return 0;
    db->body = b;
    db->cap = cap;
  }
  memcpy(db->body + db->len, p, k);
  db->len += k;
  db->body[db->len] = 0;
  return k;
}

static int set_err(NetDb *db, int rc, const char *fmt, const char *what) {
  snprintf(db->err, sizeof db->err, fmt, what);
  return rc;
}

/* Send {"baton", "requests": [req, extra]} (extra may be NULL) and return
 * the first result's response object (owned by *holder; the second result
 * is in (*holder)["results"][1]), or NULL with db->err set and *rc the code. */
static json_t *pipeline(NetDb *db, json_t *req, json_t *extra, json_t **holder, int *rc) {
  json_t *body = json_pack("{s:s?,s:[o,o*]}", "baton", db->baton, "requests", req, extra);
  char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  *holder = NULL;
  *rc = NET_ERROR;
  if (!text) return set_err(db, 0, "%s", "out of memory encoding a request"), NULL;
  db->len = 0;
  curl_easy_setopt(db->curl, CURLOPT_POSTFIELDS, text);
  curl_easy_setopt(db->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
  CURLcode cc = curl_easy_perform(db->curl);
  free(text);
  if (cc != CURLE_OK)
    return set_err(db, 0, "HTTP request failed: %s", curl_easy_strerror(cc)), NULL;
  long status = 0;
  curl_easy_getinfo(db->curl, CURLINFO_RESPONSE_CODE, &status);
  json_t *resp = json_loadb(db->body ? db->body : "", db->len, 0, NULL);
  if (status != 200 || !resp) {
    json_decref(resp);
    snprintf(db->err, sizeof db->err, "HTTP %ld: %.400s", status, db->body ? db->body : "");
    return NULL;
  }
  free(db->baton);
  const char *baton = json_string_value(json_object_get(resp, "baton"));
  db->baton = baton ? strdup(baton) : NULL;
  json_t *res = json_array_get(json_object_get(resp, "results"), 0);
  const char *type = json_string_value(json_object_get(res, "type"));
  *holder = resp;
  if (type && !strcmp(type, "ok")) {
    *rc = NET_OK;
    return json_object_get(res, "response");
  }
  json_t *e = json_object_get(res, "error");
  const char *code = json_string_value(json_object_get(e, "code"));
  snprintf(db->err, sizeof db->err, "%s",
           json_string_value(json_object_get(e, "message")) ?: "request failed");
  if (code && !strcmp(code, "SQLITE_BUSY")) *rc = NET_BUSY;
  if (code && !strncmp(code, "SQLITE_CONSTRAINT", 17)) *rc = NET_CONSTRAINT;
  return NULL;
}

static int net_open_v2(const char *path, NetDb **out, int flags, const char *vfs) {
  (void)flags;
  (void)vfs;
  NetDb *db = calloc(1, sizeof *db);
  *out = db;
  if (!db) return NET_ERROR;
  if (!strcmp(path, ":memory:") || !path[0])
    return set_err(db, NET_ERROR, "%s: a server serves a file, not a private database", path);
  if (server_start(path, db->err, sizeof db->err)) return NET_ERROR;
  db->curl = curl_easy_init();
  if (!db->curl) return set_err(db, NET_ERROR, "%s", "curl_easy_init failed");
  /* No "Expect: 100-continue" on larger bodies: curl would wait for an
   * interim response the protocol does not need. */
  db->headers = curl_slist_append(NULL, "Content-Type: application/json");
  if (db->headers) db->headers = curl_slist_append(db->headers, "Expect:");
  curl_easy_setopt(db->curl, CURLOPT_URL, g_server.url);
  curl_easy_setopt(db->curl, CURLOPT_HTTPHEADER, db->headers);
  curl_easy_setopt(db->curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(db->curl, CURLOPT_WRITEDATA, db);
  curl_easy_setopt(db->curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(db->curl, CURLOPT_NOSIGNAL, 1L);
  return NET_OK;
}

static int net_close(NetDb *db) {
  if (!db) return NET_OK;
  if (db->curl && db->baton) { /* end the stream: its connection goes back to the pool */
    json_t *holder;
    int rc;
    pipeline(db, json_pack("{s:s}", "type", "close"), NULL, &holder, &rc);
    json_decref(holder);
  }
  if (db->curl) curl_easy_cleanup(db->curl);
  curl_slist_free_all(db->headers);
  free(db->baton);
  free(db->body);
  free(db);
  return NET_OK;
}

/* Not inlined: the callers copy the message into buffers of their own size
 * with snprintf, and its length is not theirs to know. */
__attribute__((noinline)) static const char *net_errmsg(NetDb *db) {
  return db ? db->err : "out of memory";
}
static void net_free(void *p) { free(p); }
static long long net_changes(NetDb *db) { return db->changes; }
static long long net_last_insert_rowid(NetDb *db) { return db->last_rowid; }

/* The server waits for locks itself (server_start gives it the workloads'
 * timeout), so the client has nothing to set. */
static int net_busy_timeout(NetDb *db, int ms) {
  (void)db;
  (void)ms;
  return NET_OK;
}

/* Run SQL text of any number of statements (a sequence request), with
 * "SELECT changes(), last_insert_rowid()" in the same round trip, since a
 * sequence reports no counts and programs read changes() after an exec. Row
 * callbacks are not part of the Hrana sequence request: a callback is
 * refused with an error rather than silently not called. */
static int net_exec(NetDb *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
                    char **errmsg) {
  (void)arg;
  if (errmsg) *errmsg = NULL;
  int rc = NET_ERROR;
  if (cb) {
    set_err(db, 0, "%s", "exec with a row callback is not available over the network");
  } else {
    json_t *holder;
    json_t *counts = json_pack("{s:s,s:{s:s,s:b}}", "type", "execute", "stmt", "sql",
                               "SELECT changes(), last_insert_rowid()", "want_rows", 1);
    if (pipeline(db, json_pack("{s:s,s:s}", "type", "sequence", "sql", sql), counts, &holder,
                 &rc)) {
      json_t *res = json_array_get(json_object_get(holder, "results"), 1);
      json_t *row = json_array_get(
          json_object_get(json_object_get(json_object_get(res, "response"), "result"), "rows"), 0);
      const char *ch = json_string_value(json_object_get(json_array_get(row, 0), "value"));
      const char *id = json_string_value(json_object_get(json_array_get(row, 1), "value"));
      if (ch) db->changes = strtoll(ch, NULL, 10);
      if (id) db->last_rowid = strtoll(id, NULL, 10);
    }
    json_decref(holder);
  }
  if (rc != NET_OK && errmsg) *errmsg = strdup(db->err);
  return rc;
}

/* ------------------------------------------------------------ statements */

static int net_prepare_v2(NetDb *db, const char *sql, int n, NetStmt **out, const char **tail) {
  NetStmt *st = calloc(1, sizeof *st);
  *out = st;
  if (tail) *tail = sql + (n < 0 ? strlen(sql) : (size_t)n);
  if (!st) return set_err(db, NET_ERROR, "%s", "out of memory");
  st->db = db;
  st->sql = n < 0 ? strdup(sql) : strndup(sql, (size_t)n);
  st->args = json_array();
  if (!st->sql || !st->args) return set_err(db, NET_ERROR, "%s", "out of memory");
  return NET_OK;
}

static void cache_clear(NetStmt *st) {
  if (!st->cache) return;
  for (int i = 0; i < st->ncols; i++) {
    free(st->cache[i]);
    st->cache[i] = NULL;
  }
}

static int net_reset(NetStmt *st) {
  if (!st) return NET_OK;
  cache_clear(st);
  json_decref(st->result);
  st->result = NULL;
  st->row = st->nrows = 0;
  return NET_OK;
}

static int net_finalize(NetStmt *st) {
  if (!st) return NET_OK;
  net_reset(st);
  free(st->cache);
  free(st->cache_n);
  json_decref(st->args);
  free(st->sql);
  free(st);
  return NET_OK;
}

static int bind_value(NetStmt *st, int i, json_t *v) {
  if (!v || i < 1) return json_decref(v), NET_ERROR;
  while ((int)json_array_size(st->args) < i)
    json_array_append_new(st->args, json_pack("{s:s}", "type", "null"));
  json_array_set_new(st->args, (size_t)i - 1, v);
  return NET_OK;
}

static int net_bind_int64(NetStmt *st, int i, long long v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%lld", v);
  return bind_value(st, i, json_pack("{s:s,s:s}", "type", "integer", "value", buf));
}

static int net_bind_double(NetStmt *st, int i, double v) {
  return bind_value(st, i, json_pack("{s:s,s:f}", "type", "float", "value", v));
}

static int net_bind_text(NetStmt *st, int i, const char *z, int n, net_destructor d) {
  size_t len = n < 0 ? strlen(z) : (size_t)n;
  int rc = bind_value(st, i, json_pack("{s:s,s:s%}", "type", "text", "value", z, len));
  if (d != NET_STATIC && d != NET_TRANSIENT) d((void *)z);
  return rc;
}

static int net_bind_blob(NetStmt *st, int i, const void *p, int n, net_destructor d) {
  char *enc = malloc(4 * ((size_t)n / 3 + 1) + 1);
  if (!enc) return NET_ERROR;
  EVP_EncodeBlock((unsigned char *)enc, p, n);
  int rc = bind_value(st, i, json_pack("{s:s,s:s}", "type", "blob", "base64", enc));
  free(enc);
  if (d != NET_STATIC && d != NET_TRANSIENT) d((void *)p);
  return rc;
}

/* Send the statement with its arguments; keep the result. */
static int run(NetStmt *st) {
  json_t *holder;
  int rc;
  json_t *req = json_pack("{s:s,s:{s:s,s:O,s:b}}", "type", "execute", "stmt", "sql", st->sql,
                          "args", st->args, "want_rows", 1);
  json_t *resp = pipeline(st->db, req, NULL, &holder, &rc);
  if (!resp) {
    json_decref(holder);
    return rc;
  }
  json_t *res = json_object_get(resp, "result");
  st->result = json_incref(res);
  json_decref(holder);
  st->nrows = json_array_size(json_object_get(res, "rows"));
  int ncols = (int)json_array_size(json_object_get(res, "cols"));
  if (ncols > st->ncols || !st->cache) {
    cache_clear(st);
    free(st->cache);
    free(st->cache_n);
    st->cache = calloc((size_t)ncols + 1, sizeof *st->cache);
    st->cache_n = calloc((size_t)ncols + 1, sizeof *st->cache_n);
    if (!st->cache || !st->cache_n) return set_err(st->db, NET_ERROR, "%s", "out of memory");
  }
  st->ncols = ncols;
  st->db->changes = json_integer_value(json_object_get(res, "affected_row_count"));
  const char *rowid = json_string_value(json_object_get(res, "last_insert_rowid"));
  if (rowid) st->db->last_rowid = strtoll(rowid, NULL, 10);
  return NET_OK;
}

static int net_step(NetStmt *st) {
  if (st->result && st->row > st->nrows) net_reset(st); /* after DONE: run again */
  if (!st->result) {
    int rc = run(st);
    if (rc != NET_OK) return rc;
  }
  cache_clear(st);
  if (st->row >= st->nrows) {
    st->row = st->nrows + 1; /* DONE reported: the next step runs it again */
    return NET_DONE;
  }
  st->row++;
  return NET_ROW;
}

static int net_column_count(NetStmt *st) { return st->result ? st->ncols : 0; }

static json_t *cell(NetStmt *st, int i) {
  if (!st->result || st->row < 1 || st->row > st->nrows || i < 0 || i >= st->ncols) return NULL;
  return json_array_get(json_array_get(json_object_get(st->result, "rows"), st->row - 1),
                        (size_t)i);
}

static int net_column_type(NetStmt *st, int i) {
  const char *t = json_string_value(json_object_get(cell(st, i), "type"));
  if (!t) return NET_NULL;
  if (!strcmp(t, "integer")) return NET_INTEGER;
  if (!strcmp(t, "float")) return NET_FLOAT;
  if (!strcmp(t, "text")) return NET_TEXT;
  if (!strcmp(t, "blob")) return NET_BLOB;
  return NET_NULL;
}

static long long net_column_int64(NetStmt *st, int i) {
  json_t *v = json_object_get(cell(st, i), "value");
  if (json_is_string(v)) return strtoll(json_string_value(v), NULL, 10);
  return json_is_number(v) ? (long long)json_number_value(v) : 0;
}

static double net_column_double(NetStmt *st, int i) {
  json_t *v = json_object_get(cell(st, i), "value");
  if (json_is_string(v)) return strtod(json_string_value(v), NULL);
  return json_is_number(v) ? json_number_value(v) : 0;
}

/* The column as bytes: text as sent (integers and floats as SQLite prints
 * them), blobs decoded; kept until the next step or reset. */
static const char *column_bytes_of(NetStmt *st, int i, int *n) {
  *n = 0;
  json_t *c = cell(st, i);
  if (!c) return NULL;
  if (st->cache[i]) {
    *n = st->cache_n[i];
    return st->cache[i];
  }
  int type = net_column_type(st, i);
  char *out = NULL;
  int len = 0;
  if (type == NET_TEXT) {
    json_t *v = json_object_get(c, "value");
    len = (int)json_string_length(v);
    out = malloc((size_t)len + 1);
    if (out) memcpy(out, json_string_value(v), (size_t)len + 1);
  } else if (type == NET_BLOB) {
    const char *b64 = json_string_value(json_object_get(c, "base64"));
    size_t bn = b64 ? strlen(b64) : 0;
    out = malloc(bn / 4 * 3 + 4);
    if (out && bn % 4 == 0) {
      len = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)b64, (int)bn);
      while (len > 0 && bn > 0 && b64[bn - 1] == '=') len--, bn--; /* padding decodes as 0 bytes */
    }
  } else if (type == NET_INTEGER || type == NET_FLOAT) {
    out = malloc(32);
    if (out)
      len = type == NET_INTEGER ? snprintf(out, 32, "%lld", net_column_int64(st, i))
                                : snprintf(out, 32, "%.15g", net_column_double(st, i));
  } else {
    return NULL;
  }
  if (!out || len < 0) return free(out), NULL;
  out[len] = 0;
  st->cache[i] = out;
  st->cache_n[i] = len;
  *n = len;
  return out;
}

static const unsigned char *net_column_text(NetStmt *st, int i) {
  int n;
  return (const unsigned char *)column_bytes_of(st, i, &n);
}

static const void *net_column_blob(NetStmt *st, int i) {
  int n;
  return column_bytes_of(st, i, &n);
}

static int net_column_bytes(NetStmt *st, int i) {
  int n;
  column_bytes_of(st, i, &n);
  return n;
}

/* ------------------------------------------------------------ the workloads */

#define E(x) net_##x
#define EDB NetDb
#define ESTMT NetStmt
#define E_OK NET_OK
#define E_ROW NET_ROW
#define E_DONE NET_DONE
#define E_INTEGER NET_INTEGER
#define E_FLOAT NET_FLOAT
#define E_TEXT NET_TEXT
#define E_BLOB NET_BLOB
#define E_NULL NET_NULL
#define E_TRANSIENT NET_TRANSIENT
#define E_STATIC NET_STATIC
#define E_OPEN_RW 6
#define ROWS_NAME bench_rows_net
#define FINISH_NAME bench_finish_net_rows
#include "../workloads.inc"

/* After a row's last repetition: close its connection, stop its server. */
void bench_finish_net(void) {
  bench_finish_net_rows();
  server_stop();
}

const int bench_nrows_net = (int)(sizeof bench_rows_net / sizeof bench_rows_net[0]);
