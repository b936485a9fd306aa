/*
 * test_os.c -- the unix and memdb VFSes: I/O, temp files, delete/access,
 * full_pathname, the in-process lock protocol, the registry.
 * (Cross-process locks and sqlite3 interop: test_os_locks.c; fault VFS:
 * test_os_fault.c; shm: test_os_shm.c.)
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../test.h"

static OsFile *open_rw(OsVfs *v, const char *path) {
  OsFile *f = NULL;
  int out = 0;
  int rc = os_open_alloc(v, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &out, &f);
  CHECK_OK(rc);
  return f;
}

static void io_basics(OsVfs *v, const char *path) {
  OsFile *f = open_rw(v, path);
  if (!f) return;
  int64_t sz = -1;
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 0);
  char buf[1000], got[1000];
  for (int i = 0; i < 1000; i++) buf[i] = (char)(i * 7);
  CHECK_OK(os_write(f, buf, 1000, 0));
  CHECK_OK(os_write(f, buf, 100, 5000)); /* leaves a hole */
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 5100);
  CHECK_OK(os_read(f, got, 1000, 0));
  CHECK(memcmp(buf, got, 1000) == 0);
  CHECK_OK(os_read(f, got, 100, 1000)); /* the hole reads as zero */
  for (int i = 0; i < 100; i++) CHECK_EQ(got[i], 0);
  /* short read: zero-filled tail */
  memset(got, 0x55, sizeof got);
  CHECK_RC(os_read(f, got, 200, 5000), SHALE_IOERR_SHORT_READ);
  CHECK(memcmp(got, buf, 100) == 0);
  for (int i = 100; i < 200; i++) CHECK_EQ(got[i], 0);
  memset(got, 0x55, sizeof got);
  CHECK_RC(os_read(f, got, 50, 100000), SHALE_IOERR_SHORT_READ);
  for (int i = 0; i < 50; i++) CHECK_EQ(got[i], 0);
  CHECK_OK(os_truncate(f, 300));
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 300);
  CHECK_RC(os_read(f, got, 400, 0), SHALE_IOERR_SHORT_READ);
  CHECK(memcmp(got, buf, 300) == 0);
  CHECK_OK(os_truncate(f, 8192)); /* grow */
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 8192);
  CHECK_OK(os_read(f, got, 100, 8000));
  for (int i = 0; i < 100; i++) CHECK_EQ(got[i], 0);
  CHECK_OK(os_sync(f, OS_SYNC_NORMAL));
  CHECK_OK(os_sync(f, OS_SYNC_FULL));
  CHECK_OK(os_sync(f, OS_SYNC_DATAONLY | OS_SYNC_NORMAL));
  CHECK_EQ(os_sector_size(f), 512);
  CHECK(os_device_characteristics(f) & OS_IOCAP_POWERSAFE_OVERWRITE);
  CHECK_OK(os_close_free(f));
}

TEST(unix_io_basics) { io_basics(os_vfs_find("unix"), test_path("io.db")); }
TEST(memdb_io_basics) {
  OsVfs *m = os_vfs_find("memdb");
  io_basics(m, "io.db");
  CHECK_OK(m->delete (m, "io.db", 0));
  io_basics(m, NULL);
}

TEST(registry) {
  OsVfs *u = os_vfs_find(NULL);
  CHECK(u != NULL);
  CHECK_STR(u->name, "unix");
  CHECK(os_vfs_find("unix") == u);
  CHECK(os_vfs_find("memdb") != NULL);
  CHECK(os_vfs_find("nosuch") == NULL);
  static OsVfs mine;
  mine = *os_vfs_find("memdb");
  mine.name = "mine";
  CHECK_OK(os_vfs_register(&mine, 1));
  CHECK(os_vfs_find(NULL) == &mine);
  CHECK(os_vfs_find("mine") == &mine);
  CHECK_OK(os_vfs_unregister(&mine));
  CHECK(os_vfs_find("mine") == NULL);
  CHECK(os_vfs_find(NULL) != NULL);
  CHECK_OK(os_vfs_register(u, 1));
  CHECK(os_vfs_find(NULL) == u);
}

TEST(unix_persist_reopen) {
  OsVfs *u = os_vfs_find(NULL);
  const char *p = test_path("persist.db");
  OsFile *f = open_rw(u, p);
  CHECK_OK(os_write(f, "hello", 5, 10));
  CHECK_OK(os_close_free(f));
  f = NULL;
  int out = 0;
  CHECK_OK(os_open_alloc(u, p, SHALE_OPEN_READONLY, &out, &f));
  CHECK(out & SHALE_OPEN_READONLY);
  char b[5];
  CHECK_OK(os_read(f, b, 5, 10));
  CHECK(memcmp(b, "hello", 5) == 0);
  CHECK(os_write(f, "x", 1, 0) != SHALE_OK);
  CHECK_OK(os_close_free(f));
}

TEST(unix_open_errors) {
  OsVfs *u = os_vfs_find(NULL);
  OsFile *f = (OsFile *)1;
  CHECK_RC(os_open_alloc(u, test_path("missing.db"), SHALE_OPEN_READWRITE, NULL, &f),
           SHALE_CANTOPEN);
  CHECK(f == NULL);
  CHECK_RC(os_open_alloc(u, test_tmpdir(), SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f),
           SHALE_CANTOPEN_ISDIR);
  CHECK_RC(os_open_alloc(u, test_tmpdir(), SHALE_OPEN_READONLY, NULL, &f), SHALE_CANTOPEN_ISDIR);
  /* EXCLUSIVE on an existing file */
  const char *p = test_path("excl.db");
  f = open_rw(u, p);
  os_close_free(f);
  CHECK_RC(os_open_alloc(u, p, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_EXCLUSIVE,
                         NULL, &f),
           SHALE_CANTOPEN);
}

TEST(unix_readonly_fallback) {
  if (geteuid() == 0) return; /* root ignores permission bits */
  OsVfs *u = os_vfs_find(NULL);
  const char *p = test_path("ro.db");
  OsFile *f = open_rw(u, p);
  CHECK_OK(os_write(f, "abc", 3, 0));
  os_close_free(f);
  chmod(p, 0444);
  int out = 0;
  f = NULL;
  CHECK_OK(os_open_alloc(u, p, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &out, &f));
  CHECK(out & SHALE_OPEN_READONLY);
  CHECK(!(out & SHALE_OPEN_READWRITE));
  char b[3];
  CHECK_OK(os_read(f, b, 3, 0));
  CHECK(memcmp(b, "abc", 3) == 0);
  os_close_free(f);
  chmod(p, 0644);
}

TEST(unix_temp_files) {
  OsVfs *u = os_vfs_find(NULL);
  OsFile *a = NULL, *b = NULL;
  int out = 0;
  CHECK_OK(os_open_alloc(u, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &out, &a));
  CHECK(out & SHALE_OPEN_DELETEONCLOSE);
  CHECK_OK(os_open_alloc(u, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &out, &b));
  CHECK_OK(os_write(a, "aaaa", 4, 0));
  CHECK_OK(os_write(b, "bb", 2, 0));
  int64_t sa, sb;
  CHECK_OK(os_file_size(a, &sa));
  CHECK_OK(os_file_size(b, &sb));
  CHECK_EQ(sa, 4);
  CHECK_EQ(sb, 2);
  CHECK_OK(os_close_free(a));
  CHECK_OK(os_close_free(b));
  /* DELETEONCLOSE with a name: gone from the directory */
  const char *p = test_path("doc.tmp");
  CHECK_OK(os_open_alloc(u, p, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_DELETEONCLOSE,
                         &out, &a));
  CHECK_OK(os_write(a, "x", 1, 0));
  CHECK_OK(os_close_free(a));
  int res = 1;
  CHECK_OK(u->access(u, p, OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 0);
}

static void delete_access(OsVfs *v, const char *p) {
  int res = -1;
  CHECK_OK(v->access(v, p, OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 0);
  OsFile *f = open_rw(v, p);
  CHECK_OK(os_write(f, "z", 1, 0));
  CHECK_OK(os_close_free(f));
  CHECK_OK(v->access(v, p, OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 1);
  CHECK_OK(v->access(v, p, OS_ACCESS_READWRITE, &res));
  CHECK_EQ(res, 1);
  CHECK_OK(v->access(v, p, OS_ACCESS_READ, &res));
  CHECK_EQ(res, 1);
  CHECK_OK(v->delete (v, p, 1));
  CHECK_OK(v->access(v, p, OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 0);
  CHECK_RC(v->delete (v, p, 0), SHALE_IOERR_DELETE_NOENT);
}

TEST(unix_delete_access) { delete_access(os_vfs_find("unix"), test_path("del.db")); }
TEST(memdb_delete_access) { delete_access(os_vfs_find("memdb"), "del.db"); }

TEST(unix_full_pathname) {
  OsVfs *u = os_vfs_find(NULL);
  char out[4096], cwd[4096], want[8192];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK_OK(u->full_pathname(u, "rel_name.db", sizeof out, out));
  char rcwd[4096];
  CHECK(realpath(cwd, rcwd) != NULL);
  snprintf(want, sizeof want, "%s/rel_name.db", rcwd);
  CHECK_STR(out, want);
  CHECK_OK(u->full_pathname(u, "/nonexistent_dir_x/./a/../b.db", sizeof out, out));
  CHECK_STR(out, "/nonexistent_dir_x/b.db");
  /* symlinked directory resolves */
  char link[1024];
  snprintf(link, sizeof link, "%s/lnk", test_tmpdir());
  CHECK_EQ(symlink(test_tmpdir(), link), 0);
  char real[4096];
  CHECK(realpath(test_tmpdir(), real) != NULL);
  snprintf(want, sizeof want, "%s/f.db", real);
  snprintf(cwd, sizeof cwd, "%s/f.db", link);
  CHECK_OK(u->full_pathname(u, cwd, sizeof out, out));
  CHECK_STR(out, want);
  unlink(link);
  CHECK_RC(u->full_pathname(u, "/a/b/c", 3, out), SHALE_CANTOPEN_FULLPATH);
}

TEST(vfs_misc) {
  OsVfs *u = os_vfs_find(NULL);
  char r1[32], r2[32];
  CHECK_EQ(u->randomness(u, 32, r1), 32);
  CHECK_EQ(u->randomness(u, 32, r2), 32);
  CHECK(memcmp(r1, r2, 32) != 0);
  int64_t t = 0;
  CHECK_OK(u->current_time_ms(u, &t));
  /* after 2020-01-01 (JD 2458849.5) and before 2200 */
  CHECK(t > (int64_t)(2458849.5 * 86400000.0));
  CHECK(t < (int64_t)(2524593.5 * 86400000.0));
  int64_t a = os_now_ms();
  CHECK_EQ(u->sleep(u, 20000), 20000);
  int64_t b = os_now_ms();
  CHECK(b - a >= 19);
}

/* ---- lock protocol between connections of one process ---- */

static void lock_protocol(OsVfs *v, const char *p) {
  OsFile *a = open_rw(v, p), *b = open_rw(v, p), *c = open_rw(v, p);
  int r = -1;
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(b, OS_LOCK_SHARED)); /* SHARED + SHARED */
  CHECK_OK(os_check_reserved(c, &r));
  CHECK_EQ(r, 0);
  CHECK_OK(os_lock(a, OS_LOCK_RESERVED));
  CHECK_OK(os_check_reserved(c, &r));
  CHECK_EQ(r, 1);
  CHECK_RC(os_lock(b, OS_LOCK_RESERVED), SHALE_BUSY);  /* RESERVED excludes RESERVED */
  CHECK_OK(os_lock(c, OS_LOCK_SHARED));                /* readers still welcome */
  CHECK_RC(os_lock(a, OS_LOCK_EXCLUSIVE), SHALE_BUSY); /* blocked by b's and c's SHARED */
  /* now a holds PENDING: new SHARED is refused */
  CHECK_OK(os_unlock(c, OS_LOCK_NONE));
  CHECK_RC(os_lock(c, OS_LOCK_SHARED), SHALE_BUSY);
  CHECK_OK(os_unlock(b, OS_LOCK_NONE));
  CHECK_OK(os_lock(a, OS_LOCK_EXCLUSIVE)); /* last reader gone */
  CHECK_RC(os_lock(b, OS_LOCK_SHARED), SHALE_BUSY);
  CHECK_OK(os_check_reserved(b, &r));
  CHECK_EQ(r, 1);
  CHECK_OK(os_unlock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(b, OS_LOCK_SHARED));
  CHECK_OK(os_check_reserved(b, &r));
  CHECK_EQ(r, 0);
  CHECK_OK(os_lock(b, OS_LOCK_RESERVED));
  CHECK_OK(os_unlock(b, OS_LOCK_NONE));
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  /* SHARED -> EXCLUSIVE directly (hot journal rollback) */
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(a, OS_LOCK_EXCLUSIVE));
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  CHECK_OK(os_lock(b, OS_LOCK_SHARED));
  CHECK_OK(os_lock(b, OS_LOCK_EXCLUSIVE));
  CHECK_OK(os_unlock(b, OS_LOCK_NONE));
  os_close_free(a);
  os_close_free(b);
  os_close_free(c);
}

TEST(unix_lock_protocol) { lock_protocol(os_vfs_find("unix"), test_path("locks.db")); }
TEST(memdb_lock_protocol) {
  OsVfs *m = os_vfs_find("memdb");
  lock_protocol(m, "locks.db");
  CHECK_OK(m->delete (m, "locks.db", 0));
}

TEST(memdb_named_sharing) {
  OsVfs *m = os_vfs_find("memdb");
  OsFile *a = open_rw(m, "shared.db"), *b = open_rw(m, "shared.db");
  CHECK_OK(os_write(a, "hello", 5, 0));
  char buf[5];
  CHECK_OK(os_read(b, buf, 5, 0));
  CHECK(memcmp(buf, "hello", 5) == 0);
  os_close_free(a);
  os_close_free(b);
  /* a closed named file keeps its content until deleted */
  a = open_rw(m, "shared.db");
  CHECK_OK(os_read(a, buf, 5, 0));
  CHECK(memcmp(buf, "hello", 5) == 0);
  /* delete while open: the open handle still works, the name is gone */
  CHECK_OK(m->delete (m, "shared.db", 0));
  CHECK_OK(os_read(a, buf, 5, 0));
  int res = 1;
  CHECK_OK(m->access(m, "shared.db", OS_ACCESS_EXISTS, &res));
  CHECK_EQ(res, 0);
  b = open_rw(m, "shared.db");
  int64_t sz = -1;
  CHECK_OK(os_file_size(b, &sz));
  CHECK_EQ(sz, 0);
  os_close_free(a);
  os_close_free(b);
  CHECK_OK(m->delete (m, "shared.db", 0));
  /* anonymous files are private */
  a = open_rw(m, ":memory:");
  b = open_rw(m, ":memory:");
  CHECK_OK(os_write(a, "x", 1, 0));
  CHECK_OK(os_file_size(b, &sz));
  CHECK_EQ(sz, 0);
  /* and do not conflict on locks */
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(a, OS_LOCK_EXCLUSIVE));
  CHECK_OK(os_lock(b, OS_LOCK_SHARED));
  CHECK_OK(os_lock(b, OS_LOCK_EXCLUSIVE));
  os_close_free(a);
  os_close_free(b);
  /* missing without CREATE */
  CHECK_RC(os_open_alloc(m, "nosuch", SHALE_OPEN_READWRITE, NULL, &a), SHALE_CANTOPEN);
}

/* Closing one connection must not drop another connection's POSIX lock. */
TEST(unix_close_keeps_other_locks) {
  OsVfs *u = os_vfs_find(NULL);
  const char *p = test_path("park.db");
  OsFile *a = open_rw(u, p), *b = open_rw(u, p);
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(a, OS_LOCK_RESERVED));
  os_close_free(b); /* b held nothing; its fd must be parked, not closed */
  b = open_rw(u, p);
  os_close_free(b);
  /* a third fd, from a fresh open, sees the reserved lock via the kernel
   * only from another process; check the lock table via check_reserved */
  OsFile *c = open_rw(u, p);
  int r = 0;
  CHECK_OK(os_check_reserved(c, &r));
  CHECK_EQ(r, 1);
  os_close_free(c);
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  os_close_free(a);
}

TEST(unix_journal_inherits_db_mode) {
  OsVfs *u = os_vfs_find(NULL);
  const char *db = test_path("mode.db");
  char j[600], w[600];
  snprintf(j, sizeof j, "%s-journal", db);
  snprintf(w, sizeof w, "%s-wal", db);
  OsFile *f = open_rw(u, db);
  os_close_free(f);
  CHECK_EQ(chmod(db, 0600), 0);
  f = NULL;
  CHECK_OK(os_open_alloc(u, j, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_JOURNAL,
                         NULL, &f));
  os_close_free(f);
  f = NULL;
  CHECK_OK(
      os_open_alloc(u, w, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_WAL, NULL, &f));
  os_close_free(f);
  struct stat st;
  CHECK_EQ(stat(j, &st), 0);
  CHECK_EQ(st.st_mode & 0777, 0600);
  CHECK_EQ(stat(w, &st), 0);
  CHECK_EQ(st.st_mode & 0777, 0600);
}

TEST(unix_dangling_symlink_create) {
  OsVfs *u = os_vfs_find(NULL);
  char link[600], target[600];
  snprintf(link, sizeof link, "%s", test_path("dangle.db"));
  snprintf(target, sizeof target, "%s", test_path("dangle_target.db"));
  CHECK_EQ(symlink(target, link), 0);
  OsFile *f = NULL;
  /* follows the link and creates the target, without looping */
  CHECK_OK(os_open_alloc(u, link, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f));
  os_close_free(f);
  CHECK_EQ(access(target, F_OK), 0);
  /* NOFOLLOW refuses the symlink */
  f = NULL;
  CHECK_RC(os_open_alloc(u, link, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_NOFOLLOW,
                         NULL, &f),
           SHALE_CANTOPEN_SYMLINK);
}

/* Connections of one process that map one file share the map (os_unix.c
 * invariant 6): the same bytes at the same address, so the process's
 * resident set holds each page once; a larger request makes a new map while
 * the old one stays valid for its users; every map reads the file's bytes. */
TEST(unix_map_shared_by_connections) {
  OsVfs *v = os_vfs_find("unix");
  const char *path = test_path("map.db");
  unlink(path);
  OsFile *a = open_rw(v, path), *b = open_rw(v, path), *c = open_rw(v, path);
  if (!a || !b || !c) return;
  uint8_t page[4096];
  for (int i = 0; i < 4; i++) {
    memset(page, 'a' + i, sizeof page);
    CHECK_OK(os_write(a, page, (int)sizeof page, (int64_t)i * 4096));
  }
  CHECK_OK(os_map(a, 2 * 4096));
  CHECK_OK(os_map(b, 4096));
  void *pa = NULL, *pb = NULL, *pc = NULL;
  CHECK_OK(os_fetch(a, 4096, 4096, &pa));
  CHECK_OK(os_fetch(b, 0, 4096, &pb));
  CHECK(pa && pb && (uint8_t *)pa == (uint8_t *)pb + 4096); /* one map */
  CHECK_OK(os_fetch(b, 4096, 4096, &pc));
  CHECK(pc == NULL); /* past what b asked for */
  /* past the shared map's room: a new map for c; a's stays as it was */
  CHECK_OK(os_map(c, (int64_t)(2 << 20)));
  CHECK_OK(os_fetch(c, 3 * 4096, 4096, &pc));
  CHECK(pc != NULL && pc != (uint8_t *)pb + 3 * 4096);
  if (pa && pb && pc) {
    CHECK_EQ(((uint8_t *)pa)[10], 'b');
    CHECK_EQ(((uint8_t *)pb)[10], 'a');
    CHECK_EQ(((uint8_t *)pc)[10], 'd');
  }
  os_unfetch(a, 4096, pa);
  os_unfetch(b, 0, pb);
  os_unfetch(c, 3 * 4096, pc);
  /* a larger request that a's map has room for keeps it; a newcomer takes the newest */
  CHECK_OK(os_map(a, 4 * 4096));
  CHECK_OK(os_fetch(a, 3 * 4096, 4096, &pa));
  CHECK(pa == (uint8_t *)pb + 3 * 4096);
  os_unfetch(a, 3 * 4096, pa);
  OsFile *d = open_rw(v, path);
  if (!d) return;
  CHECK_OK(os_map(d, 4 * 4096));
  CHECK_OK(os_fetch(d, 3 * 4096, 4096, &pa));
  CHECK(pa == pc);
  os_unfetch(d, 3 * 4096, pa);
  os_close_free(d);
  CHECK_OK(os_map(b, 0));
  os_close_free(c);
  CHECK_OK(os_map(b, 4096)); /* c's map is gone with its last user: b makes one */
  CHECK_OK(os_fetch(a, 2 * 4096, 4096, &pa));
  if (pa) CHECK_EQ(((uint8_t *)pa)[0], 'c');
  os_unfetch(a, 2 * 4096, pa);
  os_close_free(a);
  os_close_free(b);
  CHECK_OK(v->delete (v, path, 0));
}
