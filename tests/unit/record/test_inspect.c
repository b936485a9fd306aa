/*
 * test_inspect.c -- build/shale-inspect on files made by sqlite3.
 *
 * Runs the tool through popen and checks key lines: header fields, schema
 * rows, a role for every page that agrees with what sqlite3's dbstat says,
 * the freelist, one page's cells with decoded values, and that mutated
 * (corrupt) files never crash it.
 *
 * Invariants:
 *  1. The tool is found next to this binary's build directory
 *     (<build>/tests/test_inspect -> <build>/shale-inspect), so the ASan
 *     test run exercises the ASan-built tool.
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../test.h"

static char tool[PATH_MAX];

static const char *tool_path(void) {
  if (!tool[0]) {
    char exe[PATH_MAX - 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "build/shale-inspect";
    exe[n] = 0;
    char *s = strrchr(exe, '/'); /* .../build/tests/test_inspect */
    if (s) *s = 0;
    s = strrchr(exe, '/');
    if (s) *s = 0;
    snprintf(tool, sizeof tool, "%s/shale-inspect", exe);
  }
  return tool;
}

/* Run the tool with args; returns its output (malloc'ed) and exit status. */
static char *run(const char *args, int *status) {
  char cmd[PATH_MAX + 512];
  snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99 %s %s 2>&1",
           tool_path(), args);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  size_t k;
  while ((k = fread(out + n, 1, cap - n - 1, p)) > 0) {
    n += k;
    if (cap - n < 4096) out = realloc(out, cap *= 2);
  }
  out[n] = 0;
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return out;
}

static int has_line(const char *out, const char *line) {
  size_t n = strlen(line);
  for (const char *p = out; p && *p;) {
    if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == 0)) return 1;
    p = strchr(p, '\n');
    if (p) p++;
  }
  return 0;
}

static int count_prefix(const char *out, const char *needle) {
  int c = 0;
  for (const char *p = out; (p = strstr(p, needle)); p++) c++;
  return c;
}

static void sql(sqlite3 *db, const char *s) {
  char *err = NULL;
  if (sqlite3_exec(db, s, 0, 0, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "%s: %s", s, err);
    sqlite3_free(err);
  }
}

static const char *make_db(void) {
  const char *path = test_path("inspect.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  sql(db,
      "pragma page_size=1024; pragma user_version=-5; pragma application_id=77;"
      "create table t(a integer primary key, b text, c);"
      "create index tb on t(b);"
      "insert into t values(1,'hello',2.5),(2,'x',x'0102'),(3,NULL,-7);"
      "insert into t(b,c) with recursive s(i) as (select 1 union all select i+1 from s "
      "  where i<30) select hex(randomblob(300)), randomblob(3000) from s;"
      "delete from t where a between 10 and 20;"
      "create table w(k primary key, v) without rowid;"
      "insert into w values('a',1),('b',2);"
      "create view v1 as select 1;");
  sqlite3_close(db);
  return path;
}

static void check_tool_exists(void) {
  if (access(tool_path(), X_OK) != 0)
    test_fail(__FILE__, __LINE__, "%s not built (run make)", tool_path());
}

TEST(inspect_header) {
  check_tool_exists();
  const char *path = make_db();
  int st;
  char *out = run(path, &st);
  CHECK_EQ(st, 0);
  CHECK(has_line(out, "magic: \"SQLite format 3\" (ok)"));
  CHECK(has_line(out, "page_size: 1024"));
  CHECK(has_line(out, "write_version: 1 (legacy)"));
  CHECK(has_line(out, "max_payload_fraction: 64"));
  CHECK(has_line(out, "schema_format: 4"));
  CHECK(has_line(out, "text_encoding: 1 (UTF-8)"));
  CHECK(has_line(out, "user_version: -5"));
  CHECK(has_line(out, "application_id: 77"));
  CHECK(has_line(out, "sqlite_version_number: 3040001"));
  CHECK(strstr(out, "database_size: ") && strstr(out, "(valid)"));
  free(out);
}

TEST(inspect_schema_and_page) {
  check_tool_exists();
  const char *path = make_db();
  char args[600];
  int st;
  snprintf(args, sizeof args, "%s --schema", path);
  char *out = run(args, &st);
  CHECK_EQ(st, 0);
  CHECK(has_line(out, "table|t|t|2|CREATE TABLE t(a integer primary key, b text, c)"));
  CHECK(has_line(out, "index|tb|t|3|CREATE INDEX tb on t(b)"));
  CHECK(has_line(out, "view|v1|v1|0|CREATE VIEW v1 as select 1"));
  free(out);
  /* the leaf holding rowids 1..3 */
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_stmt *s;
  sqlite3_prepare_v2(db,
                     "select pageno from dbstat where name='t' and pagetype='leaf' "
                     "order by path limit 1",
                     -1, &s, 0);
  CHECK(sqlite3_step(s) == SQLITE_ROW);
  int leaf = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  snprintf(args, sizeof args, "%s --page %d --page 1", path, leaf);
  out = run(args, &st);
  CHECK_EQ(st, 0);
  char line[100];
  snprintf(line, sizeof line, "page %d: table-leaf (t)", leaf);
  CHECK(has_line(out, line));
  CHECK(strstr(out, "rowid 1 payload 17 local 17: (NULL, 'hello', 2.5)"));
  CHECK(strstr(out, "rowid 2 payload 7 local 7: (NULL, 'x', X'0102')"));
  CHECK(strstr(out, "rowid 3 payload 5 local 5: (NULL, NULL, -7)"));
  CHECK(strstr(out, "payload 3606 local 546 overflow "));
  CHECK(strstr(out, "...(3000 bytes)"));
  CHECK(has_line(out, "page 1: table-leaf (sqlite_schema)"));
  CHECK(strstr(out, "('index', 'tb', 't', 3, 'CREATE INDEX tb on t(b)')"));
  free(out);
}

TEST(inspect_pages_match_dbstat) {
  check_tool_exists();
  const char *path = make_db();
  char args[600];
  int st;
  snprintf(args, sizeof args, "%s --pages", path);
  char *out = run(args, &st);
  CHECK_EQ(st, 0);
  CHECK(!strstr(out, "corrupt:"));
  CHECK(!strstr(out, ": unused"));
  /* every b-tree and overflow page, as dbstat reports it */
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_stmt *s;
  sqlite3_prepare_v2(db, "select name, pageno, pagetype from dbstat", -1, &s, 0);
  int n = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(s, 0);
    int pg = sqlite3_column_int(s, 1);
    const char *type = (const char *)sqlite3_column_text(s, 2);
    int isidx = strcmp(name, "tb") == 0 || strcmp(name, "w") == 0;
    const char *role = strcmp(type, "overflow") == 0 ? "overflow"
                       : strcmp(type, "leaf") == 0   ? (isidx ? "index-leaf" : "table-leaf")
                                                   : (isidx ? "index-interior" : "table-interior");
    char line[200];
    snprintf(line, sizeof line, "page %d: %s (%s)", pg, role, name);
    if (!has_line(out, line)) test_fail(__FILE__, __LINE__, "missing \"%s\"", line);
    n++;
  }
  sqlite3_finalize(s);
  int freecount = 0;
  sqlite3_prepare_v2(db, "pragma freelist_count", -1, &s, 0);
  if (sqlite3_step(s) == SQLITE_ROW) freecount = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  CHECK(freecount > 0);
  CHECK_EQ(count_prefix(out, ": freelist-trunk") + count_prefix(out, ": freelist-leaf"), freecount);
  CHECK_EQ(count_prefix(out, "\npage ") + 1, n + freecount);
  free(out);
  snprintf(args, sizeof args, "%s --freelist", path);
  out = run(args, &st);
  char line[100];
  snprintf(line, sizeof line, "freelist total: %d pages", freecount);
  CHECK(has_line(out, line));
  CHECK(strstr(out, "trunk "));
  free(out);
}

TEST(inspect_autovacuum_ptrmap) {
  check_tool_exists();
  const char *path = test_path("av.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  sql(db,
      "pragma page_size=512; pragma auto_vacuum=incremental; create table t(x);"
      "insert into t with recursive s(i) as (select 1 union all select i+1 from s "
      "  where i<300) select randomblob(400) from s;"
      "delete from t where rowid % 3 = 0;");
  sqlite3_close(db);
  char args[600];
  int st;
  snprintf(args, sizeof args, "%s --pages", path);
  char *out = run(args, &st);
  CHECK_EQ(st, 0);
  CHECK(!strstr(out, "corrupt:"));
  CHECK(!strstr(out, ": unused"));
  CHECK(has_line(out, "page 2: ptrmap"));
  CHECK(has_line(out, "page 105: ptrmap")); /* J = 512/5 = 102: pages 2, 105, 208 */
  CHECK(has_line(out, "page 208: ptrmap"));
  free(out);
}

static void mutate_run(const char *src, uint64_t seed);

TEST(inspect_corrupt_never_crashes) {
  check_tool_exists();
  mutate_run(make_db(), test_seed());
  /* an auto-vacuum file, so pointer-map pages are damaged too */
  char av[PATH_MAX];
  snprintf(av, sizeof av, "%s", test_path("av_mut_src.db"));
  remove(av);
  sqlite3 *db;
  sqlite3_open(av, &db);
  sql(db,
      "pragma page_size=1024; pragma auto_vacuum=incremental; create table t(x);"
      "create index ti on t(x); insert into t with recursive s(i) as (select 1 union all "
      "select i+1 from s where i<120) select randomblob(500 + i * 7) from s;"
      "delete from t where rowid % 4 = 0;");
  sqlite3_close(db);
  mutate_run(av, test_seed() ^ 0xa5);
}

static void mutate_run(const char *src, uint64_t seed) {
  FILE *f = fopen(src, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *orig = malloc((size_t)size);
  CHECK(fread(orig, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  uint64_t s = seed;
  int iters = test_long() ? 1000 : 80;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", test_path("mut.db"));
  for (int it = 0; it < iters; it++) {
    unsigned char *m = malloc((size_t)size);
    memcpy(m, orig, (size_t)size);
    long len = size;
    int nm = 1 + (int)(test_rand(&s) % 8);
    for (int k = 0; k < nm; k++) {
      /* mostly page headers and cell areas of the first pages */
      long pos = (test_rand(&s) % 2)
                     ? (long)(test_rand(&s) % (uint64_t)size)
                     : (long)(test_rand(&s) % 1024) + 1024 * (long)(test_rand(&s) % 4);
      if (pos < size) m[pos] = (unsigned char)test_rand(&s);
    }
    if (test_rand(&s) % 8 == 0) len = (long)(test_rand(&s) % (uint64_t)size);
    f = fopen(path, "wb");
    fwrite(m, 1, (size_t)len, f);
    fclose(f);
    free(m);
    char args[PATH_MAX + 200];
    int st;
    snprintf(args, sizeof args,
             "%s --header --pages --freelist --ptrmap --schema --page 1 --page 2 --page 3 "
             "--page %d",
             path, 1 + (int)(test_rand(&s) % 160));
    char *out = run(args, &st);
    if (st != 0 && st != 1 && st != 3) {
      test_fail(__FILE__, __LINE__, "iteration %d: exit status %d", it, st);
      fprintf(stderr, "%.2000s\n", out);
      free(out);
      break;
    }
    free(out);
  }
  free(orig);
}

TEST(inspect_bad_input) {
  check_tool_exists();
  int st;
  char *out = run("/nonexistent/file.db", &st);
  CHECK_EQ(st, 1);
  free(out);
  out = run("", &st);
  CHECK_EQ(st, 2);
  free(out);
  const char *path = test_path("short.db");
  FILE *f = fopen(path, "wb");
  fwrite("SQLite format 3", 1, 16, f);
  fclose(f);
  char args[600];
  snprintf(args, sizeof args, "%s --pages", path);
  out = run(args, &st);
  CHECK_EQ(st, 1);
  CHECK(strstr(out, "corrupt: file shorter than the 100-byte header"));
  free(out);
}

TEST(inspect_ptrmap_entries) {
  check_tool_exists();
  static const char *const modes[] = {"full", "incremental"};
  for (int m = 0; m < 2; m++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", test_path(m ? "pm_inc.db" : "pm_full.db"));
    remove(path);
    sqlite3 *db;
    sqlite3_open(path, &db);
    char q[600];
    snprintf(q, sizeof q,
             "pragma page_size=512; pragma auto_vacuum=%s; create table t(x);"
             "create index ti on t(x); insert into t with recursive s(i) as (select 1 union all "
             "select i+1 from s where i<300) select randomblob(400 + i %% 300) from s;"
             "delete from t where rowid %% 3 = 0; create table u(y);",
             modes[m]);
    sql(db, q);
    sqlite3_close(db);
    char args[PATH_MAX + 64];
    int st;
    snprintf(args, sizeof args, "%s --ptrmap", path);
    char *out = run(args, &st);
    CHECK_EQ(st, 0);
    CHECK(strstr(out, " entries, 0 wrong\n"));
    CHECK(!strstr(out, "corrupt:"));
    CHECK(strstr(out, ": type 1 parent 0\n"));             /* roots */
    CHECK(strstr(out, ": type 3 parent "));                /* first overflow pages */
    CHECK(strstr(out, ": type 4 parent "));                /* later overflow pages */
    CHECK(strstr(out, ": type 5 parent "));                /* non-root b-tree pages */
    if (m == 1) CHECK(strstr(out, ": type 2 parent 0\n")); /* free pages */
    free(out);
    /* damage one entry: page 3's (first entry of pointer-map page 2) */
    FILE *f = fopen(path, "r+b");
    fseek(f, 512 + 1, SEEK_SET);
    fwrite("\x00\x00\x03\x09", 1, 4, f);
    fclose(f);
    out = run(args, &st);
    CHECK_EQ(st, 3);
    CHECK(strstr(out, "corrupt: ptrmap entry for page 3 is ("));
    CHECK(strstr(out, " entries, 1 wrong\n"));
    free(out);
  }
  int st;
  char *out = run(make_db(), &st);
  free(out);
  char args[PATH_MAX + 64];
  snprintf(args, sizeof args, "%s --ptrmap", test_path("inspect.db"));
  out = run(args, &st);
  CHECK(strstr(out, "ptrmap: none (not an auto-vacuum database)"));
  free(out);
}
