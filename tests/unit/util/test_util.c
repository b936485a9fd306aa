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

/* The arena: alignment, zero-size requests, dedicated chunks for large
 * requests, a caller's first chunk (never freed, kept by reset), the
 * inline fast path and out-of-memory. Leaks fail the case (harness). */
TEST(arena) {
  for (int borrowed = 0; borrowed < 2; borrowed++) {
    uint64_t buf[128]; /* 1 KiB */
    UtilArena a;
    if (borrowed)
      util_arena_init_buf(&a, 256, (char *)buf + 3, sizeof buf - 3); /* misaligned on purpose */
    else
      util_arena_init(&a, 256);
    long before = util_alloc_outstanding();
    char *prev = NULL;
    for (int i = 0; i < 400; i++) {
      size_t n = (size_t)(i % 13); /* 0..12, n == 0 included */
      char *p = util_arena_alloc(&a, n);
      CHECK(p != NULL);
      CHECK(((uintptr_t)p & 7) == 0);
      CHECK(p != prev);
      memset(p, 0xab, n);
      prev = p;
      char *z = util_arena_zalloc(&a, 24);
      CHECK(z != NULL);
      for (int k = 0; k < 24; k++) CHECK_EQ(z[k], 0);
    }
    char *big = util_arena_alloc(&a, 5000); /* a chunk of its own */
    CHECK(big != NULL);
    memset(big, 1, 5000);
    char *s = util_arena_strndup(&a, "hello world", 5);
    CHECK(s && strcmp(s, "hello") == 0);
    if (borrowed) { /* the first pieces came from the caller's buffer */
      util_arena_reset(&a);
      char *p = util_arena_alloc(&a, 8);
      CHECK(p >= (char *)buf && p < (char *)buf + sizeof buf);
    }
    util_fault_alloc(1, 1);
    int got_null = 0;
    for (int i = 0; i < 200 && !got_null; i++) got_null = util_arena_alloc(&a, 64) == NULL;
    util_fault_alloc(0, 0);
    CHECK(got_null);
    CHECK(util_arena_alloc(&a, 16) != NULL); /* usable after out-of-memory */
    util_arena_free(&a);
    CHECK_EQ(util_alloc_outstanding(), before);
    CHECK(util_arena_alloc(&a, 16) != NULL); /* re-usable after free */
    util_arena_free(&a);
  }
}

/* util_hash_keyed is SipHash-1-3: values of SipHash's reference key
 * (bytes 0..15) over messages 0, 1, ..., n-1 of every tail length and both
 * tail paths; a fresh key changes the value. */
TEST(hash_keyed) {
  static const struct {
    size_t n;
    uint64_t h;
  } want[] = {{0, 0xabac0158050fc4dcull},  {1, 0xc9f49bf37d57ca93ull}, {7, 0xd3927d989bb11140ull},
              {8, 0x369095118d299a8eull},  {9, 0x25a48eb36c063de4ull}, {15, 0xd320d86d2a519956ull},
              {16, 0xcc4fdd1a7d908b66ull}, {63, 0x9d199062b7bbb3a8ull}};
  uint8_t m[64];
  for (int i = 0; i < 64; i++) m[i] = (uint8_t)i;
  UtilHashKey key = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK(util_hash_keyed(&key, m, want[i].n) == want[i].h);
  UtilHashKey other;
  util_hash_key_new(&other);
  CHECK(util_hash_keyed(&other, m, 15) != want[5].h);
}
