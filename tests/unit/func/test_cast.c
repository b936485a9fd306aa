/*
 * test_cast.c -- the record layer's conversions against the reference
 * (record_value_cast/value_int64/value_double from convert.c, the rest from
 * cast.c): CAST(x AS type) for every type,
 * sqlite3_value_int64/_double/_numeric_type (through helper
 * functions registered in the reference), text rendering and truth values,
 * over the corpus plus thousands of random number-like texts and blobs.
 */
#include "func_test.h"

static void ref_int64(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_int64(c, sqlite3_value_int64(v[0]));
}
static void ref_double(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_double(c, sqlite3_value_double(v[0]));
}
/* The value after sqlite3_value_numeric_type (its type and value). */
static void ref_numeric(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_value_numeric_type(v[0]);
  sqlite3_result_value(c, v[0]);
}

static void make_value(int k, uint64_t *seed, ShValue *v, char *buf) {
  if (k < NCORPUS) {
    corpus_value(k, v);
    return;
  }
  static const char alpha[] = " \t0123456789.eE+-x0123456789";
  int len = (int)(test_rand(seed) % 14);
  if (test_rand(seed) % 10 == 0) len = 18 + (int)(test_rand(seed) % 8); /* long digit runs */
  for (int i = 0; i < len; i++) {
    int digits_only = len >= 18 && i > 0;
    buf[i] = digits_only ? (char)('0' + test_rand(seed) % 10)
                         : alpha[test_rand(seed) % (sizeof(alpha) - 1)];
  }
  buf[len] = 0;
  if (test_rand(seed) % 4 == 0)
    value_set_blob(v, buf, (uint32_t)len);
  else
    value_set_text(v, buf, (uint32_t)len);
}

static void one(sqlite3 *db, sqlite3_stmt *st, const char *what, ShValue *in, ShValue *mine,
                int *bad) {
  CallResult m = {.v = *mine}, r;
  ref_call(db, st, 1, in, &r);
  if (!result_same(&m, &r)) {
    if ((*bad)++ < 10) report_diff(what, 1, in, &m, &r);
  }
  result_clear(&r);
}

TEST(cast_differential) {
  sqlite3 *db = ref_open();
  CHECK_OK(sqlite3_create_function(db, "ref_int64", 1, SQLITE_UTF8, 0, ref_int64, 0, 0));
  CHECK_OK(sqlite3_create_function(db, "ref_double", 1, SQLITE_UTF8, 0, ref_double, 0, 0));
  CHECK_OK(sqlite3_create_function(db, "ref_numeric", 1, SQLITE_UTF8, 0, ref_numeric, 0, 0));
  static const char *const sql[] = {"SELECT CAST(?1 AS INTEGER)",
                                    "SELECT CAST(?1 AS REAL)",
                                    "SELECT CAST(?1 AS NUMERIC)",
                                    "SELECT CAST(?1 AS TEXT)",
                                    "SELECT CAST(?1 AS BLOB)",
                                    "SELECT ref_int64(?1)",
                                    "SELECT ref_double(?1)",
                                    "SELECT ref_numeric(?1)",
                                    "SELECT CASE WHEN ?1 THEN 1 ELSE 0 END",
                                    "SELECT CASE WHEN ?1 THEN 1 WHEN NOT ?1 THEN 0 END"};
  static const char aff[] = {AFF_INTEGER, AFF_REAL, AFF_NUMERIC, AFF_TEXT, AFF_BLOB};
  enum { NSQL = sizeof(sql) / sizeof(sql[0]) };
  sqlite3_stmt *st[NSQL];
  for (int i = 0; i < NSQL; i++) CHECK_OK(sqlite3_prepare_v2(db, sql[i], -1, &st[i], NULL));
  uint64_t seed = test_seed();
  int n = NCORPUS + (test_long() ? 100000 : 8000);
  int bad = 0;
  char buf[64];
  for (int k = 0; k < n; k++) {
    ShValue in, mine;
    make_value(k, &seed, &in, buf);
    for (int c = 0; c < 5; c++) {
      copy_owned(&in, &mine);
      CHECK_OK(record_value_cast(&mine, aff[c]));
      one(db, st[c], sql[c], &in, &mine, &bad);
      value_clear(&mine);
    }
    value_set_int(&mine, record_value_int64(&in));
    one(db, st[5], "record_value_int64", &in, &mine, &bad);
    value_set_real(&mine, record_value_double(&in));
    one(db, st[6], "record_value_double", &in, &mine, &bad);
    mine = in;
    mine.flags = 0;
    record_value_numeric_type(&mine);
    ShValue m2;
    copy_owned(&mine, &m2);
    one(db, st[7], "record_value_numeric_type", &in, &m2, &bad);
    value_clear(&m2);
    value_set_int(&mine, record_value_is_true(&in, 0));
    one(db, st[8], "record_value_is_true", &in, &mine, &bad);
    if (in.type == SHALE_NULL)
      value_set_null(&mine);
    else
      value_set_int(&mine, record_value_is_true(&in, 0));
    one(db, st[9], "record_value_is_true(3-valued)", &in, &mine, &bad);
  }
  CHECK_EQ(bad, 0);
  for (int i = 0; i < NSQL; i++) sqlite3_finalize(st[i]);
  sqlite3_close(db);
}

TEST(cast_examples) {
  ShValue v;
  value_set_text(&v, "12abc", 5);
  CHECK_EQ(record_value_int64(&v), 12);
  value_set_text(&v, " 3.9e2x", 7);
  CHECK_EQ(record_value_int64(&v), 3); /* SQLite 3.40: integer prefix only */
  CHECK(record_value_double(&v) == 390.0);
  value_set_text(&v, "1e3", 3);
  CHECK_OK(record_value_cast(&v, AFF_NUMERIC));
  CHECK(v.type == SHALE_INTEGER && v.i == 1000);
  value_set_text(&v, "  12  ", 6);
  CHECK_OK(record_value_cast(&v, AFF_INTEGER));
  CHECK(v.type == SHALE_INTEGER && v.i == 12);
  value_set_blob(&v, "12", 2);
  CHECK_OK(record_value_cast(&v, AFF_INTEGER));
  CHECK_EQ(v.i, 12);
  value_set_real(&v, 1e300);
  CHECK_EQ(record_value_int64(&v), INT64_MAX);
  value_set_real(&v, -1e300);
  CHECK_EQ(record_value_int64(&v), INT64_MIN);
  value_set_real(&v, -2.9);
  CHECK_EQ(record_value_int64(&v), -2);
  value_set_real(&v, 1.5);
  CHECK_OK(record_value_cast(&v, AFF_TEXT));
  CHECK(v.type == SHALE_TEXT && v.n == 3 && !memcmp(v.z, "1.5", 3) && v.z[3] == 0);
  value_clear(&v);
  value_set_text(&v, "1abc", 4);
  CHECK(record_value_is_true(&v, 0));
  value_set_text(&v, "abc", 3);
  CHECK(!record_value_is_true(&v, 0));
  value_set_null(&v);
  CHECK_EQ(record_value_is_true(&v, 7), 7);
  char buf[32];
  const char *z;
  uint32_t n;
  value_set_int(&v, -42);
  CHECK(record_value_text_view(&v, buf, &z, &n) && n == 3 && !memcmp(z, "-42", 3));
  value_set_null(&v);
  CHECK(!record_value_text_view(&v, buf, &z, &n) && z == NULL);
  int64_t i;
  CHECK_EQ(record_value_text_to_int64("9223372036854775808", 19, &i), 3);
  CHECK_EQ(i, INT64_MAX);
  CHECK_EQ(record_value_text_to_int64("-9223372036854775808", 20, &i), 0);
  CHECK_EQ(i, INT64_MIN);
  CHECK_EQ(record_value_text_to_int64("  ", 2, &i), -1);
  CHECK_EQ(record_value_text_to_int64("7 x", 3, &i), 1);
  double r;
  CHECK_EQ(record_value_text_to_real("1.5e", 4, &r), -1);
  CHECK(r == 1.5);
  CHECK_EQ(record_value_text_to_real("15e", 3, &r), 0);
  CHECK(r == 15.0);
  CHECK_EQ(record_value_text_to_real("1.5x", 4, &r), -1);
  CHECK_EQ(record_value_text_to_real(" 2e5 ", 5, &r), 2);
  CHECK(r == 2e5);
}

TEST(cast_oom) {
  ShValue v;
  for (int c = 0; c < 2; c++) {
    value_set_int(&v, 12345);
    util_fault_alloc(1, 0);
    CHECK_RC(record_value_cast(&v, c ? AFF_TEXT : AFF_BLOB), SHALE_NOMEM);
    util_fault_alloc(0, 0);
    CHECK(v.type == SHALE_INTEGER && v.i == 12345);
  }
  value_set_text(&v, "abc", 3);
  util_fault_alloc(1, 0);
  CHECK_RC(record_value_to_text(&v), SHALE_NOMEM);
  util_fault_alloc(0, 0);
  CHECK(v.type == SHALE_TEXT && !(v.flags & VAL_OWNED));
}
