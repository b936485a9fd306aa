/*
 * vm.h -- the bytecode machine: programs, the builder that assembles them,
 * and the interpreter state (Vm) that runs them over the connection's
 * databases (main, temp, attached: one Btree each, vm_set_dbs).
 *
 * The code generator (src/compile/compile_*.c) builds a VmProgram with the
 * vm_builder_* calls; the API layer wraps each prepared statement around a
 * Vm made by vm_new and drives it with vm_step. Opcodes and their operands
 * are listed (and documented) in opcodes.def; this header only adds the
 * representation.
 *
 * Invariants:
 *  1. A VmProgram is immutable once vm_builder_finish returned it; several
 *     Vms may run the same program. Constants it owns (P4_INT64, P4_REAL,
 *     P4_TEXT, P4_VALUE and the SQL text) live in its arena. Pointers of
 *     kind P4_KEYINFO, P4_FUNC and P4_COLL are borrowed: the caller keeps
 *     them alive (schema, function registry) at least as long as the
 *     program.
 *  2. Labels are negative numbers (-1 - label index). A jump operand (p2 of
 *     an op whose jumps flag is 1; p1..p3 of Jump) holding a label is
 *     replaced by the label's address at finish; a label never resolved
 *     makes finish fail with SHALE_INTERNAL.
 *  3. Registers are numbered 1..nreg (0 is never used); cursors 0..ncursor-1.
 *  4. vm_reset and a rerun of the same program allocate nothing themselves
 *     (registers cleared in place, per-register and per-cursor buffers kept);
 *     only the B-tree (opening cursors) and functions may allocate.
 *  5. vm_step returns SHALE_ROW (row in vm_column), SHALE_DONE, or an error
 *     code with vm_errmsg set; after DONE or an error every cursor is closed.
 */
#ifndef SHALE_VM_H
#define SHALE_VM_H

#include <stdint.h>

#include "../btree/btree.h"
#include "../func/func.h"
#include "../record/record.h"

/* ---- opcodes ---- */

enum VmOpcode {
#define OP(name, jumps, doc) OP_##name,
#include "opcodes.def"
#undef OP
  OP__COUNT
};

/* Name ("Add") and jumps flag of an opcode; NULL/0 when out of range. */
const char *vm_opcode_name(int op);
int vm_opcode_jumps(int op);

/* Comparison p5 flags (opcodes.def convention 2). */
#define VM_JUMPIFNULL 0x10
#define VM_STOREP2 0x20
#define VM_NULLEQ 0x80
/* Affinity in comparison p5: p5 & VM_AFF_MASK is 0 (none) or 1..5 for
 * AFF_BLOB..AFF_REAL; storing the letter itself ('C' = 0x43) also works, as
 * in SQLite (a code generator's bit 0x40 is ignored). */
#define VM_AFF_MASK 0x0f
/* Comparison p5, set by vm_builder_finish (in place of the letter's 0x40):
 * the op stores its result in p2 or compares under TEXT affinity, so two
 * integers or two reals do not take the fast path. */
#define VM_CMP_SLOW 0x40
#define VM_CMP_AFF(letter) ((uint8_t)((letter) - 'A' + 1))

/* Insert/Delete p5 flags (SQLite's values). */
#define VM_OPFLAG_NCHANGE 0x01   /* count the change */
#define VM_OPFLAG_ISUPDATE 0x04  /* Insert: the update hook reports an UPDATE */
#define VM_OPFLAG_APPEND 0x08    /* rowid/key larger than any present */
#define VM_OPFLAG_LASTROWID 0x20 /* set the last insert rowid */
/* Delete p5: the row stays (an Insert of the same rowid overwrites it: a
 * REPLACE victim); only the preupdate hook sees the delete, as SQLite's
 * OPFLAG_ISNOOP. */
#define VM_OPFLAG_ISNOOP 0x40
/* OpenWrite p5: root page is in r[p2]. */
#define VM_OPFLAG_P2ISREG 0x10
/* OpenWrite p5 of an index tree that is empty and has no other cursor
 * (CREATE INDEX, REINDEX): the cursor is a bulk loader (btree_bulk_*);
 * IdxInsert must then give keys in strictly increasing order, and Close
 * writes the remaining pages (its error fails the statement). */
#define VM_OPFLAG_BULK 0x40
/* Column p5, set by vm_builder_finish (not by code generators): the next op
 * is a RealAffinity of the Column's register, which Column then does itself
 * and skips (the RealAffinity stays in place for jumps that reach it). */
#define VM_COLUMN_REAL 0x01
/* Column p5 bits 1-3, set by vm_builder_finish: how many columns past p2 the
 * header parse of a row reads ahead (the next Column of the row usually wants
 * one of them), at most 7 and no further than the last column any Column of
 * the program reads from that cursor. */
#define VM_COLUMN_AHEAD(p5) (((p5) >> 1) & 7)
/* Transaction p5: 1 = check the schema cookie in p3. */
#define VM_TXN_CHECK_COOKIE 0x01

/* ---- programs ---- */

/* What p4 holds. */
enum VmP4Type {
  P4_NONE = 0,
  P4_INT32,   /* i: a small integer (counts, flags) */
  P4_INT64,   /* pi: arena */
  P4_REAL,    /* pr: arena */
  P4_TEXT,    /* z: NUL-terminated, arena (String/Blob: length in p1) */
  P4_VALUE,   /* v: a constant ShValue in the arena (Column defaults) */
  P4_KEYINFO, /* ki: borrowed */
  P4_FUNC,    /* func: borrowed */
  P4_COLL,    /* coll: borrowed */
  P4_ROOTS,   /* roots: arena copy (IntegrityCk); comparators' ctx borrowed */
  P4_PROGRAM, /* sub: a trigger sub-program owned by the program (Program) */
  P4_WINDOW,  /* win: a VmWinSpec in the program's arena (WinOpen) */
  P4_SUBREF,  /* ref: cell holding a sub-program owned by the outermost program
                 (Program; foreign-key actions, which may call themselves) */
  P4_VTAB     /* vtab: a connected virtual table (src/vtab/), borrowed from the
                 connection's registry (vtab.h invariant 1) */
};

/* ---- window functions (WinOpen, WinPush, WinEnd, WinRow: vm_window.c) ---- */

/* Frame type, bounds and exclusion: the parser's SQL_FRAME_*, SQL_BOUND_*
 * and SQL_EXCLUDE_* numbers (src/parse/ast.h). */
#define VM_FRAME_ROWS 1
#define VM_FRAME_RANGE 2
#define VM_FRAME_GROUPS 3
#define VM_BOUND_UNBOUNDED_PRECEDING 1
#define VM_BOUND_PRECEDING 2
#define VM_BOUND_CURRENT_ROW 3
#define VM_BOUND_FOLLOWING 4
#define VM_BOUND_UNBOUNDED_FOLLOWING 5
#define VM_EXCLUDE_NONE 0
#define VM_EXCLUDE_NO_OTHERS 1
#define VM_EXCLUDE_CURRENT_ROW 2
#define VM_EXCLUDE_GROUP 3
#define VM_EXCLUDE_TIES 4

/* One window function of a window pass. Its arguments are columns
 * arg..arg+nargs-1 of the rows pushed; a FUNC_WINDOW def is computed by the
 * engine (by its kind), any other def is an aggregate stepped over the
 * frame. */
typedef struct VmWinFunc {
  const FuncDef *def;
  int arg, nargs;
  int filter;            /* column holding the FILTER condition, or -1 */
  const Collation *coll; /* FUNC_NEEDCOLL: collation of the first argument */
} VmWinFunc;

/* One window pass: the rows pushed are sorted by partition then ORDER BY
 * (the code generator sorts them); the spec says how to cut partitions,
 * find peers and frames. */
typedef struct VmWinSpec {
  int ncol;  /* columns per row pushed */
  int npart; /* PARTITION BY: columns part[i] */
  const int *part;
  const Collation **part_coll;
  int norder; /* ORDER BY: columns order[i] */
  const int *order;
  const Collation **order_coll;
  const uint8_t *order_desc;          /* 1: DESC */
  const uint8_t *order_nulls_first;   /* 1: NULLs sort before the other values */
  uint8_t frame, start, end, exclude; /* VM_FRAME_*, VM_BOUND_*, VM_EXCLUDE_* */
  int nfunc;
  const VmWinFunc *funcs;
} VmWinSpec;

/* The trees IntegrityCk checks. */
typedef struct VmRoots {
  int n;
  BtreeCheckRoot r[];
} VmRoots;

typedef union VmP4 {
  int32_t i;
  int64_t *pi;
  double *pr;
  const char *z;
  const ShValue *v;
  KeyInfo *ki;
  const FuncDef *func;
  const Collation *coll;
  const VmRoots *roots;
  const struct VmProgram *sub;
  const struct VmWinSpec *win;
  struct VmProgram *const *ref;
  struct VtabTable *vtab;
  const void *p;
} VmP4;

typedef struct VmOp {
  uint8_t op;
  uint8_t p5;
  uint8_t p4type;
  int32_t p1, p2, p3;
  VmP4 p4;
} VmOp;

typedef struct VmProgram {
  VmOp *ops; /* in the arena (vm_builder_add) */
  int nop;
  int nreg;        /* registers 1..nreg */
  int ncursor;     /* cursors 0..ncursor-1 */
  int nvar;        /* largest parameter number used by Variable */
  int ncolumn;     /* result columns (widest ResultRow) */
  const char *sql; /* the statement text (arena), or NULL */
  UtilArena arena;
  struct VmProgram **subs; /* sub-programs owned (freed with this one) */
  int nsub;
} VmProgram;

void vm_program_free(VmProgram *);

/* ---- the builder ---- */

/* Errors are sticky: once an add fails (out of memory) every later call is a
 * no-op and vm_builder_finish returns the error. */
typedef struct VmBuilder {
  VmProgram *prog;
  int cap;
  int *labels; /* label index -> address, -1 while unresolved (in prog->arena) */
  int nlabel, caplabel;
  int rc;
} VmBuilder;

/* Start a program; sql (may be NULL) is copied. */
int vm_builder_init(VmBuilder *, const char *sql);
/* Append an op; returns its address (or -1 after an error). */
int vm_builder_add(VmBuilder *, int op, int p1, int p2, int p3);
int vm_builder_add_int64(VmBuilder *, int op, int p1, int p2, int p3, int64_t v);
int vm_builder_add_real(VmBuilder *, int op, int p1, int p2, int p3, double v);
/* p4 = copy of z[0..n) (n < 0: NUL-terminated). For String/Blob p1 is set
 * to the length. */
int vm_builder_add_text(VmBuilder *, int op, int p1, int p2, int p3, const char *z, int n);
/* p4 = copy of v (text/blob bytes copied). */
int vm_builder_add_value(VmBuilder *, int op, int p1, int p2, int p3, const ShValue *v);
/* p4 = a borrowed pointer of kind P4_KEYINFO / P4_FUNC / P4_COLL / P4_WINDOW, or P4_INT32
 * with the integer in i. */
int vm_builder_add_p4(VmBuilder *, int op, int p1, int p2, int p3, int p4type, const void *p);
int vm_builder_add_i4(VmBuilder *, int op, int p1, int p2, int p3, int32_t i);
/* p4 = sub-program (Program op): ownership passes to the program being
 * built, also on failure (sub is then freed at once). Inside sub, Param p1
 * reads the caller's register (Program's p1) + p1; a Halt with p1 = OK and
 * p2 = VM_OE_IGNORE ends the sub-program as RAISE(IGNORE): the caller jumps
 * to the Program op's p2. An error in the sub-program fails the caller with
 * the same code, message and conflict resolution. */
int vm_builder_add_program(VmBuilder *, int op, int p1, int p2, int p3, VmProgram *sub);
/* p4 = P4_SUBREF: the sub-program is read from *cell when the op runs (the
 * cell may be filled after the op is added; it must outlive the program,
 * e.g. live in the outermost program's arena). */
int vm_builder_add_program_ref(VmBuilder *, int op, int p1, int p2, int p3, VmProgram **cell);
/* The program being built takes ownership of sub (freed with it) without an
 * op naming it (sub is freed at once on failure). SHALE_OK or SHALE_NOMEM. */
int vm_builder_adopt(VmBuilder *, VmProgram *sub);
/* p4 = copy of roots[0..n) (IntegrityCk). */
int vm_builder_add_roots(VmBuilder *, int op, int p1, int p2, int p3, const BtreeCheckRoot *roots,
                         int n);
void vm_builder_set_p5(VmBuilder *, int addr, int p5);
void vm_builder_set_p2(VmBuilder *, int addr, int p2);
/* Address the next op will get. */
int vm_builder_addr(VmBuilder *);
/* A new unresolved label (negative). */
int vm_builder_label(VmBuilder *);
/* Bind label to the address of the next op added. */
void vm_builder_resolve(VmBuilder *, int label);
/* n fresh registers; returns the first. */
int vm_builder_regs(VmBuilder *, int n);
/* A fresh cursor number. */
int vm_builder_cursor(VmBuilder *);
/* Resolve labels and hand over the program (*out). The builder is empty
 * afterwards. On error frees everything and *out = NULL. */
int vm_builder_finish(VmBuilder *, VmProgram **out);
/* Abandon a program under construction. */
void vm_builder_abort(VmBuilder *);

/* ---- execution ---- */

typedef struct Vm Vm;

/* vm_new flags */
#define VM_AUTOCOMMIT                                  \
  0x01 /* a transaction begun by this Vm ends at halt: \
          committed on success, rolled back on error */
#define VM_STMT_JOURNAL                                   \
  0x02 /* a write Transaction op inside a transaction the \
          Vm did not begin opens a statement savepoint:   \
          released at halt, rolled back on error (per     \
          the conflict resolution below) */
#define VM_VTAB_SAVEPOINT                                    \
  0x04 /* with VM_STMT_JOURNAL: SQLite would use a statement \
          journal, so the virtual tables in the transaction  \
          see xSavepoint when it opens and xRollbackTo /     \
          xRelease when it ends */

/* Conflict resolution in Halt p2 (SQLite's OE_* numbers): what an error
 * halt undoes. ROLLBACK: the whole transaction; ABORT (and 0, and errors not
 * raised by Halt): this statement's changes; FAIL: nothing (changes made so
 * far stay). */
#define VM_OE_ROLLBACK 1
#define VM_OE_ABORT 2
#define VM_OE_FAIL 3
#define VM_OE_IGNORE 4
#define VM_OE_REPLACE 5

/* A Vm running prog (borrowed; must outlive the Vm) over bt. funcs may be
 * NULL. SHALE_OK or SHALE_NOMEM. */
int vm_new(const VmProgram *prog, Btree *bt, int flags, Vm **out);
/* One freed Vm block a caller (a connection) keeps for its next Vm, so a
 * statement prepared, run and finalized does not pay a large malloc + free:
 * vm_free_keep parks the block (at most VM_SPARE_MAX bytes, when it is
 * larger than the one parked, which it frees), vm_new_reuse takes it when
 * it is big enough, vm_spare_free
 * releases it. All-zero is an empty spare. */
typedef struct VmSpare {
  void *blk;
  size_t size;
} VmSpare;
#define VM_SPARE_MAX 16384
int vm_new_reuse(const VmProgram *prog, Btree *bt, int flags, VmSpare *spare, Vm **out);
void vm_free_keep(Vm *, VmSpare *spare);
void vm_spare_free(VmSpare *spare);
/* The same for program blocks (a VmProgram and the first chunk of its
 * arena, all of one size): vm_program_free_keep parks the block of a freed
 * program when the spare is empty, vm_builder_init_reuse builds the next
 * program in it (its text: sql[0..nsql), which need not end with a NUL);
 * vm_spare_free releases it. Use one VmSpare for Vm blocks, another for
 * program blocks. */
void vm_program_free_keep(VmProgram *, VmSpare *spare);
int vm_builder_init_reuse(VmBuilder *, const char *sql, int nsql, VmSpare *spare);
/* Databases an op's database index names (Transaction p1, OpenRead p3, ...):
 * dbs[0] main (replaces bt), dbs[1] temp (NULL until opened: a Transaction
 * on it is then a no-op), dbs[2..n) attached. Without this call only
 * database 0 (bt) exists. Copied (at most VM_MAX_DB); call it again before a
 * run when the connection's list changed. */
#define VM_MAX_DB 12
void vm_set_dbs(Vm *, Btree *const *dbs, int n);
void vm_free(Vm *);
/* Connection data for functions (last_insert_rowid(), changes(), ...). */
void vm_set_conn(Vm *, void *conn, const FuncConnCallbacks *cb);

/* Connection-level ops the Vm cannot do alone (they touch the connection's
 * transaction state or its in-memory schema): the API layer supplies them.
 * Each returns a result code; *errmsg (shale_malloc'ed) may be set. A NULL
 * hook makes the op fail with SHALE_INTERNAL. */
/* One row change as the preupdate hook sees it. old/new are records (the
 * row's payload as stored; NULL when the change has none: INSERT has no old
 * row, DELETE no new one), valid only during the call. key1/key2: the old and
 * new rowids (equal but for an UPDATE that changes the rowid; 0 for WITHOUT
 * ROWID tables, whose records are PRIMARY KEY index keys). depth: 0 for
 * the statement itself, 1.. inside trigger programs. */
typedef struct VmPreupdate {
  int op; /* VM_HOOK_INSERT/UPDATE/DELETE */
  int db; /* database index, as for update */
  int depth;
  const char *table;
  int64_t key1, key2;
  const uint8_t *old_rec, *new_rec;
  uint32_t old_n, new_n;
} VmPreupdate;

typedef struct VmConnHooks {
  void *ctx;
  int (*autocommit)(void *ctx, int on, int rollback, char **errmsg);        /* AutoCommit */
  int (*savepoint)(void *ctx, int op, const char *name, char **errmsg);     /* Savepoint */
  int (*parse_schema)(void *ctx, int db, const char *where, char **errmsg); /* ParseSchema */
  int (*drop_object)(void *ctx, int db, int kind, const char *name,
                     char **errmsg); /* DropObject (db = p2) */
  int64_t *deferred_fk; /* FkCounter p1 = 1 counts here (NULL: into the statement counter) */
  /* PRAGMA defer_foreign_keys: when *defer_fks is nonzero, FkCounter p1 = 0
   * counts into *deferred_imm_fk instead of the statement counter (SQLite's
   * nDeferredImmCons). A top-level Vm that halts successfully fails with
   * SHALE_CONSTRAINT_FOREIGNKEY when its statement counter is > 0, and, when
   * it ends the transaction itself (VM_AUTOCOMMIT), when *deferred_fk +
   * *deferred_imm_fk > 0. A statement undone by its statement journal puts
   * both counters back to their values at its start. A Vm ending the
   * transaction it began (commit or rollback) also clears *defer_fks, as
   * SQLite clears the pragma at every transaction end. */
  int64_t *deferred_imm_fk;
  uint8_t *defer_fks;
  /* PRAGMA query_only: when *query_only is nonzero a Transaction op that
   * would write fails with SHALE_READONLY (NULL: never) */
  uint8_t *query_only;
  /* The main database's text encoding (RECORD_ENC_*; NULL: UTF-8): TEXT in
   * the records the Vm writes, reads and seeks (src/record/textenc.c) */
  const uint8_t *text_enc;
  /* Optional observers (NULL: none; the API sets them from sqlite3_*_hook):
   * commit: before a Vm commits a write transaction it began; nonzero
   *   vetoes it (rolled back, SHALE_CONSTRAINT_COMMITHOOK "constraint failed");
   * rollback: after a Vm rolled back a write transaction (error, OR ROLLBACK,
   *   a vetoed commit);
   * update: after an Insert/Delete with VM_OPFLAG_NCHANGE whose p4 names the
   *   table: op is VM_HOOK_INSERT/UPDATE/DELETE (SQLite's codes), db the
   *   index of the cursor's database (0 main, 1 temp, 2.. attached);
   * preupdate: before each row change of a table (an Insert or Delete
   *   whose p4 names the table, REPLACE victims included, and each row of a
   *   Clear whose p4 names it): see VmPreupdate (vm_preupdate.c);
   * progress: every progress_n executed ops (progress_n <= 0: never);
   *   nonzero stops the run with SHALE_INTERRUPT "interrupted";
   * interrupt: checked every VM_INTERRUPT_EVERY ops; nonzero stops the run
   *   the same way. */
  int (*commit)(void *ctx);
  void (*rollback)(void *ctx);
  void (*update)(void *ctx, int op, int db, const char *table, int64_t rowid);
  void (*preupdate)(void *ctx, const struct VmPreupdate *pu);
  int (*progress)(void *ctx);
  int progress_n;
  volatile int *interrupt;
  /* bumped by whoever changes progress, progress_n or interrupt: a Vm
   * reschedules its check at its next step (else it keeps the schedule) */
  unsigned check_gen;
  /* run-time limits (0: SQLite's default): SQLITE_LIMIT_LENGTH for strings,
   * blobs and records made here and by functions; LIKE_PATTERN_LENGTH */
  int max_length;
  int max_like_pattern;
  /* trace: the text of a Trace op (trigger programs: SQLITE_TRACE_STMT) */
  void (*trace)(void *ctx, const char *text);
  /* VACUUM: rebuild database db (0 main) in place, or into the file named
   * by into (NULL: in place). Nonzero: the error code, *errmsg its message. */
  int (*vacuum)(void *ctx, int db, const ShValue *into, char **errmsg);
  /* the connection's virtual-table registry (VCreate; transactions) */
  struct VtabReg *vtabs;
} VmConnHooks;
#define VM_HOOK_DELETE 9
#define VM_HOOK_INSERT 18
#define VM_HOOK_UPDATE 23
#define VM_INTERRUPT_EVERY 1000

/* Counters of a Vm since vm_new (never reset; sqlite3_stmt_status): */
enum {
  VM_STAT_FULLSCAN_STEP = 1, /* Next/Prev on a table (not index, not ephemeral) cursor */
  VM_STAT_SORT = 2,          /* sorts (SorterSort) */
  VM_STAT_AUTOINDEX = 3,     /* (not counted: 0) */
  VM_STAT_VM_STEP = 4        /* ops executed (Shale's ops, not SQLite's) */
};
int64_t vm_stat(Vm *, int which);
void vm_set_hooks(Vm *, const VmConnHooks *hooks);
/* 1 if the last run ended the whole transaction by rolling it back
 * (Halt with VM_OE_ROLLBACK): the API layer returns to autocommit. */
int vm_txn_rolled_back(Vm *);
/* Hand the transaction this Vm began (VM_AUTOCOMMIT) over to the caller:
 * halt and reset no longer end it. Returns 1 if the Vm owned one. (The API
 * layer uses it when a second statement becomes active in autocommit mode.) */
int vm_release_txn(Vm *);
/* 1 if the last run began the transaction, handed it over (vm_release_txn:
 * statements it ran itself, e.g. a virtual table's xUpdate, became active)
 * and then failed in a way that undoes its whole transaction had it kept it
 * (any error but OR FAIL's constraint): in autocommit mode the caller rolls
 * that transaction back, as SQLite's halt of the only writer does. */
int vm_undo_released_txn(Vm *);
/* The caller says the next runs are autocommit mode's only writing
 * statement (others may read), whose end SQLite's halt makes the end of the
 * transaction: the virtual tables' statement savepoint is then neither
 * released nor rolled back (the modules see xSync/xCommit or xRollback
 * only). After a failure that undoes the statement (any error but OR
 * FAIL's) vm_undo_vtabs is 1 and the caller calls their xRollback; the
 * files' statement savepoints are undone here as before, so committing the
 * files is what remains. */
void vm_set_sole_writer(Vm *, int on);
int vm_undo_vtabs(Vm *);
/* Statement foreign-key violation counter (FkCounter p1 = 0). */
int64_t vm_fk_count(Vm *);

/* Bytes of records a sorter holds in memory before it spills a sorted run
 * to a temp file (default VM_SORTER_BUDGET_DEFAULT). */
#define VM_SORTER_BUDGET_DEFAULT (16u << 20)
void vm_set_sorter_budget(Vm *, uint64_t bytes);

int vm_step(Vm *);
/* Back to the start: registers cleared, cursors closed, an open transaction
 * begun by this Vm rolled back; bindings kept. No allocation. */
int vm_reset(Vm *);
const char *vm_errmsg(Vm *);

/* Result row (valid until the next vm_step/vm_reset). */
int vm_column_count(Vm *);
const ShValue *vm_column(Vm *, int i);
/* The whole row in one call: its *n = vm_column_count values, vm_row(v)[i]
 * is vm_column(v, i). */
const ShValue *vm_row(Vm *, int *n);
/* Is z[n] a NUL byte inside a row or parameter buffer of v (a text value of
 * the current row borrowed from one)? Then z is usable as a C string until
 * the row changes, with no copy. */
int vm_text_terminated(const Vm *, const char *z, uint32_t n);

/* Parameters are 1-based; values are copied (kept buffers are reused).
 * SHALE_RANGE for an unused number; SHALE_MISUSE while a run is in progress
 * (after a ROW: reset first; after DONE or an error binding is allowed and
 * the next vm_step starts over). */
int vm_bind_null(Vm *, int i);
int vm_bind_int(Vm *, int i, int64_t v);
int vm_bind_real(Vm *, int i, double v);
int vm_bind_text(Vm *, int i, const char *z, int n);
int vm_bind_blob(Vm *, int i, const void *z, int n);
int vm_bind_value(Vm *, int i, const ShValue *v);
/* The same without copying: a TEXT/BLOB value's bytes are borrowed and must
 * stay as they are for every run until i is bound again (the API's
 * parameter buffers, which change only while no run is in progress). */
int vm_bind_view(Vm *, int i, const ShValue *v);

/* Rows changed by Insert/Delete with VM_OPFLAG_NCHANGE since the last
 * reset, and the last rowid inserted with VM_OPFLAG_LASTROWID. */
int64_t vm_changes(Vm *);
int64_t vm_last_rowid(Vm *);
/* Changes including those made by trigger sub-programs (total_changes), and
 * 1 if an Insert with VM_OPFLAG_LASTROWID ran since the last reset. */
int64_t vm_total_changes(Vm *);
int vm_last_rowid_set(Vm *);

/* EXPLAIN: one line per op, "addr opcode p1 p2 p3 p4 p5" (tab separated, as
 * SQLite's EXPLAIN columns, comment omitted). shale_malloc'ed, NULL on OOM. */
char *vm_explain(const VmProgram *);
/* The p4 column of one op as text into buf (NUL-terminated). */
void vm_explain_p4(const VmOp *, char *buf, int nbuf);

#endif /* SHALE_VM_H */
