/*
 * test_group_paths.c -- GROUP BY through the hash table of groups
 * (src/vm/vm_hash.c), alone and spilling new keys to the sorter once the
 * table is past a (tiny) budget, and ORDER BY ... LIMIT through the
 * sorter's bounded heap (and the plain sort it falls back to past the
 * budget), against the reference SQLite: the same rows, in the same order,
 * with the same bare columns and float sums.
 *
 * Invariants:
 *  1. Every query runs on the reference and on Shale with the default
 *     sorter budget, with budget 1 (one group in the table, every other key
 *     through the sorter) and with a few hundred bytes (both paths mixed);
 *     each rendering (reals with %.17g, types tagged) must equal SQLite's.
 *  2. Each statement runs twice (reset and rerun: the table is emptied and
 *     reused), the rerun with the budget set on its Vm.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../../../src/api/api_int.h"
#include "../../test.h"
#include "shale.h"

static size_t put_value(char *out, size_t cap, int type, double r, const unsigned char *z) {
  if (type == SHALE_FLOAT) return (size_t)snprintf(out, cap, "r%.17g|", r);
  if (type == SHALE_NULL) return (size_t)snprintf(out, cap, "NULL|");
  return (size_t)snprintf(out, cap, "%c%s|", "?iftbn"[type > 5 ? 0 : type], (const char *)z);
}

static void render_shale(shale *db, const char *sql, uint64_t budget, char *out, size_t cap) {
  shale_stmt *st = NULL;
  size_t n = 0;
  out[0] = 0;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    snprintf(out, cap, "error: %s", shale_errmsg(db));
    return;
  }
  for (int rep = 0; rep < 2; rep++) {
    int rc;
    /* the Vm exists from the first step on: the budget applies to the rerun */
    if (st->vm && budget) vm_set_sorter_budget(st->vm, budget);
    if (rep) n += (size_t)snprintf(out + n, cap - n, "--\n");
    while ((rc = shale_step(st)) == SHALE_ROW && n + 200 < cap) {
      for (int i = 0; i < shale_column_count(st); i++) {
        int t = shale_column_type(st, i); /* before the conversions below */
        double r = shale_column_double(st, i);
        n += put_value(out + n, cap - n, t, r, shale_column_text(st, i));
      }
      n += (size_t)snprintf(out + n, cap - n, "\n");
    }
    if (rc != SHALE_DONE && rc != SHALE_ROW)
      n += (size_t)snprintf(out + n, cap - n, "error: %s", shale_errmsg(db));
    shale_reset(st);
  }
  shale_finalize(st);
}

static void render_sqlite(sqlite3 *db, const char *sql, char *out, size_t cap) {
  sqlite3_stmt *st = NULL;
  size_t n = 0;
  int rc;
  out[0] = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    snprintf(out, cap, "error: %s", sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && n + 200 < cap) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      int t = sqlite3_column_type(st, i);
      double r = sqlite3_column_double(st, i);
      n += put_value(out + n, cap - n, t, r, sqlite3_column_text(st, i));
    }
    n += (size_t)snprintf(out + n, cap - n, "\n");
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    n += (size_t)snprintf(out + n, cap - n, "error: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  /* as render_shale: the result twice */
  size_t len = strlen(out);
  if (2 * len + 4 < cap) {
    memcpy(out + len, "--\n", 3);
    memcpy(out + len + 3, out, len);
    out[2 * len + 3] = 0;
  }
}

static char a[1 << 18], b[1 << 18];

static void both(shale *sh, sqlite3 *sq, const char *sql) {
  int rc1 = shale_exec(sh, sql, NULL, NULL, NULL);
  int rc2 = sqlite3_exec(sq, sql, NULL, NULL, NULL);
  CHECK_EQ(rc1, SHALE_OK);
  CHECK_EQ(rc2, SQLITE_OK);
}

TEST(group_by_hash_and_spill_match_sqlite) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  CHECK_OK(shale_open_v2(":memory:", &sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  CHECK_EQ(sqlite3_open(":memory:", &sq), SQLITE_OK);
  both(sh, sq,
       "CREATE TABLE t(id INTEGER PRIMARY KEY, k, r REAL, v TEXT, w TEXT COLLATE NOCASE,"
       " x TEXT COLLATE RTRIM, bl BLOB)");
  uint64_t s = test_seed();
  char sql[300];
  static const char *words[] = {"a", "A", "b", "B ", "b", "abc", "ABC", "abc  ", "", "z"};
  both(sh, sq, "BEGIN");
  for (int i = 1; i <= 700; i++) {
    int kk = (int)(test_rand(&s) % 30);
    const char *kexpr;
    char kbuf[40];
    switch (test_rand(&s) % 6) {
      case 0:
        kexpr = "NULL";
        break;
      case 1:
        snprintf(kbuf, sizeof kbuf, "%d.0", kk);
        kexpr = kbuf;
        break;
      case 2:
        snprintf(kbuf, sizeof kbuf, "'%d'", kk);
        kexpr = kbuf;
        break;
      case 3:
        snprintf(kbuf, sizeof kbuf, "x'%02x'", kk);
        kexpr = kbuf;
        break;
      case 4:
        snprintf(kbuf, sizeof kbuf, "%d.5", kk);
        kexpr = kbuf;
        break;
      default:
        snprintf(kbuf, sizeof kbuf, "%d", kk);
        kexpr = kbuf;
        break;
    }
    const char *w1 = words[test_rand(&s) % 10], *w2 = words[test_rand(&s) % 10];
    const char *w3 = words[test_rand(&s) % 10];
    snprintf(sql, sizeof sql, "INSERT INTO t VALUES(%d, %s, %d.%03d, %s, '%s', '%s', x'%02x')", i,
             kexpr, (int)(test_rand(&s) % 1000), (int)(test_rand(&s) % 1000),
             test_rand(&s) % 9 ? "'v' || (abs(random()) % 5)" : "NULL", w2, w3,
             (int)(test_rand(&s) % 4));
    (void)w1;
    /* random() differs between the engines: fix v afterwards */
    both(sh, sq, sql);
    snprintf(sql, sizeof sql, "UPDATE t SET v = %s WHERE id = %d",
             test_rand(&s) % 9 ? (test_rand(&s) % 2 ? "'v1'" : "'v22'") : "NULL", i);
    both(sh, sq, sql);
  }
  both(sh, sq, "COMMIT");
  static const char *queries[] = {
      "SELECT k, count(*), sum(r), total(r), avg(r), min(v), max(v) FROM t GROUP BY k",
      "SELECT typeof(k), k, count(*) FROM t GROUP BY k",
      "SELECT k % 7, group_concat(id), v FROM t GROUP BY k % 7",
      "SELECT w, count(*), group_concat(w, ''), min(id) FROM t GROUP BY w",
      "SELECT x, count(*), max(r), id FROM t GROUP BY x",
      "SELECT w, x, k % 3, count(*), sum(id) FROM t GROUP BY w, x, k % 3",
      "SELECT bl, count(*), max(id), r FROM t GROUP BY bl",
      "SELECT v, max(r), id, k FROM t GROUP BY v",
      "SELECT v, min(r), id, k FROM t GROUP BY v",
      "SELECT v, min(r), max(r), id FROM t GROUP BY v",
      "SELECT k, count(*) FILTER (WHERE r > 500), max(r) FILTER (WHERE id % 2), id FROM t"
      " GROUP BY k",
      "SELECT k, count(*) c FROM t GROUP BY k HAVING c > 20 ORDER BY c DESC, 1",
      "SELECT k, sum(r) FROM t GROUP BY k ORDER BY 2 DESC LIMIT 5 OFFSET 2",
      "SELECT k, count(DISTINCT v), count(*) FROM t GROUP BY k",
      "SELECT upper(v) u, count(*) FROM t WHERE id > 100 GROUP BY u LIMIT 3",
      "SELECT k, (SELECT count(*) FROM t t2 WHERE t2.k = t.k), count(*) FROM t GROUP BY k",
      "SELECT count(*), v FROM t GROUP BY v, w COLLATE BINARY ORDER BY 2, 1",
      "SELECT sum(k), k FROM t WHERE typeof(k) = 'integer' GROUP BY k % 4",
      "SELECT k, sum(9223372036854775807) FROM t GROUP BY k",
      "SELECT k, json_group_array(id) FROM t WHERE id < 200 GROUP BY k",
      /* ORDER BY ... LIMIT: the bounded heap, its compaction, and the plain
       * sort it falls back to once the kept rows pass the budget */
      "SELECT id, k, v FROM t ORDER BY v, r LIMIT 7 OFFSET 3",
      "SELECT id FROM t ORDER BY k DESC, w LIMIT 50",
      "SELECT id, x FROM t ORDER BY x, bl DESC LIMIT 300 OFFSET 10",
      "SELECT k, count(*) FROM t GROUP BY k ORDER BY 2 DESC, 1 LIMIT 5",
  };
  static const uint64_t budgets[] = {0, 1, 400};
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
    render_sqlite(sq, queries[i], b, sizeof b);
    for (int k = 0; k < 3; k++) {
      render_shale(sh, queries[i], budgets[k], a, sizeof a);
      if (strcmp(a, b) != 0) fprintf(stderr, "budget %d: %s\n", (int)budgets[k], queries[i]);
      CHECK_STR(a, b);
    }
  }
  shale_close(sh);
  sqlite3_close(sq);
}

/* Out of memory at every allocation of a hash GROUP BY (with its sorter
 * fallback), a DISTINCT hash set and a top-N sort: an error or the right
 * rows, never a crash or a leak (the harness counts blocks). */
TEST(group_paths_out_of_memory) {
  shale *sh = NULL;
  CHECK_OK(shale_open_v2(":memory:", &sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  CHECK_OK(
      shale_exec(sh,
                 "CREATE TABLE t(id INTEGER PRIMARY KEY, k, v TEXT);"
                 "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 300)"
                 " INSERT INTO t SELECT i, i % 37, 'v' || (i % 11) FROM g;",
                 NULL, NULL, NULL));
  static const char *queries[] = {
      "SELECT k, count(*), group_concat(v), max(v), id FROM t GROUP BY k",
      "SELECT v, count(DISTINCT k), sum(id) FROM t GROUP BY v",
      "SELECT DISTINCT v, k % 3 FROM t",
      "SELECT id, v FROM t ORDER BY v DESC, k LIMIT 5 OFFSET 2",
  };
  static const int want[] = {37, 11, 33, 5};
  for (int q = 0; q < 8; q++) {
    /* q < 4: a fresh statement each time; else a rerun with a 200-byte
     * budget (hash table refusing keys, sorter spilling) */
    const char *sql = queries[q % 4];
    shale_stmt *kept = NULL;
    if (q >= 4) {
      CHECK_OK(shale_prepare_v2(sh, sql, -1, &kept, NULL));
      while (shale_step(kept) == SHALE_ROW) {
      }
      shale_reset(kept);
      CHECK(kept->vm != NULL);
      if (kept->vm) vm_set_sorter_budget(kept->vm, 200);
    }
    int complete = 0;
    for (long n = 1; n < 5000; n++) {
      shale_stmt *st = kept;
      int rows = 0, rc = SHALE_OK;
      util_fault_alloc(n, 0);
      if (!kept) rc = shale_prepare_v2(sh, sql, -1, &st, NULL);
      if (rc == SHALE_OK)
        while ((rc = shale_step(st)) == SHALE_ROW) rows++;
      long hits = util_fault_alloc_hits();
      util_fault_alloc(0, 0);
      if (kept)
        shale_reset(st);
      else
        shale_finalize(st);
      if (rc == SHALE_DONE) {
        CHECK_EQ(rows, want[q % 4]);
        complete++;
      } else if (rc != SHALE_NOMEM) {
        test_fail(__FILE__, __LINE__, "query %d, n=%ld: rc %d", q, n, rc);
      }
      if (hits == 0) break;
    }
    CHECK(complete >= 1);
    shale_finalize(kept);
  }
  shale_close(sh);
}
