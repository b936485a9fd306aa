/*
 * fts3_index.c -- reading SQLite's FTS3/FTS4 segments (format in
 * fts3_int.h): a term's (or a prefix's) documents and positions, merged
 * over every segment so that the newest segment's entry for a document
 * wins, deletions (entries with no positions) dropping it.
 *
 * Invariants:
 *  1. Segments are read oldest first (level DESC, idx ASC); the entries of
 *     one (term, docid) pair from a newer segment replace older ones.
 *     Only the segments of one index are read: levels t->lvl to t->lvl +
 *     1023 (SQLite's (langid * indexes + index) * 1024 + level), a prefix
 *     query whose length has a prefix= index looking its term up there.
 *     Doclists of an order=desc table list docids descending (each a
 *     delta below the one before).
 *  2. Malformed node or doclist bytes give SHALE_CORRUPT_VTAB, never a read
 *     past the blob.
 */
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

int fts3_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 10; i++) {
    if (p + i >= end) return 0;
    x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

int fts3_put_varint(uint8_t *p, uint64_t v) {
  int n = 0;
  do {
    p[n++] = (uint8_t)((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  p[n - 1] &= 0x7f;
  return n;
}

/* ---- hit lists ---- */

void fts3_hits_free(Fts3Hits *h) {
  shale_free(h->docid);
  shale_free(h->off);
  shale_free(h->pos);
  memset(h, 0, sizeof *h);
}

int fts3_hits_doc(Fts3Hits *h, int64_t docid) {
  if (h->n + 2 > h->cap) {
    int cap = h->cap ? h->cap * 2 : 16;
    int64_t *d = shale_realloc(h->docid, sizeof(int64_t) * (size_t)cap);
    if (!d) return SHALE_NOMEM;
    h->docid = d;
    int *o = shale_realloc(h->off, sizeof(int) * (size_t)(cap + 1));
    if (!o) return SHALE_NOMEM;
    h->off = o;
    h->cap = cap;
  }
  if (!h->n) h->off[0] = h->npos;
  h->docid[h->n++] = docid;
  h->off[h->n] = h->npos;
  return SHALE_OK;
}

int fts3_hits_pos(Fts3Hits *h, int64_t pos) {
  if (h->npos >= h->cappos) {
    int cap = h->cappos ? h->cappos * 2 : 64;
    int64_t *p = shale_realloc(h->pos, sizeof(int64_t) * (size_t)cap);
    if (!p) return SHALE_NOMEM;
    h->pos = p;
    h->cappos = cap;
  }
  h->pos[h->npos++] = pos;
  h->off[h->n] = h->npos;
  return SHALE_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

void fts3_hits_end(Fts3Hits *h) {
  if (!h->n) return;
  int s = h->off[h->n - 1], k = s;
  if (h->npos > s) qsort(h->pos + s, (size_t)(h->npos - s), sizeof(int64_t), cmp_i64);
  for (int i = s; i < h->npos; i++)
    if (i == s || h->pos[i] != h->pos[k - 1]) h->pos[k++] = h->pos[i];
  h->npos = k;
  h->off[h->n] = k;
}

/* ---- collecting entries from the segments ---- */

/* One (term, document) entry found in a segment. */
typedef struct Entry {
  int term; /* index into Scan.terms */
  int seg;  /* segment number, higher is newer */
  int64_t docid;
  int pos0, npos; /* into Scan.pos */
} Entry;

typedef struct Scan {
  const char *key;
  int nkey, prefix;
  int desc; /* order=desc: doclists in descending docid order */
  Entry *e;
  int ne, cape;
  int64_t *pos;
  int npos, cappos;
  char **terms; /* distinct matching terms, sorted */
  int *tlen;
  int nterms, capterms;
} Scan;

static void scan_free(Scan *s) {
  for (int i = 0; i < s->nterms; i++) shale_free(s->terms[i]);
  shale_free(s->terms);
  shale_free(s->tlen);
  shale_free(s->e);
  shale_free(s->pos);
}

static int term_cmp(const char *a, int na, const char *b, int nb) {
  int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
  return c ? c : na - nb;
}

/* The number of term t in s->terms, added if new; -1 out of memory. */
static int term_id(Scan *s, const char *t, int n) {
  int lo = 0, hi = s->nterms;
  while (lo < hi) {
    int mid = (lo + hi) / 2, c = term_cmp(s->terms[mid], s->tlen[mid], t, n);
    if (!c) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (s->nterms >= s->capterms) {
    int cap = s->capterms ? s->capterms * 2 : 8;
    char **tt = shale_realloc(s->terms, sizeof(char *) * (size_t)cap);
    if (!tt) return -1;
    s->terms = tt;
    int *tl = shale_realloc(s->tlen, sizeof(int) * (size_t)cap);
    if (!tl) return -1;
    s->tlen = tl;
    s->capterms = cap;
  }
  char *copy = shale_malloc((size_t)n + 1);
  if (!copy) return -1;
  if (n) memcpy(copy, t, (size_t)n);
  copy[n] = 0;
  memmove(s->terms + lo + 1, s->terms + lo, sizeof(char *) * (size_t)(s->nterms - lo));
  memmove(s->tlen + lo + 1, s->tlen + lo, sizeof(int) * (size_t)(s->nterms - lo));
  s->terms[lo] = copy;
  s->tlen[lo] = n;
  s->nterms++;
  /* entries so far keep their term numbers */
  for (int i = 0; lo < s->nterms - 1 && i < s->ne; i++)
    if (s->e[i].term >= lo) s->e[i].term++;
  return lo;
}

/* Decode doclist [p, end) of a matching term into entries of segment seg. */
static int scan_doclist(Scan *s, int term, int seg, const uint8_t *p, const uint8_t *end) {
  int64_t docid = 0;
  int first = 1;
  while (p < end) {
    uint64_t v;
    int n = fts3_get_varint(p, end, &v);
    if (!n) return SHALE_CORRUPT_VTAB;
    p += n;
    docid = first ? (int64_t)v : (int64_t)(s->desc ? (uint64_t)docid - v : (uint64_t)docid + v);
    first = 0;
    if (s->ne >= s->cape) {
      int cap = s->cape ? s->cape * 2 : 32;
      Entry *e = shale_realloc(s->e, sizeof(Entry) * (size_t)cap);
      if (!e) return SHALE_NOMEM;
      s->e = e;
      s->cape = cap;
    }
    Entry *e = &s->e[s->ne++];
    e->term = term;
    e->seg = seg;
    e->docid = docid;
    e->pos0 = s->npos;
    int64_t col = 0, off = 0;
    for (;;) {
      n = fts3_get_varint(p, end, &v);
      if (!n) return SHALE_CORRUPT_VTAB;
      p += n;
      if (v == 0) break;
      if (v == 1) {
        n = fts3_get_varint(p, end, &v);
        if (!n || v > 0x7fffffff) return SHALE_CORRUPT_VTAB;
        p += n;
        col = (int64_t)v;
        off = 0;
        continue;
      }
      off += (int64_t)v - 2;
      if (off > 0x7fffffff) return SHALE_CORRUPT_VTAB;
      if (s->npos >= s->cappos) {
        int cap = s->cappos ? s->cappos * 2 : 64;
        int64_t *np = shale_realloc(s->pos, sizeof(int64_t) * (size_t)cap);
        if (!np) return SHALE_NOMEM;
        s->pos = np;
        s->cappos = cap;
      }
      s->pos[s->npos++] = col << 32 | off;
    }
    e->npos = s->npos - e->pos0;
  }
  return SHALE_OK;
}

/* Scan leaf node [p, end); *done set when a term past the key was seen. */
static int scan_leaf(Scan *s, int seg, const uint8_t *p, const uint8_t *end, int *done) {
  uint64_t v;
  int n = fts3_get_varint(p, end, &v);
  if (!n || v != 0) return SHALE_CORRUPT_VTAB;
  p += n;
  char *term = NULL;
  int nterm = 0, cap = 0, rc = SHALE_OK;
  for (int first = 1; p < end && rc == SHALE_OK; first = 0) {
    uint64_t pre = 0, suf;
    if (!first) {
      if (!(n = fts3_get_varint(p, end, &pre))) break;
      p += n;
    }
    if (!(n = fts3_get_varint(p, end, &suf))) break;
    p += n;
    if (pre > (uint64_t)nterm || suf > (uint64_t)(end - p)) break;
    int len = (int)(pre + suf);
    if (len > cap) {
      cap = len * 2 + 16;
      char *t = shale_realloc(term, (size_t)cap);
      if (!t) {
        rc = SHALE_NOMEM;
        break;
      }
      term = t;
    }
    memcpy(term + pre, p, (size_t)suf);
    nterm = len;
    p += suf;
    uint64_t ndl;
    if (!(n = fts3_get_varint(p, end, &ndl)) || ndl > (uint64_t)(end - p - n)) break;
    p += n;
    int c = memcmp(term, s->key, (size_t)(nterm < s->nkey ? nterm : s->nkey));
    int hit = c == 0 && (s->prefix ? nterm >= s->nkey : nterm == s->nkey);
    if (c > 0 || (c == 0 && nterm > s->nkey && !s->prefix)) {
      *done = 1;
      shale_free(term);
      return SHALE_OK;
    }
    if (hit) {
      int id = term_id(s, term, nterm);
      rc = id < 0 ? SHALE_NOMEM : scan_doclist(s, id, seg, p, p + ndl);
    }
    p += ndl;
  }
  shale_free(term);
  if (rc == SHALE_OK && p != end) rc = SHALE_CORRUPT_VTAB;
  return rc;
}

static int prepare(Fts3Table *t, shale_stmt **st, const char *fmt) {
  if (*st) return SHALE_OK;
  char *sql = util_mprintf(fmt, t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_prepare_v2(t->db, sql, -1, st, NULL);
  shale_free(sql);
  return rc;
}

/* level < 0: every segment (of the index t->lvl starts), through the
 * cached statement. */
static int scan_segments(Fts3Table *t, Scan *s, int level) {
  shale_stmt *one = NULL;
  int rc = level < 0
               ? prepare(t, &t->st_seg,
                         "SELECT start_block, leaves_end_block, root FROM \"%s\".\"%s_segdir\" "
                         "WHERE level BETWEEN ?1 AND ?1 + 1023 ORDER BY level DESC, idx ASC")
               : prepare(t, &one,
                         "SELECT start_block, leaves_end_block, root FROM \"%s\".\"%s_segdir\" "
                         "WHERE level = ?1 ORDER BY idx ASC");
  if (rc == SHALE_OK)
    rc = prepare(t, &t->st_leaf,
                 "SELECT block FROM \"%s\".\"%s_segments\" WHERE blockid BETWEEN ?1 AND ?2 "
                 "ORDER BY blockid");
  if (rc) {
    shale_finalize(one);
    return rc;
  }
  shale_stmt *seg = one ? one : t->st_seg, *leaf = t->st_leaf;
  shale_bind_int64(seg, 1, t->lvl + (level < 0 ? 0 : level));
  int nseg = 0;
  while (rc == SHALE_OK && shale_step(seg) == SHALE_ROW) {
    int64_t start = shale_column_int64(seg, 0), lend = shale_column_int64(seg, 1);
    int done = 0;
    if (start == 0) {
      const uint8_t *root = shale_column_blob(seg, 2);
      int n = shale_column_bytes(seg, 2);
      if (n > 0) rc = scan_leaf(s, nseg, root, root + n, &done);
    } else {
      shale_bind_int64(leaf, 1, start);
      shale_bind_int64(leaf, 2, lend);
      while (rc == SHALE_OK && !done && shale_step(leaf) == SHALE_ROW) {
        const uint8_t *b = shale_column_blob(leaf, 0);
        int n = shale_column_bytes(leaf, 0);
        rc = n > 0 ? scan_leaf(s, nseg, b, b + n, &done) : SHALE_CORRUPT_VTAB;
      }
      int rc2 = shale_reset(leaf);
      if (rc == SHALE_OK) rc = rc2;
    }
    nseg++;
  }
  int rc2 = one ? shale_finalize(one) : shale_reset(seg);
  return rc ? rc : rc2;
}

static int entry_cmp(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  if (x->docid != y->docid) return x->docid < y->docid ? -1 : 1;
  if (x->term != y->term) return x->term - y->term;
  return y->seg - x->seg; /* newest first */
}

int fts3_index_query(Fts3Table *t, const char *term, int nterm, int prefix, Fts3Hits *out) {
  Scan s;
  memset(&s, 0, sizeof s);
  int64_t base = t->lvl;
  for (int i = 0; prefix && i < t->nprefix; i++)
    if (t->prefix[i] == nterm) { /* a prefix index of that length: one term there */
      t->lvl = base + (int64_t)(i + 1) * 1024;
      prefix = 0;
    }
  s.key = term;
  s.nkey = nterm;
  s.prefix = prefix;
  s.desc = t->desc;
  memset(out, 0, sizeof *out);
  int rc = scan_segments(t, &s, -1);
  t->lvl = base;
  if (rc == SHALE_OK && s.ne) qsort(s.e, (size_t)s.ne, sizeof(Entry), entry_cmp);
  for (int i = 0; rc == SHALE_OK && i < s.ne; i++) {
    const Entry *e = &s.e[i];
    if (i && e->docid == s.e[i - 1].docid && e->term == s.e[i - 1].term) continue; /* older */
    if (!e->npos) continue;                                                        /* deleted */
    if (!out->n || out->docid[out->n - 1] != e->docid) {
      fts3_hits_end(out);
      rc = fts3_hits_doc(out, e->docid);
    }
    for (int k = 0; rc == SHALE_OK && k < e->npos; k++) rc = fts3_hits_pos(out, s.pos[e->pos0 + k]);
  }
  fts3_hits_end(out);
  scan_free(&s);
  if (rc) fts3_hits_free(out);
  return rc;
}

int fts3_index_scan_level(Fts3Table *t, int level, void *ctx, Fts3EntryCb cb) {
  Scan s;
  memset(&s, 0, sizeof s);
  s.key = "";
  s.prefix = 1;
  s.desc = t->desc;
  int rc = scan_segments(t, &s, level);
  for (int i = 0; rc == SHALE_OK && i < s.ne; i++) {
    const Entry *e = &s.e[i];
    rc = cb(ctx, s.terms[e->term], s.tlen[e->term], e->docid, e->seg, s.pos + e->pos0, e->npos);
  }
  scan_free(&s);
  return rc;
}
