/*
 * test_sql_slt.c -- every statement of the sqllogictest corpus parses.
 *
 * Reads each *.test file under the shared corpus (SHALE_SLT_DIR, else
 * ../shared/slt or /work/shared/slt); records "statement ok" and "query"
 * give SQL lines up to "----" or the blank line ending the record; records
 * guarded by "onlyif <engine other than sqlite>" or "skipif sqlite" are
 * skipped. Missing corpus: the case passes with a message.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../src/sql/ast.h"
#include "../../test.h"

static long n_stmts, n_files, n_fail;

/* Parse every statement of the record's text (a record may hold several). */
static void check_sql(const char *file, int line, const char *sql) {
  const char *z = sql;
  int nparsed = 0;
  while (*z) {
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    const char *tail = NULL;
    char *err = NULL;
    int rc = sql_parse(&a, z, -1, &s, &tail, &err);
    n_stmts++;
    if (rc != SHALE_OK || (!s && nparsed == 0)) {
      if (n_fail++ < 20)
        test_fail(__FILE__, __LINE__, "%s:%d: %s\n    %s", file, line, err ? err : "(no stmt)",
                  sql);
      shale_free(err);
      util_arena_free(&a);
      return;
    }
    nparsed++;
    CHECK(tail > z || !s);
    shale_free(err);
    util_arena_free(&a);
    if (!s) break;
    z = tail;
  }
}

static void run_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  n_files++;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0;
  int skip = 0;      /* current record guarded away */
  int mode = 0;      /* 0 between records, 1 collecting SQL, 2 in results */
  int start_line = 0;
  char *sql = NULL;
  size_t sn = 0, scap = 0;
  for (;;) {
    len = getline(&line, &cap, f);
    if (len >= 0) {
      lineno++;
      while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    }
    if (len < 0 || len == 0) {
      if (mode == 1 && !skip && sn) check_sql(path, start_line, sql);
      mode = 0;
      skip = 0;
      sn = 0;
      if (len < 0) break;
      continue;
    }
    if (mode == 0) {
      if (!strncmp(line, "onlyif ", 7)) {
        if (strncmp(line + 7, "sqlite", 6)) skip = 1;
      } else if (!strncmp(line, "skipif ", 7)) {
        if (!strncmp(line + 7, "sqlite", 6)) skip = 1;
      } else if (!strncmp(line, "statement ok", 12) || !strncmp(line, "query", 5)) {
        mode = 1;
        start_line = lineno + 1;
        sn = 0;
      } else if (!strncmp(line, "statement", 9)) {
        mode = 2; /* statement error: not required to parse */
      }
      continue;
    }
    if (mode == 1) {
      if (!strcmp(line, "----")) {
        if (!skip && sn) check_sql(path, start_line, sql);
        mode = 2;
        continue;
      }
      if (sn + (size_t)len + 2 > scap) {
        scap = (sn + (size_t)len + 2) * 2;
        sql = realloc(sql, scap);
      }
      if (sn) sql[sn++] = '\n';
      memcpy(sql + sn, line, (size_t)len);
      sn += (size_t)len;
      sql[sn] = 0;
    }
  }
  free(line);
  free(sql);
  fclose(f);
}

static void walk(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char **names = NULL;
  int n = 0, cap = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      names = realloc(names, sizeof(char *) * (size_t)cap);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode)) walk(path);
      else if (strlen(names[i]) > 5 && !strcmp(names[i] + strlen(names[i]) - 5, ".test"))
        run_file(path);
    }
    free(names[i]);
  }
  free(names);
}

TEST(slt_corpus_parses) {
  const char *dirs[] = {getenv("SHALE_SLT_DIR"), "../shared/slt", "/work/shared/slt"};
  const char *dir = NULL;
  for (int i = 0; i < 3; i++) {
    struct stat st;
    if (dirs[i] && stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      dir = dirs[i];
      break;
    }
  }
  if (!dir) {
    printf("  (sqllogictest corpus not found: skipped)\n");
    return;
  }
  walk(dir);
  printf("  %ld statements from %ld files, %ld failed\n", n_stmts, n_files, n_fail);
  CHECK(n_files > 0);
  CHECK_EQ(n_fail, 0);
}
