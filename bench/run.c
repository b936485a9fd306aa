/*
 * run.c -- the benchmark runtime shared by the drivers (bench.c: Shale
 * against SQLite; net/netbench.c: Shale over the network against Shale
 * embedded): one row on one engine in a forked child with its own scratch
 * directory (setup, one warm-up, N timed repetitions, the checksum of every
 * result), optionally under callgrind, and the allocation counters.
 *
 * Invariants:
 *  1. The parent runs no workload itself; each child opens its own scratch
 *     directory, so no state is shared between engines or rows.
 *  2. A child reports exactly one line on its pipe: "ok OPS CHECKSUM SAME
 *     ALLOCS MS..." or "err MESSAGE".
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include "bench.h"
/* Allocation counting for Shale: the link wraps shale_malloc and
 * shale_realloc (-Wl,--wrap=..., see the Makefile's bench block). */
void *__real_shale_malloc(size_t n);
void *__real_shale_realloc(void *p, size_t n);
void *__wrap_shale_malloc(size_t n);
void *__wrap_shale_realloc(void *p, size_t n);
static long g_alloc_calls;
void *__wrap_shale_malloc(size_t n) {
  g_alloc_calls++;
  return __real_shale_malloc(n);
}
void *__wrap_shale_realloc(void *p, size_t n) {
  g_alloc_calls++;
  return __real_shale_realloc(p, n);
}
long bench_alloc_calls(void) { return g_alloc_calls; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void rm_rf(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* Child: run one row on one engine, print the outcome on fd. */
void bench_child(const BenchRow *row, void (*finish)(void), int reps, int warm, int fd) {
  char dir[] = "/tmp/shale-bench-XXXXXX";
  FILE *out = fdopen(fd, "w");
  if (!mkdtemp(dir)) {
    fprintf(out, "err mkdtemp\n");
    fclose(out);
    _exit(1);
  }
  BenchCtx c;
  memset(&c, 0, sizeof c);
  c.dir = dir;
  c.scale = 1;
  c.arg = row->arg;
  snprintf(c.path, sizeof c.path, "%s/bench.db", dir);
  int rc = row->setup ? row->setup(&c) : 0;
  uint64_t first = 0;
  int same = 1;
  double ms[BENCH_MAX_REPS];
  long allocs = 0;
  int started = 0;
  for (int r = warm ? -1 : 0; rc == 0 && r < reps; r++) {
    c.checksum = 0;
    if (row->prep && (rc = row->prep(&c)) != 0) break;
    c.checksum = 0;
    long a0 = bench_alloc_calls();
    if (r >= 0) { /* no-ops unless run under callgrind (invariant 4) */
      CALLGRIND_START_INSTRUMENTATION;
      CALLGRIND_TOGGLE_COLLECT;
    }
    double t0 = now_ms();
    rc = row->run(&c);
    double t1 = now_ms();
    if (r >= 0) {
      CALLGRIND_TOGGLE_COLLECT;
      CALLGRIND_STOP_INSTRUMENTATION;
    }
    allocs = bench_alloc_calls() - a0;
    if (rc) break;
    if (r < 0) {
      first = c.checksum;
      started = 1;
      continue; /* warm-up */
    }
    if (!started) {
      first = c.checksum;
      started = 1;
    }
    if (c.checksum != first) same = 0;
    ms[r] = t1 - t0;
  }
  finish();
  rm_rf(dir);
  if (rc) {
    for (char *p = c.err; *p; p++)
      if (*p == '\n') *p = ' ';
    fprintf(out, "err %s\n", c.err[0] ? c.err : "failed");
  } else {
    fprintf(out, "ok %ld %llu %d %ld", c.ops, (unsigned long long)first, same, allocs);
    for (int r = 0; r < reps; r++) fprintf(out, " %.4f", ms[r]);
    fprintf(out, "\n");
  }
  fclose(out);
  _exit(rc ? 1 : 0);
}

/* The 1, 5 and 15-minute load averages, as /proc/loadavg prints them. */
void bench_loadavg(char *out, size_t n) {
  snprintf(out, n, "unknown");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  double a, b, c;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(out, n, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The path of this program, for the callgrind re-execution. */
char bench_self[1024];
#ifdef HAVE_CALLGRIND
const int bench_have_callgrind = 1;
#else
const int bench_have_callgrind = 0;
#endif

/* In the forked child of an --instr run: replace the process by
 * valgrind --tool=callgrind running this program's hidden --child mode on
 * the same row, engine and pipe (fd). */
static void exec_callgrind(const char *row, const char *engine, int reps, int fd,
                           const char *outfile) {
  char out_opt[700], reps_s[16], fd_s[16];
  snprintf(out_opt, sizeof out_opt, "--callgrind-out-file=%s", outfile);
  snprintf(reps_s, sizeof reps_s, "%d", reps);
  snprintf(fd_s, sizeof fd_s, "%d", fd);
  char *argv[] = {"valgrind",
                  "--tool=callgrind",
                  "-q",
                  "--instr-atstart=no",
                  "--collect-atstart=no",
                  out_opt,
                  bench_self,
                  "--child",
                  (char *)row,
                  (char *)engine,
                  reps_s,
                  fd_s,
                  NULL};
  execvp("valgrind", argv);
  dprintf(fd, "err cannot run valgrind: %s\n", strerror(errno));
  _exit(1);
}

/* The total of the first event (Ir) in a callgrind output file, or -1.
 * With --collect-atstart=no callgrind writes "summary: 0" and the collected
 * cost on the "totals:" line, so the larger of the two is taken. */
static double callgrind_total(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  double v = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7)) {
      double x = strtod(strchr(line, ':') + 1, NULL);
      if (x > v) v = x;
    }
  fclose(f);
  return v;
}

/* Run one row on one engine in a child process. engine/instr_out non-NULL:
 * the child runs under callgrind (exec_callgrind) and the instruction count
 * of its timed repetitions lands in res->ir_per_op. */
void bench_run_one(const BenchRow *row, void (*finish)(void), int reps, int warm, int cpu,
                   BenchResult *res, const char *engine, const char *instr_out) {
  memset(res, 0, sizeof *res);
  int fds[2];
  if (pipe(fds)) {
    snprintf(res->err, sizeof res->err, "pipe: %s", strerror(errno));
    return;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      sched_setaffinity(0, sizeof set, &set);
    }
    if (instr_out) exec_callgrind(row->name, engine, reps, fds[1], instr_out);
    bench_child(row, finish, reps, warm, fds[1]);
  }
  close(fds[1]);
  char buf[4096] = {0};
  size_t n = 0;
  ssize_t k;
  while (n + 1 < sizeof buf && (k = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)k;
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  wait4(pid, &status, 0, &ru);
  res->peak_mb = ru.ru_maxrss / 1024.0;
  if (strncmp(buf, "ok ", 3) == 0) {
    char *p = buf + 3;
    unsigned long long ck;
    int same;
    res->ops = strtol(p, &p, 10);
    ck = strtoull(p, &p, 10);
    same = (int)strtol(p, &p, 10);
    res->allocs = strtol(p, &p, 10);
    res->checksum = ck;
    res->agree_reps = same;
    for (int r = 0; r < reps; r++) res->ms[r] = strtod(p, &p);
    res->nrep = reps;
    double s[BENCH_MAX_REPS];
    memcpy(s, res->ms, sizeof(double) * (size_t)reps);
    qsort(s, (size_t)reps, sizeof(double), cmp_double);
    res->min = s[0];
    res->max = s[reps - 1];
    res->median = reps % 2 ? s[reps / 2] : (s[reps / 2 - 1] + s[reps / 2]) / 2;
    res->ok = 1;
    if (instr_out) {
      double ir = callgrind_total(instr_out);
      const char *keep = getenv("SHALE_BENCH_KEEP_CALLGRIND");
      if (keep && *keep) { /* kept for callgrind_annotate: ROW.ENGINE.cg in that folder */
        char kept[1024];
        snprintf(kept, sizeof kept, "%s/%s.%s.cg", keep, row->name, engine);
        if (rename(instr_out, kept) != 0) remove(instr_out);
      } else {
        remove(instr_out);
      }
      if (ir < 0) {
        res->ok = 0;
        snprintf(res->err, sizeof res->err, "no callgrind output in %s", instr_out);
      } else {
        res->ir_per_op = ir / ((double)reps * (double)(res->ops > 0 ? res->ops : 1));
      }
    }
  } else if (strncmp(buf, "err ", 4) == 0) {
    buf[strcspn(buf, "\n")] = 0;
    snprintf(res->err, sizeof res->err, "%.500s", buf + 4);
  } else {
    snprintf(res->err, sizeof res->err, "child died (status %d)", status);
  }
}

int bench_selected(const char *list, const BenchRow *row, int full) {
  if (!list) return full || row->quick;
  if (strcmp(list, "all") == 0) return 1;
  size_t n = strlen(row->name);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, row->name, n) == 0) return 1;
    p += len + (e ? 1 : 0);
  }
  return 0;
}
