/*
 * vtab.h -- virtual tables: the connection's module registry, its
 * connected tables, and the calls into a module's methods (SQLite's
 * sqlite3_module contract, include/shale.h shale_module).
 *
 * Layering (docs/architecture.md departure 28): vm > vtab > func. The code
 * generator and planner (compile, plan) connect tables and call xBestIndex
 * through here; the VM's V* opcodes call the cursor, update and
 * transaction methods through here; the API (shale_create_module_v2,
 * shale_declare_vtab, ...) edits the registry. This layer knows neither the
 * code generator's Table (a connected table's declared columns are the
 * compile layer's, kept here as an opaque object with its free function)
 * nor the connection (modules get VtabReg.db, the API's handle).
 *
 * Invariants:
 *  1. A VtabTable lives until the registry is freed: DROP and module
 *     removal only disconnect it (vt NULL), so a compiled program's pointer
 *     to it never dangles; a program using a disconnected table is stale
 *     (the schema changed) and the V* ops fail cleanly on vt NULL.
 *  2. Every xConnect/xCreate that succeeded is matched by exactly one
 *     xDisconnect or xDestroy (at DROP, module replacement/removal, or
 *     vtab_reg_free).
 *  3. A table is in the write transaction (in_txn) from its first xBegin
 *     until vtab_txn_end; xSync/xCommit/xRollback reach exactly those
 *     tables, in the order they began.
 *  4. After a failed module call the module's zErrMsg is taken (freed from
 *     the vtab) into the caller's *errmsg.
 */
#ifndef SHALE_VTAB_H
#define SHALE_VTAB_H

#include <stdint.h>

#include "../func/func.h"
#include "../record/record.h"
#include "shale.h"

typedef struct VtabModule {
  char *name;
  const shale_module *m;
  void *aux;
  void (*destroy)(void *);
  struct VtabModule *next;
} VtabModule;

typedef struct VtabTable {
  VtabModule *mod; /* NULL once its module went */
  shale_vtab *vt;  /* NULL: not connected (invariant 1) */
  int idb;         /* database index (0 main, 1 temp, 2.. attached) */
  char *name;      /* table name as in the schema */
  char *sql;       /* the schema's CREATE VIRTUAL TABLE text it was connected for */
  char *decl;      /* the CREATE TABLE text the module declared */
  void *decl_obj;  /* the compile layer's object built from decl (or NULL) */
  void (*decl_free)(void *);
  uint8_t in_txn; /* invariant 3 */
  uint8_t constraint_support, innocuous, directonly;
  uint8_t eponymous;   /* the module's own table (no schema row) */
  uint8_t stale;       /* the schemas were reset during its transaction: xDisconnect when
                          the transaction ends (vtab_schema_reset) */
  int txn_seq;         /* order of xBegin within the transaction */
  int isp;             /* SQLite's VTable.iSavepoint: savepoint levels it has seen */
  struct VtabReg *reg; /* its registry */
  struct VtabTable *next;
} VtabTable;

/* A function a module's xFindFunction put in place of def's base for the
 * calls on one of its columns (SQLite's ephemeral FuncDef): def is a copy of
 * the base with vtab_func_scalar calling fn; arg is what
 * sqlite3_user_data returns. Kept by the registry (programs point at def). */
typedef struct VtabFunc {
  FuncDef def;
  shale_func_fn fn;
  void *arg;
  struct VtabTable *t;
  struct VtabFunc *next;
} VtabFunc;

typedef struct VtabReg {
  void *db; /* handed to xCreate/xConnect */
  VtabFunc *funcs;
  VtabModule *mods;
  VtabTable *tabs;
  VtabTable *connecting; /* the table whose xCreate/xConnect runs (declare_vtab) */
  int declared;          /* declare_vtab succeeded for it */
  int on_conflict;       /* during xUpdate: SQLite's 1..5 */
  int txn_seq;
  int nsavepoint; /* SQLite's db->nSavepoint: open SAVEPOINTs, less one that began the
                     transaction (kept by the API, 0 when a transaction ends) */
  int destroying; /* xDestroy calls running: the statements running them
                     do not keep the module's DROP TABLEs out (SQLite's nVDestroy) */
  /* Register a module for a name no module has, when the owner makes such
   * modules on demand (the API's pragma_NAME, as SQLite's
   * sqlite3PragmaVtabRegister): SHALE_OK (registered), SHALE_NOTFOUND (no
   * such module), SHALE_NOMEM. NULL: none. */
  int (*make_module)(struct VtabReg *, const char *name);
} VtabReg;

void vtab_reg_init(VtabReg *, void *db);
/* Register the built-in eponymous modules every connection has, as SQLite
 * registers them at open: json_each, json_tree (vtab_json.c). SHALE_OK or
 * SHALE_NOMEM. */
int vtab_builtin_register(VtabReg *);
/* Disconnect every table, call every module's destroy. */
void vtab_reg_free(VtabReg *);

/* Add (or replace; m NULL: remove) module name. destroy runs per the
 * shale_create_module_v2 contract. SHALE_OK / SHALE_NOMEM. */
int vtab_module_set(VtabReg *, const char *name, const shale_module *m, void *aux,
                    void (*destroy)(void *));
void vtab_modules_drop(VtabReg *, const char **keep);
VtabModule *vtab_module_find(const VtabReg *, const char *name);

/* The table name of database idb, connected, with its declared text in
 * decl: found (connected for sql already) or connected now through module
 * (create: xCreate, else xConnect) with argv = module, dbname, name,
 * args[0..nargs). Errors (*errmsg shale_malloc'ed): "no such module: M",
 * the module's message, "vtable constructor failed: NAME", "vtable
 * constructor did not declare schema: NAME". */
int vtab_connect(VtabReg *, int create, int idb, const char *dbname, const char *name,
                 const char *module, int nargs, const char *const *args, const char *sql,
                 VtabTable **out, char **errmsg);
/* vtab_connect for the table a CREATE VIRTUAL TABLE text sql describes
 * (its module and arguments as written). */
int vtab_connect_sql(VtabReg *, int create, int idb, const char *dbname, const char *sql,
                     VtabTable **out, char **errmsg);
/* The connected table name of idb, or NULL. */
VtabTable *vtab_find(const VtabReg *, int idb, const char *name);
/* xDestroy (DROP TABLE) of a connected table; it stays as a disconnected
 * entry. SHALE_OK or the module's error. */
int vtab_destroy(VtabReg *, VtabTable *, char **errmsg);
/* xDisconnect of every table of database idb (-1: all): DETACH. */
void vtab_disconnect_db(VtabReg *, int idb);
/* The schemas of the databases in dbmask (bit i: database i) were reset
 * (SQLite reparses the altered database's and temp's after an ALTER TABLE,
 * all of them at a ROLLBACK TO after a schema change): their tables not in
 * the transaction disconnect now, the others (stale) after their
 * xCommit/xRollback (SQLite's transaction holds a reference to them). vtab_find skips a stale
 * table, so a statement prepared meanwhile connects a new instance, which joins the transaction
 * beside the old one, as in SQLite. */
void vtab_schema_reset(VtabReg *, uint32_t dbmask);
/* xDisconnect of every table in vtab_reg_free's order: shale_close, before
 * it checks for unfinalized statements (a module's own statements go). */
void vtab_disconnect_closing(VtabReg *);

/* shale_declare_vtab's work: checks sql is one CREATE TABLE. */
int vtab_declare(VtabReg *, const char *sql, char **errmsg);

/* ---- function overloading (xFindFunction) ---- */

/* xFindFunction(nargs, name) of connected table t: its answer (0: not
 * overloaded; SQLite's SQLITE_INDEX_CONSTRAINT_FUNCTION and above also
 * make a function constraint), with *fn and *arg set. 0 without the method. */
int vtab_find_function(VtabTable *t, int nargs, const char *name, shale_func_fn *fn, void **arg);
/* The definition to call for base (NULL: a built-in stub named name) with
 * nargs arguments, the overloading one when t's xFindFunction answers
 * non-zero for name in lower case; else base. *nomem set on OOM. */
const FuncDef *vtab_overload(VtabReg *, VtabTable *t, const FuncDef *base, const char *name,
                             int nargs, int *nomem);
/* FuncDef.scalar of a VtabFunc. */
void vtab_func_scalar(FuncCtx *ctx, int argc, ShValue *argv);

/* ---- xBestIndex ---- */

/* An index info and what the vtab_* calls of xBestIndex read. */
typedef struct VtabIndex {
  shale_index_info info; /* first: the module's pointer is ours */
  const char **colls;    /* per constraint: collation name (NULL: BINARY) */
  ShValue **rhs;         /* per constraint: the right side when constant, else NULL */
  shale_value *rhs_cells;
  uint8_t *in_ok;   /* per constraint: an IN the module may take whole */
  uint8_t *in_take; /* ... and the module asked for it */
  int distinct;     /* shale_vtab_distinct's answer */
} VtabIndex;

/* A zeroed VtabIndex with room for ncons constraints and norder ORDER BY
 * terms (free with vtab_index_free). NULL on OOM. */
VtabIndex *vtab_index_new(int ncons, int norder);
void vtab_index_free(VtabIndex *);
/* Reset the outputs (usage, idxNum, idxStr, cost...) before a call. */
void vtab_index_reset(VtabIndex *);
/* Call xBestIndex. SHALE_OK, SHALE_CONSTRAINT (the plan is unusable), or an
 * error with *errmsg. */
int vtab_best_index(VtabTable *, VtabIndex *, char **errmsg);

/* ---- cursors ---- */
typedef struct VtabCur {
  VtabTable *t;
  shale_vtab_cursor *c;
  int eof;
  /* The context of every xColumn on the cursor: its connection fields set
   * once by the owner (vtab_cursor_ctx), its outputs cleared after each call
   * (result NULL, subtype 0, rc OK, no message), so a column read does not
   * build a context afresh. */
  FuncCtx ctx;
  /* Pointer results of xColumn (shale_result_pointer, as FTS3's hidden
   * column gives its cursor): kept until the cursor moves or closes. */
  FuncAux *ptrs;
} VtabCur;

int vtab_open(VtabTable *, VtabCur **out, char **errmsg);
void vtab_close(VtabCur *);
/* xFilter then xEof. argv: VM registers (borrowed). */
int vtab_filter(VtabCur *, int idx_num, const char *idx_str, int argc, ShValue *argv,
                char **errmsg);
int vtab_next(VtabCur *, char **errmsg);
/* The connection fields of the cursor's xColumn context (FuncCtx's conn,
 * cb, max_length, max_like_pattern): set once after vtab_open. */
void vtab_cursor_ctx(VtabCur *, void *conn, const FuncConnCallbacks *cb, int64_t max_length,
                     int max_like_pattern);
/* xColumn of column col into out (owned), through the cursor's context.
 * nochange: the module may leave the column unset (shale_vtab_nochange
 * returns 1), and out is then a NULL marked VAL_NOCHANGE. */
int vtab_column(VtabCur *, int col, int nochange, ShValue *out, char **errmsg);
int vtab_rowid(VtabCur *, int64_t *rowid, char **errmsg);

/* ---- writes and transactions ---- */
/* xUpdate with argv[0..argc) (borrowed registers), conflict mode oe
 * (SQLite's 1..5). *rowid: the new rowid of an insert. */
int vtab_update(VtabReg *, VtabTable *, int argc, ShValue *argv, int oe, int64_t *rowid,
                char **errmsg);
/* xBegin once per transaction; then, with nsavepoint > 0 savepoint levels
 * open (r->nsavepoint, plus the statement's own), xSavepoint(nsavepoint - 1)
 * once, as SQLite's sqlite3VtabBegin. */
int vtab_begin(VtabReg *, VtabTable *, int nsavepoint, char **errmsg);
/* End of the transaction: xSync on every table in it (phase 1), then
 * xCommit; or xRollback. Each returns the first error. */
int vtab_sync(VtabReg *, char **errmsg);
void vtab_commit(VtabReg *);
void vtab_rollback(VtabReg *);
/* Savepoint op (0 begin, 1 release, 2 rollback to) number n on the tables
 * in the transaction, by SQLite's rule: modules of version >= 2 with xBegin
 * (SQLite's aVTrans), begin order; BEGIN sets the table's isp to n + 1, and
 * a method runs only while isp > n. */
int vtab_savepoint(VtabReg *, int op, int n, char **errmsg);
/* ALTER TABLE RENAME of t: xRename(name) when the module has it (its error
 * fails the statement, nothing else happens), then every table of t's
 * database disconnects, as SQLite's schema reset after the rename does. */
int vtab_rename(VtabReg *, VtabTable *t, const char *name, char **errmsg);
/* 1 if some table is in the transaction. */
int vtab_in_txn(const VtabReg *);

/* shale_value cells over ShValues (borrowed), freed with vtab_cells_free. */
void vtab_cells(shale_value *cells, shale_value **ptrs, ShValue *argv, int argc);
void vtab_cells_free(shale_value *cells, int argc);

/* An IN list handed to xFilter whole (shale_vtab_in): the argument is a
 * NULL carrying vp (type VTAB_IN_TYPE, SQLite's "ValueList"), whose p is
 * this list. step reads the list's first (first = 1) or next value into
 * cell.v: SHALE_OK, SHALE_DONE past the end, or an error. The VM owns the
 * list (freed with the IN set's cursor); cell's conversions are freed by
 * the next step or at that free. */
#define VTAB_IN_TYPE "ValueList"
typedef struct VtabInList {
  ValPtr vp;
  int (*step)(struct VtabInList *, int first);
  void *owner; /* the VM */
  int cursor;  /* its IN set's cursor */
  shale_value cell;
} VtabInList;

#endif /* SHALE_VTAB_H */
