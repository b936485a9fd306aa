/*
 * resolve.c -- placeholder until the select part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

int resolve_expr(Parse *p, NameCtx *nc, SqlExpr *e) { return 0; }
int resolve_list(Parse *p, NameCtx *nc, SqlExprList *l) { return 0; }
int resolve_order_by(Parse *p, NameCtx *nc, SqlExprList *terms, SqlExprList *result,
                     const char *what) { return 0; }
