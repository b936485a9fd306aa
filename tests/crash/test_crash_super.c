/*
 * test_crash_super.c -- atomic commits over attached databases (the
 * super-journal) against SIGKILL.
 *
 * A child process opens file A, attaches file B and commits transactions
 * that add 1 to a counter in each file and a blob to each (BEGIN ... COMMIT,
 * or single autocommit UPDATEs whose TEMP trigger writes B); the parent kills
 * it with SIGKILL after a random delay and checks that the two counters are
 * equal -- read through the reference SQLite (its hot-journal rollback
 * follows the super-journal) on even rounds and through Shale on odd ones --
 * and that both files pass the reference's integrity_check.
 *
 * Invariants:
 *  1. After every kill, A.c.n == B.bc.n: a transaction is in both files or in
 *     neither. Without the super-journal a kill between the two files'
 *     commits leaves them one apart.
 *  2. A normal commit over two journal files leaves no "-mj" file behind and
 *     writes the super-journal name into neither database.
 */
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/os/os.h"
#include "../common/tscratch.h"
#include "../test.h"
#include "shale.h"

static void paths(const char *tag, char *a, char *b, size_t n) {
  char x[64];
  snprintf(x, sizeof x, "%s-a.db", tag);
  snprintf(a, n, "%s", tscratch_path(x));
  snprintf(x, sizeof x, "%s-b.db", tag);
  snprintf(b, n, "%s", tscratch_path(x));
  char j[700];
  remove(a);
  remove(b);
  snprintf(j, sizeof j, "%s-journal", a);
  remove(j);
  snprintf(j, sizeof j, "%s-journal", b);
  remove(j);
}

static void sq_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
    test_fail(__FILE__, __LINE__, "sqlite: %s: %s", sql, err ? err : "?");
  sqlite3_free(err);
}

static long long sq_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static int sq_ok(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    ok = !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  return ok;
}

static long long sh_int(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  long long v = -1;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
    v = shale_column_int64(st, 0);
  shale_finalize(st);
  return v;
}

static void make_pair(const char *a, const char *b) {
  sqlite3 *db = NULL;
  CHECK_EQ(sqlite3_open(a, &db), SQLITE_OK);
  char sql[800];
  snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
  sq_exec(db, sql);
  sq_exec(db,
          "CREATE TABLE main.c(n); INSERT INTO main.c VALUES (0); CREATE TABLE main.t(x);"
          "CREATE TABLE b.bc(n); INSERT INTO b.bc VALUES (0); CREATE TABLE b.bt(x)");
  sqlite3_close(db);
}

/* Count files in dir whose name contains "-mj". */
static int super_files(const char *any_path) {
  char d[600];
  snprintf(d, sizeof d, "%s", any_path);
  char *slash = strrchr(d, '/');
  if (!slash) return 0;
  *slash = 0;
  DIR *dir = opendir(d);
  if (!dir) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL)
    if (strstr(e->d_name, "-mj")) n++;
  closedir(dir);
  return n;
}

TEST(super_journal_normal_commit) {
  char a[600], b[600], sql[800];
  paths("sjn", a, b, sizeof a);
  make_pair(a, b);
  shale *db = NULL;
  CHECK_OK(shale_open(a, &db));
  snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
  CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
  for (int i = 0; i < 5; i++)
    CHECK_OK(shale_exec(db,
                        "BEGIN; UPDATE main.c SET n = n + 1; UPDATE b.bc SET n = n + 1;"
                        "INSERT INTO main.t VALUES (randomblob(5000));"
                        "INSERT INTO b.bt VALUES (randomblob(5000)); COMMIT",
                        NULL, NULL, NULL));
  /* a transaction rolled back after writing both */
  CHECK_OK(shale_exec(db, "BEGIN; UPDATE main.c SET n = 100; UPDATE b.bc SET n = 100; ROLLBACK",
                      NULL, NULL, NULL));
  CHECK_EQ(sh_int(db, "SELECT n FROM main.c"), 5);
  CHECK_EQ(sh_int(db, "SELECT n FROM b.bc"), 5);
  CHECK_EQ(super_files(a), 0);
  shale_close(db);
  sqlite3 *r = NULL;
  CHECK_EQ(sqlite3_open(a, &r), SQLITE_OK);
  sq_exec(r, sql);
  CHECK_EQ(sq_int(r, "SELECT n FROM main.c"), 5);
  CHECK_EQ(sq_int(r, "SELECT n FROM b.bc"), 5);
  CHECK(sq_ok(r, "PRAGMA main.integrity_check"));
  CHECK(sq_ok(r, "PRAGMA b.integrity_check"));
  sqlite3_close(r);
}

/* autocommit: one UPDATE statement writes both files through a TEMP
 * trigger (the Vm commits them itself); else explicit BEGIN ... COMMIT. */
static void child_loop(const char *a, const char *b, int autocommit) {
  shale *db = NULL;
  if (shale_open(a, &db) != SHALE_OK) _exit(3);
  char sql[800];
  snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
  if (shale_exec(db, sql, NULL, NULL, NULL) != SHALE_OK) _exit(4);
  shale_exec(db, "PRAGMA main.synchronous=FULL; PRAGMA b.synchronous=FULL", NULL, NULL, NULL);
  if (autocommit) {
    if (shale_exec(db,
                   "CREATE TEMP TRIGGER both AFTER UPDATE ON main.c BEGIN "
                   "UPDATE bc SET n = n + 1; "
                   "INSERT INTO t VALUES (randomblob(3000 + abs(random()) % 9000)); "
                   "INSERT INTO bt VALUES (randomblob(3000 + abs(random()) % 9000)); "
                   "DELETE FROM bt WHERE rowid % 5 = abs(random()) % 5; END",
                   NULL, NULL, NULL) != SHALE_OK)
      _exit(6);
    for (;;)
      if (shale_exec(db, "UPDATE main.c SET n = n + 1", NULL, NULL, NULL) != SHALE_OK) _exit(5);
  }
  for (;;) {
    int rc = shale_exec(db,
                        "BEGIN; UPDATE main.c SET n = n + 1; UPDATE b.bc SET n = n + 1;"
                        "INSERT INTO main.t VALUES (randomblob(3000 + abs(random()) % 9000));"
                        "INSERT INTO b.bt VALUES (randomblob(3000 + abs(random()) % 9000));"
                        "DELETE FROM main.t WHERE rowid % 7 = abs(random()) % 7;"
                        "DELETE FROM b.bt WHERE rowid % 5 = abs(random()) % 5; COMMIT",
                        NULL, NULL, NULL);
    if (rc != SHALE_OK) _exit(5);
  }
}

static void sigkill_rounds(const char *tag, int autocommit) {
  char a[600], b[600], sql[800];
  paths(tag, a, b, sizeof a);
  make_pair(a, b);
  snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
  uint64_t seed = test_seed();
  int rounds = test_long() ? 200 : 30, killed = 0;
  long long last = 0;
  for (int r = 0; r < rounds; r++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) child_loop(a, b, autocommit);
    usleep((useconds_t)(2000 + test_rand(&seed) % 40000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      killed++;
    else
      test_fail(__FILE__, __LINE__, "child ended with status %d", status);
    long long na, nb;
    if (r % 2 == 0) {
      sqlite3 *q = NULL;
      CHECK_EQ(sqlite3_open(a, &q), SQLITE_OK);
      sq_exec(q, sql);
      na = sq_int(q, "SELECT n FROM main.c");
      nb = sq_int(q, "SELECT n FROM b.bc");
      CHECK(sq_ok(q, "PRAGMA main.integrity_check"));
      CHECK(sq_ok(q, "PRAGMA b.integrity_check"));
      sqlite3_close(q);
    } else {
      shale *s = NULL;
      CHECK_OK(shale_open(a, &s));
      CHECK_OK(shale_exec(s, sql, NULL, NULL, NULL));
      na = sh_int(s, "SELECT n FROM main.c");
      nb = sh_int(s, "SELECT n FROM b.bc");
      shale_close(s);
      sqlite3 *q = NULL;
      CHECK_EQ(sqlite3_open(a, &q), SQLITE_OK);
      sq_exec(q, sql);
      CHECK(sq_ok(q, "PRAGMA main.integrity_check"));
      CHECK(sq_ok(q, "PRAGMA b.integrity_check"));
      sqlite3_close(q);
    }
    if (na != nb)
      test_fail(__FILE__, __LINE__, "round %d: main.c.n = %lld, b.bc.n = %lld", r, na, nb);
    CHECK(na >= last);
    last = na;
  }
  CHECK_EQ(killed, rounds);
  CHECK(last > 0);
}

TEST(super_journal_sigkill) { sigkill_rounds("sjk", 0); }

TEST(super_journal_sigkill_autocommit) { sigkill_rounds("sja", 1); }

/* An I/O error at the n-th write or sync of a two-file COMMIT (both files
 * and the super-journal go through the fault VFS: ATTACH uses the main
 * database's VFS), for growing n, with and without a power loss right
 * after: the files hold the transaction in both or in neither, the
 * connection is back in autocommit mode after a failure, and both files
 * pass the reference's integrity_check. */
TEST(super_journal_faults) {
  char a[600], b[600], sql[800];
  paths("sjf", a, b, sizeof a);
  snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
  OsVfs *fv = os_fault_vfs_create("sjfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  int kinds[2] = {OS_FAULT_WRITE, OS_FAULT_SYNC};
  int failures = 0, successes = 0;
  for (int power = 0; power < 2; power++) {
    for (int k = 0; k < 2; k++) {
      paths("sjf", a, b, sizeof a);
      make_pair(a, b);
      long long expect = 0;
      for (long n = 1; n < 400; n++) {
        shale *db = NULL;
        CHECK_OK(shale_open_v2(a, &db, SHALE_OPEN_READWRITE, "sjfault"));
        CHECK_OK(shale_exec(db, sql, NULL, NULL, NULL));
        CHECK_OK(shale_exec(db,
                            "BEGIN; UPDATE main.c SET n = n + 1; UPDATE b.bc SET n = n + 1;"
                            "INSERT INTO main.t VALUES (randomblob(6000));"
                            "INSERT INTO b.bt VALUES (randomblob(6000))",
                            NULL, NULL, NULL));
        os_fault_arm(fv, kinds[k], n, 0);
        int rc = shale_exec(db, "COMMIT", NULL, NULL, NULL);
        os_fault_arm(fv, kinds[k], 0, 0);
        if (rc != SHALE_OK) {
          failures++;
          CHECK_EQ(shale_get_autocommit(db), 1);
          if (power) os_fault_power_loss(fv, 0, 0);
        }
        shale_close(db);
        sqlite3 *q = NULL;
        CHECK_EQ(sqlite3_open(a, &q), SQLITE_OK);
        sq_exec(q, sql);
        long long na = sq_int(q, "SELECT n FROM main.c"), nb = sq_int(q, "SELECT n FROM b.bc");
        CHECK(sq_ok(q, "PRAGMA main.integrity_check"));
        CHECK(sq_ok(q, "PRAGMA b.integrity_check"));
        sqlite3_close(q);
        if (na != nb)
          test_fail(__FILE__, __LINE__, "power %d kind %d n %ld: %lld vs %lld", power, k, n, na,
                    nb);
        if (rc == SHALE_OK) {
          CHECK_EQ(na, expect + 1);
          successes++;
          break;
        }
        if (!(na == expect || (power && na == expect + 1)))
          test_fail(__FILE__, __LINE__, "power %d kind %d n %ld: %lld, expected %lld", power, k, n,
                    na, expect);
        expect = na;
      }
    }
  }
  CHECK(failures > 10);
  CHECK_EQ(successes, 4);
  os_fault_vfs_destroy(fv);
}
