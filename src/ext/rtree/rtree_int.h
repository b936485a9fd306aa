/*
 * rtree_int.h -- private interface of the R-Tree module (src/ext/rtree/):
 * the table object, nodes and cells, and the functions the module's files
 * share. The module is a client of include/shale.h (docs/architecture.md,
 * "src/ext/"), storing its tree in three shadow tables exactly as SQLite's
 * rtree extension does, so files cross between the engines:
 *
 *   NAME_node(nodeno INTEGER PRIMARY KEY, data)   node 1 is the root
 *   NAME_rowid(rowid INTEGER PRIMARY KEY, nodeno[, a0, a1, ...])  leaf of each entry (+ aux)
 *   NAME_parent(nodeno INTEGER PRIMARY KEY, parentnode)           parent of each non-root node
 *
 * A node blob is node_size bytes, big-endian: [2 bytes depth of the tree,
 * meaningful in the root only][2 bytes cell count] then cells of
 * [8-byte id (rowid in a leaf, child node number above)][4 bytes per
 * coordinate: float32 bits (rtree) or int32 (rtree_i32)], min then max for
 * each dimension; the rest is zero.
 *
 * Invariants:
 *  1. A node read during one operation (xUpdate, rtreecheck) is kept in
 *     Rtree.cache until the operation ends (rtree_cache_end), so every read of
 *     a node sees the operation's own changes; dirty nodes are written back
 *     then. A node with no > 0 is in the cache at most once.
 *  2. A node's parent pointer, when set, is the node whose cell points to it
 *     (found by walking down from the root or through NAME_parent).
 *  3. The tree algorithms (choose subtree, R*-split, forced reinsert,
 *     condensing after delete) follow SQLite's choices step by step,
 *     including its floating-point arithmetic and tie rules, so that the
 *     same statements build byte-identical shadow tables in both engines.
 *  4. Corrupt node contents (bad sizes, cell counts, depths, missing nodes
 *     or mappings, cycles) give SHALE_CORRUPT_VTAB, never a crash.
 */
#ifndef SHALE_RTREE_INT_H
#define SHALE_RTREE_INT_H

#include <stdint.h>
#include <string.h>

#include "shale.h"

#define RT_MAX_DIM 5
#define RT_MAX_AUX 100
#define RT_MAX_DEPTH 40
#define RT_MAX_CELLS 51 /* node size cap when the page allows more */

typedef union RtCoord {
  float f;
  int32_t i;
} RtCoord;

typedef struct RtCell {
  int64_t id;
  RtCoord c[RT_MAX_DIM * 2];
} RtCell;

typedef struct RtNode {
  int64_t no;            /* 0: new, numbered when first written; deleted: its height */
  struct RtNode *parent; /* invariant 2 (NULL: root or not known yet) */
  struct RtNode *next;   /* in Rtree.cache or Rtree.deleted */
  int dirty;
  uint8_t *data; /* node_size bytes */
} RtNode;

typedef struct Rtree {
  shale_vtab base;
  shale *db;
  char *zdb, *zname; /* database and table name */
  int is_int;        /* rtree_i32 */
  int ndim, ndim2, naux;
  int node_size, cell_size;
  int depth;           /* read from the root at each operation */
  int reinsert_height; /* SQLite keeps it across operations of a connection */
  int64_t nrow_est;
  RtNode *cache, *deleted;
  shale_stmt *st[11]; /* prepared lazily, see rtree.c RT_ST_* */
  int nreaders;       /* open cursors positioned in the tree */
} Rtree;

enum {
  RT_ST_READ_NODE,
  RT_ST_WRITE_NODE,
  RT_ST_DEL_NODE,
  RT_ST_READ_ROWID,
  RT_ST_WRITE_ROWID,
  RT_ST_DEL_ROWID,
  RT_ST_READ_PARENT,
  RT_ST_WRITE_PARENT,
  RT_ST_DEL_PARENT,
  RT_ST_WRITE_AUX,
  RT_ST_READ_AUX,
  RT_ST_COUNT
};

/* ---- node bytes (rtree_tree.c) ---- */
static inline int rt_get2(const uint8_t *p) { return (p[0] << 8) | p[1]; }
static inline void rt_put2(uint8_t *p, int v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static inline int rt_ncell(const RtNode *n) { return rt_get2(n->data + 2); }
int rtree_max_cells(const Rtree *);
int rtree_min_cells(const Rtree *);
/* Big-endian loads, as shifts (one load and a byte swap where the host is
 * little-endian; right on any host). */
static inline uint32_t rt_get4(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t rt_get8(const uint8_t *p) {
  return ((uint64_t)rt_get4(p) << 32) | rt_get4(p + 4);
}
/* Cell i of a node's data: its id and coordinates (big-endian on disk). */
static inline void rtree_cell_get(const Rtree *t, const uint8_t *data, int i, RtCell *out) {
  const uint8_t *p = data + 4 + t->cell_size * i;
  out->id = (int64_t)rt_get8(p);
  p += 8;
  for (int k = 0; k < t->ndim2; k++, p += 4) {
    uint32_t v = rt_get4(p);
    memcpy(&out->c[k], &v, 4);
  }
}
static inline int64_t rtree_cell_id(const Rtree *t, const uint8_t *data, int i) {
  return (int64_t)rt_get8(data + 4 + t->cell_size * i);
}
void rtree_cell_put(const Rtree *, uint8_t *data, int i, const RtCell *c);
static inline double rtree_coord(const Rtree *t, RtCoord c) {
  return t->is_int ? (double)c.i : (double)c.f;
}

/* ---- shadow-table access (rtree.c) ---- */
struct StrBuf;
/* Append "z" as an SQL identifier (double quotes doubled). */
void rtree_quote(struct StrBuf *, const char *z);
/* The statement st (RT_ST_*), prepared at first use and reset. */
int rtree_stmt(Rtree *, int st, shale_stmt **out);
/* Run st with one or two integer parameters; SHALE_OK or an error. */
int rtree_run2(Rtree *, int st, int64_t a, int64_t b);
/* Look up key in st (READ_ROWID/READ_PARENT): *found, *val. */
int rtree_lookup(Rtree *, int st, int64_t key, int *found, int64_t *val);
/* A copy of node no's blob into buf (node_size bytes): SHALE_OK, or
 * SHALE_CORRUPT_VTAB when it is missing or of another size. */
int rtree_read_blob(Rtree *, int64_t no, uint8_t *buf);
/* The rtree constraint error for column pair iCol (0: UNIQUE on id). */
int rtree_constraint_error(Rtree *, int icol);
void rtree_set_error(Rtree *, const char *msg);

/* ---- the tree (rtree_tree.c) ---- */
/* The node no (through the cache, invariant 1), parent set if given. */
int rtree_node_get(Rtree *, int64_t no, RtNode *parent, RtNode **out);
/* Write back every dirty node and free the cache (rc: the operation's
 * result; on error nothing is written). Returns the first error. */
int rtree_cache_end(Rtree *, int rc);
/* Load the root and set Rtree.depth. */
int rtree_load_root(Rtree *, RtNode **root);
/* Insert cell (a new entry, id set) into the tree. */
int rtree_insert(Rtree *, RtCell *);
/* Delete entry rowid (present in NAME_rowid) from the tree. */
int rtree_delete(Rtree *, int64_t rowid);
/* 1 if cell c passes the checks of a leaf, as SQLite rounds (used by tests). */

/* ---- SQL functions (rtree_func.c) ---- */
int rtree_register_functions(shale *db);

#endif /* SHALE_RTREE_INT_H */
