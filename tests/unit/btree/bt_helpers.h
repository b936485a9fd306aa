/*
 * bt_helpers.h -- shared helpers for the b-tree unit tests (header-only,
 * static functions): a tiny record encoder/decoder (FORMAT-db.md §6), schema
 * registration so the reference sqlite3 can check our files, and an
 * integrity check through the sqlite3 C API.
 */
#ifndef BT_HELPERS_H
#define BT_HELPERS_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/btree/btree.h"
#include "../../../src/util/util.h"
#include "../../test.h"

/* One column value for the encoder: type 'i' int, 't' text, 'b' blob, 'n' null. */
typedef struct RecVal {
  char type;
  int64_t i;
  const void *p;
  uint32_t n;
} RecVal;

static uint32_t rec_int_type(int64_t v, int *len) {
  if (v == 0) {
    *len = 0;
    return 8;
  }
  if (v == 1) {
    *len = 0;
    return 9;
  }
  if (v >= -128 && v <= 127) {
    *len = 1;
    return 1;
  }
  if (v >= -32768 && v <= 32767) {
    *len = 2;
    return 2;
  }
  if (v >= -8388608 && v <= 8388607) {
    *len = 3;
    return 3;
  }
  if (v >= -2147483648LL && v <= 2147483647LL) {
    *len = 4;
    return 4;
  }
  if (v >= -(1LL << 47) && v < (1LL << 47)) {
    *len = 6;
    return 5;
  }
  *len = 8;
  return 6;
}

/* Encode a record into fresh malloc memory; *n gets its size. */
static uint8_t *rec_encode(const RecVal *v, int nv, uint32_t *n) {
  uint8_t hdr[256];
  int hl = 0;
  size_t body = 0;
  for (int i = 0; i < nv; i++) {
    uint64_t t;
    int len = 0;
    switch (v[i].type) {
      case 'i':
        t = rec_int_type(v[i].i, &len);
        break;
      case 't':
        t = 13 + 2 * (uint64_t)v[i].n;
        len = (int)v[i].n;
        break;
      case 'b':
        t = 12 + 2 * (uint64_t)v[i].n;
        len = (int)v[i].n;
        break;
      default:
        t = 0;
        break;
    }
    hl += util_put_varint(hdr + hl, t);
    body += (size_t)len;
  }
  int total_hl = hl + 1;
  if (total_hl > 127) total_hl++;
  uint8_t *out = malloc((size_t)total_hl + body + 1);
  int o = util_put_varint(out, (uint64_t)total_hl);
  memcpy(out + o, hdr, (size_t)hl);
  o += hl;
  for (int i = 0; i < nv; i++) {
    int len = 0;
    if (v[i].type == 'i') {
      rec_int_type(v[i].i, &len);
      for (int k = 0; k < len; k++) out[o + k] = (uint8_t)((uint64_t)v[i].i >> (8 * (len - 1 - k)));
      o += len;
    } else if (v[i].type == 't' || v[i].type == 'b') {
      memcpy(out + o, v[i].p, v[i].n);
      o += (int)v[i].n;
    }
  }
  *n = (uint32_t)o;
  return out;
}

/* Decode column col of a record (ints and blobs/text only). Returns 0 on
 * success; *t gets 'i', 'b', 't' or 'n'. */
__attribute__((unused)) static int rec_column(const uint8_t *r, uint32_t n, int col, char *t,
                                              int64_t *iv, const uint8_t **p, uint32_t *len) {
  uint64_t hl, st;
  int k = util_get_varint(r, &hl);
  uint32_t body = (uint32_t)hl;
  for (int c = 0; k < (int)hl; c++) {
    k += util_get_varint(r + k, &st);
    uint32_t sz;
    if (st >= 12)
      sz = (uint32_t)(st - 12) / 2;
    else {
      static const uint32_t s[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
      sz = st < 10 ? s[st] : 0;
    }
    if (c == col) {
      if (body + sz > n) return 1;
      *p = r + body;
      *len = sz;
      if (st == 0)
        *t = 'n';
      else if (st >= 12)
        *t = (st & 1) ? 't' : 'b';
      else {
        *t = 'i';
        if (st == 8 || st == 9)
          *iv = (int64_t)st - 8;
        else {
          int64_t v = (int8_t)r[body];
          for (uint32_t i = 1; i < sz; i++) v = (v << 8) | r[body + i];
          *iv = v;
        }
      }
      return 0;
    }
    body += sz;
  }
  return 1;
}

/* Insert a sqlite_schema row describing a tree (write transaction). */
static int bt_register(Btree *bt, int64_t rowid, const char *type, const char *name, uint32_t root,
                       const char *sql) {
  RecVal v[5] = {{'t', 0, type, (uint32_t)strlen(type)},
                 {'t', 0, name, (uint32_t)strlen(name)},
                 {'t', 0, name, (uint32_t)strlen(name)},
                 {'i', root, NULL, 0},
                 {'t', 0, sql, (uint32_t)strlen(sql)}};
  uint32_t n;
  uint8_t *rec = rec_encode(v, 5, &n);
  BtCursor *c;
  int rc = btree_cursor_open(bt, 1, 1, NULL, NULL, &c);
  if (rc == 0) {
    rc = btree_insert(c, rowid, rec, n, 0, 0);
    btree_cursor_close(c);
  }
  free(rec);
  if (rc == 0) {
    uint32_t cookie;
    btree_get_meta(bt, BTREE_META_SCHEMA_COOKIE, &cookie);
    btree_update_meta(bt, BTREE_META_SCHEMA_COOKIE, cookie + 1);
  }
  return rc;
}

/* Run PRAGMA integrity_check with the reference sqlite3; returns malloc'd
 * result text ("ok" when fine). */
static char *sqlite_check(const char *path) {
  sqlite3 *db;
  char *out = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    out = strdup(sqlite3_errmsg(db));
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK) {
    out = strdup(sqlite3_errmsg(db));
  } else {
    size_t cap = 1, len = 0;
    out = calloc(1, 1);
    int lines = 0;
    while (sqlite3_step(st) == SQLITE_ROW && lines++ < 20) {
      const char *t = (const char *)sqlite3_column_text(st, 0);
      size_t tl = strlen(t);
      out = realloc(out, cap + tl + 1);
      cap += tl + 1;
      if (len) out[len++] = '\n';
      memcpy(out + len, t, tl + 1);
      len += tl;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

#define CHECK_SQLITE_OK(path)                                                              \
  do {                                                                                     \
    char *_r = sqlite_check(path);                                                         \
    if (!_r || strcmp(_r, "ok")) test_fail(__FILE__, __LINE__, "integrity_check: %s", _r); \
    free(_r);                                                                              \
  } while (0)

/* Our own integrity check over page 1 and the given roots (read txn). */
#define CHECK_BT_INTEGRITY(bt, roots, n)                                        \
  do {                                                                          \
    char *_rep = NULL;                                                          \
    int _nerr = 0;                                                              \
    CHECK_OK(btree_integrity_check((bt), (roots), (n), 10, &_rep, &_nerr));     \
    if (_rep) test_fail(__FILE__, __LINE__, "btree_integrity_check: %s", _rep); \
    shale_free(_rep);                                                           \
  } while (0)

/* Deterministic payload of n bytes for key: a valid record (one blob
 * column) so that sqlite3 can check the files; bytes after the header are
 * a function of (key, position). */
static inline uint8_t pay_byte(int64_t key, uint32_t i) {
  return (uint8_t)((uint64_t)key * 31u + i * 7u + (i >> 8));
}

static void fill_payload(uint8_t *buf, int64_t key, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) buf[i] = pay_byte(key, i);
  if (n == 0) return;
  if (n == 1) {
    buf[0] = 1;
    return;
  }
  /* header: varint h, varint (12 + 2L), with L = n - h */
  for (int h = 2; h <= 11; h++) {
    uint64_t len = n - (uint32_t)h;
    if (n < (uint32_t)h) break;
    if (1 + util_varint_len(12 + 2 * len) == h) {
      buf[0] = (uint8_t)h;
      util_put_varint(buf + 1, 12 + 2 * len);
      return;
    }
  }
  /* no exact fit (e.g. n = 60): pad the header with a NULL column */
  for (int h = 3; h <= 12; h++) {
    uint64_t len = n - (uint32_t)h;
    if (n < (uint32_t)h) break;
    if (2 + util_varint_len(12 + 2 * len) == h) {
      buf[0] = (uint8_t)h;
      buf[1] = 0;
      util_put_varint(buf + 2, 12 + 2 * len);
      return;
    }
  }
}

__attribute__((unused)) static int payload_matches(BtCursor *c, int64_t key, uint32_t n) {
  if (btree_payload_size(c) != n) return 0;
  uint8_t *buf = malloc(n ? n : 1), *exp = malloc(n ? n : 1);
  fill_payload(exp, key, n);
  int ok = btree_payload_read(c, 0, n, buf) == 0 && memcmp(buf, exp, n) == 0;
  uint32_t na;
  const uint8_t *p = btree_payload_fetch(c, &na);
  if (ok && (na > n || (n && !p))) ok = 0;
  if (ok && na && memcmp(p, exp, na) != 0) ok = 0;
  /* a read in the middle (overflow cache path) */
  if (ok && n > 10) {
    uint32_t off = n / 3, len = n / 2;
    ok = btree_payload_read(c, off, len, buf) == 0 && memcmp(buf, exp + off, len) == 0;
  }
  free(buf);
  free(exp);
  return ok;
}

/* Open a fresh file database with the given page size and begin writing. */
static Btree *bt_fresh(const char *name, uint32_t page_size) {
  const char *path = test_path(name);
  char j[512];
  snprintf(j, sizeof j, "%s-journal", path);
  remove(path);
  remove(j);
  Btree *bt = NULL;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  if (!bt) return NULL;
  CHECK_OK(btree_set_page_size(bt, page_size, 0));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  return bt;
}

#endif
