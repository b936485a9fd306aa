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

#include <stddef.h>
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
  const char *group; /* "onelite", "crud", "speedtest1", "go", "ext" */
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

/* ---- the runtime shared by the drivers (run.c) ---- */

#define BENCH_MAX_REPS 50

/* One row on one engine: the child's figures as the parent read them. */
typedef struct BenchResult {
  int ok;
  char err[512];
  long ops;
  uint64_t checksum;
  long allocs;    /* shale_malloc/realloc calls in the last timed repetition */
  int agree_reps; /* every repetition gave the same checksum */
  double ms[BENCH_MAX_REPS];
  int nrep;
  double median, min, max;
  double peak_mb;
  double ir_per_op; /* --instr: instructions per operation in run(), 0 if not measured */
} BenchResult;

/* Run row on one engine in a forked child (setup, warm-up when warm, reps
 * timed runs; finish closes the engine's connection after the last one).
 * cpu >= 0 pins the child. engine and instr_out non-NULL: the child runs
 * this program's hidden "--child ROW ENGINE REPS FD" mode under callgrind
 * (bench_self must hold the program's path) and res->ir_per_op gets the
 * instructions per operation of the timed runs. */
void bench_run_one(const BenchRow *row, void (*finish)(void), int reps, int warm, int cpu,
                   BenchResult *res, const char *engine, const char *instr_out);
/* The child's side of bench_run_one: runs and reports on fd; never returns. */
void bench_child(const BenchRow *row, void (*finish)(void), int reps, int warm, int fd);
/* Is row in the comma-separated list (NULL: the quick set, or all when
 * full; "all": every row)? */
int bench_selected(const char *list, const BenchRow *row, int full);
/* The 1, 5 and 15-minute load averages as text ("unknown" when unreadable). */
void bench_loadavg(char *out, size_t n);
extern char bench_self[1024];
/* Built with <valgrind/callgrind.h>: --instr can count instructions. */
extern const int bench_have_callgrind;

static inline void bench_mix(BenchCtx *c, const void *p, uint64_t n) {
  const unsigned char *s = p;
  uint64_t h = c->checksum ? c->checksum : 1469598103934665603ull;
  for (uint64_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  c->checksum = h;
}

#endif
