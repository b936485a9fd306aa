/*
 * engine_shale.c -- SltEngine backend on Shale's native API (shale_*).
 *
 * Owns: slt_engine_shale. Its engine name is "sqlite": the corpus's
 * skipif/onlyif guards are written for that name (../shared/slt/README.md:
 * "NAME is compared ... with the engine name, which is sqlite for this
 * project"), so Shale runs exactly the records SQLite runs.
 * Invariants:
 *  1. Values are delivered in their own storage class (column_type, then
 *     column_int64 / column_double / column_text / column_blob); the runner
 *     does every conversion itself.
 *  2. query prepares only the first statement (tail ignored) and always
 *     finalizes it.
 *  3. Includable next to engine_sqlite.c in one translation unit (static
 *     names are prefixed sh_).
 */
#include "shale.h"
#include "slt.h"

static void *sh_open(const char *path) {
  shale *db = NULL;
  if (shale_open_v2(path, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL) != SHALE_OK) {
    shale_close(db);
    return NULL;
  }
  /* Results do not depend on durability: no syncs (slt.h invariant 4). */
  shale_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  return db;
}

static int sh_exec(void *h, const char *sql) {
  char *msg = NULL;
  int rc = shale_exec(h, sql, NULL, NULL, &msg);
  shale_free(msg);
  return rc != SHALE_OK;
}

static int sh_query(void *h, const char *sql, int *ncol, SltRowFn row, void *ctx) {
  shale_stmt *st = NULL;
  if (shale_prepare_v2(h, sql, -1, &st, NULL) != SHALE_OK) {
    shale_finalize(st);
    return SLT_ERROR;
  }
  if (!st) return SLT_ERROR; /* only white space or comments */
  int n = shale_column_count(st);
  *ncol = n;
  SltValue vbuf[64], *v = n <= 64 ? vbuf : shale_malloc(sizeof(SltValue) * (size_t)n);
  int rc;
  if (!v) {
    shale_finalize(st);
    return SLT_ERROR;
  }
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < n; i++) {
      v[i].z = NULL;
      v[i].n = 0;
      switch (shale_column_type(st, i)) {
        case SHALE_NULL:
          v[i].type = SLT_NULL;
          break;
        case SHALE_INTEGER:
          v[i].type = SLT_INT;
          v[i].i = shale_column_int64(st, i);
          break;
        case SHALE_FLOAT:
          v[i].type = SLT_REAL;
          v[i].r = shale_column_double(st, i);
          break;
        case SHALE_TEXT:
          v[i].type = SLT_TEXT;
          v[i].z = (const char *)shale_column_text(st, i);
          v[i].n = (size_t)shale_column_bytes(st, i);
          break;
        default:
          v[i].type = SLT_BLOB;
          v[i].z = shale_column_blob(st, i);
          v[i].n = (size_t)shale_column_bytes(st, i);
          break;
      }
    }
    if (row(ctx, n, v)) {
      rc = SHALE_DONE;
      break;
    }
  }
  if (v != vbuf) shale_free(v);
  shale_finalize(st);
  return rc == SHALE_DONE ? SLT_OK : SLT_STEP_ERROR;
}

static const char *sh_errmsg(void *h) { return shale_errmsg(h); }

static int sh_close(void *h) { return shale_close(h) != SHALE_OK; }

const SltEngine slt_engine_shale = {"sqlite", sh_open, sh_exec, sh_query, sh_errmsg, sh_close};
