/* utf16.c -- the UTF-16 API family, printed as hex so both libraries can be
 * compared byte for byte (tests/compat/test_compat.c): open16, prepare16
 * (_v2/_v3, tails, nByte), bind_text16 and bind_text64 with UTF-16
 * encodings (byte-order marks, odd lengths, lone surrogates), column_text16
 * and bytes16 of every type (bad UTF-8 too), the column name16 family,
 * errmsg16, value_text16/le/be and bytes16, the result_text16 family and
 * result_error16, create_function16, UTF-16 collations (create_collation16,
 * create_collation with SQLITE_UTF16BE), collation_needed16, complete16,
 * value_encoding. */
#include <stdint.h>

#include "prog.h"

static void hex(const char *what, const void *p, int n) {
  printf("%s:", what);
  if (!p) {
    printf(" NULL\n");
    return;
  }
  const unsigned char *b = p;
  if (n < 0) { /* up to a zero code unit */
    n = 0;
    while (b[n] || b[n + 1]) n += 2;
  }
  for (int i = 0; i < n; i++) printf(" %02x", b[i]);
  printf("\n");
}

/* A UTF-16LE literal from ASCII (tests run on little-endian machines). */
static uint16_t *w(const char *z, uint16_t *buf) {
  int i = 0;
  for (; z[i]; i++) buf[i] = (unsigned char)z[i];
  buf[i] = 0;
  return buf;
}

/* text16 first, then bytes16: SQLite's documented safe order */
static void col16(const char *what, sqlite3_stmt *st, int i) {
  const void *p = sqlite3_column_text16(st, i);
  hex(what, p, sqlite3_column_bytes16(st, i));
}

static void f_echo16(sqlite3_context *c, int argc, sqlite3_value **argv) {
  printf("  arg bytes %d\n", sqlite3_value_bytes(argv[0]));
  const void *p = sqlite3_value_text16(argv[0]);
  hex("  arg text16", p, -1);
  printf("  arg bytes16 %d\n", sqlite3_value_bytes16(argv[0]));
  p = sqlite3_value_text16be(argv[0]);
  hex("  arg text16be", p, sqlite3_value_bytes16(argv[0]));
  p = sqlite3_value_text16le(argv[0]);
  hex("  arg text16le", p, sqlite3_value_bytes16(argv[0]));
  int mode = argc > 1 ? sqlite3_value_int(argv[1]) : 0;
  const void *t = sqlite3_value_text16(argv[0]);
  int n = sqlite3_value_bytes16(argv[0]);
  if (mode == 0) sqlite3_result_text16(c, t, n, SQLITE_TRANSIENT);
  if (mode == 1) sqlite3_result_text16le(c, t, -1, SQLITE_TRANSIENT);
  if (mode == 2) {
    static const unsigned char be[] = {0, 'B', 0, 'E', 0xd8, 0x3d, 0xde, 0x00};
    sqlite3_result_text16be(c, be, sizeof be, SQLITE_STATIC);
  }
  if (mode == 3) {
    static const unsigned char bom[] = {0xfe, 0xff, 0, 'x', 0, 'y'};
    sqlite3_result_text64(c, (const char *)bom, sizeof bom, SQLITE_STATIC, SQLITE_UTF16);
  }
  if (mode == 4) {
    uint16_t b[32];
    sqlite3_result_error16(c, w("utf16 failure", b), -1);
  }
}

static int n_cmp;
static int cmp16(void *arg, int na, const void *a, int nb, const void *b) {
  /* compare UTF-16 code units in reverse: the strings must arrive as UTF-16 */
  const unsigned char *x = a, *y = b;
  int be = arg != NULL;
  n_cmp++;
  for (int i = 0; i + 1 < na && i + 1 < nb; i += 2) {
    int ux = be ? x[i] << 8 | x[i + 1] : x[i + 1] << 8 | x[i];
    int uy = be ? y[i] << 8 | y[i + 1] : y[i + 1] << 8 | y[i];
    if (ux != uy) return uy - ux;
  }
  return nb - na;
}

static void needed16(void *arg, sqlite3 *db, int enc, const void *name) {
  hex("needed16", name, -1);
  printf("needed enc %d\n", enc);
  sqlite3_create_collation16(db, name, SQLITE_UTF16LE, NULL, cmp16);
}

static void rows(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  printf("%s\n", sql);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL)) {
    printf("  error %s\n", sqlite3_errmsg(db));
    return;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) col16("  col", st, i);
  }
  if (rc != SQLITE_DONE) hex("  step error", sqlite3_errmsg16(db), -1);
  sqlite3_finalize(st);
}

int main(void) {
  uint16_t b1[256], b2[256];
  sqlite3 *db = NULL;
  remove("utf16.db");
  EXPECT_INT(sqlite3_open("utf16.db", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, n NUMERIC); "
          "INSERT INTO t VALUES(1, 'abc', 2.5), (2, 'ünï 日本 😀', NULL), (3, '', x'4100')");
  sqlite3_close(db);

  /* open16 on an existing file, prepare16 family */
  EXPECT_INT(sqlite3_open16(w("utf16.db", b1), &db), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  const void *tail = NULL;
  const uint16_t *sql = w("SELECT id, s, n FROM t ORDER BY id; SELECT 2", b1);
  EXPECT_INT(sqlite3_prepare16_v2(db, sql, -1, &st, &tail), SQLITE_OK);
  printf("tail at %d\n", (int)((const char *)tail - (const char *)sql));
  for (int i = 0; i < 3; i++) {
    hex("name16", sqlite3_column_name16(st, i), -1);
    hex("decltype16", sqlite3_column_decltype16(st, i), -1);
    hex("table16", sqlite3_column_table_name16(st, i), -1);
    hex("origin16", sqlite3_column_origin_name16(st, i), -1);
    hex("db16", sqlite3_column_database_name16(st, i), -1);
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < 3; i++) {
      printf("  type %d bytes %d\n", sqlite3_column_type(st, i), sqlite3_column_bytes(st, i));
      col16("  text16", st, i);
    }
  }
  sqlite3_finalize(st);
  /* nByte stops at the count and at a terminator; prepare16 and _v3 */
  EXPECT_INT(sqlite3_prepare16(db, w("SELECT 42 garbage", b1), 18, &st, &tail), SQLITE_OK);
  printf("tail at %d\n", (int)((const char *)tail - (const char *)b1));
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  col16("v", st, 0);
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_prepare16_v3(db, w("SELECT 'é'", b1), -1, 0, &st, NULL), SQLITE_OK);
  b1[8] = 0xe9; /* the literal was ASCII-widened: put U+00E9 in */
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_prepare16_v3(db, b1, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  hex("e-acute", sqlite3_column_text(st, 0), sqlite3_column_bytes(st, 0));
  sqlite3_finalize(st);
  /* errors */
  EXPECT(sqlite3_prepare16_v2(db, w("SELEC 1", b1), -1, &st, NULL) != SQLITE_OK);
  hex("errmsg16", sqlite3_errmsg16(db), -1);
  EXPECT(sqlite3_prepare16_v2(db, w("SELECT nosuch", b1), -1, &st, NULL) != SQLITE_OK);
  hex("errmsg16", sqlite3_errmsg16(db), -1);
  printf("offset %d\n", sqlite3_error_offset(db));

  /* binding UTF-16 */
  EXEC_OK(db, "CREATE TABLE b(x)");
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO b VALUES(?)", -1, &st, NULL), SQLITE_OK);
  static const unsigned char lone[] = {0x3d, 0xd8, 'a', 0, 0x00, 0xdc, 'b', 0};
  static const unsigned char bomle[] = {0xff, 0xfe, 'l', 0, 'e', 0};
  static const unsigned char bombe[] = {0xfe, 0xff, 0, 'b', 0, 'e'};
  static const unsigned char odd[] = {'o', 0, 'd', 0, 'd'};
  static const unsigned char be16[] = {0, 'B', 0x30, 0x42};
  const void *vals[] = {w("plain", b2), lone, bomle, bombe, odd};
  int lens[] = {-1, sizeof lone, sizeof bomle, sizeof bombe, sizeof odd};
  for (int i = 0; i < 5; i++) {
    EXPECT_INT(sqlite3_bind_text16(st, 1, vals[i], lens[i], SQLITE_TRANSIENT), SQLITE_OK);
    EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  EXPECT_INT(
      sqlite3_bind_text64(st, 1, (const char *)be16, sizeof be16, SQLITE_STATIC, SQLITE_UTF16BE),
      SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  sqlite3_reset(st);
  EXPECT_INT(
      sqlite3_bind_text64(st, 1, (const char *)be16, sizeof be16, SQLITE_STATIC, SQLITE_UTF16LE),
      SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT x, length(x), hex(x) FROM b", -1, &st, NULL),
             SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    printf("  %s len %d utf8 %s\n", sqlite3_column_text(st, 2), sqlite3_column_int(st, 1),
           sqlite3_column_text(st, 2));
  sqlite3_finalize(st);
  sqlite3_close(db);

  /* a UTF-8 connection: functions, collations, bad UTF-8 out */
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  rows(db, "SELECT CAST(x'41ff80c3' AS TEXT), CAST(x'f09f9880' AS TEXT), 12, 1.5, NULL, x'00'");
  EXPECT_INT(
      sqlite3_create_function16(db, w("echo16", b1), -1, SQLITE_UTF16, NULL, f_echo16, NULL, NULL),
      SQLITE_OK);
  rows(db, "SELECT echo16('hé', 0)");
  rows(db, "SELECT echo16(123, 1)");
  rows(db, "SELECT echo16('x', 2), hex(echo16('x', 2))");
  rows(db, "SELECT echo16('x', 3), hex(echo16('x', 3))");
  rows(db, "SELECT echo16('x', 4)");
  EXPECT_INT(sqlite3_create_collation16(db, w("rev16", b1), SQLITE_UTF16LE, NULL, cmp16),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_collation(db, "rev16be", SQLITE_UTF16BE, (void *)1, cmp16), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE c(v); INSERT INTO c VALUES('a'),('ß'),('b'),('日'),('A')");
  rows(db, "SELECT group_concat(v, ',') FROM (SELECT v FROM c ORDER BY v COLLATE rev16)");
  rows(db, "SELECT group_concat(v, ',') FROM (SELECT v FROM c ORDER BY v COLLATE rev16be)");
  printf("compared: %d\n", n_cmp > 0);
  EXPECT_INT(sqlite3_collation_needed16(db, NULL, needed16), SQLITE_OK);
  rows(db, "SELECT group_concat(v, ',') FROM (SELECT v FROM c ORDER BY v COLLATE made16)");
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT v FROM c LIMIT 1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  printf("value_encoding %d\n", sqlite3_value_encoding(sqlite3_column_value(st, 0)));
  sqlite3_finalize(st);
  /* complete16 */
  printf("complete16 %d %d %d\n", sqlite3_complete16(w("SELECT 1;", b1)),
         sqlite3_complete16(w("SELECT 1", b1)),
         sqlite3_complete16(w("CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1;", b1)));
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  remove("utf16.db");
  return prog_done();
}
