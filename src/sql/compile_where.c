/*
 * compile_where.c -- placeholder until the where part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

WhereInfo *where_begin(Parse *p, SrcList *src, SqlExpr *where, SqlExprList *order_by, int flags) {
  parse_error(p, "FROM is not supported yet");
  return NULL;
}
int where_order_satisfied(const WhereInfo *w) { return 0; }
int where_continue_label(const WhereInfo *w) { return 0; }
int where_break_label(const WhereInfo *w) { return 0; }
void where_end(WhereInfo *w) {}
