/*
 * api_blob.c -- incremental blob I/O (shale_blob_*, sqlite3_blob_*): read and
 * overwrite one TEXT or BLOB value of a rowid table in place, in pieces.
 *
 * Owns: struct shale_blob (table root, record field, rowid, where the value
 * lies in the row's payload).
 *
 * How: a handle holds no cursor and no transaction between calls. Each
 * read/write opens a transaction the way a statement would (api_txn_begin:
 * it joins an explicit transaction; in autocommit mode it is its own),
 * seeks the row, checks the row is still the one opened, copies, and ends
 * the transaction. A write through a handle is therefore durable when the
 * call returns (SQLite keeps one write transaction for the handle's life).
 *
 * Invariants:
 *  1. The handle expires (every later read/write/reopen returns SHALE_ABORT,
 *     bytes returns 0) when its row changed: it was deleted, the schema
 *     cookie changed, or its payload differs. To find out cheaply the
 *     handle keeps the pager data version and the connection's
 *     total_changes seen at its last check, and a position-dependent
 *     additive hash of the whole payload; only when one of the two numbers
 *     moved is the payload re-hashed and compared. Writes through the
 *     handle update the hash incrementally. (SQLite expires the handle on
 *     any UPDATE/DELETE of the row by the same connection even when it left
 *     the bytes equal; Shale keeps it then.)
 *  2. offset + n must lie within the value: else SHALE_ERROR, checked
 *     before expiry (SQLite's order), then SHALE_ABORT, then SHALE_READONLY
 *     for a write through a read-only handle.
 *  3. The connection counts the handle in nhandles until shale_blob_close.
 *  4. close returns the code of a write that was refused (SHALE_READONLY)
 *     or failed with an I/O-level error, as SQLite's blob_close returns
 *     the code of its internal statement.
 */
#include <string.h>

#include "api_int.h"

struct shale_blob {
  ApiHandle h; /* API_BLOB_LIVE, API_DEAD on db->free_blobs (api_int.h invariant 6) */
  shale *db;
  uint32_t root;
  int field; /* slot in the record */
  int64_t rowid;
  uint8_t writable, expired;
  uint32_t offset;  /* of the value in the payload */
  uint32_t nbytes;  /* of the value */
  uint32_t payload; /* payload size */
  uint64_t hash;    /* invariant 1 */
  uint64_t dver;
  int64_t changes;
  uint32_t cookie;
  int close_rc; /* returned by close: a write refused or failed (as SQLite) */
};

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t hash_bytes(const uint8_t *p, uint32_t n, uint32_t off) {
  uint64_t h = 0;
  for (uint32_t i = 0; i < n; i++) h += mix(((uint64_t)(off + i) << 8) | p[i]);
  return h;
}

#define CHUNK 65536

/* Hash the whole payload under the cursor. */
static int hash_payload(BtCursor *cur, uint32_t total, uint64_t *out) {
  uint8_t *buf = shale_malloc(total < CHUNK ? (total ? total : 1) : CHUNK);
  if (!buf) return SHALE_NOMEM;
  uint64_t h = 0;
  int rc = SHALE_OK;
  for (uint32_t off = 0; off < total && rc == SHALE_OK; off += CHUNK) {
    uint32_t k = total - off < CHUNK ? total - off : CHUNK;
    rc = btree_payload_read(cur, off, k, buf);
    if (rc == SHALE_OK) h += hash_bytes(buf, k, off);
  }
  shale_free(buf);
  *out = h;
  return rc;
}

static void set_err(shale *db, int rc, const char *msg) { shale_set_error(db, rc, msg); }

/* Locate b->rowid: fills offset/nbytes/payload/hash/versions. Errors are
 * SQLite's ("no such rowid: N", "cannot open value of type T"). The
 * connection's transaction (began) is ended here. */
static int blob_seek(shale_blob *b, int64_t rowid) {
  shale *db = b->db;
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  BtCursor *cur = NULL;
  uint8_t *hdr = NULL;
  rc = btree_get_meta(db->dbx[0].bt, BTREE_META_SCHEMA_COOKIE, &b->cookie);
  if (rc == SHALE_OK) rc = btree_cursor_open(db->dbx[0].bt, b->root, 0, NULL, NULL, &cur);
  int res = 0;
  if (rc == SHALE_OK) rc = btree_seek_rowid(cur, rowid, &res);
  if (rc == SHALE_OK && (res != 0 || btree_eof(cur))) {
    char *m = util_mprintf("no such rowid: %lld", (long long)rowid);
    set_err(db, SHALE_ERROR, m);
    shale_free(m);
    rc = SHALE_ERROR;
    goto done;
  }
  uint32_t total = 0, navail = 0, hlen = 0;
  if (rc == SHALE_OK) {
    total = btree_payload_size(cur);
    const void *p = btree_payload_fetch(cur, &navail);
    rc = record_header_len(p, navail, total, &hlen);
    if (rc == SHALE_OK) {
      hdr = shale_malloc(hlen ? hlen : 1);
      if (!hdr) rc = SHALE_NOMEM;
    }
    if (rc == SHALE_OK) rc = btree_payload_read(cur, 0, hlen, hdr);
  }
  if (rc == SHALE_OK) {
    int nf = b->field + 1, ncol = 0;
    uint32_t *types = shale_malloc(sizeof(uint32_t) * 2 * (size_t)nf);
    if (!types) {
      rc = SHALE_NOMEM;
      goto done;
    }
    uint32_t *offs = types + nf;
    rc = record_parse_header_ex(hdr, hlen, total, types, offs, nf, &ncol);
    uint32_t st = ncol > b->field ? types[b->field] : 0, off = ncol > b->field ? offs[b->field] : 0;
    shale_free(types);
    if (rc) goto done;
    if (st < 12) {
      const char *tn = st == 0 || st >= 10 ? "null" : st == 7 ? "real" : "integer";
      char *m = util_mprintf("cannot open value of type %s", tn);
      set_err(db, SHALE_ERROR, m);
      shale_free(m);
      rc = SHALE_ERROR;
      goto done;
    }
    uint64_t h = 0;
    rc = hash_payload(cur, total, &h);
    if (rc) goto done;
    b->rowid = rowid;
    b->offset = off;
    b->nbytes = record_serial_len(st);
    b->payload = total;
    b->hash = h;
    b->dver = pager_data_version(btree_pager(db->dbx[0].bt));
    b->changes = db->count.total_changes;
  }
done:
  shale_free(hdr);
  if (cur) btree_cursor_close(cur);
  if (rc && rc != db->err.code) set_err(db, rc, NULL);
  return api_txn_end(db, began, rc);
}

static int fk_column(shale *db, Table *t, int ci) {
  for (int i = 0; i < t->nfk; i++)
    for (int j = 0; j < t->fks[i].ncol; j++)
      if (t->fks[i].cols[j] == ci) return 1;
  /* a parent key column of some child table */
  Schema *s = db->dbx[0].schema->s;
  int pos = 0;
  for (Table *c; (c = schema_map_next(&s->tables, &pos)) != NULL;) {
    for (int i = 0; i < c->nfk; i++) {
      ForeignKey *fk = &c->fks[i];
      if (util_stricmp(fk->parent, t->name)) continue;
      for (int j = 0; j < fk->ncol; j++) {
        if (fk->parent_cols ? !util_stricmp(fk->parent_cols[j], t->cols[ci].name)
                            : t->cols[ci].pk > 0)
          return 1;
      }
    }
  }
  return 0;
}

static int blob_open_impl(shale *db, const char *zdb, const char *table, const char *column,
                          shale_int64 rowid, int flags, shale_blob **out) {
  if (!out) return SHALE_MISUSE;
  *out = NULL;
  if (!db || !table || !column) return SHALE_MISUSE;
  if (!api_is_main(db, zdb)) {
    api_error(db, SHALE_ERROR, "no such table: %s.%s", zdb, table);
    return SHALE_ERROR;
  }
  int rc = api_schema_current(db);
  if (rc) return rc;
  Schema *s = db->dbx[0].schema->s;
  Table *t = schema_find_table(s, table);
  if (!t) {
    if (schema_find_view(s, table))
      api_error(db, SHALE_ERROR, "cannot open view: %s", table);
    else
      api_error(db, SHALE_ERROR, "no such table: main.%s", table);
    return SHALE_ERROR;
  }
  if (t->vtab_module) {
    api_error(db, SHALE_ERROR, "cannot open virtual table: %s", table);
    return SHALE_ERROR;
  }
  if (t->without_rowid) {
    api_error(db, SHALE_ERROR, "cannot open table without rowid: %s", table);
    return SHALE_ERROR;
  }
  int ci = schema_table_column_index(t, column);
  if (ci < 0 || t->cols[ci].storage < 0) {
    api_error(db, SHALE_ERROR, "no such column: \"%s\"", column);
    return SHALE_ERROR;
  }
  if (flags) {
    for (Index *ix = t->indexes; ix; ix = ix->next)
      for (int j = 0; j < ix->nkey; j++)
        if (ix->cols[j].col == ci || ix->cols[j].col == INDEX_COL_EXPR) {
          api_error(db, SHALE_ERROR, "cannot open indexed column for writing");
          return SHALE_ERROR;
        }
    if (db->set.foreign_keys && fk_column(db, t, ci)) {
      api_error(db, SHALE_ERROR, "cannot open foreign key column for writing");
      return SHALE_ERROR;
    }
    if (pager_readonly(btree_pager(db->dbx[0].bt))) {
      api_error(db, SHALE_READONLY, "attempt to write a readonly database");
      return SHALE_READONLY;
    }
  }
  shale_blob *b = api_handle_alloc(db, &db->free_blobs, sizeof *b, API_BLOB_LIVE);
  if (!b) {
    api_error(db, SHALE_NOMEM, "out of memory");
    return SHALE_NOMEM;
  }
  b->db = db;
  b->root = t->root;
  b->field = t->cols[ci].storage;
  b->writable = flags != 0;
  rc = blob_seek(b, rowid);
  if (rc) {
    api_handle_retire(&db->free_blobs, b);
    return rc;
  }
  db->nhandles++;
  db->nblobs++;
  *out = b;
  set_err(db, SHALE_OK, NULL);
  return SHALE_OK;
}

static int blob_reopen_impl(shale_blob *b, shale_int64 rowid) {
  if (b->expired) {
    set_err(b->db, SHALE_ABORT, NULL);
    return SHALE_ABORT;
  }
  b->close_rc = 0; /* SQLite reruns its statement */
  int rc = blob_seek(b, rowid);
  if (rc) b->expired = 1; /* as SQLite: a failed reopen leaves the handle aborted */
  return rc;
}

static int blob_close_impl(shale_blob *b) {
  shale *db = b->db;
  int rc = b->close_rc;
  api_handle_retire(&db->free_blobs, b);
  if (rc) set_err(db, rc, NULL);
  db->nblobs--;
  api_handle_release(db);
  return rc;
}

static int blob_bytes_impl(shale_blob *b) { return !b->expired ? (int)b->nbytes : 0; }

/* Check the row (invariant 1) inside the open transaction; cur positioned. */
static int blob_check(shale_blob *b, BtCursor *cur) {
  shale *db = b->db;
  uint32_t cookie = 0;
  int res = 0;
  int rc = btree_get_meta(db->dbx[0].bt, BTREE_META_SCHEMA_COOKIE, &cookie);
  if (rc) return rc;
  if (cookie != b->cookie) return SHALE_ABORT;
  rc = btree_seek_rowid(cur, b->rowid, &res);
  if (rc) return rc;
  if (res != 0 || btree_eof(cur)) return SHALE_ABORT;
  uint64_t v = pager_data_version(btree_pager(db->dbx[0].bt));
  if (v == b->dver && db->count.total_changes == b->changes) return SHALE_OK;
  if (btree_payload_size(cur) != b->payload) return SHALE_ABORT;
  uint64_t h;
  rc = hash_payload(cur, b->payload, &h);
  if (rc) return rc;
  if (h != b->hash) return SHALE_ABORT;
  b->dver = v;
  b->changes = db->count.total_changes;
  return SHALE_OK;
}

static int blob_io(shale_blob *b, void *buf, int n, int off, int write) {
  if (!b) return SHALE_MISUSE;
  shale *db = b->db;
  int rc = SHALE_OK;
  if (n < 0 || off < 0 || (int64_t)off + n > (int64_t)b->nbytes)
    rc = SHALE_ERROR;
  else if (b->expired)
    rc = SHALE_ABORT;
  else if (write && !b->writable)
    rc = SHALE_READONLY;
  if (rc) {
    if (rc == SHALE_READONLY) b->close_rc = rc;
    set_err(db, rc, NULL);
    return rc;
  }
  int began;
  rc = api_txn_begin(db, write ? BTREE_TXN_WRITE : BTREE_TXN_READ, &began);
  if (rc) return rc;
  BtCursor *cur = NULL;
  uint8_t *old = NULL;
  rc = btree_cursor_open(db->dbx[0].bt, b->root, write, NULL, NULL, &cur);
  if (rc == SHALE_OK) rc = blob_check(b, cur);
  if (rc == SHALE_ABORT) b->expired = 1;
  if (rc == SHALE_OK && n > 0) {
    uint32_t at = b->offset + (uint32_t)off;
    if (!write) {
      rc = btree_payload_read(cur, at, (uint32_t)n, buf);
    } else {
      old = shale_malloc((size_t)n);
      if (!old) rc = SHALE_NOMEM;
      if (rc == SHALE_OK) rc = btree_payload_read(cur, at, (uint32_t)n, old);
      if (rc == SHALE_OK) rc = btree_payload_write(cur, at, (uint32_t)n, buf);
      if (rc == SHALE_OK)
        b->hash = b->hash - hash_bytes(old, (uint32_t)n, at) + hash_bytes(buf, (uint32_t)n, at);
    }
  }
  shale_free(old);
  if (cur) btree_cursor_close(cur);
  rc = api_txn_end(db, began, rc);
  if (rc == SHALE_OK && write) b->dver = pager_data_version(btree_pager(db->dbx[0].bt));
  if (rc != SHALE_OK && rc != SHALE_ABORT && rc != SHALE_ERROR) b->close_rc = rc;
  set_err(db, rc, NULL);
  return rc;
}

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

/* Lock b's connection if b is an open blob handle: its db, or NULL. */
static shale *blob_enter(shale_blob *b) { return api_handle_enter(b, API_BLOB_LIVE); }

int shale_blob_open(shale *db, const char *zdb, const char *table, const char *column,
                    shale_int64 rowid, int flags, shale_blob **out) {
  if (!api_db_enter(db)) return blob_open_impl(NULL, zdb, table, column, rowid, flags, out);
  int rc = blob_open_impl(db, zdb, table, column, rowid, flags, out);
  api_leave(db);
  return rc;
}

int shale_blob_reopen(shale_blob *b, shale_int64 rowid) {
  shale *db = blob_enter(b);
  if (!db) return SHALE_MISUSE;
  int rc = blob_reopen_impl(b, rowid);
  api_leave(db);
  return rc;
}

int shale_blob_close(shale_blob *b) {
  if (!b) return SHALE_OK;
  shale *db = blob_enter(b);
  if (!db) return SHALE_MISUSE;
  int rc = blob_close_impl(b);
  api_leave_maybe_free(db);
  return rc;
}

int shale_blob_bytes(shale_blob *b) {
  shale *db = blob_enter(b);
  if (!db) return 0;
  int n = blob_bytes_impl(b);
  api_leave(db);
  return n;
}

static int blob_io_locked(shale_blob *b, void *buf, int n, int off, int write) {
  shale *db = blob_enter(b);
  if (!db) return SHALE_MISUSE;
  if (write && db->stmts) api_detach_rows(db, NULL);
  int rc = blob_io(b, buf, n, off, write);
  api_leave(db);
  return rc;
}

int shale_blob_read(shale_blob *b, void *buf, int n, int off) {
  return blob_io_locked(b, buf, n, off, 0);
}

int shale_blob_write(shale_blob *b, const void *buf, int n, int off) {
  return blob_io_locked(b, (void *)buf, n, off, 1);
}
