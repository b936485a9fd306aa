/*
 * schema.c -- Schema maps, lookups, the built-in sqlite_schema table and
 * index KeyInfo construction.
 *
 * Owns: the SchemaMap slot arrays (shale_malloc) and the arena every object
 * lives in.
 *
 * Invariants:
 *  1. A map's cap is 0 or a power of two and n < cap * 3 / 4; removed slots
 *     become tombstones (key != NULL, val == NULL) so probes stay correct.
 *  2. Hashing folds ASCII upper case only, matching util_stricmp; a live
 *     slot keeps its key's hash, compared before the key itself.
 */
#include "schema.h"

#include <string.h>

static const char *const tomb_key = "";

static uint32_t name_hash(const char *z) {
  uint32_t h = 2166136261u;
  for (const unsigned char *u = (const unsigned char *)z; *u; u++) {
    unsigned c = *u;
    c |= (unsigned)(c - 'A' < 26u) << 5; /* ASCII upper case folded, branch-free */
    h = (h ^ c) * 16777619u;
  }
  return h;
}

/* Slot index of key, or of the first free slot for it (-1 if the map is
 * empty). */
static int map_probe_h(const SchemaMap *m, const char *key, uint32_t h, int *found) {
  *found = 0;
  if (m->cap == 0) return -1;
  uint32_t mask = (uint32_t)m->cap - 1;
  uint32_t i = h & mask;
  int first_tomb = -1;
  for (;;) {
    const struct SchemaMapSlot *s = &m->slots[i];
    if (!s->key) return first_tomb >= 0 ? first_tomb : (int)i;
    if (s->val == NULL) {
      if (first_tomb < 0) first_tomb = (int)i;
    } else if (s->hash == h && (strcmp(s->key, key) == 0 || util_stricmp(s->key, key) == 0)) {
      *found = 1;
      return (int)i;
    }
    i = (i + 1) & mask;
  }
}

static int map_probe(const SchemaMap *m, const char *key, int *found) {
  if (m->cap == 0) {
    *found = 0;
    return -1;
  }
  return map_probe_h(m, key, name_hash(key), found);
}

static void *map_get(const SchemaMap *m, const char *key) {
  int found;
  int i = key ? map_probe(m, key, &found) : -1;
  return i >= 0 && found ? m->slots[i].val : NULL;
}

static int map_grow(SchemaMap *m) {
  int ncap = m->cap ? m->cap * 2 : 16;
  struct SchemaMapSlot *ns = shale_malloc(sizeof *ns * (size_t)ncap);
  if (!ns) return SHALE_NOMEM;
  memset(ns, 0, sizeof *ns * (size_t)ncap);
  SchemaMap nm = {0, ncap, ns};
  for (int i = 0; i < m->cap; i++) {
    if (!m->slots[i].key || !m->slots[i].val) continue;
    int found, j = map_probe_h(&nm, m->slots[i].key, m->slots[i].hash, &found);
    nm.slots[j] = m->slots[i];
    nm.n++;
  }
  shale_free(m->slots);
  *m = nm;
  return SHALE_OK;
}

static int map_put(SchemaMap *m, const char *key, void *val) {
  int found;
  if ((m->n + 1) * 4 >= m->cap * 3) {
    int rc = map_grow(m);
    if (rc != SHALE_OK) return rc;
  }
  uint32_t h = name_hash(key);
  int i = map_probe_h(m, key, h, &found);
  if (!found) m->n++;
  m->slots[i].key = key;
  m->slots[i].val = val;
  m->slots[i].hash = h;
  return SHALE_OK;
}

static void map_del(SchemaMap *m, const char *key) {
  int found;
  int i = key ? map_probe(m, key, &found) : -1;
  if (i < 0 || !found) return;
  m->slots[i].key = tomb_key;
  m->slots[i].val = NULL;
  /* n keeps counting the tombstone so the load factor bounds probes */
}

void *schema_map_next(const SchemaMap *m, int *pos) {
  while (*pos < m->cap) {
    const struct SchemaMapSlot *s = &m->slots[(*pos)++];
    if (s->key && s->val) return s->val;
  }
  return NULL;
}

/* ---- the sqlite_schema table ---- */

static int add_schema_table(Schema *s) {
  static const char *const names[5] = {"type", "name", "tbl_name", "rootpage", "sql"};
  static const char *const types[5] = {"text", "text", "text", "int", "text"};
  Table *t = util_arena_zalloc(&s->arena, sizeof *t);
  Column *c = util_arena_zalloc(&s->arena, sizeof *c * 5);
  if (!t || !c) return SHALE_NOMEM;
  t->name = "sqlite_schema";
  t->root = 1;
  t->ncol = 5;
  t->cols = c;
  t->nstored = 5;
  t->rowid_alias = -1;
  t->is_schema = 1;
  for (int i = 0; i < 5; i++) {
    c[i].name = names[i];
    c[i].type = types[i];
    c[i].affinity = schema_type_affinity(types[i]);
    c[i].storage = i;
  }
  s->schema_table = t;
  int rc = map_put(&s->tables, "sqlite_schema", t);
  if (rc == SHALE_OK) rc = map_put(&s->tables, "sqlite_master", t);
  return rc;
}

Schema *schema_new(void) {
  Schema *s = shale_malloc(sizeof *s);
  if (!s) return NULL;
  memset(s, 0, sizeof *s);
  s->text_enc = 1; /* UTF-8 */
  util_arena_init(&s->arena, 16384);
  if (add_schema_table(s) != SHALE_OK) {
    schema_free(s);
    return NULL;
  }
  return s;
}

void schema_free(Schema *s) {
  if (!s) return;
  shale_free(s->tables.slots);
  shale_free(s->indexes.slots);
  shale_free(s->views.slots);
  shale_free(s->triggers.slots);
  util_arena_free(&s->arena);
  shale_free(s);
}

/* A NULL schema (a compile without a database, as in unit tests) holds no
 * objects. */
Table *schema_find_table(const Schema *s, const char *name) {
  return s ? map_get(&s->tables, name) : NULL;
}
int schema_has_user_tables(const Schema *s) {
  /* add_schema_table's two entries; n counts tombstones too, so a schema
   * whose tables were all dropped still answers 1 (a probe decides) */
  return s && (s->tables.n > 2 || !s->schema_table);
}
Index *schema_find_index(const Schema *s, const char *name) {
  return s ? map_get(&s->indexes, name) : NULL;
}
View *schema_find_view(const Schema *s, const char *name) {
  return s ? map_get(&s->views, name) : NULL;
}
Trigger *schema_find_trigger(const Schema *s, const char *name) {
  return map_get(&s->triggers, name);
}

int schema_add_table(Schema *s, Table *t) { return map_put(&s->tables, t->name, t); }
int schema_add_view(Schema *s, View *v) { return map_put(&s->views, v->name, v); }
int schema_add_trigger(Schema *s, Trigger *t) { return map_put(&s->triggers, t->name, t); }

int schema_add_index(Schema *s, Index *idx) {
  int rc = map_put(&s->indexes, idx->name, idx);
  if (rc != SHALE_OK) return rc;
  Table *t = idx->table;
  if (t) {
    Index **pp = &t->indexes;
    while (*pp && *pp != idx) pp = &(*pp)->next;
    if (!*pp) {
      idx->next = NULL;
      *pp = idx;
    }
  }
  return SHALE_OK;
}

void schema_remove_table(Schema *s, const char *name) { map_del(&s->tables, name); }
void schema_remove_view(Schema *s, const char *name) { map_del(&s->views, name); }
void schema_remove_trigger(Schema *s, const char *name) { map_del(&s->triggers, name); }

void schema_remove_index(Schema *s, const char *name) {
  Index *idx = map_get(&s->indexes, name);
  if (!idx) return;
  if (idx->table) {
    Index **pp = &idx->table->indexes;
    while (*pp && *pp != idx) pp = &(*pp)->next;
    if (*pp) *pp = idx->next;
  }
  map_del(&s->indexes, name);
}

/* ---- columns, affinity, keys ---- */

int schema_table_column_index(const Table *t, const char *name) {
  for (int i = 0; i < t->ncol; i++)
    if (util_stricmp(t->cols[i].name, name) == 0) return i;
  return -1;
}

char schema_type_affinity(const char *type) {
  return record_type_affinity(type ? type : "", type ? (int)strlen(type) : 0);
}

const char *schema_index_origin_name(const Index *idx) {
  return idx->origin == INDEX_ORIGIN_PK ? "pk" : idx->origin == INDEX_ORIGIN_UNIQUE ? "u" : "c";
}

KeyInfo *schema_index_keyinfo(const Index *idx, int *unknown) {
  int n = idx->ncol;
  size_t sz = sizeof(KeyInfo) + sizeof(const Collation *) * (size_t)n + (size_t)n;
  KeyInfo *ki = shale_malloc(sz);
  if (!ki) return NULL;
  const Collation **coll = (const Collation **)(ki + 1);
  uint8_t *desc = (uint8_t *)(coll + n);
  if (unknown) *unknown = 0;
  for (int i = 0; i < n; i++) {
    const char *name = idx->cols[i].coll;
    const Collation *c = name ? record_collation_find(name) : NULL;
    if (name && !c && unknown) *unknown = 1;
    coll[i] = c;
    desc[i] = idx->cols[i].desc;
  }
  ki->ncol = n;
  ki->coll = coll;
  ki->desc = desc;
  ki->corrupt = 0;
  return ki;
}

/* ---- validation ---- */

static int check_table(const Schema *s, const Table *t) {
  if (!t->name || t->ncol < 0 || (t->ncol > 0 && !t->cols)) return 0;
  if (t->rowid_alias >= t->ncol || t->rowid_alias < -1) return 0;
  if (t->rowid_alias >= 0) {
    const Column *c = &t->cols[t->rowid_alias];
    if (t->without_rowid || !c->type || util_stricmp(c->type, "INTEGER") || t->npk != 1) return 0;
  }
  if (t->autoincrement && t->rowid_alias < 0) return 0;
  int nstored = 0;
  for (int i = 0; i < t->ncol; i++) {
    const Column *c = &t->cols[i];
    if (!c->name) return 0;
    if ((c->storage < 0) != (c->hidden == COL_VIRTUAL)) return 0;
    if (c->storage >= 0) {
      if (c->storage >= t->nstored) return 0;
      for (int j = 0; j < i; j++)
        if (t->cols[j].storage == c->storage) return 0;
      nstored++;
    }
    if ((c->hidden == COL_VIRTUAL || c->hidden == COL_STORED) != (c->gen != NULL) && !t->is_schema)
      return 0;
  }
  if (t->without_rowid ? nstored > t->nstored : nstored != t->nstored) return 0;
  for (int k = 0; k < t->npk; k++) {
    if (t->pk_cols[k] < 0 || t->pk_cols[k] >= t->ncol || !t->cols[t->pk_cols[k]].pk) return 0;
    if (t->without_rowid && t->cols[t->pk_cols[k]].storage > k) return 0;
  }
  if (t->without_rowid && (!t->pk_index || t->pk_index->root != t->root)) return 0;
  for (const Index *x = t->indexes; x; x = x->next) {
    if (x->table != t || x->nkey < 1 || x->ncol < x->nkey || !x->name) return 0;
    if (x->root && schema_find_index(s, x->name) != x) return 0;
    for (int k = 0; k < x->ncol; k++) {
      const IndexColumn *ic = &x->cols[k];
      if (ic->col >= t->ncol || ic->col < INDEX_COL_EXPR || !ic->coll) return 0;
      if ((ic->col == INDEX_COL_EXPR) != (ic->expr != NULL)) return 0;
    }
    if (!t->without_rowid && (x->ncol != x->nkey + 1 || x->cols[x->nkey].col != INDEX_COL_ROWID))
      return 0;
    if (t->without_rowid && x != t->pk_index)
      for (int j = 0; j < t->npk; j++) { /* every PK column is in the stored key */
        int have = 0;
        for (int k = 0; k < x->ncol; k++) have |= x->cols[k].col == t->pk_cols[j];
        if (!have) return 0;
      }
  }
  return 1;
}

int schema_check(const Schema *s) {
  int pos = 0;
  const Table *t;
  while ((t = schema_map_next(&s->tables, &pos)) != NULL) {
    if (schema_find_table(s, t->name) != t) return SHALE_INTERNAL;
    if (!check_table(s, t)) return SHALE_INTERNAL;
  }
  pos = 0;
  const Index *x;
  while ((x = schema_map_next(&s->indexes, &pos)) != NULL) {
    if (!x->table || schema_find_table(s, x->table->name) != x->table) return SHALE_INTERNAL;
    const Index *y = x->table->indexes;
    while (y && y != x) y = y->next;
    if (!y) return SHALE_INTERNAL; /* in the map but not in its table's list */
  }
  return SHALE_OK;
}
