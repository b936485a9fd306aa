/*
 * tsql.h -- TEST SCAFFOLDING: small helpers around the reference SQLite
 * (libsqlite3, the oracle) for the interop and crash tests: integrity check,
 * binding and reading TdbValues, running SQL.
 *
 * Invariants:
 *  1. tsql_integrity() opens the file with its own connection, runs
 *     PRAGMA integrity_check and closes: it never leaves a lock behind.
 *  2. A TdbValue read with tsql_column() points into SQLite's memory and is
 *     valid until the statement steps, resets or is finalized.
 */
#ifndef SHALE_TESTS_TSQL_H
#define SHALE_TESTS_TSQL_H

#include <sqlite3.h>

#include "tdb.h"

/* 1 if PRAGMA integrity_check on path returns exactly one row "ok"; else 0
 * with the first lines of the report (or the error) in msg. */
int tsql_integrity(const char *path, char *msg, int nmsg);
/* Run SQL (several statements); returns the SQLite result code, message in
 * stderr on failure. */
int tsql_exec(sqlite3 *db, const char *sql);
/* One integer from a query ("SELECT count(*) ..."); -1 on error. */
int64_t tsql_int(sqlite3 *db, const char *sql);
void tsql_bind(sqlite3_stmt *st, int i, const TdbValue *v);
TdbValue tsql_column(sqlite3_stmt *st, int i);
/* A query's rows read by SQLite from path (its own read-only connection), as
 * text: columns joined by '|', NULL as "NULL", one line per row; errors as
 * a line of text. malloc'ed: the caller frees. */
char *tsql_dump(const char *path, const char *query);
/* NULL when the query's rows (tsql_dump) are the same read from the files a
 * (Shale's) and b (SQLite's); else both dumps in a malloc'ed message. */
char *tsql_diff(const char *a, const char *b, const char *query);
/* Open path read-write with SQLite (creating it); NULL on failure. */
sqlite3 *tsql_open(const char *path);

#endif
