/*
 * test_sql_precedence.c -- random expressions against the reference.
 *
 * For each random expression E (few parentheses, many operators), the
 * reference sqlite3 evaluates E and also our tree of E rendered back to SQL
 * with every node parenthesized. Equal results (over many cases) mean our
 * tree groups operators the way SQLite's grammar does. When the reference
 * rejects E at parse time, our error message must be the same.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../../../src/parse/ast.h"
#include "../../test.h"

typedef struct Out {
  char z[16384];
  int n, overflow;
} Out;

static void put(Out *o, const char *s) {
  int l = (int)strlen(s);
  if (o->n + l + 1 >= (int)sizeof o->z) {
    o->overflow = 1;
    return;
  }
  memcpy(o->z + o->n, s, (size_t)l + 1);
  o->n += l;
}

/* Render e as SQL with every operation in parentheses; 0 if unsupported. */
static int render(Out *o, const SqlExpr *e) {
  char buf[64];
  const char *not_ = (e->flags & SQL_EF_NOT) ? " NOT" : "";
  switch (e->op) {
    case SQL_E_NULL:
      put(o, "NULL");
      return 1;
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
      put(o, e->z);
      return 1;
    case SQL_E_STRING:
      put(o, "'");
      put(o, e->z); /* generated strings have no quotes */
      put(o, "'");
      return 1;
    case SQL_E_UNARY:
      snprintf(buf, sizeof buf, "(%s ", sql_op_text(e->sub));
      put(o, buf);
      if (!render(o, e->a)) return 0;
      put(o, ")");
      return 1;
    case SQL_E_BINARY:
    case SQL_E_ISNOT:
      put(o, "(");
      if (!render(o, e->a)) return 0;
      snprintf(buf, sizeof buf, " %s ", e->op == SQL_E_ISNOT ? "IS NOT" : sql_op_text(e->sub));
      put(o, buf);
      if (!render(o, e->b)) return 0;
      put(o, ")");
      return 1;
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL:
      put(o, "(");
      if (!render(o, e->a)) return 0;
      put(o, e->op == SQL_E_ISNULL ? " ISNULL)" : " NOTNULL)");
      return 1;
    case SQL_E_LIKE:
      put(o, "(");
      if (!render(o, e->a)) return 0;
      snprintf(buf, sizeof buf, "%s %s ", not_, sql_op_text(e->sub));
      put(o, buf);
      if (!render(o, e->b)) return 0;
      if (e->c) {
        put(o, " ESCAPE ");
        if (!render(o, e->c)) return 0;
      }
      put(o, ")");
      return 1;
    case SQL_E_BETWEEN:
      put(o, "(");
      if (!render(o, e->a)) return 0;
      put(o, not_);
      put(o, " BETWEEN ");
      if (!render(o, e->b)) return 0;
      put(o, " AND ");
      if (!render(o, e->c)) return 0;
      put(o, ")");
      return 1;
    case SQL_E_IN:
      if (e->select || e->table) return 0;
      put(o, "(");
      if (!render(o, e->a)) return 0;
      put(o, not_);
      put(o, " IN (");
      for (int i = 0; i < e->list->n; i++) {
        if (i) put(o, ", ");
        if (!render(o, e->list->a[i].expr)) return 0;
      }
      put(o, "))");
      return 1;
    case SQL_E_COLLATE:
      put(o, "(");
      if (!render(o, e->a)) return 0;
      put(o, " COLLATE ");
      put(o, e->z);
      put(o, ")");
      return 1;
    default:
      return 0;
  }
}

static const char *const atoms[] = {"0", "1", "2", "3", "NULL", "'a'", "'A'", "'b%'", "1.5"};
static const char *const binops[] = {"OR",
                                     "AND",
                                     "=",
                                     "==",
                                     "!=",
                                     "<>",
                                     "IS",
                                     "IS NOT",
                                     "IS DISTINCT FROM",
                                     "IS NOT DISTINCT FROM",
                                     "<",
                                     "<=",
                                     ">",
                                     ">=",
                                     "&",
                                     "|",
                                     "<<",
                                     ">>",
                                     "+",
                                     "-",
                                     "*",
                                     "/",
                                     "%",
                                     "||",
                                     "LIKE",
                                     "NOT LIKE",
                                     "GLOB",
                                     "NOT GLOB"};
static const char *const prefixes[] = {"NOT ", "- ", "+ ", "~ "};

static void gen(Out *o, uint64_t *rs, int depth) {
  int nterms = 1 + (int)(test_rand(rs) % 5);
  for (int i = 0; i < nterms; i++) {
    if (i) {
      unsigned r = (unsigned)(test_rand(rs) % 40);
      if (r < 28) {
        put(o, " ");
        put(o, binops[r]);
        put(o, " ");
      } else if (r < 31) {
        put(o, r == 28 ? " BETWEEN " : r == 29 ? " NOT BETWEEN " : " BETWEEN ");
        gen(o, rs, depth + 1);
        put(o, " AND ");
      } else if (r < 33) {
        put(o, r == 31 ? " IN (" : " NOT IN (");
        gen(o, rs, depth + 1);
        put(o, ", ");
        gen(o, rs, depth + 1);
        put(o, ") ");
        continue; /* IN (...) is complete: next separator */
      } else if (r < 36) {
        put(o, r == 33 ? " ISNULL " : r == 34 ? " NOTNULL " : " NOT NULL ");
        continue;
      } else if (r < 37) {
        put(o, " COLLATE nocase ");
        continue;
      } else if (r < 38) {
        put(o, " LIKE ");
        gen(o, rs, depth + 1);
        put(o, " ESCAPE ");
      } else {
        put(o, " + ");
      }
    }
    while (test_rand(rs) % 4 == 0) put(o, prefixes[test_rand(rs) % 4]);
    if (depth < 2 && test_rand(rs) % 6 == 0) {
      put(o, "(");
      gen(o, rs, depth + 1);
      put(o, ")");
    } else {
      put(o, atoms[test_rand(rs) % (sizeof atoms / sizeof atoms[0])]);
    }
  }
}

/* quote(value) of SELECT expr in the reference; returns 0 ok, 1 parse-time
 * error (msg), 2 other error. */
static int ref_eval(sqlite3 *db, const char *expr, char *val, size_t cap) {
  char sql[20000];
  snprintf(sql, sizeof sql, "SELECT quote(%s)", expr);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    snprintf(val, cap, "%s", sqlite3_errmsg(db));
    return 1;
  }
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    snprintf(val, cap, "%s", (const char *)sqlite3_column_text(st, 0));
  else
    snprintf(val, cap, "error %d", rc);
  sqlite3_finalize(st);
  return 0;
}

TEST(random_expressions_group_like_sqlite) {
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  uint64_t rs = test_seed() | 1;
  int n = test_long() ? 200000 : 20000, compared = 0, errors = 0, bad = 0, nonnull = 0;
  for (int i = 0; i < n; i++) {
    Out e = {.n = 0};
    e.z[0] = 0;
    gen(&e, &rs, 0);
    if (e.overflow) continue;
    char sql[20000];
    snprintf(sql, sizeof sql, "SELECT quote(%s)", e.z);
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    char *err = NULL;
    int rc = sql_parse(&a, sql, -1, &s, NULL, &err);
    char rv[512], ov[512];
    int r = ref_eval(db, e.z, rv, sizeof rv);
    if (r == 1 && strncmp(rv, "near \"", 6) && strcmp(rv, "incomplete input") &&
        strncmp(rv, "Expression tree", 15) && strncmp(rv, "parser stack", 12)) {
      /* an error after parsing (e.g. GLOB with ESCAPE has no 3-argument
       * function): nothing to compare */
    } else if (r == 1) {
      errors++;
      if (rc == SHALE_OK || strcmp(err, rv)) {
        if (bad++ < 10)
          test_fail(__FILE__, __LINE__, "%s\n    reference: %s\n    ours: %s", e.z, rv,
                    rc ? err : "(parsed)");
      }
    } else if (rc != SHALE_OK) {
      if (bad++ < 10) test_fail(__FILE__, __LINE__, "%s: reference parses, ours: %s", e.z, err);
    } else {
      const SqlExpr *x = s->u.select->cols->a[0].expr->list->a[0].expr;
      Out o = {.n = 0};
      o.z[0] = 0;
      if (render(&o, x) && !o.overflow) {
        ref_eval(db, o.z, ov, sizeof ov);
        compared++;
        if (strcmp(rv, "NULL")) nonnull++;
        if (strcmp(rv, ov) && bad++ < 10)
          test_fail(__FILE__, __LINE__, "%s = %s\n    ours grouped: %s = %s", e.z, rv, o.z, ov);
      }
    }
    shale_free(err);
    util_arena_free(&a);
  }
  printf("  %d expressions: %d compared by value (%d not NULL), %d parse errors compared\n", n,
         compared, nonnull, errors);
  CHECK(compared > n / 2);
  CHECK(nonnull > compared / 4);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}

/* A result column without alias is named by its source text: our item span
 * must be exactly the text SQLite uses (sqlite3_column_name). */
TEST(result_column_names_from_spans) {
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  uint64_t rs = test_seed() * 3 + 1;
  int compared = 0, bad = 0;
  for (int i = 0; i < 3000; i++) {
    Out e1 = {.n = 0}, e2 = {.n = 0};
    e1.z[0] = e2.z[0] = 0;
    gen(&e1, &rs, 0);
    gen(&e2, &rs, 0);
    char sql[40000];
    snprintf(sql, sizeof sql, "SELECT  %s , (%s)  , 7 AS x, 'lit' FROM (SELECT 1)  ", e1.z, e2.z);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) continue;
    UtilArena a;
    util_arena_init(&a, 0);
    SqlStmt *s = NULL;
    char *err = NULL;
    if (sql_parse(&a, sql, -1, &s, NULL, &err) == SHALE_OK) {
      const SqlExprList *cols = s->u.select->cols;
      CHECK_EQ(cols->n, sqlite3_column_count(st));
      for (int c = 0; c < cols->n && c < sqlite3_column_count(st); c++) {
        char mine[20000];
        if (cols->a[c].name)
          snprintf(mine, sizeof mine, "%s", cols->a[c].name);
        else
          snprintf(mine, sizeof mine, "%.*s", cols->a[c].span.len, sql + cols->a[c].span.start);
        compared++;
        if (strcmp(mine, sqlite3_column_name(st, c)) && bad++ < 10)
          test_fail(__FILE__, __LINE__, "column %d of %s: ours \"%s\", reference \"%s\"", c, sql,
                    mine, sqlite3_column_name(st, c));
      }
    } else {
      test_fail(__FILE__, __LINE__, "%s: %s", sql, err);
    }
    shale_free(err);
    util_arena_free(&a);
    sqlite3_finalize(st);
  }
  CHECK(compared > 4000);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}
