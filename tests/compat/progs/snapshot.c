/* snapshot.c -- WAL snapshots (sqlite3_snapshot_get/open/cmp/free/recover)
 * as SQLite documents them: two connections on one WAL file, a snapshot
 * taken, more written, the old data read back through the snapshot; the
 * refusals (not WAL, autocommit, no such schema, running statements, a
 * write transaction); SQLITE_ERROR_SNAPSHOT once a checkpoint went past the
 * snapshot or the log restarted (RESTART, TRUNCATE, a writer after a full
 * checkpoint); cmp's order; recover after the wal-index was rebuilt; and a
 * real SQLite process (/usr/bin/sqlite3 on the reference library) writing
 * and checkpointing meanwhile.
 *
 * Debian's library is built without SQLITE_ENABLE_SNAPSHOT, so the calls
 * are looked up at run time: on a library without them the program says so
 * and stops (exit 0 on the reference, 1 on Shale's). */
#include <dlfcn.h>
#include <unistd.h>

#include "prog.h"

typedef int (*GetFn)(sqlite3 *, const char *, sqlite3_snapshot **);
typedef int (*OpenFn)(sqlite3 *, const char *, sqlite3_snapshot *);
typedef void (*FreeFn)(sqlite3_snapshot *);
typedef int (*CmpFn)(sqlite3_snapshot *, sqlite3_snapshot *);
typedef int (*RecoverFn)(sqlite3 *, const char *);

static GetFn snap_get;
static OpenFn snap_open;
static FreeFn snap_free;
static CmpFn snap_cmp;
static RecoverFn snap_recover;

static int load_api(void) {
  snap_get = (GetFn)dlsym(RTLD_DEFAULT, "sqlite3_snapshot_get");
  snap_open = (OpenFn)dlsym(RTLD_DEFAULT, "sqlite3_snapshot_open");
  snap_free = (FreeFn)dlsym(RTLD_DEFAULT, "sqlite3_snapshot_free");
  snap_cmp = (CmpFn)dlsym(RTLD_DEFAULT, "sqlite3_snapshot_cmp");
  snap_recover = (RecoverFn)dlsym(RTLD_DEFAULT, "sqlite3_snapshot_recover");
  return snap_get && snap_open && snap_free && snap_cmp && snap_recover;
}

/* One integer from a query (-1 on error). */
static long long one(sqlite3 *db, const char *sql) {
  sqlite3_stmt *q = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    v = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return v;
}
static long long rows(sqlite3 *db) { return one(db, "SELECT count(*) FROM t"); }

/* A snapshot of db's newest state (BEGIN, get, COMMIT). */
static sqlite3_snapshot *take(sqlite3 *db) {
  sqlite3_snapshot *s = NULL;
  EXEC_OK(db, "BEGIN");
  EXPECT_INT(snap_get(db, "main", &s), SQLITE_OK);
  EXEC_OK(db, "COMMIT");
  return s;
}

/* Rows seen at snapshot s by db (BEGIN, open, count, COMMIT); -1 when the
 * open fails with code `want` (checked). */
static long long rows_at(sqlite3 *db, sqlite3_snapshot *s, int want) {
  EXEC_OK(db, "BEGIN");
  int rc = snap_open(db, "main", s);
  EXPECT_INT(rc, want);
  long long n = rc == SQLITE_OK ? rows(db) : -1;
  if (rc != SQLITE_OK) EXPECT_INT(sqlite3_txn_state(db, "main"), SQLITE_TXN_NONE);
  EXEC_OK(db, "COMMIT");
  return n;
}

/* The real SQLite (its shell on the reference library) runs sql on path. */
static int sqlite_shell(const char *path, const char *sql) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "env -u LD_LIBRARY_PATH sqlite3 '%s' \"%s\" >/dev/null", path, sql);
  return system(cmd);
}

/* SQLite's shell runs PRAGMA wal_checkpoint(mode) on path until it is not
 * busy ("0|..."): a Shale connection lets go of a WAL lock's fcntl a moment
 * after its transaction ended (lingering locks, src/os/os_unix.c), and the
 * shell has no busy handler, so its first try may find the lock still held
 * on a loaded machine, as it would find a live reader's. 0 when done. */
static int sqlite_checkpoint(const char *path, const char *mode) {
  char cmd[2048], out[64];
  snprintf(cmd, sizeof cmd, "env -u LD_LIBRARY_PATH sqlite3 '%s' \"PRAGMA wal_checkpoint(%s)\"",
           path, mode);
  for (int i = 0; i < 200; i++) {
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    int got = fgets(out, sizeof out, f) != NULL;
    if (pclose(f) != 0) return -1;
    if (got && out[0] == '0') return 0;
    usleep(10000);
  }
  return -1;
}

static void refusals(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/rollback.db", dir);
  sqlite3 *db = NULL, *mem = NULL;
  sqlite3_snapshot *s = NULL;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  /* not WAL: an error, the read transaction started stays */
  EXEC_OK(db, "BEGIN");
  EXPECT_INT(snap_get(db, "main", &s), SQLITE_ERROR);
  EXPECT(s == NULL);
  EXPECT_INT(snap_recover(db, "main"), SQLITE_ERROR);
  EXEC_OK(db, "COMMIT");
  EXPECT_INT(snap_recover(db, "main"), SQLITE_ERROR);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  /* an in-memory database has no log */
  EXPECT_INT(sqlite3_open(":memory:", &mem), SQLITE_OK);
  EXEC_OK(mem, "BEGIN");
  EXPECT_INT(snap_get(mem, "main", &s), SQLITE_ERROR);
  EXEC_OK(mem, "COMMIT");
  EXPECT_INT(sqlite3_close(mem), SQLITE_OK);
}

/* get/open/cmp on two connections; the refusals of get and open. */
static void basics(sqlite3 *db1, sqlite3 *db2) {
  sqlite3_snapshot *s1 = NULL, *s2 = NULL, *bad = NULL;
  EXPECT_INT(snap_get(db1, "main", &bad), SQLITE_ERROR); /* autocommit */
  EXEC_OK(db1, "BEGIN");
  EXPECT_INT(snap_get(db1, NULL, &bad), SQLITE_ERROR);
  EXPECT_INT(snap_get(db1, "temp", &bad), SQLITE_ERROR);
  EXPECT_INT(snap_get(db1, "nosuch", &bad), SQLITE_ERROR);
  EXPECT(bad == NULL);
  EXPECT_INT(sqlite3_txn_state(db1, "main"), SQLITE_TXN_NONE);
  EXPECT_INT(snap_get(db1, "MAIN", &s1), SQLITE_OK); /* starts the read transaction */
  EXPECT_INT(sqlite3_txn_state(db1, "main"), SQLITE_TXN_READ);
  EXEC_OK(db1, "COMMIT");
  EXPECT(s1 != NULL);
  EXEC_OK(db1, "INSERT INTO t VALUES (2)");
  s2 = take(db1);
  EXPECT(snap_cmp(s1, s2) < 0);
  EXPECT(snap_cmp(s2, s1) > 0);
  EXPECT_INT(snap_cmp(s1, s1), 0);
  /* a copy is the same snapshot (the object is plain bytes) */
  sqlite3_snapshot copy = *s1;
  EXPECT_INT(snap_cmp(&copy, s1), 0);

  /* the writer's own write transaction refuses get and open */
  EXEC_OK(db1, "BEGIN; INSERT INTO t VALUES (99)");
  EXPECT_INT(snap_get(db1, "main", &bad), SQLITE_ERROR);
  EXPECT_INT(snap_open(db1, "main", s1), SQLITE_ERROR);
  EXEC_OK(db1, "ROLLBACK");

  /* db2 reads the past: a fresh read transaction, then one replaced */
  EXPECT_INT(rows(db2), 2);
  EXPECT_INT(snap_open(db2, "main", s1), SQLITE_ERROR); /* autocommit */
  EXPECT_INT(rows_at(db2, s1, SQLITE_OK), 1);
  EXPECT_INT(rows_at(db2, &copy, SQLITE_OK), 1);
  EXEC_OK(db2, "BEGIN");
  EXPECT_INT(rows(db2), 2);
  EXPECT_INT(snap_open(db2, "main", s1), SQLITE_OK);
  EXPECT_INT(rows(db2), 1);
  {
    sqlite3_snapshot *again = NULL;
    EXPECT_INT(snap_get(db2, "main", &again), SQLITE_OK); /* the snapshot in use */
    if (again) EXPECT_INT(snap_cmp(again, s1), 0);
    snap_free(again);
  }
  /* no writing on an old snapshot */
  {
    char *err = NULL;
    EXPECT_INT(sqlite3_exec(db2, "INSERT INTO t VALUES (3)", NULL, NULL, &err), SQLITE_BUSY);
    EXPECT_INT(sqlite3_extended_errcode(db2), SQLITE_BUSY_SNAPSHOT);
    sqlite3_free(err);
  }
  EXPECT_INT(snap_open(db2, "main", s2), SQLITE_OK); /* forward again */
  EXPECT_INT(rows(db2), 2);
  /* a running statement keeps its read transaction */
  {
    sqlite3_stmt *q = NULL;
    EXPECT_INT(sqlite3_prepare_v2(db2, "SELECT x FROM t", -1, &q, NULL), SQLITE_OK);
    EXPECT_INT(sqlite3_step(q), SQLITE_ROW);
    EXPECT_INT(snap_open(db2, "main", s1), SQLITE_ERROR);
    sqlite3_finalize(q);
  }
  EXEC_OK(db2, "COMMIT");
  /* the newest state again after the snapshot's transaction */
  EXPECT_INT(rows(db2), 2);
  snap_free(s1);
  snap_free(s2);
  snap_free(NULL);
}

/* Checkpoints: one held back by a reader on a snapshot, then past it. */
static void checkpoints(sqlite3 *db1, sqlite3 *db2) {
  int nlog = -1, nckpt = -1;
  sqlite3_snapshot *a = take(db1);
  EXEC_OK(db1, "INSERT INTO t VALUES (10)");
  long long at_a = rows(db1) - 1;
  /* a reader on a keeps a checkpoint from copying what came after */
  EXEC_OK(db2, "BEGIN");
  EXPECT_INT(snap_open(db2, "main", a), SQLITE_OK);
  EXPECT_INT(rows(db2), at_a);
  EXPECT_INT(sqlite3_wal_checkpoint_v2(db1, "main", SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt),
             SQLITE_OK);
  EXPECT(nckpt < nlog);
  EXPECT_INT(rows(db2), at_a);
  EXEC_OK(db2, "COMMIT");
  EXPECT_INT(rows_at(db2, a, SQLITE_OK), at_a); /* still openable */
  /* with nobody reading, a checkpoint copies everything: a is gone */
  EXPECT_INT(sqlite3_wal_checkpoint_v2(db1, "main", SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt),
             SQLITE_OK);
  EXPECT_INT(nckpt, nlog);
  EXPECT_INT(rows_at(db2, a, SQLITE_ERROR_SNAPSHOT), -1);
  /* the newest state, taken after the checkpoint, is still there ... */
  sqlite3_snapshot *b = take(db1);
  EXPECT_INT(rows_at(db2, b, SQLITE_OK), at_a + 1);
  /* ... until a writer restarts the log */
  EXEC_OK(db1, "INSERT INTO t VALUES (11)");
  EXPECT_INT(rows_at(db2, b, SQLITE_ERROR_SNAPSHOT), -1);
  snap_free(a);
  snap_free(b);

  /* RESTART */
  a = take(db1);
  EXEC_OK(db1, "INSERT INTO t VALUES (12)");
  EXPECT_INT(rows_at(db2, a, SQLITE_OK), rows(db1) - 1);
  EXPECT_INT(sqlite3_wal_checkpoint_v2(db1, "main", SQLITE_CHECKPOINT_RESTART, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(rows_at(db2, a, SQLITE_ERROR_SNAPSHOT), -1);
  snap_free(a);

  /* TRUNCATE: even the newest snapshot goes (new salts) */
  a = take(db1);
  EXPECT_INT(rows_at(db2, a, SQLITE_OK), rows(db1));
  EXPECT_INT(sqlite3_wal_checkpoint_v2(db1, "main", SQLITE_CHECKPOINT_TRUNCATE, &nlog, &nckpt),
             SQLITE_OK);
  EXPECT_INT(nlog, 0);
  EXPECT_INT(rows_at(db2, a, SQLITE_ERROR_SNAPSHOT), -1);
  snap_free(a);
  /* a snapshot of the empty log after the truncation reads the file */
  sqlite3_snapshot *empty = take(db1);
  EXPECT(empty != NULL);
  long long before = rows(db1);
  EXEC_OK(db1, "INSERT INTO t VALUES (13)");
  EXPECT_INT(rows_at(db2, empty, SQLITE_OK), before);
  b = take(db1);
  EXPECT(snap_cmp(empty, b) < 0);
  snap_free(empty);
  snap_free(b);
}

/* The wal-index rebuilt from the log (every connection gone, -shm lost):
 * recovery counts every frame as checkpointed, recover gives back what the
 * database file does not have yet. */
static void recovery(const char *path) {
  sqlite3 *w = NULL, *r = NULL;
  char shm[600];
  snprintf(shm, sizeof shm, "%s-shm", path);
  EXPECT_INT(sqlite3_open(path, &w), SQLITE_OK);
  EXPECT_INT(sqlite3_db_config(w, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_wal_checkpoint_v2(w, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL),
             SQLITE_OK);
  EXEC_OK(w, "INSERT INTO t VALUES (20)");
  sqlite3_snapshot *a = take(w);
  long long at_a = rows(w);
  EXEC_OK(w, "INSERT INTO t VALUES (21); INSERT INTO t VALUES (22)");
  EXPECT_INT(sqlite3_close(w), SQLITE_OK);
  EXPECT_INT(unlink(shm), 0); /* the next open rebuilds the index */

  EXPECT_INT(sqlite3_open(path, &r), SQLITE_OK);
  EXPECT_INT(rows(r), at_a + 2);
  EXPECT_INT(rows_at(r, a, SQLITE_ERROR_SNAPSHOT), -1);
  EXEC_OK(r, "BEGIN");
  EXPECT_INT(rows(r), at_a + 2);
  EXPECT_INT(snap_recover(r, "main"), SQLITE_ERROR); /* a read transaction is open */
  EXEC_OK(r, "COMMIT");
  EXPECT_INT(snap_recover(r, "nosuch"), SQLITE_ERROR);
  EXPECT_INT(snap_recover(r, "main"), SQLITE_OK);
  EXPECT_INT(rows_at(r, a, SQLITE_OK), at_a);
  /* once checkpointed, recover cannot bring it back */
  EXPECT_INT(sqlite3_wal_checkpoint_v2(r, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(snap_recover(r, "main"), SQLITE_OK);
  EXPECT_INT(rows_at(r, a, SQLITE_ERROR_SNAPSHOT), -1);
  snap_free(a);
  EXPECT_INT(sqlite3_close(r), SQLITE_OK);
}

/* The real SQLite writes and checkpoints the same file between the calls. */
static void interop(const char *path) {
  sqlite3 *db = NULL, *rd = NULL;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  EXPECT_INT(sqlite3_open(path, &rd), SQLITE_OK);
  EXPECT(rows(rd) > 0);
  long long n0 = rows(db);
  /* the log is new (the last close deleted it): nothing to take yet */
  {
    sqlite3_snapshot *none = NULL;
    EXEC_OK(db, "BEGIN");
    EXPECT_INT(snap_get(db, "main", &none), SQLITE_ERROR);
    EXEC_OK(db, "COMMIT");
  }
  /* a snapshot of SQLite's commit, read after SQLite wrote again */
  EXPECT_INT(sqlite_shell(path, "INSERT INTO t VALUES (30)"), 0);
  sqlite3_snapshot *a = take(db);
  EXPECT_INT(sqlite_shell(path, "INSERT INTO t VALUES (31); INSERT INTO t VALUES (32)"), 0);
  EXPECT_INT(rows(db), n0 + 3);
  EXPECT_INT(rows_at(rd, a, SQLITE_OK), n0 + 1);
  /* SQLite checkpoints while Shale's reader holds a: not past it */
  EXEC_OK(rd, "BEGIN");
  EXPECT_INT(snap_open(rd, "main", a), SQLITE_OK);
  EXPECT_INT(sqlite_shell(path, "PRAGMA wal_checkpoint(PASSIVE)"), 0);
  EXPECT_INT(rows(rd), n0 + 1);
  EXEC_OK(rd, "COMMIT");
  EXPECT_INT(rows_at(rd, a, SQLITE_OK), n0 + 1);
  sqlite3_snapshot *b = take(db);
  EXPECT_INT(sqlite_shell(path, "INSERT INTO t VALUES (33)"), 0);
  EXPECT_INT(rows_at(rd, b, SQLITE_OK), n0 + 3);
  if (a && b) EXPECT(snap_cmp(a, b) < 0);
  /* SQLite's own TRUNCATE checkpoint ends both */
  EXPECT_INT(sqlite_checkpoint(path, "TRUNCATE"), 0);
  EXPECT_INT(rows_at(rd, a, SQLITE_ERROR_SNAPSHOT), -1);
  EXPECT_INT(rows_at(rd, b, SQLITE_ERROR_SNAPSHOT), -1);
  EXPECT_INT(rows(rd), n0 + 4);
  snap_free(a);
  snap_free(b);
  EXPECT_INT(sqlite3_close(rd), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(sqlite_shell(path, "PRAGMA integrity_check"), 0);
}

int main(void) {
  if (!load_api()) {
    int shale = strstr(sqlite3_sourceid(), "shale") != NULL;
    printf("no sqlite3_snapshot_* in this library (built without SQLITE_ENABLE_SNAPSHOT)\n");
    return shale ? 1 : 0;
  }
  char dir[] = "/tmp/compat-snapshot-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[512];
  snprintf(path, sizeof path, "%s/wal.db", dir);
  refusals(dir);

  sqlite3 *db1 = NULL, *db2 = NULL;
  EXPECT_INT(sqlite3_open(path, &db1), SQLITE_OK);
  EXPECT_INT(one(db1, "PRAGMA journal_mode=WAL") >= 0, 1);
  /* a log nothing was written to yet has no snapshot */
  {
    sqlite3_snapshot *s = NULL;
    EXEC_OK(db1, "BEGIN");
    EXPECT_INT(snap_get(db1, "main", &s), SQLITE_ERROR);
    EXEC_OK(db1, "COMMIT");
  }
  EXEC_OK(db1, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  EXPECT_INT(sqlite3_open(path, &db2), SQLITE_OK);
  basics(db1, db2);
  checkpoints(db1, db2);
  EXPECT_INT(sqlite3_close(db2), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db1), SQLITE_OK);
  recovery(path);
  interop(path);

  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("could not remove %s\n", dir);
  return prog_done();
}
