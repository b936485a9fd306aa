/*
 * toom.h -- out-of-memory runs for tests: a workload run in a child process
 * with the n-th allocation failing (once, or from then on), reporting
 * whether it leaked or crashed.
 *
 * Invariants:
 *  1. The workload runs in a forked child, so a crash costs that run only;
 *     the parent's allocator state is untouched.
 */
#ifndef SHALE_TESTS_TOOM_H
#define SHALE_TESTS_TOOM_H

#include "shale.h"

/* Run workload() in a child with util_fault_alloc(n, persist) armed.
 * Returns 0 (fine), 1 (blocks leaked) or 2 (the child crashed or died);
 * *hits gets the number of allocations the hook failed. */
int toom_faulted_run(int (*workload)(void), long n, int persist, long *hits);

/* The sweep every OOM test makes: workload() with allocation n failing once,
 * for n = 1, 1 + once_step, ... until the workload no longer reaches n, then
 * the same with every allocation from n on failing (persist_step). Prints
 * one summary line; *leaks and *crashes get the runs that leaked or died. */
void toom_sweep(int (*workload)(void), long once_step, long persist_step, long *leaks,
                long *crashes);

/* shale_exec each of the n statements on db; returns how many failed. */
int toom_exec_list(shale *db, const char *const *sql, int n);

#endif
