/*
 * api_snapshot.c -- WAL snapshots (shale_snapshot_*, SQLite's
 * sqlite3_snapshot_* of SQLITE_ENABLE_SNAPSHOT): taking the state of a
 * read transaction, opening a later read transaction at it, and giving
 * snapshots back after the wal-index was rebuilt. The log work is wal.c's
 * (invariant 9), reached through the pager (pager_snapshot_*).
 *
 * Owns: the shale_snapshot blocks it returns (shale_malloc'ed).
 *
 * Invariants:
 *  1. The rules of the calls are SQLite's main.c rules: get and open only
 *     inside BEGIN and never on a database with a write transaction, open
 *     replaces a read transaction only when no statement runs; recover
 *     only without a read transaction. None sets the connection's error
 *     (SQLite's calls return the code alone).
 *  2. An open that replaces a read transaction keeps checkpoints off from
 *     the check to the new read transaction (pager_snapshot_check), so the
 *     snapshot cannot be checkpointed away in between.
 */
#include <string.h>

#include "api_int.h"

/* The B-tree of database zdb when a snapshot call may use it: "main" or an
 * attached database (not temp, not NULL), opened. */
static Btree *snap_bt(shale *db, const char *zdb) {
  if (!zdb) return NULL;
  int i = api_db_index(db, zdb);
  if (i < 0 || i == 1) return NULL;
  return api_db_bt(db, i);
}

static int get_impl(shale *db, const char *zdb, shale_snapshot **out) {
  *out = NULL;
  Btree *bt = db->txn.autocommit ? NULL : snap_bt(db, zdb);
  if (!bt || btree_txn_state(bt) == PAGER_TXN_WRITE) return SHALE_ERROR;
  int rc = btree_begin(bt, BTREE_TXN_READ);
  if (rc != SHALE_OK) return rc;
  shale_snapshot *s = shale_malloc(sizeof *s);
  if (!s) return SHALE_NOMEM;
  rc = pager_snapshot_get(btree_pager(bt), s->hidden);
  if (rc != SHALE_OK) {
    shale_free(s);
    return rc;
  }
  *out = s;
  return SHALE_OK;
}

/* Start bt's read transaction at snap (invariant 2 for a replaced one). */
static int open_at(Btree *bt, const shale_snapshot *snap) {
  Pager *p = btree_pager(bt);
  int rc = pager_snapshot_next(p, snap->hidden);
  if (rc == SHALE_OK) {
    rc = btree_begin(bt, BTREE_TXN_READ);
    pager_snapshot_next(p, NULL);
  }
  return rc;
}

static int open_impl(shale *db, const char *zdb, const shale_snapshot *snap) {
  Btree *bt = db->txn.autocommit ? NULL : snap_bt(db, zdb);
  if (!bt || !snap) return SHALE_ERROR;
  int st = btree_txn_state(bt);
  if (st == PAGER_TXN_WRITE) return SHALE_ERROR;
  if (st == PAGER_TXN_NONE) return open_at(bt, snap);
  if (db->txn.nactive) return SHALE_ERROR;
  Pager *p = btree_pager(bt);
  int rc = pager_snapshot_check(p, snap->hidden);
  if (rc == SHALE_OK) rc = btree_commit(bt);
  if (rc == SHALE_OK) rc = open_at(bt, snap);
  pager_snapshot_unlock(p);
  return rc;
}

static int recover_impl(shale *db, const char *zdb) {
  Btree *bt = snap_bt(db, zdb);
  if (!bt || btree_txn_state(bt) != PAGER_TXN_NONE) return SHALE_ERROR;
  int rc = btree_begin(bt, BTREE_TXN_READ);
  if (rc != SHALE_OK) return rc;
  rc = pager_snapshot_recover(btree_pager(bt));
  btree_commit(bt);
  return rc;
}

int shale_snapshot_get(shale *db, const char *zdb, shale_snapshot **out) {
  if (!out) return SHALE_MISUSE;
  *out = NULL;
  API_DB_CALL(db, SHALE_MISUSE, get_impl(db, zdb, out));
}

int shale_snapshot_open(shale *db, const char *zdb, const shale_snapshot *snap) {
  API_DB_CALL(db, SHALE_MISUSE, open_impl(db, zdb, snap));
}

int shale_snapshot_recover(shale *db, const char *zdb) {
  API_DB_CALL(db, SHALE_MISUSE, recover_impl(db, zdb));
}

void shale_snapshot_free(shale_snapshot *snap) { shale_free(snap); }

int shale_snapshot_cmp(const shale_snapshot *a, const shale_snapshot *b) {
  return pager_snapshot_cmp(a->hidden, b->hidden);
}
