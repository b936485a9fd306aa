/*
 * test_compat.c -- build/compat/libsqlite3.so.0 in use: ordinary SQLite
 * programs (tests/compat/progs/, built against the system <sqlite3.h> and
 * -lsqlite3) run with LD_LIBRARY_PATH=BUILD/compat so the dynamic linker
 * loads Shale's library instead of SQLite's; each must exit 0.
 *
 * Also: the swap really happens (sqlite3_sourceid() and ldd name Shale's
 * library), the portable programs pass on the reference library too (the
 * oracle for what they expect), the library exports only sqlite3_* names
 * and every function issue 4 lists, a program links statically against
 * libsqlite3.a, a connection shared by threads (threads.c), the library
 * unloaded after WAL use (dlclose.c, also for libshale.so), and Python's
 * sqlite3 module runs on Shale
 * (tests/compat/python_check.py; skipped under ASan, which cannot be
 * loaded into an uninstrumented python3).
 *
 * Invariants:
 *  1. BUILD is found from this binary's path (BUILD/tests/test_compat), so
 *     the same source serves build/ and build-asan/.
 *  2. A child that cannot start, crashes or exits non-zero fails the case
 *     and its output is printed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"

static char g_build[1024]; /* absolute BUILD directory */
static char g_root[1024];  /* repository root */

static void find_dirs(void) {
  if (g_build[0]) return;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  for (int k = 0; k < 2; k++) { /* strip /test_compat, then /tests */
    char *s = strrchr(exe, '/');
    if (s) *s = 0;
  }
  snprintf(g_build, sizeof g_build, "%.1000s", exe);
  char *s = strrchr(exe, '/');
  if (s) *s = 0;
  snprintf(g_root, sizeof g_root, "%.1000s", exe);
}

/* Run a shell command (with LD_LIBRARY_PATH=BUILD/compat when shale), output
 * into out (truncated). Returns the exit status, or -1 if it did not exit. */
static int run(const char *cmd, int shale, char *out, size_t cap) {
  find_dirs();
  char full[8192];
  if (shale)
    snprintf(full, sizeof full, "cd '%s' && LD_LIBRARY_PATH='%s/compat' %s 2>&1", g_root, g_build,
             cmd);
  else
    snprintf(full, sizeof full, "cd '%s' && env -u LD_LIBRARY_PATH %s 2>&1", g_root, cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t len = 0;
  out[0] = 0;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) {
    if (len + 1 < cap) {
      size_t m = k < cap - 1 - len ? k : cap - 1 - len;
      memcpy(out + len, buf, m);
      len += m;
      out[len] = 0;
    }
  }
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void run_prog(const char *name, int shale) {
  char cmd[PATH_MAX + 64], out[65536];
  snprintf(cmd, sizeof cmd, "'%s/compat/progs/%s'", g_build, name);
  find_dirs();
  snprintf(cmd, sizeof cmd, "'%s/compat/progs/%s'", g_build, name);
  int rc = run(cmd, shale, out, sizeof out);
  if (rc != 0) {
    fprintf(stderr, "--- %s on %s (exit %d):\n%s\n", name, shale ? "Shale" : "SQLite", rc, out);
    test_fail(__FILE__, __LINE__, "%s failed on %s", name, shale ? "Shale" : "SQLite");
  }
}

/* A program whose output is its result: both libraries must run it to exit
 * 0 and print the same thing (the reference's output is the oracle). */
static void run_same(const char *name) {
  static char a[1 << 18], b[1 << 18];
  char cmd[PATH_MAX + 64];
  find_dirs();
  snprintf(cmd, sizeof cmd, "'%s/compat/progs/%s'", g_build, name);
  int ra = run(cmd, 1, a, sizeof a), rb = run(cmd, 0, b, sizeof b);
  if (ra != 0 || rb != 0)
    test_fail(__FILE__, __LINE__, "%s: exit %d on Shale, %d on SQLite\n%.3000s\n---\n%.3000s", name,
              ra, rb, a, b);
  if (strcmp(a, b)) {
    size_t k = 0, line = 1;
    while (a[k] && a[k] == b[k]) line += a[k++] == '\n';
    size_t s0 = k;
    while (s0 > 0 && a[s0 - 1] != '\n') s0--;
    test_fail(__FILE__, __LINE__,
              "%s: output differs at line %zu:\n  shale:  %.300s\n  sqlite: %.300s", name, line,
              a + s0, b + s0);
  }
}

TEST(compat_swap_loads_shale) {
  char out[4096];
  find_dirs();
  char cmd[PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "'%s/compat/progs/which'", g_build);
  CHECK_EQ(run(cmd, 1, out, sizeof out), 0);
  CHECK(strstr(out, "shale") != NULL);
  CHECK(strstr(out, "3040001") != NULL);
  CHECK_EQ(run(cmd, 0, out, sizeof out), 0);
  CHECK(strstr(out, "shale") == NULL); /* the reference answers without the path */
  snprintf(cmd, sizeof cmd, "ldd '%s/compat/progs/which'", g_build);
  CHECK_EQ(run(cmd, 1, out, sizeof out), 0);
  char want[PATH_MAX + 32];
  snprintf(want, sizeof want, "%s/compat/libsqlite3.so.0", g_build);
  CHECK(strstr(out, want) != NULL);
}

/* The session extension's names, which Debian's library exports too. */
static int public_extension(const char *name) {
  static const char *const prefix[] = {"sqlite3session_", "sqlite3changeset_",
                                       "sqlite3changegroup_", "sqlite3rebaser_"};
  for (int i = 0; i < 4; i++)
    if (!strncmp(name, prefix[i], strlen(prefix[i]))) return 1;
  return 0;
}

/* Every public name Debian's libsqlite3.so.0 exports is exported by ours
 * (so that any program linked against it, /usr/bin/sqlite3 included, loads). */
TEST(compat_exports_every_public_name_of_debian_library) {
  static char ref[1 << 17], ours[1 << 17];
  char cmd[PATH_MAX + 128];
  find_dirs();
  snprintf(cmd, sizeof cmd,
           "nm -D --defined-only /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 | awk '{print $3}'");
  CHECK_EQ(run(cmd, 0, ref, sizeof ref), 0);
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/compat/libsqlite3.so.0' | awk '{print $3}'",
           g_build);
  CHECK_EQ(run(cmd, 0, ours, sizeof ours), 0);
  int n = 0;
  for (char *line = strtok(ref, "\n"); line; line = strtok(NULL, "\n")) {
    if (strncmp(line, "sqlite3_", 8) && !public_extension(line)) continue; /* internals */
    n++;
    char want[256];
    snprintf(want, sizeof want, "\n%.250s\n", line);
    char *hay = ours; /* lines of ours, searched with newlines on both sides */
    int found = !strncmp(hay, want + 1, strlen(want) - 1) || strstr(hay, want) != NULL;
    if (!found) test_fail(__FILE__, __LINE__, "missing export %s", line);
  }
  CHECK(n > 300);
}

/* The declarations of include/sqlite3session.h and of the preupdate hook
 * in include/sqlite3.h agree with the system header's (compiled with the
 * options Debian's library has): pasted after it, a conflict is an error. */
TEST(compat_session_header_agrees_with_reference) {
  char cmd[3 * PATH_MAX], out[65536];
  find_dirs();
  snprintf(cmd, sizeof cmd,
           "printf '#define SQLITE_ENABLE_SESSION 1\\n#define SQLITE_ENABLE_PREUPDATE_HOOK 1\\n"
           "#include <sqlite3.h>\\n' > '%s/compat/sess_check.c' && "
           "awk '/^SQLITE_API/{p=1} p{print} /;/{p=0}' include/sqlite3session.h >> "
           "'%s/compat/sess_check.c' && "
           "awk '/^SQLITE_API.*(preupdate|rtree|value_encoding|collation_needed16|_filename)/{p=1} "
           "p{print} /;/{p=0}' include/sqlite3.h >> '%s/compat/sess_check.c' && "
           "cc -std=c11 -Wall -Werror -fsyntax-only '%s/compat/sess_check.c'",
           g_build, g_build, g_build, g_build);
  int rc = run(cmd, 0, out, sizeof out);
  if (rc) fprintf(stderr, "%s\n", out);
  CHECK_EQ(rc, 0);
}

/* Debian's own shell loads the test extension (.load, load_extension())
 * through our library as through SQLite's: the same output. */
TEST(compat_shell_load_extension) {
  static char a[1 << 16], b[1 << 16];
  char cmd[4 * PATH_MAX];
  find_dirs();
  if (access("/usr/bin/sqlite3", X_OK) != 0) return; /* no shell installed */
  snprintf(cmd, sizeof cmd,
           "printf '.load %s/compat/ext/libtestext\\nSELECT half(3), ext_which();\\n"
           "SELECT value FROM ext_series(1, 3);\\n.load %s/compat/ext/libtestext "
           "testext_fail_init\\n.load %s/compat/ext/nonexistent\\n"
           "SELECT load_extension(\\047%s/compat/ext/libtestext\\047, "
           "\\047testext_perm_init\\047);\\nSELECT ext_perm();\\n' | /usr/bin/sqlite3 :memory:",
           g_build, g_build, g_build, g_build);
  int ra = run(cmd, 1, a, sizeof a), rb = run(cmd, 0, b, sizeof b);
  CHECK_EQ(ra, rb);
  CHECK(strstr(b, "1.5|derived") != NULL);
  if (strcmp(a, b)) test_fail(__FILE__, __LINE__, "shell output differs:\n%s\n---\n%s", a, b);
}

TEST(compat_exports_only_sqlite3_names) {
  char cmd[PATH_MAX + 64];
  static char out[1 << 16];
  find_dirs();
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/compat/libsqlite3.so.0'", g_build);
  CHECK_EQ(run(cmd, 0, out, sizeof out), 0);
  int n = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    char *name = strrchr(line, ' ');
    name = name ? name + 1 : line;
    if (strncmp(name, "sqlite3_", 8) && strncmp(name, "SQLITE", 6) && !public_extension(name)) {
      test_fail(__FILE__, __LINE__, "unexpected export %s", name);
      break;
    }
    n++;
  }
  CHECK(n > 150);
}

/* Every function issue 4 names is exported (Shale-only program: dlsym). */
TEST(compat_issue4_functions_exported) { run_prog("exports", 1); }

TEST(compat_preupdate_same) { run_same("preupdate"); }
TEST(compat_session_record_same) { run_same("session"); }
TEST(compat_session_apply_same) { run_same("session_apply"); }
TEST(compat_session_group_same) { run_same("session_group"); }
TEST(compat_session_diff_same) { run_same("session_diff"); }
/* Debian's mod_spatialite (tests/deps.sh installs it) loaded with
 * sqlite3_load_extension: spatial metadata, a geometry column, its R-Tree
 * index and its triggers, ST_Area / ST_Intersects, as on the reference. */
TEST(compat_mod_spatialite_same) { run_same("spatialite"); }
TEST(compat_rebase_same) { run_same("rebase"); }
TEST(compat_utf16_same) { run_same("utf16"); }
TEST(compat_uri_same) { run_same("uri"); }
TEST(compat_vfs_shim_same) { run_same("vfs_shim"); }
TEST(compat_errcode_step_same) { run_same("errcode_step"); }
TEST(compat_mutex_app_same) { run_same("mutex_app"); }

/* A changeset recorded by one library is applied by the other: all four
 * pairings print the same (session_xlib.c). */
TEST(compat_session_across_libraries) {
  static char out[4][1 << 16];
  char dir[] = "/tmp/compat-xlib-XXXXXX", cmd[PATH_MAX + 128], rec[64];
  CHECK(mkdtemp(dir) != NULL);
  find_dirs();
  for (int k = 0; k < 4; k++) {
    int recorder = k >> 1, applier = k & 1; /* 1: Shale */
    snprintf(cmd, sizeof cmd, "'%s/compat/progs/session_xlib' record %s", g_build, dir);
    CHECK_EQ(run(cmd, recorder, rec, sizeof rec), 0);
    snprintf(cmd, sizeof cmd, "'%s/compat/progs/session_xlib' apply %s", g_build, dir);
    CHECK_EQ(run(cmd, applier, out[k], sizeof out[k]), 0);
    if (k && strcmp(out[k], out[0]))
      test_fail(__FILE__, __LINE__, "recorded by %s, applied by %s: differs from SQLite's\n%.2000s",
                recorder ? "Shale" : "SQLite", applier ? "Shale" : "SQLite", out[k]);
  }
  CHECK(strstr(out[0], "conflict") != NULL);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}
TEST(compat_uri_off_same) { run_same("uri_off"); }
TEST(compat_txn_state_same) { run_same("txn_state"); }
TEST(compat_dbswitch_same) { run_same("dbswitch"); }
TEST(compat_nockpt_same) { run_same("nockpt"); }
TEST(compat_vtab_same) { run_same("vtab"); }
TEST(compat_loadext_same) { run_same("loadext"); }
TEST(compat_vtab_more_same) { run_same("vtab_more"); }
TEST(compat_vtab_ext_same) { run_same("vtab_ext"); }
TEST(compat_dbconfig_opts_same) { run_same("dbconfig_opts"); }
TEST(compat_pointers_same) { run_same("pointers"); }
TEST(compat_fts5_api_same) { run_same("fts5_api"); }
TEST(compat_cacheflush_same) { run_same("cacheflush"); }
TEST(compat_pcache_same) { run_same("pcache"); }
TEST(compat_stmtvtab_same) { run_same("stmtvtab"); }
TEST(compat_config_same) { run_same("config"); }
TEST(compat_colnames_same) { run_same("colnames"); }
/* Debian's library has no snapshots (no SQLITE_ENABLE_SNAPSHOT): Shale only,
 * against SQLite's documented rules, with the real SQLite writing the file. */
TEST(compat_snapshot_shale) { run_prog("snapshot", 1); }
TEST(compat_autovac_pages_same) { run_same("autovac_pages"); }
TEST(compat_basic_shale) { run_prog("basic", 1); }
TEST(compat_basic_sqlite) { run_prog("basic", 0); }
TEST(compat_errors_shale) { run_prog("errors", 1); }
TEST(compat_errors_sqlite) { run_prog("errors", 0); }
TEST(compat_txn_shale) { run_prog("txn", 1); }
TEST(compat_txn_sqlite) { run_prog("txn", 0); }
TEST(compat_exec_tail_shale) { run_prog("exec_tail", 1); }
TEST(compat_exec_tail_sqlite) { run_prog("exec_tail", 0); }
TEST(compat_util_shale) { run_prog("util", 1); }
TEST(compat_util_sqlite) { run_prog("util", 0); }
TEST(compat_extras_shale) { run_prog("extras", 1); }
TEST(compat_extras_sqlite) { run_prog("extras", 0); }
TEST(compat_dbconfig_shale) { run_prog("dbconfig", 1); }
TEST(compat_dbconfig_sqlite) { run_prog("dbconfig", 0); }
TEST(compat_udf_shale) { run_prog("udf", 1); }
TEST(compat_udf_sqlite) { run_prog("udf", 0); }
TEST(compat_udf_coll_shale) { run_prog("udf_coll", 1); }
TEST(compat_udf_coll_sqlite) { run_prog("udf_coll", 0); }
TEST(compat_udf_window_shale) { run_prog("udf_window", 1); }
TEST(compat_udf_window_sqlite) { run_prog("udf_window", 0); }
TEST(compat_misuse_shale) { run_prog("misuse", 1); }
TEST(compat_hooks_shale) { run_prog("hooks", 1); }
TEST(compat_hooks_sqlite) { run_prog("hooks", 0); }
TEST(compat_trace_shale) { run_prog("trace", 1); }
TEST(compat_trace_sqlite) { run_prog("trace", 0); }
TEST(compat_status_shale) { run_prog("status", 1); }
TEST(compat_status_sqlite) { run_prog("status", 0); }
TEST(compat_limits_shale) { run_prog("limits", 1); }
TEST(compat_limits_sqlite) { run_prog("limits", 0); }
TEST(compat_authorizer_shale) { run_prog("authorizer", 1); }
TEST(compat_authorizer_sqlite) { run_prog("authorizer", 0); }
TEST(compat_maindbname_shale) { run_prog("maindbname", 1); }
TEST(compat_maindbname_sqlite) { run_prog("maindbname", 0); }
TEST(compat_vtab_abort_shale) { run_prog("vtab_abort", 1); }
TEST(compat_vtab_abort_sqlite) { run_prog("vtab_abort", 0); }
TEST(compat_backup_shale) { run_prog("backup", 1); }
TEST(compat_backup_sqlite) { run_prog("backup", 0); }
TEST(compat_blob_shale) { run_prog("blob", 1); }
TEST(compat_blob_sqlite) { run_prog("blob", 0); }
TEST(compat_vfs_shale) { run_prog("vfs", 1); }
TEST(compat_vfs_sqlite) { run_prog("vfs", 0); }
TEST(compat_misuse_sqlite_shale) { run_prog("misuse_sqlite", 1); }
TEST(compat_misuse_sqlite_sqlite) { run_prog("misuse_sqlite", 0); }
TEST(compat_unsupported_shale) { run_prog("unsupported", 1); }
TEST(compat_threads_shale) { run_prog("threads", 1); }
TEST(compat_threads_sqlite) { run_prog("threads", 0); }

/* Unloading the library after WAL use (issue 19): each library, many rounds,
 * run several times (a leftover thread crashes the program). */
static void run_dlclose(const char *args, int shale) {
  char cmd[PATH_MAX * 2 + 64], out[65536];
  find_dirs();
  snprintf(cmd, sizeof cmd, "'%s/compat/progs/dlclose' %s", g_build, args);
  for (int i = 0; i < 3; i++) {
    int rc = run(cmd, shale, out, sizeof out);
    if (rc != 0) {
      fprintf(stderr, "--- %s (exit %d):\n%s\n", cmd, rc, out);
      test_fail(__FILE__, __LINE__, "dlclose %s failed", args);
      return;
    }
  }
}
TEST(compat_dlclose_shale) { run_dlclose("", 1); }
TEST(compat_dlclose_sqlite) { run_dlclose("", 0); }
TEST(compat_dlclose_libshale) {
  char args[PATH_MAX + 32];
  find_dirs();
  snprintf(args, sizeof args, "'%s/libshale.so' shale_", g_build);
  run_dlclose(args, 0);
}

#if !defined(__SANITIZE_ADDRESS__)
TEST(compat_static_library) {
  char cmd[3 * PATH_MAX], out[65536];
  find_dirs();
  snprintf(cmd, sizeof cmd,
           "cc -std=c11 -o '%s/compat/progs/basic-static' tests/compat/progs/basic.c "
           "'%s/compat/libsqlite3.a' -lm -pthread && '%s/compat/progs/basic-static'",
           g_build, g_build, g_build);
  int rc = run(cmd, 0, out, sizeof out);
  if (rc) fprintf(stderr, "%s\n", out);
  CHECK_EQ(rc, 0);
  snprintf(cmd, sizeof cmd, "nm '%s/compat/progs/basic-static'", g_build);
  static char syms[1 << 20];
  CHECK_EQ(run(cmd, 0, syms, sizeof syms), 0);
  CHECK(strstr(syms, "shale_step") != NULL); /* Shale's code, linked in */
}

TEST(compat_python_sqlite3_module) {
  char out[65536];
  int rc = run("python3 tests/compat/python_check.py", 1, out, sizeof out);
  if (rc) fprintf(stderr, "%s\n", out);
  CHECK_EQ(rc, 0);
  CHECK(strstr(out, "python on shale: ok") != NULL);
}
#endif
