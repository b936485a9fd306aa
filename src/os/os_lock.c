/*
 * os_lock.c -- the in-process lock arbiter shared by the unix and memdb VFSes.
 *
 * POSIX record locks belong to a process, so two connections of one process
 * never conflict at the OS level. This file decides, from the per-file
 * process-wide state (OsLockShared / OsShmLocks) and the caller connection's
 * own level, whether a request is granted, refused with SHALE_BUSY, or needs
 * a raw lock call; the raw calls are SQLite's (docs/format.md §W3.2):
 *
 *   NONE -> SHARED       RD(PENDING,1), RD(SHARED,510), UN(PENDING,1)
 *   SHARED -> RESERVED   WR(RESERVED,1)
 *   -> EXCLUSIVE         WR(PENDING,1) (state PENDING), WR(SHARED,510)
 *   -> SHARED            RD(SHARED,510) if it was write-locked, UN(PENDING,2)
 *   -> NONE              as -> SHARED, then UN(0,0) when the last
 *                        connection of the process lets go
 *
 * Invariants:
 *  1. s->level >= every connection's level; at most one connection is above
 *     SHARED; s->nshared counts connections at SHARED or more.
 *  2. A raw call is made only when the process-wide state changes.
 *  3. On failure the state is left exactly as the raw locks are.
 *  4. shm_busy_here tells the thread's last os_shm_lock_apply call that
 *     returned SHALE_BUSY apart: 1 when another connection of the process
 *     held the slot (no raw call was made), 0 when the raw call was
 *     refused, i.e. another process holds it.
 */
#include <assert.h>
#include <stdatomic.h>
#include <time.h>

#include "os_int.h"

static int raw_call(OsRawLock raw, void *ctx, int type, int64_t off, int64_t len) {
  return raw ? raw(ctx, type, off, len) : SHALE_OK;
}

int os_lock_up(OsLockShared *s, int *mine, int want, OsRawLock raw, void *ctx) {
  int rc;
  assert(want == OS_LOCK_SHARED || want == OS_LOCK_RESERVED || want == OS_LOCK_EXCLUSIVE);
  if (*mine >= want) return SHALE_OK;
  assert(want == OS_LOCK_SHARED || *mine >= OS_LOCK_SHARED);
  assert(want != OS_LOCK_RESERVED || *mine == OS_LOCK_SHARED);
  assert(s->level >= *mine);

  /* Another connection of this process is above us: it is writing, or about
   * to; new readers wait for PENDING to go, and only one may go above SHARED. */
  if (s->level != *mine && (s->level >= OS_LOCK_PENDING || want > OS_LOCK_SHARED))
    return SHALE_BUSY;

  if (want == OS_LOCK_SHARED) {
    if (s->level == OS_LOCK_SHARED || s->level == OS_LOCK_RESERVED) {
      /* the process already holds the OS read lock: just count */
      s->nshared++;
      *mine = OS_LOCK_SHARED;
      return SHALE_OK;
    }
    assert(s->level == OS_LOCK_NONE && s->nshared == 0);
    rc = raw_call(raw, ctx, OSLK_RD, OS_PENDING_BYTE, 1);
    if (rc != SHALE_OK) return rc;
    rc = raw_call(raw, ctx, OSLK_RD, OS_SHARED_FIRST, OS_SHARED_SIZE);
    int rc2 = raw_call(raw, ctx, OSLK_UN, OS_PENDING_BYTE, 1);
    if (rc == SHALE_OK && rc2 != SHALE_OK) {
      raw_call(raw, ctx, OSLK_UN, 0, 0);
      rc = rc2;
    }
    if (rc != SHALE_OK) return rc;
    s->level = OS_LOCK_SHARED;
    s->nshared = 1;
    *mine = OS_LOCK_SHARED;
    return SHALE_OK;
  }

  if (want == OS_LOCK_RESERVED) {
    rc = raw_call(raw, ctx, OSLK_WR, OS_RESERVED_BYTE, 1);
    if (rc != SHALE_OK) return rc;
    s->level = *mine = OS_LOCK_RESERVED;
    return SHALE_OK;
  }

  /* EXCLUSIVE: PENDING first, so no new reader gets in while we wait. */
  if (*mine < OS_LOCK_PENDING) {
    rc = raw_call(raw, ctx, OSLK_WR, OS_PENDING_BYTE, 1);
    if (rc != SHALE_OK) return rc;
    s->level = *mine = OS_LOCK_PENDING;
  }
  if (s->nshared > 1) return SHALE_BUSY; /* readers of our own process remain */
  rc = raw_call(raw, ctx, OSLK_WR, OS_SHARED_FIRST, OS_SHARED_SIZE);
  if (rc != SHALE_OK) return rc;
  s->level = *mine = OS_LOCK_EXCLUSIVE;
  return SHALE_OK;
}

int os_lock_down(OsLockShared *s, int *mine, int want, OsRawLock raw, void *ctx) {
  int rc = SHALE_OK;
  assert(want == OS_LOCK_SHARED || want == OS_LOCK_NONE);
  if (*mine <= want) return SHALE_OK;
  assert(s->nshared > 0);
  if (*mine > OS_LOCK_SHARED) {
    assert(s->level == *mine);
    /* The shared range is write-locked only at EXCLUSIVE; keep it readable
     * unless we are the process's last holder and drop everything anyway. */
    if (*mine == OS_LOCK_EXCLUSIVE && !(want == OS_LOCK_NONE && s->nshared == 1)) {
      rc = raw_call(raw, ctx, OSLK_RD, OS_SHARED_FIRST, OS_SHARED_SIZE);
      if (rc != SHALE_OK) return SHALE_IOERR_RDLOCK;
    }
    rc = raw_call(raw, ctx, OSLK_UN, OS_PENDING_BYTE, 2);
    if (rc != SHALE_OK) return SHALE_IOERR_UNLOCK;
    s->level = *mine = OS_LOCK_SHARED;
  }
  if (want == OS_LOCK_NONE) {
    s->nshared--;
    *mine = OS_LOCK_NONE;
    if (s->nshared == 0) {
      s->level = OS_LOCK_NONE;
      rc = raw_call(raw, ctx, OSLK_UN, 0, 0);
      if (rc != SHALE_OK) rc = SHALE_IOERR_UNLOCK;
    }
  }
  return rc;
}

static _Thread_local int shm_busy_here; /* invariant 4 */

int os_shm_busy_in_process(void) { return shm_busy_here; }

/* A refusal by another connection of this process (invariant 4). */
static int busy_here(void) {
  shm_busy_here = 1;
  return SHALE_BUSY;
}

static uint32_t slot_count(uint32_t v) { return v & OS_SLOT_COUNT; }

/* Whether another connection of the process holds one of the slots
 * [ofst, ofst+n) (exclusive, or shared beyond the caller's own hold). */
static int others_hold(OsShmLocks *s, uint8_t my_sh, uint8_t my_ex, int ofst, int n) {
  for (int i = ofst; i < ofst + n; i++) {
    uint8_t b = (uint8_t)(1u << i);
    uint32_t v = atomic_load(&s->slot[i]);
    if (((v & OS_SLOT_EXCL) && !(my_ex & b)) || slot_count(v) > ((my_sh & b) ? 1u : 0u)) return 1;
  }
  return 0;
}

/* Drop the connection's shared hold of slot i (a caller of
 * os_shm_lock_apply, under the VFS mutex). */
static int shared_release(OsShmLocks *s, int i, OsRawLock raw, void *ctx) {
  _Atomic uint32_t *w = &s->slot[i];
  uint32_t v = atomic_load(w), nv;
  int last;
  do {
    assert(slot_count(v) > 0);
    last = slot_count(v) == 1 && !atomic_load(&s->linger_ok);
    nv = v - 1;
    if (slot_count(v) == 1 && !last) {
      /* keep the OS lock a moment: the next reader takes it for free */
      atomic_store(&s->linger_at[i], os_mono_ns());
      nv |= OS_SLOT_LINGER;
    }
  } while (!atomic_compare_exchange_weak(w, &v, nv));
  /* a slot at 0 without LINGER changes only under the mutex: no fast taker */
  if (last && raw_call(raw, ctx, OSLK_UN, i, 1) != SHALE_OK) {
    atomic_fetch_add(w, 1); /* still ours, as the OS lock is */
    return SHALE_IOERR_SHMLOCK;
  }
  return SHALE_OK;
}

/* Take slot i shared for the connection (under the VFS mutex). */
static int shared_take(OsShmLocks *s, int i, OsRawLock raw, void *ctx) {
  _Atomic uint32_t *w = &s->slot[i];
  uint32_t v = atomic_load(w);
  for (;;) {
    if (v & OS_SLOT_EXCL) return busy_here();
    if (v == 0) break; /* the process holds nothing: a raw call */
    /* the process holds it (or keeps it lingering): count ourselves in */
    if (atomic_compare_exchange_weak(w, &v, (slot_count(v) + 1))) return SHALE_OK;
  }
  int rc = raw_call(raw, ctx, OSLK_RD, i, 1);
  if (rc != SHALE_OK) return rc == SHALE_BUSY ? rc : SHALE_IOERR_SHMLOCK;
  atomic_fetch_add(w, 1); /* 0 changes only under the mutex */
  return SHALE_OK;
}

/* Mark the slots of `claim` exclusive before their raw call, each only if
 * no other connection of the process holds it (mine: the caller's shared
 * holds). A fast taker that got in first makes it busy. */
static int excl_claim(OsShmLocks *s, uint8_t claim, uint8_t mine) {
  for (int i = 0; i < OS_SHM_NLOCK; i++) {
    uint8_t b = (uint8_t)(1u << i);
    if (!(claim & b)) continue;
    uint32_t v = atomic_load(&s->slot[i]);
    uint32_t own = (mine & b) ? 1 : 0;
    for (;;) {
      if ((v & OS_SLOT_EXCL) || slot_count(v) > own) {
        for (int j = 0; j < i; j++)
          if (claim & (1u << j)) atomic_fetch_and(&s->slot[j], ~OS_SLOT_EXCL);
        return busy_here();
      }
      if (atomic_compare_exchange_weak(&s->slot[i], &v, v | OS_SLOT_EXCL)) break;
    }
  }
  return SHALE_OK;
}

int os_shm_lock_apply(OsShmLocks *s, uint8_t *my_sh, uint8_t *my_ex, int ofst, int n, int flags,
                      OsRawLock raw, void *ctx) {
  int rc;
  shm_busy_here = 0;
  if (ofst < 0 || n < 1 || ofst + n > OS_SHM_NLOCK) return SHALE_MISUSE;
  uint8_t mask = (uint8_t)(((1u << n) - 1) << ofst);

  if (flags & OS_SHM_UNLOCK) {
    /* exclusive slots: one raw call for each slot we hold */
    if (*my_ex & mask) {
      for (int i = ofst; i < ofst + n; i++) {
        if (!(*my_ex & (1u << i))) continue;
        /* a read mark just set under EXCLUSIVE is read next (wal.c takes
         * it shared at once): downgrade, and let the read lock linger */
        int keep = atomic_load(&s->linger_ok) && i >= OS_SHM_LINGER_FIRST &&
                   slot_count(atomic_load(&s->slot[i])) == 0;
        rc = raw_call(raw, ctx, keep ? OSLK_RD : OSLK_UN, i, 1);
        if (rc != SHALE_OK) return SHALE_IOERR_SHMLOCK;
        if (keep) {
          atomic_store(&s->linger_at[i], os_mono_ns());
          atomic_fetch_or(&s->slot[i], OS_SLOT_LINGER);
        }
        atomic_fetch_and(&s->slot[i], ~OS_SLOT_EXCL);
        *my_ex &= (uint8_t) ~(1u << i);
      }
    }
    for (int i = ofst; i < ofst + n; i++) {
      if (!(*my_sh & (1u << i))) continue;
      rc = shared_release(s, i, raw, ctx);
      if (rc != SHALE_OK) return rc;
      *my_sh &= (uint8_t) ~(1u << i);
    }
    return SHALE_OK;
  }

  if (flags & OS_SHM_SHARED) {
    for (int i = ofst; i < ofst + n; i++) {
      uint8_t b = (uint8_t)(1u << i);
      if (*my_sh & b) continue;
      rc = shared_take(s, i, raw, ctx);
      if (rc != SHALE_OK) return rc;
      *my_sh |= b;
    }
    return SHALE_OK;
  }

  /* exclusive: nobody else in this process may hold any of the slots */
  if (others_hold(s, *my_sh, *my_ex, ofst, n)) return busy_here();
  if ((*my_ex & mask) == mask) return SHALE_OK;
  uint8_t claim = (uint8_t)(mask & ~*my_ex);
  rc = excl_claim(s, claim, *my_sh);
  if (rc != SHALE_OK) return rc;
  /* A lingering read lock of ours upgrades in place (POSIX locks of one
   * process never conflict); once written over it is no longer lingering. */
  rc = raw_call(raw, ctx, OSLK_WR, ofst, n);
  for (int i = ofst; i < ofst + n; i++) {
    if (!(claim & (1u << i))) continue;
    atomic_fetch_and(&s->slot[i], rc == SHALE_OK ? ~OS_SLOT_LINGER : ~OS_SLOT_EXCL);
  }
  if (rc != SHALE_OK) return rc == SHALE_BUSY ? rc : SHALE_IOERR_SHMLOCK;
  *my_ex |= mask;
  return SHALE_OK;
}

int os_shm_lock_fast(OsShmLocks *s, uint8_t *my_sh, uint8_t *my_ex, int ofst, int n, int flags) {
  if ((flags & OS_SHM_EXCLUSIVE) && !(flags & OS_SHM_UNLOCK) && ofst >= 0 && n >= 1 &&
      ofst + n <= OS_SHM_NLOCK) {
    /* held by another connection of the process: BUSY as the slow path
     * would say (readers after each commit try every read mark) */
    return others_hold(s, *my_sh, *my_ex, ofst, n) ? busy_here() : 0;
  }
  if (n != 1 || ofst < 0 || ofst >= OS_SHM_NLOCK || !(flags & OS_SHM_SHARED)) return 0;
  uint8_t b = (uint8_t)(1u << ofst);
  _Atomic uint32_t *w = &s->slot[ofst];
  uint32_t v = atomic_load(w);
  if (flags & OS_SHM_UNLOCK) {
    if (!(*my_sh & b) || (*my_ex & b)) return 0;
    for (;;) {
      assert(slot_count(v) > 0);
      if (slot_count(v) > 1) {
        if (!atomic_compare_exchange_weak(w, &v, v - 1)) continue;
        break;
      }
      if (!atomic_load(&s->linger_ok)) return 0; /* the raw unlock: slow path */
      atomic_store(&s->linger_at[ofst], os_mono_ns());
      if (!atomic_compare_exchange_weak(w, &v, (v - 1) | OS_SLOT_LINGER)) continue;
      *my_sh &= (uint8_t)~b;
      shm_busy_here = 0;
      return OS_SHM_FAST_LINGER;
    }
    *my_sh &= (uint8_t)~b;
    shm_busy_here = 0;
    return 1;
  }
  if (*my_sh & b) {
    shm_busy_here = 0;
    return 1;
  }
  for (;;) {
    /* exclusive (or being taken), or not held by the process: slow path */
    if ((v & OS_SLOT_EXCL) || v == 0) return 0;
    if (atomic_compare_exchange_weak(w, &v, slot_count(v) + 1)) break;
  }
  *my_sh |= b;
  shm_busy_here = 0;
  return 1;
}

unsigned os_shm_lingering(OsShmLocks *s) {
  unsigned m = 0;
  for (int i = 0; i < OS_SHM_NLOCK; i++)
    if (atomic_load(&s->slot[i]) & OS_SLOT_LINGER) m |= 1u << i;
  return m;
}

void os_shm_linger_forget(OsShmLocks *s) {
  for (int i = 0; i < OS_SHM_NLOCK; i++) atomic_fetch_and(&s->slot[i], ~OS_SLOT_LINGER);
}

int os_shm_linger_expire(OsShmLocks *s, int64_t now, OsRawLock raw, void *ctx) {
  int left = 0;
  for (int i = 0; i < OS_SHM_NLOCK; i++) {
    uint32_t v = atomic_load(&s->slot[i]);
    if (!(v & OS_SLOT_LINGER)) continue;
    if (now >= 0 && now - atomic_load(&s->linger_at[i]) < OS_SHM_LINGER_NS) {
      left++;
      continue;
    }
    /* nobody holds it (a fast taker would have cleared the flag): release */
    if (v == OS_SLOT_LINGER && atomic_compare_exchange_strong(&s->slot[i], &v, 0u))
      raw_call(raw, ctx, OSLK_UN, i, 1);
    else if (v & OS_SLOT_LINGER)
      atomic_fetch_and(&s->slot[i], ~OS_SLOT_LINGER);
  }
  return left;
}

int64_t os_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
