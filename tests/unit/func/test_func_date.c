/*
 * test_func_date.c -- the date and time functions against the reference
 * SQLite in the same process: a list of hand-picked expressions (every
 * format, modifier, edge and error case), the localtime/utc ones under
 * several TZ settings, random time values with random modifier chains, and
 * 'now' properties (one instant per step, within the clock's bounds).
 */
#include <time.h>

#include "sqldiff.h"

static const char *const exprs[] = {
    "date('2020-03-04')",
    "date('2020-3-04')",
    "date('2020-03-04 12:34')",
    "date('2020-03-04T12:34:56')",
    "date('2020-03-04T12:34:56.789Z')",
    "datetime('2020-03-04 12:34:56.789+05:30')",
    "datetime('2020-03-04 12:34:56.789-05:30')",
    "datetime('2020-03-04 12:34:56 -0530')",
    "datetime('2020-03-04 12:34:56 z')",
    "datetime('2020-03-04 12:34:56 Z ')",
    "datetime(' 2020-03-04')",
    "datetime('2020-03-04 ')",
    "datetime('2020-03-04   T 10:00')",
    "time('12:34')",
    "time('12:34:56')",
    "time('24:00')",
    "time('24:60')",
    "time('12:34:5')",
    "time('12:34:56.')",
    "time('12:34:56.5')",
    "time('12:34:56.9999')",
    "datetime('12:34:56.9999')",
    "strftime('%f','12:34:56.9999')",
    "strftime('%f','12:34:59.9999')",
    "julianday('2000-01-01')",
    "julianday('2000-01-01 12:00')",
    "julianday(2451545)",
    "julianday('2451545')",
    "julianday(' 2451545 ')",
    "julianday('2451545x')",
    "julianday(-1)",
    "julianday(5373484.4)",
    "julianday(5373484.5)",
    "datetime(5373484.49999)",
    "julianday('0000-01-01')",
    "julianday('-4713-11-24 12:00:00')",
    "julianday('-4713-11-24 11:59:59')",
    "julianday('9999-12-31 23:59:59.999')",
    "julianday('10000-01-01')",
    "date('-0001-03-01')",
    "datetime('-0100-02-29')",
    "strftime('%Y','-0100-02-29')",
    "strftime('%Y-%m-%d','0010-02-28')",
    "unixepoch('1970-01-01')",
    "unixepoch('1969-12-31 23:59:59')",
    "unixepoch('1969-12-31 23:59:59.5')",
    "unixepoch(0)",
    "unixepoch(0,'unixepoch')",
    "unixepoch(1e10,'unixepoch')",
    "datetime(1234567890,'unixepoch')",
    "datetime(1234567890.5,'unixepoch')",
    "datetime('1234567890','unixepoch')",
    "datetime(-1234567890,'unixepoch')",
    "datetime(253402300799,'unixepoch')",
    "datetime(253402300800,'unixepoch')",
    "datetime(-210866760000,'unixepoch')",
    "datetime(-210866760001,'unixepoch')",
    "datetime(1234567890,'auto')",
    "datetime(2451545.5,'auto')",
    "datetime(2451545.5,'julianday')",
    "datetime(1234567890,'julianday')",
    "datetime('2000-01-01','julianday')",
    "datetime(2451545,'start of day','julianday')",
    "datetime(1234567890,'start of day','unixepoch')",
    "datetime(0,'unixepoch','unixepoch')",
    "datetime(-1,'auto')",
    "datetime(1e12,'auto')",
    "datetime('now','auto') is not null",
    "date('2020-01-31','+1 month')",
    "date('2020-01-31','+1 months')",
    "date('2020-01-31','-1 month')",
    "date('2020-01-31','+13 month')",
    "date('2020-01-31','-13 month')",
    "date('2020-03-31','-1 month')",
    "date('2020-02-29','+1 year')",
    "date('2020-02-29','-4 years')",
    "date('2020-02-29','+1.5 years')",
    "date('2020-02-29','+1.5 month')",
    "datetime('2020-02-29','+1.5 day')",
    "datetime('2020-02-29','+1.25 hours')",
    "datetime('2020-02-29','+90 minutes')",
    "datetime('2020-02-29','-90.5 seconds')",
    "datetime('2020-02-29','+1e3 seconds')",
    "datetime('2020-02-29','+ 1 day')",
    "datetime('2020-02-29','1 day')",
    "datetime('2020-02-29','1day')",
    "datetime('2020-02-29','+1  days')",
    "datetime('2020-02-29','+1 DAYS')",
    "datetime('2020-02-29','+1 dayss')",
    "datetime('2020-02-29','+1 d')",
    "datetime('2020-02-29','+1 da')",
    "datetime('2020-02-29','+x days')",
    "datetime('2020-02-29','+12:30')",
    "datetime('2020-02-29','-12:30')",
    "datetime('2020-02-29','+12:30:15.5')",
    "datetime('2020-02-29','12:30')",
    "datetime('2020-02-29','+25:00')",
    "datetime('2020-02-29','+1 12:30')",
    "datetime('2020-02-29 10:00','start of month')",
    "datetime('2020-02-29 10:00','start of year')",
    "datetime('2020-02-29 10:00','start of day')",
    "datetime('2020-02-29 10:00','Start Of Day')",
    "datetime('2020-02-29 10:00','start of week')",
    "datetime('2020-02-29 10:00','start of')",
    "datetime('2020-02-29 10:00','weekday 0')",
    "datetime('2020-02-29 10:00','weekday 6')",
    "datetime('2020-02-29 10:00','weekday 1')",
    "datetime('2020-02-29 10:00','weekday 7')",
    "datetime('2020-02-29 10:00','weekday 1.5')",
    "datetime('2020-02-29 10:00','weekday 1.0')",
    "datetime('2020-02-29 10:00','weekday  3')",
    "datetime('2020-02-29 10:00','weekday')",
    "datetime('2020-02-29 10:00','WEEKDAY 2')",
    "datetime('2020-02-29 10:00','unixepoch')",
    "datetime('2020-02-29 10:00','bogus')",
    "datetime('2020-02-29 10:00','')",
    "datetime('2020-02-29 10:00',NULL)",
    "datetime('2020-02-29 10:00',5)",
    "datetime(NULL)",
    "datetime('')",
    "datetime('x')",
    "datetime(x'323032302d30312d3031')",
    "datetime(1.5)",
    "datetime('2020-02-30')",
    "date('2021-02-31')",
    "date('2021-02-31','+0 days')",
    "date('2021-13-01')",
    "date('2021-00-01')",
    "date('2021-01-00')",
    "date('2021-01-32')",
    "date('21-01-01')",
    "date('02021-01-01')",
    "strftime('%d|%f|%H|%j|%J|%m|%M|%s|%S|%w|%W|%Y|%%','2020-03-04 05:06:07.891')",
    "strftime('%e','2020-01-01')",
    "strftime('%','2020-01-01')",
    "strftime('a%','2020-01-01')",
    "strftime('%%','2020-01-01')",
    "strftime('hello','2020-01-01')",
    "strftime('','2020-01-01')",
    "strftime(NULL,'2020-01-01')",
    "strftime('%Y')",
    "strftime('%Y') = strftime('%Y','now')",
    "strftime()",
    "strftime('%W %j','2020-01-01')",
    "strftime('%W %j','2020-12-31')",
    "strftime('%W %j','2021-01-03')",
    "strftime('%W %j','2021-01-04')",
    "strftime('%W %w','2022-01-02')",
    "strftime('%s','1900-01-01')",
    "strftime('%s','9999-12-31 23:59:59')",
    "strftime('%J','2020-01-01 00:00:00.001')",
    "strftime('%f','2020-01-01 00:00:00.0005')",
    "strftime('%f','2020-01-01 00:00:59.9995')",
    "typeof(julianday('2020-01-01')), typeof(unixepoch('2020-01-01'))",
    "date(2460000.5)",
    "date('2460000.5')",
    "time(0.5)",
    "date('2020-01-01','+1 month','-1 day','start of month','weekday 3')",
    "datetime(2451545.123456789)",
    "julianday(2451545.123456789)",
    "julianday('2020-01-01 12:00:00.123456')",
    "datetime('2020-01-01 12:00:00.999999')",
    "time('2020-01-01 23:59:59.9999')",
    "date('2020-01-01 23:59:59.9999')",
    "datetime('2020-01-01','+1000000 days')",
    "datetime('2020-01-01','+5373485 days')",
    "datetime('2020-01-01','-1000000 days')",
    "datetime('2020-01-01','+176546 months')",
    "datetime('2020-01-01','+176545 months')",
    "datetime('2020-01-01','+14712 years')",
    "datetime('2020-01-01','+7979 years')",
    "datetime('2020-01-01','+7980 years')",
    "datetime('2020-01-01','+1e9 minutes')",
    "current_date = date('now')",
    "current_time = time('now')",
    "current_timestamp = datetime('now')",
    "length(current_timestamp)",
    "date(), time() is not null, length(datetime())",
    "julianday('now') - julianday() < 0.001",
    "datetime('2020-01-01 10:00','+1 day','+1 hour','+1 minute','+1 second')",
    "datetime('2020-01-01',' +1 day')",
    "datetime('2020-01-01','+1 day ')",
    "datetime('2020-01-01','+1.day')",
    "datetime('2020-01-01','+.5 day')",
    "datetime('2020-01-01','-.5 day')",
    "datetime('2020-01-01','+1e1 day')",
    "datetime('2020-01-01','+0x10 day')",
    "datetime('2020-01-01T')",
    "datetime('2020-01-01 T10:00')",
    "datetime('2020-01-01 10:00:00 +01:00 ')",
    "datetime('2020-01-01 10:00:00+1:00')",
    "datetime('2020-01-01 10:00:00+15:00')",
    "datetime('2020-01-01 10:00:00+14:59')",
    "datetime('10:00+05:00')",
    "time('10:00+05:00')",
    "date('10:00')",
    "datetime(2451545, 'unixepoch', 'auto')",
    "datetime(1234567890, 'auto', 'auto')",
    "date(1234567890,'+1 day','auto')",
    NULL};

static const char *const tz_exprs[] = {"datetime('2020-01-01 10:00:00','localtime')",
                                       "datetime('2020-01-01 10:00:00','utc')",
                                       "datetime('2020-01-01 10:00:00','utc','utc')",
                                       "datetime('2020-01-01 10:00:00+01:00','utc')",
                                       "datetime('2020-07-01 10:00:00','localtime')",
                                       "datetime('2020-07-01 10:00:00','localtime','utc')",
                                       "datetime('1950-07-01 10:00:00','localtime')",
                                       "datetime('2050-07-01 10:00:00','localtime')",
                                       "datetime('2020-03-29 01:30:00','localtime')",
                                       "datetime('2020-03-29 02:30:00','utc')",
                                       "datetime('2020-10-25 02:30:00','utc')",
                                       "datetime('2020-10-25 01:30:00','localtime')",
                                       "datetime('now', 'localtime') is not null",
                                       "datetime(0, 'unixepoch', 'localtime')",
                                       "datetime(-1e10, 'unixepoch', 'localtime')",
                                       "datetime(3e10, 'unixepoch', 'localtime', 'utc')",
                                       "datetime('0001-06-15 12:00', 'localtime')",
                                       "datetime('-0001-06-15 12:00', 'utc')",
                                       "datetime('9999-12-31 23:00', 'localtime')",
                                       "strftime('%s %f', '2021-06-15 12:34:56.789', 'localtime')",
                                       "datetime('2021-06-15 12:00 +02:00', 'utc')",
                                       "datetime('2021-06-15 12:00', 'utc', 'localtime')",
                                       "datetime('2021-03-28 02:30', 'utc')",
                                       "datetime('2021-03-14 02:30', 'utc')",
                                       "datetime('2021-11-07 01:30', 'utc')",
                                       NULL};

static void open_both(shale **s, sqlite3 **r) {
  CHECK_OK(shale_open(":memory:", s));
  CHECK(sqlite3_open(":memory:", r) == SQLITE_OK);
}

static void close_both(shale *s, sqlite3 *r) {
  shale_close(s);
  sqlite3_close(r);
}

static int run_list(shale *s, sqlite3 *r, const char *const *list) {
  int bad = 0, quota = 10;
  char sql[512];
  for (int i = 0; list[i]; i++) {
    snprintf(sql, sizeof sql, "SELECT %s", list[i]);
    bad += !sqldiff_query(s, r, sql, &quota);
  }
  return bad;
}

TEST(date_expressions) {
  shale *s;
  sqlite3 *r;
  open_both(&s, &r);
  int bad = run_list(s, r, exprs);
  CHECK_EQ(bad, 0);
  close_both(s, r);
}

TEST(date_timezones) {
  static const char *const zones[] = {
      "UTC",          "Europe/Berlin",  "America/New_York", "Australia/Lord_Howe",
      "Asia/Kolkata", "Pacific/Chatham"};
  const char *old = getenv("TZ");
  char *save = old ? strdup(old) : NULL;
  for (int z = 0; z < (int)(sizeof zones / sizeof zones[0]); z++) {
    setenv("TZ", zones[z], 1);
    tzset();
    shale *s;
    sqlite3 *r;
    open_both(&s, &r);
    int bad = run_list(s, r, tz_exprs);
    if (bad) fprintf(stderr, "  TZ=%s: %d differences\n", zones[z], bad);
    CHECK_EQ(bad, 0);
    close_both(s, r);
  }
  if (save)
    setenv("TZ", save, 1);
  else
    unsetenv("TZ");
  free(save);
  tzset();
}

/* Random time values in every input form, with up to three random modifiers. */
static void random_time(uint64_t *seed, char *out, size_t cap) {
  uint64_t k = test_rand(seed) % 8;
  int Y = (int)(test_rand(seed) % 10000), M = (int)(test_rand(seed) % 14),
      D = (int)(test_rand(seed) % 33), h = (int)(test_rand(seed) % 26),
      mi = (int)(test_rand(seed) % 61), sec = (int)(test_rand(seed) % 61);
  if (test_rand(seed) % 4 == 0) Y = (int)(test_rand(seed) % 200) + 1900;
  switch (k) {
    case 0:
      snprintf(out, cap, "'%04d-%02d-%02d'", Y, M, D);
      break;
    case 1:
      snprintf(out, cap, "'%04d-%02d-%02d %02d:%02d:%02d.%03d'", Y, M, D, h, mi, sec,
               (int)(test_rand(seed) % 1000));
      break;
    case 2:
      snprintf(out, cap, "'%04d-%02d-%02dT%02d:%02d%c%02d:%02d'", Y, M % 13, D % 32, h % 24,
               mi % 60, test_rand(seed) % 2 ? '+' : '-', (int)(test_rand(seed) % 16),
               (int)(test_rand(seed) % 60));
      break;
    case 3:
      snprintf(out, cap, "'%02d:%02d:%02d'", h, mi, sec);
      break;
    case 4:
      snprintf(out, cap, "%.6f", (double)(test_rand(seed) % 6000000000ULL) / 1000.0);
      break;
    case 5:
      snprintf(out, cap, "%lld", (long long)(test_rand(seed) % 20000000000ULL) - 10000000000LL);
      break;
    case 6:
      snprintf(out, cap, "'%lld.%d'", (long long)(test_rand(seed) % 5400000),
               (int)(test_rand(seed) % 10));
      break;
    default:
      snprintf(out, cap, "'%04d-%02d-%02d %02d:%02d'", Y, M % 13, D % 32, h % 24, mi % 60);
  }
}

static void random_modifier(uint64_t *seed, char *out, size_t cap) {
  static const char *const units[] = {"second", "seconds", "minute", "minutes", "hour", "hours",
                                      "day",    "days",    "month",  "months",  "year", "years"};
  static const char *const fixed[] = {
      "start of month", "start of year", "start of day", "unixepoch", "auto",      "julianday",
      "weekday 0",      "weekday 3",     "weekday 6",    "utc",       "localtime", "start of week"};
  switch (test_rand(seed) % 4) {
    case 0:
    case 1: {
      double n = (double)((int64_t)(test_rand(seed) % 4001) - 2000);
      if (test_rand(seed) % 3 == 0) n /= 8;
      snprintf(out, cap, "'%+g %s'", n, units[test_rand(seed) % 12]);
      break;
    }
    case 2:
      snprintf(out, cap, "'%c%02d:%02d'", test_rand(seed) % 2 ? '+' : '-',
               (int)(test_rand(seed) % 30), (int)(test_rand(seed) % 60));
      break;
    default:
      snprintf(out, cap, "'%s'", fixed[test_rand(seed) % 12]);
  }
}

TEST(date_random) {
  static const char *const fns[] = {"date", "time", "datetime", "julianday", "unixepoch"};
  static const char *const fmts[] = {"%Y-%m-%d %H:%M:%f", "%j %W %w %s", "%J", "%S%%%d"};
  shale *s;
  sqlite3 *r;
  open_both(&s, &r);
  uint64_t seed = test_seed();
  int n = test_long() ? 40000 : 4000, bad = 0, quota = 10;
  char sql[512], tv[96], m[3][64];
  for (int i = 0; i < n; i++) {
    random_time(&seed, tv, sizeof tv);
    int nm = (int)(test_rand(&seed) % 4);
    for (int j = 0; j < 3; j++) random_modifier(&seed, m[j], sizeof m[j]);
    int f = (int)(test_rand(&seed) % 6);
    int k = f < 5 ? snprintf(sql, sizeof sql, "SELECT %s(%s", fns[f], tv)
                  : snprintf(sql, sizeof sql, "SELECT strftime('%s', %s",
                             fmts[test_rand(&seed) % 4], tv);
    for (int j = 0; j < nm; j++) k += snprintf(sql + k, sizeof sql - (size_t)k, ", %s", m[j]);
    snprintf(sql + k, sizeof sql - (size_t)k, ")");
    bad += !sqldiff_query(s, r, sql, &quota);
  }
  CHECK_EQ(bad, 0);
  close_both(s, r);
}

/* 'now' is one instant for a whole step and lies between clock readings
 * taken before and after. */
TEST(date_now) {
  shale *s;
  shale_stmt *st;
  CHECK_OK(shale_open(":memory:", &s));
  struct timespec a, b;
  clock_gettime(CLOCK_REALTIME, &a);
  CHECK_OK(shale_prepare_v2(s,
                            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                            "WHERE x < 20000) SELECT count(DISTINCT julianday('now')), "
                            "min(unixepoch()), max(julianday()) FROM c",
                            -1, &st, NULL));
  CHECK(shale_step(st) == SHALE_ROW);
  clock_gettime(CLOCK_REALTIME, &b);
  CHECK_EQ(shale_column_int(st, 0), 1);
  int64_t ue = shale_column_int64(st, 1);
  CHECK(ue >= (int64_t)a.tv_sec && ue <= (int64_t)b.tv_sec);
  double jd = shale_column_double(st, 2);
  double ja = 2440587.5 + (double)a.tv_sec / 86400.0 - 0.001,
         jb = 2440587.5 + (double)(b.tv_sec + 1) / 86400.0;
  CHECK(jd >= ja && jd <= jb);
  shale_finalize(st);
  /* current_* keywords agree with the functions within one step */
  CHECK_OK(shale_prepare_v2(s,
                            "SELECT current_date = date(), current_time = time('now'), "
                            "current_timestamp = datetime(), typeof(current_time)",
                            -1, &st, NULL));
  CHECK(shale_step(st) == SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 1);
  CHECK_EQ(shale_column_int(st, 1), 1);
  CHECK_EQ(shale_column_int(st, 2), 1);
  CHECK_STR((const char *)shale_column_text(st, 3), "text");
  shale_finalize(st);
  shale_close(s);
}
