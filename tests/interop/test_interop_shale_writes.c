/*
 * test_interop_shale_writes.c -- Shale writes, the reference SQLite checks.
 *
 * Through tdb (btree + records), Shale creates four tables (rowid, INTEGER
 * PRIMARY KEY, WITHOUT ROWID, PRIMARY KEY with an automatic index) and four
 * indexes (NOCASE text, multi-column, ...), writes interop_rows() rows with
 * values of every type (blobs up to 1 MiB), deletes a third, updates a fifth
 * and inserts a third again, at page sizes 1024, 4096 and 65536. After the
 * first fill and at the end, SQLite opens the file: integrity_check must be
 * exactly "ok", every row read by SELECT must equal what Shale wrote (types
 * included), and INDEXED BY look-ups must find the rows. The freed pages
 * must be reused (the file does not just grow), and sqlite_schema must hold
 * exactly the objects SQLite itself would have made.
 *
 * Invariants:
 *  1. The model (TsModel) is the truth both engines are compared with.
 */
#include <string.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tshape.h"
#include "../common/tsql.h"
#include "../test.h"
#include "interop_rows.h"

static void check_schema(const char *path) {
  sqlite3 *db = tsql_open(path);
  sqlite3_stmt *st = NULL;
  char got[1024] = "";
  size_t used = 0;
  CHECK(db != NULL);
  if (!db) return;
  CHECK_EQ(sqlite3_prepare_v2(db,
                              "SELECT type, name, tbl_name, rootpage > 1, sql IS NULL FROM "
                              "sqlite_schema ORDER BY rowid",
                              -1, &st, NULL),
           SQLITE_OK);
  while (st && sqlite3_step(st) == SQLITE_ROW && used < sizeof got - 100)
    used += (size_t)snprintf(got + used, sizeof got - used, "%s %s %s %d %d;",
                             sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                             sqlite3_column_text(st, 2), sqlite3_column_int(st, 3),
                             sqlite3_column_int(st, 4));
  sqlite3_finalize(st);
  CHECK_STR(got,
            "table t1 t1 1 0;table t2 t2 1 0;table t3 t3 1 0;table t4 t4 1 0;"
            "index sqlite_autoindex_t4_1 t4 1 1;index t1_b t1 1 0;index t1_ca t1 1 0;"
            "index t2_w t2 1 0;index t3_z t3 1 0;");
  /* One cookie step per CREATE, as SQLite; format 4, UTF-8. */
  CHECK_EQ(tsql_int(db, "PRAGMA schema_version"), 8);
  CHECK_STR((const char *)(sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &st, NULL) == SQLITE_OK &&
                                   sqlite3_step(st) == SQLITE_ROW
                               ? sqlite3_column_text(st, 0)
                               : (const unsigned char *)"?"),
            "UTF-8");
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK_EQ(header_u32(path, 44), 4);
}

/* Size of the file SQLite makes with the same operations (the yardstick
 * for page reuse). */
static int64_t sqlite_reference_size(uint32_t psz, int64_t rows) {
  char name[32];
  snprintf(name, sizeof name, "ref%u.db", psz);
  const char *path = tscratch_path(name);
  sqlite3 *sdb = tsql_open(path);
  TsModel m;
  TsSqlite ss;
  TsExec x;
  int64_t size = -1;
  ts_model_init(&m, rows);
  if (sdb && ts_create_sqlite(sdb, (int)psz) == SQLITE_OK &&
      ts_exec_sqlite(&x, &ss, sdb) == SQLITE_OK) {
    if (ts_fill(&m, &x, rows) == SQLITE_OK && ts_delete_some(&m, &x, 3, 11) == SQLITE_OK &&
        ts_update_insert(&m, &x, 5, rows / 3, 12) == SQLITE_OK)
      size = file_size(path);
    ts_exec_sqlite_done(&ss);
  }
  sqlite3_close(sdb);
  ts_model_free(&m);
  remove(path);
  CHECK(size > 0);
  return size;
}

static void shale_writes(uint32_t psz) {
  char name[32], msg[1024];
  snprintf(name, sizeof name, "sw%u.db", psz);
  const char *path = tscratch_path(name);
  int64_t rows = interop_rows();
  double t0 = now_s();
  TsModel m;
  TsShale s;
  TsExec x;
  Tdb *db;
  ts_model_init(&m, rows);

  CHECK_OK(tdb_open(NULL, path, psz, &db));
  CHECK_OK(ts_create_shale(db));
  s.db = db;
  ts_exec_shale(&x, &s);
  CHECK_OK(ts_fill(&m, &x, rows));
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "Shale after fill: %s", msg);
  CHECK_OK(tdb_close(db));
  int64_t size1 = file_size(path);
  CHECK_EQ(size1 % psz, 0);
  CHECK_EQ(header_u32(path, 16) >> 16, psz == 65536 ? 1 : psz);
  check_schema(path);
  if (ts_verify_sqlite(path, &m, 300, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "SQLite after fill (page size %u): %s", psz, msg);
  double t1 = now_s();

  /* Reopen (binding the descriptions to the file), delete, update, insert. */
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(ts_bind_shale(db));
  s.db = db;
  CHECK_OK(ts_delete_some(&m, &x, 3, 11));
  uint32_t free2 = header_u32(path, 36);
  CHECK(free2 > 0);
  CHECK_EQ(file_size(path), size1); /* deleting never grows the file */
  CHECK_OK(ts_update_insert(&m, &x, 5, rows / 3, 12));
  uint32_t free3 = header_u32(path, 36);
  int64_t size3 = file_size(path);
  CHECK(free3 < free2);
  /* The freed pages must be reused: the file may not end up much larger
   * than SQLite's after the very same operations. */
  int64_t ref = sqlite_reference_size(psz, rows);
  if (size3 > ref + ref / 10)
    test_fail(__FILE__, __LINE__, "page size %u: Shale's file %lld bytes, SQLite's %lld", psz,
              (long long)size3, (long long)ref);
  if (ts_verify_shale(db, &m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "Shale at end: %s", msg);
  CHECK_OK(tdb_close(db));
  if (ts_verify_sqlite(path, &m, 300, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "SQLite at end (page size %u): %s", psz, msg);
  printf(
      "  page size %5u: %lld rows written, %lld live; %lld -> %lld bytes (freelist %u -> %u; "
      "SQLite's file after the same: %lld); fill+check %.1f s, rest %.1f s\n",
      psz, (long long)rows, (long long)m.live, (long long)size1, (long long)size3, free2, free3,
      (long long)ref, t1 - t0, now_s() - t1);
  ts_model_free(&m);
}

TEST(interop_shale_writes_1024) { shale_writes(1024); }
TEST(interop_shale_writes_4096) { shale_writes(4096); }
TEST(interop_shale_writes_65536) { shale_writes(65536); }
