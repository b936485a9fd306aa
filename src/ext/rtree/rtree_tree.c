/*
 * rtree_tree.c -- the R*-tree of the R-Tree module: node cache, cells,
 * choosing a subtree, inserting with forced reinsert or split, deleting
 * with condensation (rtree_int.h describes the node format).
 *
 * The decisions are SQLite's (rtree_int.h invariant 3), written from its
 * documented behaviour: choose the child that contains the new box (the
 * smallest such), else the one whose area grows least (ties: smaller
 * area); a full node that is not the root is emptied once per level and
 * insert ("forced reinsert": the cells whose extent is farthest from the
 * mean are inserted again from the top), else split along the axis of
 * least total margin at the distribution of least overlap (ties: least
 * area); deleting leaves a node with fewer than a third of its cells
 * removed and its cells inserted again, and a root with one child
 * collapses.
 *
 * Invariants:
 *  1. Areas of rtree (float) boxes multiply float differences in double,
 *     highest dimension first; margins, overlaps and distances use double
 *     differences: as SQLite computes them, so ties break the same way.
 *  2. Sorting is a top-down merge sort that takes the right element on
 *     ties (SQLite's order of equal keys).
 *  3. New nodes are numbered by inserting a NULL nodeno (the next rowid of
 *     NAME_node), right half first, at the same step as SQLite.
 *  4. Every node number read from a cell is checked against the cache's
 *     ancestors before use: a cycle is SHALE_CORRUPT_VTAB.
 */
#include <string.h>

#include "rtree_int.h"

int rtree_max_cells(const Rtree *t) { return (t->node_size - 4) / t->cell_size; }
int rtree_min_cells(const Rtree *t) { return rtree_max_cells(t) / 3; }

static void put8(uint8_t *p, int64_t x) {
  uint64_t v = (uint64_t)x;
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

void rtree_cell_put(const Rtree *t, uint8_t *data, int i, const RtCell *c) {
  uint8_t *p = data + 4 + t->cell_size * i;
  put8(p, c->id);
  p += 8;
  for (int k = 0; k < t->ndim2; k++, p += 4) {
    uint32_t v;
    memcpy(&v, &c->c[k], 4);
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
  }
}

/* ---- box arithmetic (invariant 1) ---- */

static double cell_area(const Rtree *t, const RtCell *p) {
  double a = 1.0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->is_int)
      a *= (double)((int64_t)p->c[2 * d + 1].i - (int64_t)p->c[2 * d].i);
    else {
      float diff = p->c[2 * d + 1].f - p->c[2 * d].f;
      a *= diff;
    }
  }
  return a;
}

static double cell_margin(const Rtree *t, const RtCell *p) {
  double m = 0;
  for (int k = t->ndim2 - 2; k >= 0; k -= 2)
    m += rtree_coord(t, p->c[k + 1]) - rtree_coord(t, p->c[k]);
  return m;
}

static void cell_union(const Rtree *t, RtCell *a, const RtCell *b) {
  for (int k = 0; k < t->ndim2; k += 2) {
    if (t->is_int) {
      if (b->c[k].i < a->c[k].i) a->c[k].i = b->c[k].i;
      if (b->c[k + 1].i > a->c[k + 1].i) a->c[k + 1].i = b->c[k + 1].i;
    } else {
      if (b->c[k].f < a->c[k].f) a->c[k].f = b->c[k].f;
      if (b->c[k + 1].f > a->c[k + 1].f) a->c[k + 1].f = b->c[k + 1].f;
    }
  }
}

/* 1 if box a contains box b. */
static int cell_contains(const Rtree *t, const RtCell *a, const RtCell *b) {
  for (int k = 0; k < t->ndim2; k += 2) {
    double a1 = rtree_coord(t, a->c[k]), a2 = rtree_coord(t, a->c[k + 1]);
    double b1 = rtree_coord(t, b->c[k]), b2 = rtree_coord(t, b->c[k + 1]);
    if (a2 < b2 || b1 < a1) return 0;
  }
  return 1;
}

/* cell_contains(cell, b) on a cell's coordinates as stored (p: past its
 * id), decoding a coordinate only when the comparison needs it. */
static int bytes_contain(const Rtree *t, const uint8_t *p, const RtCell *b) {
  for (int k = 0; k < t->ndim2; k += 2, p += 8) {
    uint32_t w[2] = {rt_get4(p), rt_get4(p + 4)};
    RtCoord x[2];
    memcpy(x, w, sizeof x);
    if (rtree_coord(t, x[1]) < rtree_coord(t, b->c[k + 1]) ||
        rtree_coord(t, b->c[k]) < rtree_coord(t, x[0]))
      return 0;
  }
  return 1;
}

static double cell_overlap(const Rtree *t, const RtCell *a, const RtCell *b) {
  double o = 1.0;
  for (int k = 0; k < t->ndim2; k += 2) {
    double x1 = rtree_coord(t, a->c[k]), y1 = rtree_coord(t, b->c[k]);
    double x2 = rtree_coord(t, a->c[k + 1]), y2 = rtree_coord(t, b->c[k + 1]);
    double lo = x1 > y1 ? x1 : y1, hi = x2 < y2 ? x2 : y2;
    if (hi < lo) return 0;
    o *= hi - lo;
  }
  return o;
}

/* ---- node cache (rtree_int.h invariant 1) ---- */

static RtNode *cache_find(Rtree *t, int64_t no) {
  for (RtNode *n = t->cache; n; n = n->next)
    if (n->no == no) return n;
  return NULL;
}

static RtNode *node_alloc(Rtree *t) {
  RtNode *n = shale_malloc(sizeof *n + (size_t)t->node_size);
  if (!n) return NULL;
  memset(n, 0, sizeof *n + (size_t)t->node_size);
  n->data = (uint8_t *)(n + 1);
  return n;
}

int rtree_node_get(Rtree *t, int64_t no, RtNode *parent, RtNode **out) {
  *out = NULL;
  RtNode *n = cache_find(t, no);
  if (n) {
    if (parent && n->parent && n->parent != parent) return SHALE_CORRUPT_VTAB;
    if (parent) n->parent = parent;
    *out = n;
    return SHALE_OK;
  }
  for (RtNode *p = parent; p; p = p->parent) /* invariant 4 */
    if (p->no == no) return SHALE_CORRUPT_VTAB;
  n = node_alloc(t);
  if (!n) return SHALE_NOMEM;
  int rc = rtree_read_blob(t, no, n->data);
  if (rc == SHALE_OK && no == 1) {
    t->depth = rt_get2(n->data);
    if (t->depth > RT_MAX_DEPTH) rc = SHALE_CORRUPT_VTAB;
  }
  if (rc == SHALE_OK && rt_get2(n->data + 2) > rtree_max_cells(t)) rc = SHALE_CORRUPT_VTAB;
  if (rc != SHALE_OK) {
    shale_free(n);
    return rc;
  }
  n->no = no;
  n->parent = parent;
  n->next = t->cache;
  t->cache = n;
  *out = n;
  return SHALE_OK;
}

int rtree_load_root(Rtree *t, RtNode **root) { return rtree_node_get(t, 1, NULL, root); }

static int node_write(Rtree *t, RtNode *n) {
  shale_stmt *s;
  int rc = rtree_stmt(t, RT_ST_WRITE_NODE, &s);
  if (rc) return rc;
  if (n->no)
    shale_bind_int64(s, 1, n->no);
  else
    shale_bind_null(s, 1);
  shale_bind_blob(s, 2, n->data, t->node_size, SHALE_STATIC);
  shale_step(s);
  rc = shale_reset(s);
  if (rc == SHALE_OK && !n->no) {
    n->no = shale_last_insert_rowid(t->db); /* invariant 3 */
    n->next = t->cache;
    t->cache = n;
  }
  n->dirty = 0;
  return rc;
}

static void free_list(RtNode *n) {
  while (n) {
    RtNode *next = n->next;
    shale_free(n);
    n = next;
  }
}

int rtree_cache_end(Rtree *t, int rc) {
  for (RtNode *n = t->cache; n && rc == SHALE_OK; n = n->next)
    if (n->dirty) rc = node_write(t, n);
  free_list(t->cache);
  free_list(t->deleted);
  t->cache = t->deleted = NULL;
  return rc;
}

static void cache_unlink(Rtree *t, RtNode *n) {
  for (RtNode **pp = &t->cache; *pp; pp = &(*pp)->next)
    if (*pp == n) {
      *pp = n->next;
      return;
    }
}

/* ---- node edits ---- */

/* Append c; 1 (and nothing done) when the node is full. */
static int node_append(Rtree *t, RtNode *n, const RtCell *c) {
  int k = rt_ncell(n);
  if (k >= rtree_max_cells(t)) return 1;
  rtree_cell_put(t, n->data, k, c);
  rt_put2(n->data + 2, k + 1);
  n->dirty = 1;
  return 0;
}

static void node_zero(Rtree *t, RtNode *n) {
  memset(n->data + 2, 0, (size_t)t->node_size - 2);
  n->dirty = 1;
}

static void node_delete_cell(Rtree *t, RtNode *n, int i) {
  int k = rt_ncell(n);
  uint8_t *p = n->data + 4 + t->cell_size * i;
  memmove(p, p + t->cell_size, (size_t)(k - i - 1) * (size_t)t->cell_size);
  rt_put2(n->data + 2, k - 1);
  n->dirty = 1;
}

static int parent_index(Rtree *t, RtNode *n, int *idx) {
  RtNode *p = n->parent;
  if (!p) return SHALE_CORRUPT_VTAB;
  int k = rt_ncell(p);
  for (int i = 0; i < k; i++)
    if (rtree_cell_id(t, p->data, i) == n->no) {
      *idx = i;
      return SHALE_OK;
    }
  return SHALE_CORRUPT_VTAB;
}

static int write_mapping(Rtree *t, int height, int64_t id, int64_t node) {
  return rtree_run2(t, height == 0 ? RT_ST_WRITE_ROWID : RT_ST_WRITE_PARENT, id, node);
}

/* The leaf (height 0) or node at height for cell c, from the root. */
static int choose_node(Rtree *t, const RtCell *c, int height, RtNode **out) {
  RtNode *n;
  int rc = rtree_node_get(t, 1, NULL, &n);
  for (int lvl = 0; rc == SHALE_OK && lvl < t->depth - height; lvl++) {
    int k = rt_ncell(n), found = 0;
    int64_t best = 0;
    double min_area = 0, min_growth = 0;
    RtCell x;
    for (int i = 0; i < k; i++) {
      if (!bytes_contain(t, n->data + 4 + t->cell_size * i + 8, c)) continue;
      rtree_cell_get(t, n->data, i, &x);
      double a = cell_area(t, &x);
      if (!found || a < min_area) {
        best = x.id;
        min_area = a;
        found = 1;
      }
    }
    for (int i = 0; !found && i < k; i++) {
      rtree_cell_get(t, n->data, i, &x);
      double a = cell_area(t, &x);
      cell_union(t, &x, c);
      double g = cell_area(t, &x) - a;
      if (i == 0 || g < min_growth || (g == min_growth && a < min_area)) {
        min_growth = g;
        min_area = a;
        best = x.id;
      }
    }
    if (k == 0) return SHALE_CORRUPT_VTAB;
    RtNode *child;
    rc = rtree_node_get(t, best, n, &child);
    n = child;
  }
  *out = rc == SHALE_OK ? n : NULL;
  return rc;
}

/* Grow the boxes above n to contain c. */
static int adjust_tree(Rtree *t, RtNode *n, const RtCell *c) {
  for (int cnt = 0; n->parent; cnt++) {
    if (cnt > RT_MAX_DEPTH) return SHALE_CORRUPT_VTAB;
    int i, rc = parent_index(t, n, &i);
    if (rc) return rc;
    RtCell x;
    rtree_cell_get(t, n->parent->data, i, &x);
    if (!cell_contains(t, &x, c)) {
      cell_union(t, &x, c);
      rtree_cell_put(t, n->parent->data, i, &x);
      n->parent->dirty = 1;
    }
    n = n->parent;
  }
  return SHALE_OK;
}

/* Set the parents' boxes to the exact bounds of n's cells, upwards. */
static int fix_bounds(Rtree *t, RtNode *n) {
  for (int cnt = 0; n->parent; cnt++) {
    if (cnt > RT_MAX_DEPTH) return SHALE_CORRUPT_VTAB;
    int k = rt_ncell(n);
    RtCell box, x;
    rtree_cell_get(t, n->data, 0, &box);
    for (int i = 1; i < k; i++) {
      rtree_cell_get(t, n->data, i, &x);
      cell_union(t, &box, &x);
    }
    box.id = n->no;
    int i, rc = parent_index(t, n, &i);
    if (rc) return rc;
    rtree_cell_put(t, n->parent->data, i, &box);
    n->parent->dirty = 1;
    n = n->parent;
  }
  return SHALE_OK;
}

/* ---- sorting (invariant 2) ---- */

typedef int (*LessFn)(const void *ctx, int a, int b);

static void merge_sort(int *idx, int n, int *spare, LessFn less, const void *ctx) {
  if (n < 2) return;
  int nl = n / 2, nr = n - nl;
  int *left = idx, *right = idx + nl;
  merge_sort(left, nl, spare, less, ctx);
  merge_sort(right, nr, spare, less, ctx);
  memcpy(spare, left, sizeof(int) * (size_t)nl);
  int i = 0, j = 0;
  while (i < nl || j < nr) {
    if (i < nl && (j == nr || less(ctx, spare[i], right[j])))
      idx[i + j] = spare[i], i++;
    else
      idx[i + j] = right[j], j++;
  }
}

static int less_double(const void *ctx, int a, int b) {
  const double *d = ctx;
  return d[a] < d[b];
}

typedef struct DimCtx {
  const Rtree *t;
  const RtCell *cells;
  int dim;
} DimCtx;

static int less_dim(const void *ctx, int a, int b) {
  const DimCtx *x = ctx;
  const RtCell *ca = &x->cells[a], *cb = &x->cells[b];
  int k = 2 * x->dim;
  double a1 = rtree_coord(x->t, ca->c[k]), a2 = rtree_coord(x->t, ca->c[k + 1]);
  double b1 = rtree_coord(x->t, cb->c[k]), b2 = rtree_coord(x->t, cb->c[k + 1]);
  return a1 < b1 || (a1 == b1 && a2 < b2);
}

/* ---- insert ---- */

static int insert_cell(Rtree *t, RtNode *n, RtCell *c, int height);

/* The node n's parent mapping for entry/child id moved to n. */
static int update_mapping(Rtree *t, int64_t id, RtNode *n, int height) {
  if (height > 0) {
    RtNode *child = cache_find(t, id);
    for (RtNode *p = n; p; p = p->parent)
      if (p == child) return SHALE_CORRUPT_VTAB;
    if (child) child->parent = n;
  }
  return write_mapping(t, height, id, n->no);
}

/* Distribute cells[0..n) between left and right (R*-split). */
static int split_distribute(Rtree *t, RtCell *cells, int n, RtNode *left, RtNode *right,
                            RtCell *lbox, RtCell *rbox) {
  int *sorted = shale_malloc(sizeof(int) * (size_t)n * (size_t)(t->ndim + 1));
  if (!sorted) return SHALE_NOMEM;
  int *spare = sorted + n * t->ndim;
  for (int d = 0; d < t->ndim; d++) {
    int *s = sorted + n * d;
    for (int j = 0; j < n; j++) s[j] = j;
    DimCtx ctx = {t, cells, d};
    merge_sort(s, n, spare, less_dim, &ctx);
  }
  int best_dim = 0, best_split = 0, minc = rtree_min_cells(t);
  double best_margin = 0;
  for (int d = 0; d < t->ndim; d++) {
    int *s = sorted + n * d;
    double margin = 0, best_overlap = 0, best_area = 0;
    int best_left = 0;
    for (int nl = minc; nl <= n - minc; nl++) {
      RtCell l = cells[s[0]], r = cells[s[n - 1]];
      for (int k = 1; k < n - 1; k++) cell_union(t, k < nl ? &l : &r, &cells[s[k]]);
      margin += cell_margin(t, &l);
      margin += cell_margin(t, &r);
      double overlap = cell_overlap(t, &l, &r);
      double area = cell_area(t, &l) + cell_area(t, &r);
      if (nl == minc || overlap < best_overlap || (overlap == best_overlap && area < best_area)) {
        best_left = nl;
        best_overlap = overlap;
        best_area = area;
      }
    }
    if (d == 0 || margin < best_margin) {
      best_dim = d;
      best_margin = margin;
      best_split = best_left;
    }
  }
  int *s = sorted + n * best_dim;
  *lbox = cells[s[0]];
  *rbox = cells[s[best_split]];
  for (int i = 0; i < n; i++) {
    const RtCell *c = &cells[s[i]];
    node_append(t, i < best_split ? left : right, c);
    cell_union(t, i < best_split ? lbox : rbox, c);
  }
  shale_free(sorted);
  return SHALE_OK;
}

static RtNode *node_new(Rtree *t, RtNode *parent) {
  RtNode *n = node_alloc(t);
  if (n) {
    n->parent = parent;
    n->dirty = 1;
  }
  return n;
}

static int split_node(Rtree *t, RtNode *n, RtCell *c, int height) {
  int k = rt_ncell(n), rc = SHALE_OK;
  RtCell *cells = shale_malloc(sizeof(RtCell) * (size_t)(k + 1));
  if (!cells) return SHALE_NOMEM;
  for (int i = 0; i < k; i++) rtree_cell_get(t, n->data, i, &cells[i]);
  cells[k++] = *c;
  node_zero(t, n);
  RtNode *left, *right, *fresh_left = NULL;
  int is_root = n->no == 1;
  if (is_root) {
    right = node_new(t, n);
    left = fresh_left = node_new(t, n);
    if (right && left) {
      t->depth++;
      rt_put2(n->data, t->depth);
    }
  } else {
    left = n;
    right = node_new(t, n->parent);
  }
  RtNode *fresh_right = right;
  RtCell lbox, rbox;
  if (!left || !right) {
    rc = SHALE_NOMEM;
    goto out;
  }
  memset(left->data, 0, (size_t)t->node_size);
  memset(right->data, 0, (size_t)t->node_size);
  rc = split_distribute(t, cells, k, left, right, &lbox, &rbox);
  if (rc) goto out;
  /* invariant 3: right first; written nodes join the cache */
  rc = node_write(t, right);
  if (right->no) fresh_right = NULL; /* numbered: in the cache now */
  if (rc == SHALE_OK && left->no == 0) {
    rc = node_write(t, left);
    if (left->no) fresh_left = NULL;
  }
  if (rc) goto out;
  rbox.id = right->no;
  lbox.id = left->no;
  if (is_root) {
    rc = insert_cell(t, n, &lbox, height + 1);
  } else {
    int i;
    rc = parent_index(t, left, &i);
    if (rc == SHALE_OK) {
      rtree_cell_put(t, left->parent->data, i, &lbox);
      left->parent->dirty = 1;
      rc = adjust_tree(t, left->parent, &lbox);
    }
  }
  if (rc == SHALE_OK) rc = insert_cell(t, right->parent, &rbox, height + 1);
  int new_right = 0;
  for (int i = 0; rc == SHALE_OK && i < rt_ncell(right); i++) {
    int64_t id = rtree_cell_id(t, right->data, i);
    rc = update_mapping(t, id, right, height);
    if (id == c->id) new_right = 1;
  }
  if (rc == SHALE_OK && is_root) {
    for (int i = 0; rc == SHALE_OK && i < rt_ncell(left); i++)
      rc = update_mapping(t, rtree_cell_id(t, left->data, i), left, height);
  } else if (rc == SHALE_OK && !new_right) {
    rc = update_mapping(t, c->id, left, height);
  }
out:
  if (fresh_right) shale_free(fresh_right);
  if (fresh_left) shale_free(fresh_left);
  shale_free(cells);
  return rc;
}

static int reinsert(Rtree *t, RtNode *n, RtCell *c, int height) {
  int k = rt_ncell(n) + 1, rc = SHALE_OK;
  size_t sz = sizeof(RtCell) * (size_t)k + sizeof(int) * 2 * (size_t)k + sizeof(double) * (size_t)k;
  RtCell *cells = shale_malloc(sz);
  if (!cells) return SHALE_NOMEM;
  double *dist = (double *)(cells + k);
  int *order = (int *)(dist + k), *spare = order + k;
  double center[RT_MAX_DIM] = {0};
  for (int i = 0; i < k; i++) {
    if (i == k - 1)
      cells[i] = *c;
    else
      rtree_cell_get(t, n->data, i, &cells[i]);
    order[i] = i;
    for (int d = 0; d < t->ndim; d++) {
      center[d] += rtree_coord(t, cells[i].c[2 * d]);
      center[d] += rtree_coord(t, cells[i].c[2 * d + 1]);
    }
  }
  for (int d = 0; d < t->ndim; d++) center[d] = center[d] / (k * 2.0);
  for (int i = 0; i < k; i++) {
    dist[i] = 0;
    for (int d = 0; d < t->ndim; d++) {
      double ext = rtree_coord(t, cells[i].c[2 * d + 1]) - rtree_coord(t, cells[i].c[2 * d]);
      dist[i] += (ext - center[d]) * (ext - center[d]);
    }
  }
  merge_sort(order, k, spare, less_double, dist);
  node_zero(t, n);
  int keep = k - (rtree_min_cells(t) + 1), i;
  for (i = 0; rc == SHALE_OK && i < keep; i++) {
    RtCell *p = &cells[order[i]];
    node_append(t, n, p);
    if (p->id == c->id) rc = write_mapping(t, height, p->id, n->no);
  }
  if (rc == SHALE_OK) rc = fix_bounds(t, n);
  for (; rc == SHALE_OK && i < k; i++) {
    RtCell *p = &cells[order[i]];
    RtNode *dest;
    rc = choose_node(t, p, height, &dest);
    if (rc == SHALE_OK) rc = insert_cell(t, dest, p, height);
  }
  shale_free(cells);
  return rc;
}

static int insert_cell(Rtree *t, RtNode *n, RtCell *c, int height) {
  if (height > 0) {
    RtNode *child = cache_find(t, c->id);
    if (child) child->parent = n;
  }
  if (node_append(t, n, c)) {
    if (height <= t->reinsert_height || n->no == 1) return split_node(t, n, c, height);
    t->reinsert_height = height;
    return reinsert(t, n, c, height);
  }
  int rc = adjust_tree(t, n, c);
  if (rc == SHALE_OK) rc = write_mapping(t, height, c->id, n->no);
  return rc;
}

int rtree_insert(Rtree *t, RtCell *c) {
  RtNode *leaf;
  int rc = choose_node(t, c, 0, &leaf);
  if (rc) return rc;
  t->reinsert_height = -1;
  return insert_cell(t, leaf, c, 0);
}

/* ---- delete ---- */

static int delete_cell(Rtree *t, RtNode *n, int i, int height);

/* Find the parents of n up to the root through NAME_parent. */
static int load_parents(Rtree *t, RtNode *n) {
  for (RtNode *p = n; p->no != 1 && !p->parent; p = p->parent) {
    int found;
    int64_t pno;
    int rc = rtree_lookup(t, RT_ST_READ_PARENT, p->no, &found, &pno);
    if (rc) return rc;
    if (!found) return SHALE_CORRUPT_VTAB;
    for (RtNode *q = n; q; q = q->parent)
      if (q->no == pno) return SHALE_CORRUPT_VTAB;
    RtNode *par;
    rc = rtree_node_get(t, pno, NULL, &par);
    if (rc) return rc;
    for (RtNode *q = par; q; q = q->parent) /* a cached chain must not lead back */
      if (q == p) return SHALE_CORRUPT_VTAB;
    p->parent = par;
  }
  return SHALE_OK;
}

static int remove_node(Rtree *t, RtNode *n, int height) {
  int i, rc = parent_index(t, n, &i);
  if (rc) return rc;
  RtNode *parent = n->parent;
  n->parent = NULL;
  rc = delete_cell(t, parent, i, height + 1);
  if (rc == SHALE_OK) rc = rtree_run2(t, RT_ST_DEL_NODE, n->no, 0);
  if (rc == SHALE_OK) rc = rtree_run2(t, RT_ST_DEL_PARENT, n->no, 0);
  if (rc) return rc;
  cache_unlink(t, n);
  n->no = height;
  n->next = t->deleted;
  t->deleted = n;
  return SHALE_OK;
}

static int delete_cell(Rtree *t, RtNode *n, int i, int height) {
  int rc = load_parents(t, n);
  if (rc) return rc;
  node_delete_cell(t, n, i);
  if (!n->parent) return SHALE_OK;
  if (rt_ncell(n) < rtree_min_cells(t)) return remove_node(t, n, height);
  return fix_bounds(t, n);
}

static int reinsert_content(Rtree *t, RtNode *n) {
  int rc = SHALE_OK, height = (int)n->no;
  for (int i = 0; rc == SHALE_OK && i < rt_ncell(n); i++) {
    RtCell c;
    RtNode *dest;
    rtree_cell_get(t, n->data, i, &c);
    rc = choose_node(t, &c, height, &dest);
    if (rc == SHALE_OK) rc = insert_cell(t, dest, &c, height);
  }
  return rc;
}

int rtree_delete(Rtree *t, int64_t rowid) {
  RtNode *root, *leaf = NULL;
  int rc = rtree_load_root(t, &root);
  int found = 0;
  int64_t leafno = 0;
  if (rc == SHALE_OK) rc = rtree_lookup(t, RT_ST_READ_ROWID, rowid, &found, &leafno);
  if (rc == SHALE_OK && found) rc = rtree_node_get(t, leafno, NULL, &leaf);
  if (rc == SHALE_OK && leaf) {
    int k = rt_ncell(leaf), i;
    for (i = 0; i < k && rtree_cell_id(t, leaf->data, i) != rowid; i++) {
    }
    rc = i < k ? delete_cell(t, leaf, i, 0) : SHALE_CORRUPT_VTAB;
  }
  if (rc == SHALE_OK) rc = rtree_run2(t, RT_ST_DEL_ROWID, rowid, 0);
  if (rc == SHALE_OK && t->depth > 0 && rt_ncell(root) == 1) {
    RtNode *child;
    rc = rtree_node_get(t, rtree_cell_id(t, root->data, 0), root, &child);
    if (rc == SHALE_OK) rc = remove_node(t, child, t->depth - 1);
    if (rc == SHALE_OK) {
      t->depth--;
      rt_put2(root->data, t->depth);
      root->dirty = 1;
    }
  }
  while (rc == SHALE_OK && t->deleted) {
    RtNode *n = t->deleted;
    rc = reinsert_content(t, n);
    t->deleted = n->next;
    shale_free(n);
  }
  return rc;
}
