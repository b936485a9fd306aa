/*
 * test_wal.c -- the WAL module (src/pager/wal.c) against the reference
 * SQLite: logs written by SQLite are recovered and read page for page, and
 * logs we write are recovered and read by SQLite (integrity_check, content);
 * SQLite in a child process shares our live -shm (reads our index, commits
 * and checkpoints through it, or recovers first); recovery rules (torn,
 * corrupt, bad-salt frames, bad header, version), big-endian checksums,
 * checkpoints/restart/TRUNCATE, read marks, BUSY codes, undo, I/O errors,
 * power loss, and a multithreaded stress of writers/readers/checkpointer.
 *
 * Invariants:
 *  1. SQLite and our code never have the same file open at once in this
 *     process (POSIX locks are per process, §5): SQLite works on copies or
 *     after our Wal is closed.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../src/pager/wal.h"
#include "../../test.h"

/* ---------------------------------------------------------- helpers */

static uint8_t *slurp(const char *path, long *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    *n = -1;
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)*n + 1);
  if (fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
  fclose(f);
  return b;
}

static void spit(const char *path, const uint8_t *b, long n) {
  FILE *f = fopen(path, "wb");
  if (n > 0) fwrite(b, 1, (size_t)n, f);
  fclose(f);
}

static void copy_file(const char *from, const char *to) {
  long n;
  uint8_t *b = slurp(from, &n);
  if (b) spit(to, b, n);
  free(b);
}

static void sql(sqlite3 *db, const char *s) {
  char *err = NULL;
  if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "sqlite3: %s: %s", s, err ? err : "?");
    sqlite3_free(err);
  }
}

static char *sql_text(sqlite3 *db, const char *s) {
  sqlite3_stmt *st = NULL;
  char *out = NULL;
  if (sqlite3_prepare_v2(db, s, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    out = strdup(t ? t : "NULL");
  }
  sqlite3_finalize(st);
  return out ? out : strdup("(error)");
}

static void rm3(const char *p) {
  char b[512];
  unlink(p);
  snprintf(b, sizeof b, "%s-wal", p);
  unlink(b);
  snprintf(b, sizeof b, "%s-shm", p);
  unlink(b);
}

static const char *suffix(const char *p, const char *s) {
  static char b[4][512];
  static int k;
  k = (k + 1) & 3;
  snprintf(b[k], sizeof b[k], "%s%s", p, s);
  return b[k];
}

typedef struct Conn {
  OsVfs *vfs;
  OsFile *db;
  Wal *w;
} Conn;

static int conn_open_vfs(Conn *c, OsVfs *vfs, const char *path, uint32_t ps) {
  memset(c, 0, sizeof *c);
  c->vfs = vfs;
  int rc = os_open_alloc(
      c->vfs, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_DB, NULL, &c->db);
  if (rc == SHALE_OK) rc = os_lock(c->db, OS_LOCK_SHARED);
  if (rc == SHALE_OK) rc = wal_open(c->vfs, c->db, suffix(path, "-wal"), ps, &c->w);
  return rc;
}

static int conn_open(Conn *c, const char *path, uint32_t ps) {
  return conn_open_vfs(c, os_vfs_find("unix"), path, ps);
}

static int conn_close(Conn *c, int flags) {
  int rc = wal_close(c->w, flags);
  if (c->db) {
    os_unlock(c->db, OS_LOCK_NONE);
    os_close_free(c->db);
  }
  memset(c, 0, sizeof *c);
  return rc;
}

/* Page pgno as seen through the open read transaction. */
static int conn_page(Conn *c, uint32_t pgno, uint8_t *buf, uint32_t ps, uint32_t *frame) {
  int rc = wal_find_frame(c->w, pgno, frame);
  if (rc != SHALE_OK) return rc;
  if (*frame) return wal_read_frame(c->w, *frame, buf);
  rc = os_read(c->db, buf, (int)ps, (int64_t)(pgno - 1) * ps);
  return rc == SHALE_IOERR_SHORT_READ ? SHALE_OK : rc;
}

/* Make a WAL-mode db with SQLite (several commits, page size ps) and leave
 * copies `a` and `b` of the db and -wal files (no -shm). Returns the number
 * of commits. */
static void make_sqlite_wal(const char *src, const char *a, const char *b, uint32_t ps, int ncommit,
                            uint64_t seed) {
  rm3(src);
  rm3(a);
  rm3(b);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(src, &s), SQLITE_OK);
  char q[256];
  snprintf(q, sizeof q,
           "PRAGMA page_size=%u; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;", ps);
  sql(s, q);
  sql(s, "CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);");
  for (int i = 0; i < ncommit; i++) {
    uint64_t r = test_rand(&seed);
    snprintf(q, sizeof q,
             "BEGIN; WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<%d) "
             "INSERT INTO t(b) SELECT randomblob(%d) FROM c;"
             "UPDATE t SET b=randomblob(50) WHERE a %% %d = 0; DELETE FROM t WHERE a %% 13 = %d; "
             "COMMIT;",
             (int)((r >> 20) % 40) + 1, (int)(r % 300) + 10, (int)((r >> 30) % 7) + 2, i % 13);
    sql(s, q);
  }
  copy_file(src, a);
  copy_file(suffix(src, "-wal"), suffix(a, "-wal"));
  copy_file(src, b);
  copy_file(suffix(src, "-wal"), suffix(b, "-wal"));
  sqlite3_close(s);
}

/* ---------------------------------------------- reading SQLite's logs */

static void read_sqlite_log(uint32_t ps, int ncommit, uint64_t seed, uint32_t min_frames) {
  const char *src = test_path("src.db"), *a = test_path("a.db"), *b = test_path("b.db");
  char pa[256], pb[256];
  snprintf(pa, sizeof pa, "%s", a);
  snprintf(pb, sizeof pb, "%s", b);
  make_sqlite_wal(src, pa, pb, ps, ncommit, seed);
  long walsize;
  free(slurp(suffix(pa, "-wal"), &walsize));
  CHECK(walsize > 32);

  /* the oracle: SQLite checkpoints copy b */
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(pb, &s), SQLITE_OK);
  sql(s, "PRAGMA wal_checkpoint(TRUNCATE)");
  char *ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  free(ic);
  sqlite3_close(s);
  long nb;
  uint8_t *want = slurp(pb, &nb);
  CHECK(nb > 0 && nb % ps == 0);
  uint32_t npage = (uint32_t)(nb / ps);

  Conn c;
  CHECK_OK(conn_open(&c, pa, ps));
  int changed = 0;
  CHECK_OK(wal_begin_read(c.w, &changed));
  CHECK_EQ(changed, 1);
  CHECK_EQ(wal_db_size(c.w), npage);
  CHECK(wal_max_frame(c.w) > 0);
  if (wal_max_frame(c.w) < min_frames)
    test_fail(__FILE__, __LINE__, "only %u frames", wal_max_frame(c.w));
  CHECK(wal_max_frame(c.w) <= (uint32_t)((walsize - 32) / (ps + 24)));
  uint8_t *buf = malloc(ps);
  int from_wal = 0;
  for (uint32_t p = 1; p <= npage; p++) {
    uint32_t f = 0;
    CHECK_OK(conn_page(&c, p, buf, ps, &f));
    from_wal += f != 0;
    if (memcmp(buf, want + (size_t)(p - 1) * ps, ps) != 0)
      test_fail(__FILE__, __LINE__, "page %u differs", p);
  }
  CHECK(from_wal > 0);
  wal_end_read(c.w);
  /* a second read sees the same snapshot, unchanged, without recovery */
  CHECK_OK(wal_begin_read(c.w, &changed));
  CHECK_EQ(changed, 0);
  wal_end_read(c.w);
  /* close: alone, so it checkpoints and deletes -wal/-shm; file == oracle */
  CHECK_OK(conn_close(&c, 0));
  CHECK(access(suffix(pa, "-wal"), F_OK) != 0);
  CHECK(access(suffix(pa, "-shm"), F_OK) != 0);
  long na;
  uint8_t *got = slurp(pa, &na);
  CHECK_EQ(na, nb);
  CHECK(got && na == nb && memcmp(got, want, (size_t)nb) == 0);
  free(got);
  free(want);
  free(buf);
}

TEST(wal_reads_sqlite_log_4096) { read_sqlite_log(4096, 12, test_seed(), 12); }
TEST(wal_reads_sqlite_log_512) { read_sqlite_log(512, 30, test_seed() + 1, 30); }

/* Big enough for several index blocks (> 4062 frames). */
TEST(wal_reads_sqlite_log_multiblock) { read_sqlite_log(512, 400, test_seed() + 2, 4062 + 100); }

/* --------------------------------------------- SQLite reads our logs */

static uint8_t *db_pages(const char *path, uint32_t ps, uint32_t *n) {
  long len;
  uint8_t *b = slurp(path, &len);
  *n = len > 0 ? (uint32_t)(len / ps) : 0;
  for (uint32_t i = 0; b && i < *n && i < 1; i++) {
    b[18] = 2;
    b[19] = 2;
  }
  return b;
}

/* Append the pages of `next` that differ from `prev` as one commit. */
static void commit_diff(Conn *c, const uint8_t *prev, uint32_t nprev, const uint8_t *next,
                        uint32_t nnext, uint32_t ps) {
  WalPage *pg = malloc(sizeof(WalPage) * nnext);
  int n = 0;
  for (uint32_t i = 0; i < nnext; i++) {
    if (i < nprev && memcmp(prev + (size_t)i * ps, next + (size_t)i * ps, ps) == 0) continue;
    pg[n].pgno = i + 1;
    pg[n].data = next + (size_t)i * ps;
    n++;
  }
  CHECK(n > 0);
  int rc = wal_begin_read(c->w, NULL);
  CHECK_OK(rc);
  if (rc == SHALE_OK) {
    rc = wal_begin_write(c->w);
    CHECK_OK(rc);
    if (rc == SHALE_OK) {
      /* spill half as non-commit frames first, then commit the rest */
      int half = n / 2;
      if (half > 0) CHECK_OK(wal_append(c->w, pg, half, 0, WAL_SYNC_NORMAL));
      CHECK_OK(wal_append(c->w, pg + half, n - half, nnext, WAL_SYNC_FULL));
      wal_end_write(c->w);
    }
    wal_end_read(c->w);
  }
  free(pg);
}

static char g_path[256], g_out[256];
static int child_read_any(void);
static int run_child(int (*fn)(void));
static long fsize(const char *p);
static char *out_read(void);

TEST(wal_sqlite_reads_our_log) {
  uint32_t ps = 1024;
  const char *x = test_path("x.db");
  char px[256], py[256];
  snprintf(px, sizeof px, "%s", x);
  snprintf(py, sizeof py, "%s", test_path("y.db"));
  rm3(px);
  rm3(py);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s,
      "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);"
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<50) "
      "INSERT INTO t(b) SELECT randomblob(100) FROM c;");
  sqlite3_close(s);
  copy_file(py, px);
  uint32_t n0;
  uint8_t *v0 = db_pages(px, ps, &n0);
  spit(px, v0, (long)n0 * ps); /* x: WAL mode (bytes 18/19 = 2), empty log */

  Conn c;
  CHECK_OK(conn_open(&c, px, ps));
  uint8_t *prev = v0;
  uint32_t nprev = n0;
  char *want = NULL;
  const char *steps[] = {
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<80) "
      "INSERT INTO t(b) SELECT randomblob(300) FROM c",
      "UPDATE t SET b=randomblob(20) WHERE a % 3 = 0",
      "DELETE FROM t WHERE a % 5 = 1; CREATE TABLE u(x); INSERT INTO u VALUES(1),(2)",
      "DELETE FROM t WHERE a > 40",
  };
  uint32_t salt_prev = 0;
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
    sql(s, steps[i]);
    free(want);
    want = sql_text(s,
                    "SELECT count(*) || ',' || total(length(b)) || ',' || "
                    "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
    sqlite3_close(s);
    uint32_t nnext;
    uint8_t *next = db_pages(py, ps, &nnext);
    commit_diff(&c, prev, nprev, next, nnext, ps);
    if (prev != v0) free(prev);
    prev = next;
    nprev = nnext;
    /* after commit 1 a complete checkpoint, so commit 2 restarts the log
     * (salt-1 + 1); after commit 2 TRUNCATE, so commit 3 starts a new file */
    int nl = 0, nc = 0;
    long wn;
    uint8_t *wh = slurp(suffix(px, "-wal"), &wn);
    uint32_t salt1 = wh && wn >= 32 ? util_get4(wh + 16) : 0;
    free(wh);
    if (i == 1) salt_prev = salt1;
    if (i == 2) CHECK_EQ(salt1, salt_prev + 1); /* restarted, not appended */
    if (i == 1) {
      CHECK_OK(wal_checkpoint(c.w, WAL_CKPT_PASSIVE, NULL, NULL, &nl, &nc));
      CHECK(nl > 0 && nl == nc);
    }
    if (i == 2) {
      CHECK_OK(wal_checkpoint(c.w, WAL_CKPT_TRUNCATE, NULL, NULL, &nl, &nc));
      CHECK_EQ(fsize(suffix(px, "-wal")), 0);
    }
    if (i == 1 || i == 2) {
      /* SQLite (another process) reads this state through our live index */
      snprintf(g_path, sizeof g_path, "%s", px);
      snprintf(g_out, sizeof g_out, "%s", test_path("x.out"));
      CHECK_EQ(run_child(child_read_any), 0);
      char *got0 = out_read();
      CHECK_STR(got0, want);
      free(got0);
    }
  }
  /* our own reader sees the last version page for page */
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_EQ(wal_db_size(c.w), nprev);
  uint8_t *buf = malloc(ps);
  for (uint32_t p = 1; p <= nprev; p++) {
    uint32_t f;
    CHECK_OK(conn_page(&c, p, buf, ps, &f));
    if (memcmp(buf, prev + (size_t)(p - 1) * ps, ps)) test_fail(__FILE__, __LINE__, "page %u", p);
  }
  wal_end_read(c.w);
  CHECK_OK(conn_close(&c, WAL_CLOSE_KEEP));
  CHECK(access(suffix(px, "-wal"), F_OK) == 0);

  /* SQLite recovers our log */
  CHECK_EQ(sqlite3_open(px, &s), SQLITE_OK);
  char *jm = sql_text(s, "PRAGMA journal_mode");
  CHECK_STR(jm, "wal");
  free(jm);
  char *got = sql_text(s,
                       "SELECT count(*) || ',' || total(length(b)) || ',' || "
                       "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
  CHECK_STR(got, want);
  free(got);
  char *ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  free(ic);
  char *ck = sql_text(s, "PRAGMA wal_checkpoint(TRUNCATE)");
  CHECK_STR(ck, "0");
  free(ck);
  ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  free(ic);
  got = sql_text(s,
                 "SELECT count(*) || ',' || total(length(b)) || ',' || "
                 "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
  CHECK_STR(got, want);
  free(got);
  sqlite3_close(s);
  free(want);
  free(buf);
  if (prev != v0) free(prev);
  free(v0);
}

/* ------------------------------------------ protocol, on raw pages */

#define PS 512

static void fill(uint8_t *d, uint32_t pgno, uint32_t ver) {
  for (uint32_t i = 0; i < PS; i++) d[i] = (uint8_t)(pgno * 31u + ver * 17u + i * 7u + (i >> 5));
}

/* One commit of pages pg[0..n) at version ver, db size nsize. */
static int commit_pages(Conn *c, const uint32_t *pg, int n, uint32_t ver, uint32_t nsize) {
  uint8_t *data = malloc((size_t)n * PS);
  WalPage *wp = malloc(sizeof(WalPage) * (size_t)n);
  for (int i = 0; i < n; i++) {
    fill(data + (size_t)i * PS, pg[i], ver);
    wp[i].pgno = pg[i];
    wp[i].data = data + (size_t)i * PS;
  }
  int rc = wal_begin_read(c->w, NULL);
  if (rc == SHALE_OK) {
    rc = wal_begin_write(c->w);
    if (rc == SHALE_OK) rc = wal_append(c->w, wp, n, nsize, WAL_SYNC_OFF);
    wal_end_write(c->w);
    wal_end_read(c->w);
  }
  free(data);
  free(wp);
  return rc;
}

/* Check that page pgno reads as version ver (0 = zeroes / absent). */
static void expect_page(Conn *c, uint32_t pgno, uint32_t ver, int line) {
  uint8_t buf[PS], want[PS];
  uint32_t f;
  memset(buf, 0, PS);
  int rc = conn_page(c, pgno, buf, PS, &f);
  if (ver)
    fill(want, pgno, ver);
  else
    memset(want, 0, PS);
  if (rc != SHALE_OK || memcmp(buf, want, PS) != 0)
    test_fail(__FILE__, line, "page %u: rc %d, not version %u (frame %u)", pgno, rc, ver, f);
}
#define EXPECT_PAGE(c, p, v) expect_page(c, p, v, __LINE__)

static long fsize(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Recover `path` (its -shm removed) and return the snapshot's mxFrame. */
static uint32_t recover_mx(const char *path, uint32_t *npage, int *rc_out) {
  unlink(suffix(path, "-shm"));
  Conn c;
  CHECK_OK(conn_open(&c, path, PS));
  *rc_out = wal_begin_read(c.w, NULL);
  uint32_t mx = 0;
  if (*rc_out == SHALE_OK) {
    mx = wal_max_frame(c.w);
    *npage = wal_db_size(c.w);
    if (mx >= 3) {
      EXPECT_PAGE(&c, 3, 1);
      EXPECT_PAGE(&c, 1, mx >= 6 ? 3 : 1);
    }
    if (mx >= 5) EXPECT_PAGE(&c, 4, 2);
    wal_end_read(c.w);
  }
  conn_close(&c, WAL_CLOSE_KEEP);
  return mx;
}

TEST(wal_recovery_rules) {
  char p[256];
  snprintf(p, sizeof p, "%s", test_path("r.db"));
  rm3(p);
  spit(p, NULL, 0);
  Conn c;
  CHECK_OK(conn_open(&c, p, PS));
  uint32_t t1[] = {1, 2, 3}, t2[] = {2, 4}, t3[] = {1};
  CHECK_OK(commit_pages(&c, t1, 3, 1, 3));
  CHECK_OK(commit_pages(&c, t2, 2, 2, 4));
  CHECK_OK(commit_pages(&c, t3, 1, 3, 4));
  CHECK_OK(conn_close(&c, WAL_CLOSE_KEEP));
  const char *wp = suffix(p, "-wal");
  char wpath[256];
  snprintf(wpath, sizeof wpath, "%s", wp);
  long n;
  uint8_t *orig = slurp(wpath, &n);
  CHECK_EQ(n, 32 + 6 * (PS + 24));
  uint32_t npage = 0;
  int rc;
  /* intact */
  CHECK_EQ(recover_mx(p, &npage, &rc), 6);
  CHECK_EQ(npage, 4);
  /* torn last frame: the last commit is gone */
  spit(wpath, orig, n - PS / 2);
  CHECK_EQ(recover_mx(p, &npage, &rc), 5);
  CHECK_EQ(npage, 4);
  /* a bit flip in frame 5 ends the log at the commit before */
  uint8_t *m = malloc((size_t)n);
  memcpy(m, orig, (size_t)n);
  m[32 + 4 * (PS + 24) + 24 + 100] ^= 1;
  spit(wpath, m, n);
  CHECK_EQ(recover_mx(p, &npage, &rc), 3);
  CHECK_EQ(npage, 3);
  /* a wrong salt in frame 4 */
  memcpy(m, orig, (size_t)n);
  m[32 + 3 * (PS + 24) + 9] ^= 0x40;
  spit(wpath, m, n);
  CHECK_EQ(recover_mx(p, &npage, &rc), 3);
  /* page number 0 in frame 6 */
  memcpy(m, orig, (size_t)n);
  memset(m + 32 + 5 * (PS + 24), 0, 4);
  spit(wpath, m, n);
  CHECK_EQ(recover_mx(p, &npage, &rc), 5);
  /* broken header checksum: empty log */
  memcpy(m, orig, (size_t)n);
  m[27] ^= 1;
  spit(wpath, m, n);
  CHECK_EQ(recover_mx(p, &npage, &rc), 0);
  CHECK_OK(rc);
  /* another version with a valid checksum: CANTOPEN */
  memcpy(m, orig, (size_t)n);
  util_put4(m + 4, 3007001);
  {
    uint32_t s[2] = {0, 0};
    for (int i = 0; i < 24; i += 8) {
      s[0] += util_get4(m + i) + s[1];
      s[1] += util_get4(m + i + 4) + s[0];
    }
    /* magic ...82: little-endian words on x86 */
    s[0] = s[1] = 0;
    for (int i = 0; i < 24; i += 8) {
      uint32_t a = (uint32_t)m[i] | (uint32_t)m[i + 1] << 8 | (uint32_t)m[i + 2] << 16 |
                   (uint32_t)m[i + 3] << 24;
      uint32_t b = (uint32_t)m[i + 4] | (uint32_t)m[i + 5] << 8 | (uint32_t)m[i + 6] << 16 |
                   (uint32_t)m[i + 7] << 24;
      s[0] += a + s[1];
      s[1] += b + s[0];
    }
    util_put4(m + 24, s[0]);
    util_put4(m + 28, s[1]);
  }
  spit(wpath, m, n);
  recover_mx(p, &npage, &rc);
  CHECK_EQ(rc, SHALE_CANTOPEN);
  /* tiny log: empty */
  spit(wpath, orig, 20);
  CHECK_EQ(recover_mx(p, &npage, &rc), 0);
  CHECK_OK(rc);
  free(m);
  free(orig);
}

TEST(wal_checkpoint_restart_truncate) {
  char p[256], wpath[256];
  snprintf(p, sizeof p, "%s", test_path("k.db"));
  rm3(p);
  spit(p, NULL, 0);
  snprintf(wpath, sizeof wpath, "%s", suffix(p, "-wal"));
  Conn c;
  CHECK_OK(conn_open(&c, p, PS));
  uint32_t t1[] = {1, 2, 3, 4, 5}, t2[] = {2, 5}, t3[] = {3};
  CHECK_OK(commit_pages(&c, t1, 5, 1, 5));
  CHECK_OK(commit_pages(&c, t2, 2, 2, 5));
  int nlog = -2, nckpt = -2;
  CHECK_OK(wal_checkpoint(c.w, WAL_CKPT_PASSIVE, NULL, NULL, &nlog, &nckpt));
  CHECK_EQ(nlog, 7);
  CHECK_EQ(nckpt, 7);
  /* the db file now holds the newest versions */
  long dn;
  uint8_t *d = slurp(p, &dn);
  CHECK_EQ(dn, 5 * PS);
  uint8_t want[PS];
  for (uint32_t pg = 1; pg <= 5 && dn == 5 * PS; pg++) {
    fill(want, pg, (pg == 2 || pg == 5) ? 2 : 1);
    if (memcmp(d + (pg - 1) * PS, want, PS)) test_fail(__FILE__, __LINE__, "db page %u", pg);
  }
  free(d);
  long n0;
  uint8_t *h0 = slurp(wpath, &n0);
  /* a reader now uses the db file only */
  CHECK_OK(wal_begin_read(c.w, NULL));
  uint32_t f = 9;
  CHECK_OK(wal_find_frame(c.w, 2, &f));
  CHECK_EQ(f, 0);
  EXPECT_PAGE(&c, 2, 2);
  wal_end_read(c.w);
  /* the next writer restarts the log: frame 1 again, new salts, no truncation */
  CHECK_OK(commit_pages(&c, t3, 1, 3, 5));
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_EQ(wal_max_frame(c.w), 1);
  EXPECT_PAGE(&c, 3, 3);
  EXPECT_PAGE(&c, 2, 2);
  wal_end_read(c.w);
  long n1;
  uint8_t *h1 = slurp(wpath, &n1);
  CHECK_EQ(n1, n0);
  CHECK(h0 && h1 && memcmp(h0 + 16, h1 + 16, 8) != 0);
  CHECK_EQ(util_get4(h1 + 16), util_get4(h0 + 16) + 1);
  free(h0);
  free(h1);
  /* recovery of the restarted log ignores the stale frames 2..7 */
  CHECK_OK(conn_close(&c, WAL_CLOSE_KEEP));
  unlink(suffix(p, "-shm"));
  CHECK_OK(conn_open(&c, p, PS));
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_EQ(wal_max_frame(c.w), 1);
  EXPECT_PAGE(&c, 3, 3);
  EXPECT_PAGE(&c, 5, 2);
  wal_end_read(c.w);
  /* TRUNCATE empties the file; writing again starts a new log */
  CHECK_OK(wal_checkpoint(c.w, WAL_CKPT_TRUNCATE, NULL, NULL, &nlog, &nckpt));
  CHECK_EQ(nlog, 0);
  CHECK_EQ(nckpt, 0);
  CHECK_EQ(fsize(wpath), 0);
  uint32_t t4[] = {6};
  CHECK_OK(commit_pages(&c, t4, 1, 4, 6));
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_EQ(wal_max_frame(c.w), 1);
  CHECK_EQ(wal_db_size(c.w), 6);
  EXPECT_PAGE(&c, 6, 4);
  EXPECT_PAGE(&c, 3, 3);
  wal_end_read(c.w);
  CHECK_EQ(fsize(wpath), 32 + PS + 24);
  /* close alone: checkpoint and delete both files */
  CHECK_OK(conn_close(&c, 0));
  CHECK_EQ(fsize(wpath), -1);
  CHECK_EQ(fsize(suffix(p, "-shm")), -1);
  CHECK_EQ(fsize(p), 6 * PS);
}

TEST(wal_readers_writers_marks) {
  char p[256];
  snprintf(p, sizeof p, "%s", test_path("m.db"));
  rm3(p);
  spit(p, NULL, 0);
  Conn a, b;
  CHECK_OK(conn_open(&a, p, PS));
  CHECK_OK(conn_open(&b, p, PS));
  uint32_t t[] = {1, 2, 3, 4};
  CHECK_OK(commit_pages(&b, t, 4, 1, 4));
  int changed = 0;
  CHECK_OK(wal_begin_read(a.w, &changed));
  CHECK_EQ(changed, 1);
  CHECK_EQ(wal_max_frame(a.w), 4);
  CHECK_OK(commit_pages(&b, t, 4, 2, 4));
  /* A's snapshot is unchanged by B's commit */
  EXPECT_PAGE(&a, 2, 1);
  /* B's PASSIVE checkpoint stops at A's mark; FULL reports BUSY */
  int nlog, nckpt;
  CHECK_OK(wal_checkpoint(b.w, WAL_CKPT_PASSIVE, NULL, NULL, &nlog, &nckpt));
  CHECK_EQ(nlog, 8);
  CHECK_EQ(nckpt, 4);
  CHECK_RC(wal_checkpoint(b.w, WAL_CKPT_FULL, NULL, NULL, &nlog, &nckpt), SHALE_BUSY);
  CHECK_EQ(nckpt, 4);
  CHECK_RC(wal_checkpoint(b.w, WAL_CKPT_RESTART, NULL, NULL, &nlog, &nckpt), SHALE_BUSY);
  for (uint32_t pg = 1; pg <= 4; pg++) EXPECT_PAGE(&a, pg, 1);
  /* A cannot write on a stale snapshot */
  CHECK_RC(wal_begin_write(a.w), SHALE_BUSY_SNAPSHOT);
  wal_end_read(a.w);
  /* A checkpoints (reading the new header) but never read it: still changed */
  CHECK_OK(wal_checkpoint(a.w, WAL_CKPT_PASSIVE, NULL, NULL, &nlog, &nckpt));
  CHECK_EQ(nckpt, 8);
  CHECK_OK(wal_begin_read(a.w, &changed));
  CHECK_EQ(changed, 1);
  for (uint32_t pg = 1; pg <= 4; pg++) EXPECT_PAGE(&a, pg, 2);
  wal_end_read(a.w);
  /* one writer at a time */
  CHECK_OK(wal_begin_read(b.w, NULL));
  CHECK_OK(wal_begin_write(b.w));
  CHECK_OK(wal_begin_read(a.w, NULL));
  CHECK_RC(wal_begin_write(a.w), SHALE_BUSY);
  /* B spills uncommitted frames: visible to B only, then undone */
  uint8_t d[PS];
  fill(d, 1, 9);
  WalPage wp = {1, d};
  CHECK_OK(wal_append(b.w, &wp, 1, 0, WAL_SYNC_OFF));
  uint32_t f = 0;
  CHECK_OK(wal_find_frame(b.w, 1, &f));
  CHECK(f != 0);
  EXPECT_PAGE(&b, 1, 9);
  EXPECT_PAGE(&a, 1, 2);
  CHECK_OK(wal_undo(b.w));
  EXPECT_PAGE(&b, 1, 2);
  wal_end_write(b.w);
  wal_end_read(b.w);
  wal_end_read(a.w);
  /* B's first append restarted the log (nobody read the WAL): new header */
  CHECK_OK(wal_begin_read(a.w, &changed));
  CHECK_EQ(changed, 1);
  CHECK_EQ(wal_max_frame(a.w), 0);
  EXPECT_PAGE(&a, 1, 2);
  wal_end_read(a.w);
  /* a commit after the undo reuses the frames */
  uint32_t t1[] = {1};
  CHECK_OK(commit_pages(&a, t1, 1, 5, 4));
  CHECK_OK(wal_begin_read(b.w, &changed));
  CHECK_EQ(changed, 1);
  EXPECT_PAGE(&b, 1, 5);
  EXPECT_PAGE(&b, 2, 2);
  wal_end_read(b.w);
  /* close with another user: no checkpoint-and-delete */
  CHECK_OK(conn_close(&a, 0));
  CHECK(fsize(suffix(p, "-wal")) > 0);
  CHECK_OK(conn_close(&b, 0));
  CHECK_EQ(fsize(suffix(p, "-wal")), -1);
}

/* ------------------------- live interop: SQLite in another process */

#include <sys/wait.h>

static char g_img[256];
#define CONTENT_Q                                                            \
  "SELECT count(*) || ',' || total(length(b)) || ',' || total(a) || ',' || " \
  "(SELECT group_concat(name) FROM sqlite_schema) FROM t"

/* Run fn in a child process (which must not touch our connections). */
static int run_child(int (*fn)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static uint32_t shm_ichange(const char *db) {
  char p[300];
  snprintf(p, sizeof p, "%s-shm", db);
  FILE *f = fopen(p, "rb");
  uint8_t h[16] = {0};
  if (f) {
    if (fread(h, 1, 16, f) != 16) memset(h, 0, sizeof h);
    fclose(f);
  }
  uint32_t v;
  memcpy(&v, h + 8, 4);
  return h[12] ? v : 0xffffffffu; /* isInit == 0: no header */
}

static void out_write(const char *s) {
  FILE *f = fopen(g_out, "w");
  if (f) {
    fputs(s, f);
    fclose(f);
  }
}

static char *out_read(void) {
  long n;
  uint8_t *b = slurp(g_out, &n);
  if (!b || n < 0) {
    free(b);
    return strdup("(none)");
  }
  b[n] = 0;
  return (char *)b;
}

/* SQLite reads through our live index: content, integrity; no recovery. */
static int child_read(void) {
  uint32_t c0 = shm_ichange(g_path);
  if (c0 == 0 || c0 == 0xffffffffu) return 2;
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  char *ic = sql_text(s, "PRAGMA integrity_check");
  char *ct = sql_text(s, CONTENT_Q);
  int bad = strcmp(ic, "ok") != 0;
  out_write(ct);
  free(ic);
  free(ct);
  sqlite3_close(s);
  if (bad) return 4;
  if (shm_ichange(g_path) != c0) return 5; /* SQLite rebuilt the index */
  return 0;
}

/* SQLite reads (content + integrity) whatever state the files are in. */
static int child_read_any(void) {
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  char *ic = sql_text(s, "PRAGMA integrity_check");
  char *ct = sql_text(s,
                      "SELECT count(*) || ',' || total(length(b)) || ',' || "
                      "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
  int bad = strcmp(ic, "ok") != 0;
  out_write(ct);
  free(ic);
  free(ct);
  sqlite3_close(s);
  return bad ? 4 : 0;
}

/* SQLite commits on top of our frames. */
static int child_write(void) {
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  int rc = sqlite3_exec(s,
                        "BEGIN; DELETE FROM t WHERE a % 4 = 0;"
                        "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<60) "
                        "INSERT INTO t(b) SELECT zeroblob(i * 7) FROM c; COMMIT;",
                        NULL, NULL, NULL);
  char *ct = sql_text(s, CONTENT_Q);
  out_write(ct);
  free(ct);
  sqlite3_close(s);
  return rc == SQLITE_OK ? 0 : 4;
}

/* SQLite commits, then runs a PASSIVE checkpoint; writes "content|ckpt row". */
static int child_write_ckpt(void) {
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  int rc = sqlite3_exec(s, "UPDATE t SET b = zeroblob(5) WHERE a % 3 = 1", NULL, NULL, NULL);
  char *ct = sql_text(s, CONTENT_Q);
  sqlite3_stmt *st = NULL;
  char row[64] = "?";
  if (sqlite3_prepare_v2(s, "PRAGMA wal_checkpoint(PASSIVE)", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    snprintf(row, sizeof row, "%d|%d|%d", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
             sqlite3_column_int(st, 2));
  sqlite3_finalize(st);
  char buf[512];
  snprintf(buf, sizeof buf, "%s\n%s", ct, row);
  out_write(buf);
  free(ct);
  sqlite3_close(s);
  return rc == SQLITE_OK ? 0 : 4;
}

/* SQLite checks a flat image of our snapshot. */
static int child_check_img(void) {
  sqlite3 *s;
  if (sqlite3_open(g_img, &s) != SQLITE_OK) return 3;
  char *ic = sql_text(s, "PRAGMA integrity_check");
  char *ct = sql_text(s, CONTENT_Q);
  int bad = strcmp(ic, "ok") != 0;
  out_write(ct);
  free(ic);
  free(ct);
  sqlite3_close(s);
  return bad ? 4 : 0;
}

/* All pages of the open read snapshot, as a rollback-mode db image. */
static uint8_t *snapshot_image(Conn *c, uint32_t ps, uint32_t *npage) {
  *npage = wal_db_size(c->w);
  uint8_t *img = calloc(*npage ? *npage : 1, ps);
  for (uint32_t p = 1; p <= *npage; p++) {
    uint32_t f;
    CHECK_OK(conn_page(c, p, img + (size_t)(p - 1) * ps, ps, &f));
  }
  return img;
}

static void write_img(const uint8_t *img, uint32_t npage, uint32_t ps) {
  uint8_t *copy = malloc((size_t)npage * ps);
  memcpy(copy, img, (size_t)npage * ps);
  copy[18] = copy[19] = 1;
  unlink(g_img);
  spit(g_img, copy, (long)npage * ps);
  free(copy);
}

TEST(wal_live_with_sqlite_process) {
  uint32_t ps = 1024;
  snprintf(g_path, sizeof g_path, "%s", test_path("live.db"));
  snprintf(g_out, sizeof g_out, "%s", test_path("live.out"));
  snprintf(g_img, sizeof g_img, "%s", test_path("live.img"));
  char py[256];
  snprintf(py, sizeof py, "%s", test_path("live_src.db"));
  rm3(g_path);
  rm3(py);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s,
      "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);"
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<40) "
      "INSERT INTO t(b) SELECT randomblob(120) FROM c;");
  sqlite3_close(s);
  uint32_t n0, n1;
  uint8_t *v0 = db_pages(py, ps, &n0);
  spit(g_path, v0, (long)n0 * ps);
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s,
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<90) "
      "INSERT INTO t(b) SELECT randomblob(200) FROM c; UPDATE t SET b = NULL WHERE a % 7 = 0");
  char *want1 = sql_text(s, CONTENT_Q);
  sqlite3_close(s);
  uint8_t *v1 = db_pages(py, ps, &n1);

  Conn c;
  CHECK_OK(conn_open(&c, g_path, ps));
  commit_diff(&c, v0, n0, v1, n1, ps);

  /* 1. SQLite reads our commit through our index */
  CHECK_EQ(run_child(child_read), 0);
  char *got = out_read();
  CHECK_STR(got, want1);
  free(got);

  /* 2. SQLite commits; we see it, and our snapshot image is a valid db */
  CHECK_EQ(run_child(child_write), 0);
  char *want2 = out_read();
  int changed = 0;
  CHECK_OK(wal_begin_read(c.w, &changed));
  CHECK_EQ(changed, 1);
  uint32_t mx2 = wal_max_frame(c.w), np2;
  uint8_t *img2 = snapshot_image(&c, ps, &np2);
  write_img(img2, np2, ps);
  CHECK_EQ(run_child(child_check_img), 0);
  got = out_read();
  CHECK_STR(got, want2);
  free(got);

  /* 3. while we hold that snapshot, SQLite commits and checkpoints: it
   * must stop at our read mark, and our snapshot must stay intact */
  CHECK_EQ(run_child(child_write_ckpt), 0);
  char *res3 = out_read();
  char *nl = strchr(res3, '\n');
  CHECK(nl != NULL);
  if (nl) {
    *nl = 0;
    int busy = -1, nlog = -1, nck = -1;
    CHECK_EQ(sscanf(nl + 1, "%d|%d|%d", &busy, &nlog, &nck), 3);
    CHECK_EQ(busy, 0);
    CHECK(nlog > (int)mx2);
    CHECK_EQ(nck, mx2);
  }
  uint32_t np2b;
  uint8_t *img2b = snapshot_image(&c, ps, &np2b);
  CHECK_EQ(np2b, np2);
  CHECK(memcmp(img2, img2b, (size_t)np2 * ps) == 0);
  free(img2b);
  wal_end_read(c.w);

  /* 4. our new snapshot = SQLite's last commit */
  CHECK_OK(wal_begin_read(c.w, &changed));
  CHECK_EQ(changed, 1);
  uint32_t np3;
  uint8_t *img3 = snapshot_image(&c, ps, &np3);
  wal_end_read(c.w);
  write_img(img3, np3, ps);
  CHECK_EQ(run_child(child_check_img), 0);
  got = out_read();
  CHECK_STR(got, res3);
  free(got);

  /* 5. we are the last user: close checkpoints and deletes; SQLite agrees */
  CHECK_OK(conn_close(&c, 0));
  CHECK_EQ(fsize(suffix(g_path, "-wal")), -1);
  long nfin;
  uint8_t *fin = slurp(g_path, &nfin);
  CHECK_EQ(nfin, (long)np3 * ps);
  CHECK(fin && nfin == (long)np3 * ps && memcmp(fin + 100, img3 + 100, (size_t)nfin - 100) == 0);
  free(fin);
  CHECK_EQ(sqlite3_open(g_path, &s), SQLITE_OK);
  char *ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  free(ic);
  got = sql_text(s, CONTENT_Q);
  CHECK_STR(got, res3);
  free(got);
  sqlite3_close(s);

  free(res3);
  free(img3);
  free(img2);
  free(want2);
  free(want1);
  free(v1);
  free(v0);
}

/* ------------------------------------ big-endian checksums (…83 logs) */

static uint32_t le4(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void ck(const uint8_t *p, size_t n, int be, uint32_t s[2]) {
  for (size_t i = 0; i < n; i += 8) {
    s[0] += (be ? util_get4(p + i) : le4(p + i)) + s[1];
    s[1] += (be ? util_get4(p + i + 4) : le4(p + i + 4)) + s[0];
  }
}

/* Re-encode a log (all of whose frames are valid) with magic …83. */
static void reencode_be(const char *walpath, uint32_t ps) {
  long n;
  uint8_t *b = slurp(walpath, &n);
  CHECK(b && n > 32);
  util_put4(b, 0x377f0683);
  uint32_t s[2] = {0, 0};
  ck(b, 24, 1, s);
  util_put4(b + 24, s[0]);
  util_put4(b + 28, s[1]);
  for (long off = 32; off + 24 + (long)ps <= n; off += 24 + ps) {
    if (memcmp(b + off + 8, b + 16, 8) != 0) break;
    ck(b + off, 8, 1, s);
    ck(b + off + 24, ps, 1, s);
    util_put4(b + off + 16, s[0]);
    util_put4(b + off + 20, s[1]);
  }
  spit(walpath, b, n);
  free(b);
}

TEST(wal_bigendian_checksums) {
  uint32_t ps = 1024;
  char pa[256], pb[256];
  snprintf(pa, sizeof pa, "%s", test_path("be_a.db"));
  snprintf(pb, sizeof pb, "%s", test_path("be_b.db"));
  make_sqlite_wal(test_path("be_src.db"), pa, pb, ps, 8, test_seed() + 3);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(pb, &s), SQLITE_OK);
  sql(s, "PRAGMA wal_checkpoint(TRUNCATE)");
  char *cnt = sql_text(s, "SELECT count(*) FROM t");
  sqlite3_close(s);
  long nb;
  uint8_t *want = slurp(pb, &nb);
  uint32_t npage = (uint32_t)(nb / ps);
  reencode_be(suffix(pa, "-wal"), ps);

  Conn c;
  CHECK_OK(conn_open(&c, pa, ps));
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK(wal_max_frame(c.w) > 8);
  CHECK_EQ(wal_db_size(c.w), npage);
  uint8_t *buf = malloc(ps);
  for (uint32_t p = 1; p <= npage; p++) {
    uint32_t f;
    CHECK_OK(conn_page(&c, p, buf, ps, &f));
    if (memcmp(buf, want + (size_t)(p - 1) * ps, ps)) test_fail(__FILE__, __LINE__, "page %u", p);
  }
  /* append a commit: user_version = 4242 on page 1, big-endian checksums */
  CHECK_OK(wal_begin_write(c.w));
  memcpy(buf, want, ps);
  util_put4(buf + 60, 4242);
  WalPage wp = {1, buf};
  CHECK_OK(wal_append(c.w, &wp, 1, npage, WAL_SYNC_FULL));
  wal_end_write(c.w);
  wal_end_read(c.w);
  CHECK_OK(conn_close(&c, WAL_CLOSE_KEEP));
  long nw;
  uint8_t *w = slurp(suffix(pa, "-wal"), &nw);
  CHECK(w && nw > 32 && util_get4(w) == 0x377f0683);
  free(w);
  CHECK_EQ(sqlite3_open(pa, &s), SQLITE_OK);
  char *uv = sql_text(s, "PRAGMA user_version");
  CHECK_STR(uv, "4242");
  char *ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  char *cnt2 = sql_text(s, "SELECT count(*) FROM t");
  CHECK_STR(cnt2, cnt);
  sqlite3_close(s);
  free(uv);
  free(ic);
  free(cnt2);
  free(cnt);
  free(buf);
  free(want);
}

/* ------------------------------------------- I/O errors, power loss */

/* Page versions after commit k of the fault scenario: commit k (1-based)
 * writes pages {k, k+1, k+2} (mod 6, +1) at version k; db size 6. */
static uint32_t fv_ver(int k, uint32_t pg) {
  uint32_t v = 0;
  for (int i = 1; i <= k; i++)
    for (int j = 0; j < 3; j++)
      if ((uint32_t)((i + j) % 6) + 1 == pg) v = (uint32_t)i;
  return v;
}

static int fv_commit(Conn *c, int k) {
  uint32_t pg[3];
  for (int j = 0; j < 3; j++) pg[j] = (uint32_t)((k + j) % 6) + 1;
  return commit_pages(c, pg, 3, (uint32_t)k, 6);
}

/* Which state (number of commits) the recovered files hold; -1 if none. */
static int fv_state(const char *path, int maxk) {
  unlink(suffix(path, "-shm"));
  Conn c;
  if (conn_open(&c, path, PS) != SHALE_OK) return -2;
  int st = -1;
  if (wal_begin_read(c.w, NULL) == SHALE_OK) {
    uint8_t buf[PS], want[PS];
    for (int k = maxk; k >= 0 && st < 0; k--) {
      int ok = 1;
      for (uint32_t pg = 1; pg <= 6 && ok; pg++) {
        uint32_t f, v = fv_ver(k, pg);
        memset(buf, 0, PS);
        if (conn_page(&c, pg, buf, PS, &f) != SHALE_OK) ok = 0;
        if (v)
          fill(want, pg, v);
        else
          memset(want, 0, PS);
        if (memcmp(buf, want, PS)) ok = 0;
      }
      if (ok) st = k;
    }
    wal_end_read(c.w);
  }
  conn_close(&c, WAL_CLOSE_KEEP);
  return st;
}

TEST(wal_io_errors) {
  OsVfs *fv = os_fault_vfs_create("walfault", os_vfs_find("unix"));
  char p[256];
  snprintf(p, sizeof p, "%s", test_path("io.db"));
  int kinds[] = {OS_FAULT_WRITE, OS_FAULT_SYNC, OS_FAULT_READ, OS_FAULT_TRUNCATE};
  int fails = 0;
  for (int ki = 0; ki < 4; ki++) {
    for (long n = 1; n <= 8; n++) {
      rm3(p);
      spit(p, NULL, 0);
      Conn c;
      CHECK_OK(conn_open_vfs(&c, fv, p, PS));
      CHECK_OK(fv_commit(&c, 1));
      CHECK_OK(fv_commit(&c, 2));
      os_fault_arm(fv, kinds[ki], n, 0);
      int rc = fv_commit(&c, 3);
      int rc2 = SHALE_OK;
      if (ki >= 2) { /* reads and truncates happen in checkpoints */
        int nl, nc;
        rc2 = wal_checkpoint(c.w, ki == 3 ? WAL_CKPT_TRUNCATE : WAL_CKPT_PASSIVE, NULL, NULL, &nl,
                             &nc);
      }
      os_fault_arm(fv, kinds[ki], 0, 0);
      fails += rc != SHALE_OK || rc2 != SHALE_OK;
      /* the Wal stays usable after the error */
      CHECK_OK(wal_begin_read(c.w, NULL));
      wal_end_read(c.w);
      conn_close(&c, WAL_CLOSE_KEEP);
      int st = fv_state(p, 3);
      if (rc == SHALE_OK)
        CHECK_EQ(st, 3);
      else
        CHECK(st == 2 || st == 3);
    }
  }
  CHECK(fails > 0);
  os_fault_vfs_destroy(fv);
}

TEST(wal_power_loss) {
  OsVfs *fv = os_fault_vfs_create("walpower", os_vfs_find("unix"));
  char p[256];
  snprintf(p, sizeof p, "%s", test_path("pw.db"));
  uint64_t seed = test_seed();
  int iters = test_long() ? 400 : 80, lost = 0, ckpts = 0;
  for (int i = 0; i < iters; i++) {
    rm3(p);
    spit(p, NULL, 0);
    Conn c;
    CHECK_OK(conn_open_vfs(&c, fv, p, PS));
    int ncommit = 1 + (int)(test_rand(&seed) % 5);
    int full = (int)(test_rand(&seed) % 2);
    int durable = 0;
    for (int k = 1; k <= ncommit; k++) {
      uint32_t pg[3];
      for (int j = 0; j < 3; j++) pg[j] = (uint32_t)((k + j) % 6) + 1;
      uint8_t data[3][PS];
      WalPage wp[3];
      for (int j = 0; j < 3; j++) {
        fill(data[j], pg[j], (uint32_t)k);
        wp[j].pgno = pg[j];
        wp[j].data = data[j];
      }
      CHECK_OK(wal_begin_read(c.w, NULL));
      CHECK_OK(wal_begin_write(c.w));
      CHECK_OK(wal_append(c.w, wp, 3, 6, full ? WAL_SYNC_FULL : WAL_SYNC_NORMAL));
      wal_end_write(c.w);
      wal_end_read(c.w);
      if (full) durable = k;
      if (test_rand(&seed) % 3 == 0) { /* a checkpoint makes everything durable */
        int nl, nc;
        CHECK_OK(wal_checkpoint(c.w, WAL_CKPT_PASSIVE, NULL, NULL, &nl, &nc));
        CHECK_EQ(nc, nl);
        durable = k;
        ckpts++;
      }
    }
    int keep = (int)(test_rand(&seed) % 8), tear = (int)(test_rand(&seed) % 2);
    os_fault_power_loss(fv, keep, tear);
    conn_close(&c, WAL_CLOSE_KEEP);
    int st = fv_state(p, ncommit);
    CHECK(st >= durable && st <= ncommit);
    lost += st < ncommit;
  }
  CHECK(lost > 0);
  CHECK(ckpts > 0);
  os_fault_vfs_destroy(fv);
}

/* ------------------------------------------------ busy result codes */

static int g_busy_calls;

/* Busy handler that ends the blocking reader's transaction. */
static int end_reader_busy(void *arg, int count) {
  g_busy_calls++;
  wal_end_read(((Conn *)arg)->w);
  return count < 3;
}

static int shm_raw_lock(Conn *c, int slot, int n, int flags) {
  return c->db->methods->shm_lock(c->db, slot, n, flags);
}

TEST(wal_busy_codes) {
  char p[256];
  snprintf(p, sizeof p, "%s", test_path("busy.db"));
  rm3(p);
  spit(p, NULL, 0);
  Conn a, b;
  CHECK_OK(conn_open(&a, p, PS));
  CHECK_OK(conn_open(&b, p, PS));
  uint32_t t[] = {1, 2, 3};
  CHECK_OK(commit_pages(&a, t, 3, 1, 3));
  CHECK_OK(wal_begin_read(b.w, NULL));
  CHECK_OK(commit_pages(&a, t, 3, 2, 3));
  int nlog = 0, nckpt = 0;

  /* CKPT held by someone: BUSY at once, -1/-1 */
  CHECK_OK(shm_raw_lock(&b, 1, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_RC(wal_checkpoint(a.w, WAL_CKPT_PASSIVE, NULL, NULL, &nlog, &nckpt), SHALE_BUSY);
  CHECK_EQ(nlog, -1);
  CHECK_EQ(nckpt, -1);
  shm_raw_lock(&b, 1, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE);

  /* FULL waits through the busy handler for the reader to go */
  g_busy_calls = 0;
  CHECK_OK(wal_checkpoint(a.w, WAL_CKPT_FULL, end_reader_busy, &b, &nlog, &nckpt));
  CHECK(g_busy_calls > 0);
  CHECK_EQ(nlog, 6);
  CHECK_EQ(nckpt, 6);

  /* RESTART waits for WAL readers; the next writer then starts at frame 1 */
  CHECK_OK(wal_begin_read(b.w, NULL)); /* db-only reader: READ(0) */
  CHECK_OK(wal_checkpoint(a.w, WAL_CKPT_RESTART, NULL, NULL, &nlog, &nckpt));
  wal_end_read(b.w);
  CHECK_OK(commit_pages(&a, t, 1, 3, 3));
  CHECK_OK(wal_begin_read(b.w, NULL));
  CHECK_EQ(wal_max_frame(b.w), 1);
  EXPECT_PAGE(&b, 1, 3);
  EXPECT_PAGE(&b, 2, 2);
  /* b reads the WAL: TRUNCATE cannot finish without the handler */
  CHECK_RC(wal_checkpoint(a.w, WAL_CKPT_TRUNCATE, NULL, NULL, &nlog, &nckpt), SHALE_BUSY);
  CHECK(fsize(suffix(p, "-wal")) > 0);
  g_busy_calls = 0;
  CHECK_OK(wal_checkpoint(a.w, WAL_CKPT_TRUNCATE, end_reader_busy, &b, &nlog, &nckpt));
  CHECK(g_busy_calls > 0);
  CHECK_EQ(nlog, 0);
  CHECK_EQ(fsize(suffix(p, "-wal")), 0);

  /* WRITE held by another writer: FULL degrades to PASSIVE and reports BUSY */
  CHECK_OK(commit_pages(&a, t, 2, 4, 3));
  CHECK_OK(wal_begin_read(b.w, NULL));
  CHECK_OK(wal_begin_write(b.w));
  CHECK_RC(wal_checkpoint(a.w, WAL_CKPT_FULL, NULL, NULL, &nlog, &nckpt), SHALE_BUSY);
  CHECK_EQ(nlog, 2);
  CHECK_EQ(nckpt, 2); /* the passive part still copied everything */
  wal_end_write(b.w);
  wal_end_read(b.w);

  /* damaged index header while someone holds WRITE and RECOVER */
  volatile void *r0 = NULL;
  CHECK_OK(b.db->methods->shm_map(b.db, 0, 32768, 0, &r0));
  CHECK(r0 != NULL);
  CHECK_OK(shm_raw_lock(&b, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(shm_raw_lock(&b, 2, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  if (r0) ((volatile uint8_t *)r0)[8] ^= 0x55; /* iChange of copy 1 */
  CHECK_RC(wal_begin_read(a.w, NULL), SHALE_BUSY_RECOVERY);
  shm_raw_lock(&b, 2, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE);
  shm_raw_lock(&b, 0, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE);
  /* released: A recovers and sees the last commit */
  int changed = 0;
  CHECK_OK(wal_begin_read(a.w, &changed));
  EXPECT_PAGE(&a, 1, 4);
  EXPECT_PAGE(&a, 2, 4);
  EXPECT_PAGE(&a, 3, 2);
  wal_end_read(a.w);
  CHECK_OK(conn_close(&b, 0));
  CHECK_OK(conn_close(&a, 0));
}

/* ------------------------------- threads: writers, readers, checkpoints */

#include <pthread.h>
#include <stdatomic.h>

#define ST_PAGES 8
static char g_st_path[256];
static atomic_int g_st_stop, g_st_errors, g_st_commits, g_st_reads, g_st_ckpts;

static void st_fill(uint8_t *d, uint32_t pg, uint32_t v) {
  fill(d, pg, v);
  util_put4(d, v);
}

/* Page 1 of version v: v, then the version of every page (manifest). */
static void st_page1(uint8_t *d, uint32_t v, const uint32_t *man) {
  st_fill(d, 1, v);
  for (uint32_t p = 2; p <= ST_PAGES; p++) util_put4(d + 4 * p, man[p]);
}

/* Read the whole snapshot; returns its version (page 1) or -1 if any page
 * is not the version page 1's manifest names. man (may be NULL) gets it. */
static long st_read_all_m(Conn *c, uint32_t *man) {
  uint32_t m[ST_PAGES + 1] = {0};
  if (wal_db_size(c->w) == 0) { /* no commit in the log: the file's size */
    int64_t sz = 0;
    if (os_file_size(c->db, &sz) != SHALE_OK) return -1;
    if (sz == 0) {
      if (man) memcpy(man, m, sizeof m);
      return 0;
    }
  }
  uint8_t buf[PS], want[PS];
  uint32_t f;
  if (conn_page(c, 1, buf, PS, &f) != SHALE_OK) return -1;
  uint32_t v = util_get4(buf);
  for (uint32_t p = 2; p <= ST_PAGES; p++) m[p] = util_get4(buf + 4 * p);
  st_page1(want, v, m);
  if (memcmp(buf, want, PS) != 0) return -1;
  for (uint32_t pg = 2; pg <= ST_PAGES; pg++) {
    if (conn_page(c, pg, buf, PS, &f) != SHALE_OK) return -1;
    st_fill(want, pg, m[pg]);
    if (m[pg] > v || memcmp(buf, want, PS) != 0) return -1;
  }
  if (man) memcpy(man, m, sizeof m);
  return v;
}
static long st_read_all(Conn *c) { return st_read_all_m(c, NULL); }

static void *st_writer(void *arg) {
  uint64_t seed = test_seed() + (uint64_t)(uintptr_t)arg;
  Conn c;
  if (conn_open(&c, g_st_path, PS) != SHALE_OK) {
    g_st_errors++;
    return NULL;
  }
  uint8_t data[ST_PAGES][PS];
  WalPage wp[ST_PAGES];
  uint32_t man[ST_PAGES + 1];
  while (!g_st_stop) {
    int rc = wal_begin_read(c.w, NULL);
    if (rc != SHALE_OK) {
      if ((rc & 0xff) != SHALE_BUSY) g_st_errors++;
      continue;
    }
    long v = st_read_all_m(&c, man);
    if (v < 0) g_st_errors++;
    rc = v < 0 ? SHALE_ERROR : wal_begin_write(c.w);
    if (rc == SHALE_OK) {
      uint32_t nv = (uint32_t)v + 1;
      int n = 0;
      uint64_t bits = test_rand(&seed);
      for (uint32_t pg = 2; pg <= ST_PAGES; pg++) {
        if (v > 0 && !((bits >> pg) & 1)) continue; /* first commit writes all */
        man[pg] = nv;
        st_fill(data[n], pg, nv);
        wp[n].pgno = pg;
        wp[n].data = data[n];
        n++;
      }
      st_page1(data[n], nv, man);
      wp[n].pgno = 1;
      wp[n].data = data[n];
      n++;
      /* spill some frames first */
      int spill = n > 1 ? (int)(bits % (uint64_t)n) : 0;
      rc = spill ? wal_append(c.w, wp, spill, 0, WAL_SYNC_OFF) : SHALE_OK;
      if (rc == SHALE_OK) rc = wal_append(c.w, wp + spill, n - spill, ST_PAGES, WAL_SYNC_OFF);
      if (rc == SHALE_OK)
        g_st_commits++;
      else
        g_st_errors++;
      wal_end_write(c.w);
    } else if ((rc & 0xff) != SHALE_BUSY) {
      g_st_errors++;
    }
    wal_end_read(c.w);
  }
  conn_close(&c, WAL_CLOSE_KEEP);
  return NULL;
}

static void *st_reader(void *arg) {
  (void)arg;
  Conn c;
  if (conn_open(&c, g_st_path, PS) != SHALE_OK) {
    g_st_errors++;
    return NULL;
  }
  long last = 0;
  while (!g_st_stop) {
    int rc = wal_begin_read(c.w, NULL);
    if (rc != SHALE_OK) {
      if ((rc & 0xff) != SHALE_BUSY) g_st_errors++;
      continue;
    }
    long v = st_read_all(&c);
    long v2 = st_read_all(&c); /* stable while the snapshot is held */
    if (v < 0 || v != v2 || v < last) g_st_errors++;
    last = v;
    g_st_reads++;
    wal_end_read(c.w);
  }
  conn_close(&c, WAL_CLOSE_KEEP);
  return NULL;
}

static void *st_ckpt(void *arg) {
  (void)arg;
  Conn c;
  if (conn_open(&c, g_st_path, PS) != SHALE_OK) {
    g_st_errors++;
    return NULL;
  }
  uint64_t seed = test_seed();
  while (!g_st_stop) {
    int nl, nc;
    int rc = wal_checkpoint(c.w, (int)(test_rand(&seed) % 4), NULL, NULL, &nl, &nc);
    if (rc == SHALE_OK)
      g_st_ckpts++;
    else if ((rc & 0xff) != SHALE_BUSY)
      g_st_errors++;
  }
  conn_close(&c, WAL_CLOSE_KEEP);
  return NULL;
}

TEST(wal_threads_stress) {
  snprintf(g_st_path, sizeof g_st_path, "%s", test_path("st.db"));
  rm3(g_st_path);
  spit(g_st_path, NULL, 0);
  g_st_stop = g_st_errors = g_st_commits = g_st_reads = g_st_ckpts = 0;
  pthread_t th[6];
  void *(*fn[6])(void *) = {st_writer, st_writer, st_reader, st_reader, st_reader, st_ckpt};
  for (int i = 0; i < 6; i++) pthread_create(&th[i], NULL, fn[i], (void *)(uintptr_t)i);
  usleep(test_long() ? 5000000 : 700000);
  g_st_stop = 1;
  for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
  CHECK_EQ(g_st_errors, 0);
  CHECK(g_st_commits > 0);
  CHECK(g_st_reads > 0);
  CHECK(g_st_ckpts > 0);
  /* no lost update: the final version counts every commit */
  Conn c;
  CHECK_OK(conn_open(&c, g_st_path, PS));
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_EQ(st_read_all(&c), g_st_commits);
  wal_end_read(c.w);
  CHECK_OK(conn_close(&c, 0));
  if (getenv("WAL_TEST_VERBOSE"))
    fprintf(stderr, "  commits %d reads %d ckpts %d\n", g_st_commits, g_st_reads, g_st_ckpts);
}

/* ---------------- concurrent: SQLite process reads/checkpoints, we write */

#define CC_VERSIONS 30
static char g_done[256];
static int g_cc_counts[CC_VERSIONS + 1];

static int child_concurrent_reader(void) {
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  sqlite3_busy_timeout(s, 2000);
  int last_idx = 0, iters = 0, rc = 0;
  char msg[256] = "";
  int64_t t0 = os_now_ms();
  while ((access(g_done, F_OK) != 0 || iters < 3) && os_now_ms() - t0 < 30000) {
    iters++;
    sqlite3_exec(s, "BEGIN", NULL, NULL, NULL);
    char *ic = sql_text(s, "PRAGMA integrity_check");
    char *cnt = sql_text(s, "SELECT count(*) FROM t");
    sqlite3_exec(s, "COMMIT", NULL, NULL, NULL);
    int n = atoi(cnt), idx = -1;
    for (int i = last_idx; i <= CC_VERSIONS && idx < 0; i++)
      if (g_cc_counts[i] == n) idx = i;
    if (strcmp(ic, "ok") != 0 || idx < 0) {
      snprintf(msg, sizeof msg, "iter %d: integrity %.60s count %s (last version %d)", iters, ic,
               cnt, last_idx);
      rc = 4;
    } else {
      last_idx = idx;
    }
    free(ic);
    free(cnt);
    if (rc) break;
    if (iters % 4 == 0) sqlite3_exec(s, "PRAGMA wal_checkpoint(PASSIVE)", NULL, NULL, NULL);
  }
  sqlite3_close(s);
  if (!rc) snprintf(msg, sizeof msg, "ok %d", iters);
  out_write(msg);
  return rc;
}

TEST(wal_concurrent_sqlite_reader) {
  uint32_t ps = 1024;
  snprintf(g_path, sizeof g_path, "%s", test_path("cc.db"));
  snprintf(g_out, sizeof g_out, "%s", test_path("cc.out"));
  snprintf(g_done, sizeof g_done, "%s", test_path("cc.done"));
  char py[256];
  snprintf(py, sizeof py, "%s", test_path("cc_src.db"));
  rm3(g_path);
  rm3(py);
  unlink(g_done);
  /* versions 0..N of a database, made by SQLite in rollback mode */
  uint8_t *ver[CC_VERSIONS + 1];
  uint32_t nver[CC_VERSIONS + 1];
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s,
      "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);");
  uint64_t seed = test_seed();
  for (int i = 0; i <= CC_VERSIONS; i++) {
    if (i > 0) {
      char q[300];
      snprintf(q, sizeof q,
               "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<%d) "
               "INSERT INTO t(b) SELECT randomblob(%d) FROM c; DELETE FROM t WHERE a %% %d = 0",
               (int)(test_rand(&seed) % 30) + 3, (int)(test_rand(&seed) % 400) + 1,
               (int)(test_rand(&seed) % 9) + 5);
      sql(s, q);
    }
    char *cnt = sql_text(s, "SELECT count(*) FROM t");
    g_cc_counts[i] = atoi(cnt);
    free(cnt);
    sqlite3_close(s);
    ver[i] = db_pages(py, ps, &nver[i]);
    CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  }
  sqlite3_close(s);
  spit(g_path, ver[0], (long)nver[0] * ps);

  Conn c;
  CHECK_OK(conn_open(&c, g_path, ps));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) _exit(child_concurrent_reader());
  int busy = 0;
  for (int i = 1; i <= CC_VERSIONS; i++) {
    commit_diff(&c, ver[i - 1], nver[i - 1], ver[i], nver[i], ps);
    if (i % 3 == 0) {
      int nl, nc;
      int rc = wal_checkpoint(c.w, i % 6 == 0 ? WAL_CKPT_RESTART : WAL_CKPT_PASSIVE, NULL, NULL,
                              &nl, &nc);
      if (rc == SHALE_BUSY)
        busy++;
      else
        CHECK_OK(rc);
    }
    usleep(2000);
  }
  spit(g_done, (const uint8_t *)"x", 1);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  char *msg = out_read();
  if (strncmp(msg, "ok", 2) != 0) test_fail(__FILE__, __LINE__, "child: %s", msg);
  if (getenv("WAL_TEST_VERBOSE"))
    fprintf(stderr, "  child %s, our busy checkpoints %d\n", msg, busy);
  free(msg);
  CHECK_OK(conn_close(&c, 0));
  CHECK_EQ(fsize(suffix(g_path, "-wal")), -1);
  CHECK_EQ(sqlite3_open(g_path, &s), SQLITE_OK);
  char *ic = sql_text(s, "PRAGMA integrity_check");
  CHECK_STR(ic, "ok");
  free(ic);
  char *cnt = sql_text(s, "SELECT count(*) FROM t");
  CHECK_EQ(atoi(cnt), g_cc_counts[CC_VERSIONS]);
  free(cnt);
  sqlite3_close(s);
  for (int i = 0; i <= CC_VERSIONS; i++) free(ver[i]);
}

/* SQLite recovers the empty log first (its shm header then says page size
 * 4096, its pager's default) and stays open while we read and write. */
static int child_hold_open(void) {
  sqlite3 *s;
  if (sqlite3_open(g_path, &s) != SQLITE_OK) return 3;
  char *cnt = sql_text(s, "SELECT count(*) FROM t");
  out_write("ready");
  int64_t t0 = os_now_ms();
  while (access(g_done, F_OK) != 0 && os_now_ms() - t0 < 30000) usleep(1000);
  char *cnt2 = sql_text(s, "SELECT count(*) FROM t");
  char *ic = sql_text(s, "PRAGMA integrity_check");
  char msg[200];
  snprintf(msg, sizeof msg, "%s %s %s", cnt, cnt2, ic);
  out_write(msg);
  free(cnt);
  free(cnt2);
  free(ic);
  sqlite3_close(s);
  return 0;
}

TEST(wal_sqlite_recovered_first) {
  uint32_t ps = 1024;
  snprintf(g_path, sizeof g_path, "%s", test_path("rf.db"));
  snprintf(g_out, sizeof g_out, "%s", test_path("rf.out"));
  snprintf(g_done, sizeof g_done, "%s", test_path("rf.done"));
  char py[256];
  snprintf(py, sizeof py, "%s", test_path("rf_src.db"));
  rm3(g_path);
  rm3(py);
  unlink(g_done);
  unlink(g_out);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s,
      "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<30) "
      "INSERT INTO t(b) SELECT randomblob(100) FROM c;");
  sqlite3_close(s);
  uint32_t n0, n1;
  uint8_t *v0 = db_pages(py, ps, &n0);
  spit(g_path, v0, (long)n0 * ps);
  CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
  sql(s, "DELETE FROM t WHERE a < 10");
  sqlite3_close(s);
  uint8_t *v1 = db_pages(py, ps, &n1);

  Conn c;
  CHECK_OK(conn_open(&c, g_path, ps));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) _exit(child_hold_open());
  int64_t t0 = os_now_ms();
  char *m = NULL;
  for (;;) {
    free(m);
    m = out_read();
    if (strcmp(m, "ready") == 0 || os_now_ms() - t0 > 20000) break;
    usleep(1000);
  }
  CHECK_STR(m, "ready");
  free(m);
  /* the shm header is SQLite's: empty log, szPage 4096 */
  int changed = 0;
  CHECK_OK(wal_begin_read(c.w, &changed));
  CHECK_EQ(wal_max_frame(c.w), 0);
  wal_end_read(c.w);
  commit_diff(&c, v0, n0, v1, n1, ps);
  spit(g_done, (const uint8_t *)"x", 1);
  int st = 0;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  m = out_read();
  CHECK_STR(m, "30 21 ok");
  free(m);
  CHECK_OK(conn_close(&c, 0));
  free(v0);
  free(v1);
}

/* wal_write_lock_busy tells another process's writer (the reference SQLite
 * in a child, in BEGIN IMMEDIATE) from a connection of this process that
 * holds the WRITE slot without being a writer of the process's group (as a
 * reader rebuilding the index header does): only the first is a foreign
 * writer for pager_fair.c. */
TEST(wal_write_busy_foreign_only) {
  const char *p = test_path("wbusy.db");
  unlink(p);
  unlink(suffix(p, "-wal"));
  unlink(suffix(p, "-shm"));
  sqlite3 *s = NULL;
  CHECK_EQ(sqlite3_open(p, &s), SQLITE_OK);
  CHECK_EQ(sqlite3_exec(s, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1);",
                        NULL, NULL, NULL),
           SQLITE_OK);
  sqlite3_close(s);
  Conn a, c;
  CHECK_OK(conn_open(&a, p, 4096));
  CHECK_OK(conn_open(&c, p, 4096));
  /* c holds WRITE outside the group: busy, but not foreign */
  CHECK_OK(wal_begin_read(c.w, NULL));
  CHECK_OK(c.db->methods->shm_lock(c.db, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(wal_begin_read(a.w, NULL));
  CHECK_RC(wal_begin_write(a.w), SHALE_BUSY);
  CHECK(!wal_write_lock_busy(a.w));
  wal_end_read(a.w);
  c.db->methods->shm_lock(c.db, 0, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE);
  wal_end_read(c.w);
  /* a SQLite writer in another process: foreign */
  int to[2], from[2];
  CHECK_EQ(pipe(to), 0);
  CHECK_EQ(pipe(from), 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    sqlite3 *cs = NULL;
    char ok = sqlite3_open(p, &cs) == SQLITE_OK &&
                      sqlite3_exec(cs, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
                  ? '1'
                  : '0';
    char x;
    if (write(from[1], &ok, 1) != 1 || read(to[0], &x, 1) < 0) _exit(2);
    sqlite3_exec(cs, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(cs);
    _exit(0);
  }
  char ok = 0, x = 'x';
  CHECK_EQ(read(from[0], &ok, 1), 1);
  CHECK_EQ(ok, '1');
  CHECK_OK(wal_begin_read(a.w, NULL));
  CHECK_RC(wal_begin_write(a.w), SHALE_BUSY);
  CHECK(wal_write_lock_busy(a.w));
  wal_end_read(a.w);
  CHECK_EQ(write(to[1], &x, 1), 1);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  for (int i = 0; i < 2; i++) {
    close(to[i]);
    close(from[i]);
  }
  /* free again */
  CHECK_OK(wal_begin_read(a.w, NULL));
  CHECK_OK(wal_begin_write(a.w));
  CHECK(!wal_write_lock_busy(a.w));
  wal_end_write(a.w);
  wal_end_read(a.w);
  CHECK_OK(conn_close(&c, 0));
  CHECK_OK(conn_close(&a, 0));
}
