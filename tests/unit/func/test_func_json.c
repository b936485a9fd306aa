/*
 * test_func_json.c -- the JSON functions against the reference SQLite in
 * the same process, on random documents: valid JSON (nested arrays and
 * objects, escapes, numbers of every form, duplicate keys), the same texts
 * with one byte changed (mostly malformed), random paths (valid, missing,
 * malformed), edits with several path/value pairs, json_patch of random
 * pairs, and json_each/json_tree over whole documents and sub-paths. Every
 * answer (value, type, error message) must be the same.
 */
#include "sqldiff.h"

typedef struct Gen {
  uint64_t seed;
  char *z;
  size_t n, cap;
} Gen;

static void gput(Gen *g, const char *s) {
  size_t k = strlen(s);
  if (g->n + k + 1 > g->cap) {
    g->cap = (g->n + k + 1) * 2;
    g->z = realloc(g->z, g->cap);
  }
  memcpy(g->z + g->n, s, k + 1);
  g->n += k;
}

static int grnd(Gen *g, int n) { return (int)(test_rand(&g->seed) % (uint64_t)n); }

static const char *const keys[] = {"a", "b", "c", "x y", "a.b", "", "k1", "\\u0061", "q\\\"z", "1"};
static const char *const scalars[] = {"0",
                                      "-0",
                                      "1",
                                      "-12",
                                      "1.5",
                                      "-0.25",
                                      "1e3",
                                      "2E-2",
                                      "1.0e+10",
                                      "9223372036854775807",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "123456789012345678901",
                                      "true",
                                      "false",
                                      "null",
                                      "\"\"",
                                      "\"abc\"",
                                      "\"a\\nb\"",
                                      "\"\\u00e9\\ud83d\\ude00\"",
                                      "\"\\/\\\\\\\"\"",
                                      "\"it's\"",
                                      "\"\\u0000x\""};

static void gen_value(Gen *g, int depth) {
  int k = depth > 0 ? grnd(g, 10) : 9;
  if (k < 2) {
    int n = grnd(g, 4);
    gput(g, "[");
    for (int i = 0; i < n; i++) {
      if (i) gput(g, grnd(g, 4) ? "," : " , ");
      gen_value(g, depth - 1);
    }
    gput(g, "]");
  } else if (k < 4) {
    int n = grnd(g, 4);
    gput(g, grnd(g, 3) ? "{" : "{ ");
    for (int i = 0; i < n; i++) {
      if (i) gput(g, ",");
      gput(g, "\"");
      gput(g, keys[grnd(g, 10)]);
      gput(g, grnd(g, 4) ? "\":" : "\" : ");
      gen_value(g, depth - 1);
    }
    gput(g, "}");
  } else {
    gput(g, scalars[grnd(g, (int)(sizeof scalars / sizeof scalars[0]))]);
  }
}

static void gen_path(Gen *g, char *out, size_t cap) {
  static const char *const steps[] = {".a",    ".b",       ".c",       "[0]", "[1]",   "[2]", "[#]",
                                      "[#-1]", ".\"x y\"", ".\"a.b\"", ".k1", "[#-2]", ".1"};
  static const char *const bad[] = {"", "a", "$.", "$[", "$[x]", "$.a[", "$..a", "$a", "$[#+1]"};
  if (grnd(g, 12) == 0) {
    snprintf(out, cap, "%s", bad[grnd(g, 9)]);
    return;
  }
  size_t k = (size_t)snprintf(out, cap, "$");
  int n = grnd(g, 4);
  for (int i = 0; i < n && k < cap - 16; i++)
    k += (size_t)snprintf(out + k, cap - k, "%s", steps[grnd(g, 13)]);
}

/* SQL string literal of z (quotes doubled) appended to buf. */
static void sql_quote(char *buf, size_t cap, const char *z) {
  size_t k = strlen(buf);
  if (k + 1 < cap) buf[k++] = '\'';
  for (; *z && k + 3 < cap; z++) {
    if (*z == '\'') buf[k++] = '\'';
    buf[k++] = *z;
  }
  buf[k++] = '\'';
  buf[k] = 0;
}

static char *random_doc(Gen *g) {
  g->n = 0;
  gput(g, grnd(g, 5) ? "" : " ");
  gen_value(g, 4);
  if (grnd(g, 6) == 0 && g->n > 0) { /* break it (or not) */
    static const char junk[] = "{}[],:\"\\ x01.e-";
    g->z[grnd(g, (int)g->n)] = junk[grnd(g, (int)sizeof junk - 1)];
  }
  return strdup(g->z);
}

TEST(json_random) {
  shale *s;
  sqlite3 *r;
  CHECK_OK(shale_open(":memory:", &s));
  CHECK(sqlite3_open(":memory:", &r) == SQLITE_OK);
  Gen g = {test_seed(), NULL, 0, 0};
  int n = test_long() ? 20000 : 2500, bad = 0, quota = 10;
  static const char *const vals[] = {"1",   "'x'",          "NULL",  "json('[1,{\"z\":2}]')",
                                     "2.5", "json_array()", "'[1]'", "x'00'"};
  char *sql = malloc(16384);
  for (int i = 0; i < n; i++) {
    char *doc = random_doc(&g), *doc2 = random_doc(&g);
    char p1[64], p2[64];
    gen_path(&g, p1, sizeof p1);
    gen_path(&g, p2, sizeof p2);
    sql[0] = 0;
    switch (grnd(&g, 10)) {
      case 0:
        strcat(sql, "SELECT json(");
        sql_quote(sql, 16384, doc);
        strcat(sql, "), json_valid(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ")");
        break;
      case 1:
      case 2:
        strcat(sql, "SELECT json_extract(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p1);
        if (grnd(&g, 3) == 0) {
          strcat(sql, ", ");
          sql_quote(sql, 16384, p2);
        }
        strcat(sql, "), json_type(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p1);
        strcat(sql, ")");
        break;
      case 3: {
        static const char *const fn[] = {"json_set", "json_insert", "json_replace"};
        snprintf(sql, 16384, "SELECT %s(", fn[grnd(&g, 3)]);
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p1);
        strcat(sql, ", ");
        strcat(sql, vals[grnd(&g, 8)]);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p2);
        strcat(sql, ", ");
        strcat(sql, vals[grnd(&g, 8)]);
        strcat(sql, ")");
        break;
      }
      case 4:
        strcat(sql, "SELECT json_remove(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p1);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p2);
        strcat(sql, ")");
        break;
      case 5:
        strcat(sql, "SELECT json_patch(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, doc2);
        strcat(sql, ")");
        break;
      case 6:
      case 7:
        snprintf(sql, 16384, "SELECT * FROM %s(", grnd(&g, 2) ? "json_each" : "json_tree");
        sql_quote(sql, 16384, doc);
        if (grnd(&g, 2)) {
          strcat(sql, ", ");
          sql_quote(sql, 16384, p1);
        }
        strcat(sql, ")");
        break;
      case 8:
        strcat(sql, "SELECT ");
        sql_quote(sql, 16384, doc);
        strcat(sql, grnd(&g, 2) ? " -> " : " ->> ");
        sql_quote(sql, 16384, grnd(&g, 2) ? p1 : (p1[0] == '$' && p1[1] ? p1 + 2 : p1));
        strcat(sql, ", json_array_length(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ", ");
        sql_quote(sql, 16384, p1);
        strcat(sql, ")");
        break;
      default:
        strcat(sql,
               "SELECT json_group_array(value), json_group_object(fullkey, atom) FROM json_tree(");
        sql_quote(sql, 16384, doc);
        strcat(sql, ")");
    }
    bad += !sqldiff_query(s, r, sql, &quota);
    free(doc);
    free(doc2);
  }
  free(sql);
  free(g.z);
  CHECK_EQ(bad, 0);
  shale_close(s);
  sqlite3_close(r);
}

/* Values carry the JSON subtype from one function to the next, through
 * registers, and json_each's value column keeps it too. */
TEST(json_subtypes) {
  static const char *const qs[] = {
      "SELECT json_array(json('[1]'), '[1]', json_quote('x'), json_object('a', json('{}')))",
      "SELECT json_array(value) FROM json_each('[[1],{\"a\":2},3,\"s\"]')",
      "SELECT json_object('v', j -> '$.a') FROM (SELECT '{\"a\":[1]}' AS j)",
      "SELECT json_array(j ->> '$.a') FROM (SELECT '{\"a\":[1]}' AS j)",
      "SELECT json_array(json_extract('{\"a\":[1]}', '$.a'), json_extract('[\"x\"]', '$[0]'))",
      "SELECT json_array(coalesce(NULL, json('[2]')))",
      "SELECT json_group_array(json(x)) FROM (SELECT '[1]' x UNION ALL SELECT '{}')",
      "SELECT json_array(json_group_array(1))",
      "SELECT json_set('{}', '$.a', json_set('{}', '$.b', 1))",
      "SELECT a.value, b.value FROM json_each('[[1,[2]],[3]]') a, json_each(a.value) b",
      "SELECT json_array(v.value) FROM json_tree('{\"a\":{\"b\":[1]}}') v",
      NULL};
  shale *s;
  sqlite3 *r;
  CHECK_OK(shale_open(":memory:", &s));
  CHECK(sqlite3_open(":memory:", &r) == SQLITE_OK);
  int bad = 0, quota = 10;
  for (int i = 0; qs[i]; i++) bad += !sqldiff_query(s, r, qs[i], &quota);
  CHECK_EQ(bad, 0);
  shale_close(s);
  sqlite3_close(r);
}

/* json_each over a column: the table is filled again for each outer row. */
TEST(json_each_correlated) {
  shale *s;
  sqlite3 *r;
  CHECK_OK(shale_open(":memory:", &s));
  CHECK(sqlite3_open(":memory:", &r) == SQLITE_OK);
  const char *setup =
      "CREATE TABLE t(id INTEGER PRIMARY KEY, j TEXT);"
      "INSERT INTO t VALUES (1, '[1,2,3]'), (2, '{\"a\":[4,5],\"b\":6}'), (3, NULL), (4, '[]'),"
      " (5, '\"s\"'), (6, '[[7],[8,9]]');";
  CHECK_OK(shale_exec(s, setup, NULL, NULL, NULL));
  CHECK(sqlite3_exec(r, setup, NULL, NULL, NULL) == SQLITE_OK);
  static const char *const qs[] = {
      "SELECT t.id, e.key, e.value, e.type FROM t, json_each(t.j) e ORDER BY t.id, e.id",
      "SELECT t.id, e.fullkey, e.atom FROM t JOIN json_tree(t.j) e ORDER BY t.id, e.id",
      "SELECT t.id, count(e.key) FROM t LEFT JOIN json_each(t.j) e GROUP BY t.id ORDER BY t.id",
      "SELECT t.id, e.value FROM t, json_each(t.j, '$.a') e ORDER BY 1, 2",
      "SELECT id, (SELECT group_concat(value) FROM json_each(t.j)) FROM t ORDER BY id",
      "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM json_tree(t.j) WHERE atom = 9) ORDER BY id",
      "SELECT t.id, a.key, b.value FROM t, json_each(t.j) a, json_each(a.value) b "
      "ORDER BY 1, 2, 3",
      "SELECT t.id, e.value FROM t, json_each(t.j) e WHERE e.value > 2 ORDER BY 1, 2",
      "SELECT sum(e.value) FROM t, json_each(t.j) e WHERE e.type = 'integer'",
      /* the function written before the table its argument reads */
      "SELECT t.id, e.key, e.value FROM json_each(t.j) e, t ORDER BY 1, 2, 3",
      "SELECT t.id, b.value FROM json_each(a.value) b, json_each(t.j) a, t ORDER BY 1, 2",
      "SELECT t.id, e.fullkey FROM json_tree(t.j) e JOIN t ON t.id > 1 ORDER BY 1, 2", NULL};
  int bad = 0, quota = 10;
  for (int i = 0; qs[i]; i++) bad += !sqldiff_query(s, r, qs[i], &quota);
  CHECK_EQ(bad, 0);
  shale_close(s);
  sqlite3_close(r);
}
