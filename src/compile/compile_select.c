/*
 * compile_select.c -- SELECT: FROM lists (tables, views, CTEs, subqueries,
 * pragma_table_info & co., joins), '*' expansion, resolution of a whole
 * SELECT, result column names, and the code for cores, aggregates, DISTINCT,
 * ORDER BY, LIMIT/OFFSET, VALUES, compounds and WITH RECURSIVE, into any
 * SelectDest; EXPLAIN QUERY PLAN rows for all of these.
 *
 * Owns: SrcLists it builds and the SelInfo of every SELECT (select_int.h),
 * all in the Parse arena.
 *
 * Invariants:
 *  1. Rows leave a core through emit_output only: DISTINCT check, then either
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
 *     ORDER BY of a compound sorts the combined rows by result columns.
 */
#include <stdio.h>
#include <string.h>

#include "select_int.h"

/* ---- small helpers ---- */

static SqlExpr *new_expr(Parse *p, int op) {
  SqlExpr *e = parse_alloc(p, sizeof *e);
  if (e) {
    e->op = (uint8_t)op;
    e->height = 1;
  }
  return e;
}

static SqlExprList *list_add(Parse *p, SqlExprList *l, SqlExpr *e) {
  if (!l) {
    l = parse_alloc(p, sizeof *l);
    if (!l) return NULL;
  }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    SqlExprItem *a = parse_alloc(p, sizeof(SqlExprItem) * (size_t)cap);
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

char src_item_col_aff(const SrcItem *it, int col) {
  if (col < 0) return AFF_INTEGER;
  if (it->kind == SRC_SUBQUERY && it->sub) {
    const SqlSelect *l = it->sub;
    while (l->prior) l = l->prior;
    if (l->info && l->info->result && col < l->info->result->n)
      return expr_affinity(l->info->result->a[col].expr);
  }
  char a = it->tab->cols[col].affinity;
  return a ? a : AFF_BLOB;
}

static void colref(SqlExpr *e, SrcItem *it, int col) {
  e->op = SQL_E_COLREF;
  e->cursor = it->cursor;
  e->column = col;
  e->tab = it->tab;
  e->aff = src_item_col_aff(it, col);
  if (col >= 0) it->colused |= col >= 63 ? (uint64_t)1 << 63 : (uint64_t)1 << col;
}

/* ---- FROM lists ---- */

SrcItem *src_find_cursor(SrcList *s, int cur) {
  for (int i = 0; s && i < s->n; i++)
    if (s->a[i].cursor == cur) return &s->a[i];
  return NULL;
}

SrcList *src_single(Parse *p, Table *tab, const char *alias) {
  SrcList *s = parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->a = parse_alloc(p, sizeof(SrcItem));
  if (!s->a) return NULL;
  s->n = 1;
  SrcItem *it = &s->a[0];
  it->tab = tab;
  it->name = alias ? alias : tab->name;
  it->kind = SRC_TABLE;
  it->cursor = emit_cursor(p);
  it->idb = parse_table_db(p, tab);
  parse_need_db(p, it->idb, 0);
  return s;
}

static int count_items(const SqlSrcList *from) {
  int n = 0;
  for (int i = 0; from && i < from->n; i++)
    n += from->a[i].nested && !from->a[i].select ? count_items(from->a[i].nested) : 1;
  return n;
}

static SqlExpr *and_expr(Parse *p, SqlExpr *a, SqlExpr *b) {
  if (!a) return b;
  if (!b) return a;
  SqlExpr *e = new_expr(p, SQL_E_BINARY);
  if (!e) return NULL;
  e->sub = TK_AND;
  e->a = a;
  e->b = b;
  return e;
}

/* A view's body, parsed again into the Parse arena. */
static SqlSelect *view_select(Parse *p, const View *v, const char **text) {
  SqlStmt *st = NULL;
  char *err = NULL;
  int rc = sql_parse(&p->arena, v->sql, -1, &st, NULL, &err);
  if (rc || !st || st->kind != SQL_STMT_CREATE_VIEW) {
    if (err) {
      parse_error(p, "%s", err);
      shale_free(err);
    } else {
      parse_error(p, "malformed view: %s", v->name);
    }
    return NULL;
  }
  *text = v->sql;
  return st->u.create_view.select;
}

static int add_item(Parse *p, SrcList *s, const SqlSrcItem *a, NameCtx *outer, int jointype,
                    int depth);

static SqlSelect *view_select(Parse *p, const View *v, const char **text);

/* pragma_user_version, pragma_schema_version, pragma_application_id,
 * pragma_freelist_count, pragma_page_count in FROM: one row, one column read
 * from the file header (the page count from the btree) when the item is
 * materialized. -1 if the name is none of them. */
static int cookie_item(Parse *p, SrcItem *it, const SqlSrcItem *a) {
  static const struct {
    const char *name;
    int meta;
  } tab[] = {{"user_version", 6}, {"schema_version", 1}, {"application_id", 8},
             {"freelist_count", 0}, {"page_count", -1}};
  if (util_strnicmp(a->name, "pragma_", 7) != 0) return -1;
  int k = -1;
  for (int i = 0; i < 5; i++)
    if (util_stricmp(a->name + 7, tab[i].name) == 0) k = i;
  if (k < 0) return -1;
  SelectState *st = select_state(p);
  SqlSelect *sel = parse_alloc(p, sizeof *sel);
  struct CookieItem *ci = parse_alloc(p, sizeof *ci);
  if (!st || !sel || !ci) return 1;
  SqlExpr *one = new_expr(p, SQL_E_INTEGER);
  if (!one) return 1;
  one->z = "0";
  if (!(sel->cols = list_add(p, NULL, one))) return 1;
  if (select_resolve(p, sel, NULL)) return 1;
  const char *nm = tab[k].name;
  SqlIdList ids = {1, 1, &nm};
  Table *t = select_result_table(p, sel, a->name, &ids);
  if (!t) return 1;
  it->kind = SRC_SUBQUERY;
  it->sub = sel;
  it->tab = t;
  it->name = a->alias ? a->alias : a->name;
  ci->cursor = it->cursor;
  ci->meta = tab[k].meta;
  it->vtab_idx = 1;
  ci->next = st->cookies;
  st->cookies = ci;
  parse_need_read(p);
  return 0;
}

static SqlExpr *lit(Parse *p, int op, const char *z) {
  SqlExpr *e = new_expr(p, op);
  if (e && z) e->z = parse_strdup(p, z);
  return e;
}

static SqlExpr *lit_int(Parse *p, long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%ld", v);
  return lit(p, SQL_E_INTEGER, buf);
}

/* ---- table-valued functions: json_each(...) and json_tree(...) ----
 *
 * The item is an ephemeral table (SRC_SUBQUERY whose sub is a placeholder
 * SELECT of NULLs giving the column names, the argument columns HIDDEN)
 * that OP_TableFunc fills from the arguments. The arguments are resolved
 * with the FROM list in scope (resolve_core -> tvf_resolve); when they read
 * an item of the same FROM the item gets `refill` and its table is filled
 * again each time its loop starts (src_code_refill from where_begin). */
static int tvf_item(Parse *p, SrcItem *it, const SqlSrcItem *a) {
  const FuncDef *f = func_table_find(a->name);
  if (!f) return -1;
  const FuncTable *t = f->table;
  int nargs = a->args ? a->args->n : 0;
  if (nargs > t->nhidden) {
    parse_error(p, "too many arguments on %s() - max %d", a->name, t->nhidden);
    return 1;
  }
  SelectState *st = select_state(p);
  SqlSelect *sel = parse_alloc(p, sizeof *sel);
  struct TvfItem *ti = parse_alloc(p, sizeof *ti);
  if (!st || !sel || !ti) return 1;
  for (int k = 0; k < t->ncol; k++)
    if (!(sel->cols = list_add(p, sel->cols, lit(p, SQL_E_NULL, NULL)))) return 1;
  sel->where = lit_int(p, 0);
  if (select_resolve(p, sel, NULL)) return 1;
  SqlIdList ids = {t->ncol, t->ncol, (const char **)t->cols};
  Table *tab = select_result_table(p, sel, a->name, &ids);
  if (!tab) return 1;
  for (int c = 0; c < t->ncol; c++) tab->cols[c].name = parse_strdup(p, t->cols[c]);
  for (int c = t->ncol - t->nhidden; c < t->ncol; c++) tab->cols[c].hidden = COL_HIDDEN;
  it->kind = SRC_SUBQUERY;
  it->sub = sel;
  it->tab = tab;
  it->name = a->alias ? a->alias : a->name;
  ti->cursor = it->cursor;
  ti->def = f;
  ti->args = a->args;
  ti->next = st->tvfs;
  st->tvfs = ti;
  return parse_failed(p);
}

/* pragma_NAME[(args)] in FROM (SQLite's eponymous pragma virtual tables):
 * an ephemeral table of the pragma's result columns and its hidden argument
 * columns, filled at run time by OP_PragmaRows (the API runs the pragma).
 * The arguments are the written ones, or an "arg = x" / "schema = x" term
 * of the WHERE clause or the item's ON clause (pragma_pushdown). -1 if the
 * name is not such a pragma. */
static int pragma_item(Parse *p, SrcItem *it, const SqlSrcItem *a) {
  if (util_strnicmp(a->name, "pragma_", 7) != 0) return -1;
  const SqlPragmaTab *pt = sql_pragma_tab(a->name + 7);
  if (!pt) return -1;
  int nh = ((pt->hidden & SQL_PRAGMA_ARG) != 0) + ((pt->hidden & SQL_PRAGMA_SCHEMA) != 0);
  int nargs = a->args ? a->args->n : 0;
  if (nargs > nh) {
    parse_error(p, "too many arguments on %s() - max %d", a->name, nh);
    return 1;
  }
  SelectState *st = select_state(p);
  SqlSelect *sel = parse_alloc(p, sizeof *sel);
  struct TvfItem *ti = parse_alloc(p, sizeof *ti);
  if (!st || !sel || !ti) return 1;
  int ncol = pt->ncol + nh;
  for (int k = 0; k < ncol; k++)
    if (!(sel->cols = list_add(p, sel->cols, lit(p, SQL_E_NULL, NULL)))) return 1;
  sel->where = lit_int(p, 0);
  if (select_resolve(p, sel, NULL)) return 1;
  const char *names[16];
  for (int k = 0; k < pt->ncol; k++) names[k] = pt->cols ? pt->cols[k] : pt->name;
  int k = pt->ncol;
  if (pt->hidden & SQL_PRAGMA_ARG) names[k++] = "arg";
  if (pt->hidden & SQL_PRAGMA_SCHEMA) names[k++] = "schema";
  SqlIdList ids = {ncol, ncol, names};
  Table *tab = select_result_table(p, sel, a->name, &ids);
  if (!tab) return 1;
  for (int c = 0; c < ncol; c++) tab->cols[c].name = parse_strdup(p, names[c]);
  for (int c = pt->ncol; c < ncol; c++) tab->cols[c].hidden = COL_HIDDEN;
  /* two argument slots (arg, schema): the written arguments fill the
   * pragma's hidden columns in order */
  SqlExprList *args = NULL;
  for (int j = 0; j < 2; j++)
    if (!(args = list_add(p, args, lit(p, SQL_E_NULL, NULL)))) return 1;
  int slot = (pt->hidden & SQL_PRAGMA_ARG) ? 0 : 1;
  for (int j = 0; j < nargs; j++, slot++) {
    args->a[slot].expr = a->args->a[j].expr;
    ti->given[slot] = 1;
  }
  it->kind = SRC_SUBQUERY;
  it->sub = sel;
  it->tab = tab;
  it->name = a->alias ? a->alias : a->name;
  ti->cursor = it->cursor;
  ti->pragma = pt;
  ti->args = args;
  it->vtab_idx = 1;
  ti->next = st->tvfs;
  st->tvfs = ti;
  parse_need_read(p);
  return parse_failed(p);
}

/* Slot (0 arg, 1 schema) of pragma item ti that column reference e names
 * (unqualified, or qualified by the item's name), else -1. */
static int pragma_hidden_ref(const struct TvfItem *ti, const SrcItem *it, const SqlExpr *e) {
  if (!e || (e->op != SQL_E_ID && e->op != SQL_E_COLUMN) || !e->z) return -1;
  if (e->op == SQL_E_ID && (e->flags & SQL_EF_QUOTED)) return -1;
  if (e->op == SQL_E_COLUMN && (!e->table || !it->name || util_stricmp(e->table, it->name)))
    return -1;
  if ((ti->pragma->hidden & SQL_PRAGMA_ARG) && util_stricmp(e->z, "arg") == 0) return 0;
  if ((ti->pragma->hidden & SQL_PRAGMA_SCHEMA) && util_stricmp(e->z, "schema") == 0) return 1;
  return -1;
}

/* Take the arguments not written of pragma item ti from the AND terms of e:
 * "arg = x", "x = arg", "arg IN (x)". As SQLite's pragma virtual table
 * consumes such a term, it is not tested again: it becomes TRUE. */
static int pragma_pushdown(Parse *p, struct TvfItem *ti, const SrcItem *it, SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_BINARY && e->sub == TK_AND)
    return pragma_pushdown(p, ti, it, e->a) || pragma_pushdown(p, ti, it, e->b);
  const SqlExpr *val = NULL;
  int slot = -1;
  if (e->op == SQL_E_BINARY && e->sub == TK_EQ) {
    if ((slot = pragma_hidden_ref(ti, it, e->a)) >= 0)
      val = e->b;
    else if ((slot = pragma_hidden_ref(ti, it, e->b)) >= 0)
      val = e->a;
  } else if (e->op == SQL_E_IN && !(e->flags & SQL_EF_NOT) && !e->select && e->list &&
             e->list->n == 1 && (slot = pragma_hidden_ref(ti, it, e->a)) >= 0) {
    val = e->list->a[0].expr;
  }
  if (slot < 0 || !val || ti->given[slot] || pragma_hidden_ref(ti, it, val) >= 0) return 0;
  SqlExpr *copy = expr_dup(p, val);
  if (!copy) return 1;
  ti->args->a[slot].expr = copy;
  ti->given[slot] = 1;
  memset(e, 0, sizeof *e);
  e->op = SQL_E_INTEGER;
  e->z = "1";
  e->height = 1;
  return 0;
}

static int local_ref_cb(SqlWalker *w, SqlExpr *e) {
  if (e->op == SQL_E_COLREF && e->depth == 0) {
    *(int *)w->arg = 1;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

/* Resolve the arguments of the table-valued functions of src. */
static int tvf_resolve(Parse *p, NameCtx *nc, SrcList *src) {
  SelectState *st = select_state(p);
  for (struct TvfItem *ti = st ? st->tvfs : NULL; ti; ti = ti->next) {
    SrcItem *it = src_find_cursor(src, ti->cursor);
    if (!it || ti->resolved) continue;
    ti->resolved = 1;
    int local = 0;
    SqlWalker w = {local_ref_cb, NULL, &local};
    for (int k = 0; ti->args && k < ti->args->n; k++) {
      if (resolve_expr(p, nc, ti->args->a[k].expr)) return 1;
      sql_walk_expr(&w, ti->args->a[k].expr);
    }
    it->refill = local != 0;
    it->tvf_args = ti->args;
  }
  return 0;
}

static struct TvfItem *tvf_find(Parse *p, int cursor) {
  SelectState *st = select_state(p);
  for (struct TvfItem *ti = st ? st->tvfs : NULL; ti; ti = ti->next)
    if (ti->cursor == cursor) return ti;
  return NULL;
}

static void tvf_fill(Parse *p, struct TvfItem *ti, SrcItem *it) {
  int n = ti->args ? ti->args->n : 0;
  int base = emit_regs(p, n ? n : 1);
  for (int k = 0; k < n; k++) expr_code(p, ti->args->a[k].expr, base + k);
  if (ti->pragma) {
    /* the stored row: the result columns, then r[base] (arg) and r[base+1]
     * (schema); a pragma with only a schema column reads "arg"'s slot
     * there, NULL, as SQLite 3.40.1 shows it */
    int a = vm_builder_add_text(&p->b, OP_PragmaRows, it->cursor, base, n, ti->pragma->name, -1);
    if (a >= 0) vm_builder_set_p5(&p->b, a, ti->pragma->ncol);
    return;
  }
  vm_builder_add_p4(&p->b, OP_TableFunc, it->cursor, base, n, P4_FUNC, ti->def);
}

void src_code_refill(Parse *p, SrcItem *it) {
  struct TvfItem *ti = parse_failed(p) ? NULL : tvf_find(p, it->cursor);
  if (ti) tvf_fill(p, ti, it);
}

static const char *compound_name(int op);
static int resolve_compound_order(Parse *p, SqlSelect *head);
static int has_correl(const SqlSelect *s);

/* 1 if a core of s names `name` in its FROM list (a recursive CTE). */
static int from_names(const SqlSrcList *from, const char *name) {
  for (int i = 0; from && i < from->n; i++) {
    const SqlSrcItem *a = &from->a[i];
    if (a->nested && from_names(a->nested, name)) return 1;
    if (!a->select && !a->schema && a->name && util_stricmp(a->name, name) == 0) return 1;
  }
  return 0;
}

static int select_names(const SqlSelect *s, const char *name) {
  for (; s; s = s->prior)
    if (from_names(s->from, name)) return 1;
  return 0;
}

/* A FROM item naming CTE i of scope sc: a fresh copy of its body (parsed
 * again, like a view) resolved with the CTEs before it in view. */
static int cte_width_ok(Parse *p, const SqlCte *cte, SqlSelect *s) {
  if (cte->columns && cte->columns->n != select_ncol(s)) {
    parse_error(p, "table %s has %d values for %d columns", cte->name, select_ncol(s),
                cte->columns->n);
    return 0;
  }
  return 1;
}

static int cte_item(Parse *p, SrcItem *it, const SqlSrcItem *a, struct CteScope *sc, int i,
                    NameCtx *outer) {
  SelectState *st = select_state(p);
  const SqlCte *cte = &sc->with->a[i];
  const char *base = sc->text ? sc->text : p->sql;
  size_t n = (size_t)cte->span.len;
  char *txt = util_arena_alloc(&p->arena, n + 32);
  if (!txt) {
    parse_nomem(p);
    return 1;
  }
  memcpy(txt, "WITH ", 5);
  memcpy(txt + 5, base + cte->span.start, n);
  memcpy(txt + 5 + n, " SELECT 0", 10);
  SqlStmt *stmt = NULL;
  char *err = NULL;
  int rc = sql_parse(&p->arena, txt, -1, &stmt, NULL, &err);
  if (rc || !stmt || stmt->kind != SQL_STMT_SELECT || !stmt->u.select->with) {
    if (err) parse_error(p, "%s", err);
    else parse_nomem(p);
    shale_free(err);
    return 1;
  }
  SqlSelect *copy = stmt->u.select->with->a[0].select;
  struct CteScope tmp = {sc->with, i, sc->text, sc->up};
  struct CteScope *save_ctes = st->ctes;
  const char *save_text = st->text;
  st->ctes = &tmp;
  st->text = txt;
  it->kind = SRC_SUBQUERY;
  it->name = a->alias ? a->alias : a->name;
  it->cte_materialized = cte->materialized == 1;
  int bad = 0;
  /* a CTE naming itself is recursive, with or without the RECURSIVE keyword
   * (SQLite decides by the reference alone) */
  if (select_names(copy, cte->name)) {
    SqlSelect *rec = copy;
    /* the recursive part: the cores from the first that names the CTE to
     * the last, all joined by the same UNION or UNION ALL (SQLite 3.34's
     * several recursive SELECTs); the setup: the cores before it */
    SqlSelect *first = NULL;
    int ops_ok = 1;
    for (SqlSelect *c = copy; c; c = c->prior) {
      if (!from_names(c->from, cte->name)) continue;
      first = c;
    }
    for (SqlSelect *c = copy; first && c != first->prior; c = c->prior)
      if ((c->compound != SQL_COMPOUND_UNION && c->compound != SQL_COMPOUND_UNION_ALL) ||
          c->compound != first->compound)
        ops_ok = 0; /* (SQLite: one operator for the whole recursive part) */
    if (!first || !first->prior || !ops_ok) {
      parse_error(p, "circular reference: %s", cte->name);
      bad = 1;
    } else if (parse_auth(p, AUTH_RECURSIVE, NULL, NULL, NULL) == AUTH_DENY) {
      bad = 1;
    } else {
      SqlSelect *setup = first->prior;
      int op = first->compound;
      first->prior = NULL;
      first->compound = 0;
      SqlExpr *lim = rec->limit, *off = rec->offset;
      SqlExprList *ob = rec->order_by;
      rec->limit = rec->offset = NULL;
      rec->order_by = NULL;
      bad = select_resolve(p, setup, outer);
      if (!bad && !cte_width_ok(p, cte, setup)) bad = 1;
      Table *t = bad ? NULL : select_result_table(p, setup, cte->name, cte->columns);
      if (!t) bad = 1;
      NameCtx lnc;
      memset(&lnc, 0, sizeof lnc);
      if (!bad && lim && resolve_expr(p, &lnc, lim)) bad = 1;
      if (!bad && off && resolve_expr(p, &lnc, off)) bad = 1;
      if (!bad) {
        const char *sn = st->rec_name;
        Table *stab = st->rec_tab;
        int scur = st->rec_cursor, srefs = st->rec_refs;
        st->rec_name = cte->name;
        st->rec_tab = t;
        st->rec_cursor = emit_cursor(p);
        int ccur = st->rec_cursor;
        /* each recursive SELECT may read the CTE once */
        for (SqlSelect *c = rec; c && !bad; c = c->prior) {
          SqlSelect *pr = c->prior;
          c->prior = NULL;
          st->rec_refs = 0;
          bad = select_resolve(p, c, outer);
          c->prior = pr;
        }
        if (!bad) bad = select_resolve(p, rec, outer);
        st->rec_name = sn;
        st->rec_tab = stab;
        st->rec_cursor = scur;
        st->rec_refs = srefs;
        if (!bad && select_ncol(rec) != select_ncol(setup)) {
          parse_error(p, "SELECTs to the left and right of %s do not have the same number of "
                         "result columns", compound_name(op));
          bad = 1;
        }
        int *order_col = NULL;
        if (!bad && ob) {
          /* the CTE's ORDER BY names result columns, as a compound's */
          first->prior = setup;
          first->compound = (uint8_t)op;
          rec->order_by = ob;
          bad = resolve_compound_order(p, rec);
          order_col = rec->info->order_col;
          first->prior = NULL;
          first->compound = 0;
          rec->order_by = NULL;
        }
        struct RecCte *r = bad ? NULL : parse_alloc(p, sizeof *r);
        if (r) {
          r->cursor = it->cursor;
          r->cur_cursor = ccur;
          r->setup = setup;
          r->rec = rec;
          r->op = op;
          r->limit = lim;
          r->offset = off;
          r->order_by = ob;
          r->order_col = order_col;
          r->ncol = select_ncol(setup);
          r->next = st->recs;
          st->recs = r;
          it->sub = setup;
          it->tab = t;
        } else {
          bad = 1;
        }
      }
    }
  } else {
    bad = select_resolve(p, copy, outer);
    if (!bad && !cte_width_ok(p, cte, copy)) bad = 1;
    if (!bad) {
      it->sub = copy;
      it->tab = select_result_table(p, copy, cte->name, cte->columns);
      if (!it->tab) bad = 1;
    }
  }
  st->ctes = save_ctes;
  st->text = save_text;
  if (!bad && !parse_failed(p)) {
    struct CteUse *u = st->cte_uses;
    while (u && u->cte != cte) u = u->next;
    if (!u && (u = parse_alloc(p, sizeof *u))) {
      u->cte = cte;
      u->next = st->cte_uses;
      st->cte_uses = u;
    }
    if (!u) return 1;
    u->nuse++;
    it->cte_use = u;
  }
  return bad || parse_failed(p);
}

/* 1 if the CTE item's rows come from the one materialization of a CTE read
 * more than once (SQLite's rule: not NOT MATERIALIZED, not correlated). */
static int cte_shared(const SrcItem *it, const struct RecCte *r) {
  const struct CteUse *u = it->cte_use;
  if (!u || u->nuse < 2 || u->cte->materialized == 2) return 0;
  if (r) return !has_correl(r->setup) && !has_correl(r->rec);
  return !has_correl(it->sub);
}

/* 1 if a RIGHT or FULL JOIN is written anywhere in the parenthesized list. */
static int nest_has_right(const SqlSrcList *l) {
  for (int i = 0; l && i < l->n; i++) {
    if (l->a[i].jointype & SQL_JOIN_RIGHT) return 1;
    if (!l->a[i].select && nest_has_right(l->a[i].nested)) return 1;
  }
  return 0;
}

void src_nest_ref(Parse *p, SrcList *src, SrcItem *it, int j, SqlExpr *e, int depth) {
  if (it->sub == it->nest) {
    colref(e, it, j);
    e->depth = (uint8_t)depth;
    return;
  }
  const SqlExpr *r = it->nest->info->result->a[j].expr;
  SrcItem *in = r->op == SQL_E_COLREF ? src_find_cursor(src, r->cursor) : NULL;
  if (!in) { /* not a column (the authorizer made it NULL) */
    SqlSpan sp = e->span;
    *e = *r;
    e->span = sp;
    return;
  }
  colref(e, in, r->column);
  e->depth = (uint8_t)depth;
}

/* A parenthesized join of two or more items that is not the list itself
 * (it has an alias, an ON/USING, or items on its left): as SQLite, a
 * SELECT * over the list whose columns keep their table names. It is
 * flattened -- its items spliced into s, the outer ON on the first one --
 * when that keeps the meaning: joined by an inner join or a comma, no
 * USING/NATURAL on it, no RIGHT/FULL JOIN inside; else it is one
 * materialized subquery item (outer joins keep their semantics). */
static int nest_item(Parse *p, SrcList *s, const SqlSrcItem *a, NameCtx *outer) {
  SelectState *st = select_state(p);
  SqlSelect *sel = parse_alloc(p, sizeof *sel);
  SqlExpr *star = new_expr(p, SQL_E_STAR);
  if (!st || !sel || !star) return 1;
  star->span = a->span;
  sel->span = a->span;
  sel->kind = SQL_SEL_SELECT;
  sel->from = a->nested;
  if (!(sel->cols = list_add(p, NULL, star))) return 1;
  sel->cols->a[0].span = a->span;
  int flat = !(a->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT | SQL_JOIN_NATURAL)) &&
             !a->using_cols && !nest_has_right(a->nested);
  SelInfo *si = sel_info(p, sel, 1);
  if (!si) return 1;
  si->nested_from = 1;
  si->nest_flat = (uint8_t)flat;
  if (select_resolve(p, sel, outer)) return 1;
  char nm[40];
  snprintf(nm, sizeof nm, "(join-%d)", ++st->nsubquery);
  Table *t = select_result_table(p, sel, a->alias ? a->alias : nm, NULL);
  if (!t) return 1;
  SrcList *in = si->src;
  if (!flat || !in || in->n == 0) {
    SrcItem *it = &s->a[s->n];
    memset(it, 0, sizeof *it);
    it->ast = a;
    it->jointype = a->jointype;
    it->on = a->on;
    it->kind = SRC_SUBQUERY;
    it->cursor = emit_cursor(p);
    it->sub = sel;
    it->tab = t;
    it->name = a->alias;
    it->nest = sel;
    it->nest_tab = t;
    it->nest_alias = a->alias;
    it->nest_n = 1;
    si->nest_flat = 0;
    s->n++;
    return 0;
  }
  int first = s->n;
  for (int k = 0; k < in->n; k++) {
    SrcItem *it = &s->a[s->n++];
    *it = in->a[k];
    it->nest = NULL;
    it->nest_tab = NULL;
    it->nest_alias = NULL;
    it->nest_n = 0;
    it->in_nest = k > 0;
  }
  SrcItem *f = &s->a[first];
  f->jointype = a->jointype;
  f->on = a->on;
  f->nest = sel;
  f->nest_tab = t;
  f->nest_alias = a->alias;
  f->nest_n = in->n;
  return 0;
}

static int add_items(Parse *p, SrcList *s, const SqlSrcList *from, NameCtx *outer, int depth) {
  for (int i = 0; i < from->n; i++) {
    const SqlSrcItem *a = &from->a[i];
    if (a->nested && !a->select) {
      if (i == 0 && !a->alias && !a->on && !a->using_cols) {
        /* FROM (b JOIN c) ...: the list itself, as SQLite's parser */
        int first = s->n;
        if (add_items(p, s, a->nested, outer, depth)) return 1;
        if (s->n > first) s->a[first].jointype = a->jointype;
        continue;
      }
      if (a->nested->n == 1) {
        /* (b) AS x ON ...: the one item with the outer alias, ON/USING
         * and join type (its own alias and INDEXED BY are dropped, as
         * SQLite does) */
        SqlSrcItem *c = parse_alloc(p, sizeof *c);
        if (!c) return 1;
        *c = a->nested->a[0];
        c->alias = a->alias;
        c->on = a->on;
        c->using_cols = a->using_cols;
        c->jointype = a->jointype;
        c->indexed_by = NULL;
        c->not_indexed = 0;
        if (!c->nested || c->select) {
          if (add_item(p, s, c, outer, c->jointype, depth)) return 1;
          continue;
        }
        /* ((b JOIN c)) AS x: the inner list with the outer's clauses */
        if (nest_item(p, s, c, outer)) return 1;
        continue;
      }
      if (nest_item(p, s, a, outer)) return 1;
      continue;
    }
    if (add_item(p, s, a, outer, a->jointype, depth)) return 1;
  }
  return 0;
}

static int add_item(Parse *p, SrcList *s, const SqlSrcItem *a, NameCtx *outer, int jointype,
                    int depth) {
  SrcItem *it = &s->a[s->n];
  memset(it, 0, sizeof *it);
  it->ast = a;
  it->jointype = (uint8_t)jointype;
  it->not_indexed = a->not_indexed;
  it->indexed_by = a->indexed_by;
  it->on = a->on;
  it->db = a->schema;
  SelectState *st0 = select_state(p);
  if (!st0) return 1;
  if (!a->select && !a->schema && st0->rec_name && util_stricmp(st0->rec_name, a->name) == 0) {
    /* the recursive part's reference to its own CTE: the current row */
    if (st0->rec_refs++) {
      parse_error(p, "multiple references to recursive table: %s", a->name);
      return 1;
    }
    it->kind = SRC_SUBQUERY;
    it->tab = st0->rec_tab;
    it->name = a->alias ? a->alias : a->name;
    it->cursor = st0->rec_cursor;
    s->n++;
    return 0;
  }
  it->cursor = emit_cursor(p);
  if (!a->select && !a->schema) {
    for (struct CteScope *sc = st0->ctes; sc; sc = sc->up)
      for (int i = 0; i < sc->nvisible; i++)
        if (util_stricmp(sc->with->a[i].name, a->name) == 0) {
          if (cte_item(p, it, a, sc, i, outer)) return 1;
          s->n++;
          return 0;
        }
  }
  if (a->select) {
    it->kind = SRC_SUBQUERY;
    it->sub = a->select;
    if (select_resolve(p, a->select, outer)) return 1;
    it->name = a->alias;
    char sqname[40];
    snprintf(sqname, sizeof sqname, "(subquery-%d)", ++st0->nsubquery);
    it->tab = select_result_table(p, a->select, a->alias ? a->alias : sqname, NULL);
    if (!it->tab) return 1;
  } else {
    if (a->schema && parse_find_db(p, a->schema) < 0 &&
        (parse_ndb(p) > 1 || (util_stricmp(a->schema, "main") != 0 &&
                              util_stricmp(a->schema, "temp") != 0))) {
      parse_error(p, "no such table: %s.%s", a->schema, a->name);
      return 1;
    }
    if (a->has_args) {
      int rc = tvf_item(p, it, a);
      if (rc < 0 && (!a->args || a->args->n == 0)) rc = cookie_item(p, it, a);
      if (rc < 0) rc = pragma_item(p, it, a);
      if (rc < 0) parse_error(p, "no such table: %s", a->name);
      if (rc) return 1;
      s->n++;
      return 0;
    }
    if (func_table_find(a->name)) { /* json_each without arguments: no rows */
      int rc = tvf_item(p, it, a);
      if (rc) return 1;
      s->n++;
      return 0;
    }
    it->name = a->alias ? a->alias : a->name;
    int tdb = 0, vdb = 0;
    const char *zdb = parse_ndb(p) > 1 ? a->schema : NULL;
    Table *t = parse_find_object(p, PARSE_OBJ_TABLE, zdb, a->name, &tdb);
    if (parse_vtab_missing(p, t)) return 1;
    if (t) {
      it->kind = SRC_TABLE;
      it->tab = t;
      it->idb = tdb;
      parse_need_db(p, tdb, 0);
    } else {
      View *v = parse_find_object(p, PARSE_OBJ_VIEW, zdb, a->name, &vdb);
      if (!v && !a->schema) {
        int rc = cookie_item(p, it, a);
        if (rc < 0) rc = pragma_item(p, it, a);
        if (rc >= 0) {
          if (rc) return 1;
          s->n++;
          return 0;
        }
      }
      if (!v) {
        if (a->schema) parse_error(p, "no such table: %s.%s", a->schema, a->name);
        else if (p->scope_db1 > 1)
          parse_error(p, "no such table: %s.%s", parse_db_name(p, p->scope_db1 - 1), a->name);
        else parse_error(p, "no such table: %s", a->name);
        return 1;
      }
      if (p->env && p->env->no_views && vdb != 1) { /* SQLITE_DBCONFIG_ENABLE_VIEW off */
        parse_error(p, "access to view \"%s\" prohibited", a->name);
        return 1;
      }
      if (depth > 64) {
        parse_error(p, "view %s is circularly defined", a->name);
        return 1;
      }
      const char *text = NULL;
      SqlSelect *sel = view_select(p, v, &text);
      if (!sel) return 1;
      SelectState *st = select_state(p);
      if (!st) return 1;
      const char *save = st->text;
      st->text = text;
      p->in_view++;
      int save_scope = p->scope_db1;
      if (parse_ndb(p) > 1) p->scope_db1 = vdb == 1 ? 0 : vdb + 1; /* its own database */
      int rc = select_resolve(p, sel, NULL);
      p->scope_db1 = save_scope;
      p->in_view--;
      st->text = save;
      if (rc) return 1;
      SqlIdList ids = {0, 0, NULL};
      if (v->ncol) {
        ids.n = ids.cap = v->ncol;
        ids.a = v->cols;
      }
      it->kind = SRC_SUBQUERY;
      it->is_view = 1;
      it->sub = sel;
      it->tab = select_result_table(p, sel, v->name, v->ncol ? &ids : NULL);
      if (!it->tab) return 1;
      parse_need_db(p, vdb, 0);
    }
  }
  s->n++;
  return 0;
}

SrcList *src_from_ast(Parse *p, const SqlSrcList *from, NameCtx *outer) {
  SrcList *s = parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  int n = count_items(from);
  if (n > 64) {
    parse_error(p, "at most 64 tables in a join");
    return NULL;
  }
  s->a = parse_alloc(p, sizeof(SrcItem) * (size_t)(n ? n : 1));
  if (!s->a) return NULL;
  if (from && add_items(p, s, from, outer, 0)) return NULL;
  if (!src_extras(p, s, 1)) return NULL;
  return parse_failed(p) ? NULL : s;
}

/* Column name of the item at k seen as one FROM item (a flattened
 * parenthesized join through its own column names): the item it reads in
 * *item and the column in *col; 0 if it has none. */
static int level_col(SrcList *s, int k, const char *name, int *item, int *col) {
  SrcItem *it = &s->a[k];
  if (!it->tab || it->in_nest) return 0;
  if (it->nest && it->nest != it->sub) {
    int j = table_column_index(it->nest_tab, name);
    const SqlExpr *r = j >= 0 ? it->nest->info->result->a[j].expr : NULL;
    SrcItem *in = r && r->op == SQL_E_COLREF ? src_find_cursor(s, r->cursor) : NULL;
    if (!in) return 0;
    *item = (int)(in - s->a);
    *col = r->column;
    return 1;
  }
  int j = table_column_index(it->tab, name);
  if (j < 0) return 0;
  *item = k;
  *col = j;
  return 1;
}

/* First item left of i having column name; its column in *col. */
static int left_item_with(SrcList *s, int i, const char *name, int *col) {
  for (int k = 0; k < i; k++) {
    int item;
    if (level_col(s, k, name, &item, col)) return item;
  }
  return -1;
}

/* 1 if the item at k joins its left by USING naming name (NATURAL: a
 * column name it shares with an item on its left). */
static int joined_using(SrcList *s, int k, const char *name) {
  SrcItem *it = &s->a[k];
  const SqlSrcItem *a = it->ast;
  for (int j = 0; a && a->using_cols && j < a->using_cols->n; j++)
    if (util_stricmp(a->using_cols->a[j], name) == 0) return 1;
  if (!(it->jointype & SQL_JOIN_NATURAL)) return 0;
  int lc;
  return table_column_index(it->tab, name) >= 0 && left_item_with(s, k, name, &lc) >= 0;
}

static int join_term(Parse *p, SrcList *s, int i, const char *name, const char **ambig) {
  int lcol, rcol = table_column_index(s->a[i].tab, name);
  int k = left_item_with(s, i, name, &lcol);
  if (k < 0 || rcol < 0) {
    parse_error(p, "cannot join using column %s - column not present in both tables", name);
    return 1;
  }
  SqlExpr *l = new_expr(p, SQL_E_COLREF), *r = new_expr(p, SQL_E_COLREF);
  SqlExpr *eq = new_expr(p, SQL_E_BINARY);
  if (!l || !r || !eq) return 1;
  colref(l, &s->a[k], lcol);
  colref(r, &s->a[i], rcol);
  int any_right = 0;
  for (int j = 0; j < s->n; j++)
    if (s->a[j].jointype & SQL_JOIN_RIGHT) any_right = 1;
  if (any_right) {
    /* as SQLite when the FROM list has a RIGHT or FULL JOIN: every further
     * left item with the column must itself be joined USING it, and the
     * left side is coalesce() over them all */
    SqlExprList *args = NULL;
    for (int k2 = k + 1; k2 < i; k2++) {
      int item, col;
      if (!level_col(s, k2, name, &item, &col)) continue;
      if (!joined_using(s, k2, name)) {
        /* SQLite goes on and reports the last such name */
        *ambig = name;
        break;
      }
      SqlExpr *x = new_expr(p, SQL_E_COLREF);
      if (!x || (!args && !(args = list_add(p, NULL, l))) || !list_add(p, args, x)) return 1;
      colref(x, &s->a[item], col);
    }
    if (args) {
      const FuncDef *f =
          p->env && p->env->funcs ? func_find(p->env->funcs, "coalesce", args->n) : NULL;
      SqlExpr *c = new_expr(p, SQL_E_FUNC);
      if (!f || !c) return 1;
      c->z = "coalesce";
      c->func = f;
      c->list = args;
      c->height = 2;
      l = c;
    }
  }
  eq->sub = TK_EQ;
  eq->a = l;
  eq->b = r;
  s->a[i].on = and_expr(p, s->a[i].on, eq);
  struct SrcX *x = src_extras(p, s, 1);
  if (!x) return 1;
  x->merged[i] |= (uint64_t)1 << (rcol >= 63 ? 63 : rcol);
  if (s->a[i].jointype & SQL_JOIN_RIGHT) {
    if (x->npairs == x->cappairs) {
      int cap = x->cappairs ? x->cappairs * 2 : 4;
      struct SrcPair *a = parse_alloc(p, sizeof *a * (size_t)cap);
      if (!a) return 1;
      if (x->npairs) memcpy(a, x->pairs, sizeof *a * (size_t)x->npairs);
      x->pairs = a;
      x->cappairs = cap;
    }
    x->pairs[x->npairs++] = (struct SrcPair){k, lcol, i, rcol};
  }
  return 0;
}

int src_coalesce_ref(Parse *p, SrcList *s, int item, int col, SqlExpr *e) {
  struct SrcX *x = src_extras(p, s, 0);
  if (!x || !x->npairs || item < 0 || item >= s->n || col < 0) return 0;
  const char *name = s->a[item].tab->cols[col].name;
  /* the items an unqualified name of a USING column stands for, as
   * SQLite: after the left-most, each later item joined USING it by a FULL
   * JOIN joins the coalesce(), a RIGHT JOIN's starts it again */
  int chain[64], ccol[64], n = 1;
  chain[0] = item;
  ccol[0] = col;
  for (int k = item + 1; k < s->n && n < 64; k++) {
    SrcItem *it = &s->a[k];
    int jt = it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT);
    if (!(jt & SQL_JOIN_RIGHT) || !it->tab) continue;
    int j = table_column_index(it->tab, name);
    if (j < 0 || !(x->merged[k] & ((uint64_t)1 << (j >= 63 ? 63 : j)))) continue;
    if (jt == SQL_JOIN_RIGHT) n = 0;
    chain[n] = k;
    ccol[n++] = j;
  }
  if (n == 1 && chain[0] == item) return 0;
  uint8_t d = e->depth;
  if (n == 1) { /* RIGHT JOIN: the right item's column (never NULL-padded) */
    colref(e, &s->a[chain[0]], ccol[0]);
    e->depth = d;
    return 1;
  }
  const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, "coalesce", n) : NULL;
  SqlExprList *args = NULL;
  if (!f) return 0;
  for (int i = 0; i < n; i++) {
    SqlExpr *c = new_expr(p, SQL_E_COLREF);
    if (!c || !(args = list_add(p, args, c))) return 0;
    colref(c, &s->a[chain[i]], ccol[i]);
    c->depth = d;
  }
  SqlSpan sp = e->span;
  uint8_t fl = e->flags & SQL_EF_PAREN;
  memset(e, 0, sizeof *e);
  e->op = SQL_E_FUNC;
  e->z = "coalesce";
  e->func = f;
  e->list = args;
  e->span = sp;
  e->flags = fl;
  e->height = 2;
  return 1;
}

int src_resolve_joins(Parse *p, SrcList *s) {
  const char *ambig = NULL;
  for (int i = 1; s && i < s->n; i++) {
    SrcItem *it = &s->a[i];
    const SqlSrcItem *a = it->ast;
    if (!a || it->in_nest) continue; /* a flattened join's items were joined inside it */
    if (it->jointype & SQL_JOIN_NATURAL) {
      if (a->on || a->using_cols) {
        parse_error(p, "a NATURAL join may not have an ON or USING clause");
        return 1;
      }
      for (int j = 0; j < it->tab->ncol; j++) {
        if (it->tab->cols[j].hidden == COL_HIDDEN) continue;
        int lc;
        if (left_item_with(s, i, it->tab->cols[j].name, &lc) < 0) continue;
        if (join_term(p, s, i, it->tab->cols[j].name, &ambig)) return 1;
      }
    } else if (a->using_cols) {
      for (int j = 0; j < a->using_cols->n; j++)
        if (join_term(p, s, i, a->using_cols->a[j], &ambig)) return 1;
    }
  }
  if (ambig) parse_error(p, "ambiguous reference to %s in USING()", ambig);
  return parse_failed(p);
}

/* ---- resolution ---- */

/* 1 if item k of s joins by USING naming column name, or NATURAL with name
 * a column it shares with an item on its left. */
/* The database part of an item's long column names, as SQLite 3.40 tags
 * them: the table's database, or "*" for a subquery or view. */
static const char *item_db_tag(Parse *p, const SrcItem *it) {
  return it->kind == SRC_TABLE ? parse_db_name(p, it->idb) : "*";
}

static int item_uses(SrcList *s, int k, const char *name) {
  if (k <= 0 || k >= s->n || s->a[k].in_nest) return 0;
  SrcItem *it = &s->a[k];
  const SqlSrcItem *a = it->ast;
  for (int j = 0; a && a->using_cols && j < a->using_cols->n; j++)
    if (util_stricmp(a->using_cols->a[j], name) == 0) return 1;
  if (!(it->jointype & SQL_JOIN_NATURAL)) return 0;
  int j = table_column_index(it->tab, name), lc;
  return j >= 0 && it->tab->cols[j].hidden != COL_HIDDEN && left_item_with(s, k, name, &lc) >= 0;
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
  if (!list_add(p, o->r, c)) return 1;
  o->r->a[o->r->n - 1].name = name;
  if (o->nc) {
    if (o->r->n > o->cap) {
      int cap = o->cap * 2 + 8;
      struct NestCol *a = parse_alloc(p, sizeof *a * (size_t)cap);
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
  struct SrcX *x = src_extras(p, src, 0);
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
    SqlExpr *ce = new_expr(p, SQL_E_COLREF);
    if (!ce) return 1;
    ce->span = e->span;
    src_nest_ref(p, src, it, j, ce, 0);
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
  SqlExprList *r = parse_alloc(p, sizeof *r);
  if (!r) return 1;
  StarOut o = {r, NULL, 0};
  if (info->nested_from) {
    o.cap = 8;
    if (!(o.nc = parse_alloc(p, sizeof *o.nc * (size_t)o.cap))) return 1;
  }
  struct SrcX *x = src_extras(p, src, 0);
  for (int i = 0; i < cols->n; i++) {
    SqlExpr *e = cols->a[i].expr;
    if (!e || e->op != SQL_E_STAR) {
      if (star_add(p, &o, e, NULL, (struct NestCol){0})) return 1;
      r->a[r->n - 1] = cols->a[i];
      continue;
    }
    if (!src || src->n == 0) {
      parse_error(p, "no tables specified");
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
            if (nx->tab->cols[u].hidden == COL_HIDDEN || left_item_with(src, next, un, &lc) < 0)
              continue;
          } else {
            un = na->using_cols->a[u];
          }
          SqlExpr *id = new_expr(p, SQL_E_ID);
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
          int j2 = table_column_index(src->a[k2].tab, it->tab->cols[j].name);
          if (j2 < 0) continue;
          if (x && ((x->merged[k2] | x->merged[k]) & ((uint64_t)1 << (j2 >= 63 ? 63 : j2))))
            continue; /* a USING column is not ambiguous */
          parse_error(p, "ambiguous column name: %s.%s.%s", item_db_tag(p, it), it->name,
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
        SqlExpr *c = new_expr(p, SQL_E_COLREF);
        if (!c || star_add(p, &o, c, NULL, nc)) return 1;
        colref(c, it, j);
        c->span = e->span;
        if (p->env && p->env->auth && (it->kind == SRC_TABLE || it->is_view) &&
            resolve_auth_read(p, it->tab, j, c) == AUTH_DENY)
          return 1;
        if (!e->table && !info->nested_from && src_coalesce_ref(p, src, k, j, c))
          r->a[r->n - 1].name = cn;
      }
    }
    if (!found) {
      parse_error(p, "no such table: %s", e->table);
      return 1;
    }
  }
  info->result = r;
  info->ncols = o.nc;
  return 0;
}

static int has_correl(const SqlSelect *s) {
  for (; s; s = s->prior)
    if (s->info && (s->info->nc.flags & NC_HAS_CORREL)) return 1;
  return 0;
}

int select_has_correl(const SqlSelect *s) { return has_correl(s); }

static int resolve_values(Parse *p, SqlSelect *s, SelInfo *info) {
  SqlExprList *rows = s->cols;
  int n = rows && rows->n ? (rows->a[0].expr->list ? rows->a[0].expr->list->n : 0) : 0;
  for (int i = 0; rows && i < rows->n; i++) {
    SqlExpr *row = rows->a[i].expr;
    int m = row->list ? row->list->n : 0;
    if (m != n) {
      parse_error(p, "all VALUES must have the same number of terms");
      return 1;
    }
    if (resolve_list(p, &info->nc, row->list)) return 1;
  }
  if (p->env && p->env->max_columns > 0 && n > p->env->max_columns) {
    parse_error(p, "too many columns in result set");
    return 1;
  }
  SqlExprList *r = parse_alloc(p, sizeof *r);
  if (!r) return 1;
  for (int j = 0; j < n; j++) {
    if (!list_add(p, r, rows->a[0].expr->list->a[j].expr)) return 1;
    char buf[32];
    snprintf(buf, sizeof buf, "column%d", j + 1);
    r->a[j].name = parse_strdup(p, buf);
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
  if (s->limit && resolve_expr(p, &lnc, s->limit)) return 1;
  if (s->offset && resolve_expr(p, &lnc, s->offset)) return 1;
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
  SelInfo *info = sel_info(p, s, 1);
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
  info->src = src_from_ast(p, s->from, &info->from_nc);
  if (!info->src) return 1;
  if (info->from_nc.flags & NC_HAS_CORREL) info->nc.flags |= NC_HAS_CORREL;
  NameCtx *nc = &info->nc;
  nc->src = info->src;
  if (src_resolve_joins(p, info->src)) return 1;
  if (window_prepare(p, s)) return 1;
  if (info->nest_flat) {
    /* a flattened join's '*' reads nothing: the enclosing query's
     * references mark what is read */
    uint64_t *used = parse_alloc(p, sizeof(uint64_t) * (size_t)(info->src->n + 1));
    if (!used) return 1;
    for (int i = 0; i < info->src->n; i++) used[i] = info->src->a[i].colused;
    if (expand_star(p, info, s->cols)) return 1;
    for (int i = 0; i < info->src->n; i++) info->src->a[i].colused = used[i];
  } else if (expand_star(p, info, s->cols)) {
    return 1;
  }
  if (p->env && p->env->max_columns > 0 && info->result->n > p->env->max_columns) {
    parse_error(p, "too many columns in result set");
    return 1;
  }
  nc->flags |= NC_ALLOW_AGG | NC_ALLOW_WIN;
  if (resolve_list(p, nc, info->result)) return 1;
  nc->flags &= ~(NC_ALLOW_AGG | NC_ALLOW_WIN);
  for (int i = 0; i < info->result->n; i++)
    if (resolve_check_scalar(p, info->result->a[i].expr)) return 1;
  int result_agg = (nc->flags & NC_HAS_AGG) != 0;
  for (struct TvfItem *ti = select_state(p)->tvfs; ti; ti = ti->next) {
    SrcItem *it = ti->pragma && !ti->resolved ? src_find_cursor(info->src, ti->cursor) : NULL;
    if (it && (pragma_pushdown(p, ti, it, s->where) || pragma_pushdown(p, ti, it, it->on)))
      return 1;
  }
  for (int i = 0; i < info->src->n; i++) {
    SrcItem *it = &info->src->a[i];
    if (!it->on) continue;
    nc->flags |= NC_IN_ON;
    int rc = resolve_expr(p, nc, it->on);
    nc->flags &= ~NC_IN_ON;
    if (rc) return 1;
    if ((it->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT)) && refs_right(it->on, info->src, i)) {
      parse_error(p, "ON clause references tables to its right");
      return 1;
    }
  }
  if (tvf_resolve(p, nc, info->src)) return 1;
  if (s->where) {
    nc->result = info->result;
    int rc = resolve_expr(p, nc, s->where);
    nc->result = NULL;
    if (rc) return 1;
  }
  if (s->group_by) {
    info->group_col = parse_alloc(p, sizeof(int) * (size_t)s->group_by->n);
    if (!info->group_col) return 1;
    if (resolve_order_by_ex(p, nc, s->group_by, info->result, "GROUP", info->group_col))
      return 1;
  }
  if (s->having) {
    /* SQLite: an aggregate query is one with GROUP BY or aggregates in its
     * result list; HAVING alone does not make one */
    if (!s->group_by && !result_agg) {
      parse_error(p, "HAVING clause on a non-aggregate query");
      return 1;
    }
    nc->result = info->result;
    nc->flags |= NC_ALLOW_AGG;
    int rc = resolve_expr(p, nc, s->having);
    nc->flags &= ~NC_ALLOW_AGG;
    nc->result = NULL;
    if (rc) return 1;
  }
  int agg = (nc->flags & NC_HAS_AGG) || s->group_by;
  if (s->order_by && !s->prior) {
    info->order_col = parse_alloc(p, sizeof(int) * (size_t)s->order_by->n);
    if (!info->order_col) return 1;
    nc->flags |= NC_ALLOW_AGG | NC_ALLOW_WIN;
    int rc = resolve_order_by_ex(p, nc, s->order_by, info->result, "ORDER", info->order_col);
    nc->flags &= ~(NC_ALLOW_AGG | NC_ALLOW_WIN);
    if (rc) return 1;
    if (!agg) {
      for (int i = 0; i < s->order_by->n; i++) {
        const SqlExpr *f = find_agg(s->order_by->a[i].expr);
        if (f) {
          parse_error(p, "misuse of aggregate: %s()", f->z);
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
          parse_auth(p, AUTH_READ, it->tab->name, "", it->db) == AUTH_DENY)
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
  SqlExpr *d = expr_dup(p, term);
  if (!d) return -1;
  int rc0 = p->rc;
  char *msg0 = p->errmsg;
  p->rc = 0;
  p->errmsg = NULL;
  int bad = resolve_expr(p, &ci->nc, d);
  if (p->rc == SHALE_NOMEM) bad = 2;
  if (p->errmsg) shale_free(p->errmsg);
  p->rc = rc0;
  p->errmsg = msg0;
  if (bad == 2) {
    parse_nomem(p);
    return -1;
  }
  if (bad) return -1;
  for (int k = 0; k < ci->result->n; k++)
    if (expr_same(d, ci->result->a[k].expr)) return k;
  return -1;
}

static int resolve_compound_order(Parse *p, SqlSelect *head) {
  SelInfo *hi = head->info;
  SqlExprList *ob = head->order_by;
  int ncol = hi->result->n;
  if (resolve_terms_limit(p, ob->n, "ORDER")) return 1;
  hi->order_col = parse_alloc(p, sizeof(int) * (size_t)ob->n);
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
          parse_error(p, "%d%s ORDER BY term out of range - should be between 1 and %d", i + 1,
                      ordinal_suffix(i + 1), ncol);
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
      parse_error(p, "%d%s ORDER BY term does not match any column in the result set", i + 1,
                  ordinal_suffix(i + 1));
      return 1;
    }
    hi->order_col[i] = col;
  }
  return 0;
}

static const char *compound_name(int op) {
  switch (op) {
  case SQL_COMPOUND_UNION_ALL: return "UNION ALL";
  case SQL_COMPOUND_INTERSECT: return "INTERSECT";
  case SQL_COMPOUND_EXCEPT: return "EXCEPT";
  default: return "UNION";
  }
}

static int select_resolve_inner(Parse *p, SqlSelect *s, NameCtx *outer);

static int with_dup_check(Parse *p, const SqlWith *w) {
  for (int i = 0; i < w->n; i++)
    for (int k = 0; k < i; k++)
      if (util_stricmp(w->a[i].name, w->a[k].name) == 0) {
        parse_error(p, "duplicate WITH table name: %s", w->a[i].name);
        return 1;
      }
  return 0;
}

int select_push_with(Parse *p, const SqlWith *with) {
  SelectState *st = select_state(p);
  if (!st || !with) return parse_failed(p);
  if (with_dup_check(p, with)) return 1;
  struct CteScope *sc = parse_alloc(p, sizeof *sc);
  if (!sc) return 1;
  sc->with = with;
  sc->nvisible = with->n;
  sc->text = st->text;
  sc->up = st->ctes;
  st->ctes = sc;
  return 0;
}

void select_pop_with(Parse *p) {
  SelectState *st = p->select_state;
  if (st && st->ctes) st->ctes = st->ctes->up;
}

int select_resolve(Parse *p, SqlSelect *s, NameCtx *outer) {
  if (!s || parse_failed(p)) return parse_failed(p);
  if (s->info && s->info->state == 2) return 0;
  if (!s->with) return select_resolve_inner(p, s, outer);
  SelectState *st = select_state(p);
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
    parse_error(p, "too many terms in compound SELECT");
    return 1;
  }
  for (SqlSelect *c = s; c->prior; c = c->prior) {
    if (c->info->result->n != c->prior->info->result->n) {
      parse_error(p, "SELECTs to the left and right of %s do not have the same number of result columns",
                  compound_name(c->compound));
      return 1;
    }
  }
  if (s->order_by && resolve_compound_order(p, s)) return 1;
  return parse_failed(p);
}

int select_ncol(const SqlSelect *s) {
  return s && s->info && s->info->result ? s->info->result->n : 0;
}

SqlExprList *select_result(const SqlSelect *s) { return s && s->info ? s->info->result : NULL; }

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
  SrcItem *it = src_find_cursor(core->info->src, e->cursor);
  if (!it || it->kind != SRC_SUBQUERY || !it->sub || e->column < 0) return NULL;
  SqlSelect *l = leftmost(it->sub);
  if (!l->info || !l->info->result || e->column >= l->info->result->n) return NULL;
  return l->info->result->a[e->column].expr;
}

static const SqlSelect *sub_core(const SqlSelect *core, const SqlExpr *e) {
  e = skip_reg(e);
  SrcItem *it = src_find_cursor(core->info->src, e->cursor);
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
  return span_text(p, core->info->text, it->span);
}

int select_result_names(Parse *p, SqlSelect *s) {
  if (parse_failed(p)) return 1;
  const SqlSelect *core = leftmost(s);
  if (!core->info || !core->info->result) return 0;
  int n = core->info->result->n;
  p->ncol = n;
  p->cols = parse_alloc(p, sizeof(ResultCol) * (size_t)(n ? n : 1));
  if (!p->cols) return 1;
  for (int i = 0; i < n; i++) {
    ResultCol *rc = &p->cols[i];
    rc->name = result_name(p, core, i);
    const Table *t = NULL;
    int col = 0;
    if (trace_origin(core, core->info->result->a[i].expr, &t, &col)) {
      rc->table = t->name;
      rc->db = parse_db_name(p, parse_table_db(p, t));
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

Table *select_result_table(Parse *p, SqlSelect *s, const char *name, const SqlIdList *colnames) {
  if (parse_failed(p)) return NULL;
  SqlSelect *core = leftmost(s);
  if (!core->info || !core->info->result) {
    parse_error(p, "internal: unresolved SELECT");
    return NULL;
  }
  int n = core->info->result->n;
  if (colnames && colnames->n != n) {
    parse_error(p, "expected %d columns for '%s' but got %d", colnames->n, name, n);
    return NULL;
  }
  Table *t = parse_alloc(p, sizeof *t);
  if (!t) return NULL;
  t->name = parse_strdup(p, name ? name : "subquery");
  t->ncol = n;
  t->nstored = n;
  t->rowid_alias = -1;
  t->cols = parse_alloc(p, sizeof(Column) * (size_t)(n ? n : 1));
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
      nm = parse_strdup(p, buf);
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
        parse_nomem(p);
        return NULL;
      }
      nm = parse_strdup(p, z);
      shale_free(z);
      if (!nm) return NULL;
    }
    c->name = nm;
    SqlExpr *e = core->info->result->a[i].expr;
    /* a compound's column: the leftmost core decides (as SQLite); no
     * affinity stays 0 (SQLite's NONE: the other operand's applies) */
    c->affinity = expr_affinity(e);
    const Collation *coll = expr_collation(p, e);
    c->coll = coll ? coll->name : NULL;
    const Table *ot = NULL;
    int oc = 0;
    if (trace_origin(core, e, &ot, &oc)) c->type = oc < 0 ? "INTEGER" : ot->cols[oc].type;
    c->storage = i;
  }
  return parse_failed(p) ? NULL : t;
}

/* ---- code: output of rows ---- */

/* Internal destination: a recursive CTE's queue (cursor), deduplicated
 * through the ephemeral index out - 1 when out > 0 (UNION). */
#define SD_CTEQ 100

typedef struct OutCtx {
  SelectDest *dest;
  int ncol;
  int reg_limit, reg_offset; /* 0 when absent */
  int end_label;             /* LIMIT reached / first row of SD_MEM, SD_EXISTS */
  int distinct_cur;          /* -1: none */
  int distinct_hash;         /* distinct_cur is a hash set (HashSetAdd), not an index */
  /* ORDER BY sorter (sorter_cur -1: none) */
  int sorter_cur;
  SqlExprList *order_by;
  int *order_col;
  int nkey; /* key columns in the sorter record, before the sequence */
  int *res_field; /* per result column: its field in the sorter record (a key
                     column holding the same value, or one after the sequence) */
  int ndata;      /* result columns stored after the sequence */
  const SqlSelect *order_owner; /* the core whose loop may deliver ORDER BY order */
  int ordered_compound;         /* the compound's rows go to an ORDER BY sorter */
} OutCtx;

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

static const Collation *coll_of(Parse *p, const SqlExpr *e) { return expr_collation(p, e); }

/* 1 when the VM's hash tables (vm_hash.c) can hash text under collation c. */
static int hashable_coll(const Collation *c) {
  return !c || c == &record_coll_binary || c == &record_coll_nocase || c == &record_coll_rtrim;
}

/* 1 when ORDER BY term t sorts on an extra key column before its value (a
 * NULL flag): NULLS LAST ascending or NULLS FIRST descending. */
static int nulls_key_of(const SqlExprItem *t) {
  return (t->nulls == SQL_NULLS_LAST && t->sort != SQL_SORT_DESC) ||
         (t->nulls == SQL_NULLS_FIRST && t->sort == SQL_SORT_DESC);
}

static void emit_output(Parse *p, OutCtx *oc, int regs) {
  int skip = emit_label(p);
  int n = oc->ncol;
  if (oc->distinct_cur >= 0 && oc->distinct_hash) {
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
      if (col >= 0) emit(p, OP_SCopy, regs + col, vreg, 0);
      else expr_code(p, t->expr, vreg);
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
    if (e->op == SQL_E_REG && e->orig) e = e->orig;
    else if (e->op == SQL_E_COLREF || e->op == SQL_E_TRIGREF)
      /* SQLite reads the rowid (and an INTEGER PRIMARY KEY) as column -1,
       * which has no collation */
      return e->column >= 0 && !(e->tab && e->column == e->tab->rowid_alias);
    else if (e->op == SQL_E_COLLATE) return 1;
    else if (e->op == SQL_E_CAST || (e->op == SQL_E_UNARY && e->sub == TK_PLUS)) e = e->a;
    else return expr_collation(p, e) != NULL;
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
    if (arm_has_coll(p, c, e)) r = coll_of(p, e);
  }
  return r;
}

static KeyInfo *result_keyinfo(Parse *p, SqlSelect *s, int n) {
  const Collation **coll = parse_alloc(p, sizeof(Collation *) * (size_t)(n ? n : 1));
  if (!coll) return NULL;
  for (int i = 0; i < n; i++) coll[i] = compound_coll(p, s, i);
  return parse_keyinfo(p, n, coll, NULL);
}

/* 1 when an aggregate query's ORDER BY is its GROUP BY term for term
 * (ascending, default NULLs order, the same collation): its groups come
 * out in key order, ties (none) aside, so no sorter is needed, as SQLite
 * finds when the two lists are identical. */
static int group_order_is_order_by(Parse *p, SqlSelect *s, SelInfo *info) {
  SqlExprList *gb = s->group_by, *ob = s->order_by;
  if (s->prior || !info->is_agg || !gb || !ob || gb->n != ob->n || window_in_core(s)) return 0;
  for (int i = 0; i < ob->n; i++) {
    const SqlExprItem *t = &ob->a[i];
    if (t->sort == SQL_SORT_DESC || t->nulls != SQL_NULLS_NONE) return 0;
    SqlExpr *e = info->order_col[i] >= 0 ? info->result->a[info->order_col[i]].expr : t->expr;
    /* (SQLite keeps its sorter for some COLLATE forms, e.g. a GROUP BY
     * alias of a COLLATE expression: with one, the sorter stays) */
    if (e->op == SQL_E_COLLATE || gb->a[i].expr->op == SQL_E_COLLATE ||
        t->expr->op == SQL_E_COLLATE || !expr_same(e, gb->a[i].expr) ||
        coll_of(p, t->expr) != coll_of(p, gb->a[i].expr))
      return 0;
  }
  return 1;
}

/* Sorter for ORDER BY: opened before the rows are produced. */
static void sorter_setup(Parse *p, OutCtx *oc, SqlSelect *s, SqlExprList *ob, int *order_col) {
  int nk = 0;
  for (int i = 0; i < ob->n; i++) {
    SqlExprItem *t = &ob->a[i];
    int nulls_key = nulls_key_of(t);
    nk += 1 + nulls_key;
  }
  const Collation **coll = parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1));
  uint8_t *desc = parse_alloc(p, (size_t)(nk + 1));
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
      coll[k] = coll_of(p, t->expr);
    desc[k++] = d;
  }
  /* SQLite's aggregate queries deliver rows tying on a single DESC term in
   * reverse order: the sequence number sorts descending then */
  if (s && s->info && s->info->is_agg && s->group_by && ob->n == 1 &&
      ob->a[0].sort == SQL_SORT_DESC && !window_in_core(s))
    desc[nk] = 1;
  KeyInfo *ki = parse_keyinfo(p, nk + 1, coll, desc);
  if (!ki) return;
  /* a result column that an ORDER BY term stores as its key unchanged is
   * read back from the key (SQLite's iOrderByCol): one copy per record */
  oc->res_field = parse_alloc(p, sizeof(int) * (size_t)(oc->ncol + 1));
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
  vm_builder_add_p4(&p->b, OP_SorterOpen, oc->sorter_cur, nk + 1, 0, P4_KEYINFO, ki);
  /* ORDER BY ... LIMIT: only the first LIMIT + OFFSET rows are kept */
  if (oc->reg_limit) emit(p, OP_SorterLimit, oc->sorter_cur, oc->reg_limit, oc->reg_offset);
}

/* Read the sorted rows back out to the destination. */
static void sorter_output(Parse *p, OutCtx *oc) {
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
}

/* ---- code: row loops ---- */

typedef struct Loop {
  WhereInfo *w;
  int skip;
} Loop;

static int loop_begin(Parse *p, SelInfo *info, SqlSelect *s, SqlExprList *ob, int flags,
                      Loop *l) {
  l->w = NULL;
  l->skip = 0;
  if (info->src && info->src->n > 0) {
    l->w = where_begin(p, info->src, s->where, ob, flags);
    return l->w ? 0 : 1;
  }
  l->skip = emit_label(p);
  parse_eqp(p, "SCAN CONSTANT ROW");
  if (s->where) expr_if_false(p, s->where, l->skip, 1);
  return parse_failed(p);
}

static void loop_end(Parse *p, Loop *l) {
  if (l->w) where_end(l->w);
  else emit_resolve(p, l->skip);
}

static void values_code(Parse *p, SqlSelect *s, OutCtx *oc) {
  int n = oc->ncol;
  int regs = emit_regs(p, n);
  for (int i = 0; s->cols && i < s->cols->n; i++) {
    expr_code_list(p, s->cols->a[i].expr->list, regs);
    emit_output(p, oc, regs);
  }
}

/* ---- aggregates ---- */

typedef struct AggWork {
  AggInfo *ai;
  SrcList *src;
  int *arg_reg;    /* per func: first argument input register */
  int *filter_reg; /* per func: FILTER input register or 0 */
  int *col_in;     /* per col: input register */
  int *col_dup;    /* per col: an earlier col reading the same column (sharing its
                      registers), or -1 */
  int minmax;      /* the min/max rule applies (some min()/max() call) */
  int *rule_call;  /* per func: 1 for a min()/max() call of the rule (AggHit) */
  int hit_reg;     /* 1: the last min/max call run did not take this row */
  int loaded_reg; /* 1 once the bare columns hold the group's first row */
  SqlExpr **nodes; /* nodes replaced by agg_replace, for agg_restore */
  int nnodes;
  int in_base, nin;
} AggWork;

static int agg_add_func(Parse *p, AggInfo *ai, SqlExpr *e) {
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].expr == e) return 0;
  if (ai->nfunc == ai->capfunc) {
    int cap = ai->capfunc ? ai->capfunc * 2 : 8;
    AggFunc *a = parse_alloc(p, sizeof(AggFunc) * (size_t)cap);
    if (!a) return 1;
    if (ai->nfunc) memcpy(a, ai->funcs, sizeof(AggFunc) * (size_t)ai->nfunc);
    ai->funcs = a;
    ai->capfunc = cap;
  }
  AggFunc *f = &ai->funcs[ai->nfunc++];
  f->expr = e;
  f->func = e->func;
  f->distinct_cursor = -1;
  e->agg_slot = ai->nfunc - 1;
  return 0;
}

static int agg_add_col(Parse *p, AggInfo *ai, SqlExpr *e) {
  for (int i = 0; i < ai->ncol; i++)
    if (ai->cols[i].expr == e) return 0; /* reached twice (a shared subquery) */
  if (ai->ncol == ai->capcol) {
    int cap = ai->capcol ? ai->capcol * 2 : 8;
    AggCol *a = parse_alloc(p, sizeof(AggCol) * (size_t)cap);
    if (!a) return 1;
    if (ai->ncol) memcpy(a, ai->cols, sizeof(AggCol) * (size_t)ai->ncol);
    ai->cols = a;
    ai->capcol = cap;
  }
  AggCol *c = &ai->cols[ai->ncol++];
  c->expr = e;
  e->agg_slot = ai->ncol - 1;
  return 0;
}

static int collect_funcs_at(Parse *p, AggInfo *ai, SqlExpr *e, int level);

static int collect_funcs_list(Parse *p, AggInfo *ai, SqlExprList *l, int level) {
  for (int i = 0; l && i < l->n; i++)
    if (collect_funcs_at(p, ai, l->a[i].expr, level)) return 1;
  return 0;
}

/* Aggregate calls of this query: at level 0 its own, and inside expression
 * subqueries (level n) those whose arguments read only this query's columns
 * (resolve.c stored the owner's distance in depth). */
static int collect_funcs_at(Parse *p, AggInfo *ai, SqlExpr *e, int level) {
  if (!e) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 1)
    return e->depth == level ? agg_add_func(p, ai, e) : 0;
  if (e->op == SQL_E_REG) return 0;
  if (e->op == SQL_E_FUNC && e->agg == 2 && e->over &&
      (collect_funcs_at(p, ai, e->filter, level) ||
       collect_funcs_list(p, ai, e->over->partition, level) ||
       collect_funcs_list(p, ai, e->over->order, level)))
    return 1;
  if (collect_funcs_at(p, ai, e->a, level) || collect_funcs_at(p, ai, e->b, level) ||
      collect_funcs_at(p, ai, e->c, level) || collect_funcs_list(p, ai, e->list, level))
    return 1;
  for (SqlSelect *c = e->select; c; c = c->prior) {
    if (!c->info) continue;
    if (collect_funcs_list(p, ai, c->info->result, level + 1) ||
        collect_funcs_at(p, ai, c->where, level + 1) ||
        collect_funcs_at(p, ai, c->having, level + 1) ||
        collect_funcs_list(p, ai, c->order_by, level + 1))
      return 1;
  }
  return 0;
}

static int collect_funcs(Parse *p, AggInfo *ai, SqlExpr *e) {
  return collect_funcs_at(p, ai, e, 0);
}

typedef struct ColWalk {
  Parse *p;
  AggInfo *ai;
  SrcList *src;
  int rc;
} ColWalk;

static int is_agg_func_of(AggInfo *ai, const SqlExpr *e) {
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].expr == e) return 1;
  return 0;
}

static int colwalk_expr(SqlWalker *w, SqlExpr *e) {
  ColWalk *cw = w->arg;
  if (is_agg_func_of(cw->ai, e)) return SQL_WALK_PRUNE;
  if (e->op == SQL_E_COLREF && src_find_cursor(cw->src, e->cursor)) {
    if (agg_add_col(cw->p, cw->ai, e)) {
      cw->rc = 1;
      return SQL_WALK_ABORT;
    }
  }
  return SQL_WALK_CONTINUE;
}

static int colwalk_select(SqlWalker *w, SqlSelect *s) {
  (void)w;
  (void)s;
  return SQL_WALK_CONTINUE;
}

static int collect_cols(Parse *p, AggInfo *ai, SrcList *src, SqlExpr *e) {
  if (!e) return 0;
  ColWalk cw = {p, ai, src, 0};
  SqlWalker w = {colwalk_expr, colwalk_select, &cw};
  sql_walk_expr(&w, e);
  return cw.rc;
}

/* Replace node e by a SQL_E_REG for register reg (the original kept in
 * orig). An outer reference (a column, a call, or with outer_regs an
 * earlier REG, of depth > 0) stays visible below the new node. */
int select_expr_to_reg(Parse *p, SqlExpr *e, int reg, int outer_regs) {
  SqlExpr *o = parse_alloc(p, sizeof *o);
  if (!o) return 0;
  *o = *e;
  SqlSpan sp = e->span;
  uint8_t fl = e->flags & SQL_EF_PAREN;
  memset(e, 0, sizeof *e);
  e->op = SQL_E_REG;
  e->reg = reg;
  e->orig = o;
  e->span = sp;
  e->flags = fl;
  e->height = 1;
  e->aff = o->aff;
  if ((o->op == SQL_E_COLREF || o->op == SQL_E_FUNC || (outer_regs && o->op == SQL_E_REG)) &&
      o->depth > 0) {
    /* keep the outer reference visible to correlation checks (a walker
     * sees it below the REG node; the value comes from reg) */
    e->a = o;
    e->depth = o->depth;
  }
  return 1;
}

/* Replace calls and bare columns by their registers (invariant 3); the
 * AggInfo then points at the original nodes. */
static void agg_replace(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  aw->nodes = parse_alloc(p, sizeof(SqlExpr *) * (size_t)(ai->nfunc + ai->ncol + 1));
  if (!aw->nodes) return;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    select_expr_to_reg(p, e, ai->funcs[i].acc_reg, 0);
    if (e->op == SQL_E_REG && e->orig) {
      ai->funcs[i].expr = (SqlExpr *)e->orig;
      aw->nodes[aw->nnodes++] = e;
    }
  }
  for (int i = 0; i < ai->ncol; i++) {
    SqlExpr *e = ai->cols[i].expr;
    select_expr_to_reg(p, e, ai->cols[i].reg, 0);
    if (e->op == SQL_E_REG && e->orig) {
      ai->cols[i].expr = (SqlExpr *)e->orig;
      aw->nodes[aw->nnodes++] = e;
    }
  }
}

/* Put the replaced nodes back (the same SELECT may be coded again, e.g.
 * an IN subquery the planner codes twice). */
static void agg_restore(AggWork *aw) {
  for (int i = aw->nnodes - 1; i >= 0; i--) {
    SqlExpr *e = aw->nodes[i];
    if (e->op == SQL_E_REG && e->orig) *e = *e->orig;
  }
  aw->nnodes = 0;
}

/* Per row: compute every input into aw->in_base... */
static void agg_inputs(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    if (e->list) expr_code_list(p, e->list, aw->arg_reg[i]);
    if (e->filter) expr_code(p, e->filter, aw->filter_reg[i]);
  }
  for (int i = 0; i < ai->ncol; i++)
    if (aw->col_dup[i] < 0) expr_code(p, ai->cols[i].expr, aw->col_in[i]);
}

static void agg_bare_load(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->ncol; i++)
    if (aw->col_dup[i] < 0) emit(p, OP_Copy, aw->col_in[i], ai->cols[i].reg, 0);
}

/* Bare columns take the group's first row (as SQLite 3.40 does) unless the
 * min/max rule applies. */
static void agg_bare_first(Parse *p, AggWork *aw) {
  if (!aw->ai->ncol) return;
  int skip = emit_label(p);
  emit(p, OP_If, aw->loaded_reg, skip, 0);
  agg_bare_load(p, aw);
  emit(p, OP_Integer, 1, aw->loaded_reg, 0);
  emit_resolve(p, skip);
}

/* Per row: step every accumulator from the inputs; load bare columns. */
static void agg_step(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    SqlExpr *e = f->expr;
    int nargs = e->list ? e->list->n : 0;
    int skip = emit_label(p);
    /* a min()/max() with a FILTER: rows it skips load the bare columns only
     * on the group's first row (SQLite's "magnet" register) */
    if (e->filter && aw->minmax && aw->rule_call[i])
      emit(p, OP_Copy, aw->loaded_reg, aw->hit_reg, 0);
    if (e->filter) emit(p, OP_IfNot, aw->filter_reg[i], skip, 1);
    if ((f->func->flags & FUNC_NEEDCOLL) && nargs > 0) {
      const Collation *c = coll_of(p, e->list->a[0].expr);
      vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, c);
    }
    int a = vm_builder_add_p4(&p->b, OP_AggStep, f->distinct_cursor, aw->arg_reg[i], f->acc_reg,
                              P4_FUNC, f->func);
    vm_builder_set_p5(&p->b, a, nargs);
    /* SQLite's rule: each min()/max() call says whether this row became its
     * new best (ties and NULLs after a best do not; a DISTINCT value seen
     * before says nothing); the last call run decides whether the bare
     * columns are loaded from the row */
    if (aw->minmax && aw->rule_call[i]) emit(p, OP_AggHit, aw->hit_reg, 0, 0);
    emit_resolve(p, skip);
  }
  if (aw->minmax) {
    if (ai->ncol) {
      int skip = emit_label(p);
      emit(p, OP_If, aw->hit_reg, skip, 0);
      agg_bare_load(p, aw);
      emit_resolve(p, skip);
    }
    emit(p, OP_Integer, 1, aw->loaded_reg, 0);
  } else {
    agg_bare_first(p, aw);
  }
}

/* Fresh accumulators (start of the query or of a new group). */
static void agg_reset(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    emit(p, OP_Null, 0, f->acc_reg, 0);
    if (f->distinct_cursor >= 0) {
      const Collation *c = coll_of(p, f->expr->list->a[0].expr);
      KeyInfo *ki = parse_keyinfo(p, 1, &c, NULL);
      if (hashable_coll(c))
        vm_builder_add_p4(&p->b, OP_HashAggOpen, f->distinct_cursor, 0, 0, P4_KEYINFO, ki);
      else
        vm_builder_add_p4(&p->b, OP_OpenEphemeral, f->distinct_cursor, 1, 0, P4_KEYINFO, ki);
    }
  }
  if (aw->minmax) emit(p, OP_Integer, 0, aw->hit_reg, 0);
  if (aw->loaded_reg) emit(p, OP_Integer, 0, aw->loaded_reg, 0);
}

static void agg_final(Parse *p, AggWork *aw) {
  AggInfo *ai = aw->ai;
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    int nargs = f->expr->list ? f->expr->list->n : 0;
    if ((f->func->flags & FUNC_NEEDCOLL) && nargs > 0) {
      const Collation *c = coll_of(p, f->expr->list->a[0].expr);
      vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, c);
    }
    vm_builder_add_p4(&p->b, OP_AggFinal, f->acc_reg, nargs, 0, P4_FUNC, f->func);
  }
}

/* The result row of a finished group: HAVING, result columns, output. */
static void agg_output(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, WinCtx *wc) {
  int skip = emit_label(p);
  if (s->having) expr_if_false(p, s->having, skip, 1);
  if (wc) {
    window_push(p, wc); /* the group's row goes to the window passes */
  } else {
    int regs = emit_regs(p, oc->ncol);
    expr_code_list(p, info->result, regs);
    emit_output(p, oc, regs);
  }
  emit_resolve(p, skip);
}

/* Output of a row out of the window passes (window_end). */
typedef struct WinOut {
  OutCtx *oc;
  SelInfo *info;
} WinOut;

static void win_output(Parse *p, void *arg) {
  WinOut *wo = arg;
  int regs = emit_regs(p, wo->oc->ncol);
  expr_code_list(p, wo->info->result, regs);
  emit_output(p, wo->oc, regs);
}

/* GROUP BY through a hash table (vm_hash.c) when every group's state is
 * registers the table can swap: no DISTINCT or ORDER BY inside a call, no
 * window pass, and key collations the table hashes (BINARY, NOCASE, RTRIM).
 * The output order is the sort's: groups by key, each fed in scan order. */
static int hash_group_ok(const AggInfo *ai, const WinCtx *wc, const Collation **coll, int nk) {
  if (wc) return 0;
  for (int i = 0; i < ai->nfunc; i++)
    if (ai->funcs[i].distinct_cursor >= 0 || ai->funcs[i].expr->order) return 0;
  for (int i = 0; i < nk; i++)
    if (!hashable_coll(coll[i])) return 0;
  return 1;
}

/* Output (subroutine l_out) every group of hash cursor hcur in key order,
 * while its key is below the registers at bound (bound 0: all). */
static void hash_groups_out(Parse *p, int hcur, int bound, int ret, int l_out) {
  int top = emit_label(p), done = emit_label(p);
  emit_resolve(p, top);
  emit(p, OP_HashAggNext, hcur, done, bound);
  emit(p, OP_Gosub, ret, l_out, 0);
  emit(p, OP_Goto, 0, top, 0);
  emit_resolve(p, done);
}

static void agg_code(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, WinCtx *wc) {
  AggInfo *ai = parse_alloc(p, sizeof *ai);
  if (!ai) return;
  ai->group_by = s->group_by;
  SqlExprList *res = info->result;
  for (int i = 0; i < res->n; i++)
    if (collect_funcs(p, ai, res->a[i].expr)) return;
  if (collect_funcs(p, ai, s->having)) return;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_funcs(p, ai, s->order_by->a[i].expr)) return;
  for (int i = 0; i < res->n; i++)
    if (collect_cols(p, ai, info->src, res->a[i].expr)) return;
  if (collect_cols(p, ai, info->src, s->having)) return;
  for (int i = 0; s->order_by && i < s->order_by->n; i++)
    if (collect_cols(p, ai, info->src, s->order_by->a[i].expr)) return;
  info->nc.agg = ai;

  AggWork aw;
  memset(&aw, 0, sizeof aw);
  aw.ai = ai;
  aw.src = info->src;
  aw.arg_reg = parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  aw.filter_reg = parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  aw.col_in = parse_alloc(p, sizeof(int) * (size_t)(ai->ncol + 1));
  aw.col_dup = parse_alloc(p, sizeof(int) * (size_t)(ai->ncol + 1));
  if (!aw.arg_reg || !aw.filter_reg || !aw.col_in || !aw.col_dup) return;
  /* the same column read twice (k in "k % 10" and in "k + 1") is one input */
  for (int i = 0; i < ai->ncol; i++) {
    const SqlExpr *e = ai->cols[i].expr;
    aw.col_dup[i] = -1;
    for (int j = 0; j < i && aw.col_dup[i] < 0; j++) {
      const SqlExpr *f = ai->cols[j].expr;
      if (aw.col_dup[j] < 0 && e->op == SQL_E_COLREF && f->op == SQL_E_COLREF &&
          e->cursor == f->cursor && e->column == f->column && e->tab == f->tab &&
          e->depth == f->depth)
        aw.col_dup[i] = j;
    }
  }
  int nk = s->group_by ? s->group_by->n : 0;
  int nin = 0;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    nin += (e->list ? e->list->n : 0) + (e->filter ? 1 : 0);
  }
  for (int i = 0; i < ai->ncol; i++) nin += aw.col_dup[i] < 0;
  /* keys then inputs, contiguous (the sorter record) */
  int kbase = emit_regs(p, nk + nin + 1);
  int r = kbase + nk;
  for (int i = 0; i < ai->nfunc; i++) {
    SqlExpr *e = ai->funcs[i].expr;
    aw.arg_reg[i] = r;
    r += e->list ? e->list->n : 0;
    if (e->filter) aw.filter_reg[i] = r++;
  }
  for (int i = 0; i < ai->ncol; i++) aw.col_in[i] = aw.col_dup[i] < 0 ? r++ : aw.col_in[aw.col_dup[i]];
  aw.in_base = kbase + nk;
  aw.nin = nin;
  ai->first_reg = emit_regs(p, ai->nfunc + ai->ncol + 1);
  for (int i = 0; i < ai->nfunc; i++) {
    AggFunc *f = &ai->funcs[i];
    f->acc_reg = ai->first_reg + i;
    if (f->expr->flags & SQL_EF_DISTINCT) f->distinct_cursor = emit_cursor(p);
  }
  for (int i = 0; i < ai->ncol; i++)
    ai->cols[i].reg = aw.col_dup[i] < 0 ? ai->first_reg + ai->nfunc + i : ai->cols[aw.col_dup[i]].reg;
  aw.rule_call = parse_alloc(p, sizeof(int) * (size_t)(ai->nfunc + 1));
  if (!aw.rule_call) return;
  /* (the rule only picks the row the bare columns are read from) */
  for (int i = 0; ai->ncol > 0 && i < ai->nfunc; i++) {
    const SqlExpr *fe = ai->funcs[i].expr;
    if ((ai->funcs[i].func->flags & FUNC_MINMAX) && fe->list && fe->list->n == 1) {
      aw.minmax = 1;
      aw.rule_call[i] = 1;
    }
  }
  if (aw.minmax) aw.hit_reg = emit_regs(p, 1);
  aw.loaded_reg = emit_regs(p, 1);
  if (ai->ncol) emit(p, OP_Null, 0, ai->first_reg + ai->nfunc, ai->first_reg + ai->nfunc + ai->ncol - 1);
  agg_reset(p, &aw);

  Loop loop;
  if (nk == 0) {
    if (loop_begin(p, info, s, NULL, 0, &loop)) return;
    agg_inputs(p, &aw);
    agg_step(p, &aw);
    loop_end(p, &loop);
    /* replace calls and bare columns by their registers, then output */
    agg_replace(p, &aw);
    agg_final(p, &aw);
    agg_output(p, s, info, oc, wc);
    if (wc) {
      WinOut wo = {oc, info};
      window_end(p, wc, win_output, &wo);
    }
    agg_restore(&aw);
    return;
  }
  /* GROUP BY: rows into a sorter by the keys, then groups in order; or
   * (hash_group_ok) each row stepped at once in its group of a hash table,
   * rows of new keys going to the sorter only once the table is full */
  const Collation **coll = parse_alloc(p, sizeof(Collation *) * (size_t)nk);
  if (!coll) return;
  for (int i = 0; i < nk; i++) coll[i] = coll_of(p, s->group_by->a[i].expr);
  KeyInfo *ki = parse_keyinfo(p, nk, coll, NULL);
  int hcur = hash_group_ok(ai, wc, coll, nk) ? emit_cursor(p) : -1;
  if (hcur >= 0)
    vm_builder_add_p4(&p->b, OP_HashAggOpen, hcur, aw.loaded_reg - ai->first_reg + 1,
                      ai->first_reg, P4_KEYINFO, ki);
  /* the sorter also compares the sequence number: groups keep the rows in
   * the order they came (first row, min/max ties, group_concat order) */
  const Collation **coll2 = parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1));
  if (!coll2) return;
  memcpy(coll2, coll, sizeof(Collation *) * (size_t)nk);
  KeyInfo *ski = parse_keyinfo(p, nk + 1, coll2, NULL);
  int scur = emit_cursor(p);
  vm_builder_add_p4(&p->b, OP_SorterOpen, scur, nk + 1, 0, P4_KEYINFO, ski);
  if (loop_begin(p, info, s, NULL, 0, &loop)) return;
  int srec = emit_regs(p, nk + 1 + nin + 1);
  expr_code_list(p, s->group_by, kbase);
  agg_inputs(p, &aw);
  int l_spill = emit_label(p), l_stepped = emit_label(p);
  if (hcur >= 0) {
    emit(p, OP_HashAggFind, hcur, l_spill, kbase);
    agg_step(p, &aw);
    emit(p, OP_Goto, 0, l_stepped, 0);
  }
  emit_resolve(p, l_spill);
  emit(p, OP_Copy, kbase, srec, nk - 1);
  emit(p, OP_Sequence, scur, srec + nk, 0);
  if (nin) emit(p, OP_Copy, kbase + nk, srec + nk + 1, nin - 1);
  int rec = srec + nk + 1 + nin;
  emit(p, OP_MakeRecord, srec, nk + 1 + nin, rec);
  emit(p, OP_SorterInsert, scur, rec, 0);
  emit_resolve(p, l_stepped);
  loop_end(p, &loop);
  parse_eqp(p, "USE TEMP B-TREE FOR GROUP BY");
  if (hcur >= 0) {
    emit(p, OP_HashAggSave, hcur, 0, 0);
    emit(p, OP_HashAggSort, hcur, 0, 0);
  }

  agg_replace(p, &aw);

  int prev = emit_regs(p, nk);
  int has_group = emit_regs(p, 1);
  int ret = emit_regs(p, 1);
  int rec2 = emit_regs(p, 1);
  int pseudo = emit_cursor(p);
  int l_end = emit_label(p), l_top = emit_label(p), l_new = emit_label(p),
      l_same = emit_label(p), l_first = emit_label(p), l_out = emit_label(p),
      l_fin = emit_label(p), l_rest = emit_label(p);
  emit(p, OP_OpenPseudo, pseudo, rec2, nk + 1 + nin);
  emit(p, OP_Null, 0, prev, prev + nk - 1);
  emit(p, OP_Integer, 0, has_group, 0);
  emit(p, OP_SorterSort, scur, l_fin, 0);
  emit_resolve(p, l_top);
  emit(p, OP_SorterData, scur, rec2, pseudo);
  for (int i = 0; i < nk + nin; i++) emit(p, OP_Column, pseudo, i < nk ? i : i + 1, kbase + i);
  emit(p, OP_IfNot, has_group, l_first, 1);
  vm_builder_add_p4(&p->b, OP_Compare, kbase, prev, nk, P4_KEYINFO, ki);
  emit(p, OP_Jump, l_new, l_same, l_new);
  emit_resolve(p, l_new);
  emit(p, OP_Gosub, ret, l_out, 0);
  if (hcur < 0) agg_reset(p, &aw);
  emit_resolve(p, l_first);
  if (hcur >= 0) {
    /* the hash table's groups (keys disjoint from the sorter's) below this
     * key come first */
    hash_groups_out(p, hcur, kbase, ret, l_out);
    agg_reset(p, &aw);
  }
  emit(p, OP_Copy, kbase, prev, nk - 1);
  emit(p, OP_Integer, 1, has_group, 0);
  emit_resolve(p, l_same);
  agg_step(p, &aw);
  emit(p, OP_SorterNext, scur, l_top, 0);
  emit_resolve(p, l_fin);
  emit(p, OP_IfNot, has_group, l_rest, 1);
  emit(p, OP_Gosub, ret, l_out, 0);
  emit_resolve(p, l_rest);
  if (hcur >= 0) hash_groups_out(p, hcur, 0, ret, l_out);
  emit(p, OP_Goto, 0, l_end, 0);
  /* subroutine: one finished group */
  emit_resolve(p, l_out);
  agg_final(p, &aw);
  agg_output(p, s, info, oc, wc);
  emit(p, OP_Return, ret, 0, 0);
  emit_resolve(p, l_end);
  if (wc) {
    WinOut wo = {oc, info};
    window_end(p, wc, win_output, &wo);
  }
  agg_restore(&aw);
}

/* ---- code: cores and compounds ---- */

static void core_code(Parse *p, SqlSelect *s, OutCtx *oc0) {
  SelInfo *info = s->info;
  OutCtx oc = *oc0;
  /* SQLite drops an arm's own DISTINCT when the arm's rows go straight into
   * a compound's de-duplicating table (UNION, INTERSECT, EXCEPT without an
   * ORDER BY; with one it merges sorted arms and keeps it): the compound's
   * collations alone then decide which rows are equal. */
  int distinct = s->distinct == 1 && oc.dest->kind != SD_EXISTS &&
                 !((oc.dest->kind == SD_UNION || oc.dest->kind == SD_EXCEPT) &&
                   !oc.ordered_compound);
  if (distinct) {
    /* this core's own collations (not the compound's) */
    const Collation **coll = parse_alloc(p, sizeof(Collation *) * (size_t)(oc.ncol + 1));
    if (!coll) return;
    for (int i = 0; i < oc.ncol && i < info->result->n; i++)
      coll[i] = coll_of(p, info->result->a[i].expr);
    KeyInfo *ki = parse_keyinfo(p, oc.ncol, coll, NULL);
    oc.distinct_cur = emit_cursor(p);
    /* the rows seen only need membership: a hash set when it can hash them */
    oc.distinct_hash = 1;
    for (int i = 0; i < oc.ncol; i++)
      if (!hashable_coll(coll[i])) oc.distinct_hash = 0;
    if (oc.distinct_hash)
      vm_builder_add_p4(&p->b, OP_HashAggOpen, oc.distinct_cur, 0, 0, P4_KEYINFO, ki);
    else
      vm_builder_add_p4(&p->b, OP_OpenEphemeral, oc.distinct_cur, oc.ncol, 0, P4_KEYINFO, ki);
  }
  if (s->kind == SQL_SEL_VALUES) {
    if (s->cols && s->cols->n == 1) parse_eqp(p, "SCAN CONSTANT ROW");
    else parse_eqp(p, "SCAN %d CONSTANT ROWS", s->cols ? s->cols->n : 0);
    values_code(p, s, &oc);
    return;
  }
  WinCtx *wc = window_begin(p, s, info);
  if (parse_failed(p)) return;
  if (info->is_agg) {
    agg_code(p, s, info, &oc, wc);
    if (oc.distinct_cur >= 0) parse_eqp(p, "USE TEMP B-TREE FOR DISTINCT");
    return;
  }
  Loop loop;
  SqlExprList *ob = !wc && oc.sorter_cur >= 0 && oc0->order_owner == s ? s->order_by : NULL;
  if (loop_begin(p, info, s, ob, distinct ? WHERE_DISTINCT : 0, &loop)) return;
  if (ob && loop.w && where_order_satisfied(loop.w)) {
    oc.sorter_cur = -1; /* rows already come in order */
    oc0->sorter_cur = -1;
  }
  if (wc) {
    window_push(p, wc);
  } else {
    int regs = emit_regs(p, oc.ncol);
    /* EXISTS never reads the result columns: SQLite does not evaluate them
     * (so their functions make no statement journal, see compile.c) */
    if (oc.dest->kind != SD_EXISTS) expr_code_list(p, info->result, regs);
    emit_output(p, &oc, regs);
  }
  loop_end(p, &loop);
  if (wc) {
    WinOut wo = {&oc, info};
    window_end(p, wc, win_output, &wo);
  }
  if (oc.distinct_cur >= 0) parse_eqp(p, "USE TEMP B-TREE FOR DISTINCT");
}

static void scan_eph(Parse *p, int cur, OutCtx *oc, int filter_cur) {
  int n = oc->ncol;
  int regs = emit_regs(p, n);
  int done = emit_label(p), top = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, cur, done, 0);
  emit_resolve(p, top);
  for (int i = 0; i < n; i++) emit(p, OP_Column, cur, i, regs + i);
  if (filter_cur >= 0) vm_builder_add_i4(&p->b, OP_NotFound, filter_cur, next, regs, n);
  emit_output(p, oc, regs);
  emit_resolve(p, next);
  emit(p, OP_Next, cur, top, 0);
  emit_resolve(p, done);
}

/* One arm of a compound, under its EXPLAIN QUERY PLAN row. */
static void arm_code(Parse *p, SqlSelect *s, OutCtx *oc, const char *label) {
  int save = p->eqp_parent;
  p->eqp_parent = parse_eqp(p, "%s", label);
  core_code(p, s, oc);
  p->eqp_parent = save;
}

static const char *arm_label(int op) {
  switch (op) {
  case SQL_COMPOUND_UNION_ALL: return "UNION ALL";
  case SQL_COMPOUND_INTERSECT: return "INTERSECT USING TEMP B-TREE";
  case SQL_COMPOUND_EXCEPT: return "EXCEPT USING TEMP B-TREE";
  default: return "UNION USING TEMP B-TREE";
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

int select_code(Parse *p, SqlSelect *s, SelectDest *dest) {
  if (parse_failed(p)) return 1;
  if (!s->info || s->info->state != 2) {
    if (select_resolve(p, s, NULL)) return 1;
  }
  SelInfo *info = s->info;
  int n = select_ncol(s);
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
    expr_code(p, s->limit, oc.reg_limit);
    emit(p, OP_MustBeInt, oc.reg_limit, 0, 0);
    emit(p, OP_IfNot, oc.reg_limit, oc.end_label, 1);
    if (s->offset) {
      oc.reg_offset = emit_regs(p, 1);
      int l = emit_label(p);
      expr_code(p, s->offset, oc.reg_offset);
      emit(p, OP_MustBeInt, oc.reg_offset, 0, 0);
      emit(p, OP_IfPos, oc.reg_offset, l, 0);
      emit(p, OP_Integer, 0, oc.reg_offset, 0);
      emit_resolve(p, l);
    }
  }
  /* an ORDER BY makes no difference to EXISTS (SQLite drops it), nor to
   * groups that come out in that order anyway */
  if (s->order_by && info->order_col && dest->kind != SD_EXISTS && !window_sorts_output(p, s) &&
      !group_order_is_order_by(p, s, info))
    sorter_setup(p, &oc, s, s->order_by, info->order_col);
  if (!s->prior) {
    oc.order_owner = s;
    core_code(p, s, &oc);
  } else {
    int save = p->eqp_parent;
    p->eqp_parent = parse_eqp(p, "COMPOUND QUERY");
    if (oc.sorter_cur >= 0) {
      /* every row of the compound into the sorter, then sorted out */
      OutCtx so = oc;
      so.reg_limit = so.reg_offset = 0;
      so.ordered_compound = 1;
      set_code(p, s, &so);
    } else {
      set_code(p, s, &oc);
    }
    p->eqp_parent = save;
  }
  if (oc.sorter_cur >= 0) {
    parse_eqp(p, "USE TEMP B-TREE FOR ORDER BY");
    sorter_output(p, &oc);
  }
  emit_resolve(p, oc.end_label);
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
    if (!has_correl(r->setup) && !has_correl(r->rec)) emit(p, OP_Once, 0, after, 0);
    emit(p, OP_OpenEphemeral, r->cursor, n, 0);
  }
  int q = emit_cursor(p);
  int nk = r->order_by ? r->order_by->n : 0;
  if (nk) {
    /* ORDER BY: the queue hands out its smallest row first (SQLite's
     * priority queue); equal keys leave in the order they came */
    const Collation **coll = parse_alloc(p, sizeof(Collation *) * (size_t)(nk + 1 + n));
    uint8_t *desc = parse_alloc(p, (size_t)(nk + 1 + n));
    if (!coll || !desc) return;
    for (int i = 0; i < nk; i++) {
      SqlExprItem *t = &r->order_by->a[i];
      coll[i] = t->expr->op == SQL_E_COLLATE ? coll_of(p, t->expr)
                                             : compound_coll(p, r->setup, r->order_col[i]);
      desc[i] = t->sort == SQL_SORT_DESC;
    }
    KeyInfo *ki = parse_keyinfo(p, nk + 1 + n, coll, desc);
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
    expr_code(p, r->limit, rl);
    emit(p, OP_MustBeInt, rl, 0, 0);
    emit(p, OP_IfNot, rl, done, 1);
    if (r->offset) {
      ro = emit_regs(p, 1);
      int l = emit_label(p);
      expr_code(p, r->offset, ro);
      emit(p, OP_MustBeInt, ro, 0, 0);
      emit(p, OP_IfPos, ro, l, 0);
      emit(p, OP_Integer, 0, ro, 0);
      emit_resolve(p, l);
    }
  }
  SelectDest dq = {SD_CTEQ, q, 0, dcur + 1, n, NULL, r->order_col, nk};
  int save = p->eqp_parent;
  int top_eqp = parse_eqp(p, "%s %s", co ? "CO-ROUTINE" : "MATERIALIZE",
                          it->name ? it->name : it->tab->name);
  p->eqp_parent = top_eqp;
  p->eqp_parent = parse_eqp(p, "SETUP");
  select_code(p, r->setup, &dq);
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
  p->eqp_parent = parse_eqp(p, "RECURSIVE STEP");
  select_code(p, r->rec, &dq);
  p->eqp_parent = save;
  emit(p, OP_Goto, 0, top, 0);
  emit_resolve(p, done);
  if (co) emit(p, OP_EndCoroutine, co, 0, 0);
  emit_resolve(p, after);
}

static struct RecCte *rec_find(Parse *p, int cursor) {
  SelectState *st = select_state(p);
  for (struct RecCte *r = st ? st->recs : NULL; r; r = r->next)
    if (r->cursor == cursor) return r;
  return NULL;
}

int src_can_coroutine(Parse *p, const SrcItem *it) {
  if (it->kind != SRC_SUBQUERY || !it->sub || parse_failed(p) || it->refill) return 0;
  struct RecCte *r = rec_find(p, it->cursor);
  if (cte_shared(it, r)) return 0; /* one table for every use */
  if (r) return 1;
  if (tvf_find(p, it->cursor) || it->vtab_idx) return 0; /* filled by an op */
  SelectState *st = select_state(p);
  for (struct CookieItem *c = st ? st->cookies : NULL; c; c = c->next)
    if (c->cursor == it->cursor) return 0;
  return !it->cte_materialized; /* WITH x AS MATERIALIZED: SQLite materializes it */
}

void src_code_subquery(Parse *p, SrcItem *it) {
  if (parse_failed(p) || !it || it->kind != SRC_SUBQUERY || !it->sub) return;
  SelectState *st = select_state(p);
  struct RecCte *rc = rec_find(p, it->cursor);
  if (!it->co_reg && cte_shared(it, rc)) {
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
        int n = select_ncol(it->sub);
        emit(p, OP_OpenEphemeral, u->shared, n, 0);
        SelectDest d = {SD_TABLE, u->shared, 0, 0, n, NULL, NULL, 0};
        int save = p->eqp_parent;
        p->eqp_parent = parse_eqp(p, "MATERIALIZE %s", u->cte->name);
        select_code(p, it->sub, &d);
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
  for (struct CookieItem *c = st ? st->cookies : NULL; c; c = c->next)
    if (c->cursor == it->cursor) {
      int r = emit_regs(p, 3);
      emit(p, OP_OpenEphemeral, it->cursor, 1, 0);
      if (c->meta < 0)
        emit(p, OP_Pagecount, 0, r, 0);
      else
        emit(p, OP_ReadCookie, 0, r, c->meta);
      emit(p, OP_MakeRecord, r, 1, r + 1);
      emit(p, OP_NewRowid, it->cursor, r + 2, 0);
      emit(p, OP_Insert, it->cursor, r + 1, r + 2);
      return;
    }
  struct TvfItem *ti = tvf_find(p, it->cursor);
  if (ti) { /* table-valued function: open once; filled now or per loop */
    int opened = emit_label(p);
    emit(p, OP_Once, 0, opened, 0);
    emit(p, OP_OpenEphemeral, it->cursor, it->tab->ncol, 0);
    emit_resolve(p, opened);
    if (!it->refill) tvf_fill(p, ti, it);
    return;
  }
  if (it->co_reg) { /* a co-routine: started again here, yields each row */
    int after = emit_label(p), a = emit_addr(p);
    int n = select_ncol(it->sub);
    emit(p, OP_InitCoroutine, it->co_reg, after, a + 1);
    SelectDest d = {SD_COROUTINE, 0, it->co_reg, it->co_out, n, NULL, NULL, 0};
    int save = p->eqp_parent;
    p->eqp_parent = parse_eqp(p, "CO-ROUTINE %s", it->name ? it->name : it->tab->name);
    select_code(p, it->sub, &d);
    p->eqp_parent = save;
    emit(p, OP_EndCoroutine, it->co_reg, 0, 0);
    emit_resolve(p, after);
    return;
  }
  int correlated = has_correl(it->sub);
  int skip = emit_label(p);
  if (!correlated) emit(p, OP_Once, 0, skip, 0);
  int n = select_ncol(it->sub);
  emit(p, OP_OpenEphemeral, it->cursor, n, 0);
  SelectDest d = {SD_TABLE, it->cursor, 0, 0, n, NULL, NULL, 0};
  int save = p->eqp_parent;
  p->eqp_parent = parse_eqp(p, "MATERIALIZE %s", it->name ? it->name : it->tab->name);
  select_code(p, it->sub, &d);
  p->eqp_parent = save;
  emit_resolve(p, skip);
}
