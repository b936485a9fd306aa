/* dbconfig.c -- sqlite3_db_config: reading the default state of the on/off
 * options and setting each to its default; foreign key enforcement turned on
 * and off (also inside a transaction, where PRAGMA foreign_keys does nothing).
 * Portable: must pass on SQLite and on Shale. */
#include "prog.h"

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  int v = -1;
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &v), SQLITE_OK);
  EXPECT_INT(v, 0);
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 0, &v), SQLITE_OK);
  EXPECT_INT(v, 0);
  EXPECT_INT(sqlite3_exec(db, "CREATE TABLE p(a PRIMARY KEY); CREATE TABLE c(b REFERENCES p);",
                          NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO c VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &v), SQLITE_OK);
  EXPECT_INT(v, 1);
  sqlite3_extended_result_codes(db, 1);
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO c VALUES (2)", NULL, NULL, NULL),
             SQLITE_CONSTRAINT_FOREIGNKEY);
  EXPECT_STR(sqlite3_errmsg(db), "FOREIGN KEY constraint failed");
  EXPECT_INT(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 0, &v), SQLITE_OK);
  EXPECT_INT(v, 0);
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO c VALUES (3)", NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  v = -1;
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &v), SQLITE_OK);
  EXPECT_INT(v, 0);

  static const int on[] = {SQLITE_DBCONFIG_ENABLE_TRIGGER, SQLITE_DBCONFIG_ENABLE_VIEW,
                           SQLITE_DBCONFIG_TRUSTED_SCHEMA};
  static const int off[] = {SQLITE_DBCONFIG_ENABLE_QPSG,        SQLITE_DBCONFIG_TRIGGER_EQP,
                            SQLITE_DBCONFIG_DEFENSIVE,          SQLITE_DBCONFIG_WRITABLE_SCHEMA,
                            SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, SQLITE_DBCONFIG_LEGACY_FILE_FORMAT,
                            SQLITE_DBCONFIG_RESET_DATABASE,     SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE};
  for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
    v = -1;
    EXPECT_INT(sqlite3_db_config(db, on[i], -1, &v), SQLITE_OK);
    EXPECT_INT(v, 1);
    EXPECT_INT(sqlite3_db_config(db, on[i], 1, &v), SQLITE_OK);
  }
  for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
    v = -1;
    EXPECT_INT(sqlite3_db_config(db, off[i], -1, &v), SQLITE_OK);
    EXPECT_INT(v, 0);
    EXPECT_INT(sqlite3_db_config(db, off[i], 0, &v), SQLITE_OK);
  }
  EXPECT_INT(sqlite3_db_config(db, 99999, 0, &v), SQLITE_ERROR);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
