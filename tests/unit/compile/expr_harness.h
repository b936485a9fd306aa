/*
 * expr_harness.h -- TEST SCAFFOLDING shared by test_expr*.c and
 * test_compile_core*.c: evaluate "SELECT <expr>" on Shale and on the
 * reference SQLite and compare the results (type and value, or the error
 * message).
 *
 * Shale side: the expression is compiled with compile_expr.c directly (a
 * Parse set up here, functions bound with func_find as name resolution
 * would, the program finished with the shape of compile.h invariant 4) and
 * run on a Vm without a database. This needs no FROM list, so it works
 * before the SELECT code generator does.
 *
 * Invariants:
 *  1. Every result is copied out (ExprRes owns its text); ExprRes needs no
 *     freeing beyond expr_res_clear.
 *  2. A compile error and a run-time error are both "errors": only the
 *     message is compared.
 */
#ifndef SHALE_TESTS_EXPR_HARNESS_H
#define SHALE_TESTS_EXPR_HARNESS_H

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/compile/compile.h"
#include "../../test.h"

typedef struct ExprRes {
  int err;  /* 1: error, msg set */
  int type; /* SHALE_* (same numbers as SQLITE_*) */
  int64_t i;
  double r;
  char *z; /* text/blob bytes (malloc'ed) */
  int n;
  char msg[300];
} ExprRes;

static inline void expr_res_clear(ExprRes *r) {
  free(r->z);
  memset(r, 0, sizeof *r);
}

static inline void expr_res_set(ExprRes *r, const ShValue *v) {
  r->type = v->type;
  if (v->type == SHALE_INTEGER) r->i = v->i;
  if (v->type == SHALE_FLOAT) r->r = v->r;
  if (v->type == SHALE_TEXT || v->type == SHALE_BLOB) {
    r->n = (int)v->n;
    r->z = malloc((size_t)v->n + 1);
    if (v->n) memcpy(r->z, v->z, v->n);
    r->z[v->n] = 0;
  }
}

/* Name resolution's share for these tests: bind functions, turn "x" into a
 * string (SQLite's fallback when no column matches), reject other names. */
typedef struct HarnessWalk {
  const FuncRegistry *funcs;
  char *err;
} HarnessWalk;

static int harness_expr_cb(SqlWalker *w, SqlExpr *e) {
  HarnessWalk *h = w->arg;
  if (h->err) return SQL_WALK_ABORT;
  if (e->op == SQL_E_FUNC) {
    int n = e->list ? e->list->n : 0;
    e->func = func_find(h->funcs, e->z, n);
    if (!e->func) {
      h->err = func_exists_name(h->funcs, e->z)
                   ? util_mprintf("wrong number of arguments to function %s()", e->z)
                   : util_mprintf("no such function: %s", e->z);
      return SQL_WALK_ABORT;
    }
  } else if (e->op == SQL_E_ID && (e->flags & SQL_EF_QUOTED)) {
    e->op = SQL_E_STRING;
  } else if (e->op == SQL_E_ID && util_stricmp(e->z, "true") && util_stricmp(e->z, "false")) {
    h->err = util_mprintf("no such column: %s", e->z);
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

/* Compile "SELECT expr" the way compile_sql would (minus FROM). On success
 * *prog is the program. Returns 0, or 1 with msg set. */
static inline int harness_compile(const FuncRegistry *funcs, const char *sql, VmProgram **prog,
                                  char *msg, int nmsg) {
  Parse p;
  CompileEnv env;
  memset(&p, 0, sizeof p);
  memset(&env, 0, sizeof env);
  env.funcs = funcs;
  env.max_vars = 32766;
  p.env = &env;
  p.sql = sql;
  util_arena_init(&p.arena, 0);
  SqlStmt *s = NULL;
  char *err = NULL;
  *prog = NULL;
  int rc = sql_parse(&p.arena, sql, -1, &s, NULL, &err);
  if (rc || !s || s->kind != SQL_STMT_SELECT || !s->u.select->cols) {
    snprintf(msg, (size_t)nmsg, "%s", err ? err : "parse failed");
    shale_free(err);
    util_arena_free(&p.arena);
    return 1;
  }
  SqlExprList *cols = s->u.select->cols;
  HarnessWalk hw = {funcs, NULL};
  SqlWalker w = {harness_expr_cb, NULL, &hw};
  for (int i = 0; i < cols->n; i++) sql_walk_expr(&w, cols->a[i].expr);
  if (hw.err) {
    snprintf(msg, (size_t)nmsg, "%s", hw.err);
    shale_free(hw.err);
    util_arena_free(&p.arena);
    return 1;
  }
  p.stmt = s;
  vm_builder_init(&p.b, sql);
  p.once_label = emit_label(&p);
  p.init_addr = emit(&p, OP_Init, 0, p.once_label, 0);
  int body = emit_addr(&p);
  int base = emit_regs(&p, cols->n);
  compile_expr_code_list(&p, cols, base);
  emit(&p, OP_ResultRow, base, cols->n, 0);
  emit(&p, OP_Halt, 0, 0, 0);
  emit_resolve(&p, p.once_label);
  for (int i = 0; i < p.nconst_ops; i++) {
    int a = emit(&p, OP_Noop, 0, 0, 0);
    if (a >= 0) p.b.prog->ops[a] = p.const_ops[i];
  }
  emit(&p, OP_Goto, 0, body, 0);
  if (p.rc) {
    snprintf(msg, (size_t)nmsg, "%s", p.errmsg ? p.errmsg : "out of memory");
    shale_free(p.errmsg);
    vm_builder_abort(&p.b);
    util_arena_free(&p.arena);
    return 1;
  }
  rc = vm_builder_finish(&p.b, prog);
  util_arena_free(&p.arena);
  if (rc) {
    snprintf(msg, (size_t)nmsg, "builder finish failed: %d", rc);
    return 1;
  }
  return 0;
}

/* Evaluate column 0 of "SELECT expr" on Shale. */
static inline void shale_eval(const FuncRegistry *funcs, const char *expr, ExprRes *out) {
  char sql[8192];
  memset(out, 0, sizeof *out);
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  VmProgram *prog = NULL;
  if (harness_compile(funcs, sql, &prog, out->msg, sizeof out->msg)) {
    out->err = 1;
    return;
  }
  Vm *vm = NULL;
  if (vm_new(prog, NULL, 0, &vm)) {
    out->err = 1;
    snprintf(out->msg, sizeof out->msg, "vm_new failed");
    vm_program_free(prog);
    return;
  }
  int rc = vm_step(vm);
  if (rc == SHALE_ROW) {
    expr_res_set(out, vm_column(vm, 0));
  } else {
    out->err = 1;
    snprintf(out->msg, sizeof out->msg, "%s", vm_errmsg(vm) ? vm_errmsg(vm) : "(no message)");
  }
  vm_free(vm);
  vm_program_free(prog);
}

static inline void sqlite_eval(sqlite3 *db, const char *expr, ExprRes *out) {
  char sql[8192];
  memset(out, 0, sizeof *out);
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    out->err = 1;
    snprintf(out->msg, sizeof out->msg, "%s", sqlite3_errmsg(db));
    return;
  }
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    ShValue v;
    switch (sqlite3_column_type(st, 0)) {
      case SQLITE_INTEGER:
        value_set_int(&v, sqlite3_column_int64(st, 0));
        break;
      case SQLITE_FLOAT:
        value_set_real(&v, sqlite3_column_double(st, 0));
        break;
      case SQLITE_TEXT:
        value_set_text(&v, (const char *)sqlite3_column_text(st, 0),
                       (uint32_t)sqlite3_column_bytes(st, 0));
        break;
      case SQLITE_BLOB:
        value_set_blob(&v, sqlite3_column_blob(st, 0), (uint32_t)sqlite3_column_bytes(st, 0));
        break;
      default:
        value_set_null(&v);
        break;
    }
    expr_res_set(out, &v);
  } else {
    out->err = 1;
    snprintf(out->msg, sizeof out->msg, "%s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
}

static inline int expr_res_equal(const ExprRes *a, const ExprRes *b) {
  if (a->err || b->err) return a->err == b->err && strcmp(a->msg, b->msg) == 0;
  if (a->type != b->type) return 0;
  switch (a->type) {
    case SHALE_INTEGER:
      return a->i == b->i;
    case SHALE_FLOAT:
      return a->r == b->r || (isnan(a->r) && isnan(b->r));
    case SHALE_TEXT:
    case SHALE_BLOB:
      return a->n == b->n && (a->n == 0 || memcmp(a->z, b->z, (size_t)a->n) == 0);
    default:
      return 1;
  }
}

static inline void expr_res_show(const ExprRes *r, char *buf, int n) {
  if (r->err) {
    snprintf(buf, (size_t)n, "error: %s", r->msg);
    return;
  }
  switch (r->type) {
    case SHALE_INTEGER:
      snprintf(buf, (size_t)n, "int %lld", (long long)r->i);
      break;
    case SHALE_FLOAT:
      snprintf(buf, (size_t)n, "real %.17g", r->r);
      break;
    case SHALE_TEXT:
      snprintf(buf, (size_t)n, "text '%.*s'", r->n > 200 ? 200 : r->n, r->z);
      break;
    case SHALE_BLOB: {
      int k = snprintf(buf, (size_t)n, "blob x'");
      for (int i = 0; i < r->n && k < n - 4; i++)
        k += snprintf(buf + k, (size_t)(n - k), "%02x", (unsigned char)r->z[i]);
      snprintf(buf + k, (size_t)(n - k), "'");
      break;
    }
    default:
      snprintf(buf, (size_t)n, "null");
      break;
  }
}

/* Compare one expression on both engines; 1 when they agree. Reports the
 * first few differences. */
static inline int expr_check(const FuncRegistry *funcs, sqlite3 *db, const char *expr,
                             int *nreported) {
  ExprRes a, b;
  shale_eval(funcs, expr, &a);
  sqlite_eval(db, expr, &b);
  int ok = expr_res_equal(&a, &b);
  if (!ok && (*nreported)++ < 25) {
    char sa[400], sb[400];
    expr_res_show(&a, sa, sizeof sa);
    expr_res_show(&b, sb, sizeof sb);
    test_fail(__FILE__, __LINE__, "SELECT %s\n   shale:  %s\n   sqlite: %s", expr, sa, sb);
  }
  expr_res_clear(&a);
  expr_res_clear(&b);
  return ok;
}

#endif /* SHALE_TESTS_EXPR_HARNESS_H */
