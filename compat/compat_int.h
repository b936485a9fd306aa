/*
 * compat_int.h -- internal interface shared by the files of compat/ (the
 * sqlite3_* library over Shale's native API).
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. Every file here includes Shale's own include/sqlite3.h (the quoted
 *     include), so each definition is checked against its declaration.
 *  2. Handles are the native objects; the native API checks them (a state
 *     field inside each object, no registry, no lock: shale_db_live,
 *     shale_stmt_live for entry points made of several calls).
 */
#ifndef SHALE_COMPAT_INT_H
#define SHALE_COMPAT_INT_H

#include "../src/util/util.h"
#include "shale.h"
#include "sqlite3.h"

#endif
