/*
 * fts5_expr.c -- FTS5 query expressions: the parser of SQLite's fts5 query
 * syntax and their evaluation over the index.
 *
 * Syntax (SQLite 3.40's grammar; precedence NOT > AND > OR):
 *   phrase   := STRING [*] { + STRING [*] }      (STRING: "..." or a bareword)
 *   nearset  := [^] phrase | NEAR ( phrase... [, N] )
 *   cnearset := [colset :] nearset
 *   exprlist := cnearset { cnearset }             (implicit AND)
 *   expr     := exprlist | ( expr ) | colset : ( expr )
 *             | expr AND expr | expr OR expr | expr NOT expr
 *   colset   := [-] colname | [-] { colname... }
 * AND, OR, NOT and NEAR are keywords only in upper case. A bareword is a
 * run of ASCII letters, digits, '_', 0x1A or bytes >= 0x80.
 *
 * Evaluation is set at a time: each phrase's matching rows and instances
 * over the whole table, NEAR groups filtered by SQLite's window rule (one
 * instance per phrase, all within nTerm + N tokens of the last one),
 * then AND/OR/NOT as operations on sorted rowid lists.
 *
 * Invariants:
 *  1. A phrase's hit list is sorted by rowid and holds only rows where it
 *     matches (after its column filter, ^ and NEAR group).
 *  2. Node results are sorted, duplicate-free rowid arrays.
 */
#include <string.h>

#include "../../util/util.h"
#include "fts5_int.h"

/* A phrase's term: its text (index byte first), and the tokens the query
 * tokenizer gave at the same position (FTS5_TOKEN_COLOCATED), any of which
 * matches there; prefix (of the first) applies to all. */
typedef struct Term {
  char *t;
  int n, prefix;
  struct Term *syn;
} Term;

static void term_free(Term *t) {
  shale_free(t->t);
  for (Term *s = t->syn, *next; s; s = next) {
    next = s->syn;
    shale_free(s->t);
    shale_free(s);
  }
}

typedef struct Phrase {
  Term *terms;
  int nterm, caret;
  uint64_t colmask; /* allowed columns (bit per column; all ones: any) */
  Fts5List hits;    /* per row, the instances (first token positions) */
  Fts5Pos cur;      /* during evaluation: SQLite's position list now */
  Fts5Pos view;     /* fts5_expr_phrase_hits' answer: a row of hits (not owned) */
  int at;           /* hint for the next row sought in hits (find_doc_at) */
  int evaluated;
} Phrase;

enum { N_NEAR, N_AND, N_OR, N_NOT };

typedef struct Node {
  int kind;
  struct Node *l, *r;
  int *phr; /* N_NEAR: phrase indexes */
  int nphr, near;
  int64_t *rows;
  int nrows;
} Node;

struct Fts5Expr {
  Fts5Config *c;
  Phrase *ph;
  int nph;
  Node *root;
  int desc; /* fts5_expr_eval walks the rows in descending order */
};

/* ---- lexer ---- */
enum {
  T_EOF,
  T_STRING,
  T_LP,
  T_RP,
  T_LCP,
  T_RCP,
  T_COLON,
  T_COMMA,
  T_PLUS,
  T_STAR,
  T_MINUS,
  T_CARET,
  T_AND,
  T_OR,
  T_NOT,
  T_NEAR,
  T_ERR
};

typedef struct Lex {
  const char *z, *p;
  int tok;
  const char *tp; /* token start */
  int tn;         /* token length */
  char *err;
  Fts5Config *c;
  Fts5Expr *e;
} Lex;

static int strncasecmp_ascii(const char *a, const char *b, int n) {
  for (int i = 0; i < n; i++) {
    int x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x >= 'A' && x <= 'Z') x += 32;
    if (y >= 'A' && y <= 'Z') y += 32;
    if (x != y) return x - y;
  }
  return 0;
}

static int is_bare(unsigned char c) {
  return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == 0x1a;
}

static void lex_next(Lex *x) {
  const char *p = x->p;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
  x->tp = p;
  x->tn = 1;
  switch (*p) {
    case 0:
      x->tok = T_EOF;
      x->tn = 0;
      x->p = p;
      return;
    case '(':
      x->tok = T_LP;
      break;
    case ')':
      x->tok = T_RP;
      break;
    case '{':
      x->tok = T_LCP;
      break;
    case '}':
      x->tok = T_RCP;
      break;
    case ':':
      x->tok = T_COLON;
      break;
    case ',':
      x->tok = T_COMMA;
      break;
    case '+':
      x->tok = T_PLUS;
      break;
    case '*':
      x->tok = T_STAR;
      break;
    case '-':
      x->tok = T_MINUS;
      break;
    case '^':
      x->tok = T_CARET;
      break;
    case '"': {
      const char *q = p + 1;
      for (;;) {
        if (!*q) {
          x->tok = T_ERR;
          x->p = p + 1;
          return;
        }
        if (*q == '"') {
          if (q[1] == '"') {
            q += 2;
            continue;
          }
          break;
        }
        q++;
      }
      x->tok = T_STRING;
      x->tn = (int)(q + 1 - p);
      x->p = q + 1;
      return;
    }
    default:
      if (!is_bare((unsigned char)*p)) {
        x->tok = T_ERR;
        x->p = p + 1;
        return;
      }
      const char *q = p;
      while (is_bare((unsigned char)*q)) q++;
      x->tn = (int)(q - p);
      x->tok = T_STRING;
      if (x->tn == 2 && !memcmp(p, "OR", 2))
        x->tok = T_OR;
      else if (x->tn == 3 && !memcmp(p, "AND", 3))
        x->tok = T_AND;
      else if (x->tn == 3 && !memcmp(p, "NOT", 3))
        x->tok = T_NOT;
      else if (x->tn == 4 && !memcmp(p, "NEAR", 4))
        x->tok = T_NEAR;
      x->p = q;
      return;
  }
  x->p = p + 1;
}

static void syntax_error(Lex *x) {
  if (x->err) return;
  if (x->tok == T_EOF)
    x->err = util_mprintf("fts5: syntax error near \"\"");
  else
    x->err = util_mprintf("fts5: syntax error near \"%.*s\"", x->tn, x->tp);
}

/* ---- building ---- */
typedef struct TokCtx {
  Term *a;
  int n, cap, rc;
  int first; /* the phrase's terms before this string */
} TokCtx;

static int tok_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  TokCtx *t = ctx;
  (void)start;
  (void)end;
  if ((tflags & FTS5_TOKEN_COLOCATED) && t->n > t->first) { /* a synonym of the last term */
    Term *s = shale_malloc(sizeof *s);
    char *z = shale_malloc((size_t)ntok + 2);
    if (!s || !z) {
      shale_free(s);
      shale_free(z);
      return SHALE_NOMEM;
    }
    z[0] = '0';
    memcpy(z + 1, tok, (size_t)ntok);
    z[ntok + 1] = 0;
    Term *last = &t->a[t->n - 1], **pp = &last->syn;
    while (*pp) pp = &(*pp)->syn;
    *s = (Term){z, ntok + 1, 0, NULL};
    *pp = s;
    return SHALE_OK;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 4;
    Term *a = shale_realloc(t->a, sizeof(Term) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    t->a = a;
    t->cap = cap;
  }
  char *z = shale_malloc((size_t)ntok + 2);
  if (!z) return SHALE_NOMEM;
  z[0] = '0';
  memcpy(z + 1, tok, (size_t)ntok);
  z[ntok + 1] = 0;
  t->a[t->n].t = z;
  t->a[t->n].n = ntok + 1;
  t->a[t->n].prefix = 0;
  t->a[t->n].syn = NULL;
  t->n++;
  return SHALE_OK;
}

/* Tokenize the STRING token s[0..n) and append its terms to phrase ip
 * (prefix: a '*' follows it, which marks the last term). */
static int add_string(Lex *x, int ip, const char *s, int n, int prefix) {
  char *buf = NULL;
  if (s[0] == '"') { /* unquote */
    buf = shale_malloc((size_t)n);
    if (!buf) return SHALE_NOMEM;
    int k = 0;
    for (int i = 1; i < n - 1; i++) {
      buf[k++] = s[i];
      if (s[i] == '"') i++;
    }
    s = buf;
    n = k;
  }
  TokCtx t = {0};
  Phrase *p = &x->e->ph[ip];
  t.a = p->terms;
  t.n = t.cap = t.first = p->nterm;
  int flags = FTS5_TOKENIZE_QUERY | (prefix ? FTS5_TOKENIZE_PREFIX : 0);
  int rc = fts5_tokenize(x->c->tok, flags, s, n, &t, tok_cb);
  shale_free(buf);
  p->terms = t.a;
  p->nterm = t.n;
  if (rc == SHALE_OK && prefix && p->nterm > t.first) p->terms[p->nterm - 1].prefix = 1;
  return rc;
}

static int new_phrase(Lex *x) {
  Fts5Expr *e = x->e;
  Phrase *a = shale_realloc(e->ph, sizeof(Phrase) * (size_t)(e->nph + 1));
  if (!a) return -1;
  e->ph = a;
  memset(&a[e->nph], 0, sizeof(Phrase));
  a[e->nph].colmask = ~(uint64_t)0;
  return e->nph++;
}

static Node *new_node(int kind, Node *l, Node *r) {
  Node *n = shale_malloc(sizeof *n);
  if (!n) return NULL;
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->l = l;
  n->r = r;
  return n;
}

static void node_free(Node *n) {
  if (!n) return;
  node_free(n->l);
  node_free(n->r);
  shale_free(n->phr);
  shale_free(n->rows);
  shale_free(n);
}

/* phrase := STRING [*] { + STRING [*] }: current token is a STRING. */
static int parse_phrase(Lex *x, int *ip) {
  *ip = new_phrase(x);
  if (*ip < 0) return SHALE_NOMEM;
  for (;;) {
    if (x->tok != T_STRING) {
      syntax_error(x);
      return SHALE_ERROR;
    }
    const char *s = x->tp;
    int n = x->tn;
    lex_next(x);
    int star = x->tok == T_STAR;
    int rc = add_string(x, *ip, s, n, star);
    if (rc) return rc;
    if (star) lex_next(x);
    if (x->tok != T_PLUS) return SHALE_OK;
    lex_next(x);
  }
}

/* colset after an optional '-': current token STRING or LCP. */
static int parse_colset(Lex *x, uint64_t *mask) {
  int neg = 0;
  if (x->tok == T_MINUS) {
    neg = 1;
    lex_next(x);
  }
  uint64_t m = 0;
  int brace = x->tok == T_LCP;
  if (brace) lex_next(x);
  do {
    if (x->tok != T_STRING) {
      syntax_error(x);
      return SHALE_ERROR;
    }
    int found = -1;
    for (int i = 0; i < x->c->ncol; i++)
      if ((int)strlen(x->c->cols[i]) == x->tn && !strncasecmp_ascii(x->c->cols[i], x->tp, x->tn))
        found = i;
    if (found < 0) {
      x->err = util_mprintf("no such column: %.*s", x->tn, x->tp);
      return SHALE_ERROR;
    }
    m |= (uint64_t)1 << (found & 63);
    lex_next(x);
  } while (brace && x->tok != T_RCP);
  if (brace) lex_next(x);
  *mask = neg ? ~m : m;
  return SHALE_OK;
}

static void apply_colset(Fts5Expr *e, Node *n, uint64_t m) {
  if (!n) return;
  if (n->kind == N_NEAR)
    for (int i = 0; i < n->nphr; i++) e->ph[n->phr[i]].colmask &= m;
  apply_colset(e, n->l, m);
  apply_colset(e, n->r, m);
}

static Node *parse_expr(Lex *x, int prec);

static void renumber(Node *n, int by) {
  if (!n) return;
  for (int i = 0; i < n->nphr; i++) n->phr[i] += by;
  renumber(n->l, by);
  renumber(n->r, by);
}

static void drop_phrase(Fts5Expr *e, int k, Node *later);

/* nearset: current token CARET, STRING or NEAR. */
static Node *parse_nearset(Lex *x) {
  Node *n = new_node(N_NEAR, NULL, NULL);
  if (!n) return NULL;
  n->near = 10;
  if (x->tok == T_NEAR) {
    lex_next(x);
    if (x->tok != T_LP) {
      syntax_error(x);
      node_free(n);
      return NULL;
    }
    lex_next(x);
    while (x->tok == T_STRING) {
      int ip;
      if (parse_phrase(x, &ip)) {
        node_free(n);
        return NULL;
      }
      if (n->nphr) { /* SQLite keeps no empty phrase in a group of several */
        int last = n->phr[n->nphr - 1];
        if (x->e->ph[ip].nterm == 0) {
          drop_phrase(x->e, ip, NULL);
          continue;
        }
        if (x->e->ph[last].nterm == 0) {
          drop_phrase(x->e, last, NULL);
          n->nphr--;
          ip--;
        }
      }
      int *a = shale_realloc(n->phr, sizeof(int) * (size_t)(n->nphr + 1));
      if (!a) {
        node_free(n);
        return NULL;
      }
      n->phr = a;
      a[n->nphr++] = ip;
    }
    if (x->tok == T_COMMA) {
      lex_next(x);
      int ok = x->tok == T_STRING;
      int v = 0;
      for (int i = 0; ok && i < x->tn; i++) {
        if (x->tp[i] < '0' || x->tp[i] > '9')
          ok = 0;
        else
          v = v * 10 + (x->tp[i] - '0');
      }
      if (!ok) {
        if (!x->err) x->err = util_mprintf("expected integer, got \"%.*s\"", x->tn, x->tp);
        node_free(n);
        return NULL;
      }
      n->near = v;
      lex_next(x);
    }
    if (x->tok != T_RP || n->nphr == 0) {
      syntax_error(x);
      node_free(n);
      return NULL;
    }
    lex_next(x);
    return n;
  }
  int caret = 0;
  if (x->tok == T_CARET) {
    caret = 1;
    lex_next(x);
  }
  int ip;
  if (parse_phrase(x, &ip)) {
    node_free(n);
    return NULL;
  }
  x->e->ph[ip].caret = caret;
  n->phr = shale_malloc(sizeof(int));
  if (!n->phr) {
    node_free(n);
    return NULL;
  }
  n->phr[0] = ip;
  n->nphr = 1;
  return n;
}

/* detail=column/none indexes have no positions: SQLite refuses phrases of
 * several tokens, ^ and NEAR groups of several phrases as it reduces the
 * nearset, and column filters on detail=none. NULL (n freed) on refusal. */
static Node *detail_check_near(Lex *x, Node *n) {
  if (!n || x->c->detail == FTS5_DETAIL_FULL) return n;
  Phrase *p = &x->e->ph[n->phr[0]];
  if (n->nphr == 1 && p->nterm <= 1 && !(p->nterm && p->caret)) return n;
  if (!x->err)
    x->err = util_mprintf("fts5: %s queries are not supported (detail!=full)",
                          n->nphr == 1 ? "phrase" : "NEAR");
  node_free(n);
  return NULL;
}

static Node *detail_check_colset(Lex *x, Node *n) {
  if (!n || x->c->detail != FTS5_DETAIL_NONE) return n;
  if (!x->err) x->err = util_mprintf("fts5: column queries are not supported (detail=none)");
  node_free(n);
  return NULL;
}

static int starts_cnearset(int tok) {
  return tok == T_STRING || tok == T_CARET || tok == T_NEAR || tok == T_LCP || tok == T_MINUS;
}

/* ( expr ), the current token being the '('. */
static Node *parse_paren(Lex *x) {
  lex_next(x);
  Node *n = parse_expr(x, 0);
  if (!n) return NULL;
  if (x->tok != T_RP) {
    syntax_error(x);
    node_free(n);
    return NULL;
  }
  lex_next(x);
  return n;
}

/* cnearset, or ( expr ), or colset : ( expr ). */
static Node *parse_primary(Lex *x, int *paren) {
  *paren = 0;
  if (x->tok == T_LP) {
    Node *n = parse_paren(x);
    if (n) *paren = 1;
    return n;
  }
  /* a colset is a STRING or {..} or - followed by ':' */
  uint64_t mask = ~(uint64_t)0;
  int has_colset = 0;
  if (x->tok == T_LCP || x->tok == T_MINUS) {
    has_colset = 1;
  } else if (x->tok == T_STRING) {
    Lex save = *x;
    lex_next(x);
    has_colset = x->tok == T_COLON;
    *x = save;
  }
  if (has_colset) {
    if (parse_colset(x, &mask)) return NULL;
    if (x->tok != T_COLON) {
      syntax_error(x);
      return NULL;
    }
    lex_next(x);
    if (x->tok == T_LP) {
      Node *n = parse_paren(x);
      if (!n || !(n = detail_check_colset(x, n))) return NULL;
      apply_colset(x->e, n, mask);
      *paren = 1;
      return n;
    }
  }
  if (x->tok != T_STRING && x->tok != T_CARET && x->tok != T_NEAR) {
    syntax_error(x);
    return NULL;
  }
  Node *n = detail_check_near(x, parse_nearset(x));
  if (n && has_colset && (n = detail_check_colset(x, n))) apply_colset(x->e, n, mask);
  return n;
}

static int is_empty(Fts5Expr *e, const Node *n) {
  return n->kind == N_NEAR && n->nphr == 1 && e->ph[n->phr[0]].nterm == 0;
}

/* Remove phrase k from the list; phrases after it (all in later, node
 * `later`) move down one. */
static void drop_phrase(Fts5Expr *e, int k, Node *later) {
  fts5_list_free(&e->ph[k].hits);
  shale_free(e->ph[k].terms);
  memmove(e->ph + k, e->ph + k + 1, sizeof(Phrase) * (size_t)(e->nph - k - 1));
  e->nph--;
  if (later) renumber(later, -1);
}

/* An operand of the binary operators: an exprlist or a parenthesised
 * expression. */
static Node *parse_operand(Lex *x) {
  int paren;
  Node *n = parse_primary(x, &paren);
  if (!n || paren) return n;
  while (starts_cnearset(x->tok)) { /* implicit AND of cnearsets */
    Node *r = parse_primary(x, &paren);
    if (!r) {
      node_free(n);
      return NULL;
    }
    if (paren) { /* ( expr ) cannot follow implicitly */
      node_free(r);
      node_free(n);
      syntax_error(x);
      return NULL;
    }
    /* SQLite drops an empty phrase (no tokens) from an implicit AND */
    if (is_empty(x->e, r)) {
      drop_phrase(x->e, r->phr[0], NULL);
      node_free(r);
      continue;
    }
    Node **prev = n->kind == N_AND && n->r ? &n->r : &n;
    if (is_empty(x->e, *prev)) {
      drop_phrase(x->e, (*prev)->phr[0], r);
      node_free(*prev);
      *prev = r;
      continue;
    }
    Node *a = new_node(N_AND, n, r);
    if (!a) {
      node_free(n);
      node_free(r);
      return NULL;
    }
    n = a;
  }
  return n;
}

static int op_prec(int tok) { return tok == T_OR ? 1 : tok == T_AND ? 2 : tok == T_NOT ? 3 : 0; }

static Node *parse_expr(Lex *x, int prec) {
  Node *l = parse_operand(x);
  while (l) {
    int p = op_prec(x->tok);
    if (!p || p <= prec) break;
    int kind = x->tok == T_OR ? N_OR : x->tok == T_AND ? N_AND : N_NOT;
    lex_next(x);
    Node *r = parse_expr(x, p);
    if (!r) {
      node_free(l);
      return NULL;
    }
    Node *n = new_node(kind, l, r);
    if (!n) {
      node_free(l);
      node_free(r);
      return NULL;
    }
    l = n;
  }
  return l;
}

int fts5_expr_parse(Fts5Config *c, const char *q, int col, Fts5Expr **out, char **err) {
  *out = NULL;
  Fts5Expr *e = shale_malloc(sizeof *e);
  if (!e) return SHALE_NOMEM;
  memset(e, 0, sizeof *e);
  e->c = c;
  Lex x = {0};
  x.z = x.p = q ? q : "";
  x.c = c;
  x.e = e;
  lex_next(&x);
  if (x.tok == T_EOF) { /* an empty query matches nothing */
    *out = e;
    return SHALE_OK;
  }
  e->root = parse_expr(&x, 0);
  if (e->root && x.tok != T_EOF) syntax_error(&x);
  if (e->root && col >= 0 && col < c->ncol) e->root = detail_check_colset(&x, e->root);
  if (!e->root || x.err) {
    if (!x.err) x.err = util_mprintf("out of memory");
    *err = x.err;
    fts5_expr_free(e);
    return SHALE_ERROR;
  }
  if (col >= 0 && col < 64) apply_colset(e, e->root, (uint64_t)1 << col);
  *out = e;
  return SHALE_OK;
}

static int term_copy(Term *dst, const Term *src) {
  memset(dst, 0, sizeof *dst);
  dst->t = shale_malloc((size_t)src->n + 1);
  if (!dst->t) return SHALE_NOMEM;
  memcpy(dst->t, src->t, (size_t)src->n + 1);
  dst->n = src->n;
  dst->prefix = src->prefix;
  Term **pp = &dst->syn;
  for (const Term *s = src->syn; s; s = s->syn) {
    Term *k = shale_malloc(sizeof *k);
    char *z = shale_malloc((size_t)s->n + 1);
    if (!k || !z) {
      shale_free(k);
      shale_free(z);
      return SHALE_NOMEM;
    }
    memcpy(z, s->t, (size_t)s->n + 1);
    *k = (Term){z, s->n, 0, NULL};
    *pp = k;
    pp = &k->syn;
  }
  return SHALE_OK;
}

int fts5_expr_clone_phrase(Fts5Expr *e, int ip, Fts5Expr **out) {
  *out = NULL;
  Fts5Expr *n = shale_malloc(sizeof *n);
  if (!n) return SHALE_NOMEM;
  memset(n, 0, sizeof *n);
  n->c = e->c;
  int rc = SHALE_OK;
  const Phrase *src = &e->ph[ip];
  n->ph = shale_malloc(sizeof(Phrase));
  n->root = new_node(N_NEAR, NULL, NULL);
  if (n->root) n->root->phr = shale_malloc(sizeof(int));
  if (n->ph) {
    memset(n->ph, 0, sizeof(Phrase));
    n->nph = 1;
    n->ph->colmask = src->colmask;
    n->ph->caret = src->caret;
    n->ph->terms = src->nterm ? shale_malloc(sizeof(Term) * (size_t)src->nterm) : NULL;
  }
  if (!n->ph || !n->root || !n->root->phr || (src->nterm && !n->ph->terms)) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < src->nterm; i++) {
    rc = term_copy(&n->ph->terms[i], &src->terms[i]);
    n->ph->nterm = i + 1;
  }
  if (rc == SHALE_OK) {
    n->root->phr[0] = 0;
    n->root->nphr = 1;
    *out = n;
  } else {
    fts5_expr_free(n);
  }
  return rc;
}

int fts5_expr_and(Fts5Expr **pa, Fts5Expr *b) {
  Fts5Expr *a = *pa;
  if (!b->root || !a->root) { /* an empty query matches nothing */
    if (!a->root) {
      fts5_expr_free(b);
      return SHALE_OK;
    }
    *pa = b;
    fts5_expr_free(a);
    return SHALE_OK;
  }
  Phrase *ph = shale_realloc(a->ph, sizeof(Phrase) * (size_t)(a->nph + b->nph));
  if (!ph) {
    fts5_expr_free(b);
    return SHALE_NOMEM;
  }
  a->ph = ph;
  Node *n = new_node(N_AND, a->root, b->root);
  if (!n) {
    fts5_expr_free(b);
    return SHALE_NOMEM;
  }
  renumber(b->root, a->nph);
  memcpy(a->ph + a->nph, b->ph, sizeof(Phrase) * (size_t)b->nph);
  a->nph += b->nph;
  a->root = n;
  shale_free(b->ph);
  shale_free(b);
  return SHALE_OK;
}

void fts5_expr_free(Fts5Expr *e) {
  if (!e) return;
  for (int i = 0; i < e->nph; i++) {
    for (int j = 0; j < e->ph[i].nterm; j++) term_free(&e->ph[i].terms[j]);
    shale_free(e->ph[i].terms);
    fts5_list_free(&e->ph[i].hits);
    fts5_pos_free(&e->ph[i].cur);
  }
  shale_free(e->ph);
  node_free(e->root);
  shale_free(e);
}

int fts5_expr_nphrase(Fts5Expr *e) { return e->nph; }
int fts5_expr_phrase_size(Fts5Expr *e, int ip) { return e->ph[ip].nterm; }

/* ---- evaluation ---- */

/* The first index i >= from of l with rowid >= the one sought (l->n when
 * none): galloping from `from`, so a scan of ascending rowids costs
 * O(log distance) per step, not O(log n). */
static int doc_seek(const Fts5List *l, int from, int64_t rowid) {
  int lo = from, step = 1;
  if (lo >= l->n || l->a[lo].rowid >= rowid) return lo;
  int hi = lo + 1; /* invariant: a[lo] < rowid; answer in (lo, hi] */
  while (hi < l->n && l->a[hi].rowid < rowid) {
    lo = hi;
    step *= 2;
    hi = step < l->n - lo ? lo + step : l->n;
  }
  while (hi - lo > 1) { /* a[lo] < rowid <= a[hi] (hi == n: past the end) */
    int mid = lo + (hi - lo) / 2;
    if (l->a[mid].rowid < rowid)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

/* The row of l with this rowid, or NULL; *at is a search hint kept from
 * the last call (rows are mostly asked for in ascending order). */
static Fts5Doc *find_doc_at(const Fts5List *l, int *at, int64_t rowid) {
  int from = *at < l->n && l->a[*at].rowid <= rowid ? *at : 0;
  int i = doc_seek(l, from, rowid);
  *at = i;
  return i < l->n && l->a[i].rowid == rowid ? &l->a[i] : NULL;
}

static int has_pos(const int64_t *a, int n, int64_t v) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (a[mid] == v) return 1;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return 0;
}

static int rows_push(int64_t **a, int *n, int *cap, int64_t v);

static int has_col(const int64_t *a, int n, uint64_t mask) {
  if (mask == ~(uint64_t)0) return n > 0;
  for (int i = 0; i < n; i++) {
    int64_t c = a[i] >> 32;
    if (c < 64 && (mask & ((uint64_t)1 << c))) return 1;
  }
  return 0;
}

/* a's doclist merged with b's (both sorted by rowid): every row of either,
 * positions merged in order without repeats; b is freed. */
static int list_union(Fts5List *a, Fts5List *b) {
  Fts5List out = {0};
  int rc = SHALE_OK, i = 0, j = 0;
  while (rc == SHALE_OK && (i < a->n || j < b->n)) {
    const Fts5Doc *x = i < a->n ? &a->a[i] : NULL, *y = j < b->n ? &b->a[j] : NULL;
    const int64_t *xp = x ? fts5_doc_pos(a, x) : NULL, *yp = y ? fts5_doc_pos(b, y) : NULL;
    int xn = 0, yn = 0;
    int64_t rowid;
    if (!y || (x && x->rowid < y->rowid)) {
      rowid = x->rowid;
      xn = x->n;
      i++;
    } else if (!x || y->rowid < x->rowid) {
      rowid = y->rowid;
      yn = y->n;
      j++;
    } else {
      rowid = x->rowid;
      xn = x->n;
      yn = y->n;
      i++;
      j++;
    }
    fts5_list_push(&rc, &out, rowid);
    int p = 0, q = 0;
    while (rc == SHALE_OK && (p < xn || q < yn)) {
      int64_t v;
      if (q >= yn || (p < xn && xp[p] < yp[q]))
        v = xp[p++];
      else if (p >= xn || yp[q] < xp[p])
        v = yp[q++];
      else
        v = xp[p++], q++;
      fts5_list_add(&rc, &out, v);
    }
  }
  fts5_list_free(b);
  if (rc) {
    fts5_list_free(&out);
    return rc;
  }
  fts5_list_free(a);
  *a = out;
  return SHALE_OK;
}

/* The doclist of a term: its own, or with synonyms the union of theirs. */
static int term_query(Fts5Index *ix, const Term *t, Fts5List *out) {
  int rc = fts5_index_query(ix, t->t, t->n, t->prefix, out);
  for (const Term *s = t->syn; rc == SHALE_OK && s; s = s->syn) {
    Fts5List l = {0};
    rc = fts5_index_query(ix, s->t, s->n, t->prefix, &l);
    if (rc == SHALE_OK)
      rc = list_union(out, &l);
    else
      fts5_list_free(&l);
  }
  return rc;
}

/* A one-term phrase with no filter: the term's doclist t[0] becomes out
 * as it is (cand: its rows); 1 when done so. 0, t[0] kept, when a row has
 * no position (the general loop drops it) or *rc is set (out of memory). */
static int phrase_take(int *rc, Fts5List *t, Fts5List *out, int64_t **cand, int *ncand) {
  for (int r = 0; r < t[0].n; r++)
    if (!t[0].a[r].n) return 0;
  if (cand && t[0].n) {
    *cand = shale_malloc(sizeof(int64_t) * (size_t)t[0].n);
    if (!*cand) {
      *rc = SHALE_NOMEM;
      return 0;
    }
    for (int r = 0; r < t[0].n; r++) (*cand)[r] = t[0].a[r].rowid;
    *ncand = t[0].n;
  }
  *out = t[0];
  return 1;
}

/* The phrase's rows and instances over the whole table (no NEAR); cand
 * (if not NULL): the rows holding every term of the phrase. */
static int phrase_eval(Fts5Expr *e, Fts5Index *ix, Phrase *p, Fts5List *out, int64_t **cand,
                       int *ncand) {
  int capc = 0;
  memset(out, 0, sizeof *out);
  if (p->nterm == 0) return SHALE_OK;
  Fts5List *t = shale_malloc(sizeof(Fts5List) * (size_t)p->nterm);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof(Fts5List) * (size_t)p->nterm);
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < p->nterm; i++) rc = term_query(ix, &p->terms[i], &t[i]);
  if (rc == SHALE_OK && p->nterm == 1 && !p->caret && p->colmask == ~(uint64_t)0 &&
      phrase_take(&rc, t, out, cand, ncand)) {
    shale_free(t); /* one term in any column: its doclist is the phrase's */
    return SHALE_OK;
  }
  /* the rows are driven by the term with the fewest (every term must be
   * there): the others are searched for each of its rows */
  int lead = 0;
  for (int i = 1; i < p->nterm; i++)
    if (t[i].n < t[lead].n) lead = i;
  const Fts5Doc **dt = shale_malloc(sizeof *dt * (size_t)p->nterm); /* each term's row */
  int *at = shale_malloc(sizeof *at * (size_t)p->nterm);            /* and search hint */
  if (!dt || !at)
    rc = SHALE_NOMEM;
  else
    memset(at, 0, sizeof *at * (size_t)p->nterm);
  for (int r = 0; rc == SHALE_OK && r < t[lead].n; r++) {
    int64_t rowid = t[lead].a[r].rowid;
    int ok = 1;
    dt[lead] = &t[lead].a[r];
    for (int i = 0; i < p->nterm && ok; i++)
      if (i != lead) ok = (dt[i] = find_doc_at(&t[i], &at[i], rowid)) != NULL;
    if (!ok) continue;
    const Fts5Doc *d0 = dt[0];
    /* a candidate: SQLite's term iterators stop on every row holding all
     * the terms, the column filter emptying their position lists there */
    if (cand && (rc = rows_push(cand, ncand, &capc, d0->rowid))) break;
    for (int i = 0; i < p->nterm && ok; i++)
      ok = has_col(fts5_doc_pos(&t[i], dt[i]), dt[i]->n, p->colmask);
    if (!ok) continue;
    fts5_list_push(&rc, out, d0->rowid);
    const int64_t *p0 = fts5_doc_pos(&t[0], d0);
    for (int k = 0; rc == SHALE_OK && k < d0->n; k++) {
      int64_t v = p0[k];
      int col = (int)(v >> 32);
      if (col < 64 && !(p->colmask & ((uint64_t)1 << col))) continue;
      if (col >= 64 && p->colmask != ~(uint64_t)0) continue;
      if (p->caret && (v & 0xffffffff) != 0) continue;
      int match = 1;
      for (int i = 1; i < p->nterm && match; i++)
        match = has_pos(fts5_doc_pos(&t[i], dt[i]), dt[i]->n, v + i);
      if (match) fts5_list_add(&rc, out, v);
    }
    if (rc == SHALE_OK && !out->a[out->n - 1].n) fts5_list_pop(out);
  }
  for (int i = 0; i < p->nterm; i++) fts5_list_free(&t[i]);
  shale_free(t);
  shale_free(dt);
  shale_free(at);
  (void)e;
  return rc;
}

static int rows_push(int64_t **a, int *n, int *cap, int64_t v) {
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 16;
    int64_t *b = shale_realloc(*a, sizeof(int64_t) * (size_t)c);
    if (!b) return SHALE_NOMEM;
    *a = b;
    *cap = c;
  }
  (*a)[(*n)++] = v;
  return SHALE_OK;
}

static int row_in(const int64_t *a, int n, int64_t v) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (a[mid] == v) return 1;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return 0;
}

static void pos_copy(int *rc, Fts5Pos *dst, const int64_t *a, int n) {
  dst->n = 0;
  fts5_pos_reserve(rc, dst, n);
  if (*rc || !n) return;
  memcpy(dst->a, a, sizeof *a * (size_t)n);
  dst->n = n;
}

/* SQLite's NEAR test on one row: one instance per phrase, all within
 * nTerm + N tokens of the last; the instances in some window are kept in
 * pos[] (all emptied when there is none). Returns 1 on a match. */
static int near_window(Fts5Expr *e, Node *n, Fts5Pos *pos) {
  int np = n->nphr, rc = SHALE_OK;
  int ix[64];
  Fts5Pos outp[64];
  memset(ix, 0, sizeof(int) * (size_t)np);
  memset(outp, 0, sizeof(Fts5Pos) * (size_t)np);
  for (;;) {
    int64_t imax = pos[0].a[ix[0]];
    int match, done = 0;
    do {
      match = 1;
      for (int i = 0; i < np && !done; i++) {
        int64_t imin = imax - e->ph[n->phr[i]].nterm - n->near;
        int64_t v = pos[i].a[ix[i]];
        if (v < imin || v > imax) {
          match = 0;
          while (pos[i].a[ix[i]] < imin) {
            if (++ix[i] >= pos[i].n) {
              done = 1;
              break;
            }
          }
          if (!done && pos[i].a[ix[i]] > imax) imax = pos[i].a[ix[i]];
        }
      }
    } while (!match && !done);
    if (done) break;
    for (int i = 0; i < np; i++) {
      int64_t v = pos[i].a[ix[i]];
      if (!outp[i].n || outp[i].a[outp[i].n - 1] != v) fts5_pos_add(&rc, &outp[i], v);
    }
    int adv = -1; /* advance the phrase whose next position is smallest */
    int64_t best = 0;
    for (int i = 0; i < np; i++) {
      int64_t la = ix[i] + 1 < pos[i].n ? pos[i].a[ix[i] + 1] : INT64_MAX;
      if (adv < 0 || la < best) {
        best = la;
        adv = i;
      }
    }
    if (++ix[adv] >= pos[adv].n) break;
  }
  int matched = outp[0].n > 0;
  for (int i = 0; i < np; i++) {
    fts5_pos_free(&pos[i]);
    pos[i] = outp[i];
  }
  return matched;
}

/* ---- SQLite's iteration ----
 * The instances SQLite reports for a phrase at a row are whatever its
 * iterator left in the phrase's position list when the root stopped there
 * (a node "on" the row, matching or not), so evaluation follows SQLite's
 * iterator step by step: leaves (NEAR groups) over their candidate rows
 * (every term present in the group's columns), n-ary AND/OR (flattened as
 * SQLite's parser does) and NOT, each node with a rowid, eof and nomatch. */
typedef struct It {
  int kind;
  struct It **kid;
  int nkid;
  Node *leaf;    /* N_NEAR: the AST node (phrases, near) */
  int64_t *cand; /* N_NEAR: candidate rows */
  int ncand, k;
  int64_t rowid;
  int eof, nomatch;
  int root; /* the expression's root (an AND there keeps its lists) */
} It;

static void it_free(It *t) {
  if (!t) return;
  for (int i = 0; i < t->nkid; i++) it_free(t->kid[i]);
  shale_free(t->kid);
  shale_free(t->cand);
  shale_free(t);
}

static int it_add_kid(It *t, It *k) {
  It **a = shale_realloc(t->kid, sizeof(It *) * (size_t)(t->nkid + 1));
  if (!a) return SHALE_NOMEM;
  t->kid = a;
  a[t->nkid++] = k;
  return SHALE_OK;
}

static It *it_build(Fts5Expr *e, Fts5Index *ix, Node *n, int *rc);

/* Children of an AND/OR node, those of the same kind flattened in. */
static void it_kids(Fts5Expr *e, Fts5Index *ix, It *t, Node *n, int *rc) {
  Node *side[2] = {n->l, n->r};
  for (int i = 0; i < 2 && *rc == SHALE_OK; i++) {
    if (side[i]->kind == n->kind && n->kind != N_NOT) {
      it_kids(e, ix, t, side[i], rc);
      continue;
    }
    It *k = it_build(e, ix, side[i], rc);
    if (k && (*rc = it_add_kid(t, k)) != SHALE_OK) it_free(k);
  }
}

static It *it_build(Fts5Expr *e, Fts5Index *ix, Node *n, int *rc) {
  It *t = shale_malloc(sizeof *t);
  if (!t) {
    *rc = SHALE_NOMEM;
    return NULL;
  }
  memset(t, 0, sizeof *t);
  t->kind = n->kind;
  if (n->kind == N_NEAR) {
    t->leaf = n;
    int64_t *c2 = NULL;
    int nc2 = 0;
    for (int i = 0; *rc == SHALE_OK && i < n->nphr; i++) {
      Phrase *p = &e->ph[n->phr[i]];
      *rc = phrase_eval(e, ix, p, &p->hits, i ? &c2 : &t->cand, i ? &nc2 : &t->ncand);
      if (*rc == SHALE_OK && i) {
        int k = 0;
        for (int a = 0; a < t->ncand; a++)
          if (row_in(c2, nc2, t->cand[a])) t->cand[k++] = t->cand[a];
        t->ncand = k;
      }
      shale_free(c2);
      c2 = NULL;
      nc2 = 0;
    }
    if (e->desc) /* the walk's keys: ~rowid ascends as rowid descends */
      for (int i = 0, j = t->ncand - 1; i <= j; i++, j--) {
        int64_t x = t->cand[i];
        t->cand[i] = ~t->cand[j];
        t->cand[j] = ~x;
      }
  } else {
    it_kids(e, ix, t, n, rc);
  }
  if (*rc) {
    it_free(t);
    return NULL;
  }
  return t;
}

static void it_zero(Fts5Expr *e, It *t) {
  if (t->kind == N_NEAR) {
    for (int i = 0; i < t->leaf->nphr; i++) e->ph[t->leaf->phr[i]].cur.n = 0;
    return;
  }
  for (int i = 0; i < t->nkid; i++) it_zero(e, t->kid[i]);
}

/* A leaf on candidate k: SQLite's NEAR test and the position lists it
 * leaves (up to the first phrase that fails; later ones keep theirs). */
static int leaf_test(Fts5Expr *e, It *t) {
  Node *n = t->leaf;
  int rc = SHALE_OK, all = 1;
  t->rowid = t->cand[t->k];
  int64_t rowid = e->desc ? ~t->rowid : t->rowid;
  for (int i = 0; i < n->nphr && rc == SHALE_OK; i++) {
    Phrase *p = &e->ph[n->phr[i]];
    Fts5Doc *d = find_doc_at(&p->hits, &p->at, rowid);
    pos_copy(&rc, &p->cur, d ? fts5_doc_pos(&p->hits, d) : NULL, d ? d->n : 0);
    if (!d) {
      all = 0;
      break;
    }
  }
  if (rc) return rc;
  if (all && n->nphr > 1) {
    Fts5Pos cur[64];
    for (int i = 0; i < n->nphr; i++) cur[i] = e->ph[n->phr[i]].cur;
    all = near_window(e, n, cur);
    for (int i = 0; i < n->nphr; i++) e->ph[n->phr[i]].cur = cur[i];
  }
  t->nomatch = !all;
  return SHALE_OK;
}

/* SQLite's fts5ExprSetEof: the node and everything below it at EOF. */
static void it_set_eof(It *t) {
  t->eof = 1;
  t->nomatch = 0;
  for (int i = 0; i < t->nkid; i++) it_set_eof(t->kid[i]);
}

static int cmp_it(const It *a, const It *b) {
  if (b->eof) return a->eof ? 0 : -1;
  if (a->eof) return 1;
  return a->rowid < b->rowid ? -1 : a->rowid > b->rowid;
}

static int it_next(Fts5Expr *e, It *t, int from_valid, int64_t from);

static int it_test(Fts5Expr *e, It *t) {
  int rc = SHALE_OK;
  if (t->kind == N_AND) {
    int64_t last = t->rowid;
    int match;
    do {
      t->nomatch = 0;
      match = 1;
      for (int i = 0; i < t->nkid; i++) {
        It *c = t->kid[i];
        if (!c->eof && c->rowid < last && (rc = it_next(e, c, 1, last))) return rc;
        if (c->eof) {
          it_set_eof(t);
          match = 1;
          break;
        }
        if (c->rowid != last) {
          match = 0;
          last = c->rowid;
        }
        if (c->nomatch) t->nomatch = 1;
      }
    } while (!match);
    if (t->nomatch && !t->root) it_zero(e, t);
    t->rowid = last;
  } else if (t->kind == N_OR) {
    It *nx = t->kid[0];
    for (int i = 1; i < t->nkid; i++) {
      int c = cmp_it(nx, t->kid[i]);
      if (c > 0 || (c == 0 && !t->kid[i]->nomatch)) nx = t->kid[i];
    }
    t->rowid = nx->rowid;
    t->eof = nx->eof;
    t->nomatch = nx->nomatch;
  } else if (t->kind == N_NOT) {
    It *a = t->kid[0], *b = t->kid[1];
    while (rc == SHALE_OK && !a->eof) {
      int c = cmp_it(a, b);
      if (c > 0) {
        if ((rc = it_next(e, b, 1, a->rowid))) return rc;
        c = cmp_it(a, b);
      }
      if (c || b->nomatch) break;
      rc = it_next(e, a, 0, 0);
    }
    t->eof = a->eof;
    t->nomatch = a->nomatch;
    t->rowid = a->rowid;
    if (a->eof) it_zero(e, b);
  }
  return rc;
}

static int it_first(Fts5Expr *e, It *t) {
  if (t->kind == N_NEAR) {
    t->k = 0;
    t->eof = t->ncand == 0;
    t->nomatch = 0;
    return t->eof ? SHALE_OK : leaf_test(e, t);
  }
  int rc = SHALE_OK, eof = 1;
  t->nomatch = 0;
  for (int i = 0; rc == SHALE_OK && i < t->nkid; i++) {
    rc = it_first(e, t->kid[i]);
    if (!t->kid[i]->eof) eof = 0;
  }
  if (rc) return rc;
  t->rowid = t->kid[0]->rowid; /* SQLite starts from the first child's row */
  if (t->kind == N_NOT)
    t->eof = t->kid[0]->eof;
  else if (t->kind == N_OR && eof)
    it_set_eof(t);
  for (int i = 0; t->kind == N_AND && i < t->nkid; i++)
    if (t->kid[i]->eof) it_set_eof(t);
  return t->eof ? SHALE_OK : it_test(e, t);
}

static int it_next(Fts5Expr *e, It *t, int from_valid, int64_t from) {
  int rc = SHALE_OK;
  if (t->kind == N_NEAR) {
    t->nomatch = 0;
    int64_t cur = t->rowid;
    while (t->k < t->ncand && (t->cand[t->k] <= cur || (from_valid && t->cand[t->k] < from)))
      t->k++;
    t->eof = t->k >= t->ncand;
    return t->eof ? SHALE_OK : leaf_test(e, t);
  }
  if (t->kind == N_AND || t->kind == N_NOT) {
    rc = it_next(e, t->kid[0], from_valid, from);
    if (rc) return rc;
    if (t->kind == N_AND) {
      if (t->kid[0]->eof) {
        it_set_eof(t);
        return SHALE_OK;
      }
      if (t->kid[0]->rowid > t->rowid) t->rowid = t->kid[0]->rowid;
      return it_test(e, t);
    }
    return it_test(e, t);
  }
  int64_t last = t->rowid; /* OR */
  for (int i = 0; i < t->nkid; i++) {
    It *c = t->kid[i];
    if (!c->eof && (c->rowid == last || (from_valid && c->rowid < from)))
      if ((rc = it_next(e, c, from_valid, from))) return rc;
  }
  return it_test(e, t);
}

static int hits_push(Fts5List *l, int64_t rowid, const Fts5Pos *p) {
  int rc = SHALE_OK;
  fts5_list_push(&rc, l, rowid);
  for (int i = 0; i < p->n; i++) fts5_list_add(&rc, l, p->a[i]);
  return rc;
}

/* The leaf of phrase ip (NULL if none). */
static It *leaf_of(It *t, int ip) {
  if (t->kind == N_NEAR) {
    for (int i = 0; i < t->leaf->nphr; i++)
      if (t->leaf->phr[i] == ip) return t;
    return NULL;
  }
  for (int i = 0; i < t->nkid; i++) {
    It *r = leaf_of(t->kid[i], ip);
    if (r) return r;
  }
  return NULL;
}

/* Reverse the rows of l (their positions stay where they are). */
static void list_reverse(Fts5List *l) {
  for (int i = 0, j = l->n - 1; i < j; i++, j--) {
    Fts5Doc x = l->a[i];
    l->a[i] = l->a[j];
    l->a[j] = x;
  }
}

int fts5_expr_eval(Fts5Expr *e, Fts5Index *ix, int desc, const int64_t *first, int64_t **rows,
                   int *nrows) {
  *rows = NULL;
  *nrows = 0;
  if (!e->root) return SHALE_OK;
  int rc = SHALE_OK, cap = 0;
  e->desc = desc;
  It *root = it_build(e, ix, e->root, &rc);
  if (!root) return rc;
  if (e->nph == 1 && root->kind == N_NEAR && root->leaf->nphr == 1) { /* its hits: the answer */
    Fts5List *h = &e->ph[root->leaf->phr[0]].hits;
    if (h->n && !(*rows = shale_malloc(sizeof(int64_t) * (size_t)h->n))) rc = SHALE_NOMEM;
    for (int i = 0; rc == SHALE_OK && i < h->n; i++) (*rows)[i] = h->a[i].rowid;
    if (rc == SHALE_OK) *nrows = h->n;
    it_free(root);
    return rc;
  }
  It **leaf = shale_malloc(sizeof(It *) * (size_t)(e->nph ? e->nph : 1));
  Fts5List *out = shale_malloc(sizeof(Fts5List) * (size_t)(e->nph ? e->nph : 1));
  if (!leaf || !out)
    rc = SHALE_NOMEM;
  else
    memset(out, 0, sizeof(Fts5List) * (size_t)(e->nph ? e->nph : 1));
  for (int i = 0; rc == SHALE_OK && i < e->nph; i++) leaf[i] = leaf_of(root, i);
  root->root = 1;
  if (rc == SHALE_OK) rc = it_first(e, root);
  /* SQLite's sqlite3Fts5ExprFirst: from the first row on (in the walk's
   * order), the lists left by the rows before it kept */
  int64_t from = first ? (desc ? ~*first : *first) : 0;
  if (rc == SHALE_OK && first && !root->eof && root->rowid < from) rc = it_next(e, root, 1, from);
  while (rc == SHALE_OK && !root->eof && root->nomatch) rc = it_next(e, root, 0, 0);
  while (rc == SHALE_OK && !root->eof) {
    int64_t r = desc ? ~root->rowid : root->rowid;
    rc = rows_push(rows, nrows, &cap, r);
    for (int i = 0; rc == SHALE_OK && i < e->nph; i++) {
      It *l = leaf[i];
      if (l && !l->eof && l->rowid == root->rowid && e->ph[i].cur.n)
        rc = hits_push(&out[i], r, &e->ph[i].cur);
    }
    do {
      if (rc == SHALE_OK) rc = it_next(e, root, 0, 0);
    } while (rc == SHALE_OK && !root->eof && root->nomatch);
  }
  for (int i = 0; out && i < e->nph; i++) {
    fts5_list_free(&e->ph[i].hits);
    if (desc) list_reverse(&out[i]);
    e->ph[i].hits = out[i];
    fts5_pos_free(&e->ph[i].cur);
  }
  shale_free(out);
  shale_free(leaf);
  it_free(root);
  e->desc = 0;
  for (int i = 0, j = *nrows - 1; desc && i < j; i++, j--) { /* ascending, as promised */
    int64_t x = (*rows)[i];
    (*rows)[i] = (*rows)[j];
    (*rows)[j] = x;
  }
  if (rc) {
    shale_free(*rows);
    *rows = NULL;
    *nrows = 0;
  }
  return rc;
}

const Fts5Pos *fts5_expr_phrase_hits(Fts5Expr *e, int ip, int64_t rowid) {
  Phrase *p = &e->ph[ip];
  Fts5Doc *d = find_doc_at(&p->hits, &p->at, rowid);
  if (!d) return NULL;
  p->view.a = (int64_t *)fts5_doc_pos(&p->hits, d);
  p->view.n = p->view.cap = d->n;
  return &p->view;
}

int fts5_expr_phrase_rows(Fts5Expr *e, Fts5Index *ix, int ip, int64_t *n) {
  Fts5List l;
  Phrase tmp = e->ph[ip];
  memset(&tmp.cur, 0, sizeof tmp.cur);
  memset(&tmp.hits, 0, sizeof tmp.hits); /* xQueryPhrase: the phrase alone, its filters kept */
  int rc = phrase_eval(e, ix, &tmp, &l, NULL, NULL);
  *n = rc == SHALE_OK ? l.n : 0;
  fts5_list_free(&l);
  return rc;
}

typedef struct PopCtx {
  Fts5Expr *e;
  const uint8_t *ok; /* per phrase: collect its instances */
  Fts5Pos *out;
  int64_t col;
  int pos, rc;
} PopCtx;

static int populate_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  PopCtx *c = ctx;
  (void)start;
  (void)end;
  int pos = fts5_tok_pos(&c->pos, tflags);
  for (int i = 0; i < c->e->nph; i++) {
    Phrase *p = &c->e->ph[i];
    if (!c->ok[i]) continue;
    for (const Term *s = &p->terms[0]; s; s = s->syn) {
      const char *t = s->t + 1; /* after the index byte */
      int nt = s->n - 1;
      if ((nt == ntok || (nt < ntok && p->terms[0].prefix)) && !memcmp(t, tok, (size_t)nt)) {
        Fts5Pos *o = &c->out[i];
        int64_t v = (c->col << 32) | pos;
        if (!o->n || o->a[o->n - 1] != v) fts5_pos_add(&c->rc, o, v);
        break;
      }
    }
  }
  return c->rc;
}

int fts5_expr_populate(Fts5Expr *e, int64_t rowid, int live, int col, const char *z, int n,
                       Fts5Pos *out) {
  uint8_t small[64];
  uint8_t *ok = e->nph <= (int)sizeof small ? small : shale_malloc((size_t)e->nph);
  if (!ok) return SHALE_NOMEM;
  int any = 0;
  for (int i = 0; i < e->nph; i++) {
    Phrase *p = &e->ph[i];
    const Fts5Pos *h = fts5_expr_phrase_hits(e, i, rowid);
    int in_cols = col >= 64 ? p->colmask == ~(uint64_t)0 : (p->colmask >> col) & 1;
    ok[i] = p->nterm == 1 && (!live || (h && h->n)) && in_cols;
    any |= ok[i];
  }
  PopCtx c = {e, ok, out, col, 0, SHALE_OK};
  int rc = any ? fts5_tokenize(e->c->tok, FTS5_TOKENIZE_DOCUMENT, z, n, &c, populate_cb) : SHALE_OK;
  if (ok != small) shale_free(ok);
  return rc ? rc : c.rc;
}

static void check_clear(Node *n, Fts5Pos *out) {
  for (int i = 0; i < n->nphr; i++) out[n->phr[i]].n = 0;
  if (n->l) check_clear(n->l, out);
  if (n->r) check_clear(n->r, out);
}

/* SQLite's fts5ExprCheckPoslists: whether the row matches n by the lists. */
static int check_node(Node *n, Fts5Pos *out) {
  int ok;
  switch (n->kind) {
    case N_NEAR:
      return out[n->phr[0]].n > 0;
    case N_OR:
      ok = check_node(n->l, out);
      return check_node(n->r, out) || ok;
    case N_AND:
      ok = check_node(n->l, out) && check_node(n->r, out);
      break;
    default: /* N_NOT */
      ok = check_node(n->l, out) && !check_node(n->r, out);
  }
  if (!ok) check_clear(n, out);
  return ok;
}

void fts5_expr_check(Fts5Expr *e, Fts5Pos *out) {
  if (e->root) check_node(e->root, out);
}
