/*
 * ddl.h -- a small reader of CREATE TABLE / CREATE INDEX text for the
 * storage shell: just enough to map stored records to table columns and to
 * know each index's key order. Not an SQL parser (src/sql/ will be); it
 * gives up (returns an error or marks a key "bad") on what it does not know.
 *
 * Invariants:
 *  1. DdlTable.recpos maps every stored column to its slot in the record:
 *     table order for rowid tables, PRIMARY KEY columns first for WITHOUT
 *     ROWID tables; VIRTUAL generated columns have no slot (-1).
 *  2. Collations are resolved lazily: a DdlKey column's coll is the explicit
 *     COLLATE of the key, else NULL (= the column's declared collation).
 */
#ifndef SHALE_CLI_DDL_H
#define SHALE_CLI_DDL_H

#include "../src/record/record.h"

#define DDL_MAX_COLS 2000
#define DDL_MAX_KEY 64
#define DDL_MAX_CONS 32

/* The columns of a PRIMARY KEY, UNIQUE constraint or index, in key order. */
typedef struct DdlKey {
  int n;
  int col[DDL_MAX_KEY];
  uint8_t desc[DDL_MAX_KEY];
  const Collation *coll[DDL_MAX_KEY]; /* explicit COLLATE, or NULL */
  uint8_t bad; /* an expression, unknown column/collation or too many columns */
} DdlKey;

typedef struct DdlTable {
  int ncol;
  char *name[DDL_MAX_COLS];            /* shale_malloc'ed */
  char aff[DDL_MAX_COLS];              /* AFF_* from the declared type */
  uint8_t is_integer[DDL_MAX_COLS];    /* declared type is exactly INTEGER */
  uint8_t is_virtual[DDL_MAX_COLS];    /* VIRTUAL generated column (not stored) */
  const Collation *coll[DDL_MAX_COLS]; /* declared COLLATE (NULL = BINARY) */
  uint8_t coll_unknown[DDL_MAX_COLS];  /* a COLLATE this shell does not know */
  ShValue def[DDL_MAX_COLS];           /* DEFAULT (affinity applied, owned) or NULL */
  int recpos[DDL_MAX_COLS];            /* slot in the stored record, -1 if not stored */
  int ipk;                             /* column aliasing the rowid, or -1 */
  int without_rowid;
  DdlKey pk; /* pk.n == 0: no PRIMARY KEY */
  /* PRIMARY KEY and UNIQUE constraints in order of appearance: the N-th is
   * the one behind sqlite_autoindex_<table>_<N>. */
  DdlKey cons[DDL_MAX_CONS];
  int ncons;
} DdlTable;

/* Parse CREATE TABLE text into *t (which is overwritten). 0 on success; on
 * failure t holds nothing to free. */
int ddl_parse_table(const char *sql, DdlTable *t);
void ddl_table_free(DdlTable *t);

/* Parse the column list of CREATE INDEX text against its table. 0 on
 * success (k->bad may still be set for an expression index). */
int ddl_parse_index(const char *sql, const DdlTable *t, DdlKey *k);

/* Fill the key order of an index tree over key k: coll/desc get the
 * per-column collations and orders (arrays of at least DDL_MAX_KEY * 2),
 * *ncol their count. For an index on a WITHOUT ROWID table the primary-key
 * columns not in k follow (they break ties in the stored key). Returns 0,
 * or -1 when the order cannot be known (bad key, unknown collation). */
int ddl_key_order(const DdlTable *t, const DdlKey *k, int append_pk, const Collation **coll,
                  uint8_t *desc, int *ncol);

#endif /* SHALE_CLI_DDL_H */
