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
 * generation of the baton and T 32 hex digits of secret held only here: a
 * counter encrypted with AES-128 under a key drawn from RAND_bytes once per
 * server (fresh_secret), so every secret is new and unpredictable and a
 * request costs one block encryption, not a call into the generator. Every response issues a
 * fresh one, so a baton is good for one request: a replayed, stale or forged baton does not match
 * the stored secret (compared in constant time) and is refused.
 *
 * Invariants:
 *  1. slots[i] is NULL or a live HTTP stream whose http_slot is i.
 *  2. A pooled connection is in autocommit mode with no statement open.
 *  3. n_open counts every open stream, HTTP and WebSocket.
 */
#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define POOL_MAX 32

static void secret_init(void);

typedef struct Conn {
  shale *db;
  StmtCache *cache;
} Conn;

static Conn pool[POOL_MAX];
static int n_pool;
static int n_open;
static Stream **slots;
static int n_slots;

void stream_init(void) {
  slots = calloc((size_t)g_cfg.max_streams, sizeof *slots);
  n_slots = g_cfg.max_streams;
  secret_init();
}

int stream_count(void) { return n_open; }

static void cache_drop(StmtCache *c, int i) {
  shale_finalize(c->v[i].st);
  free(c->v[i].sql);
  memmove(&c->v[i], &c->v[i + 1], (size_t)(c->n - i - 1) * sizeof c->v[0]);
  c->n--;
}

static int cache_holds(const StmtCache *c, const shale_stmt *st) {
  for (int i = 0; i < c->n; i++)
    if (c->v[i].st == st) return 1;
  return 0;
}

shale_stmt *stream_stmt_take(Stream *s, const char *sql, size_t len) {
  StmtCache *c = s->cache;
  for (int i = c ? c->n - 1 : -1; i >= 0; i--)
    if (c->v[i].len == len && !memcmp(c->v[i].sql, sql, len)) {
      shale_stmt *st = c->v[i].st;
      free(c->v[i].sql);
      memmove(&c->v[i], &c->v[i + 1], (size_t)(c->n - i - 1) * sizeof c->v[0]);
      c->n--;
      return st;
    }
  return NULL;
}

void stream_stmt_give(Stream *s, const char *sql, size_t len, shale_stmt *st) {
  StmtCache *c = s->cache;
  char *copy = c ? malloc(len + 1) : NULL;
  shale_reset(st);
  shale_clear_bindings(st);
  if (!copy) {
    shale_finalize(st);
    return;
  }
  memcpy(copy, sql, len);
  copy[len] = 0;
  if (c->n == STMT_CACHE_MAX) cache_drop(c, 0);
  c->v[c->n].sql = copy;
  c->v[c->n].len = len;
  c->v[c->n].st = st;
  c->n++;
}

static void conn_close(Conn *k) {
  while (k->cache && k->cache->n > 0) cache_drop(k->cache, k->cache->n - 1);
  free(k->cache);
  shale_close(k->db);
}

static int conn_open(Conn *out, HErr **err) {
  if (n_pool > 0) {
    *out = pool[--n_pool];
    return 0;
  }
  shale *db = NULL;
  int flags = g_cfg.readonly ? SHALE_OPEN_READONLY : SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE;
  int rc = shale_open_v2(g_cfg.db_path, &db, flags, NULL);
  if (rc != SHALE_OK) {
    *err = herr_db(db, rc);
    shale_close(db);
    return -1;
  }
  shale_busy_timeout(db, g_cfg.busy_ms);
  out->db = db;
  out->cache = calloc(1, sizeof *out->cache); /* NULL: the connection caches nothing */
  return 0;
}

static void conn_release(Conn k) {
  shale *db = k.db;
  if (!shale_get_autocommit(db)) shale_exec(db, "ROLLBACK", NULL, NULL, NULL);
  /* a statement the engine left open would keep the connection busy: the
   * cached ones are reset, any other is finalized */
  for (shale_stmt *st = shale_next_stmt(db, NULL), *next; st; st = next) {
    next = shale_next_stmt(db, st);
    if (k.cache && cache_holds(k.cache, st))
      shale_reset(st);
    else
      shale_finalize(st);
  }
  if (n_pool < POOL_MAX && shale_get_autocommit(db)) {
    pool[n_pool++] = k;
    return;
  }
  conn_close(&k);
}

Stream *stream_open(int readonly, HErr **err) {
  if (n_open >= g_cfg.max_streams) {
    *err = herr("STREAMS_TOO_MANY", "too many open streams (limit %d)", g_cfg.max_streams);
    return NULL;
  }
  Stream *s = calloc(1, sizeof *s);
  if (!s) {
    *err = herr("SQLITE_NOMEM", "out of memory");
    return NULL;
  }
  Conn k;
  if (conn_open(&k, err)) {
    free(s);
    return NULL;
  }
  s->db = k.db;
  s->cache = k.cache;
  s->readonly = readonly || g_cfg.readonly;
  s->http_slot = -1;
  s->last_used = server_now_ms();
  n_open++;
  return s;
}

void stream_close(Stream *s) {
  if (!s) return;
  conn_release((Conn){s->db, s->cache});
  sqlstore_clear(&s->sqls);
  if (s->http_slot >= 0) slots[s->http_slot] = NULL;
  free(s);
  n_open--;
}

/* Baton secrets: AES-128 (OpenSSL) under a key drawn once per server from
 * RAND_bytes, applied to a counter that never repeats. A block cipher under
 * a secret key is a pseudo-random permutation, so each secret is distinct
 * and unpredictable to anyone without the key, and a request costs one
 * block encryption instead of a call into the generator. Without the cipher
 * (its set-up failed) every secret comes from RAND_bytes. */
static EVP_CIPHER_CTX *baton_ctx;
static uint64_t baton_counter;

static void secret_init(void) {
  unsigned char key[16];
  if (RAND_bytes(key, sizeof key) != 1) return;
  baton_ctx = EVP_CIPHER_CTX_new();
  if (!baton_ctx || EVP_EncryptInit_ex(baton_ctx, EVP_aes_128_ecb(), NULL, key, NULL) != 1 ||
      EVP_CIPHER_CTX_set_padding(baton_ctx, 0) != 1) {
    EVP_CIPHER_CTX_free(baton_ctx);
    baton_ctx = NULL;
  }
  OPENSSL_cleanse(key, sizeof key);
}

/* 16 fresh secret bytes; all zeros (never accepted) when no randomness. */
static void fresh_secret(unsigned char out[16]) {
  unsigned char block[16] = {0};
  int len = 0;
  baton_counter++;
  memcpy(block, &baton_counter, sizeof baton_counter);
  if (baton_ctx && EVP_EncryptUpdate(baton_ctx, out, &len, block, 16) == 1 && len == 16) return;
  if (RAND_bytes(out, 16) != 1) memset(out, 0, 16);
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

Stream *stream_http_get(const char *baton, int readonly, HErr **err) {
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
  unsigned long slot, gen;
  unsigned char tok[16];
  const char *p = baton;
  char *end;
  int bad = !isdigit((unsigned char)*p);
  slot = strtoul(p, &end, 10);
  bad |= *end != '.' || !isdigit((unsigned char)end[1]);
  if (!bad) {
    gen = strtoul(end + 1, &end, 10);
    bad = *end != '.' || strlen(end + 1) != 32 || slot > UINT32_MAX || gen > UINT32_MAX;
  }
  for (int i = 0; !bad && i < 16; i++) {
    int hi = hexval(end[1 + 2 * i]), lo = hexval(end[2 + 2 * i]);
    if (hi < 0 || lo < 0)
      bad = 1; /* a byte is set only from two valid digits */
    else
      tok[i] = (unsigned char)(hi << 4 | lo);
  }
  if (bad) {
    *err = herr("BATON_INVALID", "the baton is malformed");
    return NULL;
  }
  Stream *s = slot < (unsigned long)n_slots ? slots[slot] : NULL;
  static const unsigned char zero[16];
  if (!s || s->gen != gen || !CRYPTO_memcmp(s->token, zero, 16) ||
      CRYPTO_memcmp(tok, s->token, 16) != 0) {
    *err = herr("STREAM_EXPIRED",
                "the stream of this baton is closed or expired, or the baton "
                "was already used");
    return NULL;
  }
  if (s->readonly < (readonly || g_cfg.readonly)) {
    *err = herr("AUTH_FORBIDDEN", "the baton belongs to a stream with other rights");
    return NULL;
  }
  /* single use: until the next baton is issued, this one is dead too (its
   * generation no longer matches, and the secret is wiped) */
  memset(s->token, 0, sizeof s->token);
  s->gen++;
  return s;
}

void stream_http_baton(Stream *s, char *buf, size_t n) {
  static const char hex[] = "0123456789abcdef";
  s->gen++;
  fresh_secret(s->token);
  int k = snprintf(buf, n, "%d.%u.", s->http_slot, s->gen);
  for (int i = 0; i < 16 && (size_t)k + 2 < n; i++) {
    buf[k++] = hex[s->token[i] >> 4];
    buf[k++] = hex[s->token[i] & 15];
  }
  buf[k < (int)n ? k : (int)n - 1] = 0;
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
  while (n_pool > 0) conn_close(&pool[--n_pool]);
  free(slots);
  slots = NULL;
  EVP_CIPHER_CTX_free(baton_ctx);
  baton_ctx = NULL;
}
