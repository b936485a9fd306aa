/*
 * test_pager_busy.c -- the busy-timeout handler: a writer waits for a lock
 * held by another connection, gets it when freed in time, and gives up with
 * SHALE_BUSY after about the timeout when not.
 */
#include <pthread.h>
#include <unistd.h>

#include "../../../src/pager/pager.h"
#include "../../test.h"

static Pager *open_pager(const char *path) {
  Pager *p = NULL;
  CHECK_OK(pager_open(os_vfs_find(NULL), path,
                      SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_MAIN_DB, 0, &p));
  return p;
}

/* Make the file non-empty so that transactions have a header to read. */
static void write_one_page(Pager *p) {
  PgPage *pg;
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_get(p, 1, 0, &pg));
  CHECK_OK(pager_write(pg));
  memcpy(pager_data(pg), "SQLite format 3", 16);
  pager_data(pg)[16] = 0x10; /* 4096 */
  pager_data(pg)[17] = 0x00;
  pager_data(pg)[18] = 1;
  pager_data(pg)[19] = 1;
  pager_data(pg)[21] = 64;
  pager_data(pg)[22] = 32;
  pager_data(pg)[23] = 32;
  pager_unref(pg);
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
}

TEST(busy_wait_gives_up_after_timeout) {
  int timeout = 0;
  CHECK_EQ(pager_busy_wait(&timeout, 0), 0); /* no timeout: never wait */
  CHECK_EQ(pager_busy_wait(NULL, 0), 0);
  timeout = 30;
  int64_t t0 = os_now_ms();
  int calls = 0;
  while (pager_busy_wait(&timeout, calls)) calls++;
  int64_t spent = os_now_ms() - t0;
  CHECK(calls >= 4);   /* 1+2+5+10 = 18 ms, then 12 of the 15 ms step */
  CHECK(spent >= 25);  /* slept about the timeout */
  CHECK(spent < 1000); /* and did not overshoot wildly */
}

TEST(busy_timeout_expires_while_lock_held) {
  Pager *a = open_pager(test_path("busy1.db")), *b = open_pager(test_path("busy1.db"));
  write_one_page(a);
  /* a holds SHARED through a read transaction: b's commit cannot get EXCLUSIVE. */
  CHECK_OK(pager_begin_read(a));
  int timeout = 120;
  pager_set_busy_handler(b, pager_busy_wait, &timeout);
  CHECK_OK(pager_begin_write(b, 0));
  PgPage *pg;
  CHECK_OK(pager_get(b, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  pager_data(pg)[0] = 7;
  pager_unref(pg);
  int64_t t0 = os_now_ms();
  int rc = pager_commit(b);
  int64_t spent = os_now_ms() - t0;
  CHECK_EQ(rc & 0xff, SHALE_BUSY);
  CHECK(spent >= 100);
  CHECK(spent < 2000);
  CHECK_OK(pager_rollback(b));
  pager_end_read(b);
  pager_end_read(a);
  pager_close(a);
  pager_close(b);
}

typedef struct Releaser {
  Pager *p;
  int ms;
} Releaser;

static void *release_later(void *arg) {
  Releaser *r = arg;
  usleep((useconds_t)r->ms * 1000);
  pager_end_read(r->p);
  return NULL;
}

TEST(busy_timeout_succeeds_when_lock_freed) {
  Pager *a = open_pager(test_path("busy2.db")), *b = open_pager(test_path("busy2.db"));
  write_one_page(a);
  CHECK_OK(pager_begin_read(a));
  int timeout = 5000;
  pager_set_busy_handler(b, pager_busy_wait, &timeout);
  CHECK_OK(pager_begin_write(b, 0));
  PgPage *pg;
  CHECK_OK(pager_get(b, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  pager_data(pg)[0] = 9;
  pager_unref(pg);
  Releaser r = {a, 60};
  pthread_t th;
  CHECK_OK(pthread_create(&th, NULL, release_later, &r));
  int64_t t0 = os_now_ms();
  CHECK_OK(pager_commit(b));
  int64_t spent = os_now_ms() - t0;
  pthread_join(th, NULL);
  CHECK(spent >= 40);
  CHECK(spent < 4000);
  pager_end_read(b);
  /* The commit is visible to a fresh reader. */
  CHECK_OK(pager_begin_read(a));
  CHECK_OK(pager_get(a, 2, 0, &pg));
  CHECK_EQ(pager_data(pg)[0], 9);
  pager_unref(pg);
  pager_end_read(a);
  pager_close(a);
  pager_close(b);
}
