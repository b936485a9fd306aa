/*
 * test_shell_sql.c -- SQL in build/shale: the same script through the shell
 * and through the reference sqlite3 shell (/usr/bin/sqlite3) gives the same
 * output (list mode, errors "Parse error near line N" / "Runtime error near
 * line N: ... (code)"), and dot-commands still work in between.
 *
 * Invariants:
 *  1. The shell is found next to this binary's build directory; the case is
 *     skipped (passes with a note) when /usr/bin/sqlite3 is missing.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../test.h"

static const char *shell_bin(void) {
  static char shell[PATH_MAX];
  char exe[PATH_MAX - 32];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "build/shale";
  exe[n] = 0;
  char *s = strrchr(exe, '/');
  if (s) *s = 0;
  s = strrchr(exe, '/');
  if (s) *s = 0;
  snprintf(shell, sizeof shell, "%s/shale", exe);
  return shell;
}

/* Output (stdout then stderr, each captured whole) of prog on input. */
static char *run(const char *prog, const char *db, const char *input) {
  char in[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
  snprintf(in, sizeof in, "%s", test_path("in.sql"));
  snprintf(out, sizeof out, "%s", test_path("out.txt"));
  snprintf(err, sizeof err, "%s", test_path("err.txt"));
  FILE *f = fopen(in, "w");
  fputs(input, f);
  fclose(f);
  char cmd[PATH_MAX * 5];
  snprintf(cmd, sizeof cmd, "%s '%s' < '%s' > '%s' 2> '%s'", prog, db, in, out, err);
  if (system(cmd) == -1) return strdup("");
  char *res = malloc(1 << 16);
  size_t n = 0;
  const char *files[2] = {out, err};
  for (int k = 0; k < 2; k++) {
    f = fopen(files[k], "r");
    if (!f) continue;
    n += fread(res + n, 1, (1 << 16) - 1 - n, f);
    fclose(f);
  }
  res[n] = 0;
  return res;
}

TEST(shell_sql_matches_sqlite3) {
  if (access("/usr/bin/sqlite3", X_OK) != 0) {
    printf("no /usr/bin/sqlite3: skipped\n");
    return;
  }
  const char *script =
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n"
      "INSERT INTO t VALUES(1, 'one', 1.5), (2, NULL, 2);\n"
      "SELECT a, b, c FROM t;\n"
      "SELECT a,\n  b\nFROM t WHERE a = 2;\n"
      "SELECT * FROM nosuch;\n"
      "INSERT INTO t VALUES(1, 'dup', 0);\n"
      "SELECT 1; SELECT 'x', NULL, 0.25;\n"
      "BEGIN; INSERT INTO t VALUES(3, 'three', 3); ROLLBACK;\n"
      "SELECT count(*) FROM t;\n"
      "PRAGMA user_version = 5;\n"
      "PRAGMA user_version;\n"
      "SELECT 'no semicolon at the end'\n";
  char *a = run(shell_bin(), test_path("shale.db"), script);
  char *b = run("/usr/bin/sqlite3", test_path("sqlite.db"), script);
  CHECK_STR(a, b);
  free(a);
  free(b);
  /* dot-commands between statements, inside a transaction */
  a = run(shell_bin(), test_path("shale2.db"),
          "CREATE TABLE u(x);\nBEGIN;\nINSERT INTO u VALUES(7);\n.count u\nCOMMIT;\n.rows u\n");
  CHECK_STR(a, "1\n7\n");
  free(a);
}
