/*
 * compile_expr.c -- placeholder until the core part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

void expr_code(Parse *p, SqlExpr *e, int target) { parse_error(p, "expressions are not supported yet"); }
int expr_code_reg(Parse *p, SqlExpr *e, int target) { expr_code(p, e, target); return target; }
void expr_code_list(Parse *p, SqlExprList *list, int target) {
  for (int i = 0; list && i < list->n; i++) expr_code(p, list->a[i].expr, target + i);
}
void expr_if_true(Parse *p, SqlExpr *e, int label, int jumpifnull) { expr_code(p, e, 0); }
void expr_if_false(Parse *p, SqlExpr *e, int label, int jumpifnull) { expr_code(p, e, 0); }
char expr_affinity(const SqlExpr *e) { return 0; }
const Collation *expr_collation(Parse *p, const SqlExpr *e) { return NULL; }
const Collation *expr_cmp_collation(Parse *p, const SqlExpr *l, const SqlExpr *r) { return NULL; }
char expr_cmp_affinity(const SqlExpr *l, const SqlExpr *r) { return 0; }
int expr_is_constant(const SqlExpr *e) { return 0; }
int expr_is_int(const SqlExpr *e, int64_t *v) { return 0; }
void code_column(Parse *p, const Table *tab, int cur, int col, int target) {
  emit(p, OP_Column, cur, col, target);
}
int expr_code_once(Parse *p, SqlExpr *e) { int r = emit_regs(p, 1); expr_code(p, e, r); return r; }
const char *table_affinity_str(Parse *p, const Table *tab) { return NULL; }
