/*
 * btree.c -- the Btree object: open/close, transactions, the header, meta
 * values, creating/dropping/clearing trees, cursor lifetime, insert and
 * delete.
 *
 * Owns docs/format.md §1 as far as the b-tree layer is concerned: header
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
 *  5. No parked cursor (btree_cursor_park) outlives the transaction it was
 *     parked in, nor a tree it is on: commit, rollback and drop close them.
 */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
  bt->next_autovac = -1;
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
  shale_free(bt->scratch);
  shale_free(bt->defrag);
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
  bt->cookie_ok = 0;
  bt->autovac = bt->new_autovac != 0;
  bt->incrvac = bt->new_autovac == 2;
  bt->enc = bt->new_enc ? bt->new_enc : 1;
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
  } else if (util_get4(h + 56) > 3) {
    btree_set_error(bt, "unsupported encoding");
    rc = SHALE_ERROR;
  } else if (h[18] > 2) {
    bt->readonly = 1;
    bt->ro_reason = "attempt to write a readonly database (file write version too new)";
  }
  if (rc == SHALE_OK) {
    bt->autovac = util_get4(h + 52) != 0;
    bt->incrvac = util_get4(h + 64) != 0;
    if (util_get4(h + 56)) bt->enc = (int)util_get4(h + 56); /* 0: no schema yet */
    bt->cookie = util_get4(h + 40);
    bt->cookie_dv = pager_data_version(bt->pager);
    bt->cookie_ok = 1;
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
  util_put4(h + 52, bt->autovac ? 1 : 0); /* largest root: sqlite_schema's */
  util_put4(h + 56, bt->new_enc ? (uint32_t)bt->new_enc : 1);
  util_put4(h + 64, bt->incrvac ? 1 : 0);
  util_put4(h + 96, PAGER_VERSION_STAMP);
  page_mem(p1)->init = 0;
  btree_page_zero(bt, p1, PT_TABLE_LEAF);
  pager_unref(p1);
  return SHALE_OK;
}

/* ---- transactions ---- */

int btree_begin(Btree *bt, int level) {
  int rc;
  int started = 0; /* this call opened the read transaction */
  if (level >= BTREE_TXN_WRITE && pager_txn_state(bt->pager) == PAGER_TXN_NONE &&
      !pager_readonly(bt->pager)) {
    /* A write from no transaction: the pager opens the read transaction
     * itself, so that in WAL mode it queues for the process's writer
     * token before taking its snapshot and waits for WRITE with the busy
     * handler (pager_begin_write); a read transaction begun here first
     * would make it try the token once and fail at once. */
    rc = pager_begin_write(bt->pager, level == BTREE_TXN_EXCLUSIVE);
    if (rc) return rc;
    rc = read_header(bt);
    if (rc == SHALE_OK && bt->readonly) {
      btree_set_error(bt, bt->ro_reason);
      rc = SHALE_READONLY;
    }
    if (rc == SHALE_OK && pager_db_size(bt->pager) == 0) {
      set_sizes(bt);
      rc = init_page1(bt);
    }
    if (rc) {
      pager_rollback(bt->pager);
      pager_end_read(bt->pager);
    }
    return rc;
  }
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

/* Close the parked cursors (invariant 5), clearing their owners' slots. */
static void close_parked(Btree *bt) {
  for (BtCursor *c = bt->cursors, *next; c; c = next) {
    next = c->next;
    if (c->parked) btree_cursor_close(c);
  }
}

int btree_commit(Btree *bt) {
  close_parked(bt);
  if (bt->cursors) return SHALE_BUSY;
  int rc = SHALE_OK;
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) {
    rc = btree_autovac_commit(bt);
    return rc ? rc : pager_commit_end_read(bt->pager);
  }
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE) pager_end_read(bt->pager);
  return SHALE_OK;
}

int btree_commit_write(Btree *bt) {
  close_parked(bt);
  if (pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return SHALE_OK;
  int rc = btree_autovac_commit(bt);
  return rc ? rc : pager_commit(bt->pager);
}

int btree_commit_phase1(Btree *bt, const char *super) {
  close_parked(bt);
  if (pager_txn_state(bt->pager) != PAGER_TXN_WRITE) return SHALE_OK;
  int rc = btree_autovac_commit(bt);
  return rc ? rc : pager_commit_phase1(bt->pager, super);
}

int btree_commit_phase2(Btree *bt, int keep_read) {
  int rc = SHALE_OK;
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) rc = pager_commit_phase2(bt->pager);
  if (rc == SHALE_OK && !keep_read && pager_txn_state(bt->pager) != PAGER_TXN_NONE)
    pager_end_read(bt->pager);
  return rc;
}

/* Write the super-journal: the journal paths of bts[i] with want[i], each
 * NUL-terminated, synced (with its directory) unless all of them run with
 * synchronous=OFF. Named after the main database (bts[0]). */
static int super_create(Btree *const *bts, const uint8_t *want, int n, char **name) {
  Pager *mp = bts[0]->pager;
  OsVfs *vfs = pager_vfs(mp);
  char *z = NULL;
  int rc = SHALE_OK, exists = 1;
  for (int tries = 0; exists && tries < 100; tries++) {
    uint32_t r;
    util_random(&r, 4);
    shale_free(z);
    z = util_mprintf("%s-mj%08X", pager_filename(mp), (unsigned)r);
    if (!z) return SHALE_NOMEM;
    rc = vfs->access(vfs, z, OS_ACCESS_EXISTS, &exists);
    if (rc) break;
  }
  if (rc == SHALE_OK && exists) rc = SHALE_FULL;
  size_t len = 0;
  int sync = 0;
  for (int i = 0; i < n && rc == SHALE_OK; i++) {
    if (!want[i]) continue;
    len += strlen(pager_journal_path(bts[i]->pager)) + 1;
    if (pager_synchronous(bts[i]->pager) != PAGER_SYNC_OFF) sync = 1;
  }
  char *buf = rc == SHALE_OK ? shale_malloc(len + 1) : NULL;
  if (rc == SHALE_OK && !buf) rc = SHALE_NOMEM;
  if (rc != SHALE_OK) {
    shale_free(z);
    return rc;
  }
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    if (!want[i]) continue;
    const char *j = pager_journal_path(bts[i]->pager);
    memcpy(buf + at, j, strlen(j) + 1);
    at += strlen(j) + 1;
  }
  OsFile *f = NULL;
  rc = os_open_alloc(
      vfs, z,
      SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_EXCLUSIVE | SHALE_OPEN_SUPER_JOURNAL,
      NULL, &f);
  if (rc == SHALE_OK) rc = os_write(f, buf, (int)len, 0);
  if (rc == SHALE_OK && sync) rc = os_sync(f, OS_SYNC_NORMAL);
  int opened = f != NULL;
  os_close_free(f);
  shale_free(buf);
  if (rc != SHALE_OK) {
    if (opened) vfs->delete (vfs, z, 0);
    shale_free(z);
    return rc;
  }
  *name = z;
  return SHALE_OK;
}

int btree_commit_super(Btree *const *bts, int n, int keep_read, int *done) {
  *done = 0;
  uint8_t want[64];
  int k = 0;
  if (n <= 0 || n > 64 || !bts[0] || pager_is_memory(bts[0]->pager)) return SHALE_OK;
  for (int i = 0; i < n; i++) {
    want[i] = (uint8_t)(bts[i] && pager_txn_state(bts[i]->pager) == PAGER_TXN_WRITE &&
                        pager_commit_wants_super(bts[i]->pager));
    k += want[i];
  }
  if (k < 2) return SHALE_OK;
  *done = 1;
  char *super = NULL;
  int rc = super_create(bts, want, n, &super);
  for (int i = 0; i < n && rc == SHALE_OK; i++)
    if (want[i]) rc = btree_commit_phase1(bts[i], super);
  if (super) {
    OsVfs *vfs = pager_vfs(bts[0]->pager);
    int r2 = vfs->delete (vfs, super, 1); /* the commit point */
    if (rc == SHALE_OK) rc = r2;
    shale_free(super);
  }
  if (rc != SHALE_OK) {
    for (int i = 0; i < n; i++)
      if (want[i]) btree_rollback(bts[i]);
    return rc;
  }
  for (int i = 0; i < n; i++) {
    if (!want[i]) continue;
    int r2 = btree_commit_phase2(bts[i], keep_read);
    if (rc == SHALE_OK) rc = r2;
  }
  return rc;
}

static void abort_cursors(Btree *bt, int rc) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    btree_cursor_release(c);
    if (c->saved_key) {
      shale_free(c->saved_key);
      c->saved_key = NULL;
    }
    c->state = CUR_FAULT;
    c->fault_rc = rc;
  }
}

int btree_rollback(Btree *bt) {
  close_parked(bt);
  abort_cursors(bt, SHALE_ABORT_ROLLBACK);
  bt->cookie_ok = 0;
  int rc = SHALE_OK;
  if (pager_txn_state(bt->pager) == PAGER_TXN_WRITE) rc = pager_rollback(bt->pager);
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE) pager_end_read(bt->pager);
  return rc;
}

int btree_savepoint_open(Btree *bt, int n) { return pager_savepoint_open(bt->pager, n); }
int btree_savepoint_release(Btree *bt, int idx) { return pager_savepoint_release(bt->pager, idx); }

int btree_savepoint_rollback(Btree *bt, int idx) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    int rc = btree_cursor_save(c);
    if (rc) return rc;
  }
  bt->cookie_ok = 0;
  int rc = pager_savepoint_rollback(bt->pager, idx);
  set_sizes(bt);
  if (rc == SHALE_OK && pager_db_size(bt->pager) > 0) {
    /* PRAGMA auto_vacuum may have changed offset 64 within the savepoint */
    PgPage *p1;
    if (pager_get(bt->pager, 1, 0, &p1) == SHALE_OK) {
      bt->incrvac = util_get4(pager_data(p1) + 64) != 0;
      pager_unref(p1);
    }
  }
  return rc;
}

/* ---- cursors bookkeeping ---- */

int btree_save_cursors(Btree *bt, uint32_t root, BtCursor *except) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c == except || c->root != root) continue;
    int rc = btree_cursor_save(c);
    if (rc) return rc;
  }
  return SHALE_OK;
}

void btree_invalidate_cursors(Btree *bt, uint32_t root, BtCursor *except) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c == except || c->root != root) continue;
    if (c->state == CUR_FAULT) continue;
    btree_cursor_release(c);
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
   * (its overflow-list and deleted-key buffers too) instead of allocating. */
  BtCursor *c = bt->spare;
  uint32_t *ovfl = NULL, ovfl_alloc = 0, delcap = 0;
  uint8_t *delkey = NULL;
  if (c) {
    bt->spare = c->next;
    bt->nspare--;
    ovfl = c->ovfl;
    ovfl_alloc = c->ovfl_alloc;
    delkey = c->delkey;
    delcap = c->delcap;
  } else {
    c = shale_malloc(sizeof *c);
    if (!c) return SHALE_NOMEM;
  }
  /* Zero every field except the page stack: pg[] and idx[] are read only
   * below depth, which is zeroed here, so a reused cursor skips ~200 bytes
   * of stores. */
  memset(c, 0, offsetof(BtCursor, pg));
  memset(&c->info_ok, 0, sizeof *c - offsetof(BtCursor, info_ok));
  c->ovfl = ovfl;
  c->ovfl_alloc = ovfl_alloc;
  c->delkey = delkey;
  c->delcap = delcap;
  c->bt = bt;
  c->root = root;
  c->wrflag = wrflag;
  c->cmp = cmp;
  c->cmp_ctx = cmp_ctx;
  c->state = CUR_INVALID;
  for (BtCursor *o = bt->cursors; o; o = o->next) {
    if (o->root == root) o->shared = c->shared = 1;
  }
  c->next = bt->cursors;
  bt->cursors = c;
  *out = c;
  return SHALE_OK;
}

int btree_cursor_park(BtCursor *c, BtCursor **slot) {
  assert(*slot == c);
  if (c->state == CUR_FAULT) return 0;
  c->parked = slot;
  return 1;
}

void btree_cursor_unpark(BtCursor *c) { c->parked = NULL; }

void btree_cursor_close(BtCursor *c) {
  if (!c) return;
  Btree *bt = c->bt;
  if (c->parked) *c->parked = NULL;
  btree_cursor_release(c);
  for (BtCursor **pp = &bt->cursors; *pp; pp = &(*pp)->next) {
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  }
  if (c->saved_key) {
    shale_free(c->saved_key);
    c->saved_key = NULL;
  }
  if (bt->nspare < BTREE_SPARE_CURSORS) {
    c->next = bt->spare;
    bt->spare = c;
    bt->nspare++;
    return;
  }
  shale_free(c->ovfl);
  shale_free(c->delkey);
  shale_free(c);
}

/* Free the kept cursors (btree_close). */
static void free_spares(Btree *bt) {
  while (bt->spare) {
    BtCursor *c = bt->spare;
    bt->spare = c->next;
    shale_free(c->ovfl);
    shale_free(c->delkey);
    shale_free(c);
  }
  bt->nspare = 0;
}

/* ---- tree creation and removal ---- */

static int set_largest_root(Btree *bt, uint32_t v) {
  PgPage *p1;
  int rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  rc = pager_write(p1);
  if (rc == SHALE_OK) util_put4(pager_data(p1) + 52, v);
  pager_unref(p1);
  return rc;
}

/* Save every cursor (before pages of any tree move). */
static int save_all(Btree *bt) {
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    int rc = btree_cursor_save(c);
    if (rc) return rc;
  }
  return SHALE_OK;
}

/* Auto-vacuum: the new root goes right after the largest one (as SQLite),
 * moving whatever page is there to a free one. */
static int create_root_autovac(Btree *bt, PgPage **out, uint32_t *root) {
  uint32_t largest;
  int rc = btree_get_meta(bt, BTREE_META_LARGEST_ROOT, &largest);
  if (rc) return rc;
  uint32_t want = largest + 1;
  while (btree_ptrmap_is_page(bt, want) || want == btree_lockbyte_page(bt)) want++;
  if (want > pager_db_size(bt->pager) + 2) return BT_CORRUPT(bt, 1, "largest root page too big");
  PgPage *pg;
  uint32_t got;
  rc = btree_alloc_page_mode(bt, want, BTALLOC_EXACT, &pg, &got);
  if (rc) return rc;
  if (got != want && want > pager_db_size(bt->pager)) {
    pager_unref(pg);
    return BT_CORRUPT(bt, want, "free pages but none after the largest root");
  }
  if (got != want) {
    /* page `want` is in use: it moves to the page just allocated */
    int type;
    uint32_t parent;
    rc = save_all(bt);
    if (rc == SHALE_OK) rc = btree_ptrmap_get(bt, want, &type, &parent);
    if (rc == SHALE_OK && (type == PTRMAP_ROOT || type == PTRMAP_FREE))
      rc = BT_CORRUPT(bt, want, "page after the largest root is a root or free");
    if (rc == SHALE_OK) rc = btree_relocate(bt, want, type, parent, pg);
    pager_unref(pg);
    if (rc) return rc;
    rc = pager_get(bt->pager, want, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc) {
      pager_unref(pg);
      return rc;
    }
    memset(pager_data(pg), 0, bt->page_size);
    page_mem(pg)->init = 0;
  }
  rc = btree_ptrmap_put(bt, want, PTRMAP_ROOT, 0);
  if (rc == SHALE_OK) rc = set_largest_root(bt, want);
  if (rc) {
    pager_unref(pg);
    return rc;
  }
  *out = pg;
  *root = want;
  return SHALE_OK;
}

int btree_create_table(Btree *bt, int kind, uint32_t *root) {
  int rc = can_write(bt);
  if (rc) return rc;
  if (kind != BTREE_INTKEY && kind != BTREE_BLOBKEY) return SHALE_MISUSE;
  PgPage *pg;
  uint32_t pgno;
  if (bt->autovac) {
    rc = create_root_autovac(bt, &pg, &pgno);
  } else {
    /* hint page 1: from the freelist SQLite takes the page nearest the
     * start of the file for a new root, so Shale's roots equal SQLite's */
    rc = btree_alloc_page(bt, 1, &pg, &pgno);
  }
  if (rc) return rc;
  btree_page_zero(bt, pg, kind == BTREE_INTKEY ? PT_TABLE_LEAF : PT_INDEX_LEAF);
  pager_unref(pg);
  *root = pgno;
  return SHALE_OK;
}

/* Does leaf cell i of pg show by its payload size alone (a one- or
 * two-byte varint within the page's local maximum) that it has no overflow
 * chain? Then clearing it frees nothing and its cell need not be parsed.
 * Bytes read lie below the usable size (cell pointers were checked when
 * the page was loaded). */
static int leaf_cell_local(const Btree *bt, PgPage *pg, int i, int intkey) {
  const uint8_t *d = pager_data(pg);
  uint32_t off = page_cell_off(pg, i);
  if (off + 2 > bt->usable) return 0;
  uint32_t n = d[off];
  if (n >= 0x80) {
    if (d[off + 1] >= 0x80) return 0;
    n = (n & 0x7f) << 7 | d[off + 1];
  }
  return n <= (intkey ? bt->max_leaf : bt->max_local);
}

/* Free every page below pgno (and pgno itself if free_it), counting entries. */
static int clear_page(Btree *bt, uint32_t pgno, int depth, int free_it, int64_t *count) {
  if (depth >= BT_MAX_DEPTH) return BT_CORRUPT(bt, pgno, "tree too deep (cycle?)");
  PgPage *pg;
  /* lazily: a cell is validated only where it is parsed (one that may
   * have an overflow chain to free) */
  int rc = btree_page_get_lazy(bt, pgno, &pg);
  if (rc) return rc;
  MemPage *m = page_mem(pg);
  int leaf = m->leaf, intkey = m->intkey, n = m->ncell;
  uint32_t right = leaf ? 0 : page_right(pg);
  for (int i = 0; i < n && rc == SHALE_OK; i++) {
    if (leaf && leaf_cell_local(bt, pg, i, intkey)) { /* nothing to free */
      (*count)++;
      continue;
    }
    if (!m->init || m->ncell != n) {
      rc = BT_CORRUPT(bt, pgno, "page changed while being cleared");
      break;
    }
    CellInfo ci;
    rc = btree_page_cell_parse(bt, pg, i, &ci);
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
    if (rc == SHALE_OK) btree_page_zero(bt, pg, intkey ? PT_TABLE_LEAF : PT_INDEX_LEAF);
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

/* Serial type and bytes of an integer column holding v (> 1). */
static int int_serial(uint32_t v, int *nbytes) {
  if (v <= 127) return *nbytes = 1, 1;
  if (v <= 32767) return *nbytes = 2, 2;
  if (v <= 8388607) return *nbytes = 3, 3;
  return *nbytes = 4, 4;
}

/* sqlite_schema rows whose rootpage (column 3) is `from` get `to` (the
 * UPDATE SQLite's DROP codes after a root moved). Rows that are not
 * 5-column records are left alone. */
static int schema_root_moved(Btree *bt, uint32_t from, uint32_t to) {
  BtCursor *c;
  int rc = btree_cursor_open(bt, 1, 1, NULL, NULL, &c);
  if (rc) return rc;
  int eof = 0;
  uint8_t *rec = NULL, *out = NULL;
  rc = btree_first(c, &eof);
  while (rc == SHALE_OK && !eof) {
    uint32_t n = btree_payload_size(c);
    shale_free(rec);
    rec = shale_malloc((size_t)n + 16);
    if (!rec) {
      rc = SHALE_NOMEM;
      break;
    }
    memset(rec + n, 0, 16);
    rc = btree_payload_read(c, 0, n, rec);
    if (rc) break;
    uint64_t hsz, st[5];
    int p = util_get_varint(rec, &hsz), ok = hsz <= n;
    uint32_t body = (uint32_t)hsz, off3 = 0, len3 = 0;
    for (int i = 0; i < 5 && ok; i++) {
      if ((uint32_t)p >= hsz) {
        ok = 0;
        break;
      }
      p += util_get_varint(rec + p, &st[i]);
      uint32_t len = st[i] >= 12 ? (uint32_t)((st[i] - 12) / 2)
                                 : (uint32_t)(st[i] == 5                 ? 6
                                              : st[i] == 6 || st[i] == 7 ? 8
                                              : st[i] < 5                ? st[i]
                                                                         : 0);
      if (i == 3) {
        off3 = body;
        len3 = len;
      }
      body += len;
    }
    ok = ok && (uint32_t)p == hsz && body == n && st[3] >= 1 && st[3] <= 4;
    if (ok) {
      uint32_t v = 0;
      for (uint32_t k = 0; k < len3; k++) v = (v << 8) | rec[off3 + k];
      if (len3 < 4 && (rec[off3] & 0x80)) ok = 0; /* negative */
      if (ok && v == from) {
        int nb;
        int t = int_serial(to, &nb);
        shale_free(out);
        out = shale_malloc((size_t)n + 8);
        if (!out) {
          rc = SHALE_NOMEM;
          break;
        }
        /* header: serial types are one byte each for types 1..4 */
        uint32_t hpos = 0;
        int q = util_get_varint(rec, &hsz);
        for (int i = 0; i < 3; i++) {
          uint64_t x;
          q += util_get_varint(rec + q, &x);
        }
        hpos = (uint32_t)q; /* where column 3's serial type is */
        memcpy(out, rec, hpos);
        out[hpos] = (uint8_t)t;
        memcpy(out + hpos + 1, rec + hpos + 1, off3 - hpos - 1);
        for (int k = 0; k < nb; k++) out[off3 + k] = (uint8_t)(to >> (8 * (nb - 1 - k)));
        memcpy(out + off3 + nb, rec + off3 + len3, n - off3 - len3);
        uint32_t nn = n - len3 + (uint32_t)nb;
        rc = btree_insert(c, btree_rowid(c), out, nn, 0, 0);
        if (rc) break;
      }
    }
    rc = btree_next(c, &eof);
  }
  shale_free(rec);
  shale_free(out);
  btree_cursor_close(c);
  return rc;
}

int btree_drop_table(Btree *bt, uint32_t root) {
  int rc = can_write(bt);
  if (rc) return rc;
  if (root < 2) return SHALE_MISUSE;
  close_parked(bt);
  for (BtCursor *c = bt->cursors; c; c = c->next) {
    if (c->root == root) return SHALE_LOCKED;
  }
  int64_t n = 0;
  if (!bt->autovac) return clear_page(bt, root, 0, 1, &n);
  /* Auto-vacuum: roots stay at the start of the file. The largest root
   * moves into the dropped one's page (and its sqlite_schema row follows). */
  uint32_t largest;
  rc = btree_get_meta(bt, BTREE_META_LARGEST_ROOT, &largest);
  if (rc == SHALE_OK) rc = clear_page(bt, root, 0, root == largest, &n);
  if (rc) return rc;
  if (root != largest) {
    if (largest > pager_db_size(bt->pager) || largest < root)
      return BT_CORRUPT(bt, 1, "largest root page out of range");
    PgPage *to;
    rc = save_all(bt);
    if (rc == SHALE_OK) rc = pager_get(bt->pager, root, 0, &to);
    if (rc) return rc;
    rc = btree_relocate(bt, largest, PTRMAP_ROOT, 0, to);
    pager_unref(to);
    if (rc == SHALE_OK) rc = btree_free_page(bt, largest);
    if (rc == SHALE_OK) rc = schema_root_moved(bt, largest, root);
    if (rc) return rc;
  }
  do {
    largest--;
  } while (largest > 1 &&
           (largest == btree_lockbyte_page(bt) || btree_ptrmap_is_page(bt, largest)));
  return set_largest_root(bt, largest);
}

/* ---- meta ---- */

int btree_get_meta(Btree *bt, int idx, uint32_t *out) {
  *out = 0;
  if (idx < 0 || idx > 8) return SHALE_RANGE;
  if (pager_txn_state(bt->pager) == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (pager_db_size(bt->pager) == 0) return SHALE_OK;
  if (idx == BTREE_META_SCHEMA_COOKIE && bt->cookie_ok &&
      bt->cookie_dv == pager_data_version(bt->pager)) {
    *out = bt->cookie; /* checked by every statement run: page 1 unread */
    return SHALE_OK;
  }
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
  bt->cookie_ok = 0;
  PgPage *p1;
  rc = pager_get(bt->pager, 1, 0, &p1);
  if (rc) return rc;
  rc = pager_write(p1);
  if (rc == SHALE_OK) util_put4(pager_data(p1) + 36 + 4 * idx, value);
  pager_unref(p1);
  if (rc == SHALE_OK && idx == BTREE_META_INCR_VACUUM) bt->incrvac = value != 0;
  return rc;
}

/* ---- auto-vacuum mode ---- */

int btree_set_auto_vacuum(Btree *bt, int mode) {
  if (mode < 0 || mode > 2) mode = 0;
  bt->next_autovac = mode;
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE && pager_db_size(bt->pager) > 0) {
    /* a file with content keeps its kind (VACUUM converts it) */
    return (mode != 0) != (bt->autovac != 0) ? SHALE_READONLY : SHALE_OK;
  }
  /* empty (or not read yet: decided at the next read transaction) */
  bt->new_autovac = mode;
  bt->autovac = mode != 0;
  bt->incrvac = mode == 2;
  return SHALE_OK;
}

int btree_get_auto_vacuum(Btree *bt) {
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE && pager_db_size(bt->pager) > 0)
    return bt->autovac ? (bt->incrvac ? 2 : 1) : 0;
  return bt->new_autovac;
}

int btree_next_auto_vacuum(Btree *bt) { return bt->next_autovac; }

/* ---- text encoding ---- */

int btree_text_encoding(Btree *bt) {
  if (pager_txn_state(bt->pager) != PAGER_TXN_NONE && pager_db_size(bt->pager) > 0) return bt->enc;
  return bt->new_enc ? bt->new_enc : 1;
}

void btree_set_new_encoding(Btree *bt, int enc) {
  bt->new_enc = enc;
  if (pager_txn_state(bt->pager) == PAGER_TXN_NONE || pager_db_size(bt->pager) == 0) bt->enc = enc;
}

/* ---- insert / delete ---- */

static int prepare_write(BtCursor *c) {
  if (c->state == CUR_FAULT) return c->fault_rc;
  if (!c->wrflag) return SHALE_READONLY;
  int rc = can_write(c->bt);
  if (rc) return rc;
  if (!c->kind_known) {
    rc = btree_cursor_move_to_root(c);
    if (rc) return rc;
  }
  return c->shared ? btree_save_cursors(c->bt, c->root, c) : SHALE_OK;
}

/* The comparison an index insert seeks with: the caller's (cmp != NULL) or
 * the cursor's own over the packed key. */
typedef struct InsertSeek {
  int (*cmp)(void *, const void *, uint32_t);
  void *ctx;
} InsertSeek;

/* The seek for an index entry's place; force: the key is expected next
 * to the cursor (btree_cursor_seek_cmp). */
static int seek_key_with(BtCursor *c, const InsertSeek *is, const void *key, uint32_t nkey,
                         int force, int *res) {
  return is && is->cmp ? btree_cursor_seek_cmp(c, is->cmp, is->ctx, force, res)
                       : btree_cursor_seek_key(c, key, nkey, force, res);
}

/* After an insert that rebalanced (the stack is gone): the cursor is left
 * saved at the new entry (CUR_REQSEEK, as btree_cursor_save leaves it), so
 * that it is sought again only when it is read or moved before its next
 * seek; an insert's own seek needs no position (SQLite's
 * BTREE_SAVEPOSITION). An index key is copied; the caller frees nothing. */
static int save_at_new(BtCursor *c, int64_t rowid, const void *key, uint32_t nkey) {
  if (!c->intkey) {
    int rc = btree_cursor_save_key(c, key, nkey);
    if (rc) return rc;
  } else if (c->saved_key) {
    shale_free(c->saved_key);
    c->saved_key = NULL;
  }
  c->saved_rowid = rowid;
  c->state = CUR_REQSEEK;
  c->skip = 0;
  c->deleted = 0;
  c->sought = 0;
  return SHALE_OK;
}

uint8_t *btree_kept_buffer(uint8_t **buf, uint32_t *cap, uint32_t need) {
  if (*cap < need) {
    shale_free(*buf);
    *cap = 0;
    *buf = shale_malloc(need);
    if (!*buf) return NULL;
    *cap = need;
  }
  return *buf;
}

uint8_t *btree_cell_scratch(Btree *bt) {
  return btree_kept_buffer(&bt->scratch, &bt->nscratch, bt->page_size + 64);
}

/* Is the cursor on the table entry `rowid`, its cell parsed (an UPDATE
 * rewriting the row it read through the cursor)? Then no seek is needed. */
static int on_rowid(BtCursor *c, int64_t rowid) {
  if (c->state != CUR_VALID || !c->info_ok || c->skip || c->depth == 0) return 0;
  MemPage *m = page_mem(c->pg[c->depth - 1]);
  return m->init && m->leaf && c->info.key == rowid && c->idx[c->depth - 1] < m->ncell;
}

/* Is the cursor on the last entry of its table tree, with a rowid below
 * `rowid`? Then an insert of rowid goes right after it, no seek needed. */
static int at_last_below(BtCursor *c, int64_t rowid) {
  int64_t last;
  return btree_cursor_at_last(c) && btree_cursor_rowid(c, &last) == SHALE_OK && last < rowid;
}

/* The insert of a table row whose cell needs no overflow page, written
 * straight into the leaf the cursor is on (res as the seek left it): over
 * the old cell when it is replaced by one of the same size, in place of it
 * when the size differs but the page still holds the row (no overflow on
 * either side: an UPDATE), or into free room of the page for a new rowid.
 * Returns 1 when done (*rc set), 0 when the general path must run (the
 * page would need a rebalance). */
static int insert_in_place(BtCursor *c, int res, int64_t rowid, const void *data, uint32_t n,
                           uint32_t nzero, int *rc) {
  Btree *bt = c->bt;
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  uint64_t np = (uint64_t)n + nzero;
  if (!m->leaf || np > bt->max_leaf) return 0;
  uint32_t sz = (uint32_t)(bt_varint_len(np) + bt_varint_len((uint64_t)rowid) + np);
  uint8_t *at;
  int idx = c->idx[level];
  if (c->state == CUR_VALID && res == 0) {
    CellInfo ci;
    if (c->info_ok) /* the row was read through the cursor (an UPDATE) */
      ci = c->info;
    else if ((*rc = btree_page_cell_parse(bt, pg, idx, &ci)) != SHALE_OK)
      return 1;
    if (ci.ovfl) return 0;
    if (ci.size == sz && ci.npayload == np && ci.payoff + np == ci.size) {
      /* same rowid and payload size: the cell header stays, only the
       * payload is written over -- unless it holds these bytes already (an
       * UPDATE that changed no value): then the page is not written */
      const uint8_t *old = pager_data(pg) + page_cell_off(pg, idx) + ci.payoff;
      if (nzero || memcmp(old, data, n) != 0) {
        if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
        uint8_t *pay = pager_data(pg) + page_cell_off(pg, idx) + ci.payoff;
        memcpy(pay, data, n);
        if (nzero) memset(pay + n, 0, nzero);
      }
      c->novfl = 0;
      c->skip = 0;
      return 1; /* the cell's info (c->info) is unchanged */
    }
    if (ci.size == sz) {
      if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
      at = pager_data(pg) + page_cell_off(pg, idx);
    } else {
      /* the old cell's room (and pointer) is given back first */
      uint32_t olda = ci.size < 4 ? 4 : ci.size, newa = sz < 4 ? 4 : sz;
      if (m->nfree + olda < newa) return 0;
      if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
      if ((*rc = btree_page_drop_cell(bt, pg, idx, ci.size)) != SHALE_OK) return 1;
      if ((*rc = btree_page_insert_space(bt, pg, idx, sz, &at)) != SHALE_OK) return 1;
    }
  } else {
    if (m->nfree < (sz < 4 ? 4 : sz) + 2) return 0;
    if (c->state == CUR_VALID && res < 0) idx++;
    if (c->state != CUR_VALID) idx = 0;
    if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
    if ((*rc = btree_page_insert_space(bt, pg, idx, sz, &at)) != SHALE_OK) return 1;
    c->idx[level] = (uint16_t)idx;
  }
  uint32_t built;
  *rc = btree_build_cell(bt, pager_pgno(pg), 1, rowid, data, n, nzero, at, &built);
  assert(*rc != SHALE_OK || built == sz);
  c->info_ok = 0;
  c->novfl = 0;
  c->state = CUR_VALID;
  c->skip = 0;
  return 1;
}

/* The insert of a new index key whose cell needs no overflow page into
 * free room of the leaf the cursor is on (res as the seek left it, not on
 * an equal entry): the cell (payload size, key) is written straight into
 * the page, no cell buffer. Returns 1 when done (*rc set), 0 when the
 * general path must run (an equal entry to replace, a spill, or a page
 * that needs a rebalance). */
static int index_insert_in_place(BtCursor *c, int res, const uint8_t *key, uint32_t nkey, int *rc) {
  Btree *bt = c->bt;
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  if (!m->leaf || nkey > bt->max_local || (c->state == CUR_VALID && res == 0)) return 0;
  uint32_t hdr = (uint32_t)bt_varint_len(nkey), sz = hdr + nkey;
  if (m->nfree < (sz < 4 ? 4 : sz) + 2) return 0;
  int idx = c->state != CUR_VALID ? 0 : res < 0 ? c->idx[level] + 1 : c->idx[level];
  uint8_t *at;
  if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
  if ((*rc = btree_page_insert_space(bt, pg, idx, sz, &at)) != SHALE_OK) return 1;
  bt_put_varint(at, nkey);
  memcpy(at + hdr, key, nkey);
  c->idx[level] = (uint16_t)idx;
  c->info_ok = 0;
  c->novfl = 0;
  c->state = CUR_VALID;
  c->skip = 0;
  return 1;
}

static int insert_entry(BtCursor *c, int64_t rowid, const void *data, uint32_t n, uint32_t nzero,
                        const InsertSeek *is, int flags) {
  Btree *bt = c->bt;
  int rc = prepare_write(c);
  if (rc) return rc;
  if (is && c->intkey) return SHALE_MISUSE; /* a key comparison on a table tree */
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
  int res = 0, balanced_any = 0;
  (void)balanced_any; /* read by debug builds only */
  /* the place a seek for a prefix of the key found (BTREE_SEEKRESULT):
   * valid while the cursor has not moved (c->seekres is cleared then) */
  const int seekres =
      (flags & BTREE_SEEKRESULT) && !c->intkey && c->state == CUR_VALID && c->depth > 0 ? c->seekres
                                                                                        : 0;
  c->seekres = 0;
  if (seekres) {
    res = seekres;
  } else if (c->intkey && on_rowid(c, rowid)) {
    res = 0; /* the cursor is on the row it replaces */
  } else if (c->intkey && at_last_below(c, rowid)) {
    res = -1; /* appending: the cursor already sits where the row goes */
  } else if (c->intkey) {
    rc = (flags & BTREE_APPEND) ? btree_cursor_seek_rowid_append(c, rowid, &res)
                                : btree_cursor_seek_rowid(c, rowid, &res);
    if (rc) goto done;
  } else {
    /* An index key is looked for next to the cursor first when it was
     * just placed by a seek (sought: a UNIQUE check sought the new key's
     * columns), by the previous insert at its leaf's end (an ascending
     * run), or by a delete (an UPDATE of an indexed column deletes the
     * old key, then inserts the new one, often next to it). */
    int force = c->sought || (c->deleted && c->skip != 0);
    rc = seek_key_with(c, is, key, nkey, force, &res);
    if (rc) goto done;
  }
  if (c->intkey && c->depth > 0 && insert_in_place(c, res, rowid, data, n, nzero, &rc)) goto done;
  if (!c->intkey && c->depth > 0 && index_insert_in_place(c, res, key, nkey, &rc)) {
    if (rc) goto done;
    goto placed;
  }
  uint8_t *cell = btree_cell_scratch(bt);
  if (!cell) {
    rc = SHALE_NOMEM;
    goto done;
  }
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  int idx = c->idx[level];
  uint32_t sz, dsz = 0;
  int interior = !m->leaf;
  rc = btree_build_cell(bt, pager_pgno(pg), c->intkey, rowid, key, c->intkey ? n : nkey, nzero,
                        cell + 4, &sz);
  if (rc) goto done;
  if (c->state == CUR_VALID && res == 0) {
    CellInfo ci;
    rc = btree_page_cell_parse(bt, pg, idx, &ci);
    if (rc) goto done;
    rc = btree_free_cell_overflow(bt, pg, &ci);
    if (rc) goto done;
    dsz = ci.size;
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
  rc = btree_modify_level(c, level, idx, dsz, interior ? cell : cell + 4, sz, &balanced);
  if (rc) goto done;
  balanced_any = balanced;
  if (balanced) {
    rc = save_at_new(c, rowid, key, nkey);
  } else {
    c->state = CUR_VALID;
    c->skip = 0;
  }
placed:
  if (rc == SHALE_OK && !c->intkey) {
    /* An index entry that became its leaf's last one: the next key of an
     * ascending run goes right after it (the seek tries there first). */
    int l = c->depth - 1;
    c->sought = l >= 0 && page_mem(c->pg[l])->leaf && c->idx[l] + 1 == page_mem(c->pg[l])->ncell;
  }
done:
  if (rc) {
    btree_cursor_release(c);
    c->state = CUR_INVALID;
  }
  shale_free(keybuf);
  if (rc == SHALE_OK) {
    SHALE_VALIDATE(btree_cursor_check(c));
#ifdef SHALE_DEBUG
    /* after a balance, every page on the path was rewritten: check its cells */
    if (balanced_any)
      for (int l = 0; l < c->depth; l++) SHALE_VALIDATE(btree_page_check_cells(bt, c->pg[l]));
#endif
  }
  return rc;
}

int btree_insert(BtCursor *c, int64_t rowid, const void *data, uint32_t n, uint32_t nzero,
                 int flags) {
  return insert_entry(c, rowid, data, n, nzero, NULL, flags);
}

int btree_insert_cmp(BtCursor *c, const void *key, uint32_t n,
                     int (*cmp)(void *ctx, const void *key, uint32_t n), void *ctx, int flags) {
  InsertSeek is = {cmp, ctx};
  return insert_entry(c, 0, key, n, 0, &is, flags);
}

/* The delete of the leaf entry under the cursor when its page keeps enough
 * content not to be rebalanced (btree_modify_level's rule: a non-root page
 * keeps at least one cell and a third of its room): the cell is dropped in
 * place. Returns 1 when done (*rc set), 0 when the page must be
 * rebalanced (nothing changed). */
static int delete_in_place(BtCursor *c, int *rc) {
  Btree *bt = c->bt;
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  MemPage *m = page_mem(pg);
  CellInfo ci;
  *rc = SHALE_OK;
  if (c->info_ok)
    ci = c->info; /* the entry was read through the cursor */
  else if ((*rc = btree_page_cell_parse(bt, pg, c->idx[level], &ci)) != SHALE_OK)
    return 1;
  if (level > 0) {
    uint32_t cap = btree_page_capacity(bt, pg, 1), a = ci.size < 4 ? 4 : ci.size;
    if (m->ncell <= 1 || m->nfree + a + 2 > cap || cap - (m->nfree + a + 2) < cap / 3) return 0;
  }
  if ((*rc = btree_free_cell_overflow(bt, pg, &ci)) != SHALE_OK) return 1;
  if ((*rc = pager_write(pg)) != SHALE_OK) return 1;
  *rc = btree_page_drop_cell(bt, pg, c->idx[level], ci.size);
  return 1;
}

/* Delete the leaf entry under the cursor (no repositioning); *balanced
 * when the page was rebalanced (the cursor's stack is then stale). */
static int delete_leaf_entry(BtCursor *c, int *balanced) {
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  CellInfo ci;
  *balanced = 0;
  int rc = btree_page_cell_parse(c->bt, pg, c->idx[level], &ci);
  if (rc) return rc;
  rc = btree_free_cell_overflow(c->bt, pg, &ci);
  if (rc) return rc;
  return btree_modify_level(c, level, c->idx[level], ci.size, NULL, 0, balanced);
}

/* After a leaf delete that left the page as it was but for the cell: the
 * cursor stays on the page, on the next entry with next() staying there,
 * or (the leaf's last cell gone) on the previous one with prev() staying
 * there (invariant 5 without a re-seek, SQLite's skipNext). */
static void keep_after_delete(BtCursor *c) {
  int level = c->depth - 1;
  MemPage *m = page_mem(c->pg[level]);
  c->info_ok = 0;
  c->novfl = 0;
  c->state = CUR_VALID;
  c->deleted = 1;
  if (c->idx[level] < m->ncell) {
    c->skip = 1;
  } else if (m->ncell > 0) {
    c->idx[level] = (uint16_t)(m->ncell - 1);
    c->skip = -1;
  } else { /* an empty root leaf: the tree is empty */
    btree_cursor_release(c);
    c->state = CUR_INVALID;
    c->skip = 0;
  }
}

int btree_delete(BtCursor *c) {
  Btree *bt = c->bt;
  int rc = btree_cursor_restore(c);
  if (rc) return rc;
  c->seekres = 0; /* the tree changes under the place a seek found */
  if (c->state != CUR_VALID) return SHALE_MISUSE;
  if (c->skip != 0) return SHALE_MISUSE; /* its entry is already gone */
  rc = prepare_write(c);
  if (rc) return rc;
  int64_t rowid = 0;
  uint8_t *pred = NULL;
  uint32_t npred = 0, predcap = 0;
  uint8_t *cell = NULL;
  int leaf = page_mem(c->pg[c->depth - 1])->leaf, balanced;
  CellInfo *inf;
  rc = btree_cursor_info(c, &inf); /* parsed once: the key, then the drop */
  if (rc) goto done;
  if (c->intkey) {
    rowid = inf->key;
  } else if (inf->nlocal == inf->npayload) { /* the key kept, from the page */
    uint8_t *k = btree_kept_buffer(&c->delkey, &c->delcap, inf->npayload ? inf->npayload : 1);
    if (!k) {
      rc = SHALE_NOMEM;
      goto done;
    }
    memcpy(k, page_cell(c->pg[c->depth - 1], c->idx[c->depth - 1]) + inf->payoff, inf->npayload);
    c->ndelkey = inf->npayload;
  } else {
    rc = btree_cursor_key_copy(c, &c->delkey, &c->delcap, &c->ndelkey);
    if (rc) goto done;
  }
  if (leaf) {
    balanced = 0;
    if (!delete_in_place(c, &rc)) rc = delete_leaf_entry(c, &balanced);
    if (rc == SHALE_OK && !balanced) {
      /* the deleted key stays kept (delkey): btree_cursor_save falls back to it */
      c->saved_rowid = rowid;
      shale_free(c->saved_key);
      c->saved_key = NULL;
      keep_after_delete(c);
      SHALE_VALIDATE(btree_cursor_check(c));
      return SHALE_OK;
    }
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
  rc = btree_cursor_key_copy(c, &pred, &predcap, &npred);
  if (rc) goto done;
  rc = delete_leaf_entry(c, &balanced);
  if (rc) goto done;
  int res;
  rc = btree_cursor_seek_key(c, c->delkey, c->ndelkey, 0, &res);
  if (rc) goto done;
  if (res != 0) {
    rc = BT_CORRUPT(bt, c->root, "entry lost while deleting");
    goto done;
  }
  /* E may have moved (even down into a leaf, by a merge); wherever it is,
   * the predecessor, no longer in the tree, takes its cell. */
  int level = c->depth - 1;
  PgPage *pg = c->pg[level];
  leaf = page_mem(pg)->leaf;
  CellInfo ci;
  rc = btree_page_cell_parse(bt, pg, c->idx[level], &ci);
  if (rc) goto done;
  cell = btree_cell_scratch(bt);
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
  rc = btree_modify_level(c, level, c->idx[level], ci.size, leaf ? cell + 4 : cell,
                          leaf ? sz : sz + 4, &balanced);
done:
  btree_cursor_release(c);
  shale_free(pred);
  if (rc) {
    c->state = CUR_INVALID;
    return rc;
  }
  /* Leave the cursor saved at the deleted key (invariant 5). */
  c->state = CUR_REQSEEK;
  c->skip = 0;
  c->saved_rowid = rowid;
  if (c->intkey) {
    shale_free(c->saved_key);
    c->saved_key = NULL;
  } else {
    btree_cursor_delkey_to_saved(c);
  }
  SHALE_VALIDATE(btree_cursor_check(c));
  return SHALE_OK;
}
