/*
 * tdb.c -- TEST SCAFFOLDING: tables, indexes and rows over the btree layer,
 * for the interop and crash tests (see tdb.h for what it does and does not
 * model). It owns the Btree it opens and the in-memory table descriptions.
 *
 * Invariants:
 *  1. Every cursor an operation opens is closed before it returns, so that
 *     btree_commit() never finds one open.
 *  2. db->in_txn is 1 exactly while a transaction begun by tdb_begin() is
 *     open; operations outside one wrap themselves (tdb.h invariant 3).
 *  3. A table row is written before its index keys and deleted after them;
 *     an index key that should exist and does not is reported as
 *     SHALE_CORRUPT ("index ... lacks the key of row ...").
 */
#include "tdb.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/record/record.h"

typedef struct TdbTable TdbTable;

/* How a b-tree of keys is ordered: rki (src/record's record_compare) orders
 * the tree; ki (tdb_rec.c's independent comparator) re-checks that order in
 * tdb_check. Both come from the same column collations. */
typedef struct Order {
  TdbKeyInfo ki;
  KeyInfo rki;
  const Collation *coll[TDB_MAXCOL + 1];
} Order;

static void order_init(Order *o, int n, const uint8_t *coll) {
  memset(o, 0, sizeof *o);
  o->ki.nfield = n;
  for (int i = 0; i < n; i++) {
    o->ki.coll[i] = coll[i];
    o->coll[i] = coll[i] == TDB_NOCASE ? &record_coll_nocase : &record_coll_binary;
  }
  o->rki.ncol = n;
  o->rki.coll = o->coll;
}

typedef struct TdbIndex {
  const TdbIndexDef *def; /* NULL for an automatic index */
  char *name;             /* owned */
  TdbTable *tab;
  uint32_t root;
  int nkey;                   /* fields in a key */
  int keycol[TDB_MAXCOL + 1]; /* table column of each key field; -1 = rowid */
  Order ord;
  int txn_new;
} TdbIndex;

struct TdbTable {
  const TdbTableDef *def;
  uint32_t root;
  int keycol[TDB_MAXCOL]; /* WITHOUT ROWID: table column of each stored field */
  Order ord;              /* WITHOUT ROWID: by the PK fields */
  TdbIndex *idx[TDB_MAXIDX];
  int nidx;
  int txn_new;
};

typedef struct SchemaEnt {
  char type[8];
  char *name, *tbl;
  uint32_t root;
} SchemaEnt;

struct Tdb {
  Btree *bt;
  TdbTable *tab[TDB_MAXTAB];
  int ntab;
  SchemaEnt *ents;
  int nent;
  int in_txn;
  char err[512];
};

static int fail(Tdb *db, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Tdb *db, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(db->err, sizeof db->err, fmt, ap);
  va_end(ap);
  const char *m = btree_errmsg(db->bt);
  if (m && k > 0 && k < (int)sizeof db->err - 4)
    snprintf(db->err + k, sizeof db->err - (size_t)k, " [%s]", m);
  return rc;
}

const char *tdb_errmsg(Tdb *db) { return db->err; }
Btree *tdb_btree(Tdb *db) { return db->bt; }
int tdb_in_txn(Tdb *db) { return db->in_txn; }

void tdb_set_journal(Tdb *db, int journal_mode, int sync_level) {
  Pager *p = btree_pager(db->bt);
  pager_set_journal_mode(p, journal_mode);
  pager_set_synchronous(p, sync_level);
}

/* ---- transactions ---- */

static int rd_begin(Tdb *db, int *own) {
  *own = 0;
  if (btree_txn_state(db->bt) != PAGER_TXN_NONE) return SHALE_OK;
  int rc = btree_begin(db->bt, BTREE_TXN_READ);
  if (rc) return fail(db, rc, "btree_begin(read) failed: %d", rc);
  *own = 1;
  return SHALE_OK;
}

static int rd_end(Tdb *db, int own, int rc) {
  if (own) {
    int rc2 = btree_commit(db->bt);
    if (rc == SHALE_OK && rc2) rc = fail(db, rc2, "ending the read transaction failed: %d", rc2);
  }
  return rc;
}

static void forget_new(Tdb *db, int keep) {
  for (int t = 0; t < db->ntab; t++) {
    TdbTable *tab = db->tab[t];
    for (int i = 0; i < tab->nidx; i++) {
      TdbIndex *ix = tab->idx[i];
      if (ix->txn_new && !keep && !tab->txn_new) {
        shale_free(ix->name);
        shale_free(ix);
        tab->idx[i] = tab->idx[--tab->nidx];
        i--;
      } else {
        ix->txn_new = 0;
      }
    }
    if (tab->txn_new && !keep) {
      for (int i = 0; i < tab->nidx; i++) {
        shale_free(tab->idx[i]->name);
        shale_free(tab->idx[i]);
      }
      shale_free(tab);
      db->tab[t] = db->tab[--db->ntab];
      t--;
    } else {
      tab->txn_new = 0;
    }
  }
}

/* Begin a write transaction; if that fails (e.g. SHALE_BUSY), end the read
 * transaction btree_begin may have started on the way, so that no SHARED
 * lock is left behind to block other connections. */
static int begin_write(Tdb *db) {
  int had_read = btree_txn_state(db->bt) != PAGER_TXN_NONE;
  int rc = btree_begin(db->bt, BTREE_TXN_WRITE);
  if (rc && !had_read && btree_txn_state(db->bt) != PAGER_TXN_NONE) btree_rollback(db->bt);
  return rc;
}

static int wr_begin(Tdb *db, int *own) {
  *own = 0;
  if (db->in_txn) return SHALE_OK;
  int rc = begin_write(db);
  if (rc) return fail(db, rc, "btree_begin(write) failed: %d", rc);
  *own = 1;
  return SHALE_OK;
}

static int wr_end(Tdb *db, int own, int rc) {
  if (!own) return rc;
  if (rc == SHALE_OK) {
    rc = btree_commit(db->bt);
    if (rc == SHALE_OK) {
      forget_new(db, 1);
      return SHALE_OK;
    }
    fail(db, rc, "commit failed: %d", rc);
  }
  btree_rollback(db->bt);
  btree_commit(db->bt); /* end the read transaction left behind */
  forget_new(db, 0);
  return rc;
}

int tdb_begin(Tdb *db) {
  if (db->in_txn) return fail(db, SHALE_MISUSE, "transaction already open");
  int rc = begin_write(db);
  if (rc) return fail(db, rc, "btree_begin(write) failed: %d", rc);
  db->in_txn = 1;
  return SHALE_OK;
}

int tdb_commit(Tdb *db) {
  if (!db->in_txn) return fail(db, SHALE_MISUSE, "no transaction");
  int rc = btree_commit(db->bt);
  if (rc) return fail(db, rc, "commit failed: %d", rc); /* still open: roll back */
  db->in_txn = 0;
  forget_new(db, 1);
  return SHALE_OK;
}

int tdb_rollback(Tdb *db) {
  int rc = SHALE_OK;
  if (btree_txn_state(db->bt) != PAGER_TXN_NONE) {
    rc = btree_rollback(db->bt);
    if (rc) fail(db, rc, "rollback failed: %d", rc);
    int rc2 = btree_commit(db->bt);
    if (rc == SHALE_OK && rc2 && btree_txn_state(db->bt) != PAGER_TXN_NONE) rc = rc2;
  }
  db->in_txn = 0;
  forget_new(db, 0);
  return rc;
}

/* ---- row I/O ---- */

void tdb_row_clear(TdbRow *row) {
  shale_free(row->buf);
  row->buf = NULL;
  row->n = 0;
}

/* Copy the payload under the cursor into fresh memory. */
static int read_payload(Tdb *db, BtCursor *c, uint8_t **out, uint32_t *n) {
  uint32_t sz = btree_payload_size(c);
  uint8_t *buf = shale_malloc(sz ? sz : 1);
  if (!buf) return fail(db, SHALE_NOMEM, "out of memory");
  int rc = btree_payload_read(c, 0, sz, buf);
  if (rc) {
    shale_free(buf);
    return fail(db, rc, "reading a payload failed: %d", rc);
  }
  *out = buf;
  *n = sz;
  return SHALE_OK;
}

/* Read the row under the cursor into row, values in table column order. */
static int read_row(Tdb *db, TdbTable *t, BtCursor *c, TdbRow *row) {
  const TdbTableDef *d = t->def;
  uint32_t n;
  row->buf = NULL;
  row->n = 0;
  int rc = read_payload(db, c, &row->buf, &n);
  if (rc) return rc;
  TdbValue v[TDB_MAXCOL + 1];
  int nf;
  rc = tdb_record_decode(row->buf, n, v, TDB_MAXCOL + 1, &nf);
  if (rc) {
    tdb_row_clear(row);
    return fail(db, SHALE_CORRUPT, "table %s: malformed record", d->name);
  }
  if (nf > d->ncols) nf = d->ncols;
  for (int i = 0; i < d->ncols; i++) row->v[i] = tdb_null();
  if (d->without_rowid) {
    for (int k = 0; k < nf; k++) row->v[t->keycol[k]] = v[k];
    row->rowid = 0;
  } else {
    for (int k = 0; k < nf; k++) row->v[k] = v[k];
    row->rowid = btree_rowid(c);
    if (d->ipk) row->v[d->ipk - 1] = tdb_int(row->rowid);
  }
  row->n = d->ncols;
  return SHALE_OK;
}

/* Encode n values into fresh memory. */
static int encode(Tdb *db, const TdbValue *v, int n, uint8_t **out, uint32_t *len) {
  uint32_t sz = tdb_record_size(v, n);
  uint8_t *b = shale_malloc(sz);
  if (!b) return fail(db, SHALE_NOMEM, "out of memory");
  *len = tdb_record_encode(v, n, b);
  *out = b;
  return SHALE_OK;
}

/* The record stored in the table tree for a row (vals normalised). */
static int table_record(Tdb *db, TdbTable *t, const TdbValue *vals, uint8_t **out, uint32_t *n) {
  const TdbTableDef *d = t->def;
  TdbValue v[TDB_MAXCOL];
  for (int i = 0; i < d->ncols; i++) v[i] = d->without_rowid ? vals[t->keycol[i]] : vals[i];
  if (!d->without_rowid && d->ipk) v[d->ipk - 1] = tdb_null();
  return encode(db, v, d->ncols, out, n);
}

static int index_key(Tdb *db, TdbIndex *ix, const TdbValue *vals, int64_t rowid, uint8_t **out,
                     uint32_t *n) {
  TdbValue v[TDB_MAXCOL + 1];
  for (int k = 0; k < ix->nkey; k++)
    v[k] = ix->keycol[k] < 0 ? tdb_int(rowid) : vals[ix->keycol[k]];
  return encode(db, v, ix->nkey, out, n);
}

/* Copy vals, putting the rowid in the INTEGER PRIMARY KEY column. */
static void normalise(TdbTable *t, const TdbValue *vals, int64_t rowid, TdbValue *out) {
  for (int i = 0; i < t->def->ncols; i++) out[i] = vals[i];
  if (!t->def->without_rowid && t->def->ipk) out[t->def->ipk - 1] = tdb_int(rowid);
}

static int cursor(Tdb *db, uint32_t root, int wr, Order *o, BtCursor **c) {
  int rc = btree_cursor_open(db->bt, root, wr, o ? record_compare : NULL, o ? &o->rki : NULL, c);
  if (rc) return fail(db, rc, "btree_cursor_open(%u) failed: %d", root, rc);
  return SHALE_OK;
}

static int index_insert(Tdb *db, TdbIndex *ix, const TdbValue *vals, int64_t rowid) {
  uint8_t *key;
  uint32_t n;
  BtCursor *c;
  int rc = index_key(db, ix, vals, rowid, &key, &n);
  if (rc) return rc;
  rc = cursor(db, ix->root, 1, &ix->ord, &c);
  if (rc == SHALE_OK) {
    rc = btree_insert(c, 0, key, n, 0, 0);
    if (rc) fail(db, rc, "index %s: insert of row %" PRId64 " failed: %d", ix->name, rowid, rc);
    btree_cursor_close(c);
  }
  shale_free(key);
  return rc;
}

static int index_remove(Tdb *db, TdbIndex *ix, const TdbValue *vals, int64_t rowid) {
  uint8_t *key;
  uint32_t n;
  BtCursor *c;
  int res = 1;
  int rc = index_key(db, ix, vals, rowid, &key, &n);
  if (rc) return rc;
  rc = cursor(db, ix->root, 1, &ix->ord, &c);
  if (rc == SHALE_OK) {
    rc = btree_seek_key(c, key, n, &res);
    if (rc) {
      fail(db, rc, "index %s: seek failed: %d", ix->name, rc);
    } else if (res != 0 || btree_eof(c)) {
      rc = fail(db, SHALE_CORRUPT, "index %s lacks the key of row %" PRId64, ix->name, rowid);
    } else {
      rc = btree_delete(c);
      if (rc) fail(db, rc, "index %s: delete failed: %d", ix->name, rc);
    }
    btree_cursor_close(c);
  }
  shale_free(key);
  return rc;
}

static void to_shvalue(const TdbValue *v, ShValue *out) {
  switch (v->type) {
    case TDB_NULL:
      value_set_null(out);
      break;
    case TDB_INT:
      value_set_int(out, v->i);
      break;
    case TDB_REAL:
      value_set_real(out, v->r);
      break;
    case TDB_TEXT:
      value_set_text(out, (const char *)v->p, v->n);
      break;
    default:
      value_set_blob(out, v->p, v->n);
  }
}

/* A WITHOUT ROWID row is found by its PK alone (the rest may differ). */
typedef struct PkSeek {
  KeyInfo *ki;
  int n;
  ShValue key[TDB_MAXCOL];
} PkSeek;

static int pk_cmp(void *ctx, const void *rec, uint32_t n) {
  PkSeek *ps = ctx;
  return record_compare_unpacked(ps->ki, rec, n, ps->key, ps->n);
}

/* Position c on the row (rowid or PK of vals); *found. */
static int seek_row(Tdb *db, TdbTable *t, BtCursor *c, int64_t rowid, const TdbValue *vals,
                    int *found) {
  int res = 1, rc;
  *found = 0;
  if (t->def->without_rowid) {
    PkSeek ps;
    ps.ki = &t->ord.rki;
    ps.n = t->def->npk;
    for (int i = 0; i < ps.n; i++) to_shvalue(&vals[t->def->pk[i]], &ps.key[i]);
    rc = btree_seek_cmp(c, pk_cmp, &ps, &res);
  } else {
    rc = btree_seek_rowid(c, rowid, &res);
  }
  if (rc) return fail(db, rc, "table %s: seek failed: %d", t->def->name, rc);
  *found = res == 0 && !btree_eof(c);
  return SHALE_OK;
}

static TdbTable *find_table(Tdb *db, const char *name) {
  for (int i = 0; i < db->ntab; i++)
    if (!util_stricmp(db->tab[i]->def->name, name)) return db->tab[i];
  return NULL;
}

static TdbIndex *find_index(Tdb *db, const char *name) {
  for (int i = 0; i < db->ntab; i++)
    for (int k = 0; k < db->tab[i]->nidx; k++)
      if (!util_stricmp(db->tab[i]->idx[k]->name, name)) return db->tab[i]->idx[k];
  return NULL;
}

static Order *table_ord(TdbTable *t) { return t->def->without_rowid ? &t->ord : NULL; }

static int do_insert(Tdb *db, TdbTable *t, int64_t rowid, const TdbValue *vals) {
  BtCursor *c;
  int found, rc;
  uint8_t *rec;
  uint32_t n;
  rc = cursor(db, t->root, 1, table_ord(t), &c);
  if (rc) return rc;
  rc = seek_row(db, t, c, rowid, vals, &found);
  if (rc == SHALE_OK && found)
    rc = fail(db, SHALE_CONSTRAINT, "table %s: row %" PRId64 " exists", t->def->name, rowid);
  if (rc == SHALE_OK) rc = table_record(db, t, vals, &rec, &n);
  if (rc == SHALE_OK) {
    rc = btree_insert(c, t->def->without_rowid ? 0 : rowid, rec, n, 0, 0);
    if (rc) fail(db, rc, "table %s: insert of row %" PRId64 " failed: %d", t->def->name, rowid, rc);
    shale_free(rec);
  }
  btree_cursor_close(c);
  for (int i = 0; rc == SHALE_OK && i < t->nidx; i++) rc = index_insert(db, t->idx[i], vals, rowid);
  return rc;
}

/* Delete the row (by rowid, or by the PK in vals); NOTFOUND if absent. */
static int do_delete(Tdb *db, TdbTable *t, int64_t rowid, const TdbValue *vals) {
  BtCursor *c;
  TdbRow old;
  int found, rc;
  rc = cursor(db, t->root, 0, table_ord(t), &c);
  if (rc) return rc;
  rc = seek_row(db, t, c, rowid, vals, &found);
  if (rc == SHALE_OK && !found)
    rc = fail(db, SHALE_NOTFOUND, "table %s: no row %" PRId64, t->def->name, rowid);
  if (rc == SHALE_OK) rc = read_row(db, t, c, &old);
  btree_cursor_close(c);
  if (rc) return rc;
  for (int i = 0; rc == SHALE_OK && i < t->nidx; i++)
    rc = index_remove(db, t->idx[i], old.v, rowid);
  if (rc == SHALE_OK) rc = cursor(db, t->root, 1, table_ord(t), &c);
  if (rc == SHALE_OK) {
    rc = seek_row(db, t, c, rowid, old.v, &found);
    if (rc == SHALE_OK && !found)
      rc = fail(db, SHALE_CORRUPT, "table %s: row %" PRId64 " vanished", t->def->name, rowid);
    if (rc == SHALE_OK) {
      rc = btree_delete(c);
      if (rc) fail(db, rc, "table %s: delete failed: %d", t->def->name, rc);
    }
    btree_cursor_close(c);
  }
  tdb_row_clear(&old);
  return rc;
}

static TdbTable *table_or_fail(Tdb *db, const char *name) {
  TdbTable *t = find_table(db, name);
  if (!t) fail(db, SHALE_ERROR, "no such table: %s", name);
  return t;
}

int tdb_insert(Tdb *db, const char *table, int64_t rowid, const TdbValue *vals) {
  TdbTable *t = table_or_fail(db, table);
  if (!t) return SHALE_ERROR;
  TdbValue v[TDB_MAXCOL];
  normalise(t, vals, rowid, v);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  return wr_end(db, own, do_insert(db, t, rowid, v));
}

int tdb_update(Tdb *db, const char *table, int64_t rowid, const TdbValue *vals) {
  TdbTable *t = table_or_fail(db, table);
  if (!t) return SHALE_ERROR;
  TdbValue v[TDB_MAXCOL];
  normalise(t, vals, rowid, v);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  rc = do_delete(db, t, rowid, v);
  if (rc == SHALE_OK) rc = do_insert(db, t, rowid, v);
  return wr_end(db, own, rc);
}

int tdb_delete(Tdb *db, const char *table, int64_t rowid) {
  TdbTable *t = table_or_fail(db, table);
  if (!t) return SHALE_ERROR;
  if (t->def->without_rowid) return fail(db, SHALE_MISUSE, "%s is WITHOUT ROWID", table);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  return wr_end(db, own, do_delete(db, t, rowid, NULL));
}

int tdb_delete_pk(Tdb *db, const char *table, const TdbValue *vals) {
  TdbTable *t = table_or_fail(db, table);
  if (!t) return SHALE_ERROR;
  if (!t->def->without_rowid) return fail(db, SHALE_MISUSE, "%s has a rowid", table);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  return wr_end(db, own, do_delete(db, t, 0, vals));
}

static int do_get(Tdb *db, TdbTable *t, int64_t rowid, const TdbValue *vals, TdbRow *row,
                  int *found) {
  BtCursor *c;
  int own, rc = rd_begin(db, &own);
  row->buf = NULL;
  row->n = 0;
  *found = 0;
  if (rc) return rc;
  rc = cursor(db, t->root, 0, table_ord(t), &c);
  if (rc == SHALE_OK) {
    rc = seek_row(db, t, c, rowid, vals, found);
    if (rc == SHALE_OK && *found) rc = read_row(db, t, c, row);
    btree_cursor_close(c);
  }
  return rd_end(db, own, rc);
}

int tdb_get(Tdb *db, const char *table, int64_t rowid, TdbRow *row, int *found) {
  TdbTable *t = table_or_fail(db, table);
  row->buf = NULL;
  *found = 0;
  if (!t) return SHALE_ERROR;
  return do_get(db, t, rowid, NULL, row, found);
}

int tdb_get_pk(Tdb *db, const char *table, const TdbValue *vals, TdbRow *row, int *found) {
  TdbTable *t = table_or_fail(db, table);
  row->buf = NULL;
  *found = 0;
  if (!t) return SHALE_ERROR;
  return do_get(db, t, 0, vals, row, found);
}

int tdb_scan(Tdb *db, const char *table, TdbRowFn fn, void *ctx) {
  TdbTable *t = table_or_fail(db, table);
  if (!t) return SHALE_ERROR;
  BtCursor *c;
  int own, rc = rd_begin(db, &own), eof = 0, stop = 0;
  if (rc) return rc;
  rc = cursor(db, t->root, 0, table_ord(t), &c);
  if (rc == SHALE_OK) {
    rc = btree_first(c, &eof);
    while (rc == SHALE_OK && !eof && !stop) {
      TdbRow row;
      rc = read_row(db, t, c, &row);
      if (rc) break;
      stop = fn(ctx, &row);
      tdb_row_clear(&row);
      if (!stop) rc = btree_next(c, &eof);
    }
    if (rc) fail(db, rc, "scan of %s failed: %d", table, rc);
    btree_cursor_close(c);
  }
  rc = rd_end(db, own, rc);
  return rc ? rc : stop;
}

int tdb_scan_index(Tdb *db, const char *index, TdbRowFn fn, void *ctx) {
  TdbIndex *ix = find_index(db, index);
  if (!ix) return fail(db, SHALE_ERROR, "no such index: %s", index);
  BtCursor *c;
  int own, rc = rd_begin(db, &own), eof = 0, stop = 0;
  if (rc) return rc;
  rc = cursor(db, ix->root, 0, &ix->ord, &c);
  if (rc == SHALE_OK) {
    rc = btree_first(c, &eof);
    while (rc == SHALE_OK && !eof && !stop) {
      TdbRow row;
      uint32_t n;
      row.rowid = 0;
      rc = read_payload(db, c, &row.buf, &n);
      if (rc) break;
      if (tdb_record_decode(row.buf, n, row.v, TDB_MAXCOL + 1, &row.n)) {
        tdb_row_clear(&row);
        rc = fail(db, SHALE_CORRUPT, "index %s: malformed key", index);
        break;
      }
      if (row.n > TDB_MAXCOL + 1) row.n = TDB_MAXCOL + 1;
      stop = fn(ctx, &row);
      tdb_row_clear(&row);
      if (!stop) rc = btree_next(c, &eof);
    }
    btree_cursor_close(c);
  }
  rc = rd_end(db, own, rc);
  return rc ? rc : stop;
}

int tdb_count(Tdb *db, const char *name, int64_t *n) {
  TdbTable *t = find_table(db, name);
  TdbIndex *ix = t ? NULL : find_index(db, name);
  *n = 0;
  if (!t && !ix) return fail(db, SHALE_ERROR, "no such table or index: %s", name);
  BtCursor *c;
  int own, rc = rd_begin(db, &own);
  if (rc) return rc;
  rc = t ? cursor(db, t->root, 0, table_ord(t), &c) : cursor(db, ix->root, 0, &ix->ord, &c);
  if (rc == SHALE_OK) {
    rc = btree_count(c, n);
    if (rc) fail(db, rc, "count of %s failed: %d", name, rc);
    btree_cursor_close(c);
  }
  return rd_end(db, own, rc);
}

/* ---- schema ---- */

static void free_ents(Tdb *db) {
  for (int i = 0; i < db->nent; i++) {
    shale_free(db->ents[i].name);
    shale_free(db->ents[i].tbl);
  }
  shale_free(db->ents);
  db->ents = NULL;
  db->nent = 0;
}

static char *text_dup(const TdbValue *v) {
  if (v->type != TDB_TEXT) return util_strdup("");
  char *s = shale_malloc(v->n + 1);
  if (s) {
    memcpy(s, v->p, v->n);
    s[v->n] = 0;
  }
  return s;
}

/* Read sqlite_schema into db->ents (needs a transaction). */
static int load_schema(Tdb *db) {
  free_ents(db);
  if (btree_page_count(db->bt) == 0) return SHALE_OK;
  BtCursor *c;
  int eof = 0, cap = 0;
  int rc = cursor(db, 1, 0, NULL, &c);
  if (rc) return rc;
  rc = btree_first(c, &eof);
  while (rc == SHALE_OK && !eof) {
    uint8_t *buf;
    uint32_t n;
    TdbValue v[5];
    int nf;
    rc = read_payload(db, c, &buf, &n);
    if (rc) break;
    if (tdb_record_decode(buf, n, v, 5, &nf) || nf < 5) {
      shale_free(buf);
      rc = fail(db, SHALE_CORRUPT, "malformed sqlite_schema row");
      break;
    }
    if (db->nent == cap) {
      cap = cap ? cap * 2 : 16;
      SchemaEnt *e = shale_realloc(db->ents, sizeof *e * (size_t)cap);
      if (!e) {
        shale_free(buf);
        rc = fail(db, SHALE_NOMEM, "out of memory");
        break;
      }
      db->ents = e;
    }
    SchemaEnt *e = &db->ents[db->nent];
    memset(e, 0, sizeof *e);
    snprintf(e->type, sizeof e->type, "%.*s", v[0].type == TDB_TEXT ? (int)v[0].n : 0,
             v[0].type == TDB_TEXT ? (const char *)v[0].p : "");
    e->name = text_dup(&v[1]);
    e->tbl = text_dup(&v[2]);
    e->root = v[3].type == TDB_INT ? (uint32_t)v[3].i : 0;
    db->nent++;
    shale_free(buf);
    if (!e->name || !e->tbl) {
      rc = fail(db, SHALE_NOMEM, "out of memory");
      break;
    }
    rc = btree_next(c, &eof);
  }
  btree_cursor_close(c);
  if (rc) free_ents(db);
  return rc;
}

static SchemaEnt *find_ent(Tdb *db, const char *type, const char *name) {
  for (int i = 0; i < db->nent; i++)
    if (!strcmp(db->ents[i].type, type) && !util_stricmp(db->ents[i].name, name))
      return &db->ents[i];
  return NULL;
}

static int schema_insert(Tdb *db, const char *type, const char *name, const char *tbl,
                         uint32_t root, const char *sql) {
  BtCursor *c;
  int empty = 1;
  int64_t rowid = 1;
  uint8_t *rec = NULL;
  uint32_t n = 0;
  TdbValue v[5] = {tdb_text(type, (uint32_t)strlen(type)), tdb_text(name, (uint32_t)strlen(name)),
                   tdb_text(tbl, (uint32_t)strlen(tbl)), tdb_int(root),
                   sql ? tdb_text(sql, (uint32_t)strlen(sql)) : tdb_null()};
  int rc = cursor(db, 1, 1, NULL, &c);
  if (rc) return rc;
  rc = btree_last(c, &empty);
  if (rc == SHALE_OK && !empty) rowid = btree_rowid(c) + 1;
  if (rc == SHALE_OK) rc = encode(db, v, 5, &rec, &n);
  if (rc == SHALE_OK) {
    rc = btree_insert(c, rowid, rec, n, 0, 0);
    shale_free(rec);
  }
  if (rc) fail(db, rc, "writing the sqlite_schema row of %s failed: %d", name, rc);
  btree_cursor_close(c);
  return rc;
}

static int bump_cookie(Tdb *db) {
  uint32_t v;
  int rc = btree_get_meta(db->bt, BTREE_META_SCHEMA_COOKIE, &v);
  if (rc == SHALE_OK) rc = btree_update_meta(db->bt, BTREE_META_SCHEMA_COOKIE, v + 1);
  if (rc) fail(db, rc, "schema cookie update failed: %d", rc);
  return rc;
}

static TdbTable *new_table(Tdb *db, const TdbTableDef *d) {
  if (db->ntab == TDB_MAXTAB || d->ncols > TDB_MAXCOL || d->ncols < 1) return NULL;
  TdbTable *t = shale_malloc(sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->def = d;
  if (d->without_rowid) {
    int k = 0;
    for (int i = 0; i < d->npk; i++) t->keycol[k++] = d->pk[i];
    for (int c = 0; c < d->ncols; c++) {
      int in_pk = 0;
      for (int i = 0; i < d->npk; i++) in_pk |= d->pk[i] == c;
      if (!in_pk) t->keycol[k++] = c;
    }
    uint8_t coll[TDB_MAXCOL];
    for (int i = 0; i < d->npk; i++) coll[i] = d->coll[d->pk[i]];
    order_init(&t->ord, d->npk, coll);
  }
  db->tab[db->ntab++] = t;
  return t;
}

/* An index over table t on cols[0..ncols) (def may be NULL: automatic). */
static TdbIndex *new_index(TdbTable *t, const TdbIndexDef *def, const char *name, int ncols,
                           const int *cols) {
  const TdbTableDef *d = t->def;
  if (t->nidx == TDB_MAXIDX) return NULL;
  TdbIndex *ix = shale_malloc(sizeof *ix);
  if (!ix) return NULL;
  memset(ix, 0, sizeof *ix);
  ix->name = util_strdup(name);
  if (!ix->name) {
    shale_free(ix);
    return NULL;
  }
  ix->def = def;
  ix->tab = t;
  int k = 0;
  for (int i = 0; i < ncols && k < TDB_MAXCOL; i++) ix->keycol[k++] = cols[i];
  if (d->without_rowid) {
    for (int i = 0; i < d->npk; i++) {
      int have = 0;
      for (int j = 0; j < ncols; j++) have |= cols[j] == d->pk[i];
      if (!have && k < TDB_MAXCOL + 1) ix->keycol[k++] = d->pk[i];
    }
  } else {
    ix->keycol[k++] = -1;
  }
  ix->nkey = k;
  uint8_t coll[TDB_MAXCOL + 1];
  for (int i = 0; i < k; i++) coll[i] = ix->keycol[i] < 0 ? TDB_BINARY : d->coll[ix->keycol[i]];
  order_init(&ix->ord, k, coll);
  t->idx[t->nidx++] = ix;
  return ix;
}

/* The automatic indexes of a table (FORMAT-db.md §7), numbered from 1 in
 * declaration order: the PRIMARY KEY (none for INTEGER PRIMARY KEY; for a
 * WITHOUT ROWID table it takes its number but has no tree: the table is
 * it), then each UNIQUE constraint. Returns how many trees there are. */
typedef struct AutoIdx {
  char name[200];
  int ncols;
  const int *cols;
} AutoIdx;

static int auto_indexes(const TdbTableDef *d, AutoIdx *out) {
  int n = 0, num = 1;
  if (d->npk > 0 && !d->ipk) {
    if (!d->without_rowid) {
      snprintf(out[n].name, sizeof out[n].name, "sqlite_autoindex_%s_%d", d->name, num);
      out[n].ncols = d->npk;
      out[n++].cols = d->pk;
    }
    num++;
  }
  for (int u = 0; u < d->nunique && u < TDB_MAXUNIQUE; u++, num++) {
    snprintf(out[n].name, sizeof out[n].name, "sqlite_autoindex_%s_%d", d->name, num);
    out[n].ncols = d->unique_ncols[u];
    out[n++].cols = d->unique_cols[u];
  }
  return n;
}

int tdb_create_table(Tdb *db, const TdbTableDef *d) {
  if (find_table(db, d->name)) return fail(db, SHALE_ERROR, "table %s already exists", d->name);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  uint32_t root = 0;
  TdbTable *t = new_table(db, d);
  if (!t) return wr_end(db, own, fail(db, SHALE_NOMEM, "cannot describe table %s", d->name));
  t->txn_new = 1;
  rc = btree_create_table(db->bt, d->without_rowid ? BTREE_BLOBKEY : BTREE_INTKEY, &root);
  if (rc) fail(db, rc, "btree_create_table failed: %d", rc);
  t->root = root;
  if (rc == SHALE_OK) rc = schema_insert(db, "table", d->name, d->name, root, d->sql);
  AutoIdx ai[TDB_MAXUNIQUE + 1];
  int nai = auto_indexes(d, ai);
  for (int i = 0; i < nai && rc == SHALE_OK; i++) {
    TdbIndex *ix = new_index(t, NULL, ai[i].name, ai[i].ncols, ai[i].cols);
    if (!ix) rc = fail(db, SHALE_NOMEM, "out of memory");
    if (rc == SHALE_OK) {
      ix->txn_new = 1;
      rc = btree_create_table(db->bt, BTREE_BLOBKEY, &ix->root);
      if (rc) fail(db, rc, "btree_create_table failed: %d", rc);
    }
    if (rc == SHALE_OK) rc = schema_insert(db, "index", ai[i].name, d->name, ix->root, NULL);
  }
  if (rc == SHALE_OK) rc = bump_cookie(db);
  return wr_end(db, own, rc);
}

typedef struct FillCtx {
  Tdb *db;
  TdbIndex *ix;
  int rc;
} FillCtx;

static int fill_one(void *ctx, const TdbRow *row) {
  FillCtx *f = ctx;
  f->rc = index_insert(f->db, f->ix, row->v, row->rowid);
  return f->rc != SHALE_OK;
}

/* The index is filled by a scan of the table with a second (write) cursor
 * open on the new index tree: cursors on different trees do not interact. */
int tdb_create_index(Tdb *db, const TdbIndexDef *d) {
  TdbTable *t = table_or_fail(db, d->table);
  if (!t) return SHALE_ERROR;
  if (find_index(db, d->name)) return fail(db, SHALE_ERROR, "index %s already exists", d->name);
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  TdbIndex *ix = new_index(t, d, d->name, d->ncols, d->cols);
  if (!ix) return wr_end(db, own, fail(db, SHALE_NOMEM, "cannot describe index %s", d->name));
  ix->txn_new = 1;
  rc = btree_create_table(db->bt, BTREE_BLOBKEY, &ix->root);
  if (rc) fail(db, rc, "btree_create_table failed: %d", rc);
  if (rc == SHALE_OK) rc = schema_insert(db, "index", d->name, t->def->name, ix->root, d->sql);
  if (rc == SHALE_OK) rc = bump_cookie(db);
  if (rc == SHALE_OK) {
    FillCtx f = {db, ix, SHALE_OK};
    rc = tdb_scan(db, t->def->name, fill_one, &f);
    if (f.rc) rc = f.rc;
  }
  return wr_end(db, own, rc);
}

int tdb_bind_table(Tdb *db, const TdbTableDef *d) {
  if (find_table(db, d->name)) return fail(db, SHALE_ERROR, "table %s already bound", d->name);
  int own, rc = rd_begin(db, &own);
  if (rc) return rc;
  rc = load_schema(db);
  SchemaEnt *e = rc ? NULL : find_ent(db, "table", d->name);
  AutoIdx ai[TDB_MAXUNIQUE + 1];
  SchemaEnt *ae[TDB_MAXUNIQUE + 1];
  int nai = auto_indexes(d, ai);
  if (rc == SHALE_OK && !e) rc = fail(db, SHALE_NOTFOUND, "no table %s in sqlite_schema", d->name);
  for (int i = 0; i < nai && rc == SHALE_OK; i++) {
    ae[i] = find_ent(db, "index", ai[i].name);
    if (!ae[i]) rc = fail(db, SHALE_NOTFOUND, "no index %s in sqlite_schema", ai[i].name);
  }
  if (rc == SHALE_OK) {
    TdbTable *t = new_table(db, d);
    if (!t)
      rc = fail(db, SHALE_NOMEM, "cannot describe table %s", d->name);
    else
      t->root = e->root;
    for (int i = 0; t && i < nai && rc == SHALE_OK; i++) {
      TdbIndex *ix = new_index(t, NULL, ai[i].name, ai[i].ncols, ai[i].cols);
      if (!ix)
        rc = fail(db, SHALE_NOMEM, "out of memory");
      else
        ix->root = ae[i]->root;
    }
  }
  return rd_end(db, own, rc);
}

int tdb_bind_index(Tdb *db, const TdbIndexDef *d) {
  TdbTable *t = table_or_fail(db, d->table);
  if (!t) return SHALE_ERROR;
  int own, rc = rd_begin(db, &own);
  if (rc) return rc;
  rc = load_schema(db);
  SchemaEnt *e = rc ? NULL : find_ent(db, "index", d->name);
  if (rc == SHALE_OK && !e) rc = fail(db, SHALE_NOTFOUND, "no index %s in sqlite_schema", d->name);
  if (rc == SHALE_OK) {
    TdbIndex *ix = new_index(t, d, d->name, d->ncols, d->cols);
    if (!ix)
      rc = fail(db, SHALE_NOMEM, "cannot describe index %s", d->name);
    else
      ix->root = e->root;
  }
  return rd_end(db, own, rc);
}

int tdb_set_user_version(Tdb *db, uint32_t v) {
  int own, rc = wr_begin(db, &own);
  if (rc) return rc;
  rc = btree_update_meta(db->bt, BTREE_META_USER_VERSION, v);
  if (rc) fail(db, rc, "user_version update failed: %d", rc);
  return wr_end(db, own, rc);
}

int tdb_get_user_version(Tdb *db, uint32_t *v) {
  int own, rc = rd_begin(db, &own);
  if (rc) return rc;
  *v = 0;
  if (btree_page_count(db->bt) > 0) rc = btree_get_meta(db->bt, BTREE_META_USER_VERSION, v);
  if (rc) fail(db, rc, "user_version read failed: %d", rc);
  return rd_end(db, own, rc);
}

/* ---- integrity ---- */

typedef struct Report {
  char *text;
  int n;
} Report;

static void add_line(Report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(Report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *line = util_vmprintf(fmt, ap);
  va_end(ap);
  if (!line) return;
  char *t = util_mprintf("%s%s\n", r->text ? r->text : "", line);
  shale_free(line);
  if (!t) return;
  shale_free(r->text);
  r->text = t;
  r->n++;
}

typedef struct XCheck {
  Tdb *db;
  TdbTable *t;
  Report *rep;
  int64_t rows;
  int rc;
} XCheck;

/* Every index of the table holds this row's key. */
static int xcheck_row(void *ctx, const TdbRow *row) {
  XCheck *x = ctx;
  x->rows++;
  for (int i = 0; i < x->t->nidx; i++) {
    TdbIndex *ix = x->t->idx[i];
    uint8_t *key;
    uint32_t n;
    BtCursor *c;
    int res = 1;
    x->rc = index_key(x->db, ix, row->v, row->rowid, &key, &n);
    if (x->rc) return 1;
    x->rc = cursor(x->db, ix->root, 0, &ix->ord, &c);
    if (x->rc == SHALE_OK) {
      x->rc = btree_seek_key(c, key, n, &res);
      if (x->rc)
        fail(x->db, x->rc, "index %s: seek for row %" PRId64 " failed: %d", ix->name, row->rowid,
             x->rc);
      if (x->rc == SHALE_OK && (res != 0 || btree_eof(c)) && x->rep->n < 20)
        add_line(x->rep, "row %" PRId64 " missing from index %s", row->rowid, ix->name);
      btree_cursor_close(c);
    }
    shale_free(key);
    if (x->rc) return 1;
  }
  return 0;
}

int tdb_check(Tdb *db, char **report) {
  Report rep = {NULL, 0};
  *report = NULL;
  int own, rc = rd_begin(db, &own);
  if (rc) return rc;
  rc = load_schema(db);
  BtreeCheckRoot *roots = NULL;
  if (rc == SHALE_OK) {
    roots = shale_malloc(sizeof *roots * (size_t)(db->nent + 1));
    if (!roots) rc = fail(db, SHALE_NOMEM, "out of memory");
  }
  if (rc == SHALE_OK) {
    int nr = 0;
    roots[nr++] = (BtreeCheckRoot){1, 1, NULL, NULL};
    for (int i = 0; i < db->nent; i++) {
      SchemaEnt *e = &db->ents[i];
      if (e->root == 0) continue;
      BtreeCheckRoot r = {e->root, !strcmp(e->type, "table"), NULL, NULL};
      TdbTable *t = r.intkey ? find_table(db, e->name) : NULL;
      TdbIndex *ix = r.intkey ? NULL : find_index(db, e->name);
      /* Checked with tdb_rec.c's comparator, independent of record_compare
       * which ordered the tree. */
      if (t && t->def->without_rowid) r = (BtreeCheckRoot){e->root, 0, tdb_key_cmp, &t->ord.ki};
      if (ix) r = (BtreeCheckRoot){e->root, 0, tdb_key_cmp, &ix->ord.ki};
      if (!t && !ix)
        add_line(&rep, "note: %s %s is not bound (checked without its order)", e->type, e->name);
      roots[nr++] = r;
    }
    char *brep = NULL;
    int nerr = 0;
    rc = btree_integrity_check(db->bt, roots, nr, 100, &brep, &nerr);
    if (rc) fail(db, rc, "btree_integrity_check failed: %d", rc);
    if (brep) {
      add_line(&rep, "%s", brep);
      shale_free(brep);
    }
  }
  shale_free(roots);
  for (int i = 0; rc == SHALE_OK && i < db->ntab; i++) {
    TdbTable *t = db->tab[i];
    XCheck x = {db, t, &rep, 0, SHALE_OK};
    rc = tdb_scan(db, t->def->name, xcheck_row, &x);
    if (x.rc) rc = x.rc;
    if (rc) break;
    for (int k = 0; k < t->nidx; k++) {
      int64_t n;
      rc = tdb_count(db, t->idx[k]->name, &n);
      if (rc) break;
      if (n != x.rows)
        add_line(&rep, "index %s has %" PRId64 " entries, table %s %" PRId64 " rows",
                 t->idx[k]->name, n, t->def->name, x.rows);
    }
  }
  rc = rd_end(db, own, rc);
  *report = rep.text;
  return rc;
}

/* ---- open / close ---- */

int tdb_open(OsVfs *vfs, const char *path, uint32_t page_size, Tdb **out) {
  *out = NULL;
  Tdb *db = shale_malloc(sizeof *db);
  if (!db) return SHALE_NOMEM;
  memset(db, 0, sizeof *db);
  int rc = btree_open(vfs, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &db->bt);
  if (rc) {
    shale_free(db);
    return rc;
  }
  if (page_size) btree_set_page_size(db->bt, page_size, 0); /* ignored if the file has content */
  int own;
  rc = rd_begin(db, &own);
  if (rc == SHALE_OK) rc = rd_end(db, own, load_schema(db));
  if (rc) {
    tdb_close(db);
    return rc;
  }
  *out = db;
  return SHALE_OK;
}

int tdb_close(Tdb *db) {
  if (!db) return SHALE_OK;
  if (btree_txn_state(db->bt) != PAGER_TXN_NONE) tdb_rollback(db);
  forget_new(db, 0);
  for (int t = 0; t < db->ntab; t++) {
    for (int i = 0; i < db->tab[t]->nidx; i++) {
      shale_free(db->tab[t]->idx[i]->name);
      shale_free(db->tab[t]->idx[i]);
    }
    shale_free(db->tab[t]);
  }
  free_ents(db);
  int rc = btree_close(db->bt);
  shale_free(db);
  return rc;
}
