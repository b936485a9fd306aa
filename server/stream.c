/*
 * stream.c -- streams, the pool of idle connections, and the HTTP baton
 * table.
 *
 * A stream owns one shale connection for its life, so a transaction begun
 * in one request continues in the next. Connections come from a pool of
 * idle ones (opening one reads the schema); a stream that closes outside a
 * transaction gives its connection back, one still inside a transaction is
 * rolled back first.
 *
 * Batons (HTTP): "S.G.T" where S is the stream's slot in the table, G the
 * generation of the baton and T 32 hex digits of random secret (OpenSSL
 * RAND_bytes) held only here. Every response issues a fresh one, so a
 * baton is good for one request: a replayed, stale or forged baton does not
 * match the stored secret (compared in constant time) and is refused.
 *
 * Invariants:
 *  1. slots[i] is NULL or a live HTTP stream whose http_slot is i.
 *  2. A pooled connection is in autocommit mode with no statement open.
 *  3. n_open counts every open stream, HTTP and WebSocket.
 */
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define POOL_MAX 32

static shale *pool[POOL_MAX];
static int n_pool;
static int n_open;
static Stream **slots;
static int n_slots;

void stream_init(void) {
  slots = calloc((size_t)g_cfg.max_streams, sizeof *slots);
  n_slots = g_cfg.max_streams;
}

int stream_count(void) { return n_open; }

static shale *conn_open(json_t **err) {
  if (n_pool > 0) return pool[--n_pool];
  shale *db = NULL;
  int flags = g_cfg.readonly ? SHALE_OPEN_READONLY : SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE;
  int rc = shale_open_v2(g_cfg.db_path, &db, flags, NULL);
  if (rc != SHALE_OK) {
    *err = herr_db(db, rc);
    shale_close(db);
    return NULL;
  }
  shale_busy_timeout(db, g_cfg.busy_ms);
  return db;
}

static void conn_release(shale *db) {
  if (!shale_get_autocommit(db)) shale_exec(db, "ROLLBACK", NULL, NULL, NULL);
  /* a statement the engine left open would keep the connection busy */
  for (shale_stmt *st; (st = shale_next_stmt(db, NULL));) shale_finalize(st);
  if (n_pool < POOL_MAX && shale_get_autocommit(db)) {
    pool[n_pool++] = db;
    return;
  }
  shale_close(db);
}

Stream *stream_open(int readonly, json_t **err) {
  if (n_open >= g_cfg.max_streams) {
    *err = herr("STREAMS_TOO_MANY", "too many open streams (limit %d)", g_cfg.max_streams);
    return NULL;
  }
  Stream *s = calloc(1, sizeof *s);
  if (!s) {
    *err = herr("SQLITE_NOMEM", "out of memory");
    return NULL;
  }
  if (!(s->db = conn_open(err))) {
    free(s);
    return NULL;
  }
  s->readonly = readonly || g_cfg.readonly;
  s->http_slot = -1;
  s->last_used = server_now_ms();
  n_open++;
  return s;
}

void stream_close(Stream *s) {
  if (!s) return;
  conn_release(s->db);
  sqlstore_clear(&s->sqls);
  if (s->http_slot >= 0) slots[s->http_slot] = NULL;
  free(s);
  n_open--;
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

Stream *stream_http_get(const char *baton, int readonly, json_t **err) {
  if (!baton) {
    Stream *s = stream_open(readonly, err);
    if (!s) return NULL;
    int i = 0;
    while (i < n_slots && slots[i]) i++;
    if (i == n_slots) { /* n_open < max_streams makes this unreachable */
      stream_close(s);
      *err = herr("STREAMS_TOO_MANY", "too many open streams");
      return NULL;
    }
    slots[i] = s;
    s->http_slot = i;
    return s;
  }
  unsigned slot, gen;
  char hex[33];
  unsigned char tok[16];
  int used = 0;
  if (sscanf(baton, "%u.%u.%32[0-9a-f]%n", &slot, &gen, hex, &used) != 3 || baton[used] != 0 ||
      strlen(hex) != 32) {
    *err = herr("BATON_INVALID", "the baton is malformed");
    return NULL;
  }
  for (int i = 0; i < 16; i++)
    tok[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
  Stream *s = slot < (unsigned)n_slots ? slots[slot] : NULL;
  if (!s || s->gen != gen || CRYPTO_memcmp(tok, s->token, 16) != 0) {
    *err = herr("STREAM_EXPIRED",
                "the stream of this baton is closed or expired, or the baton "
                "was already used");
    return NULL;
  }
  if (s->readonly < (readonly || g_cfg.readonly)) {
    *err = herr("AUTH_FORBIDDEN", "the baton belongs to a stream with other rights");
    return NULL;
  }
  /* single use: until the next baton is issued, this one is dead too */
  RAND_bytes(s->token, sizeof s->token);
  s->gen++;
  return s;
}

void stream_http_baton(Stream *s, char *buf, size_t n) {
  s->gen++;
  if (RAND_bytes(s->token, sizeof s->token) != 1) memset(s->token, 0, sizeof s->token);
  int k = snprintf(buf, n, "%d.%u.", s->http_slot, s->gen);
  for (int i = 0; i < 16 && (size_t)k + 2 < n; i++)
    k += snprintf(buf + k, n - (size_t)k, "%02x", s->token[i]);
  s->last_used = server_now_ms();
}

void stream_http_close(Stream *s) { stream_close(s); }

void stream_http_sweep(void) {
  int64_t now = server_now_ms();
  for (int i = 0; i < n_slots; i++)
    if (slots[i] && now - slots[i]->last_used > g_cfg.stream_timeout_ms) stream_close(slots[i]);
}

void stream_shutdown(void) {
  for (int i = 0; i < n_slots; i++)
    if (slots[i]) stream_close(slots[i]);
  while (n_pool > 0) shale_close(pool[--n_pool]);
  free(slots);
  slots = NULL;
}
