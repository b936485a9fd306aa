/*
 * compile.h -- the code generator's internal interface: the compile context
 * (Parse), resolved FROM lists, name contexts, select destinations, and the
 * entry points of each compile_*.c file. Only src/compile/ and src/api/
 * include it; the API layer uses just the public part at the top
 * (compile_sql and CompiledStmt).
 *
 * Files and owners of the functions declared here (src/compile/README.md):
 *   compile.c           compile_sql, Parse helpers, prologue/epilogue,
 *                       BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE, EXPLAIN
 *   resolve.c           name resolution (resolve_*)
 *   compile_expr.c      expressions (expr_*), column reads (compile_code_column)
 *   compile_select.c    SELECT (select_*), FROM lists (src_*), views,
 *                       subqueries, co-routines, result column names
 *   compile_window.c    window functions (window_*)
 *   compile_where.c     WHERE loops over a FROM list (where_*), on src/plan/
 *   compile_dml.c       what INSERT/UPDATE/DELETE share: rows, the Writer,
 *                       views, RETURNING (dml_*, dml_int.h)
 *   compile_constraint.c  NOT NULL, CHECK, STRICT, UNIQUE/PK conflicts
 *   compile_insert.c    INSERT, UPSERT, AUTOINCREMENT (compile_dml_insert)
 *   compile_update.c    UPDATE and DELETE (compile_dml_update, compile_dml_delete)
 *   compile_fk.c        foreign keys (fk_*)
 *   compile_trigger.c   trigger programs (trigger_*)
 *   compile_ddl*.c      CREATE/DROP/ALTER, indexes, REINDEX (ddl_*)
 *   compile_analyze.c   ANALYZE
 *   pragma_tab.c        the columns of the pragma_NAME tables (compile_sql_pragma_tab)
 *   schema_load.c       the schema from sqlite_schema (schema_load.h)
 *
 * Invariants:
 *  1. One Parse compiles one statement. Every compile-time allocation is in
 *     Parse.arena (freed by compile_sql when it returns) except the program,
 *     which the builder owns until vm_builder_finish hands it to the
 *     CompiledStmt. The AST lives in Parse.arena too, so AST nodes may be
 *     annotated in place (resolution writes the fields under "filled by name
 *     resolution" in ast.h).
 *  2. Errors are sticky: the first compile_parse_error wins (message, code); later
 *     calls are ignored; code generators check parse_failed() and return
 *     early. Nothing ever aborts halfway with a half-built program escaping:
 *     compile_sql discards the builder on error.
 *  3. Schema objects (Table, Index, Column, FuncDef, Collation) are borrowed
 *     from the environment; the program stays valid only while the schema it
 *     was compiled against is loaded. The Transaction op checks the schema
 *     cookie (VM_TXN_CHECK_COOKIE) so a stale program fails with SHALE_SCHEMA
 *     and the API layer recompiles it.
 *  4. Program shape: Init -> body -> Halt -> [epilogue: Transaction ops,
 *     once-only constants] -> Goto body. compile_parse_need_read/parse_need_write
 *     decide what the epilogue opens.
 *  5. Cursor numbers are unique in a program; register numbers too. A
 *     SrcItem's cursor is its table (or materialized subquery) cursor; an
 *     index read instead (covering scan) is recorded with
 *     compile_parse_set_cover so compile_code_column reads from the index cursor.
 */
#ifndef SHALE_SQL_COMPILE_H
#define SHALE_SQL_COMPILE_H

#include "../func/func.h"
#include "../parse/ast.h"
#include "../parse/parse.h"
#include "../schema/schema.h"
#include "../vm/vm.h"

/* ======================= public part (API layer) ======================= */

/* One database of the connection (CompileEnv.dbs). */
typedef struct CompileDb {
  const char *name; /* "main", "temp", or the ATTACH name */
  Schema *schema;   /* its loaded schema (temp: empty until used) */
  const char *file; /* its file name ("" for memory), NULL when not open (temp) */
  Btree *bt;        /* its B-tree (NULL when not open) */
} CompileDb;

/* What a statement is compiled against: the connection's state. */
/* CompileEnv.col_names, as SQLite's two pragmas choose: */
#define COMPILE_NAMES_SHORT 0 /* short_column_names on, full off (the default): the column */
#define COMPILE_NAMES_SPAN 1  /* both off: the reference as written */
#define COMPILE_NAMES_FULL 2  /* full_column_names on, short off: "table.column" */
#define COMPILE_NAMES_BOTH 3  /* both on: "table.column", but "*"'s columns short */

typedef struct CompileEnv {
  VmSpare *prog_spare;       /* a freed program's block for this compile, or NULL (vm.h) */
  Btree *bt;                 /* main database */
  Schema *schema;            /* main schema (loaded, current) */
  const FuncRegistry *funcs; /* built-in and user functions */
  int max_vars;              /* SQLITE_LIMIT_VARIABLE_NUMBER (32766 default) */
  int max_sql_length;        /* SQLITE_LIMIT_SQL_LENGTH (1000000000 default) */
  int max_length;            /* SQLITE_LIMIT_LENGTH (0: none): literals longer fail */
  int max_expr_depth;        /* SQLITE_LIMIT_EXPR_DEPTH (1000 default) */
  int max_compound;          /* SQLITE_LIMIT_COMPOUND_SELECT (500 default) */
  int max_columns;           /* SQLITE_LIMIT_COLUMN (2000 default) */
  int max_function_arg;      /* SQLITE_LIMIT_FUNCTION_ARG (0: 127) */
  /* The authorizer (sqlite3_set_authorizer), NULL for none: called while
   * compiling with SQLite's action codes (AUTH_*) and arguments (the last
   * one: the innermost trigger being coded, or NULL); returns AUTH_OK,
   * AUTH_DENY or AUTH_IGNORE (anything else: "authorizer malfunction"). */
  int (*auth)(void *ctx, int action, const char *a, const char *b, const char *db,
              const char *trigger);
  void *auth_ctx;
  int max_trigger_depth; /* SQLITE_LIMIT_TRIGGER_DEPTH (0: default) */
  uint8_t recursive_triggers;
  uint8_t foreign_keys;       /* PRAGMA foreign_keys */
  uint8_t defer_foreign_keys; /* PRAGMA defer_foreign_keys (RESTRICT acts as NO ACTION, no
                                 immediate FK halts: compile_fk.c) */
  uint8_t in_txn;             /* an explicit transaction is open (BEGIN ran) */
  uint8_t reverse_unordered;  /* PRAGMA reverse_unordered_selects */
  uint8_t no_auto_index;      /* PRAGMA automatic_index=OFF */
  uint8_t ignore_checks;      /* PRAGMA ignore_check_constraints: CHECKs not coded */
  uint8_t writable_schema;    /* PRAGMA writable_schema: sqlite_schema takes DML */
  uint8_t shadow_ro; /* DEFENSIVE: shadow tables (compile_vtab_is_shadow) refuse DML and DROP */
  /* sqlite3_db_config switches, inverted so that 0 is SQLite's default (on):
   * no_triggers   ENABLE_TRIGGER off: only TEMP triggers fire;
   * no_views      ENABLE_VIEW off: views outside TEMP are refused;
   * no_dqs_dml    DQS_DML off: a double-quoted name is never a string in DML;
   * no_dqs_ddl    DQS_DDL off: nor in the expressions of CREATE TABLE/INDEX. */
  uint8_t no_triggers, no_views, no_dqs_dml, no_dqs_ddl;
  /* TRUSTED_SCHEMA off (db_config, PRAGMA trusted_schema): application
   * functions not marked innocuous are unsafe in the schema
   * (func_unsafe_in_schema) */
  uint8_t untrusted;
  /* PRAGMA short_column_names / full_column_names: how a SELECT names its
   * column references (compile_select_result_names) */
  uint8_t col_names; /* COMPILE_NAMES_* */
  /* TRIGGER_EQP on (db_config): EXPLAIN QUERY PLAN also lists the plans of
   * the trigger programs a statement runs (compile_trigger.c) */
  uint8_t trigger_eqp;
  /* PRAGMA legacy_alter_table (db_config LEGACY_ALTER_TABLE): RENAME TABLE
   * rewrites only the names of the table, of its indexes' and triggers' ON
   * clauses (REFERENCES too under foreign_keys), as SQLite before 3.25 */
  uint8_t legacy_alter;
  /* LEGACY_FILE_FORMAT on (db_config): a new database gets schema format 1
   * (compile_ddl.c), whose indexes ignore DESC (schema_load.c) */
  uint8_t legacy_file_format;
  /* Every database (ATTACH/TEMP): dbs[0] main (schema == the schema field
   * above), dbs[1] temp, dbs[2..ndb) attached in order. ndb == 0: main only
   * (callers that predate ATTACH). */
  int ndb;
  const CompileDb *dbs;
  /* The connection's virtual-table registry (src/vtab/), NULL: none. */
  struct VtabReg *vtabs;
} CompileEnv;

/* Authorizer actions and answers (SQLite's SQLITE_* numbers). */
enum {
  AUTH_CREATE_INDEX = 1,
  AUTH_CREATE_TABLE = 2,
  AUTH_CREATE_TEMP_INDEX = 3,
  AUTH_CREATE_TEMP_TABLE = 4,
  AUTH_CREATE_TEMP_VIEW = 6,
  AUTH_CREATE_TEMP_TRIGGER = 5,
  AUTH_CREATE_TRIGGER = 7,
  AUTH_CREATE_VIEW = 8,
  AUTH_DELETE = 9,
  AUTH_DROP_INDEX = 10,
  AUTH_DROP_TABLE = 11,
  AUTH_DROP_TEMP_INDEX = 12,
  AUTH_DROP_TEMP_TABLE = 13,
  AUTH_DROP_TEMP_TRIGGER = 14,
  AUTH_DROP_TEMP_VIEW = 15,
  AUTH_DROP_TRIGGER = 16,
  AUTH_DROP_VIEW = 17,
  AUTH_INSERT = 18,
  AUTH_PRAGMA = 19,
  AUTH_READ = 20,
  AUTH_SELECT = 21,
  AUTH_TRANSACTION = 22,
  AUTH_UPDATE = 23,
  AUTH_ATTACH = 24,
  AUTH_DETACH = 25,
  AUTH_ALTER_TABLE = 26,
  AUTH_REINDEX = 27,
  AUTH_ANALYZE = 28,
  AUTH_CREATE_VTABLE = 29,
  AUTH_DROP_VTABLE = 30,
  AUTH_FUNCTION = 31,
  AUTH_SAVEPOINT = 32,
  AUTH_RECURSIVE = 33
};
#define AUTH_OK 0
#define AUTH_DENY 1
#define AUTH_IGNORE 2

/* One result column of a statement. Strings live in the CompiledStmt. */
typedef struct ResultCol {
  const char *name;     /* column name as SQLite gives it (alias, span, or column) */
  const char *decltype; /* declared type of the source column, or NULL */
  const char *table;    /* origin table name, or NULL (expression) */
  const char *origin;   /* origin column name, or NULL */
  const char *db;       /* the table's database name when table is set, else NULL */
} ResultCol;

/* One row of EXPLAIN QUERY PLAN: id, parent, 0, detail. */
typedef struct EqpRow {
  int id, parent;
  const char *detail;
} EqpRow;

/* The PRAGMA statements the API layer runs itself. */
typedef struct PragmaReq {
  const char *schema; /* "main" or as written; NULL when not written */
  const char *name;   /* pragma name as written */
  const char *value;  /* the value's text (dequoted string, number as written,
                         "-5" for a negative number, an identifier), or NULL */
  uint8_t call;       /* written as name(value) */
  uint8_t ignored;    /* the authorizer said IGNORE: the pragma does nothing */
} PragmaReq;

/* CompiledStmt.kind beyond SqlStmtKind: what the API does with it. */
typedef struct CompiledStmt {
  VmProgram *prog;        /* the program (NULL for an empty statement or PRAGMA) */
  int kind;               /* SqlStmtKind of the statement; -1 for an empty one */
  int explain;            /* 0, 1 EXPLAIN (the API lists prog), 2 EXPLAIN QUERY PLAN */
  int ncol;               /* result columns (0 for statements without rows) */
  ResultCol *cols;        /* ncol entries */
  int nvar;               /* parameters (largest number) */
  const char **var_names; /* nvar entries, NULL for unnamed ones ("?"), else ":a" */
  uint8_t readonly;       /* writes nothing (shale_stmt_readonly) */
  uint8_t stmt_journal;   /* inside a transaction, a failed run undoes what it wrote (SQLite's
                             statement journal: always, except for an INSERT/UPDATE/DELETE that
                             cannot write several rows or cannot abort midway) */
  uint8_t is_txn_ctl;     /* BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE */
  uint8_t vtab_stmt_sp;   /* SQLite would use a statement journal here (VM_VTAB_SAVEPOINT): an
                             INSERT/UPDATE/DELETE with stmt_journal, or a write of a virtual
                             table other than a one-row INSERT */
  uint8_t uses_vtab;      /* reads or writes a virtual table: never reused from a cache (SQLite
                             prepares again, and modules see every xBestIndex) */
  PragmaReq pragma;       /* kind == SQL_STMT_PRAGMA */
  uint32_t db_rmask;      /* databases the program opens a transaction on (bit i = dbs[i]) */
  uint32_t db_wmask;      /* ... a write transaction on */
  int neqp;               /* EXPLAIN QUERY PLAN rows (explain == 2) */
  EqpRow *eqp;
  UtilArena arena; /* owns cols, var_names, pragma strings, eqp */
} CompiledStmt;

/* Compile the first statement of sql (nbytes < 0: to the NUL). On SHALE_OK
 * *out is filled (kind -1 and prog NULL for an empty statement) and *tail
 * (if tail) points past the statement. On error returns the code with
 * *errmsg set (shale_malloc'ed; NULL only for SHALE_NOMEM) and *out is
 * empty (compile_stmt_free on it is a no-op). */
int compile_sql(const CompileEnv *env, const char *sql, int nbytes, CompiledStmt *out,
                const char **tail, char **errmsg);
void compile_stmt_free(CompiledStmt *);
/* The same, parking the program's block in spare (vm_program_free_keep). */
void compile_stmt_free_keep(CompiledStmt *, VmSpare *spare);

/* =================== internal part (src/compile/ only) =================== */

typedef struct Parse Parse;
typedef struct SrcList SrcList;
typedef struct NameCtx NameCtx;
typedef struct AggInfo AggInfo;

/* ---- FROM lists ---- */

/* SrcItem.kind */
#define SRC_TABLE 0 /* a base table read through cursor */
#define SRC_SUBQUERY                                       \
  1 /* subquery or view: rows materialized into ephemeral  \
       table `cursor` (columns 0..ncol-1, rowid order), or \
       produced by a coroutine (co_reg != 0) */

typedef struct SrcItem {
  const SqlSrcItem *ast; /* NULL for items made up by the code generator */
  const char *name;      /* the name qualified references use: alias or table */
  const char *db;        /* "main" (qualifier), or NULL when not written */
  Table *tab;            /* base table; for a subquery a Table built for it
                            (names, affinities, collations of its result
                            columns; root 0, ncol = result width) */
  int kind;              /* SRC_* */
  int cursor;            /* table cursor / ephemeral table cursor */
  SqlSelect *sub;        /* SRC_SUBQUERY: the SELECT (view body for views) */
  int co_reg;            /* SRC_SUBQUERY as coroutine: its register (0 = materialized) */
  int co_out;            /* coroutine: first output register (ncol regs) */
  uint8_t jointype;      /* SQL_JOIN_* joining this item to the previous ones */
  uint8_t is_view;       /* sub came from a view */
  uint8_t not_indexed;
  const char *indexed_by;
  SqlExpr *on;           /* ON expression (USING/NATURAL turned into ON terms by
                            compile_src_resolve_joins) */
  uint64_t colused;      /* bit i: column i is read (bit 63: a column >= 63);
                            rowid reads are not counted */
  int null_reg;          /* LEFT JOIN: register holding 1 while the row is a
                            NULL-padded one (set by compile_where_begin), else 0 */
  SqlExprList *tvf_args; /* a virtual table written t(args): those arguments
                            (equalities on its hidden columns, compile_vtab.c) */
  int idb;               /* SRC_TABLE: the table's database (CompileEnv.dbs index) */
  /* A parenthesized join (SQLite's nested FROM): nest is its SELECT * (its
   * SelInfo.ncols say which table name each result column answers to) and
   * nest_tab that result's Table. Either the item itself is that subquery
   * (sub == nest, materialized) or the join was flattened: its items follow
   * here, this one first (nest_n items), the others marked in_nest; names
   * are looked up through the first one (compile_src_nest_ref). */
  SqlSelect *nest;
  Table *nest_tab;
  const char *nest_alias;   /* its alias, or NULL */
  uint8_t cte_materialized; /* a CTE written AS MATERIALIZED (never a co-routine) */
  struct CteUse *cte_use;   /* a CTE: the record of its uses (compile_select.c) */
  int nest_n;
  uint8_t in_nest;
} SrcItem;

struct SrcList {
  int n;
  SrcItem *a;
};

/* Build the FROM list of a SELECT (compile_select.c): looks up tables and
 * views ("no such table: t"), makes SrcItems for subqueries and views
 * (their Tables with column names/affinities), assigns cursors, checks
 * alias clashes. Views and subqueries are resolved recursively here. Returns
 * NULL after compile_parse_error. */
SrcList *compile_src_from_ast(Parse *, const SqlSrcList *from, NameCtx *outer);
/* A one-table list for UPDATE/DELETE/INSERT/triggers (compile_select.c). */
SrcList *compile_src_single(Parse *, Table *tab, const char *alias);
/* Put the INDEXED BY / NOT INDEXED of a one-table DML's target a on s's item. */
void compile_src_index_hint(SrcList *s, const SqlSrcItem *a);
/* 0 after "no such index: X" when INDEXED BY name (NULL: none) names no index of tab. */
int compile_src_indexed_by_ok(Parse *, const Table *tab, const char *name);
/* Turn NATURAL and USING into ON terms, after resolution set up names
 * (compile_select.c). */
int compile_src_resolve_joins(Parse *, SrcList *);
/* The item whose cursor is cur, or NULL. */
SrcItem *compile_src_find_cursor(SrcList *, int cur);
/* Emit code that fills the ephemeral table of a SRC_SUBQUERY item (once, with
 * a Once guard when correlated=0) -- called by compile_where_begin before looping.
 * For an item run as a co-routine (co_reg set): the co-routine, started
 * again where this is emitted. */
void compile_src_code_subquery(Parse *, SrcItem *);
/* 1 if the SRC_SUBQUERY item can run as a co-routine that yields its rows
 * one at a time (a subquery, view or CTE -- recursive too -- but not one
 * filled by an op or written AS MATERIALIZED), when the loops keep it
 * outermost. */
int compile_src_can_coroutine(Parse *, const SrcItem *);

/* A pragma usable in FROM as pragma_NAME(...) (src/compile/pragma_tab.c). */
typedef struct SqlPragmaTab {
  const char *name;        /* without the "pragma_" prefix */
  int ncol;                /* result columns */
  const char *const *cols; /* their names; NULL: one column named after the pragma */
  int hidden;              /* SQL_PRAGMA_ARG | SQL_PRAGMA_SCHEMA: hidden columns "arg",
                              "schema" (in that order) after the result columns */
} SqlPragmaTab;
#define SQL_PRAGMA_ARG 1
#define SQL_PRAGMA_SCHEMA 2
/* The entry for name (no prefix, any case), or NULL. */
const SqlPragmaTab *compile_sql_pragma_tab(const char *name);
/* The order SQLite's table hash lists n names inserted in the given order
 * (rehash to 2 * count buckets, at most 64, before the 10th, 21st, ...
 * insertion): the permutation, shale_malloc'ed (free it), or NULL. */
int *compile_sql_table_hash_order(const char *const *names, int n);

/* ---- name resolution (resolve.c) ---- */

/* NameCtx.flags */
#define NC_ALLOW_AGG 0x0001   /* aggregate functions allowed here */
#define NC_HAS_AGG 0x0002     /* out: an aggregate of this query was seen */
#define NC_IN_AGG 0x0004      /* inside an aggregate's arguments */
#define NC_NO_SUBQUERY 0x0008 /* CHECK, index expressions, DEFAULT: no subqueries */
#define NC_NO_COLUMN 0x0010   /* DEFAULT: no column references */
#define NC_ALLOW_WIN 0x0020   /* window functions allowed */
#define NC_IS_CHECK 0x0040    /* "...prohibited in CHECK constraints" */
#define NC_IS_INDEX 0x0080    /* "...prohibited in index expressions" */
#define NC_IS_PARTIAL 0x0100  /* partial index WHERE */
#define NC_IS_GENCOL 0x0200   /* generated column */
#define NC_ORDER_BY 0x0400    /* resolving ORDER BY/GROUP BY: aliases first */
#define NC_HAS_CORREL 0x0800  /* out: referred to an outer query */
#define NC_IN_ON 0x1000       /* resolving an ON clause */
#define NC_FROM_SCHEMA                                             \
  0x2000 /* an expression of the schema (DEFAULT, CHECK, generated \
            column, index) compiled for a row: a missing           \
            function is "unknown function: f()" */

/* One level of name lookup. Lookups try src, then (for unqualified names in
 * ORDER BY/GROUP BY/HAVING/WHERE) the result aliases, then outer. */
struct NameCtx {
  SrcList *src;        /* FROM items visible at this level (may be NULL) */
  SqlExprList *result; /* result columns, for alias references */
  NameCtx *outer;      /* enclosing query */
  int flags;           /* NC_* */
  AggInfo *agg;        /* the query's aggregate info, or NULL */
  /* Trigger bodies: NEW/OLD refer to trig_tab; trig_mask bit 0 OLD, bit 1 NEW
   * available. Resolution turns NEW.x / OLD.x into SQL_E_TRIGREF. In an
   * INSTEAD OF / UPDATE / INSERT trigger body or WHEN clause only. */
  const Table *trig_tab;
  int trig_mask;
  /* UPSERT/CHECK/generated columns: bare column names resolve against
   * self_tab as SQL_E_COLREF with cursor self_cursor (CHECK and generated
   * columns are evaluated with the row in registers: see compile_code_column). */
  const char *err_ctx; /* "CHECK constraints", "index expressions", ... */
};

/* Resolve e in place within nc: column names -> SQL_E_COLREF (with
 * colused bits set), functions -> func (errors "no such function: f",
 * "wrong number of arguments to function f()", "misuse of aggregate: f()"),
 * subqueries resolved recursively (compile_select_resolve), variables checked.
 * Returns 0, or nonzero after compile_parse_error. */
int compile_resolve_expr(Parse *, NameCtx *, SqlExpr *e);
int compile_resolve_list(Parse *, NameCtx *, SqlExprList *);
/* ORDER BY / GROUP BY terms: an integer constant k is result column k
 * ("1st ORDER BY term out of range - should be between 1 and N"), a bare
 * name matching an alias is that result expression; else compile_resolve_expr.
 * what = "ORDER" or "GROUP". */
/* SQLite's SQLITE_LIMIT_COLUMN check of an ORDER BY / GROUP BY list of n
 * terms (what: "ORDER", "GROUP"): "too many terms in ORDER BY clause" and
 * 1, else 0. */
int compile_resolve_terms_limit(Parse *, int n, const char *what);

/* ---- aggregates (compile_select.c) ---- */

typedef struct AggFunc {
  SqlExpr *expr; /* the SQL_E_FUNC call */
  const FuncDef *func;
  int acc_reg;         /* accumulator register */
  int distinct_cursor; /* ephemeral index for f(DISTINCT x), or -1 */
} AggFunc;

typedef struct AggCol {
  SqlExpr *expr; /* a SQL_E_COLREF read inside an aggregate query */
  int reg;       /* register holding its value for the current group */
} AggCol;

struct AggInfo {
  int nfunc, capfunc;
  AggFunc *funcs;
  int ncol, capcol;
  AggCol *cols;
  SqlExprList *group_by;
  int first_reg; /* first of the registers above (contiguous) */
};

/* ---- SELECT (compile_select.c) ---- */

/* SelectDest.kind */
#define SD_OUTPUT 1 /* ResultRow each row */
#define SD_SET                                              \
  2 /* IN (SELECT ...): MakeRecord with aff, IdxInsert into \
       ephemeral index `cursor` (opened by the caller) */
#define SD_MEM                                                         \
  3                 /* scalar subquery: first row into reg..reg+nreg-1 \
                       (NULL when no row); LIMIT 1 implied */
#define SD_EXISTS 4 /* EXISTS: reg = 1 on the first row */
#define SD_TABLE                                                           \
  5                    /* rows into ephemeral table `cursor` with NewRowid \
                          (FROM subqueries, views, INSERT ... SELECT staging) */
#define SD_COROUTINE 6 /* Yield reg each row, values in out..out+nreg-1 */
#define SD_DISCARD 7   /* evaluate and drop */
#define SD_UNION 8     /* record into ephemeral index `cursor` (UNION/DISTINCT) */
#define SD_EXCEPT 9    /* delete the record from ephemeral index `cursor` */
#define SD_REGS                                               \
  10 /* each row into out..out+nreg-1, then Gosub reg (INSERT \
        ... SELECT row by row) */

typedef struct SelectDest {
  int kind;        /* SD_* */
  int cursor;      /* SD_SET, SD_TABLE, SD_UNION, SD_EXCEPT */
  int reg;         /* SD_MEM/SD_EXISTS result, SD_COROUTINE/SD_REGS routine */
  int out;         /* SD_COROUTINE/SD_REGS: first output register */
  int nreg;        /* columns */
  const char *aff; /* SD_SET: affinity string for the key, or NULL */
  /* a recursive CTE's queue (compile_select.c): with ORDER BY, a priority
   * queue keyed by result columns qkey[0..nqkey) then a sequence number */
  const int *qkey;
  int nqkey;
} SelectDest;

/* Resolve a whole SELECT (all cores of a compound, nested subqueries): FROM
 * lists, '*' expansion, names, aggregates. Idempotent: a second call on the
 * same node does nothing. outer is the enclosing name context (correlated
 * subqueries) or NULL. */
int compile_select_resolve(Parse *, SqlSelect *, NameCtx *outer);
/* Generate code for a resolved SELECT into dest. */
int compile_select_code(Parse *, SqlSelect *, SelectDest *dest);
/* 1 if a core of the resolved SELECT refers to an enclosing query (its
 * name context was marked so during resolution). */
int compile_select_has_correl(const SqlSelect *);
/* Number of result columns of a resolved SELECT (after '*' expansion). */
int compile_select_ncol(const SqlSelect *);
/* The result column list (after '*' expansion) of a resolved SELECT core. */
SqlExprList *compile_select_result(const SqlSelect *);
/* Fill Parse.cols (names, decltypes, origins) for the top-level SELECT, by
 * SQLite's naming rules. */
int compile_select_result_names(Parse *, SqlSelect *);
/* A Table describing a resolved SELECT's result (names with SQLite's
 * ":1" dedup rule, affinities, collations): for views and FROM subqueries.
 * Allocated in Parse.arena. */
Table *compile_select_result_table(Parse *, SqlSelect *, const char *name,
                                   const SqlIdList *colnames);

/* ---- WHERE loops (compile_where.c, on src/plan/) ---- */

typedef struct WhereInfo WhereInfo;

/* compile_where_begin flags */
#define WHERE_ORDERBY_MIN 0x0001 /* min() optimization: first row only */
#define WHERE_ORDERBY_MAX 0x0002
#define WHERE_ONEPASS                                                                        \
  0x0004                          /* DML: the caller changes rows as it goes: item 0's table \
                                     cursor is opened for writing, no covering index */
#define WHERE_DISTINCT 0x0008     /* the caller wants distinct rows (hint) */
#define WHERE_GROUPBY 0x0010      /* order_by is a GROUP BY list */
#define WHERE_NO_REORDER 0x0020   /* keep the FROM order (CROSS JOIN rules hold anyway) */
#define WHERE_ORDER_PREFIX 0x0040 /* the caller block-sorts past a delivered prefix */
#define WHERE_SORTBYGROUP 0x0080  /* with WHERE_GROUPBY: groups in its term order (else any) */

/* SQLite's LEFT JOIN simplification (compile_where.c): a LEFT JOIN item whose
 * NULL row the WHERE clause (or an inner ON clause) rejects becomes an inner
 * join; also run by compile_flatten_core before it flattens, as SQLite does. */
void compile_where_simplify_left_joins(SrcList *src, const SqlExpr *where);
/* How many SELECT cores (and parenthesized joins, each a SELECT in SQLite)
 * of the statement end before byte end of its text: SQLite's parser numbers
 * them in that order (EXPLAIN QUERY PLAN's subquery numbers; compile_window.c). */
int compile_cores_before(Parse *, int end);
/* SQLite's number of the SELECT * it makes for parenthesized join a. */
int compile_nest_number(Parse *, const SqlSrcItem *a);
/* SrcItem.jointype: a LEFT JOIN so simplified (the second run finds the same) */
#define SRC_JOIN_WAS_LEFT 0x80

/* Open nested loops over src (in the order the planner chooses) that visit
 * every combination satisfying where (may be NULL) and the ON clauses,
 * LEFT JOINs padded with NULL rows. The code emitted after compile_where_begin
 * runs once per combination; compile_where_end closes the loops. order_by (may be
 * NULL) is what the caller will sort by: if the chosen loops deliver rows in
 * that order, compile_where_order_satisfied returns 1 and the caller skips its
 * sorter. Adds EXPLAIN QUERY PLAN rows (SCAN/SEARCH ... USING ...). Returns
 * NULL after compile_parse_error. */
WhereInfo *compile_where_begin(Parse *, SrcList *src, SqlExpr *where, SqlExprList *order_by,
                               int flags);
/* compile_where_begin in two steps: compile_where_plan analyses the terms and picks the
 * loops (no code; compile_where_one_row, compile_where_scan_index and compile_where_order_satisfied
 * answer from then on), compile_where_code emits them (nonzero after an error). The
 * caller may emit code in between (it runs before the loops). */
WhereInfo *compile_where_plan(Parse *, SrcList *src, SqlExpr *where, SqlExprList *order_by,
                              int flags);
int compile_where_code(WhereInfo *);
/* Between compile_where_plan and compile_where_code of a SELECT without
 * aggregates: drops the loop of each LEFT JOIN item that only its own ON
 * clause reads when it finds at most one row per outer row (any number with
 * distinct: the caller removes duplicate rows), as SQLite does. */
void compile_where_omit_noop(WhereInfo *, const SqlExprList *result, const SqlExprList *order_by,
                             int distinct);
/* The index a single-table loop walks (scan or search), or NULL for the
 * table itself (rowid, a WITHOUT ROWID table's PRIMARY KEY, MULTI-INDEX OR:
 * rowids collected first). */
const Index *compile_where_scan_index(const WhereInfo *);
/* WHERE_ONEPASS, between compile_where_plan and compile_where_code: when the
 * single loop walks an index (*idx, as compile_where_scan_index), the cursor it
 * will walk it with, opened for writing, so that the caller can delete the
 * row's entry where the loop stands (OP_Delete, no seek; the loop's Next then
 * goes on from the entry after it). Else -1 and *idx = NULL. */
int compile_where_write_index(WhereInfo *, const Index **idx);
int compile_where_order_satisfied(const WhereInfo *);
/* When the loops do not deliver order_by: how many of its leading terms they
 * do deliver (0: none), so the caller may sort each run of rows equal on
 * those terms alone (SQLite's "RIGHT PART OF ORDER BY"). */
int compile_where_order_prefix(const WhereInfo *);
/* 1 if the loops visit at most one row: a single table looked up by rowid
 * or by every column of a UNIQUE index with "=" (SQLite's one-pass single
 * row case). */
int compile_where_one_row(const WhereInfo *);
/* Label that moves to the next combination (a "continue"). */
int compile_where_continue_label(const WhereInfo *);
/* Label just after the loops (a "break"). */
int compile_where_break_label(const WhereInfo *);
void compile_where_end(WhereInfo *);
/* Position table cursor tab_cur on the row of index cursor idx_cur's entry
 * (its rowid, or a WITHOUT ROWID table's PRIMARY KEY columns); jumps to
 * miss when there is none. */
void compile_where_seek_row(Parse *, const Table *tab, int tab_cur, const Index *idx, int idx_cur,
                            int miss);

/* ---- expressions (compile_expr.c) ---- */

/* Evaluate e into r[target]. */
void compile_expr_code(Parse *, SqlExpr *e, int target);
/* Evaluate list->a[i].expr into r[target + i] for every i. */
void compile_expr_code_list(Parse *, SqlExprList *list, int target);
/* Jump to label if e is true (false); NULL jumps iff jumpifnull. */
void compile_expr_if_true(Parse *, SqlExpr *e, int label, int jumpifnull);
void compile_expr_if_false(Parse *, SqlExpr *e, int label, int jumpifnull);
/* A new `left = <register reg>` (the register without affinity of its own:
 * the comparison takes left's affinity and collation), or NULL (no memory). */
SqlExpr *compile_expr_eq_reg(Parse *, SqlExpr *left, int reg);
/* SQLite's affinity of an expression (AFF_* or 0 for none). */
char compile_expr_affinity(const SqlExpr *e);
/* The collation of an expression (explicit COLLATE, else a column's), or
 * NULL for BINARY; the comparison collation of a binary operator
 * (left first, as SQLite). Unknown name: compile_parse_error "no such collation
 * sequence: X". */
const Collation *compile_expr_collation(Parse *, const SqlExpr *e);
const Collation *compile_expr_cmp_collation(Parse *, const SqlExpr *l, const SqlExpr *r);
/* Affinity to apply when comparing l with r (SQLite's rules), AFF_* or 0. */
char compile_expr_cmp_affinity(const SqlExpr *l, const SqlExpr *r);
/* 1 if e reads no column, parameter-free or not (no side effects, no
 * subquery, no non-deterministic function): it can be computed once. */
int compile_expr_is_constant(const SqlExpr *e);
/* Read column col (-1 = rowid) of table tab positioned in cursor cur into
 * r[target]: honours the rowid alias, WITHOUT ROWID storage slots, a
 * covering index (compile_parse_set_cover), defaults of short records (Column p4),
 * REAL affinity (RealAffinity) and virtual generated columns. */
void compile_code_column(Parse *, const Table *tab, int cur, int col, int target);
/* Emit a constant expression once (hoisted to the epilogue) and return its
 * register (regs reused per statement). Non-constant e: plain compile_expr_code
 * into a fresh register. */
int compile_expr_code_once(Parse *, SqlExpr *e);

/* ---- DML (compile_dml.c, compile_insert.c, compile_update.c) and triggers
 * (compile_trigger.c) ---- */
int compile_dml_insert(Parse *, const SqlStmt *);
int compile_dml_update(Parse *, const SqlStmt *);
int compile_dml_delete(Parse *, const SqlStmt *);
/* Run the triggers of tab for op (TRIGGER_INSERT/UPDATE/DELETE) and timing
 * (TRIGGER_BEFORE/AFTER/INSTEAD_OF): old_reg/new_reg hold rowid then every
 * column (ncol+1 registers each) or 0 when absent; changed (UPDATE) is the
 * per-column set, for UPDATE OF. on_ignore = label a RAISE(IGNORE) jumps to. */
void compile_trigger_code(Parse *, const Table *tab, int op, int timing, const uint8_t *changed,
                          int old_reg, int new_reg, int on_conflict, int on_ignore);
/* 1 if tab has any trigger for op/timing. */
int compile_trigger_exists(Parse *, const Table *tab, int op, int timing);

/* Compile a trigger into a sub-program (compile_trigger.c) for the caller's
 * own use (foreign-key actions: compile_fk.c): t->sql is parsed; a trigger
 * without a name gets no Trace ops. NULL after an error recorded in p. */
VmProgram *compile_trigger_program_of(Parse *, const Trigger *t, const Table *tab, int on_conflict);
/* TRIGGER_EQP: the trigger programs' EXPLAIN QUERY PLAN rows after the
 * statement's own (called once the statement is compiled). */
void compile_trigger_eqp_flush(Parse *);

/* ---- foreign keys (compile_fk.c), all no-ops unless env->foreign_keys ----
 * Row registers: rowid then every column (the compile_trigger_code layout); changed
 * is the UPDATE's per-column set (NULL for INSERT/DELETE), rowid_changed 1
 * when the UPDATE assigns the rowid. */
/* Nonzero if writing tab (INSERT/DELETE: changed NULL) needs FK code; 2
 * (SQLite's value) for an UPDATE of a self-referencing child key or of a
 * parent key with an ON UPDATE action: then every index entry of the row is
 * rewritten, none kept. */
int compile_fk_required(Parse *, const Table *tab, const uint8_t *changed, int rowid_changed);
/* SQLite's checks for a row removed (old_reg) and/or added (new_reg): child
 * keys looked up in their parents, children of the row counted. */
void compile_fk_check(Parse *, const Table *tab, int old_reg, int new_reg, const uint8_t *changed,
                      int rowid_changed);
/* ON DELETE / ON UPDATE actions for a removed or changed parent row (after
 * it was written), as trigger sub-programs. */
void compile_fk_actions(Parse *, const Table *tab, int old_reg, int new_reg, const uint8_t *changed,
                        int rowid_changed);
/* DROP TABLE: the implicit DELETE FROM with its FK checks and actions. */
void compile_fk_drop_table(Parse *, const Table *tab);
/* The parent key fk refers to in par (SQLite's sqlite3FkLocateIndex): *idx =
 * NULL for the rowid, else the UNIQUE index; aicol[i] (fk->ncol entries) =
 * the child column matched with the key's column i. 1 if there is none
 * ("foreign key mismatch"). */
int compile_fk_parent_key(const Table *par, const ForeignKey *fk, const Index **idx, int *aicol);
/* The errors PRAGMA foreign_key_check[(table)] reports when prepared: "no
 * such table: T", "foreign key mismatch ..."; 1 after compile_parse_error. */
int compile_fk_check_pragma_prepare(Parse *, const char *table);

/* ---- DDL (compile_ddl.c) ---- */
int compile_ddl_create_table(Parse *, const SqlStmt *);
int compile_ddl_create_index(Parse *, const SqlStmt *);
int compile_ddl_create_view(Parse *, const SqlStmt *);
int compile_ddl_create_vtab(Parse *, const SqlStmt *);
int compile_ddl_create_trigger(Parse *, const SqlStmt *);
/* The error SQLite reports for a CREATE TRIGGER header (s may have no body)
 * before it reads the body: 1 after compile_parse_error, else 0 (emits no code). */
int compile_ddl_trigger_header_error(Parse *, const SqlStmt *);
int compile_drop(Parse *, const SqlStmt *);
int compile_ddl_reindex(Parse *, const SqlStmt *);
int compile_alter(Parse *, const SqlStmt *);
/* ANALYZE (compile_analyze.c): fills sqlite_stat1, then reloads the schema. */
int compile_ddl_analyze(Parse *, const SqlStmt *);

/* ---- the compile context (compile.c) ---- */

struct Parse {
  const CompileEnv *env;
  Schema *schema;
  const char *sql;   /* the whole text given to compile_sql */
  uint8_t uses_vtab; /* CompiledStmt.uses_vtab */
  /* a SELECT whose LIMIT (and OFFSET) a virtual table may see as
   * constraints (compile_select.c sets it, compile_vtab.c reads it): its one
   * FROM item, the values (literal or register), the offset counter */
  const struct SrcList *vl_src;
  SqlExpr *vl_limit, *vl_offset;
  int vl_offset_reg;
  SqlExprList *vl_order;
  UtilArena arena; /* invariant 1 */
  VmBuilder b;     /* the program being built */
  SqlStmt *stmt;   /* the top statement */
  int rc;          /* invariant 2 */
  char *errmsg;    /* shale_malloc'ed */
  /* transaction needs (invariant 4) */
  uint8_t need_read, need_write;
  uint8_t schema_changed; /* DDL: the API reloads the schema after running */
  uint8_t multi_write;    /* DML: may write more than one row (SQLite's isMultiWrite) */
  uint8_t vtab_sp;        /* a virtual-table write: 1 a one-row INSERT (no statement savepoint in
                             SQLite), 2 any other (CompiledStmt.vtab_stmt_sp) */
  uint8_t is_explain;     /* 1 EXPLAIN, 2 EXPLAIN QUERY PLAN */
  int nested;             /* > 0 while compiling a trigger sub-program */
  int in_view;            /* > 0 while resolving a view's body */
  int from_ddl;           /* > 0 while resolving the body of a view or trigger
                             outside TEMP (SQLite's EP_FromDDL: unsafe functions) */
  int init_addr;          /* address of Init */
  int once_label;         /* epilogue label (constant hoisting) */
  /* hoisted constants: code emitted in the epilogue (copied there at finish) */
  VmOp *const_ops;
  int nconst_ops, capconst_ops;
  /* covering-index redirections: reads of table cursor tab_cur come from
   * index cursor idx_cur (compile_parse_set_cover) */
  struct ParseCover {
    int tab_cur, idx_cur;
    const Index *idx;
    int reg;      /* nonzero: a co-routine's item; column i is in r[reg + i] */
    int seek_reg; /* with idx not covering: nonzero while the table row is looked up
                     only when a column idx lacks is read (SQLite's deferred seek); the
                     register is 1 once it is, 0 for each new index entry */
  } * covers;
  int ncover, capcover;
  /* result columns of the top statement (compile_select_result_names) */
  int ncol;
  ResultCol *cols;
  /* EXPLAIN QUERY PLAN rows */
  EqpRow *eqp;
  int neqp, capeqp;
  int eqp_parent;   /* id new rows hang under (where/select set it) */
  EqpRow *eqp_trig; /* TRIGGER_EQP: the trigger programs' rows, after ours */
  int neqp_trig, capeqp_trig;
  int eqp_next_id;
  /* compile_parse_table_db's last answer (the schemas do not change while a
   * statement compiles) */
  const Table *tdb_tab;
  int tdb_db;
  /* the table the statement names as its target, where it was found, and
   * the AST string that named it (compile_parse_schema_table) */
  const char *target_name;
  const Schema *target_schema;
  Table *target_tab;
  /* compile_trigger_exists found no trigger in any database while p->schema
   * and p->idb were these (NULL: not known) */
  const Schema *no_trig_schema;
  int no_trig_idb;
  /* trigger compilation: program-wide data */
  const Table *trig_tab; /* table of the trigger being compiled */
  int trig_depth;
  /* select part (compile_select.c, resolve.c): per-SELECT resolution data */
  struct SelectState *compile_select_state;
  /* foreign keys (compile_fk.c): action programs compiled for this
   * statement (outermost Parse only); DROP TABLE's implicit DELETE runs with
   * disable_triggers set (no user triggers, missing parents tolerated) */
  struct FkAct *fk_acts;
  struct TrigProg *trig_progs; /* compile_trigger.c: the statement's trigger programs */
  uint8_t disable_triggers;
  /* outermost Parse: the trigger whose program was compiled last (SQLite's
   * pTriggerPrg head; compile_trigger.c sets it, compile_fk.c reads it) */
  const Trigger *last_trig;
  /* databases (ATTACH/TEMP): idb is the database the statement targets
   * (schema == its schema): DDL and DML work there, compile_parse_need_read/write
   * and the database-level ops (SetCookie, CreateBtree, ...) name it.
   * rmask/wmask: databases needing a read/write transaction (epilogue).
   * scope_db1: when nonzero, unqualified names resolve only in database
   * scope_db1 - 1 (bodies of non-TEMP triggers and views). */
  int idb;
  uint32_t rmask, wmask;
  int scope_db1;
};

/* Ask the authorizer (env->auth) about an action: AUTH_OK (also when there
 * is none), AUTH_IGNORE, or AUTH_DENY after recording SHALE_AUTH "not
 * authorized" (a malfunctioning answer records "authorizer malfunction" and
 * also returns AUTH_DENY). The trigger argument comes from p. */
int compile_parse_auth(Parse *, int action, const char *a, const char *b, const char *db);

/* Record the first error (printf-style message) with code rc (SHALE_ERROR
 * unless said otherwise). */
void compile_parse_error(Parse *, const char *fmt, ...);
void compile_parse_error_code(Parse *, int rc, const char *fmt, ...);
void compile_parse_nomem(Parse *);
static inline int parse_failed(const Parse *p) { return p->rc != 0; }
/* Arena helpers (NULL after recording SHALE_NOMEM). */
void *compile_parse_alloc(Parse *, size_t n); /* zeroed */
char *compile_parse_strdup(Parse *, const char *z);
/* Emitting: thin wrappers of vm_builder_* on p->b. */
static inline int emit(Parse *p, int op, int p1, int p2, int p3) {
  return vm_builder_add(&p->b, op, p1, p2, p3);
}
static inline int emit_label(Parse *p) { return vm_builder_label(&p->b); }
static inline void emit_resolve(Parse *p, int label) { vm_builder_resolve(&p->b, label); }
static inline int emit_regs(Parse *p, int n) { return vm_builder_regs(&p->b, n); }
static inline int emit_cursor(Parse *p) { return vm_builder_cursor(&p->b); }
static inline int emit_addr(Parse *p) { return vm_builder_addr(&p->b); }
/* The statement reads / writes database p->idb (epilogue Transaction). */
void compile_parse_need_read(Parse *);
void compile_parse_need_write(Parse *);
/* ... database idb. */
void compile_parse_need_db(Parse *, int idb, int write);

/* ---- databases (compile.c) ---- */
/* Number of databases (>= 1), database i's name and schema (NULL if none).
 * The two asked most (every table reference, trigger check and epilogue)
 * are inline. */
static inline int compile_parse_ndb(const Parse *p) {
  return p->env && p->env->ndb > 0 ? p->env->ndb : 1;
}
const char *compile_parse_db_name(const Parse *, int i);
static inline Schema *compile_parse_db_schema(const Parse *p, int i) {
  /* the target's schema may be a stand-in (ALTER checks build one) */
  if (i == p->idb && p->schema) return p->schema;
  if (i == 0 || !p->env || p->env->ndb == 0) return p->env ? p->env->schema : NULL;
  return i > 0 && i < p->env->ndb ? p->env->dbs[i].schema : NULL;
}
Btree *compile_parse_db_bt(const Parse *, int i);
/* Index of the database named name ("main", "temp", attached), or -1. */
int compile_parse_find_db(const Parse *, const char *name);
/* The database whose schema holds tab (a Table of some schema, sqlite_schema
 * included); p->idb when none does (subquery tables, tables being built). */
int compile_parse_table_db(Parse *, const Table *tab);
/* Look up an object of kind PARSE_OBJ_* by optional schema name and name:
 * unqualified names search temp, main, then attached databases in order
 * (only scope_db1 - 1 when set). *idb gets the database (-1: not found or
 * unknown schema). sqlite_temp_master/sqlite_temp_schema name temp's
 * schema table. */
#define PARSE_OBJ_TABLE 0
#define PARSE_OBJ_INDEX 1
#define PARSE_OBJ_VIEW 2
#define PARSE_OBJ_TRIGGER 3
void *compile_parse_find_object(Parse *, int kind, const char *zdb, const char *name, int *idb);
/* schema_find_table(s, name), answered without a probe for the table the
 * statement names as its target (found when the statement's database was
 * chosen; name is the same AST string). */
Table *compile_parse_schema_table(Parse *, const Schema *s, const char *name);
/* compile_vtab.c. A virtual table t of the schema (schema.h invariant 5)
 * connected (lazily, xConnect): its declared Table (tab->vtab set), or NULL
 * after SQLite's error ("no such module: M", the module's message). */
Table *compile_parse_vtab_connect(Parse *, const Table *t, int idb);
/* t a virtual table that cannot be connected: the error, and 1; else 0. */
int compile_parse_vtab_missing(Parse *, const Table *);
/* The declared Table of a connected table whose statement compiled (NULL
 * if none was built): PRAGMA table_info reads its columns. */
const Table *compile_vtab_declared_table(const struct VtabTable *vt);
/* DROP TABLE of virtual table t (of p->idb): OP_VDestroy. */
void compile_parse_vtab_destroy(Parse *, const Table *t);
/* The WHERE side of a virtual-table scan (compile_where.c): the
 * constraints and xBestIndex answers for item `item` (pi gets the paths),
 * the VFilter of the chosen path (its argv coded, omitted terms marked in
 * coded), and its EXPLAIN QUERY PLAN line. */
typedef struct VtabWhere VtabWhere;
struct PlanItem;
struct Planner;
struct PlanLevel;
struct PlanTerm;
int compile_vtab_where_plan(Parse *, SrcItem *it, int item, struct PlanItem *pi, struct Planner *pl,
                            SqlExprList *order_by, VtabWhere **out);
/* An eponymous module named like FROM item a (SQLite: no xCreate, or xCreate
 * == xConnect): it becomes the module's own table, its arguments bound to
 * the hidden columns in order (compile_vtab_where_args adds "hidden = arg" terms
 * after the WHERE clause, as SQLite's sqlite3WhereTabFuncArgs). -1 if none,
 * 1 after an error, 0. */
int compile_vtab_from_item(Parse *, SrcItem *it, const SqlSrcItem *a);
/* The name of the eponymous module called name (DROP TABLE refuses it, as
 * SQLite: "table json_each may not be dropped"), or NULL. */
const char *compile_vtab_eponymous_name(Parse *, const char *name);
/* The same for a module without xUpdate (its table may not be modified). */
const char *compile_vtab_eponymous_readonly(Parse *, const char *name);
/* t(args) for a virtual table t of the schema: -1 if there is none. */
int compile_vtab_schema_item(Parse *, SrcItem *it, const SqlSrcItem *a);
void compile_vtab_where_args(Parse *, SrcItem *it, struct Planner *pl, int on);
/* A SELECT of one virtual table with a LIMIT: its LIMIT/OFFSET may be
 * offered to xBestIndex (SQLite's sqlite3WhereAddLimit). */
void compile_vtab_limit_offer(Parse *, const struct SrcList *src, const SqlSelect *s, int limit_reg,
                              int offset_reg);
/* t (of schema s) is a shadow table: its name is V_SUFFIX for a virtual
 * table V of s whose module (version >= 3) says xShadowName(SUFFIX). */
int compile_vtab_is_shadow(Parse *, Schema *s, const Table *t);
/* With DEFENSIVE (CompileEnv.shadow_ro) and t a shadow table: SQLite's
 * "table %s may not be <what>" and 1; else 0. */
int compile_vtab_shadow_refused(Parse *, Schema *s, const Table *t, const char *what);
/* The definition a call of f (NULL: a built-in stub called name) with
 * nargs arguments uses when its overloading argument col (the first; the
 * left operand of LIKE, GLOB, MATCH, REGEXP) is a virtual table's column
 * whose xFindFunction overloads it (SQLite's sqlite3VtabOverloadFunction);
 * else f. */
const struct FuncDef *compile_vtab_overload_call(Parse *, const struct FuncDef *f, const char *name,
                                                 int nargs, const SqlExpr *col);
/* in_loop opens the IN loop of planner term `term` reading each value into
 * reg, and returns where the VFilter goes at eof (the loop's next); with
 * whole set, it builds the term's set and puts it in reg as one argument
 * (VInitIn: the module took the IN whole) and returns 0. */
typedef int (*VtabInLoop)(void *ctx, int term, int reg, int whole);
void compile_vtab_where_code(Parse *, VtabWhere *, const struct PlanLevel *L, uint8_t *coded,
                             const struct PlanTerm *terms, int brk, VtabInLoop in_loop, void *ctx);
void compile_vtab_where_eqp(Parse *, const VtabWhere *, const struct PlanLevel *L, const char *name,
                            const char *lj);
/* After the loop's top (per row): the IN terms compile_vtab_where_code looped
 * value by value and the module did not omit, each checked as `column =
 * the loop's value`, jumping to cont when false. */
void compile_vtab_where_recheck(Parse *, const VtabWhere *, const struct PlanTerm *terms, int cont);
/* 1 if the answer L loops over said SQLITE_INDEX_SCAN_UNIQUE (at most one row) */
int compile_vtab_where_unique(const VtabWhere *, const struct PlanLevel *L);
/* compile_vtab_dml.c: INSERT / UPDATE / DELETE on a connected virtual
 * table tab (its declared Table) through xUpdate; oe the conflict mode. */
int compile_vtab_insert(Parse *, const SqlInsert *ins, Table *tab, int oe);
int compile_vtab_update_stmt(Parse *, const SqlUpdate *u, Table *tab, int oe);
int compile_vtab_delete_stmt(Parse *, const SqlDelete *d, Table *tab);
/* 1 if zdb (may be NULL: 0) names another database than p->idb, or none. */
int compile_parse_other_db(const Parse *, const char *zdb);
/* Make database idb the statement's target (p->idb, p->schema). */
void compile_parse_set_db(Parse *, int idb);
/* Reads of table cursor tab_cur are served by index idx on cursor idx_cur
 * (covering index) until cleared with idx = NULL. */
void compile_parse_set_cover(Parse *, int tab_cur, const Index *idx, int idx_cur);
/* Reads of cursor tab_cur's columns come from registers reg, reg+1, ...
 * (a FROM item run as a co-routine) until cleared with reg = 0. */
void compile_parse_set_coroutine(Parse *, int tab_cur, int reg);
/* The redirection of tab_cur (set_cover) also looks the table row up at
 * the first read of a column its index lacks (ParseCover.seek_reg). */
void compile_parse_set_cover_seek(Parse *, int tab_cur, int seek_reg);
const struct ParseCover *compile_parse_find_cover(const Parse *, int tab_cur);
/* Add an EXPLAIN QUERY PLAN row under p->eqp_parent; returns its id. Only
 * an EXPLAIN QUERY PLAN statement (is_explain 2) keeps the row: others just
 * take a fresh id (no formatting). */
int compile_parse_eqp(Parse *, const char *fmt, ...);
/* Open cursor cur for reading (write = 0) or writing on table tab's tree
 * (the PRIMARY KEY index for WITHOUT ROWID) / on index idx: emits
 * OpenRead/OpenWrite with the KeyInfo or column count. */
void compile_parse_open_table(Parse *, int cur, const Table *tab, int write);
void compile_parse_open_index(Parse *, int cur, const Index *idx, int write);
/* KeyInfo for an index (cached per Parse, owned by the program arena so it
 * outlives the Parse: P4_KEYINFO pointers must stay valid while the program
 * lives). */
KeyInfo *compile_parse_index_keyinfo(Parse *, const Index *idx);
/* A KeyInfo for n columns with the given collations (may be NULL = all
 * BINARY) and sort orders (NULL = ascending), owned by the program. */
KeyInfo *compile_parse_keyinfo(Parse *, int n, const Collation **coll, const uint8_t *desc);
/* Compile one statement (any kind) into the current program: dispatch used
 * by compile_sql and by trigger bodies. */
int compile_stmt(Parse *, const SqlStmt *);

#endif /* SHALE_SQL_COMPILE_H */
