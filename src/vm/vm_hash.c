/*
 * vm_hash.c -- hash aggregation: the table of groups behind the HashAgg*
 * opcodes. A GROUP BY whose order no index gives keeps one entry per group
 * here instead of sorting every input row: each row's key finds (or makes)
 * its group, whose state -- a range of registers, values and aggregate
 * contexts -- is swapped into the registers while the row is stepped.
 * At the end the groups are ordered by key and loaded one after the other
 * for the output code.
 *
 * Owns: a VmHashAgg per hash cursor (VmCursor.hash): the groups and their
 * copies of keys and text/blob state (in one arena), the bucket and order
 * arrays, and per state register a pool of spare aggregate-context blocks.
 * All of it is kept across resets (emptied, not freed), so a rerun with no
 * more groups than the last one allocates nothing.
 *
 * Invariants:
 *  1. At most one group is current (h->cur); its state lives in registers
 *     lo..lo+nstate-1 (values and VmAgg contexts), the HState entries of
 *     every other group hold theirs. Saving moves a register's context into
 *     the group and copies a text/blob value into the group's own buffer
 *     (unless it already points there); loading hands them back, values
 *     borrowed from the group's buffer.
 *  2. Keys are equal when record_value_compare says so under the key's collation;
 *     the hash is a function of that equivalence class: numbers by exact
 *     value (an integral real as the integer), BINARY text by bytes, NOCASE
 *     with ASCII folded, RTRIM without trailing spaces; under any other
 *     collation all text of a column hashes alike (correct, only slower).
 *  3. Groups are in creation order in list[0..ngroup) until HashAggSort
 *     orders them by key (they are distinct, so the order is total).
 *  4. Memory counted in bytes; a new key while bytes exceeds the Vm's
 *     sorter budget is refused (the caller sends its row to a sorter).
 *  5. A table opened with no state registers is a hash set (HashSetAdd:
 *     DISTINCT rows, the arguments of an aggregate's DISTINCT), never
 *     refused, never sorted. Past the sorter budget its new keys go to an
 *     index B-tree in a temporary database of its own (memory up to the
 *     cache bound, then a temp file): a key is in the set when the table or
 *     that tree holds it (the two are disjoint).
 */
#include <string.h>

#include "vm_int.h"

typedef struct HState {
  ShValue v;
  char *buf; /* the group's copy of a text/blob value (arena) */
  uint32_t cap;
  void *agg; /* aggregate context (shale_malloc) and its function */
  int agg_size;
  const FuncDef *def;
} HState;

typedef struct HGroup {
  struct HGroup *next; /* bucket chain */
  uint64_t hash;
  ShValue *key;
  HState st[];
} HGroup;

typedef struct HPool {
  void *head; /* free blocks chained through their first bytes */
  int size;
} HPool;

struct VmHashAgg {
  const KeyInfo *ki;
  int lo, nstate;
  UtilArena arena;
  HGroup **bucket;
  uint32_t nbucket;     /* a power of two, or 0 */
  HGroup **list, **tmp; /* tmp: the merge sort's second array (caplist too) */
  int ngroup, caplist;
  HGroup *cur;
  int pos;
  uint64_t bytes;
  HPool *pool;
  /* a hash set past the budget (invariant 5): its overflow tree */
  Btree *sbt;
  BtCursor *sbc;
  uint8_t *rec; /* the key's record */
  size_t reccap;
};

/* ---- hashing (invariant 2) ---- */

static uint64_t mix(uint64_t h, uint64_t x) {
  h = (h ^ x) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *z, uint32_t n, int fold) {
  for (uint32_t i = 0; i < n; i++) {
    uint8_t c = z[i];
    if (fold && c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
    h = (h ^ c) * 0x100000001B3ull;
  }
  return mix(h, n);
}

static uint64_t hash_value(const ShValue *x, const Collation *coll) {
  switch (x->type) {
    case SHALE_INTEGER:
      return mix(1, (uint64_t)x->i);
    case SHALE_FLOAT: {
      double r = x->r;
      if (r >= -9223372036854775808.0 && r < 9223372036854775808.0 && (double)(int64_t)r == r)
        return mix(1, (uint64_t)(int64_t)r);
      uint64_t bits;
      memcpy(&bits, &r, 8);
      return mix(2, bits);
    }
    case SHALE_TEXT: {
      uint32_t n = x->n;
      if (!coll || coll == &record_coll_binary) return hash_bytes(3, (const uint8_t *)x->z, n, 0);
      if (coll == &record_coll_nocase) return hash_bytes(3, (const uint8_t *)x->z, n, 1);
      if (coll == &record_coll_rtrim) {
        while (n > 0 && x->z[n - 1] == ' ') n--;
        return hash_bytes(3, (const uint8_t *)x->z, n, 0);
      }
      return 3;
    }
    case SHALE_BLOB:
      return hash_bytes(4, (const uint8_t *)x->z, x->n, 0);
    default:
      return 5;
  }
}

static const Collation *key_coll(const KeyInfo *ki, int i) { return ki->coll ? ki->coll[i] : NULL; }

static uint64_t hash_key(const KeyInfo *ki, const ShValue *key) {
  uint64_t h = 0;
  for (int i = 0; i < ki->ncol; i++) h = mix(h, hash_value(&key[i], key_coll(ki, i)));
  return h;
}

/* Key order (and equality: 0) of two keys. */
static int key_cmp(const KeyInfo *ki, const ShValue *a, const ShValue *b) {
  for (int i = 0; i < ki->ncol; i++) {
    int c = record_value_compare(&a[i], &b[i], key_coll(ki, i));
    if (c) return ki->desc && ki->desc[i] ? -c : c;
  }
  return 0;
}

/* ---- aggregate-context pools ---- */

static void pool_put(HPool *p, void *blk, int size) {
  if (!blk) return;
  if (size < (int)sizeof(void *) || (p->head && size != p->size)) {
    shale_free(blk);
    return;
  }
  p->size = size;
  memcpy(blk, &p->head, sizeof(void *));
  p->head = blk;
}

static void *pool_get(HPool *p, int *size) {
  void *blk = p->head;
  if (blk) {
    memcpy(&p->head, blk, sizeof(void *));
    *size = p->size;
  }
  return blk;
}

/* Finish an abandoned context (final, then its block back to the pool). */
static void state_abandon(Vm *v, HPool *pool, void *agg, int agg_size, const FuncDef *def) {
  if (!def) {
    pool_put(pool, agg, agg_size);
    return;
  }
  FuncCtx ctx;
  func_ctx_init(&ctx, def);
  ctx.conn = v->conn;
  ctx.cb = v->cb;
  ctx.agg = agg;
  ctx.agg_size = agg_size;
  func_agg_finish_keep(&ctx);
  pool_put(pool, ctx.agg_spare, ctx.agg_spare_size);
  func_ctx_reset(&ctx);
}

/* ---- a hash set's overflow tree (invariant 5) ---- */

static void set_spill_close(VmHashAgg *h) {
  if (h->sbc) btree_cursor_close(h->sbc);
  h->sbc = NULL;
  if (h->sbt) {
    btree_rollback(h->sbt);
    btree_close(h->sbt);
  }
  h->sbt = NULL;
}

static int set_spill_open(VmHashAgg *h) {
  uint32_t root;
  int rc = btree_open(NULL, "", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &h->sbt);
  if (rc == SHALE_OK) rc = btree_begin(h->sbt, BTREE_TXN_WRITE);
  if (rc == SHALE_OK) rc = btree_create_table(h->sbt, BTREE_BLOBKEY, &root);
  if (rc == SHALE_OK)
    rc = btree_cursor_open(h->sbt, root, 1, record_compare, (void *)h->ki, &h->sbc);
  if (rc != SHALE_OK) set_spill_close(h);
  return rc;
}

/* Look key up in the overflow tree, adding it when absent. */
static int set_spill_add(VmHashAgg *h, const ShValue *key, int *found) {
  int rc;
  if (!h->sbc && (rc = set_spill_open(h)) != SHALE_OK) return rc;
  int nkey = h->ki->ncol;
  size_t n = record_encoded_size(key, nkey);
  if (n > UINT32_MAX) return SHALE_TOOBIG;
  if (n > h->reccap) {
    uint8_t *b = shale_realloc(h->rec, n);
    if (!b) return SHALE_NOMEM;
    h->rec = b;
    h->reccap = n;
  }
  record_encode(key, nkey, h->rec);
  KeyInfo *ki = (KeyInfo *)h->ki;
  ki->corrupt = 0;
  int res;
  if ((rc = btree_seek_key(h->sbc, h->rec, (uint32_t)n, &res)) != SHALE_OK) return rc;
  if (ki->corrupt) return SHALE_CORRUPT;
  if (res == 0 && !btree_eof(h->sbc)) {
    *found = 1;
    return SHALE_OK;
  }
  return btree_insert(h->sbc, 0, h->rec, (uint32_t)n, 0, 0);
}

/* ---- lifecycle ---- */

void vm_hash_reset(Vm *v, VmHashAgg *h) {
  if (!h) return;
  for (int g = 0; g < h->ngroup; g++) {
    HGroup *grp = h->list[g];
    for (int i = 0; i < h->nstate; i++) {
      HState *s = &grp->st[i];
      if (s->agg || s->def) state_abandon(v, &h->pool[i], s->agg, s->agg_size, s->def);
    }
  }
  if (h->nbucket) memset(h->bucket, 0, sizeof(HGroup *) * h->nbucket);
  h->ngroup = 0;
  h->cur = NULL;
  h->pos = 0;
  h->bytes = 0;
  util_arena_reset(&h->arena);
  set_spill_close(h);
}

void vm_hash_free(Vm *v, VmHashAgg *h) {
  if (!h) return;
  vm_hash_reset(v, h);
  for (int i = 0; i < h->nstate; i++) {
    void *blk;
    int size;
    while ((blk = pool_get(&h->pool[i], &size)) != NULL) shale_free(blk);
  }
  util_arena_free(&h->arena);
  shale_free(h->bucket);
  shale_free(h->list);
  shale_free(h->tmp);
  shale_free(h->pool);
  shale_free(h->rec);
  shale_free(h);
}

int vm_hash_open(Vm *v, VmCursor *c, const KeyInfo *ki, int lo, int nstate) {
  VmHashAgg *h = c->hash;
  if (h && (h->lo != lo || h->nstate != nstate)) {
    vm_hash_free(v, h);
    h = c->hash = NULL;
  }
  if (!h) {
    h = shale_malloc(sizeof *h);
    if (!h) return SHALE_NOMEM;
    memset(h, 0, sizeof *h);
    h->pool = shale_malloc(sizeof(HPool) * (size_t)(nstate ? nstate : 1));
    if (!h->pool) {
      shale_free(h);
      return SHALE_NOMEM;
    }
    memset(h->pool, 0, sizeof(HPool) * (size_t)(nstate ? nstate : 1));
    util_arena_init(&h->arena, 16384);
    h->lo = lo;
    h->nstate = nstate;
    c->hash = h;
  } else {
    vm_hash_reset(v, h);
  }
  h->ki = ki;
  return SHALE_OK;
}

/* ---- moving state between the registers and a group (invariant 1) ---- */

static int state_save(Vm *v, VmHashAgg *h, HGroup *g) {
  for (int i = 0; i < h->nstate; i++) {
    HState *s = &g->st[i];
    ShValue *r = &v->reg[h->lo + i];
    VmAgg *slot = &v->agg[h->lo + i];
    if ((r->type == SHALE_TEXT || r->type == SHALE_BLOB) && r->z != s->buf) {
      if (r->n + 1 > s->cap) {
        uint32_t cap = r->n + 1 > 2 * s->cap ? r->n + 1 : 2 * s->cap;
        char *z = util_arena_alloc(&h->arena, cap);
        if (!z) return SHALE_NOMEM;
        h->bytes += cap;
        s->buf = z;
        s->cap = cap;
      }
      if (r->n) memcpy(s->buf, r->z, r->n);
      s->buf[r->n] = 0;
      s->v = *r;
      s->v.z = s->buf;
    } else {
      s->v = *r;
    }
    s->v.flags &= VAL_SUBTYPE;
    value_clear(r);
    s->agg = slot->agg;
    s->agg_size = slot->agg_size;
    s->def = slot->def;
    slot->agg = NULL;
    slot->agg_size = 0;
    slot->def = NULL;
  }
  return SHALE_OK;
}

static void state_load(Vm *v, VmHashAgg *h, HGroup *g) {
  for (int i = 0; i < h->nstate; i++) {
    HState *s = &g->st[i];
    ShValue *r = &v->reg[h->lo + i];
    VmAgg *slot = &v->agg[h->lo + i];
    value_clear(r);
    *r = s->v;
    if (slot->agg || slot->def) {
      state_abandon(v, &h->pool[i], slot->agg, slot->agg_size, slot->def);
      slot->agg = NULL;
      slot->def = NULL;
    }
    slot->agg = s->agg;
    slot->agg_size = s->agg_size;
    slot->def = s->def;
    s->agg = NULL;
    s->agg_size = 0;
    s->def = NULL;
    if (!slot->agg && !slot->spare) slot->spare = pool_get(&h->pool[i], &slot->spare_size);
  }
}

int vm_hash_save(Vm *v, VmCursor *c) {
  VmHashAgg *h = c->hash;
  if (!h || !h->cur) return SHALE_OK;
  int rc = state_save(v, h, h->cur);
  h->cur = NULL;
  return rc;
}

static int grow_buckets(VmHashAgg *h) {
  uint32_t n = h->nbucket ? h->nbucket * 2 : 64;
  HGroup **b = shale_malloc(sizeof(HGroup *) * n);
  if (!b) return SHALE_NOMEM;
  memset(b, 0, sizeof(HGroup *) * n);
  for (int g = 0; g < h->ngroup; g++) {
    HGroup *grp = h->list[g];
    uint32_t k = (uint32_t)grp->hash & (n - 1);
    grp->next = b[k];
    b[k] = grp;
  }
  shale_free(h->bucket);
  h->bucket = b;
  h->nbucket = n;
  return SHALE_OK;
}

static HGroup *group_new(Vm *v, VmHashAgg *h, const ShValue *key, uint64_t hash) {
  int nkey = h->ki->ncol;
  if (h->ngroup == h->caplist) {
    int cap = h->caplist ? h->caplist * 2 : 64;
    HGroup **l = shale_realloc(h->list, sizeof(HGroup *) * (size_t)cap);
    if (!l) return NULL;
    h->list = l;
    HGroup **t = shale_realloc(h->tmp, sizeof(HGroup *) * (size_t)cap);
    if (!t) return NULL;
    h->tmp = t;
    h->caplist = cap;
  }
  if ((uint32_t)h->ngroup >= h->nbucket / 2 && grow_buckets(h) != SHALE_OK) return NULL;
  size_t sz = sizeof(HGroup) + sizeof(HState) * (size_t)h->nstate;
  HGroup *g = util_arena_zalloc(&h->arena, sz);
  ShValue *k = util_arena_alloc(&h->arena, sizeof(ShValue) * (size_t)(nkey ? nkey : 1));
  if (!g || !k) return NULL;
  h->bytes += sz + sizeof(ShValue) * (size_t)nkey + 2 * sizeof(HGroup *);
  for (int i = 0; i < nkey; i++) {
    k[i] = key[i];
    k[i].flags = 0;
    if (key[i].type == SHALE_TEXT || key[i].type == SHALE_BLOB) {
      char *z = util_arena_alloc(&h->arena, key[i].n + 1);
      if (!z) return NULL;
      if (key[i].n) memcpy(z, key[i].z, key[i].n);
      z[key[i].n] = 0;
      k[i].z = z;
      h->bytes += key[i].n + 1;
    }
  }
  for (int i = 0; i < h->nstate; i++) value_set_null(&g->st[i].v);
  g->key = k;
  g->hash = hash;
  uint32_t b = (uint32_t)hash & (h->nbucket - 1);
  g->next = h->bucket[b];
  h->bucket[b] = g;
  h->list[h->ngroup++] = g;
  (void)v;
  return g;
}

int vm_hash_find(Vm *v, VmCursor *c, const ShValue *key, int *refused) {
  VmHashAgg *h = c->hash;
  *refused = 0;
  if (!h) return SHALE_INTERNAL;
  uint64_t hash = hash_key(h->ki, key);
  if (h->cur && h->cur->hash == hash && key_cmp(h->ki, h->cur->key, key) == 0) return SHALE_OK;
  HGroup *g = NULL;
  if (h->nbucket)
    for (g = h->bucket[(uint32_t)hash & (h->nbucket - 1)]; g; g = g->next)
      if (g->hash == hash && key_cmp(h->ki, g->key, key) == 0) break;
  if (!g && h->bytes > v->sorter_budget) {
    *refused = 1;
    return SHALE_OK;
  }
  if (h->cur) {
    int rc = state_save(v, h, h->cur);
    h->cur = NULL;
    if (rc) return rc;
  }
  if (!g) {
    g = group_new(v, h, key, hash);
    if (!g) return SHALE_NOMEM;
  }
  state_load(v, h, g);
  h->cur = g;
  return SHALE_OK;
}

/* A hash set (a table of groups without state: DISTINCT): *found = 1 if
 * key is in it, else it is added (to the overflow tree once the table is
 * past the budget: invariant 5). */
int vm_hash_add(Vm *v, VmCursor *c, const ShValue *key, int *found) {
  VmHashAgg *h = c->hash;
  *found = 0;
  if (!h) return SHALE_INTERNAL;
  uint64_t hash = hash_key(h->ki, key);
  if (h->nbucket)
    for (HGroup *g = h->bucket[(uint32_t)hash & (h->nbucket - 1)]; g; g = g->next)
      if (g->hash == hash && key_cmp(h->ki, g->key, key) == 0) {
        *found = 1;
        return SHALE_OK;
      }
  if (h->sbc || h->bytes > v->sorter_budget) return set_spill_add(h, key, found);
  return group_new(v, h, key, hash) ? SHALE_OK : SHALE_NOMEM;
}

/* ---- output in key order (invariant 3) ---- */

int vm_hash_sort(Vm *v, VmCursor *c) {
  VmHashAgg *h = c->hash;
  (void)v;
  if (!h) return SHALE_INTERNAL;
  h->pos = 0;
  int n = h->ngroup;
  if (n < 2) return SHALE_OK;
  HGroup **src = h->list, **dst = h->tmp;
  for (int w = 1; w < n; w *= 2) {
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = key_cmp(h->ki, src[j]->key, src[i]->key) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    HGroup **t = src;
    src = dst;
    dst = t;
  }
  if (src != h->list) memcpy(h->list, src, sizeof(HGroup *) * (size_t)n);
  return SHALE_OK;
}

int vm_hash_next(Vm *v, VmCursor *c, const ShValue *bound, int *loaded) {
  VmHashAgg *h = c->hash;
  *loaded = 0;
  if (!h) return SHALE_INTERNAL;
  if (h->cur) {
    int rc = state_save(v, h, h->cur);
    h->cur = NULL;
    if (rc) return rc;
  }
  if (h->pos >= h->ngroup) return SHALE_OK;
  HGroup *g = h->list[h->pos];
  if (bound && key_cmp(h->ki, g->key, bound) >= 0) return SHALE_OK;
  h->pos++;
  /* the output code's AggFinal keeps each finished context as its
   * register's spare: hand those back to the pools first */
  for (int i = 0; i < h->nstate; i++) {
    VmAgg *slot = &v->agg[h->lo + i];
    if (slot->spare && !slot->agg) {
      pool_put(&h->pool[i], slot->spare, slot->spare_size);
      slot->spare = NULL;
      slot->spare_size = 0;
    }
  }
  state_load(v, h, g);
  *loaded = 1;
  return SHALE_OK;
}
