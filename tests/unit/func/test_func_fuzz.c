/*
 * test_func_fuzz.c -- random inputs against the reference for the functions
 * whose logic walks text: LIKE (with and without ESCAPE) and GLOB over
 * random patterns, and substr/instr/replace/trim/length/unicode/soundex/
 * upper/hex/quote over random UTF-8 (valid and broken) with random
 * positions.
 */
#include "func_test.h"

/* Random text over a small alphabet of pieces, some multibyte or invalid. */
static int random_text(uint64_t *s, const char *const *pieces, int npieces, int maxlen, char *out) {
  int k = 0, len = (int)(test_rand(s) % (uint64_t)(maxlen + 1));
  for (int i = 0; i < len; i++) {
    const char *p = pieces[test_rand(s) % (uint64_t)npieces];
    size_t n = strlen(p);
    if (!n) n = 1; /* "" stands for a NUL byte */
    memcpy(out + k, p, n);
    k += (int)n;
  }
  out[k] = 0;
  return k;
}

static const char *const like_pieces[] = {
    "a", "b", "A", "%", "_", "\\", "\xc3\xa9",     "\xc3\x89", "*",
    "?", "[", "]", "^", "-", "c",  "\xe2\x82\xac", "\xff",     "x"};
static const char *const str_pieces[] = {
    "a",  "b", "A",    "B", "c", "\xc3\xa9", "%", "_", "]", "-", "\xe2\x82\xac",
    "\\", "*", "\xff", "x", "",  "\x80"};

static void fuzz(const char *fn, int argc, int n,
                 void (*gen)(uint64_t *, ShValue *, char (*)[256])) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_stmt *st = ref_prepare_call(db, fn, argc);
  CHECK(st != NULL);
  uint64_t seed = test_seed() ^ (uint64_t)strlen(fn) * 1000003u ^ (uint64_t)argc;
  int bad = 0;
  for (int t = 0; t < n; t++) {
    ShValue argv[3];
    char bufs[3][256];
    gen(&seed, argv, bufs);
    CallResult mine, ref;
    shale_call(&reg, fn, argc, argv, &mine);
    ref_call(db, st, argc, argv, &ref);
    if (!result_same(&mine, &ref) && bad++ < 10) report_diff(fn, argc, argv, &mine, &ref);
    result_clear(&mine);
    result_clear(&ref);
  }
  if (bad) test_fail(__FILE__, __LINE__, "%s/%d: %d mismatches", fn, argc, bad);
  sqlite3_finalize(st);
  func_registry_free(&reg);
  sqlite3_close(db);
}

static void gen_like(uint64_t *s, ShValue *a, char (*b)[256]) {
  int np = random_text(s, like_pieces, 18, 6, b[0]);
  int ns = random_text(s, str_pieces, 17, 8, b[1]);
  value_set_text(&a[0], b[0], (uint32_t)np);
  value_set_text(&a[1], b[1], (uint32_t)ns);
  /* Escape: usually one character, sometimes two or none. */
  static const char *const escs[] = {"\\", "%", "_", "a", "\xc3\xa9", "", "ab", "x"};
  const char *e = escs[test_rand(s) % 8];
  strcpy(b[2], e);
  value_set_text(&a[2], b[2], (uint32_t)strlen(e));
}

static void gen_text_int_int(uint64_t *s, ShValue *a, char (*b)[256]) {
  int n = random_text(s, str_pieces, 17, 10, b[0]);
  if (test_rand(s) % 5 == 0)
    value_set_blob(&a[0], b[0], (uint32_t)n);
  else
    value_set_text(&a[0], b[0], (uint32_t)n);
  value_set_int(&a[1], (int64_t)(test_rand(s) % 30) - 15);
  value_set_int(&a[2], (int64_t)(test_rand(s) % 30) - 15);
  if (test_rand(s) % 20 == 0) value_set_int(&a[1], (int64_t)test_rand(s));
  if (test_rand(s) % 20 == 0) value_set_real(&a[2], (double)(test_rand(s) % 100) / 7.0 - 7);
}

static void gen_text3(uint64_t *s, ShValue *a, char (*b)[256]) {
  for (int i = 0; i < 3; i++) {
    int n = random_text(s, str_pieces, 17, i == 0 ? 12 : 3, b[i]);
    if (test_rand(s) % 8 == 0)
      value_set_blob(&a[i], b[i], (uint32_t)n);
    else
      value_set_text(&a[i], b[i], (uint32_t)n);
  }
}

TEST(fuzz_like_glob) {
  int n = test_long() ? 200000 : 15000;
  fuzz("like", 2, n, gen_like);
  fuzz("like", 3, n, gen_like);
  fuzz("glob", 2, n, gen_like);
}

TEST(fuzz_substr) {
  int n = test_long() ? 100000 : 8000;
  fuzz("substr", 3, n, gen_text_int_int);
  fuzz("substr", 2, n, gen_text_int_int);
}

TEST(fuzz_text_functions) {
  int n = test_long() ? 50000 : 4000;
  static const char *const two[] = {"instr", "trim", "ltrim", "rtrim", "like", "glob", NULL};
  static const char *const one[] = {"length", "unicode", "soundex", "upper",  "lower",
                                    "hex",    "quote",   "trim",    "typeof", NULL};
  for (int i = 0; two[i]; i++) fuzz(two[i], 2, n, gen_text3);
  for (int i = 0; one[i]; i++) fuzz(one[i], 1, n, gen_text3);
  fuzz("replace", 3, n, gen_text3);
}

/* PRAGMA case_sensitive_like = ON against func_set_case_sensitive_like. */
TEST(fuzz_case_sensitive_like) {
  sqlite3 *db = ref_open();
  sqlite3_exec(db, "PRAGMA case_sensitive_like = 1", 0, 0, 0);
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  CHECK_OK(func_set_case_sensitive_like(&reg, 1));
  CHECK(func_find(&reg, "like", 2)->flags & FUNC_CASE);
  uint64_t seed = test_seed() + 3;
  int bad = 0;
  for (int nargs = 2; nargs <= 3; nargs++) {
    sqlite3_stmt *st = ref_prepare_call(db, "like", nargs);
    for (int t = 0; t < 5000; t++) {
      ShValue argv[3];
      char bufs[3][256];
      gen_like(&seed, argv, bufs);
      CallResult mine, ref;
      shale_call(&reg, "like", nargs, argv, &mine);
      ref_call(db, st, nargs, argv, &ref);
      if (!result_same(&mine, &ref) && bad++ < 10) report_diff("like", nargs, argv, &mine, &ref);
      result_clear(&mine);
      result_clear(&ref);
    }
    sqlite3_finalize(st);
  }
  CHECK_EQ(bad, 0);
  /* and back */
  CHECK_OK(func_set_case_sensitive_like(&reg, 0));
  CHECK(!(func_find(&reg, "like", 3)->flags & FUNC_CASE));
  ShValue a[2];
  value_set_text(&a[0], "ABC", 3);
  value_set_text(&a[1], "abc", 3);
  CallResult r;
  shale_call(&reg, "like", 2, a, &r);
  CHECK(r.v.type == SHALE_INTEGER && r.v.i == 1);
  func_registry_free(&reg);
  sqlite3_close(db);
}
