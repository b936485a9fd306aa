/*
 * ast.h -- the abstract syntax tree built by sql_parse (sql.h).
 *
 * Every node lives in the parse arena and dies with it. Names (identifiers)
 * are stored dequoted and NUL-terminated in the arena; string literals are
 * stored with '' escapes undone; numbers, blobs (hex digits only) and
 * variables keep their source text.
 *
 * Invariants:
 *  1. Each node's span (start, len) is the byte range of its source text in
 *     the string given to sql_parse: a result column without alias is named
 *     by its span, CREATE statements are stored in sqlite_schema by theirs.
 *  2. Lists are arrays (n items); an absent optional part is NULL / 0.
 *  3. A compound SELECT is a chain through `prior` (leftmost core last in
 *     the chain); ORDER BY, LIMIT, OFFSET and WITH belong to the head.
 */
#ifndef SHALE_SQL_AST_H
#define SHALE_SQL_AST_H

#include "parse.h"

typedef struct SqlExpr SqlExpr;
typedef struct SqlSelect SqlSelect;
typedef struct SqlStmt SqlStmt;
typedef struct SqlWindow SqlWindow;

typedef struct SqlSpan {
  int start, len;
} SqlSpan;

/* ---- expressions ---- */

typedef enum SqlExprOp {
  SQL_E_NULL,     /* NULL */
  SQL_E_INTEGER,  /* z = text ("123", "0x1F") */
  SQL_E_FLOAT,    /* z = text */
  SQL_E_STRING,   /* z = value */
  SQL_E_BLOB,     /* z = hex digits */
  SQL_E_VARIABLE, /* z = text ("?", "?3", ":a") */
  SQL_E_CTIME,    /* sub = TK_CURRENT_TIME / _DATE / _TIMESTAMP */
  SQL_E_ID,       /* bare name z (column, or a "string" in double quotes) */
  SQL_E_COLUMN,   /* qualified: schema (may be NULL) . table . z */
  SQL_E_STAR,     /* * or table.* in a result list (table may be NULL) */
  SQL_E_UNARY,    /* sub = TK_MINUS, TK_PLUS, TK_BITNOT, TK_NOT; a */
  SQL_E_BINARY,   /* sub = operator token (TK_AND, TK_EQ, TK_IS, ...); a, b */
  SQL_E_ISNOT,    /* a IS NOT b (also IS DISTINCT FROM) */
  SQL_E_ISNULL,   /* a ISNULL / a IS NULL spelled postfix */
  SQL_E_NOTNULL,  /* a NOTNULL / a NOT NULL */
  SQL_E_LIKE,     /* sub = TK_LIKE/GLOB/MATCH/REGEXP; a LIKE b [ESCAPE c]; not */
  SQL_E_BETWEEN,  /* a [NOT] BETWEEN b AND c */
  SQL_E_IN,       /* a [NOT] IN (list) | (select) | table | tvf(list) */
  SQL_E_EXISTS,   /* EXISTS (select) */
  SQL_E_SUBQUERY, /* (select) */
  SQL_E_ROW,      /* (a, b, ...): list */
  SQL_E_COLLATE,  /* a COLLATE z */
  SQL_E_CAST,     /* CAST(a AS type): z = type name */
  SQL_E_CASE,     /* CASE [a] WHEN list[2i] THEN list[2i+1] ... [ELSE b] END */
  SQL_E_FUNC,     /* z(list) [FILTER (WHERE filter)] [OVER window] */
  SQL_E_RAISE,    /* RAISE(sub = TK_IGNORE/ROLLBACK/ABORT/FAIL [, z]) */
  /* Made by name resolution (src/compile/resolve.c), never by the parser: */
  SQL_E_COLREF,  /* a column of a FROM item: cursor, column (-1 = rowid), tab, aff */
  SQL_E_TRIGREF, /* NEW.x / OLD.x in a trigger body: cursor 1 = NEW, 0 = OLD; column
                  * (-1 = rowid), tab */
  SQL_E_REG      /* the value already sits in register reg (aggregate results,
                  * GROUP BY terms, values computed once) */
} SqlExprOp;

typedef struct SqlExprList SqlExprList;

/* SQL_EF_* flags */
#define SQL_EF_NOT 0x01      /* NOT LIKE, NOT BETWEEN, NOT IN */
#define SQL_EF_DISTINCT 0x02 /* f(DISTINCT ...) */
#define SQL_EF_STAR 0x04     /* f(*) */
#define SQL_EF_QUOTED 0x08   /* SQL_E_ID written in double quotes (may be a string) */
#define SQL_EF_PAREN 0x10    /* the expression was written in parentheses */
#define SQL_EF_TVF 0x20      /* IN schema.func(args): a table-valued function call */
/* SQL_E_FUNC, set by name resolution: the call is in a CHECK
 * constraint (1), a generated column (2) or an index expression or partial
 * index WHERE (3), where a non-deterministic use ('now'...) fails at run time */
#define SQL_EF_PURE_SHIFT 6
#define SQL_EF_PURE_MASK 0xC0

struct SqlExpr {
  uint8_t op;      /* SqlExprOp */
  uint8_t flags;   /* SQL_EF_* */
  uint16_t sub;    /* operator token, see SqlExprOp */
  uint16_t height; /* depth of the tree below (1 for a leaf), SQLite-style */
  int ivar;        /* SQL_E_VARIABLE: its parameter number (1-based), as SQLite assigns */
  SqlSpan span;
  const char *z;      /* text, name, type name, collation, function name */
  const char *table;  /* SQL_E_COLUMN, SQL_E_STAR, SQL_E_IN on a table */
  const char *schema; /* SQL_E_COLUMN, SQL_E_IN on a table */
  SqlExpr *a, *b, *c; /* operands */
  SqlExprList *list;  /* arguments, IN list, CASE arms, row items */
  SqlSelect *select;  /* subquery */
  SqlExpr *filter;    /* FILTER (WHERE ...) */
  SqlExprList *order; /* ORDER BY inside an aggregate call */
  SqlWindow *over;    /* OVER ... */
  /* ---- filled by name resolution and the code generator; 0 from the parser ---- */
  int cursor;                 /* SQL_E_COLREF: VM cursor of the FROM item */
  int column;                 /* SQL_E_COLREF/TRIGREF: column index, -1 = rowid */
  int reg;                    /* SQL_E_REG: the register; elsewhere: see compile.h */
  int agg_slot;               /* SQL_E_FUNC aggregate: slot in its query's AggInfo;
                                 SQL_E_COLREF in an aggregate query: column slot */
  char aff;                   /* SQL_E_COLREF/TRIGREF: the column's affinity */
  uint8_t agg;                /* SQL_E_FUNC: 1 = aggregate call, 2 = window call */
  uint8_t depth;              /* SQL_E_COLREF: how many queries out the FROM item is
                                 (0 = this query, 1 = the enclosing one, ...) */
  const struct Table *tab;    /* SQL_E_COLREF/TRIGREF: the table (or a subquery's) */
  const struct FuncDef *func; /* SQL_E_FUNC: the function resolved */
  const struct SqlExpr *orig; /* SQL_E_REG: the expression it replaced (affinity,
                                 collation, naming) */
};

/* Sort order for ORDER BY / index columns */
#define SQL_SORT_NONE 0
#define SQL_SORT_ASC 1
#define SQL_SORT_DESC 2
#define SQL_NULLS_NONE 0
#define SQL_NULLS_FIRST 1
#define SQL_NULLS_LAST 2

typedef struct SqlExprItem {
  SqlExpr *expr;
  const char *name;   /* alias (result column), column name (SET), NULL */
  SqlSpan span;       /* text of the item's expression (result column naming) */
  uint8_t sort;       /* SQL_SORT_* */
  uint8_t nulls;      /* SQL_NULLS_* */
  const char **names; /* UPDATE SET (a, b) = ...: nnames column names */
  int nnames;
} SqlExprItem;

struct SqlExprList {
  int n, cap;
  SqlExprItem *a;
};

typedef struct SqlIdList {
  int n, cap;
  const char **a;
} SqlIdList;

/* ---- windows ---- */
enum { SQL_FRAME_NONE, SQL_FRAME_ROWS, SQL_FRAME_RANGE, SQL_FRAME_GROUPS };
enum {
  SQL_BOUND_NONE,
  SQL_BOUND_UNBOUNDED_PRECEDING,
  SQL_BOUND_PRECEDING,
  SQL_BOUND_CURRENT_ROW,
  SQL_BOUND_FOLLOWING,
  SQL_BOUND_UNBOUNDED_FOLLOWING
};
enum {
  SQL_EXCLUDE_NONE,
  SQL_EXCLUDE_NO_OTHERS,
  SQL_EXCLUDE_CURRENT_ROW,
  SQL_EXCLUDE_GROUP,
  SQL_EXCLUDE_TIES
};

struct SqlWindow {
  SqlSpan span;
  const char *name; /* WINDOW name AS (...) or OVER name */
  const char *base; /* OVER (base ...) */
  SqlExprList *partition;
  SqlExprList *order;
  uint8_t frame;      /* SQL_FRAME_* */
  uint8_t start, end; /* SQL_BOUND_*; end NONE when no BETWEEN */
  uint8_t exclude;    /* SQL_EXCLUDE_* */
  SqlExpr *start_expr, *end_expr;
  SqlWindow *next; /* WINDOW clause list */
};

/* ---- FROM ---- */
/* join type bits (SQLite's combination rules) */
#define SQL_JOIN_INNER 0x01
#define SQL_JOIN_CROSS 0x02
#define SQL_JOIN_NATURAL 0x04
#define SQL_JOIN_LEFT 0x08
#define SQL_JOIN_RIGHT 0x10
#define SQL_JOIN_OUTER 0x20
#define SQL_JOIN_COMMA 0x40 /* written as "," */

typedef struct SqlSrcItem {
  SqlSpan span;
  const char *schema, *name, *alias;
  SqlSelect *select;   /* subquery in FROM */
  SqlExprList *args;   /* table-valued function arguments */
  uint8_t has_args;    /* name(...) was written (args may be empty) */
  uint8_t jointype;    /* how this item joins the previous one (SQL_JOIN_*) */
  uint8_t not_indexed; /* NOT INDEXED */
  const char *indexed_by;
  SqlExpr *on;
  SqlIdList *using_cols;
  struct SqlSrcList *nested; /* ( a JOIN b ) in parentheses */
} SqlSrcItem;

typedef struct SqlSrcList {
  int n, cap;
  SqlSrcItem *a;
} SqlSrcList;

/* ---- SELECT ---- */
typedef struct SqlCte {
  const char *name;
  SqlIdList *columns;
  uint8_t materialized; /* 0 no hint, 1 MATERIALIZED, 2 NOT MATERIALIZED */
  SqlSelect *select;
  SqlSpan span;
} SqlCte;

typedef struct SqlWith {
  uint8_t recursive;
  int n;
  SqlCte *a;
} SqlWith;

enum { SQL_SEL_SELECT, SQL_SEL_VALUES };
enum {
  SQL_COMPOUND_NONE,
  SQL_COMPOUND_UNION,
  SQL_COMPOUND_UNION_ALL,
  SQL_COMPOUND_INTERSECT,
  SQL_COMPOUND_EXCEPT
};

struct SqlSelect {
  SqlSpan span;
  uint8_t kind;     /* SQL_SEL_* */
  uint8_t distinct; /* 1 DISTINCT, 2 ALL, 0 neither */
  uint8_t compound; /* how this core combines with prior (SQL_COMPOUND_*) */
  SqlSelect *prior;
  SqlWith *with;
  SqlExprList *cols; /* result columns, or VALUES rows (each SQL_E_ROW) */
  SqlSrcList *from;
  SqlExpr *where;
  SqlExprList *group_by;
  SqlExpr *having;
  SqlWindow *windows; /* WINDOW clause */
  SqlExprList *order_by;
  SqlExpr *limit, *offset;
  /* filled by compile_select_resolve (compile_select.c); NULL from the parser */
  struct SelInfo *info;
};

/* ---- statements ---- */
typedef enum SqlStmtKind {
  SQL_STMT_SELECT,
  SQL_STMT_INSERT,
  SQL_STMT_UPDATE,
  SQL_STMT_DELETE,
  SQL_STMT_CREATE_TABLE,
  SQL_STMT_CREATE_INDEX,
  SQL_STMT_CREATE_VIEW,
  SQL_STMT_CREATE_TRIGGER,
  SQL_STMT_CREATE_VTAB,
  SQL_STMT_DROP,
  SQL_STMT_ALTER,
  SQL_STMT_BEGIN,
  SQL_STMT_COMMIT,
  SQL_STMT_ROLLBACK,
  SQL_STMT_SAVEPOINT,
  SQL_STMT_RELEASE,
  SQL_STMT_PRAGMA,
  SQL_STMT_ATTACH,
  SQL_STMT_DETACH,
  SQL_STMT_VACUUM,
  SQL_STMT_ANALYZE,
  SQL_STMT_REINDEX
} SqlStmtKind;

/* ON CONFLICT resolution (also INSERT OR x, UPDATE OR x) */
enum { SQL_OE_NONE, SQL_OE_ROLLBACK, SQL_OE_ABORT, SQL_OE_FAIL, SQL_OE_IGNORE, SQL_OE_REPLACE };
/* foreign key actions */
enum {
  SQL_FK_NONE,
  SQL_FK_SET_NULL,
  SQL_FK_SET_DEFAULT,
  SQL_FK_CASCADE,
  SQL_FK_RESTRICT,
  SQL_FK_NO_ACTION
};

typedef struct SqlQualName {
  const char *schema, *name;
  SqlSpan span;   /* "schema.name" as written */
  int name_start; /* offset of the name itself: sqlite_schema stores
                   * "CREATE TABLE " + the text from here to the end */
} SqlQualName;

typedef struct SqlUpsert {
  SqlExprList *target; /* ON CONFLICT (cols...) or NULL */
  SqlExpr *target_where;
  uint8_t do_nothing;
  SqlExprList *set; /* DO UPDATE SET ... */
  SqlExpr *where;
  struct SqlUpsert *next;
} SqlUpsert;

typedef struct SqlInsert {
  uint8_t or_conflict; /* SQL_OE_*; REPLACE INTO is SQL_OE_REPLACE */
  SqlWith *with;
  SqlQualName table;
  const char *alias;
  SqlIdList *columns;
  SqlSelect *select; /* VALUES ... or SELECT ...; NULL for DEFAULT VALUES */
  SqlUpsert *upsert;
  SqlExprList *returning;
} SqlInsert;

typedef struct SqlUpdate {
  uint8_t or_conflict;
  SqlWith *with;
  SqlSrcItem *table; /* name, alias, INDEXED BY */
  SqlExprList *set;  /* item.name = column, or item.names for (a, b) = */
  SqlSrcList *from;
  SqlExpr *where;
  SqlExprList *returning;
  SqlExprList *order_by;
  SqlExpr *limit, *offset;
} SqlUpdate;

typedef struct SqlDelete {
  SqlWith *with;
  SqlSrcItem *table;
  SqlExpr *where;
  SqlExprList *returning;
  SqlExprList *order_by;
  SqlExpr *limit, *offset;
} SqlDelete;

/* column and table constraints */
enum {
  SQL_CONS_PRIMARY_KEY,
  SQL_CONS_NOT_NULL,
  SQL_CONS_NULL, /* a bare NULL constraint (accepted, no effect) */
  SQL_CONS_UNIQUE,
  SQL_CONS_CHECK,
  SQL_CONS_DEFAULT,
  SQL_CONS_COLLATE,
  SQL_CONS_REFERENCES,  /* column FOREIGN KEY */
  SQL_CONS_FOREIGN_KEY, /* table constraint */
  SQL_CONS_GENERATED
};

typedef struct SqlForeignKey {
  SqlIdList *from_cols; /* table constraint only */
  const char *table;
  SqlIdList *to_cols;
  uint8_t on_delete, on_update; /* SQL_FK_* */
  uint8_t deferrable; /* 0 none; 1 DEFERRABLE INITIALLY DEFERRED; 2 other DEFERRABLE; 3 NOT
                         DEFERRABLE */
  uint8_t initially;  /* 0 none, 1 DEFERRED, 2 IMMEDIATE */
  const char *match;  /* MATCH name */
} SqlForeignKey;

typedef struct SqlConstraint {
  uint8_t type;        /* SQL_CONS_* */
  uint8_t sort;        /* PRIMARY KEY ASC/DESC (column) */
  uint8_t on_conflict; /* SQL_OE_* */
  uint8_t autoincrement;
  uint8_t stored;   /* GENERATED ... STORED (1) / VIRTUAL (0) */
  const char *name; /* CONSTRAINT name */
  SqlExpr *expr;    /* CHECK, DEFAULT, GENERATED */
  const char *collate;
  SqlExprList *columns; /* table PRIMARY KEY / UNIQUE (indexed columns) */
  SqlForeignKey *fk;
  SqlSpan span;
} SqlConstraint;

typedef struct SqlColumnDef {
  const char *name;
  const char *type;      /* declared type: source text (a trailing GENERATED ALWAYS
                          * removed); NULL if none */
  const char *decl_type; /* the type as SQLite records it (PRAGMA table_info,
                          * affinity): dequoted, INT/INTEGER/REAL/TEXT/BLOB/ANY
                          * upper-cased; NULL if none */
  SqlSpan span;
  int ncons;
  SqlConstraint *cons;
} SqlColumnDef;

#define SQL_TABOPT_WITHOUT_ROWID 0x01
#define SQL_TABOPT_STRICT 0x02

typedef struct SqlCreateTable {
  uint8_t temp, if_not_exists;
  uint8_t options; /* SQL_TABOPT_* */
  SqlQualName name;
  int ncols;
  SqlColumnDef *cols;
  int ncons;
  SqlConstraint *cons; /* table constraints */
  SqlSelect *as_select;
} SqlCreateTable;

typedef struct SqlCreateIndex {
  uint8_t unique, if_not_exists;
  SqlQualName name;
  const char *table;
  SqlExprList *columns; /* expr (maybe COLLATE), sort */
  SqlExpr *where;
} SqlCreateIndex;

typedef struct SqlCreateView {
  uint8_t temp, if_not_exists;
  SqlQualName name;
  SqlIdList *columns;
  SqlSelect *select;
} SqlCreateView;

enum { SQL_TRIG_BEFORE = 1, SQL_TRIG_AFTER, SQL_TRIG_INSTEAD_OF };

typedef struct SqlCreateTrigger {
  uint8_t temp, if_not_exists;
  uint8_t time;   /* SQL_TRIG_*; 0 when not written (BEFORE) */
  uint16_t event; /* TK_DELETE, TK_INSERT, TK_UPDATE */
  uint8_t for_each_row;
  SqlQualName name;
  SqlIdList *update_of;
  const char *table_schema; /* ON schema.table (NULL if not written) */
  const char *table;
  SqlExpr *when;
  int nstmts;
  SqlStmt **stmts;
} SqlCreateTrigger;

typedef struct SqlCreateVtab {
  uint8_t if_not_exists;
  SqlQualName name;
  const char *module;
  int nargs;
  SqlSpan *args; /* each argument's raw text */
} SqlCreateVtab;

typedef struct SqlDrop {
  uint16_t object; /* TK_TABLE, TK_INDEX, TK_VIEW, TK_TRIGGER */
  uint8_t if_exists;
  SqlQualName name;
} SqlDrop;

enum {
  SQL_ALTER_RENAME_TABLE,
  SQL_ALTER_RENAME_COLUMN,
  SQL_ALTER_ADD_COLUMN,
  SQL_ALTER_DROP_COLUMN
};

typedef struct SqlAlter {
  uint8_t action; /* SQL_ALTER_* */
  SqlQualName table;
  const char *old_name; /* RENAME COLUMN / DROP COLUMN */
  const char *new_name; /* RENAME TO / RENAME COLUMN ... TO */
  SqlColumnDef *column; /* ADD COLUMN */
} SqlAlter;

typedef struct SqlPragma {
  SqlQualName name;
  SqlExpr *value; /* = value or (value); NULL if none */
  uint8_t call;   /* written as name(value) */
} SqlPragma;

struct SqlStmt {
  uint8_t kind;    /* SqlStmtKind */
  uint8_t explain; /* 0, 1 = EXPLAIN, 2 = EXPLAIN QUERY PLAN */
  SqlSpan span;    /* statement text without EXPLAIN prefix and ';' */
  int nvar;        /* number of parameters (the largest number assigned) */
  int nvar_names;  /* named parameters: var_names[i] for i < nvar_names */
  struct SqlVarName {
    int num;          /* parameter number */
    const char *name; /* ":a", "@b", "$c", "?3" as written */
  } * var_names;
  union {
    SqlSelect *select;
    SqlInsert insert;
    SqlUpdate update;
    SqlDelete del;
    SqlCreateTable create_table;
    SqlCreateIndex create_index;
    SqlCreateView create_view;
    SqlCreateTrigger create_trigger;
    SqlCreateVtab create_vtab;
    SqlDrop drop;
    SqlAlter alter;
    struct {
      uint16_t mode;
    } begin; /* 0, TK_DEFERRED, TK_IMMEDIATE, TK_EXCLUSIVE */
    struct {
      const char *savepoint;
    } rollback; /* ROLLBACK TO x; NULL otherwise */
    struct {
      const char *name;
    } savepoint; /* SAVEPOINT / RELEASE */
    SqlPragma pragma;
    struct {
      SqlExpr *file, *schema, *key;
    } attach;
    struct {
      SqlExpr *schema;
    } detach;
    struct {
      const char *schema;
      SqlExpr *into;
    } vacuum;
    struct {
      SqlQualName name;
      uint8_t has_name;
    } analyze; /* also REINDEX */
  } u;
};

/* ---- traversal (walk.c) ---- */
#define SQL_WALK_CONTINUE 0
#define SQL_WALK_ABORT 1
#define SQL_WALK_PRUNE 2

/* Callbacks return SQL_WALK_CONTINUE, SQL_WALK_PRUNE (skip this node's
 * children) or SQL_WALK_ABORT (stop). With select == NULL subqueries are not
 * entered. arg is for the caller. */
typedef struct SqlWalker {
  int (*expr)(struct SqlWalker *w, SqlExpr *e);
  int (*select)(struct SqlWalker *w, SqlSelect *s);
  void *arg;
} SqlWalker;

/* Pre-order walks; return SQL_WALK_ABORT if a callback aborted, else
 * SQL_WALK_CONTINUE. A SELECT walk visits every core of a compound (WITH
 * clauses first), and in each: result columns, FROM (subqueries, function
 * arguments, ON), WHERE, GROUP BY, HAVING, WINDOW, ORDER BY, LIMIT, OFFSET. */
int sql_walk_expr(SqlWalker *w, SqlExpr *e);
int sql_walk_select(SqlWalker *w, SqlSelect *s);

#endif /* SHALE_SQL_AST_H */
