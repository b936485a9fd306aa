/*
 * main.c -- build/shale-server: options, the database's set-up (WAL), the
 * libwebsockets context and its loop, the once-a-second sweep (idle HTTP
 * streams expire, WS transactions idle too long roll back), and shutdown on
 * SIGINT/SIGTERM.
 *
 *   shale-server [--db FILE] [--listen HOST:PORT] [--auth-jwt-key-file FILE]
 *                [--readonly] [--no-wal] [--stream-timeout MS] [--txn-timeout MS]
 *                [--max-body BYTES] [--max-rows N] [--max-streams N]
 *                [--max-sql N] [--max-inflight N] [--busy-timeout MS] [--quiet]
 *
 * Invariants:
 *  1. The server prints "listening on HOST:PORT" (the real port, also for
 *     port 0) on stdout, flushed, once it accepts connections; tests wait
 *     for that line.
 *  2. Exit status 0 after a signal, 1 for bad options or a failed start.
 */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

ServerConfig g_cfg = {
    .db_path = "shale-server.db",
    .host = "127.0.0.1",
    .port = 8080,
    .stream_timeout_ms = 10000,
    .txn_timeout_ms = 10000,
    .max_body = 10 << 20,
    .max_rows = 100000,
    .max_streams = 1024,
    .max_sql = 1000,
    .max_inflight = 64,
    .busy_ms = 0,
    .journal_wal = 1,
};

static volatile sig_atomic_t stop;
static struct lws_context *ctx;
static lws_sorted_usec_list_t sweep_sul;

int64_t server_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig) {
  stop = 1;
  if (ctx) lws_cancel_service(ctx);
}

static void sweep(lws_sorted_usec_list_t *sul) {
  stream_http_sweep();
  net_sweep();
  lws_sul_schedule(ctx, 0, &sweep_sul, sweep, LWS_US_PER_SEC / 4);
}

static void usage(void) {
  fprintf(stderr,
          "usage: shale-server [--db FILE] [--listen HOST:PORT] [--auth-jwt-key-file FILE]\n"
          "                    [--readonly] [--no-wal] [--stream-timeout MS] [--txn-timeout MS]\n"
          "                    [--max-body BYTES] [--max-rows N] [--max-streams N] [--max-sql N]\n"
          "                    [--max-inflight N] [--busy-timeout MS] [--quiet]\n"
          "       shale-server token --key PRIVATE.pem [--ttl SECONDS] [--read-only]\n"
          "         (prints a JWT for --auth-jwt-key-file's public key; ttl 0: no exp)\n");
}

/* Open the database once: create it, switch it to WAL, check it reads. */
static int db_setup(void) {
  shale *db = NULL;
  int flags = g_cfg.readonly ? SHALE_OPEN_READONLY : SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE;
  int rc = shale_open_v2(g_cfg.db_path, &db, flags, NULL);
  char *msg = NULL;
  if (rc == SHALE_OK && g_cfg.journal_wal && !g_cfg.readonly)
    rc = shale_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, &msg);
  if (rc == SHALE_OK) rc = shale_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, &msg);
  if (rc != SHALE_OK) {
    fprintf(stderr, "shale-server: %s: %s\n", g_cfg.db_path, msg ? msg : shale_errmsg(db));
    shale_free(msg);
    shale_close(db);
    return -1;
  }
  shale_close(db);
  return 0;
}

int main(int argc, char **argv) {
  int quiet = 0;
  char host[256];
  if (argc > 1 && !strcmp(argv[1], "token")) {
    const char *key = NULL;
    long ttl = 3600;
    int ro = 0;
    for (int i = 2; i < argc; i++) {
      if (!strcmp(argv[i], "--key") && i + 1 < argc)
        key = argv[++i];
      else if (!strcmp(argv[i], "--ttl") && i + 1 < argc)
        ttl = atol(argv[++i]);
      else if (!strcmp(argv[i], "--read-only"))
        ro = 1;
      else
        key = NULL, i = argc;
    }
    if (!key) {
      usage();
      return 1;
    }
    return auth_make_token(key, ttl, ro);
  }
  snprintf(host, sizeof host, "%s", g_cfg.host);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(opt, field)       \
  if (!strcmp(a, opt) && v) { \
    g_cfg.field = atoi(v);    \
    i++;                      \
    continue;                 \
  }
    NUM("--stream-timeout", stream_timeout_ms)
    NUM("--txn-timeout", txn_timeout_ms)
    NUM("--max-rows", max_rows)
    NUM("--max-streams", max_streams)
    NUM("--max-sql", max_sql)
    NUM("--max-inflight", max_inflight)
    NUM("--busy-timeout", busy_ms)
#undef NUM
    if (!strcmp(a, "--db") && v) {
      g_cfg.db_path = argv[++i];
    } else if (!strcmp(a, "--listen") && v) {
      const char *colon = strrchr(v, ':');
      if (!colon) {
        usage();
        return 1;
      }
      snprintf(host, sizeof host, "%.*s", (int)(colon - v), v);
      g_cfg.port = atoi(colon + 1);
      i++;
    } else if (!strcmp(a, "--auth-jwt-key-file") && v) {
      g_cfg.key_file = argv[++i];
    } else if (!strcmp(a, "--max-body") && v) {
      g_cfg.max_body = (size_t)atoll(argv[++i]);
    } else if (!strcmp(a, "--readonly")) {
      g_cfg.readonly = 1;
    } else if (!strcmp(a, "--no-wal")) {
      g_cfg.journal_wal = 0;
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1;
    } else {
      usage();
      return !strcmp(a, "--help") || !strcmp(a, "-h") ? 0 : 1;
    }
  }
  if (g_cfg.max_streams < 1 || g_cfg.max_inflight < 2 || g_cfg.max_rows < 1 ||
      g_cfg.max_body < 64) {
    fprintf(stderr, "shale-server: a limit is too small\n");
    return 1;
  }
  g_cfg.host = host;
  if (g_cfg.key_file && auth_load(g_cfg.key_file)) return 1;
  if (db_setup()) return 1;
  stream_init();

  lws_set_log_level(quiet ? LLL_ERR : LLL_ERR | LLL_WARN, NULL);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = g_cfg.port;
  info.iface = host;
  info.protocols = net_protocol_table();
  info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
  info.max_http_header_data = 8192;
  info.keepalive_timeout = 30;
  info.timeout_secs = 30;
  ctx = lws_create_context(&info);
  if (!ctx) {
    fprintf(stderr, "shale-server: cannot listen on %s:%d\n", host, g_cfg.port);
    return 1;
  }
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  struct lws_vhost *vh = lws_get_vhost_by_name(ctx, "default");
  int port = vh ? lws_get_vhost_listen_port(vh) : g_cfg.port;
  printf("listening on %s:%d\n", host, port);
  fflush(stdout);
  lws_sul_schedule(ctx, 0, &sweep_sul, sweep, LWS_US_PER_SEC / 4);
  while (!stop && lws_service(ctx, 0) >= 0) {
  }
  lws_sul_cancel(&sweep_sul);
  lws_context_destroy(ctx);
  net_shutdown();
  hjson_shutdown();
  arena_release();
  stream_shutdown();
  auth_free();
  return 0;
}
