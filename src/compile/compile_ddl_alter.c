/*
 * compile_ddl_alter.c -- ALTER TABLE: ADD COLUMN, RENAME TO, RENAME COLUMN
 * and DROP COLUMN, by rewriting the CREATE texts in sqlite_schema as SQLite
 * does (the schema is then reloaded from the new texts).
 *
 * Owns: nothing beyond a call.
 *
 * Invariants:
 *  1. ADD COLUMN inserts ", <column definition as written>" where SQLite
 *     does: before the ',' that starts the table constraints, else before
 *     the ')' ending the column list. Existing rows are not touched: their
 *     short records read the new column's DEFAULT.
 *  2. RENAME TO writes the new name double-quoted ("%w" style) at every
 *     place a CREATE text names the table (its own CREATE TABLE, CREATE
 *     INDEX ... ON, REFERENCES of any table, FROM items, qualified column
 *     references, trigger targets), renames its automatic indexes and its
 *     sqlite_sequence row, and moves tbl_name of its indexes and triggers.
 *  3. The texts are rewritten at compile time (the schema the statement is
 *     compiled against is the one the Transaction cookie check guarantees).
 *  4. RENAME COLUMN edits only the tokens that name the column, found by
 *     name scope (ColRen): unqualified names resolve to the innermost FROM
 *     scope having such a column, qualified ones by table name or alias,
 *     NEW./OLD. in triggers on the table; column lists (INSERT, UPDATE OF,
 *     SET, FOREIGN KEY, REFERENCES t(...)) by their tokens. The new name is
 *     written bare when neither it (in the ALTER) nor the replaced token was
 *     quoted, else double-quoted, as SQLite.
 *  5. DROP COLUMN removes the text from the column to the next column, or
 *     for the last column from the ',' before it to the token after it; a
 *     dependant still naming the column fails at run time with "error in
 *     <kind> <name> after drop column: ..."; the rows are rewritten without
 *     the column's record slot (WITHOUT ROWID: through an ephemeral table,
 *     as the key changes).
 */
#include <string.h>

#include "compile_ddl_int.h"

/* One sqlite_schema row to change: match (type, name); set the fields that
 * are not NULL. */
typedef struct SchemaUpd {
  const char *type, *name;
  const char *new_name, *new_tbl, *new_sql;
} SchemaUpd;

static void schema_update(Parse *p, const SchemaUpd *u, int n) {
  if (n <= 0) return;
  int cur = compile_ddl_open_schema(p);
  int r = emit_regs(p, 9);
  int done = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, cur, done, 0);
  int top = emit_addr(p);
  for (int i = 0; i < 5; i++) emit(p, OP_Column, cur, i, r + i);
  for (int i = 0; i < n; i++) {
    int skip = emit_label(p);
    compile_ddl_emit_text(p, r + 5, u[i].name);
    int a = emit(p, OP_Ne, r + 5, skip, r + 1);
    vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
    compile_ddl_emit_text(p, r + 5, u[i].type);
    a = emit(p, OP_Ne, r + 5, skip, r);
    vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
    if (u[i].new_name) compile_ddl_emit_text(p, r + 1, u[i].new_name);
    if (u[i].new_tbl) compile_ddl_emit_text(p, r + 2, u[i].new_tbl);
    if (u[i].new_sql) compile_ddl_emit_text(p, r + 4, u[i].new_sql);
    emit(p, OP_MakeRecord, r, 5, r + 6);
    emit(p, OP_Rowid, cur, r + 7, 0);
    emit(p, OP_Insert, cur, r + 6, r + 7);
    emit(p, OP_Goto, 0, next, 0);
    emit_resolve(p, skip);
  }
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
  emit(p, OP_Close, cur, 0, 0);
}

/* Offset of the first token at or after i in z that is not white space or
 * a comment. */
static int skip_space(const char *z, int i) {
  int len = (int)strlen(z);
  while (i < len) {
    int type = 0, n = sql_token(z + i, len - i, &type);
    if (n <= 0 || type != TK_SPACE) break;
    i += n;
  }
  return i;
}

/* SQLite's "table X may not be altered" rule and the lookups shared by the
 * actions. NULL after an error. */
static Table *alter_target(Parse *p, const SqlAlter *a, int is_add) {
  const SqlQualName *q = &a->table;
  int other = compile_parse_other_db(p, q->schema);
  Table *t = other ? NULL : schema_find_table(p->schema, q->name);
  if (!t) {
    if (!other && schema_find_view(p->schema, q->name)) {
      if (is_add)
        compile_parse_error(p, "Cannot add a column to a view");
      else
        compile_parse_error(p, "view %s may not be altered",
                            schema_find_view(p->schema, q->name)->name);
      return NULL;
    }
    if (q->schema)
      compile_parse_error(p, "no such table: %s.%s", q->schema, q->name);
    else
      compile_parse_error(p, "no such table: %s", q->name);
    return NULL;
  }
  if (t->is_schema || !util_strnicmp(t->name, "sqlite_", 7)) {
    compile_parse_error(p, "table %s may not be altered", compile_ddl_table_name(t));
    return NULL;
  }
  return t;
}

/* Halt with msg when table t has a row (SQLite's ErrorIfNotEmpty). */
/* The statement fails when it runs with message m (SQLite's re-read of the
 * schema after the change fails then): a Halt; m (NULL: out of memory) is
 * freed. */
static void halt_with(Parse *p, char *m) {
  compile_parse_need_write(p);
  if (m)
    vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, m, -1);
  else
    compile_parse_nomem(p);
  shale_free(m);
}

static void error_if_not_empty(Parse *p, const Table *t, const char *msg) {
  int cur = emit_cursor(p);
  int empty = emit_label(p);
  compile_parse_open_table(p, cur, t, 0);
  emit(p, OP_Rewind, cur, empty, 0);
  vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, msg, -1);
  emit_resolve(p, empty);
  emit(p, OP_Close, cur, 0, 0);
}

/* A DEFAULT SQLite can turn into a value without running code. */
static int constant_default(const SqlExpr *e) {
  switch (e->op) {
    case SQL_E_NULL:
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
    case SQL_E_STRING:
    case SQL_E_BLOB:
      return 1;
    case SQL_E_ID:
      return !util_stricmp(e->z, "true") || !util_stricmp(e->z, "false");
    case SQL_E_UNARY:
      return (e->sub == TK_MINUS || e->sub == TK_PLUS) && constant_default(e->a);
    case SQL_E_COLLATE:
    case SQL_E_CAST:
      return constant_default(e->a);
    default:
      return 0;
  }
}

/* Every existing row must satisfy the new definition nt (a scratch Table
 * over t's tree): a NOT NULL generated column (the one added, last) and
 * every CHECK, as SQLite's quick_check pass after ADD COLUMN. */
static void check_rows(Parse *p, const Table *t, Table *nt, int gen_notnull) {
  nt->root = t->root;
  if (nt->pk_index) nt->pk_index->root = t->root;
  SrcList *src = compile_src_single(p, nt, NULL);
  if (!src || parse_failed(p)) return;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  nc.flags = NC_IS_CHECK | NC_NO_SUBQUERY;
  nc.err_ctx = "CHECK constraints";
  for (int i = 0; i < nt->ncheck; i++)
    if (compile_resolve_expr(p, &nc, nt->checks[i].expr)) return;
  int cur = src->a[0].cursor;
  int r = emit_regs(p, 1);
  int done = emit_label(p), next = emit_label(p), bad_check = emit_label(p);
  compile_parse_open_table(p, cur, nt, 0);
  emit(p, OP_Rewind, cur, done, 0);
  int top = emit_addr(p);
  if (gen_notnull) {
    int ok = emit_label(p);
    compile_code_column(p, nt, cur, nt->ncol - 1, r);
    emit(p, OP_NotNull, r, ok, 0);
    vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, "NOT NULL constraint failed",
                        -1);
    emit_resolve(p, ok);
  }
  for (int i = 0; i < nt->ncheck; i++) compile_expr_if_false(p, nt->checks[i].expr, bad_check, 0);
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit(p, OP_Goto, 0, done, 0);
  emit_resolve(p, bad_check);
  vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, "CHECK constraint failed", -1);
  emit_resolve(p, done);
  emit(p, OP_Close, cur, 0, 0);
}

static int add_column(Parse *p, const SqlStmt *s) {
  const SqlAlter *a = &s->u.alter;
  Table *t = alter_target(p, a, 1);
  if (!t) return 1;
  if (t->vtab_module) {
    compile_parse_error(p, "virtual tables may not be altered");
    return 1;
  }
  const SqlColumnDef *cd = a->column;
  if (schema_table_column_index(t, cd->name) >= 0) {
    compile_parse_error(p, "duplicate column name: %s", cd->name);
    return 1;
  }
  const SqlConstraint *dflt = NULL;
  int notnull = 0, generated = 0, stored = 0, refs = 0;
  for (int i = 0; i < cd->ncons; i++) {
    const SqlConstraint *c = &cd->cons[i];
    switch (c->type) {
      case SQL_CONS_PRIMARY_KEY:
        compile_parse_error(p, "Cannot add a PRIMARY KEY column");
        return 1;
      case SQL_CONS_UNIQUE:
        compile_parse_error(p, "Cannot add a UNIQUE column");
        return 1;
      case SQL_CONS_NOT_NULL:
        notnull = 1;
        break;
      case SQL_CONS_DEFAULT:
        dflt = c;
        break;
      case SQL_CONS_GENERATED:
        generated = 1;
        stored = c->stored;
        break;
      case SQL_CONS_REFERENCES:
        refs = 1;
        break;
      default:
        break;
    }
  }
  const SqlExpr *dv = dflt ? dflt->expr : NULL;
  if (dv && dv->op == SQL_E_NULL) dv = NULL;
  if (!generated && refs && dv && p->env->foreign_keys) {
    compile_parse_error(p, "Cannot add a REFERENCES column with non-NULL default value");
    return 1;
  }
  /* the new CREATE TABLE text (invariant 1) */
  SqlStmt *old = compile_ddl_reparse(p, t->sql);
  if (!old || old->kind != SQL_STMT_CREATE_TABLE || old->u.create_table.ncols < 1) {
    if (!parse_failed(p))
      compile_parse_error_code(p, SHALE_CORRUPT, "malformed database schema (%s)", t->name);
    return 1;
  }
  const SqlCreateTable *oct = &old->u.create_table;
  const SqlColumnDef *last = &oct->cols[oct->ncols - 1];
  int at = skip_space(t->sql, last->span.start + last->span.len);
  int cstart = cd->span.start, cend = compile_ddl_stored_end(p, s, DDL_END_TRIM);
  size_t lold = strlen(t->sql), lcol = (size_t)(cend > cstart ? cend - cstart : 0);
  char *sql = compile_parse_alloc(p, lold + lcol + 3);
  if (!sql) return 1;
  memcpy(sql, t->sql, (size_t)at);
  memcpy(sql + at, ", ", 2);
  memcpy(sql + at + 2, p->sql + cstart, lcol);
  memcpy(sql + at + 2 + lcol, t->sql + at, lold - (size_t)at + 1);
  /* the new definition must build (collations, CHECK columns, ...) */
  SqlStmt *nst = compile_ddl_reparse(p, sql);
  if (!nst) return 1;
  Schema *scratch = compile_ddl_scratch_with(p, NULL);
  if (!scratch) return 1;
  Table *nt = NULL;
  char *msg = NULL;
  int rc = compile_schema_table_from_create(scratch, nst, sql, &nt, &msg);
  if (rc == SHALE_ERROR && msg && strstr(msg, " datatype for ")) {
    /* STRICT type errors surface when SQLite re-reads the schema after the
     * change: a run-time error with its wording */
    schema_free(scratch);
    halt_with(p, util_mprintf("error in table %s after add column: %s", t->name, msg));
    shale_free(msg);
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  if (rc != SHALE_OK) {
    schema_free(scratch);
    compile_ddl_build_error(p, rc, msg);
    return 1;
  }
  compile_parse_need_write(p);
  if (!generated) {
    if (notnull && !dv)
      error_if_not_empty(p, t, "Cannot add a NOT NULL column with default value NULL");
    if (dv && !constant_default(dv))
      error_if_not_empty(p, t, "Cannot add a column with non-constant default");
  } else if (stored) {
    error_if_not_empty(p, t, "cannot add a STORED column");
  }
  /* schema format at least 3 (ADD COLUMN's records may be short) */
  int r = emit_regs(p, 1), skip = emit_label(p);
  emit(p, OP_ReadCookie, p->idb, r, BTREE_META_SCHEMA_FORMAT);
  emit(p, OP_AddImm, r, -2, 0);
  emit(p, OP_IfPos, r, skip, 0);
  emit(p, OP_SetCookie, p->idb, BTREE_META_SCHEMA_FORMAT, 3);
  emit_resolve(p, skip);
  int gen_notnull = generated && notnull;
  if (nt->ncheck > 0 || gen_notnull) check_rows(p, t, nt, gen_notnull);
  SchemaUpd u = {"table", t->name, NULL, NULL, sql};
  schema_update(p, &u, 1);
  compile_ddl_finish(p);
  schema_free(scratch);
  return parse_failed(p);
}

/* ------------------------------------------------------------- RENAME TO */

/* Text edits: replace [start, end) by the new quoted name. */
typedef struct Edit {
  int start, end;
  const char *z; /* replacement; NULL = the quoted new name */
} Edit;

typedef struct Renamer {
  SqlWalker w;
  Parse *p;
  const char *text; /* the CREATE text being rewritten */
  const char *old;  /* old table name */
  Edit *e;
  int n, cap;
  uint8_t legacy; /* legacy_alter_table: the object's own names only */
  uint8_t fk;     /* ... and REFERENCES clauses (foreign_keys on) */
} Renamer;

static void add_edit(Renamer *rn, int start, int end) {
  for (int i = 0; i < rn->n; i++)
    if (rn->e[i].start == start) return;
  if (rn->n == rn->cap) {
    int cap = rn->cap ? 2 * rn->cap : 8;
    Edit *ne = compile_parse_alloc(rn->p, sizeof *ne * (size_t)cap);
    if (!ne) return;
    if (rn->n) memcpy(ne, rn->e, sizeof *ne * (size_t)rn->n);
    rn->e = ne;
    rn->cap = cap;
  }
  rn->e[rn->n++] = (Edit){start, end, NULL};
}

/* The identifier token at offset i of the text: its length and dequoted
 * value compared with the old name. Returns the token length if it names
 * the table, else 0. */
static int token_names(Renamer *rn, int i) {
  int len = (int)strlen(rn->text);
  if (i < 0 || i >= len) return 0;
  int type = 0, n = sql_token(rn->text + i, len - i, &type);
  if (n <= 0) return 0;
  if (type != TK_ID && type != TK_STRING && !(type > TK_FIRST_KEYWORD && sql_keyword_is_id(type)))
    return 0;
  char buf[512];
  const char *z = rn->text + i;
  int k = 0;
  if (n >= 2 && (z[0] == '"' || z[0] == '\'' || z[0] == '`' || z[0] == '[')) {
    char close = z[0] == '[' ? ']' : z[0];
    for (int j = 1; j < n - 1 && k < (int)sizeof buf - 1; j++) {
      buf[k++] = z[j];
      if (z[j] == close && close != ']' && j + 1 < n - 1 && z[j + 1] == close) j++;
    }
  } else {
    for (int j = 0; j < n && k < (int)sizeof buf - 1; j++) buf[k++] = z[j];
  }
  buf[k] = 0;
  return util_stricmp(buf, rn->old) ? 0 : n;
}

/* Next significant token at/after i: its offset; *type and *n set. */
static int next_token(const char *z, int i, int *type, int *n) {
  int len = (int)strlen(z);
  i = skip_space(z, i);
  *type = TK_EOF;
  *n = 0;
  if (i < len) *n = sql_token(z + i, len - i, type);
  return i;
}

/* A name that may be "schema . name": edit the name part if it is the
 * table. Starts at offset i. */
static void rename_qualified_at(Renamer *rn, int i) {
  int type, n;
  i = next_token(rn->text, i, &type, &n);
  int j = i + n, t2, n2;
  int d = next_token(rn->text, j, &t2, &n2);
  if (t2 == TK_DOT) { /* schema . name */
    int t3, n3;
    int k = next_token(rn->text, d + n2, &t3, &n3);
    int m = token_names(rn, k);
    if (m) add_edit(rn, k, k + m);
    return;
  }
  int m = token_names(rn, i);
  if (m) add_edit(rn, i, i + m);
}

static int rename_expr_cb(SqlWalker *w, SqlExpr *e) {
  Renamer *rn = (Renamer *)w;
  if (e->op == SQL_E_COLUMN && e->table && !util_stricmp(e->table, rn->old)) {
    /* [schema .] table . column: the table token is the one before the last dot */
    int type, n, i = e->span.start;
    i = next_token(rn->text, i, &type, &n);
    if (e->schema) {
      int t2, n2;
      int d = next_token(rn->text, i + n, &t2, &n2);
      i = next_token(rn->text, d + n2, &type, &n);
    }
    int m = token_names(rn, i);
    if (m) add_edit(rn, i, i + m);
  }
  if (e->op == SQL_E_IN && e->table && !util_stricmp(e->table, rn->old) && !e->list) {
    /* x IN t: the name is the last token of the span */
    int end = e->span.start + e->span.len, i = e->span.start, last = -1;
    while (i < end) {
      int type, n;
      i = next_token(rn->text, i, &type, &n);
      if (n <= 0 || i >= end) break;
      last = i;
      i += n;
    }
    int m = token_names(rn, last);
    if (m) add_edit(rn, last, last + m);
  }
  return SQL_WALK_CONTINUE;
}

static void rename_src(Renamer *rn, SqlSrcList *from) {
  for (int i = 0; from && i < from->n; i++) {
    SqlSrcItem *it = &from->a[i];
    if (it->nested) rename_src(rn, it->nested);
    if (it->name && !it->select && !util_stricmp(it->name, rn->old))
      rename_qualified_at(rn, it->span.start);
  }
}

static int rename_select_cb(SqlWalker *w, SqlSelect *s) {
  for (SqlSelect *c = s; c; c = c->prior) rename_src((Renamer *)w, c->from);
  return SQL_WALK_CONTINUE;
}

static void walk_list(Renamer *rn, SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (l->a[i].expr) sql_walk_expr(&rn->w, l->a[i].expr);
}

static void walk_expr(Renamer *rn, SqlExpr *e) {
  if (e) sql_walk_expr(&rn->w, e);
}

static void walk_select(Renamer *rn, SqlSelect *s) {
  if (s) sql_walk_select(&rn->w, s);
}

/* Offset of the first token (at/after i, before end) of the given type. */
static int find_token(const char *z, int i, int end, int want) {
  while (i < end) {
    int type, n;
    i = next_token(z, i, &type, &n);
    if (n <= 0 || i >= end) return -1;
    if (type == want) return i;
    i += n;
  }
  return -1;
}

static void rename_stmt(Renamer *rn, SqlStmt *st);

static void rename_fk_in(Renamer *rn, SqlSpan sp, const SqlForeignKey *fk) {
  if (!fk || !fk->table || util_stricmp(fk->table, rn->old) || (rn->legacy && !rn->fk)) return;
  int r = find_token(rn->text, sp.start, sp.start + sp.len, TK_REFERENCES);
  if (r >= 0) rename_qualified_at(rn, r + 10);
}

static void rename_stmt(Renamer *rn, SqlStmt *st) {
  switch (st->kind) {
    case SQL_STMT_CREATE_TABLE: {
      SqlCreateTable *ct = &st->u.create_table;
      if (!util_stricmp(ct->name.name, rn->old))
        add_edit(rn, ct->name.name_start, ct->name.span.start + ct->name.span.len);
      for (int i = 0; i < ct->ncols; i++)
        for (int k = 0; k < ct->cols[i].ncons; k++) {
          SqlConstraint *c = &ct->cols[i].cons[k];
          if (c->type == SQL_CONS_REFERENCES) rename_fk_in(rn, c->span, c->fk);
          if (!rn->legacy) walk_expr(rn, c->expr);
        }
      for (int k = 0; k < ct->ncons; k++) {
        SqlConstraint *c = &ct->cons[k];
        if (c->type == SQL_CONS_FOREIGN_KEY) rename_fk_in(rn, c->span, c->fk);
        if (!rn->legacy) walk_expr(rn, c->expr);
      }
      break;
    }
    case SQL_STMT_CREATE_VTAB: {
      SqlCreateVtab *cv = &st->u.create_vtab;
      if (!util_stricmp(cv->name.name, rn->old))
        add_edit(rn, cv->name.name_start, cv->name.span.start + cv->name.span.len);
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      SqlCreateIndex *ci = &st->u.create_index;
      if (!util_stricmp(ci->table, rn->old)) {
        int on = find_token(rn->text, ci->name.span.start + ci->name.span.len,
                            (int)strlen(rn->text), TK_ON);
        if (on >= 0) rename_qualified_at(rn, on + 2);
      }
      if (rn->legacy) break;
      walk_list(rn, ci->columns);
      walk_expr(rn, ci->where);
      break;
    }
    case SQL_STMT_CREATE_VIEW:
      if (!rn->legacy) walk_select(rn, st->u.create_view.select);
      break;
    case SQL_STMT_CREATE_TRIGGER: {
      SqlCreateTrigger *tr = &st->u.create_trigger;
      if (!util_stricmp(tr->table, rn->old)) {
        int on = find_token(rn->text, tr->name.span.start + tr->name.span.len,
                            (int)strlen(rn->text), TK_ON);
        if (on >= 0) rename_qualified_at(rn, on + 2);
      }
      if (rn->legacy) break;
      walk_expr(rn, tr->when);
      for (int i = 0; i < tr->nstmts; i++) rename_stmt(rn, tr->stmts[i]);
      break;
    }
    case SQL_STMT_SELECT:
      walk_select(rn, st->u.select);
      break;
    case SQL_STMT_INSERT: {
      SqlInsert *in = &st->u.insert;
      if (!util_stricmp(in->table.name, rn->old)) rename_qualified_at(rn, in->table.span.start);
      walk_select(rn, in->select);
      for (SqlUpsert *u = in->upsert; u; u = u->next) {
        walk_list(rn, u->target);
        walk_expr(rn, u->target_where);
        walk_list(rn, u->set);
        walk_expr(rn, u->where);
      }
      break;
    }
    case SQL_STMT_UPDATE: {
      SqlUpdate *up = &st->u.update;
      if (up->table && up->table->name && !util_stricmp(up->table->name, rn->old))
        rename_qualified_at(rn, up->table->span.start);
      walk_list(rn, up->set);
      rename_src(rn, up->from);
      walk_expr(rn, up->where);
      break;
    }
    case SQL_STMT_DELETE: {
      SqlDelete *de = &st->u.del;
      if (de->table && de->table->name && !util_stricmp(de->table->name, rn->old))
        rename_qualified_at(rn, de->table->span.start);
      walk_expr(rn, de->where);
      break;
    }
    default:
      break;
  }
}

/* The text with every edit replaced by the quoted new name, or NULL when
 * nothing changes. */
static const char *apply_edits(Renamer *rn, const char *quoted) {
  if (rn->n == 0) return NULL;
  for (int i = 1; i < rn->n; i++) /* sort by start */
    for (int j = i; j > 0 && rn->e[j - 1].start > rn->e[j].start; j--) {
      Edit x = rn->e[j];
      rn->e[j] = rn->e[j - 1];
      rn->e[j - 1] = x;
    }
  size_t len = strlen(rn->text), lq = strlen(quoted);
  for (int i = 0; i < rn->n; i++)
    if (rn->e[i].z && strlen(rn->e[i].z) > lq) lq = strlen(rn->e[i].z);
  char *out = compile_parse_alloc(rn->p, len + (size_t)rn->n * lq + 1);
  if (!out) return NULL;
  size_t k = 0;
  int pos = 0;
  for (int i = 0; i < rn->n; i++) {
    memcpy(out + k, rn->text + pos, (size_t)(rn->e[i].start - pos));
    k += (size_t)(rn->e[i].start - pos);
    const char *z = rn->e[i].z ? rn->e[i].z : quoted;
    size_t lz = strlen(z);
    memcpy(out + k, z, lz);
    k += lz;
    pos = rn->e[i].end;
  }
  memcpy(out + k, rn->text + pos, len - (size_t)pos + 1);
  return out;
}

/* A schema object's CREATE text rewritten for the rename, or NULL if it
 * does not mention the table. */
static const char *renamed_sql(Parse *p, const char *sql, const char *old, const char *quoted) {
  if (!sql) return NULL;
  SqlStmt *st = compile_ddl_reparse(p, sql);
  if (!st) return NULL;
  Renamer rn;
  memset(&rn, 0, sizeof rn);
  rn.w.expr = rename_expr_cb;
  rn.w.select = rename_select_cb;
  rn.p = p;
  rn.text = sql;
  rn.old = old;
  rn.legacy = p->env && p->env->legacy_alter;
  rn.fk = p->env && p->env->foreign_keys;
  rename_stmt(&rn, st);
  return apply_edits(&rn, quoted);
}

/* SQLite refuses to rename while a view of the schema does not resolve:
 * "error in view v: no such table: main.x". Each view is resolved in a
 * Parse of its own (errors there stay there). */
/* The view and trigger rows of sqlite_schema in rowid order (the order
 * SQLite checks objects in) as "v" / "t" + name, read from the file within a
 * read transaction of its own when none is open (as compile_schema_load does). At
 * most cap; NULL-terminated, arena memory; NULL after an error. */
static const char **names_in_order(Parse *p, int cap) {
  const char **out = compile_parse_alloc(p, sizeof *out * (size_t)(cap + 1));
  if (!out || !cap) return out;
  Btree *bt = compile_parse_db_bt(p, p->idb);
  if (!bt) return out;
  int own = btree_txn_state(bt) == PAGER_TXN_NONE, n = 0;
  if (own && btree_begin(bt, BTREE_TXN_READ) != SHALE_OK) own = -1;
  BtCursor *cur = NULL;
  if (own >= 0 && btree_cursor_open(bt, 1, 0, NULL, NULL, &cur) == SHALE_OK) {
    int done = 0;
    int rc = btree_first(cur, &done);
    uint8_t *buf = NULL;
    while (rc == SHALE_OK && !done && n < cap) {
      uint32_t size = btree_payload_size(cur);
      uint8_t *nb = shale_realloc(buf, size ? size : 1);
      if (!nb) break;
      buf = nb;
      if (btree_payload_read(cur, 0, size, buf) != SHALE_OK) break;
      ShValue ty, nm;
      if (record_column(buf, size, 0, &ty) == SHALE_OK &&
          record_column(buf, size, 1, &nm) == SHALE_OK && ty.type == SHALE_TEXT &&
          nm.type == SHALE_TEXT &&
          ((ty.n == 4 && !memcmp(ty.z, "view", 4)) || (ty.n == 7 && !memcmp(ty.z, "trigger", 7)))) {
        char *z = util_arena_alloc(&p->arena, (size_t)nm.n + 2);
        if (z) {
          z[0] = ty.z[0] == 'v' ? 'v' : 't';
          if (nm.n) memcpy(z + 1, nm.z, nm.n);
          z[nm.n + 1] = 0;
          out[n++] = z;
        }
      }
      rc = btree_next(cur, &done);
    }
    shale_free(buf);
    btree_cursor_close(cur);
  }
  if (own == 1) btree_commit(bt);
  out[n] = NULL;
  return out;
}

static int check_view_in(Parse *p, Schema *sc, View *v, const char *after, char **msg);

/* "error in view v: ..." when view v does not resolve (in a Parse of its
 * own: errors there stay there). */
static int check_view(Parse *p, View *v) { return check_view_in(p, p->schema, v, "", NULL); }

/* check_view against schema sc; the error is "error in view v<after>: ..."
 * and, when msg is not NULL, returned there (shale_malloc) instead of set. */
static int check_view_in(Parse *p, Schema *sc, View *v, const char *after, char **msg) {
  Parse tp;
  memset(&tp, 0, sizeof tp);
  tp.env = p->env;
  tp.idb = p->idb;
  tp.scope_db1 = p->scope_db1                              ? p->scope_db1
                 : compile_parse_ndb(p) > 1 && p->idb != 1 ? p->idb + 1
                                                           : 0;
  tp.schema = sc;
  tp.sql = v->sql;
  util_arena_init(&tp.arena, 0);
  SqlStmt *st = NULL;
  char *perr = NULL;
  int rc = sql_parse(&tp.arena, v->sql, -1, &st, NULL, &perr);
  shale_free(perr);
  if (rc == SHALE_OK && st && st->kind == SQL_STMT_CREATE_VIEW &&
      vm_builder_init(&tp.b, NULL) == SHALE_OK) {
    tp.stmt = st;
    compile_select_resolve(&tp, st->u.create_view.select, NULL);
    vm_builder_abort(&tp.b);
  }
  int bad = 0;
  if (tp.rc == SHALE_NOMEM) {
    compile_parse_nomem(p);
  } else if (tp.rc) {
    char *m;
    if (tp.errmsg && !strncmp(tp.errmsg, "no such table: ", 15) &&
        !strchr(tp.errmsg + 15, '.')) /* names are schema-qualified in this check */
      m = util_mprintf("error in view %s%s: no such table: main.%s", v->name, after,
                       tp.errmsg + 15);
    else
      m = util_mprintf("error in view %s%s: %s", v->name, after, tp.errmsg ? tp.errmsg : "?");
    if (!m)
      compile_parse_nomem(p);
    else if (msg)
      *msg = m, bad = 1;
    else
      compile_parse_error(p, "%s", m);
    if (!msg) shale_free(m);
  }
  shale_free(tp.errmsg);
  util_arena_free(&tp.arena);
  return bad || parse_failed(p);
}

/* "error in trigger g: no such table: main.x" when a trigger on a table
 * names a missing table (the one error SQLite's rename check reports).
 * Each trigger is compiled alone (a scratch schema holding the tables and
 * views and that trigger only) in a Parse of its own; triggers on views are
 * not checked. */
static int check_trigger(Parse *p, Trigger *g) {
  Table *tab = schema_find_table(p->schema, g->table);
  if (!tab) return 0;
  Schema *scratch = schema_new();
  int ok = scratch != NULL, k = 0;
  Table *t;
  View *v;
  while (ok && (t = schema_map_next(&p->schema->tables, &k)) != NULL)
    ok = schema_add_table(scratch, t) == SHALE_OK;
  k = 0;
  while (ok && (v = schema_map_next(&p->schema->views, &k)) != NULL)
    ok = schema_add_view(scratch, v) == SHALE_OK;
  if (ok) ok = schema_add_trigger(scratch, g) == SHALE_OK;
  uint8_t *changed = ok ? compile_parse_alloc(p, (size_t)tab->ncol + 1) : NULL;
  if (!ok || !changed) {
    schema_free(scratch);
    compile_parse_nomem(p);
    return 1;
  }
  memset(changed, 1, (size_t)tab->ncol + 1);
  Parse tp;
  memset(&tp, 0, sizeof tp);
  tp.env = p->env;
  tp.idb = p->idb;
  tp.schema = scratch;
  tp.sql = g->sql;
  util_arena_init(&tp.arena, 0);
  if (vm_builder_init(&tp.b, NULL) == SHALE_OK) {
    int ign = emit_label(&tp);
    compile_trigger_code(&tp, tab, g->event, g->timing, changed, 0, 0, VM_OE_ABORT, ign);
    vm_builder_abort(&tp.b);
  } else {
    compile_parse_nomem(&tp);
  }
  if (tp.rc == SHALE_NOMEM)
    compile_parse_nomem(p);
  else if (tp.rc && tp.errmsg && !strncmp(tp.errmsg, "no such table: ", 15) &&
           !strchr(tp.errmsg + 15, '.'))
    compile_parse_error(p, "error in trigger %s: no such table: main.%s", g->name, tp.errmsg + 15);
  else if (tp.rc && tp.errmsg && !strncmp(tp.errmsg, "no such table: ", 15))
    compile_parse_error(p, "error in trigger %s: %s", g->name, tp.errmsg);
  /* other errors (columns, NEW/OLD) SQLite's rename check does not see */
  shale_free(tp.errmsg);
  util_arena_free(&tp.arena);
  schema_free(scratch);
  return parse_failed(p);
}

static int check_schema_in_order(Parse *p);

/* SQLite's check before a rename or drop: every view and trigger, in
 * sqlite_schema order (any the file did not list -- should not happen --
 * are skipped). A failure is SQLite's run-time error: the program is a Halt
 * with the message (under legacy_alter_table only "SQL logic error"; RENAME
 * TABLE does not check at all then: rename_table), the caller finishes it.
 * Returns 1 when the check failed (or ran out of memory). */
static int check_schema(Parse *p) {
  if (!check_schema_in_order(p)) return 0;
  if (p->rc != SHALE_ERROR) return 1;
  char *m = p->env && p->env->legacy_alter ? util_mprintf("SQL logic error") : p->errmsg;
  if (m != p->errmsg) shale_free(p->errmsg);
  p->errmsg = NULL;
  p->rc = SHALE_OK;
  halt_with(p, m);
  return 1;
}

static int check_schema_in_order(Parse *p) {
  int cap = 0, pos = 0;
  while (schema_map_next(&p->schema->views, &pos)) cap++;
  pos = 0;
  while (schema_map_next(&p->schema->triggers, &pos)) cap++;
  const char **order = names_in_order(p, cap);
  if (!order) return 1;
  for (int i = 0; order[i]; i++) {
    if (order[i][0] == 'v') {
      View *v = schema_find_view(p->schema, order[i] + 1);
      if (v && check_view(p, v)) return 1;
    } else {
      Trigger *g = schema_find_trigger(p->schema, order[i] + 1);
      if (g && check_trigger(p, g)) return 1;
    }
  }
  return 0;
}

static const char *colren_sql(Parse *p, const char *sql, const Table *t, const char *old,
                              const char *plain, const char *quoted, int bquote,
                              const char **first);

/* A rename that TEMP views and triggers follow: RENAME TO (col NULL: t's new
 * name nn, quoted) or RENAME COLUMN (t's column col to plain / quoted). */
typedef struct TempRen {
  const Table *t;
  const char *nn, *col, *plain, *quoted;
  int bquote;
} TempRen;

/* The TEMP views and triggers that name a renamed table (or column) of
 * another database (unless temp has a table of that name itself) are
 * rewritten in sqlite_temp_master too, as SQLite does; p's database is
 * restored. */
static void rename_in_temp(Parse *p, const TempRen *r) {
  int own = p->idb;
  const char *old = r->t->name;
  if (own == 1 || compile_parse_ndb(p) < 2 || parse_failed(p)) return;
  Schema *tmp = compile_parse_db_schema(p, 1);
  if (!tmp || schema_find_table(tmp, old) || (!tmp->views.n && !tmp->triggers.n)) return;
  int cap = tmp->views.n + tmp->triggers.n, n = 0;
  SchemaUpd *u = compile_parse_alloc(p, sizeof *u * (size_t)(cap + 1));
  if (!u) return;
  for (int kind = 0; kind < 2; kind++) {
    int pos = 0;
    void *o;
    while ((o = schema_map_next(kind ? &tmp->triggers : &tmp->views, &pos)) != NULL && n < cap) {
      const char *sql = kind ? ((Trigger *)o)->sql : ((View *)o)->sql;
      const char *name = kind ? ((Trigger *)o)->name : ((View *)o)->name;
      const char *x = r->col
                          ? colren_sql(p, sql, r->t, r->col, r->plain, r->quoted, r->bquote, NULL)
                          : renamed_sql(p, sql, old, r->quoted);
      if (parse_failed(p)) return;
      int on = kind && !r->col && !util_stricmp(((Trigger *)o)->table, old);
      if (x || on)
        u[n++] = (SchemaUpd){kind ? "trigger" : "view", name, NULL, on ? r->nn : NULL, x};
    }
  }
  if (n == 0) return;
  compile_parse_set_db(p, 1);
  compile_parse_need_write(p);
  schema_update(p, u, n);
  compile_ddl_finish(p);
  compile_parse_set_db(p, own);
}

static const char *upd_sql(const SchemaUpd *u, int n, const char *type, const char *name,
                           const char *old);

/* Under legacy_alter_table only names were rewritten, so the table's CHECK
 * and generated-column expressions and its indexes' may still name the old
 * table: SQLite's re-read then fails, when the statement runs, with "error
 * in table|index X after rename: ...". Returns 1 after coding that error
 * (or failing). */
static int legacy_rename_check(Parse *p, const Table *t, const char *nn, const SchemaUpd *u,
                               int n) {
  const char *tsql = upd_sql(u, n, "table", t->name, t->sql);
  SqlStmt *st = tsql ? compile_ddl_reparse(p, tsql) : NULL;
  if (!st || st->kind != SQL_STMT_CREATE_TABLE) return !tsql ? 0 : 1;
  Schema *sc = schema_new();
  if (!sc) {
    compile_parse_nomem(p);
    return 1;
  }
  char *msg = NULL;
  const char *kind = "table", *name = nn;
  Table *nt = NULL;
  int rc = compile_schema_table_from_create(sc, st, tsql, &nt, &msg);
  if (rc == SHALE_OK) rc = schema_add_table(sc, nt);
  for (const Index *i = t->indexes; rc == SHALE_OK && i; i = i->next) {
    if (i == t->pk_index || i->is_autoindex || !i->sql) continue;
    const char *isql = upd_sql(u, n, "index", i->name, i->sql);
    SqlStmt *is = compile_ddl_reparse(p, isql);
    if (!is) break;
    Index *ni = NULL;
    rc = compile_schema_index_from_create(sc, is, isql, &ni, &msg);
    if (rc != SHALE_OK) kind = "index", name = i->name;
  }
  schema_free(sc);
  if (rc == SHALE_NOMEM || (rc != SHALE_OK && !msg)) compile_parse_nomem(p);
  if (rc != SHALE_OK && msg)
    halt_with(p, util_mprintf("error in %s %s after rename: %s", kind, name, msg));
  shale_free(msg);
  return rc != SHALE_OK || parse_failed(p);
}

/* SQLite's RENAME TO, RENAME COLUMN and DROP COLUMN of a table outside
 * temp also update temp's schema table (its triggers and views may name the
 * table), so the statement writes temp too: the virtual tables in the
 * transaction see a statement savepoint per database written. */
static void also_write_temp(Parse *p) {
  if (p->idb != 1 && compile_parse_ndb(p) > 1) compile_parse_need_db(p, 1, 1);
}

static int rename_table(Parse *p, const SqlStmt *s) {
  const SqlAlter *a = &s->u.alter;
  Table *t = alter_target(p, a, 0);
  if (!t) return 1;
  const char *nn = a->new_name;
  if (schema_find_table(p->schema, nn) || schema_find_index(p->schema, nn) ||
      schema_find_view(p->schema, nn)) {
    compile_parse_error(p, "there is already another table or index with this name: %s", nn);
    return 1;
  }
  if (!util_strnicmp(nn, "sqlite_", 7)) {
    compile_parse_error(p, "object name reserved for internal use: %s", nn);
    return 1;
  }
  /* SQLite connects it to ask for xRename */
  const Table *vd =
      t->vtab_module ? compile_parse_vtab_connect(p, t, compile_parse_table_db(p, t)) : NULL;
  if (t->vtab_module && !vd) return 1;
  int legacy = p->env && p->env->legacy_alter;
  if (!legacy && check_schema(p)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  /* "new" with its double quotes doubled, in double quotes */
  size_t ln = strlen(nn);
  char *quoted = compile_parse_alloc(p, 2 * ln + 3);
  if (!quoted) return 1;
  size_t k = 0;
  quoted[k++] = '"';
  for (size_t i = 0; i < ln; i++) {
    if (nn[i] == '"') quoted[k++] = '"';
    quoted[k++] = nn[i];
  }
  quoted[k++] = '"';
  quoted[k] = 0;

  int cap = 16, n = 0;
  SchemaUpd *u = compile_parse_alloc(p, sizeof *u * (size_t)cap);
  if (!u) return 1;
#define ADD_UPD(...)                                                          \
  do {                                                                        \
    if (n == cap) {                                                           \
      SchemaUpd *nu = compile_parse_alloc(p, sizeof *nu * (size_t)(cap * 2)); \
      if (!nu) return 1;                                                      \
      memcpy(nu, u, sizeof *nu *(size_t)n);                                   \
      u = nu;                                                                 \
      cap *= 2;                                                               \
    }                                                                         \
    u[n++] = (SchemaUpd){__VA_ARGS__};                                        \
  } while (0)
  /* the table itself */
  const char *tsql = renamed_sql(p, t->sql, t->name, quoted);
  if (parse_failed(p)) return 1;
  ADD_UPD("table", t->name, nn, nn, tsql);
  /* its indexes: automatic ones are renamed too */
  for (Index *i = t->indexes; i; i = i->next) {
    if (i == t->pk_index) continue;
    if (i->is_autoindex) {
      size_t lt = strlen(t->name);
      const char *suffix = i->name + 17 + lt; /* "sqlite_autoindex_" + old + "_N" */
      char *nm = util_mprintf("sqlite_autoindex_%s%s", nn, strlen(i->name) > 17 + lt ? suffix : "");
      if (!nm) {
        compile_parse_nomem(p);
        return 1;
      }
      char *nm2 = compile_parse_strdup(p, nm);
      shale_free(nm);
      if (!nm2) return 1;
      ADD_UPD("index", i->name, nm2, nn, NULL);
    } else {
      const char *isql = renamed_sql(p, i->sql, t->name, quoted);
      if (parse_failed(p)) return 1;
      ADD_UPD("index", i->name, NULL, nn, isql);
    }
  }
  /* other tables (REFERENCES), views, triggers and indexes of other tables
   * (expressions naming the table) */
  int pos = 0;
  Table *o;
  while ((o = schema_map_next(&p->schema->tables, &pos)) != NULL) {
    if (o == t || o->is_schema || !o->sql || o->vtab_module) continue;
    const char *x = renamed_sql(p, o->sql, t->name, quoted);
    if (parse_failed(p)) return 1;
    if (x) ADD_UPD("table", o->name, NULL, NULL, x);
  }
  pos = 0;
  View *v;
  while ((v = schema_map_next(&p->schema->views, &pos)) != NULL) {
    const char *x = renamed_sql(p, v->sql, t->name, quoted);
    if (parse_failed(p)) return 1;
    if (x) ADD_UPD("view", v->name, NULL, NULL, x);
  }
  pos = 0;
  Trigger *g;
  while ((g = schema_map_next(&p->schema->triggers, &pos)) != NULL) {
    const char *x = renamed_sql(p, g->sql, t->name, quoted);
    if (parse_failed(p)) return 1;
    int on = !util_stricmp(g->table, t->name);
    if (x || on) ADD_UPD("trigger", g->name, NULL, on ? nn : NULL, x);
  }
#undef ADD_UPD
  if (legacy && legacy_rename_check(p, t, nn, u, n)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  compile_parse_need_write(p);
  also_write_temp(p);
  if (vd) { /* xRename first: its error leaves the schema as it is */
    int r = emit_regs(p, 1);
    compile_ddl_emit_text(p, r, nn);
    vm_builder_add_p4(&p->b, OP_VRename, r, 0, 0, P4_VTAB, vd->vtab);
  }
  schema_update(p, u, n);
  if (t->autoincrement) { /* its sqlite_sequence row */
    Table *seq = schema_find_table(p->schema, "sqlite_sequence");
    if (seq && seq->root) {
      int cur = emit_cursor(p);
      vm_builder_add_i4(&p->b, OP_OpenWrite, cur, (int)seq->root, p->idb, seq->ncol);
      int r = emit_regs(p, 5);
      int done = emit_label(p), next = emit_label(p);
      compile_ddl_emit_text(p, r + 2, t->name);
      emit(p, OP_Rewind, cur, done, 0);
      int top = emit_addr(p);
      emit(p, OP_Column, cur, 0, r);
      int ad = emit(p, OP_Ne, r + 2, next, r);
      vm_builder_set_p5(&p->b, ad, VM_JUMPIFNULL);
      compile_ddl_emit_text(p, r, nn);
      emit(p, OP_Column, cur, 1, r + 1);
      emit(p, OP_MakeRecord, r, 2, r + 3);
      emit(p, OP_Rowid, cur, r + 4, 0);
      emit(p, OP_Insert, cur, r + 3, r + 4);
      emit_resolve(p, next);
      emit(p, OP_Next, cur, top, 0);
      emit_resolve(p, done);
      emit(p, OP_Close, cur, 0, 0);
    }
  }
  compile_ddl_finish(p);
  TempRen tr = {.t = t, .nn = nn, .quoted = quoted};
  rename_in_temp(p, &tr);
  return parse_failed(p);
}

/* --------------------------------------------------------- RENAME COLUMN */

/* A name scope: the FROM items of a query, an UPDATE/DELETE target, or the
 * table itself (its CREATE TABLE, an index on it, an upsert of it). */
typedef struct Frame {
  SqlSrcList *from;
  SqlSrcItem *one;
  int is_t;
} Frame;

#define MAX_FRAMES 64

typedef struct ColRen {
  Renamer rn;        /* rn.old = the column's old name; rn.w the walker */
  const Table *t;    /* the table whose column is renamed */
  const char *plain; /* the new name as is (used where neither name is quoted) */
  int bquote;        /* the new name was written quoted */
  int trig_on_t;     /* walking a trigger on t: NEW.x / OLD.x name t's columns */
  int overflow;      /* scopes nested deeper than MAX_FRAMES (ignored) */
  int detect;        /* DROP COLUMN's check: expressions only (SQLite's re-read does
                      * not check column lists: INSERT, SET, UPDATE OF, keys) */
  const char *first; /* the first reference found, as SQLite names it in errors */
  Frame fr[MAX_FRAMES];
  int nfr;
} ColRen;

static int item_is_t(const ColRen *cr, const SqlSrcItem *it) {
  return it->name && !it->select && !it->has_args && !util_stricmp(it->name, cr->t->name) &&
         (!it->schema || !util_stricmp(it->schema, "main"));
}

/* -1: item it does not have the column; else 1 if it is t, 0 if another. */
static int item_col(const ColRen *cr, const SqlSrcItem *it) {
  if (it->nested) {
    for (int i = 0; i < it->nested->n; i++) {
      int r = item_col(cr, &it->nested->a[i]);
      if (r >= 0) return r;
    }
    return -1;
  }
  if (item_is_t(cr, it)) return 1;
  if (!it->name || it->select || it->has_args) return -1;
  Table *o = schema_find_table(cr->rn.p->schema, it->name);
  return o && schema_table_column_index(o, cr->rn.old) >= 0 ? 0 : -1;
}

/* -1: no item called x; else 1 if the item so called is t. */
static int item_named(const ColRen *cr, const SqlSrcItem *it, const char *x) {
  if (it->nested) {
    for (int i = 0; i < it->nested->n; i++) {
      int r = item_named(cr, &it->nested->a[i], x);
      if (r >= 0) return r;
    }
    return -1;
  }
  const char *nm = it->alias ? it->alias : it->name;
  if (!nm || util_stricmp(nm, x)) return -1;
  return item_is_t(cr, it);
}

/* Does an unqualified reference to the column name t's column? */
static int unqual_is_t(const ColRen *cr) {
  for (int f = cr->nfr - 1; f >= 0; f--) {
    const Frame *fr = &cr->fr[f];
    if (fr->is_t) return 1;
    if (fr->one) {
      int r = item_col(cr, fr->one);
      if (r >= 0) return r;
    }
    for (int i = 0; fr->from && i < fr->from->n; i++) {
      int r = item_col(cr, &fr->from->a[i]);
      if (r >= 0) return r;
    }
  }
  return 0;
}

/* Does x.column name t's column? */
static int qual_is_t(const ColRen *cr, const char *x, const char *schema) {
  if (schema && util_stricmp(schema, "main")) return 0;
  for (int f = cr->nfr - 1; f >= 0; f--) {
    const Frame *fr = &cr->fr[f];
    if (fr->is_t && !util_stricmp(x, cr->t->name)) return 1;
    if (fr->one) {
      int r = item_named(cr, fr->one, x);
      if (r >= 0) return r;
    }
    for (int i = 0; fr->from && i < fr->from->n; i++) {
      int r = item_named(cr, &fr->from->a[i], x);
      if (r >= 0) return r;
    }
  }
  return cr->trig_on_t && !schema && (!util_stricmp(x, "new") || !util_stricmp(x, "old"));
}

static void col_edit(ColRen *cr, int i, int m) {
  int before = cr->rn.n;
  add_edit(&cr->rn, i, i + m);
  if (cr->rn.n > before && !cr->bquote && !strchr("\"'`[", cr->rn.text[i]))
    cr->rn.e[cr->rn.n - 1].z = cr->plain;
}

/* Edit the identifier tokens naming the column in [start, end): every one,
 * or only the last when last is set. */
static void edit_region(ColRen *cr, int start, int end, int last) {
  int i = start, at = -1, am = 0;
  while (i < end) {
    int type, n;
    i = next_token(cr->rn.text, i, &type, &n);
    if (n <= 0 || i >= end) break;
    int m = token_names(&cr->rn, i);
    if (m) {
      if (last) {
        at = i;
        am = m;
      } else {
        col_edit(cr, i, m);
      }
    }
    i += n;
  }
  if (last && at >= 0) col_edit(cr, at, am);
}

static void push(ColRen *cr, SqlSrcList *from, SqlSrcItem *one, int is_t) {
  if (cr->nfr == MAX_FRAMES) {
    cr->overflow++;
    return;
  }
  cr->fr[cr->nfr++] = (Frame){from, one, is_t};
}

static void pop(ColRen *cr) {
  if (cr->overflow)
    cr->overflow--;
  else
    cr->nfr--;
}

static int cr_expr_cb(SqlWalker *w, SqlExpr *e) {
  ColRen *cr = (ColRen *)w;
  if (e->op == SQL_E_ID && e->z && !util_stricmp(e->z, cr->rn.old) && unqual_is_t(cr)) {
    if (!cr->first) cr->first = e->z;
    edit_region(cr, e->span.start, e->span.start + e->span.len, 0);
  } else if (e->op == SQL_E_COLUMN && e->z && e->table && !util_stricmp(e->z, cr->rn.old) &&
             qual_is_t(cr, e->table, e->schema)) {
    if (!cr->first) {
      char *m = util_mprintf("%s.%s", e->table, e->z);
      cr->first = m ? compile_parse_strdup(cr->rn.p, m) : NULL;
      if (!m) compile_parse_nomem(cr->rn.p);
      shale_free(m);
    }
    edit_region(cr, e->span.start, e->span.start + e->span.len, 1);
  }
  return SQL_WALK_CONTINUE;
}

static void cr_list(ColRen *cr, SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (l->a[i].expr) sql_walk_expr(&cr->rn.w, l->a[i].expr);
}

static void cr_expr(ColRen *cr, SqlExpr *e) {
  if (e) sql_walk_expr(&cr->rn.w, e);
}

static void cr_from(ColRen *cr, SqlSrcList *from) {
  for (int i = 0; from && i < from->n; i++) {
    SqlSrcItem *it = &from->a[i];
    if (it->select) sql_walk_select(&cr->rn.w, it->select);
    if (it->nested) cr_from(cr, it->nested);
    cr_list(cr, it->args);
    cr_expr(cr, it->on);
  }
}

static void cr_window(ColRen *cr, SqlWindow *win) {
  for (; win; win = win->next) {
    cr_list(cr, win->partition);
    cr_list(cr, win->order);
    cr_expr(cr, win->start_expr);
    cr_expr(cr, win->end_expr);
  }
}

static int cr_select_cb(SqlWalker *w, SqlSelect *s) {
  ColRen *cr = (ColRen *)w;
  if (s->with)
    for (int i = 0; i < s->with->n; i++) sql_walk_select(w, s->with->a[i].select);
  for (SqlSelect *c = s; c; c = c->prior) {
    push(cr, c->from, NULL, 0);
    cr_list(cr, c->cols);
    cr_from(cr, c->from);
    cr_expr(cr, c->where);
    cr_list(cr, c->group_by);
    cr_expr(cr, c->having);
    cr_window(cr, c->windows);
    cr_list(cr, c->order_by);
    cr_expr(cr, c->limit);
    cr_expr(cr, c->offset);
    pop(cr);
  }
  return SQL_WALK_PRUNE;
}

/* Column names listed in parentheses in [start, end) of the text: the first
 * "( ... )" group there. */
static void edit_paren_list(ColRen *cr, int start, int end) {
  int open = find_token(cr->rn.text, start, end, TK_LP);
  if (open < 0) return;
  int close = find_token(cr->rn.text, open, end, TK_RP);
  edit_region(cr, open + 1, close < 0 ? end : close, 0);
}

/* REFERENCES tbl(cols) inside [start, end): the column list if tbl is t. */
static void cr_fk_refs(ColRen *cr, SqlSpan sp, const SqlForeignKey *fk) {
  if (cr->detect || !fk || !fk->table || util_stricmp(fk->table, cr->t->name) || !fk->to_cols)
    return;
  int r = find_token(cr->rn.text, sp.start, sp.start + sp.len, TK_REFERENCES);
  if (r >= 0) edit_paren_list(cr, r, sp.start + sp.len);
}

/* The column names of "SET a = x, (b, c) = y" whose SET keyword is at pos:
 * the text between SET or the previous value and each value. */
static void cr_set_names(ColRen *cr, SqlExprList *set, int pos) {
  for (int i = 0; pos >= 0 && i < set->n; i++) {
    SqlExpr *e = set->a[i].expr;
    if (!e) break;
    edit_region(cr, pos + (i == 0 ? 3 : 0), e->span.start, 0);
    pos = e->span.start + e->span.len;
  }
}

static void cr_stmt(ColRen *cr, SqlStmt *st) {
  const char *z = cr->rn.text;
  int zlen = (int)strlen(z);
  switch (st->kind) {
    case SQL_STMT_CREATE_TABLE: {
      SqlCreateTable *ct = &st->u.create_table;
      int self = !util_stricmp(ct->name.name, cr->t->name);
      if (self) push(cr, NULL, NULL, 1);
      for (int i = 0; i < ct->ncols; i++) {
        SqlColumnDef *cd = &ct->cols[i];
        if (self) {
          int type, n, k = next_token(z, cd->span.start, &type, &n);
          int m = token_names(&cr->rn, k);
          if (m) col_edit(cr, k, m);
        }
        for (int k = 0; k < cd->ncons; k++) {
          SqlConstraint *c = &cd->cons[k];
          if (c->type == SQL_CONS_REFERENCES) cr_fk_refs(cr, c->span, c->fk);
          if (self && c->type != SQL_CONS_DEFAULT) cr_expr(cr, c->expr);
        }
      }
      for (int k = 0; k < ct->ncons; k++) {
        SqlConstraint *c = &ct->cons[k];
        if (c->type == SQL_CONS_FOREIGN_KEY) {
          cr_fk_refs(cr, c->span, c->fk);
          if (self && !cr->detect) {
            int r = find_token(z, c->span.start, c->span.start + c->span.len, TK_REFERENCES);
            edit_paren_list(cr, c->span.start, r < 0 ? c->span.start + c->span.len : r);
          }
        }
        if (self) {
          cr_expr(cr, c->expr);
          cr_list(cr, c->columns);
        }
      }
      if (self) pop(cr);
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      SqlCreateIndex *ci = &st->u.create_index;
      if (util_stricmp(ci->table, cr->t->name)) break;
      push(cr, NULL, NULL, 1);
      cr_list(cr, ci->columns);
      cr_expr(cr, ci->where);
      pop(cr);
      break;
    }
    case SQL_STMT_CREATE_VIEW:
      if (st->u.create_view.select) sql_walk_select(&cr->rn.w, st->u.create_view.select);
      break;
    case SQL_STMT_CREATE_TRIGGER: {
      SqlCreateTrigger *tr = &st->u.create_trigger;
      cr->trig_on_t = !util_stricmp(tr->table, cr->t->name) &&
                      (!tr->table_schema || !util_stricmp(tr->table_schema, "main"));
      if (cr->trig_on_t && tr->update_of && !cr->detect) {
        int from = tr->name.span.start + tr->name.span.len;
        int of = find_token(z, from, zlen, TK_OF);
        int on = of >= 0 ? find_token(z, of, zlen, TK_ON) : -1;
        if (of >= 0 && on > of) edit_region(cr, of + 2, on, 0);
      }
      cr_expr(cr, tr->when);
      for (int i = 0; i < tr->nstmts; i++) cr_stmt(cr, tr->stmts[i]);
      cr->trig_on_t = 0;
      break;
    }
    case SQL_STMT_SELECT:
      sql_walk_select(&cr->rn.w, st->u.select);
      break;
    case SQL_STMT_INSERT: {
      SqlInsert *in = &st->u.insert;
      int is_t = !util_stricmp(in->table.name, cr->t->name) &&
                 (!in->table.schema || !util_stricmp(in->table.schema, "main"));
      if (in->with)
        for (int i = 0; i < in->with->n; i++) sql_walk_select(&cr->rn.w, in->with->a[i].select);
      if (is_t && in->columns && !cr->detect) {
        int from = in->table.span.start + in->table.span.len;
        int to = in->select ? in->select->span.start : st->span.start + st->span.len;
        edit_paren_list(cr, from, to);
      }
      if (in->select) sql_walk_select(&cr->rn.w, in->select);
      push(cr, NULL, NULL, is_t);
      int at = in->select ? in->select->span.start + in->select->span.len : st->span.start;
      for (SqlUpsert *u = in->upsert; u; u = u->next) {
        int set = -1, stop = st->span.start + st->span.len;
        if (u->set && u->set->n > 0 && u->set->a[0].expr) {
          int d = find_token(z, at, stop, TK_DO);
          set = d >= 0 ? find_token(z, d, stop, TK_SET) : -1;
        }
        if (is_t && set >= 0 && !cr->detect) cr_set_names(cr, u->set, set);
        if (u->set && u->set->n > 0 && u->set->a[u->set->n - 1].expr) {
          SqlExpr *le = u->set->a[u->set->n - 1].expr;
          at = le->span.start + le->span.len;
        }
        cr_list(cr, u->target);
        cr_expr(cr, u->target_where);
        cr_list(cr, u->set);
        cr_expr(cr, u->where);
      }
      pop(cr);
      break;
    }
    case SQL_STMT_UPDATE: {
      SqlUpdate *up = &st->u.update;
      cr_from(cr, up->from);
      push(cr, up->from, up->table, 0);
      if (up->table && item_is_t(cr, up->table) && up->set && !cr->detect)
        cr_set_names(cr, up->set, find_token(z, up->table->span.start, zlen, TK_SET));
      cr_list(cr, up->set);
      cr_expr(cr, up->where);
      pop(cr);
      break;
    }
    case SQL_STMT_DELETE: {
      SqlDelete *de = &st->u.del;
      push(cr, NULL, de->table, 0);
      cr_expr(cr, de->where);
      pop(cr);
      break;
    }
    default:
      break;
  }
}

/* sql with every reference to column old of t renamed, or NULL if none. */
static const char *colren_sql(Parse *p, const char *sql, const Table *t, const char *old,
                              const char *plain, const char *quoted, int bquote,
                              const char **first) {
  if (!sql) return NULL;
  SqlStmt *st = compile_ddl_reparse(p, sql);
  if (!st) return NULL;
  ColRen cr;
  memset(&cr, 0, sizeof cr);
  cr.rn.w.expr = cr_expr_cb;
  cr.rn.w.select = cr_select_cb;
  cr.rn.p = p;
  cr.rn.text = sql;
  cr.rn.old = old;
  cr.t = t;
  cr.plain = plain;
  cr.bquote = bquote;
  cr.detect = first != NULL;
  cr_stmt(&cr, st);
  if (first) *first = cr.rn.n ? (cr.first ? cr.first : old) : NULL;
  return apply_edits(&cr.rn, quoted);
}

/* The double-quoted form of name ("%w"), arena memory. */
static char *quote_name(Parse *p, const char *nn) {
  size_t ln = strlen(nn);
  char *quoted = compile_parse_alloc(p, 2 * ln + 3);
  if (!quoted) return NULL;
  size_t k = 0;
  quoted[k++] = '"';
  for (size_t i = 0; i < ln; i++) {
    if (nn[i] == '"') quoted[k++] = '"';
    quoted[k++] = nn[i];
  }
  quoted[k++] = '"';
  quoted[k] = 0;
  return quoted;
}

/* The table for RENAME COLUMN / DROP COLUMN (views and virtual tables
 * refused: "cannot <what> view ..."). */
static Table *alter_col_target(Parse *p, const SqlAlter *a, const char *what) {
  const SqlQualName *q = &a->table;
  int other = compile_parse_other_db(p, q->schema);
  View *v = other ? NULL : schema_find_view(p->schema, q->name);
  if (v && !schema_find_table(p->schema, q->name)) {
    compile_parse_error(p, "cannot %s view \"%s\"", what, v->name);
    return NULL;
  }
  Table *t = alter_target(p, a, 0);
  if (t && t->vtab_module) {
    compile_parse_error(p, "cannot %s virtual table \"%s\"", what, t->name);
    return NULL;
  }
  return t;
}

/* Updates for every object whose text names column old of t, as
 * colren_sql rewrites it. Returns the count, -1 after an error. */
static int colren_all(Parse *p, const Table *t, const char *old, const char *plain, int bquote,
                      const char *quoted, SchemaUpd **out) {
  int cap = 8, n = 0;
  SchemaUpd *u = compile_parse_alloc(p, sizeof *u * (size_t)cap);
  if (!u) return -1;
#define ADD_CU(...)                                                           \
  do {                                                                        \
    if (n == cap) {                                                           \
      SchemaUpd *nu = compile_parse_alloc(p, sizeof *nu * (size_t)(cap * 2)); \
      if (!nu) return -1;                                                     \
      memcpy(nu, u, sizeof *nu *(size_t)n);                                   \
      u = nu;                                                                 \
      cap *= 2;                                                               \
    }                                                                         \
    u[n++] = (SchemaUpd){__VA_ARGS__};                                        \
  } while (0)
  int pos = 0;
  Table *o;
  while ((o = schema_map_next(&p->schema->tables, &pos)) != NULL) {
    if (o->is_schema || !o->sql || o->vtab_module) continue;
    const char *x = colren_sql(p, o->sql, t, old, plain, quoted, bquote, NULL);
    if (parse_failed(p)) return -1;
    if (x) ADD_CU("table", o->name, NULL, NULL, x);
    for (Index *i = o->indexes; i; i = i->next) {
      if (i == o->pk_index || i->is_autoindex || !i->sql) continue;
      x = colren_sql(p, i->sql, t, old, plain, quoted, bquote, NULL);
      if (parse_failed(p)) return -1;
      if (x) ADD_CU("index", i->name, NULL, NULL, x);
    }
  }
  pos = 0;
  View *v;
  while ((v = schema_map_next(&p->schema->views, &pos)) != NULL) {
    const char *x = colren_sql(p, v->sql, t, old, plain, quoted, bquote, NULL);
    if (parse_failed(p)) return -1;
    if (x) ADD_CU("view", v->name, NULL, NULL, x);
  }
  pos = 0;
  Trigger *g;
  while ((g = schema_map_next(&p->schema->triggers, &pos)) != NULL) {
    const char *x = colren_sql(p, g->sql, t, old, plain, quoted, bquote, NULL);
    if (parse_failed(p)) return -1;
    if (x) ADD_CU("trigger", g->name, NULL, NULL, x);
  }
#undef ADD_CU
  *out = u;
  return n;
}

/* The new text of object (type, name) among the updates, else old. */
static const char *upd_sql(const SchemaUpd *u, int n, const char *type, const char *name,
                           const char *old) {
  for (int i = 0; i < n; i++)
    if (!strcmp(u[i].type, type) && !util_stricmp(u[i].name, name) && u[i].new_sql)
      return u[i].new_sql;
  return old;
}

/* SQLite re-reads the schema after a rename: a view that no longer
 * resolves (the column of a subquery or CTE renamed under it) fails with
 * "error in view v after rename: ..." at run time. The check runs on a
 * scratch schema holding the new table and every view's new text. Returns
 * 1 after emitting that error (or failing). */
static int after_rename_check(Parse *p, const Table *t, const SchemaUpd *u, int n) {
  Schema *sc = schema_new();
  if (!sc) {
    compile_parse_nomem(p);
    return 1;
  }
  char *msg = NULL;
  int ok = 1, pos = 0;
  Table *o;
  while (ok && (o = schema_map_next(&p->schema->tables, &pos)) != NULL) {
    if (o != t) {
      ok = schema_add_table(sc, o) == SHALE_OK;
      continue;
    }
    const char *sql = upd_sql(u, n, "table", t->name, t->sql);
    SqlStmt *st = compile_ddl_reparse(p, sql);
    Table *nt = NULL;
    if (!st || st->kind != SQL_STMT_CREATE_TABLE ||
        compile_schema_table_from_create(sc, st, sql, &nt, &msg) != SHALE_OK ||
        schema_add_table(sc, nt) != SHALE_OK)
      ok = 0;
    else
      nt->root = t->root;
  }
  pos = 0;
  View *v;
  while (ok && (v = schema_map_next(&p->schema->views, &pos)) != NULL) {
    const char *sql = upd_sql(u, n, "view", v->name, v->sql);
    SqlStmt *st = compile_ddl_reparse(p, sql);
    View *nv = NULL;
    if (!st || st->kind != SQL_STMT_CREATE_VIEW ||
        compile_schema_view_from_create(sc, st, sql, &nv, &msg) != SHALE_OK ||
        schema_add_view(sc, nv) != SHALE_OK)
      ok = 0;
  }
  if (!ok) { /* should not happen: the texts were valid before the edit */
    schema_free(sc);
    shale_free(msg);
    if (!parse_failed(p)) compile_parse_nomem(p);
    return 1;
  }
  int cap = 0;
  pos = 0;
  while (schema_map_next(&p->schema->views, &pos)) cap++;
  pos = 0;
  while (schema_map_next(&p->schema->triggers, &pos)) cap++;
  const char **order = names_in_order(p, cap);
  int bad = 0;
  for (int i = 0; order && order[i] && !bad; i++) {
    if (order[i][0] != 'v') continue;
    View *nv = schema_find_view(sc, order[i] + 1);
    if (nv) bad = check_view_in(p, sc, nv, " after rename", &msg);
  }
  if (bad && msg) {
    compile_parse_need_write(p);
    vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, msg, -1);
  }
  shale_free(msg);
  schema_free(sc);
  return bad || parse_failed(p);
}

static int rename_column(Parse *p, const SqlStmt *s) {
  const SqlAlter *a = &s->u.alter;
  Table *t = alter_col_target(p, a, "rename columns of");
  if (!t) return 1;
  int ci = schema_table_column_index(t, a->old_name);
  if (ci < 0) {
    compile_parse_error(p, "no such column: \"%s\"", a->old_name);
    return 1;
  }
  if (check_schema(p)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  const char *nn = a->new_name;
  /* was the new name written quoted? (the statement's last token) */
  int bquote = 0, i = s->span.start, end = s->span.start + s->span.len, last = -1;
  while (i < end) {
    int type, n;
    i = next_token(p->sql, i, &type, &n);
    if (n <= 0 || i >= end) break;
    last = i;
    i += n;
  }
  if (last >= 0 && strchr("\"'`[", p->sql[last])) bquote = 1;
  char *quoted = quote_name(p, nn);
  char *plain = compile_parse_strdup(p, nn);
  if (!quoted || !plain) return 1;
  compile_parse_need_write(p);
  also_write_temp(p);
  int dup = schema_table_column_index(t, nn);
  if (dup >= 0 && dup != ci) {
    /* the new text's later column of the two is the duplicate */
    halt_with(p, util_mprintf("error in table %s after rename: duplicate column name: %s", t->name,
                              ci > dup ? nn : t->cols[dup].name));
    return parse_failed(p);
  }
  SchemaUpd *u = NULL;
  int n = colren_all(p, t, t->cols[ci].name, plain, bquote, quoted, &u);
  if (n < 0) return 1;
  if (after_rename_check(p, t, u, n)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  schema_update(p, u, n);
  compile_ddl_finish(p);
  TempRen tr = {
      .t = t, .col = t->cols[ci].name, .plain = plain, .quoted = quoted, .bquote = bquote};
  rename_in_temp(p, &tr);
  return parse_failed(p);
}

/* ----------------------------------------------------------- DROP COLUMN */

/* "error in <kind> <name> after drop column: no such column: x" (a run-time
 * error, as SQLite reports the failed schema check) when sql still names
 * column col of t. Returns 1 if so. */
static int drop_check(Parse *p, const Table *t, const char *col, const char *sql, const char *kind,
                      const char *name) {
  const char *first = NULL;
  colren_sql(p, sql, t, col, col, col, 0, &first);
  if (parse_failed(p)) return 1;
  if (!first) return 0;
  char *m = util_mprintf("error in %s %s after drop column: no such column: %s", kind, name, first);
  if (m)
    vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, m, -1);
  else
    compile_parse_nomem(p);
  shale_free(m);
  return 1;
}

/* Rewrite every row of t without the stored slot dslot. */
static void drop_rewrite_rows(Parse *p, const Table *t, int dslot) {
  int cur = emit_cursor(p);
  int n = t->nstored;
  int r = emit_regs(p, n + 2);
  int done = emit_label(p), eph = -1;
  if (t->without_rowid) {
    eph = emit_cursor(p);
    emit(p, OP_OpenEphemeral, eph, n, 0);
  }
  compile_parse_open_table(p, cur, t, !t->without_rowid);
  emit(p, OP_Rewind, cur, done, 0);
  int top = emit_addr(p);
  int k = 0;
  for (int j = 0; j < n; j++) {
    if (j == dslot) continue;
    int c = -1;
    for (int i = 0; i < t->ncol; i++)
      if (t->cols[i].storage == j) {
        c = i;
        break;
      }
    if (c >= 0 && c == t->rowid_alias)
      emit(p, OP_Null, 0, r + k, 0);
    else if (c >= 0)
      compile_code_column(p, t, cur, c, r + k);
    else
      emit(p, OP_Column, cur, j, r + k);
    k++;
  }
  emit(p, OP_MakeRecord, r, k, r + n);
  if (t->without_rowid) {
    emit(p, OP_NewRowid, eph, r + n + 1, 0);
    emit(p, OP_Insert, eph, r + n, r + n + 1);
  } else {
    emit(p, OP_Rowid, cur, r + n + 1, 0);
    emit(p, OP_Insert, cur, r + n, r + n + 1);
  }
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
  emit(p, OP_Close, cur, 0, 0);
  if (!t->without_rowid) return;
  /* a WITHOUT ROWID key changes as a whole: empty the tree, then insert the
   * new records kept in eph */
  int done2 = emit_label(p);
  emit(p, OP_Clear, (int)t->root, p->idb, 0);
  compile_parse_open_table(p, cur, t, 1);
  emit(p, OP_Rewind, eph, done2, 0);
  int top2 = emit_addr(p);
  emit(p, OP_RowData, eph, r + n, 0);
  emit(p, OP_IdxInsert, cur, r + n, 0);
  emit(p, OP_Next, eph, top2, 0);
  emit_resolve(p, done2);
  emit(p, OP_Close, cur, 0, 0);
  emit(p, OP_Close, eph, 0, 0);
}

static int drop_column(Parse *p, const SqlStmt *s) {
  const SqlAlter *a = &s->u.alter;
  Table *t = alter_col_target(p, a, "drop column from");
  if (!t) return 1;
  int ci = schema_table_column_index(t, a->old_name);
  if (ci < 0) {
    compile_parse_error(p, "no such column: \"%s\"", a->old_name);
    return 1;
  }
  const Column *col = &t->cols[ci];
  if (col->pk) {
    compile_parse_error(p, "cannot drop PRIMARY KEY column: \"%s\"", col->name);
    return 1;
  }
  if (col->unique) {
    compile_parse_error(p, "cannot drop UNIQUE column: \"%s\"", col->name);
    return 1;
  }
  if (t->ncol <= 1) {
    compile_parse_error(p, "cannot drop column \"%s\": no other columns exist", col->name);
    return 1;
  }
  if (check_schema(p)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  /* the new CREATE TABLE text: from the column to the next one, or from
   * the ',' before it to the token after it when it is the last */
  SqlStmt *old = compile_ddl_reparse(p, t->sql);
  if (!old || old->kind != SQL_STMT_CREATE_TABLE || old->u.create_table.ncols != t->ncol) {
    if (!parse_failed(p))
      compile_parse_error_code(p, SHALE_CORRUPT, "malformed database schema (%s)", t->name);
    return 1;
  }
  const SqlCreateTable *oct = &old->u.create_table;
  int from, to;
  if (ci + 1 < oct->ncols) {
    from = oct->cols[ci].span.start;
    to = oct->cols[ci + 1].span.start;
  } else {
    from = skip_space(t->sql, oct->cols[ci - 1].span.start + oct->cols[ci - 1].span.len);
    to = skip_space(t->sql, oct->cols[ci].span.start + oct->cols[ci].span.len);
  }
  size_t lold = strlen(t->sql);
  char *sql = compile_parse_alloc(p, lold + 1);
  if (!sql) return 1;
  memcpy(sql, t->sql, (size_t)from);
  memcpy(sql + from, t->sql + to, lold - (size_t)to + 1);
  compile_parse_need_write(p);
  also_write_temp(p);
  /* the schema as SQLite re-reads it: the table, then its dependants */
  SqlStmt *nst = compile_ddl_reparse(p, sql);
  if (!nst) return 1;
  if (drop_check(p, t, col->name, sql, "table", t->name)) {
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  Schema *scratch = compile_ddl_scratch_with(p, NULL);
  if (!scratch) return 1;
  Table *nt = NULL;
  char *msg = NULL;
  int rc = compile_schema_table_from_create(scratch, nst, sql, &nt, &msg);
  schema_free(scratch);
  if (rc == SHALE_NOMEM) {
    shale_free(msg);
    compile_parse_nomem(p);
    return 1;
  }
  if (rc != SHALE_OK) {
    char *m = util_mprintf("error in table %s after drop column: %s", t->name, msg ? msg : "?");
    if (m)
      vm_builder_add_text(&p->b, OP_Halt, SHALE_ERROR, VM_OE_ABORT, 0, m, -1);
    else
      compile_parse_nomem(p);
    shale_free(m);
    shale_free(msg);
    compile_ddl_finish(p);
    return parse_failed(p);
  }
  shale_free(msg);
  for (Index *i = t->indexes; i; i = i->next)
    if (i != t->pk_index && !i->is_autoindex && i->sql &&
        drop_check(p, t, col->name, i->sql, "index", i->name)) {
      compile_ddl_finish(p);
      return parse_failed(p);
    }
  int cap = 0, pos = 0;
  while (schema_map_next(&p->schema->views, &pos)) cap++;
  pos = 0;
  while (schema_map_next(&p->schema->triggers, &pos)) cap++;
  const char **order = names_in_order(p, cap);
  if (!order) return 1;
  for (int i = 0; order[i]; i++) {
    int bad;
    if (order[i][0] == 'v') {
      View *v = schema_find_view(p->schema, order[i] + 1);
      bad = v && drop_check(p, t, col->name, v->sql, "view", v->name);
    } else {
      Trigger *g = schema_find_trigger(p->schema, order[i] + 1);
      bad = g && drop_check(p, t, col->name, g->sql, "trigger", g->name);
    }
    if (bad) {
      compile_ddl_finish(p);
      return parse_failed(p);
    }
  }
  if (parse_failed(p)) return 1;
  SchemaUpd u = {"table", t->name, NULL, NULL, sql};
  schema_update(p, &u, 1);
  if (col->storage >= 0) drop_rewrite_rows(p, t, col->storage);
  compile_ddl_finish(p);
  return parse_failed(p);
}

int compile_alter(Parse *p, const SqlStmt *s) {
  const SqlAlter *a = &s->u.alter;
  switch (a->action) {
    case SQL_ALTER_ADD_COLUMN:
      return add_column(p, s);
    case SQL_ALTER_RENAME_TABLE:
      return rename_table(p, s);
    case SQL_ALTER_RENAME_COLUMN:
      return rename_column(p, s);
    default:
      return drop_column(p, s);
  }
}
