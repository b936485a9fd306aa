/*
 * test_sql_tokenize.c -- the tokenizer (token types and lengths), the
 * keyword table against the reference sqlite3 (which keywords may be
 * identifiers), sql_complete, and the arena allocator it all runs on.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../../../src/parse/parse.h"
#include "../../test.h"

/* Tokenize z and render "TYPE:text TYPE:text ..." (spaces skipped). */
static const char *tname(int t) {
  static const char *const names[] = {
      "EOF",  "SPACE", "ILLEGAL", "ID",     "STRING", "INTEGER", "FLOAT", "BLOB",
      "VAR",  "SEMI",  "LP",      "RP",     "COMMA",  "DOT",     "PLUS",  "MINUS",
      "STAR", "SLASH", "REM",     "CONCAT", "PTR",    "EQ",      "NE",    "LT",
      "LE",   "GT",    "GE",      "LSHIFT", "RSHIFT", "BITAND",  "BITOR", "BITNOT"};
  if (t < TK_FIRST_KEYWORD) return names[t];
  return "KW";
}

static char out[4096];
static const char *toks(const char *z) {
  int n = (int)strlen(z);
  out[0] = 0;
  size_t o = 0;
  while (n > 0) {
    int t;
    int len = sql_token(z, n, &t);
    if (len < 1 || len > n) return "BAD LENGTH";
    if (t != TK_SPACE)
      o += (size_t)snprintf(out + o, sizeof out - o, "%s%s:%.*s", o ? " " : "", tname(t), len, z);
    z += len;
    n -= len;
  }
  return out;
}

TEST(tokenize_basic) {
  CHECK_STR(toks("select a from t;"), "KW:select ID:a KW:from ID:t SEMI:;");
  CHECK_STR(toks("\"a b\" [c d] `e``f` 'g''h'"), "ID:\"a b\" ID:[c d] ID:`e``f` STRING:'g''h'");
  CHECK_STR(toks("x'0aFF' X'' x'1' x'zz' xyz"),
            "BLOB:x'0aFF' BLOB:X'' ILLEGAL:x'1' ILLEGAL:x'zz' ID:xyz");
  CHECK_STR(toks("1 1.5 .5 1. 1e10 1.5E-3 0x1F 0x 1e 12abc 1_000 0x1g"),
            "INTEGER:1 FLOAT:1.5 FLOAT:.5 FLOAT:1. FLOAT:1e10 FLOAT:1.5E-3 INTEGER:0x1F "
            "ILLEGAL:0x ILLEGAL:1e ILLEGAL:12abc ILLEGAL:1_000 INTEGER:0x1 ID:g");
  CHECK_STR(toks("1.2.3 1e+ .5e2x"), "FLOAT:1.2 FLOAT:.3 ILLEGAL:1e PLUS:+ ILLEGAL:.5e2x");
  CHECK_STR(toks("? ?12 :a @b $c $a::b(c) $ : @ ?a $a:b"),
            "VAR:? VAR:?12 VAR::a VAR:@b VAR:$c VAR:$a::b(c) ILLEGAL:$ ILLEGAL:: ILLEGAL:@ "
            "VAR:? ID:a VAR:$a VAR::b");
  CHECK_STR(toks("$a::b(c"), "ILLEGAL:$a::b(c");
  CHECK_STR(toks("|| -> ->> == != <> << >> <= >= = < > & | ~ % / * + - ! #"),
            "CONCAT:|| PTR:-> PTR:->> EQ:== NE:!= NE:<> LSHIFT:<< RSHIFT:>> LE:<= GE:>= EQ:= "
            "LT:< GT:> BITAND:& BITOR:| BITNOT:~ REM:% SLASH:/ STAR:* PLUS:+ MINUS:- "
            "ILLEGAL:! ILLEGAL:#");
  CHECK_STR(toks("a -- comment\nb /* c */ c /* open"), "ID:a ID:b ID:c");
  CHECK_STR(toks("'abc"), "ILLEGAL:'abc");
  CHECK_STR(toks("#a #1 #"), "VAR:#a VAR:#1 ILLEGAL:#");
  CHECK_STR(toks("a /*"), "ID:a SLASH:/ STAR:*"); /* as SQLite: too short to be a comment */
  CHECK_STR(toks("a /*x"), "ID:a");
  CHECK_STR(toks("[abc"), "ILLEGAL:[abc");
  CHECK_STR(toks("\xc3\xa9t\xc3\xa9 a$b _x"), "ID:\xc3\xa9t\xc3\xa9 ID:a$b ID:_x");
  CHECK_STR(toks("SeLeCt CURRENT_TIMESTAMP current_date"),
            "KW:SeLeCt KW:CURRENT_TIMESTAMP KW:current_date");
}

TEST(tokenize_bounds) {
  /* never reads past n: tokenizing a prefix gives a token within it */
  const char *z = "'abc' x'01' 123.5e7 /* c */ -- d\n$a::b(c) [q]";
  int n = (int)strlen(z);
  for (int m = 1; m <= n; m++) {
    for (int off = 0; off < m;) {
      int t;
      int len = sql_token(z + off, m - off, &t);
      CHECK(len >= 1 && off + len <= m);
      off += len;
    }
  }
}

TEST(keywords_lookup) {
  CHECK_EQ(sql_keyword_count(), 147);
  for (int i = 0; i < sql_keyword_count(); i++) {
    const char *k = sql_keyword_at(i);
    int n = (int)strlen(k);
    int tk = sql_keyword(k, n);
    CHECK(tk > TK_FIRST_KEYWORD);
    CHECK_STR(sql_keyword_name(tk), k);
    char lower[32];
    for (int j = 0; j <= n; j++) lower[j] = (char)(k[j] >= 'A' && k[j] <= 'Z' ? k[j] + 32 : k[j]);
    CHECK_EQ(sql_keyword(lower, n), tk);
    CHECK_EQ(sql_keyword(k, n - 1) == tk, 0);
    if (i > 0) CHECK(strcmp(sql_keyword_at(i - 1), k) < 0);
  }
  CHECK_EQ(sql_keyword("selectx", 7), TK_ID);
  CHECK_EQ(sql_keyword("rowid", 5), TK_ID);
  CHECK_EQ(sql_keyword("true", 4), TK_ID);
  CHECK_EQ(sql_keyword("sel_ct", 6), TK_ID);
}

/* The ID flag in keywords.def must agree with the reference: a keyword may
 * name a column exactly when SQLite accepts CREATE TABLE t(<kw> INT). */
TEST(keywords_fallback_matches_reference) {
  sqlite3 *db;
  CHECK_OK(sqlite3_open(":memory:", &db));
  for (int i = 0; i < sql_keyword_count(); i++) {
    const char *k = sql_keyword_at(i);
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE TABLE t(%s INT)", k);
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    int tk = sql_keyword(k, (int)strlen(k));
    if (ok != sql_keyword_is_id(tk))
      test_fail(__FILE__, __LINE__, "keyword %s: reference %d", k, ok);
  }
  sqlite3_close(db);
}

TEST(complete) {
  CHECK_EQ(sql_complete("select 1;"), 1);
  CHECK_EQ(sql_complete("select 1"), 0);
  CHECK_EQ(sql_complete("select ';'"), 0);
  CHECK_EQ(sql_complete("select 1; -- x"), 1);
  CHECK_EQ(sql_complete("select 'a"), 0);
  CHECK_EQ(sql_complete("create trigger r after insert on t begin select 1;"), 0);
  CHECK_EQ(sql_complete("create trigger r after insert on t begin select 1; end;"), 1);
  CHECK_EQ(sql_complete("create table t(x);"), 1);
  /* agree with the reference on a few */
  const char *cases[] = {"select 1;",
                         "select 1",
                         ";",
                         "",
                         "/* x */;",
                         "select 1; /*",
                         "create temp trigger x before delete on t begin delete from u; end ;",
                         "select \"a;\";",
                         "select [a;];"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (sql_complete(cases[i]) != sqlite3_complete(cases[i]))
      test_fail(__FILE__, __LINE__, "sql_complete(%s) differs", cases[i]);
}

TEST(arena_basic) {
  UtilArena a;
  util_arena_init(&a, 256);
  char *p1 = util_arena_alloc(&a, 1);
  char *p2 = util_arena_alloc(&a, 3);
  CHECK(p1 && p2);
  CHECK(((uintptr_t)p1 & 7) == 0 && ((uintptr_t)p2 & 7) == 0);
  CHECK(p2 >= p1 + 8);
  char *big = util_arena_alloc(&a, 10000); /* own chunk */
  CHECK(big && ((uintptr_t)big & 7) == 0);
  memset(big, 1, 10000);
  char *p3 = util_arena_alloc(&a, 8); /* still from the first chunk */
  CHECK(p3 == p2 + 8);
  for (int i = 0; i < 1000; i++) {
    int *q = util_arena_zalloc(&a, sizeof(int) * 3);
    CHECK(q && q[0] == 0 && q[2] == 0);
    q[1] = i;
  }
  const char *s = util_arena_strndup(&a, "hello world", 5);
  CHECK_STR(s, "hello");
  util_arena_reset(&a);
  CHECK_EQ(util_alloc_outstanding() > 0, 1); /* one chunk kept */
  CHECK(util_arena_alloc(&a, 16) != NULL);
  util_arena_free(&a);
  util_arena_free(&a); /* idempotent */
  CHECK(util_arena_alloc(&a, 0) != NULL);
  util_arena_free(&a);
}

TEST(arena_oom) {
  for (long n = 1; n < 20; n++) {
    UtilArena a;
    util_arena_init(&a, 64);
    util_fault_alloc(n, 1);
    int failed = 0;
    for (int i = 0; i < 50; i++) {
      void *p = util_arena_alloc(&a, (size_t)(i % 7) * 10 + 1);
      if (!p)
        failed = 1;
      else
        memset(p, 0xab, (size_t)(i % 7) * 10 + 1); /* memory handed out is usable */
    }
    util_fault_alloc(0, 0);
    CHECK(failed);
    util_arena_free(&a);
  }
}

/* sql_complete agrees with sqlite3_complete on every prefix of a set of
 * scripts (statements, triggers, comments, quotes). */
TEST(complete_matches_reference) {
  static const char *const scripts[] = {
      "SELECT 1; SELECT 'a;b' -- x;\n; /* ; */ SELECT \"c;\" ;",
      "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; UPDATE t SET a = 1; END; SELECT 2;",
      "create temp trigger r before delete on t begin delete from u; end ;",
      "EXPLAIN CREATE TEMPORARY TRIGGER r UPDATE ON t BEGIN SELECT CASE WHEN 1 THEN 2 END; END;",
      "SELECT create, trigger FROM t; CREATE TABLE trigger(x); CREATE INDEX i ON t(x);",
      "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1;; END ; END;",
      "select [a;b], `c;d`, x'00'; explain select 1; explain; ;;",
      "CREATE VIEW v AS SELECT 1; CREATE \"TRIGGER\" x; SELECT 'it''s;';",
      "EXPLAIN QUERY PLAN CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; END; SELECT 1;",
      "EXPLAIN EXPLAIN CREATE TRIGGER r BEGIN SELECT 1; END; x;\v;",
  };
  int n = 0;
  for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
    size_t len = strlen(scripts[i]);
    char buf[512];
    for (size_t k = 0; k <= len; k++) {
      memcpy(buf, scripts[i], k);
      buf[k] = 0;
      n++;
      if (sql_complete(buf) != sqlite3_complete(buf))
        test_fail(__FILE__, __LINE__, "sql_complete(\"%s\") = %d", buf, sql_complete(buf));
    }
  }
  CHECK(n > 500);
}

/* Random texts of SQL fragments, every prefix compared with the reference's
 * sqlite3_complete, once at once (sql_complete) and once fed to the
 * resumable scan in random pieces (invariant 1 of complete.c). */
TEST(complete_scan_random_pieces) {
  static const char *const frag[] = {";",
                                     " ",
                                     "\n",
                                     "\t",
                                     "\v",
                                     "\f",
                                     "\r",
                                     "CREATE",
                                     "create",
                                     "TEMP",
                                     "temporary",
                                     "TRIGGER",
                                     "trigger",
                                     "END",
                                     "end",
                                     "EXPLAIN",
                                     "explain",
                                     "QUERY",
                                     "PLAN",
                                     "SELECT",
                                     "x",
                                     "1",
                                     "$a",
                                     "_",
                                     "tempx",
                                     "endx",
                                     "'",
                                     "\"",
                                     "`",
                                     "[",
                                     "]",
                                     "'a;b'",
                                     "\"q\"",
                                     "[n;]",
                                     "/*",
                                     "*/",
                                     "/",
                                     "*",
                                     "-",
                                     "--",
                                     "-- c;\n",
                                     "/* ; */",
                                     "BEGIN",
                                     "\xc3\xa9",
                                     "(",
                                     ")",
                                     "e",
                                     "c",
                                     "t",
                                     "creat",
                                     "triggers",
                                     " EXPLAIN QUERY PLAN CREATE TRIGGER r ",
                                     " CREATE TEMP TRIGGER ",
                                     " BEGIN SELECT 1; ",
                                     " END; ",
                                     " END ",
                                     "CREATE/**/TRIGGER ",
                                     "EXPLAIN--\nCREATE\tTRIGGER "};
  const int nfrag = (int)(sizeof frag / sizeof frag[0]);
  uint64_t seed = 12345;
  int mismatches = 0;
  for (int round = 0; round < 4000 && mismatches < 5; round++) {
    char buf[600];
    size_t len = 0;
    int nf = 1 + (int)((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % 30;
    for (int k = 0; k < nf; k++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      const char *f = frag[(seed >> 33) % (uint64_t)nfrag];
      size_t fl = strlen(f);
      if (len + fl + 1 >= sizeof buf) break;
      memcpy(buf + len, f, fl);
      len += fl;
    }
    buf[len] = 0;
    SqlCompleteScan sc;
    sql_complete_scan_init(&sc);
    size_t fed = 0;
    for (size_t k = 0; k <= len; k++) {
      char save = buf[k];
      buf[k] = 0;
      int want = sqlite3_complete(buf);
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((seed >> 40) % 3 == 0 || k == len) { /* feed a piece up to here */
        sql_complete_scan_feed(&sc, buf + fed, k - fed);
        fed = k;
        if (sql_complete_scan_done(&sc) != want && mismatches++ < 5)
          test_fail(__FILE__, __LINE__, "scan of \"%s\" = %d, reference %d", buf, !want, want);
      }
      if (sql_complete(buf) != want && mismatches++ < 5)
        test_fail(__FILE__, __LINE__, "sql_complete(\"%s\") = %d, reference %d", buf, !want, want);
      buf[k] = save;
    }
  }
}
