/*
 * test_os_shm.c -- shared memory for the WAL index: mapping, growth, lock
 * slots within a process and across processes, the DMS protocol, and
 * attaching to a live -shm of the reference sqlite3.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../test.h"

#define REGION 32768

static OsFile *open_rw(OsVfs *v, const char *path) {
  OsFile *f = NULL;
  CHECK_OK(os_open_alloc(v, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f));
  return f;
}

static void shm_basics(OsVfs *v, const char *path) {
  OsFile *a = open_rw(v, path), *b = open_rw(v, path);
  volatile void *pa = (void *)1, *pb = (void *)1;
  CHECK_OK(a->methods->shm_map(a, 0, REGION, 0, &pa));
  CHECK(pa == NULL); /* not there yet */
  CHECK_OK(a->methods->shm_map(a, 0, REGION, 1, &pa));
  CHECK(pa != NULL);
  CHECK_OK(b->methods->shm_map(b, 0, REGION, 0, &pb));
  CHECK(pb != NULL);
  if (!pa || !pb) return;
  ((volatile uint32_t *)pa)[10] = 0xdeadbeef;
  a->methods->shm_barrier(a);
  CHECK_EQ(((volatile uint32_t *)pb)[10], 0xdeadbeef);
  /* region 2 implies region 1 */
  volatile void *p2 = NULL, *p1 = NULL;
  CHECK_OK(a->methods->shm_map(a, 2, REGION, 1, &p2));
  CHECK(p2 != NULL);
  CHECK_OK(b->methods->shm_map(b, 1, REGION, 0, &p1));
  CHECK(p1 != NULL);

  /* lock slots */
  CHECK_OK(a->methods->shm_lock(a, 3, 1, OS_SHM_LOCK | OS_SHM_SHARED));
  CHECK_OK(b->methods->shm_lock(b, 3, 1, OS_SHM_LOCK | OS_SHM_SHARED));
  CHECK_RC(b->methods->shm_lock(b, 3, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE), SHALE_BUSY);
  CHECK_OK(a->methods->shm_lock(a, 3, 1, OS_SHM_UNLOCK | OS_SHM_SHARED));
  CHECK_OK(b->methods->shm_lock(b, 3, 1, OS_SHM_UNLOCK | OS_SHM_SHARED));
  CHECK_OK(a->methods->shm_lock(a, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_RC(b->methods->shm_lock(b, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE), SHALE_BUSY);
  CHECK(os_shm_busy_in_process()); /* a's lock, not another process's */
  CHECK_RC(b->methods->shm_lock(b, 0, 1, OS_SHM_LOCK | OS_SHM_SHARED), SHALE_BUSY);
  CHECK(os_shm_busy_in_process());
  CHECK_OK(b->methods->shm_lock(b, 1, 2, OS_SHM_LOCK | OS_SHM_EXCLUSIVE)); /* other slots free */
  CHECK_RC(a->methods->shm_lock(a, 0, 2, OS_SHM_LOCK | OS_SHM_EXCLUSIVE), SHALE_BUSY);
  CHECK_OK(a->methods->shm_lock(a, 0, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(b->methods->shm_lock(b, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(b->methods->shm_lock(b, 0, 3, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(a->methods->shm_lock(a, 0, 8, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_RC(a->methods->shm_lock(a, 0, 9, OS_SHM_LOCK | OS_SHM_EXCLUSIVE), SHALE_MISUSE);
  /* unmap releases a's slots */
  CHECK_OK(a->methods->shm_unmap(a, 0));
  CHECK_OK(b->methods->shm_lock(b, 5, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(b->methods->shm_lock(b, 5, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE));
  /* content survives as long as someone is attached */
  CHECK_OK(a->methods->shm_map(a, 0, REGION, 0, &pa));
  CHECK(pa != NULL);
  if (pa) CHECK_EQ(((volatile uint32_t *)pa)[10], 0xdeadbeef);
  CHECK_OK(a->methods->shm_unmap(a, 0));
  CHECK_OK(b->methods->shm_unmap(b, 1));
  os_close_free(a);
  os_close_free(b);
}

TEST(unix_shm_basics) {
  const char *p = test_path("shm.db");
  shm_basics(os_vfs_find("unix"), p);
  char shm[600];
  snprintf(shm, sizeof shm, "%s-shm", p);
  CHECK(access(shm, F_OK) != 0); /* deleted by the last unmap(delete=1) */
}

TEST(memdb_shm_basics) {
  OsVfs *m = os_vfs_find("memdb");
  shm_basics(m, "shm.db");
  CHECK_OK(m->delete (m, "shm.db", 0));
}

TEST(unix_shm_file_geometry) {
  const char *p = test_path("geo.db");
  OsFile *a = open_rw(os_vfs_find(NULL), p);
  char shm[600];
  snprintf(shm, sizeof shm, "%s-shm", p);
  /* a stale -shm from a dead process is reset to 3 bytes by the first user */
  int fd = open(shm, O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(pwrite(fd, "garbage!", 8, 0), 8);
  close(fd);
  volatile void *pp = NULL;
  CHECK_OK(a->methods->shm_map(a, 0, REGION, 0, &pp));
  CHECK(pp == NULL);
  struct stat st;
  CHECK_EQ(stat(shm, &st), 0);
  CHECK_EQ(st.st_size, 3);
  CHECK_OK(a->methods->shm_map(a, 1, REGION, 1, &pp));
  CHECK_EQ(stat(shm, &st), 0);
  CHECK_EQ(st.st_size, 2 * REGION);
  CHECK_OK(a->methods->shm_unmap(a, 1));
  os_close_free(a);
}

/* child: attach to p's shm, take slot `slot` exclusive, write `val` at word
 * 20 of region 0, report, wait, exit. */
static pid_t child_shm(const char *p, int slot, uint32_t val, int *to, int *from) {
  int a[2], b[2];
  if (pipe(a) || pipe(b)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(a[1]);
    close(b[0]);
    OsFile *f = NULL;
    char ok = '0';
    volatile void *pp = NULL;
    if (os_open_alloc(os_vfs_find(NULL), p, SHALE_OPEN_READWRITE, NULL, &f) == SHALE_OK &&
        f->methods->shm_map(f, 0, REGION, 1, &pp) == SHALE_OK && pp &&
        f->methods->shm_lock(f, slot, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE) == SHALE_OK) {
      ((volatile uint32_t *)pp)[20] = val;
      ok = '1';
    }
    if (write(b[1], &ok, 1) != 1) _exit(2);
    char x;
    if (read(a[0], &x, 1) < 0) _exit(3);
    _exit(0);
  }
  close(a[0]);
  close(b[1]);
  *to = a[1];
  *from = b[0];
  return pid;
}

TEST(unix_shm_cross_process) {
  const char *p = test_path("xshm.db");
  {
    OsFile *t = open_rw(os_vfs_find(NULL), p);
    os_close_free(t);
  }
  int to = -1, from = -1;
  pid_t pid = child_shm(p, 0, 0x12345678, &to, &from);
  char ok = 0;
  CHECK_EQ(read(from, &ok, 1), 1);
  CHECK_EQ(ok, '1');
  OsFile *f = open_rw(os_vfs_find(NULL), p);
  volatile void *pp = NULL;
  CHECK_OK(f->methods->shm_map(f, 0, REGION, 0, &pp)); /* the child's DMS keeps content */
  CHECK(pp != NULL);
  if (pp) CHECK_EQ(((volatile uint32_t *)pp)[20], 0x12345678);
  CHECK_RC(f->methods->shm_lock(f, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE), SHALE_BUSY);
  CHECK(!os_shm_busy_in_process()); /* the child's lock: another process */
  CHECK_RC(f->methods->shm_lock(f, 0, 1, OS_SHM_LOCK | OS_SHM_SHARED), SHALE_BUSY);
  CHECK(!os_shm_busy_in_process());
  CHECK_OK(f->methods->shm_lock(f, 1, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  char x = 'x';
  CHECK_EQ(write(to, &x, 1), 1);
  int st;
  waitpid(pid, &st, 0);
  close(to);
  close(from);
  CHECK_OK(f->methods->shm_lock(f, 0, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE));
  CHECK_OK(f->methods->shm_unmap(f, 1));
  os_close_free(f);
}

TEST(unix_shm_attach_to_live_sqlite3) {
  if (access("/usr/bin/sqlite3", X_OK) != 0) return;
  const char *p = test_path("walint.db");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "timeout 20 /usr/bin/sqlite3 '%s' >/dev/null 2>&1", p);
  FILE *pp = popen(cmd, "w");
  CHECK(pp != NULL);
  if (!pp) return;
  /* the shell touches a marker once its read transaction is open: wait for
   * that, not for a fixed time (a loaded machine runs it late) */
  char marker[600];
  snprintf(marker, sizeof marker, "%s-ready", p);
  unlink(marker);
  fprintf(pp,
          "pragma journal_mode=wal; create table t(x); insert into t values(1);"
          " begin; select * from t;\n.shell touch '%s'\n",
          marker);
  fflush(pp);
  for (int i = 0; i < 1500 && access(marker, F_OK) != 0; i++) usleep(10000);
  CHECK(access(marker, F_OK) == 0);
  unlink(marker);
  OsFile *f = open_rw(os_vfs_find(NULL), p);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED)); /* as a WAL reader would */
  volatile void *m = NULL;
  CHECK_OK(f->methods->shm_map(f, 0, REGION, 0, &m));
  CHECK(m != NULL);
  if (m) {
    volatile uint32_t *h = m;
    CHECK_EQ(h[0], 3007000);                  /* iVersion: content was kept */
    CHECK_EQ(((volatile uint8_t *)m)[12], 1); /* isInit */
    CHECK(h[4] >= 1);                         /* mxFrame */
  }
  /* sqlite3 holds READ(i) shared for its open read transaction; taking
   * every read slot exclusive must fail for at least one of them */
  int busy = 0;
  for (int i = 3; i < 8; i++) {
    int rc = f->methods->shm_lock(f, i, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE);
    if (rc == SHALE_BUSY)
      busy++;
    else
      f->methods->shm_lock(f, i, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE);
  }
  CHECK(busy >= 1);
  CHECK_OK(f->methods->shm_unmap(f, 0));
  os_close_free(f);
  fputs("commit;\n.quit\n", pp);
  pclose(pp);
}

/* Connections of one process take a slot shared without the VFS mutex when
 * the process holds it already (os_shm_lock_fast): an exclusive holder and
 * shared holders must still never overlap, and a lingering lock must still
 * keep other processes' writers out until the keeper drops it. */
#define RACE_READERS 3
#define RACE_MS 600
typedef struct RaceArg {
  OsFile *f;
  _Atomic int *readers, *writer, *stop, *bad;
  long ok;
} RaceArg;

static void *race_reader(void *p) {
  RaceArg *a = p;
  while (!atomic_load(a->stop)) {
    if (a->f->methods->shm_lock(a->f, 3, 1, OS_SHM_LOCK | OS_SHM_SHARED) != SHALE_OK) continue;
    atomic_fetch_add(a->readers, 1);
    if (atomic_load(a->writer)) atomic_store(a->bad, 1);
    atomic_fetch_sub(a->readers, 1);
    if (a->f->methods->shm_lock(a->f, 3, 1, OS_SHM_UNLOCK | OS_SHM_SHARED) != SHALE_OK)
      atomic_store(a->bad, 1);
    a->ok++;
  }
  return NULL;
}

static void *race_writer(void *p) {
  RaceArg *a = p;
  while (!atomic_load(a->stop)) {
    if (a->f->methods->shm_lock(a->f, 3, 1, OS_SHM_LOCK | OS_SHM_EXCLUSIVE) != SHALE_OK) continue;
    atomic_store(a->writer, 1);
    if (atomic_load(a->readers)) atomic_store(a->bad, 1);
    for (volatile int i = 0; i < 200; i++) {
    }
    if (atomic_load(a->readers)) atomic_store(a->bad, 1);
    atomic_store(a->writer, 0);
    if (a->f->methods->shm_lock(a->f, 3, 1, OS_SHM_UNLOCK | OS_SHM_EXCLUSIVE) != SHALE_OK)
      atomic_store(a->bad, 1);
    a->ok++;
  }
  return NULL;
}

TEST(unix_shm_fast_shared_vs_exclusive) {
  const char *p = test_path("race.db");
  OsVfs *v = os_vfs_find("unix");
  RaceArg args[RACE_READERS + 1];
  pthread_t t[RACE_READERS + 1];
  _Atomic int readers = 0, writer = 0, stop = 0, bad = 0;
  for (int i = 0; i <= RACE_READERS; i++) {
    volatile void *pm = NULL;
    args[i] = (RaceArg){open_rw(v, p), &readers, &writer, &stop, &bad, 0};
    CHECK_OK(args[i].f->methods->shm_map(args[i].f, 0, REGION, 1, &pm));
  }
  for (int i = 0; i <= RACE_READERS; i++)
    CHECK(pthread_create(&t[i], NULL, i < RACE_READERS ? race_reader : race_writer, &args[i]) == 0);
  usleep(RACE_MS * 1000);
  atomic_store(&stop, 1);
  long reads = 0;
  for (int i = 0; i <= RACE_READERS; i++) {
    pthread_join(t[i], NULL);
    if (i < RACE_READERS) reads += args[i].ok;
  }
  CHECK_EQ(atomic_load(&bad), 0);
  CHECK(reads > 0);
  CHECK(args[RACE_READERS].ok > 0); /* the writer got its turns too */

  /* a lock let linger by the fast path (the last holder lets go) is
   * dropped by the keeper: another process gets the slot soon after */
  OsFile *a = args[0].f, *b = args[1].f;
  CHECK_OK(a->methods->shm_lock(a, 4, 1, OS_SHM_LOCK | OS_SHM_SHARED));
  CHECK_OK(b->methods->shm_lock(b, 4, 1, OS_SHM_LOCK | OS_SHM_SHARED)); /* fast */
  CHECK_OK(a->methods->shm_lock(a, 4, 1, OS_SHM_UNLOCK | OS_SHM_SHARED));
  CHECK_OK(b->methods->shm_lock(b, 4, 1, OS_SHM_UNLOCK | OS_SHM_SHARED)); /* lingers */
  usleep(30000);
  int to, from;
  pid_t kid = child_shm(p, 4, 0, &to, &from);
  char r = 0;
  CHECK(kid > 0 && read(from, &r, 1) == 1);
  CHECK(r == '1'); /* the child got the slot once our lingering lock went */
  close(to);
  close(from);
  waitpid(kid, NULL, 0);
  for (int i = 0; i <= RACE_READERS; i++) {
    CHECK_OK(args[i].f->methods->shm_unmap(args[i].f, i == RACE_READERS));
    os_close_free(args[i].f);
  }
}
