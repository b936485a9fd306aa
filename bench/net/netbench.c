/*
 * netbench.c -- the cost of the network: the speedtest1 port and the point
 * lookup row run on Shale embedded (the native API, engine_shale.c) and
 * through build/shale-server over HTTP with keep-alive (engine_net.c, a
 * Hrana 2 client), side by side in one run; writes docs/network.md.
 *
 * Usage: shale-netbench [--rows a,b,...|all] [--reps N] [--out PREFIX]
 *   --rows  rows to run (default: every speedtest1 row and lookup_rowid)
 *   --reps  timed repetitions after one warm-up (default 3)
 *   --out   report prefix (default docs/network: writes PREFIX.md)
 *
 * Invariants:
 *  1. Both sides run the same workload code (workloads.inc) with the same
 *     data and seed; a row "agrees" when both finished and their result
 *     checksums are equal in every repetition.
 *  2. Each side runs in its own child (run.c); the network side's child
 *     starts its own server for the row's scratch database and stops it when
 *     the row ends, so setup, warm-up and server start-up stay untimed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench.h"
#include "shale.h"

extern const BenchRow bench_rows_net[];
void bench_finish_net(void);
extern const int bench_nrows_net; /* the same rows, in the same order, as bench_rows_shale */

/* The default set: the speedtest1 port and the point lookups. */
static int default_row(const BenchRow *row) {
  return !strcmp(row->group, "speedtest1") || !strcmp(row->name, "lookup_rowid");
}

static int agree(const BenchResult *a, const BenchResult *b) {
  return a->ok && b->ok && a->checksum == b->checksum && a->agree_reps && b->agree_reps;
}

static void write_report(const char *prefix, const int *sel, const BenchResult *rs, int reps,
                         const char *load0, const char *load1) {
  char path[600];
  snprintf(path, sizeof path, "%s.md", prefix);
  FILE *md = fopen(path, "w");
  if (!md) {
    fprintf(stderr, "netbench: cannot write %s\n", path);
    return;
  }
  time_t t = time(NULL);
  char when[64];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
  fprintf(md, "# The cost of the network: Shale over Hrana against Shale embedded\n\n");
  fprintf(md,
          "Written by `build/shale-netbench` (bench/net/netbench.c) on %s; do not edit by "
          "hand. Reproduce with `make netbench` (also run by `make bench`).\n\n",
          when);
  fprintf(md,
          "- Embedded: the workload calls Shale's native API in its own process. Network: the "
          "same workload code calls a small Hrana 2 client (bench/net/engine_net.c: one "
          "`POST /v2/pipeline` per statement execution over one HTTP/1.1 keep-alive "
          "connection, libcurl + jansson, the stream's baton carried from request to request) "
          "of a `build/shale-server` child on a loopback port, serving the same file.\n");
  fprintf(md,
          "- Load average (1, 5, 15 minutes) before: %s, after: %s, on %ld CPUs. The network "
          "side uses two processes (client and server), the embedded side one.\n",
          load0, load1, sysconf(_SC_NPROCESSORS_ONLN));
  fprintf(md,
          "- Method: each row x side in its own child process; one warm-up, then %d timed "
          "repetitions; median in ms. Ratio = network time / embedded time.\n\n",
          reps);
  fprintf(md,
          "| Row | Ops | Embedded ms | Network ms | Ratio | Embedded us/op | Network us/op | "
          "Results |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
  double st_emb = 0, st_net = 0, ls = 0;
  int nst = 0, all_agree = 1;
  for (int i = 0; i < bench_nrows_net; i++) {
    if (!sel[i]) continue;
    const BenchResult *e = &rs[2 * i], *n = &rs[2 * i + 1];
    const BenchRow *row = &bench_rows_shale[i];
    if (!(e->ok && n->ok)) {
      fprintf(md, "| %s | - | %s | %s | - | - | - | **failed** |\n", row->name,
              e->ok ? "ok" : e->err, n->ok ? "ok" : n->err);
      all_agree = 0;
      continue;
    }
    double ops = (double)(e->ops > 0 ? e->ops : 1);
    int ok = agree(e, n);
    all_agree &= ok;
    fprintf(md, "| %s | %ld | %.2f | %.2f | %.2fx | %.1f | %.1f | %s |\n", row->name, e->ops,
            e->median, n->median, n->median / e->median, e->median * 1000 / ops,
            n->median * 1000 / ops, ok ? "agree" : "**differ**");
    if (!strcmp(row->group, "speedtest1")) {
      st_emb += e->median;
      st_net += n->median;
      ls += log(n->median / e->median);
      nst++;
    }
  }
  if (nst)
    fprintf(md,
            "\n**speedtest1 port (%d rows): network %.1f ms against embedded %.1f ms in all, "
            "%.2fx** (geometric mean of the row ratios %.2fx). Target: at most 2x.\n",
            nst, st_net, st_emb, st_net / st_emb, exp(ls / nst));
  for (int i = 0; i < bench_nrows_net; i++)
    if (sel[i] && !strcmp(bench_rows_shale[i].name, "lookup_rowid") && rs[2 * i].ok &&
        rs[2 * i + 1].ok)
      fprintf(md,
              "\n**Point lookups (lookup_rowid): %.2fx** embedded time (%.1f against %.1f us per "
              "lookup). Target: at most 10x.\n",
              rs[2 * i + 1].median / rs[2 * i].median,
              rs[2 * i + 1].median * 1000 / (double)rs[2 * i + 1].ops,
              rs[2 * i].median * 1000 / (double)rs[2 * i].ops);
  fprintf(md, "\nResults %s.\n\n## What each row does\n\n",
          all_agree ? "agree on every row" : "**differ or failed on some rows**");
  for (int i = 0; i < bench_nrows_net; i++)
    if (sel[i]) fprintf(md, "- `%s`: %s\n", bench_rows_shale[i].name, bench_rows_shale[i].desc);
  fclose(md);
  printf("report: %s\n", path);
}

int main(int argc, char **argv) {
  const char *rows = NULL, *prefix = "docs/network";
  int reps = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc)
      rows = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      prefix = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--rows a,b|all] [--reps N] [--out PREFIX]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (reps > BENCH_MAX_REPS) reps = BENCH_MAX_REPS;
  BenchResult *rs = calloc((size_t)bench_nrows_net * 2, sizeof *rs);
  int *sel = calloc((size_t)bench_nrows_net, sizeof *sel);
  if (!rs || !sel) return 1;
  char load0[64], load1[64];
  bench_loadavg(load0, sizeof load0);
  printf("%-22s %12s %12s %8s %s\n", "row", "embedded ms", "network ms", "ratio", "results");
  int bad = 0;
  for (int i = 0; i < bench_nrows_net; i++) {
    const BenchRow *row = &bench_rows_shale[i];
    sel[i] = rows ? bench_selected(rows, row, 0) : default_row(row);
    if (!sel[i] || !strcmp(row->group, "parallel")) { /* threads: not this report's subject */
      sel[i] = 0;
      continue;
    }
    BenchResult *e = &rs[2 * i], *n = &rs[2 * i + 1];
    bench_run_one(row, bench_finish_shale, reps, 1, -1, e, NULL, NULL);
    bench_run_one(&bench_rows_net[i], bench_finish_net, reps, 1, -1, n, NULL, NULL);
    if (e->ok && n->ok)
      printf("%-22s %12.2f %12.2f %7.2fx %s\n", row->name, e->median, n->median,
             n->median / e->median, agree(e, n) ? "agree" : "DIFFER");
    else
      printf("%-22s FAILED: %s %s\n", row->name, e->ok ? "" : e->err, n->ok ? "" : n->err);
    bad += !agree(e, n);
    fflush(stdout);
  }
  bench_loadavg(load1, sizeof load1);
  write_report(prefix, sel, rs, reps, load0, load1);
  return bad ? 1 : 0;
}
