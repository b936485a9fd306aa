/*
 * fts3_int.h -- private interface of the FTS3/FTS4 extension: the table
 * object, the tokenizer, the segment reader and the query expressions.
 *
 * The on-disk format is SQLite's (its FTS3 documentation, "Data
 * Structures"): %_content(docid, c0NAME, c1NAME, ...) holds the rows;
 * %_segdir(level, idx, start_block, leaves_end_block, end_block, root) one
 * row per segment, the newest at the lowest level with the highest idx;
 * %_segments(blockid, block) the nodes of segments too big for their root.
 * A node starts with its height as a varint (0: a leaf). A leaf holds
 * terms in order, each prefix-compressed against the one before (the
 * first: varint length, bytes; the others: varint shared prefix, varint
 * suffix length, suffix) and followed by varint length and its doclist.
 * A doclist is, per document in docid order, the varint docid (the first
 * absolute, then the delta) and its position list: positions as varint
 * (delta from the previous in the column + 2), 0x01 then a varint column
 * number to change column (0 is implicit at the start), 0x00 at the end.
 * A document listed with no positions is a deletion: it shadows the entries
 * of older segments. Varints here are little-endian base-128 (7 bits a byte,
 * the high bit set on all but the last), not SQLite's record varints.
 *
 * Invariants:
 *  1. Fts3Hits lists documents in ascending docid order, each once, with
 *     positions ascending as (column << 32 | offset).
 */
#ifndef SHALE_EXT_FTS3_INT_H
#define SHALE_EXT_FTS3_INT_H

#include <stdint.h>

#include "../tok/tok.h"
#include "shale.h"

/* ---- varints and buffers (fts3_index.c) ---- */

/* Decode a varint in [p, end) into *v; its length, 0 when malformed. */
int fts3_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v);
/* Encode v at p (room for 10 bytes); returns the length. */
int fts3_put_varint(uint8_t *p, uint64_t v);

/* ---- tokenizers (fts3_tok.c) ---- */

typedef enum { FTS3_TOK_SIMPLE, FTS3_TOK_PORTER, FTS3_TOK_UNICODE61 } Fts3TokKind;
typedef struct Fts3Tok {
  Fts3TokKind kind;
  ExtTokU61 u; /* the classes (simple, porter: raw bytes >= 0x80) */
} Fts3Tok;
/* Called for each token: its folded text, byte range in the input and
 * position. A non-zero return stops the walk and is returned. */
typedef int (*Fts3TokenCb)(void *ctx, const char *tok, int ntok, int start, int end, int pos);
int fts3_tokenize(const Fts3Tok *, const char *z, int n, void *ctx, Fts3TokenCb cb);
/* Parse "tokenize=NAME ARGS" (argv without the option name) into a
 * tokenizer (the one it held freed); SQLite's message in *err. */
int fts3_tok_parse(Fts3Tok *, const char *spec, char **err);
/* The tokenizer name with its (dequoted) arguments: SHALE_ERROR with
 * "unknown tokenizer: NAME" in *err for an unknown name, without a message
 * for a bad argument. */
int fts3_tok_create(Fts3Tok *, const char *name, int argc, char **argv, char **err);
void fts3_tok_free(Fts3Tok *);
/* Register the fts3tokenize module (fts3_tokenize.c). */
int fts3_tokenize_register(shale *db);
/* SQLite's FTS3 argument words: the next word or quoted string in z (its
 * length in *n), NULL at the end; dequoting in place; the word bytes. */
const char *fts3_next_token(const char *z, int *n);
void fts3_dequote(char *z);
int fts3_id_char(char c);

/* ---- the table ---- */

typedef struct Fts3Pending Fts3Pending;

typedef struct Fts3Table {
  shale_vtab base;
  shale *db;
  char *zdb, *zname; /* database and table name */
  int fts4;          /* the fts4 module (has %_docsize, %_stat) */
  int ncol;
  char **cols; /* column names */
  Fts3Tok tok;
  /* FTS4 options (fts3_vtab.c) */
  int has_docsize; /* FTS4 without matchinfo=fts3: %_docsize kept */
  int desc;        /* order=desc */
  char *content;   /* content=: the external table ("": none); NULL: %_content */
  char *langid;    /* languageid=: the column's name, or NULL */
  char *zcompress, *zuncompress, *zprefix; /* the option values */
  uint8_t *notindexed;                     /* per column: named by notindexed= (not tokenized) */
  int nprefix;                             /* prefix=: the lengths (bytes) of the prefix indexes */
  int *prefix;
  char *read_sql; /* "SELECT rowid, COLS... FROM ..." reading rows (uncompressed) */
  /* Indexes: SQLite's %_segdir levels are (langid * (nprefix + 1) + index)
   * * 1024 + level, index 0 the terms, index i the prefix[i - 1]-byte
   * prefixes of the terms at least that long. */
  int64_t lvl;         /* the first level of the index read or written */
  int plen;            /* writing a prefix index: its length; 0 the terms */
  Fts3Pending **ppend; /* the prefix indexes' pending terms (nprefix of them) */
  int pend_lang;       /* the language of the pending terms */
  shale_stmt *st_row;  /* read_sql WHERE rowid = ?1 */
  shale_stmt *st_seg;  /* the segments, oldest first */
  shale_stmt *st_leaf; /* the leaf blocks of one segment */
  Fts3Pending *pend;   /* terms of this transaction's writes (fts3_write.c) */
  int stat_loaded;     /* FTS4: stat[] holds %_stat row 0, changed since loaded */
  int64_t *stat;       /* documents, tokens per column, bytes of text */
} Fts3Table;

/* ---- document hit lists (fts3_index.c) ---- */

typedef struct Fts3Hits {
  int n, cap;
  int64_t *docid;
  int *off; /* positions of document i: pos[off[i] .. off[i+1]) */
  int npos, cappos;
  int64_t *pos; /* column << 32 | offset */
} Fts3Hits;

void fts3_hits_free(Fts3Hits *);
/* Start document docid (greater than the last one); SHALE_NOMEM. */
int fts3_hits_doc(Fts3Hits *, int64_t docid);
int fts3_hits_pos(Fts3Hits *, int64_t pos);
/* Close the last document: it keeps its positions (sorted, deduplicated). */
void fts3_hits_end(Fts3Hits *);

/* The documents holding term (every term starting with it when prefix)
 * in the table's index, with their positions. SHALE_CORRUPT_VTAB on a
 * malformed segment. */
int fts3_index_query(Fts3Table *, const char *term, int nterm, int prefix, Fts3Hits *out);

/* Every entry of the segments at level (all levels when level < 0), term
 * by term: cb(ctx, term, nterm, docid, seg, pos, npos), seg higher for a
 * newer segment, npos 0 for a deletion. */
typedef int (*Fts3EntryCb)(void *ctx, const char *term, int nterm, int64_t docid, int seg,
                           const int64_t *pos, int npos);
int fts3_index_scan_level(Fts3Table *, int level, void *ctx, Fts3EntryCb cb);

/* ---- writing (fts3_write.c) ---- */

/* Add the terms of a row being inserted (or deleted) to the pending
 * terms: text[i] (len[i] bytes, NULL for none) per column; ntok[i] gets
 * each column's token count when ntok is not NULL. */
int fts3_write_row(Fts3Table *, int64_t docid, const char *const *text, const int *len,
                   int is_delete, int *ntok);
/* Write the pending terms as a new level-0 segment (merging a full level
 * first); nothing pending is a no-op. */
int fts3_write_flush(Fts3Table *);
void fts3_write_discard(Fts3Table *);
/* 'optimize': everything pending, then every segment, into one segment. */
int fts3_write_optimize(Fts3Table *);
void fts3_pending_free(Fts3Pending *);

/* ---- query expressions (fts3_expr.c) ---- */

typedef struct Fts3Expr Fts3Expr;
/* Parse q (the standard-enhanced syntax: AND OR NOT NEAR, parentheses,
 * "phrases", prefix*, column:) with default column col (-1: all). On a
 * syntax error *err is SQLite's message and SHALE_ERROR is returned. */
int fts3_expr_parse(Fts3Table *, const char *q, int col, Fts3Expr **out, char **err);
void fts3_expr_free(Fts3Expr *);
/* The matching docids, ascending, in *rows (shale_malloc'ed). */
int fts3_expr_eval(Fts3Table *, Fts3Expr *, int64_t **rows, int *nrows);

/* The expression as the auxiliary functions read it: its nodes in
 * pre-order (a node's left operand right after it), each phrase with its
 * documents and the start positions of its matches in each. */
typedef enum {
  FTS3_NODE_PHRASE,
  FTS3_NODE_NEAR,
  FTS3_NODE_NOT,
  FTS3_NODE_AND,
  FTS3_NODE_OR
} Fts3NodeKind;
typedef struct Fts3Node {
  Fts3NodeKind kind;
  int parent, left, right; /* node numbers, -1 for none */
  int near;                /* FTS3_NODE_NEAR: the distance */
  int nterm;               /* a phrase's tokens */
  int col;                 /* a phrase's column, -1 for any */
  Fts3Hits hits;           /* a phrase's matches */
} Fts3Node;
int fts3_expr_nodes(Fts3Table *, Fts3Expr *, Fts3Node **out, int *n);
void fts3_nodes_free(Fts3Node *, int n);

/* ---- auxiliary functions (fts3_aux.c) ---- */

/* What a cursor shows them (fts3_vtab.c): the pointer of type
 * "fts3cursor" its hidden column carries. */
typedef struct Fts3Aux Fts3Aux;
typedef struct Fts3AuxCursor {
  Fts3Table *t;
  Fts3Expr *expr; /* NULL: no MATCH */
  int64_t docid;  /* the current row */
  int desc;       /* rows in descending docid order */
  int64_t lvl;    /* the query's language: Fts3Table.lvl of its index 0 */
  Fts3Aux *aux;   /* fts3_aux.c's state for this query, freed by fts3_aux_free */
} Fts3AuxCursor;
/* The current row's text of column col (NULL for a NULL), valid until
 * the cursor moves (fts3_vtab.c). */
int fts3_cursor_text(Fts3AuxCursor *, int col, const char **z, int *n);
/* xFindFunction: offsets, snippet, matchinfo. */
int fts3_aux_find(int nargs, const char *name, shale_func_fn *fn, void **arg);
/* Make the functions exist for overloading (shale_overload_function). */
int fts3_aux_register(shale *db);
void fts3_aux_free(Fts3Aux *);

/* ---- special commands and savepoints (fts3_write.c) ---- */

/* INSERT INTO t(t) VALUES(cmd) for 'rebuild', 'integrity-check',
 * 'merge=X,Y', 'automerge=N' ('optimize' is fts3_write_optimize): SQLite's
 * errors ("SQL logic error" for an unknown or malformed command,
 * SHALE_CORRUPT_VTAB when the index does not match the content). */
int fts3_write_command(Fts3Table *, const char *cmd);
int fts3_write_savepoint(Fts3Table *, int n);
int fts3_write_release(Fts3Table *, int n);
int fts3_write_rollback_to(Fts3Table *, int n);
/* Index row docid's values as an INSERT does, with FTS4's %_docsize and
 * totals (fts3_vtab.c); fts3_stat_reset zeroes the totals in memory. */
int fts3_table_index_row(Fts3Table *, int64_t docid, const char *const *text, const int *len);
int fts3_stat_reset(Fts3Table *);

#endif /* SHALE_EXT_FTS3_INT_H */
