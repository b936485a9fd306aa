/*
 * test_reuse_alloc.c -- a prepared statement is re-run (bind, step, reset)
 * without allocating: DESIGN.md's "a program is reused across executions
 * without allocating" and "values read from pages are borrowed, not copied",
 * checked with the allocator's counter (util_alloc_count).
 *
 * Invariants:
 *  1. After a warm-up, 200 further runs of a point query by rowid, by index,
 *     a short range scan, aggregates and a GROUP BY make zero allocations,
 *     in rollback-journal and in WAL mode: cursors, aggregate contexts and
 *     sorter buffers are kept by the Btree and the Vm for the next run.
 */
#include <stdio.h>

#include "../../../src/util/util.h"
#include "../../test.h"
#include "shale.h"

static long runs_allocs(shale *db, const char *sql, int nparam) {
  shale_stmt *st = NULL;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    fprintf(stderr, "prepare %s: %s\n", sql, shale_errmsg(db));
    return -1;
  }
  long before = 0, sum = 0;
  for (int i = 0; i < 250; i++) {
    if (i == 50) before = util_alloc_count(); /* runs 0..49 (each key once) warm up */
    for (int k = 1; k <= nparam; k++) shale_bind_int64(st, k, i % 50 + 1);
    while (shale_step(st) == SHALE_ROW) sum += shale_column_int64(st, 0);
    shale_reset(st);
  }
  long n = util_alloc_count() - before;
  shale_finalize(st);
  return sum >= 0 ? n : -1;
}

static void check_mode(const char *journal) {
  shale *db = NULL;
  const char *path = test_path("reuse.db");
  remove(path);
  CHECK_OK(shale_open_v2(path, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  char sql[200];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", journal);
  CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
  CHECK_OK(shale_exec(db,
                      "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
                      "CREATE INDEX t_k ON t(k); BEGIN;",
                      NULL, NULL, NULL));
  for (int i = 1; i <= 500; i++) {
    snprintf(sql, sizeof sql, "INSERT INTO t VALUES(%d, %d, 'text value number %d')", i, i % 97, i);
    CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
  }
  CHECK_OK(shale_exec(db, "COMMIT", NULL, NULL, NULL));
  static const struct {
    const char *sql;
    int nparam;
  } qs[] = {
      {"SELECT k, v FROM t WHERE id = ?1", 1},
      {"SELECT id, v FROM t WHERE k = ?1", 1},
      {"SELECT id FROM t WHERE id BETWEEN ?1 AND ?1 + 5", 1},
      {"SELECT count(*), sum(k), avg(id) FROM t WHERE k < ?1", 1},
      {"SELECT k % 5, count(*), sum(id) FROM t WHERE k < ?1 GROUP BY 1", 1},
  };
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    long n = runs_allocs(db, qs[i].sql, qs[i].nparam);
    if (n != 0)
      fprintf(stderr, "  %s mode: %ld allocations in 200 runs of %s\n", journal, n, qs[i].sql);
    CHECK_EQ(n, 0);
  }
  shale_close(db);
}

TEST(rerun_allocates_nothing_rollback) { check_mode("delete"); }
TEST(rerun_allocates_nothing_wal) { check_mode("wal"); }
