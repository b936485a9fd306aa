/*
 * btree_stat.c -- the page-by-page walk of one B-tree behind the dbstat
 * virtual table (src/api/api_dbstat.c): every page of the tree and of its
 * cells' overflow chains, in the order SQLite's dbstat lists them, with the
 * page's cell count, payload and free bytes.
 *
 * Order: a page comes before what hangs under it; then, for each cell in
 * order, the pages of that cell's overflow chain, then (interior pages)
 * the subtree of the cell's left child; last the right child's subtree.
 *
 * Paths: the root is "/"; the i-th child of a page with path P is P
 * followed by i in three or more lowercase hex digits and "/"; the k-th
 * overflow page of cell i of a page with path P is P, i in three hex
 * digits, "+", k in six.
 *
 * Owns: the walk's stack (one level per page above the current one, each
 * by page number: no page stays referenced between calls) and its path.
 *
 * Invariants:
 *  1. Each call fetches the pages it reads afresh and lets them go before
 *     returning, so the walk holds no page while its caller runs, and a
 *     page changed meanwhile is only read as it then is (validated again).
 *  2. The stack is at most BT_MAX_DEPTH deep and an overflow chain at most
 *     the file's page count long: a loop in a corrupt file ends in
 *     SHALE_CORRUPT, never in an endless walk.
 *  3. A child must be a page of the same kind (table or index) as its
 *     parent; anything else is SHALE_CORRUPT.
 */
#include <stdio.h>

#include "btree_int.h"

typedef struct StatLevel {
  uint32_t pgno;
  int ncell;  /* cells when the page was listed */
  int cell;   /* next cell (ncell: the right child) */
  int phase;  /* for that cell: 0 its overflow chain next, 1 its child */
  int listed; /* the page's own row was given */
  int leaf, intkey;
  int pathlen; /* bytes of path up to and including this page's "/" */
} StatLevel;

struct BtreeStat {
  Btree *bt;
  int depth;
  StatLevel lv[BT_MAX_DEPTH];
  /* the overflow chain being listed */
  int in_chain;
  uint32_t chain_next;  /* its next page (0: none) */
  uint32_t chain_left;  /* payload bytes not yet on a listed page */
  uint32_t chain_index; /* pages of it listed so far */
  int chain_cell;
  char path[BT_MAX_DEPTH * 9 + 32];
};

int btree_stat_open(Btree *bt, uint32_t root, BtreeStat **out) {
  *out = NULL;
  BtreeStat *s = shale_malloc(sizeof *s);
  if (!s) return SHALE_NOMEM;
  memset(s, 0, sizeof *s);
  s->bt = bt;
  s->depth = 1;
  s->lv[0].pgno = root;
  s->lv[0].pathlen = 1;
  s->lv[0].intkey = -1; /* the root decides */
  s->path[0] = '/';
  *out = s;
  return SHALE_OK;
}

void btree_stat_close(BtreeStat *s) { shale_free(s); }

/* List level L's page: its cells' counts and its free bytes. */
static int stat_list_page(BtreeStat *s, StatLevel *L, BtreeStatPage *out) {
  Btree *bt = s->bt;
  PgPage *pg;
  int rc = btree_page_get_lazy(bt, L->pgno, &pg);
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  if (L->intkey >= 0 && m->intkey != L->intkey) {
    pager_unref(pg);
    return BT_CORRUPT(bt, L->pgno, "child of another kind of tree");
  }
  L->leaf = m->leaf;
  L->intkey = m->intkey;
  L->ncell = m->ncell;
  int64_t payload = 0, mx = 0;
  if (!m->intkey || m->leaf) {
    for (int i = 0; i < m->ncell; i++) {
      CellInfo ci;
      rc = btree_page_cell_parse(bt, pg, i, &ci);
      if (rc) {
        pager_unref(pg);
        return rc;
      }
      payload += ci.nlocal;
      if (ci.npayload > mx) mx = ci.npayload;
    }
  }
  *out = (BtreeStatPage){
      L->pgno, m->leaf ? BTREE_STAT_LEAF : BTREE_STAT_INTERNAL, m->ncell, payload, m->nfree, mx,
      s->path};
  pager_unref(pg);
  L->listed = 1;
  s->path[L->pathlen] = 0;
  return SHALE_ROW;
}

/* Start the overflow chain of cell L->cell (nothing when it has none). */
static int stat_chain_start(BtreeStat *s, StatLevel *L) {
  if (L->cell >= L->ncell || (L->intkey && !L->leaf)) return SHALE_OK;
  PgPage *pg;
  int rc = btree_page_get_lazy(s->bt, L->pgno, &pg);
  if (rc) return rc;
  CellInfo ci;
  rc = L->cell < page_mem(pg)->ncell ? btree_page_cell_parse(s->bt, pg, L->cell, &ci)
                                     : BT_CORRUPT(s->bt, L->pgno, "page changed under dbstat");
  pager_unref(pg);
  if (rc) return rc;
  if (ci.ovfl == 0) return SHALE_OK;
  s->in_chain = 1;
  s->chain_next = ci.ovfl;
  s->chain_left = ci.npayload - ci.nlocal;
  s->chain_index = 0;
  s->chain_cell = L->cell;
  return SHALE_OK;
}

/* The next page of the chain being listed. */
static int stat_chain_page(BtreeStat *s, BtreeStatPage *out) {
  Btree *bt = s->bt;
  StatLevel *L = &s->lv[s->depth - 1];
  uint32_t pgno = s->chain_next;
  if (pgno < 2 || pgno > btree_page_count(bt) || s->chain_index >= btree_page_count(bt))
    return BT_CORRUPT(bt, L->pgno, "overflow chain broken");
  const uint8_t *d;
  int rc = pager_peek(bt->pager, pgno, &d);
  if (rc) return rc;
  uint32_t per = bt->usable - 4;
  uint32_t on = s->chain_left < per ? s->chain_left : per;
  s->chain_next = util_get4(d);
  s->chain_left -= on;
  snprintf(s->path + L->pathlen, sizeof s->path - (size_t)L->pathlen, "%03x+%06x",
           (unsigned)s->chain_cell, (unsigned)s->chain_index);
  s->chain_index++;
  if (s->chain_left == 0) s->in_chain = 0;
  *out = (BtreeStatPage){pgno, BTREE_STAT_OVERFLOW, 0, on, per - on, 0, s->path};
  return SHALE_ROW;
}

/* Descend into child L->cell of level L. */
static int stat_push_child(BtreeStat *s, StatLevel *L) {
  if (s->depth >= BT_MAX_DEPTH) return BT_CORRUPT(s->bt, L->pgno, "tree too deep");
  PgPage *pg;
  int rc = btree_page_get_lazy(s->bt, L->pgno, &pg);
  if (rc) return rc;
  uint32_t child = L->cell <= page_mem(pg)->ncell ? btree_page_child(pg, L->cell) : 0;
  pager_unref(pg);
  if (child < 1 || child > btree_page_count(s->bt))
    return BT_CORRUPT(s->bt, L->pgno, "child page out of range");
  StatLevel *C = &s->lv[s->depth++];
  memset(C, 0, sizeof *C);
  C->pgno = child;
  C->intkey = L->intkey;
  int n = snprintf(s->path + L->pathlen, sizeof s->path - (size_t)L->pathlen, "%03x/",
                   (unsigned)L->cell);
  C->pathlen = L->pathlen + n;
  return SHALE_OK;
}

int btree_stat_next(BtreeStat *s, BtreeStatPage *out) {
  for (;;) {
    if (s->in_chain) return stat_chain_page(s, out);
    if (s->depth == 0) return SHALE_DONE;
    StatLevel *L = &s->lv[s->depth - 1];
    int rc;
    if (!L->listed) return stat_list_page(s, L, out);
    if (L->cell > L->ncell || (L->leaf && L->cell == L->ncell)) {
      s->depth--; /* this page and everything under it listed */
      continue;
    }
    if (L->phase == 0) {
      L->phase = 1;
      if ((rc = stat_chain_start(s, L)) != SHALE_OK) return rc;
      continue;
    }
    L->phase = 0;
    if (L->leaf) {
      L->cell++;
      continue;
    }
    rc = stat_push_child(s, L);
    L->cell++;
    if (rc) return rc;
  }
}
