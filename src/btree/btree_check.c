/*
 * btree_check.c -- btree_integrity_check: SQLite's PRAGMA integrity_check for
 * the b-tree level (page accounting, page layout, key order, overflow chains,
 * freelist, pointer maps), with SQLite 3.40.1's message wording and order.
 *
 * It owns nothing but its own scratch state. It reads pages only through the
 * pager's public interface (pager_get/pager_data/pager_unref) and parses them
 * from raw bytes itself, so it works on pages the b-tree code would refuse.
 *
 * Order of the report (as 3.40.1 gives it; every line was matched against
 * `sqlite3 FILE 'PRAGMA integrity_check'` on corrupted files):
 *   1. the freelist, prefixed "Main freelist: ";
 *   2. auto-vacuum files: "max rootpage (X) disagrees with header (Y)", or
 *      "incremental_vacuum enabled with a max rootpage of zero";
 *   3. each tree in the order given: the root's reference (no prefix), then
 *      depth first: a page's right child subtree first, then its cells from
 *      the last to the first (each cell's overflow chain, then its child),
 *      then the page's byte coverage check ("Multiple uses for byte ...",
 *      "Fragmentation of ..."), which has no prefix;
 *   4. "Page N is never used" / "Pointer map page N is referenced".
 * Prefixes follow SQLite's state machine exactly: "Page P: " for a page that
 * fails to parse, "On tree page P cell C: " for cell-level problems (C is
 * the cell last visited, so a right child's problems carry a stale C), and
 * "On page P at right child: " instead in auto-vacuum files from the right
 * child on. SQLite's VDBE adds "*** in database main ***" and the row/index
 * checks; neither is produced here.
 *
 * Beyond 3.40.1 (which checks no index key order at this level): index trees
 * given a comparator get "Index key out of order" messages in the places the
 * rowid checks would give "Rowid N out of order"; trees deeper than
 * CK_MAX_DEPTH get "Page P: b-tree deeper than 64 levels".
 *
 * Invariants:
 *  1. Every byte read from a b-tree page is read from a private copy of the
 *     page padded with CK_PAD zero bytes, after checking that the offset is
 *     inside the usable area; cell parsing never reads past the padding.
 *  2. Each page is visited as a tree page at most once (the reference
 *     bitmap stops cycles); chains (overflow, freelist) also stop at the
 *     first page referenced twice; recursion is limited to CK_MAX_DEPTH.
 *  3. At most maxerr messages are produced; once the budget is spent every
 *     loop stops.
 *  4. Every pager reference taken is released before the function that took
 *     it returns; every allocation is freed on every path.
 *  5. Memory is bounded by the pages actually visited, not by the page count
 *     the header claims: the reference bitmap is allocated in chunks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "btree.h"

#define CK_PAD 32       /* zero bytes after each page copy */
#define CK_MAX_DEPTH 64 /* deepest tree examined */
#define CK_LOCK_BYTE 1073741824u
#define CK_CHUNK_SHIFT 16 /* pages per bitmap chunk: 65536 (8 KiB of bits) */

/* Message prefixes (SQLite's zPfx values). */
enum { PFX_NONE, PFX_PAGE, PFX_TREE, PFX_RIGHT, PFX_FREELIST };

/* Pointer-map entry types (docs/format.md §8). */
enum { PM_ROOT = 1, PM_FREE = 2, PM_OVFL1 = 3, PM_OVFL2 = 4, PM_BTREE = 5 };

/* An index key (whole record): owned (gathered from an overflow chain), or
 * borrowed from the page copy of its level (ck->bufs) or from a caller frame.
 * A key borrowed from bufs[L] stays valid until the next page is loaded at
 * level L, which happens only after the levels above have used it (see
 * check_tree). */
typedef struct CkKey {
  const uint8_t *p;
  uint32_t n;
  int valid; /* key known */
  int owned; /* p is ours to free */
  int local; /* from the subtree being checked (not the caller's bound) */
} CkKey;

typedef struct Ck {
  Pager *pager;
  uint32_t npage, usable, pagesize, lockpage;
  uint8_t **ref; /* bitmap of referenced pages in chunks of CK_CHUNK pages,
                  * allocated on first use (a header may claim 2^31 pages) */
  uint32_t nchunk;
  int autovac;
  int mxerr, nerr;
  int rc; /* SHALE_NOMEM (or an I/O error): abandon the check */
  char *out;
  size_t nout, aout;
  int pfx;
  uint32_t v1;
  int v2;
  uint8_t *bufs[CK_MAX_DEPTH + 1]; /* page copies, one per recursion level */
  uint64_t *bytemap;               /* one bit per byte of a page (coverage) */
  BtreeKeyCmp cmp;                 /* key order of the current index tree */
  void *cmp_ctx;
  uint32_t max_leaf, max_index, min_local; /* payload spill limits */
  const UtilHashKey *hkey;                 /* NULL, or the key of the sums below */
  uint64_t hsum;                           /* the current index tree's sum of keyed hashes */
  int64_t hcount;                          /* and its keys hashed (-1: one could not be read) */
} Ck;

/* ---- report ---- */

static void out_append(Ck *ck, const char *s, size_t n) {
  if (ck->rc) return;
  if (ck->nout + n + 1 > ck->aout) {
    size_t a = ck->aout ? ck->aout * 2 : 256;
    while (a < ck->nout + n + 1) a *= 2;
    char *p = shale_realloc(ck->out, a);
    if (!p) {
      ck->rc = SHALE_NOMEM;
      return;
    }
    ck->out = p;
    ck->aout = a;
  }
  memcpy(ck->out + ck->nout, s, n);
  ck->nout += n;
  ck->out[ck->nout] = 0;
}

static void out_printf(Ck *ck, const char *fmt, va_list ap) {
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    out_append(ck, small, (size_t)n);
    return;
  }
  char *big = util_vmprintf(fmt, ap);
  if (!big) {
    ck->rc = SHALE_NOMEM;
    return;
  }
  out_append(ck, big, strlen(big));
  shale_free(big);
}

static void out_fmt(Ck *ck, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  out_printf(ck, fmt, ap);
  va_end(ap);
}

/* Add one message, with the current prefix, if the budget allows. */
static void msg(Ck *ck, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(Ck *ck, const char *fmt, ...) {
  if (ck->mxerr <= 0 || ck->rc) return;
  ck->mxerr--;
  ck->nerr++;
  if (ck->nout) out_append(ck, "\n", 1);
  switch (ck->pfx) {
    case PFX_PAGE:
      out_fmt(ck, "Page %u: ", ck->v1);
      break;
    case PFX_TREE:
      out_fmt(ck, "On tree page %u cell %d: ", ck->v1, ck->v2);
      break;
    case PFX_RIGHT:
      out_fmt(ck, "On page %u at right child: ", ck->v1);
      break;
    case PFX_FREELIST:
      out_append(ck, "Main freelist: ", 15);
      break;
    default:
      break;
  }
  va_list ap;
  va_start(ap, fmt);
  out_printf(ck, fmt, ap);
  va_end(ap);
}

static int alive(Ck *ck) { return ck->mxerr > 0 && ck->rc == SHALE_OK; }

/* ---- page references ---- */

static int is_ref(Ck *ck, uint32_t pgno) {
  const uint8_t *c = ck->ref[pgno >> CK_CHUNK_SHIFT];
  uint32_t i = pgno & ((1u << CK_CHUNK_SHIFT) - 1);
  return c ? (c[i >> 3] >> (i & 7)) & 1 : 0;
}
static void set_ref(Ck *ck, uint32_t pgno) {
  uint8_t **c = &ck->ref[pgno >> CK_CHUNK_SHIFT];
  uint32_t i = pgno & ((1u << CK_CHUNK_SHIFT) - 1);
  if (!*c) {
    *c = shale_malloc((1u << CK_CHUNK_SHIFT) / 8);
    if (!*c) {
      ck->rc = SHALE_NOMEM;
      return;
    }
    memset(*c, 0, (1u << CK_CHUNK_SHIFT) / 8);
  }
  (*c)[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* Mark pgno used; nonzero (after a message) if it is out of range or was
 * already used. */
static int check_ref(Ck *ck, uint32_t pgno) {
  if (pgno == 0 || pgno > ck->npage) {
    msg(ck, "invalid page number %d", (int)pgno);
    return 1;
  }
  if (is_ref(ck, pgno)) {
    msg(ck, "2nd reference to page %u", pgno);
    return 1;
  }
  set_ref(ck, pgno);
  return 0;
}

/* Get a page reference; records fatal errors (out of memory) in ck->rc. */
static int get_page(Ck *ck, uint32_t pgno, PgPage **pg) {
  *pg = NULL;
  int rc = pager_get(ck->pager, pgno, 0, pg);
  if (rc == SHALE_NOMEM) ck->rc = rc;
  return rc;
}

/* ---- pointer map (auto-vacuum) ---- */

/* The pointer-map page that holds pgno's entry (pgno itself if it is one). */
static uint32_t ptrmap_page(Ck *ck, uint32_t pgno) {
  if (pgno < 2) return 0;
  uint32_t per = ck->usable / 5 + 1;
  uint32_t p = ((pgno - 2) / per) * per + 2;
  if (p == ck->lockpage) p++;
  return p;
}

static void check_ptrmap(Ck *ck, uint32_t child, int type, uint32_t parent) {
  if (!alive(ck)) return;
  uint32_t pm = ptrmap_page(ck, child);
  int ok = 0;
  uint32_t got_type = 0, got_parent = 0;
  if (pm != 0 && child > pm) {
    PgPage *pg;
    if (get_page(ck, pm, &pg) == SHALE_OK) {
      const uint8_t *d = pager_data(pg);
      uint64_t off = 5 * (uint64_t)(child - pm - 1);
      if (off + 5 <= ck->usable) {
        got_type = d[off];
        got_parent = util_get4(d + off + 1);
        ok = got_type >= 1 && got_type <= 5;
      }
      pager_unref(pg);
    }
    if (ck->rc) return;
  }
  if (!ok) {
    msg(ck, "Failed to read ptrmap key=%d", (int)child);
    return;
  }
  if (got_type != (uint32_t)type || got_parent != parent) {
    msg(ck, "Bad ptr map entry key=%d expected=(%d,%d) got=(%d,%d)", (int)child, type, (int)parent,
        (int)got_type, (int)got_parent);
  }
}

/* ---- chains: overflow lists and the freelist ---- */

/* Walk the chain from first; expected = pages it should have (for the
 * freelist: trunks plus leaves, header offset 36). */
static void check_list(Ck *ck, int freelist, uint32_t first, uint32_t expected) {
  uint32_t n = expected; /* unsigned as in SQLite: wraps on a chain too long */
  int nerr0 = ck->nerr;
  uint32_t pgno = first;
  while (pgno != 0 && alive(ck)) {
    if (check_ref(ck, pgno)) break;
    n--;
    PgPage *pg;
    if (get_page(ck, pgno, &pg) != SHALE_OK) {
      msg(ck, "failed to get page %u", pgno);
      break;
    }
    const uint8_t *d = pager_data(pg);
    uint32_t next = util_get4(d);
    if (freelist) {
      uint32_t nleaf = util_get4(d + 4);
      if (ck->autovac) check_ptrmap(ck, pgno, PM_FREE, 0);
      if (nleaf > ck->usable / 4 - 2) {
        msg(ck, "freelist leaf count too big on page %u", pgno);
        n--;
      } else {
        for (uint32_t i = 0; i < nleaf && ck->rc == SHALE_OK; i++) {
          uint32_t leaf = util_get4(d + 8 + 4 * i);
          if (ck->autovac) check_ptrmap(ck, leaf, PM_FREE, 0);
          check_ref(ck, leaf);
        }
        n -= nleaf;
      }
    } else if (ck->autovac && n > 0) {
      check_ptrmap(ck, next, PM_OVFL2, pgno);
    }
    pager_unref(pg);
    pgno = next;
  }
  if (n != 0 && nerr0 == ck->nerr) {
    msg(ck, "%s is %d but should be %d", freelist ? "size" : "overflow list length",
        (int)(expected - n), (int)expected);
  }
}

/* ---- cells ---- */

typedef struct CkCell {
  int64_t key;       /* rowid (table pages) */
  uint32_t npayload; /* payload bytes (0 for table interior cells) */
  uint32_t nlocal;   /* of which on the page */
  uint32_t nsize;    /* bytes the cell occupies (at least 4) */
  uint32_t hdr;      /* bytes before the payload (child pointer, varints) */
} CkCell;

/* A payload-size varint as SQLite's cell parser reads it for table leaves:
 * up to 9 bytes, 7 bits each, wrapping in 32 bits. */
static int get_size_trunc(const uint8_t *p, uint32_t *v) {
  uint32_t x = p[0];
  int n = 1;
  if (x >= 0x80) {
    x &= 0x7f;
    do {
      x = (x << 7) | (p[n] & 0x7f);
      n++;
    } while (p[n - 1] >= 0x80 && n < 9);
  }
  *v = x;
  return n;
}

/* Local part and cell size for a payload of p bytes with hdr header bytes. */
static void spill(Ck *ck, CkCell *c, uint32_t maxlocal) {
  uint32_t p = c->npayload;
  if (p <= maxlocal) {
    c->nlocal = p;
    c->nsize = c->hdr + p;
    if (c->nsize < 4) c->nsize = 4;
  } else {
    uint32_t minl = ck->min_local;
    uint32_t k = minl + (p - minl) % (ck->usable - 4);
    c->nlocal = k <= maxlocal ? k : minl;
    c->nsize = c->hdr + c->nlocal + 4;
  }
}

/* Parse the cell at cell (inside a padded page copy) of a page of type t. */
static void parse_cell(Ck *ck, int t, const uint8_t *cell, CkCell *c) {
  memset(c, 0, sizeof *c);
  uint64_t u;
  uint32_t v;
  switch (t) {
    case 0x0d: {
      int a = get_size_trunc(cell, &v);
      int b = util_get_varint(cell + a, &u);
      c->npayload = v;
      c->key = (int64_t)u;
      c->hdr = (uint32_t)(a + b);
      spill(ck, c, ck->max_leaf);
      break;
    }
    case 0x05: {
      int b = util_get_varint(cell + 4, &u);
      c->key = (int64_t)u;
      c->hdr = 4 + (uint32_t)b;
      c->nsize = c->hdr;
      break;
    }
    case 0x0a:
    case 0x02: {
      uint32_t off = t == 0x02 ? 4 : 0;
      int a = util_get_varint32(cell + off, &v);
      c->npayload = v;
      c->hdr = off + (uint32_t)a;
      spill(ck, c, ck->max_index);
      break;
    }
  }
}

/* Cell size as SQLite's coverage pass measures interior cells. */
static uint32_t interior_cell_size(Ck *ck, int t, const uint8_t *cell) {
  CkCell c;
  if (t == 0x05) {
    parse_cell(ck, t, cell, &c);
    return c.nsize;
  }
  memset(&c, 0, sizeof c);
  int a = get_size_trunc(cell + 4, &c.npayload);
  c.hdr = 4 + (uint32_t)a;
  spill(ck, &c, ck->max_index);
  return c.nsize;
}

/* ---- free space (SQLite's page-load validation) ---- */

/* Nonzero if the freeblock list or the free byte count is impossible. */
static int free_space_bad(Ck *ck, const uint8_t *d, uint32_t hdr, uint32_t cellfirst) {
  uint32_t top = util_get2(d + hdr + 5);
  if (top == 0) top = 65536;
  uint32_t nfree = d[hdr + 7] + top;
  uint32_t pc = util_get2(d + hdr + 1);
  uint32_t last = ck->usable - 4;
  if (pc > 0) {
    uint32_t next, size;
    if (pc < top) return 1;
    for (;;) {
      if (pc > last) return 1;
      next = util_get2(d + pc);
      size = util_get2(d + pc + 2);
      nfree += size;
      if (next <= pc + size + 3) break;
      pc = next; /* strictly increasing, so this ends */
    }
    if (next > 0) return 1;
    if (pc + size > ck->usable) return 1;
  }
  return nfree > ck->usable || nfree < cellfirst;
}

/* ---- index keys ---- */

static void key_release(CkKey *k) {
  if (k->owned) shale_free((void *)k->p);
  memset(k, 0, sizeof *k);
}

/* The whole key of an index cell: borrowed from the page copy when it is all
 * local, else gathered; k->valid = 0 if the overflow chain cannot deliver it
 * (the chain's problems are reported elsewhere). */
static void key_gather(Ck *ck, const uint8_t *cell, const CkCell *c, CkKey *k) {
  memset(k, 0, sizeof k[0]);
  k->local = 1;
  uint32_t over = c->npayload - c->nlocal;
  if (!over) {
    k->p = cell + c->hdr;
    k->n = c->npayload;
    k->valid = 1;
    return;
  }
  uint32_t per = ck->usable - 4;
  if (over && (uint64_t)over / per + 1 > ck->npage) return; /* longer than the file */
  uint8_t *p = shale_malloc(c->npayload ? c->npayload : 1);
  if (!p) {
    ck->rc = SHALE_NOMEM;
    return;
  }
  memcpy(p, cell + c->hdr, c->nlocal);
  uint32_t have = c->nlocal;
  uint32_t pgno = over ? util_get4(cell + c->nsize - 4) : 0;
  while (have < c->npayload) {
    PgPage *pg;
    if (pgno == 0 || pgno > ck->npage || get_page(ck, pgno, &pg) != SHALE_OK) {
      shale_free(p);
      return;
    }
    const uint8_t *d = pager_data(pg);
    uint32_t n = c->npayload - have < per ? c->npayload - have : per;
    memcpy(p + have, d + 4, n);
    have += n;
    pgno = util_get4(d);
    pager_unref(pg);
  }
  k->p = p;
  k->n = c->npayload;
  k->valid = 1;
  k->owned = 1;
}

/* ---- trees ---- */

/* A span of bytes of a page: first byte << 16 | last byte (both below
 * 65536), so that spans sort by (first, last) as plain integers. */
typedef uint32_t Span;
#define SPAN(lo, hi) ((uint32_t)(lo) << 16 | ((uint32_t)(hi)&0xffff))
#define SPAN_LO(s) ((s) >> 16)
#define SPAN_HI(s) ((s)&0xffff)

static int span_cmp(const void *a, const void *b) {
  Span x = *(const Span *)a, y = *(const Span *)b;
  return x < y ? -1 : x > y;
}

/* The spans' fragment total when they are disjoint and inside
 * [content, usable): the bytes they leave uncovered, found by marking each
 * span in a bitmap of the page's bytes instead of sorting. 0 (take the
 * sorted walk, whose first overlap message follows SQLite's order) when a
 * span overlaps another or lies outside. */
static int coverage_disjoint(Ck *ck, const Span *sp, int nsp, uint32_t content, int32_t *frag) {
  uint64_t *bits = ck->bytemap;
  memset(bits, 0, sizeof *bits * (ck->usable / 64 + 1));
  uint32_t covered = 0;
  for (int i = 0; i < nsp; i++) {
    uint32_t lo = SPAN_LO(sp[i]), hi = SPAN_HI(sp[i]);
    if (lo < content || hi < lo || hi >= ck->usable) return 0;
    covered += hi - lo + 1;
    for (uint32_t w = lo >> 6; w <= hi >> 6; w++) {
      uint32_t a = w == lo >> 6 ? lo & 63 : 0, b = w == hi >> 6 ? hi & 63 : 63;
      uint64_t m = (~(uint64_t)0 >> (63 - (b - a))) << a;
      if (bits[w] & m) return 0;
      bits[w] |= m;
    }
  }
  *frag = (int32_t)(ck->usable - content - covered);
  return 1;
}

/* Byte coverage of a page: cells, freeblocks and fragments must add up. */
static void check_coverage(Ck *ck, uint32_t pgno, const uint8_t *d, uint32_t hdr, Span *sp, int nsp,
                           uint32_t content) {
  uint32_t fb = util_get2(d + hdr + 1);
  while (fb > 0) { /* validated ascending and in range by free_space_bad */
    uint32_t size = util_get2(d + fb + 2);
    sp[nsp++] = SPAN(fb, fb + size - 1);
    fb = util_get2(d + fb);
  }
  int32_t frag = 0;
  if (coverage_disjoint(ck, sp, nsp, content, &frag)) {
    if (frag != d[hdr + 7])
      msg(ck, "Fragmentation of %d bytes reported as %d on page %u", frag, d[hdr + 7], pgno);
    return;
  }
  qsort(sp, (size_t)nsp, sizeof *sp, span_cmp);
  uint32_t prev = (content - 1) & 0xffff;
  int drained = 1;
  for (int i = 0; i < nsp; i++) {
    if (prev >= SPAN_LO(sp[i])) {
      msg(ck, "Multiple uses for byte %u of page %u", SPAN_LO(sp[i]), pgno);
      drained = i == nsp - 1;
      break;
    }
    frag += (int32_t)(SPAN_LO(sp[i]) - prev - 1);
    prev = SPAN_HI(sp[i]);
  }
  frag += (int32_t)(ck->usable - prev - 1);
  if (drained && frag != d[hdr + 7]) {
    msg(ck, "Fragmentation of %d bytes reported as %d on page %u", frag, d[hdr + 7], pgno);
  }
}

/* Index key order: k must sort before the bound (or equal it if eq_ok). */
static void check_key(Ck *ck, const CkKey *k, const CkKey *bound, int eq_ok) {
  if (!k->valid || !bound->valid) return;
  int c = ck->cmp(ck->cmp_ctx, k->p, k->n, bound->p, bound->n);
  if (eq_ok ? c > 0 : c >= 0) msg(ck, "Index key out of order");
}

/* Check the subtree at pgno. Returns its depth (0 for a leaf or a page that
 * could not be checked). *minkey gets the smallest rowid seen (unchanged if
 * none); keys must be <= maxkey. For index trees with a comparator, kmin /
 * kmax do the same for keys (kmin->valid = 0: unchanged). */
static int check_tree(Ck *ck, uint32_t pgno, int level, int64_t *minkey, int64_t maxkey,
                      CkKey *kmin, const CkKey *kmax) {
  int saved_pfx = ck->pfx, saved_v2 = ck->v2;
  uint32_t saved_v1 = ck->v1;
  int depth = -1;
  Span *sp = NULL;
  CkKey mk = *kmax;
  mk.owned = 0;
  mk.local = 0;
  memset(kmin, 0, sizeof *kmin);

  if (pgno == 0) return 0;
  if (check_ref(ck, pgno)) return 0;
  ck->pfx = PFX_PAGE;
  ck->v1 = pgno;
  if (level > CK_MAX_DEPTH) {
    msg(ck, "b-tree deeper than %d levels", CK_MAX_DEPTH);
    goto end;
  }
  if (!ck->bufs[level]) {
    ck->bufs[level] = shale_malloc(ck->pagesize + CK_PAD);
    if (!ck->bufs[level]) {
      ck->rc = SHALE_NOMEM;
      goto end;
    }
  }
  uint8_t *d = ck->bufs[level];
  {
    PgPage *pg;
    int rc = get_page(ck, pgno, &pg);
    if (rc != SHALE_OK) {
      msg(ck, "unable to get the page. error code=%d", rc);
      goto end;
    }
    memcpy(d, pager_data(pg), ck->pagesize);
    memset(d + ck->pagesize, 0, CK_PAD);
    pager_unref(pg);
  }
  uint32_t hdr = pgno == 1 ? 100 : 0;
  int t = d[hdr];
  if (t != 0x02 && t != 0x05 && t != 0x0a && t != 0x0d) {
    msg(ck, "btreeInitPage() returns error code %d", SHALE_CORRUPT);
    goto end;
  }
  int leaf = (t & 0x08) != 0;
  int intkey = (t & 0x05) == 0x05;
  uint32_t ncell = util_get2(d + hdr + 3);
  if (ncell > (ck->pagesize - 8) / 6) {
    msg(ck, "btreeInitPage() returns error code %d", SHALE_CORRUPT);
    goto end;
  }
  uint32_t cellstart = hdr + (leaf ? 8 : 12);
  if (free_space_bad(ck, d, hdr, cellstart + 2 * ncell)) {
    msg(ck, "free space corruption");
    goto end;
  }
  uint32_t content = util_get2(d + hdr + 5);
  if (content == 0) content = 65536;
  int keycheck = !intkey && ck->cmp != NULL;

  /* Room for every cell and every freeblock (at least 4 bytes each). */
  sp = shale_malloc(sizeof *sp * (ncell + ck->usable / 4 + 1));
  if (!sp) {
    ck->rc = SHALE_NOMEM;
    goto end;
  }
  int nsp = 0;
  int cover = 1;
  int eq_ok = 1;
  ck->pfx = PFX_TREE;
  ck->v1 = pgno;

  if (!leaf) {
    uint32_t right = util_get4(d + hdr + 8);
    if (ck->autovac) {
      ck->pfx = PFX_RIGHT;
      check_ptrmap(ck, right, PM_BTREE, pgno);
    }
    CkKey cm;
    depth = check_tree(ck, right, level + 1, &maxkey, maxkey, &cm, &mk);
    if (cm.valid) {
      key_release(&mk);
      mk = cm;
    }
    eq_ok = 0;
  }

  for (int i = (int)ncell - 1; i >= 0 && alive(ck); i--) {
    ck->v2 = i;
    uint32_t pc = util_get2(d + cellstart + 2 * (uint32_t)i);
    if (pc < content || pc > ck->usable - 4) {
      msg(ck, "Offset %u out of range %u..%u", pc, content, ck->usable - 4);
      cover = 0;
      continue;
    }
    CkCell c;
    parse_cell(ck, t, d + pc, &c);
    if ((uint64_t)pc + c.nsize > ck->usable) {
      msg(ck, "Extends off end of page");
      cover = 0;
      continue;
    }
    if (intkey) {
      if (eq_ok ? c.key > maxkey : c.key >= maxkey) {
        msg(ck, "Rowid %lld out of order", (long long)c.key);
      }
      maxkey = c.key;
      eq_ok = 0;
    } else if (keycheck) {
      CkKey k;
      key_gather(ck, d + pc, &c, &k);
      if (k.valid && ck->hcount >= 0) {
        ck->hsum += util_hash_keyed(ck->hkey, k.p, k.n);
        ck->hcount++;
      } else {
        ck->hcount = -1;
      }
      check_key(ck, &k, &mk, eq_ok);
      key_release(&mk);
      mk = k;
      eq_ok = 0;
    }
    if (c.npayload > c.nlocal) {
      uint32_t npg = (c.npayload - c.nlocal + ck->usable - 5) / (ck->usable - 4);
      uint32_t ovfl = util_get4(d + pc + c.nsize - 4);
      if (ck->autovac) check_ptrmap(ck, ovfl, PM_OVFL1, pgno);
      check_list(ck, 0, ovfl, npg);
    }
    if (!leaf) {
      uint32_t child = util_get4(d + pc);
      if (ck->autovac) check_ptrmap(ck, child, PM_BTREE, pgno);
      CkKey cm;
      int d2 = check_tree(ck, child, level + 1, &maxkey, maxkey, &cm, &mk);
      if (cm.valid) {
        key_release(&mk);
        mk = cm;
      }
      eq_ok = 0;
      if (d2 != depth) {
        msg(ck, "Child page depth differs");
        depth = d2;
      }
    } else {
      sp[nsp++] = SPAN(pc, pc + c.nsize - 1);
    }
  }
  *minkey = maxkey;
  if (mk.local) {
    *kmin = mk;
    memset(&mk, 0, sizeof mk);
  }

  ck->pfx = PFX_NONE;
  if (cover && alive(ck)) {
    if (!leaf) {
      nsp = 0;
      for (int i = (int)ncell - 1; i >= 0; i--) {
        uint32_t pc = util_get2(d + cellstart + 2 * (uint32_t)i);
        sp[nsp++] = SPAN(pc, pc + interior_cell_size(ck, t, d + pc) - 1);
      }
    }
    check_coverage(ck, pgno, d, hdr, sp, nsp, content);
  }

end:
  key_release(&mk);
  shale_free(sp);
  ck->pfx = saved_pfx;
  ck->v1 = saved_v1;
  ck->v2 = saved_v2;
  return depth + 1;
}

/* ---- driver ---- */

/* The whole check on an open pager with a read transaction. Exposed (not in
 * btree.h) so that tests can run it on a bare pager. */
int btree_check_pager(Pager *pager, const BtreeCheckRoot *roots, int nroot, int maxerr,
                      char **report, int *nerr);
static int check_pager(Pager *pager, const BtreeCheckRoot *roots, int nroot, int maxerr,
                       char **report, int *nerr, const UtilHashKey *key, BtreeCheckSum *sums) {
  *report = NULL;
  *nerr = 0;
  for (int i = 0; sums && i < nroot; i++) sums[i] = (BtreeCheckSum){0, -1};
  if (pager_txn_state(pager) == PAGER_TXN_NONE) return SHALE_MISUSE;
  Ck ck;
  memset(&ck, 0, sizeof ck);
  ck.hkey = key;
  ck.pager = pager;
  ck.npage = pager_db_size(pager);
  ck.pagesize = pager_page_size(pager);
  ck.usable = pager_usable_size(pager);
  ck.mxerr = maxerr > 0 ? maxerr : 100;
  if (ck.npage == 0) return SHALE_OK;
  if (ck.usable < 480 || ck.usable > ck.pagesize || ck.pagesize > 65536) return SHALE_CORRUPT;
  ck.lockpage = CK_LOCK_BYTE / ck.pagesize + 1;
  ck.max_leaf = ck.usable - 35;
  ck.max_index = (ck.usable - 12) * 64 / 255 - 23;
  ck.min_local = (ck.usable - 12) * 32 / 255 - 23;

  uint32_t free_first, free_count, largest_root, incr;
  {
    PgPage *pg;
    int rc = pager_get(pager, 1, 0, &pg);
    if (rc) return rc;
    const uint8_t *h = pager_data(pg);
    free_first = util_get4(h + 32);
    free_count = util_get4(h + 36);
    largest_root = util_get4(h + 52);
    incr = util_get4(h + 64);
    pager_unref(pg);
  }
  ck.autovac = largest_root != 0;
  ck.nchunk = (ck.npage >> CK_CHUNK_SHIFT) + 1;
  ck.ref = shale_malloc(sizeof *ck.ref * ck.nchunk);
  if (!ck.ref) return SHALE_NOMEM;
  ck.bytemap = shale_malloc(sizeof *ck.bytemap * (ck.usable / 64 + 1));
  if (!ck.bytemap) {
    shale_free(ck.ref);
    return SHALE_NOMEM;
  }
  memset(ck.ref, 0, sizeof *ck.ref * ck.nchunk);
  if (ck.lockpage <= ck.npage) set_ref(&ck, ck.lockpage);

  ck.pfx = PFX_FREELIST;
  check_list(&ck, 1, free_first, free_count);
  ck.pfx = PFX_NONE;

  if (ck.autovac) {
    uint32_t mx = 0;
    for (int i = 0; i < nroot; i++) {
      if (roots[i].root > mx) mx = roots[i].root;
    }
    if (mx != largest_root)
      msg(&ck, "max rootpage (%d) disagrees with header (%d)", (int)mx, (int)largest_root);
  } else if (incr != 0) {
    msg(&ck, "incremental_vacuum enabled with a max rootpage of zero");
  }

  for (int i = 0; i < nroot && alive(&ck); i++) {
    uint32_t root = roots[i].root;
    if (root == 0) continue;
    if (ck.autovac && root > 1) check_ptrmap(&ck, root, PM_ROOT, 0);
    ck.cmp = roots[i].intkey ? NULL : roots[i].cmp;
    ck.cmp_ctx = roots[i].cmp_ctx;
    int64_t minkey;
    CkKey none, kmin;
    memset(&none, 0, sizeof none);
    ck.hsum = 0;
    ck.hcount = ck.cmp && sums ? 0 : -1;
    check_tree(&ck, root, 0, &minkey, INT64_MAX, &kmin, &none);
    key_release(&kmin);
    if (sums) sums[i] = (BtreeCheckSum){ck.hsum, ck.hcount};
  }

  for (uint32_t i = 1; i <= ck.npage && alive(&ck); i++) {
    int pm = ck.autovac && ptrmap_page(&ck, i) == i;
    if (!is_ref(&ck, i) && !pm) msg(&ck, "Page %u is never used", i);
    if (is_ref(&ck, i) && pm) msg(&ck, "Pointer map page %u is referenced", i);
  }

  for (int i = 0; i <= CK_MAX_DEPTH; i++) shale_free(ck.bufs[i]);
  for (uint32_t i = 0; i < ck.nchunk; i++) shale_free(ck.ref[i]);
  shale_free(ck.ref);
  shale_free(ck.bytemap);
  if (ck.rc) {
    shale_free(ck.out);
    return ck.rc;
  }
  *nerr = ck.nerr;
  *report = ck.out;
  return SHALE_OK;
}

int btree_check_pager(Pager *pager, const BtreeCheckRoot *roots, int nroot, int maxerr,
                      char **report, int *nerr) {
  return check_pager(pager, roots, nroot, maxerr, report, nerr, NULL, NULL);
}

int btree_integrity_check(Btree *bt, const BtreeCheckRoot *roots, int nroot, int maxerr,
                          char **report, int *nerr) {
  return check_pager(btree_pager(bt), roots, nroot, maxerr, report, nerr, NULL, NULL);
}

int btree_integrity_check_sums(Btree *bt, const BtreeCheckRoot *roots, int nroot, int maxerr,
                               char **report, int *nerr, const UtilHashKey *key,
                               BtreeCheckSum *sums) {
  return check_pager(btree_pager(bt), roots, nroot, maxerr, report, nerr, key, sums);
}
