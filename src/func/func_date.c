/*
 * func_date.c -- the date and time functions of SQLite 3.40.1: date, time,
 * datetime, julianday, unixepoch, strftime and current_date / current_time /
 * current_timestamp, with every time-value format and modifier 3.40.1
 * accepts (written from the documented semantics at
 * https://sqlite.org/lang_datefunc.html and the reference's answers).
 *
 * Owns the func_date_defs table.
 *
 * A time value is held as a DateTime: a Julian day number in milliseconds
 * (jd) and/or broken-down fields (Y-M-D, h:m:s), each with a validity flag;
 * the other form is computed on demand.
 *
 * Invariants:
 *  1. Every function returns NULL for an invalid time value, an unknown or
 *     misplaced modifier, or a result outside 0000-01-01..9999-12-31 (Julian
 *     day 0..5373484.5); never an error except "local time unavailable".
 *  2. 'now' is read once per VM step (FuncCtx.now_ms caches it), so every
 *     call in one step sees the same instant; without a cache the clock is
 *     read for each call.
 *  3. The computations use the same integer arithmetic and rounding as
 *     SQLite (milliseconds, truncating divisions), so results agree to the
 *     millisecond, including dates SQLite leaves unnormalized (2021-02-31).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "func_int.h"

typedef struct DateTime {
  int64_t jd;  /* Julian day number times 86400000 */
  int Y, M, D; /* year, month, day */
  int h, m;    /* hour, minute */
  int tz;      /* timezone offset in minutes */
  double s;    /* seconds (with fraction); a raw number when raw_s */
  char valid_jd, raw_s, valid_ymd, valid_hms, valid_tz, tz_set, is_error;
} DateTime;

#define JD_MAX INT64_C(464269060799999) /* 9999-12-31 23:59:59.999 */

static int valid_jd(int64_t jd) { return jd >= 0 && jd <= JD_MAX; }

static void dt_error(DateTime *p) {
  memset(p, 0, sizeof *p);
  p->is_error = 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

/* Read fixed-width decimal fields: fmt is groups of 4 characters "N min max
 * sep" (N digits, minimum digit, max code a..f, separator or NUL for the
 * last field). Returns the number of fields read. */
static int get_digits(const char *z, const char *fmt, int *out) {
  static const int mx[] = {12, 14, 24, 31, 59, 14712};
  int cnt = 0;
  char sep;
  do {
    int n = fmt[0] - '0', mn = fmt[1] - '0', max = mx[fmt[2] - 'a'], val = 0;
    sep = fmt[3];
    while (n--) {
      if (!is_digit(*z)) return cnt;
      val = val * 10 + *z++ - '0';
    }
    if (val < mn || val > max || (sep && sep != *z)) return cnt;
    out[cnt++] = val;
    z++;
    fmt += 4;
  } while (sep);
  return cnt;
}

/* [+-]HH:MM or Z after a time; 0 when the rest of z is (empty or) a zone. */
static int parse_tz(const char *z, DateTime *p) {
  int sgn, f[2];
  while (is_space(*z)) z++;
  p->tz = 0;
  char c = *z;
  if (c == '-') {
    sgn = -1;
  } else if (c == '+') {
    sgn = 1;
  } else if (c == 'Z' || c == 'z') {
    z++;
    goto zulu;
  } else {
    return c != 0;
  }
  z++;
  if (get_digits(z, "20b:20e", f) != 2) return 1;
  z += 5;
  p->tz = sgn * (f[1] + f[0] * 60);
zulu:
  while (is_space(*z)) z++;
  p->tz_set = 1;
  return *z != 0;
}

/* HH:MM[:SS[.FFF...]] [zone]; 0 on success. */
static int parse_hms(const char *z, DateTime *p) {
  int f[2], sec;
  double ms = 0.0;
  if (get_digits(z, "20c:20e", f) != 2) return 1;
  z += 5;
  if (*z == ':') {
    z++;
    if (get_digits(z, "20e", &sec) != 1) return 1;
    z += 2;
    if (*z == '.' && is_digit(z[1])) {
      double scale = 1.0;
      z++;
      while (is_digit(*z)) {
        ms = ms * 10.0 + *z - '0';
        scale *= 10.0;
        z++;
      }
      ms /= scale;
    }
  } else {
    sec = 0;
  }
  p->valid_jd = 0;
  p->raw_s = 0;
  p->valid_hms = 1;
  p->h = f[0];
  p->m = f[1];
  p->s = sec + ms;
  if (parse_tz(z, p)) return 1;
  p->valid_tz = p->tz != 0;
  return 0;
}

static void compute_jd(DateTime *p) {
  int Y, M, D;
  if (p->valid_jd) return;
  if (p->valid_ymd) {
    Y = p->Y;
    M = p->M;
    D = p->D;
  } else {
    Y = 2000;
    M = 1;
    D = 1;
  }
  if (Y < -4713 || Y > 9999 || p->raw_s) {
    dt_error(p);
    return;
  }
  if (M <= 2) {
    Y--;
    M += 12;
  }
  int A = Y / 100, B = 2 - A + (A / 4);
  int X1 = 36525 * (Y + 4716) / 100, X2 = 306001 * (M + 1) / 10000;
  p->jd = (int64_t)((X1 + X2 + D + B - 1524.5) * 86400000);
  p->valid_jd = 1;
  if (p->valid_hms) {
    p->jd += p->h * 3600000 + p->m * 60000 + (int64_t)(p->s * 1000 + 0.5);
    if (p->valid_tz) {
      p->jd -= p->tz * 60000;
      p->valid_ymd = p->valid_hms = p->valid_tz = 0;
    }
  }
}

/* [-]YYYY-MM-DD [T] [time]; 0 on success. */
static int parse_ymd(const char *z, DateTime *p) {
  int f[3], neg = 0;
  if (z[0] == '-') {
    z++;
    neg = 1;
  }
  if (get_digits(z, "40f-21a-21d", f) != 3) return 1;
  z += 10;
  while (is_space(*z) || *z == 'T') z++;
  if (parse_hms(z, p) == 0) {
    /* date and time */
  } else if (*z == 0) {
    p->valid_hms = 0;
  } else {
    return 1;
  }
  p->valid_jd = 0;
  p->valid_ymd = 1;
  p->Y = neg ? -f[0] : f[0];
  p->M = f[1];
  p->D = f[2];
  if (p->valid_tz) compute_jd(p);
  return 0;
}

static void set_raw_number(DateTime *p, double r) {
  p->s = r;
  p->raw_s = 1;
  if (r >= 0.0 && r < 5373484.5) {
    p->jd = (int64_t)(r * 86400000.0 + 0.5);
    p->valid_jd = 1;
  }
}

/* 1 (with the error raised) when the call is in a CHECK constraint, a
 * generated column or an index (FuncCtx.pure), where the current time and
 * the time zone may not be used, as SQLite's sqlite3NotPureFunc. */
static int not_pure(FuncCtx *ctx) {
  static const char *const where[] = {"", "a CHECK constraint", "a generated column", "an index"};
  if (!ctx->pure || ctx->pure > 3) return 0;
  char buf[128];
  int n = snprintf(buf, sizeof buf, "non-deterministic use of %s() in %s",
                   ctx->def && ctx->def->name ? ctx->def->name : "", where[ctx->pure]);
  func_result_error(ctx, buf, n);
  return 1;
}

/* The current time as a Julian day in ms: cached per VM step. */
static int set_now(FuncCtx *ctx, DateTime *p) {
  if (not_pure(ctx)) return 1;
  int64_t t = ctx->now_ms ? *ctx->now_ms : 0;
  if (t == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    t = INT64_C(210866760000000) + (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (ctx->now_ms) *ctx->now_ms = t;
  }
  p->jd = t;
  p->valid_jd = 1;
  return 0;
}

static int parse_date_or_time(FuncCtx *ctx, const char *z, int n, DateTime *p) {
  double r;
  if (parse_ymd(z, p) == 0) return 0;
  if (parse_hms(z, p) == 0) return 0;
  if (n == 3 && lower(z[0]) == 'n' && lower(z[1]) == 'o' && lower(z[2]) == 'w')
    return set_now(ctx, p);
  if (record_value_text_to_real(z, n, &r) > 0) {
    set_raw_number(p, r);
    return 0;
  }
  return 1;
}

static void compute_ymd(DateTime *p) {
  if (p->valid_ymd) return;
  if (!p->valid_jd) {
    p->Y = 2000;
    p->M = 1;
    p->D = 1;
  } else if (!valid_jd(p->jd)) {
    dt_error(p);
    return;
  } else {
    int Z = (int)((p->jd + 43200000) / 86400000);
    int A = (int)((Z - 1867216.25) / 36524.25);
    A = Z + 1 + A - (A / 4);
    int B = A + 1524;
    int C = (int)((B - 122.1) / 365.25);
    int D = (36525 * (C & 32767)) / 100;
    int E = (int)((B - D) / 30.6001);
    int X1 = (int)(30.6001 * E);
    p->D = B - D - X1;
    p->M = E < 14 ? E - 1 : E - 13;
    p->Y = p->M > 2 ? C - 4716 : C - 4715;
  }
  p->valid_ymd = 1;
}

static void compute_hms(DateTime *p) {
  if (p->valid_hms) return;
  compute_jd(p);
  int s = (int)((p->jd + 43200000) % 86400000);
  p->s = s / 1000.0;
  s = (int)p->s;
  p->s -= s;
  p->h = s / 3600;
  s -= p->h * 3600;
  p->m = s / 60;
  p->s += s - p->m * 60;
  p->raw_s = 0;
  p->valid_hms = 1;
}

static void compute_ymd_hms(DateTime *p) {
  compute_ymd(p);
  compute_hms(p);
}

static void clear_ymd_hms_tz(DateTime *p) { p->valid_ymd = p->valid_hms = p->valid_tz = 0; }

/* Turn the UTC time p into local time (TZ rules, localtime_r). Outside
 * 1970-01-01..2038-01-18 the year is mapped to one of 2000..2003 with the
 * same leap-year position, converted, and mapped back, as SQLite does.
 * SHALE_OK, or SHALE_ERROR with "local time unavailable" raised. */
static int to_localtime(DateTime *p, FuncCtx *ctx) {
  struct tm tm;
  time_t t;
  int ydiff = 0;
  memset(&tm, 0, sizeof tm);
  compute_jd(p);
  if (p->jd < INT64_C(2108667600) * 100000 || p->jd > INT64_C(2130141456) * 100000) {
    DateTime x = *p;
    compute_ymd_hms(&x);
    ydiff = (2000 + x.Y % 4) - x.Y;
    x.Y += ydiff;
    x.valid_jd = 0;
    compute_jd(&x);
    t = (time_t)(x.jd / 1000 - INT64_C(210866760000));
  } else {
    t = (time_t)(p->jd / 1000 - INT64_C(210866760000));
  }
  if (!localtime_r(&t, &tm)) {
    func_result_error(ctx, "local time unavailable", -1);
    return SHALE_ERROR;
  }
  p->Y = tm.tm_year + 1900 - ydiff;
  p->M = tm.tm_mon + 1;
  p->D = tm.tm_mday;
  p->h = tm.tm_hour;
  p->m = tm.tm_min;
  p->s = tm.tm_sec + (double)(p->jd % 1000) * 0.001;
  p->valid_ymd = p->valid_hms = 1;
  p->valid_jd = p->raw_s = p->valid_tz = p->is_error = 0;
  return SHALE_OK;
}

static const struct {
  int nname;
  const char *name;
  double limit, xform; /* |N| below limit; seconds per unit */
} xform_types[] = {
    {6, "second", 4.6427e+14, 1.0},    {6, "minute", 7.7379e+12, 60.0},
    {4, "hour", 1.2897e+11, 3600.0},   {3, "day", 5373485.0, 86400.0},
    {5, "month", 176546.0, 2592000.0}, {4, "year", 14713.0, 31536000.0},
};

/* Apply modifier z[0..n) (argument index idx, 1-based) to p; 0 on success.
 * *err is set when an error result was raised. */
static int parse_modifier(FuncCtx *ctx, const char *z, int n, DateTime *p, int idx) {
  int rc = 1;
  double r;
  char buf[32];
  /* the modifiers compare as C strings: stop at a NUL */
  n = (int)func_cstr_len(z, (uint32_t)n);
  if (n == 0) return 1;
  int nb = n < (int)sizeof buf - 1 ? n : (int)sizeof buf - 1;
  for (int i = 0; i < nb; i++) buf[i] = lower(z[i]);
  buf[nb] = 0;
  int exact = n == nb; /* buf holds all of z */
  switch (buf[0]) {
    case 'a':
      if (exact && strcmp(buf, "auto") == 0) {
        if (idx > 1) return 1;
        if (!p->raw_s || p->valid_jd) {
          rc = 0;
          p->raw_s = 0;
        } else if (p->s >= -210866760000.0 && p->s <= 253402300799.0) {
          r = p->s * 1000.0 + 210866760000000.0;
          clear_ymd_hms_tz(p);
          p->jd = (int64_t)(r + 0.5);
          p->valid_jd = 1;
          p->raw_s = 0;
          rc = 0;
        }
      }
      break;
    case 'j':
      if (exact && strcmp(buf, "julianday") == 0) {
        if (idx > 1) return 1;
        if (p->valid_jd && p->raw_s) {
          rc = 0;
          p->raw_s = 0;
        }
      }
      break;
    case 'l':
      if (exact && strcmp(buf, "localtime") == 0) rc = not_pure(ctx) ? 1 : to_localtime(p, ctx);
      break;
    case 'u':
      if (exact && strcmp(buf, "unixepoch") == 0 && p->raw_s) {
        if (idx > 1) return 1;
        r = p->s * 1000.0 + 210866760000000.0;
        if (r >= 0.0 && r < 464269060800000.0) {
          clear_ymd_hms_tz(p);
          p->jd = (int64_t)(r + 0.5);
          p->valid_jd = 1;
          p->raw_s = 0;
          rc = 0;
        }
      } else if (exact && strcmp(buf, "utc") == 0) {
        if (not_pure(ctx)) return 1;
        if (!p->tz_set) {
          /* guess the UTC time whose local time is p, correcting up to 3 times */
          compute_jd(p);
          int64_t orig = p->jd, guess = p->jd, err = 0;
          int cnt = 0;
          do {
            DateTime nw;
            memset(&nw, 0, sizeof nw);
            guess -= err;
            nw.jd = guess;
            nw.valid_jd = 1;
            if (to_localtime(&nw, ctx)) return 1;
            compute_jd(&nw);
            err = nw.jd - orig;
          } while (err && cnt++ < 3);
          memset(p, 0, sizeof *p);
          p->jd = guess;
          p->valid_jd = 1;
          p->tz_set = 1;
        }
        rc = 0;
      }
      break;
    case 'w':
      if (n > 8 && strncmp(buf, "weekday ", 8) == 0) {
        int k;
        if (record_value_text_to_real(z + 8, n - 8, &r) > 0 && (k = (int)r) == r && k >= 0 &&
            r < 7) {
          compute_ymd_hms(p);
          p->valid_tz = 0;
          p->valid_jd = 0;
          compute_jd(p);
          int64_t Z = ((p->jd + 129600000) / 86400000) % 7;
          if (Z > k) Z -= 7;
          p->jd += (k - Z) * 86400000;
          clear_ymd_hms_tz(p);
          rc = 0;
        }
      }
      break;
    case 's': {
      if (n < 9 || strncmp(buf, "start of ", 9) != 0) break;
      if (!p->valid_jd && !p->valid_ymd && !p->valid_hms) break;
      compute_ymd(p);
      p->valid_hms = 1;
      p->h = p->m = 0;
      p->s = 0.0;
      p->raw_s = 0;
      p->valid_tz = 0;
      p->valid_jd = 0;
      if (!exact) break;
      if (strcmp(buf + 9, "month") == 0) {
        p->D = 1;
        rc = 0;
      } else if (strcmp(buf + 9, "year") == 0) {
        p->M = 1;
        p->D = 1;
        rc = 0;
      } else if (strcmp(buf + 9, "day") == 0) {
        rc = 0;
      }
      break;
    }
    case '+':
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
      int k;
      for (k = 1; k < n && z[k] != ':' && !is_space(z[k]); k++) {
      }
      if (record_value_text_to_real(z, k, &r) <= 0) return 1;
      if (k < n && z[k] == ':') {
        /* (+|-)HH:MM[:SS[.FFF]]: add or subtract that much time */
        const char *z2 = z;
        DateTime tx;
        char tbuf[64];
        if (!is_digit(*z2)) z2++;
        int len = n - (int)(z2 - z);
        if (len >= (int)sizeof tbuf) break;
        memcpy(tbuf, z2, (size_t)len);
        tbuf[len] = 0;
        memset(&tx, 0, sizeof tx);
        if (parse_hms(tbuf, &tx)) break;
        compute_jd(&tx);
        tx.jd -= 43200000;
        int64_t day = tx.jd / 86400000;
        tx.jd -= day * 86400000;
        if (z[0] == '-') tx.jd = -tx.jd;
        compute_jd(p);
        clear_ymd_hms_tz(p);
        p->jd += tx.jd;
        rc = 0;
        break;
      }
      /* NNN units */
      const char *u = z + k;
      while (u < z + n && is_space(*u)) u++;
      int un = n - (int)(u - z);
      if (un > 10 || un < 3) break;
      if (lower(u[un - 1]) == 's') un--;
      compute_jd(p);
      rc = 1;
      double rounder = r < 0 ? -0.5 : 0.5;
      for (int i = 0; i < (int)(sizeof xform_types / sizeof xform_types[0]); i++) {
        if (xform_types[i].nname != un || util_strnicmp(xform_types[i].name, u, (size_t)un) != 0 ||
            !(r > -xform_types[i].limit && r < xform_types[i].limit))
          continue;
        if (i == 4) { /* months */
          compute_ymd_hms(p);
          p->M += (int)r;
          int x = p->M > 0 ? (p->M - 1) / 12 : (p->M - 12) / 12;
          p->Y += x;
          p->M -= x * 12;
          p->valid_jd = 0;
          r -= (int)r;
        } else if (i == 5) { /* years */
          compute_ymd_hms(p);
          p->Y += (int)r;
          p->valid_jd = 0;
          r -= (int)r;
        }
        compute_jd(p);
        p->jd += (int64_t)(r * 1000.0 * xform_types[i].xform + rounder);
        rc = 0;
        break;
      }
      clear_ymd_hms_tz(p);
      break;
    }
    default:
      break;
  }
  return rc;
}

/* Parse the time value and modifiers; 0 when p holds a valid time. */
static int is_date(FuncCtx *ctx, int argc, ShValue *argv, DateTime *p) {
  char nbuf[32];
  const char *z;
  uint32_t n;
  memset(p, 0, sizeof *p);
  if (argc == 0) return set_now(ctx, p);
  int t = argv[0].type;
  if (t == SHALE_FLOAT || t == SHALE_INTEGER) {
    set_raw_number(p, record_value_double(&argv[0]));
  } else {
    if (t == SHALE_NULL) return 1;
    func_arg_text(&argv[0], nbuf, &z, &n);
    /* the parsers read a C string: copy (up to a NUL) */
    n = func_cstr_len(z, n);
    char stack[128];
    char *s = n < sizeof stack ? stack : shale_malloc((size_t)n + 1);
    if (!s) {
      func_result_error_nomem(ctx);
      return 1;
    }
    if (n) memcpy(s, z, n);
    s[n] = 0;
    int bad = parse_date_or_time(ctx, s, (int)n, p);
    if (s != stack) shale_free(s);
    if (bad) return 1;
  }
  for (int i = 1; i < argc; i++) {
    if (argv[i].type == SHALE_NULL) return 1;
    func_arg_text(&argv[i], nbuf, &z, &n);
    if (parse_modifier(ctx, z, (int)n, p, i)) return 1;
  }
  compute_jd(p);
  if (p->is_error || !valid_jd(p->jd)) return 1;
  return 0;
}

/* "YYYY" with SQLite's printf("%04d") sign handling: -0471. */
static int put_year(char *out, int Y) {
  return Y < 0 ? sprintf(out, "-%04d", -Y) : sprintf(out, "%04d", Y);
}

static void julianday_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  if (is_date(ctx, argc, argv, &x) == 0) func_result_real(ctx, (double)x.jd / 86400000.0);
}

static void unixepoch_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  if (is_date(ctx, argc, argv, &x) == 0) func_result_int(ctx, x.jd / 1000 - INT64_C(210866760000));
}

static void datetime_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  char buf[64];
  if (is_date(ctx, argc, argv, &x)) return;
  compute_ymd_hms(&x);
  int k = put_year(buf, x.Y);
  snprintf(buf + k, sizeof buf - (size_t)k, "-%02d-%02d %02d:%02d:%02d", x.M, x.D, x.h, x.m,
           (int)x.s);
  func_result_text(ctx, buf, -1, FUNC_TRANSIENT);
}

static void time_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  char buf[32];
  if (is_date(ctx, argc, argv, &x)) return;
  compute_hms(&x);
  snprintf(buf, sizeof buf, "%02d:%02d:%02d", x.h, x.m, (int)x.s);
  func_result_text(ctx, buf, -1, FUNC_TRANSIENT);
}

static void date_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  char buf[32];
  if (is_date(ctx, argc, argv, &x)) return;
  compute_ymd(&x);
  int k = put_year(buf, x.Y);
  snprintf(buf + k, sizeof buf - (size_t)k, "-%02d-%02d", x.M, x.D);
  func_result_text(ctx, buf, -1, FUNC_TRANSIENT);
}

/* One real through SQLite's printf (exact rounding of %.3f / %.16g). */
static void sb_printf_real(StrBuf *b, const char *fmt, double r) {
  ShValue v;
  char *out = NULL;
  int64_t nout = 0;
  value_set_real(&v, r);
  int rc = func_printf(fmt, (int)strlen(fmt), 1, &v, b->max, &out, &nout);
  if (rc) {
    if (!b->err) b->err = rc;
    return;
  }
  strbuf_append(b, out, nout);
  shale_free(out);
}

static void strftime_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  DateTime x;
  char nbuf[32], tmp[40];
  const char *fmt;
  uint32_t nfmt;
  if (argc == 0 || argv[0].type == SHALE_NULL) return;
  func_arg_text(&argv[0], nbuf, &fmt, &nfmt);
  nfmt = func_cstr_len(fmt, nfmt);
  for (uint32_t i = 0; i < nfmt; i++) {
    if (fmt[i] != '%') continue;
    char c = i + 1 < nfmt ? fmt[i + 1] : 0;
    if (!c || !strchr("dHmMSWwfjYsJ%", c)) return; /* unknown conversion: NULL */
    i++;
  }
  /* the format is copied first: the time value may reuse the buffer */
  char *f = shale_malloc((size_t)nfmt + 1);
  if (!f) {
    func_result_error_nomem(ctx);
    return;
  }
  memcpy(f, fmt, nfmt);
  f[nfmt] = 0;
  if (is_date(ctx, argc - 1, argv + 1, &x)) {
    shale_free(f);
    return;
  }
  compute_jd(&x);
  compute_ymd_hms(&x);
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  for (uint32_t i = 0; i < nfmt; i++) {
    if (f[i] != '%') {
      uint32_t j = i;
      while (j < nfmt && f[j] != '%') j++;
      strbuf_append(&b, f + i, j - i);
      i = j - 1;
      continue;
    }
    i++;
    int k = 0;
    switch (f[i]) {
      case 'd':
        k = sprintf(tmp, "%02d", x.D);
        break;
      case 'f': {
        double s = x.s > 59.999 ? 59.999 : x.s;
        sb_printf_real(&b, "%06.3f", s);
        break;
      }
      case 'H':
        k = sprintf(tmp, "%02d", x.h);
        break;
      case 'W':
      case 'j': {
        DateTime y = x;
        y.valid_jd = 0;
        y.M = 1;
        y.D = 1;
        compute_jd(&y);
        int nday = (int)((x.jd - y.jd + 43200000) / 86400000);
        if (f[i] == 'W') {
          int wd = (int)(((x.jd + 43200000) / 86400000) % 7);
          k = sprintf(tmp, "%02d", (nday + 7 - wd) / 7);
        } else {
          k = sprintf(tmp, "%03d", nday + 1);
        }
        break;
      }
      case 'J':
        sb_printf_real(&b, "%.16g", (double)x.jd / 86400000.0);
        break;
      case 'm':
        k = sprintf(tmp, "%02d", x.M);
        break;
      case 'M':
        k = sprintf(tmp, "%02d", x.m);
        break;
      case 's':
        k = record_int_to_text(x.jd / 1000 - INT64_C(210866760000), tmp);
        break;
      case 'S':
        k = sprintf(tmp, "%02d", (int)x.s);
        break;
      case 'w':
        tmp[0] = (char)(((x.jd + 129600000) / 86400000) % 7 + '0');
        k = 1;
        break;
      case 'Y':
        k = sprintf(tmp, "%04d", x.Y); /* -0471 is -471 here, unlike date() */
        break;
      default:
        tmp[0] = '%';
        k = 1;
        break;
    }
    if (k) strbuf_append(&b, tmp, k);
  }
  shale_free(f);
  int err = b.err;
  char *out = strbuf_finish(&b);
  if (!out) {
    func_result_sb_error(ctx, err);
    return;
  }
  func_result_text(ctx, out, -1, FUNC_OWNED);
}

static void ctime_fn(FuncCtx *ctx, int argc, ShValue *argv) { time_fn(ctx, 0, NULL); }
static void ctimestamp_fn(FuncCtx *ctx, int argc, ShValue *argv) { datetime_fn(ctx, 0, NULL); }
static void cdate_fn(FuncCtx *ctx, int argc, ShValue *argv) { date_fn(ctx, 0, NULL); }

/* Deterministic, as SQLite marks them: a call with constant arguments is
 * computed once per statement run ('now' then stays fixed for the run). */
#define DT (FUNC_DETERMINISTIC | FUNC_BUILTIN)
#define V(nm, fn) \
  { .name = nm, .nargs = -1, .flags = DT, .scalar = fn }
#define Z(nm, fn) \
  { .name = nm, .nargs = 0, .flags = DT, .scalar = fn }

const FuncDef func_date_defs[] = {
    V("julianday", julianday_fn), V("unixepoch", unixepoch_fn),
    V("date", date_fn),           V("time", time_fn),
    V("datetime", datetime_fn),   V("strftime", strftime_fn),
    Z("current_time", ctime_fn),  Z("current_timestamp", ctimestamp_fn),
    Z("current_date", cdate_fn),
};
const int func_date_ndefs = (int)(sizeof func_date_defs / sizeof func_date_defs[0]);
