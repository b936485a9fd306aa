/*
 * test_strbuf.c -- StrBuf, the string builder of src/util/strbuf.c.
 *
 * Invariants checked (strbuf.c):
 *  1. Errors stick: after an allocation failure or the length limit every
 *     append is ignored and strbuf_finish returns NULL (nothing leaks).
 *  2. The text so far is a C string after every append.
 *  3. The block never grows past max + 1.
 */
#include <string.h>

#include "../../../src/util/util.h"
#include "../../test.h"

TEST(strbuf_appends) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_append(&b, "abc", 3);
  CHECK_STR(b.z, "abc");
  strbuf_appendz(&b, "-de");
  strbuf_appendchar(&b, 3, 'x');
  strbuf_append(&b, "ignored", 0);
  strbuf_appendchar(&b, 0, 'y');
  CHECK_STR(b.z, "abc-dexxx");
  strbuf_printf(&b, "[%d:%s]", 42, "q");
  CHECK_EQ(b.n, 15);
  CHECK_STR(b.z, "abc-dexxx[42:q]");
  strbuf_truncate(&b, 13);
  CHECK_STR(b.z, "abc-dexxx[42:");
  strbuf_truncate(&b, 20); /* longer: no change */
  CHECK_EQ(b.n, 13);
  strbuf_append(&b, "q]", 2);
  /* bytes with NULs inside */
  strbuf_append(&b, "\0z", 2);
  CHECK_EQ(b.n, 17);
  char *z = strbuf_finish(&b);
  CHECK(z != NULL);
  CHECK(memcmp(z, "abc-dexxx[42:q]\0z", 18) == 0);
  CHECK(b.z == NULL && b.n == 0);
  shale_free(z);
}

TEST(strbuf_empty_and_long) {
  StrBuf b = {0};
  b.max = STRBUF_NOLIMIT;
  char *z = strbuf_finish(&b);
  CHECK_STR(z, "");
  shale_free(z);
  /* a printf longer than the stack buffer, then many appends */
  char big[1000];
  memset(big, 'k', sizeof big - 1);
  big[sizeof big - 1] = 0;
  strbuf_printf(&b, "<%s>", big);
  CHECK_EQ(b.n, 1001);
  CHECK(b.z[0] == '<' && b.z[1000] == '>' && b.z[1001] == 0);
  for (int i = 0; i < 10000; i++) strbuf_appendchar(&b, 1, (char)('a' + i % 26));
  CHECK_EQ(b.n, 11001);
  CHECK(b.z[1001] == 'a' && b.z[11000] == 'a' + 9999 % 26 && b.z[11001] == 0);
  strbuf_reset(&b);
  CHECK(b.z == NULL && b.n == 0 && b.err == SHALE_OK);
}

TEST(strbuf_limit_sticks) {
  StrBuf b;
  strbuf_init(&b, 5);
  strbuf_append(&b, "abcde", 5);
  CHECK_EQ(b.err, SHALE_OK);
  CHECK(b.cap <= 6);
  strbuf_appendchar(&b, 1, 'f');
  CHECK_EQ(b.err, SHALE_TOOBIG);
  strbuf_reset(&b);
  strbuf_append(&b, "a", 1); /* ignored: the error stays */
  CHECK(b.z == NULL);
  CHECK(strbuf_finish(&b) == NULL);
  CHECK_EQ(b.err, SHALE_TOOBIG);
  CHECK_EQ(strbuf_reserve(&b, 0), 1);
}

TEST(strbuf_nomem_sticks) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_append(&b, "abc", 3);
  util_fault_alloc(1, 0); /* the next growth fails, once */
  char big[200];
  memset(big, 'x', sizeof big);
  strbuf_append(&b, big, sizeof big);
  CHECK_EQ(b.err, SHALE_NOMEM);
  strbuf_appendz(&b, "more");
  strbuf_printf(&b, "%d", 7);
  CHECK_EQ(b.n, 3);
  CHECK(strbuf_finish(&b) == NULL);
  CHECK(b.z == NULL);
  util_fault_alloc(0, 0);
}
