/*
 * engine_sqlite.c -- the differential tester's reference backend: the
 * system libsqlite3 (3.40.1), through its own <sqlite3.h>.
 *
 * Owns: diff_engine_sqlite.
 * Invariants:
 *  1. Every handle is a private ":memory:" database; nothing touches disk.
 *  2. Values are fetched in their own storage class (column_type first),
 *     so the comparison sees exactly what the engine produced.
 *  3. query prepares only the first statement of its text and always
 *     finalizes it; changes() is recorded only for a successful write.
 *  4. Automatic indexes are off (a 3.40.1 bug makes them change results).
 *  5. Every handle has the tests' table-valued function tseries (series_vt.h).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "diff.h"

#define SV(x) sqlite3_##x
#define SVC(x) SQLITE_##x
#define SV_DB sqlite3
#include "series_vt.h"

static void *sq_open(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_extended_result_codes(db, 1);
  /* 3.40.1's automatic (transient) index compares with the indexed
   * column's collation, not the comparison's: with it on, a join such as
   * "a.x_rtrim = b.y" loses rows that a scan finds. The oracle must not
   * depend on its plan, so it plans without automatic indexes. */
  sqlite3_exec(db, "PRAGMA automatic_index=OFF", NULL, NULL, NULL);
  if (series_vt_register(db) != SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

/* The same engine with other plans: unordered scans reversed and the query
 * optimizations off, so any statement whose result depends on the plan
 * (a generator bug, gen.h invariant 2) shows up as a difference. */
static void *sq_open_other_plans(void) {
  sqlite3 *db = sq_open();
  if (!db) return NULL;
  sqlite3_exec(db, "PRAGMA reverse_unordered_selects=1", NULL, NULL, NULL);
  if (getenv("SHALE_DIFF_NO_OPT"))
    sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, db, 0xffffffff);
  return db;
}

static int sq_exec(void *h, const char *sql) { return sqlite3_exec(h, sql, NULL, NULL, NULL); }

static void sq_query(void *h, const char *sql, DiffResult *out) {
  sqlite3 *db = h;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK || !st) {
    if (rc != SQLITE_OK)
      diff_result_set_error(out, rc & 0xff, sqlite3_extended_errcode(db), sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return;
  }
  int n = sqlite3_column_count(st);
  out->ncol = n;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    DiffValue *v = diff_result_add_row(out);
    if (!v) {
      rc = SQLITE_NOMEM;
      break;
    }
    for (int i = 0; i < n; i++) {
      switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
          v[i].type = DIFF_INTEGER;
          v[i].i = sqlite3_column_int64(st, i);
          break;
        case SQLITE_FLOAT:
          v[i].type = DIFF_FLOAT;
          v[i].r = sqlite3_column_double(st, i);
          break;
        case SQLITE_TEXT: {
          const unsigned char *z = sqlite3_column_text(st, i);
          diff_value_set_bytes(&v[i], DIFF_TEXT, z, (size_t)sqlite3_column_bytes(st, i));
          break;
        }
        case SQLITE_BLOB: {
          const void *z = sqlite3_column_blob(st, i);
          diff_value_set_bytes(&v[i], DIFF_BLOB, z, (size_t)sqlite3_column_bytes(st, i));
          break;
        }
        default:
          v[i].type = DIFF_NULL;
          break;
      }
    }
  }
  if (rc != SQLITE_DONE) {
    /* sqlite3_finalize returns the statement's error after a failed step */
    int frc = sqlite3_finalize(st);
    if (frc == SQLITE_OK) frc = rc;
    diff_result_set_error(out, frc & 0xff, sqlite3_extended_errcode(db), sqlite3_errmsg(db));
    return;
  }
  if (!sqlite3_stmt_readonly(st)) out->changes = sqlite3_changes64(db);
  sqlite3_finalize(st);
}

static const char *sq_errmsg(void *h) { return sqlite3_errmsg(h); }

static void sq_close(void *h) { sqlite3_close(h); }

const DiffEngine diff_engine_sqlite = {"sqlite", sq_open, sq_exec, sq_query, sq_errmsg, sq_close};
const DiffEngine diff_engine_sqlite_other_plans = {
    "sqlite-other-plans", sq_open_other_plans, sq_exec, sq_query, sq_errmsg, sq_close};
