/*
 * resolve.c -- name resolution: binds column names to FROM items
 * (SQL_E_COLREF), NEW/OLD to trigger rows (SQL_E_TRIGREF), function names to
 * FuncDefs, ORDER BY / GROUP BY terms to result columns; plus the small AST
 * helpers of the select part (copy, compare) and its per-Parse state.
 *
 * Owns: the resolution fields of the AST nodes it rewrites (compile.h
 * invariant 1: the AST lives in the Parse arena), SelectState.
 *
 * Invariants:
 *  1. Lookups go level by level from the innermost NameCtx outwards: at each
 *     level the FROM items (a USING/NATURAL column merged into a left item
 *     is found once), then the rowid names, then (where allowed) the result
 *     aliases. The first level with a match wins; two matches at one level
 *     are "ambiguous column name: x".
 *  2. A reference to an outer level (depth > 0) sets NC_HAS_CORREL on every
 *     level it crosses (not on the level it lands in).
 *  3. Aggregate calls are marked agg = 1 only where NC_ALLOW_AGG is set and
 *     never inside another aggregate's arguments; the enclosing NameCtx gets
 *     NC_HAS_AGG.
 *  4. Already resolved nodes (COLREF, TRIGREF, REG) are left alone, so
 *     resolving twice is harmless.
 */
#include <stdlib.h>
#include <string.h>

#include "select_int.h"

#define NC_IN_GROUPBY 0x10000 /* private: resolving GROUP BY */

/* ---- per-Parse state ---- */

SelectState *compile_select_state(Parse *p) {
  if (!p->compile_select_state) {
    SelectState *s = compile_parse_alloc(p, sizeof *s);
    if (!s) return NULL;
    s->text = p->sql;
    p->compile_select_state = s;
  }
  return p->compile_select_state;
}

SelInfo *compile_sel_info(Parse *p, const SqlSelect *sel, int create) {
  if (sel->info || !create) return sel->info;
  SelectState *st = compile_select_state(p);
  if (!st) return NULL;
  SelInfo *i = compile_parse_alloc(p, sizeof *i);
  if (!i) return NULL;
  i->sel = sel;
  i->text = st->text;
  ((SqlSelect *)sel)->info = i;
  return i;
}

struct SrcX *compile_src_extras(Parse *p, const SrcList *src, int create) {
  if (!create && !p->compile_select_state) return NULL; /* none made yet: a look needs no state */
  SelectState *st = compile_select_state(p);
  if (!st || !src) return NULL;
  for (struct SrcX *x = st->srcx; x; x = x->next)
    if (x->src == src) return x;
  if (!create) return NULL;
  struct SrcX *x = compile_parse_alloc(p, sizeof *x);
  if (!x) return NULL;
  x->src = src;
  x->merged = compile_parse_alloc(p, sizeof(uint64_t) * (size_t)(src->n > 0 ? src->n : 1));
  if (!x->merged) return NULL;
  x->next = st->srcx;
  st->srcx = x;
  return x;
}

/* ---- AST helpers ---- */

SqlExprList *compile_expr_list_dup(Parse *p, const SqlExprList *l) {
  if (!l) return NULL;
  SqlExprList *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  n->n = n->cap = l->n;
  if (l->n) {
    n->a = compile_parse_alloc(p, sizeof(SqlExprItem) * (size_t)l->n);
    if (!n->a) return NULL;
  }
  for (int i = 0; i < l->n; i++) {
    n->a[i] = l->a[i];
    n->a[i].expr = compile_expr_dup(p, l->a[i].expr);
  }
  return n;
}

SqlExpr *compile_expr_dup(Parse *p, const SqlExpr *e) {
  if (!e) return NULL;
  SqlExpr *n = compile_parse_alloc(p, sizeof *n);
  if (!n) return NULL;
  *n = *e;
  n->a = compile_expr_dup(p, e->a);
  n->b = compile_expr_dup(p, e->b);
  n->c = compile_expr_dup(p, e->c);
  n->list = compile_expr_list_dup(p, e->list);
  n->filter = compile_expr_dup(p, e->filter);
  n->order = compile_expr_list_dup(p, e->order);
  return n;
}

static int str_same(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

int compile_expr_same(const SqlExpr *a, const SqlExpr *b) {
  if (a == b) return 1;
  if (!a || !b) return 0;
  if (a->op == SQL_E_REG && a->orig) return compile_expr_same(a->orig, b);
  if (b->op == SQL_E_REG && b->orig) return compile_expr_same(a, b->orig);
  if (a->op != b->op || a->sub != b->sub) return 0;
  if ((a->flags & ~SQL_EF_PAREN) != (b->flags & ~SQL_EF_PAREN)) return 0;
  switch (a->op) {
    case SQL_E_COLREF:
      return a->cursor == b->cursor && a->column == b->column;
    case SQL_E_TRIGREF:
      return a->cursor == b->cursor && a->column == b->column;
    case SQL_E_REG:
      return a->reg == b->reg;
    case SQL_E_FUNC:
      if (!a->z || !b->z || util_stricmp(a->z, b->z) != 0) return 0;
      if (a->over || b->over) return 0;
      break;
    case SQL_E_COLLATE:
      if (!a->z || !b->z || util_stricmp(a->z, b->z) != 0) return 0;
      break;
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS:
      return 0;
    default:
      if (!str_same(a->z, b->z)) return 0;
      if (!str_same(a->table, b->table)) return 0;
  }
  if (a->select != b->select) return 0;
  if (!compile_expr_same(a->a, b->a) || !compile_expr_same(a->b, b->b) ||
      !compile_expr_same(a->c, b->c))
    return 0;
  if (!compile_expr_same(a->filter, b->filter)) return 0;
  if ((a->list == NULL) != (b->list == NULL)) return 0;
  if (a->list) {
    if (a->list->n != b->list->n) return 0;
    for (int i = 0; i < a->list->n; i++)
      if (!compile_expr_same(a->list->a[i].expr, b->list->a[i].expr)) return 0;
  }
  return 1;
}

const char *compile_ordinal_suffix(int n) {
  int m = n % 100;
  if (m >= 11 && m <= 13) return "th";
  switch (n % 10) {
    case 1:
      return "st";
    case 2:
      return "nd";
    case 3:
      return "rd";
    default:
      return "th";
  }
}

char *compile_span_text(Parse *p, const char *text, SqlSpan sp) {
  if (!text) text = p->sql;
  if (!text || sp.len <= 0) return compile_parse_strdup(p, "");
  char *z = util_arena_strndup(&p->arena, text + sp.start, (size_t)sp.len);
  if (!z) compile_parse_nomem(p);
  return z;
}

/* ---- column lookup ---- */

static int is_rowid_name(const char *z) {
  return util_stricmp(z, "rowid") == 0 || util_stricmp(z, "oid") == 0 ||
         util_stricmp(z, "_rowid_") == 0;
}

static void mark_used(SrcItem *it, int col) {
  if (col < 0) return;
  it->colused |= col >= 63 ? (uint64_t)1 << 63 : (uint64_t)1 << col;
}

static void set_colref(SqlExpr *e, SrcItem *it, int col, int depth) {
  e->op = SQL_E_COLREF;
  e->cursor = it->cursor;
  e->column = col;
  e->tab = it->tab;
  e->aff = compile_src_item_col_aff(it, col);
  e->depth = (uint8_t)depth;
  mark_used(it, col);
}

static int contains_agg(const SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 1) return 1;
  if (contains_agg(e->a) || contains_agg(e->b) || contains_agg(e->c)) return 1;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if (contains_agg(e->list->a[i].expr)) return 1;
  return 0;
}

static const SqlExpr *first_agg(const SqlExpr *e) {
  if (!e) return NULL;
  if (e->op == SQL_E_FUNC && e->agg == 1) return e;
  const SqlExpr *r;
  if ((r = first_agg(e->a)) || (r = first_agg(e->b)) || (r = first_agg(e->c))) return r;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if ((r = first_agg(e->list->a[i].expr))) return r;
  return NULL;
}

/* The authorizer's READ of column col (-1: the rowid) of t: AUTH_OK, or
 * AUTH_IGNORE (e then reads NULL), or AUTH_DENY with the error recorded:
 * SQLite's "access to t.c is prohibited". */
int compile_resolve_auth_read(Parse *p, const Table *t, int col, SqlExpr *e) {
  if (!p->env || !p->env->auth || !t) return AUTH_OK;
  const char *cn = col >= 0 ? t->cols[col].name : "ROWID";
  int idb = compile_parse_table_db(p, t);
  const char *zdb = compile_parse_db_name(p, idb);
  int rc = compile_parse_auth(p, AUTH_READ, t->name, cn, zdb);
  if (rc == AUTH_DENY && p->rc == SHALE_AUTH) { /* the database too once there are several */
    shale_free(p->errmsg);
    if (compile_parse_ndb(p) > 2 || idb != 0)
      p->errmsg = util_mprintf("access to %s.%s.%s is prohibited", zdb, t->name, cn);
    else
      p->errmsg = util_mprintf("access to %s.%s is prohibited", t->name, cn);
  }
  if (rc == AUTH_IGNORE) e->op = SQL_E_NULL;
  return rc;
}

/* TRUE / FALSE written bare: SQLite's identifiers that mean 1 / 0 when no
 * column has the name (the code generator reads them as such). */
static int is_true_false(const SqlExpr *e) {
  return e->op == SQL_E_ID && !(e->flags & SQL_EF_QUOTED) && e->z &&
         (!util_stricmp(e->z, "true") || !util_stricmp(e->z, "false"));
}

/* May an unresolved "name" be the string 'name' here? SQLite's DQS_DML and
 * DQS_DDL switches (CompileEnv.no_dqs_*): DDL is a CHECK, index, partial
 * index or generated column expression of a CREATE TABLE/INDEX or ALTER
 * being compiled (one in the schema already was accepted when it was). */
static int dqs_allowed(const Parse *p, const NameCtx *nc) {
  if (!p->env) return 1;
  int ddl = nc && (nc->flags & (NC_IS_CHECK | NC_IS_INDEX | NC_IS_PARTIAL | NC_IS_GENCOL));
  if (!ddl) return !p->env->no_dqs_dml;
  int k = p->stmt ? p->stmt->kind : -1;
  if (k != SQL_STMT_CREATE_TABLE && k != SQL_STMT_CREATE_INDEX && k != SQL_STMT_ALTER) return 1;
  return !p->env->no_dqs_ddl;
}

static int lookup_name(Parse *p, NameCtx *nc, SqlExpr *e) {
  const char *db = e->op == SQL_E_COLUMN ? e->schema : NULL;
  const char *tname = e->op == SQL_E_COLUMN ? e->table : NULL;
  const char *col = e->z;
  int depth = 0;
  if (nc && (nc->flags & NC_NO_COLUMN)) {
    /* DEFAULT expressions: a bare name may still be a "string" */
    if (!tname && (e->flags & SQL_EF_QUOTED)) {
      e->op = SQL_E_STRING;
      return 0;
    }
    if (is_true_false(e)) return 0;
    compile_parse_error(p, "default value of column [%s] is not constant", col);
    return 1;
  }
  for (NameCtx *n = nc; n; n = n->outer, depth++) {
    /* NEW.x / OLD.x */
    if (tname && !db && n->trig_tab && n->trig_mask) {
      int isnew = util_stricmp(tname, "new") == 0, isold = util_stricmp(tname, "old") == 0;
      if ((isnew && (n->trig_mask & 2)) || (isold && (n->trig_mask & 1))) {
        const Table *t = n->trig_tab;
        int j = schema_table_column_index(t, col);
        if (j < 0 && is_rowid_name(col) && !t->without_rowid)
          j = -1;
        else if (j < 0) {
          compile_parse_error(p, "no such column: %s.%s", tname, col);
          return 1;
        }
        e->op = SQL_E_TRIGREF;
        e->cursor = isnew ? 1 : 0;
        e->column = j;
        e->tab = t;
        e->aff = j < 0 ? AFF_INTEGER : t->cols[j].affinity;
        e->depth = (uint8_t)depth;
        if (p->env && p->env->auth && compile_resolve_auth_read(p, t, j, e) == AUTH_DENY) return 1;
        return 0;
      }
    }
    int cnt = 0, rcnt = 0, mcol = 0;
    SrcItem *match = NULL, *rmatch = NULL;
    SrcList *src = n->src;
    struct SrcX *x = src ? compile_src_extras(p, src, 0) : NULL;
    for (int i = 0; src && i < src->n; i++) {
      SrcItem *it = &src->a[i];
      if (!it->tab || it->in_nest) continue;
      if (it->nest) {
        /* a parenthesized join: its columns answer to their own tables'
         * names (SQLite's nested FROM); a USING column listed first wins */
        const SelInfo *ni = it->nest->info;
        int hit = 0;
        /* joined to its left by USING/NATURAL on this name: the left one */
        int uj = schema_table_column_index(it->nest_tab, col);
        if (!tname && x && cnt > 0 && uj >= 0 &&
            (x->merged[i] & ((uint64_t)1 << (uj >= 63 ? 63 : uj)))) {
          if ((it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) != SQL_JOIN_RIGHT) continue;
          cnt = 0;
        }
        for (int j = 0; ni && ni->ncols && j < it->nest_tab->ncol; j++) {
          const struct NestCol *c = &ni->ncols[j];
          if (!c->col || util_stricmp(c->col, col) != 0) continue;
          if (tname && (!c->tab || util_stricmp(c->tab, tname) != 0)) continue;
          if (db && (!c->db || util_stricmp(c->db, db) != 0)) continue;
          cnt++;
          match = it;
          mcol = j;
          hit = 1;
          if (c->using_term) break;
        }
        if (hit || !tname || db || !it->nest_alias || util_stricmp(it->nest_alias, tname) != 0)
          continue;
        int j = schema_table_column_index(it->nest_tab, col);
        if (j >= 0) {
          cnt++;
          match = it;
          mcol = j;
        }
        continue;
      }
      if (tname) {
        if (!it->name || util_stricmp(it->name, tname) != 0) continue;
        if (db && (it->kind != SRC_TABLE ||
                   (util_stricmp(db, compile_parse_db_name(p, it->idb)) != 0 &&
                    (compile_parse_ndb(p) > 1 || util_stricmp(db, "main") != 0))))
          continue;
      }
      int j = schema_table_column_index(it->tab, col);
      if (j >= 0) {
        if (!tname && x && cnt > 0 && (x->merged[i] & ((uint64_t)1 << (j >= 63 ? 63 : j)))) {
          /* a USING column: the left-most item's, but a RIGHT JOIN's own
           * (SQLite then forgets the matches on its left) */
          if ((it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) != SQL_JOIN_RIGHT) continue;
          cnt = 0;
        }
        cnt++;
        match = it;
        mcol = j;
      } else if ((it->kind == SRC_SUBQUERY || !it->tab->without_rowid) && is_rowid_name(col)) {
        rcnt++;
        rmatch = it;
      }
    }
    if (cnt == 0 && rcnt == 1) { /* two candidates: SQLite finds none */
      cnt = rcnt;
      match = rmatch;
      mcol = rmatch->tab->rowid_alias >= 0 ? rmatch->tab->rowid_alias : -1;
    }
    if (cnt > 1) {
      if (tname && db)
        compile_parse_error(p, "ambiguous column name: %s.%s.%s", db, tname, col);
      else if (tname)
        compile_parse_error(p, "ambiguous column name: %s.%s", tname, col);
      else
        compile_parse_error(p, "ambiguous column name: %s", col);
      return 1;
    }
    if (cnt == 1 && mcol < 0 && match->kind == SRC_SUBQUERY) {
      /* the rowid of a subquery or view reads as NULL (SQLite 3.40) */
      e->op = SQL_E_NULL;
      return 0;
    }
    if (cnt == 1 && match->nest) {
      compile_src_nest_ref(p, src, match, mcol, e, depth);
      SrcItem *m = e->op == SQL_E_COLREF ? compile_src_find_cursor(src, e->cursor) : NULL;
      if (!tname && m && e->column >= 0)
        compile_src_coalesce_ref(p, src, (int)(m - src->a), e->column, e);
      for (NameCtx *m2 = nc; m2 != n; m2 = m2->outer) m2->flags |= NC_HAS_CORREL;
      return 0;
    }
    if (cnt == 1) {
      set_colref(e, match, mcol, depth);
      if (p->env && p->env->auth && (match->kind == SRC_TABLE || match->is_view) &&
          compile_resolve_auth_read(p, match->tab, mcol, e) == AUTH_DENY)
        return 1;
      if (e->op == SQL_E_NULL) return 0; /* the authorizer said IGNORE */
      if (!tname && compile_src_coalesce_ref(p, src, (int)(match - src->a), mcol, e)) {
        for (NameCtx *m = nc; m != n; m = m->outer) m->flags |= NC_HAS_CORREL;
        return 0;
      }
      for (NameCtx *m = nc; m != n; m = m->outer) m->flags |= NC_HAS_CORREL;
      return 0;
    }
    /* result aliases (WHERE, GROUP BY, HAVING, ORDER BY), this level only */
    if (!tname && depth == 0 && n->result) {
      for (int i = 0; i < n->result->n; i++) {
        const char *a = n->result->a[i].name;
        if (a && util_stricmp(a, col) == 0) {
          SqlExpr *r = n->result->a[i].expr;
          if (contains_agg(r) && !(n->flags & NC_ALLOW_AGG)) {
            const SqlExpr *f = first_agg(r);
            compile_parse_error(p, "misuse of aggregate: %s()", f && f->z ? f->z : "");
            return 1;
          }
          if (contains_agg(r) && (n->flags & NC_IN_GROUPBY)) {
            compile_parse_error(p, "aggregate functions are not allowed in the GROUP BY clause");
            return 1;
          }
          SqlExpr *d = compile_expr_dup(p, r);
          if (!d) return 1;
          uint8_t paren = e->flags & SQL_EF_PAREN;
          SqlSpan sp = e->span;
          *e = *d;
          e->flags |= paren;
          e->span = sp;
          if (contains_agg(e)) n->flags |= NC_HAS_AGG;
          return 0;
        }
      }
    }
  }
  if (!tname && (e->flags & SQL_EF_QUOTED) && dqs_allowed(p, nc)) {
    e->op = SQL_E_STRING;
    return 0;
  }
  if (is_true_false(e)) return 0;
  if (db)
    compile_parse_error(p, "no such column: %s.%s.%s", db, tname, col);
  else if (tname)
    compile_parse_error(p, "no such column: %s.%s", tname, col);
  else
    compile_parse_error(p, "no such column: %s", col);
  return 1;
}

/* ---- expressions ---- */

/* Smallest depth of a column reference in e (subqueries not entered). */
static void min_depth(const SqlExpr *e, int *d) {
  if (!e) return;
  if (e->op == SQL_E_COLREF && e->depth < *d) *d = e->depth;
  min_depth(e->a, d);
  min_depth(e->b, d);
  min_depth(e->c, d);
  for (int i = 0; e->list && i < e->list->n; i++) min_depth(e->list->a[i].expr, d);
}

static void min_depth_list(const SqlExprList *l, int *d) {
  for (int i = 0; l && i < l->n; i++) min_depth(l->a[i].expr, d);
}

static int resolve_func(Parse *p, NameCtx *nc, SqlExpr *e) {
  if (e->order) {
    compile_parse_error(p, "near \"ORDER\": syntax error");
    return 1;
  }
  int nargs = e->list ? e->list->n : 0;
  if (p->env && p->env->max_function_arg > 0 && nargs > p->env->max_function_arg) {
    compile_parse_error(p, "too many arguments on function %s", e->z);
    return 1;
  }
  const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, e->z, nargs) : NULL;
  if (!f) {
    if (p->env && p->env->funcs && func_exists_name(p->env->funcs, e->z))
      compile_parse_error(p, "wrong number of arguments to function %s()", e->z);
    else if (nc->flags & NC_FROM_SCHEMA)
      compile_parse_error(p, "unknown function: %s()", e->z); /* SQLite's words for these */
    else
      compile_parse_error(p, "no such function: %s", e->z);
    return 1;
  }
  /* SQLite's EP_FromDDL: the bodies of views and triggers outside TEMP,
   * DEFAULT expressions, and deterministic calls in CHECK constraints,
   * generated columns and index expressions */
  int dflt = (nc->flags & NC_FROM_SCHEMA) && (nc->flags & NC_NO_COLUMN);
  int from_ddl = p->from_ddl > 0 || dflt ||
                 ((nc->flags & (NC_IS_CHECK | NC_IS_INDEX | NC_IS_PARTIAL | NC_IS_GENCOL)) &&
                  func_is_deterministic(f));
  if (from_ddl && func_unsafe_in_schema(f, p->env && p->env->untrusted)) {
    compile_parse_error(p, "unsafe use of %s()", e->z);
    return 1;
  }
  e->func = f;
  if (p->env && p->env->auth) {
    int rc = compile_parse_auth(p, AUTH_FUNCTION, NULL, e->z, NULL);
    if (rc == AUTH_DENY) {
      if (p->rc == SHALE_AUTH) { /* SQLite's text for functions */
        shale_free(p->errmsg);
        p->errmsg = util_mprintf("not authorized to use function: %s", e->z);
        p->rc = SHALE_ERROR;
      }
      return 1;
    }
    if (rc == AUTH_IGNORE) {
      e->op = SQL_E_NULL;
      e->list = NULL;
      return 0;
    }
  }
  int is_agg = func_is_aggregate(f);
  if (e->over) {
    if (!f->value) { /* scalars, and aggregates made without a value callback */
      compile_parse_error(p, "%s() may not be used as a window function", e->z);
      return 1;
    }
    if (!(nc->flags & NC_ALLOW_WIN)) {
      compile_parse_error(p, "misuse of window function %s()", e->z);
      return 1;
    }
    e->agg = 2;
    int save = nc->flags;
    nc->flags &= ~NC_ALLOW_WIN; /* no window calls inside a window call */
    int rc = compile_resolve_list(p, nc, e->list);
    if (!rc && e->filter) rc = compile_resolve_expr(p, nc, e->filter);
    if (!rc && e->over->partition) rc = compile_resolve_list(p, nc, e->over->partition);
    if (!rc && e->over->order) rc = compile_resolve_list(p, nc, e->over->order);
    nc->flags = (save & ~(NC_HAS_AGG | NC_HAS_CORREL)) | (nc->flags & (NC_HAS_AGG | NC_HAS_CORREL));
    if (rc) return rc;
    return compile_window_check_call(p, e);
  }
  if (f->flags & FUNC_WINDOW) {
    compile_parse_error(p, "misuse of window function %s()", e->z);
    return 1;
  }
  if (is_agg) {
    if (nc->flags & NC_IN_GROUPBY) {
      compile_parse_error(p, "aggregate functions are not allowed in the GROUP BY clause");
      return 1;
    }
    if (nc->flags & NC_IN_AGG) {
      compile_parse_error(p, "misuse of aggregate function %s()", e->z);
      return 1;
    }
    if ((e->flags & SQL_EF_DISTINCT) && nargs != 1) {
      compile_parse_error(p, "DISTINCT aggregates must have exactly one argument");
      return 1;
    }
    e->agg = 1;
    int save = nc->flags;
    nc->flags = (nc->flags | NC_IN_AGG) & ~NC_ALLOW_AGG;
    int rc = compile_resolve_list(p, nc, e->list);
    if (!rc && e->filter) rc = compile_resolve_expr(p, nc, e->filter);
    if (!rc && e->order) rc = compile_resolve_list(p, nc, e->order);
    nc->flags = (save & ~NC_HAS_CORREL) | (nc->flags & NC_HAS_CORREL);
    if (rc) return rc;
    /* the aggregate belongs to the innermost query whose columns its
     * arguments read (SQLite's rule): an outer one when they read only
     * outer columns */
    int d = 255;
    min_depth_list(e->list, &d);
    if (e->filter) min_depth(e->filter, &d);
    NameCtx *owner = nc;
    if (d != 255 && d > 0) {
      for (int k = 0; k < d && owner; k++) owner = owner->outer;
      if (!owner) owner = nc, d = 0;
    } else {
      d = 0;
    }
    if (!(owner->flags & NC_ALLOW_AGG) || (owner->flags & NC_IN_AGG)) {
      if (owner != nc)
        compile_parse_error(p, "misuse of aggregate: %s()", e->z);
      else
        compile_parse_error(p, "misuse of aggregate function %s()", e->z);
      return 1;
    }
    e->depth = (uint8_t)d;
    owner->flags |= NC_HAS_AGG;
    return 0;
  }
  if (e->filter) {
    compile_parse_error(p, "FILTER may not be used with non-aggregate %s()", e->z);
    return 1;
  }
  return compile_resolve_list(p, nc, e->list);
}

static int check_subquery_allowed(Parse *p, NameCtx *nc) {
  if (nc->flags & NC_NO_SUBQUERY) {
    compile_parse_error(p, "subqueries prohibited in %s",
                        nc->err_ctx ? nc->err_ctx : "this context");
    return 1;
  }
  return 0;
}

/* Operators whose operands may be row values (vectors). */
static int vector_ok(const SqlExpr *e) {
  switch (e->op) {
    case SQL_E_ROW:
    case SQL_E_ISNOT:
    case SQL_E_BETWEEN:
    case SQL_E_IN:
      return 1;
    case SQL_E_BINARY:
      switch (e->sub) {
        case TK_EQ:
        case TK_NE:
        case TK_LT:
        case TK_LE:
        case TK_GT:
        case TK_GE:
        case TK_IS:
          return 1;
        default:
          return 0;
      }
    default:
      return 0;
  }
}

int compile_resolve_check_scalar(Parse *p, const SqlExpr *e) {
  if (e && e->op == SQL_E_SUBQUERY && e->select) {
    int n = compile_select_ncol(e->select);
    if (n != 1) {
      compile_parse_error(p, "sub-select returns %d columns - expected 1", n);
      return 1;
    }
  }
  return 0;
}

int compile_resolve_expr(Parse *p, NameCtx *nc, SqlExpr *e) {
  if (!e || parse_failed(p)) return parse_failed(p);
  switch (e->op) {
    case SQL_E_COLREF:
    case SQL_E_TRIGREF:
    case SQL_E_REG:
      return 0;
    case SQL_E_ID:
    case SQL_E_COLUMN:
      return lookup_name(p, nc, e);
    case SQL_E_FUNC: {
      int fl = nc ? nc->flags : 0;
      int pure = fl & NC_IS_CHECK                     ? 1
                 : fl & NC_IS_GENCOL                  ? 2
                 : fl & (NC_IS_INDEX | NC_IS_PARTIAL) ? 3
                                                      : 0;
      e->flags = (uint8_t)((e->flags & ~SQL_EF_PURE_MASK) | (pure << SQL_EF_PURE_SHIFT));
      return resolve_func(p, nc, e);
    }
    case SQL_E_STAR:
      compile_parse_error(p, "near \"*\": syntax error");
      return 1;
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS:
      if (check_subquery_allowed(p, nc)) return 1;
      return compile_select_resolve(p, e->select, nc);
    case SQL_E_IN:
      if (compile_resolve_expr(p, nc, e->a)) return 1;
      if (!e->select && e->table && !(e->flags & SQL_EF_TVF)) {
        /* x IN t  ==  x IN (SELECT * FROM t) */
        SqlSelect *s = compile_parse_alloc(p, sizeof *s);
        SqlSrcList *from = compile_parse_alloc(p, sizeof *from);
        SqlExprList *cols = compile_parse_alloc(p, sizeof *cols);
        SqlExpr *star = compile_parse_alloc(p, sizeof *star);
        if (!s || !from || !cols || !star) return 1;
        from->a = compile_parse_alloc(p, sizeof(SqlSrcItem));
        cols->a = compile_parse_alloc(p, sizeof(SqlExprItem));
        if (!from->a || !cols->a) return 1;
        from->n = from->cap = 1;
        from->a[0].name = e->table;
        from->a[0].schema = e->schema;
        from->a[0].span = e->span;
        star->op = SQL_E_STAR;
        star->height = 1;
        cols->n = cols->cap = 1;
        cols->a[0].expr = star;
        s->cols = cols;
        s->from = from;
        s->span = e->span;
        e->select = s;
        e->table = NULL;
        e->schema = NULL;
      }
      if (e->select) {
        if (check_subquery_allowed(p, nc)) return 1;
        if (compile_select_resolve(p, e->select, nc)) return 1;
        int want = e->a && e->a->op == SQL_E_ROW && e->a->list ? e->a->list->n : 1;
        int got = compile_select_ncol(e->select);
        if (got != want) {
          compile_parse_error(p, "sub-select returns %d columns - expected %d", got, want);
          return 1;
        }
        return 0;
      }
      return compile_resolve_list(p, nc, e->list);
    default:
      break;
  }
  if (e->a && compile_resolve_expr(p, nc, e->a)) return 1;
  if (e->b && compile_resolve_expr(p, nc, e->b)) return 1;
  if (e->c && compile_resolve_expr(p, nc, e->c)) return 1;
  if (e->list && compile_resolve_list(p, nc, e->list)) return 1;
  if (e->select) {
    if (check_subquery_allowed(p, nc)) return 1;
    if (compile_select_resolve(p, e->select, nc)) return 1;
  }
  if ((e->op == SQL_E_ISNOT || (e->op == SQL_E_BINARY && e->sub == TK_IS)) && e->a && e->b &&
      e->b->op == SQL_E_NULL) {
    /* (SELECT a, b ...) IS [NOT] NULL: a sub-select where one value goes */
    if (compile_resolve_check_scalar(p, e->a)) return 1;
  }
  if (!vector_ok(e)) {
    if (compile_resolve_check_scalar(p, e->a) || compile_resolve_check_scalar(p, e->b) ||
        compile_resolve_check_scalar(p, e->c))
      return 1;
    for (int i = 0; e->list && i < e->list->n; i++)
      if (compile_resolve_check_scalar(p, e->list->a[i].expr)) return 1;
  }
  return parse_failed(p);
}

int compile_resolve_list(Parse *p, NameCtx *nc, SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (compile_resolve_expr(p, nc, l->a[i].expr)) return 1;
  return parse_failed(p);
}

static int int_value(const SqlExpr *e, int64_t *v) {
  while (e && (e->op == SQL_E_UNARY && e->sub == TK_PLUS)) e = e->a;
  if (!e) return 0;
  if (e->op == SQL_E_UNARY && e->sub == TK_MINUS) {
    if (!int_value(e->a, v)) return 0;
    *v = -*v;
    return 1;
  }
  if (e->op != SQL_E_INTEGER || !e->z) return 0;
  /* only a 32-bit integer is a column number (SQLite's sqlite3ExprIsInteger) */
  if (strlen(e->z) > 10) return 0;
  const char *z = e->z;
  int64_t r = 0;
  if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) {
    for (z += 2; *z; z++) {
      int d = (*z >= '0' && *z <= '9') ? *z - '0' : ((*z | 0x20) - 'a' + 10);
      r = (int64_t)(((uint64_t)r << 4) | (uint64_t)d);
    }
    if (r < 0 || r > 2147483647) return 0;
    *v = r;
    return 1;
  }
  for (; *z; z++) {
    if (*z < '0' || *z > '9') return 0;
    r = r * 10 + (*z - '0');
  }
  if (r > 2147483647) return 0;
  *v = r;
  return 1;
}

int compile_resolve_terms_limit(Parse *p, int n, const char *what) {
  if (!p->env || p->env->max_columns <= 0 || n <= p->env->max_columns) return 0;
  compile_parse_error(p, "too many terms in %s BY clause", what);
  return 1;
}

int compile_resolve_order_by_ex(Parse *p, NameCtx *nc, SqlExprList *terms, SqlExprList *result,
                                const char *what, int *colmap) {
  if (!terms) return 0;
  if (compile_resolve_terms_limit(p, terms->n, what)) return 1;
  int is_group = what && what[0] == 'G';
  for (int i = 0; i < terms->n; i++) {
    SqlExpr **slot = &terms->a[i].expr;
    while (*slot && (*slot)->op == SQL_E_COLLATE) slot = &(*slot)->a;
    SqlExpr *e = *slot;
    int col = -1;
    int64_t v;
    if (colmap) colmap[i] = -1;
    if (!e) continue;
    if (!is_group && e->op == SQL_E_ID && result) {
      for (int k = 0; k < result->n; k++)
        if (result->a[k].name && util_stricmp(result->a[k].name, e->z) == 0) {
          col = k;
          break;
        }
    }
    if (col < 0 && int_value(e, &v)) {
      int n = result ? result->n : 0;
      if (v < 1 || v > n) {
        compile_parse_error(p, "%d%s %s BY term out of range - should be between 1 and %d", i + 1,
                            compile_ordinal_suffix(i + 1), what, n);
        return 1;
      }
      col = (int)v - 1;
    }
    if (col < 0) {
      int save = nc->flags;
      SqlExprList *save_res = nc->result;
      nc->result = result;
      if (is_group) nc->flags = (nc->flags | NC_IN_GROUPBY) & ~NC_ALLOW_AGG;
      int rc = compile_resolve_expr(p, nc, e);
      nc->flags =
          (nc->flags & ~(NC_IN_GROUPBY | NC_ALLOW_AGG)) | (save & (NC_ALLOW_AGG | NC_IN_GROUPBY));
      nc->result = save_res;
      if (rc) return 1;
      e = *slot;
      for (int k = 0; result && k < result->n; k++)
        if (compile_expr_same(e, result->a[k].expr)) {
          col = k;
          break;
        }
      if (colmap) colmap[i] = col;
      continue;
    }
    SqlExpr *r = result->a[col].expr;
    if (is_group && contains_agg(r)) {
      if (slot != &terms->a[i].expr) {
        /* under COLLATE SQLite reports the aggregate itself */
        const SqlExpr *f = first_agg(r);
        compile_parse_error(p, "misuse of aggregate: %s()", f && f->z ? f->z : "");
      } else {
        compile_parse_error(p, "aggregate functions are not allowed in the GROUP BY clause");
      }
      return 1;
    }
    SqlExpr *d = compile_expr_dup(p, r);
    if (!d) return 1;
    *slot = d;
    if (colmap) colmap[i] = col;
    if (contains_agg(d)) nc->flags |= NC_HAS_AGG;
  }
  return parse_failed(p);
}
