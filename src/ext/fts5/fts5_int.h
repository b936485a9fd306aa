/*
 * fts5_int.h -- private interface of the FTS5 extension (src/ext/fts5/):
 * buffers and varints, tokenizers, the index (SQLite's %_data/%_idx
 * format), the query expression, and the table object the module methods
 * share.
 *
 * The extension is a client of the native API (include/shale.h) only, as a
 * loadable extension would be: it reads and writes its shadow tables with
 * shale_prepare_v2/shale_step. It includes src/util/util.h for varints.
 *
 * Invariants:
 *  1. Every index term starts with one byte naming its index: '0' the main
 *     index, '0'+i the i-th prefix index (1-based), as SQLite writes them.
 *  2. A Fts5Buf's p is NULL or shale_malloc'ed with cap >= n; functions that
 *     grow one set *rc to SHALE_NOMEM on failure and then do nothing.
 *  3. Poslist values are (column << 32) | offset, ascending.
 */
#ifndef SHALE_FTS5_INT_H
#define SHALE_FTS5_INT_H

#include <stdint.h>

#include "fts5_api.h"
#include "shale.h"

#define FTS5_CORRUPT (SHALE_CORRUPT | (1 << 8)) /* SQLITE_CORRUPT_VTAB */
#define FTS5_MAX_PREFIX 31
#define FTS5_DEFAULT_PGSZ 4050
/* Pending-term heap that flushes a segment (the 'hashsize' setting).
 * SQLite's 1 MB counts entry data, about 2 MB of heap; Shale counts heap
 * and takes 3 MB: fewer flushes, and fewer merges started by them. A
 * 20,000-document transaction (bench fts5_build) flushes 3 times and its
 * merges cost ~5% more instructions than one flush; at 1 MB of heap they
 * cost 80% more. */
#define FTS5_DEFAULT_HASHSIZE (3 * 1024 * 1024)
#define FTS5_MAX_TOKEN 32768 /* longer tokens are indexed truncated */
#define FTS5_AVERAGES_ROWID 1
#define FTS5_STRUCTURE_ROWID 10
/* %_data rowid of leaf pgno of segment segid (no doclist index, height 0). */
#define FTS5_SEGMENT_ROWID(segid, pgno) (((int64_t)(segid) << 37) + (int64_t)(pgno))

/* ---- buffers (fts5_buf.c) ---- */
typedef struct Fts5Buf {
  uint8_t *p;
  int n, cap;
} Fts5Buf;

void fts5_buf_free(Fts5Buf *);
/* Make room for more bytes after b->n: 1, or 0 with *rc set (or already
 * set). */
int fts5_buf_grow_slow(int *rc, Fts5Buf *, int more);
static inline int fts5_buf_grow(int *rc, Fts5Buf *b, int more) {
  if (*rc) return 0;
  return b->n + more <= b->cap ? 1 : fts5_buf_grow_slow(rc, b, more);
}
void fts5_buf_append(int *rc, Fts5Buf *, const void *p, int n);
/* The text of a value, or of column col of a statement's row, in *z (NULL
 * for a NULL) and its bytes in *n: SHALE_NOMEM when the value is not NULL
 * but its text could not be made (out of memory). */
int fts5_value_text(shale_value *v, const char **z, int *n);
int fts5_column_text(shale_stmt *st, int col, const char **z, int *n);
void fts5_buf_varint_slow(Fts5Buf *, uint64_t v);
static inline void fts5_buf_varint(int *rc, Fts5Buf *b, uint64_t v) {
  if (!fts5_buf_grow(rc, b, 9)) return;
  if (v < 0x80)
    b->p[b->n++] = (uint8_t)v;
  else
    fts5_buf_varint_slow(b, v);
}
void fts5_buf_u16(uint8_t *p, int v);
int fts5_get_u16(const uint8_t *p);
uint32_t fts5_get_u32(const uint8_t *p);
/* Varint at p (before end); 0 when it runs past end. One-byte varints (most
 * deltas and positions) inline. */
int fts5_get_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *v);
static inline int fts5_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p < end && *p < 0x80) {
    *v = *p;
    return 1;
  }
  return fts5_get_varint_slow(p, end, v);
}

/* A growable array of poslist values (invariant 3). */
typedef struct Fts5Pos {
  int64_t *a;
  int n, cap;
} Fts5Pos;
void fts5_pos_grow(int *rc, Fts5Pos *);
/* Room for extra more values (*rc SHALE_NOMEM when there is none). */
void fts5_pos_reserve_slow(int *rc, Fts5Pos *, int extra);
static inline void fts5_pos_reserve(int *rc, Fts5Pos *p, int extra) {
  if (p->cap - p->n < extra) fts5_pos_reserve_slow(rc, p, extra);
}
static inline void fts5_pos_add(int *rc, Fts5Pos *p, int64_t v) {
  if (p->n == p->cap) fts5_pos_grow(rc, p);
  if (*rc == SHALE_OK) p->a[p->n++] = v;
}
void fts5_pos_free(Fts5Pos *);
/* Decode SQLite's poslist bytes (no size header) into out (cleared). */
int fts5_poslist_decode(const uint8_t *p, int n, Fts5Pos *out);
/* The same, appending to out (kept). */
int fts5_poslist_decode_append(const uint8_t *p, int n, Fts5Pos *out);
/* Encode positions as SQLite's poslist bytes (appended to out). */
void fts5_poslist_encode(int *rc, const Fts5Pos *, Fts5Buf *out);

/* ---- tokenizers (fts5_tok.c, the registry in fts5_api.c) ---- */
typedef struct Fts5Global Fts5Global;
/* Called per token (fts5_tokenizer's xToken): FTS5_TOKEN_* flags, text
 * (folded), its byte range in the input. Nonzero return stops the tokenizer
 * with that code. */
typedef int (*Fts5TokenCb)(void *ctx, int tflags, const char *tok, int ntok, int start, int end);

/* A table's tokenizer: the module's methods and the instance they made. */
typedef struct Fts5Tok {
  fts5_tokenizer m;
  Fts5Tokenizer *inst;
  int pattern; /* fts5_tok_pattern */
  int builtin; /* one of fts5_tok.c's (fails only out of memory) */
} Fts5Tok;

/* Create the tokenizer a tokenize= argument list names (argv[0] the name,
 * none: the default) from the connection's registry into *out. SHALE_ERROR
 * and *err set (shale_malloc'ed, SQLite's message) when unknown; when its
 * xCreate fails, that code (SHALE_NOMEM stays so) and SQLite's message;
 * SHALE_NOMEM out of memory. */
int fts5_tok_new(Fts5Global *, int argc, const char *const *argv, Fts5Tok **out, char **err);
void fts5_tok_free(Fts5Tok *);
/* Run the tokenizer (flags: FTS5_TOKENIZE_*). */
int fts5_tokenize(Fts5Tok *, int flags, const char *text, int n, void *ctx, Fts5TokenCb cb);
/* The LIKE/GLOB constraints a tokenizer's index serves: trigram folded
 * SHALE_INDEX_CONSTRAINT_LIKE (LIKE and GLOB), case-sensitive _GLOB; else 0
 * (any other module, as SQLite tells trigram by its xCreate). */
int fts5_tok_pattern(const fts5_tokenizer *m, Fts5Tokenizer *inst);
/* Whether the tokenizer is built in all the way down (porter's parent too). */
int fts5_tok_builtin(const fts5_tokenizer *m, Fts5Tokenizer *inst);
/* Register unicode61 (the default, first), ascii, porter and trigram. */
int fts5_tok_register_builtins(fts5_api *api);
/* Position counting under colocated tokens, as SQLite's: a token flagged
 * FTS5_TOKEN_COLOCATED shares the previous one's position (the first of a
 * column never does). *n counts positions; returns this token's. */
static inline int fts5_tok_pos(int *n, int tflags) {
  if (!(tflags & FTS5_TOKEN_COLOCATED) || *n == 0) (*n)++;
  return *n - 1;
}

/* ---- configuration ---- */
enum { FTS5_CONTENT_NORMAL, FTS5_CONTENT_NONE, FTS5_CONTENT_EXTERNAL };
/* detail=: what a doclist entry holds after its rowid. FULL: a poslist
 * (column, offset); COLUMN: a poslist whose offsets are the columns the
 * term occurs in (all in column 0); NONE: nothing, or 0x00 (deleted) or
 * 0x00 0x00 (deleted, and present again). */
enum { FTS5_DETAIL_FULL, FTS5_DETAIL_COLUMN, FTS5_DETAIL_NONE };

typedef struct Fts5Config {
  shale *db;
  Fts5Global *g; /* the connection's registry (tokenizers) */
  char *zdb, *zname;
  int ncol;
  char **cols;
  uint8_t *unindexed;
  int content;    /* FTS5_CONTENT_* */
  char *zcontent; /* external content table (quoted name) or NULL */
  char *zcontent_rowid;
  int nprefix;
  int prefix[FTS5_MAX_PREFIX];
  int columnsize;
  int detail; /* FTS5_DETAIL_* */
  Fts5Tok *tok;
  int pgsz;
  int automerge, crisismerge, usermerge;
  int hashsize; /* heap of pending terms before a flush (fts5_index.c 5) */
  uint32_t cookie;
} Fts5Config;

/* Parse xCreate/xConnect's argv (module, db, table, args...) into c.
 * SHALE_OK, or SHALE_ERROR with *err (SQLite's message). */
int fts5_config_parse(Fts5Config *c, Fts5Global *g, shale *db, int argc, const char *const *argv,
                      char **err);
void fts5_config_free(Fts5Config *c);
/* ASCII case-insensitive equality of two names. */
int fts5_ci_eq(const char *a, const char *b);

/* ---- the index (fts5_index.c) ---- */
typedef struct Fts5Index Fts5Index;

/* One row of a doclist read back: rowid, and its positions, which are
 * pos.a[off .. off + n) of the list holding it. */
typedef struct Fts5Doc {
  int64_t rowid;
  int off, n;
} Fts5Doc;

/* A doclist (a term's over every segment, deleted rows dropped, or a
 * phrase's hits): rows in ascending rowid order; the positions of all rows
 * in one array, row after row (two allocations for the whole list). */
typedef struct Fts5List {
  Fts5Doc *a;
  int n, cap;
  Fts5Pos pos;
} Fts5List;
void fts5_list_free(Fts5List *);
/* Append a row (no positions yet) to l; *rc set on failure. */
void fts5_list_grow(int *rc, Fts5List *l);
static inline void fts5_list_push(int *rc, Fts5List *l, int64_t rowid) {
  if (l->n == l->cap) fts5_list_grow(rc, l);
  if (*rc) return;
  Fts5Doc *d = &l->a[l->n++];
  d->rowid = rowid;
  d->off = l->pos.n;
  d->n = 0;
}
/* Append a position to l's last row. */
static inline void fts5_list_add(int *rc, Fts5List *l, int64_t v) {
  fts5_pos_add(rc, &l->pos, v);
  if (*rc == SHALE_OK) l->a[l->n - 1].n++;
}
/* Remove l's last row (and its positions). */
static inline void fts5_list_pop(Fts5List *l) {
  l->pos.n = l->a[l->n - 1].off;
  l->n--;
}
static inline const int64_t *fts5_doc_pos(const Fts5List *l, const Fts5Doc *d) {
  return l->pos.a + d->off;
}

int fts5_index_open(Fts5Config *, Fts5Index **out);
void fts5_index_close(Fts5Index *);
/* Pending writes: begin a row (delete: its old tokens follow), then one
 * call per token. */
int fts5_index_begin_row(Fts5Index *, int64_t rowid, int is_delete);
int fts5_index_token(Fts5Index *, int col, int pos, const char *tok, int ntok);
/* Write the pending data out as a new segment (automerging after). */
int fts5_index_flush(Fts5Index *);
void fts5_index_discard(Fts5Index *);
/* Whether terms are pending (fts5_index_flush would write a segment). */
int fts5_index_pending(const Fts5Index *);
/* The doclist of term (the main index; prefix: every term starting with
 * it), merged over segments; flushes pending data first. */
int fts5_index_query(Fts5Index *, const char *term, int nterm, int prefix, Fts5List *out);
/* Merge every segment into one ('optimize'), drop everything ('delete-all'). */
int fts5_index_optimize(Fts5Index *);
/* 'merge', N: SQLite's incremental merge work (N < 0: all segments on one
 * level first). */
int fts5_index_merge(Fts5Index *, int n);
int fts5_index_delete_all(Fts5Index *);
/* Every entry of the main index in (term, rowid) order, deleted rows
 * left out: the term without its index byte, the positions as the query
 * gives them (detail=column: col << 32; none: one 0). Nonzero from cb stops
 * the scan with that code. */
typedef int (*Fts5EntryCb)(void *ctx, const char *term, int nterm, int64_t rowid,
                           const Fts5Pos *pos);
int fts5_index_entries(Fts5Index *, void *ctx, Fts5EntryCb cb);
/* Check the index against a checksum of the expected contents: every
 * (rowid, col, pos, term) of the main and prefix indexes. */
int fts5_index_checksum(Fts5Index *, uint64_t *out);
uint64_t fts5_entry_checksum(int64_t rowid, int col, int pos, int idx, const char *t, int n);
/* Number of characters of prefix length nchar as bytes of tok, 0 if shorter. */
int fts5_prefix_bytes(const char *tok, int ntok, int nchar);

/* ---- expressions (fts5_expr.c) ---- */
typedef struct Fts5Expr Fts5Expr;
/* Parse query q; col >= 0 limits it to that column (col MATCH q). */
int fts5_expr_parse(Fts5Config *, const char *q, int col, Fts5Expr **out, char **err);
/* A new expression of phrase ip of e alone, its column filter and ^ kept
 * (xQueryPhrase). */
int fts5_expr_clone_phrase(Fts5Expr *e, int ip, Fts5Expr **out);
/* a AND b into *a (b is consumed). */
int fts5_expr_and(Fts5Expr **a, Fts5Expr *b);
void fts5_expr_free(Fts5Expr *);
int fts5_expr_nphrase(Fts5Expr *);
/* Evaluate: the sorted rowids that match (*rows, *nrows shale_malloc'ed).
 * The instances reported at a row follow SQLite's walk, so they depend on
 * the rows walked before it: desc walks in descending rowid order, and
 * first (if not NULL) is SQLite's first rowid (a rowid = constraint): the
 * walk starts at the first row then moves to it. */
int fts5_expr_eval(Fts5Expr *, Fts5Index *, int desc, const int64_t *first, int64_t **rows,
                   int *nrows);
/* After eval: the instances of phrase ip in row rowid (col<<32|pos of the
 * first token of each match), and the phrase's size in tokens. */
const Fts5Pos *fts5_expr_phrase_hits(Fts5Expr *, int ip, int64_t rowid);
int fts5_expr_phrase_size(Fts5Expr *, int ip);
/* detail=column/none (no positions in the index): the instances are found
 * again in the text, as SQLite does. For each phrase whose column filter
 * admits col (and, when live, that has hits at rowid), the offsets of its
 * token in z (column col's text) are appended to out[ip] (one per phrase). */
int fts5_expr_populate(Fts5Expr *, int64_t rowid, int live, int col, const char *z, int n,
                       Fts5Pos *out);
/* After populating every phrase (not live: SQLite's rank-sorted cursor),
 * empty the lists of the subtrees the row does not match. */
void fts5_expr_check(Fts5Expr *, Fts5Pos *out);
/* Number of rows of the whole table matching phrase ip alone. */
int fts5_expr_phrase_rows(Fts5Expr *, Fts5Index *, int ip, int64_t *n);

#endif /* SHALE_FTS5_INT_H */
