/*
 * shell_run.c -- child-process runner for the shell tests (shell_run.h).
 *
 * Invariants:
 *  1. The child's stdout/stderr go to files in its directory (.stdout,
 *     .stderr), read back after it exits: no pipe can fill and block.
 *  2. A child that runs longer than 20 s is killed (SIGKILL via alarm in
 *     the child's own process group is not needed: the child execs with an
 *     alarm pending, which ends it).
 */
#include "shell_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"

static char repo[PATH_MAX], shell[PATH_MAX];

const char *shell_repo(void) {
  if (!repo[0]) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
      snprintf(repo, sizeof repo, ".");
      return repo;
    }
    exe[n] = 0;
    for (int i = 0; i < 3; i++) { /* <repo>/<build>/tests/test_x */
      char *s = strrchr(exe, '/');
      if (s) *s = 0;
    }
    snprintf(repo, sizeof repo, "%s", exe);
  }
  return repo;
}

const char *shell_binary(void) {
  if (!shell[0]) {
    char exe[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "build/shale";
    exe[n] = 0;
    for (int i = 0; i < 2; i++) {
      char *s = strrchr(exe, '/');
      if (s) *s = 0;
    }
    snprintf(shell, sizeof shell, "%s/shale", exe);
  }
  return shell;
}

char *shell_read_file(const char *path, size_t *np) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0, k;
  char *z = malloc(cap);
  while ((k = fread(z + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (cap - n < 1024) z = realloc(z, cap *= 2);
  }
  z[n] = 0;
  fclose(f);
  if (np) *np = n;
  return z;
}

static void copy_file(const char *from, const char *to) {
  size_t n;
  char *z = shell_read_file(from, &n);
  if (!z) return;
  FILE *f = fopen(to, "wb");
  if (f) {
    fwrite(z, 1, n, f);
    fclose(f);
  }
  free(z);
}

static void run(ShellRun *r, const char *prog, const char *tag, char **args, int nargs,
                const char *input, const char *setup_sql, int merged) {
  memset(r, 0, sizeof *r);
  snprintf(r->dir, sizeof r->dir, "%s", test_path(tag));
  char cmd[PATH_MAX + 20];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
  if (system(cmd) != 0) test_fail(__FILE__, __LINE__, "cannot clear %s", r->dir);
  mkdir(r->dir, 0755);
  char data[PATH_MAX];
  snprintf(data, sizeof data, "%s/tests/shell/data", shell_repo());
  DIR *d = opendir(data);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char from[PATH_MAX + 300], to[PATH_MAX + 300];
      snprintf(from, sizeof from, "%s/%s", data, e->d_name);
      snprintf(to, sizeof to, "%s/%s", r->dir, e->d_name);
      copy_file(from, to);
    }
    closedir(d);
  }
  if (setup_sql) {
    char db[PATH_MAX + 20];
    snprintf(db, sizeof db, "%s/test.db", r->dir);
    sqlite3 *h;
    char *err = NULL;
    sqlite3_open(db, &h);
    if (sqlite3_exec(h, setup_sql, NULL, NULL, &err) != SQLITE_OK)
      test_fail(__FILE__, __LINE__, "setup: %s", err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(h);
  }
  char outp[PATH_MAX + 20], errp[PATH_MAX + 20];
  snprintf(outp, sizeof outp, "%s/.stdout", r->dir);
  snprintf(errp, sizeof errp, "%s/.stderr", r->dir);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(r->dir) != 0) _exit(126);
    setenv("HOME", r->dir, 1);
    int in = open(input ? input : "/dev/null", O_RDONLY);
    int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int er = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || er < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(merged ? out : er, 2);
    char *argv[80];
    int n = 0;
    argv[n++] = (char *)"sqlite3";
    for (int i = 0; i < nargs && n < 78; i++) argv[n++] = args[i];
    argv[n] = NULL;
    alarm(20);
    execv(prog, argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r->out = shell_read_file(outp, NULL);
  r->err = shell_read_file(errp, NULL);
  if (!r->out) r->out = calloc(1, 1);
  if (!r->err) r->err = calloc(1, 1);
}

void shell_run(ShellRun *r, const char *prog, const char *tag, char **args, int nargs,
               const char *input, const char *setup_sql) {
  run(r, prog, tag, args, nargs, input, setup_sql, 0);
}

void shell_run_merged(ShellRun *r, const char *prog, const char *tag, char **args, int nargs,
                      const char *input, const char *setup_sql) {
  run(r, prog, tag, args, nargs, input, setup_sql, 1);
}

void shell_run_free(ShellRun *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

void shell_normalize(char *z) {
  char *p = z;
  while ((p = strstr(p, "Run Time: real ")) != NULL) {
    char *e = strchr(p, '\n');
    if (!e) e = p + strlen(p);
    const char *shape = "Run Time: real N user N sys N";
    size_t k = strlen(shape);
    if ((size_t)(e - p) >= k) {
      memcpy(p, shape, k);
      memmove(p + k, e, strlen(e) + 1);
    }
    p += k;
  }
}

int shell_split_args(char *z, char **argv, int max) {
  int n = 0;
  while (*z && n < max) {
    while (*z == ' ') z++;
    if (!*z) break;
    if (*z == '\'') {
      argv[n++] = ++z;
      while (*z && *z != '\'') z++;
    } else {
      argv[n++] = z;
      while (*z && *z != ' ') z++;
    }
    if (*z) *z++ = 0;
  }
  return n;
}

int shell_case_load(const char *name, ShellCase *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s/tests/shell/cases/%s.sql", shell_repo(), name);
  char *script = shell_read_file(c->path, NULL);
  if (!script) return 0;
  for (char *l = script; strncmp(l, "-- ", 3) == 0;) {
    char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    if (strncmp(l, "-- args: ", 9) == 0 && n - 9 < sizeof c->args)
      memcpy(c->args, l + 9, n - 9);
    else if (strncmp(l, "-- files: ", 10) == 0 && n - 10 < sizeof c->files)
      memcpy(c->files, l + 10, n - 10);
    else if (strncmp(l, "-- setup: ", 10) == 0 && n - 10 < sizeof c->setup)
      memcpy(c->setup, l + 10, n - 10);
    if (!e) break;
    l = e + 1;
  }
  free(script);
  return 1;
}
