/*
 * parse_stmt.c -- statements: DML (INSERT, UPDATE, DELETE with UPSERT and
 * RETURNING), DDL (CREATE TABLE/INDEX/VIEW/TRIGGER/VIRTUAL TABLE, DROP,
 * ALTER), transactions, PRAGMA, ATTACH/DETACH, VACUUM, ANALYZE, REINDEX,
 * EXPLAIN, and the entry point sql_parse.
 *
 * Invariants:
 *  1. sql_parse consumes exactly one statement and its ';' (if any); the
 *     tail is the text after it.
 *  2. On any error nothing but the arena holds memory: the caller frees the
 *     arena, and *errmsg is the only shale_malloc'ed result.
 */
#include <assert.h>
#include <string.h>

#include "parse_int.h"

/* In a trigger body, "schema.table" as the target of INSERT, UPDATE or
 * DELETE is an error, reported (as SQLite does) once the name is complete
 * and followed by a token that may follow it in that statement. */
static int trigger_qualified(Parser *p, int kind) {
  int t = p->tok.type, ok;
  if (kind == SQL_STMT_INSERT)
    ok = t == TK_LP || t == TK_SELECT || t == TK_VALUES || t == TK_WITH;
  else if (kind == SQL_STMT_UPDATE)
    ok = t == TK_INDEXED || t == TK_NOT || t == TK_SET;
  else /* DELETE: the end of input counts as the ';' SQLite supplies there */
    ok = t == TK_INDEXED || t == TK_NOT || t == TK_WHERE || t == TK_SEMI || t == TK_EOF;
  if (!ok) return sql_parse_syntax_error(p);
  return sql_parse_error(p,
                         "qualified table names are not allowed on INSERT, UPDATE, and DELETE "
                         "statements within triggers");
}

static SqlStmt *stmt_new(Parser *p, int kind, int start) {
  SqlStmt *s = sql_parse_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->kind = (uint8_t)kind;
  s->span.start = start;
  return s;
}

/* IF NOT EXISTS -- returns 1 if present, 0 if absent, -1 on error */
static int if_not_exists(Parser *p) {
  if (p->tok.type != TK_IF) return 0;
  sql_parse_advance(p);
  if (!sql_parse_expect(p, TK_NOT) || !sql_parse_expect(p, TK_EXISTS)) return -1;
  return 1;
}

static int if_exists(Parser *p) {
  if (p->tok.type != TK_IF) return 0;
  sql_parse_advance(p);
  if (!sql_parse_expect(p, TK_EXISTS)) return -1;
  return 1;
}

/* RETURNING result-columns (optional). In a trigger body only INSERT
 * accepts the clause, and then as an error once it is read. */
static int returning(Parser *p, SqlExprList **out, int kind) {
  if (p->tok.type != TK_RETURNING) return 1;
  if (p->in_trigger && kind != SQL_STMT_INSERT) return sql_parse_syntax_error(p);
  sql_parse_advance(p);
  *out = sql_parse_result_cols(p);
  if (!*out) return 0;
  if (p->in_trigger) {
    /* (the end of input stands for the ';' SQLite supplies there) */
    if (p->tok.type != TK_SEMI && p->tok.type != TK_EOF) return sql_parse_syntax_error(p);
    return sql_parse_error(p, "cannot use RETURNING in a trigger");
  }
  return 1;
}

/* xfullname: nm [. nm] [AS nm] [INDEXED BY nm | NOT INDEXED] */
static SqlSrcItem *dml_target(Parser *p, int kind) {
  SqlSrcItem *it = sql_parse_alloc(p, sizeof *it);
  if (!it) return NULL;
  it->span.start = p->tok.start;
  it->name = sql_parse_nm(p);
  if (!it->name) return NULL;
  if (sql_parse_accept(p, TK_DOT)) {
    it->schema = it->name;
    it->name = sql_parse_nm(p);
    if (!it->name) return NULL;
    if (p->in_trigger) return trigger_qualified(p, kind), NULL;
  }
  if (!p->in_trigger && sql_parse_accept(p, TK_AS)) {
    it->alias = sql_parse_nm(p);
    if (!it->alias) return NULL;
  }
  if (p->tok.type == TK_INDEXED) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return NULL;
    it->indexed_by = sql_parse_nm(p);
    if (!it->indexed_by) return NULL;
  } else if (p->tok.type == TK_NOT) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_INDEXED)) return NULL;
    it->not_indexed = 1;
  }
  if (p->in_trigger && (it->indexed_by || it->not_indexed))
    return sql_parse_error(p,
                           "the %s clause is not allowed on UPDATE or DELETE statements within "
                           "triggers",
                           it->indexed_by ? "INDEXED BY" : "NOT INDEXED"),
           NULL;
  it->span.len = p->prev_end - it->span.start;
  return it;
}

static int order_limit_dml(Parser *p, SqlExprList **order, SqlExpr **limit, SqlExpr **offset) {
  if (p->tok.type == TK_ORDER) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_BY)) return 0;
    *order = sql_parse_sortlist(p);
    if (!*order) return 0;
  }
  if (p->tok.type == TK_LIMIT) {
    sql_parse_advance(p);
    *limit = sql_parse_expr(p);
    if (!*limit) return 0;
    if (sql_parse_accept(p, TK_OFFSET)) {
      *offset = sql_parse_expr(p);
      if (!*offset) return 0;
    } else if (sql_parse_accept(p, TK_COMMA)) {
      *offset = *limit;
      *limit = sql_parse_expr(p);
      if (!*limit) return 0;
    }
  }
  return 1;
}

/* SET a = e, (b, c) = e, ... -- after SET */
static SqlExprList *setlist(Parser *p, int upsert) {
  SqlExprList *l = NULL;
  do {
    const char **names = NULL;
    int nnames = 0;
    const char *name = NULL;
    if (p->tok.type == TK_LP) {
      SqlIdList *ids = sql_parse_idlist_paren(p);
      if (!ids) return NULL;
      names = ids->a;
      nnames = ids->n;
    } else {
      name = sql_parse_nm(p);
      if (!name) return NULL;
    }
    if (!sql_parse_expect(p, TK_EQ)) return NULL;
    SqlExpr *e = sql_parse_expr(p);
    if (!e) return NULL;
    if (names && e->op != SQL_E_SUBQUERY) {
      int n = e->op == SQL_E_ROW ? e->list->n : 1;
      if (n != nnames) {
        /* reported where SQLite reduces the item: at a token that may follow it */
        int t = p->tok.type;
        int ok = t == TK_COMMA || t == TK_WHERE || t == TK_RETURNING || t == TK_SEMI || t == TK_EOF;
        if (upsert)
          ok = ok || t == TK_ON;
        else
          ok = ok || t == TK_FROM || t == TK_ORDER || t == TK_LIMIT;
        if (!ok) return sql_parse_syntax_error(p), NULL;
        return sql_parse_error(p, "%d columns assigned %d values", nnames, n), NULL;
      }
    }
    l = sql_parse_list_add(p, l, e);
    if (!l) return NULL;
    l->a[l->n - 1].name = name;
    l->a[l->n - 1].names = names;
    l->a[l->n - 1].nnames = nnames;
  } while (sql_parse_accept(p, TK_COMMA));
  return l;
}

static SqlStmt *insert_stmt(Parser *p, SqlWith *with, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_INSERT, start);
  if (!s) return NULL;
  SqlInsert *ins = &s->u.insert;
  ins->with = with;
  if (sql_parse_accept(p, TK_REPLACE)) {
    ins->or_conflict = SQL_OE_REPLACE;
  } else {
    if (!sql_parse_expect(p, TK_INSERT)) return NULL;
    if (sql_parse_accept(p, TK_OR)) {
      ins->or_conflict = (uint8_t)sql_parse_conflict(p);
      if (!ins->or_conflict) return NULL;
    }
  }
  if (!sql_parse_expect(p, TK_INTO)) return NULL;
  ins->table.span.start = p->tok.start;
  ins->table.name = sql_parse_nm(p);
  if (!ins->table.name) return NULL;
  if (sql_parse_accept(p, TK_DOT)) {
    ins->table.schema = ins->table.name;
    ins->table.name = sql_parse_nm(p);
    if (!ins->table.name) return NULL;
    if (p->in_trigger) return trigger_qualified(p, SQL_STMT_INSERT), NULL;
  }
  ins->table.span.len = p->prev_end - ins->table.span.start;
  if (!p->in_trigger && sql_parse_accept(p, TK_AS)) {
    ins->alias = sql_parse_nm(p);
    if (!ins->alias) return NULL;
  }
  if (p->tok.type == TK_LP) {
    ins->columns = sql_parse_idlist_paren(p);
    if (!ins->columns) return NULL;
  }
  if (p->tok.type == TK_DEFAULT && !p->in_trigger) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_VALUES)) return NULL;
  } else {
    if (!sql_parse_starts_select(p)) return sql_parse_syntax_error(p), NULL;
    p->insert_select = 1;
    ins->select = sql_parse_select(p);
    p->insert_select = 0;
    if (!ins->select) return NULL;
    /* UPSERT clauses */
    SqlUpsert **tail = &ins->upsert;
    while (p->tok.type == TK_ON) {
      sql_parse_advance(p);
      if (!sql_parse_expect(p, TK_CONFLICT)) return NULL;
      SqlUpsert *u = sql_parse_alloc(p, sizeof *u);
      if (!u) return NULL;
      if (p->tok.type == TK_LP) {
        sql_parse_advance(p);
        u->target = sql_parse_sortlist(p);
        if (!u->target || !sql_parse_expect(p, TK_RP)) return NULL;
        if (sql_parse_accept(p, TK_WHERE)) {
          u->target_where = sql_parse_expr(p);
          if (!u->target_where) return NULL;
        }
      }
      if (!sql_parse_expect(p, TK_DO)) return NULL;
      if (sql_parse_accept(p, TK_NOTHING)) {
        u->do_nothing = 1;
      } else {
        if (!sql_parse_expect(p, TK_UPDATE) || !sql_parse_expect(p, TK_SET)) return NULL;
        u->set = setlist(p, 1);
        if (!u->set) return NULL;
        if (sql_parse_accept(p, TK_WHERE)) {
          u->where = sql_parse_expr(p);
          if (!u->where) return NULL;
        }
      }
      *tail = u;
      tail = &u->next;
      if (!u->target) break; /* the last clause may omit the target */
    }
  }
  if (!returning(p, &ins->returning, SQL_STMT_INSERT)) return NULL;
  return s;
}

static SqlStmt *update_stmt(Parser *p, SqlWith *with, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_UPDATE, start);
  if (!s) return NULL;
  SqlUpdate *u = &s->u.update;
  u->with = with;
  sql_parse_advance(p); /* UPDATE */
  if (sql_parse_accept(p, TK_OR)) {
    u->or_conflict = (uint8_t)sql_parse_conflict(p);
    if (!u->or_conflict) return NULL;
  }
  u->table = dml_target(p, SQL_STMT_UPDATE);
  if (!u->table || !sql_parse_expect(p, TK_SET)) return NULL;
  u->set = setlist(p, 0);
  if (!u->set) return NULL;
  if (sql_parse_accept(p, TK_FROM)) {
    u->from = sql_parse_from(p);
    if (!u->from) return NULL;
  }
  if (sql_parse_accept(p, TK_WHERE)) {
    u->where = sql_parse_expr(p);
    if (!u->where) return NULL;
  }
  if (!returning(p, &u->returning, SQL_STMT_UPDATE)) return NULL;
  if (!p->in_trigger && !order_limit_dml(p, &u->order_by, &u->limit, &u->offset)) return NULL;
  return s;
}

static SqlStmt *delete_stmt(Parser *p, SqlWith *with, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_DELETE, start);
  if (!s) return NULL;
  SqlDelete *d = &s->u.del;
  d->with = with;
  sql_parse_advance(p); /* DELETE */
  if (!sql_parse_expect(p, TK_FROM)) return NULL;
  d->table = dml_target(p, SQL_STMT_DELETE);
  if (!d->table) return NULL;
  if (sql_parse_accept(p, TK_WHERE)) {
    d->where = sql_parse_expr(p);
    if (!d->where) return NULL;
  }
  if (!returning(p, &d->returning, SQL_STMT_DELETE)) return NULL;
  if (!p->in_trigger && !order_limit_dml(p, &d->order_by, &d->limit, &d->offset)) return NULL;
  return s;
}

/* ---- CREATE TABLE ---- */

/* ON CONFLICT resolution after a constraint (optional) */
static int onconf(Parser *p, uint8_t *out) {
  if (p->tok.type != TK_ON) return 1;
  sql_parse_advance(p);
  if (!sql_parse_expect(p, TK_CONFLICT)) return 0;
  int r = sql_parse_conflict(p);
  *out = (uint8_t)r;
  return r != 0;
}

/* ids in a type name: identifiers and strings (GENERATED ALWAYS included:
 * SQLite's grammar reads it into the type and strips it, see column_def) */
static int type_word(int t) { return sql_token_is_ids(t); }

static int signed_number(Parser *p) {
  if (p->tok.type == TK_PLUS || p->tok.type == TK_MINUS) sql_parse_advance(p);
  if (p->tok.type != TK_INTEGER && p->tok.type != TK_FLOAT) return sql_parse_syntax_error(p);
  sql_parse_advance(p);
  return 1;
}

/* FK actions and MATCH after REFERENCES tbl(cols) */
static int refargs(Parser *p, SqlForeignKey *fk) {
  for (;;) {
    if (p->tok.type == TK_MATCH) {
      sql_parse_advance(p);
      fk->match = sql_parse_nm(p);
      if (!fk->match) return 0;
    } else if (p->tok.type == TK_ON) {
      sql_parse_advance(p);
      int t1 = p->tok.type; /* ON INSERT is accepted and ignored, as in SQLite */
      if (t1 != TK_DELETE && t1 != TK_UPDATE && t1 != TK_INSERT) return sql_parse_syntax_error(p);
      sql_parse_advance(p);
      int act;
      if (sql_parse_accept(p, TK_SET)) {
        if (sql_parse_accept(p, TK_NULL))
          act = SQL_FK_SET_NULL;
        else if (sql_parse_accept(p, TK_DEFAULT))
          act = SQL_FK_SET_DEFAULT;
        else
          return sql_parse_syntax_error(p);
      } else if (sql_parse_accept(p, TK_CASCADE)) {
        act = SQL_FK_CASCADE;
      } else if (sql_parse_accept(p, TK_RESTRICT)) {
        act = SQL_FK_RESTRICT;
      } else if (sql_parse_accept(p, TK_NO)) {
        if (!sql_parse_expect(p, TK_ACTION)) return 0;
        act = SQL_FK_NO_ACTION;
      } else {
        return sql_parse_syntax_error(p);
      }
      if (t1 == TK_DELETE)
        fk->on_delete = (uint8_t)act;
      else if (t1 == TK_UPDATE)
        fk->on_update = (uint8_t)act;
    } else {
      return 1;
    }
  }
}

/* [NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE] -- at NOT or DEFERRABLE */
static int defer_clause(Parser *p, SqlForeignKey *fk) {
  int notd = sql_parse_accept(p, TK_NOT);
  if (!sql_parse_expect(p, TK_DEFERRABLE)) return 0;
  uint8_t init = 0;
  if (sql_parse_accept(p, TK_INITIALLY)) {
    if (sql_parse_accept(p, TK_DEFERRED))
      init = 1;
    else if (sql_parse_accept(p, TK_IMMEDIATE))
      init = 2;
    else
      return sql_parse_syntax_error(p);
  }
  if (fk) {
    fk->initially = init;
    fk->deferrable = notd ? 3 : (init == 1 ? 1 : 2);
  }
  return 1;
}

/* REFERENCES tbl [(cols)] refargs -- at REFERENCES */
static SqlForeignKey *references(Parser *p) {
  SqlForeignKey *fk = sql_parse_alloc(p, sizeof *fk);
  if (!fk) return NULL;
  sql_parse_advance(p);
  fk->table = sql_parse_nm(p);
  if (!fk->table) return NULL;
  if (p->tok.type == TK_LP) {
    fk->to_cols = sql_parse_eidlist_paren(p);
    if (!fk->to_cols) return NULL;
  }
  if (!refargs(p, fk)) return NULL;
  return fk;
}

typedef struct ConsVec {
  int n, cap;
  SqlConstraint *a;
} ConsVec;

static SqlConstraint *cons_add(Parser *p, ConsVec *v) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    SqlConstraint *a = sql_parse_alloc(p, sizeof(SqlConstraint) * (size_t)cap);
    if (!a) return NULL;
    if (v->n) memcpy(a, v->a, sizeof(SqlConstraint) * (size_t)v->n);
    v->a = a;
    v->cap = cap;
  }
  SqlConstraint *c = &v->a[v->n++];
  memset(c, 0, sizeof *c);
  return c;
}

/* DEFAULT value -- after DEFAULT */
static SqlExpr *default_value(Parser *p) {
  int t = p->tok.type, start = p->tok.start;
  if (t == TK_LP) {
    sql_parse_advance(p);
    SqlExpr *e = sql_parse_expr(p);
    if (!e || !sql_parse_expect(p, TK_RP)) return NULL;
    e->flags |= SQL_EF_PAREN;
    return e;
  }
  if (t == TK_PLUS || t == TK_MINUS) {
    /* DEFAULT +term / -term: any literal may follow the sign */
    sql_parse_advance(p);
    int t2 = p->tok.type;
    if (t2 != TK_INTEGER && t2 != TK_FLOAT && t2 != TK_STRING && t2 != TK_BLOB && t2 != TK_NULL &&
        t2 != TK_CURRENT_TIME && t2 != TK_CURRENT_DATE && t2 != TK_CURRENT_TIMESTAMP)
      return sql_parse_syntax_error(p), NULL;
    SqlExpr *a = default_value(p);
    if (!a) return NULL;
    SqlExpr *e = sql_parse_expr_new(p, SQL_E_UNARY, start);
    if (!e) return NULL;
    e->sub = (uint16_t)t;
    e->a = a;
    e->height = 2;
    sql_parse_expr_end(p, e);
    return e;
  }
  if (t == TK_INTEGER || t == TK_FLOAT || t == TK_STRING || t == TK_BLOB || t == TK_NULL ||
      t == TK_CURRENT_TIME || t == TK_CURRENT_DATE || t == TK_CURRENT_TIMESTAMP) {
    SqlExpr *e = sql_parse_expr_new(p, SQL_E_NULL, start);
    if (!e) return NULL;
    switch (t) {
      case TK_INTEGER:
        e->op = SQL_E_INTEGER;
        e->z = sql_parse_text(p, start, p->tok.len);
        break;
      case TK_FLOAT:
        e->op = SQL_E_FLOAT;
        e->z = sql_parse_text(p, start, p->tok.len);
        break;
      case TK_STRING:
        e->op = SQL_E_STRING;
        e->z = sql_parse_name(p, &p->tok);
        break;
      case TK_BLOB:
        e->op = SQL_E_BLOB;
        e->z = sql_parse_text(p, start + 2, p->tok.len - 3);
        break;
      case TK_NULL:
        break;
      default:
        e->op = SQL_E_CTIME;
        e->sub = (uint16_t)t;
        break;
    }
    sql_parse_advance(p);
    sql_parse_expr_end(p, e);
    return e;
  }
  if (sql_token_is_id(t) || t == TK_INDEXED) {
    /* DEFAULT id: a string (quoted or not), except a bare TRUE / FALSE,
     * which stays the identifier that means 1 / 0 (as SQLite's grammar) */
    SqlExpr *e = sql_parse_expr_new(p, SQL_E_ID, start);
    if (!e) return NULL;
    e->z = sql_parse_name(p, &p->tok);
    int word = p->tok.len == (int)strlen(e->z);
    if (!word || (util_stricmp(e->z, "true") && util_stricmp(e->z, "false"))) e->op = SQL_E_STRING;
    sql_parse_advance(p);
    sql_parse_expr_end(p, e);
    return e;
  }
  sql_parse_syntax_error(p);
  return NULL;
}

/* Tokens that may follow a column constraint (ALTER TABLE ADD: the end too). */
static int cons_follow(Parser *p, int t) {
  if (p->in_alter && (t == TK_SEMI || t == TK_EOF)) return 1;
  switch (t) {
    case TK_COMMA:
    case TK_RP:
    case TK_CONSTRAINT:
    case TK_DEFAULT:
    case TK_NULL:
    case TK_NOT:
    case TK_PRIMARY:
    case TK_UNIQUE:
    case TK_CHECK:
    case TK_REFERENCES:
    case TK_COLLATE:
    case TK_GENERATED:
    case TK_AS:
    case TK_DEFERRABLE:
      return 1;
    default:
      return 0;
  }
}

/* The declared type as SQLite keeps it: a type written as one quoted token
 * is dequoted; a type equal (any case) to a standard name is that name in
 * upper case; otherwise text that starts with a quote keeps only the quoted
 * part, and anything else is kept as written. */
static const char *decl_type(Parser *p, int start, int len) {
  static const char *const std_names[] = {"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"};
  const char *z = p->sql + start;
  int qlen = 0; /* length of a leading quoted token */
  if (z[0] == '\'' || z[0] == '"' || z[0] == '`' || z[0] == '[') {
    int type;
    qlen = sql_token(z, len, &type);
  }
  SqlTok t = {TK_ID, start, len};
  const char *v;
  if (qlen == len) {
    v = sql_parse_name(p, &t); /* the whole type is one quoted token */
  } else if (qlen > 0) {
    t.len = qlen;
    return sql_parse_name(p, &t);
  } else {
    v = sql_parse_text(p, start, len);
  }
  if (!v) return NULL;
  for (int i = 0; i < 6; i++)
    if (!util_stricmp(v, std_names[i])) return std_names[i];
  return v;
}

/* column definition: nm [type] [constraints] */
static int column_def(Parser *p, SqlColumnDef *col) {
  col->span.start = p->tok.start;
  col->name = sql_parse_nm(p);
  if (!col->name) return 0;
  if (type_word(p->tok.type)) {
    int tstart = p->tok.start;
    while (type_word(p->tok.type)) sql_parse_advance(p);
    if (sql_parse_accept(p, TK_LP)) {
      if (!signed_number(p)) return 0;
      if (sql_parse_accept(p, TK_COMMA) && !signed_number(p)) return 0;
      if (!sql_parse_expect(p, TK_RP)) return 0;
    }
    int tlen = p->prev_end - tstart;
    /* "x INT GENERATED ALWAYS AS (...)": the words GENERATED ALWAYS were read
     * as part of the type; drop them from it, as SQLite does */
    if (tlen >= 17 && !util_strnicmp(p->sql + tstart + tlen - 17, " generated always", 17)) {
      tlen -= 17;
    } else if (tlen == 16 && !util_strnicmp(p->sql + tstart, "generated always", 16)) {
      tlen = 0;
    }
    if (tlen > 0) {
      col->type = sql_parse_text(p, tstart, tlen);
      col->decl_type = decl_type(p, tstart, tlen);
      if (!col->type || !col->decl_type) return 0;
    }
  }
  ConsVec v = {0, 0, NULL};
  const char *cname = NULL;
  SqlConstraint *last_fk = NULL;
  int has_default = 0, has_generated = 0, has_pk = 0;
  for (;;) {
    int t = p->tok.type, cstart = p->tok.start;
    SqlConstraint *c;
    if (t == TK_CONSTRAINT) {
      sql_parse_advance(p);
      cname = sql_parse_nm(p);
      if (!cname) return 0;
      continue;
    }
    if (t == TK_DEFERRABLE || (t == TK_NOT && sql_parse_peek(p, 1)->type == TK_DEFERRABLE)) {
      /* NOT DEFERRABLE; NOT followed by anything else is NOT NULL below */
      if (!defer_clause(p, last_fk ? last_fk->fk : NULL)) return 0;
      continue;
    }
    if (t != TK_DEFAULT && t != TK_NULL && t != TK_NOT && t != TK_PRIMARY && t != TK_UNIQUE &&
        t != TK_CHECK && t != TK_REFERENCES && t != TK_COLLATE && t != TK_GENERATED && t != TK_AS)
      break;
    c = cons_add(p, &v);
    if (!c) return 0;
    c->name = cname;
    cname = NULL;
    sql_parse_advance(p);
    switch (t) {
      case TK_DEFAULT:
        c->type = SQL_CONS_DEFAULT;
        c->expr = default_value(p);
        if (!c->expr) return 0;
        break;
      case TK_NULL:
        c->type = SQL_CONS_NULL;
        if (!onconf(p, &c->on_conflict)) return 0;
        break;
      case TK_NOT:
        c->type = SQL_CONS_NOT_NULL;
        if (!sql_parse_expect(p, TK_NULL) || !onconf(p, &c->on_conflict)) return 0;
        break;
      case TK_PRIMARY:
        c->type = SQL_CONS_PRIMARY_KEY;
        if (!sql_parse_expect(p, TK_KEY)) return 0;
        if (sql_parse_accept(p, TK_ASC))
          c->sort = SQL_SORT_ASC;
        else if (sql_parse_accept(p, TK_DESC))
          c->sort = SQL_SORT_DESC;
        if (!onconf(p, &c->on_conflict)) return 0;
        if (sql_parse_accept(p, TK_AUTOINCREMENT)) c->autoincrement = 1;
        break;
      case TK_UNIQUE:
        c->type = SQL_CONS_UNIQUE;
        if (!onconf(p, &c->on_conflict)) return 0;
        break;
      case TK_CHECK:
        c->type = SQL_CONS_CHECK;
        if (!sql_parse_expect(p, TK_LP)) return 0;
        c->expr = sql_parse_expr(p);
        if (!c->expr || !sql_parse_expect(p, TK_RP)) return 0;
        break;
      case TK_REFERENCES:
        c->type = SQL_CONS_REFERENCES;
        {
          SqlForeignKey *fk = sql_parse_alloc(p, sizeof *fk);
          if (!fk) return 0;
          fk->table = sql_parse_nm(p);
          if (!fk->table) return 0;
          if (p->tok.type == TK_LP) {
            fk->to_cols = sql_parse_eidlist_paren(p);
            if (!fk->to_cols) return 0;
          }
          if (!refargs(p, fk)) return 0;
          c->fk = fk;
        }
        last_fk = c;
        break;
      case TK_COLLATE:
        c->type = SQL_CONS_COLLATE;
        if (!sql_token_is_ids(p->tok.type)) return sql_parse_syntax_error(p);
        c->collate = sql_parse_name(p, &p->tok);
        sql_parse_advance(p);
        break;
      case TK_GENERATED:
      case TK_AS:
        c->type = SQL_CONS_GENERATED;
        if (t == TK_GENERATED && (!sql_parse_expect(p, TK_ALWAYS) || !sql_parse_expect(p, TK_AS)))
          return 0;
        if (!sql_parse_expect(p, TK_LP)) return 0;
        c->expr = sql_parse_expr(p);
        if (!c->expr || !sql_parse_expect(p, TK_RP)) return 0;
        if (sql_token_is_id(p->tok.type)) {
          SqlTok k = p->tok;
          sql_parse_advance(p);
          if (!cons_follow(p, p->tok.type)) return sql_parse_syntax_error(p);
          if (k.len == 6 && !util_strnicmp(p->sql + k.start, "stored", 6)) {
            c->stored = 1;
          } else if (!(k.len == 7 && !util_strnicmp(p->sql + k.start, "virtual", 7))) {
            return sql_parse_error(p, "error in generated column \"%s\"", col->name);
          }
        }
        break;
    }
    c->span.start = cstart;
    c->span.len = p->prev_end - cstart;
    /* SQLite's checks on generated columns, made as each constraint is
     * reduced (so a syntax error at the next token comes first) */
    int bad = 0;
    if (c->type == SQL_CONS_GENERATED)
      bad = (has_default || has_generated) ? 1 : has_pk ? 3 : 0;
    else if (c->type == SQL_CONS_DEFAULT && has_generated)
      bad = 2;
    else if (c->type == SQL_CONS_PRIMARY_KEY && p->ct && p->ct_has_pk)
      bad = 4;
    else if (c->type == SQL_CONS_PRIMARY_KEY && c->autoincrement &&
             !(col->decl_type && !strcmp(col->decl_type, "INTEGER") && c->sort != SQL_SORT_DESC))
      bad = 5;
    else if (c->type == SQL_CONS_PRIMARY_KEY && has_generated)
      bad = 3;
    if (bad) {
      if (!cons_follow(p, p->tok.type)) return sql_parse_syntax_error(p);
      if (bad == 1) return sql_parse_error(p, "error in generated column \"%s\"", col->name);
      if (bad == 2) return sql_parse_error(p, "cannot use DEFAULT on a generated column");
      if (bad == 4)
        return sql_parse_error(p, "table \"%s\" has more than one primary key", p->ct->name.name);
      if (bad == 5)
        return sql_parse_error(p, "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY");
      return sql_parse_error(p, "generated columns cannot be part of the PRIMARY KEY");
    }
    if (c->type == SQL_CONS_PRIMARY_KEY && p->ct) p->ct_has_pk = 1;
    if (c->type == SQL_CONS_GENERATED) has_generated = 1;
    if (c->type == SQL_CONS_DEFAULT) has_default = 1;
    if (c->type == SQL_CONS_PRIMARY_KEY) has_pk = 1;
  }
  col->ncons = v.n;
  col->cons = v.a;
  col->span.len = p->prev_end - col->span.start;
  return 1;
}

/* Column of the table being created named by a PRIMARY KEY term, or NULL. */
static SqlColumnDef *pk_column(Parser *p, const SqlExpr *e) {
  while (e && e->op == SQL_E_COLLATE) e = e->a;
  if (!e || e->op != SQL_E_ID || !p->ct) return NULL;
  for (int i = 0; i < p->ct->ncols; i++)
    if (!util_stricmp(p->ct->cols[i].name, e->z)) return &p->ct->cols[i];
  return NULL;
}

static int is_generated(const SqlColumnDef *col) {
  for (int i = 0; i < col->ncons; i++)
    if (col->cons[i].type == SQL_CONS_GENERATED) return 1;
  return 0;
}

/* SQLite's checks when a table PRIMARY KEY (...) is reduced (at the next
 * token), in its order: only one primary key, AUTOINCREMENT only on a single
 * INTEGER column, none of its columns generated. */
static int table_pk_check(Parser *p, SqlConstraint *c) {
  int t = p->tok.type;
  if (t != TK_COMMA && t != TK_RP && t != TK_CONSTRAINT && t != TK_PRIMARY && t != TK_UNIQUE &&
      t != TK_CHECK && t != TK_FOREIGN)
    return sql_parse_syntax_error(p);
  if (!p->ct) return 1;
  if (p->ct_has_pk)
    return sql_parse_error(p, "table \"%s\" has more than one primary key", p->ct->name.name);
  p->ct_has_pk = 1;
  SqlColumnDef *col = c->columns->n == 1 ? pk_column(p, c->columns->a[0].expr) : NULL;
  int ipk = col && col->decl_type && !strcmp(col->decl_type, "INTEGER");
  if (c->autoincrement && !ipk)
    return sql_parse_error(p, "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY");
  for (int i = 0; i < c->columns->n; i++) {
    col = pk_column(p, c->columns->a[i].expr);
    if (col && is_generated(col))
      return sql_parse_error(p, "generated columns cannot be part of the PRIMARY KEY");
  }
  return 1;
}

static int table_constraint(Parser *p, ConsVec *v, const char *name) {
  SqlConstraint *c = cons_add(p, v);
  if (!c) return 0;
  c->name = name;
  c->span.start = p->tok.start;
  int t = p->tok.type;
  sql_parse_advance(p);
  switch (t) {
    case TK_PRIMARY:
    case TK_UNIQUE:
      c->type = t == TK_PRIMARY ? SQL_CONS_PRIMARY_KEY : SQL_CONS_UNIQUE;
      if (t == TK_PRIMARY && !sql_parse_expect(p, TK_KEY)) return 0;
      if (!sql_parse_expect(p, TK_LP)) return 0;
      c->columns = sql_parse_sortlist(p);
      if (!c->columns) return 0;
      if (t == TK_PRIMARY && sql_parse_accept(p, TK_AUTOINCREMENT)) c->autoincrement = 1;
      if (!sql_parse_expect(p, TK_RP)) return 0;
      if (!onconf(p, &c->on_conflict)) return 0;
      if (t == TK_PRIMARY && !table_pk_check(p, c)) return 0;
      break;
    case TK_CHECK:
      c->type = SQL_CONS_CHECK;
      if (!sql_parse_expect(p, TK_LP)) return 0;
      c->expr = sql_parse_expr(p);
      if (!c->expr || !sql_parse_expect(p, TK_RP)) return 0;
      if (!onconf(p, &c->on_conflict)) return 0;
      break;
    case TK_FOREIGN: {
      c->type = SQL_CONS_FOREIGN_KEY;
      if (!sql_parse_expect(p, TK_KEY)) return 0;
      SqlIdList *from = sql_parse_eidlist_paren(p);
      if (!from) return 0;
      if (p->tok.type != TK_REFERENCES) return sql_parse_syntax_error(p);
      c->fk = references(p);
      if (!c->fk) return 0;
      c->fk->from_cols = from;
      if (p->tok.type == TK_DEFERRABLE || p->tok.type == TK_NOT) {
        if (!defer_clause(p, c->fk)) return 0;
      }
      break;
    }
    default:
      assert(0);
  }
  c->span.len = p->prev_end - c->span.start;
  return 1;
}

/* Table options after the column list: [WITHOUT ROWID | STRICT], comma
 * separated (SQLite's grammar also accepts an empty first option). An
 * unknown option is reported where SQLite reduces it: at ',' or the end. */
static int table_options(Parser *p, SqlCreateTable *ct) {
  for (int first = 1;; first = 0) {
    SqlTok k;
    int without = 0;
    if (p->tok.type == TK_WITHOUT) {
      sql_parse_advance(p);
      without = 1;
      if (!sql_token_is_nm(p->tok.type)) return sql_parse_syntax_error(p);
    } else if (!sql_token_is_nm(p->tok.type)) {
      if (first && p->tok.type == TK_COMMA) {
        sql_parse_advance(p);
        continue;
      }
      return first ? 1 : sql_parse_syntax_error(p);
    }
    k = p->tok;
    sql_parse_advance(p);
    int t = p->tok.type;
    if (t != TK_COMMA && t != TK_SEMI && t != TK_EOF) return sql_parse_syntax_error(p);
    if (without && k.len == 5 && !util_strnicmp(p->sql + k.start, "rowid", 5))
      ct->options |= SQL_TABOPT_WITHOUT_ROWID;
    else if (!without && k.len == 6 && !util_strnicmp(p->sql + k.start, "strict", 6))
      ct->options |= SQL_TABOPT_STRICT;
    else
      return sql_parse_error(p, "unknown table option: %.*s", k.len, p->sql + k.start);
    if (!sql_parse_accept(p, TK_COMMA)) return 1;
  }
}

static SqlStmt *create_table(Parser *p, int start, int temp) {
  SqlStmt *s = stmt_new(p, SQL_STMT_CREATE_TABLE, start);
  if (!s) return NULL;
  SqlCreateTable *ct = &s->u.create_table;
  ct->temp = (uint8_t)temp;
  sql_parse_advance(p); /* TABLE */
  int ine = if_not_exists(p);
  if (ine < 0) return NULL;
  ct->if_not_exists = (uint8_t)ine;
  if (!sql_parse_qualname(p, &ct->name)) return NULL;
  if (sql_parse_accept(p, TK_AS)) {
    ct->as_select = sql_parse_select(p);
    return ct->as_select ? s : NULL;
  }
  if (!sql_parse_expect(p, TK_LP)) return NULL;
  int cap = 0;
  ConsVec v = {0, 0, NULL};
  p->ct = ct;
  p->ct_has_pk = 0;
  for (;;) {
    int t = p->tok.type;
    if (t == TK_CONSTRAINT || t == TK_PRIMARY || t == TK_UNIQUE || t == TK_CHECK ||
        t == TK_FOREIGN) {
      if (ct->ncols == 0) return sql_parse_syntax_error(p), NULL;
      break;
    }
    if (ct->ncols == cap) {
      cap = cap ? cap * 2 : 8;
      SqlColumnDef *a = sql_parse_alloc(p, sizeof(SqlColumnDef) * (size_t)cap);
      if (!a) return NULL;
      if (ct->ncols) memcpy(a, ct->cols, sizeof(SqlColumnDef) * (size_t)ct->ncols);
      ct->cols = a;
    }
    if (!column_def(p, &ct->cols[ct->ncols++])) return NULL;
    if (!sql_parse_accept(p, TK_COMMA)) goto close;
  }
  /* table constraints, separated by optional commas */
  for (;;) {
    const char *name = NULL;
    if (sql_parse_accept(p, TK_CONSTRAINT)) {
      name = sql_parse_nm(p);
      if (!name) return NULL;
    }
    int t = p->tok.type;
    if (t != TK_PRIMARY && t != TK_UNIQUE && t != TK_CHECK && t != TK_FOREIGN) {
      if (!name) return sql_parse_syntax_error(p), NULL;
      /* "CONSTRAINT name" alone is accepted (and names nothing) */
    } else if (!table_constraint(p, &v, name)) {
      return NULL;
    }
    if (sql_parse_accept(p, TK_COMMA)) continue; /* a constraint must follow a comma */
    t = p->tok.type;
    if (t != TK_CONSTRAINT && t != TK_PRIMARY && t != TK_UNIQUE && t != TK_CHECK && t != TK_FOREIGN)
      break;
  }
close:
  p->ct = NULL;
  ct->ncons = v.n;
  ct->cons = v.a;
  if (!sql_parse_expect(p, TK_RP)) return NULL;
  if (!table_options(p, ct)) return NULL;
  return s;
}

/* ---- other CREATEs ---- */

static SqlStmt *create_index(Parser *p, int start, int unique) {
  SqlStmt *s = stmt_new(p, SQL_STMT_CREATE_INDEX, start);
  if (!s) return NULL;
  SqlCreateIndex *ci = &s->u.create_index;
  ci->unique = (uint8_t)unique;
  sql_parse_advance(p); /* INDEX */
  int ine = if_not_exists(p);
  if (ine < 0) return NULL;
  ci->if_not_exists = (uint8_t)ine;
  if (!sql_parse_qualname(p, &ci->name) || !sql_parse_expect(p, TK_ON)) return NULL;
  ci->table = sql_parse_nm(p);
  if (!ci->table || !sql_parse_expect(p, TK_LP)) return NULL;
  ci->columns = sql_parse_sortlist(p);
  if (!ci->columns || !sql_parse_expect(p, TK_RP)) return NULL;
  if (sql_parse_accept(p, TK_WHERE)) {
    ci->where = sql_parse_expr(p);
    if (!ci->where) return NULL;
  }
  return s;
}

static SqlStmt *create_view(Parser *p, int start, int temp) {
  SqlStmt *s = stmt_new(p, SQL_STMT_CREATE_VIEW, start);
  if (!s) return NULL;
  SqlCreateView *cv = &s->u.create_view;
  cv->temp = (uint8_t)temp;
  sql_parse_advance(p); /* VIEW */
  int ine = if_not_exists(p);
  if (ine < 0) return NULL;
  cv->if_not_exists = (uint8_t)ine;
  if (!sql_parse_qualname(p, &cv->name)) return NULL;
  if (p->tok.type == TK_LP) {
    cv->columns = sql_parse_eidlist_paren(p);
    if (!cv->columns) return NULL;
  }
  if (!sql_parse_expect(p, TK_AS)) return NULL;
  cv->select = sql_parse_select(p);
  return cv->select ? s : NULL;
}

static SqlStmt *trigger_cmd(Parser *p);

static SqlStmt *create_trigger(Parser *p, int start, int temp) {
  SqlStmt *s = stmt_new(p, SQL_STMT_CREATE_TRIGGER, start);
  if (!s) return NULL;
  SqlCreateTrigger *tr = &s->u.create_trigger;
  tr->temp = (uint8_t)temp;
  sql_parse_advance(p); /* TRIGGER */
  int ine = if_not_exists(p);
  if (ine < 0) return NULL;
  tr->if_not_exists = (uint8_t)ine;
  if (!sql_parse_qualname(p, &tr->name)) return NULL;
  if (sql_parse_accept(p, TK_BEFORE)) {
    tr->time = SQL_TRIG_BEFORE;
  } else if (sql_parse_accept(p, TK_AFTER)) {
    tr->time = SQL_TRIG_AFTER;
  } else if (p->tok.type == TK_INSTEAD) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_OF)) return NULL;
    tr->time = SQL_TRIG_INSTEAD_OF;
  }
  int ev = p->tok.type;
  if (ev != TK_DELETE && ev != TK_INSERT && ev != TK_UPDATE) return sql_parse_syntax_error(p), NULL;
  tr->event = (uint16_t)ev;
  sql_parse_advance(p);
  if (ev == TK_UPDATE && sql_parse_accept(p, TK_OF)) {
    do {
      const char *n = sql_parse_nm(p);
      if (!n) return NULL;
      tr->update_of = sql_parse_idlist_add(p, tr->update_of, n);
    } while (sql_parse_accept(p, TK_COMMA));
  }
  if (!sql_parse_expect(p, TK_ON)) return NULL;
  SqlQualName tbl;
  memset(&tbl, 0, sizeof tbl);
  if (!sql_parse_qualname(p, &tbl)) return NULL;
  tr->table = tbl.name;
  tr->table_schema = tbl.schema;
  if (p->tok.type == TK_FOR) {
    sql_parse_advance(p);
    if (!sql_parse_expect(p, TK_EACH) || !sql_parse_expect(p, TK_ROW)) return NULL;
    tr->for_each_row = 1;
  }
  if (sql_parse_accept(p, TK_WHEN)) {
    tr->when = sql_parse_expr(p);
    if (!tr->when) return NULL;
  }
  if (!sql_parse_expect(p, TK_BEGIN)) return NULL;
  p->trig_hdr = s;
  int cap = 0;
  p->in_trigger = 1;
  do {
    SqlStmt *c = trigger_cmd(p);
    if (!c || !sql_parse_expect(p, TK_SEMI)) return NULL;
    if (tr->nstmts == cap) {
      cap = cap ? cap * 2 : 4;
      SqlStmt **a = sql_parse_alloc(p, sizeof(SqlStmt *) * (size_t)cap);
      if (!a) return NULL;
      if (tr->nstmts) memcpy(a, tr->stmts, sizeof(SqlStmt *) * (size_t)tr->nstmts);
      tr->stmts = a;
    }
    tr->stmts[tr->nstmts++] = c;
  } while (p->tok.type != TK_END);
  p->in_trigger = 0;
  sql_parse_advance(p); /* END */
  return s;
}

static SqlStmt *trigger_cmd(Parser *p) {
  int start = p->tok.start;
  SqlStmt *s;
  switch (p->tok.type) {
    case TK_UPDATE:
      s = update_stmt(p, NULL, start);
      break;
    case TK_INSERT:
    case TK_REPLACE:
      s = insert_stmt(p, NULL, start);
      break;
    case TK_DELETE:
      s = delete_stmt(p, NULL, start);
      break;
    case TK_SELECT:
    case TK_VALUES:
    case TK_WITH:
      s = stmt_new(p, SQL_STMT_SELECT, start);
      if (!s) return NULL;
      s->u.select = sql_parse_select(p);
      if (!s->u.select) return NULL;
      break;
    default:
      sql_parse_syntax_error(p);
      return NULL;
  }
  if (s) s->span.len = p->prev_end - start;
  return s;
}

static SqlStmt *create_vtab(Parser *p, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_CREATE_VTAB, start);
  if (!s) return NULL;
  SqlCreateVtab *vt = &s->u.create_vtab;
  sql_parse_advance(p); /* VIRTUAL */
  if (!sql_parse_expect(p, TK_TABLE)) return NULL;
  int ine = if_not_exists(p);
  if (ine < 0) return NULL;
  vt->if_not_exists = (uint8_t)ine;
  if (!sql_parse_qualname(p, &vt->name) || !sql_parse_expect(p, TK_USING)) return NULL;
  vt->module = sql_parse_nm(p);
  if (!vt->module) return NULL;
  if (p->tok.type != TK_LP) return s;
  sql_parse_advance(p);
  int cap = 0, depth = 0, astart = -1, aend = -1;
  for (;;) {
    int t = p->tok.type;
    if (t == TK_EOF || t == TK_ILLEGAL)
      return sql_parse_syntax_error(p), NULL; /* even ; is an argument */
    if (depth == 0 && (t == TK_COMMA || t == TK_RP)) {
      if (astart >= 0) {
        if (vt->nargs == cap) {
          cap = cap ? cap * 2 : 4;
          SqlSpan *a = sql_parse_alloc(p, sizeof(SqlSpan) * (size_t)cap);
          if (!a) return NULL;
          if (vt->nargs) memcpy(a, vt->args, sizeof(SqlSpan) * (size_t)vt->nargs);
          vt->args = a;
        }
        vt->args[vt->nargs].start = astart;
        vt->args[vt->nargs].len = aend - astart;
        vt->nargs++;
      }
      astart = -1;
      sql_parse_advance(p);
      if (t == TK_RP) break;
      continue;
    }
    if (t == TK_LP) depth++;
    if (t == TK_RP) depth--;
    if (astart < 0) astart = p->tok.start;
    aend = p->tok.start + p->tok.len;
    sql_parse_advance(p);
  }
  return s;
}

/* ---- the rest ---- */

static SqlStmt *drop_stmt(Parser *p, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_DROP, start);
  if (!s) return NULL;
  sql_parse_advance(p); /* DROP */
  int t = p->tok.type;
  if (t != TK_TABLE && t != TK_INDEX && t != TK_VIEW && t != TK_TRIGGER)
    return sql_parse_syntax_error(p), NULL;
  s->u.drop.object = (uint16_t)t;
  sql_parse_advance(p);
  int ie = if_exists(p);
  if (ie < 0) return NULL;
  s->u.drop.if_exists = (uint8_t)ie;
  if (!sql_parse_qualname(p, &s->u.drop.name)) return NULL;
  return s;
}

static SqlStmt *alter_stmt(Parser *p, int start) {
  SqlStmt *s = stmt_new(p, SQL_STMT_ALTER, start);
  if (!s) return NULL;
  SqlAlter *a = &s->u.alter;
  sql_parse_advance(p); /* ALTER */
  if (!sql_parse_expect(p, TK_TABLE) || !sql_parse_qualname(p, &a->table)) return NULL;
  if (sql_parse_accept(p, TK_RENAME)) {
    if (sql_parse_accept(p, TK_TO)) {
      a->action = SQL_ALTER_RENAME_TABLE;
      a->new_name = sql_parse_nm(p);
      return a->new_name ? s : NULL;
    }
    a->action = SQL_ALTER_RENAME_COLUMN;
    sql_parse_accept(p, TK_COLUMN);
    a->old_name = sql_parse_nm(p);
    if (!a->old_name || !sql_parse_expect(p, TK_TO)) return NULL;
    a->new_name = sql_parse_nm(p);
    return a->new_name ? s : NULL;
  }
  if (sql_parse_accept(p, TK_ADD)) {
    a->action = SQL_ALTER_ADD_COLUMN;
    sql_parse_accept(p, TK_COLUMN);
    a->column = sql_parse_alloc(p, sizeof *a->column);
    p->in_alter = 1;
    if (!a->column || !column_def(p, a->column)) return NULL;
    p->in_alter = 0;
    return s;
  }
  if (sql_parse_accept(p, TK_DROP)) {
    a->action = SQL_ALTER_DROP_COLUMN;
    sql_parse_accept(p, TK_COLUMN);
    a->old_name = sql_parse_nm(p);
    return a->old_name ? s : NULL;
  }
  sql_parse_syntax_error(p);
  return NULL;
}

/* [TRANSACTION [nm]] */
static int trans_opt(Parser *p) {
  if (sql_parse_accept(p, TK_TRANSACTION)) {
    if (sql_token_is_nm(p->tok.type)) sql_parse_advance(p);
  }
  return 1;
}

/* PRAGMA value: nm | ON | DELETE | DEFAULT | [+|-] number | string */
static SqlExpr *pragma_value(Parser *p) {
  int t = p->tok.type, start = p->tok.start;
  SqlExpr *e;
  if (t == TK_PLUS || t == TK_MINUS) {
    sql_parse_advance(p);
    int t2 = p->tok.type;
    if (t2 != TK_INTEGER && t2 != TK_FLOAT) return sql_parse_syntax_error(p), NULL;
    e = sql_parse_expr_new(p, t2 == TK_INTEGER ? SQL_E_INTEGER : SQL_E_FLOAT, start);
    if (!e) return NULL;
    sql_parse_advance(p);
    e->z = sql_parse_text(p, start, p->prev_end - start);
  } else if (t == TK_INTEGER || t == TK_FLOAT) {
    e = sql_parse_expr_new(p, t == TK_INTEGER ? SQL_E_INTEGER : SQL_E_FLOAT, start);
    if (!e) return NULL;
    e->z = sql_parse_text(p, start, p->tok.len);
    sql_parse_advance(p);
  } else if (sql_token_is_nm(t) || t == TK_ON || t == TK_DELETE || t == TK_DEFAULT) {
    e = sql_parse_expr_new(p, t == TK_STRING ? SQL_E_STRING : SQL_E_ID, start);
    if (!e) return NULL;
    e->z = sql_parse_name(p, &p->tok);
    sql_parse_advance(p);
  } else {
    sql_parse_syntax_error(p);
    return NULL;
  }
  sql_parse_expr_end(p, e);
  return e;
}

SqlStmt *sql_parse_stmt(Parser *p) {
  int start = p->tok.start;
  SqlStmt *s = NULL;
  int t = p->tok.type;
  switch (t) {
    case TK_SELECT:
    case TK_VALUES:
      s = stmt_new(p, SQL_STMT_SELECT, start);
      if (!s) return NULL;
      s->u.select = sql_parse_select(p);
      if (!s->u.select) return NULL;
      break;
    case TK_WITH: {
      SqlWith *w = sql_parse_with(p);
      if (!w) return NULL;
      t = p->tok.type;
      if (t == TK_SELECT || t == TK_VALUES) {
        s = stmt_new(p, SQL_STMT_SELECT, start);
        if (!s) return NULL;
        s->u.select = sql_parse_select_with(p, w);
        if (!s->u.select) return NULL;
      } else if (t == TK_INSERT || t == TK_REPLACE) {
        s = insert_stmt(p, w, start);
      } else if (t == TK_UPDATE) {
        s = update_stmt(p, w, start);
      } else if (t == TK_DELETE) {
        s = delete_stmt(p, w, start);
      } else {
        sql_parse_syntax_error(p);
      }
      break;
    }
    case TK_INSERT:
    case TK_REPLACE:
      s = insert_stmt(p, NULL, start);
      break;
    case TK_UPDATE:
      s = update_stmt(p, NULL, start);
      break;
    case TK_DELETE:
      s = delete_stmt(p, NULL, start);
      break;
    case TK_CREATE: {
      sql_parse_advance(p);
      int temp = 0;
      if (p->tok.type == TK_TEMP || p->tok.type == TK_TEMPORARY) {
        temp = 1;
        sql_parse_advance(p);
      }
      t = p->tok.type;
      if (t == TK_TABLE)
        s = create_table(p, start, temp);
      else if (t == TK_VIEW)
        s = create_view(p, start, temp);
      else if (t == TK_TRIGGER)
        s = create_trigger(p, start, temp);
      else if (!temp && t == TK_INDEX)
        s = create_index(p, start, 0);
      else if (!temp && t == TK_UNIQUE) {
        sql_parse_advance(p);
        if (p->tok.type != TK_INDEX) return sql_parse_syntax_error(p), NULL;
        s = create_index(p, start, 1);
      } else if (!temp && t == TK_VIRTUAL)
        s = create_vtab(p, start);
      else
        sql_parse_syntax_error(p);
      break;
    }
    case TK_DROP:
      s = drop_stmt(p, start);
      break;
    case TK_ALTER:
      s = alter_stmt(p, start);
      break;
    case TK_BEGIN:
      s = stmt_new(p, SQL_STMT_BEGIN, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      t = p->tok.type;
      if (t == TK_DEFERRED || t == TK_IMMEDIATE || t == TK_EXCLUSIVE) {
        s->u.begin.mode = (uint16_t)t;
        sql_parse_advance(p);
      }
      trans_opt(p);
      break;
    case TK_COMMIT:
    case TK_END:
      s = stmt_new(p, SQL_STMT_COMMIT, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      trans_opt(p);
      break;
    case TK_ROLLBACK:
      s = stmt_new(p, SQL_STMT_ROLLBACK, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      trans_opt(p);
      if (sql_parse_accept(p, TK_TO)) {
        sql_parse_accept(p, TK_SAVEPOINT);
        s->u.rollback.savepoint = sql_parse_nm(p);
        if (!s->u.rollback.savepoint) return NULL;
      }
      break;
    case TK_SAVEPOINT:
      s = stmt_new(p, SQL_STMT_SAVEPOINT, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      s->u.savepoint.name = sql_parse_nm(p);
      if (!s->u.savepoint.name) return NULL;
      break;
    case TK_RELEASE:
      s = stmt_new(p, SQL_STMT_RELEASE, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      sql_parse_accept(p, TK_SAVEPOINT);
      s->u.savepoint.name = sql_parse_nm(p);
      if (!s->u.savepoint.name) return NULL;
      break;
    case TK_PRAGMA:
      s = stmt_new(p, SQL_STMT_PRAGMA, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      if (!sql_parse_qualname(p, &s->u.pragma.name)) return NULL;
      if (sql_parse_accept(p, TK_EQ)) {
        s->u.pragma.value = pragma_value(p);
        if (!s->u.pragma.value) return NULL;
      } else if (sql_parse_accept(p, TK_LP)) {
        s->u.pragma.call = 1;
        s->u.pragma.value = pragma_value(p);
        if (!s->u.pragma.value || !sql_parse_expect(p, TK_RP)) return NULL;
      }
      break;
    case TK_ATTACH:
      s = stmt_new(p, SQL_STMT_ATTACH, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      if (p->tok.type == TK_DATABASE) sql_parse_advance(p);
      s->u.attach.file = sql_parse_expr(p);
      if (!s->u.attach.file || !sql_parse_expect(p, TK_AS)) return NULL;
      s->u.attach.schema = sql_parse_expr(p);
      if (!s->u.attach.schema) return NULL;
      if (p->tok.type == TK_KEY) {
        sql_parse_advance(p);
        s->u.attach.key = sql_parse_expr(p);
        if (!s->u.attach.key) return NULL;
      }
      break;
    case TK_DETACH:
      s = stmt_new(p, SQL_STMT_DETACH, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      if (p->tok.type == TK_DATABASE) sql_parse_advance(p);
      s->u.detach.schema = sql_parse_expr(p);
      if (!s->u.detach.schema) return NULL;
      break;
    case TK_VACUUM:
      s = stmt_new(p, SQL_STMT_VACUUM, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      if (sql_token_is_nm(p->tok.type) && p->tok.type != TK_STRING) {
        s->u.vacuum.schema = sql_parse_nm(p);
      } else if (p->tok.type == TK_STRING) {
        s->u.vacuum.schema = sql_parse_nm(p);
      }
      if (sql_parse_accept(p, TK_INTO)) {
        s->u.vacuum.into = sql_parse_expr(p);
        if (!s->u.vacuum.into) return NULL;
      }
      break;
    case TK_ANALYZE:
    case TK_REINDEX:
      s = stmt_new(p, t == TK_ANALYZE ? SQL_STMT_ANALYZE : SQL_STMT_REINDEX, start);
      if (!s) return NULL;
      sql_parse_advance(p);
      if (sql_token_is_nm(p->tok.type)) {
        s->u.analyze.has_name = 1;
        if (!sql_parse_qualname(p, &s->u.analyze.name)) return NULL;
      }
      break;
    default:
      sql_parse_syntax_error(p);
      return NULL;
  }
  if (p->rc || !s) return NULL;
  s->span.len = p->prev_end - s->span.start;
  return s;
}

static int parse_main(UtilArena *arena, const char *sql, int nbytes, SqlStmt **out,
                      const char **tail, char **errmsg, SqlStmt **trig_hdr, int max_depth) {
  Parser ps;
  Parser *p = &ps;
  memset(p, 0, sizeof *p);
  p->max_depth = max_depth > 0 && max_depth < EXPR_MAX_DEPTH ? max_depth : EXPR_MAX_DEPTH;
  p->arena = arena;
  p->sql = sql;
  int n = 0;
  if (nbytes < 0) {
    n = (int)strlen(sql);
  } else { /* the text ends at nbytes or at its first NUL */
    const char *nul = memchr(sql, 0, (size_t)nbytes);
    n = nul ? (int)(nul - sql) : nbytes;
  }
  p->end = n;
  *out = NULL;
  if (errmsg) *errmsg = NULL;
  if (tail) *tail = sql;
  sql_parse_advance(p);
  while (p->tok.type == TK_SEMI) sql_parse_advance(p); /* empty statements */
  SqlStmt *s = NULL;
  int semi = 0;
  if (p->tok.type != TK_EOF) {
    int explain = 0;
    if (p->tok.type == TK_EXPLAIN) {
      sql_parse_advance(p);
      explain = 1;
      if (p->tok.type == TK_QUERY) {
        sql_parse_advance(p);
        if (!sql_parse_expect(p, TK_PLAN)) goto done;
        explain = 2;
      }
    }
    s = sql_parse_stmt(p);
    if (!s) goto done;
    s->explain = (uint8_t)explain;
    if (p->tok.type != TK_SEMI && p->tok.type != TK_EOF) {
      sql_parse_syntax_error(p);
      goto done;
    }
    if (p->pend_kind) { /* the end of the statement accepts the pending term */
      sql_parse_fire_pending(p);
      goto done;
    }
    /* checks SQLite makes when the whole statement is reduced */
    if (p->nvar > 0 && s->kind == SQL_STMT_CREATE_TRIGGER) {
      sql_parse_error(p, "trigger cannot use variables");
      goto done;
    }
    if (p->nvar > 0 && s->kind == SQL_STMT_CREATE_VIEW) {
      sql_parse_error(p, "parameters are not allowed in views");
      goto done;
    }
    if (p->tok.type == TK_SEMI) {
      sql_parse_advance(p);
      semi = 1;
    }
  }
done:
  if (p->rc && trig_hdr && p->trig_hdr && p->rc != SHALE_NOMEM) {
    SqlStmt *h = sql_parse_alloc(p, sizeof *h);
    if (h) {
      *h = *p->trig_hdr;
      h->u.create_trigger.when = NULL;
      h->u.create_trigger.stmts = NULL;
      h->u.create_trigger.nstmts = 0;
      *trig_hdr = h;
    }
  }
  if (p->rc) {
    if (errmsg)
      *errmsg = p->errmsg;
    else
      shale_free(p->errmsg);
    return p->rc;
  }
  if (s) {
    s->nvar = p->nvar;
    s->nvar_names = p->nvnames;
    s->var_names = p->vnames;
  }
  *out = s;
  if (tail) *tail = sql + (semi ? p->prev_end : p->end);
  return SHALE_OK;
}

int sql_parse(UtilArena *arena, const char *sql, int nbytes, SqlStmt **out, const char **tail,
              char **errmsg) {
  return parse_main(arena, sql, nbytes, out, tail, errmsg, NULL, 0);
}

int sql_parse_limited(UtilArena *arena, const char *sql, int nbytes, SqlStmt **out,
                      const char **tail, char **errmsg, int max_expr_depth) {
  return parse_main(arena, sql, nbytes, out, tail, errmsg, NULL, max_expr_depth);
}

int sql_parse_trigger_header(UtilArena *arena, const char *sql, int nbytes, SqlStmt **out) {
  SqlStmt *s = NULL;
  char *err = NULL;
  *out = NULL;
  int rc = parse_main(arena, sql, nbytes, &s, NULL, &err, out, 0);
  shale_free(err);
  if (rc == SHALE_OK) *out = NULL;
  return *out != NULL;
}
