/*
 * test_os_fault.c -- the fault-injecting VFS: armed failures, counters,
 * power loss with keep/tear, dead handles, closed-file logs, delete.
 */
#include <stdlib.h>

#include "../../../src/os/os.h"
#include "../../test.h"

static OsFile *fopen_rw(OsVfs *v, const char *path) {
  OsFile *f = NULL;
  CHECK_OK(os_open_alloc(v, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f));
  return f;
}

static void fill(char *b, int n, int seed) {
  for (int i = 0; i < n; i++) b[i] = (char)(seed + i * 13);
}

/* Read the whole base file into a fresh buffer; *n gets its size. */
static char *slurp(OsVfs *base, const char *path, int64_t *n) {
  OsFile *f = NULL;
  *n = -1;
  if (os_open_alloc(base, path, SHALE_OPEN_READONLY, NULL, &f) != SHALE_OK) return NULL;
  os_file_size(f, n);
  char *b = malloc((size_t)*n + 1);
  if (*n > 0) CHECK_OK(os_read(f, b, (int)*n, 0));
  os_close_free(f);
  return b;
}

TEST(fault_arm_and_count) {
  OsVfs *fv = os_fault_vfs_create("fault1", os_vfs_find("unix"));
  CHECK(fv != NULL);
  CHECK(os_vfs_find("fault1") == fv);
  CHECK(os_vfs_find(NULL) != fv);
  OsFile *f = fopen_rw(fv, test_path("arm.db"));
  char b[100];
  fill(b, 100, 1);
  CHECK_OK(os_write(f, b, 100, 0));
  CHECK_EQ(os_fault_count(fv, OS_FAULT_WRITE), 1);
  os_fault_arm(fv, OS_FAULT_WRITE, 2, 0);
  CHECK_OK(os_write(f, b, 10, 100));
  CHECK_RC(os_write(f, b, 10, 200), SHALE_IOERR_WRITE); /* the 2nd from arming */
  CHECK_OK(os_write(f, b, 10, 300));                    /* once only */
  int64_t sz;
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 310);
  CHECK_EQ(os_fault_count(fv, OS_FAULT_WRITE), 4);
  /* persistent */
  os_fault_arm(fv, OS_FAULT_READ, 1, 1);
  CHECK_RC(os_read(f, b, 10, 0), SHALE_IOERR_READ);
  CHECK_RC(os_read(f, b, 10, 0), SHALE_IOERR_READ);
  os_fault_arm(fv, OS_FAULT_READ, 0, 0);
  CHECK_OK(os_read(f, b, 10, 0));
  CHECK_EQ(os_fault_count(fv, OS_FAULT_READ), 3);
  os_fault_arm(fv, OS_FAULT_SYNC, 1, 0);
  CHECK_RC(os_sync(f, OS_SYNC_NORMAL), SHALE_IOERR_FSYNC);
  CHECK_EQ(os_fault_unsynced(fv),
           3); /* the failed write is not logged; a failed sync keeps the log */
  CHECK_OK(os_sync(f, OS_SYNC_NORMAL));
  CHECK_EQ(os_fault_unsynced(fv), 0);
  CHECK_EQ(os_fault_count(fv, OS_FAULT_SYNC), 2);
  os_fault_arm(fv, OS_FAULT_TRUNCATE, 1, 0);
  CHECK_RC(os_truncate(f, 5), SHALE_IOERR_TRUNCATE);
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 310);
  CHECK_OK(os_truncate(f, 5));
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 5);
  CHECK_EQ(os_fault_count(fv, OS_FAULT_TRUNCATE), 2);
  os_close_free(f);
  os_fault_vfs_destroy(fv);
  CHECK(os_vfs_find("fault1") == NULL);
}

TEST(fault_power_loss_drops_unsynced) {
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault2", u);
  const char *p = test_path("pl.db");
  OsFile *f = fopen_rw(fv, p);
  char a[4096], b[4096];
  fill(a, 4096, 1);
  fill(b, 4096, 2);
  CHECK_OK(os_write(f, a, 4096, 0));
  CHECK_OK(os_sync(f, OS_SYNC_FULL));
  CHECK_OK(os_write(f, b, 4096, 0));    /* overwrite */
  CHECK_OK(os_write(f, b, 4096, 4096)); /* extend */
  CHECK_OK(os_truncate(f, 6000));
  CHECK_EQ(os_fault_unsynced(fv), 3);
  os_fault_power_loss(fv, 0, 0);
  CHECK_EQ(os_fault_unsynced(fv), 0);
  /* the handle is dead */
  char t[10];
  CHECK_RC(os_read(f, t, 10, 0), SHALE_IOERR);
  CHECK_RC(os_write(f, t, 10, 0), SHALE_IOERR);
  CHECK_RC(os_sync(f, 0), SHALE_IOERR);
  int64_t sz;
  CHECK_RC(os_file_size(f, &sz), SHALE_IOERR);
  CHECK_RC(os_lock(f, OS_LOCK_SHARED), SHALE_IOERR);
  CHECK_OK(os_close_free(f));
  char *img = slurp(u, p, &sz);
  CHECK_EQ(sz, 4096);
  CHECK(img && memcmp(img, a, 4096) == 0);
  free(img);
  /* after the "reboot" new handles work */
  f = fopen_rw(fv, p);
  CHECK_OK(os_read(f, t, 10, 0));
  CHECK(memcmp(t, a, 10) == 0);
  os_close_free(f);
  os_fault_vfs_destroy(fv);
}

TEST(fault_power_loss_keep_and_tear) {
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault3", u);
  const char *p = test_path("tear.db");
  char w[5][2048];
  for (int i = 0; i < 5; i++) fill(w[i], 2048, 10 + i);
  char base[8192];
  fill(base, 8192, 99);
  for (int keep = 0; keep <= 5; keep++) {
    for (int tear = 0; tear <= 1; tear++) {
      OsFile *f = fopen_rw(fv, p);
      CHECK_OK(os_truncate(f, 0));
      CHECK_OK(os_write(f, base, 8192, 0));
      CHECK_OK(os_sync(f, OS_SYNC_NORMAL));
      /* writes 0..2 overwrite, 3..4 extend the file */
      int64_t offs[5] = {0, 1000, 6000, 8192, 10240};
      for (int i = 0; i < 5; i++) CHECK_OK(os_write(f, w[i], 2048, offs[i]));
      CHECK_EQ(os_fault_unsynced(fv), 5);
      os_fault_power_loss(fv, keep, tear);
      os_close_free(f);
      /* expected image: base, then writes 0..keep-1, the last one torn */
      static char want[16384];
      int64_t wsz = 8192;
      memcpy(want, base, 8192);
      for (int i = 0; i < keep; i++) {
        int n = (tear && i == keep - 1) ? 1024 : 2048; /* (2048/2) & ~511 */
        memcpy(want + offs[i], w[i], (size_t)n);
        if (offs[i] + n > wsz) wsz = offs[i] + n;
      }
      int64_t sz;
      char *img = slurp(u, p, &sz);
      CHECK_EQ(sz, wsz);
      if (sz == wsz) CHECK(memcmp(img, want, (size_t)wsz) == 0);
      free(img);
    }
  }
  os_fault_vfs_destroy(fv);
}

TEST(fault_tear_rounds_to_512) {
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault4", u);
  const char *p = test_path("tear2.db");
  OsFile *f = fopen_rw(fv, p);
  char w[3000];
  fill(w, 3000, 5);
  CHECK_OK(os_sync(f, 0));
  CHECK_OK(os_write(f, w, 3000, 100)); /* new file: half = 1500 -> 1024 kept */
  os_fault_power_loss(fv, 1, 1);
  os_close_free(f);
  int64_t sz;
  char *img = slurp(u, p, &sz);
  CHECK_EQ(sz, 1124);
  for (int i = 0; i < 100 && sz == 1124; i++) CHECK_EQ(img[i], 0);
  if (sz == 1124) CHECK(memcmp(img + 100, w, 1024) == 0);
  /* a write shorter than 1024 bytes tears to nothing */
  f = fopen_rw(fv, p);
  CHECK_OK(os_sync(f, 0));
  CHECK_OK(os_write(f, w, 1000, 0));
  os_fault_power_loss(fv, 1, 1);
  os_close_free(f);
  char *img2 = slurp(u, p, &sz);
  CHECK_EQ(sz, 1124);
  if (sz == 1124) CHECK(memcmp(img2, img, 1124) == 0);
  free(img);
  free(img2);
  os_fault_vfs_destroy(fv);
}

TEST(fault_closed_file_and_shared_handles) {
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault5", u);
  const char *p = test_path("closed.db");
  OsFile *f = fopen_rw(fv, p);
  CHECK_OK(os_write(f, "durable", 7, 0));
  CHECK_OK(os_sync(f, 0));
  CHECK_OK(os_write(f, "LOST", 4, 0));
  os_close_free(f); /* closed without sync: still lost at power loss */
  CHECK_EQ(os_fault_unsynced(fv), 1);
  /* two handles of one path: a sync through one covers the other's writes */
  const char *q = test_path("two.db");
  OsFile *a = fopen_rw(fv, q), *b = fopen_rw(fv, q);
  CHECK_OK(os_write(a, "AAAA", 4, 0));
  CHECK_OK(os_sync(b, 0));
  CHECK_OK(os_write(b, "BB", 2, 0));
  os_fault_power_loss(fv, 0, 0);
  os_close_free(a);
  os_close_free(b);
  int64_t sz;
  char *img = slurp(u, p, &sz);
  CHECK_EQ(sz, 7);
  if (sz == 7) CHECK(memcmp(img, "durable", 7) == 0);
  free(img);
  img = slurp(u, q, &sz);
  CHECK_EQ(sz, 4);
  if (sz == 4) CHECK(memcmp(img, "AAAA", 4) == 0);
  free(img);
  /* a deleted file's log is dropped: delete counts as durable */
  f = fopen_rw(fv, p);
  CHECK_OK(os_write(f, "x", 1, 100));
  os_close_free(f);
  CHECK_EQ(os_fault_unsynced(fv), 1);
  CHECK_OK(fv->delete (fv, p, 1));
  CHECK_EQ(os_fault_unsynced(fv), 0);
  os_fault_power_loss(fv, 0, 0);
  int res = 1;
  CHECK_OK(u->access(u, p, OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 0);
  os_fault_vfs_destroy(fv);
}

TEST(fault_over_memdb) {
  OsVfs *m = os_vfs_find("memdb");
  OsVfs *fv = os_fault_vfs_create("fault6", m);
  OsFile *f = fopen_rw(fv, "mem.db");
  CHECK_OK(os_write(f, "12345678", 8, 0));
  CHECK_OK(os_sync(f, 0));
  CHECK_OK(os_write(f, "abcd", 4, 2));
  CHECK_OK(os_write(f, "zz", 2, 8));
  os_fault_power_loss(fv, 1, 0);
  os_close_free(f);
  int64_t sz;
  char *img = slurp(m, "mem.db", &sz);
  CHECK_EQ(sz, 8);
  if (sz == 8) CHECK(memcmp(img, "12abcd78", 8) == 0);
  free(img);
  CHECK_OK(m->delete (m, "mem.db", 0));
  os_fault_vfs_destroy(fv);
}

TEST(fault_randomized_against_model) {
  /* Random writes/truncates/syncs; power loss with random keep must give
   * exactly the image replayed from the model. */
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault7", u);
  uint64_t s = test_seed();
  const char *p = test_path("rand.db");
  int rounds = test_long() ? 200 : 30;
  static char img[65536], synced[65536];
  for (int r = 0; r < rounds; r++) {
    OsFile *f = fopen_rw(fv, p);
    CHECK_OK(os_truncate(f, 0));
    CHECK_OK(os_sync(f, 0));
    int64_t isz = 0, ssz = 0;
    /* history of unsynced ops, replayed from the synced image */
    struct {
      int trunc;
      int64_t off;
      int n;
      char data[2048];
    } ops[40];
    int nops = 0;
    int steps = 5 + (int)(test_rand(&s) % 30);
    for (int i = 0; i < steps && nops < 40; i++) {
      int k = (int)(test_rand(&s) % 10);
      if (k < 7) {
        int64_t off = (int64_t)(test_rand(&s) % 30000);
        int n = 1 + (int)(test_rand(&s) % 2048);
        char *d = ops[nops].data;
        for (int j = 0; j < n; j++) d[j] = (char)test_rand(&s);
        CHECK_OK(os_write(f, d, n, off));
        ops[nops].trunc = 0, ops[nops].off = off, ops[nops].n = n;
        nops++;
      } else if (k < 9) {
        int64_t sz = (int64_t)(test_rand(&s) % 32000);
        CHECK_OK(os_truncate(f, sz));
        ops[nops].trunc = 1, ops[nops].off = sz, ops[nops].n = 0;
        nops++;
      } else {
        CHECK_OK(os_sync(f, 0));
        /* fold ops into synced */
        for (int j = 0; j < nops; j++) {
          if (ops[j].trunc) {
            if (ops[j].off > ssz) memset(synced + ssz, 0, (size_t)(ops[j].off - ssz));
            ssz = ops[j].off;
          } else {
            if (ops[j].off > ssz) memset(synced + ssz, 0, (size_t)(ops[j].off - ssz));
            memcpy(synced + ops[j].off, ops[j].data, (size_t)ops[j].n);
            if (ops[j].off + ops[j].n > ssz) ssz = ops[j].off + ops[j].n;
          }
        }
        nops = 0;
      }
    }
    CHECK_EQ(os_fault_unsynced(fv), nops);
    int keep = nops ? (int)(test_rand(&s) % (unsigned)(nops + 1)) : 0;
    int tear = (int)(test_rand(&s) & 1);
    memcpy(img, synced, (size_t)ssz);
    isz = ssz;
    for (int j = 0; j < keep; j++) {
      int64_t off = ops[j].off;
      if (ops[j].trunc) {
        if (off > isz) memset(img + isz, 0, (size_t)(off - isz));
        isz = off;
        continue;
      }
      int n = ops[j].n;
      if (tear && j == keep - 1) n = (n / 2) & ~511;
      if (off > isz && n > 0) memset(img + isz, 0, (size_t)(off - isz));
      memcpy(img + off, ops[j].data, (size_t)n);
      if (n > 0 && off + n > isz) isz = off + n;
    }
    os_fault_power_loss(fv, keep, tear);
    os_close_free(f);
    int64_t sz;
    char *got = slurp(u, p, &sz);
    CHECK_EQ(sz, isz);
    if (sz == isz && got) CHECK(memcmp(got, img, (size_t)isz) == 0);
    free(got);
  }
  os_fault_vfs_destroy(fv);
}

TEST(fault_power_loss_with_readonly_handle_open) {
  OsVfs *u = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("fault8", u);
  const char *p = test_path("roh.db");
  OsFile *w = fopen_rw(fv, p);
  CHECK_OK(os_write(w, "base", 4, 0));
  CHECK_OK(os_sync(w, 0));
  CHECK_OK(os_write(w, "NEWER", 5, 0));
  os_close_free(w);
  OsFile *r = NULL;
  CHECK_OK(os_open_alloc(fv, p, SHALE_OPEN_READONLY, NULL, &r));
  os_fault_power_loss(fv, 0, 0);
  os_close_free(r);
  int64_t sz;
  char *img = slurp(u, p, &sz);
  CHECK_EQ(sz, 4);
  if (sz == 4) CHECK(memcmp(img, "base", 4) == 0);
  free(img);
  os_fault_vfs_destroy(fv);
}
