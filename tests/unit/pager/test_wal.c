/*
 * test_wal.c -- the WAL module (src/pager/wal.c) against the reference
 * SQLite: logs written by SQLite are recovered and read page for page, and
 * logs we write are recovered and read by SQLite (integrity_check, content).
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

static int conn_open(Conn *c, const char *path, uint32_t ps) {
  memset(c, 0, sizeof *c);
  c->vfs = os_vfs_find("unix");
  int rc = os_open_alloc(c->vfs, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_DB,
                         NULL, &c->db);
  if (rc == SHALE_OK) rc = os_lock(c->db, OS_LOCK_SHARED);
  if (rc == SHALE_OK) rc = wal_open(c->vfs, c->db, suffix(path, "-wal"), ps, &c->w);
  return rc;
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
  snprintf(q, sizeof q, "PRAGMA page_size=%u; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;", ps);
  sql(s, q);
  sql(s, "CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);");
  for (int i = 0; i < ncommit; i++) {
    uint64_t r = test_rand(&seed);
    snprintf(q, sizeof q,
             "BEGIN; WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<%d) "
             "INSERT INTO t(b) SELECT randomblob(%d) FROM c;"
             "UPDATE t SET b=randomblob(50) WHERE a %% %d = 0; DELETE FROM t WHERE a %% 13 = %d; COMMIT;",
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
    if (memcmp(buf, want + (size_t)(p - 1) * ps, ps) != 0) test_fail(__FILE__, __LINE__, "page %u differs", p);
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
  CHECK_OK(wal_begin_read(c->w, NULL));
  CHECK_OK(wal_begin_write(c->w));
  /* spill half as non-commit frames first, then commit the rest */
  int half = n / 2;
  if (half > 0) CHECK_OK(wal_append(c->w, pg, half, 0, WAL_SYNC_NORMAL));
  CHECK_OK(wal_append(c->w, pg + half, n - half, nnext, WAL_SYNC_FULL));
  wal_end_write(c->w);
  wal_end_read(c->w);
  free(pg);
}

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
  sql(s, "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);"
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
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(sqlite3_open(py, &s), SQLITE_OK);
    sql(s, steps[i]);
    free(want);
    want = sql_text(s, "SELECT count(*) || ',' || total(length(b)) || ',' || "
                       "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
    sqlite3_close(s);
    uint32_t nnext;
    uint8_t *next = db_pages(py, ps, &nnext);
    commit_diff(&c, prev, nprev, next, nnext, ps);
    if (prev != v0) free(prev);
    prev = next;
    nprev = nnext;
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
  char *got = sql_text(s, "SELECT count(*) || ',' || total(length(b)) || ',' || "
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
  got = sql_text(s, "SELECT count(*) || ',' || total(length(b)) || ',' || "
                    "(SELECT group_concat(name) FROM sqlite_schema) FROM t");
  CHECK_STR(got, want);
  free(got);
  sqlite3_close(s);
  free(want);
  free(buf);
  if (prev != v0) free(prev);
  free(v0);
}
