/*
 * btree_bulk.c -- bulk loading: fill an empty tree from entries given in key
 * order, bottom-up, every page packed as full as it goes (VACUUM).
 *
 * Owns: BtBulk, one in-memory page image per tree level (its cells as bytes
 * and at most one pending cell), until the level's page is written.
 *
 * How: level 0 holds leaf cells, level l > 0 interior cells (4-byte child +
 * divider: the largest rowid of the child for tables, an entry for
 * indexes). When a cell does not fit, the level's page is written to a newly
 * allocated page and a divider goes up a level. Table leaves divide by their
 * last rowid; index levels keep the cell that did not fit as pending and
 * promote it when the next cell comes (it separates two pages), so no page
 * is ever left without cells. At the end every level is written bottom-up;
 * the topmost page becomes the root (the tree's existing root page).
 *
 * Invariants:
 *  1. Pages are allocated in the order they are completed, so a fresh file
 *     grows with no holes; the freelist is only used if it has pages.
 *  2. Every written page obeys btree.h invariant 1 (btree_page_rebuild lays it
 *     out) and holds at least one cell unless it is an empty root leaf.
 *  3. Entries must come in strictly increasing key order (not checked: the
 *     caller copies a valid tree in order).
 *  4. On any error the tree is left unusable: the caller rolls back.
 *  5. In an auto-vacuum file every page laid out gets the pointer-map
 *     entries of what it points to (btree_ptrmap_cells: children, first overflow
 *     pages; later overflow pages are entered as they are allocated), so the
 *     map is exact when btree_bulk_finish returns.
 */
#include "btree_int.h"

typedef struct BulkLevel {
  uint8_t *buf;  /* cell bytes, back to back */
  uint32_t nbuf; /* bytes used in buf */
  uint32_t *off; /* cell i starts at buf + off[i] */
  uint16_t *sz;  /* and has sz[i] bytes */
  int n, cap;    /* cells, room in off/sz */
  uint32_t used; /* page bytes used: sum of max(4, sz) + 2 */
  int64_t last;  /* table leaves: rowid of the last cell */
  uint8_t *pend; /* index levels: a cell that did not fit (or NULL) */
  uint16_t npend;
} BulkLevel;

struct BtBulk {
  Btree *bt;
  uint32_t root;
  int intkey;
  int nlevel;
  BulkLevel lv[BT_MAX_DEPTH];
  uint8_t *cell;  /* scratch for one built cell */
  uint8_t **ptrs; /* scratch for btree_page_rebuild */
  uint32_t hint;  /* last page allocated */
};

static uint32_t cell_cost(uint32_t sz) { return (sz < 4 ? 4u : sz) + 2u; }

static uint32_t level_cap(BtBulk *b, int l) { return b->bt->usable - (l == 0 ? 8u : 12u); }

static int level_init(BtBulk *b, int l) {
  BulkLevel *v = &b->lv[l];
  uint32_t u = b->bt->usable;
  memset(v, 0, sizeof *v);
  v->cap = (int)(u / 6) + 2;
  v->buf = shale_malloc((size_t)u + 8);
  v->off = shale_malloc(sizeof(uint32_t) * (size_t)v->cap);
  v->sz = shale_malloc(sizeof(uint16_t) * (size_t)v->cap);
  v->pend = NULL;
  if (!v->buf || !v->off || !v->sz) return SHALE_NOMEM;
  if (!b->intkey || l > 0) {
    v->pend = shale_malloc((size_t)u + 8);
    if (!v->pend) return SHALE_NOMEM;
  }
  return SHALE_OK;
}

static void level_free(BulkLevel *v) {
  shale_free(v->buf);
  shale_free(v->off);
  shale_free(v->sz);
  shale_free(v->pend);
  memset(v, 0, sizeof *v);
}

int btree_bulk_open(Btree *bt, uint32_t root, int kind, BtBulk **out) {
  *out = NULL;
  if (kind != BTREE_INTKEY && kind != BTREE_BLOBKEY) return SHALE_MISUSE;
  BtBulk *b = shale_malloc(sizeof *b);
  if (!b) return SHALE_NOMEM;
  memset(b, 0, sizeof *b);
  b->bt = bt;
  b->root = root;
  b->intkey = kind == BTREE_INTKEY;
  b->hint = root;
  b->cell = shale_malloc((size_t)bt->page_size + 64);
  b->ptrs = shale_malloc(sizeof(uint8_t *) * ((size_t)bt->usable / 6 + 2));
  int rc = (b->cell && b->ptrs) ? level_init(b, 0) : SHALE_NOMEM;
  b->nlevel = 1;
  if (rc) {
    btree_bulk_free(b);
    return rc;
  }
  *out = b;
  return SHALE_OK;
}

void btree_bulk_free(BtBulk *b) {
  if (!b) return;
  for (int l = 0; l < b->nlevel; l++) level_free(&b->lv[l]);
  shale_free(b->cell);
  shale_free(b->ptrs);
  shale_free(b);
}

static int page_type_of(BtBulk *b, int l) {
  if (l == 0) return b->intkey ? PT_TABLE_LEAF : PT_INDEX_LEAF;
  return b->intkey ? PT_TABLE_INTERIOR : PT_INDEX_INTERIOR;
}

/* Room for one more cell of sz bytes at the end of level v (which must
 * fit: level_fits): where its bytes go. */
static uint8_t *level_put(BulkLevel *v, uint32_t sz) {
  uint8_t *at = v->buf + v->nbuf;
  v->off[v->n] = v->nbuf;
  v->sz[v->n] = (uint16_t)sz;
  v->n++;
  v->nbuf += sz;
  v->used += cell_cost(sz);
  return at;
}

static void level_append(BulkLevel *v, const uint8_t *cell, uint32_t sz) {
  memcpy(level_put(v, sz), cell, sz);
}

static int level_fits(BtBulk *b, int l, uint32_t sz) {
  BulkLevel *v = &b->lv[l];
  return v->used + cell_cost(sz) <= level_cap(b, l) && v->n + 1 < v->cap;
}

/* Lay level l's cells out on page pg (writable) and empty the level; in an
 * auto-vacuum file the pointer-map entries of its children and overflow
 * chains name it (invariant 5). */
static int level_lay(BtBulk *b, int l, PgPage *pg, uint32_t right) {
  BulkLevel *v = &b->lv[l];
  for (int i = 0; i < v->n; i++) b->ptrs[i] = v->buf + v->off[i];
  btree_page_rebuild(b->bt, pg, page_type_of(b, l), b->ptrs, v->sz, v->n, right);
  v->n = 0;
  v->nbuf = 0;
  v->used = 0;
  return btree_ptrmap_cells(b->bt, pg);
}

/* Write level l's page to a new page; *pgno gets its number. */
static int level_flush(BtBulk *b, int l, uint32_t right, uint32_t *pgno) {
  PgPage *pg;
  int rc = btree_alloc_page(b->bt, b->hint, &pg, pgno);
  if (rc) return rc;
  b->hint = *pgno;
  rc = level_lay(b, l, pg, right);
  pager_unref(pg);
  return rc;
}

static int push_up(BtBulk *b, int l, uint32_t child, const uint8_t *key, uint32_t nkey);

/* Write level l's page (right pointer: right) and send the divider
 * key[0..nkey) up with it. */
static int level_split(BtBulk *b, int l, uint32_t right, const uint8_t *key, uint32_t nkey) {
  uint32_t pgno;
  int rc = level_flush(b, l, right, &pgno);
  if (rc) return rc;
  return push_up(b, l + 1, pgno, key, nkey);
}

/* Add cell[0..sz) to index level l (leaf cells, or interior cells whose
 * first 4 bytes are the child), with the pending-cell rule. */
static int level_add_pending(BtBulk *b, int l, const uint8_t *cell, uint32_t sz) {
  BulkLevel *v = &b->lv[l];
  if (!v->npend) {
    if (level_fits(b, l, sz)) {
      level_append(v, cell, sz);
      return SHALE_OK;
    }
    memcpy(v->pend, cell, sz);
    v->npend = (uint16_t)sz;
    return SHALE_OK;
  }
  /* the pending cell separates the full page from the one cell starts */
  uint8_t *p = v->pend;
  uint32_t np = v->npend;
  uint32_t right = 0;
  if (l > 0) {
    right = util_get4(p);
    p += 4;
    np -= 4;
  }
  /* pend is reused below: the divider is copied out first */
  uint8_t *key = shale_malloc(np ? np : 1);
  if (!key) return SHALE_NOMEM;
  memcpy(key, p, np);
  v->npend = 0;
  int rc = level_split(b, l, right, key, np);
  shale_free(key);
  if (rc) return rc;
  level_append(v, cell, sz);
  return SHALE_OK;
}

/* Give level l (interior) the cell (child, key). */
static int push_up(BtBulk *b, int l, uint32_t child, const uint8_t *key, uint32_t nkey) {
  if (l >= BT_MAX_DEPTH) return BT_CORRUPT(b->bt, b->root, "tree too deep");
  if (l == b->nlevel) {
    int rc = level_init(b, l);
    b->nlevel++;
    if (rc) return rc;
  }
  uint8_t *c = shale_malloc((size_t)nkey + 4);
  if (!c) return SHALE_NOMEM;
  util_put4(c, child);
  memcpy(c + 4, key, nkey);
  int rc = level_add_pending(b, l, c, nkey + 4);
  shale_free(c);
  return rc;
}

/* Write a wholly local cell at p as btree_build_cell lays it out: payload
 * size, rowid (tables), payload. */
static void put_local_cell(uint8_t *p, int intkey, int64_t rowid, const void *data, uint32_t n) {
  p += util_put_varint(p, n);
  if (intkey) p += util_put_varint(p, (uint64_t)rowid);
  if (n) memcpy(p, data, n);
}

int btree_bulk_add(BtBulk *b, int64_t rowid, const void *data, uint32_t n) {
  BulkLevel *v = &b->lv[0];
  int rc;
  uint32_t sz;
  /* the usual cell, wholly local, is written straight into the level */
  int local = n <= (b->intkey ? b->bt->max_leaf : b->bt->max_local);
  if (local) {
    sz = (uint32_t)util_varint_len(n) +
         (b->intkey ? (uint32_t)util_varint_len((uint64_t)rowid) : 0) + n;
  } else {
    rc = btree_build_cell(b->bt, b->hint, b->intkey, rowid, data, n, 0, b->cell, &sz);
    if (rc) return rc;
  }
  if (!b->intkey && (v->npend || !level_fits(b, 0, sz))) {
    if (local) put_local_cell(b->cell, 0, 0, data, n);
    return level_add_pending(b, 0, b->cell, sz);
  }
  if (b->intkey && !level_fits(b, 0, sz)) {
    uint8_t k[10];
    int nk = util_put_varint(k, (uint64_t)v->last);
    rc = level_split(b, 0, 0, k, (uint32_t)nk);
    if (rc) return rc;
  }
  if (local)
    put_local_cell(level_put(v, sz), b->intkey, rowid, data, n);
  else
    level_append(v, b->cell, sz);
  v->last = rowid;
  return SHALE_OK;
}

/* End of input on level l: a pending cell takes the page's last cell's
 * place as the divider and starts the level's last page. */
static int level_settle(BtBulk *b, int l) {
  BulkLevel *v = &b->lv[l];
  if (!v->npend) return SHALE_OK;
  if (v->n < 2) return BT_CORRUPT(b->bt, b->root, "bulk load: cell larger than a page");
  v->n--;
  uint32_t lsz = v->sz[v->n];
  uint8_t *last = v->buf + v->off[v->n];
  v->nbuf -= lsz;
  v->used -= cell_cost(lsz);
  uint32_t right = 0;
  if (l > 0) {
    right = util_get4(last);
    last += 4;
    lsz -= 4;
  }
  uint8_t *key = shale_malloc(lsz ? lsz : 1);
  if (!key) return SHALE_NOMEM;
  memcpy(key, last, lsz);
  int rc = level_split(b, l, right, key, lsz);
  shale_free(key);
  if (rc) return rc;
  level_append(v, v->pend, v->npend);
  v->npend = 0;
  return SHALE_OK;
}

int btree_bulk_finish(BtBulk *b) {
  int rc = SHALE_OK;
  uint32_t child = 0;
  for (int l = 0; rc == SHALE_OK && l < b->nlevel; l++) {
    rc = level_settle(b, l); /* may add level l + 1 */
    if (rc) break;
    if (l < b->nlevel - 1) {
      rc = level_flush(b, l, child, &child);
      continue;
    }
    PgPage *pg;
    rc = pager_get(b->bt->pager, b->root, 0, &pg);
    if (rc) break;
    rc = pager_write(pg);
    if (rc == SHALE_OK) rc = level_lay(b, l, pg, child);
    pager_unref(pg);
  }
  btree_bulk_free(b);
  return rc;
}
