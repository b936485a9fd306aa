/*
 * vm_window.c -- the window engine behind the WinOpen, WinPush, WinEnd and
 * WinRow opcodes: it buffers the rows of one partition (pushed in partition
 * then ORDER BY order), and when the partition is complete computes every
 * window function of the pass for every row, with SQLite 3.40's semantics:
 * ROWS, RANGE and GROUPS frames with all bound kinds, EXCLUDE, FILTER, the
 * built-in window functions (row_number .. nth_value, func_window.c) and any
 * aggregate stepped over its frame (value/inverse when it has them, else
 * recomputed per frame).
 *
 * Owns: a VmWin per window cursor (VmCursor.win), its row buffer (owned
 * copies of the pushed values) and the results of the ready rows.
 *
 * Invariants:
 *  1. Rows [0, ready) have their results computed; rows [next, ready) are
 *     still to be handed out by WinRow (which moves their values out);
 *     rows [ready, nrow) are the partition being buffered. A push compacts
 *     the buffer once every ready row has been handed out.
 *  2. Frame bounds are computed in partition positions [s, e) and are
 *     non-decreasing from one row to the next (constant offsets, sorted
 *     rows), so an aggregate with an inverse slides: rows entering the
 *     frame are stepped, rows leaving it inverted, each exactly once.
 *  3. An error (bad offset, ntile/nth_value argument, a function's error)
 *     sets Vm.errmsg and is returned; the buffer is freed when the cursor
 *     closes, also after an error.
 */
#include <stdint.h>
#include <string.h>

#include "vm_int.h"

typedef struct VmWin {
  const VmWinSpec *spec;
  ShValue off[2]; /* start / end offsets (owned copies) */
  int off_checked;
  ShValue *rows;  /* nrow * ncol */
  ShValue *res;   /* nrow * nfunc */
  int nrow, caprow;
  int ready, next;
  /* per-partition scratch (positions relative to the partition) */
  int *peer_start, *peer_end, *grp; /* per row */
  int *gstart, *gend;               /* per peer group */
  int capscratch;
  ShValue *args; /* shallow argument copies for one call */
  int capargs;
} VmWin;

static int win_err(Vm *v, int rc, const char *msg) {
  shale_free(v->errmsg);
  v->errmsg = msg ? util_strdup(msg) : NULL;
  return rc;
}

void vm_win_free(VmWin *w) {
  if (!w) return;
  int nc = w->spec ? w->spec->ncol : 0, nf = w->spec ? w->spec->nfunc : 0;
  for (int i = w->next; i < w->nrow; i++)
    for (int k = 0; k < nc; k++) value_clear(&w->rows[(size_t)i * nc + k]);
  for (int i = w->next; i < w->ready; i++)
    for (int k = 0; k < nf; k++) value_clear(&w->res[(size_t)i * nf + k]);
  value_clear(&w->off[0]);
  value_clear(&w->off[1]);
  shale_free(w->rows);
  shale_free(w->res);
  shale_free(w->peer_start);
  shale_free(w->peer_end);
  shale_free(w->grp);
  shale_free(w->gstart);
  shale_free(w->gend);
  shale_free(w->args);
  shale_free(w);
}

static int copy_owned(ShValue *dst, const ShValue *src) {
  ShValue x = *src;
  x.flags = 0;
  if (value_make_owned(&x)) return SHALE_NOMEM;
  *dst = x;
  return SHALE_OK;
}

int vm_win_open(Vm *v, VmCursor *c, const VmWinSpec *spec, const ShValue *start,
                const ShValue *end) {
  vm_cursor_close(v, c);
  VmWin *w = shale_malloc(sizeof *w);
  if (!w) return SHALE_NOMEM;
  memset(w, 0, sizeof *w);
  w->spec = spec;
  c->win = w;
  if (copy_owned(&w->off[0], start) || copy_owned(&w->off[1], end)) return SHALE_NOMEM;
  return SHALE_OK;
}

/* ---- comparisons ---- */

static int same_part(const VmWinSpec *s, const ShValue *a, const ShValue *b) {
  for (int i = 0; i < s->npart; i++) {
    int k = s->part[i];
    if (value_compare(&a[k], &b[k], s->part_coll ? s->part_coll[i] : NULL) != 0) return 0;
  }
  return 1;
}

static int peers(const VmWinSpec *s, const ShValue *a, const ShValue *b) {
  for (int i = 0; i < s->norder; i++) {
    int k = s->order[i];
    if (value_compare(&a[k], &b[k], s->order_coll ? s->order_coll[i] : NULL) != 0) return 0;
  }
  return 1;
}

/* Compare a with b as the first ORDER BY term sorts them. */
static int sort_cmp(const VmWinSpec *s, const ShValue *a, const ShValue *b) {
  int an = a->type == SHALE_NULL, bn = b->type == SHALE_NULL;
  int nf = s->order_nulls_first ? s->order_nulls_first[0] : !(s->order_desc && s->order_desc[0]);
  if (an || bn) {
    if (an && bn) return 0;
    return an ? (nf ? -1 : 1) : (nf ? 1 : -1);
  }
  int c = value_compare(a, b, s->order_coll ? s->order_coll[0] : NULL);
  return s->order_desc && s->order_desc[0] ? -c : c;
}

/* ---- buffer ---- */

static int grow_rows(VmWin *w, int need) {
  if (need <= w->caprow) return SHALE_OK;
  int cap = w->caprow ? w->caprow * 2 : 64;
  while (cap < need) cap *= 2;
  int nc = w->spec->ncol > 0 ? w->spec->ncol : 1, nf = w->spec->nfunc > 0 ? w->spec->nfunc : 1;
  ShValue *r = shale_realloc(w->rows, sizeof(ShValue) * (size_t)cap * (size_t)nc);
  if (!r) return SHALE_NOMEM;
  w->rows = r;
  ShValue *q = shale_realloc(w->res, sizeof(ShValue) * (size_t)cap * (size_t)nf);
  if (!q) return SHALE_NOMEM;
  w->res = q;
  w->caprow = cap;
  return SHALE_OK;
}

static int grow_scratch(VmWin *w, int n) {
  if (n <= w->capscratch) return SHALE_OK;
  int cap = w->capscratch ? w->capscratch : 64;
  while (cap < n) cap *= 2;
  int **arrs[5] = {&w->peer_start, &w->peer_end, &w->grp, &w->gstart, &w->gend};
  for (int i = 0; i < 5; i++) {
    int *a = shale_realloc(*arrs[i], sizeof(int) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    *arrs[i] = a;
  }
  w->capscratch = cap;
  return SHALE_OK;
}

#define ROW(w, i) (&(w)->rows[(size_t)(i) * (size_t)(w)->spec->ncol])
#define RES(w, i, f) (&(w)->res[(size_t)(i) * (size_t)(w)->spec->nfunc + (size_t)(f)])

/* ---- offsets ---- */

/* Check and normalize a frame offset (SQLite's windowCheckValue). */
static int check_offset(Vm *v, VmWin *w, int which) {
  ShValue *o = &w->off[which];
  const char *msg;
  if (w->spec->frame == VM_FRAME_RANGE) {
    msg = which ? "frame ending offset must be a non-negative number"
                : "frame starting offset must be a non-negative number";
    if (o->type == SHALE_TEXT && value_apply_affinity(o, AFF_NUMERIC)) return SHALE_NOMEM;
    if (o->type != SHALE_INTEGER && o->type != SHALE_FLOAT) return win_err(v, SHALE_ERROR, msg);
    if (o->type == SHALE_INTEGER ? o->i < 0 : !(o->r >= 0)) return win_err(v, SHALE_ERROR, msg);
    return SHALE_OK;
  }
  msg = which ? "frame ending offset must be a non-negative integer"
              : "frame starting offset must be a non-negative integer";
  if ((o->type == SHALE_TEXT || o->type == SHALE_FLOAT) && value_apply_affinity(o, AFF_NUMERIC))
    return SHALE_NOMEM;
  if (o->type == SHALE_FLOAT) {
    int64_t i;
    if (!record_real_fits_int48(o->r, &i)) return win_err(v, SHALE_ERROR, msg);
    value_set_int(o, i);
  }
  if (o->type != SHALE_INTEGER || o->i < 0) return win_err(v, SHALE_ERROR, msg);
  return SHALE_OK;
}

/* kc +/- off by SQLite's arithmetic; a non-number stays as it is. */
static void range_target(const ShValue *kc, const ShValue *off, int add, ShValue *out) {
  *out = *kc;
  out->flags = 0;
  if (kc->type != SHALE_INTEGER && kc->type != SHALE_FLOAT) return;
  if (kc->type == SHALE_INTEGER && off->type == SHALE_INTEGER) {
    int64_t r;
    int ovf = add ? __builtin_add_overflow(kc->i, off->i, &r)
                  : __builtin_sub_overflow(kc->i, off->i, &r);
    if (!ovf) {
      value_set_int(out, r);
      return;
    }
  }
  double a = kc->type == SHALE_INTEGER ? (double)kc->i : kc->r;
  double b = off->type == SHALE_INTEGER ? (double)off->i : off->r;
  value_set_real(out, add ? a + b : a - b);
}

/* First position p in [0, n) whose key sorts >= t (gt = 0) or > t (gt = 1). */
static int range_search(VmWin *w, int base, int n, const ShValue *t, int gt) {
  const VmWinSpec *s = w->spec;
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    int c = sort_cmp(s, &ROW(w, base + mid)[s->order[0]], t);
    if (gt ? c > 0 : c >= 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* First position p in [0, n) whose key moved by off (add, or subtract)
 * sorts >= kc (gt = 0) or > kc (gt = 1): SQLite tests a PRECEDING bound so,
 * moving the other row's value rather than the current row's (which
 * differs when the sum rounds: values beyond 2^53, real offsets). */
static int range_search_moved(VmWin *w, int base, int n, const ShValue *kc, const ShValue *off,
                              int add, int gt) {
  const VmWinSpec *s = w->spec;
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    ShValue t;
    range_target(&ROW(w, base + mid)[s->order[0]], off, add, &t);
    int c = sort_cmp(s, &t, kc);
    if (gt ? c > 0 : c >= 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Frame [*ps, *pe) of row i of the partition at base with n rows. */
static void frame_of(VmWin *w, int base, int n, int i, int *ps, int *pe) {
  const VmWinSpec *s = w->spec;
  int st = 0, en = n;
  int64_t o0 = w->off[0].type == SHALE_INTEGER ? w->off[0].i : 0;
  int64_t o1 = w->off[1].type == SHALE_INTEGER ? w->off[1].i : 0;
  if (s->frame == VM_FRAME_ROWS) {
    switch (s->start) {
    case VM_BOUND_PRECEDING: st = o0 > i ? 0 : (int)(i - o0); break;
    case VM_BOUND_CURRENT_ROW: st = i; break;
    case VM_BOUND_FOLLOWING: st = o0 >= n - i ? n : (int)(i + o0); break;
    default: st = 0; break;
    }
    switch (s->end) {
    case VM_BOUND_PRECEDING: en = o1 > i ? 0 : (int)(i - o1 + 1); break;
    case VM_BOUND_CURRENT_ROW: en = i + 1; break;
    case VM_BOUND_FOLLOWING: en = o1 >= n - i ? n : (int)(i + o1 + 1); break;
    default: en = n; break;
    }
  } else if (s->frame == VM_FRAME_GROUPS) {
    int g = w->grp[i], ng = w->grp[n - 1] + 1;
    switch (s->start) {
    case VM_BOUND_PRECEDING: st = w->gstart[o0 > g ? 0 : (int)(g - o0)]; break;
    case VM_BOUND_CURRENT_ROW: st = w->peer_start[i]; break;
    case VM_BOUND_FOLLOWING: st = o0 >= ng - g ? n : w->gstart[g + o0]; break;
    default: st = 0; break;
    }
    switch (s->end) {
    case VM_BOUND_PRECEDING: en = o1 > g ? 0 : w->gend[g - o1]; break;
    case VM_BOUND_CURRENT_ROW: en = w->peer_end[i]; break;
    case VM_BOUND_FOLLOWING: en = o1 >= ng - g ? n : w->gend[g + o1]; break;
    default: en = n; break;
    }
  } else { /* RANGE */
    int desc = s->order_desc && s->order_desc[0];
    const ShValue *kc = s->norder > 0 ? &ROW(w, base + i)[s->order[0]] : NULL;
    ShValue t;
    switch (s->start) {
    case VM_BOUND_PRECEDING: /* rows r with r + off >= current (ASC) */
      st = range_search_moved(w, base, n, kc, &w->off[0], !desc, 0);
      break;
    case VM_BOUND_FOLLOWING:
      range_target(kc, &w->off[0], !desc, &t);
      st = range_search(w, base, n, &t, 0);
      break;
    case VM_BOUND_CURRENT_ROW: st = w->peer_start[i]; break;
    default: st = 0; break;
    }
    switch (s->end) {
    case VM_BOUND_PRECEDING: /* rows r with r + off <= current (ASC) */
      en = range_search_moved(w, base, n, kc, &w->off[1], !desc, 1);
      break;
    case VM_BOUND_FOLLOWING:
      range_target(kc, &w->off[1], !desc, &t);
      en = range_search(w, base, n, &t, 1);
      break;
    case VM_BOUND_CURRENT_ROW: en = w->peer_end[i]; break;
    default: en = n; break;
    }
  }
  if (en < st) en = st;
  *ps = st;
  *pe = en;
}

/* 1 if row r is excluded from row i's frame. */
static int excluded(VmWin *w, int i, int r) {
  switch (w->spec->exclude) {
  case VM_EXCLUDE_CURRENT_ROW: return r == i;
  case VM_EXCLUDE_GROUP: return w->grp[r] == w->grp[i];
  case VM_EXCLUDE_TIES: return r != i && w->grp[r] == w->grp[i];
  default: return 0;
  }
}

/* ---- calling aggregates ---- */

/* SQLite 3.40 computes min()/max() over a frame that does not start at
 * UNBOUNDED PRECEDING (and has no EXCLUDE clause) with an index of the
 * frame's values that ignores the FILTER clause: so does this engine. */
static int filter_ignored(const VmWinSpec *s, const VmWinFunc *f) {
  return (f->def->flags & FUNC_MINMAX) && s->start != VM_BOUND_UNBOUNDED_PRECEDING &&
         s->exclude == VM_EXCLUDE_NONE;
}

static int call_agg(Vm *v, VmWin *w, const VmWinFunc *f, FuncCtx *ctx, const ShValue *row,
                    int inverse) {
  if (f->filter >= 0 && !filter_ignored(w->spec, f) && !value_is_true(&row[f->filter], 0))
    return SHALE_OK;
  if (f->nargs > w->capargs) {
    ShValue *a = shale_realloc(w->args, sizeof(ShValue) * (size_t)f->nargs);
    if (!a) return SHALE_NOMEM;
    w->args = a;
    w->capargs = f->nargs;
  }
  for (int k = 0; k < f->nargs; k++) {
    w->args[k] = row[f->arg + k];
    w->args[k].flags = 0;
  }
  ctx->coll = f->coll;
  ctx->conn = v->conn;
  ctx->cb = v->cb;
  if (inverse)
    f->def->inverse(ctx, f->nargs, w->args);
  else
    f->def->step(ctx, f->nargs, w->args);
  ctx->skip_accum_load = 0;
  if (ctx->rc) {
    int rc = ctx->rc;
    shale_free(v->errmsg);
    v->errmsg = ctx->errmsg;
    ctx->errmsg = NULL;
    return rc;
  }
  return SHALE_OK;
}

/* Take ctx's result into *out (owned); an error is returned. */
static int take_result(Vm *v, FuncCtx *ctx, ShValue *out) {
  if (ctx->rc) {
    int rc = ctx->rc;
    shale_free(v->errmsg);
    v->errmsg = ctx->errmsg;
    ctx->errmsg = NULL;
    func_ctx_reset(ctx);
    return rc;
  }
  ShValue r;
  func_ctx_take_result(ctx, &r);
  func_ctx_reset(ctx);
  if (r.type == SHALE_TEXT || r.type == SHALE_BLOB) {
    if (!(r.flags & VAL_OWNED) && value_make_owned(&r)) return SHALE_NOMEM;
  }
  *out = r;
  return SHALE_OK;
}

/* Finish an aggregate whose result is not wanted (frees its state). */
static void drop_agg(FuncCtx *ctx) {
  ctx->rc = SHALE_OK;
  func_agg_finish(ctx);
  func_ctx_reset(ctx);
}

/* An aggregate over each row's frame, for the partition at base. */
static int agg_partition(Vm *v, VmWin *w, int fi, int base, int n) {
  const VmWinSpec *s = w->spec;
  const VmWinFunc *f = &s->funcs[fi];
  int rc = SHALE_OK;
  /* An explicit EXCLUDE NO OTHERS makes SQLite 3.40 compute each row's
   * frame afresh (no inverse): sum() of integers after a text value left
   * the frame is then an integer again. */
  int slide = f->def->value && s->exclude <= VM_EXCLUDE_NO_OTHERS &&
              ((f->def->inverse && s->exclude == VM_EXCLUDE_NONE) ||
               s->start == VM_BOUND_UNBOUNDED_PRECEDING);
  if (slide) {
    FuncCtx ctx;
    func_ctx_init(&ctx, f->def);
    int cs = 0, ce = 0;
    for (int i = 0; i < n && !rc; i++) {
      int st, en;
      frame_of(w, base, n, i, &st, &en);
      for (; ce < en && !rc; ce++) rc = call_agg(v, w, f, &ctx, ROW(w, base + ce), 0);
      if (ce < st) { /* the frame jumped past rows never stepped */
        for (; ce < st && !rc; ce++) rc = call_agg(v, w, f, &ctx, ROW(w, base + ce), 0);
      }
      for (; cs < st && !rc; cs++) rc = call_agg(v, w, f, &ctx, ROW(w, base + cs), 1);
      if (rc) break;
      ctx.coll = f->coll;
      f->def->value(&ctx);
      rc = take_result(v, &ctx, RES(w, base + i, fi));
    }
    drop_agg(&ctx);
    return rc;
  }
  int pst = -1, pen = -1;
  for (int i = 0; i < n; i++) {
    int st, en;
    frame_of(w, base, n, i, &st, &en);
    ShValue *out = RES(w, base + i, fi);
    if (s->exclude <= VM_EXCLUDE_NO_OTHERS && st == pst && en == pen && i > 0) {
      rc = copy_owned(out, RES(w, base + i - 1, fi));
      if (rc) return rc;
      continue;
    }
    FuncCtx ctx;
    func_ctx_init(&ctx, f->def);
    for (int r = st; r < en && !rc; r++)
      if (!excluded(w, i, r)) rc = call_agg(v, w, f, &ctx, ROW(w, base + r), 0);
    if (rc) {
      drop_agg(&ctx);
      return rc;
    }
    ctx.coll = f->coll;
    func_agg_finish(&ctx);
    rc = take_result(v, &ctx, out);
    if (rc) return rc;
    pst = st;
    pen = en;
  }
  return rc;
}

/* ---- the built-in window functions ---- */

/* An integer argument: numbers that are whole, numeric text; 0 when not. */
static int int_arg(const ShValue *a, int64_t *out) {
  ShValue x = *a;
  x.flags = 0;
  value_numeric_type(&x);
  if (x.type == SHALE_INTEGER) {
    *out = x.i;
    return 1;
  }
  if (x.type == SHALE_FLOAT) {
    int64_t i;
    if (x.r >= -9.2e18 && x.r <= 9.2e18 && (double)(i = (int64_t)x.r) == x.r) {
      *out = i;
      return 1;
    }
  }
  return 0;
}

static int builtin_partition(Vm *v, VmWin *w, int fi, int base, int n) {
  const VmWinSpec *s = w->spec;
  const VmWinFunc *f = &s->funcs[fi];
  int kind = (int)(intptr_t)f->def->user_data;
  int64_t ntile = 0;
  if (kind == FUNC_WIN_NTILE && n > 0) {
    ntile = value_int64(&ROW(w, base)[f->arg]);
    if (ntile <= 0) return win_err(v, SHALE_ERROR, "argument of ntile must be a positive integer");
  }
  for (int i = 0; i < n; i++) {
    ShValue *out = RES(w, base + i, fi);
    const ShValue *row = ROW(w, base + i);
    switch (kind) {
    case FUNC_WIN_ROW_NUMBER: value_set_int(out, i + 1); break;
    case FUNC_WIN_RANK: value_set_int(out, w->peer_start[i] + 1); break;
    case FUNC_WIN_DENSE_RANK: value_set_int(out, w->grp[i] + 1); break;
    case FUNC_WIN_PERCENT_RANK:
      value_set_real(out, n > 1 ? (double)w->peer_start[i] / (double)(n - 1) : 0.0);
      break;
    case FUNC_WIN_CUME_DIST: value_set_real(out, (double)w->peer_end[i] / (double)n); break;
    case FUNC_WIN_NTILE: {
      int64_t size = n / ntile, large = n - ntile * size;
      if (size == 0) {
        value_set_int(out, i + 1);
      } else {
        int64_t small_rows = large * (size + 1);
        if (i < small_rows)
          value_set_int(out, 1 + i / (size + 1));
        else
          value_set_int(out, 1 + large + (i - small_rows) / size);
      }
      break;
    }
    case FUNC_WIN_LAG:
    case FUNC_WIN_LEAD: {
      int64_t off = 1;
      int found = 0;
      if (f->nargs < 2) {
        found = 1;
      } else if (row[f->arg + 1].type != SHALE_NULL) {
        found = int_arg(&row[f->arg + 1], &off);
      }
      int64_t t = 0;
      if (found) {
        if (kind == FUNC_WIN_LAG ? __builtin_sub_overflow((int64_t)i, off, &t)
                                 : __builtin_add_overflow((int64_t)i, off, &t))
          found = 0;
      }
      const ShValue *src = NULL;
      if (found && t >= 0 && t < n)
        src = &ROW(w, base + t)[f->arg];
      else if (f->nargs >= 3)
        src = &row[f->arg + 2];
      if (src && copy_owned(out, src)) return SHALE_NOMEM;
      break;
    }
    case FUNC_WIN_FIRST_VALUE:
    case FUNC_WIN_LAST_VALUE:
    case FUNC_WIN_NTH_VALUE: {
      int64_t nth = 1;
      if (kind == FUNC_WIN_NTH_VALUE) {
        if (!int_arg(&row[f->arg + 1], &nth) || nth <= 0)
          return win_err(v, SHALE_ERROR, "second argument to nth_value must be a positive integer");
      }
      int st, en;
      frame_of(w, base, n, i, &st, &en);
      int pick = -1;
      if (kind == FUNC_WIN_LAST_VALUE) {
        for (int r = en - 1; r >= st; r--)
          if (!excluded(w, i, r)) {
            pick = r;
            break;
          }
      } else {
        int64_t cnt = 0;
        for (int r = st; r < en; r++)
          if (!excluded(w, i, r) && ++cnt == nth) {
            pick = r;
            break;
          }
      }
      if (pick >= 0 && copy_owned(out, &ROW(w, base + pick)[f->arg])) return SHALE_NOMEM;
      break;
    }
    default: break;
    }
  }
  return SHALE_OK;
}

/* Compute the partition [ready, nrow): its rows become ready. */
static int compute_partition(Vm *v, VmWin *w) {
  const VmWinSpec *s = w->spec;
  int base = w->ready, n = w->nrow - w->ready;
  if (n <= 0) return SHALE_OK;
  int rc = grow_scratch(w, n);
  if (rc) return rc;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s->nfunc; k++) value_set_null(RES(w, base + i, k));
  /* peer groups */
  int g = 0;
  for (int i = 0; i < n; i++) {
    if (i > 0 && !peers(s, ROW(w, base + i - 1), ROW(w, base + i))) g++;
    w->grp[i] = g;
  }
  for (int i = 0; i < n; i++) {
    int st = (i > 0 && w->grp[i - 1] == w->grp[i]) ? w->peer_start[i - 1] : i;
    w->peer_start[i] = st;
    w->gstart[w->grp[i]] = st;
  }
  for (int i = n - 1; i >= 0; i--) {
    int en = (i < n - 1 && w->grp[i + 1] == w->grp[i]) ? w->peer_end[i + 1] : i + 1;
    w->peer_end[i] = en;
    w->gend[w->grp[i]] = en;
  }
  /* offsets: checked on the first partition that uses them */
  if (!w->off_checked) {
    int uses_frame = 0;
    for (int fi = 0; fi < s->nfunc; fi++) {
      const FuncDef *d = s->funcs[fi].def;
      int kind = (d->flags & FUNC_WINDOW) ? (int)(intptr_t)d->user_data : 0;
      if (!kind || kind >= FUNC_WIN_FIRST_VALUE) uses_frame = 1;
    }
    if (uses_frame) {
      if ((s->start == VM_BOUND_PRECEDING || s->start == VM_BOUND_FOLLOWING) &&
          (rc = check_offset(v, w, 0)))
        goto fail;
      if ((s->end == VM_BOUND_PRECEDING || s->end == VM_BOUND_FOLLOWING) &&
          (rc = check_offset(v, w, 1)))
        goto fail;
    }
    w->off_checked = 1;
  }
  for (int fi = 0; fi < s->nfunc; fi++) {
    const FuncDef *d = s->funcs[fi].def;
    if (d->flags & FUNC_WINDOW)
      rc = builtin_partition(v, w, fi, base, n);
    else
      rc = agg_partition(v, w, fi, base, n);
    if (rc) goto fail;
  }
  w->ready = w->nrow;
  return SHALE_OK;
fail:
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s->nfunc; k++) value_clear(RES(w, base + i, k));
  return rc;
}

int vm_win_push(Vm *v, VmCursor *c, const ShValue *row) {
  VmWin *w = c->win;
  if (!w) return SHALE_INTERNAL;
  const VmWinSpec *s = w->spec;
  int nc = s->ncol;
  if (w->next == w->ready && w->next > 0) { /* compact (invariant 1) */
    int keep = w->nrow - w->ready;
    if (keep > 0) memmove(w->rows, ROW(w, w->ready), sizeof(ShValue) * (size_t)keep * nc);
    w->nrow = keep;
    w->ready = w->next = 0;
  }
  if (w->nrow > w->ready && !same_part(s, ROW(w, w->nrow - 1), row)) {
    int rc = compute_partition(v, w);
    if (rc) return rc;
  }
  if (grow_rows(w, w->nrow + 1)) return SHALE_NOMEM;
  ShValue *dst = ROW(w, w->nrow);
  for (int k = 0; k < nc; k++) {
    if (copy_owned(&dst[k], &row[k])) {
      for (int j = 0; j < k; j++) value_clear(&dst[j]);
      return SHALE_NOMEM;
    }
  }
  w->nrow++;
  return SHALE_OK;
}

int vm_win_end(Vm *v, VmCursor *c) {
  VmWin *w = c->win;
  if (!w) return SHALE_INTERNAL;
  return compute_partition(v, w);
}

int vm_win_row(Vm *v, VmCursor *c, ShValue *out) {
  (void)v;
  VmWin *w = c->win;
  if (!w) return -SHALE_INTERNAL;
  if (w->next >= w->ready) return 0;
  const VmWinSpec *s = w->spec;
  ShValue *row = ROW(w, w->next);
  for (int k = 0; k < s->ncol; k++) {
    value_clear(&out[k]);
    out[k] = row[k];
    value_set_null(&row[k]);
  }
  for (int f = 0; f < s->nfunc; f++) {
    ShValue *r = RES(w, w->next, f);
    value_clear(&out[s->ncol + f]);
    out[s->ncol + f] = *r;
    value_set_null(r);
  }
  w->next++;
  return 1;
}
