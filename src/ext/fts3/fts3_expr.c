/*
 * fts3_expr.c -- FTS3/FTS4 MATCH expressions in the standard query syntax
 * with SQLite's enhanced extensions (ENABLE_FTS3_PARENTHESIS, as Debian's
 * SQLite is built): phrases "a b", barewords (the tokenizer's first token of
 * the word; a following * makes it a prefix), column:word, NEAR and NEAR/N
 * (default 10) between phrases, NOT, AND (or nothing: implicit), OR, in that
 * order of precedence, and parentheses; keywords only in upper case and
 * followed by a space, quote, parenthesis or the end. A token written
 * right after '^' matches only a column's first token (FTS3 ignores it on
 * a one-token phrase, as SQLite does).
 *
 * As SQLite reads it: a word the tokenizer finds no token in is skipped; a
 * column prefix with nothing after it before a quote, parenthesis or the
 * end ends the expression there; a missing operand, an unclosed phrase or
 * unbalanced parentheses is "malformed MATCH expression: [Q]".
 *
 * Invariants:
 *  1. A phrase node's hits are the start positions of its matches (in its
 *     column when it has one); other nodes keep docids only.
 */
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

typedef enum { E_PHRASE, E_NEAR, E_NOT, E_AND, E_OR } Kind;

typedef struct Term {
  char *z;
  int n, prefix;
  int first; /* written ^word: only a column's first token matches */
} Term;

struct Fts3Expr {
  Kind kind;
  Fts3Expr *l, *r;
  int col; /* phrase: -1 or the column it is limited to */
  int nterm;
  Term *terms;
  int near; /* E_NEAR: the distance */
};

void fts3_expr_free(Fts3Expr *e) {
  if (!e) return;
  fts3_expr_free(e->l);
  fts3_expr_free(e->r);
  for (int i = 0; i < e->nterm; i++) shale_free(e->terms[i].z);
  shale_free(e->terms);
  shale_free(e);
}

/* ---- lexer ---- */

enum { T_END, T_COLEND, T_NONE, T_PHRASE, T_OR, T_AND, T_NOT, T_NEAR, T_LP, T_RP, T_ERR };

typedef struct Parser {
  Fts3Table *t;
  const char *z;
  int n, i;
  int col;      /* the default column */
  int rc;       /* SHALE_NOMEM once out of memory */
  int type;     /* the token read ahead */
  Fts3Expr *ph; /* T_PHRASE: its node */
  int near;     /* T_NEAR: the distance */
  int depth;    /* open parentheses */
} Parser;

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

typedef struct PhraseCtx {
  Fts3Expr *e;
  const char *z;
  int n, max; /* max tokens (1: a bareword), 0 unlimited */
  int end;    /* end of the last token taken */
  int rc;
} PhraseCtx;

static int phrase_cb(void *ctx, const char *tok, int ntok, int start, int end, int pos) {
  PhraseCtx *c = ctx;
  (void)pos;
  Term *nt = shale_realloc(c->e->terms, sizeof(Term) * (size_t)(c->e->nterm + 1));
  if (!nt) return c->rc = SHALE_NOMEM;
  c->e->terms = nt;
  Term *t = &nt[c->e->nterm];
  t->z = shale_malloc((size_t)ntok + 1);
  if (!t->z) return c->rc = SHALE_NOMEM;
  memcpy(t->z, tok, (size_t)ntok);
  t->z[ntok] = 0;
  t->n = ntok;
  t->prefix = end < c->n && c->z[end] == '*';
  t->first = start > 0 && c->z[start - 1] == '^';
  c->end = end + t->prefix;
  c->e->nterm++;
  return c->max && c->e->nterm >= c->max ? 1 : 0;
}

/* A phrase node of the tokens of z[0..n) (at most max); NULL when none. */
static Fts3Expr *make_phrase(Parser *p, const char *z, int n, int max, int col, int *end) {
  Fts3Expr *e = shale_malloc(sizeof *e);
  if (!e) {
    p->rc = SHALE_NOMEM;
    return NULL;
  }
  memset(e, 0, sizeof *e);
  e->kind = E_PHRASE;
  e->col = col;
  PhraseCtx c = {e, z, n, max, 0, SHALE_OK};
  int rc = fts3_tokenize(&p->t->tok, z, n, &c, phrase_cb);
  if (c.rc || (rc && rc != 1)) p->rc = c.rc ? c.rc : rc;
  *end = c.end;
  if (p->rc || !e->nterm) {
    fts3_expr_free(e);
    return NULL;
  }
  return e;
}

static const struct {
  const char *z;
  int n, type;
} keywords[] = {{"OR", 2, T_OR}, {"AND", 3, T_AND}, {"NOT", 3, T_NOT}, {"NEAR", 4, T_NEAR}};

/* Read the next token into p->type (p->ph, p->near). */
static void lex(Parser *p) {
  const char *z = p->z;
  int n = p->n;
  p->ph = NULL;
  while (p->i < n && is_space(z[p->i])) p->i++;
  if (p->i >= n) {
    p->type = T_END;
    return;
  }
  const char *in = z + p->i;
  int nin = n - p->i;
  if (*in == '"') {
    int k = 1;
    while (k < nin && in[k] != '"') k++;
    if (k >= nin) {
      p->type = T_ERR;
      return;
    }
    int end;
    p->ph = make_phrase(p, in + 1, k - 1, 0, p->col, &end);
    p->i += k + 1;
    p->type = p->ph ? T_PHRASE : T_NONE;
    return;
  }
  if (*in == '(' || *in == ')') {
    p->i++;
    p->type = *in == '(' ? T_LP : T_RP;
    return;
  }
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++) {
    int kn = keywords[k].n;
    if (nin < kn || memcmp(in, keywords[k].z, (size_t)kn)) continue;
    int near = 10;
    if (keywords[k].type == T_NEAR && kn < nin && in[4] == '/' && 5 < nin && in[5] >= '0' &&
        in[5] <= '9') {
      near = 0;
      for (kn = 5; kn < nin && in[kn] >= '0' && in[kn] <= '9'; kn++)
        near = near > 100000000 ? near : near * 10 + (in[kn] - '0');
    }
    char next = kn < nin ? in[kn] : 0;
    if (is_space(next) || next == '"' || next == '(' || next == ')' || next == 0) {
      p->i += kn;
      p->type = keywords[k].type;
      p->near = near;
      return;
    }
  }
  int col = p->col, skip = 0;
  for (int c = 0; c < p->t->ncol; c++) {
    int len = (int)strlen(p->t->cols[c]);
    if (nin > len && in[len] == ':' && !util_strnicmp(p->t->cols[c], in, len)) {
      col = c;
      skip = len + 1;
      break;
    }
  }
  in += skip;
  nin -= skip;
  int lim = 0;
  while (lim < nin && in[lim] != '"' && in[lim] != '(' && in[lim] != ')') lim++;
  if (!lim) { /* nothing to tokenize after a column: this level ends */
    p->i += skip;
    p->type = T_COLEND;
    return;
  }
  int end = 0;
  p->ph = make_phrase(p, in, lim, 1, col, &end);
  p->i += skip + (p->ph ? end : lim);
  p->type = p->rc ? T_ERR : p->ph ? T_PHRASE : T_NONE;
}

/* The next token, skipping words with no token in them. */
static void advance(Parser *p) {
  do lex(p);
  while (p->type == T_NONE);
}

/* ---- parser ---- */

static Fts3Expr *node(Parser *p, Kind k, Fts3Expr *l, Fts3Expr *r) {
  Fts3Expr *e = shale_malloc(sizeof *e);
  if (!e) {
    p->rc = SHALE_NOMEM;
    fts3_expr_free(l);
    fts3_expr_free(r);
    return NULL;
  }
  memset(e, 0, sizeof *e);
  e->kind = k;
  e->l = l;
  e->r = r;
  return e;
}

static Fts3Expr *parse_or(Parser *p, int *bad);

/* A level (the whole query or a parenthesized group) ends at the end, at
 * ')' or where a column prefix has nothing after it (there SQLite's parser
 * returns to the enclosing level without closing the group). */
static int level_end(int type) { return type == T_END || type == T_RP || type == T_COLEND; }

static void end_level(Parser *p) {
  if (p->type == T_RP) p->depth--;
  if (p->type != T_END) advance(p);
}

static int starts_primary(int type) { return type == T_PHRASE || type == T_LP; }

/* Where an operand is read: beside the one before (an implicit AND), first
 * in its level, or after an explicit operator. */
enum { AT_IMPLICIT, AT_START, AT_OPERATOR };

/* A phrase or a parenthesized expression; *bad on a syntax error. An
 * empty group is skipped as SQLite does, the operand being the next one;
 * when none follows it is NULL, an error only after an operator (or at a
 * level's start when an operator follows). */
static Fts3Expr *parse_primary(Parser *p, int *bad, int at) {
  for (;;) {
    if (p->type == T_PHRASE) {
      Fts3Expr *e = p->ph;
      p->ph = NULL;
      advance(p);
      return e;
    }
    if (p->type != T_LP) break;
    p->depth++;
    advance(p);
    Fts3Expr *e = level_end(p->type) ? NULL : parse_or(p, bad);
    if (*bad || p->rc) return e;
    end_level(p);
    if (e || starts_primary(p->type)) {
      if (e) return e;
      continue;
    }
    if (at == AT_IMPLICIT || (at == AT_START && level_end(p->type))) return NULL;
    break;
  }
  *bad = 1;
  return NULL;
}

static Fts3Expr *parse_near(Parser *p, int *bad, int at) {
  Fts3Expr *l = parse_primary(p, bad, at);
  while (!*bad && !p->rc && p->type == T_NEAR) {
    int near = p->near;
    advance(p);
    Fts3Expr *r = parse_primary(p, bad, AT_OPERATOR);
    if (*bad || !l || !r || r->kind != E_PHRASE || (l->kind != E_PHRASE && l->kind != E_NEAR)) {
      *bad = 1;
      fts3_expr_free(r);
      break;
    }
    l = node(p, E_NEAR, l, r);
    if (l) l->near = near;
  }
  return l;
}

/* Combine l and r under k where either may be an empty group (NULL). */
static Fts3Expr *combine(Parser *p, Kind k, Fts3Expr *l, Fts3Expr *r) {
  if (!l) return k == E_NOT ? (fts3_expr_free(r), NULL) : r;
  if (!r) return l;
  return node(p, k, l, r);
}

/* The operators by precedence, loosest first (NEAR binds tightest, in
 * parse_near); AND may also be left out. */
static const struct {
  int type;
  Kind kind;
} binops[] = {{T_OR, E_OR}, {T_AND, E_AND}, {T_NOT, E_NOT}};

static Fts3Expr *parse_level(Parser *p, int *bad, int level, int at) {
  if (level == (int)(sizeof binops / sizeof binops[0])) return parse_near(p, bad, at);
  Fts3Expr *l = parse_level(p, bad, level + 1, at);
  int op = binops[level].type;
  while (!*bad && !p->rc && (p->type == op || (op == T_AND && starts_primary(p->type)))) {
    int next = p->type == op ? AT_OPERATOR : AT_IMPLICIT;
    if (next == AT_OPERATOR) advance(p);
    Fts3Expr *r = parse_level(p, bad, level + 1, next);
    l = combine(p, binops[level].kind, l, r);
  }
  return l;
}

static Fts3Expr *parse_or(Parser *p, int *bad) { return parse_level(p, bad, 0, AT_START); }

int fts3_expr_parse(Fts3Table *t, const char *q, int col, Fts3Expr **out, char **err) {
  Parser p;
  memset(&p, 0, sizeof p);
  p.t = t;
  p.z = q;
  p.n = (int)strlen(q);
  p.col = col;
  *out = NULL;
  *err = NULL;
  int bad = 0;
  advance(&p);
  Fts3Expr *e = NULL;
  if (!level_end(p.type)) e = parse_or(&p, &bad);
  if (!bad && !level_end(p.type)) bad = 1;
  if (p.type == T_RP) p.depth--;
  if (p.depth) bad = 1;
  fts3_expr_free(p.ph);
  if (p.rc || bad || p.type == T_ERR) {
    fts3_expr_free(e);
    if (p.rc == SHALE_NOMEM) return SHALE_NOMEM;
    *err = util_mprintf("malformed MATCH expression: [%s]", q);
    return SHALE_ERROR;
  }
  *out = e;
  return SHALE_OK;
}

/* ---- evaluation ---- */

/* Whether term i of phrase e may be at pos: a ^term only at a column's
 * first token -- in FTS3 only within a phrase of several tokens, a single
 * one ignoring its ^ (as SQLite). */
static int first_ok(const Fts3Table *t, const Fts3Expr *e, int i, int64_t pos) {
  return !e->terms[i].first || (!t->fts4 && e->nterm == 1) || (pos & 0xffffffff) == 0;
}

/* The documents where every term of phrase e sits at consecutive
 * positions, with the start positions. */
static int eval_phrase(Fts3Table *t, Fts3Expr *e, Fts3Hits *out) {
  Fts3Hits *th = shale_malloc(sizeof(Fts3Hits) * (size_t)e->nterm);
  memset(out, 0, sizeof *out);
  if (!th) return SHALE_NOMEM;
  memset(th, 0, sizeof(Fts3Hits) * (size_t)e->nterm);
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < e->nterm; i++)
    rc = fts3_index_query(t, e->terms[i].z, e->terms[i].n, e->terms[i].prefix, &th[i]);
  int *at = shale_malloc(sizeof(int) * (size_t)e->nterm);
  if (!at && rc == SHALE_OK) rc = SHALE_NOMEM;
  if (at) memset(at, 0, sizeof(int) * (size_t)e->nterm);
  for (int d = 0; rc == SHALE_OK && d < th[0].n; d++) {
    int64_t docid = th[0].docid[d];
    int all = 1;
    for (int i = 1; i < e->nterm && all; i++) {
      while (at[i] < th[i].n && th[i].docid[at[i]] < docid) at[i]++;
      all = at[i] < th[i].n && th[i].docid[at[i]] == docid;
    }
    if (!all) continue;
    int started = 0;
    for (int k = th[0].off[d]; rc == SHALE_OK && k < th[0].off[d + 1]; k++) {
      int64_t pos = th[0].pos[k];
      if (e->col >= 0 && (pos >> 32) != e->col) continue;
      int ok = first_ok(t, e, 0, pos);
      for (int i = 1; i < e->nterm && ok; i++) {
        const Fts3Hits *h = &th[i];
        int64_t want = pos + i;
        int lo = h->off[at[i]], hi = h->off[at[i] + 1];
        while (lo < hi) {
          int mid = (lo + hi) / 2;
          if (h->pos[mid] < want)
            lo = mid + 1;
          else
            hi = mid;
        }
        ok = lo < h->off[at[i] + 1] && h->pos[lo] == want && first_ok(t, e, i, want);
      }
      if (!ok) continue;
      if (!started) rc = fts3_hits_doc(out, docid);
      started = 1;
      if (rc == SHALE_OK) rc = fts3_hits_pos(out, pos);
    }
  }
  for (int i = 0; i < e->nterm; i++) fts3_hits_free(&th[i]);
  shale_free(th);
  shale_free(at);
  if (rc) fts3_hits_free(out);
  return rc;
}

/* Whether hit a (a phrase of na tokens) and b (nb tokens) are near in one
 * column: SQLite compares the positions of the phrases' last tokens, which
 * must differ, by at most near plus the length of the later phrase. */
static int is_near(int64_t a, int na, int64_t b, int nb, int near) {
  if ((a >> 32) != (b >> 32)) return 0;
  int64_t d = (b + nb) - (a + na); /* between the last tokens, as SQLite measures */
  return d > 0 ? d <= (int64_t)near + nb : d < 0 && -d <= (int64_t)near + na;
}

static int eval(Fts3Table *t, Fts3Expr *e, Fts3Hits *out);

/* Both operands' hits; nothing left to free on failure. */
static int eval_children(Fts3Table *t, Fts3Expr *e, Fts3Hits *l, Fts3Hits *r) {
  int rc = eval(t, e->l, l);
  if (rc) return rc;
  rc = eval(t, e->r, r);
  if (rc) fts3_hits_free(l);
  return rc;
}

/* NEAR: documents where a hit of the right phrase is near one of the left
 * (for a chain, the left's rightmost phrase); the hits kept are the right
 * phrase's. */
static int eval_near(Fts3Table *t, Fts3Expr *e, Fts3Hits *out) {
  Fts3Hits l, r;
  memset(out, 0, sizeof *out);
  int rc = eval_children(t, e, &l, &r);
  if (rc) return rc;
  int nl = e->l->kind == E_PHRASE ? e->l->nterm : e->l->r->nterm, nr = e->r->nterm;
  for (int i = 0, j = 0; rc == SHALE_OK && i < l.n && j < r.n;) {
    if (l.docid[i] < r.docid[j]) {
      i++;
      continue;
    }
    if (l.docid[i] > r.docid[j]) {
      j++;
      continue;
    }
    int started = 0;
    for (int b = r.off[j]; rc == SHALE_OK && b < r.off[j + 1]; b++) {
      int ok = 0;
      for (int a = l.off[i]; a < l.off[i + 1] && !ok; a++)
        ok = is_near(l.pos[a], nl, r.pos[b], nr, e->near);
      if (!ok) continue;
      if (!started) rc = fts3_hits_doc(out, r.docid[j]);
      started = 1;
      if (rc == SHALE_OK) rc = fts3_hits_pos(out, r.pos[b]);
    }
    i++;
    j++;
  }
  fts3_hits_free(&l);
  fts3_hits_free(&r);
  if (rc) fts3_hits_free(out);
  return rc;
}

static int eval(Fts3Table *t, Fts3Expr *e, Fts3Hits *out) {
  if (e->kind == E_PHRASE) return eval_phrase(t, e, out);
  if (e->kind == E_NEAR) return eval_near(t, e, out);
  Fts3Hits l, r;
  memset(out, 0, sizeof *out);
  int rc = eval_children(t, e, &l, &r);
  if (rc) return rc;
  int i = 0, j = 0;
  while (rc == SHALE_OK && (i < l.n || j < r.n)) {
    int64_t d;
    int inl = i < l.n && (j >= r.n || l.docid[i] <= r.docid[j]);
    int inr = j < r.n && (i >= l.n || r.docid[j] <= l.docid[i]);
    d = inl ? l.docid[i] : r.docid[j];
    int keep = e->kind == E_OR ? 1 : e->kind == E_AND ? inl && inr : inl && !inr;
    if (keep) rc = fts3_hits_doc(out, d);
    i += inl;
    j += inr;
  }
  fts3_hits_free(&l);
  fts3_hits_free(&r);
  if (rc) fts3_hits_free(out);
  return rc;
}

int fts3_expr_eval(Fts3Table *t, Fts3Expr *e, int64_t **rows, int *nrows) {
  *rows = NULL;
  *nrows = 0;
  if (!e) return SHALE_OK;
  Fts3Hits h;
  int rc = eval(t, e, &h);
  if (rc) return rc;
  *rows = h.docid;
  *nrows = h.n;
  h.docid = NULL;
  fts3_hits_free(&h);
  return SHALE_OK;
}

/* ---- the tree as the auxiliary functions see it (fts3_aux.c) ---- */

typedef struct NodeList {
  Fts3Node *a;
  int n, cap;
} NodeList;

static int flatten(Fts3Table *t, Fts3Expr *e, int parent, NodeList *l) {
  if (l->n >= l->cap) {
    int cap = l->cap ? l->cap * 2 : 16;
    Fts3Node *a = shale_realloc(l->a, sizeof(Fts3Node) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    l->a = a;
    l->cap = cap;
  }
  int me = l->n++;
  Fts3Node *nd = &l->a[me];
  memset(nd, 0, sizeof *nd);
  static const Fts3NodeKind kinds[] = {FTS3_NODE_PHRASE, FTS3_NODE_NEAR, FTS3_NODE_NOT,
                                       FTS3_NODE_AND, FTS3_NODE_OR};
  nd->kind = kinds[e->kind];
  nd->parent = parent;
  nd->left = nd->right = -1;
  nd->near = e->near;
  if (e->kind == E_PHRASE) {
    nd->nterm = e->nterm;
    nd->col = e->col;
    Fts3Hits h;
    int rc = eval_phrase(t, e, &h);
    l->a[me].hits = h; /* l->a stays put until the next flatten */
    return rc;
  }
  int rc = flatten(t, e->l, me, l);
  l->a[me].left = me + 1;
  if (rc == SHALE_OK) {
    l->a[me].right = l->n;
    rc = flatten(t, e->r, me, l);
  }
  return rc;
}

int fts3_expr_nodes(Fts3Table *t, Fts3Expr *e, Fts3Node **out, int *n) {
  NodeList l = {NULL, 0, 0};
  int rc = e ? flatten(t, e, -1, &l) : SHALE_OK;
  if (rc) {
    fts3_nodes_free(l.a, l.n);
    l.a = NULL;
    l.n = 0;
  }
  *out = l.a;
  *n = l.n;
  return rc;
}

void fts3_nodes_free(Fts3Node *a, int n) {
  for (int i = 0; i < n; i++) fts3_hits_free(&a[i].hits);
  shale_free(a);
}
