/*
 * test_func_agg.c -- aggregates against the reference: random groups of
 * corpus values fed to step/final here and to "SELECT agg(x) FROM t" there;
 * sliding windows (step, inverse, value) against "agg(x) OVER (ROWS BETWEEN
 * k PRECEDING AND CURRENT ROW)" for k = 0..3; collations for min/max; OOM.
 */
#include "func_test.h"

typedef struct Row {
  ShValue x, y;
} Row;

static void random_row(uint64_t *s, Row *r) {
  int k = (int)(test_rand(s) % 10);
  if (k < 6)
    corpus_value((int)(test_rand(s) % NCORPUS), &r->x);
  else if (k < 8)
    value_set_int(&r->x, (int64_t)(test_rand(s) % 200) - 100);
  else if (k < 9)
    value_set_int(&r->x, INT64_MAX - (int64_t)(test_rand(s) % 3));
  else
    value_set_real(&r->x, (double)(test_rand(s) % 1000) / 8.0);
  static const char *const seps[] = {",", "; ", "", "--", "\xc3\xa9"};
  if (test_rand(s) % 6 == 0)
    value_set_null(&r->y);
  else if (test_rand(s) % 6 == 0)
    value_set_int(&r->y, 7);
  else
    value_set_text(&r->y, seps[test_rand(s) % 5], (uint32_t)strlen(seps[test_rand(s) % 1]));
  if (r->y.type == SHALE_TEXT) {
    const char *z = seps[test_rand(s) % 5];
    value_set_text(&r->y, z, (uint32_t)strlen(z));
  }
}

static void fill_table(sqlite3 *db, Row *rows, int n) {
  sqlite3_exec(db,
               "DROP TABLE IF EXISTS t; CREATE TABLE t(id INTEGER PRIMARY KEY, x, y, "
               "z TEXT COLLATE NOCASE)",
               0, 0, 0);
  sqlite3_stmt *ins;
  sqlite3_prepare_v2(db, "INSERT INTO t(id, x, y, z) VALUES(?1, ?2, ?3, ?2)", -1, &ins, 0);
  for (int i = 0; i < n; i++) {
    sqlite3_bind_int(ins, 1, i + 1);
    ref_bind(ins, 2, &rows[i].x);
    ref_bind(ins, 3, &rows[i].y);
    sqlite3_step(ins);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
}

/* Finish ctx into a CallResult. */
static void collect(FuncCtx *ctx, CallResult *out, int finish) {
  memset(out, 0, sizeof(*out));
  value_set_null(&out->v);
  if (finish) {
    int rc = ctx->rc;
    char *m = ctx->errmsg;
    ctx->errmsg = NULL;
    func_agg_finish(ctx);
    if (rc) { /* a step error wins; the final still released the state */
      func_ctx_reset(ctx);
      ctx->rc = rc;
      ctx->errmsg = m;
    } else {
      shale_free(m);
    }
  }
  out->rc = ctx->rc;
  if (ctx->rc)
    snprintf(out->msg, sizeof(out->msg), "%s", ctx->errmsg ? ctx->errmsg : "");
  else
    copy_owned(&ctx->result, &out->v);
  func_ctx_reset(ctx);
}

static const struct {
  const char *name, *sql;
  int argc;   /* 0 = count(*) */
  int col_z;  /* aggregate over the NOCASE column */
  int window; /* has inverse */
} aggs[] = {
    {"count", "count(x)", 1, 0, 1},
    {"count", "count(*)", 0, 0, 1},
    {"sum", "sum(x)", 1, 0, 1},
    {"total", "total(x)", 1, 0, 1},
    {"avg", "avg(x)", 1, 0, 1},
    {"min", "min(x)", 1, 0, 0},
    {"max", "max(x)", 1, 0, 0},
    {"min", "min(z)", 1, 1, 0},
    {"max", "max(z)", 1, 1, 0},
    {"group_concat", "group_concat(x)", 1, 0, 1},
    {"group_concat", "group_concat(x, y)", 2, 0, 1},
};
#define NAGG ((int)(sizeof(aggs) / sizeof(aggs[0])))

TEST(aggregate_differential) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  uint64_t seed = test_seed() + 1234;
  int rounds = test_long() ? 3000 : 300, bad = 0;
  Row rows[40];
  for (int round = 0; round < rounds; round++) {
    int n = (int)(test_rand(&seed) % 12);
    if (round % 10 == 0) n = (int)(test_rand(&seed) % 40);
    for (int i = 0; i < n; i++) random_row(&seed, &rows[i]);
    fill_table(db, rows, n);
    for (int a = 0; a < NAGG; a++) {
      const FuncDef *d = func_find(&reg, aggs[a].name, aggs[a].argc);
      CHECK(d && d->step);
      FuncCtx ctx;
      func_ctx_init(&ctx, d);
      ctx.coll = aggs[a].col_z ? &record_coll_nocase : NULL;
      for (int i = 0; i < n && ctx.rc == 0; i++) {
        ShValue args[2] = {rows[i].x, rows[i].y};
        if (aggs[a].col_z && args[0].type != SHALE_NULL && args[0].type != SHALE_BLOB) {
          /* the TEXT column's affinity turns numbers into text */
          record_value_apply_affinity(&args[0], AFF_TEXT);
        }
        d->step(&ctx, aggs[a].argc, args);
        value_clear(&args[0]);
      }
      CallResult mine, ref;
      collect(&ctx, &mine, 1);
      char sql[128];
      snprintf(sql, sizeof(sql), "SELECT %s FROM t", aggs[a].sql);
      sqlite3_stmt *st;
      CHECK_OK(sqlite3_prepare_v2(db, sql, -1, &st, 0));
      ref_run(db, st, &ref);
      sqlite3_finalize(st);
      if (!result_same(&mine, &ref) && bad++ < 10) {
        fprintf(stderr, "  round %d, %d rows:\n", round, n);
        report_diff(aggs[a].sql, 0, NULL, &mine, &ref);
      }
      result_clear(&mine);
      result_clear(&ref);
    }
  }
  CHECK_EQ(bad, 0);
  func_registry_free(&reg);
  sqlite3_close(db);
}

TEST(aggregate_window_inverse) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  uint64_t seed = test_seed() + 77;
  int bad = 0;
  Row rows[30];
  for (int round = 0; round < 400; round++) {
    int n = 1 + (int)(test_rand(&seed) % 25);
    for (int i = 0; i < n; i++) {
      random_row(&seed, &rows[i]);
    }
    fill_table(db, rows, n);
    int k = round % 4; /* frame: k PRECEDING AND CURRENT ROW */
    for (int a = 0; a < NAGG; a++) {
      if (!aggs[a].window) continue;
      const FuncDef *d = func_find(&reg, aggs[a].name, aggs[a].argc);
      CHECK(d && d->inverse && d->value);
      char sql[200];
      snprintf(sql, sizeof(sql),
               "SELECT %s OVER (ORDER BY id ROWS BETWEEN %d PRECEDING AND CURRENT ROW) FROM t "
               "ORDER BY id",
               aggs[a].sql, k);
      sqlite3_stmt *st;
      CHECK_OK(sqlite3_prepare_v2(db, sql, -1, &st, 0));
      FuncCtx ctx;
      func_ctx_init(&ctx, d);
      for (int i = 0; i < n; i++) {
        if (i > k) {
          d->inverse(&ctx, aggs[a].argc, (ShValue[]){rows[i - k - 1].x, rows[i - k - 1].y});
        }
        d->step(&ctx, aggs[a].argc, (ShValue[]){rows[i].x, rows[i].y});
        d->value(&ctx);
        CallResult mine, ref;
        collect(&ctx, &mine, 0);
        memset(&ref, 0, sizeof(ref));
        if (sqlite3_step(st) == SQLITE_ROW) {
          ref_column(st, 0, &ref.v);
        } else {
          ref.rc = sqlite3_errcode(db);
          snprintf(ref.msg, sizeof(ref.msg), "%s", sqlite3_errmsg(db));
        }
        if (!result_same(&mine, &ref) && bad++ < 10) {
          fprintf(stderr, "  round %d row %d:\n", round, i);
          report_diff(aggs[a].sql, 2, (ShValue[]){rows[i].x, rows[i].y}, &mine, &ref);
        }
        int stop = mine.rc || ref.rc; /* the statement ends at an error */
        result_clear(&mine);
        result_clear(&ref);
        if (stop) break;
      }
      func_agg_finish(&ctx);
      func_ctx_reset(&ctx);
      sqlite3_finalize(st);
    }
  }
  CHECK_EQ(bad, 0);
  func_registry_free(&reg);
  sqlite3_close(db);
}

TEST(aggregate_examples) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  /* sum: ints stay int, a real makes it real, overflow is an error. */
  const FuncDef *sum = func_find(&reg, "sum", 1);
  FuncCtx ctx;
  func_ctx_init(&ctx, sum);
  ShValue v;
  value_set_int(&v, INT64_MAX);
  sum->step(&ctx, 1, &v);
  value_set_int(&v, 1);
  sum->step(&ctx, 1, &v);
  func_agg_finish(&ctx);
  CHECK_EQ(ctx.rc, SHALE_ERROR);
  CHECK_STR(ctx.errmsg, "integer overflow");
  func_ctx_reset(&ctx);
  /* An empty group: count 0, total 0.0, the rest NULL. */
  static const char *const names[] = {"count", "total", "sum", "avg", "min", "group_concat"};
  for (int i = 0; i < 6; i++) {
    func_ctx_init(&ctx, func_find(&reg, names[i], 1));
    func_agg_finish(&ctx);
    CHECK(ctx.result.type == (i == 0 ? SHALE_INTEGER : i == 1 ? SHALE_FLOAT : SHALE_NULL));
    func_ctx_reset(&ctx);
  }
  /* min/max flag rows that did not become the new best. */
  const FuncDef *mx = func_find(&reg, "max", 1);
  func_ctx_init(&ctx, mx);
  value_set_int(&v, 5);
  mx->step(&ctx, 1, &v);
  CHECK_EQ(ctx.skip_accum_load, 0);
  value_set_int(&v, 3);
  mx->step(&ctx, 1, &v);
  CHECK_EQ(ctx.skip_accum_load, 1);
  ctx.skip_accum_load = 0;
  value_set_text(&v, "a", 1);
  mx->step(&ctx, 1, &v);
  CHECK_EQ(ctx.skip_accum_load, 0);
  func_agg_finish(&ctx);
  CHECK(ctx.result.type == SHALE_TEXT && ctx.result.n == 1);
  func_ctx_reset(&ctx);
  /* Abandoning an aggregate mid-way frees its state through final. */
  const FuncDef *gc = func_find(&reg, "group_concat", 1);
  func_ctx_init(&ctx, gc);
  value_set_text(&v, "abc", 3);
  for (int i = 0; i < 100; i++) gc->step(&ctx, 1, &v);
  func_agg_finish(&ctx);
  CHECK(ctx.result.type == SHALE_TEXT && ctx.result.n == 399);
  func_ctx_reset(&ctx);
  /* group_concat past the length limit. */
  func_ctx_init(&ctx, gc);
  ctx.max_length = 50;
  for (int i = 0; i < 100; i++) gc->step(&ctx, 1, &v);
  func_agg_finish(&ctx);
  CHECK_EQ(ctx.rc, SHALE_TOOBIG);
  func_ctx_reset(&ctx);
  func_registry_free(&reg);
}

TEST(aggregate_oom_sweep) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  static const char *const names[] = {"group_concat", "max", "sum", "count"};
  for (int f = 0; f < 4; f++) {
    const FuncDef *d = func_find(&reg, names[f], 1);
    for (int k = 1; k < 40; k++) {
      long before = util_alloc_outstanding();
      FuncCtx ctx;
      func_ctx_init(&ctx, d);
      util_fault_alloc(k, 0);
      for (int i = 0; i < 20 && ctx.rc == 0; i++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "value%d", i * 37);
        ShValue v;
        value_set_text(&v, buf, (uint32_t)strlen(buf));
        d->step(&ctx, 1, &v);
      }
      int step_rc = ctx.rc;
      func_agg_finish(&ctx);
      long hits = util_fault_alloc_hits();
      util_fault_alloc(0, 0);
      if (hits)
        CHECK(step_rc == SHALE_NOMEM || ctx.rc == SHALE_NOMEM);
      else
        CHECK_EQ(ctx.rc, 0);
      func_ctx_reset(&ctx);
      CHECK_EQ(util_alloc_outstanding(), before);
    }
  }
  func_registry_free(&reg);
}

/* Scalar min/max/nullif with a collation, against "max(?1 COLLATE NOCASE, ?2)". */
TEST(scalar_collations) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  static const char *const fns[] = {"min", "max", "nullif"};
  static const char *const colls[] = {"NOCASE", "RTRIM", "BINARY"};
  int bad = 0;
  for (int f = 0; f < 3; f++) {
    for (int c = 0; c < 3; c++) {
      char sql[128];
      snprintf(sql, sizeof(sql), "SELECT %s(?1 COLLATE %s, ?2)", fns[f], colls[c]);
      sqlite3_stmt *st;
      CHECK_OK(sqlite3_prepare_v2(db, sql, -1, &st, 0));
      const FuncDef *d = func_find(&reg, fns[f], 2);
      for (int i = 0; i < NCORPUS; i++) {
        for (int j = 0; j < NCORPUS; j++) {
          ShValue argv[2];
          corpus_value(i, &argv[0]);
          corpus_value(j, &argv[1]);
          FuncCtx ctx;
          func_ctx_init(&ctx, d);
          ctx.coll = record_collation_find(colls[c]);
          d->scalar(&ctx, 2, argv);
          CallResult mine, ref;
          collect(&ctx, &mine, 0);
          ref_call(db, st, 2, argv, &ref);
          if (!result_same(&mine, &ref) && bad++ < 10) report_diff(sql, 2, argv, &mine, &ref);
          result_clear(&mine);
          result_clear(&ref);
        }
      }
      sqlite3_finalize(st);
    }
  }
  CHECK_EQ(bad, 0);
  func_registry_free(&reg);
  sqlite3_close(db);
}
