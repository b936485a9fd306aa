/*
 * test_pager_locks.c -- two pagers on one file: lock escalation, readers
 * blocking commit, the busy handler, cache invalidation when another pager
 * commits, a live writer's journal left alone by readers, and a child
 * process killed in the middle of a transaction.
 */
#include <signal.h>
#include <sys/wait.h>

#include "pager_test.h"

typedef struct BusyCtx {
  int calls;
  int release_at; /* end `other`'s read txn on this call */
  Pager *other;
} BusyCtx;

static int busy_cb(void *arg, int count) {
  BusyCtx *c = arg;
  c->calls++;
  if (count == c->release_at && c->other) {
    pager_end_read(c->other);
    c->other = NULL;
  }
  return count < 5;
}

TEST(locks_reader_blocks_commit) {
  const char *db = test_path("lk.db");
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 5, 1));
  pager_end_read(a);

  CHECK_OK(pager_begin_read(a));
  CHECK_EQ(count_bad(a, 5, 1), 0);
  CHECK_OK(pager_begin_write(b, 0));
  /* A second writer can't have RESERVED. */
  CHECK_RC(pager_begin_write(a, 0), SHALE_BUSY);
  CHECK_EQ(pager_txn_state(a), PAGER_TXN_READ);
  for (uint32_t g = 1; g <= 5; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  /* No busy handler: the reader's SHARED blocks EXCLUSIVE. */
  CHECK_RC(pager_commit(b), SHALE_BUSY);
  CHECK_EQ(pager_txn_state(b), PAGER_TXN_WRITE);
  /* The reader still sees the old data and doesn't touch the live journal. */
  CHECK_EQ(count_bad(a, 5, 1), 0);
  /* With a busy handler that ends a's read on its 2nd call, commit goes. */
  BusyCtx ctx = {0, 2, a};
  pager_set_busy_handler(b, busy_cb, &ctx);
  CHECK_OK(pager_commit(b));
  CHECK_EQ(ctx.calls, 3);
  CHECK(!file_exists(jpath_of(db)));
  /* a's cache was built on the old content: invalidated at begin_read. */
  CHECK_EQ(count_bad(a, 5, 2), 0);
  pager_end_read(b);
  CHECK_OK(pager_close(a));
  CHECK_OK(pager_close(b));
}

TEST(locks_pending_keeps_new_readers_out) {
  const char *db = test_path("pend.db");
  Pager *a, *b, *c;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(open_pager(db, &c));
  CHECK_OK(write_all(a, 3, 1));
  /* a stays reading */
  CHECK_OK(pager_begin_write(b, 0));
  PgPage *pg;
  CHECK_OK(pager_get(b, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  pager_unref(pg);
  CHECK_RC(pager_commit(b), SHALE_BUSY); /* leaves PENDING */
  CHECK_RC(pager_begin_read(c), SHALE_BUSY);
  pager_end_read(a);
  CHECK_OK(pager_commit(b));
  CHECK_OK(pager_begin_read(c));
  pager_end_read(c);
  pager_end_read(b);
  pager_close(a);
  pager_close(b);
  pager_close(c);
}

TEST(locks_cache_invalidation) {
  const char *db = test_path("inv.db");
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 20, 1));
  pager_end_read(a);
  /* Fill a's cache, keep one page referenced across transactions. */
  CHECK_EQ(count_bad(a, 20, 1), 0);
  CHECK_OK(pager_begin_read(a));
  PgPage *held;
  CHECK_OK(pager_get(a, 7, 0, &held));
  ((uint8_t *)pager_extra(held))[0] = 1;
  pager_end_read(a);
  PagerStats st0, st1;
  pager_stats(a, &st0);
  /* Unchanged file: the cache survives (hits, no misses). */
  CHECK_EQ(count_bad(a, 20, 1), 0);
  pager_stats(a, &st1);
  CHECK_EQ(st1.misses, st0.misses);
  CHECK_OK(write_all(b, 20, 3));
  pager_end_read(b);
  CHECK_OK(pager_begin_read(a));
  /* The referenced page was reloaded in place, extra zeroed. */
  CHECK(page_ok(pager_data(held), 4096, 7, 3));
  CHECK_EQ(((uint8_t *)pager_extra(held))[0], 0);
  CHECK_EQ(count_bad(a, 20, 3), 0);
  pager_stats(a, &st0);
  CHECK(st0.misses >= st1.misses + 19);
  pager_unref(held);
  pager_end_read(a);
  /* Growth by another pager is seen. */
  CHECK_OK(write_all(b, 25, 4));
  pager_end_read(b);
  CHECK_OK(pager_begin_read(a));
  CHECK_EQ(pager_db_size(a), 25);
  CHECK_EQ(count_bad(a, 25, 4), 0);
  pager_end_read(a);
  CHECK_OK(pager_check(a));
  pager_close(a);
  pager_close(b);
}

TEST(locks_exclusive_begin_and_readonly) {
  const char *db = test_path("ex.db");
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 2, 1));
  pager_end_read(a);
  CHECK_OK(pager_begin_write(a, 1));
  CHECK_OK(pager_open(NULL, db, SHALE_OPEN_READONLY, 0, &b));
  CHECK(pager_readonly(b));
  CHECK_RC(pager_begin_read(b), SHALE_BUSY);
  CHECK_OK(pager_commit(a));
  pager_end_read(a);
  CHECK_OK(pager_begin_read(b));
  CHECK_EQ(count_bad(b, 2, 1), 0);
  CHECK_RC(pager_begin_write(b, 0), SHALE_READONLY);
  PgPage *pg;
  CHECK_OK(pager_get(b, 1, 0, &pg));
  CHECK_RC(pager_write(pg), SHALE_READONLY);
  pager_unref(pg);
  pager_end_read(b);
  pager_close(a);
  pager_close(b);
}

/* A child process writes a transaction that spills and is SIGKILLed before
 * it commits; the parent then finds the hot journal and rolls it back. */
TEST(locks_child_killed_mid_transaction) {
  const char *db = test_path("kill.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 40, 1));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  int fds[2];
  CHECK_EQ(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    Pager *c;
    close(fds[0]);
    if (open_pager(db, &c)) _exit(1);
    pager_set_cache_size(c, 8);
    if (pager_begin_write(c, 0)) _exit(1);
    for (uint32_t g = 1; g <= 60; g++) {
      PgPage *pg;
      if (pager_get(c, g, 0, &pg) || pager_write(pg)) _exit(1);
      fill_page(pager_data(pg), 4096, g, 9);
      pager_unref(pg);
    }
    if (write(fds[1], "x", 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  char ch;
  CHECK_EQ(read(fds[0], &ch, 1), 1);
  close(fds[0]);
  /* While the writer lives (EXCLUSIVE after its spills) readers are kept out. */
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_BUSY);
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  CHECK(file_exists(jpath_of(db)));
  CHECK(file_size(db) > 40 * 4096);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 40);
  CHECK_EQ(count_bad(p, 40, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK(!file_exists(jpath_of(db)));
  CHECK_EQ(file_size(db), 40 * 4096);
}

typedef struct ShareCtx {
  Pager *reader, *writer;
  int calls;
} ShareCtx;

/* The busy handler runs while SHARED is refused (a writer holds PENDING);
 * this one lets the writer finish on its first call. */
static int share_busy(void *arg, int count) {
  ShareCtx *c = arg;
  c->calls++;
  if (count == 0) {
    pager_end_read(c->reader);
    if (pager_commit(c->writer) != SHALE_OK) return 0;
  }
  return count < 3;
}

TEST(locks_busy_handler_on_shared) {
  const char *db = test_path("bsh.db");
  Pager *a, *b, *c;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(open_pager(db, &c));
  CHECK_OK(write_all(a, 3, 1)); /* a keeps reading */
  CHECK_OK(pager_begin_write(b, 0));
  for (uint32_t g = 1; g <= 3; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 5);
    pager_unref(pg);
  }
  CHECK_RC(pager_commit(b), SHALE_BUSY); /* b now holds PENDING */
  ShareCtx ctx = {a, b, 0};
  pager_set_busy_handler(c, share_busy, &ctx);
  CHECK_OK(pager_begin_read(c));
  CHECK_EQ(ctx.calls, 1);
  CHECK_EQ(count_bad(c, 3, 5), 0);
  pager_end_read(c);
  pager_end_read(b);
  pager_close(a);
  pager_close(b);
  pager_close(c);
}

TEST(locks_open_errors) {
  Pager *p = NULL;
  CHECK_RC(
      pager_open(NULL, test_path("nodir/x.db"), SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 0, &p),
      SHALE_CANTOPEN);
  CHECK(p == NULL);
  CHECK_RC(pager_open(NULL, test_path("missing.db"), SHALE_OPEN_READWRITE, 0, &p), SHALE_CANTOPEN);
  /* A read-only pager meeting a hot journal can't roll it back. */
  const char *db = test_path("rohot.db");
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 20, 1));
  pager_set_cache_size(p, 4);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = 1; g <= 20; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  const char *copy = test_path("rohotcopy.db");
  CHECK_OK(copy_file(db, copy));
  CHECK_OK(copy_file(jpath_of(db), jpath_of(copy)));
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  pager_close(p);
  CHECK_OK(pager_open(NULL, copy, SHALE_OPEN_READONLY, 0, &p));
  CHECK_RC(pager_begin_read(p), SHALE_READONLY_ROLLBACK);
  pager_close(p);
  CHECK(file_exists(jpath_of(copy)));
  CHECK_OK(open_pager(copy, &p));
  CHECK_EQ(count_bad(p, 20, 1), 0);
  pager_close(p);
}

/* A spill needs EXCLUSIVE; while a reader holds SHARED the cache grows past
 * its bound instead, and the commit still works once the reader is gone. */
TEST(locks_spill_blocked_by_reader) {
  const char *db = test_path("spillbusy.db");
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(b, 20, 1));
  pager_end_read(b);
  CHECK_OK(pager_begin_read(a));
  pager_set_cache_size(b, 10);
  BusyCtx ctx = {0, -1, NULL}; /* never releases: gives up after 6 calls */
  pager_set_busy_handler(b, busy_cb, &ctx);
  CHECK_OK(pager_begin_write(b, 0));
  for (uint32_t g = 1; g <= 60; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  PagerStats st;
  pager_stats(b, &st);
  CHECK_EQ(st.spills, 0);
  CHECK(st.cached >= 60);
  CHECK_EQ(ctx.calls, 6); /* one busy wait, not one per page */
  CHECK_OK(pager_check(b));
  CHECK_EQ(count_bad(a, 20, 1), 0); /* the reader still sees the old pages */
  pager_end_read(a);
  /* Now spills can happen. */
  for (uint32_t g = 61; g <= 80; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  pager_stats(b, &st);
  CHECK(st.spills > 0);
  CHECK(st.cached <= 10);
  CHECK_OK(pager_commit(b));
  pager_end_read(b);
  CHECK_EQ(count_bad(a, 80, 2), 0);
  pager_close(a);
  pager_close(b);
}

static int sleepy_busy(void *arg, int count) {
  (void)arg;
  usleep(200 + (count % 8) * 100);
  return count < 20000;
}

/* Several processes increment counters in shared pages, each in its own
 * transactions (with readers in between). Lost updates would show up as a
 * short total; stale caches as a wrong copy. */
TEST(locks_multiprocess_counters) {
  const char *db = test_path("mp.db");
  enum { NPROC = 3, NTXN = 150 };
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 4, 1));
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  for (uint32_t g = 2; g <= 4; g++) {
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    memset(pager_data(pg), 0, 4096);
    pager_unref(pg);
  }
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  fflush(NULL);
  pid_t kids[NPROC];
  for (int k = 0; k < NPROC; k++) {
    kids[k] = fork();
    if (kids[k] == 0) {
      Pager *c;
      if (open_pager(db, &c)) _exit(1);
      pager_set_busy_handler(c, sleepy_busy, NULL);
      pager_set_cache_size(c, 2 + k);
      for (int t = 0; t < NTXN;) {
        int rc = pager_begin_write(c, 0);
        if (rc == SHALE_BUSY) {
          usleep(500);
          continue;
        }
        if (rc) _exit(2);
        PgPage *a, *b;
        if (pager_get(c, 2, 0, &a) || pager_get(c, 3 + (t & 1), 0, &b)) _exit(3);
        if (pager_write(a) || pager_write(b)) _exit(4);
        uint32_t v = util_get4(pager_data(a));
        util_put4(pager_data(a), v + 1); /* total */
        util_put4(pager_data(a) + 4 + 4 * k, util_get4(pager_data(a) + 4 + 4 * k) + 1);
        util_put4(pager_data(b), util_get4(pager_data(b)) + 1); /* per parity */
        pager_unref(a);
        pager_unref(b);
        rc = pager_commit(c);
        if (rc == SHALE_BUSY) {
          if (pager_rollback(c)) _exit(5);
          pager_end_read(c);
          continue;
        }
        if (rc) _exit(6);
        pager_end_read(c);
        t++;
        if (t % 7 == 0) { /* a read transaction in between */
          if (pager_begin_read(c) == SHALE_OK) {
            if (pager_get(c, 2, 0, &a) == SHALE_OK) pager_unref(a);
            pager_end_read(c);
          }
        }
      }
      pager_close(c);
      _exit(0);
    }
  }
  for (int k = 0; k < NPROC; k++) {
    int status;
    waitpid(kids[k], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_EQ(util_get4(pager_data(pg)), NPROC * NTXN);
  for (int k = 0; k < NPROC; k++) CHECK_EQ(util_get4(pager_data(pg) + 4 + 4 * k), NTXN);
  pager_unref(pg);
  uint32_t odd = 0, even = 0;
  CHECK_OK(pager_get(p, 3, 0, &pg));
  even = util_get4(pager_data(pg));
  pager_unref(pg);
  CHECK_OK(pager_get(p, 4, 0, &pg));
  odd = util_get4(pager_data(pg));
  pager_unref(pg);
  CHECK_EQ(even + odd, NPROC * NTXN);
  CHECK_OK(pager_get(p, 1, 0, &pg));
  CHECK_EQ(util_get4(pager_data(pg) + 24), 2 + NPROC * NTXN);
  pager_unref(pg);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}
