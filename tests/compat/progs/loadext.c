/*
 * loadext.c -- loadable extensions (issue 15): the test extension
 * (tests/compat/ext/testext.c, built against the system <sqlite3ext.h> into
 * BUILD/compat/ext/) loaded by sqlite3_load_extension and by the
 * load_extension() SQL function, its functions, collation and eponymous
 * virtual table used, the refusals and failures with their texts, the
 * switches (sqlite3_enable_load_extension, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION)
 * the automatic extensions, and the default VFS's xDlOpen family. Everything is printed;
 * test_compat.c runs it on the reference library and on Shale's and compares the output.
 *
 * Invariants:
 *  1. Paths are made from this program's own location, so both runs print
 *     the same texts.
 */
#define SQLITE_CORE 1 /* sqlite3ext.h for the routine table's type only */
#include <limits.h>
#include <sqlite3ext.h>
#include <unistd.h>

#include "prog.h"

static char g_dir[PATH_MAX]; /* BUILD/compat/ext */

static void find_dir(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) exit(2);
  exe[n] = 0;
  for (int k = 0; k < 2; k++) { /* strip /loadext, then /progs */
    char *s = strrchr(exe, '/');
    if (s) *s = 0;
  }
  snprintf(g_dir, sizeof g_dir, "%.4000s/ext", exe);
}

/* Print a path with g_dir shown as $EXT (the output stays the same wherever
 * the build is). */
static void pz(const char *z) {
  size_t n = strlen(g_dir);
  if (!z) {
    printf("(null)");
    return;
  }
  for (const char *p = z; *p;) {
    if (!strncmp(p, g_dir, n)) {
      printf("$EXT");
      p += n;
    } else {
      putchar(*p++);
    }
  }
}

static void load(sqlite3 *db, const char *file, const char *proc) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", g_dir, file);
  char *err = (char *)1;
  int rc = sqlite3_load_extension(db, path, proc, &err);
  printf("load %s %s: rc=%d err=", file, proc ? proc : "-", rc);
  pz(err);
  printf(" errcode=%d\n", sqlite3_errcode(db));
  sqlite3_free(err);
}

static int row_cb(void *arg, int n, char **v, char **names) {
  printf("  ");
  for (int i = 0; i < n; i++) {
    printf("%s", i ? "|" : "");
    pz(v[i] ? v[i] : "NULL");
  }
  printf("\n");
  return 0;
}

static void q(sqlite3 *db, const char *sql) {
  char *err = NULL;
  pz(sql);
  printf("\n");
  int rc = sqlite3_exec(db, sql, row_cb, NULL, &err);
  if (rc != SQLITE_OK) {
    printf("  rc=%d err=", rc);
    pz(err);
    printf("\n");
  }
  sqlite3_free(err);
}

/* The SQL function with this program's paths. */
static void qload(sqlite3 *db, const char *file, const char *proc) {
  char sql[PATH_MAX + 200];
  if (proc)
    snprintf(sql, sizeof sql, "SELECT load_extension('%s/%s', '%s')", g_dir, file, proc);
  else
    snprintf(sql, sizeof sql, "SELECT load_extension('%s/%s')", g_dir, file);
  q(db, sql);
}

static int cfg(sqlite3 *db, int onoff) {
  int v = -1;
  int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, onoff, &v);
  printf("db_config(ENABLE_LOAD_EXTENSION, %d): rc=%d now %d\n", onoff, rc, v);
  return v;
}

/* ---- automatic extensions, in this program ---- */

static int auto_calls;
static void auto_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_int(c, auto_calls);
}
static int auto_ok(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  auto_calls++;
  return api->create_function(db, "auto_fn", 0, SQLITE_UTF8, NULL, auto_fn, NULL, NULL);
}
static int auto_fail(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  *err = api->mprintf("refused %s", "here");
  return SQLITE_ERROR;
}

static void open_auto(const char *label) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open(":memory:", &db);
  printf("open (%s): rc=%d errmsg=%s calls=%d\n", label, rc, sqlite3_errmsg(db), auto_calls);
  if (rc == SQLITE_OK) q(db, "SELECT auto_fn()");
  sqlite3_close(db);
}

int main(void) {
  find_dir();
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);

  /* the defaults: the C call allowed, the SQL function not */
  cfg(db, -1);
  qload(db, "libtestext", NULL);
  load(db, "libtestext", NULL); /* ".so" added, entry sqlite3_testext_init */
  q(db, "SELECT half(5), half(NULL), half('7'), typeof(half(2))");
  q(db, "SELECT ext_which()");
  q(db, "CREATE TABLE t(x, s TEXT); INSERT INTO t VALUES (1, 'b'), (2, 'a'), (3, 'c'), (4, 'ab')");
  q(db, "SELECT ext_sumsq(x), ext_sumsq(x) FILTER (WHERE x > 2) FROM t");
  q(db, "SELECT x, ext_wsum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t");
  q(db, "SELECT s FROM t ORDER BY s COLLATE ext_rev");
  q(db, "SELECT s FROM t WHERE s > 'ab' COLLATE ext_rev ORDER BY s");
  q(db, "SELECT * FROM ext_series(3, 6)");
  q(db, "SELECT value, start, stop FROM ext_series WHERE start = 8");
  q(db, "SELECT t.x, e.value FROM t, ext_series(t.x, t.x + 1) AS e ORDER BY 1, 2");
  q(db, "SELECT sum(value) FROM ext_series(1, 100)");
  q(db, "CREATE TABLE probe_t(a, b); INSERT INTO probe_t VALUES (2, 'two'), (1, 'one')");
  q(db, "SELECT ext_probe(), ext_probe(1.5)");
  q(db, "SELECT ext_abi()");

  /* failures of the C call: nothing on the connection's error */
  load(db, "nonexistent", NULL);
  load(db, "libtestext.so", "no_such_entry");
  load(db, "libtestext", "no_such_entry");
  load(db, "libtestext.so", "testext_fail_init");
  load(db, "libtestext.so", "testext_nomsg_init");
  load(db, "testext_dflt", NULL); /* sqlite3_extension_init first */
  q(db, "SELECT ext_which()");
  load(db, "libtestext.so", "testext_perm_init");
  q(db, "SELECT ext_perm()");

  /* the C call switched off alone, and back */
  cfg(db, 0);
  load(db, "libtestext.so", NULL);
  qload(db, "libtestext.so", NULL);
  cfg(db, 1);

  /* both on: the SQL function works, its failures are statement errors */
  EXPECT_INT(sqlite3_enable_load_extension(db, 1), SQLITE_OK);
  cfg(db, -1);
  qload(db, "libtestext.so", NULL);
  qload(db, "libtestext.so", "testext_perm_init");
  qload(db, "nonexistent.so", NULL);
  qload(db, "libtestext.so", "no_such_entry");
  qload(db, "libtestext.so", "testext_fail_init");
  q(db, "SELECT load_extension(NULL), load_extension(NULL, 'x')");
  q(db, "CREATE VIEW v AS SELECT load_extension('x')");
  q(db, "SELECT * FROM v");
  EXPECT_INT(sqlite3_enable_load_extension(db, 0), SQLITE_OK);
  cfg(db, -1);
  qload(db, "libtestext.so", NULL);
  load(db, "libtestext.so", NULL);
  q(db, "SELECT half(9), ext_perm()"); /* what was loaded stays */
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);

  /* the VFS's shared-library calls */
  sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
  char path[PATH_MAX + 32], msg[512] = "(none)";
  snprintf(path, sizeof path, "%s/libtestext.so", g_dir);
  void *lib = vfs->xDlOpen(vfs, path);
  printf("xDlOpen: %s\n", lib ? "ok" : "NULL");
  printf("xDlSym(sqlite3_testext_init): %s\n",
         lib && vfs->xDlSym(vfs, lib, "sqlite3_testext_init") ? "found" : "NULL");
  printf("xDlSym(nope): %s\n", lib && vfs->xDlSym(vfs, lib, "nope") ? "found" : "NULL");
  vfs->xDlError(vfs, (int)sizeof msg, msg);
  printf("xDlError: ");
  pz(msg);
  printf("\n");
  if (lib) vfs->xDlClose(vfs, lib);
  snprintf(path, sizeof path, "%s/nonexistent.so", g_dir);
  printf("xDlOpen(nonexistent): %s\n", vfs->xDlOpen(vfs, path) ? "ok" : "NULL");
  vfs->xDlError(vfs, 40, msg); /* cut to 39 bytes */
  printf("xDlError(40): ");
  pz(msg);
  printf("\n");

  /* automatic extensions */
  EXPECT_INT(sqlite3_auto_extension((void (*)(void))auto_ok), SQLITE_OK);
  EXPECT_INT(sqlite3_auto_extension((void (*)(void))auto_ok), SQLITE_OK); /* once */
  open_auto("auto_ok");
  EXPECT_INT(sqlite3_auto_extension((void (*)(void))auto_fail), SQLITE_OK);
  open_auto("auto_ok, auto_fail");
  printf("cancel: %d\n", sqlite3_cancel_auto_extension((void (*)(void))auto_fail));
  printf("cancel again: %d\n", sqlite3_cancel_auto_extension((void (*)(void))auto_fail));
  open_auto("auto_ok again");
  sqlite3_reset_auto_extension();
  open_auto("after reset");
  printf("cancel after reset: %d\n", sqlite3_cancel_auto_extension((void (*)(void))auto_ok));
  return prog_done();
}
