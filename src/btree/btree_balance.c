/*
 * btree_balance.c -- keeping pages within bounds after an insert or delete.
 *
 * Owns the rebalancing algorithm. A change to one page is expressed as the
 * page's new content: an ordered list of cells (plus the right child on
 * interior pages). If the content fits and the page is not underfull it is
 * written in place. Otherwise the page and up to two neighbours (its
 * "window" under the same parent) are emptied into one list, together with
 * the parent's dividers between them, and the list is packed into as few
 * pages as it needs, evenly (or fully to the left when appending at the
 * right edge of the tree). The parent then gets the new dividers, which is a
 * new content for the parent: the same procedure runs one level up.
 *
 * The root never moves: a root whose content does not fit is emptied into a
 * new child (the root becomes an interior page with no cells) which is then
 * split; an interior root left with no cells takes over its only child's
 * content when it fits.
 *
 * Divider rules (docs/format.md §7): between table leaves the divider is a new
 * interior cell holding the largest rowid of the left page; between index
 * pages and between interior pages a real cell moves up (and comes down
 * again when pages are merged), so index entries appear exactly once.
 *
 * Invariants:
 *  1. Every page written holds content that fits its capacity; every
 *     non-root page written by a window repack holds at least one cell,
 *     unless the window was a single empty leaf (whose parent, the root,
 *     then absorbs it).
 *  2. Cells are copied out of every page of the window and the parent
 *     before any of them is rewritten (an arena owns the copies).
 *  3. Window pages are distinct and distinct from their ancestors, else the
 *     file is corrupt (SHALE_CORRUPT), so a hostile file cannot make a page
 *     its own sibling.
 *  4. After a balance the cursor's stack below the balanced level is stale;
 *     callers re-seek.
 *  5. A window page is edited in place (edit_leaf) only when it is a leaf
 *     whose live cells are exactly its part of the window list (the leaf
 *     the change was made on, but for its new cell, or a sibling read from
 *     its page); every other page is rebuilt from the list.
 */
#include "btree_int.h"

typedef struct ArenaBlock {
  struct ArenaBlock *next;
  size_t used, size;
  uint8_t data[];
} ArenaBlock;

/* A page's content: its cells in order, each cell's size computed once
 * (when the cell enters a list) and bytes, the page room they take
 * (cell_alloc summed), kept as cells are added. */
typedef struct Content {
  uint8_t **cell;
  uint16_t *size;
  int n;
  uint32_t bytes;
  uint32_t right;
  int leaf, intkey;
} Content;

typedef struct Bal {
  BtCursor *c;
  Btree *bt;
  ArenaBlock *arena;
  int append; /* inserting past the last entry at the right edge */
  /* The leaf the change was made on (0: none): its live cells are those of
   * the content handed to the balance, but for the one at edit_new (the
   * new cell, not yet on the page; -1 when nothing was added). Window
   * repacks edit such a page in place instead of rebuilding it. */
  uint32_t edit_pgno;
  int edit_new;
} Bal;

static void *aalloc(Bal *b, size_t n) {
  n = (n + 7) & ~(size_t)7;
  ArenaBlock *a = b->arena;
  if (!a || a->size - a->used < n) {
    size_t sz = n > 65536 ? n : 65536;
    a = shale_malloc(sizeof(ArenaBlock) + sz);
    if (!a) return NULL;
    a->next = b->arena;
    a->used = 0;
    a->size = sz;
    b->arena = a;
  }
  void *p = a->data + a->used;
  a->used += n;
  return p;
}

static void afree(Bal *b) {
  while (b->arena) {
    ArenaBlock *n = b->arena->next;
    shale_free(b->arena);
    b->arena = n;
  }
}

static int content_alloc(Bal *b, Content *ct, int n) {
  ct->cell = aalloc(b, sizeof(uint8_t *) * (size_t)(n ? n : 1));
  ct->size = aalloc(b, sizeof(uint16_t) * (size_t)(n ? n : 1));
  ct->n = 0;
  ct->bytes = 0;
  return ct->cell && ct->size ? SHALE_OK : SHALE_NOMEM;
}

static inline uint32_t cell_alloc(uint16_t sz) { return (sz < 4 ? 4u : sz) + 2u; }

static void content_add(Content *ct, uint8_t *cell, uint16_t size) {
  ct->cell[ct->n] = cell;
  ct->size[ct->n] = size;
  ct->n++;
  ct->bytes += cell_alloc(size);
}

/* Append cells [from, to) of src (their sizes already known). */
static void content_append(Content *ct, const Content *src, int from, int to) {
  if (to <= from) return;
  memcpy(ct->cell + ct->n, src->cell + from, sizeof(uint8_t *) * (size_t)(to - from));
  memcpy(ct->size + ct->n, src->size + from, sizeof(uint16_t) * (size_t)(to - from));
  ct->n += to - from;
  if (from == 0 && to == src->n) {
    ct->bytes += src->bytes;
  } else {
    for (int i = from; i < to; i++) ct->bytes += cell_alloc(src->size[i]);
  }
}

static uint32_t content_bytes(const Content *ct) { return ct->bytes; }

static int page_type(int leaf, int intkey) {
  return intkey ? (leaf ? PT_TABLE_LEAF : PT_TABLE_INTERIOR)
                : (leaf ? PT_INDEX_LEAF : PT_INDEX_INTERIOR);
}

/* Copy a page into the arena and describe its cells (room for extra more). */
static int content_from_page(Bal *b, PgPage *pg, Content *ct, int extra, uint8_t **copy) {
  Btree *bt = b->bt;
  MemPage *m = page_mem(pg);
  int rc = btree_page_check_cells(bt, pg); /* cells are copied by their sizes */
  if (rc) return rc;
  uint8_t *d = aalloc(b, bt->page_size + 16);
  if (!d) return SHALE_NOMEM;
  memcpy(d, pager_data(pg), bt->page_size);
  memset(d + bt->page_size, 0, 16);
  rc = content_alloc(b, ct, m->ncell + extra);
  if (rc) return rc;
  ct->leaf = m->leaf;
  ct->intkey = m->intkey;
  ct->right = m->leaf ? 0 : util_get4(d + m->hdr + 8);
  /* one pass: each cell's address and size (the common index leaf cell, a
   * one-byte payload size and a local payload, read inline) */
  const uint8_t *ptr = d + m->hdr + m->hdrlen;
  uint8_t **cells = ct->cell;
  uint16_t *sizes = ct->size;
  const int n = m->ncell, leaf = m->leaf, intkey = m->intkey;
  const uint32_t maxlocal = bt->max_local;
  uint32_t bytes = 0;
  if (leaf && !intkey) {
    for (int i = 0; i < n; i++) {
      uint8_t *cell = d + util_get2(ptr + 2 * i);
      uint16_t sz = cell[0] < 0x80 && cell[0] <= maxlocal
                        ? (uint16_t)(1 + cell[0])
                        : (uint16_t)cell_size_bytes(bt, cell, 1, 0);
      cells[i] = cell;
      sizes[i] = sz;
      bytes += cell_alloc(sz);
    }
  } else {
    for (int i = 0; i < n; i++) {
      uint8_t *cell = d + util_get2(ptr + 2 * i);
      uint16_t sz = cell_size_bytes(bt, cell, leaf, intkey);
      cells[i] = cell;
      sizes[i] = sz;
      bytes += cell_alloc(sz);
    }
  }
  ct->n = n;
  ct->bytes = bytes;
  if (copy) *copy = d;
  return SHALE_OK;
}

static void release_below(BtCursor *c, int level) {
  for (int j = level + 1; j < c->depth; j++) pager_unref(c->pg[j]);
  if (c->depth > level + 1) c->depth = level + 1;
  c->info_ok = 0;
  c->novfl = 0;
}

static int balance_level(Bal *b, int level, Content *ct);

/* ---- packing ---- */

/* The first x in [lo, hi) for which pred (an expression in x) holds, hi if
 * none; pred must be monotone in x (false ... false true ... true). */
#define FIRST_TRUE(lo, hi, pred, out) \
  do {                                \
    int lo_ = (lo), hi_ = (hi);       \
    while (lo_ < hi_) {               \
      int x = lo_ + (hi_ - lo_) / 2;  \
      if (pred)                       \
        hi_ = x;                      \
      else                            \
        lo_ = x + 1;                  \
    }                                 \
    (out) = lo_;                      \
  } while (0)

/* Split cells [0,n) into k groups for pages of capacity cap. promote: one
 * cell between consecutive groups goes to the parent. Group j is
 * [start[j], end[j]); returns k, or 0 if impossible. pre (n + 1 entries,
 * the caller's scratch) gets the running byte totals: the room taken by
 * cells [s, e) is pre[e] - pre[s], so every boundary is a binary search
 * instead of a walk over the cells. */
static int pack(const Content *ct, uint32_t cap, int promote, int greedy, int *start, int *end,
                int maxk, uint32_t *pre) {
  int n = ct->n;
  uint32_t total = content_bytes(ct);
  if (n == 0 || total <= cap) {
    start[0] = 0;
    end[0] = n;
    return 1;
  }
  pre[0] = 0;
  for (int i = 0; i < n; i++) pre[i + 1] = pre[i] + cell_alloc(ct->size[i]);
  /* k from a greedy fill: the fewest pages. Cell e ends a group when it
   * would take the group past cap. */
  int k = 0, s = 0;
  while (s < n) {
    int e;
    FIRST_TRUE(s, n, pre[x + 1] - pre[s] > cap, e);
    if (e == s || k >= maxk) return 0;
    if (e < n && promote) {
      if (e + 1 == n) {
        /* the separator would be the last cell: keep one for the last page */
        e--;
        if (e == s) return 0;
      }
      start[k] = s;
      end[k] = e;
      k++;
      s = e + 1;
    } else {
      start[k] = s;
      end[k] = e;
      k++;
      s = e;
    }
  }
  if (greedy || k == 1) return k;
  /* Even fill: each group aims at the average of what remains; it ends
   * before the cell that would pass cap, or whose middle would pass the
   * target (both monotone in e). */
  for (int tryk = k; tryk <= k + 1 && tryk <= maxk; tryk++) {
    int st[8], en[8], ok = 1;
    uint32_t remaining = total;
    s = 0;
    for (int j = 0; j < tryk; j++) {
      int left = tryk - j;
      if (s >= n) {
        ok = 0;
        break;
      }
      uint32_t target = remaining / (uint32_t)left;
      if (left == 1) {
        if (pre[n] - pre[s] > cap) ok = 0;
        st[j] = s;
        en[j] = n;
        break;
      }
      int e;
      FIRST_TRUE(s, n,
                 pre[x + 1] - pre[s] > cap ||
                     (x > s && pre[x] - pre[s] + (pre[x + 1] - pre[x]) / 2 > target),
                 e);
      /* leave enough cells for the groups (and separators) still to come */
      int need = promote ? 2 * (left - 1) : left - 1;
      if (n - e < need && e > s + 1) e = n - need > s + 1 ? n - need : s + 1;
      if (e == s || n - e < need) {
        ok = 0;
        break;
      }
      st[j] = s;
      en[j] = e;
      remaining -= pre[e] - pre[s];
      if (promote) {
        remaining -= pre[e + 1] - pre[e];
        s = e + 1;
      } else {
        s = e;
      }
    }
    if (ok) {
      for (int j = 0; j < tryk; j++) {
        start[j] = st[j];
        end[j] = en[j];
      }
      return tryk;
    }
  }
  return k;
}
#undef FIRST_TRUE

/* ---- editing a window page in place ---- */

/* Make the live leaf pg hold cells [st, en) of all, when it now holds
 * [ob, oe) of all but for entry onew (-1: none; a cell not yet on the page)
 * and the two ranges share most cells: the cells leaving either end are
 * dropped and the ones arriving inserted, the rest stay where they are
 * (SQLite's editPage). Returns 1 when done (*rc set), 0 when the ranges
 * differ too much and the caller rebuilds the page. pack() guarantees
 * the new content fits. */
static int edit_leaf(Bal *b, PgPage *pg, const Content *all, int st, int en, int ob, int oe,
                     int onew, int *rc) {
  Btree *bt = b->bt;
  int s2 = st > ob ? st : ob, e2 = en < oe ? en : oe;
  if (s2 >= e2) return 0;
  int moves = (s2 - st) + (en - e2) + (s2 - ob) + (oe - e2);
  if (moves * 4 > en - st) return 0;
  *rc = SHALE_OK;
  /* drop the cells past the kept range, then those before it */
  int live = oe - ob - (onew >= 0 ? 1 : 0);
  for (int x = oe - 1; x >= e2 && *rc == SHALE_OK; x--) {
    if (x == onew) continue;
    *rc = btree_page_drop_cell(bt, pg, --live, all->size[x]);
  }
  for (int x = ob; x < s2 && *rc == SHALE_OK; x++) {
    if (x == onew) continue;
    *rc = btree_page_drop_cell(bt, pg, 0, all->size[x]);
  }
  if (*rc == SHALE_OK && onew >= s2 && onew < e2)
    *rc = btree_page_insert_cell(bt, pg, onew - s2, all->cell[onew], all->size[onew]);
  for (int x = st; x < s2 && *rc == SHALE_OK; x++)
    *rc = btree_page_insert_cell(bt, pg, x - st, all->cell[x], all->size[x]);
  for (int x = e2; x < en && *rc == SHALE_OK; x++)
    *rc = btree_page_insert_cell(bt, pg, x - st, all->cell[x], all->size[x]);
  assert(*rc != SHALE_OK || page_mem(pg)->ncell == en - st);
  return 1;
}

/* ---- the root ---- */

static int balance_root(Bal *b, Content *ct) {
  BtCursor *c = b->c;
  Btree *bt = b->bt;
  PgPage *root = c->pg[0];
  int rc = pager_write(root);
  if (rc) return rc;
  if (content_bytes(ct) <= btree_page_capacity(bt, root, ct->leaf)) {
    /* Collapse an interior root with no cells onto its only child. */
    while (!ct->leaf && ct->n == 0) {
      uint32_t child = ct->right;
      if (child == c->root) return BT_CORRUPT(bt, child, "root is its own child");
      PgPage *cp;
      rc = btree_page_get(bt, child, &cp);
      if (rc) return rc;
      if (page_mem(cp)->intkey != ct->intkey) {
        pager_unref(cp);
        return BT_CORRUPT(bt, child, "child page of the wrong kind");
      }
      Content cc;
      rc = content_from_page(b, cp, &cc, 0, NULL);
      pager_unref(cp);
      if (rc) return rc;
      if (content_bytes(&cc) > btree_page_capacity(bt, root, cc.leaf)) break;
      rc = btree_free_page(bt, child);
      if (rc) return rc;
      *ct = cc;
    }
    btree_page_rebuild(bt, root, page_type(ct->leaf, ct->intkey), ct->cell, ct->size, ct->n,
                       ct->right);
    return btree_ptrmap_cells(bt, root);
  }
  /* Split: the content moves to a new child of an empty interior root. */
  PgPage *child;
  uint32_t cpgno;
  rc = btree_alloc_page(bt, c->root, &child, &cpgno);
  if (rc) return rc;
  btree_page_rebuild(bt, root, page_type(0, ct->intkey), NULL, NULL, 0, cpgno);
  btree_page_zero(bt, child, page_type(ct->leaf, ct->intkey));
  rc = btree_ptrmap_put(bt, cpgno, PTRMAP_BTREE, c->root);
  if (rc) {
    pager_unref(child);
    return rc;
  }
  release_below(c, 0);
  c->idx[0] = 0;
  c->pg[1] = child;
  c->depth = 2;
  return balance_level(b, 1, ct);
}

/* ---- a non-root page and its neighbours ---- */

static int balance_nonroot(Bal *b, int level, Content *ct) {
  BtCursor *c = b->c;
  Btree *bt = b->bt;
  PgPage *parent = c->pg[level - 1];
  MemPage *pm = page_mem(parent);
  int np = pm->ncell, pidx = c->idx[level - 1];
  int rc, first, nsib;
  int greedy = 0;
  PgPage *sib[3] = {NULL, NULL, NULL};
  uint32_t sibno[3];
  Content sc[3], all, newpc, divs;
  int k = 0;
  PgPage *out[8] = {NULL};
  uint32_t outno[8];
  int nout = 0;

  if (pidx > np) return BT_CORRUPT(bt, pager_pgno(parent), "cursor index out of range");
  rc = btree_page_check_cells(bt, parent); /* its cells are copied by their sizes */
  if (rc) return rc;
  if (b->append && pidx == np) {
    first = pidx;
    nsib = 1;
    greedy = 1;
  } else {
    b->append = 0;
    first = pidx - 1;
    if (first < 0) first = 0;
    if (first + 3 > np + 1) first = np + 1 - 3;
    if (first < 0) first = 0;
    nsib = np + 1 - first < 3 ? np + 1 - first : 3;
  }
  /* Copies of the parent's cells over the window (pointers and dividers). */
  uint8_t *pcell[3] = {NULL, NULL, NULL};
  uint16_t psize[3] = {0, 0, 0};
  memset(sc, 0, sizeof sc);
  memset(&divs, 0, sizeof divs);
  for (int j = 0; j < nsib; j++) {
    int ci = first + j;
    if (ci >= np) break;
    const uint8_t *src = page_cell(parent, ci);
    psize[j] = cell_size_bytes(bt, src, 0, ct->intkey);
    pcell[j] = aalloc(b, psize[j]);
    if (!pcell[j]) return SHALE_NOMEM;
    memcpy(pcell[j], src, psize[j]);
  }

  /* Gather the window. */
  int total = ct->n + 2;
  for (int j = 0; j < nsib; j++) {
    int ci = first + j;
    sibno[j] = ci < np ? util_get4(pcell[j]) : page_right(parent);
    if (sibno[j] < 2) { /* page 1 is only ever a root */
      rc = BT_CORRUPT(bt, pager_pgno(parent), "child pointer to page 1");
      goto out;
    }
    if (ci == pidx) {
      sib[j] = c->pg[level];
      pager_ref(sib[j]);
      if (pager_pgno(sib[j]) != sibno[j]) {
        rc = BT_CORRUPT(bt, pager_pgno(parent), "child pointer changed");
        goto out;
      }
      sc[j] = *ct;
      continue;
    }
    for (int a = 0; a < level; a++) {
      if (pager_pgno(c->pg[a]) == sibno[j]) {
        rc = BT_CORRUPT(bt, sibno[j], "page is its own ancestor");
        goto out;
      }
    }
    for (int a = 0; a < j; a++) {
      if (sibno[a] == sibno[j]) {
        rc = BT_CORRUPT(bt, sibno[j], "page is its own sibling");
        goto out;
      }
    }
    if (sibno[j] == pager_pgno(c->pg[level])) {
      rc = BT_CORRUPT(bt, sibno[j], "page is its own sibling");
      goto out;
    }
    rc = btree_page_get(bt, sibno[j], &sib[j]);
    if (rc) goto out;
    MemPage *sm = page_mem(sib[j]);
    if (sm->intkey != ct->intkey || sm->leaf != ct->leaf) {
      rc = BT_CORRUPT(bt, sibno[j], "sibling pages of different kinds");
      goto out;
    }
    rc = content_from_page(b, sib[j], &sc[j], 0, NULL);
    if (rc) goto out;
    total += sc[j].n + 1;
  }

  /* Everything in one list, dividers included where they are entries.
   * Sibling j's cells are all[obase[j], obase[j] + sc[j].n); onew[j] is
   * the entry of them not on the live page (-1: none), and live[j] says
   * whether the live page holds the rest (all but a page whose content
   * came from below or from a root split). */
  int obase[3], onew[3], live[3];
  memset(&newpc, 0, sizeof newpc);
  rc = content_alloc(b, &all, total);
  if (rc) goto out;
  all.leaf = ct->leaf;
  all.intkey = ct->intkey;
  all.right = sc[nsib - 1].right;
  for (int j = 0; j < nsib; j++) {
    obase[j] = all.n;
    onew[j] = -1;
    live[j] = ct->leaf;
    if (first + j == pidx) {
      live[j] = ct->leaf && b->edit_pgno == sibno[j];
      if (live[j] && b->edit_new >= 0) onew[j] = all.n + b->edit_new;
    }
    content_append(&all, &sc[j], 0, sc[j].n);
    if (j == nsib - 1) break;
    uint8_t *dv = pcell[j];
    uint16_t dsz = psize[j];
    if (ct->leaf && ct->intkey) continue; /* table leaves: divider is dropped */
    if (ct->leaf) {
      if (dsz <= 4) {
        rc = BT_CORRUPT(bt, pager_pgno(parent), "divider cell too small");
        goto out;
      }
      content_add(&all, dv + 4, (uint16_t)(dsz - 4));
    } else {
      uint8_t *cp = aalloc(b, dsz);
      if (!cp) {
        rc = SHALE_NOMEM;
        goto out;
      }
      memcpy(cp, dv, dsz);
      util_put4(cp, sc[j].right);
      content_add(&all, cp, dsz);
    }
  }

  /* Pack. */
  int promote = !(ct->leaf && ct->intkey);
  uint32_t cap = bt->usable - (ct->leaf ? 8 : 12);
  int st[8], en[8];
  uint32_t *pre = aalloc(b, sizeof(uint32_t) * ((size_t)all.n + 1));
  if (!pre) {
    rc = SHALE_NOMEM;
    goto out;
  }
  k = pack(&all, cap, promote, greedy, st, en, 8, pre);
  if (k == 0) {
    rc = BT_CORRUPT(bt, pager_pgno(parent), "cells too large to balance");
    goto out;
  }
  /* The groups cover the list exactly, separators between them, and each
   * fits its page. */
  assert(st[0] == 0 && en[k - 1] == all.n);
  for (int j = 0; j < k; j++) {
    uint32_t used = 0;
    for (int i = st[j]; i < en[j]; i++) used += cell_alloc(all.size[i]);
    assert(used <= cap);
    assert(j == k - 1 || st[j + 1] == en[j] + (promote ? 1 : 0));
    (void)used;
  }

  /* Pages: reuse the window's, allocate more, free the rest. */
  for (int j = 0; j < k; j++) {
    if (j < nsib) {
      out[j] = sib[j];
      sib[j] = NULL;
      outno[j] = sibno[j];
      rc = pager_write(out[j]);
    } else {
      rc = btree_alloc_page(bt, outno[j - 1], &out[j], &outno[j]);
    }
    if (rc) goto out;
    nout = j + 1;
  }
  for (int j = k; j < nsib; j++) {
    pager_unref(sib[j]);
    sib[j] = NULL;
    rc = btree_free_page(bt, sibno[j]);
    if (rc) goto out;
  }

  /* Write the pages and collect the new dividers. */
  rc = content_alloc(b, &divs, 8);
  if (rc) goto out;
  int type = page_type(ct->leaf, ct->intkey);
  for (int j = 0; j < k; j++) {
    uint32_t right = 0;
    if (!ct->leaf) right = j == k - 1 ? all.right : util_get4(all.cell[en[j]]);
    int edited =
        j < nsib && live[j] &&
        edit_leaf(b, out[j], &all, st[j], en[j], obase[j], obase[j] + sc[j].n, onew[j], &rc);
    if (rc) goto out;
    if (!edited)
      btree_page_rebuild(bt, out[j], type, all.cell + st[j], all.size + st[j], en[j] - st[j],
                         right);
    if (bt->autovac) {
      rc = btree_ptrmap_put(bt, outno[j], PTRMAP_BTREE, pager_pgno(parent));
      if (rc == SHALE_OK) rc = btree_ptrmap_cells(bt, out[j]);
      if (rc) goto out;
    }
    if (j == k - 1) break;
    uint8_t *dv;
    uint16_t dsz;
    if (ct->leaf && ct->intkey) {
      /* new divider: largest rowid of the left page */
      const uint8_t *last = all.cell[en[j] - 1];
      uint64_t v;
      last += bt_varint(last, &v);
      bt_varint(last, &v);
      dv = aalloc(b, 16);
      if (!dv) {
        rc = SHALE_NOMEM;
        goto out;
      }
      util_put4(dv, outno[j]);
      dsz = (uint16_t)(4 + util_put_varint(dv + 4, v));
    } else if (ct->leaf) {
      /* an index leaf cell moves up with a child pointer in front */
      uint16_t s = all.size[en[j]];
      dv = aalloc(b, (size_t)s + 4);
      if (!dv) {
        rc = SHALE_NOMEM;
        goto out;
      }
      util_put4(dv, outno[j]);
      memcpy(dv + 4, all.cell[en[j]], s);
      dsz = (uint16_t)(s + 4);
    } else {
      /* an interior cell moves up; its child became page j's right child */
      uint16_t s = all.size[en[j]];
      dv = aalloc(b, s);
      if (!dv) {
        rc = SHALE_NOMEM;
        goto out;
      }
      memcpy(dv, all.cell[en[j]], s);
      util_put4(dv, outno[j]);
      dsz = s;
    }
    content_add(&divs, dv, dsz);
  }

out:
  for (int j = 0; j < 3; j++) {
    if (sib[j]) pager_unref(sib[j]);
  }
  for (int j = 0; j < nout; j++) pager_unref(out[j]);
  if (rc) return rc;
  /* Children of the parent are done; now the parent: the nsib-1 old
   * dividers give way to the k-1 new ones, and the pointer that covered the
   * last window page now covers the last output page. */
  release_below(c, level - 1);
  c->idx[level - 1] = (uint16_t)(first + k - 1);
  int lastci = first + nsib - 1;
  uint32_t oldb = 0, newb = content_bytes(&divs);
  for (int j = 0; j < nsib - 1; j++) oldb += cell_alloc(psize[j]);
  uint32_t pcap = btree_page_capacity(bt, parent, 0);
  int ncell_after = np - (nsib - 1) + (k - 1);
  if (pm->nfree + oldb >= newb && ncell_after > 0 &&
      (level - 1 == 0 || pcap - (pm->nfree + oldb - newb) >= pcap / 3)) {
    /* Common case: edit the parent in place. */
    rc = pager_write(parent);
    if (rc) return rc;
    for (int j = 0; j < nsib - 1; j++) {
      rc = btree_page_drop_cell(bt, parent, first, psize[j]);
      if (rc) return rc;
    }
    if (lastci < np) {
      util_put4(page_cell(parent, first), outno[k - 1]);
    } else {
      page_set_right(parent, outno[k - 1]);
    }
    for (int j = 0; j < divs.n; j++) {
      rc = btree_page_insert_cell(bt, parent, first + j, divs.cell[j], divs.size[j]);
      if (rc) return rc;
    }
    for (int j = 0; j < divs.n && bt->autovac; j++) {
      rc = btree_ptrmap_cell(bt, parent, first + j);
      if (rc) return rc;
    }
    return SHALE_OK;
  }
  Content pc;
  rc = content_from_page(b, parent, &pc, 0, NULL);
  if (rc) return rc;
  rc = content_alloc(b, &newpc, np + 8);
  if (rc) return rc;
  newpc.leaf = 0;
  newpc.intkey = ct->intkey;
  newpc.right = pc.right;
  content_append(&newpc, &pc, 0, first);
  content_append(&newpc, &divs, 0, divs.n);
  if (lastci < np) {
    uint8_t *cp = pcell[nsib - 1];
    util_put4(cp, outno[k - 1]);
    content_add(&newpc, cp, psize[nsib - 1]);
  } else {
    newpc.right = outno[k - 1];
  }
  content_append(&newpc, &pc, lastci + 1, np);
  return balance_level(b, level - 1, &newpc);
}

static int balance_level(Bal *b, int level, Content *ct) {
  BtCursor *c = b->c;
  Btree *bt = b->bt;
  release_below(c, level);
  if (level == 0) return balance_root(b, ct);
  PgPage *pg = c->pg[level];
  uint32_t cap = btree_page_capacity(bt, pg, ct->leaf);
  uint32_t used = content_bytes(ct);
  if (used <= cap && ct->n > 0 && used >= cap / 3) {
    int rc = pager_write(pg);
    if (rc) return rc;
    btree_page_rebuild(bt, pg, page_type(ct->leaf, ct->intkey), ct->cell, ct->size, ct->n,
                       ct->right);
    return btree_ptrmap_cells(bt, pg);
  }
  return balance_nonroot(b, level, ct);
}

/* The cheap split of an append (SQLite's balance_quick): the new cell does
 * not fit the table leaf at `level`, goes after its last cell, and the leaf
 * is its parent's right child. The leaf stays as it is (full), the cell
 * goes alone into a new right sibling, and the parent gets one divider
 * (the leaf's last rowid) -- exactly what the general repack does for an
 * append, without copying the window. Returns 1 when done (*rc set; the
 * cursor is then on the new cell), 0 when the parent has no room for the
 * divider (the general path runs). */
static int append_split(BtCursor *c, int level, const uint8_t *cell, uint32_t sz, int *rc) {
  Btree *bt = c->bt;
  PgPage *pg = c->pg[level], *parent = c->pg[level - 1];
  MemPage *m = page_mem(pg), *pm = page_mem(parent);
  if (!pm->init || c->idx[level - 1] != pm->ncell || m->ncell == 0) return 0;
  CellInfo last;
  if ((*rc = btree_page_cell_parse(bt, pg, m->ncell - 1, &last)) != SHALE_OK) return 1;
  uint8_t div[4 + 9];
  uint32_t dsz = 4 + (uint32_t)util_put_varint(div + 4, (uint64_t)last.key);
  if (pm->nfree < dsz + 2) return 0;
  if ((*rc = pager_write(parent)) != SHALE_OK) return 1;
  PgPage *npg;
  uint32_t nno;
  if ((*rc = btree_alloc_page(bt, pager_pgno(pg), &npg, &nno)) != SHALE_OK) return 1;
  uint8_t *cells[1] = {(uint8_t *)cell};
  uint16_t sizes[1] = {(uint16_t)sz};
  btree_page_rebuild(bt, npg, PT_TABLE_LEAF, cells, sizes, 1, 0);
  util_put4(div, pager_pgno(pg));
  *rc = btree_ptrmap_put(bt, nno, PTRMAP_BTREE, pager_pgno(parent));
  if (*rc == SHALE_OK) *rc = btree_ptrmap_cell(bt, npg, 0);
  if (*rc == SHALE_OK) *rc = btree_page_insert_cell(bt, parent, pm->ncell, div, dsz);
  if (*rc) {
    pager_unref(npg);
    return 1;
  }
  page_set_right(parent, nno);
  pager_unref(pg);
  c->pg[level] = npg;
  c->idx[level] = 0;
  c->idx[level - 1] = pm->ncell;
  c->info_ok = 0;
  c->novfl = 0;
  return 1;
}

int btree_modify_level(BtCursor *c, int level, int i, uint32_t dsz, const uint8_t *cell,
                       uint32_t sz, int *balanced) {
  Btree *bt = c->bt;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  *balanced = 0;
  int rc = pager_write(pg);
  if (rc) return rc;
  int was_end = dsz == 0 && i == m->ncell;
  if (dsz) {
    rc = btree_page_drop_cell(bt, pg, i, dsz);
    if (rc) return rc;
  }
  uint32_t cap = btree_page_capacity(bt, pg, m->leaf);
  if (cell && m->nfree >= (sz < 4 ? 4 : sz) + 2) {
    rc = btree_page_insert_cell(bt, pg, i, cell, sz);
    if (rc == SHALE_OK) rc = btree_ptrmap_cell(bt, pg, i);
    if (rc) return rc;
    c->idx[level] = (uint16_t)i;
    c->info_ok = 0;
    c->novfl = 0;
    return SHALE_OK;
  }
  if (!cell) {
    int under =
        level > 0 ? (m->ncell == 0 || cap - m->nfree < cap / 3) : (!m->leaf && m->ncell == 0);
    if (!under) return SHALE_OK;
  }
  if (cell && was_end && m->leaf && m->intkey && level > 0 && append_split(c, level, cell, sz, &rc))
    return rc;
  /* Rebalance with the new content. */
  Bal b = {c, bt, NULL, 0, pager_pgno(pg), cell ? i : -1};
  Content ct;
  rc = content_from_page(&b, pg, &ct, 1, NULL);
  if (rc == SHALE_OK && cell) {
    uint8_t *cp = aalloc(&b, sz);
    if (!cp) {
      rc = SHALE_NOMEM;
    } else {
      memcpy(cp, cell, sz);
      memmove(ct.cell + i + 1, ct.cell + i, sizeof(uint8_t *) * (size_t)(ct.n - i));
      memmove(ct.size + i + 1, ct.size + i, sizeof(uint16_t) * (size_t)(ct.n - i));
      ct.cell[i] = cp;
      ct.size[i] = (uint16_t)sz;
      ct.n++;
      ct.bytes += cell_alloc((uint16_t)sz);
    }
  }
  if (rc == SHALE_OK) {
    b.append = was_end && m->leaf;
    rc = balance_level(&b, level, &ct);
  }
  afree(&b);
  btree_cursor_release(c);
  c->state = CUR_INVALID;
  *balanced = 1; /* the stack is gone: the caller re-seeks */
  return rc;
}
