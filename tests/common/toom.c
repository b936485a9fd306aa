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
