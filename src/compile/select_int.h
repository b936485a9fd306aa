/*
 * select_int.h -- data shared by resolve.c and compile_select.c (the select
 * part) and nothing else: the per-SELECT resolution state kept beside the
 * AST, the FROM-list extras, and small AST helpers.
 *
 * Owns: SelInfo records (Parse arena), hung on SqlSelect.info; the
 * SelectState (Parse.select_state).
 *
 * Invariants:
 *  1. A SqlSelect core has at most one SelInfo per Parse; compile_select_resolve
 *     fills it once (state 2) and every later call returns at once.
 *  2. SelInfo.result is the result list after '*' expansion; the AST's own
 *     cols list is not changed (VALUES: the first row's items).
 *  3. SrcX extras (USING columns merged into a left item) are keyed by the
 *     SrcList pointer and live as long as the Parse.
 */
#ifndef SHALE_SQL_SELECT_INT_H
#define SHALE_SQL_SELECT_INT_H

#include "compile.h"

typedef struct SelInfo {
  const SqlSelect *sel;
  int state; /* 0 new, 1 resolving, 2 resolved */
  SrcList *src;
  NameCtx nc;             /* this core's name context */
  NameCtx from_nc;        /* for FROM subqueries: no visible items, outer = nc.outer */
  SqlExprList *result;    /* after '*' expansion */
  const char *text;       /* the text spans refer to */
  int is_agg;             /* aggregate query (aggregates, GROUP BY or HAVING) */
  int *order_col;         /* head of a select: per ORDER BY term, result column or -1 */
  int *group_col;         /* per GROUP BY term: result column or -1 */
  int correlated;         /* refers to an outer query */
  uint8_t flattened;      /* compile_flatten_core ran on this core */
  uint8_t having_moved;   /* compile_agg.c moved HAVING terms to WHERE already */
  uint8_t distinct_group; /* a DISTINCT coded as GROUP BY (its sorter's EQP row says DISTINCT) */
  /* A parenthesized join's SELECT * (SQLite's SF_NestedFrom): flat when its
   * items are spliced into the enclosing FROM list instead of materialized;
   * ncols: per result column the names a reference may use -- database and
   * table (NULL for a USING column listed first) and column -- and whether
   * an unqualified '*' of the enclosing query skips it (a USING column) */
  uint8_t nested_from, nest_flat;
  struct NestCol {
    const char *db, *tab, *col;
    uint8_t using_term, noexpand;
  } * ncols;
} SelInfo;

/* Per-Parse state of the select part (Parse.select_state). */
typedef struct SelectState {
  struct SrcX {
    const SrcList *src;
    uint64_t *merged; /* per item: bit i = column i is a USING/NATURAL column
                         merged into an item to its left (bit 63: any >= 63) */
    struct SrcX *next;
    /* USING/NATURAL columns of RIGHT/FULL joins: an unqualified reference
     * to the left item's column is coalesce(left, right) */
    struct SrcPair {
      int litem, lcol, ritem, rcol;
    } * pairs;
    int npairs, cappairs;
  } * srcx;
  const char *text; /* spans of the select being resolved refer to this text */
  /* WITH clauses in scope, innermost first: CTEs 0..nvisible-1 of each */
  struct CteScope {
    const SqlWith *with;
    int nvisible;
    const char *text; /* text the CTE spans refer to */
    struct CteScope *up;
  } * ctes;
  /* recursive CTE references and their materialization (compile_src_code_subquery) */
  struct RecCte {
    int cursor;       /* the item's cursor: every row of the CTE */
    int cur_cursor;   /* the current-row table the recursive part reads */
    SqlSelect *setup; /* initial (non-recursive) part */
    SqlSelect *rec;   /* recursive part (one core) */
    int op;           /* SQL_COMPOUND_UNION or _UNION_ALL */
    SqlExpr *limit, *offset;
    SqlExprList *order_by; /* ORDER BY of the CTE: its queue is a priority queue */
    int *order_col;        /* per term: the result column it sorts by */
    int ncol;
    struct RecCte *next;
  } * recs;
  /* while resolving a recursive part: its reference to the CTE itself */
  const char *rec_name;
  Table *rec_tab;
  int rec_cursor, rec_refs;
  /* CTEs named in FROM: a CTE read more than once (and not NOT
   * MATERIALIZED or correlated) is materialized once, by a subroutine every
   * use calls, into `shared`; each use reads it through its own cursor */
  struct CteUse {
    const SqlCte *cte;
    int nuse;
    int coded;              /* the subroutine exists */
    int shared, ret, label; /* its table, return register, entry */
    struct CteUse *next;
  } * cte_uses;
  int nsubquery; /* FROM subqueries named so far: "(subquery-N)" */
  int nwinsub;   /* window co-routines named so far (compile_window.c EQP rows) */
  /* virtual tables written with arguments in FROM (json_each(...),
   * pragma_NAME(...), t(...)): the arguments, made equalities on the hidden
   * columns for xBestIndex (compile_vtab_where_args) */
  struct TvfItem {
    int cursor;
    SqlExprList *args; /* resolved with the FROM list in scope (tvf_resolve) */
    int resolved;
    struct TvfItem *next;
  } * tvfs;
} SelectState;

SelectState *compile_select_state(Parse *);
SelInfo *compile_sel_info(Parse *, const SqlSelect *, int create);
struct SrcX *compile_src_extras(Parse *, const SrcList *, int create);

/* If (item, col) of src is the left side of a RIGHT/FULL JOIN's USING
 * column, turn e (the reference) into coalesce(left, right); returns 1 if
 * it did. */
int compile_src_coalesce_ref(Parse *, SrcList *, int item, int col, SqlExpr *e);

/* Column j of the parenthesized join starting at item it (it->nest) of
 * src as reference e at depth: a column of the item (materialized) or of
 * the spliced item it reads (flattened). */
void compile_src_nest_ref(Parse *, SrcList *src, SrcItem *it, int j, SqlExpr *e, int depth);

/* Affinity of column col of FROM item it as a comparison operand: a table
 * column's, or for a subquery/view the affinity of its (leftmost) result
 * expression -- 0 (none) when that has none, as SQLite's subquery columns. */
char compile_src_item_col_aff(const SrcItem *it, int col);

/* Deep copy of an expression (subqueries shared), arena. */
SqlExpr *compile_expr_dup(Parse *, const SqlExpr *);
SqlExprList *compile_expr_list_dup(Parse *, const SqlExprList *);
/* 1 if a and b are the same expression (after resolution). */
int compile_expr_same(const SqlExpr *a, const SqlExpr *b);
/* Replace node e by a SQL_E_REG for register reg, the original kept in orig
 * (compile_select.c; aggregates and windows). outer_regs: an earlier REG of
 * depth > 0 also stays visible below the new node. 0 on out of memory (e
 * unchanged). */
int compile_select_expr_to_reg(Parse *, SqlExpr *e, int reg, int outer_regs); /* 0: out of memory */
/* Resolve ORDER BY/GROUP BY; colmap (may be NULL) gets the result column
 * each term refers to (alias/ordinal/identical expression), or -1. */
int compile_resolve_order_by_ex(Parse *, NameCtx *, SqlExprList *terms, SqlExprList *result,
                                const char *what, int *colmap);
/* "sub-select returns N columns - expected 1" when e is a scalar subquery
 * of another width; 0 if fine. */
int compile_resolve_check_scalar(Parse *, const SqlExpr *e);
/* "1st", "2nd", ... */
const char *compile_ordinal_suffix(int n);
/* The source text of a span in the text being compiled. */
char *compile_span_text(Parse *, const char *text, SqlSpan sp);
/* The authorizer's READ of column col (-1: rowid) of table t for e: AUTH_OK,
 * AUTH_IGNORE (e now reads NULL) or AUTH_DENY (error recorded). */
int compile_resolve_auth_read(Parse *, const Table *t, int col, SqlExpr *e);

/* SQLite's query flattener (compile_flatten.c): FROM subqueries of the
 * resolved core q that qualify are spliced into its FROM list, once per
 * core, before its code; 1 after an error. compound: 0 when q is a
 * SELECT alone, 1 when it is a compound's core, 2 a core of a compound
 * merged under its ORDER BY (every core's rows come sorted, as SQLite gives
 * each arm the ORDER BY). */
int compile_flatten_core(Parse *, SqlSelect *q, int compound);

/* ---- window functions (compile_window.c) ---- */

typedef struct WinCtx WinCtx;
/* Before a core's result list is resolved: each window call gets its full
 * window (OVER name / OVER (base ...) from the WINDOW clause: "no such
 * window: w", "cannot override ... of window: w"); DISTINCT is refused. */
int compile_window_prepare(Parse *, SqlSelect *s);
/* resolve.c, on a window call whose function is resolved: FILTER on a
 * built-in window function, RANGE offsets without one ORDER BY term. */
int compile_window_check_call(Parse *, SqlExpr *e);
/* The window calls of a resolved core (result list, evaluated ORDER BY
 * terms): NULL when it has none (or after an error). Emits the sorters'
 * opening: call it before the core's loop. */
WinCtx *compile_window_begin(Parse *, SqlSelect *s, SelInfo *info);
/* Outside an aggregate the loop feeds the last pass (the innermost of
 * SQLite's window subqueries, whose ORDER BY is that window's PARTITION BY
 * and ORDER BY terms): compile_window_loop_order is that list, for the planner
 * (NULL when none), and compile_window_loop_planned, called between planning and
 * coding the loop, opens the pass's sorter -- keyed by arrival alone when
 * the loop delivers that order, as SQLite then sorts nothing. */
SqlExprList *compile_window_loop_order(Parse *, WinCtx *wc);
void compile_window_loop_planned(Parse *, WinCtx *wc, int ordered);
/* 1 if the rows out of a windowed core's last pass already come in its
 * ORDER BY order (a prefix of the first window's PARTITION BY + ORDER BY):
 * SQLite then drops the ORDER BY sort, and so does compile_select_code. */
int compile_window_sorts_output(Parse *, SqlSelect *s);
/* The SELECT cores of the statement being compiled (1 inside a trigger or
 * a nested parse): the select id SQLite gives a SELECT it makes after them. */
int compile_window_statement_cores(Parse *p);
/* 1 if a resolved core has window calls (result list, evaluated ORDER BY). */
int compile_window_in_core(const SqlSelect *s);
/* The PARTITION BY list every window call of core s has (not empty), or
 * NULL when they differ, one has none or s has none. */
const SqlExprList *compile_window_partition(const SqlSelect *s);
/* Once, where the core has a row to output (inside its loop, or for each
 * finished group after the aggregate calls were replaced): the row goes to
 * the window passes instead. */
void compile_window_push(Parse *, WinCtx *);
/* After the loop: the passes; for each row out of the last one, with the
 * window calls and the values read replaced by registers, out(p, arg)
 * emits the output code (result list, emit_output). */
void compile_window_end(Parse *, WinCtx *, void (*out)(Parse *, void *), void *arg);

/* ---- shared by compile_select.c, compile_from.c and compile_agg.c ---- */

/* How rows leave a core (compile_select.c invariant 1). */
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
  /* DISTINCT over rows the loops deliver in result order (SQLite's
   * WHERE_DISTINCT_ORDERED; distinct_cur -1): a row equal to the one before
   * (distinct_prev, ncol registers; distinct_first 1 until a first row, 0:
   * none) is skipped, compared under distinct_ki */
  int distinct_prev, distinct_first;
  KeyInfo *distinct_ki;
  /* ORDER BY sorter (sorter_cur -1: none) */
  int sorter_cur;
  SqlExprList *order_by;
  int *order_col;
  int nkey;                     /* key columns in the sorter record, before the sequence */
  int *res_field;               /* per result column: its field in the sorter record (a key
                                   column holding the same value, or one after the sequence) */
  int ndata;                    /* result columns stored after the sequence */
  const SqlSelect *order_owner; /* the core whose loop may deliver ORDER BY order */
  KeyInfo *sorter_ki;           /* the sorter's KeyInfo (sorter_setup) */
  int sorter_open_at,
      sorter_open_end; /* sorter_setup's ops: Noop when the loops deliver the order */
  /* block sort (the loops deliver the first ORDER BY terms): block_nkey
   * key columns (0: none) of the previous row in block_prev; a row whose
   * differ calls the subroutine at block_sub (return address in block_ret)
   * that sorts out the rows so far and empties the sorter */
  int block_nkey, block_prev, block_ret, block_sub;
} OutCtx;

/* Output of a row out of the window passes (compile_window_end's callback,
 * compile_sel_win_output). */
typedef struct WinOut {
  OutCtx *oc;
  SelInfo *info;
} WinOut;
void compile_sel_win_output(Parse *p, void *arg);

/* A core's row loop (compile_sel_loop_begin/sel_loop_end). */
typedef struct Loop {
  WhereInfo *w;
  int skip;
} Loop;

void compile_sel_agg_code(Parse *p, SqlSelect *s, SelInfo *info, OutCtx *oc, WinCtx *wc);
/* 1 when an aggregate query's ORDER BY is its GROUP BY term for term: the
 * groups, coming out in GROUP BY order, need no ORDER BY sorter. */
int compile_sel_group_is_order(Parse *p, SqlSelect *s, SelInfo *info);
/* e is made of constants and terms of gb of BINARY collation only (no
 * aggregate, subquery or non-deterministic function): SQLite's
 * sqlite3ExprIsConstantOrGroupBy. */
int compile_sel_group_only(Parse *p, const SqlExprList *gb, const SqlExpr *e);
const Collation *compile_sel_coll_of(Parse *p, const SqlExpr *e);
void compile_sel_colref(SqlExpr *e, SrcItem *it, int col);
const char *compile_sel_compound_name(int op);
int compile_sel_cte_shared(const SrcItem *it, const struct RecCte *r);
void compile_sel_emit_output(Parse *p, OutCtx *oc, int regs);
int compile_sel_has_correl(const SqlSelect *s);
int compile_sel_hashable_coll(const Collation *c);
int compile_sel_left_item_with(SrcList *s, int i, const char *name, int *col);
SqlExprList *compile_sel_list_add(Parse *p, SqlExprList *l, SqlExpr *e);
int compile_sel_loop_begin(Parse *p, SelInfo *info, SqlSelect *s, SqlExprList *ob, int flags,
                           Loop *l);
void compile_sel_loop_end(Parse *p, Loop *l);
SqlExpr *compile_sel_new_expr(Parse *p, int op);
/* a AND b (either may be NULL: the other); NULL on out of memory. */
SqlExpr *compile_sel_and(Parse *p, SqlExpr *a, SqlExpr *b);
int compile_sel_resolve_compound_order(Parse *p, SqlSelect *head);
int compile_sel_tvf_resolve(Parse *p, NameCtx *nc, SrcList *src);

#endif /* SHALE_SQL_SELECT_INT_H */
