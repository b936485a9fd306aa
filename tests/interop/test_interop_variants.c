/*
 * test_interop_variants.c -- SQLite files with less common header settings.
 *
 *  - reserved bytes per page (offset 20; usable size U = page size - 32):
 *    SQLite creates and fills the file, Shale reads every row, changes the
 *    content (so its cells, overflow and freelist must respect U), and
 *    SQLite's integrity_check must still be "ok" with exactly the content;
 *  - auto_vacuum=FULL and INCREMENTAL (pointer-map pages): Shale reads every
 *    row exactly, changes the content (deletes, updates, inserts: pointer
 *    maps kept, btree.h invariant 6), and SQLite's integrity_check (which
 *    verifies every pointer-map entry) is "ok" with exactly the content; in
 *    FULL mode the freelist is empty after Shale's commits;
 *  - a database whose last transaction had already been checkpointed with
 *    journal_mode=PERSIST (a journal file with a zeroed header beside it):
 *    not hot, Shale must leave the content alone.
 *
 * Invariants:
 *  1. The model (TsModel) is compared with what each engine reads.
 */
#include <string.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tshape.h"
#include "../common/tsql.h"
#include "../test.h"
#include "interop_rows.h"

static int64_t rows_small(void) { return interop_rows() / 20; }

/* SQLite creates the shapes (after `pre` SQL) and fills them. */
static sqlite3 *sqlite_fill(const char *path, int psz, const char *pre, TsModel *m, int reserve) {
  sqlite3 *sdb = tsql_open(path);
  TsSqlite ss;
  TsExec x;
  if (!sdb) return NULL;
  if (reserve) {
    int n = reserve;
    CHECK_EQ(sqlite3_file_control(sdb, "main", SQLITE_FCNTL_RESERVE_BYTES, &n), SQLITE_OK);
  }
  if (pre) CHECK_EQ(tsql_exec(sdb, pre), SQLITE_OK);
  CHECK_EQ(ts_create_sqlite(sdb, psz), SQLITE_OK);
  CHECK_EQ(ts_exec_sqlite(&x, &ss, sdb), SQLITE_OK);
  CHECK_EQ(ts_fill(m, &x, rows_small()), SQLITE_OK);
  CHECK_EQ(ts_delete_some(m, &x, 4, 41), SQLITE_OK);
  ts_exec_sqlite_done(&ss);
  return sdb;
}

TEST(interop_reserved_bytes) {
  static const int sizes[3] = {1024, 4096, 65536};
  for (int i = 0; i < 3; i++) {
    char name[32], msg[1024];
    snprintf(name, sizeof name, "reserve%d.db", sizes[i]);
    const char *path = tscratch_path(name);
    TsModel m;
    TsShale s;
    TsExec x;
    Tdb *db;
    ts_model_init(&m, rows_small() * 2);
    sqlite3 *sdb = sqlite_fill(path, sizes[i], NULL, &m, 32);
    CHECK(sdb != NULL);
    sqlite3_close(sdb);
    CHECK_EQ((header_u32(path, 20) >> 24), 32);
    CHECK_OK(tdb_open(NULL, path, 0, &db));
    CHECK_OK(ts_bind_shale(db));
    CHECK_EQ(pager_usable_size(btree_pager(tdb_btree(db))), (uint32_t)sizes[i] - 32);
    if (ts_verify_shale(db, &m, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "reserve, page size %d: Shale reads: %s", sizes[i], msg);
    s.db = db;
    ts_exec_shale(&x, &s);
    CHECK_OK(ts_delete_some(&m, &x, 3, 42));
    CHECK_OK(ts_update_insert(&m, &x, 3, rows_small() / 2, 43));
    if (ts_verify_shale(db, &m, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "reserve, page size %d: after Shale's changes: %s", sizes[i],
                msg);
    CHECK_OK(tdb_close(db));
    CHECK_EQ((header_u32(path, 20) >> 24), 32);
    if (ts_verify_sqlite(path, &m, 100, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "reserve, page size %d: SQLite: %s", sizes[i], msg);
    ts_model_free(&m);
  }
}

static void auto_vacuum_written(const char *pre, int full) {
  const char *path = tscratch_path(full ? "autovac_full.db" : "autovac_incr.db");
  char msg[1024];
  TsModel m;
  Tdb *db;
  TsShale s;
  TsExec x;
  ts_model_init(&m, rows_small() * 2);
  sqlite3 *sdb = sqlite_fill(path, 1024, pre, &m, 0);
  CHECK(sdb != NULL);
  sqlite3_close(sdb);
  CHECK(header_u32(path, 52) != 0); /* largest root page: auto-vacuum on */
  CHECK_EQ(header_u32(path, 64), full ? 0u : 1u);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(ts_bind_shale(db));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "auto_vacuum file: Shale reads: %s", msg);
  s.db = db;
  ts_exec_shale(&x, &s);
  CHECK_OK(ts_delete_some(&m, &x, 3, 52));
  CHECK_OK(ts_update_insert(&m, &x, 3, rows_small() / 2, 53));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "auto_vacuum file: Shale after its changes: %s", msg);
  CHECK_OK(tdb_close(db));
  CHECK(header_u32(path, 52) != 0);
  if (full) CHECK_EQ(header_u32(path, 36), 0u); /* freelist emptied at commit */
  if (ts_verify_sqlite(path, &m, 50, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "auto_vacuum file: SQLite: %s", msg);
  ts_model_free(&m);
}

TEST(interop_auto_vacuum_full_written) { auto_vacuum_written("PRAGMA auto_vacuum=FULL", 1); }
TEST(interop_auto_vacuum_incremental_written) {
  auto_vacuum_written("PRAGMA auto_vacuum=INCREMENTAL", 0);
}

TEST(interop_persist_journal_not_hot) {
  const char *path = tscratch_path("persist.db");
  char jpath[600], msg[1024];
  TsModel m;
  Tdb *db;
  ts_model_init(&m, rows_small() * 2);
  sqlite3 *sdb = sqlite_fill(path, 4096, "PRAGMA journal_mode=PERSIST", &m, 0);
  CHECK(sdb != NULL);
  sqlite3_close(sdb);
  snprintf(jpath, sizeof jpath, "%s-journal", path);
  CHECK(file_size(jpath) > 0);        /* the journal stays behind ... */
  CHECK_EQ(header_u32(jpath, 0), 0u); /* ... with a zeroed header */
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(ts_bind_shale(db));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "PERSIST journal: Shale reads: %s", msg);
  CHECK_OK(tdb_close(db));
  if (ts_verify_sqlite(path, &m, 50, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "PERSIST journal: SQLite: %s", msg);
  ts_model_free(&m);
}

/* Ping-pong: Shale keeps its connection open (idle, no locks) while SQLite,
 * in between, changes the file; Shale must notice each change (the change
 * counter) and never serve a stale cached page, and vice versa. */
TEST(interop_ping_pong) {
  const char *path = tscratch_path("pingpong.db");
  char msg[1024];
  TsModel m;
  TsShale s;
  TsExec xs, xq;
  TsSqlite ss;
  Tdb *db;
  ts_model_init(&m, rows_small() * 4);
  sqlite3 *sdb = sqlite_fill(path, 1024, NULL, &m, 0);
  CHECK(sdb != NULL);
  sqlite3_close(sdb);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  pager_set_cache_size(btree_pager(tdb_btree(db)), 100000); /* keep everything cached */
  CHECK_OK(ts_bind_shale(db));
  s.db = db;
  ts_exec_shale(&xs, &s);
  for (int round = 0; round < 12; round++) {
    if (round % 2 == 0) {
      sdb = tsql_open(path);
      CHECK(sdb != NULL);
      if (!sdb) break;
      CHECK_EQ(ts_exec_sqlite(&xq, &ss, sdb), SQLITE_OK);
      CHECK_EQ(ts_delete_some(&m, &xq, 40, 100 + round), SQLITE_OK);
      CHECK_EQ(ts_update_insert(&m, &xq, 25, 50, 200 + round), SQLITE_OK);
      ts_exec_sqlite_done(&ss);
      sqlite3_close(sdb);
      if (ts_verify_shale(db, &m, msg, sizeof msg))
        test_fail(__FILE__, __LINE__, "round %d: Shale after SQLite's changes: %s", round, msg);
    } else {
      CHECK_OK(ts_delete_some(&m, &xs, 40, 300 + round));
      CHECK_OK(ts_update_insert(&m, &xs, 25, 50, 400 + round));
      if (ts_verify_sqlite(path, &m, 20, msg, sizeof msg))
        test_fail(__FILE__, __LINE__, "round %d: SQLite after Shale's changes: %s", round, msg);
    }
  }
  CHECK_OK(tdb_close(db));
  ts_model_free(&m);
}

/* CREATE INDEX over tables that already hold rows (tdb fills the index from
 * a scan), and a CREATE TABLE rolled back without a trace. */
TEST(interop_index_created_over_rows) {
  const char *path = tscratch_path("lateindex.db");
  char msg[1024];
  TsModel m;
  TsShale s;
  TsExec x;
  Tdb *db;
  ts_model_init(&m, rows_small() * 2);
  CHECK_OK(tdb_open(NULL, path, 4096, &db));
  for (int t = 0; t < TS_NTAB; t++) CHECK_OK(tdb_create_table(db, &ts_tables[t]));
  s.db = db;
  ts_exec_shale(&x, &s);
  CHECK_OK(ts_fill(&m, &x, rows_small()));
  CHECK_OK(ts_delete_some(&m, &x, 5, 51));
  for (int i = 0; i < TS_NIDX; i++) CHECK_OK(tdb_create_index(db, &ts_indexes[i]));
  if (ts_verify_shale(db, &m, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "Shale: %s", msg);

  static const TdbTableDef gone = {.name = "gone", .sql = "CREATE TABLE gone(a, b)", .ncols = 2};
  TdbValue v[2] = {tdb_int(1), tdb_int(2)};
  uint32_t cookie = 0;
  CHECK_OK(btree_begin(tdb_btree(db), BTREE_TXN_READ));
  CHECK_OK(btree_get_meta(tdb_btree(db), BTREE_META_SCHEMA_COOKIE, &cookie));
  CHECK_OK(btree_commit(tdb_btree(db)));
  CHECK_EQ(cookie, TS_NTAB + TS_NIDX);
  CHECK_OK(tdb_begin(db));
  CHECK_OK(tdb_create_table(db, &gone));
  CHECK_OK(tdb_insert(db, "gone", 1, v));
  CHECK_OK(tdb_rollback(db));
  CHECK_RC(tdb_insert(db, "gone", 1, v), SHALE_ERROR); /* forgotten */
  CHECK_OK(tdb_close(db));
  sqlite3 *sdb = tsql_open(path);
  CHECK_EQ(tsql_int(sdb, "SELECT count(*) FROM sqlite_schema WHERE name = 'gone'"), 0);
  CHECK_EQ(tsql_int(sdb, "PRAGMA schema_version"), TS_NTAB + TS_NIDX);
  sqlite3_close(sdb);
  if (ts_verify_sqlite(path, &m, 100, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "SQLite: %s", msg);
  ts_model_free(&m);
}
