/*
 * schema_load.h -- building schema objects (src/schema/schema.h) from
 * parsed CREATE statements, and loading a Schema from sqlite_schema.
 *
 * Invariants:
 *  1. On error nothing is added to the Schema and *out is NULL; *errmsg (if
 *     errmsg) gets a shale_malloc'ed message in SQLite's words, which the
 *     caller frees (NULL for SHALE_NOMEM).
 *  2. Objects built here live in the Schema's arena; their AST pointers
 *     point into the arena the statement was parsed in (see schema_load.c).
 */
#ifndef SHALE_SQL_SCHEMA_LOAD_H
#define SHALE_SQL_SCHEMA_LOAD_H

#include "../btree/btree.h"
#include "../parse/ast.h"
#include "../schema/schema.h"

/* What schema expressions are checked against: the connection's functions
 * and whether its schema is trusted (db_config TRUSTED_SCHEMA). */
struct FuncRegistry;
typedef struct SchemaFuncs {
  const struct FuncRegistry *funcs;
  int untrusted;
} SchemaFuncs;

/* Read every row of sqlite_schema and build a Schema (begins and ends a
 * read transaction of its own when none is open). A row that cannot be used
 * gives SHALE_CORRUPT with "malformed database schema (NAME)[ - reason]";
 * other results: SHALE_NOMEM, I/O and corruption codes of the B-tree. */
int compile_schema_load(Btree *bt, Schema **out, char **errmsg);
/* compile_schema_load for the TEMP database (temp = 1): its triggers may name
 * tables of other databases (no "no such table" for them). */
int compile_schema_load_ex(Btree *bt, int temp, Schema **out, char **errmsg);
/* compile_schema_load_ex checking the CHECK, generated-column and index
 * expressions against sf (NULL: not checked) as SQLite does when it reads
 * its schema: a deterministic call of a function that is unsafe there
 * (func_unsafe_in_schema) makes the schema "malformed database schema (X)
 * - unsafe use of f()". */
int compile_schema_load_fn(Btree *bt, int temp, const SchemaFuncs *sf, Schema **out, char **errmsg);

/* The Table of a CREATE TABLE statement (sql: the text it was parsed from,
 * kept as Table.sql), with SQLite's CREATE-time checks and messages:
 * "duplicate column name: X", "table \"t\" has more than one primary key",
 * "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY", "PRIMARY KEY
 * missing on table t", "unknown datatype for t.x: \"foo\"", ... (SHALE_ERROR).
 * The table's automatic indexes are in (*out)->indexes (root 0). Neither is
 * added to the schema: call schema_add_table / schema_add_index. */
int compile_schema_table_from_create(Schema *s, const SqlStmt *create_table, const char *sql,
                                     Table **out, char **errmsg);
/* The same, resolving the CHECK and generated-column expressions against
 * the functions of sf as SQLite does when the statement ends: unknown
 * functions, wrong argument counts, aggregate and window calls ("misuse of
 * aggregate function count()"), parameters, subqueries, non-deterministic
 * functions in generated columns, unsafe functions ("unsafe use of f()"),
 * with SQLite's choice of message when an expression has several faults
 * (sf NULL: as compile_schema_table_from_create);
 * and with the statement's spans referring to src (the text it was parsed
 * from, e.g. "CREATE TEMP TABLE IF NOT EXISTS ...") rather than to sql (the
 * text to store): DEFAULT texts are taken from src (NULL: sql). */
int compile_schema_table_from_create_src(Schema *s, const SqlStmt *create_table, const char *sql,
                                         const char *src, const SchemaFuncs *sf, Table **out,
                                         char **errmsg);

/* The Index of a CREATE INDEX statement on a table of s ("no such table:
 * main.t", "no such column: x", "subqueries prohibited in index
 * expressions", ...). root is 0; not added to the schema. */
int compile_schema_index_from_create(Schema *s, const SqlStmt *create_index, const char *sql,
                                     Index **out, char **errmsg);
/* The same, with the functions of the expressions checked against sf:
 * non-deterministic ones ("non-deterministic functions prohibited in index
 * expressions") and unsafe ones ("unsafe use of f()"). */
int compile_schema_index_from_create_fn(Schema *s, const SqlStmt *create_index, const char *sql,
                                        const SchemaFuncs *sf, Index **out, char **errmsg);

/* A View / Trigger from its CREATE statement ("object name reserved for
 * internal use: sqlite_x", "no such table: main.t", "cannot create BEFORE
 * trigger on view: v", "cannot create INSTEAD OF trigger on table: t",
 * "cannot create trigger on system table"). Not added to the schema. */
int compile_schema_view_from_create(Schema *s, const SqlStmt *create_view, const char *sql,
                                    View **out, char **errmsg);
int compile_schema_trigger_from_create(Schema *s, const SqlStmt *create_trigger, const char *sql,
                                       Trigger **out, char **errmsg);

#endif /* SHALE_SQL_SCHEMA_LOAD_H */
