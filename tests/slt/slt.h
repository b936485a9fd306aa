/*
 * slt.h -- the project's sqllogictest runner (issue 3), engine-independent.
 *
 * The runner reads a .test script (format: ../shared/slt/README.md), runs it
 * on a fresh database through an SltEngine (a table of function pointers)
 * and counts records passed / failed / skipped. Backends: engine_sqlite.c
 * (the reference SQLite); the Shale backend comes with the SQL engine
 * (see tests/slt/README.md for what it must implement).
 *
 * Invariants:
 *  1. Each slt_run_file call opens its own database file test.db in a fresh
 *     scratch directory (under $TMPDIR or /tmp) and removes it afterwards.
 *  2. Values are rendered by the runner from typed values (slt_render_*),
 *     never by the engine; sorting and hashing work on rendered strings.
 *  3. passed + failed counts the statement/query records that ran (plus
 *     label mismatches of skipped records, as the reference runner does);
 *     skipped counts records dropped by skipif/onlyif.
 *  4. Backends open the database with synchronous=OFF: the scripts check
 *     answers, not durability, and syncing every autocommit statement made
 *     the corpus wait on the disk most of its time.
 */
#ifndef SHALE_SLT_H
#define SHALE_SLT_H

#include <stddef.h>
#include <stdint.h>

typedef enum SltType { SLT_NULL, SLT_INT, SLT_REAL, SLT_TEXT, SLT_BLOB } SltType;

/* One result value. z/n are valid for TEXT and BLOB (z may be NULL when n==0)
 * and only during the row callback. */
typedef struct SltValue {
  SltType type;
  int64_t i;
  double r;
  const char *z;
  size_t n;
} SltValue;

/* Result codes of SltEngine.query. */
#define SLT_OK 0
#define SLT_ERROR 1      /* no result: prepare failed, or no statement */
#define SLT_STEP_ERROR 2 /* an error while stepping; rows delivered stand */

/* Called once per result row; return 0 to go on, nonzero to stop stepping. */
typedef int (*SltRowFn)(void *ctx, int ncol, const SltValue *row);

typedef struct SltEngine {
  const char *name; /* for skipif/onlyif, e.g. "sqlite" */
  /* Open (create) the database file at path; NULL on failure. */
  void *(*open)(const char *path);
  /* Run every ;-separated statement of sql, stopping at the first error,
   * like sqlite3_exec. 0 = ok, nonzero = error. */
  int (*exec)(void *h, const char *sql);
  /* Prepare only the first statement of sql, set *ncol to its column count,
   * then step it, calling row() per row. Returns SLT_OK / SLT_ERROR /
   * SLT_STEP_ERROR. */
  int (*query)(void *h, const char *sql, int *ncol, SltRowFn row, void *ctx);
  /* Latest error message of h (for failure reports); never NULL. */
  const char *(*errmsg)(void *h);
  /* Close h; 0 = ok. */
  int (*close)(void *h);
} SltEngine;

/* The reference SQLite backend (engine_sqlite.c), engine name "sqlite". */
extern const SltEngine slt_engine_sqlite;

typedef struct SltStats {
  long passed, failed, skipped;
  long step_errors; /* queries whose step failed (result kept, rule 5) */
  int status;       /* SLT_DONE, SLT_HALT, SLT_BAD_SCRIPT, SLT_IO_ERROR */
  double seconds;
} SltStats;

#define SLT_DONE 0
#define SLT_HALT 1
#define SLT_BAD_SCRIPT 2
#define SLT_IO_ERROR 3

/* Run one script. Prints each failure (up to slt_max_details per file) as
 * file:line, SQL, expected vs got. Returns 0 when nothing failed. */
int slt_run_file(const SltEngine *e, const char *path, SltStats *out);

/* Failures printed per file (default 10); the rest are only counted. */
extern int slt_max_details;

/* Called (when not NULL) for every failing record, printed or not: the
 * script's path and the record's line. */
extern void (*slt_fail_hook)(const char *path, int line);

/* The quick subset of the corpus (every small file plus one of each
 * generated kind), by path relative to the corpus folder: what
 * SHALE_SLT_QUICK=1 and the sanitizer build run. */
int slt_in_quick_subset(const char *rel);

/* A growable byte buffer (malloc'd; free z when done). */
typedef struct SltBuf {
  char *z;
  size_t n, cap;
} SltBuf;

/* Rendering (rule 6 of the README): append the rendered value of v for the
 * column type letter ('I', 'T' or 'R') and a NUL to out; returns the offset
 * of the string in out->z. Aborts the process on out-of-memory (test code). */
size_t slt_render(char type, const SltValue *v, SltBuf *out);
/* %.3f as current SQLite: one rounding of the exact value, halves away
 * from zero, at the 3rd decimal or the 16th significant digit, whichever
 * comes first. buf needs SLT_REAL_MAX bytes. Returns the length. */
#define SLT_REAL_MAX 1600
size_t slt_fmt_real(double r, char *buf, size_t cap);
int64_t slt_text_to_i64(const char *z, size_t n);
double slt_text_to_real(const char *z, size_t n);

#endif
