/*
 * walt_trace.h -- one WAL scenario run on both engines and compared step by
 * step: a scenario records each observed value (a result code, a count, a
 * pragma's answer) into a Trace; run_both runs it on the reference SQLite
 * and on Shale, each on a fresh file, and fails at the first step whose
 * values differ (SHALE_WALT_VERBOSE=1 prints SQLite's trace).
 *
 * Invariants:
 *  1. A Trace keeps at most MAXTRACE steps; more are dropped (on both
 *     engines alike, so the counts still compare).
 */
#ifndef SHALE_TESTS_WALT_TRACE_H
#define SHALE_TESTS_WALT_TRACE_H

#include "../test.h"
#include "walt.h"

#define MAXTRACE 96

typedef struct Trace {
  int n;
  long long v[MAXTRACE];
  const char *what[MAXTRACE];
} Trace;

static inline void tr(Trace *t, const char *what, long long v) {
  if (t->n < MAXTRACE) {
    t->what[t->n] = what;
    t->v[t->n++] = v;
  }
}

typedef void (*Scenario)(int eng, const char *path, Trace *t);

static inline void run_both(const char *name, Scenario fn) {
  Trace ts, tq;
  memset(&ts, 0, sizeof ts);
  memset(&tq, 0, sizeof tq);
  char p1[64], p2[64];
  snprintf(p1, sizeof p1, "%s-q.db", name);
  snprintf(p2, sizeof p2, "%s-s.db", name);
  const char *pq = test_path(p1);
  walt_unlink(pq);
  fn(WENG_SQLITE, pq, &tq);
  const char *ps = test_path(p2);
  walt_unlink(ps);
  fn(WENG_SHALE, ps, &ts);
  CHECK_EQ(ts.n, tq.n);
  if (getenv("SHALE_WALT_VERBOSE"))
    for (int i = 0; i < tq.n; i++) fprintf(stderr, "  %-24s %lld\n", tq.what[i], tq.v[i]);
  for (int i = 0; i < ts.n && i < tq.n; i++) {
    if (ts.v[i] != tq.v[i])
      test_fail(__FILE__, __LINE__, "%s step %d (%s): shale %lld, sqlite %lld", name, i, tq.what[i],
                ts.v[i], tq.v[i]);
  }
}

#endif
