/*
 * tcmp.h -- TEST SCAFFOLDING: one query's rows as text on either engine,
 * for tests that run the same SQL on Shale and the reference SQLite and
 * compare the answers (test_fts3, test_fts5).
 *
 * Invariants:
 *  1. Both engines' rows print the same way: each value then '|', a line
 *     per row; NULL as "NULL", integers in decimal, reals with 17
 *     significant digits; an error as "error: MESSAGE" after the rows.
 */
#ifndef SHALE_TESTS_TCMP_H
#define SHALE_TESTS_TCMP_H

#include <sqlite3.h>
#include <stddef.h>

#include "shale.h"

/* A growing, NUL-terminated string (malloc'ed p: the owner frees it). */
typedef struct TcmpOut {
  char *p;
  size_t n, cap;
} TcmpOut;

void tcmp_add(TcmpOut *o, const char *z, size_t n);
void tcmp_fmt(TcmpOut *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The rows of sql with ?1 = arg and (if sql has a ?2) ?2 = arg2 bound as
 * text (NULL: left unbound), as invariant 1 prints them; malloc'ed. */
char *tcmp_sqlite(sqlite3 *db, const char *sql, const char *arg, const char *arg2);
char *tcmp_shale(shale *db, const char *sql, const char *arg, const char *arg2);

#endif
