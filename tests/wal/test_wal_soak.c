/*
 * test_wal_soak.c -- Shale and SQLite, threads and processes, reading and
 * writing one WAL database at the same time.
 *
 * Workers: Shale threads in this process, Shale processes and SQLite
 * processes (the test binary re-executed with WALT_SOAK set; SQLite never
 * runs in this process while Shale does, since POSIX locks do not exclude
 * within a process). Each worker, until its deadline, picks:
 *  - a transfer (BEGIN IMMEDIATE): moves an amount between two accounts,
 *    bumps its own counter row and logs the new counter value in ops;
 *  - a read check (BEGIN ... COMMIT): the balances sum to the constant
 *    total, its counter equals the number of its own commits so far (only
 *    it writes that row: a lost or doubled update shows), its ops rows
 *    number the same;
 *  - a deferred upgrade: BEGIN, read, then the transfer's writes; may fail
 *    with SQLITE_BUSY / SQLITE_BUSY_SNAPSHOT (then rolled back, not
 *    counted);
 *  - now and then a PASSIVE or RESTART checkpoint.
 * At the end: the total is intact on both engines, every worker's counter
 * and ops rows equal the commits it reported, integrity_check is "ok" on
 * both engines.
 *
 * A second case gives the Shale workers a 10-page cache: their bigger
 * transactions (1 in 20 logs a 30 KB row) spill into the log meanwhile.
 *
 * Duration: ~8 + 4 s by default, 60 + 30 s with SHALE_TEST_LONG, 5 s under
 * ASan.
 *
 * Invariants:
 *  1. A worker counts a commit only when COMMIT returned SQLITE_OK; any
 *     result other than OK or a BUSY-class code is an error.
 *  2. The parent checks SQLite's view only after every Shale connection of
 *     this process is closed, from a remote (child) connection.
 */
#include <pthread.h>
#include <time.h>

#include "../test.h"
#include "walt.h"

#define NACCT 20
#define START_BAL 1000
#define MAXW 16

typedef struct WRes {
  long long commits, checks, aborted, violations, errors;
  long long max_ms; /* slowest operation */
  int max_pick;
  char first_err[160];
} WRes;

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int busyish(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

static void note_err(WRes *r, const char *what, int rc, WConn *c) {
  r->errors++;
  if (!r->first_err[0])
    snprintf(r->first_err, sizeof r->first_err, "%s: rc %d %s", what, rc, wc_errmsg(c));
}

/* The transfer's writes (inside an open write transaction). */
static int transfer_writes(WConn *c, int me, uint64_t *seed) {
  int a = (int)(test_rand(seed) % NACCT) + 1, b = (int)(test_rand(seed) % NACCT) + 1;
  int x = (int)(test_rand(seed) % 50);
  char sql[400];
  snprintf(sql, sizeof sql,
           "UPDATE acct SET bal = bal - %d WHERE id = %d;"
           "UPDATE acct SET bal = bal + %d WHERE id = %d;"
           "UPDATE ctr SET n = n + 1 WHERE w = %d;"
           "INSERT INTO ops(w, n, pad) SELECT w, n, randomblob(%d) FROM ctr WHERE w = %d",
           x, a, x, b, me, test_rand(seed) % 20 == 0 ? 30000 : (int)(test_rand(seed) % 400), me);
  return wc_exec(c, sql);
}

static void worker(WConn *c, int me, long long ms, uint64_t seed, WRes *r) {
  long long end = mono_ms() + ms;
  char sql[200];
  long long t0 = 0;
  int pick = 0;
  for (;;) {
    long long now = mono_ms();
    if (t0 && now - t0 > r->max_ms) {
      r->max_ms = now - t0;
      r->max_pick = pick;
    }
    if (now >= end) break;
    t0 = now;
    pick = (int)(test_rand(&seed) % 100);
    int rc;
    if (pick < 55) {
      rc = wc_exec(c, "BEGIN IMMEDIATE");
      if (busyish(rc)) {
        r->aborted++;
        continue;
      }
      if (rc) {
        note_err(r, "begin immediate", rc, c);
        continue;
      }
      rc = transfer_writes(c, me, &seed);
      if (rc) {
        note_err(r, "transfer", rc, c);
        wc_exec(c, "ROLLBACK");
        continue;
      }
      rc = wc_exec(c, "COMMIT");
      if (rc) {
        note_err(r, "commit", rc, c);
        wc_exec(c, "ROLLBACK");
        continue;
      }
      r->commits++;
    } else if (pick < 85) {
      rc = wc_exec(c, "BEGIN");
      long long sum = wc_int_rc(c, "SELECT sum(bal) FROM acct", -1, &rc);
      if (busyish(rc)) {
        wc_exec(c, "ROLLBACK");
        r->aborted++;
        continue;
      }
      snprintf(sql, sizeof sql, "SELECT n FROM ctr WHERE w = %d", me);
      long long n = wc_int(c, sql, -1);
      snprintf(sql, sizeof sql, "SELECT count(*) FROM ops WHERE w = %d", me);
      long long nops = wc_int(c, sql, -1);
      snprintf(sql, sizeof sql, "SELECT max(n) FROM ops WHERE w = %d", me);
      long long maxn = wc_int(c, sql, -1);
      rc = wc_exec(c, "COMMIT");
      if (rc) note_err(r, "read commit", rc, c);
      if (sum != (long long)NACCT * START_BAL || n != r->commits || nops != n ||
          (n > 0 && maxn != n)) {
        r->violations++;
        if (!r->first_err[0])
          snprintf(r->first_err, sizeof r->first_err,
                   "violation: sum %lld n %lld nops %lld maxn %lld commits %lld", sum, n, nops,
                   maxn, r->commits);
      }
      r->checks++;
    } else if (pick < 97) {
      rc = wc_exec(c, "BEGIN");
      long long sum = wc_int_rc(c, "SELECT sum(bal) FROM acct", -1, &rc);
      if (rc == 0 && sum != (long long)NACCT * START_BAL) r->violations++;
      if (rc == 0) rc = transfer_writes(c, me, &seed);
      if (rc == 0) rc = wc_exec(c, "COMMIT");
      if (rc == 0) {
        r->commits++;
        continue;
      }
      if (!busyish(rc)) note_err(r, "upgrade", rc, c);
      wc_exec(c, "ROLLBACK");
      r->aborted++;
    } else {
      long long v[3];
      rc = wc_row3(c, pick & 1 ? "PRAGMA wal_checkpoint(RESTART)" : "PRAGMA wal_checkpoint", v);
      if (rc && !busyish(rc)) note_err(r, "checkpoint", rc, c);
    }
  }
}

/* ---- worker processes ---- */

__attribute__((constructor)) static void soak_child(void) {
  const char *e = getenv("WALT_SOAK");
  if (!e) return;
  int eng, me, small;
  long long ms;
  unsigned long long seed;
  char path[600];
  if (sscanf(e, "%d:%d:%d:%lld:%llu:%599s", &eng, &me, &small, &ms, &seed, path) != 6) _exit(2);
  WConn c;
  if (wc_open(&c, eng, path, 5000)) _exit(3);
  if (small) wc_exec(&c, "PRAGMA cache_size=10"); /* transactions spill into the log */
  WRes r;
  memset(&r, 0, sizeof r);
  worker(&c, me, ms, seed, &r);
  wc_close(&c);
  printf("%lld %lld %lld %lld %lld %lld %d %s\n", r.commits, r.checks, r.aborted, r.violations,
         r.errors, r.max_ms, r.max_pick, r.first_err[0] ? r.first_err : "-");
  fflush(stdout);
  _exit(0);
}

typedef struct Proc {
  pid_t pid;
  int fd;
} Proc;

static Proc spawn(int eng, int me, int small, long long ms, uint64_t seed, const char *path) {
  Proc p = {-1, -1};
  int pp[2];
  if (pipe(pp)) return p;
  char env[800];
  snprintf(env, sizeof env, "%d:%d:%d:%lld:%llu:%s", eng, me, small, ms, (unsigned long long)seed,
           path);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pp[1], 1);
    close(pp[0]);
    close(pp[1]);
    setenv("WALT_SOAK", env, 1);
    execl("/proc/self/exe", "walt-soak", (char *)NULL);
    _exit(127);
  }
  close(pp[1]);
  p.pid = pid;
  p.fd = pp[0];
  return p;
}

static int reap(Proc p, WRes *r) {
  char buf[400];
  FILE *f = fdopen(p.fd, "r");
  int ok = f && fgets(buf, sizeof buf, f) != NULL;
  if (f) fclose(f);
  int st = 0;
  waitpid(p.pid, &st, 0);
  if (!ok || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  memset(r, 0, sizeof *r);
  char err[160] = "";
  if (sscanf(buf, "%lld %lld %lld %lld %lld %lld %d %159[^\n]", &r->commits, &r->checks,
             &r->aborted, &r->violations, &r->errors, &r->max_ms, &r->max_pick, err) < 7)
    return -1;
  if (strcmp(err, "-") != 0) snprintf(r->first_err, sizeof r->first_err, "%s", err);
  return 0;
}

/* ---- threads ---- */

typedef struct Thr {
  const char *path;
  int me, small;
  long long ms;
  uint64_t seed;
  WRes r;
  int open_rc;
} Thr;

static void *thr_main(void *arg) {
  Thr *t = arg;
  WConn c;
  t->open_rc = wc_open(&c, WENG_SHALE, t->path, 5000);
  if (t->open_rc) return NULL;
  wc_exec(&c, "PRAGMA synchronous=NORMAL"); /* the processes keep FULL */
  if (t->small) wc_exec(&c, "PRAGMA cache_size=10");
  worker(&c, t->me, t->ms, t->seed, &t->r);
  wc_close(&c);
  return NULL;
}

/* small: the Shale workers run with a 10-page cache (their bigger
 * transactions spill into the log while others read and checkpoint). */
static void soak(const char *name, int nthreads, int nshale, int nsqlite, int small, long long ms) {
  const char *path = test_path(name);
  walt_unlink(path);
  int nw = nthreads + nshale + nsqlite;
  CHECK(nw <= MAXW);
  {
    WConn s;
    CHECK_OK(wc_open(&s, WENG_SHALE, path, 0));
    char sql[200];
    CHECK_OK(wc_exec(&s,
                     "PRAGMA journal_mode=WAL;"
                     "CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER);"
                     "CREATE TABLE ctr(w INTEGER PRIMARY KEY, n INTEGER);"
                     "CREATE TABLE ops(id INTEGER PRIMARY KEY, w INTEGER, n INTEGER, pad BLOB);"
                     "CREATE INDEX ops_w ON ops(w, n)"));
    for (int i = 1; i <= NACCT; i++) {
      snprintf(sql, sizeof sql, "INSERT INTO acct VALUES(%d, %d)", i, START_BAL);
      CHECK_OK(wc_exec(&s, sql));
    }
    for (int w = 0; w < nw; w++) {
      snprintf(sql, sizeof sql, "INSERT INTO ctr VALUES(%d, 0)", w);
      CHECK_OK(wc_exec(&s, sql));
    }
    wc_close(&s);
  }
  uint64_t seed = test_seed();
  Proc procs[MAXW];
  int np = 0;
  static Thr thr[MAXW];
  pthread_t th[MAXW];
  for (int i = 0; i < nshale + nsqlite; i++) {
    int eng = i < nshale ? WENG_SHALE : WENG_SQLITE;
    procs[np] =
        spawn(eng, nthreads + i, small && eng == WENG_SHALE, ms, seed + 1000 + (uint64_t)i, path);
    CHECK(procs[np].pid > 0);
    np++;
  }
  for (int i = 0; i < nthreads; i++) {
    memset(&thr[i], 0, sizeof thr[i]);
    thr[i].path = path;
    thr[i].me = i;
    thr[i].ms = ms;
    thr[i].small = small;
    thr[i].seed = seed + (uint64_t)i * 7919;
    CHECK_OK(pthread_create(&th[i], NULL, thr_main, &thr[i]));
  }
  WRes res[MAXW];
  for (int i = 0; i < nthreads; i++) {
    pthread_join(th[i], NULL);
    CHECK_OK(thr[i].open_rc);
    res[i] = thr[i].r;
  }
  for (int i = 0; i < np; i++) {
    if (reap(procs[i], &res[nthreads + i]) != 0) {
      test_fail(__FILE__, __LINE__, "worker process %d died", nthreads + i);
      memset(&res[nthreads + i], 0, sizeof res[0]);
      res[nthreads + i].errors = -1;
    }
  }
  long long total_commits = 0;
  for (int w = 0; w < nw; w++) {
    const char *kind = w < nthreads            ? "shale thread"
                       : w < nthreads + nshale ? "shale process"
                                               : "sqlite process";
    if (getenv("SHALE_WALT_VERBOSE"))
      fprintf(
          stderr,
          "  worker %d (%s): %lld commits, %lld checks, %lld aborted, slowest %lld ms (op %d)\n", w,
          kind, res[w].commits, res[w].checks, res[w].aborted, res[w].max_ms, res[w].max_pick);
    if (res[w].violations || res[w].errors)
      test_fail(__FILE__, __LINE__, "worker %d (%s): %lld violations, %lld errors: %s", w, kind,
                res[w].violations, res[w].errors, res[w].first_err);
    total_commits += res[w].commits;
  }
  CHECK(total_commits > 0); /* a starved worker (loaded machine) is not an error */
  /* final checks from both engines (SQLite from a process of its own) */
  WConn e[2];
  CHECK_OK(wc_open(&e[0], WENG_SHALE, path, 5000));
  CHECK_OK(wc_open_remote(&e[1], WENG_SQLITE, path, 5000));
  for (int k = 0; k < 2; k++) {
    CHECK_EQ(wc_int(&e[k], "SELECT sum(bal) FROM acct", -1), (long long)NACCT * START_BAL);
    CHECK_EQ(wc_int(&e[k], "SELECT count(*) FROM ops", -1), total_commits);
    for (int w = 0; w < nw; w++) {
      char sql[120];
      snprintf(sql, sizeof sql, "SELECT n FROM ctr WHERE w = %d", w);
      CHECK_EQ(wc_int(&e[k], sql, -1), res[w].commits);
      snprintf(sql, sizeof sql, "SELECT count(*) FROM ops WHERE w = %d", w);
      CHECK_EQ(wc_int(&e[k], sql, -1), res[w].commits);
    }
    CHECK(wc_integrity_ok(&e[k]));
  }
  wc_close(&e[0]);
  wc_close(&e[1]);
}

TEST(soak_threads_and_processes_mixed) {
  soak("soak1.db", 2, 2, 2, 0, test_long() ? 60000 : WALT_ASAN ? 3000 : 8000);
}
TEST(soak_small_cache_spills) {
  soak("soak2.db", 1, 2, 1, 1, test_long() ? 30000 : WALT_ASAN ? 2000 : 4000);
}
