/*
 * pager_busy.c -- the busy-timeout handler: wait, with growing sleeps, until
 * a lock frees up or the timeout runs out.
 *
 * It plugs into pager_set_busy_handler with arg = pointer to an int holding
 * the timeout in milliseconds (owned by the caller, e.g. the connection, so
 * that PRAGMA busy_timeout can change it between calls).
 *
 * Invariants:
 *  1. The sleeps of calls 0..count add up to at most the timeout: the
 *     handler gives up (returns 0) rather than overshoot it by a full step.
 *  2. Sleeps grow from 1 ms to 100 ms, so a short wait costs little latency
 *     and a long one few wake-ups.
 */
#include "pager.h"

/* Sleep before retry number i (ms); after the table, the last entry. */
static const unsigned char delays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
#define NDELAY ((int)(sizeof delays / sizeof delays[0]))

/* Total of the sleeps before retry number count. */
static int64_t slept_before(int count) {
  int64_t total = 0;
  for (int i = 0; i < count && i < NDELAY; i++) total += delays[i];
  if (count > NDELAY) total += (int64_t)(count - NDELAY) * delays[NDELAY - 1];
  return total;
}

int pager_busy_wait(void *timeout_ms, int count) {
  int timeout = timeout_ms ? *(const int *)timeout_ms : 0;
  if (timeout <= 0 || count < 0) return 0;
  int64_t before = slept_before(count);
  int64_t delay = count < NDELAY ? delays[count] : delays[NDELAY - 1];
  if (before >= timeout) return 0;
  if (before + delay > timeout) delay = timeout - before;
  OsVfs *vfs = os_vfs_find(NULL);
  if (vfs && vfs->sleep) vfs->sleep(vfs, (int)delay * 1000);
  return 1;
}
