/*
 * func_test.h -- shared helpers for the function-library tests: a corpus of
 * interesting values, calling a Shale function, calling the same function in
 * the reference SQLite with the values bound, and comparing the two results
 * (type, value, error code and message).
 *
 * Header-only (static functions) so each test binary stays self-contained.
 *
 * Invariants:
 *  1. Every ShValue a helper returns is owned (value_clear frees it).
 *  2. The reference runs "SELECT f(?1, ..., ?n)" on an in-memory database
 *     with sqlite3_bind_* of exactly the values Shale received.
 */
#ifndef SHALE_FUNC_TEST_H
#define SHALE_FUNC_TEST_H

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/func/func.h"
#include "../../test.h"

/* ---- the value corpus ---- */

static const char *const corpus_texts[] = {
    "",
    "abc",
    "ABC",
    "h\xc3\xa9llo",
    "12",
    " 12 ",
    "12abc",
    "1e3",
    "-0",
    "0x10",
    "a%b_c",
    "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97",
    "it's",
    "   ",
    "xyz  ",
    "NULL",
    "3.5",
    "-7",
    "9223372036854775807",
    "9223372036854775808",
    " -12.5e-1x",
    "Robert",
    "\xf0\x9f\x98\x80z",
    "a\\b",
    "_",
    "%",
    "[a-c]*",
    "x\"y",
    "1.0",
    "  A b  ",
    "\xc3",
    "\x80x",
};
static const int64_t corpus_ints[] = {
    0,   1,       -1,  42,           INT64_MIN, INT64_MAX, 2147483648LL, -2147483649LL,
    255, 1000000, -65, 4294967297LL, 3};
static const double corpus_reals[] = {0.0,
                                      -0.0,
                                      1.5,
                                      -2.5,
                                      2.5,
                                      0.1,
                                      1e308,
                                      -1e308,
                                      4.9e-324,
                                      1e-300,
                                      3.141592653589793,
                                      1e15,
                                      123456789.123,
                                      9.223372036854775807e18,
                                      0.5,
                                      -0.4,
                                      1e100,
                                      100.0,
                                      -7.75,
                                      0.05,
                                      1.005,
                                      2e-7};
static const struct {
  const char *z;
  int n;
} corpus_blobs[] = {{"", 0}, {"\0", 1}, {"abc", 3}, {"\xff\x80\xc3", 3}, {"12", 2}, {"a\0b", 3}};

#define NTEXT ((int)(sizeof(corpus_texts) / sizeof(corpus_texts[0])))
#define NINT ((int)(sizeof(corpus_ints) / sizeof(corpus_ints[0])))
#define NREAL ((int)(sizeof(corpus_reals) / sizeof(corpus_reals[0])))
#define NBLOB ((int)(sizeof(corpus_blobs) / sizeof(corpus_blobs[0])))
#define NCORPUS (1 + NINT + NREAL + NTEXT + NBLOB)

/* Value k of the corpus (borrowed; static storage). */
static inline void corpus_value(int k, ShValue *v) {
  if (k == 0) {
    value_set_null(v);
    return;
  }
  k--;
  if (k < NINT) {
    value_set_int(v, corpus_ints[k]);
    return;
  }
  k -= NINT;
  if (k < NREAL) {
    value_set_real(v, corpus_reals[k]);
    return;
  }
  k -= NREAL;
  if (k < NTEXT) {
    value_set_text(v, corpus_texts[k], (uint32_t)strlen(corpus_texts[k]));
    return;
  }
  k -= NTEXT;
  value_set_blob(v, corpus_blobs[k].z, (uint32_t)corpus_blobs[k].n);
}

/* ---- describing values ---- */

static inline void value_describe(const ShValue *v, char *out, size_t cap) {
  switch (v->type) {
    case SHALE_NULL:
      snprintf(out, cap, "NULL");
      break;
    case SHALE_INTEGER:
      snprintf(out, cap, "%lld", (long long)v->i);
      break;
    case SHALE_FLOAT:
      snprintf(out, cap, "%.17g(real)", v->r);
      break;
    default: {
      size_t k = 0;
      k += (size_t)snprintf(out, cap, v->type == SHALE_TEXT ? "'" : "x'");
      for (uint32_t i = 0; i < v->n && k + 8 < cap; i++) {
        unsigned char c = (unsigned char)v->z[i];
        if (v->type == SHALE_TEXT && c >= 0x20 && c < 0x7f)
          out[k++] = (char)c;
        else
          k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
      }
      snprintf(out + k, cap - k, "'");
    }
  }
}

/* ---- results ---- */

typedef struct CallResult {
  ShValue v; /* owned */
  int rc;
  char msg[200];
} CallResult;

static inline void result_clear(CallResult *r) { value_clear(&r->v); }

static inline void copy_owned(const ShValue *in, ShValue *out) {
  *out = *in;
  out->flags = 0;
  if (record_value_make_owned(out)) value_set_null(out);
}

/* Two results are the same: same rc; on success same type and value (reals
 * bit for bit, except that any NaN equals NaN); on error the same message. */
static inline int result_same(const CallResult *a, const CallResult *b) {
  if (a->rc != b->rc) return 0;
  if (a->rc) return strcmp(a->msg, b->msg) == 0;
  if (a->v.type != b->v.type) return 0;
  switch (a->v.type) {
    case SHALE_NULL:
      return 1;
    case SHALE_INTEGER:
      return a->v.i == b->v.i;
    case SHALE_FLOAT:
      return memcmp(&a->v.r, &b->v.r, sizeof(double)) == 0;
    default:
      return a->v.n == b->v.n && (a->v.n == 0 || memcmp(a->v.z, b->v.z, a->v.n) == 0);
  }
}

/* ---- Shale side ---- */

/* SQLITE_LIMIT_LENGTH for shale_call (0 = default); tests that set it set
 * the same limit on the reference connection. */
static int64_t shale_call_max_length;

/* Run a scalar function through the registry as the VM will. */
static inline void shale_call(const FuncRegistry *reg, const char *name, int argc, ShValue *argv,
                              CallResult *out) {
  memset(out, 0, sizeof(*out));
  value_set_null(&out->v);
  const FuncDef *d = func_find(reg, name, argc);
  if (!d) {
    out->rc = SHALE_ERROR;
    /* The resolver's wording (sqlite3's prepare errors). */
    if (func_exists_name(reg, name)) {
      snprintf(out->msg, sizeof(out->msg), "wrong number of arguments to function %s()", name);
    } else {
      snprintf(out->msg, sizeof(out->msg), "no such function: %s", name);
    }
    return;
  }
  FuncCtx ctx;
  func_ctx_init(&ctx, d);
  ctx.max_length = shale_call_max_length;
  if (d->scalar) {
    d->scalar(&ctx, argc, argv);
  } else { /* an aggregate over one row, as "SELECT agg(?1)" */
    d->step(&ctx, argc, argv);
    if (ctx.rc == 0)
      func_agg_finish(&ctx);
    else {
      int rc = ctx.rc;
      char *m = ctx.errmsg;
      ctx.errmsg = NULL;
      func_agg_finish(&ctx);
      func_ctx_reset(&ctx);
      ctx.rc = rc;
      ctx.errmsg = m;
    }
  }
  out->rc = ctx.rc;
  if (ctx.rc) {
    const char *m = ctx.errmsg ? ctx.errmsg : "";
    if (ctx.rc == SHALE_NOMEM && !ctx.errmsg) m = "out of memory";
    snprintf(out->msg, sizeof(out->msg), "%s", m);
  } else {
    func_ctx_take_result(&ctx, &out->v);
    if (out->v.type == SHALE_TEXT || out->v.type == SHALE_BLOB) {
      ShValue t;
      copy_owned(&out->v, &t);
      value_clear(&out->v);
      out->v = t;
    }
  }
  func_ctx_reset(&ctx);
}

/* ---- reference side ---- */

static inline sqlite3 *ref_open(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
  return db;
}

static inline int ref_bind(sqlite3_stmt *st, int i, const ShValue *v) {
  switch (v->type) {
    case SHALE_INTEGER:
      return sqlite3_bind_int64(st, i, v->i);
    case SHALE_FLOAT:
      return sqlite3_bind_double(st, i, v->r);
    case SHALE_TEXT:
      return sqlite3_bind_text(st, i, v->n ? v->z : "", (int)v->n, SQLITE_TRANSIENT);
    case SHALE_BLOB:
      return sqlite3_bind_blob(st, i, v->n ? v->z : "", (int)v->n, SQLITE_TRANSIENT);
    default:
      return sqlite3_bind_null(st, i);
  }
}

/* Column i of the current row as an owned ShValue. */
static inline void ref_column(sqlite3_stmt *st, int i, ShValue *out) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
      value_set_int(out, sqlite3_column_int64(st, i));
      break;
    case SQLITE_FLOAT:
      value_set_real(out, sqlite3_column_double(st, i));
      break;
    case SQLITE_TEXT: {
      const char *z = (const char *)sqlite3_column_text(st, i);
      ShValue t;
      value_set_text(&t, z, (uint32_t)sqlite3_column_bytes(st, i));
      copy_owned(&t, out);
      break;
    }
    case SQLITE_BLOB: {
      const void *z = sqlite3_column_blob(st, i);
      ShValue t;
      value_set_blob(&t, z, (uint32_t)sqlite3_column_bytes(st, i));
      copy_owned(&t, out);
      break;
    }
    default:
      value_set_null(out);
  }
}

/* Step a prepared, bound one-row statement and collect its result. */
static inline void ref_run(sqlite3 *db, sqlite3_stmt *st, CallResult *out) {
  memset(out, 0, sizeof(*out));
  value_set_null(&out->v);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    ref_column(st, 0, &out->v);
    out->rc = 0;
  } else {
    out->rc = sqlite3_extended_errcode(db) & 0xff;
    if (out->rc == SQLITE_DONE) out->rc = 0;
    snprintf(out->msg, sizeof(out->msg), "%s", sqlite3_errmsg(db));
  }
  sqlite3_reset(st);
}

/* SELECT name(?1..?argc) prepared once per arity. */
static inline sqlite3_stmt *ref_prepare_call(sqlite3 *db, const char *name, int argc) {
  char sql[512];
  int k = snprintf(sql, sizeof(sql), "SELECT %s(", name);
  for (int i = 0; i < argc; i++)
    k += snprintf(sql + k, sizeof(sql) - (size_t)k, "%s?%d", i ? "," : "", i + 1);
  snprintf(sql + k, sizeof(sql) - (size_t)k, ")");
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
  return st;
}

static inline void ref_call(sqlite3 *db, sqlite3_stmt *st, int argc, const ShValue *argv,
                            CallResult *out) {
  sqlite3_clear_bindings(st);
  for (int i = 0; i < argc; i++) ref_bind(st, i + 1, &argv[i]);
  ref_run(db, st, out);
}

/* Report a mismatch with the arguments; returns 1 if they differ. */
static inline int report_diff(const char *what, int argc, const ShValue *argv,
                              const CallResult *mine, const CallResult *ref) {
  if (result_same(mine, ref)) return 0;
  char args[600] = "", d1[300], d2[300], one[200];
  for (int i = 0; i < argc; i++) {
    value_describe(&argv[i], one, sizeof(one));
    strncat(args, i ? ", " : "", sizeof(args) - strlen(args) - 1);
    strncat(args, one, sizeof(args) - strlen(args) - 1);
  }
  value_describe(&mine->v, d1, sizeof(d1));
  value_describe(&ref->v, d2, sizeof(d2));
  fprintf(stderr, "  %s(%s): shale rc=%d %s [%s]  sqlite rc=%d %s [%s]\n", what, args, mine->rc, d1,
          mine->msg, ref->rc, d2, ref->msg);
  return 1;
}

#endif /* SHALE_FUNC_TEST_H */
