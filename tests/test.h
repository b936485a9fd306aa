/*
 * test.h -- the project's small unit-test harness.
 *
 * A test file defines cases with TEST(name) { ... } and checks with CHECK*.
 * tests/test_main.c runs every case (or those named on the command line),
 * each after the previous one, checks that no shale_malloc block leaked, and
 * ends with the line "N passed, N failed" that tests/run.sh adds up.
 *
 * Invariants:
 *  1. A failed CHECK marks the current case failed and carries on; a case
 *     counts once, passed or failed.
 *  2. TEST_TMPDIR is a fresh directory per test binary, removed at exit
 *     unless a case failed (kept for inspection).
 */
#ifndef SHALE_TEST_H
#define SHALE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*TestFn)(void);
void test_register(const char *name, TestFn fn);
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A fresh scratch directory for this binary, e.g. /tmp/shale-test-XXXX. */
const char *test_tmpdir(void);
/* Path test_tmpdir()/name in a static buffer (one of 8 rotating slots). */
const char *test_path(const char *name);
/* Seed for randomized tests: SHALE_TEST_SEED or a fixed default. */
uint64_t test_seed(void);
/* 1 when SHALE_TEST_LONG is set: run the long version of a test. */
int test_long(void);
/* Allow a case to leave allocations behind (e.g. it checks a global). */
void test_allow_leaks(void);

#define TEST(name)                                                                               \
  static void name(void);                                                                        \
  __attribute__((constructor)) static void test_reg_##name(void) { test_register(#name, name); } \
  static void name(void)

#define CHECK(c)                                              \
  do {                                                        \
    if (!(c)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #c); \
  } while (0)

#define CHECK_EQ(a, b)                                                                  \
  do {                                                                                  \
    long long _a = (long long)(a), _b = (long long)(b);                                 \
    if (_a != _b)                                                                       \
      test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, _a, #b, _b); \
  } while (0)

#define CHECK_RC(expr, rc)                                                                     \
  do {                                                                                         \
    int _r = (expr), _e = (rc);                                                                \
    if (_r != _e) test_fail(__FILE__, __LINE__, "%s returned %d, expected %d", #expr, _r, _e); \
  } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, 0)

#define CHECK_STR(a, b)                                                                      \
  do {                                                                                       \
    const char *_a = (a), *_b = (b);                                                         \
    if (!_a || !_b || strcmp(_a, _b))                                                        \
      test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, _a ? _a : "(null)", \
                _b ? _b : "(null)");                                                         \
  } while (0)

/* Deterministic PRNG for tests (xorshift64*). */
static inline uint64_t test_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

#endif
