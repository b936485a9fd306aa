/*
 * tshape.h -- TEST SCAFFOLDING: the table shapes, deterministic rows and
 * workload phases shared by the interop tests (Shale writes / SQLite writes).
 *
 * Four tables, declared without column types so that values keep their
 * exact types (no affinity):
 *   t1(a, b COLLATE NOCASE, c, d)        indexes t1_b(b) [NOCASE], t1_ca(c, a)
 *   t2(k INTEGER PRIMARY KEY, v, w)      index t2_w(w)
 *   t3(x, y COLLATE NOCASE, z, PRIMARY KEY(y, x)) WITHOUT ROWID   index t3_z(z)
 *   t4(id PRIMARY KEY, p)                automatic index sqlite_autoindex_t4_1
 * Every row is named by (table, key); its values depend on (table, key,
 * version) only. Values cover NULL, integers of every serial width, reals,
 * text (mixed case, some long, some non-ASCII) and blobs up to 1 MiB.
 * The model is the live version of every key (0 = absent).
 *
 * Invariants:
 *  1. Keys are 1..model.n[t]; rowid = key for t1/t2/t4, x = key for t3.
 *  2. Primary keys are unique and never NULL (t3's y, x; t4's id).
 *  3. An executor (Shale via tdb, or SQLite via SQL) performs exactly the
 *     operations the phase functions decide; the model follows them.
 */
#ifndef SHALE_TESTS_TSHAPE_H
#define SHALE_TESTS_TSHAPE_H

#include <sqlite3.h>

#include "tdb.h"

#define TS_NTAB 4
#define TS_NIDX 4
#define TS_MAXVAL (1 << 20) /* the largest blob: 1 MiB */

extern const TdbTableDef ts_tables[TS_NTAB];
extern const TdbIndexDef ts_indexes[TS_NIDX];

typedef struct TsModel {
  uint32_t n[TS_NTAB]; /* largest key used */
  uint32_t cap[TS_NTAB];
  uint32_t *ver[TS_NTAB];
  int64_t live; /* rows in all tables */
} TsModel;

void ts_model_init(TsModel *m, int64_t rows);
void ts_model_free(TsModel *m);

/* The values of a row (table column order) into a buffer that stays valid
 * until the next call with the same buffer. */
typedef struct TsRowBuf {
  uint8_t *big; /* TS_MAXVAL + 64 bytes */
  uint8_t small[3][4200];
  TdbValue v[TDB_MAXCOL];
} TsRowBuf;
void ts_rowbuf_init(TsRowBuf *b);
void ts_rowbuf_free(TsRowBuf *b);
void ts_row(int t, uint32_t key, uint32_t ver, TsRowBuf *b);

/* Who performs the operations. */
typedef struct TsExec {
  int (*begin)(void *ctx);
  int (*commit)(void *ctx);
  int (*insert)(void *ctx, int t, uint32_t key, const TdbValue *vals);
  int (*update)(void *ctx, int t, uint32_t key, const TdbValue *vals);
  int (*del)(void *ctx, int t, uint32_t key, const TdbValue *vals);
  void *ctx;
} TsExec;

/* Phase 1: insert `rows` rows over the four tables (version 1). */
int ts_fill(TsModel *m, const TsExec *x, int64_t rows);
/* Delete about one row in `every` (chosen by seed). */
int ts_delete_some(TsModel *m, const TsExec *x, int every, uint64_t seed);
/* Update about one live row in `every` (new version, other sizes), then
 * insert `newrows` new rows. */
int ts_update_insert(TsModel *m, const TsExec *x, int every, int64_t newrows, uint64_t seed);

/* Executors. */
typedef struct TsShale {
  Tdb *db;
} TsShale;
void ts_exec_shale(TsExec *x, TsShale *s);
typedef struct TsSqlite {
  sqlite3 *db;
  sqlite3_stmt *ins[TS_NTAB], *upd[TS_NTAB], *del[TS_NTAB];
} TsSqlite;
int ts_exec_sqlite(TsExec *x, TsSqlite *s, sqlite3 *db); /* prepares statements */
void ts_exec_sqlite_done(TsSqlite *s);

/* Schema. */
int ts_create_shale(Tdb *db);
int ts_bind_shale(Tdb *db);
/* CREATE statements through SQLite (page size set first). */
int ts_create_sqlite(sqlite3 *db, int page_size);

/* Compare what Shale reads (tdb_scan of every table) with the model, and
 * run tdb_check. 0 if equal and clean, else the number of problems (the
 * first described in msg). */
int ts_verify_shale(Tdb *db, const TsModel *m, char *msg, int nmsg);
/* SQLite: PRAGMA integrity_check = "ok", every row through SELECT equals
 * the model (types included), and index-driven look-ups (INDEXED BY) find
 * every sampled row and only matching ones (one key in `sample`). */
int ts_verify_sqlite(const char *path, const TsModel *m, int sample, char *msg, int nmsg);

#endif
