/*
 * pager_cache.c -- the page cache of the pager, and the small page-number
 * set used for "already journalled" / "already saved in a savepoint".
 *
 * Owns: the hash table pgno -> PgPage, the LRU list of clean unreferenced
 * pages, the dirty list, page memory (struct + data + extra in one block),
 * eviction and spilling.
 *
 * Invariants:
 *  1. A page is on the LRU list iff nref == 0 and it is clean; it is on the
 *     dirty list iff PG_DIRTY is set. ndirty / nrefd / ncached count them.
 *  2. Eviction only takes pages from the LRU list (clean, unreferenced), so a
 *     referenced page is never evicted and its data pointer stays valid (a
 *     page read in place may move to its own buffer, invariant 10: the old
 *     pointer still reads the map).
 *  3. A spill writes only unreferenced dirty pages, and only after the
 *     journal was synced and EXCLUSIVE is held; a referenced dirty page may
 *     still be being modified by the layer above, so it is left dirty. In
 *     WAL mode the spill goes to the log as uncommitted frames instead
 *     (pager_wal.c), which needs no lock beyond the log's WRITE.
 *  4. Over budget with nothing clean and unreferenced (and no spill
 *     possible), the cache grows rather than fail.
 *  5. Every page in the hash table is on the list all_head (ncached of
 *     them), so the walks over the whole cache (invalidate, reload_range,
 *     drop_above, free_all) cost O(cached pages), never O(buckets); they
 *     take the next page before acting on the current one and add none.
 *  6. Mapped reads: during a read transaction (map != NULL), pages
 *     wholly within [0, map_bytes) are read from the read-only map of the
 *     database file, where map_bytes <= the file size learned at the start of
 *     the transaction (fstat in read_header, or here when map_refresh asks
 *     for it), so no byte past the file's end then is touched (another
 *     process may truncate the file later; the lock protocol keeps it from
 *     cutting pages our snapshot still reads). Pages in the WAL are read
 *     from the log first, as before; pages written go through the cache.
 *  7. The maps of the process add at most about OS_MAP_WINDOW bytes (plus
 *     the kernel's fault-around) to its resident set: the pager reports
 *     each page it reads from the map (os_map_read); the VFS counts the
 *     pages read for the first time since their map's last release, and
 *     once the process's maps pass OS_MAP_WINDOW of them it releases them
 *     (the connections to one file share one map), so a scan of a file
 *     larger than the cache, or 64 connections to one file, cost no more
 *     memory than read() would, while pages the cache evicts and reads
 *     again within the budget stay mapped (no fault per re-read).
 *  8. Removed pages are kept on the spare list while ncached + nspare stays
 *     within the budget, and pager_cache_alloc takes them before malloc: a
 *     reader that drops its cache at every commit of another connection
 *     (pager_cache_invalidate) reuses the same blocks instead of churning
 *     the allocator (whose per-thread arenas then trim and regrow with a
 *     system call per page). A block is reused only at the size it was
 *     made for (page size + extra size).
 *  9. The application's page cache (PagerCacheMethods configured when the
 *     pager opened): a page's memory is an application page -- its content
 *     in buf, the PgPage struct and the pager's extra bytes in extra -- and
 *     the application's cache decides which pages it keeps. The pager's
 *     structures (hash, all_head, dirty list) hold exactly the pages it has
 *     pinned: referenced or dirty ones, plus clean unreferenced ones on the
 *     LRU list only until the next pager_cache_trim, which every call that
 *     leaves pages there makes before it returns; trimming unpins them (not
 *     for an in-memory database, whose pages stay pinned: they are its
 *     content). After unpin the pager never touches the page: the cache may
 *     free or reuse it at any call. A page it still holds comes back through
 *     fetch(pgno, 0) with its PgPage as the pager left it; the PgPage is
 *     believed (the content is the page's) only if it names this pager, this
 *     page number and this application page, and carries app_gen: changes
 *     to pages the pager did not hold pinned (invalidation, a range
 *     reloaded) move app_gen on, or truncate the cache when nothing is
 *     pinned past the cut. The spare list (invariant 8) is not used. New
 *     pages are asked for with create 1, after a spill of dirty pages if the
 *     application cache holds the cache size or more (SQLite's cache_spill),
 *     and then with create 2 after a spill; NULL then is SHALE_NOMEM.
 * 10. In place: a clean page read from the map outside a write transaction
 *     is not copied; its data points into the map (pager_page_mapped) --
 *     only with the built-in cache: under an application cache (invariant 9)
 *     a page's own buffer is the application's memory, which the pager may
 *     not leave behind, so every read there copies into it. That
 *     stays valid while the pager's os_map size is unchanged (the map of an
 *     inode goes only when the last of its users asks for another size),
 *     however many transactions later: the content there is the file's, and
 *     every way the file can change under a cached page is a cache
 *     invalidation first (invariant 6; another process's change is seen at
 *     the next read transaction, WAL frames are read from the log).
 *     Whatever writes a page's data first gives it its own buffer again
 *     (pager_page_own): in a write transaction pager_get and pager_lookup (a
 *     copy), so the layer above, which may take a data pointer before
 *     pager_write, only ever sees own buffers there; pager_write too (a page
 *     held since before the write transaction); the reload and zeroing of a
 *     cached page; savepoint and memory-journal restores. Before the pager
 *     maps another size or truncates the file, every mapped page gets a copy
 *     (pager_cache_own_all), so no data pointer outlives its map.
 */
#include <assert.h>
#include <limits.h>
#include <string.h>

#include "pager_int.h"

/* ---- PgSet ---- */

void pager_pgset_clear(PgSet *s) {
  shale_free(s->slot);
  s->slot = NULL;
  s->cap = 0;
  s->n = 0;
}

/* Slots kept by pager_pgset_reset: 4 KiB, a transaction of up to 512 pages. */
#define PGSET_KEEP 1024

void pager_pgset_reset(PgSet *s) {
  if (s->cap > PGSET_KEEP) {
    pager_pgset_clear(s);
    return;
  }
  if (s->n > 0) memset(s->slot, 0, s->cap * sizeof(uint32_t));
  s->n = 0;
}

int pager_pgset_has(const PgSet *s, uint32_t pgno) {
  if (s->cap == 0) return 0;
  uint32_t mask = s->cap - 1;
  for (uint32_t i = (pgno * 2654435761u) & mask;; i = (i + 1) & mask) {
    if (s->slot[i] == pgno) return 1;
    if (s->slot[i] == 0) return 0;
  }
}

static void set_put(uint32_t *slot, uint32_t cap, uint32_t pgno) {
  uint32_t mask = cap - 1;
  for (uint32_t i = (pgno * 2654435761u) & mask;; i = (i + 1) & mask) {
    if (slot[i] == pgno) return;
    if (slot[i] == 0) {
      slot[i] = pgno;
      return;
    }
  }
}

int pager_pgset_reserve(PgSet *s, uint32_t more) {
  uint64_t need = ((uint64_t)s->n + more) * 2;
  if (need <= s->cap) return SHALE_OK;
  uint64_t cap = s->cap ? s->cap : 64;
  while (cap < need) cap *= 2;
  if (cap > 0x40000000u) return SHALE_NOMEM;
  uint32_t *slot = shale_malloc(cap * sizeof(uint32_t));
  if (!slot) return SHALE_NOMEM;
  memset(slot, 0, cap * sizeof(uint32_t));
  for (uint32_t i = 0; i < s->cap; i++)
    if (s->slot[i]) set_put(slot, (uint32_t)cap, s->slot[i]);
  shale_free(s->slot);
  s->slot = slot;
  s->cap = (uint32_t)cap;
  return SHALE_OK;
}

void pager_pgset_add(PgSet *s, uint32_t pgno) {
  assert(pgno != 0);
  assert((uint64_t)(s->n + 1) * 2 <= s->cap);
  if (pager_pgset_has(s, pgno)) return;
  set_put(s->slot, s->cap, pgno);
  s->n++;
}

/* ---- lists ---- */

void pager_cache_lru_add(Pager *p, PgPage *pg) {
  assert(pg->nref == 0 && !(pg->flags & PG_DIRTY));
  pg->lnext = NULL;
  pg->lprev = p->lru_tail;
  if (p->lru_tail)
    p->lru_tail->lnext = pg;
  else
    p->lru_head = pg;
  p->lru_tail = pg;
}

void pager_cache_lru_del(Pager *p, PgPage *pg) {
  if (pg->lprev)
    pg->lprev->lnext = pg->lnext;
  else
    p->lru_head = pg->lnext;
  if (pg->lnext)
    pg->lnext->lprev = pg->lprev;
  else
    p->lru_tail = pg->lprev;
  pg->lprev = pg->lnext = NULL;
}

static int on_lru(Pager *p, PgPage *pg) { return pg->lprev || pg->lnext || p->lru_head == pg; }

static void dirty_unlink(Pager *p, PgPage *pg) {
  if (pg->dprev)
    pg->dprev->dnext = pg->dnext;
  else
    p->dirty_head = pg->dnext;
  if (pg->dnext)
    pg->dnext->dprev = pg->dprev;
  else
    p->dirty_tail = pg->dprev;
  pg->dprev = pg->dnext = NULL;
}

static void dirty_append(Pager *p, PgPage *pg) {
  pg->dnext = NULL;
  pg->dprev = p->dirty_tail;
  if (p->dirty_tail)
    p->dirty_tail->dnext = pg;
  else
    p->dirty_head = pg;
  p->dirty_tail = pg;
}

void pager_cache_make_dirty(Pager *p, PgPage *pg) {
  if (pg->flags & PG_DIRTY) return;
  if (on_lru(p, pg)) pager_cache_lru_del(p, pg);
  pg->flags |= PG_DIRTY;
  dirty_append(p, pg);
  p->ndirty++;
}

void pager_cache_dirty_touch(Pager *p, PgPage *pg) {
  assert(pg->flags & PG_DIRTY);
  dirty_unlink(p, pg);
  dirty_append(p, pg);
}

void pager_cache_make_clean(Pager *p, PgPage *pg) {
  if (!(pg->flags & PG_DIRTY)) return;
  dirty_unlink(p, pg);
  pg->flags &= ~PG_DIRTY;
  p->ndirty--;
  if (pg->nref == 0) pager_cache_lru_add(p, pg);
}

/* ---- hash table ---- */

static PagerCacheMethods app_cfg; /* pager_config_cache; fetch NULL: none */

void pager_config_cache(const PagerCacheMethods *m) {
  if (m)
    app_cfg = *m;
  else
    memset(&app_cfg, 0, sizeof app_cfg);
}

int pager_cache_init(Pager *p) {
  p->app = app_cfg;
  p->app_gen = 1;
  p->lru_max = pager_app_unpins(p) ? -1 : p->budget;
  p->nhash = 256;
  p->hash = shale_malloc(p->nhash * sizeof(PgPage *));
  if (!p->hash) return SHALE_NOMEM;
  memset(p->hash, 0, p->nhash * sizeof(PgPage *));
  return SHALE_OK;
}

PgPage *pager_cache_find(Pager *p, uint32_t pgno) {
  for (PgPage *pg = p->hash[pgno & (p->nhash - 1)]; pg; pg = pg->hnext)
    if (pg->pgno == pgno) return pg;
  return NULL;
}

static void hash_grow(Pager *p) {
  uint32_t n = p->nhash * 2;
  PgPage **h = shale_malloc(n * sizeof(PgPage *));
  if (!h) return; /* longer chains, still correct */
  memset(h, 0, n * sizeof(PgPage *));
  for (PgPage *pg = p->all_head; pg; pg = pg->anext) {
    pg->hnext = h[pg->pgno & (n - 1)];
    h[pg->pgno & (n - 1)] = pg;
  }
  shale_free(p->hash);
  p->hash = h;
  p->nhash = n;
}

void pager_cache_insert(Pager *p, PgPage *pg) {
  assert(!pager_cache_find(p, pg->pgno));
  if ((uint32_t)p->ncached >= p->nhash && p->nhash < (1u << 24)) hash_grow(p);
  uint32_t b = pg->pgno & (p->nhash - 1);
  pg->hnext = p->hash[b];
  p->hash[b] = pg;
  pg->aprev = NULL;
  pg->anext = p->all_head;
  if (p->all_head) p->all_head->aprev = pg;
  p->all_head = pg;
  p->ncached++;
  if (pg->nref == 0 && !(pg->flags & PG_DIRTY)) pager_cache_lru_add(p, pg);
}

static void hash_unlink(Pager *p, PgPage *pg) {
  PgPage **pp = &p->hash[pg->pgno & (p->nhash - 1)];
  while (*pp != pg) {
    assert(*pp);
    pp = &(*pp)->hnext;
  }
  *pp = pg->hnext;
  pg->hnext = NULL;
  if (pg->aprev)
    pg->aprev->anext = pg->anext;
  else
    p->all_head = pg->anext;
  if (pg->anext) pg->anext->aprev = pg->aprev;
  pg->aprev = pg->anext = NULL;
  p->ncached--;
}

/* Unlink pg from every structure without freeing it. */
static void detach(Pager *p, PgPage *pg) {
  if (pg->flags & PG_DIRTY) {
    int nref = pg->nref;
    pg->nref = 1; /* keep make_clean from putting it on the LRU */
    pager_cache_make_clean(p, pg);
    pg->nref = nref;
  }
  if (on_lru(p, pg)) pager_cache_lru_del(p, pg);
  if (pg->nref > 0) p->nrefd--;
  hash_unlink(p, pg);
}

static size_t block_size(const Pager *p) {
  return sizeof(PgPage) + p->page_size + (size_t)p->extra_size;
}

static PgPage *spare_pop(Pager *p) {
  PgPage *pg = p->spare;
  p->spare = pg->hnext;
  p->nspare--;
  return pg;
}

static void spare_free_all(Pager *p) {
  while (p->spare) shale_free(spare_pop(p));
}

/* Keep pg's block for reuse if it fits in the budget (invariant 8). */
static void spare_put(Pager *p, PgPage *pg) {
  size_t sz = block_size(p);
  if (p->spare_sz != sz) spare_free_all(p);
  if (p->ncached + p->nspare >= p->budget) {
    shale_free(pg);
    return;
  }
  p->spare_sz = sz;
  pg->hnext = p->spare;
  p->spare = pg;
  p->nspare++;
}

static PgPage *spare_take(Pager *p) {
  if (!p->spare || p->spare_sz != block_size(p)) {
    spare_free_all(p);
    return NULL;
  }
  return spare_pop(p);
}

/* Unpin an application page (invariant 9): pg is not touched afterwards. */
static void app_unpin(Pager *p, PgPage *pg, int discard) {
  pg->app_gen = p->app_gen;
  p->app.unpin(p->appc, pg->app, discard);
}

void pager_cache_remove(Pager *p, PgPage *pg) {
  detach(p, pg);
  if (pg->app)
    app_unpin(p, pg, 1);
  else
    spare_put(p, pg);
}

void pager_cache_discard(Pager *p, PgPage *pg) {
  if (pg->app)
    app_unpin(p, pg, 1);
  else
    shale_free(pg);
}

void pager_cache_app_reset(Pager *p) {
  assert(p->ncached == 0);
  if (p->appc) {
    p->app.truncate(p->appc, 1); /* pages still pinned (in-memory ones) go first, as SQLite */
    p->app.destroy(p->appc);
  }
  p->appc = NULL;
  shale_free(p->peek_buf);
  p->peek_buf = NULL;
}

void pager_cache_free_all(Pager *p) {
  if (!p->hash) return;
  for (PgPage *pg = p->all_head, *next; pg; pg = next) { /* invariant 5 */
    next = pg->anext;
    p->hash[pg->pgno & (p->nhash - 1)] = NULL;
    if (!pg->app) shale_free(pg); /* the application's memory goes with its cache */
  }
  p->all_head = NULL;
  spare_free_all(p);
  p->ncached = p->ndirty = p->nrefd = 0;
  p->lru_head = p->lru_tail = p->dirty_head = p->dirty_tail = NULL;
  pager_cache_app_reset(p);
}

void pager_cache_set_budget(Pager *p) {
  long n = p->cache_cfg;
  if (n < 0) n = (-(long)n * 1024) / ((long)p->page_size + p->extra_size);
  if (n < 1) n = 1;
  if (n > 0x3fffffff) n = 0x3fffffff;
  p->app_pages = (int)n;
  if (p->appc) p->app.cachesize(p->appc, p->app_pages);
  if (pager_memstore(p)) n = 0x3fffffff; /* the cache is the db (pager_mem.c) */
  p->budget = (int)n;
  p->lru_max = pager_app_unpins(p) ? -1 : p->budget;
}

int64_t pager_temp_limit(Pager *p) {
  return (int64_t)p->budget * (p->page_size + (uint32_t)p->extra_size);
}

void pager_shrink(Pager *p) {
  if (pager_memstore(p)) return;
  if (p->app.fetch) {
    pager_cache_trim(p); /* unpinned: the application's to free */
    if (p->appc) p->app.shrink(p->appc);
    return;
  }
  while (p->lru_head) pager_cache_remove(p, p->lru_head);
  spare_free_all(p);
}

void pager_cache_trim(Pager *p) {
  if (pager_app_unpins(p)) { /* invariant 9: clean and unreferenced = unpinned */
    while (p->lru_head) {
      PgPage *pg = p->lru_head;
      detach(p, pg);
      app_unpin(p, pg, 0);
    }
    return;
  }
  while (p->ncached > p->budget && p->lru_head) pager_cache_remove(p, p->lru_head);
  while (p->spare && p->ncached + p->nspare > p->budget) shale_free(spare_pop(p));
}

/* ---- reading ---- */

void pager_map_count(Pager *p, uint32_t pgno) {
  p->stats.mapped++;
  os_map_read(p->fd, (int64_t)(pgno - 1) * p->page_size, (int)p->page_size); /* invariant 7 */
}

int pager_read_page(Pager *p, PgPage *pg) {
  pager_page_own(p, pg, 0); /* (a reload of a mapped page) */
  memset(pg->v.extra, 0, (size_t)p->extra_size);
  if (pg->pgno > p->db_size) {
    memset(pg->v.data, 0, p->page_size);
    return SHALE_OK;
  }
  if (p->wal) {
    uint32_t frame = 0;
    int rc = wal_find_frame(p->wal, pg->pgno, &frame);
    if (rc != SHALE_OK) return rc;
    if (frame) return wal_read_frame(p->wal, frame, pg->v.data);
  }
  if ((int64_t)pg->pgno * p->page_size <= p->map_bytes) {
    const uint8_t *at = p->map + (size_t)(pg->pgno - 1) * p->page_size;
    if (p->txn == PAGER_TXN_WRITE || pg->app)
      memcpy(pg->v.data, at, p->page_size);
    else
      pg->v.data = (uint8_t *)at; /* in place (invariant 10) */
    pager_map_count(p, pg->pgno);
    return SHALE_OK;
  }
  /* Past the map: the file may have grown since it was made (a checkpoint
   * of another connection): look at its size again next time. */
  if (p->map) p->map_refresh = 1;
  int rc = os_read(p->fd, pg->v.data, (int)p->page_size, (int64_t)(pg->pgno - 1) * p->page_size);
  if (rc == SHALE_IOERR_SHORT_READ) rc = SHALE_OK;
  return rc;
}

/* ---- mapped reads (invariant 6) ---- */

void pager_map_begin(Pager *p) {
  assert(!p->map);
  if (p->memory || !os_can_map(p->fd)) return;
  if (p->mmap_limit <= 0) {
    if (p->map_len > 0) {
      pager_cache_own_all(p, 0);
      os_map(p->fd, 0); /* turned off during a transaction */
    }
    p->map_len = 0;
    return;
  }
  if (p->map_refresh || p->fsz < 0) {
    int64_t sz;
    if (os_file_size(p->fd, &sz) != SHALE_OK) return;
    p->fsz = sz;
    p->map_refresh = 0;
  }
  int64_t want = p->fsz < p->mmap_limit ? p->fsz : p->mmap_limit;
  want -= want % p->page_size;
  if (want <= 0) return;
  if (want > p->map_len) {
    /* Grow only, and 4 MiB past the file's end, so that a growing file is
     * remapped rarely; a file that shrank keeps its larger map. Only the
     * first fsz bytes are ever read. */
    int64_t len = (want + (4 << 20)) & ~(int64_t)((4 << 20) - 1);
    if (len > p->mmap_limit) len = want;
    pager_cache_own_all(p, 0); /* the old map may go (invariant 10) */
    if (os_map(p->fd, len) != SHALE_OK) {
      p->map_len = 0;
      return;
    }
    p->map_len = len;
  }
  void *base = NULL; /* want <= PAGER_MMAP_MAX fits an int */
  if (os_fetch(p->fd, 0, (int)want, &base) != SHALE_OK || !base) return;
  p->map = base;
  p->map_bytes = want;
}

int pager_file_truncate(Pager *p, int64_t size) {
  pager_cache_own_all(p, (uint32_t)(size / p->page_size)); /* pages past the new end */
  if (p->map_bytes > size) p->map_bytes = size;
  if (p->fsz > size) p->fsz = size;
  return os_truncate(p->fd, size);
}

void pager_map_end(Pager *p) {
  if (!p->map) return;
  os_unfetch(p->fd, 0, p->map);
  p->map = NULL;
  p->map_bytes = 0;
}

/* ---- sorting the dirty list (merge sort through ->sort, no allocation) ---- */

static PgPage *merge(PgPage *a, PgPage *b) {
  PgPage head, *t = &head;
  while (a && b) {
    if (a->pgno < b->pgno) {
      t->sort = a;
      a = a->sort;
    } else {
      t->sort = b;
      b = b->sort;
    }
    t = t->sort;
  }
  t->sort = a ? a : b;
  return head.sort;
}

static PgPage *sort_list(PgPage *in) {
  /* Bottom-up merge sort with an array of sublists of size 2^i. */
  PgPage *bucket[32];
  int top = 0; /* buckets [0, top) may be in use */
  while (in) {
    PgPage *pg = in;
    in = in->sort;
    pg->sort = NULL;
    int i = 0;
    for (; i < top && i < 31 && bucket[i]; i++) {
      pg = merge(bucket[i], pg);
      bucket[i] = NULL;
    }
    if (i == top) bucket[top++] = NULL;
    bucket[i] = merge(bucket[i], pg);
  }
  PgPage *out = NULL;
  for (int i = 0; i < top; i++) out = merge(bucket[i], out);
  return out;
}

PgPage *pager_cache_sorted_dirty(Pager *p) {
  PgPage *list = NULL;
  for (PgPage *pg = p->dirty_tail; pg; pg = pg->dprev) {
    pg->sort = list;
    list = pg;
  }
  return sort_list(list);
}

/* ---- spilling ---- */

/* Write every unreferenced dirty page to the database file. SHALE_BUSY if
 * EXCLUSIVE could not be had (nothing changed); other errors put the pager
 * in the error state. */
static int spill(Pager *p) {
  PgPage *list = NULL;
  for (PgPage *pg = p->dirty_tail; pg; pg = pg->dprev) {
    if (pg->nref == 0) {
      pg->sort = list;
      list = pg;
    }
  }
  if (!list) return SHALE_OK;
  list = sort_list(list);
  p->in_spill = 1;
  int rc = SHALE_OK;
  if (p->lock < OS_LOCK_EXCLUSIVE) {
    /* After one spill found the lock busy (busy handler exhausted), later
     * ones in the same transaction just try once: a cache that must grow
     * shouldn't wait a busy timeout per page. */
    if (p->spill_busy) {
      rc = os_lock(p->fd, OS_LOCK_EXCLUSIVE);
      if (rc == SHALE_OK) p->lock = OS_LOCK_EXCLUSIVE;
    } else {
      rc = pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
    }
    if (rc == SHALE_BUSY) p->spill_busy = 1;
  }
  if (rc == SHALE_OK) {
    rc = pager_journal_sync(p); /* creates it if only new pages were written */
    if (rc == SHALE_OK) {
      p->dbmod = 1;
      rc = pager_write_pages(p, list);
    }
    if (rc != SHALE_OK)
      rc = pager_set_error(p, rc);
    else
      p->stats.spills++;
  }
  p->in_spill = 0;
  return rc;
}

int pager_cacheflush(Pager *p) {
  if (p->txn != PAGER_TXN_WRITE || p->ndirty == 0 || p->in_spill || p->memory) return SHALE_OK;
  int rc = p->wal ? pager_wal_spill(p, INT_MAX) : spill(p);
  if (p->appc) pager_cache_trim(p); /* invariant 9 */
  return rc;
}

/* ---- the application's cache (invariant 9) ---- */

static void app_setup(Pager *p, PgPage *pg, PagerAppPage *ap, uint32_t pgno) {
  memset(pg, 0, sizeof(PgPage));
  pg->pager = p;
  pg->pgno = pgno;
  pg->app = ap;
  pg->v.data = ap->buf;
  pg->v.extra = pg + 1;
}

static int app_valid(Pager *p, PgPage *pg, PagerAppPage *ap, uint32_t pgno) {
  return pg->pager == p && pg->pgno == pgno && pg->app == ap && pg->app_gen == p->app_gen;
}

/* fetch(pgno, 0): a page the application's cache held with valid content
 * comes back linked with nref 1; one held stale (or not ours) is set up
 * afresh and left pinned in *stale (NULL if none), for the caller to reuse
 * or discard. */
static PgPage *app_held(Pager *p, uint32_t pgno, PgPage **stale) {
  *stale = NULL;
  if (!p->appc) return NULL;
  PagerAppPage *ap = p->app.fetch(p->appc, pgno, 0);
  if (!ap) return NULL;
  PgPage *pg = ap->extra;
  int valid = app_valid(p, pg, ap, pgno);
  app_setup(p, pg, ap, pgno); /* links reset; content and extra kept */
  if (!valid) {
    *stale = pg;
    return NULL;
  }
  pg->nref = 1;
  p->nrefd++;
  pager_cache_insert(p, pg);
  return pg;
}

PgPage *pager_cache_app_kept(Pager *p, uint32_t pgno) {
  PgPage *stale, *pg = app_held(p, pgno, &stale);
  if (stale) pager_cache_discard(p, stale);
  return pg;
}

static int spill(Pager *p);

/* Write dirty pages out so that they can be unpinned (pager_cache_alloc). */
static int app_spill(Pager *p) {
  if (p->txn != PAGER_TXN_WRITE || p->in_spill || p->ndirty == 0 || p->memory) return SHALE_OK;
  int rc = p->wal ? pager_wal_spill(p, INT_MAX) : spill(p);
  pager_cache_trim(p);
  return rc == SHALE_BUSY ? SHALE_OK : rc;
}

static int app_alloc(Pager *p, uint32_t pgno, PgPage **out) {
  if (!p->appc) {
    p->appc =
        p->app.create((int)p->page_size, (int)sizeof(PgPage) + p->extra_size, !pager_memstore(p));
    if (!p->appc) return SHALE_NOMEM;
    p->app.cachesize(p->appc, p->app_pages);
  }
  if (p->app.pagecount(p->appc) >= p->app_pages) {
    int rc = app_spill(p);
    if (rc != SHALE_OK) return rc;
  }
  PagerAppPage *ap = p->app.fetch(p->appc, pgno, 1);
  if (!ap) {
    int rc = app_spill(p);
    if (rc != SHALE_OK) return rc;
    ap = p->app.fetch(p->appc, pgno, 2);
  }
  if (!ap) return SHALE_NOMEM;
  app_setup(p, ap->extra, ap, pgno);
  *out = ap->extra;
  return SHALE_OK;
}

int pager_cache_alloc(Pager *p, uint32_t pgno, PgPage **out) {
  PgPage *pg = NULL;
  *out = NULL;
  if (p->app.fetch) { /* one fetch(pgno, 0) for a page the application still holds */
    PgPage *stale;
    if ((*out = app_held(p, pgno, &stale)) != NULL) return PAGER_CACHE_KEPT;
    if (stale) {
      *out = stale;
      return SHALE_OK;
    }
    return app_alloc(p, pgno, out);
  }
  if (p->ncached >= p->budget) {
    /* WAL mode spills into the log as uncommitted frames (pager_wal.c). */
    if (!p->lru_head && p->txn == PAGER_TXN_WRITE && !p->in_spill && p->ndirty > 0) {
      int rc = p->wal ? pager_wal_spill(p, 1) : spill(p);
      if (rc != SHALE_OK && rc != SHALE_BUSY) return rc;
    }
    while (p->ncached > p->budget && p->lru_head) pager_cache_remove(p, p->lru_head);
    if (p->lru_head) {
      pg = p->lru_head;
      detach(p, pg);
    }
  }
  if (!pg) pg = spare_take(p);
  if (!pg) {
    pg = shale_malloc(block_size(p));
    if (!pg) return SHALE_NOMEM;
  }
  memset(pg, 0, sizeof(PgPage));
  pg->pager = p;
  pg->pgno = pgno;
  pg->v.data = (uint8_t *)(pg + 1);
  pg->v.extra = pg->v.data + p->page_size;
  *out = pg;
  return SHALE_OK;
}

/* ---- invalidation ---- */

int pager_cache_forget(Pager *p, PgPage *pg) {
  if (pg->nref == 0) {
    pager_cache_remove(p, pg);
    return SHALE_OK;
  }
  pager_cache_make_clean(p, pg);
  return pager_read_page(p, pg);
}

/* Pages the application's cache holds unpinned no longer have their
 * content (invariant 9): those from page `from` on are truncated away when
 * the pager holds none of them pinned; the rest can't be believed anymore. */
static void app_stale(Pager *p, uint32_t from) {
  if (!p->appc) return;
  int held = from == 0xffffffffu;
  for (PgPage *pg = p->all_head; pg && !held; pg = pg->anext) held = pg->pgno >= from;
  if (!held) {
    p->app.truncate(p->appc, from);
    return;
  }
  if (++p->app_gen == 0) p->app_gen = 1;
}

void pager_cache_own_all(Pager *p, uint32_t above) {
  for (PgPage *pg = p->all_head; pg; pg = pg->anext) /* invariant 5 */
    if (pg->pgno > above) pager_page_own(p, pg, 1);
}

int pager_cache_invalidate(Pager *p, int clean_only) {
  int rc = SHALE_OK;
  p->data_version++;
  for (PgPage *pg = p->all_head, *next; pg; pg = next) { /* invariant 5 */
    next = pg->anext;
    if (clean_only && (pg->flags & PG_DIRTY)) continue;
    int rc2 = pager_cache_forget(p, pg);
    if (rc2 != SHALE_OK) { /* pg is referenced (still there) */
      pager_page_own(p, pg, 0);
      memset(pg->v.data, 0, p->page_size);
      if (rc == SHALE_OK) rc = rc2;
    }
  }
  app_stale(p, clean_only ? 0xffffffffu : 1);
  return rc;
}

int pager_cache_reload_range(Pager *p, uint32_t lo, uint32_t hi) {
  int rc = SHALE_OK;
  for (PgPage *pg = p->all_head, *next; pg; pg = next) { /* invariant 5 */
    next = pg->anext;
    if (pg->pgno < lo || pg->pgno > hi) continue;
    int rc2 = pager_cache_forget(p, pg);
    if (rc2 != SHALE_OK && rc == SHALE_OK) rc = rc2;
  }
  app_stale(p, 0xffffffffu);
  return rc;
}

void pager_cache_drop_above(Pager *p, uint32_t n) {
  for (PgPage *pg = p->all_head, *next; pg; pg = next) { /* invariant 5 */
    next = pg->anext;
    if (pg->pgno <= n) continue;
    if (pg->nref == 0) {
      pager_cache_remove(p, pg);
    } else {
      pager_cache_make_clean(p, pg);
      pager_page_own(p, pg, 0);
      memset(pg->v.data, 0, p->page_size);
      memset(pg->v.extra, 0, (size_t)p->extra_size);
    }
  }
  if (p->appc && n < 0xfffffffeu) app_stale(p, n + 1);
}
