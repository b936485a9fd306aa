/* dlclose.c -- the library can be unloaded after WAL use (PHP dlclose()s
 * its extensions' libraries at exit): 30 rounds of dlopen, a WAL database
 * written and read (which starts Shale's -shm lock keeper thread), close,
 * dlclose; the library must really be gone (RTLD_NOLOAD finds nothing) and
 * no thread of it may run on (it would execute unmapped code: SIGSEGV). Not
 * linked against any SQLite: the library comes from dlopen only. Usage:
 * dlclose [LIBRARY [PREFIX]] (default libsqlite3.so.0 with prefix sqlite3_,
 * e.g. build/libshale.so shale_). Portable: passes on SQLite too. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, void **);
typedef int (*exec_fn)(void *, const char *, int (*)(void *, int, char **, char **), void *,
                       char **);
typedef int (*close_fn)(void *);

static void *sym(void *h, const char *prefix, const char *name) {
  char full[64];
  snprintf(full, sizeof full, "%s%s", prefix, name);
  void *p = dlsym(h, full);
  if (!p) {
    fprintf(stderr, "no symbol %s\n", full);
    exit(1);
  }
  return p;
}

static int count_cb(void *arg, int n, char **v, char **names) {
  (void)n;
  (void)names;
  *(int *)arg = atoi(v[0]);
  return 0;
}

int main(int argc, char **argv) {
  const char *lib = argc > 1 ? argv[1] : "libsqlite3.so.0";
  const char *prefix = argc > 2 ? argv[2] : "sqlite3_";
  char path[] = "/tmp/shale-dlclose-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  unlink(path);
  int fails = 0;
  for (int round = 0; round < 30; round++) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
      return 1;
    }
    open_fn op = (open_fn)sym(h, prefix, "open");
    exec_fn ex = (exec_fn)sym(h, prefix, "exec");
    close_fn cl = (close_fn)sym(h, prefix, "close");
    void *db = NULL;
    int n = -1;
    if (op(path, &db) ||
        ex(db, "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES(1)",
           NULL, NULL, NULL) ||
        ex(db, "SELECT count(*) FROM t", count_cb, &n, NULL) || n != round + 1) {
      fprintf(stderr, "round %d: count %d\n", round, n);
      fails++;
    }
    ex(db, "SELECT count(*) FROM t", count_cb, &n, NULL); /* a read lock may linger */
    cl(db);
    if (dlclose(h)) {
      fprintf(stderr, "dlclose: %s\n", dlerror());
      return 1;
    }
    if (dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      fprintf(stderr, "round %d: %s still loaded after dlclose\n", round, lib);
      return 1;
    }
    struct timespec ts = {0, 3000000}; /* a leftover thread would run now */
    nanosleep(&ts, NULL);
  }
  char aux[64];
  unlink(path);
  snprintf(aux, sizeof aux, "%s-wal", path);
  unlink(aux);
  snprintf(aux, sizeof aux, "%s-shm", path);
  unlink(aux);
  printf("%d rounds, %d failed\n", 30, fails);
  return fails != 0;
}
