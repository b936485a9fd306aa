/*
 * btree.c -- the Btree object: open/close, transactions, the header, meta
 * values, creating/dropping/clearing trees, cursor lifetime, insert and
 * delete.
 *
 * Owns FORMAT-db.md §1 as far as the b-tree layer is concerned: header
 * validation on every new read transaction (fractions 64/32/32, read/write
 * versions, schema format, text encoding, auto-vacuum) and writing page 1 of
 * a new database.
 *
 * Invariants:
 *  1. A header that SQLite would refuse is refused the same way: read
 *     version > 2 or bad fractions -> SHALE_NOTADB; schema format > 4 ->
 *     SHALE_ERROR "unsupported file format"; UTF-16 -> SHALE_ERROR.
 *  2. Write version > 2 or auto-vacuum (offset 52 != 0): the file can be
 *     read but every write transaction fails with SHALE_READONLY.
 *  3. Before a cursor modifies a tree, every other positioned cursor on that
 *     tree is saved (btree.h invariant 5); after the change the modifying
 *     cursor is on the new entry (insert) or saved at the deleted key
 *     (delete).
 *  4. Every cursor is on bt->cursors until btree_cursor_close.
 */
#include <stdio.h>

#include "btree_int.h"

int btree_corrupt_at(Btree *bt, uint32_t pgno, const char *what, const char *file, int line) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(bt->errmsg, sizeof bt->errmsg, "database corruption: page %u: %s (%s:%d)", pgno, what,
           base, line);
  bt->has_err = 1;
  return SHALE_CORRUPT;
}

void btree_set_error(Btree *bt, const char *msg) {
  snprintf(bt->errmsg, sizeof bt->errmsg, "%s", msg);
  bt->has_err = 1;
}

const char *btree_errmsg(Btree *bt) { return bt->has_err ? bt->errmsg : NULL; }

Pager *btree_pager(Btree *bt) { return bt->pager; }

static void set_sizes(Btree *bt) {
  bt->page_size = pager_page_size(bt->pager);
  bt->usable = pager_usable_size(bt->pager);
  uint32_t u = bt->usable;
  bt->max_leaf = u - 35;
  bt->max_local = (u - 12) * 64 / 255 - 23;
  bt->min_local = (u - 12) * 32 / 255 - 23;
}

int btree_open(OsVfs *vfs, const char *path, int open_flags, Btree **out) {
  *out = NULL;
  Btree *bt = shale_malloc(sizeof *bt);
  if (!bt) return SHALE_NOMEM;
  memset(bt, 0, sizeof *bt);
  int rc = pager_open(vfs, path, open_flags, (int)sizeof(MemPage), &bt->pager);
  if (rc) {
    shale_free(bt);
    return rc;
  }
  set_sizes(bt);
  *out = bt;
  return SHALE_OK;
}

static void free_spares(Btree *bt);

int btree_close(Btree *bt) {
  if (!bt) return SHALE_OK;
  while (bt->cursors) btree_cursor_close(bt->cursors);
  free_spares(bt);
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) pager_rollback(bt->pager);
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE) pager_end_read(bt->pager);
  int rc = pager_close(bt->pager);
  shale_free(bt);
  return rc;
}

int btree_set_page_size(Btree *bt, uint32_t page_size, int reserve) {
  int rc = pager_set_page_size(bt->pager, page_size, reserve);
  set_sizes(bt);
  return rc;
}

uint32_t btree_page_size(Btree *bt) { return pager_page_size(bt->pager); }
uint32_t btree_page_count(Btree *bt) { return pager_db_size(bt->pager); }
int btree_txn_state(Btree *bt) { return pager_txn_state(bt->pager); }

/* ---- header ---- */

static int read_header(Btree *bt) {
  set_sizes(bt);
  bt->readonly = 0;
  bt->ro_reason = NULL;
  if (pager_db_size(bt->pager) == 0) return SHALE_OK;
  PgPage *p1;
  int rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  const uint8_t *h = pager_data(p1);
  rc = SHALE_OK;
  if (memcmp(h, "SQLite format 3", 16) != 0 || h[19] > 2 || h[21] != 64 || h[22] != 32 ||
      h[23] != 32) {
    btree_set_error(bt, "file is not a database");
    rc = SHALE_NOTADB;
  } else if (bt->usable < 480) {
    btree_set_error(bt, "file is not a database");
    rc = SHALE_NOTADB;
  } else if (util_get4(h + 44) > 4) {
    btree_set_error(bt, "unsupported file format");
    rc = SHALE_ERROR;
  } else if (util_get4(h + 56) == 2 || util_get4(h + 56) == 3) {
    btree_set_error(bt, "unsupported text encoding: UTF-16 databases are not supported yet");
    rc = SHALE_ERROR;
  } else if (util_get4(h + 56) > 3) {
    btree_set_error(bt, "unsupported encoding");
    rc = SHALE_ERROR;
  } else if (h[18] > 2) {
    bt->readonly = 1;
    bt->ro_reason = "attempt to write a readonly database (file write version too new)";
  } else if (util_get4(h + 52) != 0) {
    bt->readonly = 1;
    bt->ro_reason =
        "attempt to write a readonly database (auto_vacuum is not supported for "
        "writing yet)";
  }
  pager_unref(p1);
  return rc;
}

static int init_page1(Btree *bt) {
  PgPage *p1;
  int rc = pager_get(bt->pager, 1, PAGER_GET_NOCONTENT, &p1);
  if (rc) return rc;
  rc = pager_write(p1);
  if (rc) {
    pager_unref(p1);
    return rc;
  }
  uint8_t *h = pager_data(p1);
  memset(h, 0, bt->page_size);
  memcpy(h, "SQLite format 3", 16);
  util_put2(h + 16, bt->page_size == 65536 ? 1 : bt->page_size); /* 65536 is 00 01 */
  h[18] = 1;
  h[19] = 1;
  h[20] = (uint8_t)(bt->page_size - bt->usable);
  h[21] = 64;
  h[22] = 32;
  h[23] = 32;
  util_put4(h + 44, 4);
  util_put4(h + 56, 1);
  util_put4(h + 96, PAGER_VERSION_STAMP);
  page_mem(p1)->init = 0;
  page_zero(bt, p1, PT_TABLE_LEAF);
  pager_unref(p1);
  return SHALE_OK;
}

/* ---- transactions ---- */

int btree_begin(Btree *bt, int level) {
  int rc;
  int started = 0; /* this call opened the read transaction */
  if (pager_txn_state(bt->pager) == PAGER_TXN_NONE) {
    rc = pager_begin_read(bt->pager);
    if (rc) return rc;
    rc = read_header(bt);
    if (rc) {
      pager_end_read(bt->pager);
      return rc;
    }
    started = 1;
  }
  if (level >= BTREE_TXN_WRITE && pager_txn_state(bt->pager) != PAGER_TXN_WRITE) {
    if (bt->readonly) {
      btree_set_error(bt, bt->ro_reason);
      rc = SHALE_READONLY;
    } else {
      rc = pager_begin_write(bt->pager, level == BTREE_TXN_EXCLUSIVE);
      if (rc == SHALE_OK && pager_db_size(bt->pager) == 0) {
        set_sizes(bt);
        rc = init_page1(bt);
        if (rc) pager_rollback(bt->pager);
      }
    }
    /* As SQLite: a write transaction that could not start leaves no lock
     * behind when this call took the read lock itself. */
    if (rc) {
      if (started) pager_end_read(bt->pager);
      return rc;
    }
  }
  return SHALE_OK;
}

int btree_commit(Btree *bt) {
  if (bt->cursors) return SHALE_BUSY;
  int rc = SHALE_OK;
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) {
    rc = pager_commit(bt->pager);
    if (rc) return rc;
  }
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE) pager_end_read(bt->pager);
  return SHALE_OK;
}

int btree_commit_write(Btree *bt) {
  if (pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return SHALE_OK;
  return pager_commit(bt->pager);
}

static void abort_cursors(Btree *bt, int rc) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    cursor_release(c);
    if (c->saved_key) {
      shale_free(c->saved_key);
      c->saved_key = NULL;
    }
    c->state = CUR_FAULT;
    c->fault_rc = rc;
  }
}

int btree_rollback(Btree *bt) {
  abort_cursors(bt, SHALE_ABORT_ROLLBACK);
  int rc = SHALE_OK;
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) rc = pager_rollback(bt->pager);
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE) pager_end_read(bt->pager);
  return rc;
}

int btree_savepoint_open(Btree *bt, int n) { return pager_savepoint_open(bt->pager, n); }
int btree_savepoint_release(Btree *bt, int idx) { return pager_savepoint_release(bt->pager, idx); }

int btree_savepoint_rollback(Btree *bt, int idx) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    int rc = cursor_save(c);
    if (rc) return rc;
  }
  int rc = pager_savepoint_rollback(bt->pager, idx);
  set_sizes(bt);
  return rc;
}

/* ---- cursors bookkeeping ---- */

int btree_save_cursors(Btree *bt, uint32_t root, BtCursor *except) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c == except || c->root != root) continue;
    int rc = cursor_save(c);
    if (rc) return rc;
  }
  return SHALE_OK;
}

void btree_invalidate_cursors(Btree *bt, uint32_t root, BtCursor *except) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c == except || c->root != root) continue;
    if (c->state == CUR_FAULT) continue;
    cursor_release(c);
    if (c->saved_key) {
      shale_free(c->saved_key);
      c->saved_key = NULL;
    }
    c->state = CUR_INVALID;
  }
}

static int can_write(Btree *bt) {
  if (pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return SHALE_MISUSE;
  if (bt->readonly) {
    btree_set_error(bt, bt->ro_reason);
    return SHALE_READONLY;
  }
  return SHALE_OK;
}

int btree_cursor_open(Btree *bt, uint32_t root, int wrflag, BtreeKeyCmp cmp, void *cmp_ctx,
                      BtCursor **out) {
  *out = NULL;
  if (pager_txn_state(bt->pager) == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (wrflag) {
    int rc = can_write(bt);
    if (rc) return rc;
  }
  if (root == 0) return SHALE_CORRUPT;
  /* A statement re-run opens the same cursors again: reuse a closed one
   * (its overflow-list buffer too) instead of allocating. */
  BtCursor *c = bt->spare;
  uint32_t *ovfl = NULL, ovfl_alloc = 0;
  if (c) {
    bt->spare = c->next;
    bt->nspare--;
    ovfl = c->ovfl;
    ovfl_alloc = c->ovfl_alloc;
  } else {
    c = shale_malloc(sizeof *c);
    if (!c) return SHALE_NOMEM;
  }
  memset(c, 0, sizeof *c);
  c->ovfl = ovfl;
  c->ovfl_alloc = ovfl_alloc;
  c->bt = bt;
  c->root = root;
  c->wrflag = wrflag;
  c->cmp = cmp;
  c->cmp_ctx = cmp_ctx;
  c->state = CUR_INVALID;
  c->next = bt->cursors;
  bt->cursors = c;
  *out = c;
  return SHALE_OK;
}

void btree_cursor_close(BtCursor *c) {
  if (!c) return;
  Btree *bt = c->bt;
  cursor_release(c);
  for (BtCursor **pp = &bt->cursors; *pp; pp = &(*pp)->next) {
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  }
  shale_free(c->saved_key);
  c->saved_key = NULL;
  if (bt->nspare < BTREE_SPARE_CURSORS) {
    c->next = bt->spare;
    bt->spare = c;
    bt->nspare++;
    return;
  }
  shale_free(c->ovfl);
  shale_free(c);
}

/* Free the kept cursors (btree_close). */
static void free_spares(Btree *bt) {
  while (bt->spare) {
    BtCursor *c = bt->spare;
    bt->spare = c->next;
    shale_free(c->ovfl);
    shale_free(c);
  }
  bt->nspare = 0;
}

/* ---- tree creation and removal ---- */

int btree_create_table(Btree *bt, int kind, uint32_t *root) {
  int rc = can_write(bt);
  if (rc) return rc;
  if (kind != BTREE_INTKEY && kind != BTREE_BLOBKEY) return SHALE_MISUSE;
  PgPage *pg;
  uint32_t pgno;
  /* hint page 1: from the freelist SQLite takes the page nearest the
   * start of the file for a new root, so Shale's roots equal SQLite's */
  rc = btree_alloc_page(bt, 1, &pg, &pgno);
  if (rc) return rc;
  page_zero(bt, pg, kind == BTREE_INTKEY ? PT_TABLE_LEAF : PT_INDEX_LEAF);
  pager_unref(pg);
  *root = pgno;
  return SHALE_OK;
}

/* Free every page below pgno (and pgno itself if free_it), counting entries. */
static int clear_page(Btree *bt, uint32_t pgno, int depth, int free_it, int64_t *count) {
  if (depth >= BT_MAX_DEPTH) return BT_CORRUPT(bt, pgno, "tree too deep (cycle?)");
  PgPage *pg;
  int rc = page_get(bt, pgno, &pg);
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  int leaf = m->leaf, intkey = m->intkey, n = m->ncell;
  uint32_t right = leaf ? 0 : page_right(pg);
  for (int i = 0; i < n && rc == SHALE_OK; i++) {
    if (!m->init || m->ncell != n) {
      rc = BT_CORRUPT(bt, pgno, "page changed while being cleared");
      break;
    }
    CellInfo ci;
    rc = page_cell_parse(bt, pg, i, &ci);
    if (rc) break;
    if (leaf || !intkey) (*count)++;
    rc = btree_free_cell_overflow(bt, pg, &ci);
    if (rc == SHALE_OK && !leaf) rc = clear_page(bt, ci.child, depth + 1, 1, count);
  }
  if (rc == SHALE_OK && !leaf) rc = clear_page(bt, right, depth + 1, 1, count);
  if (rc == SHALE_OK) {
    if (free_it) {
      pager_unref(pg);
      return btree_free_page(bt, pgno);
    }
    rc = pager_write(pg);
    if (rc == SHALE_OK) page_zero(bt, pg, intkey ? PT_TABLE_LEAF : PT_INDEX_LEAF);
  }
  pager_unref(pg);
  return rc;
}

int btree_clear_table(Btree *bt, uint32_t root, int64_t *nrows) {
  int rc = can_write(bt);
  if (rc) return rc;
  btree_invalidate_cursors(bt, root, NULL);
  int64_t n = 0;
  rc = clear_page(bt, root, 0, 0, &n);
  if (nrows) *nrows = n;
  return rc;
}

int btree_drop_table(Btree *bt, uint32_t root) {
  int rc = can_write(bt);
  if (rc) return rc;
  if (root < 2) return SHALE_MISUSE;
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c->root == root) return SHALE_LOCKED;
  }
  int64_t n = 0;
  return clear_page(bt, root, 0, 1, &n);
}

/* ---- meta ---- */

int btree_get_meta(Btree *bt, int idx, uint32_t *out) {
  *out = 0;
  if (idx < 0 || idx > 8) return SHALE_RANGE;
  if (pager_txn_state(bt->pager) == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (pager_db_size(bt->pager) == 0) return SHALE_OK;
  PgPage *p1;
  int rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  *out = util_get4(pager_data(p1) + 36 + 4 * idx);
  pager_unref(p1);
  return SHALE_OK;
}

int btree_update_meta(Btree *bt, int idx, uint32_t value) {
  if (idx <= 0 || idx > 8 || idx == BTREE_META_LARGEST_ROOT) return SHALE_RANGE;
  int rc = can_write(bt);
  if (rc) return rc;
  PgPage *p1;
  rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  rc = pager_write(p1);
  if (rc == SHALE_OK) util_put4(pager_data(p1) + 36 + 4 * idx, value);
  pager_unref(p1);
  return rc;
}

/* ---- insert / delete ---- */

static int prepare_write(BtCursor *c) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  if (!c->wrflag) return SHALE_READONLY;
  int rc = can_write(c->bt);
  if (rc) return rc;
  if (!c->kind_known) {
    rc = cursor_move_to_root(c);
    if (rc) return rc;
  }
  return btree_save_cursors(c->bt, c->root, c);
}

/* Re-seek after a balance. */
static int reseek(BtCursor *c, int64_t rowid, const void *key, uint32_t nkey) {
  int res;
  int rc = c->intkey ? cursor_seek_rowid(c, rowid, &res) : cursor_seek_key(c, key, nkey, &res);
  if (rc) return rc;
  if (res != 0) return BT_CORRUPT(c->bt, c->root, "entry not found after a change");
  return SHALE_OK;
}

/* Is the cursor on the last entry of its table tree, with a rowid below
 * `rowid`? Then an insert of rowid goes right after it, no seek needed. */
static int at_last_below(BtCursor *c, int64_t rowid) {
  if (c->state != CUR_VALID || c->depth == 0) return 0;
  for (int l = 0; l < c->depth - 1; l++) {
    if (c->idx[l] != page_mem(c->pg[l])->ncell) return 0;
  }
  MemPage *m = page_mem(c->pg[c->depth - 1]);
  if (!m->init || !m->leaf || c->idx[c->depth - 1] + 1 != m->ncell) return 0;
  CellInfo *ci;
  if (cursor_info(c, &ci)) return 0;
  return ci->key < rowid;
}

int btree_insert(BtCursor *c, int64_t rowid, const void *data, uint32_t n, uint32_t nzero,
                 int flags) {
  Btree *bt = c->bt;
  int rc = prepare_write(c);
  if (rc) return rc;
  (void)flags;
  const uint8_t *key = data;
  uint8_t *keybuf = NULL;
  uint32_t nkey = n;
  if (!c->intkey && nzero) {
    keybuf = shale_malloc((size_t)n + nzero);
    if (!keybuf) return SHALE_NOMEM;
    memcpy(keybuf, data, n);
    memset(keybuf + n, 0, nzero);
    key = keybuf;
    nkey = n + nzero;
    nzero = 0;
  }
  uint8_t *cell = shale_malloc(bt->page_size + 64);
  if (!cell) {
    shale_free(keybuf);
    return SHALE_NOMEM;
  }
  int res = 0;
  if (c->intkey && at_last_below(c, rowid)) {
    res = -1; /* appending: the cursor already sits where the row goes */
  } else {
    rc = c->intkey ? cursor_seek_rowid(c, rowid, &res) : cursor_seek_key(c, key, nkey, &res);
    if (rc) goto done;
  }
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  int idx = c->idx[level], ndel = 0;
  uint32_t sz;
  int interior = !m->leaf;
  rc = btree_build_cell(bt, pager_pgno(pg), c->intkey, rowid, key, c->intkey ? n : nkey, nzero,
                        cell + 4, &sz);
  if (rc) goto done;
  if (c->state == CUR_VALID && res == 0) {
    CellInfo ci;
    rc = page_cell_parse(bt, pg, idx, &ci);
    if (rc) goto done;
    rc = btree_free_cell_overflow(bt, pg, &ci);
    if (rc) goto done;
    ndel = 1;
    if (interior) {
      util_put4(cell, ci.child);
      sz += 4;
    }
  } else {
    assert(!interior);
    if (c->state == CUR_VALID && res < 0) idx++;
    if (c->state != CUR_VALID) idx = 0;
  }
  int balanced;
  rc = btree_modify_level(c, level, idx, ndel, interior ? cell : cell + 4, sz, &balanced);
  if (rc) goto done;
  if (balanced) {
    rc = reseek(c, rowid, key, nkey);
  } else {
    c->state = CUR_VALID;
    c->skip = 0;
  }
done:
  if (rc) {
    cursor_release(c);
    c->state = CUR_INVALID;
  }
  shale_free(cell);
  shale_free(keybuf);
  return rc;
}

/* Delete the leaf entry under the cursor (no repositioning). */
static int delete_leaf_entry(BtCursor *c) {
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  CellInfo ci;
  int rc = page_cell_parse(c->bt, pg, c->idx[level], &ci);
  if (rc) return rc;
  rc = btree_free_cell_overflow(c->bt, pg, &ci);
  if (rc) return rc;
  int balanced;
  return btree_modify_level(c, level, c->idx[level], 1, NULL, 0, &balanced);
}

int btree_delete(BtCursor *c) {
  Btree *bt = c->bt;
  int rc = cursor_restore(c);
  if (rc) return rc;
  if (c->state != CUR_VALID) return SHALE_MISUSE;
  if (c->skip != 0) return SHALE_MISUSE; /* its entry is already gone */
  rc = prepare_write(c);
  if (rc) return rc;
  int64_t rowid = 0;
  uint8_t *key = NULL, *pred = NULL;
  uint32_t nkey = 0, npred = 0;
  uint8_t *cell = NULL;
  if (c->intkey) {
    CellInfo *ci;
    rc = cursor_info(c, &ci);
    if (rc) goto done;
    rowid = ci->key;
  } else {
    rc = btree_cursor_key_copy(c, &key, &nkey);
    if (rc) goto done;
  }
  if (page_mem(c->pg[c->depth - 1])->leaf) {
    rc = delete_leaf_entry(c);
    goto done;
  }
  /* An index entry in an interior cell: its predecessor (the last entry of
   * its left subtree, always in a leaf) takes its place. */
  int eof;
  rc = btree_prev(c, &eof);
  if (rc) goto done;
  if (eof || !page_mem(c->pg[c->depth - 1])->leaf) {
    rc = BT_CORRUPT(bt, c->root, "no predecessor for an interior entry");
    goto done;
  }
  rc = btree_cursor_key_copy(c, &pred, &npred);
  if (rc) goto done;
  rc = delete_leaf_entry(c);
  if (rc) goto done;
  int res;
  rc = cursor_seek_key(c, key, nkey, &res);
  if (rc) goto done;
  if (res != 0) {
    rc = BT_CORRUPT(bt, c->root, "entry lost while deleting");
    goto done;
  }
  /* E may have moved (even down into a leaf, by a merge); wherever it is,
   * the predecessor, no longer in the tree, takes its cell. */
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  int leaf = page_mem(pg)->leaf;
  CellInfo ci;
  rc = page_cell_parse(bt, pg, c->idx[level], &ci);
  if (rc) goto done;
  cell = shale_malloc(bt->page_size + 64);
  if (!cell) {
    rc = SHALE_NOMEM;
    goto done;
  }
  uint32_t sz;
  rc = btree_build_cell(bt, pager_pgno(pg), 0, 0, pred, npred, 0, cell + 4, &sz);
  if (rc) goto done;
  util_put4(cell, ci.child);
  rc = btree_free_cell_overflow(bt, pg, &ci);
  if (rc) goto done;
  int balanced;
  rc = btree_modify_level(c, level, c->idx[level], 1, leaf ? cell + 4 : cell, leaf ? sz : sz + 4,
                          &balanced);
done:
  cursor_release(c);
  shale_free(cell);
  shale_free(pred);
  if (rc) {
    shale_free(key);
    c->state = CUR_INVALID;
    return rc;
  }
  /* Leave the cursor saved at the deleted key (invariant 5). */
  c->state = CUR_REQSEEK;
  c->skip = 0;
  c->saved_rowid = rowid;
  shale_free(c->saved_key);
  c->saved_key = key;
  c->saved_nkey = nkey;
  return SHALE_OK;
}
