/* uri_off.c -- SQLITE_CONFIG_URI 0 before the library starts: a file: name
 * is then an ordinary file name, unless the open passes SQLITE_OPEN_URI.
 * Printed so both libraries can be compared. */
#include <unistd.h>

#include "prog.h"

int main(void) {
  const int RWC = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  remove("file:uri_off.db?a=1");
  remove("uri_off.db");
  printf("config %d\n", sqlite3_config(SQLITE_CONFIG_URI, 0));
  sqlite3 *db = NULL;
  printf("open %d\n", sqlite3_open_v2("file:uri_off.db?a=1", &db, RWC, NULL));
  printf("literal file made %d, uri file made %d\n", access("file:uri_off.db?a=1", F_OK) == 0,
         access("uri_off.db", F_OK) == 0);
  printf("param %s\n",
         sqlite3_uri_parameter(sqlite3_db_filename(db, "main"), "a") ? "set" : "none");
  sqlite3_close(db);
  remove("file:uri_off.db?a=1");
  printf("open %d\n", sqlite3_open_v2("file:uri_off.db?a=1", &db, RWC | SQLITE_OPEN_URI, NULL));
  printf("literal file made %d, uri file made %d\n", access("file:uri_off.db?a=1", F_OK) == 0,
         access("uri_off.db", F_OK) == 0);
  printf("param %s\n", sqlite3_uri_parameter(sqlite3_db_filename(db, "main"), "a"));
  sqlite3_close(db);
  remove("uri_off.db");
  return prog_done();
}
