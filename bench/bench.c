/*
 * bench.c -- the benchmark driver: runs every selected row on Shale and on
 * the reference SQLite, each row x engine in its own child process, and
 * writes the report (docs/benchmarks.md), the raw figures (JSON) and a
 * chart of the ratios (PNG, when gnuplot is installed).
 *
 * Usage: shale-bench [--rows a,b,...|all] [--full] [--reps N] [--cpu N]
 *                    [--out PREFIX] [--engines shale,sqlite] [--instr [--instr-reps N]]
 *   --rows   rows to run (default: the quick set; --full: every row)
 *   --reps   timed repetitions after one warm-up (default 3)
 *   --engines run only these engines (for profiling: no report is written)
 *   --cpu    pin the children to one CPU
 *   --out    report prefix (default docs/benchmarks: writes .md, .json, .png)
 *   --instr  also run each row x engine under valgrind --tool=callgrind and
 *            report instructions per operation (Ir/op) and their ratio beside
 *            the wall-clock ratio; only the timed repetitions are counted
 *            (the child switches instrumentation and collection on around
 *            run() with callgrind's client requests; setup, prep and the
 *            warm-up run uninstrumented). --instr-reps N timed repetitions
 *            under callgrind (default 1: the counts barely vary). With
 *            SHALE_BENCH_KEEP_CALLGRIND=DIR in the environment the callgrind
 *            files are kept as DIR/ROW.ENGINE.cg for callgrind_annotate.
 *   --help   this text and the list of rows
 *
 * Invariants:
 *  1. The parent runs no workload itself; each child opens its own scratch
 *     directory, so no state is shared between engines or rows.
 *  2. A row "agrees" only when both engines finished without error and
 *     produced the same checksum in every repetition.
 *  3. The report is written by this program only, from the figures it
 *     measured in this run.
 *  4. Instruction counts (--instr) come from a separate child run under
 *     callgrind, never from the timed children: valgrind's slowdown does not
 *     touch the wall-clock figures, and the counts cover run() only.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shale.h"

static void usage(const char *argv0, FILE *to) {
  fprintf(to,
          "usage: %s [--rows a,b|all] [--full] [--reps N] [--cpu N] [--out PREFIX]"
          " [--engines shale,sqlite] [--instr [--instr-reps N]] [--help]\n",
          argv0);
}

/* --help: the usage line and every row (q: in the quick set). */
static void list_rows(const char *argv0) {
  usage(argv0, stdout);
  printf(
      "  --instr also counts instructions per operation under valgrind --tool=callgrind\n"
      "  (timed part only; make bench INSTR=1). Rows (q = quick set):\n");
  for (int i = 0; i < bench_nrows; i++)
    printf("  %c %-26s %s\n", bench_rows_sqlite[i].quick ? 'q' : ' ', bench_rows_sqlite[i].name,
           bench_rows_sqlite[i].desc);
}

/* The hidden mode exec_callgrind starts: --child ROW ENGINE REPS FD. */
static int child_main(char **argv) {
  int reps = atoi(argv[2]), fd = atoi(argv[3]);
  for (int i = 0; i < bench_nrows; i++)
    if (!strcmp(bench_rows_sqlite[i].name, argv[0])) {
      if (!strcmp(argv[1], "shale"))
        bench_child(&bench_rows_shale[i], bench_finish_shale, reps, 1, fd);
      bench_child(&bench_rows_sqlite[i], bench_finish_sqlite, reps, 1, fd);
    }
  dprintf(fd, "err no row %s\n", argv[0]);
  return 1;
}

/* --instr: run row i on the selected engines under callgrind; the counts go
 * to sh->ir_per_op and sq->ir_per_op (0 when not measured). */
static void instr_row(int i, const char *engines, int reps, int cpu, BenchResult *sh,
                      BenchResult *sq) {
  static const char *names[2] = {"shale", "sqlite"};
  BenchResult *dst[2] = {sh, sq};
  for (int e = 0; e < 2; e++) {
    if (!strstr(engines, names[e])) continue;
    char out[256];
    snprintf(out, sizeof out, "/tmp/shale-bench-cg-%ld-%d-%s.out", (long)getpid(), i, names[e]);
    BenchResult r;
    bench_run_one(e ? &bench_rows_sqlite[i] : &bench_rows_shale[i], NULL, reps, 1, cpu, &r,
                  names[e], out);
    if (r.ok)
      dst[e]->ir_per_op = r.ir_per_op;
    else
      fprintf(stderr, "%s %s under callgrind: %s\n", bench_rows_sqlite[i].name, names[e], r.err);
  }
}

int main(int argc, char **argv) {
  const char *rows = NULL, *prefix = "docs/benchmarks", *engines = "shale,sqlite";
  int reps = 3, cpu = -1, full = 0, instr = 0, instr_reps = 1;
  if (argc == 6 && !strcmp(argv[1], "--child")) return child_main(argv + 2);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc)
      rows = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--engines") && i + 1 < argc)
      engines = argv[++i];
    else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
      cpu = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      prefix = argv[++i];
    else if (!strcmp(argv[i], "--instr-reps") && i + 1 < argc)
      instr_reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--full"))
      full = 1;
    else if (!strcmp(argv[i], "--instr"))
      instr = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      list_rows(argv[0]);
      return 0;
    } else {
      usage(argv[0], stderr);
      return 2;
    }
  }
  if (instr && !bench_have_callgrind) {
    fprintf(stderr, "%s: built without <valgrind/callgrind.h>: --instr is not available\n",
            argv[0]);
    return 2;
  }
  if (instr) {
    ssize_t n = readlink("/proc/self/exe", bench_self, sizeof bench_self - 1);
    if (n <= 0) {
      fprintf(stderr, "%s: cannot find its own path for --instr\n", argv[0]);
      return 2;
    }
    bench_self[n] = 0;
    if (instr_reps < 1) instr_reps = 1;
    if (instr_reps > BENCH_MAX_REPS) instr_reps = BENCH_MAX_REPS;
  }
  if (reps < 1) reps = 1;
  if (reps > BENCH_MAX_REPS) reps = BENCH_MAX_REPS;

  BenchResult *rs = calloc((size_t)bench_nrows * 2, sizeof(BenchResult));
  int *sel = calloc((size_t)bench_nrows, sizeof(int));
  if (!rs || !sel) return 1;
  int nfail = 0, nrun = 0;
  char load0[64], load1[64];
  bench_loadavg(load0, sizeof load0);
  double logsum = 0;
  int nlog = 0;
  printf("%-26s %12s %12s %8s %9s %s", "row", "shale ms", "sqlite ms", "ratio", "allocs/op",
         "results");
  if (instr) printf("  %14s %14s %8s", "shale Ir/op", "sqlite Ir/op", "Ir ratio");
  printf("\n");
  for (int i = 0; i < bench_nrows; i++) {
    const BenchRow *row = &bench_rows_sqlite[i];
    if (!(sel[i] = bench_selected(rows, row, full))) continue;
    nrun++;
    BenchResult *sh = &rs[2 * i], *sq = &rs[2 * i + 1];
    if (strstr(engines, "shale"))
      bench_run_one(&bench_rows_shale[i], bench_finish_shale, reps, 1, cpu, sh, NULL, NULL);
    if (strstr(engines, "sqlite"))
      bench_run_one(&bench_rows_sqlite[i], bench_finish_sqlite, reps, 1, cpu, sq, NULL, NULL);
    if (instr) instr_row(i, engines, instr_reps, cpu, sh, sq);
    if (!strstr(engines, "shale") || !strstr(engines, "sqlite")) {
      BenchResult *r1 = strstr(engines, "shale") ? sh : sq;
      if (r1->ok)
        printf("%-26s %s %.2f ms (min %.2f) allocs/op %.1f", row->name, engines, r1->median,
               r1->min, (double)r1->allocs / (double)(r1->ops ? r1->ops : 1));
      else
        printf("%-26s %s FAILED: %s", row->name, engines, r1->err);
      if (r1->ir_per_op > 0) printf(" Ir/op %.0f", r1->ir_per_op);
      printf("\n");
      continue;
    }
    int agree =
        sh->ok && sq->ok && sh->checksum == sq->checksum && sh->agree_reps && sq->agree_reps;
    if (!agree) nfail++;
    if (sh->ok && sq->ok) {
      double ratio = sh->median / sq->median;
      printf("%-26s %12.2f %12.2f %7.2fx %9.1f %-7s", row->name, sh->median, sq->median, ratio,
             (double)sh->allocs / (double)(sq->ops > 0 ? sq->ops : 1), agree ? "agree" : "DIFFER");
      if (sh->ir_per_op > 0 && sq->ir_per_op > 0)
        printf("  %14.0f %14.0f %7.2fx", sh->ir_per_op, sq->ir_per_op,
               sh->ir_per_op / sq->ir_per_op);
      printf("\n");
      if (agree && strcmp(row->name, "open_time") != 0) {
        logsum += log(ratio);
        nlog++;
      }
    } else {
      printf("%-26s FAILED: %s%s%s%s\n", row->name, sh->ok ? "" : "shale: ", sh->ok ? "" : sh->err,
             sq->ok ? "" : " sqlite: ", sq->ok ? "" : sq->err);
    }
    fflush(stdout);
  }
  if (!strstr(engines, "shale") || !strstr(engines, "sqlite")) return 0; /* profiling only */
  double geo = nlog ? exp(logsum / nlog) : 0;
  bench_loadavg(load1, sizeof load1);
  printf("geometric mean of %d ratios (open_time excluded): %.2fx; %d of %d rows failed\n", nlog,
         geo, nfail, nrun);

  /* ---- report ---- */
  char path[600];
  snprintf(path, sizeof path, "%s.md", prefix);
  FILE *md = fopen(path, "w");
  snprintf(path, sizeof path, "%s.json", prefix);
  FILE *js = fopen(path, "w");
  snprintf(path, sizeof path, "%s.dat", prefix);
  FILE *dat = fopen(path, "w");
  if (!md || !js || !dat) {
    fprintf(stderr, "bench: cannot write the report at %s.*\n", prefix);
    return 1;
  }
  struct utsname un;
  uname(&un);
  char cpuname[256] = "unknown";
  FILE *ci = fopen("/proc/cpuinfo", "r");
  if (ci) {
    char line[512];
    while (fgets(line, sizeof line, ci))
      if (!strncmp(line, "model name", 10)) {
        char *c = strchr(line, ':');
        if (c) snprintf(cpuname, sizeof cpuname, "%s", c + 2);
        cpuname[strcspn(cpuname, "\n")] = 0;
        break;
      }
    fclose(ci);
  }
  time_t t = time(NULL);
  char when[64];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
  fprintf(md, "# Benchmarks: Shale against SQLite\n\n");
  fprintf(md,
          "Written by `build/shale-bench` (bench/bench.c) on %s; do not edit by hand. "
          "Reproduce with `make bench` (quick set) or `make bench FULL=1`.\n\n",
          when);
  fprintf(md, "- Machine: %s, %ld CPUs, %s %s\n", cpuname, sysconf(_SC_NPROCESSORS_ONLN),
          un.sysname, un.release);
  fprintf(md, "- Compiler: %s, flags `%s`\n", __VERSION__, BENCH_CFLAGS);
  fprintf(md,
          "- Load average (1, 5, 15 minutes) before: %s, after: %s, on %ld CPUs. Above the CPU "
          "count, other work shared the machine with this run: the times are then inflated "
          "and the ratios of short rows (a few ms) are noisy.\n",
          load0, load1, sysconf(_SC_NPROCESSORS_ONLN));
  fprintf(md, "- Versions: Shale %s, SQLite %s (Debian libsqlite3)\n", shale_libversion(),
          sqlite3_libversion());
  fprintf(md,
          "- Settings (both engines): page_size 4096, cache_size -2000, WAL with synchronous "
          "NORMAL unless the row says otherwise; same SQL, same data and seed.\n");
  fprintf(md,
          "- Method: each row x engine in its own child process; one warm-up, then %d timed "
          "repetitions; median (min-max) in ms; peak RSS of the child.\n\n",
          reps);
  fprintf(md,
          "Ops/s = operations per second from the median time (an operation is what the row "
          "says: one statement, one query, one transaction). Allocs/op = Shale's "
          "shale_malloc/shale_realloc calls per operation in the last timed repetition.\n\n");
  fprintf(md,
          "| Row | Ops | Shale ms | SQLite ms | Ratio | Shale ops/s | SQLite ops/s | "
          "Shale allocs/op | Peak MB (Shale / SQLite) | Results |\n");
  fprintf(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  fprintf(js,
          "{\n  \"when\": \"%s\",\n  \"load_before\": \"%s\",\n  \"load_after\": \"%s\",\n"
          "  \"cpu\": \"%s\",\n  \"sqlite\": \"%s\",\n  \"reps\": %d,\n"
          "  \"rows\": [\n",
          when, load0, load1, cpuname, sqlite3_libversion(), reps);
  int first = 1, ndat = 0;
  for (int i = 0; i < bench_nrows; i++) {
    if (!sel[i]) continue;
    const BenchRow *row = &bench_rows_sqlite[i];
    BenchResult *sh = &rs[2 * i], *sq = &rs[2 * i + 1];
    int agree =
        sh->ok && sq->ok && sh->checksum == sq->checksum && sh->agree_reps && sq->agree_reps;
    if (sh->ok && sq->ok) {
      double ops = (double)(sq->ops > 0 ? sq->ops : 1);
      fprintf(md,
              "| %s%s | %ld | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2fx | %.0f | %.0f | %.1f "
              "| %.0f / %.0f | %s |\n",
              row->name, strcmp(row->name, "open_time") ? "" : " (report only)", sq->ops,
              sh->median, sh->min, sh->max, sq->median, sq->min, sq->max, sh->median / sq->median,
              sh->median > 0 ? ops * 1000.0 / sh->median : 0,
              sq->median > 0 ? ops * 1000.0 / sq->median : 0, (double)sh->allocs / ops, sh->peak_mb,
              sq->peak_mb, agree ? "agree" : "**differ** (checksums)");
      fprintf(dat, "%d \"%s\" %.4f\n", ndat++, row->name, sh->median / sq->median);
    } else {
      char e1[300], e2[300];
      snprintf(e1, sizeof e1, "%.290s", sh->ok ? "ok" : sh->err);
      snprintf(e2, sizeof e2, "%.290s", sq->ok ? "ok" : sq->err);
      for (char *p = e1; *p; p++)
        if (*p == '|') *p = '/';
      for (char *p = e2; *p; p++)
        if (*p == '|') *p = '/';
      fprintf(md, "| %s | - | %s | %s | - | - | - | - | - | **failed** |\n", row->name, e1, e2);
    }
    fprintf(js,
            "%s    {\"row\": \"%s\", \"group\": \"%s\", \"ops\": %ld, \"agree\": %s,\n"
            "     \"shale\": {\"ok\": %s, \"median_ms\": %.4f, \"min_ms\": %.4f, "
            "\"max_ms\": %.4f, \"peak_mb\": %.1f, \"allocs\": %ld, \"ir_per_op\": %.1f},\n"
            "     \"sqlite\": {\"ok\": %s, \"median_ms\": %.4f, \"min_ms\": %.4f, "
            "\"max_ms\": %.4f, \"peak_mb\": %.1f, \"ir_per_op\": %.1f}}",
            first ? "" : ",\n", row->name, row->group, sq->ops, agree ? "true" : "false",
            sh->ok ? "true" : "false", sh->median, sh->min, sh->max, sh->peak_mb, sh->allocs,
            sh->ir_per_op, sq->ok ? "true" : "false", sq->median, sq->min, sq->max, sq->peak_mb,
            sq->ir_per_op);
    first = 0;
  }
  fprintf(js, "\n  ],\n  \"geomean_ratio\": %.4f\n}\n", geo);
  if (instr) {
    fprintf(md,
            "\nInstructions per operation (`--instr`: valgrind --tool=callgrind, timed part "
            "only, %d repetition(s)):\n\n| Row | Shale Ir/op | SQLite Ir/op | Ir ratio | "
            "Wall ratio |\n|---|---:|---:|---:|---:|\n",
            instr_reps);
    for (int i = 0; i < bench_nrows; i++) {
      BenchResult *sh = &rs[2 * i], *sq = &rs[2 * i + 1];
      if (!sel[i] || !(sh->ok && sq->ok && sh->ir_per_op > 0 && sq->ir_per_op > 0)) continue;
      fprintf(md, "| %s | %.0f | %.0f | %.2fx | %.2fx |\n", bench_rows_sqlite[i].name,
              sh->ir_per_op, sq->ir_per_op, sh->ir_per_op / sq->ir_per_op, sh->median / sq->median);
    }
  }
  fprintf(md,
          "\n**Geometric mean of the ratios (%d rows, open_time excluded): %.2fx** "
          "(ratio = Shale time / SQLite time; below 1 is faster than SQLite).\n\n",
          nlog, geo);
  static const char *groups[] = {"onelite", "crud", "speedtest1", "go", "ext"};
  fprintf(md, "Per group (agreeing rows only):");
  for (int g = 0; g < (int)(sizeof groups / sizeof groups[0]); g++) {
    double ls = 0;
    int n = 0;
    for (int i = 0; i < bench_nrows; i++) {
      const BenchRow *row = &bench_rows_sqlite[i];
      BenchResult *sh = &rs[2 * i], *sq = &rs[2 * i + 1];
      if (!sel[i] || strcmp(row->group, groups[g]) || !strcmp(row->name, "open_time")) continue;
      if (!(sh->ok && sq->ok && sh->checksum == sq->checksum && sh->agree_reps && sq->agree_reps))
        continue;
      ls += log(sh->median / sq->median);
      n++;
    }
    if (n) fprintf(md, " %s %.2fx (%d rows);", groups[g], exp(ls / n), n);
  }
  fprintf(md, "\n\n");
  fprintf(md,
          "Targets (the team's, not tests): every OneLite row at most 1.0x SQLite's time and "
          "their geometric mean at most 0.4x; in-memory CRUD through prepared statements "
          "(crud_stmt_*) at least 3x SQLite's operations per second (ratio at most 0.33x).\n\n");
  fprintf(md, "![ratio per row](%s.png)\n\n",
          strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix);
  fprintf(md, "## What each row does\n\n");
  for (int i = 0; i < bench_nrows; i++)
    if (sel[i])
      fprintf(md, "- `%s` (%s): %s\n", bench_rows_sqlite[i].name, bench_rows_sqlite[i].group,
              bench_rows_sqlite[i].desc);
  fclose(md);
  fclose(js);
  fclose(dat);
  /* chart */
  char cmd[2048];
  snprintf(
      cmd, sizeof cmd,
      "command -v gnuplot >/dev/null 2>&1 && gnuplot -e \"set terminal png size %d,560 noenhanced; "
      "set output '%s.png'; set style fill solid; set boxwidth 0.6; set xtics rotate by -45;"
      " set ylabel 'Shale / SQLite time (lower is better)'; set yrange [0:*]; "
      "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2; "
      "plot '%s.dat' using 1:3:xtic(2) with boxes notitle\"",
      ndat * 22 > 900 ? ndat * 22 : 900, prefix, prefix);
  if (system(cmd) != 0) fprintf(stderr, "bench: gnuplot not available; no chart written\n");
  snprintf(path, sizeof path, "%s.dat", prefix);
  remove(path);
  free(rs);
  free(sel);
  return nfail ? 1 : 0;
}
