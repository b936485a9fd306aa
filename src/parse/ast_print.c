/*
 * ast_print.c -- the AST as S-expression text, for tests and debugging.
 *
 * Shapes: literals as written ('str' re-quoted), names bare, operators as
 * (OP a b), e.g. "SELECT 1 < 2 = 1" prints (SELECT (COLS (= (< 1 2) 1))).
 *
 * Invariants:
 *  1. Output is a pure function of the AST (spans are not printed).
 *  2. Out-of-memory yields NULL and frees the partial buffer (the text is
 *     built in util.h's StrBuf, whose errors stick).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"

static void quoted(StrBuf *b, const char *s) {
  strbuf_appendz(b, "'");
  for (; *s; s++) {
    if (*s == '\'') strbuf_appendz(b, "'");
    strbuf_append(b, s, 1);
  }
  strbuf_appendz(b, "'");
}

const char *sql_op_text(int tk) {
  switch (tk) {
    case TK_EQ:
      return "=";
    case TK_NE:
      return "<>";
    case TK_LT:
      return "<";
    case TK_LE:
      return "<=";
    case TK_GT:
      return ">";
    case TK_GE:
      return ">=";
    case TK_PLUS:
      return "+";
    case TK_MINUS:
      return "-";
    case TK_STAR:
      return "*";
    case TK_SLASH:
      return "/";
    case TK_REM:
      return "%";
    case TK_CONCAT:
      return "||";
    case TK_BITAND:
      return "&";
    case TK_BITOR:
      return "|";
    case TK_BITNOT:
      return "~";
    case TK_LSHIFT:
      return "<<";
    case TK_RSHIFT:
      return ">>";
    default: {
      const char *k = sql_keyword_name(tk);
      return k ? k : "?";
    }
  }
}

static void expr(StrBuf *b, const SqlExpr *e);
static void select_(StrBuf *b, const SqlSelect *s);

static void list(StrBuf *b, const SqlExprList *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    strbuf_appendz(b, " ");
    const SqlExprItem *it = &l->a[i];
    int wrap = it->name || it->sort || it->nulls || it->nnames;
    if (wrap) strbuf_appendz(b, "(");
    if (it->nnames) {
      strbuf_appendz(b, "(");
      for (int j = 0; j < it->nnames; j++) strbuf_printf(b, "%s%s", j ? " " : "", it->names[j]);
      strbuf_appendz(b, ") ");
    } else if (it->name && !it->sort) {
      strbuf_printf(b, "AS %s ", it->name);
    }
    expr(b, it->expr);
    if (it->sort) strbuf_appendz(b, it->sort == SQL_SORT_ASC ? " ASC" : " DESC");
    if (it->nulls) strbuf_appendz(b, it->nulls == SQL_NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST");
    if (wrap) strbuf_appendz(b, ")");
  }
}

static void idlist(StrBuf *b, const SqlIdList *l) {
  strbuf_appendz(b, "(");
  for (int i = 0; l && i < l->n; i++) strbuf_printf(b, "%s%s", i ? " " : "", l->a[i]);
  strbuf_appendz(b, ")");
}

static const char *bound_text(int t) {
  switch (t) {
    case SQL_BOUND_UNBOUNDED_PRECEDING:
      return "UNBOUNDED PRECEDING";
    case SQL_BOUND_PRECEDING:
      return "PRECEDING";
    case SQL_BOUND_CURRENT_ROW:
      return "CURRENT ROW";
    case SQL_BOUND_FOLLOWING:
      return "FOLLOWING";
    case SQL_BOUND_UNBOUNDED_FOLLOWING:
      return "UNBOUNDED FOLLOWING";
    default:
      return "";
  }
}

static void window(StrBuf *b, const SqlWindow *w) {
  strbuf_appendz(b, "(WINDOW");
  if (w->name) strbuf_printf(b, " %s", w->name);
  if (w->base) strbuf_printf(b, " (BASE %s)", w->base);
  if (w->partition) {
    strbuf_appendz(b, " (PARTITION");
    list(b, w->partition);
    strbuf_appendz(b, ")");
  }
  if (w->order) {
    strbuf_appendz(b, " (ORDER");
    list(b, w->order);
    strbuf_appendz(b, ")");
  }
  if (w->frame) {
    static const char *const fr[] = {"", "ROWS", "RANGE", "GROUPS"};
    strbuf_printf(b, " (%s ", fr[w->frame]);
    if (w->start_expr) {
      expr(b, w->start_expr);
      strbuf_appendz(b, " ");
    }
    strbuf_appendz(b, bound_text(w->start));
    strbuf_appendz(b, " ");
    if (w->end_expr) {
      expr(b, w->end_expr);
      strbuf_appendz(b, " ");
    }
    strbuf_appendz(b, bound_text(w->end));
    if (w->exclude) {
      static const char *const ex[] = {"", "NO OTHERS", "CURRENT ROW", "GROUP", "TIES"};
      strbuf_printf(b, " EXCLUDE %s", ex[w->exclude]);
    }
    strbuf_appendz(b, ")");
  }
  strbuf_appendz(b, ")");
}

static void expr(StrBuf *b, const SqlExpr *e) {
  if (!e) {
    strbuf_appendz(b, "nil");
    return;
  }
  const char *not_ = (e->flags & SQL_EF_NOT) ? "NOT " : "";
  switch (e->op) {
    case SQL_E_NULL:
      strbuf_appendz(b, "NULL");
      break;
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
    case SQL_E_VARIABLE:
      strbuf_appendz(b, e->z);
      break;
    case SQL_E_STRING:
      quoted(b, e->z);
      break;
    case SQL_E_BLOB:
      strbuf_printf(b, "x'%s'", e->z);
      break;
    case SQL_E_CTIME:
      strbuf_appendz(b, sql_keyword_name(e->sub));
      break;
    case SQL_E_ID:
      strbuf_appendz(b, e->z);
      break;
    case SQL_E_COLUMN:
      if (e->schema) strbuf_printf(b, "%s.", e->schema);
      strbuf_printf(b, "%s.%s", e->table, e->z);
      break;
    case SQL_E_STAR:
      if (e->table) strbuf_printf(b, "%s.", e->table);
      strbuf_appendz(b, "*");
      break;
    case SQL_E_UNARY:
      strbuf_printf(b, "(%s ", sql_op_text(e->sub));
      expr(b, e->a);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_BINARY:
    case SQL_E_ISNOT:
      if (e->sub == TK_PTR)
        strbuf_printf(b, "(%s ", e->z);
      else
        strbuf_printf(b, "(%s ", e->op == SQL_E_ISNOT ? "IS NOT" : sql_op_text(e->sub));
      expr(b, e->a);
      strbuf_appendz(b, " ");
      expr(b, e->b);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL:
      strbuf_printf(b, "(%s ", e->op == SQL_E_ISNULL ? "ISNULL" : "NOTNULL");
      expr(b, e->a);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_LIKE:
      strbuf_printf(b, "(%s%s ", not_, sql_op_text(e->sub));
      expr(b, e->a);
      strbuf_appendz(b, " ");
      expr(b, e->b);
      if (e->c) {
        strbuf_appendz(b, " (ESCAPE ");
        expr(b, e->c);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_E_BETWEEN:
      strbuf_printf(b, "(%sBETWEEN ", not_);
      expr(b, e->a);
      strbuf_appendz(b, " ");
      expr(b, e->b);
      strbuf_appendz(b, " ");
      expr(b, e->c);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_IN:
      strbuf_printf(b, "(%sIN ", not_);
      expr(b, e->a);
      if (e->select) {
        strbuf_appendz(b, " ");
        select_(b, e->select);
      } else if (e->table) {
        strbuf_appendz(b, " (TABLE ");
        if (e->schema) strbuf_printf(b, "%s.", e->schema);
        strbuf_appendz(b, e->table);
        list(b, e->list);
        strbuf_appendz(b, ")");
      } else {
        strbuf_appendz(b, " (LIST");
        list(b, e->list);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_E_EXISTS:
    case SQL_E_SUBQUERY:
      strbuf_appendz(b, e->op == SQL_E_EXISTS ? "(EXISTS " : "(SUBQUERY ");
      select_(b, e->select);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_ROW:
      strbuf_appendz(b, "(ROW");
      list(b, e->list);
      strbuf_appendz(b, ")");
      break;
    case SQL_E_COLLATE:
      strbuf_appendz(b, "(COLLATE ");
      expr(b, e->a);
      strbuf_printf(b, " %s)", e->z);
      break;
    case SQL_E_CAST:
      strbuf_appendz(b, "(CAST ");
      expr(b, e->a);
      strbuf_printf(b, " %s)", e->z);
      break;
    case SQL_E_CASE:
      strbuf_appendz(b, "(CASE");
      if (e->a) {
        strbuf_appendz(b, " ");
        expr(b, e->a);
      }
      for (int i = 0; e->list && i + 1 < e->list->n; i += 2) {
        strbuf_appendz(b, " (WHEN ");
        expr(b, e->list->a[i].expr);
        strbuf_appendz(b, " ");
        expr(b, e->list->a[i + 1].expr);
        strbuf_appendz(b, ")");
      }
      if (e->b) {
        strbuf_appendz(b, " (ELSE ");
        expr(b, e->b);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_E_FUNC:
      strbuf_printf(b, "(CALL %s", e->z);
      if (e->flags & SQL_EF_DISTINCT) strbuf_appendz(b, " DISTINCT");
      if (e->flags & SQL_EF_STAR) strbuf_appendz(b, " *");
      list(b, e->list);
      if (e->order) {
        strbuf_appendz(b, " (ORDER");
        list(b, e->order);
        strbuf_appendz(b, ")");
      }
      if (e->filter) {
        strbuf_appendz(b, " (FILTER ");
        expr(b, e->filter);
        strbuf_appendz(b, ")");
      }
      if (e->over) {
        strbuf_appendz(b, " (OVER ");
        window(b, e->over);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_E_RAISE:
      strbuf_printf(b, "(RAISE %s", sql_keyword_name(e->sub));
      if (e->z) {
        strbuf_appendz(b, " ");
        quoted(b, e->z);
      }
      strbuf_appendz(b, ")");
      break;
    default:
      strbuf_appendz(b, "?");
      break;
  }
}

static const char *join_text(int jt, char *buf) {
  if (jt == SQL_JOIN_COMMA) return ",";
  buf[0] = 0;
  if (jt & SQL_JOIN_NATURAL) strcat(buf, "NATURAL ");
  if ((jt & SQL_JOIN_LEFT) && (jt & SQL_JOIN_RIGHT))
    strcat(buf, "FULL ");
  else if (jt & SQL_JOIN_LEFT)
    strcat(buf, "LEFT ");
  else if (jt & SQL_JOIN_RIGHT)
    strcat(buf, "RIGHT ");
  if (jt & SQL_JOIN_CROSS)
    strcat(buf, "CROSS ");
  else if (jt & SQL_JOIN_INNER)
    strcat(buf, "INNER ");
  strcat(buf, "JOIN");
  return buf;
}

static void srclist(StrBuf *b, const SqlSrcList *l) {
  for (int i = 0; l && i < l->n; i++) {
    const SqlSrcItem *it = &l->a[i];
    char jb[64];
    if (i) strbuf_printf(b, " (%s)", join_text(it->jointype, jb));
    strbuf_appendz(b, " (");
    if (it->select) {
      select_(b, it->select);
    } else if (it->nested) {
      strbuf_appendz(b, "NEST");
      srclist(b, it->nested);
    } else {
      if (it->schema) strbuf_printf(b, "%s.", it->schema);
      strbuf_appendz(b, it->name);
      if (it->has_args) {
        strbuf_appendz(b, " (ARGS");
        list(b, it->args);
        strbuf_appendz(b, ")");
      }
    }
    if (it->alias) strbuf_printf(b, " AS %s", it->alias);
    if (it->indexed_by) strbuf_printf(b, " INDEXED BY %s", it->indexed_by);
    if (it->not_indexed) strbuf_appendz(b, " NOT INDEXED");
    if (it->on) {
      strbuf_appendz(b, " (ON ");
      expr(b, it->on);
      strbuf_appendz(b, ")");
    }
    if (it->using_cols) {
      strbuf_appendz(b, " (USING ");
      idlist(b, it->using_cols);
      strbuf_appendz(b, ")");
    }
    strbuf_appendz(b, ")");
  }
}

static void with_(StrBuf *b, const SqlWith *w) {
  strbuf_appendz(b, w->recursive ? "(WITH RECURSIVE" : "(WITH");
  for (int i = 0; i < w->n; i++) {
    const SqlCte *c = &w->a[i];
    strbuf_printf(b, " (%s", c->name);
    if (c->columns) {
      strbuf_appendz(b, " ");
      idlist(b, c->columns);
    }
    if (c->materialized)
      strbuf_appendz(b, c->materialized == 1 ? " MATERIALIZED" : " NOT MATERIALIZED");
    strbuf_appendz(b, " ");
    select_(b, c->select);
    strbuf_appendz(b, ")");
  }
  strbuf_appendz(b, ") ");
}

static void core(StrBuf *b, const SqlSelect *s) {
  if (s->kind == SQL_SEL_VALUES) {
    strbuf_appendz(b, "(VALUES");
    list(b, s->cols);
    strbuf_appendz(b, ")");
    return;
  }
  strbuf_appendz(b, "(SELECT");
  if (s->distinct == 1) strbuf_appendz(b, " DISTINCT");
  if (s->distinct == 2) strbuf_appendz(b, " ALL");
  strbuf_appendz(b, " (COLS");
  list(b, s->cols);
  strbuf_appendz(b, ")");
  if (s->from) {
    strbuf_appendz(b, " (FROM");
    srclist(b, s->from);
    strbuf_appendz(b, ")");
  }
  if (s->where) {
    strbuf_appendz(b, " (WHERE ");
    expr(b, s->where);
    strbuf_appendz(b, ")");
  }
  if (s->group_by) {
    strbuf_appendz(b, " (GROUP");
    list(b, s->group_by);
    strbuf_appendz(b, ")");
  }
  if (s->having) {
    strbuf_appendz(b, " (HAVING ");
    expr(b, s->having);
    strbuf_appendz(b, ")");
  }
  for (const SqlWindow *w = s->windows; w; w = w->next) {
    strbuf_appendz(b, " ");
    window(b, w);
  }
  strbuf_appendz(b, ")");
}

static void order_limit(StrBuf *b, const SqlExprList *order, const SqlExpr *limit,
                        const SqlExpr *offset) {
  if (order) {
    strbuf_appendz(b, " (ORDER");
    list(b, order);
    strbuf_appendz(b, ")");
  }
  if (limit) {
    strbuf_appendz(b, " (LIMIT ");
    expr(b, limit);
    strbuf_appendz(b, ")");
  }
  if (offset) {
    strbuf_appendz(b, " (OFFSET ");
    expr(b, offset);
    strbuf_appendz(b, ")");
  }
}

static void compound(StrBuf *b, const SqlSelect *s) {
  if (!s->prior) {
    core(b, s);
    return;
  }
  static const char *const names[] = {"", "UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
  strbuf_printf(b, "(%s ", names[s->compound]);
  compound(b, s->prior);
  strbuf_appendz(b, " ");
  core(b, s);
  strbuf_appendz(b, ")");
}

static void select_(StrBuf *b, const SqlSelect *s) {
  if (!s) {
    strbuf_appendz(b, "nil");
    return;
  }
  int wrap = s->with || s->order_by || s->limit;
  if (wrap) strbuf_appendz(b, "(QUERY ");
  if (s->with) with_(b, s->with);
  compound(b, s);
  order_limit(b, s->order_by, s->limit, s->offset);
  if (wrap) strbuf_appendz(b, ")");
}

static const char *oe_text(int oe) {
  static const char *const t[] = {"", "ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE"};
  return t[oe];
}

static void qualname(StrBuf *b, const SqlQualName *q) {
  if (q->schema) strbuf_printf(b, "%s.", q->schema);
  strbuf_appendz(b, q->name ? q->name : "nil");
}

static void constraint(StrBuf *b, const SqlConstraint *c) {
  static const char *const names[] = {"PRIMARY KEY", "NOT NULL", "NULL",    "UNIQUE",
                                      "CHECK",       "DEFAULT",  "COLLATE", "REFERENCES",
                                      "FOREIGN KEY", "GENERATED"};
  strbuf_printf(b, " (%s", names[c->type]);
  if (c->name) strbuf_printf(b, " (NAME %s)", c->name);
  if (c->sort) strbuf_appendz(b, c->sort == SQL_SORT_ASC ? " ASC" : " DESC");
  if (c->columns) list(b, c->columns);
  if (c->expr) {
    strbuf_appendz(b, " ");
    expr(b, c->expr);
  }
  if (c->collate) strbuf_printf(b, " %s", c->collate);
  if (c->stored) strbuf_appendz(b, " STORED");
  if (c->on_conflict) strbuf_printf(b, " (ON CONFLICT %s)", oe_text(c->on_conflict));
  if (c->autoincrement) strbuf_appendz(b, " AUTOINCREMENT");
  if (c->fk) {
    static const char *const act[] = {"",        "SET NULL", "SET DEFAULT",
                                      "CASCADE", "RESTRICT", "NO ACTION"};
    if (c->fk->from_cols) {
      strbuf_appendz(b, " ");
      idlist(b, c->fk->from_cols);
    }
    strbuf_printf(b, " %s", c->fk->table);
    if (c->fk->to_cols) {
      strbuf_appendz(b, " ");
      idlist(b, c->fk->to_cols);
    }
    if (c->fk->on_delete) strbuf_printf(b, " (ON DELETE %s)", act[c->fk->on_delete]);
    if (c->fk->on_update) strbuf_printf(b, " (ON UPDATE %s)", act[c->fk->on_update]);
    if (c->fk->match) strbuf_printf(b, " (MATCH %s)", c->fk->match);
    if (c->fk->deferrable) strbuf_printf(b, " (DEFERRABLE %d)", c->fk->deferrable);
  }
  strbuf_appendz(b, ")");
}

static void column(StrBuf *b, const SqlColumnDef *c) {
  strbuf_printf(b, " (COLUMN %s", c->name);
  if (c->type) strbuf_printf(b, " (TYPE %s)", c->type);
  for (int i = 0; i < c->ncons; i++) constraint(b, &c->cons[i]);
  strbuf_appendz(b, ")");
}

static void returning(StrBuf *b, const SqlExprList *r) {
  if (!r) return;
  strbuf_appendz(b, " (RETURNING");
  list(b, r);
  strbuf_appendz(b, ")");
}

static void stmt(StrBuf *b, const SqlStmt *s);

static void set_list(StrBuf *b, const SqlExprList *l) {
  strbuf_appendz(b, " (SET");
  for (int i = 0; i < l->n; i++) {
    const SqlExprItem *it = &l->a[i];
    strbuf_appendz(b, " (");
    if (it->nnames) {
      strbuf_appendz(b, "(");
      for (int j = 0; j < it->nnames; j++) strbuf_printf(b, "%s%s", j ? " " : "", it->names[j]);
      strbuf_appendz(b, ")");
    } else {
      strbuf_appendz(b, it->name);
    }
    strbuf_appendz(b, " ");
    expr(b, it->expr);
    strbuf_appendz(b, ")");
  }
  strbuf_appendz(b, ")");
}

static void target(StrBuf *b, const SqlSrcItem *t) {
  strbuf_appendz(b, " ");
  if (t->schema) strbuf_printf(b, "%s.", t->schema);
  strbuf_appendz(b, t->name);
  if (t->alias) strbuf_printf(b, " (AS %s)", t->alias);
  if (t->indexed_by) strbuf_printf(b, " (INDEXED BY %s)", t->indexed_by);
  if (t->not_indexed) strbuf_appendz(b, " (NOT INDEXED)");
}

static void stmt(StrBuf *b, const SqlStmt *s) {
  if (s->explain) strbuf_appendz(b, s->explain == 1 ? "(EXPLAIN " : "(EXPLAIN QUERY PLAN ");
  switch (s->kind) {
    case SQL_STMT_SELECT:
      select_(b, s->u.select);
      break;
    case SQL_STMT_INSERT: {
      const SqlInsert *in = &s->u.insert;
      strbuf_appendz(b, "(INSERT");
      if (in->with) {
        strbuf_appendz(b, " ");
        with_(b, in->with);
      }
      if (in->or_conflict) strbuf_printf(b, " (OR %s)", oe_text(in->or_conflict));
      strbuf_appendz(b, " ");
      qualname(b, &in->table);
      if (in->alias) strbuf_printf(b, " (AS %s)", in->alias);
      if (in->columns) {
        strbuf_appendz(b, " ");
        idlist(b, in->columns);
      }
      if (in->select) {
        strbuf_appendz(b, " ");
        select_(b, in->select);
      } else {
        strbuf_appendz(b, " DEFAULT VALUES");
      }
      for (const SqlUpsert *u = in->upsert; u; u = u->next) {
        strbuf_appendz(b, " (ON CONFLICT");
        if (u->target) {
          strbuf_appendz(b, " (TARGET");
          list(b, u->target);
          strbuf_appendz(b, ")");
        }
        if (u->target_where) {
          strbuf_appendz(b, " (WHERE ");
          expr(b, u->target_where);
          strbuf_appendz(b, ")");
        }
        if (u->do_nothing) {
          strbuf_appendz(b, " NOTHING");
        } else {
          set_list(b, u->set);
          if (u->where) {
            strbuf_appendz(b, " (WHERE ");
            expr(b, u->where);
            strbuf_appendz(b, ")");
          }
        }
        strbuf_appendz(b, ")");
      }
      returning(b, in->returning);
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_UPDATE: {
      const SqlUpdate *u = &s->u.update;
      strbuf_appendz(b, "(UPDATE");
      if (u->with) {
        strbuf_appendz(b, " ");
        with_(b, u->with);
      }
      if (u->or_conflict) strbuf_printf(b, " (OR %s)", oe_text(u->or_conflict));
      target(b, u->table);
      set_list(b, u->set);
      if (u->from) {
        strbuf_appendz(b, " (FROM");
        srclist(b, u->from);
        strbuf_appendz(b, ")");
      }
      if (u->where) {
        strbuf_appendz(b, " (WHERE ");
        expr(b, u->where);
        strbuf_appendz(b, ")");
      }
      returning(b, u->returning);
      order_limit(b, u->order_by, u->limit, u->offset);
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_DELETE: {
      const SqlDelete *d = &s->u.del;
      strbuf_appendz(b, "(DELETE");
      if (d->with) {
        strbuf_appendz(b, " ");
        with_(b, d->with);
      }
      target(b, d->table);
      if (d->where) {
        strbuf_appendz(b, " (WHERE ");
        expr(b, d->where);
        strbuf_appendz(b, ")");
      }
      returning(b, d->returning);
      order_limit(b, d->order_by, d->limit, d->offset);
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_CREATE_TABLE: {
      const SqlCreateTable *c = &s->u.create_table;
      strbuf_appendz(b, "(CREATE TABLE");
      if (c->temp) strbuf_appendz(b, " TEMP");
      if (c->if_not_exists) strbuf_appendz(b, " IF NOT EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &c->name);
      if (c->as_select) {
        strbuf_appendz(b, " (AS ");
        select_(b, c->as_select);
        strbuf_appendz(b, ")");
      }
      for (int i = 0; i < c->ncols; i++) column(b, &c->cols[i]);
      for (int i = 0; i < c->ncons; i++) constraint(b, &c->cons[i]);
      if (c->options & SQL_TABOPT_WITHOUT_ROWID) strbuf_appendz(b, " WITHOUT ROWID");
      if (c->options & SQL_TABOPT_STRICT) strbuf_appendz(b, " STRICT");
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      const SqlCreateIndex *c = &s->u.create_index;
      strbuf_appendz(b, c->unique ? "(CREATE UNIQUE INDEX" : "(CREATE INDEX");
      if (c->if_not_exists) strbuf_appendz(b, " IF NOT EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &c->name);
      strbuf_printf(b, " (ON %s", c->table);
      list(b, c->columns);
      strbuf_appendz(b, ")");
      if (c->where) {
        strbuf_appendz(b, " (WHERE ");
        expr(b, c->where);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_CREATE_VIEW: {
      const SqlCreateView *c = &s->u.create_view;
      strbuf_appendz(b, "(CREATE VIEW");
      if (c->temp) strbuf_appendz(b, " TEMP");
      if (c->if_not_exists) strbuf_appendz(b, " IF NOT EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &c->name);
      if (c->columns) {
        strbuf_appendz(b, " ");
        idlist(b, c->columns);
      }
      strbuf_appendz(b, " ");
      select_(b, c->select);
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_CREATE_TRIGGER: {
      const SqlCreateTrigger *t = &s->u.create_trigger;
      static const char *const tm[] = {"", "BEFORE", "AFTER", "INSTEAD OF"};
      strbuf_appendz(b, "(CREATE TRIGGER");
      if (t->temp) strbuf_appendz(b, " TEMP");
      if (t->if_not_exists) strbuf_appendz(b, " IF NOT EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &t->name);
      if (t->time) strbuf_printf(b, " %s", tm[t->time]);
      strbuf_printf(b, " %s", sql_keyword_name(t->event));
      if (t->update_of) {
        strbuf_appendz(b, " (OF ");
        idlist(b, t->update_of);
        strbuf_appendz(b, ")");
      }
      if (t->table_schema)
        strbuf_printf(b, " (ON %s.%s)", t->table_schema, t->table);
      else
        strbuf_printf(b, " (ON %s)", t->table);
      if (t->for_each_row) strbuf_appendz(b, " FOR EACH ROW");
      if (t->when) {
        strbuf_appendz(b, " (WHEN ");
        expr(b, t->when);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, " (BEGIN");
      for (int i = 0; i < t->nstmts; i++) {
        strbuf_appendz(b, " ");
        stmt(b, t->stmts[i]);
      }
      strbuf_appendz(b, "))");
      break;
    }
    case SQL_STMT_CREATE_VTAB: {
      const SqlCreateVtab *v = &s->u.create_vtab;
      strbuf_appendz(b, "(CREATE VIRTUAL TABLE");
      if (v->if_not_exists) strbuf_appendz(b, " IF NOT EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &v->name);
      strbuf_printf(b, " (USING %s", v->module);
      for (int i = 0; i < v->nargs; i++)
        strbuf_printf(b, " [%d+%d]", v->args[i].start, v->args[i].len);
      strbuf_appendz(b, "))");
      break;
    }
    case SQL_STMT_DROP:
      strbuf_printf(b, "(DROP %s", sql_keyword_name(s->u.drop.object));
      if (s->u.drop.if_exists) strbuf_appendz(b, " IF EXISTS");
      strbuf_appendz(b, " ");
      qualname(b, &s->u.drop.name);
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_ALTER: {
      const SqlAlter *a = &s->u.alter;
      strbuf_appendz(b, "(ALTER TABLE ");
      qualname(b, &a->table);
      switch (a->action) {
        case SQL_ALTER_RENAME_TABLE:
          strbuf_printf(b, " (RENAME TO %s)", a->new_name);
          break;
        case SQL_ALTER_RENAME_COLUMN:
          strbuf_printf(b, " (RENAME COLUMN %s TO %s)", a->old_name, a->new_name);
          break;
        case SQL_ALTER_ADD_COLUMN:
          strbuf_appendz(b, " (ADD");
          column(b, a->column);
          strbuf_appendz(b, ")");
          break;
        default:
          strbuf_printf(b, " (DROP COLUMN %s)", a->old_name);
          break;
      }
      strbuf_appendz(b, ")");
      break;
    }
    case SQL_STMT_BEGIN:
      strbuf_appendz(b, "(BEGIN");
      if (s->u.begin.mode) strbuf_printf(b, " %s", sql_keyword_name(s->u.begin.mode));
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_COMMIT:
      strbuf_appendz(b, "(COMMIT)");
      break;
    case SQL_STMT_ROLLBACK:
      strbuf_appendz(b, "(ROLLBACK");
      if (s->u.rollback.savepoint) strbuf_printf(b, " TO %s", s->u.rollback.savepoint);
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_SAVEPOINT:
      strbuf_printf(b, "(SAVEPOINT %s)", s->u.savepoint.name);
      break;
    case SQL_STMT_RELEASE:
      strbuf_printf(b, "(RELEASE %s)", s->u.savepoint.name);
      break;
    case SQL_STMT_PRAGMA:
      strbuf_appendz(b, "(PRAGMA ");
      qualname(b, &s->u.pragma.name);
      if (s->u.pragma.value) {
        strbuf_appendz(b, s->u.pragma.call ? " (CALL " : " (= ");
        expr(b, s->u.pragma.value);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_ATTACH:
      strbuf_appendz(b, "(ATTACH ");
      expr(b, s->u.attach.file);
      strbuf_appendz(b, " ");
      expr(b, s->u.attach.schema);
      if (s->u.attach.key) {
        strbuf_appendz(b, " (KEY ");
        expr(b, s->u.attach.key);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_DETACH:
      strbuf_appendz(b, "(DETACH ");
      expr(b, s->u.detach.schema);
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_VACUUM:
      strbuf_appendz(b, "(VACUUM");
      if (s->u.vacuum.schema) strbuf_printf(b, " %s", s->u.vacuum.schema);
      if (s->u.vacuum.into) {
        strbuf_appendz(b, " (INTO ");
        expr(b, s->u.vacuum.into);
        strbuf_appendz(b, ")");
      }
      strbuf_appendz(b, ")");
      break;
    case SQL_STMT_ANALYZE:
    case SQL_STMT_REINDEX:
      strbuf_appendz(b, s->kind == SQL_STMT_ANALYZE ? "(ANALYZE" : "(REINDEX");
      if (s->u.analyze.has_name) {
        strbuf_appendz(b, " ");
        qualname(b, &s->u.analyze.name);
      }
      strbuf_appendz(b, ")");
      break;
    default:
      strbuf_appendz(b, "(?)");
      break;
  }
  if (s->explain) strbuf_appendz(b, ")");
}

char *sql_ast_print(const SqlStmt *s) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  if (s)
    stmt(&b, s);
  else
    strbuf_appendz(&b, "nil");
  return strbuf_finish(&b);
}
