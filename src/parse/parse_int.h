/*
 * parse_int.h -- private to the parser files (parse.c, parse_select.c,
 * parse_stmt.c): the parser state and the helpers they share.
 *
 * Invariants:
 *  1. p->tok is the current (not yet consumed) token; spaces and comments
 *     never appear in it. At most two further tokens are buffered in p->la.
 *  2. After the first error p->rc != SHALE_OK, p->errmsg holds the message
 *     (or NULL for SHALE_NOMEM) and every parse function returns NULL/0 at
 *     once; no later error replaces the first.
 *  3. p->nest counts SQLite-like "parser stack" use; past the limit the
 *     parse fails with "parser stack overflow" (no unbounded recursion).
 */
#ifndef SHALE_SQL_PARSE_INT_H
#define SHALE_SQL_PARSE_INT_H

#include "ast.h"

typedef struct SqlTok {
  int type;
  int start, len;
} SqlTok;

typedef struct Parser {
  UtilArena *arena;
  const char *sql;
  int end;      /* length of the text */
  int pos;      /* offset where the next raw token starts */
  SqlTok tok;   /* current token */
  SqlTok la[2]; /* buffered lookahead */
  int nla;
  int prev_end;  /* end offset of the last consumed token */
  int prev_type; /* type of the last consumed token */
  int rc;
  char *errmsg;
  int nest;          /* weighted nesting (parser stack emulation) */
  int depth;         /* p_expr_prec recursion depth (a backstop to nest) */
  int in_trigger;    /* parsing a trigger body */
  int subq;          /* depth of SELECTs inside parentheses */
  int in_alter;      /* parsing the column of ALTER TABLE ADD */
  int insert_select; /* parsing the SELECT of an INSERT (upsert may follow) */
  int nvar;          /* parameters numbered so far */
  int nvnames, vcap; /* names given to parameter numbers (sparse) */
  struct SqlVarName *vnames;
  SqlCreateTable *ct; /* the CREATE TABLE being parsed (NULL otherwise) */
  int ct_has_pk;      /* ... already has a PRIMARY KEY */
  int pend_kind;      /* error pending on a variable: 0 none, 1 ?NNN range, 2 #N */
  SqlTok pend_tok;
  int pend_next;            /* offset of the token after the variable */
  struct SqlStmt *trig_hdr; /* CREATE TRIGGER whose BEGIN was read (header complete) */
  int max_depth;            /* expression height limit (SQLITE_LIMIT_EXPR_DEPTH) */
} Parser;

/* Weights for p->nest, fitted to where SQLite 3.40's parser stack overflows
 * ("parser stack overflow"): e.g. 93 nested parentheses pass and 94 fail,
 * 31 nested function calls pass and 32 fail, 18 nested subqueries pass. */
#define NEST_LIMIT 9850
#define NEST_PAREN 101          /* ( expr ) */
#define NEST_UNARY 100          /* - + ~ NOT */
#define NEST_SELECT 399         /* any SELECT (the top-level one included) */
#define NEST_FUNC 300           /* f( ... ) */
#define NEST_CAST 206           /* CAST( ... ) */
#define NEST_CASE 310           /* CASE ... END */
#define NEST_IN 300             /* IN ( ... ) */
#define NEST_EXISTS 201         /* EXISTS ( ... ) */
#define NEST_FROM_PAREN 206     /* FROM ( ... ) */
#define NEST_BETWEEN 200        /* the middle operand of BETWEEN */
#define EXPR_MAX_RECURSION 2000 /* hard bound on p_expr_prec recursion */
#define EXPR_MAX_DEPTH 1000
#define SQL_MAX_VARIABLE 250000

/* tokens */
void p_advance(Parser *p);
const SqlTok *p_peek(Parser *p, int k); /* k = 1 or 2 tokens ahead */
int p_accept(Parser *p, int type);      /* consume if tok is type */
int p_expect(Parser *p, int type);      /* consume or syntax error; 1 on success */
int p_syntax_error(Parser *p);          /* error at the current token; returns 0 */
int p_error(Parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int p_nomem(Parser *p);
int p_nest(Parser *p, int w);  /* add to nest; 0 on overflow */
int p_fire_pending(Parser *p); /* raise a pending variable error */

/* token classes */
int tk_is_join(int t); /* CROSS FULL INNER LEFT NATURAL OUTER RIGHT */
int tk_is_id(int t);   /* ID or a keyword usable as one (not join kw, not INDEXED) */
int tk_is_nm(int t);   /* nm: id, STRING or join keyword */
int tk_is_ids(int t);  /* ids: id or STRING (implicit alias, collation) */

/* arena helpers */
void *p_alloc(Parser *p, size_t n);             /* zeroed; NULL + SHALE_NOMEM on failure */
const char *p_name(Parser *p, const SqlTok *t); /* dequoted name */
const char *p_text(Parser *p, int start, int len);
SqlExpr *p_expr_new(Parser *p, int op, int start);
void p_expr_end(Parser *p, SqlExpr *e); /* span ends at prev_end */
SqlExprList *p_list_add(Parser *p, SqlExprList *l, SqlExpr *e);
SqlIdList *p_idlist_add(Parser *p, SqlIdList *l, const char *name);

/* grammar pieces shared across files */
const char *p_nm(Parser *p);               /* nm or syntax error */
int p_qualname(Parser *p, SqlQualName *q); /* nm [. nm] */
SqlExpr *p_expr(Parser *p);
SqlExpr *p_expr_prec(Parser *p, int min);
SqlExprList *p_exprlist(Parser *p, int allow_empty);
SqlExprList *p_sortlist(Parser *p);    /* expr [ASC|DESC] [NULLS ..], ... */
SqlIdList *p_idlist_paren(Parser *p);  /* ( nm, ... ) */
SqlIdList *p_eidlist_paren(Parser *p); /* ( nm [COLLATE x] [ASC|DESC], ... ) */
SqlSelect *p_select(Parser *p);        /* [WITH] select (compound) */
SqlSelect *p_subselect(Parser *p);     /* the same, inside parentheses */
SqlSelect *p_select_with(Parser *p, SqlWith *with);
SqlWith *p_with(Parser *p); /* at WITH */
SqlExprList *p_result_cols(Parser *p);
SqlSrcList *p_from(Parser *p);                         /* after FROM */
SqlWindow *p_window_spec(Parser *p, const char *name); /* at '(' */
SqlStmt *p_stmt(Parser *p);
int p_starts_select(Parser *p); /* SELECT, VALUES or WITH */
int p_conflict(Parser *p);      /* ROLLBACK|ABORT|FAIL|IGNORE|REPLACE */

#endif /* SHALE_SQL_PARSE_INT_H */
