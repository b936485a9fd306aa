/*
 * test_func_scalar.c -- differential tests of every deterministic built-in
 * scalar function against the reference SQLite: each function is called
 * with every corpus value (1 argument), every pair (2 arguments) and a
 * random sample of triples (3 arguments); result type, value, error code
 * and message must agree. Plus registry behaviour (arity errors, missing
 * functions).
 */
#include "func_test.h"

/* Compare name(...) over the corpus for the given arity. Returns mismatches. */
static int diff_function(sqlite3 *db, const FuncRegistry *reg, const char *name, int argc,
                         int sample) {
  sqlite3_stmt *st = ref_prepare_call(db, name, argc);
  CallResult mine, ref;
  ShValue argv[3];
  int bad = 0, shown = 0;
  if (!st) {
    /* A prepare-time error (wrong number of arguments, no such function):
     * the lookup must fail too, and func_exists_name must pick the same
     * message. */
    CHECK(func_find(reg, name, argc) == NULL);
    for (int i = 0; i < argc; i++) value_set_null(&argv[i]);
    shale_call(reg, name, argc, argv, &mine);
    if (strcmp(mine.msg, sqlite3_errmsg(db)) != 0) {
      fprintf(stderr, "  %s/%d: shale \"%s\", sqlite \"%s\"\n", name, argc, mine.msg,
              sqlite3_errmsg(db));
      bad++;
    }
    result_clear(&mine);
    return bad;
  }
  uint64_t seed = test_seed() ^ (uint64_t)(argc * 7919) ^ (uint64_t)strlen(name);
  long total = 1;
  for (int i = 0; i < argc; i++) total *= NCORPUS;
  long n = (sample && total > sample) ? sample : total;
  for (long t = 0; t < n; t++) {
    long k = t;
    for (int i = 0; i < argc; i++) {
      int idx;
      if (n < total)
        idx = (int)(test_rand(&seed) % NCORPUS);
      else {
        idx = (int)(k % NCORPUS);
        k /= NCORPUS;
      }
      corpus_value(idx, &argv[i]);
    }
    shale_call(reg, name, argc, argv, &mine);
    ref_call(db, st, argc, argv, &ref);
    if (!result_same(&mine, &ref)) {
      bad++;
      if (shown++ < 8) report_diff(name, argc, argv, &mine, &ref);
    }
    result_clear(&mine);
    result_clear(&ref);
  }
  sqlite3_finalize(st);
  return bad;
}

static void run_set(const char *const *names, int argc, int sample) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  for (int i = 0; names[i]; i++) {
    int bad = diff_function(db, &reg, names[i], argc, sample);
    if (bad) test_fail(__FILE__, __LINE__, "%s/%d: %d mismatches", names[i], argc, bad);
  }
  func_registry_free(&reg);
  sqlite3_close(db);
}

TEST(scalar_one_arg) {
  static const char *const names[] = {
      "abs",   "typeof", "hex",      "length",  "lower",          "upper",    "ltrim",
      "rtrim", "trim",   "quote",    "unicode", "soundex",        "likely",   "unlikely",
      "round", "sign",   "char",     "printf",  "format",         "coalesce", "ifnull",
      "min",   "max",    "zeroblob", "substr",  "sqlite_version", NULL};
  run_set(names, 1, 0);
}

TEST(scalar_math_one_arg) {
  static const char *const names[] = {
      "ceil",  "ceiling", "floor", "trunc", "ln",      "log",     "log10", "log2", "exp",
      "acos",  "asin",    "atan",  "cos",   "sin",     "tan",     "cosh",  "sinh", "tanh",
      "acosh", "asinh",   "atanh", "sqrt",  "radians", "degrees", "pi",    "pow",  NULL};
  run_set(names, 1, 0);
}

TEST(scalar_two_args) {
  static const char *const names[] = {"ifnull", "nullif",   "instr",  "like",      "glob",  "ltrim",
                                      "rtrim",  "trim",     "substr", "substring", "round", "min",
                                      "max",    "coalesce", "char",   "printf",    "iif",   NULL};
  run_set(names, 2, 0);
}

TEST(scalar_math_two_args) {
  static const char *const names[] = {"log", "pow", "power", "mod", "atan2", NULL};
  run_set(names, 2, 0);
}

TEST(scalar_three_args) {
  static const char *const names[] = {"iif", "substr",   "substring", "replace", "like", "min",
                                      "max", "coalesce", "char",      "printf",  NULL};
  run_set(names, 3, test_long() ? 100000 : 6000);
}

TEST(scalar_zero_args) {
  static const char *const names[] = {
      "pi",  "sqlite_version", "char", "printf", "format", "coalesce", "min",
      "abs", "octet_length",   NULL};
  run_set(names, 0, 0);
}

/* Hand-picked edge cases not reachable from the corpus. */
TEST(scalar_edge_cases) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  static const struct {
    const char *sql; /* the reference expression */
    const char *fn;
    int argc;
    const char *args[3]; /* texts, or "i:N" / "r:X" / "b:hex" / "n" */
  } cases[] = {
      {"substr(?1,?2,?3)", "substr", 3, {"abcdef", "i:-3", "i:2"}},
      {"substr(?1,?2,?3)", "substr", 3, {"abcdef", "i:0", "i:-1"}},
      {"substr(?1,?2,?3)", "substr", 3, {"abcdef", "i:3", "i:-5"}},
      {"substr(?1,?2,?3)", "substr", 3, {"h\xc3\xa9llo", "i:2", "i:2"}},
      {"substr(?1,?2,?3)", "substr", 3, {"b:616263", "i:-2", "i:5"}},
      {"round(?1,?2)", "round", 2, {"r:2.675", "i:2"}},
      {"round(?1,?2)", "round", 2, {"r:-1.25", "i:1"}},
      {"round(?1,?2)", "round", 2, {"r:1234.5678", "i:40"}},
      {"round(?1,?2)", "round", 2, {"r:0.000000123456", "i:10"}},
      {"like(?1,?2,?3)", "like", 3, {"a%", "ABC", "%"}},
      {"like(?1,?2,?3)", "like", 3, {"a\\%b", "a%b", "\\"}},
      {"like(?1,?2,?3)", "like", 3, {"a\\", "a", "\\"}},
      {"like(?1,?2,?3)", "like", 3, {"%x_", "aaxb", "ab"}},
      {"like(?1,?2,?3)", "like", 3, {"a__", "ab_", "_"}},
      {"glob(?1,?2)", "glob", 2, {"[^a-c]*", "dog"}},
      {"glob(?1,?2)", "glob", 2, {"[]x]", "]"}},
      {"glob(?1,?2)", "glob", 2, {"[a-", "a"}},
      {"glob(?1,?2)", "glob", 2, {"*[a]", "bbba"}},
      {"glob(?1,?2)", "glob", 2, {"[\xc3\xa0-\xc3\xbf]", "\xc3\xa9"}},
      {"glob(?1,?2)", "glob", 2, {"a*b*c", "aXbYbZc"}},
      {"glob(?1,?2)", "glob", 2, {"[z-a]", "m"}},
      {"instr(?1,?2)", "instr", 2, {"h\xc3\xa9llo", "l"}},
      {"instr(?1,?2)", "instr", 2, {"b:00616263", "b:6263"}},
      {"instr(?1,?2)", "instr", 2, {"b:616263", "bc"}},
      {"trim(?1,?2)", "trim", 2, {"\xc3\xa9\xc3\xa9x\xc3\xa9", "\xc3\xa9"}},
      {"char(?1,?2,?3)", "char", 3, {"i:72", "i:1114112", "i:128512"}},
      {"abs(?1)", "abs", 1, {"i:-9223372036854775807"}},
      {"abs(?1)", "abs", 1, {"-5"}},
      {"zeroblob(?1)", "zeroblob", 1, {"i:1000000001"}},
      {"hex(?1)", "hex", 1, {"r:-0.0"}},
      {"quote(?1)", "quote", 1, {"r:0.1"}},
      {"quote(?1)", "quote", 1, {"r:1e-320"}},
      {"quote(?1)", "quote", 1, {"r:123456789012345678"}},
      {"quote(?1)", "quote", 1, {"b:00ff"}},
      {"replace(?1,?2,?3)", "replace", 3, {"aaaa", "aa", "b"}},
      {"replace(?1,?2,?3)", "replace", 3, {"abcabc", "bc", ""}},
      {"soundex(?1)", "soundex", 1, {"Tymczak"}},
      {"soundex(?1)", "soundex", 1, {"Pfister"}},
      {"soundex(?1)",
       "soundex",
       1,
       {"\xc3\xa9"
        "Ashcraft"}},
      {"unicode(?1)", "unicode", 1, {"b:eda080"}},
      {"unicode(?1)", "unicode", 1, {"b:c0af"}},
      {"length(?1)", "length", 1, {"b:c3a9"}},
      {"log(?1,?2)", "log", 2, {"i:2", "i:1024"}},
      {"log(?1,?2)", "log", 2, {"r:0.5", "i:8"}},
      {"mod(?1,?2)", "mod", 2, {"i:7", "i:0"}},
      {"pow(?1,?2)", "pow", 2, {"i:-8", "r:0.3333"}},
      {"atanh(?1)", "atanh", 1, {"i:1"}},
      {"sign(?1)", "sign", 1, {" -3e2 "}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    ShValue argv[3];
    unsigned char blobs[3][64];
    for (int i = 0; i < cases[c].argc; i++) {
      const char *a = cases[c].args[i];
      if (!strncmp(a, "i:", 2))
        value_set_int(&argv[i], strtoll(a + 2, NULL, 10));
      else if (!strncmp(a, "r:", 2))
        value_set_real(&argv[i], strtod(a + 2, NULL));
      else if (!strcmp(a, "n"))
        value_set_null(&argv[i]);
      else if (!strncmp(a, "b:", 2)) {
        int n = (int)strlen(a + 2) / 2;
        for (int k = 0; k < n; k++) {
          unsigned x;
          sscanf(a + 2 + 2 * k, "%2x", &x);
          blobs[i][k] = (unsigned char)x;
        }
        value_set_blob(&argv[i], blobs[i], (uint32_t)n);
      } else
        value_set_text(&argv[i], a, (uint32_t)strlen(a));
    }
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT %s", cases[c].sql);
    sqlite3_stmt *st = NULL;
    CHECK_OK(sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    CallResult mine, ref;
    shale_call(&reg, cases[c].fn, cases[c].argc, argv, &mine);
    ref_call(db, st, cases[c].argc, argv, &ref);
    if (report_diff(cases[c].fn, cases[c].argc, argv, &mine, &ref)) {
      test_fail(__FILE__, __LINE__, "edge case %zu (%s) differs", c, cases[c].sql);
    }
    result_clear(&mine);
    result_clear(&ref);
    sqlite3_finalize(st);
  }
  func_registry_free(&reg);
  sqlite3_close(db);
}

TEST(registry_lookup) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  CHECK(func_find(&reg, "octet_length", 1) == NULL);
  CHECK(!func_exists_name(&reg, "octet_length"));
  CHECK(func_find(&reg, "SUBSTR", 2) != NULL);
  CHECK(func_find(&reg, "substr", 1) == NULL);
  CHECK(func_exists_name(&reg, "Substr"));
  const FuncDef *mn = func_find(&reg, "min", 1);
  CHECK(mn && func_is_aggregate(mn) && (mn->flags & FUNC_MINMAX));
  mn = func_find(&reg, "MIN", 3);
  CHECK(mn && !func_is_aggregate(mn));
  CHECK(func_find(&reg, "min", 0) == NULL);
  CHECK(func_find(&reg, "coalesce", 1) == NULL);
  CHECK(func_find(&reg, "coalesce", 5) != NULL);
  const FuncDef *cnt = func_find(&reg, "count", 0);
  CHECK(cnt && (cnt->flags & FUNC_COUNT));
  CHECK(func_find(&reg, "char", 0) != NULL);
  CHECK(func_find(&reg, "random", 0) &&
        !(func_find(&reg, "random", 0)->flags & FUNC_DETERMINISTIC));
  CHECK(func_find(&reg, "like", 2)->flags & FUNC_LIKE);
  CHECK_OK(func_registry_check(&reg));
  reg.count++; /* the validator notices a wrong count */
  CHECK_RC(func_registry_check(&reg), SHALE_INTERNAL);
  reg.count--;
  func_registry_free(&reg);
  CHECK_OK(func_registry_check(&reg));
}

static int destroyed;
static void user_destroy(void *p) { destroyed += (int)(intptr_t)p; }
static void user_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_int(ctx, (int64_t)(intptr_t)func_user_data(ctx) * 100 + argc);
}

TEST(registry_user_functions) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  destroyed = 0;
  char name[16];
  strcpy(name, "MyFn");
  FuncDef d = {
      .name = name, .nargs = 2, .scalar = user_fn, .user_data = (void *)1, .destroy = user_destroy};
  CHECK_OK(func_register(&reg, &d));
  strcpy(name, "zzzz"); /* the registry copied the name */
  const FuncDef *f = func_find(&reg, "myfn", 2);
  CHECK(f != NULL);
  CallResult r;
  ShValue args[2];
  value_set_null(&args[0]);
  value_set_null(&args[1]);
  shale_call(&reg, "MYFN", 2, args, &r);
  CHECK_EQ(r.v.i, 102);
  /* Replace: the old user_data is destroyed. */
  strcpy(name, "myfn");
  d.user_data = (void *)2;
  CHECK_OK(func_register(&reg, &d));
  CHECK_EQ(destroyed, 1);
  shale_call(&reg, "myfn", 2, args, &r);
  CHECK_EQ(r.v.i, 202);
  /* Variadic fallback, exact arity preferred. */
  FuncDef v = {.name = "myfn", .nargs = -1, .scalar = user_fn, .user_data = (void *)3};
  CHECK_OK(func_register(&reg, &v));
  shale_call(&reg, "myfn", 1, args, &r);
  CHECK_EQ(r.v.i, 301);
  shale_call(&reg, "myfn", 2, args, &r);
  CHECK_EQ(r.v.i, 202);
  /* Override a built-in. */
  FuncDef up = {.name = "upper", .nargs = 1, .scalar = user_fn, .user_data = (void *)4};
  CHECK_OK(func_register(&reg, &up));
  shale_call(&reg, "upper", 1, args, &r);
  CHECK_EQ(r.v.i, 401);
  /* Delete. */
  FuncDef del = {.name = "myfn", .nargs = 2};
  CHECK_OK(func_register(&reg, &del));
  CHECK_EQ(destroyed, 3);
  /* the deleted arity is a tombstone: it hides the variadic one (SQLite) */
  CHECK(func_find(&reg, "myfn", 2) == NULL);
  CHECK(func_find_exact(&reg, "myfn", 2) != NULL);
  CHECK(func_exists_name(&reg, "myfn"));
  shale_call(&reg, "myfn", 3, args, &r);
  CHECK_EQ(r.v.i, 303);
  /* registering again replaces the tombstone */
  d.user_data = (void *)5;
  CHECK_OK(func_register(&reg, &d));
  shale_call(&reg, "myfn", 2, args, &r);
  CHECK_EQ(r.v.i, 502);
  /* deleting the built-in override hides the built-in too; the name exists */
  FuncDef delup = {.name = "UPPER", .nargs = 1};
  CHECK_OK(func_register(&reg, &delup));
  CHECK(func_find(&reg, "upper", 1) == NULL);
  CHECK(func_exists_name(&reg, "upper"));
  CHECK_OK(func_registry_check(&reg));
  /* deleting what does not exist is a no-op */
  FuncDef delnone = {.name = "nonesuch", .nargs = 1};
  CHECK_OK(func_register(&reg, &delnone));
  CHECK(func_find_exact(&reg, "nonesuch", 1) == NULL);
  CHECK(!func_exists_name(&reg, "nonesuch"));
  FuncDef bad = {.name = "x", .nargs = 200, .scalar = user_fn};
  CHECK_RC(func_register(&reg, &bad), SHALE_MISUSE);
  /* Many registrations force rehashing. */
  for (int i = 0; i < 500; i++) {
    char nm[32];
    snprintf(nm, sizeof(nm), "f%d", i);
    FuncDef g = {.name = nm, .nargs = i % 4, .scalar = user_fn};
    CHECK_OK(func_register(&reg, &g));
  }
  CHECK(func_find(&reg, "F499", 3) != NULL);
  CHECK(func_find(&reg, "abs", 1) != NULL);
  CHECK_OK(func_registry_check(&reg));
  CHECK_OK(func_set_case_sensitive_like(&reg, 1));
  CHECK_OK(func_registry_check(&reg));
  func_registry_free(&reg);
}

static int aux_freed;
static void aux_free(void *p) {
  aux_freed++;
  shale_free(p);
}

TEST(auxdata_and_results) {
  FuncAux *list = NULL;
  FuncCtx ctx;
  func_ctx_init(&ctx, NULL);
  ctx.aux = &list;
  ctx.aux_site = 7;
  aux_freed = 0;
  CHECK(func_get_auxdata(&ctx, 0) == NULL);
  void *p = shale_malloc(10);
  func_set_auxdata(&ctx, 0, p, aux_free);
  CHECK(func_get_auxdata(&ctx, 0) == p);
  ctx.aux_site = 8;
  CHECK(func_get_auxdata(&ctx, 0) == NULL);
  func_set_auxdata(&ctx, 0, shale_malloc(5), aux_free);
  ctx.aux_site = 7;
  func_set_auxdata(&ctx, 0, shale_malloc(5), aux_free); /* replaces p */
  CHECK_EQ(aux_freed, 1);
  func_auxdata_clear(&list);
  CHECK_EQ(aux_freed, 3);
  ctx.aux = NULL;
  func_set_auxdata(&ctx, 1, shale_malloc(3), aux_free); /* no list: destroyed now */
  CHECK_EQ(aux_freed, 4);

  /* Result setters. */
  func_result_text(&ctx, "hello", -1, FUNC_TRANSIENT);
  CHECK(ctx.result.type == SHALE_TEXT && ctx.result.n == 5 && (ctx.result.flags & VAL_OWNED));
  func_result_real(&ctx, NAN);
  CHECK(ctx.result.type == SHALE_NULL);
  ctx.max_length = 4;
  func_result_text(&ctx, "hello", 5, FUNC_STATIC);
  CHECK_EQ(ctx.rc, SHALE_TOOBIG);
  CHECK_STR(ctx.errmsg, "string or blob too big");
  func_ctx_reset(&ctx);
  func_result_zeroblob(&ctx, 3);
  CHECK(ctx.result.type == SHALE_BLOB && ctx.result.n == 3 && !ctx.result.z[2]);
  ShValue out;
  func_ctx_take_result(&ctx, &out);
  CHECK(ctx.result.type == SHALE_NULL);
  value_clear(&out);
  func_result_error(&ctx, "boom", -1);
  CHECK_EQ(ctx.rc, SHALE_ERROR);
  CHECK_STR(ctx.errmsg, "boom");
  func_ctx_reset(&ctx);
  CHECK_EQ(ctx.rc, 0);
}

static int64_t cb_rowid(void *c) { return *(int64_t *)c; }
static int64_t cb_changes(void *c) { return *(int64_t *)c + 1; }

TEST(connection_functions) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  int64_t conn = 41;
  FuncConnCallbacks cb = {cb_rowid, cb_changes, NULL, NULL};
  const char *names[] = {"last_insert_rowid", "changes", "total_changes"};
  int64_t want[] = {41, 42, 0};
  for (int i = 0; i < 3; i++) {
    FuncCtx ctx;
    func_ctx_init(&ctx, func_find(&reg, names[i], 0));
    ctx.conn = &conn;
    ctx.cb = &cb;
    ctx.def->scalar(&ctx, 0, NULL);
    CHECK(ctx.result.type == SHALE_INTEGER);
    CHECK_EQ(ctx.result.i, want[i]);
    func_ctx_reset(&ctx);
  }
  /* random / randomblob: type and shape only. */
  for (int i = 0; i < 50; i++) {
    FuncCtx ctx;
    func_ctx_init(&ctx, func_find(&reg, "random", 0));
    ctx.def->scalar(&ctx, 0, NULL);
    CHECK(ctx.result.type == SHALE_INTEGER && ctx.result.i != INT64_MIN);
    func_ctx_reset(&ctx);
    ShValue n;
    value_set_int(&n, i - 5);
    func_ctx_init(&ctx, func_find(&reg, "randomblob", 1));
    ctx.def->scalar(&ctx, 1, &n);
    CHECK(ctx.result.type == SHALE_BLOB && ctx.result.n == (uint32_t)(i - 5 < 1 ? 1 : i - 5));
    func_ctx_reset(&ctx);
  }
  func_registry_free(&reg);
}

/* Out-of-memory sweep: fail the k-th allocation for growing k; every call
 * must end in a clean SHALE_NOMEM or the right answer, never a leak. */
TEST(scalar_oom_sweep) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  static const struct {
    const char *fn;
    int argc;
    const char *a[3];
  } calls[] = {
      {"replace", 3, {"abcabcabc", "b", "XYZ"}},
      {"printf", 3, {"%s-%.3f-%q", "hi", "it's"}},
      {"quote", 1, {"it's"}},
      {"upper", 1, {"hello"}},
      {"trim", 2, {"xxhixx", "x"}},
      {"hex", 1, {"abc"}},
      {"substr", 2, {"hello", "2"}},
      {"char", 3, {"65", "66", "67"}},
      {"round", 2, {"2.5", "1"}},
  };
  for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
    ShValue argv[3];
    for (int i = 0; i < calls[c].argc; i++) {
      value_set_text(&argv[i], calls[c].a[i], (uint32_t)strlen(calls[c].a[i]));
    }
    CallResult good;
    shale_call(&reg, calls[c].fn, calls[c].argc, argv, &good);
    CHECK_EQ(good.rc, 0);
    for (int k = 1; k < 20; k++) {
      long before = util_alloc_outstanding();
      util_fault_alloc(k, 0);
      const FuncDef *d = func_find(&reg, calls[c].fn, calls[c].argc);
      FuncCtx ctx;
      func_ctx_init(&ctx, d);
      d->scalar(&ctx, calls[c].argc, argv);
      long hits = util_fault_alloc_hits();
      util_fault_alloc(0, 0);
      if (hits) {
        CHECK(ctx.rc == SHALE_NOMEM);
      } else {
        CHECK_EQ(ctx.rc, 0);
        CallResult r = {.v = ctx.result};
        r.rc = 0;
        CHECK(result_same(&r, &good));
      }
      func_ctx_reset(&ctx);
      CHECK_EQ(util_alloc_outstanding(), before);
    }
    result_clear(&good);
  }
  func_registry_free(&reg);
}

TEST(registry_oom) {
  for (int k = 1; k < 300; k++) {
    FuncRegistry reg;
    util_fault_alloc(k, 0);
    int rc = func_registry_init(&reg);
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (rc == SHALE_OK) {
      CHECK_EQ(hits, 0);
      CHECK(func_find(&reg, "abs", 1) != NULL);
      /* a user registration under OOM fails cleanly and changes nothing */
      FuncDef d = {.name = "userfn", .nargs = 1, .scalar = user_fn};
      util_fault_alloc(1, 1);
      int r2 = func_register(&reg, &d);
      util_fault_alloc(0, 0);
      CHECK(r2 == SHALE_NOMEM || r2 == SHALE_OK);
      if (r2 == SHALE_NOMEM) CHECK(func_find(&reg, "userfn", 1) == NULL);
      func_registry_free(&reg);
      break;
    }
    CHECK_EQ(rc, SHALE_NOMEM);
    CHECK(reg.slots == NULL && reg.count == 0);
  }
  CHECK_EQ(util_alloc_outstanding(), 0);
}

/* Limits: the LIKE pattern length and the blob/text length limit. */
TEST(scalar_limits) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 10);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 100);
  static const struct {
    const char *fn;
    int argc;
    const char *a[3];
  } calls[] = {
      {"like", 2, {"aaaaaaaaaa", "aaaaaaaaaa"}},
      {"like", 2, {"aaaaaaaaaaa", "a"}},
      {"glob", 2, {"*********a*", "a"}},
      {"like", 3, {"aaaaaaaaaaa", "a", "x"}},
      {"replace", 3, {"aaaaaaaaaa", "a", "0123456789"}},
      {"replace", 3, {"aaaaaaaaaa", "a", "012345678"}},
      {"hex", 1, {"0123456789012345678901234567890123456789012345678901"}},
      {"hex", 1, {"01234567890123456789012345678901234567890123456789"}},
      {"zeroblob", 1, {"101"}},
      {"zeroblob", 1, {"100"}},
      {"randomblob", 1, {"101"}},
      {"upper",
       1,
       {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
      {"printf", 2, {"%.99c", "x"}},
      {"printf", 2, {"%100d", "1"}},
      {"printf", 2, {"%101d", "1"}},
      {"upper",
       1,
       {"012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
        "0123456789"}},
      {"replace",
       3,
       {"012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
        "0123456789",
        "0123", "x"}},
      {"quote", 1, {"''''''''''''''''''''''''''''''''''''''''''''''''''''"}},
      {"char", 3, {"1", "2", "3"}},
  };
  for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
    ShValue argv[3];
    for (int i = 0; i < calls[c].argc; i++) {
      const char *a = calls[c].a[i];
      if (!strcmp(calls[c].fn, "zeroblob") || !strcmp(calls[c].fn, "randomblob"))
        value_set_int(&argv[i], atoi(a));
      else
        value_set_text(&argv[i], a, (uint32_t)strlen(a));
    }
    const FuncDef *d = func_find(&reg, calls[c].fn, calls[c].argc);
    FuncCtx ctx;
    func_ctx_init(&ctx, d);
    ctx.max_length = 100;
    ctx.max_like_pattern = 10;
    d->scalar(&ctx, calls[c].argc, argv);
    CallResult mine = {.rc = ctx.rc}, ref;
    if (ctx.rc)
      snprintf(mine.msg, sizeof(mine.msg), "%s", ctx.errmsg ? ctx.errmsg : "");
    else
      copy_owned(&ctx.result, &mine.v);
    func_ctx_reset(&ctx);
    sqlite3_stmt *st = ref_prepare_call(db, calls[c].fn, calls[c].argc);
    ref_call(db, st, calls[c].argc, argv, &ref);
    sqlite3_finalize(st);
    if (!strcmp(calls[c].fn, "randomblob")) { /* compare only the outcome */
      CHECK_EQ(mine.rc, ref.rc);
    } else if (report_diff(calls[c].fn, calls[c].argc, argv, &mine, &ref)) {
      test_fail(__FILE__, __LINE__, "limits case %zu differs", c);
    }
    result_clear(&mine);
    result_clear(&ref);
  }
  func_registry_free(&reg);
  sqlite3_close(db);
}

/* likelihood(x, constant): the constant is checked by the resolver; the
 * function itself is the identity. */
TEST(scalar_likelihood) {
  sqlite3 *db = ref_open();
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  sqlite3_stmt *st;
  CHECK_OK(sqlite3_prepare_v2(db, "SELECT likelihood(?1, 0.25)", -1, &st, 0));
  int bad = 0;
  for (int i = 0; i < NCORPUS; i++) {
    ShValue argv[2];
    corpus_value(i, &argv[0]);
    value_set_real(&argv[1], 0.25);
    CallResult mine, ref;
    shale_call(&reg, "likelihood", 2, argv, &mine);
    ref_call(db, st, 1, argv, &ref);
    bad += report_diff("likelihood", 2, argv, &mine, &ref);
    result_clear(&mine);
    result_clear(&ref);
  }
  CHECK_EQ(bad, 0);
  sqlite3_finalize(st);
  func_registry_free(&reg);
  sqlite3_close(db);
}
