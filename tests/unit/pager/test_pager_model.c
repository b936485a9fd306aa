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
