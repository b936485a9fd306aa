/* which.c -- prints which library answered: sqlite3_sourceid() and
 * sqlite3_libversion(). test_compat.c runs it with and without
 * LD_LIBRARY_PATH=build/compat to prove the swap happens. */
#include "prog.h"

int main(void) {
  printf("%s\n%s\n%d\n", sqlite3_sourceid(), sqlite3_libversion(), sqlite3_libversion_number());
  return 0;
}
