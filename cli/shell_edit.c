/*
 * shell_edit.c -- how the shell reads its input lines: on a terminal through
 * libedit (line editing, history recall, the prompt), else with getline from
 * the input stream. History lives in ~/.shale_history ($HOME respected),
 * loaded when an interactive session starts and saved when it ends.
 *
 * Built with -DSHELL_EDITLINE when libedit's <editline/readline.h> is there
 * (the Makefile checks; cli/deps.sh installs libedit-dev); without it an
 * interactive session prints the prompt itself and reads with getline.
 * Non-interactive input never goes through libedit, so the output of a
 * script is the same either way.
 *
 * Invariants:
 *  1. edit_readline returns the line without its "\n" (or "\r\n") in
 *     shale_malloc memory, NULL at the end of input.
 *  2. Only interactive, non-blank lines enter the history.
 */
#include <stdlib.h>
#include <string.h>

#include "shell.h"

#ifdef SHELL_EDITLINE
#include <editline/readline.h>
#endif

static char history_path[4096];

void edit_init(int interactive) {
  const char *home = getenv("HOME");
  if (!interactive || !home) return;
  snprintf(history_path, sizeof history_path, "%s/.shale_history", home);
#ifdef SHELL_EDITLINE
  using_history();
  stifle_history(2000);
  read_history(history_path);
#endif
}

void edit_add_history(const char *line) {
#ifdef SHELL_EDITLINE
  if (line && *line) add_history(line);
#else
  (void)line;
#endif
}

void edit_done(void) {
#ifdef SHELL_EDITLINE
  if (history_path[0]) write_history(history_path);
#endif
}

static char *copy_line(const char *z, size_t n) {
  while (n > 0 && z[n - 1] == '\n') {
    n--;
    if (n > 0 && z[n - 1] == '\r') n--;
    break;
  }
  char *r = shale_malloc(n + 1);
  if (!r) return NULL;
  memcpy(r, z, n);
  r[n] = 0;
  return r;
}

char *edit_readline(FILE *in, const char *prompt, int interactive) {
  if (interactive && in == stdin) {
#ifdef SHELL_EDITLINE
    fflush(stdout);
    char *z = readline(prompt);
    if (!z) return NULL;
    char *r = copy_line(z, strlen(z));
    free(z);
    edit_add_history(r);
    return r;
#else
    fputs(prompt, stdout);
    fflush(stdout);
#endif
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, in);
  if (n < 0) {
    free(line);
    return NULL;
  }
  char *r = copy_line(line, (size_t)n);
  free(line);
  return r;
}
