/*
 * backup.c -- sqlite3_backup_*, sqlite3_blob_*, sqlite3_serialize and
 * sqlite3_deserialize over the native shale_backup / shale_blob /
 * shale_serialize API (src/api/api_backup.c, api_blob.c, api_serialize.c).
 *
 * Owns: nothing beyond the registry entries of the handles it returns.
 *
 * Invariants:
 *  1. An sqlite3_backup IS a shale_backup and an sqlite3_blob IS a
 *     shale_blob; each is in the handle registry (COMPAT_BACKUP /
 *     COMPAT_BLOB) from creation until finish/close, so a NULL, finished or
 *     closed handle is SQLITE_MISUSE (or 0) and never dereferenced.
 *  2. Connections given to these functions must be registered (live),
 *     else SQLITE_MISUSE / NULL.
 */
#include "compat_int.h"

/* ---- backup ---- */

sqlite3_backup *sqlite3_backup_init(sqlite3 *dst, const char *dname, sqlite3 *src,
                                    const char *sname) {
  if (!compat_reg_has(dst, COMPAT_DB) || !compat_reg_has(src, COMPAT_DB)) return NULL;
  shale_backup *b = shale_backup_init((shale *)dst, dname, (shale *)src, sname);
  if (b && !compat_reg_add(b, COMPAT_BACKUP, NULL)) {
    shale_backup_finish(b);
    shale_set_error((shale *)dst, SQLITE_NOMEM, NULL);
    return NULL;
  }
  return (sqlite3_backup *)b;
}

int sqlite3_backup_step(sqlite3_backup *p, int n) {
  if (!compat_reg_has(p, COMPAT_BACKUP)) return SQLITE_MISUSE;
  return shale_backup_step((shale_backup *)p, n);
}

int sqlite3_backup_finish(sqlite3_backup *p) {
  if (!p) return SQLITE_OK;
  if (!compat_reg_has(p, COMPAT_BACKUP)) return SQLITE_MISUSE;
  compat_reg_del(p);
  return shale_backup_finish((shale_backup *)p);
}

int sqlite3_backup_remaining(sqlite3_backup *p) {
  if (!compat_reg_has(p, COMPAT_BACKUP)) return 0;
  return shale_backup_remaining((shale_backup *)p);
}

int sqlite3_backup_pagecount(sqlite3_backup *p) {
  if (!compat_reg_has(p, COMPAT_BACKUP)) return 0;
  return shale_backup_pagecount((shale_backup *)p);
}

/* ---- incremental blob I/O ---- */

int sqlite3_blob_open(sqlite3 *db, const char *zdb, const char *table, const char *col,
                      sqlite3_int64 row, int flags, sqlite3_blob **pblob) {
  if (!pblob) return SQLITE_MISUSE;
  *pblob = NULL;
  if (!compat_reg_has(db, COMPAT_DB) || !table) return SQLITE_MISUSE;
  shale_blob *b = NULL;
  int rc = shale_blob_open((shale *)db, zdb, table, col, row, flags, &b);
  if (b && !compat_reg_add(b, COMPAT_BLOB, NULL)) {
    shale_blob_close(b);
    shale_set_error((shale *)db, SQLITE_NOMEM, NULL);
    return SQLITE_NOMEM;
  }
  *pblob = (sqlite3_blob *)b;
  return rc;
}

int sqlite3_blob_reopen(sqlite3_blob *b, sqlite3_int64 row) {
  if (!compat_reg_has(b, COMPAT_BLOB)) return SQLITE_MISUSE;
  return shale_blob_reopen((shale_blob *)b, row);
}

int sqlite3_blob_close(sqlite3_blob *b) {
  if (!b) return SQLITE_OK;
  if (!compat_reg_has(b, COMPAT_BLOB)) return SQLITE_MISUSE;
  compat_reg_del(b);
  return shale_blob_close((shale_blob *)b);
}

int sqlite3_blob_bytes(sqlite3_blob *b) {
  if (!compat_reg_has(b, COMPAT_BLOB)) return 0;
  return shale_blob_bytes((shale_blob *)b);
}

int sqlite3_blob_read(sqlite3_blob *b, void *z, int n, int off) {
  if (!compat_reg_has(b, COMPAT_BLOB)) return SQLITE_MISUSE;
  return shale_blob_read((shale_blob *)b, z, n, off);
}

int sqlite3_blob_write(sqlite3_blob *b, const void *z, int n, int off) {
  if (!compat_reg_has(b, COMPAT_BLOB)) return SQLITE_MISUSE;
  return shale_blob_write((shale_blob *)b, z, n, off);
}

/* ---- serialize ---- */

unsigned char *sqlite3_serialize(sqlite3 *db, const char *zs, sqlite3_int64 *psize,
                                 unsigned flags) {
  if (psize) *psize = -1;
  if (!compat_reg_has(db, COMPAT_DB)) return NULL;
  shale_int64 sz = -1;
  unsigned char *p = shale_serialize((shale *)db, zs, &sz, flags);
  if (psize) *psize = sz;
  return p;
}

int sqlite3_deserialize(sqlite3 *db, const char *zs, unsigned char *data, sqlite3_int64 sz,
                        sqlite3_int64 szbuf, unsigned flags) {
  if (!compat_reg_has(db, COMPAT_DB)) {
    if ((flags & SQLITE_DESERIALIZE_FREEONCLOSE) && data) sqlite3_free(data);
    return SQLITE_MISUSE;
  }
  return shale_deserialize((shale *)db, zs, data, sz, szbuf, flags);
}
