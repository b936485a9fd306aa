/* mutex_app.c -- SQLITE_CONFIG_MUTEX with the application's own mutex
 * methods (recursive pthread mutexes that count their calls), installed
 * before initialize: xMutexInit runs at initialize and xMutexEnd at
 * shutdown; GETMUTEX gives them back; sqlite3_mutex_alloc/enter/try/leave/
 * free are theirs; a connection's mutex (sqlite3_db_mutex) is one they
 * allocated and every call on the connection goes through it, also with
 * four threads sharing one connection (results consistent); a NOMUTEX
 * connection has none. Output compared between SQLite and Shale
 * (test_compat). */
#include <pthread.h>
#include <stdlib.h>

#include "prog.h"

typedef struct AppMutex {
  pthread_mutex_t mu;
  int kind;
} AppMutex;

static long n_init, n_end, n_alloc, n_enter, n_leave, n_try;
static AppMutex statics[16];
static AppMutex *allocated[4096];
static int nallocated;
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;

static void init_one(AppMutex *m, int kind) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&m->mu, &a);
  pthread_mutexattr_destroy(&a);
  m->kind = kind;
}

static int m_init(void) {
  n_init++;
  for (int i = 2; i < 16; i++) init_one(&statics[i], i);
  return SQLITE_OK;
}
static int m_end(void) {
  n_end++;
  return SQLITE_OK;
}
static sqlite3_mutex *m_alloc(int kind) {
  if (kind >= 2) return kind < 16 ? (sqlite3_mutex *)&statics[kind] : NULL;
  AppMutex *m = malloc(sizeof *m);
  if (!m) return NULL;
  init_one(m, kind);
  pthread_mutex_lock(&count_mu);
  n_alloc++;
  if (nallocated < 4096) allocated[nallocated++] = m;
  pthread_mutex_unlock(&count_mu);
  return (sqlite3_mutex *)m;
}
static void m_free(sqlite3_mutex *p) {
  AppMutex *m = (AppMutex *)p;
  if (m->kind >= 2) return;
  pthread_mutex_lock(&count_mu);
  for (int i = 0; i < nallocated; i++)
    if (allocated[i] == m) allocated[i] = allocated[--nallocated];
  pthread_mutex_unlock(&count_mu);
  pthread_mutex_destroy(&m->mu);
  free(m);
}
static void m_enter(sqlite3_mutex *p) {
  pthread_mutex_lock(&((AppMutex *)p)->mu);
  __atomic_add_fetch(&n_enter, 1, __ATOMIC_RELAXED);
}
static int m_try(sqlite3_mutex *p) {
  __atomic_add_fetch(&n_try, 1, __ATOMIC_RELAXED);
  if (pthread_mutex_trylock(&((AppMutex *)p)->mu)) return SQLITE_BUSY;
  __atomic_add_fetch(&n_enter, 1, __ATOMIC_RELAXED);
  return SQLITE_OK;
}
static void m_leave(sqlite3_mutex *p) {
  __atomic_add_fetch(&n_leave, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&((AppMutex *)p)->mu);
}

static int is_ours(void *p) {
  pthread_mutex_lock(&count_mu);
  int found = 0;
  for (int i = 0; i < nallocated; i++) found |= allocated[i] == p;
  pthread_mutex_unlock(&count_mu);
  return found;
}

static sqlite3 *shared;

static void *worker(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 200; i++) {
    char q[128];
    snprintf(q, sizeof q, "INSERT INTO t VALUES(%ld, %d)", id, i);
    if (sqlite3_exec(shared, q, NULL, NULL, NULL) != SQLITE_OK) return (void *)1;
  }
  return NULL;
}

int main(void) {
  static const sqlite3_mutex_methods mine = {m_init, m_end,   m_alloc, m_free, m_enter,
                                             m_try,  m_leave, NULL,    NULL};
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_MUTEX, &mine), SQLITE_OK);
  sqlite3_mutex_methods got;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETMUTEX, &got), SQLITE_OK);
  printf("getmutex gives them back: %d\n",
         got.xMutexAlloc == m_alloc && got.xMutexEnter == m_enter);
  printf("init before initialize: %ld\n", n_init);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  printf("init after initialize: %d\n", n_init > 0);

  sqlite3_mutex *m = sqlite3_mutex_alloc(SQLITE_MUTEX_RECURSIVE);
  printf("mutex_alloc is theirs: %d\n", is_ours(m));
  long before = n_enter;
  sqlite3_mutex_enter(m);
  EXPECT_INT(sqlite3_mutex_try(m), SQLITE_OK);
  sqlite3_mutex_leave(m);
  sqlite3_mutex_leave(m);
  printf("enter/try through them: %ld\n", n_enter - before);
  sqlite3_mutex_free(m);
  printf("static APP1 is theirs: %d\n",
         sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1) == (sqlite3_mutex *)&statics[8]);

  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  printf("db_mutex is theirs: %d\n", is_ours(sqlite3_db_mutex(db)));
  before = n_enter;
  EXEC_OK(db, "CREATE TABLE t(a, b)");
  printf("calls on the connection lock it: %d\n", n_enter - before > 0);
  shared = db;
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  long bad = 0;
  for (int i = 0; i < 4; i++) {
    void *r = NULL;
    pthread_join(th[i], &r);
    bad += r != NULL;
  }
  printf("threads failed: %ld\n", bad);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(
      sqlite3_prepare_v2(db, "SELECT count(*), count(DISTINCT a), sum(b) FROM t", -1, &st, NULL),
      SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    printf("rows %d ids %d sum %d\n", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
           sqlite3_column_int(st, 2));
  sqlite3_finalize(st);
  printf("enters == leaves (connection idle): %d\n", n_enter == n_leave);
  sqlite3_close(db);

  sqlite3 *nm = NULL;
  EXPECT_INT(sqlite3_open_v2(":memory:", &nm, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL),
             SQLITE_OK);
  printf("nomutex connection: %s\n", sqlite3_db_mutex(nm) ? "a mutex" : "none");
  sqlite3_close(nm);

  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  printf("end after shutdown: %ld\n", n_end);
  return prog_done();
}
