/*
 * analyze.h -- what ANALYZE's code (compile_analyze.c) offers the API layer:
 * the order SQLite visits the tables of a schema in (its table hash), which
 * PRAGMA optimize follows too.
 *
 * Invariants:
 *  1. The order is the one ANALYZE writes sqlite_stat1 rows in (invariant 1
 *     of compile_analyze.c); views and the schema table are left out.
 */
#ifndef SHALE_SQL_ANALYZE_H
#define SHALE_SQL_ANALYZE_H

#include "../schema/schema.h"

/* The tables of s in SQLite's table-hash order: *out gets a shale_malloc'ed
 * array of *n pointers (the caller frees it; NULL when *n is 0). SHALE_OK or
 * SHALE_NOMEM. */
int compile_analyze_table_order(const Schema *s, Table ***out, int *n);

#endif /* SHALE_SQL_ANALYZE_H */
