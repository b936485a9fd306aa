/*
 * func_math.c -- numeric functions: round, sign, and SQLite's math extension
 * (ENABLE_MATH_FUNCTIONS): trigonometry, exponentials and logarithms,
 * ceil/floor/trunc, mod, pow, pi, degrees/radians.
 *
 * Owns the func_math_defs table.
 *
 * Invariants:
 *  1. Arguments go through record_value_numeric_type on a copy: only text that is
 *     entirely a number takes part; other text and blobs give NULL.
 *  2. A NaN result becomes NULL (func_result_real), so domain errors such as
 *     sqrt(-1) or acos(2) are NULL; infinities are returned as reals.
 *  3. Logarithms are computed as SQLite does (log(x)/M_LN10 for log10, not
 *     log10(x)) so that the last bit matches.
 */
#include <math.h>

#include "func_int.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_LN10
#define M_LN10 2.30258509299404568402
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif

/* The numeric type of argument v (a copy is converted); sets *r. */
static int num_arg(const ShValue *v, ShValue *copy) {
  *copy = *v;
  copy->flags = 0; /* borrowed view: record_value_numeric_type never frees it */
  return record_value_numeric_type(copy);
}
static inline int is_num(int t) { return t == SHALE_INTEGER || t == SHALE_FLOAT; }

typedef double (*Math1)(double);
typedef double (*Math2)(double, double);

static void math1_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue c;
  if (!is_num(num_arg(&argv[0], &c))) {
    func_result_null(ctx);
    return;
  }
  Math1 f = (Math1)func_user_data(ctx);
  func_result_real(ctx, f(record_value_double(&c)));
}

static void math2_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue a, b;
  if (!is_num(num_arg(&argv[0], &a)) || !is_num(num_arg(&argv[1], &b))) {
    func_result_null(ctx);
    return;
  }
  Math2 f = (Math2)func_user_data(ctx);
  func_result_real(ctx, f(record_value_double(&a), record_value_double(&b)));
}

/* ceil, floor, trunc: integers pass through unchanged. */
static void ceiling_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue c;
  switch (num_arg(&argv[0], &c)) {
    case SHALE_INTEGER:
      func_result_int(ctx, c.i);
      return;
    case SHALE_FLOAT: {
      Math1 f = (Math1)func_user_data(ctx);
      func_result_real(ctx, f(c.r));
      return;
    }
    default:
      func_result_null(ctx);
  }
}

/* log(x), ln, log10, log2, and log(b, x); user_data 0 = ln, 1 = base 10,
 * 2 = base 2. */
static void log_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue c;
  double x, b, ans;
  if (!is_num(num_arg(&argv[0], &c))) goto null;
  x = record_value_double(&c);
  if (x <= 0.0) goto null;
  if (argc == 2) {
    /* SQLite checks the first argument's type again here, not the second. */
    b = log(x);
    if (b <= 0.0) goto null;
    x = record_value_double(&argv[1]);
    if (x <= 0.0) goto null;
    ans = log(x) / b;
  } else {
    ans = log(x);
    switch ((int)(intptr_t)func_user_data(ctx)) {
      case 1:
        ans /= M_LN10;
        break;
      case 2:
        ans /= M_LN2;
        break;
      default:
        break;
    }
  }
  func_result_real(ctx, ans);
  return;
null:
  func_result_null(ctx);
}

static void pi_fn(FuncCtx *ctx, int argc, ShValue *argv) { func_result_real(ctx, M_PI); }

static double deg2rad(double x) { return x * (M_PI / 180.0); }
static double rad2deg(double x) { return x * (180.0 / M_PI); }

static void sign_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue c;
  if (!is_num(num_arg(&argv[0], &c))) {
    func_result_null(ctx);
    return;
  }
  double x = record_value_double(&c);
  func_result_int(ctx, x < 0.0 ? -1 : x > 0.0 ? 1 : 0);
}

static void round_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int64_t n = 0;
  if (argc == 2) {
    if (argv[1].type == SHALE_NULL) {
      func_result_null(ctx);
      return;
    }
    n = (int32_t)(uint32_t)record_value_int64(&argv[1]);
    if (n > 30) n = 30;
    if (n < 0) n = 0;
  }
  if (argv[0].type == SHALE_NULL) {
    func_result_null(ctx);
    return;
  }
  double r = record_value_double(&argv[0]);
  if (r < -4503599627370496.0 || r > 4503599627370496.0) {
    /* already integral */
  } else if (n == 0) {
    r = (double)(int64_t)(r + (r < 0 ? -0.5 : 0.5));
  } else {
    /* SQLite prints with "%.*f" (16 significant digits) and reads it back. */
    ShValue args[2];
    value_set_int(&args[0], n);
    value_set_real(&args[1], r);
    char *out;
    int64_t len;
    int rc = func_printf("%.*f", 4, 2, args, func_max_length(ctx), &out, &len);
    if (rc) {
      func_result_sb_error(ctx, rc);
      return;
    }
    record_value_text_to_real(out, (int)len, &r);
    shale_free(out);
  }
  func_result_real(ctx, r);
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
#define M1(nm, f) \
  { .name = nm, .nargs = 1, .flags = DET, .scalar = math1_fn, .user_data = (void *)f }
#define M2(nm, f) \
  { .name = nm, .nargs = 2, .flags = DET, .scalar = math2_fn, .user_data = (void *)f }
#define C1(nm, f) \
  { .name = nm, .nargs = 1, .flags = DET, .scalar = ceiling_fn, .user_data = (void *)f }
#define L(nm, na, k) \
  { .name = nm, .nargs = na, .flags = DET, .scalar = log_fn, .user_data = (void *)k }

const FuncDef func_math_defs[] = {
    {.name = "round", .nargs = 1, .flags = DET, .scalar = round_fn},
    {.name = "round", .nargs = 2, .flags = DET, .scalar = round_fn},
    {.name = "sign", .nargs = 1, .flags = DET, .scalar = sign_fn},
    C1("ceil", ceil),
    C1("ceiling", ceil),
    C1("floor", floor),
    C1("trunc", trunc),
    L("ln", 1, 0),
    L("log", 1, 1),
    L("log10", 1, 1),
    L("log2", 1, 2),
    L("log", 2, 0),
    M1("exp", exp),
    M2("pow", pow),
    M2("power", pow),
    M2("mod", fmod),
    M1("acos", acos),
    M1("asin", asin),
    M1("atan", atan),
    M2("atan2", atan2),
    M1("cos", cos),
    M1("sin", sin),
    M1("tan", tan),
    M1("cosh", cosh),
    M1("sinh", sinh),
    M1("tanh", tanh),
    M1("acosh", acosh),
    M1("asinh", asinh),
    M1("atanh", atanh),
    M1("sqrt", sqrt),
    M1("radians", deg2rad),
    M1("degrees", rad2deg),
    {.name = "pi", .nargs = 0, .flags = DET, .scalar = pi_fn},
};
const int func_math_ndefs = (int)(sizeof(func_math_defs) / sizeof(func_math_defs[0]));
