/*
 * func_core.c -- the core scalar functions that are about values rather than
 * text: abs, typeof, coalesce/ifnull/iif/nullif, scalar min/max, likelihood
 * and friends, random/randomblob/zeroblob, hex, connection counters and
 * sqlite_version.
 *
 * Owns the func_core_defs table.
 *
 * Invariants:
 *  1. Each function reads its arguments with SQLite's implicit conversions
 *     (record.h casts) and never modifies them.
 *  2. Scalar min/max return NULL as soon as any argument is NULL, and pick
 *     ties the way SQLite does: min the later argument, max the earlier.
 */
#include <string.h>

#include "func_int.h"

static void abs_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue *v = &argv[0];
  switch (v->type) {
    case SHALE_NULL:
      func_result_null(ctx);
      return;
    case SHALE_INTEGER:
      if (v->i < 0) {
        if (v->i == INT64_MIN) {
          func_result_error(ctx, "integer overflow", -1);
          return;
        }
        func_result_int(ctx, -v->i);
      } else {
        func_result_int(ctx, v->i);
      }
      return;
    default: {
      double r = record_value_double(v);
      func_result_real(ctx, r < 0 ? -r : r);
    }
  }
}

static void typeof_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  static const char *const names[] = {"", "integer", "real", "text", "blob", "null"};
  int t = argv[0].type;
  func_result_text(ctx, names[t >= 1 && t <= 5 ? t : 5], -1, FUNC_STATIC);
}

static void coalesce_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  for (int i = 0; i < argc; i++) {
    if (argv[i].type != SHALE_NULL) {
      func_result_value(ctx, &argv[i]);
      return;
    }
  }
  func_result_null(ctx);
}

static void iif_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_value(ctx, record_value_is_true(&argv[0], 0) ? &argv[1] : &argv[2]);
}

static void nullif_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  if (record_value_compare(&argv[0], &argv[1], ctx->coll) != 0)
    func_result_value(ctx, &argv[0]);
  else
    func_result_null(ctx);
}

/* First argument unchanged (likelihood/likely/unlikely are planner hints). */
static void identity_fn(FuncCtx *ctx, int argc, ShValue *argv) { func_result_value(ctx, &argv[0]); }

static void minmax_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int want_max = func_user_data(ctx) != NULL;
  int best = 0;
  for (int i = 0; i < argc; i++) {
    if (argv[i].type == SHALE_NULL) {
      func_result_null(ctx);
      return;
    }
  }
  for (int i = 1; i < argc; i++) {
    int c = record_value_compare(&argv[best], &argv[i], ctx->coll);
    if (want_max ? c < 0 : c >= 0) best = i;
  }
  func_result_value(ctx, &argv[best]);
}

static void random_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int64_t r;
  util_random(&r, sizeof(r));
  if (r < 0) r = -(r & INT64_MAX); /* never INT64_MIN's negation */
  func_result_int(ctx, r);
}

static void randomblob_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int64_t n = record_value_int64(&argv[0]);
  if (n < 1) n = 1;
  if (n > func_max_length(ctx)) {
    func_result_error_toobig(ctx);
    return;
  }
  unsigned char *p = shale_malloc((size_t)n + 1);
  if (!p) {
    func_result_error_nomem(ctx);
    return;
  }
  util_random(p, (int)n);
  func_result_blob(ctx, p, n, FUNC_OWNED);
}

static void zeroblob_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int64_t n = record_value_int64(&argv[0]);
  func_result_zeroblob(ctx, n < 0 ? 0 : n);
}

static void hex_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  static const char digits[] = "0123456789ABCDEF";
  char buf[32];
  const char *z;
  uint32_t n;
  func_arg_text(&argv[0], buf, &z, &n);
  if ((int64_t)n * 2 + 1 > func_max_length(ctx)) { /* SQLite sizes n*2+1 bytes */
    func_result_error_toobig(ctx);
    return;
  }
  char *out = shale_malloc((size_t)n * 2 + 1);
  if (!out) {
    func_result_error_nomem(ctx);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)z[i];
    out[2 * i] = digits[c >> 4];
    out[2 * i + 1] = digits[c & 15];
  }
  out[2 * (size_t)n] = 0;
  func_result_text(ctx, out, (int64_t)n * 2, FUNC_OWNED);
}

static int64_t counter(FuncCtx *ctx, int which) {
  if (!ctx->cb) return 0;
  int64_t (*f)(void *) = which == 0   ? ctx->cb->last_insert_rowid
                         : which == 1 ? ctx->cb->changes
                                      : ctx->cb->total_changes;
  return f ? f(ctx->conn) : 0;
}
static void last_insert_rowid_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_int(ctx, counter(ctx, 0));
}
static void changes_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_int(ctx, counter(ctx, 1));
}
static void total_changes_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_int(ctx, counter(ctx, 2));
}

static void version_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_text(ctx, "3.40.1", -1, FUNC_STATIC);
}

/* sqlite_source_id(): SQLite's shape ("date time check-in"), naming Shale's
 * build instead of a SQLite check-in. */
static void source_id_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  func_result_text(ctx, FUNC_SOURCE_ID, -1, FUNC_STATIC);
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
#define S(nm, na, fl, fn) \
  { .name = nm, .nargs = na, .flags = fl, .scalar = fn }

const FuncDef func_core_defs[] = {
    S("abs", 1, DET, abs_fn),
    S("typeof", 1, DET, typeof_fn),
    {.name = "coalesce",
     .nargs = -1,
     .nargs_min = 2,
     .flags = DET | FUNC_INLINE,
     .scalar = coalesce_fn},
    S("ifnull", 2, DET | FUNC_INLINE, coalesce_fn),
    S("iif", 3, DET | FUNC_INLINE, iif_fn),
    S("nullif", 2, DET | FUNC_NEEDCOLL, nullif_fn),
    S("likelihood", 2, DET | FUNC_INLINE | FUNC_UNLIKELY, identity_fn),
    S("likely", 1, DET | FUNC_INLINE | FUNC_UNLIKELY, identity_fn),
    S("unlikely", 1, DET | FUNC_INLINE | FUNC_UNLIKELY, identity_fn),
    {.name = "min",
     .nargs = -1,
     .nargs_min = 2,
     .flags = DET | FUNC_NEEDCOLL,
     .scalar = minmax_fn,
     .user_data = NULL},
    {.name = "max",
     .nargs = -1,
     .nargs_min = 2,
     .flags = DET | FUNC_NEEDCOLL,
     .scalar = minmax_fn,
     .user_data = (void *)1},
    S("random", 0, FUNC_BUILTIN, random_fn),
    S("randomblob", 1, FUNC_BUILTIN, randomblob_fn),
    S("zeroblob", 1, DET, zeroblob_fn),
    S("hex", 1, DET, hex_fn),
    S("last_insert_rowid", 0, FUNC_BUILTIN | FUNC_SLOWCHANGE, last_insert_rowid_fn),
    S("changes", 0, FUNC_BUILTIN | FUNC_SLOWCHANGE, changes_fn),
    S("total_changes", 0, FUNC_BUILTIN | FUNC_SLOWCHANGE, total_changes_fn),
    S("sqlite_version", 0, DET | FUNC_CONSTANT, version_fn),
    S("sqlite_source_id", 0, DET | FUNC_CONSTANT, source_id_fn),
};
const int func_core_ndefs = (int)(sizeof(func_core_defs) / sizeof(func_core_defs[0]));
