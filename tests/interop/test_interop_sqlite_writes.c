/*
 * test_interop_sqlite_writes.c -- the reference SQLite writes, Shale reads
 * and modifies, SQLite checks again.
 *
 * SQLite creates the same shapes as test_interop_shale_writes.c with SQL,
 * fills them, deletes and updates (so its file has a freelist and overflow
 * chains), at page sizes 1024, 4096 and 65536. Shale then reads every row
 * (decoding SQLite's records) and must see exactly the model (which SQLite's
 * own SELECTs are checked against first), and its integrity check must be
 * clean on SQLite's file. Shale deletes, updates and inserts through tdb
 * (keeping SQLite's indexes right), closes, and SQLite's integrity_check
 * must be "ok" with exactly the modified content; finally SQLite modifies
 * Shale's file once more and Shale reads it back.
 *
 * Invariants:
 *  1. Never more than one connection writes the file at a time.
 */
#include <string.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tshape.h"
#include "../common/tsql.h"
#include "../test.h"
#include "interop_rows.h"

static void sqlite_phase(const char *path, int create_psz, TsModel *m, int64_t fill, int del_every,
                         int upd_every, int64_t newrows, uint64_t seed) {
  sqlite3 *sdb = tsql_open(path);
  TsSqlite ss;
  TsExec x;
  CHECK(sdb != NULL);
  if (!sdb) return;
  if (create_psz) CHECK_EQ(ts_create_sqlite(sdb, create_psz), SQLITE_OK);
  CHECK_EQ(ts_exec_sqlite(&x, &ss, sdb), SQLITE_OK);
  if (fill) CHECK_EQ(ts_fill(m, &x, fill), SQLITE_OK);
  if (del_every) CHECK_EQ(ts_delete_some(m, &x, del_every, seed), SQLITE_OK);
  if (upd_every) CHECK_EQ(ts_update_insert(m, &x, upd_every, newrows, seed + 1), SQLITE_OK);
  ts_exec_sqlite_done(&ss);
  CHECK_EQ(sqlite3_close(sdb), SQLITE_OK);
}

static void sqlite_writes(uint32_t psz) {
  char name[32], msg[1024];
  snprintf(name, sizeof name, "qw%u.db", psz);
  const char *path = tscratch_path(name);
  int64_t rows = interop_rows();
  double t0 = now_s();
  TsModel m;
  TsShale s;
  TsExec x;
  Tdb *db;
  ts_model_init(&m, rows);

  sqlite_phase(path, (int)psz, &m, rows, 4, 0, 0, 21);
  CHECK(header_u32(path, 36) > 0); /* SQLite's deletes left a freelist */
  sqlite_phase(path, 0, &m, 0, 0, 6, rows / 10, 21);
  if (ts_verify_sqlite(path, &m, 100, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "SQLite's own file (page size %u): %s", psz, msg);
  double t1 = now_s();

  /* Shale reads every row exactly, and finds SQLite's file sound. */
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_EQ(btree_page_size(tdb_btree(db)), psz);
  CHECK_OK(ts_bind_shale(db));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "Shale reading SQLite's file (page size %u): %s", psz, msg);

  /* Shale modifies: the indexes SQLite built must stay right. */
  s.db = db;
  ts_exec_shale(&x, &s);
  CHECK_OK(ts_delete_some(&m, &x, 3, 23));
  CHECK_OK(ts_update_insert(&m, &x, 4, rows / 5, 24));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "Shale after its changes (page size %u): %s", psz, msg);
  CHECK_OK(tdb_close(db));
  if (ts_verify_sqlite(path, &m, 300, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "SQLite after Shale's changes (page size %u): %s", psz, msg);

  /* And back once more: SQLite changes Shale's file, Shale reads it. */
  sqlite_phase(path, 0, &m, 0, 7, 9, rows / 20, 25);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(ts_bind_shale(db));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "Shale after SQLite's second round (page size %u): %s", psz, msg);
  CHECK_OK(tdb_close(db));
  printf(
      "  page size %5u: %lld rows by SQLite, %lld live at end; SQLite phase %.1f s, rest %.1f s\n",
      psz, (long long)rows, (long long)m.live, t1 - t0, now_s() - t1);
  ts_model_free(&m);
}

TEST(interop_sqlite_writes_1024) { sqlite_writes(1024); }
TEST(interop_sqlite_writes_4096) { sqlite_writes(4096); }
TEST(interop_sqlite_writes_65536) { sqlite_writes(65536); }
