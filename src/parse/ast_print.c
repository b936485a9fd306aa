/*
 * ast_print.c -- the AST as S-expression text, for tests and debugging.
 *
 * Shapes: literals as written ('str' re-quoted), names bare, operators as
 * (OP a b), e.g. "SELECT 1 < 2 = 1" prints (SELECT (COLS (= (< 1 2) 1))).
 *
 * Invariants:
 *  1. Output is a pure function of the AST (spans are not printed).
 *  2. Out-of-memory yields NULL and frees the partial buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"

typedef struct Buf {
  char *z;
  size_t n, cap;
  int oom;
} Buf;

static void put(Buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *z = shale_realloc(b->z, cap);
    if (!z) {
      b->oom = 1;
      return;
    }
    b->z = z;
    b->cap = cap;
  }
  memcpy(b->z + b->n, s, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }
static void putf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof tmp) n = (int)sizeof tmp - 1;
  if (n > 0) put(b, tmp, (size_t)n);
}

static void quoted(Buf *b, const char *s) {
  puts_(b, "'");
  for (; *s; s++) {
    if (*s == '\'') puts_(b, "'");
    put(b, s, 1);
  }
  puts_(b, "'");
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

static void expr(Buf *b, const SqlExpr *e);
static void select_(Buf *b, const SqlSelect *s);

static void list(Buf *b, const SqlExprList *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    puts_(b, " ");
    const SqlExprItem *it = &l->a[i];
    int wrap = it->name || it->sort || it->nulls || it->nnames;
    if (wrap) puts_(b, "(");
    if (it->nnames) {
      puts_(b, "(");
      for (int j = 0; j < it->nnames; j++) putf(b, "%s%s", j ? " " : "", it->names[j]);
      puts_(b, ") ");
    } else if (it->name && !it->sort) {
      putf(b, "AS %s ", it->name);
    }
    expr(b, it->expr);
    if (it->sort) puts_(b, it->sort == SQL_SORT_ASC ? " ASC" : " DESC");
    if (it->nulls) puts_(b, it->nulls == SQL_NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST");
    if (wrap) puts_(b, ")");
  }
}

static void idlist(Buf *b, const SqlIdList *l) {
  puts_(b, "(");
  for (int i = 0; l && i < l->n; i++) putf(b, "%s%s", i ? " " : "", l->a[i]);
  puts_(b, ")");
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

static void window(Buf *b, const SqlWindow *w) {
  puts_(b, "(WINDOW");
  if (w->name) putf(b, " %s", w->name);
  if (w->base) putf(b, " (BASE %s)", w->base);
  if (w->partition) {
    puts_(b, " (PARTITION");
    list(b, w->partition);
    puts_(b, ")");
  }
  if (w->order) {
    puts_(b, " (ORDER");
    list(b, w->order);
    puts_(b, ")");
  }
  if (w->frame) {
    static const char *const fr[] = {"", "ROWS", "RANGE", "GROUPS"};
    putf(b, " (%s ", fr[w->frame]);
    if (w->start_expr) {
      expr(b, w->start_expr);
      puts_(b, " ");
    }
    puts_(b, bound_text(w->start));
    puts_(b, " ");
    if (w->end_expr) {
      expr(b, w->end_expr);
      puts_(b, " ");
    }
    puts_(b, bound_text(w->end));
    if (w->exclude) {
      static const char *const ex[] = {"", "NO OTHERS", "CURRENT ROW", "GROUP", "TIES"};
      putf(b, " EXCLUDE %s", ex[w->exclude]);
    }
    puts_(b, ")");
  }
  puts_(b, ")");
}

static void expr(Buf *b, const SqlExpr *e) {
  if (!e) {
    puts_(b, "nil");
    return;
  }
  const char *not_ = (e->flags & SQL_EF_NOT) ? "NOT " : "";
  switch (e->op) {
    case SQL_E_NULL:
      puts_(b, "NULL");
      break;
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
    case SQL_E_VARIABLE:
      puts_(b, e->z);
      break;
    case SQL_E_STRING:
      quoted(b, e->z);
      break;
    case SQL_E_BLOB:
      putf(b, "x'%s'", e->z);
      break;
    case SQL_E_CTIME:
      puts_(b, sql_keyword_name(e->sub));
      break;
    case SQL_E_ID:
      puts_(b, e->z);
      break;
    case SQL_E_COLUMN:
      if (e->schema) putf(b, "%s.", e->schema);
      putf(b, "%s.%s", e->table, e->z);
      break;
    case SQL_E_STAR:
      if (e->table) putf(b, "%s.", e->table);
      puts_(b, "*");
      break;
    case SQL_E_UNARY:
      putf(b, "(%s ", sql_op_text(e->sub));
      expr(b, e->a);
      puts_(b, ")");
      break;
    case SQL_E_BINARY:
    case SQL_E_ISNOT:
      if (e->sub == TK_PTR)
        putf(b, "(%s ", e->z);
      else
        putf(b, "(%s ", e->op == SQL_E_ISNOT ? "IS NOT" : sql_op_text(e->sub));
      expr(b, e->a);
      puts_(b, " ");
      expr(b, e->b);
      puts_(b, ")");
      break;
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL:
      putf(b, "(%s ", e->op == SQL_E_ISNULL ? "ISNULL" : "NOTNULL");
      expr(b, e->a);
      puts_(b, ")");
      break;
    case SQL_E_LIKE:
      putf(b, "(%s%s ", not_, sql_op_text(e->sub));
      expr(b, e->a);
      puts_(b, " ");
      expr(b, e->b);
      if (e->c) {
        puts_(b, " (ESCAPE ");
        expr(b, e->c);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_E_BETWEEN:
      putf(b, "(%sBETWEEN ", not_);
      expr(b, e->a);
      puts_(b, " ");
      expr(b, e->b);
      puts_(b, " ");
      expr(b, e->c);
      puts_(b, ")");
      break;
    case SQL_E_IN:
      putf(b, "(%sIN ", not_);
      expr(b, e->a);
      if (e->select) {
        puts_(b, " ");
        select_(b, e->select);
      } else if (e->table) {
        puts_(b, " (TABLE ");
        if (e->schema) putf(b, "%s.", e->schema);
        puts_(b, e->table);
        list(b, e->list);
        puts_(b, ")");
      } else {
        puts_(b, " (LIST");
        list(b, e->list);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_E_EXISTS:
    case SQL_E_SUBQUERY:
      puts_(b, e->op == SQL_E_EXISTS ? "(EXISTS " : "(SUBQUERY ");
      select_(b, e->select);
      puts_(b, ")");
      break;
    case SQL_E_ROW:
      puts_(b, "(ROW");
      list(b, e->list);
      puts_(b, ")");
      break;
    case SQL_E_COLLATE:
      puts_(b, "(COLLATE ");
      expr(b, e->a);
      putf(b, " %s)", e->z);
      break;
    case SQL_E_CAST:
      puts_(b, "(CAST ");
      expr(b, e->a);
      putf(b, " %s)", e->z);
      break;
    case SQL_E_CASE:
      puts_(b, "(CASE");
      if (e->a) {
        puts_(b, " ");
        expr(b, e->a);
      }
      for (int i = 0; e->list && i + 1 < e->list->n; i += 2) {
        puts_(b, " (WHEN ");
        expr(b, e->list->a[i].expr);
        puts_(b, " ");
        expr(b, e->list->a[i + 1].expr);
        puts_(b, ")");
      }
      if (e->b) {
        puts_(b, " (ELSE ");
        expr(b, e->b);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_E_FUNC:
      putf(b, "(CALL %s", e->z);
      if (e->flags & SQL_EF_DISTINCT) puts_(b, " DISTINCT");
      if (e->flags & SQL_EF_STAR) puts_(b, " *");
      list(b, e->list);
      if (e->order) {
        puts_(b, " (ORDER");
        list(b, e->order);
        puts_(b, ")");
      }
      if (e->filter) {
        puts_(b, " (FILTER ");
        expr(b, e->filter);
        puts_(b, ")");
      }
      if (e->over) {
        puts_(b, " (OVER ");
        window(b, e->over);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_E_RAISE:
      putf(b, "(RAISE %s", sql_keyword_name(e->sub));
      if (e->z) {
        puts_(b, " ");
        quoted(b, e->z);
      }
      puts_(b, ")");
      break;
    default:
      puts_(b, "?");
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

static void srclist(Buf *b, const SqlSrcList *l) {
  for (int i = 0; l && i < l->n; i++) {
    const SqlSrcItem *it = &l->a[i];
    char jb[64];
    if (i) putf(b, " (%s)", join_text(it->jointype, jb));
    puts_(b, " (");
    if (it->select) {
      select_(b, it->select);
    } else if (it->nested) {
      puts_(b, "NEST");
      srclist(b, it->nested);
    } else {
      if (it->schema) putf(b, "%s.", it->schema);
      puts_(b, it->name);
      if (it->has_args) {
        puts_(b, " (ARGS");
        list(b, it->args);
        puts_(b, ")");
      }
    }
    if (it->alias) putf(b, " AS %s", it->alias);
    if (it->indexed_by) putf(b, " INDEXED BY %s", it->indexed_by);
    if (it->not_indexed) puts_(b, " NOT INDEXED");
    if (it->on) {
      puts_(b, " (ON ");
      expr(b, it->on);
      puts_(b, ")");
    }
    if (it->using_cols) {
      puts_(b, " (USING ");
      idlist(b, it->using_cols);
      puts_(b, ")");
    }
    puts_(b, ")");
  }
}

static void with_(Buf *b, const SqlWith *w) {
  puts_(b, w->recursive ? "(WITH RECURSIVE" : "(WITH");
  for (int i = 0; i < w->n; i++) {
    const SqlCte *c = &w->a[i];
    putf(b, " (%s", c->name);
    if (c->columns) {
      puts_(b, " ");
      idlist(b, c->columns);
    }
    if (c->materialized) puts_(b, c->materialized == 1 ? " MATERIALIZED" : " NOT MATERIALIZED");
    puts_(b, " ");
    select_(b, c->select);
    puts_(b, ")");
  }
  puts_(b, ") ");
}

static void core(Buf *b, const SqlSelect *s) {
  if (s->kind == SQL_SEL_VALUES) {
    puts_(b, "(VALUES");
    list(b, s->cols);
    puts_(b, ")");
    return;
  }
  puts_(b, "(SELECT");
  if (s->distinct == 1) puts_(b, " DISTINCT");
  if (s->distinct == 2) puts_(b, " ALL");
  puts_(b, " (COLS");
  list(b, s->cols);
  puts_(b, ")");
  if (s->from) {
    puts_(b, " (FROM");
    srclist(b, s->from);
    puts_(b, ")");
  }
  if (s->where) {
    puts_(b, " (WHERE ");
    expr(b, s->where);
    puts_(b, ")");
  }
  if (s->group_by) {
    puts_(b, " (GROUP");
    list(b, s->group_by);
    puts_(b, ")");
  }
  if (s->having) {
    puts_(b, " (HAVING ");
    expr(b, s->having);
    puts_(b, ")");
  }
  for (const SqlWindow *w = s->windows; w; w = w->next) {
    puts_(b, " ");
    window(b, w);
  }
  puts_(b, ")");
}

static void order_limit(Buf *b, const SqlExprList *order, const SqlExpr *limit,
                        const SqlExpr *offset) {
  if (order) {
    puts_(b, " (ORDER");
    list(b, order);
    puts_(b, ")");
  }
  if (limit) {
    puts_(b, " (LIMIT ");
    expr(b, limit);
    puts_(b, ")");
  }
  if (offset) {
    puts_(b, " (OFFSET ");
    expr(b, offset);
    puts_(b, ")");
  }
}

static void compound(Buf *b, const SqlSelect *s) {
  if (!s->prior) {
    core(b, s);
    return;
  }
  static const char *const names[] = {"", "UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
  putf(b, "(%s ", names[s->compound]);
  compound(b, s->prior);
  puts_(b, " ");
  core(b, s);
  puts_(b, ")");
}

static void select_(Buf *b, const SqlSelect *s) {
  if (!s) {
    puts_(b, "nil");
    return;
  }
  int wrap = s->with || s->order_by || s->limit;
  if (wrap) puts_(b, "(QUERY ");
  if (s->with) with_(b, s->with);
  compound(b, s);
  order_limit(b, s->order_by, s->limit, s->offset);
  if (wrap) puts_(b, ")");
}

static const char *oe_text(int oe) {
  static const char *const t[] = {"", "ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE"};
  return t[oe];
}

static void qualname(Buf *b, const SqlQualName *q) {
  if (q->schema) putf(b, "%s.", q->schema);
  puts_(b, q->name ? q->name : "nil");
}

static void constraint(Buf *b, const SqlConstraint *c) {
  static const char *const names[] = {"PRIMARY KEY", "NOT NULL", "NULL",    "UNIQUE",
                                      "CHECK",       "DEFAULT",  "COLLATE", "REFERENCES",
                                      "FOREIGN KEY", "GENERATED"};
  putf(b, " (%s", names[c->type]);
  if (c->name) putf(b, " (NAME %s)", c->name);
  if (c->sort) puts_(b, c->sort == SQL_SORT_ASC ? " ASC" : " DESC");
  if (c->columns) list(b, c->columns);
  if (c->expr) {
    puts_(b, " ");
    expr(b, c->expr);
  }
  if (c->collate) putf(b, " %s", c->collate);
  if (c->stored) puts_(b, " STORED");
  if (c->on_conflict) putf(b, " (ON CONFLICT %s)", oe_text(c->on_conflict));
  if (c->autoincrement) puts_(b, " AUTOINCREMENT");
  if (c->fk) {
    static const char *const act[] = {"",        "SET NULL", "SET DEFAULT",
                                      "CASCADE", "RESTRICT", "NO ACTION"};
    if (c->fk->from_cols) {
      puts_(b, " ");
      idlist(b, c->fk->from_cols);
    }
    putf(b, " %s", c->fk->table);
    if (c->fk->to_cols) {
      puts_(b, " ");
      idlist(b, c->fk->to_cols);
    }
    if (c->fk->on_delete) putf(b, " (ON DELETE %s)", act[c->fk->on_delete]);
    if (c->fk->on_update) putf(b, " (ON UPDATE %s)", act[c->fk->on_update]);
    if (c->fk->match) putf(b, " (MATCH %s)", c->fk->match);
    if (c->fk->deferrable) putf(b, " (DEFERRABLE %d)", c->fk->deferrable);
  }
  puts_(b, ")");
}

static void column(Buf *b, const SqlColumnDef *c) {
  putf(b, " (COLUMN %s", c->name);
  if (c->type) putf(b, " (TYPE %s)", c->type);
  for (int i = 0; i < c->ncons; i++) constraint(b, &c->cons[i]);
  puts_(b, ")");
}

static void returning(Buf *b, const SqlExprList *r) {
  if (!r) return;
  puts_(b, " (RETURNING");
  list(b, r);
  puts_(b, ")");
}

static void stmt(Buf *b, const SqlStmt *s);

static void set_list(Buf *b, const SqlExprList *l) {
  puts_(b, " (SET");
  for (int i = 0; i < l->n; i++) {
    const SqlExprItem *it = &l->a[i];
    puts_(b, " (");
    if (it->nnames) {
      puts_(b, "(");
      for (int j = 0; j < it->nnames; j++) putf(b, "%s%s", j ? " " : "", it->names[j]);
      puts_(b, ")");
    } else {
      puts_(b, it->name);
    }
    puts_(b, " ");
    expr(b, it->expr);
    puts_(b, ")");
  }
  puts_(b, ")");
}

static void target(Buf *b, const SqlSrcItem *t) {
  puts_(b, " ");
  if (t->schema) putf(b, "%s.", t->schema);
  puts_(b, t->name);
  if (t->alias) putf(b, " (AS %s)", t->alias);
  if (t->indexed_by) putf(b, " (INDEXED BY %s)", t->indexed_by);
  if (t->not_indexed) puts_(b, " (NOT INDEXED)");
}

static void stmt(Buf *b, const SqlStmt *s) {
  if (s->explain) puts_(b, s->explain == 1 ? "(EXPLAIN " : "(EXPLAIN QUERY PLAN ");
  switch (s->kind) {
    case SQL_STMT_SELECT:
      select_(b, s->u.select);
      break;
    case SQL_STMT_INSERT: {
      const SqlInsert *in = &s->u.insert;
      puts_(b, "(INSERT");
      if (in->with) {
        puts_(b, " ");
        with_(b, in->with);
      }
      if (in->or_conflict) putf(b, " (OR %s)", oe_text(in->or_conflict));
      puts_(b, " ");
      qualname(b, &in->table);
      if (in->alias) putf(b, " (AS %s)", in->alias);
      if (in->columns) {
        puts_(b, " ");
        idlist(b, in->columns);
      }
      if (in->select) {
        puts_(b, " ");
        select_(b, in->select);
      } else {
        puts_(b, " DEFAULT VALUES");
      }
      for (const SqlUpsert *u = in->upsert; u; u = u->next) {
        puts_(b, " (ON CONFLICT");
        if (u->target) {
          puts_(b, " (TARGET");
          list(b, u->target);
          puts_(b, ")");
        }
        if (u->target_where) {
          puts_(b, " (WHERE ");
          expr(b, u->target_where);
          puts_(b, ")");
        }
        if (u->do_nothing) {
          puts_(b, " NOTHING");
        } else {
          set_list(b, u->set);
          if (u->where) {
            puts_(b, " (WHERE ");
            expr(b, u->where);
            puts_(b, ")");
          }
        }
        puts_(b, ")");
      }
      returning(b, in->returning);
      puts_(b, ")");
      break;
    }
    case SQL_STMT_UPDATE: {
      const SqlUpdate *u = &s->u.update;
      puts_(b, "(UPDATE");
      if (u->with) {
        puts_(b, " ");
        with_(b, u->with);
      }
      if (u->or_conflict) putf(b, " (OR %s)", oe_text(u->or_conflict));
      target(b, u->table);
      set_list(b, u->set);
      if (u->from) {
        puts_(b, " (FROM");
        srclist(b, u->from);
        puts_(b, ")");
      }
      if (u->where) {
        puts_(b, " (WHERE ");
        expr(b, u->where);
        puts_(b, ")");
      }
      returning(b, u->returning);
      order_limit(b, u->order_by, u->limit, u->offset);
      puts_(b, ")");
      break;
    }
    case SQL_STMT_DELETE: {
      const SqlDelete *d = &s->u.del;
      puts_(b, "(DELETE");
      if (d->with) {
        puts_(b, " ");
        with_(b, d->with);
      }
      target(b, d->table);
      if (d->where) {
        puts_(b, " (WHERE ");
        expr(b, d->where);
        puts_(b, ")");
      }
      returning(b, d->returning);
      order_limit(b, d->order_by, d->limit, d->offset);
      puts_(b, ")");
      break;
    }
    case SQL_STMT_CREATE_TABLE: {
      const SqlCreateTable *c = &s->u.create_table;
      puts_(b, "(CREATE TABLE");
      if (c->temp) puts_(b, " TEMP");
      if (c->if_not_exists) puts_(b, " IF NOT EXISTS");
      puts_(b, " ");
      qualname(b, &c->name);
      if (c->as_select) {
        puts_(b, " (AS ");
        select_(b, c->as_select);
        puts_(b, ")");
      }
      for (int i = 0; i < c->ncols; i++) column(b, &c->cols[i]);
      for (int i = 0; i < c->ncons; i++) constraint(b, &c->cons[i]);
      if (c->options & SQL_TABOPT_WITHOUT_ROWID) puts_(b, " WITHOUT ROWID");
      if (c->options & SQL_TABOPT_STRICT) puts_(b, " STRICT");
      puts_(b, ")");
      break;
    }
    case SQL_STMT_CREATE_INDEX: {
      const SqlCreateIndex *c = &s->u.create_index;
      puts_(b, c->unique ? "(CREATE UNIQUE INDEX" : "(CREATE INDEX");
      if (c->if_not_exists) puts_(b, " IF NOT EXISTS");
      puts_(b, " ");
      qualname(b, &c->name);
      putf(b, " (ON %s", c->table);
      list(b, c->columns);
      puts_(b, ")");
      if (c->where) {
        puts_(b, " (WHERE ");
        expr(b, c->where);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    }
    case SQL_STMT_CREATE_VIEW: {
      const SqlCreateView *c = &s->u.create_view;
      puts_(b, "(CREATE VIEW");
      if (c->temp) puts_(b, " TEMP");
      if (c->if_not_exists) puts_(b, " IF NOT EXISTS");
      puts_(b, " ");
      qualname(b, &c->name);
      if (c->columns) {
        puts_(b, " ");
        idlist(b, c->columns);
      }
      puts_(b, " ");
      select_(b, c->select);
      puts_(b, ")");
      break;
    }
    case SQL_STMT_CREATE_TRIGGER: {
      const SqlCreateTrigger *t = &s->u.create_trigger;
      static const char *const tm[] = {"", "BEFORE", "AFTER", "INSTEAD OF"};
      puts_(b, "(CREATE TRIGGER");
      if (t->temp) puts_(b, " TEMP");
      if (t->if_not_exists) puts_(b, " IF NOT EXISTS");
      puts_(b, " ");
      qualname(b, &t->name);
      if (t->time) putf(b, " %s", tm[t->time]);
      putf(b, " %s", sql_keyword_name(t->event));
      if (t->update_of) {
        puts_(b, " (OF ");
        idlist(b, t->update_of);
        puts_(b, ")");
      }
      if (t->table_schema)
        putf(b, " (ON %s.%s)", t->table_schema, t->table);
      else
        putf(b, " (ON %s)", t->table);
      if (t->for_each_row) puts_(b, " FOR EACH ROW");
      if (t->when) {
        puts_(b, " (WHEN ");
        expr(b, t->when);
        puts_(b, ")");
      }
      puts_(b, " (BEGIN");
      for (int i = 0; i < t->nstmts; i++) {
        puts_(b, " ");
        stmt(b, t->stmts[i]);
      }
      puts_(b, "))");
      break;
    }
    case SQL_STMT_CREATE_VTAB: {
      const SqlCreateVtab *v = &s->u.create_vtab;
      puts_(b, "(CREATE VIRTUAL TABLE");
      if (v->if_not_exists) puts_(b, " IF NOT EXISTS");
      puts_(b, " ");
      qualname(b, &v->name);
      putf(b, " (USING %s", v->module);
      for (int i = 0; i < v->nargs; i++) putf(b, " [%d+%d]", v->args[i].start, v->args[i].len);
      puts_(b, "))");
      break;
    }
    case SQL_STMT_DROP:
      putf(b, "(DROP %s", sql_keyword_name(s->u.drop.object));
      if (s->u.drop.if_exists) puts_(b, " IF EXISTS");
      puts_(b, " ");
      qualname(b, &s->u.drop.name);
      puts_(b, ")");
      break;
    case SQL_STMT_ALTER: {
      const SqlAlter *a = &s->u.alter;
      puts_(b, "(ALTER TABLE ");
      qualname(b, &a->table);
      switch (a->action) {
        case SQL_ALTER_RENAME_TABLE:
          putf(b, " (RENAME TO %s)", a->new_name);
          break;
        case SQL_ALTER_RENAME_COLUMN:
          putf(b, " (RENAME COLUMN %s TO %s)", a->old_name, a->new_name);
          break;
        case SQL_ALTER_ADD_COLUMN:
          puts_(b, " (ADD");
          column(b, a->column);
          puts_(b, ")");
          break;
        default:
          putf(b, " (DROP COLUMN %s)", a->old_name);
          break;
      }
      puts_(b, ")");
      break;
    }
    case SQL_STMT_BEGIN:
      puts_(b, "(BEGIN");
      if (s->u.begin.mode) putf(b, " %s", sql_keyword_name(s->u.begin.mode));
      puts_(b, ")");
      break;
    case SQL_STMT_COMMIT:
      puts_(b, "(COMMIT)");
      break;
    case SQL_STMT_ROLLBACK:
      puts_(b, "(ROLLBACK");
      if (s->u.rollback.savepoint) putf(b, " TO %s", s->u.rollback.savepoint);
      puts_(b, ")");
      break;
    case SQL_STMT_SAVEPOINT:
      putf(b, "(SAVEPOINT %s)", s->u.savepoint.name);
      break;
    case SQL_STMT_RELEASE:
      putf(b, "(RELEASE %s)", s->u.savepoint.name);
      break;
    case SQL_STMT_PRAGMA:
      puts_(b, "(PRAGMA ");
      qualname(b, &s->u.pragma.name);
      if (s->u.pragma.value) {
        puts_(b, s->u.pragma.call ? " (CALL " : " (= ");
        expr(b, s->u.pragma.value);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_STMT_ATTACH:
      puts_(b, "(ATTACH ");
      expr(b, s->u.attach.file);
      puts_(b, " ");
      expr(b, s->u.attach.schema);
      if (s->u.attach.key) {
        puts_(b, " (KEY ");
        expr(b, s->u.attach.key);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_STMT_DETACH:
      puts_(b, "(DETACH ");
      expr(b, s->u.detach.schema);
      puts_(b, ")");
      break;
    case SQL_STMT_VACUUM:
      puts_(b, "(VACUUM");
      if (s->u.vacuum.schema) putf(b, " %s", s->u.vacuum.schema);
      if (s->u.vacuum.into) {
        puts_(b, " (INTO ");
        expr(b, s->u.vacuum.into);
        puts_(b, ")");
      }
      puts_(b, ")");
      break;
    case SQL_STMT_ANALYZE:
    case SQL_STMT_REINDEX:
      puts_(b, s->kind == SQL_STMT_ANALYZE ? "(ANALYZE" : "(REINDEX");
      if (s->u.analyze.has_name) {
        puts_(b, " ");
        qualname(b, &s->u.analyze.name);
      }
      puts_(b, ")");
      break;
    default:
      puts_(b, "(?)");
      break;
  }
  if (s->explain) puts_(b, ")");
}

static char *finish(Buf *b) {
  if (b->oom) {
    shale_free(b->z);
    return NULL;
  }
  if (!b->z) put(b, "", 0);
  if (b->oom) {
    shale_free(b->z);
    return NULL;
  }
  return b->z;
}

char *sql_ast_print(const SqlStmt *s) {
  Buf b = {NULL, 0, 0, 0};
  if (s)
    stmt(&b, s);
  else
    puts_(&b, "nil");
  return finish(&b);
}
