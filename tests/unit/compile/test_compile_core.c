/*
 * test_compile_core.c -- compile_sql itself (src/compile/compile.c): statement
 * kinds and flags, PRAGMA requests, parameter names and limits, the program
 * shape of compile.h invariant 4, transaction-control programs, the Parse
 * helpers (errors, KeyInfos, covers, EXPLAIN QUERY PLAN rows), and constant
 * hoisting.
 *
 * Invariants:
 *  1. Nothing here needs a database: statements that would read tables are
 *     not compiled; transaction control runs on a Vm with stub hooks.
 */
#include "expr_harness.h"

static CompileEnv env_make(FuncRegistry *fr) {
  CompileEnv env;
  memset(&env, 0, sizeof env);
  env.funcs = fr;
  env.max_vars = 32766;
  return env;
}

TEST(compile_empty_and_parse_error) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  CompiledStmt cs;
  const char *tail = NULL;
  char *err = NULL;
  const char *sql = "  ; -- nothing";
  CHECK_OK(compile_sql(&env, sql, -1, &cs, &tail, &err));
  CHECK_EQ(cs.kind, -1);
  CHECK(cs.prog == NULL);
  CHECK(tail == sql + strlen(sql));
  compile_stmt_free(&cs);
  CHECK_RC(compile_sql(&env, "SELEC 1", -1, &cs, &tail, &err), SHALE_ERROR);
  CHECK_STR(err, "near \"SELEC\": syntax error");
  shale_free(err);
  compile_stmt_free(&cs); /* no-op on the emptied output */
  compile_stmt_free(&cs);
  func_registry_free(&fr);
}

TEST(compile_pragma_request) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  CompiledStmt cs;
  char *err = NULL;
  CHECK_OK(compile_sql(&env, "PRAGMA main.cache_size = -5", -1, &cs, NULL, &err));
  CHECK_EQ(cs.kind, SQL_STMT_PRAGMA);
  CHECK(cs.prog == NULL);
  CHECK_STR(cs.pragma.schema, "main");
  CHECK_STR(cs.pragma.name, "cache_size");
  CHECK_STR(cs.pragma.value, "-5");
  CHECK_EQ(cs.pragma.call, 0);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "PRAGMA table_info('t1')", -1, &cs, NULL, &err));
  CHECK(cs.pragma.schema == NULL);
  CHECK_STR(cs.pragma.value, "t1");
  CHECK_EQ(cs.pragma.call, 1);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "PRAGMA journal_mode=wal", -1, &cs, NULL, &err));
  CHECK_STR(cs.pragma.value, "wal");
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "PRAGMA foreign_keys", -1, &cs, NULL, &err));
  CHECK(cs.pragma.value == NULL);
  compile_stmt_free(&cs);
  func_registry_free(&fr);
}

/* Find the first op of a kind; -1 if none. */
static int find_op(const VmProgram *p, int op) {
  for (int i = 0; i < p->nop; i++)
    if (p->ops[i].op == op) return i;
  return -1;
}

TEST(compile_txn_control) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  CompiledStmt cs;
  char *err = NULL;
  static const struct {
    const char *sql;
    int op, p1, p2;
  } cases[] = {
      {"BEGIN", OP_AutoCommit, 0, 0},
      {"BEGIN DEFERRED TRANSACTION", OP_AutoCommit, 0, 0},
      {"COMMIT", OP_AutoCommit, 1, 0},
      {"END TRANSACTION", OP_AutoCommit, 1, 0},
      {"ROLLBACK", OP_AutoCommit, 1, 1},
      {"SAVEPOINT sp1", OP_Savepoint, 0, 0},
      {"RELEASE sp1", OP_Savepoint, 1, 0},
      {"RELEASE SAVEPOINT sp1", OP_Savepoint, 1, 0},
      {"ROLLBACK TO sp1", OP_Savepoint, 2, 0},
      {"ROLLBACK TRANSACTION TO SAVEPOINT sp1", OP_Savepoint, 2, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_OK(compile_sql(&env, cases[i].sql, -1, &cs, NULL, &err));
    CHECK(cs.is_txn_ctl);
    CHECK(cs.readonly);
    CHECK(cs.prog != NULL);
    if (!cs.prog) continue;
    CHECK_EQ(cs.prog->ops[0].op, OP_Init);
    int a = find_op(cs.prog, cases[i].op);
    CHECK(a > 0);
    if (a > 0) {
      CHECK_EQ(cs.prog->ops[a].p1, cases[i].p1);
      CHECK_EQ(cs.prog->ops[a].p2, cases[i].p2);
      if (cases[i].op == OP_Savepoint) CHECK_STR(cs.prog->ops[a].p4.z, "sp1");
    }
    CHECK(find_op(cs.prog, OP_Transaction) < 0);
    compile_stmt_free(&cs);
  }
  CHECK_OK(compile_sql(&env, "BEGIN IMMEDIATE", -1, &cs, NULL, &err));
  CHECK(!cs.readonly); /* as sqlite3_stmt_readonly */
  int t = find_op(cs.prog, OP_Transaction), ac = find_op(cs.prog, OP_AutoCommit);
  CHECK(t > 0 && ac > t);
  CHECK_EQ(cs.prog->ops[t].p2, 1);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "BEGIN EXCLUSIVE", -1, &cs, NULL, &err));
  t = find_op(cs.prog, OP_Transaction);
  CHECK(t > 0);
  CHECK_EQ(cs.prog->ops[t].p2, 2);
  compile_stmt_free(&cs);
  func_registry_free(&fr);
}

/* Stub connection hooks that record what the program asked for. */
typedef struct HookLog {
  char log[256];
} HookLog;

static int hk_autocommit(void *ctx, int on, int rollback, char **errmsg) {
  HookLog *h = ctx;
  size_t n = strlen(h->log);
  snprintf(h->log + n, sizeof h->log - n, "ac(%d,%d)", on, rollback);
  return SHALE_OK;
}
static int hk_savepoint(void *ctx, int op, const char *name, char **errmsg) {
  HookLog *h = ctx;
  size_t n = strlen(h->log);
  snprintf(h->log + n, sizeof h->log - n, "sp(%d,%s)", op, name);
  if (op == 1 && strcmp(name, "nope") == 0) {
    *errmsg = util_strdup("no such savepoint: nope");
    return SHALE_ERROR;
  }
  return SHALE_OK;
}

TEST(compile_txn_runs_hooks) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  HookLog log;
  memset(&log, 0, sizeof log);
  VmConnHooks hooks;
  memset(&hooks, 0, sizeof hooks);
  hooks.ctx = &log;
  hooks.autocommit = hk_autocommit;
  hooks.savepoint = hk_savepoint;
  const char *script[] = {"BEGIN",     "SAVEPOINT a", "ROLLBACK TO a",
                          "RELEASE a", "COMMIT",      "ROLLBACK"};
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
    CompiledStmt cs;
    char *err = NULL;
    CHECK_OK(compile_sql(&env, script[i], -1, &cs, NULL, &err));
    Vm *vm = NULL;
    CHECK_OK(vm_new(cs.prog, NULL, 0, &vm));
    vm_set_hooks(vm, &hooks);
    CHECK_RC(vm_step(vm), SHALE_DONE);
    vm_free(vm);
    compile_stmt_free(&cs);
  }
  CHECK_STR(log.log, "ac(0,0)sp(0,a)sp(2,a)sp(1,a)ac(1,0)ac(1,1)");
  CompiledStmt cs;
  char *err = NULL;
  CHECK_OK(compile_sql(&env, "RELEASE nope", -1, &cs, NULL, &err));
  Vm *vm = NULL;
  CHECK_OK(vm_new(cs.prog, NULL, 0, &vm));
  vm_set_hooks(vm, &hooks);
  CHECK_RC(vm_step(vm), SHALE_ERROR);
  CHECK_STR(vm_errmsg(vm), "no such savepoint: nope");
  vm_free(vm);
  compile_stmt_free(&cs);
  func_registry_free(&fr);
}

TEST(compile_variables) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  CompiledStmt cs;
  char *err = NULL;
  CHECK_OK(compile_sql(&env, "SAVEPOINT x", -1, &cs, NULL, &err));
  CHECK_EQ(cs.nvar, 0);
  CHECK(cs.var_names == NULL);
  compile_stmt_free(&cs);
  /* variables need a statement with expressions: ROLLBACK has none, so use
   * the limit check, which runs before code generation */
  env.max_vars = 2;
  CHECK_RC(compile_sql(&env, "SELECT ?, ?, ?", -1, &cs, NULL, &err), SHALE_ERROR);
  CHECK_STR(err, "too many SQL variables");
  shale_free(err);
  CHECK_RC(compile_sql(&env, "SELECT ?5", -1, &cs, NULL, &err), SHALE_ERROR);
  CHECK_STR(err, "variable number must be between ?1 and ?2");
  shale_free(err);
  func_registry_free(&fr);
}

TEST(compile_explain_flag_and_vtab) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  CompileEnv env = env_make(&fr);
  CompiledStmt cs;
  char *err = NULL;
  CHECK_OK(compile_sql(&env, "EXPLAIN BEGIN", -1, &cs, NULL, &err));
  CHECK_EQ(cs.explain, 1);
  CHECK(cs.prog != NULL);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "EXPLAIN QUERY PLAN COMMIT", -1, &cs, NULL, &err));
  CHECK_EQ(cs.explain, 2);
  CHECK_EQ(cs.neqp, 0);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "ANALYZE", -1, &cs, NULL, &err));
  CHECK(!cs.readonly);
  compile_stmt_free(&cs);
  CHECK_OK(compile_sql(&env, "VACUUM", -1, &cs, NULL, &err));
  CHECK(!cs.readonly);
  compile_stmt_free(&cs);
  /* as SQLite: an unknown module is reported when the statement runs
   * ("no such module: fts9"), not at prepare */
  Schema *sch = schema_new();
  CHECK(sch != NULL);
  env.schema = sch;
  CHECK_OK(compile_sql(&env, "CREATE VIRTUAL TABLE v USING fts9(a)", -1, &cs, NULL, &err));
  CHECK(!cs.readonly);
  compile_stmt_free(&cs);
  schema_free(sch);
  func_registry_free(&fr);
}

/* The Parse helpers on a bare Parse. */
TEST(compile_parse_helpers) {
  Parse p;
  memset(&p, 0, sizeof p);
  util_arena_init(&p.arena, 0);
  CHECK_OK(vm_builder_init(&p.b, NULL));
  compile_parse_error(&p, "first %d", 1);
  compile_parse_error(&p, "second");
  CHECK_EQ(p.rc, SHALE_ERROR);
  CHECK_STR(p.errmsg, "first 1");
  shale_free(p.errmsg);
  p.errmsg = NULL;
  p.rc = 0;
  compile_parse_error_code(&p, SHALE_CONSTRAINT, "c");
  CHECK_EQ(p.rc, SHALE_CONSTRAINT);
  shale_free(p.errmsg);
  p.errmsg = NULL;
  p.rc = 0;
  char *z = compile_parse_strdup(&p, "abc");
  CHECK_STR(z, "abc");
  int *zero = compile_parse_alloc(&p, 64);
  CHECK(zero && zero[0] == 0 && zero[15] == 0);
  /* covers */
  Index ix;
  memset(&ix, 0, sizeof ix);
  compile_parse_set_cover(&p, 3, &ix, 7);
  CHECK(compile_parse_find_cover(&p, 3) && compile_parse_find_cover(&p, 3)->idx_cur == 7);
  CHECK(compile_parse_find_cover(&p, 4) == NULL);
  compile_parse_set_cover(&p, 3, NULL, 0);
  CHECK(compile_parse_find_cover(&p, 3) == NULL);
  /* EQP: rows only under EXPLAIN QUERY PLAN, ids always */
  p.eqp_parent = 0;
  int id0 = compile_parse_eqp(&p, "SCAN %s", "t");
  CHECK_EQ(p.neqp, 0);
  p.is_explain = 2;
  int id = compile_parse_eqp(&p, "SCAN %s", "t");
  CHECK(id != id0);
  p.eqp_parent = id;
  int id2 = compile_parse_eqp(&p, "SEARCH u USING INDEX i (a=?)");
  CHECK_EQ(p.neqp, 2);
  CHECK_STR(p.eqp[0].detail, "SCAN t");
  CHECK_EQ(p.eqp[1].parent, id);
  CHECK(id2 != id);
  /* KeyInfo in the program arena */
  const Collation *colls[2] = {NULL, &record_coll_nocase};
  uint8_t desc[2] = {0, 1};
  KeyInfo *ki = compile_parse_keyinfo(&p, 2, colls, desc);
  CHECK(ki && ki->ncol == 2 && ki->coll[1] == &record_coll_nocase && ki->desc[1] == 1);
  IndexColumn ic[2] = {{0, NULL, "NOCASE", 1}, {-1, NULL, "BINARY", 0}};
  ix.ncol = 2;
  ix.nkey = 1;
  ix.cols = ic;
  ix.root = 5;
  KeyInfo *k2 = compile_parse_index_keyinfo(&p, &ix);
  CHECK(k2 && k2->coll[0] == &record_coll_nocase && k2->coll[1] == NULL && k2->desc[0] == 1);
  compile_parse_open_index(&p, 0, &ix, 0);
  CHECK(p.need_read && !p.need_write);
  CHECK_EQ(p.b.prog->ops[0].op, OP_OpenRead);
  CHECK_EQ(p.b.prog->ops[0].p2, 5);
  CHECK(p.b.prog->ops[0].p4.ki == k2 || p.b.prog->ops[0].p4type == P4_KEYINFO);
  ic[0].coll = "nosuch";
  CHECK(compile_parse_index_keyinfo(&p, &ix) == NULL);
  CHECK_STR(p.errmsg, "no such collation sequence: nosuch");
  shale_free(p.errmsg);
  vm_builder_abort(&p.b);
  util_arena_free(&p.arena);
}

/* Constant hoisting: the hoisted code moves to the epilogue (after Halt)
 * and the program still computes the same value. */
TEST(compile_const_hoisting) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  Parse p;
  CompileEnv env = env_make(&fr);
  memset(&p, 0, sizeof p);
  p.env = &env;
  util_arena_init(&p.arena, 0);
  const char *sql = "SELECT upper('abc') || 'x'";
  SqlStmt *s = NULL;
  char *err = NULL;
  CHECK_OK(sql_parse(&p.arena, sql, -1, &s, NULL, &err));
  SqlExpr *e = s->u.select->cols->a[0].expr;
  e->a->func = func_find(&fr, "upper", 1);
  p.sql = sql;
  CHECK_OK(vm_builder_init(&p.b, sql));
  p.once_label = emit_label(&p);
  emit(&p, OP_Init, 0, p.once_label, 0);
  int body = emit_addr(&p);
  int r = compile_expr_code_once(&p, e);
  emit(&p, OP_ResultRow, r, 1, 0);
  emit(&p, OP_Halt, 0, 0, 0);
  CHECK(p.nconst_ops > 0);
  emit_resolve(&p, p.once_label);
  for (int i = 0; i < p.nconst_ops; i++) {
    int a = emit(&p, OP_Noop, 0, 0, 0);
    p.b.prog->ops[a] = p.const_ops[i];
  }
  emit(&p, OP_Goto, 0, body, 0);
  VmProgram *prog = NULL;
  CHECK_OK(vm_builder_finish(&p.b, &prog));
  CHECK_EQ(prog->ops[1].op, OP_ResultRow);
  Vm *vm = NULL;
  CHECK_OK(vm_new(prog, NULL, 0, &vm));
  for (int run = 0; run < 2; run++) {
    CHECK_RC(vm_step(vm), SHALE_ROW);
    const ShValue *v = vm_column(vm, 0);
    CHECK(v->type == SHALE_TEXT && v->n == 4 && memcmp(v->z, "ABCx", 4) == 0);
    CHECK_RC(vm_step(vm), SHALE_DONE);
    vm_reset(vm);
  }
  vm_free(vm);
  vm_program_free(prog);
  util_arena_free(&p.arena);
  func_registry_free(&fr);
}

/* Error messages for bad expressions, against the reference. */
TEST(compile_expr_errors) {
  FuncRegistry fr;
  CHECK_OK(func_registry_init(&fr));
  sqlite3 *db = NULL;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  static const char *const bad[] = {
      "nosuch(1)",
      "abs(1, 2)",
      "(1,2)",
      "(1,2) = (1,2,3)",
      "1 = (1,2)",
      "-(1,2)",
      "(1,2) + 1",
      "'a' COLLATE nosuch",
      "0x10000000000000000",
      "-0x8000000000000000",
      "RAISE(IGNORE)",
      "RAISE(ABORT, 'x')",
      "1 IN ((1,2))",
      "(1,2) IN (1,2)",
      "(1,2) IN ((1,2),(3))",
      "'a' MATCH 'b'",
      "'a' REGEXP 'b'",
      "CASE (1,2) WHEN 1 THEN 1 END",
      "abs(-9223372036854775808)",
      "likelihood(1, 2)",
      "likelihood(1, -0.5)",
      "likelihood(1, 'a')",
      "zeroblob(1e12)",
      "x",
      "'a' COLLATE nosuch",
      "'a' COLLATE nosuch = 'a'",
      "'a' = 'a' COLLATE nosuch",
      "'a' COLLATE nocase = 'A' COLLATE nosuch",
  };
  int nrep = 0;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expr_check(&fr, db, bad[i], &nrep);
  sqlite3_close(db);
  func_registry_free(&fr);
}
