/*
 * twork.c -- TEST SCAFFOLDING: the crash tests' deterministic workload (see
 * twork.h). Row values are generated into a per-call buffer; nothing here
 * allocates through shale_malloc except via tdb.
 *
 * Invariants:
 *  1. mix() is a fixed function: the same (k, i) always names the same key
 *     and operation, across processes and runs.
 */
#include "twork.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tsql.h"

const TdbTableDef tw_table = {
    .name = "tw",
    .sql = "CREATE TABLE tw(a, b COLLATE NOCASE, c)",
    .ncols = 3,
    .coll = {TDB_BINARY, TDB_NOCASE, TDB_BINARY},
};
const TdbIndexDef tw_index_b = {
    .name = "tw_b", .table = "tw", .sql = "CREATE INDEX tw_b ON tw(b)", .ncols = 1, .cols = {1}};
const TdbIndexDef tw_index_cb = {.name = "tw_cb",
                                 .table = "tw",
                                 .sql = "CREATE INDEX tw_cb ON tw(c, b)",
                                 .ncols = 2,
                                 .cols = {2, 1}};

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 32);
}

#define TW_BMAX 3100
#define TW_CMAX 6100
typedef struct RowBuf {
  uint8_t b[TW_BMAX];
  uint8_t c[TW_CMAX];
  TdbValue v[3];
} RowBuf;

/* The values of row key at version ver. */
static void tw_row(uint32_t key, uint32_t ver, RowBuf *rb) {
  uint64_t h = mix(key, ver);
  rb->v[0] = tdb_int(key);
  int n = snprintf((char *)rb->b, 64, "Key%u-v%u-", key, ver);
  int len = (h % 23 == 0) ? 3000 : (int)(h % 40);
  for (int i = n; i < n + len; i++) rb->b[i] = (uint8_t)('a' + (h >> (i % 50)) % 26);
  for (int i = 0; i < n + len; i++)
    if ((mix(h, (uint64_t)i) & 3) == 0 && rb->b[i] >= 'a' && rb->b[i] <= 'z') rb->b[i] -= 32;
  rb->v[1] = tdb_text(rb->b, (uint32_t)(n + len));
  switch ((h >> 8) % 6) {
    case 0:
      rb->v[2] = tdb_null();
      break;
    case 1:
      rb->v[2] = tdb_int((int64_t)(h >> 16) % 10);
      break;
    case 2:
      rb->v[2] = tdb_real((double)(h % 1000) / 8.0);
      break;
    case 3:
      rb->v[2] = tdb_int((int64_t)(h >> 1));
      break;
    default: {
      uint32_t bl = (h >> 20) % 17 == 0 ? 6000 : (uint32_t)((h >> 24) % 64);
      for (uint32_t i = 0; i < bl; i++) rb->c[i] = (uint8_t)mix(h, i);
      rb->v[2] = tdb_blob(rb->c, bl);
    }
  }
}

int tw_create(Tdb *db) {
  int rc = tdb_create_table(db, &tw_table);
  if (rc == SHALE_OK) rc = tdb_create_index(db, &tw_index_b);
  if (rc == SHALE_OK) rc = tdb_create_index(db, &tw_index_cb);
  return rc;
}

int tw_bind(Tdb *db) {
  int rc = tdb_bind_table(db, &tw_table);
  if (rc == SHALE_OK) rc = tdb_bind_index(db, &tw_index_b);
  if (rc == SHALE_OK) rc = tdb_bind_index(db, &tw_index_cb);
  return rc;
}

void tw_model_reset(TwModel *m) { memset(m, 0, sizeof *m); }

/* Mostly small commits; one in 16 is large enough (150..400 operations,
 * with overflow rows) to spill the cache of a small-cache connection. */
int tw_default_nops(uint32_t k) {
  uint64_t h = mix(k, 0xABCDEF);
  return h % 16 == 0 ? 150 + (int)(h >> 8) % 250 : 1 + (int)(h % 24);
}

/* Operation i of commit k on state m: 0 = put (insert or update), 1 = delete. */
static uint32_t op_key(uint32_t k, int i, const TwModel *m, int *del) {
  uint64_t h = mix(k, (uint64_t)i + 1);
  uint32_t key = (uint32_t)(h % TW_NKEYS) + 1;
  *del = m->ver[key] != 0 && (h >> 40) % 3 == 0;
  return key;
}

void tw_model_apply(TwModel *m, uint32_t k, int nops) {
  for (int i = 0; i < nops; i++) {
    int del;
    uint32_t key = op_key(k, i, m, &del);
    m->ver[key] = del ? 0 : k;
  }
  m->k = k;
}

void tw_model_at(TwModel *m, uint32_t k) {
  tw_model_reset(m);
  for (uint32_t j = 1; j <= k; j++) tw_model_apply(m, j, tw_default_nops(j));
}

int tw_apply(Tdb *db, TwModel *m, uint32_t k, int nops) {
  static RowBuf rb;
  int rc = SHALE_OK;
  for (int i = 0; i < nops && rc == SHALE_OK; i++) {
    int del;
    uint32_t key = op_key(k, i, m, &del);
    if (del) {
      rc = tdb_delete(db, "tw", key);
      if (rc == SHALE_OK) m->ver[key] = 0;
    } else {
      tw_row(key, k, &rb);
      rc = m->ver[key] ? tdb_update(db, "tw", key, rb.v) : tdb_insert(db, "tw", key, rb.v);
      if (rc == SHALE_OK) m->ver[key] = k;
    }
  }
  if (rc == SHALE_OK) rc = tdb_set_user_version(db, k);
  if (rc == SHALE_OK) m->k = k;
  return rc;
}

int tw_apply_sqlite(sqlite3 *db, TwModel *m, uint32_t k, int nops) {
  static RowBuf rb;
  sqlite3_stmt *del = NULL, *put = NULL;
  char uv[64];
  int rc = sqlite3_prepare_v2(db, "DELETE FROM tw WHERE rowid = ?1", -1, &del, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO tw(rowid, a, b, c) VALUES(?1, ?2, ?3, ?4)",
                            -1, &put, NULL);
  for (int i = 0; i < nops && rc == SQLITE_OK; i++) {
    int isdel;
    uint32_t key = op_key(k, i, m, &isdel);
    sqlite3_stmt *st = isdel ? del : put;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, key);
    if (!isdel) {
      tw_row(key, k, &rb);
      for (int c = 0; c < 3; c++) tsql_bind(st, c + 2, &rb.v[c]);
    }
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_reset(st);
    if (rc == SQLITE_OK) m->ver[key] = isdel ? 0 : k;
  }
  sqlite3_finalize(del);
  sqlite3_finalize(put);
  snprintf(uv, sizeof uv, "PRAGMA user_version = %u", k);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, uv, NULL, NULL, NULL);
  if (rc == SQLITE_OK) m->k = k;
  return rc;
}

typedef struct VerifyCtx {
  const TwModel *m;
  uint32_t next; /* keys below next already matched */
  int diffs;
  char *msg;
  int nmsg;
  RowBuf rb;
} VerifyCtx;

static void note(VerifyCtx *v, const char *what, uint32_t key) {
  if (v->diffs++ == 0)
    snprintf(v->msg, (size_t)v->nmsg, "%s (key %u, commit %u)", what, key, v->m->k);
}

/* Keys in (v->next, upto) that the model has but the database skipped. */
static void skipped(VerifyCtx *v, uint32_t upto) {
  for (uint32_t k = v->next; k < upto && k <= TW_NKEYS; k++)
    if (v->m->ver[k]) note(v, "row missing", k);
}

static int verify_row(void *ctx, const TdbRow *row) {
  VerifyCtx *v = ctx;
  int64_t key = row->rowid;
  if (key < 1 || key > TW_NKEYS || key < v->next) {
    note(v, "unexpected rowid", (uint32_t)key);
    return 0;
  }
  skipped(v, (uint32_t)key);
  v->next = (uint32_t)key + 1;
  uint32_t ver = v->m->ver[key];
  if (!ver) {
    note(v, "row should not exist", (uint32_t)key);
    return 0;
  }
  tw_row((uint32_t)key, ver, &v->rb);
  for (int i = 0; i < 3; i++)
    if (i >= row->n || !tdb_value_same(&row->v[i], &v->rb.v[i])) {
      note(v, "row content differs", (uint32_t)key);
      break;
    }
  return 0;
}

int tw_verify(Tdb *db, const TwModel *m, char *msg, int nmsg) {
  static VerifyCtx v;
  uint32_t uv = 0;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.next = 1;
  v.msg = msg;
  v.nmsg = nmsg;
  msg[0] = 0;
  int rc = tdb_get_user_version(db, &uv);
  if (rc) {
    snprintf(msg, (size_t)nmsg, "user_version: rc %d %s", rc, tdb_errmsg(db));
    return 1;
  }
  if (uv != m->k) {
    snprintf(msg, (size_t)nmsg, "user_version %u, expected %u", uv, m->k);
    return 1;
  }
  rc = tdb_scan(db, "tw", verify_row, &v);
  if (rc) {
    snprintf(msg, (size_t)nmsg, "scan: rc %d %s", rc, tdb_errmsg(db));
    return 1;
  }
  skipped(&v, TW_NKEYS + 1);
  return v.diffs;
}

int tw_verify_sqlite(const char *path, const TwModel *m, char *msg, int nmsg) {
  static VerifyCtx v;
  if (!tsql_integrity(path, msg, nmsg)) return 1;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.next = 1;
  v.msg = msg;
  v.nmsg = nmsg;
  msg[0] = 0;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(msg, (size_t)nmsg, "sqlite3 open failed");
    sqlite3_close(db);
    return 1;
  }
  int64_t uv = tsql_int(db, "PRAGMA user_version");
  if (uv != (int64_t)m->k) {
    snprintf(msg, (size_t)nmsg, "sqlite3: user_version %" PRId64 ", expected %u", uv, m->k);
    sqlite3_close(db);
    return 1;
  }
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT rowid, a, b, c FROM tw ORDER BY rowid", -1, &st, NULL);
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    TdbRow row;
    row.rowid = sqlite3_column_int64(st, 0);
    row.n = 3;
    for (int i = 0; i < 3; i++) row.v[i] = tsql_column(st, i + 1);
    verify_row(&v, &row);
  }
  if (rc != SQLITE_OK) snprintf(msg, (size_t)nmsg, "sqlite3: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  /* Index-driven look-ups must find each row (proves the index order). */
  rc = rc == SQLITE_OK ? sqlite3_prepare_v2(db, "SELECT rowid FROM tw INDEXED BY tw_b WHERE b = ?1",
                                            -1, &st, NULL)
                       : rc;
  for (uint32_t key = 1; rc == SQLITE_OK && key <= TW_NKEYS; key += 7) {
    if (!m->ver[key]) continue;
    tw_row(key, m->ver[key], &v.rb);
    sqlite3_reset(st);
    tsql_bind(st, 1, &v.rb.v[1]);
    int hit = 0;
    while (sqlite3_step(st) == SQLITE_ROW) hit |= sqlite3_column_int64(st, 0) == key;
    if (!hit) note(&v, "sqlite3: index tw_b lookup missed", key);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (rc != SQLITE_OK) return 1;
  skipped(&v, TW_NKEYS + 1);
  return v.diffs;
}
