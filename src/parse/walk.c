/*
 * walk.c -- generic traversal of expression trees and SELECTs, for the
 * passes that follow parsing (name resolution, aggregate detection, ...).
 *
 * Invariants:
 *  1. Pre-order: a node's callback runs before its children; SQL_WALK_PRUNE
 *     skips the children, SQL_WALK_ABORT stops the whole walk (and is what
 *     the walk returns).
 *  2. Subqueries are entered only when the walker has a select callback.
 *  3. The walk allocates nothing and never modifies the tree itself.
 */
#include "ast.h"

static int walk_list(SqlWalker *w, SqlExprList *l) {
  for (int i = 0; l && i < l->n; i++)
    if (sql_walk_expr(w, l->a[i].expr) == SQL_WALK_ABORT) return SQL_WALK_ABORT;
  return SQL_WALK_CONTINUE;
}

static int walk_window(SqlWalker *w, SqlWindow *win) {
  for (; win; win = win->next) {
    if (walk_list(w, win->partition) || walk_list(w, win->order) ||
        sql_walk_expr(w, win->start_expr) || sql_walk_expr(w, win->end_expr))
      return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

int sql_walk_expr(SqlWalker *w, SqlExpr *e) {
  if (!e) return SQL_WALK_CONTINUE;
  int rc = w->expr ? w->expr(w, e) : SQL_WALK_CONTINUE;
  if (rc == SQL_WALK_ABORT) return SQL_WALK_ABORT;
  if (rc == SQL_WALK_PRUNE) return SQL_WALK_CONTINUE;
  /* absent operands tested here: most are, and a call each costs more */
  if ((e->a && sql_walk_expr(w, e->a)) || (e->b && sql_walk_expr(w, e->b)) ||
      (e->c && sql_walk_expr(w, e->c)) || (e->list && walk_list(w, e->list)) ||
      (e->filter && sql_walk_expr(w, e->filter)) || (e->order && walk_list(w, e->order)))
    return SQL_WALK_ABORT;
  if (e->over && !e->over->next && walk_window(w, e->over)) return SQL_WALK_ABORT;
  if (e->select && w->select && sql_walk_select(w, e->select)) return SQL_WALK_ABORT;
  return SQL_WALK_CONTINUE;
}

static int walk_from(SqlWalker *w, SqlSrcList *from) {
  for (int i = 0; from && i < from->n; i++) {
    SqlSrcItem *it = &from->a[i];
    if (it->select && w->select && sql_walk_select(w, it->select)) return SQL_WALK_ABORT;
    if (it->nested && walk_from(w, it->nested)) return SQL_WALK_ABORT;
    if (walk_list(w, it->args) || sql_walk_expr(w, it->on)) return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

int sql_walk_select(SqlWalker *w, SqlSelect *s) {
  if (!s) return SQL_WALK_CONTINUE;
  if (w->select) {
    int rc = w->select(w, s);
    if (rc == SQL_WALK_ABORT) return SQL_WALK_ABORT;
    if (rc == SQL_WALK_PRUNE) return SQL_WALK_CONTINUE;
  }
  if (s->with)
    for (int i = 0; i < s->with->n; i++)
      if (w->select && sql_walk_select(w, s->with->a[i].select)) return SQL_WALK_ABORT;
  for (SqlSelect *c = s; c; c = c->prior) {
    if (walk_list(w, c->cols) || walk_from(w, c->from) || sql_walk_expr(w, c->where) ||
        walk_list(w, c->group_by) || sql_walk_expr(w, c->having) || walk_window(w, c->windows) ||
        walk_list(w, c->order_by) || sql_walk_expr(w, c->limit) || sql_walk_expr(w, c->offset))
      return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}
