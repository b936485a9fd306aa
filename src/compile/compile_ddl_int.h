/*
 * compile_ddl_int.h -- helpers shared by the DDL code generators
 * (compile_ddl.c, compile_ddl_index.c, compile_ddl_drop.c). Only those files
 * include it.
 *
 * Invariants:
 *  1. Every sqlite_schema row is written and deleted by VM code (OpenWrite on
 *     root 1, NewRowid + MakeRecord + Insert / Delete), never directly on the
 *     B-tree: the statement's transaction and savepoint undo it on error.
 *  2. A DDL statement that changes the schema ends with compile_ddl_finish: schema
 *     cookie + 1 (the value the statement was compiled against, which the
 *     Transaction op checks) and ParseSchema; Parse.schema_changed = 1.
 *  3. Schema objects made here only to validate a statement (Table, Index,
 *     ...) live in a scratch Schema freed before the ddl_* function returns;
 *     the in-memory schema is changed only by the API's reload after the
 *     program ran.
 */
#ifndef SHALE_SQL_COMPILE_DDL_INT_H
#define SHALE_SQL_COMPILE_DDL_INT_H

#include "compile.h"
#include "schema_load.h"

/* Where the stored text of a CREATE ends, as SQLite cuts it: at the
 * statement's last token (CREATE TABLE without options, CREATE TRIGGER), at
 * its ';' or the end of the input (CREATE INDEX, CREATE TABLE with WITHOUT
 * ROWID/STRICT: comments and spaces before it kept), or there with trailing
 * white space trimmed (CREATE VIEW). */
#define DDL_END_LAST_TOKEN 0
#define DDL_END_LOOKAHEAD 1
#define DDL_END_TRIM 2
int compile_ddl_stored_end(Parse *, const SqlStmt *, int rule);
/* "CREATE <what> " + the statement text from the object name to the end
 * given by rule: the sql column SQLite stores. Arena memory. */
const char *compile_ddl_stored_sql(Parse *, const SqlStmt *, const SqlQualName *, const char *what,
                                   int rule);
/* Checks the schema qualifier (NULL, main or temp are the main database);
 * else "unknown database X". Returns nonzero after an error. */
int compile_ddl_check_db(Parse *, const SqlQualName *);
/* r[reg] = text z, or NULL when z is NULL. */
void compile_ddl_emit_text(Parse *, int reg, const char *z);
/* A write cursor on sqlite_schema (root 1). */
int compile_ddl_open_schema(Parse *);
/* Append a row to sqlite_schema through cursor cur: root_reg 0 stores 0. */
void compile_ddl_schema_insert(Parse *, int cur, const char *type, const char *name,
                               const char *tbl, int root_reg, const char *sql);
/* Delete every sqlite_schema row whose (type, name) is one of the n pairs. */
typedef struct DdlObj {
  const char *type, *name;
} DdlObj;
void compile_ddl_schema_delete(Parse *, const DdlObj *objs, int n);
/* Delete the rows of table tab (a rowid table) whose column col equals the
 * text z (sqlite_sequence, sqlite_stat1 clean-up). */
void compile_ddl_delete_rows_eq(Parse *, const Table *tab, int col, const char *z);
/* The file format and text encoding SQLite writes on the first CREATE of a
 * database whose header has none yet. */
void compile_ddl_file_format(Parse *);
/* Schema cookie + 1, ParseSchema, schema_changed (invariant 2). */
void compile_ddl_finish(Parse *);
/* Parse the CREATE text of a schema object again into the Parse arena (a
 * fresh AST the code generator may annotate). NULL after compile_parse_error. */
SqlStmt *compile_ddl_reparse(Parse *, const char *sql);
/* Record the error of a schema_*_from_create call (frees msg). */
void compile_ddl_build_error(Parse *, int rc, char *msg);
/* sqlite_* tables other than the statistics ones: not indexable/droppable. */
int compile_ddl_is_system_table(const Table *);
/* The table's name as SQLite prints it (sqlite_master for the schema). */
const char *compile_ddl_table_name(const Table *);
/* The scratch schema of invariant 3 holding tab (by name only). */
Schema *compile_ddl_scratch_with(Parse *, Table *tab);

#endif /* SHALE_SQL_COMPILE_DDL_INT_H */
