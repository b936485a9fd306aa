/*
 * btree_ptrmap.c -- auto-vacuum: pointer-map pages, page relocation, the
 * commit-time vacuum (auto_vacuum=FULL) and incremental_vacuum steps.
 *
 * Owns docs/format.md §8: in a file whose header offset 52 (largest root
 * page) is non-zero, page 2 and every (U/5+1)-th page after it (skipping the
 * lock-byte page) is a pointer-map page holding, for each of the U/5 pages
 * after it, a 5-byte entry: type (1 root, 2 free, 3 first overflow page, 4
 * later overflow page, 5 non-root b-tree page) and the parent page number
 * (0 for roots and free pages; the page holding the cell for type 3; the
 * previous overflow page for type 4; the parent b-tree page for type 5).
 *
 * Invariants:
 *  1. With bt->autovac set, every page in use or on the freelist has a
 *     correct entry at the end of every b-tree operation: allocation sites
 *     (btree_freelist.c, btree_balance.c, btree.c) call btree_ptrmap_put /
 *     btree_ptrmap_cells as they link a page; btree_free_page marks it free.
 *  2. btree_ptrmap_put writes only when the entry differs (no needless journal
 *     writes); it is a no-op in files without auto-vacuum.
 *  3. A page is relocated only into a page taken off the freelist (or the
 *     page that becomes a new root), after every cursor of the Btree has been
 *     saved: no cursor holds a page reference across a relocation.
 *  4. After a FULL commit-time vacuum the freelist is empty and the file is
 *     truncated to the pages in use plus the pointer maps among them, as
 *     SQLite's autoVacuumCommit computes it (finalDbSize).
 */
#include "btree_int.h"

uint32_t btree_ptrmap_pageno(Btree *bt, uint32_t pgno) {
  if (pgno < 2) return 0;
  uint32_t per = bt->usable / 5 + 1;
  uint32_t p = ((pgno - 2) / per) * per + 2;
  if (p == btree_lockbyte_page(bt)) p++;
  return p;
}

int btree_ptrmap_is_page(Btree *bt, uint32_t pgno) {
  return pgno >= 2 && btree_ptrmap_pageno(bt, pgno) == pgno;
}

int btree_ptrmap_put(Btree *bt, uint32_t key, int type, uint32_t parent) {
  if (!bt->autovac) return SHALE_OK;
  if (key == 0) return BT_CORRUPT(bt, 0, "pointer map entry for page 0");
  uint32_t pm = btree_ptrmap_pageno(bt, key);
  if (pm == 0 || key <= pm) return BT_CORRUPT(bt, key, "pointer map entry for a map page");
  PgPage *pg;
  int rc = pager_get(bt->pager, pm, 0, &pg);
  if (rc) return rc;
  if (page_mem(pg)->init) { /* a hostile file uses the map page as a tree page */
    pager_unref(pg);
    return BT_CORRUPT(bt, pm, "pointer map page is also a b-tree page");
  }
  uint32_t off = 5 * (key - pm - 1);
  uint8_t *d = pager_data(pg);
  if (off + 5 > bt->usable) {
    pager_unref(pg);
    return BT_CORRUPT(bt, pm, "pointer map offset out of range");
  }
  if (d[off] != type || util_get4(d + off + 1) != parent) {
    rc = pager_write(pg);
    if (rc == SHALE_OK) {
      d[off] = (uint8_t)type;
      util_put4(d + off + 1, parent);
    }
  }
  pager_unref(pg);
  return rc;
}

int btree_ptrmap_get(Btree *bt, uint32_t key, int *type, uint32_t *parent) {
  *type = 0;
  *parent = 0;
  uint32_t pm = btree_ptrmap_pageno(bt, key);
  if (pm == 0 || key <= pm || pm > pager_db_size(bt->pager))
    return BT_CORRUPT(bt, key, "no pointer map entry");
  PgPage *pg;
  int rc = pager_get(bt->pager, pm, 0, &pg);
  if (rc) return rc;
  uint32_t off = 5 * (key - pm - 1);
  const uint8_t *d = pager_data(pg);
  if (off + 5 <= bt->usable) {
    *type = d[off];
    *parent = util_get4(d + off + 1);
  }
  pager_unref(pg);
  if (*type < PTRMAP_ROOT || *type > PTRMAP_BTREE)
    return BT_CORRUPT(bt, pm, "bad pointer map entry");
  return SHALE_OK;
}

int btree_ptrmap_cell(Btree *bt, PgPage *pg, int i) {
  if (!bt->autovac) return SHALE_OK;
  CellInfo ci;
  int rc = btree_page_cell_parse(bt, pg, i, &ci);
  if (rc) return rc;
  uint32_t pgno = pager_pgno(pg);
  if (ci.ovfl) rc = btree_ptrmap_put(bt, ci.ovfl, PTRMAP_OVFL1, pgno);
  if (rc == SHALE_OK && !page_mem(pg)->leaf)
    rc = btree_ptrmap_put(bt, ci.child, PTRMAP_BTREE, pgno);
  return rc;
}

int btree_ptrmap_cells(Btree *bt, PgPage *pg) {
  if (!bt->autovac) return SHALE_OK;
  int rc = btree_page_check_cells(bt, pg); /* child numbers in range (lazy btree_page_init) */
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  for (int i = 0; i < m->ncell && rc == SHALE_OK; i++) rc = btree_ptrmap_cell(bt, pg, i);
  if (rc == SHALE_OK && !m->leaf)
    rc = btree_ptrmap_put(bt, page_right(pg), PTRMAP_BTREE, pager_pgno(pg));
  return rc;
}

/* ---- relocation ---- */

/* Save every cursor of the Btree (invariant 3). */
static int save_all_cursors(Btree *bt) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    int rc = btree_cursor_save(c);
    if (rc) return rc;
  }
  return SHALE_OK;
}

/* In the parent page, make the pointer of the given type to `from` point to
 * `to`. */
static int modify_pointer(Btree *bt, uint32_t parent, uint32_t from, uint32_t to, int type) {
  if (type == PTRMAP_OVFL2) {
    PgPage *pg;
    int rc = pager_get(bt->pager, parent, 0, &pg);
    if (rc) return rc;
    if (util_get4(pager_data(pg)) != from) {
      pager_unref(pg);
      return BT_CORRUPT(bt, parent, "overflow chain does not lead to a moved page");
    }
    rc = pager_write(pg);
    if (rc == SHALE_OK) util_put4(pager_data(pg), to);
    pager_unref(pg);
    return rc;
  }
  PgPage *pg;
  int rc = btree_page_get(bt, parent, &pg);
  if (rc) return rc;
  rc = pager_write(pg);
  if (rc) goto out;
  MemPage *m = page_mem(pg);
  for (int i = 0; i < m->ncell; i++) {
    CellInfo ci;
    rc = btree_page_cell_parse(bt, pg, i, &ci);
    if (rc) goto out;
    uint8_t *cell = page_cell(pg, i);
    if (type == PTRMAP_OVFL1 && ci.ovfl == from) {
      util_put4(cell + ci.size - 4, to);
      goto out;
    }
    if (type == PTRMAP_BTREE && !m->leaf && ci.child == from) {
      util_put4(cell, to);
      goto out;
    }
  }
  if (type != PTRMAP_BTREE || m->leaf || page_right(pg) != from) {
    rc = BT_CORRUPT(bt, parent, "moved page not found in its parent");
    goto out;
  }
  page_set_right(pg, to);
out:
  /* the parse stays valid: only 4-byte page numbers changed in place */
  pager_unref(pg);
  return rc;
}

int btree_relocate(Btree *bt, uint32_t from, int type, uint32_t parent, PgPage *to_pg) {
  uint32_t to = pager_pgno(to_pg);
  if (from < 3) return BT_CORRUPT(bt, from, "relocating page 1 or 2");
  PgPage *src;
  int rc = pager_get(bt->pager, from, 0, &src);
  if (rc) return rc;
  rc = pager_write(to_pg);
  if (rc == SHALE_OK) memcpy(pager_data(to_pg), pager_data(src), bt->page_size);
  page_mem(src)->init = 0;
  pager_unref(src);
  if (rc) return rc;
  page_mem(to_pg)->init = 0;
  if (type == PTRMAP_BTREE || type == PTRMAP_ROOT) {
    rc = btree_ptrmap_cells(bt, to_pg);
  } else {
    uint32_t next = util_get4(pager_data(to_pg));
    if (next) rc = btree_ptrmap_put(bt, next, PTRMAP_OVFL2, to);
  }
  if (rc == SHALE_OK && type != PTRMAP_ROOT) {
    rc = modify_pointer(bt, parent, from, to, type);
    if (rc == SHALE_OK) rc = btree_ptrmap_put(bt, to, type, parent);
  }
  return rc;
}

/* ---- vacuum ---- */

/* SQLite's finalDbSize: the size once nfree free pages (and the map pages
 * that then have nothing to map) are gone. */
static uint32_t final_size(Btree *bt, uint32_t norig, uint32_t nfree) {
  int64_t nentry = bt->usable / 5;
  int64_t nptrmap = ((int64_t)nfree - norig + btree_ptrmap_pageno(bt, norig) + nentry) / nentry;
  int64_t fin = (int64_t)norig - nfree - nptrmap;
  uint32_t lock = btree_lockbyte_page(bt);
  if (norig > lock && fin < lock) fin--;
  while (fin > 0 && (btree_ptrmap_is_page(bt, (uint32_t)fin) || (uint32_t)fin == lock)) fin--;
  return fin < 0 ? 0 : (uint32_t)fin;
}

static uint32_t free_count(Btree *bt) {
  PgPage *p1;
  if (pager_get(bt->pager, 1, 0, &p1)) return 0;
  uint32_t n = util_get4(pager_data(p1) + 36);
  pager_unref(p1);
  return n;
}

/* One step: page last is free (then only taken off the list when !commit)
 * or moved to a free page (<= fin). SHALE_DONE when the freelist is empty. */
static int vacuum_step(Btree *bt, uint32_t fin, uint32_t last, int commit) {
  if (btree_ptrmap_is_page(bt, last) || last == btree_lockbyte_page(bt)) return SHALE_OK;
  if (free_count(bt) == 0) return SHALE_DONE;
  int type;
  uint32_t parent;
  int rc = btree_ptrmap_get(bt, last, &type, &parent);
  if (rc) return rc;
  if (type == PTRMAP_ROOT) return BT_CORRUPT(bt, last, "root page past the end of a vacuum");
  if (type == PTRMAP_FREE) {
    if (commit) return SHALE_OK;
    PgPage *pg;
    uint32_t got;
    rc = btree_alloc_page_mode(bt, last, BTALLOC_EXACT, &pg, &got);
    if (rc) return rc;
    pager_unref(pg);
    if (got != last) return BT_CORRUPT(bt, last, "free page not on the freelist");
    return SHALE_OK;
  }
  PgPage *dst = NULL;
  uint32_t got;
  for (;;) {
    uint32_t dbsize = pager_db_size(bt->pager);
    rc = btree_alloc_page_mode(bt, commit ? 0 : fin, commit ? BTALLOC_ANY : BTALLOC_LE, &dst, &got);
    if (rc) return rc;
    if (got > dbsize) {
      pager_unref(dst);
      return BT_CORRUPT(bt, got, "freelist page past the end");
    }
    if (!commit || got <= fin) break;
    pager_unref(dst);
  }
  if (got >= last) {
    pager_unref(dst);
    return BT_CORRUPT(bt, got, "freelist page past the end");
  }
  rc = btree_relocate(bt, last, type, parent, dst);
  pager_unref(dst);
  return rc;
}

void btree_set_autovac_pages(Btree *bt, BtreeAutovacPages fn, void *arg) {
  bt->avac_fn = fn;
  bt->avac_arg = arg;
}

/* The free pages this commit gives back: all, or what avac_fn says (asked
 * at every commit, with or without free pages, as SQLite). */
static uint32_t autovac_pages(Btree *bt, uint32_t norig, uint32_t nfree) {
  if (!bt->avac_fn) return nfree;
  uint32_t n = bt->avac_fn(bt->avac_arg, bt, norig, nfree, bt->page_size);
  return n < nfree ? n : nfree;
}

int btree_autovac_commit(Btree *bt) {
  if (!bt->autovac || bt->incrvac || pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return 0;
  uint32_t norig = pager_db_size(bt->pager);
  if (norig == 0) return SHALE_OK;
  if (btree_ptrmap_is_page(bt, norig) || norig == btree_lockbyte_page(bt))
    return BT_CORRUPT(bt, norig, "database ends on a pointer map page");
  uint32_t nfree = free_count(bt);
  uint32_t nvac = autovac_pages(bt, norig, nfree);
  if (nvac == 0) return SHALE_OK;
  /* all of them: the free list is dropped whole at the end; some: each
   * page leaves the list as it goes (incremental vacuum's steps) */
  int all = nvac == nfree;
  uint32_t fin = final_size(bt, norig, nvac);
  if (fin > norig || nfree >= norig) return BT_CORRUPT(bt, 1, "free page count too big");
  int rc = save_all_cursors(bt);
  for (uint32_t last = norig; last > fin && rc == SHALE_OK; last--)
    rc = vacuum_step(bt, fin, last, all);
  if (rc != SHALE_OK && rc != SHALE_DONE) return rc;
  if (all) {
    PgPage *p1;
    rc = pager_get(bt->pager, 1, 0, &p1);
    if (rc) return rc;
    rc = pager_write(p1);
    if (rc == SHALE_OK) {
      util_put4(pager_data(p1) + 32, 0);
      util_put4(pager_data(p1) + 36, 0);
    }
    pager_unref(p1);
  }
  return rc == SHALE_OK || rc == SHALE_DONE ? pager_truncate(bt->pager, fin) : rc;
}

int btree_incr_vacuum(Btree *bt) {
  if (pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return SHALE_MISUSE;
  if (bt->readonly) {
    btree_set_error(bt, bt->ro_reason);
    return SHALE_READONLY;
  }
  if (!bt->autovac) return SHALE_DONE;
  uint32_t norig = pager_db_size(bt->pager);
  uint32_t nfree = free_count(bt);
  if (nfree == 0) return SHALE_DONE;
  uint32_t fin = final_size(bt, norig, nfree);
  if (norig < fin || nfree >= norig) return BT_CORRUPT(bt, 1, "free page count too big");
  int rc = save_all_cursors(bt);
  if (rc == SHALE_OK) rc = vacuum_step(bt, fin, norig, 0);
  if (rc) return rc;
  uint32_t n = norig;
  do {
    n--;
  } while (n == btree_lockbyte_page(bt) || btree_ptrmap_is_page(bt, n));
  return pager_truncate(bt->pager, n);
}
