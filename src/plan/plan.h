/*
 * plan.h -- the query planner: WHERE/ON terms of a resolved AST in, one
 * access path per FROM item and a loop order out. src/compile/compile_where.c
 * turns the plan into VM loops.
 *
 * Layering: includes src/parse/ast.h (the parse layer is below this one)
 * for the AST's types and the schema below it. Whatever needs the code
 * generator's knowledge (comparison affinity and collation of a term) is
 * filled in by the caller before plan_choose.
 *
 * Invariants:
 *  1. A plan never changes results: an access path only skips rows that its
 *     terms reject; every term it relies on satisfies the affinity and
 *     collation rules (plan_index_col_ok), and the caller re-tests terms it
 *     is not sure the path enforces.
 *  2. A LEFT JOIN or CROSS JOIN item is ordered after every item to its left;
 *     a LEFT JOIN item is only restricted by its own ON terms.
 *  3. Everything lives in the caller's arena (UtilArena); plan_* never frees.
 */
#ifndef SHALE_PLAN_H
#define SHALE_PLAN_H

#include <stdint.h>

#include "../parse/ast.h"
#include "../schema/schema.h"

#define PLAN_MAX_EQ 64 /* index columns a path may constrain */

/* SQLite's LogEst: 10 * log2(x) as a small integer (1 -> 0, 2 -> 10,
 * 1000 -> 99, 1048576 -> 200). The planner's costs and row counts are
 * LogEst sums, as SQLite's, so its choices break ties as SQLite's do. */
typedef int16_t PlanLogEst;
/* LogEst of x (x < 2: 0). */
PlanLogEst plan_logest(uint64_t x);
/* LogEst of a + b given LogEst a and b (SQLite's sqlite3LogEstAdd). */
PlanLogEst plan_logest_add(PlanLogEst a, PlanLogEst b);

/* PlanTerm.op */
#define PLAN_OP_EQ 0x001 /* col = value */
#define PLAN_OP_IS 0x002 /* col IS value (NULL matches NULL) */
#define PLAN_OP_LT 0x004
#define PLAN_OP_LE 0x008
#define PLAN_OP_GT 0x010
#define PLAN_OP_GE 0x020
#define PLAN_OP_IN 0x040     /* col IN (list) / IN (subquery): value = the IN expression */
#define PLAN_OP_ISNULL 0x080 /* col IS NULL: value = NULL */
#define PLAN_OP_RANGE (PLAN_OP_LT | PLAN_OP_LE | PLAN_OP_GT | PLAN_OP_GE)

/* One AND-term of WHERE or of an ON clause. */
typedef struct PlanTerm {
  SqlExpr *expr;  /* the term as written (for a BETWEEN half: the BETWEEN) */
  uint64_t mask;  /* FROM items the whole term reads (bit i = item i) */
  int on_item;    /* LEFT/RIGHT JOIN item whose ON clause holds the term; -1
                     WHERE or an inner ON; -2 WHERE of a query with a RIGHT
                     JOIN (restricts no loop) */
  int parent;     /* index of the term this one was derived from, or -1 */
  uint8_t varies; /* reads no item yet is not constant (caller sets it) */
  int group;      /* -1; else the OR disjunct (see Planner.group_or) the term is a
                     conjunct of: it only drives that disjunct's sub-path */
  /* column-op-value form (op == 0: none) */
  int op;                   /* PLAN_OP_* */
  int item, column;         /* the column side: FROM item, column (-1 = rowid) */
  SqlExpr *col_expr;        /* the column reference */
  SqlExpr *value;           /* the other side (IN: the IN expression; ISNULL: NULL) */
  SqlExpr *left, *right;    /* the comparison's operands as written (affinity/collation) */
  uint64_t prereq;          /* FROM items value reads */
  char aff;                 /* comparison affinity applied to the value (0 = none); caller fills */
  const char *coll;         /* comparison collation name (NULL = BINARY); caller fills */
  const Collation *collseq; /* the same collation (NULL = BINARY); caller fills */
  uint8_t usable;           /* caller: 0 if the term may not drive an index (e.g. bad collation) */
  uint64_t pmask;           /* != 0: the items the term reads once SQLite's constant propagation
                               replaced its column operand (plan.c propagate_constants) */
  SqlExpr *pconst;          /* ... the constant that replaced it */
  uint8_t peq;              /* ... the term is then "column = constant" (its truth cap) */
  uint8_t equiv;            /* derived through a column equality (1, SQLite's WO_EQUIV: the
                               parent's comparison on an equal column) or a constant
                               (2, propagate_constants); it drives a path but never
                               stands for its parent's test */
} PlanTerm;

/* PlanLevel.kind */
#define PLAN_SCAN 0        /* full scan of the table (or of idx when set: ORDER BY / covering) */
#define PLAN_ROWID_EQ 1    /* SeekRowid on eq[0] (=, IN) */
#define PLAN_ROWID_RANGE 2 /* rowid between lo/hi */
#define PLAN_INDEX 3       /* index idx: neq equality columns, optional range on column neq */
#define PLAN_AUTO                                                  \
  4 /* automatic covering index on the columns of eq[0..neq) (join \
       terms), built by the caller before the loops */
#define PLAN_OR                                                                          \
  5                 /* MULTI-INDEX OR: the rowids of each disjunct's path (sub[0..nsub)) \
                       into a RowSet, then each row by rowid (rowid tables) */
#define PLAN_VTAB 6 /* a virtual table: the xBestIndex answer vpath of its item */

/* The access path of one FROM item. */
typedef struct PlanLevel {
  int item;            /* FROM item */
  int kind;            /* PLAN_* */
  const Index *idx;    /* PLAN_INDEX, or PLAN_SCAN through an index; NULL otherwise */
  int neq;             /* equality columns used */
  int eq[PLAN_MAX_EQ]; /* term per equality column (index in the term array) */
  int lo, hi;          /* range terms on column neq (or rowid), -1 when absent */
  uint8_t covering;    /* the index holds every column read */
  uint8_t reverse;     /* scan backwards (ORDER BY ... DESC) */
  uint8_t is_pk;       /* idx is a WITHOUT ROWID table's PRIMARY KEY (read in place) */
  int nsub;            /* PLAN_OR: one path per disjunct */
  struct PlanLevel *sub;
  int or_term;       /* PLAN_OR: the OR term */
  PlanLogEst nout;   /* estimated rows out per outer row (LogEst) */
  PlanLogEst rrun;   /* estimated cost per outer row (LogEst) */
  PlanLogEst rsetup; /* one-time cost (automatic index build; LogEst) */
  int vpath;         /* PLAN_VTAB: index in the item's vpath */
} PlanLevel;

/* One xBestIndex answer for a virtual table (the caller asks the module):
 * usable once the items of prereq are looped outside it. */
typedef struct PlanVpath {
  uint64_t prereq;
  double cost, rows;
  uint8_t order; /* orderByConsumed */
} PlanVpath;

/* One FROM item as the planner sees it. */
typedef struct PlanItem {
  const Table *tab;       /* base table or a subquery's Table (is_sub), or NULL */
  uint8_t is_sub;         /* a materialized subquery: scanned, or through an automatic
                             index when auto_ok */
  uint8_t auto_ok;        /* is_sub: its rows do not change while the loops run */
  PlanLogEst sub_rows;    /* is_sub: its estimated rows (SQLite's nSelectRow, LogEst),
                             < 0: unknown */
  int cursor;             /* its VM cursor (column references name it) */
  uint8_t jointype;       /* SQL_JOIN_* joining it to the items on its left */
  uint8_t not_indexed;    /* NOT INDEXED */
  uint8_t no_cover;       /* the caller needs the table row itself (DML) */
  const char *indexed_by; /* INDEXED BY name, or NULL */
  uint64_t colused;       /* columns read (bit 63: a column >= 63) */
  uint64_t after;         /* items that must be looped outside it (bit i = item i): the
                             ones a table-valued function's arguments read */
  int nvpath;             /* a virtual table: its access paths (PLAN_VTAB only) */
  const PlanVpath *vpath;
} PlanItem;

/* What the planner asks of the code generator. */
typedef struct PlanHooks {
  void *ctx;
  /* FROM items e reads (bit i = item i), subqueries included */
  uint64_t (*mask)(void *ctx, SqlExpr *e);
  /* 1 if e can be computed once (no column, subquery, random()) */
  int (*is_constant)(void *ctx, SqlExpr *e);
  /* fill t->aff, t->coll and t->usable for a column-op-value term */
  void (*term_info)(void *ctx, PlanTerm *t);
  /* collation name of an ORDER BY / GROUP BY term (NULL = BINARY) */
  const char *(*coll_name)(void *ctx, SqlExpr *e);
} PlanHooks;

/* plan_choose flags */
#define PLAN_NO_REORDER 0x01   /* keep the FROM order */
#define PLAN_GROUPBY 0x02      /* order_by is a GROUP BY list: any direction */
#define PLAN_NO_AUTO 0x04      /* no automatic indexes (PRAGMA automatic_index=OFF) */
#define PLAN_ORDER_PREFIX 0x08 /* the caller sorts only what a delivered prefix leaves */
#define PLAN_SORTBYGROUP 0x10  /* with PLAN_GROUPBY: the groups must come in its term order */
#define PLAN_DISTINCT 0x20     /* the caller wants distinct rows (sort cost: half the rows) */

typedef struct Planner {
  UtilArena *arena;
  PlanHooks hooks;
  int nitem;
  const PlanItem *items;
  int nterm, capterm;
  PlanTerm *terms;
  int where_first; /* caller: the terms from here on came from WHERE, the ones before from
                      ON clauses (SQLite's list holds the WHERE's first) */
  int ngroup, capgroup;
  int *group_or;        /* OR term of each disjunct group */
  int cur_group;        /* internal: the group whose terms may drive paths (-1: none) */
  uint8_t no_auto;      /* internal: PLAN_NO_AUTO */
  uint8_t prefix;       /* internal: PLAN_ORDER_PREFIX */
  uint8_t distinct;     /* internal: PLAN_DISTINCT */
  PlanLogEst sort_rows; /* internal: the rows sorted (SQLite's nRowEst), -1: no sort weighed */
  /* internal: the search asks for paths that continue this order from
   * term chain_k, the items of chain_settled looped outside (NULL: none) */
  SqlExprList *chain_ob;
  int chain_k;
  uint64_t chain_settled;
  SqlExprList *want_ob; /* internal: the order the query asks for, in both passes (SQLite's
                           pOrderBy: which index scans are weighed) */
  int rc;               /* SHALE_NOMEM after an allocation failed */
  uint8_t no_solution;  /* rc SHALE_ERROR: an item has no access path (INDEXED BY) */
} Planner;

/* The chosen loops, outermost first. */
typedef struct Plan {
  int nlevel;
  PlanLevel *levels;
  uint8_t order_ok; /* the loops deliver order_by (levels[0] may scan backwards) */
  /* when not order_ok: how many leading order_by terms the loops deliver
   * (SQLite's partial nOBSat; 0: none), the levels' reverse flags set so */
  int order_prefix;
  PlanLogEst cost; /* LogEst */
  PlanLogEst rows; /* rows out of the loops (LogEst) */
} Plan;

void plan_init(Planner *, UtilArena *arena, const PlanHooks *hooks, int nitem,
               const PlanItem *items);
/* Split e into AND-terms and analyse each (on_item: the LEFT JOIN item whose
 * ON clause e is, or -1). A term usable from two sides (t.a = u.b) or as two
 * ranges (BETWEEN) gets derived terms (parent = its index). */
void plan_add_clause(Planner *, SqlExpr *e, int on_item);
/* Choose the access path of every item and the loop order. order_by may be
 * NULL. Returns SHALE_OK or SHALE_NOMEM. */
int plan_choose(Planner *, SqlExprList *order_by, int flags, Plan *out);
/* The index SELECT count(*) FROM tab counts the entries of (SQLite's
 * simple-count choice: the narrowest full index narrower than the table's
 * rows, a WITHOUT ROWID table's PRIMARY KEY unless one is narrower), or
 * NULL for the table itself. */
const Index *plan_count_index(const Table *tab, int not_indexed);
/* 1 if term t may serve column j of index idx (column, collation and
 * affinity rules); j may be the trailing rowid of a rowid table's index. */
int plan_index_col_ok(const PlanTerm *t, const Table *tab, const Index *idx, int j);
/* 1 if term t's comparison affinity keeps the order of a column of
 * affinity caff (SQLite's rule: none/BLOB always; TEXT only on TEXT;
 * numeric only on numeric columns). */
int plan_aff_ok(const PlanTerm *t, char caff);
/* 1 if e reads no column of item it but those index idx holds (its rowid
 * or PRIMARY KEY too; subqueries not looked into, as SQLite's
 * sqlite3ExprCoveredByIndex): it can be tested on an entry of idx before
 * the table row is looked up. */
int plan_index_covers_expr(const PlanItem *it, const Index *idx, SqlExpr *e);

#endif /* SHALE_PLAN_H */
