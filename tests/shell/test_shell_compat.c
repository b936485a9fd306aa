/*
 * test_shell_compat.c -- build/shale against the reference sqlite3 shell
 * (/usr/bin/sqlite3 3.40.1), script by script.
 *
 * Every tests/shell/cases/NAME.sql is fed on stdin to both shells, each in
 * a scratch directory holding a copy of tests/shell/data/ (setup.sql makes a
 * table of tricky values: NULL, reals, blobs, unicode, quotes, commas,
 * newlines, tabs). stdout, stderr and the exit code must be identical,
 * except the numbers of "Run Time:" lines (.timer); then both run again
 * with stderr into stdout, and the merged text must be identical too. Directives in the
 * script's leading comment lines:
 *   -- args: ARG...      command-line arguments ('quoted' ones may hold spaces)
 *   -- files: F...       files the script writes: compared too
 *   -- setup: SQL        run into test.db (reference SQLite) before the shells
 * Each case is one TEST below; shell_cases_all_listed checks that no script
 * in cases/ is left out.
 *
 * Invariants:
 *  1. Both programs get the same argv (argv[0] "sqlite3"), environment,
 *     stdin and starting files.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test.h"
#include "shell_run.h"

#define REF_SHELL "/usr/bin/sqlite3"

static void diff_report(const char *name, const char *what, const char *a, const char *b) {
  size_t k = 0, line = 1;
  while (a[k] && a[k] == b[k]) {
    if (a[k] == '\n') line++;
    k++;
  }
  size_t s = k;
  while (s > 0 && a[s - 1] != '\n') s--;
  test_fail(__FILE__, __LINE__,
            "%s: %s differs at line %zu:\n    shale:   \"%.120s\"\n    sqlite3: \"%.120s\"", name,
            what, line, a + s, b + s);
}

static void run_case(const char *name) {
  ShellCase c;
  if (!shell_case_load(name, &c)) {
    test_fail(__FILE__, __LINE__, "cannot read %s", c.path);
    return;
  }
  const char *path = c.path, *setup = c.setup;
  char *files_buf = c.files;
  char *argv[64];
  int nargs = shell_split_args(c.args, argv, 64);
  ShellRun a, b;
  char tag[300];
  snprintf(tag, sizeof tag, "%s-shale", name);
  shell_run(&a, shell_binary(), tag, argv, nargs, path, setup[0] ? setup : NULL);
  snprintf(tag, sizeof tag, "%s-sqlite3", name);
  shell_run(&b, REF_SHELL, tag, argv, nargs, path, setup[0] ? setup : NULL);
  shell_normalize(a.out);
  shell_normalize(b.out);
  if (strcmp(a.out, b.out) != 0) diff_report(name, "stdout", a.out, b.out);
  if (strcmp(a.err, b.err) != 0) diff_report(name, "stderr", a.err, b.err);
  if (a.code != b.code)
    test_fail(__FILE__, __LINE__, "%s: exit code %d, sqlite3 %d", name, a.code, b.code);
  char *files[32];
  int nfiles = shell_split_args(files_buf, files, 32);
  for (int i = 0; i < nfiles; i++) {
    char pa[PATH_MAX + 300], pb[PATH_MAX + 300];
    snprintf(pa, sizeof pa, "%s/%s", a.dir, files[i]);
    snprintf(pb, sizeof pb, "%s/%s", b.dir, files[i]);
    size_t na = 0, nb = 0;
    char *fa = shell_read_file(pa, &na), *fb = shell_read_file(pb, &nb);
    if (!fa || !fb)
      test_fail(__FILE__, __LINE__, "%s: file %s missing (shale %s, sqlite3 %s)", name, files[i],
                fa ? "yes" : "no", fb ? "yes" : "no");
    else if (na != nb || memcmp(fa, fb, na) != 0)
      diff_report(name, files[i], fa, fb);
    free(fa);
    free(fb);
  }
  /* stdout and stderr into one file: the same interleaving (sqlite3 flushes
   * stdout before it reads each input line, not before an error); only
   * worth a second run when something went to stderr */
  if (a.err[0] && strcmp(a.out, b.out) == 0 && strcmp(a.err, b.err) == 0) {
    ShellRun ma, mb;
    snprintf(tag, sizeof tag, "%s-shale-2", name);
    shell_run_merged(&ma, shell_binary(), tag, argv, nargs, path, setup[0] ? setup : NULL);
    snprintf(tag, sizeof tag, "%s-sqlite3-2", name);
    shell_run_merged(&mb, REF_SHELL, tag, argv, nargs, path, setup[0] ? setup : NULL);
    shell_normalize(ma.out);
    shell_normalize(mb.out);
    if (strcmp(ma.out, mb.out) != 0) diff_report(name, "stdout+stderr", ma.out, mb.out);
    shell_run_free(&ma);
    shell_run_free(&mb);
  }
  shell_run_free(&a);
  shell_run_free(&b);
}

#define CASE(name) \
  TEST(shell_##name) { run_case(#name); }
#include "cases.def"
#undef CASE

/* Every script in cases/ has its line in cases.def. */
TEST(shell_cases_all_listed) {
  static const char *const listed[] = {
#define CASE(name) #name,
#include "cases.def"
#undef CASE
      NULL};
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/shell/cases", shell_repo());
  DIR *d = opendir(path);
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    size_t k = strlen(e->d_name);
    if (k < 5 || strcmp(e->d_name + k - 4, ".sql") != 0) continue;
    n++;
    int found = 0;
    for (int i = 0; listed[i]; i++)
      if (strlen(listed[i]) == k - 4 && strncmp(listed[i], e->d_name, k - 4) == 0) found = 1;
    if (!found) test_fail(__FILE__, __LINE__, "cases/%s is not in cases.def", e->d_name);
  }
  closedir(d);
  CHECK(n >= 10);
}
