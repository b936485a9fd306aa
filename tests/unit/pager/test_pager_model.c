/*
 * test_pager_model.c -- randomized operations on a pager checked against a
 * simple model (a tag per page, a stack of savepoint copies): writes,
 * sequential growth, truncation, savepoints, commit, rollback, reopen, with
 * a tiny cache (spills), pinned pages, every journal mode and sync level.
 * pager_check() after every operation.
 */
#include "pager_test.h"

#define MAXP 160
#define MAXSP 6
#define MAXHELD 4

typedef struct Model {
  uint32_t tag[MAXP + 1];
  uint32_t size;
} Model;

static Model committed, cur, sps[MAXSP];
static int nsp;
static PgPage *held[MAXHELD];

static int content_ok(PgPage *pg, const Model *m) {
  uint32_t g = pager_pgno(pg);
  const uint8_t *d = pager_data(pg);
  if (g > m->size) {
    for (int i = 0; i < 4096; i++)
      if (d[i]) return 0;
    return 1;
  }
  return page_ok(d, 4096, g, m->tag[g]);
}

static void verify_all(Pager *p, const Model *m, const char *what, int op) {
  CHECK_EQ(pager_db_size(p), m->size);
  for (uint32_t g = 1; g <= m->size; g++) {
    PgPage *pg;
    int rc = pager_get(p, g, 0, &pg);
    CHECK_OK(rc);
    if (rc) return;
    if (!content_ok(pg, m)) {
      fprintf(stderr, "  op %d (%s): page %u differs (tag %u)\n", op, what, g, m->tag[g]);
      CHECK(0);
      pager_unref(pg);
      return;
    }
    pager_unref(pg);
  }
  for (int i = 0; i < MAXHELD; i++)
    if (held[i] && !content_ok(held[i], m)) {
      fprintf(stderr, "  op %d (%s): held page %u differs\n", op, what, pager_pgno(held[i]));
      CHECK(0);
    }
}

static void verify_all_noheld(Pager *p, const Model *m, int op) {
  PgPage *save[MAXHELD];
  memcpy(save, held, sizeof held);
  memset(held, 0, sizeof held);
  verify_all(p, m, "crash copy", op);
  memcpy(held, save, sizeof held);
}

static void release_held(void) {
  for (int i = 0; i < MAXHELD; i++)
    if (held[i]) {
      pager_unref(held[i]);
      held[i] = NULL;
    }
}

static int trace;

static void run_model(uint64_t seed, int nops) {
  trace = getenv("PAGER_MODEL_TRACE") != NULL;
  char db[512], cp[512];
  snprintf(db, sizeof db, "%s", test_path("model.db"));
  snprintf(cp, sizeof cp, "%s", test_path("modelcrash.db"));
  unlink(db);
  unlink(jpath_of(db));
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  int modes[] = {PAGER_JOURNAL_DELETE, PAGER_JOURNAL_PERSIST, PAGER_JOURNAL_TRUNCATE,
                 PAGER_JOURNAL_MEMORY};
  pager_set_journal_mode(p, modes[test_rand(&seed) % 4]);
  pager_set_synchronous(p, (int)(test_rand(&seed) % 4));
  pager_set_cache_size(p, 3 + (int)(test_rand(&seed) % 20));
  memset(&committed, 0, sizeof committed);
  cur = committed;
  nsp = 0;
  uint32_t next_tag = 1, counter = 0;
  int wrote = 0;
  CHECK_OK(pager_begin_read(p));
  for (int op = 0; op < nops; op++) {
    int r = (int)(test_rand(&seed) % 100);
    int inw = pager_txn_state(p) == PAGER_TXN_WRITE;
    if (trace) fprintf(stderr, "op %d r=%d size=%u nsp=%d\n", op, r, cur.size, nsp);
    if (!inw && r < 70) {
      CHECK_OK(pager_begin_write(p, test_rand(&seed) % 4 == 0));
      cur = committed;
      nsp = 0;
      continue;
    }
    if (!inw) {
      if (r < 80) {
        release_held();
        pager_end_read(p);
        CHECK_OK(pager_close(p));
        CHECK_OK(open_pager(db, &p));
        pager_set_journal_mode(p, modes[test_rand(&seed) % 4]);
        pager_set_synchronous(p, (int)(test_rand(&seed) % 4));
        pager_set_cache_size(p, 3 + (int)(test_rand(&seed) % 20));
        CHECK_OK(pager_begin_read(p));
        verify_all(p, &committed, "reopen", op);
      } else {
        verify_all(p, &committed, "read", op);
      }
      continue;
    }
    if (r < 55) { /* write a page (sequential growth only) */
      uint32_t g = 1 + (uint32_t)(test_rand(&seed) % (cur.size + 1));
      if (g > MAXP) g = MAXP;
      PgPage *pg;
      CHECK_OK(pager_get(p, g, 0, &pg));
      CHECK(content_ok(pg, &cur));
      CHECK_OK(pager_write(pg));
      uint32_t t = next_tag++;
      if (trace) fprintf(stderr, "  write %u tag %u\n", g, t);
      fill_page(pager_data(pg), 4096, g, t);
      cur.tag[g] = t;
      wrote = 1;
      if (g > cur.size) cur.size = g;
      int slot = (int)(test_rand(&seed) % (MAXHELD * 3));
      if (slot < MAXHELD && !held[slot])
        held[slot] = pg;
      else
        pager_unref(pg);
    } else if (r < 60) { /* drop a held page */
      int slot = (int)(test_rand(&seed) % MAXHELD);
      if (held[slot]) {
        pager_unref(held[slot]);
        held[slot] = NULL;
      }
    } else if (r < 68) { /* open savepoints */
      int n = nsp + 1 + (int)(test_rand(&seed) % 2);
      if (n > MAXSP) n = MAXSP;
      CHECK_OK(pager_savepoint_open(p, n));
      while (nsp < n) sps[nsp++] = cur;
    } else if (r < 75 && nsp > 0) { /* rollback to a savepoint */
      int i = (int)(test_rand(&seed) % (uint32_t)nsp);
      if (trace) fprintf(stderr, "  sp rollback %d\n", i);
      CHECK_OK(pager_savepoint_rollback(p, i));
      cur = sps[i];
      nsp = i + 1;
      verify_all(p, &cur, "savepoint rollback", op);
    } else if (r < 79 && nsp > 0) { /* release */
      int i = (int)(test_rand(&seed) % (uint32_t)nsp);
      CHECK_OK(pager_savepoint_release(p, i));
      nsp = i;
    } else if (r < 83 && cur.size > 2) { /* truncate */
      uint32_t n = 1 + (uint32_t)(test_rand(&seed) % (cur.size - 1));
      if (trace) fprintf(stderr, "  truncate %u\n", n);
      CHECK_OK(pager_truncate(p, n));
      cur.size = n;
      wrote = 1;
    } else if (r < 86 && pager_journal_mode(p) != PAGER_JOURNAL_MEMORY) {
      /* Crash image: a copy of db + journal taken now recovers to the last
       * committed state. */
      unlink(jpath_of(cp));
      CHECK_OK(copy_file(db, cp));
      if (file_exists(jpath_of(db))) CHECK_OK(copy_file(jpath_of(db), jpath_of(cp)));
      Pager *q;
      CHECK_OK(open_pager(cp, &q));
      CHECK_OK(pager_begin_read(q));
      verify_all_noheld(q, &committed, op);
      pager_end_read(q);
      CHECK_OK(pager_close(q));
    } else if (r < 93) {
      CHECK_OK(pager_commit(p));
      committed = cur;
      nsp = 0;
      verify_all(p, &committed, "commit", op);
      if (wrote && committed.size > 0) counter++; /* an empty file has no page 1 */
      wrote = 0;
      if (committed.size > 0) {
        PgPage *pg;
        CHECK_OK(pager_get(p, 1, 0, &pg));
        CHECK_EQ(util_get4(pager_data(pg) + 24), counter);
        CHECK_EQ(util_get4(pager_data(pg) + 92), counter);
        CHECK_EQ(util_get4(pager_data(pg) + 28), committed.size);
        pager_unref(pg);
      }
    } else {
      CHECK_OK(pager_rollback(p));
      wrote = 0;
      cur = committed;
      nsp = 0;
      verify_all(p, &committed, "rollback", op);
    }
    CHECK_EQ(pager_savepoint_count(p), nsp);
    if (pager_check(p) != SHALE_OK) {
      fprintf(stderr, "  op %d: pager_check failed\n", op);
      CHECK(0);
      break;
    }
  }
  if (pager_txn_state(p) == PAGER_TXN_WRITE) {
    CHECK_OK(pager_commit(p));
    committed = cur;
  }
  release_held();
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  verify_all(p, &committed, "final", nops);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(model_random_ops) {
  uint64_t seed = test_seed();
  int rounds = test_long() ? 60 : 12;
  const char *only = getenv("PAGER_MODEL_ROUND");
  for (int i = 0; i < rounds; i++) {
    if (only && atoi(only) != i) continue;
    uint64_t s = seed + (uint64_t)i * 7919u;
    run_model(s, 600);
  }
}

/* ---- the same under an application's page cache (pager.h PagerCacheMethods) ----
 * A capricious one: createFlag 1 is refused at random and whenever it holds
 * its cache size, unpinned pages are kept or (at random) poisoned and freed
 * at once, kept ones are freed when it runs over its size, and its memory
 * is poisoned when made. A pager that used an unpinned page, believed a
 * stale one or failed to spill gives other content than the model. */

typedef struct CapPage {
  PagerAppPage pg;
  struct CapPage *next;
  unsigned key;
  int pinned;
} CapPage;

typedef struct CapCache {
  int sz_page, sz_extra, max, n;
  CapPage *pages;
} CapCache;

static uint64_t cap_seed;
static int cap_live, cap_bad;

static void *cap_create(int page_size, int extra_size, int purgeable) {
  CapCache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->sz_page = page_size;
  c->sz_extra = extra_size;
  c->max = purgeable ? 10 : 1 << 30;
  cap_live++;
  return c;
}
static void cap_cachesize(void *pc, int n) {
  CapCache *c = pc;
  if (c->max != 1 << 30) c->max = n;
}
static int cap_pagecount(void *pc) { return ((CapCache *)pc)->n; }
static void cap_free(CapCache *c, CapPage **pp) {
  CapPage *p = *pp;
  *pp = p->next;
  memset(p->pg.buf, 0xdb, (size_t)c->sz_page);
  memset(p->pg.extra, 0xdb, (size_t)c->sz_extra);
  free(p);
  c->n--;
}
static PagerAppPage *cap_fetch(void *pc, unsigned key, int create) {
  CapCache *c = pc;
  for (CapPage *p = c->pages; p; p = p->next) {
    if (p->key != key) continue;
    if (p->pinned) cap_bad++; /* the pager fetches only what it does not hold */
    p->pinned = 1;
    return &p->pg;
  }
  if (!create) return NULL;
  if (create == 1 && (c->n >= c->max || test_rand(&cap_seed) % 8 == 0)) return NULL;
  if (c->n >= c->max) { /* recycle an unpinned page if there is one */
    for (CapPage **pp = &c->pages; *pp; pp = &(*pp)->next)
      if (!(*pp)->pinned) {
        cap_free(c, pp);
        break;
      }
  }
  CapPage *p = malloc(sizeof *p + (size_t)c->sz_page + (size_t)c->sz_extra);
  if (!p) return NULL;
  p->pg.buf = p + 1;
  p->pg.extra = (uint8_t *)(p + 1) + c->sz_page;
  memset(p->pg.buf, 0xdb, (size_t)c->sz_page + (size_t)c->sz_extra);
  p->key = key;
  p->pinned = 1;
  p->next = c->pages;
  c->pages = p;
  c->n++;
  return &p->pg;
}
static void cap_unpin(void *pc, PagerAppPage *pg, int discard) {
  CapCache *c = pc;
  for (CapPage **pp = &c->pages; *pp; pp = &(*pp)->next) {
    if (&(*pp)->pg != pg) continue;
    if (!(*pp)->pinned) cap_bad++;
    (*pp)->pinned = 0;
    if (discard || (c->max != 1 << 30 && (c->n > c->max || test_rand(&cap_seed) % 3 == 0)))
      cap_free(c, pp);
    return;
  }
  cap_bad++;
}
static void cap_truncate(void *pc, unsigned limit) {
  CapCache *c = pc;
  for (CapPage **pp = &c->pages; *pp;)
    if ((*pp)->key >= limit)
      cap_free(c, pp);
    else
      pp = &(*pp)->next;
}
static void cap_destroy(void *pc) {
  CapCache *c = pc;
  for (CapPage *p = c->pages; p; p = p->next)
    if (p->pinned) cap_bad++; /* everything unpinned or truncated first */
  cap_truncate(pc, 0);
  free(c);
  cap_live--;
}
static void cap_shrink(void *pc) { (void)pc; }

TEST(model_random_ops_app_cache) {
  static const PagerCacheMethods m = {cap_create, cap_cachesize, cap_pagecount, cap_fetch,
                                      cap_unpin,  cap_truncate,  cap_destroy,   cap_shrink};
  uint64_t seed = test_seed();
  cap_seed = seed ^ 0x9e3779b97f4a7c15ull;
  cap_bad = 0;
  pager_config_cache(&m);
  int rounds = test_long() ? 30 : 6;
  for (int i = 0; i < rounds; i++) run_model(seed + 31u + (uint64_t)i * 7919u, 600);
  pager_config_cache(NULL);
  CHECK_EQ(cap_bad, 0);
  CHECK_EQ(cap_live, 0);
}
