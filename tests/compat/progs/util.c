/* util.c -- the library-level helpers: mprintf/snprintf/vmprintf, the
 * allocator (malloc/realloc/msize/free), stricmp/strnicmp, randomness,
 * sleep, versions, initialize/shutdown, limits' defaults, memory_used.
 * Portable: must pass on SQLite and on Shale. */
#include <stdarg.h>

#include "prog.h"

static char *vm(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *z = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  return z;
}

#define EXPECT_FMT(want, ...)                \
  do {                                       \
    char *_z = sqlite3_mprintf(__VA_ARGS__); \
    EXPECT_STR(_z, want);                    \
    sqlite3_free(_z);                        \
  } while (0)

int main(void) {
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  EXPECT_INT(sqlite3_libversion_number(), SQLITE_VERSION_NUMBER);
  EXPECT_STR(sqlite3_libversion(), SQLITE_VERSION);
  EXPECT(sqlite3_sourceid() != NULL && strlen(sqlite3_sourceid()) > 20);
  EXPECT(sqlite3_threadsafe() == 1 || sqlite3_threadsafe() == 2);

  EXPECT_FMT("42 -7 ff FF 17 x", "%d %i %x %X %o %c", 42, -7, 255, 255, 15, 'x');
  EXPECT_FMT("4294967295 ffffffff", "%u %x", -1, -1);
  EXPECT_FMT("9223372036854775807 -1", "%lld %ld", 9223372036854775807LL, -1L);
  EXPECT_FMT("[  3.14] [3.14  ] [1.000000e+03] [0.5]", "[%6.2f] [%-6.2f] [%e] [%g]", 3.14159,
             3.14159, 1000.0, 0.5);
  EXPECT_FMT("[   ab] [ab   ] [a]", "[%5s] [%-5s] [%.1s]", "ab", "ab", "ab");
  EXPECT_FMT("[  7] [007]", "[%*d] [%0*d]", 3, 7, 3, 7);
  EXPECT_FMT("it''s 'it''s' NULL a\"\"b", "%q %Q %Q %w", "it's", "it's", (char *)NULL, "a\"b");
  EXPECT_FMT("(NULL) 100%", "(%Q) 100%%", (char *)NULL);
  EXPECT_FMT("", "%s", "");
  EXPECT_FMT("", "%s", (char *)NULL);
  EXPECT_FMT("1,234,567", "%,d", 1234567);
  char *owned = sqlite3_mprintf("owned");
  EXPECT_FMT("<owned>", "<%z>", owned); /* %z frees its argument */
  char *z = vm("%s-%d", "v", 5);
  EXPECT_STR(z, "v-5");
  sqlite3_free(z);
  char small[8];
  EXPECT(sqlite3_snprintf(sizeof small, small, "%s", "0123456789") == small);
  EXPECT_STR(small, "0123456");
  sqlite3_snprintf(sizeof small, small, "%d", 12);
  EXPECT_STR(small, "12");
  /* the formats snprintf writes straight into the buffer (literal text,
   * %s %d %ld %lld %%), truncated as the others, and ones it does not */
  char mid[64];
  EXPECT_STR(sqlite3_snprintf(sizeof mid, mid, "%s %s %d", "one", "two", -3), "one two -3");
  EXPECT_STR(sqlite3_snprintf(sizeof mid, mid, "a%%b%s|%lld|%ld", (char *)0,
                              (long long)-9223372036854775807LL - 1, 42L),
             "a%b|-9223372036854775808|42");
  EXPECT_STR(sqlite3_snprintf(sizeof small, small, "%d%s", 1234, "56789"), "1234567");
  EXPECT_STR(sqlite3_snprintf(sizeof small, small, "abcdefghij"), "abcdefg");
  EXPECT_STR(sqlite3_snprintf(1, small, "%s", "x"), "");
  EXPECT_STR(sqlite3_snprintf(sizeof mid, mid, "%5d|%-3s|%.2s|%x", 7, "a", "xyz", 255),
             "    7|a  |xy|ff");
  EXPECT_STR(sqlite3_snprintf(sizeof mid, mid, "%d%%", 50), "50%");

  void *p = sqlite3_malloc(100);
  EXPECT(p != NULL);
  EXPECT(sqlite3_msize(p) >= 100);
  memset(p, 7, 100);
  p = sqlite3_realloc(p, 5000);
  EXPECT(p != NULL && ((unsigned char *)p)[99] == 7);
  EXPECT(sqlite3_msize(p) >= 5000);
  EXPECT(sqlite3_memory_used() >= 5000);
  p = sqlite3_realloc64(p, 10);
  EXPECT(p != NULL);
  sqlite3_free(p);
  EXPECT(sqlite3_malloc(0) == NULL);
  EXPECT(sqlite3_malloc(-1) == NULL);
  p = sqlite3_malloc64(16);
  EXPECT(p != NULL);
  EXPECT(sqlite3_realloc(p, 0) == NULL); /* frees */
  sqlite3_free(NULL);
  EXPECT_INT(sqlite3_msize(NULL), 0);

  EXPECT_INT(sqlite3_stricmp("Hello", "hELLO"), 0);
  EXPECT(sqlite3_stricmp("abc", "abd") < 0);
  EXPECT(sqlite3_stricmp("b", "A") > 0);
  EXPECT_INT(sqlite3_strnicmp("HelloX", "helloY", 5), 0);
  EXPECT(sqlite3_strnicmp("HelloX", "helloY", 6) < 0);

  unsigned char r1[32] = {0}, r2[32] = {0};
  sqlite3_randomness(sizeof r1, r1);
  sqlite3_randomness(sizeof r2, r2);
  EXPECT(memcmp(r1, r2, sizeof r1) != 0);
  sqlite3_randomness(0, NULL);

  EXPECT(sqlite3_sleep(5) >= 5);

  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1), 1000000000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1), 2000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1), 10);
  EXPECT_INT(sqlite3_limit(db, 99, -1), -1);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  return prog_done();
}
