/*
 * func_window.c -- the built-in window functions: row_number, rank,
 * dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value,
 * last_value, nth_value.
 *
 * Owns the func_window_defs table. These functions only exist as window
 * calls: the resolver refuses them without OVER ("misuse of window function
 * f()"), and the VM's window engine (src/vm/vm_window.c) computes their
 * values itself from the rows of the partition, by the FUNC_WIN_* kind kept
 * in user_data. The step/final callbacks below are never called by the
 * window engine; they exist so that each def is an aggregate (the registry
 * invariant "scalar xor aggregate") and yield NULL if anything does call
 * them.
 *
 * Invariants:
 *  1. Every def has FUNC_WINDOW | FUNC_BUILTIN and user_data = its kind.
 *  2. The arities are SQLite's: lag/lead take 1 to 3 arguments, ntile 1,
 *     nth_value 2, first_value/last_value 1, the ranking functions 0.
 */
#include <stdint.h>

#include "func_int.h"

static void win_step(FuncCtx *ctx, int argc, ShValue *argv) {
  (void)ctx;
  (void)argc;
  (void)argv;
}

static void win_final(FuncCtx *ctx) { func_result_null(ctx); }

#define WFL (FUNC_WINDOW | FUNC_BUILTIN)
#define WIN(nm, na, kind)                                                        \
  {                                                                              \
    .name = nm, .nargs = na, .flags = WFL, .step = win_step, .final = win_final, \
    .value = win_final, .user_data = (void *)(intptr_t)(kind)                    \
  }

const FuncDef func_window_defs[] = {
    WIN("row_number", 0, FUNC_WIN_ROW_NUMBER),
    WIN("rank", 0, FUNC_WIN_RANK),
    WIN("dense_rank", 0, FUNC_WIN_DENSE_RANK),
    WIN("percent_rank", 0, FUNC_WIN_PERCENT_RANK),
    WIN("cume_dist", 0, FUNC_WIN_CUME_DIST),
    WIN("ntile", 1, FUNC_WIN_NTILE),
    WIN("lag", 1, FUNC_WIN_LAG),
    WIN("lag", 2, FUNC_WIN_LAG),
    WIN("lag", 3, FUNC_WIN_LAG),
    WIN("lead", 1, FUNC_WIN_LEAD),
    WIN("lead", 2, FUNC_WIN_LEAD),
    WIN("lead", 3, FUNC_WIN_LEAD),
    WIN("first_value", 1, FUNC_WIN_FIRST_VALUE),
    WIN("last_value", 1, FUNC_WIN_LAST_VALUE),
    WIN("nth_value", 2, FUNC_WIN_NTH_VALUE),
};
const int func_window_ndefs = (int)(sizeof(func_window_defs) / sizeof(func_window_defs[0]));
