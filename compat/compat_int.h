/*
 * compat_int.h -- internal interface shared by the files of compat/ (the
 * sqlite3_* library over Shale's native API).
 *
 * Owns: the handle-kind numbers and the registry functions (sqlite3.c).
 *
 * Invariants:
 *  1. Every file here includes Shale's own include/sqlite3.h (the quoted
 *     include), so each definition is checked against its declaration.
 *  2. A handle is usable only while compat_reg_has() says so.
 */
#ifndef SHALE_COMPAT_INT_H
#define SHALE_COMPAT_INT_H

#include "../src/util/util.h"
#include "shale.h"
#include "sqlite3.h"

enum { COMPAT_DB = 1, COMPAT_STMT = 2, COMPAT_BACKUP = 3, COMPAT_BLOB = 4 };

int compat_reg_add(const void *p, int kind, char *fullname);
void compat_reg_del(const void *p);
int compat_reg_has(const void *p, int kind);

#endif
