/*
 * netbench.c -- the cost of the network: the speedtest1 port and the point
 * lookup row run on Shale embedded (the native API, engine_shale.c) and
 * through build/shale-server over HTTP with keep-alive (engine_net.c, a
 * Hrana 2 client), side by side in one run; writes docs/network.md.
 *
 * Also the floor under any request/response protocol on this machine: a
 * trivial echo (a child that reads a request-sized message and writes a
 * response-sized one back) over the same kind of socket (TCP on loopback,
 * TCP_NODELAY, one connection, blocking I/O), timed per round trip.
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
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

/* ---- the floor: an echo over loopback TCP ---- */

/* Sizes of a point lookup's exchange through the server in JSON (HTTP
 * headers and body, as libcurl sends them and shale-server answers). */
#define FLOOR_REQ 330
#define FLOOR_RESP 420
#define FLOOR_N 20000

static int full_io(int fd, char *buf, size_t n, int wr) {
  for (size_t k = 0; k < n;) {
    ssize_t r = wr ? write(fd, buf + k, n - k) : read(fd, buf + k, n - k);
    if (r <= 0) return -1;
    k += (size_t)r;
  }
  return 0;
}

/* Microseconds per round trip (median of 3 runs of FLOOR_N), or -1. */
static double echo_floor(void) {
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
      getsockname(ls, (struct sockaddr *)&a, &al))
    return -1;
  pid_t pid = fork();
  if (pid == 0) { /* the echo: one connection, request in, response out */
    int c = accept(ls, NULL, NULL);
    char buf[FLOOR_RESP > FLOOR_REQ ? FLOOR_RESP : FLOOR_REQ] = {0};
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    while (c >= 0 && !full_io(c, buf, FLOOR_REQ, 0) && !full_io(c, buf, FLOOR_RESP, 1)) {
    }
    _exit(0);
  }
  close(ls);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  double us[3] = {-1, -1, -1};
  if (pid > 0 && fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof a)) {
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buf[FLOOR_RESP > FLOOR_REQ ? FLOOR_RESP : FLOOR_REQ] = {0};
    for (int r = 0; r < 4; r++) { /* run 0 warms up */
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      int i = 0;
      while (i < FLOOR_N && !full_io(fd, buf, FLOOR_REQ, 1) && !full_io(fd, buf, FLOOR_RESP, 0))
        i++;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      if (i < FLOOR_N) break;
      if (r)
        us[r - 1] = ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / FLOOR_N;
    }
  }
  if (fd >= 0) close(fd);
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
  }
  for (int i = 0; i < 3; i++) /* the median of three */
    for (int j = i + 1; j < 3; j++)
      if (us[j] < us[i]) {
        double t = us[i];
        us[i] = us[j];
        us[j] = t;
      }
  return us[1];
}

static int agree(const BenchResult *a, const BenchResult *b) {
  return a->ok && b->ok && a->checksum == b->checksum && a->agree_reps && b->agree_reps;
}

static void write_report(const char *prefix, const int *sel, const BenchResult *rs, int reps,
                         const char *load0, const char *load1, double floor_us) {
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
  for (int i = 0; i < bench_nrows_net; i++)
    if (sel[i] && !strcmp(bench_rows_shale[i].name, "lookup_rowid") && rs[2 * i].ok &&
        rs[2 * i + 1].ok && floor_us > 0)
      fprintf(md,
              "\n**The floor**: a trivial echo over the same kind of socket (loopback TCP, "
              "TCP_NODELAY, %d bytes there and %d back, the size of a lookup's exchange, two "
              "processes, blocking I/O) takes %.1f us per round trip, %.1fx an embedded lookup; "
              "a lookup through the server takes %.2fx the echo.\n",
              FLOOR_REQ, FLOOR_RESP, floor_us,
              floor_us / (rs[2 * i].median * 1000 / (double)rs[2 * i].ops),
              rs[2 * i + 1].median * 1000 / (double)rs[2 * i + 1].ops / floor_us);
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
  double floor_us = echo_floor();
  printf("%-22s %12s %12.1f us per round trip\n", "echo floor", "", floor_us);
  bench_loadavg(load1, sizeof load1);
  write_report(prefix, sel, rs, reps, load0, load1, floor_us);
  return bad ? 1 : 0;
}
