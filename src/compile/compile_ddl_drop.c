/*
 * compile_ddl_drop.c -- DROP TABLE / INDEX / VIEW / TRIGGER [IF EXISTS].
 *
 * Owns: nothing beyond a call.
 *
 * Invariants:
 *  1. A dropped object takes with it everything that depends on it, as in
 *     SQLite: a table its indexes (automatic ones too), its triggers, its
 *     sqlite_sequence row and its sqlite_stat1/stat4 rows; a view its
 *     INSTEAD OF triggers; an index its statistics rows.
 *  2. Trees are destroyed highest root first (SQLite's order, which matters
 *     to auto-vacuum files and keeps the freelist as SQLite leaves it).
 *  3. The in-memory schema is told with DropObject (kind 0 table, 1 index,
 *     2 trigger, 3 view) and reloaded after the statement (compile_ddl_finish).
 */
#include <string.h>

#include "compile_ddl_int.h"

#define DROP_TABLE 0
#define DROP_INDEX 1
#define DROP_TRIGGER 2
#define DROP_VIEW 3

/* "name" or "schema.name" as SQLite prints a missing object. */
static const char *missing_name(Parse *p, const SqlQualName *q) {
  if (!q->schema) return q->name;
  size_t a = strlen(q->schema), b = strlen(q->name);
  char *z = compile_parse_alloc(p, a + b + 2);
  if (!z) return q->name;
  memcpy(z, q->schema, a);
  z[a] = '.';
  memcpy(z + a + 1, q->name, b + 1);
  return z;
}

static void drop_object(Parse *p, int kind, const char *name) {
  vm_builder_add_text(&p->b, OP_DropObject, kind, p->idb, 0, name, -1);
}

/* Triggers whose table (or view) is name. Collects at most cap. */
static int triggers_on(Parse *p, const char *name, Trigger **out, int cap) {
  int n = 0, pos = 0;
  Trigger *g;
  while ((g = schema_map_next(&p->schema->triggers, &pos)) != NULL)
    if (!util_stricmp(g->table, name)) {
      if (n < cap) out[n] = g;
      n++;
    }
  return n;
}

/* Statistics rows of a table (col 0 = tbl) or an index (col 1 = idx). */
static void clear_stats(Parse *p, int col, const char *name) {
  static const char *const stat[] = {"sqlite_stat1", "sqlite_stat4", NULL};
  for (int i = 0; stat[i]; i++) {
    Table *t = schema_find_table(p->schema, stat[i]);
    if (t && t->ncol > col) compile_ddl_delete_rows_eq(p, t, col, name);
  }
}

/* TEMP triggers on a table of another database (they fire for it: see
 * compile_trigger.c trigger_schemas) go with it, from sqlite_temp_master
 * and the temp schema, as in SQLite. Called after the table's own
 * database is done; p's database is restored. */
static void drop_temp_triggers_on(Parse *p, const char *name) {
  int own = p->idb;
  if (own == 1 || compile_parse_ndb(p) < 2) return;
  Schema *tmp = compile_parse_db_schema(p, 1);
  if (!tmp || !tmp->triggers.n || schema_find_table(tmp, name)) return;
  Schema *save = p->schema;
  p->schema = tmp;
  int n = triggers_on(p, name, NULL, 0);
  DdlObj *objs = n ? compile_parse_alloc(p, sizeof *objs * (size_t)n) : NULL;
  Trigger **trig = n ? compile_parse_alloc(p, sizeof *trig * (size_t)n) : NULL;
  if (objs && trig) {
    triggers_on(p, name, trig, n);
    compile_parse_set_db(p, 1);
    compile_parse_need_write(p);
    for (int i = 0; i < n; i++) objs[i] = (DdlObj){"trigger", trig[i]->name};
    compile_ddl_schema_delete(p, objs, n);
    for (int i = 0; i < n; i++) drop_object(p, DROP_TRIGGER, trig[i]->name);
    compile_ddl_finish(p);
    compile_parse_set_db(p, own);
  }
  p->schema = save;
}

static int drop_table(Parse *p, const SqlDrop *d, Table *t) {
  if (t->is_schema || compile_ddl_is_system_table(t)) {
    compile_parse_error(p, "table %s may not be dropped", compile_ddl_table_name(t));
    return 1;
  }
  if (compile_vtab_shadow_refused(p, p->schema, t, "dropped")) return 1; /* DEFENSIVE */
  int ntrig = triggers_on(p, t->name, NULL, 0);
  int nidx = 0;
  for (Index *i = t->indexes; i; i = i->next) nidx++;
  DdlObj *objs = compile_parse_alloc(p, sizeof *objs * (size_t)(ntrig + nidx + 1));
  Trigger **trig = compile_parse_alloc(p, sizeof *trig * (size_t)(ntrig + 1));
  uint32_t *roots = compile_parse_alloc(p, sizeof *roots * (size_t)(nidx + 1));
  if (!objs || !trig || !roots) return 1;
  (void)d;
  triggers_on(p, t->name, trig, ntrig);
  compile_parse_need_write(p);
  compile_fk_drop_table(p, t); /* PRAGMA foreign_keys: the implicit DELETE FROM first */
  int n = 0, nroot = 0;
  for (int i = 0; i < ntrig; i++) objs[n++] = (DdlObj){"trigger", trig[i]->name};
  if (t->autoincrement) {
    Table *seq = schema_find_table(p->schema, "sqlite_sequence");
    if (seq) compile_ddl_delete_rows_eq(p, seq, 0, t->name);
  }
  objs[n++] = (DdlObj){"table", t->name};
  if (t->root) roots[nroot++] = t->root;
  for (Index *i = t->indexes; i; i = i->next) {
    if (i != t->pk_index) objs[n++] = (DdlObj){"index", i->name};
    if (i->root && i->root != t->root) roots[nroot++] = i->root;
  }
  compile_ddl_schema_delete(p, objs, n);
  clear_stats(p, 0, t->name);
  /* highest root first (invariant 2) */
  for (int i = 0; i < nroot; i++) {
    int hi = i;
    for (int j = i + 1; j < nroot; j++)
      if (roots[j] > roots[hi]) hi = j;
    uint32_t x = roots[i];
    roots[i] = roots[hi];
    roots[hi] = x;
    emit(p, OP_Destroy, (int)roots[i], 0, p->idb);
  }
  if (t->vtab_module) compile_parse_vtab_destroy(p, t); /* xDestroy, as SQLite: after the rows */
  for (int i = 0; i < ntrig; i++) drop_object(p, DROP_TRIGGER, trig[i]->name);
  drop_object(p, DROP_TABLE, t->name);
  compile_ddl_finish(p);
  drop_temp_triggers_on(p, t->name);
  return parse_failed(p);
}

static int drop_view(Parse *p, View *v) {
  int ntrig = triggers_on(p, v->name, NULL, 0);
  DdlObj *objs = compile_parse_alloc(p, sizeof *objs * (size_t)(ntrig + 1));
  Trigger **trig = compile_parse_alloc(p, sizeof *trig * (size_t)(ntrig + 1));
  if (!objs || !trig) return 1;
  triggers_on(p, v->name, trig, ntrig);
  compile_parse_need_write(p);
  int n = 0;
  for (int i = 0; i < ntrig; i++) objs[n++] = (DdlObj){"trigger", trig[i]->name};
  objs[n++] = (DdlObj){"view", v->name};
  compile_ddl_schema_delete(p, objs, n);
  for (int i = 0; i < ntrig; i++) drop_object(p, DROP_TRIGGER, trig[i]->name);
  drop_object(p, DROP_VIEW, v->name);
  compile_ddl_finish(p);
  return parse_failed(p);
}

static int drop_index(Parse *p, Index *idx) {
  if (idx->is_autoindex || idx->origin != INDEX_ORIGIN_CREATE) {
    compile_parse_error(p,
                        "index associated with UNIQUE or PRIMARY KEY constraint cannot be dropped");
    return 1;
  }
  compile_parse_need_write(p);
  DdlObj o = {"index", idx->name};
  compile_ddl_schema_delete(p, &o, 1);
  clear_stats(p, 1, idx->name);
  if (idx->root) emit(p, OP_Destroy, (int)idx->root, 0, p->idb);
  drop_object(p, DROP_INDEX, idx->name);
  compile_ddl_finish(p);
  return parse_failed(p);
}

static int drop_trigger(Parse *p, Trigger *g) {
  compile_parse_need_write(p);
  DdlObj o = {"trigger", g->name};
  compile_ddl_schema_delete(p, &o, 1);
  drop_object(p, DROP_TRIGGER, g->name);
  compile_ddl_finish(p);
  return parse_failed(p);
}

int compile_drop(Parse *p, const SqlStmt *s) {
  const SqlDrop *d = &s->u.drop;
  const SqlQualName *q = &d->name;
  /* another schema name finds nothing: "no such table: other.t" */
  int other = compile_parse_other_db(p, q->schema);
  const char *what = NULL;
  switch (d->object) {
    case TK_TABLE:
    case TK_VIEW: {
      Table *t = other ? NULL : schema_find_table(p->schema, q->name);
      View *v = t || other ? NULL : schema_find_view(p->schema, q->name);
      if (compile_parse_vtab_missing(p, t)) return 1; /* SQLite connects it first (xDestroy) */
      if (t && d->object == TK_VIEW) {
        compile_parse_error(p, "use DROP TABLE to delete table %s", compile_ddl_table_name(t));
        return 1;
      }
      if (v && d->object == TK_TABLE) {
        compile_parse_error(p, "use DROP VIEW to delete view %s", v->name);
        return 1;
      }
      if (t) return drop_table(p, d, t);
      if (v) return drop_view(p, v);
      const char *epo =
          d->object == TK_TABLE && !other ? compile_vtab_eponymous_name(p, q->name) : NULL;
      if (epo) { /* SQLite finds the module's own table, even with IF EXISTS */
        compile_parse_error(p, "table %s may not be dropped", epo);
        return 1;
      }
      if (parse_failed(p)) return 1;
      what = d->object == TK_TABLE ? "table" : "view";
      break;
    }
    case TK_INDEX: {
      Index *idx = other ? NULL : schema_find_index(p->schema, q->name);
      if (idx) return drop_index(p, idx);
      what = "index";
      break;
    }
    case TK_TRIGGER: {
      Trigger *g = other ? NULL : schema_find_trigger(p->schema, q->name);
      if (g) return drop_trigger(p, g);
      what = "trigger";
      break;
    }
    default:
      compile_parse_error(p, "unsupported DROP");
      return 1;
  }
  if (d->if_exists) { /* no-op; not read-only except for triggers (as SQLite) */
    compile_parse_need_read(p);
    if (d->object != TK_TRIGGER) p->schema_changed = 1;
    return 0;
  }
  compile_parse_error(p, "no such %s: %s", what, missing_name(p, q));
  return 1;
}
