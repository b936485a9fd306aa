/* txn_state.c -- sqlite3_txn_state per schema through a transaction's life,
 * the update hook's database names (main, temp, attached), text and blobs
 * with embedded NULs bound and read back byte for byte, and
 * sqlite3_error_offset of several errors, and what an interrupt inside a
 * transaction leaves (SQLite's special errors: a writing statement's
 * interrupt rolls the whole transaction back, a reading one's leaves it).
 * Printed so both libraries can be compared (tests/compat/test_compat.c). */
#include "prog.h"

static sqlite3 *db;

static void states(const char *when) {
  printf("%-28s all %d main %d temp %d aux %d nosuch %d\n", when, sqlite3_txn_state(db, NULL),
         sqlite3_txn_state(db, "main"), sqlite3_txn_state(db, "temp"), sqlite3_txn_state(db, "aux"),
         sqlite3_txn_state(db, "nosuch"));
}

static void exec(const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err)) printf("error: %s\n", err);
  sqlite3_free(err);
}

static void on_update(void *arg, int op, const char *zdb, const char *tab, sqlite3_int64 rowid) {
  printf("  update op %d db %s table %s rowid %lld\n", op, zdb, tab, rowid);
}

static void offset(const char *sql) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  printf("offset %d rc %d: %s | %s\n", sqlite3_error_offset(db), rc, sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
}

static int g_ticks, g_stop_after;
static int stop_soon(void *arg) { return ++g_ticks > g_stop_after; }

static void show(const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    printf("prepare error: %s\n", sqlite3_errmsg(db));
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW) printf("  %s\n", sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

/* sql interrupted by the progress handler after a few callbacks */
static void interrupted(const char *sql, int after) {
  g_ticks = 0;
  g_stop_after = after;
  sqlite3_progress_handler(db, 3, stop_soon, NULL);
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  sqlite3_progress_handler(db, 0, NULL, NULL);
  printf("%s: rc %d (%s) autocommit %d\n", sql, rc, err ? err : "-", sqlite3_get_autocommit(db));
  sqlite3_free(err);
}

static void interrupts(void) {
  exec("CREATE TABLE iv(x); INSERT INTO iv VALUES(1),(2),(3),(4),(5),(6)");
  exec("BEGIN; INSERT INTO iv VALUES(7)");
  interrupted("UPDATE iv SET x = x + 10", 4);
  show("SELECT group_concat(x) FROM iv");
  exec("COMMIT");
  exec("BEGIN; INSERT INTO iv VALUES(8)");
  interrupted("SELECT count(*) FROM iv a, iv b, iv c", 4);
  show("SELECT group_concat(x) FROM iv");
  exec("COMMIT");
  show("SELECT group_concat(x) FROM iv");
  /* a statement savepoint does not save the transaction from it either */
  exec("CREATE TABLE iu(x UNIQUE); BEGIN; INSERT INTO iu VALUES(1)");
  interrupted("INSERT INTO iu SELECT x + 100 FROM iv", 3);
  show("SELECT group_concat(x) FROM iu");
  exec("ROLLBACK");
  /* in autocommit mode the statement alone goes */
  interrupted("UPDATE iv SET x = x * 2", 4);
  show("SELECT group_concat(x) FROM iv");
}

int main(void) {
  remove("txn_state.db");
  remove("txn_state_aux.db");
  EXPECT_INT(sqlite3_open("txn_state.db", &db), SQLITE_OK);
  states("fresh");
  exec("ATTACH 'txn_state_aux.db' AS aux");
  states("attached");
  exec("CREATE TABLE t(a); CREATE TABLE aux.u(b)");
  states("after autocommit DDL");
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT * FROM t, aux.u", -1, &st, NULL), SQLITE_OK);
  exec("INSERT INTO t VALUES(1); INSERT INTO aux.u VALUES(2)");
  sqlite3_step(st);
  states("reading");
  sqlite3_reset(st);
  states("reset");
  exec("BEGIN");
  states("BEGIN");
  sqlite3_step(st);
  sqlite3_reset(st);
  states("BEGIN + read");
  exec("INSERT INTO aux.u VALUES(3)");
  states("write aux");
  exec("CREATE TEMP TABLE tt(c)");
  states("temp table");
  exec("COMMIT");
  states("COMMIT");
  exec("BEGIN IMMEDIATE");
  states("BEGIN IMMEDIATE");
  exec("ROLLBACK");
  states("ROLLBACK");
  sqlite3_finalize(st);

  /* update hook: database names */
  sqlite3_update_hook(db, on_update, NULL);
  exec("INSERT INTO t VALUES(10)");
  exec("INSERT INTO aux.u VALUES(11)");
  exec("INSERT INTO tt VALUES(12)");
  exec("UPDATE aux.u SET b = b + 1 WHERE b = 11");
  exec("DELETE FROM tt");
  exec("DELETE FROM aux.u WHERE b = 12");
  sqlite3_update_hook(db, NULL, NULL);

  /* embedded NULs */
  static const char text[] = {'a', 0, 'b', 0, 0, 'c'};
  static const unsigned char blob[] = {0, 1, 0, 255, 0};
  EXPECT_INT(sqlite3_prepare_v2(db,
                                "SELECT ?1, ?2, length(?1), length(?2), hex(?1), hex(?2), "
                                "typeof(?1), ?1 = ?1",
                                -1, &st, NULL),
             SQLITE_OK);
  sqlite3_bind_text(st, 1, text, sizeof text, SQLITE_STATIC);
  sqlite3_bind_blob(st, 2, blob, sizeof blob, SQLITE_STATIC);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  printf("text bytes %d same %d | blob bytes %d same %d | len %d %d | %s %s %s %d\n",
         sqlite3_column_bytes(st, 0), !memcmp(sqlite3_column_text(st, 0), text, sizeof text),
         sqlite3_column_bytes(st, 1), !memcmp(sqlite3_column_blob(st, 1), blob, sizeof blob),
         sqlite3_column_int(st, 2), sqlite3_column_int(st, 3), sqlite3_column_text(st, 4),
         sqlite3_column_text(st, 5), sqlite3_column_text(st, 6), sqlite3_column_int(st, 7));
  sqlite3_finalize(st);
  exec("CREATE TABLE n(x)");
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO n VALUES(?)", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, text, sizeof text, SQLITE_TRANSIENT);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  sqlite3_reset(st);
  sqlite3_bind_blob64(st, 1, blob, sizeof blob, SQLITE_TRANSIENT);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT x, typeof(x), hex(x) FROM n", -1, &st, NULL),
             SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    printf("stored %s %s bytes %d\n", sqlite3_column_text(st, 1), sqlite3_column_text(st, 2),
           sqlite3_column_bytes(st, 0));
  sqlite3_finalize(st);

  /* error offsets */
  offset("SELECT 1 +");
  offset("SELECT nosuch FROM t");
  offset("SELECT t.nosuch FROM t");
  offset("SELECT nofn(1)");
  offset("SELECT abs(1, 2)");
  offset("CREATE TABLE t(x)");
  offset("SELECT 'unterminated");
  offset("SELECT * FROM nosuchtable");
  offset("SELECT 1");

  interrupts();
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  remove("txn_state.db");
  remove("txn_state_aux.db");
  return prog_done();
}
