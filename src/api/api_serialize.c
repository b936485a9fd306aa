/*
 * api_serialize.c -- shale_serialize / shale_deserialize (sqlite3_serialize,
 * sqlite3_deserialize) and shale_data_version (SQLITE_FCNTL_DATA_VERSION).
 *
 * Owns: nothing past a call: serialize returns a shale_malloc'ed image the
 * caller frees; deserialize copies the image into a new in-memory database.
 *
 * Invariants:
 *  1. serialize reads every page through the pager inside a read
 *     transaction, so the image is the database as the connection sees it
 *     (WAL content included, bytes 18/19 as in the file).
 *  2. SHALE_SERIALIZE_NOCOPY always returns NULL (with *size set): Shale
 *     never holds a database as one contiguous block, which SQLite allows.
 *  3. deserialize never keeps the caller's buffer: the image is copied into
 *     a fresh private in-memory database (journal_mode=memory) that replaces
 *     the connection's "main"; FREEONCLOSE frees the buffer at once (also on
 *     failure, as SQLite). A WAL image (bytes 18/19 = 2) is loaded as a
 *     rollback one (1/1). The database may grow without limit: SQLite's
 *     SQLITE_FULL for a non-RESIZEABLE buffer is not reproduced.
 *  4. deserialize is refused with SHALE_BUSY while the connection has an
 *     open transaction, running statements or backup/blob handles.
 */
#include <string.h>

#include "api_int.h"

static unsigned char *serialize_impl(shale *db, const char *zs, shale_int64 *size, unsigned flags) {
  shale_int64 dummy;
  if (!size) size = &dummy;
  *size = -1;
  if (!db || !db->dbx[0].bt || !api_is_main(db, zs)) return NULL;
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return NULL;
  Pager *p = btree_pager(db->dbx[0].bt);
  uint32_t n = pager_db_size(p), ps = pager_page_size(p);
  *size = (shale_int64)n * ps;
  unsigned char *out = NULL;
  if (n > 0 && !(flags & SHALE_SERIALIZE_NOCOPY)) {
    out = shale_malloc((size_t)n * ps);
    if (!out) rc = SHALE_NOMEM;
    for (uint32_t i = 1; rc == SHALE_OK && i <= n; i++) {
      PgPage *pg;
      rc = pager_get(p, i, 0, &pg);
      if (rc) break;
      memcpy(out + (size_t)(i - 1) * ps, pager_data(pg), ps);
      pager_unref(pg);
    }
    if (rc) {
      shale_free(out);
      out = NULL;
      *size = -1;
    }
  }
  api_txn_end(db, began, SHALE_OK);
  return out;
}

/* Fill the new in-memory btree nb with the image. */
static int load_image(Btree *nb, const unsigned char *data, int64_t size) {
  uint32_t ps = 0;
  int reserve = 0, valid = 0;
  if (size >= 100 && !memcmp(data, "SQLite format 3", 16)) {
    ps = util_get2(data + 16);
    if (ps == 1) ps = 65536;
    reserve = data[20];
    valid = btree_set_page_size(nb, ps, reserve) == SHALE_OK;
  }
  Pager *p = btree_pager(nb);
  ps = pager_page_size(p);
  uint32_t n = (uint32_t)((size + ps - 1) / ps);
  if (valid) {
    uint32_t hs = util_get4(data + 28);
    if (hs && hs < n && !memcmp(data + 24, data + 92, 4)) n = hs;
  }
  if (n == 0) return SHALE_OK;
  int rc = pager_begin_write(p, 0);
  for (uint32_t i = 1; rc == SHALE_OK && i <= n; i++) {
    PgPage *pg;
    rc = pager_get(p, i, PAGER_GET_NOCONTENT, &pg);
    if (rc) break;
    rc = pager_write(pg);
    if (rc == SHALE_OK) {
      uint8_t *d = pager_data(pg);
      int64_t off = (int64_t)(i - 1) * ps, k = size - off < ps ? size - off : ps;
      memcpy(d, data + off, (size_t)k);
      memset(d + k, 0, (size_t)(ps - k));
      if (i == 1 && valid && d[18] == 2 && d[19] == 2) d[18] = d[19] = 1;
      pager_zero_extra(pg);
    }
    pager_unref(pg);
  }
  if (rc == SHALE_OK) rc = pager_commit(p);
  if (rc) pager_rollback(p);
  pager_end_read(p);
  return rc;
}

static int deserialize_impl(shale *db, const char *zs, unsigned char *data, shale_int64 size,
                            shale_int64 bufsize, unsigned flags) {
  int rc = SHALE_OK;
  if (!db) {
    rc = SHALE_MISUSE;
  } else if (size < 0 || (size > 0 && !data)) {
    rc = SHALE_MISUSE;
    shale_set_error(db, rc, NULL);
  } else if (!api_is_main(db, zs)) {
    rc = SHALE_ERROR;
    api_error(db, rc, "unknown database %s", zs);
  } else if (db->txn.nactive > 0 || !db->txn.autocommit || db->nhandles > 0 ||
             (db->dbx[0].bt && btree_txn_state(db->dbx[0].bt) != PAGER_TXN_NONE)) {
    rc = SHALE_BUSY;
    shale_set_error(db, rc, NULL);
  } else {
    Btree *nb = NULL;
    rc = btree_open(NULL, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &nb);
    if (rc == SHALE_OK) rc = load_image(nb, data, size);
    if (rc == SHALE_OK) {
      if (flags & SHALE_DESERIALIZE_READONLY) pager_set_readonly(btree_pager(nb), 1);
      pager_set_busy_handler(btree_pager(nb), NULL, NULL);
      api_autovac_install(db, nb);
      if (db->dbx[0].bt) btree_close(db->dbx[0].bt);
      db->dbx[0].bt = nb;
      api_schema_reset(db);
      shale_set_error(db, SHALE_OK, NULL);
    } else {
      if (nb) btree_close(nb);
      shale_set_error(db, rc, NULL);
    }
  }
  if ((flags & SHALE_DESERIALIZE_FREEONCLOSE) && data) shale_free(data);
  return rc;
}

static int data_version_impl(shale *db, const char *zs, unsigned *out) {
  if (!db || !out) return SHALE_MISUSE;
  if (!api_is_main(db, zs) || !db->dbx[0].bt) return SHALE_ERROR;
  int began, rc = api_txn_begin(db, BTREE_TXN_READ, &began);
  if (rc) return rc;
  *out = (unsigned)pager_data_version(btree_pager(db->dbx[0].bt));
  return api_txn_end(db, began, SHALE_OK);
}

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

unsigned char *shale_serialize(shale *db, const char *zs, shale_int64 *size, unsigned flags) {
  if (!api_db_enter(db)) return serialize_impl(NULL, zs, size, flags);
  unsigned char *r_ = serialize_impl(db, zs, size, flags);
  api_leave(db);
  return r_;
}

int shale_deserialize(shale *db, const char *zs, unsigned char *data, shale_int64 size,
                      shale_int64 bufsize, unsigned flags) {
  if (!api_db_enter(db)) return deserialize_impl(NULL, zs, data, size, bufsize, flags);
  int r_ = deserialize_impl(db, zs, data, size, bufsize, flags);
  api_leave(db);
  return r_;
}

int shale_data_version(shale *db, const char *zs, unsigned *out) {
  API_DB_CALL(db, SHALE_MISUSE, data_version_impl(db, zs, out));
}
