/*
 * compile_dml.c -- placeholder until the dml part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

int dml_insert(Parse *p, const SqlStmt *s) { parse_error(p, "INSERT is not supported yet"); return 1; }
int dml_update(Parse *p, const SqlStmt *s) { parse_error(p, "UPDATE is not supported yet"); return 1; }
int dml_delete(Parse *p, const SqlStmt *s) { parse_error(p, "DELETE is not supported yet"); return 1; }
