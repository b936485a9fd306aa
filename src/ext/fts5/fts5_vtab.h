/*
 * fts5_vtab.h -- the table and cursor objects of the fts5 module, shared
 * by the module methods (fts5_vtab.c), the shadow-table storage
 * (fts5_storage.c) and the auxiliary functions (fts5_aux.c).
 *
 * Invariants:
 *  1. Fts5Table.nrow/coltotal mirror the averages record (%_data id 1)
 *     plus this transaction's changes once avg_loaded; they are written
 *     back at xSync (avg_dirty) and dropped at commit/rollback.
 *  2. A table is on its connection's Fts5Global list from a successful
 *     xCreate/xConnect to xDisconnect/xDestroy. A cursor is on its list from xOpen to
 *     xClose; its id (the value of the hidden column named like the table)
 *     is how an auxiliary function finds it.
 *  3. broken != 0: a write failed out of memory or on I/O part way (the
 *     pending index, the totals or the shadow tables may hold part of it);
 *     every write, query and the commit are refused (SHALE_ABORT) until the
 *     transaction is rolled back, or, for FTS5_BROKEN_WRITE (a failed
 *     xUpdate), a savepoint begun before it. SQLite rolls the transaction
 *     back itself on such errors when no statement savepoint covers them.
 *  4. What is pending is written at xSavepoint and xRelease, so at
 *     xRollbackTo only what came after the savepoint is pending (SQLite's
 *     rule; the core calls xSavepoint before its own savepoint opens).
 */
#ifndef SHALE_FTS5_VTAB_H
#define SHALE_FTS5_VTAB_H

#include "fts5_int.h"

/* Fts5Table.broken */
#define FTS5_BROKEN_WRITE 1 /* an xUpdate failed part way */
#define FTS5_BROKEN_FLUSH 2 /* writing out what was pending failed */

typedef struct Fts5Cursor Fts5Cursor;

typedef struct Fts5Table Fts5Table;

/* A tokenizer module registered with xCreateTokenizer. */
typedef struct Fts5TokMod {
  struct Fts5TokMod *next;
  char *name;
  void *ctx;
  fts5_tokenizer m;
  void (*destroy)(void *);
} Fts5TokMod;

/* An auxiliary function registered with xCreateFunction (the user data of
 * its SQL function). */
typedef struct Fts5Aux {
  Fts5Global *g;
  void *ctx;
  fts5_extension_function fn;
  void (*destroy)(void *);
} Fts5Aux;

/* Data an auxiliary function keeps with a cursor (xSetAuxdata). */
typedef struct Fts5Auxdata {
  struct Fts5Auxdata *next;
  const Fts5Aux *aux;
  void *p;
  void (*del)(void *);
} Fts5Auxdata;

/* One phrase instance of a row (xInst): ordered by (col, off), ties by
 * phrase. */
typedef struct Fts5Inst {
  int phrase, col, off;
} Fts5Inst;

struct Fts5Global {
  fts5_api api; /* first: the fts5_api pointer is the Fts5Global */
  shale *db;
  Fts5TokMod *toks, *dflt_tok; /* newest first; the default is the first registered */
  Fts5Cursor *cursors;
  Fts5Table *tables; /* connected fts5 tables (fts5vocab finds them here) */
  int64_t next_id;
};

struct Fts5Table {
  shale_vtab base;
  Fts5Table *next_table;
  Fts5Config c;
  Fts5Index *ix;
  Fts5Global *g;
  int avg_loaded, avg_dirty;
  int broken;        /* invariant 3: 0, FTS5_BROKEN_WRITE or FTS5_BROKEN_FLUSH */
  unsigned txn_ends; /* xRollbacks so far (one may come inside xUpdate) */
  int64_t nrow;
  int64_t *coltotal;
  shale_stmt *st_ins_content, *st_del_content, *st_ins_docsize, *st_del_docsize, *st_docsize,
      *st_row, *st_size_row;
  Fts5Cursor *row_owner; /* the cursor whose row st_row holds */
  Fts5Buf row_toks;      /* fts5_storage_index_row's tokens, kept for the next row */
  int *row_sizes;
};

struct Fts5Cursor {
  shale_vtab_cursor base;
  Fts5Cursor *next;
  int64_t id;
  Fts5Expr *expr; /* NULL: no MATCH */
  int64_t *rows;
  double *ranks; /* per row when ordered by rank */
  int sorted;    /* rows in rank order (ranks filled) */
  int nrows, i, desc;
  int64_t row_loaded; /* rowid whose content st_row holds */
  int have_row;
  int *colsize;
  int64_t colsize_row;
  int have_colsize;
  double *idf; /* bm25: per phrase, computed at the first call after xFilter */
  double avgdl;
  /* the extension API's view of the current row (fts5_cursor_insts) */
  int have_inst;
  int64_t inst_row;
  Fts5Inst *inst;
  int ninst;
  Fts5Pos *phrase_pos; /* per phrase: its instances, col << 32 | off */
  const Fts5Aux *aux;  /* the auxiliary function being called */
  Fts5Auxdata *auxdata;
};

/* ---- storage (fts5_storage.c) ---- */
int fts5_storage_create(Fts5Table *);
int fts5_storage_drop(Fts5Table *);
/* ALTER TABLE RENAME: each shadow table renamed to name_SUFFIX (xRename). */
int fts5_storage_rename(Fts5Table *, const char *name);
int fts5_storage_load_totals(Fts5Table *);
int fts5_storage_write_totals(Fts5Table *);
/* Index row rowid with column values vals[ncol] (insert) or remove it
 * (is_delete; vals the old values). Updates docsize and totals. */
int fts5_storage_index_row(Fts5Table *, int64_t rowid, shale_value **vals, int is_delete);
/* Insert the content row (normal tables); *rowid in/out (NULL rowid:
 * chosen by the table). */
int fts5_storage_content_insert(Fts5Table *, shale_value *rowid_in, shale_value **vals,
                                int64_t *rowid);
int fts5_storage_content_delete(Fts5Table *, int64_t rowid);
/* Old values of rowid from the content table (normal or external): a
 * statement positioned on the row (columns 0..ncol-1), or NULL if none. */
int fts5_storage_old_row(Fts5Table *, int64_t rowid, shale_stmt **out);
/* Token count per column of rowid (%_docsize; columnsize=0: counted
 * from the content, -1 per indexed column when contentless). */
int fts5_storage_docsize(Fts5Table *, int64_t rowid, int *sizes);
int fts5_storage_rebuild(Fts5Table *);
int fts5_storage_integrity(Fts5Table *);
int fts5_storage_delete_all(Fts5Table *);
int fts5_storage_config_set(Fts5Table *, const char *key, shale_value *v);
int fts5_storage_config_load(Fts5Table *);
/* Every rowid of the table in order (for scans without MATCH). */
int fts5_storage_all_rowids(Fts5Table *, int64_t **rows, int *n);
void fts5_storage_close(Fts5Table *);

/* The connected fts5 table zdb.zname of the connection (NULL if none). */
Fts5Table *fts5_find_table(Fts5Global *, const char *zdb, const char *zname);

/* ---- fts5vocab (fts5_vocab.c) ---- */
int fts5_vocab_register(shale *db, Fts5Global *g);

/* ---- auxiliary functions (fts5_aux.c) ---- */
int fts5_aux_register(shale *db, Fts5Global *g);
/* bm25 with unit weights, for the rank column and ORDER BY rank. */
int fts5_bm25(Fts5Table *, Fts5Cursor *, int64_t rowid, int nw, shale_value **w, double *out);
/* The content text of column col of the cursor's current row, or NULL. */
int fts5_cursor_text(Fts5Cursor *, int col, const char **z, int *n);
/* The instances of the cursor's current row (xInst's order), kept by the
 * cursor until it moves (detail=column/none: found in the text). */
int fts5_cursor_insts(Fts5Cursor *, const Fts5Inst **in, int *n);
/* Drop the cursor's per-row instance cache, and (all) its auxdata too. */
void fts5_cursor_clear_row(Fts5Cursor *, int all);
/* A cursor over the rows matching phrase ip of c's query alone
 * (xQueryPhrase), positioned on the first; fts5_cursor_free ends it. */
int fts5_cursor_phrase(Fts5Cursor *c, int ip, Fts5Cursor **out);
void fts5_cursor_free(Fts5Cursor *);

/* ---- the fts5_api (fts5_api.c) ---- */
/* Fill g->api, register the built-in tokenizers and the SQL function
 * fts5(ptr) that hands the api out. */
int fts5_api_init(shale *db, Fts5Global *g);
/* Destroy the registered tokenizers (their xDestroy). */
void fts5_api_free(Fts5Global *g);
/* The Fts5ExtensionApi auxiliary functions are called with (fts5_ext.c). */
extern const Fts5ExtensionApi fts5_ext_api;
/* Call aux for cursor c (SQL arguments after the first in argv). */
void fts5_aux_invoke(const Fts5Aux *aux, Fts5Cursor *c, shale_context *ctx, int argc,
                     shale_value **argv);

#endif /* SHALE_FTS5_VTAB_H */
