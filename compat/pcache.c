/*
 * pcache.c -- SQLITE_CONFIG_PCACHE2 / GETPCACHE2: a page cache of the
 * application's, and the default one GETPCACHE2 reports.
 *
 * Shale's pager has a page cache of its own, built into it (src/pager/
 * pager_cache.c). An application's sqlite3_pcache_methods2 replace it for
 * the connections opened afterwards: the pager then asks the application
 * for every page's memory and leaves it to decide which unpinned pages it
 * keeps (pager_config_cache; pager_cache.c invariant 9). The methods are
 * called through the small functions below, which turn the pager's
 * untyped handles into SQLite's types.
 *
 * GETPCACHE2 before any PCACHE2 reports the default cache of this file --
 * a complete one (hash of keys, pinned and unpinned pages, least recently
 * unpinned recycled first, the cache size honoured for purgeable caches) --
 * so that an application can wrap it and install the wrapper, as it can
 * SQLite's. Installing the default methods themselves (or a copy) puts the
 * pager's built-in cache back, which is faster than going through them.
 *
 * Owns: the installed methods, the default cache's memory.
 *
 * Invariants:
 *  1. Set only before sqlite3_initialize (sqlite3_config's rule); xInit(pArg)
 *     runs at the initialize that follows, xShutdown(pArg) at shutdown.
 *  2. Default cache: a page is in the hash table of its cache exactly once
 *     under its key; it is on the unpinned list iff not pinned. n counts the
 *     pages; a purgeable cache creates past its size only for createFlag 2
 *     and only when nothing unpinned can be recycled, and xUnpin frees
 *     while it is over its size.
 *  3. pExtra of a page the default cache creates is zeroed; its content is
 *     kept untouched for as long as the page is in the cache.
 */
#include <stdint.h>
#include <string.h>

#include "../src/pager/pager.h"
#include "compat_int.h"

/* ---------------------------------------------------------------- default cache */

typedef struct DfPage DfPage;
struct DfPage {
  sqlite3_pcache_page pg; /* first: what xFetch hands out */
  unsigned key;
  int pinned;
  DfPage *hnext;         /* hash chain */
  DfPage *uprev, *unext; /* unpinned list, least recently unpinned first */
};

typedef struct DfCache {
  int sz_page, sz_extra, purgeable;
  unsigned max; /* cache size in pages */
  unsigned n;   /* pages held */
  unsigned nhash;
  DfPage **hash;
  DfPage *uhead, *utail;
} DfCache;

/* Page memory: the DfPage, rounded up to 16 bytes, then content, then extra. */
#define DF_HDR ((sizeof(DfPage) + 15) & ~(size_t)15)

static sqlite3_pcache *df_create(int sz_page, int sz_extra, int purgeable) {
  if (sz_page <= 0 || sz_extra < 0) return NULL;
  DfCache *c = shale_malloc(sizeof *c);
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  c->sz_page = sz_page;
  c->sz_extra = (sz_extra + 7) & ~7;
  c->purgeable = purgeable != 0;
  c->max = 100;
  c->nhash = 64;
  c->hash = shale_malloc(c->nhash * sizeof(DfPage *));
  if (!c->hash) {
    shale_free(c);
    return NULL;
  }
  memset(c->hash, 0, c->nhash * sizeof(DfPage *));
  return (sqlite3_pcache *)c;
}

static DfPage **df_slot(DfCache *c, unsigned key) { return &c->hash[key & (c->nhash - 1)]; }

static void df_unlinked(DfCache *c, DfPage *p) { /* off the unpinned list */
  if (p->uprev)
    p->uprev->unext = p->unext;
  else
    c->uhead = p->unext;
  if (p->unext)
    p->unext->uprev = p->uprev;
  else
    c->utail = p->uprev;
  p->uprev = p->unext = NULL;
}

static void df_hash_del(DfCache *c, DfPage *p) {
  DfPage **pp = df_slot(c, p->key);
  while (*pp != p) pp = &(*pp)->hnext;
  *pp = p->hnext;
  p->hnext = NULL;
}

static void df_hash_add(DfCache *c, DfPage *p) {
  DfPage **pp = df_slot(c, p->key);
  p->hnext = *pp;
  *pp = p;
}

/* Out of the cache and freed. */
static void df_drop(DfCache *c, DfPage *p) {
  if (!p->pinned) df_unlinked(c, p);
  df_hash_del(c, p);
  c->n--;
  shale_free(p);
}

static void df_grow(DfCache *c) {
  unsigned n = c->nhash * 2;
  DfPage **h = shale_malloc(n * sizeof(DfPage *));
  if (!h) return; /* longer chains */
  memset(h, 0, n * sizeof(DfPage *));
  for (unsigned i = 0; i < c->nhash; i++) {
    for (DfPage *p = c->hash[i], *next; p; p = next) {
      next = p->hnext;
      p->hnext = h[p->key & (n - 1)];
      h[p->key & (n - 1)] = p;
    }
  }
  shale_free(c->hash);
  c->hash = h;
  c->nhash = n;
}

static void df_trim(DfCache *c, unsigned keep) {
  while (c->n > keep && c->uhead) df_drop(c, c->uhead);
}

static void df_cachesize(sqlite3_pcache *pc, int n) {
  DfCache *c = (DfCache *)pc;
  c->max = n > 0 ? (unsigned)n : 1;
  if (c->purgeable) df_trim(c, c->max);
}

static int df_pagecount(sqlite3_pcache *pc) { return (int)((DfCache *)pc)->n; }

static DfPage *df_find(DfCache *c, unsigned key) {
  for (DfPage *p = *df_slot(c, key); p; p = p->hnext)
    if (p->key == key) return p;
  return NULL;
}

static sqlite3_pcache_page *df_fetch(sqlite3_pcache *pc, unsigned key, int create) {
  DfCache *c = (DfCache *)pc;
  DfPage *p = df_find(c, key);
  if (p) {
    if (!p->pinned) {
      df_unlinked(c, p);
      p->pinned = 1;
    }
    return &p->pg;
  }
  if (create == 0) return NULL;
  if (c->purgeable && c->n >= c->max && c->uhead) {
    p = c->uhead; /* recycled: same sizes */
    df_unlinked(c, p);
    df_hash_del(c, p);
  } else {
    if (c->purgeable && c->n >= c->max && create == 1) return NULL;
    p = shale_malloc(DF_HDR + (size_t)c->sz_page + (size_t)c->sz_extra);
    if (!p) return NULL;
    c->n++;
    if (c->n > c->nhash) df_grow(c);
    p->pg.pBuf = (uint8_t *)p + DF_HDR;
    p->pg.pExtra = (uint8_t *)p->pg.pBuf + c->sz_page;
  }
  memset(p->pg.pExtra, 0, (size_t)c->sz_extra);
  p->key = key;
  p->pinned = 1;
  p->uprev = p->unext = NULL;
  df_hash_add(c, p);
  return &p->pg;
}

static void df_unpin(sqlite3_pcache *pc, sqlite3_pcache_page *pg, int discard) {
  DfCache *c = (DfCache *)pc;
  DfPage *p = (DfPage *)pg;
  if (!p->pinned) return;
  if (discard || (c->purgeable && c->n > c->max)) {
    df_drop(c, p);
    return;
  }
  p->pinned = 0;
  p->unext = NULL;
  p->uprev = c->utail;
  if (c->utail)
    c->utail->unext = p;
  else
    c->uhead = p;
  c->utail = p;
}

static void df_rekey(sqlite3_pcache *pc, sqlite3_pcache_page *pg, unsigned old_key,
                     unsigned new_key) {
  DfCache *c = (DfCache *)pc;
  DfPage *p = (DfPage *)pg;
  (void)old_key;
  if (p->key == new_key) return;
  DfPage *q = df_find(c, new_key); /* never pinned (the interface's promise) */
  if (q) df_drop(c, q);
  df_hash_del(c, p);
  p->key = new_key;
  df_hash_add(c, p);
}

static void df_truncate(sqlite3_pcache *pc, unsigned limit) {
  DfCache *c = (DfCache *)pc;
  for (unsigned i = 0; i < c->nhash; i++) {
    for (DfPage *p = c->hash[i], *next; p; p = next) {
      next = p->hnext;
      if (p->key >= limit) df_drop(c, p);
    }
  }
}

static void df_destroy(sqlite3_pcache *pc) {
  DfCache *c = (DfCache *)pc;
  df_truncate(pc, 0);
  shale_free(c->hash);
  shale_free(c);
}

static void df_shrink(sqlite3_pcache *pc) { df_trim((DfCache *)pc, 0); }

static int df_init(void *arg) {
  (void)arg;
  return SQLITE_OK;
}
static void df_shutdown(void *arg) { (void)arg; }

static const sqlite3_pcache_methods2 df_methods = {
    1,        NULL,     df_init,  df_shutdown, df_create,  df_cachesize, df_pagecount,
    df_fetch, df_unpin, df_rekey, df_truncate, df_destroy, df_shrink};

/* ---------------------------------------------------------------- installed methods */

static sqlite3_pcache_methods2 app; /* valid when app_set */
static int app_set, app_inited;

static void *pc_create(int page_size, int extra_size, int purgeable) {
  return app.xCreate(page_size, extra_size, purgeable);
}
static void pc_cachesize(void *c, int n) { app.xCachesize(c, n); }
static int pc_pagecount(void *c) { return app.xPagecount(c); }
/* sqlite3_pcache_page and PagerAppPage are the same two pointers */
static PagerAppPage *pc_fetch(void *c, unsigned key, int create) {
  return (PagerAppPage *)(void *)app.xFetch(c, key, create);
}
static void pc_unpin(void *c, PagerAppPage *pg, int discard) {
  app.xUnpin(c, (sqlite3_pcache_page *)(void *)pg, discard);
}
static void pc_truncate(void *c, unsigned limit) { app.xTruncate(c, limit); }
static void pc_destroy(void *c) { app.xDestroy(c); }
static void pc_shrink(void *c) {
  if (app.xShrink) app.xShrink(c);
}

static const PagerCacheMethods pc_methods = {pc_create, pc_cachesize, pc_pagecount, pc_fetch,
                                             pc_unpin,  pc_truncate,  pc_destroy,   pc_shrink};

int compat_config_pcache(const sqlite3_pcache_methods2 *m) {
  if (!m) return SQLITE_MISUSE;
  /* the default, or (SQLite's rule) a table without xInit */
  if (!m->xInit || (m->xCreate == df_methods.xCreate && m->xFetch == df_methods.xFetch &&
                    m->xUnpin == df_methods.xUnpin)) {
    app_set = 0; /* the pager's own cache does the same as the default, faster */
    pager_config_cache(NULL);
    return SQLITE_OK;
  }
  if (!m->xCreate || !m->xCachesize || !m->xPagecount || !m->xFetch || !m->xUnpin ||
      !m->xTruncate || !m->xDestroy)
    return SQLITE_MISUSE;
  app = *m;
  app_set = 1;
  app_inited = 0;
  pager_config_cache(&pc_methods);
  return SQLITE_OK;
}

void compat_config_getpcache(sqlite3_pcache_methods2 *out) {
  if (out) *out = app_set ? app : df_methods;
}

int compat_pcache_init(void) {
  if (!app_set || app_inited) return SQLITE_OK;
  int rc = app.xInit(app.pArg);
  if (rc == SQLITE_OK) app_inited = 1;
  return rc;
}

void compat_pcache_shutdown(void) {
  if (app_set && app_inited && app.xShutdown) app.xShutdown(app.pArg);
  app_inited = 0;
}
