/*
 * test_fts3.c -- FTS3/FTS4 (src/ext/fts3/) against the reference SQLite:
 *
 *  - sqlite_builds: per seed, SQLite creates an fts3 or fts4 table (1-3
 *    columns, optionally declared with types) and writes random documents
 *    over many transactions, with deletes and updates, so the file holds
 *    segments of several levels, segments too big for their root (leaves
 *    and interior nodes in %_segments) and deletion entries, sometimes
 *    'optimize'd; then Shale opens the file and both engines answer the
 *    same generated MATCH queries (terms, prefixes, phrases, NEAR/N, AND,
 *    OR, NOT, parentheses, column filters, ^first-token terms, malformed
 *    ones with SQLite's message), in docid order both ways, on a column, with docid lookups
 *    and full scans.
 *  - shale_writes: Shale creates the table (or SQLite did and wrote it
 *    first) and writes random documents over many transactions; SQLite's
 *    integrity-check passes and both answer the same queries; merges of
 *    full levels, leaves in %_segments, 'optimize', and %_stat/%_docsize
 *    equal to what SQLite's 'rebuild' computes.
 *  - shale_creates: a table created by Shale is read by SQLite as an empty
 *    one and passes its integrity-check; DROP TABLE removes it.
 *  - aux_functions: offsets(), snippet() (random column and size) and
 *    matchinfo() (random formats) of generated queries, both orders, on
 *    files SQLite built, and their errors.
 *  - shale_commands, command_errors, shale_savepoints: 'rebuild',
 *    'merge=', 'automerge=', 'integrity-check' mixed with writes (SQLite's
 *    integrity-check after), the commands' errors and %_stat, and random
 *    SAVEPOINT / ROLLBACK TO / RELEASE scripts giving SQLite's rows.
 *  - tokenizers, options: the same three checks (SQLite builds and both
 *    answer; Shale writes on and SQLite's integrity-check passes; Shale
 *    creates and writes) for every tokenizer argument (porter, simple's
 *    delimiters, unicode61's remove_diacritics/tokenchars/separators) and
 *    FTS4 option (notindexed, matchinfo=fts3, compress, prefix,
 *    languageid with writes and queries per language, order=desc), on
 *    documents with diacritics and several scripts.
 *  - tokenize_table: random text, broken UTF-8 included, through
 *    fts3tokenize with each tokenizer on both engines.
 *
 * Invariants:
 *  1. Each query runs on both engines over the same file; results compared
 *     as text.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tcmp.h"
#include "../test.h"
#include "shale.h"

typedef TcmpOut Out;
#define out_add tcmp_add
#define out_fmt tcmp_fmt

static char *q_sqlite(sqlite3 *db, const char *sql, const char *arg) {
  return tcmp_sqlite(db, sql, arg, NULL);
}
static char *q_shale(shale *db, const char *sql, const char *arg) {
  return tcmp_shale(db, sql, arg, NULL);
}

static int exec_sqlite(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "sqlite: %.200s: %s", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}

/* ---- random documents and queries ---- */

static const char *const words[] = {
    "apple", "apply", "ape", "banana", "band", "bandit", "can", "cane", "candle", "dog", "dot",
    "dote", "echo", "eel", "fig", "fight", "go", "gone", "hat", "hate", "ink", "jam", "jazz",
    "kite", "lamp", "lam", "moon", "moo", "night", "nine", "oak", "pear", "peer", "quiz", "rain",
    "rainbow", "sun", "sunny", "tree", "trees", "umbra", "vivid", "wind", "x", "y1", "z9z", "Apple",
    "DOG", "café", "naïve", "über", "ünder", "a", "I",
    /* for porter and unicode61: stems, diacritics, scripts, long tokens */
    "running", "runs", "caresses", "ponies", "ies", "sses", "ating", "relational", "conditional",
    "generalizations", "hopeful", "goodness", "connection", "sayying", "internationalization",
    "abcdefghijklmnopqrstuvwxyz", "a1b2c3d4e5", "x-ray", "foo_bar", "Résumé", "ÉCOLE", "façade",
    "Ærø", "straße", "Ελλάδα", "ελλαδα", "Москва", "москва", "日本語", "ﬁne", "ǅemal", "ñandú",
    "Ångström", "e\xcc\x81t\xc3\xa9"};
#define NWORDS (int)(sizeof words / sizeof words[0])
static const char *const seps[] = {" ", " ", " ", ", ", ". ", "-", " (", ") ", "\n", "'"};
#define NSEPS (int)(sizeof seps / sizeof seps[0])

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static int rn(uint64_t *s, int n) { return (int)(rnd(s) % (uint64_t)n); }

static void gen_doc(uint64_t *rs, Out *o, int maxw) {
  int n = rn(rs, maxw + 1);
  for (int i = 0; i < n; i++) {
    if (i) out_fmt(o, "%s", seps[rn(rs, NSEPS)]);
    out_fmt(o, "%s", words[rn(rs, NWORDS)]);
  }
}

static void sql_lit(Out *o, const char *z) {
  out_add(o, "'", 1);
  for (; *z; z++) {
    out_add(o, z, 1);
    if (*z == '\'') out_add(o, "'", 1);
  }
  out_add(o, "'", 1);
}

static const char *const colnames[] = {"a", "body", "Title"};

static void gen_leaf(uint64_t *rs, Out *o, int ncol) {
  int k = rn(rs, 12);
  if (k < 2 && ncol > 1) out_fmt(o, "%s:", colnames[rn(rs, ncol)]);
  if (k == 2) out_fmt(o, "%s:", colnames[rn(rs, ncol)]);
  const char *w = words[rn(rs, NWORDS)];
  const char *hat = rn(rs, 6) ? "" : "^"; /* first token of a column */
  int r = rn(rs, 8);
  if (r == 0) {
    int n = 1 + rn(rs, 3);
    out_fmt(o, "%s%.*s*", hat, n, w);
  } else if (r == 1 || r == 2) {
    out_fmt(o, "\"%s%s", hat, w);
    int n = 1 + rn(rs, 3);
    for (int i = 0; i < n; i++)
      out_fmt(o, " %s%s%s", rn(rs, 10) ? "" : "^", words[rn(rs, NWORDS)], rn(rs, 6) ? "" : "*");
    out_add(o, "\"", 1);
  } else {
    out_fmt(o, "%s%s", hat, w);
  }
}

static void gen_query(uint64_t *rs, Out *o, int depth, int ncol) {
  int k = depth > 2 ? 0 : rn(rs, 10);
  if (k < 4) {
    gen_leaf(rs, o, ncol);
    return;
  }
  if (k == 4) {
    out_add(o, "(", 1);
    gen_query(rs, o, depth + 1, ncol);
    out_add(o, ")", 1);
    return;
  }
  if (k == 5) {
    gen_leaf(rs, o, ncol);
    if (rn(rs, 2))
      out_fmt(o, " NEAR/%d ", rn(rs, 4));
    else
      out_fmt(o, " NEAR ");
    gen_leaf(rs, o, ncol);
    return;
  }
  static const char *const ops[] = {" AND ", " OR ", " NOT ", " ", " or "};
  gen_query(rs, o, depth + 1, ncol);
  out_fmt(o, "%s", ops[rn(rs, 5)]);
  gen_query(rs, o, depth + 1, ncol);
}

static const char *const bad_queries[] = {
    "apple OR",
    "AND apple",
    "(apple",
    "apple)",
    "\"apple",
    "NEAR",
    "apple NEAR",
    "apple OR OR pear",
    "NOT apple",
    "apple NOT",
    "()",
    "apple ()",
    "a:",
    "body:\"x\"",
    "!!!",
    "",
    "   ",
    "*",
    "apple-pear",
    "apple NEAR/2 (pear OR dog)",
    "(apple) NEAR pear",
    "APPLE*",
    "\"\"",
    "apple AND () pear",
    "NEAR/3",
    "apple NEAR/x pear",
    "ORapple",
    "apple (OR) pear",
    "Title:apple body:pear",
    "title:APPLE",
    "apple OR ()",
    "() apple",
    "apple NOT ()",
    "apple NOT () pear",
    "() OR apple",
    "apple () OR pear",
    "(())",
    "apple (() pear)",
    "apple NOT (a:\"pear\")",
};

/* Both engines give the same rows for each of sql[0..n). */
static void compare_fixed(sqlite3 *ref, shale *db, const char *const *sql, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char *a = q_sqlite(ref, sql[i], NULL), *b = q_shale(db, sql[i], NULL);
    if (strcmp(a, b))
      test_fail(__FILE__, __LINE__, "%s:\nsqlite: %.600s\nshale:  %.600s", sql[i], a, b);
    free(a);
    free(b);
  }
}

/* Arguments the tables are created with after their columns (the
 * tokenizer and option cases); the option cases have all three columns,
 * and lang_col names a languageid= column the writes set (0 to 2) and
 * queries constrain. */
static const char *table_opts = "";
static int all_cols;
static const char *lang_col;
/* The table the writes go to (content= cases: the content table, whose
 * triggers keep t), and whether they are inserts only (contentless). */
static const char *write_table = "t";
static int insert_only;

/* Both engines give the same answer (rows or error) to sql with ?1 = arg;
 * a difference is a failure. */
static int same_answer(sqlite3 *ref, shale *db, const char *sql, const char *arg) {
  char *a = q_sqlite(ref, sql, arg), *b = q_shale(db, sql, arg);
  int same = !strcmp(a, b);
  if (!same)
    test_fail(__FILE__, __LINE__, "%s [%s]:\nsqlite: %.600s\nshale:  %.600s", sql, arg, a, b);
  free(a);
  free(b);
  return same;
}

/* Both engines answer the generated queries on the file at path. */
static void compare_queries(const char *path, uint64_t *rs, int nq, int ncol) {
  sqlite3 *ref = NULL;
  shale *db = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  CHECK_OK(shale_open(path, &db));
  if (!ref || !db) return;
  char forms[8][160];
  int nforms = 0;
  snprintf(forms[nforms++], 160, "SELECT docid FROM t WHERE t MATCH ?1");
  snprintf(forms[nforms++], 160, "SELECT rowid, * FROM t WHERE t MATCH ?1 ORDER BY docid DESC");
  snprintf(forms[nforms++], 160, "SELECT count(*) FROM t WHERE t MATCH ?1 AND docid > 40");
  snprintf(forms[nforms++], 160, "SELECT docid, %s FROM t WHERE %s MATCH ?1", colnames[0],
           colnames[ncol - 1]);
  if (lang_col) {
    snprintf(forms[nforms++], 160, "SELECT docid, %s FROM t WHERE t MATCH ?1 AND %s = 1", lang_col,
             lang_col);
    snprintf(forms[nforms++], 160,
             "SELECT docid, * FROM t WHERE t MATCH ?1 AND %s = 2 ORDER BY 1 DESC", lang_col);
  }
  int fails = 0;
  for (int q = 0; q < nq + (int)(sizeof bad_queries / sizeof bad_queries[0]) && fails < 5; q++) {
    Out qs = {0};
    out_add(&qs, "", 0);
    if (q < nq)
      gen_query(rs, &qs, 0, ncol);
    else
      out_fmt(&qs, "%s", bad_queries[q - nq]);
    fails += !same_answer(ref, db, forms[q % nforms], qs.p);
    free(qs.p);
  }
  static const char *const plain[] = {
      "SELECT docid, * FROM t ORDER BY docid",
      "SELECT docid, * FROM t ORDER BY docid DESC LIMIT 20",
      "SELECT * FROM t WHERE docid = 7",
      "SELECT * FROM t WHERE rowid = 3",
      "SELECT docid, __langid FROM t WHERE docid BETWEEN 10 AND 14",
      "SELECT count(*) FROM t",
      "SELECT * FROM t WHERE docid = 'x'",
  };
  compare_fixed(ref, db, plain, sizeof plain / sizeof plain[0]);
  sqlite3_close(ref);
  CHECK_OK(shale_close(db));
}

typedef int (*ExecFn)(void *db, const char *sql);
static int ex_sqlite(void *db, const char *sql) { return exec_sqlite(db, sql); }
static int ex_shale(void *db, const char *sql) {
  char *err = NULL;
  int rc = shale_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "shale: %.200s: %s", sql, err ? err : "?");
  shale_free(err);
  return rc;
}

/* ntx transactions of random inserts (with docid gaps), deletes and
 * updates through ex; *next is the next docid. */
static void write_docs(void *db, ExecFn ex, uint64_t *rs, int ncol, int ntx, int per_tx,
                       int64_t *next) {
  Out sql = {0};
  for (int tx = 0; tx < ntx; tx++) {
    sql.n = 0;
    out_fmt(&sql, "BEGIN;");
    for (int r = 0; r < per_tx; r++) {
      int kind = insert_only ? 9 : rn(rs, 10);
      if (kind == 0 && *next > 1) {
        out_fmt(&sql, "DELETE FROM %s WHERE docid = %lld;", write_table,
                (long long)(1 + rn(rs, (int)*next)));
        continue;
      }
      if (kind == 1 && *next > 1) {
        out_fmt(&sql, "UPDATE %s SET %s = ", write_table, colnames[rn(rs, ncol)]);
        Out d = {0};
        out_add(&d, "", 0);
        gen_doc(rs, &d, 12);
        sql_lit(&sql, d.p);
        free(d.p);
        out_fmt(&sql, " WHERE docid = %lld;", (long long)(1 + rn(rs, (int)*next)));
        continue;
      }
      if (rn(rs, 4) == 0) *next += rn(rs, 300); /* gaps: bigger deltas */
      int64_t id = (*next)++;
      out_fmt(&sql, "INSERT INTO %s(docid", write_table);
      for (int c = 0; c < ncol; c++) out_fmt(&sql, ", %s", colnames[c]);
      if (lang_col) out_fmt(&sql, ", %s", lang_col);
      out_fmt(&sql, ") VALUES(%lld", (long long)id);
      if (lang_col) out_fmt(&sql, ", %d", rn(rs, 3));
      for (int c = 0; c < ncol; c++) {
        Out d = {0};
        out_add(&d, "", 0);
        gen_doc(rs, &d, rn(rs, 8) ? 12 : 200);
        out_add(&sql, ", ", 2);
        sql_lit(&sql, d.p);
        free(d.p);
      }
      out_fmt(&sql, ");");
    }
    out_fmt(&sql, "COMMIT;");
    ex(db, sql.p);
  }
  free(sql.p);
}

/* content=src: the content table and the triggers SQLite's documentation
 * gives for keeping t in step with it. */
static const char external_src[] =
    "CREATE TABLE src(docid INTEGER PRIMARY KEY, a, body, Title);"
    "CREATE TRIGGER src_bu BEFORE UPDATE ON src BEGIN DELETE FROM t WHERE docid = old.rowid; END;"
    "CREATE TRIGGER src_bd BEFORE DELETE ON src BEGIN DELETE FROM t WHERE docid = old.rowid; END;"
    "CREATE TRIGGER src_au AFTER UPDATE ON src BEGIN INSERT INTO t(docid, a, body, Title) "
    "VALUES(new.rowid, new.a, new.body, new.Title); END;"
    "CREATE TRIGGER src_ai AFTER INSERT ON src BEGIN INSERT INTO t(docid, a, body, Title) "
    "VALUES(new.rowid, new.a, new.body, new.Title); END;";

static int create_table(void *db, ExecFn ex, uint64_t *rs, const char *module) {
  int ncol = all_cols ? 3 : 1 + rn(rs, 3);
  if (!strcmp(write_table, "src")) ex(db, external_src);
  Out sql = {0};
  out_fmt(&sql, "CREATE VIRTUAL TABLE t USING %s(", module);
  for (int i = 0; i < ncol; i++)
    out_fmt(&sql, "%s%s%s", i ? ", " : "", colnames[i], rn(rs, 3) ? "" : " TEXT");
  out_fmt(&sql, "%s)", table_opts);
  ex(db, sql.p);
  free(sql.p);
  return ncol;
}

/* SQLite's integrity-check of the table in path passes (a contentless
 * table, the insert_only cases, has no content to check against). */
static void check_sqlite_integrity(const char *path) {
  if (insert_only) return;
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  char *ic = q_sqlite(ref, "INSERT INTO t(t) VALUES('integrity-check')", NULL);
  if (strcmp(ic, "")) test_fail(__FILE__, __LINE__, "integrity-check: %s", ic);
  free(ic);
  sqlite3_close(ref);
}

/* SQLite writes ntx transactions of documents into a new table. */
static int sqlite_build(const char *path, uint64_t *rs, const char *module, int ntx, int per_tx,
                        int optimize, int64_t *next) {
  sqlite3 *ref = NULL;
  remove(path);
  CHECK_OK(sqlite3_open(path, &ref));
  int ncol = create_table(ref, ex_sqlite, rs, module);
  *next = 1;
  write_docs(ref, ex_sqlite, rs, ncol, ntx, per_tx, next);
  if (optimize) exec_sqlite(ref, "INSERT INTO t(t) VALUES('optimize')");
  sqlite3_close(ref);
  check_sqlite_integrity(path);
  return ncol;
}

static void sqlite_builds(const char *module, uint64_t salt) {
  int nseed = test_long() ? 12 : 4;
  for (int s = 0; s < nseed; s++) {
    uint64_t rs = test_seed() * 2654435761u + salt + (uint64_t)s * 7919 + 1;
    const char *path = test_path("fts3.db");
    int64_t next;
    int ncol = sqlite_build(path, &rs, module, 6 + rn(&rs, 30), 5 + rn(&rs, 60), s % 3 == 2, &next);
    compare_queries(path, &rs, test_long() ? 2000 : 400, ncol);
  }
}

TEST(fts3_sqlite_builds) { sqlite_builds("fts3", 0); }
TEST(fts4_sqlite_builds) { sqlite_builds("fts4", 101); }

/* A big table: segments with leaves and interior nodes. */
TEST(fts4_sqlite_builds_big) {
  uint64_t rs = test_seed() + 77;
  const char *path = test_path("fts3big.db");
  int64_t next;
  int ncol = sqlite_build(path, &rs, "fts4", 40, 400, 0, &next);
  compare_queries(path, &rs, 300, ncol);
}

static void compare_aux(const char *path, uint64_t *rs, int nq, int ncol, int fts4);

/* Shale writes the table (creating it, or after SQLite did): SQLite's
 * integrity-check passes and both answer the same. */
static void shale_writes(const char *module, uint64_t salt, int after_sqlite) {
  int nseed = test_long() ? 10 : 3;
  for (int s = 0; s < nseed; s++) {
    uint64_t rs = test_seed() * 2654435761u + salt + (uint64_t)s * 104729 + 3;
    char name[32];
    snprintf(name, sizeof name, "fts3w%d.db", s); /* kept apart for a failure's inspection */
    const char *path = test_path(name);
    int64_t next = 1;
    int ncol;
    if (after_sqlite) {
      ncol = sqlite_build(path, &rs, module, 3 + rn(&rs, 20), 5 + rn(&rs, 40), 0, &next);
    } else {
      remove(path);
    }
    shale *db = NULL;
    CHECK_OK(shale_open(path, &db));
    if (!after_sqlite) ncol = create_table(db, ex_shale, &rs, module);
    write_docs(db, ex_shale, &rs, ncol, 5 + rn(&rs, 30), 5 + rn(&rs, 60), &next);
    if (s % 3 == 2) ex_shale(db, "INSERT INTO t(t) VALUES('optimize')");
    CHECK_OK(shale_close(db));
    check_sqlite_integrity(path);
    compare_queries(path, &rs, test_long() ? 1000 : 200, ncol);
    compare_aux(path, &rs, test_long() ? 600 : 120, ncol, module[3] == '4');
  }
}

TEST(fts3_shale_writes) { shale_writes("fts3", 5, 0); }
TEST(fts4_shale_writes) { shale_writes("fts4", 6, 0); }
TEST(fts4_shale_writes_after_sqlite) { shale_writes("fts4", 7, 1); }

/* %_stat and %_docsize are what SQLite's own 'rebuild' computes. */
static void check_totals(sqlite3 *ref) {
  char *st = q_sqlite(ref, "SELECT hex(value) FROM t_stat WHERE id = 0", NULL);
  char *ds = q_sqlite(ref, "SELECT docid, hex(size) FROM t_docsize ORDER BY docid", NULL);
  exec_sqlite(ref, "INSERT INTO t(t) VALUES('rebuild')");
  char *st2 = q_sqlite(ref, "SELECT hex(value) FROM t_stat WHERE id = 0", NULL);
  char *ds2 = q_sqlite(ref, "SELECT docid, hex(size) FROM t_docsize ORDER BY docid", NULL);
  CHECK(!strcmp(st, st2));
  CHECK(!strcmp(ds, ds2));
  free(st);
  free(st2);
  free(ds);
  free(ds2);
}

/* Enough transactions to merge level 0 into level 1 (16 segments) twice,
 * and a big one for leaves in %_segments. */
TEST(fts4_shale_merges) {
  uint64_t rs = test_seed() + 991;
  const char *path = test_path("fts3m.db");
  remove(path);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  int ncol = create_table(db, ex_shale, &rs, "fts4");
  int64_t next = 1;
  write_docs(db, ex_shale, &rs, ncol, 40, 4, &next);
  write_docs(db, ex_shale, &rs, ncol, 1, 600, &next);
  CHECK_OK(shale_close(db));
  check_sqlite_integrity(path);
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  char *lv = q_sqlite(ref, "SELECT count(*) FROM t_segdir WHERE level = 1", NULL);
  CHECK(strcmp(lv, "0|\n") != 0);
  free(lv);
  lv = q_sqlite(ref, "SELECT count(*) > 0 FROM t_segments", NULL);
  CHECK(!strcmp(lv, "1|\n"));
  free(lv);
  /* the same statistics as SQLite's after a rebuild */
  check_totals(ref);
  sqlite3_close(ref);
  compare_queries(path, &rs, 200, ncol);
}

TEST(fts3_shale_creates) {
  const char *path = test_path("fts3c.db");
  remove(path);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  CHECK_OK(shale_exec(db,
                      "CREATE VIRTUAL TABLE t USING fts4(a, b); "
                      "CREATE VIRTUAL TABLE u USING fts3(x)",
                      NULL, NULL, NULL));
  char *r = q_shale(db, "SELECT count(*) FROM t WHERE t MATCH 'x'", NULL);
  CHECK(!strcmp(r, "0|\n"));
  free(r);
  CHECK_OK(shale_close(db));
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  char *a = q_sqlite(ref, "INSERT INTO t(t) VALUES('integrity-check')", NULL);
  CHECK(!strcmp(a, ""));
  free(a);
  a = q_sqlite(ref, "SELECT sql FROM sqlite_master ORDER BY name", NULL);
  CHECK(strstr(a,
               "CREATE TABLE 't_segdir'(level INTEGER,idx INTEGER,start_block INTEGER,"
               "leaves_end_block INTEGER,end_block INTEGER,root BLOB,PRIMARY KEY(level, idx))") !=
        NULL);
  free(a);
  exec_sqlite(ref, "INSERT INTO t VALUES('hello world', 'x')");
  sqlite3_close(ref);
  CHECK_OK(shale_open(path, &db));
  r = q_shale(db, "SELECT docid, a FROM t WHERE t MATCH 'hello'", NULL);
  CHECK(!strcmp(r, "1|hello world|\n"));
  free(r);
  CHECK_OK(shale_exec(db, "DROP TABLE u", NULL, NULL, NULL));
  r = q_shale(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'u%'", NULL);
  CHECK(!strcmp(r, "0|\n"));
  free(r);
  CHECK_OK(shale_close(db));
}

/* ---- auxiliary functions ---- */

/* A matchinfo format of the characters the table knows. */
static void gen_format(uint64_t *rs, Out *o, int fts4) {
  static const char all[] = "pcsxybnal";
  int n = rn(rs, 5);
  for (int i = 0; i < n; i++) out_fmt(o, "%c", all[rn(rs, fts4 ? 9 : 6)]);
}

/* Both engines give the same offsets(), snippet() and matchinfo() for
 * the generated queries on the file at path. */
static void compare_aux(const char *path, uint64_t *rs, int nq, int ncol, int fts4) {
  sqlite3 *ref = NULL;
  shale *db = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  CHECK_OK(shale_open(path, &db));
  if (!ref || !db) return;
  int fails = 0;
  for (int q = 0; q < nq && fails < 5; q++) {
    Out qs = {0}, sql = {0};
    out_add(&qs, "", 0);
    gen_query(rs, &qs, 0, ncol);
    if (strstr(qs.p, "NEAR") && strstr(qs.p, "OR")) { /* (see docs/compat.md) */
      free(qs.p);
      q--;
      continue;
    }
    const char *order = rn(rs, 3) ? "" : " ORDER BY docid DESC";
    const char *target = rn(rs, 5) ? "t" : colnames[rn(rs, ncol)];
    switch (q % 4) {
      case 0:
        out_fmt(&sql, "SELECT docid, offsets(t) FROM t WHERE %s MATCH ?1%s", target, order);
        break;
      case 1:
        if (rn(rs, 4) == 0) {
          out_fmt(&sql, "SELECT docid, snippet(t) FROM t WHERE %s MATCH ?1%s", target, order);
          break;
        }
        out_fmt(&sql,
                "SELECT docid, snippet(t, '[', ']', '...', %d, %d) FROM t WHERE %s MATCH ?1%s",
                rn(rs, 5) ? -1 : rn(rs, ncol + 1), rn(rs, 6) ? rn(rs, 129) - 64 : rn(rs, 9) - 4,
                target, order);
        break;
      case 2:
        out_fmt(&sql, "SELECT docid, hex(matchinfo(t)) FROM t WHERE %s MATCH ?1%s", target, order);
        break;
      default:
        out_fmt(&sql, "SELECT docid, hex(matchinfo(t, '");
        gen_format(rs, &sql, fts4);
        out_fmt(&sql, "')) FROM t WHERE %s MATCH ?1%s", target, order);
        break;
    }
    char *a = q_sqlite(ref, sql.p, qs.p), *b = q_shale(db, sql.p, qs.p);
    if (strcmp(a, b)) {
      size_t at = 0, line = 0; /* from the first line that differs */
      for (size_t i = 0; a[i] && a[i] == b[i]; i++)
        if (a[i] == '\n') line = i + 1;
      at = line;
      test_fail(__FILE__, __LINE__, "%s [%s]:\nsqlite: %.800s\nshale:  %.800s", sql.p, qs.p, a + at,
                b + at);
      fails++;
    }
    free(a);
    free(b);
    free(qs.p);
    free(sql.p);
  }
  static const char *const fixed[] = {
      "SELECT offsets(t), snippet(t), hex(matchinfo(t)) FROM t LIMIT 3",
      "SELECT hex(matchinfo(t, 'q')) FROM t WHERE t MATCH 'apple'",
      "SELECT hex(matchinfo(t, 'pcnalsxyb')) FROM t WHERE t MATCH 'apple'",
      "SELECT hex(matchinfo(t, '')) FROM t WHERE t MATCH 'apple'",
      "SELECT hex(matchinfo(t, NULL)) FROM t WHERE t MATCH 'apple'",
      "SELECT offsets(a) FROM t WHERE t MATCH 'apple'",
      "SELECT snippet(t, 1, 2, 3, 4, 5, 6) FROM t WHERE t MATCH 'apple'",
      "SELECT snippet(t, NULL) FROM t WHERE t MATCH 'apple'",
      "SELECT snippet(t, '', '', '', -1, 0) FROM t WHERE t MATCH 'apple'",
      "SELECT docid, snippet(t, '<', '>', '', 7, 3) FROM t WHERE t MATCH 'apple OR dog'",
      "SELECT docid, offsets(t) FROM t WHERE t MATCH 'apple apple OR dog NEAR/2 dog'",
      "SELECT docid, hex(matchinfo(t, 'xs')) FROM t WHERE t MATCH '\"apple pear\" NOT dog'",
      "SELECT count(*) FROM t WHERE t MATCH 'apple' AND offsets(t) LIKE '%'",
  };
  compare_fixed(ref, db, fixed, sizeof fixed / sizeof fixed[0]);
  sqlite3_close(ref);
  CHECK_OK(shale_close(db));
}

static void aux_on_sqlite_builds(const char *module, uint64_t salt) {
  int nseed = test_long() ? 10 : 3;
  for (int s = 0; s < nseed; s++) {
    uint64_t rs = test_seed() * 2654435761u + salt + (uint64_t)s * 6151 + 11;
    const char *path = test_path("fts3aux.db");
    int64_t next;
    int ncol = sqlite_build(path, &rs, module, 4 + rn(&rs, 12), 5 + rn(&rs, 30), s % 3 == 1, &next);
    compare_aux(path, &rs, test_long() ? 3000 : 600, ncol, module[3] == '4');
  }
}

TEST(fts3_aux_functions) { aux_on_sqlite_builds("fts3", 211); }
TEST(fts4_aux_functions) { aux_on_sqlite_builds("fts4", 212); }

/* ---- special commands and savepoints ---- */

static char *file_rows(const char *path, const char *sql) {
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  char *r = q_sqlite(ref, sql, NULL);
  sqlite3_close(ref);
  return r;
}

/* Shale's 'rebuild', 'merge=', 'automerge=' and 'integrity-check' mixed
 * with writes on a file SQLite built: SQLite's integrity-check passes and
 * both answer the same; a changed %_content fails Shale's check as
 * SQLite's. */
TEST(fts4_shale_commands) {
  int nseed = test_long() ? 8 : 3;
  for (int s = 0; s < nseed; s++) {
    uint64_t rs = test_seed() * 2654435761u + (uint64_t)s * 7777 + 41;
    const char *path = test_path("fts3cmd.db");
    int64_t next;
    const char *module = s % 2 ? "fts3" : "fts4";
    int ncol = sqlite_build(path, &rs, module, 10 + rn(&rs, 20), 5 + rn(&rs, 20), 0, &next);
    shale *db = NULL;
    CHECK_OK(shale_open(path, &db));
    static const char *const cmds[] = {"rebuild",     "merge=100,2", "merge=3",         "merge=1,4",
                                       "automerge=2", "automerge=0", "integrity-check", "optimize"};
    for (int round = 0; round < 8; round++) {
      write_docs(db, ex_shale, &rs, ncol, 1 + rn(&rs, 6), 3 + rn(&rs, 20), &next);
      char sql[80];
      snprintf(sql, sizeof sql, "INSERT INTO t(t) VALUES('%s')",
               cmds[rn(&rs, (int)(sizeof cmds / sizeof cmds[0]))]);
      if (rn(&rs, 2)) { /* inside a transaction that also wrote */
        Out tx = {0};
        out_fmt(&tx, "BEGIN; INSERT INTO t(docid, %s) VALUES(%lld, 'apple pear dog'); %s; COMMIT",
                colnames[0], (long long)next++, sql);
        ex_shale(db, tx.p);
        free(tx.p);
      } else {
        ex_shale(db, sql);
      }
    }
    CHECK_OK(shale_close(db));
    check_sqlite_integrity(path);
    compare_queries(path, &rs, 150, ncol);
    compare_aux(path, &rs, 100, ncol, module[3] == '4');
    sqlite3 *ref = NULL;
    CHECK_OK(sqlite3_open(path, &ref));
    if (!strcmp(module, "fts4")) check_totals(ref);
    /* a content row changed behind the index: both checks fail alike */
    exec_sqlite(ref,
                "UPDATE t_content SET c0a = 'zzz' WHERE docid = (SELECT max(docid) FROM "
                "t_content)");
    char *a = q_sqlite(ref, "INSERT INTO t(t) VALUES('integrity-check')", NULL);
    sqlite3_close(ref);
    CHECK_OK(shale_open(path, &db));
    char *b = q_shale(db, "INSERT INTO t(t) VALUES('integrity-check')", NULL);
    CHECK(!strcmp(a, b));
    CHECK(shale_extended_errcode(db) == 267); /* SQLITE_CORRUPT_VTAB */
    if (strcmp(a, b)) test_fail(__FILE__, __LINE__, "sqlite: %s\nshale:  %s", a, b);
    free(a);
    free(b);
    CHECK_OK(shale_close(db));
  }
}

/* Commands' arguments and errors as SQLite reads them, and what they
 * leave in %_stat. */
TEST(fts3_command_errors) {
  static const char *const cmds[] = {
      "automerge=4",     "automerge=x", "automerge=1",  "automerge=20", "automerge=3x",
      "automerge= 5",    "automerge=",  "automerge=-1", "Automerge=6",  "merge=",
      "merge=3,",        "merge=3,1",   "merge=3,2",    "merge=-3,2",   "MERGE=10",
      "merge=0,0",       "merge=x,2",   "flush",        "bogus",        "Rebuild",
      "INTEGRITY-CHECK", "optimize ",   "rebuild2",     "merge=5,2x",   "automerge=16",
      "automerge=17",    "automerge=0",
  };
  for (int m = 0; m < 2; m++) {
    const char *module = m ? "fts4" : "fts3";
    char pa[64], pb[64];
    snprintf(pa, sizeof pa, "%s", test_path("fts3ea.db"));
    snprintf(pb, sizeof pb, "%s", test_path("fts3eb.db"));
    remove(pa);
    remove(pb);
    sqlite3 *ref = NULL;
    shale *db = NULL;
    CHECK_OK(sqlite3_open(pa, &ref));
    CHECK_OK(shale_open(pb, &db));
    char create[96];
    snprintf(create, sizeof create, "CREATE VIRTUAL TABLE t USING %s(a, b)", module);
    exec_sqlite(ref, create);
    ex_shale(db, create);
    exec_sqlite(ref, "INSERT INTO t VALUES('apple pear', 'dog'), ('pear', 'cat')");
    ex_shale(db, "INSERT INTO t VALUES('apple pear', 'dog'), ('pear', 'cat')");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
      char sql[96];
      snprintf(sql, sizeof sql, "INSERT INTO t(t) VALUES('%s')", cmds[i]);
      char *a = q_sqlite(ref, sql, NULL), *b = q_shale(db, sql, NULL);
      if (strcmp(a, b)) test_fail(__FILE__, __LINE__, "%s:\nsqlite: %s\nshale:  %s", sql, a, b);
      free(a);
      free(b);
      const char *q = "SELECT id, quote(value) FROM t_stat ORDER BY id";
      a = q_sqlite(ref, q, NULL);
      b = q_shale(db, q, NULL);
      if (strcmp(a, b))
        test_fail(__FILE__, __LINE__, "after %s:\nsqlite: %s\nshale:  %s", sql, a, b);
      free(a);
      free(b);
    }
    sqlite3_close(ref);
    CHECK_OK(shale_close(db));
    check_sqlite_integrity(pb);
  }
}

/* ROLLBACK TO inside a transaction that wrote: the pending terms (and
 * totals) go back with the rows. The same script on SQLite gives the same
 * rows; SQLite's integrity-check passes on Shale's file. */
TEST(fts4_shale_savepoints) {
  int nseed = test_long() ? 10 : 4;
  for (int s = 0; s < nseed; s++) {
    uint64_t rs = test_seed() * 2654435761u + (uint64_t)s * 3571 + 17;
    const char *module = s % 2 ? "fts3" : "fts4";
    char pa[64], pb[64];
    snprintf(pa, sizeof pa, "%s", test_path("fts3sa.db"));
    snprintf(pb, sizeof pb, "%s", test_path("fts3sb.db"));
    remove(pa);
    remove(pb);
    Out script = {0};
    out_fmt(&script, "CREATE VIRTUAL TABLE t USING %s(a, body);", module);
    int64_t id = 1;
    for (int tx = 0; tx < 6; tx++) {
      out_fmt(&script, "BEGIN;");
      for (int k = 0; k < 12; k++) {
        int op = rn(&rs, 9);
        if (op == 5 && rn(&rs, 4)) op = 6; /* a rebuild would mend what a failed rollback left */
        if (op == 0 || op == 8)
          out_fmt(&script, "SAVEPOINT s%d;", rn(&rs, 2));
        else if (op == 1 || op == 7)
          out_fmt(&script, "ROLLBACK TO s%d;", rn(&rs, 2));
        else if (op == 2)
          out_fmt(&script, "RELEASE s%d;", rn(&rs, 2));
        else if (op == 3 && id > 1)
          out_fmt(&script, "DELETE FROM t WHERE docid = %lld;", (long long)(1 + rn(&rs, (int)id)));
        else if (op == 4 && id > 1)
          out_fmt(&script, "UPDATE t SET body = '%s %s' WHERE docid = %lld;", words[rn(&rs, 20)],
                  words[rn(&rs, 20)], (long long)(1 + rn(&rs, (int)id)));
        else if (op == 5)
          out_fmt(&script, "INSERT INTO t(t) VALUES('%s');", rn(&rs, 2) ? "optimize" : "rebuild");
        else
          out_fmt(&script, "INSERT INTO t(docid, a, body) VALUES(%lld, '%s %s', '%s');",
                  (long long)id++, words[rn(&rs, 20)], words[rn(&rs, 20)], words[rn(&rs, 20)]);
      }
      out_fmt(&script, "COMMIT;");
    }
    /* each statement on its own: an unknown savepoint is an error, both ways */
    sqlite3 *ref = NULL;
    shale *db = NULL;
    CHECK_OK(sqlite3_open(pa, &ref));
    CHECK_OK(shale_open(pb, &db));
    for (char *p = script.p; p && *p;) {
      char *e = strchr(p, ';');
      if (!e) break;
      *e = 0;
      char *a = q_sqlite(ref, p, NULL), *b = q_shale(db, p, NULL);
      if (strcmp(a, b)) test_fail(__FILE__, __LINE__, "%s:\nsqlite: %s\nshale:  %s", p, a, b);
      free(a);
      free(b);
      p = e + 1;
    }
    sqlite3_close(ref);
    CHECK_OK(shale_close(db));
    free(script.p);
    const char *rows = "SELECT docid, a, body FROM t ORDER BY docid";
    char *a = file_rows(pa, rows), *b = file_rows(pb, rows);
    CHECK(!strcmp(a, b));
    free(a);
    free(b);
    check_sqlite_integrity(pb);
    compare_queries(pb, &rs, 100, 2);
  }
}

/* FTS4's matchinfo=fts3: no %_docsize, matchinfo 'l' refused; Shale's
 * writes pass SQLite's check and both give the same matchinfo. */
TEST(fts4_matchinfo_fts3) {
  const char *path = test_path("fts3mi.db");
  remove(path);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  ex_shale(db, "CREATE VIRTUAL TABLE t USING fts4(a, body, matchinfo=fts3)");
  uint64_t rs = test_seed() + 4242;
  int64_t next = 1;
  write_docs(db, ex_shale, &rs, 2, 8, 20, &next);
  CHECK_OK(shale_close(db));
  check_sqlite_integrity(path);
  static const char *const fixed[] = {
      "SELECT name FROM sqlite_master ORDER BY name",
      "SELECT docid, hex(matchinfo(t, 'pcnaxsyb')) FROM t WHERE t MATCH 'apple OR dog'",
      "SELECT hex(matchinfo(t, 'l')) FROM t WHERE t MATCH 'apple'",
      "SELECT hex(value) FROM t_stat",
  };
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path, &ref));
  CHECK_OK(shale_open(path, &db));
  compare_fixed(ref, db, fixed, sizeof fixed / sizeof fixed[0]);
  sqlite3_close(ref);
  CHECK_OK(shale_close(db));
  compare_aux(path, &rs, 100, 2, 1);
}

/* Every tokenizer and argument: SQLite builds and Shale answers, Shale
 * writes and SQLite's integrity-check passes, both answer the same. */
static const char *const tokenizers[] = {
    ", tokenize=porter",
    ", tokenize porter",
    ", tokenize=simple",
    ", tokenize=simple \"ae\"",
    ", tokenize=simple x \"ae -\"",
    ", tokenize=unicode61",
    ", tokenize=unicode61 \"remove_diacritics=0\"",
    ", tokenize=unicode61 'remove_diacritics=1'",
    ", tokenize=unicode61 \"remove_diacritics=2\"",
    ", tokenize=unicode61 \"tokenchars=-_\" \"separators=aé\"",
    ", tokenize=unicode61 \"separators=-x\" \"tokenchars=x'\" [remove_diacritics=0]",
    ", tokenize=unicode61 \"tokenchars=αМ\" `separators=ü`",
};

static void tokenizer_case(const char *module, size_t i) {
  if (i < sizeof tokenizers / sizeof tokenizers[0]) table_opts = tokenizers[i];
  uint64_t rs = test_seed() * 2654435761u + 17 + i * 31;
  const char *path = test_path("fts3tok.db");
  int64_t next;
  int ncol = sqlite_build(path, &rs, module, 3 + rn(&rs, 10), 5 + rn(&rs, 40), i % 3 == 1, &next);
  compare_queries(path, &rs, test_long() ? 1000 : 150, ncol);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  write_docs(db, ex_shale, &rs, ncol, 3 + rn(&rs, 10), 5 + rn(&rs, 40), &next);
  CHECK_OK(shale_close(db));
  check_sqlite_integrity(path);
  compare_queries(path, &rs, test_long() ? 1000 : 150, ncol);
  remove(path);
  CHECK_OK(shale_open(path, &db));
  next = 1;
  ncol = create_table(db, ex_shale, &rs, module);
  write_docs(db, ex_shale, &rs, ncol, 3 + rn(&rs, 10), 5 + rn(&rs, 40), &next);
  CHECK_OK(shale_close(db));
  check_sqlite_integrity(path);
  compare_queries(path, &rs, test_long() ? 1000 : 150, ncol);
  table_opts = "";
}

/* FTS4 options with the same checks; languageid= also in the writes and
 * queries. */
static const char *const options[] = {
    ", notindexed=body",
    ", matchinfo=fts3, notindexed=\"Title\"",
    ", compress=upper, uncompress=lower",
    ", prefix=\"1,2,4\"",
    ", prefix=\"3\", tokenize=unicode61, languageid=\"lid\"",
    ", languageid=lid, tokenize=porter",
    ", order=desc",
    ", order=DESC, prefix=\"1\", languageid=lid, tokenize=unicode61 \"remove_diacritics=2\"",
    ", order=asc, prefix=\"2,,\"",
};

TEST(fts4_options) {
  all_cols = 1;
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
    lang_col = strstr(options[i], "languageid") ? "lid" : NULL;
    if (strstr(options[i], ",,")) { /* SQLite's error, both engines */
      sqlite3 *ref = NULL;
      shale *db = NULL;
      const char *path = test_path("fts3opt.db");
      remove(path);
      CHECK_OK(sqlite3_open(path, &ref));
      CHECK_OK(shale_open(path, &db));
      char sql[200];
      snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE t USING fts4(a%s)", options[i]);
      char *a = q_sqlite(ref, sql, NULL), *b = q_shale(db, sql, NULL);
      CHECK(!strcmp(a, b));
      free(a);
      free(b);
      sqlite3_close(ref);
      CHECK_OK(shale_close(db));
      continue;
    }
    table_opts = options[i];
    tokenizer_case("fts4", 100 + i);
  }
  all_cols = 0;
  lang_col = NULL;
}

/* content=src kept by triggers, and contentless tables (inserts only;
 * reading their columns fails on both engines alike). */
TEST(fts4_content_options) {
  all_cols = 1;
  write_table = "src";
  table_opts = ", content=src";
  tokenizer_case("fts4", 201);
  table_opts = ", content=\"src\", prefix=\"2\", order=desc";
  tokenizer_case("fts4", 202);
  write_table = "t";
  insert_only = 1;
  table_opts = ", content=''";
  tokenizer_case("fts4", 203);
  table_opts = ", content='', languageid=lid, notindexed=a";
  lang_col = "lid";
  tokenizer_case("fts4", 204);
  lang_col = NULL;
  insert_only = 0;
  all_cols = 0;
}

TEST(fts3_tokenizers) {
  for (size_t i = 0; i < sizeof tokenizers / sizeof tokenizers[0]; i++)
    tokenizer_case(i % 2 ? "fts3" : "fts4", i);
}

/* Random text (words, scripts, combining marks, separators, broken UTF-8)
 * through fts3tokenize with every tokenizer spec on both engines: the
 * same tokens, offsets and positions. */
TEST(fts3_tokenize_table) {
  static const char *const specs[] = {
      "porter",
      "simple",
      "simple, x, ' ae-'",
      "unicode61",
      "unicode61, 'remove_diacritics=0'",
      "unicode61, 'remove_diacritics=2'",
      "unicode61, 'tokenchars=-_.é', 'separators=aü'",
      "unicode61, 'separators=x-', 'tokenchars=x''', \"remove_diacritics=0\"",
  };
  static const char *const bits[] = {"e\xcc\x81",
                                     "\xcc\x81",
                                     "\xe2\x80\x8b",
                                     "\xc3",
                                     "\x80",
                                     "\xf0\x9f\x98\x80",
                                     "\xef\xbf\xbf",
                                     "\xed\xa0\x80",
                                     "_",
                                     "$",
                                     "\t",
                                     "1",
                                     "Z"};
  sqlite3 *ref = NULL;
  shale *db = NULL;
  CHECK_OK(sqlite3_open(":memory:", &ref));
  CHECK_OK(shale_open(":memory:", &db));
  if (!ref || !db) return;
  uint64_t rs = test_seed() + 4242;
  int fails = 0;
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE tk%zu USING fts3tokenize(%s)", k, specs[k]);
    exec_sqlite(ref, sql);
    ex_shale(db, sql);
    snprintf(sql, sizeof sql, "SELECT token, start, end, position FROM tk%zu WHERE input = ?1", k);
    for (int n = 0; n < (test_long() ? 3000 : 400) && fails < 5; n++) {
      Out in = {0};
      out_add(&in, "", 0);
      int nw = 1 + rn(&rs, 8);
      for (int w = 0; w < nw; w++) {
        if (rn(&rs, 3))
          out_fmt(&in, "%s", words[rn(&rs, NWORDS)]);
        else
          out_fmt(&in, "%s", bits[rn(&rs, (int)(sizeof bits / sizeof bits[0]))]);
        out_fmt(&in, "%s", rn(&rs, 3) ? seps[rn(&rs, NSEPS)] : "");
      }
      fails += !same_answer(ref, db, sql, in.p);
      free(in.p);
    }
  }
  sqlite3_close(ref);
  CHECK_OK(shale_close(db));
}
