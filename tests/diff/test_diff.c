/*
 * test_diff.c -- the differential tester as a test binary (issue 3).
 *
 * Cases:
 *  - the generator is deterministic and its statements mostly succeed;
 *  - the comparison modes (multiset, canonical, ordered with ties, LIMIT);
 *  - a fault-injecting engine is caught (the tester can fail);
 *  - SQLite against SQLite with other plans (reversed unordered scans): a
 *    fixed-seed batch with zero differences, which proves the generated
 *    results do not depend on the plan;
 *  - Shale against SQLite: the fixed-seed batch of at least 20,000
 *    statements (SHALE_DIFF_N), every difference printed, the first 20 in
 *    full with a reproduction script.
 *
 * Environment: SHALE_DIFF_SEED (default 1), SHALE_DIFF_N (default 20,000),
 * SHALE_DIFF_STRICT (see below).
 *
 * Invariants:
 *  1. The default batch is >= 20,000 statements in every build.
 *  2. SHALE_DIFF_STRICT_DEFAULT is the allow-list switch for the engine
 *     under test: while it is 0, differences against Shale are printed and
 *     counted but do not fail the case. It is 1 since the batch reached
 *     zero differences (SHALE_DIFF_STRICT=0 in the environment makes them
 *     non-fatal again, e.g. to list them all).
 */
#include <stdlib.h>
#include <string.h>

#include "../test.h"
#include "diff.h"
#include "gen.h"

#ifndef SHALE_DIFF_STRICT_DEFAULT
#define SHALE_DIFF_STRICT_DEFAULT 1 /* every difference vs Shale fails the case */
#endif

static uint64_t diff_seed(void) {
  const char *s = getenv("SHALE_DIFF_SEED");
  return s ? strtoull(s, NULL, 0) : 1;
}

/* ASan/UBSan builds run shorter batches (CI runs the suite in both). */
#if defined(__SANITIZE_ADDRESS__)
#define DIFF_SANITIZED 1
#else
#define DIFF_SANITIZED 0
#endif

static long diff_n(long dflt) {
  const char *s = getenv("SHALE_DIFF_N");
  return s ? strtol(s, NULL, 0) : dflt;
}

static int diff_strict(void) {
  const char *s = getenv("SHALE_DIFF_STRICT");
  return s ? atoi(s) != 0 : SHALE_DIFF_STRICT_DEFAULT;
}

TEST(diff_generator_is_deterministic) {
  DiffGen *a = gen_new(7), *b = gen_new(7), *c = gen_new(8);
  CHECK(a && b && c);
  int same_c = 0, rounds = 0;
  for (int i = 0; i < 3000; i++) {
    GenStmt x, y, z;
    gen_next(a, &x);
    gen_next(b, &y);
    gen_next(c, &z);
    if (strcmp(x.sql, y.sql) || x.kind != y.kind || x.cmp != y.cmp || x.tags != y.tags) {
      test_fail(__FILE__, __LINE__, "statement %d differs: %s / %s", i, x.sql, y.sql);
      break;
    }
    same_c += !strcmp(x.sql, z.sql);
    rounds += x.new_round;
  }
  CHECK(same_c < 100); /* another seed, another stream */
  CHECK(rounds >= 5);
  gen_free(a);
  gen_free(b);
  gen_free(c);
}

/* Build a one-column result from a list of values. */
static void put_int(DiffResult *r, int64_t i) {
  DiffValue *v = diff_result_add_row(r);
  v->type = DIFF_INTEGER;
  v->i = i;
}
static void put_real(DiffResult *r, double d) {
  DiffValue *v = diff_result_add_row(r);
  v->type = DIFF_FLOAT;
  v->r = d;
}
static void put_text(DiffResult *r, const char *s) {
  DiffValue *v = diff_result_add_row(r);
  diff_value_set_bytes(v, DIFF_TEXT, s, strlen(s));
}

TEST(diff_compare_modes) {
  DiffResult a, b;
  char why[160];
  diff_result_init(&a);
  diff_result_init(&b);
  a.ncol = b.ncol = 1;
  /* Multisets: order does not matter, types do. */
  put_int(&a, 1), put_int(&a, 2), put_int(&a, 2);
  put_int(&b, 2), put_int(&b, 1), put_int(&b, 2);
  CHECK(!diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  CHECK(diff_compare(&a, &b, DIFF_CMP_ORDERED, 0, why, sizeof why));
  diff_result_reset(&b);
  b.ncol = 1;
  put_int(&b, 1), put_int(&b, 2), put_real(&b, 2.0);
  CHECK(diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  CHECK(!diff_compare(&a, &b, DIFF_CMP_LOOSE, 0, why, sizeof why));
  /* Ordered: 2 and 2.0 tie, so their order inside the group is free, but
   * the group must still match exactly (types) unless LIMIT cut it. */
  CHECK(diff_compare(&a, &b, DIFF_CMP_ORDERED, 0, why, sizeof why));
  CHECK(!diff_compare(&a, &b, DIFF_CMP_ORDERED, 1, why, sizeof why));
  diff_result_reset(&a);
  diff_result_reset(&b);
  a.ncol = b.ncol = 1;
  put_text(&a, "a"), put_text(&a, "A"), put_text(&a, "b");
  put_text(&b, "A"), put_text(&b, "a"), put_text(&b, "b");
  CHECK(!diff_compare(&a, &b, DIFF_CMP_ORDERED, 0, why, sizeof why)); /* NOCASE tie */
  diff_result_reset(&b);
  b.ncol = 1;
  put_text(&b, "a"), put_text(&b, "b"), put_text(&b, "A");
  CHECK(diff_compare(&a, &b, DIFF_CMP_ORDERED, 0, why, sizeof why));
  /* Reals: equal bits or equal %.15g; not beyond. */
  diff_result_reset(&a);
  diff_result_reset(&b);
  a.ncol = b.ncol = 1;
  put_real(&a, 0.1 + 0.2);
  put_real(&b, 0.3);
  CHECK(!diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  diff_result_reset(&b);
  b.ncol = 1;
  put_real(&b, 0.30000000001);
  CHECK(diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  /* Errors: both failing agree; one failing differs. */
  diff_result_reset(&a);
  diff_result_reset(&b);
  diff_result_set_error(&a, 1, 1, "no such table: x");
  diff_result_set_error(&b, 1, 1, "other text");
  CHECK(!diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  diff_result_reset(&b);
  CHECK(diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  /* changes() of a write. */
  diff_result_reset(&a);
  diff_result_reset(&b);
  a.changes = 3;
  b.changes = 2;
  CHECK(diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why));
  diff_result_free(&a);
  diff_result_free(&b);
}

/* A faulty engine: SQLite, but every 40th multi-row result loses its last
 * row, and every 97th statement turns an integer 1 into 1.0. */
static long faulty_calls;
static void faulty_query(void *h, const char *sql, DiffResult *out) {
  diff_engine_sqlite.query(h, sql, out);
  faulty_calls++;
  if (out->rc) return;
  if (out->nrow > 1 && faulty_calls % 40 == 0) {
    size_t last = out->nrow - 1;
    for (int c = 0; c < out->ncol; c++) free(out->v[last * (size_t)out->ncol + (size_t)c].z);
    out->nrow--;
  }
  if (faulty_calls % 97 == 0)
    for (size_t i = 0; i < out->nrow * (size_t)out->ncol; i++)
      if (out->v[i].type == DIFF_INTEGER && out->v[i].i == 1) {
        out->v[i].type = DIFF_FLOAT;
        out->v[i].r = 1.0;
      }
}

TEST(diff_catches_a_faulty_engine) {
  DiffEngine faulty = diff_engine_sqlite;
  faulty.name = "faulty-sqlite";
  faulty.query = faulty_query;
  faulty_calls = 0;
  DiffOptions o = {.seed = 3,
                   .n = 3000,
                   .ref = &diff_engine_sqlite,
                   .test = &faulty,
                   .max_details = 1,
                   .minimize = 1,
                   .out = stderr};
  DiffStats st;
  fprintf(stderr, "--- expected differences from a fault-injecting engine:\n");
  CHECK_OK(diff_run(&o, &st));
  fprintf(stderr, "--- end of expected differences\n");
  CHECK(st.diffs > 5);
}

static void run_batch(const DiffEngine *test, long n, int strict, const char *label) {
  DiffOptions o = {.seed = diff_seed(),
                   .n = n,
                   .ref = &diff_engine_sqlite,
                   .test = test,
                   .max_details = 20,
                   .minimize = 3,
                   .out = stderr};
  DiffStats st;
  CHECK_OK(diff_run(&o, &st));
  fprintf(stderr, "%s: ", label);
  diff_stats_print(stderr, &st);
  CHECK(st.stmts == n);
  CHECK(st.rows_total > n); /* the queries return rows */
  CHECK(st.ordered > n / 20 && st.loose > 0 && st.both_error > n / 200);
  if (st.diffs) {
    if (strict)
      test_fail(__FILE__, __LINE__, "%ld differences", st.diffs);
    else
      fprintf(stderr, "%ld differences (not yet fatal: SHALE_DIFF_STRICT=0)\n", st.diffs);
  }
}

TEST(diff_sqlite_vs_sqlite_other_plans) {
  /* The generator and comparison against the reference run with reversed
   * unordered scans: any statement whose result depends on the plan is a
   * generator bug, so this must be exact (gen.h invariant 2). */
  long n = getenv("SHALE_DIFF_N") ? diff_n(0)
           : DIFF_SANITIZED       ? 4000
           : diff_engine_shale    ? 6000
                                  : 20000;
  run_batch(&diff_engine_sqlite_other_plans, n, 1, "sqlite vs sqlite-other-plans");
}

TEST(diff_shale_vs_sqlite) {
  if (!diff_engine_shale) {
    fprintf(stderr, "diff_shale_vs_sqlite: the shale_* API is not built yet; skipped\n");
    return;
  }
  long full = DIFF_SANITIZED ? 8000 : 20000; /* issue 7: 20,000 at 0 differences */
  long n = diff_n(full);
  if (n < full && !getenv("SHALE_DIFF_N")) n = full;
  run_batch(diff_engine_shale, n, diff_strict(), "shale vs sqlite");
}
