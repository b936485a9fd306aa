/*
 * btree_page.c -- one b-tree page: parse and validate, cells, free space.
 *
 * Owns the on-page layout of docs/format.md §4-§5: the 8/12-byte page header
 * (at offset 100 on page 1), the cell pointer array, the cell content area
 * growing down from the usable size, freeblocks (sorted, >= 4 bytes, each
 * holding next-offset and size), fragments (<= 60 bytes in total), and the
 * cell formats with the X/M/K payload spill rule.
 *
 * Invariants:
 *  1. btree_page_init() accepts a page only if: the type byte is one of 02/05/0a/0d;
 *     the pointer array fits; content start lies between the pointer array
 *     and the usable size; freeblocks are ascending, non-overlapping, >= 4
 *     bytes and inside the content area; every cell pointer lies inside the
 *     content area with room for the smallest cell of the page's kind.
 *     Otherwise SHALE_CORRUPT. btree_page_check_cells() adds: every cell parses
 *     and lies below the usable size, child numbers are within the
 *     database (MemPage.full). Code that copies a page's cells by their
 *     computed sizes (btree_page_defragment, the balance code) makes the page full
 *     first; cursors, readers and writers alike, descend with the lazy
 *     btree_page_get_lazy() and validate a cell when they parse it (btree_cell_parse, or
 *     the bounded rowid reads of the cursor's binary search), so a write
 *     that only adds, drops or overwrites a cell (its own cell parsed, the
 *     free space checked by btree_page_init) reads no other cell of the page, as
 *     SQLite's.
 *  2. MemPage.nfree = gap + freeblock bytes + fragment bytes, kept exact by
 *     btree_page_insert_cell / btree_page_drop_cell / btree_page_rebuild / btree_page_defragment.
 *  3. Every allocation of cell space is max(4, cell size) bytes, so that a
 *     freed cell can always become a freeblock.
 *  4. The fragment count never exceeds 60: a freeblock whose remainder would
 *     push it over is skipped (the gap or a defragmentation is used).
 */
#include "btree_int.h"

static uint32_t content_start(const uint8_t *d, uint32_t hdr) {
  uint32_t c = util_get2(d + hdr + 5);
  return c == 0 ? 65536 : c;
}

uint32_t btree_cell_local_size(Btree *bt, int table_leaf, uint32_t n) {
  uint32_t x = table_leaf ? bt->max_leaf : bt->max_local;
  if (n <= x) return n;
  uint32_t m = bt->min_local;
  uint32_t k = m + (n - m) % (bt->usable - 4);
  return k <= x ? k : m;
}

int btree_cell_parse(Btree *bt, uint32_t pgno, const uint8_t *data, uint32_t off, int leaf,
                     int intkey, CellInfo *ci) {
  if (leaf && leaf_cell_quick(bt, data, off, intkey, ci)) return SHALE_OK;
  uint32_t u = bt->usable;
  const uint8_t *p = data + off, *end = data + u;
  uint64_t v;
  int n;
  memset(ci, 0, sizeof *ci);
  if (off + 4 > u && !(leaf && off < u)) return BT_CORRUPT(bt, pgno, "cell offset out of range");
  if (!leaf) {
    if (p + 4 > end) return BT_CORRUPT(bt, pgno, "cell overflows the page");
    ci->child = util_get4(p);
    p += 4;
    if (intkey) {
      n = bt_varint_safe(p, end, &v);
      if (n == 0) return BT_CORRUPT(bt, pgno, "cell overflows the page");
      ci->key = (int64_t)v;
      ci->size = (uint16_t)(4 + n);
      ci->payoff = ci->size;
      return SHALE_OK;
    }
  }
  n = bt_varint_safe(p, end, &v);
  if (n == 0) return BT_CORRUPT(bt, pgno, "cell overflows the page");
  p += n;
  if (v > 0x7fffffffu) return BT_CORRUPT(bt, pgno, "payload size too large");
  ci->npayload = (uint32_t)v;
  if (intkey) {
    n = bt_varint_safe(p, end, &v);
    if (n == 0) return BT_CORRUPT(bt, pgno, "cell overflows the page");
    p += n;
    ci->key = (int64_t)v;
  } else {
    ci->key = ci->npayload;
  }
  ci->payoff = (uint16_t)(p - (data + off));
  /* most payloads are local: no call for the spill rule */
  ci->nlocal = ci->npayload <= bt->max_local
                   ? ci->npayload
                   : btree_cell_local_size(bt, intkey && leaf, ci->npayload);
  uint32_t sz = ci->payoff + ci->nlocal;
  if (ci->nlocal < ci->npayload) {
    if (off + sz + 4 > u) return BT_CORRUPT(bt, pgno, "cell overflows the page");
    ci->ovfl = util_get4(data + off + sz);
    sz += 4;
    uint32_t dbsize = pager_db_size(bt->pager);
    if (ci->ovfl < 2 || ci->ovfl > dbsize)
      return BT_CORRUPT(bt, pgno, "overflow page number out of range");
    /* a chain longer than the file: refuse before anyone allocates P bytes */
    if ((ci->npayload - ci->nlocal) / (u - 4) >= dbsize)
      return BT_CORRUPT(bt, pgno, "payload larger than the database");
  } else if (off + sz > u) {
    return BT_CORRUPT(bt, pgno, "cell overflows the page");
  }
  ci->size = (uint16_t)sz;
  return SHALE_OK;
}

int btree_page_cell_parse(Btree *bt, PgPage *pg, int i, CellInfo *ci) {
  const uint8_t *cell;
  return page_cell_parse_at(bt, pg, i, ci, &cell);
}

uint16_t btree_cell_size_slow(Btree *bt, const uint8_t *cell, int leaf, int intkey) {
  const uint8_t *p = cell;
  uint64_t v;
  if (!leaf) p += 4;
  if (!leaf && intkey) return (uint16_t)(4 + bt_varint(p, &v));
  p += bt_varint(p, &v);
  uint32_t np = (uint32_t)v;
  if (intkey) p += bt_varint(p, &v);
  uint32_t local = btree_cell_local_size(bt, intkey && leaf, np);
  uint32_t sz = (uint32_t)(p - cell) + local;
  if (local < np) sz += 4;
  return (uint16_t)sz;
}

uint32_t btree_page_child(PgPage *pg, int i) {
  MemPage *m = page_mem(pg);
  if (m->leaf) return 0; /* only on a clobbered page; 0 reads as corrupt */
  if (i >= m->ncell) return page_right(pg);
  return util_get4(page_cell(pg, i));
}

uint32_t btree_page_capacity(Btree *bt, PgPage *pg, int leaf) {
  uint32_t hdr = pager_pgno(pg) == 1 ? 100 : 0;
  return bt->usable - hdr - (leaf ? 8 : 12);
}

/* 1 if each of the n big-endian 2-byte cell pointers at ptr lies in
 * [lo, hi]. Every page entered from disk pays this check (invariant 1), so
 * it takes the pointers sixteen at a time where the compiler has vector
 * types: byte-swapped in the vector, each off - lo (wrapping below lo)
 * tested against hi - lo by one unsigned compare, the results ANDed into
 * one in-range mask; then eight at a time (fewer than eight pointers in
 * all are checked one by one). */
static int ptrs_in_range(const uint8_t *ptr, uint32_t n, uint32_t lo, uint32_t hi) {
  uint32_t i = 0;
  if (lo > hi) return n == 0;
#if defined(__GNUC__)
  typedef uint16_t U16x8 __attribute__((vector_size(16)));
  U16x8 vlo = {0}, vspan = {0}, ok = {0};
  vlo += (uint16_t)lo;
  vspan += (uint16_t)(hi - lo);
  ok -= 1;
  /* (lo is 65536 on an empty 64 KiB page; the swap is right on a little-endian host only) */
  for (; util_host_le() && hi <= 0xffff && i + 16 <= n; i += 16) {
    U16x8 a, b;
    memcpy(&a, ptr + 2 * i, sizeof a);
    memcpy(&b, ptr + 2 * i + 16, sizeof b);
    a = (U16x8)((a << 8) | (a >> 8)) - vlo;
    b = (U16x8)((b << 8) | (b >> 8)) - vlo;
    ok &= (U16x8)(a <= vspan) & (U16x8)(b <= vspan);
  }
  /* the rest by eights, the last block ending at the array's end (it may
   * overlap pointers already checked) rather than a scalar tail */
  for (uint32_t at; util_host_le() && hi <= 0xffff && i < n && n >= 8; i = at + 8) {
    U16x8 a;
    at = i + 8 <= n ? i : n - 8;
    memcpy(&a, ptr + 2 * at, sizeof a);
    a = (U16x8)((a << 8) | (a >> 8)) - vlo;
    ok &= (U16x8)(a <= vspan);
  }
  uint64_t w[2];
  memcpy(w, &ok, sizeof w);
  if (~(w[0] & w[1])) return 0;
#endif
  for (; i < n; i++) {
    uint32_t off = util_get2(ptr + 2 * i);
    if (off < lo || off > hi) return 0;
  }
  return 1;
}

int btree_page_init(Btree *bt, PgPage *pg) {
  MemPage *m = page_mem(pg);
  if (m->init) return SHALE_OK;
  const uint8_t *d = pager_data(pg);
  uint32_t pgno = pager_pgno(pg);
  uint32_t hdr = pgno == 1 ? 100 : 0;
  uint32_t u = bt->usable;
  MemPage t;
  memset(&t, 0, sizeof t);
  t.hdr = (uint16_t)hdr;
  switch (d[hdr]) {
    case PT_INDEX_INTERIOR:
      t.leaf = 0;
      t.intkey = 0;
      break;
    case PT_TABLE_INTERIOR:
      t.leaf = 0;
      t.intkey = 1;
      break;
    case PT_INDEX_LEAF:
      t.leaf = 1;
      t.intkey = 0;
      break;
    case PT_TABLE_LEAF:
      t.leaf = 1;
      t.intkey = 1;
      break;
    default:
      return BT_CORRUPT(bt, pgno, "invalid page type");
  }
  t.hdrlen = t.leaf ? 8 : 12;
  uint32_t ncell = util_get2(d + hdr + 3);
  uint32_t ptrend = hdr + t.hdrlen + 2 * ncell;
  if (ptrend > u) return BT_CORRUPT(bt, pgno, "cell count too large");
  t.ncell = (uint16_t)ncell;
  uint32_t content = content_start(d, hdr);
  if (content < ptrend || content > u) return BT_CORRUPT(bt, pgno, "bad cell content start");
  uint32_t nfree = content - ptrend + d[hdr + 7];
  uint32_t fb = util_get2(d + hdr + 1), last = 0;
  int nblocks = 0;
  while (fb) {
    if (fb < content || fb + 4 > u || (last && fb < last)) {
      return BT_CORRUPT(bt, pgno, "freeblock out of order or out of range");
    }
    uint32_t sz = util_get2(d + fb + 2);
    if (sz < 4 || fb + sz > u) return BT_CORRUPT(bt, pgno, "bad freeblock size");
    nfree += sz;
    last = fb + sz;
    fb = util_get2(d + fb);
    if (++nblocks > 20000) return BT_CORRUPT(bt, pgno, "freeblock loop");
  }
  if (nfree > u - hdr - t.hdrlen) return BT_CORRUPT(bt, pgno, "free space exceeds page");
  /* Cell pointers (invariant 1, cheap): each cell starts inside the content
   * area with room for the smallest cell of its kind (a leaf cell: 1 byte;
   * an interior cell: 4-byte child + 1-byte varint), so readers may take an
   * interior cell's child pointer without a check; everything else of a
   * cell is validated when it is parsed (btree_cell_parse) or by
   * btree_page_check_cells. */
  if (!ptrs_in_range(d + hdr + t.hdrlen, ncell, content, u - (t.leaf ? 1 : 5))) {
    return BT_CORRUPT(bt, pgno, "cell pointer out of range");
  }
  t.nfree = nfree;
  t.init = 1;
  *m = t;
  return SHALE_OK;
}

int btree_page_check_cells(Btree *bt, PgPage *pg) {
  MemPage *m = page_mem(pg);
  if (m->init && m->full) return SHALE_OK; /* (code that clears init leaves full) */
  int rc = btree_page_init(bt, pg);
  if (rc) return rc;
  const uint8_t *d = pager_data(pg);
  uint32_t pgno = pager_pgno(pg);
  uint32_t dbsize = pager_db_size(bt->pager);
  for (uint32_t i = 0; i < m->ncell; i++) {
    CellInfo ci;
    rc = btree_cell_parse(bt, pgno, d, page_cell_off(pg, (int)i), m->leaf, m->intkey, &ci);
    if (rc) return rc;
    if (!m->leaf && (ci.child == 0 || ci.child > dbsize)) {
      return BT_CORRUPT(bt, pgno, "child page number out of range");
    }
  }
  if (!m->leaf) {
    uint32_t r = page_right(pg);
    if (r == 0 || r > dbsize) {
      return BT_CORRUPT(bt, pgno, "right child page number out of range");
    }
  }
  m->full = 1;
  return SHALE_OK;
}

static int get_page(Btree *bt, uint32_t pgno, int full, PgPage **out) {
  *out = NULL;
  if (pgno == 0 || pgno > pager_db_size(bt->pager)) {
    return BT_CORRUPT(bt, pgno, "page number out of range");
  }
  PgPage *pg;
  int rc = pager_get(bt->pager, pgno, 0, &pg);
  if (rc) return rc;
  rc = full                 ? btree_page_check_cells(bt, pg)
       : page_mem(pg)->init ? SHALE_OK /* (no call for a page parsed before) */
                            : btree_page_init(bt, pg);
  if (rc) {
    pager_unref(pg);
    return rc;
  }
  *out = pg;
  return SHALE_OK;
}

int btree_page_get(Btree *bt, uint32_t pgno, PgPage **out) { return get_page(bt, pgno, 1, out); }

int btree_page_get_lazy(Btree *bt, uint32_t pgno, PgPage **out) {
  return get_page(bt, pgno, 0, out);
}

/* Copy a cell of sz bytes into its room of max(sz, 4) (a short cell's
 * padding zeroed). Most cells are small: they are moved by two fixed-size
 * overlapping copies rather than a call per cell. */
static inline void copy_cell(uint8_t *dst, const uint8_t *src, uint32_t sz) {
  if (sz >= 8 && sz <= 16) {
    memcpy(dst, src, 8);
    memcpy(dst + sz - 8, src + sz - 8, 8);
  } else if (sz >= 4 && sz < 8) {
    memcpy(dst, src, 4);
    memcpy(dst + sz - 4, src + sz - 4, 4);
  } else if (sz > 16 && sz <= 32) {
    memcpy(dst, src, 16);
    memcpy(dst + sz - 16, src + sz - 16, 16);
  } else if (sz > 32) {
    memcpy(dst, src, sz);
  } else {
    for (uint32_t j = 0; j < 4; j++) dst[j] = j < sz ? src[j] : 0;
  }
}

void btree_page_rebuild(Btree *bt, PgPage *pg, int type, uint8_t **cells, const uint16_t *sizes,
                        int n, uint32_t right) {
  uint8_t *d = pager_data(pg);
  MemPage *m = page_mem(pg);
  uint32_t hdr = pager_pgno(pg) == 1 ? 100 : 0;
  int leaf = (type & PTF_LEAF) != 0;
  uint32_t hdrlen = leaf ? 8 : 12;
  uint32_t u = bt->usable;
  uint32_t ptr = hdr + hdrlen, content = u;
  for (int i = 0; i < n; i++) {
    uint32_t a = sizes[i] < 4 ? 4 : sizes[i];
    content -= a;
    assert(content >= ptr + 2 * (uint32_t)(i + 1));
    copy_cell(d + content, cells[i], sizes[i]);
    util_put2(d + ptr + 2 * i, content);
  }
  d[hdr] = (uint8_t)type;
  util_put2(d + hdr + 1, 0);
  util_put2(d + hdr + 3, (uint32_t)n);
  util_put2(d + hdr + 5, content);
  d[hdr + 7] = 0;
  if (!leaf) util_put4(d + hdr + 8, right);
  m->init = 1;
  m->full = 1;
  m->leaf = (uint8_t)leaf;
  m->intkey = (type & PTF_INTKEY) != 0;
  m->hdrlen = (uint8_t)hdrlen;
  m->hdr = (uint16_t)hdr;
  m->ncell = (uint16_t)n;
  m->nfree = content - (ptr + 2 * (uint32_t)n);
}

void btree_page_zero(Btree *bt, PgPage *pg, int type) {
  btree_page_rebuild(bt, pg, type, NULL, NULL, 0, 0);
}

/* Defragmentation by sliding: the runs of content between the freeblocks
 * slide up over them (one memmove each, the highest first) and each cell
 * pointer moves by the bytes freed above it; no cell is parsed. Fragments
 * stay where they are, between cells, so the gap becomes nfree less the
 * fragment bytes. Returns 1 when done (*rc set), 0 when the page needs the
 * cell-by-cell rebuild: more than SLIDE_MAX freeblocks, or a gap of fewer
 * than need bytes. The freeblocks were checked when the page was loaded and
 * kept so since (invariant 1), and are checked again here; a pointer into a
 * freeblock is corruption. */
#define SLIDE_MAX 8
static int defrag_slide(Btree *bt, PgPage *pg, uint32_t need, int *rc) {
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  uint32_t u = bt->usable, hdr = m->hdr;
  if (m->nfree < d[hdr + 7] + need) return 0;
  uint32_t cs = content_start(d, hdr), ptr = hdr + m->hdrlen;
  uint32_t ptrend = ptr + 2 * (uint32_t)m->ncell;
  uint32_t fb[SLIDE_MAX + 1], fe[SLIDE_MAX + 1]; /* freeblock j: [fb[j], fe[j]) */
  int k = 0;
  *rc = SHALE_OK;
  if (cs < ptrend || cs > u) {
    *rc = BT_CORRUPT(bt, pager_pgno(pg), "content start out of range");
    return 1;
  }
  for (uint32_t b = util_get2(d + hdr + 1), low = cs; b; b = util_get2(d + b)) {
    if (k == SLIDE_MAX) return 0;
    if (b < low || b + 4 > u || b + util_get2(d + b + 2) > u || util_get2(d + b + 2) < 4) {
      *rc = BT_CORRUPT(bt, pager_pgno(pg), "freeblock chain");
      return 1;
    }
    fb[k] = b;
    fe[k] = b + util_get2(d + b + 2);
    low = fe[k++];
  }
  /* the bytes freed above each run: run j (below freeblock j) moves up by
   * shift[j] = the sizes of freeblocks j..k-1 */
  uint32_t shift[SLIDE_MAX + 1];
  shift[k] = 0;
  for (int j = k - 1; j >= 0; j--) shift[j] = shift[j + 1] + (fe[j] - fb[j]);
  if (cs + shift[0] - ptrend < need) return 0;
  for (int i = 0; i < m->ncell; i++) {
    uint32_t off = util_get2(d + ptr + 2 * i);
    int j = 0;
    while (j < k && off >= fb[j]) j++;
    if (off < cs || (j > 0 && off < fe[j - 1])) {
      *rc = BT_CORRUPT(bt, pager_pgno(pg), "cell pointer into free space");
      return 1;
    }
    if (shift[j]) util_put2(d + ptr + 2 * i, off + shift[j]);
  }
  for (int j = k - 1; j >= 0; j--) {
    uint32_t from = j > 0 ? fe[j - 1] : cs;
    memmove(d + from + shift[j], d + from, fb[j] - from);
  }
  util_put2(d + hdr + 1, 0);
  util_put2(d + hdr + 5, cs + shift[0]);
  assert(m->nfree == cs + shift[0] - ptrend + d[hdr + 7]);
  return 1;
}

int btree_page_defragment(Btree *bt, PgPage *pg, uint32_t need) {
  int rc;
  if (defrag_slide(bt, pg, need, &rc)) return rc;
  rc = btree_page_check_cells(bt, pg); /* every cell is copied by its size */
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  uint32_t u = bt->usable, hdr = m->hdr;
  uint32_t ptr = hdr + m->hdrlen, content = u;
  uint32_t ptrend = ptr + 2 * (uint32_t)m->ncell;
  /* Only the content area is copied aside (every cell lies in it,
   * invariant 2), into a buffer the Btree keeps; the cells then move by
   * rebuild's fixed-size copies. */
  uint32_t cs = util_get2(d + hdr + 5);
  if (cs == 0) cs = 65536;
  if (cs < ptrend || cs > u) return BT_CORRUPT(bt, pager_pgno(pg), "content start out of range");
  uint8_t *tmp = btree_kept_buffer(&bt->defrag, &bt->ndefrag, bt->page_size + 16);
  if (!tmp) return SHALE_NOMEM;
  memcpy(tmp + cs, d + cs, u - cs);
  memset(tmp + u, 0, 16); /* varint reads near the end stay in bounds */
  for (int i = 0; i < m->ncell; i++) {
    uint32_t off = util_get2(d + ptr + 2 * i);
    if (off < cs || off >= u) return BT_CORRUPT(bt, pager_pgno(pg), "cell pointer out of range");
    uint32_t sz = cell_size_bytes(bt, tmp + off, m->leaf, m->intkey);
    uint32_t a = sz < 4 ? 4 : sz;
    if (off + sz > u || a > content - ptrend)
      return BT_CORRUPT(bt, pager_pgno(pg), "cells overlap");
    content -= a;
    copy_cell(d + content, tmp + off, sz);
    util_put2(d + ptr + 2 * i, content);
  }
  util_put2(d + hdr + 1, 0);
  util_put2(d + hdr + 5, content);
  d[hdr + 7] = 0;
  m->nfree = content - ptrend;
  return SHALE_OK;
}

/* Find room for a bytes of cell content; returns the offset or 0 (after a
 * defragmentation that failed). Requires nfree >= a + 2. */
static int alloc_space(Btree *bt, PgPage *pg, uint32_t a, uint32_t *out) {
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  uint32_t hdr = m->hdr;
  uint32_t ptrend = hdr + m->hdrlen + 2 * (uint32_t)m->ncell;
  uint32_t content = content_start(d, hdr);
  int rc;
  if (content < ptrend + 2) {
    rc = btree_page_defragment(bt, pg, a + 2);
    if (rc) return rc;
    content = content_start(d, hdr);
  } else {
    /* First fit in the freeblock list. */
    uint32_t prev = hdr + 1, fb = util_get2(d + hdr + 1);
    int guard = 0;
    while (fb && guard++ < 20000) {
      if (fb + 4 > bt->usable) return BT_CORRUPT(bt, pager_pgno(pg), "freeblock out of range");
      uint32_t sz = util_get2(d + fb + 2);
      if (sz >= a) {
        uint32_t rem = sz - a;
        if (rem < 4) {
          if (d[hdr + 7] + rem <= 60) {
            util_put2(d + prev, util_get2(d + fb));
            d[hdr + 7] = (uint8_t)(d[hdr + 7] + rem);
            *out = fb;
            return SHALE_OK;
          }
        } else {
          util_put2(d + fb + 2, rem);
          *out = fb + rem;
          return SHALE_OK;
        }
      }
      prev = fb;
      fb = util_get2(d + fb);
    }
    if (content < ptrend + 2 + a) {
      rc = btree_page_defragment(bt, pg, a + 2);
      if (rc) return rc;
      content = content_start(d, hdr);
    }
  }
  if (content < ptrend + 2 + a) return BT_CORRUPT(bt, pager_pgno(pg), "free space miscounted");
  content -= a;
  util_put2(d + hdr + 5, content);
  *out = content;
  return SHALE_OK;
}

int btree_page_insert_space(Btree *bt, PgPage *pg, int i, uint32_t sz, uint8_t **cell) {
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  uint32_t a = sz < 4 ? 4 : sz;
  /* A page can lose its parse only if a hostile freelist handed it out
   * while in use. */
  if (!m->init || !pager_is_writable(pg) || i > m->ncell) {
    return BT_CORRUPT(bt, pager_pgno(pg), "page reused while in use");
  }
  /* Callers check nfree, or (balance) count the cells' bytes: these can
   * disagree only on a page whose free space was miscounted (bytes that no
   * cell, freeblock or fragment count claims; the fast defragmentation
   * keeps nfree as it is, a full one recounts it). */
  if (m->nfree < a + 2) return BT_CORRUPT(bt, pager_pgno(pg), "free space miscounted");
  uint32_t off = 0;
  int rc = alloc_space(bt, pg, a, &off);
  if (rc) return rc;
  if (a > sz) memset(d + off + sz, 0, a - sz);
  uint8_t *ptr = d + m->hdr + m->hdrlen;
  memmove(ptr + 2 * i + 2, ptr + 2 * i, 2 * (size_t)(m->ncell - i));
  util_put2(ptr + 2 * i, off);
  m->ncell++;
  util_put2(d + m->hdr + 3, m->ncell);
  m->nfree -= a + 2;
  *cell = d + off;
  return SHALE_OK;
}

int btree_page_insert_cell(Btree *bt, PgPage *pg, int i, const uint8_t *cell, uint32_t sz) {
  uint8_t *at;
  int rc = btree_page_insert_space(bt, pg, i, sz, &at);
  if (rc == SHALE_OK) memcpy(at, cell, sz);
  return rc;
}

/* Return [off, off+size) to the free space of the page. */
static int free_space(Btree *bt, PgPage *pg, uint32_t off, uint32_t size) {
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  uint32_t hdr = m->hdr, pgno = pager_pgno(pg);
  uint32_t prev = 0, fb = util_get2(d + hdr + 1);
  int guard = 0;
  while (fb && fb < off) {
    prev = fb;
    fb = util_get2(d + fb);
    if (++guard > 20000 || fb + 4 > bt->usable) return BT_CORRUPT(bt, pgno, "freeblock chain");
  }
  uint32_t end = off + size;
  uint32_t next = fb;
  if (fb && fb < end) return BT_CORRUPT(bt, pgno, "freeblock overlaps a cell");
  if (fb && fb - end <= 3 && d[hdr + 7] >= fb - end) {
    /* absorb the following freeblock (and the fragment bytes between) */
    d[hdr + 7] = (uint8_t)(d[hdr + 7] - (fb - end));
    end = fb + util_get2(d + fb + 2);
    next = util_get2(d + fb);
  }
  uint32_t start = off;
  if (prev) {
    uint32_t pend = prev + util_get2(d + prev + 2);
    if (pend > off) return BT_CORRUPT(bt, pgno, "freeblock overlaps a cell");
    if (off - pend <= 3 && d[hdr + 7] >= off - pend) {
      d[hdr + 7] = (uint8_t)(d[hdr + 7] - (off - pend));
      start = prev;
    }
  }
  if (end - start > 65535 + 1) return BT_CORRUPT(bt, pgno, "freeblock too large");
  if (start == prev && prev) {
    util_put2(d + prev, next);
    util_put2(d + prev + 2, end - start);
  } else {
    util_put2(d + start, next);
    util_put2(d + start + 2, end - start);
    util_put2(prev ? d + prev : d + hdr + 1, start);
  }
  /* A freeblock at the start of the content area merges into the gap. */
  uint32_t content = content_start(d, hdr);
  if (start == content) {
    /* start is the lowest freeblock, so it heads the list */
    if (prev && start != prev) return BT_CORRUPT(bt, pgno, "freeblock before content start");
    util_put2(d + hdr + 1, next);
    util_put2(d + hdr + 5, end);
  }
  return SHALE_OK;
}

int btree_page_drop_cell(Btree *bt, PgPage *pg, int i, uint32_t sz) {
  MemPage *m = page_mem(pg);
  uint8_t *d = pager_data(pg);
  if (!m->init || !pager_is_writable(pg) || i >= m->ncell) {
    return BT_CORRUPT(bt, pager_pgno(pg), "page reused while in use");
  }
  uint32_t a = sz < 4 ? 4 : sz;
  uint32_t off = page_cell_off(pg, i);
  if (off + a > bt->usable) return BT_CORRUPT(bt, pager_pgno(pg), "cell overflows the page");
  int rc = free_space(bt, pg, off, a);
  if (rc) return rc;
  uint8_t *ptr = d + m->hdr + m->hdrlen;
  memmove(ptr + 2 * i, ptr + 2 * i + 2, 2 * (size_t)(m->ncell - i - 1));
  m->ncell--;
  util_put2(d + m->hdr + 3, m->ncell);
  m->nfree += a + 2;
  return SHALE_OK;
}
