/*
 * compile_select.c -- placeholder until the select part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

SrcList *src_from_ast(Parse *p, const SqlSrcList *from, NameCtx *outer) {
  parse_error(p, "FROM is not supported yet");
  return NULL;
}
SrcList *src_single(Parse *p, Table *tab, const char *alias) {
  parse_error(p, "not supported yet");
  return NULL;
}
int src_resolve_joins(Parse *p, SrcList *s) { return 0; }
SrcItem *src_find_cursor(SrcList *s, int cur) { return NULL; }
void src_code_subquery(Parse *p, SrcItem *it) {}
int select_resolve(Parse *p, SqlSelect *s, NameCtx *outer) { parse_error(p, "SELECT is not supported yet"); return 1; }
int select_code(Parse *p, SqlSelect *s, SelectDest *dest) { parse_error(p, "SELECT is not supported yet"); return 1; }
int select_ncol(const SqlSelect *s) { return 0; }
SqlExprList *select_result(const SqlSelect *s) { return NULL; }
int select_result_names(Parse *p, SqlSelect *s) { return 0; }
Table *select_result_table(Parse *p, SqlSelect *s, const char *name, const SqlIdList *colnames) {
  parse_error(p, "not supported yet");
  return NULL;
}
