/*
 * pager_fair.c -- sharing a log's WAL WRITE lock with the writers of other
 * processes (Shale's or SQLite's) in turns of bounded length
 * (docs/architecture.md departure 26).
 *
 * SQLite's writers wait for the lock by polling it on their busy handler's
 * sleep schedule (1, 2, 5, ... 100 ms) and hold nothing while asleep, so
 * they get it only when it is free at the instant they look; a writer that
 * retakes the lock the moment it commits, or a waiter that pounces on it the
 * moment the holder commits (pager_busy.c invariant 3), keeps them out. So
 * while writers of other processes compete for the lock (contended: WRITE
 * found busy within the last second while this process held its writer
 * token), a Shale writer takes turns:
 *
 * Invariants:
 *  1. A run is the stretch of write transactions one pager makes while the
 *     last commit before each was its own. A contended run ends with the
 *     first commit made when it has lasted at least its length (drawn at
 *     random in [FAIR_RUN_MIN_US, FAIR_RUN_MAX_US], doubled for each of the
 *     last turns nobody took while no other engine's commit was seen for
 *     FAIR_OTHER_GONE_US, up to FAIR_EMPTY_MAX times): that commit's
 *     header carries the yield flag (wal.c invariant 8).
 *  2. After a yield commit the pager leaves the lock free -- its next write
 *     transaction waits, holding the process's writer token so the
 *     process's other writers wait too -- until another writer committed or
 *     FAIR_YIELD_US passed (longer than SQLite's longest sleep, so each
 *     polling writer looks at least once).
 *  3. A Shale writer waiting for the lock (fair_watch, pager_busy.c's watch
 *     callback) does not retry while the last commit is a yield commit
 *     younger than FAIR_YIELD_US (it is the other engines' turn), retries
 *     at once when that time ran out with nobody committing, and while
 *     another Shale writer is in its run retries only on the busy handler's
 *     schedule. While another engine's writers commit, it pounces on the
 *     lock at a commit only once their run lasted a random length as in 1:
 *     they would not give the lock up by themselves.
 *  4. A pager keeps the balance of the turns it took against the runs of
 *     other engines it ended (fair_balance_us: ours minus theirs, older
 *     turns fading by 1/8 a turn); half of it shortens its next turn and
 *     lengthens the wait before it ends theirs, or the reverse, so the time
 *     each side holds the lock evens out whatever the machine's load or
 *     the commits it takes to catch a gap in another engine's run.
 *  5. Uncontended (no other process's writer seen for a second) none of this
 *     applies: no yield flag, no pause, and a lone process keeps its speed.
 */
#include "pager_int.h"

#define FAIR_RUN_MIN_US 10000
#define FAIR_RUN_MAX_US 50000
#define FAIR_YIELD_US 120000
#define FAIR_EMPTY_MAX 5
#define FAIR_PAUSE_SLICE_US 50
#define FAIR_OTHER_GONE_US 2000000

int pager_fair_contended(Pager *p) {
  return p->wal_foreign_ms && os_now_ms() - p->wal_foreign_ms < 1000;
}

/* A turn's length (invariant 1): random, so that the moments the lock is
 * left free do not keep falling between the same polls of the others. */
static int64_t turn_us(int empty) {
  uint32_t r;
  util_random(&r, sizeof r);
  int64_t us = FAIR_RUN_MIN_US + (int64_t)(r % (FAIR_RUN_MAX_US - FAIR_RUN_MIN_US));
  return us << (empty < FAIR_EMPTY_MAX ? empty : FAIR_EMPTY_MAX);
}

void pager_fair_pause(Pager *p) {
  if (!p->fair_yield_us) return;
  OsVfs *vfs = os_vfs_find(NULL);
  for (;;) {
    uint32_t change;
    int kind = wal_last_commit(p->wal, &change);
    if (change != p->fair_own_change) { /* somebody took the turn */
      if (kind == WAL_BY_OTHER) p->fair_other_seen_us = os_now_us();
      p->fair_empty = 0;
      break;
    }
    int64_t now = os_now_us();
    if (now - p->fair_yield_us >= FAIR_YIELD_US || !vfs || !vfs->sleep) {
      /* nobody came: longer turns, unless another engine's writers
       * committed lately (they are there, only slow to be scheduled) */
      if (p->fair_empty < FAIR_EMPTY_MAX && now - p->fair_other_seen_us > FAIR_OTHER_GONE_US)
        p->fair_empty++;
      break;
    }
    vfs->sleep(vfs, FAIR_PAUSE_SLICE_US);
  }
  p->fair_yield_us = 0;
}

/* The turns' balance (invariant 4): a turn of length d on one side. */
static void balance_add(Pager *p, int64_t d) {
  p->fair_balance_us = p->fair_balance_us * 7 / 8 + d;
}

/* d clamped to [FAIR_RUN_MIN_US / 4, FAIR_RUN_MAX_US * 2]. */
static int64_t turn_clamp(int64_t d) {
  if (d < FAIR_RUN_MIN_US / 4) return FAIR_RUN_MIN_US / 4;
  return d > FAIR_RUN_MAX_US * 2 ? FAIR_RUN_MAX_US * 2 : d;
}

void pager_fair_acquired(Pager *p) {
  uint32_t change;
  wal_last_commit(p->wal, &change);
  if (p->fair_run_us && change == p->fair_own_change) return; /* the run goes on */
  int64_t now = os_now_us();
  if (p->fair_seen_kind == WAL_BY_OTHER && p->fair_other_us && change == p->fair_seen_change)
    balance_add(p, -(now - p->fair_other_us)); /* we ended another engine's run */
  p->fair_other_us = 0;
  p->fair_run_us = now;
  p->fair_run_len = 0; /* drawn when contended, at commit */
}

int pager_fair_before_commit(Pager *p) {
  int yield = 0;
  if (pager_fair_contended(p)) {
    if (!p->fair_run_len)
      p->fair_run_len = turn_clamp(turn_us(p->fair_empty) - p->fair_balance_us / 2);
    yield = os_now_us() - p->fair_run_us >= p->fair_run_len;
  }
  wal_set_yield(p->wal, yield);
  return yield;
}

void pager_fair_committed(Pager *p, int yield) {
  wal_last_commit(p->wal, &p->fair_own_change);
  p->fair_seen_change = p->fair_own_change; /* a run of others starts after it */
  p->fair_seen_kind = WAL_BY_SHALE;
  if (!yield) return;
  p->fair_yield_us = os_now_us();
  balance_add(p, p->fair_yield_us - p->fair_run_us);
  p->fair_run_us = 0;
}

static int fair_watch(void *arg) {
  Pager *p = arg;
  uint32_t change;
  int kind = wal_last_commit(p->wal, &change);
  int64_t now = os_now_us();
  int moved = change != p->fair_seen_change;
  if (moved) {
    if (kind == WAL_BY_OTHER) p->fair_other_seen_us = now;
    if (kind == WAL_BY_OTHER && p->fair_seen_kind != WAL_BY_OTHER) {
      p->fair_other_us = now; /* another engine's run begins */
      p->fair_other_len = turn_clamp(turn_us(0) + p->fair_balance_us / 2);
    }
    p->fair_hold_us = kind == WAL_BY_SHALE_YIELD ? now + FAIR_YIELD_US : 0;
    p->fair_seen_change = change;
    p->fair_seen_kind = kind;
  }
  if (p->fair_hold_us) {
    if (now < p->fair_hold_us) return PAGER_WATCH_HOLD;
    p->fair_hold_us = 0;
    return PAGER_WATCH_GO; /* nobody took the turn left free */
  }
  if (moved && kind == WAL_BY_OTHER && now - p->fair_other_us >= p->fair_other_len)
    return PAGER_WATCH_GO;
  return PAGER_WATCH_WAIT;
}

void pager_busy_watch_log(Pager *p, int on) {
  if (on && p && p->wal)
    pager_busy_watch(fair_watch, p);
  else
    pager_busy_watch(NULL, NULL);
}
