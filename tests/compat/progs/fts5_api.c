/*
 * fts5_api.c -- SQLite's FTS5 extension interface from an application,
 * run on both libraries (output compared): the fts5_api found with
 * `SELECT fts5(?1)` and sqlite3_bind_pointer(.., "fts5_api_ptr"), a synonym
 * tokenizer wrapping a built-in one found with xFindTokenizer
 * (FTS5_TOKEN_COLOCATED at document or at query time, over unicode61 or
 * porter), an auxiliary function that prints what the Fts5ExtensionApi
 * says about each row (xInst, xPhraseFirst/Next, xPhraseFirstColumn/Next,
 * xQueryPhrase, auxdata across rows, sizes and totals, xTokenize), and the
 * error returns (bad indexes, unknown tokenizers, failing constructors and
 * tokenizers, errors raised by an auxiliary function).
 *
 * Invariants:
 *  1. Every line printed is a fact both libraries must agree on.
 */
#include <stdarg.h>

#include "prog.h"

static fts5_api *get_api(sqlite3 *db, const char *type) {
  fts5_api *api = NULL;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK) return NULL;
  sqlite3_bind_pointer(st, 1, (void *)&api, type, NULL);
  sqlite3_step(st);
  sqlite3_finalize(st);
  return api;
}

/* ---- the synonym tokenizer: "syn [query] PARENT ARGS..." ---- */
typedef struct Syn {
  fts5_tokenizer parent;
  Fts5Tokenizer *inst;
  int at_query; /* add synonyms to queries instead of documents */
} Syn;

static int destroyed_tok, destroyed_aux, destroyed_auxdata;

static void tok_destroy(void *p) { destroyed_tok += p != NULL; }

static int syn_create(void *ctx, const char **argv, int argc, Fts5Tokenizer **out) {
  fts5_api *api = ctx;
  Syn *s = calloc(1, sizeof *s);
  if (!s) return SQLITE_NOMEM;
  if (argc > 0 && !strcmp(argv[0], "query")) {
    s->at_query = 1;
    argv++;
    argc--;
  }
  if (argc > 0 && !strcmp(argv[0], "fail")) {
    free(s);
    return SQLITE_ERROR;
  }
  void *pctx;
  int rc = api->xFindTokenizer(api, argc > 0 ? argv[0] : "unicode61", &pctx, &s->parent);
  if (rc == SQLITE_OK)
    rc = s->parent.xCreate(pctx, argc > 1 ? argv + 1 : NULL, argc > 1 ? argc - 1 : 0, &s->inst);
  if (rc != SQLITE_OK) {
    free(s);
    return rc;
  }
  *out = (Fts5Tokenizer *)s;
  return SQLITE_OK;
}

static void syn_delete(Fts5Tokenizer *t) {
  Syn *s = (Syn *)t;
  s->parent.xDelete(s->inst);
  free(s);
}

typedef struct SynCtx {
  void *ctx;
  int (*cb)(void *, int, const char *, int, int, int);
  int add;
} SynCtx;

static const char *const kSyn[][3] = {
    {"first", "1st", NULL}, {"one", "1", "i"}, {"two", "2", NULL}, {"run", "ran", NULL}};

static int syn_cb(void *ctx, int tflags, const char *tok, int n, int start, int end) {
  SynCtx *c = ctx;
  if (n == 4 && !memcmp(tok, "boom", 4)) return SQLITE_CONSTRAINT;
  int rc = c->cb(c->ctx, tflags, tok, n, start, end);
  for (size_t i = 0; rc == SQLITE_OK && c->add && i < sizeof kSyn / sizeof kSyn[0]; i++) {
    if (strlen(kSyn[i][0]) != (size_t)n || memcmp(kSyn[i][0], tok, (size_t)n)) continue;
    for (int k = 1; k < 3 && kSyn[i][k] && rc == SQLITE_OK; k++)
      rc = c->cb(c->ctx, FTS5_TOKEN_COLOCATED, kSyn[i][k], (int)strlen(kSyn[i][k]), start, end);
  }
  return rc;
}

static int syn_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
                        int (*cb)(void *, int, const char *, int, int, int)) {
  Syn *s = (Syn *)t;
  SynCtx c = {ctx, cb, 0};
  c.add = s->at_query ? (flags & FTS5_TOKENIZE_QUERY) != 0 : (flags & FTS5_TOKENIZE_DOCUMENT) != 0;
  return s->parent.xTokenize(s->inst, &c, flags, text, n, syn_cb);
}

/* ---- the auxiliary function info(t [, what]) ---- */
typedef struct Out {
  char buf[4096];
  size_t n;
} Out;

static void out(Out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (o->n < sizeof o->buf) o->n += (size_t)vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
  va_end(ap);
  if (o->n > sizeof o->buf) o->n = sizeof o->buf;
}

static int count_tok(void *ctx, int tflags, const char *t, int n, int s, int e) {
  (void)t;
  (void)n;
  (void)s;
  (void)e;
  if (!(tflags & FTS5_TOKEN_COLOCATED)) (*(int *)ctx)++;
  return SQLITE_OK;
}

typedef struct QP {
  Out *o;
  int rows, insts;
} QP;

static int qp_cb(const Fts5ExtensionApi *api, Fts5Context *fc, void *user) {
  QP *q = user;
  int n = 0;
  api->xInstCount(fc, &n);
  q->rows++;
  q->insts += n;
  out(q->o, " r%lld/%d", (long long)api->xRowid(fc), n);
  return q->rows == 3 ? SQLITE_DONE : SQLITE_OK; /* stop after three */
}

static void auxdata_free(void *p) {
  destroyed_auxdata++;
  free(p);
}

static void info(const Fts5ExtensionApi *api, Fts5Context *fc, sqlite3_context *ctx, int argc,
                 sqlite3_value **argv) {
  Out o = {{0}, 0};
  const char *what = argc > 0 ? (const char *)sqlite3_value_text(argv[0]) : "all";
  if (!what) what = "all";
  if (!strcmp(what, "error")) {
    sqlite3_result_error(ctx, "info: asked to fail", -1);
    return;
  }
  if (!strcmp(what, "range")) {
    int a, b, c, n;
    const char *z;
    sqlite3_int64 x;
    out(&o, "inst %d", api->xInst(fc, -1, &a, &b, &c));
    out(&o, " inst+ %d", api->xInst(fc, 1000, &a, &b, &c));
    out(&o, " text %d", api->xColumnText(fc, 99, &z, &n));
    out(&o, " text- %d", api->xColumnText(fc, -1, &z, &n));
    out(&o, " size %d", api->xColumnSize(fc, 99, &n));
    out(&o, " total %d", api->xColumnTotalSize(fc, 99, &x));
    out(&o, " psize %d %d", api->xPhraseSize(fc, 99), api->xPhraseSize(fc, -1));
    sqlite3_result_text(ctx, o.buf, (int)o.n, SQLITE_TRANSIENT);
    return;
  }
  int *calls = api->xGetAuxdata(fc, 0);
  if (!calls) {
    calls = calloc(1, sizeof *calls);
    api->xSetAuxdata(fc, calls, auxdata_free);
  }
  ++*calls;
  sqlite3_int64 nrow = 0, tot = 0, tot0 = 0;
  api->xRowCount(fc, &nrow);
  api->xColumnTotalSize(fc, -1, &tot);
  api->xColumnTotalSize(fc, 0, &tot0);
  out(&o, "[%s] call %d rowid %lld ncol %d rows %lld tokens %lld/%lld", (char *)api->xUserData(fc),
      *calls, (long long)api->xRowid(fc), api->xColumnCount(fc), (long long)nrow, (long long)tot0,
      (long long)tot);
  int np = 0, ni = 0;
  if (strcmp(what, "scan")) { /* a scan has no query: SQLite's phrase calls would crash */
    np = api->xPhraseCount(fc);
    api->xInstCount(fc, &ni);
  }
  out(&o, " phrases %d insts %d:", np, ni);
  for (int i = 0; i < ni; i++) {
    int p, c, off;
    if (api->xInst(fc, i, &p, &c, &off) == SQLITE_OK) out(&o, " %d.%d.%d", p, c, off);
  }
  for (int p = 0; p < np; p++) {
    Fts5PhraseIter it;
    int c, off;
    out(&o, " | p%d size %d at", p, api->xPhraseSize(fc, p));
    for (api->xPhraseFirst(fc, p, &it, &c, &off); c >= 0; api->xPhraseNext(fc, &it, &c, &off))
      out(&o, " %d:%d", c, off);
    out(&o, " cols");
    for (api->xPhraseFirstColumn(fc, p, &it, &c); c >= 0; api->xPhraseNextColumn(fc, &it, &c))
      out(&o, " %d", c);
    if (!strcmp(what, "all")) {
      QP q = {&o, 0, 0};
      out(&o, " query");
      int rc = api->xQueryPhrase(fc, p, &q, qp_cb);
      out(&o, " rc %d rows %d insts %d", rc, q.rows, q.insts);
    }
  }
  for (int c = 0; c < api->xColumnCount(fc); c++) {
    const char *z = NULL;
    int n = 0, sz = -2, ntok = 0;
    api->xColumnText(fc, c, &z, &n);
    api->xColumnSize(fc, c, &sz);
    if (z) api->xTokenize(fc, z, n, &ntok, count_tok);
    out(&o, " | c%d %d bytes %d tokens (%d)", c, n, sz, ntok);
  }
  int all = -2;
  api->xColumnSize(fc, -1, &all);
  out(&o, " | all %d", all);
  sqlite3_result_text(ctx, o.buf, (int)o.n, SQLITE_TRANSIENT);
}

static void aux_destroy(void *p) { destroyed_aux += p != NULL; }

static void show(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    printf("%s -> prepare error: %s\n", sql, sqlite3_errmsg(db));
    return;
  }
  printf("%s ->\n", sql);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    printf(" ");
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *z = sqlite3_column_text(st, i);
      if (sqlite3_column_type(st, i) == SQLITE_FLOAT)
        printf(" %.6f", sqlite3_column_double(st, i));
      else
        printf(" %s", z ? (const char *)z : "NULL");
    }
    printf("\n");
  }
  if (rc != SQLITE_DONE) printf("  error %d: %s\n", rc, sqlite3_errmsg(db));
  sqlite3_finalize(st);
}

static void run_sql(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  printf("%s -> %d %s\n", sql, rc, err ? err : "");
  sqlite3_free(err);
}

static const char *const kDocs[] = {"the first place goes to one runner",
                                    "two runners run the first mile. Then one more ran",
                                    "one two three four five six seven eight nine ten first",
                                    "nothing here to see",
                                    "first first first. one. two",
                                    "a run of one, then two, then first place"};

static void fill(sqlite3 *db, const char *table) {
  char sql[256];
  for (size_t i = 0; i < sizeof kDocs / sizeof kDocs[0]; i++) {
    snprintf(sql, sizeof sql, "INSERT INTO %s(rowid, a, b) VALUES(%d, '%s', 'col b %s')", table,
             (int)i + 1, kDocs[i], i % 2 ? "one" : "first");
    EXEC_OK(db, sql);
  }
}

int main(void) {
  sqlite3 *db;
  setvbuf(stdout, NULL, _IOLBF, 0);
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  fts5_api *api = get_api(db, "fts5_api_ptr");
  EXPECT(api != NULL);
  if (!api) return 1;
  printf("iVersion %d, wrong type gives %s\n", api->iVersion,
         get_api(db, "fts5_api") ? "an api" : "nothing");
  show(db, "SELECT fts5(NULL)");

  /* built-ins found by name (any case), the default by NULL, unknown names */
  const char *names[] = {"unicode61", "ASCII", "porter", "trigram", NULL, "nosuch"};
  for (int i = 0; i < 6; i++) {
    fts5_tokenizer t;
    void *ctx = NULL;
    int rc = api->xFindTokenizer(api, names[i], &ctx, &t);
    printf("find %s: %d %s\n", names[i] ? names[i] : "(default)", rc,
           rc == SQLITE_OK ? (t.xCreate && t.xDelete && t.xTokenize ? "methods" : "none")
                           : (t.xCreate ? "left set" : "cleared"));
  }
  fts5_tokenizer syn = {syn_create, syn_delete, syn_tokenize};
  EXPECT_INT(api->xCreateTokenizer(api, "syn", api, &syn, tok_destroy), SQLITE_OK);
  EXPECT_INT(api->xCreateFunction(api, "info", "u1", info, aux_destroy), SQLITE_OK);

  run_sql(db, "CREATE VIRTUAL TABLE bad1 USING fts5(a, tokenize='nosuch')");
  run_sql(db, "CREATE VIRTUAL TABLE bad2 USING fts5(a, tokenize='syn fail')");
  run_sql(db, "CREATE VIRTUAL TABLE bad3 USING fts5(a, tokenize='syn nosuch')");
  run_sql(db, "CREATE VIRTUAL TABLE bad4 USING fts5(a, tokenize='syn unicode61 bogus 1')");

  /* synonyms in the documents */
  EXEC_OK(db, "CREATE VIRTUAL TABLE d USING fts5(a, b, tokenize='syn unicode61')");
  fill(db, "d");
  run_sql(db, "INSERT INTO d(d) VALUES('integrity-check')");
  show(db, "CREATE VIRTUAL TABLE dv USING fts5vocab(d, 'instance')");
  show(db,
       "SELECT term, doc, col, offset FROM dv WHERE doc IN (1, 5) ORDER BY doc, col, offset, "
       "term");
  const char *dq[] = {"1st",  "first",    "\"the 1st place\"", "i",           "NEAR(1 2, 1)",
                      "1*",   "b : 1",    "1st OR ran",        "\"1st 1st\"", "1 AND NOT i",
                      "^1st", "2 + three"};
  for (size_t i = 0; i < sizeof dq / sizeof dq[0]; i++) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT rowid, highlight(d, 0, '[', ']'), snippet(d, 1, '<', '>', '...', 4), "
             "bm25(d) FROM d WHERE d MATCH '%s' ORDER BY rank",
             dq[i]);
    show(db, sql);
    snprintf(sql, sizeof sql, "SELECT info(d) FROM d WHERE d MATCH '%s' ORDER BY rowid", dq[i]);
    show(db, sql);
  }
  show(db, "SELECT info(d, 'range') FROM d WHERE d MATCH 'one' LIMIT 1");
  show(db, "SELECT rowid, info(d, 'error') FROM d WHERE d MATCH 'one'");
  show(db, "SELECT rowid, info(d, 'norank') FROM d WHERE d MATCH 'first' ORDER BY rank");
  run_sql(db, "INSERT INTO d(a, b) VALUES('it went boom', 'x')");
  run_sql(db, "UPDATE d SET a = 'the second place' WHERE rowid = 1");
  run_sql(db, "DELETE FROM d WHERE rowid = 5");
  run_sql(db, "INSERT INTO d(d) VALUES('integrity-check')");
  show(db, "SELECT rowid FROM d WHERE d MATCH '1st' ORDER BY rowid");
  printf("auxdata freed %d\n", destroyed_auxdata);

  /* synonyms added to the query; porter as the wrapped tokenizer */
  EXEC_OK(db,
          "CREATE VIRTUAL TABLE q USING fts5(a, b, tokenize='syn query porter unicode61 "
          "remove_diacritics 2')");
  fill(db, "q");
  run_sql(db, "INSERT INTO q(q) VALUES('integrity-check')");
  const char *qq[] = {"first", "one", "\"first place\"", "run*", "one + two", "NEAR(first two)"};
  for (size_t i = 0; i < sizeof qq / sizeof qq[0]; i++) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT rowid, highlight(q, 0, '[', ']'), bm25(q), info(q) FROM q WHERE q MATCH "
             "'%s' ORDER BY rank",
             qq[i]);
    show(db, sql);
  }

  /* detail=column: the instances come from the text again */
  EXEC_OK(db, "CREATE VIRTUAL TABLE c USING fts5(a, b, detail=column)");
  fill(db, "c");
  show(db, "SELECT info(c, 'noquery') FROM c WHERE c MATCH 'one OR first' ORDER BY rowid");
  show(db, "SELECT info(c, 'noquery') FROM c WHERE c MATCH 'one OR first' ORDER BY rank");

  /* a second function of the same name replaces the first */
  EXPECT_INT(api->xCreateFunction(api, "info", "u2", info, aux_destroy), SQLITE_OK);
  show(db, "SELECT info(d, 'norank') FROM d WHERE d MATCH 'three'");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  printf("destroyed: tokenizers %d, functions %d, auxdata %d\n", destroyed_tok, destroyed_aux,
         destroyed_auxdata);
  return prog_failed != 0;
}
