/*
 * crash_util.h -- TEST SCAFFOLDING shared by the crash test files: the base
 * database of the fault sweeps (twork commits 1..BASE_COMMITS) and small
 * file helpers. Included by one .c file per test binary (static functions).
 *
 * Invariants:
 *  1. base_model describes the file make_base() wrote, until the next call.
 */
#ifndef SHALE_TESTS_CRASH_UTIL_H
#define SHALE_TESTS_CRASH_UTIL_H

#include <stdio.h>

#include "../../src/os/os.h"
#include "../../src/util/util.h"
#include "../common/tdb.h"
#include "../common/twork.h"
#include "../test.h"

#define KIND_ALLOC (-1)
#define BASE_COMMITS 12
#define TXN_OPS 40

/* Arm fault `kind` -- KIND_ALLOC: the allocator; else an OS_FAULT_* of the
 * fault VFS fv -- at the n-th event from now; returns what fault_disarm
 * needs to tell whether it fired. */
static inline long fault_arm(OsVfs *fv, int kind, long n, int persist) {
  long before = kind == KIND_ALLOC ? 0 : os_fault_count(fv, kind);
  if (kind == KIND_ALLOC)
    util_fault_alloc(n, persist);
  else
    os_fault_arm(fv, kind, n, persist);
  return before;
}

/* Disarm what fault_arm armed; 1 if the fault fired. */
static inline int fault_disarm(OsVfs *fv, int kind, long n, long before) {
  int fired;
  if (kind == KIND_ALLOC) {
    fired = util_fault_alloc_hits() > 0;
    util_fault_alloc(0, 0);
  } else {
    fired = os_fault_count(fv, kind) - before >= n;
    os_fault_arm(fv, kind, 0, 0);
  }
  return fired;
}

static TwModel base_model;
/* auto_vacuum mode of the base file make_base() writes (0 none, 1 FULL, 2
 * INCREMENTAL). */
static int base_autovac;

static inline int copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = a && b;
  while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
  if (a) fclose(a);
  if (b && fclose(b)) ok = 0;
  return ok ? 0 : -1;
}

static inline int file_exists_nonempty(const char *path) {
  FILE *f = fopen(path, "rb");
  int ok = f && fgetc(f) != EOF;
  if (f) fclose(f);
  return ok;
}

static inline void make_base(const char *path, uint32_t page_size) {
  Tdb *db;
  char j[600];
  remove(path);
  snprintf(j, sizeof j, "%s-journal", path);
  remove(j);
  tw_model_reset(&base_model);
  CHECK_OK(tdb_open(NULL, path, page_size, &db));
  if (base_autovac) CHECK_OK(btree_set_auto_vacuum(tdb_btree(db), base_autovac));
  CHECK_OK(tw_create(db));
  for (uint32_t k = 1; k <= BASE_COMMITS; k++) {
    CHECK_OK(tdb_begin(db));
    CHECK_OK(tw_apply(db, &base_model, k, tw_default_nops(k)));
    CHECK_OK(tdb_commit(db));
  }
  CHECK_OK(tdb_close(db));
}

static inline int same_file(const char *x, const char *y) {
  FILE *a = fopen(x, "rb"), *b = fopen(y, "rb");
  int same = a && b;
  while (same) {
    int c = fgetc(a), d = fgetc(b);
    if (c != d) same = 0;
    if (c == EOF || d == EOF) break;
  }
  if (a) fclose(a);
  if (b) fclose(b);
  return same;
}

#endif
