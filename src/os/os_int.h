/*
 * os_int.h -- private declarations shared by the files of the os layer.
 *
 * Owns: the in-process lock arbiter (os_lock.c) that the unix and memdb VFSes
 * both use, and the constructors of the built-in VFS objects.
 *
 * Invariants:
 *  1. An OsLockShared describes what one process holds on one file (inode or
 *     memdb node): `level` is the strongest level any connection holds and
 *     `nshared` the number of connections at SHARED or above. At most one
 *     connection is above SHARED at a time.
 *  2. The arbiter issues a raw lock call only when the process-wide state has
 *     to change; a NULL raw function means "no other processes" (memdb).
 *  3. Callers hold the mutex that protects the OsLockShared for the whole
 *     call; the arbiter itself takes no locks.
 */
#ifndef SHALE_OS_INT_H
#define SHALE_OS_INT_H

#include <stdint.h>

#include "os.h"

/* Raw byte-range operations for the arbiter. */
#define OSLK_UN 0
#define OSLK_RD 1
#define OSLK_WR 2

/* Lock or unlock [off, off+len) (len 0 = to end of file) without blocking.
 * Returns SHALE_OK, SHALE_BUSY when another process holds a conflicting
 * lock, SHALE_IOERR_LOCK / SHALE_IOERR_UNLOCK on other failures. */
typedef int (*OsRawLock)(void *ctx, int type, int64_t off, int64_t len);

typedef struct OsLockShared {
  int level;   /* strongest lock held by a connection of this process */
  int nshared; /* connections of this process holding SHARED or more */
} OsLockShared;

/* Move *mine (the caller's connection level) up to `want` (SHARED, RESERVED
 * or EXCLUSIVE) following SQLite's protocol. SHALE_BUSY if it cannot be had
 * now; an EXCLUSIVE attempt that got PENDING but not the shared range leaves
 * *mine == OS_LOCK_PENDING. */
int os_lock_up(OsLockShared *s, int *mine, int want, OsRawLock raw, void *ctx);
/* Move *mine down to `want` (SHARED or NONE). */
int os_lock_down(OsLockShared *s, int *mine, int want, OsRawLock raw, void *ctx);

/* Shared-memory lock slots of one process on one -shm (or memdb node).
 * Each slot's word holds the number of the process's connections holding
 * it shared (OS_SLOT_COUNT bits) and two flags: OS_SLOT_EXCL, a connection
 * holds it exclusive (or is taking it, under the VFS mutex); OS_SLOT_LINGER,
 * nobody holds it but the process keeps its OS read lock. The words are
 * atomic so that os_shm_lock_fast can take and drop a shared slot that the
 * process already holds without the VFS mutex (invariant 5 of os_lock.c). */
#define OS_SLOT_COUNT 0xffffu
#define OS_SLOT_EXCL 0x10000u
#define OS_SLOT_LINGER 0x20000u
typedef struct OsShmLocks {
  _Atomic uint32_t slot[OS_SHM_NLOCK];
  /* Lingering (unix VFS only, linger_ok = 1): when the process's last
   * shared holder of a slot lets go, the OS read lock is kept (OS_SLOT_LINGER,
   * time in linger_at, CLOCK_MONOTONIC ns) so that the next shared
   * request within OS_SHM_LINGER_NS costs no system call; the VFS's keeper
   * thread drops it after that (os_shm_linger_expire). */
  _Atomic uint8_t linger_ok;
  _Atomic int64_t linger_at[OS_SHM_NLOCK];
} OsShmLocks;

/* The slots of s that linger (bit i for slot i). */
unsigned os_shm_lingering(OsShmLocks *s);
/* Forget every lingering lock without a raw call (a forked child). */
void os_shm_linger_forget(OsShmLocks *s);

/* The first slot whose exclusive hold is let go by a downgrade to a
 * lingering read lock (the read marks, SQLite's READ(0..4) = slots 3..7):
 * a reader that set a mark under EXCLUSIVE takes it shared next, and then
 * finds it held, so one fcntl instead of an unlock and a lock. */
#define OS_SHM_LINGER_FIRST 3

/* How long an unused shared -shm lock is kept (about a millisecond, as the
 * Go driver write-up describes). */
#define OS_SHM_LINGER_NS 1000000

/* Drop the lingering locks of s older than now - OS_SHM_LINGER_NS (all of
 * them with now < 0). Returns the number still lingering. */
int os_shm_linger_expire(OsShmLocks *s, int64_t now, OsRawLock raw, void *ctx);
/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
int64_t os_mono_ns(void);

/* Apply an OS_SHM_* request for slots [ofst, ofst+n) on behalf of the
 * connection whose masks are *my_sh / *my_ex. raw offsets are slot numbers
 * (the unix VFS adds 120). */
int os_shm_lock_apply(OsShmLocks *s, uint8_t *my_sh, uint8_t *my_ex, int ofst, int n, int flags,
                      OsRawLock raw, void *ctx);
/* Without the VFS mutex: take one slot shared that the process already
 * holds (or keeps lingering), or give one back that another connection of
 * the process still holds, or (linger_ok) let the last hold of one linger.
 * Returns 0 if the request needs os_shm_lock_apply under the mutex, 1 if it
 * was done, OS_SHM_FAST_LINGER if it was done and a lock now lingers (the
 * caller makes sure the keeper sees it), SHALE_BUSY (5) for an exclusive
 * request on a slot another connection of the process holds. */
#define OS_SHM_FAST_LINGER 2
int os_shm_lock_fast(OsShmLocks *s, uint8_t *my_sh, uint8_t *my_ex, int ofst, int n, int flags);

/* The built-in VFS objects (static storage). */
OsVfs *os_unix_vfs(void);
OsVfs *os_memdb_vfs(void);

#endif /* SHALE_OS_INT_H */
