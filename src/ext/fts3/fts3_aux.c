/*
 * fts3_aux.c -- FTS3/FTS4's auxiliary functions offsets(), snippet() and
 * matchinfo(), the module's overloads (xFindFunction) of functions whose
 * first argument is the table's hidden column (a pointer to the cursor).
 *
 * They see the query as SQLite's evaluation leaves it on a row (SQLite's
 * FTS3 documentation, "Auxiliary Functions", and its behaviour): the
 * phrases are numbered left to right, the right operands of NOT left out;
 * a phrase's positions are those of its last token. On the row, a node
 * "is at" the row when its parent is and the row is in its documents
 * (AND and NEAR: both operands'; OR: either's; NOT: its left operand's);
 * the whole query is then tested as SQLite does, each NEAR group trimming
 * the positions of its phrases to those near the neighbouring phrase
 * (left to right, then right to left), or emptying them when it does not
 * match. A phrase not at the row but under an OR still shows its own
 * positions in the row (SQLite reads its full document list there) to
 * offsets, snippet and matchinfo's x and s; matchinfo's y and b count only
 * phrases at the row.
 *
 * matchinfo's global x values count a phrase's matches over every
 * document (those where its NEAR group matches, trimmed, for a phrase in
 * one); n and a come from %_stat, l from %_docsize.
 *
 * Invariants:
 *  1. Fts3Aux is built at the first call of a query and lives until the
 *     cursor is filtered again or closed; its row state is for row docid.
 *  2. Position lists are ascending (column << 32 | offset) without
 *     duplicates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

typedef struct PosList {
  int64_t *p;
  int n, cap;
} PosList;

struct Fts3Aux {
  Fts3Node *nodes;
  int nnodes;
  int *phrase; /* node numbers of the phrases, in query order */
  int *slot;   /* per node: its number in phrase[], -1 for none */
  int nphrase;
  int ntok;     /* tokens of every phrase */
  char *or_anc; /* per node: has an OR ancestor */
  /* the row state */
  int have_row;
  int64_t docid;
  char *mem, *at; /* per node: the row is in its documents; it is at the row */
  char *ended;    /* per node: it or an ancestor has walked past its last document */
  PosList *raw;   /* per node (phrases): positions in the row */
  PosList *cur;   /* per node (phrases): as the query's test left them */
  /* matchinfo's global values, loaded once */
  uint32_t *gx; /* per phrase and column: hits, documents */
  int have_stat;
  int64_t *stat; /* %_stat: documents, tokens per column */
};

static void pl_free(PosList *l) {
  shale_free(l->p);
  memset(l, 0, sizeof *l);
}

static int pl_add(PosList *l, int64_t v) {
  if (l->n >= l->cap) {
    int cap = l->cap ? l->cap * 2 : 16;
    int64_t *p = shale_realloc(l->p, sizeof(int64_t) * (size_t)cap);
    if (!p) return SHALE_NOMEM;
    l->p = p;
    l->cap = cap;
  }
  l->p[l->n++] = v;
  return SHALE_OK;
}

static int pl_copy(PosList *dst, const PosList *src) {
  dst->n = 0;
  for (int i = 0; i < src->n; i++)
    if (pl_add(dst, src->p[i])) return SHALE_NOMEM;
  return SHALE_OK;
}

void fts3_aux_free(Fts3Aux *a) {
  if (!a) return;
  for (int i = 0; a->raw && i < a->nnodes; i++) {
    pl_free(&a->raw[i]);
    pl_free(&a->cur[i]);
  }
  fts3_nodes_free(a->nodes, a->nnodes);
  shale_free(a->phrase);
  shale_free(a->slot);
  shale_free(a->or_anc);
  shale_free(a->mem);
  shale_free(a->at);
  shale_free(a->ended);
  shale_free(a->raw);
  shale_free(a->cur);
  shale_free(a->gx);
  shale_free(a->stat);
  shale_free(a);
}

/* The phrases in query order, NOT's right operands left out. */
static void list_phrases(Fts3Aux *a, int n) {
  const Fts3Node *nd = &a->nodes[n];
  if (nd->kind == FTS3_NODE_PHRASE) {
    a->phrase[a->nphrase++] = n;
    a->ntok += nd->nterm;
    return;
  }
  list_phrases(a, nd->left);
  if (nd->kind != FTS3_NODE_NOT) list_phrases(a, nd->right);
}

static int aux_build(Fts3AuxCursor *c) {
  if (c->aux) return SHALE_OK;
  Fts3Aux *a = shale_malloc(sizeof *a);
  if (!a) return SHALE_NOMEM;
  memset(a, 0, sizeof *a);
  int64_t lvl = c->t->lvl;
  c->t->lvl = c->lvl; /* the language the query read */
  int rc = fts3_expr_nodes(c->t, c->expr, &a->nodes, &a->nnodes);
  c->t->lvl = lvl;
  size_t n = (size_t)(a->nnodes ? a->nnodes : 1);
  if (rc == SHALE_OK) {
    a->phrase = shale_malloc(sizeof(int) * n);
    a->slot = shale_malloc(sizeof(int) * n);
    a->or_anc = shale_malloc(n);
    a->mem = shale_malloc(n);
    a->at = shale_malloc(n);
    a->ended = shale_malloc(n);
    a->raw = shale_malloc(sizeof(PosList) * n);
    a->cur = shale_malloc(sizeof(PosList) * n);
    if (!a->phrase || !a->slot || !a->or_anc || !a->mem || !a->at || !a->ended || !a->raw ||
        !a->cur)
      rc = SHALE_NOMEM;
  }
  if (rc == SHALE_OK) {
    memset(a->raw, 0, sizeof(PosList) * n);
    memset(a->cur, 0, sizeof(PosList) * n);
    for (int i = 0; i < a->nnodes; i++) {
      int p = a->nodes[i].parent;
      a->or_anc[i] = p >= 0 && (a->or_anc[p] || a->nodes[p].kind == FTS3_NODE_OR);
    }
    if (a->nnodes) list_phrases(a, 0);
    for (int i = 0; i < a->nnodes; i++) a->slot[i] = -1;
    for (int i = 0; i < a->nphrase; i++) a->slot[a->phrase[i]] = i;
  }
  if (rc) {
    fts3_aux_free(a);
    return rc;
  }
  c->aux = a;
  return SHALE_OK;
}

/* The document index of docid in phrase node n's hits, or -1. */
static int find_doc(const Fts3Node *nd, int64_t docid) {
  int lo = 0, hi = nd->hits.n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (nd->hits.docid[mid] < docid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < nd->hits.n && nd->hits.docid[lo] == docid ? lo : -1;
}

/* Phrase node n's positions (of its last token) in document d. */
static int raw_positions(const Fts3Node *nd, int d, PosList *out) {
  out->n = 0;
  if (d < 0) return SHALE_OK;
  for (int k = nd->hits.off[d]; k < nd->hits.off[d + 1]; k++)
    if (pl_add(out, nd->hits.pos[k] + nd->nterm - 1)) return SHALE_NOMEM;
  return SHALE_OK;
}

/* ---- NEAR groups ---- */

/* Keep the positions of target (a phrase of ntarget tokens) near one of
 * against (nagainst tokens) in the same column: after it by at most
 * near + ntarget, or before it by at most near + nagainst (SQLite's
 * measure between last tokens). False, target unchanged, when none is. */
static int near_trim(PosList *target, int ntarget, const PosList *against, int nagainst, int near,
                     PosList *tmp) {
  tmp->n = 0;
  int j = 0;
  for (int i = 0; i < target->n; i++) {
    int64_t x = target->p[i];
    while (j < against->n && against->p[j] < x - (near + ntarget)) j++;
    int ok = 0;
    for (int k = j; k < against->n && against->p[k] <= x + near + nagainst && !ok; k++) {
      int64_t y = against->p[k];
      if ((x >> 32) != (y >> 32)) continue;
      ok = (y < x && x <= y + near + ntarget) || (x < y && y <= x + near + nagainst);
    }
    if (ok && pl_add(tmp, x)) return -1;
  }
  if (!tmp->n) return 0;
  PosList swap = *target;
  *target = *tmp;
  *tmp = swap;
  return 1;
}

/* The phrases of the NEAR group whose top node is top, left to right:
 * their node numbers in g[], distances to the phrase before in d[]. */
static int near_group(const Fts3Aux *a, int top, int *g, int *d) {
  int n = 0, x = top;
  while (a->nodes[x].kind == FTS3_NODE_NEAR) x = a->nodes[x].left;
  g[n] = x;
  d[n++] = 0;
  for (int p = a->nodes[x].parent; p >= 0 && a->nodes[p].kind == FTS3_NODE_NEAR;
       p = a->nodes[p].parent) {
    if (p == a->nodes[top].parent) break;
    g[n] = a->nodes[p].right;
    d[n++] = a->nodes[p].near;
    if (p == top) break;
  }
  return n;
}

/* SQLite's NEAR test on lists l[] of the group's phrases: both passes of
 * trimming; whether the group matches. -1 out of memory. */
static int near_test(const Fts3Aux *a, int top, PosList *l) {
  int *g = shale_malloc(sizeof(int) * (size_t)a->nnodes * 2);
  if (!g) return -1;
  int *d = g + a->nnodes;
  int n = near_group(a, top, g, d), res = 1;
  PosList tmp = {0};
  for (int k = 1; k < n && res == 1; k++)
    res = near_trim(&l[g[k]], a->nodes[g[k]].nterm, &l[g[k - 1]], a->nodes[g[k - 1]].nterm, d[k],
                    &tmp);
  for (int k = n - 2; k >= 0 && res == 1; k--)
    res = near_trim(&l[g[k]], a->nodes[g[k]].nterm, &l[g[k + 1]], a->nodes[g[k + 1]].nterm,
                    d[k + 1], &tmp);
  pl_free(&tmp);
  shale_free(g);
  return res;
}

static int is_group_top(const Fts3Aux *a, int n) {
  int p = a->nodes[n].parent;
  return a->nodes[n].kind == FTS3_NODE_NEAR && (p < 0 || a->nodes[p].kind != FTS3_NODE_NEAR);
}

/* Empty the lists of the group's phrases that are at the row. */
static void near_invalidate(Fts3Aux *a, int top) {
  int x = top;
  for (; a->nodes[x].kind == FTS3_NODE_NEAR; x = a->nodes[x].left) {
    int r = a->nodes[x].right;
    if (a->at[r]) a->cur[r].n = 0;
  }
  if (a->at[x]) a->cur[x].n = 0;
}

/* SQLite's test of node n on the row (fts3EvalTestExpr). */
static int test_node(Fts3Aux *a, int n, int *rc) {
  const Fts3Node *nd = &a->nodes[n];
  switch (nd->kind) {
    case FTS3_NODE_PHRASE:
      return a->at[n] && a->cur[n].n > 0;
    case FTS3_NODE_OR: {
      int l = test_node(a, nd->left, rc), r = test_node(a, nd->right, rc);
      return l || r;
    }
    case FTS3_NODE_NOT:
      return test_node(a, nd->left, rc) && !test_node(a, nd->right, rc);
    default: {
      int hit = test_node(a, nd->left, rc) && test_node(a, nd->right, rc);
      if (hit && is_group_top(a, n)) {
        int res = near_test(a, n, a->cur);
        if (res < 0) *rc = SHALE_NOMEM;
        hit = res == 1;
      }
      if (!hit && is_group_top(a, n)) near_invalidate(a, n);
      return hit;
    }
  }
}

/* Membership of the row in node n's documents, bottom up. */
static int member(Fts3Aux *a, int n, int *rc) {
  const Fts3Node *nd = &a->nodes[n];
  int m;
  if (nd->kind == FTS3_NODE_PHRASE) {
    int d = find_doc(nd, a->docid);
    m = d >= 0;
    if (*rc == SHALE_OK) *rc = raw_positions(nd, d, &a->raw[n]);
  } else {
    int l = member(a, nd->left, rc), r = member(a, nd->right, rc);
    m = nd->kind == FTS3_NODE_OR ? l || r : nd->kind == FTS3_NODE_NOT ? l : l && r;
  }
  a->mem[n] = (char)m;
  return m;
}

/* ---- where SQLite's iterators stand ---- */

/* Whether docid x comes after y in the walk's order. */
static int after(int64_t x, int64_t y, int desc) { return desc ? x < y : x > y; }

static int64_t walk_end(int desc) { return desc ? INT64_MIN : INT64_MAX; }

/* The first document of node n's (SQLite's iteration: AND and NEAR both
 * operands', OR either's, NOT its left operand's) at or after p. */
static int64_t node_next(const Fts3Aux *a, int n, int64_t p, int desc) {
  const Fts3Node *nd = &a->nodes[n];
  if (p == walk_end(desc)) return p;
  if (nd->kind == FTS3_NODE_PHRASE) {
    int lo = 0, hi = nd->hits.n;
    while (lo < hi) { /* the first docid >= p */
      int mid = (lo + hi) / 2;
      if (nd->hits.docid[mid] < p)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (!desc) return lo < nd->hits.n ? nd->hits.docid[lo] : walk_end(desc);
    if (lo < nd->hits.n && nd->hits.docid[lo] == p) return p;
    return lo > 0 ? nd->hits.docid[lo - 1] : walk_end(desc);
  }
  if (nd->kind == FTS3_NODE_NOT) return node_next(a, nd->left, p, desc);
  if (nd->kind == FTS3_NODE_OR) {
    int64_t l = node_next(a, nd->left, p, desc), r = node_next(a, nd->right, p, desc);
    return after(l, r, desc) ? r : l;
  }
  for (int64_t x = p;;) {
    int64_t l = node_next(a, nd->left, x, desc);
    int64_t r = node_next(a, nd->right, l, desc);
    if (r == l) return l;
    x = r;
  }
}

/* pos[] per node, with the root on the current row. */
static void positions(const Fts3Aux *a, int desc, int64_t *pos) {
  for (int n = 0; n < a->nnodes; n++) {
    int p = a->nodes[n].parent;
    if (p < 0) {
      pos[n] = a->docid;
      continue;
    }
    const Fts3Node *pn = &a->nodes[p];
    int moved = pn->kind == FTS3_NODE_OR || (pn->kind == FTS3_NODE_NOT && pn->right == n);
    pos[n] = moved ? node_next(a, n, pos[p], desc) : pos[p];
  }
}

static int load_row(Fts3AuxCursor *c) {
  int rc = aux_build(c);
  if (rc) return rc;
  Fts3Aux *a = c->aux;
  if (a->have_row && a->docid == c->docid) return SHALE_OK;
  a->have_row = 0;
  a->docid = c->docid;
  if (!a->nnodes) return SHALE_OK;
  member(a, 0, &rc);
  for (int i = 0; rc == SHALE_OK && i < a->nnodes; i++) {
    int p = a->nodes[i].parent;
    a->at[i] = (char)(a->mem[i] && (p < 0 || a->at[p]));
    if (a->nodes[i].kind == FTS3_NODE_PHRASE) rc = pl_copy(&a->cur[i], &a->raw[i]);
    if (rc == SHALE_OK && !a->at[i]) a->cur[i].n = 0;
  }
  if (rc == SHALE_OK) test_node(a, 0, &rc);
  int64_t *pos = rc ? NULL : shale_malloc(sizeof(int64_t) * (size_t)a->nnodes);
  if (!rc && !pos) rc = SHALE_NOMEM;
  if (pos) positions(a, c->desc, pos);
  for (int i = 0; pos && i < a->nnodes; i++) {
    int p = a->nodes[i].parent;
    a->ended[i] = (char)(pos[i] == walk_end(c->desc) || (p >= 0 && a->ended[p]));
  }
  shale_free(pos);
  if (rc == SHALE_OK) a->have_row = 1;
  return rc;
}

/* Phrase node n's positions on the row as offsets() and snippet() read
 * them (SQLite's sqlite3Fts3EvalPhrasePoslist); NULL for none. */
static const PosList *row_positions(const Fts3Aux *a, int n) {
  if (a->at[n]) return &a->cur[n];
  int top = n; /* a NEAR group's phrase: when the whole group is in the row */
  for (int p = a->nodes[n].parent; p >= 0 && a->nodes[p].kind == FTS3_NODE_NEAR;
       p = a->nodes[p].parent)
    top = p;
  if (a->or_anc[n] && a->mem[top]) return &a->raw[n];
  return NULL;
}

/* The offsets in column col of list l (NULL: none) into out[]; count. */
static int column_offsets(const PosList *l, int col, int *out) {
  int n = 0;
  for (int i = 0; l && i < l->n; i++)
    if ((l->p[i] >> 32) == col) out[n++] = (int)(l->p[i] & 0xffffffff);
  return n;
}

static int column_count(const PosList *l, int col) {
  int n = 0;
  for (int i = 0; l && i < l->n; i++) n += (l->p[i] >> 32) == col;
  return n;
}

/* ---- the arguments ---- */

static Fts3AuxCursor *cursor_arg(shale_context *ctx, shale_value *v, const char *fn) {
  Fts3AuxCursor *c = shale_value_pointer(v, "fts3cursor");
  if (!c) {
    char *m = util_mprintf("illegal first argument to %s", fn);
    shale_result_error(ctx, m ? m : "out of memory", -1);
    shale_free(m);
  }
  return c;
}

static void result_rc(shale_context *ctx, int rc) {
  if (rc == SHALE_NOMEM)
    shale_result_error_nomem(ctx);
  else
    shale_result_error_code(ctx, rc);
}

/* ---- text output ---- */

typedef struct Str {
  char *z;
  int n, cap;
  int used; /* something was appended, if only "" (SQLite's buffer exists) */
} Str;

static int str_add(Str *s, const char *z, int n) {
  if (n < 0) n = (int)strlen(z);
  s->used = 1;
  if (s->n + n + 1 > s->cap) {
    int cap = (s->n + n + 1) * 2 + 32;
    char *p = shale_realloc(s->z, (size_t)cap);
    if (!p) return SHALE_NOMEM;
    s->z = p;
    s->cap = cap;
  }
  if (n) memcpy(s->z + s->n, z, (size_t)n);
  s->n += n;
  s->z[s->n] = 0;
  return SHALE_OK;
}

/* A column's tokens: byte range and position. */
typedef struct Tok {
  int start, end, pos;
} Tok;
typedef struct Toks {
  Tok *a;
  int n, cap;
} Toks;

static int tok_cb(void *ctx, const char *tok, int ntok, int start, int end, int pos) {
  Toks *t = ctx;
  (void)tok;
  (void)ntok;
  if (t->n >= t->cap) {
    int cap = t->cap ? t->cap * 2 : 32;
    Tok *a = shale_realloc(t->a, sizeof(Tok) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    t->a = a;
    t->cap = cap;
  }
  t->a[t->n++] = (Tok){start, end, pos};
  return SHALE_OK;
}

static void toks_free(Toks *t) {
  shale_free(t->a);
  memset(t, 0, sizeof *t);
}

static int tokenize(Fts3Table *t, const char *z, int n, Toks *out) {
  out->n = 0;
  return fts3_tokenize(&t->tok, z, n, out, tok_cb);
}

/* ---- offsets() ---- */

typedef struct TermIt {
  int *pos; /* the phrase's offsets in the column */
  int n, i; /* i: the next one */
  int back; /* tokens after this one in its phrase */
} TermIt;

static int offsets_column(Fts3AuxCursor *c, int col, Str *res, Toks *tk, int *buf) {
  Fts3Aux *a = c->aux;
  const char *z;
  int nz;
  int rc = fts3_cursor_text(c, col, &z, &nz);
  if (rc || !z) return rc;
  TermIt *it = shale_malloc(sizeof(TermIt) * (size_t)(a->ntok ? a->ntok : 1));
  if (!it) return SHALE_NOMEM;
  int k = 0, used = 0;
  for (int i = 0; i < a->nphrase; i++) {
    const Fts3Node *nd = &a->nodes[a->phrase[i]];
    int n = column_offsets(row_positions(a, a->phrase[i]), col, buf + used);
    for (int j = 0; j < nd->nterm; j++) it[k++] = (TermIt){buf + used, n, 0, nd->nterm - j - 1};
    used += n;
  }
  rc = tokenize(c->t, z, nz, tk);
  int at = 0;
  while (rc == SHALE_OK) {
    int best = -1, min = 0x7fffffff;
    for (int i = 0; i < k; i++)
      if (it[i].i < it[i].n && it[i].pos[it[i].i] - it[i].back < min) {
        min = it[i].pos[it[i].i] - it[i].back;
        best = i;
      }
    if (best < 0) break;
    it[best].i++;
    while (at < tk->n && tk->a[at].pos < min) at++;
    if (at >= tk->n) {
      rc = SHALE_CORRUPT_VTAB;
      break;
    }
    char num[64];
    snprintf(num, sizeof num, "%d %d %d %d ", col, best, tk->a[at].start,
             tk->a[at].end - tk->a[at].start);
    rc = str_add(res, num, -1);
  }
  shale_free(it);
  return rc;
}

static int max_positions(const Fts3Aux *a) {
  int n = 0;
  for (int i = 0; i < a->nphrase; i++) {
    const PosList *l = row_positions(a, a->phrase[i]);
    n += l ? l->n : 0;
  }
  return n;
}

static void fn_offsets(shale_context *ctx, int argc, shale_value **argv) {
  Fts3AuxCursor *c = argc >= 1 ? cursor_arg(ctx, argv[0], "offsets") : NULL;
  if (!c) return;
  if (!c->expr) {
    shale_result_text64(ctx, "", 0, SHALE_STATIC);
    return;
  }
  int rc = load_row(c);
  Str res = {0};
  Toks tk = {0};
  int *buf = rc ? NULL : shale_malloc(sizeof(int) * (size_t)(max_positions(c->aux) + 1));
  if (!rc && !buf) rc = SHALE_NOMEM;
  for (int col = 0; rc == SHALE_OK && col < c->t->ncol; col++)
    rc = offsets_column(c, col, &res, &tk, buf);
  shale_free(buf);
  toks_free(&tk);
  if (rc) {
    result_rc(ctx, rc);
  } else if (!res.n) {
    shale_result_null(ctx);
  } else {
    shale_result_text64(ctx, res.z, res.n - 1, SHALE_TRANSIENT);
  }
  shale_free(res.z);
}

/* ---- snippet() ---- */

typedef struct Frag {
  int col, pos;
  uint64_t covered, hl; /* phrases in it; tokens to highlight */
} Frag;

typedef struct PhraseIt {
  int *pos;
  int n;
  int head, tail; /* indexes into pos; n when done */
  int nterm;
} PhraseIt;

static void it_advance(const PhraseIt *p, int *i, int next) {
  while (*i < p->n && p->pos[*i] < next) (*i)++;
}

/* The best fragment of nf tokens of column col (SQLite's candidate walk
 * and score: 1000 for a phrase not yet covered, 1 for one that is). */
static int best_in_column(Fts3AuxCursor *c, int nf, int col, uint64_t covered, uint64_t *seen,
                          Frag *out, int *score, int *buf) {
  Fts3Aux *a = c->aux;
  PhraseIt *it = shale_malloc(sizeof(PhraseIt) * (size_t)(a->nphrase ? a->nphrase : 1));
  if (!it) return SHALE_NOMEM;
  int used = 0;
  for (int i = 0; i < a->nphrase; i++) {
    int n = column_offsets(row_positions(a, a->phrase[i]), col, buf + used);
    it[i] = (PhraseIt){buf + used, n, 0, 0, a->nodes[a->phrase[i]].nterm};
    used += n;
    if (n) *seen |= (uint64_t)1 << (i % 64);
  }
  int best = -1;
  out->col = col;
  for (int first = 1;; first = 0) {
    int start = 0;
    if (first) {
      for (int i = 0; i < a->nphrase; i++) it_advance(&it[i], &it[i].head, nf);
    } else {
      int end = 0x7fffffff;
      for (int i = 0; i < a->nphrase; i++)
        if (it[i].head < it[i].n && it[i].pos[it[i].head] < end) end = it[i].pos[it[i].head];
      if (end == 0x7fffffff) break;
      start = end - nf + 1;
      for (int i = 0; i < a->nphrase; i++) {
        it_advance(&it[i], &it[i].head, end + 1);
        it_advance(&it[i], &it[i].tail, start);
      }
    }
    int s = 0;
    uint64_t cover = 0, hl = 0;
    for (int i = 0; i < a->nphrase; i++) {
      for (int k = it[i].tail; k < it[i].n; k++) {
        int p = it[i].pos[k];
        if (p >= start + nf || p < start) break;
        uint64_t bit = (uint64_t)1 << (i % 64), at = (uint64_t)1 << (p - start);
        s += ((cover | covered) & bit) ? 1 : 1000;
        cover |= bit;
        for (int j = 0; j < it[i].nterm && j < nf; j++) hl |= at >> j;
      }
    }
    if (s > best) {
      out->pos = start;
      out->hl = hl;
      out->covered = cover;
      best = s;
    }
  }
  *score = best;
  shale_free(it);
  return SHALE_OK;
}

typedef struct SnipArgs {
  const char *open, *close, *ellipsis;
} SnipArgs;

/* Move a fragment right to centre its highlighted tokens, as far as the
 * column has tokens (SQLite's fts3SnippetShift); left = tokens from the
 * fragment's first on. */
static void shift_fragment(int nf, int left, int *pos, uint64_t *hl) {
  if (!*hl) return;
  int nl = 0, nr = 0;
  while (!(*hl & ((uint64_t)1 << nl))) nl++;
  while (!(*hl & ((uint64_t)1 << (nf - 1 - nr)))) nr++;
  int want = (nl - nr) / 2;
  if (want <= 0) return;
  int shift = left > nf + want ? want : left - nf;
  if (shift > 0) {
    *pos += shift;
    *hl >>= shift;
  }
}

static int fragment_text(Fts3AuxCursor *c, const Frag *f, int ifrag, int last, int nf,
                         const SnipArgs *sa, Str *out, Toks *tk) {
  const char *z;
  int nz;
  int rc = fts3_cursor_text(c, f->col, &z, &nz);
  if (rc || !z) return rc;
  rc = tokenize(c->t, z, nz, tk);
  int pos = f->pos, shifted = 0, iend = 0, k = 0;
  uint64_t hl = f->hl;
  for (; rc == SHALE_OK && k < tk->n; k++) {
    int cur = tk->a[k].pos, b = tk->a[k].start, e = tk->a[k].end;
    if (cur < pos) continue;
    if (!shifted) {
      shift_fragment(nf, tk->n - k, &pos, &hl);
      shifted = 1;
      if (pos > 0 || ifrag > 0)
        rc = str_add(out, sa->ellipsis, -1);
      else if (b)
        rc = str_add(out, z, b);
      if (rc || cur < pos) continue;
    }
    if (cur >= pos + nf) {
      if (last) rc = str_add(out, sa->ellipsis, -1);
      break;
    }
    int lit = (hl & ((uint64_t)1 << (cur - pos))) != 0;
    if (cur > pos) rc = str_add(out, z + iend, b - iend);
    if (rc == SHALE_OK && lit) rc = str_add(out, sa->open, -1);
    if (rc == SHALE_OK) rc = str_add(out, z + b, e - b);
    if (rc == SHALE_OK && lit) rc = str_add(out, sa->close, -1);
    iend = e;
  }
  if (rc == SHALE_OK && k >= tk->n) rc = str_add(out, z + iend, -1); /* the column's end */
  return rc;
}

static int snippet(Fts3AuxCursor *c, const SnipArgs *sa, int icol, int ntoken, Str *out) {
  int rc = load_row(c);
  if (rc) return rc;
  Fts3Aux *a = c->aux;
  if (ntoken < -64) ntoken = -64;
  if (ntoken > 64) ntoken = 64;
  int *buf = shale_malloc(sizeof(int) * (size_t)(max_positions(a) + 1));
  if (!buf) return SHALE_NOMEM;
  Frag frag[4];
  int nsnip, nf = 0;
  for (nsnip = 1; rc == SHALE_OK; nsnip++) {
    nf = ntoken >= 0 ? (ntoken + nsnip - 1) / nsnip : -ntoken;
    uint64_t covered = 0, seen = 0;
    for (int s = 0; rc == SHALE_OK && s < nsnip; s++) {
      int best = -1;
      memset(&frag[s], 0, sizeof frag[s]);
      for (int col = 0; rc == SHALE_OK && col < c->t->ncol; col++) {
        if (icol >= 0 && col != icol) continue;
        Frag f = {0, 0, 0, 0};
        int score;
        rc = best_in_column(c, nf, col, covered, &seen, &f, &score, buf);
        if (rc == SHALE_OK && score > best) {
          frag[s] = f;
          best = score;
        }
      }
      covered |= frag[s].covered;
    }
    if (seen == covered || nsnip == 4) break;
  }
  shale_free(buf);
  Toks tk = {0};
  for (int i = 0; rc == SHALE_OK && i < nsnip; i++)
    rc = fragment_text(c, &frag[i], i, i == nsnip - 1, nf, sa, out, &tk);
  toks_free(&tk);
  return rc;
}

static void fn_snippet(shale_context *ctx, int argc, shale_value **argv) {
  if (argc > 6) {
    shale_result_error(ctx, "wrong number of arguments to function snippet()", -1);
    return;
  }
  Fts3AuxCursor *c = argc >= 1 ? cursor_arg(ctx, argv[0], "snippet") : NULL;
  if (!c) return;
  SnipArgs sa = {"<b>", "</b>", "<b>...</b>"};
  int icol = -1, ntoken = 15;
  if (argc > 5) ntoken = shale_value_int(argv[5]);
  if (argc > 4) icol = shale_value_int(argv[4]);
  if (argc > 3) sa.ellipsis = (const char *)shale_value_text(argv[3]);
  if (argc > 2) sa.close = (const char *)shale_value_text(argv[2]);
  if (argc > 1) sa.open = (const char *)shale_value_text(argv[1]);
  if (!sa.open || !sa.close || !sa.ellipsis) {
    shale_result_error_nomem(ctx);
    return;
  }
  if (!ntoken) {
    shale_result_text64(ctx, "", 0, SHALE_STATIC);
    return;
  }
  if (!c->expr) {
    shale_result_text64(ctx, "", 0, SHALE_STATIC);
    return;
  }
  Str out = {0};
  int rc = snippet(c, &sa, icol, ntoken, &out);
  if (rc)
    result_rc(ctx, rc);
  else if (!out.used)
    shale_result_null(ctx);
  else
    shale_result_text64(ctx, out.z, out.n, SHALE_TRANSIENT);
  shale_free(out.z);
}

/* ---- matchinfo() ---- */

/* Whether format character ch is known for this table; its u32 count. */
static int mi_size(const Fts3Table *t, const Fts3Aux *a, char ch, int *n) {
  int nc = t->ncol, np = a ? a->nphrase : 0;
  switch (ch) {
    case 'p':
    case 'c':
      *n = 1;
      return 1;
    case 'n':
      *n = 1;
      return t->fts4;
    case 'a':
      *n = nc;
      return t->fts4;
    case 'l':
      *n = nc;
      return t->has_docsize;
    case 's':
      *n = nc;
      return 1;
    case 'x':
      *n = 3 * nc * np;
      return 1;
    case 'y':
      *n = nc * np;
      return 1;
    case 'b':
      *n = ((nc + 31) / 32) * np;
      return 1;
    default:
      return 0;
  }
}

/* A statement's single value: %_stat row 0 or the row's %_docsize. */
static int read_blob(Fts3Table *t, const char *fmt, int64_t id, int64_t *v, int nv, int *found) {
  char *sql = util_mprintf(fmt, t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(t->db, sql, -1, &st, NULL);
  shale_free(sql);
  if (rc) return rc;
  shale_bind_int64(st, 1, id);
  *found = 0;
  memset(v, 0, sizeof(int64_t) * (size_t)nv);
  if (shale_step(st) == SHALE_ROW && shale_column_type(st, 0) == SHALE_BLOB) {
    const uint8_t *p = shale_column_blob(st, 0), *end = p + shale_column_bytes(st, 0);
    *found = 1;
    for (int i = 0; i < nv; i++) {
      uint64_t x;
      int k = fts3_get_varint(p, end, &x);
      if (!k) {
        rc = SHALE_CORRUPT_VTAB;
        break;
      }
      p += k;
      v[i] = (int64_t)x;
    }
  }
  int rc2 = shale_finalize(st);
  return rc ? rc : rc2;
}

static int load_stat(Fts3AuxCursor *c) {
  Fts3Aux *a = c->aux;
  Fts3Table *t = c->t;
  if (a->have_stat) return SHALE_OK;
  if (!(a->stat = shale_malloc(sizeof(int64_t) * (size_t)(t->ncol + 1)))) return SHALE_NOMEM;
  int rc = SHALE_OK, found = 1;
  if (t->stat_loaded && t->stat) /* this transaction's totals, not written yet */
    memcpy(a->stat, t->stat, sizeof(int64_t) * (size_t)(t->ncol + 1));
  else
    rc = read_blob(t, "SELECT value FROM \"%s\".'%s_stat' WHERE id = ?1", 0, a->stat, t->ncol + 1,
                   &found);
  if (rc == SHALE_OK && (!found || a->stat[0] <= 0)) rc = SHALE_CORRUPT_VTAB;
  if (rc == SHALE_OK) a->have_stat = 1;
  return rc;
}

/* Whether the query's test passes on document docid for the NEAR group
 * under top, whose phrases' raw positions there are in l[] (trimmed on
 * return): as SQLite gathers a group's statistics, walking the group over
 * the table while the rest of the query stays where the current row left
 * it (pos[]: a node is at docid when it stands there). */
static int group_test(Fts3Aux *a, int top, int64_t docid, const int64_t *pos, PosList *l, char *at,
                      int *rc) {
  for (int x = 0; x < a->nnodes; x++) {
    int in = 0;
    for (int y = x; y >= 0 && !in; y = a->nodes[y].parent) in = y == top;
    at[x] = (char)(in || pos[x] == docid);
    if (!in && a->nodes[x].kind == FTS3_NODE_PHRASE) {
      l[x].n = 0;
      if (at[x] && *rc == SHALE_OK)
        *rc = raw_positions(&a->nodes[x], find_doc(&a->nodes[x], docid), &l[x]);
    }
  }
  char *at0 = a->at;
  PosList *cur0 = a->cur;
  a->at = at;
  a->cur = l;
  int hit = *rc == SHALE_OK && test_node(a, 0, rc);
  a->at = at0;
  a->cur = cur0;
  return hit;
}

/* Per phrase and column: matches and documents over the whole table (for
 * a phrase of a NEAR group, where the group_test passes). */
static int load_global(Fts3AuxCursor *c) {
  Fts3Aux *a = c->aux;
  int nc = c->t->ncol;
  if (a->gx) return SHALE_OK;
  uint32_t *gx = shale_malloc(sizeof(uint32_t) * (size_t)(2 * nc * a->nphrase + 1));
  if (!gx) return SHALE_NOMEM;
  memset(gx, 0, sizeof(uint32_t) * (size_t)(2 * nc * a->nphrase + 1));
  PosList *l = shale_malloc(sizeof(PosList) * (size_t)a->nnodes);
  int *seen = shale_malloc(sizeof(int) * (size_t)(nc + 1));
  int *g = shale_malloc(sizeof(int) * (size_t)a->nnodes * 2);
  char *at = shale_malloc((size_t)a->nnodes);
  int64_t *pos = shale_malloc(sizeof(int64_t) * (size_t)a->nnodes);
  int rc = l && seen && g && at && pos ? SHALE_OK : SHALE_NOMEM;
  if (rc == SHALE_OK) positions(a, c->desc, pos);
  if (l) memset(l, 0, sizeof(PosList) * (size_t)a->nnodes);
  for (int i = 0; rc == SHALE_OK && i < a->nphrase; i++) {
    int n = a->phrase[i], top = -1;
    for (int p = a->nodes[n].parent; p >= 0 && a->nodes[p].kind == FTS3_NODE_NEAR;
         p = a->nodes[p].parent)
      top = p;
    const Fts3Node *nd = &a->nodes[n];
    uint32_t *o = gx + 2 * nc * i;
    int ng = top >= 0 ? near_group(a, top, g, g + a->nnodes) : 0;
    for (int d = 0; rc == SHALE_OK && d < nd->hits.n; d++) {
      rc = raw_positions(nd, d, &l[n]);
      if (rc == SHALE_OK && top >= 0) {
        int all = 1;
        for (int k = 0; rc == SHALE_OK && k < ng && all; k++) {
          if (g[k] == n) continue;
          int dd = find_doc(&a->nodes[g[k]], nd->hits.docid[d]);
          all = dd >= 0;
          rc = raw_positions(&a->nodes[g[k]], dd, &l[g[k]]);
        }
        if (rc || !all || !group_test(a, top, nd->hits.docid[d], pos, l, at, &rc)) continue;
      }
      memset(seen, 0, sizeof(int) * (size_t)(nc + 1));
      for (int k = 0; k < l[n].n; k++) {
        int col = (int)(l[n].p[k] >> 32);
        if (col >= nc) continue;
        o[2 * col]++;
        if (!seen[col]++) o[2 * col + 1]++;
      }
    }
  }
  for (int i = 0; l && i < a->nnodes; i++) pl_free(&l[i]);
  shale_free(l);
  shale_free(seen);
  shale_free(g);
  shale_free(at);
  shale_free(pos);
  if (rc) {
    shale_free(gx);
    return rc;
  }
  a->gx = gx;
  return SHALE_OK;
}

/* SQLite's longest run of query phrases found one after another in
 * column col (fts3MatchinfoLcs): each phrase's positions shifted back by
 * the tokens up to its end in the query, walked in step, the smallest
 * first; buf holds 3 ints per phrase, offs the offsets. */
static int lcs(const Fts3Aux *a, int col, int *buf, int *offs) {
  int np = a->nphrase, live = 0, best = 0, used = 0, tokens = 0;
  int *end = buf, *at = buf + np, *base = buf + 2 * np;
  for (int i = 0; i < np; i++) {
    tokens += a->nodes[a->phrase[i]].nterm;
    base[i] = -tokens;
    at[i] = used;
    used += column_offsets(row_positions(a, a->phrase[i]), col, offs + used);
    end[i] = used;
    live += at[i] < end[i];
  }
  while (live > 0) {
    int adv = -1, run = 0;
    for (int i = 0; i < np; i++) {
      if (at[i] >= end[i]) {
        run = 0;
        continue;
      }
      int v = offs[at[i]] + base[i];
      if (adv < 0 || v < offs[at[adv]] + base[adv]) adv = i;
      if (run == 0 || v == offs[at[i - 1]] + base[i - 1])
        run++;
      else
        run = 1;
      if (run > best) best = run;
    }
    if (++at[adv] >= end[adv]) live--;
  }
  return best;
}

static int matchinfo(Fts3AuxCursor *c, const char *fmt, uint32_t **out, int *nout) {
  Fts3Table *t = c->t;
  int rc = load_row(c);
  if (rc) return rc;
  Fts3Aux *a = c->aux;
  int total = 0, nc = t->ncol;
  for (const char *f = fmt; *f; f++) {
    int n = 0;
    mi_size(t, a, *f, &n);
    total += n;
  }
  uint32_t *v = shale_malloc(sizeof(uint32_t) * (size_t)(total + 1));
  int *buf = shale_malloc(sizeof(int) * (size_t)(max_positions(a) + 3 * a->nphrase + 2));
  if (!v || !buf) {
    shale_free(v);
    shale_free(buf);
    return SHALE_NOMEM;
  }
  memset(v, 0, sizeof(uint32_t) * (size_t)(total + 1));
  int k = 0;
  for (const char *f = fmt; rc == SHALE_OK && *f; f++) {
    switch (*f) {
      case 'p':
        v[k++] = (uint32_t)a->nphrase;
        break;
      case 'c':
        v[k++] = (uint32_t)nc;
        break;
      case 'n':
        rc = load_stat(c);
        if (rc == SHALE_OK) v[k++] = (uint32_t)a->stat[0];
        break;
      case 'a':
        rc = load_stat(c);
        for (int i = 0; rc == SHALE_OK && i < nc; i++) {
          int64_t nd = a->stat[0];
          v[k++] = (uint32_t)(((uint32_t)(a->stat[1 + i] & 0xffffffff) + (uint64_t)(nd / 2)) /
                              (uint64_t)nd);
        }
        break;
      case 'l': {
        int64_t *sz = shale_malloc(sizeof(int64_t) * (size_t)nc);
        int found = 0;
        rc = sz ? read_blob(t, "SELECT size FROM \"%s\".'%s_docsize' WHERE docid = ?1", c->docid,
                            sz, nc, &found)
                : SHALE_NOMEM;
        if (rc == SHALE_OK && !found) rc = SHALE_CORRUPT_VTAB;
        for (int i = 0; rc == SHALE_OK && i < nc; i++) v[k++] = (uint32_t)sz[i];
        shale_free(sz);
        break;
      }
      case 's':
        for (int i = 0; i < nc; i++) v[k++] = (uint32_t)lcs(a, i, buf + max_positions(a) + 1, buf);
        break;
      case 'x':
        rc = load_global(c);
        for (int i = 0; rc == SHALE_OK && i < a->nphrase; i++)
          for (int col = 0; col < nc; col++) {
            v[k++] = (uint32_t)column_count(row_positions(a, a->phrase[i]), col);
            v[k++] = a->gx[2 * (nc * i + col)];
            v[k++] = a->gx[2 * (nc * i + col) + 1];
          }
        break;
      case 'y':
      case 'b': {
        /* SQLite walks every phrase at the row, a right operand of NOT
         * (numbered 0) too; y assigns the count of column 0 and of each
         * column the phrase is in, b sets a bit (in word (col + 1) / 32, as
         * SQLite) */
        int words = *f == 'y' ? nc : (nc + 31) / 32;
        for (int n = 0; n < a->nnodes; n++) {
          if (a->nodes[n].kind != FTS3_NODE_PHRASE || !a->at[n] || !a->cur[n].n) continue;
          uint32_t *w = v + k + words * (a->slot[n] < 0 ? 0 : a->slot[n]);
          for (int col = 0; col < nc; col++) {
            int hits = column_count(&a->cur[n], col), only = a->nodes[n].col;
            if ((!hits && (col || *f == 'b')) || (only >= 0 && only != col)) continue;
            if (*f == 'y')
              w[col] = (uint32_t)hits;
            else
              w[(col + 1) / 32] |= 1u << (col % 32);
          }
        }
        k += words * a->nphrase;
        break;
      }
    }
  }
  shale_free(buf);
  if (rc) {
    shale_free(v);
    return rc;
  }
  *out = v;
  *nout = k;
  return SHALE_OK;
}

static void fn_matchinfo(shale_context *ctx, int argc, shale_value **argv) {
  Fts3AuxCursor *c = argc >= 1 ? cursor_arg(ctx, argv[0], "matchinfo") : NULL;
  if (!c) return;
  const char *fmt = argc > 1 ? (const char *)shale_value_text(argv[1]) : NULL;
  if (!fmt) fmt = "pcx";
  for (const char *f = fmt; *f; f++) {
    int n;
    if (!mi_size(c->t, NULL, *f, &n)) {
      char *m = util_mprintf("unrecognized matchinfo request: %c", *f);
      shale_result_error(ctx, m ? m : "out of memory", -1);
      shale_free(m);
      return;
    }
  }
  if (!c->expr) {
    shale_result_blob64(ctx, "", 0, SHALE_STATIC);
    return;
  }
  uint32_t *v = NULL;
  int n = 0;
  int rc = matchinfo(c, fmt, &v, &n);
  if (rc) {
    result_rc(ctx, rc);
    return;
  }
  shale_result_blob64(ctx, v, (shale_uint64)n * sizeof(uint32_t), SHALE_TRANSIENT);
  shale_free(v);
}

/* ---- registration ---- */

int fts3_aux_find(int nargs, const char *name, shale_func_fn *fn, void **arg) {
  (void)nargs;
  *arg = NULL;
  if (!strcmp(name, "snippet"))
    *fn = fn_snippet;
  else if (!strcmp(name, "offsets"))
    *fn = fn_offsets;
  else if (!strcmp(name, "matchinfo"))
    *fn = fn_matchinfo;
  else
    return 0;
  return 1;
}

int fts3_aux_register(shale *db) {
  int rc = shale_overload_function(db, "snippet", -1);
  if (rc == SHALE_OK) rc = shale_overload_function(db, "offsets", 1);
  if (rc == SHALE_OK) rc = shale_overload_function(db, "matchinfo", 1);
  if (rc == SHALE_OK) rc = shale_overload_function(db, "matchinfo", 2);
  return rc;
}
