/*
 * diff.h -- the differential tester (issue 3): run the same generated SQL on
 * two engines in one process and report every difference in rows or errors.
 *
 * Owns: the engine interface (DiffEngine, a table of function pointers), the
 * typed result sets (DiffResult), the result comparison (diff_compare) and
 * the driver (diff_run) that feeds statements from the generator (gen.h) to
 * a reference engine and an engine under test, prints every difference with
 * a script that reproduces it, and can minimize that script.
 *
 * Backends: engine_sqlite.c (the reference libsqlite3) and engine_shale.c
 * (Shale's native shale_* API).
 *
 * Invariants:
 *  1. A DiffResult owns copies of every value (text and blob bytes are
 *     malloc'd and NUL-terminated); it never points into an engine.
 *  2. Comparison never looks at engine state, only at two DiffResults and
 *     the comparison mode the generator chose for the statement.
 *  3. Reals are equal when their bits are equal or their %.15g renderings
 *     are (SQLite's own output precision, see diff.c), never otherwise; an
 *     integer never equals a real in the strict modes.
 *  4. When both engines fail, the rows are not compared (rows delivered
 *     before a step error depend on the plan); the message texts and
 *     extended codes are compared and counted separately
 *     (DiffStats.msg_diffs).
 *  5. The driver runs statements only through DiffEngine, so any two engines
 *     can be compared; SQLite against SQLite must give zero differences.
 */
#ifndef SHALE_DIFF_H
#define SHALE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Storage classes, with SQLite's numbers. */
#define DIFF_INTEGER 1
#define DIFF_FLOAT 2
#define DIFF_TEXT 3
#define DIFF_BLOB 4
#define DIFF_NULL 5

typedef struct DiffValue {
  int type;  /* DIFF_INTEGER .. DIFF_NULL */
  int64_t i; /* DIFF_INTEGER */
  double r;  /* DIFF_FLOAT */
  char *z;   /* DIFF_TEXT / DIFF_BLOB: owned, NUL-terminated copy */
  size_t n;  /* bytes in z, without the terminator */
} DiffValue;

typedef struct DiffResult {
  int rc;          /* 0 = success, else the primary result code */
  int xrc;         /* extended result code (0 on success) */
  char *err;       /* owned error message when rc != 0, else NULL */
  int ncol;        /* result columns (0 for statements without rows) */
  size_t nrow;     /* rows delivered (before an error, if any) */
  size_t cap;      /* values allocated in v */
  DiffValue *v;    /* nrow * ncol values, row-major */
  int64_t changes; /* changes() after the statement (DML only, else 0) */
} DiffResult;

/* The engine interface. A handle is one connection to a fresh, empty
 * in-memory database. */
typedef struct DiffEngine {
  const char *name;
  /* Open a fresh empty database; NULL on failure. */
  void *(*open)(void);
  /* Run every ;-separated statement of sql (no rows kept); 0 or an error
   * code. */
  int (*exec)(void *h, const char *sql);
  /* Prepare the one statement sql, step it to the end collecting typed rows
   * into *out (which the caller reset with diff_result_reset), and record
   * the error code and message, or changes() for a successful write. */
  void (*query)(void *h, const char *sql, DiffResult *out);
  /* Latest error message of h; never NULL. */
  const char *(*errmsg)(void *h);
  void (*close)(void *h);
} DiffEngine;

extern const DiffEngine diff_engine_sqlite;
/* SQLite with reversed unordered scans and its optimizations off: a second
 * oracle with different plans, to prove the generator's results do not
 * depend on the plan. */
extern const DiffEngine diff_engine_sqlite_other_plans;
/* The engine under test: Shale when its API is built in, else NULL. */
extern const DiffEngine *const diff_engine_shale;

/* ---- Results (helpers for backends) ---- */
void diff_result_init(DiffResult *r);
/* Empty r for reuse (frees values, keeps the row buffer). */
void diff_result_reset(DiffResult *r);
void diff_result_free(DiffResult *r);
/* Append a row of r->ncol values (type DIFF_NULL); NULL on out of memory. */
DiffValue *diff_result_add_row(DiffResult *r);
/* Set v to text or blob: copies n bytes of p. Returns 0, or -1 if OOM. */
int diff_value_set_bytes(DiffValue *v, int type, const void *p, size_t n);
/* Record an error: rc, extended rc and a copy of msg. */
void diff_result_set_error(DiffResult *r, int rc, int xrc, const char *msg);
/* Print r (at most max_rows rows) as "rc/err" or rows of SQL literals. */
void diff_result_print(FILE *f, const DiffResult *r, size_t max_rows);

/* ---- Comparison ---- */
/* How the rows of a statement are compared (chosen by the generator). */
#define DIFF_CMP_BAG 0     /* multiset, exact types and values */
#define DIFF_CMP_LOOSE 1   /* multiset of canonical values (see diff.c) */
#define DIFF_CMP_ORDERED 2 /* order matters, except among tied rows */

/* Compare got against ref. mode: DIFF_CMP_*; truncated: the query has a
 * LIMIT/OFFSET, so tie groups at either end may hold other members.
 * Returns 0 when they agree; else 1 and a reason in why. Error results
 * agree when both are errors (message text not compared here). */
int diff_compare(const DiffResult *ref, const DiffResult *got, int mode, int truncated, char *why,
                 size_t nwhy);

/* ---- Driver ---- */
typedef struct DiffOptions {
  uint64_t seed;
  long n;                 /* statements to run */
  const DiffEngine *ref;  /* the oracle */
  const DiffEngine *test; /* the engine under test */
  int max_details;        /* differences printed in full (default 20) */
  int minimize;           /* minimize the scripts of this many differences */
  int max_diffs;          /* stop after this many differences (0 = never) */
  int verbose;            /* print every statement */
  int eqp;                /* 1: also compare each query's EXPLAIN QUERY PLAN text (counted
                             only, DiffStats.eqp_*); 2: and print the plans that differ */
  FILE *out;              /* where reports go (default stderr) */
} DiffOptions;

typedef struct DiffStats {
  long stmts, queries, writes, ddl, rounds;
  long both_error; /* statements on which both engines failed */
  long rows_total; /* rows compared (reference side) */
  long empty;      /* queries that succeeded with no rows (reference side) */
  long diffs;      /* differences in rows, errors or changes */
  long msg_diffs;  /* both failed, with another message text or code */
  long ordered, loose;
  /* opts.eqp: queries both engines ran, and those whose EXPLAIN QUERY PLAN
   * text was equal with both planning under automatic_index=OFF (eqp_same),
   * or with the engine under test's automatic indexes on (eqp_same_auto) */
  long eqp_total, eqp_same, eqp_same_auto;
  /* opts.eqp: unordered queries (multiset comparison) with 2+ rows that
   * agreed, and those whose rows also came in the reference's order */
  long order_total, order_same;
  double seconds;
} DiffStats;

/* Run opts->n statements of the generator seeded with opts->seed on both
 * engines. Prints each difference (the first max_details in full, with the
 * script that reproduces it) and a summary grouped by cause. Returns 0 when
 * it ran (differences are in stats), -1 if an engine could not be opened. */
int diff_run(const DiffOptions *opts, DiffStats *stats);

/* Print stats as one line. */
void diff_stats_print(FILE *f, const DiffStats *s);

#endif
