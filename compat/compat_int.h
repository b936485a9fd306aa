/*
 * compat_int.h -- internal interface shared by the files of compat/ (the
 * sqlite3_* library over Shale's native API).
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. Every file here includes Shale's own include/sqlite3.h (the quoted
 *     include), so each definition is checked against its declaration.
 *  2. Handles are the native objects; the native API checks them (a state
 *     field inside each object, no registry, no lock: shale_db_live,
 *     shale_stmt_live for entry points made of several calls).
 */
#ifndef SHALE_COMPAT_INT_H
#define SHALE_COMPAT_INT_H

#include "../src/util/util.h"
#include "shale.h"
#include "sqlite3.h"

/* unsupported.c: a feature Shale lacks, on a live connection: sets
 * "<what> is not supported by Shale yet" and returns SQLITE_ERROR (a dead or
 * NULL handle: SQLITE_MISUSE, nothing set). */
int compat_refuse(sqlite3 *db, const char *what);
/* pcache.c: SQLITE_CONFIG_PCACHE2 (SQLITE_MISUSE for NULL or a table
 * missing a method), GETPCACHE2, and the installed methods' xInit (at
 * sqlite3_initialize: its error fails the initialize) and xShutdown. */
int compat_config_pcache(const sqlite3_pcache_methods2 *m);
void compat_config_getpcache(sqlite3_pcache_methods2 *out);
int compat_pcache_init(void);
void compat_pcache_shutdown(void);
/* ext.c: hand the sqlite3_api_routines table to the loader (sqlite3_initialize). */
void compat_ext_init(void);

/* held.c: memory kept for a handle under a slot until the same slot is held
 * again or the handle goes (compat_forget_stmt at finalize; compat_take_db,
 * then compat_release, at close) -- kept in the handle itself (shale_*_userptr), no global list.
 * A slot >= 0 belongs to a statement (its column names), < 0 to a
 * connection. compat_hold returns 0 on out-of-memory (p is then not taken). */
int compat_hold(const void *owner, int slot, void *p, void (*release)(void *));
void *compat_held(const void *owner, int slot);
void compat_forget_stmt(sqlite3_stmt *st);
void *compat_take_db(sqlite3 *db);
void compat_give_back_db(sqlite3 *db, void *list);
void compat_release(void *list);
enum {
  COMPAT_SLOT_ERRMSG = -1,
  COMPAT_SLOT_NEEDED = -2,
  COMPAT_SLOT_SHARED = -3,
  COMPAT_SLOT_FNAME = -4,    /* the connection's filename object (uri.c) */
  COMPAT_SLOT_FILEOBJ = -10, /* - k: sqlite3_file objects over its files (vfs.c) */
  COMPAT_SLOT_DBFILE = -100  /* - database index */
};

/* utf16.c: the UTF-16 variants of bind_text64, result_text64 and
 * create_collation_v2 (enc SQLITE_UTF16, _LE or _BE). */
int compat_bind_text16(sqlite3_stmt *st, int i, const void *z, sqlite3_int64 n, void (*d)(void *),
                       int enc);
void compat_result_text16(sqlite3_context *c, const void *z, sqlite3_int64 n, void (*d)(void *),
                          int enc);
int compat_collation16(sqlite3 *db, const char *name, int enc, void *arg,
                       int (*cmp)(void *, int, const void *, int, const void *),
                       void (*destroy)(void *));

/* uri.c: what sqlite3_open_v2 hands shale_open_v2 for a file name (URI
 * rules applied). On failure err holds SQLite's message (or NULL: out of
 * memory) and the code is returned. fname is the connection's filename
 * object (malloc'ed, SQLite's layout, the name at fname + 4), shared the
 * memdb file of a shared-cache memory database (compat_shared_unref at
 * close). compat_open_free releases all but what the caller took (set to
 * NULL). */
typedef struct CompatOpen {
  char *path;
  int flags;
  const char *vfs;
  char *vfs_own;
  char *fname;
  char *shared;
  char *err;
} CompatOpen;
int compat_open_parse(const char *filename, int flags, const char *vfs, CompatOpen *o);
void compat_open_free(CompatOpen *o);
/* The application's VFSes (vfs_app.c): register, unregister, and the
 * sqlite3_vfs of an adopted OsVfs (NULL: not the application's). */
int compat_vfs_app_register(sqlite3_vfs *v, int dflt);
int compat_vfs_app_unregister(sqlite3_vfs *v);
struct OsVfs;
struct OsFile;
sqlite3_vfs *compat_vfs_app_of(struct OsVfs *o);
/* The application's sqlite3_file behind an OsFile of an adopted VFS, or NULL. */
sqlite3_file *compat_vfs_app_file(struct OsFile *f);
/* The filename object of the open this thread makes next (NULL: none). */
void compat_vfs_app_pending(const char *fname);
/* ATTACH parses its argument as open does (URIs, modes, shared memory
 * databases), with the connection's open flags (uri.c). */
void compat_attach_install(shale *db, int flags);
/* The filename object of attached database zdb (NULL: none kept). */
const char *compat_attach_fname(shale *db, const char *zdb);
void compat_shared_unref(const char *name);
void compat_config_uri(int on);
/* sqlite3_config's allocator and log (config.c) */
int compat_config_malloc(const sqlite3_mem_methods *m);
void compat_config_getmalloc(sqlite3_mem_methods *out);
int compat_config_mutex(const sqlite3_mutex_methods *m);
/* The application's mutex methods (NULL: Shale's own are in use). */
const sqlite3_mutex_methods *compat_app_mutex(void);
void compat_config_getmutex(sqlite3_mutex_methods *out);
void compat_config_log(void (*fn)(void *, int, const char *), void *arg);
void compat_mem_init(void);     /* at sqlite3_initialize: the methods' xInit */
void compat_mem_shutdown(void); /* at sqlite3_shutdown: their xShutdown */
/* rc, after logging a failed prepare of sql (n bytes, < 0: to its NUL) */
int compat_log_prepare(sqlite3 *db, int rc, const char *sql, int n);
/* The filename object of a database file (absolute name, its journal and
 * WAL names, npair key/value parameters): malloc'ed block, name 4 bytes in. */
char *compat_fname_file(const char *path, int npair, const char *const *kv);
/* Bytes of a filename object fo (from its 4 zero bytes to its final two). */
size_t compat_fname_size(const char *fo);

#endif
