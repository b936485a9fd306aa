/*
 * dml_int.h -- private interface between compile_dml.c and
 * compile_trigger.c (owned by the dml part).
 *
 * A trigger body is compiled by a nested Parse wrapped in a TrigFrame; the
 * frames form a stack (outer) so a trigger can see which triggers are being
 * compiled around it (recursive triggers off: a trigger does not fire
 * itself) and the conflict resolution the outermost statement imposes.
 *
 * Invariants:
 *  1. A Parse with nested > 0 made by compile_trigger.c is always the first
 *     member of a TrigFrame, so dml_frame() may cast it.
 *  2. TrigFrame.oe is the outer statement's OR clause (SQL_OE_*, 0 = none):
 *     when set it overrides the conflict resolution of the body statements.
 */
#ifndef SHALE_SQL_DML_INT_H
#define SHALE_SQL_DML_INT_H

#include "compile.h"

typedef struct TrigFrame {
  Parse p; /* must be first (invariant 1) */
  Parse *outer;
  const Trigger *trig;
  int oe;
  int nprog; /* root frame: trigger programs compiled below it */
} TrigFrame;

static inline TrigFrame *dml_frame(Parse *p) { return p->nested > 0 ? (TrigFrame *)p : NULL; }

/* Deep copy of an expression tree into the Parse arena (subqueries shared). */
SqlExpr *dml_expr_dup(Parse *, const SqlExpr *);
SqlExprList *dml_list_dup(Parse *, const SqlExprList *);

#endif
