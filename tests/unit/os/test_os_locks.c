/*
 * test_os_locks.c -- unix VFS locks across processes: a forked child holding
 * locks through our VFS, POSIX-lock survival when another connection of the
 * process closes, and interop with the reference sqlite3 shell.
 *
 * Children are forked before the parent opens the file under test (a child
 * must not inherit the parent's lock table for that inode) and leave with
 * _exit so the harness's exit handlers do not run twice.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../test.h"

static OsFile *open_rw(const char *path) {
  OsFile *f = NULL;
  CHECK_OK(
      os_open_alloc(os_vfs_find(NULL), path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &f));
  return f;
}

/* A child that takes `level` on path, reports "1" (or "0" on failure) on
 * a pipe, then waits until the parent writes a byte (or closes). */
typedef struct Child {
  pid_t pid;
  int to_child, from_child;
} Child;

static int child_start(Child *c, const char *path, int level) {
  int a[2], b[2];
  if (pipe(a) || pipe(b)) return 0;
  c->pid = fork();
  if (c->pid == 0) {
    close(a[1]);
    close(b[0]);
    OsFile *f = NULL;
    char ok = '0';
    if (os_open_alloc(os_vfs_find(NULL), path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL,
                      &f) == SHALE_OK) {
      int rc = os_lock(f, OS_LOCK_SHARED);
      if (rc == SHALE_OK && level >= OS_LOCK_RESERVED) rc = os_lock(f, OS_LOCK_RESERVED);
      if (rc == SHALE_OK && level >= OS_LOCK_EXCLUSIVE) rc = os_lock(f, OS_LOCK_EXCLUSIVE);
      if (rc == SHALE_OK) ok = '1';
    }
    if (write(b[1], &ok, 1) != 1) _exit(2);
    char x;
    if (read(a[0], &x, 1) < 0) _exit(3);
    _exit(0); /* process exit releases the locks */
  }
  close(a[0]);
  close(b[1]);
  c->to_child = a[1];
  c->from_child = b[0];
  char ok = 0;
  if (read(c->from_child, &ok, 1) != 1) return 0;
  return ok == '1';
}

static void child_stop(Child *c) {
  char x = 'x';
  if (write(c->to_child, &x, 1) != 1) kill(c->pid, SIGKILL);
  close(c->to_child);
  close(c->from_child);
  int st;
  waitpid(c->pid, &st, 0);
}

TEST(xproc_child_reserved) {
  const char *p = test_path("x1.db");
  Child c;
  CHECK(child_start(&c, p, OS_LOCK_RESERVED));
  OsFile *f = open_rw(p);
  int r = 0;
  CHECK_OK(os_check_reserved(f, &r));
  CHECK_EQ(r, 1);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));               /* readers still fine */
  CHECK_RC(os_lock(f, OS_LOCK_RESERVED), SHALE_BUSY); /* one writer */
  CHECK_OK(os_unlock(f, OS_LOCK_NONE));
  child_stop(&c);
  CHECK_OK(os_check_reserved(f, &r));
  CHECK_EQ(r, 0);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  CHECK_OK(os_lock(f, OS_LOCK_RESERVED));
  CHECK_OK(os_lock(f, OS_LOCK_EXCLUSIVE));
  os_close_free(f);
}

TEST(xproc_child_exclusive) {
  const char *p = test_path("x2.db");
  Child c;
  CHECK(child_start(&c, p, OS_LOCK_EXCLUSIVE));
  OsFile *f = open_rw(p);
  int r = 0;
  CHECK_RC(os_lock(f, OS_LOCK_SHARED), SHALE_BUSY);
  CHECK_OK(os_check_reserved(f, &r));
  CHECK_EQ(r, 1);
  child_stop(&c);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  os_close_free(f);
}

TEST(xproc_child_shared_blocks_exclusive) {
  const char *p = test_path("x3.db");
  Child c;
  CHECK(child_start(&c, p, OS_LOCK_SHARED));
  OsFile *f = open_rw(p), *g = open_rw(p);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  CHECK_OK(os_lock(f, OS_LOCK_RESERVED));
  CHECK_RC(os_lock(f, OS_LOCK_EXCLUSIVE), SHALE_BUSY); /* child reads */
  /* we now hold PENDING: a new reader of our process is refused too */
  CHECK_RC(os_lock(g, OS_LOCK_SHARED), SHALE_BUSY);
  child_stop(&c);
  CHECK_OK(os_lock(f, OS_LOCK_EXCLUSIVE)); /* retry succeeds */
  CHECK_OK(os_unlock(f, OS_LOCK_SHARED));
  CHECK_OK(os_lock(g, OS_LOCK_SHARED));
  os_close_free(f);
  os_close_free(g);
}

TEST(xproc_pending_blocks_new_reader) {
  /* parent holds SHARED via g, f goes for EXCLUSIVE and stops at PENDING;
   * a child's new SHARED must be refused. */
  const char *p = test_path("x4.db");
  {
    OsFile *t = open_rw(p); /* create it */
    os_close_free(t);
  }
  OsFile *f = open_rw(p), *g = open_rw(p);
  CHECK_OK(os_lock(g, OS_LOCK_SHARED));
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  CHECK_RC(os_lock(f, OS_LOCK_EXCLUSIVE), SHALE_BUSY);
  pid_t pid = fork();
  if (pid == 0) {
    /* raw probe: can a reader get RD(PENDING)? (our table is the parent's
     * copy, so probe with fcntl on a fresh descriptor) */
    int fd = open(p, O_RDONLY);
    struct flock fl = {0};
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = OS_PENDING_BYTE;
    fl.l_len = 1;
    int busy = fcntl(fd, F_SETLK, &fl) != 0;
    _exit(busy ? 0 : 1);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK_OK(os_unlock(f, OS_LOCK_NONE));
  CHECK_OK(os_unlock(g, OS_LOCK_NONE));
  os_close_free(f);
  os_close_free(g);
}

/* Probe from a child with raw F_GETLK whether some other process holds a
 * lock conflicting with `type` on [off, off+len). 1 = locked, 0 = free. */
static int probe_locked(const char *p, int type, long off, long len) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(p, O_RDWR);
    struct flock fl = {0};
    fl.l_type = (short)type;
    fl.l_whence = SEEK_SET;
    fl.l_start = off;
    fl.l_len = len;
    if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0) _exit(2);
    _exit(fl.l_type == F_UNLCK ? 0 : 1);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(close_does_not_drop_other_connections_locks) {
  const char *p = test_path("park.db");
  OsFile *a = open_rw(p), *b = open_rw(p);
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(a, OS_LOCK_RESERVED));
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_RESERVED_BYTE, 1), 1);
  CHECK_OK(os_lock(b, OS_LOCK_SHARED));
  os_close_free(b); /* b held SHARED: its descriptor is parked */
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_RESERVED_BYTE, 1), 1);
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 1);
  b = open_rw(p);
  os_close_free(b); /* never locked: parked as well */
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_RESERVED_BYTE, 1), 1);
  CHECK_OK(os_lock(a, OS_LOCK_EXCLUSIVE));
  CHECK_EQ(probe_locked(p, F_RDLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 1);
  CHECK_OK(os_unlock(a, OS_LOCK_SHARED));
  CHECK_EQ(probe_locked(p, F_RDLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 0);
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 1);
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_PENDING_BYTE, 2), 0);
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  CHECK_EQ(probe_locked(p, F_WRLCK, 0, 0), 0);
  os_close_free(a);
}

TEST(two_readers_one_os_lock) {
  const char *p = test_path("refc.db");
  OsFile *a = open_rw(p), *b = open_rw(p);
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  CHECK_OK(os_lock(b, OS_LOCK_SHARED));
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  /* b still reads: the OS read lock must still be there */
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 1);
  CHECK_OK(os_unlock(b, OS_LOCK_NONE));
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 0);
  os_close_free(a);
  os_close_free(b);
}

/* ---- the reference sqlite3 sees our locks and we see its locks ---- */

static int have_sqlite3(void) { return access("/usr/bin/sqlite3", X_OK) == 0; }

/* Run sqlite3 on db with sql; return its combined output (static buffer). */
static const char *run_sqlite(const char *db, const char *sql) {
  static char out[4096];
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "timeout 10 /usr/bin/sqlite3 -cmd '.timeout 0' '%s' '%s' 2>&1", db,
           sql);
  FILE *pp = popen(cmd, "r");
  out[0] = 0;
  if (!pp) return out;
  size_t n = fread(out, 1, sizeof out - 1, pp);
  out[n] = 0;
  pclose(pp);
  return out;
}

TEST(sqlite3_sees_our_locks) {
  if (!have_sqlite3()) return;
  const char *p = test_path("interop.db");
  run_sqlite(p, "create table t(x); insert into t values(1);");
  OsFile *f = NULL;
  CHECK_OK(os_open_alloc(os_vfs_find(NULL), p, SHALE_OPEN_READWRITE, NULL, &f));
  if (!f) return;
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  /* SHARED: sqlite3 can read, but not commit a write */
  CHECK(strstr(run_sqlite(p, "select count(*) from t"), "1") != NULL);
  CHECK(strstr(run_sqlite(p, "insert into t values(2)"), "database is locked") != NULL);
  CHECK_OK(os_lock(f, OS_LOCK_RESERVED));
  CHECK(strstr(run_sqlite(p, "select count(*) from t"), "1") != NULL);
  CHECK(strstr(run_sqlite(p, "begin immediate"), "database is locked") != NULL);
  CHECK_OK(os_lock(f, OS_LOCK_EXCLUSIVE));
  CHECK(strstr(run_sqlite(p, "select 1 from sqlite_master"), "database is locked") != NULL);
  CHECK_OK(os_unlock(f, OS_LOCK_NONE));
  const char *o = run_sqlite(p, "insert into t values(3); select count(*) from t;");
  CHECK(strstr(o, "2") != NULL && !strstr(o, "locked"));
  os_close_free(f);
}

TEST(we_see_sqlite3_locks) {
  if (!have_sqlite3()) return;
  const char *p = test_path("interop2.db");
  run_sqlite(p, "create table t(x);");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "timeout 20 /usr/bin/sqlite3 '%s' >/dev/null 2>&1", p);
  FILE *pp = popen(cmd, "w");
  CHECK(pp != NULL);
  if (!pp) return;
  OsFile *f = NULL;
  CHECK_OK(os_open_alloc(os_vfs_find(NULL), p, SHALE_OPEN_READWRITE, NULL, &f));
  fputs("begin immediate; insert into t values(1);\n", pp);
  fflush(pp);
  /* wait until sqlite3 has RESERVED */
  int r = 0;
  for (int i = 0; i < 500 && !r; i++) {
    CHECK_OK(os_check_reserved(f, &r));
    if (!r) usleep(10000);
  }
  CHECK_EQ(r, 1);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  CHECK_RC(os_lock(f, OS_LOCK_RESERVED), SHALE_BUSY);
  CHECK_OK(os_unlock(f, OS_LOCK_NONE));
  /* an exclusive transaction: now we cannot even read */
  fputs("commit;\n", pp);
  fflush(pp);
  for (int i = 0; i < 500 && r; i++) {
    CHECK_OK(os_check_reserved(f, &r));
    if (r) usleep(10000);
  }
  CHECK_EQ(r, 0);
  fputs("begin exclusive;\n", pp);
  fflush(pp);
  for (int i = 0; i < 500 && !r; i++) {
    CHECK_OK(os_check_reserved(f, &r));
    if (!r) usleep(10000);
  }
  CHECK_EQ(r, 1);
  int rc = os_lock(f, OS_LOCK_SHARED);
  CHECK_RC(rc, SHALE_BUSY);
  fputs("commit;\n.quit\n", pp);
  pclose(pp);
  CHECK_OK(os_lock(f, OS_LOCK_SHARED));
  CHECK_OK(os_lock(f, OS_LOCK_EXCLUSIVE));
  os_close_free(f);
}

static int count_fds(void) {
  int n = 0;
  for (int fd = 0; fd < 4096; fd++)
    if (fcntl(fd, F_GETFD) != -1) n++;
  return n;
}

/* While a connection holds a lock, closed connections' descriptors are
 * parked, and new opens reuse them: the descriptor count stays bounded. */
TEST(parked_descriptors_are_reused) {
  const char *p = test_path("reuse.db");
  OsFile *a = open_rw(p);
  CHECK_OK(os_lock(a, OS_LOCK_SHARED));
  int before = count_fds();
  for (int i = 0; i < 200; i++) {
    OsFile *b = open_rw(p);
    CHECK_OK(os_lock(b, OS_LOCK_SHARED));
    CHECK_OK(os_close_free(b));
  }
  CHECK(count_fds() <= before + 1);
  CHECK_EQ(probe_locked(p, F_WRLCK, OS_SHARED_FIRST, OS_SHARED_SIZE), 1);
  CHECK_OK(os_unlock(a, OS_LOCK_NONE));
  CHECK(count_fds() <= before); /* the parked one is closed with the last lock */
  os_close_free(a);
  CHECK(count_fds() <= before - 1);
}

/* ---- stress: increments under EXCLUSIVE never get lost ---- */

/* One increment of the 8-byte counter at offset 0 under the full lock
 * protocol; returns 1 when done, 0 when it got BUSY and backed off. */
static int try_increment(OsFile *f) {
  if (os_lock(f, OS_LOCK_SHARED) != SHALE_OK) return 0;
  int done = 0;
  if (os_lock(f, OS_LOCK_RESERVED) == SHALE_OK) {
    int rc = SHALE_BUSY;
    for (int i = 0; i < 1000 && rc == SHALE_BUSY; i++) {
      rc = os_lock(f, OS_LOCK_EXCLUSIVE); /* PENDING holds new readers off */
      if (rc == SHALE_BUSY) sched_yield();
    }
    if (rc == SHALE_OK) {
      int64_t v = 0;
      os_read(f, &v, 8, 0); /* short read of a new file: 0 */
      v++;
      /* two copies written apart: a reader under SHARED must never see
       * them differ */
      os_write(f, &v, 8, 0);
      sched_yield();
      os_write(f, &v, 8, 4096);
      done = 1;
    }
  }
  os_unlock(f, OS_LOCK_NONE);
  return done;
}

typedef struct Worker {
  OsVfs *vfs; /* NULL: the default */
  const char *path;
  int n;
  int opens; /* reopen the file every few increments */
  int torn;  /* reads that saw the two copies differ */
} Worker;

/* Under SHARED, the two copies of the counter agree. */
static void check_read(OsFile *f, Worker *w) {
  if (os_lock(f, OS_LOCK_SHARED) != SHALE_OK) return;
  int64_t a = 0, b = 0;
  os_read(f, &a, 8, 0);
  sched_yield();
  os_read(f, &b, 8, 4096);
  if (a != b) w->torn++;
  os_unlock(f, OS_LOCK_NONE);
}

static void *worker(void *arg) {
  Worker *w = arg;
  OsFile *f = NULL;
  int got = 0;
  while (got < w->n) {
    if (!f &&
        os_open_alloc(w->vfs ? w->vfs : os_vfs_find(NULL), w->path, SHALE_OPEN_READWRITE, NULL, &f))
      return NULL;
    check_read(f, w);
    if (try_increment(f)) {
      got++;
      if (w->opens && got % 7 == 0) {
        os_close_free(f);
        f = NULL;
      }
    } else {
      sched_yield();
    }
  }
  os_close_free(f);
  return NULL;
}

static int64_t read_counter(const char *p) {
  int64_t v = -1;
  OsFile *f = open_rw(p);
  if (f) os_read(f, &v, 8, 0);
  os_close_free(f);
  return v;
}

TEST(threads_increment_under_exclusive) {
  const char *p = test_path("threads.db");
  os_close_free(open_rw(p));
  pthread_t th[4];
  Worker w[4];
  int per = test_long() ? 2000 : 200;
  for (int i = 0; i < 4; i++) {
    w[i].vfs = NULL;
    w[i].path = p;
    w[i].n = per;
    w[i].opens = i & 1;
    w[i].torn = 0;
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  CHECK_EQ(read_counter(p), 4 * per);
  for (int i = 0; i < 4; i++) CHECK_EQ(w[i].torn, 0);
}

TEST(processes_and_threads_increment_under_exclusive) {
  const char *p = test_path("procs.db");
  os_close_free(open_rw(p));
  int per = test_long() ? 1000 : 150;
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    if (kids[k] == 0) {
      /* two threads per child process */
      pthread_t th[2];
      Worker w[2] = {{NULL, p, per, 0, 0}, {NULL, p, per, 1, 0}};
      for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, &w[i]);
      for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
      _exit(w[0].torn + w[1].torn > 0 ? 1 : 0);
    }
  }
  Worker me = {NULL, p, per, 1, 0};
  worker(&me);
  CHECK_EQ(me.torn, 0);
  for (int k = 0; k < 2; k++) {
    int st;
    waitpid(kids[k], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  CHECK_EQ(read_counter(p), 5 * per);
}

TEST(current_time_matches_sqlite3) {
  if (!have_sqlite3()) return;
  const char *o = run_sqlite(":memory:", "select cast(julianday()*86400000 as integer)");
  long long theirs = atoll(o);
  int64_t ours = 0;
  OsVfs *u = os_vfs_find(NULL);
  CHECK_OK(u->current_time_ms(u, &ours));
  CHECK(llabs((long long)ours - theirs) < 10000);
}

TEST(memdb_threads_increment_under_exclusive) {
  OsVfs *m = os_vfs_find("memdb");
  OsFile *keep = NULL;
  CHECK_OK(os_open_alloc(m, "thr.db", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL, &keep));
  pthread_t th[4];
  Worker w[4];
  int per = test_long() ? 2000 : 200;
  for (int i = 0; i < 4; i++) {
    w[i] = (Worker){m, "thr.db", per, i & 1, 0};
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  int64_t v = -1;
  CHECK_OK(os_read(keep, &v, 8, 0));
  CHECK_EQ(v, 4 * per);
  for (int i = 0; i < 4; i++) CHECK_EQ(w[i].torn, 0);
  os_close_free(keep);
  CHECK_OK(m->delete (m, "thr.db", 0));
}
