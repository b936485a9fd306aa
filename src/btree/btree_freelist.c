/*
 * btree_freelist.c -- page allocation, the freelist, overflow chains.
 *
 * Owns docs/format.md §3 (freelist trunk/leaf pages, header offsets 32/36),
 * §2 (the lock-byte page is never handed out), and §5's overflow chains
 * (4-byte next pointer, then U-4 payload bytes per page).
 *
 * Invariants:
 *  1. Offset 36 (free count) = trunks + leaves, updated with every change.
 *  2. Freeing adds a leaf to the first trunk while it holds fewer than
 *     U/4-8 leaves, else the freed page becomes the new first trunk. Reading
 *     accepts up to U/4-2 leaves per trunk; more is SHALE_CORRUPT.
 *  3. Allocation takes from the freelist before growing the file: the trunk
 *     itself when it has no leaves, else the leaf closest to the hint.
 *  4. A page handed out or freed has its MemPage cleared (stale parse).
 *  5. Growing the file skips the lock-byte page.
 */
#include "btree_int.h"

uint32_t btree_lockbyte_page(Btree *bt) { return (uint32_t)(1073741824u / bt->page_size) + 1; }

/* A free page never has a live parse: pages we free lose it, so a parsed
 * page on the freelist means the freelist points into a tree. */
static int in_use(Btree *bt, uint32_t pgno) {
  PgPage *pg = pager_lookup(bt->pager, pgno);
  if (!pg) return 0;
  int used = page_mem(pg)->init != 0;
  pager_unref(pg);
  return used;
}

static void forget_parse(Btree *bt, uint32_t pgno) {
  PgPage *pg = pager_lookup(bt->pager, pgno);
  if (pg) {
    page_mem(pg)->init = 0;
    pager_unref(pg);
  }
}

/* Take a page off the freelist (SQLite's allocateBtreePage search): in
 * BTALLOC_ANY mode from the first trunk (the trunk itself when it has no
 * leaves, else its leaf nearest the hint); in BTALLOC_EXACT mode (hint on
 * the freelist) exactly the hint; in BTALLOC_LE mode any page <= hint. The
 * page comes back referenced and writable. */
static int take_free(Btree *bt, PgPage *p1, uint32_t hint, int mode, PgPage **out,
                     uint32_t *pgno_out) {
  uint8_t *h = pager_data(p1);
  uint32_t dbsize = pager_db_size(bt->pager);
  uint32_t count = util_get4(h + 36);
  int search = 0;
  int rc;
  if (mode == BTALLOC_EXACT && hint <= dbsize && bt->autovac) {
    int type;
    uint32_t parent;
    rc = btree_ptrmap_get(bt, hint, &type, &parent);
    if (rc) return rc;
    search = type == PTRMAP_FREE;
  } else if (mode == BTALLOC_LE) {
    search = 1;
  }
  PgPage *prev = NULL; /* trunk before the current one (NULL: page 1) */
  PgPage *trunk_pg = NULL, *pg = NULL;
  uint32_t pgno = 0, nseen = 0;
  rc = pager_write(p1);
  if (rc) return rc;
  for (;;) {
    uint32_t trunk = prev ? util_get4(pager_data(prev)) : util_get4(h + 32);
    if (trunk < 2 || trunk > dbsize || nseen++ > count) {
      rc = BT_CORRUPT(bt, 1, "bad freelist trunk");
      goto done;
    }
    rc = pager_get(bt->pager, trunk, 0, &trunk_pg);
    if (rc) goto done;
    uint8_t *t = pager_data(trunk_pg);
    uint32_t nleaf = util_get4(t + 4);
    if (nleaf == 0 && !search) {
      uint32_t next = util_get4(t);
      if (next > dbsize || in_use(bt, trunk) || pager_refcount(trunk_pg) > 1) {
        rc = BT_CORRUPT(bt, trunk, "freelist trunk page is in use");
        goto done;
      }
      if ((rc = pager_write(trunk_pg)) != 0) goto done;
      pgno = trunk;
      if (prev) {
        if ((rc = pager_write(prev)) != 0) goto done;
        util_put4(pager_data(prev), next);
      } else {
        util_put4(h + 32, next);
      }
      pg = trunk_pg;
      trunk_pg = NULL;
      break;
    }
    if (nleaf > bt->usable / 4 - 2) {
      rc = BT_CORRUPT(bt, trunk, "freelist leaf count too big");
      goto done;
    }
    if (search && (hint == trunk || (trunk < hint && mode == BTALLOC_LE))) {
      /* the trunk itself is the page wanted */
      if (in_use(bt, trunk) || pager_refcount(trunk_pg) > 1) {
        rc = BT_CORRUPT(bt, trunk, "freelist trunk page is in use");
        goto done;
      }
      if ((rc = pager_write(trunk_pg)) != 0) goto done;
      uint32_t next = util_get4(t), repl = next;
      if (nleaf > 0) {
        /* its first leaf becomes the trunk, with the other leaves */
        repl = util_get4(t + 8);
        if (repl < 2 || repl > dbsize) {
          rc = BT_CORRUPT(bt, trunk, "freelist leaf page number out of range");
          goto done;
        }
        PgPage *nt;
        rc = pager_get(bt->pager, repl, 0, &nt);
        if (rc) goto done;
        rc = pager_write(nt);
        if (rc == SHALE_OK) {
          uint8_t *nd = pager_data(nt);
          util_put4(nd, next);
          util_put4(nd + 4, nleaf - 1);
          memcpy(nd + 8, t + 12, (size_t)(nleaf - 1) * 4);
          page_mem(nt)->init = 0;
        }
        pager_unref(nt);
        if (rc) goto done;
      }
      if (prev) {
        if ((rc = pager_write(prev)) != 0) goto done;
        util_put4(pager_data(prev), repl);
      } else {
        util_put4(h + 32, repl);
      }
      pgno = trunk;
      pg = trunk_pg;
      trunk_pg = NULL;
      break;
    }
    if (nleaf > 0) {
      uint32_t best = 0;
      if (hint && mode == BTALLOC_LE) {
        for (uint32_t i = 0; i < nleaf; i++) {
          if (util_get4(t + 8 + 4 * i) <= hint) {
            best = i;
            break;
          }
        }
      } else if (hint) {
        /* The nearest leaf. Unless the hint itself is sought (EXACT), it
         * is in use, so one next to it is as near as any and the search
         * stops there. It starts just before where the last one ended:
         * the pages of a chain freed in order lie next to each other there
         * (the leaf taken is replaced by the last one). */
        uint32_t bestd = UINT32_MAX, enough = search ? 0 : 1;
        uint32_t i = bt->free_scan ? bt->free_scan - 1 : 0;
        if (i >= nleaf) i = nleaf - 1;
        for (uint32_t k = 0; k < nleaf && bestd > enough; k++, i = i + 1 < nleaf ? i + 1 : 0) {
          uint32_t l = util_get4(t + 8 + 4 * i);
          uint32_t dist = l > hint ? l - hint : hint - l;
          if (dist < bestd) {
            bestd = dist;
            best = i;
          }
        }
        bt->free_scan = best;
      }
      uint32_t leaf = util_get4(t + 8 + 4 * best);
      if (leaf < 2 || leaf > dbsize || leaf == btree_lockbyte_page(bt) || leaf == trunk ||
          in_use(bt, leaf)) {
        rc = BT_CORRUPT(bt, trunk, "freelist leaf page number out of range");
        goto done;
      }
      if (!search || leaf == hint || (leaf < hint && mode == BTALLOC_LE)) {
        rc = pager_get(bt->pager, leaf, 0, &pg);
        if (rc) goto done;
        if (pager_refcount(pg) > 1) { /* e.g. a tree page the caller holds */
          rc = BT_CORRUPT(bt, leaf, "freelist leaf page is in use");
          goto done;
        }
        if ((rc = pager_write(pg)) != 0) goto done;
        if ((rc = pager_write(trunk_pg)) != 0) goto done;
        util_put4(t + 8 + 4 * best, util_get4(t + 8 + 4 * (nleaf - 1)));
        util_put4(t + 4, nleaf - 1);
        pgno = leaf;
        break;
      }
    }
    if (!search) {
      rc = BT_CORRUPT(bt, trunk, "freelist search failed");
      goto done;
    }
    if (prev) pager_unref(prev);
    prev = trunk_pg;
    trunk_pg = NULL;
  }
  util_put4(h + 36, count - 1);
done:
  if (trunk_pg) pager_unref(trunk_pg);
  if (prev) pager_unref(prev);
  if (rc) {
    if (pg) pager_unref(pg);
    return rc;
  }
  *out = pg;
  *pgno_out = pgno;
  return SHALE_OK;
}

int btree_alloc_page_mode(Btree *bt, uint32_t hint, int mode, PgPage **out, uint32_t *pgno_out) {
  PgPage *p1 = NULL, *pg = NULL;
  uint32_t pgno = 0;
  int rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  uint8_t *h = pager_data(p1);
  uint32_t dbsize = pager_db_size(bt->pager);
  uint32_t trunk = util_get4(h + 32), count = util_get4(h + 36);
  if (trunk || count) {
    if (trunk < 2 || trunk > dbsize || count == 0 || count >= dbsize) {
      rc = BT_CORRUPT(bt, 1, "bad freelist head");
      goto done;
    }
    rc = take_free(bt, p1, hint, mode, &pg, &pgno);
    if (rc) goto done;
  } else {
    pgno = dbsize + 1;
    if (pgno == btree_lockbyte_page(bt)) pgno++;
    if (bt->autovac && btree_ptrmap_is_page(bt, pgno)) {
      /* the map page comes first, empty */
      PgPage *mp;
      rc = pager_get(bt->pager, pgno, PAGER_GET_NOCONTENT, &mp);
      if (rc) goto done;
      rc = pager_write(mp);
      if (rc == SHALE_OK) memset(pager_data(mp), 0, bt->page_size);
      page_mem(mp)->init = 0;
      pager_unref(mp);
      if (rc) goto done;
      pgno++;
      if (pgno == btree_lockbyte_page(bt)) pgno++;
    }
    if (pgno >= 0x7fffffffu) {
      rc = SHALE_FULL;
      goto done;
    }
    rc = pager_get(bt->pager, pgno, PAGER_GET_NOCONTENT, &pg);
    if (rc) goto done;
    if ((rc = pager_write(pg)) != 0) goto done;
    /* a page past the end has no content yet: zeros, not whatever the
     * cache buffer held. A page from the freelist keeps its old bytes
     * (as in SQLite): the caller writes the header and every byte the
     * format reads. */
    memset(pager_data(pg), 0, bt->page_size);
  }
  page_mem(pg)->init = 0;
done:
  pager_unref(p1);
  if (rc) {
    if (pg) pager_unref(pg);
    return rc;
  }
  *out = pg;
  *pgno_out = pgno;
  return SHALE_OK;
}

int btree_alloc_page(Btree *bt, uint32_t hint, PgPage **out, uint32_t *pgno_out) {
  return btree_alloc_page_mode(bt, hint, BTALLOC_ANY, out, pgno_out);
}

int btree_free_page(Btree *bt, uint32_t pgno) {
  PgPage *p1 = NULL, *pg = NULL;
  uint32_t dbsize = pager_db_size(bt->pager);
  if (pgno < 2 || pgno > dbsize) return BT_CORRUPT(bt, pgno, "freeing a page out of range");
  int rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  uint8_t *h = pager_data(p1);
  uint32_t trunk = util_get4(h + 32), count = util_get4(h + 36);
  forget_parse(bt, pgno);
  if ((rc = pager_write(p1)) != 0) goto done;
  if ((rc = btree_ptrmap_put(bt, pgno, PTRMAP_FREE, 0)) != 0) goto done;
  if (trunk) {
    if (trunk > dbsize) {
      rc = BT_CORRUPT(bt, 1, "bad freelist head");
      goto done;
    }
    if (trunk == pgno) {
      rc = BT_CORRUPT(bt, pgno, "page freed twice");
      goto done;
    }
    rc = pager_get(bt->pager, trunk, 0, &pg);
    if (rc) goto done;
    uint8_t *t = pager_data(pg);
    uint32_t nleaf = util_get4(t + 4);
    if (nleaf > bt->usable / 4 - 2) {
      rc = BT_CORRUPT(bt, trunk, "freelist leaf count too big");
      goto done;
    }
    if (nleaf < bt->usable / 4 - 8) {
      if ((rc = pager_write(pg)) != 0) goto done;
      util_put4(t + 8 + 4 * nleaf, pgno);
      util_put4(t + 4, nleaf + 1);
      util_put4(h + 36, count + 1);
      goto done;
    }
    pager_unref(pg);
    pg = NULL;
  }
  /* The freed page becomes the new first trunk. */
  rc = pager_get(bt->pager, pgno, 0, &pg);
  if (rc) goto done;
  if ((rc = pager_write(pg)) != 0) goto done;
  memset(pager_data(pg), 0, bt->page_size);
  util_put4(pager_data(pg), trunk);
  util_put4(pager_data(pg) + 4, 0);
  page_mem(pg)->init = 0;
  util_put4(h + 32, pgno);
  util_put4(h + 36, count + 1);
done:
  if (pg) pager_unref(pg);
  pager_unref(p1);
  return rc;
}

int btree_free_overflow(Btree *bt, uint32_t pgno_cell, uint32_t first, uint32_t npayload,
                        uint32_t nlocal) {
  if (nlocal >= npayload) return SHALE_OK;
  uint32_t per = bt->usable - 4;
  uint32_t npages = (npayload - nlocal + per - 1) / per;
  uint32_t pgno = first, dbsize = pager_db_size(bt->pager);
  for (uint32_t i = 0; i < npages; i++) {
    if (pgno < 2 || pgno > dbsize) return BT_CORRUPT(bt, pgno_cell, "overflow chain broken");
    PgPage *pg;
    int rc = pager_get(bt->pager, pgno, 0, &pg);
    if (rc) return rc;
    uint32_t next = util_get4(pager_data(pg));
    pager_unref(pg);
    rc = btree_free_page(bt, pgno);
    if (rc) return rc;
    pgno = next;
  }
  return SHALE_OK;
}

int btree_free_cell_overflow(Btree *bt, PgPage *pg, const CellInfo *ci) {
  if (!ci->ovfl) return SHALE_OK;
  return btree_free_overflow(bt, pager_pgno(pg), ci->ovfl, ci->npayload, ci->nlocal);
}

/* Copy payload bytes [from, from+len) of (data[0..n) + zeros) to dst. */
static void copy_payload(uint8_t *dst, const uint8_t *data, uint32_t n, uint32_t from,
                         uint32_t len) {
  if (from < n) {
    uint32_t k = n - from < len ? n - from : len;
    memcpy(dst, data + from, k);
    dst += k;
    len -= k;
  }
  if (len) memset(dst, 0, len);
}

int btree_build_cell(Btree *bt, uint32_t hint, int intkey, int64_t rowid, const void *data,
                     uint32_t n, uint32_t nzero, uint8_t *buf, uint32_t *sz) {
  uint64_t total = (uint64_t)n + nzero;
  if (total > 0x7fffffffu) return SHALE_TOOBIG;
  uint32_t np = (uint32_t)total;
  uint8_t *p = buf;
  p += bt_put_varint(p, np);
  if (intkey) p += bt_put_varint(p, (uint64_t)rowid);
  uint32_t local = np <= (intkey ? bt->max_leaf : bt->max_local)
                       ? np /* all local */
                       : btree_cell_local_size(bt, intkey, np);
  copy_payload(p, data, n, 0, local);
  p += local;
  *sz = (uint32_t)(p - buf) + (local < np ? 4 : 0);
  if (local == np) return SHALE_OK;
  uint8_t *link = p; /* where the next page number goes */
  PgPage *prev = NULL;
  uint32_t off = local, first = 0, cell_pg = hint;
  int rc = SHALE_OK;
  while (off < np) {
    PgPage *pg;
    uint32_t pgno;
    rc = btree_alloc_page(bt, hint, &pg, &pgno);
    if (rc) break;
    rc = btree_ptrmap_put(bt, pgno, first ? PTRMAP_OVFL2 : PTRMAP_OVFL1, first ? hint : cell_pg);
    if (rc) {
      pager_unref(pg);
      break;
    }
    if (!first) first = pgno;
    util_put4(link, pgno);
    if (prev) pager_unref(prev);
    prev = pg;
    uint8_t *d = pager_data(pg);
    uint32_t chunk = np - off < bt->usable - 4 ? np - off : bt->usable - 4;
    util_put4(d, 0);
    copy_payload(d + 4, data, n, off, chunk);
    off += chunk;
    link = d;
    hint = pgno;
  }
  if (prev) pager_unref(prev);
  if (rc && first) {
    /* give back what was taken (best effort; the transaction is failing) */
    btree_free_overflow(bt, 0, first, off, local);
  }
  return rc;
}
