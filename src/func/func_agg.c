/*
 * func_agg.c -- the built-in aggregates: count, sum, total, avg, min, max,
 * group_concat, with the value/inverse callbacks window frames need (min and
 * max have value only: a window recomputes them).
 *
 * Owns the func_agg_defs table and the layout of each aggregate's state in
 * its aggregate context.
 *
 * Invariants:
 *  1. sum keeps an exact int64 total while every input is an integer and
 *     none overflowed; any real (or non-numeric text) switches it to the
 *     double total; an integer overflow is the error "integer overflow" at
 *     final -- SQLite 3.40's arithmetic, no compensated summation.
 *  2. final frees everything the state owns (min/max's value, group_concat's
 *     buffer and separator lengths); value frees nothing.
 *  3. min/max compare with ctx->coll and keep the first of equal values.
 */
#include <string.h>

#include "func_int.h"

/* ---- count ---- */

typedef struct CountCtx {
  int64_t n;
} CountCtx;

static void count_state(void *state, int argc, ShValue *argv) {
  CountCtx *p = state;
  if (argc == 0 || argv[0].type != SHALE_NULL) p->n++;
}
static void count_step(FuncCtx *ctx, int argc, ShValue *argv) {
  CountCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (p) count_state(p, argc, argv);
}
static void count_inverse(FuncCtx *ctx, int argc, ShValue *argv) {
  CountCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (p && (argc == 0 || argv[0].type != SHALE_NULL)) p->n--;
}
static void count_final(FuncCtx *ctx) {
  CountCtx *p = func_aggregate_context(ctx, 0);
  func_result_int(ctx, p ? p->n : 0);
}

/* ---- sum, total, avg ---- */

typedef struct SumCtx {
  double rsum;
  int64_t isum;
  int64_t cnt;
  uint8_t overflow;
  uint8_t approx;
} SumCtx;

static void sum_state(void *state, int argc, ShValue *argv) {
  (void)argc;
  SumCtx *p = state;
  ShValue c = argv[0];
  c.flags = 0;
  int t = c.type == SHALE_TEXT ? record_value_numeric_type(&c) : c.type;
  if (t == SHALE_NULL) return;
  p->cnt++;
  if (t == SHALE_INTEGER) {
    int64_t v = c.i;
    p->rsum += (double)v;
    if (!p->approx && !p->overflow) {
      if (__builtin_add_overflow(p->isum, v, &p->isum)) p->approx = p->overflow = 1;
    }
  } else {
    p->rsum += record_value_double(&c);
    p->approx = 1;
  }
}
static void sum_step(FuncCtx *ctx, int argc, ShValue *argv) {
  SumCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (p) sum_state(p, argc, argv);
}

static void sum_inverse(FuncCtx *ctx, int argc, ShValue *argv) {
  SumCtx *p = func_aggregate_context(ctx, sizeof(*p));
  ShValue c = argv[0];
  c.flags = 0;
  int t = record_value_numeric_type(&c);
  if (!p || t == SHALE_NULL) return;
  p->cnt--;
  if (t == SHALE_INTEGER && !p->approx) {
    p->rsum -= (double)c.i;
    p->isum = (int64_t)((uint64_t)p->isum - (uint64_t)c.i);
  } else {
    p->rsum -= record_value_double(&c);
  }
}

static void sum_final(FuncCtx *ctx) {
  SumCtx *p = func_aggregate_context(ctx, 0);
  if (!p || p->cnt <= 0) {
    func_result_null(ctx);
  } else if (p->overflow) {
    func_result_error(ctx, "integer overflow", -1);
  } else if (p->approx) {
    func_result_real(ctx, p->rsum);
  } else {
    func_result_int(ctx, p->isum);
  }
}

static void avg_final(FuncCtx *ctx) {
  SumCtx *p = func_aggregate_context(ctx, 0);
  if (p && p->cnt > 0)
    func_result_real(ctx, p->rsum / (double)p->cnt);
  else
    func_result_null(ctx);
}

static void total_final(FuncCtx *ctx) {
  SumCtx *p = func_aggregate_context(ctx, 0);
  func_result_real(ctx, p ? p->rsum : 0.0);
}

/* ---- min, max ---- */

typedef struct MinMaxCtx {
  ShValue best;
  int has;
} MinMaxCtx;

static void minmax_step(FuncCtx *ctx, int argc, ShValue *argv) {
  MinMaxCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (!p) return;
  ShValue *v = &argv[0];
  if (v->type == SHALE_NULL) {
    if (p->has) ctx->skip_accum_load = 1;
    return;
  }
  if (p->has) {
    int want_max = func_user_data(ctx) != NULL;
    int c = record_value_compare(&p->best, v, ctx->coll);
    if (!(want_max ? c < 0 : c > 0)) {
      ctx->skip_accum_load = 1;
      return;
    }
  }
  ShValue copy = *v;
  copy.flags = 0;
  if (record_value_make_owned(&copy)) {
    func_result_error_nomem(ctx);
    return;
  }
  value_clear(&p->best);
  p->best = copy;
  p->has = 1;
}

static void minmax_value(FuncCtx *ctx) {
  MinMaxCtx *p = func_aggregate_context(ctx, 0);
  if (p && p->has)
    func_result_value(ctx, &p->best);
  else
    func_result_null(ctx);
}

static void minmax_final(FuncCtx *ctx) {
  MinMaxCtx *p = func_aggregate_context(ctx, 0);
  if (p && p->has) {
    /* Hand the owned value over instead of copying it. */
    value_clear(&ctx->result);
    ctx->result = p->best;
    value_set_null(&p->best);
    p->has = 0;
  } else {
    func_result_null(ctx);
  }
}

/* ---- group_concat ---- */

typedef struct ConcatCtx {
  StrBuf str;
  int started;    /* a value has been appended (SQLite: mxAlloc != 0) */
  int64_t naccum; /* values in the buffer */
  int first_sep;  /* separator length used so far, while all are equal */
  int *seps;      /* once lengths vary: seps[i] precedes value i+1 */
  int64_t nseps_cap;
} ConcatCtx;

static void concat_step(FuncCtx *ctx, int argc, ShValue *argv) {
  if (argv[0].type == SHALE_NULL) return;
  ConcatCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (!p) return;
  p->str.max = func_max_length(ctx);
  char sb[32], vb[32];
  const char *z;
  uint32_t n;
  if (argc == 1) {
    if (p->started)
      strbuf_append(&p->str, ",", 1);
    else
      p->first_sep = 1;
  } else if (p->started) {
    int nsep = 0;
    if (func_arg_text(&argv[1], sb, &z, &n)) {
      strbuf_append(&p->str, z, n);
      nsep = (int)n;
    }
    if (nsep != p->first_sep || p->seps) {
      /* Lengths vary: track one per value from now on. */
      if (p->nseps_cap < p->naccum) {
        int64_t cap = p->nseps_cap ? p->nseps_cap * 2 : 16;
        while (cap < p->naccum) cap *= 2;
        int *s = shale_realloc(p->seps, sizeof(int) * (size_t)cap);
        if (!s) {
          p->str.err = SHALE_NOMEM;
          return;
        }
        if (!p->seps) {
          for (int64_t i = 0; i < p->naccum - 1; i++) s[i] = p->first_sep;
        }
        p->seps = s;
        p->nseps_cap = cap;
      }
      p->seps[p->naccum - 1] = nsep;
    }
  } else {
    char tmp[32];
    const char *zs;
    uint32_t ns;
    p->first_sep = func_arg_text(&argv[1], tmp, &zs, &ns) ? (int)ns : 0;
  }
  p->naccum++;
  p->started = 1;
  if (func_arg_text(&argv[0], vb, &z, &n)) strbuf_append(&p->str, z, n);
}

static void concat_inverse(FuncCtx *ctx, int argc, ShValue *argv) {
  if (argv[0].type == SHALE_NULL) return;
  ConcatCtx *p = func_aggregate_context(ctx, sizeof(*p));
  if (!p) return;
  char vb[32];
  const char *z;
  uint32_t n;
  func_arg_text(&argv[0], vb, &z, &n);
  int64_t nvs = n;
  p->naccum--;
  if (p->seps) {
    if (p->naccum > 0) {
      nvs += p->seps[0];
      memmove(p->seps, p->seps + 1, sizeof(int) * (size_t)(p->naccum - 1));
    }
  } else {
    nvs += p->first_sep;
  }
  if (nvs >= p->str.n) {
    strbuf_truncate(&p->str, 0);
  } else {
    memmove(p->str.z, p->str.z + nvs, (size_t)(p->str.n - nvs));
    strbuf_truncate(&p->str, p->str.n - nvs);
  }
  if (p->str.n == 0) {
    p->started = 0;
    shale_free(p->seps);
    p->seps = NULL;
    p->nseps_cap = 0;
  }
}

static void concat_value(FuncCtx *ctx) {
  ConcatCtx *p = func_aggregate_context(ctx, 0);
  if (!p) {
    func_result_null(ctx);
  } else if (p->str.err) {
    func_result_sb_error(ctx, p->str.err);
  } else if (p->str.n == 0) {
    func_result_null(ctx);
  } else {
    func_result_text(ctx, p->str.z, p->str.n, FUNC_TRANSIENT);
  }
}

static void concat_final(FuncCtx *ctx) {
  ConcatCtx *p = func_aggregate_context(ctx, 0);
  if (!p) {
    func_result_null(ctx);
    return;
  }
  if (p->str.err) {
    int err = p->str.err;
    strbuf_reset(&p->str);
    if (err == SHALE_TOOBIG)
      func_result_error_toobig(ctx);
    else
      func_result_error_nomem(ctx);
  } else if (p->str.z) {
    int64_t n = p->str.n;
    char *z = strbuf_finish(&p->str);
    if (z)
      func_result_text(ctx, z, n, FUNC_OWNED);
    else
      func_result_error_nomem(ctx);
  } else {
    func_result_text(ctx, "", 0, FUNC_STATIC);
  }
  shale_free(p->seps);
  p->seps = NULL;
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
/* ss: the step on an existing state block (FuncDef.step_state), or NULL */
#define AGG(nm, na, fl, st, fi, va, inv, ud, ss)                                                \
  {                                                                                             \
    .name = nm, .nargs = na, .flags = fl, .step = st, .final = fi, .value = va, .inverse = inv, \
    .user_data = ud, .step_state = ss                                                           \
  }

const FuncDef func_agg_defs[] = {
    AGG("count", 0, DET | FUNC_COUNT, count_step, count_final, count_final, count_inverse, 0,
        count_state),
    AGG("count", 1, DET, count_step, count_final, count_final, count_inverse, 0, count_state),
    AGG("sum", 1, DET, sum_step, sum_final, sum_final, sum_inverse, 0, sum_state),
    AGG("total", 1, DET, sum_step, total_final, total_final, sum_inverse, 0, sum_state),
    AGG("avg", 1, DET, sum_step, avg_final, avg_final, sum_inverse, 0, sum_state),
    AGG("min", 1, DET | FUNC_NEEDCOLL | FUNC_MINMAX, minmax_step, minmax_final, minmax_value, NULL,
        NULL, NULL),
    AGG("max", 1, DET | FUNC_NEEDCOLL | FUNC_MINMAX, minmax_step, minmax_final, minmax_value, NULL,
        (void *)1, NULL),
    AGG("group_concat", 1, DET, concat_step, concat_final, concat_value, concat_inverse, 0, NULL),
    AGG("group_concat", 2, DET, concat_step, concat_final, concat_value, concat_inverse, 0, NULL),
};
const int func_agg_ndefs = (int)(sizeof(func_agg_defs) / sizeof(func_agg_defs[0]));
