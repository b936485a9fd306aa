/*
 * vm_int.h -- private to src/vm: the execution state behind Vm and its
 * cursors, shared by vm.c (lifecycle, builder, bindings) and vm_exec.c (the
 * interpreter).
 *
 * Invariants:
 *  1. reg[r] with VAL_OWNED holds shale_malloc memory; a register whose
 *     value points into rbuf[r] is borrowed (flags 0) from its own buffer,
 *     which is kept across rows and resets (no allocation on rerun).
 *  2. A VmCursor's header cache (types/offsets of the first hdr_ncol
 *     columns, parsed lazily up to the column asked for) is valid only while
 *     cache_ok; every move of the cursor and every modification of any tree
 *     through this Vm clears it.
 *  3. rec/nrec point either into the B-tree page (whole payload local) or
 *     into the cursor's buf (payload gathered from overflow pages).
 */
#ifndef SHALE_VM_INT_H
#define SHALE_VM_INT_H

#include "vm.h"

enum { VMC_NONE = 0, VMC_TABLE, VMC_INDEX, VMC_PSEUDO, VMC_SORTER, VMC_BULK, VMC_HASH, VMC_VTAB };

/* A record in the sorter's memory: key is its first key column reduced to
 * 64 bits whose unsigned order agrees with the KeyInfo's (sort_key in
 * vm_exec.c): entries with different keys compare by key alone, equal keys
 * by the whole record. */
typedef struct VmSortEnt {
  uint64_t key;
  uint32_t off; /* into VmCursor.sbuf (kept below 4 GiB: spilled before) */
  uint32_t n;
} VmSortEnt;

/* A sorted run in a spill file: records stored as varint(length) + bytes
 * from start to end. */
typedef struct VmRunPos {
  int64_t start, end;
  int file; /* the spill file holding it (VmSpill.file[file]) */
} VmRunPos;

/* A merge reader of one run, through its own buffer: rec points at the
 * current record, inside buf (bytes [boff, boff + blen) of the file) or,
 * for a record larger than the buffer, in big; key is its sort key. */
typedef struct VmRun {
  int64_t start, end, pos;
  const char *rec;
  uint32_t n;
  int live; /* rec holds this run's current record */
  int run;  /* the run's number (ties go to the lower: a stable merge) */
  uint64_t key;
  OsFile *f;    /* the spill file its run is in */
  uint8_t *buf; /* bufcap bytes (vm_sort.c merge_block) */
  uint32_t bufcap;
  int64_t boff;
  uint32_t blen;
  char *big;
  uint32_t bigcap;
} VmRun;

/* Spill I/O goes in blocks of this many bytes (writes are gathered, each
 * run reads ahead), not one system call per record. */
#define VM_SPILL_BLOCK (64u << 10)
/* A merge's read buffers share VM_MERGE_BYTES (vm_sort.c invariant 2):
 * each of its k runs reads VM_MERGE_BYTES / k bytes at a time, between
 * VM_SPILL_MIN_BLOCK and VM_SPILL_BLOCK, so up to VM_MERGE_MAX runs (256)
 * merge at once. */
#define VM_MERGE_BYTES (1u << 20)
#define VM_SPILL_MIN_BLOCK (4u << 10)
#define VM_MERGE_MAX ((int)(VM_MERGE_BYTES / VM_SPILL_MIN_BLOCK))
/* MakeRecord keeps the serial types of records up to this many columns on
 * the stack (record_size_types); wider ones compute them twice */
#define VM_RECORD_TYPES 64

typedef struct VmSpill {
  OsFile *file[2]; /* file[0] holds the runs; file[1] receives a merge pass */
  int64_t fsize[2];
  int wfile;     /* the file being written */
  uint8_t *wbuf; /* VM_SPILL_BLOCK bytes gathered for the next write */
  uint32_t wlen;
  VmRunPos *runs;
  int nrun, caprun;
  VmRun *rd; /* the readers of the merge in progress (caprd of them) */
  int nrd, caprd;
  int *heap;   /* the merge's loser tree (vm_sort.c), caprd entries: [0] the winner */
  int nheap;   /* readers with a record */
  int merging; /* SorterSort started the final merge */
} VmSpill;

typedef struct VmCursor {
  int kind;
  int db; /* OpenRead/OpenWrite: the database index (p3) */
  BtCursor *bc;
  /* A table/index cursor parked at halt inside a transaction that goes on
   * (btree_cursor_park on &bc; the Btree clears bc when it closes it): the
   * next run's OpenRead/OpenWrite of the same tree takes it back, position
   * and all. root and wr say what it was opened on. */
  int parked;
  uint32_t root;
  int wr;
  BtBulk *bulk;         /* VMC_BULK: OpenWrite with VM_OPFLAG_BULK (bc is NULL) */
  struct VtabCur *vc;   /* VMC_VTAB: VOpen's cursor (vm_vtab.c) */
  KeyInfo *ki;          /* index cursors */
  KeyInfo *ki_own;      /* ki when it is the cursor's copy for a UTF-16 database (freed at close) */
  int nfield;           /* declared column count (informational) */
  int nullrow;          /* NullRow: every column reads NULL */
  int colfix;           /* VM_COLFIX_*: what Column does to each value it reads */
#define VM_COLFIX_ENC 2 /* records of a UTF-16 database: TEXT made UTF-8 (v->enc) */

  struct VtabInList *inl; /* an IN set handed to xFilter whole (VInitIn, vm_vtab.c) */
  int pseudo_reg;
  int pseudo_fed; /* the pseudo cursor reads records SorterData puts in its
                     register (only SorterData writes it): the header cache
                     then holds until the next SorterData */
  int64_t seq;    /* Sequence counter */
  /* The last NoConflict on this cursor passed by a seek of the key in
   * registers nc_reg..nc_reg+nc_n-1 (nc_n = 0: none since), the btree
   * cursor's seek count then nc_seek: an IdxInsert of a key made from
   * the same registers goes where that seek ended (BTREE_SEEKRESULT). */
  int nc_reg, nc_n;
  uint32_t nc_seek;
  /* current-row cache */
  int cache_ok;
  const uint8_t *rec;
  uint32_t nrec;
  int hdr_ncol;     /* columns of the header parsed so far */
  int hdr_done;     /* the whole header is parsed */
  uint32_t hdr_pos; /* next serial type's offset in the header */
  uint32_t hdr_end; /* header length */
  uint32_t body;    /* body offset of the next column */
  /* the header cache: capcol columns; at most VM_HDR_FEW, the room vm_new
   * gives every cursor in the Vm's block, else shale_malloc'd (freed by vm_free) */
  uint32_t *types, *offsets;
  int capcol;
#define VM_HDR_FEW 16
  uint8_t *buf;
  uint32_t bufcap;
  /* sorter (kept across resets: emptied, not freed) */
  uint8_t *sbuf;
  uint64_t slen, scap;
  VmSortEnt *sent, *stmp; /* stmp: the sort's room (capsent entries) */
  int nsent, capsent;
  int keymode;   /* SORTKEY_*: how sort_key reduces the first key column */
  int64_t topn;  /* SorterLimit: keep only the topn first records (a max-heap in
                    sent[0..nsent) by sort order), 0: all */
  uint64_t live; /* bytes of sbuf the kept records use (topn) */
  int spos;
  VmSpill *spill; /* runs spilled to a temp file past the budget, or NULL */
  /* ephemeral tables: the tree's root in Vm.eph */
  uint32_t eph_root;
  /* window pass (WinOpen), freed by vm_cursor_close */
  struct VmWin *win;
  /* hash aggregation (HashAggOpen): emptied by vm_cursor_close, freed by vm_free */
  struct VmHashAgg *hash;
} VmCursor;

typedef struct VmBuf {
  char *z;
  uint32_t cap;
} VmBuf;

/* A RowSet held by a register (RowSetAdd/Read/Test): a growable array of
 * rowids, sorted and deduplicated on first read/test. */
typedef struct VmRowSet {
  int64_t *a;
  int n, cap;
  int sorted; /* a[0..n) sorted, unique */
  int pos;    /* next to read */
} VmRowSet;

typedef struct VmAgg {
  void *agg;
  int agg_size;
  void *spare; /* a finished group's context block, reused by the next */
  int spare_size;
  const FuncDef *def;
} VmAgg;

struct Vm {
  const VmProgram *prog;
  Btree *bt;
  int flags;
  int pc;
  int rc;
  int halted;
  int enc;         /* text encoding of the records: RECORD_ENC_*, *hooks->text_enc (vm_set_hooks,
                      Transaction) */
  uint8_t stepped; /* vm_step ran since vm_new / the last vm_reset (vm_free resets only then) */
  size_t blk_size; /* bytes of the block vm_new allocated (the Vm and its arrays) */
  char *errmsg;
  ShValue *reg; /* nreg + 1 */
  VmBuf *rbuf;  /* nreg + 1 */
  VmBuf keybuf;
  VmBuf recvals; /* MakeRecord: the row's values as stored (REAL stored as integer) */
  VmBuf scratch; /* spare buffer swapped with rbuf[r] (Concat, MakeRecord) */
  VmAgg *agg;    /* nreg + 1 */
  VmCursor *cur; /* ncursor */
  ShValue *var;  /* nvar + 1 */
  VmBuf *vbuf;
  uint8_t *once; /* nop */
  int res_base, res_n;
  int cmp_result;        /* Compare -> Jump */
  const Collation *coll; /* CollSeq */
  int agg_skip;          /* the last AggStep: 0 its row became the best of min()/max(),
                            1 not (FuncCtx.skip_accum_load), 2 not called (DISTINCT) */
  uint8_t pure;          /* PureFunc: context kind of the next Function call */
  /* AggStep/AggInverse's call context, built once per vm_step call (actx_ok
   * cleared at entry: the hooks may change between calls) and between calls
   * holding no result, message or error; each call sets def, coll and the
   * slot's blocks */
  FuncCtx actx;
  uint8_t actx_ok;
  /* Function's call context, kept the same way (sctx_ok cleared at entry);
   * each call sets def, coll, aux_site and pure */
  FuncCtx sctx;
  uint8_t sctx_ok;
  int own_txn;       /* this Vm began a transaction (own_mask != 0) */
  uint32_t own_mask; /* databases whose transaction this Vm began (bit i: dbv[i]) */
  int stmt_sp;       /* >= 0 while statement savepoints are open (sp_db) */
  uint32_t sp_mask;  /* databases with a statement savepoint open */
  int vtab_sp;       /* >= 0: the virtual tables' statement savepoint level (VM_VTAB_SAVEPOINT) */
  int sp_db[VM_MAX_DB];  /* sp_mask bit i: index of database i's statement savepoint */
  Btree *dbv[VM_MAX_DB]; /* the connection's databases (0 main, 1 temp, 2.. attached);
                            dbv[0] == bt; NULL: not open (temp not used yet) */
  int ndb;
  int oe; /* conflict resolution of the failing Halt (0 = ABORT) */
  int txn_rolled_back;
  uint8_t gave_txn;    /* this run began the transaction and handed it over (vm_release_txn) */
  uint8_t undo_all;    /* ... then failed as SQLite undoes the whole transaction for */
  uint8_t sole_writer; /* vm_set_sole_writer */
  uint8_t undo_vtabs;  /* vm_undo_vtabs */
  uint8_t wrote;       /* this run began a write transaction op (not read-only) */
  int64_t nchange;
  int64_t nchange_sub; /* changes made by trigger sub-programs (total_changes) */
  int64_t last_rowid;
  uint8_t last_rowid_set; /* an Insert with VM_OPFLAG_LASTROWID ran */
  void *conn;
  const FuncConnCallbacks *cb;
  FuncAux *aux;
  int64_t now_ms; /* 'now' of the date functions: cached for one vm_step (0 = unset) */
  Btree *eph;     /* in-memory database for ephemeral tables (lazily opened; kept
                   * open, emptied, across executions; closed by vm_free) */
  const VmConnHooks *hooks;
  int64_t nfk;                          /* statement FK violation counter */
  int64_t stmt_def_fk, stmt_def_imm_fk; /* deferred FK counters when the statement
                                           savepoint opened (restored if it rolls back) */
  int depth;                            /* sub-program nesting (0: a top-level Vm) */
  VmRowSet *rowset;                     /* nreg + 1, lazily allocated */
  /* sub-programs (triggers) */
  Vm *parent;             /* the caller, while this Vm runs as a sub-program */
  int param_base;         /* caller's register that Param p1 = 0 reads */
  Vm **subvm;             /* nop, lazily allocated: a reusable child per Program op */
  int busy;               /* running as a child (recursion gets a fresh Vm) */
  uint64_t sorter_budget; /* bytes of records a sorter keeps in memory */
  /* counters (vm_stat) and the progress/interrupt check */
  /* ops executed since vm_new = check_at - left; the dispatch only counts
   * left down (one decrement per op) and runs vm_check when it reaches 0 */
  int64_t check_at; /* op count at which the next progress/interrupt check runs */
  int64_t left;     /* ops until then (>= 0 between ops) */
  /* the hooks and their check_gen that scheduled check_at (vm_check) */
  const VmConnHooks *checked_hooks;
  unsigned checked_gen;
  int64_t nfullscan, nsort;
  /* preupdate hook (vm_preupdate.c): the old row an UPDATE that changes the
   * rowid (or of a WITHOUT ROWID table) deleted, kept for the Insert that
   * follows on cursor pu_cur */
  VmBuf pu_old;
  uint32_t pu_n;
  int64_t pu_key;
  int pu_cur; /* -1: none kept */
};

/* vm_window.c: the window engine behind WinOpen/WinPush/WinEnd/WinRow.
 * Each returns SHALE_OK or an error code with Vm.errmsg set; win_row
 * returns 1 when it produced a row, 0 when none is ready. */
int vm_win_open(Vm *, VmCursor *, const VmWinSpec *, const ShValue *start, const ShValue *end);
int vm_win_push(Vm *, VmCursor *, const ShValue *row);
int vm_win_end(Vm *, VmCursor *);
int vm_win_row(Vm *, VmCursor *, ShValue *out);
void vm_win_free(struct VmWin *);

/* vm_hash.c: the groups of a hash aggregation (HashAgg* opcodes). Each
 * returns SHALE_OK or an error code. find makes key's group current
 * (*refused = 1 instead when the key is new and the table is past the
 * sorter budget); next loads the next group in key order when its key is
 * below bound (bound NULL: any), *loaded = 0 at the end. */
typedef struct VmHashAgg VmHashAgg;
int vm_hash_open(Vm *, VmCursor *, const KeyInfo *, int lo, int nstate);
int vm_hash_find(Vm *, VmCursor *, const ShValue *key, int *refused);
int vm_hash_add(Vm *, VmCursor *, const ShValue *key, int *found);
int vm_hash_save(Vm *, VmCursor *);
int vm_hash_sort(Vm *, VmCursor *);
int vm_hash_next(Vm *, VmCursor *, const ShValue *bound, int *loaded);
void vm_hash_reset(Vm *, VmHashAgg *);
void vm_hash_free(Vm *, VmHashAgg *);

/* vm_analyze.c: scan index cursor bc from its first entry (left at its
 * end): counts[0] = entries, counts[1 + i] (i < nkey) = distinct values of
 * the first i + 1 key columns under ki's collations, NULLs equal (ANALYZE).
 * enc: the records' text encoding (RECORD_ENC_*); a nonzero *interrupt
 * (NULL: none) stops the scan with SHALE_INTERRUPT. */
int vm_analyze_scan(BtCursor *bc, const KeyInfo *ki, int nkey, int enc, volatile int *interrupt,
                    int64_t *counts);

/* vm_sort.c: the sorter (Sorter* opcodes). insert/sort/next return SHALE_OK
 * or an error code (SHALE_CORRUPT for a malformed record); sort sets *empty
 * when there is no record, next *more while one is current; row gives the
 * current record (0: none), valid until the next call on the cursor.
 * close drops the records and any spill files; release frees the buffers a
 * closed sorter keeps for its next use. */
void vm_sorter_open(VmCursor *, KeyInfo *, int nfield);
void vm_sorter_limit(VmCursor *, int64_t lim, int64_t off);
int vm_sorter_insert(Vm *, VmCursor *, const void *rec, uint32_t n);
/* *drop = 1 when sorter c keeps a full top-N whose greatest record sorts
 * at or before key[0..nkey) on its first nkey columns: a record starting
 * with that key and inserted after every stored one would be dropped.
 * SHALE_CORRUPT on a malformed stored record. */
int vm_sorter_topn_drops(VmCursor *c, const ShValue *key, int nkey, int *drop);
int vm_sorter_sort(Vm *, VmCursor *, int *empty);
int vm_sorter_next(VmCursor *, int *more);
int vm_sorter_row(const VmCursor *, const uint8_t **rec, uint32_t *n);
void vm_sorter_close(VmCursor *);
void vm_sorter_release(VmCursor *);

/* vm.c: roll back the transactions this Vm began; end its statement
 * savepoints (rolling them back first when rollback). */
void vm_rollback_owned(Vm *);
int vm_stmt_sp_end(Vm *, int rollback);

/* vm_preupdate.c: the preupdate hook's calls from Insert, Delete and Clear
 * (only when v->hooks->preupdate is set). SHALE_OK or an error code. */
int vm_preupdate_insert(Vm *, const VmOp *, VmCursor *, int64_t rowid, const ShValue *rec);
int vm_preupdate_delete(Vm *, const VmOp *, VmCursor *);
/* IdxDelete with VM_OPFLAG_ISUPDATE, on the entry: keep the WITHOUT ROWID
 * row an UPDATE rewrites, for its Insert. */
int vm_preupdate_keep(Vm *, VmCursor *);
int vm_preupdate_clear(Vm *, const VmOp *, Btree *);

/* vm_exec.c */
void vm_cursor_close(Vm *, VmCursor *);
/* vm_vtab.c: the V* opcodes but the per-row ones (*jump: go to p2); closing
 * a VMC_VTAB cursor. */
int vm_vtab_exec(Vm *, const VmOp *op, ShValue *reg, int *jump);
/* The per-row ones, called from the dispatch directly: VNext (1: go to
 * p2, 0: done, <0: -error code), VColumn into r[p3], VRowid into r[p2]. */
int vm_vtab_next(Vm *, const VmOp *op);
int vm_vtab_column(Vm *, const VmOp *op, ShValue *out);
int vm_vtab_rowid(Vm *, const VmOp *op, ShValue *out);
void vm_vtab_close(VmCursor *);
/* halt: the virtual tables' part of a commit (xSync, then after the
 * B-trees xCommit) and of a rollback. */
int vm_vtab_sync(Vm *);
void vm_vtab_end(Vm *, int commit);
/* The statement savepoint on the virtual tables (VM_VTAB_SAVEPOINT): op 0
 * opens it (xSavepoint; again, at the same level, for each further database
 * the statement writes, as SQLite), 1 releases it, 2 rolls back to it and
 * releases it. */
int vm_vtab_stmt_sp(Vm *, int op);
/* Forget that savepoint without calling the modules: autocommit mode's only
 * writer, whose transaction end the caller makes (vm_set_sole_writer). */
void vm_vtab_stmt_sp_drop(Vm *);
/* Close the cursors of a run that ended (halt, reset), keeping parked
 * ones; park: park the table and index cursors of databases whose
 * transaction this Vm does not end (a halt without error). */
void vm_close_run(Vm *, int park);
/* Make *buf hold at least n bytes (kept, grown); NULL on OOM. */
char *vm_buf_need(VmBuf *buf, uint32_t n);

#endif /* SHALE_VM_INT_H */
