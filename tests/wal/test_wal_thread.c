/*
 * test_wal_thread.c -- a connection handed between threads (opened on one,
 * used on others, serially), in WAL mode, with other connections of the
 * process writing in between: an open read transaction keeps its snapshot
 * across threads, a write transaction begun on one thread commits on
 * another, a statement stepped halfway on one thread finishes on another,
 * and the connection is closed on yet another thread.
 *
 * Invariants:
 *  1. At most one thread uses a given connection at a time (each step is a
 *     thread that is joined before the next starts).
 */
#include <pthread.h>

#include "../test.h"
#include "walt.h"

typedef struct Step {
  shale **db;
  shale_stmt **st;
  const char *path;
  int op;
  long long out;
  int rc;
} Step;

enum { OP_OPEN, OP_BEGIN, OP_READ, OP_WRITE, OP_COMMIT, OP_PREPARE, OP_STEP, OP_FINISH, OP_CLOSE };

static long long count_rows(shale *db, int *rc) {
  shale_stmt *st;
  long long v = -1;
  *rc = shale_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);
  if (*rc) return -1;
  if (shale_step(st) == SHALE_ROW) v = shale_column_int64(st, 0);
  *rc = shale_finalize(st);
  return v;
}

static void *step_main(void *arg) {
  Step *s = arg;
  switch (s->op) {
    case OP_OPEN:
      s->rc = shale_open(s->path, s->db);
      if (!s->rc) s->rc = shale_exec(*s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
      break;
    case OP_BEGIN:
      s->rc = shale_exec(*s->db, "BEGIN", NULL, NULL, NULL);
      break;
    case OP_READ:
      s->out = count_rows(*s->db, &s->rc);
      break;
    case OP_WRITE:
      s->rc = shale_exec(*s->db, "INSERT INTO t VALUES(randomblob(100))", NULL, NULL, NULL);
      break;
    case OP_COMMIT:
      s->rc = shale_exec(*s->db, "COMMIT", NULL, NULL, NULL);
      break;
    case OP_PREPARE:
      s->rc = shale_prepare_v2(*s->db, "SELECT x FROM t", -1, s->st, NULL);
      for (int i = 0; i < 5 && !s->rc; i++)
        if (shale_step(*s->st) == SHALE_ROW) s->out++;
      break;
    case OP_STEP: {
      int rc;
      while ((rc = shale_step(*s->st)) == SHALE_ROW) s->out++;
      s->rc = rc == SHALE_DONE ? SHALE_OK : rc;
      break;
    }
    case OP_FINISH:
      s->rc = shale_finalize(*s->st);
      break;
    case OP_CLOSE:
      s->rc = shale_close(*s->db);
      break;
  }
  return NULL;
}

/* Run one operation on a new thread and wait for it. */
static Step on_thread(shale **db, shale_stmt **st, const char *path, int op) {
  Step s = {db, st, path, op, 0, 0};
  pthread_t th;
  CHECK_OK(pthread_create(&th, NULL, step_main, &s));
  pthread_join(th, NULL);
  return s;
}

TEST(thread_handoff_read_snapshot_and_write) {
  const char *path = test_path("handoff.db");
  walt_unlink(path);
  shale *a = NULL, *w = NULL;
  shale_stmt *st = NULL;
  CHECK_OK(on_thread(&a, NULL, path, OP_OPEN).rc);
  CHECK_OK(shale_open(path, &w));
  CHECK_OK(shale_exec(w, "CREATE TABLE t(x)", NULL, NULL, NULL));
  for (int i = 0; i < 20; i++) CHECK_OK(on_thread(&w, NULL, path, OP_WRITE).rc);
  /* a read transaction opened on one thread, continued on others */
  CHECK_OK(on_thread(&a, NULL, path, OP_BEGIN).rc);
  Step r = on_thread(&a, NULL, path, OP_READ);
  CHECK_OK(r.rc);
  CHECK_EQ(r.out, 20);
  for (int i = 0; i < 10; i++) CHECK_OK(on_thread(&w, NULL, path, OP_WRITE).rc);
  r = on_thread(&a, NULL, path, OP_READ);
  CHECK_EQ(r.out, 20); /* still the old snapshot */
  /* a checkpoint from the main thread cannot pass the handed-over reader */
  long long v[3];
  WConn cw = {WENG_SHALE, w, NULL, 0, 0, 0};
  CHECK_OK(wc_row3(&cw, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_EQ(v[0], 1);
  CHECK_OK(on_thread(&a, NULL, path, OP_COMMIT).rc);
  r = on_thread(&a, NULL, path, OP_READ);
  CHECK_EQ(r.out, 30);
  /* a write transaction begun on one thread, written and committed on
   * others */
  CHECK_OK(on_thread(&a, NULL, path, OP_BEGIN).rc);
  CHECK_OK(on_thread(&a, NULL, path, OP_WRITE).rc);
  CHECK_OK(on_thread(&a, NULL, path, OP_WRITE).rc);
  CHECK_EQ(count_rows(w, &r.rc), 30);
  CHECK_OK(on_thread(&a, NULL, path, OP_COMMIT).rc);
  CHECK_EQ(count_rows(w, &r.rc), 32);
  /* a statement stepped halfway on one thread, finished on another, while
   * the main thread writes */
  Step p = on_thread(&a, &st, path, OP_PREPARE);
  CHECK_OK(p.rc);
  CHECK_EQ(p.out, 5);
  CHECK_OK(shale_exec(w, "INSERT INTO t VALUES(1)", NULL, NULL, NULL));
  Step q = on_thread(&a, &st, path, OP_STEP);
  CHECK_OK(q.rc);
  CHECK_EQ(p.out + q.out, 32); /* the statement's snapshot */
  CHECK_OK(on_thread(&a, &st, path, OP_FINISH).rc);
  r = on_thread(&a, NULL, path, OP_READ);
  CHECK_EQ(r.out, 33);
  CHECK_OK(wc_row3(&cw, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_EQ(v[0], 0);
  CHECK_OK(on_thread(&a, NULL, path, OP_CLOSE).rc);
  CHECK_OK(shale_close(w));
  /* SQLite reads the result (no Shale connection left in this process) */
  WConn c;
  CHECK_OK(wc_open(&c, WENG_SQLITE, path, 0));
  CHECK_EQ(wc_int(&c, "SELECT count(*) FROM t", -1), 33);
  CHECK(wc_integrity_ok(&c));
  wc_close(&c);
}

/* Many handoffs: a pool of 4 threads runs autocommit writes and reads of
 * 8 connections, each connection used by whichever thread picks it (a
 * mutex per connection: serial use, never concurrent). */
#define NCONN 8
#define NTHREAD 4

typedef struct Pool {
  shale *db[NCONN];
  pthread_mutex_t mu[NCONN];
  long long writes[NCONN];
  int errors;
  pthread_mutex_t emu;
  int iters;
} Pool;

static void *pool_main(void *arg) {
  Pool *pl = arg;
  uint64_t seed = (uint64_t)(uintptr_t)&seed ^ 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < pl->iters; i++) {
    int k = (int)(test_rand(&seed) % NCONN);
    pthread_mutex_lock(&pl->mu[k]);
    int rc;
    if (test_rand(&seed) % 3 == 0) {
      long long n = count_rows(pl->db[k], &rc);
      if (n < pl->writes[k]) rc = -1; /* never less than this connection wrote */
    } else {
      rc = shale_exec(pl->db[k], "INSERT INTO t VALUES(1)", NULL, NULL, NULL);
      if (rc == SHALE_OK) pl->writes[k]++;
    }
    pthread_mutex_unlock(&pl->mu[k]);
    if (rc != SHALE_OK) {
      pthread_mutex_lock(&pl->emu);
      pl->errors++;
      pthread_mutex_unlock(&pl->emu);
    }
  }
  return NULL;
}

TEST(thread_pool_shares_connections) {
  const char *path = test_path("pool.db");
  walt_unlink(path);
  static Pool pl;
  memset(&pl, 0, sizeof pl);
  pl.iters = WALT_ASAN ? 300 : 1500;
  pthread_mutex_init(&pl.emu, NULL);
  for (int k = 0; k < NCONN; k++) {
    CHECK_OK(shale_open(path, &pl.db[k]));
    shale_busy_timeout(pl.db[k], 10000);
    CHECK_OK(shale_exec(pl.db[k], "PRAGMA synchronous=NORMAL", NULL, NULL, NULL));
    pthread_mutex_init(&pl.mu[k], NULL);
    if (k == 0)
      CHECK_OK(
          shale_exec(pl.db[0], "PRAGMA journal_mode=WAL; CREATE TABLE t(x)", NULL, NULL, NULL));
  }
  pthread_t th[NTHREAD];
  for (int i = 0; i < NTHREAD; i++) CHECK_OK(pthread_create(&th[i], NULL, pool_main, &pl));
  for (int i = 0; i < NTHREAD; i++) pthread_join(th[i], NULL);
  CHECK_EQ(pl.errors, 0);
  long long total = 0;
  for (int k = 0; k < NCONN; k++) total += pl.writes[k];
  int rc;
  CHECK_EQ(count_rows(pl.db[3], &rc), total);
  for (int k = 0; k < NCONN; k++) {
    CHECK_OK(shale_close(pl.db[k]));
    pthread_mutex_destroy(&pl.mu[k]);
  }
  pthread_mutex_destroy(&pl.emu);
  WConn c;
  CHECK_OK(wc_open(&c, WENG_SQLITE, path, 0));
  CHECK_EQ(wc_int(&c, "SELECT count(*) FROM t", -1), total);
  CHECK(wc_integrity_ok(&c));
  wc_close(&c);
}
