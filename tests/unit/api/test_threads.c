/*
 * test_threads.c -- connections shared between threads (SQLite's serialized
 * mode, src/api/api_int.h invariant 7) and threads on separate connections
 * to one file.
 *
 * Cases:
 *  - threads_shared_connection: 8 threads share one connection (WAL file)
 *    for a bounded time (SHALE_TEST_LONG: longer), each running random
 *    prepares, binds, steps (to the end or part way, leaving the statement
 *    active), resets and finalizes over its own rows, and checking every
 *    answer against its own model of them; a failing prepare's message is
 *    read under the connection's mutex and must be its own. At the end every
 *    thread's rows and the integrity check are verified.
 *  - threads_nomutex_connection: SHALE_OPEN_NOMUTEX leaves the mutex out.
 *  - threads_separate_connections: 4 threads, one connection each, to one
 *    WAL file, committing batches with a busy timeout; no commit may fail and
 *    the row count must be the sum.
 *  - threads_handles_after_close: a closed connection and a finalized
 *    statement give SHALE_MISUSE (their memory stays a handle).
 * Run under ASan (make SANITIZE=1) and ThreadSanitizer (tests/tsan.supp).
 *
 * Invariants:
 *  1. Worker threads never call CHECK (the harness is single-threaded): they
 *     count failures and keep the first message, the main thread reports.
 *  2. Each thread touches only rows whose th column is its number, so its
 *     model is exact whatever the other threads do.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../test.h"
#include "shale.h"

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct Worker {
  shale *db;
  int th;
  int64_t deadline;
  uint64_t seed;
  int fails;
  char first[256];
  long ops;
  /* model: keys inserted by this thread, live[i] whether row i exists */
  int nkey;
  uint8_t live[1 << 16];
} Worker;

static void wfail(Worker *w, const char *fmt, int a, int b, const char *msg) {
  if (!w->fails++) snprintf(w->first, sizeof w->first, fmt, w->th, a, b, msg ? msg : "");
}

static int64_t key_of(Worker *w, int i) { return (int64_t)w->th * 1000000 + i; }

enum { K_INS, K_DEL, K_GET, K_CNT, K_SCAN, K_BAD, K_N };
static const char *const sqls[K_N] = {
    "INSERT INTO t(k, th, v) VALUES(?1, ?2, ?3)", "DELETE FROM t WHERE k = ?1",
    "SELECT th, v FROM t WHERE k = ?1",           "SELECT count(*) FROM t WHERE th = ?1",
    "SELECT k FROM t WHERE th = ?1 ORDER BY k",   "SELECT * FROM nosuch_table",
};

typedef struct Slot {
  shale_stmt *st;
  int kind;
} Slot;

static int live_count(Worker *w) {
  int n = 0;
  for (int i = 0; i < w->nkey; i++) n += w->live[i];
  return n;
}

/* Run slot s once over this thread's rows and check the answer. */
static void run_slot(Worker *w, Slot *s) {
  shale_stmt *st = s->st;
  char v[32];
  int rc;
  switch (s->kind) {
    case K_INS: {
      if (w->nkey >= (int)sizeof w->live) return;
      int i = w->nkey;
      snprintf(v, sizeof v, "v%d.%d", w->th, i);
      shale_bind_int64(st, 1, key_of(w, i));
      shale_bind_int(st, 2, w->th);
      shale_bind_text(st, 3, v, -1, SHALE_TRANSIENT);
      rc = shale_step(st);
      if (rc != SHALE_DONE)
        wfail(w, "thread %d: insert %d rc %d %s", i, rc, shale_errmsg(w->db));
      else {
        w->live[i] = 1;
        w->nkey++;
      }
      break;
    }
    case K_DEL: {
      if (!w->nkey) return;
      int i = (int)(test_rand(&w->seed) % (uint64_t)w->nkey);
      shale_bind_int64(st, 1, key_of(w, i));
      rc = shale_step(st);
      if (rc != SHALE_DONE)
        wfail(w, "thread %d: delete %d rc %d %s", i, rc, shale_errmsg(w->db));
      else
        w->live[i] = 0;
      break;
    }
    case K_GET: {
      if (!w->nkey) return;
      int i = (int)(test_rand(&w->seed) % (uint64_t)w->nkey);
      shale_bind_int64(st, 1, key_of(w, i));
      rc = shale_step(st);
      if (rc == SHALE_ROW) {
        snprintf(v, sizeof v, "v%d.%d", w->th, i);
        const unsigned char *z = shale_column_text(st, 1);
        if (!w->live[i] || shale_column_int(st, 0) != w->th || !z || strcmp((const char *)z, v))
          wfail(w, "thread %d: get %d live %d wrong row %s", i, w->live[i], (const char *)z);
        rc = shale_step(st);
      } else if (w->live[i]) {
        wfail(w, "thread %d: get %d missing rc %d %s", i, rc, shale_errmsg(w->db));
      }
      if (rc != SHALE_DONE) wfail(w, "thread %d: get %d rc %d %s", i, rc, shale_errmsg(w->db));
      break;
    }
    case K_CNT: {
      shale_bind_int(st, 1, w->th);
      rc = shale_step(st);
      int want = live_count(w);
      if (rc != SHALE_ROW || shale_column_int(st, 0) != want)
        wfail(w, "thread %d: count rc %d want %d %s", rc, want, shale_errmsg(w->db));
      break;
    }
    case K_SCAN: {
      /* part way or to the end; an unfinished scan stays active in its slot
       * (later steps continue it) */
      if (!shale_stmt_busy(st)) shale_bind_int(st, 1, w->th);
      int n = 1 + (int)(test_rand(&w->seed) % 20);
      int64_t last = -1;
      while (n-- > 0 && (rc = shale_step(st)) == SHALE_ROW) {
        int64_t k = shale_column_int64(st, 0);
        if (k / 1000000 != w->th || k <= last)
          wfail(w, "thread %d: scan key %d after %d %s", (int)k, (int)last, "");
        last = k;
      }
      if (n >= 0 && rc != SHALE_DONE)
        wfail(w, "thread %d: scan rc %d %d %s", rc, 0, shale_errmsg(w->db));
      return; /* not reset */
    }
  }
  shale_reset(st);
}

static void *worker_main(void *arg) {
  Worker *w = arg;
  Slot slots[4];
  memset(slots, 0, sizeof slots);
  shale_mutex *mu = shale_db_mutex(w->db);
  while (now_ms() < w->deadline) {
    w->ops++;
    Slot *s = &slots[test_rand(&w->seed) % 4];
    unsigned r = (unsigned)(test_rand(&w->seed) % 10);
    if (!s->st) {
      int kind = (int)(test_rand(&w->seed) % K_N);
      if (kind == K_BAD) {
        /* the binding's way to a consistent message: hold the mutex */
        shale_mutex_enter(mu);
        shale_stmt *bad = NULL;
        int rc = shale_prepare_v2(w->db, sqls[kind], -1, &bad, NULL);
        const char *m = shale_errmsg(w->db);
        if (rc != SHALE_ERROR || bad || strcmp(m, "no such table: nosuch_table"))
          wfail(w, "thread %d: bad prepare rc %d %d %s", rc, 0, m);
        shale_mutex_leave(mu);
        continue;
      }
      int rc = shale_prepare_v2(w->db, sqls[kind], -1, &s->st, NULL);
      if (rc != SHALE_OK) wfail(w, "thread %d: prepare %d rc %d %s", kind, rc, shale_errmsg(w->db));
      s->kind = kind;
    } else if (r < 7) {
      run_slot(w, s);
    } else if (r < 8) {
      shale_reset(s->st);
    } else {
      shale_finalize(s->st);
      s->st = NULL;
    }
  }
  for (int i = 0; i < 4; i++) shale_finalize(slots[i].st);
  return NULL;
}

static void report(Worker *w, int n) {
  for (int i = 0; i < n; i++)
    if (w[i].fails) test_fail(__FILE__, __LINE__, "%d failures, first: %s", w[i].fails, w[i].first);
}

static int64_t count_rows(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  int64_t n = -1;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
    n = shale_column_int64(st, 0);
  shale_finalize(st);
  return n;
}

static void check_integrity(shale *db) {
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL));
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_STR((const char *)shale_column_text(st, 0), "ok");
  shale_finalize(st);
}

#define NSHARED 8

TEST(threads_shared_connection) {
  const char *path = test_path("shared.db");
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  CHECK(shale_db_mutex(db) != NULL);
  CHECK_OK(shale_exec(db,
                      "PRAGMA journal_mode=WAL; CREATE TABLE t(k INTEGER PRIMARY KEY, th, v);"
                      "CREATE INDEX t_th ON t(th)",
                      NULL, NULL, NULL));
  static Worker w[NSHARED];
  pthread_t t[NSHARED];
  int64_t deadline = now_ms() + (test_long() ? 20000 : 2500);
  for (int i = 0; i < NSHARED; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].db = db;
    w[i].th = i + 1;
    w[i].deadline = deadline;
    w[i].seed = test_seed() * 31 + (uint64_t)i;
    CHECK_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  long ops = 0;
  for (int i = 0; i < NSHARED; i++) {
    pthread_join(t[i], NULL);
    ops += w[i].ops;
  }
  report(w, NSHARED);
  CHECK(ops > 1000);
  for (int i = 0; i < NSHARED; i++) {
    char q[64];
    snprintf(q, sizeof q, "SELECT count(*) FROM t WHERE th = %d", w[i].th);
    CHECK_EQ(count_rows(db, q), live_count(&w[i]));
  }
  check_integrity(db);
  CHECK(shale_next_stmt(db, NULL) == NULL);
  CHECK_OK(shale_close(db));
}

TEST(threads_nomutex_connection) {
  shale *db = NULL;
  CHECK_OK(shale_open_v2(":memory:", &db,
                         SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_NOMUTEX, NULL));
  CHECK(shale_db_mutex(db) == NULL);
  CHECK_OK(shale_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1)", NULL, NULL, NULL));
  CHECK_EQ(count_rows(db, "SELECT count(*) FROM t"), 1);
  CHECK_OK(shale_close(db));
  CHECK_OK(shale_open_v2(":memory:", &db,
                         SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_FULLMUTEX, NULL));
  shale_mutex *m = shale_db_mutex(db);
  CHECK(m != NULL);
  shale_mutex_enter(m);
  CHECK(shale_mutex_held(m));
  CHECK_OK(shale_mutex_try(m)); /* recursive */
  shale_mutex_leave(m);
  shale_mutex_leave(m);
  CHECK(!shale_mutex_held(m));
  CHECK_OK(shale_close(db));
}

typedef struct Writer {
  const char *path;
  int th;
  int64_t deadline;
  int fails, commits;
  char first[256];
} Writer;

static void *writer_main(void *arg) {
  Writer *w = arg;
  shale *db = NULL;
  if (shale_open(w->path, &db) != SHALE_OK) {
    w->fails++;
    snprintf(w->first, sizeof w->first, "open: %s", shale_errmsg(db));
    shale_close(db);
    return NULL;
  }
  shale_busy_timeout(db, 10000);
  shale_stmt *ins = NULL;
  shale_prepare_v2(db, "INSERT INTO t(th, v) VALUES(?1, ?2)", -1, &ins, NULL);
  while (now_ms() < w->deadline) {
    int rc = shale_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    for (int i = 0; rc == SHALE_OK && i < 5; i++) {
      shale_bind_int(ins, 1, w->th);
      shale_bind_int(ins, 2, i);
      rc = shale_step(ins);
      shale_reset(ins);
      if (rc == SHALE_DONE) rc = SHALE_OK;
    }
    if (rc == SHALE_OK) rc = shale_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SHALE_OK) {
      if (!w->fails++)
        snprintf(w->first, sizeof w->first, "thread %d: rc %d %s", w->th, rc, shale_errmsg(db));
      shale_exec(db, "ROLLBACK", NULL, NULL, NULL);
    } else {
      w->commits++;
    }
    int64_t n = count_rows(db, "SELECT count(*) FROM t");
    if (n < 0 && !w->fails++) snprintf(w->first, sizeof w->first, "count: %s", shale_errmsg(db));
  }
  shale_finalize(ins);
  shale_close(db);
  return NULL;
}

#define NWRITERS 4

TEST(threads_separate_connections) {
  const char *path = test_path("separate.db");
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  CHECK_OK(shale_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE t(th, v)", NULL, NULL, NULL));
  Writer w[NWRITERS];
  pthread_t t[NWRITERS];
  int64_t deadline = now_ms() + (test_long() ? 10000 : 1500);
  for (int i = 0; i < NWRITERS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].path = path;
    w[i].th = i + 1;
    w[i].deadline = deadline;
    CHECK_EQ(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
  }
  int64_t commits = 0;
  for (int i = 0; i < NWRITERS; i++) {
    pthread_join(t[i], NULL);
    if (w[i].fails) test_fail(__FILE__, __LINE__, "%d failures, first: %s", w[i].fails, w[i].first);
    commits += w[i].commits;
  }
  CHECK(commits > 0);
  CHECK_EQ(count_rows(db, "SELECT count(*) FROM t"), commits * 5);
  check_integrity(db);
  CHECK_OK(shale_close(db));
}

TEST(threads_handles_after_close) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT 1", -1, &st, NULL));
  CHECK(shale_stmt_live(st));
  CHECK_OK(shale_finalize(st));
  CHECK(!shale_stmt_live(st));
  CHECK_RC(shale_step(st), SHALE_MISUSE);
  CHECK_RC(shale_finalize(st), SHALE_MISUSE);
  CHECK_EQ(shale_column_count(st), 0);
  CHECK_OK(shale_close(db));
  CHECK(!shale_db_live(db));
  CHECK_RC(shale_close(db), SHALE_MISUSE);
  CHECK_RC(shale_exec(db, "SELECT 1", NULL, NULL, NULL), SHALE_MISUSE);
  CHECK_STR(shale_errmsg(db), "bad parameter or other API misuse");
  CHECK(shale_db_mutex(db) == NULL);
}

/* What threads_shared_connection found: a row's text read after another
 * statement of the connection wrote to the same page must still be the row's
 * (SQLite copies column values; Shale's borrow page bytes until then). Same
 * steps on the reference SQLite, same answers. */
#include <sqlite3.h>

TEST(row_stays_valid_across_writes) {
  shale *db = NULL;
  sqlite3 *q = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(sqlite3_open(":memory:", &q));
  const char *setup =
      "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT, b BLOB);"
      "INSERT INTO t VALUES(1, 'first row text', x'0102030405'), (3, 'third', x'03')";
  CHECK_OK(shale_exec(db, setup, NULL, NULL, NULL));
  CHECK_OK(sqlite3_exec(q, setup, NULL, NULL, NULL));
  const char *writes[] = {
      "INSERT INTO t VALUES(0, 'zero', x'00')",              /* shifts cells on the page */
      "UPDATE t SET v = 'changed!!', b = x'ff' WHERE k = 1", /* the row itself */
      "DELETE FROM t WHERE k = 1",
  };
  for (int w = 0; w < 3; w++) {
    shale_stmt *s = NULL;
    sqlite3_stmt *r = NULL;
    CHECK_OK(shale_prepare_v2(db, "SELECT v, b FROM t WHERE k = 1", -1, &s, NULL));
    CHECK_OK(sqlite3_prepare_v2(q, "SELECT v, b FROM t WHERE k = 1", -1, &r, NULL));
    CHECK_RC(shale_step(s), SHALE_ROW);
    CHECK_RC(sqlite3_step(r), SQLITE_ROW);
    CHECK_OK(shale_exec(db, writes[w], NULL, NULL, NULL));
    CHECK_OK(sqlite3_exec(q, writes[w], NULL, NULL, NULL));
    CHECK_STR((const char *)shale_column_text(s, 0), (const char *)sqlite3_column_text(r, 0));
    CHECK_EQ(shale_column_bytes(s, 1), sqlite3_column_bytes(r, 1));
    int nb = sqlite3_column_bytes(r, 1);
    CHECK(nb > 0 && memcmp(shale_column_blob(s, 1), sqlite3_column_blob(r, 1), (size_t)nb) == 0);
    shale_finalize(s);
    sqlite3_finalize(r);
    if (w == 0) {
      CHECK_OK(shale_exec(db, "DELETE FROM t WHERE k = 0", NULL, NULL, NULL));
      CHECK_OK(sqlite3_exec(q, "DELETE FROM t WHERE k = 0", NULL, NULL, NULL));
    }
  }
  CHECK_OK(shale_close(db));
  sqlite3_close(q);
}
