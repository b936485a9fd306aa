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
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../src/parse/ast.h"
#include "../../test.h"

static long n_stmts, n_files, n_fail;

/* every 997th statement is kept as a seed for the mutation comparison */
#define SEED_EVERY 997
static char *seeds[1024];
static int nseeds;

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
    if (n_stmts % SEED_EVERY == 0 && nseeds < 1024 && s)
      seeds[nseeds++] = strndup(z, (size_t)(tail - z));
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
  int skip = 0; /* current record guarded away */
  int mode = 0; /* 0 between records, 1 collecting SQL, 2 in results */
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
      if (S_ISDIR(st.st_mode))
        walk(path);
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

/* Token deletions and duplications in sampled corpus statements: where the
 * reference fails while parsing, our message is the same. */
static int parse_class(const char *m) {
  return !strncmp(m, "near \"", 6) || !strcmp(m, "incomplete input") ||
         !strncmp(m, "unrecognized token:", 19);
}

TEST(slt_mutations_match_reference) {
  if (nseeds == 0) {
    printf("  (no corpus seeds: skipped)\n");
    return;
  }
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  int compared = 0, bad = 0;
  for (int k = 0; k < nseeds; k++) {
    const char *z = seeds[k];
    int n = (int)strlen(z);
    int starts[512], lens[512], nt = 0;
    for (int off = 0; off < n && nt < 512;) {
      int type;
      int len = sql_token(z + off, n - off, &type);
      if (type != TK_SPACE && type != TK_SEMI) {
        starts[nt] = off;
        lens[nt] = len;
        nt++;
      }
      off += len;
    }
    for (int drop = 0; drop < nt; drop++) {
      for (int dup = 0; dup < 2; dup++) {
        char buf[8192];
        int o = 0;
        for (int i = 0; i < nt && o < 8000; i++) {
          int times = i == drop ? dup * 2 : 1; /* drop it, or write it twice */
          for (int r = 0; r < times && o + lens[i] + 2 < (int)sizeof buf; r++) {
            memcpy(buf + o, z + starts[i], (size_t)lens[i]);
            o += lens[i];
            buf[o++] = ' ';
          }
        }
        buf[o] = 0;
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, buf, -1, &st, NULL);
        sqlite3_finalize(st);
        if (rc == SQLITE_OK || !parse_class(sqlite3_errmsg(db))) continue;
        UtilArena a;
        util_arena_init(&a, 0);
        SqlStmt *s = NULL;
        char *err = NULL;
        int orc = sql_parse(&a, buf, -1, &s, NULL, &err);
        compared++;
        if ((orc == SHALE_OK || strcmp(err, sqlite3_errmsg(db))) && bad++ < 10)
          test_fail(__FILE__, __LINE__, "%s\n    reference: %s\n    ours: %s", buf,
                    sqlite3_errmsg(db), orc ? err : "(parsed)");
        shale_free(err);
        util_arena_free(&a);
      }
    }
  }
  for (int k = 0; k < nseeds; k++) free(seeds[k]);
  printf("  %d seeds, %d mutants compared\n", nseeds, compared);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}
