/* unsupported.c -- the features Shale's library does not have yet fail
 * cleanly: an error code, and on a connection the message "<feature> is not
 * supported by Shale yet"; clearing calls (NULL callbacks, onoff=0) succeed.
 * Shale only (SQLite supports all of these). */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

#define EXPECT_UNSUP(db, expr, what)                                       \
  do {                                                                     \
    EXPECT_INT((expr), SQLITE_ERROR);                                      \
    EXPECT_STR(sqlite3_errmsg(db), what " is not supported by Shale yet"); \
  } while (0)

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT(strstr(sqlite3_sourceid(), "shale") != NULL);

  /* shared cache: uri.c */
  EXPECT_INT(sqlite3_db_config(db, 9999, 1, (int *)NULL), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "sqlite3_db_config option 9999 is not supported by Shale yet");
  int cur = 0, hi = 0;
  EXPECT_INT(sqlite3_file_control(db, NULL, SQLITE_FCNTL_PERSIST_WAL, &cur), SQLITE_NOTFOUND);
  EXPECT_INT(sqlite3_status(SQLITE_STATUS_MEMORY_USED, &cur, &hi, 0), SQLITE_OK);
  EXPECT(cur > 0);

  /* config after initialize (open ran it): misuse, as SQLite */
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0), SQLITE_MISUSE);

  /* snapshots work (snapshot.c), virtual tables too (vtab.c), extensions
   * load (loadext.c) */

  /* rebasers work (rebase.c) */
  EXPECT_INT(sqlite3changeset_finalize(NULL), SQLITE_OK);
  sqlite3session_delete(NULL);
  sqlite3changegroup_delete(NULL);
  sqlite3rebaser_delete(NULL);

  /* the dbstat virtual table works (test_api_dbstat.c) */

  /* the connection still works after all that */
  EXEC_OK(db, "CREATE TABLE t(c); INSERT INTO t VALUES (1)");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);

  /* config before initialize: tuning hints accepted; a NULL page cache table
   * (which SQLite would dereference) is a misuse; what Debian's build refuses
   * is refused */
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETPCACHE, NULL), SQLITE_ERROR);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  return prog_done();
}
