/*
 * compile_select.c -- SELECT: '*' expansion, resolution of a whole SELECT,
 * result column names, and the code for cores, DISTINCT, ORDER BY,
 * LIMIT/OFFSET, VALUES, compounds and WITH RECURSIVE, into any SelectDest;
 * EXPLAIN QUERY PLAN rows for all of these. FROM lists are compile_from.c's,
 * aggregate queries compile_agg.c's; what the three share is in
 * select_int.h (sel_*).
 *
 * Owns: SrcLists it builds and the SelInfo of every SELECT (select_int.h),
 * all in the Parse arena.
 *
 * Invariants:
 *  1. Rows leave a core through emit_output only: DISTINCT check (a
 *     temporary table, or the row before when the loops deliver the result
 *     list in order), then either
 *     the ORDER BY sorter (key columns, a sequence number, then the result
 *     columns) or emit_dest (OFFSET skip, the destination, LIMIT count).
 *  2. LIMIT/OFFSET registers are evaluated once per run of the SELECT
 *     (MustBeInt: "datatype mismatch"); LIMIT 0 jumps to the end at once,
 *     a negative LIMIT never reaches zero (no limit), a negative OFFSET is 0.
 *  3. Aggregate queries: the loop computes every aggregate argument and every
 *     bare column (a column of this query read outside aggregate arguments);
 *     only then are the aggregate calls and bare columns of the result,
 *     HAVING and ORDER BY replaced in place by SQL_E_REG nodes (accumulator
 *     / first-row registers) and the output code generated from them; the
 *     nodes are put back afterwards (a SELECT may be coded twice).
 *  4. A view body (and a CTE body, at each use) is parsed again from its
 *     text into the Parse arena, so no shared AST is ever annotated.
 *  5. Compound SELECTs: UNION ALL streams both sides to the same output;
 *     UNION/EXCEPT go through one ephemeral index, INTERSECT through two;
 *     with an ORDER BY (SQLite's merge) each side is a co-routine sorted
 *     by the result columns the ORDER BY names (every column but for
 *     UNION ALL), merged into the output, equal rows dropped.
 */
#include <stdio.h>
#include <string.h>

#include "select_int.h"

/* ---- small helpers ---- */

SqlExpr *compile_sel_new_expr(Parse *p, int op) {
  SqlExpr *e = compile_parse_alloc(p, sizeof *e);
  if (e) {
    e->op = (uint8_t)op;
    e->height = 1;
  }
  return e;
}

SqlExprList *compile_sel_list_add(Parse *p, SqlExprList *l, SqlExpr *e) {
  if (!l) {
    l = compile_parse_alloc(p, sizeof *l);
    if (!l) return NULL;
  }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    SqlExprItem *a = compile_parse_alloc(p, sizeof(SqlExprItem) * (size_t)cap);
    if (!a) return NULL;
    if (l->n) memcpy(a, l->a, sizeof(SqlExprItem) * (size_t)l->n);
    l->a = a;
    l->cap = cap;
  }
  memset(&l->a[l->n], 0, sizeof l->a[0]);
  l->a[l->n++].expr = e;
  return l;
}

static SqlSelect *leftmost(SqlSelect *s) {
  while (s->prior) s = s->prior;
  return s;
}

char compile_src_item_col_aff(const SrcItem *it, int col) {
  if (col < 0) return AFF_INTEGER;
  if (it->kind == SRC_SUBQUERY && it->sub) {
    const SqlSelect *l = it->sub;
    while (l->prior) l = l->prior;
    if (l->info && l->info->result && col < l->info->result->n)
      return compile_expr_affinity(l->info->result->a[col].expr);
  }
  char a = it->tab->cols[col].affinity;
  return a ? a : AFF_BLOB;
}

void compile_sel_colref(SqlExpr *e, SrcItem *it, int col) {
  e->op = SQL_E_COLREF;
  e->cursor = it->cursor;
  e->column = col;
  e->tab = it->tab;
  e->aff = compile_src_item_col_aff(it, col);
  if (col >= 0) it->colused |= col >= 63 ? (uint64_t)1 << 63 : (uint64_t)1 << col;
}

/* ---- resolution ---- */

/* 1 if item k of s joins by USING naming column name, or NATURAL with name
 * a column it shares with an item on its left. */
/* The database part of an item's long column names, as SQLite 3.40 tags
 * them: the table's database, or "*" for a subquery or view. */
static const char *item_db_tag(Parse *p, const SrcItem *it) {
  return it->kind == SRC_TABLE ? compile_parse_db_name(p, it->idb) : "*";
}

static int item_uses(SrcList *s, int k, const char *name) {
  if (k <= 0 || k >= s->n || s->a[k].in_nest) return 0;
  SrcItem *it = &s->a[k];
  const SqlSrcItem *a = it->ast;
  for (int j = 0; a && a->using_cols && j < a->using_cols->n; j++)
    if (util_stricmp(a->using_cols->a[j], name) == 0) return 1;
  if (!(it->jointype & SQL_JOIN_NATURAL)) return 0;
  int j = schema_table_column_index(it->tab, name), lc;
  return j >= 0 && it->tab->cols[j].hidden != COL_HIDDEN &&
         compile_sel_left_item_with(s, k, name, &lc) >= 0;
}

/* The next item after k at k's level (a flattened join counts as one). */
static int next_item(const SrcList *s, int k) {
  const SrcItem *it = &s->a[k];
  return k + (it->nest && it->nest != it->sub ? it->nest_n : 1);
}

typedef struct StarOut {
  SqlExprList *r;
  struct NestCol *nc; /* nested_from: per column of r */
  int cap;
} StarOut;

static int star_add(Parse *p, StarOut *o, SqlExpr *c, const char *name, struct NestCol nc) {
  if (!compile_sel_list_add(p, o->r, c)) return 1;
  o->r->a[o->r->n - 1].name = name;
  if (o->nc) {
    if (o->r->n > o->cap) {
      int cap = o->cap * 2 + 8;
      struct NestCol *a = compile_parse_alloc(p, sizeof *a * (size_t)cap);
      if (!a) return 1;
      if (o->cap) memcpy(a, o->nc, sizeof *a * (size_t)o->cap);
      o->nc = a;
      o->cap = cap;
    }
    o->nc[o->r->n - 1] = nc;
  }
  return 0;
}

/* '*' (or t.*) over a parenthesized join at item k: its columns that the
 * name and SQLite's rules let through. */
static int star_nest(Parse *p, SelInfo *info, StarOut *o, SqlExpr *e, int k, int *found) {
  SrcList *src = info->src;
  SrcItem *it = &src->a[k];
  const SelInfo *ni = it->nest->info;
  const Table *nt = it->nest_tab;
  struct SrcX *x = compile_src_extras(p, src, 0);
  int next = next_item(src, k);
  for (int j = 0; j < nt->ncol; j++) {
    const struct NestCol *c = &ni->ncols[j];
    struct NestCol nc = {0};
    if (e->table) {
      if (!c->tab || util_stricmp(c->tab, e->table) != 0) continue;
    } else if (!info->nested_from) {
      if (c->noexpand) continue;
      if (it->nest == it->sub && x && (x->merged[k] & ((uint64_t)1 << (j >= 63 ? 63 : j))))
        continue;
    }
    *found = 1;
    if (info->nested_from) {
      nc = *c;
      nc.using_term = 0;
      nc.noexpand = c->noexpand || item_uses(src, k, nt->cols[j].name) ||
                    item_uses(src, next, nt->cols[j].name);
    }
    SqlExpr *ce = compile_sel_new_expr(p, SQL_E_COLREF);
    if (!ce) return 1;
    ce->span = e->span;
    compile_src_nest_ref(p, src, it, j, ce, 0);
    const char *name = NULL;
    if (ce->op == SQL_E_COLREF && ce->tab && ce->column >= 0 &&
        util_stricmp(ce->tab->cols[ce->column].name, nt->cols[j].name) != 0)
      name = nt->cols[j].name; /* the join's own name for it ("y:1") */
    if (star_add(p, o, ce, name, nc)) return 1;
  }
  return 0;
}

static int expand_star(Parse *p, SelInfo *info, SqlExprList *cols) {
  SrcList *src = info->src;
  int has_star = 0;
  for (int i = 0; i < cols->n; i++)
    if (cols->a[i].expr && cols->a[i].expr->op == SQL_E_STAR) has_star = 1;
  if (!has_star) {
    info->result = cols;
    return 0;
  }
  SqlExprList *r = compile_parse_alloc(p, sizeof *r);
  if (!r) return 1;
  StarOut o = {r, NULL, 0};
  if (info->nested_from) {
    o.cap = 8;
    if (!(o.nc = compile_parse_alloc(p, sizeof *o.nc * (size_t)o.cap))) return 1;
  }
  struct SrcX *x = compile_src_extras(p, src, 0);
  for (int i = 0; i < cols->n; i++) {
    SqlExpr *e = cols->a[i].expr;
    if (!e || e->op != SQL_E_STAR) {
      if (star_add(p, &o, e, NULL, (struct NestCol){0})) return 1;
      r->a[r->n - 1] = cols->a[i];
      continue;
    }
    if (!src || src->n == 0) {
      compile_parse_error(p, "no tables specified");
      return 1;
    }
    int found = 0;
    for (int k = 0; k < src->n; k++) {
      SrcItem *it = &src->a[k];
      if (it->in_nest) continue;
      int next = next_item(src, k);
      if (info->nested_from && next < src->n) {
        /* SQLite's nested FROM lists the USING columns of the next join
         * first, as unqualified names */
        SrcItem *nx = &src->a[next];
        const SqlSrcItem *na = nx->ast;
        int nu = (nx->jointype & SQL_JOIN_NATURAL) ? nx->tab->ncol
                 : na && na->using_cols            ? na->using_cols->n
                                                   : 0;
        for (int u = 0; u < nu; u++) {
          const char *un;
          if (nx->jointype & SQL_JOIN_NATURAL) {
            int lc;
            un = nx->tab->cols[u].name;
            if (nx->tab->cols[u].hidden == COL_HIDDEN ||
                compile_sel_left_item_with(src, next, un, &lc) < 0)
              continue;
          } else {
            un = na->using_cols->a[u];
          }
          SqlExpr *id = compile_sel_new_expr(p, SQL_E_ID);
          if (!id) return 1;
          id->z = un;
          id->span = e->span;
          if (star_add(p, &o, id, NULL, (struct NestCol){NULL, NULL, un, 1, 0})) return 1;
        }
      }
      if (it->nest) {
        if (star_nest(p, info, &o, e, k, &found)) return 1;
        continue;
      }
      if (e->table && (!it->name || util_stricmp(it->name, e->table) != 0)) continue;
      found = 1;
      for (int j = 0; j < it->tab->ncol; j++) {
        if (it->tab->cols[j].hidden == COL_HIDDEN) continue;
        for (int k2 = 0; k2 < src->n; k2++) {
          /* two items of the same name in the same database (subqueries: in
           * "*") with this column: SQLite's qualified reference to it,
           * db.name.column, is ambiguous */
          if (k2 == k || !it->name || !src->a[k2].name) continue;
          if (src->a[k2].in_nest || src->a[k2].nest) continue;
          if (util_stricmp(src->a[k2].name, it->name) != 0) continue;
          if (util_stricmp(item_db_tag(p, &src->a[k2]), item_db_tag(p, it)) != 0) continue;
          int j2 = schema_table_column_index(src->a[k2].tab, it->tab->cols[j].name);
          if (j2 < 0) continue;
          if (x && ((x->merged[k2] | x->merged[k]) & ((uint64_t)1 << (j2 >= 63 ? 63 : j2))))
            continue; /* a USING column is not ambiguous */
          compile_parse_error(p, "ambiguous column name: %s.%s.%s", item_db_tag(p, it), it->name,
                              it->tab->cols[j].name);
          return 1;
        }
        const char *cn = it->tab->cols[j].name;
        if (!e->table && !info->nested_from && x &&
            (x->merged[k] & ((uint64_t)1 << (j >= 63 ? 63 : j))))
          continue;
        struct NestCol nc = {0};
        if (info->nested_from) {
          nc.db = item_db_tag(p, it);
          nc.tab = it->name;
          nc.col = cn;
          nc.noexpand = item_uses(src, k, cn) || item_uses(src, next, cn);
        }
        SqlExpr *c = compile_sel_new_expr(p, SQL_E_COLREF);
        if (!c || star_add(p, &o, c, NULL, nc)) return 1;
        compile_sel_colref(c, it, j);
        c->span = e->span;
        if (p->env && p->env->auth && (it->kind == SRC_TABLE || it->is_view) &&
            compile_resolve_auth_read(p, it->tab, j, c) == AUTH_DENY)
          return 1;
        if (!e->table && !info->nested_from && compile_src_coalesce_ref(p, src, k, j, c))
          r->a[r->n - 1].name = cn;
      }
    }
    if (!found) {
      compile_parse_error(p, "no such table: %s", e->table);
      return 1;
    }
  }
  info->result = r;
  info->ncols = o.nc;
  return 0;
}

int compile_sel_has_correl(const SqlSelect *s) {
  for (; s; s = s->prior)
    if (s->info && (s->info->nc.flags & NC_HAS_CORREL)) return 1;
  return 0;
}

int compile_select_has_correl(const SqlSelect *s) { return compile_sel_has_correl(s); }

static int resolve_values(Parse *p, SqlSelect *s, SelInfo *info) {
  SqlExprList *rows = s->cols;
  int n = rows && rows->n ? (rows->a[0].expr->list ? rows->a[0].expr->list->n : 0) : 0;
  for (int i = 0; rows && i < rows->n; i++) {
    SqlExpr *row = rows->a[i].expr;
    int m = row->list ? row->list->n : 0;
    if (m != n) {
      compile_parse_error(p, "all VALUES must have the same number of terms");
      return 1;
    }
    if (compile_resolve_list(p, &info->nc, row->list)) return 1;
  }
  if (p->env && p->env->max_columns > 0 && n > p->env->max_columns) {
    compile_parse_error(p, "too many columns in result set");
    return 1;
  }
  SqlExprList *r = compile_parse_alloc(p, sizeof *r);
  if (!r) return 1;
  for (int j = 0; j < n; j++) {
    if (!compile_sel_list_add(p, r, rows->a[0].expr->list->a[j].expr)) return 1;
    char buf[32];
    snprintf(buf, sizeof buf, "column%d", j + 1);
    r->a[j].name = compile_parse_strdup(p, buf);
    r->a[j].span = rows->a[0].expr->list->a[j].span;
  }
  info->result = r;
  return 0;
}

static const SqlExpr *find_agg(const SqlExpr *e) {
  if (!e) return NULL;
  if (e->op == SQL_E_FUNC && e->agg == 1) return e;
  const SqlExpr *r;
  if ((r = find_agg(e->a)) || (r = find_agg(e->b)) || (r = find_agg(e->c))) return r;
  for (int i = 0; e->list && i < e->list->n; i++)
    if ((r = find_agg(e->list->a[i].expr))) return r;
  return NULL;
}

/* LIMIT and OFFSET see no columns of their own query. */
static int resolve_limits(Parse *p, SqlSelect *s, NameCtx *outer) {
  if (!s->limit && !s->offset) return 0;
  NameCtx lnc;
  memset(&lnc, 0, sizeof lnc);
  lnc.outer = outer;
  if (s->limit && compile_resolve_expr(p, &lnc, s->limit)) return 1;
  if (s->offset && compile_resolve_expr(p, &lnc, s->offset)) return 1;
  return 0;
}

/* 1 if e reads a column of this query's FROM item after item i. */
static int refs_right(const SqlExpr *e, SrcList *src, int i) {
  if (!e) return 0;
  if (e->op == SQL_E_COLREF && e->depth == 0) {
    for (int k = i + 1; k < src->n; k++)
      if (src->a[k].cursor == e->cursor) return 1;
  }
  if (refs_right(e->a, src, i) || refs_right(e->b, src, i) || refs_right(e->c, src, i)) return 1;
  for (int k = 0; e->list && k < e->list->n; k++)
    if (refs_right(e->list->a[k].expr, src, i)) return 1;
  return 0;
}

static int resolve_core(Parse *p, SqlSelect *s, NameCtx *outer) {
  SelInfo *info = compile_sel_info(p, s, 1);
  if (!info) return 1;
  if (info->state) return parse_failed(p);
  info->state = 1;
  info->nc.outer = outer;
  info->from_nc.outer = outer;
  if (s->kind == SQL_SEL_VALUES) {
    if (resolve_values(p, s, info)) return 1;
    info->state = 2;
    return 0;
  }
  info->src = compile_src_from_ast(p, s->from, &info->from_nc);
  if (!info->src) return 1;
  if (info->from_nc.flags & NC_HAS_CORREL) info->nc.flags |= NC_HAS_CORREL;
  NameCtx *nc = &info->nc;
  nc->src = info->src;
  if (compile_src_resolve_joins(p, info->src)) return 1;
  if (compile_window_prepare(p, s)) return 1;
  if (info->nest_flat) {
    /* a flattened join's '*' reads nothing: the enclosing query's
     * references mark what is read */
    uint64_t *used = compile_parse_alloc(p, sizeof(uint64_t) * (size_t)(info->src->n + 1));
    if (!used) return 1;
    for (int i = 0; i < info->src->n; i++) used[i] = info->src->a[i].colused;
    if (expand_star(p, info, s->cols)) return 1;
    for (int i = 0; i < info->src->n; i++) info->src->a[i].colused = used[i];
  } else if (expand_star(p, info, s->cols)) {
    return 1;
  }
  if (p->env && p->env->max_columns > 0 && info->result->n > p->env->max_columns) {
    compile_parse_error(p, "too many columns in result set");
    return 1;
  }
  nc->flags |= NC_ALLOW_AGG | NC_ALLOW_WIN;
  if (compile_resolve_list(p, nc, info->result)) return 1;
  nc->flags &= ~(NC_ALLOW_AGG | NC_ALLOW_WIN);
  for (int i = 0; i < info->result->n; i++)
    if (compile_resolve_check_scalar(p, info->result->a[i].expr)) return 1;
  int result_agg = (nc->flags & NC_HAS_AGG) != 0;
  for (int i = 0; i < info->src->n; i++) {
    SrcItem *it = &info->src->a[i];
    if (!it->on) continue;
    nc->flags |= NC_IN_ON;
    int rc = compile_resolve_expr(p, nc, it->on);
    nc->flags &= ~NC_IN_ON;
    if (rc) return 1;
    if ((it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) && refs_right(it->on, info->src, i)) {
      compile_parse_error(p, "ON clause references tables to its right");
      return 1;
    }
  }
  if (compile_sel_tvf_resolve(p, nc, info->src)) return 1;
  if (s->where) {
    nc->result = info->result;
    int rc = compile_resolve_expr(p, nc, s->where);
    nc->result = NULL;
    if (rc) return 1;
  }
  if (s->group_by) {
    info->group_col = compile_parse_alloc(p, sizeof(int) * (size_t)s->group_by->n);
    if (!info->group_col) return 1;
    if (compile_resolve_order_by_ex(p, nc, s->group_by, info->result, "GROUP", info->group_col))
      return 1;
  }
  if (s->having) {
    /* SQLite: an aggregate query is one with GROUP BY or aggregates in its
     * result list; HAVING alone does not make one */
    if (!s->group_by && !result_agg) {
      compile_parse_error(p, "HAVING clause on a non-aggregate query");
      return 1;
    }
    nc->result = info->result;
    nc->flags |= NC_ALLOW_AGG;
    int rc = compile_resolve_expr(p, nc, s->having);
    nc->flags &= ~NC_ALLOW_AGG;
    nc->result = NULL;
    if (rc) return 1;
  }
  int agg = (nc->flags & NC_HAS_AGG) || s->group_by;
  if (s->order_by && !s->prior) {
    info->order_col = compile_parse_alloc(p, sizeof(int) * (size_t)s->order_by->n);
    if (!info->order_col) return 1;
    nc->flags |= NC_ALLOW_AGG | NC_ALLOW_WIN;
    int rc =
        compile_resolve_order_by_ex(p, nc, s->order_by, info->result, "ORDER", info->order_col);
    nc->flags &= ~(NC_ALLOW_AGG | NC_ALLOW_WIN);
    if (rc) return 1;
    if (!agg) {
      for (int i = 0; i < s->order_by->n; i++) {
        const SqlExpr *f = find_agg(s->order_by->a[i].expr);
        if (f) {
          compile_parse_error(p, "misuse of aggregate: %s()", f->z);
          return 1;
        }
      }
    }
  }
  if (resolve_limits(p, s, outer)) return 1;
  if (p->env && p->env->auth) /* a table none of whose columns is read: READ of "" */
    for (int i = 0; i < info->src->n; i++) {
      const SrcItem *it = &info->src->a[i];
      uint64_t used = it->colused; /* reads of the rowid alias do not count */
      if (it->tab && it->tab->rowid_alias >= 0 && it->tab->rowid_alias < 63)
        used &= ~((uint64_t)1 << it->tab->rowid_alias);
      if (it->kind == SRC_TABLE && it->tab && !used &&
          compile_parse_auth(p, AUTH_READ, it->tab->name, "", it->db) == AUTH_DENY)
        return 1;
    }
  info->is_agg = agg;
  info->state = 2;
  return 0;
}

/* Quiet attempt: resolve a copy of term against a core; the result column
 * it equals, or -1. */
static int compound_term_match(Parse *p, SqlSelect *core, const SqlExpr *term) {
  SelInfo *ci = core->info;
  if (!ci || !ci->result) return -1;
  SqlExpr *d = compile_expr_dup(p, term);
  if (!d) return -1;
  int rc0 = p->rc;
  char *msg0 = p->errmsg;
  p->rc = 0;
  p->errmsg = NULL;
  int bad = compile_resolve_expr(p, &ci->nc, d);
  if (p->rc == SHALE_NOMEM) bad = 2;
  if (p->errmsg) shale_free(p->errmsg);
  p->rc = rc0;
  p->errmsg = msg0;
  if (bad == 2) {
    compile_parse_nomem(p);
    return -1;
  }
  if (bad) return -1;
  for (int k = 0; k < ci->result->n; k++)
    if (compile_expr_same(d, ci->result->a[k].expr)) return k;
  return -1;
}

int compile_sel_resolve_compound_order(Parse *p, SqlSelect *head) {
  SelInfo *hi = head->info;
  SqlExprList *ob = head->order_by;
  int ncol = hi->result->n;
  if (compile_resolve_terms_limit(p, ob->n, "ORDER")) return 1;
  hi->order_col = compile_parse_alloc(p, sizeof(int) * (size_t)ob->n);
  if (!hi->order_col) return 1;
  for (int i = 0; i < ob->n; i++) {
    SqlExpr *e = ob->a[i].expr;
    while (e && e->op == SQL_E_COLLATE) e = e->a;
    int col = -1;
    if (e && e->op == SQL_E_INTEGER) {
      int64_t v = 0;
      const char *z = e->z;
      int ok = 1;
      for (; *z; z++) {
        if (*z < '0' || *z > '9' || v > 100000000) {
          ok = 0;
          break;
        }
        v = v * 10 + (*z - '0');
      }
      if (ok) {
        if (v < 1 || v > ncol) {
          compile_parse_error(p, "%d%s ORDER BY term out of range - should be between 1 and %d",
                              i + 1, compile_ordinal_suffix(i + 1), ncol);
          return 1;
        }
        col = (int)v - 1;
      }
    }
    for (SqlSelect *c = leftmost(head); col < 0 && c;) {
      /* aliases, then expressions, core by core from the left */
      if (e && e->op == SQL_E_ID && c->info && c->info->result) {
        for (int k = 0; k < c->info->result->n; k++)
          if (c->info->result->a[k].name && util_stricmp(c->info->result->a[k].name, e->z) == 0) {
            col = k;
            break;
          }
      }
      if (col < 0 && e) col = compound_term_match(p, c, e);
      /* next core to the right */
      SqlSelect *nx = NULL;
      for (SqlSelect *q = head; q && q != c; q = q->prior) nx = q;
      c = nx;
    }
    if (col < 0) {
      compile_parse_error(p, "%d%s ORDER BY term does not match any column in the result set",
                          i + 1, compile_ordinal_suffix(i + 1));
      return 1;
    }
    hi->order_col[i] = col;
  }
  return 0;
}

const char *compile_sel_compound_name(int op) {
  switch (op) {
    case SQL_COMPOUND_UNION_ALL:
      return "UNION ALL";
    case SQL_COMPOUND_INTERSECT:
      return "INTERSECT";
    case SQL_COMPOUND_EXCEPT:
      return "EXCEPT";
    default:
      return "UNION";
  }
}

static int select_resolve_inner(Parse *p, SqlSelect *s, NameCtx *outer);

static int with_dup_check(Parse *p, const SqlWith *w) {
  for (int i = 0; i < w->n; i++)
    for (int k = 0; k < i; k++)
      if (util_stricmp(w->a[i].name, w->a[k].name) == 0) {
        compile_parse_error(p, "duplicate WITH table name: %s", w->a[i].name);
        return 1;
      }
  return 0;
}

int compile_select_resolve(Parse *p, SqlSelect *s, NameCtx *outer) {
  if (!s || parse_failed(p)) return parse_failed(p);
  if (s->info && s->info->state == 2) return 0;
  if (!s->with) return select_resolve_inner(p, s, outer);
  SelectState *st = compile_select_state(p);
  if (!st) return 1;
  if (with_dup_check(p, s->with)) return 1;
  struct CteScope sc = {s->with, s->with->n, st->text, st->ctes};
  st->ctes = &sc;
  int rc = select_resolve_inner(p, s, outer);
  st->ctes = sc.up;
  return rc;
}

static int select_resolve_inner(Parse *p, SqlSelect *s, NameCtx *outer) {
  if (!s->prior) return resolve_core(p, s, outer);
  int n = 0;
  for (SqlSelect *c = s; c; c = c->prior) {
    if (resolve_core(p, c, outer)) return 1;
    n++;
  }
  if (p->env && p->env->max_compound > 0 && n > p->env->max_compound) {
    compile_parse_error(p, "too many terms in compound SELECT");
    return 1;
  }
  for (SqlSelect *c = s; c->prior; c = c->prior) {
    if (c->info->result->n != c->prior->info->result->n) {
      compile_parse_error(
          p, "SELECTs to the left and right of %s do not have the same number of result columns",
          compile_sel_compound_name(c->compound));
      return 1;
    }
  }
  if (s->order_by && compile_sel_resolve_compound_order(p, s)) return 1;
  return parse_failed(p);
}

int compile_select_ncol(const SqlSelect *s) {
  return s && s->info && s->info->result ? s->info->result->n : 0;
}

SqlExprList *compile_select_result(const SqlSelect *s) {
  return s && s->info ? s->info->result : NULL;
}

/* ---- result names and tables ---- */

static const SqlExpr *skip_reg(const SqlExpr *e) {
  while (e && e->op == SQL_E_REG && e->orig) e = e->orig;
  return e;
}

/* The base-table column a result expression reads, through subqueries. */
static int origin_of(const SqlExpr *e, const Table **tab, int *col) {
  e = skip_reg(e);
  if (!e || e->op != SQL_E_COLREF || !e->tab) return 0;
  const Table *t = e->tab;
  if (t->root == 0 && !t->is_schema && t->sql == NULL) {
    /* a subquery/view Table: follow the SELECT it stands for */
    return 0;
  }
  *tab = t;
  *col = e->column;
  return 1;
}

static const SqlExpr *follow_subquery(const SqlSelect *core, const SqlExpr *e) {
  /* COLREF of a SRC_SUBQUERY item of core: the sub's result expression */
  e = skip_reg(e);
  if (!e || e->op != SQL_E_COLREF || !core || !core->info || !core->info->src) return NULL;
  SrcItem *it = compile_src_find_cursor(core->info->src, e->cursor);
  if (!it || it->kind != SRC_SUBQUERY || !it->sub || e->column < 0) return NULL;
  SqlSelect *l = leftmost(it->sub);
  if (!l->info || !l->info->result || e->column >= l->info->result->n) return NULL;
  return l->info->result->a[e->column].expr;
}

static const SqlSelect *sub_core(const SqlSelect *core, const SqlExpr *e) {
  e = skip_reg(e);
  SrcItem *it = compile_src_find_cursor(core->info->src, e->cursor);
  return leftmost(it->sub);
}

/* Origin (table, column index) of result expression e of core, following
 * FROM subqueries and views. */
static int trace_origin(const SqlSelect *core, const SqlExpr *e, const Table **tab, int *col) {
  for (int guard = 0; guard < 100; guard++) {
    const SqlExpr *x = skip_reg(e);
    if (x && x->op == SQL_E_SUBQUERY && x->select) {
      /* a scalar subquery: its first column (as SQLite) */
      core = leftmost(x->select);
      if (!core->info || !core->info->result || core->info->result->n < 1) return 0;
      e = core->info->result->a[0].expr;
      continue;
    }
    if (!x || x->op != SQL_E_COLREF) return 0;
    const SqlExpr *f = follow_subquery(core, x);
    if (!f) return origin_of(x, tab, col);
    core = sub_core(core, x);
    e = f;
  }
  return 0;
}

/* A column of a flattened parenthesized join is named as the join's
 * column it reads ("y:1", as SQLite names it); NULL when e reads none. */
static const char *flat_nest_name(const SrcList *src, const SqlExpr *e) {
  for (int g = 0; src && g < src->n; g++) {
    const SrcItem *it = &src->a[g];
    if (!it->nest || it->nest == it->sub) continue;
    int in = 0;
    for (int k = g; k < g + it->nest_n && k < src->n; k++)
      if (src->a[k].cursor == e->cursor) in = 1;
    if (!in) continue;
    const SqlExprList *r = it->nest->info->result;
    for (int j = 0; j < r->n && j < it->nest_tab->ncol; j++) {
      const SqlExpr *x = r->a[j].expr;
      if (x && x->op == SQL_E_COLREF && x->cursor == e->cursor && x->column == e->column)
        return it->nest_tab->cols[j].name;
    }
  }
  return NULL;
}

static const char *result_name(Parse *p, const SqlSelect *core, int i) {
  SqlExprItem *it = &core->info->result->a[i];
  if (it->name) return it->name;
  const SqlExpr *e = skip_reg(it->expr);
  if (e && e->op == SQL_E_NULL && e->z &&
      (util_stricmp(e->z, "rowid") == 0 || util_stricmp(e->z, "oid") == 0 ||
       util_stricmp(e->z, "_rowid_") == 0))
    return "rowid"; /* a subquery's rowid (resolve.c made it NULL) */
  if (e && e->op == SQL_E_COLREF) {
    if (e->column < 0) return "rowid";
    const char *nn = e->depth == 0 ? flat_nest_name(core->info->src, e) : NULL;
    if (nn) return nn;
    if (e->tab && e->column < e->tab->ncol) return e->tab->cols[e->column].name;
  }
  if (e && e->op == SQL_E_TRIGREF && e->tab && e->column >= 0) return e->tab->cols[e->column].name;
  return compile_span_text(p, core->info->text, it->span);
}

/* Result column i of the statement itself under PRAGMA short_column_names
 * and full_column_names other than the defaults (mode, COMPILE_NAMES_*), as
 * SQLite 3.40's generateColumnNames and "*" expansion: an AS name first; a
 * column reference "table.column" when full names are on (also from "*"
 * when short names are off), the table's own name (a subquery's or view's:
 * its alias or name), "rowid" for a rowid without alias; else the
 * expression as written ("*"'s columns by name). */
static const char *top_name(Parse *p, const SqlSelect *core, int i, int mode) {
  const SqlExprItem *it = &core->info->result->a[i];
  int star = it->span.len <= 0; /* an item "*" made */
  if (it->name && !star) return it->name;
  const SqlExpr *e = skip_reg(it->expr);
  int full = star ? mode == COMPILE_NAMES_FULL : mode >= COMPILE_NAMES_FULL;
  if (full && e && e->op == SQL_E_COLREF && e->tab) {
    const Table *t = e->tab;
    int c = e->column < 0 ? t->rowid_alias : e->column;
    char *z = util_mprintf("%s.%s", t->name, c >= 0 && c < t->ncol ? t->cols[c].name : "rowid");
    if (!z) {
      compile_parse_nomem(p);
      return NULL;
    }
    const char *nm = compile_parse_strdup(p, z);
    shale_free(z);
    return nm;
  }
  if (star || mode >= COMPILE_NAMES_FULL) return result_name(p, core, i);
  return compile_span_text(p, core->info->text, it->span);
}

int compile_select_result_names(Parse *p, SqlSelect *s) {
  if (parse_failed(p)) return 1;
  const SqlSelect *core = leftmost(s);
  if (!core->info || !core->info->result) return 0;
  int n = core->info->result->n;
  p->ncol = n;
  p->cols = compile_parse_alloc(p, sizeof(ResultCol) * (size_t)(n ? n : 1));
  if (!p->cols) return 1;
  for (int i = 0; i < n; i++) {
    ResultCol *rc = &p->cols[i];
    int mode = p->env ? p->env->col_names : COMPILE_NAMES_SHORT;
    rc->name = mode == COMPILE_NAMES_SHORT ? result_name(p, core, i) : top_name(p, core, i, mode);
    if (!rc->name) return 1;
    const Table *t = NULL;
    int col = 0;
    if (trace_origin(core, core->info->result->a[i].expr, &t, &col)) {
      rc->table = t->name;
      rc->db = compile_parse_db_name(p, compile_parse_table_db(p, t));
      if (col < 0) {
        rc->origin = t->rowid_alias >= 0 ? t->cols[t->rowid_alias].name : "rowid";
        rc->decltype = "INTEGER";
      } else {
        rc->origin = t->cols[col].name;
        rc->decltype = t->cols[col].type;
      }
    }
  }
  return parse_failed(p);
}

Table *compile_select_result_table(Parse *p, SqlSelect *s, const char *name,
                                   const SqlIdList *colnames) {
  if (parse_failed(p)) return NULL;
  SqlSelect *core = leftmost(s);
  if (!core->info || !core->info->result) {
    compile_parse_error(p, "internal: unresolved SELECT");
    return NULL;
  }
  int n = core->info->result->n;
  if (colnames && colnames->n != n) {
    compile_parse_error(p, "expected %d columns for '%s' but got %d", colnames->n, name, n);
    return NULL;
  }
  Table *t = compile_parse_alloc(p, sizeof *t);
  if (!t) return NULL;
  t->name = compile_parse_strdup(p, name ? name : "subquery");
  t->ncol = n;
  t->nstored = n;
  t->rowid_alias = -1;
  t->cols = compile_parse_alloc(p, sizeof(Column) * (size_t)(n ? n : 1));
  if (!t->cols) return NULL;
  for (int i = 0; i < n; i++) {
    Column *c = &t->cols[i];
    const char *nm = colnames ? colnames->a[i] : result_name(p, core, i);
    if (!nm) return NULL;
    if (!util_stricmp(nm, "true") || !util_stricmp(nm, "false")) {
      /* SQLite never names such a column TRUE or FALSE (they would read
       * as the constants): it is columnN */
      char buf[32];
      snprintf(buf, sizeof buf, "column%d", i + 1);
      nm = compile_parse_strdup(p, buf);
      if (!nm) return NULL;
    }
    /* SQLite's dedup: while the name is taken, drop a ":digits" suffix and
     * append ":1", ":2", ... (SQLite draws a random number after the third
     * try; here the count goes on) */
    for (int cnt = 0;;) {
      int clash = 0;
      for (int k = 0; k < i && !clash; k++)
        if (util_stricmp(t->cols[k].name, nm) == 0) clash = 1;
      if (!clash) break;
      int len = (int)strlen(nm), j = len - 1;
      while (j > 0 && nm[j] >= '0' && nm[j] <= '9') j--;
      if (len > 0 && nm[j] == ':') len = j;
      char *z = util_mprintf("%.*s:%d", len, nm, ++cnt);
      if (!z) {
        compile_parse_nomem(p);
        return NULL;
      }
      nm = compile_parse_strdup(p, z);
      shale_free(z);
      if (!nm) return NULL;
    }
    c->name = nm;
    SqlExpr *e = core->info->result->a[i].expr;
    /* a compound's column: the leftmost core decides (as SQLite); no
     * affinity stays 0 (SQLite's NONE: the other operand's applies) */
    c->affinity = compile_expr_affinity(e);
    const Collation *coll = compile_expr_collation(p, e);
    c->coll = coll ? coll->name : NULL;
    const Table *ot = NULL;
    int oc = 0;
    if (trace_origin(core, e, &ot, &oc)) c->type = oc < 0 ? "INTEGER" : ot->cols[oc].type;
    c->storage = i;
  }
  return parse_failed(p) ? NULL : t;
}

/* ---- code: output of rows ---- */

static void emit_dest(Parse *p, OutCtx *oc, int regs) {
  SelectDest *d = oc->dest;
  int n = oc->ncol;
  int skip = emit_label(p);
  if (oc->reg_offset) emit(p, OP_IfPos, oc->reg_offset, skip, 1);
  switch (d->kind) {
    case SD_OUTPUT:
      emit(p, OP_ResultRow, regs, n, 0);
      break;
    case SD_MEM:
      emit(p, OP_Copy, regs, d->reg, (d->nreg ? d->nreg : n) - 1);
      break;
    case SD_EXISTS:
      emit(p, OP_Integer, 1, d->reg, 0);
      break;
    case SD_SET: {
      int r = emit_regs(p, 1);
      if (d->aff)
        vm_builder_add_text(&p->b, OP_MakeRecord, regs, n, r, d->aff, -1);
      else
        emit(p, OP_MakeRecord, regs, n, r);
      emit(p, OP_IdxInsert, d->cursor, r, 0);
      break;
    }
    case SD_UNION: {
      int r = emit_regs(p, 1);
      emit(p, OP_MakeRecord, regs, n, r);
      emit(p, OP_IdxInsert, d->cursor, r, 0);
      break;
    }
    case SD_EXCEPT:
      emit(p, OP_IdxDelete, d->cursor, regs, n);
      break;
    case SD_TABLE: {
      int r = emit_regs(p, 2);
      emit(p, OP_MakeRecord, regs, n, r);
      emit(p, OP_NewRowid, d->cursor, r + 1, 0);
      emit(p, OP_Insert, d->cursor, r, r + 1);
      break;
    }
    case SD_COROUTINE:
      if (d->out != regs) emit(p, OP_Copy, regs, d->out, n - 1);
      emit(p, OP_Yield, d->reg, 0, 0);
      break;
    case SD_REGS:
      if (d->out != regs) emit(p, OP_Copy, regs, d->out, n - 1);
      emit(p, OP_Gosub, d->reg, d->cursor, 0);
      break;
    case SD_CTEQ: {
      int r = emit_regs(p, 2);
      emit(p, OP_MakeRecord, regs, n, r);
      if (d->out > 0) {
        emit(p, OP_Found, d->out - 1, skip, r);
        emit(p, OP_IdxInsert, d->out - 1, r, 0);
      }
      if (d->nqkey) { /* priority queue: (keys, sequence, row) */
        int nk = d->nqkey, base = emit_regs(p, nk + 1 + n);
        for (int i = 0; i < nk; i++) emit(p, OP_SCopy, regs + d->qkey[i], base + i, 0);
        emit(p, OP_Sequence, d->cursor, base + nk, 0);
        for (int i = 0; i < n; i++) emit(p, OP_SCopy, regs + i, base + nk + 1 + i, 0);
        emit(p, OP_MakeRecord, base, nk + 1 + n, r);
        emit(p, OP_IdxInsert, d->cursor, r, 0);
        break;
      }
      emit(p, OP_NewRowid, d->cursor, r + 1, 0);
      emit(p, OP_Insert, d->cursor, r, r + 1);
      break;
    }
    case SD_DISCARD:
    default:
      break;
  }
  if (d->kind == SD_MEM || d->kind == SD_EXISTS) {
    emit(p, OP_Goto, 0, oc->end_label, 0);
  } else if (oc->reg_limit) {
    emit(p, OP_DecrJumpZero, oc->reg_limit, oc->end_label, 0);
  }
  emit_resolve(p, skip);
}

const Collation *compile_sel_coll_of(Parse *p, const SqlExpr *e) {
  return compile_expr_collation(p, e);
}

/* 1 when the VM's hash tables (vm_hash.c) can hash text under collation c. */
int compile_sel_hashable_coll(const Collation *c) {
  return !c || c == &record_coll_binary || c == &record_coll_nocase || c == &record_coll_rtrim;
}

/* 1 when an ORDER BY term sorts on an extra key column before its value (a
 * NULL flag): NULLS LAST ascending or NULLS FIRST descending. */
static int sort_nulls_key(int sort, int nulls) {
  return (nulls == SQL_NULLS_LAST && sort != SQL_SORT_DESC) ||
         (nulls == SQL_NULLS_FIRST && sort == SQL_SORT_DESC);
}

static int nulls_key_of(const SqlExprItem *t) { return sort_nulls_key(t->sort, t->nulls); }

void compile_sel_emit_output(Parse *p, OutCtx *oc, int regs) {
  int skip = emit_label(p);
  int n = oc->ncol;
  if (oc->distinct_first) {
    int diff = emit_label(p);
    emit(p, OP_If, oc->distinct_first, diff, 0);
    vm_builder_add_p4(&p->b, OP_Compare, oc->distinct_prev, regs, 0, P4_KEYINFO, oc->distinct_ki);
    emit(p, OP_Jump, diff, skip, diff);
    emit_resolve(p, diff);
    emit(p, OP_Integer, 0, oc->distinct_first, 0);
    emit(p, OP_Copy, regs, oc->distinct_prev, n - 1);
  } else if (oc->distinct_cur >= 0 && oc->distinct_hash) {
    emit(p, OP_HashSetAdd, oc->distinct_cur, skip, regs);
  } else if (oc->distinct_cur >= 0) {
    int r = emit_regs(p, 1);
    vm_builder_add_i4(&p->b, OP_Found, oc->distinct_cur, skip, regs, n);
    emit(p, OP_MakeRecord, regs, n, r);
    emit(p, OP_IdxInsert, oc->distinct_cur, r, 0);
  }
  if (oc->sorter_cur >= 0) {
    int nk = oc->nkey;
    int base = emit_regs(p, nk + 1 + n);
    int k = base;
    for (int i = 0; i < oc->order_by->n; i++) {
      SqlExprItem *t = &oc->order_by->a[i];
      int col = oc->order_col ? oc->order_col[i] : -1;
      int nulls_key = nulls_key_of(t);
      int vreg = nulls_key ? k + 1 : k;
      if (col >= 0)
        emit(p, OP_SCopy, regs + col, vreg, 0);
      else
        compile_expr_code(p, t->expr, vreg);
      if (nulls_key) {
        int l = emit_label(p);
        emit(p, OP_Integer, 0, k, 0);
        emit(p, OP_NotNull, vreg, l, 0);
        emit(p, OP_Integer, 1, k, 0);
        emit_resolve(p, l);
        k++;
      }
      k++;
    }
    if (oc->block_nkey > 0) {
      /* a new run of the delivered prefix: the rows so far go out sorted */
      int same = emit_label(p), diff = emit_label(p);
      KeyInfo *pk = compile_parse_keyinfo(p, oc->block_nkey, oc->sorter_ki->coll, NULL);
      if (!pk) return;
      vm_builder_add_p4(&p->b, OP_Compare, oc->block_prev, base, 0, P4_KEYINFO, pk);
      emit(p, OP_Jump, diff, same, diff);
      emit_resolve(p, diff);
      emit(p, OP_Copy, base, oc->block_prev, oc->block_nkey - 1);
      emit(p, OP_Gosub, oc->block_ret, oc->block_sub, 0);
      emit_resolve(p, same);
    }
    /* ORDER BY ... LIMIT: a row whose key sorts at or after the greatest
     * of a full top-N is dropped before its record is made */
    if (oc->reg_limit && nk > 0)
      vm_builder_add_i4(&p->b, OP_SorterSkip, oc->sorter_cur, skip, base, nk);
    emit(p, OP_Sequence, oc->sorter_cur, base + nk, 0);
    for (int i = 0; i < n; i++)
      if (oc->res_field[i] > nk) emit(p, OP_SCopy, regs + i, base + oc->res_field[i], 0);
    int r = emit_regs(p, 1);
    emit(p, OP_MakeRecord, base, nk + 1 + oc->ndata, r);
    emit(p, OP_SorterInsert, oc->sorter_cur, r, 0);
  } else {
    emit_dest(p, oc, regs);
  }
  emit_resolve(p, skip);
}

/* 1 if e carries a collation of its own (SQLite's sqlite3ExprCollSeq is
 * not NULL): a column reference (BINARY by default) or COLLATE. */
static int has_coll(Parse *p, const SqlExpr *e) {
  while (e) {
    if (e->op == SQL_E_REG && e->orig)
      e = e->orig;
    else if (e->op == SQL_E_COLREF || e->op == SQL_E_TRIGREF)
      /* SQLite reads the rowid (and an INTEGER PRIMARY KEY) as column -1,
       * which has no collation */
      return e->column >= 0 && !(e->tab && e->column == e->tab->rowid_alias);
    else if (e->op == SQL_E_COLLATE)
      return 1;
    else if (e->op == SQL_E_CAST || (e->op == SQL_E_UNARY && e->sub == TK_PLUS))
      e = e->a;
    else
      return compile_expr_collation(p, e) != NULL;
  }
  return 0;
}

/* A FROM subquery or view SQLite flattens into the query reading it (no
 * aggregate, DISTINCT, LIMIT, window or compound): then its column is its
 * expression again. */
static int flattens(const SqlSelect *sub) {
  return sub && !sub->prior && sub->info && !sub->info->is_agg && sub->distinct != 1 &&
         !sub->limit && !sub->offset && !sub->windows && sub->kind == SQL_SEL_SELECT;
}

/* has_coll of result expression e of core, seeing through the columns of
 * FROM subqueries and views SQLite flattens into plain columns (an INTEGER
 * PRIMARY KEY under a view's column has no collation either; seed 21). */
static int arm_has_coll(Parse *p, const SqlSelect *core, const SqlExpr *e) {
  for (int guard = 0; guard < 100; guard++) {
    const SqlExpr *f = follow_subquery(core, e);
    if (!f) break;
    const SqlSelect *sub = sub_core(core, e);
    if (!flattens(sub)) break;
    /* the flattener keeps a column (or COLLATE) as it is and gives any
     * other expression the subquery column's collation (BINARY at least) */
    const SqlExpr *fx = skip_reg(f);
    if (!fx || (fx->op != SQL_E_COLREF && fx->op != SQL_E_COLLATE)) return 1;
    core = sub;
    e = f;
  }
  return has_coll(p, e);
}

/* Collation of result column i of a (compound) SELECT: the leftmost core
 * whose column has one decides (SQLite's multiSelectCollSeq). */
static const Collation *compound_coll(Parse *p, SqlSelect *s, int i) {
  const Collation *r = NULL;
  for (SqlSelect *c = s; c; c = c->prior) {
    if (!c->info || !c->info->result || i >= c->info->result->n) continue;
    const SqlExpr *e = c->info->result->a[i].expr;
    if (arm_has_coll(p, c, e)) r = compile_sel_coll_of(p, e);
  }
  return r;
}

static KeyInfo *result_keyinfo(Parse *p, SqlSelect *s, int n) {
  const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(n ? n : 1));
  if (!coll) return NULL;
  for (int i = 0; i < n; i++) coll[i] = compound_coll(p, s, i);
  return compile_parse_keyinfo(p, n, coll, NULL);
}

/* 1 when an aggregate query's ORDER BY is its GROUP BY term for term
 * (ascending, default NULLs order, the same collation): its groups come
 * out in key order, ties (none) aside, so no sorter is needed, as SQLite
 * finds when the two lists are identical. */
int compile_sel_group_is_order(Parse *p, SqlSelect *s, SelInfo *info) {
  SqlExprList *gb = s->group_by, *ob = s->order_by;
  if (s->prior || !info->is_agg || !gb || !ob || gb->n != ob->n || compile_window_in_core(s))
    return 0;
  for (int i = 0; i < ob->n; i++) {
    const SqlExprItem *t = &ob->a[i];
    if (t->sort == SQL_SORT_DESC || t->nulls != SQL_NULLS_NONE) return 0;
    SqlExpr *e = info->order_col[i] >= 0 ? info->result->a[info->order_col[i]].expr : t->expr;
    /* (SQLite keeps its sorter for some COLLATE forms, e.g. a GROUP BY
     * alias of a COLLATE expression: with one, the sorter stays) */
    if (e->op == SQL_E_COLLATE || gb->a[i].expr->op == SQL_E_COLLATE ||
        t->expr->op == SQL_E_COLLATE || !compile_expr_same(e, gb->a[i].expr) ||
        compile_sel_coll_of(p, t->expr) != compile_sel_coll_of(p, gb->a[i].expr))
      return 0;
  }
  return 1;
}

/* An aggregate without GROUP BY (nor a window over it) yields one row at
 * most: its ORDER BY makes no difference (SQLite drops it). */
static int single_row_agg(SqlSelect *s, SelInfo *info) {
  return !s->prior && info->is_agg && !s->group_by && !compile_window_in_core(s);
}

/* A core without FROM (nor aggregate or window), or VALUES of one row,
 * yields one row at most: SQLite's planner finds its ORDER BY satisfied
 * by the empty loop list. */
static int single_row_core(SqlSelect *s, SelInfo *info) {
  if (s->prior) return 0;
  if (s->kind == SQL_SEL_VALUES) return s->cols && s->cols->n == 1;
  return s->kind == SQL_SEL_SELECT && (!info->src || info->src->n == 0) && !info->is_agg &&
         !compile_window_in_core(s);
}

/* Open (or empty again) oc's sorter. */
static void sorter_open(Parse *p, OutCtx *oc) {
  vm_builder_add_p4(&p->b, OP_SorterOpen, oc->sorter_cur, oc->nkey + 1, 0, P4_KEYINFO,
                    oc->sorter_ki);
  /* ORDER BY ... LIMIT: only the first LIMIT + OFFSET rows (left) are kept */
  if (oc->reg_limit) emit(p, OP_SorterLimit, oc->sorter_cur, oc->reg_limit, oc->reg_offset);
}

/* Sorter for ORDER BY: opened before the rows are produced. */
static void sorter_setup(Parse *p, OutCtx *oc, SqlSelect *s, SqlExprList *ob, int *order_col) {
  int nk = 0;
  for (int i = 0; i < ob->n; i++) {
    SqlExprItem *t = &ob->a[i];
    int nulls_key = nulls_key_of(t);
    nk += 1 + nulls_key;
  }
  const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1));
  uint8_t *desc = compile_parse_alloc(p, (size_t)(nk + 1));
  if (!coll || !desc) return;
  int k = 0;
  for (int i = 0; i < ob->n; i++) {
    SqlExprItem *t = &ob->a[i];
    int nulls_key = nulls_key_of(t);
    uint8_t d = t->sort == SQL_SORT_DESC;
    if (nulls_key) desc[k++] = d;
    if (s->prior && t->expr->op != SQL_E_COLLATE && order_col[i] >= 0)
      coll[k] = compound_coll(p, s, order_col[i]);
    else
      coll[k] = compile_sel_coll_of(p, t->expr);
    desc[k++] = d;
  }
  /* SQLite's aggregate queries deliver rows tying on a single DESC term in
   * reverse order: the sequence number sorts descending then */
  if (s && s->info && s->info->is_agg && s->group_by && ob->n == 1 &&
      ob->a[0].sort == SQL_SORT_DESC && !compile_window_in_core(s))
    desc[nk] = 1;
  KeyInfo *ki = compile_parse_keyinfo(p, nk + 1, coll, desc);
  if (!ki) return;
  /* a result column that an ORDER BY term stores as its key unchanged is
   * read back from the key (SQLite's iOrderByCol): one copy per record */
  oc->res_field = compile_parse_alloc(p, sizeof(int) * (size_t)(oc->ncol + 1));
  if (!oc->res_field) return;
  oc->ndata = 0;
  for (int i = 0; i < oc->ncol; i++) {
    oc->res_field[i] = -1;
    for (int j = 0, kp = 0; j < ob->n && oc->res_field[i] < 0; j++) {
      SqlExprItem *t = &ob->a[j];
      int nulls_key = nulls_key_of(t);
      kp += nulls_key;
      if (order_col && order_col[j] == i) oc->res_field[i] = kp;
      kp++;
    }
    if (oc->res_field[i] < 0) oc->res_field[i] = nk + 1 + oc->ndata++;
  }
  oc->sorter_cur = emit_cursor(p);
  oc->order_by = ob;
  oc->order_col = order_col;
  oc->nkey = nk;
  oc->sorter_ki = ki;
  oc->sorter_open_at = emit_addr(p);
  sorter_open(p, oc);
  oc->sorter_open_end = emit_addr(p);
}

/* Start a block-sorted ORDER BY whose first nterm terms the loops deliver
 * (SQLite's nOBSat): each run of rows equal on them is sorted alone, as it
 * ends, so a LIMIT stops the loops early. */
static void block_setup(Parse *p, OutCtx *oc, int nterm) {
  int nk = 0;
  for (int i = 0; i < nterm; i++) nk += 1 + nulls_key_of(&oc->order_by->a[i]);
  oc->block_nkey = nk;
  oc->block_prev = emit_regs(p, nk);
  oc->block_ret = emit_regs(p, 1);
  oc->block_sub = emit_label(p);
}

/* Read the sorted rows back out to the destination. A block sort calls
 * its subroutine for the last run; the subroutine reads the sorter out and
 * empties it. */
static void sorter_output(Parse *p, OutCtx *oc) {
  if (oc->block_nkey > 0) {
    emit(p, OP_Gosub, oc->block_ret, oc->block_sub, 0);
    emit(p, OP_Goto, 0, oc->end_label, 0);
    emit_resolve(p, oc->block_sub);
  }
  int n = oc->ncol;
  int regs = emit_regs(p, n);
  int rec = emit_regs(p, 1);
  int pseudo = emit_cursor(p);
  int done = emit_label(p), top = emit_label(p);
  emit(p, OP_OpenPseudo, pseudo, rec, oc->nkey + 1 + oc->ndata);
  emit(p, OP_SorterSort, oc->sorter_cur, done, 0);
  emit_resolve(p, top);
  emit(p, OP_SorterData, oc->sorter_cur, rec, pseudo);
  for (int i = 0; i < n; i++) emit(p, OP_Column, pseudo, oc->res_field[i], regs + i);
  emit_dest(p, oc, regs);
  emit(p, OP_SorterNext, oc->sorter_cur, top, 0);
  emit_resolve(p, done);
  if (oc->block_nkey > 0) {
    sorter_open(p, oc);
    emit(p, OP_Return, oc->block_ret, 0, 0);
  }
}

/* ---- code: row loops ---- */

/* The loop of a core with windows outside an aggregate: planned for the
 * last window pass's order (compile_window_loop_planned). */
static int win_loop_begin(Parse *p, SelInfo *info, SqlSelect *s, WinCtx *wc, int flags, Loop *l) {
  l->w = NULL;
  l->skip = 0;
  if (!info->src || info->src->n == 0) {
    compile_window_loop_planned(p, wc, 0);
    return compile_sel_loop_begin(p, info, s, NULL, flags, l);
  }
  SqlExprList *wob = compile_window_loop_order(p, wc);
  l->w = compile_where_plan(p, info->src, s->where, wob, flags);
  if (!l->w) return 1;
  compile_where_omit_noop(l->w, info->result, s->order_by, 0);
  compile_window_loop_planned(p, wc, wob && compile_where_order_satisfied(l->w));
  return compile_where_code(l->w) || parse_failed(p);
}

int compile_sel_loop_begin(Parse *p, SelInfo *info, SqlSelect *s, SqlExprList *ob, int flags,
                           Loop *l) {
  l->w = NULL;
  l->skip = 0;
  if (info->src && info->src->n > 0) {
    l->w = compile_where_begin(p, info->src, s->where, ob, flags);
    return l->w ? 0 : 1;
  }
  l->skip = emit_label(p);
  compile_parse_eqp(p, "SCAN CONSTANT ROW");
  if (s->where) compile_expr_if_false(p, s->where, l->skip, 1);
  return parse_failed(p);
}

/* The loop of a core without aggregates or windows: as compile_sel_loop_begin,
 * with the LEFT JOINs that change nothing dropped (compile_where_omit_noop). */
static int plain_loop_begin(Parse *p, SelInfo *info, SqlSelect *s, SqlExprList *ob, int distinct,
                            Loop *l) {
  int flags = (distinct ? WHERE_DISTINCT : 0) | (ob ? WHERE_ORDER_PREFIX : 0);
  if (distinct && ob == info->result) flags = WHERE_DISTINCT | WHERE_GROUPBY;
  if (!info->src || info->src->n == 0) return compile_sel_loop_begin(p, info, s, ob, flags, l);
  l->w = NULL;
  l->skip = 0;
  l->w = compile_where_plan(p, info->src, s->where, ob, flags);
  if (!l->w) return 1;
  compile_where_omit_noop(l->w, info->result, s->order_by, distinct);
  return compile_where_code(l->w) || parse_failed(p);
}

void compile_sel_loop_end(Parse *p, Loop *l) {
  if (l->w)
    compile_where_end(l->w);
  else
    emit_resolve(p, l->skip);
}

static void values_code(Parse *p, SqlSelect *s, OutCtx *oc) {
  int n = oc->ncol;
  int regs = emit_regs(p, n);
  for (int i = 0; s->cols && i < s->cols->n; i++) {
    compile_expr_code_list(p, s->cols->a[i].expr->list, regs);
    compile_sel_emit_output(p, oc, regs);
  }
}

/* ---- code: cores and compounds ---- */

/* Result column of core reading column col of the FROM item at cursor
 * (through COLLATE) with collation coll (NULL: any); -1 if none. */
static int result_reads(Parse *p, const SelInfo *info, int cursor, int col, const char *coll) {
  for (int i = 0; i < info->result->n; i++) {
    const SqlExpr *e = info->result->a[i].expr;
    while (e && e->op == SQL_E_COLLATE) e = e->a;
    if (!e || e->op != SQL_E_COLREF || e->depth != 0 || e->cursor != cursor || e->column != col)
      continue;
    const Collation *c = compile_sel_coll_of(p, info->result->a[i].expr);
    if (!coll || util_stricmp(c ? c->name : "BINARY", coll) == 0) return i;
  }
  return -1;
}

/* SQLite's isDistinctRedundant: a DISTINCT over one table whose result
 * reads its rowid, or every key column of a UNIQUE index (not partial,
 * each column NOT NULL and in the index's collation), can have no
 * duplicate rows: SQLite drops it (no temporary b-tree). Not over a
 * virtual table, whose rowids only its module vouches for. */
static int distinct_redundant(Parse *p, const SqlSelect *s, const SelInfo *info) {
  const SrcList *src = info->src;
  if (info->is_agg || compile_window_in_core(s) || !src || src->n != 1 || !info->result) return 0;
  const SrcItem *it = &src->a[0];
  const Table *tab = it->tab;
  if (it->kind != SRC_TABLE || !tab || tab->vtab || tab->vtab_module) return 0;
  if (!tab->without_rowid &&
      (result_reads(p, info, it->cursor, -1, NULL) >= 0 ||
       (tab->rowid_alias >= 0 && result_reads(p, info, it->cursor, tab->rowid_alias, NULL) >= 0)))
    return 1;
  for (const Index *idx = tab->indexes; idx; idx = idx->next) {
    if (!idx->unique || idx->where) continue;
    int j = 0;
    for (; j < idx->nkey; j++) {
      int c = idx->cols[j].col;
      if (c < 0 || c == tab->rowid_alias) break;
      int notnull = tab->cols[c].notnull;
      /* a WITHOUT ROWID table's primary key columns are NOT NULL */
      for (int k = 0; !notnull && tab->without_rowid && tab->pk_index && k < tab->pk_index->nkey;
           k++)
        notnull = tab->pk_index->cols[k].col == c;
      if (!notnull || result_reads(p, info, it->cursor, c, idx->cols[j].coll) < 0) break;
    }
    if (j == idx->nkey) return 1;
  }
  return 0;
}

static void core_code(Parse *p, SqlSelect *s, OutCtx *oc0) {
  SelInfo *info = s->info;
  OutCtx oc = *oc0;
  /* SQLite drops an arm's own DISTINCT when the arm's rows go straight into
   * a compound's de-duplicating table (UNION, INTERSECT, EXCEPT without an
   * ORDER BY; with one it merges sorted arms and keeps it): the compound's
   * collations alone then decide which rows are equal. */
  int distinct = s->distinct == 1 && oc.dest->kind != SD_EXISTS && oc.dest->kind != SD_UNION &&
                 oc.dest->kind != SD_EXCEPT && !distinct_redundant(p, s, info);
  /* SQLite plans a DISTINCT without ORDER BY for its result list in any
   * order and direction (WHERE_DISTINCTBY): when the loops deliver it, each
   * row is compared with the one before (no temporary b-tree) */
  int by_result = distinct && s->kind != SQL_SEL_VALUES && !info->is_agg &&
                  !compile_window_in_core(s) && info->src && info->src->n > 0 &&
                  !(oc.sorter_cur >= 0 && oc0->order_owner == s);
  int open_at = -1, open_end = -1;
  if (distinct) {
    /* this core's own collations (not the compound's) */
    const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(oc.ncol + 1));
    if (!coll) return;
    for (int i = 0; i < oc.ncol && i < info->result->n; i++)
      coll[i] = compile_sel_coll_of(p, info->result->a[i].expr);
    KeyInfo *ki = compile_parse_keyinfo(p, oc.ncol, coll, NULL);
    if (by_result) {
      oc.distinct_ki = ki;
      oc.distinct_first = emit_regs(p, 1);
      oc.distinct_prev = emit_regs(p, oc.ncol);
      emit(p, OP_Integer, 1, oc.distinct_first, 0);
    }
    open_at = emit_addr(p);
    oc.distinct_cur = emit_cursor(p);
    /* the rows seen only need membership: a hash set when it can hash them */
    oc.distinct_hash = 1;
    for (int i = 0; i < oc.ncol; i++)
      if (!compile_sel_hashable_coll(coll[i])) oc.distinct_hash = 0;
    if (oc.distinct_hash)
      vm_builder_add_p4(&p->b, OP_HashAggOpen, oc.distinct_cur, 0, 0, P4_KEYINFO, ki);
    else
      vm_builder_add_p4(&p->b, OP_OpenEphemeral, oc.distinct_cur, oc.ncol, 0, P4_KEYINFO, ki);
    open_end = emit_addr(p);
  }
  if (s->kind == SQL_SEL_VALUES) {
    if (s->cols && s->cols->n == 1)
      compile_parse_eqp(p, "SCAN CONSTANT ROW");
    else
      compile_parse_eqp(p, "SCAN %d CONSTANT ROWS", s->cols ? s->cols->n : 0);
    values_code(p, s, &oc);
    return;
  }
  WinCtx *wc = compile_window_begin(p, s, info);
  if (parse_failed(p)) return;
  if (info->is_agg) {
    compile_sel_agg_code(p, s, info, &oc, wc);
    if (oc.distinct_cur >= 0) compile_parse_eqp(p, "USE TEMP B-TREE FOR DISTINCT");
    return;
  }
  Loop loop;
  SqlExprList *ob = !wc && oc.sorter_cur >= 0 && oc0->order_owner == s ? s->order_by : NULL;
  if (wc ? win_loop_begin(p, info, s, wc, distinct ? WHERE_DISTINCT : 0, &loop)
         : plain_loop_begin(p, info, s, by_result ? info->result : ob, distinct, &loop))
    return;
  if (by_result && loop.w && compile_where_order_satisfied(loop.w) && !parse_failed(p) &&
      !p->b.rc) {
    for (int a = open_at; a < open_end; a++) p->b.prog->ops[a].op = OP_Noop;
    oc.distinct_cur = -1;
  } else {
    oc.distinct_first = 0; /* (its registers stay unused) */
  }
  if (ob && loop.w && compile_where_order_satisfied(loop.w)) {
    oc.sorter_cur = -1; /* rows already come in order */
    oc0->sorter_cur = -1;
    if (!parse_failed(p) && !p->b.rc) /* no sorter to open at each run (SQLite's Noop) */
      for (int a = oc0->sorter_open_at; a < oc0->sorter_open_end; a++)
        p->b.prog->ops[a].op = OP_Noop;
  } else if (ob && loop.w && compile_where_order_prefix(loop.w) > 0) {
    block_setup(p, oc0, compile_where_order_prefix(loop.w));
    oc.block_nkey = oc0->block_nkey;
    oc.block_prev = oc0->block_prev;
    oc.block_ret = oc0->block_ret;
    oc.block_sub = oc0->block_sub;
  }
  if (wc) {
    compile_window_push(p, wc);
  } else {
    int regs = emit_regs(p, oc.ncol);
    /* EXISTS never reads the result columns: SQLite does not evaluate them
     * (so their functions make no statement journal, see compile.c) */
    if (oc.dest->kind != SD_EXISTS) compile_expr_code_list(p, info->result, regs);
    compile_sel_emit_output(p, &oc, regs);
  }
  compile_sel_loop_end(p, &loop);
  if (wc) {
    WinOut wo = {&oc, info};
    compile_window_end(p, wc, compile_sel_win_output, &wo);
  }
  if (oc.distinct_cur >= 0) compile_parse_eqp(p, "USE TEMP B-TREE FOR DISTINCT");
}

static void scan_eph(Parse *p, int cur, OutCtx *oc, int filter_cur) {
  int n = oc->ncol;
  int regs = emit_regs(p, n);
  int done = emit_label(p), top = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, cur, done, 0);
  emit_resolve(p, top);
  for (int i = 0; i < n; i++) emit(p, OP_Column, cur, i, regs + i);
  if (filter_cur >= 0) vm_builder_add_i4(&p->b, OP_NotFound, filter_cur, next, regs, n);
  compile_sel_emit_output(p, oc, regs);
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
}

/* One arm of a compound, under its EXPLAIN QUERY PLAN row. */
static void arm_code(Parse *p, SqlSelect *s, OutCtx *oc, const char *label) {
  int save = p->eqp_parent;
  p->eqp_parent = compile_parse_eqp(p, "%s", label);
  core_code(p, s, oc);
  p->eqp_parent = save;
}

static const char *arm_label(int op) {
  switch (op) {
    case SQL_COMPOUND_UNION_ALL:
      return "UNION ALL";
    case SQL_COMPOUND_INTERSECT:
      return "INTERSECT USING TEMP B-TREE";
    case SQL_COMPOUND_EXCEPT:
      return "EXCEPT USING TEMP B-TREE";
    default:
      return "UNION USING TEMP B-TREE";
  }
}

static void set_code(Parse *p, SqlSelect *s, OutCtx *oc) {
  if (parse_failed(p)) return;
  if (!s->prior) {
    arm_code(p, s, oc, "LEFT-MOST SUBQUERY");
    return;
  }
  int n = oc->ncol;
  if (s->compound == SQL_COMPOUND_UNION_ALL) {
    set_code(p, s->prior, oc);
    arm_code(p, s, oc, arm_label(s->compound));
    return;
  }
  KeyInfo *ki = result_keyinfo(p, s, n);
  SelectDest du = {SD_UNION, 0, 0, 0, n, NULL, NULL, 0};
  OutCtx uo = *oc;
  uo.dest = &du;
  uo.reg_limit = uo.reg_offset = 0;
  uo.distinct_cur = -1;
  uo.sorter_cur = -1;
  if (s->compound == SQL_COMPOUND_INTERSECT) {
    int a = emit_cursor(p), b = emit_cursor(p);
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, a, n, 0, P4_KEYINFO, ki);
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, b, n, 0, P4_KEYINFO, ki);
    du.cursor = a;
    set_code(p, s->prior, &uo);
    SelectDest db = du;
    db.cursor = b;
    uo.dest = &db;
    arm_code(p, s, &uo, arm_label(s->compound));
    scan_eph(p, a, oc, b);
    return;
  }
  int u = emit_cursor(p);
  vm_builder_add_p4(&p->b, OP_OpenEphemeral, u, n, 0, P4_KEYINFO, ki);
  du.cursor = u;
  set_code(p, s->prior, &uo);
  SelectDest d2 = du;
  if (s->compound == SQL_COMPOUND_EXCEPT) d2.kind = SD_EXCEPT;
  uo.dest = &d2;
  arm_code(p, s, &uo, arm_label(s->compound));
  scan_eph(p, u, oc, -1);
}

/* ---- compound SELECT with ORDER BY: SQLite's merge (multiSelectOrderBy) ----
 *
 * The left side (every core before the last, itself merged when it is a
 * compound) and the right side (the last core) each run as a co-routine
 * sorted by the merge keys; the merge takes the smaller row of the two each
 * time. For any operator but UNION ALL the keys cover every result column
 * (rows equal on all of them come together) and a row equal to the one
 * output before it is dropped. EXPLAIN QUERY PLAN: MERGE (op), LEFT, RIGHT. */

/* One merge key: result column col in collation coll (NULL: BINARY). */
typedef struct MergeKey {
  int col;
  const Collation *coll;
  uint8_t sort, nulls; /* SQL_SORT_*, SQL_NULLS_* */
} MergeKey;

/* 1 when a key sorts on a NULL flag before its value. */
static int merge_nulls_key(const MergeKey *k) { return sort_nulls_key(k->sort, k->nulls); }

/* The keys of compound level s (its last core): k0[0..nk0) then, for any
 * operator but UNION ALL, each result column not among them, ascending in
 * the level's collation (SQLite's multiSelectCollSeq). */
static MergeKey *merge_keys(Parse *p, SqlSelect *s, const MergeKey *k0, int nk0, int ncol,
                            int *nk) {
  MergeKey *k = compile_parse_alloc(p, sizeof *k * (size_t)(nk0 + ncol + 1));
  if (!k) return NULL;
  if (nk0) memcpy(k, k0, sizeof *k * (size_t)nk0);
  int n = nk0;
  for (int c = 0; s->compound != SQL_COMPOUND_UNION_ALL && c < ncol; c++) {
    int j = 0;
    while (j < nk0 && k0[j].col != c) j++;
    if (j < nk0) continue;
    memset(&k[n], 0, sizeof k[n]);
    k[n].col = c;
    k[n++].coll = compound_coll(p, s, c);
  }
  *nk = n;
  return k;
}

/* Core c coded alone (its prior, LIMIT and OFFSET held back) into d, with
 * the merge keys as its ORDER BY: each term its result column under an
 * explicit COLLATE of the key's collation, as SQLite rewrites them. */
static void merge_core(Parse *p, SqlSelect *c, const MergeKey *k, int nk, SelectDest *d) {
  SelInfo *info = c->info;
  SqlExprList *ob = compile_parse_alloc(p, sizeof *ob);
  SqlExprItem *a = compile_parse_alloc(p, sizeof *a * (size_t)nk);
  int *cols = compile_parse_alloc(p, sizeof(int) * (size_t)nk);
  if (!ob || !a || !cols) return;
  memset(a, 0, sizeof *a * (size_t)nk);
  for (int i = 0; i < nk; i++) {
    SqlExpr *e = compile_sel_new_expr(p, SQL_E_COLLATE);
    const SqlExpr *r =
        info && info->result && k[i].col < info->result->n ? info->result->a[k[i].col].expr : NULL;
    SqlExpr *x = r ? compile_expr_dup(p, r) : compile_sel_new_expr(p, SQL_E_NULL);
    if (!e || !x) return;
    e->z = k[i].coll ? k[i].coll->name : "BINARY";
    e->a = x;
    e->height = (uint16_t)(x->height + 1);
    a[i].expr = e;
    a[i].sort = k[i].sort;
    a[i].nulls = k[i].nulls;
    cols[i] = k[i].col;
  }
  ob->n = ob->cap = nk;
  ob->a = a;
  /* the core alone (a copy: the statement's tree keeps its arms, so an
   * expression subquery inside is numbered as SQLite's parser numbers it) */
  SqlSelect alone = *c;
  int *save_col = info->order_col;
  alone.prior = NULL;
  alone.order_by = ob;
  alone.limit = alone.offset = NULL;
  info->order_col = cols;
  compile_select_code(p, &alone, d);
  info->order_col = save_col;
}

/* The output subroutine of one side: drops a row equal to the last one
 * output (prev: its flag, then its values; 0 for UNION ALL), then OFFSET,
 * the destination and LIMIT. */
static void merge_out_sub(Parse *p, OutCtx *oc, int label, int ret, int regs, int prev,
                          KeyInfo *kdup) {
  int n = oc->ncol;
  int skip = emit_label(p);
  emit_resolve(p, label);
  if (prev) {
    int go = emit_label(p);
    emit(p, OP_IfNot, prev, go, 0);
    vm_builder_add_p4(&p->b, OP_Compare, regs, prev + 1, 0, P4_KEYINFO, kdup);
    emit(p, OP_Jump, go, skip, go);
    emit_resolve(p, go);
    emit(p, OP_Copy, regs, prev + 1, n - 1);
    emit(p, OP_Integer, 1, prev, 0);
  }
  compile_sel_emit_output(p, oc, regs);
  emit_resolve(p, skip);
  emit(p, OP_Return, ret, 0, 0);
}

/* The merge keys of a side's row in regs into kregs (a NULL flag first
 * for the keys that have one). */
static void merge_key_copy(Parse *p, const MergeKey *k, int nk, int regs, int kregs) {
  for (int i = 0; i < nk; i++) {
    if (merge_nulls_key(&k[i])) {
      int l = emit_label(p);
      emit(p, OP_Integer, 0, kregs, 0);
      emit(p, OP_NotNull, regs + k[i].col, l, 0);
      emit(p, OP_Integer, 1, kregs, 0);
      emit_resolve(p, l);
      kregs++;
    }
    emit(p, OP_SCopy, regs + k[i].col, kregs++, 0);
  }
}

static void merge_code(Parse *p, SqlSelect *s, const MergeKey *k0, int nk0, OutCtx *oc);

/* One side of a merge as a co-routine yielding into out: a compound is
 * merged in turn, a core sorted by the keys. */
static void merge_side(Parse *p, SqlSelect *c, int core, const MergeKey *k, int nk,
                       const char *label, int co, int out, int n) {
  SelectDest d = {SD_COROUTINE, 0, co, out, n, NULL, NULL, 0};
  int after = emit_label(p);
  int a = emit_addr(p);
  emit(p, OP_InitCoroutine, co, after, a + 1);
  int save = p->eqp_parent;
  p->eqp_parent = compile_parse_eqp(p, "%s", label);
  if (c->prior && !core) {
    OutCtx so;
    memset(&so, 0, sizeof so);
    so.dest = &d;
    so.ncol = n;
    so.distinct_cur = so.sorter_cur = -1;
    so.end_label = emit_label(p);
    merge_code(p, c, k, nk, &so);
    emit_resolve(p, so.end_label);
  } else {
    merge_core(p, c, k, nk, &d);
  }
  p->eqp_parent = save;
  emit(p, OP_EndCoroutine, co, 0, 0);
  emit_resolve(p, after);
}

/* Compound level s (its last core) ordered by k0 into oc's destination
 * (OFFSET and LIMIT counted there). */
static void merge_code(Parse *p, SqlSelect *s, const MergeKey *k0, int nk0, OutCtx *oc) {
  if (parse_failed(p)) return;
  int n = oc->ncol, op = s->compound, nk;
  MergeKey *k = merge_keys(p, s, k0, nk0, n, &nk);
  if (!k) return;
  int save = p->eqp_parent;
  p->eqp_parent = compile_parse_eqp(p, "MERGE (%s)", compile_sel_compound_name(op));
  int prev = 0;
  KeyInfo *kdup = NULL;
  if (op != SQL_COMPOUND_UNION_ALL) {
    prev = emit_regs(p, n + 1);
    emit(p, OP_Integer, 0, prev, 0);
    kdup = result_keyinfo(p, s, n);
  }
  int nkey = 0;
  for (int i = 0; i < nk; i++) nkey += 1 + merge_nulls_key(&k[i]);
  const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)nkey);
  uint8_t *desc = compile_parse_alloc(p, (size_t)nkey);
  if (!coll || !desc) return;
  for (int i = 0, j = 0; i < nk; i++) {
    if (merge_nulls_key(&k[i])) desc[j++] = k[i].sort == SQL_SORT_DESC;
    coll[j] = k[i].coll;
    desc[j++] = k[i].sort == SQL_SORT_DESC;
  }
  KeyInfo *kmerge = compile_parse_keyinfo(p, nkey, coll, desc);
  int co_a = emit_regs(p, 1), co_b = emit_regs(p, 1);
  int out_a = emit_regs(p, n), out_b = emit_regs(p, n);
  SqlSelect *left = s->prior;
  merge_side(p, left, 0, k, nk, "LEFT", co_a, out_a, n);
  merge_side(p, s, 1, k, nk, "RIGHT", co_b, out_b, n); /* its last core alone */
  p->eqp_parent = save;
  if (!kmerge || parse_failed(p)) return;

  OutCtx o = *oc;
  o.distinct_cur = o.sorter_cur = -1;
  o.block_nkey = 0;
  int sub_a = emit_label(p), sub_b = emit_label(p), init = emit_label(p);
  int ret_a = emit_regs(p, 1), ret_b = emit_regs(p, 1);
  emit(p, OP_Goto, 0, init, 0);
  merge_out_sub(p, &o, sub_a, ret_a, out_a, prev, kdup);
  merge_out_sub(p, &o, sub_b, ret_b, out_b, prev, kdup);
  int end = emit_label(p), cmp = emit_label(p);
  /* A at its end: B's rows to the end (UNION, UNION ALL) */
  int eof_a = end, eof_a_nob = end, eof_b = end;
  if (op == SQL_COMPOUND_UNION_ALL || op == SQL_COMPOUND_UNION) {
    eof_a = emit_label(p);
    eof_a_nob = emit_label(p);
    emit_resolve(p, eof_a);
    emit(p, OP_Gosub, ret_b, sub_b, 0);
    emit_resolve(p, eof_a_nob);
    emit(p, OP_Yield, co_b, end, 0);
    emit(p, OP_Goto, 0, eof_a, 0);
  }
  /* B at its end: A's rows to the end (all but INTERSECT) */
  if (op != SQL_COMPOUND_INTERSECT) {
    eof_b = emit_label(p);
    emit_resolve(p, eof_b);
    emit(p, OP_Gosub, ret_a, sub_a, 0);
    emit(p, OP_Yield, co_a, end, 0);
    emit(p, OP_Goto, 0, eof_b, 0);
  }
  /* A's row first: output it (not for INTERSECT), next A; equal rows:
   * output A for UNION ALL and INTERSECT, else next A (for UNION the equal
   * row of B goes out once A has moved past it) */
  int out_a_l = emit_label(p), next_a = emit_label(p);
  emit_resolve(p, out_a_l);
  emit(p, OP_Gosub, ret_a, sub_a, 0);
  emit_resolve(p, next_a);
  emit(p, OP_Yield, co_a, eof_a, 0);
  emit(p, OP_Goto, 0, cmp, 0);
  int a_lt_b = op == SQL_COMPOUND_INTERSECT ? next_a : out_a_l;
  int a_eq_b = op == SQL_COMPOUND_EXCEPT || op == SQL_COMPOUND_UNION ? next_a : out_a_l;
  /* B's row first: output it (UNION, UNION ALL), next B */
  int a_gt_b = emit_label(p);
  emit_resolve(p, a_gt_b);
  if (op == SQL_COMPOUND_UNION_ALL || op == SQL_COMPOUND_UNION) emit(p, OP_Gosub, ret_b, sub_b, 0);
  emit(p, OP_Yield, co_b, eof_b, 0);
  emit(p, OP_Goto, 0, cmp, 0);
  emit_resolve(p, init);
  emit(p, OP_Yield, co_a, eof_a_nob, 0);
  emit(p, OP_Yield, co_b, eof_b, 0);
  emit_resolve(p, cmp);
  int key_a = emit_regs(p, nkey), key_b = emit_regs(p, nkey);
  merge_key_copy(p, k, nk, out_a, key_a);
  merge_key_copy(p, k, nk, out_b, key_b);
  vm_builder_add_p4(&p->b, OP_Compare, key_a, key_b, 0, P4_KEYINFO, kmerge);
  emit(p, OP_Jump, a_lt_b, a_eq_b, a_gt_b);
  emit_resolve(p, end);
}

/* SQLite's convertCompoundSelectToSubquery: a compound with an operator
 * other than UNION ALL whose ORDER BY has a term with an explicit COLLATE
 * is not merged but read as a subquery, SELECT * FROM (compound) ORDER BY:
 * its rows are sorted once they are all there. */
static int compound_as_subquery(const SqlSelect *s) {
  const SqlSelect *c = s;
  while (c && (!c->prior || c->compound == SQL_COMPOUND_UNION_ALL)) c = c->prior;
  if (!c) return 0;
  for (int i = 0; i < s->order_by->n; i++) {
    const SqlExpr *e = s->order_by->a[i].expr;
    if (e && e->op == SQL_E_COLLATE && e->sub != 1) return 1;
  }
  return 0;
}

/* The ORDER BY of compound s as merge keys, then the merge. */
static void merge_compound(Parse *p, SqlSelect *s, OutCtx *oc) {
  SqlExprList *ob = s->order_by;
  MergeKey *k = compile_parse_alloc(p, sizeof *k * (size_t)(ob->n + 1));
  if (!k) return;
  for (int i = 0; i < ob->n; i++) {
    const SqlExprItem *t = &ob->a[i];
    k[i].col = s->info->order_col[i];
    k[i].coll = t->expr->op == SQL_E_COLLATE ? compile_sel_coll_of(p, t->expr)
                                             : compound_coll(p, s, k[i].col);
    k[i].sort = t->sort;
    k[i].nulls = t->nulls;
  }
  merge_code(p, s, k, ob->n, oc);
}

/* SQLite codes SELECT DISTINCT as GROUP BY when its ORDER BY is its result
 * list term for term (ascending, default NULLs order, no COLLATE): one
 * sorter then both removes the duplicates and orders the rows. Returns the
 * GROUP BY list to code the core with, or NULL. */
static SqlExprList *distinct_as_group(Parse *p, SqlSelect *s, SelInfo *info,
                                      const SelectDest *dest) {
  SqlExprList *ob = s->order_by, *res = info->result;
  if (s->prior || s->distinct != 1 || info->is_agg || !ob || !res || !info->order_col ||
      ob->n != res->n || dest->kind == SD_EXISTS || compile_window_in_core(s) ||
      distinct_redundant(p, s, info))
    return NULL;
  for (int i = 0; i < ob->n; i++) {
    const SqlExprItem *t = &ob->a[i];
    if (t->sort == SQL_SORT_DESC || t->nulls != SQL_NULLS_NONE) return NULL;
    int same = compile_expr_same(t->expr, res->a[i].expr);
    if (!same && (info->order_col[i] != i || t->expr->op == SQL_E_COLLATE)) return NULL;
    if (compile_sel_coll_of(p, t->expr) != compile_sel_coll_of(p, res->a[i].expr)) return NULL;
  }
  SqlExprList *gb = compile_parse_alloc(p, sizeof *gb);
  SqlExprItem *a = compile_parse_alloc(p, sizeof *a * (size_t)res->n);
  if (!gb || !a) return NULL;
  memset(a, 0, sizeof *a * (size_t)res->n);
  for (int i = 0; i < res->n; i++)
    if (!(a[i].expr = compile_expr_dup(p, res->a[i].expr))) return NULL;
  gb->n = gb->cap = res->n;
  gb->a = a;
  return gb;
}

int compile_select_code(Parse *p, SqlSelect *s, SelectDest *dest) {
  if (parse_failed(p)) return 1;
  if (!s->info || s->info->state != 2) {
    if (compile_select_resolve(p, s, NULL)) return 1;
  }
  int compound = !s->prior ? 0 : s->order_by && !compound_as_subquery(s) ? 2 : 1;
  for (SqlSelect *c = s; c; c = c->prior)
    if (compile_flatten_core(p, c, compound)) return 1;
  SelInfo *info = s->info;
  int n = compile_select_ncol(s);
  OutCtx oc;
  memset(&oc, 0, sizeof oc);
  oc.dest = dest;
  oc.ncol = n;
  oc.distinct_cur = -1;
  oc.sorter_cur = -1;
  oc.end_label = emit_label(p);
  if (dest->kind == SD_MEM) {
    int nr = dest->nreg ? dest->nreg : n;
    emit(p, OP_Null, 0, dest->reg, dest->reg + nr - 1);
  } else if (dest->kind == SD_EXISTS) {
    emit(p, OP_Integer, 0, dest->reg, 0);
  }
  if (s->limit) {
    oc.reg_limit = emit_regs(p, 1);
    compile_expr_code(p, s->limit, oc.reg_limit);
    emit(p, OP_MustBeInt, oc.reg_limit, 0, 0);
    emit(p, OP_IfNot, oc.reg_limit, oc.end_label, 1);
    if (s->offset) {
      oc.reg_offset = emit_regs(p, 1);
      int l = emit_label(p);
      compile_expr_code(p, s->offset, oc.reg_offset);
      emit(p, OP_MustBeInt, oc.reg_offset, 0, 0);
      emit(p, OP_IfPos, oc.reg_offset, l, 0);
      emit(p, OP_Integer, 0, oc.reg_offset, 0);
      emit_resolve(p, l);
    }
  }
  if (s->limit && !s->prior && s->distinct != 1 && !info->is_agg && info->src &&
      info->src->n == 1 && info->src->a[0].tab && info->src->a[0].tab->vtab)
    compile_vtab_limit_offer(p, info->src, s, oc.reg_limit, oc.reg_offset); /* compile_vtab.c */
  SqlExprList *as_group = distinct_as_group(p, s, info, dest);
  if (as_group) { /* put back after the code: the SELECT may be coded again */
    s->group_by = as_group;
    s->distinct = 0;
    info->is_agg = 1;
    info->distinct_group = 1;
  }
  /* an ORDER BY makes no difference to EXISTS (SQLite drops it), nor to
   * groups that come out in that order anyway */
  int ordered = s->order_by && info->order_col && dest->kind != SD_EXISTS;
  int as_sub = ordered && s->prior && compound_as_subquery(s);
  if (ordered &&
      (as_sub || (!s->prior && !compile_window_sorts_output(p, s) && !as_group &&
                  !compile_sel_group_is_order(p, s, info) && !single_row_agg(s, info)))) {
    int a0 = emit_addr(p);
    sorter_setup(p, &oc, s, s->order_by, info->order_col);
    if (!s->prior && single_row_core(s, info) && !parse_failed(p) && !p->b.rc) {
      /* one row: no sort (its collations are still looked up, as SQLite's
       * KeyInfo is made before the planner drops the sorter) */
      for (int a = a0; a < emit_addr(p); a++) p->b.prog->ops[a].op = OP_Noop;
      oc.sorter_cur = -1;
    }
  }
  if (!s->prior) {
    oc.order_owner = s;
    core_code(p, s, &oc);
  } else if (ordered && !as_sub) {
    merge_compound(p, s, &oc);
  } else {
    int save = p->eqp_parent;
    /* (the subquery's number is SQLite's select id of the compound when
     * nothing follows it in the statement: its cores' count) */
    int id = as_sub ? compile_window_statement_cores(p) : 0;
    if (as_sub) p->eqp_parent = compile_parse_eqp(p, "CO-ROUTINE (subquery-%d)", id);
    p->eqp_parent = compile_parse_eqp(p, "COMPOUND QUERY");
    /* as a subquery: every row of the compound into the sorter */
    OutCtx so = oc;
    if (as_sub) so.reg_limit = so.reg_offset = 0;
    set_code(p, s, &so);
    p->eqp_parent = save;
    if (as_sub) compile_parse_eqp(p, "SCAN (subquery-%d)", id);
  }
  if (oc.sorter_cur >= 0) {
    compile_parse_eqp(p, oc.block_nkey > 0 ? "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"
                                           : "USE TEMP B-TREE FOR ORDER BY");
    sorter_output(p, &oc);
  }
  emit_resolve(p, oc.end_label);
  if (as_group) {
    s->group_by = NULL;
    s->distinct = 1;
    info->is_agg = 0;
    info->distinct_group = 0;
  }
  return parse_failed(p);
}

/* A recursive CTE: setup rows into a queue; then, until the queue is
 * empty, take its first row out into the current-row table and the result,
 * and run the recursive part (which reads the current row) into the queue.
 * The result is the item's table (materialized once), or, for an item run
 * as a co-routine, each row yielded in it->co_out..: the consumer's LIMIT or
 * early exit stops the recursion, and only the pending rows are kept. */
static void rec_cte_code(Parse *p, struct RecCte *r, SrcItem *it) {
  int n = r->ncol;
  int co = it->co_reg;
  int after = emit_label(p), done = emit_label(p), top = emit_label(p);
  if (co) {
    int a = emit_addr(p);
    emit(p, OP_InitCoroutine, co, after, a + 1);
  } else {
    /* a correlated CTE is computed again for each outer row */
    if (!compile_sel_has_correl(r->setup) && !compile_sel_has_correl(r->rec))
      emit(p, OP_Once, 0, after, 0);
    emit(p, OP_OpenEphemeral, r->cursor, n, 0);
  }
  int q = emit_cursor(p);
  int nk = r->order_by ? r->order_by->n : 0;
  if (nk) {
    /* ORDER BY: the queue hands out its smallest row first (SQLite's
     * priority queue); equal keys leave in the order they came */
    const Collation **coll = compile_parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1 + n));
    uint8_t *desc = compile_parse_alloc(p, (size_t)(nk + 1 + n));
    if (!coll || !desc) return;
    for (int i = 0; i < nk; i++) {
      SqlExprItem *t = &r->order_by->a[i];
      coll[i] = t->expr->op == SQL_E_COLLATE ? compile_sel_coll_of(p, t->expr)
                                             : compound_coll(p, r->setup, r->order_col[i]);
      desc[i] = t->sort == SQL_SORT_DESC;
    }
    KeyInfo *ki = compile_parse_keyinfo(p, nk + 1 + n, coll, desc);
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, q, nk + 1 + n, 0, P4_KEYINFO, ki);
  } else {
    emit(p, OP_OpenEphemeral, q, n, 0);
  }
  int dcur = -1;
  if (r->op == SQL_COMPOUND_UNION) {
    dcur = emit_cursor(p);
    KeyInfo *ki = result_keyinfo(p, r->setup, n);
    vm_builder_add_p4(&p->b, OP_OpenEphemeral, dcur, n, 0, P4_KEYINFO, ki);
  }
  int rl = 0, ro = 0;
  if (r->limit) {
    rl = emit_regs(p, 1);
    compile_expr_code(p, r->limit, rl);
    emit(p, OP_MustBeInt, rl, 0, 0);
    emit(p, OP_IfNot, rl, done, 1);
    if (r->offset) {
      ro = emit_regs(p, 1);
      int l = emit_label(p);
      compile_expr_code(p, r->offset, ro);
      emit(p, OP_MustBeInt, ro, 0, 0);
      emit(p, OP_IfPos, ro, l, 0);
      emit(p, OP_Integer, 0, ro, 0);
      emit_resolve(p, l);
    }
  }
  SelectDest dq = {SD_CTEQ, q, 0, dcur + 1, n, NULL, r->order_col, nk};
  int save = p->eqp_parent;
  int top_eqp = compile_parse_eqp(p, "%s %s", co ? "CO-ROUTINE" : "MATERIALIZE",
                                  it->name ? it->name : it->tab->name);
  p->eqp_parent = top_eqp;
  p->eqp_parent = compile_parse_eqp(p, "SETUP");
  compile_select_code(p, r->setup, &dq);
  p->eqp_parent = top_eqp;
  int regs = emit_regs(p, n);
  int rec = emit_regs(p, 3);
  emit_resolve(p, top);
  emit(p, OP_Rewind, q, done, 0);
  for (int i = 0; i < n; i++) emit(p, OP_Column, q, (nk ? nk + 1 : 0) + i, regs + i);
  emit(p, OP_MakeRecord, regs, n, rec);
  emit(p, OP_Delete, q, 0, 0);
  emit(p, OP_OpenEphemeral, r->cur_cursor, n, 0);
  emit(p, OP_NewRowid, r->cur_cursor, rec + 1, 0);
  emit(p, OP_Insert, r->cur_cursor, rec, rec + 1);
  int skipo = emit_label(p);
  if (ro) emit(p, OP_IfPos, ro, skipo, 1);
  if (co) {
    emit(p, OP_Copy, regs, it->co_out, n - 1);
    emit(p, OP_Yield, co, 0, 0);
  } else {
    emit(p, OP_NewRowid, r->cursor, rec + 2, 0);
    emit(p, OP_Insert, r->cursor, rec, rec + 2);
  }
  if (rl) emit(p, OP_DecrJumpZero, rl, done, 0);
  emit_resolve(p, skipo);
  p->eqp_parent = compile_parse_eqp(p, "RECURSIVE STEP");
  compile_select_code(p, r->rec, &dq);
  p->eqp_parent = save;
  emit(p, OP_Goto, 0, top, 0);
  emit_resolve(p, done);
  if (co) emit(p, OP_EndCoroutine, co, 0, 0);
  emit_resolve(p, after);
}

static struct RecCte *rec_find(Parse *p, int cursor) {
  SelectState *st = compile_select_state(p);
  for (struct RecCte *r = st ? st->recs : NULL; r; r = r->next)
    if (r->cursor == cursor) return r;
  return NULL;
}

int compile_src_can_coroutine(Parse *p, const SrcItem *it) {
  if (it->kind != SRC_SUBQUERY || !it->sub || parse_failed(p)) return 0;
  struct RecCte *r = rec_find(p, it->cursor);
  if (compile_sel_cte_shared(it, r)) return 0; /* one table for every use */
  if (r) return 1;
  return !it->cte_materialized; /* WITH x AS MATERIALIZED: SQLite materializes it */
}

void compile_src_code_subquery(Parse *p, SrcItem *it) {
  if (parse_failed(p) || !it || it->kind != SRC_SUBQUERY || !it->sub) return;
  struct RecCte *rc = rec_find(p, it->cursor);
  if (!it->co_reg && compile_sel_cte_shared(it, rc)) {
    struct CteUse *u = it->cte_use;
    if (!u->coded) { /* the subroutine, here, jumped over */
      u->coded = 1;
      u->shared = emit_cursor(p);
      u->ret = emit_regs(p, 1);
      u->label = emit_label(p);
      int over = emit_label(p), done = emit_label(p);
      emit(p, OP_Goto, 0, over, 0);
      emit_resolve(p, u->label);
      emit(p, OP_Once, 0, done, 0);
      if (rc) { /* (EXPLAIN QUERY PLAN names the CTE, not this use's alias) */
        int cur = rc->cursor;
        const char *nm = it->name;
        rc->cursor = u->shared;
        it->name = u->cte->name;
        rec_cte_code(p, rc, it);
        rc->cursor = cur;
        it->name = nm;
      } else {
        int n = compile_select_ncol(it->sub);
        emit(p, OP_OpenEphemeral, u->shared, n, 0);
        SelectDest d = {SD_TABLE, u->shared, 0, 0, n, NULL, NULL, 0};
        int save = p->eqp_parent;
        p->eqp_parent = compile_parse_eqp(p, "MATERIALIZE %s", u->cte->name);
        compile_select_code(p, it->sub, &d);
        p->eqp_parent = save;
      }
      emit_resolve(p, done);
      emit(p, OP_Return, u->ret, 0, 0);
      emit_resolve(p, over);
    }
    emit(p, OP_Gosub, u->ret, u->label, 0);
    emit(p, OP_OpenDup, it->cursor, u->shared, 0);
    return;
  }
  if (rc) {
    rec_cte_code(p, rc, it);
    return;
  }
  if (it->co_reg) { /* a co-routine: started again here, yields each row */
    int after = emit_label(p), a = emit_addr(p);
    int n = compile_select_ncol(it->sub);
    emit(p, OP_InitCoroutine, it->co_reg, after, a + 1);
    SelectDest d = {SD_COROUTINE, 0, it->co_reg, it->co_out, n, NULL, NULL, 0};
    int save = p->eqp_parent;
    p->eqp_parent = compile_parse_eqp(p, "CO-ROUTINE %s", it->name ? it->name : it->tab->name);
    compile_select_code(p, it->sub, &d);
    p->eqp_parent = save;
    emit(p, OP_EndCoroutine, it->co_reg, 0, 0);
    emit_resolve(p, after);
    return;
  }
  int correlated = compile_sel_has_correl(it->sub);
  int skip = emit_label(p);
  if (!correlated) emit(p, OP_Once, 0, skip, 0);
  int n = compile_select_ncol(it->sub);
  emit(p, OP_OpenEphemeral, it->cursor, n, 0);
  SelectDest d = {SD_TABLE, it->cursor, 0, 0, n, NULL, NULL, 0};
  int save = p->eqp_parent;
  /* SQLite names the table it fills: a view's or a CTE's name, else the alias */
  const char *mname = it->ast && it->ast->name && !it->ast->select ? it->ast->name
                      : it->name                                   ? it->name
                                                                   : it->tab->name;
  p->eqp_parent = compile_parse_eqp(p, "MATERIALIZE %s", mname);
  compile_select_code(p, it->sub, &d);
  p->eqp_parent = save;
  emit_resolve(p, skip);
}
