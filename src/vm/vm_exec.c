/*
 * vm_exec.c -- the interpreter: vm_step runs a program's ops until a result
 * row, the end, or an error, with SQLite's semantics for each opcode.
 *
 * Owns: opcode dispatch (computed goto generated from opcodes.def, or a
 * switch when VM_NO_COMPUTED_GOTO is defined or the compiler lacks labels as
 * values), value semantics of the arithmetic/comparison ops, cursor access
 * (the lazy Column with its per-row header cache), transaction ends at halt.
 *
 * Invariants:
 *  1. Before an op overwrites a register it releases what the register
 *     owned; a value computed from the output register itself is computed
 *     before the register is cleared (and detached from its buffer first
 *     when the output is built in that same buffer).
 *  2. Every op that can fail ends in the abort path: the error code and
 *     message are stored, cursors closed, a transaction this Vm began rolled
 *     back (VM_AUTOCOMMIT), and vm_step returns the code.
 *  3. Arithmetic follows SQLite 3.40: integer ops that overflow are redone
 *     in floating point; NULL operands give NULL; text and blobs take the
 *     numeric type of their text; a NaN result is NULL; division and
 *     remainder by zero are NULL.
 *  4. An opcode number outside opcodes.def, or a connection-level op with
 *     no hook installed (vm_set_hooks), halts with SHALE_INTERNAL naming it.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_int.h"

#if defined(__GNUC__) && !defined(VM_NO_COMPUTED_GOTO)
#define VM_USE_GOTO 1
#endif

/* ---- helpers: registers ---- */

/* Outputs built from inputs that may live in the output register's own
 * buffer are written to the Vm's scratch buffer first; this hands that
 * buffer to register r and keeps r's old one as the next scratch. */
static void swap_scratch(Vm *v, int r) {
  VmBuf t = v->rbuf[r];
  v->rbuf[r] = v->scratch;
  v->scratch = t;
}

/* 1 if applying affinity aff leaves x as it is (the common cases, tested
 * inline before record_value_apply_affinity): NULL and blobs under any
 * affinity, text under TEXT, integers under INTEGER and NUMERIC, anything
 * under BLOB. */
static inline int affinity_keeps(const ShValue *x, char aff) {
  switch (x->type) {
    case SHALE_NULL:
    case SHALE_BLOB:
      return 1;
    case SHALE_TEXT:
      return aff == AFF_TEXT || aff == AFF_BLOB;
    case SHALE_INTEGER:
      return aff == AFF_INTEGER || aff == AFF_NUMERIC || aff == AFF_BLOB;
    default:
      return aff == AFF_BLOB;
  }
}

/* ---- cursors ---- */

static void invalidate_all(Vm *v) {
  /* (the bounds in locals: the stores could alias them otherwise) */
  for (VmCursor *c = v->cur, *end = c + v->prog->ncursor; c < end; c++) c->cache_ok = 0;
}

/* The Column fix-ups of the records the next open of a cursor reads. */
static int next_colfix(const Vm *v) { return v->enc != RECORD_ENC_UTF8 ? VM_COLFIX_ENC : 0; }

void vm_cursor_close(Vm *v, VmCursor *c) {
  if (c->win) {
    vm_win_free(c->win);
    c->win = NULL;
  }
  if (c->bc) btree_cursor_close(c->bc); /* parked or not */
  c->bc = NULL;
  c->parked = 0;
  if (c->bulk) { /* not finished: an error stopped the program */
    btree_bulk_free(c->bulk);
    c->bulk = NULL;
  }
  if (c->vc || c->inl) vm_vtab_close(c);
  c->kind = VMC_NONE;
  c->ki = NULL;
  if (c->ki_own) {
    shale_free(c->ki_own);
    c->ki_own = NULL;
  }
  c->nullrow = 0;
  c->colfix = next_colfix(v);
  c->pseudo_fed = 0;
  c->cache_ok = 0;
  c->seq = 0;
  c->nc_n = 0;
  vm_sorter_close(c);
  c->eph_root = 0;
  if (c->hash) vm_hash_reset(v, c->hash);
}

static void eph_empty(Vm *v);

void vm_close_run(Vm *v, int park) {
  if (v->aux) func_pointers_drop(&v->aux, -1); /* no register holds them past the run */
  if (!v->cur) return;
  for (int i = 0; i < v->prog->ncursor; i++) {
    VmCursor *c = &v->cur[i];
    c->nc_n = 0; /* a NoConflict's place is for this run's next IdxInsert only */
    if (c->parked && c->bc) continue; /* from an earlier run, still kept */
    if (c->kind == VMC_NONE && !c->bc && !c->win && !c->inl && !c->ki_own && !c->eph_root &&
        !c->spill && !c->nullrow) {
      /* closed already (the halt's close, then the reset's), or never
       * opened: only the next open's text fix-up to refresh */
      c->colfix = next_colfix(v);
      continue;
    }
    if (park && c->bc && (c->kind == VMC_TABLE || c->kind == VMC_INDEX) && !c->eph_root &&
        !(v->own_mask & (1u << c->db)) && btree_cursor_park(c->bc, &c->bc)) {
      c->parked = 1;
      continue;
    }
    vm_cursor_close(v, c);
  }
  eph_empty(v);
}

static void eph_empty(Vm *v) {
  if (v->eph) {
    /* The ephemeral database stays open for the next execution, emptied:
     * its write transaction (never committed) is rolled back, which drops
     * every page. If that fails it is closed instead. */
    if (btree_rollback(v->eph) != SHALE_OK || btree_txn_state(v->eph) != PAGER_TXN_NONE) {
      btree_close(v->eph);
      v->eph = NULL;
    }
  }
}

/* ---- aggregate slots: the context block and a spare kept for reuse ---- */

static void agg_slot_to_ctx(const VmAgg *slot, FuncCtx *ctx) {
  ctx->agg = slot->agg;
  ctx->agg_size = slot->agg_size;
  ctx->agg_spare = slot->spare;
  ctx->agg_spare_size = slot->spare_size;
}
static void agg_ctx_to_slot(const FuncCtx *ctx, VmAgg *slot) {
  slot->agg = ctx->agg;
  slot->agg_size = ctx->agg_size;
  slot->spare = ctx->agg_spare;
  slot->spare_size = ctx->agg_spare_size;
}

/* ---- rowsets ---- */

static int rowset_get(Vm *v, int r, VmRowSet **out) {
  if (!v->rowset) {
    size_t n = (size_t)v->prog->nreg + 1;
    v->rowset = shale_malloc(n * sizeof *v->rowset);
    if (!v->rowset) return SHALE_NOMEM;
    memset(v->rowset, 0, n * sizeof *v->rowset);
  }
  *out = &v->rowset[r];
  return SHALE_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sort and deduplicate the unread part a[pos..n). */
static void rowset_sort(VmRowSet *rs) {
  if (rs->sorted) return;
  int64_t *a = rs->a + rs->pos;
  int n = rs->n - rs->pos, k = 0;
  if (n > 1) qsort(a, (size_t)n, sizeof *a, cmp_i64);
  for (int i = 0; i < n; i++)
    if (k == 0 || a[i] != a[k - 1]) a[k++] = a[i];
  rs->n = rs->pos + k;
  rs->sorted = 1;
}

/* The temporary database holding ephemeral tables: in memory while it fits
 * the cache bound, then in a temp file (path "", as SQLite's). */
static int eph_open(Vm *v) {
  if (v->eph && btree_txn_state(v->eph) == PAGER_TXN_WRITE) return SHALE_OK;
  int rc = SHALE_OK;
  if (!v->eph) rc = btree_open(NULL, "", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &v->eph);
  if (rc == SHALE_OK) rc = btree_begin(v->eph, BTREE_TXN_WRITE);
  if (rc && v->eph) {
    btree_close(v->eph);
    v->eph = NULL;
  }
  return rc;
}

/* 1 + the body bytes of each one-byte serial type; 0: not a one-byte type
 * (10/11 reserved, 0x80 and up a varint's first byte). */
#define ST_TXT(x) (1 + ((x)-12) / 2)
#define ST_ROW8(b)                                                                      \
  ST_TXT(b), ST_TXT(b + 1), ST_TXT(b + 2), ST_TXT(b + 3), ST_TXT(b + 4), ST_TXT(b + 5), \
      ST_TXT(b + 6), ST_TXT(b + 7)
static const uint8_t st_len1[256] = {1,
                                     2,
                                     3,
                                     4,
                                     5,
                                     7,
                                     9,
                                     9,
                                     1,
                                     1,
                                     0,
                                     0,
                                     ST_TXT(12),
                                     ST_TXT(13),
                                     ST_TXT(14),
                                     ST_TXT(15),
                                     ST_ROW8(16),
                                     ST_ROW8(24),
                                     ST_ROW8(32),
                                     ST_ROW8(40),
                                     ST_ROW8(48),
                                     ST_ROW8(56),
                                     ST_ROW8(64),
                                     ST_ROW8(72),
                                     ST_ROW8(80),
                                     ST_ROW8(88),
                                     ST_ROW8(96),
                                     ST_ROW8(104),
                                     ST_ROW8(112),
                                     ST_ROW8(120)};
#undef ST_ROW8
#undef ST_TXT

/* Make room for n columns in c's header cache. */
static int header_room(VmCursor *c, int64_t n) {
  int ncap = c->capcol * 2;
  if (ncap < n) ncap = (int)n;
  uint32_t *t = shale_malloc((size_t)ncap * sizeof *t * 2); /* types, then offsets */
  if (!t) return SHALE_NOMEM;
  memcpy(t, c->types, (size_t)c->capcol * sizeof *t);
  memcpy(t + ncap, c->offsets, (size_t)c->capcol * sizeof *t);
  if (c->capcol > VM_HDR_FEW) shale_free(c->types); /* else the room in the Vm's block */
  c->types = t;
  c->offsets = t + ncap;
  c->capcol = ncap;
  return SHALE_OK;
}

/* Store the parse position and check the bounds: offsets only grow, so
 * the last one covers every column parsed; a finished header's body must
 * end exactly at the record's end (as record_parse_header). */
static int header_end(VmCursor *c, uint32_t pos, uint64_t body, int nc) {
  int done = pos >= c->hdr_end;
  if (done ? body != c->nrec : body > c->nrec) return SHALE_CORRUPT;
  c->hdr_pos = pos;
  c->body = (uint32_t)body;
  c->hdr_ncol = nc;
  c->hdr_done = done; /* (0 until now: a finished header is not parsed again) */
  return SHALE_OK;
}

/* header_parse's general loop: any serial type, varints included. */
static __attribute__((noinline)) int header_parse_any(VmCursor *c, int want) {
  const uint8_t *rec = c->rec;
  uint32_t pos = c->hdr_pos, end = c->hdr_end;
  uint64_t body = c->body; /* no wrap: the bound is checked once, at the end */
  int nc = c->hdr_ncol;
  int64_t most = (int64_t)nc + (end - pos);
  if (most > want) most = want;
  if (most > c->capcol && header_room(c, most)) return SHALE_NOMEM;
  uint32_t *types = c->types, *offs = c->offsets;
  while (nc < want && pos < end) {
    uint32_t st = rec[pos];
    if (st < 0x80) {
      pos++;
      /* 10: a VAL_NOCHANGE NULL, in a temporary table only */
      if (st - 10u < 2u && (st == 11u || !c->eph_root)) return SHALE_CORRUPT;
    } else {
      uint64_t x;
      int k = util_get_varint_safe(rec + pos, rec + end, &x);
      if (k == 0 || x > 0xffffffffu || x - 10u < 2u) return SHALE_CORRUPT;
      st = (uint32_t)x;
      pos += (uint32_t)k;
    }
    types[nc] = st;
    offs[nc] = (uint32_t)body;
    body += record_serial_len(st);
    nc++;
  }
  return header_end(c, pos, body, nc);
}

/* Parse c's header from the state given (pos: next serial type, body: its
 * column's offset, nc columns known) until `want` columns are known or the
 * header ends, and store the state. Every column parsed must lie inside the
 * record and a finished header's body must end exactly at the record's end
 * (header_end). The loop here takes one-byte serial types (all but long text
 * and blobs), a header byte per column; at the first other byte the general
 * loop goes on. */
static inline __attribute__((always_inline)) int header_scan(VmCursor *c, const uint8_t *rec,
                                                             uint32_t pos, uint32_t body, int nc,
                                                             int want) {
  /* every column takes a header byte at least: room for all at once */
  int64_t most = (int64_t)nc + (c->hdr_end - pos);
  if (most > want) most = want;
  if (most > c->capcol && header_room(c, most)) return SHALE_NOMEM;
  const uint8_t *p = rec + pos;
  uint32_t *ty = c->types + nc, *of = c->offsets + nc;
  uint32_t b = body; /* grows by < 64 a header byte: no wrap */
  uint32_t cnt = most > nc ? (uint32_t)(most - nc) : 0, i = 0;
  for (; i < cnt; i++) { /* one index for the three arrays */
    uint32_t st = p[i], len1 = st_len1[st];
    if (!len1) break; /* a varint's first byte, or 10/11 */
    ty[i] = st;
    of[i] = b;
    b += len1 - 1;
  }
  int rc = header_end(c, pos + i, b, nc + (int)i);
  if (rc == SHALE_OK && i < cnt) rc = header_parse_any(c, want);
  return rc;
}

/* Parse more of the cached record's header (header_scan). */
static int header_parse(VmCursor *c, int want) {
  return header_scan(c, c->rec, c->hdr_pos, c->body, c->hdr_ncol, want);
}

/* c's row cache when no record is at hand: every column reads NULL. */
static int cursor_no_row(VmCursor *c, int cache_ok) {
  c->rec = NULL;
  c->nrec = 0;
  c->hdr_ncol = 0;
  c->hdr_done = 1;
  c->cache_ok = cache_ok;
  return SHALE_OK;
}

/* Point c's row cache at rec[0..n), a record of header size hlen whose
 * first serial type is at k, and parse the first `want` columns; cache_ok
 * becomes ok on success. */
static inline __attribute__((always_inline)) int cache_record(VmCursor *c, const uint8_t *rec,
                                                              uint32_t n, uint32_t hlen, uint32_t k,
                                                              int want, int ok) {
  c->rec = rec;
  c->nrec = n;
  c->hdr_end = hlen;
  c->hdr_done = 0;
  int rc = header_scan(c, rec, k, hlen, 0, want);
  if (rc) return rc;
  c->cache_ok = ok;
  return SHALE_OK;
}

/* Fill c's row cache: the record pointer, and its header parsed for the
 * first `want` columns (0: none yet; Column parses on as it needs). */
static int cursor_cache_cols(Vm *v, VmCursor *c, int want) {
  const uint8_t *rec;
  uint32_t n;
  if (c->bc) { /* table and index cursors */
    uint32_t navail;
    const void *local;
    int rc = btree_payload(c->bc, &local, &n, &navail);
    if (rc) return rc;
    if (!local) return cursor_no_row(c, 1); /* no entry under the cursor */
    rec = local;
    if (navail < n) {
      /* one byte more, a NUL: text ending the record is then a C string
       * (vm_text_terminated) */
      VmBuf b = {(char *)c->buf, c->bufcap};
      if (n == UINT32_MAX || !vm_buf_need(&b, n + 1)) return SHALE_NOMEM;
      c->buf = (uint8_t *)b.z;
      c->bufcap = b.cap;
      rc = btree_payload_read(c->bc, 0, n, c->buf);
      if (rc) return rc;
      c->buf[n] = 0;
      rec = c->buf;
    }
  } else if (c->kind == VMC_SORTER) {
    if (!vm_sorter_row(c, &rec, &n)) return cursor_no_row(c, 0);
  } else if (c->kind == VMC_PSEUDO) {
    ShValue *x = &v->reg[c->pseudo_reg];
    if (x->type != SHALE_BLOB && x->type != SHALE_TEXT) return cursor_no_row(c, 0);
    rec = (const uint8_t *)x->z;
    n = x->n;
  } else {
    return cursor_no_row(c, 1);
  }
  uint32_t hlen, k;
  if (n > 0 && rec[0] < 0x80) { /* the usual one-byte header size */
    hlen = rec[0];
    k = 1;
    if (hlen < 1 || hlen > n) return SHALE_CORRUPT;
  } else {
    uint64_t x;
    int rc = record_header_len(rec, n, n, &hlen);
    if (rc) return rc;
    k = (uint32_t)util_get_varint_safe(rec, rec + hlen, &x);
    if (k == 0) return SHALE_CORRUPT;
  }
  return cache_record(c, rec, n, hlen, k, want, c->kind != VMC_PSEUDO || c->pseudo_fed);
}

/* cursor_cache_cols inlined for the usual row (a B-tree cursor's record
 * wholly on its page, a one-byte header size); any other takes the call,
 * which fetches the payload again (the cursor keeps the cell parsed). */
static inline __attribute__((always_inline)) int cursor_cache_quick(Vm *v, VmCursor *c, int want) {
  if (!c->bc) return cursor_cache_cols(v, c, want);
  BtLocal l = btree_payload_local(c->bc);
  const uint8_t *rec = l.p;
  if (!rec || l.n == 0 || rec[0] - 1u >= 0x7fu || rec[0] > l.n)
    return cursor_cache_cols(v, c, want);
  return cache_record(c, rec, l.n, rec[0], 1, want, 1); /* a B-tree cursor: never a pseudo one */
}

/* Fill c's row cache (record pointer; the header is parsed on demand). */
static int cursor_cache(Vm *v, VmCursor *c) {
  if (c->cache_ok) return SHALE_OK;
  return cursor_cache_cols(v, c, 0);
}

/* The record under c when it is at hand without filling the row cache: the
 * cache's when valid, else a B-tree cursor's record wholly on its page (the
 * cursor keeps the cell parsed, so a later Column fetches it cheaply). 0 for
 * anything else (overflow, sorter, pseudo, no row, an error): the caller then
 * takes cursor_cache, which handles (and reports) every case. */
static inline __attribute__((always_inline)) int cursor_record(VmCursor *c, const uint8_t **rec,
                                                               uint32_t *n) {
  if (c->cache_ok) {
    *rec = c->rec;
    *n = c->nrec;
    return c->rec != NULL;
  }
  if (!c->bc) return 0;
  BtLocal l = btree_payload_local(c->bc);
  *rec = l.p;
  *n = l.n;
  return l.p != NULL;
}

/* ---- numeric helpers (SQLite 3.40's numericType) ---- */

/* 0 NULL, 1 integer (*i), 2 real (*r). */
static int num_type(const ShValue *x, int64_t *i, double *r) {
  switch (x->type) {
    case SHALE_INTEGER:
      *i = x->i;
      return 1;
    case SHALE_FLOAT:
      *r = x->r;
      return 2;
    case SHALE_NULL:
      return 0;
    default: {
      double rv = 0;
      int64_t iv = 0;
      int rc = record_value_text_to_real(x->z, (int)x->n, &rv);
      int ri = record_value_text_to_int64(x->z, (int)x->n, &iv);
      if ((rc == 0 || rc == 1) && ri <= 1) {
        *i = iv;
        return 1;
      }
      *r = rv;
      return 2;
    }
  }
}

static double real_of(const ShValue *x) {
  return x->type == SHALE_INTEGER ? (double)x->i
         : x->type == SHALE_FLOAT ? x->r
                                  : record_value_double(x);
}

/* r[out] = b OP a with SQLite's rules (a = r[p1], b = r[p2]). */
/* y op x for +, - and * of integers without overflow: 1 with *r set, else
 * 0 (overflow, or another operator: arith decides). */
static inline int int_arith(int op, int64_t y, int64_t x, int64_t *r) {
  switch (op) {
    case OP_Add:
      return !__builtin_add_overflow(y, x, r);
    case OP_Subtract:
      return !__builtin_sub_overflow(y, x, r);
    case OP_Multiply:
      return !__builtin_mul_overflow(y, x, r);
    default:
      return 0;
  }
}

static void arith(int op, const ShValue *a, const ShValue *b, ShValue *res) {
  int64_t ia = 0, ib = 0, ir;
  double ra = 0, rb = 0;
  int ta, tb;
  if (a->type == SHALE_INTEGER && b->type == SHALE_INTEGER) {
    ia = a->i;
    ib = b->i;
    goto int_math;
  }
  /* a real and a number (not both integers): no text to read, real math */
  if ((a->type == SHALE_FLOAT || a->type == SHALE_INTEGER) &&
      (b->type == SHALE_FLOAT || b->type == SHALE_INTEGER))
    goto fp_math;
  if (a->type == SHALE_NULL || b->type == SHALE_NULL) goto null;
  ta = num_type(a, &ia, &ra);
  tb = num_type(b, &ib, &rb);
  if (ta == 1 && tb == 1) goto int_math;
  goto fp_math;
int_math:
  switch (op) {
    case OP_Add:
    case OP_Subtract:
    case OP_Multiply:
      if (!int_arith(op, ib, ia, &ir)) goto fp_math;
      break;
    case OP_Divide:
      if (ia == 0) goto null;
      if (ia == -1 && ib == INT64_MIN) goto fp_math;
      ir = ib / ia;
      break;
    default: /* Remainder */
      if (ia == 0) goto null;
      if (ia == -1) ia = 1;
      ir = ib % ia;
      break;
  }
  value_set_int(res, ir);
  return;
fp_math : {
  double x = real_of(a), y = real_of(b);
  switch (op) {
    case OP_Add:
      y += x;
      break;
    case OP_Subtract:
      y -= x;
      break;
    case OP_Multiply:
      y *= x;
      break;
    case OP_Divide:
      if (x == 0.0) goto null;
      y /= x;
      break;
    default: {
      int64_t xa = record_value_int64(a), xb = record_value_int64(b);
      if (xa == 0) goto null;
      if (xa == -1) xa = 1;
      y = (double)(xb % xa);
      break;
    }
  }
  if (isnan(y)) goto null;
  value_set_real(res, y);
  return;
}
null:
  value_set_null(res);
}

/* Apply comparison affinity to a local copy. */
static void cmp_affinity(ShValue *x, int aff, char buf[32]) {
  x->flags &= (uint8_t)~VAL_OWNED; /* the copy never owns: the register keeps its memory */
  if (aff >= 3) {                  /* NUMERIC, INTEGER, REAL */
    if (x->type == SHALE_TEXT) record_value_numeric_type(x);
  } else if (aff == 2) { /* TEXT */
    if (x->type == SHALE_INTEGER || x->type == SHALE_FLOAT) {
      const char *z;
      uint32_t n;
      record_value_text_view(x, buf, &z, &n);
      value_set_text(x, z, n);
    }
  }
}

static int set_err(Vm *v, int rc, const char *msg) {
  shale_free(v->errmsg);
  v->errmsg = msg ? util_strdup(msg) : NULL;
  return rc;
}

/* Convert a rowid key for a table seek; returns 0 when no row can match
 * (non-numeric key): the caller jumps. */
static int seek_int_key(const ShValue *x, int *op, int64_t *key) {
  int64_t i = 0;
  double r = 0;
  ShValue t = *x;
  t.flags &= (uint8_t)~VAL_OWNED; /* a view: the register keeps its text */
  if (t.type == SHALE_TEXT) record_value_numeric_type(&t);
  if (t.type == SHALE_INTEGER) {
    *key = t.i;
    return 1;
  }
  if (t.type != SHALE_FLOAT) return 0;
  r = t.r;
  if (isnan(r)) return 0;
  if (r >= 9223372036854775807.0) {
    i = INT64_MAX;
    if (*op == OP_SeekGE || *op == OP_SeekGT) return 0;
    *op = OP_SeekLE;
  } else if (r < -9223372036854775808.0) {
    i = INT64_MIN;
    if (*op == OP_SeekLE || *op == OP_SeekLT) return 0;
    *op = OP_SeekGE;
  } else {
    i = (int64_t)r;
    if ((double)i < r) {
      if (*op == OP_SeekGE)
        *op = OP_SeekGT;
      else if (*op == OP_SeekLT)
        *op = OP_SeekLE;
    } else if ((double)i > r) {
      if (*op == OP_SeekGT)
        *op = OP_SeekGE;
      else if (*op == OP_SeekLE)
        *op = OP_SeekLT;
    }
  }
  *key = i;
  return 1;
}

/* End of the program (rc == OK) or an error: close cursors, end a
 * transaction this Vm began. Returns SHALE_DONE or the error. */
/* The deferred foreign-key counters (NULL when the hooks have none). */
static int64_t fk_deferred_total(const Vm *v) {
  const VmConnHooks *h = v->hooks;
  int64_t n = 0;
  if (h && h->deferred_fk) n += *h->deferred_fk;
  if (h && h->deferred_imm_fk) n += *h->deferred_imm_fk;
  return n;
}

static void fk_deferred_set(const Vm *v, int64_t d, int64_t imm) {
  const VmConnHooks *h = v->hooks;
  if (h && h->deferred_fk) *h->deferred_fk = d;
  if (h && h->deferred_imm_fk) *h->deferred_imm_fk = imm;
}

/* The transaction this Vm began ends: no deferred FK state survives it. */
static void fk_txn_end(const Vm *v) {
  fk_deferred_set(v, 0, 0);
  if (v->hooks && v->hooks->defer_fks) *v->hooks->defer_fks = 0;
}

/* SQLite's end-of-statement foreign-key checks: immediate violations
 * counted by the statement, then (when this Vm ends the transaction) the
 * deferred ones. Only for a top-level Vm that is succeeding (or failing
 * under OR FAIL, whose changes would stay). */
static int fk_halt_check(Vm *v, int rc) {
  if (v->parent) return rc;
  int fail_keep = rc != SHALE_OK && v->oe == VM_OE_FAIL && (rc & 0xff) == SHALE_CONSTRAINT;
  if (rc != SHALE_OK && !fail_keep) return rc;
  if (v->nfk > 0 || (v->own_txn && fk_deferred_total(v) > 0)) {
    set_err(v, SHALE_CONSTRAINT_FOREIGNKEY, "FOREIGN KEY constraint failed");
    v->oe = VM_OE_ABORT;
    return SHALE_CONSTRAINT_FOREIGNKEY;
  }
  return rc;
}

/* Database i of the connection, or NULL (not open, out of range). */
static Btree *vm_db(const Vm *v, int i) { return i >= 0 && i < v->ndb ? v->dbv[i] : NULL; }

/* SQLite's "special errors": out of memory, I/O, a full disk, and an
 * interrupt of a statement that writes. Inside a transaction they undo
 * the whole transaction (a statement that broke off part way may have left
 * the pages, the cache or the journal behind), except out of memory and a
 * full disk under a statement savepoint, which undo the statement. */
static int special_error(const Vm *v, int rc) {
  int m = rc & 0xff;
  if (v->parent || rc == SHALE_OK) return 0;
  if (m == SHALE_NOMEM || m == SHALE_FULL) return v->stmt_sp < 0;
  return m == SHALE_IOERR || (m == SHALE_INTERRUPT && v->wrote);
}

static int halt(Vm *v, int rc) {
  vm_close_run(v, rc == SHALE_OK);
  rc = fk_halt_check(v, rc);
  const VmConnHooks *h = v->hooks;
  if (v->own_mask) {
    fk_txn_end(v); /* the transaction ends here, either way */
    /* OR FAIL / RAISE(FAIL): the statement fails but what it changed before
     * stays -- in autocommit mode that is committed, as SQLite does. Other
     * errors undo the transactions this Vm began. */
    int keep = rc != SHALE_OK && v->oe == VM_OE_FAIL && (rc & 0xff) == SHALE_CONSTRAINT;
    if (v->sp_mask) {
      int r2 = vm_stmt_sp_end(v, rc != SHALE_OK && !keep);
      if (rc == SHALE_OK) rc = r2;
    }
    int wr = 0;
    for (int i = 0; i < v->ndb; i++)
      if ((v->own_mask & (1u << i)) && v->dbv[i] && btree_txn_state(v->dbv[i]) == PAGER_TXN_WRITE)
        wr = 1;
    if (rc == SHALE_OK || keep) { /* the virtual tables' xSync first */
      int vr = vm_vtab_sync(v);
      if (vr != SHALE_OK) {
        rc = vr;
        keep = 0;
      }
    }
    if ((rc == SHALE_OK || keep) && wr && h && h->commit && h->commit(h->ctx)) {
      vm_rollback_owned(v);
      rc = SHALE_CONSTRAINT_COMMITHOOK;
      set_err(v, rc, "constraint failed");
    } else if (rc == SHALE_OK || keep) {
      /* several journal files: one atomic commit through a super-journal;
       * the other databases commit on their own */
      Btree *own[VM_MAX_DB];
      for (int i = 0; i < v->ndb; i++) own[i] = (v->own_mask & (1u << i)) ? v->dbv[i] : NULL;
      int done = 0;
      int r3 = v->ndb > 1 ? btree_commit_super(own, v->ndb, 0, &done) : SHALE_OK;
      if (done && r3 != SHALE_OK) {
        vm_rollback_owned(v);
        if (rc == SHALE_OK) {
          rc = r3;
          if (!v->errmsg) set_err(v, rc, "commit failed");
        }
        v->own_mask = 0;
      }
      for (int i = 0; i < v->ndb; i++) {
        Btree *b = v->dbv[i];
        if (!(v->own_mask & (1u << i)) || !b) continue;
        int r2 = btree_commit(b);
        v->own_mask &= ~(1u << i);
        if (r2) {
          btree_rollback(b);
          vm_rollback_owned(v);
          if (rc == SHALE_OK) {
            rc = r2;
            if (!v->errmsg) set_err(v, rc, "commit failed");
          }
          break;
        }
      }
      v->own_mask = 0;
    } else {
      vm_rollback_owned(v);
    }
    vm_vtab_end(v, rc == SHALE_OK || keep); /* xCommit / xRollback */
    v->own_txn = 0;
    v->stmt_sp = -1;
  } else if (rc != SHALE_OK && (v->oe == VM_OE_ROLLBACK || special_error(v, rc))) {
    int any = v->txn_rolled_back, wr = 0;
    for (int i = 0; i < v->ndb; i++)
      if (v->dbv[i] && btree_txn_state(v->dbv[i]) == PAGER_TXN_WRITE) any = wr = 1;
    if (any) {
      for (int i = 0; i < v->ndb; i++)
        if (v->dbv[i] && btree_txn_state(v->dbv[i]) != PAGER_TXN_NONE) btree_rollback(v->dbv[i]);
      if (wr && h && h->rollback) h->rollback(h->ctx);
      v->txn_rolled_back = 1;
      v->sp_mask = 0;
      v->stmt_sp = -1;
      v->vtab_sp = -1; /* the transaction is gone, its levels with it */
    } else if (v->stmt_sp >= 0) {
      vm_stmt_sp_end(v, 1);
      fk_deferred_set(v, v->stmt_def_fk, v->stmt_def_imm_fk);
    }
  } else if (v->stmt_sp >= 0) {
    int undo = rc != SHALE_OK && v->oe != VM_OE_FAIL;
    if (v->sole_writer && !v->parent) { /* the caller ends the vtabs' part (vm_set_sole_writer) */
      v->undo_vtabs = undo;
      vm_vtab_stmt_sp_drop(v);
    }
    int r2 = vm_stmt_sp_end(v, undo);
    if (undo) fk_deferred_set(v, v->stmt_def_fk, v->stmt_def_imm_fk);
    if (rc == SHALE_OK) rc = r2;
  }
  if (v->gave_txn && rc != SHALE_OK && !v->parent)
    v->undo_all = !(v->oe == VM_OE_FAIL && (rc & 0xff) == SHALE_CONSTRAINT);
  v->halted = 1;
  v->rc = rc;
  return rc == SHALE_OK ? SHALE_DONE : rc;
}

static int call_error(Vm *v, FuncCtx *ctx) {
  int rc = ctx->rc;
  shale_free(v->errmsg);
  v->errmsg = ctx->errmsg;
  ctx->errmsg = NULL;
  func_ctx_reset(ctx);
  return rc;
}

/* SQLITE_LIMIT_LENGTH in force. */
static int64_t max_len(const Vm *v) {
  return v->hooks && v->hooks->max_length > 0 ? v->hooks->max_length : FUNC_MAX_LENGTH_DEFAULT;
}

/* A function context with the connection's limits. */
static void ctx_limits(const Vm *v, FuncCtx *ctx) {
  if (!v->hooks) return;
  ctx->max_length = v->hooks->max_length;
  ctx->max_like_pattern = v->hooks->max_like_pattern;
}

/* func_ctx_reset for a context about to go out of scope. */
static inline void ctx_done(FuncCtx *ctx) {
  value_clear(&ctx->result);
  if (ctx->errmsg) shale_free(ctx->errmsg);
}

/* The progress handler and interrupt check, run when the op count reaches
 * check_at; schedules the next one. SHALE_INTERRUPT stops the run. */
static int vm_check(Vm *v) {
  const VmConnHooks *h = v->hooks;
  int64_t nstep = v->check_at - v->left;
  int64_t next = INT64_MAX;
  if (h && h->interrupt) {
    if (*h->interrupt) {
      set_err(v, SHALE_INTERRUPT, "interrupted");
      return SHALE_INTERRUPT;
    }
    next = nstep + VM_INTERRUPT_EVERY;
  }
  if (h && h->progress && h->progress_n > 0) {
    int64_t n = h->progress_n;
    if (nstep > 0 && nstep % n == 0 && h->progress(h->ctx)) {
      set_err(v, SHALE_INTERRUPT, "interrupted");
      return SHALE_INTERRUPT;
    }
    int64_t p = (nstep / n + 1) * n;
    if (p < next) next = p;
  }
  v->check_at = next;
  v->left = next - nstep;
  v->checked_hooks = h;
  v->checked_gen = h ? h->check_gen : 0;
  return SHALE_OK;
}

int64_t vm_stat(Vm *v, int which) {
  switch (which) {
    case VM_STAT_FULLSCAN_STEP:
      return v->nfullscan;
    case VM_STAT_SORT:
      return v->nsort;
    case VM_STAT_VM_STEP:
      return v->check_at - v->left;
    default:
      return 0;
  }
}

/* Insert record d (a key: index entry or WITHOUT ROWID row) through index
 * cursor c. Every probe of the seek compares typed values (the cursor's
 * comparator is record_compare): key[0..nkey), the values d was made from,
 * when the caller has them (key != NULL), else d unpacked once; a key of
 * more than 16 values without them takes the packed comparison. */
static int index_insert(VmCursor *c, const ShValue *d, const ShValue *key, int nkey, int flags) {
  ShValue kv[16];
  int nkv, rc;
  c->ki->corrupt = 0;
  /* BTREE_SEEKRESULT: the place is known and a seek is only the fallback
   * (the cursor moved): no comparator is picked, no record unpacked */
  const int placed = (flags & BTREE_SEEKRESULT) != 0;
  if (key || (!placed && record_unpack(d->z, d->n, kv, 16, &nkv) == SHALE_OK)) {
    RecordSeek rs = {.ki = c->ki,
                     .key = key ? key : kv,
                     .nkey = key ? nkey : nkv,
                     .default_rc = RECORD_SEEK_WHOLE};
    rc = btree_insert_cmp(c->bc, d->z, d->n, placed ? record_seek_cmp : record_seek_pick(&rs), &rs,
                          flags);
  } else {
    rc = btree_insert(c->bc, 0, d->z, d->n, 0, flags);
  }
  if (rc == SHALE_OK && c->ki->corrupt) rc = SHALE_CORRUPT;
  return rc;
}

/* Registers about to be written into a record, or compared with the records
 * of a database whose text is not UTF-8 (v->enc): *out is a copy of
 * in[0..n) with its text in that encoding (src/record/textenc.c), released
 * by enc_free. Only called when v->enc is not RECORD_ENC_UTF8. */
static int enc_values(const Vm *v, const ShValue *in, int n, ShValue **out) {
  *out = shale_malloc(sizeof(ShValue) * (size_t)(n > 0 ? n : 1));
  if (!*out) return SHALE_NOMEM;
  int rc = record_values_encode(in, n, v->enc, *out);
  if (rc) {
    shale_free(*out);
    *out = NULL;
  }
  return rc;
}
static void enc_free(ShValue *vals, int n) {
  if (!vals) return;
  record_values_clear(vals, n);
  shale_free(vals);
}

/* The KeyInfo of a cursor over records whose text is in v->enc: *ki, or
 * (UTF-16 and a collation other than BINARY) a copy the cursor owns. Called
 * on a closed cursor. */
static int cursor_ki(const Vm *v, VmCursor *c, KeyInfo **ki) {
  if (v->enc == RECORD_ENC_UTF8 || !*ki) return SHALE_OK;
  int rc;
  KeyInfo *k = record_keyinfo_for_enc(*ki, v->enc, &rc);
  if (k) {
    c->ki_own = k;
    *ki = k;
  }
  return rc;
}

/* ---- the interpreter ---- */

int vm_step(Vm *v) {
  if (v->halted) vm_reset(v);
  v->stepped = 1;
  v->now_ms = 0;
  const VmOp *ops = v->prog->ops;
  /* the op being run: the program counter (PC is its address) */
  const VmOp *op;
  ShValue *reg = v->reg;
  unsigned jt = (unsigned)v->pc; /* a jump's target (JUMP) */
  int rc = SHALE_OK;
  char tbuf[32], tbuf2[32];

#ifdef VM_USE_GOTO
  static void *const labels[] = {
#define OP(name, jumps, doc) &&L_##name,
#include "opcodes.def"
#undef OP
  };
#define CASE(name) L_##name:
#else
#define CASE(name) case OP_##name:
#endif
#define PC ((int)(op - ops))
/* Both dispatch styles re-enter at `dispatch` (a jump: the target is
 * checked) or `dispatch_next` (the op after this one: no check needed, as
 * ops[nop] is a Halt, vm_builder_finish). */
#define NEXT()          \
  do {                  \
    op++;               \
    goto dispatch_next; \
  } while (0)
#define JUMP(to)         \
  do {                   \
    jt = (unsigned)(to); \
    goto dispatch;       \
  } while (0)
/* A jump to the p2 of an op vm_builder_finish checked (its jumps_unchecked) */
#define JUMP_IN(to)     \
  do {                  \
    op = &ops[(to)];    \
    goto dispatch_next; \
  } while (0)
#define FAIL(code) \
  do {             \
    rc = (code);   \
    goto abort;    \
  } while (0)
#define CHK(expr)       \
  do {                  \
    rc = (expr);        \
    if (rc) goto abort; \
  } while (0)

  const unsigned nop = (unsigned)v->prog->nop;
  v->actx_ok = 0;
  v->sctx_ok = 0;
  /* v->left kept in a local while the loop runs: stored back before
   * vm_check and on every way out (v->left is then exact again) */
  int64_t left = v->left;
  const VmConnHooks *hk = v->hooks;
  if (left <= 0 || hk != v->checked_hooks || (hk && hk->check_gen != v->checked_gen)) {
    /* hooks changed since the schedule was made (or an interrupt ended
     * the last run at a check): check at the first op */
    v->check_at = v->check_at - left + 1;
    left = 1;
  }
  op = ops; /* (PC is defined before the first dispatch) */
dispatch:
  if (jt >= nop) { /* also a negative target */
    v->left = left;
    v->pc = (int)jt;
    return halt(v, SHALE_OK);
  }
  op = &ops[jt];
dispatch_next:
  if (--left == 0) {
    v->left = 0;
    rc = vm_check(v);
    left = v->left;
    if (rc) goto abort;
  }
#ifdef VM_USE_GOTO
  goto *labels[op->op];
#else
  switch (op->op) {
#endif

  /* ---- control flow ---- */
  CASE(Init) { JUMP(op->p2 > 0 ? op->p2 : PC + 1); }
  CASE(Goto) { JUMP(op->p2); }
  CASE(Gosub) {
    value_clear(&reg[op->p1]);
    value_set_int(&reg[op->p1], PC);
    JUMP(op->p2);
  }
  CASE(Return) { JUMP((int)reg[op->p1].i + 1); }
  CASE(InitCoroutine) {
    value_clear(&reg[op->p1]);
    value_set_int(&reg[op->p1], op->p3 - 1);
    if (op->p2) JUMP(op->p2);
    NEXT();
  }
  CASE(EndCoroutine) {
    const VmOp *caller = &ops[reg[op->p1].i];
    assert(caller->op == OP_Yield);
    value_set_null(&reg[op->p1]);
    JUMP(caller->p2);
  }
  CASE(Yield) {
    int dest = (int)reg[op->p1].i;
    value_set_int(&reg[op->p1], PC);
    JUMP(dest + 1);
  }
  CASE(Halt) {
    if (op->p1 != SHALE_OK) {
      set_err(v, op->p1, op->p4type == P4_TEXT ? op->p4.z : NULL);
      v->oe = op->p2;
      FAIL(op->p1);
    }
    v->oe = op->p2; /* VM_OE_IGNORE here is RAISE(IGNORE) in a sub-program */
    v->pc = PC;
    v->left = left;
    return halt(v, SHALE_OK);
  }
  CASE(HaltIfNull) {
    if (reg[op->p3].type == SHALE_NULL) {
      int code = op->p1 ? op->p1 : SHALE_CONSTRAINT_NOTNULL;
      set_err(v, code, op->p4type == P4_TEXT ? op->p4.z : "NOT NULL constraint failed");
      v->oe = op->p2;
      FAIL(code);
    }
    NEXT();
  }
  CASE(TypeCheck) {
    static const int want[] = {0, SHALE_INTEGER, SHALE_FLOAT, SHALE_TEXT, SHALE_BLOB};
    static const char *const tname[] = {"", "INT", "REAL", "TEXT", "BLOB", "NULL"};
    int t = reg[op->p1].type;
    if (t != SHALE_NULL && op->p2 >= 1 && op->p2 <= 4 && t != want[op->p2]) {
      char msg[600];
      snprintf(msg, sizeof msg, "cannot store %s value in %s", t >= 1 && t <= 5 ? tname[t] : "?",
               op->p4type == P4_TEXT ? op->p4.z : "column");
      set_err(v, SHALE_CONSTRAINT_DATATYPE, msg);
      v->oe = VM_OE_ABORT;
      FAIL(SHALE_CONSTRAINT_DATATYPE);
    }
    NEXT();
  }
  CASE(If) {
    if (record_value_is_true(&reg[op->p1], op->p3)) JUMP(op->p2);
    NEXT();
  }
  CASE(IfNot) {
    if (!record_value_is_true(&reg[op->p1], !op->p3)) JUMP(op->p2);
    NEXT();
  }
  CASE(IsNull) {
    if (reg[op->p1].type == SHALE_NULL) JUMP(op->p2);
    NEXT();
  }
  CASE(NotNull) {
    if (reg[op->p1].type != SHALE_NULL) JUMP(op->p2);
    NEXT();
  }
  CASE(Once) {
    if (v->once[PC]) JUMP(op->p2);
    v->once[PC] = 1;
    NEXT();
  }
  CASE(IfPos) {
    ShValue *x = &reg[op->p1];
    if (x->type == SHALE_INTEGER && x->i > 0) {
      x->i -= op->p3;
      JUMP(op->p2);
    }
    NEXT();
  }
  CASE(IfNotZero) {
    ShValue *x = &reg[op->p1];
    if (x->type == SHALE_INTEGER && x->i != 0) {
      if (x->i > 0) x->i--;
      JUMP(op->p2);
    }
    NEXT();
  }
  CASE(DecrJumpZero) {
    ShValue *x = &reg[op->p1];
    if (x->type == SHALE_INTEGER) {
      if (x->i > INT64_MIN) x->i--;
      if (x->i == 0) JUMP(op->p2);
    }
    NEXT();
  }
  CASE(MustBeInt) {
    ShValue *x = &reg[op->p1];
    if (x->type != SHALE_INTEGER) {
      if (x->type == SHALE_TEXT || x->type == SHALE_FLOAT)
        CHK(record_value_apply_affinity(x, AFF_NUMERIC));
      if (x->type != SHALE_INTEGER) {
        if (op->p2 == 0) {
          set_err(v, SHALE_MISMATCH, "datatype mismatch");
          FAIL(SHALE_MISMATCH);
        }
        JUMP(op->p2);
      }
    }
    NEXT();
  }
  CASE(Jump) { JUMP(v->cmp_result < 0 ? op->p1 : v->cmp_result == 0 ? op->p2 : op->p3); }
  CASE(Noop) { NEXT(); }
  CASE(Trace) {
    if (v->hooks && v->hooks->trace && op->p4type == P4_TEXT)
      v->hooks->trace(v->hooks->ctx, op->p4.z);
    NEXT();
  }

  /* ---- constants and moves ---- */
  CASE(Integer) {
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], op->p1);
    NEXT();
  }
  CASE(Int64) {
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], *op->p4.pi);
    NEXT();
  }
  CASE(Real) {
    value_clear(&reg[op->p2]);
    value_set_real(&reg[op->p2], *op->p4.pr);
    NEXT();
  }
  CASE(String) {
    value_clear(&reg[op->p2]);
    value_set_text(&reg[op->p2], op->p4.z, (uint32_t)op->p1);
    NEXT();
  }
  CASE(Blob) {
    value_clear(&reg[op->p2]);
    value_set_blob(&reg[op->p2], op->p4.z, (uint32_t)op->p1);
    NEXT();
  }
  CASE(Null) {
    int last = op->p3 > op->p2 ? op->p3 : op->p2;
    for (int r = op->p2; r <= last; r++) value_clear(&reg[r]);
    NEXT();
  }
  CASE(Variable) {
    value_clear(&reg[op->p2]);
    reg[op->p2] = v->var[op->p1];
    reg[op->p2].flags &= (uint8_t)~VAL_OWNED;
    NEXT();
  }
  CASE(Move) {
    for (int i = 0; i < op->p3; i++) {
      int s = op->p1 + i, d = op->p2 + i;
      value_clear(&reg[d]);
      reg[d] = reg[s];
      VmBuf t = v->rbuf[d];
      v->rbuf[d] = v->rbuf[s];
      v->rbuf[s] = t;
      value_set_null(&reg[s]);
    }
    NEXT();
  }
  CASE(Copy) {
    for (int i = 0; i <= op->p3; i++) {
      int s = op->p1 + i, d = op->p2 + i;
      ShValue x = reg[s];
      if (x.type == SHALE_TEXT || x.type == SHALE_BLOB) {
        char *z = vm_buf_need(&v->rbuf[d], x.n + 1);
        if (!z) FAIL(SHALE_NOMEM);
        if (x.n) memmove(z, x.z, x.n);
        z[x.n] = 0;
        x.z = z;
      }
      /* a copy keeps the subtype (unless p5 says drop it, as a read
       * through a subquery does) and a pointer, not the ownership */
      x.flags &= op->p5 & 1 ? 0 : VAL_SUBTYPE | VAL_POINTER;
      value_clear(&reg[d]);
      reg[d] = x;
    }
    NEXT();
  }
  CASE(SCopy) {
    ShValue x = reg[op->p1];
    x.flags &= (uint8_t)~VAL_OWNED;
    value_clear(&reg[op->p2]);
    reg[op->p2] = x;
    NEXT();
  }
  CASE(IntCopy) {
    int64_t i = reg[op->p1].i;
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], i);
    NEXT();
  }
  CASE(ResultRow) {
    if (v->nfk > 0 && !v->parent) { /* as SQLite: no row of a statement violating
                                       immediate FK constraints (RETURNING) */
      set_err(v, SHALE_CONSTRAINT_FOREIGNKEY, "FOREIGN KEY constraint failed");
      v->oe = VM_OE_ABORT;
      FAIL(SHALE_CONSTRAINT_FOREIGNKEY);
    }
    v->res_base = op->p1;
    v->res_n = op->p2;
    v->pc = PC + 1;
    v->left = left;
    return SHALE_ROW;
  }

  /* ---- arithmetic, text, logic ---- */
  CASE(Add)
  CASE(Subtract)
  CASE(Multiply)
  CASE(Divide)
  CASE(Remainder) {
    const ShValue *a = &reg[op->p1], *b = &reg[op->p2];
    ShValue res;
    int64_t ir;
    if (a->type == SHALE_INTEGER && b->type == SHALE_INTEGER && int_arith(op->op, b->i, a->i, &ir))
      value_set_int(&res, ir); /* the usual case, without the call */
    else
      arith(op->op, a, b, &res);
    value_clear(&reg[op->p3]);
    reg[op->p3] = res;
    NEXT();
  }
  CASE(Negative) {
    ShValue zero, res;
    value_set_int(&zero, 0);
    arith(OP_Subtract, &reg[op->p1], &zero, &res);
    value_clear(&reg[op->p2]);
    reg[op->p2] = res;
    NEXT();
  }
  CASE(Concat) {
    ShValue *a = &reg[op->p1], *b = &reg[op->p2];
    if (a->type == SHALE_NULL || b->type == SHALE_NULL) {
      value_clear(&reg[op->p3]);
      NEXT();
    }
    const char *za, *zb;
    uint32_t na, nb;
    record_value_text_view(a, tbuf, &za, &na);
    record_value_text_view(b, tbuf2, &zb, &nb);
    uint64_t n = (uint64_t)na + nb;
    if ((int64_t)n > max_len(v)) {
      set_err(v, SHALE_TOOBIG, "string or blob too big");
      FAIL(SHALE_TOOBIG);
    }
    char *z = vm_buf_need(&v->scratch, (uint32_t)n + 1);
    if (!z) FAIL(SHALE_NOMEM);
    if (nb) memcpy(z, zb, nb);
    if (na) memcpy(z + nb, za, na);
    z[n] = 0;
    value_clear(&reg[op->p3]);
    swap_scratch(v, op->p3);
    value_set_text(&reg[op->p3], z, (uint32_t)n);
    NEXT();
  }
  CASE(BitAnd)
  CASE(BitOr)
  CASE(ShiftLeft)
  CASE(ShiftRight) {
    ShValue *in1 = &reg[op->p1], *in2 = &reg[op->p2];
    if (in1->type == SHALE_NULL || in2->type == SHALE_NULL) {
      value_clear(&reg[op->p3]);
      NEXT();
    }
    int64_t a = record_value_int64(in2), b = record_value_int64(in1);
    int o = op->op;
    if (o == OP_BitAnd) {
      a &= b;
    } else if (o == OP_BitOr) {
      a |= b;
    } else if (b != 0) {
      if (b < 0) {
        o = o == OP_ShiftLeft ? OP_ShiftRight : OP_ShiftLeft;
        b = b > -64 ? -b : 64;
      }
      if (b >= 64) {
        a = (a >= 0 || o == OP_ShiftLeft) ? 0 : -1;
      } else {
        uint64_t u;
        memcpy(&u, &a, sizeof u);
        if (o == OP_ShiftLeft) {
          u <<= b;
        } else {
          u >>= b;
          if (a < 0) u |= ~(uint64_t)0 << (64 - b);
        }
        memcpy(&a, &u, sizeof a);
      }
    }
    value_clear(&reg[op->p3]);
    value_set_int(&reg[op->p3], a);
    NEXT();
  }
  CASE(BitNot) {
    ShValue *x = &reg[op->p1];
    int64_t r = x->type == SHALE_NULL ? 0 : ~record_value_int64(x);
    int isnull = x->type == SHALE_NULL;
    value_clear(&reg[op->p2]);
    if (!isnull) value_set_int(&reg[op->p2], r);
    NEXT();
  }
  CASE(AddImm) {
    int64_t i = record_value_int64(&reg[op->p1]);
    value_clear(&reg[op->p1]);
    value_set_int(&reg[op->p1], (int64_t)((uint64_t)i + (uint64_t)(int64_t)op->p2));
    NEXT();
  }
  CASE(Not) {
    ShValue *x = &reg[op->p1];
    int isnull = x->type == SHALE_NULL, t = isnull ? 0 : record_value_is_true(x, 0);
    value_clear(&reg[op->p2]);
    if (!isnull) value_set_int(&reg[op->p2], !t);
    NEXT();
  }
  CASE(And)
  CASE(Or) {
    ShValue *a = &reg[op->p1], *b = &reg[op->p2];
    int va = a->type == SHALE_NULL ? 2 : record_value_is_true(a, 0);
    int vb = b->type == SHALE_NULL ? 2 : record_value_is_true(b, 0);
    int r;
    if (op->op == OP_And) {
      static const uint8_t and_tab[9] = {0, 0, 0, 0, 1, 2, 0, 2, 2};
      r = and_tab[va * 3 + vb];
    } else {
      static const uint8_t or_tab[9] = {0, 1, 2, 1, 1, 1, 2, 1, 2};
      r = or_tab[va * 3 + vb];
    }
    value_clear(&reg[op->p3]);
    if (r != 2) value_set_int(&reg[op->p3], r);
    NEXT();
  }
  CASE(IsTrue) {
    int t = record_value_is_true(&reg[op->p1], op->p3);
    t ^= op->p4type == P4_INT32 ? op->p4.i : 0;
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], t);
    NEXT();
  }
  CASE(Cast) {
    CHK(record_value_cast(&reg[op->p1], (char)op->p2));
    NEXT();
  }
  CASE(Affinity) {
    const char *aff = op->p4.z;
    for (int i = 0; i < op->p2 && aff[i]; i++)
      if (!affinity_keeps(&reg[op->p1 + i], aff[i]))
        CHK(record_value_apply_affinity(&reg[op->p1 + i], aff[i]));
    NEXT();
  }
  CASE(RealAffinity) {
    ShValue *x = &reg[op->p1];
    if (x->type == SHALE_INTEGER) value_set_real(x, (double)x->i);
    NEXT();
  }
  /* Each comparison first tries two integers or two reals that jump on the
   * result: no affinity but TEXT changes them, and they compare in place with
   * the op's own operator (a NaN, which no register should hold, takes the
   * general path, as does a result stored in p2). */
#define CMP_FAST(OPR)                                                     \
  {                                                                       \
    const ShValue *pa = &reg[op->p3], *pb = &reg[op->p1];                 \
    if (pa->type == pb->type && !(op->p5 & VM_CMP_SLOW)) {                \
      if (pa->type == SHALE_INTEGER) {                                    \
        if (pa->i OPR pb->i) JUMP_IN(op->p2);                             \
        NEXT();                                                           \
      }                                                                   \
      if (pa->type == SHALE_FLOAT && (pa->r < pb->r || pa->r >= pb->r)) { \
        if (pa->r OPR pb->r) JUMP_IN(op->p2);                             \
        NEXT();                                                           \
      }                                                                   \
    }                                                                     \
    goto cmp_general;                                                     \
  }
  // clang-format off
  CASE(Eq) CMP_FAST(==)
  CASE(Ne) CMP_FAST(!=)
  CASE(Lt) CMP_FAST(<)
  CASE(Le) CMP_FAST(<=)
  CASE(Gt) CMP_FAST(>)
  CASE(Ge) CMP_FAST(>=)
#undef CMP_FAST
cmp_general: {
    // clang-format on
    const ShValue *pa = &reg[op->p3], *pb = &reg[op->p1];
    int res, jump;
    if (pa->type == pb->type && (op->p5 & VM_AFF_MASK) != 2) {
      if (pa->type == SHALE_INTEGER) {
        res = (pa->i > pb->i) - (pa->i < pb->i);
        goto cmp_done;
      }
      if (pa->type == SHALE_FLOAT && (pa->r < pb->r || pa->r >= pb->r)) {
        res = (pa->r > pb->r) - (pa->r < pb->r);
        goto cmp_done;
      }
    }
    ShValue a = *pa, b = *pb;
    if (a.type == SHALE_NULL || b.type == SHALE_NULL) {
      if (op->p5 & VM_NULLEQ) {
        res = (a.type == SHALE_NULL && b.type == SHALE_NULL) ? 0 : 1;
      } else {
        if (op->p5 & VM_STOREP2) {
          value_clear(&reg[op->p2]);
        } else if (op->p5 & VM_JUMPIFNULL) {
          JUMP(op->p2);
        }
        NEXT();
      }
    } else {
      int aff = op->p5 & VM_AFF_MASK;
      if (aff) {
        cmp_affinity(&a, aff, tbuf);
        cmp_affinity(&b, aff, tbuf2);
      }
      res = record_value_compare(&a, &b, op->p4type == P4_COLL ? op->p4.coll : NULL);
    }
  cmp_done:
    switch (op->op) {
      case OP_Eq:
        jump = res == 0;
        break;
      case OP_Ne:
        jump = res != 0;
        break;
      case OP_Lt:
        jump = res < 0;
        break;
      case OP_Le:
        jump = res <= 0;
        break;
      case OP_Gt:
        jump = res > 0;
        break;
      default:
        jump = res >= 0;
        break;
    }
    if (op->p5 & VM_STOREP2) {
      value_clear(&reg[op->p2]);
      value_set_int(&reg[op->p2], jump);
      NEXT();
    }
    if (jump) JUMP(op->p2);
    NEXT();
  }
  CASE(Compare) {
    const KeyInfo *ki = op->p4.ki;
    int res = 0;
    for (int i = 0; i < ki->ncol && res == 0; i++) {
      res = record_value_compare(&reg[op->p1 + i], &reg[op->p2 + i], ki->coll ? ki->coll[i] : NULL);
      if (ki->desc && ki->desc[i]) res = -res;
    }
    v->cmp_result = res;
    NEXT();
  }
  CASE(CollSeq) {
    v->coll = op->p4.coll;
    NEXT();
  }
  CASE(Function) {
    FuncCtx *ctx = &v->sctx;
    if (!v->sctx_ok) {
      *ctx = (FuncCtx){.conn = v->conn,
                       .cb = v->cb,
                       .aux = &v->aux,
                       .now_ms = &v->now_ms,
                       .result = {.type = SHALE_NULL}};
      ctx_limits(v, ctx);
      v->sctx_ok = 1;
    }
    ctx->def = op->p4.func;
    ctx->coll = v->coll;
    ctx->aux_site = PC;
    ctx->pure = v->pure;
    v->coll = NULL;                              /* CollSeq applies to the next call only */
    v->pure = 0;                                 /* PureFunc applies to the next call only */
    if (v->aux) func_pointers_drop(&v->aux, PC); /* the last call's pointer result goes */
    op->p4.func->scalar(ctx, op->p5, &reg[op->p2]);
    if (v->aux) func_auxdata_drop(&v->aux, PC, (uint32_t)op->p1);
    if (ctx->rc) {
      v->sctx_ok = 0; /* rebuilt by the next call */
      FAIL(call_error(v, ctx));
    }
    ShValue res;
    func_ctx_take_result(ctx, &res);
    ctx->subtype = 0;
    if (ctx->errmsg || ctx->agg) { /* a message without an error; a scalar's state */
      v->sctx_ok = 0;
      ctx_done(ctx);
      shale_free(ctx->agg);
    }
    if ((res.type == SHALE_TEXT || res.type == SHALE_BLOB) && (int64_t)res.n > max_len(v)) {
      value_clear(&res);
      set_err(v, SHALE_TOOBIG, "string or blob too big");
      FAIL(SHALE_TOOBIG);
    }
    value_clear(&reg[op->p3]);
    reg[op->p3] = res;
    NEXT();
  }
  CASE(AggStep)
  CASE(AggInverse) {
    VmAgg *slot = &v->agg[op->p3];
    if (op->p1 < 0 && op->op == OP_AggStep && slot->agg && slot->def == op->p4.func &&
        op->p4.func->step_state) {
      /* the state block exists: the step without a call context (count,
       * sum ...), which cannot fail and leaves no result */
      op->p4.func->step_state(slot->agg, op->p5, &reg[op->p2]);
      v->coll = NULL;
      v->agg_skip = 0;
      NEXT();
    }
    if (op->op == OP_AggStep && op->p1 >= 0 && v->cur[op->p1].kind == VMC_HASH) {
      int found; /* DISTINCT through a hash set */
      CHK(vm_hash_add(v, &v->cur[op->p1], &reg[op->p2], &found));
      if (found) {
        v->agg_skip = 2;
        NEXT();
      }
    } else if (op->op == OP_AggStep && op->p1 >= 0) { /* DISTINCT: skip arguments seen before */
      VmCursor *dc = &v->cur[op->p1];
      const ShValue *in = &reg[op->p2];
      ShValue *conv = NULL;
      if (v->enc != RECORD_ENC_UTF8) CHK(enc_values(v, in, op->p5, &conv));
      if (conv) in = conv;
      size_t n = record_encoded_size(in, op->p5);
      char *z = vm_buf_need(&v->keybuf, (uint32_t)n);
      int res;
      if (z) record_encode(in, op->p5, (uint8_t *)z);
      enc_free(conv, op->p5);
      if (!z) FAIL(SHALE_NOMEM);
      dc->cache_ok = 0;
      CHK(btree_seek_key(dc->bc, z, (uint32_t)n, &res));
      if (res == 0 && !btree_eof(dc->bc)) {
        v->agg_skip = 2;
        NEXT();
      }
      CHK(btree_insert(dc->bc, 0, z, (uint32_t)n, 0, 0));
    }
    FuncCtx *ctx = &v->actx;
    if (!v->actx_ok) {
      *ctx = (FuncCtx){.conn = v->conn, .cb = v->cb, .result = {.type = SHALE_NULL}};
      ctx_limits(v, ctx);
      v->actx_ok = 1;
    }
    ctx->def = op->p4.func;
    ctx->coll = v->coll;
    agg_slot_to_ctx(slot, ctx);
    v->coll = NULL;
    slot->def = op->p4.func;
    if (op->op == OP_AggStep)
      op->p4.func->step(ctx, op->p5, &reg[op->p2]);
    else
      op->p4.func->inverse(ctx, op->p5, &reg[op->p2]);
    agg_ctx_to_slot(ctx, slot);
    v->agg_skip = ctx->skip_accum_load != 0;
    if (ctx->rc) {
      v->actx_ok = 0; /* rebuilt by the next call */
      FAIL(call_error(v, ctx));
    }
    if (ctx->result.type != SHALE_NULL || ctx->result.flags || ctx->errmsg) {
      ctx_done(ctx); /* a step that left a result or message behind */
      ctx->errmsg = NULL;
    }
    ctx->skip_accum_load = 0;
    ctx->subtype = 0;
    NEXT();
  }
  CASE(AggHit) {
    if (v->agg_skip != 2) {
      value_clear(&reg[op->p1]);
      value_set_int(&reg[op->p1], v->agg_skip);
    }
    NEXT();
  }
  CASE(AggValue) {
    VmAgg *slot = &v->agg[op->p1];
    FuncCtx ctx;
    func_ctx_init(&ctx, op->p4.func);
    ctx_limits(v, &ctx);
    ctx.conn = v->conn;
    ctx.cb = v->cb;
    agg_slot_to_ctx(slot, &ctx);
    op->p4.func->value(&ctx);
    agg_ctx_to_slot(&ctx, slot);
    if (ctx.rc) FAIL(call_error(v, &ctx));
    ShValue res;
    func_ctx_take_result(&ctx, &res);
    func_ctx_reset(&ctx);
    value_clear(&reg[op->p3]);
    reg[op->p3] = res;
    NEXT();
  }
  CASE(AggFinal) {
    VmAgg *slot = &v->agg[op->p1];
    FuncCtx ctx;
    func_ctx_init(&ctx, op->p4.func);
    ctx_limits(v, &ctx);
    ctx.coll = v->coll;
    ctx.conn = v->conn;
    ctx.cb = v->cb;
    agg_slot_to_ctx(slot, &ctx);
    func_agg_finish_keep(&ctx);
    agg_ctx_to_slot(&ctx, slot);
    slot->def = NULL;
    if (ctx.rc) FAIL(call_error(v, &ctx));
    ShValue res;
    func_ctx_take_result(&ctx, &res);
    func_ctx_reset(&ctx);
    value_clear(&reg[op->p1]);
    reg[op->p1] = res;
    NEXT();
  }

  /* ---- transactions and schema ---- */
  CASE(Transaction) {
    Btree *tb = vm_db(v, op->p1);
    if (v->hooks && v->hooks->text_enc) v->enc = *v->hooks->text_enc; /* known by now */
    if (!tb) {
      if (op->p1 == 1) NEXT(); /* temp not opened yet: nothing to read */
      FAIL(SHALE_INTERNAL);
    }
    if (op->p2 >= 1 && v->hooks && v->hooks->query_only && *v->hooks->query_only)
      FAIL(SHALE_READONLY);
    int st = btree_txn_state(tb);
    int want = op->p2 >= 1 ? PAGER_TXN_WRITE : PAGER_TXN_READ;
    uint32_t bit = 1u << op->p1;
    if (op->p2 >= 1) v->wrote = 1;
    if (st < want) {
      if (st == PAGER_TXN_NONE && (v->flags & VM_AUTOCOMMIT)) {
        v->own_mask |= bit;
        v->own_txn = 1;
      }
      rc = btree_begin(tb, op->p2 >= 2 ? BTREE_TXN_EXCLUSIVE
                           : op->p2    ? BTREE_TXN_WRITE
                                       : BTREE_TXN_READ);
      if (rc) {
        if (btree_txn_state(tb) == PAGER_TXN_NONE) v->own_mask &= ~bit;
        v->own_txn = v->own_mask != 0;
        goto abort;
      }
    }
    if (op->p2 >= 1 && !(v->own_mask & bit) && !(v->sp_mask & bit) &&
        (v->flags & VM_STMT_JOURNAL)) {
      /* VM_VTAB_SAVEPOINT: xSavepoint, as SQLite once per database written,
       * before the statement's savepoint opens (SQLite's OP_Transaction), so
       * what a module writes there (FTS5 its pending terms) outlives a
       * rollback of the statement */
      CHK(vm_vtab_stmt_sp(v, 0));
      int n = pager_savepoint_count(btree_pager(tb));
      CHK(btree_savepoint_open(tb, n + 1));
      v->sp_db[op->p1] = n;
      v->sp_mask |= bit;
      v->stmt_sp = 0;
      if (v->sp_mask == bit) {
        v->stmt_def_fk = v->hooks && v->hooks->deferred_fk ? *v->hooks->deferred_fk : 0;
        v->stmt_def_imm_fk = v->hooks && v->hooks->deferred_imm_fk ? *v->hooks->deferred_imm_fk : 0;
      }
    }
    if (op->p5 & VM_TXN_CHECK_COOKIE) {
      uint32_t cookie;
      CHK(btree_get_meta(tb, BTREE_META_SCHEMA_COOKIE, &cookie));
      if (cookie != (uint32_t)op->p3) {
        set_err(v, SHALE_SCHEMA, "database schema has changed");
        FAIL(SHALE_SCHEMA);
      }
    }
    NEXT();
  }
  CASE(ReadCookie) {
    uint32_t x;
    Btree *dbt = vm_db(v, op->p1);
    if (!dbt) FAIL(SHALE_INTERNAL);
    CHK(btree_get_meta(dbt, op->p3, &x));
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], (int32_t)x);
    NEXT();
  }
  CASE(Pagecount) {
    value_clear(&reg[op->p2]);
    Btree *dbt = vm_db(v, op->p1);
    if (!dbt) FAIL(SHALE_INTERNAL);
    value_set_int(&reg[op->p2], (int64_t)btree_page_count(dbt));
    NEXT();
  }
  /* ---- window functions (vm_window.c) ---- */
  CASE(WinOpen) {
    static const ShValue none = {.type = SHALE_NULL};
    CHK(vm_win_open(v, &v->cur[op->p1], op->p4.win, op->p2 ? &reg[op->p2] : &none,
                    op->p3 ? &reg[op->p3] : &none));
    NEXT();
  }
  CASE(WinPush) {
    CHK(vm_win_push(v, &v->cur[op->p1], &reg[op->p2]));
    NEXT();
  }
  CASE(WinEnd) {
    CHK(vm_win_end(v, &v->cur[op->p1]));
    NEXT();
  }
  CASE(WinRow) {
    int got = vm_win_row(v, &v->cur[op->p1], &reg[op->p3]);
    if (got < 0) FAIL(-got);
    if (!got) JUMP(op->p2);
    NEXT();
  }
  CASE(SetCookie) {
    Btree *dbt = vm_db(v, op->p1);
    if (!dbt) FAIL(SHALE_INTERNAL);
    /* the text encoding a new file gets is the connection's (the main
     * database's: PRAGMA encoding) */
    uint32_t val = op->p2 == BTREE_META_TEXT_ENCODING ? (uint32_t)v->enc : (uint32_t)op->p3;
    CHK(btree_update_meta(dbt, op->p2, val));
    NEXT();
  }
  CASE(CreateBtree) {
    uint32_t root;
    Btree *dbt = vm_db(v, op->p1);
    if (!dbt) FAIL(SHALE_INTERNAL);
    CHK(btree_create_table(dbt, op->p3, &root));
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], root);
    NEXT();
  }
  CASE(Destroy) {
    Btree *dbt = vm_db(v, op->p3);
    if (!dbt) FAIL(SHALE_INTERNAL);
    CHK(btree_drop_table(dbt, (uint32_t)op->p1));
    NEXT();
  }
  CASE(Clear) {
    int64_t n = 0;
    Btree *dbt = vm_db(v, op->p2);
    if (!dbt) FAIL(SHALE_INTERNAL);
    if (v->hooks && v->hooks->preupdate && op->p4type == P4_TEXT)
      CHK(vm_preupdate_clear(v, op, dbt));
    CHK(btree_clear_table(dbt, (uint32_t)op->p1, &n));
    if (op->p3) v->nchange += n;
    invalidate_all(v);
    NEXT();
  }

  /* ---- cursors ---- */
  CASE(OpenRead)
  CASE(OpenWrite) {
    VmCursor *c = &v->cur[op->p1];
    uint32_t root = (uint32_t)op->p2;
    if ((op->p5 & VM_OPFLAG_P2ISREG) && op->op == OP_OpenWrite) root = (uint32_t)reg[op->p2].i;
    KeyInfo *ki = op->p4type == P4_KEYINFO ? op->p4.ki : NULL;
    int wr = op->op == OP_OpenWrite;
    if (c->parked && c->bc && c->root == root && c->db == op->p3 && c->wr == wr && c->ki == ki &&
        !(op->p5 & VM_OPFLAG_BULK)) {
      /* the cursor this op opened in the last run, kept where it was */
      btree_cursor_unpark(c->bc);
      c->parked = 0;
      c->nullrow = 0;
      c->cache_ok = 0;
      c->seq = 0;
      c->nfield = op->p4type == P4_INT32 ? op->p4.i : ki ? ki->ncol : 0;
      NEXT();
    }
    vm_cursor_close(v, c);
    Btree *dbt = vm_db(v, op->p3);
    if (!dbt) FAIL(SHALE_INTERNAL);
    CHK(cursor_ki(v, c, &ki));
    if ((op->p5 & VM_OPFLAG_BULK) && op->op == OP_OpenWrite && ki) {
      CHK(btree_bulk_open(dbt, root, BTREE_BLOBKEY, &c->bulk));
      c->kind = VMC_BULK;
      c->ki = ki;
      c->nfield = ki->ncol;
      NEXT();
    }
    CHK(btree_cursor_open(dbt, root, wr, ki ? record_compare : NULL, ki, &c->bc));
    c->kind = ki ? VMC_INDEX : VMC_TABLE;
    c->ki = ki;
    c->db = op->p3;
    c->root = root;
    c->wr = wr;
    c->nfield = op->p4type == P4_INT32 ? op->p4.i : ki ? ki->ncol : 0;
    NEXT();
  }
  CASE(OpenPseudo) {
    VmCursor *c = &v->cur[op->p1];
    vm_cursor_close(v, c);
    c->kind = VMC_PSEUDO;
    c->pseudo_reg = op->p2;
    c->nfield = op->p3;
    NEXT();
  }
  CASE(Close) {
    VmCursor *c = &v->cur[op->p1];
    if (c->bulk) {
      BtBulk *bk = c->bulk;
      c->bulk = NULL;
      CHK(btree_bulk_finish(bk)); /* frees the loader, also on error */
    }
    vm_cursor_close(v, c);
    if (op->p2) vm_sorter_release(c); /* a sorter done with for this run */
    NEXT();
  }
  CASE(NullRow) {
    VmCursor *c = &v->cur[op->p1];
    c->nullrow = 1;
    c->cache_ok = 0;
    NEXT();
  }
  CASE(IfNullRow) {
    if (v->cur[op->p1].nullrow) JUMP(op->p2);
    NEXT();
  }
  CASE(Rewind)
  CASE(Last) {
    VmCursor *c = &v->cur[op->p1];
    int empty;
    c->cache_ok = 0;
    c->nullrow = 0;
    CHK(op->op == OP_Rewind ? btree_first(c->bc, &empty) : btree_last(c->bc, &empty));
    if (empty) JUMP(op->p2);
    NEXT();
  }
  /* (a cursor already at its end stays there: SHALE_DONE); FULLSCAN_STEP
   * counts the steps that reached a row, as SQLite; p2 is within the
   * program (vm_builder_finish) */
#define STEP_ROW(c, step)                                           \
  do {                                                              \
    (c)->cache_ok = 0;                                              \
    (c)->nullrow = 0;                                               \
    rc = step((c)->bc);                                             \
    if (rc == SHALE_OK) {                                           \
      if ((c)->kind == VMC_TABLE && !(c)->eph_root) v->nfullscan++; \
      JUMP_IN(op->p2);                                              \
    }                                                               \
    if (rc != SHALE_DONE) goto abort;                               \
    rc = SHALE_OK;                                                  \
    NEXT();                                                         \
  } while (0)
  CASE(Next) {
    VmCursor *c = &v->cur[op->p1];
    STEP_ROW(c, btree_next_row);
  }
  CASE(Prev) {
    VmCursor *c = &v->cur[op->p1];
    STEP_ROW(c, btree_prev_row);
  }
#undef STEP_ROW
  CASE(SeekRowid)
  CASE(NotExists) {
    VmCursor *c = &v->cur[op->p1];
    ShValue x = reg[op->p3];
    x.flags &= (uint8_t)~VAL_OWNED; /* a view: the register keeps its text */
    int res;
    c->cache_ok = 0;
    c->nullrow = 0;
    if (x.type != SHALE_INTEGER) {
      if (x.type == SHALE_TEXT || x.type == SHALE_FLOAT)
        CHK(record_value_apply_affinity(&x, AFF_NUMERIC));
      if (x.type != SHALE_INTEGER) {
        value_clear(&x);
        JUMP(op->p2);
      }
    }
    CHK(btree_seek_rowid(c->bc, x.i, &res));
    if (res != 0) JUMP(op->p2);
    NEXT();
  }
  CASE(SeekGE)
  CASE(SeekGT)
  CASE(SeekLE)
  CASE(SeekLT) {
    VmCursor *c = &v->cur[op->p1];
    int sop = op->op, res, eof = 0;
    c->cache_ok = 0;
    c->nullrow = 0;
    if (c->kind == VMC_TABLE) {
      int64_t key;
      if (!seek_int_key(&reg[op->p3], &sop, &key)) JUMP(op->p2);
      CHK(btree_seek_rowid(c->bc, key, &res));
    } else {
      RecordSeek rs;
      ShValue *conv = NULL;
      rs.ki = c->ki;
      rs.key = &reg[op->p3];
      rs.nkey = op->p4.i;
      rs.default_rc = (sop == OP_SeekGE || sop == OP_SeekLT) ? 1 : -1;
      if (v->enc != RECORD_ENC_UTF8) CHK(enc_values(v, rs.key, rs.nkey, &conv));
      if (conv) rs.key = conv;
      c->ki->corrupt = 0;
      rc = btree_seek_cmp(c->bc, record_seek_pick(&rs), &rs, &res);
      enc_free(conv, rs.nkey);
      CHK(rc);
      if (c->ki->corrupt) FAIL(SHALE_CORRUPT);
    }
    if (btree_eof(c->bc)) JUMP(op->p2);
    switch (sop) {
      case OP_SeekGE:
        if (res < 0) CHK(btree_next(c->bc, &eof));
        break;
      case OP_SeekGT:
        if (res <= 0) CHK(btree_next(c->bc, &eof));
        break;
      case OP_SeekLE:
        if (res > 0) CHK(btree_prev(c->bc, &eof));
        break;
      default:
        if (res >= 0) CHK(btree_prev(c->bc, &eof));
        break;
    }
    if (eof) JUMP(op->p2);
    NEXT();
  }
  CASE(IdxGE)
  CASE(IdxGT)
  CASE(IdxLE)
  CASE(IdxLT) {
    VmCursor *c = &v->cur[op->p1];
    const uint8_t *rec;
    uint32_t n;
    if (!cursor_record(c, &rec, &n)) { /* the compare needs no header parse */
      CHK(cursor_cache(v, c));
      if (!c->rec) FAIL(SHALE_CORRUPT);
      rec = c->rec;
      n = c->nrec;
    }
    c->ki->corrupt = 0;
    ShValue *conv = NULL;
    if (v->enc != RECORD_ENC_UTF8) CHK(enc_values(v, &reg[op->p3], op->p4.i, &conv));
    int res = record_compare_unpacked(c->ki, rec, n, conv ? conv : &reg[op->p3], op->p4.i);
    enc_free(conv, op->p4.i);
    if (c->ki->corrupt) FAIL(SHALE_CORRUPT);
    int jump = op->op == OP_IdxGE   ? res >= 0
               : op->op == OP_IdxGT ? res > 0
               : op->op == OP_IdxLE ? res <= 0
                                    : res < 0;
    if (jump) JUMP_IN(op->p2);
    NEXT();
  }
  CASE(Found)
  CASE(NotFound)
  CASE(NoConflict) {
    VmCursor *c = &v->cur[op->p1];
    ShValue tmp[64];
    const ShValue *key = &reg[op->p3];
    int nkey = op->p4type == P4_INT32 ? op->p4.i : 0, res;
    c->cache_ok = 0;
    c->nullrow = 0;
    c->nc_n = 0;
    if (nkey == 0) { /* r[p3] is a record: unpack it */
      const ShValue *r = &reg[op->p3];
      uint32_t types[64], offs[64];
      CHK(record_parse_header(r->z, r->n, types, offs, 64, &nkey));
      for (int i = 0; i < nkey; i++)
        record_decode_value(types[i], (const uint8_t *)r->z + offs[i], &tmp[i]);
      key = tmp;
    }
    if (op->op == OP_NoConflict) {
      for (int i = 0; i < nkey; i++)
        if (key[i].type == SHALE_NULL) JUMP(op->p2);
    }
    ShValue *conv = NULL; /* a record's text is in v->enc already */
    if (v->enc != RECORD_ENC_UTF8 && key != tmp) CHK(enc_values(v, key, nkey, &conv));
    RecordSeek rs = {.ki = c->ki, .key = conv ? conv : key, .nkey = nkey};
    c->ki->corrupt = 0;
    rc = btree_seek_cmp(c->bc, record_seek_pick(&rs), &rs, &res);
    enc_free(conv, nkey);
    CHK(rc);
    if (c->ki->corrupt) FAIL(SHALE_CORRUPT);
    int found = res == 0 && !btree_eof(c->bc);
    if (op->op == OP_NoConflict && !found && key != tmp) {
      c->nc_reg = op->p3;
      c->nc_n = nkey;
      c->nc_seek = btree_seek_count(c->bc);
    }
    if (op->op == OP_Found ? found : !found) JUMP(op->p2);
    NEXT();
  }
  CASE(Column) {
    VmCursor *c = &v->cur[op->p1];
    ShValue *out = &reg[op->p3];
    if (c->nullrow) {
      value_clear(out);
      NEXT();
    }
    /* a few columns past the one asked for (VM_COLUMN_AHEAD) */
    if (!c->cache_ok)
      CHK(cursor_cache_quick(v, c, op->p2 + 1 + VM_COLUMN_AHEAD(op->p5)));
    else if (op->p2 >= c->hdr_ncol && !c->hdr_done)
      CHK(header_parse(c, op->p2 + 1 + VM_COLUMN_AHEAD(op->p5)));
    if (op->p2 < c->hdr_ncol) {
      /* the decode sets every field value_clear would: only release */
      if (out->flags & VAL_OWNED) shale_free((void *)out->z);
      record_decode_value(c->types[op->p2], c->rec + c->offsets[op->p2], out);
      if (c->colfix) { /* the rare column fix-ups, one test on the usual path */
        if (c->colfix & VM_COLFIX_ENC) CHK(record_text_decode(out, v->enc));
      }
    } else {
      value_clear(out);
      if (op->p4type == P4_VALUE) {
        *out = *op->p4.v;
        out->flags = 0;
      }
    }
    if (op->p5 & VM_COLUMN_REAL) { /* and the RealAffinity after it */
      if (out->type == SHALE_INTEGER) value_set_real(out, (double)out->i);
      op++;
    }
    NEXT();
  }
  CASE(Rowid) {
    VmCursor *c = &v->cur[op->p1];
    int64_t k;
    value_clear(&reg[op->p2]);
    if (!c->nullrow && c->bc && btree_rowid_here(c->bc, &k)) value_set_int(&reg[op->p2], k);
    NEXT();
  }
  CASE(IdxRowid) {
    VmCursor *c = &v->cur[op->p1];
    value_clear(&reg[op->p2]);
    if (c->nullrow) NEXT();
    { /* the usual entry: its last column read from the record's end */
      const uint8_t *rec;
      uint32_t n;
      int64_t rowid;
      if (cursor_record(c, &rec, &n) && record_last_int(rec, n, &rowid)) {
        value_set_int(&reg[op->p2], rowid);
        NEXT();
      }
    }
    if (!c->cache_ok)
      CHK(cursor_cache_cols(v, c, INT32_MAX));
    else if (!c->hdr_done)
      CHK(header_parse(c, INT32_MAX));
    if (c->hdr_ncol > 0) {
      ShValue x;
      record_decode_value(c->types[c->hdr_ncol - 1], c->rec + c->offsets[c->hdr_ncol - 1], &x);
      if (x.type != SHALE_INTEGER) FAIL(SHALE_CORRUPT);
      reg[op->p2] = x;
    }
    NEXT();
  }
  CASE(RowData) {
    VmCursor *c = &v->cur[op->p1];
    CHK(cursor_cache(v, c));
    value_clear(&reg[op->p2]);
    if (c->rec) value_set_blob(&reg[op->p2], c->rec, c->nrec);
    NEXT();
  }
  CASE(Count) {
    int64_t n;
    CHK(btree_count(v->cur[op->p1].bc, &n));
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], n);
    NEXT();
  }
  CASE(AnalyzeScan) {
    VmCursor *c = &v->cur[op->p1];
    int64_t *n = shale_malloc(sizeof *n * (size_t)(op->p3 + 1));
    if (!n) FAIL(SHALE_NOMEM);
    c->cache_ok = 0;
    c->nullrow = 0;
    int err = vm_analyze_scan(c->bc, op->p4type == P4_KEYINFO ? op->p4.ki : NULL, op->p3, v->enc,
                              v->hooks ? v->hooks->interrupt : NULL, n);
    for (int i = 0; err == SHALE_OK && i <= op->p3; i++) {
      value_clear(&reg[op->p2 + i]);
      value_set_int(&reg[op->p2 + i], n[i]);
    }
    shale_free(n);
    if (err == SHALE_INTERRUPT) set_err(v, SHALE_INTERRUPT, "interrupted");
    CHK(err);
    NEXT();
  }
  CASE(Sequence) {
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], v->cur[op->p1].seq++);
    NEXT();
  }
  CASE(NewRowid) {
    VmCursor *c = &v->cur[op->p1];
    int empty;
    int64_t id = 1;
    c->cache_ok = 0;
    CHK(btree_last(c->bc, &empty));
    if (!empty) {
      int64_t mx = btree_rowid(c->bc);
      if (mx == INT64_MAX) {
        int ok = 0;
        for (int t = 0; t < 100 && !ok; t++) {
          uint64_t r;
          int res;
          util_random(&r, sizeof r);
          id = (int64_t)(r & 0x7fffffffffffffffULL);
          if (id == 0) continue;
          CHK(btree_seek_rowid(c->bc, id, &res));
          ok = res != 0;
        }
        if (!ok) {
          set_err(v, SHALE_FULL, "database or disk is full");
          FAIL(SHALE_FULL);
        }
      } else {
        id = mx + 1;
      }
    }
    if (op->p3) {
      ShValue *m = &reg[op->p3];
      if (m->type == SHALE_INTEGER) {
        if (m->i == INT64_MAX) {
          set_err(v, SHALE_FULL, "database or disk is full");
          FAIL(SHALE_FULL);
        }
        if (id <= m->i) id = m->i + 1;
      }
      value_clear(m);
      value_set_int(m, id);
    }
    value_clear(&reg[op->p2]);
    value_set_int(&reg[op->p2], id);
    NEXT();
  }
  CASE(MakeRecord) {
    ShValue *in = &reg[op->p1];
    if (op->p4type == P4_TEXT) {
      const char *aff = op->p4.z;
      int naff = 0, intreal = 0;
      for (; naff < op->p2 && aff[naff]; naff++) {
        if (affinity_keeps(&in[naff], aff[naff])) continue;
        CHK(record_value_apply_affinity(&in[naff], aff[naff]));
        if (aff[naff] == AFF_REAL && in[naff].type == SHALE_FLOAT && record_real_is_int(in[naff].r))
          intreal = 1;
      }
      if (intreal) {
        /* As SQLite, a REAL column stores an integral value as an integer
         * (read back as REAL by RealAffinity; -0.0 becomes 0). The registers
         * keep their REAL values: the record is built from copies. */
        ShValue *tmp = (ShValue *)vm_buf_need(&v->recvals, (uint32_t)op->p2 * sizeof(ShValue));
        if (!tmp) FAIL(SHALE_NOMEM);
        for (int i = 0; i < op->p2; i++) {
          tmp[i] = in[i];
          tmp[i].flags = 0; /* a view */
          if (i < naff && aff[i] == AFF_REAL && tmp[i].type == SHALE_FLOAT &&
              record_real_is_int(tmp[i].r))
            value_set_int(&tmp[i], (int64_t)tmp[i].r);
        }
        in = tmp;
      }
    }
    ShValue *conv = NULL;
    if (v->enc != RECORD_ENC_UTF8) CHK(enc_values(v, in, op->p2, &conv));
    if (conv) in = conv;
    uint32_t sts[VM_RECORD_TYPES], hdr = 0; /* serial types computed once */
    uint32_t *stp = op->p2 <= VM_RECORD_TYPES ? sts : NULL;
    size_t n = record_size_types(in, op->p2, stp, &hdr);
    if ((int64_t)n > max_len(v)) {
      enc_free(conv, op->p2);
      set_err(v, SHALE_TOOBIG, "string or blob too big");
      FAIL(SHALE_TOOBIG);
    }
    const uint32_t need = (uint32_t)n + RECORD_ENCODE_SLACK; /* (vm_buf_need's test inline) */
    char *z = v->scratch.cap >= need ? v->scratch.z : vm_buf_need(&v->scratch, need);
    if (z) record_encode_types(in, op->p2, stp, hdr, (uint8_t *)z);
    enc_free(conv, op->p2);
    if (!z) FAIL(SHALE_NOMEM);
    value_clear(&reg[op->p3]);
    swap_scratch(v, op->p3);
    value_set_blob(&reg[op->p3], z, (uint32_t)n);
    NEXT();
  }
  CASE(Insert) {
    VmCursor *c = &v->cur[op->p1];
    const ShValue *d = &reg[op->p2];
    int64_t rowid = reg[op->p3].i;
    if (v->hooks && v->hooks->preupdate && op->p4type == P4_TEXT)
      CHK(vm_preupdate_insert(v, op, c, rowid, d));
    invalidate_all(v);
    if (c->kind == VMC_INDEX && c->ki && d->type != SHALE_NULL) { /* a WITHOUT ROWID row */
      int flags = (op->p5 & VM_OPFLAG_APPEND) ? BTREE_APPEND : 0;
      /* the PRIMARY KEY's NoConflict just passed on this cursor, no seek
       * since: the row goes where it ended, if it was for this row's key
       * (the record's first columns are the registers it sought) */
      if (c->nc_n > 0 && btree_seek_count(c->bc) == c->nc_seek && v->enc == RECORD_ENC_UTF8) {
        c->ki->corrupt = 0;
        if (record_compare_unpacked(c->ki, d->z, d->n, &reg[c->nc_reg], c->nc_n) == 0 &&
            !c->ki->corrupt)
          flags |= BTREE_SEEKRESULT;
      }
      c->nc_n = 0;
      CHK(index_insert(c, d, NULL, 0, flags));
    } else
      CHK(btree_insert(c->bc, rowid, d->type == SHALE_NULL ? "" : d->z,
                       d->type == SHALE_NULL ? 0 : d->n, 0,
                       (op->p5 & VM_OPFLAG_APPEND) ? BTREE_APPEND : 0));
    if (op->p5 & VM_OPFLAG_NCHANGE) v->nchange++;
    if (op->p5 & VM_OPFLAG_LASTROWID) {
      v->last_rowid = rowid;
      v->last_rowid_set = 1;
    }
    if ((op->p5 & VM_OPFLAG_NCHANGE) && op->p4type == P4_TEXT && v->hooks && v->hooks->update &&
        c->kind == VMC_TABLE)
      v->hooks->update(v->hooks->ctx,
                       (op->p5 & VM_OPFLAG_ISUPDATE) ? VM_HOOK_UPDATE : VM_HOOK_INSERT, c->db,
                       op->p4.z, rowid);
    NEXT();
  }
  CASE(Delete) {
    VmCursor *c = &v->cur[op->p1];
    int hook = (op->p5 & VM_OPFLAG_NCHANGE) && op->p4type == P4_TEXT && v->hooks &&
               v->hooks->update && c->kind == VMC_TABLE;
    int64_t rowid = hook ? btree_rowid(c->bc) : 0;
    if (v->hooks && v->hooks->preupdate && (c->kind == VMC_TABLE || op->p4type == P4_TEXT))
      CHK(vm_preupdate_delete(v, op, c));
    if (op->p5 & VM_OPFLAG_ISNOOP) NEXT();
    invalidate_all(v);
    CHK(btree_delete(c->bc));
    if (op->p5 & VM_OPFLAG_NCHANGE) v->nchange++;
    if (hook) v->hooks->update(v->hooks->ctx, VM_HOOK_DELETE, c->db, op->p4.z, rowid);
    NEXT();
  }
  CASE(IdxInsert) {
    VmCursor *c = &v->cur[op->p1];
    const ShValue *d = &reg[op->p2];
    if (c->bulk) {
      CHK(btree_bulk_add(c->bulk, 0, d->z, d->n));
      NEXT();
    }
    invalidate_all(v);
    /* the key's values in registers (the record was just made from them;
     * text of another encoding in the record: compare the record's own) */
    int keyregs = op->p4type == P4_INT32 && op->p4.i > 0 && v->enc == RECORD_ENC_UTF8;
    int flags = (op->p5 & VM_OPFLAG_APPEND) ? BTREE_APPEND : 0;
    /* a UNIQUE check of this key's first columns just passed: no entry
     * has them, so the key goes where that seek ended */
    if (c->nc_n > 0 && op->p4type == P4_INT32 && op->p3 == c->nc_reg && op->p4.i >= c->nc_n &&
        btree_seek_count(c->bc) == c->nc_seek)
      flags |= BTREE_SEEKRESULT;
    c->nc_n = 0;
    CHK(index_insert(c, d, keyregs ? &reg[op->p3] : NULL, keyregs ? op->p4.i : 0, flags));
    NEXT();
  }
  CASE(IdxDelete) {
    VmCursor *c = &v->cur[op->p1];
    int res;
    ShValue *conv = NULL;
    if (v->enc != RECORD_ENC_UTF8) CHK(enc_values(v, &reg[op->p2], op->p3, &conv));
    RecordSeek rs = {.ki = c->ki, .key = conv ? conv : &reg[op->p2], .nkey = op->p3};
    invalidate_all(v);
    c->ki->corrupt = 0;
    rc = btree_seek_cmp(c->bc, record_seek_pick(&rs), &rs, &res);
    enc_free(conv, op->p3);
    CHK(rc);
    if (c->ki->corrupt) FAIL(SHALE_CORRUPT);
    if (res == 0 && !btree_eof(c->bc)) {
      if ((op->p5 & VM_OPFLAG_ISUPDATE) && v->hooks && v->hooks->preupdate)
        CHK(vm_preupdate_keep(v, c));
      CHK(btree_delete(c->bc));
    }
    NEXT();
  }

  /* ---- ephemeral tables and the sorter ---- */
  CASE(OpenEphemeral) {
    VmCursor *c = &v->cur[op->p1];
    /* Opened again (a recursive CTE's current row, a correlated subquery):
     * the cursor's previous table is emptied and reused when no other
     * cursor shares it (OpenDup), so repeated opens do not pile up tables */
    uint32_t old = c->eph_root;
    int old_index = c->kind == VMC_INDEX;
    for (int i = 0; old && i < v->prog->ncursor; i++)
      if (i != op->p1 && v->cur[i].eph_root == old) old = 0;
    vm_cursor_close(v, c);
    KeyInfo *ki = op->p4type == P4_KEYINFO ? op->p4.ki : NULL;
    CHK(eph_open(v));
    CHK(cursor_ki(v, c, &ki));
    if (old && old_index == (ki != NULL)) {
      CHK(btree_clear_table(v->eph, old, NULL));
      c->eph_root = old;
    } else {
      CHK(btree_create_table(v->eph, ki ? BTREE_BLOBKEY : BTREE_INTKEY, &c->eph_root));
    }
    CHK(btree_cursor_open(v->eph, c->eph_root, 1, ki ? record_compare : NULL, ki, &c->bc));
    c->kind = ki ? VMC_INDEX : VMC_TABLE;
    c->ki = ki;
    c->nfield = op->p2;
    NEXT();
  }
  CASE(VNext) {
    int r = vm_vtab_next(v, op);
    if (r < 0) CHK(-r);
    if (r) JUMP(op->p2);
    NEXT();
  }
  CASE(VColumn) {
    CHK(vm_vtab_column(v, op, &reg[op->p3]));
    NEXT();
  }
  CASE(VRowid) {
    CHK(vm_vtab_rowid(v, op, &reg[op->p2]));
    NEXT();
  }
  CASE(VCreate)
  CASE(VDestroy)
  CASE(VOpen)
  CASE(VFilter)
  CASE(VUpdate)
  CASE(VBegin)
  CASE(VInitIn)
  CASE(VRename) {
    int jump = 0;
    CHK(vm_vtab_exec(v, op, reg, &jump));
    if (jump) JUMP(op->p2);
    NEXT();
  }
  CASE(PureFunc) {
    v->pure = (uint8_t)op->p1;
    NEXT();
  }
  CASE(OpenDup) {
    VmCursor *c = &v->cur[op->p1], *o = &v->cur[op->p2];
    vm_cursor_close(v, c);
    if (!v->eph || !o->eph_root) FAIL(SHALE_INTERNAL);
    KeyInfo *ki = o->ki;
    CHK(cursor_ki(v, c, &ki)); /* its own copy: o may close first */
    CHK(btree_cursor_open(v->eph, o->eph_root, 1, ki ? record_compare : NULL, ki, &c->bc));
    c->kind = o->kind;
    c->ki = ki;
    c->nfield = o->nfield;
    c->eph_root = o->eph_root;
    NEXT();
  }
  CASE(SorterOpen) {
    VmCursor *c = &v->cur[op->p1];
    vm_cursor_close(v, c);
    KeyInfo *ki = op->p4.ki;
    CHK(cursor_ki(v, c, &ki));
    vm_sorter_open(c, ki, op->p2);
    NEXT();
  }
  CASE(SorterLimit) {
    vm_sorter_limit(&v->cur[op->p1], reg[op->p2].i, op->p3 > 0 ? reg[op->p3].i : 0);
    NEXT();
  }
  CASE(SorterSkip) {
    /* (text keys in the database's encoding only under UTF-8: otherwise
     * the record is built and SorterInsert decides) */
    int drop = 0;
    if (v->enc == RECORD_ENC_UTF8)
      CHK(vm_sorter_topn_drops(&v->cur[op->p1], &reg[op->p3], op->p4.i, &drop));
    if (drop) JUMP(op->p2);
    NEXT();
  }
  CASE(SorterInsert) {
    const ShValue *d = &reg[op->p2];
    CHK(vm_sorter_insert(v, &v->cur[op->p1], d->z, d->type == SHALE_BLOB ? d->n : 0));
    NEXT();
  }
  CASE(SorterSort) {
    VmCursor *c = &v->cur[op->p1];
    c->cache_ok = 0;
    v->nsort++;
    int empty;
    CHK(vm_sorter_sort(v, c, &empty));
    if (empty) JUMP(op->p2);
    NEXT();
  }
  CASE(SorterNext) {
    VmCursor *c = &v->cur[op->p1];
    c->cache_ok = 0;
    int more;
    CHK(vm_sorter_next(c, &more));
    if (more) JUMP(op->p2);
    NEXT();
  }
  CASE(SorterData) {
    VmCursor *c = &v->cur[op->p1];
    value_clear(&reg[op->p2]);
    const uint8_t *rec;
    uint32_t n;
    if (vm_sorter_row(c, &rec, &n)) value_set_blob(&reg[op->p2], rec, n);
    if (op->p3 >= 0 && op->p3 < v->prog->ncursor && v->cur[op->p3].kind == VMC_PSEUDO) {
      v->cur[op->p3].cache_ok = 0;
      v->cur[op->p3].pseudo_fed = v->cur[op->p3].pseudo_reg == op->p2;
    }
    NEXT();
  }

  CASE(HashAggOpen) {
    VmCursor *c = &v->cur[op->p1];
    vm_cursor_close(v, c);
    c->kind = VMC_HASH;
    c->ki = op->p4.ki;
    CHK(vm_hash_open(v, c, op->p4.ki, op->p3, op->p2));
    NEXT();
  }
  CASE(HashAggFind) {
    int refused;
    CHK(vm_hash_find(v, &v->cur[op->p1], &reg[op->p3], &refused));
    if (refused) JUMP(op->p2);
    NEXT();
  }
  CASE(HashSetAdd) {
    int found;
    CHK(vm_hash_add(v, &v->cur[op->p1], &reg[op->p3], &found));
    if (found) JUMP(op->p2);
    NEXT();
  }
  CASE(HashAggSave) {
    CHK(vm_hash_save(v, &v->cur[op->p1]));
    NEXT();
  }
  CASE(HashAggSort) {
    v->nsort++;
    CHK(vm_hash_sort(v, &v->cur[op->p1]));
    NEXT();
  }
  CASE(HashAggNext) {
    int loaded;
    CHK(vm_hash_next(v, &v->cur[op->p1], op->p3 > 0 ? &reg[op->p3] : NULL, &loaded));
    if (!loaded) JUMP(op->p2);
    NEXT();
  }

  CASE(Program) {
    const VmProgram *sub = op->p4type == P4_SUBREF ? *op->p4.ref : op->p4.sub;
    Vm *child = NULL, *tmp = NULL;
    if (!sub) FAIL(SHALE_INTERNAL);
    if (op->p5) { /* recursive triggers off: not while it runs further out */
      const Vm *a = v;
      while (a && a->prog != sub) a = a->parent;
      if (a) NEXT();
    }
    if (op->p3 > 0 && v->depth >= op->p3) { /* p3: SQLITE_LIMIT_TRIGGER_DEPTH */
      set_err(v, SHALE_ERROR, "too many levels of trigger recursion");
      FAIL(SHALE_ERROR);
    }
    if (!v->subvm) {
      v->subvm = shale_malloc((size_t)v->prog->nop * sizeof *v->subvm);
      if (!v->subvm) FAIL(SHALE_NOMEM);
      memset(v->subvm, 0, (size_t)v->prog->nop * sizeof *v->subvm);
    }
    child = v->subvm[PC];
    if (child && child->busy) child = NULL; /* recursion: a fresh one */
    if (!child) {
      CHK(vm_new(sub, v->bt, 0, &tmp));
      vm_set_dbs(tmp, v->dbv, v->ndb);
      child = tmp;
      if (!v->subvm[PC]) {
        v->subvm[PC] = tmp;
        tmp = NULL;
      }
    }
    vm_set_dbs(child, v->dbv, v->ndb);
    child->parent = v;
    child->depth = v->depth + 1;
    child->param_base = op->p1;
    child->conn = v->conn;
    child->cb = v->cb;
    child->hooks = v->hooks;
    child->busy = 1;
    int crc;
    do {
      crc = vm_step(child);
    } while (crc == SHALE_ROW);
    child->busy = 0;
    int ignore = crc == SHALE_DONE && child->oe == VM_OE_IGNORE;
    if (crc != SHALE_DONE) {
      shale_free(v->errmsg);
      v->errmsg = child->errmsg;
      child->errmsg = NULL;
      v->oe = child->oe;
      /* RAISE(ROLLBACK) (or OR ROLLBACK) in the trigger already ended the
       * whole transaction: the statement reports that, as its own would */
      if (child->txn_rolled_back) v->txn_rolled_back = 1;
    }
    v->nfk += child->nfk;
    v->nchange_sub += child->nchange + child->nchange_sub;
    vm_reset(child);
    vm_free(tmp);
    if (crc != SHALE_DONE) FAIL(crc);
    if (ignore) JUMP(op->p2);
    NEXT();
  }
  CASE(Param) {
    ShValue x;
    if (!v->parent) FAIL(SHALE_INTERNAL);
    x = v->parent->reg[v->param_base + op->p1];
    x.flags &= (uint8_t)~VAL_OWNED;
    value_clear(&reg[op->p2]);
    reg[op->p2] = x;
    NEXT();
  }
  CASE(IntegrityCk) {
    char *report = NULL;
    int nerr = 0;
    const VmRoots *rt = op->p4.roots;
    Btree *dbt = vm_db(v, op->p2);
    if (!dbt) FAIL(SHALE_INTERNAL);
    CHK(btree_integrity_check(dbt, rt->r, rt->n, op->p3 > 0 ? op->p3 : 100, &report, &nerr));
    value_clear(&reg[op->p1]);
    if (report) {
      value_set_text(&reg[op->p1], report, (uint32_t)strlen(report));
      reg[op->p1].flags = VAL_OWNED;
    }
    NEXT();
  }

  /* ---- connection hooks ---- */
  CASE(AutoCommit)
  CASE(Savepoint)
  CASE(ParseSchema)
  CASE(DropObject) {
    const VmConnHooks *h = v->hooks;
    char *msg = NULL;
    const char *z = op->p4type == P4_TEXT ? op->p4.z : NULL;
    if (op->op == OP_AutoCommit && h && h->autocommit)
      rc = h->autocommit(h->ctx, op->p1, op->p2, &msg);
    else if (op->op == OP_Savepoint && h && h->savepoint)
      rc = h->savepoint(h->ctx, op->p1, z, &msg);
    else if (op->op == OP_ParseSchema && h && h->parse_schema)
      rc = h->parse_schema(h->ctx, op->p1, z, &msg);
    else if (op->op == OP_DropObject && h && h->drop_object)
      rc = h->drop_object(h->ctx, op->p2, op->p1, z, &msg);
    else
      goto unimpl;
    if (rc) {
      shale_free(v->errmsg);
      v->errmsg = msg;
      goto abort;
    }
    shale_free(msg);
    NEXT();
  }

  CASE(Vacuum) {
    const VmConnHooks *h = v->hooks;
    char *msg = NULL;
    if (!h || !h->vacuum) goto unimpl;
    rc = h->vacuum(h->ctx, op->p1, op->p2 ? &reg[op->p2] : NULL, &msg);
    if (rc) {
      shale_free(v->errmsg);
      v->errmsg = msg;
      goto abort;
    }
    shale_free(msg);
    NEXT();
  }
  CASE(FkCounter) {
    const VmConnHooks *h = v->hooks;
    if (!op->p1 && h && h->defer_fks && *h->defer_fks && h->deferred_imm_fk)
      *h->deferred_imm_fk += op->p2;
    else if (op->p1 && h && h->deferred_fk)
      *h->deferred_fk += op->p2;
    else
      v->nfk += op->p2;
    NEXT();
  }
  CASE(FkIfZero) {
    const VmConnHooks *h = v->hooks;
    int64_t imm = h && h->deferred_imm_fk ? *h->deferred_imm_fk : 0;
    int64_t n;
    if (op->p1)
      n = (h && h->deferred_fk ? *h->deferred_fk : 0) + imm;
    else { /* the statement counter: the whole chain of sub-programs' */
      n = imm;
      for (Vm *x = v; x; x = x->parent) n += x->nfk;
    }
    if (n == 0) JUMP(op->p2);
    NEXT();
  }
  CASE(RowSetAdd) {
    VmRowSet *rs;
    CHK(rowset_get(v, op->p1, &rs));
    if (rs->n == rs->cap) {
      int ncap = rs->cap ? rs->cap * 2 : 64;
      int64_t *a = shale_realloc(rs->a, (size_t)ncap * sizeof *a);
      if (!a) FAIL(SHALE_NOMEM);
      rs->a = a;
      rs->cap = ncap;
    }
    rs->a[rs->n++] = record_value_int64(&reg[op->p2]);
    rs->sorted = 0;
    NEXT();
  }
  CASE(RowSetRead) {
    VmRowSet *rs;
    CHK(rowset_get(v, op->p1, &rs));
    rowset_sort(rs);
    if (rs->pos >= rs->n) {
      rs->n = rs->pos = 0; /* exhausted: the set is empty again */
      JUMP(op->p2);
    }
    value_clear(&reg[op->p3]);
    value_set_int(&reg[op->p3], rs->a[rs->pos++]);
    NEXT();
  }
  CASE(RowSetTest) {
    VmRowSet *rs;
    CHK(rowset_get(v, op->p1, &rs));
    int64_t x = record_value_int64(&reg[op->p3]);
    rowset_sort(rs);
    int lo = rs->pos, hi = rs->n;
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (rs->a[mid] < x)
        lo = mid + 1;
      else
        hi = mid;
    }
    int iset = op->p4type == P4_INT32 ? op->p4.i : 1;
    if (lo < rs->n && rs->a[lo] == x) {
      if (iset != 0) JUMP(op->p2); /* p4 = 0: insert only, no test */
      NEXT();
    }
    if (iset < 0) NEXT(); /* p4 < 0: the last set, test only */
    if (rs->n == rs->cap) {
      int ncap = rs->cap ? rs->cap * 2 : 64;
      int64_t *a = shale_realloc(rs->a, (size_t)ncap * sizeof *a);
      if (!a) FAIL(SHALE_NOMEM);
      rs->a = a;
      rs->cap = ncap;
    }
    memmove(rs->a + lo + 1, rs->a + lo, (size_t)(rs->n - lo) * sizeof *rs->a);
    rs->a[lo] = x;
    rs->n++;
    NEXT();
  }

  /* ---- an invalid opcode, or a connection op without its hook ---- */
#ifndef VM_USE_GOTO
  default:
#endif
  unimpl : {
    shale_free(v->errmsg);
    v->errmsg =
        util_mprintf("opcode %s cannot run here (no connection hook)", vm_opcode_name(op->op));
    FAIL(SHALE_INTERNAL);
  }
#ifndef VM_USE_GOTO
}
#endif

abort : v->pc = PC;
v->left = left;
if (!v->errmsg && (rc & 0xff) == SHALE_CORRUPT) {
  const char *m = v->bt ? btree_errmsg(v->bt) : NULL;
  set_err(v, rc, m ? m : "database disk image is malformed");
}
return halt(v, rc);
}
