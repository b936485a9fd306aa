/*
 * test_interop_locks.c -- a Shale process and a SQLite process on one file.
 *
 * The locks are SQLite's byte ranges, so the two engines must exclude each
 * other exactly as two SQLite connections would. POSIX locks belong to a
 * process, so SQLite runs in a forked child, driven step by step over pipes:
 *  - SQLite holds RESERVED (a pending write): Shale still reads the old
 *    content, cannot start a write (SHALE_BUSY), and sees the new row once
 *    SQLite has committed (its cache notices the change counter);
 *  - Shale holds RESERVED: SQLite's BEGIN IMMEDIATE is SQLITE_BUSY and it
 *    reads the old content; after Shale's commit it sees the new row;
 *  - SQLite holds SHARED (an open read): Shale's commit cannot take
 *    EXCLUSIVE (SHALE_BUSY, still in its transaction) and goes through once
 *    the reader is gone.
 *
 * Invariants:
 *  1. Every step is acknowledged over a pipe before the other side goes on,
 *     so the interleaving is fixed; no step depends on timing.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../common/twork.h"
#include "../test.h"

typedef struct Peer {
  pid_t pid;
  int to, from; /* pipes: commands to the child, answers from it */
} Peer;

/* The child: runs each command line it gets as SQL (or a few verbs) and
 * answers with one int64 (a result code, or a count). */
static void child_loop(const char *path, int in, int out) {
  sqlite3 *db = NULL;
  sqlite3_stmt *reader = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) _exit(3);
  char cmd[256];
  for (;;) {
    int n = 0;
    char c;
    while (n < (int)sizeof cmd - 1 && read(in, &c, 1) == 1 && c != '\n') cmd[n++] = c;
    if (n == 0) _exit(0);
    cmd[n] = 0;
    int64_t ans;
    if (!strcmp(cmd, "count")) {
      ans = tsql_int(db, "SELECT count(*) FROM tw");
    } else if (!strcmp(cmd, "read-open")) { /* keep a read transaction open */
      ans = sqlite3_prepare_v2(db, "SELECT a FROM tw", -1, &reader, NULL);
      if (ans == SQLITE_OK) ans = sqlite3_step(reader) == SQLITE_ROW ? 0 : 1;
    } else if (!strcmp(cmd, "read-close")) {
      ans = sqlite3_finalize(reader);
      reader = NULL;
    } else {
      ans = sqlite3_exec(db, cmd, NULL, NULL, NULL);
    }
    if (write(out, &ans, sizeof ans) != sizeof ans) _exit(4);
  }
}

static Peer peer_start(const char *path) {
  int a[2], b[2];
  Peer p = {-1, -1, -1};
  if (pipe(a) || pipe(b)) return p;
  fflush(NULL);
  p.pid = fork();
  if (p.pid == 0) {
    close(a[1]);
    close(b[0]);
    child_loop(path, a[0], b[1]);
  }
  close(a[0]);
  close(b[1]);
  p.to = a[1];
  p.from = b[0];
  return p;
}

static int64_t peer(Peer *p, const char *cmd) {
  int64_t ans = -999;
  if (write(p->to, cmd, strlen(cmd)) < 0 || write(p->to, "\n", 1) != 1) return ans;
  if (read(p->from, &ans, sizeof ans) != sizeof ans) return -998;
  return ans;
}

static void peer_stop(Peer *p) {
  int status;
  close(p->to);
  close(p->from);
  while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void make_db(const char *path, TwModel *m) {
  Tdb *db;
  tw_model_reset(m);
  CHECK_OK(tdb_open(NULL, path, 1024, &db));
  CHECK_OK(tw_create(db));
  CHECK_OK(tdb_begin(db));
  CHECK_OK(tw_apply(db, m, 1, 50));
  CHECK_OK(tdb_commit(db));
  CHECK_OK(tdb_close(db));
}

static int64_t live(const TwModel *m) {
  int64_t n = 0;
  for (int k = 1; k <= TW_NKEYS; k++) n += m->ver[k] != 0;
  return n;
}

TEST(interop_locks_sqlite_writer) {
  static TwModel m;
  const char *path = tscratch_path("locks1.db");
  Tdb *db;
  int64_t n;
  make_db(path, &m);
  Peer p = peer_start(path);
  CHECK_EQ(peer(&p, "BEGIN IMMEDIATE"), SQLITE_OK);
  CHECK_EQ(peer(&p, "INSERT INTO tw(rowid, a, b, c) VALUES(100000, 1, 'sqlite', 2)"), SQLITE_OK);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(tw_bind(db));
  CHECK_OK(tdb_count(db, "tw", &n));
  CHECK_EQ(n, live(&m)); /* the uncommitted row is invisible */
  CHECK_RC(tdb_begin(db), SHALE_BUSY);
  CHECK_EQ(peer(&p, "COMMIT"), SQLITE_OK);
  CHECK_OK(tdb_count(db, "tw", &n));
  CHECK_EQ(n, live(&m) + 1);
  CHECK_OK(tdb_begin(db));
  CHECK_OK(tdb_delete(db, "tw", 100000));
  CHECK_OK(tdb_commit(db));
  CHECK_EQ(peer(&p, "count"), live(&m));
  peer_stop(&p);
  char *rep = NULL;
  CHECK_OK(tdb_check(db, &rep));
  CHECK(rep == NULL);
  shale_free(rep);
  CHECK_OK(tdb_close(db));
}

TEST(interop_locks_shale_writer) {
  static TwModel m;
  const char *path = tscratch_path("locks2.db");
  char msg[512];
  Tdb *db;
  make_db(path, &m);
  Peer p = peer_start(path);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(tw_bind(db));
  int64_t old = live(&m);
  CHECK_OK(tdb_begin(db));
  CHECK_OK(tw_apply(db, &m, 2, 30));
  CHECK(live(&m) != old);
  CHECK_EQ(peer(&p, "BEGIN IMMEDIATE"), SQLITE_BUSY);
  CHECK_EQ(peer(&p, "count"), old); /* SQLite reads the committed state */
  CHECK_OK(tdb_commit(db));
  CHECK_EQ(peer(&p, "count"), live(&m));
  peer_stop(&p);
  CHECK_OK(tdb_close(db));
  if (tw_verify_sqlite(path, &m, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "%s", msg);
}

TEST(interop_locks_sqlite_reader_blocks_commit) {
  static TwModel m, before;
  const char *path = tscratch_path("locks3.db");
  char msg[512];
  Tdb *db;
  make_db(path, &m);
  before = m;
  Peer p = peer_start(path);
  CHECK_EQ(peer(&p, "read-open"), 0);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(tw_bind(db));
  CHECK_OK(tdb_begin(db)); /* RESERVED is compatible with a reader */
  CHECK_OK(tw_apply(db, &m, 2, 30));
  CHECK_RC(tdb_commit(db), SHALE_BUSY); /* EXCLUSIVE is not */
  CHECK(tdb_in_txn(db));
  CHECK_EQ(peer(&p, "count"), live(&before));
  CHECK_EQ(peer(&p, "read-close"), SQLITE_OK);
  CHECK_OK(tdb_commit(db));
  CHECK_EQ(peer(&p, "count"), live(&m));
  peer_stop(&p);
  CHECK_OK(tdb_close(db));
  if (tw_verify_sqlite(path, &m, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "%s", msg);
}

TEST(interop_locks_shale_reader_blocks_commit) {
  static TwModel m;
  const char *path = tscratch_path("locks4.db");
  Tdb *db;
  int64_t n;
  make_db(path, &m);
  Peer p = peer_start(path);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(tw_bind(db));
  CHECK_OK(btree_begin(tdb_btree(db), BTREE_TXN_READ)); /* SHARED, held */
  CHECK_EQ(peer(&p, "BEGIN IMMEDIATE"), SQLITE_OK);
  CHECK_EQ(peer(&p, "INSERT INTO tw(rowid, a, b, c) VALUES(100000, 1, 'sqlite', 2)"), SQLITE_OK);
  CHECK_EQ(peer(&p, "COMMIT"), SQLITE_BUSY); /* needs EXCLUSIVE */
  CHECK_OK(tdb_count(db, "tw", &n));
  CHECK_EQ(n, live(&m));
  CHECK_OK(btree_commit(tdb_btree(db))); /* ends the read transaction */
  CHECK_EQ(peer(&p, "COMMIT"), SQLITE_OK);
  CHECK_OK(tdb_count(db, "tw", &n));
  CHECK_EQ(n, live(&m) + 1);
  peer_stop(&p);
  CHECK_OK(tdb_close(db));
}

/* A write that fails with SHALE_BUSY leaves no lock behind (tdb ends the
 * read transaction btree_begin started): SQLite can commit right after. */
TEST(interop_locks_busy_begin_leaves_no_lock) {
  static TwModel m;
  const char *path = tscratch_path("locks5.db");
  Tdb *db;
  make_db(path, &m);
  Peer p = peer_start(path);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_OK(tw_bind(db));
  CHECK_EQ(peer(&p, "BEGIN IMMEDIATE"), SQLITE_OK);
  CHECK_RC(tdb_begin(db), SHALE_BUSY);
  CHECK_EQ(btree_txn_state(tdb_btree(db)), PAGER_TXN_NONE);
  CHECK_EQ(peer(&p, "INSERT INTO tw(rowid, a, b, c) VALUES(100000, 1, 'sqlite', 2)"), SQLITE_OK);
  CHECK_EQ(peer(&p, "COMMIT"), SQLITE_OK);
  peer_stop(&p);
  CHECK_OK(tdb_close(db));
}

/* After btree_begin(WRITE) fails with SHALE_BUSY, whatever read transaction
 * the Btree reports must really hold its SHARED lock: SQLite cannot commit
 * under it (or, with no read transaction left, SQLite can). */
TEST(interop_locks_busy_begin_state_is_true) {
  static TwModel m;
  const char *path = tscratch_path("locks6.db");
  Tdb *db;
  make_db(path, &m);
  Peer p = peer_start(path);
  CHECK_OK(tdb_open(NULL, path, 0, &db));
  CHECK_EQ(peer(&p, "BEGIN IMMEDIATE"), SQLITE_OK);
  CHECK_EQ(peer(&p, "INSERT INTO tw(rowid, a, b, c) VALUES(100000, 1, 'sqlite', 2)"), SQLITE_OK);
  CHECK_RC(btree_begin(tdb_btree(db), BTREE_TXN_WRITE), SHALE_BUSY);
  int state = btree_txn_state(tdb_btree(db));
  int64_t commit = peer(&p, "COMMIT");
  if (state == PAGER_TXN_READ && commit != SQLITE_BUSY)
    test_fail(__FILE__, __LINE__, "Btree reports a read transaction but SQLite committed (%d)",
              (int)commit);
  if (state == PAGER_TXN_NONE) CHECK_EQ(commit, SQLITE_OK);
  printf("  after a busy begin: txn state %d, SQLite COMMIT %d\n", state, (int)commit);
  btree_rollback(tdb_btree(db));
  if (commit != SQLITE_OK) CHECK_EQ(peer(&p, "COMMIT"), SQLITE_OK);
  peer_stop(&p);
  CHECK_OK(tdb_close(db));
}
