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
 *  1. Every page written holds content that fits its capacity (a rebuilt
 *     page's cells are all sized and their sum checked before the window's
 *     pages are written; an edited page's inserts check its free space),
 *     whatever the free-space counts the packing trusted said; every
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

/* A page's content: its cells in order, each cell's size (0 until computed:
 * a cell read from a page is sized only when a boundary search, a move or a
 * rebuild needs it, content_size) and bytes, the page room they take
 * (cell_alloc summed; for a page's cells its free-space count gives it,
 * MemPage.nfree), kept as cells are added. */
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

/* The size of cell i of ct, computed on first use (the common index leaf
 * cell, a one-byte payload size and a local payload, inline). The cells of
 * a Content are validated (btree_page_check_cells) or built by us. */
static inline uint16_t content_size(Btree *bt, Content *ct, int i) {
  uint16_t sz = ct->size[i];
  if (sz) return sz;
  const uint8_t *cell = ct->cell[i];
  if (ct->leaf && !ct->intkey && cell[0] < 0x80 && cell[0] <= bt->max_local)
    sz = (uint16_t)(1 + cell[0]);
  else
    sz = cell_size_bytes(bt, cell, ct->leaf, ct->intkey);
  ct->size[i] = sz;
  return sz;
}

/* The room cells [from, to) of ct take, every size computed. */
static uint32_t content_room(Btree *bt, Content *ct, int from, int to) {
  uint32_t bytes = 0;
  for (int i = from; i < to; i++) bytes += cell_alloc(content_size(bt, ct, i));
  return bytes;
}

static void content_add(Content *ct, uint8_t *cell, uint16_t size) {
  ct->cell[ct->n] = cell;
  ct->size[ct->n] = size;
  ct->n++;
  ct->bytes += cell_alloc(size);
}

/* Append cells [from, to) of src (of ct's kind; a part of src has its
 * sizes computed, the whole of it brings its byte total). */
static void content_append(Btree *bt, Content *ct, Content *src, int from, int to) {
  if (to <= from) return;
  uint32_t bytes = from == 0 && to == src->n ? src->bytes : content_room(bt, src, from, to);
  memcpy(ct->cell + ct->n, src->cell + from, sizeof(uint8_t *) * (size_t)(to - from));
  memcpy(ct->size + ct->n, src->size + from, sizeof(uint16_t) * (size_t)(to - from));
  ct->n += to - from;
  ct->bytes += bytes;
}

static uint32_t content_bytes(const Content *ct) { return ct->bytes; }

static int page_type(int leaf, int intkey) {
  return intkey ? (leaf ? PT_TABLE_LEAF : PT_TABLE_INTERIOR)
                : (leaf ? PT_INDEX_LEAF : PT_INDEX_INTERIOR);
}

/* Copy a page into the arena and describe its cells (room for extra more):
 * their addresses; their sizes are left to content_size, their byte total
 * is the page's (capacity less free space). */
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
  const uint8_t *ptr = d + m->hdr + m->hdrlen;
  const int n = m->ncell;
  int i = 0;
#if defined(__GNUC__) && UINTPTR_MAX == UINT64_MAX
  /* eight pointers at a time: byte-swapped and widened in a vector (the
   * swap reads big-endian pointers on a little-endian host only) */
  typedef uint16_t U16x8 __attribute__((vector_size(16)));
  typedef uint64_t U64x8 __attribute__((vector_size(64)));
  for (; util_host_le() && i + 8 <= n; i += 8) {
    U16x8 v;
    memcpy(&v, ptr + 2 * i, sizeof v);
    U64x8 w = __builtin_convertvector((U16x8)((v << 8) | (v >> 8)), U64x8) + (uint64_t)(uintptr_t)d;
    memcpy(ct->cell + i, &w, sizeof w);
  }
#endif
  for (; i < n; i++) ct->cell[i] = d + util_get2(ptr + 2 * i);
  memset(ct->size, 0, sizeof(uint16_t) * (size_t)n);
  ct->n = n;
  /* cells and their pointers fill what is not free (btree_page.c
   * invariant 2); a page that lies about it is caught where its cells are
   * written (rebuild_page, btree_page_insert_cell) */
  uint32_t cap = btree_page_capacity(bt, pg, m->leaf);
  ct->bytes = m->nfree <= cap ? cap - m->nfree : 0;
  if (copy) *copy = d;
  return SHALE_OK;
}

/* Rewrite pg with cells [from, to) of ct: every size computed and the
 * whole checked against the page's room first (a page whose free space
 * lied about its cells is corrupt). */
static int rebuild_page(Bal *b, PgPage *pg, Content *ct, int from, int to, uint32_t right) {
  Btree *bt = b->bt;
  if (content_room(bt, ct, from, to) > btree_page_capacity(bt, pg, ct->leaf))
    return BT_CORRUPT(bt, pager_pgno(pg), "cells larger than the page");
  btree_page_rebuild(bt, pg, page_type(ct->leaf, ct->intkey), ct->cell + from, ct->size + from,
                     to - from, right);
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

/* Running byte totals over a list whose cell sizes are computed on demand:
 * P(x), the room cells [0, x) take, is known at the anchors (the edges of
 * each part whose byte total is known: a sibling page's cells, a divider,
 * the list's ends) and found between them by walking from the nearer one,
 * sizing the cells passed. Pages are rarely repacked far from where their
 * old edges were, so a boundary search sizes few cells (SQLite keeps each
 * page's size and moves the cells that cross a boundary to the same end).
 * On a page whose free space lied about its cells the totals disagree;
 * every walk stays within its part, and the pages written are checked
 * (rebuild_page, btree_page_insert_cell). */
#define PREFIX_MAX 16
typedef struct Prefix {
  Btree *bt;
  Content *ct;
  int na;
  int pos[PREFIX_MAX]; /* ascending, pos[0] = 0, pos[na - 1] = ct->n */
  int64_t at[PREFIX_MAX];
} Prefix;

static void prefix_anchor(Prefix *pf) {
  if (pf->na > 0 && pf->pos[pf->na - 1] == pf->ct->n) return;
  assert(pf->na < PREFIX_MAX);
  pf->pos[pf->na] = pf->ct->n;
  pf->at[pf->na] = pf->ct->bytes;
  pf->na++;
}

static inline int64_t room_of(Prefix *pf, int x) {
  return cell_alloc(content_size(pf->bt, pf->ct, x));
}

/* The first x in [0, n) whose end (mid = 0: P(x + 1)) or middle (mid = 1:
 * P(x) + half its room) lies past t; n when none. *px gets P(x). */
static int prefix_find(Prefix *pf, int64_t t, int mid, int64_t *px) {
  if (t < 0) {
    *px = 0;
    return 0;
  }
  int i = 0;
  while (i + 1 < pf->na && pf->at[i + 1] <= t) i++;
  if (i + 1 >= pf->na) {
    *px = pf->at[pf->na - 1];
    return pf->pos[pf->na - 1];
  }
  /* every cell before pos[i] ends by at[i] <= t; the cell at pos[i + 1]
   * starts past t: the answer lies in [pos[i], pos[i + 1]] */
  int lo = pf->pos[i], hi = pf->pos[i + 1], x;
  int64_t acc;
  if (t - pf->at[i] <= pf->at[i + 1] - t) {
    for (x = lo, acc = pf->at[i]; x < hi; x++) {
      int64_t c = room_of(pf, x);
      if (acc + (mid ? c / 2 : c) > t) break;
      acc += c;
    }
  } else {
    for (x = hi, acc = pf->at[i + 1]; x > lo; x--) {
      int64_t c = room_of(pf, x - 1);
      if (acc - c + (mid ? c / 2 : c) <= t) break;
      acc -= c;
    }
  }
  *px = acc;
  return x;
}

/* P(x) for any x in [0, n]: walked from the nearer anchor. */
static int64_t prefix_at(Prefix *pf, int x) {
  int i = 0;
  while (i + 1 < pf->na && pf->pos[i + 1] <= x) i++;
  if (i + 1 >= pf->na || x == pf->pos[i]) return pf->at[i];
  int64_t acc;
  if (x - pf->pos[i] <= pf->pos[i + 1] - x) {
    acc = pf->at[i];
    for (int y = pf->pos[i]; y < x; y++) acc += room_of(pf, y);
  } else {
    acc = pf->at[i + 1];
    for (int y = pf->pos[i + 1]; y > x; y--) acc -= room_of(pf, y - 1);
  }
  return acc;
}

/* Split the list into tryk groups filled evenly: each aims at the average
 * of what remains and ends before the cell that would take it past cap, or
 * whose middle would pass the target. Returns 1 with the groups, 0 when
 * they do not fit. */
static int pack_even(Prefix *pf, int64_t cap, int promote, int tryk, int *st, int *en) {
  const int n = pf->ct->n;
  int64_t remaining = pf->at[pf->na - 1], ps = 0;
  int s = 0;
  for (int j = 0; j < tryk; j++) {
    int left = tryk - j;
    if (s >= n) return 0;
    if (left == 1) {
      if (pf->at[pf->na - 1] - ps > cap) return 0;
      st[j] = s;
      en[j] = n;
      return 1;
    }
    int64_t target = remaining / left, p1, p2;
    int e1 = prefix_find(pf, ps + cap, 0, &p1);
    int e2 = prefix_find(pf, ps + target, 1, &p2);
    if (e2 <= s) { /* (the group's first cell always goes in) */
      e2 = s + 1;
      p2 = ps + room_of(pf, s);
    }
    int e = e1 < e2 ? e1 : e2;
    int64_t pe = e1 < e2 ? p1 : p2;
    if (e < s) return 0; /* (only when the totals disagree) */
    /* leave enough cells for the groups (and separators) still to come */
    int need = promote ? 2 * (left - 1) : left - 1;
    if (n - e < need && e > s + 1) {
      e = n - need > s + 1 ? n - need : s + 1;
      pe = prefix_at(pf, e);
    }
    if (e == s || n - e < need) return 0;
    st[j] = s;
    en[j] = e;
    remaining -= pe - ps;
    if (promote) {
      int64_t c = room_of(pf, e);
      remaining -= c;
      s = e + 1;
      ps = pe + c;
    } else {
      s = e;
      ps = pe;
    }
  }
  return 0;
}

/* Split the list into k groups for pages of capacity cap. promote: one
 * cell between consecutive groups goes to the parent. Group j is
 * [start[j], end[j]); returns k, or 0 if impossible. The fewest pages the
 * byte total allows, filled evenly (greedy: each page filled in turn, for
 * appends); when no even fill of that many or one more pages fits (cell
 * sizes), the pages of a greedy fill, evenly if that fits. */
static int pack(Prefix *pf, uint32_t cap, int promote, int greedy, int *start, int *end, int maxk) {
  const int n = pf->ct->n;
  const int64_t total = pf->at[pf->na - 1];
  if (n == 0 || total <= cap) {
    start[0] = 0;
    end[0] = n;
    return 1;
  }
  int k0 = (int)((total + cap - 1) / cap), tried = 0;
  if (!greedy) {
    for (int tryk = k0; tryk <= k0 + 1 && tryk <= maxk; tryk++) {
      if (pack_even(pf, cap, promote, tryk, start, end)) return tryk;
    }
    tried = k0 + 1;
  }
  /* The greedy fill: cell e ends a group when it would take the group
   * past cap. */
  int k = 0, s = 0;
  int64_t ps = 0;
  while (s < n) {
    int64_t pe;
    int e = prefix_find(pf, ps + cap, 0, &pe);
    if (e <= s || k >= maxk) return 0;
    if (e < n && promote) {
      if (e + 1 == n) {
        /* the separator would be the last cell: keep one for the last page */
        e--;
        if (e == s) return 0;
        pe = prefix_at(pf, e);
      }
      start[k] = s;
      end[k] = e;
      k++;
      s = e + 1;
      ps = pe + room_of(pf, e);
    } else {
      start[k] = s;
      end[k] = e;
      k++;
      s = e;
      ps = pe;
    }
  }
  if (greedy || k == 1) return k;
  for (int tryk = k; tryk <= k + 1 && tryk <= maxk; tryk++) {
    int st[8], en[8];
    if (tryk > tried && pack_even(pf, cap, promote, tryk, st, en)) {
      memcpy(start, st, sizeof(int) * (size_t)tryk);
      memcpy(end, en, sizeof(int) * (size_t)tryk);
      return tryk;
    }
  }
  return k;
}

/* ---- editing a window page in place ---- */

/* Can a live leaf holding [ob, oe) of the window list become [st, en) by
 * an edit (edit_leaf): do the two ranges share most cells? */
static int edit_fits(int st, int en, int ob, int oe) {
  int s2 = st > ob ? st : ob, e2 = en < oe ? en : oe;
  if (s2 >= e2) return 0;
  int moves = (s2 - st) + (en - e2) + (s2 - ob) + (oe - e2);
  return moves * 4 <= en - st;
}

/* Make the live leaf pg hold cells [st, en) of all, when it now holds
 * [ob, oe) of all but for entry onew (-1: none; a cell not yet on the page)
 * and edit_fits: the cells leaving either end are dropped and the ones
 * arriving inserted, the rest stay where they are (SQLite's editPage).
 * pack() found that the new content fits; btree_page_insert_cell checks
 * it against the page's free space. */
static int edit_leaf(Bal *b, PgPage *pg, Content *all, int st, int en, int ob, int oe, int onew) {
  Btree *bt = b->bt;
  int s2 = st > ob ? st : ob, e2 = en < oe ? en : oe;
  int rc = SHALE_OK;
  /* drop the cells past the kept range, then those before it */
  int live = oe - ob - (onew >= 0 ? 1 : 0);
  for (int x = oe - 1; x >= e2 && rc == SHALE_OK; x--) {
    if (x == onew) continue;
    rc = btree_page_drop_cell(bt, pg, --live, content_size(bt, all, x));
  }
  for (int x = ob; x < s2 && rc == SHALE_OK; x++) {
    if (x == onew) continue;
    rc = btree_page_drop_cell(bt, pg, 0, content_size(bt, all, x));
  }
  if (rc == SHALE_OK && onew >= s2 && onew < e2)
    rc = btree_page_insert_cell(bt, pg, onew - s2, all->cell[onew], content_size(bt, all, onew));
  for (int x = st; x < s2 && rc == SHALE_OK; x++)
    rc = btree_page_insert_cell(bt, pg, x - st, all->cell[x], content_size(bt, all, x));
  for (int x = e2; x < en && rc == SHALE_OK; x++)
    rc = btree_page_insert_cell(bt, pg, x - st, all->cell[x], content_size(bt, all, x));
  assert(rc != SHALE_OK || page_mem(pg)->ncell == en - st);
  return rc;
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
    rc = rebuild_page(b, root, ct, 0, ct->n, ct->right);
    return rc ? rc : btree_ptrmap_cells(bt, root);
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
  Prefix pf;
  memset(&newpc, 0, sizeof newpc);
  rc = content_alloc(b, &all, total);
  if (rc) goto out;
  all.leaf = ct->leaf;
  all.intkey = ct->intkey;
  all.right = sc[nsib - 1].right;
  pf.bt = bt;
  pf.ct = &all;
  pf.na = 0;
  prefix_anchor(&pf);
  for (int j = 0; j < nsib; j++) {
    obase[j] = all.n;
    onew[j] = -1;
    live[j] = ct->leaf;
    if (first + j == pidx) {
      live[j] = ct->leaf && b->edit_pgno == sibno[j];
      if (live[j] && b->edit_new >= 0) onew[j] = all.n + b->edit_new;
    }
    content_append(bt, &all, &sc[j], 0, sc[j].n);
    prefix_anchor(&pf);
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
      prefix_anchor(&pf);
    } else {
      uint8_t *cp = aalloc(b, dsz);
      if (!cp) {
        rc = SHALE_NOMEM;
        goto out;
      }
      memcpy(cp, dv, dsz);
      util_put4(cp, sc[j].right);
      content_add(&all, cp, dsz);
      prefix_anchor(&pf);
    }
  }

  /* Pack. */
  int promote = !(ct->leaf && ct->intkey);
  uint32_t cap = bt->usable - (ct->leaf ? 8 : 12);
  int st[8], en[8], edit[8];
  k = pack(&pf, cap, promote, greedy, st, en, 8);
  if (k == 0) {
    rc = BT_CORRUPT(bt, pager_pgno(parent), "cells too large to balance");
    goto out;
  }
  /* The groups cover the list exactly, separators between them. A live
   * leaf keeping most of its cells is edited; every other page is rebuilt
   * from its group, whose cells are all sized now and checked to fit
   * before any page is written (the byte totals pack() used came from the
   * pages' free space). */
  assert(st[0] == 0 && en[k - 1] == all.n);
  for (int j = 0; j < k; j++) {
    assert(j == k - 1 || st[j + 1] == en[j] + (promote ? 1 : 0));
    edit[j] = j < nsib && live[j] && edit_fits(st[j], en[j], obase[j], obase[j] + sc[j].n);
    if (!edit[j] && content_room(bt, &all, st[j], en[j]) > cap) {
      rc = BT_CORRUPT(bt, j < nsib ? sibno[j] : pager_pgno(parent), "cells larger than the page");
      goto out;
    }
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
    if (edit[j]) {
      rc = edit_leaf(b, out[j], &all, st[j], en[j], obase[j], obase[j] + sc[j].n, onew[j]);
      if (rc) goto out;
    } else {
      btree_page_rebuild(bt, out[j], type, all.cell + st[j], all.size + st[j], en[j] - st[j],
                         right);
    }
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
      dsz = (uint16_t)(4 + bt_put_varint(dv + 4, v));
    } else if (ct->leaf) {
      /* an index leaf cell moves up with a child pointer in front */
      uint16_t s = content_size(bt, &all, en[j]);
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
      uint16_t s = content_size(bt, &all, en[j]);
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
  content_append(bt, &newpc, &pc, 0, first);
  content_append(bt, &newpc, &divs, 0, divs.n);
  if (lastci < np) {
    uint8_t *cp = pcell[nsib - 1];
    util_put4(cp, outno[k - 1]);
    content_add(&newpc, cp, psize[nsib - 1]);
  } else {
    newpc.right = outno[k - 1];
  }
  content_append(bt, &newpc, &pc, lastci + 1, np);
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
    if (rc == SHALE_OK) rc = rebuild_page(b, pg, ct, 0, ct->n, ct->right);
    return rc ? rc : btree_ptrmap_cells(bt, pg);
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
  uint32_t dsz = 4 + (uint32_t)bt_put_varint(div + 4, (uint64_t)last.key);
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
