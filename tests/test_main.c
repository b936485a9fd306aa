/*
 * test_main.c -- runs the cases registered with TEST() in one binary.
 * Usage: test_x [case-name ...]   (no names: every case).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/util/util.h"
#include "test.h"

#define MAX_TESTS 1024

static struct {
  const char *name;
  TestFn fn;
} tests[MAX_TESTS];
static int ntests;
static int cur_failed, any_failed, allow_leaks;
static char tmpdir[256];

void test_register(const char *name, TestFn fn) {
  if (ntests < MAX_TESTS) {
    tests[ntests].name = name;
    tests[ntests].fn = fn;
    ntests++;
  }
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  if (cur_failed < 20) {
    fprintf(stderr, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
  }
  cur_failed++;
}

const char *test_tmpdir(void) {
  if (!tmpdir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/shale-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
      perror("mkdtemp");
      exit(2);
    }
  }
  return tmpdir;
}

const char *test_path(const char *name) {
  static char bufs[8][512];
  static int slot;
  char *b = bufs[slot++ & 7];
  snprintf(b, 512, "%s/%s", test_tmpdir(), name);
  return b;
}

uint64_t test_seed(void) {
  const char *s = getenv("SHALE_TEST_SEED");
  return s ? strtoull(s, 0, 0) : 0x5a1e5a1e5a1eULL;
}

int test_long(void) { return getenv("SHALE_TEST_LONG") != NULL; }
void test_allow_leaks(void) { allow_leaks = 1; }

static int wanted(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], name)) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 0; i < ntests; i++) {
    if (!wanted(argc, argv, tests[i].name)) continue;
    cur_failed = 0;
    allow_leaks = 0;
    long before = util_alloc_outstanding();
    tests[i].fn();
    long after = util_alloc_outstanding();
    util_fault_alloc(0, 0);
    if (after != before && !allow_leaks)
      test_fail(__FILE__, __LINE__, "%ld shale_malloc block(s) leaked", after - before);
    if (cur_failed) {
      printf("FAIL %s\n", tests[i].name);
      failed++;
      any_failed = 1;
    } else {
      printf("ok   %s\n", tests[i].name);
      passed++;
    }
  }
  if (tmpdir[0] && !any_failed) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) { /* best effort */
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
