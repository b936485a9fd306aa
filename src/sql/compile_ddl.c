/*
 * compile_ddl.c -- placeholder until the ddl part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

int ddl_create_table(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_create_index(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_create_view(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_create_trigger(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_drop(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_reindex(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
int ddl_alter(Parse *p, const SqlStmt *s) { parse_error(p, "not supported yet"); return 1; }
