/*
 * os_spill.c -- private temporary files that live in memory until they
 * outgrow a limit, then move to an anonymous file on disk (SQLite's
 * "memjournal" idea, for the pager's temporary databases, their journals
 * and sub-journals).
 *
 * Owns: SpillFile, an OsFile that forwards to an anonymous memdb file
 * until a write or truncate would take it past `limit` bytes; then the
 * content is copied into an anonymous (already unlinked) file of the disk
 * VFS, which serves every later call. Nobody else can open such a file, so
 * locks are bookkeeping only (always granted, nothing reserved elsewhere)
 * and sync is a no-op: a temporary file need not survive a crash.
 *
 * Invariants:
 *  1. cur is the memdb file while ondisk == 0, the disk file after; the
 *     bytes of the file are exactly those of cur.
 *  2. While in memory, the file never holds more than limit bytes (a write
 *     past it moves it first); after the move it never goes back.
 *  3. A failed move leaves the file in memory, unchanged, and returns the
 *     error of the disk VFS (the caller sees a failed write).
 */
#include <string.h>

#include "os_int.h"

typedef struct SpillFile {
  OsFile base;
  OsFile *cur;   /* memdb file, then the disk file */
  OsVfs *disk;   /* where the file goes past limit */
  int64_t limit; /* bytes kept in memory at most */
  int flags;     /* open flags for the disk file */
  int ondisk;
  int lock;
} SpillFile;

#define SPILL_COPY 65536

/* Move the content to an anonymous file of the disk VFS. */
static int spill_move(SpillFile *f) {
  int64_t size = 0;
  int rc = os_file_size(f->cur, &size);
  if (rc != SHALE_OK) return rc;
  OsFile *d = NULL;
  rc = os_open_alloc(f->disk, NULL,
                     f->flags | SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_DELETEONCLOSE,
                     NULL, &d);
  if (rc != SHALE_OK) return rc;
  uint8_t *buf = size > 0 ? shale_malloc(SPILL_COPY) : NULL;
  if (size > 0 && !buf) rc = SHALE_NOMEM;
  for (int64_t off = 0; rc == SHALE_OK && off < size; off += SPILL_COPY) {
    int n = size - off < SPILL_COPY ? (int)(size - off) : SPILL_COPY;
    rc = os_read(f->cur, buf, n, off);
    if (rc == SHALE_OK) rc = os_write(d, buf, n, off);
  }
  shale_free(buf);
  if (rc != SHALE_OK) {
    os_close_free(d);
    return rc;
  }
  os_close_free(f->cur);
  f->cur = d;
  f->ondisk = 1;
  return SHALE_OK;
}

static int spill_close(OsFile *pf) {
  SpillFile *f = (SpillFile *)pf;
  int rc = os_close_free(f->cur);
  f->cur = NULL;
  f->base.methods = NULL;
  return rc;
}

static int spill_read(OsFile *pf, void *buf, int amt, int64_t off) {
  return os_read(((SpillFile *)pf)->cur, buf, amt, off);
}

static int spill_write(OsFile *pf, const void *buf, int amt, int64_t off) {
  SpillFile *f = (SpillFile *)pf;
  if (!f->ondisk && off + amt > f->limit) {
    int rc = spill_move(f);
    if (rc != SHALE_OK) return rc;
  }
  return os_write(f->cur, buf, amt, off);
}

static int spill_truncate(OsFile *pf, int64_t size) {
  SpillFile *f = (SpillFile *)pf;
  if (!f->ondisk && size > f->limit) {
    int rc = spill_move(f);
    if (rc != SHALE_OK) return rc;
  }
  return os_truncate(f->cur, size);
}

static int spill_sync(OsFile *pf, int flags) {
  (void)pf;
  (void)flags;
  return SHALE_OK;
}

static int spill_file_size(OsFile *pf, int64_t *size) {
  return os_file_size(((SpillFile *)pf)->cur, size);
}

static int spill_lock(OsFile *pf, int level) {
  SpillFile *f = (SpillFile *)pf;
  if (level > f->lock) f->lock = level;
  return SHALE_OK;
}

static int spill_unlock(OsFile *pf, int level) {
  SpillFile *f = (SpillFile *)pf;
  if (level < f->lock) f->lock = level;
  return SHALE_OK;
}

static int spill_check_reserved(OsFile *pf, int *out) {
  (void)pf;
  *out = 0;
  return SHALE_OK;
}

static int spill_sector_size(OsFile *pf) { return os_sector_size(((SpillFile *)pf)->cur); }

static int spill_device_characteristics(OsFile *pf) {
  return os_device_characteristics(((SpillFile *)pf)->cur);
}

static int spill_shm_map(OsFile *pf, int region, int region_size, int extend, volatile void **pp) {
  (void)pf;
  (void)region;
  (void)region_size;
  (void)extend;
  *pp = NULL;
  return SHALE_IOERR_SHMMAP;
}

static int spill_shm_lock(OsFile *pf, int offset, int n, int flags) {
  (void)pf;
  (void)offset;
  (void)n;
  (void)flags;
  return SHALE_IOERR_SHMLOCK;
}

static void spill_shm_barrier(OsFile *pf) { (void)pf; }

static int spill_shm_unmap(OsFile *pf, int delete_flag) {
  (void)pf;
  (void)delete_flag;
  return SHALE_OK;
}

static const OsFileMethods spill_methods = {
    spill_close,
    spill_read,
    spill_write,
    spill_truncate,
    spill_sync,
    spill_file_size,
    spill_lock,
    spill_unlock,
    spill_check_reserved,
    spill_sector_size,
    spill_device_characteristics,
    spill_shm_map,
    spill_shm_lock,
    spill_shm_barrier,
    spill_shm_unmap,
    NULL, /* map: no mapped reads (the pager uses read) */
    NULL,
    NULL,
    NULL,
    NULL, /* file_control: none */
};

int os_open_spill(OsVfs *disk, int64_t limit, int flags, OsFile **out) {
  *out = NULL;
  if (!disk) disk = os_vfs_find(NULL);
  OsVfs *mem = os_vfs_find("memdb");
  if (!disk || !mem) return SHALE_CANTOPEN;
  SpillFile *f = shale_malloc(sizeof *f);
  if (!f) return SHALE_NOMEM;
  memset(f, 0, sizeof *f);
  int rc = os_open_alloc(mem, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MEMORY,
                         NULL, &f->cur);
  if (rc != SHALE_OK) {
    shale_free(f);
    return rc;
  }
  f->disk = disk;
  f->limit = limit > 0 ? limit : 0;
  f->flags = flags & ~(SHALE_OPEN_MEMORY | SHALE_OPEN_READONLY);
  f->base.methods = &spill_methods;
  *out = &f->base;
  return SHALE_OK;
}

int os_spill_on_disk(OsFile *f) {
  return f && f->methods == &spill_methods && ((SpillFile *)f)->ondisk;
}
