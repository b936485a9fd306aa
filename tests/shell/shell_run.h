/*
 * shell_run.h -- running build/shale and the reference sqlite3 shell as
 * child processes for the shell tests (tests/shell/).
 *
 * Invariants:
 *  1. Each run happens in its own scratch directory (the cwd of the child,
 *     also its $HOME, so neither ~/.sqliterc nor ~/.shale_history leak in),
 *     with tests/shell/data/ copied into it.
 *  2. stdout and stderr are captured separately, plus the exit code; the
 *     merged variant captures both in one file, as "2>&1" would.
 */
#ifndef SHELL_RUN_H
#define SHELL_RUN_H

#include <limits.h>
#include <stddef.h>

typedef struct ShellRun {
  char *out, *err; /* malloc'ed, NUL-terminated */
  int code;        /* exit code, or 128+signal */
  char dir[PATH_MAX];
} ShellRun;

/* <repo> (the parent of the build directory this test binary runs from). */
const char *shell_repo(void);
/* <build>/shale */
const char *shell_binary(void);
/* Run prog (argv[0] is given as "sqlite3" for both programs, so messages that
 * name the program agree) with args in a fresh directory named tag, stdin
 * from the file input (NULL: /dev/null). setup_sql (may be NULL) is run
 * into test.db in that directory first, through the reference SQLite. */
void shell_run(ShellRun *r, const char *prog, const char *tag, char **args, int nargs,
               const char *input, const char *setup_sql);
/* The same with stderr sent to the stdout file (r->out holds both, in the
 * order the program wrote them: this checks when stdout is flushed). */
void shell_run_merged(ShellRun *r, const char *prog, const char *tag, char **args, int nargs,
                      const char *input, const char *setup_sql);
void shell_run_free(ShellRun *r);
/* Whole file into malloc'ed memory (NULL if it cannot be read). */
char *shell_read_file(const char *path, size_t *n);

/* "Run Time: real 0.001 user ..." lines with their numbers dropped (.timer). */
void shell_normalize(char *z);
/* Split z in place at spaces ('quoted' words may hold spaces); argv count. */
int shell_split_args(char *z, char **argv, int max);
/* tests/shell/cases/NAME.sql and the directives of its leading comment lines
 * (-- args:, -- files:, -- setup:). 0 if the script cannot be read. */
typedef struct ShellCase {
  char path[PATH_MAX];
  char args[2000], files[1000], setup[4000];
} ShellCase;
int shell_case_load(const char *name, ShellCase *c);

#endif
