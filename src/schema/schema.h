/*
 * schema.h -- the in-memory schema: tables, columns, indexes, views and
 * triggers of one database, as described by its sqlite_schema table.
 *
 * This layer only holds and looks up the objects; it does not parse SQL.
 * src/compile/schema_load.c fills a Schema by parsing each CREATE text (the AST
 * lives in the schema's arena, so the expression pointers kept here -- CHECK,
 * DEFAULT, generated columns, index expressions, partial WHERE, view SELECT,
 * trigger bodies -- stay valid until schema_free). The AST's types come from
 * src/parse/ast.h (the parse layer sits below this one: it depends on util
 * alone); this layer stores the pointers and never walks them.
 *
 * Owns: every object and string reachable from a Schema (one arena) and the
 * hash tables (shale_malloc), all released by schema_free.
 *
 * Invariants:
 *  1. Names are looked up ASCII-case-insensitively (SQLite's folding); a name
 *     is in at most one map of each kind.
 *  2. Table.rowid_alias is the column whose declared type is exactly INTEGER
 *     (any case) and that is the sole PRIMARY KEY column, not declared
 *     "PRIMARY KEY DESC" as a column constraint, in a rowid table; else -1.
 *  3. Column.storage is the column's slot in the stored record: table order
 *     for rowid tables, PRIMARY KEY columns first for WITHOUT ROWID tables;
 *     VIRTUAL generated columns have no slot (-1). The rowid alias has a slot
 *     (it is stored as NULL). A WITHOUT ROWID record is its PK index's key
 *     (Index.cols order); a column the PRIMARY KEY repeats with another
 *     collation fills two slots (storage is the first), so nstored may
 *     exceed the number of stored columns.
 *  4. Index.cols[0..nkey) are the declared key columns; cols[nkey..ncol) the
 *     columns appended to make the key unique: the rowid (col = -1) for rowid
 *     tables, the PRIMARY KEY columns not already in the key for WITHOUT ROWID
 *     tables (docs/format.md §7; ascending in automatic indexes, whatever the
 *     PRIMARY KEY says, as SQLite stores them). The WITHOUT ROWID primary key is itself an
 *     Index (origin 'pk') whose root is the table's root and whose trailing
 *     columns are the remaining stored columns.
 *  5. A virtual table (Table.vtab_module set) has ncol 0, root 0, no
 *     index, check or foreign key: it is in the table map only so that its
 *     name is taken and every statement naming it can answer as SQLite
 *     does when the module is missing.
 */
#ifndef SHALE_SCHEMA_H
#define SHALE_SCHEMA_H

#include <stdint.h>

#include "../parse/ast.h"
#include "../record/record.h"

typedef struct Schema Schema;
typedef struct Table Table;
typedef struct Index Index;

/* Column.hidden, as PRAGMA table_xinfo reports it */
#define COL_NORMAL 0
#define COL_HIDDEN 1 /* virtual-table hidden column */
#define COL_VIRTUAL 2
#define COL_STORED 3

/* Conflict resolution (same numbers as SQL_OE_* in ast.h). */
#define SCHEMA_OE_NONE 0
#define SCHEMA_OE_ROLLBACK 1
#define SCHEMA_OE_ABORT 2
#define SCHEMA_OE_FAIL 3
#define SCHEMA_OE_IGNORE 4
#define SCHEMA_OE_REPLACE 5

typedef struct Column {
  const char *name;
  const char *type; /* declared type as SQLite records it, NULL if none */
  char affinity;    /* AFF_* (record.h) */
  const char *coll; /* declared collation, NULL = BINARY */
  uint8_t notnull;
  uint8_t notnull_conflict; /* SCHEMA_OE_* */
  uint16_t pk;              /* 1-based position in the PRIMARY KEY, 0 if none */
  uint8_t hidden;           /* COL_* */
  uint8_t unique;           /* a column UNIQUE constraint was written */
  struct SqlExpr *dflt;     /* DEFAULT expression or NULL */
  const char *dflt_sql;     /* its text as written (PRAGMA table_info dflt_value) */
  struct SqlExpr *gen;      /* generated column expression (hidden 2/3) */
  const char *gen_sql;
  int storage; /* invariant 3 */
} Column;

typedef struct Check {
  const char *name; /* CONSTRAINT name or NULL */
  struct SqlExpr *expr;
  const char *sql; /* the expression's text */
} Check;

/* FOREIGN KEY actions (same numbers as SQL_FK_* in ast.h) */
#define SCHEMA_FK_NONE 0
#define SCHEMA_FK_SET_NULL 1
#define SCHEMA_FK_SET_DEFAULT 2
#define SCHEMA_FK_CASCADE 3
#define SCHEMA_FK_RESTRICT 4
#define SCHEMA_FK_NO_ACTION 5

typedef struct ForeignKey {
  int ncol;
  int *cols;                    /* child column indexes */
  const char *parent;           /* parent table name */
  const char **parent_cols;     /* ncol names, or NULL: the parent's PRIMARY KEY */
  uint8_t on_delete, on_update; /* SCHEMA_FK_* */
  uint8_t deferred;             /* DEFERRABLE INITIALLY DEFERRED */
  const char *match;            /* MATCH name or NULL */
} ForeignKey;

struct Table {
  const char *name;
  uint32_t root; /* 0 until known (views have none) */
  int ncol;
  Column *cols;
  int rowid_alias; /* invariant 2 */
  uint8_t without_rowid, strict, autoincrement, has_generated;
  uint8_t pk_conflict; /* PRIMARY KEY ON CONFLICT (SCHEMA_OE_*) */
  int npk;             /* PRIMARY KEY columns (0: none) */
  int *pk_cols;        /* column indexes in key order */
  uint8_t *pk_desc;
  int nstored;     /* columns with a storage slot */
  Index *indexes;  /* every index on the table (linked by next), creation order */
  Index *pk_index; /* WITHOUT ROWID: the PRIMARY KEY index (also in indexes) */
  int ncheck;
  Check *checks;
  int nfk;
  ForeignKey *fks;
  const char *sql; /* CREATE TABLE text (NULL for sqlite_schema) */
  int is_schema;   /* the built-in sqlite_schema table */
  /* A virtual table (CREATE VIRTUAL TABLE ... USING module): the module's
   * name, else NULL. Shale has no modules, so such a table has no columns,
   * indexes or root page (as SQLite's before it connects); every use of it
   * is "no such module: M" (invariant 5). */
  const char *vtab_module;
  /* A connected virtual table's Table (its declared columns, built by
   * src/compile/compile_vtab.c, not in any schema's lists): the registry's
   * VtabTable (src/vtab/vtab.h); NULL for every schema Table. */
  struct VtabTable *vtab;
  /* sqlite_stat1 (loaded with the schema): rows of the table, from its row
   * (idx NULL) or a non-partial index's first number; 0 when has_stat is 0 */
  uint8_t has_stat;
  int64_t stat_rows;
  /* set by the planner when it weighed an index search on the table (the
   * connection's hint for PRAGMA optimize, SQLite's TF_StatsUsed) */
  uint8_t stats_used;
};

/* Index.origin */
#define INDEX_ORIGIN_CREATE 'c' /* CREATE INDEX */
#define INDEX_ORIGIN_UNIQUE 'u' /* UNIQUE constraint */
#define INDEX_ORIGIN_PK 'p'     /* PRIMARY KEY constraint ("pk") */

#define INDEX_COL_ROWID (-1)
#define INDEX_COL_EXPR (-2)

typedef struct IndexColumn {
  int col;              /* table column, INDEX_COL_ROWID or INDEX_COL_EXPR */
  struct SqlExpr *expr; /* INDEX_COL_EXPR */
  const char *coll;     /* collation name (never NULL: "BINARY" by default) */
  uint8_t desc;
} IndexColumn;

struct Index {
  const char *name;
  Table *table;
  uint32_t root;
  int nkey; /* declared key columns */
  int ncol; /* all columns of a stored key (invariant 4) */
  IndexColumn *cols;
  uint8_t unique;
  uint8_t on_conflict; /* SCHEMA_OE_* */
  char origin;         /* INDEX_ORIGIN_* */
  uint8_t is_autoindex;
  struct SqlExpr *where; /* partial index WHERE, or NULL */
  const char *sql;       /* CREATE INDEX text; NULL for automatic indexes */
  Index *next;           /* next index of the same table */
  /* sqlite_stat1 (loaded with the schema): stat[0] entries, stat[i] the
   * average entries per distinct value of the first i key columns, for
   * i < nstat (<= nkey + 1); nstat 0: no statistics. Options of the row:
   * "unordered", "noskipscan". */
  int nstat;
  int64_t *stat;
  uint8_t stat_unordered, stat_noskipscan;
};

typedef struct View {
  const char *name;
  int ncol; /* column names given, or 0 */
  const char **cols;
  struct SqlSelect *select;
  const char *sql;
} View;

/* Trigger.timing / event */
#define TRIGGER_BEFORE 1
#define TRIGGER_AFTER 2
#define TRIGGER_INSTEAD_OF 3
#define TRIGGER_DELETE 1
#define TRIGGER_INSERT 2
#define TRIGGER_UPDATE 3

typedef struct Trigger {
  const char *name;
  const char *table;
  uint8_t timing, event;
  int nupdate_of;
  const char **update_of;
  struct SqlExpr *when;
  int nstmts;
  struct SqlStmt **stmts;
  const char *sql;
} Trigger;

/* Case-insensitive map name -> object (open addressing). */
typedef struct SchemaMap {
  int n, cap;
  struct SchemaMapSlot {
    const char *key;
    void *val;
    uint32_t hash; /* name_hash(key) (schema.c), compared before the key */
  } * slots;
} SchemaMap;

struct Schema {
  UtilArena arena;
  SchemaMap tables, indexes, views, triggers;
  uint32_t cookie;      /* schema cookie it was loaded at */
  uint32_t file_format; /* schema format number */
  int text_enc;         /* the file's text encoding (RECORD_ENC_*; a new file's if empty) */
  Table *schema_table;  /* sqlite_schema */
  /* names of the tables and views in sqlite_schema row order (compile_schema_load
   * fills it; NULL for a schema built otherwise): the order SQLite's
   * table hash is filled in, which ANALYZE follows */
  int norder;
  const char **order;
};

/* A new empty Schema holding only the sqlite_schema table (also found as
 * sqlite_master). NULL on out-of-memory. */
Schema *schema_new(void);
void schema_free(Schema *);
/* The arena objects and AST of this schema live in (dies with it). */
static inline UtilArena *schema_arena(Schema *s) { return &s->arena; }

Table *schema_find_table(const Schema *, const char *name);
/* 0 when the schema's tables are only the built-in sqlite_schema (found by
 * its names sqlite_schema and sqlite_master): a lookup of any other name
 * misses. 1 when it may hold others. */
int schema_has_user_tables(const Schema *);
Index *schema_find_index(const Schema *, const char *name);
View *schema_find_view(const Schema *, const char *name);
Trigger *schema_find_trigger(const Schema *, const char *name);

/* Add an object (allocated in the schema's arena). A name already present
 * in that map is replaced. SHALE_OK or SHALE_NOMEM. schema_add_index also
 * links the index into its table's list. */
int schema_add_table(Schema *, Table *);
int schema_add_index(Schema *, Index *);
int schema_add_view(Schema *, View *);
int schema_add_trigger(Schema *, Trigger *);
/* Remove by name (no memory is released until schema_free). */
void schema_remove_table(Schema *, const char *name);
void schema_remove_index(Schema *, const char *name);
void schema_remove_view(Schema *, const char *name);
void schema_remove_trigger(Schema *, const char *name);

/* Iterate a map: start with *pos = 0; returns the next value or NULL. */
void *schema_map_next(const SchemaMap *, int *pos);

/* Column index by name (case-insensitive), or -1. */
int schema_table_column_index(const Table *, const char *name);
/* Affinity of a declared type (record_type_affinity on a NUL-terminated
 * string, NULL = no type). */
char schema_type_affinity(const char *type);

/* KeyInfo for the stored keys of index idx (all ncol columns): collations
 * resolved with record_collation_find (unknown ones: *unknown gets 1, the
 * column compares BINARY). The arrays live in *ki_out's owner: the returned
 * KeyInfo and its arrays are one shale_malloc block, freed with shale_free.
 * NULL on out-of-memory. */
KeyInfo *schema_index_keyinfo(const Index *idx, int *unknown);

/* Check the invariants of every object (schema.h invariants 1-4, maps and
 * table index lists agree, storage slots distinct, key columns in range).
 * SHALE_OK or SHALE_INTERNAL; for tests. */
int schema_check(const Schema *);

/* Origin as PRAGMA index_list shows it: "c", "u" or "pk". */
const char *schema_index_origin_name(const Index *idx);

#endif /* SHALE_SCHEMA_H */
