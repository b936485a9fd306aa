/*
 * pager.c -- the pager: transactions over a page cache and a rollback
 * journal (see pager.h for the contract).
 *
 * Owns: the Pager object, its configuration, the transaction state machine
 * (NONE -> READ -> WRITE -> READ -> NONE), lock escalation, the commit and
 * rollback sequences, the error state, savepoints and the in-memory
 * sub-journal, the database header fields of page 1 that the pager owns
 * (16, 20, 24, 28, 92, 96).
 *
 * Commit sequence (rollback journal):
 *   1. page 1: change counter + 1, 92 = counter, 96 = version, 28 = size
 *      (in-memory database: 28 only, when it changed; invariant 4);
 *   2. journal synced (FULL/EXTRA: records synced, header nRec written,
 *      synced again; NORMAL: header written, one sync; OFF: nothing);
 *   3. EXCLUSIVE taken (PENDING first; busy handler);
 *   4. dirty pages written in page order, file truncated if it shrank;
 *   5. database synced (unless synchronous=OFF);
 *   6. journal finalised per journal_mode (the commit point for DELETE is
 *      the unlink, for TRUNCATE the truncate, for PERSIST the zeroed header);
 *   7. lock dropped to SHARED.
 * Rollback: if the database file was written in this transaction (a spill,
 * or a failed commit), the journal is played back and the file truncated to
 * its original size, then synced; dirty (or, after playback, all) cached
 * pages are dropped or reloaded. With journal_mode=OFF rollback can only
 * discard the cache: pages already spilled stay in the file (as SQLite).
 *
 * Invariants:
 *  1. txn == WRITE implies lock >= RESERVED; txn >= READ implies lock >=
 *     SHARED (memdb files too: their locks are private).
 *  2. dbmod implies lock == EXCLUSIVE and the journal (if any) synced for
 *     every page written so far.
 *  3. err != OK only while a write transaction is open (or after a failure
 *     inside rollback itself); only pager_rollback clears it.
 *  4. The change counter written at commit is the one read when the read
 *     transaction began plus one, so a retried commit never bumps it twice.
 *     An in-memory database (memory) keeps its counter (as SQLite): only
 *     the in-header size is rewritten, and only when it changed.
 *  5. An in-memory database is read by this pager alone: once its header
 *     was read (hdr_valid), db_size and the cache stay right between
 *     transactions, and begin_read does not re-read the header.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pager_int.h"

static const char MAGIC_HDR[16] = "SQLite format 3";

uint32_t pager_lock_page(Pager *p) { return 0x40000000u / p->page_size + 1; }

int pager_set_error(Pager *p, int rc) {
  if (rc != SHALE_OK && rc != SHALE_BUSY && p->err == SHALE_OK) p->err = rc;
  return rc;
}

int pager_lock_wait(Pager *p, int level) {
  int n = 0;
  if (pager_memstore(p)) { /* private: no lock calls (pager_mem.c) */
    if (level > p->lock) p->lock = level;
    return SHALE_OK;
  }
  for (;;) {
    int rc = os_lock(p->fd, level);
    if (rc == SHALE_OK) {
      if (level > p->lock) p->lock = level;
      return SHALE_OK;
    }
    if (rc != SHALE_BUSY || !p->busy || !p->busy(p->busy_arg, n++)) return rc;
  }
}

static void unlock_to(Pager *p, int level) {
  if (p->excl_mode) return; /* locking_mode=EXCLUSIVE keeps them (pager_wal.c) */
  if (p->wal && level < OS_LOCK_SHARED) level = OS_LOCK_SHARED; /* kept while the Wal is open */
  if (p->lock > level) {
    if (!pager_memstore(p)) os_unlock(p->fd, level);
    p->lock = level;
  }
}

/* ---- WAL helpers ---- */

static int wal_sync_level(Pager *p) {
  if (p->sync_level == PAGER_SYNC_OFF) return WAL_SYNC_OFF;
  if (p->sync_level == PAGER_SYNC_NORMAL) return WAL_SYNC_NORMAL;
  return WAL_SYNC_FULL;
}

/* Open the Wal of a file-backed database (SHARED must be held; it is kept
 * until the Wal is closed). */
static int open_wal(Pager *p) {
  assert(!p->wal && !p->memory && p->lock >= OS_LOCK_SHARED);
  /* without locks the wal-index cannot be shared: only a connection in
   * locking_mode=EXCLUSIVE (a heap wal-index) may use the log, as SQLite */
  if (p->nolock && !p->excl_mode) return SHALE_CANTOPEN;
  /* locking_mode=EXCLUSIVE: EXCLUSIVE first, then a heap wal-index */
  int rc = pager_wal_exclusive_lock(p);
  if (rc != SHALE_OK) return rc;
  char *wpath = util_mprintf("%s-wal", p->path);
  if (!wpath) return SHALE_NOMEM;
  rc = wal_open(p->vfs, p->fd, wpath, p->page_size, &p->wal);
  shale_free(wpath);
  if (rc != SHALE_OK) {
    p->wal = NULL;
    return rc;
  }
  p->wal_heap = p->excl_mode;
  if (p->wal_heap) wal_use_heap_memory(p->wal);
  wal_set_sync(p->wal, wal_sync_level(p));
  p->journal_mode = PAGER_JOURNAL_WAL;
  return SHALE_OK;
}

/* ---- open / close / configuration ---- */

int pager_open(OsVfs *vfs, const char *path, int open_flags, int extra_size, Pager **out) {
  *out = NULL;
  Pager *p = shale_malloc(sizeof(Pager));
  if (!p) return SHALE_NOMEM;
  memset(p, 0, sizeof *p);
  p->max_pgno = 1073741823; /* SQLite's SQLITE_MAX_PAGE_COUNT */
  p->spgen = 1;
  int memory = !path || !strcmp(path, ":memory:") || !path[0];
  int temp = path && !path[0]; /* "": a temporary database (spill file) */
  int rc = SHALE_OK;
  if (temp) {
    if (!vfs) vfs = os_vfs_find(NULL);
  } else if (memory) {
    vfs = os_vfs_find("memdb");
  } else if (!vfs) {
    vfs = os_vfs_find(NULL);
  }
  if (!vfs) {
    shale_free(p);
    return SHALE_CANTOPEN;
  }
  p->vfs = vfs;
  p->memory = memory;
  p->temp = temp;
  p->extra_size = (extra_size + 7) & ~7;
  p->page_size = PAGER_DEFAULT_PAGE_SIZE;
  p->cache_cfg = PAGER_DEFAULT_CACHE_SIZE;
  p->journal_mode = memory ? PAGER_JOURNAL_MEMORY : PAGER_JOURNAL_DELETE;
  p->sync_level = memory ? PAGER_SYNC_OFF : PAGER_SYNC_FULL;
  p->mmap_user = -1;
  p->fsz = -1;
  {
    const char *e = getenv("SHALE_NO_MMAP"); /* for measurements: read() only */
    p->mmap_limit = e && e[0] == '1' ? 0 : PAGER_MMAP_DEFAULT;
  }
  pager_cache_set_budget(p);
  rc = pager_cache_init(p);
  if (rc != SHALE_OK) goto fail;
  int flags = open_flags | SHALE_OPEN_MAIN_DB;
  if (!memory) {
    int n = vfs->max_pathname > 0 ? vfs->max_pathname : 1024;
    p->path = shale_malloc((size_t)n + 1);
    if (!p->path) {
      rc = SHALE_NOMEM;
      goto fail;
    }
    rc = vfs->full_pathname(vfs, path, n + 1, p->path);
    if (rc != SHALE_OK) {
      rc = rc == SHALE_NOMEM ? rc : SHALE_CANTOPEN;
      goto fail;
    }
    p->jpath = util_mprintf("%s-journal", p->path);
    if (!p->jpath) {
      rc = SHALE_NOMEM;
      goto fail;
    }
  } else {
    flags = SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_DB | SHALE_OPEN_MEMORY;
  }
  int got = flags;
  if (temp) /* in memory up to the cache bound, then in a file of vfs */
    rc = os_open_spill(vfs, pager_temp_limit(p), SHALE_OPEN_TEMP_DB, &p->fd);
  else
    rc = os_open_alloc(vfs, memory ? NULL : p->path, flags, &got, &p->fd);
  if (rc != SHALE_OK) {
    p->fd = NULL;
    if (rc != SHALE_NOMEM) rc = SHALE_CANTOPEN;
    goto fail;
  }
  p->readonly = (got & SHALE_OPEN_READONLY) != 0 || (open_flags & SHALE_OPEN_READONLY) != 0;
  p->immutable = (open_flags & SHALE_OPEN_IMMUTABLE) != 0;
  p->nolock = (open_flags & (SHALE_OPEN_NOLOCK | SHALE_OPEN_IMMUTABLE)) != 0;
  if (p->immutable) p->readonly = 1;
  *out = p;
  return SHALE_OK;
fail:
  shale_free(p->hash);
  shale_free(p->path);
  shale_free(p->jpath);
  shale_free(p);
  return rc;
}

/* Forget sub-journal records k.. (the file space is reused). */
static void sub_truncate(Pager *p, int k) {
  for (int i = k; i < p->nsub; i++) {
    if (p->sub[i].data) p->nsub_mem--;
    shale_free(p->sub[i].data);
  }
  p->nsub = k;
  p->sjend = 0;
  for (int i = k - 1; i >= 0; i--)
    if (!p->sub[i].data) {
      p->sjend = p->sub[i].off + p->page_size;
      break;
    }
}

static void savepoints_free(Pager *p) {
  for (int i = 0; i < p->nsp; i++) pager_pgset_clear(&p->sp[i].saved);
  p->nsp = 0;
  sub_truncate(p, 0);
}

/* Records kept in memory before the sub-journal moves to a temp file. */
static int sub_mem_limit(Pager *p) {
  int n = p->budget / 2;
  return n < 8 ? 8 : n;
}

/* Append the current image of pg to the sub-journal (room in p->sub must
 * have been made). */
static int sub_add(Pager *p, PgPage *pg) {
  SubRec *r = &p->sub[p->nsub];
  r->pgno = pg->pgno;
  r->data = NULL;
  r->off = 0;
  if ((p->memory && !p->temp) || p->nsub_mem < sub_mem_limit(p)) {
    r->data = shale_malloc(p->page_size);
    if (!r->data) return SHALE_NOMEM;
    memcpy(r->data, pg->v.data, p->page_size);
    p->nsub_mem++;
  } else {
    if (!p->sjfd) {
      int rc = os_open_alloc(p->vfs, NULL,
                             SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_DELETEONCLOSE |
                                 SHALE_OPEN_SUBJOURNAL,
                             NULL, &p->sjfd);
      if (rc != SHALE_OK) {
        p->sjfd = NULL;
        return rc;
      }
    }
    int rc = os_write(p->sjfd, pg->v.data, (int)p->page_size, p->sjend);
    if (rc != SHALE_OK) return rc;
    r->off = p->sjend;
    p->sjend += p->page_size;
  }
  p->nsub++;
  return SHALE_OK;
}

static int sub_read(Pager *p, const SubRec *r, uint8_t *dst) {
  if (r->data) {
    memcpy(dst, r->data, p->page_size);
    return SHALE_OK;
  }
  return os_read(p->sjfd, dst, (int)p->page_size, r->off);
}

int pager_close(Pager *p) {
  if (!p) return SHALE_OK;
  int rc = SHALE_OK;
  if (p->txn == PAGER_TXN_WRITE) pager_rollback(p);
  pager_map_end(p);
  p->excl_mode = 0; /* closing releases everything */
  if (p->wal) {
    /* Ends the read transaction; checkpoints and deletes -wal/-shm when
     * EXCLUSIVE is granted (we are the last user); back to SHARED. */
    rc = wal_close(p->wal, p->keep_wal ? WAL_CLOSE_KEEP : 0);
    p->wal = NULL;
    if (p->lock > OS_LOCK_SHARED) p->lock = OS_LOCK_SHARED;
  }
  savepoints_free(p);
  os_close_free(p->sjfd);
  shale_free(p->sp);
  shale_free(p->sub);
  pager_pgset_clear(&p->journaled);
  pager_mem_free(p);
  pager_journal_close(p);
  unlock_to(p, OS_LOCK_NONE);
  pager_cache_free_all(p);
  shale_free(p->hash);
  os_close_free(p->fd);
  shale_free(p->path);
  shale_free(p->jpath);
  shale_free(p);
  return rc;
}

void pager_set_keep_wal(Pager *p, int keep) { p->keep_wal = keep != 0; }

int pager_set_page_size(Pager *p, uint32_t page_size, int reserve) {
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) || reserve < 0 ||
      reserve > 255 || (int)page_size - reserve < 480)
    return SHALE_READONLY;
  if (p->txn == PAGER_TXN_WRITE || p->ncached > 0 || (p->txn != PAGER_TXN_NONE && p->db_size > 0))
    return SHALE_READONLY;
  if (p->txn == PAGER_TXN_NONE && p->hdr_valid) {
    /* The file had pages at the last look: leave it to the header. */
    static const uint8_t zero[16];
    if (memcmp(p->hdr, zero, 16) != 0) return SHALE_READONLY;
  }
  if (page_size != p->page_size) {
    pager_mem_free(p);        /* spare images of the old size */
    pager_cache_app_reset(p); /* pages of the old size */
  }
  p->page_size = page_size;
  p->reserve = reserve;
  pager_cache_set_budget(p);
  return SHALE_OK;
}

uint32_t pager_page_size(Pager *p) { return p->page_size; }
uint32_t pager_usable_size(Pager *p) { return p->page_size - (uint32_t)p->reserve; }

void pager_set_cache_size(Pager *p, int n) {
  p->cache_cfg = n;
  pager_cache_set_budget(p);
  pager_cache_trim(p);
}
int pager_cache_size(Pager *p) { return p->cache_cfg; }

/* Set bytes 18/19 of page 1 to v in a write transaction and commit it
 * (rollback journal). A read transaction must be open. */
static int set_file_format(Pager *p, uint8_t v) {
  int rc = pager_begin_write(p, 0);
  if (rc != SHALE_OK) return rc;
  PgPage *pg;
  rc = pager_get(p, 1, 0, &pg);
  if (rc == SHALE_OK) {
    rc = pager_write(pg);
    if (rc == SHALE_OK) pg->v.data[18] = pg->v.data[19] = v;
    pager_unref(pg);
  }
  if (rc == SHALE_OK) rc = pager_commit(p);
  if (rc != SHALE_OK) pager_rollback(p);
  return rc;
}

/* Into WAL mode (file-backed, no transaction open). */
static int enter_wal(Pager *p) {
  int rc = pager_begin_read(p); /* opens the Wal if the header says 2/2 */
  if (rc != SHALE_OK) return rc;
  if (!p->wal) {
    if (p->readonly || p->db_size == 0) {
      rc = SHALE_READONLY; /* nothing to mark (an empty db), or can't */
    } else {
      rc = set_file_format(p, 2);
      if (rc == SHALE_OK) rc = open_wal(p);
    }
  }
  pager_end_read(p);
  return rc;
}

/* Out of WAL mode: EXCLUSIVE (one try: others connected means busy, as
 * SQLite), checkpoint TRUNCATE, close the Wal (deletes -wal/-shm), then
 * bytes 18/19 = 1 in a rollback-journal transaction. */
static int leave_wal(Pager *p, int mode) {
  int rc = os_lock(p->fd, OS_LOCK_EXCLUSIVE);
  if (rc == SHALE_OK) {
    p->lock = OS_LOCK_EXCLUSIVE;
    p->map_refresh = 1;
    rc = wal_checkpoint(p->wal, WAL_CKPT_TRUNCATE, p->busy, p->busy_arg, NULL, NULL);
  }
  if (rc != SHALE_OK) {
    if (!p->excl_mode) { /* locking_mode=EXCLUSIVE keeps it (a heap index needs it) */
      os_unlock(p->fd, OS_LOCK_SHARED);
      p->lock = OS_LOCK_SHARED;
    }
    return rc;
  }
  rc = wal_close(p->wal, 0); /* drops the lock to SHARED */
  p->wal = NULL;
  p->wal_heap = 0;
  p->lock = OS_LOCK_SHARED;
  p->journal_mode = mode;
  p->hdr_valid = 0; /* the file now holds what the log held */
  if (rc != SHALE_OK) return rc;
  p->no_wal = 1;
  rc = pager_begin_read(p);
  if (rc == SHALE_OK) {
    if (p->db_size > 0) rc = set_file_format(p, 1);
    pager_end_read(p);
  } else {
    unlock_to(p, OS_LOCK_NONE);
  }
  p->no_wal = 0;
  return rc;
}

int pager_set_journal_mode(Pager *p, int mode) {
  if (mode < PAGER_JOURNAL_DELETE || mode > PAGER_JOURNAL_WAL) return p->journal_mode;
  if (p->memory && mode != PAGER_JOURNAL_MEMORY && mode != PAGER_JOURNAL_OFF)
    return p->journal_mode;
  if (p->txn == PAGER_TXN_WRITE) return p->journal_mode;
  if (mode == PAGER_JOURNAL_WAL || p->wal) {
    if (mode == p->journal_mode || p->txn != PAGER_TXN_NONE) return p->journal_mode;
    if (mode == PAGER_JOURNAL_WAL)
      enter_wal(p);
    else
      leave_wal(p, mode);
    return p->journal_mode;
  }
  int old = p->journal_mode;
  p->journal_mode = mode;
  if (!p->memory && p->txn == PAGER_TXN_NONE && !p->readonly && mode == PAGER_JOURNAL_DELETE &&
      (old == PAGER_JOURNAL_PERSIST || old == PAGER_JOURNAL_TRUNCATE)) {
    /* Remove the journal the old mode left behind, as SQLite does; a hot
     * one is rolled back first by the read transaction. */
    if (pager_begin_read(p) == SHALE_OK) {
      if (os_lock(p->fd, OS_LOCK_RESERVED) == SHALE_OK) {
        p->lock = OS_LOCK_RESERVED;
        int exists = 0;
        if (p->vfs->access(p->vfs, p->jpath, OS_ACCESS_EXISTS, &exists) == SHALE_OK && exists)
          p->vfs->delete (p->vfs, p->jpath, 0);
      }
      pager_end_read(p);
    }
  }
  return mode;
}
int pager_journal_mode(Pager *p) { return p->journal_mode; }
void pager_set_synchronous(Pager *p, int level) {
  if (level < PAGER_SYNC_OFF) level = PAGER_SYNC_OFF;
  if (level > PAGER_SYNC_EXTRA) level = PAGER_SYNC_EXTRA;
  p->sync_level = level;
  if (p->wal) wal_set_sync(p->wal, wal_sync_level(p));
}
int pager_synchronous(Pager *p) { return p->sync_level; }
void pager_set_busy_handler(Pager *p, int (*handler)(void *, int), void *arg) {
  p->busy = handler;
  p->busy_arg = arg;
}
int64_t pager_set_mmap_size(Pager *p, int64_t n) {
  if (n < 0) n = 0; /* SQLite: a negative size means the default, which is 0 */
  if (n > PAGER_MMAP_MAX) n = PAGER_MMAP_MAX;
  p->mmap_user = n;
  p->mmap_limit = n;
  if (n == 0 && !p->map && p->map_len > 0) {
    pager_cache_own_all(p, 0); /* (pager_cache.c invariant 10) */
    os_map(p->fd, 0);          /* no fetch is out between read transactions */
    p->map_len = 0;
  }
  return n;
}
int64_t pager_mmap_size(Pager *p) { return p->mmap_user < 0 ? 0 : p->mmap_user; }
int pager_readonly(Pager *p) { return p->readonly; }
int pager_is_memory(Pager *p) { return p->memory; }
const char *pager_filename(Pager *p) { return p->temp ? "" : p->memory ? ":memory:" : p->path; }
OsVfs *pager_vfs(Pager *p) { return p->vfs; }
OsFile *pager_file(Pager *p) { return p->fd; }
OsFile *pager_journal_file(Pager *p) { return p->wal ? wal_file(p->wal) : p->jfd; }
int pager_txn_state(Pager *p) { return p->txn; }
uint32_t pager_db_size(Pager *p) { return p->db_size; }
uint64_t pager_data_version(Pager *p) { return p->data_version; }

uint64_t pager_ext_version(Pager *p) { return p->ext_version; }

uint32_t pager_max_page_count(Pager *p, int64_t n) {
  if (n > 0) p->max_pgno = n < p->db_size ? p->db_size : n > 0xfffffffe ? 0xfffffffe : (uint32_t)n;
  return p->max_pgno;
}
void pager_zero_extra(PgPage *pg) { memset(pg->v.extra, 0, (size_t)pager_of(pg)->extra_size); }
void pager_set_readonly(Pager *p, int on) { p->readonly = on != 0; }

/* ---- read transactions ---- */

/* Read and check the header; set page size and db_size; invalidate the
 * cache if the file changed since it was filled. */
static int read_header(Pager *p, int force_invalidate) {
  int64_t fsz = 0;
  uint8_t h[100];
  int rc = os_file_size(p->fd, &fsz);
  if (rc != SHALE_OK) return rc;
  p->fsz = fsz;
  p->map_refresh = 0;
  if (p->map_bytes > fsz) p->map_bytes = fsz; /* cut inside a transaction (VACUUM) */
  p->hdr_wal = 0;
  if (fsz == 0) {
    memset(h, 0, sizeof h);
    p->db_size = 0;
  } else {
    if (fsz < 100) return SHALE_NOTADB;
    rc = os_read(p->fd, h, 100, 0);
    if (rc != SHALE_OK) return rc == SHALE_IOERR_SHORT_READ ? SHALE_NOTADB : rc;
    if (memcmp(h, MAGIC_HDR, 16) != 0) return SHALE_NOTADB;
    uint32_t ps = util_get2(h + 16);
    if (ps == 1) ps = 65536;
    if (ps < 512 || ps > 65536 || (ps & (ps - 1))) return SHALE_NOTADB;
    if ((int)ps - h[20] < 480) return SHALE_NOTADB;
    if (ps != p->page_size) {
      if (p->nrefd > 0) return SHALE_ERROR; /* pages still held at the old size */
      pager_cache_free_all(p);
      p->page_size = ps;
      pager_cache_set_budget(p);
    }
    p->reserve = h[20];
    p->hdr_wal = h[18] == 2 && h[19] == 2;
    uint32_t hs = util_get4(h + 28);
    uint32_t file_pages = (uint32_t)((fsz + ps - 1) / ps);
    if (hs != 0 && memcmp(h + 24, h + 92, 4) == 0) {
      /* A valid in-header size larger than the file means pages are
       * missing: SQLite calls that malformed at once, and so do we --
       * except in a WAL database whose log is about to be opened: a
       * checkpoint cut short (page 1 copied, later pages not yet) leaves
       * such a file, and the log's size decides (checked again by
       * wal_snapshot if the log turns out empty). */
      if (hs > file_pages && !(p->hdr_wal && !p->wal && !p->memory && !p->no_wal && !p->immutable))
        return SHALE_CORRUPT;
      p->db_size = hs > file_pages ? file_pages : hs; /* pages past it ignored, as SQLite */
    } else {
      p->db_size = file_pages;
    }
  }
  if (force_invalidate || !p->hdr_valid || memcmp(p->hdr, h + 24, 16) != 0) {
    if (p->hdr_valid && memcmp(p->hdr, h + 24, 16) != 0) p->ext_version++;
    rc = pager_cache_invalidate(p, 0);
    if (rc != SHALE_OK) return rc;
  }
  memcpy(p->hdr, h + 24, 16);
  p->hdr_valid = 1;
  return SHALE_OK;
}

/* Snapshot of the log (a WAL read transaction): database size from the log
 * or, when it has no commit, from the file; cache dropped if the log
 * changed since our last snapshot. */
static int wal_snapshot(Pager *p) {
  int rc, changed = 0;
  wal_set_map(p->wal, p->mmap_limit > 0);
  for (int n = 0;;) {
    rc = p->snap_next ? wal_begin_read_at(p->wal, p->snap_next, &changed)
                      : wal_begin_read(p->wal, &changed);
    /* SHALE_BUSY_RECOVERY (another connection rebuilding the index) too,
     * as SQLite's busy loop tests rc & 0xff */
    if ((rc & 0xff) != SHALE_BUSY || !p->busy || !p->busy(p->busy_arg, n++)) break;
  }
  if (rc != SHALE_OK) return rc;
  uint32_t n = wal_db_size(p->wal);
  if (n == 0) {
    /* The log holds no commit: the size is the file's. While the wal-index
     * header is the one of our last snapshot, nothing can have changed the
     * file (writers go through the log, and the SHARED lock we keep bars
     * rollback-mode writers), so the header read and fstat are skipped. */
    if (changed || !p->hdr_valid) rc = read_header(p, changed);
  } else {
    p->db_size = n;
    if (changed && p->hdr_valid && wal_read_changed_by_others(p->wal)) p->ext_version++;
    if (changed || !p->hdr_valid) rc = pager_cache_invalidate(p, 0);
    /* A log that restarted (fewer frames than last time) was checkpointed
     * whole, which may have grown the file: the map's size is looked at
     * again (pager_map_begin). Other growth is found by a read past the
     * map (pager_read_page), for the next transaction. */
    uint32_t mx = wal_max_frame(p->wal);
    if (mx < p->wal_mx_seen) p->map_refresh = 1;
    p->wal_mx_seen = mx;
  }
  if (rc != SHALE_OK) wal_end_read(p->wal);
  return rc;
}

int pager_begin_read(Pager *p) {
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_NONE) return SHALE_OK;
  int rc, n = 0, rolled = 0;
  if (p->wal) {
    /* WAL mode keeps the SHARED lock between transactions (as SQLite): a
     * read transaction then costs no lock call on the database file. */
    if (p->lock < OS_LOCK_SHARED) {
      rc = pager_lock_wait(p, OS_LOCK_SHARED);
      if (rc != SHALE_OK) return rc;
    }
    rc = wal_snapshot(p);
    if (rc != SHALE_OK) return rc;
    p->txn = PAGER_TXN_READ;
    pager_map_begin(p);
    return SHALE_OK;
  }
  for (;;) {
    rc = pager_lock_wait(p, OS_LOCK_SHARED);
    if (rc != SHALE_OK) return rc;
    rc = p->immutable ? SHALE_OK : pager_hot_journal(p, &rolled);
    if (rc == SHALE_OK) break;
    unlock_to(p, OS_LOCK_NONE);
    if (rc != SHALE_BUSY || !p->busy || !p->busy(p->busy_arg, n++)) return rc;
  }
  /* An in-memory database is private to this pager: nothing else can have
   * changed it since our last transaction, so size and cache stand. */
  if (!(p->memory && p->hdr_valid && !rolled)) rc = read_header(p, rolled);
  if (rc == SHALE_OK && p->hdr_wal && !p->memory && !p->no_wal && !p->immutable) {
    /* A WAL database (bytes 18/19 = 2): open the log, keeping SHARED. */
    rc = open_wal(p);
    if (rc == SHALE_OK) rc = wal_snapshot(p);
  }
  if (rc != SHALE_OK) {
    unlock_to(p, OS_LOCK_NONE);
    return rc;
  }
  p->txn = PAGER_TXN_READ;
  pager_map_begin(p);
  return SHALE_OK;
}

void pager_end_read(Pager *p) {
  if (p->txn == PAGER_TXN_NONE) return;
  if (p->txn == PAGER_TXN_WRITE) pager_rollback(p);
  if (p->txn == PAGER_TXN_WRITE) return; /* rollback failed: still in the error state */
  /* An error state entered with only the read transaction left (a failed
   * shared sync after a WAL commit, pager_commit) ends with it: the commit
   * is in the log and nothing is left to undo, as SQLite's pager leaves its
   * ERROR state once unlocked. */
  p->err = SHALE_OK;
  savepoints_free(p);
  pager_map_end(p);
  if (p->wal) {
    wal_end_read(p->wal);
    unlock_to(p, OS_LOCK_SHARED); /* kept while in WAL mode (see begin_read) */
  } else {
    unlock_to(p, OS_LOCK_NONE);
  }
  p->txn = PAGER_TXN_NONE;
  if (p->ckpt_due && p->wal) {
    /* Auto-checkpoint (wal_autocheckpoint = 1000), once the transaction is
     * over; a busy checkpointer elsewhere is not an error. */
    p->ckpt_due = 0;
    p->map_refresh = 1; /* a checkpoint may change the file's size */
    wal_checkpoint(p->wal, WAL_CKPT_AUTO, NULL, NULL, NULL, NULL);
  }
}

int pager_wal_checkpoint(Pager *p, int mode, int *nlog, int *nckpt) {
  if (nlog) *nlog = -1;
  if (nckpt) *nckpt = -1;
  if (p->err) return p->err;
  if (mode < PAGER_CKPT_PASSIVE || mode > PAGER_CKPT_TRUNCATE) return SHALE_MISUSE;
  if (p->txn != PAGER_TXN_NONE) return SHALE_LOCKED;
  if (!p->wal && !p->memory && !p->hdr_valid && pager_begin_read(p) == SHALE_OK)
    pager_end_read(p); /* a WAL database not yet looked at opens its log */
  if (!p->wal) return SHALE_OK;
  p->map_refresh = 1; /* a checkpoint may change the file's size */
  return wal_checkpoint(p->wal, mode, p->busy, p->busy_arg, nlog, nckpt);
}

/* ---- write transactions ---- */

int pager_begin_write(Pager *p, int exclusive) {
  if (p->err) return p->err;
  if (p->readonly) return SHALE_READONLY;
  if (p->txn == PAGER_TXN_WRITE) {
    if (exclusive && !p->wal && p->lock < OS_LOCK_EXCLUSIVE)
      return pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
    return SHALE_OK;
  }
  int was_none = p->txn == PAGER_TXN_NONE;
  int rc;
  /* our turn at the log was over (pager_fair.c): the lock is left to the
   * others, with the process's writer token held when we can queue for it */
  if (p->wal && !was_none) pager_fair_pause(p);
  for (int n = 0, nsnap = 0;;) { /* n: busy handler calls (its count) */
    if (was_none && p->wal) {
      /* Group commit: queue for the process's writer token before taking
       * the snapshot, so that the writers queued ahead do not make it
       * stale (wal.h). */
      rc = wal_queue_enter(p->wal, p->busy, p->busy_arg);
      if (rc != SHALE_OK) return rc;
      pager_fair_pause(p);
    }
    rc = pager_begin_read(p);
    if (rc != SHALE_OK) {
      if (p->wal) wal_queue_leave(p->wal);
      return rc;
    }
    if (p->wal) {
      /* WAL: the log's WRITE lock; no lock on the database file (but
       * EXCLUSIVE on it in locking_mode=EXCLUSIVE, as SQLite). */
      rc = pager_wal_exclusive_lock(p);
      if (rc == SHALE_OK) rc = wal_begin_write(p->wal);
      if (rc == SHALE_OK) break;
      if (rc == SHALE_BUSY && wal_write_lock_busy(p->wal)) p->wal_foreign_ms = os_now_ms();
      if (!was_none) return rc;
      pager_end_read(p);
      if (rc == SHALE_BUSY_SNAPSHOT && nsnap++ < 100) continue; /* a fresh snapshot */
      if (rc == SHALE_BUSY && p->busy) {
        pager_busy_watch_log(p, 1); /* wake when the writer commits */
        int again = p->busy(p->busy_arg, n++);
        pager_busy_watch_log(p, 0);
        if (again) continue;
      }
      return rc;
    }
    rc = pager_memstore(p) ? SHALE_OK : os_lock(p->fd, OS_LOCK_RESERVED);
    if (rc == SHALE_OK) break;
    /* Waiting while holding SHARED would deadlock with the RESERVED holder
     * waiting for our SHARED to go: retry only if we can drop the read
     * transaction (we started it), and wait without it (as SQLite). */
    if (was_none) pager_end_read(p);
    if (rc == SHALE_BUSY && was_none && p->busy && p->busy(p->busy_arg, n++)) continue;
    return rc;
  }
  if (!p->wal && p->lock < OS_LOCK_RESERVED) p->lock = OS_LOCK_RESERVED;
  if (exclusive && !p->wal) {
    rc = pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
    if (rc != SHALE_OK) {
      unlock_to(p, OS_LOCK_SHARED);
      if (!pager_memstore(p)) os_unlock(p->fd, OS_LOCK_SHARED); /* clears a PENDING left behind */
      if (was_none) pager_end_read(p);
      return rc;
    }
  }
  p->txn = PAGER_TXN_WRITE;
  if (p->wal) pager_fair_acquired(p);
  p->orig_size = p->db_size;
  p->min_size = p->db_size;
  p->dbmod = 0;
  p->wrote = 0;
  p->spill_busy = 0;
  p->wal_spilled = 0;
  assert(!p->jfd && p->journaled.n == 0);
  return SHALE_OK;
}

/* End the write transaction after commit or rollback. */
static void end_write(Pager *p) {
  p->phase1 = 0;
  if (p->wal) wal_end_write(p->wal);
  pager_pgset_reset(&p->journaled);
  savepoints_free(p);
  os_close_free(p->sjfd);
  p->sjfd = NULL;
  unlock_to(p, OS_LOCK_SHARED);
  if (p->lock == OS_LOCK_SHARED && !pager_memstore(p))
    os_unlock(p->fd, OS_LOCK_SHARED); /* any PENDING */
  p->txn = PAGER_TXN_READ;
  p->orig_size = p->db_size;
  p->dbmod = 0;
  p->data_version++;
  pager_cache_trim(p);
}

int pager_write_pages(Pager *p, PgPage *list) {
  uint32_t lockpg = pager_lock_page(p);
  for (PgPage *pg = list, *next; pg; pg = next) {
    next = pg->sort;
    assert(pg->pgno <= p->db_size);
    if (pg->pgno != lockpg) {
      int rc =
          os_write(p->fd, pg->v.data, (int)p->page_size, (int64_t)(pg->pgno - 1) * p->page_size);
      if (rc != SHALE_OK) return rc;
      p->stats.writes++;
    }
    pager_cache_make_clean(p, pg);
  }
  return SHALE_OK;
}

/* Journal the original of pg and save it for open savepoints, as needed
 * before its first change. Does not mark it dirty. */
static int prepare_write(Pager *p, PgPage *pg) {
  int rc;
  uint32_t pgno = pg->pgno;
  if (pgno == pager_lock_page(p)) return SHALE_OK;
  if (!p->wal && p->journal_mode != PAGER_JOURNAL_OFF && pgno <= p->orig_size &&
      !pager_pgset_has(&p->journaled, pgno)) {
    rc = pager_memstore(p) ? pager_mem_save(p, pg) : pager_journal_page(p, pg);
    if (rc != SHALE_OK) return rc;
  }
  int need = 0;
  for (int i = 0; i < p->nsp; i++)
    if (pgno <= p->sp[i].db_size && !pager_pgset_has(&p->sp[i].saved, pgno)) need = 1;
  if (!need) return SHALE_OK;
  if (p->nsub == p->subcap) {
    int cap = p->subcap ? p->subcap * 2 : 16;
    SubRec *s = shale_realloc(p->sub, (size_t)cap * sizeof(SubRec));
    if (!s) return SHALE_NOMEM;
    p->sub = s;
    p->subcap = cap;
  }
  for (int i = 0; i < p->nsp; i++) {
    if (pgno <= p->sp[i].db_size && !pager_pgset_has(&p->sp[i].saved, pgno)) {
      rc = pager_pgset_reserve(&p->sp[i].saved, 1);
      if (rc != SHALE_OK) return rc;
    }
  }
  rc = sub_add(p, pg);
  if (rc != SHALE_OK) return rc;
  for (int i = 0; i < p->nsp; i++)
    if (pgno <= p->sp[i].db_size) pager_pgset_add(&p->sp[i].saved, pgno);
  return SHALE_OK;
}

/* Page 1 header fields owned by the pager; newhdr receives bytes 24..39. */
static int update_page1(Pager *p, uint8_t *newhdr) {
  PgPage *pg;
  int rc = pager_get(p, 1, 0, &pg);
  if (rc != SHALE_OK) return rc;
  rc = pager_write(pg);
  if (rc == SHALE_OK) {
    uint8_t *d = pg->v.data;
    uint32_t counter = util_get4(p->hdr) + 1;
    util_put2(d + 16, p->page_size == 65536 ? 1 : p->page_size);
    d[20] = (uint8_t)p->reserve;
    util_put4(d + 24, counter);
    util_put4(d + 28, p->db_size);
    util_put4(d + 92, counter);
    util_put4(d + 96, PAGER_VERSION_STAMP);
    memcpy(newhdr, d + 24, 16);
  }
  pager_unref(pg);
  return rc;
}

/* In-memory database (as SQLite's :memory:): the change counter and the
 * version fields are left alone (nothing else can read them), only the
 * in-header size (28) is kept exact, so page 1 is written at commit only
 * when the size changed. newhdr receives bytes 24..39. */
static int update_page1_memory(Pager *p, uint8_t *newhdr) {
  PgPage *pg;
  int rc = pager_get(p, 1, 0, &pg);
  if (rc != SHALE_OK) return rc;
  if (util_get4(pg->v.data + 28) != p->db_size) {
    rc = pager_write(pg);
    if (rc == SHALE_OK) util_put4(pg->v.data + 28, p->db_size);
  }
  memcpy(newhdr, pg->v.data + 24, 16);
  pager_unref(pg);
  return rc;
}

/* WAL commit: every dirty page becomes a frame, the last a commit frame
 * with the database size. Page 1 goes in (with the pager's header fields,
 * change counter + 1, bytes 18/19 = 2) only when it was written or the size
 * changed, or when nothing else is left to make the commit frame. */
static int wal_commit(Pager *p) {
  if (p->ndirty == 0 && p->db_size == p->orig_size && !p->wrote) return SHALE_OK;
  if (p->db_size == 0) return SHALE_OK; /* nothing a frame could hold */
  PgPage *pg1 = pager_cache_find(p, 1);
  if ((pg1 && (pg1->flags & PG_DIRTY)) || p->db_size != p->orig_size || p->ndirty == 0) {
    int rc = pager_get(p, 1, 0, &pg1);
    if (rc != SHALE_OK) return rc;
    rc = pager_write(pg1);
    if (rc == SHALE_OK) {
      uint8_t *d = pg1->v.data;
      uint32_t counter = util_get4(d + 24) + 1;
      util_put2(d + 16, p->page_size == 65536 ? 1 : p->page_size);
      d[18] = d[19] = 2;
      d[20] = (uint8_t)p->reserve;
      util_put4(d + 24, counter);
      util_put4(d + 28, p->db_size);
      util_put4(d + 92, counter);
      util_put4(d + 96, PAGER_VERSION_STAMP);
    }
    pager_unref(pg1);
    if (rc != SHALE_OK) return rc;
  }
  WalPage *wp = shale_malloc((size_t)p->ndirty * sizeof(WalPage));
  if (!wp) return SHALE_NOMEM;
  PgPage *list = pager_cache_sorted_dirty(p);
  uint32_t lockpg = pager_lock_page(p);
  int n = 0;
  for (PgPage *pg = list; pg; pg = pg->sort) {
    if (pg->pgno > p->db_size || pg->pgno == lockpg) continue;
    wp[n].pgno = pg->pgno;
    wp[n].data = pg->v.data;
    n++;
  }
  /* FULL: the sync is shared with the process's other writers, after
   * WRITE is released (pager_commit, wal_sync_commit); but while writers of
   * other processes compete for the log, under WRITE as SQLite does (a
   * release before a whole sync hands the lock to them at nearly every
   * commit, while SQLite's writers leave it free for microseconds only:
   * issue 14, tests/wal/test_wal_fair.c) */
  int lvl = wal_sync_level(p);
  if (lvl == WAL_SYNC_FULL && !pager_fair_contended(p)) lvl = WAL_SYNC_GROUP;
  int yield = pager_fair_before_commit(p); /* the end of our turn? */
  int rc = n > 0 ? wal_append(p->wal, wp, n, p->db_size, lvl) : SHALE_OK;
  shale_free(wp);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  if (n > 0) pager_fair_committed(p, yield);
  p->stats.writes += n;
  if (wal_sync_level(p) == WAL_SYNC_FULL) p->stats.syncs++;
  for (PgPage *pg = list, *next; pg; pg = next) {
    next = pg->sort;
    pager_cache_make_clean(p, pg);
  }
  if (wal_max_frame(p->wal) >= PAGER_WAL_AUTOCHECKPOINT) p->ckpt_due = 1;
  return SHALE_OK;
}

int pager_commit(Pager *p) {
  int rc;
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_WRITE) return SHALE_OK;
  if (p->wal) {
    rc = wal_commit(p);
    if (rc != SHALE_OK) return rc;
    end_write(p); /* WRITE and the writer token go to the next writer */
    /* synchronous=FULL: durable before returning, through a sync shared
     * with the writers that committed meanwhile (wal.c invariant 5). The
     * commit is published: a failed sync leaves it visible, and puts the
     * pager in the error state as any failed commit does. */
    rc = wal_sync_commit(p->wal);
    if (rc != SHALE_OK) return pager_set_error(p, rc);
    SHALE_VALIDATE(pager_check(p)); /* invariants after a commit */
    return SHALE_OK;
  }
  rc = pager_commit_phase1(p, NULL);
  if (rc == SHALE_OK) rc = pager_commit_phase2(p);
  if (rc == SHALE_OK) SHALE_VALIDATE(pager_check(p));
  return rc;
}

/* Anything to write at commit: as SQLite, any page written in the
 * transaction (even if a savepoint rollback undid it) makes a real commit.
 * dbmod: a spill may have written every change already (nothing dirty
 * left), but page 1 and the syncs are still due. */
static int commit_has_changes(const Pager *p) {
  return p->ndirty > 0 || p->db_size != p->orig_size || p->dbmod || p->wrote;
}

int pager_commit_wants_super(Pager *p) {
  return p->txn == PAGER_TXN_WRITE && !p->err && !p->wal && pager_journal_uses_file(p) &&
         commit_has_changes(p);
}

const char *pager_journal_path(Pager *p) { return p->jpath; }

int pager_commit_phase1(Pager *p, const char *super) {
  int rc;
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_WRITE || p->wal || p->phase1) return SHALE_OK;
  uint8_t newhdr[16];
  memcpy(newhdr, p->hdr, 16);
  if (commit_has_changes(p)) {
    if (p->db_size > 0) {
      rc = p->memory ? update_page1_memory(p, newhdr) : update_page1(p, newhdr);
      if (rc != SHALE_OK) return rc;
    }
    if (pager_memstore(p)) { /* the cache is the database (pager_mem.c) */
      pager_mem_commit(p);
      memcpy(p->commit_hdr, newhdr, 16);
      p->phase1 = 1;
      return SHALE_OK;
    }
    if (super && pager_journal_uses_file(p)) {
      rc = pager_journal_write_super(p, super);
      if (rc != SHALE_OK) return pager_set_error(p, rc);
    }
    rc = pager_journal_sync(p);
    if (rc != SHALE_OK) return pager_set_error(p, rc);
    if (p->lock < OS_LOCK_EXCLUSIVE) {
      rc = pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
      if (rc != SHALE_OK) return rc; /* still in the write transaction */
    }
    p->dbmod = 1;
    rc = pager_write_pages(p, pager_cache_sorted_dirty(p));
    if (rc != SHALE_OK) return pager_set_error(p, rc);
    int64_t fsz = 0, want = (int64_t)p->db_size * p->page_size;
    rc = os_file_size(p->fd, &fsz);
    if (rc == SHALE_OK && fsz > want) rc = pager_file_truncate(p, want);
    if (rc != SHALE_OK) return pager_set_error(p, rc);
    if (p->sync_level != PAGER_SYNC_OFF) {
      rc = os_sync(p->fd, OS_SYNC_NORMAL);
      if (rc != SHALE_OK) return pager_set_error(p, rc);
      p->stats.syncs++;
    }
  }
  memcpy(p->commit_hdr, newhdr, 16);
  p->phase1 = 1;
  return SHALE_OK;
}

int pager_commit_phase2(Pager *p) {
  if (p->txn != PAGER_TXN_WRITE || p->wal) return pager_commit(p);
  if (!p->phase1) {
    int rc = pager_commit_phase1(p, NULL);
    if (rc != SHALE_OK) return rc;
  }
  int rc = pager_journal_finalize(p);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  p->phase1 = 0;
  memcpy(p->hdr, p->commit_hdr, 16);
  end_write(p);
  return SHALE_OK;
}

int pager_rollback(Pager *p) {
  int rc = SHALE_OK;
  if (p->txn != PAGER_TXN_WRITE) {
    p->err = SHALE_OK;
    return SHALE_OK;
  }
  if (p->wal) {
    /* Frames appended since the last commit (a failed commit) are
     * forgotten before pages are re-read below. */
    rc = wal_undo(p->wal);
  }
  if (pager_memstore(p)) {
    pager_mem_rollback(p); /* images back in place (pager_mem.c) */
  } else if (p->dbmod && !p->wal && p->journal_mode != PAGER_JOURNAL_OFF) {
    /* The file was written. If our journal is still open, play it back and
     * cut the file to its original size. If a failed commit already closed
     * it, the journal on disk decides: still valid -> played back like a hot
     * one; gone, empty or zeroed -> the commit point was passed and the
     * transaction stands. */
    int played = 0;
    if (p->jfd) {
      played = 1;
      rc = pager_journal_playback(p, 0, &played);
      if (rc == SHALE_OK) {
        int64_t fsz = 0, want = (int64_t)p->orig_size * p->page_size;
        rc = os_file_size(p->fd, &fsz);
        if (rc == SHALE_OK && fsz > want) rc = pager_file_truncate(p, want);
      }
    } else if (pager_journal_uses_file(p)) {
      rc = pager_journal_playback_disk(p, &played);
    }
    if (rc == SHALE_OK && played && p->sync_level != PAGER_SYNC_OFF && !p->memory) {
      rc = os_sync(p->fd, OS_SYNC_NORMAL);
      p->stats.syncs++;
    }
    if (rc != SHALE_OK) return pager_set_error(p, rc);
    /* Size, header bytes and cache from what the file now holds. */
    rc = read_header(p, 1);
    if (rc == SHALE_NOTADB) rc = SHALE_CORRUPT;
  } else {
    /* The file is untouched (or, with journal_mode=OFF, can't be restored):
     * forget the changes made in the cache. */
    p->db_size = p->orig_size;
    PgPage *next;
    for (PgPage *pg = p->dirty_head; pg; pg = next) {
      next = pg->dnext;
      int rc2 = pager_cache_forget(p, pg);
      if (rc2 != SHALE_OK && rc == SHALE_OK) rc = rc2;
    }
    pager_cache_drop_above(p, p->orig_size);
    /* Pages cut off by pager_truncate and still held read as zeros now. */
    if (p->min_size < p->orig_size) {
      int rc2 = pager_cache_reload_range(p, p->min_size + 1, p->orig_size);
      if (rc == SHALE_OK) rc = rc2;
    }
  }
  if (rc == SHALE_OK && p->wal) rc = pager_wal_after_rollback(p); /* spilled frames gone */
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  if (!p->wal) rc = pager_journal_finalize(p);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  p->err = SHALE_OK;
  end_write(p);
  return SHALE_OK;
}

/* ---- savepoints ---- */

/* Savepoints opened or rolled back: every dirty page may need saving again
 * (pager_int.h invariant 5). */
static void savepoints_changed(Pager *p) {
  if (++p->spgen == 0) p->spgen = 1;
}

int pager_savepoint_open(Pager *p, int n) {
  if (p->err) return p->err;
  if (p->txn == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (n <= p->nsp) return SHALE_OK;
  savepoints_changed(p);
  if (n > p->spcap) {
    Savepoint *s = shale_realloc(p->sp, (size_t)n * sizeof(Savepoint));
    if (!s) return SHALE_NOMEM;
    p->sp = s;
    p->spcap = n;
  }
  for (int i = p->nsp; i < n; i++) {
    memset(&p->sp[i], 0, sizeof(Savepoint));
    p->sp[i].db_size = p->db_size;
    p->sp[i].sub_start = p->nsub;
  }
  p->nsp = n;
  return SHALE_OK;
}

int pager_savepoint_release(Pager *p, int idx) {
  if (idx < 0) idx = 0;
  if (idx >= p->nsp) return SHALE_OK;
  for (int i = idx; i < p->nsp; i++) pager_pgset_clear(&p->sp[i].saved);
  p->nsp = idx;
  if (idx == 0) savepoints_free(p);
  return SHALE_OK;
}

int pager_savepoint_rollback(Pager *p, int idx) {
  if (p->err) return p->err;
  if (idx < 0 || idx >= p->nsp) return SHALE_OK;
  Savepoint *sp = &p->sp[idx];
  if (p->txn == PAGER_TXN_WRITE) {
    /* Size first: a spill while pages are being restored must see them
     * inside the database. */
    if (!pager_memstore(p) || p->db_size > sp->db_size) pager_cache_drop_above(p, sp->db_size);
    p->db_size = sp->db_size;
    /* Newest first, so that the oldest image of each page wins. */
    for (int k = p->nsub - 1; k >= sp->sub_start; k--) {
      SubRec *r = &p->sub[k];
      if (r->pgno > sp->db_size) continue;
      PgPage *pg;
      int rc = pager_get(p, r->pgno, PAGER_GET_NOCONTENT, &pg);
      if (rc != SHALE_OK) return pager_set_error(p, rc);
      pager_page_own(p, pg, 0);
      rc = sub_read(p, r, pg->v.data);
      if (rc != SHALE_OK) {
        pager_unref(pg);
        return pager_set_error(p, rc);
      }
      memset(pg->v.extra, 0, (size_t)p->extra_size);
      pager_cache_make_dirty(p, pg);
      pager_unref(pg);
    }
  }
  savepoints_changed(p);
  for (int i = idx + 1; i < p->nsp; i++) pager_pgset_clear(&p->sp[i].saved);
  p->nsp = idx + 1;
  pager_pgset_clear(&sp->saved);
  if (idx == 0) sub_truncate(p, sp->sub_start);
  sp->sub_start = p->nsub;
  return SHALE_OK;
}

int pager_savepoint_count(Pager *p) { return p->nsp; }

int pager_truncate(Pager *p, uint32_t n) {
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_WRITE) return SHALE_MISUSE;
  if (n >= p->db_size) return SHALE_OK;
  /* Pages about to vanish must be journalled / saved first, since commit
   * truncates the file and a savepoint may bring them back. */
  for (uint32_t pgno = n + 1; pgno <= p->db_size; pgno++) {
    int need = !p->wal && p->journal_mode != PAGER_JOURNAL_OFF && pgno <= p->orig_size &&
               !pager_pgset_has(&p->journaled, pgno);
    for (int i = 0; i < p->nsp && !need; i++)
      if (pgno <= p->sp[i].db_size && !pager_pgset_has(&p->sp[i].saved, pgno)) need = 1;
    if (!need || pgno == pager_lock_page(p)) continue;
    PgPage *pg;
    int rc = pager_get(p, pgno, 0, &pg);
    if (rc != SHALE_OK) return rc;
    rc = prepare_write(p, pg);
    pager_unref(pg);
    if (rc != SHALE_OK) return rc;
  }
  p->db_size = n;
  p->wrote = 1;
  if (n < p->min_size) p->min_size = n;
  pager_cache_drop_above(p, n);
  return SHALE_OK;
}

/* ---- pages ---- */

int pager_get(Pager *p, uint32_t pgno, int flags, PgPage **out) {
  *out = NULL;
  if (p->err) return p->err;
  if (p->txn == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (pgno == 0 || pgno > 0x7fffffffu) return SHALE_CORRUPT;
  PgPage *pg = pager_cache_find(p, pgno);
  if (pg) {
    p->stats.hits++;
    pager_ref(pg);
    /* a write transaction works on own buffers only, so that a data
     * pointer taken before pager_write stays good (pager_cache.c
     * invariant 10) */
    if (p->txn == PAGER_TXN_WRITE) pager_page_own(p, pg, 1);
    *out = pg;
    return SHALE_OK;
  }
  int rc = pager_cache_alloc(p, pgno, &pg);
  if (rc != SHALE_OK) {
    if (rc != PAGER_CACHE_KEPT) return rc;
    p->stats.hits++; /* kept by the application's cache */
    *out = pg;
    return SHALE_OK;
  }
  p->stats.misses++;
  if (flags & PAGER_GET_NOCONTENT) {
    /* A new page past the end is left as it is: the caller overwrites it
     * all (pager.h); one inside the file reads as zeros. */
    if (pgno <= p->db_size) memset(pg->v.data, 0, p->page_size); /* (its own: just made) */
    memset(pg->v.extra, 0, (size_t)p->extra_size);
  } else {
    rc = pager_read_page(p, pg);
    if (rc != SHALE_OK) {
      pager_cache_discard(p, pg);
      return rc;
    }
  }
  pg->nref = 1;
  p->nrefd++;
  pager_cache_insert(p, pg);
  *out = pg;
  return SHALE_OK;
}

int pager_peek(Pager *p, uint32_t pgno, const uint8_t **out) {
  *out = NULL;
  if (p->err) return p->err;
  if (p->txn == PAGER_TXN_NONE) return SHALE_MISUSE;
  if (pgno == 0 || pgno > 0x7fffffffu) return SHALE_CORRUPT;
  PgPage *pg = pager_cache_find(p, pgno);
  if (!pg && pgno <= p->db_size && (int64_t)pgno * p->page_size <= p->map_bytes) {
    uint32_t frame = 0;
    if (p->wal) {
      int rc = wal_find_frame(p->wal, pgno, &frame);
      if (rc != SHALE_OK) return rc;
    }
    if (!frame) {
      *out = p->map + (size_t)(pgno - 1) * p->page_size;
      pager_map_count(p, pgno);
      return SHALE_OK;
    }
  }
  if (pg) {
    p->stats.hits++;
  } else {
    int rc = pager_get(p, pgno, 0, &pg);
    if (rc != SHALE_OK) return rc;
    if (pager_app_unpins(p) && pg->nref == 1 && !(pg->flags & PG_DIRTY)) {
      /* the application's cache may drop it once unpinned: a copy */
      if (!p->peek_buf && !(p->peek_buf = shale_malloc(p->page_size))) {
        pager_unref(pg);
        return SHALE_NOMEM;
      }
      memcpy(p->peek_buf, pg->v.data, p->page_size);
      pager_unref(pg);
      *out = p->peek_buf;
      return SHALE_OK;
    }
    pager_unref(pg); /* it stays cached until a later call may evict it */
  }
  *out = pg->v.data;
  return SHALE_OK;
}

PgPage *pager_lookup(Pager *p, uint32_t pgno) {
  if (p->err || p->txn == PAGER_TXN_NONE) return NULL;
  PgPage *pg = pager_cache_find(p, pgno);
  if (pg) {
    pager_ref(pg);
    if (p->txn == PAGER_TXN_WRITE) pager_page_own(p, pg, 1); /* as pager_get */
  } else if (p->appc)
    pg = pager_cache_app_kept(p, pgno);
  return pg;
}

int pager_refcount(PgPage *pg) { return pg->nref; }

void pager_ref(PgPage *pg) {
  Pager *p = pg->pager;
  if (pg->nref == 0) {
    if (!(pg->flags & PG_DIRTY)) pager_cache_lru_del(p, pg);
    p->nrefd++;
  }
  pg->nref++;
}

void pager_unref(PgPage *pg) {
  Pager *p = pg->pager;
  assert(pg->nref > 0);
  if (--pg->nref > 0) return;
  p->nrefd--;
  if (!(pg->flags & PG_DIRTY)) {
    pager_cache_lru_add(p, pg);
    if (p->ncached > p->lru_max) pager_cache_trim(p);
  } else if (p->wal && !p->lru_head && p->ncached >= p->budget && pg != p->dirty_tail) {
    /* a cache full of dirty pages spills (WAL) the one used longest ago */
    pager_cache_dirty_touch(p, pg);
  }
}

int pager_write(PgPage *pg) {
  Pager *p = pg->pager;
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_WRITE) return p->readonly ? SHALE_READONLY : SHALE_MISUSE;
  assert(pg->nref > 0);
  if (pg->pgno > p->max_pgno) return SHALE_FULL;
  /* Already journalled and saved for every savepoint (invariant 5 of
   * pager_int.h): nothing to do, as on most writes of a busy page. */
  if ((pg->flags & PG_DIRTY) && pg->spgen == p->spgen && pg->pgno <= p->db_size) return SHALE_OK;
  pager_page_own(p, pg, 1); /* a page read in place (pager_cache.c invariant 10) */
  int rc = prepare_write(p, pg);
  if (rc != SHALE_OK) return rc;
  pg->spgen = p->spgen;
  pager_cache_make_dirty(p, pg);
  p->wrote = 1;
  if (pg->pgno > p->db_size) p->db_size = pg->pgno;
  return SHALE_OK;
}

int pager_is_writable(PgPage *pg) { return (pg->flags & PG_DIRTY) != 0; }
uint32_t pager_pgno(PgPage *pg) { return pg->pgno; }
Pager *pager_of(PgPage *pg) { return pg->pager; }

/* ---- stats and check ---- */

int pager_wal_frames(Pager *p) { return p->wal ? (int)wal_max_frame(p->wal) : 0; }

void pager_stats(Pager *p, PagerStats *s) {
  *s = p->stats;
  /* with the application's cache, the pages it holds (pinned or not) */
  s->cached = p->appc ? p->app.pagecount(p->appc) : p->ncached;
  s->dirty = p->ndirty;
  s->refs = p->nrefd;
}

int pager_check(Pager *p) {
  int n = 0, ndirty = 0, nrefd = 0, nlru = 0, nd = 0;
  uint32_t lockpg = pager_lock_page(p);
  for (uint32_t i = 0; i < p->nhash; i++) {
    for (PgPage *pg = p->hash[i]; pg; pg = pg->hnext) {
      n++;
      if (pg->pager != p || pg->pgno == 0 || pg->nref < 0) return SHALE_INTERNAL;
      if ((pg->pgno & (p->nhash - 1)) != i) return SHALE_INTERNAL;
      if (pg->flags & PG_DIRTY) {
        ndirty++;
        if (p->txn != PAGER_TXN_WRITE) return SHALE_INTERNAL;
        if (!p->wal && p->journal_mode != PAGER_JOURNAL_OFF && pg->pgno <= p->orig_size &&
            pg->pgno != lockpg && !pager_pgset_has(&p->journaled, pg->pgno))
          return SHALE_INTERNAL;
        for (int k = 0; k < p->nsp && pg->spgen == p->spgen && pg->pgno != lockpg; k++)
          if (pg->pgno <= p->sp[k].db_size && !pager_pgset_has(&p->sp[k].saved, pg->pgno))
            return SHALE_INTERNAL;
      }
      if (pg->nref > 0) nrefd++;
      /* a page read in place is clean and in the built-in cache (pager_cache.c
       * invariant 10) */
      if (pager_page_mapped(pg) && ((pg->flags & PG_DIRTY) || pg->app)) return SHALE_INTERNAL;
      if ((pg->app != NULL) != (p->app.fetch != NULL)) return SHALE_INTERNAL; /* invariant 9 */
    }
  }
  int nall = 0;
  for (PgPage *pg = p->all_head; pg; pg = pg->anext) {
    if (++nall > n || pager_cache_find(p, pg->pgno) != pg) return SHALE_INTERNAL;
    if (pg->anext && pg->anext->aprev != pg) return SHALE_INTERNAL;
  }
  if (nall != n) return SHALE_INTERNAL;
  for (PgPage *pg = p->lru_head; pg; pg = pg->lnext) {
    nlru++;
    if (pg->nref != 0 || (pg->flags & PG_DIRTY)) return SHALE_INTERNAL;
    if (pg->lnext && pg->lnext->lprev != pg) return SHALE_INTERNAL;
    if (nlru > n) return SHALE_INTERNAL;
  }
  for (PgPage *pg = p->dirty_head; pg; pg = pg->dnext) {
    nd++;
    if (!(pg->flags & PG_DIRTY)) return SHALE_INTERNAL;
    if (pg->dnext && pg->dnext->dprev != pg) return SHALE_INTERNAL;
    if (nd > n) return SHALE_INTERNAL;
  }
  if (n != p->ncached || ndirty != p->ndirty || nd != ndirty || nrefd != p->nrefd)
    return SHALE_INTERNAL;
  int clean_unref = 0; /* every clean unreferenced page must be on the LRU */
  for (uint32_t i = 0; i < p->nhash; i++)
    for (PgPage *pg = p->hash[i]; pg; pg = pg->hnext)
      if (pg->nref == 0 && !(pg->flags & PG_DIRTY)) clean_unref++;
  if (clean_unref != nlru) return SHALE_INTERNAL;
  if (p->ncached > p->budget && p->lru_head) return SHALE_INTERNAL;
  if (p->txn == PAGER_TXN_WRITE && !p->wal && p->lock < OS_LOCK_RESERVED) return SHALE_INTERNAL;
  if (p->wal && (p->lock < OS_LOCK_SHARED || p->journal_mode != PAGER_JOURNAL_WAL))
    return SHALE_INTERNAL;
  if (p->txn != PAGER_TXN_NONE && p->lock < OS_LOCK_SHARED) return SHALE_INTERNAL;
  return SHALE_OK;
}

/* ---- whole-file replacement at another page size (VACUUM) ---- */

int pager_commit_replace(Pager *p, uint32_t page_size, uint32_t npage,
                         int (*get)(void *ctx, uint32_t pgno, uint8_t *buf), void *ctx) {
  if (p->err) return p->err;
  if (p->txn != PAGER_TXN_WRITE || p->wal || p->memory || p->ndirty > 0 || p->nrefd > 0 ||
      p->nsp > 0 || p->dbmod || npage == 0 || page_size < 512 || page_size > 65536 ||
      (page_size & (page_size - 1)))
    return SHALE_MISUSE;
  int rc = SHALE_OK;
  uint32_t lockpg = pager_lock_page(p);
  /* 1. the original, page by page, into the journal (old page size) */
  if (p->journal_mode != PAGER_JOURNAL_OFF) {
    for (uint32_t pgno = 1; pgno <= p->orig_size; pgno++) {
      if (pgno == lockpg || pager_pgset_has(&p->journaled, pgno)) continue;
      PgPage *pg;
      rc = pager_get(p, pgno, 0, &pg);
      if (rc != SHALE_OK) return rc;
      rc = pager_journal_page(p, pg);
      pager_unref(pg);
      if (rc != SHALE_OK) return rc;
    }
  }
  rc = pager_journal_sync(p);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  if (p->lock < OS_LOCK_EXCLUSIVE) {
    rc = pager_lock_wait(p, OS_LOCK_EXCLUSIVE);
    if (rc != SHALE_OK) return rc; /* still in the write transaction */
  }
  uint8_t *buf = shale_malloc(page_size);
  if (!buf) return SHALE_NOMEM;
  /* 2. the new pages straight into the file */
  p->dbmod = 1;
  uint32_t counter = util_get4(p->hdr) + 1;
  uint32_t newlock = 0x40000000u / page_size + 1;
  for (uint32_t k = 1; rc == SHALE_OK && k <= npage; k++) {
    if (k == newlock) continue;
    rc = get(ctx, k, buf);
    if (rc != SHALE_OK) break;
    if (k == 1) {
      util_put2(buf + 16, page_size == 65536 ? 1 : page_size);
      util_put4(buf + 24, counter);
      util_put4(buf + 28, npage);
      util_put4(buf + 92, counter);
      util_put4(buf + 96, PAGER_VERSION_STAMP);
    }
    rc = os_write(p->fd, buf, (int)page_size, (int64_t)(k - 1) * page_size);
    if (rc == SHALE_OK) p->stats.writes++;
  }
  shale_free(buf);
  int64_t fsz = 0, want = (int64_t)npage * page_size;
  if (rc == SHALE_OK) rc = os_file_size(p->fd, &fsz);
  if (rc == SHALE_OK && fsz > want) rc = pager_file_truncate(p, want);
  if (rc == SHALE_OK && p->sync_level != PAGER_SYNC_OFF) {
    rc = os_sync(p->fd, OS_SYNC_NORMAL);
    p->stats.syncs++;
  }
  /* 3. the commit point */
  if (rc == SHALE_OK) rc = pager_journal_finalize(p);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  /* the file decides the page size, the size and the cache from now on */
  pager_cache_free_all(p);
  rc = read_header(p, 1);
  end_write(p);
  if (rc != SHALE_OK) return pager_set_error(p, rc);
  return SHALE_OK;
}
