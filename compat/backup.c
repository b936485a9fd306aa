/*
 * backup.c -- sqlite3_backup_*, sqlite3_blob_*, sqlite3_serialize and
 * sqlite3_deserialize over the native shale_backup / shale_blob /
 * shale_serialize API (src/api/api_backup.c, api_blob.c, api_serialize.c).
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. An sqlite3_backup IS a shale_backup and an sqlite3_blob IS a
 *     shale_blob. The native calls check them (a state field inside the
 *     object) and lock their connections: a NULL, finished or closed handle,
 *     or a closed connection, is SQLITE_MISUSE (or 0/NULL).
 */
#include "compat_int.h"

/* ---- backup ---- */

sqlite3_backup *sqlite3_backup_init(sqlite3 *dst, const char *dname, sqlite3 *src,
                                    const char *sname) {
  return (sqlite3_backup *)shale_backup_init((shale *)dst, dname, (shale *)src, sname);
}
int sqlite3_backup_step(sqlite3_backup *p, int n) {
  return shale_backup_step((shale_backup *)p, n);
}
int sqlite3_backup_finish(sqlite3_backup *p) { return shale_backup_finish((shale_backup *)p); }
int sqlite3_backup_remaining(sqlite3_backup *p) {
  return shale_backup_remaining((shale_backup *)p);
}
int sqlite3_backup_pagecount(sqlite3_backup *p) {
  return shale_backup_pagecount((shale_backup *)p);
}

/* ---- incremental blob I/O ---- */

int sqlite3_blob_open(sqlite3 *db, const char *zdb, const char *table, const char *col,
                      sqlite3_int64 row, int flags, sqlite3_blob **pblob) {
  return shale_blob_open((shale *)db, zdb, table, col, row, flags, (shale_blob **)pblob);
}
int sqlite3_blob_reopen(sqlite3_blob *b, sqlite3_int64 row) {
  return shale_blob_reopen((shale_blob *)b, row);
}
int sqlite3_blob_close(sqlite3_blob *b) { return shale_blob_close((shale_blob *)b); }
int sqlite3_blob_bytes(sqlite3_blob *b) { return shale_blob_bytes((shale_blob *)b); }
int sqlite3_blob_read(sqlite3_blob *b, void *z, int n, int off) {
  return shale_blob_read((shale_blob *)b, z, n, off);
}
int sqlite3_blob_write(sqlite3_blob *b, const void *z, int n, int off) {
  return shale_blob_write((shale_blob *)b, z, n, off);
}

/* ---- serialize ---- */

unsigned char *sqlite3_serialize(sqlite3 *db, const char *zs, sqlite3_int64 *psize,
                                 unsigned flags) {
  shale_int64 sz = -1;
  unsigned char *p = shale_serialize((shale *)db, zs, &sz, flags);
  if (psize) *psize = sz;
  return p;
}

int sqlite3_deserialize(sqlite3 *db, const char *zs, unsigned char *data, sqlite3_int64 sz,
                        sqlite3_int64 szbuf, unsigned flags) {
  return shale_deserialize((shale *)db, zs, data, sz, szbuf, flags);
}
