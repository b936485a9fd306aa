/*
 * compile_ddl.c -- code generation for CREATE TABLE (also ... AS SELECT),
 * CREATE VIEW and CREATE TRIGGER, and the helpers every DDL
 * generator shares (compile_ddl_int.h): the sqlite_schema rows, the schema
 * cookie, the stored CREATE text.
 *
 * Owns: nothing beyond a call; scratch schemas are freed before returning.
 *
 * Invariants:
 *  1. Validation first, code second: every error SQLite reports at prepare
 *     time is reported here, in SQLite's order and words, before any op is
 *     emitted (the checks on columns and constraints are those of
 *     compile_schema_table_from_create, run on a scratch schema).
 *  2. Root pages are allocated in SQLite's order (the table, then each
 *     automatic index in constraint order, then sqlite_sequence), and rows
 *     are appended to sqlite_schema in the same order, so a file Shale
 *     writes has the rootpage values SQLite would give.
 *  3. The sql column is exactly SQLite's: "CREATE TABLE " / "CREATE VIEW " /
 *     "CREATE TRIGGER " + the text from the object name to the statement's
 *     last token; a CREATE TABLE ... AS SELECT stores the generated
 *     "CREATE TABLE name(col TYPE, ...)" text with SQLite's quoting and
 *     layout rules; automatic indexes store NULL.
 */
#include <string.h>

#include "compile_ddl_int.h"

/* ---------------------------------------------------------------- helpers */

/* The name token as written (quotes kept), for "table \"T\" already
 * exists". Arena memory. */
static const char *ddl_name_token(Parse *p, const SqlQualName *q) {
  int end = q->span.start + q->span.len;
  int n = end - q->name_start;
  if (!p->sql || n <= 0) return q->name;
  char *z = util_arena_strndup(&p->arena, p->sql + q->name_start, (size_t)n);
  if (!z) compile_parse_nomem(p);
  return z ? z : q->name;
}

/* Offset of what follows the statement: its ';' or the end of the input
 * (comments and white space before it skipped), SQLite's last token. */
static int stmt_lookahead(Parse *p, const SqlStmt *s) {
  const char *z = p->b.prog && p->b.prog->sql ? p->b.prog->sql : p->sql;
  int len = (int)strlen(z);
  int i = s->span.start + s->span.len;
  while (i < len) {
    int type = 0, n = sql_token(z + i, len - i, &type);
    if (n <= 0 || type != TK_SPACE) break;
    i += n;
  }
  return i;
}

int compile_ddl_stored_end(Parse *p, const SqlStmt *s, int rule) {
  int end = s->span.start + s->span.len;
  if (rule == DDL_END_LAST_TOKEN) return end;
  int la = stmt_lookahead(p, s);
  if (rule == DDL_END_TRIM) {
    while (la > end && strchr(" \t\n\r\f\v", p->sql[la - 1])) la--;
  }
  return la;
}

const char *compile_ddl_stored_sql(Parse *p, const SqlStmt *s, const SqlQualName *q,
                                   const char *what, int rule) {
  int end = compile_ddl_stored_end(p, s, rule);
  int n = end - q->name_start;
  if (n < 0) n = 0;
  size_t lw = strlen(what);
  char *z = util_arena_alloc(&p->arena, 7 + lw + 1 + (size_t)n + 1);
  if (!z) {
    compile_parse_nomem(p);
    return NULL;
  }
  memcpy(z, "CREATE ", 7);
  memcpy(z + 7, what, lw);
  z[7 + lw] = ' ';
  memcpy(z + 8 + lw, p->sql + q->name_start, (size_t)n);
  z[8 + lw + (size_t)n] = 0;
  return z;
}

int compile_ddl_check_db(Parse *p, const SqlQualName *q) {
  if (!q->schema || compile_parse_find_db(p, q->schema) >= 0 ||
      (compile_parse_ndb(p) == 1 && !util_stricmp(q->schema, "temp")))
    return 0;
  compile_parse_error(p, "unknown database %s", q->schema);
  return 1;
}

void compile_ddl_emit_text(Parse *p, int reg, const char *z) {
  if (z)
    vm_builder_add_text(&p->b, OP_String, 0, reg, 0, z, -1);
  else
    emit(p, OP_Null, 0, reg, 0);
}

int compile_ddl_open_schema(Parse *p) {
  int cur = emit_cursor(p);
  vm_builder_add_i4(&p->b, OP_OpenWrite, cur, 1, p->idb, 5);
  return cur;
}

void compile_ddl_schema_insert(Parse *p, int cur, const char *type, const char *name,
                               const char *tbl, int root_reg, const char *sql) {
  int r = emit_regs(p, 7);
  compile_ddl_emit_text(p, r, type);
  compile_ddl_emit_text(p, r + 1, name);
  compile_ddl_emit_text(p, r + 2, tbl);
  if (root_reg)
    emit(p, OP_SCopy, root_reg, r + 3, 0);
  else
    emit(p, OP_Integer, 0, r + 3, 0);
  compile_ddl_emit_text(p, r + 4, sql);
  emit(p, OP_MakeRecord, r, 5, r + 5);
  emit(p, OP_NewRowid, cur, r + 6, 0);
  emit(p, OP_Insert, cur, r + 5, r + 6);
}

void compile_ddl_schema_delete(Parse *p, const DdlObj *objs, int n) {
  if (n <= 0) return;
  int cur = compile_ddl_open_schema(p);
  int r = emit_regs(p, 4);
  int done = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, cur, done, 0);
  int top = emit_addr(p);
  emit(p, OP_Column, cur, 0, r);
  emit(p, OP_Column, cur, 1, r + 1);
  for (int i = 0; i < n; i++) {
    int skip = emit_label(p);
    compile_ddl_emit_text(p, r + 2, objs[i].name);
    int a = emit(p, OP_Ne, r + 2, skip, r + 1);
    vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
    compile_ddl_emit_text(p, r + 3, objs[i].type);
    a = emit(p, OP_Ne, r + 3, skip, r);
    vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
    emit(p, OP_Delete, cur, 0, 0);
    emit(p, OP_Goto, 0, next, 0);
    emit_resolve(p, skip);
  }
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
  emit(p, OP_Close, cur, 0, 0);
}

void compile_ddl_delete_rows_eq(Parse *p, const Table *tab, int col, const char *z) {
  if (!tab || !tab->root) return;
  int cur = emit_cursor(p);
  vm_builder_add_i4(&p->b, OP_OpenWrite, cur, (int)tab->root, compile_parse_table_db(p, tab),
                    tab->ncol);
  int r = emit_regs(p, 2);
  int done = emit_label(p), next = emit_label(p);
  compile_ddl_emit_text(p, r + 1, z);
  emit(p, OP_Rewind, cur, done, 0);
  int top = emit_addr(p);
  emit(p, OP_Column, cur, col, r);
  int a = emit(p, OP_Ne, r + 1, next, r);
  vm_builder_set_p5(&p->b, a, VM_JUMPIFNULL);
  emit(p, OP_Delete, cur, 0, 0);
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
  emit(p, OP_Close, cur, 0, 0);
}

void compile_ddl_finish(Parse *p) {
  emit(p, OP_SetCookie, p->idb, BTREE_META_SCHEMA_COOKIE, (int)(p->schema->cookie + 1));
  emit(p, OP_ParseSchema, p->idb, 0, 0);
  p->schema_changed = 1;
}

SqlStmt *compile_ddl_reparse(Parse *p, const char *sql) {
  SqlStmt *st = NULL;
  char *err = NULL;
  int rc = sql_parse(&p->arena, sql, -1, &st, NULL, &err);
  if (rc != SHALE_OK || !st) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error_code(p, SHALE_CORRUPT, "malformed database schema - %s", err ? err : "?");
    shale_free(err);
    return NULL;
  }
  return st;
}

Schema *compile_ddl_scratch_with(Parse *p, Table *tab) {
  Schema *s = schema_new();
  if (!s || (tab && schema_add_table(s, tab) != SHALE_OK)) {
    schema_free(s);
    compile_parse_nomem(p);
    return NULL;
  }
  /* the target's schema format (DESC in indexes depends on it); 0: the
   * first CREATE of this transaction writes it (code_file_format) */
  const Schema *real = compile_parse_db_schema(p, p->idb);
  s->file_format = real && real->file_format              ? real->file_format
                   : p->env && p->env->legacy_file_format ? 1
                                                          : 4;
  return s;
}

/* Record the error of a schema_*_from_create call. */
void compile_ddl_build_error(Parse *p, int rc, char *msg) {
  if (rc == SHALE_NOMEM)
    compile_parse_nomem(p);
  else if (rc == SHALE_ERROR && msg && !strncmp(msg, "no such collation sequence", 26))
    compile_parse_error_code(p, SHALE_ERROR_MISSING_COLLSEQ, "%s", msg);
  else
    compile_parse_error_code(p, rc, "%s", msg ? msg : "error");
  shale_free(msg);
}

/* The file format and text encoding SQLite writes on the first CREATE of a
 * database whose header has none yet (schema format 0). Under
 * LEGACY_FILE_FORMAT the first CREATE of a database (schema cookie still
 * 0; Shale's new files carry format 4 from the start) writes format 1. */
static void code_file_format(Parse *p) {
  if (p->env && p->env->legacy_file_format && p->schema && p->schema->cookie == 0) {
    emit(p, OP_SetCookie, p->idb, BTREE_META_SCHEMA_FORMAT, 1);
    return;
  }
  int r = emit_regs(p, 1);
  int skip = emit_label(p);
  emit(p, OP_ReadCookie, p->idb, r, BTREE_META_SCHEMA_FORMAT);
  emit(p, OP_If, r, skip, 0);
  emit(p, OP_SetCookie, p->idb, BTREE_META_SCHEMA_FORMAT, 4);
  emit(p, OP_SetCookie, p->idb, BTREE_META_TEXT_ENCODING, 1);
  emit_resolve(p, skip);
}

void compile_ddl_file_format(Parse *p) { code_file_format(p); }

/* The checks SQLite's StartTable makes for a new table or view name.
 * Returns 1 when done (error, or IF NOT EXISTS met an existing object). */
static int check_new_table_name(Parse *p, const SqlQualName *q, int temp, int if_not_exists) {
  if (temp && q->schema && compile_parse_find_db(p, q->schema) != 1) {
    compile_parse_error(p, "temporary %s name must be unqualified", "table");
    return 1;
  }
  if (compile_ddl_check_db(p, q)) return 1;
  const char *name = q->name;
  if (!util_strnicmp(name, "sqlite_", 7)) {
    compile_parse_error(p, "object name reserved for internal use: %s", name);
    return 1;
  }
  Table *t = schema_find_table(p->schema, name);
  View *v = t ? NULL : schema_find_view(p->schema, name);
  if (t || v) {
    if (if_not_exists) { /* a no-op, yet not read-only (SQLite's ForceNotReadOnly) */
      compile_parse_need_read(p);
      p->schema_changed = 1;
      return 1;
    }
    compile_parse_error(p, "%s %s already exists", v ? "view" : "table", ddl_name_token(p, q));
    return 1;
  }
  if (schema_find_index(p->schema, name)) {
    compile_parse_error(p, "there is already an index named %s", name);
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------- CREATE TABLE ... */

static const char SEQ_SQL[] = "CREATE TABLE sqlite_sequence(name,seq)";

/* Bytes SQLite counts for an identifier in the CTAS text: the name, its
 * doubled quotes and 2. */
static int ident_len(const char *z) {
  int n = 2;
  for (; *z; z++) n += 1 + (*z == '"');
  return n;
}

/* Bytes needed (upper bound) to write z by ident_put. */
static size_t ident_room(const char *z) { return 2 * strlen(z) + 3; }

/* Write identifier z at out (room from ident_room), double-quoted when it is
 * not a plain [A-Za-z0-9_]+ word not starting with a digit, or is a
 * keyword; returns the bytes written. */
static size_t ident_put(char *out, const char *z) {
  int j = 0;
  while (z[j] && ((z[j] >= 'a' && z[j] <= 'z') || (z[j] >= 'A' && z[j] <= 'Z') ||
                  (z[j] >= '0' && z[j] <= '9') || z[j] == '_'))
    j++;
  int quote = j == 0 || z[j] != 0 || (z[0] >= '0' && z[0] <= '9') || sql_keyword(z, j) != TK_ID;
  size_t k = 0;
  if (!quote) {
    memcpy(out, z, (size_t)j);
    return (size_t)j;
  }
  out[k++] = '"';
  for (; *z; z++) {
    if (*z == '"') out[k++] = '"';
    out[k++] = *z;
  }
  out[k++] = '"';
  return k;
}

/* The text SQLite stores for CREATE TABLE name AS SELECT: columns with the
 * type of their affinity, on one line when short, else one per line. */
static const char *ctas_sql(Parse *p, const char *name, const Table *t) {
  size_t room = 32 + ident_room(name);
  int n = ident_len(name);
  for (int i = 0; i < t->ncol; i++) {
    room += ident_room(t->cols[i].name) + 16;
    n += ident_len(t->cols[i].name) + 5;
  }
  char *z = util_arena_alloc(&p->arena, room);
  if (!z) {
    compile_parse_nomem(p);
    return NULL;
  }
  const char *sep1 = n < 50 ? "" : "\n  ", *sep = n < 50 ? "," : ",\n  ",
             *end = n < 50 ? ")" : "\n)";
  size_t k = 0;
  memcpy(z, "CREATE TABLE ", 13);
  k = 13;
  k += ident_put(z + k, name);
  z[k++] = '(';
  for (int i = 0; i < t->ncol; i++) {
    const char *s = i ? sep : sep1;
    memcpy(z + k, s, strlen(s));
    k += strlen(s);
    k += ident_put(z + k, t->cols[i].name);
    const char *ty = "";
    switch (t->cols[i].affinity) {
      case AFF_TEXT:
        ty = " TEXT";
        break;
      case AFF_NUMERIC:
        ty = " NUM";
        break;
      case AFF_INTEGER:
        ty = " INT";
        break;
      case AFF_REAL:
        ty = " REAL";
        break;
      default:
        break;
    }
    memcpy(z + k, ty, strlen(ty));
    k += strlen(ty);
  }
  memcpy(z + k, end, strlen(end) + 1);
  return z;
}

/* CREATE TABLE name AS SELECT: the table's columns come from the query's
 * result (names and affinities); the rows are inserted as the query runs. */
static int create_table_as(Parse *p, const SqlStmt *s) {
  const SqlCreateTable *ct = &s->u.create_table;
  SqlSelect *sel = ct->as_select;
  if (compile_select_resolve(p, sel, NULL) || parse_failed(p)) return 1;
  Table *rt = compile_select_result_table(p, sel, ct->name.name, NULL);
  if (!rt || parse_failed(p)) return 1;
  const char *sql = ctas_sql(p, ct->name.name, rt);
  if (!sql) return 1;
  compile_parse_need_write(p);
  code_file_format(p);
  int root = emit_regs(p, 1);
  emit(p, OP_CreateBtree, p->idb, root, BTREE_INTKEY);
  int cur = emit_cursor(p);
  int a = vm_builder_add_i4(&p->b, OP_OpenWrite, cur, root, p->idb, rt->ncol);
  vm_builder_set_p5(&p->b, a, VM_OPFLAG_P2ISREG);
  /* each row goes through a subroutine that applies the columns'
   * affinities (a compound's later arms may not have them) and appends it */
  char *aff = compile_parse_alloc(p, (size_t)rt->ncol + 1);
  if (!aff) return 1;
  for (int i = 0; i < rt->ncol; i++)
    aff[i] = rt->cols[i].affinity ? rt->cols[i].affinity : AFF_BLOB;
  int ret = emit_regs(p, 1), out = emit_regs(p, rt->ncol + 2);
  int body = emit_label(p), after = emit_label(p);
  emit(p, OP_Goto, 0, after, 0);
  emit_resolve(p, body);
  vm_builder_add_text(&p->b, OP_MakeRecord, out, rt->ncol, out + rt->ncol, aff, -1);
  emit(p, OP_NewRowid, cur, out + rt->ncol + 1, 0);
  emit(p, OP_Insert, cur, out + rt->ncol, out + rt->ncol + 1);
  emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, after);
  SelectDest dest = {.kind = SD_REGS, .reg = ret, .cursor = body, .out = out, .nreg = rt->ncol};
  compile_select_code(p, sel, &dest);
  emit(p, OP_Close, cur, 0, 0);
  int sc = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, sc, "table", ct->name.name, ct->name.name, root, sql);
  emit(p, OP_Close, sc, 0, 0);
  compile_ddl_finish(p);
  return parse_failed(p);
}

int compile_ddl_create_table(Parse *p, const SqlStmt *s) {
  const SqlCreateTable *ct = &s->u.create_table;
  if (check_new_table_name(p, &ct->name, ct->temp, ct->if_not_exists)) return parse_failed(p);
  if (ct->as_select) return create_table_as(p, s);
  const char *sql = compile_ddl_stored_sql(p, s, &ct->name, "TABLE",
                                           ct->options ? DDL_END_LOOKAHEAD : DDL_END_LAST_TOKEN);
  if (!sql) return 1;
  Schema *scratch = compile_ddl_scratch_with(p, NULL);
  if (!scratch) return 1;
  Table *t = NULL;
  char *msg = NULL;
  SchemaFuncs sf = {p->env ? p->env->funcs : NULL, p->env ? p->env->untrusted : 0};
  int rc = compile_schema_table_from_create_src(scratch, s, sql, p->sql, &sf, &t, &msg);
  if (rc != SHALE_OK) {
    compile_ddl_build_error(p, rc, msg);
    schema_free(scratch);
    return 1;
  }
  if (p->env && p->env->max_columns > 0 && t->ncol > p->env->max_columns) {
    compile_parse_error(p, "too many columns on %s", t->name); /* SQLITE_LIMIT_COLUMN */
    schema_free(scratch);
    return 1;
  }
  compile_parse_need_write(p);
  code_file_format(p);
  int root = emit_regs(p, 1);
  emit(p, OP_CreateBtree, p->idb, root, t->without_rowid ? BTREE_BLOBKEY : BTREE_INTKEY);
  int cur = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, cur, "table", t->name, t->name, root, sql);
  for (const Index *idx = t->indexes; idx; idx = idx->next) {
    if (idx == t->pk_index) continue;
    int r = emit_regs(p, 1);
    emit(p, OP_CreateBtree, p->idb, r, BTREE_BLOBKEY);
    compile_ddl_schema_insert(p, cur, "index", idx->name, t->name, r, NULL);
  }
  if (t->autoincrement && !schema_find_table(p->schema, "sqlite_sequence")) {
    int r = emit_regs(p, 1);
    emit(p, OP_CreateBtree, p->idb, r, BTREE_INTKEY);
    compile_ddl_schema_insert(p, cur, "table", "sqlite_sequence", "sqlite_sequence", r, SEQ_SQL);
  }
  emit(p, OP_Close, cur, 0, 0);
  compile_ddl_finish(p);
  schema_free(scratch);
  return parse_failed(p);
}

/* ------------------------------------------------------------ CREATE VIEW */

int compile_ddl_create_view(Parse *p, const SqlStmt *s) {
  const SqlCreateView *cv = &s->u.create_view;
  if (s->nvar > 0) {
    compile_parse_error(p, "parameters are not allowed in views");
    return 1;
  }
  if (check_new_table_name(p, &cv->name, cv->temp, cv->if_not_exists)) return parse_failed(p);
  const char *sql = compile_ddl_stored_sql(p, s, &cv->name, "VIEW", DDL_END_TRIM);
  if (!sql) return 1;
  compile_parse_need_write(p);
  code_file_format(p);
  int cur = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, cur, "view", cv->name.name, cv->name.name, 0, sql);
  emit(p, OP_Close, cur, 0, 0);
  compile_ddl_finish(p);
  return parse_failed(p);
}

/* --------------------------------------------------- CREATE VIRTUAL TABLE */

/* The row SQLite writes: "CREATE VIRTUAL TABLE " and the text from the
 * table's name (unqualified) to the statement's last token, then xCreate
 * when it runs (VCreate; src/compile/compile_vtab.c connects later uses). */
int compile_ddl_create_vtab(Parse *p, const SqlStmt *s) {
  const SqlCreateVtab *vt = &s->u.create_vtab;
  if (check_new_table_name(p, &vt->name, 0, vt->if_not_exists)) return parse_failed(p);
  int from = vt->name.name_start, end = s->span.start + s->span.len;
  if (!p->sql || end < from) return compile_parse_error(p, "malformed CREATE VIRTUAL TABLE"), 1;
  char *text = util_mprintf("CREATE VIRTUAL TABLE %.*s", end - from, p->sql + from);
  if (!text) return compile_parse_nomem(p), 1;
  compile_parse_need_write(p);
  code_file_format(p);
  int cur = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, cur, "table", vt->name.name, vt->name.name, 0, text);
  emit(p, OP_Close, cur, 0, 0);
  int r = emit_regs(p, 1);
  vm_builder_add_text(&p->b, OP_String, 0, r, 0, text, -1);
  vm_builder_add_text(&p->b, OP_VCreate, p->idb, r, 0, compile_parse_db_name(p, p->idb), -1);
  shale_free(text);
  compile_ddl_finish(p);
  return parse_failed(p);
}

/* --------------------------------------------------------- CREATE TRIGGER */

/* The checks SQLite makes when it reduces the trigger header (before the
 * body): 1 after compile_parse_error, 2 if the trigger exists and IF NOT EXISTS was
 * given, else 0 with *on / *onv the table or view. */
static int trigger_header(Parse *p, const SqlStmt *s, Table **on_out, View **onv_out) {
  const SqlCreateTrigger *tr = &s->u.create_trigger;
  if (tr->temp && tr->name.schema) {
    compile_parse_error(p, "temporary trigger may not have qualified name");
    return 1;
  }
  if (compile_ddl_check_db(p, &tr->name)) return 1;
  int tdb = p->idb;
  if (tr->table_schema) {
    tdb = compile_parse_find_db(p, tr->table_schema);
    if (tdb < 0 && compile_parse_ndb(p) == 1 && !util_stricmp(tr->table_schema, "temp")) tdb = 1;
    if (tdb < 0) {
      compile_parse_error(p, "unknown database %s", tr->table_schema);
      return 1;
    }
    if (tdb != p->idb && p->idb != 1) {
      compile_parse_error(p, "trigger %s cannot reference objects in database %s", tr->name.name,
                          tr->table_schema);
      return 1;
    }
  }
  Table *on = NULL;
  View *onv = NULL;
  if (p->idb == 1 && !tr->table_schema &&
      compile_parse_ndb(p) > 1) { /* TEMP: any database's table */
    int d;
    on = compile_parse_find_object(p, PARSE_OBJ_TABLE, NULL, tr->table, &d);
    if (!on) onv = compile_parse_find_object(p, PARSE_OBJ_VIEW, NULL, tr->table, &d);
  } else {
    Schema *ts = compile_parse_ndb(p) > 1 ? compile_parse_db_schema(p, tdb) : p->schema;
    on = ts ? schema_find_table(ts, tr->table) : NULL;
    onv = on || !ts ? NULL : schema_find_view(ts, tr->table);
  }
  *on_out = on;
  *onv_out = onv;
  if (!on && !onv) {
    compile_parse_error(p, "no such table: %s.%s", compile_parse_db_name(p, tdb), tr->table);
    return 1;
  }
  if (on && on->vtab_module) {
    compile_parse_error(p, "cannot create triggers on virtual tables");
    return 1;
  }
  if (!util_strnicmp(tr->name.name, "sqlite_", 7)) {
    compile_parse_error(p, "object name reserved for internal use: %s", tr->name.name);
    return 1;
  }
  if (schema_find_trigger(p->schema, tr->name.name)) {
    if (tr->if_not_exists) return 2;
    compile_parse_error(p, "trigger %s already exists", ddl_name_token(p, &tr->name));
    return 1;
  }
  return 0;
}

int compile_ddl_trigger_header_error(Parse *p, const SqlStmt *s) {
  Table *on = NULL;
  View *onv = NULL;
  return trigger_header(p, s, &on, &onv) == 1;
}

int compile_ddl_create_trigger(Parse *p, const SqlStmt *s) {
  const SqlCreateTrigger *tr = &s->u.create_trigger;
  Table *on = NULL;
  View *onv = NULL;
  int h = trigger_header(p, s, &on, &onv);
  if (h == 2) {
    compile_parse_need_read(p);
    return 0;
  }
  if (h) return 1;
  const char *sql = compile_ddl_stored_sql(p, s, &tr->name, "TRIGGER", DDL_END_LAST_TOKEN);
  if (!sql) return 1;
  Schema *scratch = compile_ddl_scratch_with(p, on);
  if (!scratch) return 1;
  if (onv && schema_add_view(scratch, onv) != SHALE_OK) {
    schema_free(scratch);
    compile_parse_nomem(p);
    return 1;
  }
  Trigger *g = NULL;
  char *msg = NULL;
  int rc = compile_schema_trigger_from_create(scratch, s, sql, &g, &msg);
  if (rc == SHALE_OK && s->nvar > 0) {
    schema_free(scratch);
    compile_parse_error(p, "trigger cannot use variables");
    return 1;
  }
  if (rc != SHALE_OK) {
    compile_ddl_build_error(p, rc, msg);
    schema_free(scratch);
    return 1;
  }
  compile_parse_need_write(p);
  code_file_format(p);
  int cur = compile_ddl_open_schema(p);
  compile_ddl_schema_insert(p, cur, "trigger", tr->name.name, tr->table, 0, sql);
  emit(p, OP_Close, cur, 0, 0);
  compile_ddl_finish(p);
  schema_free(scratch);
  return parse_failed(p);
}
