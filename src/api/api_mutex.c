/*
 * api_mutex.c -- threads: the recursive mutex every connection carries
 * (SQLite's serialized mode), the public shale_mutex_* calls over it (the
 * sqlite3_mutex_* of compat/), the static mutexes, and the free lists that
 * keep the memory of closed handles valid (api_int.h invariants 6 and 7).
 *
 * Owns: the static mutexes and the process-wide list of closed connection
 * structs (db_pool, under pool_mu: taken at open and close only).
 *
 * Invariants:
 *  1. A struct shale is allocated by api_db_alloc and never returned to the
 *     C allocator: a closed one waits on db_pool with magic API_DEAD, so a
 *     call on a closed connection reads a valid magic and returns
 *     SHALE_MISUSE. Its mutex is initialized once, when first allocated,
 *     and stays usable across reuse (a thread that was waiting for it when
 *     the connection closed re-checks the magic and leaves).
 *  2. The structs are outside shale_malloc's accounting (they live as long
 *     as the library, like the static mutexes: a destructor frees the list
 *     at exit or dlclose); what they point to is not.
 *  3. Statement, backup and blob structs are shale_malloc memory on a free
 *     list of their connection (api_handle_alloc/retire, under the
 *     connection's mutex), freed with the connection.
 */
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

_Thread_local char api_thread_tag __attribute__((tls_model("initial-exec")));

static void api_mutex_init(shale_mutex *m) {
  m->state = 0;
  m->depth = 0;
  m->owner = 0;
  m->is_static = 0;
  m->app = NULL;
  m->am = NULL;
  m->app_gen = 0;
  pthread_mutex_init(&m->wm, NULL);
  pthread_cond_init(&m->cv, NULL);
}

/* The lock is taken: mark it contended (2) and sleep until a release finds
 * the mark. Setting 2 while it is free takes it (with the mark: the next
 * release wakes someone, perhaps for nothing). A release that happens
 * between our exchange and the wait must take wm first, so it cannot signal
 * before we wait. */
void api_mutex_wait(shale_mutex *m) {
  pthread_mutex_lock(&m->wm);
  while (__atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE) != 0)
    pthread_cond_wait(&m->cv, &m->wm);
  pthread_mutex_unlock(&m->wm);
}

void api_mutex_wake(shale_mutex *m) {
  pthread_mutex_lock(&m->wm);
  pthread_cond_signal(&m->cv);
  pthread_mutex_unlock(&m->wm);
}

/* ---------------------------------------------------------------- public */

static shale_mutex static_mutex[SHALE_MUTEX_STATIC_LAST + 1];
static pthread_once_t static_once = PTHREAD_ONCE_INIT;

static void init_static(void) {
  for (int i = SHALE_MUTEX_STATIC_FIRST; i <= SHALE_MUTEX_STATIC_LAST; i++) {
    api_mutex_init(&static_mutex[i]);
    static_mutex[i].is_static = 1;
  }
}

shale_mutex *shale_mutex_alloc(int kind) {
  if (kind == SHALE_MUTEX_FAST || kind == SHALE_MUTEX_RECURSIVE) {
    shale_mutex *m = shale_malloc(sizeof *m);
    if (m) api_mutex_init(m);
    return m;
  }
  if (kind < SHALE_MUTEX_STATIC_FIRST || kind > SHALE_MUTEX_STATIC_LAST) return NULL;
  pthread_once(&static_once, init_static);
  return &static_mutex[kind];
}

void shale_mutex_free(shale_mutex *m) {
  if (!m || m->is_static) return;
  pthread_mutex_destroy(&m->wm);
  pthread_cond_destroy(&m->cv);
  shale_free(m);
}

void shale_mutex_enter(shale_mutex *m) {
  if (m) api_mutex_enter(m);
}

/* ------------------------------------------------ the application's mutexes */

static shale_mutex_methods app_methods; /* a copy (shale_config_mutex) */
static const shale_mutex_methods *app;  /* &app_methods or NULL */
static unsigned app_gen;                /* bumped by each shale_config_mutex */

void shale_config_mutex(const shale_mutex_methods *m) {
  if (m) app_methods = *m;
  app = m ? &app_methods : NULL;
  app_gen++;
}

void *shale_mutex_app(shale_mutex *m) { return m ? m->app : NULL; }

/* The application's mutex is recursive (allocated so); depth and owner
 * change only while it is held. */
void api_mutex_app_enter(shale_mutex *m) {
  m->am->xMutexEnter(m->app);
  if (m->depth++ == 0) __atomic_store_n(&m->owner, api_thread_self(), __ATOMIC_RELAXED);
}

void api_mutex_app_leave(shale_mutex *m) {
  if (--m->depth == 0) __atomic_store_n(&m->owner, (uintptr_t)0, __ATOMIC_RELAXED);
  m->am->xMutexLeave(m->app);
}

/* A connection struct's mutex under the methods set now: the
 * application's is allocated when its struct is (re)used; one allocated
 * under earlier methods is left alone (a thread may still wait on it), as
 * is Shale's own. 0, or SHALE_NOMEM. */
static int db_mutex_methods(shale_mutex *m) {
  if (!app) {
    m->app = NULL;
    m->am = NULL;
    return SHALE_OK;
  }
  if (m->app && m->app_gen == app_gen) return SHALE_OK;
  void *a = app->xMutexAlloc(SHALE_MUTEX_RECURSIVE);
  if (!a) return SHALE_NOMEM;
  m->app = a;
  m->am = app;
  m->app_gen = app_gen;
  m->depth = 0;
  return SHALE_OK;
}

int shale_mutex_try(shale_mutex *m) {
  if (!m) return SHALE_OK;
  if (m->app) {
    if (m->am->xMutexTry(m->app) != SHALE_OK) return SHALE_BUSY;
    if (m->depth++ == 0) __atomic_store_n(&m->owner, api_thread_self(), __ATOMIC_RELAXED);
    return SHALE_OK;
  }
  uintptr_t self = api_thread_self();
  if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) == self) {
    m->depth++;
    return SHALE_OK;
  }
  int zero = 0;
  if (!__atomic_compare_exchange_n(&m->state, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return SHALE_BUSY;
  __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
  m->depth = 1;
  return SHALE_OK;
}

void shale_mutex_leave(shale_mutex *m) {
  if (m) api_mutex_leave(m);
}

int shale_mutex_held(shale_mutex *m) {
  if (m && m->app && m->am->xMutexHeld) return m->am->xMutexHeld(m->app);
  return !m || __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == api_thread_self();
}

shale_mutex *shale_db_mutex(shale *db) {
  uint32_t m = api_magic(db);
  return m == API_DB_OPEN || m == API_DB_ZOMBIE ? db->mutex : NULL;
}

int shale_db_live(shale *db) { return api_magic(db) == API_DB_OPEN; }
int shale_stmt_live(shale_stmt *st) { return api_magic(st) == API_STMT_LIVE; }

/* ------------------------------------------------------------ free lists */

void *api_handle_alloc(shale *db, ApiHandle **fl, size_t size, uint32_t magic) {
  ApiHandle *h = *fl;
  if (h)
    *fl = h->next_free;
  else if (!(h = shale_malloc(size)))
    return NULL;
  memset((char *)h + sizeof *h, 0, size - sizeof *h);
  h->next_free = NULL;
  h->owner = db;
  api_set_magic(h, magic);
  return h;
}

void api_handle_retire(ApiHandle **fl, void *p) {
  ApiHandle *h = p;
  api_set_magic(h, API_DEAD);
  h->next_free = *fl;
  *fl = h;
}

static void free_list(ApiHandle **fl) {
  while (*fl) {
    ApiHandle *h = *fl;
    *fl = h->next_free;
    shale_free(h);
  }
}

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ApiHandle *db_pool;
static void pool_put(shale *db);

shale *api_db_alloc(int with_mutex) {
  pthread_mutex_lock(&pool_mu);
  shale *db = (shale *)db_pool;
  if (db) db_pool = db->h.next_free;
  pthread_mutex_unlock(&pool_mu);
  if (!db) {
    db = calloc(1, sizeof *db);
    if (!db) return NULL;
    api_mutex_init(&db->mu);
  } else {
    size_t off = offsetof(shale, mutex); /* keep h and mu (invariant 1) */
    memset((char *)db + off, 0, sizeof *db - off);
  }
  db->h.next_free = NULL;
  db->mutex = with_mutex ? &db->mu : NULL;
  if (with_mutex && db_mutex_methods(&db->mu) != SHALE_OK) {
    pool_put(db); /* magic still API_DEAD (or zero): nobody can use it */
    return NULL;
  }
  api_set_magic(db, API_DB_OPEN);
  return db;
}

/* The connection's contents are freed: drop its handle lists, mark it dead
 * (callers still holding its mutex leave through api_leave_maybe_free). */
void api_db_retire(shale *db) {
  free_list(&db->free_stmts);
  free_list(&db->free_backups);
  free_list(&db->free_blobs);
  api_set_magic(db, API_DEAD);
}

static void pool_put(shale *db) {
  pthread_mutex_lock(&pool_mu);
  db->h.next_free = db_pool;
  db_pool = &db->h;
  pthread_mutex_unlock(&pool_mu);
}

/* At exit or dlclose: the closed connections' structs go back to the C
 * allocator (nothing refers to them once the library is gone). */
__attribute__((destructor)) static void db_pool_free(void) {
  pthread_mutex_lock(&pool_mu);
  while (db_pool) {
    shale *db = (shale *)db_pool;
    db_pool = db->h.next_free;
    pthread_mutex_destroy(&db->mu.wm);
    pthread_cond_destroy(&db->mu.cv);
    free(db);
  }
  pthread_mutex_unlock(&pool_mu);
}

void api_leave_maybe_free(shale *db) {
  if (api_magic(db) != API_DEAD) {
    api_leave(db);
    return;
  }
  if (db->mutex) {
    api_mutex_leave(db->mutex);
    if (db->mu.depth) return; /* an outer call of this thread still holds it */
  }
  pool_put(db);
}
