/*
 * test_fts5.c -- FTS5 against the reference SQLite: files crossing between
 * the engines both ways, the same queries with the same answers, and
 * damaged shadow tables.
 *
 *  - shale_writes: per seed, Shale creates an fts5 table (random columns,
 *    prefix indexes, tokenizer and remove_diacritics), inserts random
 *    documents (ASCII, accented Latin, Greek, Cyrillic, digits,
 *    punctuation) over several transactions with deletes and updates; then
 *    SQLite runs 'integrity-check' (it re-tokenizes every row and compares
 *    with the index Shale wrote) and both engines answer the same generated
 *    queries on the file: rowids, rank order, bm25 to the last bit,
 *    highlight, snippet, and the error messages of bad queries.
 *  - sqlite_writes: the same with SQLite writing (its automerges, 'optimize'
 *    and 'merge' included), Shale's 'integrity-check' and queries; then
 *    Shale writes more and SQLite checks again.
 *  - every_code_point: Shale indexes every code point (each
 *    remove_diacritics value) and SQLite's integrity-check must pass: the
 *    tokenizer tables are SQLite's.
 *  - corrupt: random bytes of %_data blobs changed: queries fail or answer,
 *    never crash (run under ASan by make SANITIZE=1 test).
 *
 * Invariants:
 *  1. Each query runs on both engines over the same file; results are
 *     compared as text, reals as their 17 significant digits.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tcmp.h"
#include "../test.h"
#include "shale.h"

/* ---- result strings (tests/common/tcmp.h) ---- */
typedef TcmpOut Out;
#define out_add tcmp_add
#define out_fmt tcmp_fmt

static char *q_sqlite2(sqlite3 *db, const char *sql, const char *arg, const char *arg2) {
  return tcmp_sqlite(db, sql, arg, arg2);
}
static char *q_sqlite(sqlite3 *db, const char *sql, const char *arg) {
  return tcmp_sqlite(db, sql, arg, NULL);
}
static char *q_shale2(shale *db, const char *sql, const char *arg, const char *arg2) {
  return tcmp_shale(db, sql, arg, arg2);
}
static char *q_shale(shale *db, const char *sql, const char *arg) {
  return tcmp_shale(db, sql, arg, NULL);
}

/* Close, failing the case when statements were left behind. */
static void close_shale(shale *db) {
  if (shale_close(db) == SHALE_OK) return;
  for (shale_stmt *st = shale_next_stmt(db, NULL); st; st = shale_next_stmt(db, st))
    test_fail(__FILE__, __LINE__, "statement left open: %s (busy %d)", shale_sql(st),
              shale_stmt_busy(st));
  shale_close_v2(db);
}

static int exec_sqlite(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "sqlite: %s: %s", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}

static int exec_shale(shale *db, const char *sql) {
  char *err = NULL;
  int rc = shale_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "shale: %.200s: %s", sql, err ? err : "?");
  shale_free(err);
  return rc;
}

/* ---- random documents and queries ---- */
static const char *const words[] = {
    "alpha",  "beta", "gamma", "delta",  "eps",     "zeta",   "eta",    "theta", "iota", "kappa",
    "lambda", "mu",   "nu",    "xi",     "omicron", "pi",     "rho",    "sigma", "tau",  "upsilon",
    "café",   "Café", "naïve", "résumé", "Ünïcödé", "straße", "ÉLAN",   "élan",  "ça",   "garçon",
    "αλφα",   "Βήτα", "γάμμα", "δέλτα",  "Москва",  "москва", "привет", "ЁЖИК",  "ёжик", "мир",
    "123",    "42",   "3.14",  "x1",     "a_b",     "don't",  "e-mail", "A",     "b",    "Zz"};
#define NWORDS ((int)(sizeof(words) / sizeof(words[0])))
static const char *const seps[] = {" ", " ", " ", ", ", ". ", "; ", " - ", "! ", "\n", " (", ") "};
#define NSEPS ((int)(sizeof(seps) / sizeof(seps[0])))

/* The words of documents and queries: words[] unless the corpus test
 * set a generated vocabulary. */
static const char *const *vocab = words;
static int nvocab = NWORDS;

/* A random word: skewed, low word numbers are common (half the picks among
 * the first 12; in a generated vocabulary the others log-uniform). */
static const char *qword(uint64_t *rs) {
  int w = (int)(test_rand(rs) % (uint64_t)nvocab);
  if (test_rand(rs) % 2)
    w = w % 12;
  else if (nvocab > NWORDS)
    w >>= test_rand(rs) % 12;
  return vocab[w];
}

/* A random document of up to maxw words, as SQL text literal content. */
static void gen_doc(uint64_t *rs, char *buf, size_t cap, int maxw) {
  size_t n = 0;
  int nw = (int)(test_rand(rs) % (uint64_t)maxw);
  buf[0] = 0;
  for (int i = 0; i < nw && n + 40 < cap; i++) {
    const char *w = qword(rs);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? seps[test_rand(rs) % NSEPS] : "", w);
  }
}

static int bareword_ok(const char *w) {
  for (const unsigned char *p = (const unsigned char *)w; *p; p++)
    if (!(*p >= 0x80 || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_'))
      return 0;
  return strcmp(w, "AND") && strcmp(w, "OR") && strcmp(w, "NOT") && strcmp(w, "NEAR");
}

/* A phrase: a word (quoted when it must be), or a quoted two-word phrase,
 * maybe a prefix. */
static void gen_phrase(uint64_t *rs, Out *o) {
  int k = (int)(test_rand(rs) % 8);
  const char *w = qword(rs);
  if (k == 0) {
    out_fmt(o, "\"%s %s\"", w, qword(rs));
  } else if (k == 1) {
    char pre[8];
    int n = 1 + (int)(test_rand(rs) % 3);
    int i = 0;
    while (w[i] && i < n) i++;
    while (w[i] && ((unsigned char)w[i] & 0xc0) == 0x80) i++;
    memcpy(pre, w, (size_t)i);
    pre[i] = 0;
    if (bareword_ok(pre))
      out_fmt(o, "%s*", pre);
    else
      out_fmt(o, "\"%s\"*", pre);
  } else if (k == 2) {
    out_fmt(o, "%s + %s", bareword_ok(w) ? w : "alpha", "beta");
  } else if (bareword_ok(w)) {
    out_fmt(o, "%s", w);
  } else {
    out_fmt(o, "\"%s\"", w);
  }
}

static void gen_query(uint64_t *rs, Out *o, int depth, int ncol) {
  int k = (int)(test_rand(rs) % (depth > 2 ? 4 : 11));
  switch (k) {
    case 4:
      gen_query(rs, o, depth + 1, ncol);
      out_add(o, " AND ", 5);
      gen_query(rs, o, depth + 1, ncol);
      break;
    case 5:
      gen_query(rs, o, depth + 1, ncol);
      out_add(o, " OR ", 4);
      gen_query(rs, o, depth + 1, ncol);
      break;
    case 6:
      gen_query(rs, o, depth + 1, ncol);
      out_add(o, " NOT ", 5);
      gen_query(rs, o, depth + 1, ncol);
      break;
    case 7:
      out_add(o, "(", 1);
      gen_query(rs, o, depth + 1, ncol);
      out_add(o, ")", 1);
      break;
    case 8:
      out_add(o, "NEAR(", 5);
      gen_phrase(rs, o);
      out_add(o, " ", 1);
      gen_phrase(rs, o);
      if (test_rand(rs) % 2) out_fmt(o, ", %d", (int)(test_rand(rs) % 6));
      out_add(o, ")", 1);
      break;
    case 9: {
      int c = (int)(test_rand(rs) % (uint64_t)ncol);
      if (test_rand(rs) % 3 == 0)
        out_fmt(o, "{c%d} : ", c);
      else if (test_rand(rs) % 3 == 0 && ncol > 1)
        out_fmt(o, "- c%d : ", c);
      else
        out_fmt(o, "c%d : ", c);
      gen_phrase(rs, o);
      break;
    }
    case 10:
      out_add(o, "^", 1);
      gen_phrase(rs, o);
      break;
    case 3:
      gen_phrase(rs, o);
      out_add(o, " ", 1);
      gen_phrase(rs, o);
      break;
    default:
      gen_phrase(rs, o);
  }
}

/* ---- the comparison ---- */
static const char *const qforms[] = {
    "SELECT rowid FROM f WHERE f MATCH ?1",
    "SELECT rowid, rank FROM f WHERE f MATCH ?1 ORDER BY rank, rowid",
    "SELECT rowid, bm25(f) FROM f(?1)",
    "SELECT rowid, highlight(f, 0, '[', ']') FROM f WHERE f = ?1",
    "SELECT rowid, snippet(f, -1, '<', '>', '...', 6) FROM f WHERE f MATCH ?1",
    "SELECT count(*) FROM f WHERE f MATCH ?1",
    "SELECT rowid, c0 FROM f WHERE c0 MATCH ?1",
};
#define NQFORMS ((int)(sizeof(qforms) / sizeof(qforms[0])))

/* nq generated queries, each in a form of forms[nforms] (qforms when
 * NULL), on both engines over the file at path: the number that differ. */
static int compare_queries_in(const char *path, uint64_t *rs, int nq, int ncol,
                              const char *const *forms, int nforms) {
  sqlite3 *ref = NULL;
  shale *sh = NULL;
  int bad = 0;
  if (sqlite3_open(path, &ref) != SQLITE_OK || shale_open(path, &sh) != SHALE_OK) {
    test_fail(__FILE__, __LINE__, "open %s", path);
    sqlite3_close(ref);
    close_shale(sh);
    return 1;
  }
  for (int i = 0; i < nq && bad < 5; i++) {
    Out q = {0};
    out_add(&q, "", 0);
    gen_query(rs, &q, 0, ncol);
    const char *sql = forms[test_rand(rs) % (uint64_t)nforms];
    char *a = q_sqlite(ref, sql, q.p), *b = q_shale(sh, sql, q.p);
    if (strcmp(a, b)) { /* show the first row that differs */
      size_t k = 0, line = 0;
      while (a[k] && a[k] == b[k]) k++;
      while (k > 0 && a[k - 1] != '\n') k--;
      line = k;
      bad++;
      test_fail(__FILE__, __LINE__, "%s: query %s [%s]\nsqlite:\n%.300s\nshale:\n%.300s", path, sql,
                q.p, a + line, b + line);
    }
    free(a);
    free(b);
    free(q.p);
  }
  sqlite3_close(ref);
  close_shale(sh);
  return bad;
}

static int compare_queries(const char *path, uint64_t *rs, int nq, int ncol) {
  return compare_queries_in(path, rs, nq, ncol, qforms, NQFORMS);
}

static const char *const tokenizers[] = {"",
                                         ", tokenize='ascii'",
                                         ", tokenize='unicode61 remove_diacritics 0'",
                                         ", tokenize='unicode61 remove_diacritics 2'",
                                         ", tokenize = \"unicode61 tokenchars '-_'\"",
                                         ", tokenize='unicode61 separators x'",
                                         ", tokenize='porter'",
                                         ", tokenize='porter ascii'",
                                         ", tokenize='trigram'",
                                         ", tokenize='trigram case_sensitive 1'"};

/* detail= option of the tables create_sql makes ("" for the default). */
static const char *detail_opt = "";

static void create_sql(uint64_t *rs, char *sql, size_t cap, int *ncol) {
  *ncol = 1 + (int)(test_rand(rs) % 3);
  size_t n = (size_t)snprintf(sql, cap, "CREATE VIRTUAL TABLE f USING fts5(");
  for (int c = 0; c < *ncol; c++)
    n += (size_t)snprintf(sql + n, cap - n, "%sc%d%s", c ? ", " : "", c,
                          c == 2 && test_rand(rs) % 2 ? " UNINDEXED" : "");
  if (test_rand(rs) % 2) n += (size_t)snprintf(sql + n, cap - n, ", prefix='1 3'");
  if (test_rand(rs) % 3 == 0) n += (size_t)snprintf(sql + n, cap - n, ", columnsize=0");
  snprintf(sql + n, cap - n, "%s%s)",
           tokenizers[test_rand(rs) % (sizeof(tokenizers) / sizeof(tokenizers[0]))], detail_opt);
}

typedef int (*ExecFn)(void *db, const char *sql);
static int ex_sqlite(void *db, const char *sql) { return exec_sqlite(db, sql); }
static int ex_shale(void *db, const char *sql) { return exec_shale(db, sql); }

/* Append z as an SQL string literal. */
static size_t put_lit(char *sql, size_t n, size_t cap, const char *z) {
  if (n + 1 < cap) sql[n++] = '\'';
  for (; *z && n + 3 < cap; z++) {
    if (*z == '\'') sql[n++] = '\'';
    sql[n++] = *z;
  }
  if (n + 1 < cap) sql[n++] = '\'';
  sql[n] = 0;
  return n;
}

/* Random writes: ntx transactions of inserts, deletes, updates. */
static void write_docs(void *db, ExecFn ex, uint64_t *rs, int ncol, int ntx, int per_tx,
                       int64_t *next) {
  char doc[3][600], sql[4000];
  for (int t = 0; t < ntx; t++) {
    ex(db, "BEGIN");
    for (int i = 0; i < per_tx; i++) {
      int op = (int)(test_rand(rs) % 10);
      for (int c = 0; c < 3; c++) gen_doc(rs, doc[c], sizeof doc[c], c == 0 ? 24 : 8);
      size_t n;
      if (op < 7 || *next < 5) {
        int64_t id = test_rand(rs) % 4 == 0 ? (*next += 3) : ++*next;
        n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO f(rowid");
        for (int c = 0; c < ncol; c++) n += (size_t)snprintf(sql + n, sizeof sql - n, ", c%d", c);
        n += (size_t)snprintf(sql + n, sizeof sql - n, ") VALUES(%lld", (long long)id);
        for (int c = 0; c < ncol; c++) {
          n += (size_t)snprintf(sql + n, sizeof sql - n, ", ");
          n = put_lit(sql, n, sizeof sql, doc[c]);
        }
        snprintf(sql + n, sizeof sql - n, ")");
      } else if (op < 9) {
        snprintf(sql, sizeof sql, "DELETE FROM f WHERE rowid = %lld",
                 (long long)(1 + (int64_t)(test_rand(rs) % (uint64_t)*next)));
      } else {
        n = (size_t)snprintf(sql, sizeof sql, "UPDATE f SET c0 = ");
        n = put_lit(sql, n, sizeof sql, doc[0]);
        snprintf(sql + n, sizeof sql - n, " WHERE rowid = %lld",
                 (long long)(1 + (int64_t)(test_rand(rs) % (uint64_t)*next)));
      }
      ex(db, sql);
    }
    ex(db, "COMMIT");
  }
}

static int check_sqlite_integrity(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_open(path, &db);
  char *r = q_sqlite(db, "INSERT INTO f(f) VALUES('integrity-check')", NULL);
  int bad = *r != 0;
  if (bad) test_fail(__FILE__, __LINE__, "sqlite integrity-check of %s: %s", path, r);
  free(r);
  r = q_sqlite(db, "PRAGMA integrity_check", NULL);
  CHECK_STR(r, "ok|\n");
  free(r);
  sqlite3_close(db);
  return bad;
}

static void check_shale_integrity(const char *path) {
  shale *db = NULL;
  shale_open(path, &db);
  char *r = q_shale(db, "INSERT INTO f(f) VALUES('integrity-check')", NULL);
  if (*r) test_fail(__FILE__, __LINE__, "shale integrity-check: %s", r);
  free(r);
  close_shale(db);
}

/* A fresh file test_path(name) (its path in path[512]) holding the table
 * create_sql made (its SQL in sql[512], its column count in *ncol), created
 * by Shale: the connection, still open. */
static shale *shale_fresh(const char *name, uint64_t *rs, char *path, char *sql, int *ncol) {
  snprintf(path, 512, "%s", test_path(name));
  remove(path);
  create_sql(rs, sql, 512, ncol);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  exec_shale(db, sql);
  return db;
}

/* Shale builds the index (tables of create_sql, detail= as given); SQLite
 * checks it and both answer the same queries. */
static void shale_writes(const char *detail, uint64_t salt) {
  int seeds = test_long() ? 40 : 8;
  detail_opt = detail;
  for (int s = 0; s < seeds; s++) {
    uint64_t rs = test_seed() * 7919 + (uint64_t)s * 104729 + 1 + salt;
    char path[512], sql[512];
    int ncol;
    shale *db = shale_fresh("sw.db", &rs, path, sql, &ncol);
    int64_t next = 0;
    write_docs(db, ex_shale, &rs, ncol, 6, 60, &next);
    if (s % 3 == 1) exec_shale(db, "INSERT INTO f(f) VALUES('optimize')");
    if (s % 4 == 2) exec_shale(db, "INSERT INTO f(f, rank) VALUES('pgsz', 64)");
    write_docs(db, ex_shale, &rs, ncol, 3, 40, &next);
    close_shale(db);
    if (check_sqlite_integrity(path)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
    check_shale_integrity(path);
    if (compare_queries(path, &rs, 150, ncol)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
  }
}

/* The structure record of the fts5 table f in path (read by SQLite) as
 * text: per level "nmerge/segments", e.g. "0:0/0 1:0/2 "; *nlevel and
 * *nseg its level and segment counts. */
static char *structure_text(const char *path, int *nlevel_out, int *nseg_out) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  Out o = {0};
  out_add(&o, "", 0);
  *nlevel_out = *nseg_out = 0;
  sqlite3_open(path, &db);
  if (sqlite3_prepare_v2(db, "SELECT block FROM f_data WHERE id=10", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char *p = sqlite3_column_blob(st, 0);
    int n = sqlite3_column_bytes(st, 0), i = 4;
    uint64_t v[3];
#define GETV(x)                                                    \
  do {                                                             \
    x = 0;                                                         \
    while (i < n && (p[i] & 0x80)) x = (x << 7) | (p[i++] & 0x7f); \
    if (i < n) x = (x << 7) | p[i++];                              \
  } while (0)
    GETV(v[0]);
    GETV(v[1]);
    GETV(v[2]);
    uint64_t nlevel = v[0];
    *nlevel_out = (int)nlevel;
    *nseg_out = (int)v[1];
    for (uint64_t l = 0; l < nlevel && i < n; l++) {
      uint64_t nmerge, nseg;
      GETV(nmerge);
      GETV(nseg);
      out_fmt(&o, "%d:%d/%d ", (int)l, (int)nmerge, (int)nseg);
      for (uint64_t j = 0; j < nseg && i < n; j++) {
        GETV(v[0]);
        GETV(v[1]);
        GETV(v[2]);
      }
    }
#undef GETV
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return o.p;
}

/* Many small transactions (a segment each): Shale's levels, automerge
 * work, incremental merges in progress and crisis merges leave the same
 * structure as SQLite's for the same writes (setting: automerge as set,
 * or crisismerge; pgsz: small leaves, so merges stop part way); SQLite
 * finds the index valid and answers alike; then SQLite and Shale take
 * turns writing, each continuing the other's merges, and both check. */
static void shale_levels(const char *setting) {
  int seeds = test_long() ? 12 : 3;
  detail_opt = "";
  for (int s = 0; s < seeds; s++) {
    uint64_t rs = test_seed() * 6151 + (uint64_t)s * 8191 + 3, rs0 = rs;
    char path[512], sql[512], ref[600];
    int ncol;
    shale *db = shale_fresh("lv.db", &rs, path, sql, &ncol);
    const char *pgsz = s % 2 ? "INSERT INTO f(f, rank) VALUES('pgsz', 64)" : "";
    exec_shale(db, pgsz);
    if (*setting) exec_shale(db, setting);
    int64_t next = 0;
    write_docs(db, ex_shale, &rs, ncol, 90, 4, &next);
    close_shale(db);
    /* SQLite makes the same writes on a file of its own */
    snprintf(ref, sizeof ref, "%s-ref", path);
    remove(ref);
    sqlite3 *rdb = NULL;
    CHECK_OK(sqlite3_open(ref, &rdb));
    uint64_t rs2 = rs0;
    int ncol2;
    create_sql(&rs2, sql, sizeof sql, &ncol2);
    exec_sqlite(rdb, sql);
    exec_sqlite(rdb, pgsz);
    if (*setting) exec_sqlite(rdb, setting);
    int64_t next2 = 0;
    write_docs(rdb, ex_sqlite, &rs2, ncol2, 90, 4, &next2);
    sqlite3_close(rdb);
    /* the same as a rule; a merged segment a leaf bigger or smaller than
     * SQLite's (their leaves are not yet filled byte for byte alike) can
     * shift a promotion: a segment or level apart is let pass */
    int la, sa, lb, sb;
    char *a = structure_text(path, &la, &sa), *b = structure_text(ref, &lb, &sb);
    if (la - lb > 1 || lb - la > 1 || sa - sb > 2 || sb - sa > 2)
      test_fail(__FILE__, __LINE__, "%s: structure %s, SQLite's %s", setting, a, b);
    free(a);
    free(b);
    if (check_sqlite_integrity(path) || compare_queries(path, &rs, 100, ncol)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
    check_shale_integrity(path);
    /* turns: each engine continues the merges the other left */
    for (int turn = 0; turn < 6; turn++) {
      if (turn % 2) {
        shale *sh = NULL;
        CHECK_OK(shale_open(path, &sh));
        write_docs(sh, ex_shale, &rs, ncol, 15, 3, &next);
        if (turn == 3) exec_shale(sh, "INSERT INTO f(f, rank) VALUES('merge', 40)");
        close_shale(sh);
        if (check_sqlite_integrity(path)) break;
      } else {
        CHECK_OK(sqlite3_open(path, &rdb));
        write_docs(rdb, ex_sqlite, &rs, ncol, 15, 3, &next);
        if (turn == 4) exec_sqlite(rdb, "INSERT INTO f(f, rank) VALUES('merge', -30)");
        sqlite3_close(rdb);
        check_shale_integrity(path);
      }
    }
    if (compare_queries(path, &rs, 60, ncol)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
  }
}

TEST(fts5_levels_automerge) { shale_levels(""); }
TEST(fts5_levels_automerge_2) { shale_levels("INSERT INTO f(f, rank) VALUES('automerge', 2)"); }
TEST(fts5_levels_crisismerge) { shale_levels("INSERT INTO f(f, rank) VALUES('automerge', 0)"); }

/* 'hashsize' bounds the pending terms' heap: with a small one, Shale's
 * big transactions (inserts, deletes, updates of rows flushed earlier in
 * the same transaction) flush segment after segment and merge them; the
 * setting persists (read back on the next open); SQLite finds the index
 * valid and both answer alike. */
TEST(fts5_hashsize) {
  int seeds = test_long() ? 8 : 2;
  detail_opt = "";
  for (int s = 0; s < seeds; s++) {
    uint64_t rs = test_seed() * 4099 + (uint64_t)s * 7717 + 5;
    char path[512], sql[512];
    int ncol;
    shale *db = shale_fresh("hs.db", &rs, path, sql, &ncol);
    exec_shale(db, s % 2 ? "INSERT INTO f(f, rank) VALUES('hashsize', '3000')"
                         : "INSERT INTO f(f, rank) VALUES('hashsize', 6000)");
    int64_t next = 0;
    write_docs(db, ex_shale, &rs, ncol, 1, 120, &next);
    close_shale(db);
    int nl, ns;
    free(structure_text(path, &nl, &ns));
    if (ns < 3) test_fail(__FILE__, __LINE__, "one transaction left %d segments", ns);
    CHECK_OK(shale_open(path, &db));
    write_docs(db, ex_shale, &rs, ncol, 2, 120, &next);
    close_shale(db);
    int nl2, ns2;
    free(structure_text(path, &nl2, &ns2));
    if (ns2 + nl2 < 3) test_fail(__FILE__, __LINE__, "after reopening: %d levels", nl2);
    if (check_sqlite_integrity(path) || compare_queries(path, &rs, 120, ncol)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
    check_shale_integrity(path);
  }
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  exec_shale(db, "CREATE VIRTUAL TABLE f USING fts5(a)");
  const char *bad[] = {"0", "-5", "'abc'", "1.5", "NULL"};
  for (int i = 0; i < 5; i++) {
    char q[128];
    snprintf(q, sizeof q, "INSERT INTO f(f, rank) VALUES('hashsize', %s)", bad[i]);
    char *err = NULL;
    CHECK(shale_exec(db, q, NULL, NULL, &err) == SHALE_ERROR);
    CHECK_STR(err ? err : "", "SQL logic error");
    shale_free(err);
  }
  close_shale(db);
}

TEST(fts5_shale_writes) { shale_writes("", 0); }
TEST(fts5_detail_column_shale_writes) { shale_writes(", detail=column", 11); }
TEST(fts5_detail_none_shale_writes) { shale_writes(", detail=none", 23); }

/* SQLite builds (automerged, optimized, merged), Shale reads and updates,
 * SQLite checks again. */
static void sqlite_writes(const char *detail, uint64_t salt) {
  int seeds = test_long() ? 40 : 8;
  detail_opt = detail;
  for (int s = 0; s < seeds; s++) {
    uint64_t rs = test_seed() * 31 + (uint64_t)s * 1299709 + 7 + salt;
    char path[512], sql[512];
    snprintf(path, sizeof path, "%s", test_path("qw.db"));
    remove(path);
    int ncol;
    create_sql(&rs, sql, sizeof sql, &ncol);
    sqlite3 *db = NULL;
    CHECK_OK(sqlite3_open(path, &db));
    exec_sqlite(db, sql);
    if (s % 2) exec_sqlite(db, "INSERT INTO f(f, rank) VALUES('pgsz', 80)");
    int64_t next = 0;
    write_docs(db, ex_sqlite, &rs, ncol, 12, 30, &next); /* SQLite automerges */
    if (s % 3 == 1) exec_sqlite(db, "INSERT INTO f(f) VALUES('optimize')");
    if (s % 3 == 2) exec_sqlite(db, "INSERT INTO f(f, rank) VALUES('merge', 50)");
    sqlite3_close(db);
    check_shale_integrity(path);
    if (compare_queries(path, &rs, 150, ncol)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
    /* Shale updates the index SQLite built; SQLite checks it */
    shale *sh = NULL;
    CHECK_OK(shale_open(path, &sh));
    write_docs(sh, ex_shale, &rs, ncol, 4, 30, &next);
    close_shale(sh);
    check_sqlite_integrity(path);
    if (compare_queries(path, &rs, 60, ncol)) break;
  }
}

TEST(fts5_sqlite_writes) { sqlite_writes("", 0); }
TEST(fts5_detail_column_sqlite_writes) { sqlite_writes(", detail=column", 13); }
TEST(fts5_detail_none_sqlite_writes) { sqlite_writes(", detail=none", 29); }

/* ---- the big corpus ---- */

/* Letters of the generated vocabulary's alphabets (UTF-8, one letter per
 * entry): ASCII, accented Latin, Greek, Cyrillic, digits. */
static const char *const alpha_ascii[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
                                          "k", "l", "m", "n", "o", "p", "r", "s", "t",
                                          "u", "v", "w", "y", "z", "A", "E", "Q"};
static const char *const alpha_latin[] = {"é", "è", "ü", "ö", "ç", "ñ", "ø", "ß", "å",
                                          "É", "Ü", "à", "a", "e", "o", "n", "r", "t"};
static const char *const alpha_greek[] = {"α", "β", "γ", "δ", "ε", "ζ", "η", "θ", "ι", "κ",
                                          "λ", "μ", "ά", "έ", "ή", "ω", "Σ", "Ω", "ς"};
static const char *const alpha_cyr[] = {"а", "б", "в", "г", "д", "е", "ж", "з", "и", "к", "л",
                                        "м", "н", "о", "п", "р", "ё", "Ж", "Я", "я", "щ"};
static const char *const alpha_digit[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

/* n generated words (the first NWORDS are words[]: punctuation inside
 * words, quotes, bare numbers), each of 1-9 letters of one alphabet, now
 * and then with digits; made vocab. Freed by vocab_free. */
static void vocab_make(uint64_t *rs, int n) {
  static const char *const *const alphas[] = {alpha_ascii, alpha_ascii, alpha_latin,
                                              alpha_greek, alpha_cyr,   alpha_digit};
  static const int nalpha[] = {26, 26, 18, 19, 21, 10};
  const char **v = malloc(sizeof(char *) * (size_t)n);
  for (int i = 0; i < n; i++) {
    if (i < NWORDS) {
      v[i] = strdup(words[i]);
      continue;
    }
    char w[64];
    size_t len = 0;
    int a = (int)(test_rand(rs) % 6), nl = 1 + (int)(test_rand(rs) % 9);
    for (int k = 0; k < nl; k++) {
      int b = test_rand(rs) % 8 == 0 ? 5 : a;
      const char *l = alphas[b][test_rand(rs) % (uint64_t)nalpha[b]];
      memcpy(w + len, l, strlen(l));
      len += strlen(l);
    }
    w[len] = 0;
    v[i] = strdup(w);
  }
  vocab = v;
  nvocab = n;
}

static void vocab_free(void) {
  for (int i = 0; i < nvocab; i++) free((char *)vocab[i]);
  free((void *)vocab);
  vocab = words;
  nvocab = NWORDS;
}

/* The corpus's query forms: qforms' (highlight and snippet of many rows
 * cut by LIMIT) and LIMIT / OFFSET / DESC / rowid range forms. No aux
 * function under an ORDER BY the table does not serve with a LIMIT:
 * SQLite's core skips the result columns of rows that cannot enter the
 * top N (Shale's computes them), and a snippet over the instances SQLite's
 * walk leaves at a row (those of an earlier, longer row) can fail. */
static const char *const corpus_forms[] = {
    "SELECT rowid FROM f WHERE f MATCH ?1",
    "SELECT rowid, rank FROM f WHERE f MATCH ?1 ORDER BY rank, rowid",
    "SELECT rowid, bm25(f) FROM f(?1)",
    "SELECT rowid, highlight(f, 0, '[', ']') FROM f WHERE f = ?1 LIMIT 40",
    "SELECT rowid, snippet(f, -1, '<', '>', '...', 6) FROM f WHERE f MATCH ?1 LIMIT 40",
    "SELECT count(*) FROM f WHERE f MATCH ?1",
    "SELECT rowid, c0 FROM f WHERE c0 MATCH ?1 LIMIT 30",
    "SELECT rowid, rank FROM f WHERE f MATCH ?1 ORDER BY rank LIMIT 10",
    "SELECT rowid, bm25(f, 2.0, 0.5) FROM f WHERE f MATCH ?1 ORDER BY rowid DESC LIMIT 25",
    "SELECT rowid FROM f WHERE f MATCH ?1 LIMIT 15 OFFSET 100",
    "SELECT rowid, snippet(f, 1, '{', '}', '..', 4), highlight(f, 1, '(', ')') FROM f "
    "WHERE f MATCH ?1 ORDER BY rank LIMIT 20",
    "SELECT rowid FROM f WHERE f MATCH ?1 AND rowid BETWEEN 1000 AND 3000 ORDER BY rowid DESC",
};
#define NCORPUS_FORMS ((int)(sizeof(corpus_forms) / sizeof(corpus_forms[0])))

/* n documents inserted in transactions of 5,000 (rowids from *next on, a
 * gap now and then). */
static void insert_docs(void *db, ExecFn ex, uint64_t *rs, int ncol, int n, int64_t *next) {
  char doc[3][600], sql[4000];
  for (int i = 0; i < n; i++) {
    if (i % 5000 == 0) ex(db, i ? "COMMIT; BEGIN" : "BEGIN");
    int64_t id = test_rand(rs) % 8 == 0 ? (*next += 5) : ++*next;
    size_t k = (size_t)snprintf(sql, sizeof sql, "INSERT INTO f(rowid, c0, c1, c2) VALUES(%lld",
                                (long long)id);
    for (int c = 0; c < 3; c++) {
      gen_doc(rs, doc[c], sizeof doc[c], c == 0 ? 30 : c == 1 ? 12 : 4);
      k += (size_t)snprintf(sql + k, sizeof sql - k, ", ");
      k = put_lit(sql, k, sizeof sql, doc[c]);
    }
    snprintf(sql + k, sizeof sql - k, ")");
    ex(db, sql);
  }
  ex(db, "COMMIT");
}

/* The corpus size (documents): the 50,000, or 5,000 under
 * AddressSanitizer (several times slower); SHALE_FTS5_CORPUS overrides
 * either. */
#if defined(__SANITIZE_ADDRESS__)
#define FTS5_CORPUS_DOCS 5000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FTS5_CORPUS_DOCS 5000
#endif
#endif
#ifndef FTS5_CORPUS_DOCS
#define FTS5_CORPUS_DOCS 50000
#endif
static int corpus_docs(void) {
  const char *e = getenv("SHALE_FTS5_CORPUS");
  if (e && atoi(e) > 0) return atoi(e);
  return FTS5_CORPUS_DOCS;
}

/* The interop corpus: 50,000 generated documents (corpus_docs:
 * 5,000 under ASan) over a 20,000
 * word vocabulary (several alphabets, diacritics, digits, punctuation;
 * common words' doclists span many leaves). Shale builds file 1, SQLite's
 * integrity-check passes and 2,000 queries of every syntax and form give
 * the same rows, rank order, bm25 values, highlight and snippet; SQLite
 * builds file 2 (another tokenizer, its automerges) and Shale checks and
 * queries it; then both engines update and delete on file 1 in turns with
 * 'merge' and 'optimize' between, each checking the other's writes, and
 * the queries are compared again. */
TEST(fts5_corpus) {
  int ndoc = corpus_docs(), nq = 2000;
  uint64_t rs = test_seed() * 65537 + 17;
  vocab_make(&rs, 20000);
  const char *const creates[2] = {
      "CREATE VIRTUAL TABLE f USING fts5(c0, c1, c2 UNINDEXED, prefix='1 3')",
      "CREATE VIRTUAL TABLE f USING fts5(c0, c1, c2, tokenize='unicode61 remove_diacritics 2', "
      "prefix=2)"};
  char path[2][512];
  for (int k = 0; k < 2; k++) {
    snprintf(path[k], sizeof path[k], "%s", test_path(k ? "corpus-sq.db" : "corpus-sh.db"));
    remove(path[k]);
  }
  int64_t next[2] = {0, 0};
  /* Shale builds */
  shale *sh = NULL;
  CHECK_OK(shale_open(path[0], &sh));
  exec_shale(sh, creates[0]);
  insert_docs(sh, ex_shale, &rs, 3, ndoc, &next[0]);
  close_shale(sh);
  int bad = check_sqlite_integrity(path[0]);
  if (!bad) bad = compare_queries_in(path[0], &rs, nq, 3, corpus_forms, NCORPUS_FORMS);
  /* SQLite builds */
  sqlite3 *ref = NULL;
  CHECK_OK(sqlite3_open(path[1], &ref));
  exec_sqlite(ref, creates[1]);
  insert_docs(ref, ex_sqlite, &rs, 3, ndoc, &next[1]);
  sqlite3_close(ref);
  check_shale_integrity(path[1]);
  if (!bad) bad = compare_queries_in(path[1], &rs, nq, 3, corpus_forms, NCORPUS_FORMS);
  /* turns of updates and deletes on Shale's file, merge and optimize */
  static const char *const after[4] = {"INSERT INTO f(f, rank) VALUES('merge', 200)",
                                       "INSERT INTO f(f) VALUES('optimize')",
                                       "INSERT INTO f(f, rank) VALUES('merge', -50)", ""};
  for (int turn = 0; turn < 4 && !bad; turn++) {
    if (turn % 2 == 0) {
      CHECK_OK(sqlite3_open(path[0], &ref));
      write_docs(ref, ex_sqlite, &rs, 3, 4, 250, &next[0]);
      exec_sqlite(ref, after[turn]);
      sqlite3_close(ref);
      check_shale_integrity(path[0]);
    } else {
      CHECK_OK(shale_open(path[0], &sh));
      write_docs(sh, ex_shale, &rs, 3, 4, 250, &next[0]);
      exec_shale(sh, after[turn]);
      close_shale(sh);
      bad = check_sqlite_integrity(path[0]);
    }
  }
  if (!bad) bad = compare_queries_in(path[0], &rs, nq, 3, corpus_forms, NCORPUS_FORMS);
  vocab_free();
}

/* Each statement on a fresh file per engine: the same rows or error. */
static void compare_steps(const char *name, const char *const *steps, size_t n) {
  char path[2][512];
  snprintf(path[0], sizeof path[0], "%s-ref.db", test_path(name));
  snprintf(path[1], sizeof path[1], "%s-shale.db", test_path(name));
  remove(path[0]);
  remove(path[1]);
  sqlite3 *ref = NULL;
  shale *sh = NULL;
  CHECK_OK(sqlite3_open(path[0], &ref));
  CHECK_OK(shale_open(path[1], &sh));
  for (size_t i = 0; i < n; i++) {
    char *a = q_sqlite(ref, steps[i], NULL), *b = q_shale(sh, steps[i], NULL);
    if (strcmp(a, b)) test_fail(__FILE__, __LINE__, "%s\nsqlite: %s\nshale: %s", steps[i], a, b);
    free(a);
    free(b);
  }
  sqlite3_close(ref);
  close_shale(sh);
}

/* columnsize=0 without content: bm25 sees -1 tokens per indexed column
 * (SQLite's xColumnSize), a NULL rowid is SQLite's datatype mismatch, a
 * scan is refused. */
TEST(fts5_columnsize0_contentless) {
  static const char *const steps[] = {
      "CREATE VIRTUAL TABLE f USING fts5(c0, c1, c2 UNINDEXED, content='', columnsize=0)",
      "INSERT INTO f(rowid, c0, c1, c2) VALUES(5, 'a b a', 'c', 'a'), (9, 'b', 'a c d', 'x')",
      "INSERT INTO f(c0) VALUES('a')",
      "SELECT rowid, bm25(f), bm25(f, 2.0, 1.0) FROM f('a') ORDER BY rowid",
      "SELECT rowid, rank FROM f WHERE f MATCH 'a OR c' ORDER BY rank, rowid",
      "SELECT rowid FROM f",
      "DELETE FROM f WHERE rowid = 5",
      "INSERT INTO f(f, rowid, c0, c1, c2) VALUES('delete', 5, 'a b a', 'c', 'a')",
      "SELECT rowid, bm25(f) FROM f('a OR b')",
      "SELECT name FROM sqlite_schema WHERE name LIKE 'f%' ORDER BY 1",
  };
  compare_steps("cz", steps, sizeof steps / sizeof steps[0]);
}

/* columnsize=0 over an external content table: sizes counted from it (NULL
 * columns count 0). */
TEST(fts5_columnsize0_external) {
  static const char *const steps[] = {
      "CREATE TABLE c(id INTEGER PRIMARY KEY, a, b)",
      "INSERT INTO c VALUES(1, 'x y z', 'y w'), (2, 'x', NULL), (3, 'p', 'x x x'), (4, 7, 'x')",
      "CREATE VIRTUAL TABLE f USING fts5(a, b, content='c', content_rowid='id', columnsize=0)",
      "INSERT INTO f(f) VALUES('rebuild')",
      "SELECT rowid, bm25(f), snippet(f, -1, '[', ']', '..', 2) FROM f WHERE f MATCH 'x' "
      "ORDER BY rank",
      "SELECT rowid, highlight(f, 1, '<', '>') FROM f('b:x OR y') ORDER BY rank DESC",
      "INSERT INTO f(f) VALUES('integrity-check')",
      "SELECT count(*) FROM f",
  };
  compare_steps("cx", steps, sizeof steps / sizeof steps[0]);
}

/* A rowid already taken, by INSERT or by UPDATE: SQLite's generic
 * "constraint failed" (the module sets no message), nothing written. */
TEST(fts5_rowid_taken) {
  static const char *const steps[] = {
      "CREATE VIRTUAL TABLE f USING fts5(x)",
      "INSERT INTO f(rowid, x) VALUES(1, 'a b'), (2, 'c')",
      "INSERT INTO f(rowid, x) VALUES(1, 'c d')",
      "UPDATE f SET rowid = 1 WHERE rowid = 2",
      "INSERT OR REPLACE INTO f(rowid, x) VALUES(1, 'e')",
      "SELECT rowid, x FROM f ORDER BY rowid",
      "SELECT rowid FROM f('c OR e OR a')",
      "INSERT INTO f(f) VALUES('integrity-check')",
  };
  compare_steps("rt", steps, sizeof steps / sizeof steps[0]);
}

/* Every code point (but surrogates) in documents of 64: SQLite's
 * integrity-check re-tokenizes them with its own tokenizer. */
TEST(fts5_every_code_point) {
  /* categories= (Unicode 6.1.0's general categories), the folds of
   * characters the default calls separators (trigram folds them too) */
  const char *toks[] = {"unicode61 remove_diacritics 0",
                        "unicode61",
                        "unicode61 remove_diacritics 2",
                        "unicode61 categories ''L* N* Co So''",
                        "unicode61 categories ''Lu Nd Zs P*  Xx'' remove_diacritics 0",
                        "unicode61 categories ''M* S* C* Nl'' remove_diacritics 2",
                        "unicode61 tokenchars ''-Â·'' categories ''L* Mn Sk''",
                        "trigram"};
  for (int k = 0; k < (int)(sizeof toks / sizeof toks[0]); k++) {
    char path[512], sql[256];
    snprintf(path, sizeof path, "%s", test_path("cp.db"));
    remove(path);
    shale *db = NULL;
    CHECK_OK(shale_open(path, &db));
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE f USING fts5(c0, tokenize='%s')", toks[k]);
    exec_shale(db, sql);
    exec_shale(db, "BEGIN");
    shale_stmt *st = NULL;
    CHECK_OK(shale_prepare_v2(db, "INSERT INTO f(c0) VALUES(?)", -1, &st, NULL));
    unsigned char buf[64 * 8];
    uint32_t cp = 1;
    int step = test_long() ? 1 : 7; /* every 7th code point unless long */
    while (cp < 0x110000) {
      int n = 0;
      for (int i = 0; i < 64 && cp < 0x110000; cp += (uint32_t)step) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        uint32_t c = cp;
        if (c < 0x80)
          buf[n++] = (unsigned char)c;
        else if (c < 0x800) {
          buf[n++] = (unsigned char)(0xc0 | (c >> 6));
          buf[n++] = (unsigned char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
          buf[n++] = (unsigned char)(0xe0 | (c >> 12));
          buf[n++] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
          buf[n++] = (unsigned char)(0x80 | (c & 0x3f));
        } else {
          buf[n++] = (unsigned char)(0xf0 | (c >> 18));
          buf[n++] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
          buf[n++] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
          buf[n++] = (unsigned char)(0x80 | (c & 0x3f));
        }
        if (i % 3 == 2) buf[n++] = 'a';
        if (i % 5 == 4) buf[n++] = ' ';
        i++;
      }
      shale_bind_text(st, 1, (const char *)buf, n, SHALE_TRANSIENT);
      shale_step(st);
      shale_reset(st);
    }
    shale_finalize(st);
    exec_shale(db, "COMMIT");
    close_shale(db);
    check_sqlite_integrity(path);
  }
}

/* A LIKE or GLOB pattern around one or two query words (some letters
 * upper-cased), with wildcards and GLOB sets. */
static void gen_pattern(uint64_t *rs, Out *o, int glob) {
  static const char *const like_w[] = {"%", "_", "", "%_"}, *const glob_w[] = {"*", "?", "",
                                                                               "[a-z]*", "*[^0-9]"};
  const char *const *wild = glob ? glob_w : like_w;
  int nw = glob ? 5 : 4, nwords = 1 + (int)(test_rand(rs) % 2);
  out_fmt(o, "%s", wild[test_rand(rs) % (uint64_t)nw]);
  for (int i = 0; i < nwords; i++) {
    const char *w = qword(rs);
    int from = (int)(test_rand(rs) % 2), n = (int)strlen(w);
    while (from < n && ((unsigned char)w[from] & 0xc0) == 0x80) from++; /* valid UTF-8 only */
    for (int k = from; k < n; k++) {
      char ch = w[k];
      if (ch >= 'a' && ch <= 'z' && test_rand(rs) % 4 == 0) ch = (char)(ch - 32);
      if (ch == '\'') ch = 'q';
      out_add(o, &ch, 1);
    }
    out_fmt(o, "%s", wild[test_rand(rs) % (uint64_t)nw]);
  }
}

/* fts5vocab (row, col, instance) over one file on both engines: the same
 * rows, in the same order. */
static int compare_vocab(const char *path) {
  static const char *const types[] = {"row", "col", "instance"};
  sqlite3 *ref = NULL;
  shale *sh = NULL;
  int bad = 0;
  sqlite3_open(path, &ref);
  shale_open(path, &sh);
  for (int k = 0; k < 3; k++) {
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.v%d USING fts5vocab(main, f, %s)", k,
             types[k]);
    exec_sqlite(ref, sql);
    exec_shale(sh, sql);
    snprintf(sql, sizeof sql, "SELECT * FROM v%d", k);
    char *a = q_sqlite(ref, sql, NULL), *b = q_shale(sh, sql, NULL);
    CHECK(*a && strncmp(a, "error", 5)); /* a real answer to compare */
    if (strcmp(a, b)) {
      bad++;
      test_fail(__FILE__, __LINE__, "fts5vocab %s of %s\nsqlite:\n%.300s\nshale:\n%.300s", types[k],
                path, a, b);
    }
    free(a);
    free(b);
  }
  sqlite3_close(ref);
  close_shale(sh);
  return bad;
}

/* fts5vocab tables answer as SQLite's over indexes either engine wrote,
 * on every detail=, prefix indexes left out, deleted rows gone. */
TEST(fts5_vocab) {
  static const char *const details[] = {"", ", detail=column", ", detail=none"};
  for (int s = 0; s < 6; s++) {
    uint64_t rs = test_seed() * 8191 + (uint64_t)s * 31 + 5;
    char path[512], sql[512];
    snprintf(path, sizeof path, "%s", test_path("vo.db"));
    remove(path);
    int ncol;
    detail_opt = details[s % 3];
    create_sql(&rs, sql, sizeof sql, &ncol);
    int64_t next = 0;
    if (s < 3) {
      shale *db = NULL;
      CHECK_OK(shale_open(path, &db));
      exec_shale(db, sql);
      write_docs(db, ex_shale, &rs, ncol, 3, 40, &next);
      close_shale(db);
    } else {
      sqlite3 *db = NULL;
      CHECK_OK(sqlite3_open(path, &db));
      exec_sqlite(db, sql);
      write_docs(db, ex_sqlite, &rs, ncol, 6, 30, &next);
      sqlite3_close(db);
    }
    if (compare_vocab(path)) {
      fprintf(stderr, "seed %d: %s\n", s, sql);
      break;
    }
  }
  detail_opt = "";
}

/* Whether LIKE pattern p has 3 bytes in a row that are not wildcards. */
static int has_run3(const char *p) {
  int run = 0;
  for (; *p; p++) {
    run = *p == '%' || *p == '_' ? 0 : run + 1;
    if (run >= 3) return 1;
  }
  return 0;
}

/* Whether pattern p has a run of 3 or more bytes between wildcards that
 * holds fewer than 3 characters (SQLite 3.40.1 crashes on those with
 * detail=column/none). */
static int short_run(const char *p) {
  int bytes = 0, chars = 0;
  for (;; p++) {
    if (!*p || strchr("%_*?[]^", *p)) {
      if (bytes >= 3 && chars < 3) return 1;
      if (!*p) return 0;
      bytes = chars = 0;
      continue;
    }
    bytes++;
    if (((unsigned char)*p & 0xc0) != 0x80) chars++;
  }
}

/* The trigram tokenizer: LIKE and GLOB served by its index (case_sensitive
 * 0: both, 1: GLOB only) give SQLite's rows, alone, combined, and with
 * MATCH; on every detail=; Shale's index passes SQLite's integrity-check. */
TEST(fts5_trigram_patterns) {
  static const char *const details[] = {"", ", detail=column", ", detail=none"};
  int seeds = test_long() ? 24 : 6;
  for (int s = 0; s < seeds; s++) {
    uint64_t rs = test_seed() * 4099 + (uint64_t)s * 7 + 3;
    char path[512], sql[512];
    snprintf(path, sizeof path, "%s", test_path("tg.db"));
    remove(path);
    int ncol = 1 + (int)(test_rand(&rs) % 3), cs = s % 2;
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE f USING fts5(%s, tokenize='trigram%s'%s)",
             ncol == 1   ? "c0"
             : ncol == 2 ? "c0, c1"
                         : "c0, c1, c2",
             cs ? " case_sensitive 1" : "", details[(s / 2) % 3]);
    shale *db = NULL;
    CHECK_OK(shale_open(path, &db));
    exec_shale(db, sql);
    int64_t next = 0;
    write_docs(db, ex_shale, &rs, ncol, 4, 50, &next);
    close_shale(db);
    if (check_sqlite_integrity(path)) break;
    sqlite3 *ref = NULL;
    shale *sh = NULL;
    sqlite3_open(path, &ref);
    shale_open(path, &sh);
    int bad = 0;
    for (int i = 0; i < 200 && bad < 5; i++) {
      Out q = {0}, q2 = {0};
      out_add(&q, "", 0);
      out_add(&q2, "", 0);
      int form = (int)(test_rand(&rs) % 5);
      gen_pattern(&rs, &q, form == 1 || form == 3);
      const char *forms[] = {"SELECT rowid FROM f WHERE c0 LIKE ?1",
                             "SELECT rowid, c0 FROM f WHERE c0 GLOB ?1",
                             "SELECT rowid FROM f WHERE c0 LIKE ?1 AND f MATCH ?2",
                             "SELECT count(*) FROM f WHERE c0 GLOB ?1 OR c0 LIKE ?2",
                             "SELECT rowid, bm25(f) FROM f WHERE c0 LIKE ?1 ORDER BY rank"};
      if (form == 2) gen_query(&rs, &q2, 2, 1);
      if (form == 3) gen_pattern(&rs, &q2, 0);
      int skip = form == 2 && !has_run3(q.p); /* SQLite 3.40.1 crashes on those */
      if ((s / 2) % 3 && (short_run(q.p) || (form == 3 && short_run(q2.p)))) skip = 1;
      if (skip) {
        free(q.p);
        free(q2.p);
        continue;
      }
      char *a = q_sqlite2(ref, forms[form], q.p, q2.p), *b = q_shale2(sh, forms[form], q.p, q2.p);
      if (strcmp(a, b)) {
        bad++;
        test_fail(__FILE__, __LINE__, "%s [%s] [%s]\n%s\nsqlite:\n%.300s\nshale:\n%.300s",
                  forms[form], q.p, q2.p, sql, a, b);
      }
      free(a);
      free(b);
      free(q.p);
      free(q2.p);
    }
    sqlite3_close(ref);
    close_shale(sh);
    if (bad) break;
  }
}

/* A word for the stemmer: random letters (vowels, y, doubled consonants,
 * a non-ASCII letter now and then) with zero to two of Porter's suffixes. */
static void porter_word(uint64_t *rs, char *w, size_t cap) {
  static const char *const suf[] = {
      "ational", "tional", "enci",    "anci",  "izer",  "logi",  "bli",     "alli",    "entli",
      "eli",     "ousli",  "ization", "ation", "ator",  "alism", "iveness", "fulness", "ousness",
      "aliti",   "iviti",  "biliti",  "icate", "ative", "alize", "iciti",   "ical",    "ful",
      "ness",    "al",     "ance",    "ence",  "er",    "ic",    "able",    "ible",    "ant",
      "ement",   "ment",   "ent",     "sion",  "tion",  "ou",    "ism",     "ate",     "iti",
      "ous",     "ive",    "ize",     "ing",   "ed",    "eed",   "s",       "es",      "ies",
      "sses",    "y",      "ly",      "ll",    "e",     "at",    "bl",      "iz",      "ss"};
  static const char letters[] = "aeiouyybcdlmnrsstzwxgl";
  size_t n = 0, nl = (size_t)(test_rand(rs) % 8);
  for (size_t i = 0; i < nl; i++) w[n++] = letters[test_rand(rs) % (sizeof letters - 1)];
  for (int k = 0; k < 2; k++) {
    if (test_rand(rs) % 10 >= (k ? 2u : 7u)) continue;
    const char *x = suf[test_rand(rs) % (sizeof suf / sizeof suf[0])];
    size_t m = strlen(x);
    if (n + m + 3 < cap) memcpy(w + n, x, m), n += m;
  }
  if (test_rand(rs) % 20 == 0) memcpy(w + n, "\xc3\xa9", 2), n += 2;
  w[n] = 0;
}

/* The porter tokenizer stems as SQLite's: the same words indexed by each
 * engine give the same terms (fts5vocab, read by SQLite) and SQLite's
 * integrity-check of Shale's index passes. */
TEST(fts5_porter_stems) {
  const char *const toks[] = {"porter", "porter ascii", "porter unicode61 remove_diacritics 0"};
  int nword = test_long() ? 60000 : 12000;
  for (int k = 0; k < 3; k++) {
    char path[2][512], sql[640], w[64];
    snprintf(path[0], sizeof path[0], "%s", test_path("pt-ref.db"));
    snprintf(path[1], sizeof path[1], "%s", test_path("pt-shale.db"));
    remove(path[0]);
    remove(path[1]);
    sqlite3 *ref = NULL;
    shale *sh = NULL;
    CHECK_OK(sqlite3_open(path[0], &ref));
    CHECK_OK(shale_open(path[1], &sh));
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE f USING fts5(a, tokenize='%s')", toks[k]);
    exec_sqlite(ref, sql);
    exec_shale(sh, sql);
    exec_sqlite(ref, "BEGIN");
    exec_shale(sh, "BEGIN");
    uint64_t rs = test_seed() * 977 + (uint64_t)k;
    for (int i = 0; i < nword; i++) {
      porter_word(&rs, w, sizeof w);
      snprintf(sql, sizeof sql, "INSERT INTO f VALUES('%s %s')", w, i % 7 ? "" : "Running");
      exec_sqlite(ref, sql);
      exec_shale(sh, sql);
    }
    exec_sqlite(ref, "COMMIT");
    exec_shale(sh, "COMMIT");
    close_shale(sh);
    check_sqlite_integrity(path[1]);
    snprintf(sql, sizeof sql, "ATTACH '%s' AS s", path[1]);
    exec_sqlite(ref, sql);
    exec_sqlite(ref, "CREATE VIRTUAL TABLE temp.v1 USING fts5vocab(main, f, row)");
    exec_sqlite(ref, "CREATE VIRTUAL TABLE temp.v2 USING fts5vocab(s, f, row)");
    char *a = q_sqlite(ref, "SELECT count(*) FROM v1", NULL);
    char *b =
        q_sqlite(ref,
                 "SELECT term, doc, cnt FROM v1 EXCEPT SELECT term, doc, cnt FROM v2 UNION ALL "
                 "SELECT 'only shale', term, doc FROM (SELECT term, doc, cnt FROM v2 EXCEPT "
                 "SELECT term, doc, cnt FROM v1) LIMIT 10",
                 NULL);
    CHECK(atoi(a) > nword / 4);
    if (*b) test_fail(__FILE__, __LINE__, "%s: terms differ (sqlite's first):\n%s", toks[k], b);
    free(a);
    free(b);
    sqlite3_close(ref);
  }
}

/* Damaged %_data blobs: errors (or answers), never a crash. */
TEST(fts5_corrupt) {
  char path[512];
  snprintf(path, sizeof path, "%s", test_path("bad.db"));
  uint64_t rs = test_seed() + 99;
  for (int round = 0; round < 60; round++) {
    remove(path);
    sqlite3 *ref = NULL;
    sqlite3_open(path, &ref);
    exec_sqlite(ref, "CREATE VIRTUAL TABLE f USING fts5(c0, c1, prefix=2)");
    exec_sqlite(ref, "INSERT INTO f(f, rank) VALUES('pgsz', 64)");
    int64_t next = 0;
    write_docs(ref, ex_sqlite, &rs, 2, 3, 20, &next);
    /* change 1-4 random bytes of one random block (or truncate it) */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT id, length(block) FROM f_data ORDER BY id LIMIT 1 OFFSET %d",
             (int)(test_rand(&rs) % 6));
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(ref, sql, -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW) {
      long long id = sqlite3_column_int64(st, 0);
      int len = sqlite3_column_int(st, 1);
      sqlite3_finalize(st);
      st = NULL;
      if (len > 0 && test_rand(&rs) % 4 == 0) {
        snprintf(sql, sizeof sql, "UPDATE f_data SET block = substr(block, 1, %d) WHERE id = %lld",
                 (int)(test_rand(&rs) % (uint64_t)len), id);
        exec_sqlite(ref, sql);
      }
      for (int k = 0; len > 0 && k < 1 + (int)(test_rand(&rs) % 4); k++) {
        int off = (int)(test_rand(&rs) % (uint64_t)len);
        snprintf(sql, sizeof sql,
                 "UPDATE f_data SET block = substr(block, 1, %d) || x'%02x' || substr(block, %d) "
                 "WHERE id = %lld",
                 off, (int)(test_rand(&rs) & 0xff), off + 2, id);
        exec_sqlite(ref, sql);
      }
    }
    sqlite3_finalize(st);
    sqlite3_close(ref);
    shale *db = NULL;
    CHECK_OK(shale_open(path, &db));
    for (int i = 0; i < 12; i++) {
      Out q = {0};
      out_add(&q, "", 0);
      gen_query(&rs, &q, 0, 2);
      free(q_shale(db, qforms[i % NQFORMS], q.p));
      free(q.p);
    }
    free(q_shale(db, "INSERT INTO f(f) VALUES('integrity-check')", NULL));
    free(q_shale(db, "INSERT INTO f(c0, c1) VALUES('alpha beta', 'gamma')", NULL));
    free(q_shale(db, "DELETE FROM f WHERE rowid IN (1, 2, 3)", NULL));
    free(q_shale(db, "INSERT INTO f(f) VALUES('optimize')", NULL));
    close_shale(db);
  }
}

/* Savepoints as SQLite's: what is pending is written at xSavepoint and
 * xRelease (before the statement's or SAVEPOINT's own savepoint opens),
 * so a ROLLBACK TO, or a multi-row statement failing part way inside a
 * transaction, drops only its own rows and the transaction goes on; an
 * UPDATE/DELETE by rowid changes its row in one pass (no statement
 * savepoint: SQLITE_INDEX_SCAN_UNIQUE). Each script runs on both engines
 * with the rows, the number of segments (FTS5_SEGMENT_ROWID: id >> 37)
 * and 'integrity-check' compared at the end. */
#define FTS5_SEGS "SELECT count(DISTINCT id >> 37) FROM f_data WHERE id >> 37 > 0"
#define FTS5_ROWS "SELECT group_concat(rowid || ':' || a, ' ') FROM f"
#define FTS5_CHECK "INSERT INTO f(f) VALUES('integrity-check')"

/* sql on the engine open (sh, else ref), its answer appended to *acc. */
static void sp_run(shale *sh, sqlite3 *ref, const char *sql, char **acc, size_t *n, size_t *cap) {
  char *r = sh ? q_shale(sh, sql, NULL) : q_sqlite(ref, sql, NULL);
  size_t need = *n + strlen(r) + 4;
  if (need > *cap) *acc = realloc(*acc, *cap = need * 2);
  *n += (size_t)sprintf(*acc + *n, "%s; ", r);
  free(r);
}

TEST(fts5_savepoints) {
  static const char *const bodies[] = {
      "INSERT INTO f(rowid, a) VALUES(10, 'p q'), (1, 'r')", /* fails at its second row */
      "SAVEPOINT s; INSERT INTO f VALUES('b'); ROLLBACK TO s; INSERT INTO f VALUES('b2')",
      "SAVEPOINT s; INSERT INTO f VALUES('b'); RELEASE s",
      "SAVEPOINT s; INSERT INTO f VALUES('b'); SAVEPOINT t; INSERT INTO f VALUES('b c');"
      " ROLLBACK TO s; INSERT INTO f VALUES('d'); RELEASE s",
      "SAVEPOINT s; INSERT INTO f SELECT 'm' UNION ALL SELECT 'n'; ROLLBACK TO s",
      "INSERT INTO f SELECT 'c d' UNION ALL SELECT 'e f'",
      "UPDATE f SET a = 'b' WHERE rowid = 1",
      "DELETE FROM f WHERE rowid = 1",
      "UPDATE f SET a = 'b' WHERE rowid >= 1 AND rowid <= 1",
      "UPDATE f SET a = 'z' WHERE rowid IN (1, 5)",
      "DELETE FROM f WHERE f MATCH 'z'",
      "UPDATE f SET rowid = 7 WHERE rowid = 1",
      "INSERT OR REPLACE INTO f(rowid, a) VALUES(1, 'q')",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    char *out[2];
    for (int e = 0; e < 2; e++) {
      char path[512];
      snprintf(path, sizeof path, "%s", test_path(e ? "sp-shale.db" : "sp-ref.db"));
      remove(path);
      sqlite3 *ref = NULL;
      shale *sh = NULL;
      if (e)
        CHECK_OK(shale_open(path, &sh));
      else
        CHECK_OK(sqlite3_open(path, &ref));
      static const char *const head[] = {"CREATE VIRTUAL TABLE f USING fts5(a)",
                                         "INSERT INTO f(rowid, a) VALUES(1, 'x y')", "BEGIN",
                                         "INSERT INTO f(rowid, a) VALUES(5, 'z')"};
      for (int k = 0; k < 4; k++)
        free(e ? q_shale(sh, head[k], NULL) : q_sqlite(ref, head[k], NULL));
      /* the body statement by statement, its errors kept */
      size_t n = 0, cap = 256;
      char *acc = malloc(cap);
      acc[0] = 0;
      const char *sql = bodies[i];
      while (*sql) {
        const char *end = strchr(sql, ';');
        size_t len = end ? (size_t)(end - sql) : strlen(sql);
        char one[400];
        snprintf(one, sizeof one, "%.*s", (int)len, sql);
        sp_run(sh, ref, one, &acc, &n, &cap);
        sp_run(sh, ref, FTS5_ROWS, &acc, &n, &cap);
        sql = end ? end + 1 : sql + len;
        while (*sql == ' ') sql++;
      }
      static const char *const tail[] = {"INSERT INTO f VALUES('c')", "COMMIT", FTS5_ROWS,
                                         FTS5_SEGS, FTS5_CHECK};
      for (int k = 0; k < 5; k++) sp_run(sh, ref, tail[k], &acc, &n, &cap);
      out[e] = acc;
      if (e)
        close_shale(sh);
      else
        sqlite3_close(ref);
    }
    if (strcmp(out[0], out[1]))
      test_fail(__FILE__, __LINE__, "%s\nsqlite: %s\nshale:  %s", bodies[i], out[0], out[1]);
    free(out[0]);
    free(out[1]);
  }
}
