/*
 * test_vm_cursor.c -- cursor programs over real files, judged by sqlite3:
 * a full scan of a table sqlite3 wrote (short records with a default,
 * overflow payloads, every type) returns exactly sqlite3's rows; an insert
 * program (NewRowid, MakeRecord, Insert, IdxInsert) and a delete program
 * (Delete, IdxDelete) leave files that pass PRAGMA integrity_check with the
 * rows sqlite3 expects; index range scans (SeekGE/IdxGT/Next and
 * SeekLE/IdxLT/Prev), Found/NotFound and SeekRowid agree with sqlite3.
 *
 * Invariants:
 *  1. Programs are hand-assembled with vm_builder_*; the file is touched by
 *     one side at a time (sqlite3 closed while the Vm writes).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/vm/vm.h"
#include "../../common/tsql.h"
#include "../../test.h"

static int nfailures;
static int test_failures_guard(void) { return nfailures; }

static int same_col(const ShValue *v, sqlite3_stmt *st, int i) {
  int t = sqlite3_column_type(st, i);
  if (t != v->type) return 0;
  switch (t) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(st, i) == v->i;
    case SQLITE_FLOAT:
      return sqlite3_column_double(st, i) == v->r;
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const void *z =
          t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, i) : sqlite3_column_blob(st, i);
      int n = sqlite3_column_bytes(st, i);
      return (uint32_t)n == v->n && (n == 0 || memcmp(z, v->z, (size_t)n) == 0);
    }
    default:
      return 1;
  }
}

/* Step vm and st in lockstep; every row must match; returns rows seen. */
static int compare_rows(Vm *vm, sqlite3_stmt *st, int ncol) {
  int n = 0, bad = 0;
  for (;;) {
    int a = vm_step(vm), b = sqlite3_step(st);
    if (a != SHALE_ROW || b != SQLITE_ROW) {
      CHECK_RC(a, SHALE_DONE);
      CHECK(b == SQLITE_DONE);
      if (a != SHALE_DONE && vm_errmsg(vm)) fprintf(stderr, "  vm: %s\n", vm_errmsg(vm));
      break;
    }
    CHECK_EQ(vm_column_count(vm), ncol);
    for (int i = 0; i < ncol; i++) {
      if (!same_col(vm_column(vm, i), st, i)) {
        nfailures++;
        if (bad++ < 5) test_fail(__FILE__, __LINE__, "row %d column %d differs", n, i);
      }
    }
    n++;
  }
  return n;
}

static uint32_t root_of(sqlite3 *db, const char *name) {
  char sql[200];
  snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_schema WHERE name='%s'", name);
  return (uint32_t)tsql_int(db, sql);
}

static void make_scan_db(const char *path) {
  sqlite3 *db = tsql_open(path);
  CHECK(db != NULL);
  CHECK(tsql_exec(db,
                  "CREATE TABLE t(a, b, c);"
                  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<300)"
                  " INSERT INTO t SELECT CASE i%5 WHEN 0 THEN NULL WHEN 1 THEN i WHEN 2 THEN"
                  " i*1.5 WHEN 3 THEN 'text'||i ELSE randomblob(i%7) END,"
                  " CASE WHEN i%17=0 THEN zeroblob(3000+i) ELSE -i END,"
                  " CASE WHEN i%23=0 THEN printf('%.*c', 6000, 'x') ELSE i*9223372036854 END"
                  " FROM s;"
                  "ALTER TABLE t ADD COLUMN d DEFAULT 5;"
                  "INSERT INTO t VALUES(1,2,3,4),(NULL,NULL,NULL,NULL);"
                  "DELETE FROM t WHERE rowid % 11 = 0;") == SQLITE_OK);
  sqlite3_close(db);
}

TEST(vm_full_scan_matches_sqlite) {
  const char *path = test_path("scan.db");
  make_scan_db(path);
  sqlite3 *db = tsql_open(path);
  uint32_t root = root_of(db, "t");
  VmBuilder b;
  VmProgram *p;
  CHECK_OK(vm_builder_init(&b, "SELECT a, b, c, d, rowid FROM t"));
  int r = vm_builder_regs(&b, 5), c = vm_builder_cursor(&b);
  int l_start = vm_builder_label(&b), l_end = vm_builder_label(&b), l_loop;
  vm_builder_add(&b, OP_Init, 0, l_start, 0);
  l_loop = vm_builder_addr(&b) + 0;
  vm_builder_resolve(&b, l_start);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_i4(&b, OP_OpenRead, c, (int)root, 0, 4);
  vm_builder_add(&b, OP_Rewind, c, l_end, 0);
  l_loop = vm_builder_addr(&b);
  for (int i = 0; i < 3; i++) vm_builder_add(&b, OP_Column, c, i, r + i);
  ShValue five;
  value_set_int(&five, 5);
  vm_builder_add_value(&b, OP_Column, c, 3, r + 3, &five);
  vm_builder_add(&b, OP_Rowid, c, r + 4, 0);
  vm_builder_add(&b, OP_ResultRow, r, 5, 0);
  vm_builder_add(&b, OP_Next, c, l_loop, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));

  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, "SELECT a, b, c, d, rowid FROM t", -1, &st, NULL) == SQLITE_OK);
  int n = compare_rows(vm, st, 5);
  CHECK_EQ(n, tsql_int(db, "SELECT count(*) FROM t"));
  CHECK(n > 250);
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_NONE); /* committed at halt */
  /* second run after an abandoned one */
  sqlite3_reset(st);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  vm_reset(vm);
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_NONE);
  CHECK_EQ(compare_rows(vm, st, 5), n);
  sqlite3_finalize(st);
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  sqlite3_close(db);
}

/* ---- insert / delete / index programs ---- */

static const Collation *bin_coll[1] = {NULL};
static KeyInfo ki1 = {1, bin_coll, NULL, 0};

/* INSERT INTO t2(a, b) VALUES(?1, ?2), maintaining index i2(a). */
static VmProgram *build_insert(uint32_t troot, uint32_t iroot) {
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, "INSERT INTO t2 VALUES(?1, ?2)");
  int r = vm_builder_regs(&b, 8), ct = vm_builder_cursor(&b), ci = vm_builder_cursor(&b);
  vm_builder_add(&b, OP_Init, 0, 1, 0);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, ct, (int)troot, 0, 2);
  vm_builder_add_p4(&b, OP_OpenWrite, ci, (int)iroot, 0, P4_KEYINFO, &ki1);
  vm_builder_add(&b, OP_Variable, 1, r, 0);
  vm_builder_add(&b, OP_Variable, 2, r + 1, 0);
  vm_builder_add(&b, OP_NewRowid, ct, r + 2, 0);
  vm_builder_add(&b, OP_MakeRecord, r, 2, r + 3);
  int a = vm_builder_add(&b, OP_Insert, ct, r + 3, r + 2);
  vm_builder_set_p5(&b, a, VM_OPFLAG_NCHANGE | VM_OPFLAG_LASTROWID);
  vm_builder_add(&b, OP_SCopy, r, r + 4, 0);
  vm_builder_add(&b, OP_SCopy, r + 2, r + 5, 0);
  vm_builder_add(&b, OP_MakeRecord, r + 4, 2, r + 6);
  vm_builder_add(&b, OP_IdxInsert, ci, r + 6, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_finish(&b, &p); /* NULL on failure (OOM test) */
  return p;
}

/* DELETE FROM t2 WHERE rowid % ?1 = 0, maintaining i2. */
static VmProgram *build_delete(uint32_t troot, uint32_t iroot) {
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, "DELETE FROM t2 WHERE rowid % ?1 = 0");
  int r = vm_builder_regs(&b, 6), ct = vm_builder_cursor(&b), ci = vm_builder_cursor(&b);
  int l_end = vm_builder_label(&b), l_next = vm_builder_label(&b);
  vm_builder_add(&b, OP_Init, 0, 1, 0);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, ct, (int)troot, 0, 2);
  vm_builder_add_p4(&b, OP_OpenWrite, ci, (int)iroot, 0, P4_KEYINFO, &ki1);
  vm_builder_add(&b, OP_Variable, 1, r + 5, 0);
  vm_builder_add(&b, OP_Rewind, ct, l_end, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Column, ct, 0, r);
  vm_builder_add(&b, OP_Rowid, ct, r + 1, 0);
  vm_builder_add(&b, OP_Remainder, r + 5, r + 1, r + 2);
  vm_builder_add(&b, OP_If, r + 2, l_next, 0);
  vm_builder_add(&b, OP_IdxDelete, ci, r, 2);
  int a = vm_builder_add(&b, OP_Delete, ct, 0, 0);
  vm_builder_set_p5(&b, a, VM_OPFLAG_NCHANGE);
  vm_builder_resolve(&b, l_next);
  vm_builder_add(&b, OP_Next, ct, loop, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  return p;
}

TEST(vm_insert_delete_pass_integrity_check) {
  const char *path = test_path("ins.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db, "CREATE TABLE t2(a, b); CREATE INDEX i2 ON t2(a);") == SQLITE_OK);
  uint32_t troot = root_of(db, "t2"), iroot = root_of(db, "i2");
  sqlite3_close(db);

  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  VmProgram *p = build_insert(troot, iroot);
  Vm *vm;
  CHECK(p != NULL);
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  uint64_t s = test_seed();
  static char big[5000];
  memset(big, 'q', sizeof big);
  int n = 600;
  for (int i = 1; i <= n; i++) {
    uint64_t x = test_rand(&s);
    switch (x % 6) {
      case 0:
        vm_bind_null(vm, 1);
        break;
      case 1:
      case 2:
        vm_bind_int(vm, 1, (int64_t)(x >> 8) % 100);
        break;
      case 3:
        vm_bind_real(vm, 1, (double)((x >> 8) % 100) / 4);
        break;
      case 4:
        vm_bind_text(vm, 1, big, (int)((x >> 8) % 40));
        break;
      default:
        vm_bind_blob(vm, 1, big, (int)((x >> 8) % 3000));
        break;
    }
    if (i % 7 == 0)
      vm_bind_blob(vm, 2, big, (int)sizeof big);
    else
      vm_bind_int(vm, 2, i);
    CHECK_RC(vm_step(vm), SHALE_DONE);
    CHECK_EQ(vm_changes(vm), 1);
    CHECK_EQ(vm_last_rowid(vm), i);
    vm_reset(vm);
  }
  vm_free(vm);
  vm_program_free(p);

  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
  db = tsql_open(path);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM t2"), n);
  CHECK_EQ(tsql_int(db, "SELECT max(rowid) FROM t2"), n);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM t2 WHERE length(b) = 5000"), n / 7);
  sqlite3_close(db);

  /* IntegrityCk: clean with both trees listed; the index's pages are
   * "never used" when only the table is listed */
  for (int k = 0; k < 2; k++) {
    BtreeCheckRoot roots[3] = {
        {1, 1, NULL, NULL}, {troot, 1, NULL, NULL}, {iroot, 0, record_compare, &ki1}};
    VmBuilder b;
    vm_builder_init(&b, NULL);
    vm_builder_add(&b, OP_Transaction, 0, 0, 0);
    vm_builder_add_roots(&b, OP_IntegrityCk, 1, 0, 10, roots, k == 0 ? 3 : 2);
    vm_builder_add(&b, OP_ResultRow, 1, 1, 0);
    vm_builder_regs(&b, 1);
    CHECK_OK(vm_builder_finish(&b, &p));
    CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
    CHECK_RC(vm_step(vm), SHALE_ROW);
    const ShValue *rep = vm_column(vm, 0);
    if (k == 0) {
      CHECK_EQ(rep->type, SHALE_NULL);
      if (rep->type == SHALE_TEXT) fprintf(stderr, "  report: %.*s\n", (int)rep->n, rep->z);
    } else {
      CHECK_EQ(rep->type, SHALE_TEXT);
      CHECK(rep->type == SHALE_TEXT && strstr(rep->z, "is never used") != NULL);
    }
    char *ex = vm_explain(p);
    CHECK(ex && strstr(ex, "IntegrityCk\t1\t0\t10\troots(") != NULL);
    shale_free(ex);
    vm_free(vm);
    vm_program_free(p);
  }

  p = build_delete(troot, iroot);
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  vm_bind_int(vm, 1, 3);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  CHECK_EQ(vm_changes(vm), n / 3);
  vm_free(vm);
  vm_program_free(p);
  CHECK(tsql_integrity(path, msg, sizeof msg));
  db = tsql_open(path);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM t2"), n - n / 3);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM t2 WHERE rowid % 3 = 0"), 0);
  sqlite3_close(db);
  btree_close(bt);
}

/* SELECT rowid, a FROM t3 WHERE a BETWEEN ?1 AND ?2 via index i3, forward
 * (SeekGE, IdxGT, Next) or backward (SeekLE, IdxLT, Prev). */
static VmProgram *build_range(uint32_t iroot, int backward) {
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 4), c = vm_builder_cursor(&b);
  int l_end = vm_builder_label(&b);
  vm_builder_add(&b, OP_Init, 0, 1, 0);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_p4(&b, OP_OpenRead, c, (int)iroot, 0, P4_KEYINFO, &ki1);
  vm_builder_add(&b, OP_Variable, 1, r, 0);
  vm_builder_add(&b, OP_Variable, 2, r + 1, 0);
  if (!backward) {
    vm_builder_add_i4(&b, OP_SeekGE, c, l_end, r, 1);
  } else {
    vm_builder_add_i4(&b, OP_SeekLE, c, l_end, r + 1, 1);
  }
  int loop = vm_builder_addr(&b);
  if (!backward)
    vm_builder_add_i4(&b, OP_IdxGT, c, l_end, r + 1, 1);
  else
    vm_builder_add_i4(&b, OP_IdxLT, c, l_end, r, 1);
  vm_builder_add(&b, OP_IdxRowid, c, r + 2, 0);
  vm_builder_add(&b, OP_Column, c, 0, r + 3);
  vm_builder_add(&b, OP_ResultRow, r + 2, 2, 0);
  vm_builder_add(&b, backward ? OP_Prev : OP_Next, c, loop, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  return p;
}

TEST(vm_index_range_scans_match_sqlite) {
  const char *path = test_path("idx.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE t3(a, b); CREATE INDEX i3 ON t3(a);"
                  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<2000)"
                  " INSERT INTO t3 SELECT CASE WHEN i%13=0 THEN NULL WHEN i%7=0 THEN"
                  " 'k'||(i%50) WHEN i%5=0 THEN (i%60)+0.5 ELSE i%60 END, i FROM s;") == SQLITE_OK);
  uint32_t iroot = root_of(db, "i3"), troot = root_of(db, "t3");
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  static const struct {
    int64_t lo, hi;
  } ranges[] = {{10, 20}, {0, 0}, {-5, 3}, {55, 1000}, {30, 29}, {59, 59}};
  for (int back = 0; back < 2; back++) {
    VmProgram *p = build_range(iroot, back);
    Vm *vm;
    CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db,
                             back ? "SELECT rowid, a FROM t3 WHERE a BETWEEN ?1 AND ?2 "
                                    "ORDER BY a DESC, rowid DESC"
                                  : "SELECT rowid, a FROM t3 WHERE a BETWEEN ?1 AND ?2 "
                                    "ORDER BY a, rowid",
                             -1, &st, NULL) == SQLITE_OK);
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
      vm_reset(vm);
      sqlite3_reset(st);
      vm_bind_int(vm, 1, ranges[k].lo);
      vm_bind_int(vm, 2, ranges[k].hi);
      sqlite3_bind_int64(st, 1, ranges[k].lo);
      sqlite3_bind_int64(st, 2, ranges[k].hi);
      int n = compare_rows(vm, st, 2);
      if (k == 0) CHECK(n > 100);
    }
    /* text range */
    vm_reset(vm);
    sqlite3_reset(st);
    vm_bind_text(vm, 1, "k1", 2);
    vm_bind_text(vm, 2, "k3", 2);
    sqlite3_bind_text(st, 1, "k1", 2, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, "k3", 2, SQLITE_STATIC);
    CHECK(compare_rows(vm, st, 2) > 10);
    sqlite3_finalize(st);
    vm_free(vm);
    vm_program_free(p);
  }

  /* Found / NotFound / SeekRowid / Count */
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 6), ci = vm_builder_cursor(&b), ct = vm_builder_cursor(&b);
  int l_nf = vm_builder_label(&b), l_f2 = vm_builder_label(&b), l_nr = vm_builder_label(&b);
  int l_out = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_p4(&b, OP_OpenRead, ci, (int)iroot, 0, P4_KEYINFO, &ki1);
  vm_builder_add_i4(&b, OP_OpenRead, ct, (int)troot, 0, 2);
  vm_builder_add(&b, OP_Integer, 0, r + 1, 0);
  vm_builder_add(&b, OP_Variable, 1, r, 0);
  vm_builder_add_i4(&b, OP_NotFound, ci, l_nf, r, 1);
  vm_builder_add(&b, OP_AddImm, r + 1, 1, 0); /* found */
  vm_builder_resolve(&b, l_nf);
  vm_builder_add_i4(&b, OP_Found, ci, l_f2, r, 1);
  vm_builder_add(&b, OP_AddImm, r + 1, 10, 0); /* not found */
  vm_builder_resolve(&b, l_f2);
  vm_builder_add(&b, OP_Variable, 2, r + 2, 0);
  vm_builder_add(&b, OP_SeekRowid, ct, l_nr, r + 2);
  vm_builder_add(&b, OP_Column, ct, 1, r + 3);
  vm_builder_add(&b, OP_Goto, 0, l_out, 0);
  vm_builder_resolve(&b, l_nr);
  vm_builder_add(&b, OP_Null, 0, r + 3, 0);
  vm_builder_resolve(&b, l_out);
  vm_builder_add(&b, OP_Count, ci, r + 4, 0);
  vm_builder_add(&b, OP_ResultRow, r + 1, 4, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  vm_bind_int(vm, 1, 17);
  vm_bind_text(vm, 2, "1234", 4); /* text rowid is converted */
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 1);
  CHECK_EQ(vm_column(vm, 2)->i, 1234);
  CHECK_EQ(vm_column(vm, 3)->i, 2000);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_bind_int(vm, 1, 1000);
  vm_bind_int(vm, 2, 5000);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 10);
  CHECK_EQ(vm_column(vm, 2)->type, SHALE_NULL);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  sqlite3_close(db);
}

/* A table seek by rowid range: SeekGT with a real key, SeekLT. */
TEST(vm_table_rowid_seeks) {
  const char *path = test_path("rowid.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE t4(x);"
                  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<500)"
                  " INSERT INTO t4(rowid, x) SELECT i*2, i FROM s;") == SQLITE_OK);
  uint32_t root = root_of(db, "t4");
  sqlite3_close(db);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  static const struct {
    int op;
    double key;
    int64_t want; /* rowid landed on, 0 = jumped (none) */
  } cases[] = {{OP_SeekGE, 10, 10},     {OP_SeekGE, 11, 12},   {OP_SeekGT, 10, 12},
               {OP_SeekGT, 10.5, 12},   {OP_SeekGE, 10.5, 12}, {OP_SeekLE, 10.5, 10},
               {OP_SeekLT, 10, 8},      {OP_SeekLT, 2, 0},     {OP_SeekGT, 1000, 0},
               {OP_SeekLE, 1e30, 1000}, {OP_SeekGE, -1e30, 2}, {OP_SeekLT, 9.5, 8}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    VmBuilder b;
    VmProgram *p;
    vm_builder_init(&b, NULL);
    int r = vm_builder_regs(&b, 2), c = vm_builder_cursor(&b);
    int l_none = vm_builder_label(&b);
    vm_builder_add(&b, OP_Transaction, 0, 0, 0);
    vm_builder_add_i4(&b, OP_OpenRead, c, (int)root, 0, 1);
    vm_builder_add_real(&b, OP_Real, 0, r, 0, cases[k].key);
    vm_builder_add(&b, cases[k].op, c, l_none, r);
    vm_builder_add(&b, OP_Rowid, c, r + 1, 0);
    vm_builder_add(&b, OP_ResultRow, r + 1, 1, 0);
    vm_builder_resolve(&b, l_none);
    vm_builder_add(&b, OP_Halt, 0, 0, 0);
    CHECK_OK(vm_builder_finish(&b, &p));
    Vm *vm;
    CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
    int rc = vm_step(vm);
    if (cases[k].want == 0) {
      if (rc != SHALE_DONE) test_fail(__FILE__, __LINE__, "case %d: expected no row", (int)k);
    } else {
      CHECK_RC(rc, SHALE_ROW);
      if (rc == SHALE_ROW && vm_column(vm, 0)->i != cases[k].want)
        test_fail(__FILE__, __LINE__, "case %d: rowid %lld, expected %lld", (int)k,
                  (long long)vm_column(vm, 0)->i, (long long)cases[k].want);
      CHECK_RC(vm_step(vm), SHALE_DONE);
    }
    vm_free(vm);
    vm_program_free(p);
  }
  btree_close(bt);
}

/* CreateBtree + Insert into the new tree + ReadCookie, in one write
 * transaction; the tree is registered by hand so sqlite3 can check it. */
TEST(vm_create_btree) {
  const char *path = test_path("create.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db, "CREATE TABLE seed(x);") == SQLITE_OK);
  sqlite3_close(db);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 6), c = vm_builder_cursor(&b);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add(&b, OP_CreateBtree, 0, r, BTREE_INTKEY);
  int a = vm_builder_add(&b, OP_OpenWrite, c, r, 0);
  vm_builder_set_p5(&b, a, VM_OPFLAG_P2ISREG);
  vm_builder_add(&b, OP_Integer, 7, r + 1, 0);
  vm_builder_add(&b, OP_MakeRecord, r + 1, 1, r + 2);
  vm_builder_add(&b, OP_Integer, 1, r + 3, 0);
  vm_builder_add(&b, OP_Insert, c, r + 2, r + 3);
  vm_builder_add(&b, OP_ReadCookie, 0, r + 4, BTREE_META_SCHEMA_COOKIE);
  vm_builder_add(&b, OP_ResultRow, r, 1, 0);
  vm_builder_add(&b, OP_ResultRow, r + 4, 1, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  CHECK_RC(vm_step(vm), SHALE_ROW);
  int64_t root = vm_column(vm, 0)->i;
  CHECK(root > 2);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 1);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  db = tsql_open(path);
  char sql[200];
  snprintf(sql, sizeof sql,
           "PRAGMA writable_schema=ON; INSERT INTO sqlite_schema VALUES('table','n','n',%lld,"
           "'CREATE TABLE n(x)'); PRAGMA writable_schema=OFF;",
           (long long)root);
  CHECK(tsql_exec(db, sql) == SQLITE_OK);
  sqlite3_close(db);
  db = tsql_open(path);
  CHECK_EQ(tsql_int(db, "SELECT x FROM n WHERE rowid = 1"), 7);
  sqlite3_close(db);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
}

/* SELECT a, rowid FROM <table root> ORDER BY a DESC, rowid (sql: its
 * text) through the sorter: SorterOpen/Insert/Sort/Data/Next with a pseudo
 * cursor. */
static VmProgram *order_by_program(uint32_t root, const char *sql) {
  static const uint8_t desc[2] = {1, 0};
  static const Collation *colls[2] = {NULL, NULL};
  static KeyInfo ki2 = {2, colls, desc, 0};
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, sql);
  int r = vm_builder_regs(&b, 6), ct = vm_builder_cursor(&b), cs = vm_builder_cursor(&b);
  int cp = vm_builder_cursor(&b);
  int l_scan_end = vm_builder_label(&b), l_end = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_p4(&b, OP_SorterOpen, cs, 2, 0, P4_KEYINFO, &ki2);
  vm_builder_add_i4(&b, OP_OpenRead, ct, (int)root, 0, 2);
  vm_builder_add(&b, OP_Rewind, ct, l_scan_end, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Column, ct, 0, r);
  vm_builder_add(&b, OP_Rowid, ct, r + 1, 0);
  vm_builder_add(&b, OP_MakeRecord, r, 2, r + 2);
  vm_builder_add(&b, OP_SorterInsert, cs, r + 2, 0);
  vm_builder_add(&b, OP_Next, ct, loop, 0);
  vm_builder_resolve(&b, l_scan_end);
  vm_builder_add(&b, OP_OpenPseudo, cp, r + 3, 2);
  vm_builder_add(&b, OP_SorterSort, cs, l_end, 0);
  int out = vm_builder_addr(&b);
  vm_builder_add(&b, OP_SorterData, cs, r + 3, cp);
  vm_builder_add(&b, OP_Column, cp, 0, r + 4);
  vm_builder_add(&b, OP_Column, cp, 1, r + 5);
  vm_builder_add(&b, OP_ResultRow, r + 4, 2, 0);
  vm_builder_add(&b, OP_SorterNext, cs, out, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  return p;
}

/* ORDER BY through the sorter (SorterOpen/Insert/Sort/Data/Next with a
 * pseudo cursor) and DISTINCT through an ephemeral index, against sqlite3;
 * an ephemeral rowid table with NewRowid/Insert/Count/OpenDup. */
TEST(vm_sorter_and_ephemeral_match_sqlite) {
  const char *path = test_path("sort.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE t5(a, b);"
                  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<3000)"
                  " INSERT INTO t5 SELECT CASE WHEN i%13=0 THEN NULL WHEN i%7=0 THEN"
                  " 'k'||(i%50) WHEN i%5=0 THEN (i%60)+0.5 WHEN i%11=0 THEN"
                  " randomblob(i%5) ELSE i%60 END, i FROM s;") == SQLITE_OK);
  uint32_t root = root_of(db, "t5");
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));

  VmProgram *p = order_by_program(root, "SELECT a, rowid FROM t5 ORDER BY a DESC, rowid");
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, "SELECT a, rowid FROM t5 ORDER BY a DESC, rowid", -1, &st, NULL) ==
        SQLITE_OK);
  CHECK_EQ(compare_rows(vm, st, 2), 3000);
  sqlite3_reset(st);
  CHECK_EQ(compare_rows(vm, st, 2), 3000); /* rerun reuses the sorter's buffers */
  /* a small budget: sorted runs spill to a temp file and are merged */
  static const uint64_t budgets[] = {4096, 100, 1};
  for (int k = 0; k < (int)(sizeof budgets / sizeof budgets[0]); k++) {
    vm_set_sorter_budget(vm, budgets[k]);
    sqlite3_reset(st);
    CHECK_EQ(compare_rows(vm, st, 2), 3000);
  }
  /* abandoned in the middle of a merge */
  CHECK_RC(vm_step(vm), SHALE_ROW);
  vm_reset(vm);
  sqlite3_finalize(st);
  vm_free(vm);
  vm_program_free(p);

  /* DISTINCT a via an ephemeral index */
  VmBuilder b;
  vm_builder_init(&b, "SELECT DISTINCT a FROM t5 ORDER BY a");
  int r = vm_builder_regs(&b, 3);
  int ct = vm_builder_cursor(&b);
  int ce = vm_builder_cursor(&b);
  int l_scan_end = vm_builder_label(&b);
  int l_end = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_p4(&b, OP_OpenEphemeral, ce, 1, 0, P4_KEYINFO, &ki1);
  vm_builder_add_i4(&b, OP_OpenRead, ct, (int)root, 0, 2);
  vm_builder_add(&b, OP_Rewind, ct, l_scan_end, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Column, ct, 0, r);
  vm_builder_add(&b, OP_MakeRecord, r, 1, r + 1);
  vm_builder_add(&b, OP_IdxInsert, ce, r + 1, 0);
  vm_builder_add(&b, OP_Next, ct, loop, 0);
  vm_builder_resolve(&b, l_scan_end);
  vm_builder_add(&b, OP_Rewind, ce, l_end, 0);
  int out = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Column, ce, 0, r + 2);
  vm_builder_add(&b, OP_ResultRow, r + 2, 1, 0);
  vm_builder_add(&b, OP_Next, ce, out, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  CHECK(sqlite3_prepare_v2(db, "SELECT DISTINCT a FROM t5 ORDER BY a", -1, &st, NULL) == SQLITE_OK);
  int nd = compare_rows(vm, st, 1);
  CHECK(nd > 100);
  sqlite3_reset(st);
  CHECK_EQ(compare_rows(vm, st, 1), nd);
  sqlite3_finalize(st);
  vm_free(vm);
  vm_program_free(p);

  /* ephemeral rowid table: insert 10 rows, count them through a dup cursor */
  vm_builder_init(&b, NULL);
  r = vm_builder_regs(&b, 4);
  ce = vm_builder_cursor(&b);
  int cd = vm_builder_cursor(&b);
  vm_builder_add_p4(&b, OP_OpenEphemeral, ce, 1, 0, P4_KEYINFO, NULL);
  vm_builder_add(&b, OP_Integer, 10, r, 0);
  loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_NewRowid, ce, r + 1, 0);
  vm_builder_add(&b, OP_MakeRecord, r, 1, r + 2);
  vm_builder_add(&b, OP_Insert, ce, r + 2, r + 1);
  vm_builder_add(&b, OP_IfPos, r, loop, 1);
  vm_builder_add(&b, OP_OpenDup, cd, ce, 0);
  vm_builder_add(&b, OP_Count, cd, r + 3, 0);
  vm_builder_add(&b, OP_ResultRow, r + 1, 3, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  CHECK_OK(vm_new(p, bt, 0, &vm));
  for (int pass = 0; pass < 2; pass++) {
    CHECK_RC(vm_step(vm), SHALE_ROW);
    CHECK_EQ(vm_column(vm, 0)->i, 11);
    CHECK_EQ(vm_column(vm, 2)->i, 11);
    CHECK_RC(vm_step(vm), SHALE_DONE);
  }
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  sqlite3_close(db);
}

/* A spilled sort of hundreds of runs (a budget below one record: a run
 * each), against sqlite3: 300 runs merge at once after one partial pass
 * folds the last 45 into one (vm_sort.c invariant 2), 700 after a full
 * pass; the first 1100 bytes of every key are equal, so ties go to the
 * record compare; equal keys order by rowid. */
TEST(vm_sorter_merges_hundreds_of_runs) {
  const char *path = test_path("sortruns.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE t300(a, b); CREATE TABLE t700(a, b);"
                  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<700)"
                  " INSERT INTO t700 SELECT printf('%.1100c%d', 'x', (i * 37) % 101), i FROM s;"
                  "INSERT INTO t300 SELECT a, b FROM t700 WHERE b <= 300;") == SQLITE_OK);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  static const char *tables[] = {"t300", "t700"};
  for (int t = 0; t < 2; t++) {
    char sql[80];
    snprintf(sql, sizeof sql, "SELECT a, rowid FROM %s ORDER BY a DESC, rowid", tables[t]);
    VmProgram *p = order_by_program(root_of(db, tables[t]), sql);
    Vm *vm;
    CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
    vm_set_sorter_budget(vm, 1);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
    int n = t == 0 ? 300 : 700;
    CHECK_EQ(compare_rows(vm, st, 2), n);
    sqlite3_reset(st);
    CHECK_EQ(compare_rows(vm, st, 2), n); /* again, over buffers of another size */
    sqlite3_finalize(st);
    vm_free(vm);
    vm_program_free(p);
  }
  btree_close(bt);
  sqlite3_close(db);
}

/* Out of memory at every allocation of a sort-and-insert run: each fails
 * cleanly with SHALE_NOMEM (or succeeds), nothing leaks, and the file stays
 * intact for sqlite3. */
TEST(vm_oom_every_allocation) {
  const char *path = test_path("oom.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db, "CREATE TABLE t2(a, b); CREATE INDEX i2 ON t2(a);") == SQLITE_OK);
  uint32_t troot = root_of(db, "t2"), iroot = root_of(db, "i2");
  sqlite3_close(db);
  int ok_runs = 0;
  for (long n = 1; n < 400; n++) {
    Btree *bt = NULL;
    VmProgram *p = NULL;
    Vm *vm = NULL;
    util_fault_alloc(n, 0);
    int rc = btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt);
    if (rc == SHALE_OK) {
      p = build_insert(troot, iroot);
      if (p) rc = vm_new(p, bt, VM_AUTOCOMMIT, &vm);
      if (p && rc == SHALE_OK) {
        vm_bind_int(vm, 1, n);
        rc = vm_bind_text(vm, 2, "some text to copy", -1);
        if (rc == SHALE_OK) rc = vm_step(vm);
        if (rc == SHALE_DONE) ok_runs++;
      }
    }
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (rc != SHALE_DONE && rc != SHALE_NOMEM && rc != SHALE_OK)
      test_fail(__FILE__, __LINE__, "n=%ld: rc %d", n, rc);
    vm_free(vm);
    vm_program_free(p);
    if (bt) btree_close(bt);
    if (hits == 0) break;
  }
  util_fault_alloc(0, 0);
  CHECK(ok_runs >= 1);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
}

/* INSERT two rows (?1, ?1+1) into t2 then halt with an error whose conflict
 * resolution is ?-chosen (p2 of the final Halt is patched per run). */
static VmProgram *build_insert2_fail(uint32_t troot, int oe) {
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 6), ct = vm_builder_cursor(&b);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, ct, (int)troot, 0, 2);
  for (int k = 0; k < 2; k++) {
    vm_builder_add(&b, OP_Variable, 1, r, 0);
    vm_builder_add(&b, OP_AddImm, r, k, 0);
    vm_builder_add(&b, OP_Null, 0, r + 1, 0);
    vm_builder_add(&b, OP_NewRowid, ct, r + 2, 0);
    vm_builder_add(&b, OP_MakeRecord, r, 2, r + 3);
    vm_builder_add(&b, OP_Insert, ct, r + 3, r + 2);
  }
  vm_builder_add(&b, OP_Variable, 2, r + 4, 0);
  vm_builder_add(&b, OP_HaltIfNull, SHALE_CONSTRAINT_NOTNULL, oe, r + 4);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_finish(&b, &p);
  return p;
}

TEST(vm_statement_journal_conflict_resolution) {
  const char *path = test_path("stmt.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db, "CREATE TABLE t2(a, b);") == SQLITE_OK);
  uint32_t troot = root_of(db, "t2");
  sqlite3_close(db);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE)); /* the "user" transaction */
  static const int oes[] = {VM_OE_ABORT, VM_OE_FAIL, 0};
  for (int k = 0; k < 3; k++) {
    VmProgram *p = build_insert2_fail(troot, oes[k]);
    Vm *vm;
    CHECK(p != NULL);
    CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT | VM_STMT_JOURNAL, &vm));
    vm_bind_int(vm, 1, 10 * (k + 1));
    vm_bind_int(vm, 2, 1);
    CHECK_RC(vm_step(vm), SHALE_DONE); /* succeeds: rows 10*(k+1), +1 */
    vm_bind_int(vm, 1, 100 * (k + 1));
    vm_bind_null(vm, 2);
    CHECK_RC(vm_step(vm), SHALE_CONSTRAINT_NOTNULL); /* FAIL keeps its rows */
    CHECK_EQ(btree_txn_state(bt), PAGER_TXN_WRITE);
    CHECK_EQ(vm_txn_rolled_back(vm), 0);
    vm_free(vm);
    vm_program_free(p);
  }
  /* ROLLBACK ends the whole transaction */
  VmProgram *p = build_insert2_fail(troot, VM_OE_ROLLBACK);
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_STMT_JOURNAL, &vm));
  vm_bind_int(vm, 1, 7);
  vm_bind_int(vm, 2, 1);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_WRITE);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  vm_bind_int(vm, 1, 8);
  vm_bind_null(vm, 2);
  CHECK_RC(vm_step(vm), SHALE_CONSTRAINT_NOTNULL);
  CHECK_EQ(vm_txn_rolled_back(vm), 1);
  CHECK(btree_txn_state(bt) != PAGER_TXN_WRITE);
  vm_free(vm);
  vm_program_free(p);
  if (btree_txn_state(bt) != PAGER_TXN_NONE) btree_rollback(bt);
  btree_close(bt);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
  db = tsql_open(path);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM t2"), 2 * 3 + 2 + 2);
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, "SELECT group_concat(a) FROM (SELECT a FROM t2 ORDER BY rowid)", -1,
                           &st, NULL) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "10,11,20,21,200,201,30,31,7,8");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* Trigger sub-programs: Program/Param, RAISE(IGNORE) and an error raised in
 * the trigger failing (and rolling back) the calling statement. */
static VmProgram *build_trigger(uint32_t logroot) {
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, "trigger");
  int r = vm_builder_regs(&b, 6), c = vm_builder_cursor(&b);
  int l_cont = vm_builder_label(&b), l_ins = vm_builder_label(&b);
  vm_builder_add_i4(&b, OP_OpenWrite, c, (int)logroot, 0, 1);
  vm_builder_add(&b, OP_Param, 0, r, 0);
  vm_builder_add(&b, OP_Integer, 3, r + 1, 0);
  vm_builder_add(&b, OP_Ne, r + 1, l_cont, r);
  vm_builder_add(&b, OP_Halt, 0, VM_OE_IGNORE, 0);
  vm_builder_resolve(&b, l_cont);
  vm_builder_add(&b, OP_Integer, 99, r + 1, 0);
  vm_builder_add(&b, OP_Ne, r + 1, l_ins, r);
  vm_builder_add_text(&b, OP_Halt, SHALE_CONSTRAINT_TRIGGER, VM_OE_ABORT, 0, "boom", -1);
  vm_builder_resolve(&b, l_ins);
  vm_builder_add(&b, OP_Integer, 10, r + 1, 0);
  vm_builder_add(&b, OP_Multiply, r + 1, r, r + 2);
  vm_builder_add(&b, OP_NewRowid, c, r + 3, 0);
  vm_builder_add(&b, OP_MakeRecord, r + 2, 1, r + 4);
  vm_builder_add(&b, OP_Insert, c, r + 4, r + 3);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  vm_builder_finish(&b, &p);
  return p;
}

TEST(vm_trigger_subprograms) {
  const char *path = test_path("trig.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db, "CREATE TABLE t(a); CREATE TABLE log(x);") == SQLITE_OK);
  uint32_t troot = root_of(db, "t"), lroot = root_of(db, "log");
  sqlite3_close(db);
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, "INSERT INTO t SELECT value FROM generate_series(?1, ?2)");
  int r = vm_builder_regs(&b, 5), c = vm_builder_cursor(&b);
  int l_skip = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, c, (int)troot, 0, 1);
  vm_builder_add(&b, OP_Variable, 1, r, 0);
  vm_builder_add(&b, OP_Variable, 2, r + 1, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add_program(&b, OP_Program, r, l_skip, 0, build_trigger(lroot));
  vm_builder_add(&b, OP_NewRowid, c, r + 2, 0);
  vm_builder_add(&b, OP_MakeRecord, r, 1, r + 3);
  vm_builder_add(&b, OP_Insert, c, r + 3, r + 2);
  vm_builder_resolve(&b, l_skip);
  vm_builder_add(&b, OP_AddImm, r, 1, 0);
  vm_builder_add(&b, OP_Le, r + 1, loop, r);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT | VM_STMT_JOURNAL, &vm));
  vm_bind_int(vm, 1, 1);
  vm_bind_int(vm, 2, 5);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  vm_bind_int(vm, 1, 97);
  vm_bind_int(vm, 2, 100);
  CHECK_RC(vm_step(vm), SHALE_CONSTRAINT_TRIGGER);
  CHECK_STR(vm_errmsg(vm), "boom");
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_NONE);
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
  db = tsql_open(path);
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db,
                           "SELECT (SELECT group_concat(a) FROM t), (SELECT group_concat(x) "
                           "FROM log)",
                           -1, &st, NULL) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "1,2,4,5");
  CHECK_STR((const char *)sqlite3_column_text(st, 1), "10,20,40,50");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* Column affinities: rows written through MakeRecord with the affinity
 * string "DEBCA" (INTEGER REAL TEXT NUMERIC BLOB) read back in sqlite3
 * exactly as the rows sqlite3 itself stored from the same values; reading
 * them with Column + RealAffinity gives sqlite3's values too. */
TEST(vm_affinity_records_match_sqlite) {
  const char *path = test_path("aff.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE ty(i INTEGER, r REAL, t TEXT, n NUMERIC, b BLOB);"
                  "CREATE TABLE ref(i INTEGER, r REAL, t TEXT, n NUMERIC, b BLOB);") == SQLITE_OK);
  uint32_t root = root_of(db, "ty");
  static const char *const texts[] = {"12", "12.5", "abc",  " 7 ",     "1e3", "9223372036854775808",
                                      "-0", "2.0",  "0x10", "1.5e400", ""};
  static const double reals[] = {2.0, 2.5, 1e20, -0.0, 140737488355328.0, 9.5e18};
  static const int64_t ints[] = {0, -1, 42, INT64_MAX, INT64_MIN, 140737488355328LL};
  int nval = 1 + 11 + 6 + 6 + 1;
  sqlite3_stmt *ins;
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO ref VALUES(?1, ?1, ?1, ?1, ?1)", -1, &ins, NULL) ==
        SQLITE_OK);
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 8), c = vm_builder_cursor(&b);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, c, (int)root, 0, 5);
  for (int k = 0; k < 5; k++) vm_builder_add(&b, OP_Variable, 1, r + k, 0);
  vm_builder_add_text(&b, OP_MakeRecord, r, 5, r + 5, "DEBCA", 5);
  vm_builder_add(&b, OP_NewRowid, c, r + 6, 0);
  vm_builder_add(&b, OP_Insert, c, r + 5, r + 6);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  for (int k = 0; k < nval; k++) {
    sqlite3_reset(ins);
    if (k == 0) {
      vm_bind_null(vm, 1);
      sqlite3_bind_null(ins, 1);
    } else if (k <= 11) {
      vm_bind_text(vm, 1, texts[k - 1], -1);
      sqlite3_bind_text(ins, 1, texts[k - 1], -1, SQLITE_STATIC);
    } else if (k <= 17) {
      vm_bind_real(vm, 1, reals[k - 12]);
      sqlite3_bind_double(ins, 1, reals[k - 12]);
    } else if (k <= 23) {
      vm_bind_int(vm, 1, ints[k - 18]);
      sqlite3_bind_int64(ins, 1, ints[k - 18]);
    } else {
      vm_bind_blob(vm, 1, "7", 1);
      sqlite3_bind_blob(ins, 1, "7", 1, SQLITE_STATIC);
    }
    CHECK(sqlite3_step(ins) == SQLITE_DONE);
    CHECK_RC(vm_step(vm), SHALE_DONE);
  }
  sqlite3_finalize(ins);
  vm_free(vm);
  vm_program_free(p);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM ty"), nval);
  int ndiff = (int)tsql_int(db,
                            "SELECT count(*) FROM ty JOIN ref ON ty.rowid = ref.rowid WHERE "
                            "quote(ty.i) IS NOT quote(ref.i) OR quote(ty.r) IS NOT quote(ref.r)"
                            " OR quote(ty.t) IS NOT quote(ref.t) OR quote(ty.n) IS NOT "
                            "quote(ref.n) OR quote(ty.b) IS NOT quote(ref.b)");
  CHECK_EQ(ndiff, 0);
  if (ndiff) {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT rowid, quote(i),quote(r),quote(t),quote(n) FROM ty", -1, &st,
                       NULL);
    while (sqlite3_step(st) == SQLITE_ROW)
      fprintf(stderr, "  ty %s %s %s %s %s\n", sqlite3_column_text(st, 0),
              sqlite3_column_text(st, 1), sqlite3_column_text(st, 2), sqlite3_column_text(st, 3),
              sqlite3_column_text(st, 4));
    sqlite3_finalize(st);
  }

  /* read ref (written by sqlite3) back with Column (+ RealAffinity on r) */
  uint32_t rroot = root_of(db, "ref");
  vm_builder_init(&b, NULL);
  r = vm_builder_regs(&b, 5);
  c = vm_builder_cursor(&b);
  int l_end = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 0, 0);
  vm_builder_add_i4(&b, OP_OpenRead, c, (int)rroot, 0, 5);
  vm_builder_add(&b, OP_Rewind, c, l_end, 0);
  int loop = vm_builder_addr(&b);
  for (int k = 0; k < 5; k++) vm_builder_add(&b, OP_Column, c, k, r + k);
  vm_builder_add(&b, OP_RealAffinity, r + 1, 0, 0);
  vm_builder_add(&b, OP_ResultRow, r, 5, 0);
  vm_builder_add(&b, OP_Next, c, loop, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, "SELECT i, r, t, n, b FROM ref", -1, &st, NULL) == SQLITE_OK);
  CHECK_EQ(compare_rows(vm, st, 5), nval);
  sqlite3_finalize(st);
  vm_free(vm);
  vm_program_free(p);

  /* Comparisons of each typed column with a parameter: the column's
   * affinity goes in p5 (none for BLOB), as SQLite's rule gives. */
  static const char *const opsql[6] = {"=", "<>", "<", "<=", ">", ">="};
  static const int opcode[6] = {OP_Eq, OP_Ne, OP_Lt, OP_Le, OP_Gt, OP_Ge};
  static const char cols[5] = {'i', 'r', 't', 'n', 'b'};
  static const char affs[5] = {AFF_INTEGER, AFF_REAL, AFF_TEXT, AFF_NUMERIC, 0};
  int ncmp = 0;
  for (int k = 0; k < 5; k++) {
    for (int o = 0; o < 6; o++) {
      vm_builder_init(&b, NULL);
      r = vm_builder_regs(&b, 4);
      c = vm_builder_cursor(&b);
      l_end = vm_builder_label(&b);
      vm_builder_add(&b, OP_Transaction, 0, 0, 0);
      vm_builder_add_i4(&b, OP_OpenRead, c, (int)rroot, 0, 5);
      vm_builder_add(&b, OP_Variable, 1, r + 1, 0);
      vm_builder_add(&b, OP_Rewind, c, l_end, 0);
      loop = vm_builder_addr(&b);
      vm_builder_add(&b, OP_Column, c, k, r);
      if (k == 1) vm_builder_add(&b, OP_RealAffinity, r, 0, 0);
      int a = vm_builder_add(&b, opcode[o], r + 1, r + 2, r);
      vm_builder_set_p5(&b, a, VM_STOREP2 | (affs[k] ? VM_CMP_AFF(affs[k]) : 0));
      vm_builder_add(&b, OP_ResultRow, r + 2, 1, 0);
      vm_builder_add(&b, OP_Next, c, loop, 0);
      vm_builder_resolve(&b, l_end);
      vm_builder_add(&b, OP_Halt, 0, 0, 0);
      CHECK_OK(vm_builder_finish(&b, &p));
      CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
      char sql[100];
      snprintf(sql, sizeof sql, "SELECT %c %s ?1 FROM ref", cols[k], opsql[o]);
      CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
      for (int x = 0; x < nval; x++) {
        sqlite3_reset(st);
        if (x == 0) {
          vm_bind_null(vm, 1);
          sqlite3_bind_null(st, 1);
        } else if (x <= 11) {
          vm_bind_text(vm, 1, texts[x - 1], -1);
          sqlite3_bind_text(st, 1, texts[x - 1], -1, SQLITE_STATIC);
        } else if (x <= 17) {
          vm_bind_real(vm, 1, reals[x - 12]);
          sqlite3_bind_double(st, 1, reals[x - 12]);
        } else if (x <= 23) {
          vm_bind_int(vm, 1, ints[x - 18]);
          sqlite3_bind_int64(st, 1, ints[x - 18]);
        } else {
          vm_bind_blob(vm, 1, "7", 1);
          sqlite3_bind_blob(st, 1, "7", 1, SQLITE_STATIC);
        }
        int before = test_failures_guard();
        CHECK_EQ(compare_rows(vm, st, 1), nval);
        if (test_failures_guard() != before) fprintf(stderr, "  in: %s with value #%d\n", sql, x);
        ncmp += nval;
      }
      sqlite3_finalize(st);
      vm_free(vm);
      vm_program_free(p);
    }
  }
  CHECK_EQ(ncmp, 5 * 6 * nval * nval);
  btree_close(bt);
  sqlite3_close(db);
}

/* NullRow, Last/Prev, Sequence, RowData into a pseudo cursor, SetCookie and
 * ReadCookie, Clear and Destroy (sqlite3 checks the file afterwards). */
TEST(vm_cursor_misc_ops) {
  const char *path = test_path("misc.db");
  sqlite3 *db = tsql_open(path);
  CHECK(tsql_exec(db,
                  "CREATE TABLE m(a, b); INSERT INTO m VALUES(1,'x'),(2,'y'),(3,'z');"
                  "CREATE TABLE gone(x); INSERT INTO gone VALUES(1);") == SQLITE_OK);
  uint32_t root = root_of(db, "m"), groot = root_of(db, "gone");
  sqlite3_close(db);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  VmBuilder b;
  VmProgram *p;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 8), c = vm_builder_cursor(&b), cp = vm_builder_cursor(&b);
  int l_end = vm_builder_label(&b);
  vm_builder_add(&b, OP_Transaction, 0, 1, 0);
  vm_builder_add_i4(&b, OP_OpenWrite, c, (int)root, 0, 2);
  vm_builder_add(&b, OP_OpenPseudo, cp, r + 5, 2);
  vm_builder_add(&b, OP_Last, c, l_end, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_RowData, c, r + 5, 0);
  vm_builder_add(&b, OP_Column, cp, 1, r);
  vm_builder_add(&b, OP_Sequence, c, r + 1, 0);
  vm_builder_add(&b, OP_ResultRow, r, 2, 0); /* z 0, y 1, x 2 */
  vm_builder_add(&b, OP_Prev, c, loop, 0);
  vm_builder_resolve(&b, l_end);
  vm_builder_add(&b, OP_NullRow, c, 0, 0);
  vm_builder_add(&b, OP_Column, c, 0, r);
  vm_builder_add(&b, OP_Rowid, c, r + 1, 0);
  vm_builder_add(&b, OP_ResultRow, r, 2, 0); /* NULL NULL */
  vm_builder_add(&b, OP_Close, c, 0, 0);
  vm_builder_add(&b, OP_SetCookie, 0, BTREE_META_USER_VERSION, 77);
  vm_builder_add(&b, OP_ReadCookie, 0, r + 2, BTREE_META_USER_VERSION);
  vm_builder_add(&b, OP_Clear, (int)root, 0, 1);
  vm_builder_add(&b, OP_ResultRow, r + 2, 1, 0); /* 77 */
  vm_builder_add(&b, OP_Destroy, (int)groot, 0, 0);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  Vm *vm;
  CHECK_OK(vm_new(p, bt, VM_AUTOCOMMIT, &vm));
  static const char want[] = "zyx";
  for (int i = 0; i < 3; i++) {
    CHECK_RC(vm_step(vm), SHALE_ROW);
    CHECK(vm_column(vm, 0)->n == 1 && vm_column(vm, 0)->z[0] == want[i]);
    CHECK_EQ(vm_column(vm, 1)->i, i);
  }
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->type, SHALE_NULL);
  CHECK_EQ(vm_column(vm, 1)->type, SHALE_NULL);
  CHECK_RC(vm_step(vm), SHALE_ROW);
  CHECK_EQ(vm_column(vm, 0)->i, 77);
  CHECK_RC(vm_step(vm), SHALE_DONE);
  CHECK_EQ(vm_changes(vm), 3);
  vm_free(vm);
  vm_program_free(p);
  btree_close(bt);
  db = tsql_open(path);
  CHECK_EQ(tsql_int(db, "PRAGMA user_version"), 77);
  CHECK_EQ(tsql_int(db, "SELECT count(*) FROM m"), 0);
  CHECK(tsql_exec(db,
                  "PRAGMA writable_schema=ON; DELETE FROM sqlite_schema WHERE name='gone';"
                  "PRAGMA writable_schema=OFF;") == SQLITE_OK);
  sqlite3_close(db);
  char msg[300];
  CHECK(tsql_integrity(path, msg, sizeof msg));
}

/* Out of memory at every allocation of a program that sorts with spills
 * and fills an ephemeral index: each run fails with SHALE_NOMEM or returns
 * every row in order; nothing leaks. */
TEST(vm_oom_sorter_and_ephemeral) {
  static const Collation *colls[1] = {NULL};
  KeyInfo ki = {1, colls, NULL, 0};
  VmBuilder b;
  VmProgram *p = NULL;
  vm_builder_init(&b, NULL);
  int r = vm_builder_regs(&b, 8), cs = vm_builder_cursor(&b), ce = vm_builder_cursor(&b);
  int cp = vm_builder_cursor(&b), l_end = vm_builder_label(&b);
  vm_builder_add_p4(&b, OP_SorterOpen, cs, 1, 0, P4_KEYINFO, &ki);
  vm_builder_add_p4(&b, OP_OpenEphemeral, ce, 1, 0, P4_KEYINFO, &ki);
  vm_builder_add(&b, OP_Integer, 200, r, 0);
  vm_builder_add(&b, OP_Integer, 37, r + 1, 0);
  vm_builder_add(&b, OP_Integer, 1009, r + 2, 0);
  int loop = vm_builder_addr(&b);
  vm_builder_add(&b, OP_Multiply, r + 1, r, r + 3);
  vm_builder_add(&b, OP_Remainder, r + 2, r + 3, r + 3);
  vm_builder_add(&b, OP_MakeRecord, r + 3, 1, r + 4);
  vm_builder_add(&b, OP_SorterInsert, cs, r + 4, 0);
  vm_builder_add(&b, OP_IdxInsert, ce, r + 4, 0);
  vm_builder_add(&b, OP_DecrJumpZero, r, l_end, 0);
  vm_builder_add(&b, OP_Goto, 0, loop, 0);
  vm_builder_resolve(&b, l_end);
  int l_done = vm_builder_label(&b);
  vm_builder_add(&b, OP_OpenPseudo, cp, r + 5, 1);
  vm_builder_add(&b, OP_SorterSort, cs, l_done, 0);
  int out = vm_builder_addr(&b);
  vm_builder_add(&b, OP_SorterData, cs, r + 5, cp);
  vm_builder_add(&b, OP_Column, cp, 0, r + 6);
  vm_builder_add(&b, OP_ResultRow, r + 6, 1, 0);
  vm_builder_add(&b, OP_SorterNext, cs, out, 0);
  vm_builder_resolve(&b, l_done);
  vm_builder_add(&b, OP_Halt, 0, 0, 0);
  CHECK_OK(vm_builder_finish(&b, &p));
  int complete = 0;
  long n;
  for (n = 1; n < 2000; n++) {
    Vm *vm = NULL;
    util_fault_alloc(n, 0);
    int rc = vm_new(p, NULL, 0, &vm), rows = 0, sorted = 1;
    int64_t last = -1;
    if (rc == SHALE_OK) {
      vm_set_sorter_budget(vm, 64);
      while ((rc = vm_step(vm)) == SHALE_ROW) {
        if (vm_column(vm, 0)->i < last) sorted = 0;
        last = vm_column(vm, 0)->i;
        rows++;
      }
    }
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (rc == SHALE_DONE) {
      CHECK_EQ(rows, 200);
      CHECK(sorted);
      complete++;
    } else if (rc != SHALE_NOMEM) {
      test_fail(__FILE__, __LINE__, "n=%ld: rc %d", n, rc);
    }
    vm_free(vm);
    if (hits == 0) break;
  }
  util_fault_alloc(0, 0);
  CHECK(complete >= 1);
  CHECK(n > 20); /* the spill, the temp file and the ephemeral tree all allocate */
  vm_program_free(p);
}
