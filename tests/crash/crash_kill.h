/*
 * crash_kill.h -- TEST SCAFFOLDING shared by the SIGKILL crash tests
 * (test_crash_kill.c, test_crash_ext.c): one round of a writer child killed
 * at a random moment. Included by one .c file per test binary.
 *
 * Invariants:
 *  1. The child reports each finished commit number on the pipe as a
 *     uint32_t and never returns into the harness (it _exit()s or is killed).
 */
#ifndef SHALE_TESTS_CRASH_KILL_H
#define SHALE_TESTS_CRASH_KILL_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"

/* Fork a child running run(ctx, wfd), sleep base_us plus a random part of
 * up to span_us << min(idle, 5) (longer after rounds in which the child got
 * nothing done, so that a loaded machine still makes progress), kill it
 * with SIGKILL and reap it. *reported becomes the last commit number the
 * child reported (unchanged when none). Returns its wait status, or -1 when
 * the pipe or the fork failed. */
static inline int crash_kill_round(void (*run)(void *ctx, int wfd), void *ctx, uint64_t *seed,
                                   unsigned base_us, unsigned span_us, int idle,
                                   uint32_t *reported) {
  int fd[2];
  if (pipe(fd)) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    run(ctx, fd[1]);
    _exit(0);
  }
  close(fd[1]);
  if (pid < 0) {
    close(fd[0]);
    return -1;
  }
  usleep((useconds_t)(base_us + test_rand(seed) % (span_us << (idle < 5 ? idle : 5))));
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  uint32_t r;
  while (read(fd[0], &r, sizeof r) == sizeof r) *reported = r;
  close(fd[0]);
  return status;
}

#endif
