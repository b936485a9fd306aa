/*
 * vm_sort.c -- the sorter behind SorterOpen/SorterLimit/SorterInsert/
 * SorterSort/SorterNext/SorterData (ORDER BY, GROUP BY by sorting, CREATE
 * INDEX, the rows a hash aggregation refused): records are gathered in one
 * buffer, sorted by the cursor's KeyInfo with a 64-bit key prefix per entry,
 * and past the Vm's sorter budget written as sorted runs to a temp file and
 * merged on read.
 *
 * Owns: per sorter cursor the record buffer (sbuf), the entry arrays
 * (sent, stmp) -- kept across resets, emptied, freed by vm_sorter_release --
 * and the spill state (VmSpill: two temp files, the runs, the readers with
 * their buffers, the write buffer), freed by vm_sorter_close.
 *
 * Invariants:
 *  1. The sort is stable: equal records come out in insertion order. Runs
 *     are written in insertion order, a merge breaks ties by run number,
 *     and a merge pass merges consecutive runs into one run each.
 *  2. Memory stays bounded: the records held in memory with their
 *     entries, and the buffers holding them (sorter_held), stay within the
 *     budget (a run is spilled first), a single larger record aside. A
 *     spilled sort frees those buffers before its merge, which reads up to
 *     VM_MERGE_MAX runs at once through buffers that share VM_MERGE_BYTES
 *     (merge_block: 64 KiB each for up to 16 runs, 4 KiB for 256), so
 *     runs of up to about 256 budgets (512 MiB of records at the default
 *     2 MiB) are merged straight from where they were written, as SQLite
 *     merges all its PMAs at once; each record is written once. More runs
 *     are first merged in passes into fewer, longer runs in the other temp
 *     file: only as many as the final merge must lose when that is one
 *     merge (the rest are read where they are), else every VM_MERGE_MAX
 *     consecutive runs (the file read is emptied afterwards). A merge costs
 *     O(log runs) comparisons per record.
 *  3. Each run's current record carries its sort_key (written with it in
 *     the run), so the merge decodes records only when two keys are equal
 *     (as the in-memory sort).
 *  4. A malformed record raises KeyInfo.corrupt (record_compare_prefix);
 *     the caller turns it into SHALE_CORRUPT.
 */
#include <string.h>

#include "vm_int.h"

/* ---- in memory: records in one buffer, stable merge sort by KeyInfo ---- */

/* sort_key modes, chosen at SorterOpen from the first key column */
enum { SORTKEY_NONE = 0, SORTKEY_BINARY, SORTKEY_NOCASE };

/* The first key column of record rec reduced to 64 bits (VmSortEnt): the
 * storage class in the top byte (NULL < numbers < TEXT < BLOB), then for a
 * number the top 56 bits of its value as a double in an order-preserving
 * bit pattern (integers round monotonically, so int and real mix), for
 * TEXT and BLOB the first 7 bytes (NOCASE: ASCII folded, as the
 * collation compares), zero padded. Unequal keys order as the full
 * comparison does; equal ones decide nothing. DESC inverts the key. */
static uint64_t sort_key(const VmCursor *c, const uint8_t *rec, uint32_t n) {
  if (c->keymode == SORTKEY_NONE || n < 2 || rec[0] >= 0x80 || rec[0] > n) return 0;
  uint32_t st;
  const uint8_t *hp = rec + 1, *hend = rec + rec[0];
  if (hp >= hend) return 0;
  if (hp[0] < 0x80) {
    st = hp[0];
  } else {
    uint64_t x;
    if (!util_get_varint_safe(hp, hend, &x) || x > 0xffffffffu) return 0;
    st = (uint32_t)x;
  }
  const uint8_t *body = hend;
  uint32_t len = record_serial_len(st);
  if (st == 10 || st == 11 || (uint64_t)(body - rec) + len > n) return 0;
  uint64_t key;
  if (st == 0) {
    key = 0;
  } else if (st < 12) {
    ShValue v;
    record_decode_value(st, body, &v);
    if (v.type == SHALE_NULL) return 0;
    double d = v.type == SHALE_INTEGER ? (double)v.i : v.r;
    if (d == 0) d = 0; /* -0.0 equals 0.0 */
    uint64_t u;
    memcpy(&u, &d, 8);
    u = (u >> 63) ? ~u : u | (1ull << 63);
    key = (1ull << 56) | (u >> 8);
  } else {
    uint64_t b7 = 0; /* the first 7 bytes, big-endian in the low 56 bits */
    if (len >= 8) {
      b7 = ((uint64_t)util_get4(body) << 32 | util_get4(body + 4)) >> 8;
    } else {
      for (uint32_t i = 0; i < len; i++) b7 |= (uint64_t)body[i] << (48 - 8 * i);
    }
    if ((st & 1) && c->keymode == SORTKEY_NOCASE) {
      /* ASCII A-Z to a-z in every byte at once: bit 7 of each byte of ge
       * (>= 'A') and gt (> 'Z') computed on the low 7 bits, ASCII only */
      const uint64_t lo7 = 0x007f7f7f7f7f7f7full, hi = 0x0080808080808080ull;
      uint64_t h = b7 & lo7;
      uint64_t ge = h + 0x003f3f3f3f3f3f3full, gt = h + 0x0025252525252525ull;
      uint64_t upper = (ge ^ gt) & ~b7 & hi;
      b7 |= upper >> 2;
    }
    key = (uint64_t)((st & 1) ? 2 : 3) << 56 | b7;
  }
  return c->ki->desc && c->ki->desc[0] ? ~key : key;
}

/* Memory a sorter entry costs besides its record: its VmSortEnt and its
 * share of the sort's room (stmp, as many entries: the radix sort's). */
#define SORT_ENT_COST (2 * sizeof(VmSortEnt))

/* Bytes held by the buffers: sbuf and the entry arrays. */
static uint64_t sorter_held(const VmCursor *c) {
  return c->scap + (uint64_t)c->capsent * SORT_ENT_COST;
}

/* Add one record. The buffers grow by half, and with a limit (0: none) no
 * further than what keeps sorter_held within it, unless this record needs
 * more (vm_sorter_insert spills before that happens to a non-empty run). */
static int sorter_add(VmCursor *c, const void *rec, uint32_t n, uint64_t limit) {
  if (c->slen + n > c->scap) {
    uint64_t ncap = c->scap ? c->scap + c->scap / 2 : 4096;
    uint64_t room = limit > sorter_held(c) ? limit - sorter_held(c) + c->scap : 0;
    if (limit && ncap > room) ncap = room;
    if (ncap < c->slen + n) ncap = c->slen + n;
    uint8_t *b = shale_realloc(c->sbuf, (size_t)ncap);
    if (!b) return SHALE_NOMEM;
    c->sbuf = b;
    c->scap = ncap;
  }
  if (c->nsent == c->capsent) {
    uint64_t ncap = c->capsent ? (uint64_t)c->capsent + (uint64_t)c->capsent / 2 : 64;
    uint64_t room = limit > sorter_held(c) ? (limit - sorter_held(c)) / SORT_ENT_COST : 0;
    if (limit && ncap > (uint64_t)c->capsent + room) ncap = (uint64_t)c->capsent + room;
    if (ncap < (uint64_t)c->nsent + 1) ncap = (uint64_t)c->nsent + 1;
    if (ncap > INT32_MAX / 2) return SHALE_NOMEM;
    VmSortEnt *e = shale_realloc(c->sent, (size_t)ncap * sizeof *e);
    if (!e) return SHALE_NOMEM;
    c->sent = e;
    VmSortEnt *t = shale_malloc((size_t)ncap * sizeof *t); /* scratch: nothing to keep */
    if (!t) return SHALE_NOMEM;
    shale_free(c->stmp);
    c->stmp = t;
    c->capsent = (int)ncap;
  }
  if (n) memcpy(c->sbuf + c->slen, rec, n);
  c->sent[c->nsent].key = sort_key(c, rec, n);
  c->sent[c->nsent].off = (uint32_t)c->slen;
  c->sent[c->nsent].n = n;
  c->nsent++;
  c->slen += n;
  return SHALE_OK;
}

/* The first column of record p[0..n) when it is TEXT or BLOB: its serial
 * type and bytes (1), else 0. Only a header size of one byte is taken. */
static inline int first_bytes(const uint8_t *p, uint32_t n, uint32_t *st, const uint8_t **z,
                              uint32_t *len) {
  if (n < 2 || p[0] >= 0x80 || p[0] < 2 || p[0] > n) return 0;
  uint32_t t = p[1];
  if (t >= 0x80) {
    uint64_t x;
    if (!util_get_varint_safe(p + 1, p + p[0], &x) || x > 0x7fffffffu) return 0;
    t = (uint32_t)x;
  }
  if (t < 12 || (t - 12) / 2 > n - p[0]) return 0;
  *st = t;
  *z = p + p[0];
  *len = (t - 12) / 2;
  return 1;
}

/* Records a and b whose sort_keys are equal, in sort order. Under a BINARY
 * first key two TEXT (or two BLOB) first columns are compared here, their
 * bytes straight from the records; when those are equal, or for any other
 * pair, record_compare_prefix decides (from column 0). */
static int sort_tie(VmCursor *c, const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
  uint32_t ta, tb, la, lb;
  const uint8_t *za, *zb;
  if (c->keymode == SORTKEY_BINARY && first_bytes(a, na, &ta, &za, &la) &&
      first_bytes(b, nb, &tb, &zb, &lb) && !((ta ^ tb) & 1)) {
    uint32_t m = la < lb ? la : lb;
    int x = m ? memcmp(za, zb, m) : 0;
    if (x == 0) x = la < lb ? -1 : la > lb;
    if (x) {
      x = x < 0 ? -1 : 1;
      return c->ki->desc && c->ki->desc[0] ? -x : x;
    }
    if (c->ki->ncol == 1) return 0; /* equal over every key column */
  }
  return record_compare_prefix(c->ki, a, na, b, nb);
}

static inline int sort_cmp(VmCursor *c, const VmSortEnt *a, const VmSortEnt *b) {
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return sort_tie(c, c->sbuf + a->off, a->n, c->sbuf + b->off, b->n);
}

/* ---- top-N (SorterLimit): the first topn records in sort order ---- */

/* The sort order of a record not stored yet against entry e. */
static int topn_cmp(VmCursor *c, uint64_t key, const void *rec, uint32_t n, const VmSortEnt *e) {
  if (key != e->key) return key < e->key ? -1 : 1;
  return sort_tie(c, rec, n, c->sbuf + e->off, e->n);
}

static void heap_down(VmCursor *c, int i) {
  VmSortEnt *h = c->sent;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < c->nsent && sort_cmp(c, &h[l], &h[m]) > 0) m = l;
    if (r < c->nsent && sort_cmp(c, &h[r], &h[m]) > 0) m = r;
    if (m == i) return;
    VmSortEnt t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void heap_up(VmCursor *c, int i) {
  VmSortEnt *h = c->sent;
  while (i > 0) {
    int up = (i - 1) / 2;
    if (sort_cmp(c, &h[i], &h[up]) <= 0) return;
    VmSortEnt t = h[i];
    h[i] = h[up];
    h[up] = t;
    i = up;
  }
}

/* Copy the kept records into a fresh buffer when the evicted ones take
 * most of sbuf (so it holds about topn records, not every one inserted). */
static int topn_compact(VmCursor *c, uint32_t need) {
  uint64_t cap = 4096;
  while (cap < 2 * (c->live + need)) cap *= 2;
  if (cap >= c->scap) return SHALE_OK; /* growing sbuf is no worse */
  uint8_t *b = shale_malloc((size_t)cap);
  if (!b) return SHALE_NOMEM;
  uint64_t len = 0;
  for (int i = 0; i < c->nsent; i++) {
    if (c->sent[i].n) memcpy(b + len, c->sbuf + c->sent[i].off, c->sent[i].n);
    c->sent[i].off = (uint32_t)len;
    len += c->sent[i].n;
  }
  shale_free(c->sbuf);
  c->sbuf = b;
  c->scap = cap;
  c->slen = len;
  return SHALE_OK;
}

/* Insert into a sorter holding at most topn records: a record that sorts
 * after all of a full heap's is dropped, else it replaces the greatest. */
static int topn_insert(VmCursor *c, const void *rec, uint32_t n) {
  uint64_t key = sort_key(c, rec, n);
  int rc;
  if (c->nsent >= c->topn) {
    if (topn_cmp(c, key, rec, n, &c->sent[0]) >= 0) return SHALE_OK;
    c->live -= c->sent[0].n;
    c->sent[0] = c->sent[--c->nsent];
    heap_down(c, 0);
  }
  if (c->slen + n > c->scap && c->slen > 2 * c->live && (rc = topn_compact(c, n)) != SHALE_OK)
    return rc;
  if ((rc = sorter_add(c, rec, n, 0)) != SHALE_OK) return rc;
  c->live += n;
  heap_up(c, c->nsent - 1);
  return SHALE_OK;
}

/* Stable merge sort of a[0..n) with tmp (room for n / 2 + 1 entries):
 * short runs by insertion, halves already in order are left alone, a
 * merge copies only the left half aside. Equal entries keep their order. */
static void merge_sort(VmCursor *c, VmSortEnt *a, int n, VmSortEnt *tmp) {
  if (n <= 8) {
    for (int i = 1; i < n; i++) {
      VmSortEnt x = a[i];
      int j = i;
      for (; j > 0 && sort_cmp(c, &x, &a[j - 1]) < 0; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  int h = n / 2;
  merge_sort(c, a, h, tmp);
  merge_sort(c, a + h, n - h, tmp);
  if (sort_cmp(c, &a[h], &a[h - 1]) >= 0) return;
  memcpy(tmp, a, sizeof *a * (size_t)h);
  int i = 0, j = h, k = 0; /* k < j while i < h: a[j] is read before a[k] is written */
  while (i < h && j < n) a[k++] = sort_cmp(c, &a[j], &tmp[i]) < 0 ? a[j++] : tmp[i++];
  while (i < h) a[k++] = tmp[i++];
}

/* Below this many entries a sort is the merge sort alone: its log2(n)
 * levels cost less than the radix passes (about 170 Ir an entry) there, and
 * keys sharing their first bytes (text with common prefixes) leave the radix
 * sort long runs of ties to merge anyway (speedtest1's CREATE INDEX of
 * 5,000 entries: 3.3M Ir more with radix from 64 entries up). */
#define RADIX_MIN 8192

/* Stable sort of a[0..n) with tmp (room for n entries): a least-significant
 * byte first radix sort of the sort_keys (a byte every key shares is
 * skipped), then each run of equal keys by merge_sort, whose comparisons
 * then all go to sort_tie. About 10 Ir an entry a byte instead of a
 * comparison per entry and merge level. */
static void radix_sort(VmCursor *c, VmSortEnt *a, int n, VmSortEnt *tmp) {
  uint32_t cnt[8][256];
  memset(cnt, 0, sizeof cnt);
  for (int i = 0; i < n; i++) {
    uint64_t k = a[i].key;
    for (int b = 0; b < 8; b++) cnt[b][(k >> (8 * b)) & 0xff]++;
  }
  VmSortEnt *src = a, *dst = tmp;
  for (int b = 0; b < 8; b++) {
    uint32_t *h = cnt[b];
    if (h[(src[0].key >> (8 * b)) & 0xff] == (uint32_t)n) continue; /* one value: in order */
    uint32_t sum = 0;
    for (int v = 0; v < 256; v++) {
      uint32_t x = h[v];
      h[v] = sum;
      sum += x;
    }
    for (int i = 0; i < n; i++) dst[h[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
    VmSortEnt *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, sizeof *a * (size_t)n);
  for (int i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && a[j].key == a[i].key; j++) {
    }
    if (j - i > 1) merge_sort(c, a + i, j - i, tmp);
  }
}

static void sorter_sort(VmCursor *c) {
  if (c->keymode == SORTKEY_NONE || c->nsent < RADIX_MIN)
    merge_sort(c, c->sent, c->nsent, c->stmp);
  else
    radix_sort(c, c->sent, c->nsent, c->stmp);
}

/* ---- spill: sorted runs in temp files, merged on read ---- */

static int spill_open_file(OsFile **out) {
  OsVfs *vfs = os_vfs_find(NULL);
  if (!vfs) return SHALE_CANTOPEN;
  OsFile *f = shale_malloc((size_t)vfs->file_size);
  if (!f) return SHALE_NOMEM;
  memset(f, 0, (size_t)vfs->file_size);
  int rc = vfs->open(
      vfs, NULL, f,
      SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_DELETEONCLOSE | SHALE_OPEN_TEMP_JOURNAL,
      NULL);
  if (rc) {
    shale_free(f);
    return rc;
  }
  *out = f;
  return SHALE_OK;
}

static void spill_close_file(OsFile *f) {
  if (!f) return;
  if (f->methods) f->methods->close(f);
  shale_free(f);
}

/* Write out the gathered bytes (to file w). */
static int spill_flush(VmSpill *sp) {
  if (sp->wlen == 0) return SHALE_OK;
  int w = sp->wfile;
  int rc = os_write(sp->file[w], sp->wbuf, (int)sp->wlen, sp->fsize[w]);
  if (rc) return rc;
  sp->fsize[w] += sp->wlen;
  sp->wlen = 0;
  return SHALE_OK;
}

/* Append n bytes to the file being written through the gather buffer. */
static int spill_put(VmSpill *sp, const void *z, uint32_t n) {
  const uint8_t *p = z;
  while (n > 0) {
    uint32_t k = VM_SPILL_BLOCK - sp->wlen;
    if (k > n) k = n;
    memcpy(sp->wbuf + sp->wlen, p, k);
    sp->wlen += k;
    p += k;
    n -= k;
    if (sp->wlen == VM_SPILL_BLOCK) {
      int rc = spill_flush(sp);
      if (rc) return rc;
    }
  }
  return SHALE_OK;
}

/* One record of a run: varint(length), its sort_key (8 bytes, host
 * order: the file is read back by this sorter only, so the merge need not
 * compute it again), then the bytes; gathered in one go when it fits. */
static int spill_put_rec(VmSpill *sp, uint64_t key, const void *rec, uint32_t n) {
  uint8_t hdr[17];
  int h = util_put_varint(hdr, n);
  memcpy(hdr + h, &key, 8);
  h += 8;
  if (sp->wlen + (uint32_t)h + n < VM_SPILL_BLOCK) {
    memcpy(sp->wbuf + sp->wlen, hdr, (size_t)h);
    if (n) memcpy(sp->wbuf + sp->wlen + h, rec, n);
    sp->wlen += (uint32_t)h + n;
    return SHALE_OK;
  }
  int rc = spill_put(sp, hdr, (uint32_t)h);
  if (rc == SHALE_OK && n) rc = spill_put(sp, rec, n);
  return rc;
}

static int spill_get(VmCursor *c, VmSpill **out) {
  if (!c->spill) {
    VmSpill *sp = shale_malloc(sizeof *sp);
    if (!sp) return SHALE_NOMEM;
    memset(sp, 0, sizeof *sp);
    c->spill = sp;
  }
  VmSpill *sp = c->spill;
  int rc;
  if (!sp->file[0] && (rc = spill_open_file(&sp->file[0])) != SHALE_OK) return rc;
  if (!sp->wbuf && !(sp->wbuf = shale_malloc(VM_SPILL_BLOCK))) return SHALE_NOMEM;
  *out = sp;
  return SHALE_OK;
}

/* Room for one more run descriptor. */
static int runs_room(VmSpill *sp) {
  if (sp->nrun < sp->caprun) return SHALE_OK;
  int ncap = sp->caprun ? sp->caprun * 2 : 16;
  VmRunPos *r = shale_realloc(sp->runs, (size_t)ncap * sizeof *r);
  if (!r) return SHALE_NOMEM;
  sp->runs = r;
  sp->caprun = ncap;
  return SHALE_OK;
}

/* Sort the records in memory and append them to file 0 as a run. */
static int spill_run(VmCursor *c) {
  VmSpill *sp;
  int rc;
  if ((rc = spill_get(c, &sp)) != SHALE_OK) return rc;
  if ((rc = runs_room(sp)) != SHALE_OK) return rc;
  c->ki->corrupt = 0;
  sorter_sort(c);
  if (c->ki->corrupt) return SHALE_CORRUPT;
  sp->wfile = 0;
  VmRunPos *run = &sp->runs[sp->nrun];
  run->start = sp->fsize[0] + sp->wlen;
  run->file = 0;
  for (int i = 0; i < c->nsent; i++)
    if ((rc = spill_put_rec(sp, c->sent[i].key, c->sbuf + c->sent[i].off, c->sent[i].n)) !=
        SHALE_OK)
      return rc;
  if ((rc = spill_flush(sp)) != SHALE_OK) return rc;
  run->end = sp->fsize[0];
  sp->nrun++;
  c->slen = 0;
  c->nsent = 0;
  return SHALE_OK;
}

/* Read the bytes of r's run from `at` into its buffer (up to bufcap). */
static int run_fill(VmRun *r, int64_t at) {
  int64_t left = r->end - at;
  uint32_t k = left < (int64_t)r->bufcap ? (uint32_t)left : r->bufcap;
  int rc = os_read(r->f, r->buf, (int)k, at);
  if (rc) return rc;
  r->boff = at;
  r->blen = k;
  return SHALE_OK;
}

/* Load the next record of reader r (live = 0 at its run's end). */
static int run_next(VmCursor *c, VmRun *r) {
  if (r->pos >= r->end) {
    r->live = 0;
    return SHALE_OK;
  }
  int rc;
  int64_t avail = r->end - r->pos;
  int hk = avail < 17 ? (int)avail : 17; /* varint(length) and the key */
  if (r->blen == 0 || r->pos < r->boff || r->pos + hk > r->boff + r->blen) {
    if ((rc = run_fill(r, r->pos)) != SHALE_OK) return rc;
  }
  const uint8_t *p = r->buf + (r->pos - r->boff);
  uint64_t n;
  int h = util_get_varint_safe(p, p + hk, &n);
  if (h == 0 || h + 8 > hk || (int64_t)n > avail - h - 8) return SHALE_CORRUPT;
  memcpy(&r->key, p + h, 8);
  int64_t body = r->pos + h + 8;
  if (body + (int64_t)n <= r->boff + r->blen) {
    r->rec = (const char *)r->buf + (body - r->boff);
  } else if (n <= r->bufcap) {
    if ((rc = run_fill(r, body)) != SHALE_OK) return rc;
    r->rec = (const char *)r->buf;
  } else {
    if (r->bigcap < n) {
      char *z = shale_realloc(r->big, (size_t)n);
      if (!z) return SHALE_NOMEM;
      r->big = z;
      r->bigcap = (uint32_t)n;
    }
    if ((rc = os_read(r->f, r->big, (int)n, body)) != SHALE_OK) return rc;
    r->rec = r->big;
  }
  r->n = (uint32_t)n;
  r->pos = body + (int64_t)n;
  r->live = 1;
  return SHALE_OK;
}

/* Merge order of readers a and b (both live): key, record, then the
 * earlier run first (invariant 1). */
static int rd_less(VmCursor *c, const VmRun *a, const VmRun *b) {
  if (a->key != b->key) return a->key < b->key;
  int x = sort_tie(c, (const uint8_t *)a->rec, a->n, (const uint8_t *)b->rec, b->n);
  if (x) return x < 0;
  return a->run < b->run;
}

/* The merge order of readers i and j: one past its run's end sorts after
 * every live one. */
static int rd_before(VmCursor *c, const VmSpill *sp, int i, int j) {
  const VmRun *a = &sp->rd[i], *b = &sp->rd[j];
  if (!a->live) return 0;
  if (!b->live) return 1;
  return rd_less(c, a, b);
}

/* The merge's tournament (a loser tree) over the sp->nrd readers: nodes
 * nrd..2 * nrd - 1 are the readers, sp->heap[n] (1 <= n < nrd) the loser of
 * the match at node n, sp->heap[0] the winner, the reader of the smallest
 * record. When the winner moves on, one match a level from its leaf up
 * (log2(nrd) comparisons) finds the next. lt_build plays the matches below
 * node and returns their winner. */
static int lt_build(VmCursor *c, VmSpill *sp, int node) {
  if (node >= sp->nrd) return node - sp->nrd;
  int a = lt_build(c, sp, 2 * node), b = lt_build(c, sp, 2 * node + 1);
  if (rd_before(c, sp, b, a)) {
    sp->heap[node] = a;
    return b;
  }
  sp->heap[node] = b;
  return a;
}

static void lt_replay(VmCursor *c, VmSpill *sp) {
  int w = sp->heap[0];
  for (int node = (w + sp->nrd) / 2; node >= 1; node /= 2) {
    if (rd_before(c, sp, sp->heap[node], w)) {
      int t = sp->heap[node];
      sp->heap[node] = w;
      w = t;
    }
  }
  sp->heap[0] = w;
}

/* The read buffer of each of k merged runs: their share of VM_MERGE_BYTES
 * in whole VM_SPILL_MIN_BLOCKs, at most VM_SPILL_BLOCK. */
static uint32_t merge_block(int k) {
  if (k < 1) k = 1;
  uint32_t b = VM_MERGE_BYTES / (uint32_t)k / VM_SPILL_MIN_BLOCK * VM_SPILL_MIN_BLOCK;
  return b < VM_SPILL_MIN_BLOCK ? VM_SPILL_MIN_BLOCK : b > VM_SPILL_BLOCK ? VM_SPILL_BLOCK : b;
}

/* Room for k readers, each with a buffer of exactly merge_block(k) bytes
 * (one kept from a merge of fewer runs is larger: freed, so the buffers
 * stay within VM_MERGE_BYTES). */
static int readers_room(VmSpill *sp, int k) {
  if (k > sp->caprd) {
    VmRun *rd = shale_realloc(sp->rd, (size_t)k * sizeof *rd);
    if (!rd) return SHALE_NOMEM;
    memset(rd + sp->caprd, 0, (size_t)(k - sp->caprd) * sizeof *rd);
    sp->rd = rd;
    int *h = shale_realloc(sp->heap, (size_t)k * sizeof *h);
    if (!h) return SHALE_NOMEM;
    sp->heap = h;
    sp->caprd = k;
  }
  uint32_t blk = merge_block(k);
  for (int i = 0; i < k; i++) {
    VmRun *r = &sp->rd[i];
    if (r->buf && r->bufcap == blk) continue;
    shale_free(r->buf);
    r->bufcap = 0;
    if (!(r->buf = shale_malloc(blk))) return SHALE_NOMEM;
    r->bufcap = blk;
  }
  return SHALE_OK;
}

/* Start merging runs [first, first + k) (k <= VM_MERGE_MAX): one reader
 * each, the tournament played over them (nheap: the readers with a
 * record). */
static int merge_start(VmCursor *c, VmSpill *sp, int first, int k) {
  int rc = readers_room(sp, k);
  if (rc != SHALE_OK) return rc;
  sp->nrd = k;
  sp->nheap = 0;
  for (int i = 0; i < k; i++) {
    VmRun *r = &sp->rd[i];
    r->f = sp->file[sp->runs[first + i].file];
    r->start = r->pos = sp->runs[first + i].start;
    r->end = sp->runs[first + i].end;
    r->blen = 0;
    r->boff = 0;
    r->live = 0;
    r->run = first + i;
    if ((rc = run_next(c, r)) != SHALE_OK) return rc;
    sp->nheap += r->live;
  }
  if (k > 0) sp->heap[0] = lt_build(c, sp, 1);
  return SHALE_OK;
}

/* Advance the merge past its current (smallest) record. */
static int merge_step(VmCursor *c, VmSpill *sp) {
  if (sp->nheap == 0) return SHALE_OK;
  VmRun *r = &sp->rd[sp->heap[0]];
  int rc = run_next(c, r);
  if (rc) return rc;
  if (!r->live) sp->nheap--;
  if (sp->nheap > 0) lt_replay(c, sp);
  return SHALE_OK;
}

static const VmRun *merge_top(const VmSpill *sp) { return sp->nheap ? &sp->rd[sp->heap[0]] : NULL; }

/* One merge pass over more than VM_MERGE_MAX runs, all in file 0, into
 * file 1. Fewer than twice VM_MERGE_MAX: only the last nrun - VM_MERGE_MAX
 * + 1 runs become one (the others stay where they are), which leaves
 * VM_MERGE_MAX for the final merge and copies only that share of the
 * records. More: every VM_MERGE_MAX consecutive runs become one run, then
 * file 0 is emptied and the files swap. */
static int merge_pass(VmCursor *c, VmSpill *sp) {
  int rc;
  if (!sp->file[1] && (rc = spill_open_file(&sp->file[1])) != SHALE_OK) return rc;
  sp->wfile = 1;
  sp->fsize[1] = 0;
  sp->wlen = 0;
  int partial = sp->nrun < 2 * VM_MERGE_MAX;
  int nout = partial ? VM_MERGE_MAX - 1 : 0;
  for (int first = nout; first < sp->nrun; first += VM_MERGE_MAX) {
    int k = sp->nrun - first < VM_MERGE_MAX ? sp->nrun - first : VM_MERGE_MAX;
    int64_t start = sp->fsize[1] + sp->wlen;
    if ((rc = merge_start(c, sp, first, k)) != SHALE_OK) return rc;
    const VmRun *t;
    while ((t = merge_top(sp)) != NULL) {
      if ((rc = spill_put_rec(sp, t->key, t->rec, t->n)) != SHALE_OK) return rc;
      if ((rc = merge_step(c, sp)) != SHALE_OK) return rc;
    }
    if (c->ki->corrupt) return SHALE_CORRUPT;
    if ((rc = spill_flush(sp)) != SHALE_OK) return rc;
    /* runs[..nout) are rewritten while runs[first..] are still to read:
     * nout <= first, so no run still needed is overwritten */
    sp->runs[nout].start = start;
    sp->runs[nout].end = sp->fsize[1];
    sp->runs[nout].file = 1;
    nout++;
  }
  sp->nrun = nout;
  if (partial) return SHALE_OK;                        /* the final merge reads both files */
  for (int i = 0; i < nout; i++) sp->runs[i].file = 0; /* after the swap */
  if ((rc = os_truncate(sp->file[0], 0)) != SHALE_OK) return rc;
  OsFile *t = sp->file[0];
  sp->file[0] = sp->file[1];
  sp->file[1] = t;
  sp->fsize[0] = sp->fsize[1];
  sp->fsize[1] = 0;
  return SHALE_OK;
}

/* ---- the sorter's interface (vm_int.h) ---- */

void vm_sorter_open(VmCursor *c, KeyInfo *ki, int nfield) {
  c->kind = VMC_SORTER;
  c->ki = ki;
  c->nfield = nfield;
  const Collation *k0 = ki->ncol > 0 && ki->coll ? ki->coll[0] : NULL;
  c->keymode = ki->ncol == 0                      ? SORTKEY_NONE
               : !k0 || k0 == &record_coll_binary ? SORTKEY_BINARY
               : k0 == &record_coll_nocase        ? SORTKEY_NOCASE
                                                  : SORTKEY_NONE;
}

void vm_sorter_limit(VmCursor *c, int64_t lim, int64_t off) {
  if (off < 0) off = 0;
  const int64_t most = (int64_t)1 << 24; /* beyond that a plain sort */
  c->topn = lim > 0 && lim < most && off < most && lim + off < most ? lim + off : 0;
  c->live = 0;
}

int vm_sorter_topn_drops(VmCursor *c, const ShValue *key, int nkey, int *drop) {
  *drop = 0;
  if (c->kind != VMC_SORTER || !c->topn || c->nsent < c->topn || nkey < 1) return SHALE_OK;
  const VmSortEnt *e = &c->sent[0]; /* the heap's greatest (topn_insert) */
  c->ki->corrupt = 0;
  int r = record_compare_unpacked(c->ki, c->sbuf + e->off, e->n, key, nkey);
  if (c->ki->corrupt) return SHALE_CORRUPT;
  *drop = r <= 0;
  return SHALE_OK;
}

int vm_sorter_insert(Vm *v, VmCursor *c, const void *rec, uint32_t n) {
  if (c->topn) {
    c->ki->corrupt = 0;
    int rc = topn_insert(c, rec, n);
    if (rc) return rc;
    if (c->ki->corrupt) return SHALE_CORRUPT;
    /* kept records past the budget: from here on a plain sort (what was
     * dropped sorts after them anyway) */
    if (c->live > v->sorter_budget) c->topn = 0;
    return SHALE_OK;
  }
  /* the budget holds the records and their entries (SQLite counts its
   * list entries the same way), and the buffers grow no further */
  uint64_t budget = v->sorter_budget;
  uint64_t mem = c->slen + n + (uint64_t)(c->nsent + 1) * SORT_ENT_COST;
  uint64_t grown = (c->slen + n > c->scap ? c->slen + n : c->scap) +
                   (uint64_t)(c->nsent == c->capsent ? c->capsent + 1 : c->capsent) * SORT_ENT_COST;
  int grows = c->slen + n > c->scap || c->nsent == c->capsent;
  if (c->nsent > 0 && (mem > budget || (grows && grown > budget) || c->slen + n > UINT32_MAX)) {
    int rc = spill_run(c);
    if (rc) return rc;
  }
  return sorter_add(c, rec, n, budget);
}

int vm_sorter_sort(Vm *v, VmCursor *c, int *empty) {
  int rc;
  (void)v;
  c->ki->corrupt = 0;
  if (c->spill) {
    VmSpill *sp = c->spill;
    if (c->nsent > 0 && (rc = spill_run(c)) != SHALE_OK) return rc;
    /* every record is in the runs now: the in-memory buffers go before
     * the merge's are allocated (invariant 2) */
    vm_sorter_release(c);
    while (sp->nrun > VM_MERGE_MAX)
      if ((rc = merge_pass(c, sp)) != SHALE_OK) return rc;
    if ((rc = merge_start(c, sp, 0, sp->nrun)) != SHALE_OK) return rc;
    sp->merging = 1;
    if (c->ki->corrupt) return SHALE_CORRUPT;
    *empty = sp->nheap == 0;
    return SHALE_OK;
  }
  sorter_sort(c);
  if (c->ki->corrupt) return SHALE_CORRUPT;
  c->spos = 0;
  *empty = c->nsent == 0;
  return SHALE_OK;
}

int vm_sorter_next(VmCursor *c, int *more) {
  *more = 0;
  if (c->spill && c->spill->merging) {
    VmSpill *sp = c->spill;
    if (sp->nheap == 0) return SHALE_OK;
    c->ki->corrupt = 0;
    int rc = merge_step(c, sp);
    if (rc) return rc;
    if (c->ki->corrupt) return SHALE_CORRUPT;
    *more = sp->nheap > 0;
    return SHALE_OK;
  }
  if (c->spos < c->nsent) c->spos++;
  *more = c->spos < c->nsent;
  return SHALE_OK;
}

int vm_sorter_row(const VmCursor *c, const uint8_t **rec, uint32_t *n) {
  if (c->spill && c->spill->merging) {
    const VmRun *t = merge_top(c->spill);
    if (!t) return 0;
    *rec = (const uint8_t *)t->rec;
    *n = t->n;
    return 1;
  }
  if (c->spos >= c->nsent) return 0;
  *rec = c->sbuf + c->sent[c->spos].off;
  *n = c->sent[c->spos].n;
  return 1;
}

void vm_sorter_close(VmCursor *c) {
  c->slen = 0;
  c->nsent = 0;
  c->spos = 0;
  c->topn = 0;
  c->live = 0;
  VmSpill *sp = c->spill;
  if (!sp) return;
  spill_close_file(sp->file[0]);
  spill_close_file(sp->file[1]);
  for (int i = 0; i < sp->caprd; i++) {
    shale_free(sp->rd[i].buf);
    shale_free(sp->rd[i].big);
  }
  shale_free(sp->rd);
  shale_free(sp->heap);
  shale_free(sp->runs);
  shale_free(sp->wbuf);
  shale_free(sp);
  c->spill = NULL;
}

void vm_sorter_release(VmCursor *c) {
  shale_free(c->sbuf);
  shale_free(c->sent);
  shale_free(c->stmp);
  c->sbuf = NULL;
  c->sent = c->stmp = NULL;
  c->scap = 0;
  c->capsent = 0;
}
