/*
 * test_codes.c -- the result codes come from one list (src/util/result_codes.def).
 *
 * Invariants checked:
 *  1. The #define blocks of include/shale.h and include/sqlite3.h are what
 *     tools/gen_codes.sh writes from the list (no hand edits).
 *  2. Every code has the reference SQLite's number and shale_errstr() gives
 *     sqlite3_errstr()'s text for it.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

TEST(codes_headers_are_generated) {
  int rc = system("sh tools/gen_codes.sh --check");
  CHECK(rc == 0);
}

TEST(codes_match_the_reference) {
  int n = 0;
#define PRIMARY(name, num, text)                                        \
  CHECK_EQ(SHALE_##name, SQLITE_##name);                                \
  CHECK_STR(shale_errstr(SHALE_##name), sqlite3_errstr(SQLITE_##name)); \
  n++;
#define EXTENDED(name, prim, detail, text)                              \
  CHECK_EQ(SHALE_##name, SQLITE_##name);                                \
  CHECK_STR(shale_errstr(SHALE_##name), sqlite3_errstr(SQLITE_##name)); \
  n++;
#include "../../../src/util/result_codes.def"
#undef PRIMARY
#undef EXTENDED
  CHECK(n > 100);
}
