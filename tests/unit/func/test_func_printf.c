/*
 * test_func_printf.c -- printf()/format() against the reference: thousands
 * of random format strings (every conversion, flag, width and precision
 * form, '*' arguments, 'l'/'ll', unknown conversions, a trailing '%') with
 * random integers, reals of every magnitude, texts and blobs.
 */
#include "func_test.h"

static double random_real(uint64_t *s) {
  double m = (double)(test_rand(s) % 1000000007) / 1000000007.0;
  int e = (int)(test_rand(s) % 80) - 40;
  if (test_rand(s) % 8 == 0) e = (int)(test_rand(s) % 600) - 300;
  double r = m * pow(10.0, e);
  if (test_rand(s) % 5 == 0) r = (double)(int64_t)(test_rand(s) % 2000) / 8.0; /* exact halves */
  return test_rand(s) % 2 ? -r : r;
}

static void random_arg(uint64_t *s, ShValue *v) {
  switch (test_rand(s) % 5) {
    case 0:
      corpus_value((int)(test_rand(s) % NCORPUS), v);
      break;
    case 1:
      value_set_int(v, (int64_t)test_rand(s) >> (test_rand(s) % 64));
      break;
    case 2:
      value_set_int(v, (int64_t)(test_rand(s) % 40) - 10);
      break;
    default:
      value_set_real(v, random_real(s));
  }
}

static int random_format(uint64_t *s, char *out, int cap) {
  static const char convs[] = "diuxXopcsqQwfeEgGz%rnfgedsT";
  static const char flags[] = "-+ #0!,";
  int k = 0;
  int nconv = 1 + (int)(test_rand(s) % 3);
  for (int c = 0; c < nconv && k < cap - 40; c++) {
    if (test_rand(s) % 3 == 0) {
      static const char *const lits[] = {"ab", " ", "x=", "\xc3\xa9", "--"};
      const char *l = lits[test_rand(s) % 5];
      memcpy(out + k, l, strlen(l));
      k += (int)strlen(l);
    }
    out[k++] = '%';
    int nf = (int)(test_rand(s) % 4);
    for (int i = 0; i < nf; i++) out[k++] = flags[test_rand(s) % 7];
    switch (test_rand(s) % 4) {
      case 0:
        k += snprintf(out + k, (size_t)(cap - k), "%d", (int)(test_rand(s) % 30));
        break;
      case 1:
        out[k++] = '*';
        break;
      default:
        break;
    }
    switch (test_rand(s) % 4) {
      case 0:
        k += snprintf(out + k, (size_t)(cap - k), ".%d", (int)(test_rand(s) % 40));
        break;
      case 1:
        out[k++] = '.';
        out[k++] = '*';
        break;
      default:
        break;
    }
    int r = (int)(test_rand(s) % 20);
    if (r == 0) out[k++] = 'l';
    if (r == 1) {
      out[k++] = 'l';
      out[k++] = 'l';
    }
    if (test_rand(s) % 40 == 0)
      out[k++] = "yhjk"[test_rand(s) % 4]; /* unknown */
    else
      out[k++] = convs[test_rand(s) % (sizeof(convs) - 1)];
  }
  if (test_rand(s) % 30 == 0) out[k++] = '%';
  out[k] = 0;
  return k;
}

TEST(printf_random) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 20000); /* huge '*' widths stay cheap */
  shale_call_max_length = 20000;
  sqlite3_stmt *st = ref_prepare_call(db, "printf", 6);
  uint64_t seed = test_seed() * 31 + 7;
  int n = test_long() ? 200000 : 20000, bad = 0;
  for (int t = 0; t < n; t++) {
    char fmt[256];
    ShValue argv[6];
    int nf = random_format(&seed, fmt, sizeof(fmt));
    /* SQLite's %c repeats one append per unit of precision even after the
     * length limit is hit: a huge '*' precision would take it seconds. */
    if (strchr(fmt, '*') && strchr(fmt, 'c')) {
      t--;
      continue;
    }
    value_set_text(&argv[0], fmt, (uint32_t)nf);
    for (int i = 1; i < 6; i++) random_arg(&seed, &argv[i]);
    CallResult mine, ref;
    shale_call(&reg, "printf", 6, argv, &mine);
    ref_call(db, st, 6, argv, &ref);
    if (!result_same(&mine, &ref) && bad++ < 15) report_diff("printf", 6, argv, &mine, &ref);
    result_clear(&mine);
    result_clear(&ref);
  }
  CHECK_EQ(bad, 0);
  shale_call_max_length = 0;
  sqlite3_finalize(st);
  func_registry_free(&reg);
  sqlite3_close(db);
}

/* Reals through every float conversion at many precisions. */
TEST(printf_reals) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_stmt *st = ref_prepare_call(db, "printf", 2);
  static const char *const fmts[] = {"%f",       "%.0f",   "%.1f",  "%.2f",  "%.3f",  "%.10f",
                                     "%.17f",    "%!.20f", "%e",    "%.0e",  "%.3e",  "%!.20e",
                                     "%g",       "%.0g",   "%.1g",  "%.3g",  "%.15g", "%!.15g",
                                     "%#g",      "%#.3g",  "%!g",   "%G",    "%E",    "%010.3f",
                                     "%-12.4e|", "%+g",    "% .2f", "%#.0f", "%#.0e", "%.30f"};
  uint64_t seed = test_seed() + 99;
  int bad = 0;
  for (int t = 0; t < 4000; t++) {
    ShValue argv[2];
    double r = t < NREAL ? corpus_reals[t] : random_real(&seed);
    value_set_real(&argv[1], r);
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
      value_set_text(&argv[0], fmts[f], (uint32_t)strlen(fmts[f]));
      CallResult mine, ref;
      shale_call(&reg, "printf", 2, argv, &mine);
      ref_call(db, st, 2, argv, &ref);
      if (!result_same(&mine, &ref) && bad++ < 15) report_diff("printf", 2, argv, &mine, &ref);
      result_clear(&mine);
      result_clear(&ref);
    }
  }
  CHECK_EQ(bad, 0);
  sqlite3_finalize(st);
  func_registry_free(&reg);
  sqlite3_close(db);
}

TEST(printf_quote_round_random_reals) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_stmt *q = ref_prepare_call(db, "quote", 1);
  sqlite3_stmt *rd = ref_prepare_call(db, "round", 2);
  uint64_t seed = test_seed() + 5;
  int bad = 0;
  for (int t = 0; t < 5000; t++) {
    ShValue argv[2];
    value_set_real(&argv[0], random_real(&seed));
    value_set_int(&argv[1], (int64_t)(test_rand(&seed) % 35) - 2);
    CallResult mine, ref;
    shale_call(&reg, "quote", 1, argv, &mine);
    ref_call(db, q, 1, argv, &ref);
    if (!result_same(&mine, &ref) && bad++ < 10) report_diff("quote", 1, argv, &mine, &ref);
    result_clear(&mine);
    result_clear(&ref);
    shale_call(&reg, "round", 2, argv, &mine);
    ref_call(db, rd, 2, argv, &ref);
    if (!result_same(&mine, &ref) && bad++ < 10) report_diff("round", 2, argv, &mine, &ref);
    result_clear(&mine);
    result_clear(&ref);
  }
  CHECK_EQ(bad, 0);
  sqlite3_finalize(q);
  sqlite3_finalize(rd);
  func_registry_free(&reg);
  sqlite3_close(db);
}

/* Output past the length limit: SQLite's printf() then yields NULL. */
TEST(printf_too_big) {
  sqlite3 *db = ref_open();
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000);
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  static const char *const fmts[] = {"%2000d", "%.2000f",  "%.1500c",  "%-1200s",  "%999d",
                                     "%.998c", "%0999.2f", "%0984.2f", "%0983.2f", "%.989d",
                                     "%.990d", "%.749,d",  "%.750,d",  "%998q",    "%.1000s",
                                     "%1001%", "%,.970d"};
  sqlite3_stmt *st = ref_prepare_call(db, "printf", 2);
  for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
    ShValue argv[2];
    value_set_text(&argv[0], fmts[f], (uint32_t)strlen(fmts[f]));
    value_set_int(&argv[1], 7);
    const FuncDef *d = func_find(&reg, "printf", 2);
    FuncCtx ctx;
    func_ctx_init(&ctx, d);
    ctx.max_length = 1000;
    d->scalar(&ctx, 2, argv);
    CallResult mine = {.rc = ctx.rc}, ref;
    copy_owned(&ctx.result, &mine.v);
    func_ctx_reset(&ctx);
    ref_call(db, st, 2, argv, &ref);
    if (report_diff("printf(limit 1000)", 2, argv, &mine, &ref)) CHECK(0);
    result_clear(&mine);
    result_clear(&ref);
  }
  sqlite3_finalize(st);
  func_registry_free(&reg);
  sqlite3_close(db);
}
