/*
 * commit_probe.c -- single-row autocommit INSERTs through the sqlite3_* API,
 * for comparing the system calls of each engine's commit path. Built once
 * against Debian's libsqlite3 (make build/commit-probe); run it with
 * LD_LIBRARY_PATH=build/compat for Shale. tools/commit_syscalls.sh runs both
 * under strace and prints the calls per commit.
 *
 *   build/commit-probe DB JOURNAL_MODE SYNCHRONOUS N
 *
 * Opens DB (removing it and its -journal/-wal/-shm first) with page_size
 * 4096, cache_size -2000, the given journal_mode and synchronous (as the
 * bench rows insert_autocommit, wal_commit_normal and wal_commit_full),
 * creates ins(id INTEGER PRIMARY KEY, k, v, r), then runs 3 warm-up commits
 * and N measured ones. Around the measured ones it writes "=MARK=" and
 * "=END=" to stderr, so that a trace can be cut to them.
 *
 * Invariants:
 *  1. Both engines run the same calls; the row values depend only on i.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void rm(const char *path, const char *suffix) {
  char b[1100];
  snprintf(b, sizeof b, "%s%s", path, suffix);
  unlink(b);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s DB JOURNAL_MODE SYNCHRONOUS N\n", argv[0]);
    return 2;
  }
  const char *path = argv[1];
  int n = atoi(argv[4]);
  rm(path, "");
  rm(path, "-journal");
  rm(path, "-wal");
  rm(path, "-shm");
  sqlite3 *db;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) return 1;
  char sql[300];
  snprintf(sql, sizeof sql,
           "PRAGMA page_size=4096; PRAGMA cache_size=-2000; PRAGMA journal_mode=%s;"
           " PRAGMA synchronous=%s;"
           " CREATE TABLE ins(id INTEGER PRIMARY KEY, k INTEGER, v TEXT, r REAL);",
           argv[2], argv[3]);
  sqlite3_stmt *st = NULL;
  if (sqlite3_exec(db, sql, 0, 0, 0) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO ins(k, v, r) VALUES(?1, ?2, ?3)", -1, &st, 0)) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 1;
  }
  for (int i = 0; i < n + 3; i++) {
    if (i == 3 && write(2, "=MARK=\n", 7) != 7) return 1;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)i * 7919 % 1000000);
    sqlite3_bind_text(st, 2, "abcdefghijkl", -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 3, i / 7.0);
    if (sqlite3_step(st) != SQLITE_DONE) {
      fprintf(stderr, "step: %s\n", sqlite3_errmsg(db));
      return 1;
    }
    sqlite3_reset(st);
  }
  if (write(2, "=END=\n", 6) != 6) return 1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return 0;
}
