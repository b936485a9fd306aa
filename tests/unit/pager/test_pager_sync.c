/*
 * test_pager_sync.c -- what each synchronous level asks of the file system at
 * commit in journal_mode=DELETE, seen through a recording VFS over "unix":
 * OFF syncs nothing; NORMAL and FULL sync journal and database; FULL syncs
 * the journal once more than NORMAL (header rewrite); EXTRA also syncs the
 * directory when it deletes the journal (the delete is durable).
 */
#include "../../../src/pager/pager.h"
#include "../../test.h"

static OsVfs rec_vfs;
static OsVfs *base;
static int ndelete_sync, ndelete;
static int nsync;
static OsFileMethods rec_methods;
static const OsFileMethods *base_methods;

static int rec_sync(OsFile *f, int flags) {
  nsync++;
  return base_methods->sync(f, flags);
}

static int rec_open(OsVfs *v, const char *path, OsFile *f, int flags, int *out_flags) {
  int rc = base->open(base, path, f, flags, out_flags);
  if (rc == SHALE_OK && f->methods) {
    base_methods = f->methods;
    rec_methods = *f->methods;
    rec_methods.sync = rec_sync;
    f->methods = &rec_methods;
  }
  return rc;
}

static int rec_delete(OsVfs *v, const char *path, int sync_dir) {
  ndelete++;
  if (sync_dir) ndelete_sync++;
  return base->delete (base, path, sync_dir);
}

static void setup(void) {
  base = os_vfs_find("unix");
  rec_vfs = *base;
  rec_vfs.name = "rec-sync";
  rec_vfs.open = rec_open;
  rec_vfs.delete = rec_delete;
}

/* One committed write of two pages at the given level; counts reset first. */
static void commit_at(const char *path, int level) {
  Pager *p = NULL;
  CHECK_OK(pager_open(&rec_vfs, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_DB,
                      0, &p));
  pager_set_synchronous(p, level);
  CHECK_EQ(pager_journal_mode(p), PAGER_JOURNAL_DELETE);
  for (int round = 0; round < 2; round++) {
    if (round == 1) ndelete = ndelete_sync = nsync = 0; /* measure the 2nd commit */
    CHECK_OK(pager_begin_write(p, 0));
    for (uint32_t pg = 1; pg <= 2; pg++) {
      PgPage *page;
      CHECK_OK(pager_get(p, pg, 0, &page));
      CHECK_OK(pager_write(page));
      uint8_t *d = pager_data(page);
      if (pg == 1) {
        memcpy(d, "SQLite format 3", 16);
        d[16] = 0x10;
        d[18] = d[19] = 1;
        d[21] = 64;
        d[22] = d[23] = 32;
      } else {
        d[100] = (uint8_t)(round + 1);
      }
      pager_unref(page);
    }
    CHECK_OK(pager_commit(p));
    pager_end_read(p);
  }
  pager_close(p);
}

TEST(sync_levels_at_commit) {
  setup();
  int syncs[4], dsync[4];
  for (int level = PAGER_SYNC_OFF; level <= PAGER_SYNC_EXTRA; level++) {
    char name[32];
    snprintf(name, sizeof name, "sync%d.db", level);
    commit_at(test_path(name), level);
    syncs[level] = nsync;
    dsync[level] = ndelete_sync;
    CHECK_EQ(ndelete, 1); /* the journal is deleted at every level */
  }
  CHECK_EQ(syncs[PAGER_SYNC_OFF], 0);
  CHECK(syncs[PAGER_SYNC_NORMAL] >= 2);                     /* journal, then database */
  CHECK(syncs[PAGER_SYNC_FULL] > syncs[PAGER_SYNC_NORMAL]); /* header rewritten, synced again */
  CHECK(syncs[PAGER_SYNC_EXTRA] >= syncs[PAGER_SYNC_FULL]);
  CHECK_EQ(dsync[PAGER_SYNC_OFF], 0);
  CHECK_EQ(dsync[PAGER_SYNC_NORMAL], 0);
  CHECK_EQ(dsync[PAGER_SYNC_FULL], 0);
  CHECK_EQ(dsync[PAGER_SYNC_EXTRA], 1); /* EXTRA: the journal's delete is synced */
}
