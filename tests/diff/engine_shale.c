/*
 * engine_shale.c -- the differential tester's backend on Shale's native API
 * (shale_*, include/shale.h).
 *
 * Owns: diff_engine_shale. Until the SQL-level API is declared in shale.h
 * this is NULL and the tester compares SQLite with itself.
 */
#include "diff.h"

const DiffEngine *const diff_engine_shale = NULL;
