/*
 * engine_sqlite.c -- the benchmark workloads compiled against the reference
 * SQLite (libsqlite3 from Debian).
 */
#include <sqlite3.h>

#define E(x) sqlite3_##x
#define EDB sqlite3
#define ESTMT sqlite3_stmt
#define E_OK SQLITE_OK
#define E_ROW SQLITE_ROW
#define E_DONE SQLITE_DONE
#define E_INTEGER SQLITE_INTEGER
#define E_FLOAT SQLITE_FLOAT
#define E_TEXT SQLITE_TEXT
#define E_BLOB SQLITE_BLOB
#define E_NULL SQLITE_NULL
#define E_TRANSIENT SQLITE_TRANSIENT
#define E_STATIC SQLITE_STATIC
#define E_OPEN_RW (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
#define ROWS_NAME bench_rows_sqlite
#define FINISH_NAME bench_finish_sqlite
#include "workloads.inc"

const int bench_nrows = (int)(sizeof bench_rows_sqlite / sizeof bench_rows_sqlite[0]);
