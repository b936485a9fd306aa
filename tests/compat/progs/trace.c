/* trace.c -- trace_v2 (STMT with expanded_sql inside the callback, PROFILE,
 * ROW, CLOSE), legacy trace and profile, the progress handler, interrupt
 * (from the progress handler and from another thread: the long query stops
 * with SQLITE_INTERRUPT "interrupted" and the next statement runs), and the
 * busy handler (its retry counts on read and write locks; busy_timeout and
 * busy_handler replace each other), the WAL hook. Portable: must pass on SQLite and on
 * Shale. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

static char logbuf[8192];
static void add(const char *s) { strncat(logbuf, s, sizeof logbuf - strlen(logbuf) - 1); }

static sqlite3 *g_db;
static int trace_cb(unsigned t, void *ctx, void *p, void *x) {
  char buf[512];
  if (t == SQLITE_TRACE_STMT) {
    char *e = sqlite3_expanded_sql((sqlite3_stmt *)p);
    snprintf(buf, sizeof buf, "S[%s|%s] ", (const char *)x, e ? e : "?");
    sqlite3_free(e);
  } else if (t == SQLITE_TRACE_PROFILE) {
    sqlite3_int64 ns = *(sqlite3_int64 *)x;
    snprintf(buf, sizeof buf, "P[%s]%s ", sqlite3_sql((sqlite3_stmt *)p), ns >= 0 ? "" : "neg");
  } else if (t == SQLITE_TRACE_ROW) {
    snprintf(buf, sizeof buf, "R ");
  } else if (t == SQLITE_TRACE_CLOSE) {
    snprintf(buf, sizeof buf, "C%s ", p == (void *)g_db ? "" : "?");
  } else {
    snprintf(buf, sizeof buf, "?%u ", t);
  }
  add(buf);
  return 0;
}
static void legacy_cb(void *a, const char *sql) {
  add("T[");
  add(sql);
  add("] ");
}
static void profile_cb(void *a, const char *sql, sqlite3_uint64 ns) {
  add("Q[");
  add(sql);
  add("] ");
}

#define LOG_IS(want)                                                                             \
  do {                                                                                           \
    prog_checks++;                                                                               \
    if (strcmp(logbuf, (want))) {                                                                \
      fprintf(stderr, "%s:%d: log \"%s\"\n  want \"%s\"\n", __FILE__, __LINE__, logbuf, (want)); \
      prog_failed++;                                                                             \
    }                                                                                            \
    logbuf[0] = 0;                                                                               \
  } while (0)

static int nprogress, stop_after;
static sqlite3 *progress_db;
static int progress_cb(void *a) {
  nprogress++;
  if (stop_after && nprogress >= stop_after) {
    if (a) {
      sqlite3_interrupt(progress_db);
      return 0;
    }
    return 1;
  }
  return 0;
}

static const char *LONG_QUERY =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) "
    "SELECT count(*) FROM c";

static void *interrupter(void *arg) {
  usleep(100000);
  sqlite3_interrupt((sqlite3 *)arg);
  return NULL;
}

static int busy_log[64], nbusy, busy_stop;
static int busy_cb(void *a, int n) {
  if (nbusy < 64) busy_log[nbusy] = n;
  nbusy++;
  return n < busy_stop;
}

static int nwal;
static int wal_cb(void *arg, sqlite3 *db, const char *zdb, int n) {
  char buf[64];
  snprintf(buf, sizeof buf, "W:%s:%d ", zdb, n);
  add(buf);
  return SQLITE_OK;
}

static int step_rc(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    sqlite3_finalize(st);
  }
  return rc;
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  g_db = db;
  EXPECT_INT(
      sqlite3_trace_v2(
          db, SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE | SQLITE_TRACE_ROW | SQLITE_TRACE_CLOSE,
          trace_cb, NULL),
      SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a, b)");
  logbuf[0] = 0; /* (SQLite also reports a row of its schema reload here) */
  EXEC_OK(db, "INSERT INTO t VALUES (1, 'x'), (2, 'y')");
  LOG_IS(
      "S[INSERT INTO t VALUES (1, 'x'), (2, 'y')|INSERT INTO t VALUES (1, 'x'), (2, 'y')] "
      "P[INSERT INTO t VALUES (1, 'x'), (2, 'y')] ");
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT a FROM t WHERE a >= ?1 AND b <> ?2", -1, &st, NULL),
             SQLITE_OK);
  sqlite3_bind_int(st, 1, 1);
  sqlite3_bind_text(st, 2, "it's", -1, SQLITE_STATIC);
  LOG_IS("");
  while (sqlite3_step(st) == SQLITE_ROW) {
  }
  LOG_IS(
      "S[SELECT a FROM t WHERE a >= ?1 AND b <> ?2|SELECT a FROM t WHERE a >= 1 AND b <> "
      "'it''s'] R R P[SELECT a FROM t WHERE a >= ?1 AND b <> ?2] ");
  /* a statement reset before its end still reports its profile */
  sqlite3_reset(st);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  sqlite3_reset(st);
  LOG_IS(
      "S[SELECT a FROM t WHERE a >= ?1 AND b <> ?2|SELECT a FROM t WHERE a >= 1 AND b <> "
      "'it''s'] R P[SELECT a FROM t WHERE a >= ?1 AND b <> ?2] ");
  sqlite3_finalize(st);
  LOG_IS("");
  /* a trigger's run and each statement of its body are reported too */
  EXPECT_INT(sqlite3_trace_v2(db, 0, NULL, NULL), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE l(v); CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
          "INSERT INTO l VALUES (new.a); DELETE FROM l WHERE v < 0; END");
  EXPECT_INT(sqlite3_trace_v2(db, SQLITE_TRACE_STMT, trace_cb, NULL), SQLITE_OK);
  EXEC_OK(db, "INSERT INTO t VALUES (3, 'z')");
  /* (P is the statement that fired it) */
  LOG_IS(
      "S[INSERT INTO t VALUES (3, 'z')|INSERT INTO t VALUES (3, 'z')] "
      "S[-- TRIGGER tr|INSERT INTO t VALUES (3, 'z')] "
      "S[-- INSERT INTO l VALUES (new.a)|INSERT INTO t VALUES (3, 'z')] "
      "S[-- DELETE FROM l WHERE v < 0|INSERT INTO t VALUES (3, 'z')] ");
  EXEC_OK(db, "DELETE FROM t WHERE a = 3; DROP TRIGGER tr; DROP TABLE l");
  EXPECT_INT(
      sqlite3_trace_v2(
          db, SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE | SQLITE_TRACE_ROW | SQLITE_TRACE_CLOSE,
          trace_cb, NULL),
      SQLITE_OK);
  logbuf[0] = 0;
  /* only some events */
  EXPECT_INT(sqlite3_trace_v2(db, SQLITE_TRACE_ROW, trace_cb, NULL), SQLITE_OK);
  EXEC_OK(db, "SELECT * FROM t");
  LOG_IS("R R ");
  /* legacy trace: the expanded text; profile: the statement's text */
  int ta, pa;
  EXPECT(sqlite3_trace(db, legacy_cb, &ta) == NULL);
  for (int k = 0; k < 2; k++) {
    EXPECT_INT(sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE a = ?", -1, &st, NULL),
               SQLITE_OK);
    sqlite3_bind_int(st, 1, 2);
    EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
    EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    if (k == 0) {
      LOG_IS("T[SELECT count(*) FROM t WHERE a = 2] ");
      EXPECT(sqlite3_trace(db, NULL, NULL) == &ta);
      EXPECT(sqlite3_profile(db, profile_cb, &pa) == NULL);
    }
  }
  LOG_IS("Q[SELECT count(*) FROM t WHERE a = ?] ");
  EXPECT(sqlite3_profile(db, NULL, NULL) == &pa);
  EXEC_OK(db, "SELECT 1");
  LOG_IS("");

  /* progress handler: called during a long query; nonzero interrupts */
  progress_db = db;
  sqlite3_progress_handler(db, 100, progress_cb, NULL);
  EXEC_OK(db, "SELECT count(*) FROM t");
  nprogress = 0;
  stop_after = 5;
  char *err = NULL;
  EXPECT_INT(sqlite3_exec(db, LONG_QUERY, NULL, NULL, &err), SQLITE_INTERRUPT);
  EXPECT_STR(err, "interrupted");
  sqlite3_free(err);
  EXPECT_INT(nprogress, 5);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_INTERRUPT);
  /* sqlite3_interrupt from inside the handler (returning 0) */
  nprogress = 0;
  sqlite3_progress_handler(db, 100, progress_cb, db);
  EXPECT_INT(step_rc(db, LONG_QUERY), SQLITE_INTERRUPT);
  EXPECT_STR(sqlite3_errmsg(db), "interrupted");
  EXPECT(nprogress >= 5 && nprogress < 100);
  /* the next statement runs */
  EXPECT_INT(step_rc(db, "SELECT count(*) FROM t"), SQLITE_DONE);
  /* n <= 0 disables it */
  stop_after = 0;
  nprogress = 0;
  sqlite3_progress_handler(db, 0, progress_cb, NULL);
  EXEC_OK(db,
          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
          "SELECT count(*) FROM c");
  EXPECT_INT(nprogress, 0);
  sqlite3_progress_handler(db, 10, NULL, NULL);
  EXEC_OK(db, "SELECT count(*) FROM t");
  EXPECT_INT(nprogress, 0);
  /* an interrupt with nothing running is forgotten */
  sqlite3_interrupt(db);
  EXEC_OK(db, "SELECT count(*) FROM t");
  /* from another thread */
  pthread_t th;
  pthread_create(&th, NULL, interrupter, db);
  EXPECT_INT(step_rc(db, LONG_QUERY), SQLITE_INTERRUPT);
  pthread_join(th, NULL);
  EXPECT_STR(sqlite3_errmsg(db), "interrupted");
  EXPECT_INT(step_rc(db, "SELECT count(*) FROM t"), SQLITE_DONE);
  /* an interrupted write in autocommit mode leaves nothing behind */
  pthread_create(&th, NULL, interrupter, db);
  EXPECT_INT(step_rc(db,
                     "INSERT INTO t SELECT x, x FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION "
                     "ALL SELECT x + 1 FROM c WHERE x < 100000000) SELECT x FROM c)"),
             SQLITE_INTERRUPT);
  pthread_join(th, NULL);
  EXPECT_INT(sqlite3_get_autocommit(db), 1);
  sqlite3_stmt *cnt = NULL;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &cnt, NULL);
  EXPECT_INT(sqlite3_step(cnt), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(cnt, 0), 2);
  sqlite3_finalize(cnt);

  EXPECT_INT(sqlite3_trace_v2(db, SQLITE_TRACE_CLOSE, trace_cb, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  LOG_IS("C ");

  /* busy handler: counts 0, 1, ... until it returns 0, then SQLITE_BUSY */
  char dir[] = "/tmp/compat-trace-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[256];
  snprintf(path, sizeof path, "%s/b.db", dir);
  sqlite3 *a = NULL, *b = NULL;
  EXPECT_INT(sqlite3_open(path, &a), SQLITE_OK);
  EXPECT_INT(sqlite3_open(path, &b), SQLITE_OK);
  EXEC_OK(a, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  EXPECT_INT(sqlite3_busy_handler(b, busy_cb, NULL), SQLITE_OK);
  EXEC_OK(a, "BEGIN IMMEDIATE");
  busy_stop = 3;
  nbusy = 0;
  EXPECT_INT(step_rc(b, "BEGIN IMMEDIATE"), SQLITE_BUSY);
  EXPECT_INT(nbusy, 4);
  EXPECT_INT(busy_log[0], 0);
  EXPECT_INT(busy_log[3], 3);
  nbusy = 0;
  EXPECT_INT(step_rc(b, "INSERT INTO t VALUES (2)"), SQLITE_BUSY);
  EXPECT_INT(nbusy, 4);
  EXPECT_INT(busy_log[2], 2);
  /* reading is fine while a only holds RESERVED */
  nbusy = 0;
  EXPECT_INT(step_rc(b, "SELECT * FROM t"), SQLITE_DONE);
  EXPECT_INT(nbusy, 0);
  EXEC_OK(a, "COMMIT");
  /* a read lock refused by an EXCLUSIVE lock */
  EXEC_OK(a, "BEGIN EXCLUSIVE");
  nbusy = 0;
  busy_stop = 2;
  EXPECT_INT(step_rc(b, "SELECT * FROM t"), SQLITE_BUSY);
  EXPECT_INT(nbusy, 3);
  EXPECT_INT(busy_log[1], 1);
  /* busy_timeout replaces the handler, and the handler the timeout */
  EXPECT_INT(sqlite3_busy_timeout(b, 20), SQLITE_OK);
  nbusy = 0;
  EXPECT_INT(step_rc(b, "SELECT * FROM t"), SQLITE_BUSY);
  EXPECT_INT(nbusy, 0);
  EXPECT_INT(sqlite3_busy_handler(b, busy_cb, NULL), SQLITE_OK);
  sqlite3_stmt *pr = NULL;
  EXPECT_INT(sqlite3_prepare_v2(b, "PRAGMA busy_timeout", -1, &pr, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(pr), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(pr, 0), 0);
  sqlite3_finalize(pr);
  busy_stop = 0;
  nbusy = 0;
  EXPECT_INT(step_rc(b, "SELECT * FROM t"), SQLITE_BUSY);
  EXPECT_INT(nbusy, 1);
  /* a handler that waits until the lock is gone: the statement succeeds */
  EXEC_OK(a, "COMMIT");
  EXPECT_INT(step_rc(b, "SELECT * FROM t"), SQLITE_DONE);
  EXPECT_INT(sqlite3_busy_handler(b, NULL, NULL), SQLITE_OK);

  /* WAL hook: after each commit, with the WAL's frame count */
  EXEC_OK(a, "PRAGMA journal_mode = WAL");
  EXPECT(sqlite3_wal_hook(a, wal_cb, &nwal) == (void *)1000); /* the autocheckpoint's N */
  logbuf[0] = 0;
  EXEC_OK(a, "INSERT INTO t VALUES (10)");
  EXEC_OK(a, "INSERT INTO t VALUES (11)");
  EXEC_OK(a, "BEGIN; INSERT INTO t VALUES (12); INSERT INTO t VALUES (13)");
  EXEC_OK(a, "SELECT * FROM t");
  EXEC_OK(a, "COMMIT");
  EXEC_OK(a, "PRAGMA wal_checkpoint(TRUNCATE)");
  EXEC_OK(a, "INSERT INTO t VALUES (14)");
  LOG_IS("W:main:1 W:main:2 W:main:3 W:main:1 ");
  EXPECT(sqlite3_wal_hook(a, NULL, NULL) == &nwal);
  EXPECT_INT(sqlite3_close(a), SQLITE_OK);
  EXPECT_INT(sqlite3_close(b), SQLITE_OK);
  unlink(path);
  char side[300];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  rmdir(dir);
  return prog_done();
}
