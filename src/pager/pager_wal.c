/*
 * pager_wal.c -- the pager's WAL-mode extras that sit beside the commit
 * path of pager.c: spilling a write transaction's pages into the log as
 * uncommitted frames when the cache is full, and locking_mode=EXCLUSIVE.
 *
 * Owns: pager_wal_spill (called by the cache when a WAL write transaction
 * has nothing clean left to evict), pager_set_locking_mode /
 * pager_locking_mode, the lock bookkeeping of exclusive mode, and
 * pager_commit_end_read (a commit and the end of its read transaction, with
 * the writer token kept over the auto-checkpoint it makes due).
 *
 * Spill (as SQLite's pagerStress in WAL mode): unreferenced dirty pages are
 * appended to the -wal as non-commit frames (wal_append with commit size 0)
 * and marked clean; the cache may then evict them. Under cache pressure a
 * spill writes only the dirty page used longest ago (the head of the dirty
 * list: a dirty page goes to its tail when released), as SQLite writes the
 * one page it recycles: writing every dirty page made a transaction that
 * keeps changing the same pages (an R-Tree, a random-key index) write each
 * of them again and again, 2.7x SQLite's page writes in rtree_insert.
 * They stay invisible to
 * every other connection (the shared wal-index header is published only at
 * a commit, wal.h invariant 2); this connection finds them through its own
 * running-ahead header (wal.c invariant 1), so an evicted spilled page is
 * read back from its frame. Commit appends what is still dirty and ends
 * with the commit frame; rollback (wal_undo) forgets the frames, and since
 * clean cached pages may then hold spilled content, pager_rollback drops
 * the whole cache (pager_wal_after_rollback).
 *
 * Exclusive locking mode (PRAGMA locking_mode=EXCLUSIVE, as SQLite):
 *  - rollback journal: locks taken are kept at the end of transactions
 *    (SHARED after a read, EXCLUSIVE after a write), so other connections
 *    can't read after our first write, nor write after our first read;
 *  - WAL, when the mode is set before the log is opened: EXCLUSIVE on the
 *    database file first, then the wal-index lives in heap memory (no -shm
 *    file; wal_open_heap); such a connection stays exclusive (switching back
 *    to NORMAL is refused, as SQLite);
 *  - WAL with the log already open on -shm: EXCLUSIVE on the database file
 *    at the next write transaction, kept from then on;
 *  - NORMAL again: the locks drop to what the journal mode keeps between
 *    transactions at the end of the next transaction.
 *
 * Snapshots (sqlite3_snapshot_*): thin calls into wal.c; a snapshot to
 * open is handed to the next read transaction through snap_next, which
 * wal_snapshot (pager.c) passes to wal_begin_read_at.
 *
 * Invariants:
 *  1. wal_spilled is set only while a WAL write transaction is open and
 *     frames past the last commit were appended by it; it is cleared at
 *     pager_begin_write.
 *  2. excl_mode != 0 means no lock is released at the end of a
 *     transaction; wal_heap != 0 implies excl_mode and EXCLUSIVE held on
 *     the database file while the Wal is open.
 */
#include <string.h>

#include "pager_int.h"

#define SPILL_BATCH 32

int pager_wal_spill(Pager *p, int max) {
  WalPage wp[SPILL_BATCH];
  PgPage *done[SPILL_BATCH];
  uint32_t lockpg = pager_lock_page(p);
  int sync = p->sync_level == PAGER_SYNC_OFF      ? WAL_SYNC_OFF
             : p->sync_level == PAGER_SYNC_NORMAL ? WAL_SYNC_NORMAL
                                                  : WAL_SYNC_FULL;
  int rc = SHALE_OK, any = 0;
  p->in_spill = 1;
  while (max > 0) {
    int n = 0, nd = 0;
    for (PgPage *pg = p->dirty_head; pg && n < SPILL_BATCH && nd < max; pg = pg->dnext) {
      if (pg->nref != 0) continue;
      done[nd++] = pg;
      if (pg->pgno > p->db_size || pg->pgno == lockpg) continue;
      wp[n].pgno = pg->pgno;
      wp[n].data = pg->v.data;
      n++;
    }
    if (nd == 0) break;
    if (n > 0) {
      rc = wal_append(p->wal, wp, n, 0, sync);
      if (rc != SHALE_OK) break;
      p->stats.writes += n;
      any = 1;
      p->wal_spilled = 1;
    }
    for (int i = 0; i < nd; i++) pager_cache_make_clean(p, done[i]);
    max -= nd;
  }
  p->in_spill = 0;
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  if (any) p->stats.spills++;
  return SHALE_OK;
}

int pager_wal_after_rollback(Pager *p) {
  if (!p->wal_spilled) return SHALE_OK;
  p->wal_spilled = 0;
  return pager_cache_invalidate(p, 0);
}

int pager_commit_end_read(Pager *p) {
  Wal *w = p->txn == PAGER_TXN_WRITE ? p->wal : NULL;
  if (w) wal_hold_token(w, PAGER_WAL_AUTOCHECKPOINT);
  int rc = pager_commit(p);
  if (rc == SHALE_OK) pager_end_read(p);
  if (w) wal_hold_token(w, 0);
  return rc;
}

/* ---- locking_mode ---- */

int pager_set_locking_mode(Pager *p, int mode) {
  if (p->memory) return PAGER_LOCKING_EXCLUSIVE; /* private: always exclusive, as SQLite */
  if (mode == PAGER_LOCKING_EXCLUSIVE)
    p->excl_mode = 1;
  else if (mode == PAGER_LOCKING_NORMAL && !p->wal_heap)
    p->excl_mode = 0;
  return p->excl_mode ? PAGER_LOCKING_EXCLUSIVE : PAGER_LOCKING_NORMAL;
}

int pager_locking_mode(Pager *p) {
  return (p->memory || p->excl_mode) ? PAGER_LOCKING_EXCLUSIVE : PAGER_LOCKING_NORMAL;
}

int pager_wal_exclusive_lock(Pager *p) {
  if (!p->excl_mode || p->lock >= OS_LOCK_EXCLUSIVE) return SHALE_OK;
  return pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
}

/* ---- snapshots ---- */

_Static_assert(PAGER_SNAPSHOT_SIZE == WAL_SNAPSHOT_SIZE, "one snapshot format");

int pager_snapshot_get(Pager *p, uint8_t out[PAGER_SNAPSHOT_SIZE]) {
  if (!p->wal || p->txn != PAGER_TXN_READ) return SHALE_ERROR;
  return wal_snapshot_get(p->wal, out);
}

int pager_snapshot_next(Pager *p, const uint8_t *snap) {
  if (snap && !p->wal) return SHALE_ERROR;
  p->snap_next = snap;
  return SHALE_OK;
}

int pager_snapshot_check(Pager *p, const uint8_t snap[PAGER_SNAPSHOT_SIZE]) {
  if (!p->wal || p->txn == PAGER_TXN_NONE) return SHALE_ERROR;
  return wal_snapshot_check(p->wal, snap);
}

void pager_snapshot_unlock(Pager *p) {
  if (p->wal) wal_snapshot_unlock(p->wal);
}

int pager_snapshot_recover(Pager *p) {
  if (!p->wal || p->txn == PAGER_TXN_NONE) return SHALE_ERROR;
  return wal_snapshot_recover(p->wal);
}

int pager_snapshot_cmp(const uint8_t a[PAGER_SNAPSHOT_SIZE], const uint8_t b[PAGER_SNAPSHOT_SIZE]) {
  return wal_snapshot_cmp(a, b);
}
