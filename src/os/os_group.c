/*
 * os_group.c -- group commit support for the WAL: a process-wide meeting
 * point shared by the connections of this process that write one WAL file.
 *
 * Owns: the registry of OsGroup objects (one per (VFS, -wal path) in use),
 * each with
 *   - the writer token: an in-process queue in front of the WAL's
 *     WRITE lock, so that writers of this process wait on a condition
 *     variable and are handed the lock in turn instead of polling it with
 *     busy-handler sleeps;
 *   - the sync coordinator: commit sequence numbers and the "synced up to"
 *     mark; a committer that needs durability either leads one sync of the
 *     log (covering every commit numbered so far) or waits for the sync
 *     that covers it.
 *
 * The token is only an optimisation in front of the real lock (the -shm
 * WRITE slot, which other processes see): holding it never replaces taking
 * WRITE. Two groups for one file (e.g. two spellings of one path) are
 * therefore safe, only slower.
 *
 * Invariants:
 *  1. group_mu protects the registry list and every group's nref; g->mu
 *     protects everything else in g. No other lock is taken while g->mu is
 *     held except by the sync leader, which drops g->mu around os_sync.
 *  2. held == 1 iff some connection owns the token; a queued waiter is
 *     either in the queue (granted == 0) or was popped by os_group_leave
 *     with granted = 1, which transfers the token to it (held stays 1).
 *     A free token may be taken by a running thread ahead of the queue
 *     (that saves a context switch per commit when threads outnumber
 *     cores); once the head waiter has been overtaken GROUP_MAX_BYPASS
 *     times, the next leave hands the token to it directly, so every
 *     waiter gets it after a bounded number of turns.
 *  3. commit_seq is the number of commits announced (os_group_commit) since
 *     the group was created; synced <= commit_seq; a commit numbered s is
 *     durable once synced >= s. The leader samples target = commit_seq
 *     before its sync starts, so every commit counted in target had all of
 *     its frames written before that sync began.
 *  4. A failed sync sets err_upto = target (monotonic) and err_rc: every
 *     commit s with synced < s <= err_upto gets err_rc.
 *  5. Also process-wide, beside the groups: the distinct bytes read from
 *     the VFS's read-only maps since their last release (os_map_resident),
 *     held against the budget OS_MAP_WINDOW (os.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os_int.h"

/* A writer waiting for the token; lives on the waiter's stack. */
typedef struct GroupWaiter GroupWaiter;
struct GroupWaiter {
  pthread_cond_t cv;
  int granted;
  GroupWaiter *next;
};

struct OsGroup {
  OsVfs *vfs;
  char *path;
  int nref;
  OsGroup *next;
  pthread_mutex_t mu;
  /* writer token (invariant 2) */
  int held;
  int bypass;       /* times the head waiter was overtaken (invariant 2) */
  int wake_pending; /* the head was signalled and has not run since */
  GroupWaiter *head, *tail;
  uint64_t handoffs; /* leave() calls: progress seen by the waiters */
  /* sync coordinator (invariants 3, 4) */
  pthread_cond_t sync_cv;
  uint64_t commit_seq, synced, err_upto;
  int err_rc;
  int syncing;
  long nsync; /* syncs led */
};

static pthread_mutex_t group_mu = PTHREAD_MUTEX_INITIALIZER;
static OsGroup *groups;

/* How long a queued writer waits without seeing the token change hands
 * before it spends a step of its busy handler (ms). */
#define GROUP_IDLE_MS 10
/* Overtakings of the head waiter before it is handed the token. */
#define GROUP_MAX_BYPASS 64

int os_group_attach(OsVfs *vfs, const char *path, OsGroup **out) {
  *out = NULL;
  pthread_mutex_lock(&group_mu);
  OsGroup *g;
  for (g = groups; g; g = g->next)
    if (g->vfs == vfs && strcmp(g->path, path) == 0) break;
  if (!g) {
    g = shale_malloc(sizeof *g);
    char *p = util_strdup(path);
    if (!g || !p) {
      shale_free(g);
      shale_free(p);
      pthread_mutex_unlock(&group_mu);
      return SHALE_NOMEM;
    }
    memset(g, 0, sizeof *g);
    g->vfs = vfs;
    g->path = p;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->sync_cv, NULL);
    g->next = groups;
    groups = g;
  }
  g->nref++;
  pthread_mutex_unlock(&group_mu);
  *out = g;
  return SHALE_OK;
}

void os_group_detach(OsGroup *g) {
  if (!g) return;
  pthread_mutex_lock(&group_mu);
  if (--g->nref == 0) {
    for (OsGroup **pp = &groups; *pp; pp = &(*pp)->next)
      if (*pp == g) {
        *pp = g->next;
        break;
      }
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->sync_cv);
    shale_free(g->path);
    shale_free(g);
  }
  pthread_mutex_unlock(&group_mu);
}

/* ---------------------------------------------------------- the token */

static void enqueue(OsGroup *g, GroupWaiter *me) {
  me->next = NULL;
  if (g->tail)
    g->tail->next = me;
  else
    g->head = me;
  g->tail = me;
}

static void dequeue(OsGroup *g, GroupWaiter *me) {
  GroupWaiter *prev = NULL;
  for (GroupWaiter *w = g->head; w; prev = w, w = w->next) {
    if (w != me) continue;
    if (prev) {
      prev->next = w->next;
    } else {
      g->head = w->next;
      g->wake_pending = 0; /* the head leaving has run; its successor is unsignalled */
    }
    if (g->tail == w) g->tail = prev;
    return;
  }
}

static void deadline_in(struct timespec *ts, int ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_nsec += (long)ms * 1000000L;
  ts->tv_sec += ts->tv_nsec / 1000000000L;
  ts->tv_nsec %= 1000000000L;
}

int os_group_enter(OsGroup *g, int (*busy)(void *, int), void *arg) {
  pthread_mutex_lock(&g->mu);
  if (!g->held) {
    g->held = 1;
    if (g->head) g->bypass++;
    pthread_mutex_unlock(&g->mu);
    return SHALE_OK;
  }
  if (!busy) {
    pthread_mutex_unlock(&g->mu);
    return SHALE_BUSY;
  }
  GroupWaiter me;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&me.cv, &ca);
  pthread_condattr_destroy(&ca);
  me.granted = 0;
  enqueue(g, &me);
  int rc = SHALE_OK, count = 0;
  uint64_t seen = g->handoffs;
  struct timespec dl;
  deadline_in(&dl, GROUP_IDLE_MS);
  while (!me.granted) {
    int w = pthread_cond_timedwait(&me.cv, &g->mu, &dl);
    if (g->head == &me) g->wake_pending = 0;
    if (me.granted) break;
    if (!g->held) { /* released with a wake-up: take it */
      dequeue(g, &me);
      g->held = 1;
      g->bypass = 0;
      break;
    }
    if (w != ETIMEDOUT) continue;
    if (g->handoffs != seen) { /* the queue moves: keep our place */
      seen = g->handoffs;
      deadline_in(&dl, GROUP_IDLE_MS);
      continue;
    }
    /* The holder has kept the token a while (a long transaction): spend
     * one step of the busy handler, out of the queue so nobody waits on
     * us meanwhile. */
    dequeue(g, &me);
    pthread_mutex_unlock(&g->mu);
    int again = busy(arg, count++);
    pthread_mutex_lock(&g->mu);
    if (!g->held) {
      g->held = 1;
      break;
    }
    if (!again) {
      rc = SHALE_BUSY;
      break;
    }
    enqueue(g, &me);
    seen = g->handoffs;
    deadline_in(&dl, GROUP_IDLE_MS);
  }
  pthread_mutex_unlock(&g->mu);
  pthread_cond_destroy(&me.cv);
  return rc;
}

void os_group_leave(OsGroup *g) {
  pthread_mutex_lock(&g->mu);
  GroupWaiter *w = g->head;
  if (w && g->bypass >= GROUP_MAX_BYPASS) {
    g->head = w->next;
    if (!g->head) g->tail = NULL;
    w->granted = 1; /* the token passes to w: held stays 1 */
    g->bypass = 0;
    g->wake_pending = 0; /* the new head has not been signalled */
    pthread_cond_signal(&w->cv);
  } else {
    g->held = 0;
    /* w or a running thread takes it; one wake-up until w has run */
    if (w && !g->wake_pending) {
      g->wake_pending = 1;
      pthread_cond_signal(&w->cv);
    }
  }
  g->handoffs++;
  pthread_mutex_unlock(&g->mu);
}

/* ---------------------------------------------------- sync coordinator */

uint64_t os_group_commit(OsGroup *g) {
  pthread_mutex_lock(&g->mu);
  uint64_t s = ++g->commit_seq;
  pthread_mutex_unlock(&g->mu);
  return s;
}

int os_group_sync(OsGroup *g, uint64_t seq, OsFile *f, int flags) {
  int rc;
  pthread_mutex_lock(&g->mu);
  for (;;) {
    if (g->synced >= seq) {
      rc = SHALE_OK;
      break;
    }
    if (g->err_upto >= seq) {
      rc = g->err_rc;
      break;
    }
    if (g->syncing) {
      pthread_cond_wait(&g->sync_cv, &g->mu);
      continue;
    }
    /* lead: one sync for every commit announced so far */
    g->syncing = 1;
    uint64_t target = g->commit_seq;
    pthread_mutex_unlock(&g->mu);
    int r = os_sync(f, flags);
    pthread_mutex_lock(&g->mu);
    g->syncing = 0;
    g->nsync++;
    if (r == SHALE_OK) {
      if (target > g->synced) g->synced = target;
    } else {
      if (target > g->err_upto) g->err_upto = target;
      g->err_rc = r;
    }
    pthread_cond_broadcast(&g->sync_cv);
  }
  pthread_mutex_unlock(&g->mu);
  return rc;
}

void os_group_stats(OsGroup *g, uint64_t *ncommit, long *nsync) {
  pthread_mutex_lock(&g->mu);
  if (ncommit) *ncommit = g->commit_seq;
  if (nsync) *nsync = g->nsync;
  pthread_mutex_unlock(&g->mu);
}

/* ---- the mapped-read budget (invariant 5) ---- */

static _Atomic int64_t g_map_resident;

int64_t os_map_resident(int64_t delta) {
  return atomic_fetch_add_explicit(&g_map_resident, delta, memory_order_relaxed) + delta;
}
