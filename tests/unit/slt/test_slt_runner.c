/*
 * test_slt_runner.c -- the sqllogictest runner (tests/slt/) on the reference
 * SQLite: MD5 known answers, rendering rules, small scripts exercising every
 * record kind, and the whole ../shared/slt corpus (which must pass 100%).
 *
 * The runner sources are compiled into this binary by #include (the Makefile
 * builds one binary per tests/unit/<dir>/test_*.c; tests/slt/ is not scanned).
 *
 * Invariants:
 *  1. The corpus folder is $SHALE_SLT_DIR, else ../shared/slt (from the repo
 *     root, the working directory of make test), else /work/shared/slt; when
 *     none exists the corpus case says so and passes. SHALE_SLT_DIR may also
 *     name a single .test file (handy while debugging one script).
 *  2. By default every .test file runs (about 15 s); SHALE_SLT_QUICK=1 runs
 *     a fixed subset (one file of each kind, about 4 s).
 */
#include <dirent.h>
#include <sys/stat.h>

#include "../../slt/engine_sqlite.c"
#include "../../slt/md5.c"
#include "../../slt/slt.c"
#include "../../test.h"

/* ------------------------------------------------------------------ md5 */

TEST(md5_known_answers) {
  /* RFC 1321 appendix A.5 test suite (also checked against md5sum below) */
  static const char *cases[][2] = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
       "d174ab98d277d9f5a5611c2c9f419d9f"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char hex[33];
    slt_md5_str(cases[i][0], strlen(cases[i][0]), hex);
    CHECK_STR(hex, cases[i][1]);
  }
}

/* Feed in odd-sized pieces and compare with the md5sum program. */
TEST(md5_matches_md5sum) {
  char data[3000];
  uint64_t s = test_seed();
  for (size_t i = 0; i < sizeof data; i++) data[i] = (char)(test_rand(&s) % 95 + 32);
  size_t lens[] = {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 3000};
  for (size_t c = 0; c < sizeof lens / sizeof lens[0]; c++) {
    size_t n = lens[c];
    const char *f = test_path("md5.in");
    FILE *fp = fopen(f, "wb");
    CHECK(fp != NULL);
    if (!fp) return;
    fwrite(data, 1, n, fp);
    fclose(fp);
    char cmd[512], want[64] = "";
    snprintf(cmd, sizeof cmd, "md5sum '%s'", f);
    FILE *pp = popen(cmd, "r");
    CHECK(pp != NULL);
    if (!pp) return;
    CHECK(fscanf(pp, "%32s", want) == 1);
    pclose(pp);
    SltMd5 m;
    char hex[33];
    slt_md5_init(&m);
    for (size_t at = 0, step = 1; at < n; at += step, step = step * 3 % 71 + 1)
      slt_md5_update(&m, data + at, at + step <= n ? step : n - at);
    slt_md5_hex(&m, hex);
    CHECK_STR(hex, want);
  }
}

/* ------------------------------------------------------------ rendering */

static const char *render(char type, SltValue v) {
  static char out[SLT_REAL_MAX + 64];
  SltBuf b = {0};
  size_t at = slt_render(type, &v, &b);
  snprintf(out, sizeof out, "%s", b.z + at);
  free(b.z);
  return out;
}

static SltValue vi(int64_t i) { return (SltValue){SLT_INT, i, 0, NULL, 0}; }
static SltValue vr(double r) { return (SltValue){SLT_REAL, 0, r, NULL, 0}; }
static SltValue vt(const char *z) { return (SltValue){SLT_TEXT, 0, 0, z, strlen(z)}; }
static SltValue vnull(void) { return (SltValue){SLT_NULL, 0, 0, NULL, 0}; }

TEST(render_real_rounding) {
  CHECK_STR(render('R', vr(-9223372036854775808.0)), "-9223372036854776000.000");
  CHECK_STR(render('R', vr(9223372036854775808.0)), "9223372036854776000.000");
  CHECK_STR(render('R', vi(INT64_MIN)), "-9223372036854776000.000");
  CHECK_STR(render('R', vr(0.0625)), "0.063");
  CHECK_STR(render('R', vr(-0.0625)), "-0.063");
  CHECK_STR(render('R', vr(0.0005)), "0.001"); /* 0.0005 is just above half */
  CHECK_STR(render('R', vr(0.0004)), "0.000");
  CHECK_STR(render('R', vr(-0.0004)), "-0.000");
  CHECK_STR(render('R', vr(-0.0)), "0.000");
  CHECK_STR(render('R', vr(0.0)), "0.000");
  CHECK_STR(render('R', vr(1.0 / 0.0)), "Inf");
  CHECK_STR(render('R', vr(-1.0 / 0.0)), "-Inf");
  CHECK_STR(render('R', vr(0.5)), "0.500");
  CHECK_STR(render('R', vr(2.5)), "2.500");
  CHECK_STR(render('R', vr(1.0005)), "1.000"); /* 1.0005 is below half in binary */
  CHECK_STR(render('R', vr(1.125)), "1.125");
  CHECK_STR(render('R', vr(0.9995)), "1.000"); /* carry into the units */
  CHECK_STR(render('R', vr(999.9999)), "1000.000");
  CHECK_STR(render('R', vi(42)), "42.000");
  CHECK_STR(render('R', vi(-7)), "-7.000");
  CHECK_STR(render('R', vr(1e20)), "100000000000000000000.000");
  CHECK_STR(render('R', vr(123456789012345.678)), "123456789012345.700"); /* 16 digits */
  CHECK_STR(render('R', vr(1e-300)), "0.000");
  CHECK_STR(render('R', vr(4.9e-324)), "0.000");
  CHECK_STR(render('R', vt("1.5e3xyz")), "1500.000");
  CHECK_STR(render('R', vt("  -.25")), "-0.250");
  CHECK_STR(render('R', vt("abc")), "0.000");
  CHECK_STR(render('R', vt("12.")), "12.000");
  CHECK_STR(render('R', vt("3e")), "3.000");
  char big[SLT_REAL_MAX];
  CHECK(slt_fmt_real(1.7976931348623157e308, big, sizeof big) == 313);
  CHECK(!strncmp(big, "1797693134862316", 16));
  CHECK_STR(big + 309, ".000");
}

TEST(render_integer_column) {
  CHECK_STR(render('I', vi(42)), "42");
  CHECK_STR(render('I', vi(-42)), "-42");
  CHECK_STR(render('I', vt("42abc")), "42");
  CHECK_STR(render('I', vt("abc")), "0");
  CHECK_STR(render('I', vt("1e5")), "1");
  CHECK_STR(render('I', vt("  -17 ")), "-17");
  CHECK_STR(render('I', vt("+5")), "5");
  CHECK_STR(render('I', vt("")), "0");
  CHECK_STR(render('I', vr(2.9)), "2");
  CHECK_STR(render('I', vr(-2.9)), "-2");
  CHECK_STR(render('I', vr(0.0 / 0.0)), "0");
  /* low 32 bits as a signed int (sqlite3_column_int) */
  CHECK_STR(render('I', vi(4294967296LL + 5)), "5");
  CHECK_STR(render('I', vi(2147483648LL)), "-2147483648");
  CHECK_STR(render('I', vi(INT64_MAX)), "-1");
  CHECK_STR(render('I', vi(INT64_MIN)), "0");
  CHECK_STR(render('I', vr(1e30)), "-1"); /* clamps to INT64_MAX first */
  CHECK_STR(render('I', vt("99999999999999999999999")), "-1");
  CHECK_STR(render('I', vt("-99999999999999999999999")), "0");
  CHECK_EQ(slt_text_to_i64("9223372036854775807", 19), INT64_MAX);
  CHECK(slt_text_to_i64("-9223372036854775808", 20) == INT64_MIN);
  CHECK_EQ(slt_text_to_i64("9223372036854775808", 19), INT64_MAX);
  CHECK_STR(render('I', vnull()), "NULL");
}

TEST(render_text_column) {
  CHECK_STR(render('T', vt("hello world")), "hello world");
  CHECK_STR(render('T', vt("")), "(empty)");
  CHECK_STR(render('T', vt("a\tb\nc")), "a@b@c");
  CHECK_STR(render('T', vt("caf\xc3\xa9")), "caf@@");
  CHECK_STR(render('T', vt("~\x7f")), "~@");
  CHECK_STR(render('T', vi(-123)), "-123");
  CHECK_STR(render('T', vr(2.0)), "2.0");
  CHECK_STR(render('T', vr(0.5)), "0.5");
  CHECK_STR(render('T', vnull()), "NULL");
  CHECK_STR(render('R', vnull()), "NULL");
  SltValue blob = {SLT_BLOB, 0, 0, "x\0y", 3};
  CHECK_STR(render('T', blob), "x@y");
  SltValue empty = {SLT_BLOB, 0, 0, NULL, 0};
  CHECK_STR(render('T', empty), "(empty)");
}

/* ------------------------------------------------------- small scripts */

static SltStats run_script(const char *name, const char *text) {
  const char *f = test_path(name);
  FILE *fp = fopen(f, "wb");
  SltStats st;
  memset(&st, 0, sizeof st);
  CHECK(fp != NULL);
  if (!fp) return st;
  fputs(text, fp);
  fclose(fp);
  slt_run_file(&slt_engine_sqlite, f, &st);
  return st;
}

TEST(script_records_pass) {
  SltStats st =
      run_script("a.test",
                 "# comment\r\n"
                 "hash-threshold 0\n"
                 "\n"
                 "statement ok\r\n"
                 "CREATE TABLE t(a INTEGER, b TEXT, c REAL)\r\n"
                 "\r\n"
                 "statement ok\n"
                 "INSERT INTO t VALUES(3,'x',1.5);\n"
                 "# a comment inside a record\n"
                 "INSERT INTO t VALUES(1,'',NULL); INSERT INTO t VALUES(2,'a b',-0.0625)\n"
                 "\n"
                 "statement error\n"
                 "INSERT INTO nosuch VALUES(1)\n"
                 " \t \n"
                 "query ITR nosort\n"
                 "SELECT a, b, c FROM t ORDER BY a\n"
                 "----\n"
                 "1\n(empty)\nNULL\n2\na b\n-0.063\n3\nx\n1.500\n"
                 "\n"
                 "query I rowsort\n"
                 "SELECT a FROM t\n"
                 "----\n"
                 "1\n2\n3\n"
                 "\n"
                 "query IT rowsort\n"
                 "SELECT 10, 'b' UNION ALL SELECT 9, 'a' UNION ALL SELECT 10, 'a'\n"
                 "----\n"
                 "10\na\n10\nb\n9\na\n"
                 "\n"
                 "query I valuesort\n"
                 "SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 100\n"
                 "----\n"
                 "10\n100\n9\n"
                 "\n"
                 "skipif sqlite\n"
                 "query I nosort\n"
                 "SELECT 'never run'\n"
                 "----\n"
                 "42\n"
                 "\n"
                 "onlyif mysql\n"
                 "statement ok\n"
                 "THIS IS NOT SQL\n"
                 "\n"
                 "onlyif SQLite\n"
                 "skipif mssql # trailing tokens ignored\n"
                 "query I\n"
                 "SELECT 7\n"
                 "----\n"
                 "7\n"
                 "\n"
                 "query I nosort\n"
                 "SELECT a FROM t WHERE a > 5\n"
                 "\n"
                 "query I nosort\n"
                 "SELECT a FROM t WHERE a > 5\n"
                 "----\n"
                 "\n"
                 "hash-threshold 2\n"
                 "\n"
                 "query I rowsort\n"
                 "SELECT a FROM t\n"
                 "----\n"
                 "3 values hashing to c0710d6b4f15dfa88f600b0e6b624077\n"
                 "\n"
                 "hash-threshold 0\n"
                 "\n"
                 "query I rowsort lbl-1\n"
                 "SELECT a FROM t\n"
                 "----\n"
                 "1\n2\n3\n"
                 "\n"
                 "query I rowsort lbl-1\n"
                 "SELECT a FROM t ORDER BY a DESC\n"
                 "----\n"
                 "1\n2\n3\n"
                 "\n"
                 "skipif sqlite\n"
                 "query I rowsort lbl-1\n"
                 "SELECT whatever\n"
                 "----\n"
                 "1\n2\n3\n"
                 "\n"
                 "query I nosort\n"
                 "SELECT sum(x) FROM (SELECT 9223372036854775807 AS x UNION ALL SELECT 1)\n"
                 "----\n"
                 "\n"
                 "skipif sqlite\n"
                 "halt\n"
                 "\n"
                 "query I nosort\n"
                 "SELECT 1; SELECT nonsense FROM nowhere\n"
                 "----\n"
                 "1\n"
                 "\n"
                 "halt\n"
                 "\n"
                 "statement ok\n"
                 "THIS WOULD FAIL\n");
  CHECK_EQ(st.failed, 0);
  CHECK_EQ(st.passed, 15);
  CHECK_EQ(st.skipped, 4);
  CHECK_EQ(st.status, SLT_HALT);
  CHECK_EQ(st.step_errors, 1);
}

TEST(script_failures_counted) {
  SltStats st = run_script(
      "b.test",
      "statement ok\n"
      "SELECT nonsense FROM nowhere\n"
      "\n"
      "statement error\n"
      "SELECT 1\n"
      "\n"
      "statement maybe\n"
      "SELECT 1\n"
      "\n"
      "query I\n"
      "SELECT 1\n"
      "----\n"
      "2\n"
      "\n"
      "query II\n"
      "SELECT 1\n"
      "----\n"
      "1\n"
      "\n"
      "query I\n"
      "SELECT 1 UNION ALL SELECT 2\n"
      "----\n"
      "1\n"
      "\n"
      "query X\n"
      "SELECT 1\n"
      "\n"
      "query I sideways\n"
      "SELECT 1\n"
      "----\n"
      "1\n"
      "\n"
      "query I\n"
      "SELECT FROM WHERE\n"
      "\n"
      "query I nosort\n"
      "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL\n"
      "SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9\n"
      "----\n"
      "9 values hashing to 00000000000000000000000000000000\n"
      "\n"
      "query I nosort L\n"
      "SELECT 1\n"
      "----\n"
      "1\n"
      "\n"
      "query I nosort L\n"
      "SELECT 2\n"
      "----\n"
      "2\n"
      "\n"
      "skipif sqlite\n"
      "query I nosort L\n"
      "SELECT 3\n"
      "----\n"
      "3\n"
      "\n"
      "bogus record\n"
      "\n"
      "statement ok\n"
      "SELECT 'not reached'\n");
  CHECK_EQ(st.failed, 13);
  CHECK_EQ(st.passed, 1);
  CHECK_EQ(st.skipped, 1);
  CHECK_EQ(st.status, SLT_BAD_SCRIPT);
}

/* Labels: first 20 characters are the key; a skipped record registers the
 * md5 from its hash line or of its expected lines. */
TEST(script_labels) {
  SltStats st = run_script("c.test",
                           "skipif sqlite\n"
                           "query I nosort label-abcdefghijklmnop-1\n"
                           "SELECT x\n"
                           "----\n"
                           "3 values hashing to c0710d6b4f15dfa88f600b0e6b624077\n"
                           "\n"
                           "query I rowsort label-abcdefghijklmnop-2\n"
                           "SELECT 3 UNION ALL SELECT 1 UNION ALL SELECT 2\n"
                           "----\n"
                           "1\n2\n3\n"
                           "\n"
                           "skipif sqlite\n"
                           "query I nosort other\n"
                           "SELECT x\n"
                           "----\n"
                           "5\n"
                           "\n"
                           "query I nosort other\n"
                           "SELECT 5\n"
                           "----\n"
                           "5\n"
                           "\n"
                           "query I nosort other\n"
                           "SELECT 6\n"
                           "----\n"
                           "6\n"
                           "\n"
                           "skipif sqlite\n"
                           "query I nosort other\n"
                           "SELECT x\n"
                           "----\n"
                           "7\n"
                           "\n"
                           "skipif sqlite\n"
                           "query I nosort third\n"
                           "SELECT x\n"
                           "----\n"
                           "\n"
                           "query I nosort third\n"
                           "SELECT 1\n"
                           "----\n"
                           "1\n");
  /* passes: label-...-2 (same key as -1), other=5, third; fails: other=6,
   * skipped other=7 */
  CHECK_EQ(st.passed, 3);
  CHECK_EQ(st.failed, 2);
  CHECK_EQ(st.skipped, 4);
}

TEST(script_missing_file) {
  SltStats st;
  CHECK(slt_run_file(&slt_engine_sqlite, test_path("does-not-exist.test"), &st) != 0);
  CHECK_EQ(st.status, SLT_IO_ERROR);
  CHECK_EQ(st.failed, 1);
}

/* ------------------------------------------------------------ the corpus */

static const char *corpus_dir(void) {
  static char buf[4096];
  const char *env = getenv("SHALE_SLT_DIR");
  struct stat sb;
  if (env && *env) return stat(env, &sb) == 0 ? env : NULL; /* a folder or one file */
  if (stat("../shared/slt", &sb) == 0 && S_ISDIR(sb.st_mode)) {
    if (realpath("../shared/slt", buf)) return buf;
    return "../shared/slt";
  }
  if (stat("/work/shared/slt", &sb) == 0 && S_ISDIR(sb.st_mode)) return "/work/shared/slt";
  return NULL;
}

typedef struct Files {
  char **v;
  size_t n, cap;
} Files;

static void collect(const char *dir, Files *fs) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    size_t n = strlen(dir) + strlen(de->d_name) + 2;
    char *p = malloc(n);
    if (!p) break;
    snprintf(p, n, "%s/%s", dir, de->d_name);
    struct stat sb;
    if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      collect(p, fs);
      free(p);
    } else if (strlen(de->d_name) > 5 && !strcmp(de->d_name + strlen(de->d_name) - 5, ".test")) {
      if (fs->n == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 64;
        fs->v = realloc(fs->v, fs->cap * sizeof *fs->v);
      }
      fs->v[fs->n++] = p;
    } else {
      free(p);
    }
  }
  closedir(d);
}

static int cmp_path(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

TEST(corpus_passes_on_sqlite) {
  const char *dir = corpus_dir();
  if (!dir) {
    printf(
        "slt corpus: not found (SHALE_SLT_DIR, ../shared/slt, /work/shared/slt); "
        "corpus case skipped, the rest of the suite runs\n");
    return;
  }
  Files fs = {0};
  struct stat sb;
  if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) { /* SHALE_SLT_DIR names one script */
    fs.v = malloc(sizeof *fs.v);
    if (!fs.v) return;
    fs.v[0] = strdup(dir);
    fs.n = fs.v[0] ? 1 : 0;
    const char *slash = strrchr(dir, '/');
    static char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - dir) : 1, slash ? dir : ".");
    dir = parent;
  } else {
    collect(dir, &fs);
  }
  qsort(fs.v, fs.n, sizeof *fs.v, cmp_path);
  /* The whole corpus takes about 15 s on SQLite: run it all by default;
   * SHALE_SLT_QUICK=1 runs the fixed subset (about 4 s) instead. */
  int all = test_long() || !getenv("SHALE_SLT_QUICK") || fs.n == 1;
  long passed = 0, failed = 0, skipped = 0, nfiles = 0;
  double secs = 0;
  printf("slt corpus %s: %zu files, running %s\n", dir, fs.n,
         all ? "all of them" : "the quick subset (SHALE_SLT_QUICK is set)");
  for (size_t i = 0; i < fs.n; i++) {
    size_t dl = strlen(dir);
    const char *rel = !strncmp(fs.v[i], dir, dl) && fs.v[i][dl] == '/' ? fs.v[i] + dl + 1 : fs.v[i];
    if (all || slt_in_quick_subset(rel)) {
      SltStats st;
      slt_run_file(&slt_engine_sqlite, fs.v[i], &st);
      printf("  %-45s passed %6ld failed %3ld skipped %5ld  %6.2f s\n", rel, st.passed, st.failed,
             st.skipped, st.seconds);
      CHECK_EQ(st.failed, 0);
      CHECK(st.status == SLT_DONE);
      passed += st.passed;
      failed += st.failed;
      skipped += st.skipped;
      secs += st.seconds;
      nfiles++;
    }
    free(fs.v[i]);
  }
  free(fs.v);
  printf(
      "slt corpus total: %ld files, %ld records run (%ld passed, %ld failed), %ld skipped, "
      "%.1f s\n",
      nfiles, passed + failed, passed, failed, skipped, secs);
  CHECK(nfiles > 0);
}

/* The corpus check can fail: an engine that changes one integer value
 * (every 7 becomes 8) must fail records of select1.test. */
typedef struct Wrap {
  SltRowFn row;
  void *ctx;
} Wrap;

static int bent_row(void *ctx, int ncol, const SltValue *row) {
  Wrap *w = ctx;
  SltValue v[64];
  if (ncol > 64) return w->row(w->ctx, ncol, row);
  for (int i = 0; i < ncol; i++) {
    v[i] = row[i];
    if (v[i].type == SLT_INT && v[i].i == 7) v[i].i = 8;
  }
  return w->row(w->ctx, ncol, v);
}

static int bent_query(void *h, const char *sql, int *ncol, SltRowFn row, void *ctx) {
  Wrap w = {row, ctx};
  return slt_engine_sqlite.query(h, sql, ncol, bent_row, &w);
}

TEST(corpus_detects_a_wrong_engine) {
  const char *dir = corpus_dir();
  struct stat sb;
  if (!dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    printf("slt corpus folder: not found; case skipped\n");
    return;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/select1.test", dir);
  SltEngine bent = slt_engine_sqlite;
  bent.query = bent_query;
  int saved = slt_max_details;
  slt_max_details = 2;
  SltStats st;
  CHECK(slt_run_file(&bent, path, &st) != 0);
  slt_max_details = saved;
  printf("select1.test on a bent engine: %ld passed, %ld failed\n", st.passed, st.failed);
  CHECK(st.failed > 10);
  CHECK(st.passed > 0);
  CHECK_EQ(st.passed + st.failed, 1031);
  /* and the other way round: the engine name decides skipif/onlyif */
  SltEngine other = slt_engine_sqlite;
  other.name = "MySQL"; /* compared case-insensitively */
  snprintf(path, sizeof path, "%s/evidence/slt_lang_reindex.test", dir);
  slt_max_details = 0;
  slt_run_file(&other, path, &st);
  slt_max_details = saved;
  CHECK_EQ(st.status, SLT_HALT); /* "onlyif mysql / halt" fires */
  CHECK_EQ(st.skipped, 2);
  CHECK_EQ(st.passed, 5); /* the five statements before the guards */
}
