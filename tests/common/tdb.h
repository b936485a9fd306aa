/*
 * tdb.h -- TEST SCAFFOLDING: a tiny database API over btree + records, for
 * the interop and crash tests, until the SQL layer exists.
 *
 * This is not a schema layer. It knows only what the tests need:
 *  - tables are described by the caller (TdbTableDef: columns, collation per
 *    column, PRIMARY KEY columns, INTEGER PRIMARY KEY, WITHOUT ROWID) and the
 *    CREATE text is stored verbatim in sqlite_schema; it is never parsed;
 *  - indexes (TdbIndexDef) are plain column lists that take each column's
 *    collation from the table (BINARY or NOCASE; no DESC, no expressions);
 *  - automatic indexes sqlite_autoindex_<t>_<N> (sql NULL) as SQLite makes
 *    them (FORMAT-db.md §7): N counts the PRIMARY KEY (unless INTEGER
 *    PRIMARY KEY) and then the UNIQUE constraints, which the description
 *    must list in declaration order with the PRIMARY KEY declared before
 *    them; a WITHOUT ROWID table's PK takes number 1 but has no tree of its
 *    own (the table is that tree).
 *  - values carry no affinity: tests declare columns without a type (BLOB
 *    affinity) so that what is written is exactly what SQLite reads back.
 * Uniqueness is enforced only for the rowid / WITHOUT ROWID PK; the tests
 * keep UNIQUE columns unique themselves.
 *
 * Records are encoded and decoded by tdb_rec.c, a private codec written for
 * these tests (FORMAT-db.md §6-§7), independent of src/record. Index trees
 * (and WITHOUT ROWID tables) are ordered by src/record's record_compare with
 * a KeyInfo built from the column collations; tdb_check re-checks that order
 * with tdb_rec.c's own comparator, so the two must agree.
 *
 * Invariants:
 *  1. Every mutation keeps every index of the table exactly in step with the
 *     table: one key per row, = indexed columns + rowid (rowid tables) or
 *     indexed columns + the PK columns not already indexed (WITHOUT ROWID).
 *  2. Index trees are ordered by record_compare (and verified by tdb_key_cmp)
 *     in SQLite's order: NULL < numbers < TEXT < BLOB, numbers by value,
 *     TEXT by the column collation, BLOB by memcmp.
 *  3. A mutation outside tdb_begin() runs in its own transaction (committed
 *     on success, rolled back on error). Inside one, a failed mutation
 *     leaves the transaction in an unspecified state: the caller rolls back
 *     (there are no statement savepoints). Tables and indexes created in a
 *     transaction that is rolled back are forgotten. A write begin that
 *     fails (e.g. SHALE_BUSY) leaves no transaction, hence no lock, behind.
 *  4. Every schema change bumps the schema cookie by one, as SQLite does.
 */
#ifndef SHALE_TESTS_TDB_H
#define SHALE_TESTS_TDB_H

#include <stdint.h>

#include "../../src/btree/btree.h"

#define TDB_MAXCOL 16
#define TDB_MAXTAB 16
#define TDB_MAXIDX 8 /* per table */
#define TDB_MAXUNIQUE 4

/* Value types (SQLite's fundamental types). */
#define TDB_NULL 0
#define TDB_INT 1
#define TDB_REAL 2
#define TDB_TEXT 3
#define TDB_BLOB 4

/* Collations. */
#define TDB_BINARY 0
#define TDB_NOCASE 1

/* A value. TEXT/BLOB point at memory owned by someone else (the caller, or
 * the TdbRow they were decoded into). */
typedef struct TdbValue {
  int type;
  int64_t i;
  double r;
  const uint8_t *p;
  uint32_t n;
} TdbValue;

static inline TdbValue tdb_null(void) {
  TdbValue v = {TDB_NULL, 0, 0, 0, 0};
  return v;
}
static inline TdbValue tdb_int(int64_t i) {
  TdbValue v = {TDB_INT, i, 0, 0, 0};
  return v;
}
static inline TdbValue tdb_real(double r) {
  TdbValue v = {TDB_REAL, 0, r, 0, 0};
  return v;
}
static inline TdbValue tdb_text(const void *p, uint32_t n) {
  TdbValue v = {TDB_TEXT, 0, 0, (const uint8_t *)p, n};
  return v;
}
static inline TdbValue tdb_blob(const void *p, uint32_t n) {
  TdbValue v = {TDB_BLOB, 0, 0, (const uint8_t *)p, n};
  return v;
}

/* ---- record codec (tdb_rec.c) ---- */

/* Bytes of the record holding v[0..n). */
uint32_t tdb_record_size(const TdbValue *v, int n);
/* Encode into out (tdb_record_size bytes); returns the length. Integers take
 * the smallest serial type (0/1 as types 8/9), reals type 7. */
uint32_t tdb_record_encode(const TdbValue *v, int n, uint8_t *out);
/* Decode up to max values; *nout = number of columns in the record (may be
 * more than max: the rest are skipped). Values point into rec.
 * SHALE_CORRUPT if the record is malformed. */
int tdb_record_decode(const uint8_t *rec, uint32_t n, TdbValue *out, int max, int *nout);

/* Order of two values under a collation, as SQLite's index order. */
int tdb_value_cmp(const TdbValue *a, const TdbValue *b, int coll);
/* 1 if a and b have the same type and the same value exactly (reals by
 * bit pattern, so -0.0 != 0.0). */
int tdb_value_same(const TdbValue *a, const TdbValue *b);
/* Print a value (for failure messages) into buf; returns buf. */
char *tdb_value_str(const TdbValue *v, char *buf, int nbuf);

/* How an index tree compares its keys: the first nfield fields, each with
 * its collation. Records equal on those fields compare equal. */
typedef struct TdbKeyInfo {
  int nfield;
  uint8_t coll[TDB_MAXCOL + 1];
} TdbKeyInfo;
/* A BtreeKeyCmp; ctx is a TdbKeyInfo. A malformed record sorts first. */
int tdb_key_cmp(void *ctx, const void *a, uint32_t na, const void *b, uint32_t nb);

/* ---- schema descriptions (supplied by the test, kept alive by it) ---- */

typedef struct TdbTableDef {
  const char *name;
  const char *sql; /* CREATE TABLE text, stored verbatim */
  int ncols;
  uint8_t coll[TDB_MAXCOL]; /* per column TDB_BINARY / TDB_NOCASE */
  int without_rowid;
  int npk;            /* PRIMARY KEY columns; 0 = none */
  int pk[TDB_MAXCOL]; /* their column numbers, in PK order */
  int ipk;            /* 1 + column of an INTEGER PRIMARY KEY (its
                         value is the rowid, stored as NULL); 0 none */
  int nunique;        /* UNIQUE constraints, declared after the PK */
  int unique_ncols[TDB_MAXUNIQUE];
  int unique_cols[TDB_MAXUNIQUE][TDB_MAXCOL];
} TdbTableDef;

typedef struct TdbIndexDef {
  const char *name;
  const char *table;
  const char *sql; /* CREATE INDEX text, stored verbatim */
  int ncols;
  int cols[TDB_MAXCOL]; /* table column numbers */
} TdbIndexDef;

/* ---- the database ---- */

typedef struct Tdb Tdb;

/* Open (creating if needed) path through vfs (NULL = default). page_size
 * applies only if the file is new (0 = default). Reads sqlite_schema (this
 * rolls back a hot journal). */
int tdb_open(OsVfs *vfs, const char *path, uint32_t page_size, Tdb **out);
/* Roll back any open transaction and close. NULL is a no-op. Always frees. */
int tdb_close(Tdb *);
Btree *tdb_btree(Tdb *);
/* Journal mode (PAGER_JOURNAL_*) and synchronous level (PAGER_SYNC_*). */
void tdb_set_journal(Tdb *, int journal_mode, int sync_level);
/* A message for the last failure (static storage in the Tdb), or "". */
const char *tdb_errmsg(Tdb *);

int tdb_begin(Tdb *);
int tdb_commit(Tdb *);
int tdb_rollback(Tdb *);
int tdb_in_txn(Tdb *);

/* Create: the tree(s), the sqlite_schema row(s), cookie + 1. Indexes are
 * filled from the table's rows. */
int tdb_create_table(Tdb *, const TdbTableDef *);
int tdb_create_index(Tdb *, const TdbIndexDef *);
/* Bind a description to a table / index that exists in the file (e.g. made
 * by SQLite). SHALE_NOTFOUND if there is no such schema object. */
int tdb_bind_table(Tdb *, const TdbTableDef *);
int tdb_bind_index(Tdb *, const TdbIndexDef *);

/* Rows. vals has def->ncols values in table column order. For an INTEGER
 * PRIMARY KEY column the value given is ignored (the rowid is used). For a
 * WITHOUT ROWID table rowid is ignored and the row is found by its PK.
 * insert: SHALE_CONSTRAINT if the rowid / PK exists.
 * update: replace the row with that rowid / PK; SHALE_NOTFOUND if absent.
 * delete: SHALE_NOTFOUND if absent; delete_pk takes a full row (only the PK
 * columns are looked at). */
int tdb_insert(Tdb *, const char *table, int64_t rowid, const TdbValue *vals);
int tdb_update(Tdb *, const char *table, int64_t rowid, const TdbValue *vals);
int tdb_delete(Tdb *, const char *table, int64_t rowid);
int tdb_delete_pk(Tdb *, const char *table, const TdbValue *vals);

/* A row read back: values point into buf. Free with tdb_row_clear. */
typedef struct TdbRow {
  int64_t rowid;
  int n;
  TdbValue v[TDB_MAXCOL + 1];
  uint8_t *buf;
} TdbRow;
void tdb_row_clear(TdbRow *);

/* Fetch one row: *found = 0 if absent. */
int tdb_get(Tdb *, const char *table, int64_t rowid, TdbRow *row, int *found);
int tdb_get_pk(Tdb *, const char *table, const TdbValue *vals, TdbRow *row, int *found);

/* Visit every row in rowid / PK order, values in table column order (the
 * INTEGER PRIMARY KEY column holds the rowid). The callback returns nonzero
 * to stop (tdb_scan then returns that value). The row is valid during the
 * call only. */
typedef int (*TdbRowFn)(void *ctx, const TdbRow *row);
int tdb_scan(Tdb *, const char *table, TdbRowFn fn, void *ctx);
/* Visit every key of an index in tree order (row->v = the key's fields,
 * rowid = 0). */
int tdb_scan_index(Tdb *, const char *index, TdbRowFn fn, void *ctx);
/* Rows in a table / entries in an index. */
int tdb_count(Tdb *, const char *name, int64_t *n);

/* Set / read user_version (header offset 60), for the crash tests. */
int tdb_set_user_version(Tdb *, uint32_t v);
int tdb_get_user_version(Tdb *, uint32_t *v);

/* Shale's integrity check over every tree of the schema (bound objects
 * with their comparators), plus a check that every index holds exactly one
 * key per row. *report = NULL if clean, else shale_malloc'ed text. */
int tdb_check(Tdb *, char **report);

#endif /* SHALE_TESTS_TDB_H */
