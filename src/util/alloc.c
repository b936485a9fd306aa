/*
 * alloc.c -- shale_malloc/shale_realloc/shale_free with fault injection and
 * leak accounting.
 *
 * Each block carries an 16-byte header holding its payload size, so that
 * util_alloc_bytes() is exact and shale_realloc knows the old size, and
 * which system allocator made it: libc's, or the one util_alloc_set_system
 * installed (sqlite3_config(SQLITE_CONFIG_MALLOC)).
 *
 * Invariants:
 *  1. outstanding == (successful mallocs + reallocs of NULL) - frees of non-NULL.
 *  2. The fault countdown is decremented once per allocation attempt
 *     (malloc, or realloc to a larger or new block) while it is armed.
 *  3. A block goes back to (and is resized by) the allocator that made it,
 *     whatever is installed since: header bytes 8..15 name it (0 libc's).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define HDR 16   /* keeps payload 16-byte aligned */
#define ORIGIN 8 /* offset of the maker's number in the header */

/* The installed system allocator (NULL: libc's) and its number; an
 * allocator once installed stays (its blocks may still be live). */
static const UtilSysAlloc *_Atomic sys_alloc;
static const UtilSysAlloc *sys_made[8]; /* by number - 1 */
static int sys_n;

int util_alloc_set_system(const UtilSysAlloc *a) {
  if (!a) {
    atomic_store(&sys_alloc, NULL);
    return 0;
  }
  for (int i = 0; i < sys_n; i++)
    if (sys_made[i] == a) {
      atomic_store(&sys_alloc, a);
      return 0;
    }
  if (sys_n == 8) return -1;
  sys_made[sys_n++] = a;
  atomic_store(&sys_alloc, a);
  return 0;
}

static const UtilSysAlloc *maker(const uint8_t *base) {
  uint64_t k;
  memcpy(&k, base + ORIGIN, sizeof k);
  return k ? sys_made[k - 1] : NULL;
}

static uint8_t *sys_malloc(size_t n) {
  const UtilSysAlloc *a = atomic_load_explicit(&sys_alloc, memory_order_relaxed);
  uint8_t *p = a ? a->malloc(a->ctx, n) : malloc(n);
  if (p) {
    uint64_t k = 0;
    for (int i = 0; a && i < sys_n; i++)
      if (sys_made[i] == a) k = (uint64_t)i + 1;
    memcpy(p + ORIGIN, &k, sizeof k);
  }
  return p;
}

static atomic_long outstanding;
static atomic_long allocs; /* successful shale_malloc calls, and growing reallocs */
static atomic_llong bytes;
static atomic_long fault_countdown; /* 0 = disarmed */
static atomic_int fault_persist;
static atomic_int fault_tripped;
static atomic_long fault_hits;
static atomic_llong hw_bytes; /* high-water marks (sqlite3_status) */
static atomic_long hw_blocks;
static atomic_llong hw_request;
static atomic_llong heap_limit; /* 0 = none (sqlite3_hard_heap_limit64) */

/* Hard heap limit: allocations that would take util_alloc_bytes() past n
 * fail (n = 0: no limit; n < 0: only query). Returns the previous limit. */
static int64_t util_alloc_limit(int64_t n) {
  long long old = atomic_load(&heap_limit);
  if (n >= 0) atomic_store(&heap_limit, n);
  return old;
}

static atomic_llong soft_limit;

int64_t util_alloc_hard_limit(int64_t n) {
  if (n < 0) return util_alloc_limit(-1);
  int64_t old = util_alloc_limit(n);
  long long s = atomic_load(&soft_limit);
  if (n < s || s == 0) atomic_store(&soft_limit, n);
  return old;
}

int64_t util_alloc_soft_limit(int64_t n) {
  long long old = atomic_load(&soft_limit);
  if (n < 0) return old;
  int64_t hard = util_alloc_limit(-1);
  if (hard > 0 && (n > hard || n == 0)) n = hard;
  atomic_store(&soft_limit, n);
  return old;
}

/* 1 if growing by n bytes would pass the hard heap limit. */
static int over_limit(long long n) {
  long long lim = atomic_load_explicit(&heap_limit, memory_order_relaxed);
  return lim > 0 && atomic_load_explicit(&bytes, memory_order_relaxed) + n > lim;
}

static void raise_ll(atomic_llong *hw, long long v) {
  long long cur = atomic_load_explicit(hw, memory_order_relaxed);
  while (v > cur && !atomic_compare_exchange_weak(hw, &cur, v)) {
  }
}

static void raise_l(atomic_long *hw, long v) {
  long cur = atomic_load_explicit(hw, memory_order_relaxed);
  while (v > cur && !atomic_compare_exchange_weak(hw, &cur, v)) {
  }
}

int64_t util_alloc_highwater(int reset) {
  long long v = atomic_load(&hw_bytes);
  if (reset) atomic_store(&hw_bytes, atomic_load(&bytes));
  return v;
}
long util_alloc_blocks_highwater(int reset) {
  long v = atomic_load(&hw_blocks);
  if (reset) atomic_store(&hw_blocks, atomic_load(&outstanding));
  return v;
}
int64_t util_alloc_max_request(int reset) {
  long long v = atomic_load(&hw_request);
  if (reset) atomic_store(&hw_request, 0);
  return v;
}

void util_fault_alloc(long n, int persist) {
  atomic_store(&fault_tripped, 0);
  atomic_store(&fault_hits, 0);
  atomic_store(&fault_persist, persist);
  atomic_store(&fault_countdown, n);
}

long util_fault_alloc_hits(void) { return atomic_load(&fault_hits); }
long util_alloc_outstanding(void) { return atomic_load(&outstanding); }
long util_alloc_count(void) { return atomic_load(&allocs); }
int64_t util_alloc_bytes(void) { return atomic_load(&bytes); }

/* Returns 1 if this allocation must fail. */
static int should_fail(void) {
  if (atomic_load(&fault_tripped)) {
    if (atomic_load(&fault_persist)) {
      atomic_fetch_add(&fault_hits, 1);
      return 1;
    }
    return 0;
  }
  long c = atomic_load(&fault_countdown);
  if (c <= 0) return 0;
  if (atomic_fetch_sub(&fault_countdown, 1) == 1) {
    atomic_store(&fault_tripped, 1);
    atomic_fetch_add(&fault_hits, 1);
    return 1;
  }
  return 0;
}

void *shale_malloc(size_t n) {
  if (n > (size_t)0x7fffff00) return NULL;
  if (should_fail() || over_limit((long long)n)) return NULL;
  uint8_t *p = sys_malloc(n + HDR);
  if (!p) return NULL;
  memcpy(p, &n, sizeof n);
  raise_l(&hw_blocks, atomic_fetch_add(&outstanding, 1) + 1);
  atomic_fetch_add(&allocs, 1);
  raise_ll(&hw_bytes, atomic_fetch_add(&bytes, (long long)n) + (long long)n);
  raise_ll(&hw_request, (long long)n);
  return p + HDR;
}

void *shale_realloc(void *old, size_t n) {
  if (!old) return shale_malloc(n);
  if (n > (size_t)0x7fffff00) return NULL;
  uint8_t *base = (uint8_t *)old - HDR;
  size_t oldn;
  memcpy(&oldn, base, sizeof oldn);
  if (n > oldn && (should_fail() || over_limit((long long)(n - oldn)))) return NULL;
  const UtilSysAlloc *a = maker(base);
  uint8_t *p = a ? a->realloc(a->ctx, base, n + HDR) : realloc(base, n + HDR);
  if (!p) return NULL;
  memcpy(p, &n, sizeof n);
  if (n > oldn) atomic_fetch_add(&allocs, 1);
  long long d = (long long)n - (long long)oldn;
  raise_ll(&hw_bytes, atomic_fetch_add(&bytes, d) + d);
  raise_ll(&hw_request, (long long)n);
  return p + HDR;
}

void shale_free(void *p) {
  if (!p) return;
  uint8_t *base = (uint8_t *)p - HDR;
  size_t n;
  memcpy(&n, base, sizeof n);
  atomic_fetch_sub(&outstanding, 1);
  atomic_fetch_sub(&bytes, (long long)n);
  const UtilSysAlloc *a = maker(base);
  if (a)
    a->free(a->ctx, base);
  else
    free(base);
}
