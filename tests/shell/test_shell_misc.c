/*
 * test_shell_misc.c -- what the script-by-script comparison with sqlite3
 * (test_shell_compat.c) cannot check byte for byte:
 *   - an interactive session through a pseudo-terminal (pty_session.py):
 *     line editing, history recall, the continuation prompt;
 *   - .dump of a database written by Shale loads into the reference sqlite3
 *     and sqlite3's own .dump of the result is the same text;
 *   - .help, -version and .dbinfo, whose text must differ (version strings;
 *     Debian's sqlite3 has no sqlite_dbpage, so its .dbinfo fails);
 *   - a large .import (no progress bar when stderr is not a terminal);
 *   - gathering a statement of 40,000 lines in linear time.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include "shale.h"
#include "shell_run.h"

#define REF_SHELL "/usr/bin/sqlite3"

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    test_fail(__FILE__, __LINE__, "cannot write %s", path);
    return;
  }
  fputs(text, f);
  fclose(f);
}

TEST(shell_pty_session) {
  if (system("command -v python3 >/dev/null 2>&1") != 0) {
    printf("  (python3 missing: pty session skipped)\n");
    return;
  }
  char cmd[PATH_MAX * 2 + 64];
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/shell/pty_session.py' '%s' 2>&1", shell_repo(),
           shell_binary());
  FILE *p = popen(cmd, "r");
  char out[4096] = "";
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = 0;
  int st = p ? pclose(p) : -1;
  if (st != 0) test_fail(__FILE__, __LINE__, "pty session: %s", out);
}

/* Shale dumps, sqlite3 loads the dump and dumps again: the same text. */
TEST(shell_dump_loads_in_sqlite3) {
  const char *script =
      ".read setup.sql\n"
      "create table \"odd name\"(a integer primary key autoincrement, \"b c\" text, d default "
      "'x');\n"
      "insert into \"odd name\"(\"b c\") values('one'), ('two\nlines'), (null), ('cr\r');\n"
      "create table w(k primary key, v) without rowid;\n"
      "insert into w values('k1', 1.5), ('k2', x'0102'), ('k3', 1e-300), ('k4', -1e300);\n"
      "create index wi on w(v);\n"
      "create view wv as select * from w;\n"
      "create trigger wt after insert on w begin select 1; end;\n"
      ".output dump.sql\n"
      ".dump\n";
  const char *in = test_path("dump_script.sql");
  write_file(in, script);
  ShellRun a;
  shell_run(&a, shell_binary(), "dump-shale", NULL, 0, in, NULL);
  CHECK_EQ(a.code, 0);
  CHECK_STR(a.err, "");
  char dump[PATH_MAX + 20], reload[PATH_MAX + 20];
  snprintf(dump, sizeof dump, "%s/dump.sql", a.dir);
  snprintf(reload, sizeof reload, "%s/reload.sql", a.dir);
  write_file(reload, ".read dump.sql\n.output dump2.sql\n.dump\n");
  /* sqlite3 reads Shale's dump in the same directory */
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", a.dir);
  ShellRun b;
  memset(&b, 0, sizeof b);
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s < reload.sql > out.txt 2>&1", dir, REF_SHELL);
  CHECK_EQ(system(cmd), 0);
  size_t n1 = 0, n2 = 0;
  char *d1 = shell_read_file(dump, &n1);
  snprintf(dump, sizeof dump, "%s/dump2.sql", dir);
  char *d2 = shell_read_file(dump, &n2);
  CHECK(d1 && d2);
  if (d1 && d2) {
    CHECK(strstr(d1,
                 "INSERT INTO \"odd name\" VALUES(2,replace('two\\nlines','\\n',char(10)),'x');"));
    CHECK(strstr(d1, "INSERT INTO sqlite_sequence VALUES('odd name',4);"));
    if (n1 != n2 || memcmp(d1, d2, n1) != 0)
      test_fail(__FILE__, __LINE__, "dumps differ:\n%s\n---\n%s", d1, d2);
  }
  free(d1);
  free(d2);
  shell_run_free(&a);
}

TEST(shell_help_version_dbinfo) {
  const char *in = test_path("help.sql");
  write_file(in, ".help\n.help mode\n.help nosuch\n.dbinfo\n");
  ShellRun a;
  shell_run(&a, shell_binary(), "help-shale", NULL, 0, in, NULL);
  CHECK_EQ(a.code, 0);
  /* sqlite3's .help layout: ".name ARGS" padded to column 26, then text */
  static const char *const cmds[] = {
      ".bail",   ".changes", ".dbinfo",    ".dump",      ".echo",   ".exit",  ".headers", ".help",
      ".import", ".indexes", ".mode",      ".nullvalue", ".once",   ".open",  ".output",  ".quit",
      ".read",   ".schema",  ".separator", ".show",      ".tables", ".timer", NULL};
  for (int i = 0; cmds[i]; i++) {
    char want[64];
    snprintf(want, sizeof want, "\n%s ", cmds[i]);
    if (!strstr(a.out, want) && strncmp(a.out, want + 1, strlen(want) - 1) != 0)
      test_fail(__FILE__, __LINE__, ".help lacks %s", cmds[i]);
  }
  const char *m1 = strstr(a.out, ".mode MODE ?OPTIONS?     Set output mode\n");
  CHECK(m1 && strstr(m1 + 1, ".mode MODE ?OPTIONS?     Set output mode\n")); /* .help mode */
  CHECK(strstr(a.out, "Nothing matches '.nosuch'") || strstr(a.out, "Nothing matches 'nosuch'"));
  CHECK(strstr(a.out, "database page size:  4096\n") || strstr(a.out, "database page count: 0"));
  shell_run_free(&a);

  char *args[] = {(char *)"-version"};
  shell_run(&a, shell_binary(), "version-shale", args, 1, NULL, NULL);
  CHECK_EQ(a.code, 0);
  CHECK(strstr(a.out, shale_libversion()) == a.out);
  shell_run_free(&a);

  /* .dbinfo on a file: sqlite3's fields with the header's values */
  write_file(in,
             "create table a(x); create index ai on a(x); create view v as select 1;\n"
             "pragma user_version=7;\n.dbinfo\n");
  char *args2[] = {(char *)"test.db"};
  shell_run(&a, shell_binary(), "dbinfo-shale", args2, 1, in, NULL);
  CHECK_EQ(a.code, 0);
  static const char *const fields[] = {
      "database page size:  4096\n", "write format:        1\n",
      "read format:         1\n",    "reserved bytes:      0\n",
      "database page count: 3\n",    "freelist page count: 0\n",
      "schema format:       4\n",    "text encoding:       1 (utf8)\n",
      "user version:        7\n",    "number of tables:    1\n",
      "number of indexes:   1\n",    "number of triggers:  0\n",
      "number of views:     1\n",    NULL};
  for (int i = 0; fields[i]; i++)
    if (!strstr(a.out, fields[i]))
      test_fail(__FILE__, __LINE__, ".dbinfo lacks \"%s\":\n%s", fields[i], a.out);
  shell_run_free(&a);
}

/* 20000 rows through .import and back out through .mode csv: the same text;
 * no progress bar when stderr is a file. */
TEST(shell_import_large) {
  const char *csv = test_path("big.csv");
  FILE *f = fopen(csv, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fputs("id,name,score\n", f);
  for (int i = 0; i < 20000; i++) fprintf(f, "%d,\"name %d, \"\"q\"\"\",%d.5\n", i, i, i % 97);
  fclose(f);
  char script[PATH_MAX * 2];
  snprintf(script, sizeof script,
           ".import --csv '%s' big\n.mode csv\n.headers on\n.once out.csv\nselect * from big;\n"
           "select count(*), sum(score) from big;\n",
           csv);
  const char *in = test_path("big.sql");
  write_file(in, script);
  ShellRun a, b;
  shell_run(&a, shell_binary(), "big-shale", NULL, 0, in, NULL);
  shell_run(&b, REF_SHELL, "big-sqlite3", NULL, 0, in, NULL);
  CHECK_EQ(a.code, 0);
  CHECK_EQ(b.code, 0);
  CHECK_STR(a.err, "");
  CHECK_STR(a.out, b.out);
  CHECK_STR(a.out, "count(*),sum(score)\r\n20000,969289.0\r\n");
  char pa[PATH_MAX + 20], pb[PATH_MAX + 20];
  snprintf(pa, sizeof pa, "%s/out.csv", a.dir);
  snprintf(pb, sizeof pb, "%s/out.csv", b.dir);
  size_t n1 = 0, n2 = 0;
  char *x = shell_read_file(pa, &n1), *y = shell_read_file(pb, &n2);
  CHECK(x && y);
  if (x && y) {
    CHECK(n1 == n2 && memcmp(x, y, n1) == 0);
    CHECK(strstr(x, "id,name,score\r\n0,\"name 0, \"\"q\"\"\",0.5\r\n") == x);
  }
  free(x);
  free(y);
  shell_run_free(&a);
  shell_run_free(&b);
}

/* A statement of 40,000 lines and a trigger of 5,000: the shell checks each
 * line as it comes (src/parse/complete.c's resumable scan), so gathering them
 * takes linear time (it rescanned the whole statement per line: 87 s for
 * the 40,000 lines, sqlite3 0.07 s); output equal to sqlite3's. */
TEST(shell_long_statement_linear) {
  const char *in = test_path("long.sql");
  FILE *f = fopen(in, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fputs("create table t(a);\ninsert into t values\n", f);
  for (int i = 0; i < 40000; i++) fprintf(f, "(%d)%s\n", i, i < 39999 ? "," : ";");
  fputs("select count(*), sum(a) from t;\ncreate trigger tg after insert on t begin\n", f);
  for (int i = 0; i < 5000; i++) fprintf(f, "  select %d;\n", i);
  fputs("end;\nselect count(*) from sqlite_schema;\n", f);
  fclose(f);
  ShellRun a, b;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  shell_run(&a, shell_binary(), "long-shale", NULL, 0, in, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  shell_run(&b, REF_SHELL, "long-sqlite3", NULL, 0, in, NULL);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  CHECK_EQ(a.code, b.code);
  CHECK_STR(a.err, b.err);
  CHECK_STR(a.out, b.out);
  CHECK_STR(a.out, "40000|799980000\n2\n");
  if (secs > 5.0) test_fail(__FILE__, __LINE__, "the shell took %.1f s over 45,000 lines", secs);
  shell_run_free(&a);
  shell_run_free(&b);
}
