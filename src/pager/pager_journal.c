/*
 * pager_journal.c -- the rollback journal, in SQLite's on-disk format
 * (docs/format.md §9).
 *
 * Owns: the journal file handle (a real "<db>-journal" file for DELETE,
 * TRUNCATE and PERSIST, an anonymous memdb file for MEMORY), segment
 * headers, page records and their checksums, syncing, finalisation after a
 * transaction, playback of our own journal and of hot journals (ours or
 * SQLite's), super-journal names.
 *
 * Journal layout:
 *   segment header (sector bytes): magic[8] nRec[4] nonce[4] init_size[4]
 *                                  sector[4] page_size[4] zero padding
 *   records: pgno[4] original page image[page_size] checksum[4]
 *   next segment header at the next multiple of the sector size.
 *   checksum = nonce + data[ps-200] + data[ps-400] + ... (offsets > 0).
 *
 * Invariants:
 *  1. With synchronous NORMAL/FULL/EXTRA and an on-disk journal, a segment
 *     header is first written with magic and nRec zeroed; both are written
 *     (after a first sync under FULL/EXTRA) and synced before any database
 *     page is overwritten. Each sync closes the segment.
 *  2. With synchronous=OFF or a MEMORY journal there is a single segment
 *     whose header carries the magic and nRec = 0xFFFFFFFF from the start.
 *  3. Playback stops at the first header without the magic, the first
 *     record with a bad checksum, page number 0 or the lock-byte page, or at
 *     end of file, and never writes a page past the journal's initial size.
 *  4. A journal naming a super-journal that no longer exists is not played
 *     back (the multi-database commit stood); it is deleted.
 *  5. A journal in memory (journal_mode=MEMORY, an in-memory or temporary
 *     database) is emptied, not freed, at the end of a transaction and
 *     reused by the next (jspare), unless it grew past JOURNAL_KEEP_MAX; a
 *     temporary database's journal is a spill file (os_open_spill), so it
 *     holds at most the cache bound in memory.
 */
#include <assert.h>
#include <string.h>

#include "pager_int.h"

static const uint8_t MAGIC[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
#define JHDR_BYTES 28
#define JSECTOR 512
#define JOURNAL_KEEP_MAX ((int64_t)1 << 20)

uint32_t pager_journal_cksum(uint32_t nonce, const uint8_t *data, uint32_t page_size) {
  uint32_t ck = nonce;
  for (int64_t i = (int64_t)page_size - 200; i > 0; i -= 200) ck += data[i];
  return ck;
}

int pager_journal_uses_file(Pager *p) {
  return !p->memory &&
         (p->journal_mode == PAGER_JOURNAL_DELETE || p->journal_mode == PAGER_JOURNAL_TRUNCATE ||
          p->journal_mode == PAGER_JOURNAL_PERSIST);
}

/* Journals whose headers carry magic + nRec 0xFFFFFFFF from the start. */
static int no_sync_journal(Pager *p) {
  return p->sync_level == PAGER_SYNC_OFF || !pager_journal_uses_file(p);
}

static int64_t align_up(int64_t off, uint32_t sector) {
  return off == 0 ? 0 : ((off + sector - 1) / sector) * sector;
}

void pager_journal_close(Pager *p) {
  if (p->jfd) os_close_free(p->jfd);
  p->jfd = NULL;
  os_close_free(p->jspare);
  p->jspare = NULL;
  shale_free(p->jbuf);
  p->jbuf = NULL;
}

/* A journal in memory (MEMORY, or a temporary database's spill file)
 * finished with: kept, emptied, for the next transaction (invariant 5),
 * unless it grew large. */
static void journal_keep(Pager *p) {
  OsFile *f = p->jfd;
  p->jfd = NULL;
  if (p->jofs <= JOURNAL_KEEP_MAX && os_truncate(f, 0) == SHALE_OK) {
    os_close_free(p->jspare);
    p->jspare = f;
  } else {
    os_close_free(f);
  }
}

/* Open the journal for the write transaction. */
static int journal_open(Pager *p) {
  assert(!p->jfd);
  int rc;
  int flags = SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_JOURNAL;
  if (pager_journal_uses_file(p)) {
    rc = os_open_alloc(p->vfs, p->jpath, flags, NULL, &p->jfd);
    if (rc == SHALE_OK) {
      /* A PERSIST/TRUNCATE leftover: start from an empty file so that stale
       * segments can never follow ours. */
      int64_t sz = 0;
      rc = os_file_size(p->jfd, &sz);
      if (rc == SHALE_OK && sz > 0) rc = os_truncate(p->jfd, 0);
    }
  } else if (p->jspare) {
    p->jfd = p->jspare; /* emptied by journal_keep */
    p->jspare = NULL;
    rc = SHALE_OK;
  } else if (p->temp) {
    /* a temporary database: in memory up to the cache bound, then on disk */
    rc = os_open_spill(p->vfs, pager_temp_limit(p), SHALE_OPEN_TEMP_JOURNAL, &p->jfd);
  } else {
    OsVfs *mem = os_vfs_find("memdb");
    if (!mem) return SHALE_CANTOPEN;
    rc = os_open_alloc(mem, NULL, flags | SHALE_OPEN_MEMORY, NULL, &p->jfd);
  }
  if (rc != SHALE_OK) {
    pager_journal_close(p);
    return rc == SHALE_NOMEM ? rc : (rc & 0xff) == SHALE_IOERR ? rc : SHALE_CANTOPEN;
  }
  p->jsector = JSECTOR;
  p->jhdr = 0;
  p->jofs = 0;
  p->jnrec = 0;
  p->jneed_hdr = 1;
  p->junsynced = 0;
  return SHALE_OK;
}

/* Write a new segment header at the next sector boundary. */
static int write_seg_header(Pager *p) {
  uint8_t buf[JSECTOR];
  memset(buf, 0, sizeof buf);
  int64_t at = align_up(p->jofs, p->jsector);
  uint32_t nonce;
  util_random(&nonce, 4);
  if (no_sync_journal(p)) {
    memcpy(buf, MAGIC, 8);
    util_put4(buf + 8, 0xffffffffu);
  }
  util_put4(buf + 12, nonce);
  util_put4(buf + 16, p->orig_size);
  util_put4(buf + 20, p->jsector);
  util_put4(buf + 24, p->page_size);
  int rc = os_write(p->jfd, buf, (int)p->jsector, at);
  if (rc != SHALE_OK) return rc;
  p->jhdr = at;
  p->jofs = at + p->jsector;
  p->jnrec = 0;
  p->jnonce = nonce;
  p->jneed_hdr = 0;
  p->junsynced = 1;
  return SHALE_OK;
}

/* Make sure the journal is open and has a current segment header. */
static int journal_ready(Pager *p) {
  int rc;
  if (!p->jfd) {
    rc = journal_open(p);
    if (rc != SHALE_OK) return rc;
  }
  if (p->jneed_hdr) return write_seg_header(p);
  return SHALE_OK;
}

int pager_journal_page(Pager *p, PgPage *pg) {
  assert(p->journal_mode != PAGER_JOURNAL_OFF);
  assert(pg->pgno <= p->orig_size && !pager_pgset_has(&p->journaled, pg->pgno));
  int rc = pager_pgset_reserve(&p->journaled, 1);
  if (rc != SHALE_OK) return rc;
  rc = journal_ready(p);
  if (rc != SHALE_OK) return rc;
  if (!p->jbuf) {
    p->jbuf = shale_malloc(p->page_size + 8);
    if (!p->jbuf) return SHALE_NOMEM;
  }
  int64_t at = p->jofs;
  uint32_t ck = pager_journal_cksum(p->jnonce, pg->v.data, p->page_size);
  if (pager_journal_uses_file(p)) {
    /* One system call per record: pgno, image, checksum. */
    util_put4(p->jbuf, pg->pgno);
    memcpy(p->jbuf + 4, pg->v.data, p->page_size);
    util_put4(p->jbuf + 4 + p->page_size, ck);
    rc = os_write(p->jfd, p->jbuf, (int)p->page_size + 8, at);
  } else {
    /* In memory: three writes spare a copy of the page. */
    util_put4(p->jbuf, pg->pgno);
    util_put4(p->jbuf + 4, ck);
    rc = os_write(p->jfd, p->jbuf, 4, at);
    if (rc == SHALE_OK) rc = os_write(p->jfd, pg->v.data, (int)p->page_size, at + 4);
    if (rc == SHALE_OK) rc = os_write(p->jfd, p->jbuf + 4, 4, at + 4 + p->page_size);
  }
  if (rc != SHALE_OK) return rc;
  p->jofs = at + 8 + p->page_size;
  p->jnrec++;
  p->junsynced = 1;
  pager_pgset_add(&p->journaled, pg->pgno);
  return SHALE_OK;
}

int pager_journal_write_super(Pager *p, const char *super) {
  int rc = journal_ready(p);
  if (rc != SHALE_OK) return rc;
  size_t n = strlen(super);
  uint8_t *b = shale_malloc(n + 20);
  if (!b) return SHALE_NOMEM;
  uint32_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += (uint32_t)(int)(signed char)super[i];
  util_put4(b, 0x40000000u / p->page_size + 1); /* the lock-byte page's number */
  memcpy(b + 4, super, n);
  util_put4(b + 4 + n, (uint32_t)n);
  util_put4(b + 8 + n, sum);
  memcpy(b + 12 + n, MAGIC, 8);
  rc = os_write(p->jfd, b, (int)(n + 20), p->jofs);
  shale_free(b);
  if (rc != SHALE_OK) return rc;
  p->jofs += (int64_t)n + 20;
  p->junsynced = 1;
  return SHALE_OK;
}

int pager_journal_sync(Pager *p) {
  int rc;
  if (p->journal_mode == PAGER_JOURNAL_OFF) return SHALE_OK;
  if (pager_journal_uses_file(p) && !p->jfd) {
    /* Nothing journalled (only new pages): the journal must still exist with
     * the initial size, so that a crash truncates the database back. */
    rc = journal_ready(p);
    if (rc != SHALE_OK) return rc;
  }
  if (!p->jfd || !p->junsynced) return SHALE_OK;
  if (no_sync_journal(p)) {
    p->junsynced = 0; /* one open-ended segment, never synced */
    return SHALE_OK;
  }
  if (p->sync_level >= PAGER_SYNC_FULL) {
    rc = os_sync(p->jfd, OS_SYNC_NORMAL);
    if (rc != SHALE_OK) return rc;
    p->stats.syncs++;
  }
  uint8_t b[12];
  memcpy(b, MAGIC, 8);
  util_put4(b + 8, p->jnrec);
  rc = os_write(p->jfd, b, 12, p->jhdr);
  if (rc != SHALE_OK) return rc;
  rc = os_sync(p->jfd, OS_SYNC_NORMAL);
  if (rc != SHALE_OK) return rc;
  p->stats.syncs++;
  p->junsynced = 0;
  p->jneed_hdr = 1;
  return SHALE_OK;
}

int pager_journal_finalize(Pager *p) {
  int rc = SHALE_OK;
  if (!p->jfd) return SHALE_OK;
  if (!pager_journal_uses_file(p)) {
    journal_keep(p);
    return SHALE_OK;
  }
  int full = p->sync_level >= PAGER_SYNC_FULL;
  int mode = p->journal_mode;
  /* locking_mode=EXCLUSIVE keeps a DELETE journal with a zeroed header
   * instead of deleting it (as SQLite); nobody else can be in the file. */
  if (mode == PAGER_JOURNAL_DELETE && p->excl_mode) mode = PAGER_JOURNAL_PERSIST;
  switch (mode) {
    case PAGER_JOURNAL_TRUNCATE:
      rc = os_truncate(p->jfd, 0);
      if (rc == SHALE_OK && full) rc = os_sync(p->jfd, OS_SYNC_NORMAL);
      pager_journal_close(p);
      break;
    case PAGER_JOURNAL_PERSIST: {
      uint8_t z[JHDR_BYTES];
      memset(z, 0, sizeof z);
      rc = os_write(p->jfd, z, (int)sizeof z, 0);
      if (rc == SHALE_OK && full) rc = os_sync(p->jfd, OS_SYNC_NORMAL);
      pager_journal_close(p);
      break;
    }
    default: /* DELETE */
      pager_journal_close(p);
      rc = p->vfs->delete (p->vfs, p->jpath, p->sync_level >= PAGER_SYNC_EXTRA);
      break;
  }
  return rc;
}

/* Super-journal name recorded at the end of the journal, if any (per §9):
 * ... marker[4] name[n] n[4] cksum[4] magic[8] at end of file. Returns
 * SHALE_OK with *name NULL when there is none. */
static int read_super(OsFile *jfd, int64_t size, uint32_t ps, char **name) {
  *name = NULL;
  if (size < 20 + 8) return SHALE_OK;
  uint8_t tail[16];
  int rc = os_read(jfd, tail, 16, size - 16);
  if (rc != SHALE_OK) return rc == SHALE_IOERR_SHORT_READ ? SHALE_OK : rc;
  if (memcmp(tail + 8, MAGIC, 8) != 0) return SHALE_OK;
  uint32_t n = util_get4(tail), ck = util_get4(tail + 4);
  if (n == 0 || (int64_t)n > size - 20 || n > 65536) return SHALE_OK;
  uint8_t mk[4];
  rc = os_read(jfd, mk, 4, size - 20 - n);
  if (rc != SHALE_OK) return rc == SHALE_IOERR_SHORT_READ ? SHALE_OK : rc;
  if (util_get4(mk) != 0x40000000u / ps + 1) return SHALE_OK;
  char *s = shale_malloc(n + 1);
  if (!s) return SHALE_NOMEM;
  rc = os_read(jfd, s, (int)n, size - 16 - n);
  if (rc != SHALE_OK) {
    shale_free(s);
    return rc == SHALE_IOERR_SHORT_READ ? SHALE_OK : rc;
  }
  s[n] = 0;
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; i++) sum += (uint32_t)(int)(signed char)s[i];
  if (sum != ck || strlen(s) != n) {
    shale_free(s);
    return SHALE_OK;
  }
  *name = s;
  return SHALE_OK;
}

static int pow2_in(uint32_t v, uint32_t lo, uint32_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

/* Play back the journal in p->jfd onto p->fd. is_hot: the journal's own
 * header gives the page size and initial size, the super-journal is checked,
 * and the database is truncated to the initial size. Own rollback (is_hot
 * 0): the caller truncates to orig_size. */
int pager_journal_playback(Pager *p, int is_hot, int *played) {
  int64_t size = 0;
  uint8_t h[JHDR_BYTES];
  uint8_t *buf = NULL;
  uint32_t init = 0, sector = 0, ps = 0;
  int first = 1, rc;
  *played = 0;
  rc = os_file_size(p->jfd, &size);
  if (rc != SHALE_OK) return rc;
  int64_t off = 0;
  for (;;) {
    if (off + JHDR_BYTES > size) break;
    rc = os_read(p->jfd, h, JHDR_BYTES, off);
    if (rc != SHALE_OK) goto out;
    if (memcmp(h, MAGIC, 8) != 0) break;
    uint32_t nrec = util_get4(h + 8), nonce = util_get4(h + 12);
    if (first) {
      init = util_get4(h + 16);
      sector = util_get4(h + 20);
      ps = util_get4(h + 24);
      if (!pow2_in(sector, 32, 65536) || !pow2_in(ps, 512, 65536)) break;
      if (is_hot) {
        char *super = NULL;
        rc = read_super(p->jfd, size, ps, &super);
        if (rc != SHALE_OK) goto out;
        if (super) {
          int exists = 0;
          rc = p->vfs->access(p->vfs, super, OS_ACCESS_EXISTS, &exists);
          shale_free(super);
          if (rc != SHALE_OK) goto out;
          if (!exists) goto out; /* the commit stood: nothing to play */
        }
      } else if (ps != p->page_size) {
        rc = SHALE_CORRUPT;
        goto out;
      }
      buf = shale_malloc(ps);
      if (!buf) {
        rc = SHALE_NOMEM;
        goto out;
      }
      first = 0;
    }
    int64_t rec = off + sector;
    if (nrec == 0xffffffffu) nrec = (uint32_t)(rec < size ? (size - rec) / (ps + 8) : 0);
    int done = 0;
    uint32_t lockpg = 0x40000000u / ps + 1;
    for (uint32_t k = 0; k < nrec; k++) {
      uint8_t b4[4];
      if (rec + ps + 8 > size) {
        done = 1;
        break;
      }
      rc = os_read(p->jfd, b4, 4, rec);
      if (rc == SHALE_OK) rc = os_read(p->jfd, buf, (int)ps, rec + 4);
      uint32_t pgno = util_get4(b4);
      if (rc == SHALE_OK) rc = os_read(p->jfd, b4, 4, rec + 4 + ps);
      if (rc != SHALE_OK) goto out;
      if (pgno == 0 || pgno == lockpg || util_get4(b4) != pager_journal_cksum(nonce, buf, ps)) {
        done = 1;
        break;
      }
      if (pgno <= init) {
        rc = os_write(p->fd, buf, (int)ps, (int64_t)(pgno - 1) * ps);
        if (rc != SHALE_OK) goto out;
        *played = 1;
      }
      rec += ps + 8;
    }
    if (done) break;
    int64_t next = align_up(rec, sector);
    if (next <= off) break;
    off = next;
  }
  if (is_hot && !first) {
    /* Restore the original size (per §9 step 4). */
    int64_t fsz = 0, want = (int64_t)init * ps;
    rc = os_file_size(p->fd, &fsz);
    if (rc != SHALE_OK) goto out;
    if (fsz > want) {
      rc = pager_file_truncate(p, want);
      *played = 1;
    } else if (fsz < want) {
      memset(buf, 0, ps);
      rc = os_write(p->fd, buf, (int)ps, want - ps);
      *played = 1;
    }
    if (rc != SHALE_OK) goto out;
  }
  rc = SHALE_OK;
out:
  shale_free(buf);
  return rc;
}

int pager_journal_playback_disk(Pager *p, int *played) {
  int exists = 0;
  *played = 0;
  assert(!p->jfd);
  int rc = p->vfs->access(p->vfs, p->jpath, OS_ACCESS_EXISTS, &exists);
  if (rc != SHALE_OK || !exists) return rc;
  rc = os_open_alloc(p->vfs, p->jpath, SHALE_OPEN_READWRITE | SHALE_OPEN_MAIN_JOURNAL, NULL,
                     &p->jfd);
  if (rc != SHALE_OK) {
    p->jfd = NULL;
    return rc;
  }
  /* Left open: the caller finalises it per journal_mode. */
  return pager_journal_playback(p, 1, played);
}

/* Delete the journal file (closing our handle first). */
static int delete_journal(Pager *p) {
  pager_journal_close(p);
  return p->vfs->delete (p->vfs, p->jpath, 0);
}

/* The super-journal named by the open journal p->jfd, or NULL. */
static int journal_super(Pager *p, char **super) {
  uint8_t h[JHDR_BYTES];
  int64_t size = 0;
  *super = NULL;
  int rc = os_file_size(p->jfd, &size);
  if (rc != SHALE_OK || size < JHDR_BYTES) return rc;
  rc = os_read(p->jfd, h, JHDR_BYTES, 0);
  if (rc != SHALE_OK) return rc;
  uint32_t ps = util_get4(h + 24);
  if (memcmp(h, MAGIC, 8) != 0 || !pow2_in(ps, 512, 65536)) return SHALE_OK;
  return read_super(p->jfd, size, ps, super);
}

/* After a hot rollback: delete the super-journal `super` unless another
 * journal it lists still exists and names it (that one is still hot). */
static int delete_super_if_unused(Pager *p, const char *super) {
  OsFile *sf = NULL, *cf = NULL;
  int64_t n = 0;
  char *list = NULL;
  int exists = 0, rc;
  /* Only ever delete something named like a super-journal ("<db>-mj..."),
   * whatever a (possibly crafted) journal says. */
  const char *base = strrchr(super, '/');
  if (!strstr(base ? base : super, "-mj")) return SHALE_OK;
  rc = p->vfs->access(p->vfs, super, OS_ACCESS_EXISTS, &exists);
  if (rc != SHALE_OK || !exists) return rc;
  rc = os_open_alloc(p->vfs, super, SHALE_OPEN_READONLY | SHALE_OPEN_SUPER_JOURNAL, NULL, &sf);
  if (rc != SHALE_OK) return SHALE_OK; /* can't read it: leave it */
  rc = os_file_size(sf, &n);
  if (rc == SHALE_OK && (n <= 0 || n > (1 << 24))) rc = SHALE_CORRUPT;
  if (rc == SHALE_OK) {
    list = shale_malloc((size_t)n + 1);
    if (!list) rc = SHALE_NOMEM;
  }
  if (rc == SHALE_OK) rc = os_read(sf, list, (int)n, 0);
  os_close_free(sf);
  if (rc != SHALE_OK) {
    shale_free(list);
    return rc == SHALE_NOMEM ? rc : SHALE_OK;
  }
  list[n] = 0;
  int in_use = 0;
  for (char *c = list; c < list + n && !in_use; c += strlen(c) + 1) {
    if (!*c) continue;
    rc = p->vfs->access(p->vfs, c, OS_ACCESS_EXISTS, &exists);
    if (rc != SHALE_OK) break;
    if (!exists) continue;
    if (os_open_alloc(p->vfs, c, SHALE_OPEN_READONLY | SHALE_OPEN_MAIN_JOURNAL, NULL, &cf) !=
        SHALE_OK)
      continue;
    OsFile *save = p->jfd;
    char *other = NULL;
    p->jfd = cf;
    rc = journal_super(p, &other);
    p->jfd = save;
    os_close_free(cf);
    if (other && strcmp(other, super) == 0) in_use = 1;
    shale_free(other);
    if (rc != SHALE_OK) break;
  }
  shale_free(list);
  if (rc != SHALE_OK) return rc;
  if (!in_use) rc = p->vfs->delete (p->vfs, super, 0);
  return rc;
}

int pager_hot_journal(Pager *p, int *rolled) {
  int exists = 0, reserved = 0, rc;
  *rolled = 0;
  if (p->memory) return SHALE_OK;
  assert(!p->jfd);
  rc = p->vfs->access(p->vfs, p->jpath, OS_ACCESS_EXISTS, &exists);
  if (rc != SHALE_OK || !exists) return rc;
  rc = os_check_reserved(p->fd, &reserved);
  if (rc != SHALE_OK || reserved) return rc; /* a live writer owns it */
  int64_t dbsz = 0, jsz = 0;
  rc = os_file_size(p->fd, &dbsz);
  if (rc != SHALE_OK) return rc;
  int flags = p->readonly ? SHALE_OPEN_READONLY : SHALE_OPEN_READWRITE;
  rc = os_open_alloc(p->vfs, p->jpath, flags | SHALE_OPEN_MAIN_JOURNAL, NULL, &p->jfd);
  if (rc != SHALE_OK) {
    p->jfd = NULL;
    return rc == SHALE_NOMEM ? rc : SHALE_OK; /* vanished: not hot */
  }
  uint8_t first = 0;
  rc = os_file_size(p->jfd, &jsz);
  if (rc == SHALE_OK && jsz > 0) {
    rc = os_read(p->jfd, &first, 1, 0);
    if (rc == SHALE_IOERR_SHORT_READ) rc = SHALE_OK;
  }
  if (rc != SHALE_OK || jsz == 0 || first == 0) {
    pager_journal_close(p);
    return rc;
  }
  if (dbsz == 0) {
    /* Rule 5: a journal beside an empty database is just removed. */
    if (!p->readonly && os_lock(p->fd, OS_LOCK_RESERVED) == SHALE_OK) {
      delete_journal(p);
      os_unlock(p->fd, OS_LOCK_SHARED);
    }
    pager_journal_close(p);
    return SHALE_OK;
  }
  if (p->readonly) {
    pager_journal_close(p);
    return SHALE_READONLY_ROLLBACK;
  }
  /* Hot: take EXCLUSIVE (no waiting: a concurrent recoverer wins). */
  rc = os_lock(p->fd, OS_LOCK_EXCLUSIVE);
  if (rc != SHALE_OK) {
    pager_journal_close(p);
    return rc;
  }
  p->lock = OS_LOCK_EXCLUSIVE;
  /* Someone may have rolled it back between our checks and the lock. */
  rc = p->vfs->access(p->vfs, p->jpath, OS_ACCESS_EXISTS, &exists);
  if (rc == SHALE_OK && exists) {
    int played = 0;
    pager_journal_close(p);
    rc = os_open_alloc(p->vfs, p->jpath, SHALE_OPEN_READWRITE | SHALE_OPEN_MAIN_JOURNAL, NULL,
                       &p->jfd);
    if (rc != SHALE_OK) {
      p->jfd = NULL;
      if (rc != SHALE_NOMEM) rc = SHALE_OK;
    } else {
      char *super = NULL;
      rc = journal_super(p, &super);
      if (rc == SHALE_OK) rc = pager_journal_playback(p, 1, &played);
      if (rc == SHALE_OK && played && p->sync_level != PAGER_SYNC_OFF) {
        rc = os_sync(p->fd, OS_SYNC_NORMAL);
        p->stats.syncs++;
      }
      if (rc == SHALE_OK) rc = delete_journal(p);
      if (rc == SHALE_OK && super) rc = delete_super_if_unused(p, super);
      if (rc == SHALE_OK) *rolled = 1;
      shale_free(super);
    }
  }
  pager_journal_close(p);
  int rc2 = os_unlock(p->fd, OS_LOCK_SHARED);
  p->lock = OS_LOCK_SHARED;
  return rc != SHALE_OK ? rc : rc2;
}
