/*
 * api_backup.c -- online backup (shale_backup_*, sqlite3_backup_*): copy the
 * "main" database of one connection into the "main" database of another,
 * page by page, over the pager.
 *
 * Owns: struct shale_backup, and while it exists the destination's write
 * transaction when the backup opened it (dst_locked).
 *
 * How: each step opens a read transaction on the source (unless the source
 * connection already has one), copies up to n pages verbatim into the
 * destination pager inside one write transaction that lives across steps,
 * and releases the source read lock before returning. When the last page
 * is copied the destination is cut to the source's size, its schema cookie
 * set to (old cookie + 1) so every connection reloads its schema, and the
 * write transaction committed (the pager fixes the change counter and the
 * in-header size).
 *
 * Invariants:
 *  1. A change of the source's data version (pager_data_version: any commit
 *     through the source connection, or another connection's commit seen at
 *     the start of a read transaction) restarts the copy from page 1 within
 *     the same destination transaction. Writes through the source
 *     connection therefore restart the backup too (SQLite instead copies
 *     them along; both are allowed by its documentation).
 *  2. Page sizes: an empty destination adopts the source's page size; a
 *     WAL or non-empty in-memory destination with another page size fails
 *     with SHALE_READONLY, as SQLite. A non-empty rollback-journal file
 *     destination with another page size (or reserved-bytes count) also
 *     fails with SHALE_READONLY, where SQLite rewrites the file with the
 *     source's page size: Shale's pager cannot change a file's page size
 *     inside a journalled transaction.
 *  3. b->rc is the last step's result; SHALE_DONE and errors other than
 *     SHALE_BUSY/SHALE_LOCKED are sticky: later steps return them at once.
 *  4. Both connections count the backup in nhandles until finish, so neither
 *     can be closed under it (shale_close returns SHALE_BUSY; close_v2 makes
 *     a zombie freed by finish); an attached database it uses counts it in
 *     ApiDb.nbackup, so DETACH refuses it ("database X is locked") until then.
 *  5. Page 1 bytes 18/19 (file format) follow the destination: 2/2 for a WAL
 *     destination, 1/1 for an in-memory one, the source's otherwise.
 */
#include <string.h>

#include "api_int.h"

struct shale_backup {
  ApiHandle h; /* API_BACKUP_LIVE, API_DEAD on dst->free_backups (api_int.h invariant 6) */
  shale *dst, *src;
  Btree *dbt, *sbt;   /* the named databases' B-trees (main, temp or attached) */
  uint32_t next;      /* next source page to copy (1-based) */
  uint32_t npage;     /* source pages (at least 1) at the last step */
  uint32_t pagecount; /* as reported: the source's page count */
  uint32_t remaining;
  int rc;             /* invariant 3 */
  uint8_t dst_locked; /* this backup opened the destination write txn */
  uint8_t started;    /* the copy started in the current dest txn */
  uint64_t src_version;
  uint32_t dst_cookie; /* destination schema cookie before the backup */
  uint32_t dst_orig;   /* destination pages when its write txn began */
  uint8_t *empty1;     /* page 1 of an empty database (empty source) */
};

/* Count a backup on the attached or temp database of db using bt. */
static void pin(shale *db, Btree *bt, int d) {
  int i = api_db_of_bt(db, bt);
  if (i >= 1) db->dbx[i].nbackup += d;
}

/* The B-tree of database name (NULL: main) of db, opening temp when it is
 * named; NULL with "unknown database" recorded in err's connection. */
static Btree *named_bt(shale *db, const char *name, shale *err) {
  int i = api_db_index(db, name);
  if (i == 1 && api_temp_open(db) != SHALE_OK) i = -1;
  Btree *bt = i >= 0 ? api_db_bt(db, i) : NULL;
  if (!bt) api_error(err, SHALE_ERROR, "unknown database %s", name ? name : "main");
  return bt;
}

static int sticky(int rc) { return rc != SHALE_OK && rc != SHALE_BUSY && rc != SHALE_LOCKED; }

static shale_backup *backup_init_impl(shale *dst, const char *dname, shale *src,
                                      const char *sname) {
  if (dst == src) {
    api_error(dst, SHALE_ERROR, "source and destination must be distinct");
    return NULL;
  }
  Btree *sbt = named_bt(src, sname, dst);
  if (!sbt) return NULL;
  Btree *dbt = named_bt(dst, dname, dst);
  if (!dbt) return NULL;
  if (btree_txn_state(dbt) != PAGER_TXN_NONE) {
    api_error(dst, SHALE_ERROR, "destination database is in use");
    return NULL;
  }
  shale_backup *b = api_handle_alloc(dst, &dst->free_backups, sizeof *b, API_BACKUP_LIVE);
  if (!b) {
    api_error(dst, SHALE_NOMEM, "out of memory");
    return NULL;
  }
  b->dst = dst;
  b->src = src;
  b->dbt = dbt;
  b->sbt = sbt;
  b->next = 1;
  dst->nhandles++;
  src->nhandles++;
  pin(src, sbt, 1);
  pin(dst, dbt, 1);
  return b;
}

/* Page 1 of a new empty database with the source's page size (an empty
 * source is copied as one: SQLite does the same). */
static int make_empty_page1(shale_backup *b, uint32_t ps, int reserve) {
  if (b->empty1) return SHALE_OK;
  Btree *tmp = NULL;
  int rc = btree_open(NULL, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &tmp);
  if (rc) return rc;
  rc = btree_set_page_size(tmp, ps, reserve);
  if (rc == SHALE_OK) rc = btree_begin(tmp, BTREE_TXN_WRITE);
  if (rc == SHALE_OK) {
    PgPage *pg;
    rc = pager_get(btree_pager(tmp), 1, 0, &pg);
    if (rc == SHALE_OK) {
      b->empty1 = shale_malloc(ps);
      if (b->empty1)
        memcpy(b->empty1, pager_data(pg), ps);
      else
        rc = SHALE_NOMEM;
      pager_unref(pg);
    }
    btree_rollback(tmp);
  }
  btree_close(tmp);
  return rc;
}

/* Before the destination write transaction: make its page size the
 * source's (invariant 2). The source read transaction is open. */
static int prepare_dest(shale_backup *b) {
  Pager *sp = btree_pager(b->sbt);
  uint32_t ps = pager_page_size(sp);
  int reserve = (int)(ps - pager_usable_size(sp));
  int rc = btree_begin(b->dbt, BTREE_TXN_READ);
  if (rc) return rc;
  Pager *dp = btree_pager(b->dbt);
  uint32_t dps = pager_page_size(dp);
  int dreserve = (int)(dps - pager_usable_size(dp));
  uint32_t dn = pager_db_size(dp);
  int wal = pager_journal_mode(dp) == PAGER_JOURNAL_WAL;
  btree_commit(b->dbt); /* ends the read transaction */
  if (dps == ps && dreserve == reserve) return SHALE_OK;
  if (wal) return SHALE_READONLY;
  if (dn == 0) return pager_set_page_size(dp, ps, reserve) ? SHALE_READONLY : SHALE_OK;
  return SHALE_READONLY; /* a non-empty in-memory or file destination */
}

/* Write data (one page) as page pgno of dp (write transaction open); pages
 * past dst_orig are new (not read first). Page 1 bytes 18/19 follow dp's
 * journal mode (invariant 5). */
static int write_page(Pager *dp, uint32_t pgno, const uint8_t *data, uint32_t dst_orig) {
  PgPage *d = NULL;
  int rc = pager_get(dp, pgno, pgno > dst_orig ? PAGER_GET_NOCONTENT : 0, &d);
  if (rc == SHALE_OK) rc = pager_write(d);
  if (rc == SHALE_OK) {
    uint8_t *out = pager_data(d);
    memcpy(out, data, pager_page_size(dp));
    if (pgno == 1) {
      if (pager_journal_mode(dp) == PAGER_JOURNAL_WAL)
        out[18] = out[19] = 2;
      else if (pager_is_memory(dp))
        out[18] = out[19] = 1;
    }
    pager_zero_extra(d);
  }
  if (d) pager_unref(d);
  return rc;
}

int api_backup_copy_page(Pager *sp, Pager *dp, uint32_t pgno, uint32_t dst_orig) {
  PgPage *s = NULL;
  int rc = pager_get(sp, pgno, 0, &s);
  if (rc) return rc;
  rc = write_page(dp, pgno, pager_data(s), dst_orig);
  pager_unref(s);
  return rc;
}

static int copy_page(shale_backup *b, uint32_t pgno) {
  Pager *sp = btree_pager(b->sbt), *dp = btree_pager(b->dbt);
  if (b->empty1) return write_page(dp, pgno, b->empty1, b->dst_orig);
  return api_backup_copy_page(sp, dp, pgno, b->dst_orig);
}

/* All pages copied: size, cookie, commit. */
static int finish_copy(shale_backup *b) {
  shale *dst = b->dst;
  Pager *dp = btree_pager(b->dbt);
  int rc = SHALE_OK;
  if (pager_db_size(dp) > b->npage) rc = pager_truncate(dp, b->npage);
  if (rc == SHALE_OK) rc = btree_update_meta(b->dbt, BTREE_META_SCHEMA_COOKIE, b->dst_cookie + 1);
  if (rc == SHALE_OK && b->dst_locked) {
    rc = btree_commit(b->dbt);
    if (rc == SHALE_OK) b->dst_locked = 0;
  }
  if (rc == SHALE_OK) {
    api_schema_reset_db(dst, api_db_of_bt(dst, b->dbt));
    rc = SHALE_DONE;
  }
  return rc;
}

static int backup_step_impl(shale_backup *b, int npage) {
  if (b->rc == SHALE_DONE || sticky(b->rc)) return b->rc;
  int rc = SHALE_OK, src_began = 0;
  if (btree_txn_state(b->sbt) == PAGER_TXN_NONE) {
    rc = btree_begin(b->sbt, BTREE_TXN_READ);
    if (rc) goto out;
    src_began = 1;
  }
  if (b->dst_locked && btree_txn_state(b->dbt) != PAGER_TXN_WRITE) {
    b->dst_locked = 0; /* ended under us: start over */
    b->started = 0;
  }
  if (!b->dst_locked) {
    int st = btree_txn_state(b->dbt);
    if (st == PAGER_TXN_READ) {
      rc = SHALE_BUSY; /* the destination connection is reading */
      goto out;
    }
    if (st == PAGER_TXN_NONE) {
      rc = prepare_dest(b);
      if (rc) goto out;
      rc = btree_begin(b->dbt, BTREE_TXN_WRITE);
      if (rc) goto out;
      b->dst_locked = 1;
    }
    rc = btree_get_meta(b->dbt, BTREE_META_SCHEMA_COOKIE, &b->dst_cookie);
    if (rc) goto out;
    b->dst_orig = pager_db_size(btree_pager(b->dbt));
    b->started = 0;
  }
  Pager *sp = btree_pager(b->sbt), *dp = btree_pager(b->dbt);
  uint32_t ps = pager_page_size(sp);
  if (ps != pager_page_size(dp) || pager_usable_size(sp) != pager_usable_size(dp)) {
    rc = SHALE_READONLY; /* invariant 2 */
    goto out;
  }
  uint64_t ver = pager_data_version(sp);
  if (!b->started || ver != b->src_version) {
    b->next = 1;
    b->started = 1;
    b->src_version = ver;
  }
  uint32_t nsrc = pager_db_size(sp);
  b->pagecount = nsrc;
  b->npage = nsrc ? nsrc : 1;
  if (nsrc == 0) {
    rc = make_empty_page1(b, ps, (int)(ps - pager_usable_size(sp)));
    if (rc) goto out;
  } else if (b->empty1) {
    shale_free(b->empty1);
    b->empty1 = NULL;
  }
  for (int k = 0; (npage < 0 || k < npage) && b->next <= b->npage; k++, b->next++) {
    rc = copy_page(b, b->next);
    if (rc) goto out;
  }
  b->remaining = b->next > b->npage ? 0 : b->npage - b->next + 1;
  if (nsrc == 0) b->remaining = 0;
  if (b->next > b->npage) rc = finish_copy(b);
out:
  if (src_began) btree_commit(b->sbt); /* ends the read transaction */
  b->rc = rc;
  return rc;
}

static int backup_finish_impl(shale_backup *b) {
  shale *dst = b->dst, *src = b->src;
  if (b->dst_locked && btree_txn_state(b->dbt) != PAGER_TXN_NONE) btree_rollback(b->dbt);
  int rc = b->rc == SHALE_DONE ? SHALE_OK : b->rc;
  shale_set_error(dst, rc, NULL);
  pin(src, b->sbt, -1);
  pin(dst, b->dbt, -1);
  shale_free(b->empty1);
  api_handle_retire(&dst->free_backups, b);
  api_handle_release(src);
  api_handle_release(dst);
  return rc;
}

/* ------------------------------------------------------------ entry points */

/* Each holds both connections' mutexes, the source's first (as SQLite). */

shale_backup *shale_backup_init(shale *dst, const char *dname, shale *src, const char *sname) {
  if (!api_db_enter(src)) return NULL;
  if (!api_db_enter(dst)) {
    api_leave(src);
    return NULL;
  }
  shale_backup *b = backup_init_impl(dst, dname, src, sname);
  api_leave(dst);
  api_leave(src);
  return b;
}

/* Lock both connections of b if it is a live backup: 1, else 0. */
static int backup_enter(shale_backup *b) {
  if (api_magic(b) != API_BACKUP_LIVE) return 0;
  shale *src = b->src, *dst = b->dst;
  api_enter(src);
  api_enter(dst);
  if (api_magic(b) == API_BACKUP_LIVE) return 1;
  api_leave(dst);
  api_leave(src);
  return 0;
}

static void backup_leave(shale_backup *b) {
  api_leave(b->dst);
  api_leave(b->src);
}

int shale_backup_step(shale_backup *b, int npage) {
  if (!backup_enter(b)) return SHALE_MISUSE;
  int rc = backup_step_impl(b, npage);
  backup_leave(b);
  return rc;
}

int shale_backup_remaining(shale_backup *b) {
  if (!backup_enter(b)) return 0;
  int n = (int)b->remaining;
  backup_leave(b);
  return n;
}

int shale_backup_pagecount(shale_backup *b) {
  if (!backup_enter(b)) return 0;
  int n = (int)b->pagecount;
  backup_leave(b);
  return n;
}

int shale_backup_finish(shale_backup *b) {
  if (!b) return SHALE_OK;
  if (!backup_enter(b)) return SHALE_MISUSE;
  shale *src = b->src, *dst = b->dst;
  int rc = backup_finish_impl(b);
  api_leave_maybe_free(dst);
  api_leave_maybe_free(src);
  return rc;
}
