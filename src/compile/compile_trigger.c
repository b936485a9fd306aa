/*
 * compile_trigger.c -- trigger programs: for each trigger of a table that
 * fires for an event and timing, compile its WHEN clause and body into a
 * sub-program (a nested Parse with its own VmBuilder) and call it with
 * Program.
 *
 * Owns: compile_trigger_code, compile_trigger_exists.
 *
 * Register layout passed to the sub-program (Program p1 = base): OLD rowid at
 * base, OLD columns at base+1.., NEW rowid at base+ncol+1, NEW columns after
 * it; so NEW.x / OLD.x (SQL_E_TRIGREF, cursor 1 = NEW, 0 = OLD, column -1 =
 * rowid) is Param p1 = cursor*(ncol+1) + 1 + column.
 *
 * Invariants:
 *  1. The body is compiled from a fresh parse of Trigger.sql in the nested
 *     Parse's arena, so resolution never annotates the schema's AST.
 *  2. As SQLite's: each trigger program (trigger, conflict resolution)
 *     is compiled once per statement, owned by the outermost
 *     program and called by reference (P4_SUBREF: its cell is listed before
 *     it is compiled, so a firing inside itself calls the same program).
 *     Recursion happens at run time: Program's p3 is
 *     SQLITE_LIMIT_TRIGGER_DEPTH ("too many levels of trigger recursion"
 *     past it; 1000 by default); with recursive_triggers off, p5 makes a
 *     program already running further out not fire again.
 *  3. Triggers fire most recently created first (SQLite's list order); the
 *     schema keeps no creation order, so the order is approximated by the
 *     trigger objects' allocation order in the schema arena.
 *  4. The sub-program has no Transaction op: it runs inside the caller's
 *     transaction; its needs (read/write) are passed up to the caller.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compile.h"
#include "dml_int.h"

static int trig_matches(const Trigger *t, const Table *tab, int op, int timing) {
  if (!t->table || strcasecmp(t->table, tab->name) != 0) return 0;
  if (t->event != op) return 0;
  int tm = t->timing ? t->timing : TRIGGER_BEFORE;
  return tm == timing;
}

#define TRIG_MAX_DEPTH 1000 /* SQLITE_MAX_TRIGGER_DEPTH */

/* A trigger program of the statement (the outermost Parse's list). */
struct TrigProg {
  const Trigger *t;
  int oe;
  VmProgram **cell; /* in the outermost program's arena */
  struct TrigProg *next;
};

/* The outermost frame of p's chain (NULL at the top level). */
static TrigFrame *root_frame(Parse *p) {
  TrigFrame *r = NULL;
  for (TrigFrame *f = dml_frame(p); f; f = dml_frame(f->outer)) r = f;
  return r;
}

/* TRIGGER_EQP: the EXPLAIN QUERY PLAN rows of trigger t's program np, as
 * SQLite lists them: a "-- TRIGGER t" row whose parent is no row (so a
 * shell's plan tree leaves it out), the program's rows under it, then the
 * blocks of the triggers it fires. The block waits in p's eqp_trig (ids in
 * p's numbering) and follows p's own rows (compile.c, compile_trigger_eqp_flush;
 * for p a trigger program, here). */
static int eqp_trig_add(Parse *p, int id, int parent, const char *detail) {
  if (p->neqp_trig == p->capeqp_trig) {
    int cap = p->capeqp_trig ? p->capeqp_trig * 2 : 8;
    EqpRow *a = compile_parse_alloc(p, sizeof *a * (size_t)cap);
    if (!a) return 1;
    if (p->neqp_trig) memcpy(a, p->eqp_trig, sizeof *a * (size_t)p->neqp_trig);
    p->eqp_trig = a;
    p->capeqp_trig = cap;
  }
  const char *d = compile_parse_strdup(p, detail);
  if (!d) return 1;
  p->eqp_trig[p->neqp_trig++] = (EqpRow){id, parent, d};
  return 0;
}

static void eqp_take_trigger(Parse *p, Parse *np, const Trigger *t) {
  int head = ++p->eqp_next_id;
  int orphan = head + np->eqp_next_id + 1; /* past every id given below */
  char *z = util_mprintf("-- TRIGGER %s", t->name);
  if (!z) {
    compile_parse_nomem(p);
    return;
  }
  int bad = eqp_trig_add(p, head, orphan, z);
  shale_free(z);
  for (int k = 0; k < 2 && !bad; k++) {
    const EqpRow *rows = k == 0 ? np->eqp : np->eqp_trig;
    int n = k == 0 ? np->neqp : np->neqp_trig;
    for (int i = 0; i < n && !bad; i++)
      bad = eqp_trig_add(p, rows[i].id + head, rows[i].parent ? rows[i].parent + head : head,
                         rows[i].detail);
  }
  if (bad) compile_parse_nomem(p);
  p->eqp_next_id = orphan;
}

void compile_trigger_eqp_flush(Parse *p) {
  int next = p->eqp_next_id; /* the rows keep their ids */
  for (int i = 0; i < p->neqp_trig; i++) {
    int saved = p->eqp_parent;
    p->eqp_parent = p->eqp_trig[i].parent;
    if (compile_parse_eqp(p, "%s", p->eqp_trig[i].detail) > 0)
      p->eqp[p->neqp - 1].id = p->eqp_trig[i].id;
    p->eqp_parent = saved;
  }
  p->eqp_next_id = next;
  p->neqp_trig = 0;
}

/* The schemas whose triggers may fire for tab: its own database's, and
 * temp's (TEMP triggers on tables of other databases) unless temp has a
 * table of that name itself; temp's alone when triggers are switched off
 * (CompileEnv.no_triggers). Returns how many (0..2) in sc[], databases
 * in idb[]. */
static int trigger_schemas(Parse *p, const Table *tab, Schema *sc[2], int idb[2]) {
  int n = 0, d = compile_parse_table_db(p, tab);
  Schema *own = compile_parse_ndb(p) > 1 ? compile_parse_db_schema(p, d) : p->schema;
  if (!own) own = p->schema;
  if (own) {
    idb[n] = d;
    sc[n++] = own;
  }
  Schema *tmp = compile_parse_ndb(p) > 1 && d != 1 ? compile_parse_db_schema(p, 1) : NULL;
  if (tmp && tmp != own && tmp->triggers.n > 0 && !schema_find_table(tmp, tab->name)) {
    idb[n] = 1;
    sc[n++] = tmp;
  }
  if (p->env && p->env->no_triggers) { /* SQLITE_DBCONFIG_ENABLE_TRIGGER off: TEMP ones only */
    int k = 0;
    for (int i = 0; i < n; i++)
      if (idb[i] == 1) {
        idb[k] = idb[i];
        sc[k++] = sc[i];
      }
    n = k;
  }
  return n;
}

int compile_trigger_exists(Parse *p, const Table *tab, int op, int timing) {
  if (p->disable_triggers) return 0;
  /* the common case: no database has a trigger at all (known for the
   * schemas in use: they do not change while a statement compiles) */
  if (p->no_trig_schema && p->no_trig_schema == p->schema && p->no_trig_idb == p->idb) return 0;
  int any = 0;
  for (int i = 0, n = compile_parse_ndb(p); i < n && !any; i++) {
    const Schema *s = compile_parse_db_schema(p, i);
    any = s && s->triggers.n > 0; /* n counts removed slots too: never a false 0 */
  }
  if (!any) {
    p->no_trig_schema = p->schema;
    p->no_trig_idb = p->idb;
    return 0;
  }
  Schema *sc[2];
  int dbs[2];
  int ns = trigger_schemas(p, tab, sc, dbs);
  for (int k = 0; k < ns; k++) {
    int pos = 0;
    Trigger *t;
    while ((t = schema_map_next(&sc[k]->triggers, &pos)) != NULL)
      if (trig_matches(t, tab, op, timing)) return 1;
  }
  return 0;
}

static int cmp_trig_desc(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (Trigger *const *)a, y = (uintptr_t) * (Trigger *const *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* UPDATE OF columns: fires only if one of them is changed. */
static int update_of_hit(const Trigger *t, const Table *tab, const uint8_t *changed) {
  if (t->nupdate_of == 0 || !changed) return 1;
  for (int i = 0; i < t->nupdate_of; i++) {
    int j = schema_table_column_index(tab, t->update_of[i]);
    if (j >= 0 && changed[j]) return 1;
  }
  return 0;
}

/* Compile trigger t into a sub-program (NULL after an error recorded in p). */
static VmProgram *trigger_program(Parse *p, const Trigger *t, const Table *tab, int on_conflict,
                                  int tdb) {
  {
    TrigFrame *r = root_frame(p);
    (r ? r->outer : p)->last_trig = t;
  }
  TrigFrame f;
  memset(&f, 0, sizeof f);
  Parse *np = &f.p;
  np->env = p->env;
  np->schema = p->schema;
  if (compile_parse_ndb(p) > 1) { /* a non-TEMP trigger's body only sees its own database */
    compile_parse_set_db(np, tdb);
    np->scope_db1 = tdb == 1 ? 0 : tdb + 1;
  }
  np->sql = t->sql;
  util_arena_init(&np->arena, 0);
  np->nested = p->nested + 1;
  np->from_ddl = tdb != 1; /* a TEMP trigger's body is not from the schema */
  if (p->is_explain == 2 && p->env && p->env->trigger_eqp) np->is_explain = 2;
  np->trig_tab = tab;
  np->trig_depth = p->trig_depth + 1;
  f.outer = p;
  f.trig = t;
  f.oe = on_conflict;
  VmProgram *sub = NULL;
  SqlStmt *cs = NULL;
  char *perr = NULL;
  int rc = sql_parse(&np->arena, t->sql, -1, &cs, NULL, &perr);
  if (rc || !cs || cs->kind != SQL_STMT_CREATE_TRIGGER) {
    if (rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error(p, "malformed trigger %s%s%s", t->name, perr ? ": " : "",
                          perr ? perr : "");
    shale_free(perr);
    util_arena_free(&np->arena);
    return NULL;
  }
  if (vm_builder_init(&np->b, NULL)) {
    compile_parse_nomem(p);
    util_arena_free(&np->arena);
    return NULL;
  }
  const SqlCreateTrigger *ct = &cs->u.create_trigger;
  np->stmt = cs;
  np->once_label = emit_label(np);
  np->init_addr = emit(np, OP_Init, 0, np->once_label, 0);
  int body = emit_addr(np);
  if (t->name) { /* what sqlite3_trace_v2 reports for a trigger run (as SQLite) */
    char *z = util_mprintf("-- TRIGGER %s", t->name);
    if (!z) compile_parse_nomem(np);
    vm_builder_add_text(&np->b, OP_Trace, 0, 0, 0, z ? z : "", -1);
    shale_free(z);
  }
  int end = emit_label(np);
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.trig_tab = tab;
  nc.trig_mask = t->event == TRIGGER_INSERT ? 2 : t->event == TRIGGER_DELETE ? 1 : 3;
  if (ct->when) {
    if (!compile_resolve_expr(np, &nc, ct->when) && !parse_failed(np))
      compile_expr_if_false(np, ct->when, end, 1);
  }
  for (int i = 0; i < ct->nstmts && !parse_failed(np); i++) {
    SqlStmt *st = ct->stmts[i];
    if (st->span.len > 0 && t->name) {
      char *z = util_mprintf("-- %.*s", st->span.len, t->sql + st->span.start);
      if (!z) compile_parse_nomem(np);
      vm_builder_add_text(&np->b, OP_Trace, 0, 0, 0, z ? z : "", -1);
      shale_free(z);
    }
    if (st->kind == SQL_STMT_SELECT) {
      int auth = compile_parse_auth(np, AUTH_SELECT, NULL, NULL, NULL);
      if (auth == AUTH_DENY) break;
      if (auth == AUTH_IGNORE) continue;
      if (compile_select_resolve(np, st->u.select, &nc) || parse_failed(np)) break;
      SelectDest d;
      memset(&d, 0, sizeof d);
      d.kind = SD_DISCARD;
      compile_select_code(np, st->u.select, &d);
    } else {
      compile_stmt(np, st);
    }
  }
  emit_resolve(np, end);
  emit(np, OP_Halt, 0, 0, 0);
  emit_resolve(np, np->once_label);
  for (int i = 0; i < np->nconst_ops; i++) {
    int a = emit(np, OP_Noop, 0, 0, 0);
    if (a >= 0) np->b.prog->ops[a] = np->const_ops[i];
  }
  emit(np, OP_Goto, 0, body, 0);
  if (parse_failed(np)) {
    if (np->rc == SHALE_NOMEM)
      compile_parse_nomem(p);
    else
      compile_parse_error_code(p, np->rc, "%s", np->errmsg ? np->errmsg : "error in trigger");
    vm_builder_abort(&np->b);
  } else if (np->b.rc) {
    compile_parse_nomem(p);
    vm_builder_abort(&np->b);
  } else if (vm_builder_finish(&np->b, &sub)) {
    compile_parse_nomem(p);
    sub = NULL;
  }
  if (np->is_explain == 2 && !parse_failed(p)) eqp_take_trigger(p, np, t);
  if (np->need_write) p->need_write = 1;
  if (np->need_read) p->need_read = 1;
  p->rmask |= np->rmask;
  p->wmask |= np->wmask;
  shale_free(np->errmsg); /* const_ops, covers, eqp live in the arena */
  util_arena_free(&np->arena);
  return sub;
}

/* The database whose schema holds trigger t (p->idb when none does). */
static int trigger_db(Parse *p, const Trigger *t) {
  for (int i = 0; i < compile_parse_ndb(p); i++) {
    const Schema *s = compile_parse_db_schema(p, i);
    if (s && schema_find_trigger(s, t->name) == t) return i;
  }
  return p->idb;
}

VmProgram *compile_trigger_program_of(Parse *p, const Trigger *t, const Table *tab,
                                      int on_conflict) {
  return trigger_program(p, t, tab, on_conflict, trigger_db(p, t));
}

/* The cell of trigger t's program for (tab, on_conflict): listed in the
 * outermost Parse, compiled the first time (invariant 2). NULL after an
 * error. */
static VmProgram **trigger_cell(Parse *p, const Trigger *t, const Table *tab, int oe, int tdb) {
  TrigFrame *r = root_frame(p);
  Parse *root = r ? r->outer : p;
  for (struct TrigProg *x = root->trig_progs; x; x = x->next)
    if (x->t == t && x->oe == oe)
      return x->cell; /* t names its table (a view's: rebuilt per use) */
  struct TrigProg *x = compile_parse_alloc(root, sizeof *x);
  VmProgram **cell = root->b.prog ? util_arena_alloc(&root->b.prog->arena, sizeof *cell) : NULL;
  if (!x || !cell) {
    compile_parse_nomem(p);
    return NULL;
  }
  *cell = NULL;
  x->t = t;
  x->oe = oe;
  x->cell = cell;
  x->next = root->trig_progs;
  root->trig_progs = x; /* before compiling: a firing inside finds it */
  VmProgram *sub = trigger_program(p, t, tab, oe, tdb);
  if (!sub) return NULL;
  if (vm_builder_adopt(&root->b, sub)) {
    compile_parse_nomem(p);
    return NULL;
  }
  *cell = sub;
  return cell;
}

void compile_trigger_code(Parse *p, const Table *tab, int op, int timing, const uint8_t *changed,
                          int old_reg, int new_reg, int on_conflict, int on_ignore) {
  if (!p->schema || parse_failed(p) || p->disable_triggers) return;
  Trigger *list[64];
  int ldb[64];
  int n = 0;
  Trigger *t;
  Schema *sc[2];
  int dbs[2];
  int ns = trigger_schemas(p, tab, sc, dbs);
  for (int k = ns - 1; k >= 0; k--) { /* TEMP triggers on another database's table first */
    int pos = 0, first = n;
    while ((t = schema_map_next(&sc[k]->triggers, &pos)) != NULL && n < 64) {
      if (!trig_matches(t, tab, op, timing)) continue;
      if (op == TRIGGER_UPDATE && !update_of_hit(t, tab, changed)) continue;
      ldb[n] = dbs[k];
      list[n++] = t;
    }
    qsort(list + first, (size_t)(n - first), sizeof *list, cmp_trig_desc);
  }
  if (n == 0) return;
  int ncol = tab->ncol;
  int base = emit_regs(p, 2 * (ncol + 1));
  for (int k = 0; k <= ncol; k++) {
    if (old_reg)
      emit(p, OP_SCopy, old_reg + k, base + k, 0);
    else
      emit(p, OP_Null, 0, base + k, 0);
    if (new_reg)
      emit(p, OP_SCopy, new_reg + k, base + ncol + 1 + k, 0);
    else
      emit(p, OP_Null, 0, base + ncol + 1 + k, 0);
  }
  int maxd = p->env && p->env->max_trigger_depth > 0 ? p->env->max_trigger_depth : TRIG_MAX_DEPTH;
  int once = !(p->env && p->env->recursive_triggers);
  for (int i = 0; i < n && !parse_failed(p); i++) {
    VmProgram **cell = trigger_cell(p, list[i], tab, on_conflict, ldb[i]);
    if (!cell) return;
    int a = vm_builder_add_program_ref(&p->b, OP_Program, base, on_ignore, maxd, cell);
    if (once && a >= 0) vm_builder_set_p5(&p->b, a, 1);
  }
}
