/* hello.c -- built against an installed Shale through pkg-config by
 * `make install-check`: proves the installed header and library are usable. */
#include <shale.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  void *p = shale_malloc(16);
  if (!p) return 1;
  shale_free(p);
  if (strcmp(shale_errstr(SHALE_CORRUPT), "database disk image is malformed") != 0) return 1;
  printf("shale %s installed ok\n", shale_libversion());
  return 0;
}
