/*
 * twork.h -- TEST SCAFFOLDING: the deterministic workload of the crash
 * tests. One rowid table tw(a, b COLLATE NOCASE, c) with two indexes
 * (tw_b on b, tw_cb on (c, b)); rows are keyed 1..TW_NKEYS (rowid = key).
 * Commit k is a list of operations derived from k alone (and its size), so
 * the content after commit k can be recomputed from nothing: the model.
 * The number of the last commit is stored in user_version.
 *
 * Invariants:
 *  1. A row's values depend only on (key, version), where version is the
 *     commit that last wrote it; the model is the version of each key
 *     (0 = absent) and the commit number k.
 *  2. tw_apply() on a Tdb and tw_model_apply() on a model perform the same
 *     operations; each ends with user_version = k.
 *  3. Some rows are large (b of 3000 bytes, c a blob of up to 6000 bytes)
 *     so that commits also allocate and free overflow pages.
 */
#ifndef SHALE_TESTS_TWORK_H
#define SHALE_TESTS_TWORK_H

#include <sqlite3.h>

#include "tdb.h"

#define TW_NKEYS 400

typedef struct TwModel {
  uint32_t k;
  uint32_t ver[TW_NKEYS + 1];
} TwModel;

extern const TdbTableDef tw_table;
extern const TdbIndexDef tw_index_b, tw_index_cb;

/* Create (own transaction) or bind the table and its indexes. */
int tw_create(Tdb *db);
int tw_bind(Tdb *db);

void tw_model_reset(TwModel *m);
/* Default number of operations of commit k (1..24; 1 in 16 150..400). */
int tw_default_nops(uint32_t k);
/* Apply commit k (nops operations) to the model; m->k = k. */
void tw_model_apply(TwModel *m, uint32_t k, int nops);
/* The model after commits 1..k with their default sizes. */
void tw_model_at(TwModel *m, uint32_t k);
/* Perform commit k's operations through tdb (inside the caller's
 * transaction) and set user_version = k; m is updated as it goes (it must
 * hold the state before). */
int tw_apply(Tdb *db, TwModel *m, uint32_t k, int nops);

/* The same through the reference SQLite (inside the caller's transaction):
 * SQLite writes commit k exactly as tw_apply would. SQLITE_OK or its error. */
int tw_apply_sqlite(sqlite3 *db, TwModel *m, uint32_t k, int nops);

/* Compare the database with the model (rows and user_version). Returns 0
 * if equal, else the number of differences (first described in msg). */
int tw_verify(Tdb *db, const TwModel *m, char *msg, int nmsg);
/* The same through the reference SQLite, after its integrity_check. */
int tw_verify_sqlite(const char *path, const TwModel *m, char *msg, int nmsg);

#endif
