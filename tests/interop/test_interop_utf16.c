/*
 * test_interop_utf16.c -- UTF-16 database files both ways (issue 18):
 *  - SQLite makes a UTF-16le and a UTF-16be file (indexes BINARY and
 *    NOCASE, text beyond the BMP, embedded NULs); Shale reads it with the
 *    same answers (ORDER BY over the index, seeks), then changes it, and
 *    SQLite's integrity_check is "ok" with the same answers;
 *  - Shale makes the files (PRAGMA encoding, then CREATE); SQLite reads them:
 *    header offset 56, PRAGMA encoding, integrity_check, the same answers;
 *  - ATTACH of a file of another encoding is refused as SQLite refuses it.
 *
 * Invariants:
 *  1. Answers are compared as text with its length (NULs included), rows
 *     joined in query order.
 */
#include <string.h>

#include "../common/tscratch.h"
#include "../test.h"
#include "interop_rows.h"
#include "shale.h"
#include "sqlite3.h"

static const char *const fill_sql =
    "CREATE TABLE t(a TEXT, b INTEGER);"
    "CREATE INDEX ta ON t(a);"
    "CREATE INDEX tn ON t(a COLLATE NOCASE, b);"
    "INSERT INTO t VALUES('abc',1),('\xc4\x81',2),('a',3),('\xf0\x9f\x98\x80x',4),"
    "('z'||char(0)||'q',5),('\xce\xa9',6),('ABD',7),('\xef\xbd\x9a',8),('',9),(NULL,10);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<300)"
    " INSERT INTO t SELECT printf('%d\xc3\xa9%s', i, char(0x10000 + i * 97)), 100 + i FROM c;";

static const char *const queries[] = {
    "SELECT b, a FROM t ORDER BY a, b",
    "SELECT b, a FROM t WHERE a > 'a' AND a < 'zz' ORDER BY a",
    "SELECT b FROM t WHERE a = '\xc4\x81'",
    "SELECT b FROM t WHERE a = 'z'||char(0)||'q'",
    "SELECT b, a FROM t ORDER BY a COLLATE NOCASE, b",
    "SELECT b FROM t WHERE a = 'ABC' COLLATE NOCASE",
    "SELECT count(*), sum(length(a)) FROM t",
    "PRAGMA encoding",
};

/* Append a query's rows to out (invariant 1). */
static void put(char *out, size_t cap, size_t *len, const void *z, int n) {
  if (*len + (size_t)n + 2 >= cap) return;
  memcpy(out + *len, z, (size_t)n);
  *len += (size_t)n;
  out[(*len)++] = '|';
}

static size_t sqlite_answer(const char *path, const char *sql, char *out, size_t cap) {
  sqlite3 *db;
  sqlite3_stmt *st;
  size_t len = 0;
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  CHECK_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *z = sqlite3_column_text(st, i);
      put(out, cap, &len, z ? (const char *)z : "NULL", z ? sqlite3_column_bytes(st, i) : 4);
    }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return len;
}

static size_t shale_answer(const char *path, const char *sql, char *out, size_t cap) {
  shale *db;
  shale_stmt *st;
  size_t len = 0;
  CHECK_EQ(shale_open(path, &db), SHALE_OK);
  CHECK_EQ(shale_prepare_v2(db, sql, -1, &st, NULL), SHALE_OK);
  while (shale_step(st) == SHALE_ROW)
    for (int i = 0; i < shale_column_count(st); i++) {
      const unsigned char *z = shale_column_text(st, i);
      put(out, cap, &len, z ? (const char *)z : "NULL", z ? shale_column_bytes(st, i) : 4);
    }
  shale_finalize(st);
  shale_close(db);
  return len;
}

static char g_a[1 << 16], g_b[1 << 16];

static void same_answers(const char *path, const char *what) {
  for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
    size_t na = sqlite_answer(path, queries[q], g_a, sizeof g_a);
    size_t nb = shale_answer(path, queries[q], g_b, sizeof g_b);
    if (na != nb || memcmp(g_a, g_b, na))
      test_fail(__FILE__, __LINE__, "%s: %s: SQLite %.200s / Shale %.200s", what, queries[q], g_a,
                g_b);
  }
  size_t n = sqlite_answer(path, "PRAGMA integrity_check", g_a, sizeof g_a);
  if (n != 3 || memcmp(g_a, "ok|", 3)) test_fail(__FILE__, __LINE__, "%s: %.300s", what, g_a);
  n = shale_answer(path, "PRAGMA integrity_check", g_b, sizeof g_b);
  if (n != 3 || memcmp(g_b, "ok|", 3))
    test_fail(__FILE__, __LINE__, "%s: Shale: %.300s", what, g_b);
}

static const char *const change_sql =
    "UPDATE t SET a = a || '\xc3\xa9' WHERE b % 3 = 0;"
    "DELETE FROM t WHERE b % 7 = 0;"
    "INSERT INTO t VALUES('\xf0\x90\x80\x80', 1000), ('A', 1001);"
    "VACUUM;";

static void shale_exec_ok(const char *path, const char *sql) {
  shale *db;
  char *err = NULL;
  CHECK_EQ(shale_open(path, &db), SHALE_OK);
  if (shale_exec(db, sql, NULL, NULL, &err) != SHALE_OK)
    test_fail(__FILE__, __LINE__, "Shale: %s", err ? err : "?");
  shale_free(err);
  shale_close(db);
}

static void sqlite_exec_ok(const char *path, const char *sql) {
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  CHECK_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

static const char *const encs[2] = {"UTF-16le", "UTF-16be"};

TEST(interop_utf16_made_by_sqlite) {
  for (int e = 0; e < 2; e++) {
    char name[32], pre[64];
    snprintf(name, sizeof name, "s16_%d.db", e);
    const char *path = tscratch_path(name);
    remove(path);
    snprintf(pre, sizeof pre, "PRAGMA encoding='%s';", encs[e]);
    sqlite3 *sdb; /* the encoding and the first CREATE on one connection */
    CHECK_EQ(sqlite3_open(path, &sdb), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(sdb, pre, NULL, NULL, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(sdb, fill_sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(sdb);
    CHECK_EQ(header_u32(path, 56), (uint32_t)(2 + e));
    same_answers(path, encs[e]);
    shale_exec_ok(path, change_sql);
    CHECK_EQ(header_u32(path, 56), (uint32_t)(2 + e));
    same_answers(path, encs[e]);
  }
}

TEST(interop_utf16_made_by_shale) {
  for (int e = 0; e < 2; e++) {
    char name[32], pre[64];
    snprintf(name, sizeof name, "h16_%d.db", e);
    const char *path = tscratch_path(name);
    remove(path);
    snprintf(pre, sizeof pre, "PRAGMA encoding='%s';", encs[e]);
    shale *db;
    CHECK_EQ(shale_open(path, &db), SHALE_OK);
    CHECK_EQ(shale_exec(db, pre, NULL, NULL, NULL), SHALE_OK);
    CHECK_EQ(shale_exec(db, fill_sql, NULL, NULL, NULL), SHALE_OK);
    shale_close(db);
    CHECK_EQ(header_u32(path, 56), (uint32_t)(2 + e));
    same_answers(path, encs[e]);
    sqlite_exec_ok(path, change_sql);
    same_answers(path, encs[e]);
  }
}

TEST(interop_utf16_attach_other_encoding) {
  const char *p8 = tscratch_path("a8.db"), *p16 = tscratch_path("a16.db");
  remove(p8);
  remove(p16);
  sqlite_exec_ok(p8, "CREATE TABLE x(a)");
  sqlite_exec_ok(p16, "PRAGMA encoding='UTF-16le'; CREATE TABLE y(a)");
  char sql[2048];
  snprintf(sql, sizeof sql, "ATTACH '%s' AS o", p16);
  sqlite3 *sdb;
  shale *hdb;
  CHECK_EQ(sqlite3_open(p8, &sdb), SQLITE_OK);
  int src = sqlite3_exec(sdb, sql, NULL, NULL, NULL);
  CHECK_EQ(shale_open(p8, &hdb), SHALE_OK);
  int hrc = shale_exec(hdb, sql, NULL, NULL, NULL);
  CHECK_EQ(hrc, src);
  CHECK_STR(shale_errmsg(hdb), sqlite3_errmsg(sdb));
  sqlite3_close(sdb);
  shale_close(hdb);
}
