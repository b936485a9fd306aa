/*
 * pcache.c -- an application's page cache (SQLITE_CONFIG_PCACHE2 /
 * GETPCACHE2) on both libraries (output compared).
 *
 * The same workload -- a file database in rollback and WAL mode with a
 * cache far smaller than the data (spills), rollbacks, savepoints, a second
 * connection changing the file between reads, overflow pages, an in-memory
 * and a temporary database -- runs under four caches:
 *   1. the library's own (no PCACHE2);
 *   2. a wrapper around the default methods GETPCACHE2 reports, which
 *      checks the interface's rules (no unpin of an unpinned page, every
 *      page unpinned or truncated by destroy, no fetch of a page the caller
 *      holds pinned twice counted as a new pin) and notes the arguments;
 *   3. a cache of this file that keeps nothing: every unpinned page is
 *      poisoned and freed, and it creates past its size only when asked
 *      with createFlag 2 (a library that kept using an unpinned page, or
 *      didn't spill, gives other answers or fails);
 *   4. a cache that gives no page at all (SQLITE_NOMEM, and xInit's error
 *      failing sqlite3_initialize and sqlite3_open).
 *
 * Invariants:
 *  1. Every line printed is a fact both libraries must agree on (counts of
 *     calls differ between them and are not printed).
 */
#include <stdint.h>
#include <unistd.h>

#include "prog.h"

/* ---------------------------------------------------------------- the workload */

static char path[64];

static void print_query(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    printf("  %s -> error %d %s\n", sql, rc, sqlite3_errmsg(db));
    return;
  }
  printf("  %s ->", sql);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *t = sqlite3_column_text(st, i);
      printf(" %s", t ? (const char *)t : "NULL");
    }
  }
  if (rc != SQLITE_DONE) printf(" error %d %s", rc, sqlite3_errmsg(db));
  printf("\n");
  sqlite3_finalize(st);
}

static void exec_print(sqlite3 *db, const char *sql) {
  char *e = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &e);
  if (rc != SQLITE_OK) printf("  %.60s -> error %d %s\n", sql, rc, e ? e : "");
  sqlite3_free(e);
}

static void workload_file(const char *mode) {
  printf(" %s:\n", mode);
  unlink(path);
  char side[80];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-journal", path);
  unlink(side);
  sqlite3 *db, *other;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  char sql[160];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA cache_size=10", mode);
  EXEC_OK(db, sql);
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB);"
          "CREATE INDEX tb ON t(b);"
          "BEGIN;"
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<3000)"
          " INSERT INTO t SELECT i, printf('row %05d', i*7 % 3000), zeroblob(i % 50) FROM n;"
          "INSERT INTO t VALUES(5000, 'big', randomblob(20000));"
          "COMMIT;");
  print_query(db, "SELECT count(*), sum(a), sum(length(c)), min(b), max(b) FROM t");
  print_query(db, "SELECT length(c) FROM t WHERE a=5000");
  /* a big change rolled back: spilled pages must come back */
  EXEC_OK(db,
          "BEGIN; UPDATE t SET b = b || 'x', c = zeroblob(100); DELETE FROM t WHERE a % 3 = 0;");
  print_query(db, "SELECT count(*), sum(length(c)) FROM t");
  EXEC_OK(db, "ROLLBACK");
  print_query(db, "SELECT count(*), sum(length(c)), sum(length(b)) FROM t");
  /* savepoints */
  EXEC_OK(db, "BEGIN; DELETE FROM t WHERE a < 1000; SAVEPOINT s; DELETE FROM t WHERE a < 2000;");
  print_query(db, "SELECT count(*) FROM t");
  EXEC_OK(db, "ROLLBACK TO s; RELEASE s; COMMIT");
  print_query(db, "SELECT count(*), min(a) FROM t");
  /* another connection changes the file between our reads */
  EXPECT_INT(sqlite3_open(path, &other), SQLITE_OK);
  EXEC_OK(other,
          "PRAGMA cache_size=10; UPDATE t SET b = 'other' WHERE a % 100 = 0;"
          "INSERT INTO t VALUES(6000, 'six', zeroblob(5000))");
  print_query(db, "SELECT count(*), sum(b = 'other'), sum(length(c)) FROM t");
  EXEC_OK(db, "DELETE FROM t WHERE a > 4000");
  print_query(other, "SELECT count(*), max(a) FROM t");
  sqlite3_close(other);
  print_query(db, "PRAGMA integrity_check");
  EXEC_OK(db, "VACUUM");
  print_query(db, "SELECT count(*), sum(a) FROM t");
  /* sqlite3_db_release_memory gives the clean pages back */
  int before = 0, after = 0, hi = 0;
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &before, &hi, 0);
  int rc = sqlite3_db_release_memory(db);
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &after, &hi, 0);
  printf("  release_memory %d: cache had pages %d, now fewer %d\n", rc, before > 0, after < before);
  print_query(db, "SELECT count(*), sum(a) FROM t");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
}

static void workload_memory(const char *name) {
  printf(" %s:\n", *name ? name : "temporary");
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(name, &db), SQLITE_OK);
  EXEC_OK(db,
          "PRAGMA cache_size=10;"
          "CREATE TABLE m(a INTEGER PRIMARY KEY, b);"
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)"
          " INSERT INTO m SELECT i, zeroblob(300) FROM n;");
  EXEC_OK(db, "BEGIN; DELETE FROM m WHERE a > 100; ROLLBACK");
  print_query(db, "SELECT count(*), sum(length(b)) FROM m");
  print_query(db, "PRAGMA integrity_check");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
}

static void workload(void) {
  workload_file("delete");
  workload_file("wal");
  workload_memory(":memory:");
  workload_memory("");
}

/* ---------------------------------------------------------------- a wrapper */

static sqlite3_pcache_methods2 dflt;

typedef struct Wrap {
  sqlite3_pcache *inner;
  int pinned;
  sqlite3_pcache_page *pins[4096]; /* the pages pinned now */
  unsigned keys[4096];             /* and their keys */
} Wrap;

static int w_shrinks, w_created, w_destroyed, w_bad, w_saw_cachesize_10, w_purgeable_file,
    w_purgeable_mem, w_inits, w_shutdowns, w_page_4096;

static int w_find(Wrap *w, sqlite3_pcache_page *pg) {
  for (int i = 0; i < w->pinned; i++)
    if (w->pins[i] == pg) return i;
  return -1;
}

static int w_init(void *arg) {
  w_inits += arg == (void *)&dflt;
  return dflt.xInit ? dflt.xInit(dflt.pArg) : SQLITE_OK;
}
static void w_shutdown(void *arg) {
  w_shutdowns += arg == (void *)&dflt;
  if (dflt.xShutdown) dflt.xShutdown(dflt.pArg);
}
static sqlite3_pcache *w_create(int szPage, int szExtra, int purgeable) {
  Wrap *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->inner = dflt.xCreate(szPage, szExtra, purgeable);
  if (!w->inner) {
    free(w);
    return NULL;
  }
  w_created++;
  if (szPage == 4096) w_page_4096 = 1;
  if (purgeable)
    w_purgeable_file = 1;
  else
    w_purgeable_mem = 1;
  return (sqlite3_pcache *)w;
}
static void w_cachesize(sqlite3_pcache *c, int n) {
  Wrap *w = (Wrap *)c;
  if (n == 10) w_saw_cachesize_10 = 1;
  dflt.xCachesize(w->inner, n);
}
static int w_pagecount(sqlite3_pcache *c) { return dflt.xPagecount(((Wrap *)c)->inner); }
static sqlite3_pcache_page *w_fetch(sqlite3_pcache *c, unsigned key, int create) {
  Wrap *w = (Wrap *)c;
  if (key == 0 || create < 0 || create > 2) w_bad++;
  sqlite3_pcache_page *pg = dflt.xFetch(w->inner, key, create);
  if (pg && w_find(w, pg) < 0) {
    if (w->pinned == 4096)
      w_bad++;
    else {
      w->keys[w->pinned] = key;
      w->pins[w->pinned++] = pg;
    }
  }
  return pg;
}
static void w_unpin(sqlite3_pcache *c, sqlite3_pcache_page *pg, int discard) {
  Wrap *w = (Wrap *)c;
  int i = w_find(w, pg);
  if (i < 0) {
    w_bad++; /* not pinned */
    return;
  }
  w->pinned--;
  w->pins[i] = w->pins[w->pinned];
  w->keys[i] = w->keys[w->pinned];
  dflt.xUnpin(w->inner, pg, discard);
}
static void w_rekey(sqlite3_pcache *c, sqlite3_pcache_page *pg, unsigned a, unsigned b) {
  Wrap *w = (Wrap *)c;
  int i = w_find(w, pg);
  if (i >= 0) w->keys[i] = b;
  dflt.xRekey(w->inner, pg, a, b);
}
static void w_truncate(sqlite3_pcache *c, unsigned limit) {
  Wrap *w = (Wrap *)c;
  dflt.xTruncate(w->inner, limit);
  for (int i = 0; i < w->pinned;) { /* pinned pages past the limit are gone too */
    if (w->keys[i] >= limit) {
      w->pinned--;
      w->pins[i] = w->pins[w->pinned];
      w->keys[i] = w->keys[w->pinned];
    } else {
      i++;
    }
  }
}
static void w_destroy(sqlite3_pcache *c) {
  Wrap *w = (Wrap *)c;
  if (w->pinned != 0) w_bad++; /* every page unpinned before destroy? (SQLite: yes) */
  dflt.xDestroy(w->inner);
  w_destroyed++;
  free(w);
}
static void w_shrink(sqlite3_pcache *c) {
  w_shrinks++;
  dflt.xShrink(((Wrap *)c)->inner);
}

/* ---------------------------------------------------------------- a cache that keeps nothing */

typedef struct Lean {
  int sz_page, sz_extra, max, n, purgeable;
} Lean;

typedef struct LeanPage {
  sqlite3_pcache_page pg;
  Lean *owner;
  unsigned key;
  int pinned; /* a non-purgeable cache keeps its unpinned pages, as it must */
  struct LeanPage *next;
} LeanPage;

static LeanPage *lean_pages; /* every page pinned now, of every Lean cache */
static int lean_bad, lean_fetches;

static sqlite3_pcache *lean_create(int szPage, int szExtra, int purgeable) {
  Lean *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->purgeable = purgeable;
  c->sz_page = szPage;
  c->sz_extra = szExtra;
  c->max = 100;
  return (sqlite3_pcache *)c;
}
static void lean_cachesize(sqlite3_pcache *c, int n) { ((Lean *)c)->max = n; }
static int lean_pagecount(sqlite3_pcache *c) { return ((Lean *)c)->n; }
static sqlite3_pcache_page *lean_fetch(sqlite3_pcache *pc, unsigned key, int create) {
  Lean *c = (Lean *)pc;
  lean_fetches++;
  for (LeanPage *p = lean_pages; p; p = p->next)
    if (p->owner == c && p->key == key) {
      p->pinned = 1;
      return &p->pg;
    }
  if (create == 0) return NULL;
  if (c->purgeable) {
    if (c->n >= c->max && create == 1) return NULL;
    if (c->n >= c->max + 40) return NULL; /* a hard bound even for createFlag 2 */
  }
  LeanPage *p = malloc(sizeof *p + (size_t)c->sz_page + (size_t)c->sz_extra);
  if (!p) return NULL;
  p->pg.pBuf = p + 1;
  p->pg.pExtra = (char *)(p + 1) + c->sz_page;
  memset(p->pg.pBuf, 0xa5, (size_t)c->sz_page); /* content undefined */
  memset(p->pg.pExtra, 0, (size_t)c->sz_extra);
  p->owner = c;
  p->key = key;
  p->pinned = 1;
  p->next = lean_pages;
  lean_pages = p;
  c->n++;
  return &p->pg;
}
static void lean_free(Lean *c, LeanPage *p) {
  memset(p->pg.pBuf, 0x5a, (size_t)c->sz_page); /* poisoned: a later use shows */
  memset(p->pg.pExtra, 0x5a, (size_t)c->sz_extra);
  free(p);
  c->n--;
}
static void lean_unpin(sqlite3_pcache *pc, sqlite3_pcache_page *pg, int discard) {
  Lean *c = (Lean *)pc;
  for (LeanPage **pp = &lean_pages; *pp; pp = &(*pp)->next) {
    if (&(*pp)->pg == pg) {
      LeanPage *p = *pp;
      if (!p->pinned) break;
      if (!c->purgeable && !discard) {
        p->pinned = 0;
        return;
      }
      *pp = p->next;
      lean_free(c, p);
      return;
    }
  }
  lean_bad++;
}
static void lean_rekey(sqlite3_pcache *pc, sqlite3_pcache_page *pg, unsigned a, unsigned b) {
  (void)pc;
  (void)a;
  ((LeanPage *)pg)->key = b;
}
static void lean_truncate(sqlite3_pcache *pc, unsigned limit) {
  Lean *c = (Lean *)pc;
  for (LeanPage **pp = &lean_pages; *pp;) {
    LeanPage *p = *pp;
    if (p->owner == c && p->key >= limit) {
      *pp = p->next;
      lean_free(c, p);
    } else {
      pp = &p->next;
    }
  }
}
static void lean_destroy(sqlite3_pcache *pc) {
  lean_truncate(pc, 0);
  free(pc);
}
static void lean_shrink(sqlite3_pcache *pc) { (void)pc; } /* it keeps nothing unpinned */

/* ---------------------------------------------------------------- a cache with no pages */

static int lean_init(void *arg) {
  (void)arg;
  return SQLITE_OK;
}

static int none_init_rc;
static int none_init(void *arg) {
  (void)arg;
  return none_init_rc;
}
static sqlite3_pcache_page *none_fetch(sqlite3_pcache *pc, unsigned key, int create) {
  (void)pc;
  (void)key;
  (void)create;
  return NULL;
}

int main(void) {
  snprintf(path, sizeof path, "/tmp/pcache-%d.db", (int)getpid());

  /* GETPCACHE2 before anything: the default methods, complete */
  memset(&dflt, 0, sizeof dflt);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &dflt), SQLITE_OK);
  printf("default: version>=1 %d, methods %d\n", dflt.iVersion >= 1,
         dflt.xInit && dflt.xShutdown && dflt.xCreate && dflt.xCachesize && dflt.xPagecount &&
             dflt.xFetch && dflt.xUnpin && dflt.xRekey && dflt.xTruncate && dflt.xDestroy &&
             dflt.xShrink);

  printf("own cache:\n");
  workload();
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);

  /* the default methods installed back: the same as before */
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &dflt), SQLITE_OK);
  sqlite3_pcache_methods2 got;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &got), SQLITE_OK);
  printf("default back: same %d\n", got.xFetch == dflt.xFetch && got.xCreate == dflt.xCreate);

  /* the wrapper */
  sqlite3_pcache_methods2 w = {1,           &dflt,       w_init,  w_shutdown, w_create,
                               w_cachesize, w_pagecount, w_fetch, w_unpin,    w_rekey,
                               w_truncate,  w_destroy,   w_shrink};
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &w), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &got), SQLITE_OK);
  printf("wrapper installed: %d\n", got.xFetch == w_fetch && got.pArg == (void *)&dflt);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  printf("wrapper: xInit ran %d\n", w_inits);
  printf("wrapper cache:\n");
  workload();
  printf("wrapper: xShrink called %d\n", w_shrinks > 0);
  printf(
      "wrapper: created %d, all destroyed %d, rule broken %d, cache_size 10 told %d, "
      "purgeable file %d, non-purgeable memory %d, 4096-byte pages %d\n",
      w_created > 0, w_created == w_destroyed, w_bad, w_saw_cachesize_10, w_purgeable_file,
      w_purgeable_mem, w_page_4096);
  /* configuring while initialized is refused */
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &dflt), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  printf("wrapper: xShutdown ran %d\n", w_shutdowns);

  /* the cache that keeps nothing */
  sqlite3_pcache_methods2 lean = {1,           NULL,           lean_init,      NULL,
                                  lean_create, lean_cachesize, lean_pagecount, lean_fetch,
                                  lean_unpin,  lean_rekey,     lean_truncate,  lean_destroy,
                                  lean_shrink};
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &lean), SQLITE_OK);
  printf("lean cache:\n");
  workload();
  /* (whether it had to create past its size depends on how many pages the
   * library holds pinned at once: not printed) */
  printf("lean: fetches %d, pages left %d, rule broken %d\n", lean_fetches > 0, lean_pages != NULL,
         lean_bad);
  /* a table without xInit is the default cache (SQLite's rule) */
  sqlite3_pcache_methods2 noinit = lean;
  noinit.xInit = NULL;
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &noinit), SQLITE_OK);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &got), SQLITE_OK);
  printf("no xInit: the default %d\n", got.xFetch == dflt.xFetch);
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &lean), SQLITE_OK);
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);

  /* no pages at all */
  sqlite3_pcache_methods2 none = lean;
  none.xInit = none_init;
  none.xFetch = none_fetch;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &none), SQLITE_OK);
  printf("no pages:\n");
  sqlite3 *db = NULL;
  int rc = sqlite3_open(":memory:", &db);
  printf("  open %d\n", rc);
  if (rc == SQLITE_OK) {
    exec_print(db, "CREATE TABLE x(a)");
    print_query(db, "SELECT 1");
    sqlite3_close(db);
  }
  unlink(path);
  rc = sqlite3_open(path, &db);
  printf("  open file %d\n", rc);
  if (rc == SQLITE_OK) {
    exec_print(db, "CREATE TABLE x(a)");
    sqlite3_close(db);
  }
  EXPECT_INT(sqlite3_shutdown(), SQLITE_OK);
  none_init_rc = SQLITE_IOERR;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &none), SQLITE_OK);
  printf("  initialize with xInit failing %d\n", sqlite3_initialize());
  db = (sqlite3 *)1;
  rc = sqlite3_open(":memory:", &db);
  printf("  open with xInit failing %d, handle NULL %d\n", rc, db == NULL);
  if (db && db != (sqlite3 *)1) sqlite3_close(db);
  none_init_rc = SQLITE_OK;
  EXPECT_INT(sqlite3_config(SQLITE_CONFIG_PCACHE2, &dflt), SQLITE_OK);
  EXPECT_INT(sqlite3_initialize(), SQLITE_OK);
  unlink(path);
  char side[80];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  return prog_done();
}
