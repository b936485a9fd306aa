/*
 * compile_analyze.c -- ANALYZE: the program that fills sqlite_stat1.
 *
 * Owns nothing beyond the Parse arena. ANALYZE [schema | table | index]
 * compiles to one program: create sqlite_stat1(tbl,idx,stat) when missing
 * (a new sqlite_schema row, cookie + 1), clear the rows it replaces (all of
 * them, or those of the table / index named), then per table scan each
 * index counting the distinct prefixes of its key (one AnalyzeScan op per
 * index: src/vm/vm_analyze.c), and write one row per
 * non-empty index ("N a1 a2 ...") and, for a table without a non-partial
 * index, its row count ("N", idx NULL). ParseSchema at the end makes the
 * API reload the schema, and with it the statistics (schema_load.c).
 *
 * Invariants:
 *  1. The rows are SQLite 3.40.1's: tables in the order SQLite's table hash
 *     lists them (compile_sql_table_hash_order over Schema.order), indexes of a table
 *     in SQLite's list order (index_order), the average of the first i key
 *     columns ceil(N / distinct_i), 1 instead of 2 when N * 10 <= distinct_i
 *     * 11; a WITHOUT ROWID table's PRIMARY KEY is named by its table.
 *  2. Key columns are compared with their index collations, NULL equal to
 *     NULL (SQLite's Ne with NULLEQ), so distinct counts follow the index
 *     order.
 *  3. Tables named sqlite_* and views get no rows; an empty index or table
 *     no row either.
 *  4. Databases: ANALYZE alone visits main and the attached ones (not
 *     TEMP), ANALYZE name a database by name (analyze_db) or the database
 *     of the table/index found (compile_parse_find_object: temp, main, attached);
 *     every op names that database (p->idb, set by compile_parse_set_db).
 */
#include <string.h>

#include "analyze.h"
#include "compile.h"
#include "compile_ddl_int.h"

static const char STAT1_SQL[] = "CREATE TABLE sqlite_stat1(tbl,idx,stat)";

int compile_analyze_table_order(const Schema *s, Table ***out, int *n) {
  *out = NULL;
  *n = 0;
  int m = s->norder;
  if (m == 0) return SHALE_OK;
  const char **names = shale_malloc(sizeof(char *) * (size_t)(m + 1));
  int *ord = NULL;
  Table **t = shale_malloc(sizeof(Table *) * (size_t)(m + 1));
  if (!names || !t) goto nomem;
  names[0] = "sqlite_master"; /* SQLite's schema table is hashed first */
  for (int i = 0; i < m; i++) names[i + 1] = s->order[i];
  ord = compile_sql_table_hash_order(names, m + 1);
  if (!ord) goto nomem;
  for (int k = 0; k < m + 1; k++) {
    if (ord[k] == 0) continue;
    Table *x = schema_find_table(s, names[ord[k]]);
    if (x && !x->is_schema) t[(*n)++] = x;
  }
  shale_free(names);
  shale_free(ord);
  if (*n == 0) {
    shale_free(t);
    t = NULL;
  }
  *out = t;
  return SHALE_OK;
nomem:
  shale_free(names);
  shale_free(ord);
  shale_free(t);
  return SHALE_NOMEM;
}

/* ---- one index / table ---- */

/* Indexes of tab in SQLite's list order: each new index first, except an
 * ON CONFLICT REPLACE one, which goes after the last non-REPLACE index
 * unless the list is empty or starts with a REPLACE index. */
static int index_order(Parse *p, const Table *tab, const Index ***out) {
  int n = 0;
  for (const Index *x = tab->indexes; x; x = x->next) n++;
  const Index **a = compile_parse_alloc(p, sizeof *a * (size_t)(n + 1));
  if (!a) return -1;
  int k = 0;
  for (const Index *x = tab->indexes; x; x = x->next) {
    int pos = 0;
    if (x->on_conflict == SCHEMA_OE_REPLACE && k > 0 && a[0]->on_conflict != SCHEMA_OE_REPLACE) {
      pos = 1;
      while (pos < k && a[pos]->on_conflict != SCHEMA_OE_REPLACE) pos++;
    }
    memmove(&a[pos + 1], &a[pos], sizeof *a * (size_t)(k - pos));
    a[pos] = x;
    k++;
  }
  *out = a;
  return n;
}

/* Append a row (tbl, idx, r[stat]) through cursor scur. */
static void insert_row(Parse *p, int scur, const char *tbl, const char *idx, int stat) {
  int r = emit_regs(p, 5);
  compile_ddl_emit_text(p, r, tbl);
  compile_ddl_emit_text(p, r + 1, idx);
  emit(p, OP_SCopy, stat, r + 2, 0);
  emit(p, OP_MakeRecord, r, 3, r + 3);
  emit(p, OP_NewRowid, scur, r + 4, 0);
  emit(p, OP_Insert, scur, r + 3, r + 4);
}

/* The stat row of one index (invariant 1). */
static void analyze_index(Parse *p, const Table *tab, const Index *idx, int scur) {
  int nkey = idx->nkey;
  KeyInfo *ki = compile_parse_index_keyinfo(p, idx);
  if (!ki || parse_failed(p)) return;
  int icur = emit_cursor(p);
  int nrow = emit_regs(p, 1 + nkey); /* entries, then distinct prefixes of 1..nkey columns */
  int d = nrow + 1;
  int done = emit_label(p);
  compile_parse_open_index(p, icur, idx, 0);
  vm_builder_add_p4(&p->b, OP_AnalyzeScan, icur, nrow, nkey, P4_KEYINFO, ki);
  emit(p, OP_Close, icur, 0, 0);
  emit(p, OP_IfNot, nrow, done, 0);
  /* the stat text */
  int s = emit_regs(p, 1), sp = emit_regs(p, 1), avg = emit_regs(p, 1), t = emit_regs(p, 1);
  int k10 = emit_regs(p, 1), k11 = emit_regs(p, 1), two = emit_regs(p, 1);
  int u = emit_regs(p, 1), w = emit_regs(p, 1);
  vm_builder_add_text(&p->b, OP_String, 0, s, 0, "", 0);
  vm_builder_add_text(&p->b, OP_String, 0, sp, 0, " ", 1);
  emit(p, OP_Integer, 10, k10, 0);
  emit(p, OP_Integer, 11, k11, 0);
  emit(p, OP_Integer, 2, two, 0);
  emit(p, OP_Concat, nrow, s, s);
  for (int i = 0; i < nkey; i++) {
    int keep = emit_label(p);
    emit(p, OP_Add, nrow, d + i, t);
    emit(p, OP_AddImm, t, -1, 0);
    emit(p, OP_Divide, d + i, t, avg);
    emit(p, OP_Ne, two, keep, avg);
    emit(p, OP_Multiply, k10, nrow, u);
    emit(p, OP_Multiply, k11, d + i, w);
    emit(p, OP_Gt, w, keep, u);
    emit(p, OP_Integer, 1, avg, 0);
    emit_resolve(p, keep);
    emit(p, OP_Concat, sp, s, s);
    emit(p, OP_Concat, avg, s, s);
  }
  int pk = tab->without_rowid && idx == tab->pk_index;
  insert_row(p, scur, tab->name, pk ? tab->name : idx->name, s);
  emit_resolve(p, done);
}

static int is_system_name(const char *z) { return !util_strnicmp(z, "sqlite_", 7); }

/* The rows of one table (only: a single index, or NULL for all). */
static void analyze_table(Parse *p, const Table *tab, const Index *only, int scur) {
  if (!tab || tab->is_schema || is_system_name(tab->name) || !tab->root) return;
  const Index **ix;
  int n = index_order(p, tab, &ix);
  if (n < 0) return;
  int need_count = 1;
  for (int i = 0; i < n && !parse_failed(p); i++) {
    if (only && ix[i] != only) continue;
    if (!ix[i]->where) need_count = 0;
    analyze_index(p, tab, ix[i], scur);
  }
  if (only || !need_count || parse_failed(p)) return;
  int tcur = emit_cursor(p);
  int cnt = emit_regs(p, 1), s = emit_regs(p, 1);
  int skip = emit_label(p);
  compile_parse_open_table(p, tcur, tab, 0);
  emit(p, OP_Count, tcur, cnt, 0);
  emit(p, OP_Close, tcur, 0, 0);
  emit(p, OP_IfNot, cnt, skip, 0);
  vm_builder_add_text(&p->b, OP_String, 0, s, 0, "", 0);
  emit(p, OP_Concat, cnt, s, s);
  insert_row(p, scur, tab->name, NULL, s);
  emit_resolve(p, skip);
}

/* ---- the statement ---- */

/* Open sqlite_stat1 for writing (creating it when missing) and clear the
 * rows about to be replaced: every row (where NULL), or those whose column
 * col equals where. Also clears an existing sqlite_stat4 / sqlite_stat3, as
 * SQLite does. Returns the cursor, or -1 after an error. */
static int open_stat(Parse *p, int col, const char *where) {
  Schema *s = p->schema;
  compile_parse_need_write(p);
  int scur = emit_cursor(p);
  Table *st = schema_find_table(s, "sqlite_stat1");
  if (!st) {
    compile_ddl_file_format(p);
    int root = emit_regs(p, 1);
    emit(p, OP_CreateBtree, p->idb, root, BTREE_INTKEY);
    int cur = compile_ddl_open_schema(p);
    compile_ddl_schema_insert(p, cur, "table", "sqlite_stat1", "sqlite_stat1", root, STAT1_SQL);
    emit(p, OP_Close, cur, 0, 0);
    compile_ddl_finish(p);
    int a = vm_builder_add_i4(&p->b, OP_OpenWrite, scur, root, p->idb, 3);
    vm_builder_set_p5(&p->b, a, VM_OPFLAG_P2ISREG);
  } else {
    if (where)
      compile_ddl_delete_rows_eq(p, st, col, where);
    else
      emit(p, OP_Clear, (int)st->root, p->idb, 0);
    vm_builder_add_i4(&p->b, OP_OpenWrite, scur, (int)st->root, p->idb, st->ncol);
  }
  static const char *const other[] = {"sqlite_stat4", "sqlite_stat3"};
  for (int i = 0; i < 2; i++) {
    Table *o = schema_find_table(s, other[i]);
    if (!o || !o->root || o->without_rowid) continue;
    if (!where)
      emit(p, OP_Clear, (int)o->root, p->idb, 0);
    else if (o->ncol > col)
      compile_ddl_delete_rows_eq(p, o, col, where);
  }
  return parse_failed(p) ? -1 : scur;
}

/* Every table of database idb, in SQLite's order (the database becomes the
 * statement's target: p->idb, p->schema). */
static void analyze_database(Parse *p, int idb) {
  compile_parse_set_db(p, idb);
  Schema *s = p->schema;
  if (!s) return;
  int scur = open_stat(p, 0, NULL);
  if (scur < 0) return;
  Table **t;
  int n;
  if (compile_analyze_table_order(s, &t, &n) != SHALE_OK) {
    compile_parse_nomem(p);
    return;
  }
  for (int k = 0; k < n && !parse_failed(p); k++) analyze_table(p, t[k], NULL, scur);
  shale_free(t);
  emit(p, OP_Close, scur, 0, 0);
  emit(p, OP_ParseSchema, p->idb, 0, 0); /* reload the statistics */
}

/* The database named z, for ANALYZE: -1 when none (invariant 4). */
static int analyze_db(Parse *p, const char *z) { return compile_parse_find_db(p, z); }

int compile_ddl_analyze(Parse *p, const SqlStmt *st) {
  const SqlQualName *q = &st->u.analyze.name;
  if (!p->schema) { /* compiled without a database (unit tests): nothing to read */
    compile_parse_need_write(p);
    return 0;
  }
  int idb;
  if (!st->u.analyze.has_name) {
    /* every database but TEMP, as SQLite */
    for (int i = 0; i < compile_parse_ndb(p) && !parse_failed(p); i++)
      if (i != 1) analyze_database(p, i);
    if (compile_parse_ndb(p) == 1) compile_parse_need_read(p);
    return parse_failed(p);
  }
  if (!q->schema && (idb = analyze_db(p, q->name)) >= 0) {
    if (!compile_parse_db_schema(p, idb)) { /* TEMP not opened yet: nothing in it */
      compile_parse_need_read(p);
      return 0;
    }
    analyze_database(p, idb);
    return parse_failed(p);
  }
  const char *zdb = q->schema, *zname = q->name;
  if (zdb && analyze_db(p, zdb) < 0) {
    if (compile_parse_ndb(p) == 1 && !util_stricmp(zdb, "temp")) { /* before ATTACH/TEMP */
      zdb = NULL;
    } else {
      compile_parse_error(p, "unknown database %s", zdb);
      return 1;
    }
  }
  int iidx = -1, itab = -1, iview = -1;
  Index *idx = compile_parse_find_object(p, PARSE_OBJ_INDEX, zdb, zname, &iidx);
  Table *tab = idx ? idx->table : compile_parse_find_object(p, PARSE_OBJ_TABLE, zdb, zname, &itab);
  View *v = tab ? NULL : compile_parse_find_object(p, PARSE_OBJ_VIEW, zdb, zname, &iview);
  if (!tab && !v) {
    if (q->schema)
      compile_parse_error(p, "no such table: %s.%s", q->schema, zname);
    else
      compile_parse_error(p, "no such table: %s", zname);
    return 1;
  }
  compile_parse_set_db(p, idx ? iidx : tab ? itab : iview);
  const char *tname = tab ? (tab->is_schema ? "sqlite_master" : tab->name) : v->name;
  int scur = open_stat(p, idx ? 1 : 0, idx ? idx->name : tname);
  if (scur < 0) return 1;
  if (tab) analyze_table(p, tab, idx, scur);
  emit(p, OP_Close, scur, 0, 0);
  if (parse_failed(p)) return 1;
  emit(p, OP_ParseSchema, p->idb, 0, 0); /* reload the statistics */
  return 0;
}
