/*
 * test_btree_interop.c -- files shared with the reference sqlite3 both ways,
 * header validation (what SQLite refuses we refuse), and hostile files
 * (random corruption must give SHALE_CORRUPT or correct data, never a crash).
 */
#include <unistd.h>

#include "bt_helpers.h"

static void exec_ok(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "sqlite3: %s: %s", sql, err);
    sqlite3_free(err);
  }
}

/* Write with the btree, read with sqlite3. */
TEST(interop_btree_writes_sqlite_reads) {
  static const uint32_t pss[] = {512, 4096, 65536};
  for (int p = 0; p < 3; p++) {
    char name[32];
    snprintf(name, sizeof name, "w%u.db", pss[p]);
    Btree *bt = bt_fresh(name, pss[p]);
    uint32_t root;
    CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
    CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a,b)"));
    BtCursor *c;
    CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
    char *text = malloc(200000);
    for (int i = 0; i < 200000; i++) text[i] = (char)('a' + i % 26);
    for (int64_t r = 1; r <= 3000; r++) {
      uint32_t tl = (uint32_t)((r * 7919) % 97 == 0 ? 20000 + r * 37 % 150000 : r % 300);
      RecVal v[2] = {{'i', r * 1000 - 5, NULL, 0}, {r % 2 ? 't' : 'b', 0, text, tl}};
      uint32_t n;
      uint8_t *rec = rec_encode(v, 2, &n);
      CHECK_OK(btree_insert(c, r, rec, n, 0, 0));
      free(rec);
    }
    btree_cursor_close(c);
    CHECK_OK(btree_commit(bt));
    CHECK_OK(btree_close(bt));
    const char *path = test_path(name);
    CHECK_SQLITE_OK(path);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(db, "SELECT rowid, a, b FROM t ORDER BY rowid", -1, &st, NULL),
             SQLITE_OK);
    int64_t r = 0;
    int bad = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
      r++;
      uint32_t tl = (uint32_t)((r * 7919) % 97 == 0 ? 20000 + r * 37 % 150000 : r % 300);
      int ok = sqlite3_column_int64(st, 0) == r && sqlite3_column_int64(st, 1) == r * 1000 - 5 &&
               sqlite3_column_bytes(st, 2) == (int)tl &&
               sqlite3_column_type(st, 2) == (r % 2 ? SQLITE_TEXT : SQLITE_BLOB) &&
               (tl == 0 || memcmp(sqlite3_column_blob(st, 2), text, tl) == 0);
      if (!ok && bad++ < 3) test_fail(__FILE__, __LINE__, "row %lld differs", (long long)r);
    }
    CHECK_EQ(r, 3000);
    sqlite3_finalize(st);
    /* sqlite3 can also write to it */
    exec_ok(db, "INSERT INTO t VALUES(1, 'x'); DELETE FROM t WHERE rowid % 3 = 0;");
    sqlite3_close(db);
    CHECK_SQLITE_OK(path);
    free(text);
  }
}

/* Write with sqlite3, read with the btree. */
TEST(interop_sqlite_writes_btree_reads) {
  const char *path = test_path("s.db");
  remove(path);
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  exec_ok(db,
          "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER, b BLOB);"
          "CREATE INDEX ti ON t(b);"
          "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<10000) "
          "INSERT INTO t SELECT i*3, randomblob(CASE WHEN i%50=0 THEN 5000+i ELSE i%200 END) "
          "FROM c;"
          "DELETE FROM t WHERE a % 7 = 0;");
  /* expected rows from sqlite */
  int64_t *rowid = malloc(sizeof(int64_t) * 10000), *aval = malloc(sizeof(int64_t) * 10000);
  uint8_t **blob = malloc(sizeof(uint8_t *) * 10000);
  int *blen = malloc(sizeof(int) * 10000);
  int nrow = 0;
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "SELECT rowid, a, b FROM t ORDER BY rowid", -1, &st, NULL);
  while (sqlite3_step(st) == SQLITE_ROW) {
    rowid[nrow] = sqlite3_column_int64(st, 0);
    aval[nrow] = sqlite3_column_int64(st, 1);
    blen[nrow] = sqlite3_column_bytes(st, 2);
    blob[nrow] = malloc((size_t)blen[nrow] + 1);
    memcpy(blob[nrow], sqlite3_column_blob(st, 2), (size_t)blen[nrow]);
    nrow++;
  }
  sqlite3_finalize(st);
  int64_t troot = 0, iroot = 0;
  sqlite3_prepare_v2(db, "SELECT name, rootpage FROM sqlite_schema", -1, &st, NULL);
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (!strcmp((const char *)sqlite3_column_text(st, 0), "t")) troot = sqlite3_column_int64(st, 1);
    if (!strcmp((const char *)sqlite3_column_text(st, 0), "ti"))
      iroot = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);

  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_EQ(btree_page_size(bt), 1024);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, (uint32_t)troot, 0, NULL, NULL, &c));
  int empty, eof, i = 0, bad = 0;
  CHECK_OK(btree_first(c, &empty));
  while (!empty) {
    uint32_t n = btree_payload_size(c);
    uint8_t *rec = malloc(n);
    CHECK_OK(btree_payload_read(c, 0, n, rec));
    char t;
    int64_t iv = 0;
    const uint8_t *p;
    uint32_t len;
    int ok = i < nrow && btree_rowid(c) == rowid[i] && !rec_column(rec, n, 0, &t, &iv, &p, &len) &&
             iv == aval[i] && !rec_column(rec, n, 1, &t, &iv, &p, &len) &&
             len == (uint32_t)blen[i] && (len == 0 || memcmp(p, blob[i], len) == 0);
    if (!ok && bad++ < 3) test_fail(__FILE__, __LINE__, "row %d differs", i);
    free(rec);
    i++;
    CHECK_OK(btree_next(c, &eof));
    if (eof) break;
  }
  CHECK_EQ(i, nrow);
  int64_t cnt;
  CHECK_OK(btree_count(c, &cnt));
  CHECK_EQ(cnt, nrow);
  btree_cursor_close(c);
  /* the index has the same number of entries, in blob order */
  CHECK_OK(btree_cursor_open(bt, (uint32_t)iroot, 0, NULL, NULL, &c));
  CHECK_OK(btree_count(c, &cnt));
  CHECK_EQ(cnt, nrow);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  /* and we can modify the sqlite file: delete half the rows, sqlite checks */
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_OK(btree_cursor_open(bt, (uint32_t)troot, 1, NULL, NULL, &c));
  CHECK_OK(btree_first(c, &empty));
  int k = 0;
  for (;;) {
    if (k++ % 2 == 0) CHECK_OK(btree_delete(c));
    CHECK_OK(btree_next(c, &eof));
    if (eof) break;
  }
  btree_cursor_close(c);
  CHECK_OK(btree_clear_table(bt, (uint32_t)iroot, NULL)); /* index now empty: drop it from sqlite */
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  exec_ok(db, "DROP INDEX ti;");
  sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_EQ(sqlite3_column_int(st, 0), nrow / 2);
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK_SQLITE_OK(path);
  for (int j = 0; j < nrow; j++) free(blob[j]);
  free(blob);
  free(blen);
  free(rowid);
  free(aval);
}

/* ---- header validation ---- */

static void patch_file(const char *path, long off, const uint8_t *bytes, int n) {
  FILE *f = fopen(path, "r+b");
  fseek(f, off, SEEK_SET);
  fwrite(bytes, 1, (size_t)n, f);
  fclose(f);
}

static int open_and_read(const char *path, int level, Btree **out) {
  Btree *bt;
  int rc = btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt);
  if (rc) return rc;
  rc = btree_begin(bt, level);
  *out = bt;
  return rc;
}

TEST(header_validation) {
  const char *path = test_path("h.db");
  const char *copy = test_path("hc.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  exec_ok(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1);");
  sqlite3_close(db);
  FILE *f = fopen(path, "rb");
  uint8_t img[8192];
  size_t nimg = fread(img, 1, sizeof img, f);
  fclose(f);
  struct {
    long off;
    uint8_t v[4];
    int n;
    int level;
    int rc;
    const char *msg;
  } cases[] = {
      {19, {3}, 1, BTREE_TXN_READ, SHALE_NOTADB, "file is not a database"},
      {21, {63}, 1, BTREE_TXN_READ, SHALE_NOTADB, "file is not a database"},
      {22, {31}, 1, BTREE_TXN_READ, SHALE_NOTADB, NULL},
      {23, {33}, 1, BTREE_TXN_READ, SHALE_NOTADB, NULL},
      {44, {0, 0, 0, 5}, 4, BTREE_TXN_READ, SHALE_ERROR, "unsupported file format"},
      {56, {0, 0, 0, 2}, 4, BTREE_TXN_READ, SHALE_OK, NULL},
      {56, {0, 0, 0, 3}, 4, BTREE_TXN_READ, SHALE_OK, NULL},
      {18, {3}, 1, BTREE_TXN_READ, SHALE_OK, NULL},
      {18, {3}, 1, BTREE_TXN_WRITE, SHALE_READONLY, NULL},
      {52, {0, 0, 0, 2}, 4, BTREE_TXN_READ, SHALE_OK, NULL},
      {52, {0, 0, 0, 2}, 4, BTREE_TXN_WRITE, SHALE_OK, NULL}, /* auto-vacuum: writable */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    remove(copy);
    f = fopen(copy, "wb");
    fwrite(img, 1, nimg, f);
    fclose(f);
    patch_file(copy, cases[i].off, cases[i].v, cases[i].n);
    Btree *bt = NULL;
    int rc = open_and_read(copy, cases[i].level, &bt);
    if (rc != cases[i].rc)
      test_fail(__FILE__, __LINE__, "case %zu: rc %d expected %d", i, rc, cases[i].rc);
    if (cases[i].msg && bt) CHECK_STR(btree_errmsg(bt), cases[i].msg);
    if (bt) {
      btree_rollback(bt);
      btree_close(bt);
    }
  }
}

TEST(new_file_header_fields) {
  Btree *bt = bt_fresh("hdr.db", 65536);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  FILE *f = fopen(test_path("hdr.db"), "rb");
  uint8_t h[112];
  CHECK_EQ(fread(h, 1, sizeof h, f), sizeof h);
  fclose(f);
  CHECK(memcmp(h, "SQLite format 3", 16) == 0);
  CHECK_EQ(h[16], 0);
  CHECK_EQ(h[17], 1);
  CHECK_EQ(h[18], 1);
  CHECK_EQ(h[19], 1);
  CHECK_EQ(h[21], 64);
  CHECK_EQ(h[22], 32);
  CHECK_EQ(h[23], 32);
  CHECK_EQ(util_get4(h + 44), 4);
  CHECK_EQ(util_get4(h + 56), 1);
  /* empty leaf table on page 1 with content start 0 = 65536 */
  CHECK_EQ(h[100], 0x0d);
  CHECK_EQ(util_get2(h + 105), 0);
  CHECK_SQLITE_OK(test_path("hdr.db"));
}

/* ---- hostile files ---- */

static void scan_everything(Btree *bt, uint32_t npages) {
  /* Walk every plausible root with both kinds of cursor; any result code is
   * fine as long as nothing crashes or leaks. */
  for (uint32_t root = 1; root <= npages; root++) {
    BtCursor *c;
    if (btree_cursor_open(bt, root, 0, NULL, NULL, &c)) continue;
    int empty, eof, steps = 0;
    if (btree_first(c, &empty) == SHALE_OK && !empty) {
      while (steps++ < 20000) {
        uint32_t n = btree_payload_size(c), na;
        btree_payload_fetch(c, &na);
        uint8_t *b = malloc(n + 1);
        btree_payload_read(c, 0, n, b);
        free(b);
        if (btree_next(c, &eof) || eof) break;
      }
    }
    if (btree_last(c, &empty) == SHALE_OK && !empty) {
      steps = 0;
      while (steps++ < 20000 && btree_prev(c, &eof) == SHALE_OK && !eof) {
      }
    }
    int res;
    btree_seek_rowid(c, 500, &res);
    btree_seek_key(c, "abc", 3, &res);
    int64_t cnt;
    btree_count(c, &cnt);
    btree_cursor_close(c);
  }
}

static void corrupt_run(const char *setup, uint32_t psz) {
  const char *path = test_path("fz.db");
  const char *work = test_path("fzw.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  exec_ok(db, setup);
  sqlite3_close(db);
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *img = malloc((size_t)size);
  CHECK_EQ(fread(img, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  uint32_t npages = (uint32_t)(size / psz);
  uint64_t s = test_seed();
  int iters = test_long() ? 3000 : 300;
  int ncorrupt = 0;
  for (int it = 0; it < iters; it++) {
    uint8_t *m = malloc((size_t)size);
    memcpy(m, img, (size_t)size);
    int nflip = 1 + (int)(test_rand(&s) % 8);
    for (int k = 0; k < nflip; k++) {
      long off = 100 + (long)(test_rand(&s) % (uint64_t)(size - 100));
      if (test_rand(&s) % 2) {
        /* aim at page headers, cell pointers and the freelist fields */
        long pg = (long)(test_rand(&s) % npages);
        off = pg * (long)psz + (pg == 0 ? 100 : 0) + (long)(test_rand(&s) % 24);
        if (test_rand(&s) % 8 == 0) off = 32 + (long)(test_rand(&s) % 8);
      }
      switch (test_rand(&s) % 3) {
        case 0:
          m[off] ^= (uint8_t)(1u << (test_rand(&s) % 8));
          break;
        case 1:
          m[off] = (uint8_t)test_rand(&s);
          break;
        default:
          m[off] = (uint8_t)(test_rand(&s) % 2 ? 0 : 0xff);
          break;
      }
    }
    remove(work);
    f = fopen(work, "wb");
    fwrite(m, 1, (size_t)size, f);
    fclose(f);
    free(m);
    Btree *bt;
    if (btree_open(NULL, work, SHALE_OPEN_READWRITE, &bt)) continue;
    if (btree_begin(bt, BTREE_TXN_READ) == SHALE_OK) {
      scan_everything(bt, npages + 2);
      if (btree_errmsg(bt)) ncorrupt++;
      /* writes on a corrupt file: errors allowed, crashes not */
      if (btree_begin(bt, BTREE_TXN_WRITE) == SHALE_OK) {
        for (uint32_t root = 2; root <= 4; root++) {
          BtCursor *c;
          if (btree_cursor_open(bt, root, 1, NULL, NULL, &c)) continue;
          uint8_t buf[700];
          memset(buf, 7, sizeof buf);
          for (int64_t r = 0; r < 60; r++) {
            if (btree_insert(c, r * 13, buf, (uint32_t)(r * 11 % 700), 0, 0)) break;
          }
          int empty, eof;
          if (btree_first(c, &empty) == SHALE_OK && !empty) {
            for (int k = 0; k < 100; k++) {
              if (btree_delete(c) || btree_next(c, &eof) || eof) break;
            }
          }
          btree_cursor_close(c);
        }
        btree_clear_table(bt, 3, NULL);
        btree_drop_table(bt, 2);
      }
    }
    btree_rollback(bt);
    btree_close(bt);
  }
  CHECK(ncorrupt > 0); /* the corruption was noticed at least sometimes */
  free(img);
}

TEST(corrupt_files_never_crash) {
  corrupt_run(
      "PRAGMA page_size=512; CREATE TABLE t(a, b); CREATE INDEX ti ON t(b);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<400) "
      "INSERT INTO t SELECT i, randomblob(CASE WHEN i%20=0 THEN 1500 ELSE i%90 END) FROM c;"
      "DELETE FROM t WHERE a%5=0;",
      512);
}

TEST(corrupt_files_never_crash_index_freelist) {
  corrupt_run(
      "PRAGMA page_size=1024; CREATE TABLE w(k, v, PRIMARY KEY(k)) WITHOUT ROWID;"
      "CREATE TABLE t(a); CREATE INDEX tv ON w(v);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<1500) "
      "INSERT INTO w SELECT randomblob(4 + i%300), i FROM c;"
      "INSERT INTO t SELECT randomblob(3000) FROM w WHERE v < 40;"
      "DELETE FROM w WHERE v%3=0; DELETE FROM t WHERE rowid%2=0;",
      1024);
}

/* The lock-byte page (file offset 1 GiB) is never handed out: a sparse file
 * of 16384 pages of 64 KiB grows to 16386, skipping page 16385. */
TEST(lock_byte_page_skipped) {
  const char *path = test_path("lockbyte.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  exec_ok(db, "PRAGMA page_size=65536; CREATE TABLE t(a);");
  sqlite3_close(db);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  CHECK_EQ(ftruncate(fileno(f), 16384LL * 65536), 0);
  uint8_t sz[4];
  util_put4(sz, 16384);
  fseek(f, 28, SEEK_SET);
  fwrite(sz, 1, 4, f);
  fclose(f);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_EQ(btree_page_count(bt), 16384);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  CHECK_EQ(root, 16386);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[200000];
  fill_payload(buf, 1, sizeof buf);
  CHECK_OK(btree_insert(c, 1, buf, sizeof buf, 0, 0));
  btree_cursor_close(c);
  CHECK_EQ(btree_page_count(bt), 16389);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &c));
  int res;
  CHECK_OK(btree_seek_rowid(c, 1, &res));
  CHECK_EQ(res, 0);
  CHECK(payload_matches(c, 1, sizeof buf));
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  remove(path);
}
