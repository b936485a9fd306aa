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
 * Owns: a VmWin per window cursor (VmCursor.win): the partition's rows and
 * every function's results, serialized into stores (WinStore: spill files
 * kept in memory up to a share of the sorter budget, then temp files on
 * disk), an offset per buffered row, a small cache of decoded rows, and the
 * peer-group arrays when the pass needs them.
 *
 * Invariants:
 *  1. Rows [0, ready) have their results computed; rows [next, ready) are
 *     still to be handed out by WinRow (which copies their values and reads
 *     each function's next result in order); rows [ready, nrow) are the
 *     partition being buffered. A push empties the stores once every ready
 *     row has been handed out (the rows being buffered are kept).
 *  1a. Memory beyond the stores' share of the sorter budget grows by 8
 *     bytes per buffered row (its offset), and by 20 bytes per row only
 *     for passes that need peer groups under an ORDER BY (rank functions,
 *     RANGE/GROUPS frames bounded by CURRENT ROW, GROUPS, EXCLUDE GROUP or
 *     TIES). A pointer to a decoded row (win_get) is valid until another row
 *     of the same cache slot is read (index mod WIN_NSLOT).
 *  2. Frame bounds are computed in partition positions [s, e) and are
 *     non-decreasing from one row to the next (constant offsets, sorted
 *     rows), so an aggregate with an inverse slides: rows entering the
 *     frame are stepped, rows leaving it inverted, each exactly once.
 *  3. An error (bad offset, ntile/nth_value argument, a function's error)
 *     sets Vm.errmsg and is returned; an I/O or memory error reading a store
 *     is kept in VmWin.rc (the row reads as NULLs) and returned by the next
 *     push, end or row. The stores are freed when the cursor closes, also
 *     after an error.
 */
#include <stdint.h>
#include <string.h>

#include "vm_int.h"

/* Values serialized one tuple after another: per value a tag byte (the
 * type, 0x80 when a subtype byte follows), then 8 bytes (INTEGER, REAL) or a
 * varint length and the bytes (TEXT, BLOB). Appended in order through a
 * write buffer to a spill file that stays in memory up to the sorter
 * budget and then moves to a temp file (os_open_spill), so a partition
 * takes that much memory plus an offset per row, whatever its size. Rows
 * are read back by index (off[]), results in order (rpos). */
#define WIN_BLOCK (32u << 10)
typedef struct WinStore {
  OsFile *f;
  int64_t fsize; /* bytes in f; the rest of the tuples are in wbuf */
  uint8_t *wbuf; /* WIN_BLOCK bytes */
  uint32_t wlen;
  uint8_t *rbuf; /* WIN_BLOCK bytes of f read ahead from rboff */
  int64_t rboff;
  uint32_t rblen;
  uint8_t *big; /* a tuple larger than a block */
  uint32_t bigcap;
  int64_t *off; /* rows: where tuple i starts */
  int n, cap;
  int64_t rpos; /* results: the next tuple to read */
} WinStore;

/* Decoded rows, direct-mapped by index (slot i % WIN_NSLOT): a pointer
 * from win_get stays valid until a row of the same slot is read. */
#define WIN_NSLOT 16
typedef struct WinSlot {
  int idx; /* -1: empty */
  ShValue *v;
  uint8_t *buf; /* the tuple's bytes, which text/blob values point into */
  uint32_t cap;
} WinSlot;

typedef struct VmWin {
  const VmWinSpec *spec;
  ShValue off[2]; /* start / end offsets (owned copies) */
  int off_checked;
  uint64_t budget;
  WinStore rows; /* the pushed rows */
  WinStore *res; /* per function: its results, in row order */
  WinSlot slot[WIN_NSLOT];
  ShValue *nulls; /* ncol NULLs: what win_get returns after an error */
  int rc;         /* the first I/O or memory error of a store read */
  int nrow;
  int ready, next;
  /* per-partition scratch (positions relative to the partition), only
   * when a function or the frame needs peers (need_peers) and there is
   * an ORDER BY (without one every row is a peer of every other) */
  int need_peers, flat;
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

static void store_free(WinStore *st) {
  os_close_free(st->f);
  shale_free(st->wbuf);
  shale_free(st->rbuf);
  shale_free(st->big);
  shale_free(st->off);
  memset(st, 0, sizeof *st);
}

void vm_win_free(VmWin *w) {
  if (!w) return;
  int nf = w->spec ? w->spec->nfunc : 0;
  store_free(&w->rows);
  for (int k = 0; w->res && k < nf; k++) store_free(&w->res[k]);
  shale_free(w->res);
  for (int i = 0; i < WIN_NSLOT; i++) {
    shale_free(w->slot[i].v);
    shale_free(w->slot[i].buf);
  }
  shale_free(w->nulls);
  value_clear(&w->off[0]);
  value_clear(&w->off[1]);
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
  if (record_value_make_owned(&x)) return SHALE_NOMEM;
  *dst = x;
  return SHALE_OK;
}

/* ---- the stores ---- */

static int store_init(WinStore *st, uint64_t budget) {
  int rc = os_open_spill(NULL, (int64_t)budget, SHALE_OPEN_TEMP_JOURNAL, &st->f);
  if (rc) return rc;
  st->wbuf = shale_malloc(WIN_BLOCK);
  st->rbuf = shale_malloc(WIN_BLOCK);
  return st->wbuf && st->rbuf ? SHALE_OK : SHALE_NOMEM;
}

static int store_flush(WinStore *st) {
  if (st->wlen == 0) return SHALE_OK;
  int rc = os_write(st->f, st->wbuf, (int)st->wlen, st->fsize);
  if (rc) return rc;
  st->fsize += st->wlen;
  st->wlen = 0;
  return SHALE_OK;
}

/* Empty the store (its file shrinks to nothing). */
static int store_reset(WinStore *st) {
  st->wlen = 0;
  st->fsize = 0;
  st->rblen = 0;
  st->n = 0;
  st->rpos = 0;
  return os_truncate(st->f, 0);
}

static uint32_t tuple_size(const ShValue *v, int n) {
  uint64_t sz = 0;
  for (int k = 0; k < n; k++) {
    sz += 1 + (v[k].flags & VAL_SUBTYPE ? 1 : 0);
    if (v[k].type == SHALE_INTEGER || v[k].type == SHALE_FLOAT)
      sz += 8;
    else if (v[k].type == SHALE_TEXT || v[k].type == SHALE_BLOB)
      sz += (uint64_t)util_varint_len(v[k].n) + v[k].n;
  }
  return sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz;
}

static void tuple_put(const ShValue *v, int n, uint8_t *p) {
  for (int k = 0; k < n; k++) {
    uint8_t t = v[k].type;
    *p++ = (uint8_t)(t | ((v[k].flags & VAL_SUBTYPE) ? 0x80 : 0));
    if (v[k].flags & VAL_SUBTYPE) *p++ = v[k].subtype;
    if (t == SHALE_INTEGER || t == SHALE_FLOAT) {
      memcpy(p, &v[k].i, 8);
      p += 8;
    } else if (t == SHALE_TEXT || t == SHALE_BLOB) {
      p += util_put_varint(p, v[k].n);
      if (v[k].n) memcpy(p, v[k].z, v[k].n);
      p += v[k].n;
    }
  }
}

/* Decode n values from p[0..len) (borrowed from p); 0 if malformed. */
static int tuple_get(const uint8_t *p, uint32_t len, ShValue *v, int n) {
  const uint8_t *e = p + len;
  for (int k = 0; k < n; k++) {
    if (p >= e) return 0;
    uint8_t tag = *p++, t = tag & 0x7f;
    v[k].type = t;
    v[k].flags = 0;
    if (tag & 0x80) {
      if (p >= e) return 0;
      v[k].flags = VAL_SUBTYPE;
      v[k].subtype = *p++;
    }
    v[k].n = 0;
    if (t == SHALE_INTEGER || t == SHALE_FLOAT) {
      if (e - p < 8) return 0;
      memcpy(&v[k].i, p, 8);
      p += 8;
    } else if (t == SHALE_TEXT || t == SHALE_BLOB) {
      uint64_t m;
      int h = util_get_varint_safe(p, e, &m);
      if (h == 0 || m > (uint64_t)(e - p - h)) return 0;
      p += h;
      v[k].n = (uint32_t)m;
      v[k].z = (const char *)p;
      p += m;
    } else {
      v[k].i = 0;
    }
  }
  return 1;
}

/* Append a tuple of n values; rows also record where it starts. */
static int store_add(WinStore *st, const ShValue *v, int n, int index) {
  uint32_t sz = tuple_size(v, n);
  if (sz == UINT32_MAX) return SHALE_TOOBIG;
  int rc;
  if (index && st->n == st->cap) {
    int cap = st->cap ? st->cap * 2 : 256;
    int64_t *o = shale_realloc(st->off, sizeof(int64_t) * (size_t)cap);
    if (!o) return SHALE_NOMEM;
    st->off = o;
    st->cap = cap;
  }
  int64_t at = st->fsize + st->wlen;
  if (sz > WIN_BLOCK - st->wlen && (rc = store_flush(st)) != SHALE_OK) return rc;
  if (sz > WIN_BLOCK) { /* written directly (store_read reads it whole) */
    uint8_t *tmp = shale_malloc(sz);
    if (!tmp) return SHALE_NOMEM;
    tuple_put(v, n, tmp);
    rc = os_write(st->f, tmp, (int)sz, st->fsize);
    shale_free(tmp);
    if (rc) return rc;
    st->fsize += sz;
  } else {
    tuple_put(v, n, st->wbuf + st->wlen);
    st->wlen += sz;
  }
  if (index) st->off[st->n++] = at;
  return SHALE_OK;
}

/* The bytes [at, at + len) of the store: a tuple lies wholly in the file or
 * wholly in wbuf (store_add). Valid until the next read or append. */
static int store_read(WinStore *st, int64_t at, uint32_t len, const uint8_t **out) {
  if (at >= st->fsize) {
    *out = st->wbuf + (at - st->fsize);
    return SHALE_OK;
  }
  if (at >= st->rboff && at + len <= st->rboff + st->rblen) {
    *out = st->rbuf + (at - st->rboff);
    return SHALE_OK;
  }
  int rc;
  if (len > WIN_BLOCK) {
    if (len > st->bigcap) {
      uint8_t *b = shale_realloc(st->big, len);
      if (!b) return SHALE_NOMEM;
      st->big = b;
      st->bigcap = len;
    }
    if ((rc = os_read(st->f, st->big, (int)len, at)) != SHALE_OK) return rc;
    *out = st->big;
    return SHALE_OK;
  }
  int64_t left = st->fsize - at;
  uint32_t k = left < (int64_t)WIN_BLOCK ? (uint32_t)left : WIN_BLOCK;
  if ((rc = os_read(st->f, st->rbuf, (int)k, at)) != SHALE_OK) return rc;
  st->rboff = at;
  st->rblen = k;
  *out = st->rbuf;
  return SHALE_OK;
}

/* Row i (0 <= i < nrow), decoded into its slot; after an error (w->rc set)
 * a row of NULLs. */
static ShValue *win_get(VmWin *w, int i) {
  WinSlot *sl = &w->slot[i % WIN_NSLOT];
  if (sl->idx == i) return sl->v;
  if (w->rc) return w->nulls;
  int nc = w->spec->ncol;
  WinStore *st = &w->rows;
  int64_t a = st->off[i], b = i + 1 < st->n ? st->off[i + 1] : st->fsize + st->wlen;
  uint32_t len = (uint32_t)(b - a);
  const uint8_t *p;
  int rc = store_read(st, a, len, &p);
  if (rc == SHALE_OK && len > sl->cap) {
    uint8_t *nb = shale_realloc(sl->buf, len);
    if (!nb)
      rc = SHALE_NOMEM;
    else {
      sl->buf = nb;
      sl->cap = len;
    }
  }
  if (rc == SHALE_OK) {
    if (len) memcpy(sl->buf, p, len);
    if (!tuple_get(sl->buf, len, sl->v, nc)) rc = SHALE_CORRUPT;
  }
  if (rc) {
    w->rc = rc;
    sl->idx = -1;
    return w->nulls;
  }
  sl->idx = i;
  return sl->v;
}

/* The next result of function f (in row order), borrowed until the next
 * read of the store: its tag and length first, then the whole value. */
static int res_next(VmWin *w, int f, ShValue *out) {
  WinStore *st = &w->res[f];
  int64_t lim = st->rpos < st->fsize ? st->fsize : st->fsize + st->wlen;
  if (st->rpos >= lim) return SHALE_INTERNAL;
  uint32_t hk = lim - st->rpos < 10 ? (uint32_t)(lim - st->rpos) : 10;
  const uint8_t *p;
  int rc = store_read(st, st->rpos, hk, &p);
  if (rc) return rc;
  uint8_t t = p[0] & 0x7f;
  uint64_t len = 1 + (p[0] & 0x80 ? 1 : 0); /* the subtype byte */
  if (t == SHALE_INTEGER || t == SHALE_FLOAT) {
    len += 8;
  } else if (t == SHALE_TEXT || t == SHALE_BLOB) {
    uint64_t m;
    if (len >= hk) return SHALE_CORRUPT;
    int h = util_get_varint_safe(p + len, p + hk, &m);
    if (h == 0) return SHALE_CORRUPT;
    len += (uint64_t)h + m;
  }
  if (len > (uint64_t)(lim - st->rpos)) return SHALE_CORRUPT;
  if ((rc = store_read(st, st->rpos, (uint32_t)len, &p)) != SHALE_OK) return rc;
  if (!tuple_get(p, (uint32_t)len, out, 1)) return SHALE_CORRUPT;
  st->rpos += (int64_t)len;
  return SHALE_OK;
}

/* Whether the pass needs peer groups (grp, peer_start/end, gstart/gend):
 * RANGE or GROUPS frames bounded by CURRENT ROW or offsets, GROUPS
 * frames, EXCLUDE GROUP/TIES, and the rank functions. */
static int needs_peers(const VmWinSpec *s) {
  if (s->frame == VM_FRAME_GROUPS) return 1;
  if (s->exclude == VM_EXCLUDE_GROUP || s->exclude == VM_EXCLUDE_TIES) return 1;
  if (s->frame == VM_FRAME_RANGE &&
      (s->start == VM_BOUND_CURRENT_ROW || s->end == VM_BOUND_CURRENT_ROW))
    return 1;
  for (int fi = 0; fi < s->nfunc; fi++) {
    const FuncDef *d = s->funcs[fi].def;
    if (!(d->flags & FUNC_WINDOW)) continue;
    int kind = (int)(intptr_t)d->user_data;
    if (kind == FUNC_WIN_RANK || kind == FUNC_WIN_DENSE_RANK || kind == FUNC_WIN_PERCENT_RANK ||
        kind == FUNC_WIN_CUME_DIST)
      return 1;
  }
  return 0;
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
  int nc = spec->ncol > 0 ? spec->ncol : 1, nf = spec->nfunc;
  /* the budget is shared by the row store and the result stores */
  w->budget = v->sorter_budget / (uint64_t)(nf + 1);
  int rc = store_init(&w->rows, w->budget);
  if (rc) return rc;
  if (nf > 0) {
    w->res = shale_malloc(sizeof(WinStore) * (size_t)nf);
    if (!w->res) return SHALE_NOMEM;
    memset(w->res, 0, sizeof(WinStore) * (size_t)nf);
    for (int k = 0; k < nf; k++)
      if ((rc = store_init(&w->res[k], w->budget)) != SHALE_OK) return rc;
  }
  w->nulls = shale_malloc(sizeof(ShValue) * (size_t)nc);
  if (!w->nulls) return SHALE_NOMEM;
  for (int k = 0; k < nc; k++) value_set_null(&w->nulls[k]);
  for (int i = 0; i < WIN_NSLOT; i++) {
    w->slot[i].idx = -1;
    if (!(w->slot[i].v = shale_malloc(sizeof(ShValue) * (size_t)nc))) return SHALE_NOMEM;
  }
  w->flat = spec->norder == 0;
  w->need_peers = needs_peers(spec) && !w->flat;
  return SHALE_OK;
}

/* ---- comparisons ---- */

static int same_part(const VmWinSpec *s, const ShValue *a, const ShValue *b) {
  for (int i = 0; i < s->npart; i++) {
    int k = s->part[i];
    if (record_value_compare(&a[k], &b[k], s->part_coll ? s->part_coll[i] : NULL) != 0) return 0;
  }
  return 1;
}

static int peers(const VmWinSpec *s, const ShValue *a, const ShValue *b) {
  for (int i = 0; i < s->norder; i++) {
    int k = s->order[i];
    if (record_value_compare(&a[k], &b[k], s->order_coll ? s->order_coll[i] : NULL) != 0) return 0;
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
  int c = record_value_compare(a, b, s->order_coll ? s->order_coll[0] : NULL);
  return s->order_desc && s->order_desc[0] ? -c : c;
}

/* ---- buffer ---- */

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

#define ROW(w, i) win_get((w), (i))
/* Peer groups; without an ORDER BY every row is a peer of every other
 * (flat: no arrays). */
#define PSTART(w, i) ((w)->flat ? 0 : (w)->peer_start[i])
#define PEND(w, i, n) ((w)->flat ? (n) : (w)->peer_end[i])
#define PGRP(w, i) ((w)->flat ? 0 : (w)->grp[i])
#define GSTART(w, g) ((w)->flat ? 0 : (w)->gstart[g])
#define GEND(w, g, n) ((w)->flat ? (n) : (w)->gend[g])

/* ---- offsets ---- */

/* Check and normalize a frame offset (SQLite's windowCheckValue). */
static int check_offset(Vm *v, VmWin *w, int which) {
  ShValue *o = &w->off[which];
  const char *msg;
  if (w->spec->frame == VM_FRAME_RANGE) {
    msg = which ? "frame ending offset must be a non-negative number"
                : "frame starting offset must be a non-negative number";
    if (o->type == SHALE_TEXT && record_value_apply_affinity(o, AFF_NUMERIC)) return SHALE_NOMEM;
    if (o->type != SHALE_INTEGER && o->type != SHALE_FLOAT) return win_err(v, SHALE_ERROR, msg);
    if (o->type == SHALE_INTEGER ? o->i < 0 : !(o->r >= 0)) return win_err(v, SHALE_ERROR, msg);
    return SHALE_OK;
  }
  msg = which ? "frame ending offset must be a non-negative integer"
              : "frame starting offset must be a non-negative integer";
  if ((o->type == SHALE_TEXT || o->type == SHALE_FLOAT) &&
      record_value_apply_affinity(o, AFF_NUMERIC))
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
    int ovf =
        add ? __builtin_add_overflow(kc->i, off->i, &r) : __builtin_sub_overflow(kc->i, off->i, &r);
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
      case VM_BOUND_PRECEDING:
        st = o0 > i ? 0 : (int)(i - o0);
        break;
      case VM_BOUND_CURRENT_ROW:
        st = i;
        break;
      case VM_BOUND_FOLLOWING:
        st = o0 >= n - i ? n : (int)(i + o0);
        break;
      default:
        st = 0;
        break;
    }
    switch (s->end) {
      case VM_BOUND_PRECEDING:
        en = o1 > i ? 0 : (int)(i - o1 + 1);
        break;
      case VM_BOUND_CURRENT_ROW:
        en = i + 1;
        break;
      case VM_BOUND_FOLLOWING:
        en = o1 >= n - i ? n : (int)(i + o1 + 1);
        break;
      default:
        en = n;
        break;
    }
  } else if (s->frame == VM_FRAME_GROUPS) {
    int g = PGRP(w, i), ng = PGRP(w, n - 1) + 1;
    switch (s->start) {
      case VM_BOUND_PRECEDING:
        st = GSTART(w, o0 > g ? 0 : (int)(g - o0));
        break;
      case VM_BOUND_CURRENT_ROW:
        st = PSTART(w, i);
        break;
      case VM_BOUND_FOLLOWING:
        st = o0 >= ng - g ? n : GSTART(w, g + o0);
        break;
      default:
        st = 0;
        break;
    }
    switch (s->end) {
      case VM_BOUND_PRECEDING:
        en = o1 > g ? 0 : GEND(w, g - o1, n);
        break;
      case VM_BOUND_CURRENT_ROW:
        en = PEND(w, i, n);
        break;
      case VM_BOUND_FOLLOWING:
        en = o1 >= ng - g ? n : GEND(w, g + o1, n);
        break;
      default:
        en = n;
        break;
    }
  } else { /* RANGE */
    int desc = s->order_desc && s->order_desc[0];
    /* a copy: the searches read other rows, which may reuse row i's slot */
    ShValue kcv, t;
    value_set_null(&kcv);
    if (s->norder > 0 && copy_owned(&kcv, &ROW(w, base + i)[s->order[0]]) && !w->rc)
      w->rc = SHALE_NOMEM;
    const ShValue *kc = s->norder > 0 ? &kcv : NULL;
    switch (s->start) {
      case VM_BOUND_PRECEDING: /* rows r with r + off >= current (ASC) */
        st = range_search_moved(w, base, n, kc, &w->off[0], !desc, 0);
        break;
      case VM_BOUND_FOLLOWING:
        range_target(kc, &w->off[0], !desc, &t);
        st = range_search(w, base, n, &t, 0);
        break;
      case VM_BOUND_CURRENT_ROW:
        st = PSTART(w, i);
        break;
      default:
        st = 0;
        break;
    }
    switch (s->end) {
      case VM_BOUND_PRECEDING: /* rows r with r + off <= current (ASC) */
        en = range_search_moved(w, base, n, kc, &w->off[1], !desc, 1);
        break;
      case VM_BOUND_FOLLOWING:
        range_target(kc, &w->off[1], !desc, &t);
        en = range_search(w, base, n, &t, 1);
        break;
      case VM_BOUND_CURRENT_ROW:
        en = PEND(w, i, n);
        break;
      default:
        en = n;
        break;
    }
    value_clear(&kcv);
  }
  if (en < st) en = st;
  *ps = st;
  *pe = en;
}

/* 1 if row r is excluded from row i's frame. */
static int excluded(VmWin *w, int i, int r) {
  switch (w->spec->exclude) {
    case VM_EXCLUDE_CURRENT_ROW:
      return r == i;
    case VM_EXCLUDE_GROUP:
      return PGRP(w, r) == PGRP(w, i);
    case VM_EXCLUDE_TIES:
      return r != i && PGRP(w, r) == PGRP(w, i);
    default:
      return 0;
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
  if (f->filter >= 0 && !filter_ignored(w->spec, f) && !record_value_is_true(&row[f->filter], 0))
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
    if (!(r.flags & VAL_OWNED) && record_value_make_owned(&r)) return SHALE_NOMEM;
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

/* Append row i's result of function fi (in row order) and clear *val. */
static int res_put(VmWin *w, int fi, ShValue *val) {
  int rc = store_add(&w->res[fi], val, 1, 0);
  value_clear(val);
  return rc ? rc : w->rc;
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
      ShValue out;
      rc = take_result(v, &ctx, &out);
      if (!rc) rc = res_put(w, fi, &out);
    }
    drop_agg(&ctx);
    return rc;
  }
  int pst = -1, pen = -1;
  ShValue prev, out; /* the previous row's result, and this row's */
  value_set_null(&prev);
  for (int i = 0; i < n; i++) {
    int st, en;
    frame_of(w, base, n, i, &st, &en);
    if (s->exclude <= VM_EXCLUDE_NO_OTHERS && st == pst && en == pen && i > 0) {
      rc = copy_owned(&out, &prev);
      if (!rc) rc = res_put(w, fi, &out);
      if (rc) break;
      continue;
    }
    FuncCtx ctx;
    func_ctx_init(&ctx, f->def);
    for (int r = st; r < en && !rc; r++)
      if (!excluded(w, i, r)) rc = call_agg(v, w, f, &ctx, ROW(w, base + r), 0);
    if (rc) {
      drop_agg(&ctx);
      break;
    }
    ctx.coll = f->coll;
    func_agg_finish(&ctx);
    rc = take_result(v, &ctx, &out);
    value_clear(&prev);
    if (!rc) rc = copy_owned(&prev, &out);
    if (!rc) rc = res_put(w, fi, &out);
    value_clear(&out);
    if (rc) break;
    pst = st;
    pen = en;
  }
  value_clear(&prev);
  return rc;
}

/* ---- the built-in window functions ---- */

/* An integer argument: numbers that are whole, numeric text; 0 when not. */
static int int_arg(const ShValue *a, int64_t *out) {
  ShValue x = *a;
  x.flags = 0;
  record_value_numeric_type(&x);
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
    ntile = record_value_int64(&ROW(w, base)[f->arg]);
    if (ntile <= 0) return win_err(v, SHALE_ERROR, "argument of ntile must be a positive integer");
  }
  ShValue outv;
  ShValue *out = &outv;
  int rc = SHALE_OK;
  for (int i = 0; i < n && !rc; i++) {
    value_set_null(out);
    const ShValue *row = ROW(w, base + i);
    switch (kind) {
      case FUNC_WIN_ROW_NUMBER:
        value_set_int(out, i + 1);
        break;
      case FUNC_WIN_RANK:
        value_set_int(out, PSTART(w, i) + 1);
        break;
      case FUNC_WIN_DENSE_RANK:
        value_set_int(out, PGRP(w, i) + 1);
        break;
      case FUNC_WIN_PERCENT_RANK:
        value_set_real(out, n > 1 ? (double)PSTART(w, i) / (double)(n - 1) : 0.0);
        break;
      case FUNC_WIN_CUME_DIST:
        value_set_real(out, (double)PEND(w, i, n) / (double)n);
        break;
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
          src = &ROW(w, base + i)[f->arg + 2]; /* row's slot may have been reused */
        if (src && copy_owned(out, src)) rc = SHALE_NOMEM;
        break;
      }
      case FUNC_WIN_FIRST_VALUE:
      case FUNC_WIN_LAST_VALUE:
      case FUNC_WIN_NTH_VALUE: {
        int64_t nth = 1;
        if (kind == FUNC_WIN_NTH_VALUE) {
          if (!int_arg(&row[f->arg + 1], &nth) || nth <= 0) {
            rc = win_err(v, SHALE_ERROR, "second argument to nth_value must be a positive integer");
            break;
          }
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
        if (pick >= 0 && copy_owned(out, &ROW(w, base + pick)[f->arg])) rc = SHALE_NOMEM;
        break;
      }
      default:
        break;
    }
    if (!rc) rc = res_put(w, fi, out);
  }
  value_clear(out);
  return rc;
}

/* Compute the partition [ready, nrow): its rows become ready. */
static int compute_partition(Vm *v, VmWin *w) {
  const VmWinSpec *s = w->spec;
  int base = w->ready, n = w->nrow - w->ready;
  if (n <= 0) return SHALE_OK;
  int rc = SHALE_OK;
  if (w->need_peers) {
    if ((rc = grow_scratch(w, n)) != SHALE_OK) return rc;
    /* peer groups */
    int g = 0;
    for (int i = 0; i < n; i++) {
      if (i > 0 && !peers(s, ROW(w, base + i - 1), ROW(w, base + i))) g++;
      w->grp[i] = g;
    }
    if (w->rc) return w->rc;
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
        return rc;
      if ((s->end == VM_BOUND_PRECEDING || s->end == VM_BOUND_FOLLOWING) &&
          (rc = check_offset(v, w, 1)))
        return rc;
    }
    w->off_checked = 1;
  }
  for (int fi = 0; fi < s->nfunc; fi++) {
    const FuncDef *d = s->funcs[fi].def;
    if (d->flags & FUNC_WINDOW)
      rc = builtin_partition(v, w, fi, base, n);
    else
      rc = agg_partition(v, w, fi, base, n);
    if (!rc) rc = w->rc; /* a row that could not be read */
    if (rc) return rc;   /* the statement fails: the stores go with the cursor */
  }
  w->ready = w->nrow;
  return SHALE_OK;
}

/* Every ready row has been handed out: empty the stores, keeping the rows
 * of the partition still being buffered (invariant 1). */
static int compact(VmWin *w) {
  int nc = w->spec->ncol, keep = w->nrow - w->ready, rc = SHALE_OK;
  ShValue *kept = NULL;
  if (keep > 0) {
    kept = shale_malloc(sizeof(ShValue) * (size_t)keep * (size_t)(nc > 0 ? nc : 1));
    if (!kept) return SHALE_NOMEM;
    for (int i = 0; i < keep * nc; i++) value_set_null(&kept[i]);
    for (int i = 0; i < keep && !rc; i++) {
      const ShValue *r = ROW(w, w->ready + i);
      for (int k = 0; k < nc && !rc; k++) rc = copy_owned(&kept[(size_t)i * nc + k], &r[k]);
    }
    if (!rc) rc = w->rc;
  }
  if (!rc) rc = store_reset(&w->rows);
  for (int f = 0; f < w->spec->nfunc && !rc; f++) rc = store_reset(&w->res[f]);
  for (int i = 0; i < WIN_NSLOT; i++) w->slot[i].idx = -1;
  for (int i = 0; i < keep && !rc; i++) rc = store_add(&w->rows, &kept[(size_t)i * nc], nc, 1);
  for (int i = 0; kept && i < keep * nc; i++) value_clear(&kept[i]);
  shale_free(kept);
  w->nrow = keep;
  w->ready = w->next = 0;
  return rc;
}

int vm_win_push(Vm *v, VmCursor *c, const ShValue *row) {
  VmWin *w = c->win;
  if (!w) return SHALE_INTERNAL;
  const VmWinSpec *s = w->spec;
  int rc;
  if (w->rc) return w->rc;
  if (w->next == w->ready && w->next > 0 && (rc = compact(w)) != SHALE_OK) return rc;
  if (w->nrow > w->ready && !same_part(s, ROW(w, w->nrow - 1), row)) {
    if (w->rc) return w->rc;
    if ((rc = compute_partition(v, w)) != SHALE_OK) return rc;
  }
  if (w->nrow == INT32_MAX) return SHALE_TOOBIG;
  if ((rc = store_add(&w->rows, row, s->ncol, 1)) != SHALE_OK) return rc;
  w->slot[w->nrow % WIN_NSLOT].idx = -1;
  w->nrow++;
  return SHALE_OK;
}

int vm_win_end(Vm *v, VmCursor *c) {
  VmWin *w = c->win;
  if (!w) return SHALE_INTERNAL;
  if (w->rc) return w->rc;
  return compute_partition(v, w);
}

int vm_win_row(Vm *v, VmCursor *c, ShValue *out) {
  (void)v;
  VmWin *w = c->win;
  if (!w) return -SHALE_INTERNAL;
  if (w->next >= w->ready) return 0;
  const VmWinSpec *s = w->spec;
  const ShValue *row = ROW(w, w->next);
  if (w->rc) return -w->rc;
  for (int k = 0; k < s->ncol; k++) {
    value_clear(&out[k]);
    if (copy_owned(&out[k], &row[k])) return -SHALE_NOMEM;
  }
  for (int f = 0; f < s->nfunc; f++) {
    ShValue r;
    int rc = res_next(w, f, &r);
    if (rc) return -rc;
    value_clear(&out[s->ncol + f]);
    ShValue x = r;
    if (record_value_make_owned(&x)) return -SHALE_NOMEM;
    out[s->ncol + f] = x;
  }
  w->next++;
  return 1;
}
