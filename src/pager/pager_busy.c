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
 *     and a long one few wake-ups (SQLite's schedule: 1, 2, 5, 10, 15, 20,
 *     25, 25, 25, 50, 50, 100, then 100 ms).
 *  3. A writer waiting for the WAL WRITE lock (pager_busy_watch set by the
 *     pager around the handler call) sleeps in slices of WATCH_SLICE_US and
 *     asks the watch callback at each whether to retry: at once (GO: the
 *     holder committed and it is our turn, pager_fair.c), at the end of the
 *     step as usual (WAIT), or not before the callback says so (HOLD: the
 *     lock is left free for other processes' writers). SQLite's writers
 *     retake the lock within tens of microseconds of releasing it, so a
 *     waiter that only woke on the schedule would almost never find it free
 *     (issue 14). The timeout is then counted in real time from the first
 *     call (count 0), not as the sum of the steps.
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

#define WATCH_SLICE_US 20

/* The waiting writer's callback, for this thread's current handler call. */
static _Thread_local int (*watch_ready)(void *);
static _Thread_local void *watch_arg;
static _Thread_local int64_t watch_start_ms;

void pager_busy_watch(int (*ready)(void *), void *arg) {
  watch_ready = ready;
  watch_arg = arg;
}

static int wait_watching(OsVfs *vfs, int timeout, int count) {
  int64_t now = os_now_ms();
  if (count == 0 || watch_start_ms == 0) watch_start_ms = now; /* 0: never set in this thread */
  int64_t left = watch_start_ms + timeout - now;
  if (left <= 0) return 0;
  int64_t delay = count < NDELAY ? delays[count] : delays[NDELAY - 1];
  int64_t step_end = os_now_us() + delay * 1000, give_up = os_now_us() + left * 1000;
  for (;;) {
    int r = watch_ready(watch_arg);
    if (r == PAGER_WATCH_GO) return 1;
    int64_t t = os_now_us();
    if ((t >= step_end && r != PAGER_WATCH_HOLD) || t >= give_up) return 1;
    vfs->sleep(vfs, WATCH_SLICE_US);
  }
}

int pager_busy_wait(void *timeout_ms, int count) {
  int timeout = timeout_ms ? *(const int *)timeout_ms : 0;
  if (timeout <= 0 || count < 0) return 0;
  OsVfs *vfs = os_vfs_find(NULL);
  if (watch_ready && vfs && vfs->sleep) return wait_watching(vfs, timeout, count);
  int64_t before = slept_before(count);
  int64_t delay = count < NDELAY ? delays[count] : delays[NDELAY - 1];
  if (before >= timeout) return 0;
  if (before + delay > timeout) delay = timeout - before;
  if (vfs && vfs->sleep) vfs->sleep(vfs, (int)delay * 1000);
  return 1;
}
