/*
 * test_wal_token.c -- a SQLite process and a Shale process alternate
 * writes on one WAL database (token passing): each write is made by the
 * holder of the token, which then hands it over; the other process must
 * see that write at once (its counter, its engine's name, its log row),
 * through auto-checkpoints and log restarts of both engines, under
 * synchronous NORMAL and FULL. Then both engines check integrity and the
 * full log.
 *
 * Both connections are remote (walt.h): each lives in its own process, so
 * their locks really exclude each other.
 *
 * Invariants:
 *  1. Exactly one process writes at a time (the parent hands the token
 *     only after the holder's write returned).
 */
#include "../test.h"
#include "walt.h"

static void token_run(const char *name, const char *sync, int rounds, int shale_first) {
  const char *path = test_path(name);
  walt_unlink(path);
  WConn e[2];
  int first = shale_first ? WENG_SHALE : WENG_SQLITE;
  CHECK_OK(wc_open_remote(&e[0], first, path, 2000));
  CHECK_OK(wc_open_remote(&e[1], !first, path, 2000));
  char buf[64], sql[256];
  CHECK_OK(wc_text(&e[0], "PRAGMA journal_mode=WAL", buf, sizeof buf));
  CHECK_STR(buf, "wal");
  snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", sync);
  CHECK_OK(wc_exec(&e[0], sql));
  CHECK_OK(wc_exec(&e[1], sql));
  CHECK_OK(wc_exec(&e[0],
                   "CREATE TABLE tok(id INTEGER PRIMARY KEY, n INTEGER, who TEXT);"
                   "INSERT INTO tok VALUES(1, 0, 'none');"
                   "CREATE TABLE log(i INTEGER PRIMARY KEY, who TEXT, pad BLOB);"
                   "CREATE INDEX log_who ON log(who, i)"));
  int bad = 0;
  for (int i = 1; i <= rounds && bad < 5; i++) {
    WConn *w = &e[i & 1], *r = &e[!(i & 1)];
    const char *wn = weng_name(w->eng);
    /* every 50th round a bigger write (several pages, page splits) */
    snprintf(sql, sizeof sql,
             "BEGIN; UPDATE tok SET n = n + 1, who = '%s' WHERE id = 1;"
             "INSERT INTO log VALUES(%d, '%s', randomblob(%d)); COMMIT",
             wn, i, wn, i % 50 == 0 ? 20000 : 30);
    int rc = wc_exec(w, sql);
    if (rc) {
      test_fail(__FILE__, __LINE__, "round %d: %s write failed: %d", i, wn, rc);
      bad++;
      continue;
    }
    long long n = wc_int(r, "SELECT n FROM tok WHERE id = 1", -1);
    wc_text(r, "SELECT who FROM tok WHERE id = 1", buf, sizeof buf);
    long long seen = wc_int(r, "SELECT max(i) FROM log", -1);
    if (n != i || strcmp(buf, wn) != 0 || seen != i) {
      test_fail(__FILE__, __LINE__, "round %d: %s sees n=%lld who=%s max(i)=%lld after %s's write",
                i, weng_name(r->eng), n, buf, seen, wn);
      bad++;
    }
    if (i % 97 == 0) { /* a checkpoint now and then, from either side */
      long long v[3];
      wc_row3(r, i % 2 ? "PRAGMA wal_checkpoint(RESTART)" : "PRAGMA wal_checkpoint(PASSIVE)", v);
    }
  }
  for (int k = 0; k < 2; k++) {
    CHECK(wc_integrity_ok(&e[k]));
    CHECK_EQ(wc_int(&e[k], "SELECT count(*) FROM log", -1), rounds);
    CHECK_EQ(wc_int(&e[k], "SELECT count(*) FROM log WHERE who = 'shale'", -1),
             shale_first ? rounds / 2 : (rounds + 1) / 2);
  }
  wc_close(&e[0]);
  wc_close(&e[1]);
  /* both closed: the last one checkpointed and removed the log */
  CHECK_EQ(walt_fsize_sfx(path, "-wal"), -1);
  WConn q;
  CHECK_OK(wc_open(&q, WENG_SQLITE, path, 0));
  CHECK_EQ(wc_int(&q, "SELECT n FROM tok", -1), rounds);
  CHECK(wc_integrity_ok(&q));
  wc_close(&q);
}

static int rounds(void) { return test_long() ? 20000 : WALT_ASAN ? 600 : 3000; }

TEST(token_sqlite_shale_normal) { token_run("tok1.db", "NORMAL", rounds(), 0); }
TEST(token_shale_sqlite_full) { token_run("tok2.db", "FULL", rounds() / 3, 1); }
