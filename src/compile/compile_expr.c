/*
 * compile_expr.c -- code generation for expressions (compile.h "expressions"):
 * values into registers, conditional jumps with SQLite's three-valued logic,
 * affinity and collation rules of comparisons, IN / EXISTS / scalar
 * subqueries, row values, CASE, CAST, functions (with the short-circuiting
 * inline ones), RAISE, column reads (compile_code_column) and constant hoisting.
 *
 * Owns nothing beyond the Parse arena nodes it makes (synthetic SQL_E_REG
 * stand-ins for values computed once, e.g. the left operand of BETWEEN).
 *
 * Invariants:
 *  1. Operands are evaluated into fresh registers (registers are never
 *     reused), so an operand can never clobber the target of its parent
 *     before the parent reads it.
 *  2. Comparisons follow SQLite: affinity from compile_expr_cmp_affinity (a column's
 *     affinity against no affinity; numeric wins over text), collation from
 *     compile_expr_cmp_collation (explicit COLLATE first, left operand first).
 *  3. NULL logic: a condition jumps to "true", "false" or "null"; value
 *     contexts turn the three outcomes into 1, 0 and NULL; jump contexts send
 *     "null" where jumpifnull says.
 *  4. A subquery that refers to no outer column runs once per statement
 *     (Once guard); a correlated one runs every time it is evaluated.
 *  5. Evaluation order follows SQLite where it shows (errors, short
 *     circuits): parse-time folds (x AND 0 -> 0, x IN (c) -> x = +c,
 *     x IN () -> false), lazy row-value comparisons, IN lists of 3+
 *     constants fully built before the lookup, constant function calls
 *     computed the first time they are reached (Once) and reused.
 */
#include <stdio.h>
#include <string.h>

#include "compile.h"

/* ---- small helpers ---- */

static SqlExpr *new_expr(Parse *p, int op) {
  SqlExpr *e = compile_parse_alloc(p, sizeof *e);
  if (e) {
    e->op = (uint8_t)op;
    e->height = 1;
  }
  return e;
}

/* A stand-in for a value already in register reg (orig keeps affinity and
 * collation). */
static SqlExpr *reg_expr(Parse *p, int reg, const SqlExpr *orig) {
  SqlExpr *e = new_expr(p, SQL_E_REG);
  if (e) {
    e->reg = reg;
    e->orig = orig;
    if (orig) e->span = orig->span;
  }
  return e;
}

static SqlExpr *binary_expr(Parse *p, int tk, SqlExpr *a, SqlExpr *b) {
  SqlExpr *e = new_expr(p, SQL_E_BINARY);
  if (e) {
    e->sub = (uint16_t)tk;
    e->a = a;
    e->b = b;
  }
  return e;
}

SqlExpr *compile_expr_eq_reg(Parse *p, SqlExpr *left, int reg) {
  SqlExpr *r = reg_expr(p, reg, NULL);
  return r ? binary_expr(p, TK_EQ, left, r) : NULL;
}

static int tmp_reg(Parse *p) { return emit_regs(p, 1); }
/* Evaluate e; returns the register holding the value: target, or another
 * register already holding it (a column cache, SQL_E_REG) -- do not write
 * to the returned register unless it is target. */
static int expr_code_reg(Parse *, SqlExpr *e, int target);
/* compile_expr_code_once into register r (fresh for this use: nothing else writes it). */
static int code_once_at(Parse *p, SqlExpr *e, int r);

/* A comparison's (or an arithmetic operator's) operand register. A literal
 * or a parameter cannot fail nor change during a run: it is loaded once, in
 * the epilogue (SQLite's constant factoring; compile_expr_code_once), not at
 * every row. Anything else (functions included: their errors and calls stay
 * where SQLite has them) is evaluated here into a fresh register. */
static int cmp_operand(Parse *p, SqlExpr *e) {
  int leaf = e && (e->op == SQL_E_INTEGER || e->op == SQL_E_FLOAT || e->op == SQL_E_STRING ||
                   e->op == SQL_E_BLOB || e->op == SQL_E_VARIABLE);
  if (leaf && p->nested == 0) return compile_expr_code_once(p, e);
  return expr_code_reg(p, e, tmp_reg(p));
}

static const char *coll_name_of_column(const Table *t, int col) {
  if (!t || col < 0 || col >= t->ncol) return NULL;
  return t->cols[col].coll;
}

/* Bare TRUE / FALSE (an unresolved identifier): 1, 0; -1 otherwise. */
static int true_false_id(const SqlExpr *e) {
  /* x IN () / x NOT IN () are SQLite's boolean constants false / true */
  if (e && e->op == SQL_E_IN && !e->select && !e->table && (!e->list || e->list->n == 0))
    return (e->flags & SQL_EF_NOT) ? 1 : 0;
  if (!e || e->op != SQL_E_ID || (e->flags & SQL_EF_QUOTED) || !e->z) return -1;
  if (util_stricmp(e->z, "true") == 0) return 1;
  if (util_stricmp(e->z, "false") == 0) return 0;
  return -1;
}

/* Number of values a row-value expression stands for (1 for scalars). */
static int vector_size(const SqlExpr *e) {
  if (!e) return 1;
  if (e->op == SQL_E_ROW) return e->list ? e->list->n : 0;
  if (e->op == SQL_E_SUBQUERY && e->select) return compile_select_ncol(e->select);
  return 1;
}

static int is_vector(const SqlExpr *e) {
  if (!e) return 0;
  if (e->op == SQL_E_ROW) return 1;
  if (e->op == SQL_E_SUBQUERY && e->select) return compile_select_ncol(e->select) != 1;
  return 0;
}

/* Does any column reference inside the subquery point outside it? A
 * reference's depth counts queries outwards from where it appears, so the
 * walk tracks how deep it is below the subquery. Trigger NEW/OLD values
 * change per row: they count too. */
typedef struct CorrelWalk {
  int level;           /* queries below the subquery being tested */
  SqlSelect *entering; /* the SELECT whose body this walk covers */
  int found;
} CorrelWalk;

static int correl_expr_cb(SqlWalker *w, SqlExpr *e) {
  CorrelWalk *c = w->arg;
  if ((e->op == SQL_E_COLREF && e->depth > c->level) || e->op == SQL_E_TRIGREF) {
    c->found = 1;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_CONTINUE;
}

static int correl_select_cb(SqlWalker *w, SqlSelect *s) {
  CorrelWalk *c = w->arg;
  if (s == c->entering) return SQL_WALK_CONTINUE;
  CorrelWalk inner = {c->level + 1, s, 0};
  SqlWalker w2 = {correl_expr_cb, correl_select_cb, &inner};
  sql_walk_select(&w2, s);
  if (inner.found) {
    c->found = 1;
    return SQL_WALK_ABORT;
  }
  return SQL_WALK_PRUNE;
}

static int select_is_correlated(SqlSelect *s) {
  CorrelWalk c = {0, s, 0};
  SqlWalker w = {correl_expr_cb, correl_select_cb, &c};
  sql_walk_select(&w, s);
  /* a CTE's body is parsed again per use, apart from this tree: its outer
   * references show in the name contexts resolution marked */
  return c.found || compile_select_has_correl(s);
}

/* SQLite's number for a SELECT (EXPLAIN QUERY PLAN "SCALAR SUBQUERY n"): the
 * parser numbers each core when it finishes reading it, so n is one more
 * than the number of cores of the statement that end before it
 * (compile_cores_before, compile_window.c). */
static int select_number(Parse *p, const SqlSelect *target) {
  return compile_cores_before(p, target->span.start + target->span.len) + 1;
}

/* Add the EXPLAIN QUERY PLAN row of an expression subquery and make it the
 * parent of the subquery's rows; returns the previous parent. */
static int eqp_subquery(Parse *p, SqlSelect *s, const char *kind, int correl) {
  int save = p->eqp_parent;
  p->eqp_parent = compile_parse_eqp(p, "%s%s SUBQUERY %d", correl ? "CORRELATED " : "", kind,
                                    select_number(p, s));
  return save;
}

/* ---- affinity and collation ---- */

char compile_expr_affinity(const SqlExpr *e) {
  while (e) {
    switch (e->op) {
      case SQL_E_TRIGREF: /* SQLite: NEW.x / OLD.x have no affinity (the rowid: INTEGER) */
        return e->column < 0 ? AFF_INTEGER : 0;
      case SQL_E_COLREF:
        if (e->column < 0) return AFF_INTEGER;
        if (e->aff) return e->aff;
        if (e->tab && e->column < e->tab->ncol) return e->tab->cols[e->column].affinity;
        return 0;
      case SQL_E_CAST:
        return e->z ? record_type_affinity(e->z, (int)strlen(e->z)) : AFF_BLOB;
      case SQL_E_COLLATE:
        e = e->a;
        continue;
      case SQL_E_REG:
        if (!e->orig) return 0;
        e = e->orig;
        continue;
      case SQL_E_ROW:
        if (!e->list || e->list->n == 0) return 0;
        e = e->list->a[0].expr;
        continue;
      case SQL_E_SUBQUERY: {
        SqlExprList *l = e->select ? compile_select_result(e->select) : NULL;
        if (!l || l->n == 0) return 0;
        e = l->a[0].expr;
        continue;
      }
      case SQL_E_FUNC:
        return 0; /* likely() too: SQLite gives calls no affinity */
      default:
        return 0;
    }
  }
  return 0;
}

char compile_expr_cmp_affinity(const SqlExpr *l, const SqlExpr *r) {
  /* A BLOB-affinity column counts as having an affinity (SQLite's
   * SQLITE_AFF_BLOB > SQLITE_AFF_NONE): BLOB against TEXT converts nothing,
   * while no affinity against TEXT converts to text. */
  char a1 = compile_expr_affinity(l), a2 = r ? compile_expr_affinity(r) : 0;
  if (a1 && a2) {
    if (a1 >= AFF_NUMERIC || a2 >= AFF_NUMERIC) return AFF_NUMERIC;
    return AFF_BLOB;
  }
  if (!a1 && !a2) return AFF_BLOB;
  return a1 ? a1 : a2;
}

/* p5 affinity bits for a comparison with affinity aff. */
static int cmp_p5(char aff) { return aff > AFF_BLOB ? VM_CMP_AFF(aff) : 0; }

/* 1 if e carries an explicit COLLATE somewhere (not inside subqueries):
 * SQLite's EP_Collate, which propagates up through operators. */
static int has_collate(const SqlExpr *e) {
  if (!e) return 0;
  /* an implicit COLLATE (sub 1, compile_flatten.c) is no explicit one */
  if (e->op == SQL_E_COLLATE) return e->sub != 1;
  if (e->op == SQL_E_REG) return e->orig ? has_collate(e->orig) : 0;
  if (e->op == SQL_E_SUBQUERY || e->op == SQL_E_EXISTS) return 0;
  /* SQLite's parser propagates the flag only from BETWEEN's left operand
   * and from a row value's first element */
  if (e->op == SQL_E_BETWEEN) return has_collate(e->a);
  if (e->op == SQL_E_ROW) return e->list && e->list->n > 0 && has_collate(e->list->a[0].expr);
  if (has_collate(e->a) || has_collate(e->b) || has_collate(e->c)) return 1;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if (has_collate(e->list->a[i].expr)) return 1;
  return 0;
}

/* The operand SQLite's sqlite3ExprCollSeq descends into: its left operand,
 * else the first argument-list item, else its right operand -- in SQLite's
 * node layout (LIKE is like(pattern, string, escape); CASE's ELSE is the
 * list's last item; BETWEEN's bounds are its list). */
static const SqlExpr *first_collate_child(const SqlExpr *e) {
  const SqlExpr *order[4] = {0};
  int n = 0;
  switch (e->op) {
    case SQL_E_LIKE:
      order[n++] = e->b;
      order[n++] = e->a;
      order[n++] = e->c;
      break;
    case SQL_E_BETWEEN:
      order[n++] = e->a;
      order[n++] = e->b;
      order[n++] = e->c;
      break;
    default:
      order[n++] = e->a;
      break;
  }
  for (int i = 0; i < n; i++)
    if (order[i] && has_collate(order[i])) return order[i];
  if (e->op != SQL_E_LIKE && e->op != SQL_E_BETWEEN && e->list)
    for (int i = 0; i < e->list->n; i++)
      if (has_collate(e->list->a[i].expr)) return e->list->a[i].expr;
  if (e->op != SQL_E_LIKE && e->op != SQL_E_BETWEEN) {
    if (e->b && has_collate(e->b)) return e->b;
    if (e->c && has_collate(e->c)) return e->c;
  }
  return NULL;
}

static const Collation *find_coll(Parse *p, const char *name) {
  if (!name || util_stricmp(name, "BINARY") == 0) return NULL;
  const Collation *c = record_collation_find(name);
  if (!c)
    compile_parse_error_code(p, SHALE_ERROR_MISSING_COLLSEQ, "no such collation sequence: %s",
                             name);
  return c;
}

/* Collation of e; *found = 1 when e names one (BINARY included). */
static const Collation *coll_of(Parse *p, const SqlExpr *e, int *found) {
  *found = 0;
  while (e) {
    switch (e->op) {
      case SQL_E_COLREF:
      case SQL_E_TRIGREF: {
        const char *n = coll_name_of_column(e->tab, e->column);
        if (e->tab && e->column >= 0) *found = 1;
        return find_coll(p, n);
      }
      case SQL_E_COLLATE:
        *found = 1;
        return find_coll(p, e->z);
      case SQL_E_CAST:
      case SQL_E_UNARY:
        if (e->op == SQL_E_UNARY && e->sub != TK_PLUS) goto generic;
        e = e->a;
        continue;
      case SQL_E_REG:
        e = e->orig;
        continue;
      case SQL_E_ROW:
        if (!e->list || !e->list->n) return NULL;
        e = e->list->a[0].expr;
        continue;
      default:
      generic:
        if (!has_collate(e)) return NULL;
        e = first_collate_child(e);
        continue;
    }
  }
  return NULL;
}

const Collation *compile_expr_collation(Parse *p, const SqlExpr *e) {
  int found;
  return coll_of(p, e, &found);
}

const Collation *compile_expr_cmp_collation(Parse *p, const SqlExpr *l, const SqlExpr *r) {
  int found;
  if (has_collate(l)) return coll_of(p, l, &found);
  if (r && has_collate(r)) return coll_of(p, r, &found);
  const Collation *c = coll_of(p, l, &found);
  if (!found && r) c = coll_of(p, r, &found);
  return c;
}

/* ---- constants ---- */

static int func_is_constant(const FuncDef *f) {
  if (!f || func_is_aggregate(f)) return 0;
  return (f->flags & (FUNC_DETERMINISTIC | FUNC_SLOWCHANGE | FUNC_CONSTANT)) != 0;
}

int compile_expr_is_constant(const SqlExpr *e) {
  if (!e) return 1;
  switch (e->op) {
    case SQL_E_NULL:
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
    case SQL_E_STRING:
    case SQL_E_BLOB:
    case SQL_E_VARIABLE:
    case SQL_E_CTIME:
      return 1;
    case SQL_E_ID:
      return true_false_id(e) >= 0;
    case SQL_E_COLUMN:
    case SQL_E_STAR:
    case SQL_E_COLREF:
    case SQL_E_TRIGREF:
    case SQL_E_REG:
    case SQL_E_EXISTS:
    case SQL_E_SUBQUERY:
    case SQL_E_RAISE:
      return 0;
    case SQL_E_IN:
      if (e->select || e->table) return 0;
      break;
    case SQL_E_FUNC:
      if (e->agg || e->over || e->filter) return 0;
      if (!func_is_constant(e->func)) return 0;
      break;
    default:
      break;
  }
  if (!compile_expr_is_constant(e->a) || !compile_expr_is_constant(e->b) ||
      !compile_expr_is_constant(e->c))
    return 0;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if (!compile_expr_is_constant(e->list->a[i].expr)) return 0;
  return 1;
}

/* Constant in SQLite's parse-time sense (no function calls, no names). */
static int parse_time_constant(const SqlExpr *e) {
  if (!e) return 1;
  if (e->op == SQL_E_FUNC || e->op == SQL_E_CTIME) return 0;
  if (e->op == SQL_E_ID) return 0;
  if (!compile_expr_is_constant(e)) return 0;
  if (!parse_time_constant(e->a) || !parse_time_constant(e->b) || !parse_time_constant(e->c))
    return 0;
  if (e->list)
    for (int i = 0; i < e->list->n; i++)
      if (!parse_time_constant(e->list->a[i].expr)) return 0;
  return 1;
}

/* Hex literal text ("0x..."): 1 with *v on success, 0 when too big. */
static int hex_value(const char *z, int64_t *v) {
  uint64_t u = 0;
  int digits = 0;
  for (const char *s = z + 2; *s; s++) {
    int c = *s, d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      break;
    if (u == 0 && d == 0) continue;
    if (++digits > 16) return 0;
    u = (u << 4) | (uint64_t)d;
  }
  memcpy(v, &u, sizeof *v);
  return 1;
}

static int is_hex(const char *z) { return z && z[0] == '0' && (z[1] == 'x' || z[1] == 'X'); }

/* Integer value of a constant integer literal (optionally negated); 1 if
 * it is one. */
static int expr_is_int(const SqlExpr *e, int64_t *v) {
  int neg = 0;
  while (e && e->op == SQL_E_UNARY && (e->sub == TK_MINUS || e->sub == TK_PLUS)) {
    if (e->sub == TK_MINUS) neg = !neg;
    e = e->a;
  }
  if (!e || e->op != SQL_E_INTEGER || !e->z) return 0;
  int64_t x;
  if (is_hex(e->z)) {
    if (!hex_value(e->z, &x)) return 0;
  } else {
    int r = record_value_text_to_int64(e->z, (int)strlen(e->z), &x);
    if (r == 3 && neg) {
      *v = INT64_MIN;
      return 1;
    }
    if (r != 0) return 0;
  }
  if (neg) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u = 0 - u;
    memcpy(&x, &u, sizeof x);
  }
  *v = x;
  return 1;
}

static void code_int64(Parse *p, int64_t v, int target) {
  if (v >= INT32_MIN && v <= INT32_MAX)
    emit(p, OP_Integer, (int)v, target, 0);
  else
    vm_builder_add_int64(&p->b, OP_Int64, 0, target, 0, v);
}

/* An INTEGER or FLOAT literal, possibly negated. */
static void code_number(Parse *p, const SqlExpr *e, int neg, int target) {
  const char *z = e->z ? e->z : "0";
  if (e->op == SQL_E_INTEGER) {
    int64_t x;
    if (is_hex(z)) {
      if (!hex_value(z, &x)) {
        compile_parse_error(p, "hex literal too big: %s%s", neg ? "-" : "", z);
        return;
      }
      if (neg && x == INT64_MIN) {
        compile_parse_error(p, "hex literal too big: -%s", z);
        return;
      }
      code_int64(p, neg ? -x : x, target);
      return;
    }
    /* up to 18 digits cannot overflow: the common literal without the
     * general conversion */
    int nd = 0;
    x = 0;
    while (nd < 18 && z[nd] >= '0' && z[nd] <= '9') x = x * 10 + (z[nd++] - '0');
    if (nd > 0 && z[nd] == 0) {
      code_int64(p, neg ? -x : x, target);
      return;
    }
    int r = record_value_text_to_int64(z, (int)strlen(z), &x);
    if (r == 0) {
      code_int64(p, neg ? -x : x, target);
      return;
    }
    if (r == 3 && neg) {
      code_int64(p, INT64_MIN, target);
      return;
    }
  }
  double d = 0;
  record_value_text_to_real(z, (int)strlen(z), &d);
  vm_builder_add_real(&p->b, OP_Real, 0, target, 0, neg ? -d : d);
}

static int hexdig(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

static void code_blob(Parse *p, const char *hex, int target) {
  int n = hex ? (int)strlen(hex) / 2 : 0;
  char *buf = compile_parse_alloc(p, (size_t)n + 1);
  if (!buf) return;
  for (int i = 0; i < n; i++) buf[i] = (char)(hexdig(hex[2 * i]) * 16 + hexdig(hex[2 * i + 1]));
  vm_builder_add_text(&p->b, OP_Blob, n, target, 0, buf, n);
}

/* ---- subqueries ---- */

/* Run a scalar / row subquery into fresh registers; returns the first. */
static int code_subquery_mem(Parse *p, SqlExpr *e) {
  SqlSelect *s = e->select;
  int n = compile_select_ncol(s);
  if (n < 1) n = 1;
  int base = emit_regs(p, n);
  int skip = 0;
  int correl = select_is_correlated(s);
  if (!correl) {
    skip = emit_label(p);
    emit(p, OP_Once, 0, skip, 0);
  }
  emit(p, OP_Null, 0, base, base + n - 1);
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_MEM;
  d.reg = base;
  d.nreg = n;
  int parent = eqp_subquery(p, s, "SCALAR", correl);
  compile_select_code(p, s, &d);
  p->eqp_parent = parent;
  if (skip) emit_resolve(p, skip);
  return base;
}

static int code_exists(Parse *p, SqlExpr *e) {
  int r = tmp_reg(p);
  int skip = 0;
  int correl = select_is_correlated(e->select);
  if (!correl) {
    skip = emit_label(p);
    emit(p, OP_Once, 0, skip, 0);
  }
  emit(p, OP_Integer, 0, r, 0);
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_EXISTS;
  d.reg = r;
  d.nreg = 1;
  int parent = eqp_subquery(p, e->select, "SCALAR", correl);
  compile_select_code(p, e->select, &d);
  p->eqp_parent = parent;
  if (skip) emit_resolve(p, skip);
  return r;
}

/* Element i of a row value (ROW node or row subquery whose values sit in
 * base..). */
static SqlExpr *vector_elem(Parse *p, SqlExpr *e, int i, int sub_base) {
  if (e->op == SQL_E_ROW) return e->list->a[i].expr;
  if (e->op == SQL_E_SUBQUERY) {
    SqlExprList *l = compile_select_result(e->select);
    return reg_expr(p, sub_base + i, l && i < l->n ? l->a[i].expr : NULL);
  }
  return e;
}

/* ---- conditions with three outcomes ---- */

#define TK_ISNOT_ (-1) /* stands for SQL_E_ISNOT where a token is expected */

static void cond_jumps(Parse *p, SqlExpr *e, int lt, int lf, int ln);

static int cmp_opcode(int tk) {
  switch (tk) {
    case TK_EQ:
      return OP_Eq;
    case TK_NE:
      return OP_Ne;
    case TK_LT:
      return OP_Lt;
    case TK_LE:
      return OP_Le;
    case TK_GT:
      return OP_Gt;
    case TK_GE:
      return OP_Ge;
    default:
      return -1;
  }
}

static int invert_cmp(int op) {
  switch (op) {
    case OP_Eq:
      return OP_Ne;
    case OP_Ne:
      return OP_Eq;
    case OP_Lt:
      return OP_Ge;
    case OP_Le:
      return OP_Gt;
    case OP_Gt:
      return OP_Le;
    default:
      return OP_Lt;
  }
}

/* Emit "if r_l OP r_r -> dest" with the comparison's affinity/collation. */
static void emit_cmp(Parse *p, int op, const SqlExpr *l, const SqlExpr *r, int rl, int rr, int dest,
                     int p5) {
  char aff = compile_expr_cmp_affinity(l, r);
  const Collation *c = compile_expr_cmp_collation(p, l, r);
  int a = c ? vm_builder_add_p4(&p->b, op, rr, dest, rl, P4_COLL, c) : emit(p, op, rr, dest, rl);
  vm_builder_set_p5(&p->b, a, cmp_p5(aff) | p5);
}

/* Is e a comparison on row values? */
static int is_vector_cmp(const SqlExpr *e) {
  if (e->op != SQL_E_BINARY && e->op != SQL_E_ISNOT) return 0;
  if (e->op == SQL_E_BINARY && cmp_opcode(e->sub) < 0 && e->sub != TK_IS) return 0;
  return is_vector(e->a) || is_vector(e->b);
}

/* Row-value comparison a OP b into the three labels. */
static void vector_cmp_jumps(Parse *p, SqlExpr *e, int lt, int lf, int ln) {
  int tk = e->op == SQL_E_ISNOT ? TK_ISNOT_ : e->sub;
  int n = vector_size(e->a);
  if (!is_vector(e->a) || !is_vector(e->b) || n != vector_size(e->b)) {
    compile_parse_error(p, "row value misused");
    return;
  }
  int ba = e->a->op == SQL_E_SUBQUERY ? code_subquery_mem(p, e->a) : 0;
  int bb = e->b->op == SQL_E_SUBQUERY ? code_subquery_mem(p, e->b) : 0;
  /* Element pairs are evaluated one at a time, and only while the answer is
   * still open (SQLite's order: (1, f()) = (2, 3) never calls f). */
  int op = tk == TK_IS || tk == TK_ISNOT_ ? 0 : cmp_opcode(tk);
  int rnull = 0;
  if (tk == TK_EQ || tk == TK_NE) {
    rnull = tmp_reg(p);
    emit(p, OP_Integer, 0, rnull, 0);
  }
  int yes = (tk == TK_NE || tk == TK_ISNOT_) ? lf : lt;
  int no = (tk == TK_NE || tk == TK_ISNOT_) ? lt : lf;
  for (int i = 0; i < n && !parse_failed(p); i++) {
    SqlExpr *ea = vector_elem(p, e->a, i, ba), *eb = vector_elem(p, e->b, i, bb);
    if (!ea || !eb) return;
    if (is_vector(ea) || is_vector(eb)) {
      compile_parse_error(p, "row value misused");
      return;
    }
    int ra = expr_code_reg(p, ea, tmp_reg(p));
    int rb = expr_code_reg(p, eb, tmp_reg(p));
    if (tk == TK_IS || tk == TK_ISNOT_) {
      emit_cmp(p, OP_Ne, ea, eb, ra, rb, no, VM_NULLEQ);
    } else if (rnull) {
      int next = emit_label(p), setnull = emit_label(p);
      emit_cmp(p, OP_Eq, ea, eb, ra, rb, next, 0);
      emit(p, OP_IsNull, ra, setnull, 0);
      emit(p, OP_IsNull, rb, setnull, 0);
      emit(p, OP_Goto, 0, no, 0);
      emit_resolve(p, setnull);
      emit(p, OP_Integer, 1, rnull, 0);
      emit_resolve(p, next);
    } else {
      int strict = (op == OP_Lt || op == OP_Le) ? OP_Lt : OP_Gt;
      emit(p, OP_IsNull, ra, ln, 0);
      emit(p, OP_IsNull, rb, ln, 0);
      if (i < n - 1) {
        int next = emit_label(p);
        emit_cmp(p, OP_Eq, ea, eb, ra, rb, next, 0);
        emit_cmp(p, strict, ea, eb, ra, rb, lt, 0);
        emit(p, OP_Goto, 0, lf, 0);
        emit_resolve(p, next);
      } else {
        emit_cmp(p, op, ea, eb, ra, rb, lt, 0);
        emit(p, OP_Goto, 0, lf, 0);
      }
    }
  }
  if (op && !rnull) return; /* the ordering comparisons ended with jumps */
  if (rnull) emit(p, OP_If, rnull, ln, 0);
  emit(p, OP_Goto, 0, yes, 0);
}

/* (a, b) IN ((x, y), ...): true if some element equals, else NULL if some
 * comparison was NULL, else false. The left side is evaluated once. */
static void in_list_vector(Parse *p, SqlExpr *lhs, SqlExprList *l, int lt, int lf, int ln) {
  SqlExpr *row = lhs;
  if (lhs->op == SQL_E_ROW) {
    int n = lhs->list->n;
    row = new_expr(p, SQL_E_ROW);
    SqlExprList *rl = compile_parse_alloc(p, sizeof *rl);
    SqlExprItem *items = compile_parse_alloc(p, sizeof *items * (size_t)(n ? n : 1));
    if (!row || !rl || !items) return;
    rl->n = rl->cap = n;
    rl->a = items;
    row->list = rl;
    for (int i = 0; i < n; i++) {
      SqlExpr *x = lhs->list->a[i].expr;
      if (is_vector(x)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      items[i].expr = reg_expr(p, expr_code_reg(p, x, tmp_reg(p)), x);
    }
  }
  /* SQLite turns the list into a VALUES subquery: every value is computed
   * before any comparison */
  SqlExpr **vals = compile_parse_alloc(p, sizeof *vals * (size_t)l->n);
  if (!vals) return;
  for (int i = 0; i < l->n; i++) {
    SqlExpr *el = l->a[i].expr;
    if (el->op != SQL_E_ROW) {
      vals[i] = el;
      continue;
    }
    int k = el->list->n;
    SqlExpr *rv = new_expr(p, SQL_E_ROW);
    SqlExprList *vl = compile_parse_alloc(p, sizeof *vl);
    SqlExprItem *it = compile_parse_alloc(p, sizeof *it * (size_t)(k ? k : 1));
    if (!rv || !vl || !it) return;
    vl->n = vl->cap = k;
    vl->a = it;
    rv->list = vl;
    for (int j = 0; j < k; j++) {
      SqlExpr *x = el->list->a[j].expr;
      if (is_vector(x)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      it[j].expr = reg_expr(p, expr_code_reg(p, x, tmp_reg(p)), x);
    }
    vals[i] = rv;
  }
  int rnull = tmp_reg(p);
  emit(p, OP_Integer, 0, rnull, 0);
  for (int i = 0; i < l->n; i++) {
    SqlExpr *eq = binary_expr(p, TK_EQ, row, vals[i]);
    if (!eq) return;
    int next = emit_label(p), isnull = emit_label(p);
    cond_jumps(p, eq, lt, next, isnull);
    emit_resolve(p, isnull);
    emit(p, OP_Integer, 1, rnull, 0);
    emit_resolve(p, next);
  }
  emit(p, OP_If, rnull, ln, 0);
  emit(p, OP_Goto, 0, lf, 0);
}

/* Constant IN lists longer than this are looked up in an ephemeral index
 * built once, as SQLite does: every value is computed (errors included)
 * before the lookup, where a chain of comparisons stops at the first match. */
#define IN_INDEX_MIN 2

/* x IN (c1, c2, ...) with constant ci: the values go into an ephemeral
 * index under a Once guard (with the left side's affinity, REAL as NUMERIC,
 * and its collation), NULLs only remembered; x (with its affinity) is then
 * looked up. */
static void in_list_index(Parse *p, SqlExpr *lhs, SqlExprList *l, char aff, const Collation *coll,
                          int lt, int lf, int ln) {
  char kaff[2] = {aff ? (aff == AFF_REAL ? AFF_NUMERIC : aff) : AFF_BLOB, 0};
  int cur = emit_cursor(p);
  int rhasnull = tmp_reg(p), rv = tmp_reg(p), rrec = tmp_reg(p);
  KeyInfo *ki = compile_parse_keyinfo(p, 1, &coll, NULL);
  if (!ki) return;
  int built = emit_label(p);
  emit(p, OP_Once, 0, built, 0);
  vm_builder_add_p4(&p->b, OP_OpenEphemeral, cur, 1, 0, P4_KEYINFO, ki);
  emit(p, OP_Integer, 0, rhasnull, 0);
  for (int i = 0; i < l->n; i++) {
    int isnull = emit_label(p), next = emit_label(p);
    compile_expr_code(p, l->a[i].expr, rv);
    emit(p, OP_IsNull, rv, isnull, 0);
    vm_builder_add_text(&p->b, OP_MakeRecord, rv, 1, rrec, kaff, 1);
    emit(p, OP_IdxInsert, cur, rrec, 0);
    emit(p, OP_Goto, 0, next, 0);
    emit_resolve(p, isnull);
    emit(p, OP_Integer, 1, rhasnull, 0);
    emit_resolve(p, next);
  }
  emit_resolve(p, built);
  int rl = tmp_reg(p);
  compile_expr_code(p, lhs, rl);
  emit(p, OP_IsNull, rl, ln, 0);
  if (aff && aff != AFF_BLOB) {
    char a1[2] = {aff, 0};
    vm_builder_add_text(&p->b, OP_Affinity, rl, 1, 0, a1, 1);
  }
  vm_builder_add_i4(&p->b, OP_Found, cur, lt, rl, 1);
  emit(p, OP_If, rhasnull, ln, 0);
  emit(p, OP_Goto, 0, lf, 0);
}

/* x [NOT] IN (...) into three labels (NOT handled by the caller). */
static void in_jumps(Parse *p, SqlExpr *e, int lt, int lf, int ln) {
  SqlExpr *lhs = e->a;
  if (e->table) {
    compile_parse_error(p, "no such table: %s", e->table);
    return;
  }
  if (!e->select) {
    SqlExprList *l = e->list;
    if (!l || l->n == 0) {
      emit(p, OP_Goto, 0, lf, 0);
      return;
    }
    int nl = vector_size(lhs);
    for (int i = 0; i < l->n; i++) {
      int k = vector_size(l->a[i].expr);
      if (nl == 1 && k != 1) {
        compile_parse_error(p, "row value misused");
        return;
      }
      if (k != nl) {
        compile_parse_error(p, "IN(...) element has %d term%s - expected %d", k, k == 1 ? "" : "s",
                            nl);
        return;
      }
    }
    if (is_vector(lhs)) {
      in_list_vector(p, lhs, l, lt, lf, ln);
      return;
    }
    if (l->n == 1 && parse_time_constant(l->a[0].expr)) {
      /* SQLite rewrites x IN (c) as x = c when parsing. */
      SqlExpr *plus = new_expr(p, SQL_E_UNARY);
      if (!plus) return;
      plus->sub = TK_PLUS;
      plus->a = l->a[0].expr;
      SqlExpr *eq = binary_expr(p, TK_EQ, lhs, plus); /* the + drops its affinity */
      if (eq) cond_jumps(p, eq, lt, lf, ln);
      return;
    }
    char aff = compile_expr_affinity(lhs);
    const Collation *coll = compile_expr_collation(p, lhs);
    int all_const = l->n > IN_INDEX_MIN;
    for (int i = 0; all_const && i < l->n; i++) all_const = compile_expr_is_constant(l->a[i].expr);
    if (all_const && !parse_failed(p)) {
      in_list_index(p, lhs, l, aff, coll, lt, lf, ln);
      return;
    }
    int rl = expr_code_reg(p, lhs, tmp_reg(p));
    int rck = tmp_reg(p);
    emit(p, OP_Integer, 0, rck, 0);
    emit(p, OP_BitAnd, rck, rl, rck);
    for (int i = 0; i < l->n; i++) {
      int r = expr_code_reg(p, l->a[i].expr, tmp_reg(p));
      int a = coll ? vm_builder_add_p4(&p->b, OP_Eq, r, lt, rl, P4_COLL, coll)
                   : emit(p, OP_Eq, r, lt, rl);
      vm_builder_set_p5(&p->b, a, cmp_p5(aff));
      emit(p, OP_BitAnd, rck, r, rck);
    }
    emit(p, OP_IsNull, rck, ln, 0);
    emit(p, OP_Goto, 0, lf, 0);
    return;
  }
  /* IN (SELECT ...) */
  SqlSelect *s = e->select;
  int n = compile_select_ncol(s);
  int nl = vector_size(lhs);
  if (nl != n) {
    if (is_vector(lhs) || n != 1)
      compile_parse_error(p, "sub-select returns %d columns - expected %d", n, nl);
    else
      compile_parse_error(p, "row value misused");
    return;
  }
  SqlExprList *rl = compile_select_result(s);
  int lb = lhs->op == SQL_E_SUBQUERY && n > 1 ? code_subquery_mem(p, lhs) : 0;
  char *aff = compile_parse_alloc(p, (size_t)n + 1);
  const Collation **colls = compile_parse_alloc(p, sizeof *colls * (size_t)n);
  SqlExpr **le = compile_parse_alloc(p, sizeof *le * (size_t)n);
  if (!aff || !colls || !le) return;
  for (int i = 0; i < n; i++) {
    le[i] = n > 1 ? vector_elem(p, lhs, i, lb) : lhs;
    SqlExpr *re = rl && i < rl->n ? rl->a[i].expr : NULL;
    char a = compile_expr_cmp_affinity(re, le[i]);
    aff[i] = a ? a : AFF_BLOB;
    colls[i] = compile_expr_cmp_collation(p, le[i], re);
  }
  if (parse_failed(p)) return;
  int cur = emit_cursor(p);
  int skip = 0;
  int correl = select_is_correlated(s);
  if (!correl) {
    skip = emit_label(p);
    emit(p, OP_Once, 0, skip, 0);
  }
  KeyInfo *ki = compile_parse_keyinfo(p, n, colls, NULL);
  if (!ki) return;
  vm_builder_add_p4(&p->b, OP_OpenEphemeral, cur, n, 0, P4_KEYINFO, ki);
  SelectDest d;
  memset(&d, 0, sizeof d);
  d.kind = SD_SET;
  d.cursor = cur;
  d.nreg = n;
  d.aff = aff;
  int parent = eqp_subquery(p, s, "LIST", correl);
  compile_select_code(p, s, &d);
  p->eqp_parent = parent;
  if (skip) emit_resolve(p, skip);
  /* the left side; a NULL in it skips the lookup (and, as in SQLite, the
   * key affinity, which is applied only for the lookup) */
  int base = emit_regs(p, n);
  for (int i = 0; i < n; i++) compile_expr_code(p, le[i], base + i);
  int lnull = emit_label(p);
  for (int i = 0; i < n; i++) emit(p, OP_IsNull, base + i, lnull, 0);
  vm_builder_add_text(&p->b, OP_Affinity, base, n, 0, aff, n);
  vm_builder_add_i4(&p->b, OP_Found, cur, lt, base, n);
  if (n == 1) {
    /* not found: NULL if the set holds a NULL (it sorts first) */
    int rt = tmp_reg(p);
    emit(p, OP_Rewind, cur, lf, 0);
    emit(p, OP_Column, cur, 0, rt);
    emit(p, OP_IsNull, rt, ln, 0);
    emit(p, OP_Goto, 0, lf, 0);
    emit_resolve(p, lnull);
    emit(p, OP_Rewind, cur, lf, 0);
    emit(p, OP_Goto, 0, ln, 0);
    return;
  }
  /* row values: a row that differs from the left side in no non-NULL
   * column makes the answer NULL */
  emit_resolve(p, lnull);
  int rt = tmp_reg(p);
  int loop = emit_label(p), next = emit_label(p);
  emit(p, OP_Rewind, cur, lf, 0);
  emit_resolve(p, loop);
  for (int i = 0; i < n; i++) {
    const Collation *c = compile_expr_collation(p, le[i]); /* the left side's, as SQLite */
    emit(p, OP_Column, cur, i, rt);
    if (c)
      vm_builder_add_p4(&p->b, OP_Ne, rt, next, base + i, P4_COLL, c);
    else
      emit(p, OP_Ne, rt, next, base + i);
  }
  emit(p, OP_Goto, 0, ln, 0);
  emit_resolve(p, next);
  emit(p, OP_Next, cur, loop, 0);
  emit(p, OP_Goto, 0, lf, 0);
}

static SqlExpr *between_rewrite(Parse *p, SqlExpr *e) {
  /* a BETWEEN b AND c == a >= b AND a <= c, a evaluated once */
  SqlExpr *a = e->a, *ra;
  if (e->a->op == SQL_E_ROW) {
    int n = e->a->list->n;
    ra = new_expr(p, SQL_E_ROW);
    SqlExprList *l = compile_parse_alloc(p, sizeof *l);
    SqlExprItem *items = compile_parse_alloc(p, sizeof *items * (size_t)(n ? n : 1));
    if (!ra || !l || !items) return NULL;
    l->n = l->cap = n;
    l->a = items;
    ra->list = l;
    for (int i = 0; i < n; i++) {
      SqlExpr *x = a->list->a[i].expr;
      items[i].expr = reg_expr(p, expr_code_reg(p, x, tmp_reg(p)), x);
    }
  } else if (is_vector(a)) {
    ra = a; /* a row subquery runs once anyway */
  } else {
    ra = reg_expr(p, expr_code_reg(p, a, tmp_reg(p)), a);
  }
  SqlExpr *x =
      binary_expr(p, TK_AND, binary_expr(p, TK_GE, ra, e->b), binary_expr(p, TK_LE, ra, e->c));
  if (!x || !x->a || !x->b) return NULL;
  return x;
}

/* Materialize three outcomes as 1 / 0 / NULL in target. */
static void three_way_value(Parse *p, int target, void (*fn)(Parse *, SqlExpr *, int, int, int),
                            SqlExpr *e, int negate) {
  int lt = emit_label(p), lf = emit_label(p), ln = emit_label(p), end = emit_label(p);
  if (negate)
    fn(p, e, lf, lt, ln);
  else
    fn(p, e, lt, lf, ln);
  emit_resolve(p, lt);
  emit(p, OP_Integer, 1, target, 0);
  emit(p, OP_Goto, 0, end, 0);
  emit_resolve(p, lf);
  emit(p, OP_Integer, 0, target, 0);
  emit(p, OP_Goto, 0, end, 0);
  emit_resolve(p, ln);
  emit(p, OP_Null, 0, target, 0);
  emit_resolve(p, end);
}

/* IS TRUE / IS FALSE / IS NOT TRUE / IS NOT FALSE: -1 when not one. */
static int truth_test(const SqlExpr *e, int *is_not, int *val) {
  if (e->op == SQL_E_BINARY && e->sub == TK_IS)
    *is_not = 0;
  else if (e->op == SQL_E_ISNOT)
    *is_not = 1;
  else
    return 0;
  const SqlExpr *b = e->b;
  /* SQLite looks through COLLATE (likely() is not known yet when it looks) */
  while (b && b->op == SQL_E_COLLATE) b = b->a;
  int v = true_false_id(b);
  if (v < 0) return 0;
  *val = v;
  return 1;
}

static void cond_jumps(Parse *p, SqlExpr *e, int lt, int lf, int ln) {
  if (parse_failed(p) || !e) return;
  if (e->op == SQL_E_COLLATE) {
    cond_jumps(p, e->a, lt, lf, ln);
    return;
  }
  if (e->op == SQL_E_UNARY && e->sub == TK_NOT) {
    cond_jumps(p, e->a, lf, lt, ln);
    return;
  }
  if (is_vector_cmp(e)) {
    vector_cmp_jumps(p, e, lt, lf, ln);
    return;
  }
  if (e->op == SQL_E_BETWEEN) {
    SqlExpr *x = between_rewrite(p, e);
    if (!x) return;
    if (e->flags & SQL_EF_NOT)
      cond_jumps(p, x, lf, lt, ln);
    else
      cond_jumps(p, x, lt, lf, ln);
    return;
  }
  if (e->op == SQL_E_IN) {
    if (e->flags & SQL_EF_NOT)
      in_jumps(p, e, lf, lt, ln);
    else
      in_jumps(p, e, lt, lf, ln);
    return;
  }
  int is_not, val;
  if (truth_test(e, &is_not, &val)) {
    int r = expr_code_reg(p, e->a, tmp_reg(p));
    /* x IS TRUE: true when x is true, false otherwise (NULL included) */
    int yes = is_not ? lf : lt, no = is_not ? lt : lf;
    if (val)
      emit(p, OP_If, r, yes, 0);
    else
      emit(p, OP_IfNot, r, yes, 0);
    emit(p, OP_Goto, 0, no, 0);
    return;
  }
  int op = e->op == SQL_E_BINARY ? cmp_opcode(e->sub) : -1;
  if (op >= 0) {
    if (is_vector(e->a) || is_vector(e->b)) {
      compile_parse_error(p, "row value misused");
      return;
    }
    int ra = cmp_operand(p, e->a);
    int rb = cmp_operand(p, e->b);
    emit(p, OP_IsNull, ra, ln, 0);
    emit(p, OP_IsNull, rb, ln, 0);
    emit_cmp(p, op, e->a, e->b, ra, rb, lt, 0);
    emit(p, OP_Goto, 0, lf, 0);
    return;
  }
  if ((e->op == SQL_E_BINARY && e->sub == TK_IS) || e->op == SQL_E_ISNOT) {
    int ra = cmp_operand(p, e->a);
    int rb = cmp_operand(p, e->b);
    emit_cmp(p, e->op == SQL_E_ISNOT ? OP_Ne : OP_Eq, e->a, e->b, ra, rb, lt, VM_NULLEQ);
    emit(p, OP_Goto, 0, lf, 0);
    return;
  }
  if (e->op == SQL_E_ISNULL || e->op == SQL_E_NOTNULL) {
    int r = expr_code_reg(p, e->a, tmp_reg(p));
    emit(p, e->op == SQL_E_ISNULL ? OP_IsNull : OP_NotNull, r, lt, 0);
    emit(p, OP_Goto, 0, lf, 0);
    return;
  }
  int r = expr_code_reg(p, e, tmp_reg(p));
  emit(p, OP_IsNull, r, ln, 0);
  emit(p, OP_If, r, lt, 0);
  emit(p, OP_Goto, 0, lf, 0);
}

/* A bare integer literal 0: SQLite's parser folds "x AND 0" and "0 AND x"
 * to the constant 0 without keeping x (ExprAlwaysFalse). */
static int always_false(const SqlExpr *e) {
  int64_t v;
  return e && e->op == SQL_E_INTEGER && expr_is_int(e, &v) && v == 0;
}

static int and_always_false(const SqlExpr *e) {
  return e->op == SQL_E_BINARY && e->sub == TK_AND && (always_false(e->a) || always_false(e->b));
}

/* ---- functions ---- */

static const FuncDef *resolve_func(Parse *p, SqlExpr *e) {
  if (e->func) return e->func;
  int n = e->list ? e->list->n : 0;
  const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, e->z, n) : NULL;
  if (!f) {
    if (p->env && p->env->funcs && func_exists_name(p->env->funcs, e->z))
      compile_parse_error(p, "wrong number of arguments to function %s()", e->z);
    else
      compile_parse_error(p, "no such function: %s", e->z);
    return NULL;
  }
  e->func = f;
  return f;
}

static void code_function_call(Parse *p, SqlExpr *e, int target, int cache);

/* A call whose value cannot change during the statement (deterministic
 * function, constant arguments) is computed the first time it is reached and
 * reused after that, as SQLite does (a Once guard around the call). */
static void code_function(Parse *p, SqlExpr *e, int target) { code_function_call(p, e, target, 1); }

static void code_function_call(Parse *p, SqlExpr *e, int target, int cache) {
  if (e->agg && e->reg > 0) { /* aggregate / window result computed by the query */
    emit(p, OP_Copy, e->reg, target, 0);
    return;
  }
  const FuncDef *f = resolve_func(p, e);
  if (!f) return;
  if (func_is_aggregate(f)) {
    compile_parse_error(p, "misuse of aggregate function %s()", e->z);
    return;
  }
  if (cache && !(f->flags & FUNC_INLINE) && p->nested == 0 && !p->trig_tab &&
      compile_expr_is_constant(e)) {
    int r = tmp_reg(p), skip = emit_label(p);
    emit(p, OP_Once, 0, skip, 0);
    code_function_call(p, e, r, 0);
    emit_resolve(p, skip);
    emit(p, OP_SCopy, r, target, 0);
    return;
  }
  int n = e->list ? e->list->n : 0;
  if (f->flags & FUNC_INLINE) {
    const char *nm = f->name;
    if ((f->flags & FUNC_UNLIKELY) && n == 2) {
      /* SQLite checks the probability when resolving names */
      double d = -1;
      const SqlExpr *x = e->list->a[1].expr;
      if (x->op == SQL_E_FLOAT || x->op == SQL_E_INTEGER)
        record_value_text_to_real(x->z, (int)strlen(x->z), &d);
      if (d < 0.0 || d > 1.0) {
        compile_parse_error(
            p, "second argument to likelihood() must be a constant between 0.0 and 1.0");
        return;
      }
    }
    if ((f->flags & FUNC_UNLIKELY) && n >= 1) {
      compile_expr_code(p, e->list->a[0].expr, target);
      return;
    }
    if (util_stricmp(nm, "iif") == 0 && n == 3) {
      int lelse = emit_label(p), end = emit_label(p);
      compile_expr_if_false(p, e->list->a[0].expr, lelse, 1);
      compile_expr_code(p, e->list->a[1].expr, target);
      emit(p, OP_Goto, 0, end, 0);
      emit_resolve(p, lelse);
      compile_expr_code(p, e->list->a[2].expr, target);
      emit_resolve(p, end);
      return;
    }
    if ((util_stricmp(nm, "coalesce") == 0 || util_stricmp(nm, "ifnull") == 0) && n >= 2) {
      int end = emit_label(p);
      compile_expr_code(p, e->list->a[0].expr, target);
      for (int i = 1; i < n; i++) {
        emit(p, OP_NotNull, target, end, 0);
        compile_expr_code(p, e->list->a[i].expr, target);
      }
      emit_resolve(p, end);
      return;
    }
  }
  if (n > 0) f = compile_vtab_overload_call(p, f, e->z, n, e->list->a[0].expr); /* xFindFunction */
  if (!f) return;
  int base = n > 0 ? emit_regs(p, n) : tmp_reg(p);
  int mask = 0;
  const Collation *coll = NULL;
  int have_coll = 0;
  for (int i = 0; i < n; i++) {
    SqlExpr *a = e->list->a[i].expr;
    if (is_vector(a)) {
      compile_parse_error(p, "row value misused");
      return;
    }
    if (i < 32 && compile_expr_is_constant(a)) mask |= 1 << i;
    if ((f->flags & FUNC_NEEDCOLL) && !have_coll) {
      int found;
      coll = coll_of(p, a, &found);
      have_coll = found;
    }
    compile_expr_code(p, a, base + i);
  }
  if (f->flags & FUNC_NEEDCOLL)
    vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, coll ? coll : &record_coll_binary);
  if (e->flags & SQL_EF_PURE_MASK)
    emit(p, OP_PureFunc, (e->flags & SQL_EF_PURE_MASK) >> SQL_EF_PURE_SHIFT, 0, 0);
  int a = vm_builder_add_p4(&p->b, OP_Function, mask, base, target, P4_FUNC, f);
  vm_builder_set_p5(&p->b, a, n);
}

/* LIKE / GLOB / MATCH / REGEXP as the function call SQLite makes of it:
 * like(pattern, string [, escape]). */
static void code_like(Parse *p, SqlExpr *e, int target) {
  const char *name = e->sub == TK_GLOB     ? "glob"
                     : e->sub == TK_MATCH  ? "match"
                     : e->sub == TK_REGEXP ? "regexp"
                                           : "like";
  int n = e->c ? 3 : 2;
  const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, name, n) : NULL;
  /* xFindFunction on the left operand; for NOT LIKE on the first argument
   * (the pattern), as SQLite marks only the NOT as infix */
  f = compile_vtab_overload_call(p, f, name, n, e->flags & SQL_EF_NOT ? e->b : e->a);
  if (!f) {
    /* SQLite names the function by the operator as written */
    char as_written[16];
    snprintf(as_written, sizeof as_written, "%s", name);
    if (e->a && e->b && p->sql) {
      int s = e->a->span.start + e->a->span.len, t = e->b->span.start;
      int len = (int)strlen(name);
      for (int i = s; i + len <= t; i++)
        if (util_strnicmp(p->sql + i, name, len) == 0) {
          snprintf(as_written, sizeof as_written, "%.*s", len, p->sql + i);
          break;
        }
    }
    if (e->sub == TK_MATCH)
      compile_parse_error(p, "unable to use function %s in the requested context", "MATCH");
    else if (p->env && p->env->funcs && func_exists_name(p->env->funcs, name))
      compile_parse_error(p, "wrong number of arguments to function %s()", as_written);
    else
      compile_parse_error(p, "no such function: %s", as_written);
    return;
  }
  SqlExpr *args[3] = {e->b, e->a, e->c};
  int base = emit_regs(p, n);
  int mask = 0;
  for (int i = 0; i < n; i++) {
    if (is_vector(args[i])) {
      compile_parse_error(p, "row value misused");
      return;
    }
    if (compile_expr_is_constant(args[i])) mask |= 1 << i;
    /* the built-in like()/glob() only read their arguments: a literal
     * pattern (or escape) is loaded once, not per row, as cmp_operand's */
    const SqlExpr *x = args[i];
    int leaf = x && (x->op == SQL_E_STRING || x->op == SQL_E_VARIABLE);
    if (leaf && (f->flags & FUNC_LIKE))
      code_once_at(p, args[i], base + i);
    else
      compile_expr_code(p, args[i], base + i);
  }
  if (f->flags & FUNC_NEEDCOLL) {
    const Collation *c = compile_expr_collation(p, e->b);
    if (!c) c = compile_expr_collation(p, e->a);
    vm_builder_add_p4(&p->b, OP_CollSeq, 0, 0, 0, P4_COLL, c ? c : &record_coll_binary);
  }
  int a = vm_builder_add_p4(&p->b, OP_Function, mask, base, target, P4_FUNC, f);
  vm_builder_set_p5(&p->b, a, n);
  if (e->flags & SQL_EF_NOT) emit(p, OP_Not, target, target, 0);
}

static void code_raise(Parse *p, SqlExpr *e) {
  if (!p->trig_tab && p->nested == 0) {
    compile_parse_error(p, "RAISE() may only be used within a trigger-program");
    return;
  }
  if (e->sub == TK_IGNORE) {
    emit(p, OP_Halt, SHALE_OK, VM_OE_IGNORE, 0);
    return;
  }
  int oe = e->sub == TK_ROLLBACK ? VM_OE_ROLLBACK : e->sub == TK_FAIL ? VM_OE_FAIL : VM_OE_ABORT;
  vm_builder_add_text(&p->b, OP_Halt, SHALE_CONSTRAINT_TRIGGER, oe, 0, e->z ? e->z : "", -1);
}

/* ---- the main switch ---- */

static int arith_opcode(int tk) {
  switch (tk) {
    case TK_PLUS:
      return OP_Add;
    case TK_MINUS:
      return OP_Subtract;
    case TK_STAR:
      return OP_Multiply;
    case TK_SLASH:
      return OP_Divide;
    case TK_REM:
      return OP_Remainder;
    case TK_CONCAT:
      return OP_Concat;
    case TK_BITAND:
      return OP_BitAnd;
    case TK_BITOR:
      return OP_BitOr;
    case TK_LSHIFT:
      return OP_ShiftLeft;
    case TK_RSHIFT:
      return OP_ShiftRight;
    default:
      return -1;
  }
}

static void code_case(Parse *p, SqlExpr *e, int target) {
  int end = emit_label(p);
  SqlExpr *base = NULL;
  if (e->a) {
    if (is_vector(e->a)) {
      compile_parse_error(p, "row value misused");
      return;
    }
    base = reg_expr(p, expr_code_reg(p, e->a, tmp_reg(p)), e->a);
    if (!base) return;
  }
  int n = e->list ? e->list->n : 0;
  for (int i = 0; i + 1 < n; i += 2) {
    SqlExpr *w = e->list->a[i].expr;
    int next = emit_label(p);
    if (base) {
      SqlExpr *eq = binary_expr(p, TK_EQ, base, w);
      if (!eq) return;
      compile_expr_if_false(p, eq, next, 1);
    } else {
      compile_expr_if_false(p, w, next, 1);
    }
    compile_expr_code(p, e->list->a[i + 1].expr, target);
    emit(p, OP_Goto, 0, end, 0);
    emit_resolve(p, next);
  }
  if (e->b)
    compile_expr_code(p, e->b, target);
  else
    emit(p, OP_Null, 0, target, 0);
  emit_resolve(p, end);
}

static int expr_code_reg(Parse *p, SqlExpr *e, int target) {
  if (parse_failed(p)) return target;
  if (!e) {
    emit(p, OP_Null, 0, target, 0);
    return target;
  }
  switch (e->op) {
    case SQL_E_NULL:
      emit(p, OP_Null, 0, target, 0);
      return target;
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
      code_number(p, e, 0, target);
      return target;
    case SQL_E_STRING:
    case SQL_E_BLOB: {
      /* a literal longer than SQLITE_LIMIT_LENGTH fails to prepare, as SQLite */
      size_t n = strlen(e->z) / (e->op == SQL_E_BLOB ? 2 : 1);
      if (p->env && p->env->max_length > 0 && n > (size_t)p->env->max_length) {
        compile_parse_error_code(p, SHALE_TOOBIG, "string or blob too big");
        return target;
      }
      if (e->op == SQL_E_BLOB)
        code_blob(p, e->z, target);
      else
        vm_builder_add_text(&p->b, OP_String, 0, target, 0, e->z, -1);
      return target;
    }
    case SQL_E_VARIABLE:
      emit(p, OP_Variable, e->ivar, target, 0);
      return target;
    case SQL_E_REG:
      if (e->reg > 0) return e->reg;
      compile_expr_code(p, (SqlExpr *)e->orig, target);
      return target;
    case SQL_E_CTIME: {
      const char *nm = e->sub == TK_CURRENT_DATE   ? "current_date"
                       : e->sub == TK_CURRENT_TIME ? "current_time"
                                                   : "current_timestamp";
      const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, nm, 0) : NULL;
      if (!f) {
        compile_parse_error(p, "no such function: %s", nm);
        return target;
      }
      int a = vm_builder_add_p4(&p->b, OP_Function, 0, target, target, P4_FUNC, f);
      vm_builder_set_p5(&p->b, a, 0);
      return target;
    }
    case SQL_E_ID: {
      int v = true_false_id(e);
      if (v >= 0) {
        emit(p, OP_Integer, v, target, 0);
      } else if (e->flags & SQL_EF_QUOTED) {
        vm_builder_add_text(&p->b, OP_String, 0, target, 0, e->z, -1);
      } else {
        compile_parse_error(p, "no such column: %s", e->z);
      }
      return target;
    }
    case SQL_E_COLUMN:
      if (e->schema)
        compile_parse_error(p, "no such column: %s.%s.%s", e->schema, e->table, e->z);
      else
        compile_parse_error(p, "no such column: %s.%s", e->table, e->z);
      return target;
    case SQL_E_STAR:
      compile_parse_error(p, "no such column: *");
      return target;
    case SQL_E_COLREF:
      if (e->agg_slot > 0 && e->reg > 0) return e->reg;
      compile_code_column(p, e->tab, e->cursor, e->column, target);
      return target;
    case SQL_E_TRIGREF: {
      int ncol = e->tab ? e->tab->ncol : 0;
      int off = e->cursor * (ncol + 1) + (e->column < 0 ? 0 : e->column + 1);
      emit(p, OP_Param, off, target, 0);
      if (e->column >= 0 && e->tab && e->tab->cols[e->column].affinity == AFF_REAL)
        emit(p, OP_RealAffinity, target, 0, 0);
      return target;
    }
    case SQL_E_UNARY:
      switch (e->sub) {
        case TK_MINUS:
          if (e->a && (e->a->op == SQL_E_INTEGER || e->a->op == SQL_E_FLOAT)) {
            code_number(p, e->a, 1, target);
            return target;
          }
          {
            if (is_vector(e->a)) {
              compile_parse_error(p, "row value misused");
              return target;
            }
            int r = expr_code_reg(p, e->a, tmp_reg(p));
            emit(p, OP_Negative, r, target, 0);
          }
          return target;
        case TK_PLUS:
          if (is_vector(e->a)) {
            compile_parse_error(p, "row value misused");
            return target;
          }
          return expr_code_reg(p, e->a, target);
        case TK_BITNOT:
        case TK_NOT: {
          if (is_vector(e->a)) {
            compile_parse_error(p, "row value misused");
            return target;
          }
          if (e->sub == TK_NOT) {
            /* NOT of a condition: keep three-valued logic exact */
            int r = expr_code_reg(p, e->a, tmp_reg(p));
            emit(p, OP_Not, r, target, 0);
          } else {
            int r = expr_code_reg(p, e->a, tmp_reg(p));
            emit(p, OP_BitNot, r, target, 0);
          }
          return target;
        }
        default:
          compile_parse_error(p, "unsupported unary operator");
          return target;
      }
    case SQL_E_BINARY: {
      int tk = e->sub;
      if (tk == TK_AND && and_always_false(e)) {
        emit(p, OP_Integer, 0, target, 0);
        return target;
      }
      if (tk == TK_AND || tk == TK_OR) {
        if (is_vector(e->a) || is_vector(e->b)) {
          compile_parse_error(p, "row value misused");
          return target;
        }
        int ra = expr_code_reg(p, e->a, tmp_reg(p));
        int rb = expr_code_reg(p, e->b, tmp_reg(p));
        emit(p, tk == TK_AND ? OP_And : OP_Or, ra, rb, target);
        return target;
      }
      int op = arith_opcode(tk);
      if (op >= 0) {
        if (is_vector(e->a) || is_vector(e->b)) {
          compile_parse_error(p, "row value misused");
          return target;
        }
        /* operands are only read: a literal one is loaded once (cmp_operand) */
        int ra = cmp_operand(p, e->a);
        int rb = cmp_operand(p, e->b);
        if (op == OP_BitAnd || op == OP_BitOr)
          emit(p, op, ra, rb, target);
        else
          emit(p, op, rb, ra, target);
        return target;
      }
      if (tk == TK_PTR) {
        /* the parser names the operator; spans may belong to another text
         * (a view body), so the SQL is only scanned when it did not */
        const char *nm = e->z && e->z[0] == '-' ? e->z : "->";
        if (!(e->z && e->z[0] == '-') && e->a && e->b) {
          int s = e->a->span.start + e->a->span.len, t = e->b->span.start;
          for (int i = s; i + 2 < t; i++)
            if (p->sql[i] == '-' && p->sql[i + 1] == '>' && p->sql[i + 2] == '>') nm = "->>";
        }
        const FuncDef *f = p->env && p->env->funcs ? func_find(p->env->funcs, nm, 2) : NULL;
        if (!f) {
          compile_parse_error(p, "no such function: %s", nm);
          return target;
        }
        int base = emit_regs(p, 2);
        compile_expr_code(p, e->a, base);
        compile_expr_code(p, e->b, base + 1);
        int a = vm_builder_add_p4(&p->b, OP_Function, 0, base, target, P4_FUNC, f);
        vm_builder_set_p5(&p->b, a, 2);
        return target;
      }
      int cop = cmp_opcode(tk);
      int is_not, val;
      if (truth_test(e, &is_not, &val)) {
        int r = expr_code_reg(p, e->a, tmp_reg(p));
        /* IsTrue: r[p2] = truth(r[p1]) ^ p4, NULL gives p3 ^ p4 */
        int x = val ? is_not : !is_not;
        int nullres = is_not;
        vm_builder_add_i4(&p->b, OP_IsTrue, r, target, nullres ^ x, x);
        return target;
      }
      if (cop >= 0 || tk == TK_IS) {
        if (is_vector(e->a) || is_vector(e->b)) {
          three_way_value(p, target, vector_cmp_jumps, e, 0);
          return target;
        }
        int ra = cmp_operand(p, e->a);
        int rb = cmp_operand(p, e->b);
        if (tk == TK_IS)
          emit_cmp(p, OP_Eq, e->a, e->b, ra, rb, target, VM_STOREP2 | VM_NULLEQ);
        else
          emit_cmp(p, cop, e->a, e->b, ra, rb, target, VM_STOREP2);
        return target;
      }
      compile_parse_error(p, "unsupported operator %s", sql_op_text(tk));
      return target;
    }
    case SQL_E_ISNOT: {
      int is_not, val;
      if (truth_test(e, &is_not, &val)) {
        int r = expr_code_reg(p, e->a, tmp_reg(p));
        int x = val ? 1 : 0;
        vm_builder_add_i4(&p->b, OP_IsTrue, r, target, 1 ^ x, x);
        return target;
      }
      if (is_vector(e->a) || is_vector(e->b)) {
        three_way_value(p, target, vector_cmp_jumps, e, 0);
        return target;
      }
      int ra = cmp_operand(p, e->a);
      int rb = cmp_operand(p, e->b);
      emit_cmp(p, OP_Ne, e->a, e->b, ra, rb, target, VM_STOREP2 | VM_NULLEQ);
      return target;
    }
    case SQL_E_ISNULL:
    case SQL_E_NOTNULL: {
      if (is_vector(e->a)) {
        compile_parse_error(p, "row value misused");
        return target;
      }
      int r = expr_code_reg(p, e->a, tmp_reg(p));
      emit(p, OP_Integer, 1, target, 0);
      int a = emit(p, e->op == SQL_E_ISNULL ? OP_IsNull : OP_NotNull, r, 0, 0);
      emit(p, OP_Integer, 0, target, 0);
      vm_builder_set_p2(&p->b, a, emit_addr(p));
      return target;
    }
    case SQL_E_LIKE:
      code_like(p, e, target);
      return target;
    case SQL_E_BETWEEN: {
      SqlExpr *x = between_rewrite(p, e);
      if (!x) return target;
      if (is_vector(e->a)) {
        three_way_value(p, target, cond_jumps, x, (e->flags & SQL_EF_NOT) != 0);
        return target;
      }
      compile_expr_code(p, x, target);
      if (e->flags & SQL_EF_NOT) emit(p, OP_Not, target, target, 0);
      return target;
    }
    case SQL_E_IN:
      three_way_value(p, target, in_jumps, e, (e->flags & SQL_EF_NOT) != 0);
      return target;
    case SQL_E_EXISTS: {
      int r = code_exists(p, e);
      return r;
    }
    case SQL_E_SUBQUERY: {
      int n = compile_select_ncol(e->select);
      if (n != 1) {
        compile_parse_error(p, "sub-select returns %d columns - expected 1", n);
        return target;
      }
      return code_subquery_mem(p, e);
    }
    case SQL_E_ROW:
      if (e->list && e->list->n == 1) return expr_code_reg(p, e->list->a[0].expr, target);
      compile_parse_error(p, "row value misused");
      return target;
    case SQL_E_COLLATE:
      return expr_code_reg(p, e->a, target); /* checked where used */
    case SQL_E_CAST: {
      if (is_vector(e->a)) {
        compile_parse_error(p, "row value misused");
        return target;
      }
      compile_expr_code(p, e->a, target);
      char aff = e->z ? record_type_affinity(e->z, (int)strlen(e->z)) : AFF_BLOB;
      emit(p, OP_Cast, target, aff, 0);
      return target;
    }
    case SQL_E_CASE:
      code_case(p, e, target);
      return target;
    case SQL_E_FUNC:
      code_function(p, e, target);
      return target;
    case SQL_E_RAISE:
      code_raise(p, e);
      emit(p, OP_Null, 0, target, 0);
      return target;
    default:
      compile_parse_error(p, "unsupported expression");
      return target;
  }
}

void compile_expr_code(Parse *p, SqlExpr *e, int target) {
  int r = expr_code_reg(p, e, target);
  if (r != target && !parse_failed(p)) emit(p, OP_Copy, r, target, 0);
}

void compile_expr_code_list(Parse *p, SqlExprList *list, int target) {
  for (int i = 0; list && i < list->n; i++) compile_expr_code(p, list->a[i].expr, target + i);
}

/* ---- jumps ---- */

static int needs_three_way(const SqlExpr *e) {
  return e->op == SQL_E_IN || e->op == SQL_E_BETWEEN || is_vector_cmp(e);
}

void compile_expr_if_true(Parse *p, SqlExpr *e, int label, int jumpifnull) {
  if (parse_failed(p) || !e) return;
  switch (e->op) {
    case SQL_E_COLLATE:
      compile_expr_if_true(p, e->a, label, jumpifnull);
      return;
    case SQL_E_UNARY:
      if (e->sub == TK_NOT) {
        compile_expr_if_false(p, e->a, label, jumpifnull);
        return;
      }
      break;
    case SQL_E_BINARY:
      if (and_always_false(e)) return; /* never true */
      if (e->sub == TK_AND) {
        int skip = emit_label(p);
        compile_expr_if_false(p, e->a, skip, !jumpifnull);
        compile_expr_if_true(p, e->b, label, jumpifnull);
        emit_resolve(p, skip);
        return;
      }
      if (e->sub == TK_OR) {
        compile_expr_if_true(p, e->a, label, jumpifnull);
        compile_expr_if_true(p, e->b, label, jumpifnull);
        return;
      }
      break;
    case SQL_E_BETWEEN:
      if (!is_vector(e->a)) { /* as a >= b AND a <= c, a evaluated once: two jumps */
        SqlExpr *x = between_rewrite(p, e);
        if (!x) return;
        if (e->flags & SQL_EF_NOT)
          compile_expr_if_false(p, x, label, jumpifnull);
        else
          compile_expr_if_true(p, x, label, jumpifnull);
        return;
      }
      break;
    default:
      break;
  }
  int is_not, val;
  if (!truth_test(e, &is_not, &val) && !needs_three_way(e)) {
    int op = e->op == SQL_E_BINARY ? cmp_opcode(e->sub) : -1;
    if (op >= 0) {
      if (is_vector(e->a) || is_vector(e->b)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      int ra = cmp_operand(p, e->a);
      int rb = cmp_operand(p, e->b);
      emit_cmp(p, op, e->a, e->b, ra, rb, label, jumpifnull ? VM_JUMPIFNULL : 0);
      return;
    }
    if ((e->op == SQL_E_BINARY && e->sub == TK_IS) || e->op == SQL_E_ISNOT) {
      if (is_vector(e->a) || is_vector(e->b)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      int ra = cmp_operand(p, e->a);
      int rb = cmp_operand(p, e->b);
      emit_cmp(p, e->op == SQL_E_ISNOT ? OP_Ne : OP_Eq, e->a, e->b, ra, rb, label, VM_NULLEQ);
      return;
    }
    if (e->op == SQL_E_ISNULL || e->op == SQL_E_NOTNULL) {
      int r = expr_code_reg(p, e->a, tmp_reg(p));
      emit(p, e->op == SQL_E_ISNULL ? OP_IsNull : OP_NotNull, r, label, 0);
      return;
    }
    int r = expr_code_reg(p, e, tmp_reg(p));
    emit(p, OP_If, r, label, jumpifnull ? 1 : 0);
    return;
  }
  int skip = emit_label(p);
  cond_jumps(p, e, label, skip, jumpifnull ? label : skip);
  emit_resolve(p, skip);
}

void compile_expr_if_false(Parse *p, SqlExpr *e, int label, int jumpifnull) {
  if (parse_failed(p) || !e) return;
  switch (e->op) {
    case SQL_E_COLLATE:
      compile_expr_if_false(p, e->a, label, jumpifnull);
      return;
    case SQL_E_UNARY:
      if (e->sub == TK_NOT) {
        compile_expr_if_true(p, e->a, label, jumpifnull);
        return;
      }
      break;
    case SQL_E_BINARY:
      if (and_always_false(e)) {
        emit(p, OP_Goto, 0, label, 0);
        return;
      }
      if (e->sub == TK_AND) {
        compile_expr_if_false(p, e->a, label, jumpifnull);
        compile_expr_if_false(p, e->b, label, jumpifnull);
        return;
      }
      if (e->sub == TK_OR) {
        int skip = emit_label(p);
        compile_expr_if_true(p, e->a, skip, !jumpifnull);
        compile_expr_if_false(p, e->b, label, jumpifnull);
        emit_resolve(p, skip);
        return;
      }
      break;
    case SQL_E_BETWEEN:
      if (!is_vector(e->a)) { /* as a >= b AND a <= c, a evaluated once: two jumps */
        SqlExpr *x = between_rewrite(p, e);
        if (!x) return;
        if (e->flags & SQL_EF_NOT)
          compile_expr_if_true(p, x, label, jumpifnull);
        else
          compile_expr_if_false(p, x, label, jumpifnull);
        return;
      }
      break;
    default:
      break;
  }
  int is_not, val;
  if (!truth_test(e, &is_not, &val) && !needs_three_way(e)) {
    int op = e->op == SQL_E_BINARY ? cmp_opcode(e->sub) : -1;
    if (op >= 0) {
      if (is_vector(e->a) || is_vector(e->b)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      int ra = cmp_operand(p, e->a);
      int rb = cmp_operand(p, e->b);
      emit_cmp(p, invert_cmp(op), e->a, e->b, ra, rb, label, jumpifnull ? VM_JUMPIFNULL : 0);
      return;
    }
    if ((e->op == SQL_E_BINARY && e->sub == TK_IS) || e->op == SQL_E_ISNOT) {
      if (is_vector(e->a) || is_vector(e->b)) {
        compile_parse_error(p, "row value misused");
        return;
      }
      int ra = cmp_operand(p, e->a);
      int rb = cmp_operand(p, e->b);
      emit_cmp(p, e->op == SQL_E_ISNOT ? OP_Eq : OP_Ne, e->a, e->b, ra, rb, label, VM_NULLEQ);
      return;
    }
    if (e->op == SQL_E_ISNULL || e->op == SQL_E_NOTNULL) {
      int r = expr_code_reg(p, e->a, tmp_reg(p));
      emit(p, e->op == SQL_E_ISNULL ? OP_NotNull : OP_IsNull, r, label, 0);
      return;
    }
    int r = expr_code_reg(p, e, tmp_reg(p));
    emit(p, OP_IfNot, r, label, jumpifnull ? 1 : 0);
    return;
  }
  int skip = emit_label(p);
  cond_jumps(p, e, skip, label, jumpifnull ? label : skip);
  emit_resolve(p, skip);
}

/* ---- column reads ---- */

/* The value of a constant DEFAULT expression (literals, signed numbers),
 * with affinity aff applied; 0 when it is not that simple. */
static int default_value(Parse *p, const SqlExpr *e, char aff, ShValue *out) {
  int neg = 0;
  while (e && (e->op == SQL_E_UNARY && (e->sub == TK_MINUS || e->sub == TK_PLUS))) {
    if (e->sub == TK_MINUS) neg = !neg;
    e = e->a;
  }
  while (e && e->op == SQL_E_COLLATE) e = e->a;
  if (!e) return 0;
  value_set_null(out);
  switch (e->op) {
    case SQL_E_NULL:
      break;
    case SQL_E_INTEGER: {
      int64_t x;
      if (expr_is_int(e, &x)) {
        if (neg) {
          uint64_t u;
          memcpy(&u, &x, sizeof u);
          u = 0 - u;
          memcpy(&x, &u, sizeof x);
        }
        value_set_int(out, x);
        break;
      }
      if (!is_hex(e->z) && record_value_text_to_int64(e->z, (int)strlen(e->z), &x) == 3 && neg) {
        value_set_int(out, INT64_MIN);
        break;
      }
      double d = 0;
      record_value_text_to_real(e->z, (int)strlen(e->z), &d);
      value_set_real(out, neg ? -d : d);
      break;
    }
    case SQL_E_FLOAT: {
      double d = 0;
      record_value_text_to_real(e->z, (int)strlen(e->z), &d);
      value_set_real(out, neg ? -d : d);
      break;
    }
    case SQL_E_STRING:
      if (neg) return 0;
      value_set_text(out, e->z, (uint32_t)strlen(e->z));
      break;
    case SQL_E_BLOB: {
      if (neg) return 0;
      int n = (int)strlen(e->z) / 2;
      char *buf = compile_parse_alloc(p, (size_t)n + 1);
      if (!buf) return 0;
      for (int i = 0; i < n; i++)
        buf[i] = (char)(hexdig(e->z[2 * i]) * 16 + hexdig(e->z[2 * i + 1]));
      value_set_blob(out, buf, (uint32_t)n);
      break;
    }
    case SQL_E_ID: {
      int v = true_false_id(e);
      if (v < 0) return 0;
      value_set_int(out, neg ? -v : v);
      break;
    }
    default:
      return 0;
  }
  if (aff && out->type != SHALE_NULL) {
    ShValue v = *out;
    if (record_value_apply_affinity(&v, aff)) {
      compile_parse_nomem(p);
      return 0;
    }
    if (v.flags & VAL_OWNED) {
      char *z = util_arena_strndup(&p->arena, v.z, v.n);
      uint32_t n = v.n;
      uint8_t t = v.type;
      value_clear(&v);
      if (!z) {
        compile_parse_nomem(p);
        return 0;
      }
      out->type = t;
      out->flags = 0;
      out->n = n;
      out->z = z;
    } else {
      *out = v;
    }
  }
  return 1;
}

static void code_virtual_column(Parse *p, const Table *tab, int cur, int col, int target);

void compile_code_column(Parse *p, const Table *tab, int cur, int col, int target) {
  if (parse_failed(p)) return;
  if (!tab) {
    emit(p, OP_Column, cur, col, target);
    return;
  }
  if (tab->vtab) { /* a virtual table's cursor (compile_vtab.c) */
    if (col < 0)
      emit(p, OP_VRowid, cur, target, 0);
    else
      emit(p, OP_VColumn, cur, col, target);
    return;
  }
  const struct ParseCover *cv = compile_parse_find_cover(p, cur);
  int is_rowid = col < 0 || (col == tab->rowid_alias && !tab->without_rowid);
  if (cv && cv->reg) { /* a co-routine's row (copied: the next row overwrites it) */
    if (col < 0 || col >= tab->ncol)
      emit(p, OP_Null, 0, target, 0);
    else
      vm_builder_set_p5(&p->b, emit(p, OP_Copy, cv->reg + col, target, 0), 1);
    /* (no subtype crosses a subquery, as in SQLite); a REAL column's
     * integers read as reals, as from a materialized row */
    if (col >= 0 && col < tab->ncol && tab->cols[col].affinity == AFF_REAL)
      emit(p, OP_RealAffinity, target, 0, 0);
    return;
  }
  if (cv && cv->idx) {
    const Index *ix = cv->idx;
    if (is_rowid && !tab->without_rowid) {
      emit(p, OP_IdxRowid, cv->idx_cur, target, 0);
      return;
    }
    for (int i = 0; i < ix->ncol; i++) {
      if (ix->cols[i].col == col) {
        emit(p, OP_Column, cv->idx_cur, i, target);
        if (tab->cols[col].affinity == AFF_REAL) emit(p, OP_RealAffinity, target, 0, 0);
        return;
      }
    }
    /* not in the index: the table cursor's row, looked up first when the
     * loop defers it (a miss reads as a NULL row: the index is corrupt) */
    if (cv->seek_reg) {
      int read = emit_label(p), miss = emit_label(p);
      emit(p, OP_If, cv->seek_reg, read, 0);
      emit(p, OP_Integer, 1, cv->seek_reg, 0);
      compile_where_seek_row(p, tab, cur, ix, cv->idx_cur, miss);
      emit(p, OP_Goto, 0, read, 0);
      emit_resolve(p, miss);
      emit(p, OP_NullRow, cur, 0, 0);
      emit_resolve(p, read);
    }
  }
  if (is_rowid) {
    emit(p, OP_Rowid, cur, target, 0);
    return;
  }
  if (col >= tab->ncol) {
    emit(p, OP_Null, 0, target, 0);
    return;
  }
  const Column *c = &tab->cols[col];
  if (c->hidden == COL_VIRTUAL) {
    code_virtual_column(p, tab, cur, col, target);
    return;
  }
  int slot = c->storage >= 0 ? c->storage : col;
  ShValue dv;
  if (c->dflt && tab->root != 0 && default_value(p, c->dflt, c->affinity, &dv) &&
      dv.type != SHALE_NULL)
    vm_builder_add_value(&p->b, OP_Column, cur, slot, target, &dv);
  else
    emit(p, OP_Column, cur, slot, target);
  if (c->affinity == AFF_REAL) emit(p, OP_RealAffinity, target, 0, 0);
}

/* Deep copy of an expression tree (subqueries are shared: generated
 * columns have none). */
static SqlExpr *compile_expr_dup(Parse *p, const SqlExpr *e) {
  if (!e) return NULL;
  SqlExpr *x = compile_parse_alloc(p, sizeof *x);
  if (!x) return NULL;
  *x = *e;
  x->a = compile_expr_dup(p, e->a);
  x->b = compile_expr_dup(p, e->b);
  x->c = compile_expr_dup(p, e->c);
  if (e->list) {
    SqlExprList *l = compile_parse_alloc(p, sizeof *l);
    SqlExprItem *it = compile_parse_alloc(p, sizeof *it * (size_t)(e->list->n ? e->list->n : 1));
    if (!l || !it) return NULL;
    l->n = l->cap = e->list->n;
    l->a = it;
    for (int i = 0; i < l->n; i++) {
      it[i] = e->list->a[i];
      it[i].expr = compile_expr_dup(p, e->list->a[i].expr);
    }
    x->list = l;
  }
  return x;
}

static void code_virtual_column(Parse *p, const Table *tab, int cur, int col, int target) {
  const Column *c = &tab->cols[col];
  SqlExpr *g = compile_expr_dup(p, c->gen);
  if (!g) {
    emit(p, OP_Null, 0, target, 0);
    return;
  }
  SrcList *src = compile_src_single(p, (Table *)tab, NULL);
  if (!src) return;
  src->a[0].cursor = cur;
  NameCtx nc;
  memset(&nc, 0, sizeof nc);
  nc.src = src;
  nc.flags = NC_IS_GENCOL | NC_FROM_SCHEMA;
  nc.err_ctx = "generated columns";
  if (compile_resolve_expr(p, &nc, g)) return;
  /* the NULL row of an outer join has NULL in every column, this one too */
  int null_row = emit_label(p), done = emit_label(p);
  emit(p, OP_IfNullRow, cur, null_row, 0);
  compile_expr_code(p, g, target);
  if (c->affinity && c->affinity != AFF_BLOB) {
    char aff[2] = {c->affinity, 0};
    vm_builder_add_text(&p->b, OP_Affinity, target, 1, 0, aff, 1);
  }
  emit(p, OP_Goto, 0, done, 0);
  emit_resolve(p, null_row);
  emit(p, OP_Null, 0, target, 0);
  emit_resolve(p, done);
}

/* ---- hoisting ---- */

int compile_expr_code_once(Parse *p, SqlExpr *e) { return code_once_at(p, e, tmp_reg(p)); }

static int code_once_at(Parse *p, SqlExpr *e, int r) {
  if (!compile_expr_is_constant(e) || p->nested > 0) {
    compile_expr_code(p, e, r);
    return r;
  }
  int start = emit_addr(p);
  int nlabel = p->b.nlabel;
  /* the epilogue runs once anyway: no Once-cached calls inside (they are
   * off while nested > 0; a constant expression reaches nothing else that
   * looks at nested) */
  p->nested++;
  compile_expr_code(p, e, r);
  p->nested--;
  if (parse_failed(p) || p->b.rc) return r;
  int end = emit_addr(p);
  if (p->b.nlabel != nlabel) return r; /* has jumps: keep it in place */
  for (int a = start; a < end; a++) {
    int op = p->b.prog->ops[a].op;
    if (vm_opcode_jumps(op) || op == OP_Jump || op == OP_Halt) return r;
  }
  int n = end - start;
  if (p->nconst_ops + n > p->capconst_ops) {
    int cap = p->capconst_ops ? p->capconst_ops * 2 : 16;
    while (cap < p->nconst_ops + n) cap *= 2;
    VmOp *ops = compile_parse_alloc(p, sizeof *ops * (size_t)cap);
    if (!ops) return r;
    if (p->nconst_ops) memcpy(ops, p->const_ops, sizeof *ops * (size_t)p->nconst_ops);
    p->const_ops = ops;
    p->capconst_ops = cap;
  }
  memcpy(p->const_ops + p->nconst_ops, p->b.prog->ops + start, sizeof(VmOp) * (size_t)n);
  p->nconst_ops += n;
  p->b.prog->nop = start;
  return r;
}
