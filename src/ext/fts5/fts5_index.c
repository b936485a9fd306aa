/*
 * fts5_index.c -- the FTS5 index in SQLite's on-disk format: pending writes
 * (an in-memory term table), the structure record, writing segments, reading
 * them back and merging them.
 *
 * Format (SQLite's fts5, the facts this code follows):
 *  - %_data(id INTEGER PRIMARY KEY, block BLOB). id 10 is the structure
 *    record: a 4-byte big-endian config cookie, then varints nLevel,
 *    nSegment, write counter, and per level nMerge, nSeg and per segment
 *    segid, first leaf, last leaf. Leaf pgno of segment s has id
 *    (s << 37) + pgno (doclist-index pages of SQLite's have bit 36 set; they
 *    are never needed for reading and Shale writes none).
 *  - A leaf: u16 offset of the first rowid if it comes before the first
 *    term (else 0), u16 szLeaf (offset of the page index); the data; then
 *    the page index: one varint per term on the page, its offset delta
 *    against the previous one. The first term on a page is written whole
 *    (varint length, bytes); later ones as varint shared-prefix length,
 *    varint new length, new bytes. A doclist: first rowid (absolute), its
 *    poslist, then rowid deltas and poslists; a poslist starts with a
 *    varint (byte size * 2 + delete flag). A doclist and even a poslist
 *    may continue on the next leaves (split between varints); the first
 *    rowid written on a leaf is absolute and the header points at it.
 *    detail=column: the poslist's offsets are the term's columns, all in
 *    column 0. detail=none: no size header and no poslist; a rowid may be
 *    followed, on its own leaf, by 0x00 (deleted) or 0x00 0x00 (deleted
 *    and present again, from one batch).
 *  - %_idx(segid, term, pgno): for each leaf that holds a term, the
 *    shortest prefix of its first term greater than the previous leaf's
 *    last term (leaf 1: the empty term), pgno = leaf << 1 | has-dlidx.
 *  - Segment age: level 0 is newest, and within a level the last segment.
 *    For one (term, rowid) the newest entry wins; an entry whose delete
 *    flag is set deletes the row from older segments (with positions, it
 *    also replaces it).
 *
 * Invariants:
 *  1. Pending entries of one term are in ascending rowid order: a row with
 *     a rowid below the last one (or equal, unless the last was a delete)
 *     flushes the pending data first.
 *  2. Every segment written starts at leaf 1 with a %_idx row per leaf
 *     holding a term, and leaves no larger than pgsz plus one varint; an
 *     input of a merge in progress is trimmed (pgnoFirst its first leaf
 *     left, rewritten to start with a term; 0 and 0 when emptied), its
 *     earlier %_idx rows kept (readers start at max(pgnoFirst, the row's)).
 *  3. A decoded length or offset is checked against the page before use;
 *     damage gives FTS5_CORRUPT.
 *  4. Inside Shale (pending data, gathered entries) every detail mode keeps
 *     an entry as size header plus poslist bytes: detail=column's column
 *     list, and for detail=none the byte 0x02 (one position) when the row
 *     is present, nothing for a plain delete. Only segments hold
 *     detail=none's own flags (see fts5_int.h).
 *  5. pending_bytes is the heap the pending terms hold (each PTerm and the
 *     capacity of its two buffers); a row begun above the table's
 *     hashsize (FTS5_DEFAULT_HASHSIZE, or the 'hashsize' setting) flushes
 *     them first, so a large transaction's memory stays bounded, as
 *     SQLite's does at its hash size.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5_int.h"

/* ---- structure ---- */
typedef struct Seg {
  int segid, first, last;
} Seg;
typedef struct Level {
  int nmerge, nseg;
  Seg *seg;
} Level;
typedef struct Structure {
  uint32_t cookie;
  uint64_t counter;
  int nlevel;
  Level *lv;
} Structure;

/* ---- pending ---- */
typedef struct PTerm {
  struct PTerm *next;  /* in its hash bucket */
  struct PTerm *older; /* the term made before it (Fts5Index.terms) */
  int nterm;
  uint32_t hash; /* term_hash of the term */
  Fts5Buf dl;    /* closed entries: rowid (delta), size header, poslist */
  int64_t last;  /* rowid of the last closed entry (dl.n > 0) */
  int64_t rowid; /* the open entry's row */
  int open, del;
  Fts5Buf cur; /* poslist bytes of the open entry */
  int64_t col, prev;
  char term[];
} PTerm;

struct Fts5Index {
  Fts5Config *c;
  PTerm **hash; /* kept, emptied, between flushes */
  PTerm *terms; /* every pending term, the newest first */
  int nhash, nterm;
  int64_t pending_bytes; /* heap the pending terms hold (invariant 5) */
  int64_t row;           /* row being written */
  int row_del;
  int have_row;
  shale_stmt *read, *write, *del_range, *idx_ins, *idx_del, *idx_seek;
  struct Gather *spare; /* the last query's gather buffers, reused by the next */
};

static void gather_spare_free(Fts5Index *x);

static int prep(Fts5Index *x, shale_stmt **st, const char *fmt) {
  if (*st) {
    shale_reset(*st);
    shale_clear_bindings(*st);
    return SHALE_OK;
  }
  char *sql = util_mprintf(fmt, x->c->zdb, x->c->zname);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_prepare_v2(x->c->db, sql, -1, st, NULL);
  shale_free(sql);
  return rc;
}

int fts5_index_open(Fts5Config *c, Fts5Index **out) {
  Fts5Index *x = shale_malloc(sizeof *x);
  *out = x;
  if (!x) return SHALE_NOMEM;
  memset(x, 0, sizeof *x);
  x->c = c;
  return SHALE_OK;
}

/* Drop the pending terms; the hash table stays (emptied) for the next. */
static void pending_clear(Fts5Index *x) {
  int keep = x->nhash <= 4096; /* a big one (of a big transaction) goes */
  for (PTerm *t = x->terms, *n; t; t = n) {
    n = t->older;
    if (keep) x->hash[t->hash & (uint32_t)(x->nhash - 1)] = NULL;
    fts5_buf_free(&t->dl);
    fts5_buf_free(&t->cur);
    shale_free(t);
  }
  if (!keep) {
    shale_free(x->hash);
    x->hash = NULL;
    x->nhash = 0;
  }
  x->terms = NULL;
  x->nterm = 0;
  x->pending_bytes = 0;
  x->have_row = 0;
}

void fts5_index_discard(Fts5Index *x) { pending_clear(x); }

int fts5_index_pending(const Fts5Index *x) { return x->nterm > 0; }

void fts5_index_close(Fts5Index *x) {
  if (!x) return;
  pending_clear(x);
  shale_free(x->hash);
  shale_finalize(x->read);
  shale_finalize(x->write);
  shale_finalize(x->del_range);
  shale_finalize(x->idx_ins);
  shale_finalize(x->idx_del);
  shale_finalize(x->idx_seek);
  gather_spare_free(x);
  shale_free(x);
}

/* ---- %_data access ---- */

/* Read block id into b (cleared). SHALE_OK, FTS5_CORRUPT when missing. */
static int data_read(Fts5Index *x, int64_t id, Fts5Buf *b) {
  int rc = prep(x, &x->read, "SELECT block FROM \"%s\".\"%s_data\" WHERE id=?");
  if (rc) return rc;
  shale_bind_int64(x->read, 1, id);
  b->n = 0;
  rc = shale_step(x->read);
  if (rc == SHALE_ROW) {
    const void *p = shale_column_blob(x->read, 0);
    int n = shale_column_bytes(x->read, 0);
    rc = n && !p ? SHALE_NOMEM : SHALE_OK;
    if (fts5_buf_grow(&rc, b, n + 8)) {
      if (n) memcpy(b->p, p, (size_t)n);
      memset(b->p + n, 0, 8);
      b->n = n;
    }
  } else if (rc == SHALE_DONE) {
    rc = FTS5_CORRUPT;
  }
  shale_reset(x->read);
  return rc;
}

static int data_write(Fts5Index *x, int64_t id, const void *p, int n) {
  int rc = prep(x, &x->write, "REPLACE INTO \"%s\".\"%s_data\"(id, block) VALUES(?, ?)");
  if (rc) return rc;
  shale_bind_int64(x->write, 1, id);
  rc = shale_bind_blob(x->write, 2, p, n, SHALE_STATIC); /* a copy: may fail */
  if (rc) return rc;
  rc = shale_step(x->write);
  shale_reset(x->write);
  return rc == SHALE_DONE ? SHALE_OK : shale_errcode(x->c->db);
}

/* Remove every %_data and %_idx row of segment segid. */
static int seg_delete(Fts5Index *x, int segid) {
  int rc = prep(x, &x->del_range, "DELETE FROM \"%s\".\"%s_data\" WHERE id>=? AND id<?");
  if (rc) return rc;
  shale_bind_int64(x->del_range, 1, (int64_t)segid << 37);
  shale_bind_int64(x->del_range, 2, (int64_t)(segid + 1) << 37);
  rc = shale_step(x->del_range);
  shale_reset(x->del_range);
  if (rc != SHALE_DONE) return shale_errcode(x->c->db);
  rc = prep(x, &x->idx_del, "DELETE FROM \"%s\".\"%s_idx\" WHERE segid=?");
  if (rc) return rc;
  shale_bind_int(x->idx_del, 1, segid);
  rc = shale_step(x->idx_del);
  shale_reset(x->idx_del);
  return rc == SHALE_DONE ? SHALE_OK : shale_errcode(x->c->db);
}

static int idx_insert(Fts5Index *x, int segid, const uint8_t *term, int n, int pgno) {
  int rc = prep(x, &x->idx_ins, "INSERT INTO \"%s\".\"%s_idx\"(segid, term, pgno) VALUES(?,?,?)");
  if (rc) return rc;
  shale_bind_int(x->idx_ins, 1, segid);
  rc = shale_bind_blob(x->idx_ins, 2, n ? (const void *)term : "", n, SHALE_STATIC);
  if (rc) return rc;
  shale_bind_int64(x->idx_ins, 3, (int64_t)pgno << 1);
  rc = shale_step(x->idx_ins);
  shale_reset(x->idx_ins);
  return rc == SHALE_DONE ? SHALE_OK : shale_errcode(x->c->db);
}

/* The leaf of segid where a term >= term (n bytes) may start: the last
 * %_idx row with a key <= term (1 when none). */
static int idx_seek(Fts5Index *x, int segid, const uint8_t *term, int n, int *pgno) {
  int rc = prep(x, &x->idx_seek,
                "SELECT pgno FROM \"%s\".\"%s_idx\" WHERE segid=? AND term<=? ORDER BY term DESC "
                "LIMIT 1");
  if (rc) return rc;
  shale_bind_int(x->idx_seek, 1, segid);
  rc = shale_bind_blob(x->idx_seek, 2, n ? (const void *)term : "", n, SHALE_STATIC);
  if (rc) return rc;
  *pgno = 1;
  rc = shale_step(x->idx_seek);
  if (rc == SHALE_ROW) *pgno = (int)(shale_column_int64(x->idx_seek, 0) >> 1);
  shale_reset(x->idx_seek);
  return rc == SHALE_ROW || rc == SHALE_DONE ? SHALE_OK : shale_errcode(x->c->db);
}

/* ---- structure record ---- */

static void structure_free(Structure *s) {
  for (int i = 0; i < s->nlevel; i++) shale_free(s->lv[i].seg);
  shale_free(s->lv);
  memset(s, 0, sizeof *s);
}

static int structure_read(Fts5Index *x, Structure *s) {
  Fts5Buf b = {0};
  memset(s, 0, sizeof *s);
  int rc = data_read(x, FTS5_STRUCTURE_ROWID, &b);
  if (rc) {
    fts5_buf_free(&b);
    return rc;
  }
  const uint8_t *p = b.p, *end = b.p + b.n;
  uint64_t nlevel, nseg, v;
  int k;
  if (b.n < 4) goto corrupt;
  s->cookie = fts5_get_u32(p);
  p += 4;
  if (!(k = fts5_get_varint(p, end, &nlevel)) || nlevel > 64) goto corrupt;
  p += k;
  if (!(k = fts5_get_varint(p, end, &nseg)) || nseg > 2000) goto corrupt;
  p += k;
  if (!(k = fts5_get_varint(p, end, &s->counter))) goto corrupt;
  p += k;
  s->lv = shale_malloc(sizeof(Level) * (nlevel ? nlevel : 1));
  if (!s->lv) {
    fts5_buf_free(&b);
    return SHALE_NOMEM;
  }
  memset(s->lv, 0, sizeof(Level) * (nlevel ? nlevel : 1));
  s->nlevel = (int)nlevel;
  uint64_t total = 0;
  for (int i = 0; i < s->nlevel; i++) {
    Level *l = &s->lv[i];
    if (!(k = fts5_get_varint(p, end, &v))) goto corrupt;
    p += k;
    l->nmerge = (int)v;
    if (!(k = fts5_get_varint(p, end, &v)) || v > nseg - total) goto corrupt;
    p += k;
    l->nseg = (int)v;
    total += v;
    if ((uint64_t)l->nmerge > v) goto corrupt;
    l->seg = shale_malloc(sizeof(Seg) * (v ? v : 1));
    if (!l->seg) {
      structure_free(s);
      fts5_buf_free(&b);
      return SHALE_NOMEM;
    }
    for (int j = 0; j < l->nseg; j++) {
      uint64_t a[3];
      for (int q = 0; q < 3; q++) {
        if (!(k = fts5_get_varint(p, end, &a[q])) || a[q] > 0x7fffffff) goto corrupt;
        p += k;
      }
      if (a[0] == 0 || a[0] > 0xffff || a[1] == 0 || a[2] < a[1]) {
        if (!(a[1] == 0 && a[2] == 0 && a[0])) goto corrupt;
      }
      l->seg[j].segid = (int)a[0];
      l->seg[j].first = (int)a[1];
      l->seg[j].last = (int)a[2];
    }
  }
  if (total != nseg) goto corrupt;
  fts5_buf_free(&b);
  return SHALE_OK;
corrupt:
  structure_free(s);
  fts5_buf_free(&b);
  return FTS5_CORRUPT;
}

static int structure_write(Fts5Index *x, const Structure *s) {
  Fts5Buf b = {0};
  int rc = SHALE_OK, nseg = 0;
  for (int i = 0; i < s->nlevel; i++) nseg += s->lv[i].nseg;
  uint8_t ck[4] = {(uint8_t)(s->cookie >> 24), (uint8_t)(s->cookie >> 16),
                   (uint8_t)(s->cookie >> 8), (uint8_t)s->cookie};
  fts5_buf_append(&rc, &b, ck, 4);
  fts5_buf_varint(&rc, &b, (uint64_t)s->nlevel);
  fts5_buf_varint(&rc, &b, (uint64_t)nseg);
  fts5_buf_varint(&rc, &b, s->counter);
  for (int i = 0; i < s->nlevel; i++) {
    fts5_buf_varint(&rc, &b, (uint64_t)s->lv[i].nmerge);
    fts5_buf_varint(&rc, &b, (uint64_t)s->lv[i].nseg);
    for (int j = 0; j < s->lv[i].nseg; j++) {
      fts5_buf_varint(&rc, &b, (uint64_t)s->lv[i].seg[j].segid);
      fts5_buf_varint(&rc, &b, (uint64_t)s->lv[i].seg[j].first);
      fts5_buf_varint(&rc, &b, (uint64_t)s->lv[i].seg[j].last);
    }
  }
  if (rc == SHALE_OK) rc = data_write(x, FTS5_STRUCTURE_ROWID, b.p, b.n);
  fts5_buf_free(&b);
  return rc;
}

/* Append segment sg to level lvl (levels added as needed). */
static int structure_add(Structure *s, int lvl, Seg sg) {
  if (lvl >= s->nlevel) {
    Level *l = shale_realloc(s->lv, sizeof(Level) * (size_t)(lvl + 1));
    if (!l) return SHALE_NOMEM;
    memset(l + s->nlevel, 0, sizeof(Level) * (size_t)(lvl + 1 - s->nlevel));
    s->lv = l;
    s->nlevel = lvl + 1;
  }
  Level *l = &s->lv[lvl];
  Seg *a = shale_realloc(l->seg, sizeof(Seg) * (size_t)(l->nseg + 1));
  if (!a) return SHALE_NOMEM;
  l->seg = a;
  l->seg[l->nseg++] = sg;
  return SHALE_OK;
}

static int structure_nseg(const Structure *s) {
  int n = 0;
  for (int i = 0; i < s->nlevel; i++) n += s->lv[i].nseg;
  return n;
}

/* The smallest segment id not in use. */
static int segid_alloc(const Structure *s) {
  for (int id = 1; id <= 0xffff; id++) {
    int used = 0;
    for (int i = 0; i < s->nlevel && !used; i++)
      for (int j = 0; j < s->lv[i].nseg; j++)
        if (s->lv[i].seg[j].segid == id) used = 1;
    if (!used) return id;
  }
  return 0;
}

/* ---- segment writer ---- */
typedef struct Writer {
  Fts5Index *x;
  int segid, pgno, start; /* start: the first leaf this writer writes */
  Fts5Buf page, pgidx, term;
  int prev_pgidx, has_term, first_rowid_in_page, first_in_doclist;
  /* SQLite's two writers: a flush breaks no leaf before a rowid, and
   * splits a poslist before the first varint that does not fit; a merge
   * breaks leaves before rowids, and splits after the varint that
   * crosses pgsz (leaves as SQLite's, so segment sizes and the merges
   * they lead to are the same) */
  int flush_mode;
  int64_t prev_rowid;
  int rc;
} Writer;

static void writer_init(Writer *w, Fts5Index *x, int segid) {
  memset(w, 0, sizeof *w);
  w->x = x;
  w->segid = segid;
  w->pgno = w->start = 1;
  static const uint8_t zero[4] = {0};
  fts5_buf_append(&w->rc, &w->page, zero, 4);
  w->first_rowid_in_page = 1;
}

static void writer_flush(Writer *w) {
  if (w->rc) return;
  fts5_buf_u16(w->page.p + 2, w->page.n);
  if (w->has_term) fts5_buf_append(&w->rc, &w->page, w->pgidx.p, w->pgidx.n);
  if (w->rc == SHALE_OK)
    w->rc = data_write(w->x, FTS5_SEGMENT_ROWID(w->segid, w->pgno), w->page.p, w->page.n);
  w->page.n = 4;
  memset(w->page.p, 0, 4);
  w->pgidx.n = 0;
  w->prev_pgidx = 0;
  w->pgno++;
  w->has_term = 0;
  w->first_rowid_in_page = 1;
}

static int common_prefix(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int i = 0;
  while (i < na && i < nb && a[i] == b[i]) i++;
  return i;
}

static void writer_term(Writer *w, const uint8_t *t, int n) {
  int pgsz = w->x->c->pgsz;
  if (w->rc) return;
  if (w->page.n > 4 && w->page.n + w->pgidx.n + n + 2 >= pgsz) writer_flush(w);
  int npre = common_prefix(w->term.p, w->term.n, t, n);
  fts5_buf_varint(&w->rc, &w->pgidx, (uint64_t)(w->page.n - w->prev_pgidx));
  w->prev_pgidx = w->page.n;
  if (!w->has_term) {
    if (w->pgno != 1) {
      int k = w->term.n ? npre + 1 : n;
      if (k > n) k = n;
      if (w->rc == SHALE_OK) w->rc = idx_insert(w->x, w->segid, t, k, w->pgno);
    }
    npre = 0;
  } else {
    fts5_buf_varint(&w->rc, &w->page, (uint64_t)npre);
  }
  fts5_buf_varint(&w->rc, &w->page, (uint64_t)(n - npre));
  fts5_buf_append(&w->rc, &w->page, t + npre, n - npre);
  w->term.n = 0;
  fts5_buf_append(&w->rc, &w->term, t, n);
  w->has_term = 1;
  w->first_rowid_in_page = 0;
  w->first_in_doclist = 1;
}

static void writer_rowid(Writer *w, int64_t rowid) {
  if (w->rc) return;
  if (!w->flush_mode && w->page.n + w->pgidx.n >= w->x->c->pgsz) writer_flush(w);
  if (w->first_rowid_in_page) fts5_buf_u16(w->page.p, w->page.n);
  if (w->first_in_doclist || w->first_rowid_in_page)
    fts5_buf_varint(&w->rc, &w->page, (uint64_t)rowid);
  else
    fts5_buf_varint(&w->rc, &w->page, (uint64_t)rowid - (uint64_t)w->prev_rowid);
  w->prev_rowid = rowid;
  w->first_in_doclist = 0;
  w->first_rowid_in_page = 0;
}

/* Append varint-aligned data (a poslist with its size header), split over
 * leaves between varints. As SQLite's writer, the size header stays on the
 * leaf of its rowid (readers take it from there), so the first varint is
 * always written here, even past pgsz. */
static void writer_data(Writer *w, const uint8_t *a, int n) {
  int pgsz = w->x->c->pgsz, first = 1;
  while (w->rc == SHALE_OK && n > 0) {
    int space = pgsz - w->page.n - w->pgidx.n;
    if (n <= space) {
      fts5_buf_append(&w->rc, &w->page, a, n);
      return;
    }
    int k = 0;
    for (;;) {
      uint64_t v;
      int m = fts5_get_varint(a + k, a + n, &v);
      if (!m) {
        w->rc = FTS5_CORRUPT;
        return;
      }
      if (k + m > space && !(first && k == 0)) break;
      k += m;
      if (k >= n) break;
    }
    first = 0;
    fts5_buf_append(&w->rc, &w->page, a, k);
    a += k;
    n -= k;
    if (n > 0 || w->page.n + w->pgidx.n >= pgsz) writer_flush(w);
  }
}

/* Append poslist bytes as SQLite's merge does: while they would reach
 * pgsz, the varints up to and including the one that crosses it go on
 * this leaf, then the next. */
static void writer_data_crossing(Writer *w, const uint8_t *a, int n) {
  int pgsz = w->x->c->pgsz;
  while (w->rc == SHALE_OK && w->page.n + w->pgidx.n + n >= pgsz) {
    int req = pgsz - w->page.n - w->pgidx.n, k = 0;
    while (k < req && k < n) {
      uint64_t v;
      int m = fts5_get_varint(a + k, a + n, &v);
      if (!m) {
        w->rc = FTS5_CORRUPT;
        return;
      }
      k += m;
    }
    fts5_buf_append(&w->rc, &w->page, a, k);
    a += k;
    n -= k;
    writer_flush(w);
  }
  if (n > 0) fts5_buf_append(&w->rc, &w->page, a, n);
}

/* Finish: the last leaf written; returns the last page number. A segment
 * started at leaf 1 gets its %_idx row for leaf 1 (the empty key) when it
 * has a leaf. */
static int writer_finish(Writer *w) {
  if (w->page.n > 4) writer_flush(w);
  int rc = w->rc;
  if (rc == SHALE_OK && w->start == 1 && w->pgno > 1) rc = idx_insert(w->x, w->segid, NULL, 0, 1);
  w->rc = rc;
  fts5_buf_free(&w->page);
  fts5_buf_free(&w->pgidx);
  fts5_buf_free(&w->term);
  return w->pgno - 1;
}

/* ---- pending data ---- */

static uint32_t term_hash(const char *t, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)t[i]) * 16777619u;
  return h;
}

static PTerm *pending_term(Fts5Index *x, int *rc, const char *t, int n) {
  if (x->nterm >= x->nhash) {
    int nh = x->nhash ? x->nhash * 2 : 1024;
    PTerm **h = shale_malloc(sizeof(PTerm *) * (size_t)nh);
    if (!h) {
      *rc = SHALE_NOMEM;
      return NULL;
    }
    memset(h, 0, sizeof(PTerm *) * (size_t)nh);
    for (int i = 0; i < x->nhash; i++) {
      for (PTerm *e = x->hash[i], *nx; e; e = nx) {
        nx = e->next;
        uint32_t k = e->hash & (uint32_t)(nh - 1);
        e->next = h[k];
        h[k] = e;
      }
    }
    shale_free(x->hash);
    x->hash = h;
    x->nhash = nh;
  }
  uint32_t h = term_hash(t, n), k = h & (uint32_t)(x->nhash - 1);
  for (PTerm *e = x->hash[k]; e; e = e->next)
    if (e->hash == h && e->nterm == n && !memcmp(e->term, t, (size_t)n)) return e;
  PTerm *e = shale_malloc(sizeof(PTerm) + (size_t)n + 1);
  if (!e) {
    *rc = SHALE_NOMEM;
    return NULL;
  }
  memset(e, 0, sizeof *e);
  e->nterm = n;
  e->hash = h;
  memcpy(e->term, t, (size_t)n);
  e->term[n] = 0;
  e->next = x->hash[k];
  x->hash[k] = e;
  e->older = x->terms;
  x->terms = e;
  x->nterm++;
  x->pending_bytes += (int64_t)(sizeof(PTerm) + (size_t)n + 1);
  return e;
}

/* Close the open entry of e into its doclist. */
static void pterm_close(int *rc, PTerm *e) {
  if (!e->open) return;
  uint64_t d = e->dl.n ? (uint64_t)e->rowid - (uint64_t)e->last : (uint64_t)e->rowid;
  fts5_buf_varint(rc, &e->dl, d);
  fts5_buf_varint(rc, &e->dl, (uint64_t)e->cur.n * 2 + (uint64_t)e->del);
  fts5_buf_append(rc, &e->dl, e->cur.p, e->cur.n);
  e->last = e->rowid;
  e->open = 0;
  e->cur.n = 0;
}

int fts5_index_begin_row(Fts5Index *x, int64_t rowid, int is_delete) {
  int rc = SHALE_OK;
  if (x->have_row && (rowid < x->row || (rowid == x->row && !x->row_del)))
    rc = fts5_index_flush(x); /* invariant 1 */
  else if (x->pending_bytes > x->c->hashsize)
    rc = fts5_index_flush(x);
  x->row = rowid;
  x->row_del = is_delete;
  x->have_row = 1;
  return rc;
}

/* Add (col, pos) of row x->row to pending term e (*rc set on failure). */
static void pending_put(Fts5Index *x, PTerm *e, int col, int pos, int *rc) {
  if (e->open && e->rowid != x->row) pterm_close(rc, e);
  int detail = x->c->detail;
  if (!e->open) {
    e->open = 1;
    e->rowid = x->row;
    e->del = 0;
    e->col = detail == FTS5_DETAIL_FULL ? 0 : -1;
    e->prev = 0;
    e->cur.n = 0;
  }
  if (x->row_del) {
    e->del = 1;
    return;
  }
  if (detail == FTS5_DETAIL_NONE) { /* present: one pseudo position (invariant 4) */
    if (!e->cur.n) fts5_buf_varint(rc, &e->cur, 2);
    return;
  }
  if (detail == FTS5_DETAIL_COLUMN) { /* each column once, as an offset */
    if (col != e->col) {
      fts5_buf_varint(rc, &e->cur, (uint64_t)(col - e->prev + 2));
      e->col = e->prev = col;
    }
    return;
  }
  if (col != e->col) {
    fts5_buf_varint(rc, &e->cur, 1);
    fts5_buf_varint(rc, &e->cur, (uint64_t)col);
    e->col = col;
    e->prev = 0;
  }
  fts5_buf_varint(rc, &e->cur, (uint64_t)(pos - e->prev + 2));
  e->prev = pos;
}

static int pending_add(Fts5Index *x, int col, int pos, const char *t, int n) {
  int rc = SHALE_OK;
  PTerm *e = pending_term(x, &rc, t, n);
  if (!e) return rc;
  int64_t had = (int64_t)e->dl.cap + e->cur.cap;
  pending_put(x, e, col, pos, &rc);
  x->pending_bytes += (int64_t)e->dl.cap + e->cur.cap - had;
  return rc;
}

int fts5_prefix_bytes(const char *tok, int ntok, int nchar) {
  int i = 0;
  for (int c = 0; c < nchar; c++) {
    if (i >= ntok) return 0;
    i++;
    while (i < ntok && ((uint8_t)tok[i] & 0xc0) == 0x80) i++;
  }
  return i;
}

int fts5_index_token(Fts5Index *x, int col, int pos, const char *tok, int ntok) {
  char small[64];
  char *t = ntok + 1 <= (int)sizeof(small) ? small : shale_malloc((size_t)ntok + 1);
  if (!t) return SHALE_NOMEM;
  memcpy(t + 1, tok, (size_t)ntok);
  t[0] = '0';
  int rc = pending_add(x, col, pos, t, ntok + 1);
  for (int i = 0; rc == SHALE_OK && i < x->c->nprefix; i++) {
    int nb = fts5_prefix_bytes(tok, ntok, x->c->prefix[i]);
    if (!nb) continue;
    t[0] = (char)('0' + i + 1);
    rc = pending_add(x, col, pos, t, nb + 1);
  }
  if (t != small) shale_free(t);
  return rc;
}

/* Whether term a sorts before term b (bytes, then length). */
static int pterm_less(const PTerm *a, const PTerm *b) {
  int n = a->nterm < b->nterm ? a->nterm : b->nterm;
  const uint8_t *x = (const uint8_t *)a->term, *y = (const uint8_t *)b->term;
  for (int i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] < y[i];
  return a->nterm < b->nterm;
}

/* Sort a[n] by term: quicksort (median of three, the smaller side
 * recursed), insertion sort for short runs; the comparison inline (the
 * terms are short and share their index byte, qsort's callback and
 * memcmp cost more than the comparing). Terms are distinct. */
static void pterm_sort(PTerm **a, int n) {
  while (n > 12) {
    PTerm *t, *m = a[n / 2];
    if (pterm_less(m, a[0])) t = m, m = a[0], a[0] = t;
    if (pterm_less(a[n - 1], m)) {
      t = m, m = a[n - 1], a[n - 1] = t;
      if (pterm_less(m, a[0])) t = m, m = a[0], a[0] = t;
    }
    a[n / 2] = m;
    int i = 0, j = n - 1;
    for (;;) { /* a[0] <= m <= a[n - 1]: both scans stop inside */
      while (pterm_less(a[++i], m)) {
      }
      while (pterm_less(m, a[--j])) {
      }
      if (i >= j) break;
      t = a[i], a[i] = a[j], a[j] = t;
    }
    /* a[0 .. j] <= m <= a[j + 1 .. n) */
    if (j + 1 < n - j - 1) {
      pterm_sort(a, j + 1);
      a += j + 1;
      n -= j + 1;
    } else {
      pterm_sort(a + j + 1, n - j - 1);
      n = j + 1;
    }
  }
  for (int i = 1; i < n; i++) {
    PTerm *v = a[i];
    int j = i;
    for (; j > 0 && pterm_less(v, a[j - 1]); j--) a[j] = a[j - 1];
    a[j] = v;
  }
}

/* Write one poslist (with its header) for a doclist being written. */
static void write_entry(Writer *w, int64_t rowid, int del, const uint8_t *pl, int npl) {
  uint8_t hdr[10];
  Fts5Buf tmp = {0};
  writer_rowid(w, rowid);
  if (w->x->c->detail == FTS5_DETAIL_NONE) { /* flags on the rowid's leaf */
    static const uint8_t zero[2] = {0, 0};
    if (del) fts5_buf_append(&w->rc, &w->page, zero, npl ? 2 : 1);
    return;
  }
  int k = util_put_varint(hdr, (uint64_t)npl * 2 + (uint64_t)del);
  if (!w->flush_mode) {
    fts5_buf_append(&w->rc, &w->page, hdr, k);
    writer_data_crossing(w, pl, npl);
    return;
  }
  if (w->page.n + w->pgidx.n + k + npl < w->x->c->pgsz) {
    fts5_buf_append(&w->rc, &w->page, hdr, k);
    fts5_buf_append(&w->rc, &w->page, pl, npl);
    return;
  }
  fts5_buf_append(&w->rc, &tmp, hdr, k);
  fts5_buf_append(&w->rc, &tmp, pl, npl);
  writer_data(w, tmp.p, tmp.n);
  fts5_buf_free(&tmp);
}

static int structure_push_segment(Fts5Index *x, Structure *s, int lvl, int segid, int last) {
  Seg sg = {segid, 1, last};
  (void)x;
  return structure_add(s, lvl, sg);
}

static int after_flush(Fts5Index *x, Structure *s, int nleaf);

int fts5_index_flush(Fts5Index *x) {
  int rc = SHALE_OK;
  if (!x->nterm) {
    x->have_row = 0;
    return SHALE_OK;
  }
  PTerm **all = shale_malloc(sizeof(PTerm *) * (size_t)x->nterm);
  if (!all) return SHALE_NOMEM;
  int n = 0;
  for (PTerm *e = x->terms; e; e = e->older) {
    pterm_close(&rc, e);
    all[n++] = e;
  }
  pterm_sort(all, n);
  Structure s;
  if (rc == SHALE_OK) rc = structure_read(x, &s);
  if (rc) {
    shale_free(all);
    return rc;
  }
  int segid = segid_alloc(&s);
  if (!segid) rc = FTS5_CORRUPT;
  Writer w;
  writer_init(&w, x, segid);
  w.flush_mode = 1;
  for (int i = 0; i < n && rc == SHALE_OK && w.rc == SHALE_OK; i++) {
    PTerm *e = all[i];
    writer_term(&w, (const uint8_t *)e->term, e->nterm);
    const uint8_t *p = e->dl.p, *end = p + e->dl.n;
    int64_t rowid = 0;
    while (p < end && w.rc == SHALE_OK) {
      uint64_t d, h;
      p += fts5_get_varint(p, end, &d);
      rowid = (int64_t)((uint64_t)rowid + d);
      p += fts5_get_varint(p, end, &h);
      write_entry(&w, rowid, (int)(h & 1), p, (int)(h >> 1));
      p += h >> 1;
    }
  }
  int last = writer_finish(&w);
  if (rc == SHALE_OK) rc = w.rc;
  shale_free(all);
  if (rc == SHALE_OK) rc = structure_push_segment(x, &s, 0, segid, last);
  if (rc == SHALE_OK) rc = after_flush(x, &s, last);
  structure_free(&s);
  pending_clear(x);
  return rc;
}

/* ---- reading segments ---- */

/* Entries gathered from segments: term bytes and poslist bytes live in
 * arena (offsets), age 0 is the newest segment. */
typedef struct Ent {
  int toff, tlen;
  int64_t rowid;
  int age, del;
  int poff, plen;
} Ent;
typedef struct Gather {
  Fts5Buf arena;
  Ent *a;
  int n, cap;
  int *run; /* a[run[i] .. run[i + 1]) is in order: one doclist (rowid
             * order), or for term order one segment's doclists */
  int nrun, caprun;
  int by_rowid, new_seg; /* the order wanted; the next doclist starts a segment */
} Gather;

static void gather_free(Gather *g) {
  fts5_buf_free(&g->arena);
  shale_free(g->a);
  shale_free(g->run);
  memset(g, 0, sizeof *g);
}

/* Buffers up to this size are kept for the next gather (a query's
 * arrays are built by doubling; reusing them saves the copies). */
#define GATHER_KEEP_BYTES (1 << 20)

/* g empty, with the spare buffers of x when it has them. */
static void gather_init(Fts5Index *x, Gather *g) {
  memset(g, 0, sizeof *g);
  if (x->spare) {
    *g = *x->spare;
    memset(x->spare, 0, sizeof *x->spare);
    g->arena.n = g->n = g->nrun = 0;
  }
}

static void gather_spare_free(Fts5Index *x) {
  if (x->spare) gather_free(x->spare);
  shale_free(x->spare);
  x->spare = NULL;
}

/* Done with g: its buffers become x's spare when they are not too big. */
static void gather_done(Fts5Index *x, Gather *g) {
  if (!x->spare && (x->spare = shale_malloc(sizeof *x->spare)) != NULL)
    memset(x->spare, 0, sizeof *x->spare);
  if (x->spare && !x->spare->a && !x->spare->arena.p && g->arena.cap <= GATHER_KEEP_BYTES &&
      (size_t)g->cap * sizeof(Ent) <= GATHER_KEEP_BYTES) {
    *x->spare = *g;
    memset(g, 0, sizeof *g);
    return;
  }
  gather_free(g);
}

/* A term scanner over one segment. */
typedef struct SegScan {
  Fts5Index *x;
  Seg seg;
  int pgno; /* current leaf */
  Fts5Buf leaf;
  int szleaf;
  int iidx;    /* offset in the page index of the next term's entry */
  int termoff; /* offset of the next term on the leaf (0: none) */
  /* the current term's leaf, the offset of its doclist there, and when the
   * doclist ends on that leaf the next term's offset and the offset of the
   * page-index entries after it (else tnext 0): what trimming needs */
  int tpgno, tdoff, tnext, tpgidx;
  Fts5Buf term; /* current term */
  Fts5Buf dl;   /* its doclist, gathered over leaves */
  int *abs;     /* offsets in dl of absolute rowids */
  int nabs, capabs;
  int eof;
} SegScan;

static int leaf_load(SegScan *s, int pgno) {
  int rc = data_read(s->x, FTS5_SEGMENT_ROWID(s->seg.segid, pgno), &s->leaf);
  if (rc) return rc;
  s->pgno = pgno;
  if (s->leaf.n < 4) return FTS5_CORRUPT;
  s->szleaf = fts5_get_u16(s->leaf.p + 2);
  if (s->szleaf < 4 || s->szleaf > s->leaf.n) return FTS5_CORRUPT;
  s->iidx = s->szleaf;
  s->termoff = 0;
  if (s->iidx < s->leaf.n) {
    uint64_t v;
    int k = fts5_get_varint(s->leaf.p + s->iidx, s->leaf.p + s->leaf.n, &v);
    if (!k || v < 4 || v >= (uint64_t)s->szleaf) return FTS5_CORRUPT;
    s->iidx += k;
    s->termoff = (int)v;
  }
  return SHALE_OK;
}

static int abs_add(SegScan *s, int off) {
  if (s->nabs == s->capabs) {
    int cap = s->capabs ? s->capabs * 2 : 8;
    int *a = shale_realloc(s->abs, sizeof(int) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    s->abs = a;
    s->capabs = cap;
  }
  s->abs[s->nabs++] = off;
  return SHALE_OK;
}

/* Read the term at s->termoff and its doclist; first: the term is the
 * first on its leaf (written whole). Moves on to the next term. */
static int scan_read(SegScan *s, int first) {
  const uint8_t *p = s->leaf.p, *end = p + s->szleaf;
  int off = s->termoff, rc = SHALE_OK, k;
  uint64_t npre = 0, nnew;
  s->tpgno = s->pgno;
  s->tnext = 0;
  if (!first) {
    if (!(k = fts5_get_varint(p + off, end, &npre))) return FTS5_CORRUPT;
    off += k;
  }
  if (!(k = fts5_get_varint(p + off, end, &nnew))) return FTS5_CORRUPT;
  off += k;
  if (npre > (uint64_t)s->term.n || nnew > (uint64_t)(s->szleaf - off)) return FTS5_CORRUPT;
  s->term.n = (int)npre;
  fts5_buf_append(&rc, &s->term, p + off, (int)nnew);
  off += (int)nnew;
  s->tdoff = off;
  s->dl.n = 0;
  s->nabs = 0;
  if (rc || (rc = abs_add(s, 0))) return rc;
  /* the doclist runs to the next term on this leaf, or on to later leaves */
  int next = 0;
  if (s->iidx < s->leaf.n) {
    uint64_t v;
    if (!(k = fts5_get_varint(s->leaf.p + s->iidx, s->leaf.p + s->leaf.n, &v))) return FTS5_CORRUPT;
    s->iidx += k;
    if (v == 0 || (uint64_t)s->termoff + v >= (uint64_t)s->szleaf) return FTS5_CORRUPT;
    next = s->termoff + (int)v;
  }
  if (next) {
    if (next < off) return FTS5_CORRUPT;
    fts5_buf_append(&rc, &s->dl, p + off, next - off);
    s->termoff = next;
    s->tnext = next;
    s->tpgidx = s->iidx;
    return rc;
  }
  fts5_buf_append(&rc, &s->dl, p + off, s->szleaf - off);
  s->termoff = 0; /* no next term unless a later leaf has one */
  for (;;) {
    if (rc) return rc;
    if (s->pgno >= s->seg.last) return SHALE_OK;
    if ((rc = leaf_load(s, s->pgno + 1))) return rc;
    int stop = s->termoff ? s->termoff : s->szleaf;
    int rid = fts5_get_u16(s->leaf.p);
    if (rid && (rid < 4 || rid >= stop)) return FTS5_CORRUPT;
    int from = 4;
    if (rid) {
      fts5_buf_append(&rc, &s->dl, s->leaf.p + 4, rid - 4);
      if (rc == SHALE_OK) rc = abs_add(s, s->dl.n);
      from = rid;
    }
    fts5_buf_append(&rc, &s->dl, s->leaf.p + from, stop - from);
    if (s->termoff) return rc;
  }
}

/* Start scanning seg at the leaf where terms >= term (n bytes) may be;
 * positions on the first term there (s->eof if none). */
static int scan_start(SegScan *s, Fts5Index *x, Seg seg, const uint8_t *term, int n) {
  memset(s, 0, sizeof *s);
  s->x = x;
  s->seg = seg;
  if (seg.first == 0 || seg.last < seg.first) {
    s->eof = 1;
    return SHALE_OK;
  }
  int pg = 1, rc = idx_seek(x, seg.segid, term, n, &pg);
  if (rc) return rc;
  if (pg < seg.first) pg = seg.first;
  if (pg > seg.last) return FTS5_CORRUPT;
  for (;;) {
    if ((rc = leaf_load(s, pg))) return rc;
    if (s->termoff) break;
    if (pg >= seg.last) {
      s->eof = 1;
      return SHALE_OK;
    }
    pg++;
  }
  return scan_read(s, 1);
}

/* Next term: after scan_read the leaf holds the next term (termoff) or the
 * scan reached its end. */
static int scan_next(SegScan *s) {
  if (s->eof) return SHALE_OK;
  if (!s->termoff) {
    s->eof = 1;
    return SHALE_OK;
  }
  /* first on its leaf iff its offset is the leaf's first page-index entry */
  uint64_t v;
  int k = fts5_get_varint(s->leaf.p + s->szleaf, s->leaf.p + s->leaf.n, &v);
  if (!k) return FTS5_CORRUPT;
  return scan_read(s, s->termoff == (int)v);
}

static void scan_free(SegScan *s) {
  fts5_buf_free(&s->leaf);
  fts5_buf_free(&s->term);
  fts5_buf_free(&s->dl);
  shale_free(s->abs);
}

static int term_cmp(const uint8_t *a, int na, const uint8_t *b, int nb) {
  int n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  return c ? c : na - nb;
}

/* Whether offset off of s->dl starts an absolute rowid (a leaf's first). */
static int at_abs(const SegScan *s, int off) {
  for (int i = 0; i < s->nabs; i++)
    if (s->abs[i] >= off) return s->abs[i] == off;
  return 0;
}

/* detail=none: the flags after a rowid at *pp, as a poslist header (size
 * 1 for the pseudo position of invariant 4, or 0, plus the delete bit).
 * A 0x00 starting the next leaf's first rowid is not a flag. */
static uint64_t none_flags(const SegScan *s, const uint8_t **pp, const uint8_t *end) {
  const uint8_t *p = *pp;
  uint64_t h = 2;
  if (p < end && *p == 0 && !at_abs(s, (int)(p - s->dl.p))) {
    p++;
    h = 1;
    if (p < end && *p == 0 && !at_abs(s, (int)(p - s->dl.p))) {
      p++;
      h = 3;
    }
  }
  *pp = p;
  return h;
}

static const uint8_t pseudo_pos = 2; /* detail=none: position 0 */

/* Add the current doclist of s to g: a run of its own in rowid order; in
 * term order it continues its segment's run (terms ascend in a segment). */
static int gather_doclist(Gather *g, SegScan *s, int age) {
  int rc = SHALE_OK, toff = g->arena.n, none = s->x->c->detail == FTS5_DETAIL_NONE;
  if (g->by_rowid || g->new_seg) {
    if (g->nrun + 1 >= g->caprun) {
      int cap = g->caprun ? g->caprun * 2 : 16;
      int *r = shale_realloc(g->run, sizeof(int) * (size_t)cap);
      if (!r) return SHALE_NOMEM;
      g->run = r;
      g->caprun = cap;
    }
    g->run[g->nrun++] = g->n;
    g->new_seg = 0;
  }
  fts5_buf_append(&rc, &g->arena, s->term.p, s->term.n);
  /* the doclist copied whole: each entry's poslist is a slice of it (with
   * detail=none a pseudo poslist is appended per entry instead) */
  int base = g->arena.n;
  if (!none) fts5_buf_append(&rc, &g->arena, s->dl.p, s->dl.n);
  const uint8_t *p = s->dl.p, *end = p + s->dl.n;
  int64_t rowid = 0;
  int ia = 0;
  while (p < end && rc == SHALE_OK) {
    uint64_t v, h;
    int off = (int)(p - s->dl.p), k;
    if (!(k = fts5_get_varint(p, end, &v))) return FTS5_CORRUPT;
    p += k;
    while (ia < s->nabs && s->abs[ia] < off) ia++;
    if (ia < s->nabs && s->abs[ia] == off)
      rowid = (int64_t)v;
    else if (v == 0)
      return FTS5_CORRUPT;
    else
      rowid = (int64_t)((uint64_t)rowid + v);
    if (none) {
      h = none_flags(s, &p, end);
    } else {
      if (!(k = fts5_get_varint(p, end, &h))) return FTS5_CORRUPT;
      p += k;
      if ((h >> 1) > (uint64_t)(end - p)) return FTS5_CORRUPT;
    }
    if (g->n == g->cap) {
      int cap = g->cap ? g->cap * 2 : 64;
      Ent *a = shale_realloc(g->a, sizeof(Ent) * (size_t)cap);
      if (!a) return SHALE_NOMEM;
      g->a = a;
      g->cap = cap;
    }
    Ent *e = &g->a[g->n++];
    e->toff = toff;
    e->tlen = s->term.n;
    e->rowid = rowid;
    e->age = age;
    e->del = (int)(h & 1);
    e->plen = (int)(h >> 1);
    if (none) {
      e->poff = g->arena.n;
      fts5_buf_append(&rc, &g->arena, &pseudo_pos, e->plen);
    } else {
      e->poff = base + (int)(p - s->dl.p);
      p += h >> 1;
    }
  }
  return rc;
}

/* Entry order: by (term, rowid, age), or with by_rowid by (rowid, term,
 * age); age 0 (the newest) first. */
static int ent_cmp(const uint8_t *arena, const Ent *x, const Ent *y, int by_rowid) {
  if (by_rowid && x->rowid != y->rowid) return x->rowid < y->rowid ? -1 : 1;
  int c = term_cmp(arena + x->toff, x->tlen, arena + y->toff, y->tlen);
  if (c) return c;
  if (x->rowid != y->rowid) return x->rowid < y->rowid ? -1 : 1;
  return x->age - y->age;
}

/* Sort g's entries by merging its runs (each in rowid order, and within a
 * doclist one term and one age), pairwise until one is left. */
static int gather_sort(Gather *g, int by_rowid) {
  if (g->nrun < 2 || g->n < 2) return SHALE_OK;
  g->run[g->nrun] = g->n;
  Ent *tmp = shale_malloc(sizeof(Ent) * (size_t)g->n);
  if (!tmp) return SHALE_NOMEM;
  Ent *src = g->a, *dst = tmp;
  const uint8_t *ar = g->arena.p;
  while (g->nrun > 1) {
    int k = 0;
    for (int r = 0; r < g->nrun; r += 2) {
      int lo = g->run[r], mid = g->run[r + 1], hi = r + 2 <= g->nrun ? g->run[r + 2] : mid;
      if (r + 1 >= g->nrun) hi = mid; /* an odd run out: copied */
      int i = lo, j = mid, o = lo;
      if (r + 1 < g->nrun)
        while (i < mid && j < hi)
          dst[o++] = ent_cmp(ar, &src[j], &src[i], by_rowid) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
      g->run[k++] = lo;
    }
    g->run[k] = g->n;
    g->nrun = k;
    Ent *t = src;
    src = dst;
    dst = t;
  }
  if (src != g->a) {
    shale_free(g->a);
    g->a = src;
    g->cap = g->n;
  } else {
    shale_free(tmp);
  }
  return SHALE_OK;
}

static void gather_resolve(Gather *g, int keep_del);

/* Every entry of every term in [term, term + prefix range) from the
 * segments of levels lo..hi of s, then resolved: the newest per (term,
 * rowid), deletions dropped unless keep_del (they still hide older
 * segments' entries). prefix: all terms starting with term, else term
 * exactly. Entries end in ent_cmp's order (by term first, or with by_rowid
 * by rowid first). gather: every level of the current structure. */
static int gather_levels(Fts5Index *x, const Structure *s, int lo, int hi, const uint8_t *term,
                         int n, int prefix, int by_rowid, int keep_del, Gather *g) {
  gather_init(x, g);
  g->by_rowid = by_rowid;
  int rc = SHALE_OK, age = 0;
  for (int i = lo; rc == SHALE_OK && i <= hi && i < s->nlevel; i++) {
    for (int j = s->lv[i].nseg - 1; rc == SHALE_OK && j >= 0; j--, age++) {
      SegScan sc;
      g->new_seg = 1;
      rc = scan_start(&sc, x, s->lv[i].seg[j], term, n);
      while (rc == SHALE_OK && !sc.eof) {
        int c = term_cmp(sc.term.p, sc.term.n, term, n);
        if (prefix) {
          if (sc.term.n < n || memcmp(sc.term.p, term, (size_t)n)) {
            if (c > 0) break;
          } else {
            rc = gather_doclist(g, &sc, age);
          }
        } else {
          if (c > 0) break;
          if (c == 0) {
            rc = gather_doclist(g, &sc, age);
            break;
          }
        }
        if (rc == SHALE_OK) rc = scan_next(&sc);
      }
      scan_free(&sc);
    }
  }
  if (rc) return rc;
  if ((rc = gather_sort(g, by_rowid))) return rc;
  gather_resolve(g, keep_del);
  return SHALE_OK;
}

/* Sorted entries resolved: the newest per (term, rowid), deletions dropped
 * unless keep_del. */
static void gather_resolve(Gather *g, int keep_del) {
  int k = 0;
  for (int i = 0; i < g->n; i++) {
    Ent *e = &g->a[i];
    if (k && g->a[k - 1].rowid == e->rowid &&
        !term_cmp(g->arena.p + g->a[k - 1].toff, g->a[k - 1].tlen, g->arena.p + e->toff, e->tlen))
      continue; /* an older entry of the same (term, rowid) */
    g->a[k++] = *e;
  }
  g->n = k;
  if (keep_del) return;
  k = 0;
  for (int i = 0; i < g->n; i++)
    if (!(g->a[i].del && g->a[i].plen == 0)) g->a[k++] = g->a[i];
  g->n = k;
}

static int gather(Fts5Index *x, const uint8_t *term, int n, int prefix, int by_rowid, Gather *g) {
  Structure s;
  memset(g, 0, sizeof *g);
  int rc = structure_read(x, &s);
  if (rc == SHALE_OK) rc = gather_levels(x, &s, 0, s.nlevel - 1, term, n, prefix, by_rowid, 0, g);
  structure_free(&s);
  return rc;
}

void fts5_list_free(Fts5List *l) {
  shale_free(l->a);
  fts5_pos_free(&l->pos);
  memset(l, 0, sizeof *l);
}

void fts5_list_grow(int *rc, Fts5List *l) {
  if (*rc) return;
  int cap = l->cap ? l->cap * 2 : 16;
  Fts5Doc *a = shale_realloc(l->a, sizeof(Fts5Doc) * (size_t)cap);
  if (!a) {
    *rc = SHALE_NOMEM;
    return;
  }
  l->a = a;
  l->cap = cap;
}

/* Append an entry's poslist bytes to out as (column << 32 | offset)
 * values: detail=column lists columns (offset 0 each), detail=none one
 * pseudo position 0. */
static int entry_decode_append(Fts5Index *x, const uint8_t *p, int n, Fts5Pos *out) {
  int from = out->n, rc = fts5_poslist_decode_append(p, n, out);
  if (rc == SHALE_OK && x->c->detail == FTS5_DETAIL_COLUMN) {
    for (int i = from; i < out->n; i++) {
      if (out->a[i] >> 32) return FTS5_CORRUPT;
      out->a[i] <<= 32;
    }
  }
  return rc;
}

static int entry_decode(Fts5Index *x, const uint8_t *p, int n, Fts5Pos *out) {
  out->n = 0;
  return entry_decode_append(x, p, n, out);
}

/* Sort a[0..n) (a row's positions from several terms, each run sorted)
 * and drop repeats; the new count. */
static int i64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int pos_sort_unique(int64_t *a, int n) {
  if (n > 16) { /* a long row of a prefix's many terms */
    qsort(a, (size_t)n, sizeof *a, i64_cmp);
  } else {
    for (int i = 1; i < n; i++) { /* the usual few positions: insertion sort */
      int64_t v = a[i];
      int j = i;
      while (j > 0 && a[j - 1] > v) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = v;
    }
  }
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!k || a[k - 1] != a[i]) a[k++] = a[i];
  return k;
}

int fts5_index_query(Fts5Index *x, const char *term, int nterm, int prefix, Fts5List *out) {
  memset(out, 0, sizeof *out);
  int rc = fts5_index_flush(x);
  if (rc) return rc;
  Gather g;
  rc = gather(x, (const uint8_t *)term, nterm, prefix, 1, &g);
  if (rc == SHALE_OK) { /* room for every position at once (one byte each at least) */
    int64_t bytes = 0;
    for (int i = 0; i < g.n; i++) bytes += g.a[i].plen;
    if (bytes < INT_MAX / 16) fts5_pos_reserve(&rc, &out->pos, (int)bytes);
    if (rc == SHALE_OK && g.n) { /* and for every row: at most one per entry */
      out->a = shale_malloc(sizeof(Fts5Doc) * (size_t)g.n);
      if (out->a)
        out->cap = g.n;
      else
        rc = SHALE_NOMEM;
    }
  }
  for (int i = 0; rc == SHALE_OK && i < g.n; i++) {
    Ent *e = &g.a[i];
    int more = out->n && out->a[out->n - 1].rowid == e->rowid;
    if (!more) fts5_list_push(&rc, out, e->rowid);
    if (rc) break;
    Fts5Doc *d = &out->a[out->n - 1];
    rc = entry_decode_append(x, g.arena.p + e->poff, e->plen, &out->pos);
    if (rc) break;
    d->n = out->pos.n - d->off;
    if (more) { /* several terms: sorted, unique */
      d->n = pos_sort_unique(out->pos.a + d->off, d->n);
      out->pos.n = d->off + d->n;
    }
  }
  gather_done(x, &g);
  if (rc) fts5_list_free(out);
  return rc;
}

/* ---- merging ----
 * SQLite's scheme, so that both engines leave the structure record alike
 * and either continues a merge the other left in progress:
 *  - A flush appends its segment to level 0 and promotes (promote()).
 *  - Automerge (automerge > 0): the write counter adds the leaves each flush
 *    writes; each time it passes a multiple of MERGE_WORK_UNIT, that many
 *    leaves times the level count of merge work is done (merge_work()) on
 *    the level with a merge in progress, or the one with the most segments
 *    if it holds automerge or more.
 *  - A merge step (merge_step()) reads the level's segments (those that
 *    were its inputs when it started: nmerge while in progress) term by
 *    term into the last segment of the next level; it stops at a term
 *    boundary once its share of leaves is written, trimming each input to
 *    the leaf of its next term (rewritten to start with that term) and
 *    keeping nmerge, so the next step continues where it stopped.
 *  - Crisis merge: while level 0 (then 1, ...) holds crisismerge segments,
 *    it is merged whole.
 *  - 'merge', N does N leaves of work on levels of usermerge segments or
 *    more; 'merge', -N first puts every segment on one level (as SQLite).
 * A merge keeps its delete entries unless its output is the only segment
 * of the last level. */

#define MERGE_WORK_UNIT 64

/* Insert sg into level lvl at position at (levels added as needed). */
static int structure_insert(Structure *s, int lvl, int at, Seg sg) {
  int rc = structure_add(s, lvl, sg);
  if (rc) return rc;
  Level *l = &s->lv[lvl];
  memmove(l->seg + at + 1, l->seg + at, sizeof(Seg) * (size_t)(l->nseg - 1 - at));
  l->seg[at] = sg;
  return SHALE_OK;
}

static int seg_size(const Seg *sg) { return 1 + sg->last - sg->first; }

/* Move to the front of level to the segments of later levels, newest
 * first, while they hold sz leaves or fewer (stopping at a level with a
 * merge in progress; none when level to has one: the next level's last
 * segment is its output). */
static int promote_to(Structure *s, int to, int sz) {
  if (s->lv[to].nmerge) return SHALE_OK;
  for (int il = to + 1; il < s->nlevel; il++) {
    Level *l = &s->lv[il];
    if (l->nmerge) return SHALE_OK;
    while (l->nseg > 0) {
      Seg sg = l->seg[l->nseg - 1];
      if (seg_size(&sg) > sz) return SHALE_OK;
      l->nseg--;
      int rc = structure_insert(s, to, 0, sg);
      if (rc) return rc;
      l = &s->lv[il];
    }
  }
  return SHALE_OK;
}

/* After a segment was appended to level lvl: if the nearest non-empty
 * lower level has a segment at least as big, that level takes it and
 * every later segment no bigger than its biggest; else level lvl takes
 * the later levels' segments no bigger than the new one. */
static int promote(Structure *s, int lvl) {
  if (lvl >= s->nlevel || !s->lv[lvl].nseg) return SHALE_OK;
  int szseg = seg_size(&s->lv[lvl].seg[s->lv[lvl].nseg - 1]);
  int tst = lvl - 1;
  while (tst >= 0 && s->lv[tst].nseg == 0) tst--;
  if (tst >= 0) {
    int szmax = 0;
    for (int i = 0; i < s->lv[tst].nseg; i++)
      if (seg_size(&s->lv[tst].seg[i]) > szmax) szmax = seg_size(&s->lv[tst].seg[i]);
    if (szmax >= szseg) return promote_to(s, tst, szmax);
  }
  return promote_to(s, lvl, szseg);
}

/* Trim the input segment sg that scan sc stopped in: its leaves before
 * the current term's go, and that leaf is rewritten to start with the
 * term (written whole, no rowid pointer), its doclist and what follows. */
static int scan_trim(Fts5Index *x, SegScan *sc, Seg *sg) {
  Fts5Buf leaf = {0}, b = {0};
  int rc = data_read(x, FTS5_SEGMENT_ROWID(sg->segid, sc->tpgno), &leaf);
  if (rc == SHALE_OK) {
    int szleaf = leaf.n >= 4 ? fts5_get_u16(leaf.p + 2) : 0;
    if (szleaf < 4 || szleaf > leaf.n || sc->tdoff > szleaf || sc->tnext > szleaf ||
        (sc->tnext && (sc->tnext < sc->tdoff || sc->tpgidx > leaf.n)))
      rc = FTS5_CORRUPT;
  }
  if (rc == SHALE_OK) {
    int szleaf = fts5_get_u16(leaf.p + 2);
    static const uint8_t zero[4] = {0};
    fts5_buf_append(&rc, &b, zero, 4);
    fts5_buf_varint(&rc, &b, (uint64_t)sc->term.n);
    fts5_buf_append(&rc, &b, sc->term.p, sc->term.n);
    int shift = b.n - sc->tdoff; /* where the old offsets moved */
    fts5_buf_append(&rc, &b, leaf.p + sc->tdoff, szleaf - sc->tdoff);
    if (rc == SHALE_OK) fts5_buf_u16(b.p + 2, b.n);
    fts5_buf_varint(&rc, &b, 4);
    if (sc->tnext) {
      fts5_buf_varint(&rc, &b, (uint64_t)(sc->tnext + shift - 4));
      fts5_buf_append(&rc, &b, leaf.p + sc->tpgidx, leaf.n - sc->tpgidx);
    }
  }
  if (rc == SHALE_OK && sc->tpgno > 1) {
    rc = prep(x, &x->del_range, "DELETE FROM \"%s\".\"%s_data\" WHERE id>=? AND id<?");
    if (rc == SHALE_OK) {
      shale_bind_int64(x->del_range, 1, FTS5_SEGMENT_ROWID(sg->segid, 1));
      shale_bind_int64(x->del_range, 2, FTS5_SEGMENT_ROWID(sg->segid, sc->tpgno));
      rc = shale_step(x->del_range) == SHALE_DONE ? SHALE_OK : shale_errcode(x->c->db);
      shale_reset(x->del_range);
    }
  }
  if (rc == SHALE_OK) rc = data_write(x, FTS5_SEGMENT_ROWID(sg->segid, sc->tpgno), b.p, b.n);
  if (rc == SHALE_OK) sg->first = sc->tpgno;
  fts5_buf_free(&leaf);
  fts5_buf_free(&b);
  return rc;
}

/* Write the resolved entries of one term (g, rowid order) to w. */
static void merge_write_term(Writer *w, Gather *g, int keep_del) {
  if (!g->n) return;
  writer_term(w, g->arena.p + g->a[0].toff, g->a[0].tlen);
  for (int i = 0; i < g->n && w->rc == SHALE_OK; i++) {
    Ent *e = &g->a[i];
    write_entry(w, e->rowid, keep_del && e->del, g->arena.p + e->poff, e->plen);
  }
}

/* SQLite's merge of level lvl of s into the last segment of lvl + 1: a
 * new one, or the one its merge in progress writes. nrem NULL: to the end;
 * else it stops at the first term after *nrem leaves were written (and
 * *nrem is reduced by the leaves written). s is updated, not written. */
static int merge_step(Fts5Index *x, Structure *s, int lvl, int *nrem) {
  int rc = SHALE_OK, ninput, resume = s->lv[lvl].nmerge > 0;
  Writer w;
  if (resume) {
    if (lvl + 1 >= s->nlevel || !s->lv[lvl + 1].nseg) return FTS5_CORRUPT;
    ninput = s->lv[lvl].nmerge;
    Seg *out = &s->lv[lvl + 1].seg[s->lv[lvl + 1].nseg - 1];
    writer_init(&w, x, out->segid);
    w.pgno = w.start = out->last + 1;
  } else {
    int segid = segid_alloc(s);
    if (!segid) return FTS5_CORRUPT;
    Seg sg = {segid, 1, 0};
    if ((rc = structure_add(s, lvl + 1, sg))) return rc;
    ninput = s->lv[lvl].nseg;
    writer_init(&w, x, segid);
  }
  Level *in = &s->lv[lvl], *outl = &s->lv[lvl + 1];
  int keep_del = !(outl->nseg == 1 && s->nlevel == lvl + 2);
  SegScan *sc = shale_malloc(sizeof(SegScan) * (size_t)(ninput ? ninput : 1));
  if (!sc) {
    writer_finish(&w);
    return SHALE_NOMEM;
  }
  memset(sc, 0, sizeof(SegScan) * (size_t)(ninput ? ninput : 1));
  for (int j = 0; j < ninput && rc == SHALE_OK; j++)
    rc = scan_start(&sc[j], x, in->seg[j], (const uint8_t *)"", 0);
  Gather g;
  gather_init(x, &g);
  g.by_rowid = 1;
  int done = 0, *eq = shale_malloc(sizeof(int) * (size_t)(ninput ? ninput : 1));
  if (!eq) rc = SHALE_NOMEM;
  while (rc == SHALE_OK && w.rc == SHALE_OK) {
    int neq = 0; /* the scans on the smallest term: eq[0..neq) */
    for (int j = 0; j < ninput; j++) {
      if (sc[j].eof) continue;
      int c = neq ? term_cmp(sc[j].term.p, sc[j].term.n, sc[eq[0]].term.p, sc[eq[0]].term.n) : -1;
      if (c < 0) neq = 0;
      if (c <= 0) eq[neq++] = j;
    }
    if (!neq) {
      done = 1;
      break;
    }
    if (nrem && w.pgno - w.start > *nrem) break;
    g.n = g.nrun = g.arena.n = 0;
    for (int k = 0; k < neq && rc == SHALE_OK; k++) /* age 0: the newest input */
      rc = gather_doclist(&g, &sc[eq[k]], ninput - 1 - eq[k]);
    if (rc == SHALE_OK) rc = gather_sort(&g, 1);
    if (rc == SHALE_OK) {
      gather_resolve(&g, keep_del);
      merge_write_term(&w, &g, keep_del);
    }
    for (int k = 0; k < neq && rc == SHALE_OK; k++) rc = scan_next(&sc[eq[k]]);
  }
  shale_free(eq);
  gather_done(x, &g);
  int last = writer_finish(&w), wrote = w.pgno - w.start;
  if (rc == SHALE_OK) rc = w.rc;
  in = &s->lv[lvl];
  outl = &s->lv[lvl + 1];
  Seg *out = &outl->seg[outl->nseg - 1];
  if (rc == SHALE_OK && wrote) out->last = last;
  if (rc == SHALE_OK && nrem) *nrem -= wrote;
  if (rc == SHALE_OK && done) { /* the inputs go */
    for (int j = 0; j < ninput && rc == SHALE_OK; j++) rc = seg_delete(x, in->seg[j].segid);
    if (rc == SHALE_OK) {
      memmove(in->seg, in->seg + ninput, sizeof(Seg) * (size_t)(in->nseg - ninput));
      in->nseg -= ninput;
      in->nmerge = 0;
      if (out->last == 0) outl->nseg--; /* nothing was written */
    }
  } else if (rc == SHALE_OK) { /* stopped: each input trimmed to its next term */
    for (int j = 0; j < ninput && rc == SHALE_OK; j++) {
      if (sc[j].eof)
        in->seg[j].first = in->seg[j].last = 0;
      else
        rc = scan_trim(x, &sc[j], &in->seg[j]);
    }
    in->nmerge = ninput;
  }
  for (int j = 0; j < ninput; j++) scan_free(&sc[j]);
  shale_free(sc);
  return rc;
}

/* SQLite's fts5IndexMerge: up to nrem leaves of merge work on the level
 * with a merge in progress (unless a lower level has more segments) or
 * the one with the most segments, at least nmin; *changed set when any. */
static int merge_work(Fts5Index *x, Structure *s, int nrem, int nmin, int *changed) {
  int rc = SHALE_OK;
  while (nrem > 0 && rc == SHALE_OK && s->nlevel > 0) {
    int best = 0, nbest = 0;
    for (int i = 0; i < s->nlevel; i++) {
      Level *l = &s->lv[i];
      if (l->nmerge) {
        if (l->nmerge > nbest) best = i, nbest = l->nmerge;
        break;
      }
      if (l->nseg > nbest) best = i, nbest = l->nseg;
    }
    if (nbest < nmin && s->lv[best].nmerge == 0) break;
    *changed = 1;
    rc = merge_step(x, s, best, &nrem);
    if (rc == SHALE_OK && s->lv[best].nmerge == 0) rc = promote(s, best + 1);
  }
  return rc;
}

/* Write every entry of the segments of levels lo..hi as one new segment:
 * *segid its id (0 when there was nothing to write), *last its last leaf.
 * keep_del: keep delete entries (older segments remain). */
static int merge_levels(Fts5Index *x, const Structure *s, int lo, int hi, int keep_del, int *segid,
                        int *last) {
  Gather g;
  *segid = *last = 0;
  int rc = gather_levels(x, s, lo, hi, (const uint8_t *)"", 0, 1, 0, keep_del, &g);
  int id = rc == SHALE_OK ? segid_alloc(s) : 0;
  if (rc == SHALE_OK && !id) rc = FTS5_CORRUPT;
  if (rc == SHALE_OK && g.n) {
    Writer w;
    writer_init(&w, x, id);
    for (int i = 0; i < g.n && w.rc == SHALE_OK; i++) {
      Ent *e = &g.a[i];
      if (!i ||
          term_cmp(g.arena.p + e->toff, e->tlen, g.arena.p + g.a[i - 1].toff, g.a[i - 1].tlen))
        writer_term(&w, g.arena.p + e->toff, e->tlen);
      write_entry(&w, e->rowid, keep_del && e->del, g.arena.p + e->poff, e->plen);
    }
    *last = writer_finish(&w);
    rc = w.rc;
    if (rc == SHALE_OK) *segid = id;
  }
  gather_done(x, &g);
  return rc;
}

/* Replace every segment by one holding all entries ('optimize'). */
int fts5_index_optimize(Fts5Index *x) {
  int rc = fts5_index_flush(x);
  Structure s;
  if (rc == SHALE_OK) rc = structure_read(x, &s);
  if (rc) return rc;
  if (structure_nseg(&s) <= 1) {
    structure_free(&s);
    return SHALE_OK;
  }
  int segid = 0, last = 0;
  rc = merge_levels(x, &s, 0, s.nlevel - 1, 0, &segid, &last);
  int wrote = segid != 0;
  for (int i = 0; rc == SHALE_OK && i < s.nlevel; i++)
    for (int j = 0; rc == SHALE_OK && j < s.lv[i].nseg; j++)
      rc = seg_delete(x, s.lv[i].seg[j].segid);
  if (rc == SHALE_OK) {
    int nlevel = s.nlevel < 2 ? 2 : s.nlevel;
    uint32_t cookie = s.cookie;
    uint64_t counter = s.counter;
    structure_free(&s);
    s.cookie = cookie;
    s.counter = counter;
    if (wrote) rc = structure_push_segment(x, &s, nlevel - 1, segid, last);
    if (rc == SHALE_OK) rc = structure_write(x, &s);
  }
  structure_free(&s);
  return rc;
}

/* 'merge', N: N leaves of work on levels of usermerge segments or more;
 * N < 0: -N leaves, every segment first put on one new last level (unless
 * they are all on one level, or all but one are a merge's inputs) and any
 * two merged. */
int fts5_index_merge(Fts5Index *x, int n) {
  int rc = fts5_index_flush(x), changed = 0, nmin = x->c->usermerge;
  Structure s;
  if (rc == SHALE_OK) rc = structure_read(x, &s);
  if (rc) return rc;
  if (n < 0) {
    int nseg = structure_nseg(&s), one = 0;
    for (int i = 0; i < s.nlevel; i++)
      if (s.lv[i].nseg == nseg || (s.lv[i].nseg == nseg - 1 && s.lv[i].nmerge == s.lv[i].nseg))
        one = 1;
    if (nseg >= 2 && !one) {
      int to = s.nlevel < 64 ? s.nlevel : 63;
      for (int i = s.nlevel - 1; rc == SHALE_OK && i >= 0; i--) /* oldest first */
        for (int j = 0; rc == SHALE_OK && j < s.lv[i].nseg; j++)
          if (i != to) rc = structure_add(&s, to, s.lv[i].seg[j]);
      for (int i = 0; rc == SHALE_OK && i < s.nlevel; i++)
        if (i != to) s.lv[i].nseg = s.lv[i].nmerge = 0;
    }
    nmin = 2;
    n = n == INT_MIN ? INT_MAX : -n;
  }
  if (rc == SHALE_OK) rc = merge_work(x, &s, n, nmin, &changed);
  if (rc == SHALE_OK && changed) rc = structure_write(x, &s);
  structure_free(&s);
  return rc;
}

/* After a flush wrote a segment of nleaf leaves to level 0: promotion,
 * automerge work and crisis merges, as SQLite; the structure written. */
static int after_flush(Fts5Index *x, Structure *s, int nleaf) {
  int am = x->c->automerge, cm = x->c->crisismerge, changed = 1;
  if (am == 1 || am < 0) am = 4;
  if (cm <= 1) cm = 16;
  if (cm >= 2000) cm = 1999;
  int rc = promote(s, 0);
  if (rc == SHALE_OK && am > 0) {
    uint64_t w0 = s->counter;
    s->counter += (uint64_t)nleaf;
    int nwork = (int)(s->counter / MERGE_WORK_UNIT - w0 / MERGE_WORK_UNIT);
    if (nwork) rc = merge_work(x, s, MERGE_WORK_UNIT * nwork * s->nlevel, am, &changed);
  }
  for (int i = 0; rc == SHALE_OK && i < s->nlevel && s->lv[i].nseg >= cm; i++) {
    rc = merge_step(x, s, i, NULL);
    if (rc == SHALE_OK) rc = promote(s, i + 1);
  }
  if (rc == SHALE_OK) rc = structure_write(x, s);
  return rc;
}

int fts5_index_delete_all(Fts5Index *x) {
  pending_clear(x);
  Structure s;
  int rc = structure_read(x, &s);
  if (rc) return rc;
  for (int i = 0; rc == SHALE_OK && i < s.nlevel; i++)
    for (int j = 0; rc == SHALE_OK && j < s.lv[i].nseg; j++)
      rc = seg_delete(x, s.lv[i].seg[j].segid);
  uint32_t cookie = s.cookie;
  structure_free(&s);
  s.cookie = cookie;
  if (rc == SHALE_OK) rc = structure_write(x, &s);
  return rc;
}

uint64_t fts5_entry_checksum(int64_t rowid, int col, int pos, int idx, const char *t, int n) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)rowid;
  h = (h ^ (uint64_t)col) * 1099511628211ull;
  h = (h ^ (uint64_t)pos) * 1099511628211ull;
  h = (h ^ (uint64_t)idx) * 1099511628211ull;
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)t[i]) * 1099511628211ull;
  return h * 0x9e3779b97f4a7c15ull;
}

int fts5_index_entries(Fts5Index *x, void *ctx, Fts5EntryCb cb) {
  int rc = fts5_index_flush(x);
  if (rc) return rc;
  Gather g;
  rc = gather(x, (const uint8_t *)"0", 1, 1, 0, &g);
  Fts5Pos pos = {0};
  for (int i = 0; rc == SHALE_OK && i < g.n; i++) {
    Ent *e = &g.a[i];
    rc = entry_decode(x, g.arena.p + e->poff, e->plen, &pos);
    if (rc == SHALE_OK)
      rc = cb(ctx, (const char *)g.arena.p + e->toff + 1, e->tlen - 1, e->rowid, &pos);
  }
  fts5_pos_free(&pos);
  gather_done(x, &g);
  return rc;
}

int fts5_index_checksum(Fts5Index *x, uint64_t *out) {
  *out = 0;
  int rc = fts5_index_flush(x);
  if (rc) return rc;
  Gather g;
  rc = gather(x, (const uint8_t *)"", 0, 1, 0, &g);
  Fts5Pos pos = {0};
  for (int i = 0; rc == SHALE_OK && i < g.n; i++) {
    Ent *e = &g.a[i];
    if (e->tlen < 1) {
      rc = FTS5_CORRUPT;
      break;
    }
    rc = entry_decode(x, g.arena.p + e->poff, e->plen, &pos);
    const char *t = (const char *)g.arena.p + e->toff;
    for (int j = 0; rc == SHALE_OK && j < pos.n; j++)
      *out += fts5_entry_checksum(e->rowid, (int)(pos.a[j] >> 32), (int)(pos.a[j] & 0xffffffff),
                                  t[0] - '0', t + 1, e->tlen - 1);
  }
  fts5_pos_free(&pos);
  gather_done(x, &g);
  return rc;
}
