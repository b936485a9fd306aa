/*
 * parse.c -- parser core (tokens, errors, arena helpers) and expressions.
 *
 * Expressions are parsed by precedence climbing with SQLite's table, low to
 * high: OR < AND < NOT < (= == != <> IS IN LIKE GLOB MATCH REGEXP BETWEEN
 * ISNULL NOTNULL) < (< <= > >=) < (& | << >>) < (+ -) < (* / %) <
 * (|| -> ->>) < COLLATE < unary (- + ~). All binary levels are
 * left-associative; prefix operators take an operand of their own level.
 *
 * Invariants:
 *  1. Keywords act as keywords where the grammar gives them a meaning, and
 *     fall back to identifiers elsewhere (keywords.def ID flag), as SQLite's
 *     parser does. FILTER, OVER and WINDOW are keywords only when followed
 *     by what their clause needs (SQLite's tokenizer rule).
 *  2. Every SqlExpr records its span and its height; a tree higher than
 *     EXPR_MAX_DEPTH is an error, as in SQLite.
 */
#include <stdarg.h>
#include <string.h>

#include "parse_int.h"

/* ---- tokens ---- */

static void raw_token(Parser *p, SqlTok *t) {
  for (;;) {
    /* blanks, the common separator, skipped here (sql_token's CC_SPACE set);
     * comments are TK_SPACE tokens of sql_token */
    int pos = p->pos; /* a local: the byte loads cannot alias it */
    while (pos < p->end) {
      char c = p->sql[pos];
      if (c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\f') break;
      pos++;
    }
    p->pos = pos;
    if (p->pos >= p->end) {
      t->type = TK_EOF;
      t->start = p->end;
      t->len = 0;
      return;
    }
    int type;
    int n = sql_token(p->sql + p->pos, p->end - p->pos, &type);
    t->type = type;
    t->start = p->pos;
    t->len = n;
    p->pos += n;
    if (type != TK_SPACE) return;
  }
}

/* A raw token that SQLite's window-keyword look-ahead counts as an
 * identifier: names, strings, join keywords, WINDOW, OVER and every keyword
 * that falls back to an identifier (FILTER does not: it is an identifier
 * only by the tokenizer's own rule). */
static int idlike_raw(int t) {
  if (t == TK_ID || t == TK_STRING || t == TK_WINDOW || t == TK_OVER) return 1;
  if (t <= TK_FIRST_KEYWORD || t == TK_INDEXED || t == TK_FILTER) return 0;
  return sql_keyword_is_id(t);
}

/* Raise the error left pending by a variable term (see primary). */
int sql_parse_fire_pending(Parser *p) {
  int kind = p->pend_kind;
  p->pend_kind = 0;
  if (kind == 1)
    return sql_parse_error(p, "variable number must be between ?1 and ?%d", SQL_MAX_VARIABLE);
  return sql_parse_error(p, "near \"%.*s\": syntax error", p->pend_tok.len,
                         p->sql + p->pend_tok.start);
}

void sql_parse_advance(Parser *p) {
  if (p->pend_kind) {
    if (p->pend_next < 0)
      p->pend_next = -2; /* consuming the variable itself */
    else
      sql_parse_fire_pending(p); /* the token after it was accepted */
  }
  if (p->tok.type != TK_EOF) {
    p->prev_end = p->tok.start + p->tok.len;
    p->prev_type = p->tok.type;
  }
  if (p->nla > 0) {
    p->tok = p->la[0];
    p->la[0] = p->la[1];
    p->nla--;
  } else {
    raw_token(p, &p->tok);
  }
  if (p->pend_kind && p->pend_next == -2) p->pend_next = p->tok.start;
  /* SQLite's tokenizer rule for the window keywords: WINDOW is a keyword
   * only before "identifier AS", OVER only after ')' and before '(' or an
   * identifier, FILTER only after ')' and before '('. Elsewhere they are
   * plain identifiers. */
  int t = p->tok.type;
  if (t == TK_WINDOW) {
    if (!idlike_raw(sql_parse_peek(p, 1)->type) || sql_parse_peek(p, 2)->type != TK_AS)
      p->tok.type = TK_ID;
  } else if (t == TK_OVER) {
    int t1 = sql_parse_peek(p, 1)->type;
    if (p->prev_type != TK_RP || (t1 != TK_LP && !idlike_raw(t1))) p->tok.type = TK_ID;
  } else if (t == TK_FILTER) {
    if (p->prev_type != TK_RP || sql_parse_peek(p, 1)->type != TK_LP) p->tok.type = TK_ID;
  }
}

const SqlTok *sql_parse_peek(Parser *p, int k) {
  if (k < 1) k = 1;
  if (k > 2) k = 2;
  while (p->nla < k) {
    raw_token(p, &p->la[p->nla]);
    p->nla++;
  }
  return &p->la[k - 1];
}

int sql_parse_accept(Parser *p, int type) {
  if (p->tok.type == type) {
    sql_parse_advance(p);
    return 1;
  }
  return 0;
}

int sql_parse_error(Parser *p, const char *fmt, ...) {
  if (p->rc) return 0;
  va_list ap;
  va_start(ap, fmt);
  p->errmsg = util_vmprintf(fmt, ap);
  va_end(ap);
  p->rc = p->errmsg ? SHALE_ERROR : SHALE_NOMEM;
  return 0;
}

int sql_parse_nomem(Parser *p) {
  if (!p->rc) p->rc = SHALE_NOMEM;
  return 0;
}

int sql_parse_syntax_error(Parser *p) {
  if (p->rc) return 0;
  const SqlTok *t = &p->tok;
  if (t->type == TK_ILLEGAL)
    return sql_parse_error(p, "unrecognized token: \"%.*s\"", t->len, p->sql + t->start);
  if (t->type == TK_EOF) return sql_parse_error(p, "incomplete input");
  return sql_parse_error(p, "near \"%.*s\": syntax error", t->len, p->sql + t->start);
}

int sql_parse_expect(Parser *p, int type) {
  if (p->rc) return 0;
  if (p->tok.type == type) {
    sql_parse_advance(p);
    return 1;
  }
  return sql_parse_syntax_error(p);
}

int sql_parse_nest(Parser *p, int w) {
  p->nest += w;
  if (p->nest > NEST_LIMIT) return sql_parse_error(p, "parser stack overflow");
  return 1;
}

/* ---- token classes ---- */

int sql_token_is_join(int t) {
  return t == TK_CROSS || t == TK_FULL || t == TK_INNER || t == TK_LEFT || t == TK_NATURAL ||
         t == TK_OUTER || t == TK_RIGHT;
}

int sql_token_is_id(int t) {
  if (t == TK_ID) return 1;
  if (t <= TK_FIRST_KEYWORD || sql_token_is_join(t) || t == TK_INDEXED) return 0;
  /* still typed WINDOW/OVER/FILTER here means keyword by context (sql_parse_advance) */
  if (t == TK_WINDOW || t == TK_OVER || t == TK_FILTER) return 0;
  return sql_keyword_is_id(t);
}

int sql_token_is_nm(int t) {
  return sql_token_is_id(t) || t == TK_STRING || sql_token_is_join(t) || t == TK_INDEXED;
}
int sql_token_is_ids(int t) { return sql_token_is_id(t) || t == TK_STRING; }

/* ---- arena helpers ---- */

void *sql_parse_alloc(Parser *p, size_t n) {
  void *m = util_arena_zalloc(p->arena, n);
  if (!m) sql_parse_nomem(p);
  return m;
}

const char *sql_parse_text(Parser *p, int start, int len) {
  char *s = util_arena_strndup(p->arena, p->sql + start, (size_t)len);
  if (!s) sql_parse_nomem(p);
  return s;
}

/* Dequoted copy of an identifier or string token: 'a''b' -> a'b, "x""y" ->
 * x"y, [z] -> z, `w` -> w. */
const char *sql_parse_name(Parser *p, const SqlTok *t) {
  const char *z = p->sql + t->start;
  int n = t->len;
  char q = z[0];
  if (n < 2 || (q != '\'' && q != '"' && q != '`' && q != '['))
    return sql_parse_text(p, t->start, n);
  char close = q == '[' ? ']' : q;
  char *s = util_arena_alloc(p->arena, (size_t)n);
  if (!s) {
    sql_parse_nomem(p);
    return NULL;
  }
  int j = 0;
  for (int i = 1; i < n - 1; i++) {
    s[j++] = z[i];
    if (z[i] == close && close != ']' && i + 1 < n - 1 && z[i + 1] == close) i++;
  }
  s[j] = 0;
  return s;
}

SqlExpr *sql_parse_expr_new(Parser *p, int op, int start) {
  SqlExpr *e = sql_parse_alloc(p, sizeof *e);
  if (!e) return NULL;
  e->op = (uint8_t)op;
  e->span.start = start;
  e->height = 1;
  return e;
}

void sql_parse_expr_end(Parser *p, SqlExpr *e) {
  if (e) e->span.len = p->prev_end - e->span.start;
}

SqlExprList *sql_parse_list_add(Parser *p, SqlExprList *l, SqlExpr *e) {
  if (p->rc) return NULL;
  if (!l) {
    l = sql_parse_alloc(p, sizeof *l);
    if (!l) return NULL;
  }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    SqlExprItem *a = sql_parse_alloc(p, sizeof(SqlExprItem) * (size_t)cap);
    if (!a) return NULL;
    if (l->n) memcpy(a, l->a, sizeof(SqlExprItem) * (size_t)l->n);
    l->a = a;
    l->cap = cap;
  }
  SqlExprItem *it = &l->a[l->n++];
  it->expr = e;
  if (e) it->span = e->span;
  return l;
}

SqlIdList *sql_parse_idlist_add(Parser *p, SqlIdList *l, const char *name) {
  if (p->rc) return NULL;
  if (!l) {
    l = sql_parse_alloc(p, sizeof *l);
    if (!l) return NULL;
  }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    const char **a = sql_parse_alloc(p, sizeof(char *) * (size_t)cap);
    if (!a) return NULL;
    if (l->n) memcpy(a, l->a, sizeof(char *) * (size_t)l->n);
    l->a = a;
    l->cap = cap;
  }
  l->a[l->n++] = name;
  return l;
}

/* ---- shared small productions ---- */

const char *sql_parse_nm(Parser *p) {
  if (p->rc) return NULL;
  if (!sql_token_is_nm(p->tok.type)) {
    sql_parse_syntax_error(p);
    return NULL;
  }
  const char *s = sql_parse_name(p, &p->tok);
  sql_parse_advance(p);
  return s;
}

int sql_parse_qualname(Parser *p, SqlQualName *q) {
  q->span.start = p->tok.start;
  q->name_start = p->tok.start;
  const char *a = sql_parse_nm(p);
  if (!a) return 0;
  if (sql_parse_accept(p, TK_DOT)) {
    q->schema = a;
    q->name_start = p->tok.start;
    q->name = sql_parse_nm(p);
    if (!q->name) return 0;
  } else {
    q->name = a;
  }
  q->span.len = p->prev_end - q->span.start;
  return 1;
}

SqlIdList *sql_parse_idlist_paren(Parser *p) {
  SqlIdList *l = NULL;
  if (!sql_parse_expect(p, TK_LP)) return NULL;
  do {
    const char *n = sql_parse_nm(p);
    if (!n) return NULL;
    l = sql_parse_idlist_add(p, l, n);
  } while (sql_parse_accept(p, TK_COMMA));
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  return l;
}

/* ( nm [COLLATE x] [ASC|DESC], ... ) -- SQLite's "eidlist" (view and CTE
 * column lists, foreign key columns): COLLATE and ASC/DESC parse but are an
 * error ("syntax error after column name"). */
SqlIdList *sql_parse_eidlist_paren(Parser *p) {
  SqlIdList *l = NULL;
  if (!sql_parse_expect(p, TK_LP)) return NULL;
  do {
    SqlTok nt = p->tok;
    const char *n = sql_parse_nm(p);
    if (!n) return NULL;
    int extra = 0;
    if (sql_parse_accept(p, TK_COLLATE)) {
      if (!sql_token_is_ids(p->tok.type)) return sql_parse_syntax_error(p), NULL;
      sql_parse_advance(p);
      extra = 1;
    }
    if (sql_parse_accept(p, TK_ASC) || sql_parse_accept(p, TK_DESC)) extra = 1;
    if (extra) {
      if (p->tok.type != TK_COMMA && p->tok.type != TK_RP) return sql_parse_syntax_error(p), NULL;
      return sql_parse_error(p, "syntax error after column name \"%.*s\"", nt.len,
                             p->sql + nt.start),
             NULL;
    }
    l = sql_parse_idlist_add(p, l, n);
  } while (sql_parse_accept(p, TK_COMMA));
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  return l;
}

int sql_parse_starts_select(Parser *p) {
  int t = p->tok.type;
  return t == TK_SELECT || t == TK_VALUES || t == TK_WITH;
}

int sql_parse_conflict(Parser *p) {
  int r;
  switch (p->tok.type) {
    case TK_ROLLBACK:
      r = SQL_OE_ROLLBACK;
      break;
    case TK_ABORT:
      r = SQL_OE_ABORT;
      break;
    case TK_FAIL:
      r = SQL_OE_FAIL;
      break;
    case TK_IGNORE:
      r = SQL_OE_IGNORE;
      break;
    case TK_REPLACE:
      r = SQL_OE_REPLACE;
      break;
    default:
      sql_parse_syntax_error(p);
      return 0;
  }
  sql_parse_advance(p);
  return r;
}

/* ---- expressions ---- */

/* precedence levels */
enum {
  PREC_NONE = 0,
  PREC_OR = 1,
  PREC_AND,
  PREC_NOT,
  PREC_EQ,
  PREC_CMP,
  PREC_ESCAPE,
  PREC_BIT,
  PREC_ADD,
  PREC_MUL,
  PREC_CONCAT,
  PREC_COLLATE,
  PREC_UNARY
};

/* Set e's height from its children and check SQLite's depth limit. */
static void set_height(Parser *p, SqlExpr *e) {
  if (!e) return;
  int h = 0;
  if (e->a && e->a->height > h) h = e->a->height;
  if (e->b && e->b->height > h) h = e->b->height;
  if (e->c && e->c->height > h) h = e->c->height;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if (e->list->a[i].expr && e->list->a[i].expr->height > h) h = e->list->a[i].expr->height;
  int max = p->max_depth > 0 ? p->max_depth : EXPR_MAX_DEPTH;
  if (h + 1 > max) {
    sql_parse_error(p, "Expression tree is too large (maximum depth %d)", max);
    e->height = (uint16_t)max;
    return;
  }
  e->height = (uint16_t)(h + 1);
}

static SqlExpr *binary(Parser *p, int op, int sub, SqlExpr *a, SqlExpr *b) {
  if (p->rc) return NULL;
  SqlExpr *e = sql_parse_expr_new(p, op, a->span.start);
  if (!e) return NULL;
  e->sub = (uint16_t)sub;
  e->a = a;
  e->b = b;
  sql_parse_expr_end(p, e);
  set_height(p, e);
  return e;
}

SqlExprList *sql_parse_exprlist(Parser *p, int allow_empty) {
  SqlExprList *l = NULL;
  if (allow_empty && p->tok.type == TK_RP) {
    l = sql_parse_alloc(p, sizeof *l);
    return l;
  }
  do {
    SqlExpr *e = sql_parse_expr(p);
    if (!e) return NULL;
    l = sql_parse_list_add(p, l, e);
    if (!l) return NULL;
  } while (sql_parse_accept(p, TK_COMMA));
  return l;
}

SqlExprList *sql_parse_sortlist(Parser *p) {
  SqlExprList *l = NULL;
  do {
    SqlExpr *e = sql_parse_expr(p);
    if (!e) return NULL;
    l = sql_parse_list_add(p, l, e);
    if (!l) return NULL;
    SqlExprItem *it = &l->a[l->n - 1];
    if (sql_parse_accept(p, TK_ASC))
      it->sort = SQL_SORT_ASC;
    else if (sql_parse_accept(p, TK_DESC))
      it->sort = SQL_SORT_DESC;
    if (p->tok.type == TK_NULLS) {
      sql_parse_advance(p);
      if (sql_parse_accept(p, TK_FIRST))
        it->nulls = SQL_NULLS_FIRST;
      else if (sql_parse_accept(p, TK_LAST))
        it->nulls = SQL_NULLS_LAST;
      else
        return sql_parse_syntax_error(p), NULL;
    }
  } while (sql_parse_accept(p, TK_COMMA));
  return l;
}

/* CAST type: a sequence of ids, optionally (n) or (n, m); returns its text. */
static const char *type_name(Parser *p) {
  int start = p->tok.start;
  if (!sql_token_is_ids(p->tok.type))
    return sql_parse_text(p, start, 0); /* the type may be empty */
  while (sql_token_is_ids(p->tok.type)) sql_parse_advance(p);
  if (sql_parse_accept(p, TK_LP)) {
    for (int k = 0; k < 2; k++) {
      if (p->tok.type == TK_PLUS || p->tok.type == TK_MINUS) sql_parse_advance(p);
      if (p->tok.type != TK_INTEGER && p->tok.type != TK_FLOAT)
        return sql_parse_syntax_error(p), NULL;
      sql_parse_advance(p);
      if (k == 0 && !sql_parse_accept(p, TK_COMMA)) break;
    }
    if (!sql_parse_expect(p, TK_RP)) return NULL;
  }
  return sql_parse_text(p, start, p->prev_end - start);
}

/* OVER name | OVER ( window ) -- at OVER */
static SqlWindow *over_clause(Parser *p) {
  sql_parse_advance(p); /* OVER */
  if (p->tok.type == TK_LP) return sql_parse_window_spec(p, NULL);
  SqlWindow *w = sql_parse_alloc(p, sizeof *w);
  if (!w) return NULL;
  w->span.start = p->tok.start;
  w->name = sql_parse_nm(p);
  w->span.len = p->prev_end - w->span.start;
  return w->name ? w : NULL;
}

/* frame bound; is_start selects the grammar for the first bound */
static int frame_bound(Parser *p, int is_start, uint8_t *type, SqlExpr **e) {
  if (p->tok.type == TK_UNBOUNDED) {
    sql_parse_advance(p);
    /* a frame starts UNBOUNDED PRECEDING and ends UNBOUNDED FOLLOWING */
    if (is_start && sql_parse_accept(p, TK_PRECEDING))
      *type = SQL_BOUND_UNBOUNDED_PRECEDING;
    else if (!is_start && sql_parse_accept(p, TK_FOLLOWING))
      *type = SQL_BOUND_UNBOUNDED_FOLLOWING;
    else
      return sql_parse_syntax_error(p);
    return 1;
  }
  if (p->tok.type == TK_CURRENT) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_ROW)) return 0;
    *type = SQL_BOUND_CURRENT_ROW;
    return 1;
  }
  *e = sql_parse_expr(p);
  if (!*e) return 0;
  if (sql_parse_accept(p, TK_PRECEDING))
    *type = SQL_BOUND_PRECEDING;
  else if (sql_parse_accept(p, TK_FOLLOWING))
    *type = SQL_BOUND_FOLLOWING;
  else
    return sql_parse_syntax_error(p);
  return 1;
}

/* ( [base] [PARTITION BY ...] [ORDER BY ...] [frame] ) -- at '(' */
SqlWindow *sql_parse_window_spec(Parser *p, const char *name) {
  SqlWindow *w = sql_parse_alloc(p, sizeof *w);
  if (!w) return NULL;
  w->name = name;
  w->span.start = p->tok.start;
  if (!sql_parse_expect(p, TK_LP)) return NULL;
  int t = p->tok.type;
  if (sql_token_is_nm(t) && t != TK_PARTITION && t != TK_ORDER && t != TK_RANGE && t != TK_ROWS &&
      t != TK_GROUPS) {
    w->base = sql_parse_nm(p);
    if (!w->base) return NULL;
  }
  if (p->tok.type == TK_PARTITION) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return NULL;
    w->partition = sql_parse_exprlist(p, 0);
    if (!w->partition) return NULL;
  }
  if (p->tok.type == TK_ORDER) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return NULL;
    w->order = sql_parse_sortlist(p);
    if (!w->order) return NULL;
  }
  t = p->tok.type;
  if (t == TK_RANGE || t == TK_ROWS || t == TK_GROUPS) {
    w->frame = t == TK_RANGE ? SQL_FRAME_RANGE : t == TK_ROWS ? SQL_FRAME_ROWS : SQL_FRAME_GROUPS;
    sql_parse_advance(p);
    if (sql_parse_accept(p, TK_BETWEEN)) {
      if (!frame_bound(p, 1, &w->start, &w->start_expr)) return NULL;
      if (!sql_parse_expect(p, TK_AND)) return NULL;
      if (!frame_bound(p, 0, &w->end, &w->end_expr)) return NULL;
    } else {
      if (!frame_bound(p, 1, &w->start, &w->start_expr)) return NULL;
      w->end = SQL_BOUND_CURRENT_ROW;
    }
    if (p->tok.type == TK_EXCLUDE) {
      sql_parse_advance(p);
      if (p->tok.type == TK_NO) {
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_OTHERS)) return NULL;
        w->exclude = SQL_EXCLUDE_NO_OTHERS;
      } else if (p->tok.type == TK_CURRENT) {
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_ROW)) return NULL;
        w->exclude = SQL_EXCLUDE_CURRENT_ROW;
      } else if (sql_parse_accept(p, TK_GROUP)) {
        w->exclude = SQL_EXCLUDE_GROUP;
      } else if (sql_parse_accept(p, TK_TIES)) {
        w->exclude = SQL_EXCLUDE_TIES;
      } else {
        return sql_parse_syntax_error(p), NULL;
      }
    }
    /* checked where SQLite reduces the frame: at the closing ')' */
    if (p->tok.type != TK_RP) return sql_parse_syntax_error(p), NULL;
    if ((w->start == SQL_BOUND_CURRENT_ROW && w->end == SQL_BOUND_PRECEDING) ||
        (w->start == SQL_BOUND_FOLLOWING &&
         (w->end == SQL_BOUND_PRECEDING || w->end == SQL_BOUND_CURRENT_ROW)))
      return sql_parse_error(p, "unsupported frame specification"), NULL;
  }
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  w->span.len = p->prev_end - w->span.start;
  return w;
}

/* name ( args ) [FILTER (WHERE e)] [OVER ...] -- at the name */
static SqlExpr *func_call(Parser *p) {
  SqlExpr *e = sql_parse_expr_new(p, SQL_E_FUNC, p->tok.start);
  if (!e || !sql_parse_nest(p, NEST_FUNC)) return NULL;
  e->z = sql_parse_name(p, &p->tok);
  sql_parse_advance(p); /* name */
  sql_parse_advance(p); /* ( */
  if (p->tok.type == TK_STAR) {
    sql_parse_advance(p);
    e->flags |= SQL_EF_STAR;
  } else if (p->tok.type != TK_RP) {
    if (p->tok.type == TK_DISTINCT) {
      sql_parse_advance(p);
      e->flags |= SQL_EF_DISTINCT;
    } else if (p->tok.type == TK_ALL) {
      sql_parse_advance(p);
    }
    e->list = sql_parse_exprlist(p, 1);
    if (!e->list) return NULL;
    if (p->tok.type == TK_ORDER) {
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_BY)) return NULL;
      e->order = sql_parse_sortlist(p);
      if (!e->order) return NULL;
    }
  }
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  if (p->tok.type == TK_FILTER) {
    sql_parse_advance(p);
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_WHERE)) return NULL;
    e->filter = sql_parse_expr(p);
    if (!e->filter || !sql_parse_expect(p, TK_RP)) return NULL;
  }
  if (p->tok.type == TK_OVER) {
    e->over = over_clause(p);
    if (!e->over) return NULL;
  }
  p->nest -= NEST_FUNC;
  sql_parse_expr_end(p, e);
  set_height(p, e);
  return e;
}

/* ( ... ) -- a subquery, a parenthesized expression or a row value */
static SqlExpr *paren(Parser *p) {
  int start = p->tok.start;
  if (!sql_parse_nest(p, NEST_PAREN)) return NULL;
  sql_parse_advance(p);
  SqlExpr *e;
  if (sql_parse_starts_select(p)) {
    e = sql_parse_expr_new(p, SQL_E_SUBQUERY, start);
    if (!e) return NULL;
    e->select = sql_parse_subselect(p);
    if (!e->select) return NULL;
  } else {
    SqlExprList *l = sql_parse_exprlist(p, 0);
    if (!l) return NULL;
    if (l->n == 1) {
      e = l->a[0].expr;
      e->flags |= SQL_EF_PAREN;
      if (!sql_parse_expect(p, TK_RP)) return NULL;
      p->nest -= NEST_PAREN;
      return e;
    }
    e = sql_parse_expr_new(p, SQL_E_ROW, start);
    if (!e) return NULL;
    e->list = l;
  }
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  p->nest -= NEST_PAREN;
  sql_parse_expr_end(p, e);
  set_height(p, e);
  return e;
}

/* The parameter number carrying a name, or 0 (a linear scan, as SQLite's). */
static int var_by_name(Parser *p, const char *z, int len) {
  for (int i = 0; i < p->nvnames; i++)
    if ((int)strlen(p->vnames[i].name) == len && !memcmp(p->vnames[i].name, z, (size_t)len))
      return p->vnames[i].num;
  return 0;
}

static int var_has_name(Parser *p, int x) {
  for (int i = 0; i < p->nvnames; i++)
    if (p->vnames[i].num == x) return 1;
  return 0;
}

static int var_add_name(Parser *p, int x, int start, int len) {
  if (p->nvnames == p->vcap) {
    int cap = p->vcap ? p->vcap * 2 : 8;
    struct SqlVarName *a = sql_parse_alloc(p, sizeof *a * (size_t)cap);
    if (!a) return 0;
    if (p->nvnames) memcpy(a, p->vnames, sizeof *a * (size_t)p->nvnames);
    p->vnames = a;
    p->vcap = cap;
  }
  p->vnames[p->nvnames].num = x;
  p->vnames[p->nvnames].name = sql_parse_text(p, start, len);
  if (!p->vnames[p->nvnames].name) return 0;
  p->nvnames++;
  return 1;
}

/* Number a parameter as SQLite does: "?" takes the next number; "?NNN" is
 * NNN (and gives NNN the name "?NNN" unless it has a name already); a named
 * one (:a @a $a #a) reuses the number of an earlier use of the same name,
 * else takes the next number. */
static int number_var(Parser *p, SqlExpr *e, int start, int len) {
  const char *z = p->sql + start;
  int x = 0, add = 0;
  if (len == 1) {
    x = ++p->nvar;
  } else if (z[0] == '?') {
    for (int i = 1; i < len; i++) x = x * 10 + (z[i] - '0'); /* range checked by the caller */
    if (x > p->nvar) {
      p->nvar = x;
      add = 1;
    } else {
      add = !var_has_name(p, x);
    }
  } else {
    x = var_by_name(p, z, len);
    if (!x) {
      x = ++p->nvar;
      add = 1;
    }
  }
  if (x > SQL_MAX_VARIABLE) return sql_parse_error(p, "too many SQL variables");
  if (add && !var_add_name(p, x, start, len)) return 0;
  e->ivar = x;
  return 1;
}

static SqlExpr *primary(Parser *p) {
  SqlExpr *e;
  int t = p->tok.type, start = p->tok.start;
  switch (t) {
    case TK_INTEGER:
    case TK_FLOAT:
    case TK_VARIABLE:
    case TK_BLOB:
    case TK_STRING:
      if (t == TK_STRING && sql_parse_peek(p, 1)->type == TK_DOT) break; /* 'tbl'.col */
      e = sql_parse_expr_new(p,
                             t == TK_INTEGER    ? SQL_E_INTEGER
                             : t == TK_FLOAT    ? SQL_E_FLOAT
                             : t == TK_VARIABLE ? SQL_E_VARIABLE
                             : t == TK_BLOB     ? SQL_E_BLOB
                                                : SQL_E_STRING,
                             start);
      if (!e) return NULL;
      if (t == TK_VARIABLE) {
        /* ?NNN out of range (SQLite's limit is SQLITE_MAX_VARIABLE_NUMBER,
         * 250000 in Debian's build) and #N (a register reference, only for
         * SQLite's nested parses) are errors that SQLite reports when the
         * term is reduced, i.e. once the next token is accepted: they are
         * left pending until then (sql_parse_advance, sql_parse). */
        const char *z = p->sql + start;
        if (z[0] == '?' && p->tok.len > 1) {
          long long v = 0;
          for (int i = 1; i < p->tok.len && v <= SQL_MAX_VARIABLE; i++) v = v * 10 + (z[i] - '0');
          if (v < 1 || v > SQL_MAX_VARIABLE) p->pend_kind = 1;
        } else if (z[0] == '#' && p->tok.len > 1 && z[1] >= '0' && z[1] <= '9') {
          p->pend_kind = 2;
        }
        if (p->pend_kind) {
          p->pend_tok.start = start;
          p->pend_tok.len = p->tok.len;
          p->pend_next = -1; /* set once the variable is consumed */
        } else if (!number_var(p, e, start, p->tok.len)) {
          return NULL;
        }
      }
      if (t == TK_BLOB)
        e->z = sql_parse_text(p, start + 2, p->tok.len - 3);
      else if (t == TK_STRING)
        e->z = sql_parse_name(p, &p->tok);
      else
        e->z = sql_parse_text(p, start, p->tok.len);
      sql_parse_advance(p);
      sql_parse_expr_end(p, e);
      return e;
    case TK_NULL:
      e = sql_parse_expr_new(p, SQL_E_NULL, start);
      sql_parse_advance(p);
      sql_parse_expr_end(p, e);
      return e;
    case TK_CURRENT_TIME:
    case TK_CURRENT_DATE:
    case TK_CURRENT_TIMESTAMP:
      e = sql_parse_expr_new(p, SQL_E_CTIME, start);
      if (!e) return NULL;
      e->sub = (uint16_t)t;
      sql_parse_advance(p);
      sql_parse_expr_end(p, e);
      return e;
    case TK_LP:
      return paren(p);
    case TK_CAST:
      e = sql_parse_expr_new(p, SQL_E_CAST, start);
      if (!e) return NULL;
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_LP) || !sql_parse_nest(p, NEST_CAST)) return NULL;
      e->a = sql_parse_expr(p);
      if (!e->a || !sql_parse_expect(p, TK_AS)) return NULL;
      e->z = type_name(p);
      if (!e->z || !sql_parse_expect(p, TK_RP)) return NULL;
      p->nest -= NEST_CAST;
      sql_parse_expr_end(p, e);
      set_height(p, e);
      return e;
    case TK_CASE:
      e = sql_parse_expr_new(p, SQL_E_CASE, start);
      if (!e || !sql_parse_nest(p, NEST_CASE)) return NULL;
      sql_parse_advance(p);
      if (p->tok.type != TK_WHEN) {
        e->a = sql_parse_expr(p);
        if (!e->a) return NULL;
      }
      if (p->tok.type != TK_WHEN) return sql_parse_syntax_error(p), NULL;
      while (sql_parse_accept(p, TK_WHEN)) {
        SqlExpr *w = sql_parse_expr(p);
        if (!w || !sql_parse_expect(p, TK_THEN)) return NULL;
        SqlExpr *th = sql_parse_expr(p);
        if (!th) return NULL;
        e->list = sql_parse_list_add(p, e->list, w);
        e->list = sql_parse_list_add(p, e->list, th);
        if (!e->list) return NULL;
      }
      if (sql_parse_accept(p, TK_ELSE)) {
        e->b = sql_parse_expr(p);
        if (!e->b) return NULL;
      }
      if (!sql_parse_expect(p, TK_END)) return NULL;
      p->nest -= NEST_CASE;
      sql_parse_expr_end(p, e);
      set_height(p, e);
      return e;
    case TK_EXISTS:
      e = sql_parse_expr_new(p, SQL_E_EXISTS, start);
      if (!e) return NULL;
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_LP)) return NULL;
      if (!sql_parse_nest(p, NEST_EXISTS)) return NULL;
      e->select = sql_parse_subselect(p);
      if (!e->select || !sql_parse_expect(p, TK_RP)) return NULL;
      p->nest -= NEST_EXISTS;
      sql_parse_expr_end(p, e);
      return e;
    case TK_RAISE:
      e = sql_parse_expr_new(p, SQL_E_RAISE, start);
      if (!e) return NULL;
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_LP)) return NULL;
      if (p->tok.type == TK_IGNORE) {
        sql_parse_advance(p);
        e->sub = TK_IGNORE;
      } else {
        int r = p->tok.type;
        if (r != TK_ROLLBACK && r != TK_ABORT && r != TK_FAIL)
          return sql_parse_syntax_error(p), NULL;
        e->sub = (uint16_t)r;
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_COMMA)) return NULL;
        e->z = sql_parse_nm(p);
        if (!e->z) return NULL;
      }
      if (!sql_parse_expect(p, TK_RP)) return NULL;
      sql_parse_expr_end(p, e);
      return e;
    default:
      break;
  }
  if (!sql_token_is_nm(t)) return sql_parse_syntax_error(p), NULL;
  const SqlTok *n1 = sql_parse_peek(p, 1);
  if (n1->type == TK_LP && (sql_token_is_id(t) || t == TK_INDEXED)) return func_call(p);
  e = sql_parse_expr_new(p, SQL_E_ID, start);
  if (!e) return NULL;
  if (p->sql[start] == '"') e->flags |= SQL_EF_QUOTED;
  e->z = sql_parse_name(p, &p->tok);
  sql_parse_advance(p);
  if (p->tok.type == TK_DOT) {
    sql_parse_advance(p);
    const char *second = sql_parse_nm(p);
    if (!second) return NULL;
    e->op = SQL_E_COLUMN;
    e->flags &= (uint8_t)~SQL_EF_QUOTED;
    e->table = e->z;
    e->z = second;
    if (p->tok.type == TK_DOT) {
      sql_parse_advance(p);
      const char *third = sql_parse_nm(p);
      if (!third) return NULL;
      e->schema = e->table;
      e->table = e->z;
      e->z = third;
    }
  } else if (t == TK_STRING) {
    e->op = SQL_E_STRING;
  }
  sql_parse_expr_end(p, e);
  return e;
}

static SqlExpr *unary(Parser *p) {
  int t = p->tok.type;
  if (t == TK_MINUS || t == TK_PLUS || t == TK_BITNOT || t == TK_NOT) {
    int start = p->tok.start;
    if (!sql_parse_nest(p, NEST_UNARY)) return NULL;
    sql_parse_advance(p);
    SqlExpr *a = sql_parse_expr_prec(p, t == TK_NOT ? PREC_NOT : PREC_UNARY);
    if (!a) return NULL;
    p->nest -= NEST_UNARY;
    SqlExpr *e = sql_parse_expr_new(p, SQL_E_UNARY, start);
    if (!e) return NULL;
    e->sub = (uint16_t)t;
    e->a = a;
    sql_parse_expr_end(p, e);
    set_height(p, e);
    return e;
  }
  return primary(p);
}

/* binary operator precedence of the current token, 0 if none */
static int binop_prec(Parser *p) {
  switch (p->tok.type) {
    case TK_OR:
      return PREC_OR;
    case TK_AND:
      return PREC_AND;
    case TK_EQ:
    case TK_NE:
    case TK_IS:
    case TK_IN:
    case TK_LIKE:
    case TK_GLOB:
    case TK_MATCH:
    case TK_REGEXP:
    case TK_BETWEEN:
    case TK_ISNULL:
    case TK_NOTNULL:
      return PREC_EQ;
    case TK_NOT: /* NOT IN, NOT LIKE, NOT BETWEEN, NOT NULL, ... */
      return PREC_EQ;
    case TK_LT:
    case TK_LE:
    case TK_GT:
    case TK_GE:
      return PREC_CMP;
    case TK_BITAND:
    case TK_BITOR:
    case TK_LSHIFT:
    case TK_RSHIFT:
      return PREC_BIT;
    case TK_PLUS:
    case TK_MINUS:
      return PREC_ADD;
    case TK_STAR:
    case TK_SLASH:
    case TK_REM:
      return PREC_MUL;
    case TK_CONCAT:
    case TK_PTR:
      return PREC_CONCAT;
    case TK_COLLATE:
      return PREC_COLLATE;
    default:
      return 0;
  }
}

/* right side of IN -- after IN */
static SqlExpr *in_rhs(Parser *p, SqlExpr *e) {
  if (p->tok.type == TK_LP) {
    if (!sql_parse_nest(p, NEST_IN)) return NULL;
    sql_parse_advance(p);
    if (sql_parse_starts_select(p)) {
      e->select = sql_parse_subselect(p);
      if (!e->select) return NULL;
    } else {
      e->list = sql_parse_exprlist(p, 1);
      if (!e->list) return NULL;
    }
    if (!sql_parse_expect(p, TK_RP)) return NULL;
    p->nest -= NEST_IN;
    return e;
  }
  /* IN table | IN schema.table | IN tvf(args) */
  const char *a = sql_parse_nm(p);
  if (!a) return NULL;
  e->table = a;
  if (sql_parse_accept(p, TK_DOT)) {
    e->schema = a;
    e->table = sql_parse_nm(p);
    if (!e->table) return NULL;
  }
  if (p->tok.type == TK_LP) {
    sql_parse_advance(p);
    e->list = sql_parse_exprlist(p, 1);
    if (!e->list || !sql_parse_expect(p, TK_RP)) return NULL;
    e->flags |= SQL_EF_TVF;
  }
  return e;
}

/* The middle operand of BETWEEN: as SQLite's grammar resolves it, a top-level
 * AND ends it, but an OR inside it takes ANDs into its right operand. */
static SqlExpr *between_mid(Parser *p) {
  SqlExpr *left = sql_parse_expr_prec(p, PREC_NOT);
  while (left && p->tok.type == TK_OR) {
    sql_parse_advance(p);
    SqlExpr *r = sql_parse_expr_prec(p, PREC_AND);
    if (!r) return NULL;
    left = binary(p, SQL_E_BINARY, TK_OR, left, r);
  }
  return left;
}

static SqlExpr *expr_prec(Parser *p, int min);

SqlExpr *sql_parse_expr_prec(Parser *p, int min) {
  if (p->rc) return NULL;
  if (++p->depth > EXPR_MAX_RECURSION) {
    p->depth--;
    return sql_parse_error(p, "parser stack overflow"), NULL;
  }
  SqlExpr *e = expr_prec(p, min);
  p->depth--;
  return e;
}

static SqlExpr *expr_prec(Parser *p, int min) {
  SqlExpr *left = unary(p);
  if (!left) return NULL;
  for (;;) {
    int prec = binop_prec(p);
    if (!prec || prec < min) return left;
    int t = p->tok.type;
    int start = left->span.start;
    SqlExpr *e;
    int negate = 0;
    if (t == TK_NOT) {
      negate = 1;
      sql_parse_advance(p);
      t = p->tok.type;
      if (t != TK_IN && t != TK_LIKE && t != TK_GLOB && t != TK_MATCH && t != TK_REGEXP &&
          t != TK_BETWEEN && t != TK_NULL)
        return sql_parse_syntax_error(p), NULL;
    }
    switch (t) {
      case TK_ISNULL:
      case TK_NOTNULL:
        sql_parse_advance(p);
        e = sql_parse_expr_new(p, t == TK_ISNULL ? SQL_E_ISNULL : SQL_E_NOTNULL, start);
        if (!e) return NULL;
        e->a = left;
        break;
      case TK_NULL: /* NOT NULL */
        sql_parse_advance(p);
        e = sql_parse_expr_new(p, SQL_E_NOTNULL, start);
        if (!e) return NULL;
        e->a = left;
        break;
      case TK_IS: {
        sql_parse_advance(p);
        int op = SQL_E_BINARY;
        if (sql_parse_accept(p, TK_NOT)) op = SQL_E_ISNOT;
        if (p->tok.type == TK_DISTINCT) {
          sql_parse_advance(p);
          if (!sql_parse_expect(p, TK_FROM)) return NULL;
          op = (op == SQL_E_ISNOT) ? SQL_E_BINARY : SQL_E_ISNOT;
        }
        SqlExpr *r = sql_parse_expr_prec(p, prec + 1);
        if (!r) return NULL;
        e = binary(p, op, TK_IS, left, r);
        if (!e) return NULL;
        left = e;
        continue;
      }
      case TK_IN:
        sql_parse_advance(p);
        e = sql_parse_expr_new(p, SQL_E_IN, start);
        if (!e) return NULL;
        e->a = left;
        if (!in_rhs(p, e)) return NULL;
        break;
      case TK_LIKE:
      case TK_GLOB:
      case TK_MATCH:
      case TK_REGEXP:
        sql_parse_advance(p);
        e = sql_parse_expr_new(p, SQL_E_LIKE, start);
        if (!e) return NULL;
        e->sub = (uint16_t)t;
        e->a = left;
        e->b = sql_parse_expr_prec(p, prec + 1);
        if (!e->b) return NULL;
        if (sql_parse_accept(p, TK_ESCAPE)) {
          e->c = sql_parse_expr_prec(p, PREC_CMP);
          if (!e->c) return NULL;
        }
        break;
      case TK_BETWEEN:
        sql_parse_advance(p);
        e = sql_parse_expr_new(p, SQL_E_BETWEEN, start);
        if (!e) return NULL;
        e->a = left;
        if (!sql_parse_nest(p, NEST_BETWEEN)) return NULL;
        e->b = between_mid(p);
        if (!e->b || !sql_parse_expect(p, TK_AND)) return NULL;
        p->nest -= NEST_BETWEEN;
        e->c = sql_parse_expr_prec(p, prec + 1);
        if (!e->c) return NULL;
        break;
      case TK_COLLATE:
        sql_parse_advance(p);
        if (!sql_token_is_ids(p->tok.type)) return sql_parse_syntax_error(p), NULL;
        e = sql_parse_expr_new(p, SQL_E_COLLATE, start);
        if (!e) return NULL;
        e->z = sql_parse_name(p, &p->tok);
        e->a = left;
        sql_parse_advance(p);
        break;
      default: {
        int oplen = p->tok.len;
        sql_parse_advance(p);
        SqlExpr *r = sql_parse_expr_prec(p, prec + 1);
        if (!r) return NULL;
        e = binary(p, SQL_E_BINARY, t, left, r);
        if (!e) return NULL;
        if (t == TK_PTR) e->z = oplen == 3 ? "->>" : "->";
        left = e;
        continue;
      }
    }
    if (negate) e->flags |= SQL_EF_NOT;
    sql_parse_expr_end(p, e);
    set_height(p, e);
    if (p->rc) return NULL;
    left = e;
  }
}

SqlExpr *sql_parse_expr(Parser *p) { return sql_parse_expr_prec(p, PREC_OR); }
