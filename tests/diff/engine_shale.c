/*
 * engine_shale.c -- the differential tester's backend on Shale's native API
 * (shale_*, include/shale.h): the engine under test.
 *
 * Owns: diff_engine_shale.
 * Invariants:
 *  1. Every handle is a private ":memory:" database.
 *  2. Values are fetched in their own storage class (column_type first),
 *     exactly like the SQLite backend, so both sides are read alike.
 *  3. query prepares only the first statement of its text and always
 *     finalizes it; changes() is recorded only for a successful write.
 *  4. Every handle has the tests' table-valued function tseries (series_vt.h).
 */
#include "diff.h"
#include "shale.h"

#define SV(x) shale_##x
#define SVC(x) SHALE_##x
#define SV_DB shale
#include "series_vt.h"

static void *sh_open(void) {
  shale *db = NULL;
  if (shale_open_v2(":memory:", &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL) != SHALE_OK) {
    shale_close(db);
    return NULL;
  }
  shale_extended_result_codes(db, 1);
  if (series_vt_register(db) != SHALE_OK) {
    shale_close(db);
    return NULL;
  }
  return db;
}

static int sh_exec(void *h, const char *sql) { return shale_exec(h, sql, NULL, NULL, NULL); }

static void sh_query(void *h, const char *sql, DiffResult *out) {
  shale *db = h;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SHALE_OK || !st) {
    if (rc != SHALE_OK)
      diff_result_set_error(out, rc & 0xff, shale_extended_errcode(db), shale_errmsg(db));
    shale_finalize(st);
    return;
  }
  int n = shale_column_count(st);
  out->ncol = n;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    DiffValue *v = diff_result_add_row(out);
    if (!v) {
      rc = SHALE_NOMEM;
      break;
    }
    for (int i = 0; i < n; i++) {
      switch (shale_column_type(st, i)) {
        case SHALE_INTEGER:
          v[i].type = DIFF_INTEGER;
          v[i].i = shale_column_int64(st, i);
          break;
        case SHALE_FLOAT:
          v[i].type = DIFF_FLOAT;
          v[i].r = shale_column_double(st, i);
          break;
        case SHALE_TEXT: {
          const unsigned char *z = shale_column_text(st, i);
          diff_value_set_bytes(&v[i], DIFF_TEXT, z, (size_t)shale_column_bytes(st, i));
          break;
        }
        case SHALE_BLOB: {
          const void *z = shale_column_blob(st, i);
          diff_value_set_bytes(&v[i], DIFF_BLOB, z, (size_t)shale_column_bytes(st, i));
          break;
        }
        default:
          v[i].type = DIFF_NULL;
          break;
      }
    }
  }
  if (rc != SHALE_DONE) {
    int frc = shale_finalize(st);
    if (frc == SHALE_OK) frc = rc;
    diff_result_set_error(out, frc & 0xff, shale_extended_errcode(db), shale_errmsg(db));
    return;
  }
  if (!shale_stmt_readonly(st)) out->changes = shale_changes64(db);
  shale_finalize(st);
}

static const char *sh_errmsg(void *h) { return shale_errmsg(h); }

static void sh_close(void *h) { shale_close(h); }

static const DiffEngine engine = {"shale", sh_open, sh_exec, sh_query, sh_errmsg, sh_close};
const DiffEngine *const diff_engine_shale = &engine;
