/*
 * btree_cursor.c -- cursor movement, seeks, payload access, save/restore.
 *
 * Owns the cursor stack (one referenced page and index per level), the
 * in-order walk of table trees (entries in leaves only) and index trees
 * (entries in leaves and interior cells), seeks (binary search; rowid
 * seeks interpolate, rowid_search), overflow
 * reads with a per-entry cache of overflow page numbers, and the saved
 * state of invariant 5 of btree.h.
 *
 * Invariants:
 *  1. state VALID: depth >= 1, the top page's idx is an entry (a leaf cell,
 *     or an interior cell of an index tree).
 *  2. state REQSEEK holds no page references; the key is in saved_rowid or
 *     saved_key; the first use re-seeks and sets skip to the seek's res, so
 *     next()/prev() yield the entries after/before the saved key.
 *  3. Every page entered is checked: same tree kind as the root, depth <
 *     BT_MAX_DEPTH (cycles), page number within the database (btree_page_get*).
 *     Pages are entered with btree_page_get_lazy (btree_page_init only), each cell being
 *     validated when it is parsed and the rowid reads of the binary search
 *     bounded by the usable size. Writes validate a whole page only where
 *     they copy its cells by size (balance, defragmentation: btree_page.c
 *     invariant 1), so a write cursor costs no more than a read cursor.
 *  4. The overflow cache (ovfl[0..novfl)) belongs to the current entry and
 *     is dropped whenever the cursor moves (info_ok = 0).
 *  5. A re-seek keeps the root referenced (btree_cursor_move_to_root drops only
 *     the levels below) while the root is still parsed (init) and of the
 *     cursor's kind; otherwise the root is released and loaded again.
 *  6. A full seek (rowid or key) keeps every level of the old path that it
 *     passes again (seek_start / seek_child): the page it would load there
 *     is the one the cursor still references, parsed and of its kind. The
 *     old levels below depth are referenced only within the seek (seek_end
 *     drops them on every exit), so a seek costs one page get and release
 *     per level that changed, not per level.
 */
#include "btree_int.h"

static void moved(BtCursor *c) {
  c->info_ok = 0;
  c->novfl = 0;
  c->sought = 0;
  c->seekres = 0;
}

void btree_cursor_release(BtCursor *c) {
  for (int i = 0; i < c->depth; i++) pager_unref(c->pg[i]);
  c->depth = 0;
  moved(c);
}

static int fault(BtCursor *c, int rc) {
  if (rc == SHALE_OK) return rc;
  btree_cursor_release(c);
  c->state = CUR_INVALID;
  return rc;
}

int btree_cursor_move_to_root(BtCursor *c) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  if (c->saved_key) {
    shale_free(c->saved_key);
    c->saved_key = NULL;
  }
  c->state = CUR_INVALID;
  c->skip = 0;
  uint32_t dbsize = pager_db_size(c->bt->pager);
  if (c->depth > 0 && c->root <= dbsize && page_mem(c->pg[0])->init &&
      page_mem(c->pg[0])->intkey == c->intkey) {
    /* The root is still referenced and parsed (a page reloaded under the
     * cursor has init == 0): keep it, drop the levels below. */
    for (int i = 1; i < c->depth; i++) pager_unref(c->pg[i]);
    c->depth = 1;
    c->idx[0] = 0;
    moved(c);
    return SHALE_OK;
  }
  btree_cursor_release(c);
  if (c->root == 1 && dbsize == 0) {
    /* an empty file: sqlite_schema is an empty table (depth stays 0) */
    c->intkey = 1;
    c->kind_known = 1;
    return SHALE_OK;
  }
  PgPage *pg;
  int rc = btree_page_get_lazy(c->bt, c->root, &pg);
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  if (!c->kind_known) {
    c->intkey = m->intkey;
    c->kind_known = 1;
  } else if (m->intkey != c->intkey) {
    pager_unref(pg);
    return BT_CORRUPT(c->bt, c->root, "root page changed kind");
  }
  c->pg[0] = pg;
  c->idx[0] = 0;
  c->depth = 1;
  return SHALE_OK;
}

/* btree_cursor_load_child, inline for seek_child (a seek's descent). */
static inline __attribute__((always_inline)) int load_child(BtCursor *c, uint32_t child) {
  if (c->depth >= BT_MAX_DEPTH) {
    return BT_CORRUPT(c->bt, pager_pgno(c->pg[c->depth - 1]), "tree too deep (cycle?)");
  }
  PgPage *pg;
  int rc = btree_page_get_lazy(c->bt, child, &pg);
  if (rc) return rc;
  if (page_mem(pg)->intkey != c->intkey) {
    pager_unref(pg);
    return BT_CORRUPT(c->bt, child, "child page of the wrong kind");
  }
  c->pg[c->depth] = pg;
  c->idx[c->depth] = 0;
  c->depth++;
  moved(c);
  return SHALE_OK;
}

int btree_cursor_load_child(BtCursor *c, uint32_t child) { return load_child(c, child); }

/* A seek's descent that keeps the old path (invariant 6). seek_start is
 * btree_cursor_move_to_root except that the levels below the root stay
 * referenced beyond depth, *kept being the old depth (0 when none stay);
 * seek_child enters a child as btree_cursor_load_child does, taking the
 * page still held at that level when it is the same page, still parsed and
 * of the cursor's kind (what load_child would return), else dropping the
 * kept levels; seek_end drops whatever is still kept below depth. */
static int seek_start(BtCursor *c, int *kept) {
  *kept = 0;
  if (c->depth > 1 && c->state != CUR_FAULT && !c->saved_key &&
      c->root <= pager_db_size(c->bt->pager) && page_mem(c->pg[0])->init &&
      page_mem(c->pg[0])->intkey == c->intkey) {
    *kept = c->depth;
    c->state = CUR_INVALID;
    c->skip = 0;
    c->depth = 1;
    c->idx[0] = 0;
    moved(c);
    return SHALE_OK;
  }
  return btree_cursor_move_to_root(c);
}

static void seek_end(BtCursor *c, int *kept) {
  for (int i = c->depth; i < *kept; i++) pager_unref(c->pg[i]);
  *kept = 0;
}

static int seek_child(BtCursor *c, uint32_t child, int *kept) {
  const int d = c->depth;
  if (d < *kept) {
    PgPage *pg = c->pg[d];
    const MemPage *m = page_mem(pg);
    if (pager_pgno(pg) == child && m->init && m->intkey == c->intkey &&
        child <= pager_db_size(c->bt->pager)) {
      c->idx[d] = 0;
      c->depth = d + 1;
      return SHALE_OK;
    }
    seek_end(c, kept);
  }
  return load_child(c, child);
}

static MemPage *top(BtCursor *c) { return page_mem(c->pg[c->depth - 1]); }
static inline __attribute__((always_inline)) int cell_rowid(Btree *bt, PgPage *pg, int i,
                                                            int64_t *out);

/* Descend from the top page to the leftmost leaf. */
static int descend_left(BtCursor *c) {
  while (!top(c)->leaf) {
    c->idx[c->depth - 1] = 0;
    int rc = btree_cursor_load_child(c, btree_page_child(c->pg[c->depth - 1], 0));
    if (rc) return rc;
  }
  c->idx[c->depth - 1] = 0;
  if (top(c)->ncell == 0 && c->depth > 1) {
    return BT_CORRUPT(c->bt, pager_pgno(c->pg[c->depth - 1]), "empty non-root page");
  }
  return SHALE_OK;
}

static int descend_right(BtCursor *c) {
  while (!top(c)->leaf) {
    MemPage *m = top(c);
    c->idx[c->depth - 1] = m->ncell;
    int rc = btree_cursor_load_child(c, page_right(c->pg[c->depth - 1]));
    if (rc) return rc;
  }
  MemPage *m = top(c);
  if (m->ncell == 0 && c->depth > 1) {
    return BT_CORRUPT(c->bt, pager_pgno(c->pg[c->depth - 1]), "empty non-root page");
  }
  c->idx[c->depth - 1] = m->ncell ? (uint16_t)(m->ncell - 1) : 0;
  return SHALE_OK;
}

int btree_cursor_rowid(BtCursor *c, int64_t *rowid) {
  if (c->info_ok) {
    *rowid = c->info.key;
    return SHALE_OK;
  }
  return cell_rowid(c->bt, c->pg[c->depth - 1], c->idx[c->depth - 1], rowid);
}

int btree_cursor_info(BtCursor *c, CellInfo **out) {
  if (!c->info_ok) {
    int rc = btree_page_cell_parse(c->bt, c->pg[c->depth - 1], c->idx[c->depth - 1], &c->info);
    if (rc) return rc;
    c->info_ok = 1;
  }
  *out = &c->info;
  return SHALE_OK;
}

/* Read payload bytes [off, off+n) of the cell described by ci on page pg.
 * cache (may be NULL) is the cursor whose overflow cache to use. */
static int read_payload(Btree *bt, PgPage *pg, const CellInfo *ci, uint32_t off, uint32_t n,
                        uint8_t *buf, BtCursor *cache, int write) {
  if ((uint64_t)off + n > ci->npayload) {
    return BT_CORRUPT(bt, pager_pgno(pg), "payload read past its end");
  }
  assert(off >= ci->nlocal);
  uint32_t per = bt->usable - 4;
  uint32_t q = off - ci->nlocal;
  uint32_t k = q / per, within = q % per;
  uint32_t npages = (ci->npayload - ci->nlocal + per - 1) / per;
  uint32_t dbsize = pager_db_size(bt->pager);
  uint32_t pgno = ci->ovfl, j = 0;
  if (cache && cache->novfl > 0) {
    j = cache->novfl - 1 < k ? cache->novfl - 1 : k;
    pgno = cache->ovfl[j];
  }
  if (cache && cache->ovfl_alloc < npages) {
    uint32_t *a = shale_realloc(cache->ovfl, sizeof(uint32_t) * npages);
    if (!a) return SHALE_NOMEM;
    cache->ovfl = a;
    cache->ovfl_alloc = npages;
  }
  if (cache && cache->novfl == 0) {
    cache->ovfl[0] = ci->ovfl;
    cache->novfl = 1;
  }
  while (n > 0) {
    if (pgno < 2 || pgno > dbsize || j >= npages) {
      return BT_CORRUPT(bt, pager_pgno(pg), "overflow chain broken");
    }
    uint32_t next, m = j >= k ? (per - within < n ? per - within : n) : 0;
    if (!write) { /* copied out at once: no cache slot for the page */
      const uint8_t *d;
      int rc = pager_peek(bt->pager, pgno, &d);
      if (rc) return rc;
      next = util_get4(d);
      if (m) memcpy(buf, d + 4 + within, m);
    } else {
      PgPage *op;
      int rc = pager_get(bt->pager, pgno, 0, &op);
      if (rc) return rc;
      uint8_t *d = pager_data(op);
      next = util_get4(d);
      if (m && (rc = pager_write(op)) != SHALE_OK) {
        pager_unref(op);
        return rc;
      }
      if (m) memcpy(d + 4 + within, buf, m);
      pager_unref(op);
    }
    if (m) {
      buf += m;
      n -= m;
      within = 0;
    }
    j++;
    pgno = next;
    if (cache && j < npages && cache->novfl == j) cache->ovfl[cache->novfl++] = next;
  }
  return SHALE_OK;
}

/* Payload access for a cell: local part from the page, rest from the chain. */
static int cell_payload(Btree *bt, PgPage *pg, uint32_t celloff, const CellInfo *ci, uint32_t off,
                        uint32_t n, uint8_t *buf, BtCursor *cache, int write) {
  if ((uint64_t)off + n > ci->npayload) {
    return BT_CORRUPT(bt, pager_pgno(pg), "payload access past its end");
  }
  if (off < ci->nlocal) {
    uint32_t k = ci->nlocal - off < n ? ci->nlocal - off : n;
    uint8_t *p = pager_data(pg) + celloff + ci->payoff + off;
    if (write) {
      int rc = pager_write(pg);
      if (rc) return rc;
      memcpy(p, buf, k);
    } else {
      memcpy(buf, p, k);
    }
    off += k;
    n -= k;
    buf += k;
  }
  if (n == 0) return SHALE_OK;
  return read_payload(bt, pg, ci, off, n, buf, cache, write);
}

/* Full key of cell i of page pg: either a pointer into the page (*freeme =
 * NULL) or a fresh copy (*freeme = it). */
static int cell_key(Btree *bt, PgPage *pg, int i, const uint8_t **key, uint32_t *nkey,
                    uint8_t **freeme) {
  CellInfo ci;
  *freeme = NULL;
  int rc = btree_page_cell_parse(bt, pg, i, &ci);
  if (rc) return rc;
  uint32_t off = page_cell_off(pg, i);
  *nkey = ci.npayload;
  if (ci.nlocal == ci.npayload) {
    *key = pager_data(pg) + off + ci.payoff;
    return SHALE_OK;
  }
  uint8_t *b = shale_malloc(ci.npayload ? ci.npayload : 1);
  if (!b) return SHALE_NOMEM;
  rc = cell_payload(bt, pg, off, &ci, 0, ci.npayload, b, NULL, 0);
  if (rc) {
    shale_free(b);
    return rc;
  }
  *key = b;
  *freeme = b;
  return SHALE_OK;
}

/* ---- seeks ---- */

/* Rowid of the table cell at offset off of page pg (data d, kind leaf).
 * Lazy validation: btree_page_init only checked that the cell starts inside the
 * content area with room for the smallest cell, so the varints are read
 * unchecked only when the longest ones fit below the usable size; a cell
 * nearer the end is read from a zero-padded copy of the page's last bytes
 * (a varint running off the page is SHALE_CORRUPT). */
/* The varint at p[0..avail): its length, or 0 if it does not end there. */
static inline uint32_t varint_within(const uint8_t *p, uint32_t avail, uint64_t *v) {
  uint64_t x = 0;
  for (uint32_t i = 0; i < avail && i < 9; i++) {
    if (i == 8) {
      *v = x << 8 | p[8];
      return 9;
    }
    x = x << 7 | (p[i] & 0x7f);
    if (p[i] < 0x80) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

static int cell_rowid_bounded(Btree *bt, PgPage *pg, const uint8_t *d, uint32_t off, int leaf,
                              int64_t *out) {
  /* each varint decoded with its bytes checked against the page's usable
   * end (no copy: a seek meets a cell this close to the end about once) */
  uint32_t avail = off < bt->usable ? bt->usable - off : 0;
  const uint8_t *p = d + off;
  uint64_t v;
  uint32_t k = 4;
  if (leaf) k = varint_within(p, avail, &v);
  if (k == 0 || k >= avail || !varint_within(p + k, avail - k, &v))
    return BT_CORRUPT(bt, pager_pgno(pg), "cell overflows the page");
  *out = (int64_t)v;
  return SHALE_OK;
}

/* The rowid varint at p if it is at most three bytes long (1), else 0. */
static inline int rowid3(const uint8_t *p, int64_t *out) {
  if (p[0] < 0x80) {
    *out = p[0];
  } else if (p[1] < 0x80) {
    *out = (int64_t)(p[0] & 0x7f) << 7 | p[1];
  } else if (p[2] < 0x80) {
    *out = (int64_t)(p[0] & 0x7f) << 14 | (int64_t)(p[1] & 0x7f) << 7 | p[2];
  } else {
    return 0;
  }
  return 1;
}

/* near (a constant at each call site): read a cell near the usable end
 * inline where it can (the descent's searches, which meet the first cells
 * of every page), else always by the bounded decode (the shorter code of
 * the single reads). */
static inline __attribute__((always_inline)) int rowid_at(Btree *bt, PgPage *pg, const uint8_t *d,
                                                          uint32_t off, uint32_t lim, int leaf,
                                                          int near, int64_t *out) {
  const uint8_t *p = d + off;
  if (off > lim) {
    /* Within 18 bytes of the usable end, where a page keeps its first
     * cells (a seek reads them often): a one-byte payload size (leaf) or
     * the child (interior), then a rowid of up to three bytes, all below
     * the end, are read inline; anything else by the bounded decode. */
    uint32_t i = leaf ? 1 : 4;
    if (near && off + i + 3 <= bt->usable && (!leaf || p[0] < 0x80) && rowid3(p + i, out)) {
      return SHALE_OK;
    }
    return cell_rowid_bounded(bt, pg, d, off, leaf, out);
  }
  if (!leaf) {
    p += 4;
  } else if (*p++ >= 0x80) { /* payload size: skip the varint */
    int j = 1;
    while (j < 9 && *p++ >= 0x80) j++;
  }
  if (!rowid3(p, out)) {
    uint64_t v;
    util_get_varint(p, &v);
    *out = (int64_t)v;
  }
  return SHALE_OK;
}

/* Rowid of cell i of a table page. */
static inline __attribute__((always_inline)) int cell_rowid(Btree *bt, PgPage *pg, int i,
                                                            int64_t *out) {
  MemPage *m = page_mem(pg);
  const uint8_t *d = pager_data(pg);
  return rowid_at(bt, pg, d, util_get2(d + m->hdr + m->hdrlen + 2 * i), bt->usable - 18, m->leaf, 0,
                  out);
}

/* Child pointer i (0..ncell, ncell = the right pointer) of an interior
 * page: btree_page_init checked that each cell pointer leaves room for the 4-byte
 * child (a 0 child reads as corrupt when loaded). */
static inline uint32_t interior_child(PgPage *pg, const MemPage *m, int i) {
  const uint8_t *d = pager_data(pg);
  return i < m->ncell ? util_get4(d + util_get2(d + m->hdr + m->hdrlen + 2 * i))
                      : util_get4(d + m->hdr + 8);
}

/* Binary search of cells lo..hi-1 of a table page: the first cell with
 * rowid >= key (hi if none) in *at, and its rowid in *kat when the search
 * read it (*got = 1; 0 when *at == hi and no cell was >= key). The page's
 * data, pointer array and the bound of the unchecked reads are looked up
 * once; leaf is a constant at each call site of leaf_search, so each kind
 * of page gets its own loop (the descent from the root uses rowid_search
 * below). A cell equal to the key ends the search: rowids are unique, so
 * it is the first cell >= key. */
static inline __attribute__((always_inline)) int search_cells(Btree *bt, PgPage *pg,
                                                              const uint8_t *d, const uint8_t *ptr,
                                                              int leaf, int lo, int hi,
                                                              int64_t rowid, int *at, int64_t *kat,
                                                              int *got) {
  const uint32_t lim = bt->usable - 18;
  int64_t khi = 0;
  int have = 0;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int64_t k;
    int rc = rowid_at(bt, pg, d, util_get2(ptr + 2 * mid), lim, leaf, 0, &k);
    if (rc) return rc;
    if (k < rowid) {
      lo = mid + 1;
    } else {
      hi = mid;
      khi = k;
      have = 1;
      if (k == rowid) { /* rowids are unique: the first cell >= key */
        lo = mid;
        break;
      }
    }
  }
  *at = lo;
  *kat = khi;
  *got = have;
  return SHALE_OK;
}

static int leaf_search(Btree *bt, PgPage *pg, int lo, int hi, int64_t rowid, int *at, int64_t *kat,
                       int *got) {
  MemPage *m = page_mem(pg);
  const uint8_t *d = pager_data(pg);
  const uint8_t *ptr = d + m->hdr + m->hdrlen;
  return m->leaf ? search_cells(bt, pg, d, ptr, 1, lo, hi, rowid, at, kat, got)
                 : search_cells(bt, pg, d, ptr, 0, lo, hi, rowid, at, kat, got);
}

/* What a rowid seek knows of a page's keys before it reads any: each is
 * > lo (has_lo) and <= hi (has_hi), from the parent's cells on either side
 * of the child taken (a table interior cell's key is >= every key of its
 * left subtree). Hints only: the search below reads every key it relies on. */
typedef struct {
  int64_t lo, hi;
  int has_lo, has_hi;
} RowidHint;

/* The first cell >= rowid of a table page of n cells (n if none) in *at, its
 * key in *kat when at < n, and in *h the hint for the child at index at (a
 * leaf ignores it). Rowids are mostly dense or evenly spread, so the search
 * interpolates: it guesses the answer's index from the keys (or hints) at
 * either end of the unread cells, then gallops from the guess (steps 1, 2,
 * 4, ...) to a bracket that it binary-searches. A good guess costs two key
 * reads instead of a binary search's log2(n); a bad one (skewed keys) at
 * most about twice log2(n). Any key order (a corrupt page) yields some index
 * in 0..n, every read being within the page's n cells. leaf is a constant
 * at the call sites (one loop per kind of page, as search_cells). */
static inline __attribute__((always_inline)) int rowid_search(Btree *bt, PgPage *pg,
                                                              const uint8_t *d, int leaf, int n,
                                                              int64_t rowid, RowidHint *h, int *at,
                                                              int64_t *kat) {
  const MemPage *m = page_mem(pg);
  const uint8_t *ptr = d + m->hdr + m->hdrlen;
  const uint32_t lim = bt->usable - 18;
  /* key(lo) < rowid <= key(hi); lo == -1 and hi == n are the hint's ends */
  int lo = -1, hi = n, rc;
  int64_t klo = h->lo, khi = h->hi, k;
  int has_lo = h->has_lo, has_hi = h->has_hi;
#define ROWID_KEY(i) rowid_at(bt, pg, d, util_get2(ptr + 2 * (i)), lim, leaf, 1, &k)
  if (n >= 8) {
    if (!has_lo) { /* the leftmost path: no lower bound but the first key */
      if ((rc = ROWID_KEY(0)) != SHALE_OK) return rc;
      if (k >= rowid) {
        hi = 0, khi = k;
        goto found;
      }
      lo = 0, klo = k, has_lo = 1;
    }
    if (!has_hi) { /* the rightmost path: the last key */
      if ((rc = ROWID_KEY(n - 1)) != SHALE_OK) return rc;
      if (k < rowid) {
        lo = n - 1, klo = k;
        goto found;
      }
      hi = n - 1, khi = k, has_hi = 1;
    }
    if (klo < rowid && rowid <= khi && hi - lo > 2) {
      /* keys evenly spread from klo at lo to khi at hpos: a leaf's upper
       * hint is its own last key, an interior page's that of its right
       * child */
      int hpos = hi == n && leaf ? n - 1 : hi;
      double x = (double)((uint64_t)rowid - (uint64_t)klo) * (double)(hpos - lo) /
                 (double)((uint64_t)khi - (uint64_t)klo);
      int e = lo + (int)x;
      if (e < lo + x) e++;
      if (e <= lo) e = lo + 1;
      if (e >= hi) e = hi - 1;
      if ((rc = ROWID_KEY(e)) != SHALE_OK) return rc;
      if (k == rowid) {
        hi = e, khi = k;
        goto found;
      }
      if (k > rowid) { /* gallop down from e */
        hi = e, khi = k;
        for (int step = 1;; step *= 2) {
          int j = hi - step;
          if (j <= lo) break;
          if ((rc = ROWID_KEY(j)) != SHALE_OK) return rc;
          if (k < rowid) {
            lo = j, klo = k;
            break;
          }
          hi = j, khi = k;
          if (k == rowid) goto found;
        }
      } else { /* gallop up from e */
        lo = e, klo = k;
        for (int step = 1;; step *= 2) {
          int j = lo + step;
          if (j >= hi) break;
          if ((rc = ROWID_KEY(j)) != SHALE_OK) return rc;
          if (k >= rowid) {
            hi = j, khi = k;
            if (k == rowid) goto found;
            break;
          }
          lo = j, klo = k;
        }
      }
    }
  }
  while (hi - lo > 1) { /* the bracket's binary search */
    int mid = lo + (hi - lo) / 2;
    if ((rc = ROWID_KEY(mid)) != SHALE_OK) return rc;
    if (k < rowid) {
      lo = mid, klo = k;
    } else {
      hi = mid, khi = k;
      if (k == rowid) break; /* rowids are unique: the first cell >= key */
    }
  }
#undef ROWID_KEY
found:
  *at = hi;
  *kat = khi;
  h->lo = klo;
  h->hi = khi;
  h->has_lo = has_lo || lo >= 0;
  h->has_hi = has_hi || hi < n;
  return SHALE_OK;
}

/* Fast path of a rowid seek (as SQLite's): a VALID cursor whose leaf must
 * hold the rowid's position is re-positioned on that leaf alone. The leaf
 * holds it if rowid lies within its first..last rowids (rowids are unique
 * and ordered across leaves), or beyond its last (first) rowid when the
 * stack is the rightmost (leftmost) path. Every page on the stack must be
 * parsed (init): a page reloaded under the cursor (cache invalidation,
 * rollback) has init == 0 and takes the full seek. A random seek pays two
 * rowid reads here (the current entry and the leaf's last or first) before
 * the full seek. Returns 1 if done (*rc set: a corrupt cell met on the
 * way), 0 to take the full seek. */
static int seek_rowid_here(BtCursor *c, int64_t rowid, int *res, int *rc) {
  if (c->state != CUR_VALID || c->depth == 0 || !c->intkey) return 0;
  int t = c->depth - 1;
  PgPage *pg = c->pg[t];
  MemPage *m = page_mem(pg);
  Btree *bt = c->bt;
  if (!m->init || !m->leaf || !m->intkey || m->ncell == 0 || c->idx[t] >= m->ncell) return 0;
  int n = m->ncell, cur = c->idx[t], at, got = 0;
  int64_t k, edge, kat = 0;
  if (c->info_ok) /* the current row was read: its cell is parsed */
    k = c->info.key;
  else if ((*rc = cell_rowid(bt, pg, cur, &k)) != SHALE_OK)
    return 1;
  int up = k < rowid;
  if (k == rowid) {
    at = cur;
    kat = k;
    got = 1;
  } else if (up && cur + 1 < n &&
             ((*rc = cell_rowid(bt, pg, cur + 1, &kat)) != SHALE_OK || kat >= rowid)) {
    if (*rc) return 1;
    at = cur + 1; /* the next entry (sequential access): one rowid read */
  } else {
    /* the leaf's edge on the side of the key: its last entry when the key
     * is above the current one, else its first */
    if ((*rc = cell_rowid(bt, pg, up ? n - 1 : 0, &edge)) != SHALE_OK) return 1;
    if (up ? rowid > edge : rowid < edge) {
      /* Only the rightmost (leftmost) leaf also holds the positions past
       * its last (before its first) entry. */
      for (int l = 0; l < t; l++) {
        MemPage *pm = page_mem(c->pg[l]);
        if (!pm->init || pm->leaf) return 0;
        if (c->idx[l] != (up ? pm->ncell : 0)) return 0;
      }
      at = up ? n : 0;
      kat = edge;
      got = !up;
    } else {
      int from = up ? (cur + 2 < n - 1 ? cur + 2 : n - 1) : 0;
      *rc = leaf_search(bt, pg, from, up ? n - 1 : cur, rowid, &at, &kat, &got);
      if (*rc) return 1;
      /* not read: at is the bound of the range searched, whose key (the
       * leaf's last entry, or the current one) is >= rowid */
      if (!got) kat = up ? edge : k;
    }
  }
  if (at != cur) moved(c);
  c->skip = 0;
  if (at < n) {
    c->idx[t] = (uint16_t)at;
    *res = kat == rowid ? 0 : 1;
  } else {
    c->idx[t] = (uint16_t)(n - 1);
    *res = -1;
  }
  return 1;
}

/* The full rowid seek from the root, on a path whose levels that are
 * still the right pages are kept (seek_start); seek_end then drops the
 * rest. */
static int seek_rowid_down(BtCursor *c, int64_t rowid, int *res, int *kept) {
  int rc = seek_start(c, kept);
  if (rc) return rc;
  if (c->depth == 0) {
    *res = -1;
    return SHALE_OK;
  }
  if (!c->intkey) return BT_CORRUPT(c->bt, c->root, "rowid seek on an index tree");
  /* (rowid_search inline, one copy per kind of page: the searches are
   * most of a seek) */
  int lo;
  int64_t k;
  PgPage *pg;
  MemPage *m;
  RowidHint h = {0, 0, 0, 0};
  for (;;) {
    pg = c->pg[c->depth - 1];
    m = page_mem(pg);
    const uint8_t *d = pager_data(pg);
    if (m->leaf) {
      rc = rowid_search(c->bt, pg, d, 1, m->ncell, rowid, &h, &lo, &k);
      if (rc) return rc;
      break;
    }
    rc = rowid_search(c->bt, pg, d, 0, m->ncell, rowid, &h, &lo, &k);
    if (rc) return rc;
    c->idx[c->depth - 1] = (uint16_t)lo;
    rc = seek_child(c, interior_child(pg, m, lo), kept);
    if (rc) return rc;
  }
  if (m->ncell == 0) {
    if (c->depth > 1) return BT_CORRUPT(c->bt, pager_pgno(pg), "empty non-root page");
    c->state = CUR_INVALID;
    *res = -1;
    return SHALE_OK;
  }
  c->state = CUR_VALID;
  if (lo < m->ncell) {
    c->idx[c->depth - 1] = (uint16_t)lo;
    *res = k == rowid ? 0 : 1; /* (k: the search read cell lo) */
  } else {
    c->idx[c->depth - 1] = (uint16_t)(m->ncell - 1);
    *res = -1;
  }
  return SHALE_OK;
}

int btree_cursor_seek_rowid(BtCursor *c, int64_t rowid, int *res) {
  int rc = SHALE_OK, kept;
  /* Random keys rarely fall in the cursor's leaf: after two seeks that left
   * it, its two rowid reads are skipped until a seek stays there again. */
  if (c->far < 2 && seek_rowid_here(c, rowid, res, &rc)) {
    c->far = 0;
    return rc;
  }
  const PgPage *was = c->state == CUR_VALID && c->depth > 0 ? c->pg[c->depth - 1] : NULL;
  rc = seek_rowid_down(c, rowid, res, &kept);
  if (was && c->depth > 0 && c->pg[c->depth - 1] == was)
    c->far = 0;
  else if (c->far < 2)
    c->far++;
  seek_end(c, &kept);
  return rc;
}

int btree_cursor_seek_rowid_append(BtCursor *c, int64_t rowid, int *res) {
  /* (no seek_rowid_here: the insert tried the cursor's own place, and a
   * second caller would keep it out of line in btree_cursor_seek_rowid) */
  int rc = btree_cursor_move_to_root(c);
  if (rc) return rc;
  /* down the right edge while each page's last key is below the rowid:
   * one rowid read a level instead of a binary search */
  while (c->depth > 0 && c->intkey) {
    PgPage *pg = c->pg[c->depth - 1];
    MemPage *m = page_mem(pg);
    int64_t k;
    if (m->ncell == 0) break;
    rc = cell_rowid(c->bt, pg, m->ncell - 1, &k);
    if (rc) return rc;
    if (k >= rowid) break; /* not past this page's last key: the plain seek */
    if (m->leaf) {
      c->idx[c->depth - 1] = (uint16_t)(m->ncell - 1);
      c->state = CUR_VALID;
      *res = -1;
      return SHALE_OK;
    }
    c->idx[c->depth - 1] = (uint16_t)m->ncell;
    rc = btree_cursor_load_child(c, interior_child(pg, m, m->ncell));
    if (rc) return rc;
  }
  return btree_cursor_seek_rowid(c, rowid, res);
}

/* The key of an index cell whose payload is wholly local, read inline for a
 * seek probe: off is the offset of the payload-size varint (past the child
 * pointer on interior pages), u the usable size and maxlocal the largest
 * local payload. Returns 0 when the cell needs cell_key's full parse: a size
 * varint longer than 2 bytes, a payload that spills, or a cell running past
 * the usable end (btree_cell_parse then reports it). */
static inline int probe_key(const uint8_t *d, uint32_t off, uint32_t u, uint32_t maxlocal,
                            const uint8_t **key, uint32_t *nkey) {
  const uint8_t *p = d + off;
  uint32_t n, h;
  if (off + 2 > u) return 0; /* (a one-byte size at u - 1 takes the full parse) */
  if (p[0] < 0x80) {
    n = p[0];
    h = 1;
  } else if (p[1] < 0x80) {
    n = (uint32_t)(p[0] & 0x7f) << 7 | p[1];
    h = 2;
  } else {
    return 0;
  }
  if (n > maxlocal || off + h + n > u) return 0;
  *key = p + h;
  *nkey = n;
  return 1;
}

/* A probe of a cell seek_index does not read inline (a key size that is
 * not a one-byte varint within max_local and the page): probe_key's
 * two-byte size, else the full parse and a gathered copy of a spilled key.
 * off is the offset of the payload-size varint. Returns the comparison;
 * an error goes to *rc (the result is then 0). */
__attribute__((noinline)) static int probe_slow(BtCursor *c, PgPage *pg, int i, uint32_t off,
                                                int (*cmp)(void *, const void *, uint32_t),
                                                void *ctx, int *rc) {
  const uint8_t *key;
  uint32_t nkey;
  if (probe_key(pager_data(pg), off, c->bt->usable, c->bt->max_local, &key, &nkey))
    return cmp(ctx, key, nkey);
  uint8_t *freeme = NULL;
  *rc = cell_key(c->bt, pg, i, &key, &nkey, &freeme);
  if (*rc) return 0;
  int r = cmp(ctx, key, nkey);
  if (freeme) shale_free(freeme);
  return r;
}

/* One probe of an index seek: the cell whose payload-size varint is at
 * offset off of pg (entry i), against the key: sign(cell - key). The key is
 * read in place when its size is a one-byte varint of at most max1 =
 * min(127, max_local) (wholly local) and it ends within the usable size u;
 * the size byte itself is always on the page (btree_page_init checked
 * every cell pointer: invariant 3). Any other cell takes probe_slow; an
 * error goes to *rc. */
static inline int index_probe(BtCursor *c, PgPage *pg, const uint8_t *d, uint32_t off, int i,
                              int (*cmp)(void *, const void *, uint32_t), void *ctx, uint32_t u,
                              uint32_t max1, int *rc) {
  uint32_t nk = d[off];
  if (nk <= max1 && off + 1 + nk <= u) return cmp(ctx, d + off + 1, nk);
  return probe_slow(c, pg, i, off, cmp, ctx, rc);
}

static inline uint32_t probe_max1(const Btree *bt) {
  return bt->max_local < 0x7f ? bt->max_local : 0x7f;
}

/* Binary search of entries lo..hi-1 of index page pg: the index of an
 * entry equal to the key (*eq = 1; any of several equal ones), else of the
 * first entry above it (hi if none; *eq = 0). An error goes to *rc. */
static inline int index_search(BtCursor *c, PgPage *pg, int lo, int hi,
                               int (*cmp)(void *, const void *, uint32_t), void *ctx, int *eq,
                               int *rc) {
  const MemPage *m = page_mem(pg);
  const uint8_t *d = pager_data(pg), *ptr = d + m->hdr + m->hdrlen;
  const uint32_t skip = m->leaf ? 0 : 4, u = c->bt->usable, max1 = probe_max1(c->bt);
  *eq = 0;
  while (lo < hi) {
    int mid = (int)((unsigned)(lo + hi) >> 1), r;
    uint32_t off = util_get2(ptr + 2 * mid) + skip, nk = d[off];
    if (nk <= max1 && off + 1 + nk <= u) { /* index_probe, *rc tested on the slow path only */
      r = cmp(ctx, d + off + 1, nk);
    } else {
      r = probe_slow(c, pg, mid, off, cmp, ctx, rc);
      if (*rc) return lo;
    }
    if (r == 0) {
      *eq = 1;
      return mid;
    }
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Entry i of the cursor's page at level l against the key (an interior
 * page's cell past its child pointer). */
static int level_probe(BtCursor *c, int l, int i, int (*cmp)(void *, const void *, uint32_t),
                       void *ctx, int *rc) {
  PgPage *pg = c->pg[l];
  const MemPage *m = page_mem(pg);
  const uint8_t *d = pager_data(pg);
  uint32_t off = util_get2(d + m->hdr + m->hdrlen + 2 * i) + (m->leaf ? 0 : 4);
  return index_probe(c, pg, d, off, i, cmp, ctx, c->bt->usable, probe_max1(c->bt), rc);
}

/* Does the key, above the last entry of the cursor's leaf (right = 1) or
 * below its first, still belong in that leaf? Then the divider above that
 * edge, the first ancestor cell the path passes on that side, sorts after
 * (before) the key, or there is none (the leaf is at that edge of the
 * tree). 0 when it may belong elsewhere or a page on the path is not
 * parsed; an error goes to *rc (then 1). */
static int index_edge_holds(BtCursor *c, int (*cmp)(void *, const void *, uint32_t), void *ctx,
                            int right, int *rc) {
  for (int l = c->depth - 2; l >= 0; l--) {
    MemPage *m = page_mem(c->pg[l]);
    if (!m->init || m->leaf) return 0;
    int i = c->idx[l];
    if (right ? i >= m->ncell : i == 0) continue; /* the edge of this subtree too */
    int r = level_probe(c, l, right ? i : i - 1, cmp, ctx, rc);
    if (*rc) return 1;
    return right ? r > 0 : r < 0;
  }
  return 1;
}

/* Fast path of an index seek (SQLite has one on the last leaf): a VALID
 * cursor whose leaf must hold the key's position is re-positioned on that
 * leaf alone. The leaf holds it when the key lies within its first..last
 * entries (no entry of another page sorts between two entries of one
 * leaf), or beyond its last (before its first) entry while
 * index_edge_holds. The probes go from the current entry outwards: that
 * entry, its neighbour on the key's side, the leaf's edge on that side,
 * then a binary search between; a key next to the current entry (an
 * ascending run, an insert after the seek or the delete of its neighbour)
 * costs one or two probes. Tried when the cursor's previous seek ended next
 * to where the cursor was, or was done here (near), or when the caller
 * expects the key there (force); a miss costs up to four probes and
 * clears near. Every page on the stack
 * must be parsed (init): a page reloaded under the cursor takes the full
 * seek. Returns 1 if done (*rc set on an error), 0 to take the full seek. */
static int seek_index_here(BtCursor *c, int (*cmp)(void *, const void *, uint32_t), void *ctx,
                           int force, int *res, int *rc) {
  if ((!c->near && !force) || c->state != CUR_VALID || c->depth == 0 || c->intkey) return 0;
  const int t = c->depth - 1;
  PgPage *pg = c->pg[t];
  MemPage *m = page_mem(pg);
  if (!m->init || !m->leaf || m->intkey || m->ncell == 0 || c->idx[t] >= m->ncell) return 0;
  const int n = m->ncell, cur = c->idx[t];
  int at, eq = 0, r = level_probe(c, t, cur, cmp, ctx, rc);
  if (*rc) return 1;
  if (r == 0) {
    at = cur;
    eq = 1;
  } else if (r < 0) { /* the key is above entry cur: entries below lo are below it */
    int lo = cur + 1;
    if (lo < n) {
      if ((r = level_probe(c, t, lo, cmp, ctx, rc)) >= 0 || *rc) {
        at = lo;
        eq = r == 0;
        goto placed;
      }
      lo++;
    }
    if (lo < n) {
      if ((r = level_probe(c, t, n - 1, cmp, ctx, rc)) >= 0 || *rc) {
        at = r == 0 ? n - 1 : index_search(c, pg, lo, n - 1, cmp, ctx, &eq, rc);
        eq |= r == 0;
        goto placed;
      }
    }
    if (!index_edge_holds(c, cmp, ctx, 1, rc)) goto miss;
    at = n; /* past the leaf's last entry */
  } else {  /* the key is below entry cur: entries from hi on are above it */
    int hi = cur;
    if (hi > 0) {
      if ((r = level_probe(c, t, hi - 1, cmp, ctx, rc)) <= 0 || *rc) {
        at = r == 0 ? hi - 1 : hi;
        eq = r == 0;
        goto placed;
      }
      hi--;
    }
    if (hi > 0) {
      if ((r = level_probe(c, t, 0, cmp, ctx, rc)) <= 0 || *rc) {
        at = r == 0 ? 0 : index_search(c, pg, 1, hi, cmp, ctx, &eq, rc);
        eq |= r == 0;
        goto placed;
      }
    }
    if (!index_edge_holds(c, cmp, ctx, 0, rc)) goto miss;
    at = 0; /* before the leaf's first entry */
  }
placed:
  if (*rc) return 1;
  if (c->saved_key) {
    shale_free(c->saved_key);
    c->saved_key = NULL;
  }
  moved(c);
  c->skip = 0;
  c->deleted = 0;
  c->sought = !eq; /* (near stays: a forced hit says nothing of the next seek) */
  if (eq) {
    c->idx[t] = (uint16_t)at;
    *res = 0;
  } else if (at < n) {
    c->idx[t] = (uint16_t)at;
    *res = 1;
  } else {
    c->idx[t] = (uint16_t)(n - 1);
    *res = -1;
  }
  c->seekres = *res;
  return 1;
miss:
  c->near = 0;
  return *rc != SHALE_OK;
}

/* The full index seek from the root, on a path whose levels that are
 * still the right pages are kept (seek_start; the caller's seek_end drops
 * the rest). was/was_idx: the leaf and entry the cursor was on. */
static int seek_index_down(BtCursor *c, int (*cmp)(void *, const void *, uint32_t), void *ctx,
                           const PgPage *was, int was_idx, int *res, int *kept) {
  int rc = seek_start(c, kept);
  if (rc) return rc;
  c->near = 0;
  if (c->depth == 0) {
    *res = -1;
    return SHALE_OK;
  }
  if (c->intkey) return BT_CORRUPT(c->bt, c->root, "key seek on a table tree");
  for (;;) {
    PgPage *pg = c->pg[c->depth - 1];
    MemPage *m = page_mem(pg);
    const int ncell = m->ncell;
    int eq, lo = index_search(c, pg, 0, ncell, cmp, ctx, &eq, &rc);
    if (rc) return rc;
    if (eq) {
      c->idx[c->depth - 1] = (uint16_t)lo;
      c->state = CUR_VALID;
      /* (not on the entry it was on: a second seek of the same key, as a
       * REPLACE's, says nothing of the next key) */
      c->near = m->leaf && pg == was && lo != was_idx && lo - was_idx <= 1 && was_idx - lo <= 1;
      *res = 0;
      return SHALE_OK;
    }
    if (m->leaf) {
      if (ncell == 0) {
        if (c->depth > 1) return BT_CORRUPT(c->bt, pager_pgno(pg), "empty non-root page");
        c->state = CUR_INVALID;
        *res = -1;
        return SHALE_OK;
      }
      c->state = CUR_VALID;
      c->sought = 1;
      c->near = pg == was && lo - was_idx <= 1 && was_idx - lo <= 1;
      if (lo < ncell) {
        c->idx[c->depth - 1] = (uint16_t)lo;
        *res = 1;
      } else {
        c->idx[c->depth - 1] = (uint16_t)(ncell - 1);
        *res = -1;
      }
      c->seekres = *res;
      return SHALE_OK;
    }
    c->idx[c->depth - 1] = (uint16_t)lo;
    rc = seek_child(c, interior_child(pg, m, lo), kept);
    if (rc) return rc;
  }
}

/* Index seek: cmp(ctx, cellkey, n) = sign(cell - search), from the
 * cursor's own leaf when seek_index_here finds it there, else from the
 * root with a binary search per page (index_search). */
static int seek_index(BtCursor *c, int (*cmp)(void *, const void *, uint32_t), void *ctx, int force,
                      int *res) {
  int rc = SHALE_OK, kept;
  c->nseek++;
  c->seekres = 0;
  if (seek_index_here(c, cmp, ctx, force, res, &rc)) return rc;
  /* the leaf and entry the cursor was on: a seek that ends there again,
   * next to that entry, lets the next one try the leaf first (a run of
   * nearby keys; random keys rarely do). The page is only compared, never
   * dereferenced. */
  const PgPage *was = c->state == CUR_VALID && c->depth > 0 ? c->pg[c->depth - 1] : NULL;
  const int was_idx = was ? c->idx[c->depth - 1] : 0;
  rc = seek_index_down(c, cmp, ctx, was, was_idx, res, &kept);
  seek_end(c, &kept);
  return rc;
}

typedef struct KeyCtx {
  BtCursor *c;
  const void *key;
  uint32_t nkey;
} KeyCtx;

static int memcmp_keys(const void *a, uint32_t na, const void *b, uint32_t nb) {
  uint32_t n = na < nb ? na : nb;
  int r = n ? memcmp(a, b, n) : 0;
  if (r) return r;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

static int key_cmp(void *ctx, const void *cell, uint32_t n) {
  KeyCtx *k = ctx;
  if (k->c->cmp) return k->c->cmp(k->c->cmp_ctx, cell, n, k->key, k->nkey);
  return memcmp_keys(cell, n, k->key, k->nkey);
}

int btree_cursor_seek_key(BtCursor *c, const void *key, uint32_t nkey, int force, int *res) {
  KeyCtx k = {c, key, nkey};
  return seek_index(c, key_cmp, &k, force, res);
}

int btree_cursor_seek_cmp(BtCursor *c, int (*cmp)(void *, const void *, uint32_t), void *ctx,
                          int force, int *res) {
  return seek_index(c, cmp, ctx, force, res);
}

/* ---- save / restore (invariant 5) ---- */

int btree_cursor_save(BtCursor *c) {
  if (c->state != CUR_VALID) return SHALE_OK;
  CellInfo *ci;
  int rc = SHALE_OK;
  if (c->deleted && c->skip != 0) {
    /* left past a delete: saved at the deleted key, so that a re-seek
     * yields the entries around it, whatever is inserted meanwhile */
    if (!c->intkey) btree_cursor_delkey_to_saved(c);
  } else if ((rc = btree_cursor_info(c, &ci)) != SHALE_OK) {
    return rc;
  } else if (c->intkey) {
    c->saved_rowid = ci->key;
  } else {
    const uint8_t *key;
    uint32_t nkey;
    uint8_t *freeme;
    rc = cell_key(c->bt, c->pg[c->depth - 1], c->idx[c->depth - 1], &key, &nkey, &freeme);
    if (rc) return rc;
    if (freeme) {
      shale_free(c->saved_key);
      c->saved_key = freeme;
      c->saved_nkey = nkey;
    } else if ((rc = btree_cursor_save_key(c, key, nkey)) != SHALE_OK) {
      return rc;
    }
  }
  btree_cursor_release(c);
  c->state = CUR_REQSEEK;
  c->skip = 0;
  c->deleted = 0;
  return SHALE_OK;
}

int btree_cursor_save_key(BtCursor *c, const void *key, uint32_t nkey) {
  uint8_t *copy = shale_malloc(nkey ? nkey : 1);
  if (!copy) return SHALE_NOMEM;
  memcpy(copy, key, nkey);
  shale_free(c->saved_key);
  c->saved_key = copy;
  c->saved_nkey = nkey;
  return SHALE_OK;
}

int btree_cursor_restore(BtCursor *c) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  if (c->state != CUR_REQSEEK) return SHALE_OK;
  int res = 0, rc;
  if (c->intkey) {
    rc = btree_cursor_seek_rowid(c, c->saved_rowid, &res);
  } else {
    uint8_t *key = c->saved_key;
    c->saved_key = NULL; /* btree_cursor_move_to_root frees saved_key */
    rc = btree_cursor_seek_key(c, key, c->saved_nkey, 0, &res);
    shale_free(key);
  }
  if (rc) return fault(c, rc);
  c->skip = c->state == CUR_VALID ? res : 0;
  c->deleted = 0;
  c->sought = 0; /* placed at its old key, not at a key to insert */
  return SHALE_OK;
}

/* ---- public cursor API ---- */

int btree_cursor_is_intkey(BtCursor *c) { return c->intkey; }

int btree_cursor_at_last(BtCursor *c) {
  if (c->state != CUR_VALID || c->depth == 0) return 0;
  for (int l = 0; l < c->depth - 1; l++) {
    MemPage *m = page_mem(c->pg[l]);
    if (!m->init || m->leaf || c->idx[l] != m->ncell) return 0;
  }
  MemPage *m = top(c);
  return m->init && m->leaf && m->ncell > 0 && c->idx[c->depth - 1] + 1 == m->ncell;
}

/* Position on the first (right = 0) or last (right = 1) entry. A cursor
 * already on the last entry stays (a new rowid is asked for at every
 * insert, SQLite's BTCF_AtLast). */
static int move_to_end(BtCursor *c, int *empty, int right) {
  if (right && btree_cursor_at_last(c)) {
    c->skip = 0;
    *empty = 0;
    return SHALE_OK;
  }
  int rc = btree_cursor_move_to_root(c);
  if (rc) return fault(c, rc);
  if (c->depth == 0) {
    *empty = 1;
    return SHALE_OK;
  }
  rc = right ? descend_right(c) : descend_left(c);
  if (rc) return fault(c, rc);
  if (top(c)->ncell == 0) {
    c->state = CUR_INVALID;
    *empty = 1;
    return SHALE_OK;
  }
  c->state = CUR_VALID;
  *empty = 0;
  return SHALE_OK;
}

int btree_first(BtCursor *c, int *empty) { return move_to_end(c, empty, 0); }

int btree_last(BtCursor *c, int *empty) { return move_to_end(c, empty, 1); }

/* btree_next's every case but the next cell of the same leaf. */
__attribute__((noinline)) static int next_slow(BtCursor *c, int *eof) {
  int rc;
  if (c->state != CUR_VALID) { /* the call only where it has work */
    rc = btree_cursor_restore(c);
    if (rc) return rc;
  }
  *eof = 0;
  if (c->state != CUR_VALID) {
    *eof = 1;
    return SHALE_OK;
  }
  if (c->skip > 0) {
    c->skip = 0;
    return SHALE_OK;
  }
  c->skip = 0;
  moved(c);
  int t = c->depth - 1;
  MemPage *m = top(c);
  if (!m->leaf) {
    /* on an index interior entry: the next one is leftmost in child idx+1 */
    c->idx[t]++;
    rc = btree_cursor_load_child(c, btree_page_child(c->pg[t], c->idx[t]));
    if (!rc) rc = descend_left(c);
    return fault(c, rc);
  }
  if (++c->idx[t] < m->ncell) return SHALE_OK;
  for (;;) {
    if (c->depth == 1) {
      c->state = CUR_INVALID;
      *eof = 1;
      return SHALE_OK;
    }
    pager_unref(c->pg[c->depth - 1]);
    c->depth--;
    t = c->depth - 1;
    m = top(c);
    if (c->idx[t] < m->ncell) {
      if (!c->intkey) return SHALE_OK; /* the interior cell is the next entry */
      c->idx[t]++;
      rc = btree_cursor_load_child(c, btree_page_child(c->pg[t], c->idx[t]));
      if (!rc) rc = descend_left(c);
      return fault(c, rc);
    }
  }
}

/* The scan's step, the next cell of a leaf: 1 if taken, 0 for next_slow. */
static inline __attribute__((always_inline)) int next_in_leaf(BtCursor *c) {
  if (c->state == CUR_VALID && c->skip == 0) {
    int t = c->depth - 1;
    const MemPage *m = top(c);
    if (m->leaf && c->idx[t] + 1 < m->ncell) {
      c->idx[t]++;
      moved(c);
      return 1;
    }
  }
  return 0;
}

int btree_next(BtCursor *c, int *eof) {
  if (next_in_leaf(c)) {
    *eof = 0;
    return SHALE_OK;
  }
  return next_slow(c, eof);
}

int btree_next_row(BtCursor *c) {
  if (next_in_leaf(c)) return SHALE_OK;
  int eof, rc = next_slow(c, &eof);
  return rc ? rc : eof ? SHALE_DONE : SHALE_OK;
}

int btree_prev_row(BtCursor *c) {
  int eof, rc = btree_prev(c, &eof);
  return rc ? rc : eof ? SHALE_DONE : SHALE_OK;
}

int btree_prev(BtCursor *c, int *eof) {
  int rc;
  if (c->state != CUR_VALID) { /* the call only where it has work */
    rc = btree_cursor_restore(c);
    if (rc) return rc;
  }
  *eof = 0;
  if (c->state != CUR_VALID) {
    *eof = 1;
    return SHALE_OK;
  }
  if (c->skip < 0) {
    c->skip = 0;
    return SHALE_OK;
  }
  c->skip = 0;
  moved(c);
  int t = c->depth - 1;
  MemPage *m = top(c);
  if (!m->leaf) {
    rc = btree_cursor_load_child(c, btree_page_child(c->pg[t], c->idx[t]));
    if (!rc) rc = descend_right(c);
    return fault(c, rc);
  }
  if (c->idx[t] > 0) {
    c->idx[t]--;
    return SHALE_OK;
  }
  for (;;) {
    if (c->depth == 1) {
      c->state = CUR_INVALID;
      *eof = 1;
      return SHALE_OK;
    }
    pager_unref(c->pg[c->depth - 1]);
    c->depth--;
    t = c->depth - 1;
    if (c->idx[t] > 0) {
      c->idx[t]--;
      if (!c->intkey) return SHALE_OK;
      rc = btree_cursor_load_child(c, btree_page_child(c->pg[t], c->idx[t]));
      if (!rc) rc = descend_right(c);
      return fault(c, rc);
    }
  }
}

int btree_eof(BtCursor *c) {
  if (c->state == CUR_REQSEEK && btree_cursor_restore(c) != SHALE_OK) return 1;
  return c->state != CUR_VALID;
}

int btree_seek_rowid(BtCursor *c, int64_t rowid, int *res) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  int rc = btree_cursor_seek_rowid(c, rowid, res);
  return fault(c, rc);
}

int btree_seek_key(BtCursor *c, const void *key, uint32_t nkey, int *res) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  int rc = btree_cursor_seek_key(c, key, nkey, 0, res);
  return fault(c, rc);
}

uint32_t btree_seek_count(const BtCursor *c) { return c->nseek; }

int btree_seek_cmp(BtCursor *c, int (*cmp)(void *ctx, const void *key, uint32_t n), void *ctx,
                   int *res) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  int rc = seek_index(c, cmp, ctx, 0, res);
  return fault(c, rc);
}

/* The scan's cell parse (once per row), kept small: cell i of leaf page pg
 * when it is the common one (leaf_cell_quick_wide for the sizes a scan
 * meets: a payload size of one or two bytes, a rowid of up to three, the
 * payload local), parsed into c->info (info_ok set): its payload; else
 * NULL, nothing changed. No loop: few registers, so its callers pay few
 * saves. */
static inline __attribute__((always_inline)) const uint8_t *leaf_info_quick(BtCursor *c, PgPage *pg,
                                                                            const MemPage *m,
                                                                            uint16_t i) {
  if (!m->leaf || !m->init || i >= m->ncell) return NULL;
  const uint8_t *d = pager_data(pg);
  uint32_t off = util_get2(d + m->hdr + m->hdrlen + 2 * i), u = c->bt->usable;
  if (off >= u || u - off < 11) return NULL; /* both varints' bytes below the usable end */
  const uint8_t *q = d + off;
  uint32_t sz = q[0], h = 1;
  if (sz >= 0x80) {
    if (q[1] >= 0x80) return NULL;
    sz = (sz & 0x7f) << 7 | q[1];
    h = 2;
  }
  int64_t key = sz;
  uint32_t max = c->bt->max_local;
  if (m->intkey) {
    uint32_t b0 = q[h], b1 = q[h + 1];
    if (b0 < 0x80) {
      key = b0;
      h += 1;
    } else if (b1 < 0x80) {
      key = (int64_t)(b0 & 0x7f) << 7 | b1;
      h += 2;
    } else if (q[h + 2] < 0x80) {
      key = (int64_t)(b0 & 0x7f) << 14 | (int64_t)(b1 & 0x7f) << 7 | q[h + 2];
      h += 3;
    } else {
      return NULL;
    }
    max = c->bt->max_leaf;
  }
  if (sz > max || h + sz > u - off) return NULL;
  leaf_cell_set(&c->info, key, sz, h);
  c->info_ok = 1;
  return q + h;
}

static int ready(BtCursor *c, CellInfo **ci) {
  if (c->state == CUR_REQSEEK && btree_cursor_restore(c) != SHALE_OK) return SHALE_ERROR;
  if (c->state != CUR_VALID) return SHALE_MISUSE;
  return btree_cursor_info(c, ci);
}

int64_t btree_rowid(BtCursor *c) {
  CellInfo *ci;
  if (c->state == CUR_REQSEEK && c->intkey) return c->saved_rowid;
  if (c->state == CUR_VALID && c->intkey) {
    /* a scan's row: the cell parsed for the columns read next; any other
     * cell, the rowid alone (no full cell parse) */
    int64_t k;
    PgPage *pg = c->pg[c->depth - 1];
    if (c->info_ok || leaf_info_quick(c, pg, page_mem(pg), c->idx[c->depth - 1]))
      return c->info.key;
    return btree_cursor_rowid(c, &k) ? 0 : k;
  }
  if (ready(c, &ci)) return 0;
  return c->intkey ? ci->key : 0;
}

int btree_rowid_here(BtCursor *c, int64_t *rowid) {
  if (c->state == CUR_VALID && c->intkey) { /* a scan's row: btree_rowid's first case */
    PgPage *pg = c->pg[c->depth - 1];
    if (c->info_ok || leaf_info_quick(c, pg, page_mem(pg), c->idx[c->depth - 1])) {
      *rowid = c->info.key;
      return 1;
    }
  }
  if (btree_eof(c)) return 0;
  *rowid = btree_rowid(c);
  return 1;
}

uint32_t btree_payload_size(BtCursor *c) {
  CellInfo *ci;
  if (ready(c, &ci)) return 0;
  return ci->npayload;
}

const void *btree_payload_fetch(BtCursor *c, uint32_t *navail) {
  CellInfo *ci;
  *navail = 0;
  if (ready(c, &ci)) return NULL;
  PgPage *pg = c->pg[c->depth - 1];
  *navail = ci->nlocal;
  return page_cell(pg, c->idx[c->depth - 1]) + ci->payoff;
}

/* btree_payload's every case: a cursor to restore, not on an entry, a cell
 * that is not a common leaf cell. */
__attribute__((noinline)) static int payload_slow(BtCursor *c, const void **p, uint32_t *n,
                                                  uint32_t *navail) {
  *p = NULL;
  *n = *navail = 0;
  if (c->state == CUR_REQSEEK && btree_cursor_restore(c) != SHALE_OK) return SHALE_OK;
  if (c->state != CUR_VALID) return SHALE_OK;
  PgPage *pg = c->pg[c->depth - 1];
  const uint8_t *cell = NULL;
  if (c->info_ok) {
    cell = page_cell(pg, c->idx[c->depth - 1]);
  } else { /* btree_cursor_info's parse, the cell's address kept */
    int rc = page_cell_parse_at(c->bt, pg, c->idx[c->depth - 1], &c->info, &cell);
    if (rc) return rc;
    c->info_ok = 1;
  }
  *n = c->info.npayload;
  *navail = c->info.nlocal;
  *p = cell + c->info.payoff;
  return SHALE_OK;
}

/* btree_payload for a VALID cursor whose cell is parsed or leaf_info_quick
 * parses; everything else goes to payload_slow, which repeats the checks.
 * Inline in both entry points. */
static inline __attribute__((always_inline)) int payload_at(BtCursor *c, const void **p,
                                                            uint32_t *n, uint32_t *navail) {
  if (c->state == CUR_VALID) {
    PgPage *pg = c->pg[c->depth - 1];
    int i = c->idx[c->depth - 1];
    if (c->info_ok) {
      *n = c->info.npayload;
      *navail = c->info.nlocal;
      *p = page_cell(pg, i) + c->info.payoff;
      return SHALE_OK;
    }
    const uint8_t *q = leaf_info_quick(c, pg, page_mem(pg), i);
    if (q) {
      *n = *navail = c->info.npayload;
      *p = q;
      return SHALE_OK;
    }
  }
  return payload_slow(c, p, n, navail);
}

int btree_payload(BtCursor *c, const void **p, uint32_t *n, uint32_t *navail) {
  return payload_at(c, p, n, navail);
}

BtLocal btree_payload_local(BtCursor *c) {
  const void *p;
  uint32_t n, navail;
  BtLocal r = {NULL, 0};
  if (payload_at(c, &p, &n, &navail) == SHALE_OK && p && navail >= n) {
    r.p = p;
    r.n = n;
  }
  return r;
}

int btree_payload_read(BtCursor *c, uint32_t offset, uint32_t n, void *buf) {
  CellInfo *ci;
  int rc = ready(c, &ci);
  if (rc) return rc == SHALE_ERROR ? c->fault_rc ? c->fault_rc : SHALE_ERROR : rc;
  PgPage *pg = c->pg[c->depth - 1];
  return cell_payload(c->bt, pg, page_cell_off(pg, c->idx[c->depth - 1]), ci, offset, n, buf, c, 0);
}

int btree_payload_write(BtCursor *c, uint32_t offset, uint32_t n, const void *buf) {
  if (!c->wrflag || pager_txn_state(c->bt->pager) != PAGER_TXN_WRITE) return SHALE_READONLY;
  CellInfo *ci;
  int rc = ready(c, &ci);
  if (rc) return rc;
  PgPage *pg = c->pg[c->depth - 1];
  return cell_payload(c->bt, pg, page_cell_off(pg, c->idx[c->depth - 1]), ci, offset, n,
                      (uint8_t *)buf, c, 1);
}

/* Full key of the entry under the cursor (index trees), for delete/insert. */

int btree_cursor_key_copy(BtCursor *c, uint8_t **buf, uint32_t *cap, uint32_t *n) {
  const uint8_t *key;
  uint8_t *freeme;
  int rc = cell_key(c->bt, c->pg[c->depth - 1], c->idx[c->depth - 1], &key, n, &freeme);
  if (rc) return rc;
  if (freeme) { /* an overflowing key, already copied: take its buffer */
    shale_free(*buf);
    *buf = freeme;
    *cap = *n ? *n : 1;
    return SHALE_OK;
  }
  if (*cap < *n || !*buf) {
    uint8_t *b = shale_malloc(*n ? *n : 1);
    if (!b) return SHALE_NOMEM;
    shale_free(*buf);
    *buf = b;
    *cap = *n ? *n : 1;
  }
  memcpy(*buf, key, *n);
  return SHALE_OK;
}

void btree_cursor_delkey_to_saved(BtCursor *c) {
  shale_free(c->saved_key);
  c->saved_key = c->delkey;
  c->saved_nkey = c->ndelkey;
  c->delkey = NULL;
  c->ndelkey = c->delcap = 0;
}

int btree_count(BtCursor *c, int64_t *n) {
  int rc = btree_cursor_move_to_root(c);
  int64_t total = 0;
  if (rc) return fault(c, rc);
  if (c->depth == 0) {
    *n = 0;
    return SHALE_OK;
  }
  for (;;) {
    int t = c->depth - 1;
    MemPage *m = top(c);
    if (m->leaf) {
      total += m->ncell;
    } else if (!c->intkey && c->idx[t] == 0) {
      total += m->ncell;
    }
    if (!m->leaf && c->idx[t] <= m->ncell) {
      rc = btree_cursor_load_child(c, btree_page_child(c->pg[t], c->idx[t]));
      if (rc) return fault(c, rc);
      continue;
    }
    /* done with this page: pop to the parent and advance it */
    for (;;) {
      if (c->depth == 1) {
        btree_cursor_release(c);
        c->state = CUR_INVALID;
        *n = total;
        return SHALE_OK;
      }
      pager_unref(c->pg[c->depth - 1]);
      c->depth--;
      t = c->depth - 1;
      c->idx[t]++;
      if (c->idx[t] <= top(c)->ncell) break;
    }
  }
}

int btree_cursor_check(BtCursor *c) {
  if (c->state == CUR_REQSEEK || c->state == CUR_FAULT) {
    return c->depth == 0 ? SHALE_OK : SHALE_INTERNAL;
  }
  if (c->depth > BT_MAX_DEPTH) return SHALE_INTERNAL;
  if (c->depth > 0 && pager_pgno(c->pg[0]) != c->root) return SHALE_INTERNAL;
  for (int l = 0; l < c->depth; l++) {
    MemPage *m = page_mem(c->pg[l]);
    if (!m->init || m->intkey != c->intkey) return SHALE_INTERNAL;
    if (l < c->depth - 1) {
      if (m->leaf || c->idx[l] > m->ncell) return SHALE_INTERNAL;
      if (btree_page_child(c->pg[l], c->idx[l]) != pager_pgno(c->pg[l + 1])) return SHALE_INTERNAL;
    }
  }
  if (c->state == CUR_VALID) {
    if (c->depth == 0) return SHALE_INTERNAL;
    MemPage *m = top(c);
    if (c->idx[c->depth - 1] >= m->ncell) return SHALE_INTERNAL;
    if (!m->leaf && c->intkey) return SHALE_INTERNAL;
  }
  return SHALE_OK;
}
