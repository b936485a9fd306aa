/*
 * walt.h -- helpers shared by the WAL tests of tests/wal/: one connection
 * type (WConn) that is either a Shale connection (native API) or a
 * reference SQLite connection, so that a scenario is written once and run
 * on both engines, and small SQL helpers.
 *
 * Everything is static (each test binary includes it once); no state.
 *
 * Invariants:
 *  1. wc_exec/wc_step return the EXTENDED result code of the statement
 *     (extended result codes are switched on at open on both engines), so
 *     SQLITE_BUSY_SNAPSHOT (517) and friends can be compared.
 *  2. A WConn never leaks its statements: wc_exec finalizes what it
 *     prepared; wc_int returns `dflt` on any error.
 */
#ifndef SHALE_TESTS_WALT_H
#define SHALE_TESTS_WALT_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shale.h"

#define WENG_SHALE 0
#define WENG_SQLITE 1

typedef struct WConn {
  int eng;
  shale *s;
  sqlite3 *q;
} WConn;

static inline const char *weng_name(int eng) { return eng == WENG_SHALE ? "shale" : "sqlite"; }

/* Open path read-write (create) on engine eng; busy timeout ms (0 = none). */
static inline int wc_open(WConn *c, int eng, const char *path, int busy_ms) {
  memset(c, 0, sizeof *c);
  c->eng = eng;
  int rc;
  if (eng == WENG_SHALE) {
    rc = shale_open_v2(path, &c->s, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
    if (rc == SHALE_OK) {
      shale_extended_result_codes(c->s, 1);
      if (busy_ms) shale_busy_timeout(c->s, busy_ms);
    }
  } else {
    rc = sqlite3_open_v2(path, &c->q, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(c->q, 1);
      if (busy_ms) sqlite3_busy_timeout(c->q, busy_ms);
    }
  }
  return rc;
}

/* Open through a named VFS (Shale only: our VFS registry). */
static inline int wc_open_vfs(WConn *c, const char *path, const char *vfs) {
  memset(c, 0, sizeof *c);
  c->eng = WENG_SHALE;
  int rc = shale_open_v2(path, &c->s, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, vfs);
  if (rc == SHALE_OK) shale_extended_result_codes(c->s, 1);
  return rc;
}

static inline void wc_close(WConn *c) {
  if (c->s) shale_close(c->s);
  if (c->q) sqlite3_close(c->q);
  c->s = NULL;
  c->q = NULL;
}

static inline const char *wc_errmsg(WConn *c) {
  return c->eng == WENG_SHALE ? shale_errmsg(c->s) : sqlite3_errmsg(c->q);
}

static inline int wc_autocommit(WConn *c) {
  return c->eng == WENG_SHALE ? shale_get_autocommit(c->s) : sqlite3_get_autocommit(c->q);
}

/* Run every statement of sql (rows ignored); extended code of the first
 * failure (or OK). */
static inline int wc_exec(WConn *c, const char *sql) {
  int rc;
  if (c->eng == WENG_SHALE) {
    rc = shale_exec(c->s, sql, NULL, NULL, NULL);
    return rc == SHALE_OK ? rc : shale_extended_errcode(c->s);
  }
  rc = sqlite3_exec(c->q, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? rc : sqlite3_extended_errcode(c->q);
}

/* First column of the first row of sql as an integer; dflt if no row or
 * an error (*rc gets the extended code when rc is not NULL). */
static inline long long wc_int_rc(WConn *c, const char *sql, long long dflt, int *rcp) {
  long long v = dflt;
  int rc;
  if (c->eng == WENG_SHALE) {
    shale_stmt *st = NULL;
    rc = shale_prepare_v2(c->s, sql, -1, &st, NULL);
    if (rc == SHALE_OK) {
      rc = shale_step(st);
      if (rc == SHALE_ROW) {
        v = shale_column_int64(st, 0);
        rc = SHALE_OK;
      } else if (rc == SHALE_DONE) {
        rc = SHALE_OK;
      }
      if (rc != SHALE_OK) rc = shale_extended_errcode(c->s);
      shale_finalize(st);
    } else {
      rc = shale_extended_errcode(c->s);
    }
  } else {
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(c->q, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
      } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
      }
      if (rc != SQLITE_OK) rc = sqlite3_extended_errcode(c->q);
      sqlite3_finalize(st);
    } else {
      rc = sqlite3_extended_errcode(c->q);
    }
  }
  if (rcp) *rcp = rc;
  return rc == 0 ? v : dflt;
}

static inline long long wc_int(WConn *c, const char *sql, long long dflt) {
  return wc_int_rc(c, sql, dflt, NULL);
}

/* First column of the first row as text into buf (empty on error/no row). */
static inline int wc_text(WConn *c, const char *sql, char *buf, int nbuf) {
  buf[0] = 0;
  int rc;
  if (c->eng == WENG_SHALE) {
    shale_stmt *st = NULL;
    rc = shale_prepare_v2(c->s, sql, -1, &st, NULL);
    if (rc != SHALE_OK) return shale_extended_errcode(c->s);
    rc = shale_step(st);
    if (rc == SHALE_ROW) {
      const char *t = (const char *)shale_column_text(st, 0);
      snprintf(buf, (size_t)nbuf, "%s", t ? t : "");
      rc = SHALE_OK;
    } else if (rc == SHALE_DONE) {
      rc = SHALE_OK;
    } else {
      rc = shale_extended_errcode(c->s);
    }
    shale_finalize(st);
    return rc;
  }
  sqlite3_stmt *st = NULL;
  rc = sqlite3_prepare_v2(c->q, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return sqlite3_extended_errcode(c->q);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    snprintf(buf, (size_t)nbuf, "%s", t ? t : "");
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  } else {
    rc = sqlite3_extended_errcode(c->q);
  }
  sqlite3_finalize(st);
  return rc;
}

/* PRAGMA integrity_check says "ok". */
static inline int wc_integrity_ok(WConn *c) {
  char buf[256];
  int rc = wc_text(c, "PRAGMA integrity_check", buf, sizeof buf);
  if (rc != 0 || strcmp(buf, "ok") != 0) {
    fprintf(stderr, "%s integrity_check: rc %d: %s\n", weng_name(c->eng), rc, buf);
    return 0;
  }
  return 1;
}

/* Remove path and its -wal, -shm, -journal files. */
static inline void walt_unlink(const char *path) {
  char b[600];
  unlink(path);
  snprintf(b, sizeof b, "%s-wal", path);
  unlink(b);
  snprintf(b, sizeof b, "%s-shm", path);
  unlink(b);
  snprintf(b, sizeof b, "%s-journal", path);
  unlink(b);
}

/* Size of a file in bytes, -1 if it does not exist. */
static inline long long walt_fsize(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long long n = ftell(f);
  fclose(f);
  return n;
}

static inline long long walt_fsize_sfx(const char *path, const char *sfx) {
  char b[600];
  snprintf(b, sizeof b, "%s%s", path, sfx);
  return walt_fsize(b);
}

/* Running under AddressSanitizer (runs are made shorter). */
#if defined(__SANITIZE_ADDRESS__)
#define WALT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WALT_ASAN 1
#endif
#endif
#ifndef WALT_ASAN
#define WALT_ASAN 0
#endif

#endif /* SHALE_TESTS_WALT_H */
