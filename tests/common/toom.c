/*
 * toom.c -- see toom.h.
 */
#include "toom.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/util/util.h"

int toom_faulted_run(int (*workload)(void), long n, int persist, long *hits) {
  int fd[2];
  if (pipe(fd) != 0) return 2;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    long base = util_alloc_outstanding();
    util_fault_alloc(n, persist);
    workload();
    long h[2] = {util_fault_alloc_hits(), 0};
    util_fault_alloc(0, 0);
    h[1] = util_alloc_outstanding() - base;
    ssize_t w = write(fd[1], h, sizeof h);
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  long h[2] = {0, 0};
  ssize_t got = read(fd[0], h, sizeof h);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof h) return 2;
  *hits = h[0];
  return h[1] != 0;
}

void toom_sweep(int (*workload)(void), long once_step, long persist_step, long *leaks,
                long *crashes) {
  long runs = 0, first_crash = 0, first_leak = 0;
  *leaks = *crashes = 0;
  for (int persist = 0; persist <= 1; persist++) {
    long step = persist ? persist_step : once_step;
    for (long n = 1; n < 1000000; n += step) {
      long hits = 1;
      int r = toom_faulted_run(workload, n, persist, &hits);
      runs++;
      if (r == 1 && !(*leaks)++) first_leak = n * 2 + persist;
      if (r == 2 && !(*crashes)++) first_crash = n * 2 + persist;
      if (hits == 0) break; /* the workload no longer reaches allocation n */
    }
  }
  printf(
      "OOM runs %ld: %ld leaked, %ld crashed (first leak at allocation %ld%s, first crash at "
      "%ld%s)\n",
      runs, *leaks, *crashes, first_leak / 2, first_leak % 2 ? " persistent" : "", first_crash / 2,
      first_crash % 2 ? " persistent" : "");
}

int toom_exec_list(shale *db, const char *const *sql, int n) {
  int fails = 0;
  for (int i = 0; i < n; i++) {
    char *m = NULL;
    if (shale_exec(db, sql[i], NULL, NULL, &m) != SHALE_OK) fails++;
    shale_free(m);
  }
  return fails;
}
