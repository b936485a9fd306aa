/*
 * fts3_write.c -- writing SQLite's FTS3/FTS4 index (format in fts3_int.h):
 * the terms of the rows a transaction inserts and deletes are held in
 * memory and written at xSync as one new level-0 segment, as SQLite writes
 * its pending terms; a level holding 16 segments is first merged into one
 * segment of the next level (SQLite's FTS3_MERGE_COUNT), and 'optimize'
 * merges every segment into one.
 *
 * A segment's terms go into leaves of up to 4061 bytes (SQLite's node size
 * for 4096-byte pages, a term that does not fit starting the next leaf);
 * one leaf is stored as the %_segdir root, more go to %_segments with a
 * root interior node (height 1) holding each later leaf's first term.
 * end_block is written as SQLite does: "END NBYTES", NBYTES the size of the
 * leaves.
 * With order=desc a doclist lists its documents in descending docid order
 * (the first absolute, then each the previous minus it), as SQLite's
 * bDescIdx. Levels here are those of one index (t->lvl + level in %_segdir: the
 * language's and prefix index's, fts3_int.h); t->plen set writes a prefix
 * index (each token of at least plen bytes as its first plen bytes).
 *
 * Invariants:
 *  1. For each (term, docid) only the entries of the latest operation (or
 *     the newest segment, when merging) are written; an operation that
 *     only deleted writes the docid with no positions, which shadows older
 *     segments, dropped when the output is the oldest level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

#define NODE_SIZE 4061
#define MERGE_COUNT 16

typedef struct WEnt {
  int term; /* into Fts3Pending.terms (a rank once sorted) */
  int seq;  /* operation or segment number: higher is newer */
  int64_t docid;
  int64_t pos; /* column << 32 | offset, or -1: deleted */
} WEnt;

typedef struct WTerm {
  char *z;
  int n;
} WTerm;

struct Fts3Pending {
  WEnt *e;
  int n, cap;
  WTerm *terms;
  int nterms, capterms;
  int *hash; /* term number + 1 per slot, 0 free */
  int hcap;
  int seq;
};

void fts3_pending_free(Fts3Pending *p) {
  if (!p) return;
  for (int i = 0; i < p->nterms; i++) shale_free(p->terms[i].z);
  shale_free(p->terms);
  shale_free(p->hash);
  shale_free(p->e);
  shale_free(p);
}

static uint32_t term_hash(const char *z, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)z[i]) * 16777619u;
  return h;
}

static int rehash(Fts3Pending *p) {
  int cap = p->hcap ? p->hcap * 2 : 256;
  int *h = shale_malloc(sizeof(int) * (size_t)cap);
  if (!h) return SHALE_NOMEM;
  memset(h, 0, sizeof(int) * (size_t)cap);
  for (int i = 0; i < p->nterms; i++) {
    uint32_t k = term_hash(p->terms[i].z, p->terms[i].n) & (uint32_t)(cap - 1);
    while (h[k]) k = (k + 1) & (uint32_t)(cap - 1);
    h[k] = i + 1;
  }
  shale_free(p->hash);
  p->hash = h;
  p->hcap = cap;
  return SHALE_OK;
}

/* The number of term z[0..n) in p->terms, added if new; -1 out of memory. */
static int intern(Fts3Pending *p, const char *z, int n) {
  if ((p->nterms + 1) * 2 > p->hcap && rehash(p)) return -1;
  uint32_t k = term_hash(z, n) & (uint32_t)(p->hcap - 1);
  for (; p->hash[k]; k = (k + 1) & (uint32_t)(p->hcap - 1)) {
    WTerm *t = &p->terms[p->hash[k] - 1];
    if (t->n == n && !memcmp(t->z, z, (size_t)n)) return p->hash[k] - 1;
  }
  if (p->nterms >= p->capterms) {
    int cap = p->capterms ? p->capterms * 2 : 64;
    WTerm *t = shale_realloc(p->terms, sizeof(WTerm) * (size_t)cap);
    if (!t) return -1;
    p->terms = t;
    p->capterms = cap;
  }
  char *c = shale_malloc((size_t)n + 1);
  if (!c) return -1;
  memcpy(c, z, (size_t)n);
  c[n] = 0;
  p->terms[p->nterms].z = c;
  p->terms[p->nterms].n = n;
  p->hash[k] = ++p->nterms;
  return p->nterms - 1;
}

static int add_ent(Fts3Pending *p, int term, int seq, int64_t docid, int64_t pos) {
  if (p->n >= p->cap) {
    int cap = p->cap ? p->cap * 2 : 256;
    WEnt *e = shale_realloc(p->e, sizeof(WEnt) * (size_t)cap);
    if (!e) return SHALE_NOMEM;
    p->e = e;
    p->cap = cap;
  }
  p->e[p->n++] = (WEnt){term, seq, docid, pos};
  return SHALE_OK;
}

static Fts3Pending *pending_new(void) {
  Fts3Pending *p = shale_malloc(sizeof *p);
  if (p) memset(p, 0, sizeof *p);
  return p;
}

typedef struct TokCtx {
  Fts3Pending *p;
  int seq, col, del, ntok;
  int64_t docid;
  int plen; /* a prefix index's length: shorter tokens skipped, longer cut */
} TokCtx;

static int tok_cb(void *ctx, const char *tok, int ntok, int start, int end, int pos) {
  TokCtx *c = ctx;
  (void)start;
  (void)end;
  if (c->plen && ntok < c->plen) return SHALE_OK;
  if (c->plen) ntok = c->plen;
  int id = intern(c->p, tok, ntok);
  if (id < 0) return SHALE_NOMEM;
  c->ntok++;
  return add_ent(c->p, id, c->seq, c->docid, c->del ? -1 : (int64_t)c->col << 32 | pos);
}

int fts3_write_row(Fts3Table *t, int64_t docid, const char *const *text, const int *len,
                   int is_delete, int *ntok) {
  if (!t->pend && !(t->pend = pending_new())) return SHALE_NOMEM;
  TokCtx c = {t->pend, ++t->pend->seq, 0, is_delete, 0, docid, t->plen};
  int rc = SHALE_OK;
  if (is_delete) rc = add_ent(t->pend, -1, c.seq, docid, -1); /* marks the operation */
  for (int i = 0; rc == SHALE_OK && i < t->ncol; i++) {
    c.col = i;
    c.ntok = 0;
    if (text[i]) rc = fts3_tokenize(&t->tok, text[i], len[i], &c, tok_cb);
    if (ntok) ntok[i] = c.ntok;
  }
  return rc;
}

void fts3_write_discard(Fts3Table *t) {
  fts3_pending_free(t->pend);
  t->pend = NULL;
}

/* ---- building a segment ---- */

static int cmp_term(const void *a, const void *b) {
  const WTerm *x = *(const WTerm *const *)a, *y = *(const WTerm *const *)b;
  int c = memcmp(x->z, y->z, (size_t)(x->n < y->n ? x->n : y->n));
  return c ? c : x->n - y->n;
}

static int cmp_ent(const void *a, const void *b) {
  const WEnt *x = a, *y = b;
  if (x->term != y->term) return x->term - y->term;
  if (x->docid != y->docid) return x->docid < y->docid ? -1 : 1;
  if (x->seq != y->seq) return y->seq - x->seq;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct Buf {
  uint8_t *p;
  int n, cap;
} Buf;

static int buf_room(Buf *b, int more) {
  if (b->n + more <= b->cap) return SHALE_OK;
  int cap = (b->n + more) * 2 + 64;
  uint8_t *p = shale_realloc(b->p, (size_t)cap);
  if (!p) return SHALE_NOMEM;
  b->p = p;
  b->cap = cap;
  return SHALE_OK;
}
static int buf_varint(Buf *b, uint64_t v) {
  if (buf_room(b, 10)) return SHALE_NOMEM;
  b->n += fts3_put_varint(b->p + b->n, v);
  return SHALE_OK;
}
static int buf_bytes(Buf *b, const void *z, int n) {
  if (buf_room(b, n)) return SHALE_NOMEM;
  if (n) memcpy(b->p + b->n, z, (size_t)n);
  b->n += n;
  return SHALE_OK;
}

/* The segment writer: leaves kept until the end decides root or blocks. */
typedef struct SegW {
  Fts3Table *t;
  Buf leaf;
  Buf *leaves;  /* finished leaves */
  WTerm *first; /* each finished leaf's first term (borrowed) */
  int nleaves, capleaves;
  const WTerm *prev; /* the leaf's previous term */
  const WTerm *leaf_first;
  int64_t nbytes;
} SegW;

static int finish_leaf(SegW *w) {
  if (w->nleaves >= w->capleaves) {
    int cap = w->capleaves ? w->capleaves * 2 : 8;
    Buf *l = shale_realloc(w->leaves, sizeof(Buf) * (size_t)cap);
    if (!l) return SHALE_NOMEM;
    w->leaves = l;
    WTerm *f = shale_realloc(w->first, sizeof(WTerm) * (size_t)cap);
    if (!f) return SHALE_NOMEM;
    w->first = f;
    w->capleaves = cap;
  }
  w->nbytes += w->leaf.n;
  w->leaves[w->nleaves] = w->leaf;
  w->first[w->nleaves++] = *w->leaf_first;
  memset(&w->leaf, 0, sizeof w->leaf);
  w->prev = NULL;
  return SHALE_OK;
}

static int shared_prefix(const WTerm *a, const WTerm *b) {
  int k = 0;
  while (k < a->n && k < b->n && a->z[k] == b->z[k]) k++;
  return k;
}

static int seg_add(SegW *w, const WTerm *term, const Buf *doclist) {
  int pre = w->prev ? shared_prefix(w->prev, term) : 0;
  uint8_t tmp[10];
  int need = (w->prev ? fts3_put_varint(tmp, (uint64_t)pre) : 0) +
             fts3_put_varint(tmp, (uint64_t)(term->n - pre)) + term->n - pre +
             fts3_put_varint(tmp, (uint64_t)doclist->n) + doclist->n;
  int rc = SHALE_OK;
  if (w->prev && w->leaf.n + need > NODE_SIZE) {
    rc = finish_leaf(w);
    pre = 0;
  }
  if (rc == SHALE_OK && !w->leaf.n) {
    rc = buf_varint(&w->leaf, 0); /* height 0 */
    w->leaf_first = term;
  }
  if (rc == SHALE_OK && w->prev) rc = buf_varint(&w->leaf, (uint64_t)pre);
  if (rc == SHALE_OK) rc = buf_varint(&w->leaf, (uint64_t)(term->n - pre));
  if (rc == SHALE_OK) rc = buf_bytes(&w->leaf, term->z + pre, term->n - pre);
  if (rc == SHALE_OK) rc = buf_varint(&w->leaf, (uint64_t)doclist->n);
  if (rc == SHALE_OK) rc = buf_bytes(&w->leaf, doclist->p, doclist->n);
  w->prev = term;
  return rc;
}

static int exec_stmt(Fts3Table *t, const char *fmt, int64_t a, int64_t b, const Buf *blob,
                     const char *text, int64_t c, int64_t *out) {
  char *sql = util_mprintf(fmt, t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(t->db, sql, -1, &st, NULL);
  shale_free(sql);
  if (rc) return rc;
  int np = shale_bind_parameter_count(st);
  if (np >= 1) shale_bind_int64(st, 1, a);
  if (np >= 2) shale_bind_int64(st, 2, b);
  if (np >= 3) shale_bind_int64(st, 3, c);
  if (np >= 4 && text) shale_bind_text(st, 4, text, -1, SHALE_TRANSIENT);
  if (np >= 5 && blob) shale_bind_blob(st, 5, blob->p, blob->n, SHALE_TRANSIENT);
  rc = shale_step(st);
  if (rc == SHALE_ROW) {
    if (out) *out = shale_column_type(st, 0) == SHALE_NULL ? -1 : shale_column_int64(st, 0);
    rc = SHALE_OK;
  } else if (rc == SHALE_DONE) {
    if (out) *out = -1;
    rc = SHALE_OK;
  }
  int rc2 = shale_finalize(st);
  return rc ? rc : rc2;
}

/* Write the leaves as segment (level, idx). */
static int seg_finish(SegW *w, int level, int idx) {
  Fts3Table *t = w->t;
  int rc = w->leaf.n ? finish_leaf(w) : SHALE_OK;
  if (rc || !w->nleaves) return rc;
  char end[48];
  if (w->nleaves == 1) {
    snprintf(end, sizeof end, "0 %lld", (long long)w->nbytes);
    return exec_stmt(t, "INSERT INTO \"%s\".'%s_segdir' VALUES(?1, ?2, 0, 0, ?4, ?5)",
                     t->lvl + level, idx, &w->leaves[0], end, 0, NULL);
  }
  int64_t base;
  rc = exec_stmt(t, "SELECT max(blockid) FROM \"%s\".'%s_segments'", 0, 0, NULL, NULL, 0, &base);
  base = base < 0 ? 1 : base + 1;
  for (int i = 0; rc == SHALE_OK && i < w->nleaves; i++)
    rc = exec_stmt(t, "INSERT INTO \"%s\".'%s_segments'(blockid, block) VALUES(?1, ?5)", base + i,
                   0, &w->leaves[i], NULL, 0, NULL);
  Buf root = {0};
  if (rc == SHALE_OK) rc = buf_varint(&root, 1);
  if (rc == SHALE_OK) rc = buf_varint(&root, (uint64_t)base);
  for (int i = 1; rc == SHALE_OK && i < w->nleaves; i++) {
    int pre = i > 1 ? shared_prefix(&w->first[i - 1], &w->first[i]) : 0;
    if (i > 1) rc = buf_varint(&root, (uint64_t)pre);
    if (rc == SHALE_OK) rc = buf_varint(&root, (uint64_t)(w->first[i].n - pre));
    if (rc == SHALE_OK) rc = buf_bytes(&root, w->first[i].z + pre, w->first[i].n - pre);
  }
  int64_t last = base + w->nleaves - 1;
  snprintf(end, sizeof end, "%lld %lld", (long long)last, (long long)w->nbytes);
  if (rc == SHALE_OK)
    rc = exec_stmt(t,
                   "INSERT INTO \"%s\".'%s_segdir' VALUES(?1, ?2, ?3, CAST(?4 AS INTEGER), ?4, ?5)",
                   t->lvl + level, idx, &root, end, base, NULL);
  shale_free(root.p);
  return rc;
}

static void segw_free(SegW *w) {
  for (int i = 0; i < w->nleaves; i++) shale_free(w->leaves[i].p);
  shale_free(w->leaves);
  shale_free(w->first);
  shale_free(w->leaf.p);
}

/* Write p's entries as segment (level, idx); drop: leave deletions out. */
static int write_segment(Fts3Table *t, Fts3Pending *p, int level, int idx, int drop) {
  int rc = SHALE_OK;
  WTerm **order = shale_malloc(sizeof(WTerm *) * (size_t)(p->nterms + 1));
  int *rank = shale_malloc(sizeof(int) * (size_t)(p->nterms + 1));
  if (!order || !rank) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < p->nterms; i++) order[i] = &p->terms[i];
  if (rc == SHALE_OK && p->nterms) qsort(order, (size_t)p->nterms, sizeof(WTerm *), cmp_term);
  for (int i = 0; rc == SHALE_OK && i < p->nterms; i++) rank[order[i] - p->terms] = i;
  int k = 0;
  for (int i = 0; rc == SHALE_OK && i < p->n; i++)
    if (p->e[i].term >= 0) {
      p->e[k] = p->e[i];
      p->e[k++].term = rank[p->e[i].term];
      if (t->desc) /* order=desc: sorted by -docid, written as SQLite's descending deltas */
        p->e[k - 1].docid = (int64_t)(0 - (uint64_t)p->e[k - 1].docid);
    }
  if (rc == SHALE_OK) p->n = k;
  if (rc == SHALE_OK && p->n) qsort(p->e, (size_t)p->n, sizeof(WEnt), cmp_ent);
  SegW w;
  memset(&w, 0, sizeof w);
  w.t = t;
  Buf dl = {0};
  for (int i = 0; rc == SHALE_OK && i < p->n;) {
    int term = p->e[i].term;
    dl.n = 0;
    int64_t prev = 0;
    int first = 1;
    while (rc == SHALE_OK && i < p->n && p->e[i].term == term) {
      int64_t docid = p->e[i].docid;
      int seq = p->e[i].seq, j = i;
      while (j < p->n && p->e[j].term == term && p->e[j].docid == docid) j++;
      int live = 0;
      for (int q = i; q < j && p->e[q].seq == seq; q++) live |= p->e[q].pos >= 0;
      if (live || !drop) {
        uint64_t abs = t->desc ? 0 - (uint64_t)docid : (uint64_t)docid;
        rc = buf_varint(&dl, first ? abs : (uint64_t)docid - (uint64_t)prev);
        first = 0;
        prev = docid;
        int64_t col = 0, last = 0, lastpos = -1;
        for (int q = i; rc == SHALE_OK && q < j && p->e[q].seq == seq; q++) {
          int64_t pos = p->e[q].pos;
          if (pos < 0 || pos == lastpos) continue;
          lastpos = pos;
          if ((pos >> 32) != col) {
            col = pos >> 32;
            last = 0;
            rc = buf_varint(&dl, 1);
            if (rc == SHALE_OK) rc = buf_varint(&dl, (uint64_t)col);
          }
          int64_t off = pos & 0xffffffff;
          if (rc == SHALE_OK) rc = buf_varint(&dl, (uint64_t)(off - last + 2));
          last = off;
        }
        if (rc == SHALE_OK) rc = buf_varint(&dl, 0);
      }
      i = j;
    }
    if (rc == SHALE_OK && dl.n) rc = seg_add(&w, order[term], &dl);
  }
  if (rc == SHALE_OK) rc = seg_finish(&w, level, idx);
  segw_free(&w);
  shale_free(dl.p);
  shale_free(order);
  shale_free(rank);
  return rc;
}

/* ---- levels and merges ---- */

typedef struct MergeCtx {
  Fts3Pending *p;
  int rc;
} MergeCtx;

static int merge_cb(void *ctx, const char *term, int nterm, int64_t docid, int seg,
                    const int64_t *pos, int npos) {
  MergeCtx *m = ctx;
  int id = intern(m->p, term, nterm);
  if (id < 0) return SHALE_NOMEM;
  if (!npos) return add_ent(m->p, id, seg, docid, -1);
  for (int i = 0; i < npos; i++) {
    int rc = add_ent(m->p, id, seg, docid, pos[i]);
    if (rc) return rc;
  }
  return SHALE_OK;
}

static int alloc_idx(Fts3Table *t, int level, int *idx);

/* Merge the segments of level (every level when level < 0) into one new
 * segment: at level + 1, or at the highest level for all. */
static int merge_level(Fts3Table *t, int level) {
  int64_t maxlevel;
  int rc = exec_stmt(
      t, "SELECT max(level) - ?1 FROM \"%s\".'%s_segdir' WHERE level BETWEEN ?1 AND ?1 + 1023",
      t->lvl, 0, NULL, NULL, 0, &maxlevel);
  if (rc) return rc;
  Fts3Pending *p = pending_new();
  if (!p) return SHALE_NOMEM;
  MergeCtx m = {p, SHALE_OK};
  rc = fts3_index_scan_level(t, level, &m, merge_cb);
  if (rc == SHALE_OK) {
    const char *sel = level < 0 ? "" : " WHERE level = ?1";
    char *fmt = util_mprintf(
        "DELETE FROM \"%%s\".'%%s_segments' WHERE blockid IN (SELECT b.blockid "
        "FROM \"%%s\".'%%s_segments' b, \"%%s\".'%%s_segdir' d WHERE b.blockid "
        "BETWEEN d.start_block AND CAST(d.end_block AS INTEGER) AND d.start_block > 0%s)",
        level < 0 ? " AND d.level BETWEEN ?1 AND ?1 + 1023" : " AND d.level = ?1");
    (void)sel;
    rc = fmt ? SHALE_OK : SHALE_NOMEM;
    if (rc == SHALE_OK) {
      char *sql = util_mprintf(fmt, t->zdb, t->zname, t->zdb, t->zname, t->zdb, t->zname);
      shale_free(fmt);
      if (!sql) rc = SHALE_NOMEM;
      shale_stmt *st = NULL;
      if (rc == SHALE_OK) rc = shale_prepare_v2(t->db, sql, -1, &st, NULL);
      shale_free(sql);
      if (rc == SHALE_OK) {
        shale_bind_int64(st, 1, t->lvl + (level < 0 ? 0 : level));
        rc = shale_step(st) == SHALE_DONE ? SHALE_OK : SHALE_ERROR;
        int rc2 = shale_finalize(st);
        if (rc == SHALE_OK) rc = rc2;
      }
    }
  }
  if (rc == SHALE_OK)
    rc = level < 0
             ? exec_stmt(t, "DELETE FROM \"%s\".'%s_segdir' WHERE level BETWEEN ?1 AND ?1 + 1023",
                         t->lvl, 0, NULL, NULL, 0, NULL)
             : exec_stmt(t, "DELETE FROM \"%s\".'%s_segdir' WHERE level = ?1", t->lvl + level, 0,
                         NULL, NULL, 0, NULL);
  int out = level < 0 ? (int)(maxlevel < 0 ? 0 : maxlevel) : level + 1, idx = 0;
  if (rc == SHALE_OK && level >= 0) rc = alloc_idx(t, out, &idx);
  if (rc == SHALE_OK) rc = write_segment(t, p, out, idx, level < 0 || out > maxlevel);
  fts3_pending_free(p);
  return rc;
}

/* The next free idx at level, merging the level first when it is full. */
static int alloc_idx(Fts3Table *t, int level, int *idx) {
  int64_t n;
  int rc = exec_stmt(t, "SELECT max(idx) FROM \"%s\".'%s_segdir' WHERE level = ?1", t->lvl + level,
                     0, NULL, NULL, 0, &n);
  if (rc) return rc;
  if (n + 1 >= MERGE_COUNT) {
    rc = merge_level(t, level);
    n = -1;
  }
  *idx = (int)(n + 1);
  return rc;
}

int fts3_write_flush(Fts3Table *t) {
  if (!t->pend || !t->pend->n) {
    fts3_write_discard(t);
    return SHALE_OK;
  }
  int idx;
  int rc = alloc_idx(t, 0, &idx);
  if (rc == SHALE_OK) rc = write_segment(t, t->pend, 0, idx, 0);
  fts3_write_discard(t);
  return rc;
}

int fts3_write_optimize(Fts3Table *t) {
  int rc = fts3_write_flush(t);
  return rc ? rc : merge_level(t, -1);
}
