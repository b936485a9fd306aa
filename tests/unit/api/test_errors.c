/*
 * test_errors.c -- SQL error codes and messages: every case of tests/sql/errors.txt
 * (format at its top) on the reference SQLite and, once the native API is on main,
 * on Shale; the extended result code and the message text must match exactly.
 *
 * Owns: the errors.txt reader and the per-engine case runner.
 *
 * Invariants:
 *  1. Each case runs on a fresh ":memory:" database: setup lines through exec (they
 *     must succeed), then the statement line prepared (first statement only) and
 *     stepped to the end; the first error's extended code and message are the answer.
 *  2. The "=> CODE message" lines of errors.txt are the reference's answers (written
 *     by tests/sql/fill.py): SQLite must reproduce every one (fatal), and every case
 *     must be an error.
 *  3. Shale's half is compiled only when SHALE_HAS_SQL_API is 1. It prints every
 *     difference and "N of M error cases match"; it is FATAL: every case (and the
 *     too-many-variables case) must give SQLite's extended code and message.
 *  4. The file is $SHALE_SQL_ERRORS, else tests/sql/errors.txt (repo root = cwd).
 */
#include <sqlite3.h>

/* 1: the native API (include/shale.h, src/api/) is on main; 0 compiles the Shale half out. */
#define SHALE_HAS_SQL_API 1
#if SHALE_HAS_SQL_API
#include "shale.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"

typedef struct ErrCase {
  int line;        /* line of the block in errors.txt */
  char *setup[16]; /* setup lines */
  int nsetup;
  char *sql;     /* the statement under test */
  int want_code; /* from the "=>" line; -1 when absent */
  char *want_msg;
} ErrCase;

typedef struct ErrCases {
  ErrCase *v;
  int n;
} ErrCases;

/* The answer of one engine for one case. */
typedef struct Answer {
  int code; /* extended result code; 0 = no error */
  char msg[512];
  int setup_failed;
} Answer;

static char *dupn(const char *z, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, z, n);
  p[n] = 0;
  return p;
}

static void free_cases(ErrCases *cs) {
  for (int i = 0; i < cs->n; i++) {
    for (int k = 0; k < cs->v[i].nsetup; k++) free(cs->v[i].setup[k]);
    free(cs->v[i].sql);
    free(cs->v[i].want_msg);
  }
  free(cs->v);
  cs->v = NULL;
  cs->n = 0;
}

/* Read errors.txt; returns 0 on success. */
static int read_cases(const char *path, ErrCases *cs) {
  FILE *f = fopen(path, "rb");
  if (!f) return 1;
  char buf[70000];
  ErrCase cur = {0};
  int lineno = 0, inblock = 0, bad = 0;
  cur.want_code = -1;
  for (;;) {
    char *got = fgets(buf, sizeof buf, f);
    size_t n = got ? strlen(buf) : 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    lineno++;
    int blank = !got || strspn(buf, " \t") == n;
    if (got && buf[0] == '#') continue;
    if (blank) {
      if (inblock) {
        ErrCase *nv = realloc(cs->v, (size_t)(cs->n + 1) * sizeof *nv);
        if (!nv || !cur.sql) {
          bad = 1;
          break;
        }
        cs->v = nv;
        cs->v[cs->n++] = cur;
        memset(&cur, 0, sizeof cur);
        cur.want_code = -1;
        inblock = 0;
      }
      if (!got) break;
      continue;
    }
    if (!inblock) cur.line = lineno;
    inblock = 1;
    if (!strncmp(buf, "=> ", 3)) {
      char *end;
      cur.want_code = (int)strtol(buf + 3, &end, 10);
      cur.want_msg = dupn(end + (*end == ' '), strlen(end + (*end == ' ')));
      continue;
    }
    if (cur.sql) { /* the previous statement line was setup */
      if (cur.nsetup == 16) {
        bad = 1;
        break;
      }
      cur.setup[cur.nsetup++] = cur.sql;
    }
    cur.sql = dupn(buf, n);
  }
  fclose(f);
  if (bad) {
    for (int k = 0; k < cur.nsetup; k++) free(cur.setup[k]);
    free(cur.sql);
    free(cur.want_msg);
  }
  return bad;
}

static const char *cases_path(void) {
  const char *p = getenv("SHALE_SQL_ERRORS");
  return p && *p ? p : "tests/sql/errors.txt";
}

/* ---------------------------------------------------------------- SQLite */

static void run_sqlite(const ErrCase *c, Answer *a) {
  sqlite3 *db = NULL;
  memset(a, 0, sizeof *a);
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) {
    a->setup_failed = 1;
    sqlite3_close(db);
    return;
  }
  for (int k = 0; k < c->nsetup; k++)
    if (sqlite3_exec(db, c->setup[k], NULL, NULL, NULL) != SQLITE_OK) a->setup_failed = 1;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, c->sql, -1, &st, NULL);
  if (rc == SQLITE_OK && st) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    a->code = sqlite3_extended_errcode(db);
    snprintf(a->msg, sizeof a->msg, "%s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* ----------------------------------------------------------------- Shale */

#if SHALE_HAS_SQL_API
static void run_shale(const ErrCase *c, Answer *a) {
  shale *db = NULL;
  memset(a, 0, sizeof *a);
  if (shale_open_v2(":memory:", &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL)) {
    a->setup_failed = 1;
    shale_close(db);
    return;
  }
  for (int k = 0; k < c->nsetup; k++) {
    char *err = NULL;
    if (shale_exec(db, c->setup[k], NULL, NULL, &err) != SHALE_OK) a->setup_failed = 1;
    shale_free(err);
  }
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(db, c->sql, -1, &st, NULL);
  if (rc == SHALE_OK && st) {
    while ((rc = shale_step(st)) == SHALE_ROW) {
    }
    if (rc == SHALE_DONE) rc = SHALE_OK;
  }
  if (rc != SHALE_OK) {
    a->code = shale_extended_errcode(db);
    const char *m = shale_errmsg(db);
    snprintf(a->msg, sizeof a->msg, "%s", m ? m : "(null)");
  }
  shale_finalize(st);
  shale_close(db);
}
#endif

/* ------------------------------------------------------------------ cases */

TEST(error_cases_are_sqlites_answers) {
  ErrCases cs = {0};
  CHECK_EQ(read_cases(cases_path(), &cs), 0);
  CHECK(cs.n >= 80);
  int syntax = 0;
  for (int i = 0; i < cs.n; i++) {
    const ErrCase *c = &cs.v[i];
    Answer a;
    run_sqlite(c, &a);
    CHECK(!a.setup_failed);
    CHECK(a.code != 0);
    CHECK(c->want_code >= 0 && c->want_msg);
    if (c->want_code < 0 || !c->want_msg) continue;
    if (a.code != c->want_code || strcmp(a.msg, c->want_msg)) {
      printf("errors.txt:%d: %s\n  file says %d %s\n  SQLite   %d %s\n", c->line, c->sql,
             c->want_code, c->want_msg, a.code, a.msg);
      CHECK(0);
    }
    syntax += strstr(a.msg, "syntax error") != NULL;
  }
  printf("errors.txt: %d cases (%d syntax errors), all SQLite's answers\n", cs.n, syntax);
  free_cases(&cs);
}

/* The one case that needs a long statement: more "?" than the limit (250000 in
 * the reference build). */
static char *many_variables(void) {
  int n = 250001; /* the reference is built with a limit of 250000 (see errors.txt) */
  char *z = malloc((size_t)n * 2 + 16);
  if (!z) return NULL;
  strcpy(z, "SELECT 1 IN (?");
  size_t at = strlen(z);
  for (int i = 1; i < n; i++) {
    z[at++] = ',';
    z[at++] = '?';
  }
  z[at++] = ')';
  z[at] = 0;
  return z;
}

TEST(too_many_sql_variables) {
  ErrCase c = {0};
  c.sql = many_variables();
  CHECK(c.sql != NULL);
  if (!c.sql) return;
  Answer a;
  run_sqlite(&c, &a);
  CHECK_EQ(a.code, SQLITE_ERROR);
  CHECK_STR(a.msg, "too many SQL variables");
#if SHALE_HAS_SQL_API
  Answer b;
  run_shale(&c, &b);
  if (b.code != a.code || strcmp(a.msg, b.msg))
    printf("too many SQL variables: Shale says %d %s\n", b.code, b.msg);
  CHECK_EQ(b.code, a.code);
  CHECK_STR(b.msg, a.msg);
#endif
  free(c.sql);
}

#if SHALE_HAS_SQL_API
TEST(error_cases_match_on_shale) {
  ErrCases cs = {0};
  CHECK_EQ(read_cases(cases_path(), &cs), 0);
  int same = 0;
  for (int i = 0; i < cs.n; i++) {
    const ErrCase *c = &cs.v[i];
    Answer a, b;
    run_sqlite(c, &a);
    run_shale(c, &b);
    if (b.setup_failed) printf("errors.txt:%d: setup fails on Shale\n", c->line);
    if (a.code == b.code && !strcmp(a.msg, b.msg) && !b.setup_failed) {
      same++;
      continue;
    }
    printf("errors.txt:%d: %s\n  SQLite %d %s\n  Shale  %d %s\n", c->line, c->sql, a.code, a.msg,
           b.code, b.msg);
  }
  printf("%d of %d error cases match\n", same, cs.n);
  CHECK_EQ(same, cs.n); /* every case: SQLite's extended code and message */
  free_cases(&cs);
}
#endif

/* The reader and the comparison can fail: a wrong expected line is caught. */
TEST(error_case_mismatch_is_detected) {
  const char *path = test_path("errors_bad.txt");
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(
      "# a wrong answer on purpose\nCREATE TABLE t(a UNIQUE);\nINSERT INTO t VALUES(1);\n"
      "INSERT INTO t VALUES(1)\n=> 2067 UNIQUE constraint failed: t.b\n\nSELECT 1 +\n"
      "=> 1 incomplete input\n",
      f);
  fclose(f);
  ErrCases cs = {0};
  CHECK_EQ(read_cases(path, &cs), 0);
  CHECK_EQ(cs.n, 2);
  if (cs.n == 2) {
    CHECK_EQ(cs.v[0].nsetup, 2);
    CHECK_STR(cs.v[0].sql, "INSERT INTO t VALUES(1)");
    Answer a;
    run_sqlite(&cs.v[0], &a);
    CHECK_EQ(a.code, cs.v[0].want_code);
    CHECK(strcmp(a.msg, cs.v[0].want_msg) != 0); /* t.a, not t.b */
    run_sqlite(&cs.v[1], &a);
    CHECK_EQ(a.code, 1);
    CHECK_STR(a.msg, cs.v[1].want_msg);
  }
  free_cases(&cs);
}
