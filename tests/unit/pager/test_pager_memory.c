/*
 * test_pager_memory.c -- memory at scale: the peak resident set of big
 * transactions stays near the reference SQLite's, whatever the size of
 * the data.
 *
 * Each step runs in a child process of its own (fork, so both engines start
 * from the same resident set), on a file on the scratch file system, once
 * with Shale and once with SQLite; the child reports getrusage's ru_maxrss.
 * The steps, in journal_mode=DELETE and in WAL mode (default cache_size,
 * synchronous=FULL):
 *   insert  one INSERT ... SELECT of ROWS rows from a recursive CTE (one
 *           statement, one transaction: the cache spills to the file after
 *           journalling, or into the log; the statement's ephemeral table
 *           spills to a temp file);
 *   update  one UPDATE of every row (every page journalled, DELETE mode only:
 *           journalled pages spill to the file);
 *   index   CREATE INDEX on the text column (a scan of the whole table
 *           through the map of the file, the sorter, a new b-tree).
 * Shale's peak must be at most 2x SQLite's + 16 MiB. Each child checks the
 * row count and sum with its own engine; SQLite's integrity_check is run on
 * the file Shale wrote.
 *
 * ROWS is 2,000,000 (SHALE_MEM_ROWS=N overrides it, e.g. 10000000 for the
 * bench report; SHALE_MEM_VERBOSE=1 prints the figures).
 *
 * Invariants:
 *  1. A child never returns into the harness: it reports on its pipe and
 *     _exit()s. The parent never opens a database with Shale (a fork of a
 *     process with Shale's threads, such as the lock keeper, could inherit a
 *     held mutex), only SQLite's integrity check at the end.
 *  2. Both engines run the same SQL text on files of their own.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/tscratch.h"
#include "../../common/tsql.h"
#include "../../test.h"
#include "shale.h"

#define ENG_SHALE 0
#define ENG_SQLITE 1

static long mem_rows(void) {
  const char *e = getenv("SHALE_MEM_ROWS");
  long n = e ? atol(e) : 0;
  return n > 0 ? n : 2000000;
}

static int verbose(void) {
  const char *e = getenv("SHALE_MEM_VERBOSE");
  return e && e[0] == '1';
}

/* Run sql (several statements) on path with one engine; 0 on success. */
static int run_sql(int eng, const char *path, const char *sql) {
  int rc;
  if (eng == ENG_SHALE) {
    shale *db;
    rc = shale_open_v2(path, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
    if (rc == SHALE_OK) rc = shale_exec(db, sql, NULL, NULL, NULL);
    if (rc != SHALE_OK) fprintf(stderr, "shale: %s\n", shale_errmsg(db));
    shale_close(db);
  } else {
    sqlite3 *db;
    rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
  }
  return rc;
}

/* One integer from a query, read with one engine; -1 on error. */
static long long query_int(int eng, const char *path, const char *q) {
  long long v = -1;
  if (eng == ENG_SHALE) {
    shale *db;
    shale_stmt *st = NULL;
    if (shale_open_v2(path, &db, SHALE_OPEN_READWRITE, NULL) == SHALE_OK &&
        shale_prepare_v2(db, q, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
      v = shale_column_int64(st, 0);
    shale_finalize(st);
    shale_close(db);
  } else {
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  return v;
}

/* Run sql in a child; then, still there, check that query gives want.
 * Returns the child's peak resident set in KiB, or -1 on failure. */
static long child_peak(int eng, const char *path, const char *sql, const char *query,
                       long long want) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    long out = -1;
    if (run_sql(eng, path, sql) == 0) {
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru); /* the peak of the work, before checking */
      long long got = query_int(eng, path, query);
      if (got == want)
        out = ru.ru_maxrss;
      else
        fprintf(stderr, "child: %s gave %lld, want %lld\n", query, got, want);
    }
    if (write(fds[1], &out, sizeof out) != sizeof out) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  long peak = -1;
  if (read(fds[0], &peak, sizeof peak) != sizeof peak) peak = -1;
  close(fds[0]);
  int st;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) peak = -1;
  return peak;
}

static void unlink_db(const char *path) {
  char b[4096];
  unlink(path);
  snprintf(b, sizeof b, "%s-journal", path);
  unlink(b);
  snprintf(b, sizeof b, "%s-wal", path);
  unlink(b);
  snprintf(b, sizeof b, "%s-shm", path);
  unlink(b);
}

/* One step on both engines: peaks compared, Shale's within the bound. */
static void step(const char *mode, const char *name, const char *const path[2], const char *sql,
                 const char *query, long long want) {
  long peak[2];
  for (int eng = 0; eng < 2; eng++) peak[eng] = child_peak(eng, path[eng], sql, query, want);
  long bound = 2 * peak[ENG_SQLITE] + 16 * 1024;
  if (verbose() || peak[ENG_SHALE] > bound || peak[0] < 0 || peak[1] < 0)
    printf("  %-6s %-6s %ld rows: peak RSS Shale %.1f MB, SQLite %.1f MB (bound %.1f MB)\n", mode,
           name, mem_rows(), peak[ENG_SHALE] / 1024.0, peak[ENG_SQLITE] / 1024.0, bound / 1024.0);
  CHECK(peak[ENG_SHALE] > 0 && peak[ENG_SQLITE] > 0);
  CHECK(peak[ENG_SHALE] <= bound);
}

static void scenario(int wal) {
  const char *mode = wal ? "wal" : "delete";
  const char *path[2];
  char p0[4096], p1[4096], sql[1024], q[256];
  snprintf(p0, sizeof p0, "%s", tscratch_path(wal ? "mem_wal_shale.db" : "mem_del_shale.db"));
  snprintf(p1, sizeof p1, "%s", tscratch_path(wal ? "mem_wal_sqlite.db" : "mem_del_sqlite.db"));
  path[0] = p0;
  path[1] = p1;
  long n = mem_rows();
  long long sum = (long long)n * (n + 1) / 2 * 7;
  for (int e = 0; e < 2; e++) unlink_db(path[e]);
  snprintf(sql, sizeof sql,
           "PRAGMA journal_mode=%s; CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);"
           "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<%ld) "
           "INSERT INTO t SELECT i, printf('row%%08d-abcdefghij', i), i*7 FROM r",
           wal ? "WAL" : "DELETE", n);
  step(mode, "insert", path, sql, "SELECT sum(c) FROM t", sum); /* also creates t */
  if (!wal) {
    step(mode, "update", path, "UPDATE t SET c = c + 1", "SELECT sum(c) FROM t", sum + n);
    sum += n;
  }
  snprintf(q, sizeof q, "SELECT count(*) FROM t INDEXED BY tb WHERE b >= 'row'");
  step(mode, "index", path, "CREATE INDEX tb ON t(b)", q, n);
  char msg[256] = "";
  CHECK(tsql_integrity(path[ENG_SHALE], msg, sizeof msg));
  if (msg[0]) printf("  integrity_check: %s\n", msg);
  for (int e = 0; e < 2; e++) unlink_db(path[e]);
}

TEST(memory_big_transaction_journal) { scenario(0); }

TEST(memory_big_transaction_wal) { scenario(1); }
