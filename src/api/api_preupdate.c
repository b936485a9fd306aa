/*
 * api_preupdate.c -- the preupdate hook (shale_preupdate_hook and the
 * shale_preupdate_old/new/count/depth/blobwrite calls a callback makes), as
 * SQLite's sqlite3_preupdate_* API: the VM reports each row change of a
 * table before it happens (VmConnHooks.preupdate, vm_preupdate.c) and
 * the trampoline here hands it to the application's callback.
 *
 * Owns: db->pu_vals, the values handed out during one call (freed when the
 * callback returns).
 *
 * Invariants:
 *  1. db->pu.change is non-NULL exactly while a callback runs; old/new outside it
 *     are SHALE_MISUSE, count and depth answer 0 (as SQLite).
 *  2. Column i of a row is the table's column i: the rowid alias reads the
 *     rowid (key1 for old, key2 for new), a VIRTUAL generated column and a
 *     column past the end of the record (ADD COLUMN) NULL, as SQLite 3.40.1;
 *     a REAL column stored as an integer reads as REAL, except in the new
 *     row of an INSERT (SQLite unpacks that record without affinity).
 *     A WITHOUT ROWID table's record is its PRIMARY KEY index key: column i
 *     is read from its slot there (Column.storage), a VIRTUAL column has
 *     none (SHALE_RANGE), and the REAL test is made, as SQLite's, on the
 *     column whose number is the slot. The new row of an UPDATE is read as
 *     SQLite reads its new-row registers, which hold the columns in
 *     storage order (VIRTUAL ones last): column i is the i-th column that
 *     is not VIRTUAL, i past the key's fields SHALE_RANGE.
 *  3. db->hooks.preupdate is set exactly when a callback is registered.
 */
#include <string.h>

#include "api_int.h"

static const Table *find_table(shale *db, int idb, const char *name) {
  ApiSchema *as = idb >= 0 && idb < db->ndb ? db->dbx[idb].schema : NULL;
  return as && as->s ? schema_find_table(as->s, name) : NULL;
}

static void free_vals(shale *db) {
  for (int i = 0; i < 2 * db->pu.nvals; i++) shale_value_free(db->pu.vals[i]);
  shale_free(db->pu.vals);
  db->pu.vals = NULL;
  db->pu.nvals = 0;
}

static void tramp_preupdate(void *ctx, const VmPreupdate *pu) {
  shale *db = ctx;
  if (!db->cb.preupdate) return;
  const VmPreupdate *saved = db->pu.change;
  const Table *saved_tab = db->pu.tab;
  shale_value **saved_vals = db->pu.vals;
  int saved_n = db->pu.nvals;
  db->pu.change = pu;
  db->pu.tab = find_table(db, pu->db, pu->table);
  db->pu.vals = NULL;
  db->pu.nvals = 0;
  db->cb.preupdate(db->cb.preupdate_arg, db, pu->op, api_db_name(db, pu->db), pu->table, pu->key1,
                   pu->key2);
  free_vals(db);
  db->pu.change = saved;
  db->pu.tab = saved_tab;
  db->pu.vals = saved_vals;
  db->pu.nvals = saved_n;
}

void *shale_preupdate_hook(shale *db,
                           void (*cb)(void *, shale *, int, const char *, const char *, shale_int64,
                                      shale_int64),
                           void *arg) {
  if (!api_db_enter(db)) return NULL;
  void *old = db->cb.preupdate_arg;
  db->cb.preupdate = cb;
  db->cb.preupdate_arg = arg;
  db->hooks.preupdate = cb ? tramp_preupdate : NULL;
  api_leave(db);
  return old;
}

/* Column i of a WITHOUT ROWID record (invariant 2). side: the new row;
 * update: of an UPDATE. */
static int keyed_value(const Table *t, const uint8_t *rec, uint32_t n, int i, int side, int update,
                       ShValue *out) {
  const Column *c = &t->cols[i];
  int slot = c->storage, real = 0;
  if (side && update) {
    if (!t->pk_index || i >= t->pk_index->ncol) return SHALE_RANGE;
    c = NULL; /* the i-th column that is not VIRTUAL */
    for (int j = 0, k = 0; j < t->ncol && !c; j++)
      if (t->cols[j].storage >= 0 && k++ == i) c = &t->cols[j];
    if (!c) return SHALE_OK; /* NULL */
    slot = c->storage;
    real = c->affinity == AFF_REAL;
  } else {
    if (slot < 0) return SHALE_RANGE;
    real = !side && slot < t->ncol && t->cols[slot].affinity == AFF_REAL;
  }
  int rc = record_column(rec, n, slot, out); /* past the end: NULL */
  if (rc == SHALE_OK && real && out->type == SHALE_INTEGER) {
    out->type = SHALE_FLOAT;
    out->r = (double)out->i;
  }
  return rc;
}

/* Column i of a record as the hook reports it (invariant 2), into *out. */
static int row_value(const Table *t, const uint8_t *rec, uint32_t n, int64_t rowid, int i,
                     int realify, ShValue *out) {
  memset(out, 0, sizeof *out);
  out->type = SHALE_NULL;
  if (!t) return record_column(rec, n, i, out);
  const Column *c = &t->cols[i];
  if (i == t->rowid_alias) {
    out->type = SHALE_INTEGER;
    out->i = rowid;
    return SHALE_OK;
  }
  if (c->storage < 0) return SHALE_OK;
  int rc = record_column(rec, n, c->storage, out); /* past the end: NULL */
  if (rc == SHALE_OK && realify && out->type == SHALE_INTEGER && c->affinity == AFF_REAL) {
    out->type = SHALE_FLOAT;
    out->r = (double)out->i;
  }
  return rc;
}

static int get_value(shale *db, int side, int i, shale_value **out) {
  if (out) *out = NULL;
  const VmPreupdate *pu = db ? db->pu.change : NULL;
  if (!pu || !out) return SHALE_MISUSE;
  const uint8_t *rec = side ? pu->new_rec : pu->old_rec;
  uint32_t n = side ? pu->new_n : pu->old_n;
  if (!rec) return SHALE_MISUSE;
  int ncol = shale_preupdate_count(db);
  if (i < 0 || i >= ncol) return SHALE_RANGE;
  if (!db->pu.vals) {
    db->pu.vals = shale_malloc(2 * (size_t)ncol * sizeof *db->pu.vals);
    if (!db->pu.vals) return SHALE_NOMEM;
    memset(db->pu.vals, 0, 2 * (size_t)ncol * sizeof *db->pu.vals);
    db->pu.nvals = ncol;
  }
  shale_value **slot = &db->pu.vals[side * ncol + i];
  if (!*slot) {
    shale_value tmp;
    memset(&tmp, 0, sizeof tmp);
    const Table *t = db->pu.tab;
    int rc;
    if (t && t->without_rowid) {
      tmp.v.type = SHALE_NULL;
      rc = keyed_value(t, rec, n, i, side, pu->op == VM_HOOK_UPDATE, &tmp.v);
    } else {
      rc = row_value(t, rec, n, side ? pu->key2 : pu->key1, i, !side || pu->op != VM_HOOK_INSERT,
                     &tmp.v);
    }
    if (rc) return rc;
    *slot = shale_value_dup(&tmp);
    if (!*slot) return SHALE_NOMEM;
  }
  *out = *slot;
  return SHALE_OK;
}

int shale_preupdate_old(shale *db, int i, shale_value **out) { return get_value(db, 0, i, out); }
int shale_preupdate_new(shale *db, int i, shale_value **out) { return get_value(db, 1, i, out); }

int shale_preupdate_count(shale *db) {
  if (!db || !db->pu.change) return 0;
  if (db->pu.tab) return db->pu.tab->ncol;
  int n = 0;
  const VmPreupdate *pu = db->pu.change;
  if (pu->old_rec)
    record_column_count(pu->old_rec, pu->old_n, &n);
  else if (pu->new_rec)
    record_column_count(pu->new_rec, pu->new_n, &n);
  return n;
}

int shale_preupdate_depth(shale *db) { return db && db->pu.change ? db->pu.change->depth : 0; }

/* Shale's blob handles write in place without a preupdate report. */
int shale_preupdate_blobwrite(shale *db) { return -1; }
