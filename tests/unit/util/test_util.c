/*
 * test_util.c -- varints, allocator fault hook, strings.
 */
#include "../../../src/util/util.h"
#include "../../test.h"

TEST(varint_known_encodings) {
  static const struct {
    uint64_t v;
    int n;
    uint8_t b[9];
  } cases[] = {
      {127, 1, {0x7f}},
      {128, 2, {0x81, 0x00}},
      {240, 2, {0x81, 0x70}},
      {(1ULL << 56) - 1, 8, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
      {1ULL << 56, 9, {0x80, 0xc0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
      {(uint64_t)INT64_MAX, 9, {0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
      {(uint64_t)-1, 9, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
      {(uint64_t)INT64_MIN, 9, {0xc0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t buf[9];
    uint64_t v;
    CHECK_EQ(util_put_varint(buf, cases[i].v), cases[i].n);
    CHECK(memcmp(buf, cases[i].b, (size_t)cases[i].n) == 0);
    CHECK_EQ(util_varint_len(cases[i].v), cases[i].n);
    CHECK_EQ(util_get_varint(buf, &v), cases[i].n);
    CHECK(v == cases[i].v);
  }
}

TEST(varint_roundtrip_random) {
  uint64_t s = test_seed();
  for (int i = 0; i < 100000; i++) {
    uint64_t v = test_rand(&s) >> (test_rand(&s) % 64);
    uint8_t buf[9];
    uint64_t w;
    int n = util_put_varint(buf, v);
    CHECK_EQ(n, util_varint_len(v));
    CHECK_EQ(util_get_varint(buf, &w), n);
    CHECK(w == v);
    CHECK_EQ(util_get_varint_safe(buf, buf + n, &w), n);
    CHECK_EQ(util_get_varint_safe(buf, buf + n - 1, &w), 0);
  }
}

TEST(alloc_fault_hook) {
  util_fault_alloc(3, 0);
  void *a = shale_malloc(10), *b = shale_malloc(10), *c = shale_malloc(10), *d = shale_malloc(10);
  CHECK(a && b && !c && d);
  CHECK_EQ(util_fault_alloc_hits(), 1);
  shale_free(a);
  shale_free(b);
  shale_free(d);
  util_fault_alloc(1, 1);
  CHECK(shale_malloc(1) == NULL);
  CHECK(shale_malloc(1) == NULL);
  util_fault_alloc(0, 0);
  void *e = shale_malloc(1);
  CHECK(e != NULL);
  e = shale_realloc(e, 1000);
  CHECK(e != NULL);
  shale_free(e);
}

TEST(strings) {
  char *s = util_mprintf("%s-%d", "page", 7);
  CHECK_STR(s, "page-7");
  shale_free(s);
  CHECK(util_stricmp("ABC", "abc") == 0);
  CHECK(util_stricmp("abd", "abc") > 0);
  CHECK(util_strnicmp("abcX", "ABCy", 3) == 0);
  CHECK_STR(shale_errstr(SHALE_CORRUPT), "database disk image is malformed");
  CHECK_STR(shale_errstr(SHALE_IOERR_WRITE), "disk I/O error");
}
