/*
 * tscratch.c -- TEST SCAFFOLDING: scratch directory on /dev/shm (see
 * tscratch.h).
 *
 * Invariants:
 *  1. dir[] is set once per process; owner is the pid that created it.
 */
#include "tscratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test.h"

static char dir[256];
static pid_t owner;
static int keep;

static void cleanup(void) {
  if (!dir[0] || getpid() != owner) return;
  if (keep || getenv("SHALE_KEEP_SCRATCH")) {
    fprintf(stderr, "scratch files kept in %s\n", dir);
    return;
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) { /* best effort */
  }
}

void tscratch_keep(void) { keep = 1; }

const char *tscratch_path(const char *name) {
  static char bufs[8][512];
  static int slot;
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/dev/shm/shale-crash-XXXXXX");
    if (access("/dev/shm", W_OK) == 0 && mkdtemp(dir)) {
      owner = getpid();
      atexit(cleanup);
    } else {
      snprintf(dir, sizeof dir, "%s", test_tmpdir());
      owner = 0; /* the harness owns it */
    }
  }
  char *b = bufs[slot++ & 7];
  snprintf(b, 512, "%s/%s", dir, name);
  return b;
}
