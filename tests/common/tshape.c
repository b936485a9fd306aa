/*
 * tshape.c -- TEST SCAFFOLDING: interop table shapes, row generator, model,
 * workload phases, executors and verifiers (see tshape.h).
 *
 * Invariants:
 *  1. ts_row() is a pure function of (table, key, version); a PK column
 *     depends on the key alone (t3) or embeds the key (t4's id), so PKs are
 *     unique.
 *  2. Phases commit at least every TS_BATCH operations.
 */
#include "tshape.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsql.h"

#define TS_BATCH 2000

const TdbTableDef ts_tables[TS_NTAB] = {
    {.name = "t1",
     .sql = "CREATE TABLE t1(a, b COLLATE NOCASE, c, d)",
     .ncols = 4,
     .coll = {TDB_BINARY, TDB_NOCASE, TDB_BINARY, TDB_BINARY}},
    {.name = "t2",
     .sql = "CREATE TABLE t2(k INTEGER PRIMARY KEY, v, w)",
     .ncols = 3,
     .npk = 1,
     .pk = {0},
     .ipk = 1},
    {.name = "t3",
     .sql = "CREATE TABLE t3(x, y COLLATE NOCASE, z, PRIMARY KEY(y, x)) WITHOUT ROWID",
     .ncols = 3,
     .coll = {TDB_BINARY, TDB_NOCASE, TDB_BINARY},
     .without_rowid = 1,
     .npk = 2,
     .pk = {1, 0}},
    {.name = "t4", .sql = "CREATE TABLE t4(id PRIMARY KEY, p)", .ncols = 2, .npk = 1, .pk = {0}},
};

const TdbIndexDef ts_indexes[TS_NIDX] = {
    {.name = "t1_b", .table = "t1", .sql = "CREATE INDEX t1_b ON t1(b)", .ncols = 1, .cols = {1}},
    {.name = "t1_ca",
     .table = "t1",
     .sql = "CREATE INDEX t1_ca ON t1(c, a)",
     .ncols = 2,
     .cols = {2, 0}},
    {.name = "t2_w", .table = "t2", .sql = "CREATE INDEX t2_w ON t2(w)", .ncols = 1, .cols = {2}},
    {.name = "t3_z", .table = "t3", .sql = "CREATE INDEX t3_z ON t3(z)", .ncols = 1, .cols = {2}},
};

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 32);
}

/* ---- model ---- */

static const int share[TS_NTAB] = {50, 20, 20, 10}; /* percent of rows per table */

static void grow(TsModel *m, int t, uint32_t need) {
  if (need < m->cap[t]) return;
  uint32_t cap = m->cap[t] ? m->cap[t] : 1024;
  while (cap <= need) cap *= 2;
  m->ver[t] = realloc(m->ver[t], sizeof(uint32_t) * cap);
  memset(m->ver[t] + m->cap[t], 0, sizeof(uint32_t) * (cap - m->cap[t]));
  m->cap[t] = cap;
}

void ts_model_init(TsModel *m, int64_t rows) {
  memset(m, 0, sizeof *m);
  for (int t = 0; t < TS_NTAB; t++) grow(m, t, (uint32_t)(rows * share[t] / 100 * 2 + 16));
}

void ts_model_free(TsModel *m) {
  for (int t = 0; t < TS_NTAB; t++) free(m->ver[t]);
  memset(m, 0, sizeof *m);
}

/* ---- rows ---- */

void ts_rowbuf_init(TsRowBuf *b) {
  memset(b, 0, sizeof *b);
  b->big = malloc(TS_MAXVAL + 64);
}

void ts_rowbuf_free(TsRowBuf *b) { free(b->big); }

/* Text of len bytes after a prefix naming the key, letters in mixed case;
 * with utf8 set, some two-byte characters (é, É) too. */
static uint32_t mk_text(uint8_t *out, uint32_t len, const char *prefix, uint64_t h, int utf8) {
  uint32_t n = (uint32_t)snprintf((char *)out, 64, "%s", prefix);
  uint64_t s = h | 1;
  while (n < len) {
    s = mix(s, n);
    if (utf8 && s % 7 == 0 && n + 2 <= len) {
      out[n++] = 0xc3;
      out[n++] = (s >> 8) & 1 ? 0xa9 : 0x89;
    } else {
      int c = 'a' + (int)((s >> 8) % 26);
      out[n++] = (uint8_t)((s >> 16) & 1 ? c - 32 : c);
    }
  }
  return n;
}

static void mk_bytes(uint8_t *out, uint32_t len, uint64_t h) {
  uint64_t s = h;
  for (uint32_t i = 0; i < len; i += 8) {
    s = mix(s, i);
    for (uint32_t k = 0; k < 8 && i + k < len; k++) out[i + k] = (uint8_t)(s >> (8 * k));
  }
}

static int64_t sgn(uint64_t h, int64_t v) { return (h >> 61) & 1 ? -v : v; }

void ts_row(int t, uint32_t key, uint32_t ver, TsRowBuf *b) {
  uint64_t h = mix(((uint64_t)t << 40) | key, ver);
  uint64_t h0 = mix(((uint64_t)t << 40) | key, 0xFFFFFFFFu); /* version-independent */
  char pre[64];
  TdbValue *v = b->v;
  switch (t) {
    case 0: { /* t1(a, b NOCASE, c, d) */
      uint64_t x = h >> 8;
      switch (h % 12) {
        case 0:
          v[0] = tdb_null();
          break;
        case 1:
          v[0] = tdb_int(0);
          break;
        case 2:
          v[0] = tdb_int(1);
          break;
        case 3:
          v[0] = tdb_int((int64_t)(x % 256) - 128);
          break;
        case 4:
          v[0] = tdb_int(sgn(h, (int64_t)(x % 32768)));
          break;
        case 5:
          v[0] = tdb_int(sgn(h, (int64_t)(x % 8388608)));
          break;
        case 6:
          v[0] = tdb_int(sgn(h, (int64_t)(x % 2147483648ULL)));
          break;
        case 7:
          v[0] = tdb_int(sgn(h, (int64_t)(x % 140737488355328ULL)));
          break;
        case 8:
          v[0] = tdb_int((int64_t)mix(h, 8));
          break;
        case 9:
          v[0] = tdb_real((double)sgn(h, (int64_t)(x % 1000003)) / 7.0);
          break;
        case 10:
          v[0] = tdb_real((x & 1 ? 1e300 : 1e-300) / (double)(x % 97 + 1));
          break;
        default:
          v[0] = tdb_real((double)((int64_t)(x % 2000) - 1000));
          break;
      }
      uint32_t r = (uint32_t)((h >> 16) % 100);
      snprintf(pre, sizeof pre, "Name-%u-%u-", key, ver);
      if (r < 3)
        v[1] = tdb_null();
      else if (r < 6)
        v[1] = tdb_int((int64_t)(key % 1000));
      else if (r < 8)
        v[1] = tdb_text(b->small[0], mk_text(b->small[0], 300 + (uint32_t)(h % 2700), pre, h, 0));
      else if (r < 12)
        v[1] = tdb_text(b->small[0], mk_text(b->small[0], 20 + (uint32_t)(h % 20), pre, h, 1));
      else
        v[1] =
            tdb_text(b->small[0],
                     mk_text(b->small[0], (uint32_t)strlen(pre) + (uint32_t)(h % 30), pre, h, 0));
      uint32_t cv = (uint32_t)((h >> 24) % 60);
      switch ((h >> 30) % 10) {
        case 0:
          v[2] = tdb_real(cv + 0.5);
          break;
        case 1:
          v[2] = tdb_text(b->small[1], (uint32_t)snprintf((char *)b->small[1], 16, "c%u", cv));
          break;
        default:
          v[2] = tdb_int(cv);
      }
      uint32_t r2 = (uint32_t)((h >> 36) % 100), len;
      if (key % 25000 == 17) {
        mk_bytes(b->big, TS_MAXVAL, h);
        v[3] = tdb_blob(b->big, TS_MAXVAL);
      } else if (key % 25000 == 18) {
        len = 300000 + (uint32_t)(h % 1000);
        v[3] = tdb_text(b->big, mk_text(b->big, len, "big-", h, 1));
      } else if (r2 < 10) {
        v[3] = tdb_null();
      } else if (r2 < 50) {
        mk_bytes(b->big, len = (uint32_t)((h >> 44) % 200), h);
        v[3] = tdb_blob(b->big, len);
      } else if (r2 < 55) {
        mk_bytes(b->big, len = 1000 + (uint32_t)((h >> 44) % 9000), h);
        v[3] = tdb_blob(b->big, len);
      } else if (r2 < 60) {
        v[3] = tdb_text(b->big, mk_text(b->big, (uint32_t)((h >> 44) % 100), "", h, 1));
      } else {
        mk_bytes(b->big, len = (uint32_t)((h >> 44) % 41), h);
        v[3] = tdb_blob(b->big, len);
      }
      break;
    }
    case 1: { /* t2(k INTEGER PRIMARY KEY, v, w) */
      v[0] = tdb_int(key);
      switch (h % 5) {
        case 0:
          v[1] = tdb_real((double)(h >> 11) / 3.0);
          break;
        case 1:
          v[1] = tdb_text(b->small[0], mk_text(b->small[0], (uint32_t)((h >> 8) % 60), "", h, 1));
          break;
        case 2:
          mk_bytes(b->small[0], (uint32_t)((h >> 8) % 3000), h);
          v[1] = tdb_blob(b->small[0], (uint32_t)((h >> 8) % 3000));
          break;
        case 3:
          v[1] = tdb_int(sgn(h, (int64_t)(h >> 20)));
          break;
        default:
          v[1] = tdb_null();
      }
      uint32_t r = (uint32_t)((h >> 12) % 10);
      if (r < 2)
        v[2] = tdb_null();
      else if (r < 7)
        v[2] = tdb_int((int64_t)((h >> 16) % 500));
      else if (r < 9) {
        snprintf(pre, sizeof pre, "W%u", (unsigned)((h >> 20) % 300));
        v[2] = tdb_text(b->small[1],
                        mk_text(b->small[1], (uint32_t)strlen(pre) + (uint32_t)(h % 3), pre, h, 0));
      } else
        v[2] = tdb_real((double)((h >> 16) % 500) + 0.25);
      break;
    }
    case 2: { /* t3(x, y NOCASE, z, PRIMARY KEY(y, x)) WITHOUT ROWID */
      v[0] = tdb_int(key);
      snprintf(pre, sizeof pre, "Grp%u-", key % 97);
      v[1] = tdb_text(b->small[0], mk_text(b->small[0], (uint32_t)strlen(pre) + (uint32_t)(h0 % 12),
                                           pre, h0, 0));
      switch (h % 6) {
        case 0:
          v[2] = tdb_int((int64_t)((h >> 8) % 1000));
          break;
        case 1:
          v[2] = tdb_real((double)((h >> 8) % 1000) / 4.0);
          break;
        case 2:
          v[2] = tdb_text(b->small[1], mk_text(b->small[1], (uint32_t)((h >> 8) % 50), "z", h, 0));
          break;
        case 3: {
          uint32_t len =
              (h >> 8) % 13 == 0 ? 2000 + (uint32_t)((h >> 16) % 3000) : (uint32_t)((h >> 16) % 30);
          mk_bytes(b->big, len, h);
          v[2] = tdb_blob(b->big, len);
          break;
        }
        case 4:
          v[2] = tdb_null();
          break;
        default:
          v[2] = tdb_int((int64_t)mix(h, 3));
      }
      break;
    }
    default: { /* t4(id PRIMARY KEY, p) */
      snprintf(pre, sizeof pre, "id-%u-%u-", key, ver);
      v[0] = tdb_text(b->small[0],
                      mk_text(b->small[0], (uint32_t)strlen(pre) + (uint32_t)(h % 10), pre, h, 0));
      switch (h % 4) {
        case 0:
          v[1] = tdb_int((int64_t)(h >> 3));
          break;
        case 1:
          v[1] = tdb_real(-(double)(h % 100000) / 9.0);
          break;
        case 2:
          v[1] = tdb_text(b->small[1], mk_text(b->small[1], (uint32_t)((h >> 8) % 200), "", h, 1));
          break;
        default:
          v[1] = tdb_null();
      }
    }
  }
}

/* ---- phases ---- */

typedef struct Runner {
  const TsExec *x;
  int in_txn, ops, rc;
  TsRowBuf rb;
} Runner;

static int run_op(Runner *r, int kind, int t, uint32_t key, uint32_t ver) {
  if (r->rc) return r->rc;
  if (!r->in_txn) {
    if ((r->rc = r->x->begin(r->x->ctx))) return r->rc;
    r->in_txn = 1;
  }
  ts_row(t, key, ver, &r->rb);
  r->rc = kind == 0   ? r->x->insert(r->x->ctx, t, key, r->rb.v)
          : kind == 1 ? r->x->update(r->x->ctx, t, key, r->rb.v)
                      : r->x->del(r->x->ctx, t, key, r->rb.v);
  if (r->rc) fprintf(stderr, "tshape: op %d on t%d key %u failed: %d\n", kind, t + 1, key, r->rc);
  if (r->rc == 0 && ++r->ops % TS_BATCH == 0) {
    r->in_txn = 0;
    r->rc = r->x->commit(r->x->ctx);
  }
  return r->rc;
}

static int run_end(Runner *r) {
  if (r->rc == 0 && r->in_txn) r->rc = r->x->commit(r->x->ctx);
  ts_rowbuf_free(&r->rb);
  return r->rc;
}

static void run_init(Runner *r, const TsExec *x) {
  memset(r, 0, sizeof *r);
  r->x = x;
  ts_rowbuf_init(&r->rb);
}

/* Insert cnt new keys into table t: ascending (t1, t2) or permuted. */
static void insert_new(Runner *r, TsModel *m, int t, uint32_t cnt) {
  uint32_t base = m->n[t];
  grow(m, t, base + cnt + 1);
  uint32_t step = 7919; /* prime: i*step mod cnt is a permutation unless cnt divides by it */
  while (cnt % step == 0) step += 2;
  for (uint32_t i = 0; i < cnt && r->rc == 0; i++) {
    uint32_t key = base + 1 + (t < 2 ? i : (uint32_t)(((uint64_t)i * step) % cnt));
    if (run_op(r, 0, t, key, 1) == 0) {
      m->ver[t][key] = 1;
      m->live++;
    }
  }
  m->n[t] = base + cnt;
}

int ts_fill(TsModel *m, const TsExec *x, int64_t rows) {
  Runner r;
  run_init(&r, x);
  for (int t = 0; t < TS_NTAB; t++) insert_new(&r, m, t, (uint32_t)(rows * share[t] / 100));
  return run_end(&r);
}

int ts_delete_some(TsModel *m, const TsExec *x, int every, uint64_t seed) {
  Runner r;
  run_init(&r, x);
  for (int t = 0; t < TS_NTAB; t++)
    for (uint32_t key = 1; key <= m->n[t] && r.rc == 0; key++)
      if (m->ver[t][key] && mix(seed, ((uint64_t)t << 40) | key) % (uint64_t)every == 0)
        if (run_op(&r, 2, t, key, m->ver[t][key]) == 0) {
          m->ver[t][key] = 0;
          m->live--;
        }
  return run_end(&r);
}

int ts_update_insert(TsModel *m, const TsExec *x, int every, int64_t newrows, uint64_t seed) {
  Runner r;
  run_init(&r, x);
  for (int t = 0; t < TS_NTAB; t++)
    for (uint32_t key = 1; key <= m->n[t] && r.rc == 0; key++)
      if (m->ver[t][key] && mix(seed ^ 0x5555, ((uint64_t)t << 40) | key) % (uint64_t)every == 0)
        if (run_op(&r, 1, t, key, m->ver[t][key] + 1) == 0) m->ver[t][key]++;
  for (int t = 0; t < TS_NTAB && r.rc == 0; t++)
    insert_new(&r, m, t, (uint32_t)(newrows * share[t] / 100));
  return run_end(&r);
}

/* ---- executors ---- */

static int sh_begin(void *c) { return tdb_begin(((TsShale *)c)->db); }
static int sh_commit(void *c) { return tdb_commit(((TsShale *)c)->db); }
static int sh_insert(void *c, int t, uint32_t key, const TdbValue *v) {
  return tdb_insert(((TsShale *)c)->db, ts_tables[t].name, key, v);
}
static int sh_update(void *c, int t, uint32_t key, const TdbValue *v) {
  return tdb_update(((TsShale *)c)->db, ts_tables[t].name, key, v);
}
static int sh_del(void *c, int t, uint32_t key, const TdbValue *v) {
  Tdb *db = ((TsShale *)c)->db;
  return ts_tables[t].without_rowid ? tdb_delete_pk(db, ts_tables[t].name, v)
                                    : tdb_delete(db, ts_tables[t].name, key);
}

void ts_exec_shale(TsExec *x, TsShale *s) {
  *x = (TsExec){sh_begin, sh_commit, sh_insert, sh_update, sh_del, s};
}

static const char *const sql_ins[TS_NTAB] = {
    "INSERT INTO t1(rowid, a, b, c, d) VALUES(?1, ?2, ?3, ?4, ?5)",
    "INSERT INTO t2(k, v, w) VALUES(?2, ?3, ?4)",
    "INSERT INTO t3(x, y, z) VALUES(?2, ?3, ?4)",
    "INSERT INTO t4(rowid, id, p) VALUES(?1, ?2, ?3)",
};
static const char *const sql_upd[TS_NTAB] = {
    "UPDATE t1 SET a = ?2, b = ?3, c = ?4, d = ?5 WHERE rowid = ?1",
    "UPDATE t2 SET v = ?3, w = ?4 WHERE k = ?1",
    "UPDATE t3 SET z = ?4 WHERE y = ?3 AND x = ?2",
    "UPDATE t4 SET id = ?2, p = ?3 WHERE rowid = ?1",
};
static const char *const sql_del[TS_NTAB] = {
    "DELETE FROM t1 WHERE rowid = ?1",
    "DELETE FROM t2 WHERE k = ?1",
    "DELETE FROM t3 WHERE y = ?3 AND x = ?2",
    "DELETE FROM t4 WHERE rowid = ?1",
};

static int sq_run(TsSqlite *s, sqlite3_stmt *st, int t, uint32_t key, const TdbValue *v) {
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  sqlite3_bind_int64(st, 1, key);
  for (int i = 0; i < ts_tables[t].ncols && i + 2 <= sqlite3_bind_parameter_count(st); i++)
    tsql_bind(st, i + 2, &v[i]);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "sqlite3 step: %s\n", sqlite3_errmsg(s->db));
    return rc;
  }
  if (sqlite3_changes(s->db) != 1) {
    fprintf(stderr, "sqlite3: %d rows changed on t%d key %u\n", sqlite3_changes(s->db), t + 1, key);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static int sq_begin(void *c) { return tsql_exec(((TsSqlite *)c)->db, "BEGIN"); }
static int sq_commit(void *c) { return tsql_exec(((TsSqlite *)c)->db, "COMMIT"); }
static int sq_insert(void *c, int t, uint32_t key, const TdbValue *v) {
  TsSqlite *s = c;
  return sq_run(s, s->ins[t], t, key, v);
}
static int sq_update(void *c, int t, uint32_t key, const TdbValue *v) {
  TsSqlite *s = c;
  return sq_run(s, s->upd[t], t, key, v);
}
static int sq_del(void *c, int t, uint32_t key, const TdbValue *v) {
  TsSqlite *s = c;
  return sq_run(s, s->del[t], t, key, v);
}

int ts_exec_sqlite(TsExec *x, TsSqlite *s, sqlite3 *db) {
  memset(s, 0, sizeof *s);
  s->db = db;
  for (int t = 0; t < TS_NTAB; t++) {
    if (sqlite3_prepare_v2(db, sql_ins[t], -1, &s->ins[t], NULL) ||
        sqlite3_prepare_v2(db, sql_upd[t], -1, &s->upd[t], NULL) ||
        sqlite3_prepare_v2(db, sql_del[t], -1, &s->del[t], NULL)) {
      fprintf(stderr, "prepare: %s\n", sqlite3_errmsg(db));
      ts_exec_sqlite_done(s);
      return SQLITE_ERROR;
    }
  }
  *x = (TsExec){sq_begin, sq_commit, sq_insert, sq_update, sq_del, s};
  return SQLITE_OK;
}

void ts_exec_sqlite_done(TsSqlite *s) {
  for (int t = 0; t < TS_NTAB; t++) {
    sqlite3_finalize(s->ins[t]);
    sqlite3_finalize(s->upd[t]);
    sqlite3_finalize(s->del[t]);
    s->ins[t] = s->upd[t] = s->del[t] = NULL;
  }
}

/* ---- schema ---- */

int ts_create_shale(Tdb *db) {
  int rc = SHALE_OK;
  for (int t = 0; t < TS_NTAB && rc == SHALE_OK; t++) rc = tdb_create_table(db, &ts_tables[t]);
  for (int i = 0; i < TS_NIDX && rc == SHALE_OK; i++) rc = tdb_create_index(db, &ts_indexes[i]);
  return rc;
}

int ts_bind_shale(Tdb *db) {
  int rc = SHALE_OK;
  for (int t = 0; t < TS_NTAB && rc == SHALE_OK; t++) rc = tdb_bind_table(db, &ts_tables[t]);
  for (int i = 0; i < TS_NIDX && rc == SHALE_OK; i++) rc = tdb_bind_index(db, &ts_indexes[i]);
  return rc;
}

int ts_create_sqlite(sqlite3 *db, int page_size) {
  char buf[64];
  snprintf(buf, sizeof buf, "PRAGMA page_size = %d", page_size);
  int rc = tsql_exec(db, buf);
  for (int t = 0; t < TS_NTAB && rc == SQLITE_OK; t++) rc = tsql_exec(db, ts_tables[t].sql);
  for (int i = 0; i < TS_NIDX && rc == SQLITE_OK; i++) rc = tsql_exec(db, ts_indexes[i].sql);
  return rc;
}

/* ---- verification ---- */

typedef struct Ver {
  const TsModel *m;
  int t;
  uint8_t *seen;
  int64_t rows;
  int problems;
  char *msg;
  int nmsg;
  TdbValue prev[TDB_MAXCOL];
  TsRowBuf rb;
  uint8_t *prevbuf; /* copy of the previous t3 PK text */
} Ver;

static void problem(Ver *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(Ver *v, const char *fmt, ...) {
  if (v->problems++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, (size_t)v->nmsg, fmt, ap);
    va_end(ap);
  }
}

/* One row read back (key + values in table column order). */
static void check_row(Ver *v, int64_t key, const TdbValue *vals, int n) {
  const TdbTableDef *d = &ts_tables[v->t];
  char a[120], b[120];
  v->rows++;
  if (key < 1 || key > v->m->n[v->t]) {
    problem(v, "%s: unexpected key %" PRId64, d->name, key);
    return;
  }
  if (v->seen[key]++) {
    problem(v, "%s: key %" PRId64 " seen twice", d->name, key);
    return;
  }
  uint32_t ver = v->m->ver[v->t][key];
  if (!ver) {
    problem(v, "%s: key %" PRId64 " should not exist", d->name, key);
    return;
  }
  if (n != d->ncols)
    problem(v, "%s: key %" PRId64 ": %d columns, expected %d", d->name, key, n, d->ncols);
  ts_row(v->t, (uint32_t)key, ver, &v->rb);
  for (int i = 0; i < n && i < d->ncols; i++)
    if (!tdb_value_same(&vals[i], &v->rb.v[i])) {
      problem(v, "%s: key %" PRId64 " column %d: got %s, expected %s", d->name, key, i,
              tdb_value_str(&vals[i], a, sizeof a), tdb_value_str(&v->rb.v[i], b, sizeof b));
      break;
    }
  if (v->t == 2) { /* WITHOUT ROWID: rows must come in PK (y NOCASE, x) order */
    if (v->rows > 1) {
      int c = tdb_value_cmp(&v->prev[1], &vals[1], TDB_NOCASE);
      if (c == 0) c = tdb_value_cmp(&v->prev[0], &vals[0], TDB_BINARY);
      if (c >= 0) problem(v, "t3: key %" PRId64 " out of PK order", key);
    }
    free(v->prevbuf);
    v->prevbuf = malloc(vals[1].n + 1);
    memcpy(v->prevbuf, vals[1].p, vals[1].n);
    v->prev[0] = vals[0];
    v->prev[1] = tdb_text(v->prevbuf, vals[1].n);
  } else if (v->rows > 1 && key <= v->prev[0].i) {
    problem(v, "%s: key %" PRId64 " out of rowid order", d->name, key);
  }
  if (v->t != 2) v->prev[0] = tdb_int(key);
}

static void ver_begin(Ver *v, const TsModel *m, int t, char *msg, int nmsg) {
  v->m = m;
  v->t = t;
  v->seen = calloc(m->n[t] + 2, 1);
  v->rows = 0;
  v->msg = msg;
  v->nmsg = nmsg;
}

static void ver_end(Ver *v) {
  const TsModel *m = v->m;
  int64_t live = 0;
  for (uint32_t k = 1; k <= m->n[v->t]; k++)
    if (m->ver[v->t][k]) {
      live++;
      if (!v->seen[k]) problem(v, "%s: key %u missing", ts_tables[v->t].name, k);
    }
  if (live != v->rows)
    problem(v, "%s: %" PRId64 " rows, expected %" PRId64, ts_tables[v->t].name, v->rows, live);
  free(v->seen);
  free(v->prevbuf);
  v->prevbuf = NULL;
}

static int shale_row(void *ctx, const TdbRow *row) {
  Ver *v = ctx;
  check_row(v, v->t == 2 ? row->v[0].i : row->rowid, row->v, row->n);
  return 0;
}

int ts_verify_shale(Tdb *db, const TsModel *m, char *msg, int nmsg) {
  Ver v;
  memset(&v, 0, sizeof v);
  ts_rowbuf_init(&v.rb);
  msg[0] = 0;
  for (int t = 0; t < TS_NTAB; t++) {
    ver_begin(&v, m, t, msg, nmsg);
    int rc = tdb_scan(db, ts_tables[t].name, shale_row, &v);
    if (rc) problem(&v, "scan of %s: %d %s", ts_tables[t].name, rc, tdb_errmsg(db));
    ver_end(&v);
  }
  char *rep = NULL;
  int rc = tdb_check(db, &rep);
  if (rc) problem(&v, "tdb_check: %d %s", rc, tdb_errmsg(db));
  if (rep) {
    problem(&v, "Shale integrity: %.400s", rep);
    shale_free(rep);
  }
  ts_rowbuf_free(&v.rb);
  return v.problems;
}

static const char *const sql_all[TS_NTAB] = {
    "SELECT rowid, a, b, c, d FROM t1 ORDER BY rowid",
    "SELECT k, k, v, w FROM t2 ORDER BY k",
    "SELECT x, x, y, z FROM t3 ORDER BY y, x",
    "SELECT rowid, id, p FROM t4 ORDER BY rowid",
};

static const struct {
  int t;
  const char *sql;
  int n;
  int cols[2];
} probes[] = {
    {0, "SELECT rowid FROM t1 INDEXED BY t1_b WHERE b = ?1", 1, {1}},
    {0, "SELECT rowid FROM t1 INDEXED BY t1_ca WHERE c = ?1 AND a = ?2", 2, {2, 0}},
    {0, "SELECT rowid FROM t1 INDEXED BY t1_ca WHERE c = ?1 AND a >= ?2", 2, {2, 0}},
    {1, "SELECT k FROM t2 INDEXED BY t2_w WHERE w = ?1", 1, {2}},
    {2, "SELECT x FROM t3 INDEXED BY t3_z WHERE z = ?1", 1, {2}},
    {2, "SELECT x FROM t3 WHERE y = ?1 AND x = ?2", 2, {1, 0}},
    {3, "SELECT rowid FROM t4 INDEXED BY sqlite_autoindex_t4_1 WHERE id = ?1", 1, {0}},
};

int ts_verify_sqlite(const char *path, const TsModel *m, int sample, char *msg, int nmsg) {
  Ver v;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  memset(&v, 0, sizeof v);
  msg[0] = 0;
  if (!tsql_integrity(path, msg, nmsg)) return 1;
  msg[0] = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(msg, (size_t)nmsg, "sqlite3 open failed");
    sqlite3_close(db);
    return 1;
  }
  ts_rowbuf_init(&v.rb);
  for (int t = 0; t < TS_NTAB; t++) {
    ver_begin(&v, m, t, msg, nmsg);
    if (sqlite3_prepare_v2(db, sql_all[t], -1, &st, NULL) != SQLITE_OK) {
      problem(&v, "prepare %s: %s", sql_all[t], sqlite3_errmsg(db));
    } else {
      int rc;
      TdbValue vals[TDB_MAXCOL];
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_count(st) - 1;
        for (int i = 0; i < n; i++) vals[i] = tsql_column(st, i + 1);
        check_row(&v, sqlite3_column_int64(st, 0), vals, n);
      }
      if (rc != SQLITE_DONE) problem(&v, "step %s: %s", sql_all[t], sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    st = NULL;
    ver_end(&v);
  }
  /* Index-driven look-ups. */
  TsRowBuf other;
  ts_rowbuf_init(&other);
  int nprobes = 0;
  for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
    int t = probes[p].t;
    if (sqlite3_prepare_v2(db, probes[p].sql, -1, &st, NULL) != SQLITE_OK) {
      problem(&v, "prepare %s: %s", probes[p].sql, sqlite3_errmsg(db));
      continue;
    }
    uint32_t stride = m->n[t] / (uint32_t)(sample ? sample : 1) + 1;
    for (uint32_t key = 1 + (uint32_t)p; key <= m->n[t]; key += stride) {
      if (!m->ver[t][key]) continue;
      ts_row(t, key, m->ver[t][key], &v.rb);
      int skip = 0;
      for (int i = 0; i < probes[p].n; i++) skip |= v.rb.v[probes[p].cols[i]].type == TDB_NULL;
      if (skip) continue;
      nprobes++;
      sqlite3_reset(st);
      for (int i = 0; i < probes[p].n; i++) tsql_bind(st, i + 1, &v.rb.v[probes[p].cols[i]]);
      int hit = 0, rc;
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t got = sqlite3_column_int64(st, 0);
        hit |= got == key;
        if (got < 1 || got > m->n[t] || !m->ver[t][got]) {
          problem(&v, "%s [key %u]: returned dead key %" PRId64, probes[p].sql, key, got);
          continue;
        }
        ts_row(t, (uint32_t)got, m->ver[t][got], &other);
        for (int i = 0; i < probes[p].n; i++) {
          int col = probes[p].cols[i];
          int c = tdb_value_cmp(&other.v[col], &v.rb.v[col], ts_tables[t].coll[col]);
          if (strstr(probes[p].sql, ">=") && i == 1 ? c < 0 : c != 0)
            problem(&v, "%s [key %u]: returned non-matching key %" PRId64, probes[p].sql, key, got);
        }
      }
      if (rc != SQLITE_DONE) problem(&v, "%s: %s", probes[p].sql, sqlite3_errmsg(db));
      if (!hit) problem(&v, "%s: key %u not found through the index", probes[p].sql, key);
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  if (nprobes < 10) problem(&v, "only %d index probes ran", nprobes);
  ts_rowbuf_free(&other);
  ts_rowbuf_free(&v.rb);
  sqlite3_close(db);
  return v.problems;
}
