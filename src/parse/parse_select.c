/*
 * parse_select.c -- SELECT: WITH clauses, compound chains, result columns,
 * FROM (joins, subqueries, table-valued functions), GROUP BY, HAVING,
 * WINDOW, ORDER BY, LIMIT, and VALUES.
 *
 * Invariants:
 *  1. A compound is built as a chain through `prior`; ORDER BY or LIMIT on
 *     any core but the last is reported as SQLite does ("ORDER BY clause
 *     should come after UNION not before") once the chain is complete.
 *  2. Join operators are combined with SQLite's rules (keyword bit sets,
 *     "unknown join type: ..." for impossible combinations).
 */
#include <string.h>

#include "parse_int.h"

#define COMPOUND_MAX 500

SqlWith *sql_parse_with(Parser *p) {
  SqlWith *w = sql_parse_alloc(p, sizeof *w);
  if (!w) return NULL;
  sql_parse_advance(p); /* WITH */
  if (sql_parse_accept(p, TK_RECURSIVE)) w->recursive = 1;
  int cap = 0;
  do {
    if (w->n == cap) {
      cap = cap ? cap * 2 : 4;
      SqlCte *a = sql_parse_alloc(p, sizeof(SqlCte) * (size_t)cap);
      if (!a) return NULL;
      if (w->n) memcpy(a, w->a, sizeof(SqlCte) * (size_t)w->n);
      w->a = a;
    }
    SqlCte *c = &w->a[w->n++];
    c->span.start = p->tok.start;
    c->name = sql_parse_nm(p);
    if (!c->name) return NULL;
    if (p->tok.type == TK_LP) {
      c->columns = sql_parse_eidlist_paren(p);
      if (!c->columns) return NULL;
    }
    if (!sql_parse_expect(p, TK_AS)) return NULL;
    if (p->tok.type == TK_MATERIALIZED) {
      sql_parse_advance(p);
      c->materialized = 1;
    } else if (p->tok.type == TK_NOT) {
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_MATERIALIZED)) return NULL;
      c->materialized = 2;
    }
    if (!sql_parse_expect(p, TK_LP) || !sql_parse_nest(p, NEST_PAREN)) return NULL;
    c->select = sql_parse_subselect(p);
    if (!c->select || !sql_parse_expect(p, TK_RP)) return NULL;
    p->nest -= NEST_PAREN;
    c->span.len = p->prev_end - c->span.start;
  } while (sql_parse_accept(p, TK_COMMA));
  return w;
}

/* optional alias: AS nm | ids */
static const char *alias_opt(Parser *p, int *ok) {
  *ok = 1;
  if (sql_parse_accept(p, TK_AS)) {
    const char *a = sql_parse_nm(p);
    if (!a) *ok = 0;
    return a;
  }
  if (sql_token_is_ids(p->tok.type)) {
    const char *a = sql_parse_name(p, &p->tok);
    sql_parse_advance(p);
    if (!a) *ok = 0;
    return a;
  }
  return NULL;
}

SqlExprList *sql_parse_result_cols(Parser *p) {
  SqlExprList *l = NULL;
  do {
    int start = p->tok.start;
    SqlExpr *e;
    if (p->tok.type == TK_STAR) {
      e = sql_parse_expr_new(p, SQL_E_STAR, start);
      sql_parse_advance(p);
      sql_parse_expr_end(p, e);
      l = sql_parse_list_add(p, l, e);
      continue;
    }
    int t = p->tok.type;
    /* tbl.* -- but CAST, RAISE and CURRENT_* start expressions here */
    if (sql_token_is_nm(t) && t != TK_CAST && t != TK_RAISE && t != TK_CURRENT_TIME &&
        t != TK_CURRENT_DATE && t != TK_CURRENT_TIMESTAMP && sql_parse_peek(p, 1)->type == TK_DOT &&
        sql_parse_peek(p, 2)->type == TK_STAR) {
      e = sql_parse_expr_new(p, SQL_E_STAR, start);
      if (!e) return NULL;
      e->table = sql_parse_name(p, &p->tok);
      sql_parse_advance(p);
      sql_parse_advance(p);
      sql_parse_advance(p);
      sql_parse_expr_end(p, e);
      l = sql_parse_list_add(p, l, e);
      continue;
    }
    e = sql_parse_expr(p);
    if (!e) return NULL;
    l = sql_parse_list_add(p, l, e);
    if (!l) return NULL;
    /* as SQLite: the text up to the next token, comments included, less
     * trailing white space (a trailing comment is part of the name) */
    int stop = p->tok.start;
    while (stop > p->prev_end &&
           (p->sql[stop - 1] == ' ' || (p->sql[stop - 1] >= '\t' && p->sql[stop - 1] <= '\r')))
      stop--;
    l->a[l->n - 1].span.start = start;
    l->a[l->n - 1].span.len = stop - start;
    int ok;
    l->a[l->n - 1].name = alias_opt(p, &ok);
    if (!ok) return NULL;
  } while (l && sql_parse_accept(p, TK_COMMA));
  return l;
}

/* ---- FROM ---- */

static SqlSrcItem *src_add(Parser *p, SqlSrcList *l) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    SqlSrcItem *a = sql_parse_alloc(p, sizeof(SqlSrcItem) * (size_t)cap);
    if (!a) return NULL;
    if (l->n) memcpy(a, l->a, sizeof(SqlSrcItem) * (size_t)l->n);
    l->a = a;
    l->cap = cap;
  }
  SqlSrcItem *it = &l->a[l->n++];
  memset(it, 0, sizeof *it);
  return it;
}

/* keyword bits for a join word, 0 if not one */
static int join_bits(Parser *p, const SqlTok *t) {
  switch (t->type) {
    case TK_NATURAL:
      return SQL_JOIN_NATURAL;
    case TK_LEFT:
      return SQL_JOIN_LEFT | SQL_JOIN_OUTER;
    case TK_OUTER:
      return SQL_JOIN_OUTER;
    case TK_RIGHT:
      return SQL_JOIN_RIGHT | SQL_JOIN_OUTER;
    case TK_FULL:
      return SQL_JOIN_LEFT | SQL_JOIN_RIGHT | SQL_JOIN_OUTER;
    case TK_INNER:
      return SQL_JOIN_INNER;
    case TK_CROSS:
      return SQL_JOIN_INNER | SQL_JOIN_CROSS;
    default:
      return 0;
  }
}

/* join operator at a join keyword: JOIN_KW [nm [nm]] JOIN */
static int join_op(Parser *p) {
  SqlTok w[3];
  int nw = 0;
  w[nw++] = p->tok;
  sql_parse_advance(p);
  while (p->tok.type != TK_JOIN && nw < 3) {
    if (!sql_token_is_nm(p->tok.type)) return sql_parse_syntax_error(p), -1;
    w[nw++] = p->tok;
    sql_parse_advance(p);
  }
  if (!sql_parse_expect(p, TK_JOIN)) return -1;
  /* SQLite checks the combination once the operator is reduced, i.e. when
   * the next token is one that can follow it */
  if (!sql_token_is_nm(p->tok.type) && p->tok.type != TK_LP) return sql_parse_syntax_error(p), -1;
  int bits = 0, bad = 0;
  for (int i = 0; i < nw; i++) {
    int b = join_bits(p, &w[i]);
    if (!b) bad = 1;
    bits |= b;
  }
  if (bad || ((bits & SQL_JOIN_INNER) && (bits & SQL_JOIN_OUTER)) ||
      ((bits & SQL_JOIN_OUTER) && !(bits & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)))) {
    const char *z = p->sql;
    if (nw == 1)
      sql_parse_error(p, "unknown join type: %.*s", w[0].len, z + w[0].start);
    else if (nw == 2)
      sql_parse_error(p, "unknown join type: %.*s %.*s", w[0].len, z + w[0].start, w[1].len,
                      z + w[1].start);
    else
      sql_parse_error(p, "unknown join type: %.*s %.*s %.*s", w[0].len, z + w[0].start, w[1].len,
                      z + w[1].start, w[2].len, z + w[2].start);
    return -1;
  }
  return bits;
}

static SqlSrcList *seltablist(Parser *p, int nested);

/* Tokens that may follow a FROM item (where SQLite reduces it). */
static int src_follow(Parser *p, int t, int nested) {
  if (t == TK_COMMA || t == TK_JOIN || sql_token_is_join(t)) return 1;
  if (t == TK_RP) return nested || p->subq > 0;
  if (nested) return 0;
  if ((t == TK_SEMI || t == TK_EOF) && p->subq > 0) return 0;
  if (t == TK_ON) return p->insert_select && p->subq == 0; /* an upsert may follow */
  switch (t) {
    case TK_WHERE:
    case TK_GROUP:
    case TK_HAVING:
    case TK_WINDOW:
    case TK_ORDER:
    case TK_LIMIT:
    case TK_SEMI:
    case TK_EOF:
    case TK_UNION:
    case TK_INTERSECT:
    case TK_EXCEPT:
    case TK_RETURNING:
      return 1;
    default:
      return 0;
  }
}

/* one FROM item and its ON/USING; jointype already set by the caller */
static int src_item(Parser *p, SqlSrcItem *it, int first, int nested) {
  it->span.start = p->tok.start;
  int ok;
  if (p->tok.type == TK_LP) {
    if (!sql_parse_nest(p, NEST_FROM_PAREN)) return 0;
    sql_parse_advance(p);
    if (sql_parse_starts_select(p)) {
      it->select = sql_parse_subselect(p);
      if (!it->select) return 0;
    } else {
      it->nested = seltablist(p, 1);
      if (!it->nested) return 0;
    }
    if (!sql_parse_expect(p, TK_RP)) return 0;
    p->nest -= NEST_FROM_PAREN;
    it->alias = alias_opt(p, &ok);
    if (!ok) return 0;
  } else {
    it->name = sql_parse_nm(p);
    if (!it->name) return 0;
    if (sql_parse_accept(p, TK_DOT)) {
      it->schema = it->name;
      it->name = sql_parse_nm(p);
      if (!it->name) return 0;
    }
    if (p->tok.type == TK_LP) {
      sql_parse_advance(p);
      it->has_args = 1;
      it->args = sql_parse_exprlist(p, 1);
      if (!it->args || !sql_parse_expect(p, TK_RP)) return 0;
      it->alias = alias_opt(p, &ok);
      if (!ok) return 0;
    } else {
      it->alias = alias_opt(p, &ok);
      if (!ok) return 0;
      if (p->tok.type == TK_INDEXED) {
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_BY)) return 0;
        it->indexed_by = sql_parse_nm(p);
        if (!it->indexed_by) return 0;
      } else if (p->tok.type == TK_NOT) {
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_INDEXED)) return 0;
        it->not_indexed = 1;
      }
    }
  }
  it->span.len = p->prev_end - it->span.start;
  /* ON/USING on the first item: SQLite reports it once the clause is read */
  if (p->tok.type == TK_ON) {
    sql_parse_advance(p);
    it->on = sql_parse_expr(p);
    if (!it->on) return 0;
    if (first) {
      if (!src_follow(p, p->tok.type, nested)) return sql_parse_syntax_error(p);
      return sql_parse_error(p, "a JOIN clause is required before ON");
    }
  } else if (p->tok.type == TK_USING) {
    sql_parse_advance(p);
    it->using_cols = sql_parse_idlist_paren(p);
    if (!it->using_cols) return 0;
    if (first) {
      if (!src_follow(p, p->tok.type, nested)) return sql_parse_syntax_error(p);
      return sql_parse_error(p, "a JOIN clause is required before USING");
    }
  }
  return 1;
}

static SqlSrcList *seltablist(Parser *p, int nested) {
  SqlSrcList *l = sql_parse_alloc(p, sizeof *l);
  if (!l) return NULL;
  int jt = 0;
  for (;;) {
    SqlSrcItem *it = src_add(p, l);
    if (!it) return NULL;
    it->jointype = (uint8_t)jt;
    if (!src_item(p, it, l->n == 1, nested)) return NULL;
    int t = p->tok.type;
    if (t == TK_COMMA) {
      sql_parse_advance(p);
      jt = SQL_JOIN_COMMA;
    } else if (t == TK_JOIN) {
      sql_parse_advance(p);
      jt = SQL_JOIN_INNER;
    } else if (sql_token_is_join(t)) {
      jt = join_op(p);
      if (jt < 0) return NULL;
    } else {
      return l;
    }
  }
}

SqlSrcList *sql_parse_from(Parser *p) { return seltablist(p, 0); }

/* ---- SELECT ---- */

static SqlSelect *values_core(Parser *p) {
  SqlSelect *s = sql_parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->kind = SQL_SEL_VALUES;
  s->span.start = p->tok.start;
  sql_parse_advance(p); /* VALUES */
  do {
    int start = p->tok.start;
    if (!sql_parse_expect(p, TK_LP)) return NULL;
    SqlExpr *row = sql_parse_expr_new(p, SQL_E_ROW, start);
    if (!row) return NULL;
    row->list = sql_parse_exprlist(p, 0);
    if (!row->list || !sql_parse_expect(p, TK_RP)) return NULL;
    sql_parse_expr_end(p, row);
    s->cols = sql_parse_list_add(p, s->cols, row);
    if (!s->cols) return NULL;
  } while (sql_parse_accept(p, TK_COMMA));
  s->span.len = p->prev_end - s->span.start;
  return s;
}

/* WINDOW name AS (spec), ... -- at WINDOW */
static SqlWindow *window_clause(Parser *p) {
  SqlWindow *head = NULL, **tail = &head;
  sql_parse_advance(p);
  do {
    const char *name = sql_parse_nm(p);
    if (!name || !sql_parse_expect(p, TK_AS)) return NULL;
    SqlWindow *w = sql_parse_window_spec(p, name);
    if (!w) return NULL;
    *tail = w;
    tail = &w->next;
  } while (sql_parse_accept(p, TK_COMMA));
  return head;
}

static int order_limit(Parser *p, SqlSelect *s) {
  if (p->tok.type == TK_ORDER) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return 0;
    s->order_by = sql_parse_sortlist(p);
    if (!s->order_by) return 0;
  }
  if (p->tok.type == TK_LIMIT) {
    sql_parse_advance(p);
    s->limit = sql_parse_expr(p);
    if (!s->limit) return 0;
    if (sql_parse_accept(p, TK_OFFSET)) {
      s->offset = sql_parse_expr(p);
      if (!s->offset) return 0;
    } else if (sql_parse_accept(p, TK_COMMA)) {
      /* LIMIT a, b means OFFSET a LIMIT b */
      s->offset = s->limit;
      s->limit = sql_parse_expr(p);
      if (!s->limit) return 0;
    }
  }
  return 1;
}

static SqlSelect *select_core(Parser *p) {
  if (p->tok.type == TK_VALUES) return values_core(p);
  SqlSelect *s = sql_parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->span.start = p->tok.start;
  if (!sql_parse_expect(p, TK_SELECT)) return NULL;
  if (sql_parse_accept(p, TK_DISTINCT))
    s->distinct = 1;
  else if (sql_parse_accept(p, TK_ALL))
    s->distinct = 2;
  s->cols = sql_parse_result_cols(p);
  if (!s->cols) return NULL;
  if (sql_parse_accept(p, TK_FROM)) {
    s->from = sql_parse_from(p);
    if (!s->from) return NULL;
  }
  if (sql_parse_accept(p, TK_WHERE)) {
    s->where = sql_parse_expr(p);
    if (!s->where) return NULL;
  }
  if (p->tok.type == TK_GROUP) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return NULL;
    s->group_by = sql_parse_exprlist(p, 0);
    if (!s->group_by) return NULL;
  }
  if (sql_parse_accept(p, TK_HAVING)) {
    s->having = sql_parse_expr(p);
    if (!s->having) return NULL;
  }
  if (p->tok.type == TK_WINDOW) {
    s->windows = window_clause(p);
    if (!s->windows) return NULL;
  }
  if (!order_limit(p, s)) return NULL;
  s->span.len = p->prev_end - s->span.start;
  return s;
}

static const char *compound_name(int op) {
  switch (op) {
    case SQL_COMPOUND_UNION:
      return "UNION";
    case SQL_COMPOUND_UNION_ALL:
      return "UNION ALL";
    case SQL_COMPOUND_INTERSECT:
      return "INTERSECT";
    default:
      return "EXCEPT";
  }
}

SqlSelect *sql_parse_select_with(Parser *p, SqlWith *with) {
  if (!sql_parse_nest(p, NEST_SELECT)) return NULL;
  SqlSelect *s = select_core(p);
  if (!s) return NULL;
  int cnt = 1;
  for (;;) {
    int op;
    if (p->tok.type == TK_UNION) {
      sql_parse_advance(p);
      op = sql_parse_accept(p, TK_ALL) ? SQL_COMPOUND_UNION_ALL : SQL_COMPOUND_UNION;
    } else if (p->tok.type == TK_INTERSECT) {
      sql_parse_advance(p);
      op = SQL_COMPOUND_INTERSECT;
    } else if (p->tok.type == TK_EXCEPT) {
      sql_parse_advance(p);
      op = SQL_COMPOUND_EXCEPT;
    } else {
      break;
    }
    SqlSelect *r = select_core(p);
    if (!r) return NULL;
    r->compound = (uint8_t)op;
    r->prior = s;
    s = r;
    cnt++;
  }
  /* ORDER BY / LIMIT must be on the last core only (checked from the end) */
  for (SqlSelect *next = s, *q = s->prior; q; next = q, q = q->prior) {
    if (q->order_by || q->limit) {
      sql_parse_error(p, "%s clause should come after %s not before",
                      q->order_by ? "ORDER BY" : "LIMIT", compound_name(next->compound));
      return NULL;
    }
  }
  if (cnt > COMPOUND_MAX) return sql_parse_error(p, "too many terms in compound SELECT"), NULL;
  s->with = with;
  p->nest -= NEST_SELECT;
  return s;
}

SqlSelect *sql_parse_subselect(Parser *p) {
  p->subq++;
  SqlSelect *s = sql_parse_select(p);
  p->subq--;
  return s;
}

SqlSelect *sql_parse_select(Parser *p) {
  SqlWith *with = NULL;
  if (p->tok.type == TK_WITH) {
    with = sql_parse_with(p);
    if (!with) return NULL;
  }
  return sql_parse_select_with(p, with);
}
