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
 * A savepoint notes how many pending entries there were, how many of them
 * a command had written to segments already, and the totals; rolling back
 * to it truncates the entries and takes back the totals (the pager takes
 * back the shadow tables). The commands: 'rebuild' drops every segment and
 * indexes %_content again; 'integrity-check' compares a checksum of every
 * (term, docid, column, position) of the index with one of the content
 * tokenized again; 'merge=X,Y' merges whole levels holding at least Y
 * segments (fullest first) while X leaves of work remain, where SQLite
 * merges incrementally; 'automerge=N' stores N in %_stat row 2 as SQLite
 * does (0 off, 1 or over 16 taken as 8) and then, at a commit that wrote
 * more than 4 leaves, levels of N segments or more are merged.
 *
 * Invariants:
 *  1. For each (term, docid) only the entries of the latest operation (or
 *     the newest segment, when merging) are written; an operation that
 *     only deleted writes the docid with no positions, which shadows older
 *     segments, dropped when the output is the oldest level.
 *  2. Pending entries are only appended within a transaction; a write to
 *     segments before the commit (a command) moves the watermark, so a
 *     savepoint's (entries, watermark) pair restores exactly what was
 *     pending when it began.
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

/* The state a savepoint returns to (invariant 2). */
typedef struct WSave {
  int n, written, seq;
  int stat_loaded;
  int64_t *stat; /* a copy of Fts3Table.stat when loaded */
} WSave;

struct Fts3Pending {
  WEnt *e;
  int n, cap;
  int written; /* e[0 .. written) are in segments already (or dropped by 'rebuild') */
  WSave *sp;   /* sp[i]: savepoint i, nsp of them */
  int nsp, capsp;
  WTerm *terms;
  int nterms, capterms;
  int *hash; /* term number + 1 per slot, 0 free */
  int hcap;
  int seq;
  int leaves; /* leaves written by this transaction's flushes (SQLite's nLeafAdd) */
};

static void sp_drop(Fts3Pending *p, int from) {
  for (int i = from; i < p->nsp; i++) shale_free(p->sp[i].stat);
  if (from < p->nsp) p->nsp = from;
}

void fts3_pending_free(Fts3Pending *p) {
  if (!p) return;
  sp_drop(p, 0);
  shale_free(p->sp);
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
static int write_segment(Fts3Table *t, Fts3Pending *p, int level, int idx, int drop, int *leaves) {
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
  if (leaves) *leaves = w.nleaves;
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
static int merge_level(Fts3Table *t, int level, int *leaves) {
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
  if (rc == SHALE_OK) rc = write_segment(t, p, out, idx, level < 0 || out > maxlevel, leaves);
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
    rc = merge_level(t, level, NULL);
    n = -1;
  }
  *idx = (int)(n + 1);
  return rc;
}

/* Write the entries past the watermark as a new level-0 segment, from a
 * copy (write_segment reorders what it is given). */
static int flush_pending(Fts3Table *t, int *leaves) {
  Fts3Pending *p = t->pend;
  *leaves = 0;
  if (!p || p->written >= p->n) return SHALE_OK;
  Fts3Pending view = *p;
  view.n = view.cap = p->n - p->written;
  view.e = shale_malloc(sizeof(WEnt) * (size_t)view.n);
  if (!view.e) return SHALE_NOMEM;
  memcpy(view.e, p->e + p->written, sizeof(WEnt) * (size_t)view.n);
  int idx;
  int rc = alloc_idx(t, 0, &idx);
  if (rc == SHALE_OK) rc = write_segment(t, &view, 0, idx, 0, leaves);
  shale_free(view.e);
  if (rc == SHALE_OK) p->written = p->n;
  p->leaves += *leaves;
  return rc;
}

static int automerge(Fts3Table *t, int leaves);

int fts3_write_flush(Fts3Table *t) {
  int leaves;
  int rc = flush_pending(t, &leaves);
  if (rc == SHALE_OK && t->pend) rc = automerge(t, t->pend->leaves);
  if (t->pend && !t->pend->nsp) fts3_write_discard(t);
  return rc;
}

int fts3_write_optimize(Fts3Table *t) {
  int rc = fts3_write_flush(t);
  return rc ? rc : merge_level(t, -1, NULL);
}

/* ---- savepoints (invariant 2) ---- */

int fts3_write_savepoint(Fts3Table *t, int n) {
  if (n < 0) return SHALE_OK;
  if (!t->pend && !(t->pend = pending_new())) return SHALE_NOMEM;
  Fts3Pending *p = t->pend;
  sp_drop(p, n);
  if (n >= p->capsp) {
    int cap = n + 8;
    WSave *sp = shale_realloc(p->sp, sizeof(WSave) * (size_t)cap);
    if (!sp) return SHALE_NOMEM;
    p->sp = sp;
    p->capsp = cap;
  }
  for (int i = p->nsp; i <= n; i++) { /* skipped numbers note the same state */
    WSave *w = &p->sp[i];
    memset(w, 0, sizeof *w);
    w->n = p->n;
    w->written = p->written;
    w->seq = p->seq;
    w->stat_loaded = t->stat_loaded;
    if (t->stat_loaded && t->stat) {
      size_t bytes = sizeof(int64_t) * (size_t)(t->ncol + 2);
      if (!(w->stat = shale_malloc(bytes))) {
        p->nsp = i;
        return SHALE_NOMEM;
      }
      memcpy(w->stat, t->stat, bytes);
    }
    p->nsp = i + 1;
  }
  return SHALE_OK;
}

int fts3_write_release(Fts3Table *t, int n) {
  if (t->pend) sp_drop(t->pend, n < 0 ? 0 : n);
  return SHALE_OK;
}

int fts3_write_rollback_to(Fts3Table *t, int n) {
  Fts3Pending *p = t->pend;
  if (!p || n < 0) return SHALE_OK;
  if (n >= p->nsp) { /* none noted: the table joined the transaction after it began */
    if (!p->nsp) {
      p->n = p->written = 0;
      t->stat_loaded = 0;
    }
    return SHALE_OK;
  }
  WSave *w = &p->sp[n];
  p->n = w->n;
  p->written = w->written;
  p->seq = w->seq;
  t->stat_loaded = w->stat_loaded;
  if (w->stat_loaded && w->stat) memcpy(t->stat, w->stat, sizeof(int64_t) * (size_t)(t->ncol + 2));
  sp_drop(p, n + 1);
  return SHALE_OK;
}

/* ---- special commands ---- */

/* SQLite's integer reading of a command's argument: decimal digits. */
static int get_int(const char **z) {
  int64_t v = 0;
  while (**z >= '0' && **z <= '9') {
    if (v < 0x7fffffff) v = v * 10 + (**z - '0');
    (*z)++;
  }
  return v > 0x7fffffff ? 0x7fffffff : (int)v;
}

static int sql_error(Fts3Table *t) {
  (void)t;
  return SHALE_ERROR; /* the connection says "SQL logic error" */
}

/* %_stat for an FTS3 table that has none (SQLite creates it for the
 * merge commands). */
static int ensure_stat(Fts3Table *t) {
  return exec_stmt(
      t, "CREATE TABLE IF NOT EXISTS \"%s\".'%s_stat'(id INTEGER PRIMARY KEY, value BLOB)", 0, 0,
      NULL, NULL, 0, NULL);
}

static int has_stat(Fts3Table *t, int *yes) {
  int64_t n;
  int rc = exec_stmt(t,
                     "SELECT count(*) FROM \"%s\".sqlite_master WHERE type = 'table' AND name = "
                     "'%s_stat'",
                     0, 0, NULL, NULL, 0, &n);
  *yes = rc == SHALE_OK && n > 0;
  return rc;
}

/* Merge whole levels, the lowest holding at least nmin segments first,
 * while budget leaves of work remain (SQLite's incremental merge, done
 * at once per level). */
static int merge_levels(Fts3Table *t, int budget, int nmin) {
  int rc = SHALE_OK;
  while (rc == SHALE_OK && budget > 0) {
    int64_t level;
    char *sql = util_mprintf(
        "SELECT level FROM \"%%s\".'%%s_segdir' GROUP BY level HAVING "
        "count(*) >= %d ORDER BY level LIMIT 1",
        nmin);
    if (!sql) return SHALE_NOMEM;
    rc = exec_stmt(t, sql, 0, 0, NULL, NULL, 0, &level);
    shale_free(sql);
    if (rc || level < 0) break;
    int leaves = 0;
    rc = merge_level(t, (int)level, &leaves);
    budget -= leaves > 0 ? leaves : 1;
  }
  return rc;
}

/* After a commit's flush: SQLite's automatic incremental merge. */
static int automerge(Fts3Table *t, int leaves) {
  if (leaves <= 4) return SHALE_OK;
  int yes, rc = has_stat(t, &yes);
  if (rc || !yes) return rc;
  int64_t n, maxlevel;
  rc = exec_stmt(t, "SELECT value FROM \"%s\".'%s_stat' WHERE id = 2", 0, 0, NULL, NULL, 0, &n);
  if (rc || n <= 0) return rc;
  rc = exec_stmt(t, "SELECT max(level) FROM \"%s\".'%s_segdir'", 0, 0, NULL, NULL, 0, &maxlevel);
  if (rc || maxlevel <= 0) return rc;
  int64_t a = (int64_t)leaves * maxlevel;
  a += a / 2;
  return a > 64 ? merge_levels(t, (int)(a > 0x7fffffff ? 0x7fffffff : a), (int)n) : SHALE_OK;
}

static int cmd_merge(Fts3Table *t, const char *z) {
  int nmerge = get_int(&z), nmin = MERGE_COUNT / 2;
  if (z[0] == ',' && z[1]) {
    z++;
    nmin = get_int(&z);
  }
  if (*z || nmin < 2) return sql_error(t);
  int rc = fts3_write_flush(t);
  if (rc == SHALE_OK) rc = ensure_stat(t);
  return rc ? rc : merge_levels(t, nmerge, nmin);
}

static int cmd_automerge(Fts3Table *t, const char *z) {
  int n = get_int(&z);
  if (n == 1 || n > MERGE_COUNT) n = 8;
  int rc = ensure_stat(t);
  if (rc == SHALE_OK)
    rc = exec_stmt(t, "INSERT OR REPLACE INTO \"%s\".'%s_stat'(id, value) VALUES(2, ?1)", n, 0,
                   NULL, NULL, 0, NULL);
  return rc;
}

typedef struct RowText {
  const char **text;
  int *len;
} RowText;

/* Call fn for every row of %_content with its columns' text. */
static int each_row(Fts3Table *t, void *ctx,
                    int (*fn)(Fts3Table *, void *, int64_t, const char *const *, const int *)) {
  char *sql = util_mprintf("SELECT * FROM \"%s\".'%s_content' ORDER BY docid", t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(t->db, sql, -1, &st, NULL);
  shale_free(sql);
  if (rc) return rc;
  RowText r = {shale_malloc(sizeof(char *) * (size_t)t->ncol),
               shale_malloc(sizeof(int) * (size_t)t->ncol)};
  if (!r.text || !r.len) rc = SHALE_NOMEM;
  while (rc == SHALE_OK && (rc = shale_step(st)) == SHALE_ROW) {
    rc = SHALE_OK;
    for (int i = 0; i < t->ncol; i++) {
      r.text[i] = (const char *)shale_column_text(st, i + 1);
      r.len[i] = shale_column_bytes(st, i + 1);
    }
    rc = fn(t, ctx, shale_column_int64(st, 0), r.text, r.len);
  }
  if (rc == SHALE_DONE) rc = SHALE_OK;
  int rc2 = shale_finalize(st);
  shale_free(r.text);
  shale_free(r.len);
  return rc ? rc : rc2;
}

static int rebuild_row(Fts3Table *t, void *ctx, int64_t docid, const char *const *text,
                       const int *len) {
  (void)ctx;
  return fts3_table_index_row(t, docid, text, len);
}

static int cmd_rebuild(Fts3Table *t) {
  /* what is pending is moot: every segment goes and the content is
   * indexed again (kept, below the watermark, for a savepoint) */
  if (t->pend) t->pend->written = t->pend->n;
  int yes, rc = has_stat(t, &yes);
  if (rc == SHALE_OK)
    rc = exec_stmt(t, "DELETE FROM \"%s\".'%s_segments'", 0, 0, NULL, NULL, 0, NULL);
  if (rc == SHALE_OK)
    rc = exec_stmt(t, "DELETE FROM \"%s\".'%s_segdir'", 0, 0, NULL, NULL, 0, NULL);
  if (rc == SHALE_OK && t->has_docsize)
    rc = exec_stmt(t, "DELETE FROM \"%s\".'%s_docsize'", 0, 0, NULL, NULL, 0, NULL);
  if (rc == SHALE_OK && yes)
    rc = exec_stmt(t, "DELETE FROM \"%s\".'%s_stat'", 0, 0, NULL, NULL, 0, NULL);
  if (rc == SHALE_OK) rc = fts3_stat_reset(t);
  return rc ? rc : each_row(t, NULL, rebuild_row);
}

/* A checksum of (term, docid, position) triples, added up so that order
 * does not matter. */
static uint64_t entry_sum(const char *term, int nterm, int64_t docid, int64_t pos) {
  uint64_t h = term_hash(term, nterm);
  h = (h ^ (uint64_t)docid) * 0x9e3779b97f4a7c15u;
  h = (h ^ (uint64_t)pos) * 0xff51afd7ed558ccdu;
  return h ^ (h >> 29);
}

typedef struct SumCtx {
  uint64_t sum;
  int64_t docid, col;
} SumCtx;

static int sum_tok(void *ctx, const char *tok, int ntok, int start, int end, int pos) {
  SumCtx *c = ctx;
  (void)start;
  (void)end;
  c->sum += entry_sum(tok, ntok, c->docid, c->col << 32 | pos);
  return SHALE_OK;
}

static int sum_row(Fts3Table *t, void *ctx, int64_t docid, const char *const *text,
                   const int *len) {
  SumCtx *c = ctx;
  c->docid = docid;
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < t->ncol; i++) {
    c->col = i;
    if (text[i]) rc = fts3_tokenize(&t->tok, text[i], len[i], c, sum_tok);
  }
  return rc;
}

static int cmd_integrity(Fts3Table *t) {
  int rc = fts3_write_flush(t); /* SQLite's check reads the pending terms too */
  if (rc) return rc;
  Fts3Pending *p = pending_new();
  if (!p) return SHALE_NOMEM;
  MergeCtx m = {p, SHALE_OK};
  rc = fts3_index_scan_level(t, -1, &m, merge_cb);
  if (rc == SHALE_OK && p->n) qsort(p->e, (size_t)p->n, sizeof(WEnt), cmp_ent);
  uint64_t index = 0;
  for (int i = 0; rc == SHALE_OK && i < p->n;) {
    int j = i; /* the newest segment's entries of (term, docid) count */
    while (j < p->n && p->e[j].term == p->e[i].term && p->e[j].docid == p->e[i].docid) j++;
    for (int k = i; k < j && p->e[k].seq == p->e[i].seq; k++)
      if (p->e[k].pos >= 0)
        index += entry_sum(p->terms[p->e[k].term].z, p->terms[p->e[k].term].n, p->e[k].docid,
                           p->e[k].pos);
    i = j;
  }
  fts3_pending_free(p);
  SumCtx c = {0, 0, 0};
  if (rc == SHALE_OK) rc = each_row(t, &c, sum_row);
  if (rc == SHALE_OK && c.sum != index) rc = SHALE_CORRUPT_VTAB;
  return rc;
}

int fts3_write_command(Fts3Table *t, const char *cmd) {
  size_t n = strlen(cmd);
  if (n == 7 && !util_strnicmp(cmd, "rebuild", 7)) return cmd_rebuild(t);
  if (n == 15 && !util_strnicmp(cmd, "integrity-check", 15)) return cmd_integrity(t);
  if (n > 6 && !util_strnicmp(cmd, "merge=", 6)) return cmd_merge(t, cmd + 6);
  if (n > 10 && !util_strnicmp(cmd, "automerge=", 10)) return cmd_automerge(t, cmd + 10);
  return sql_error(t);
}
