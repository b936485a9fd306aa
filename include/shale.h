/*
 * shale.h -- Shale's native public API.
 *
 * Shale is an SQL database engine compatible with SQLite's file format, SQL
 * dialect and C API. This header has SQLite's API shape with the shale_
 * prefix (shale_open_v2, shale_prepare_v2, shale_step, ...), so that one
 * program can link Shale and the reference SQLite side by side.
 *
 * Invariants:
 *  1. Result codes have SQLite's numbers, extended codes included.
 *  2. Memory returned by shale_malloc is freed with shale_free; nothing else.
 *  3. Every constant here has the value of its SQLITE_ twin.
 *
 * The SQL-level API (connections, statements: src/api/) follows the result
 * codes, flags and the allocator.
 *
 * How to read this header. Every function has SQLite's semantics for its
 * sqlite3_* twin; the comment above each group says what it does, which
 * result codes it returns and how long memory it hands out stays valid.
 * Rules that hold everywhere:
 *  - A function returning int returns a result code (SHALE_OK on success)
 *    unless its comment says it returns a count, a flag or a type. After a
 *    failure shale_errcode()/shale_errmsg() of the connection tell why.
 *  - Any call may fail with SHALE_NOMEM (out of memory): nothing leaks and
 *    the object stays usable. SHALE_MISUSE means the call broke a rule below
 *    (a NULL, closed or finalized handle, a statement of another connection).
 *  - Text is UTF-8. A `nbyte`/`n` length argument below 0 means "up to the
 *    first NUL".
 *  - Memory that Shale hands out belongs to Shale and stays valid for the
 *    time the function's comment gives; memory described as "shale_malloc'ed"
 *    belongs to the caller, who frees it with shale_free.
 *  - Threads: a connection and its statements may be used from one thread
 *    at a time; different connections may run in different threads at once.
 *    (The sqlite3_* library over this API serializes each connection.)
 *
 * A minimal program:
 *     shale *db;  shale_stmt *st;
 *     if (shale_open("app.db", &db) != SHALE_OK) { ...shale_errmsg(db)...; }
 *     shale_prepare_v2(db, "SELECT name FROM users WHERE id = ?1", -1, &st, NULL);
 *     shale_bind_int64(st, 1, 42);
 *     while (shale_step(st) == SHALE_ROW) puts((const char *)shale_column_text(st, 0));
 *     shale_finalize(st);
 *     shale_close(db);
 */
#ifndef SHALE_H
#define SHALE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHALE_VERSION "0.1.0"
#define SHALE_VERSION_NUMBER 1000

/* BEGIN result codes (generated from src/util/result_codes.def by tools/gen_codes.sh) */
/* ---- Primary result codes (same numbers as SQLite) ---- */
#define SHALE_OK 0
#define SHALE_ERROR 1
#define SHALE_INTERNAL 2
#define SHALE_PERM 3
#define SHALE_ABORT 4
#define SHALE_BUSY 5
#define SHALE_LOCKED 6
#define SHALE_NOMEM 7
#define SHALE_READONLY 8
#define SHALE_INTERRUPT 9
#define SHALE_IOERR 10
#define SHALE_CORRUPT 11
#define SHALE_NOTFOUND 12
#define SHALE_FULL 13
#define SHALE_CANTOPEN 14
#define SHALE_PROTOCOL 15
#define SHALE_EMPTY 16
#define SHALE_SCHEMA 17
#define SHALE_TOOBIG 18
#define SHALE_CONSTRAINT 19
#define SHALE_MISMATCH 20
#define SHALE_MISUSE 21
#define SHALE_NOLFS 22
#define SHALE_AUTH 23
#define SHALE_FORMAT 24
#define SHALE_RANGE 25
#define SHALE_NOTADB 26
#define SHALE_NOTICE 27
#define SHALE_WARNING 28
#define SHALE_ROW 100
#define SHALE_DONE 101

/* ---- Extended result codes: primary | (detail << 8) ---- */
#define SHALE_ERROR_MISSING_COLLSEQ (SHALE_ERROR | (1 << 8))
#define SHALE_ERROR_RETRY (SHALE_ERROR | (2 << 8))
#define SHALE_ERROR_SNAPSHOT (SHALE_ERROR | (3 << 8))
#define SHALE_IOERR_READ (SHALE_IOERR | (1 << 8))
#define SHALE_IOERR_SHORT_READ (SHALE_IOERR | (2 << 8))
#define SHALE_IOERR_WRITE (SHALE_IOERR | (3 << 8))
#define SHALE_IOERR_FSYNC (SHALE_IOERR | (4 << 8))
#define SHALE_IOERR_DIR_FSYNC (SHALE_IOERR | (5 << 8))
#define SHALE_IOERR_TRUNCATE (SHALE_IOERR | (6 << 8))
#define SHALE_IOERR_FSTAT (SHALE_IOERR | (7 << 8))
#define SHALE_IOERR_UNLOCK (SHALE_IOERR | (8 << 8))
#define SHALE_IOERR_RDLOCK (SHALE_IOERR | (9 << 8))
#define SHALE_IOERR_DELETE (SHALE_IOERR | (10 << 8))
#define SHALE_IOERR_BLOCKED (SHALE_IOERR | (11 << 8))
#define SHALE_IOERR_NOMEM (SHALE_IOERR | (12 << 8))
#define SHALE_IOERR_ACCESS (SHALE_IOERR | (13 << 8))
#define SHALE_IOERR_CHECKRESERVEDLOCK (SHALE_IOERR | (14 << 8))
#define SHALE_IOERR_LOCK (SHALE_IOERR | (15 << 8))
#define SHALE_IOERR_CLOSE (SHALE_IOERR | (16 << 8))
#define SHALE_IOERR_DIR_CLOSE (SHALE_IOERR | (17 << 8))
#define SHALE_IOERR_SHMOPEN (SHALE_IOERR | (18 << 8))
#define SHALE_IOERR_SHMSIZE (SHALE_IOERR | (19 << 8))
#define SHALE_IOERR_SHMLOCK (SHALE_IOERR | (20 << 8))
#define SHALE_IOERR_SHMMAP (SHALE_IOERR | (21 << 8))
#define SHALE_IOERR_SEEK (SHALE_IOERR | (22 << 8))
#define SHALE_IOERR_DELETE_NOENT (SHALE_IOERR | (23 << 8))
#define SHALE_IOERR_MMAP (SHALE_IOERR | (24 << 8))
#define SHALE_IOERR_GETTEMPPATH (SHALE_IOERR | (25 << 8))
#define SHALE_IOERR_CONVPATH (SHALE_IOERR | (26 << 8))
#define SHALE_IOERR_VNODE (SHALE_IOERR | (27 << 8))
#define SHALE_IOERR_AUTH (SHALE_IOERR | (28 << 8))
#define SHALE_IOERR_BEGIN_ATOMIC (SHALE_IOERR | (29 << 8))
#define SHALE_IOERR_COMMIT_ATOMIC (SHALE_IOERR | (30 << 8))
#define SHALE_IOERR_ROLLBACK_ATOMIC (SHALE_IOERR | (31 << 8))
#define SHALE_IOERR_DATA (SHALE_IOERR | (32 << 8))
#define SHALE_IOERR_CORRUPTFS (SHALE_IOERR | (33 << 8))
#define SHALE_LOCKED_SHAREDCACHE (SHALE_LOCKED | (1 << 8))
#define SHALE_LOCKED_VTAB (SHALE_LOCKED | (2 << 8))
#define SHALE_BUSY_RECOVERY (SHALE_BUSY | (1 << 8))
#define SHALE_BUSY_SNAPSHOT (SHALE_BUSY | (2 << 8))
#define SHALE_BUSY_TIMEOUT (SHALE_BUSY | (3 << 8))
#define SHALE_CANTOPEN_NOTEMPDIR (SHALE_CANTOPEN | (1 << 8))
#define SHALE_CANTOPEN_ISDIR (SHALE_CANTOPEN | (2 << 8))
#define SHALE_CANTOPEN_FULLPATH (SHALE_CANTOPEN | (3 << 8))
#define SHALE_CANTOPEN_CONVPATH (SHALE_CANTOPEN | (4 << 8))
#define SHALE_CANTOPEN_DIRTYWAL (SHALE_CANTOPEN | (5 << 8))
#define SHALE_CANTOPEN_SYMLINK (SHALE_CANTOPEN | (6 << 8))
#define SHALE_CORRUPT_VTAB (SHALE_CORRUPT | (1 << 8))
#define SHALE_CORRUPT_SEQUENCE (SHALE_CORRUPT | (2 << 8))
#define SHALE_CORRUPT_INDEX (SHALE_CORRUPT | (3 << 8))
#define SHALE_READONLY_RECOVERY (SHALE_READONLY | (1 << 8))
#define SHALE_READONLY_CANTLOCK (SHALE_READONLY | (2 << 8))
#define SHALE_READONLY_ROLLBACK (SHALE_READONLY | (3 << 8))
#define SHALE_READONLY_DBMOVED (SHALE_READONLY | (4 << 8))
#define SHALE_READONLY_CANTINIT (SHALE_READONLY | (5 << 8))
#define SHALE_READONLY_DIRECTORY (SHALE_READONLY | (6 << 8))
#define SHALE_ABORT_ROLLBACK (SHALE_ABORT | (2 << 8))
#define SHALE_CONSTRAINT_CHECK (SHALE_CONSTRAINT | (1 << 8))
#define SHALE_CONSTRAINT_COMMITHOOK (SHALE_CONSTRAINT | (2 << 8))
#define SHALE_CONSTRAINT_FOREIGNKEY (SHALE_CONSTRAINT | (3 << 8))
#define SHALE_CONSTRAINT_FUNCTION (SHALE_CONSTRAINT | (4 << 8))
#define SHALE_CONSTRAINT_NOTNULL (SHALE_CONSTRAINT | (5 << 8))
#define SHALE_CONSTRAINT_PRIMARYKEY (SHALE_CONSTRAINT | (6 << 8))
#define SHALE_CONSTRAINT_TRIGGER (SHALE_CONSTRAINT | (7 << 8))
#define SHALE_CONSTRAINT_UNIQUE (SHALE_CONSTRAINT | (8 << 8))
#define SHALE_CONSTRAINT_VTAB (SHALE_CONSTRAINT | (9 << 8))
#define SHALE_CONSTRAINT_ROWID (SHALE_CONSTRAINT | (10 << 8))
#define SHALE_CONSTRAINT_PINNED (SHALE_CONSTRAINT | (11 << 8))
#define SHALE_CONSTRAINT_DATATYPE (SHALE_CONSTRAINT | (12 << 8))
#define SHALE_NOTICE_RECOVER_WAL (SHALE_NOTICE | (1 << 8))
#define SHALE_NOTICE_RECOVER_ROLLBACK (SHALE_NOTICE | (2 << 8))
#define SHALE_WARNING_AUTOINDEX (SHALE_WARNING | (1 << 8))
#define SHALE_AUTH_USER (SHALE_AUTH | (1 << 8))
#define SHALE_OK_LOAD_PERMANENTLY (SHALE_OK | (1 << 8))
#define SHALE_OK_SYMLINK (SHALE_OK | (2 << 8))
/* END result codes */

/* ---- Flags for opening files and databases ---- */
#define SHALE_OPEN_READONLY 0x00000001
#define SHALE_OPEN_READWRITE 0x00000002
#define SHALE_OPEN_CREATE 0x00000004
#define SHALE_OPEN_DELETEONCLOSE 0x00000008
#define SHALE_OPEN_EXCLUSIVE 0x00000010
#define SHALE_OPEN_AUTOPROXY 0x00000020
#define SHALE_OPEN_URI 0x00000040
#define SHALE_OPEN_MEMORY 0x00000080
#define SHALE_OPEN_MAIN_DB 0x00000100
#define SHALE_OPEN_TEMP_DB 0x00000200
#define SHALE_OPEN_TRANSIENT_DB 0x00000400
#define SHALE_OPEN_MAIN_JOURNAL 0x00000800
#define SHALE_OPEN_TEMP_JOURNAL 0x00001000
#define SHALE_OPEN_SUBJOURNAL 0x00002000
#define SHALE_OPEN_SUPER_JOURNAL 0x00004000
#define SHALE_OPEN_NOMUTEX 0x00008000
#define SHALE_OPEN_FULLMUTEX 0x00010000
#define SHALE_OPEN_SHAREDCACHE 0x00020000
#define SHALE_OPEN_PRIVATECACHE 0x00040000
#define SHALE_OPEN_WAL 0x00080000
#define SHALE_OPEN_NOFOLLOW 0x01000000
#define SHALE_OPEN_EXRESCODE 0x02000000
/* Shale's own (the drop-in library's URI parameters nolock=1, immutable=1):
 * the file is opened without locks; IMMUTABLE also promises that nothing
 * changes it (no journal or WAL is looked at, read-only). */
#define SHALE_OPEN_NOLOCK 0x00200000
#define SHALE_OPEN_IMMUTABLE 0x00400000

/* ---- Fundamental datatypes (SQLite's numbers) ---- */
#define SHALE_INTEGER 1
#define SHALE_FLOAT 2
#define SHALE_TEXT 3
#define SHALE_BLOB 4
#define SHALE_NULL 5

/* ---- Allocator ----
 * Every allocation Shale makes goes through these three, and everything the
 * API hands to the caller as "shale_malloc'ed" is freed with shale_free. */

/* Allocate n bytes (8-byte aligned), or return NULL. */
void *shale_malloc(size_t n);
/* Resize p (NULL: allocate) to n bytes, keeping its content; on failure
 * returns NULL and p is untouched and still owned by the caller. */
void *shale_realloc(void *p, size_t n);
/* Free memory from shale_malloc/shale_realloc (or handed out as
 * shale_malloc'ed by the API). NULL is a no-op. */
void shale_free(void *p);

/* SQLite's English text for a result code ("database is locked" for
 * SHALE_BUSY, "unknown error" for a code it does not know), as
 * sqlite3_errstr. Static memory: valid forever, never freed. */
const char *shale_errstr(int rc);

/* ==================== connections and statements ==================== */
/* Same prototypes and semantics as SQLite's sqlite3_* twins (sqlite3.h). */

typedef struct shale shale;             /* a database connection */
typedef struct shale_stmt shale_stmt;   /* a prepared statement */
typedef struct shale_value shale_value; /* a result column's value */
typedef int64_t shale_int64;
typedef uint64_t shale_uint64;

typedef void (*shale_destructor_type)(void *);
#define SHALE_STATIC ((shale_destructor_type)0)
#define SHALE_TRANSIENT ((shale_destructor_type)-1)

/* shale_prepare_v3 flags */
#define SHALE_PREPARE_PERSISTENT 0x01
#define SHALE_PREPARE_NORMALIZE 0x02
#define SHALE_PREPARE_NO_VTAB 0x04

/* Open a connection to the database file `filename` ("" for a private
 * temporary database, ":memory:" for an in-memory one). shale_open opens
 * read-write and creates the file; shale_open_v2 takes SHALE_OPEN_* flags
 * (READONLY, or READWRITE optionally with CREATE; MEMORY, URI, NOMUTEX,
 * FULLMUTEX, ...) and a VFS name (NULL: the default, "unix"; "memdb").
 * *db is always set, also on failure (except SHALE_NOMEM with no memory for
 * the handle, then NULL): read shale_errmsg(*db) and close it with
 * shale_close. The file itself is opened and its header read lazily, at the
 * first statement: a file that is not a database fails there
 * (SHALE_NOTADB). Returns SHALE_OK, SHALE_CANTOPEN (the file cannot be
 * opened or created; a missing file without CREATE), SHALE_MISUSE (bad
 * flags), SHALE_NOMEM. */
int shale_open(const char *filename, shale **db);
int shale_open_v2(const char *filename, shale **db, int flags, const char *vfs);
/* Close a connection, rolling back an open transaction. shale_close
 * refuses with SHALE_BUSY (the connection stays open) while statements are
 * not finalized or backups/blob handles not finished; shale_close_v2 then
 * resets them and closes when the last one is finalized. NULL is a no-op
 * (SHALE_OK). After SHALE_OK the handle must not be used again. */
int shale_close(shale *db);
int shale_close_v2(shale *db);

/* Compile the first statement of sql[0..nbyte) (nbyte < 0: to the NUL)
 * into *stmt. *tail (if tail) gets the first byte after that statement.
 * Empty text or only comments: SHALE_OK with *stmt NULL. Errors (*stmt is
 * NULL): SHALE_ERROR with SQLite's message ("near \"selec\": syntax error",
 * "no such table: t"), SHALE_TOOBIG (over SHALE_LIMIT_SQL_LENGTH), SHALE_BUSY
 * or SHALE_LOCKED (the schema could not be read), SHALE_NOTADB,
 * SHALE_CORRUPT, SHALE_NOMEM. All three variants behave as SQLite's _v2
 * (a statement recompiles itself after a schema change); v3's flags are
 * SHALE_PREPARE_*. Re-preparing a text prepared before is cheap: finalized
 * compilations are cached by their text. The statement belongs to `db` and
 * must be finalized before db is closed. */
int shale_prepare(shale *db, const char *sql, int nbyte, shale_stmt **stmt, const char **tail);
int shale_prepare_v2(shale *db, const char *sql, int nbyte, shale_stmt **stmt, const char **tail);
int shale_prepare_v3(shale *db, const char *sql, int nbyte, unsigned flags, shale_stmt **stmt,
                     const char **tail);
/* Run the statement until its next row or its end. Returns SHALE_ROW (a
 * row is ready: read it with shale_column_*), SHALE_DONE (finished; step
 * again after shale_reset), or an error: SHALE_BUSY (locked by another
 * connection; the busy handler has given up), SHALE_CONSTRAINT_* (the
 * statement's changes are undone, the transaction stays), SHALE_ERROR (a
 * runtime error, e.g. from a function), SHALE_INTERRUPT, SHALE_FULL,
 * SHALE_IOERR_*, SHALE_CORRUPT, SHALE_READONLY, SHALE_NOMEM, SHALE_SCHEMA
 * (only when the schema kept changing under it), SHALE_MISUSE (stepping a
 * finalized statement). In autocommit mode a statement's transaction
 * commits when it returns SHALE_DONE (or is reset). */
int shale_step(shale_stmt *stmt);
/* Rewind the statement to run again; bindings are kept. Returns the result
 * of the last shale_step if that failed, else SHALE_OK. NULL: SHALE_OK. */
int shale_reset(shale_stmt *stmt);
/* Destroy the statement (NULL is a no-op). Returns the result of its last
 * failed step, else SHALE_OK; the statement is gone either way. */
int shale_finalize(shale_stmt *stmt);

/* ---- Reading a row (after shale_step returned SHALE_ROW) ----
 * Columns count from 0. shale_column_count is the number of result columns
 * (0 for statements that return none); shale_data_count is that number while
 * a row is ready, else 0. shale_column_type is the row value's fundamental
 * type (SHALE_INTEGER/FLOAT/TEXT/BLOB/NULL) before any conversion.
 * The getters convert as SQLite does (text "12abc" reads as integer 12, NULL
 * as 0 / 0.0 / NULL pointer). A column index out of range reads as NULL.
 * Pointers returned by shale_column_text/blob/value stay valid until the next
 * shale_step, shale_reset or shale_finalize of the statement, or until a
 * getter converts the same column to another type; shale_column_bytes after
 * shale_column_text/blob gives that value's size in bytes (text without its
 * terminating NUL, which is always present). Names and declared types
 * (shale_column_name, _decltype, _table_name, _origin_name, _database_name)
 * stay valid until the statement is finalized or recompiled; decltype and the
 * origin names are NULL for expressions. */
int shale_column_count(shale_stmt *stmt);
int shale_data_count(shale_stmt *stmt);
int shale_column_type(shale_stmt *stmt, int i);
int shale_column_int(shale_stmt *stmt, int i);
shale_int64 shale_column_int64(shale_stmt *stmt, int i);
double shale_column_double(shale_stmt *stmt, int i);
const unsigned char *shale_column_text(shale_stmt *stmt, int i);
const void *shale_column_blob(shale_stmt *stmt, int i);
int shale_column_bytes(shale_stmt *stmt, int i);
shale_value *shale_column_value(shale_stmt *stmt, int i);
const char *shale_column_name(shale_stmt *stmt, int i);
const char *shale_column_decltype(shale_stmt *stmt, int i);
const char *shale_column_table_name(shale_stmt *stmt, int i);
const char *shale_column_origin_name(shale_stmt *stmt, int i);
const char *shale_column_database_name(shale_stmt *stmt, int i);

/* The same conversions on a shale_value (a column value from
 * shale_column_value, or a function argument): pointers stay valid as long
 * as the value does and it is not converted to another type. */
int shale_value_type(shale_value *v);
int shale_value_int(shale_value *v);
shale_int64 shale_value_int64(shale_value *v);
double shale_value_double(shale_value *v);
const unsigned char *shale_value_text(shale_value *v);
const void *shale_value_blob(shale_value *v);
int shale_value_bytes(shale_value *v);

/* ---- Binding parameters (?, ?NNN, :name, @name, $name) ----
 * Parameters count from 1 (shale_bind_parameter_index finds a named one's
 * index, 0 if none; shale_bind_parameter_name the reverse, NULL for '?').
 * Bind before shale_step or after shale_reset; unbound parameters are NULL.
 * Text and blobs: n < 0 means up to the NUL (text only); `destroy` is
 * SHALE_STATIC (the caller keeps the bytes valid while the statement may use
 * them), SHALE_TRANSIENT (Shale copies them now), or a function Shale calls
 * once with the pointer when it no longer needs it — also when the bind
 * fails. Text and blobs keep embedded NUL bytes. Returns SHALE_OK,
 * SHALE_RANGE (no such parameter), SHALE_MISUSE (the statement is running:
 * reset it first), SHALE_TOOBIG (over SHALE_LIMIT_LENGTH), SHALE_NOMEM.
 * shale_clear_bindings sets every parameter back to NULL. */
int shale_bind_null(shale_stmt *stmt, int i);
int shale_bind_int(shale_stmt *stmt, int i, int v);
int shale_bind_int64(shale_stmt *stmt, int i, shale_int64 v);
int shale_bind_double(shale_stmt *stmt, int i, double v);
int shale_bind_text(shale_stmt *stmt, int i, const char *z, int n, void (*destroy)(void *));
int shale_bind_blob(shale_stmt *stmt, int i, const void *z, int n, void (*destroy)(void *));
int shale_bind_zeroblob(shale_stmt *stmt, int i, int n);
int shale_bind_value(shale_stmt *stmt, int i, const shale_value *v);
int shale_bind_parameter_count(shale_stmt *stmt);
int shale_bind_parameter_index(shale_stmt *stmt, const char *name);
const char *shale_bind_parameter_name(shale_stmt *stmt, int i);
int shale_clear_bindings(shale_stmt *stmt);
/* Move every binding of from to to (two statements of one connection with
 * the same number of parameters); from's become NULL. SHALE_OK,
 * SHALE_ERROR (different parameter counts), SHALE_MISUSE (a statement is
 * running, or other connections). */
int shale_transfer_bindings(shale_stmt *from, shale_stmt *to);
/* Bind a pointer (SQLite's pointer-passing interface): SQL sees NULL, and
 * only an application function calling shale_value_pointer with the same
 * type string gets p back. type must stay valid while bound (a string
 * constant). destroy (or NULL) is called once with p when the parameter is
 * rebound, cleared or the statement finalized, and at once if the bind
 * fails. Returns as the other binds. */
int shale_bind_pointer(shale_stmt *stmt, int i, void *p, const char *type, void (*destroy)(void *));

typedef int (*shale_callback)(void *arg, int ncol, char **values, char **names);
/* Prepare, step and finalize each statement of sql in turn. cb (if not
 * NULL) is called for every result row with the values as text (NULL for
 * SQL NULL) and the column names, valid only during the call; a nonzero
 * return stops everything with SHALE_ABORT. Returns SHALE_OK or the first
 * error (later statements do not run); *errmsg (if errmsg) gets a
 * shale_malloc'ed message on error, NULL on success: free with shale_free. */
int shale_exec(shale *db, const char *sql, shale_callback cb, void *arg, char **errmsg);

/* The last failed call's error on this connection: message (SQLite's words;
 * valid until the next call on the connection or one of its statements),
 * primary code, extended code. shale_extended_result_codes(db, 1) makes
 * calls return extended codes (SHALE_CONSTRAINT_UNIQUE rather than
 * SHALE_CONSTRAINT) as SQLite's flag does; returns SHALE_OK. */
const char *shale_errmsg(shale *db);
int shale_errcode(shale *db);
int shale_extended_errcode(shale *db);
int shale_extended_result_codes(shale *db, int onoff);

/* Rows changed by the last INSERT/UPDATE/DELETE that finished (not counting
 * triggers and foreign-key actions), and by all since the connection opened;
 * the rowid of the last successful INSERT into a rowid table (0 if none). */
int shale_changes(shale *db);
shale_int64 shale_changes64(shale *db);
int shale_total_changes(shale *db);
shale_int64 shale_total_changes64(shale *db);
shale_int64 shale_last_insert_rowid(shale *db);
/* 1 when no transaction is open (BEGIN turns it to 0, COMMIT back). */
int shale_get_autocommit(shale *db);
/* Retry on SHALE_BUSY for up to ms milliseconds with SQLite's sleep
 * schedule (ms <= 0: no retrying). Replaces any busy handler. SHALE_OK. */
int shale_busy_timeout(shale *db, int ms);
/* Make running statements of db stop soon with SHALE_INTERRUPT. Safe to
 * call from another thread while the connection is in use. */
void shale_interrupt(shale *db);
/* 1 if the statement never writes the database; 1 while it is between its
 * first step and its end or reset. */
int shale_stmt_readonly(shale_stmt *stmt);
int shale_stmt_busy(shale_stmt *stmt);
/* The statement's SQL text as prepared (valid until finalized); its
 * connection; the connection's statement after stmt (stmt NULL: the first),
 * NULL at the end. */
const char *shale_sql(shale_stmt *stmt);
shale *shale_db_handle(shale_stmt *stmt);
shale_stmt *shale_next_stmt(shale *db, shale_stmt *stmt);
/* 1 if sql ends in a complete statement, as sqlite3_complete: a ;
 * outside quotes and comments that is not inside a CREATE TRIGGER body. */
int shale_complete(const char *sql);

/* Shale's own version string ("0.1.0", static) and number. The SQLite level
 * it implements is 3.40.1 (what the sqlite3_* library reports). */
const char *shale_libversion(void);
int shale_libversion_number(void);

/* ---- Threads and mutexes (src/api/api_mutex.c) ----
 * Serialized by default, as Debian's SQLite: a connection opened without
 * SHALE_OPEN_NOMUTEX carries a recursive mutex that every call on it or on
 * its statements, backups and blob handles holds while it runs, so one
 * connection may be shared by several threads. SHALE_OPEN_NOMUTEX leaves it
 * out (the application keeps each connection to one thread at a time).
 * Threads on different connections never share a lock in the statement path.
 * A handle that is NULL, closed, finalized or finished is detected by a state
 * field inside the object (memory of closed handles is kept for reuse, never
 * unmapped): such calls return SHALE_MISUSE (or 0/NULL), without a lock. */
typedef struct shale_mutex shale_mutex;
#define SHALE_MUTEX_FAST 0
#define SHALE_MUTEX_RECURSIVE 1
#define SHALE_MUTEX_STATIC_FIRST 2 /* SQLite's STATIC_MAIN .. STATIC_VFS3 */
#define SHALE_MUTEX_STATIC_LAST 13
/* A new mutex (FAST or RECURSIVE: both recursive here; free it with
 * shale_mutex_free) or one of the static ones (never freed); NULL on OOM or
 * for an unknown kind. */
shale_mutex *shale_mutex_alloc(int kind);
void shale_mutex_free(shale_mutex *m);
/* Enter (recursively), try (SHALE_OK or SHALE_BUSY), leave; NULL: no-op. */
void shale_mutex_enter(shale_mutex *m);
int shale_mutex_try(shale_mutex *m);
void shale_mutex_leave(shale_mutex *m);
/* 1 if the calling thread holds m (NULL counts as held). */
int shale_mutex_held(shale_mutex *m);
/* The connection's mutex, NULL for a NOMUTEX connection (or a bad handle). */
shale_mutex *shale_db_mutex(shale *db);
/* The application's mutexes (SQLite's SQLITE_CONFIG_MUTEX): with methods
 * set, every connection opened afterwards locks through a recursive mutex
 * they allocate (xMutexAlloc(SHALE_MUTEX_RECURSIVE)); NULL goes back to
 * Shale's own. The table is copied. shale_mutex_app gives the
 * application's mutex object under m (NULL: Shale's own). */
typedef struct shale_mutex_methods {
  int (*xMutexInit)(void);
  int (*xMutexEnd)(void);
  void *(*xMutexAlloc)(int kind);
  void (*xMutexFree)(void *m);
  void (*xMutexEnter)(void *m);
  int (*xMutexTry)(void *m);
  void (*xMutexLeave)(void *m);
  int (*xMutexHeld)(void *m);
  int (*xMutexNotheld)(void *m);
} shale_mutex_methods;
void shale_config_mutex(const shale_mutex_methods *m);
void *shale_mutex_app(shale_mutex *m);
/* 1 if db is an open connection (not closed, not a zombie of close_v2). */
int shale_db_live(shale *db);
/* The text encoding (1 UTF-8, 2 UTF-16le, 3 UTF-16be) an empty main
 * database gets (PRAGMA encoding, sqlite3_open16); a database with content
 * keeps its own. SHALE_OK, or SHALE_MISUSE for another value. */
int shale_db_new_encoding(shale *db, int enc);
/* 1 if st is a prepared statement not yet finalized. */
int shale_stmt_live(shale_stmt *st);
/* One pointer kept with a connection or a statement for the program that
 * uses it (the sqlite3_* library keeps its per-handle memory there): NULL
 * when the handle is made; Shale never reads or frees it. Reading and setting
 * it takes no lock: the caller serializes its own use. */
void *shale_db_userptr(shale *db);
void shale_db_set_userptr(shale *db, void *p);
void *shale_stmt_userptr(shale_stmt *st);
void shale_stmt_set_userptr(shale_stmt *st, void *p);

/* ---- Extras for the sqlite3 compatibility layer (src/api/api_ext.c) ---- */

/* Set the connection's error code and message (NULL msg: shale_errstr(rc)). */
void shale_set_error(shale *db, int rc, const char *msg);
/* The absolute file name of the "main" database ("" for memory), the name
 * of an attached one as given; NULL for an unknown schema name. */
const char *shale_db_filename(shale *db, const char *zdb);
/* 1 read-only, 0 read-write, -1 no such database. */
int shale_db_readonly(shale *db, const char *zdb);
/* The VFS (src/os's OsVfs) database zdb's file was opened through; NULL for
 * an unknown or unopened one. */
void *shale_db_vfs(shale *db, const char *zdb);
/* The file (src/os's OsFile) of database zdb (journal 1: its rollback
 * journal or log, while one is open); NULL for an unknown or unopened
 * database, or no such file. */
void *shale_db_file(shale *db, const char *zdb, int journal);
/* A file control on database zdb's file (op and arg as the VFS defines
 * them: SQLite's SQLITE_FCNTL_* numbers; src/os/os.h OS_FCNTL_*): the
 * file's answer, SHALE_NOTFOUND for an op it does not know, SHALE_ERROR for
 * an unknown or unopened database. */
int shale_file_control(shale *db, const char *zdb, int op, void *arg);
/* How ATTACH opens the file it is given (the drop-in library's URIs). With
 * a resolver set, each ATTACH argument goes to fn first, which fills *t:
 * path (shale_malloc'ed; NULL: the argument as it is), flags (SHALE_OPEN_*;
 * READONLY or READWRITE, CREATE, and MEMORY: a memory database, or with vfs a
 * file of that VFS that reports itself as memory, with the file name ""),
 * vfs (shale_malloc'ed VFS name; NULL: main's), or returns an error code and
 * sets errmsg (shale_malloc'ed, or NULL for the code's message). A cookie is
 * kept with the attached database (shale_db_attach_cookie) and given to
 * release when it is detached or the connection closes, or when the ATTACH
 * fails after fn succeeded. t->flags comes in as the connection's default. */
typedef struct shale_attach_target {
  char *path;
  int flags;
  char *vfs;
  char *errmsg;
  void *cookie;
  void (*release)(void *cookie);
} shale_attach_target;
void shale_attach_resolver(shale *db,
                           int (*fn)(void *arg, const char *file, shale_attach_target *t),
                           void *arg);
/* The resolver's cookie of attached database zdb (NULL: none or unknown). */
void *shale_db_attach_cookie(shale *db, const char *zdb);
/* A standalone copy of v (free with shale_value_free); NULL on OOM. */
shale_value *shale_value_dup(const shale_value *v);
/* A standalone value of that type (SHALE_INTEGER: i, SHALE_FLOAT: r,
 * SHALE_TEXT/SHALE_BLOB: the n bytes at p, copied; anything else NULL);
 * free with shale_value_free; NULL on OOM. */
shale_value *shale_value_make(int type, shale_int64 i, double r, const void *p, int n);
void shale_value_free(shale_value *v);
/* sqlite3_value_numeric_type: the type v would have as a number. */
int shale_value_numeric_type(shale_value *v);
/* The statement text with bound parameters as literals (shale_malloc'ed). */
char *shale_expanded_sql(shale_stmt *stmt);
/* sqlite3_set_last_insert_rowid. */
void shale_set_last_insert_rowid(shale *db, shale_int64 rowid);
/* Foreign key enforcement (PRAGMA foreign_keys, also inside a transaction):
 * onoff 1/0 sets it, -1 leaves it; returns the state in force. */
int shale_foreign_keys(shale *db, int onoff);

/* ---- Hooks, handlers, status, limits (src/api/api_hooks.c) ----
 * Same semantics as the sqlite3_* twins; callbacks get the shale handles.
 * Each hook setter replaces the previous callback and returns its `arg`
 * (NULL if none); cb NULL removes it. Callbacks run inside the statement
 * that triggers them and must not use the connection, except where SQLite
 * allows it.
 *  - commit hook: before a commit; nonzero turns the COMMIT into a rollback
 *    (the statement gets SHALE_CONSTRAINT_COMMITHOOK).
 *  - rollback hook: after a rollback (not for one the commit hook caused).
 *  - update hook: after each row a rowid table gets inserted (op
 *    SHALE_INSERT 18), updated (23) or deleted (9), with the database name
 *    ("main", "temp" or the ATTACH name) and the table; strings valid
 *    during the call only.
 *  - WAL hook: after each commit in WAL mode, with the log's frame count.
 *  - authorizer: called while statements compile, with SQLite's action
 *    codes and arguments; return SHALE_OK, SHALE_DENY (the prepare fails
 *    with SHALE_AUTH, "not authorized") or SHALE_IGNORE (columns read as
 *    NULL, the action is skipped). */
void *shale_commit_hook(shale *db, int (*cb)(void *), void *arg);
void *shale_rollback_hook(shale *db, void (*cb)(void *), void *arg);
void *shale_update_hook(shale *db,
                        void (*cb)(void *, int op, const char *zdb, const char *table,
                                   shale_int64 rowid),
                        void *arg);
void *shale_wal_hook(shale *db, int (*cb)(void *, shale *, const char *zdb, int nframe), void *arg);
/* The preupdate hook (src/api/api_preupdate.c), as sqlite3_preupdate_hook:
 * cb runs before each row change of a rowid table (op SHALE_INSERT /
 * SHALE_UPDATE / SHALE_DELETE codes 18/23/9, key1/key2 the old/new rowid);
 * during the call, shale_preupdate_old/new give column i of the old/new row
 * (SHALE_MISUSE outside a call or for the side the change has not,
 * SHALE_RANGE for a bad column), valid until the callback returns;
 * count is the table's column count, depth the trigger depth, blobwrite -1. */
void *shale_preupdate_hook(shale *db,
                           void (*cb)(void *, shale *, int op, const char *zdb, const char *table,
                                      shale_int64 key1, shale_int64 key2),
                           void *arg);
/* A value's text as UTF-16 (be 1: big-endian, 0: little-endian), NUL-
 * terminated, *nbytes (if given) its length in bytes; valid until the value
 * changes or its text is asked for again (in any encoding). NULL for NULL. */
const void *shale_value_text16(shale_value *v, int be, int *nbytes);
/* Its length in bytes (either byte order: converting once). */
int shale_value_bytes16(shale_value *v);
/* The name of database i of the connection (0 "main", 1 "temp", 2.. the
 * attached ones), NULL when there is none. */
const char *shale_db_name(shale *db, int i);
/* sqlite3_error_offset: the byte offset of the token the connection's error
 * is about, in the text of the prepare that failed, or -1 (src/api/
 * api_erroff.c); shale_sql_error_offset does the same for a message and a
 * text given. */
int shale_error_offset(shale *db);
/* sqlite3_txn_state: SHALE_TXN_NONE / READ / WRITE of database zdb (NULL:
 * the highest over every database), -1 for an unknown name. */
#define SHALE_TXN_NONE 0
#define SHALE_TXN_READ 1
#define SHALE_TXN_WRITE 2
int shale_txn_state(shale *db, const char *zdb);
/* sqlite3_db_config's ENABLE_TRIGGER (1003), DQS_DML (1013), DQS_DDL (1014)
 * and ENABLE_VIEW (1015): onoff 1/0 sets, -1 reads; the state in force, or
 * -1 for another option. */
int shale_db_config_switch(shale *db, int op, int onoff);
/* sqlite3_db_config(SQLITE_DBCONFIG_MAINDBNAME): from now on the main
 * database is called name (copied; NULL: "main" again) wherever SQL, hooks
 * and PRAGMA database_list show a schema name; "main" still designates it.
 * SHALE_OK, SHALE_NOMEM. */
int shale_db_config_maindbname(shale *db, const char *name);

/* ---- loadable extensions (SQLite's sqlite3_load_extension rules) ----
 * An extension is a shared library with an entry point
 *   int entry(shale *db, char **errmsg, const void *api);
 * called with the connection, a place for an error message (shale_malloc
 * memory) and the routine table set by shale_set_extension_api (the compat
 * library sets SQLite's sqlite3_api_routines; NULL if none was set). It
 * returns SHALE_OK (the library stays open until the connection closes),
 * SHALE_OK_LOAD_PERMANENTLY (it stays open for good) or an error.
 *
 * shale_load_extension: file is opened as given, then with ".so" appended;
 * proc NULL tries "sqlite3_extension_init", then "sqlite3_X_init" where X is
 * the file's last path component without a leading "lib", its letters only,
 * lower-cased, up to the first '.'. Returns SHALE_OK or SHALE_ERROR with
 * *errmsg (if errmsg) set to SQLite's text ("not authorized", the dynamic
 * linker's message, "error during initialization: ..."); the connection's
 * own error is left as it was, as SQLite leaves it. Refused ("not
 * authorized") unless enabled: the C call is on at open (Debian's build),
 * the load_extension() SQL function is off. */
int shale_load_extension(shale *db, const char *file, const char *proc, char **errmsg);
/* Both switches on (onoff 1) or off (0), as sqlite3_enable_load_extension;
 * sqlite3_db_config ENABLE_LOAD_EXTENSION (1005, shale_db_config_switch)
 * sets the C call's alone. */
int shale_enable_load_extension(shale *db, int onoff);
/* The table handed to every entry point (process-wide; set once, before
 * extensions load). */
void shale_set_extension_api(const void *api);
/* Entry points run at the end of every shale_open_v2, in the order
 * registered (each once); a failure makes the open return its code with
 * "automatic extension loading failed: ...". cancel returns 1 if entry was
 * registered, else 0. */
int shale_auto_extension(void (*entry)(void));
int shale_cancel_auto_extension(void (*entry)(void));
void shale_reset_auto_extension(void);
int shale_sql_error_offset(const char *sql, const char *msg);
int shale_preupdate_old(shale *db, int i, shale_value **out);
int shale_preupdate_new(shale *db, int i, shale_value **out);
int shale_preupdate_count(shale *db);
int shale_preupdate_depth(shale *db);
int shale_preupdate_blobwrite(shale *db);
/* Authorizer action codes are SQLite's (SQLITE_CREATE_INDEX = 1, ...). */
int shale_set_authorizer(shale *db,
                         int (*cb)(void *, int action, const char *, const char *, const char *zdb,
                                   const char *ztrigger),
                         void *arg);
#define SHALE_DENY 1
#define SHALE_IGNORE 2
#define SHALE_TRACE_STMT 0x01
#define SHALE_TRACE_PROFILE 0x02
#define SHALE_TRACE_ROW 0x04
#define SHALE_TRACE_CLOSE 0x08
int shale_trace_v2(shale *db, unsigned mask, int (*cb)(unsigned, void *, void *, void *),
                   void *arg);
void *shale_trace(shale *db, void (*cb)(void *, const char *), void *arg);
void *shale_profile(shale *db, void (*cb)(void *, const char *, shale_uint64), void *arg);
/* trace_v2: cb for the SHALE_TRACE_* events in mask (statement start with its
 * text, end with nanoseconds, each row, connection close); trace/profile:
 * the older forms. */
/* cb every n of Shale's VM instructions (n <= 0 or cb NULL: off); nonzero
 * from cb interrupts the statement (SHALE_INTERRUPT). */
void shale_progress_handler(shale *db, int n, int (*cb)(void *), void *arg);
/* cb(arg, count) when a lock is busy, count = retries so far: nonzero to
 * retry, 0 to give up with SHALE_BUSY. Replaces a busy_timeout. SHALE_OK. */
int shale_busy_handler(shale *db, int (*cb)(void *, int count), void *arg);
#define SHALE_DBSTATUS_LOOKASIDE_USED 0
#define SHALE_DBSTATUS_CACHE_USED 1
#define SHALE_DBSTATUS_SCHEMA_USED 2
#define SHALE_DBSTATUS_STMT_USED 3
#define SHALE_DBSTATUS_LOOKASIDE_HIT 4
#define SHALE_DBSTATUS_LOOKASIDE_MISS_SIZE 5
#define SHALE_DBSTATUS_LOOKASIDE_MISS_FULL 6
#define SHALE_DBSTATUS_CACHE_HIT 7
#define SHALE_DBSTATUS_CACHE_MISS 8
#define SHALE_DBSTATUS_CACHE_WRITE 9
#define SHALE_DBSTATUS_DEFERRED_FKS 10
#define SHALE_DBSTATUS_CACHE_USED_SHARED 11
#define SHALE_DBSTATUS_CACHE_SPILL 12
/* Connection counters: *cur and *hiwater get the SHALE_DBSTATUS_* value
 * (reset: restart the high-water mark). SHALE_OK, SHALE_MISUSE for an
 * unknown op. */
int shale_db_status(shale *db, int op, int *cur, int *hiwater, int reset);
#define SHALE_STMTSTATUS_FULLSCAN_STEP 1
#define SHALE_STMTSTATUS_SORT 2
#define SHALE_STMTSTATUS_AUTOINDEX 3
#define SHALE_STMTSTATUS_VM_STEP 4
#define SHALE_STMTSTATUS_REPREPARE 5
#define SHALE_STMTSTATUS_RUN 6
#define SHALE_STMTSTATUS_FILTER_MISS 7
#define SHALE_STMTSTATUS_FILTER_HIT 8
#define SHALE_STMTSTATUS_MEMUSED 99
/* A statement's SHALE_STMTSTATUS_* counter (reset: zero it after reading). */
int shale_stmt_status(shale_stmt *stmt, int op, int reset);
#define SHALE_LIMIT_LENGTH 0
#define SHALE_LIMIT_SQL_LENGTH 1
#define SHALE_LIMIT_COLUMN 2
#define SHALE_LIMIT_EXPR_DEPTH 3
#define SHALE_LIMIT_COMPOUND_SELECT 4
#define SHALE_LIMIT_VDBE_OP 5
#define SHALE_LIMIT_FUNCTION_ARG 6
#define SHALE_LIMIT_ATTACHED 7
#define SHALE_LIMIT_LIKE_PATTERN_LENGTH 8
#define SHALE_LIMIT_VARIABLE_NUMBER 9
#define SHALE_LIMIT_TRIGGER_DEPTH 10
#define SHALE_LIMIT_WORKER_THREADS 11
/* Current value of limit id; newval >= 0 sets it (clamped to the hard
 * maximum). -1 for a bad id. */
int shale_limit(shale *db, int id, int newval);
/* Declared type, collation, NOT NULL, PRIMARY KEY and AUTOINCREMENT of a
 * column (zdb NULL: search every database; col NULL: only check the table
 * exists). The strings stay valid until the schema changes. SHALE_OK, or
 * SHALE_ERROR "no such table column: t.c". */
int shale_table_column_metadata(shale *db, const char *zdb, const char *table, const char *col,
                                char const **type, char const **coll, int *notnull, int *pk,
                                int *autoinc);
/* ---- Online backup (src/api/api_backup.c), as sqlite3_backup_* ----
 * init: a copy of database src_name of src into dst_name of dst (NULL, the
 * error in dst, on failure: same connection, destination in use, no such
 * database). step: copy up to npage pages (< 0: all); SHALE_OK (more to do),
 * SHALE_DONE, SHALE_BUSY/SHALE_LOCKED (try again later), or an error.
 * finish: release it (always, also after an error); returns the first
 * error. remaining/pagecount: pages left and in all, as of the last step. */
typedef struct shale_backup shale_backup;
shale_backup *shale_backup_init(shale *dst, const char *dst_name, shale *src, const char *src_name);
int shale_backup_step(shale_backup *b, int npage);
int shale_backup_finish(shale_backup *b);
int shale_backup_remaining(shale_backup *b);
int shale_backup_pagecount(shale_backup *b);

/* ---- Incremental blob I/O (src/api/api_blob.c), as sqlite3_blob_* ----
 * open: a handle on the text/blob in column `column` of row `rowid` (flags
 * 1: writable); SHALE_ERROR if there is no such row or it is not text/blob.
 * read/write: n bytes at offset (writes never change the size: SHALE_ERROR
 * past the end); SHALE_ABORT once the row was changed or deleted by
 * anything else. reopen: move to another row of the same column. close:
 * always releases the handle. */
typedef struct shale_blob shale_blob;
int shale_blob_open(shale *db, const char *zdb, const char *table, const char *column,
                    shale_int64 rowid, int flags, shale_blob **out);
int shale_blob_reopen(shale_blob *b, shale_int64 rowid);
int shale_blob_close(shale_blob *b);
int shale_blob_bytes(shale_blob *b);
int shale_blob_read(shale_blob *b, void *buf, int n, int offset);
int shale_blob_write(shale_blob *b, const void *buf, int n, int offset);

/* ---- Serialize / deserialize (src/api/api_serialize.c) ---- */
#define SHALE_SERIALIZE_NOCOPY 0x001
#define SHALE_DESERIALIZE_FREEONCLOSE 1
#define SHALE_DESERIALIZE_RESIZEABLE 2
#define SHALE_DESERIALIZE_READONLY 4
/* The database zschema ("main") as one image (shale_malloc'ed; NULL when it
 * has no pages or on error); *size gets its size, -1 on error. NOCOPY:
 * always NULL (Shale never keeps a database as one contiguous image). */
unsigned char *shale_serialize(shale *db, const char *zschema, shale_int64 *size, unsigned flags);
/* Replace the database zschema with an in-memory copy of data[0..size).
 * FREEONCLOSE: data (shale_malloc'ed) is freed here, the copy being made. */
int shale_deserialize(shale *db, const char *zschema, unsigned char *data, shale_int64 size,
                      shale_int64 bufsize, unsigned flags);
/* A number that changes when the database zschema may have changed
 * (SQLITE_FCNTL_DATA_VERSION); SHALE_ERROR for an unknown schema. */
int shale_data_version(shale *db, const char *zschema, unsigned *out);
/* sqlite3_autovacuum_pages: before each commit of a write transaction on
 * an auto_vacuum=FULL database, cb(arg, schema, pages in the file, free
 * pages, page size) says how many free pages the commit gives back (0:
 * none, as many as there are or more: all). NULL cb: all (the default).
 * destroy(arg), if given, runs when the callback is replaced or the
 * connection closes. */
int shale_autovacuum_pages(shale *db,
                           unsigned (*cb)(void *, const char *, unsigned, unsigned, unsigned),
                           void *arg, void (*destroy)(void *));
/* ---- WAL snapshots (src/api/api_snapshot.c), as sqlite3_snapshot_* ----
 * A snapshot names one state of a WAL database: the log's index header
 * (its last commit frame, salts and checksums; SQLite's 48-byte layout, so
 * a snapshot can be copied and kept as bytes). zdb names the database
 * ("main" or an attached one; NULL and "temp" are SHALE_ERROR). */
typedef struct shale_snapshot {
  unsigned char hidden[48];
} shale_snapshot;
/* A new snapshot (free it with shale_snapshot_free) of the read
 * transaction open on zdb, starting one if needed. SHALE_ERROR unless the
 * connection is inside BEGIN (not autocommit), zdb is in WAL mode with a
 * log that has been written since it was created, and zdb has no write
 * transaction open. */
int shale_snapshot_get(shale *db, const char *zdb, shale_snapshot **out);
/* Inside BEGIN, start zdb's read transaction at snap instead of at the
 * newest commit; a read transaction already open is replaced when no
 * statement is running. SHALE_ERROR_SNAPSHOT when the log no longer holds
 * snap (restarted since, or checkpointed past it: a checkpoint never goes
 * past a reader, so an open snapshot stays readable), SHALE_ERROR when the
 * call is not allowed (autocommit, a write transaction, running
 * statements, not WAL, or a connection that has not read zdb yet). The
 * read transaction cannot write (SHALE_BUSY_SNAPSHOT) unless snap is the
 * newest state. */
int shale_snapshot_open(shale *db, const char *zdb, const shale_snapshot *snap);
void shale_snapshot_free(shale_snapshot *snap);
/* <0 when a is older than b, 0 when they are the same, >0 when newer; only
 * meaningful for two snapshots of one database taken since its log file
 * was last deleted. */
int shale_snapshot_cmp(const shale_snapshot *a, const shale_snapshot *b);
/* After the log's index was rebuilt (every connection closed without
 * deleting the log, or a crash), the snapshots still held whole by the log
 * and the database file become openable again. zdb must have no read
 * transaction open (SHALE_ERROR otherwise, and when not in WAL mode). */
int shale_snapshot_recover(shale *db, const char *zdb);
/* ---- User-defined functions and collations (src/api/api_func.c) ---- */
/* Same semantics as SQLite's sqlite3_create_function_v2 & co. A
 * shale_context is the call's context; the argument values are valid only
 * during the call. Text is UTF-8: registrations for UTF-16 only are refused
 * with SHALE_ERROR.
 *  - create_function_v2: a scalar (xfunc) or aggregate (xstep + xfinal)
 *    function of nargs arguments (-1: any number); flags = SHALE_UTF8 |
 *    SHALE_DETERMINISTIC | ...; xdestroy(user) runs when it is replaced,
 *    deleted or the connection closes. All callbacks NULL deletes it.
 *    SHALE_OK; SHALE_BUSY while statements are running (registering
 *    expires every prepared statement, as in SQLite); SHALE_MISUSE for a bad
 *    name or argument count.
 *  - create_window_function: an aggregate window function (xvalue returns
 *    the current value, xinverse removes a row from the frame).
 *  - create_collation_v2: xcompare(user, n1, s1, n2, s2) < 0, 0, > 0.
 *  - collation_needed: cb is asked for an unknown collation before
 *    "no such collation sequence" is reported.
 *  - aggregate_context: nbytes of zeroed memory per aggregate group, the same
 *    pointer on every call of the group (NULL when out of memory or, with
 *    nbytes 0, before the first allocation), freed after xfinal.
 *  - auxdata: per-argument data kept between calls of one statement (for
 *    constant arguments); destroy runs when it is dropped.
 *  - result_*: set the call's result; text/blob destroy as for binding. */

typedef struct shale_context shale_context;

/* Text encodings (SQLite's numbers). */
#define SHALE_UTF8 1
#define SHALE_UTF16LE 2
#define SHALE_UTF16BE 3
#define SHALE_UTF16 4
#define SHALE_ANY 5
#define SHALE_UTF16_ALIGNED 8
/* Function flags, or'ed into the encoding argument. */
#define SHALE_DETERMINISTIC 0x000000800
#define SHALE_DIRECTONLY 0x000080000
#define SHALE_SUBTYPE 0x000100000
#define SHALE_INNOCUOUS 0x000200000

typedef void (*shale_func_fn)(shale_context *, int, shale_value **);
typedef void (*shale_final_fn)(shale_context *);

int shale_create_function_v2(shale *db, const char *name, int nargs, int flags, void *user,
                             shale_func_fn xfunc, shale_func_fn xstep, shale_final_fn xfinal,
                             void (*xdestroy)(void *));
int shale_create_window_function(shale *db, const char *name, int nargs, int flags, void *user,
                                 shale_func_fn xstep, shale_final_fn xfinal, shale_final_fn xvalue,
                                 shale_func_fn xinverse, void (*xdestroy)(void *));
int shale_create_collation_v2(shale *db, const char *name, int enc, void *user,
                              int (*xcompare)(void *, int, const void *, int, const void *),
                              void (*xdestroy)(void *));
int shale_collation_needed(shale *db, void *arg,
                           void (*cb)(void *arg, shale *db, int enc, const char *name));

void *shale_aggregate_context(shale_context *ctx, int nbytes);
void *shale_user_data(shale_context *ctx);
shale *shale_context_db_handle(shale_context *ctx);
void *shale_get_auxdata(shale_context *ctx, int iarg);
void shale_set_auxdata(shale_context *ctx, int iarg, void *p, void (*destroy)(void *));

void shale_result_null(shale_context *ctx);
void shale_result_int64(shale_context *ctx, shale_int64 v);
void shale_result_double(shale_context *ctx, double v);
/* n < 0: z is NUL-terminated. destroy: SHALE_STATIC, SHALE_TRANSIENT, or
 * called once with z when Shale no longer needs it (also on error). */
void shale_result_text64(shale_context *ctx, const char *z, shale_int64 n, void (*destroy)(void *));
void shale_result_blob64(shale_context *ctx, const void *z, shale_uint64 n,
                         void (*destroy)(void *));
/* SHALE_OK or SHALE_TOOBIG (then the result is the "too big" error). */
int shale_result_zeroblob64(shale_context *ctx, shale_uint64 n);
void shale_result_value(shale_context *ctx, shale_value *v);
void shale_result_error(shale_context *ctx, const char *z, int n);
void shale_result_error_code(shale_context *ctx, int rc);
void shale_result_error_nomem(shale_context *ctx);
void shale_result_error_toobig(shale_context *ctx);
void shale_result_subtype(shale_context *ctx, unsigned subtype);
/* A value's subtype (0-255) as the function that made it set it; kept by
 * copies and function results (shale_result_value), lost when stored. */
unsigned shale_value_subtype(shale_value *v);
/* Make sure a function name(nargs) exists, so that a virtual table's
 * xFindFunction can overload it on its columns: when none is registered,
 * registers one that fails with "unable to use function NAME in the
 * requested context". SHALE_OK, SHALE_NOMEM, SHALE_MISUSE. */
int shale_overload_function(shale *db, const char *name, int nargs);
/* Write the dirty pages of every database in a write transaction now
 * (journalled first, or as uncommitted WAL frames), without committing:
 * SQLite's sqlite3_db_cacheflush. SHALE_OK, SHALE_BUSY (a database's lock
 * was busy; the others were flushed), or the I/O error that stopped it. */
int shale_db_cacheflush(shale *db);
/* Give back the memory of every database's clean unreferenced cached pages
 * (SQLite's sqlite3_db_release_memory; an in-memory database's pages are its
 * content and stay). SHALE_OK. */
int shale_db_release_memory(shale *db);
/* The result is a NULL carrying p, for another function to read with
 * shale_value_pointer(v, type); destroy(p) runs when the statement is reset
 * or finalized (at once in an aggregate's step or final). */
void shale_result_pointer(shale_context *ctx, void *p, const char *type, void (*destroy)(void *));
/* The pointer v carries when it was bound or returned with type, else NULL. */
void *shale_value_pointer(shale_value *v, const char *type);

/* ---- virtual tables (SQLite's module contract, same layout) ----
 *
 * The structs below have exactly the layout of SQLite 3.40.1's
 * sqlite3_module, sqlite3_vtab, sqlite3_vtab_cursor and sqlite3_index_info
 * (compat/ casts one to the other); a shale_context and shale_value are the
 * sqlite3_context and sqlite3_value a module sees. */
typedef struct shale_vtab shale_vtab;
typedef struct shale_vtab_cursor shale_vtab_cursor;
typedef struct shale_index_info shale_index_info;
typedef struct shale_module shale_module;

struct shale_module {
  int iVersion; /* 1, 2 (savepoints) or 3 (xShadowName) */
  int (*xCreate)(shale *, void *aux, int argc, const char *const *argv, shale_vtab **out,
                 char **errmsg);
  int (*xConnect)(shale *, void *aux, int argc, const char *const *argv, shale_vtab **out,
                  char **errmsg);
  int (*xBestIndex)(shale_vtab *, shale_index_info *);
  int (*xDisconnect)(shale_vtab *);
  int (*xDestroy)(shale_vtab *);
  int (*xOpen)(shale_vtab *, shale_vtab_cursor **out);
  int (*xClose)(shale_vtab_cursor *);
  int (*xFilter)(shale_vtab_cursor *, int idxNum, const char *idxStr, int argc, shale_value **argv);
  int (*xNext)(shale_vtab_cursor *);
  int (*xEof)(shale_vtab_cursor *);
  int (*xColumn)(shale_vtab_cursor *, shale_context *, int col);
  int (*xRowid)(shale_vtab_cursor *, shale_int64 *rowid);
  int (*xUpdate)(shale_vtab *, int argc, shale_value **argv, shale_int64 *rowid);
  int (*xBegin)(shale_vtab *);
  int (*xSync)(shale_vtab *);
  int (*xCommit)(shale_vtab *);
  int (*xRollback)(shale_vtab *);
  int (*xFindFunction)(shale_vtab *, int nargs, const char *name, shale_func_fn *fn, void **arg);
  int (*xRename)(shale_vtab *, const char *new_name);
  int (*xSavepoint)(shale_vtab *, int);
  int (*xRelease)(shale_vtab *, int);
  int (*xRollbackTo)(shale_vtab *, int);
  int (*xShadowName)(const char *);
};

struct shale_index_info {
  /* inputs */
  int nConstraint;
  struct shale_index_constraint {
    int iColumn;          /* -1: the rowid */
    unsigned char op;     /* SHALE_INDEX_CONSTRAINT_* */
    unsigned char usable; /* 0 when it reads a table not yet looped */
    int iTermOffset;
  } * aConstraint;
  int nOrderBy;
  struct shale_index_orderby {
    int iColumn;
    unsigned char desc;
  } * aOrderBy;
  /* outputs */
  struct shale_index_constraint_usage {
    int argvIndex;      /* > 0: the constraint's value is argv[argvIndex - 1] of xFilter */
    unsigned char omit; /* the engine need not test it again */
  } * aConstraintUsage;
  int idxNum;
  char *idxStr;
  int needToFreeIdxStr; /* idxStr is shale_malloc'ed: the engine frees it */
  int orderByConsumed;
  double estimatedCost;
  shale_int64 estimatedRows;
  int idxFlags; /* SHALE_INDEX_SCAN_UNIQUE */
  shale_uint64 colUsed;
};

struct shale_vtab {
  const shale_module *pModule;
  int nRef;
  char *zErrMsg; /* shale_malloc'ed message the engine takes after a failed call */
};

struct shale_vtab_cursor {
  shale_vtab *pVtab;
};

#define SHALE_INDEX_SCAN_UNIQUE 1
#define SHALE_INDEX_CONSTRAINT_EQ 2
#define SHALE_INDEX_CONSTRAINT_GT 4
#define SHALE_INDEX_CONSTRAINT_LE 8
#define SHALE_INDEX_CONSTRAINT_LT 16
#define SHALE_INDEX_CONSTRAINT_GE 32
#define SHALE_INDEX_CONSTRAINT_MATCH 64
#define SHALE_INDEX_CONSTRAINT_LIKE 65
#define SHALE_INDEX_CONSTRAINT_GLOB 66
#define SHALE_INDEX_CONSTRAINT_REGEXP 67
#define SHALE_INDEX_CONSTRAINT_NE 68
#define SHALE_INDEX_CONSTRAINT_ISNOT 69
#define SHALE_INDEX_CONSTRAINT_ISNOTNULL 70
#define SHALE_INDEX_CONSTRAINT_ISNULL 71
#define SHALE_INDEX_CONSTRAINT_IS 72
#define SHALE_INDEX_CONSTRAINT_LIMIT 73
#define SHALE_INDEX_CONSTRAINT_OFFSET 74
#define SHALE_INDEX_CONSTRAINT_FUNCTION 150
#define SHALE_VTAB_CONSTRAINT_SUPPORT 1
#define SHALE_VTAB_INNOCUOUS 2
#define SHALE_VTAB_DIRECTONLY 3

/* Register module m under name (case-insensitive) on the connection; aux is
 * handed to xCreate/xConnect. A module of the same name is replaced (its
 * tables disconnected, its destroy called). m NULL removes the module.
 * destroy (may be NULL) is called with aux once the module goes: replaced,
 * removed, the connection closed, or at once when the call fails.
 * SHALE_OK, SHALE_MISUSE (no name), SHALE_NOMEM. The module struct must
 * outlive its registration. */
int shale_create_module_v2(shale *db, const char *name, const shale_module *m, void *aux,
                           void (*destroy)(void *));
/* Remove every module whose name is not in keep (a NULL-terminated list;
 * NULL: remove all). SHALE_OK. */
int shale_drop_modules(shale *db, const char **keep);
/* From xCreate/xConnect only: the table's columns, as a CREATE TABLE
 * statement (any name; HIDDEN in a column's type hides it from SELECT *;
 * WITHOUT ROWID needs a PRIMARY KEY). SHALE_OK, SHALE_ERROR with the
 * connection's message (bad statement), SHALE_MISUSE (not connecting). */
int shale_declare_vtab(shale *db, const char *create_table_sql);
/* From xCreate/xConnect: SHALE_VTAB_CONSTRAINT_SUPPORT (int arg), _INNOCUOUS,
 * _DIRECTONLY. SHALE_OK or SHALE_MISUSE. */
int shale_vtab_config(shale *db, int op, int arg);
/* From xUpdate: the statement's conflict mode, SQLite's numbers: 1 ROLLBACK,
 * 2 IGNORE, 3 FAIL, 4 ABORT, 5 REPLACE. */
int shale_vtab_on_conflict(shale *db);
/* From xColumn during an UPDATE: 1 if the column is not changed (the
 * module may then return nothing). */
int shale_vtab_nochange(shale_context *ctx);
/* In xUpdate: 1 if argument v is a column an UPDATE does not change whose
 * xColumn (under shale_vtab_nochange) left it unset. */
int shale_value_nochange(shale_value *v);
/* From xBestIndex: the collation name of constraint i ("BINARY" default). */
const char *shale_vtab_collation(shale_index_info *info, int i);
/* From xBestIndex: 0 plain ORDER BY, 1 GROUP BY, 2 DISTINCT, 3 both. */
int shale_vtab_distinct(shale_index_info *info);
/* From xBestIndex: whether constraint i is an IN that the module may take
 * whole (handle >= 0 asks for it: 1 yes, 0 no; -1 asks only). */
int shale_vtab_in(shale_index_info *info, int i, int handle);
/* From xFilter: iterate the values of an IN constraint taken whole.
 * SHALE_OK (*out the value), SHALE_DONE at the end, SHALE_MISUSE (not such
 * a value), or an error reading the list. */
int shale_vtab_in_first(shale_value *v, shale_value **out);
int shale_vtab_in_next(shale_value *v, shale_value **out);
/* From xBestIndex: the value of constraint i's right side when it is known
 * at prepare time (a literal). SHALE_OK (*out valid during xBestIndex),
 * SHALE_NOTFOUND, SHALE_ERROR (i out of range). */
int shale_vtab_rhs_value(shale_index_info *info, int i, shale_value **out);

#ifdef __cplusplus
}
#endif
#endif /* SHALE_H */
