/*
 * gen.h -- the differential tester's seeded SQL generator.
 *
 * Owns: DiffGen, a deterministic stream of SQL statements in "rounds". Each
 * round starts on a fresh empty database: 2-4 tables (every affinity,
 * INTEGER PRIMARY KEY, WITHOUT ROWID, COLLATE NOCASE/RTRIM, UNIQUE),
 * sometimes a view, indexes created before or after the data, rows with
 * NULLs, extreme integers, reals, numeric-looking text, blobs and
 * duplicates; then queries (ON/USING/NATURAL joins, subqueries, VALUES,
 * aggregates, compounds, IS [NOT] DISTINCT FROM, ...) interleaved with
 * writes (OR IGNORE/REPLACE, UPSERT), index changes, ALTER TABLE ADD COLUMN
 * and transactions, and a few statements that must fail. A third random
 * stream (gen.c, "issue 7 features") adds CTEs, order-dependent window
 * functions over a key, printf/math/date/JSON probes, json_each/json_tree,
 * RETURNING, UPDATE FROM, UPSERT chains, ALTER RENAME/DROP COLUMN,
 * AUTOINCREMENT, generated columns and foreign-key rounds. A fourth stream
 * makes attach rounds: ATTACH ':memory:' AS aux, tables in main/temp/aux,
 * TEMP views and triggers, qualified names, DETACH/re-ATTACH at the end.
 * A sixth stream (issue 15) adds R-Tree tables (rtree, rtree_i32, 1-3
 * dimensions, aux columns) with their writes, window and join queries, and
 * the tests' own table-valued function tseries (series_vt.h).
 *
 * Invariants:
 *  1. The stream depends only on the seed: the generator never sees a
 *     result, so both engines (and a replay) get the same statements.
 *     Window queries use only window calls whose values do not depend on
 *     the order of rows that tie in the window's ORDER BY (ranking by
 *     peers, aggregates over RANGE/GROUPS frames or whole partitions).
 *  2. Every query's result is determined by SQL's semantics up to the
 *     comparison mode it is tagged with (GenStmt.cmp): no LIMIT without an
 *     ORDER BY over every output column, no scalar subquery that may return
 *     several rows, no bare columns in aggregates, no sum() over values
 *     whose rounding or overflow depends on the order, no write whose effect
 *     depends on the order rows are visited, no random()/rowid exposure.
 *     A query whose outputs may hold one of several equal-but-different
 *     values (1 vs 1.0, 'a' vs 'A' under NOCASE) under DISTINCT, GROUP BY
 *     or a compound is tagged DIFF_CMP_LOOSE and has no LIMIT.
 *  3. Strings returned by gen_next stay valid until the next gen_next.
 */
#ifndef SHALE_DIFF_GEN_H
#define SHALE_DIFF_GEN_H

#include <stdint.h>

#define GEN_QUERY 0 /* reads only */
#define GEN_WRITE 1 /* INSERT / UPDATE / DELETE */
#define GEN_DDL 2   /* CREATE / DROP */
#define GEN_TXN 3   /* BEGIN / COMMIT / ROLLBACK / SAVEPOINT */

/* Feature tags (GenStmt.tags), for grouping differences by cause. */
#define GT_JOIN (1u << 0)
#define GT_LEFT (1u << 1)
#define GT_SUBQ (1u << 2)
#define GT_CORR (1u << 3)
#define GT_AGG (1u << 4)
#define GT_GROUP (1u << 5)
#define GT_COMPOUND (1u << 6)
#define GT_DISTINCT (1u << 7)
#define GT_ORDER (1u << 8)
#define GT_LIMIT (1u << 9)
#define GT_CAST (1u << 10)
#define GT_COLLATE (1u << 11)
#define GT_LIKE (1u << 12)
#define GT_IN (1u << 13)
#define GT_CASE (1u << 14)
#define GT_DERIVED (1u << 15)
#define GT_EXISTS (1u << 16)
#define GT_FUNC (1u << 17)
#define GT_USING (1u << 18)
#define GT_ERROR (1u << 19) /* written to fail */
#define GT_CONFLICT (1u << 20)
#define GT_WINDOW (1u << 21)
#define GT_CTE (1u << 22)       /* WITH [RECURSIVE] */
#define GT_RETURNING (1u << 23) /* RETURNING */
#define GT_ALTER (1u << 24)     /* ALTER TABLE RENAME / DROP COLUMN */
#define GT_FEATURE (1u << 25)   /* other issue-7 features (UPDATE FROM, sqlite_sequence, ...) */
#define GT_NESTED (1u << 26)    /* a parenthesized join (issue 19) */
#define GT_VTAB (1u << 27)      /* R-Tree tables and tseries (issue 15) */
#define GT_NTAGS 28

typedef struct GenStmt {
  const char *sql;
  int kind;      /* GEN_QUERY .. GEN_TXN */
  int cmp;       /* DIFF_CMP_* (diff.h) */
  int truncated; /* has LIMIT/OFFSET */
  int new_round; /* run on fresh databases: reopen both engines first */
  uint32_t tags; /* GT_* */
} GenStmt;

typedef struct DiffGen DiffGen;

/* A generator seeded with seed; NULL if out of memory. */
DiffGen *gen_new(uint64_t seed);
void gen_free(DiffGen *g);
/* The next statement. Never fails. */
void gen_next(DiffGen *g, GenStmt *out);
/* Name of feature tag bit i (0 <= i < GT_NTAGS). */
const char *gen_tag_name(int i);

#endif
