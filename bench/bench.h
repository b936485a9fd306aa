/*
 * bench.h -- the benchmark driver's shared types (bench/).
 *
 * A benchmark row is one workload written once (workloads.inc) and compiled
 * twice: against the reference SQLite (engine_sqlite.c) and against Shale's
 * native API (engine_shale.c). The driver (bench.c) runs every row x engine
 * in its own child process: setup (untimed), one warm-up, N timed
 * repetitions; the child reports the times, the operation count and a
 * checksum of everything its queries returned, and the parent compares the
 * checksums of the two engines.
 *
 * Invariants:
 *  1. Both engines get the same SQL, the same settings (page_size 4096,
 *     cache_size -2000, the row's journal_mode and synchronous) and the same
 *     data from the same seeded generator.
 *  2. A workload's checksum depends only on the values its queries returned
 *     (types and values), never on timing or engine.
 *  3. Setup work (building the base table) is outside the timed region.
 */
#ifndef SHALE_BENCH_H
#define SHALE_BENCH_H

#include <stdint.h>

typedef struct BenchCtx {
  const char *dir;   /* scratch directory for this child */
  char path[512];    /* database file */
  uint64_t checksum; /* accumulated by the workload (FNV-1a over results) */
  long ops;          /* operations per repetition (set by the workload) */
  int scale;         /* 1 quick, 10 full (rows with sizes scale with it) */
  long arg;          /* the row's parameter (BenchRow.arg) */
  char err[512];     /* first error, empty when fine */
} BenchCtx;

/* One workload: setup runs once (untimed), run once per repetition. Both
 * return 0 on success. */
typedef struct BenchRow {
  const char *name;
  const char *group; /* "onelite", "crud", "speedtest1", "go" */
  const char *desc;
  int (*setup)(BenchCtx *); /* once, untimed (may be NULL) */
  int (*prep)(BenchCtx *);  /* before each repetition, untimed (may be NULL) */
  int (*run)(BenchCtx *);   /* timed */
  int quick;                /* nonzero: in the quick set (make bench) */
  long arg;                 /* parameter handed to the workload in BenchCtx.arg (0 if unused) */
} BenchRow;

extern const BenchRow bench_rows_sqlite[];
extern const BenchRow bench_rows_shale[];
extern const int bench_nrows;
void bench_finish_sqlite(void);
void bench_finish_shale(void);
/* Calls of shale_malloc/shale_realloc so far in this process (counted by
 * wrappers in bench.c: the link uses -Wl,--wrap; calls made inside
 * src/util/alloc.c itself are not seen). */
long bench_alloc_calls(void);

static inline void bench_mix(BenchCtx *c, const void *p, uint64_t n) {
  const unsigned char *s = p;
  uint64_t h = c->checksum ? c->checksum : 1469598103934665603ull;
  for (uint64_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  c->checksum = h;
}

#endif
