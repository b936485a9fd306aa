/*
 * walt.h -- helpers shared by the WAL tests of tests/wal/: one connection
 * type (WConn) that is either a Shale connection (native API) or a
 * reference SQLite connection, so that a scenario is written once and run
 * on both engines, and small SQL helpers.
 *
 * A WConn may also be REMOTE: a connection living in another process (the
 * test binary re-executed with WALT_SERVER set, whose constructor serves
 * requests on stdin/stdout and never reaches main). Locks of two engines in
 * one process do not exclude each other (POSIX record locks are per
 * process), so whenever Shale and SQLite must share a file, one of them is
 * remote.
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

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shale.h"

#define WENG_SHALE 0
#define WENG_SQLITE 1

typedef struct WConn {
  int eng;
  shale *s;
  sqlite3 *q;
  pid_t pid; /* remote: the server process, else 0 */
  int to, from;
} WConn;

/* Remote requests: op byte, int32 length, SQL bytes. Reply: int32 rc,
 * int64 v[3], int32 text length, text. */
#define WOP_EXEC 'e'
#define WOP_INT 'i'
#define WOP_ROW3 '3'
#define WOP_TEXT 't'
#define WOP_AUTOCOMMIT 'a'
#define WOP_CLOSE 'q'

typedef struct WReply {
  int rc;
  long long v[3];
  char text[256];
} WReply;

static int wr_call(WConn *c, int op, const char *sql, WReply *out);

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
  if (c->pid) {
    WReply r;
    wr_call(c, WOP_CLOSE, "", &r);
    close(c->to);
    close(c->from);
    int st;
    waitpid(c->pid, &st, 0);
    c->pid = 0;
    return;
  }
  if (c->s) shale_close(c->s);
  if (c->q) sqlite3_close(c->q);
  c->s = NULL;
  c->q = NULL;
}

static inline const char *wc_errmsg(WConn *c) {
  return c->eng == WENG_SHALE ? shale_errmsg(c->s) : sqlite3_errmsg(c->q);
}

static inline int wc_autocommit(WConn *c) {
  if (c->pid) {
    WReply r;
    wr_call(c, WOP_AUTOCOMMIT, "", &r);
    return (int)r.v[0];
  }
  return c->eng == WENG_SHALE ? shale_get_autocommit(c->s) : sqlite3_get_autocommit(c->q);
}

/* Run every statement of sql (rows ignored); extended code of the first
 * failure (or OK). */
static inline int wc_exec(WConn *c, const char *sql) {
  int rc;
  if (c->pid) {
    WReply r;
    return wr_call(c, WOP_EXEC, sql, &r);
  }
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
  if (c->pid) {
    WReply r;
    rc = wr_call(c, WOP_INT, sql, &r);
    v = r.v[0];
  } else if (c->eng == WENG_SHALE) {
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
  if (c->pid) {
    WReply r;
    rc = wr_call(c, WOP_TEXT, sql, &r);
    snprintf(buf, (size_t)nbuf, "%s", r.text);
    return rc;
  }
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

/* First three columns of the first row as integers (e.g. PRAGMA
 * wal_checkpoint); -9 each when no row. Returns the extended code. */
static inline int wc_row3(WConn *c, const char *sql, long long v[3]) {
  v[0] = v[1] = v[2] = -9;
  if (c->pid) {
    WReply r;
    int rc = wr_call(c, WOP_ROW3, sql, &r);
    memcpy(v, r.v, sizeof r.v);
    return rc;
  }
  int rc;
  if (c->eng == WENG_SHALE) {
    shale_stmt *st;
    rc = shale_prepare_v2(c->s, sql, -1, &st, NULL);
    if (rc != SHALE_OK) return shale_extended_errcode(c->s);
    rc = shale_step(st);
    if (rc == SHALE_ROW)
      for (int i = 0; i < 3; i++) v[i] = shale_column_int64(st, i);
    rc = (rc == SHALE_ROW || rc == SHALE_DONE) ? SHALE_OK : shale_extended_errcode(c->s);
    shale_finalize(st);
    return rc;
  }
  sqlite3_stmt *st;
  rc = sqlite3_prepare_v2(c->q, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return sqlite3_extended_errcode(c->q);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    for (int i = 0; i < 3; i++) v[i] = sqlite3_column_int64(st, i);
  rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : sqlite3_extended_errcode(c->q);
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
  char b[700];
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
  char b[700];
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

/* ---- remote connections ---- */

static int wr_full(int fd, void *buf, size_t n, int writing) {
  char *p = buf;
  while (n > 0) {
    ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int wr_call(WConn *c, int op, const char *sql, WReply *out) {
  memset(out, 0, sizeof *out);
  out->v[0] = out->v[1] = out->v[2] = -9;
  char o = (char)op;
  int len = (int)strlen(sql);
  if (wr_full(c->to, &o, 1, 1) || wr_full(c->to, &len, sizeof len, 1) ||
      wr_full(c->to, (void *)sql, (size_t)len, 1) || wr_full(c->from, out, sizeof *out, 0)) {
    out->rc = -1; /* the server died */
  }
  return out->rc;
}

/* Start a remote connection of engine eng on path (busy timeout ms). */
static inline int wc_open_remote(WConn *c, int eng, const char *path, int busy_ms) {
  memset(c, 0, sizeof *c);
  c->eng = eng;
  int p1[2], p2[2];
  if (pipe(p1) || pipe(p2)) return -1;
  char env[700];
  snprintf(env, sizeof env, "%d:%d:%s", eng, busy_ms, path);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(p1[0], 0);
    dup2(p2[1], 1);
    close(p1[0]);
    close(p1[1]);
    close(p2[0]);
    close(p2[1]);
    setenv("WALT_SERVER", env, 1);
    execl("/proc/self/exe", "walt-server", (char *)NULL);
    _exit(127);
  }
  close(p1[0]);
  close(p2[1]);
  c->pid = pid;
  c->to = p1[1];
  c->from = p2[0];
  WReply r;
  return wr_call(c, WOP_AUTOCOMMIT, "", &r) < 0 ? -1 : 0;
}

/* The server: a child re-executed with WALT_SERVER=eng:busy:path. */
__attribute__((constructor)) static void walt_server(void) {
  const char *e = getenv("WALT_SERVER");
  if (!e) return;
  int eng = atoi(e), busy = 0;
  const char *p = strchr(e, ':');
  if (!p) _exit(2);
  busy = atoi(p + 1);
  p = strchr(p + 1, ':');
  if (!p) _exit(2);
  signal(SIGPIPE, SIG_IGN);
  WConn c;
  if (wc_open(&c, eng, p + 1, busy) != 0) _exit(3);
  char *sql = NULL;
  for (;;) {
    char op;
    int len;
    if (wr_full(0, &op, 1, 0) || wr_full(0, &len, sizeof len, 0) || len < 0) break;
    sql = realloc(sql, (size_t)len + 1);
    if (!sql || wr_full(0, sql, (size_t)len, 0)) break;
    sql[len] = 0;
    WReply r;
    memset(&r, 0, sizeof r);
    r.v[0] = r.v[1] = r.v[2] = -9;
    switch (op) {
      case WOP_EXEC:
        r.rc = wc_exec(&c, sql);
        break;
      case WOP_INT:
        r.v[0] = wc_int_rc(&c, sql, -1, &r.rc);
        break;
      case WOP_ROW3:
        r.rc = wc_row3(&c, sql, r.v);
        break;
      case WOP_TEXT:
        r.rc = wc_text(&c, sql, r.text, sizeof r.text);
        break;
      case WOP_AUTOCOMMIT:
        r.v[0] = wc_autocommit(&c);
        break;
      case WOP_CLOSE:
        wc_close(&c);
        break;
    }
    if (wr_full(1, &r, sizeof r, 1)) break;
    if (op == WOP_CLOSE) _exit(0);
  }
  wc_close(&c);
  _exit(0);
}

#endif /* SHALE_TESTS_WALT_H */
