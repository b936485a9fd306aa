/*
 * session_int.h -- what compat/session.c (recording sessions, writing
 * changesets) and compat/changeset.c (reading changesets) share: the growable
 * output buffer and SQLite's changeset value encoding.
 *
 * The changeset format (SQLite's sessions documentation): a sequence of
 * tables, each a header -- 'T' (changeset) or 'P' (patchset), a varint
 * column count, one byte per column (0, or the column's 1-based place in the
 * PRIMARY KEY), the table name with its NUL -- then records: opcode byte
 * (SQLITE_INSERT 18, SQLITE_UPDATE 23, SQLITE_DELETE 9), indirect byte, and
 * one or two value records of one value per column. A value is a type byte
 * (0 undefined, 1 INTEGER, 2 FLOAT, 3 TEXT, 4 BLOB, 5 NULL), then for 1 and 2
 * eight big-endian bytes (the integer, or the double's bits), for 3 and 4 a
 * varint length and the bytes, for 0 and 5 nothing. Varints are SQLite's
 * record-format varints.
 *
 * Invariants:
 *  1. A SessBuf whose rc is not SQLITE_OK has stopped growing; every append
 *     after a failure does nothing, so writers check rc once at the end.
 *  2. sess_value_len() never reads past the n bytes it is given: a truncated
 *     or corrupt value gives -1.
 */
#ifndef SHALE_COMPAT_SESSION_INT_H
#define SHALE_COMPAT_SESSION_INT_H

#include "sqlite3.h"
#include "sqlite3session.h"

typedef struct SessBuf {
  unsigned char *a; /* sqlite3_malloc64'd, or NULL */
  sqlite3_int64 n, cap;
  int rc;
} SessBuf;

void sess_buf_bytes(SessBuf *b, const void *p, sqlite3_int64 n);
void sess_buf_byte(SessBuf *b, int c);
void sess_buf_varint(SessBuf *b, sqlite3_uint64 v);
void sess_buf_i64(SessBuf *b, sqlite3_int64 v); /* eight big-endian bytes */
/* One value in the changeset encoding; NULL v writes "undefined" (0x00). */
void sess_buf_value(SessBuf *b, sqlite3_value *v);

/* Reads a varint at p (at most n bytes); returns its length, 0 if truncated. */
int sess_get_varint(const unsigned char *p, sqlite3_int64 n, sqlite3_uint64 *v);
sqlite3_int64 sess_get_i64(const unsigned char *p);
/* A rebaser's mark for a column a remote change replaced (compat/changegroup.c);
 * never valid in a changeset (the iterator refuses it). */
#define SESS_REPLACED 0xFF
/* Length of the encoded value at p (type byte included; SESS_REPLACED is one
 * byte), -1 if corrupt. */
sqlite3_int64 sess_value_len(const unsigned char *p, sqlite3_int64 n);

/* A row's change: in a session (compat/session.c) or a changegroup
 * (compat/changegroup.c). */
typedef struct SessChange {
  struct SessChange *next; /* in its hash bucket */
  int op;                  /* SQLITE_INSERT, _UPDATE or _DELETE */
  int indirect;
  int nrec;
  sqlite3_int64 max_size; /* a session's: the most this change has added to changeset_size */
  unsigned char *rec;     /* a session: the original values (session.c, invariant 2);
                             a changegroup: the change's record(s) as a changeset has them */
} SessChange;

typedef struct SessTable {
  struct SessTable *next;
  char *name;
  int loaded; /* a session's table: columns read (session.c, invariant 3) */
  int ncol, npk;
  unsigned char *pk; /* per column: 0, or 1-based place in the key */
  char **cols;       /* column names (sessions only) */
  SessChange **hash;
  int nbucket, nentry;
} SessTable;

/* SQLite's hash of the key in a record (pk_only: the record holds only the
 * key columns); the bucket is the hash modulo t->nbucket. */
unsigned sess_hash_record(const SessTable *t, const unsigned char *a, sqlite3_int64 n, int pk_only);
/* Grows t's hash as SQLite does when half full (first 256 buckets); mem,
 * if not NULL, counts the bytes added. */
int sess_table_grow(SessTable *t, int patch, sqlite3_int64 *mem);
/* Frees t, its changes and its columns. */
void sess_table_free(SessTable *t);

/* The columns of zdb.name in order (PRAGMA table_info): *pncol of them,
 * ppk[i] 0 or the column's place in the PRIMARY KEY, pcols[i] its name
 * (free with sess_free_cols and sqlite3_free). No such table: 0 columns. */
int sess_table_info(sqlite3 *db, const char *zdb, const char *name, int *pncol, unsigned char **ppk,
                    char ***pcols);
void sess_free_cols(char **cols, int n);
/* Prepares the SQL q holds (and frees q). */
int sess_prepare(sqlite3 *db, sqlite3_str *q, sqlite3_stmt **pst);

/* A changeset iterator (compat/changeset.c); the appliers
 * (compat/changeset_apply.c) read and set the conflict fields. */
struct sqlite3_changeset_iter {
  const unsigned char *a; /* the changeset */
  sqlite3_int64 n, off;   /* its size; where the next record starts */
  unsigned char *owned;   /* a copy read from xInput (freed at finalize) */
  int invert;             /* SQLITE_CHANGESETSTART_INVERT */
  int rc;                 /* sticky: corrupt input */
  /* the current table */
  const char *tab;
  int ncol, patch;
  const unsigned char *pk;
  /* the current record: bytes [cur, off) */
  sqlite3_int64 cur;
  int op, indirect;
  sqlite3_value **vals; /* 2 * ncol: old values, then new; NULL = undefined */
  int nvals;
  /* during an apply's conflict callback */
  sqlite3_stmt *conflict; /* the conflicting row (DATA, CONFLICT) */
  int nfk;                /* FOREIGN_KEY: the deferred violations; -1 otherwise */
};

/* Iterator over n bytes at a (not copied: the caller keeps them alive). */
int sess_iter_start(sqlite3_changeset_iter **pp, int n, const void *a, int invert);
/* The xInput stream read whole into memory (sqlite3_malloc64'd). */
int sess_read_stream(int (*in)(void *, void *, int *), void *arg, int *pn, void **pp);

#endif
