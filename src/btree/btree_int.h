/*
 * btree_int.h -- private declarations shared by the files of the b-tree layer.
 *
 * Owns: the Btree and BtCursor structs, the MemPage parse cached in each
 * page's pager_extra() space, the CellInfo of a parsed cell, and the
 * helpers each btree_*.c file exports to the others, and the row-path cell
 * parse (leaf_cell_quick, page_cell_parse_at) inlined into every caller.
 *
 * Invariants:
 *  1. A MemPage with init == 0 is stale (the pager zeroes the extra space
 *     whenever a page is loaded or restored); btree_page_init() re-validates the
 *     page header, free space and cell pointer array before any use
 *     (cheap); btree_page_check_cells() validates every cell (full == 1), which
 *     btree_page_get() and code copying a page's cells by size (balance,
 *     defragmentation) require, while cursors load pages with
 *     btree_page_get_lazy() and validate each cell only when they parse it.
 *     Functions that modify a page keep its MemPage (ncell, nfree) exact, so
 *     init and full stay 1 across our own edits.
 *  2. Every cell parse is bounds-checked against the usable size: a hostile
 *     page yields SHALE_CORRUPT, never a read outside the page. On a page
 *     with init == 1, every cell pointer lies in [content start, usable -
 *     minimum cell size], so a cell's first bytes (an interior cell's child
 *     pointer) can be read without further checks.
 *  3. A cursor's stack holds one page reference per level; pg[0] is the
 *     root. idx[l] on an interior page is the child taken (ncell = right
 *     pointer); on the top page it is the entry.
 */
#ifndef SHALE_BTREE_INT_H
#define SHALE_BTREE_INT_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "../util/util.h"
#include "btree.h"

#define BT_MAX_DEPTH 20 /* deeper trees are treated as corrupt (cycles) */

/* Page type bytes. */
#define PTF_INTKEY 0x01
#define PTF_ZERODATA 0x02
#define PTF_LEAFDATA 0x04
#define PTF_LEAF 0x08
#define PT_INDEX_INTERIOR 0x02
#define PT_TABLE_INTERIOR 0x05
#define PT_INDEX_LEAF 0x0a
#define PT_TABLE_LEAF 0x0d

/* Parsed page header, cached in pager_extra(). */
typedef struct MemPage {
  uint8_t init;   /* 1 = fields below are valid for the current content */
  uint8_t leaf;   /* 1 for 0x0a/0x0d */
  uint8_t intkey; /* 1 for table pages */
  uint8_t hdrlen; /* 8 or 12 */
  uint8_t full;   /* 1 = every cell was validated too (btree_page_check_cells) */
  uint16_t hdr;   /* offset of the page header: 100 on page 1, else 0 */
  uint16_t ncell;
  uint32_t nfree; /* free bytes: gap + freeblocks + fragments */
} MemPage;

/* One parsed cell. */
typedef struct CellInfo {
  int64_t key;       /* rowid (table) or payload size (index) */
  uint32_t npayload; /* payload bytes (0 for table interior) */
  uint32_t nlocal;   /* bytes of payload on the page */
  uint16_t size;     /* bytes of the cell on the page (real, may be < 4) */
  uint16_t payoff;   /* offset of the local payload from the cell start */
  uint32_t child;    /* left child (interior cells) */
  uint32_t ovfl;     /* first overflow page or 0 */
} CellInfo;

/* Closed cursors a Btree keeps for reuse (a re-run statement opens the same
 * ones again without allocating). */
#define BTREE_SPARE_CURSORS 16

struct Btree {
  Pager *pager;
  BtCursor *cursors;
  BtCursor *spare; /* closed cursors kept for reuse (linked by next) */
  int nspare;
  uint32_t page_size, usable;
  uint32_t max_leaf;         /* X for table leaves */
  uint32_t max_local;        /* X for index cells */
  uint32_t min_local;        /* M */
  int readonly;              /* header forbids writing (write version too new) */
  int autovac;               /* auto-vacuum file (header offset 52 != 0): pointer maps */
  int incrvac;               /* incremental vacuum (offset 64 != 0): no vacuum at commit */
  int new_autovac;           /* mode for a new database: 0 none, 1 full, 2 incremental */
  int next_autovac;          /* mode last asked for (PRAGMA auto_vacuum=), -1 none */
  BtreeAutovacPages avac_fn; /* pages a FULL commit frees (btree_set_autovac_pages) */
  void *avac_arg;
  int enc;     /* text encoding (offset 56): 1 UTF-8, 2 UTF-16le, 3 UTF-16be */
  int new_enc; /* encoding for a new (empty) database: 0 = 1 */
  const char *ro_reason;
  int in_txn;
  char errmsg[256];
  int has_err;
  uint8_t *scratch;  /* one cell's worth (btree_cell_scratch), kept for reuse */
  uint32_t nscratch; /* its size */
  uint8_t *defrag;   /* a page's content area (btree_page_defragment), kept for reuse */
  uint32_t ndefrag;  /* its size */
  /* Where the last nearest-leaf search of the first freelist trunk took
   * its leaf: the next search starts there (a chain being allocated wants
   * the page after the last one, which freeing a chain left next to it).
   * Only a starting point: any value gives a correct search. */
  uint32_t free_scan;
  /* The schema cookie (offset 40) read at the start of this read
   * transaction, valid while cookie_ok and the pager's data version is
   * still cookie_dv: no other connection changes the file under a read
   * transaction, and every change of ours to page 1's cookie goes through
   * btree_update_meta, a rollback or a savepoint rollback, which clear it. */
  int cookie_ok;
  uint32_t cookie;
  uint64_t cookie_dv;
};

/* Cursor states. */
#define CUR_INVALID 0 /* on no entry */
#define CUR_VALID 1   /* stack positioned on an entry */
#define CUR_REQSEEK 2 /* saved: key in saved_*; restore by seeking */
#define CUR_FAULT 3   /* error: fault_rc on every use */

struct BtCursor {
  Btree *bt;
  BtCursor *next;
  BtCursor **parked; /* btree_cursor_park: the owner's pointer, else NULL */
  uint32_t root;
  int wrflag;
  BtreeKeyCmp cmp;
  void *cmp_ctx;
  int state;
  int fault_rc;
  int skip;       /* after restore: >0 next() stays, <0 prev() stays */
  int deleted;    /* skip set by a delete: its key is in saved_rowid/delkey */
  int sought;     /* the stack is where an index seek left it (on a leaf), not
                     moved since: an index insert tries that place first */
  int seekres;    /* the stack is where an index seek that found no equal
                     entry left it (its *res, -1 or 1), not moved or written
                     since; 0 otherwise (BTREE_SEEKRESULT) */
  uint32_t nseek; /* index seeks made through the cursor (btree_seek_count) */
  int near;       /* the last index seek ended next to the entry the cursor
                     was on, or was done within its leaf: the next one tries
                     that leaf first */
  int far;        /* rowid seeks in a row that left the leaf they started on
                     (up to 2): from 2 on the next one skips the try of the
                     cursor's own leaf (seek_rowid_here), until a seek lands
                     on the leaf it started from again */
  int shared;     /* another cursor on the same tree was open beside this one
                     since it opened (set by btree_cursor_open, never cleared):
                     without it a change has no other cursor to save */
  int intkey;     /* known after the root is loaded */
  int kind_known;
  int depth; /* levels in the stack (0 = none) */
  PgPage *pg[BT_MAX_DEPTH];
  uint16_t idx[BT_MAX_DEPTH];
  int info_ok;
  CellInfo info;
  int64_t saved_rowid;
  uint8_t *saved_key;
  uint32_t saved_nkey;
  uint32_t *ovfl; /* overflow page list of the current entry */
  uint32_t novfl, ovfl_alloc;
  int ovfl_ok;
  /* The key of the last index entry deleted under the cursor: a buffer kept
   * across deletes (and cursor reuse), so a delete allocates nothing. */
  uint8_t *delkey;
  uint32_t ndelkey, delcap;
};

/* Varint decoding with the one-byte case inline (most sizes and many
 * rowids); the rest goes to util. */
static inline int bt_varint(const uint8_t *p, uint64_t *v) {
  if (p[0] < 0x80) {
    *v = p[0];
    return 1;
  }
  return util_get_varint(p, v);
}
static inline int bt_varint_safe(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p < end && p[0] < 0x80) {
    *v = p[0];
    return 1;
  }
  return util_get_varint_safe(p, end, v);
}

/* Varint encoding with the one- and two-byte cases inline (cell payload
 * sizes, most rowids): util_put_varint and util_varint_len otherwise. */
static inline int bt_put_varint(uint8_t *p, uint64_t v) {
  if (v < 0x80) {
    p[0] = (uint8_t)v;
    return 1;
  }
  if (v < 0x4000) {
    p[0] = (uint8_t)(0x80 | (v >> 7));
    p[1] = (uint8_t)(v & 0x7f);
    return 2;
  }
  return util_put_varint(p, v);
}
static inline int bt_varint_len(uint64_t v) {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : util_varint_len(v);
}

/* ---- btree.c ---- */
int btree_corrupt_at(Btree *, uint32_t pgno, const char *what, const char *file, int line);
#define BT_CORRUPT(bt, pgno, what) btree_corrupt_at((bt), (pgno), (what), __FILE__, __LINE__)
void btree_set_error(Btree *, const char *msg);
/* Save every positioned cursor on root except `except` (invariant 5). */
int btree_save_cursors(Btree *, uint32_t root, BtCursor *except);
/* Mark cursors on root (except one) as on no entry. */
void btree_invalidate_cursors(Btree *, uint32_t root, BtCursor *except);
uint32_t btree_lockbyte_page(Btree *);
/* A buffer for the largest cell (page size + 64 bytes), owned by the Btree
 * and reused by every insert and delete (neither nests); NULL on OOM. */
uint8_t *btree_cell_scratch(Btree *);
/* *buf, (re)allocated to at least need bytes (*cap its size), for a buffer
 * kept across calls; NULL on OOM (*buf then NULL, *cap 0). */
uint8_t *btree_kept_buffer(uint8_t **buf, uint32_t *cap, uint32_t need);
/* Is the cursor VALID on the last entry of its tree (every interior level
 * on its right child, the leaf on its last cell, every page parsed)? */
int btree_cursor_at_last(BtCursor *);

/* ---- btree_page.c ---- */
static inline MemPage *page_mem(PgPage *pg) { return (MemPage *)pager_extra(pg); }
/* Get page pgno with a fresh reference and a valid MemPage (every cell
 * validated: full == 1). */
int btree_page_get(Btree *, uint32_t pgno, PgPage **out);
/* The same with only the cheap checks of btree_page_init (for read cursors: each
 * cell is validated when parsed). */
int btree_page_get_lazy(Btree *, uint32_t pgno, PgPage **out);
/* Validate and parse an already referenced page: header, free space, cell
 * pointer array (invariant 2). Cells themselves: btree_page_check_cells. */
int btree_page_init(Btree *, PgPage *);
/* btree_page_init plus the validation of every cell (sets full). */
int btree_page_check_cells(Btree *, PgPage *);
/* Initialize an empty page of the given type byte (writable page). */
void btree_page_zero(Btree *, PgPage *, int type);
/* Offset of cell i (pointer array value). */
static inline uint32_t page_cell_off(PgPage *pg, int i) {
  MemPage *m = page_mem(pg);
  return util_get2(pager_data(pg) + m->hdr + m->hdrlen + 2 * i);
}
static inline uint8_t *page_cell(PgPage *pg, int i) {
  return pager_data(pg) + page_cell_off(pg, i);
}
static inline uint32_t page_right(PgPage *pg) {
  MemPage *m = page_mem(pg);
  return util_get4(pager_data(pg) + m->hdr + 8);
}
static inline void page_set_right(PgPage *pg, uint32_t child) {
  MemPage *m = page_mem(pg);
  util_put4(pager_data(pg) + m->hdr + 8, child);
}
/* Child pointer at position i (0..ncell; ncell = right pointer). */
uint32_t btree_page_child(PgPage *, int i);
/* Bytes of payload stored locally for a payload of n bytes. */
uint32_t btree_cell_local_size(Btree *, int table_leaf, uint32_t n);
/* Parse the cell at offset off of a page with the given type flags; bounds
 * checked against the usable size. */
int btree_cell_parse(Btree *, uint32_t pgno, const uint8_t *data, uint32_t off, int leaf,
                     int intkey, CellInfo *);
int btree_page_cell_parse(Btree *, PgPage *, int i, CellInfo *);
/* Inlined on the scan paths (a row costs one cell parse). */
#if defined(__GNUC__)
#define BT_HOT static inline __attribute__((always_inline))
#else
#define BT_HOT static inline
#endif

/* Store a parsed leaf cell wholly local: i header bytes, n payload bytes. */
BT_HOT void leaf_cell_set(CellInfo *ci, int64_t key, uint32_t n, uint32_t i) {
  ci->key = key;
  ci->npayload = n;
  ci->nlocal = n;
  ci->size = (uint16_t)(i + n);
  ci->payoff = (uint16_t)i;
  ci->child = 0;
  ci->ovfl = 0;
}

/* leaf_cell_quick for a cell at p with avail >= 11 bytes to the usable end:
 * both varints (at most 2 + 9 bytes) lie below it, so their bytes are read
 * without a bound check each; a rowid of any length. */
BT_HOT int leaf_cell_quick_wide(const Btree *bt, const uint8_t *p, uint32_t avail, int intkey,
                                CellInfo *ci) {
  uint32_t n = p[0], i = 1;
  if (n >= 0x80) {
    if (p[1] >= 0x80) return 0;
    n = (n & 0x7f) << 7 | p[1];
    i = 2;
  }
  int64_t key = n;
  if (intkey) {
    uint32_t b = p[i];
    if (b < 0x80) {
      key = b;
      i++;
    } else if (p[i + 1] < 0x80) {
      key = (int64_t)(b & 0x7f) << 7 | p[i + 1];
      i += 2;
    } else { /* a longer varint, decoded here: no call on this path */
      uint64_t v = 0;
      uint32_t k = 0;
      for (; k < 8 && p[i + k] >= 0x80; k++) v = v << 7 | (p[i + k] & 0x7f);
      v = k == 8 ? v << 8 | p[i + 8] : v << 7 | p[i + k];
      i += k + 1;
      key = (int64_t)v;
    }
  }
  if (n > (intkey ? bt->max_leaf : bt->max_local) || i + n > avail) return 0;
  leaf_cell_set(ci, key, n, i);
  return 1;
}

/* The common leaf cell parsed with the fewest reads: a payload size of one
 * or two varint bytes, a rowid of any length (of at most three bytes when
 * the cell starts within 11 bytes of the usable end), the payload wholly
 * local and inside the usable size. Every byte read is below the usable
 * size. Returns 0 when the cell is another case, which btree_cell_parse's
 * general path then parses (and judges). */
BT_HOT int leaf_cell_quick(const Btree *bt, const uint8_t *data, uint32_t off, int intkey,
                           CellInfo *ci) {
  const uint32_t u = bt->usable;
  if (off >= u) return 0;
  const uint8_t *p = data + off;
  const uint32_t avail = u - off;
  if (avail >= 11) return leaf_cell_quick_wide(bt, p, avail, intkey, ci);
  uint32_t n, i;
  if (p[0] < 0x80) {
    n = p[0];
    i = 1;
  } else if (avail > 1 && p[1] < 0x80) {
    n = (uint32_t)(p[0] & 0x7f) << 7 | p[1];
    i = 2;
  } else {
    return 0;
  }
  int64_t key = n;
  if (intkey) {
    if (i < avail && p[i] < 0x80) {
      key = p[i++];
    } else if (i + 1 < avail && p[i + 1] < 0x80) {
      key = (int64_t)(p[i] & 0x7f) << 7 | p[i + 1];
      i += 2;
    } else if (i + 2 < avail && p[i + 2] < 0x80) {
      key = (int64_t)(p[i] & 0x7f) << 14 | (int64_t)(p[i + 1] & 0x7f) << 7 | p[i + 2];
      i += 3;
    } else {
      return 0;
    }
  }
  if (n > (intkey ? bt->max_leaf : bt->max_local) || i + n > avail) return 0;
  leaf_cell_set(ci, key, n, i);
  return 1;
}

/* btree_page_cell_parse, also giving the cell's address on the page (*cell; set
 * even when the cell then fails to parse, and then meaningless); a page whose
 * header is not parsed or an i out of range is corrupt (*cell untouched). */
static inline int page_cell_parse_at(Btree *bt, PgPage *pg, int i, CellInfo *ci,
                                     const uint8_t **cell) {
  MemPage *m = page_mem(pg);
  if (!m->init || i < 0 || i >= m->ncell) {
    return BT_CORRUPT(bt, pager_pgno(pg), "page reused while in use");
  }
  const uint8_t *d = pager_data(pg);
  uint32_t off = util_get2(d + m->hdr + m->hdrlen + 2 * i);
  *cell = d + off;
  if (m->leaf && leaf_cell_quick(bt, d, off, m->intkey, ci)) return SHALE_OK;
  return btree_cell_parse(bt, pager_pgno(pg), d, off, m->leaf, m->intkey, ci);
}

/* Size in bytes of a cell given its bytes, for a page of the given kind
 * (cell_size_bytes: the common cell -- a one-byte payload size, payload
 * wholly local -- inline, any other through btree_cell_size_slow). */
uint16_t btree_cell_size_slow(Btree *, const uint8_t *cell, int leaf, int intkey);
static inline uint16_t cell_size_bytes(Btree *bt, const uint8_t *cell, int leaf, int intkey) {
  const uint8_t *p = leaf ? cell : cell + 4;
  int k = 0;
  if (!leaf && intkey) { /* child pointer and rowid: 4 + the varint's length (<= 9) */
    while (k < 8 && (p[k] & 0x80)) k++;
    return (uint16_t)(4 + k + 1);
  }
  uint32_t np = p[0];
  if (np >= 0x80) return btree_cell_size_slow(bt, cell, leaf, intkey);
  p++;
  if (intkey) {
    while (k < 8 && (p[k] & 0x80)) k++;
    p += k + 1;
  }
  if (np > (intkey ? bt->max_leaf : bt->max_local))
    return btree_cell_size_slow(bt, cell, leaf, intkey);
  return (uint16_t)((uint32_t)(p - cell) + np);
}
/* Insert cell bytes at position i; needs nfree >= max(4,sz)+2 (may
 * defragment). Page must be writable. */
int btree_page_insert_cell(Btree *, PgPage *, int i, const uint8_t *cell, uint32_t sz);
/* The same without the bytes: room for a cell of sz bytes is made at
 * position i and *cell points to it (on the page; the caller writes the
 * cell there before anything else touches the page). */
int btree_page_insert_space(Btree *, PgPage *, int i, uint32_t sz, uint8_t **cell);
/* Remove cell i (its bytes freed on the page; overflow untouched). */
int btree_page_drop_cell(Btree *, PgPage *, int i, uint32_t sz);
/* Rewrite the whole page with the given cells (all fitting). */
void btree_page_rebuild(Btree *, PgPage *, int type, uint8_t **cells, const uint16_t *sizes, int n,
                        uint32_t right);
/* Bytes available for cells + pointers on a page with header at hdr. */
uint32_t btree_page_capacity(Btree *, PgPage *, int leaf);
/* Gather free space into the page's gap, at least need bytes of it: the
 * content slides over its freeblocks (fragments kept) when that yields
 * need, else every cell is rewritten (all free space in the gap). */
int btree_page_defragment(Btree *, PgPage *, uint32_t need);

/* ---- btree_freelist.c ---- */
/* Allocate a page (freelist first, hint = nearby page); returned writable,
 * referenced, zeroed. */
int btree_alloc_page(Btree *, uint32_t hint, PgPage **out, uint32_t *pgno);
/* Allocation modes (SQLite's BTALLOC_*): any page (nearest the hint),
 * exactly the hint if it is free, any free page <= hint. */
#define BTALLOC_ANY 0
#define BTALLOC_EXACT 1
#define BTALLOC_LE 2
int btree_alloc_page_mode(Btree *, uint32_t hint, int mode, PgPage **out, uint32_t *pgno);
int btree_free_page(Btree *, uint32_t pgno);
/* Free an overflow chain starting at first (payload of npayload bytes with
 * nlocal of them local). */
int btree_free_overflow(Btree *, uint32_t pgno_cell, uint32_t first, uint32_t npayload,
                        uint32_t nlocal);
/* Free the overflow chain of a cell (no-op if none). */
int btree_free_cell_overflow(Btree *, PgPage *, const CellInfo *);
/* Build a cell into buf (room for the max cell size) for a leaf page (or index
 * interior with child != 0 prefix). Allocates overflow pages. *sz gets the
 * cell size. */
int btree_build_cell(Btree *, uint32_t hint, int intkey, int64_t rowid, const void *data,
                     uint32_t n, uint32_t nzero, uint8_t *buf, uint32_t *sz);

/* ---- btree_cursor.c ---- */
void btree_cursor_release(BtCursor *);
int btree_cursor_restore(BtCursor *);
int btree_cursor_save(BtCursor *);
int btree_cursor_seek_rowid(BtCursor *, int64_t rowid, int *res);
/* The same for a rowid likely above every one present (BTREE_APPEND):
 * each page's last key is tried before a binary search (SQLite's
 * biasRight). */
int btree_cursor_seek_rowid_append(BtCursor *, int64_t rowid, int *res);
/* Index seeks, by the packed key or with a caller's comparison (see
 * btree_seek_cmp). Either tries the cursor's own leaf first when its
 * previous seek stayed there (BtCursor.near) or force is set (the caller
 * expects the key next to the cursor: an insert right after a seek or a
 * delete there). */
int btree_cursor_seek_key(BtCursor *, const void *key, uint32_t nkey, int force, int *res);
int btree_cursor_seek_cmp(BtCursor *, int (*cmp)(void *, const void *, uint32_t), void *ctx,
                          int force, int *res);
int btree_cursor_info(BtCursor *, CellInfo **);
/* The rowid of the entry under a VALID table cursor (no full cell parse). */
int btree_cursor_rowid(BtCursor *, int64_t *rowid);
/* Copy the full key of the entry under a VALID cursor into *buf, a buffer
 * of *cap bytes grown (reallocated) as needed; *n gets the key's size. */
int btree_cursor_key_copy(BtCursor *, uint8_t **buf, uint32_t *cap, uint32_t *n);
/* Hand the deleted key (delkey) over to saved_key, for a re-seek. */
void btree_cursor_delkey_to_saved(BtCursor *);
/* saved_key becomes a copy of key[0..nkey) (the old one freed); the state
 * is the caller's to set. SHALE_NOMEM leaves saved_key as it was. */
int btree_cursor_save_key(BtCursor *, const void *key, uint32_t nkey);
int btree_cursor_move_to_root(BtCursor *);
int btree_cursor_load_child(BtCursor *, uint32_t child);

/* ---- btree_balance.c ---- */
/* Replace the content of the page at cursor level `level`: remove the
 * cell at position i when dsz > 0 (its size, as the caller parsed it) and
 * insert cell (if non-NULL) there; then rebalance as needed. Cell overflow
 * chains are the caller's business. *balanced = 1 if pages were
 * rebalanced: the cursor is then unpositioned (re-seek); else it is on
 * position i of that level. */
int btree_modify_level(BtCursor *, int level, int i, uint32_t dsz, const uint8_t *cell, uint32_t sz,
                       int *balanced);

/* ---- btree_ptrmap.c ---- */
/* Pointer-map entry types (docs/format.md §8). */
#define PTRMAP_ROOT 1
#define PTRMAP_FREE 2
#define PTRMAP_OVFL1 3
#define PTRMAP_OVFL2 4
#define PTRMAP_BTREE 5
/* The map page holding pgno's entry (pgno itself for a map page); 0 for 1. */
uint32_t btree_ptrmap_pageno(Btree *, uint32_t pgno);
int btree_ptrmap_is_page(Btree *, uint32_t pgno);
/* Set / read the entry of page key (put is a no-op without auto-vacuum). */
int btree_ptrmap_put(Btree *, uint32_t key, int type, uint32_t parent);
int btree_ptrmap_get(Btree *, uint32_t key, int *type, uint32_t *parent);
/* Entries for what cell i of a b-tree page points to (child, overflow), or
 * for every cell and the right child of the page. */
int btree_ptrmap_cell(Btree *, PgPage *, int i);
int btree_ptrmap_cells(Btree *, PgPage *);
/* Move page `from` (entry type/parent) into to_pg (writable, referenced),
 * fixing the parent's pointer and the map entries of what it points to.
 * Every cursor must have been saved. */
int btree_relocate(Btree *, uint32_t from, int type, uint32_t parent, PgPage *to_pg);
/* auto_vacuum=FULL: before the pager commits, move pages off the end of
 * the file into free slots and truncate (no-op in other modes). */
int btree_autovac_commit(Btree *);

#endif /* SHALE_BTREE_INT_H */
