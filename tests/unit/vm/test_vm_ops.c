/*
 * test_vm_ops.c -- register-only programs: arithmetic, bit, text, logic and
 * comparison ops against the reference SQLite (same type and same value for
 * a matrix of value pairs), control flow, the builder and EXPLAIN, and a
 * reset-and-rerun that must allocate nothing.
 *
 * Invariants:
 *  1. Every program is hand-assembled with vm_builder_*; SQLite evaluates
 *     the same expression with the values bound as parameters (no affinity).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/func/func.h"
#include "../../../src/vm/vm.h"
#include "../../test.h"

/* ---- the value matrix ---- */

typedef struct TV {
  int type; /* SHALE_* */
  int64_t i;
  double r;
  const char *z;
  int n;
} TV;

static const TV tvals[] = {
    {SHALE_NULL, 0, 0, 0, 0},
    {SHALE_INTEGER, 0, 0, 0, 0},
    {SHALE_INTEGER, 1, 0, 0, 0},
    {SHALE_INTEGER, -1, 0, 0, 0},
    {SHALE_INTEGER, 7, 0, 0, 0},
    {SHALE_INTEGER, -3, 0, 0, 0},
    {SHALE_INTEGER, INT64_MAX, 0, 0, 0},
    {SHALE_INTEGER, INT64_MIN, 0, 0, 0},
    {SHALE_INTEGER, INT64_MAX - 1, 0, 0, 0},
    {SHALE_INTEGER, 4294967296LL, 0, 0, 0},
    {SHALE_INTEGER, 65, 0, 0, 0},
    {SHALE_FLOAT, 0, 3.5, 0, 0},
    {SHALE_FLOAT, 0, -2.5, 0, 0},
    {SHALE_FLOAT, 0, 0.0, 0, 0},
    {SHALE_FLOAT, 0, 2.0, 0, 0},
    {SHALE_FLOAT, 0, 1e308, 0, 0},
    {SHALE_FLOAT, 0, 9223372036854775808.0, 0, 0},
    {SHALE_TEXT, 0, 0, "12", 2},
    {SHALE_TEXT, 0, 0, "12.5", 4},
    {SHALE_TEXT, 0, 0, "abc", 3},
    {SHALE_TEXT, 0, 0, " 7 ", 3},
    {SHALE_TEXT, 0, 0, "1e3", 3},
    {SHALE_TEXT, 0, 0, "9223372036854775808", 19},
    {SHALE_TEXT, 0, 0, "12abc", 5},
    {SHALE_TEXT, 0, 0, "", 0},
    {SHALE_TEXT, 0, 0, "-0", 2},
    {SHALE_TEXT, 0, 0, "0x10", 4},
    {SHALE_BLOB, 0, 0, "12", 2},
    {SHALE_BLOB, 0, 0, "\0a", 2},
};
#define NTV ((int)(sizeof tvals / sizeof tvals[0]))

static void bind_both(Vm *vm, sqlite3_stmt *st, int idx, const TV *t) {
  switch (t->type) {
    case SHALE_NULL:
      vm_bind_null(vm, idx);
      sqlite3_bind_null(st, idx);
      break;
    case SHALE_INTEGER:
      vm_bind_int(vm, idx, t->i);
      sqlite3_bind_int64(st, idx, t->i);
      break;
    case SHALE_FLOAT:
      vm_bind_real(vm, idx, t->r);
      sqlite3_bind_double(st, idx, t->r);
      break;
    case SHALE_TEXT:
      vm_bind_text(vm, idx, t->z, t->n);
      sqlite3_bind_text(st, idx, t->z, t->n, SQLITE_STATIC);
      break;
    default:
      vm_bind_blob(vm, idx, t->z, t->n);
      sqlite3_bind_blob(st, idx, t->z, t->n, SQLITE_STATIC);
      break;
  }
}

/* 1 if v equals column 0 of st (type and value). */
static int same_value(const ShValue *v, sqlite3_stmt *st, char *why, size_t nwhy) {
  int t = sqlite3_column_type(st, 0);
  if (t != v->type) {
    snprintf(why, nwhy, "type %d, sqlite %d (%s)", v->type, t,
             t == SQLITE_NULL ? "NULL" : (const char *)sqlite3_column_text(st, 0));
    return 0;
  }
  switch (t) {
    case SQLITE_INTEGER:
      if (sqlite3_column_int64(st, 0) != v->i) {
        snprintf(why, nwhy, "%lld vs sqlite %lld", (long long)v->i,
                 (long long)sqlite3_column_int64(st, 0));
        return 0;
      }
      return 1;
    case SQLITE_FLOAT: {
      double r = sqlite3_column_double(st, 0);
      if (memcmp(&r, &v->r, sizeof r) != 0) {
        snprintf(why, nwhy, "%.17g vs sqlite %.17g", v->r, r);
        return 0;
      }
      return 1;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const void *z =
          t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, 0) : sqlite3_column_blob(st, 0);
      int n = sqlite3_column_bytes(st, 0);
      if ((uint32_t)n != v->n || (n && memcmp(z, v->z, (size_t)n))) {
        snprintf(why, nwhy, "'%.*s' vs sqlite '%.*s'", (int)v->n, v->z ? v->z : "", n,
                 (const char *)z);
        return 0;
      }
      return 1;
    }
    default:
      return 1;
  }
}

/* One binary/unary operator: how to assemble it and the SQL for SQLite.
 * form: 0 = op(p1=?2, p2=?1, p3=out) [b OP a], 1 = op(p1=?1, p2=?2, p3=out),
 * 2 = comparison STOREP2 (p3=?1, p1=?2, p2=out), 3 = unary (p1=?1, p2=out),
 * 4 = Cast (p1=?1 in place, p2=affinity). */
typedef struct OpCase {
  const char *sql;
  int op;
  int form;
  int arg; /* p5 for comparisons / affinity for Cast */
} OpCase;

static const OpCase ops[] = {
    {"SELECT ?1 + ?2", OP_Add, 0, 0},
    {"SELECT ?1 - ?2", OP_Subtract, 0, 0},
    {"SELECT ?1 * ?2", OP_Multiply, 0, 0},
    {"SELECT ?1 / ?2", OP_Divide, 0, 0},
    {"SELECT ?1 % ?2", OP_Remainder, 0, 0},
    {"SELECT ?1 || ?2", OP_Concat, 0, 0},
    {"SELECT ?1 & ?2", OP_BitAnd, 1, 0},
    {"SELECT ?1 | ?2", OP_BitOr, 1, 0},
    {"SELECT ?1 << ?2", OP_ShiftLeft, 0, 0},
    {"SELECT ?1 >> ?2", OP_ShiftRight, 0, 0},
    {"SELECT ?1 AND ?2", OP_And, 1, 0},
    {"SELECT ?1 OR ?2", OP_Or, 1, 0},
    {"SELECT ?1 = ?2", OP_Eq, 2, VM_STOREP2},
    {"SELECT ?1 <> ?2", OP_Ne, 2, VM_STOREP2},
    {"SELECT ?1 < ?2", OP_Lt, 2, VM_STOREP2},
    {"SELECT ?1 <= ?2", OP_Le, 2, VM_STOREP2},
    {"SELECT ?1 > ?2", OP_Gt, 2, VM_STOREP2},
    {"SELECT ?1 >= ?2", OP_Ge, 2, VM_STOREP2},
    {"SELECT ?1 IS ?2", OP_Eq, 2, VM_STOREP2 | VM_NULLEQ},
    {"SELECT ?1 IS NOT ?2", OP_Ne, 2, VM_STOREP2 | VM_NULLEQ},
    {"SELECT -?1", OP_Negative, 3, 0},
    {"SELECT ~?1", OP_BitNot, 3, 0},
    {"SELECT NOT ?1", OP_Not, 3, 0},
    {"SELECT CAST(?1 AS INTEGER)", OP_Cast, 4, AFF_INTEGER},
    {"SELECT CAST(?1 AS REAL)", OP_Cast, 4, AFF_REAL},
    {"SELECT CAST(?1 AS NUMERIC)", OP_Cast, 4, AFF_NUMERIC},
    {"SELECT CAST(?1 AS TEXT)", OP_Cast, 4, AFF_TEXT},
};

static VmProgram *build_case(const OpCase *c) {
  VmBuilder b;
  VmProgram *p = NULL;
  CHECK_OK(vm_builder_init(&b, c->sql));
  int r1 = vm_builder_regs(&b, 1), r2 = vm_builder_regs(&b, 1), out = vm_builder_regs(&b, 1);
  vm_builder_add(&b, OP_Init, 0, 1, 0);
  vm_builder_add(&b, OP_Variable, 1, r1, 0);
  vm_builder_add(&b, OP_Variable, 2, r2, 0);
  int a;
  switch (c->form) {
    case 0:
      vm_builder_add(&b, c->op, r2, r1, out);
      break;
    case 1:
      vm_builder_add(&b, c->op, r1, r2, out);
      break;
    case 2:
      a = vm_builder_add(&b, c->op, r2, out, r1);
      vm_builder_set_p5(&b, a, c->arg);
      break;
    case 3:
      vm_builder_add(&b, c->op, r1, out, 0);
      break;
    default:
      vm_builder_add(&b, c->op, r1, c->arg, 0);
      vm_builder_add(&b, OP_SCopy, r1, out, 0);
      break;
  }
  vm_builder_add(&b, OP_ResultRow, out, 1, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  return p;
}

TEST(vm_ops_match_sqlite) {
  sqlite3 *db;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  int nfail = 0, ncheck = 0;
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    const OpCase *c = &ops[k];
    VmProgram *p = build_case(c);
    Vm *vm;
    sqlite3_stmt *st;
    CHECK_OK(vm_new(p, NULL, 0, &vm));
    CHECK(sqlite3_prepare_v2(db, c->sql, -1, &st, NULL) == SQLITE_OK);
    int unary = c->form >= 3;
    for (int i = 0; i < NTV; i++) {
      for (int j = 0; j < (unary ? 1 : NTV); j++) {
        vm_reset(vm);
        sqlite3_reset(st);
        bind_both(vm, st, 1, &tvals[i]);
        if (!unary) bind_both(vm, st, 2, &tvals[j]);
        int rc = vm_step(vm);
        CHECK_RC(rc, SHALE_ROW);
        CHECK(sqlite3_step(st) == SQLITE_ROW);
        char why[200];
        ncheck++;
        if (rc == SHALE_ROW && !same_value(vm_column(vm, 0), st, why, sizeof why)) {
          if (nfail++ < 20)
            test_fail(__FILE__, __LINE__, "%s with ?1=#%d ?2=#%d: %s", c->sql, i, j, why);
        }
        CHECK_RC(vm_step(vm), SHALE_DONE);
      }
    }
    sqlite3_finalize(st);
    vm_free(vm);
    vm_program_free(p);
  }
  CHECK(ncheck > 10000);
  sqlite3_close(db);
}

/* Comparison affinities and collations, checked by hand. */
static int cmp_result(int op, int p5, const Collation *coll, const ShValue *a, const ShValue *b) {
  VmBuilder bl;
  VmProgram *p = NULL;
  vm_builder_init(&bl, NULL);
  int r1 = vm_builder_regs(&bl, 1), r2 = vm_builder_regs(&bl, 1), out = vm_builder_regs(&bl, 1);
  vm_builder_add(&bl, OP_Variable, 1, r1, 0);
  vm_builder_add(&bl, OP_Variable, 2, r2, 0);
  int x = coll ? vm_builder_add_p4(&bl, op, r2, out, r1, P4_COLL, coll)
               : vm_builder_add(&bl, op, r2, out, r1);
  vm_builder_set_p5(&bl, x, p5 | VM_STOREP2);
  vm_builder_add(&bl, OP_ResultRow, out, 1, 0);
  CHECK_OK(vm_builder_finish(&bl, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  vm_bind_value(vm, 1, a);
  vm_bind_value(vm, 2, b);
  int res = -1;
  if (vm_step(vm) == SHALE_ROW) {
    const ShValue *v = vm_column(vm, 0);
    res = v->type == SHALE_NULL ? 2 : (int)v->i;
  }
  vm_free(vm);
  vm_program_free(p);
  return res;
}

TEST(vm_compare_affinity_collation) {
  ShValue t10, i10, tA, ta, n;
  value_set_text(&t10, "10", 2);
  value_set_int(&i10, 10);
  value_set_text(&tA, "ABC", 3);
  value_set_text(&ta, "abc", 3);
  value_set_null(&n);
  CHECK_EQ(cmp_result(OP_Eq, 0, NULL, &t10, &i10), 0); /* no affinity: text > int */
  CHECK_EQ(cmp_result(OP_Gt, 0, NULL, &t10, &i10), 1);
  CHECK_EQ(cmp_result(OP_Eq, VM_CMP_AFF(AFF_NUMERIC), NULL, &t10, &i10), 1);
  CHECK_EQ(cmp_result(OP_Eq, AFF_INTEGER, NULL, &t10, &i10), 1); /* letter form */
  CHECK_EQ(cmp_result(OP_Eq, VM_CMP_AFF(AFF_TEXT), NULL, &t10, &i10), 1);
  CHECK_EQ(cmp_result(OP_Eq, VM_CMP_AFF(AFF_BLOB), NULL, &t10, &i10), 0);
  CHECK_EQ(cmp_result(OP_Eq, 0, NULL, &tA, &ta), 0);
  CHECK_EQ(cmp_result(OP_Eq, 0, &record_coll_nocase, &tA, &ta), 1);
  CHECK_EQ(cmp_result(OP_Lt, 0, NULL, &tA, &ta), 1);
  CHECK_EQ(cmp_result(OP_Lt, 0, NULL, &n, &ta), 2);
  CHECK_EQ(cmp_result(OP_Eq, VM_NULLEQ, NULL, &n, &n), 1);
  CHECK_EQ(cmp_result(OP_Ne, VM_NULLEQ, NULL, &n, &ta), 1);
}

/* Jumps: Eq with JUMPIFNULL, If/IfNot with NULL, Gosub/Return, a
 * coroutine, Once, IfPos, DecrJumpZero, MustBeInt, Compare+Jump. */
TEST(vm_control_flow) {
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, "flow"));
  int r = vm_builder_regs(&b, 10);
  int l_start = vm_builder_label(&b), l_sub = vm_builder_label(&b), l_after = vm_builder_label(&b);
  int l_co = vm_builder_label(&b), l_coend = vm_builder_label(&b), l_loop = vm_builder_label(&b);
  int l_done = vm_builder_label(&b), l_skip = vm_builder_label(&b), l_bad = vm_builder_label(&b);
  vm_builder_add(&b, OP_Init, 0, l_start, 0);
  /* subroutine: r+1 += 100 */
  vm_builder_resolve(&b, l_sub);
  vm_builder_add(&b, OP_AddImm, r + 1, 100, 0);
  vm_builder_add(&b, OP_Return, r, 0, 0);
  /* coroutine yielding 1, 2, 3 in r+3 */
  vm_builder_resolve(&b, l_co);
  vm_builder_add(&b, OP_Integer, 1, r + 3, 0);
  vm_builder_add(&b, OP_Yield, r + 2, 0, 0);
  vm_builder_add(&b, OP_Integer, 2, r + 3, 0);
  vm_builder_add(&b, OP_Yield, r + 2, 0, 0);
  vm_builder_add(&b, OP_Integer, 3, r + 3, 0);
  vm_builder_add(&b, OP_Yield, r + 2, 0, 0);
  vm_builder_add(&b, OP_EndCoroutine, r + 2, 0, 0);
  vm_builder_resolve(&b, l_start);
  vm_builder_add(&b, OP_Integer, 5, r + 1, 0);
  vm_builder_add(&b, OP_Gosub, r, l_sub, 0);
  vm_builder_add(&b, OP_ResultRow, r + 1, 1, 0); /* 105 */
  vm_builder_add(&b, OP_InitCoroutine, r + 2, l_after, l_co);
  vm_builder_resolve(&b, l_after);
  vm_builder_resolve(&b, l_loop);
  vm_builder_add(&b, OP_Yield, r + 2, l_coend, 0);
  vm_builder_add(&b, OP_ResultRow, r + 3, 1, 0); /* 1, 2, 3 */
  vm_builder_add(&b, OP_Goto, 0, l_loop, 0);
  vm_builder_resolve(&b, l_coend);
  /* Once: the body runs once across two passes */
  vm_builder_add(&b, OP_Integer, 2, r + 4, 0);
  int top = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Once, 0, l_skip, 0);
  vm_builder_add(&b, OP_Integer, 42, r + 5, 0);
  vm_builder_add(&b, OP_ResultRow, r + 5, 1, 0); /* 42 once */
  vm_builder_resolve(&b, l_skip);
  vm_builder_add(&b, OP_DecrJumpZero, r + 4, l_done, 0);
  vm_builder_add(&b, OP_Goto, 0, top, 0);
  vm_builder_resolve(&b, l_done);
  /* IfPos: r+6 = 3, jumps while positive, decrementing by 1 */
  vm_builder_add(&b, OP_Integer, 3, r + 6, 0);
  int ip = vm_builder_addr(&b);
  vm_builder_add(&b, OP_IfPos, r + 6, ip + 2, 1);
  vm_builder_add(&b, OP_Goto, 0, ip + 4, 0);
  vm_builder_add(&b, OP_ResultRow, r + 6, 1, 0); /* 2, 1, 0 */
  vm_builder_add(&b, OP_Goto, 0, ip, 0);
  /* MustBeInt on '12' passes, on 'x' jumps to l_bad */
  vm_builder_add_text(&b, OP_String, 0, r + 7, 0, "12", 2);
  vm_builder_add(&b, OP_MustBeInt, r + 7, l_bad, 0);
  vm_builder_add(&b, OP_ResultRow, r + 7, 1, 0); /* 12 integer */
  vm_builder_add(&b, OP_Null, 0, r + 8, 0);
  vm_builder_add(&b, OP_If, r + 8, l_bad, 0);
  vm_builder_add(&b, OP_IfNot, r + 8, l_bad, 0);
  int jn = vm_builder_add(&b, OP_Eq, r + 8, l_bad, r + 7);
  vm_builder_add(&b, OP_Ne, r + 8, l_bad, r + 7); /* NULL: no jump */
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_resolve(&b, l_bad);
  vm_builder_add(&b, OP_Integer, -1, r + 9, 0);
  vm_builder_add(&b, OP_ResultRow, r + 9, 1, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  (void)jn;
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  static const int64_t want[] = {105, 1, 2, 3, 42, 2, 1, 0, 12};
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
      CHECK_RC(vm_step(vm), SHALE_ROW);
      CHECK_EQ(vm_column(vm, 0)->type, SHALE_INTEGER);
      CHECK_EQ(vm_column(vm, 0)->i, want[i]);
    }
    CHECK_RC(vm_step(vm), SHALE_DONE);
  }
  char *ex = vm_explain(p);
  CHECK(ex != NULL);
  CHECK(ex && strstr(ex, "0\tInit\t0\t") == ex);
  CHECK(ex && strstr(ex, "\tString\t2\t") != NULL);
  CHECK(ex && strstr(ex, "\t12\t0\n") != NULL);
  shale_free(ex);
  vm_free(vm);
  vm_program_free(p);
}

TEST(vm_builder_unresolved_label_fails) {
  VmBuilder b;
  VmProgram *p = (VmProgram *)1;
  CHECK_OK(vm_builder_init(&b, NULL));
  int l = vm_builder_label(&b);
  vm_builder_add(&b, OP_Goto, 0, l, 0);
  CHECK_RC(vm_builder_finish(&b, &p), SHALE_INTERNAL);
  CHECK(p == NULL);
}

TEST(vm_halt_error_and_mustbeint_mismatch) {
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 1);
  vm_builder_add_text(&b, OP_String, 0, r, 0, "x", 1);
  vm_builder_add(&b, OP_MustBeInt, r, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_MISMATCH);
  CHECK_STR(vm_errmsg(vm), "datatype mismatch");
  vm_free(vm);
  vm_program_free(p);

  CHECK_OK(vm_builder_init(&b, NULL));
  vm_builder_add_text(&b, OP_Halt, SHALE_CONSTRAINT, 2, 0, "UNIQUE constraint failed: t.a", -1);
  CHECK_OK(vm_builder_finish(&b, &p));
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_CONSTRAINT);
  CHECK_STR(vm_errmsg(vm), "UNIQUE constraint failed: t.a");
  vm_free(vm);
  vm_program_free(p);
}

/* Functions and aggregates through func.h. */
TEST(vm_function_and_aggregate) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  const FuncDef *upper = func_find(&reg, "upper", 1), *sum = func_find(&reg, "sum", 1);
  const FuncDef *gc = func_find(&reg, "group_concat", 1);
  CHECK(upper && sum && gc);
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 6);
  vm_builder_add_text(&b, OP_String, 0, r, 0, "abc", 3);
  int a = vm_builder_add_p4(&b, OP_Function, 0, r, r + 1, P4_FUNC, upper);
  vm_builder_set_p5(&b, a, 1);
  vm_builder_add(&b, OP_ResultRow, r + 1, 1, 0);
  vm_builder_add(&b, OP_Integer, 4, r + 2, 0);
  int loop = vm_builder_addr(&b);
  a = vm_builder_add_p4(&b, OP_AggStep, -1, r + 2, r + 3, P4_FUNC, sum);
  vm_builder_set_p5(&b, a, 1);
  a = vm_builder_add_p4(&b, OP_AggStep, -1, r + 2, r + 4, P4_FUNC, gc);
  vm_builder_set_p5(&b, a, 1);
  vm_builder_add(&b, OP_IfPos, r + 2, loop, 1);
  vm_builder_add_p4(&b, OP_AggFinal, r + 3, 1, 0, P4_FUNC, sum);
  vm_builder_add_p4(&b, OP_AggFinal, r + 4, 1, 0, P4_FUNC, gc);
  vm_builder_add(&b, OP_ResultRow, r + 3, 2, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->type, SHALE_TEXT);
  CHECK(vm_column(vm, 0)->n == 3 && memcmp(vm_column(vm, 0)->z, "ABC", 3) == 0);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 4 + 3 + 2 + 1 + 0);
  CHECK(vm_column(vm, 1)->n == 9 && memcmp(vm_column(vm, 1)->z, "4,3,2,1,0", 9) == 0);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  /* abandoned aggregate: reset in the middle frees the accumulators */
  CHECK_RC(vm_step(vm), SHALE_ROW);
  vm_reset(vm);
  vm_free(vm);
  vm_program_free(p);
  func_registry_free(&reg);
}

/* CollSeq hands its collation to the next function call only. */
TEST(vm_collseq_for_functions) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  const FuncDef *mn = func_find(&reg, "min", 2);
  CHECK(mn != NULL && (mn->flags & FUNC_NEEDCOLL));
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 4);
  vm_builder_add_text(&b, OP_String, 0, r, 0, "a", 1);
  vm_builder_add_text(&b, OP_String, 0, r + 1, 0, "B", 1);
  vm_builder_add_p4(&b, OP_CollSeq, 0, 0, 0, P4_COLL, &record_coll_nocase);
  int a = vm_builder_add_p4(&b, OP_Function, 0, r, r + 2, P4_FUNC, mn);
  vm_builder_set_p5(&b, a, 2);
  a = vm_builder_add_p4(&b, OP_Function, 0, r, r + 3, P4_FUNC, mn);
  vm_builder_set_p5(&b, a, 2);
  vm_builder_add(&b, OP_ResultRow, r + 2, 2, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK(vm_column(vm, 0)->n == 1 && vm_column(vm, 0)->z[0] == 'a'); /* NOCASE */
  CHECK(vm_column(vm, 1)->n == 1 && vm_column(vm, 1)->z[0] == 'B'); /* BINARY again */
  vm_free(vm);
  vm_program_free(p);
  func_registry_free(&reg);
}

/* Rerun with new bindings allocates nothing: every allocation is made to
 * fail during the second run, which must still succeed. */
TEST(vm_rerun_allocates_nothing) {
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, "SELECT ?1 + ?2, ?1 || ?2, record(?1, ?2)"));
  int r = vm_builder_regs(&b, 8);
  vm_builder_add(&b, OP_Init, 0, 1, 0);
  vm_builder_add(&b, OP_Variable, 1, r, 0);
  vm_builder_add(&b, OP_Variable, 2, r + 1, 0);
  vm_builder_add(&b, OP_Add, r + 1, r, r + 2);
  vm_builder_add(&b, OP_Concat, r + 1, r, r + 3);
  vm_builder_add(&b, OP_MakeRecord, r, 2, r + 4);
  vm_builder_add(&b, OP_Copy, r + 3, r + 5, 0);
  vm_builder_add(&b, OP_Concat, r + 5, r + 5, r + 5); /* aliasing output */
  vm_builder_add(&b, OP_ResultRow, r + 2, 4, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_OK(vm_bind_text(vm, 1, "123456789012345678901234567890", -1));
  CHECK_OK(vm_bind_int(vm, 2, 1));
  CHECK_RC(vm_bind_int(vm, 3, 1), SHALE_RANGE);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_RC(vm_bind_int(vm, 2, 5), SHALE_MISUSE); /* mid-run */
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_reset(vm);
  CHECK_OK(vm_bind_text(vm, 1, "12", -1));
  CHECK_OK(vm_bind_int(vm, 2, 30));
  util_fault_alloc(1, 1);
  int rc1 = vm_step(vm);
  ShValue c0 = *vm_column(vm, 0);
  char t1[16] = {0}, t3[16] = {0};
  if (rc1 == SHALE_ROW && vm_column(vm, 1)->n < 16 && vm_column(vm, 3)->n < 16) {
    memcpy(t1, vm_column(vm, 1)->z, vm_column(vm, 1)->n);
    memcpy(t3, vm_column(vm, 3)->z, vm_column(vm, 3)->n);
  }
  int rc2 = vm_step(vm);
  vm_reset(vm);
  int rc3 = vm_step(vm);
  long hits = util_fault_alloc_hits();
  util_fault_alloc(0, 0);
  CHECK_RC(rc1, SHALE_ROW);
  CHECK_RC(rc2, SHALE_DONE);
  CHECK_RC(rc3, SHALE_ROW);
  CHECK_EQ(hits, 0);
  CHECK_EQ(c0.type, SHALE_INTEGER);
  CHECK_EQ(c0.i, 42);
  CHECK_STR(t1, "1230");
  CHECK_STR(t3, "12301230");
  vm_free(vm);
  vm_program_free(p);
}

/* RowSetAdd/Read returns the distinct rowids in order; RowSetTest tests
 * and inserts. */
TEST(vm_rowset) {
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 5);
  int l_done = vm_builder_label(&b), l_in = vm_builder_label(&b), l_t2 = vm_builder_label(&b);
  static const int vals[] = {5, 3, 9, 3, -2, 5, 7};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    vm_builder_add(&b, OP_Integer, vals[i], r + 1, 0);
    vm_builder_add(&b, OP_RowSetAdd, r, r + 1, 0);
  }
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_RowSetRead, r, l_done, r + 2);
  vm_builder_add(&b, OP_ResultRow, r + 2, 1, 0);
  vm_builder_add(&b, OP_Goto, 0, loop, 0);
  vm_builder_resolve(&b, l_done);
  /* RowSetTest on set r+3: 4 not in (inserted), then 4 in -> jump */
  vm_builder_add(&b, OP_Integer, 4, r + 4, 0);
  vm_builder_add_i4(&b, OP_RowSetTest, r + 3, l_in, r + 4, 1);
  vm_builder_add_i4(&b, OP_RowSetTest, r + 3, l_t2, r + 4, 1);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_resolve(&b, l_t2);
  vm_builder_add(&b, OP_ResultRow, r + 4, 1, 0); /* 4: second test found it */
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_resolve(&b, l_in);
  vm_builder_add(&b, OP_Halt, SHALE_ERROR, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  static const int64_t want[] = {-2, 3, 5, 7, 9, 4};
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
      CHECK_RC(vm_step(vm), SHALE_ROW);
      CHECK_EQ(vm_column(vm, 0)->i, want[i]);
    }
    CHECK_RC(vm_step(vm), SHALE_DONE);
  }
  vm_free(vm);
  vm_program_free(p);
}

static int hook_calls;
static int hook_autocommit(void *ctx, int on, int rollback, char **errmsg) {
  hook_calls += 1 + on * 10 + rollback * 100;
  return SHALE_OK;
}
static int hook_savepoint(void *ctx, int op, const char *name, char **errmsg) {
  if (strcmp(name, "bad") == 0) {
    *errmsg = util_strdup("no such savepoint: bad");
    return SHALE_ERROR;
  }
  hook_calls += 1000;
  return SHALE_OK;
}

/* Connection hooks, the FK counters, unhooked ops failing cleanly. */
TEST(vm_hooks_and_fk_counters) {
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int l_zero = vm_builder_label(&b), l_z2 = vm_builder_label(&b);
  vm_builder_add(&b, OP_AutoCommit, 1, 1, 0);
  vm_builder_add_text(&b, OP_Savepoint, 0, 0, 0, "sp1", -1);
  vm_builder_add(&b, OP_FkCounter, 0, 2, 0);
  vm_builder_add(&b, OP_FkCounter, 1, 3, 0);
  vm_builder_add(&b, OP_FkIfZero, 0, l_zero, 0);
  vm_builder_add(&b, OP_FkCounter, 0, -2, 0);
  vm_builder_add(&b, OP_FkIfZero, 0, l_z2, 0);
  vm_builder_resolve(&b, l_zero);
  vm_builder_add(&b, OP_Halt, SHALE_ERROR, 0, 0);
  vm_builder_resolve(&b, l_z2);
  vm_builder_add_text(&b, OP_Savepoint, 2, 0, 0, "bad", -1);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_INTERNAL); /* no hooks */
  CHECK(vm_errmsg(vm) && strstr(vm_errmsg(vm), "AutoCommit") != NULL);
  int64_t deferred = 0;
  VmConnHooks h = {
      .autocommit = hook_autocommit, .savepoint = hook_savepoint, .deferred_fk = &deferred};
  vm_set_hooks(vm, &h);
  hook_calls = 0;
  CHECK_RC(vm_step(vm), SHALE_ERROR);
  CHECK_STR(vm_errmsg(vm), "no such savepoint: bad");
  CHECK_EQ(hook_calls, 1111);
  CHECK_EQ(deferred, 3);
  CHECK_EQ(vm_fk_count(vm), 0);
  vm_free(vm);
  vm_program_free(p);
}

/* The smaller register ops: Int64, Blob, Move, IntCopy, IsTrue, Affinity,
 * IfNotZero, Compare+Jump with a DESC column, AggValue. */
TEST(vm_register_ops) {
  static const uint8_t desc[2] = {0, 1};
  KeyInfo ki = {2, NULL, desc, 0};
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 12);
  int l_lt = vm_builder_label(&b), l_eq = vm_builder_label(&b), l_gt = vm_builder_label(&b);
  int l_after = vm_builder_label(&b);
  vm_builder_add_int64(&b, OP_Int64, 0, r, 0, INT64_MIN + 5);
  vm_builder_add_text(&b, OP_Blob, 0, r + 1, 0, "\x01\x02", 2);
  vm_builder_add(&b, OP_ResultRow, r, 2, 0); /* row 1 */
  vm_builder_add(&b, OP_Move, r, r + 2, 2);
  vm_builder_add(&b, OP_ResultRow, r, 4, 0); /* row 2: NULL NULL int blob */
  vm_builder_add(&b, OP_IntCopy, r + 2, r + 4, 0);
  vm_builder_add_text(&b, OP_String, 0, r + 5, 0, "0.5", 3);
  vm_builder_add_i4(&b, OP_IsTrue, r + 5, r + 6, 0, 0);  /* '0.5' IS TRUE -> 1 */
  vm_builder_add_i4(&b, OP_IsTrue, r + 5, r + 7, 0, 1);  /* IS NOT TRUE -> 0 */
  vm_builder_add_i4(&b, OP_IsTrue, r + 11, r + 8, 1, 0); /* NULL IS ... with p3 = 1 -> 1 */
  vm_builder_add(&b, OP_ResultRow, r + 4, 5, 0);         /* row 3 */
  /* Affinity "DB" on ('0.5', 7) -> (0.5 real, '7') */
  vm_builder_add(&b, OP_Integer, 7, r + 6, 0);
  vm_builder_add_text(&b, OP_Affinity, r + 5, 2, 0, "DB", 2);
  vm_builder_add(&b, OP_ResultRow, r + 5, 2, 0); /* row 4 */
  /* IfNotZero: r+9 = 2 -> jumps twice */
  vm_builder_add(&b, OP_Integer, 2, r + 9, 0);
  int inz = vm_builder_addr(&b);
  vm_builder_add(&b, OP_IfNotZero, r + 9, inz + 2, 0);
  vm_builder_add(&b, OP_Goto, 0, inz + 4, 0);
  vm_builder_add(&b, OP_ResultRow, r + 9, 1, 0); /* rows 5, 6: 1, 0 */
  vm_builder_add(&b, OP_Goto, 0, inz, 0);
  /* Compare (1, 5) with (1, 3) where column 2 is DESC: greater? 5 > 3 so DESC -> less */
  vm_builder_add(&b, OP_Integer, 1, r, 0);
  vm_builder_add(&b, OP_Integer, 5, r + 1, 0);
  vm_builder_add(&b, OP_Integer, 1, r + 2, 0);
  vm_builder_add(&b, OP_Integer, 3, r + 3, 0);
  vm_builder_add_p4(&b, OP_Compare, r, r + 2, 0, P4_KEYINFO, &ki);
  vm_builder_add(&b, OP_Jump, l_lt, l_eq, l_gt);
  vm_builder_resolve(&b, l_lt);
  vm_builder_add(&b, OP_Integer, -1, r + 10, 0);
  vm_builder_add(&b, OP_Goto, 0, l_after, 0);
  vm_builder_resolve(&b, l_eq);
  vm_builder_add(&b, OP_Integer, 0, r + 10, 0);
  vm_builder_add(&b, OP_Goto, 0, l_after, 0);
  vm_builder_resolve(&b, l_gt);
  vm_builder_add(&b, OP_Integer, 1, r + 10, 0);
  vm_builder_resolve(&b, l_after);
  vm_builder_add(&b, OP_ResultRow, r + 10, 1, 0); /* row 7: -1 */
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, INT64_MIN + 5);
  CHECK(vm_column(vm, 1)->type == SHALE_BLOB && vm_column(vm, 1)->n == 2);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->type, SHALE_NULL);
  CHECK_EQ(vm_column(vm, 1)->type, SHALE_NULL);
  CHECK_EQ(vm_column(vm, 2)->i, INT64_MIN + 5);
  CHECK(vm_column(vm, 3)->type == SHALE_BLOB && memcmp(vm_column(vm, 3)->z, "\x01\x02", 2) == 0);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, INT64_MIN + 5);
  CHECK_EQ(vm_column(vm, 2)->i, 1);
  CHECK_EQ(vm_column(vm, 3)->i, 0);
  CHECK_EQ(vm_column(vm, 4)->i, 1);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->type, SHALE_FLOAT);
  CHECK(vm_column(vm, 1)->type == SHALE_TEXT && vm_column(vm, 1)->n == 1 &&
        vm_column(vm, 1)->z[0] == '7');
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 1);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 0);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, -1);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_free(vm);
  vm_program_free(p);
}

/* Column over a pseudo cursor whose record is malformed: SHALE_CORRUPT,
 * never a read outside the record; a short record reads the p4 default. */
static int column_of(const char *rec, int n, int col, ShValue *out) {
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 2), c = vm_builder_cursor(&b);
  vm_builder_add_text(&b, OP_Blob, 0, r, 0, rec, n);
  vm_builder_add(&b, OP_OpenPseudo, c, r, 3);
  ShValue def;
  value_set_int(&def, -7);
  vm_builder_add_value(&b, OP_Column, c, col, r + 1, &def);
  vm_builder_add(&b, OP_ResultRow, r + 1, 1, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  int rc = vm_step(vm);
  if (rc == SHALE_ROW) *out = *vm_column(vm, 0);
  vm_free(vm);
  vm_program_free(p);
  return rc;
}

TEST(vm_column_corrupt_records) {
  ShValue x;
  /* good: header 3 bytes (len, int8, text len 1), body 0x05 'a' */
  CHECK_RC(column_of("\x03\x01\x0f\x05"
                     "a",
                     5, 0, &x),
           SHALE_ROW);
  CHECK_EQ(x.i, 5);
  CHECK_RC(column_of("\x03\x01\x0f\x05"
                     "a",
                     5, 2, &x),
           SHALE_ROW); /* past the end: default */
  CHECK_EQ(x.i, -7);
  /* body longer than the record */
  CHECK_RC(column_of("\x03\x01\x13\x05"
                     "a",
                     5, 1, &x),
           SHALE_CORRUPT);
  /* body shorter than the record (trailing garbage) */
  CHECK_RC(column_of("\x03\x01\x0f\x05"
                     "ab",
                     6, 1, &x),
           SHALE_CORRUPT);
  /* serial type 10 */
  CHECK_RC(column_of("\x02\x0a", 2, 0, &x), SHALE_CORRUPT);
  /* header length past the record */
  CHECK_RC(column_of("\x09\x01", 2, 0, &x), SHALE_CORRUPT);
  /* a varint running past the header */
  CHECK_RC(column_of("\x02\x81\x01", 3, 0, &x), SHALE_CORRUPT);
  /* empty blob as a record */
  CHECK_RC(column_of("", 0, 0, &x), SHALE_CORRUPT);
}

/* AggStep with a DISTINCT ephemeral cursor: count(DISTINCT x) and
 * group_concat(DISTINCT x) over 3, 1, 3, 2, 1, '1' (text '1' is distinct). */
TEST(vm_distinct_aggregate) {
  FuncRegistry reg;
  CHECK_OK(func_registry_init(&reg));
  const FuncDef *cnt = func_find(&reg, "count", 1), *gc = func_find(&reg, "group_concat", 1);
  static const Collation *colls[1] = {NULL};
  KeyInfo ki = {1, colls, NULL, 0};
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, NULL));
  int r = vm_builder_regs(&b, 4), d1 = vm_builder_cursor(&b), d2 = vm_builder_cursor(&b);
  vm_builder_add_p4(&b, OP_OpenEphemeral, d1, 1, 0, P4_KEYINFO, &ki);
  vm_builder_add_p4(&b, OP_OpenEphemeral, d2, 1, 0, P4_KEYINFO, &ki);
  static const int vals[] = {3, 1, 3, 2, 1, -1};
  for (int i = 0; i < 6; i++) {
    if (vals[i] < 0)
      vm_builder_add_text(&b, OP_String, 0, r, 0, "1", 1);
    else
      vm_builder_add(&b, OP_Integer, vals[i], r, 0);
    int a = vm_builder_add_p4(&b, OP_AggStep, d1, r, r + 1, P4_FUNC, cnt);
    vm_builder_set_p5(&b, a, 1);
    a = vm_builder_add_p4(&b, OP_AggStep, d2, r, r + 2, P4_FUNC, gc);
    vm_builder_set_p5(&b, a, 1);
  }
  vm_builder_add_p4(&b, OP_AggFinal, r + 1, 1, 0, P4_FUNC, cnt);
  vm_builder_add_p4(&b, OP_AggFinal, r + 2, 1, 0, P4_FUNC, gc);
  vm_builder_add(&b, OP_ResultRow, r + 1, 2, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, NULL, 0, &vm));
  for (int pass = 0; pass < 2; pass++) {
    CHECK_RC(vm_step(vm), SHALE_ROW);
    CHECK_EQ(vm_column(vm, 0)->i, 4);
    CHECK(vm_column(vm, 1)->n == 7 && memcmp(vm_column(vm, 1)->z, "3,1,2,1", 7) == 0);
    CHECK_RC(vm_step(vm), SHALE_DONE);
  }
  vm_free(vm);
  vm_program_free(p);
  func_registry_free(&reg);
}
