/*
 * test_interop_hot_journal.c -- Shale rolls back hot journals that SQLite
 * left behind.
 *
 * SQLite fills a database, then, in a transaction with a tiny page cache
 * (so that it spills: it syncs the journal and overwrites database pages
 * before commit), deletes, updates and inserts many rows. The hot journal is
 * captured two ways: (a) the database and its -journal are copied while the
 * transaction is open (then SQLite rolls back and closes), (b) a child
 * process doing the transaction is killed with SIGKILL. Shale opens the file,
 * must roll the journal back (and remove it), and then Shale and SQLite must
 * both see exactly the content from before the transaction. Journal modes
 * DELETE, TRUNCATE and PERSIST; page sizes 1024 and 4096 (and 512, 65536);
 * synchronous FULL, NORMAL and OFF (whose journal has nRec = 0xFFFFFFFF).
 *
 * Invariants:
 *  1. Each case checks that the captured database file differs from the
 *     pre-transaction file, so the rollback is really exercised.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tshape.h"
#include "../common/tsql.h"
#include "../test.h"
#include "interop_rows.h"

static int copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = a && b;
  while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
  if (a) fclose(a);
  if (b && fclose(b)) ok = 0;
  return ok ? 0 : -1;
}

static int same_file(const char *x, const char *y) {
  FILE *a = fopen(x, "rb"), *b = fopen(y, "rb");
  int same = a && b;
  while (same) {
    int c = fgetc(a), d = fgetc(b);
    if (c != d) same = 0;
    if (c == EOF || d == EOF) break;
  }
  if (a) fclose(a);
  if (b) fclose(b);
  return same;
}

static const char *jmode_name(int j) { return j == 0 ? "DELETE" : j == 1 ? "TRUNCATE" : "PERSIST"; }

/* Fill path with SQLite; m gets the model. */
static void make_db(const char *path, int psz, int64_t rows, TsModel *m) {
  sqlite3 *sdb = tsql_open(path);
  TsSqlite ss;
  TsExec x;
  ts_model_init(m, rows * 2);
  CHECK(sdb != NULL);
  if (!sdb) return;
  CHECK_EQ(ts_create_sqlite(sdb, psz), SQLITE_OK);
  CHECK_EQ(ts_exec_sqlite(&x, &ss, sdb), SQLITE_OK);
  CHECK_EQ(ts_fill(m, &x, rows), SQLITE_OK);
  ts_exec_sqlite_done(&ss);
  sqlite3_close(sdb);
}

static int nop(void *ctx) { return 0; }

/* Run the modifying transaction on sdb and leave it open. */
static const char *const syncs[3] = {"PRAGMA synchronous=FULL", "PRAGMA synchronous=NORMAL",
                                     "PRAGMA synchronous=OFF"};
static int sync_level; /* index into syncs[] for the next open_txn */

static int open_txn(sqlite3 *sdb, const TsModel *m, int jmode, int64_t rows) {
  static const char *const pragmas[3] = {
      "PRAGMA journal_mode=DELETE", "PRAGMA journal_mode=TRUNCATE", "PRAGMA journal_mode=PERSIST"};
  TsModel scratch;
  TsSqlite ss;
  TsExec x;
  int rc = tsql_exec(sdb, pragmas[jmode]);
  if (rc == SQLITE_OK) rc = tsql_exec(sdb, "PRAGMA cache_size=5");
  if (rc == SQLITE_OK) rc = tsql_exec(sdb, syncs[sync_level]);
  if (rc == SQLITE_OK) rc = ts_exec_sqlite(&x, &ss, sdb);
  if (rc) return rc;
  x.begin = x.commit = nop;
  scratch = *m;
  for (int t = 0; t < TS_NTAB; t++) {
    scratch.ver[t] = malloc(sizeof(uint32_t) * m->cap[t]);
    memcpy(scratch.ver[t], m->ver[t], sizeof(uint32_t) * m->cap[t]);
  }
  rc = tsql_exec(sdb, "BEGIN");
  if (rc == SQLITE_OK) rc = ts_delete_some(&scratch, &x, 3, 31);
  if (rc == SQLITE_OK) rc = ts_update_insert(&scratch, &x, 3, rows / 2, 32);
  ts_exec_sqlite_done(&ss);
  ts_model_free(&scratch);
  return rc;
}

/* Shale opens the file with the hot journal; then both engines must see m. */
static void check_rolled_back(const char *path, const char *pre, const TsModel *m,
                              const char *what) {
  char jpath[600], msg[1024];
  Tdb *db;
  snprintf(jpath, sizeof jpath, "%s-journal", path);
  CHECK(file_size(jpath) > 0);
  CHECK(!same_file(path, pre)); /* the transaction really wrote to the file */
  int rc = tdb_open(NULL, path, 0, &db);
  CHECK_OK(rc);
  if (rc) return;
  CHECK_OK(ts_bind_shale(db));
  if (ts_verify_shale(db, m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "%s: Shale: %s", what, msg);
  CHECK_OK(tdb_close(db));
  if (file_size(jpath) > 0 && header_u32(jpath, 0) != 0)
    test_fail(__FILE__, __LINE__, "%s: journal still hot after Shale's rollback", what);
  CHECK(same_file(path, pre)); /* a rollback restores the file byte for byte */
  if (ts_verify_sqlite(path, m, 100, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "%s: SQLite: %s", what, msg);
}

static void copy_case(int psz, int jmode) {
  char what[64], name[64], jfrom[600], jto[600];
  TsModel m;
  int64_t rows = interop_rows() / 20;
  snprintf(what, sizeof what, "copy, page size %d, %s, %s", psz, jmode_name(jmode),
           syncs[sync_level]);
  snprintf(name, sizeof name, "hj-src-%d-%d-%d.db", psz, jmode, sync_level);
  char src[512], pre[512], dst[512];
  snprintf(src, sizeof src, "%s", tscratch_path(name));
  snprintf(name, sizeof name, "hj-pre-%d-%d-%d.db", psz, jmode, sync_level);
  snprintf(pre, sizeof pre, "%s", tscratch_path(name));
  snprintf(name, sizeof name, "hj-copy-%d-%d-%d.db", psz, jmode, sync_level);
  snprintf(dst, sizeof dst, "%s", tscratch_path(name));
  make_db(src, psz, rows, &m);
  CHECK_OK(copy_file(src, pre));

  sqlite3 *sdb = tsql_open(src);
  CHECK(sdb != NULL);
  if (!sdb) return;
  CHECK_EQ(open_txn(sdb, &m, jmode, rows), SQLITE_OK);
  snprintf(jfrom, sizeof jfrom, "%s-journal", src);
  snprintf(jto, sizeof jto, "%s-journal", dst);
  CHECK_OK(copy_file(src, dst));
  CHECK_OK(copy_file(jfrom, jto));
  if (sync_level == 2) CHECK_EQ(header_u32(jto, 8), 0xFFFFFFFFu); /* nRec: to end of file */
  tsql_exec(sdb, "ROLLBACK");
  sqlite3_close(sdb);
  check_rolled_back(dst, pre, &m, what);
  ts_model_free(&m);
}

static void kill_case(int psz, int jmode) {
  char what[64], name[64], path[512], pre[512];
  TsModel m;
  int64_t rows = interop_rows() / 20;
  int fd[2];
  snprintf(what, sizeof what, "SIGKILL, page size %d, %s, %s", psz, jmode_name(jmode),
           syncs[sync_level]);
  snprintf(name, sizeof name, "hk-%d-%d.db", psz, jmode);
  snprintf(path, sizeof path, "%s", tscratch_path(name));
  snprintf(name, sizeof name, "hk-pre-%d-%d.db", psz, jmode);
  snprintf(pre, sizeof pre, "%s", tscratch_path(name));
  make_db(path, psz, rows, &m);
  CHECK_OK(copy_file(path, pre));
  CHECK(pipe(fd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    sqlite3 *sdb = tsql_open(path);
    char ok = sdb && open_txn(sdb, &m, jmode, rows) == SQLITE_OK ? 'y' : 'n';
    if (write(fd[1], &ok, 1) != 1) _exit(2);
    for (;;) pause(); /* wait for the SIGKILL, transaction open */
  }
  close(fd[1]);
  char ok = 0;
  CHECK(read(fd[0], &ok, 1) == 1);
  CHECK_EQ(ok, 'y');
  close(fd[0]);
  kill(pid, SIGKILL);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  CHECK(WIFSIGNALED(status));
  check_rolled_back(path, pre, &m, what);
  ts_model_free(&m);
}

TEST(interop_hot_journal_copy) {
  sync_level = 0;
  for (int j = 0; j < 3; j++) {
    copy_case(1024, j);
    copy_case(4096, j);
  }
  copy_case(512, 0);
  copy_case(65536, 0);
}

/* synchronous=NORMAL (one journal sync) and OFF (nRec = 0xFFFFFFFF: the
 * records run to the end of the file). */
TEST(interop_hot_journal_copy_sync_levels) {
  for (int j = 0; j < 3; j++) {
    sync_level = 1;
    copy_case(1024, j);
    sync_level = 2;
    copy_case(4096, j);
  }
  sync_level = 0;
}

TEST(interop_hot_journal_sigkill) {
  sync_level = 0;
  for (int j = 0; j < 3; j++) {
    kill_case(1024, j);
    kill_case(4096, j);
  }
}
