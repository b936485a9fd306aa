/*
 * compile_ddl_index.c -- CREATE [UNIQUE] INDEX and REINDEX: the index tree,
 * its sqlite_schema row, and filling it from the table's rows.
 *
 * Owns: nothing beyond a call (scratch schemas freed before returning).
 *
 * Invariants:
 *  1. An index key is built as SQLite stores it: the declared key columns
 *     (table columns read as stored -- a REAL column's integer stays an
 *     integer -- or expression values), then the rowid (rowid tables) or the
 *     PRIMARY KEY columns the key lacks (WITHOUT ROWID); rows failing a
 *     partial index's WHERE get no entry.
 *  2. A UNIQUE index refuses a key whose declared columns (none NULL) equal
 *     an entry's already in it: "UNIQUE constraint failed: t.a, t.b", or
 *     "index 'i'" when a key column is an expression; the statement fails
 *     and leaves nothing behind (its transaction/savepoint is rolled back).
 *  3. Expressions are resolved and compiled from an AST in the Parse arena
 *     (the statement's own, or the stored CREATE INDEX text parsed again for
 *     REINDEX): the schema's ASTs are never annotated.
 *  4. The tree is filled by sorting, as SQLite does: every key goes into the
 *     sorter (which spills to temp files past its budget), then the sorted
 *     keys are bulk-loaded into the empty tree bottom-up, pages packed full
 *     (OpenWrite with VM_OPFLAG_BULK: btree_bulk_*, the loader VACUUM uses).
 *     Keys are distinct (the rowid or PRIMARY KEY ends each one), so they
 *     arrive in strictly increasing order; a UNIQUE index compares each key's
 *     declared columns with the previous key's (a NULL never conflicts).
 */
#include <string.h>

#include "compile_ddl_int.h"

/* The KeyInfo of the first n columns of the stored keys of idx (n =
 * idx->ncol: the whole key), owned by the program. */
static KeyInfo *index_keyinfo(Parse *p, const Index *idx, int n) {
  const Collation **coll = compile_parse_alloc(p, sizeof *coll * (size_t)(n + 1));
  uint8_t *desc = compile_parse_alloc(p, (size_t)n + 1);
  if (!coll || !desc) return NULL;
  for (int i = 0; i < n; i++) {
    const char *c = idx->cols[i].coll;
    coll[i] = c && util_stricmp(c, "BINARY") ? record_collation_find(c) : NULL;
    desc[i] = idx->cols[i].desc;
  }
  return compile_parse_keyinfo(p, n, coll, desc);
}

/* Read column col of tab at cursor cur into r[target] as stored. */
static void load_column(Parse *p, const Table *tab, int cur, int col, int target) {
  int before = emit_addr(p);
  compile_code_column(p, tab, cur, col, target);
  int after = emit_addr(p);
  /* a REAL column's integer goes back into the index as the integer */
  if (after > before && !p->b.rc) {
    VmOp *op = &p->b.prog->ops[after - 1];
    if (op->op == OP_RealAffinity && op->p1 == target) op->op = OP_Noop;
  }
}

/* "t.a, t.b" or "index 'i'" for a UNIQUE failure. */
static const char *unique_msg(Parse *p, const Index *idx) {
  const Table *t = idx->table;
  size_t room = 16 + strlen(idx->name);
  for (int i = 0; i < idx->nkey; i++) {
    if (idx->cols[i].col < 0) {
      char *m = util_mprintf("UNIQUE constraint failed: index '%s'", idx->name);
      if (!m) {
        compile_parse_nomem(p);
        return NULL;
      }
      char *z = compile_parse_strdup(p, m);
      shale_free(m);
      return z;
    }
    room += strlen(t->name) + strlen(t->cols[idx->cols[i].col].name) + 4;
  }
  char *z = compile_parse_alloc(p, room + 32);
  if (!z) return NULL;
  strcpy(z, "UNIQUE constraint failed: ");
  for (int i = 0; i < idx->nkey; i++) {
    if (i) strcat(z, ", ");
    strcat(z, t->name);
    strcat(z, ".");
    strcat(z, t->cols[idx->cols[i].col].name);
  }
  return z;
}

/* Populate index idx (built by compile_schema_index_from_create from an AST in the
 * Parse arena) whose tree root is in register root_reg: scan its table,
 * build each key (columns, expressions, partial WHERE), insert; UNIQUE
 * duplicates halt with "UNIQUE constraint failed: ...". */
static void ddl_fill_index(Parse *p, const Index *idx, int root_reg) {
  Table *tab = idx->table;
  if (parse_failed(p)) return;
  SrcList *src = compile_src_single(p, tab, NULL);
  if (!src || parse_failed(p)) return;
  int tcur = src->a[0].cursor;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  int has_expr = 0;
  for (int i = 0; i < idx->nkey; i++) has_expr |= idx->cols[i].col == INDEX_COL_EXPR;
  if (idx->where) {
    nc.flags = NC_IS_PARTIAL | NC_NO_SUBQUERY;
    nc.err_ctx = "partial index WHERE clauses";
    if (compile_resolve_expr(p, &nc, idx->where)) return;
  }
  if (has_expr) {
    nc.flags = NC_IS_INDEX | NC_NO_SUBQUERY;
    nc.err_ctx = "index expressions";
    for (int i = 0; i < idx->nkey; i++)
      if (idx->cols[i].col == INDEX_COL_EXPR && compile_resolve_expr(p, &nc, idx->cols[i].expr))
        return;
  }
  KeyInfo *ki = index_keyinfo(p, idx, idx->ncol);
  KeyInfo *uki = idx->unique ? index_keyinfo(p, idx, idx->nkey) : NULL;
  if (!ki || (idx->unique && !uki)) return;
  const char *umsg = idx->unique ? unique_msg(p, idx) : NULL;
  if (parse_failed(p)) return;

  /* Pass 1 (invariant 4): every row's key into the sorter. */
  compile_parse_open_table(p, tcur, tab, 0);
  int scur = emit_cursor(p), icur = emit_cursor(p);
  vm_builder_add_p4(&p->b, OP_SorterOpen, scur, idx->ncol, 0, P4_KEYINFO, ki);
  int key = emit_regs(p, idx->ncol + 1);
  int sorted = emit_label(p), next = emit_label(p), done = emit_label(p);
  emit(p, OP_Rewind, tcur, sorted, 0);
  int top = emit_addr(p);
  if (idx->where) compile_expr_if_false(p, idx->where, next, 1);
  for (int i = 0; i < idx->ncol; i++) {
    const IndexColumn *ic = &idx->cols[i];
    if (ic->col == INDEX_COL_ROWID)
      emit(p, OP_Rowid, tcur, key + i, 0);
    else if (ic->col == INDEX_COL_EXPR)
      compile_expr_code(p, ic->expr, key + i);
    else
      load_column(p, tab, tcur, ic->col, key + i);
  }
  int rec = key + idx->ncol;
  emit(p, OP_MakeRecord, key, idx->ncol, rec);
  emit(p, OP_SorterInsert, scur, rec, 0);
  emit_resolve(p, next);
  emit(p, OP_Next, tcur, top, 0);
  emit_resolve(p, sorted);
  emit(p, OP_Close, tcur, 0, 0);

  /* Pass 2: the sorted keys into the empty tree, bottom-up. */
  int a = vm_builder_add_p4(&p->b, OP_OpenWrite, icur, root_reg, p->idb, P4_KEYINFO, ki);
  vm_builder_set_p5(&p->b, a, VM_OPFLAG_P2ISREG | VM_OPFLAG_BULK);
  int pseudo = 0, prev = 0, have_prev = 0;
  if (idx->unique) {
    pseudo = emit_cursor(p);
    prev = emit_regs(p, idx->nkey);
    have_prev = emit_regs(p, 1);
    emit(p, OP_OpenPseudo, pseudo, rec, idx->ncol);
    emit(p, OP_Integer, 0, have_prev, 0);
  }
  emit(p, OP_SorterSort, scur, done, 0);
  int loop = emit_addr(p);
  emit(p, OP_SorterData, scur, rec, idx->unique ? pseudo : -1);
  if (idx->unique) {
    /* the declared columns against the previous key's: equal -> fail */
    int store = emit_label(p), dup = emit_label(p);
    for (int i = 0; i < idx->nkey; i++) emit(p, OP_Column, pseudo, i, key + i);
    for (int i = 0; i < idx->nkey; i++) emit(p, OP_IsNull, key + i, store, 0);
    emit(p, OP_IfNot, have_prev, store, 1);
    vm_builder_add_p4(&p->b, OP_Compare, key, prev, idx->nkey, P4_KEYINFO, uki);
    emit(p, OP_Jump, store, dup, store);
    emit_resolve(p, dup);
    vm_builder_add_text(&p->b, OP_Halt, SHALE_CONSTRAINT_UNIQUE, VM_OE_ABORT, 0, umsg, -1);
    emit_resolve(p, store);
    emit(p, OP_Copy, key, prev, idx->nkey - 1);
    emit(p, OP_Integer, 1, have_prev, 0);
  }
  emit(p, OP_IdxInsert, icur, rec, 0);
  emit(p, OP_SorterNext, scur, loop, 0);
  emit_resolve(p, done);
  emit(p, OP_Close, icur, 0, 0);
  emit(p, OP_Close, scur, 0, 0);
  if (idx->unique) emit(p, OP_Close, pseudo, 0, 0);
}

/* ----------------------------------------------------------- CREATE INDEX */

/* SQLite's "table X may not be indexed / dropped" tables: sqlite_* except
 * the statistics tables. */
int compile_ddl_is_system_table(const Table *t) {
  return !util_strnicmp(t->name, "sqlite_", 7) && util_strnicmp(t->name + 7, "stat", 4) &&
         util_strnicmp(t->name + 7, "parameters", 10);
}

/* The name SQLite prints for a table in messages. */
const char *compile_ddl_table_name(const Table *t) {
  return t->is_schema ? "sqlite_master" : t->name;
}

int compile_ddl_create_index(Parse *p, const SqlStmt *s) {
  const SqlCreateIndex *ci = &s->u.create_index;
  if (compile_ddl_check_db(p, &ci->name)) return 1;
  Table *tab = schema_find_table(p->schema, ci->table);
  if (!tab) {
    if (schema_find_view(p->schema, ci->table))
      compile_parse_error(p, "views may not be indexed");
    else
      compile_parse_error(p, "no such table: %s.%s", compile_parse_db_name(p, p->idb), ci->table);
    return 1;
  }
  if (tab->is_schema || compile_ddl_is_system_table(tab)) {
    compile_parse_error(p, "table %s may not be indexed", compile_ddl_table_name(tab));
    return 1;
  }
  if (tab->vtab_module) {
    compile_parse_error(p, "virtual tables may not be indexed");
    return 1;
  }
  const char *name = ci->name.name;
  if (!util_strnicmp(name, "sqlite_", 7)) {
    compile_parse_error(p, "object name reserved for internal use: %s", name);
    return 1;
  }
  if (schema_find_table(p->schema, name) || schema_find_view(p->schema, name)) {
    compile_parse_error(p, "there is already a table named %s", name);
    return 1;
  }
  if (schema_find_index(p->schema, name)) {
    if (ci->if_not_exists) { /* no-op, not read-only (as SQLite) */
      compile_parse_need_read(p);
      p->schema_changed = 1;
      return 0;
    }
    compile_parse_error(p, "index %s already exists", name);
    return 1;
  }
  if (p->env && p->env->max_columns > 0 && ci->columns && ci->columns->n > p->env->max_columns) {
    compile_parse_error(p, "too many columns in index"); /* SQLITE_LIMIT_COLUMN */
    return 1;
  }
  const char *sql = compile_ddl_stored_sql(p, s, &ci->name, ci->unique ? "UNIQUE INDEX" : "INDEX",
                                           DDL_END_LOOKAHEAD);
  if (!sql) return 1;
  Schema *scratch = compile_ddl_scratch_with(p, tab);
  if (!scratch) return 1;
  Index *idx = NULL;
  char *msg = NULL;
  SchemaFuncs sf = {p->env ? p->env->funcs : NULL, p->env ? p->env->untrusted : 0};
  int rc = compile_schema_index_from_create_fn(scratch, s, sql, &sf, &idx, &msg);
  if (rc != SHALE_OK) {
    compile_ddl_build_error(p, rc, msg);
    schema_free(scratch);
    return 1;
  }
  if (p->env && p->env->auth) { /* as SQLite: READ of each key column, then REINDEX */
    const char *dbn = compile_parse_db_name(p, p->idb);
    for (int i = 0; i < idx->nkey && !parse_failed(p); i++)
      if (idx->cols[i].col >= 0 && idx->table)
        compile_parse_auth(p, AUTH_READ, idx->table->name, idx->table->cols[idx->cols[i].col].name,
                           dbn);
    compile_parse_auth(p, AUTH_REINDEX, idx->name, NULL, dbn);
    if (parse_failed(p)) {
      schema_free(scratch);
      return 1;
    }
  }
  compile_parse_need_write(p);
  int root = emit_regs(p, 1);
  emit(p, OP_CreateBtree, p->idb, root, BTREE_BLOBKEY);
  int cur = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, cur, "index", idx->name, tab->name, root, sql);
  emit(p, OP_Close, cur, 0, 0);
  ddl_fill_index(p, idx, root);
  compile_ddl_finish(p);
  schema_free(scratch);
  return parse_failed(p);
}

/* ---------------------------------------------------------------- REINDEX */

/* Empty idx's tree and fill it again. */
static void reindex_one(Parse *p, Index *idx) {
  Table *tab = idx->table;
  if (idx == tab->pk_index || !idx->root || parse_failed(p)) return;
  Index *fresh = idx;
  Schema *scratch = NULL;
  if (idx->sql) { /* expressions and WHERE from a fresh AST (invariant 3) */
    SqlStmt *st = compile_ddl_reparse(p, idx->sql);
    if (!st) return;
    scratch = compile_ddl_scratch_with(p, tab);
    if (!scratch) return;
    char *msg = NULL;
    int rc = compile_schema_index_from_create(scratch, st, idx->sql, &fresh, &msg);
    if (rc != SHALE_OK) {
      compile_ddl_build_error(p, rc, msg);
      schema_free(scratch);
      return;
    }
  }
  int r = emit_regs(p, 1);
  emit(p, OP_Clear, (int)idx->root, compile_parse_table_db(p, idx->table), 0);
  emit(p, OP_Integer, (int)idx->root, r, 0);
  ddl_fill_index(p, fresh, r);
  schema_free(scratch);
}

static int uses_collation(const Index *idx, const char *coll) {
  for (int i = 0; i < idx->nkey; i++)
    if (idx->cols[i].coll && !util_stricmp(idx->cols[i].coll, coll)) return 1;
  return 0;
}

/* Every index of the schema, or those using collation coll (NULL: all). */
static void reindex_all(Parse *p, const char *coll) {
  int pos = 0;
  Table *t;
  while ((t = schema_map_next(&p->schema->tables, &pos)) != NULL)
    for (Index *idx = t->indexes; idx; idx = idx->next)
      if (!coll || uses_collation(idx, coll)) reindex_one(p, idx);
}

int compile_ddl_reindex(Parse *p, const SqlStmt *s) {
  const SqlQualName *q = &s->u.analyze.name;
  if (s->u.analyze.has_name && compile_ddl_check_db(p, q)) return 1;
  compile_parse_need_write(p);
  if (!s->u.analyze.has_name) {
    reindex_all(p, NULL);
    return parse_failed(p);
  }
  if (!q->schema && record_collation_find(q->name)) {
    reindex_all(p, q->name);
    return parse_failed(p);
  }
  Table *t = schema_find_table(p->schema, q->name);
  if (t) {
    for (Index *idx = t->indexes; idx; idx = idx->next) reindex_one(p, idx);
    return parse_failed(p);
  }
  Index *idx = schema_find_index(p->schema, q->name);
  if (idx) {
    reindex_one(p, idx);
    return parse_failed(p);
  }
  compile_parse_error(p, "unable to identify the object to be reindexed");
  return 1;
}
