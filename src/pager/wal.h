/*
 * wal.h -- the write-ahead log (WAL) module of the pager layer: the "-wal"
 * file and the "-shm" wal-index, in SQLite's formats and lock protocol
 * (docs/format.md Part II, cited as §Wn below).
 *
 * Self-contained: it owns the -wal file it opens and the -shm mapping
 * reached through the database file's shm_* methods. Its one user is the
 * pager (pager_wal.c), which keeps SHARED on the database file for as long
 * as a Wal is open (§W3.3), serves pages found by wal_find_frame from the log
 * and the others from the database file, and hands committed (and spilled)
 * pages to wal_append.
 *
 * Usage, reading:  wal_begin_read -> wal_db_size / wal_find_frame /
 *                  wal_read_frame ... -> wal_end_read
 *        writing:  wal_begin_read -> wal_begin_write -> wal_append ...
 *                  (last call with commit_db_size != 0) -> wal_end_write
 *                  -> wal_end_read
 *        checkpoint: outside any transaction of this Wal.
 *
 * Invariants:
 *  1. A Wal holds at most one read slot (READ(i), §W2.5) and only between
 *     wal_begin_read and wal_end_read; WRITE (§W3.4) only between
 *     wal_begin_write and wal_end_write.
 *  2. Frames above the last commit frame are never visible to another
 *     connection: the shared header (§W2.3) is published only at a commit.
 *  3. Result codes are SQLite's: SHALE_BUSY, SHALE_BUSY_RECOVERY,
 *     SHALE_BUSY_SNAPSHOT, SHALE_PROTOCOL, SHALE_CANTOPEN, SHALE_CORRUPT.
 */
#ifndef SHALE_WAL_H
#define SHALE_WAL_H

#include <stdint.h>

#include "../os/os.h"

typedef struct Wal Wal;

/* One page handed to wal_append. */
typedef struct WalPage {
  uint32_t pgno;
  const uint8_t *data; /* page_size bytes */
} WalPage;

/* Checkpoint modes (SQLite's numbers). */
#define WAL_CKPT_PASSIVE 0
#define WAL_CKPT_FULL 1
#define WAL_CKPT_RESTART 2
#define WAL_CKPT_TRUNCATE 3
/* PASSIVE, run after a commit (wal_autocheckpoint): skips a partial copy
 * too small to pay for the log sync it needs (wal.c invariant 12) */
#define WAL_CKPT_AUTO (-1)

/* Sync levels (PRAGMA synchronous in WAL mode, §W4.5). */
#define WAL_SYNC_OFF 0
#define WAL_SYNC_NORMAL 1
#define WAL_SYNC_FULL 2
/* wal_append only: FULL, but the commit's sync is left to wal_sync_commit,
 * shared with the other writers of the process (group commit; plain FULL
 * when group commit is off). */
#define WAL_SYNC_GROUP 3

/* wal_close flags. */
#define WAL_CLOSE_KEEP 1 /* never checkpoint or delete the files */

typedef int (*WalBusy)(void *arg, int count); /* nonzero = try again */

/* Open (creating if needed) wal_path as the log of `db`, whose page size is
 * page_size. `db` must be open on a VFS with shm_* methods; the caller keeps
 * SHARED on it until wal_close. Nothing is read yet: the wal-index is
 * mapped, and recovered if needed, by the first wal_begin_read. */
int wal_open(OsVfs *vfs, OsFile *db, const char *wal_path, uint32_t page_size, Wal **out);
/* The log's file (SQLITE_FCNTL_JOURNAL_POINTER). */
OsFile *wal_file(Wal *);

/* Close. Unless flags has WAL_CLOSE_KEEP, tries EXCLUSIVE on the database
 * file (§W3.3); when granted (no other user), checkpoints, unlinks -shm and
 * -wal; either way the db lock goes back to SHARED. Frees w; NULL is a no-op.
 * Ends any open transaction first. Returns the first error seen. */
int wal_close(Wal *w, int flags);

/* Keep the wal-index in heap memory instead of the -shm file (SQLite's
 * WAL_HEAPMEMORY_MODE, for locking_mode=EXCLUSIVE): no -shm is created and
 * the -shm locks are not taken. The caller must hold EXCLUSIVE on the
 * database file for as long as the Wal is open. Call right after wal_open. */
void wal_use_heap_memory(Wal *w);

/* Set the sync level used by wal_checkpoint and at new log headers
 * (default WAL_SYNC_FULL). */
void wal_set_sync(Wal *w, int level);

/* Start a read transaction (§W4.1): take a consistent snapshot of the
 * wal-index header, running recovery (§W1.7) if the index is unusable, and
 * a read mark. *changed (may be NULL) is set to 1 if the snapshot differs
 * from this Wal's previous one (the pager must then drop its cache). */
int wal_begin_read(Wal *w, int *changed);
/* 1 if the last wal_begin_read found a snapshot that differs from the one
 * before it other than by this connection's own commits (PRAGMA
 * data_version). */
int wal_read_changed_by_others(Wal *w);

/* End the read transaction (releases the read mark; ends a write
 * transaction first, undoing uncommitted frames). No-op if none. */
void wal_end_read(Wal *w);

/* Newest frame holding pgno within the snapshot; *frame = 0 when the page
 * must be read from the database file. Needs a read transaction. */
int wal_find_frame(Wal *w, uint32_t pgno, uint32_t *frame);
/* Read frames of the snapshot through a read-only map of the log (on) or
 * with read() (off, the default); takes effect at the next read
 * transaction (wal.c invariant 6). */
void wal_set_map(Wal *w, int on);

/* Read the page image of frame `frame` (1-based) into buf (page_size). */
int wal_read_frame(Wal *w, uint32_t frame, uint8_t *buf);

/* Database size in pages according to the snapshot; 0 means the log has
 * no commit (empty, or restarted after a complete checkpoint) and the
 * database file's own size applies. */
uint32_t wal_db_size(Wal *w);

/* Last committed frame of the snapshot (0 = empty log). */
uint32_t wal_max_frame(Wal *w);

/* Start a write transaction (§W4.2); needs a read transaction. SHALE_BUSY if
 * another connection writes; SHALE_BUSY_SNAPSHOT if someone committed since
 * our snapshot (end the read transaction and start again). */
int wal_begin_write(Wal *w);
/* 1 if the shared wal-index header is no longer the one this connection
 * last read (another connection committed or restarted the log): a writer
 * waiting for the WRITE lock retries then. Reads shared memory only. */
int wal_log_moved(Wal *w);
/* 1 if the last wal_begin_write found the WRITE lock itself held by another
 * process (the process's writer token was ours); a connection of this
 * process holding it (a reader rebuilding the index header, a checkpoint)
 * does not count. */
int wal_write_lock_busy(Wal *w);
/* Who made the last commit of the shared header (wal.c invariant 8), read
 * without a lock (a torn read only misleads the fairness heuristics):
 * another engine, a Shale writer, or a Shale writer that then leaves the
 * lock to others (its yield flag). *change gets the header's iChange. */
#define WAL_BY_OTHER 0
#define WAL_BY_SHALE 1
#define WAL_BY_SHALE_YIELD 2
int wal_last_commit(Wal *w, uint32_t *change);
/* The yield flag of the headers this connection publishes from now on. */
void wal_set_yield(Wal *w, int yield);

/* Append n pages as frames. commit_db_size != 0 makes the last one a
 * commit frame (database size in pages after the commit) and publishes the
 * new header; 0 writes non-commit frames (cache spill) that only this Wal
 * sees until a later commit, or that wal_undo forgets. sync_level is one of
 * WAL_SYNC_*; the log is synced after a commit frame at FULL, and after a
 * new log header unless OFF. Restarts the log at frame 1 with new salts
 * when everything was checkpointed and nobody reads the log (§W1.6). */
int wal_append(Wal *w, const WalPage *pages, int n, uint32_t commit_db_size, int sync_level);

/* Forget frames appended since the last commit (they stay in the file but
 * are overwritten by the next append). Needs the write transaction. */
int wal_undo(Wal *w);

/* End the write transaction (undoing uncommitted frames, releasing WRITE).
 * The read transaction stays open. No-op if none. */
void wal_end_write(Wal *w);

/* Checkpoint (§W4.3): copy frames into the database file, never beyond what
 * a reader holding a mark still needs. busy (may be NULL) is used for the
 * waits that SQLite makes with its busy handler (FULL and above). *nlog and
 * *nckpt (may be NULL) get the log size and the frames checkpointed, as
 * PRAGMA wal_checkpoint reports them (-1 when CKPT was busy). Returns
 * SHALE_BUSY if the mode could not be completed. Must be called outside
 * transactions of w. */
int wal_checkpoint(Wal *w, int mode, WalBusy busy, void *busy_arg, int *nlog, int *nckpt);

/* ---- group commit (wal.c invariant 5) ----
 * Connections of one process writing one log share a queued writer token and
 * the syncs of the log. wal_begin_write takes the token without waiting
 * (SHALE_BUSY if another connection of the process holds it) unless this
 * Wal already holds it; wal_end_write gives it back. */

/* Wait for the writer token before starting a write transaction (before
 * wal_begin_read, so the snapshot taken next is not overtaken by writers
 * queued ahead). busy NULL: SHALE_BUSY at once if taken. No-op if held or
 * group commit is off. */
int wal_queue_enter(Wal *w, WalBusy busy, void *busy_arg);
/* Give the token back if held (e.g. when the read transaction that
 * followed wal_queue_enter failed). */
void wal_queue_leave(Wal *w);
/* Keep the token across the end of the write and read transactions when
 * the log has grown to at least `frames` frames by the next wal_end_write
 * (0: stop keeping it, and give back a token kept so). For the
 * auto-checkpoint that follows such a commit: the process's next writer
 * starts after it, sees the log wholly backfilled and restarts it (§W4.2
 * step 3); started during it, every writer would find frames left to copy
 * and the log would never restart, each commit then checkpointing again. */
void wal_hold_token(Wal *w, uint32_t frames);
/* After a commit made by wal_append at WAL_SYNC_GROUP and wal_end_write:
 * return once that commit is durable, sharing one sync of the log with the
 * other writers of the process. SHALE_OK at once if nothing is pending. */
int wal_sync_commit(Wal *w);

/* ---- snapshots (wal.c invariant 9; SQLite's sqlite3_snapshot_*) ----
 * A snapshot is the 48 bytes of an index header, SQLite's layout. */
#define WAL_SNAPSHOT_SIZE 48

/* The snapshot of the open read transaction (not while writing).
 * SHALE_ERROR without one, or when nothing was ever written to the log. */
int wal_snapshot_get(Wal *w, uint8_t out[WAL_SNAPSHOT_SIZE]);
/* Inside a read transaction: SHALE_OK if snap can still be opened, and
 * CKPT is then held shared (no checkpoint starts) until
 * wal_snapshot_unlock; SHALE_ERROR_SNAPSHOT if it cannot (restarted log, or
 * checkpointed past it). */
int wal_snapshot_check(Wal *w, const uint8_t snap[WAL_SNAPSHOT_SIZE]);
void wal_snapshot_unlock(Wal *w);
/* wal_begin_read, but reading the database as it was at snap (taken from
 * this log by wal_snapshot_get): SHALE_ERROR_SNAPSHOT when the log no
 * longer holds it. A write transaction cannot start on an old snapshot
 * (SHALE_BUSY_SNAPSHOT). */
int wal_begin_read_at(Wal *w, const uint8_t snap[WAL_SNAPSHOT_SIZE], int *changed);
/* Inside a read transaction: make older snapshots openable again after the
 * wal-index was rebuilt (recovery counts every frame as attempted by a
 * checkpoint): frames not yet copied into the database file are given back,
 * as SQLite's sqlite3_snapshot_recover. */
int wal_snapshot_recover(Wal *w);
/* <0, 0, >0 as snapshot a is older than, the same as, newer than b (both of
 * one database, since its log was last deleted). */
int wal_snapshot_cmp(const uint8_t a[WAL_SNAPSHOT_SIZE], const uint8_t b[WAL_SNAPSHOT_SIZE]);

#endif /* SHALE_WAL_H */
