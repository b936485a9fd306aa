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
  int depth;         /* sql_parse_expr_prec recursion depth (a backstop to nest) */
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
#define EXPR_MAX_RECURSION 2000 /* hard bound on sql_parse_expr_prec recursion */
#define EXPR_MAX_DEPTH 1000
#define SQL_MAX_VARIABLE 250000

/* tokens */
void sql_parse_advance(Parser *p);
const SqlTok *sql_parse_peek(Parser *p, int k); /* k = 1 or 2 tokens ahead */
int sql_parse_accept(Parser *p, int type);      /* consume if tok is type */
int sql_parse_expect(Parser *p, int type);      /* consume or syntax error; 1 on success */
int sql_parse_syntax_error(Parser *p);          /* error at the current token; returns 0 */
int sql_parse_error(Parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sql_parse_nomem(Parser *p);
int sql_parse_nest(Parser *p, int w);  /* add to nest; 0 on overflow */
int sql_parse_fire_pending(Parser *p); /* raise a pending variable error */

/* token classes */
int sql_token_is_join(int t); /* CROSS FULL INNER LEFT NATURAL OUTER RIGHT */
int sql_token_is_id(int t);   /* ID or a keyword usable as one (not join kw, not INDEXED) */
int sql_token_is_nm(int t);   /* nm: id, STRING or join keyword */
int sql_token_is_ids(int t);  /* ids: id or STRING (implicit alias, collation) */

/* arena helpers */
void *sql_parse_alloc(Parser *p, size_t n);             /* zeroed; NULL + SHALE_NOMEM on failure */
const char *sql_parse_name(Parser *p, const SqlTok *t); /* dequoted name */
const char *sql_parse_text(Parser *p, int start, int len);
SqlExpr *sql_parse_expr_new(Parser *p, int op, int start);
void sql_parse_expr_end(Parser *p, SqlExpr *e); /* span ends at prev_end */
SqlExprList *sql_parse_list_add(Parser *p, SqlExprList *l, SqlExpr *e);
SqlIdList *sql_parse_idlist_add(Parser *p, SqlIdList *l, const char *name);

/* grammar pieces shared across files */
const char *sql_parse_nm(Parser *p);               /* nm or syntax error */
int sql_parse_qualname(Parser *p, SqlQualName *q); /* nm [. nm] */
SqlExpr *sql_parse_expr(Parser *p);
SqlExpr *sql_parse_expr_prec(Parser *p, int min);
SqlExprList *sql_parse_exprlist(Parser *p, int allow_empty);
SqlExprList *sql_parse_sortlist(Parser *p);    /* expr [ASC|DESC] [NULLS ..], ... */
SqlIdList *sql_parse_idlist_paren(Parser *p);  /* ( nm, ... ) */
SqlIdList *sql_parse_eidlist_paren(Parser *p); /* ( nm [COLLATE x] [ASC|DESC], ... ) */
SqlSelect *sql_parse_select(Parser *p);        /* [WITH] select (compound) */
SqlSelect *sql_parse_subselect(Parser *p);     /* the same, inside parentheses */
SqlSelect *sql_parse_select_with(Parser *p, SqlWith *with);
SqlWith *sql_parse_with(Parser *p); /* at WITH */
SqlExprList *sql_parse_result_cols(Parser *p);
SqlSrcList *sql_parse_from(Parser *p);                         /* after FROM */
SqlWindow *sql_parse_window_spec(Parser *p, const char *name); /* at '(' */
SqlStmt *sql_parse_stmt(Parser *p);
int sql_parse_starts_select(Parser *p); /* SELECT, VALUES or WITH */
int sql_parse_conflict(Parser *p);      /* ROLLBACK|ABORT|FAIL|IGNORE|REPLACE */

#endif /* SHALE_SQL_PARSE_INT_H */
