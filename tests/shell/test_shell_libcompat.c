/*
 * test_shell_libcompat.c -- Debian's own sqlite3 shell (/usr/bin/sqlite3)
 * running on Shale's libsqlite3.so.0 (LD_LIBRARY_PATH=<build>/compat)
 * against the same shell on the reference library, script by script.
 *
 * The scripts are tests/shell/cases/NAME.sql (dot-commands, .dump, .import,
 * every output mode, errors, options), with the same directives as
 * test_shell_compat.c. stdout, stderr and the exit code must be identical
 * (the numbers of "Run Time:" lines aside); the files a script writes too.
 * A case that differs because of a known gap of the library is listed in
 * kKnown with its reason (docs/compat.md) and must still differ -- so the
 * list shrinks when the gap closes.
 *
 * Invariants:
 *  1. The two runs differ only in LD_LIBRARY_PATH: same binary, argv,
 *     stdin, starting files and environment otherwise.
 *  2. The run on Shale really loads Shale (sqlite3_sourceid() through the
 *     shell's .version carries "shale").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test.h"
#include "shell_run.h"

#define REF_SHELL "/usr/bin/sqlite3"

static char g_lib[PATH_MAX + 16];

static const char *libdir(void) {
  if (!g_lib[0]) {
    snprintf(g_lib, sizeof g_lib, "%s", shell_binary()); /* <build>/shale */
    char *s = strrchr(g_lib, '/');
    if (s) strcpy(s, "/compat");
  }
  return g_lib;
}

#if defined(__SANITIZE_ADDRESS__)
/* Under ASan the library needs the sanitizer runtimes loaded first, which the
 * uninstrumented shell does not link: they are preloaded (leak checks off:
 * the shell's own allocations are not ours to judge). */
static void preload_sanitizers(void) {
  static char pre[2 * PATH_MAX + 2];
  if (!pre[0]) {
    const char *libs[] = {"libasan.so", "libubsan.so"};
    for (int i = 0; i < 2; i++) {
      char cmd[64], out[PATH_MAX] = "";
      snprintf(cmd, sizeof cmd, "cc -print-file-name=%s", libs[i]);
      FILE *f = popen(cmd, "r");
      if (f && fgets(out, sizeof out, f)) out[strcspn(out, "\n")] = 0;
      if (f) pclose(f);
      snprintf(pre + strlen(pre), sizeof pre - strlen(pre), "%s%s", i ? " " : "", out);
    }
  }
  setenv("LD_PRELOAD", pre, 1);
  setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
}
#endif

/* Run the reference shell on script `path`, on Shale's library when shale. */
static void run_one(ShellRun *r, const char *name, int shale, const char *path, char **argv,
                    int nargs, const char *setup, int merged) {
  char tag[300];
  snprintf(tag, sizeof tag, "lib-%s-%s%s", name, shale ? "shale" : "sqlite3", merged ? "-2" : "");
  if (shale) setenv("LD_LIBRARY_PATH", libdir(), 1);
#if defined(__SANITIZE_ADDRESS__)
  if (shale) preload_sanitizers();
#endif
  if (merged)
    shell_run_merged(r, REF_SHELL, tag, argv, nargs, path, setup);
  else
    shell_run(r, REF_SHELL, tag, argv, nargs, path, setup);
  unsetenv("LD_LIBRARY_PATH");
#if defined(__SANITIZE_ADDRESS__)
  unsetenv("LD_PRELOAD");
  unsetenv("ASAN_OPTIONS");
#endif
  shell_normalize(r->out);
}

/* 1 when the case's output on both libraries is the same. */
static int same_case(const char *name, int report) {
  ShellCase c;
  if (!shell_case_load(name, &c)) {
    test_fail(__FILE__, __LINE__, "cannot read %s", c.path);
    return 0;
  }
  const char *path = c.path, *setup = c.setup[0] ? c.setup : NULL;
  char *argv[64];
  int nargs = shell_split_args(c.args, argv, 64);
  ShellRun a, b;
  run_one(&a, name, 1, path, argv, nargs, setup, 0);
  run_one(&b, name, 0, path, argv, nargs, setup, 0);
  int same = !strcmp(a.out, b.out) && !strcmp(a.err, b.err) && a.code == b.code;
  if (!same && report)
    test_fail(__FILE__, __LINE__,
              "%s: differs on Shale's library\n--- shale (exit %d):\n%.1500s\n%.800s\n"
              "--- sqlite (exit %d):\n%.1500s\n%.800s",
              name, a.code, a.out, a.err, b.code, b.out, b.err);
  char *files[32];
  int nfiles = shell_split_args(c.files, files, 32);
  for (int i = 0; same && i < nfiles; i++) {
    char pa[PATH_MAX + 300], pb[PATH_MAX + 300];
    snprintf(pa, sizeof pa, "%s/%s", a.dir, files[i]);
    snprintf(pb, sizeof pb, "%s/%s", b.dir, files[i]);
    size_t na = 0, nb = 0;
    char *fa = shell_read_file(pa, &na), *fb = shell_read_file(pb, &nb);
    same = fa && fb && na == nb && !memcmp(fa, fb, na);
    if (!same && report) test_fail(__FILE__, __LINE__, "%s: file %s differs", name, files[i]);
    free(fa);
    free(fb);
  }
  if (same && a.err[0]) { /* the interleaving of stdout and stderr too */
    ShellRun ma, mb;
    run_one(&ma, name, 1, path, argv, nargs, setup, 1);
    run_one(&mb, name, 0, path, argv, nargs, setup, 1);
    same = !strcmp(ma.out, mb.out);
    if (!same && report)
      test_fail(__FILE__, __LINE__, "%s: merged output differs:\n%.1500s\n---\n%.1500s", name,
                ma.out, mb.out);
    shell_run_free(&ma);
    shell_run_free(&mb);
  }
  shell_run_free(&a);
  shell_run_free(&b);
  return same;
}

/* Cases that differ for a documented gap of the library (docs/compat.md). */
static const char *const kKnown[][2] = {
    {NULL, NULL},
};

static const char *known(const char *name) {
  for (int i = 0; kKnown[i][0]; i++)
    if (!strcmp(kKnown[i][0], name)) return kKnown[i][1];
  return NULL;
}

static void run_case(const char *name) {
  if (known(name)) {
    if (same_case(name, 0))
      test_fail(__FILE__, __LINE__, "%s now passes on Shale's library: drop it from kKnown", name);
    return;
  }
  same_case(name, 1);
}

#define CASE(name) \
  TEST(libcompat_##name) { run_case(#name); }
#include "cases.def"
#undef CASE

TEST(libcompat_loads_shale) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/shell/cases/quit.sql", shell_repo());
  char *argv[] = {"-version"};
  ShellRun r;
  run_one(&r, "version", 1, path, argv, 1, NULL, 0);
  CHECK(strstr(r.out, "shale") != NULL);
  CHECK(strncmp(r.out, "3.40.1 2022-12-28 14:03:47 df5c253c0b3dd24916e4ec7cf77d3db5294cc9fd", 67) ==
        0);
  CHECK_EQ(r.code, 0);
  shell_run_free(&r);
}
