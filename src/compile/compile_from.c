/*
 * compile_from.c -- the FROM list of a SELECT (and of UPDATE/DELETE/INSERT
 * targets): tables, views and CTEs parsed again per use, subqueries (and
 * the co-routine choice), parenthesized joins as SQLite's nested FROM,
 * USING/NATURAL merged into ON, and the arguments of table-valued items
 * (virtual tables written t(args): json_each, pragma_NAME, a module's own;
 * compile_vtab.c makes the items). Split from compile_select.c at
 * its "FROM lists" and "table-valued functions" banners; the helpers the two files share are sel_*
 * in select_int.h.
 *
 * Owns: the SrcLists it builds (Parse arena).
 *
 * Invariants:
 *  1. A view body (and a CTE body, at each use) is parsed again from its
 *     text into the Parse arena, so no shared AST is ever annotated
 *     (compile_select.c invariant 4).
 */
#include <stdio.h>
#include <string.h>

#include "select_int.h"

/* ---- FROM lists ---- */

SrcItem *compile_src_find_cursor(SrcList *s, int cur) {
  for (int i = 0; s && i < s->n; i++)
    if (s->a[i].cursor == cur) return &s->a[i];
  return NULL;
}

SrcList *compile_src_single(Parse *p, Table *tab, const char *alias) {
  SrcList *s = compile_parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->a = compile_parse_alloc(p, sizeof(SrcItem));
  if (!s->a) return NULL;
  s->n = 1;
  SrcItem *it = &s->a[0];
  it->tab = tab;
  it->name = alias ? alias : tab->name;
  it->kind = SRC_TABLE;
  it->cursor = emit_cursor(p);
  it->idb = compile_parse_table_db(p, tab);
  compile_parse_need_db(p, it->idb, 0);
  return s;
}

int compile_src_indexed_by_ok(Parse *p, const Table *tab, const char *name) {
  if (!name) return 1;
  const Index *x = tab->indexes;
  while (x && util_stricmp(x->name, name) != 0) x = x->next;
  if (x) return 1;
  compile_parse_error(p, "no such index: %s", name);
  return 0;
}

void compile_src_index_hint(SrcList *s, const SqlSrcItem *a) {
  s->a[0].indexed_by = a->indexed_by;
  s->a[0].not_indexed = a->not_indexed;
}

static int count_items(const SqlSrcList *from) {
  int n = 0;
  for (int i = 0; from && i < from->n; i++)
    n += from->a[i].nested && !from->a[i].select ? count_items(from->a[i].nested) : 1;
  return n;
}

SqlExpr *compile_sel_and(Parse *p, SqlExpr *a, SqlExpr *b) {
  if (!a) return b;
  if (!b) return a;
  SqlExpr *e = compile_sel_new_expr(p, SQL_E_BINARY);
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
      compile_parse_error(p, "%s", err);
      shale_free(err);
    } else {
      compile_parse_error(p, "malformed view: %s", v->name);
    }
    return NULL;
  }
  *text = v->sql;
  return st->u.create_view.select;
}

static int add_item(Parse *p, SrcList *s, const SqlSrcItem *a, NameCtx *outer, int jointype,
                    int depth);

static SqlSelect *view_select(Parse *p, const View *v, const char **text);

/* Resolve the arguments of the table-valued functions of src. */
int compile_sel_tvf_resolve(Parse *p, NameCtx *nc, SrcList *src) {
  SelectState *st = compile_select_state(p);
  for (struct TvfItem *ti = st ? st->tvfs : NULL; ti; ti = ti->next) {
    SrcItem *it = compile_src_find_cursor(src, ti->cursor);
    if (!it || ti->resolved) continue;
    ti->resolved = 1;
    for (int k = 0; ti->args && k < ti->args->n; k++)
      if (compile_resolve_expr(p, nc, ti->args->a[k].expr)) return 1;
    it->tvf_args = ti->args;
  }
  return 0;
}

const char *compile_sel_compound_name(int op);
int compile_sel_resolve_compound_order(Parse *p, SqlSelect *head);
int compile_sel_has_correl(const SqlSelect *s);

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
  if (cte->columns && cte->columns->n != compile_select_ncol(s)) {
    compile_parse_error(p, "table %s has %d values for %d columns", cte->name,
                        compile_select_ncol(s), cte->columns->n);
    return 0;
  }
  return 1;
}

static int cte_item(Parse *p, SrcItem *it, const SqlSrcItem *a, struct CteScope *sc, int i,
                    NameCtx *outer) {
  SelectState *st = compile_select_state(p);
  const SqlCte *cte = &sc->with->a[i];
  const char *base = sc->text ? sc->text : p->sql;
  size_t n = (size_t)cte->span.len;
  char *txt = util_arena_alloc(&p->arena, n + 32);
  if (!txt) {
    compile_parse_nomem(p);
    return 1;
  }
  memcpy(txt, "WITH ", 5);
  memcpy(txt + 5, base + cte->span.start, n);
  memcpy(txt + 5 + n, " SELECT 0", 10);
  SqlStmt *stmt = NULL;
  char *err = NULL;
  int rc = sql_parse(&p->arena, txt, -1, &stmt, NULL, &err);
  if (rc || !stmt || stmt->kind != SQL_STMT_SELECT || !stmt->u.select->with) {
    if (err)
      compile_parse_error(p, "%s", err);
    else
      compile_parse_nomem(p);
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
      compile_parse_error(p, "circular reference: %s", cte->name);
      bad = 1;
    } else if (compile_parse_auth(p, AUTH_RECURSIVE, NULL, NULL, NULL) == AUTH_DENY) {
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
      bad = compile_select_resolve(p, setup, outer);
      if (!bad && !cte_width_ok(p, cte, setup)) bad = 1;
      Table *t = bad ? NULL : compile_select_result_table(p, setup, cte->name, cte->columns);
      if (!t) bad = 1;
      NameCtx lnc;
      memset(&lnc, 0, sizeof lnc);
      if (!bad && lim && compile_resolve_expr(p, &lnc, lim)) bad = 1;
      if (!bad && off && compile_resolve_expr(p, &lnc, off)) bad = 1;
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
          bad = compile_select_resolve(p, c, outer);
          c->prior = pr;
        }
        if (!bad) bad = compile_select_resolve(p, rec, outer);
        st->rec_name = sn;
        st->rec_tab = stab;
        st->rec_cursor = scur;
        st->rec_refs = srefs;
        if (!bad && compile_select_ncol(rec) != compile_select_ncol(setup)) {
          compile_parse_error(p,
                              "SELECTs to the left and right of %s do not have the same number of "
                              "result columns",
                              compile_sel_compound_name(op));
          bad = 1;
        }
        int *order_col = NULL;
        if (!bad && ob) {
          /* the CTE's ORDER BY names result columns, as a compound's */
          first->prior = setup;
          first->compound = (uint8_t)op;
          rec->order_by = ob;
          bad = compile_sel_resolve_compound_order(p, rec);
          order_col = rec->info->order_col;
          first->prior = NULL;
          first->compound = 0;
          rec->order_by = NULL;
        }
        struct RecCte *r = bad ? NULL : compile_parse_alloc(p, sizeof *r);
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
          r->ncol = compile_select_ncol(setup);
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
    bad = compile_select_resolve(p, copy, outer);
    if (!bad && !cte_width_ok(p, cte, copy)) bad = 1;
    if (!bad) {
      it->sub = copy;
      it->tab = compile_select_result_table(p, copy, cte->name, cte->columns);
      if (!it->tab) bad = 1;
    }
  }
  st->ctes = save_ctes;
  st->text = save_text;
  if (!bad && !parse_failed(p)) {
    struct CteUse *u = st->cte_uses;
    while (u && u->cte != cte) u = u->next;
    if (!u && (u = compile_parse_alloc(p, sizeof *u))) {
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
int compile_sel_cte_shared(const SrcItem *it, const struct RecCte *r) {
  const struct CteUse *u = it->cte_use;
  if (!u || u->nuse < 2 || u->cte->materialized == 2) return 0;
  if (r) return !compile_sel_has_correl(r->setup) && !compile_sel_has_correl(r->rec);
  return !compile_sel_has_correl(it->sub);
}

/* 1 if a RIGHT or FULL JOIN is written anywhere in the parenthesized list. */
static int nest_has_right(const SqlSrcList *l) {
  for (int i = 0; l && i < l->n; i++) {
    if (l->a[i].jointype & SQL_JOIN_RIGHT) return 1;
    if (!l->a[i].select && nest_has_right(l->a[i].nested)) return 1;
  }
  return 0;
}

void compile_src_nest_ref(Parse *p, SrcList *src, SrcItem *it, int j, SqlExpr *e, int depth) {
  if (it->sub == it->nest) {
    compile_sel_colref(e, it, j);
    e->depth = (uint8_t)depth;
    return;
  }
  const SqlExpr *r = it->nest->info->result->a[j].expr;
  SrcItem *in = r->op == SQL_E_COLREF ? compile_src_find_cursor(src, r->cursor) : NULL;
  if (!in) { /* not a column (the authorizer made it NULL) */
    SqlSpan sp = e->span;
    *e = *r;
    e->span = sp;
    return;
  }
  compile_sel_colref(e, in, r->column);
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
  SelectState *st = compile_select_state(p);
  SqlSelect *sel = compile_parse_alloc(p, sizeof *sel);
  SqlExpr *star = compile_sel_new_expr(p, SQL_E_STAR);
  if (!st || !sel || !star) return 1;
  star->span = a->span;
  sel->span = a->span;
  sel->kind = SQL_SEL_SELECT;
  sel->from = a->nested;
  if (!(sel->cols = compile_sel_list_add(p, NULL, star))) return 1;
  sel->cols->a[0].span = a->span;
  int flat = !(a->jointype & (SQL_JOIN_LEFT | SQL_JOIN_RIGHT | SQL_JOIN_NATURAL)) &&
             !a->using_cols && !nest_has_right(a->nested);
  SelInfo *si = compile_sel_info(p, sel, 1);
  if (!si) return 1;
  si->nested_from = 1;
  si->nest_flat = (uint8_t)flat;
  if (compile_select_resolve(p, sel, outer)) return 1;
  char nm[40];
  /* SQLite's number for the SELECT it makes here (a view's or CTE's text:
   * one more than the last) */
  snprintf(nm, sizeof nm, "(join-%d)",
           st->text == p->sql ? compile_nest_number(p, a) : ++st->nsubquery);
  Table *t = compile_select_result_table(p, sel, a->alias ? a->alias : nm, NULL);
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
        SqlSrcItem *c = compile_parse_alloc(p, sizeof *c);
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
  SelectState *st0 = compile_select_state(p);
  if (!st0) return 1;
  if (!a->select && !a->schema && st0->rec_name && util_stricmp(st0->rec_name, a->name) == 0) {
    /* the recursive part's reference to its own CTE: the current row */
    if (st0->rec_refs++) {
      compile_parse_error(p, "multiple references to recursive table: %s", a->name);
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
    if (compile_select_resolve(p, a->select, outer)) return 1;
    it->name = a->alias;
    char sqname[40];
    snprintf(sqname, sizeof sqname, "(subquery-%d)",
             st0->text == p->sql
                 ? compile_cores_before(p, a->select->span.start + a->select->span.len) + 1
                 : ++st0->nsubquery);
    it->tab = compile_select_result_table(p, a->select, a->alias ? a->alias : sqname, NULL);
    if (!it->tab) return 1;
  } else {
    if (a->schema && compile_parse_find_db(p, a->schema) < 0 &&
        (compile_parse_ndb(p) > 1 ||
         (util_stricmp(a->schema, "main") != 0 && util_stricmp(a->schema, "temp") != 0))) {
      /* SQLite 3.40.1 finds an eponymous module under any schema name */
      int rc = compile_vtab_from_item(p, it, a);
      if (rc < 0) compile_parse_error(p, "no such table: %s.%s", a->schema, a->name);
      if (rc) return 1;
      s->n++;
      return 0;
    }
    if (a->has_args) {
      int rc = compile_vtab_schema_item(p, it, a);       /* t('x') of a virtual table t */
      if (rc < 0) rc = compile_vtab_from_item(p, it, a); /* an eponymous module (compile_vtab.c) */
      if (rc < 0) compile_parse_error(p, "no such table: %s", a->name);
      if (rc) return 1;
      s->n++;
      return 0;
    }
    it->name = a->alias ? a->alias : a->name;
    int tdb = 0, vdb = 0;
    const char *zdb = compile_parse_ndb(p) > 1 ? a->schema : NULL;
    Table *t = compile_parse_find_object(p, PARSE_OBJ_TABLE, zdb, a->name, &tdb);
    if (t && t->vtab_module && !(t = compile_parse_vtab_connect(p, t, tdb))) return 1;
    if (t) {
      it->kind = SRC_TABLE;
      it->tab = t;
      it->idb = tdb;
      compile_parse_need_db(p, tdb, 0);
    } else {
      View *v = compile_parse_find_object(p, PARSE_OBJ_VIEW, zdb, a->name, &vdb);
      if (!v) {
        int rc = compile_vtab_from_item(p, it, a);
        if (rc >= 0) {
          if (rc) return 1;
          s->n++;
          return 0;
        }
      }
      if (!v) {
        if (a->schema)
          compile_parse_error(p, "no such table: %s.%s", a->schema, a->name);
        else if (p->scope_db1 > 0) /* in a view or trigger of main or an attached db */
          compile_parse_error(p, "no such table: %s.%s", compile_parse_db_name(p, p->scope_db1 - 1),
                              a->name);
        else
          compile_parse_error(p, "no such table: %s", a->name);
        return 1;
      }
      if (p->env && p->env->no_views && vdb != 1) { /* SQLITE_DBCONFIG_ENABLE_VIEW off */
        compile_parse_error(p, "access to view \"%s\" prohibited", a->name);
        return 1;
      }
      if (depth > 64) {
        compile_parse_error(p, "view %s is circularly defined", a->name);
        return 1;
      }
      const char *text = NULL;
      SqlSelect *sel = view_select(p, v, &text);
      if (!sel) return 1;
      SelectState *st = compile_select_state(p);
      if (!st) return 1;
      const char *save = st->text;
      st->text = text;
      p->in_view++;
      if (vdb != 1) p->from_ddl++; /* not a TEMP view */
      int save_scope = p->scope_db1;
      if (compile_parse_ndb(p) > 1) p->scope_db1 = vdb == 1 ? 0 : vdb + 1; /* its own database */
      int rc = compile_select_resolve(p, sel, NULL);
      p->scope_db1 = save_scope;
      if (vdb != 1) p->from_ddl--;
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
      it->tab = compile_select_result_table(p, sel, v->name, v->ncol ? &ids : NULL);
      if (!it->tab) return 1;
      compile_parse_need_db(p, vdb, 0);
    }
  }
  s->n++;
  return 0;
}

SrcList *compile_src_from_ast(Parse *p, const SqlSrcList *from, NameCtx *outer) {
  SrcList *s = compile_parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  int n = count_items(from);
  if (n > 64) {
    compile_parse_error(p, "at most 64 tables in a join");
    return NULL;
  }
  s->a = compile_parse_alloc(p, sizeof(SrcItem) * (size_t)(n ? n : 1));
  if (!s->a) return NULL;
  if (from && add_items(p, s, from, outer, 0)) return NULL;
  if (!compile_src_extras(p, s, 1)) return NULL;
  return parse_failed(p) ? NULL : s;
}

/* Column name of the item at k seen as one FROM item (a flattened
 * parenthesized join through its own column names): the item it reads in
 * *item and the column in *col; 0 if it has none. */
static int level_col(SrcList *s, int k, const char *name, int *item, int *col) {
  SrcItem *it = &s->a[k];
  if (!it->tab || it->in_nest) return 0;
  if (it->nest && it->nest != it->sub) {
    int j = schema_table_column_index(it->nest_tab, name);
    const SqlExpr *r = j >= 0 ? it->nest->info->result->a[j].expr : NULL;
    SrcItem *in = r && r->op == SQL_E_COLREF ? compile_src_find_cursor(s, r->cursor) : NULL;
    if (!in) return 0;
    *item = (int)(in - s->a);
    *col = r->column;
    return 1;
  }
  int j = schema_table_column_index(it->tab, name);
  if (j < 0) return 0;
  *item = k;
  *col = j;
  return 1;
}

/* First item left of i having column name; its column in *col. */
int compile_sel_left_item_with(SrcList *s, int i, const char *name, int *col) {
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
  return schema_table_column_index(it->tab, name) >= 0 &&
         compile_sel_left_item_with(s, k, name, &lc) >= 0;
}

static int join_term(Parse *p, SrcList *s, int i, const char *name, const char **ambig) {
  int lcol, rcol = schema_table_column_index(s->a[i].tab, name);
  int k = compile_sel_left_item_with(s, i, name, &lcol);
  if (k < 0 || rcol < 0) {
    compile_parse_error(p, "cannot join using column %s - column not present in both tables", name);
    return 1;
  }
  SqlExpr *l = compile_sel_new_expr(p, SQL_E_COLREF), *r = compile_sel_new_expr(p, SQL_E_COLREF);
  SqlExpr *eq = compile_sel_new_expr(p, SQL_E_BINARY);
  if (!l || !r || !eq) return 1;
  compile_sel_colref(l, &s->a[k], lcol);
  compile_sel_colref(r, &s->a[i], rcol);
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
      SqlExpr *x = compile_sel_new_expr(p, SQL_E_COLREF);
      if (!x || (!args && !(args = compile_sel_list_add(p, NULL, l))) ||
          !compile_sel_list_add(p, args, x))
        return 1;
      compile_sel_colref(x, &s->a[item], col);
    }
    if (args) {
      const FuncDef *f =
          p->env && p->env->funcs ? func_find(p->env->funcs, "coalesce", args->n) : NULL;
      SqlExpr *c = compile_sel_new_expr(p, SQL_E_FUNC);
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
  s->a[i].on = compile_sel_and(p, s->a[i].on, eq);
  struct SrcX *x = compile_src_extras(p, s, 1);
  if (!x) return 1;
  x->merged[i] |= (uint64_t)1 << (rcol >= 63 ? 63 : rcol);
  if (s->a[i].jointype & SQL_JOIN_RIGHT) {
    if (x->npairs == x->cappairs) {
      int cap = x->cappairs ? x->cappairs * 2 : 4;
      struct SrcPair *a = compile_parse_alloc(p, sizeof *a * (size_t)cap);
      if (!a) return 1;
      if (x->npairs) memcpy(a, x->pairs, sizeof *a * (size_t)x->npairs);
      x->pairs = a;
      x->cappairs = cap;
    }
    x->pairs[x->npairs++] = (struct SrcPair){k, lcol, i, rcol};
  }
  return 0;
}

int compile_src_coalesce_ref(Parse *p, SrcList *s, int item, int col, SqlExpr *e) {
  struct SrcX *x = compile_src_extras(p, s, 0);
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
    int j = schema_table_column_index(it->tab, name);
    if (j < 0 || !(x->merged[k] & ((uint64_t)1 << (j >= 63 ? 63 : j)))) continue;
    if (jt == SQL_JOIN_RIGHT) n = 0;
    chain[n] = k;
    ccol[n++] = j;
  }
  if (n == 1 && chain[0] == item) return 0;
  uint8_t d = e->depth;
  if (n == 1) { /* RIGHT JOIN: the right item's column (never NULL-padded) */
    compile_sel_colref(e, &s->a[chain[0]], ccol[0]);
    e->depth = d;
    return 1;
  }
  const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, "coalesce", n) : NULL;
  SqlExprList *args = NULL;
  if (!f) return 0;
  for (int i = 0; i < n; i++) {
    SqlExpr *c = compile_sel_new_expr(p, SQL_E_COLREF);
    if (!c || !(args = compile_sel_list_add(p, args, c))) return 0;
    compile_sel_colref(c, &s->a[chain[i]], ccol[i]);
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

int compile_src_resolve_joins(Parse *p, SrcList *s) {
  const char *ambig = NULL;
  for (int i = 1; s && i < s->n; i++) {
    SrcItem *it = &s->a[i];
    const SqlSrcItem *a = it->ast;
    if (!a || it->in_nest) continue; /* a flattened join's items were joined inside it */
    if (it->jointype & SQL_JOIN_NATURAL) {
      if (a->on || a->using_cols) {
        compile_parse_error(p, "a NATURAL join may not have an ON or USING clause");
        return 1;
      }
      for (int j = 0; j < it->tab->ncol; j++) {
        if (it->tab->cols[j].hidden == COL_HIDDEN) continue;
        int lc;
        if (compile_sel_left_item_with(s, i, it->tab->cols[j].name, &lc) < 0) continue;
        if (join_term(p, s, i, it->tab->cols[j].name, &ambig)) return 1;
      }
    } else if (a->using_cols) {
      for (int j = 0; j < a->using_cols->n; j++)
        if (join_term(p, s, i, a->using_cols->a[j], &ambig)) return 1;
    }
  }
  if (ambig) compile_parse_error(p, "ambiguous reference to %s in USING()", ambig);
  return parse_failed(p);
}
