/* threads.c -- SQLite's serialized mode through the sqlite3_* API:
 * sqlite3_threadsafe() is 1 (Debian's build); sqlite3_config chooses the
 * threading mode only before sqlite3_initialize; a connection has a mutex
 * (sqlite3_db_mutex) unless opened with SQLITE_OPEN_NOMUTEX or after
 * SQLITE_CONFIG_MULTITHREAD, usable with sqlite3_mutex_enter/try/leave (held
 * by another thread: try is SQLITE_BUSY); and 8 threads sharing one
 * connection for a second (and each for at least MIN_OPS rounds, however
 * loaded the machine, up to a minute), each inserting, reading, counting
 * and deleting its own rows with its own prepared statements, agree with
 * their models.
 * Portable: must pass on SQLite and on Shale. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

static sqlite3 *g_db;
static sqlite3_mutex *g_mu;
static volatile int g_try_rc = -1;

static void *try_other(void *arg) {
  (void)arg;
  g_try_rc = sqlite3_mutex_try(g_mu);
  if (g_try_rc == SQLITE_OK) sqlite3_mutex_leave(g_mu);
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct W {
  int th, fails, ops;
  double deadline, cap; /* run until deadline and MIN_OPS rounds, never past cap */
} W;
#define MIN_OPS 20

static void *worker(void *arg) {
  W *w = arg;
  sqlite3_stmt *ins = NULL, *get = NULL, *cnt = NULL, *del = NULL;
  if (sqlite3_prepare_v2(g_db, "INSERT INTO t(k, th) VALUES(?1, ?2)", -1, &ins, NULL) ||
      sqlite3_prepare_v2(g_db, "SELECT th FROM t WHERE k = ?1", -1, &get, NULL) ||
      sqlite3_prepare_v2(g_db, "SELECT count(*) FROM t WHERE th = ?1", -1, &cnt, NULL) ||
      sqlite3_prepare_v2(g_db, "DELETE FROM t WHERE k = ?1", -1, &del, NULL)) {
    w->fails++;
    return NULL;
  }
  int n = 0, live = 0, deleted = 0;
  for (double t = now_s(); (t < w->deadline || w->ops < MIN_OPS) && t < w->cap && n < 100000;
       t = now_s()) {
    sqlite3_int64 k = (sqlite3_int64)w->th * 1000000 + n++;
    sqlite3_bind_int64(ins, 1, k);
    sqlite3_bind_int(ins, 2, w->th);
    if (sqlite3_step(ins) != SQLITE_DONE) w->fails++;
    sqlite3_reset(ins);
    live++;
    sqlite3_bind_int64(get, 1, k);
    if (sqlite3_step(get) != SQLITE_ROW || sqlite3_column_int(get, 0) != w->th) w->fails++;
    sqlite3_reset(get);
    if (n % 3 == 0) {
      sqlite3_bind_int64(del, 1, k);
      if (sqlite3_step(del) != SQLITE_DONE) w->fails++;
      sqlite3_reset(del);
      live--;
      deleted++;
    }
    sqlite3_bind_int(cnt, 1, w->th);
    if (sqlite3_step(cnt) != SQLITE_ROW || sqlite3_column_int(cnt, 0) != live) w->fails++;
    sqlite3_reset(cnt);
    /* an error and its message, read under the connection's mutex */
    if (n % 50 == 0) {
      sqlite3_mutex_enter(sqlite3_db_mutex(g_db));
      sqlite3_stmt *bad = NULL;
      int rc = sqlite3_prepare_v2(g_db, "SELECT nosuch_col FROM t", -1, &bad, NULL);
      if (rc != SQLITE_ERROR || strcmp(sqlite3_errmsg(g_db), "no such column: nosuch_col"))
        w->fails++;
      sqlite3_mutex_leave(sqlite3_db_mutex(g_db));
    }
    w->ops++;
  }
  (void)deleted;
  sqlite3_finalize(ins);
  sqlite3_finalize(get);
  sqlite3_finalize(cnt);
  sqlite3_finalize(del);
  return NULL;
}

int main(void) {
  EXPECT_INT(sqlite3_threadsafe(), 1);
  /* before initialize: the threading mode */
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MULTITHREAD), SQLITE_OK);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_SERIALIZED), SQLITE_MISUSE);
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT(sqlite3_db_mutex(db) == NULL);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(
      sqlite3_open_v2(":memory:", &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL),
      SQLITE_OK);
  EXPECT(sqlite3_db_mutex(db) != NULL);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_SERIALIZED), SQLITE_OK);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  EXPECT_INT(
      sqlite3_open_v2(":memory:", &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL),
      SQLITE_OK);
  EXPECT(sqlite3_db_mutex(db) == NULL);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);

  /* serialized: the connection's mutex */
  char path[] = "/tmp/shale-threads-XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0);
  close(fd);
  EXPECT_INT(sqlite3_open(path, &g_db), SQLITE_OK);
  g_mu = sqlite3_db_mutex(g_db);
  EXPECT(g_mu != NULL);
  sqlite3_mutex_enter(g_mu);
  EXPECT_INT(sqlite3_mutex_try(g_mu), SQLITE_OK); /* recursive */
  sqlite3_mutex_leave(g_mu);
  pthread_t t;
  pthread_create(&t, NULL, try_other, NULL);
  pthread_join(t, NULL);
  EXPECT_INT(g_try_rc, SQLITE_BUSY);
  sqlite3_mutex_leave(g_mu);
  pthread_create(&t, NULL, try_other, NULL);
  pthread_join(t, NULL);
  EXPECT_INT(g_try_rc, SQLITE_OK);

  EXEC_OK(g_db, "PRAGMA journal_mode=WAL; CREATE TABLE t(k INTEGER PRIMARY KEY, th)");
  enum { N = 8 };
  W w[N];
  pthread_t th[N];
  double deadline = now_s() + 1.0;
  for (int i = 0; i < N; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].th = i + 1;
    w[i].deadline = deadline;
    w[i].cap = deadline + 60.0;
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    EXPECT_INT(w[i].fails, 0);
    EXPECT(w[i].ops >= MIN_OPS);
  }
  EXPECT(sqlite3_next_stmt(g_db, NULL) == NULL);
  EXPECT_INT(sqlite3_close(g_db), SQLITE_OK);
  unlink(path);
  char aux[64];
  snprintf(aux, sizeof aux, "%s-wal", path);
  unlink(aux);
  snprintf(aux, sizeof aux, "%s-shm", path);
  unlink(aux);
  return prog_done();
}
