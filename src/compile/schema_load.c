/*
 * schema_load.c -- building schema objects (src/schema/) from CREATE
 * statements: the checks SQLite makes at CREATE TABLE / CREATE INDEX time
 * (with its messages), and loading a whole Schema from sqlite_schema.
 *
 * Owns: nothing beyond the call; every object is allocated in the target
 * Schema's arena. Names, types and collation names are copied there; AST
 * pointers kept in the objects (CHECK, DEFAULT, generated, index
 * expressions, partial WHERE, view SELECT, trigger bodies) point into the
 * arena the statement was parsed in -- compile_schema_load parses into the schema's
 * own arena so they live exactly as long as the schema; a DDL compiler that
 * parses elsewhere must reparse into schema_arena() before keeping them.
 *
 * Invariants:
 *  1. Automatic indexes are numbered as SQLite does: the N of
 *     sqlite_autoindex_<table>_<N> is one more than the number of indexes
 *     the table has when the PRIMARY KEY / UNIQUE constraint is met; a
 *     constraint with the same columns and collations as an earlier one makes
 *     no new index (docs/format.md §7).
 *  2. A WITHOUT ROWID table's PRIMARY KEY index is made where the PRIMARY
 *     KEY is met, except for an INTEGER PRIMARY KEY: that one is made when
 *     the table ends (as SQLite converts the table), so it takes the next
 *     number after the UNIQUE constraints.
 *  3. compile_schema_load never crashes on a bad sqlite_schema: a row it cannot use
 *     is SHALE_CORRUPT with "malformed database schema (NAME)[ - reason]".
 *  4. As SQLite stores them: the PRIMARY KEY columns appended to an automatic
 *     (UNIQUE) index of a WITHOUT ROWID table sort ascending even when the
 *     PRIMARY KEY says DESC (CREATE INDEX keeps the PK's order), and the
 *     non-key columns of the PK index report BINARY.
 *  5. Index on_conflict SCHEMA_OE_NONE on a UNIQUE/PK index means the
 *     default (ABORT); an expression key column collates BINARY unless the
 *     expression's top-level COLLATE says otherwise (as SQLite stores it).
 */
#include "schema_load.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../btree/btree.h"
#include "../func/func.h"
#include "../parse/ast.h"
#include "../schema/schema.h"

#define MAX_COLUMNS 2000

typedef struct Build {
  Schema *s;
  const char *sql; /* statement text as stored (spans refer to it unless src is set) */
  const char *src; /* the text the statement's spans refer to, when not sql */
  char **errmsg;
  int loading; /* reading sqlite_schema: skip checks SQLite skips then */
  int temp;    /* loading the TEMP schema: triggers may be on other databases' tables */
  int rc;
  int ncols_total;       /* columns of the CREATE TABLE being built (room for keys) */
  uint8_t ipk_desc;      /* PRIMARY KEY(x DESC) that made x the rowid alias */
  const SchemaFuncs *sf; /* CHECK/generated/index expressions checked against it */
} Build;

/* A legacy file (schema format 1..3, SQLite before 3.3.0; written again
 * under SQLITE_DBCONFIG_LEGACY_FILE_FORMAT) has no descending indexes: DESC
 * in an index's columns is ignored, as SQLite does. */
static uint8_t index_desc(const Build *b, int sort) {
  uint32_t ff = b->s->file_format;
  return sort == SQL_SORT_DESC && !(ff >= 1 && ff < 4);
}

static int fail(Build *b, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Build *b, int rc, const char *fmt, ...) {
  if (b->rc == SHALE_OK) {
    b->rc = rc;
    if (fmt && b->errmsg && !*b->errmsg) {
      va_list ap;
      va_start(ap, fmt);
      *b->errmsg = util_vmprintf(fmt, ap);
      va_end(ap);
    }
  }
  return b->rc;
}
static int nomem(Build *b) { return fail(b, SHALE_NOMEM, NULL); }

static const char *sdup(Build *b, const char *z) {
  if (!z) return NULL;
  char *c = util_arena_strndup(&b->s->arena, z, strlen(z));
  if (!c) nomem(b);
  return c;
}

/* The text spans refer to. */
static const char *span_src(const Build *b) { return b->src ? b->src : b->sql; }

/* Text of a span, trimmed of white space, in the arena (NULL for a span
 * outside the text). */
static const char *compile_span_text(Build *b, SqlSpan sp) {
  const char *z = span_src(b);
  int st = sp.start, n = sp.len;
  if (!z || st < 0 || n < 0 || (size_t)st + (size_t)n > strlen(z)) return NULL;
  while (n > 0 && strchr(" \t\n\r\f", z[st]) && z[st]) st++, n--;
  while (n > 0 && strchr(" \t\n\r\f", z[st + n - 1]) && z[st + n - 1]) n--;
  char *c = util_arena_strndup(&b->s->arena, z + st, (size_t)n);
  if (!c) nomem(b);
  return c;
}

/* The text of a DEFAULT as PRAGMA table_info shows it: the expression as
 * written, without the parentheses of "DEFAULT (expr)" (inner ones kept). */
static const char *default_text(Build *b, const SqlExpr *e) {
  SqlSpan sp = e->span;
  const char *z = span_src(b);
  if ((e->flags & SQL_EF_PAREN) && z) {
    int lo = sp.start, hi = sp.start + sp.len, levels = 0;
    int n = (int)strlen(z);
    SqlSpan keep = sp;
    for (;;) {
      int l = lo - 1, h = hi;
      if (l >= n) break;
      while (l >= 0 && strchr(" \t\n\r\f", z[l])) l--;
      while (h < n && strchr(" \t\n\r\f", z[h])) h++;
      if (l < 0 || h >= n || z[l] != '(' || z[h] != ')') break;
      if (levels++ > 0) keep = (SqlSpan){lo, hi - lo}; /* one level inside the outermost */
      lo = l;
      hi = h + 1;
    }
    sp = keep;
  }
  return compile_span_text(b, sp);
}

static void *zalloc(Build *b, size_t n) {
  void *p = util_arena_zalloc(&b->s->arena, n ? n : 1);
  if (!p) nomem(b);
  return p;
}

/* ---- expression checks ---- */

typedef struct ExprCheck {
  SqlWalker w;
  const Table *t; /* columns that may be referenced (NULL: none) */
  int subquery, variable, column, func, qualified, window;
  const char *bad_column; /* first unknown column name */
  const char *bad_table;  /* its qualifier, if any */
} ExprCheck;

static int check_cb(SqlWalker *w, SqlExpr *e) {
  ExprCheck *c = (ExprCheck *)w;
  switch (e->op) {
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS:
      c->subquery = 1;
      break;
    case SQL_E_IN:
      if (e->select || e->table) c->subquery = 1;
      break;
    case SQL_E_VARIABLE:
      c->variable = 1;
      break;
    case SQL_E_FUNC:
      c->func = 1;
      if (e->over) c->window = 1;
      break;
    case SQL_E_ID:
      if (!c->t || schema_table_column_index(c->t, e->z) < 0) {
        if (c->t && (e->flags & SQL_EF_QUOTED)) break; /* a "string" */
        if (!util_stricmp(e->z, "true") || !util_stricmp(e->z, "false")) break;
        if (!c->bad_column) c->bad_column = e->z;
      }
      c->column = 1;
      break;
    case SQL_E_COLUMN:
      c->column = 1;
      c->qualified = 1;
      if (!c->t || schema_table_column_index(c->t, e->z) < 0 || e->schema ||
          (e->table && util_stricmp(e->table, c->t->name) != 0)) {
        if (!c->bad_column) c->bad_column = e->z, c->bad_table = e->table;
      }
      break;
    default:
      break;
  }
  return SQL_WALK_CONTINUE;
}

static void expr_check(ExprCheck *c, const Table *t, SqlExpr *e) {
  memset(c, 0, sizeof *c);
  c->w.expr = check_cb;
  c->t = t;
  if (e) sql_walk_expr(&c->w, e);
}

/* Generated-column loop detection, as SQLite meets it when an index
 * expression or partial WHERE expands a generated column: the name of the
 * first column re-entered while expanding, or NULL. busy: t->ncol bytes. */
typedef struct LoopWalk {
  SqlWalker w;
  const Table *t;
  uint8_t *busy;
  const char *found;
} LoopWalk;

static const char *gen_loop(const Table *t, int col, uint8_t *busy);

static int loop_cb(SqlWalker *w, SqlExpr *e) {
  LoopWalk *lw = (LoopWalk *)w;
  if (e->op != SQL_E_ID && e->op != SQL_E_COLUMN) return SQL_WALK_CONTINUE;
  int c = schema_table_column_index(lw->t, e->z);
  if (c < 0) return SQL_WALK_CONTINUE;
  lw->found = gen_loop(lw->t, c, lw->busy);
  return lw->found ? SQL_WALK_ABORT : SQL_WALK_CONTINUE;
}

static const char *gen_loop(const Table *t, int col, uint8_t *busy) {
  if (busy[col]) return t->cols[col].name;
  if (t->cols[col].hidden != COL_VIRTUAL) return NULL; /* STORED ones are read, not expanded */
  busy[col] = 1;
  LoopWalk lw = {{loop_cb, NULL, NULL}, t, busy, NULL};
  sql_walk_expr(&lw.w, t->cols[col].gen);
  busy[col] = 0;
  return lw.found;
}

/* Fail with "generated column loop on ..." if e (or, with e NULL, the
 * VIRTUAL column col) expands into a loop. Not when loading: a database
 * SQLite wrote is never refused for it. */
static int check_gen_loop(Build *b, const Table *t, SqlExpr *e, int col) {
  if (!t->has_generated || b->loading || (!e && col < 0)) return b->rc;
  uint8_t *busy = zalloc(b, (size_t)t->ncol);
  if (!busy) return b->rc;
  LoopWalk lw = {{loop_cb, NULL, NULL}, t, busy, NULL};
  if (e)
    sql_walk_expr(&lw.w, e);
  else
    lw.found = gen_loop(t, col, busy);
  if (lw.found) return fail(b, SHALE_ERROR, "generated column loop on \"%s\"", lw.found);
  return b->rc;
}

static int bad_column(Build *b, const ExprCheck *ec) {
  if (ec->bad_table)
    return fail(b, SHALE_ERROR, "no such column: %s.%s", ec->bad_table, ec->bad_column);
  return fail(b, SHALE_ERROR, "no such column: %s", ec->bad_column);
}

/* ---- SQLite's resolution of the CHECK and generated-column expressions at
 * the end of CREATE TABLE (with Build.funcs). A walk in SQLite's order: an
 * unknown column, a parameter or a subquery ends the walk with its error; a
 * fault of a function call (unknown, wrong argument count, aggregate or
 * window use, non-deterministic in a generated column) is recorded and the
 * walk goes on into its arguments and on to the rest, a later fault
 * replacing the message (so "count(*) + ?1" reports the parameter). Once
 * there is an error, any node but a function call ends the walk after its
 * own check. The CHECK list stops after the first expression with an
 * error; every generated column is still walked. ---- */
/* The function a call e names, by its argument count (f(*) has none). */
static const FuncDef *call_def(const FuncRegistry *funcs, const SqlExpr *e) {
  int n = e->list ? e->list->n : 0;
  if (e->flags & SQL_EF_STAR) n = 0;
  return func_find(funcs, e->z, n);
}

typedef struct ResWalk {
  const Table *t;
  const FuncRegistry *funcs;
  int untrusted;
  const char *what; /* "CHECK constraints" / "generated columns" */
  int gen;
  char msg[160];
} ResWalk;

static int resolve_node(ResWalk *r, const SqlExpr *e);

/* 1 when the walk ends (an error that stops SQLite's walker). */
static int resolve_walk(ResWalk *r, const SqlExpr *e) {
  if (!e) return 0;
  int rc = resolve_node(r, e);
  if (rc >= 0) return rc;
  if (r->msg[0]) return 1;   /* an earlier error: the walk ends here */
  if (e->op == SQL_E_CASE) { /* SQLite's order: the base, the arms, then ELSE */
    if (resolve_walk(r, e->a)) return 1;
    for (int i = 0; e->list && i < e->list->n; i++)
      if (resolve_walk(r, e->list->a[i].expr)) return 1;
    return resolve_walk(r, e->b);
  }
  if (resolve_walk(r, e->a) || resolve_walk(r, e->b) || resolve_walk(r, e->c)) return 1;
  for (int i = 0; e->list && i < e->list->n; i++)
    if (resolve_walk(r, e->list->a[i].expr)) return 1;
  return 0;
}

/* The check of node e itself: 1 (walk ends), 0 (a function call: done, the
 * walk goes on with its siblings), or -1 (go on into its children). */
static int resolve_node(ResWalk *r, const SqlExpr *e) {
  switch (e->op) {
    case SQL_E_ID:
      if (schema_table_column_index(r->t, e->z) >= 0 ||
          (e->flags & SQL_EF_QUOTED) || /* a "string" */
          !util_stricmp(e->z, "true") || !util_stricmp(e->z, "false"))
        return 0; /* found: SQLite's walk goes on with the siblings */
      snprintf(r->msg, sizeof r->msg, "no such column: %s", e->z);
      return 1;
    case SQL_E_COLUMN:
      if (schema_table_column_index(r->t, e->z) >= 0 && !e->schema &&
          (!e->table || !util_stricmp(e->table, r->t->name)))
        return 0;
      if (e->table)
        snprintf(r->msg, sizeof r->msg, "no such column: %s.%s", e->table, e->z);
      else
        snprintf(r->msg, sizeof r->msg, "no such column: %s", e->z);
      return 1;
    case SQL_E_VARIABLE:
      snprintf(r->msg, sizeof r->msg, "parameters prohibited in %s", r->what);
      return 1;
    case SQL_E_CTIME:
      if (r->gen)
        snprintf(r->msg, sizeof r->msg, "non-deterministic functions prohibited in %s", r->what);
      return 0;
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS:
      snprintf(r->msg, sizeof r->msg, "subqueries prohibited in %s", r->what);
      return 1;
    case SQL_E_IN:
      if (e->select || e->table) {
        snprintf(r->msg, sizeof r->msg, "subqueries prohibited in %s", r->what);
        return 1;
      }
      break;
    case SQL_E_FUNC: {
      const FuncDef *d = call_def(r->funcs, e);
      if (!d) {
        if (func_exists_name(r->funcs, e->z))
          snprintf(r->msg, sizeof r->msg, "wrong number of arguments to function %s()", e->z);
        else
          snprintf(r->msg, sizeof r->msg, "no such function: %s", e->z);
      } else if (e->over && !func_is_aggregate(d) && !(d->flags & FUNC_WINDOW)) {
        snprintf(r->msg, sizeof r->msg, "%s() may not be used as a window function", e->z);
      } else if (func_is_aggregate(d) || (d->flags & FUNC_WINDOW) || e->over) {
        snprintf(r->msg, sizeof r->msg, "misuse of %s function %s()",
                 (d->flags & FUNC_WINDOW) || e->over ? "window" : "aggregate", e->z);
      } else if (!func_is_deterministic(d)) {
        if (r->gen)
          snprintf(r->msg, sizeof r->msg, "non-deterministic functions prohibited in %s", r->what);
      } else if (func_unsafe_in_schema(d, r->untrusted)) {
        /* SQLite marks only deterministic calls here as coming from the
         * schema (a non-deterministic one in a CHECK passes) */
        snprintf(r->msg, sizeof r->msg, "unsafe use of %s()", e->z);
      }
      for (int i = 0; i < (e->list ? e->list->n : 0); i++)
        if (resolve_walk(r, e->list->a[i].expr)) break; /* ends the arguments only */
      return 0;
    }
    default:
      break;
  }
  return -1;
}

/* Resolve the CHECK and generated-column expressions of t as SQLite does
 * at the end of CREATE TABLE: fail with its message, if any. */
static int resolve_self(Build *b, const Table *t) {
  ResWalk r;
  memset(&r, 0, sizeof r);
  r.t = t;
  r.funcs = b->sf->funcs;
  r.untrusted = b->sf->untrusted;
  r.what = "CHECK constraints";
  for (int i = 0; i < t->ncheck && !r.msg[0]; i++) resolve_walk(&r, t->checks[i].expr);
  r.what = "generated columns";
  r.gen = 1;
  for (int i = 0; i < t->ncol; i++)
    if (t->cols[i].gen) resolve_walk(&r, t->cols[i].gen);
  if (r.msg[0]) return fail(b, SHALE_ERROR, "%s", r.msg);
  return b->rc;
}

/* Names of functions SQLite marks non-deterministic (no index expressions). */
/* The first call in e that SQLite refuses in an index expression or a
 * partial-index WHERE, as its message: a non-deterministic function
 * (registered ones per func_is_deterministic; current_date/time/timestamp),
 * else one unsafe in the schema (func_unsafe_in_schema). Functions are
 * looked up in sf (NULL or no registry: only the CURRENT_* keywords and
 * SQLite's always non-deterministic built-ins are known). */
typedef struct IdxWalk {
  const SchemaFuncs *sf;
  const char *what;
  char msg[160];
} IdxWalk;

static int nondeterministic_name(const char *z) {
  static const char *const names[] = {
      "random",         "randomblob",       "changes", "total_changes", "last_insert_rowid",
      "sqlite_version", "sqlite_source_id", NULL};
  for (int i = 0; z && names[i]; i++)
    if (!util_stricmp(z, names[i])) return 1;
  return 0;
}

static int idx_walk_cb(SqlWalker *w, SqlExpr *e) {
  IdxWalk *x = w->arg;
  if (e->op == SQL_E_CTIME) {
    snprintf(x->msg, sizeof x->msg, "non-deterministic functions prohibited in %s", x->what);
    return SQL_WALK_ABORT;
  }
  if (e->op != SQL_E_FUNC || !e->z) return SQL_WALK_CONTINUE;
  const FuncDef *d = NULL;
  if (x->sf && x->sf->funcs) d = call_def(x->sf->funcs, e);
  if (d && (func_is_aggregate(d) || (d->flags & FUNC_WINDOW)))
    return SQL_WALK_CONTINUE; /* "misuse of aggregate function" comes later */
  if (d ? !func_is_deterministic(d) : nondeterministic_name(e->z)) {
    snprintf(x->msg, sizeof x->msg, "non-deterministic functions prohibited in %s", x->what);
    return SQL_WALK_ABORT;
  }
  if (d && func_unsafe_in_schema(d, x->sf->untrusted)) {
    snprintf(x->msg, sizeof x->msg, "unsafe use of %s()", e->z);
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

/* idx_walk_cb over e: 0, or 1 with x->msg set. */
static int index_expr_refused(const SchemaFuncs *sf, const char *what, SqlExpr *e, IdxWalk *x) {
  memset(x, 0, sizeof *x);
  x->sf = sf;
  x->what = what;
  SqlWalker w = {idx_walk_cb, NULL, x};
  sql_walk_expr(&w, e);
  return x->msg[0] != 0;
}

/* At load (SQLite re-resolves these when it reads its schema): the first
 * deterministic call in e of a function unsafe in the schema, or NULL. */
typedef struct UnsafeWalk {
  const SchemaFuncs *sf;
  const char *name;
} UnsafeWalk;

static int unsafe_cb(SqlWalker *w, SqlExpr *e) {
  UnsafeWalk *u = w->arg;
  if (e->op != SQL_E_FUNC || !e->z) return SQL_WALK_CONTINUE;
  const FuncDef *d = call_def(u->sf->funcs, e);
  if (d && func_is_deterministic(d) && func_unsafe_in_schema(d, u->sf->untrusted)) {
    u->name = e->z;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

static const char *unsafe_call(const SchemaFuncs *sf, SqlExpr *e) {
  if (!sf || !sf->funcs || !e) return NULL;
  UnsafeWalk u = {sf, NULL};
  SqlWalker w = {unsafe_cb, NULL, &u};
  sql_walk_expr(&w, e);
  return u.name;
}

/* ---- tables ---- */

/* The column a PRIMARY KEY / UNIQUE term names, with its COLLATE: -1 if the
 * term is an expression (*expr = 1) or names no column (*name gets it). */
static int term_column(const Table *t, SqlExpr *e, const char **coll, int *expr,
                       const char **name) {
  *coll = NULL;
  *expr = 0;
  *name = NULL;
  while (e && e->op == SQL_E_COLLATE) {
    if (!*coll) *coll = e->z;
    e = e->a;
  }
  if (!e || (e->op != SQL_E_ID && e->op != SQL_E_STRING)) {
    *expr = 1;
    return -1;
  }
  *name = e->z;
  return schema_table_column_index(t, e->z);
}

static const char *col_coll(const Table *t, int col) {
  return col >= 0 && t->cols[col].coll ? t->cols[col].coll : "BINARY";
}

static int same_key(const Index *a, const Index *b) {
  if (a->nkey != b->nkey) return 0;
  for (int i = 0; i < a->nkey; i++)
    if (a->cols[i].col != b->cols[i].col || util_stricmp(a->cols[i].coll, b->cols[i].coll))
      return 0;
  return 1;
}

static int count_indexes(const Table *t) {
  int n = 0;
  for (const Index *i = t->indexes; i; i = i->next) n++;
  return n;
}

static void link_index(Table *t, Index *idx) {
  Index **pp = &t->indexes;
  while (*pp) pp = &(*pp)->next;
  idx->next = NULL;
  *pp = idx;
}

/* Append the trailing columns of invariant 4 (schema.h) to idx, whose key
 * columns are already in cols[0..nkey) with room for t->ncol + 1 more. */
static void append_trailing(Table *t, Index *idx) {
  idx->ncol = idx->nkey;
  if (!t->without_rowid) {
    idx->cols[idx->ncol++] = (IndexColumn){INDEX_COL_ROWID, NULL, "BINARY", 0};
    return;
  }
  Index *pk = t->pk_index;
  if (idx == pk) {
    for (int c = 0; c < t->ncol; c++) {
      if (t->cols[c].hidden == COL_VIRTUAL) continue;
      int have = 0;
      for (int k = 0; k < idx->nkey; k++) have |= idx->cols[k].col == c;
      if (!have) idx->cols[idx->ncol++] = (IndexColumn){c, NULL, "BINARY", 0};
    }
    return;
  }
  for (int j = 0; pk && j < pk->nkey; j++) {
    int have = 0;
    for (int k = 0; k < idx->nkey; k++)
      have |=
          idx->cols[k].col == pk->cols[j].col && !util_stricmp(idx->cols[k].coll, pk->cols[j].coll);
    if (!have) { /* an automatic index appends them ascending (SQLite's "bAscKeyBug") */
      idx->cols[idx->ncol] = pk->cols[j];
      if (idx->is_autoindex) idx->cols[idx->ncol].desc = 0;
      idx->ncol++;
    }
  }
}

/* A PRIMARY KEY or UNIQUE constraint over terms (NULL: the one column col).
 * Makes the automatic index unless an equal one exists. */
static int constraint_index(Build *b, Table *t, SqlExprList *terms, int col, uint8_t sort,
                            int on_conflict, char origin, Index **made) {
  *made = NULL;
  int n = terms ? terms->n : 1;
  Index *idx = zalloc(b, sizeof *idx);
  /* room for the trailing columns of the whole table (columns after this
   * constraint are not parsed yet) */
  IndexColumn *ic = zalloc(b, sizeof *ic * (size_t)(n + b->ncols_total + 1));
  if (!idx || !ic) return b->rc;
  idx->cols = ic;
  idx->table = t;
  idx->nkey = n;
  idx->unique = 1;
  idx->on_conflict = (uint8_t)on_conflict;
  idx->origin = origin;
  idx->is_autoindex = 1;
  for (int i = 0; i < n; i++) {
    const char *coll = NULL;
    int c = col;
    uint8_t s = sort;
    if (terms) {
      int is_expr;
      const char *name;
      c = term_column(t, terms->a[i].expr, &coll, &is_expr, &name);
      if (is_expr)
        return fail(b, SHALE_ERROR, "expressions prohibited in PRIMARY KEY and UNIQUE constraints");
      if (c < 0) return fail(b, SHALE_ERROR, "no such column: %s", name);
      s = terms->a[i].sort;
    }
    ic[i].col = c;
    ic[i].coll = coll ? sdup(b, coll) : col_coll(t, c);
    ic[i].desc = index_desc(b, s);
  }
  for (Index *o = t->indexes; o; o = o->next) {
    if (!same_key(o, idx)) continue;
    if (o->on_conflict != idx->on_conflict && o->on_conflict != SCHEMA_OE_NONE &&
        idx->on_conflict != SCHEMA_OE_NONE)
      return fail(b, SHALE_ERROR, "conflicting ON CONFLICT clauses specified");
    if (o->on_conflict == SCHEMA_OE_NONE) o->on_conflict = idx->on_conflict;
    if (origin == INDEX_ORIGIN_PK) o->origin = INDEX_ORIGIN_PK;
    *made = o;
    return b->rc;
  }
  char *name = util_mprintf("sqlite_autoindex_%s_%d", t->name, count_indexes(t) + 1);
  if (!name) return nomem(b);
  idx->name = sdup(b, name);
  shale_free(name);
  link_index(t, idx);
  *made = idx;
  return b->rc;
}

/* PRIMARY KEY over terms (table constraint) or the one column col. */
static int add_primary_key(Build *b, Table *t, SqlExprList *terms, int col, uint8_t sort,
                           int on_conflict, int autoinc, int *has_pk) {
  if (*has_pk) return fail(b, SHALE_ERROR, "table \"%s\" has more than one primary key", t->name);
  *has_pk = 1;
  int n = terms ? terms->n : 1;
  int single = -1;
  for (int i = 0; i < n; i++) {
    int c = col;
    if (terms) {
      const char *coll, *name;
      int is_expr;
      c = term_column(t, terms->a[i].expr, &coll, &is_expr, &name);
    }
    if (c < 0) continue;
    if (t->cols[c].hidden == COL_VIRTUAL || t->cols[c].hidden == COL_STORED)
      return fail(b, SHALE_ERROR, "generated columns cannot be part of the PRIMARY KEY");
    t->cols[c].pk = 1;
    if (n == 1) single = c;
  }
  t->pk_conflict = (uint8_t)on_conflict;
  if (single >= 0 && t->cols[single].type && !util_stricmp(t->cols[single].type, "INTEGER") &&
      sort != SQL_SORT_DESC) {
    t->rowid_alias = single;
    t->autoincrement = (uint8_t)autoinc;
    b->ipk_desc = terms && terms->a[0].sort == SQL_SORT_DESC;
    return b->rc;
  }
  if (autoinc)
    return fail(b, SHALE_ERROR, "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY");
  Index *idx;
  constraint_index(b, t, terms, col, sort, on_conflict, INDEX_ORIGIN_PK, &idx);
  if (t->without_rowid) t->pk_index = idx;
  return b->rc;
}

static int add_fk(Build *b, Table *t, SqlForeignKey *f, int col, SqlIdList *from) {
  int n;
  if (!from) {
    if (f->to_cols && f->to_cols->n != 1)
      return fail(b, SHALE_ERROR, "foreign key on %s should reference only one column of table %s",
                  t->cols[col].name, f->table);
    n = 1;
  } else if (f->to_cols && f->to_cols->n != from->n) {
    return fail(b, SHALE_ERROR,
                "number of columns in foreign key does not match the number of columns in the "
                "referenced table");
  } else {
    n = from->n;
  }
  ForeignKey *fks = zalloc(b, sizeof *fks * (size_t)(t->nfk + 1));
  if (!fks) return b->rc;
  if (t->nfk) memcpy(fks, t->fks, sizeof *fks * (size_t)t->nfk);
  ForeignKey *fk = &fks[t->nfk];
  fk->ncol = n;
  fk->cols = zalloc(b, sizeof(int) * (size_t)n);
  fk->parent = sdup(b, f->table);
  if (f->to_cols) fk->parent_cols = zalloc(b, sizeof(char *) * (size_t)n);
  if (b->rc) return b->rc;
  for (int i = 0; i < n; i++) {
    int c = col;
    if (from) {
      c = schema_table_column_index(t, from->a[i]);
      if (c < 0)
        return fail(b, SHALE_ERROR, "unknown column \"%s\" in foreign key definition", from->a[i]);
    }
    fk->cols[i] = c;
    if (f->to_cols) fk->parent_cols[i] = sdup(b, f->to_cols->a[i]);
  }
  fk->on_delete = f->on_delete;
  fk->on_update = f->on_update;
  fk->deferred = f->deferrable == 1 || (f->deferrable == 2 && f->initially == 1);
  fk->match = sdup(b, f->match);
  t->fks = fks;
  t->nfk++;
  return b->rc;
}

static int add_check(Build *b, Table *t, SqlConstraint *c) {
  Check *cks = zalloc(b, sizeof *cks * (size_t)(t->ncheck + 1));
  if (!cks) return b->rc;
  if (t->ncheck) memcpy(cks, t->checks, sizeof *cks * (size_t)t->ncheck);
  cks[t->ncheck].name = sdup(b, c->name);
  cks[t->ncheck].expr = c->expr;
  cks[t->ncheck].sql = compile_span_text(b, c->expr->span);
  t->checks = cks;
  t->ncheck++;
  return b->rc;
}

static int strict_type_ok(const char *ty) {
  static const char *const ok[] = {"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY", NULL};
  for (int i = 0; ok[i]; i++)
    if (!util_stricmp(ty, ok[i])) return 1;
  return 0;
}

static int build_table(Build *b, const SqlStmt *st, Table **out) {
  const SqlCreateTable *ct = &st->u.create_table;
  *out = NULL;
  if (st->kind != SQL_STMT_CREATE_TABLE) return fail(b, SHALE_ERROR, "not a CREATE TABLE");
  Table *t = zalloc(b, sizeof *t);
  if (!t) return b->rc;
  t->name = sdup(b, ct->name.name);
  t->sql = b->sql ? sdup(b, b->sql) : NULL;
  t->rowid_alias = -1;
  t->without_rowid = (ct->options & SQL_TABOPT_WITHOUT_ROWID) != 0;
  t->strict = (ct->options & SQL_TABOPT_STRICT) != 0;
  if (b->rc) return b->rc;
  if (ct->as_select)
    return fail(b, SHALE_ERROR, "CREATE TABLE ... AS SELECT needs the query engine");
  if (!b->loading && !util_strnicmp(t->name, "sqlite_", 7))
    return fail(b, SHALE_ERROR, "object name reserved for internal use: %s", t->name);
  if (ct->ncols > MAX_COLUMNS) return fail(b, SHALE_ERROR, "too many columns on %s", t->name);
  b->ncols_total = ct->ncols;
  t->cols = zalloc(b, sizeof(Column) * (size_t)(ct->ncols ? ct->ncols : 1));
  if (!t->cols) return b->rc;

  /* columns, in order, with their constraints (as SQLite's parser acts) */
  int has_pk = 0, nongen = 0;
  for (int i = 0; i < ct->ncols; i++) {
    const SqlColumnDef *cd = &ct->cols[i];
    for (int j = 0; j < t->ncol; j++)
      if (!util_stricmp(t->cols[j].name, cd->name))
        return fail(b, SHALE_ERROR, "duplicate column name: %s", cd->name);
    Column *c = &t->cols[t->ncol++];
    c->name = sdup(b, cd->name);
    c->type = sdup(b, cd->decl_type);
    c->affinity = schema_type_affinity(cd->decl_type);
    if (t->strict && cd->decl_type && !util_stricmp(cd->decl_type, "ANY")) c->affinity = AFF_BLOB;
    for (int k = 0; k < cd->ncons; k++) {
      SqlConstraint *cs = &cd->cons[k];
      if (cs->type == SQL_CONS_GENERATED) {
        c->hidden = cs->stored ? COL_STORED : COL_VIRTUAL;
        c->gen = cs->expr;
        c->gen_sql = compile_span_text(b, cs->expr->span);
        t->has_generated = 1;
      }
    }
    if (c->hidden == COL_NORMAL) nongen++;
    for (int k = 0; k < cd->ncons && !b->rc; k++) {
      SqlConstraint *cs = &cd->cons[k];
      switch (cs->type) {
        case SQL_CONS_PRIMARY_KEY:
          add_primary_key(b, t, NULL, t->ncol - 1, cs->sort, cs->on_conflict, cs->autoincrement,
                          &has_pk);
          break;
        case SQL_CONS_NOT_NULL:
          c->notnull = 1;
          c->notnull_conflict = cs->on_conflict;
          break;
        case SQL_CONS_UNIQUE: {
          Index *idx;
          c->unique = 1;
          constraint_index(b, t, NULL, t->ncol - 1, 0, cs->on_conflict, INDEX_ORIGIN_UNIQUE, &idx);
          break;
        }
        case SQL_CONS_CHECK:
          add_check(b, t, cs);
          break;
        case SQL_CONS_DEFAULT: {
          ExprCheck ec;
          expr_check(&ec, NULL, cs->expr);
          if (ec.column || ec.variable || ec.subquery || ec.window)
            return fail(b, SHALE_ERROR, "default value of column [%s] is not constant", c->name);
          c->dflt = cs->expr;
          c->dflt_sql = default_text(b, cs->expr);
          break;
        }
        case SQL_CONS_COLLATE:
          if (!b->loading && !record_collation_find(cs->collate))
            return fail(b, SHALE_ERROR, "no such collation sequence: %s", cs->collate);
          c->coll = sdup(b, cs->collate);
          /* "a UNIQUE COLLATE x": the index made before takes the collation */
          for (Index *ix = t->indexes; ix; ix = ix->next)
            if (ix->nkey == 1 && ix->cols[0].col == t->ncol - 1) ix->cols[0].coll = c->coll;
          break;
        case SQL_CONS_REFERENCES:
          add_fk(b, t, cs->fk, t->ncol - 1, NULL);
          break;
        default:
          break;
      }
    }
    if (b->rc) return b->rc;
  }
  /* table constraints */
  for (int k = 0; k < ct->ncons && !b->rc; k++) {
    SqlConstraint *cs = &ct->cons[k];
    switch (cs->type) {
      case SQL_CONS_PRIMARY_KEY:
        add_primary_key(b, t, cs->columns, -1, 0, cs->on_conflict, cs->autoincrement, &has_pk);
        break;
      case SQL_CONS_UNIQUE: {
        Index *idx;
        constraint_index(b, t, cs->columns, -1, 0, cs->on_conflict, INDEX_ORIGIN_UNIQUE, &idx);
        break;
      }
      case SQL_CONS_CHECK:
        add_check(b, t, cs);
        break;
      case SQL_CONS_FOREIGN_KEY:
        add_fk(b, t, cs->fk, -1, cs->fk->from_cols);
        break;
      default:
        break;
    }
  }
  if (b->rc) return b->rc;

  /* the checks SQLite makes when the table ends */
  if (t->strict)
    for (int i = 0; i < t->ncol; i++) {
      if (!t->cols[i].type)
        return fail(b, SHALE_ERROR, "missing datatype for %s.%s", t->name, t->cols[i].name);
      if (!strict_type_ok(t->cols[i].type))
        return fail(b, SHALE_ERROR, "unknown datatype for %s.%s: \"%s\"", t->name, t->cols[i].name,
                    t->cols[i].type);
    }
  if (t->without_rowid) {
    if (t->autoincrement)
      return fail(b, SHALE_ERROR, "AUTOINCREMENT not allowed on WITHOUT ROWID tables");
    if (!has_pk) return fail(b, SHALE_ERROR, "PRIMARY KEY missing on table %s", t->name);
    if (t->rowid_alias >= 0) { /* an INTEGER PRIMARY KEY gets its index now (invariant 2) */
      int c = t->rowid_alias;
      t->rowid_alias = -1;
      t->autoincrement = 0;
      Index *idx;
      uint8_t sort = b->ipk_desc ? SQL_SORT_DESC : 0; /* PRIMARY KEY(x DESC) keeps DESC here */
      if (constraint_index(b, t, NULL, c, sort, t->pk_conflict, INDEX_ORIGIN_PK, &idx))
        return b->rc;
      t->pk_index = idx;
    }
    Index *pk = t->pk_index;
    int j = 0;                           /* PRIMARY KEY(a, a): the repeat is dropped */
    for (int i = 0; i < pk->nkey; i++) { /* the same column and collation */
      int dup = 0;
      for (int k = 0; k < j; k++)
        dup |=
            pk->cols[k].col == pk->cols[i].col && !util_stricmp(pk->cols[k].coll, pk->cols[i].coll);
      if (!dup) pk->cols[j++] = pk->cols[i];
    }
    pk->nkey = j;
    for (int i = 0; i < pk->nkey; i++) t->cols[pk->cols[i].col].notnull = 1;
  }
  if (t->strict) /* STRICT tables: PRIMARY KEY columns are NOT NULL */
    for (const Index *x = t->indexes; x; x = x->next)
      if (x->origin == INDEX_ORIGIN_PK)
        for (int i = 0; i < x->nkey; i++) t->cols[x->cols[i].col].notnull = 1;
  if (t->has_generated && nongen == 0)
    return fail(b, SHALE_ERROR, "must have at least one non-generated column");
  if (b->sf && b->sf->funcs && !b->loading && resolve_self(b, t)) return b->rc;
  if (b->sf && b->loading) { /* SQLite's check when it reads the schema */
    const char *bad = NULL;
    for (int i = 0; !bad && i < t->ncheck; i++) bad = unsafe_call(b->sf, t->checks[i].expr);
    for (int i = 0; !bad && i < t->ncol; i++) bad = unsafe_call(b->sf, t->cols[i].gen);
    if (bad) return fail(b, SHALE_ERROR, "unsafe use of %s()", bad);
  }
  for (int i = 0; i < t->ncheck; i++) {
    ExprCheck ec;
    expr_check(&ec, t, t->checks[i].expr);
    if (ec.subquery) return fail(b, SHALE_ERROR, "subqueries prohibited in CHECK constraints");
    if (ec.bad_column) return bad_column(b, &ec);
  }
  for (int i = 0; i < t->ncol; i++) {
    if (!t->cols[i].gen) continue;
    ExprCheck ec;
    expr_check(&ec, t, t->cols[i].gen);
    if (ec.subquery) return fail(b, SHALE_ERROR, "subqueries prohibited in generated columns");
    if (ec.bad_column) return bad_column(b, &ec);
  }

  /* primary key list, storage slots, trailing index columns */
  if (t->without_rowid) {
    Index *pk = t->pk_index;
    t->npk = pk->nkey;
  } else if (t->rowid_alias >= 0) {
    t->npk = 1;
  } else {
    for (Index *i = t->indexes; i; i = i->next)
      if (i->origin == INDEX_ORIGIN_PK) t->npk = i->nkey;
  }
  t->pk_cols = zalloc(b, sizeof(int) * (size_t)(t->npk + 1));
  t->pk_desc = zalloc(b, (size_t)(t->npk + 1));
  if (b->rc) return b->rc;
  if (t->rowid_alias >= 0) {
    t->pk_cols[0] = t->rowid_alias;
  } else {
    for (Index *i = t->indexes; i; i = i->next)
      if (i->origin == INDEX_ORIGIN_PK && (!t->without_rowid || i == t->pk_index))
        for (int k = 0; k < t->npk; k++) {
          t->pk_cols[k] = i->cols[k].col;
          t->pk_desc[k] = i->cols[k].desc;
        }
  }
  for (int i = 0; i < t->ncol; i++) t->cols[i].pk = 0;
  for (int k = t->npk - 1; k >= 0; k--) t->cols[t->pk_cols[k]].pk = (uint8_t)(k + 1);
  int slot = 0;
  if (t->without_rowid) { /* the record is the PK index's key: PK columns, then the rest */
    Index *pk = t->pk_index;
    append_trailing(t, pk);
    for (int i = 0; i < t->ncol; i++) t->cols[i].storage = -1;
    for (int k = 0; k < pk->ncol; k++)
      if (t->cols[pk->cols[k].col].storage < 0) t->cols[pk->cols[k].col].storage = k;
    slot = pk->ncol; /* a column repeated in the PK (other collation) is stored twice */
  } else {
    for (int i = 0; i < t->ncol; i++)
      t->cols[i].storage = t->cols[i].hidden == COL_VIRTUAL ? -1 : slot++;
  }
  t->nstored = slot;
  for (Index *i = t->indexes; i; i = i->next)
    if (i != t->pk_index) append_trailing(t, i);
  *out = t;
  return b->rc;
}

int compile_schema_table_from_create(Schema *s, const SqlStmt *create, const char *sql, Table **out,
                                     char **errmsg) {
  return compile_schema_table_from_create_src(s, create, sql, NULL, NULL, out, errmsg);
}

int compile_schema_table_from_create_src(Schema *s, const SqlStmt *create, const char *sql,
                                         const char *src, const SchemaFuncs *sf, Table **out,
                                         char **errmsg) {
  Build b = {
      .s = s, .sql = sql, .src = src, .errmsg = errmsg, .loading = 0, .rc = SHALE_OK, .sf = sf};
  if (errmsg) *errmsg = NULL;
  build_table(&b, create, out);
  if (b.rc != SHALE_OK) *out = NULL;
  return b.rc;
}

/* ---- indexes ---- */

static int build_index(Build *b, const SqlStmt *st, Index **out) {
  const SqlCreateIndex *ci = &st->u.create_index;
  *out = NULL;
  if (st->kind != SQL_STMT_CREATE_INDEX) return fail(b, SHALE_ERROR, "not a CREATE INDEX");
  Table *t = schema_find_table(b->s, ci->table);
  if (!t) {
    if (schema_find_view(b->s, ci->table)) return fail(b, SHALE_ERROR, "views may not be indexed");
    return fail(b, SHALE_ERROR, "no such table: main.%s", ci->table);
  }
  if (t->is_schema) return fail(b, SHALE_ERROR, "table %s may not be indexed", ci->table);
  if (!b->loading && !util_strnicmp(ci->name.name, "sqlite_", 7))
    return fail(b, SHALE_ERROR, "object name reserved for internal use: %s", ci->name.name);
  int n = ci->columns->n;
  Index *idx = zalloc(b, sizeof *idx);
  IndexColumn *ic = zalloc(b, sizeof *ic * (size_t)(n + t->ncol + 1));
  if (!idx || !ic) return b->rc;
  idx->name = sdup(b, ci->name.name);
  idx->sql = b->sql ? sdup(b, b->sql) : NULL;
  idx->table = t;
  idx->cols = ic;
  idx->nkey = n;
  idx->unique = ci->unique;
  idx->on_conflict = ci->unique ? SCHEMA_OE_ABORT : SCHEMA_OE_NONE;
  idx->origin = INDEX_ORIGIN_CREATE;
  idx->where = ci->where;
  /* SQLite resolves the WHERE clause before the key columns, except that a
   * first key column written as a bare name (or 'string') is looked up
   * before it */
  SqlExpr *lone = n >= 1 ? ci->columns->a[0].expr : NULL;
  if (lone &&
      (lone->op == SQL_E_STRING || (lone->op == SQL_E_ID && !(lone->flags & SQL_EF_QUOTED))) &&
      schema_table_column_index(t, lone->z) < 0)
    return fail(b, SHALE_ERROR, "no such column: %s", lone->z);
  if (ci->where) {
    ExprCheck ec;
    expr_check(&ec, t, ci->where);
    if (ec.subquery)
      return fail(b, SHALE_ERROR, "subqueries prohibited in partial index WHERE clauses");
    if (ec.variable)
      return fail(b, SHALE_ERROR, "parameters prohibited in partial index WHERE clauses");
    if (ec.bad_column) return bad_column(b, &ec);
    IdxWalk x;
    if (b->loading) {
      const char *bad = unsafe_call(b->sf, ci->where);
      if (bad) return fail(b, SHALE_ERROR, "unsafe use of %s()", bad);
    } else if (index_expr_refused(b->sf, "partial index WHERE clauses", ci->where, &x)) {
      return fail(b, SHALE_ERROR, "%s", x.msg);
    }
  }
  for (int i = 0; i < n; i++) {
    SqlExpr *e = ci->columns->a[i].expr;
    const char *coll = NULL;
    while (e && e->op == SQL_E_COLLATE) {
      if (!coll) coll = e->z;
      e = e->a;
    }
    int c = INDEX_COL_EXPR;
    if (e && (e->op == SQL_E_ID || e->op == SQL_E_STRING)) { /* ('a') names a column too */
      c = schema_table_column_index(t, e->z);
      if (c < 0 && (e->op == SQL_E_STRING || !(e->flags & SQL_EF_QUOTED)))
        return fail(b, SHALE_ERROR, "no such column: %s", e->z);
      if (c < 0) c = INDEX_COL_EXPR; /* a "string": a constant expression */
    }
    if (c == INDEX_COL_EXPR) {
      ExprCheck ec;
      expr_check(&ec, t, ci->columns->a[i].expr);
      if (ec.subquery) return fail(b, SHALE_ERROR, "subqueries prohibited in index expressions");
      if (ec.variable) return fail(b, SHALE_ERROR, "parameters prohibited in index expressions");
      if (ec.qualified)
        return fail(b, SHALE_ERROR, "the \".\" operator prohibited in index expressions");
      if (ec.bad_column) return bad_column(b, &ec);
      IdxWalk x;
      if (b->loading) {
        const char *bad = unsafe_call(b->sf, ci->columns->a[i].expr);
        if (bad) return fail(b, SHALE_ERROR, "unsafe use of %s()", bad);
      } else if (index_expr_refused(b->sf, "index expressions", ci->columns->a[i].expr, &x)) {
        return fail(b, SHALE_ERROR, "%s", x.msg);
      }
      ic[i].expr = e;
      /* an expression collates as its top-level COLLATE says, else BINARY
       * (not its operands' collations: SQLite stores it so) */
    }
    if (coll && !b->loading && !record_collation_find(coll))
      return fail(b, SHALE_ERROR, "no such collation sequence: %s", coll);
    ic[i].col = c;
    ic[i].coll = coll ? sdup(b, coll) : c >= 0 ? col_coll(t, c) : "BINARY";
    ic[i].desc = index_desc(b, ci->columns->a[i].sort);
  }
  /* generated-column loops show once every name is resolved (when the
   * index is coded: the WHERE, then the key columns) */
  if (check_gen_loop(b, t, ci->where, -1)) return b->rc;
  for (int i = 0; i < n; i++)
    if (check_gen_loop(b, t, ic[i].expr, ic[i].expr ? -1 : ic[i].col)) return b->rc;
  append_trailing(t, idx);
  *out = idx;
  return b->rc;
}

int compile_schema_index_from_create(Schema *s, const SqlStmt *create, const char *sql, Index **out,
                                     char **errmsg) {
  return compile_schema_index_from_create_fn(s, create, sql, NULL, out, errmsg);
}

int compile_schema_index_from_create_fn(Schema *s, const SqlStmt *create, const char *sql,
                                        const SchemaFuncs *sf, Index **out, char **errmsg) {
  Build b = {.s = s, .sql = sql, .errmsg = errmsg, .loading = 0, .rc = SHALE_OK, .sf = sf};
  if (errmsg) *errmsg = NULL;
  build_index(&b, create, out);
  if (b.rc != SHALE_OK) *out = NULL;
  return b.rc;
}

/* ---- virtual tables, views and triggers ---- */

/* A virtual table's row (schema.h invariant 5): its name and module only. */
static int build_vtab(Build *b, const SqlStmt *st, Table **out) {
  const SqlCreateVtab *vt = &st->u.create_vtab;
  *out = NULL;
  Table *t = zalloc(b, sizeof *t);
  if (!t) return b->rc;
  t->name = sdup(b, vt->name.name);
  t->vtab_module = sdup(b, vt->module);
  t->sql = sdup(b, b->sql);
  t->rowid_alias = -1;
  *out = t;
  return b->rc;
}

static int build_view(Build *b, const SqlStmt *st, View **out) {
  const SqlCreateView *cv = &st->u.create_view;
  *out = NULL;
  if (st->kind != SQL_STMT_CREATE_VIEW) return fail(b, SHALE_ERROR, "not a CREATE VIEW");
  if (!b->loading && !util_strnicmp(cv->name.name, "sqlite_", 7))
    return fail(b, SHALE_ERROR, "object name reserved for internal use: %s", cv->name.name);
  View *v = zalloc(b, sizeof *v);
  if (!v) return b->rc;
  v->name = sdup(b, cv->name.name);
  v->sql = sdup(b, b->sql);
  v->select = cv->select;
  if (cv->columns) {
    v->ncol = cv->columns->n;
    v->cols = zalloc(b, sizeof(char *) * (size_t)(v->ncol + 1));
    for (int i = 0; v->cols && i < v->ncol; i++) v->cols[i] = sdup(b, cv->columns->a[i]);
  }
  *out = v;
  return b->rc;
}

static int build_trigger(Build *b, const SqlStmt *st, Trigger **out) {
  const SqlCreateTrigger *tr = &st->u.create_trigger;
  *out = NULL;
  if (st->kind != SQL_STMT_CREATE_TRIGGER) return fail(b, SHALE_ERROR, "not a CREATE TRIGGER");
  if (!b->loading && !util_strnicmp(tr->name.name, "sqlite_", 7))
    return fail(b, SHALE_ERROR, "object name reserved for internal use: %s", tr->name.name);
  Table *on = schema_find_table(b->s, tr->table);
  View *onv = on ? NULL : schema_find_view(b->s, tr->table);
  if (!on && !onv && !b->temp) return fail(b, SHALE_ERROR, "no such table: main.%s", tr->table);
  if (on && !b->loading && !util_strnicmp(on->name, "sqlite_", 7))
    return fail(b, SHALE_ERROR, "cannot create trigger on system table");
  if (onv && tr->time != SQL_TRIG_INSTEAD_OF)
    return fail(b, SHALE_ERROR, "cannot create %s trigger on view: %s",
                tr->time == SQL_TRIG_AFTER ? "AFTER" : "BEFORE", tr->table);
  if (on && tr->time == SQL_TRIG_INSTEAD_OF)
    return fail(b, SHALE_ERROR, "cannot create INSTEAD OF trigger on table: %s", tr->table);
  Trigger *g = zalloc(b, sizeof *g);
  if (!g) return b->rc;
  g->name = sdup(b, tr->name.name);
  g->table = sdup(b, tr->table);
  g->sql = sdup(b, b->sql);
  g->timing = tr->time == SQL_TRIG_AFTER        ? TRIGGER_AFTER
              : tr->time == SQL_TRIG_INSTEAD_OF ? TRIGGER_INSTEAD_OF
                                                : TRIGGER_BEFORE;
  g->event = tr->event == TK_DELETE   ? TRIGGER_DELETE
             : tr->event == TK_INSERT ? TRIGGER_INSERT
                                      : TRIGGER_UPDATE;
  if (tr->update_of) {
    g->nupdate_of = tr->update_of->n;
    g->update_of = zalloc(b, sizeof(char *) * (size_t)(g->nupdate_of + 1));
    for (int i = 0; g->update_of && i < g->nupdate_of; i++)
      g->update_of[i] = sdup(b, tr->update_of->a[i]);
  }
  g->when = tr->when;
  g->nstmts = tr->nstmts;
  g->stmts = tr->stmts;
  *out = g;
  return b->rc;
}

int compile_schema_view_from_create(Schema *s, const SqlStmt *create, const char *sql, View **out,
                                    char **errmsg) {
  Build b = {.s = s, .sql = sql, .errmsg = errmsg, .loading = 0, .rc = SHALE_OK};
  if (errmsg) *errmsg = NULL;
  build_view(&b, create, out);
  if (b.rc != SHALE_OK) *out = NULL;
  return b.rc;
}

int compile_schema_trigger_from_create(Schema *s, const SqlStmt *create, const char *sql,
                                       Trigger **out, char **errmsg) {
  Build b = {.s = s, .sql = sql, .errmsg = errmsg, .loading = 0, .rc = SHALE_OK};
  if (errmsg) *errmsg = NULL;
  build_trigger(&b, create, out);
  if (b.rc != SHALE_OK) *out = NULL;
  return b.rc;
}

/* ---- loading sqlite_schema ---- */

#define ROOT_NULL 0
#define ROOT_OK 1
#define ROOT_INVALID 2

typedef struct Row {
  const char *type, *name, *tbl, *sql;
  int64_t root;
  int root_kind; /* ROOT_*: as SQLite reads the rootpage column as a u32 */
} Row;

static const char *rec_text(Build *b, const uint8_t *rec, uint32_t n, int col) {
  ShValue v;
  if (record_column(rec, n, col, &v) != SHALE_OK) {
    fail(b, SHALE_CORRUPT, NULL);
    return NULL;
  }
  if (v.type != SHALE_TEXT) return NULL;
  if (record_text_decode(&v, b->s->text_enc) != SHALE_OK) {
    nomem(b);
    return NULL;
  }
  char *z = util_arena_strndup(&b->s->arena, v.z ? v.z : "", v.n);
  value_clear(&v);
  if (!z) nomem(b);
  return z;
}

static int read_rows(Build *b, Btree *bt, Row **rows_out, int *nrows) {
  BtCursor *cur = NULL;
  Row *rows = NULL;
  int n = 0, cap = 0;
  int rc = btree_cursor_open(bt, 1, 0, NULL, NULL, &cur);
  if (rc != SHALE_OK)
    return fail(b, rc, "%s",
                rc == SHALE_CORRUPT && btree_errmsg(bt) ? btree_errmsg(bt) : shale_errstr(rc));
  int done = 0;
  rc = btree_first(cur, &done);
  uint8_t *buf = NULL;
  while (rc == SHALE_OK && !done) {
    uint32_t size = btree_payload_size(cur), avail;
    const uint8_t *p = btree_payload_fetch(cur, &avail);
    if (avail < size) {
      shale_free(buf);
      buf = shale_malloc(size);
      if (!buf) {
        rc = SHALE_NOMEM;
        break;
      }
      rc = btree_payload_read(cur, 0, size, buf);
      if (rc != SHALE_OK) break;
      p = buf;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      Row *nr = util_arena_alloc(&b->s->arena, sizeof *nr * (size_t)cap);
      if (!nr) {
        rc = SHALE_NOMEM;
        break;
      }
      if (n) memcpy(nr, rows, sizeof *nr * (size_t)n);
      rows = nr;
    }
    Row *r = &rows[n++];
    memset(r, 0, sizeof *r);
    r->type = rec_text(b, p, size, 0);
    r->name = rec_text(b, p, size, 1);
    r->tbl = rec_text(b, p, size, 2);
    r->sql = rec_text(b, p, size, 4);
    ShValue v;
    r->root_kind = ROOT_INVALID;
    if (record_column(p, size, 3, &v) != SHALE_OK) {
      fail(b, SHALE_CORRUPT, "database disk image is malformed");
    } else if (v.type == SHALE_NULL) {
      r->root_kind = ROOT_NULL;
    } else if (v.type == SHALE_INTEGER && v.i >= 0 && v.i <= 0xffffffffLL) {
      r->root = v.i;
      r->root_kind = ROOT_OK;
    } else if (v.type == SHALE_FLOAT && v.r >= 0 && v.r <= 4294967295.0 &&
               v.r == (double)(int64_t)v.r) {
      r->root = (int64_t)v.r;
      r->root_kind = ROOT_OK;
    } else if (v.type == SHALE_TEXT && v.n > 0 && v.n <= 10) {
      int64_t x = 0;
      uint32_t k = 0;
      while (k < v.n && v.z[k] >= '0' && v.z[k] <= '9') x = x * 10 + (v.z[k++] - '0');
      if (k == v.n && x <= 0xffffffffLL) {
        r->root = x;
        r->root_kind = ROOT_OK;
      }
    }
    if (b->rc) break;
    rc = btree_next(cur, &done);
  }
  shale_free(buf);
  btree_cursor_close(cur);
  if (b->rc) return b->rc;
  if (rc == SHALE_NOMEM) return nomem(b);
  if (rc != SHALE_OK) {
    const char *m = btree_errmsg(bt);
    return fail(b, rc, "%s", m && rc == SHALE_CORRUPT ? m : shale_errstr(rc));
  }
  *rows_out = rows;
  *nrows = n;
  return SHALE_OK;
}

/* "malformed database schema (name)[ - reason]" as SHALE_CORRUPT. */
static int corrupt_row(Build *b, const Row *r, const char *reason) {
  if (b->errmsg && *b->errmsg) {
    shale_free(*b->errmsg);
    *b->errmsg = NULL;
  }
  const char *nm = r->name ? r->name : "?";
  b->rc = SHALE_OK;
  if (reason) return fail(b, SHALE_CORRUPT, "malformed database schema (%s) - %s", nm, reason);
  return fail(b, SHALE_CORRUPT, "malformed database schema (%s)", nm);
}

static int starts_cr(const char *z) {
  return z && (z[0] == 'c' || z[0] == 'C') && (z[1] == 'r' || z[1] == 'R');
}

/* Parse and build the object of one row (sql starting with "CR"). */
static int load_row(Build *b, const Row *r, uint32_t npages) {
  SqlStmt *st = NULL;
  char *perr = NULL;
  int rc = sql_parse(&b->s->arena, r->sql, -1, &st, NULL, &perr);
  if (rc == SHALE_NOMEM) {
    shale_free(perr);
    return nomem(b);
  }
  if (rc != SHALE_OK || !st) {
    int r2 = corrupt_row(b, r, perr ? perr : NULL);
    shale_free(perr);
    return r2;
  }
  b->sql = r->sql;
  /* the row must describe the object its text creates */
  const char *want_type = NULL, *obj = NULL, *on = NULL;
  switch (st->kind) {
    case SQL_STMT_CREATE_TABLE:
      want_type = "table", obj = on = st->u.create_table.name.name;
      if (st->u.create_table.as_select || r->root == 1) return corrupt_row(b, r, NULL);
      break;
    case SQL_STMT_CREATE_INDEX:
      want_type = "index", obj = st->u.create_index.name.name, on = st->u.create_index.table;
      break;
    case SQL_STMT_CREATE_VIEW:
      want_type = "view", obj = on = st->u.create_view.name.name;
      break;
    case SQL_STMT_CREATE_TRIGGER:
      want_type = "trigger", obj = st->u.create_trigger.name.name, on = st->u.create_trigger.table;
      break;
    case SQL_STMT_CREATE_VTAB:
      want_type = "table", obj = on = st->u.create_vtab.name.name;
      break;
    default:
      return corrupt_row(b, r, NULL); /* other statements */
  }
  /* checked once the statement has run (its own errors come first) */
  int mismatch = !r->type || strcmp(r->type, want_type) || !r->name || util_stricmp(r->name, obj) ||
                 !r->tbl || util_stricmp(r->tbl, on);
  switch (st->kind) {
    case SQL_STMT_CREATE_TABLE: {
      Table *t = NULL;
      if (schema_find_table(b->s, st->u.create_table.name.name)) return corrupt_row(b, r, NULL);
      if (build_table(b, st, &t) != SHALE_OK) break;
      if (mismatch) return corrupt_row(b, r, NULL);
      t->root = (uint32_t)r->root;
      if (t->pk_index) t->pk_index->root = t->root;
      if (schema_add_table(b->s, t) != SHALE_OK) return nomem(b);
      if (t->pk_index && schema_add_index(b->s, t->pk_index) != SHALE_OK) return nomem(b);
      break;
    }
    case SQL_STMT_CREATE_VTAB: {
      Table *t = NULL;
      if (schema_find_table(b->s, obj)) return corrupt_row(b, r, NULL);
      if (build_vtab(b, st, &t) != SHALE_OK) break;
      if (mismatch) return corrupt_row(b, r, NULL);
      if (schema_add_table(b->s, t) != SHALE_OK) return nomem(b);
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      Index *idx = NULL;
      if (schema_find_index(b->s, st->u.create_index.name.name)) return corrupt_row(b, r, NULL);
      if (build_index(b, st, &idx) != SHALE_OK) break;
      if (mismatch) return corrupt_row(b, r, NULL);
      idx->root = (uint32_t)r->root;
      if (schema_add_index(b->s, idx) != SHALE_OK) return nomem(b);
      break;
    }
    case SQL_STMT_CREATE_VIEW: {
      View *v = NULL;
      if (schema_find_view(b->s, st->u.create_view.name.name) ||
          schema_find_table(b->s, st->u.create_view.name.name))
        return corrupt_row(b, r, NULL);
      if (build_view(b, st, &v) != SHALE_OK) break;
      if (mismatch) return corrupt_row(b, r, NULL);
      if (schema_add_view(b->s, v) != SHALE_OK) return nomem(b);
      break;
    }
    case SQL_STMT_CREATE_TRIGGER: {
      Trigger *g = NULL;
      if (schema_find_trigger(b->s, st->u.create_trigger.name.name)) return corrupt_row(b, r, NULL);
      if (build_trigger(b, st, &g) != SHALE_OK) break;
      if (mismatch) return corrupt_row(b, r, NULL);
      if (schema_add_trigger(b->s, g) != SHALE_OK) return nomem(b);
      break;
    }
    default:
      break;
  }
  if (b->rc == SHALE_ERROR) {
    char *m = b->errmsg ? *b->errmsg : NULL;
    if (b->errmsg) *b->errmsg = NULL;
    b->rc = SHALE_OK;
    corrupt_row(b, r, m);
    shale_free(m);
  }
  return b->rc;
}

/* An automatic index row (sql NULL): give its table's index the root. */
static int load_autoindex(Build *b, const Row *r, uint32_t npages) {
  if (r->name && schema_find_index(b->s, r->name)) return corrupt_row(b, r, NULL);
  Index *idx = NULL;
  Table *t = r->tbl ? schema_find_table(b->s, r->tbl) : NULL;
  for (Index *i = t ? t->indexes : NULL; i && r->name; i = i->next)
    if (i->is_autoindex && !i->root && i != t->pk_index && !util_stricmp(i->name, r->name)) idx = i;
  if (!idx) return corrupt_row(b, r, "orphan index");
  if (r->root_kind != ROOT_OK || r->root < 2 || (npages && r->root > npages))
    return corrupt_row(b, r, "invalid rootpage");
  idx->root = (uint32_t)r->root;
  if (schema_add_index(b->s, idx) != SHALE_OK) return nomem(b);
  return b->rc;
}

/* ---- sqlite_stat1 ---- */

/* The text SQLite's loader sees for a stat1 column (sqlite3_exec's argv:
 * numbers as text), in the schema arena; NULL for NULL. */
static const char *stat_text(Build *b, const uint8_t *rec, uint32_t n, int col) {
  ShValue v;
  if (record_column(rec, n, col, &v) != SHALE_OK) return NULL;
  char num[40];
  switch (v.type) {
    case SHALE_TEXT:
    case SHALE_BLOB: {
      if (record_text_decode(&v, b->s->text_enc) != SHALE_OK) {
        nomem(b);
        return NULL;
      }
      char *z = util_arena_strndup(&b->s->arena, v.z ? v.z : "", v.n);
      value_clear(&v);
      if (!z) nomem(b);
      return z;
    }
    case SHALE_INTEGER:
      snprintf(num, sizeof num, "%lld", (long long)v.i);
      break;
    case SHALE_FLOAT:
      snprintf(num, sizeof num, "%.15g", v.r);
      break;
    default:
      return NULL;
  }
  char *z = util_arena_strndup(&b->s->arena, num, strlen(num));
  if (!z) nomem(b);
  return z;
}

/* SQLite's reading of a stat string: up to nout decimal numbers separated
 * by single spaces (a non-digit reads as 0), then space-separated options. */
static int stat_decode(const char *z, int nout, int64_t *out, uint8_t *unordered, uint8_t *noskip) {
  int i = 0;
  for (; *z && i < nout; i++) {
    int64_t v = 0;
    while (*z >= '0' && *z <= '9') {
      if (v < (INT64_MAX - 9) / 10) v = v * 10 + (*z - '0');
      z++;
    }
    out[i] = v;
    if (*z == ' ') z++;
  }
  while (*z) {
    if (unordered && !strncmp(z, "unordered", 9)) *unordered = 1;
    if (noskip && !strncmp(z, "noskipscan", 10)) *noskip = 1;
    while (*z && *z != ' ') z++;
    while (*z == ' ') z++;
  }
  return i;
}

/* One row of sqlite_stat1 (as SQLite's analysisLoader). */
static void stat_row(Build *b, const char *tbl, const char *idxname, const char *stat) {
  if (!tbl || !stat) return;
  Table *t = schema_find_table(b->s, tbl);
  if (!t) return;
  if (!idxname) {
    int64_t v = 0;
    stat_decode(stat, 1, &v, NULL, NULL);
    t->stat_rows = v;
    t->has_stat = 1;
    return;
  }
  Index *idx = NULL;
  if (!util_stricmp(tbl, idxname)) {
    for (Index *x = t->indexes; x && !idx; x = x->next)
      if (x->origin == INDEX_ORIGIN_PK) idx = x;
  } else {
    idx = schema_find_index(b->s, idxname);
  }
  if (!idx) return;
  int n = idx->nkey + 1;
  if (!idx->stat) {
    idx->stat = util_arena_zalloc(&b->s->arena, sizeof(int64_t) * (size_t)n);
    if (!idx->stat) {
      nomem(b);
      return;
    }
  }
  idx->stat_unordered = idx->stat_noskipscan = 0;
  idx->nstat = stat_decode(stat, n, idx->stat, &idx->stat_unordered, &idx->stat_noskipscan);
  if (idx->nstat > 0 && !idx->where) {
    t->stat_rows = idx->stat[0];
    t->has_stat = 1;
  }
}

/* Load sqlite_stat1 into the schema's Table/Index fields. Errors other
 * than out-of-memory leave the statistics as read so far (SQLite ignores
 * them too). */
static int load_stats(Build *b, Btree *bt) {
  Table *st = schema_find_table(b->s, "sqlite_stat1");
  if (!st || !st->root || st->without_rowid) return SHALE_OK;
  BtCursor *cur = NULL;
  if (btree_cursor_open(bt, st->root, 0, NULL, NULL, &cur) != SHALE_OK) return SHALE_OK;
  int done = 0;
  int rc = btree_first(cur, &done);
  uint8_t *buf = NULL;
  while (rc == SHALE_OK && !done && !b->rc) {
    uint32_t size = btree_payload_size(cur), avail;
    const uint8_t *p = btree_payload_fetch(cur, &avail);
    if (avail < size) {
      shale_free(buf);
      buf = shale_malloc(size);
      if (!buf) {
        nomem(b);
        break;
      }
      if (btree_payload_read(cur, 0, size, buf) != SHALE_OK) break;
      p = buf;
    }
    const char *tbl = stat_text(b, p, size, 0);
    const char *idx = stat_text(b, p, size, 1);
    const char *stat = stat_text(b, p, size, 2);
    if (!b->rc) stat_row(b, tbl, idx, stat);
    rc = btree_next(cur, &done);
  }
  shale_free(buf);
  btree_cursor_close(cur);
  if (rc == SHALE_NOMEM && !b->rc) nomem(b);
  return b->rc;
}

/* Schema.order: tables and views in row order. */
static void fill_order(Build *b, const Row *rows, int nrows) {
  Schema *s = b->s;
  s->order = util_arena_alloc(&s->arena, sizeof(const char *) * (size_t)(nrows + 1));
  if (!s->order) {
    nomem(b);
    return;
  }
  for (int i = 0; i < nrows; i++) {
    const Row *r = &rows[i];
    if (!r->type || !r->name) continue;
    if (!strcmp(r->type, "table")) {
      Table *t = schema_find_table(s, r->name);
      if (t && !t->is_schema) s->order[s->norder++] = t->name;
    } else if (!strcmp(r->type, "view")) {
      View *v = schema_find_view(s, r->name);
      if (v) s->order[s->norder++] = v->name;
    }
  }
}

int compile_schema_load(Btree *bt, Schema **out, char **errmsg) {
  return compile_schema_load_fn(bt, 0, NULL, out, errmsg);
}

int compile_schema_load_ex(Btree *bt, int temp, Schema **out, char **errmsg) {
  return compile_schema_load_fn(bt, temp, NULL, out, errmsg);
}

int compile_schema_load_fn(Btree *bt, int temp, const SchemaFuncs *sf, Schema **out,
                           char **errmsg) {
  *out = NULL;
  if (errmsg) *errmsg = NULL;
  Schema *s = schema_new();
  if (!s) return SHALE_NOMEM;
  Build b = {
      .s = s, .sql = NULL, .errmsg = errmsg, .loading = 1, .temp = temp, .rc = SHALE_OK, .sf = sf};
  int own_txn = btree_txn_state(bt) == PAGER_TXN_NONE;
  int rc = own_txn ? btree_begin(bt, BTREE_TXN_READ) : SHALE_OK;
  if (rc != SHALE_OK) {
    schema_free(s);
    return rc;
  }
  uint32_t npages = btree_page_count(bt);
  s->text_enc = btree_text_encoding(bt);
  Row *rows = NULL;
  int nrows = 0;
  if (npages > 0) {
    if (btree_get_meta(bt, BTREE_META_SCHEMA_COOKIE, &s->cookie) != SHALE_OK ||
        btree_get_meta(bt, BTREE_META_SCHEMA_FORMAT, &s->file_format) != SHALE_OK)
      fail(&b, SHALE_CORRUPT, "database disk image is malformed");
    else
      read_rows(&b, bt, &rows, &nrows);
  }
  /* tables first (indexes and triggers name them), then the rest in order */
  for (int pass = 0; pass < 2 && !b.rc; pass++)
    for (int i = 0; i < nrows && !b.rc; i++) {
      const Row *r = &rows[i];
      int is_table = r->type && !strcmp(r->type, "table");
      if (is_table != (pass == 0)) continue;
      if (r->root_kind == ROOT_NULL) {
        corrupt_row(&b, r, NULL);
      } else if (starts_cr(r->sql)) {
        if (r->root_kind != ROOT_OK || (npages && r->root > npages))
          corrupt_row(&b, r, "invalid rootpage");
        else
          load_row(&b, r, npages);
      } else if (!r->name || (r->sql && r->sql[0])) {
        corrupt_row(&b, r, NULL);
      } else if (pass == 1) {
        load_autoindex(&b, r, npages);
      } else {
        corrupt_row(&b, r, "orphan index");
      }
    }
  if (!b.rc) fill_order(&b, rows, nrows);
  if (!b.rc) load_stats(&b, bt);
  if (own_txn) btree_commit(bt);
  if (b.rc != SHALE_OK) {
    schema_free(s);
    return b.rc;
  }
  SHALE_VALIDATE(schema_check(s)); /* a loaded schema holds schema.h's invariants */
  *out = s;
  return SHALE_OK;
}
