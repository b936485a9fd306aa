/*
 * test_os_oom.c -- every allocation failure in the os layer is a clean
 * SHALE_NOMEM (or an I/O error code) that leaks nothing; and a few more
 * failure paths (DMS held exclusively by another process).
 *
 * Each scenario is run with the n-th allocation failing, for n = 1, 2, ...
 * until it runs without hitting the hook. The harness checks for leaks.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../test.h"

/* A result is acceptable under allocation failure if it is OK or NOMEM. */
static int acceptable(int rc) {
  return rc == SHALE_OK || rc == SHALE_NOMEM || rc == SHALE_IOERR_NOMEM;
}

static void run_oom(const char *name, int (*fn)(void)) {
  for (long n = 1; n < 500; n++) {
    long before = util_alloc_outstanding();
    util_fault_alloc(n, 0);
    int rc = fn();
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (!acceptable(rc)) test_fail(__FILE__, __LINE__, "%s: n=%ld rc=%d", name, n, rc);
    if (util_alloc_outstanding() != before)
      test_fail(__FILE__, __LINE__, "%s: n=%ld leaked %ld", name, n,
                util_alloc_outstanding() - before);
    if (hits == 0) {
      CHECK_OK(rc);
      return;
    }
  }
  test_fail(__FILE__, __LINE__, "%s never completed", name);
}

static int sc_unix(void) {
  OsVfs *u = os_vfs_find("unix");
  const char *p = test_path("oom.db");
  OsFile *a = NULL, *b = NULL;
  int rc = os_open_alloc(u, p, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &a);
  if (rc == SHALE_OK) rc = os_lock(a, OS_LOCK_SHARED);
  if (rc == SHALE_OK) rc = os_open_alloc(u, p, SHALE_OPEN_READWRITE, NULL, &b);
  if (rc == SHALE_OK) rc = os_write(b, "abc", 3, 0);
  os_close_free(b); /* parks b's descriptor (a holds SHARED) */
  b = NULL;
  if (rc == SHALE_OK) rc = os_open_alloc(u, p, SHALE_OPEN_READWRITE, NULL, &b);
  volatile void *m = NULL;
  if (rc == SHALE_OK) rc = b->methods->shm_map(b, 0, 32768, 1, &m);
  if (rc == SHALE_OK) rc = b->methods->shm_lock(b, 2, 1, OS_SHM_LOCK | OS_SHM_SHARED);
  if (b) b->methods->shm_unmap(b, 1);
  os_close_free(b);
  if (a) os_unlock(a, OS_LOCK_NONE);
  os_close_free(a);
  OsFile *t = NULL;
  if (rc == SHALE_OK) rc = os_open_alloc(u, NULL, SHALE_OPEN_READWRITE, NULL, &t);
  os_close_free(t);
  return rc;
}

static int sc_memdb(void) {
  OsVfs *m = os_vfs_find("memdb");
  OsFile *a = NULL, *b = NULL;
  int rc = os_open_alloc(m, "oom.db", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &a);
  char buf[10000];
  memset(buf, 7, sizeof buf);
  if (rc == SHALE_OK) rc = os_write(a, buf, sizeof buf, 0);
  if (rc == SHALE_OK) rc = os_truncate(a, 100000);
  if (rc == SHALE_OK) rc = os_open_alloc(m, ":memory:", SHALE_OPEN_READWRITE, NULL, &b);
  volatile void *p = NULL;
  if (rc == SHALE_OK) rc = a->methods->shm_map(a, 1, 32768, 1, &p);
  if (a) a->methods->shm_unmap(a, 0);
  os_close_free(a);
  os_close_free(b);
  int res = 0;
  m->access(m, "oom.db", OS_ACCESS_EXISTS, &res);
  if (res) m->delete (m, "oom.db", 0);
  return rc;
}

static int sc_fault(void) {
  OsVfs *fv = os_fault_vfs_create("oomfault", os_vfs_find("memdb"));
  if (!fv) return SHALE_NOMEM;
  OsFile *a = NULL;
  int rc = os_open_alloc(fv, "oomf.db", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &a);
  for (int i = 0; i < 20 && rc == SHALE_OK; i++) rc = os_write(a, "0123456789", 10, i * 7);
  if (rc == SHALE_OK) rc = os_truncate(a, 5);
  os_close_free(a);
  os_fault_power_loss(fv, 3, 1);
  os_fault_vfs_destroy(fv);
  OsVfs *m = os_vfs_find("memdb");
  int res = 0;
  m->access(m, "oomf.db", OS_ACCESS_EXISTS, &res);
  if (res) m->delete (m, "oomf.db", 0);
  return rc;
}

TEST(oom_unix) { run_oom("unix", sc_unix); }
TEST(oom_memdb) { run_oom("memdb", sc_memdb); }
TEST(oom_fault) { run_oom("fault", sc_fault); }

TEST(oom_registry_full) {
  /* registering more VFSes than the table holds fails cleanly */
  static OsVfs many[40];
  int n = 0, rc = SHALE_OK;
  for (; n < 40; n++) {
    many[n] = *os_vfs_find("memdb");
    many[n].name = "many";
    rc = os_vfs_register(&many[n], 0);
    if (rc != SHALE_OK) break;
  }
  CHECK_RC(rc, SHALE_FULL);
  for (int i = 0; i < n; i++) os_vfs_unregister(&many[i]);
  CHECK(os_vfs_find("many") == NULL);
  CHECK(os_vfs_find(NULL) == os_vfs_find("unix"));
}

TEST(shm_dms_held_exclusive_is_busy) {
  const char *p = test_path("dms.db");
  char shm[600];
  snprintf(shm, sizeof shm, "%s-shm", p);
  int fds[2];
  CHECK_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    /* a foreign process holding WR on the DMS byte (as during its reset) */
    int fd = open(shm, O_RDWR | O_CREAT, 0644);
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 128;
    fl.l_len = 1;
    char c = fcntl(fd, F_SETLK, &fl) == 0 ? '1' : '0';
    if (write(fds[1], &c, 1) != 1) _exit(2);
    sleep(2); /* killed by the parent long before */
    _exit(0);
  }
  char c = 0;
  CHECK_EQ(read(fds[0], &c, 1), 1);
  CHECK_EQ(c, '1');
  OsFile *f = NULL;
  CHECK_OK(os_open_alloc(os_vfs_find(NULL), p, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f));
  volatile void *m = NULL;
  CHECK_RC(f->methods->shm_map(f, 0, 32768, 1, &m), SHALE_BUSY);
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  CHECK_OK(f->methods->shm_map(f, 0, 32768, 1, &m));
  CHECK(m != NULL);
  CHECK_OK(f->methods->shm_unmap(f, 1));
  os_close_free(f);
  close(fds[0]);
  close(fds[1]);
}
