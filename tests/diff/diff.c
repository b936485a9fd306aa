/*
 * diff.c -- result sets, their comparison, and the differential driver
 * (see diff.h).
 *
 * Owns: DiffResult memory, the three comparison modes, the per-round script
 * of state-changing statements (for reproduction and minimization), and the
 * summary of differences grouped by cause.
 *
 * Reals. SQLite itself prints reals with "%!.15g", and SQL leaves the order
 * in which sum()/avg()/total() add their inputs to the plan. The generator
 * keeps aggregate inputs exact (small integers and quarters, gen.c invariant
 * 3), so those sums are exact in any order; for everything else two reals
 * agree when their bits are equal or their %.15g renderings are equal --
 * a difference below the 15th significant digit is rounding noise that
 * SQLite's own output would not show. An integer never equals a real.
 *
 * Invariants:
 *  1. Comparison is symmetric in the sense that matters: the reference's
 *     rows decide the tie groups, and every row of both sides is matched.
 *  2. Once a state-changing statement differs, the two databases may hold
 *     different data: the rest of that round is not compared (counted in
 *     the summary as skipped) so one bug is reported once, not a thousand
 *     times.
 *  3. The reproduction script of a difference is every state-changing
 *     statement of its round so far, in order, then the statement itself;
 *     minimization only ever removes statements and keeps a removal only if
 *     the difference still shows on fresh databases.
 *     Each minimized difference is re-run with a few rewrites (probes) of the
 *     script that each remove one suspect feature; those that make it go
 *     away are printed as hints and counted in the summary.
 *  4. A crash (signal) inside an engine, or a statement running longer than
 *     DIFF_STMT_TIMEOUT seconds (SIGALRM), prints the statement, the engine
 *     and its round's script before the process dies with that signal.
 */
#include "diff.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

/* ---- results ---- */

void diff_result_init(DiffResult *r) { memset(r, 0, sizeof *r); }

static void values_free(DiffResult *r) {
  size_t n = r->nrow * (size_t)r->ncol;
  for (size_t i = 0; i < n; i++) free(r->v[i].z);
}

void diff_result_reset(DiffResult *r) {
  values_free(r);
  free(r->err);
  r->err = NULL;
  r->rc = r->xrc = 0;
  r->ncol = 0;
  r->nrow = 0;
  r->changes = 0;
}

void diff_result_free(DiffResult *r) {
  diff_result_reset(r);
  free(r->v);
  memset(r, 0, sizeof *r);
}

DiffValue *diff_result_add_row(DiffResult *r) {
  size_t need = (r->nrow + 1) * (size_t)r->ncol; /* r->cap counts values */
  if (need > r->cap) {
    size_t cap = r->cap ? r->cap : 64;
    while (cap < need) cap *= 2;
    DiffValue *v = realloc(r->v, cap * sizeof *v);
    if (!v) return NULL;
    r->v = v;
    r->cap = cap;
  }
  DiffValue *row = r->v + r->nrow * (size_t)r->ncol;
  for (int i = 0; i < r->ncol; i++) {
    memset(&row[i], 0, sizeof row[i]);
    row[i].type = DIFF_NULL;
  }
  r->nrow++;
  return row;
}

int diff_value_set_bytes(DiffValue *v, int type, const void *p, size_t n) {
  v->type = type;
  v->z = malloc(n + 1);
  if (!v->z) {
    v->type = DIFF_NULL;
    return -1;
  }
  if (n) memcpy(v->z, p, n);
  v->z[n] = 0;
  v->n = n;
  return 0;
}

void diff_result_set_error(DiffResult *r, int rc, int xrc, const char *msg) {
  r->rc = rc ? rc : 1;
  r->xrc = xrc;
  free(r->err);
  r->err = strdup(msg ? msg : "");
}

static void value_print(FILE *f, const DiffValue *v) {
  switch (v->type) {
    case DIFF_NULL:
      fputs("NULL", f);
      break;
    case DIFF_INTEGER:
      fprintf(f, "%lld", (long long)v->i);
      break;
    case DIFF_FLOAT:
      fprintf(f, "%.17g(real)", v->r);
      break;
    case DIFF_TEXT:
      fputc('\'', f);
      for (size_t i = 0; i < v->n; i++) {
        unsigned char c = (unsigned char)v->z[i];
        if (c == '\'')
          fputs("''", f);
        else if (c < 0x20)
          fprintf(f, "\\x%02x", c);
        else
          fputc(c, f);
      }
      fputc('\'', f);
      break;
    default:
      fputs("x'", f);
      for (size_t i = 0; i < v->n; i++) fprintf(f, "%02x", (unsigned char)v->z[i]);
      fputc('\'', f);
      break;
  }
}

void diff_result_print(FILE *f, const DiffResult *r, size_t max_rows) {
  if (r->rc) {
    fprintf(f, "    ERROR rc=%d (extended %d): %s\n", r->rc, r->xrc, r->err ? r->err : "");
    if (!r->nrow) return;
    fprintf(f, "    (after %zu rows)\n", r->nrow);
  }
  fprintf(f, "    %zu rows, %d columns, changes=%lld\n", r->nrow, r->ncol, (long long)r->changes);
  for (size_t i = 0; i < r->nrow && i < max_rows; i++) {
    fputs("    | ", f);
    for (int c = 0; c < r->ncol; c++) {
      if (c) fputs(" | ", f);
      value_print(f, &r->v[i * (size_t)r->ncol + (size_t)c]);
    }
    fputc('\n', f);
  }
  if (r->nrow > max_rows) fprintf(f, "    ... %zu more rows\n", r->nrow - max_rows);
}

/* ---- value comparison ---- */

static int real_eq(double a, double b) {
  if (!memcmp(&a, &b, sizeof a)) return 1;
  char x[40], y[40];
  snprintf(x, sizeof x, "%.15g", a);
  snprintf(y, sizeof y, "%.15g", b);
  return !strcmp(x, y);
}

static int vclass(const DiffValue *v) {
  switch (v->type) {
    case DIFF_NULL:
      return 0;
    case DIFF_INTEGER:
    case DIFF_FLOAT:
      return 1;
    case DIFF_TEXT:
      return 2;
    default:
      return 3;
  }
}

static long double vnum(const DiffValue *v) {
  return v->type == DIFF_INTEGER ? (long double)v->i : (long double)v->r;
}

static int bytes_cmp(const char *a, size_t na, const char *b, size_t nb) {
  size_t n = na < nb ? na : nb;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return na < nb ? -1 : na > nb;
}

/* Text folded for the loose modes: ASCII lower case, no trailing spaces
 * (covers NOCASE and RTRIM ties). Writes into buf (size >= n). */
static size_t fold(const char *z, size_t n, char *buf) {
  while (n && z[n - 1] == ' ') n--;
  for (size_t i = 0; i < n; i++) {
    char c = z[i];
    buf[i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
  }
  return n;
}

static int folded_cmp(const DiffValue *a, const DiffValue *b) {
  char sa[256], sb[256];
  char *pa = a->n <= sizeof sa ? sa : malloc(a->n);
  char *pb = b->n <= sizeof sb ? sb : malloc(b->n);
  if (!pa || !pb) {
    if (pa != sa) free(pa);
    if (pb != sb) free(pb);
    return bytes_cmp(a->z, a->n, b->z, b->n);
  }
  size_t na = fold(a->z, a->n, pa), nb = fold(b->z, b->n, pb);
  int c = bytes_cmp(pa, na, pb, nb);
  if (pa != sa) free(pa);
  if (pb != sb) free(pb);
  return c;
}

/* Total order; loose: canonical (numbers by value only, text folded). */
static int value_cmp(const DiffValue *a, const DiffValue *b, int loose) {
  int ca = vclass(a), cb = vclass(b);
  if (ca != cb) return ca < cb ? -1 : 1;
  switch (ca) {
    case 0:
      return 0;
    case 1: {
      if (a->type == DIFF_INTEGER && b->type == DIFF_INTEGER) return a->i < b->i ? -1 : a->i > b->i;
      long double x = vnum(a), y = vnum(b);
      if (x < y) return -1;
      if (x > y) return 1;
      if (loose) return 0;
      if (a->type != b->type) return a->type == DIFF_INTEGER ? -1 : 1;
      if (a->type == DIFF_FLOAT && signbit(a->r) != signbit(b->r)) return signbit(a->r) ? -1 : 1;
      return 0;
    }
    case 2:
      return loose ? folded_cmp(a, b) : bytes_cmp(a->z, a->n, b->z, b->n);
    default:
      return bytes_cmp(a->z, a->n, b->z, b->n);
  }
}

/* Equality: strict (same type, same value) or loose (canonical). */
static int value_eq(const DiffValue *a, const DiffValue *b, int loose) {
  if (!loose && a->type != b->type) return 0;
  if (vclass(a) == 1 && vclass(b) == 1) {
    if (a->type == DIFF_INTEGER && b->type == DIFF_INTEGER) return a->i == b->i;
    if (a->type == DIFF_FLOAT && b->type == DIFF_FLOAT)
      return real_eq(a->r, b->r) || (loose && a->r == b->r); /* -0.0 == 0.0 */
    /* int vs real (loose only): numeric equality, with the real tolerance */
    if (vnum(a) == vnum(b)) return 1;
    double x = a->type == DIFF_INTEGER ? (double)a->i : a->r;
    double y = b->type == DIFF_INTEGER ? (double)b->i : b->r;
    return real_eq(x, y);
  }
  return value_cmp(a, b, loose) == 0;
}

/* ---- row comparison ---- */

typedef struct RowSet {
  const DiffResult *r;
  size_t *idx; /* row order */
} RowSet;

static int g_sort_loose;
static const DiffResult *g_sort_res;

static int row_cmp_raw(const DiffResult *r, size_t x, const DiffResult *s, size_t y, int loose) {
  for (int c = 0; c < r->ncol; c++) {
    int d = value_cmp(&r->v[x * (size_t)r->ncol + (size_t)c],
                      &s->v[y * (size_t)s->ncol + (size_t)c], loose);
    if (d) return d;
  }
  return 0;
}

static int row_eq(const DiffResult *r, size_t x, const DiffResult *s, size_t y, int loose) {
  for (int c = 0; c < r->ncol; c++)
    if (!value_eq(&r->v[x * (size_t)r->ncol + (size_t)c], &s->v[y * (size_t)s->ncol + (size_t)c],
                  loose))
      return 0;
  return 1;
}

static int qsort_rows(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int d = row_cmp_raw(g_sort_res, x, g_sort_res, y, g_sort_loose);
  if (d) return d;
  return x < y ? -1 : x > y;
}

static void sort_rows(const DiffResult *r, size_t *idx, size_t from, size_t n, int loose) {
  g_sort_loose = loose;
  g_sort_res = r;
  qsort(idx + from, n, sizeof *idx, qsort_rows);
}

/* Compare rows [from, from+n) of ref and got as multisets. */
static int bag_equal(const DiffResult *ref, size_t *ri, const DiffResult *got, size_t *gi,
                     size_t from, size_t n, int loose, size_t *bad) {
  sort_rows(ref, ri, from, n, loose);
  sort_rows(got, gi, from, n, loose);
  for (size_t k = from; k < from + n; k++)
    if (!row_eq(ref, ri[k], got, gi[k], loose)) {
      *bad = k;
      return 0;
    }
  return 1;
}

int diff_compare(const DiffResult *ref, const DiffResult *got, int mode, int truncated, char *why,
                 size_t nwhy) {
  why[0] = 0;
  if (ref->rc || got->rc) {
    if (ref->rc && got->rc) return 0;
    snprintf(why, nwhy, "%s",
             ref->rc ? "only the reference failed" : "only the tested engine failed");
    return 1;
  }
  if (ref->ncol != got->ncol) {
    snprintf(why, nwhy, "column count %d vs %d", ref->ncol, got->ncol);
    return 1;
  }
  if (ref->changes != got->changes) {
    snprintf(why, nwhy, "changes() %lld vs %lld", (long long)ref->changes, (long long)got->changes);
    return 1;
  }
  if (ref->nrow != got->nrow) {
    snprintf(why, nwhy, "row count %zu vs %zu", ref->nrow, got->nrow);
    return 1;
  }
  size_t n = ref->nrow;
  if (!n || !ref->ncol) return 0;
  size_t *ri = malloc(n * sizeof *ri), *gi = malloc(n * sizeof *gi);
  if (!ri || !gi) {
    free(ri);
    free(gi);
    snprintf(why, nwhy, "out of memory comparing");
    return 1;
  }
  for (size_t k = 0; k < n; k++) ri[k] = gi[k] = k;
  int same = 1;
  size_t bad = 0;
  if (mode == DIFF_CMP_BAG || mode == DIFF_CMP_LOOSE) {
    same = bag_equal(ref, ri, got, gi, 0, n, mode == DIFF_CMP_LOOSE, &bad);
    if (!same)
      snprintf(why, nwhy, "rows differ as %s multisets (sorted row %zu)",
               mode == DIFF_CMP_LOOSE ? "canonical" : "exact", bad);
  } else {
    /* Ordered: runs of canonically equal rows in the reference are tie
     * groups (the ORDER BY covers every column, so only such rows can tie);
     * each group must be matched by the same positions of the other side,
     * as a multiset. With LIMIT/OFFSET the groups at either end may have
     * been cut differently: there only the canonical keys must agree. */
    for (size_t i = 0; i < n && same;) {
      size_t j = i + 1;
      while (j < n && row_eq(ref, i, ref, j, 1)) j++;
      for (size_t k = i; k < j; k++)
        if (!row_eq(ref, i, got, k, 1)) {
          same = 0;
          bad = k;
          break;
        }
      if (same && !(truncated && (i == 0 || j == n)))
        same = bag_equal(ref, ri, got, gi, i, j - i, 0, &bad);
      i = j;
    }
    if (!same) snprintf(why, nwhy, "rows differ in order or value at row %zu", bad);
  }
  free(ri);
  free(gi);
  return !same;
}

/* ---- the driver ---- */

typedef struct Script {
  char **s;
  size_t n, cap;
} Script;

static void script_add(Script *sc, const char *sql) {
  if (sc->n == sc->cap) {
    size_t cap = sc->cap ? sc->cap * 2 : 64;
    char **s = realloc(sc->s, cap * sizeof *s);
    if (!s) return;
    sc->s = s;
    sc->cap = cap;
  }
  char *d = strdup(sql);
  if (d) sc->s[sc->n++] = d;
}

static void script_clear(Script *sc) {
  for (size_t i = 0; i < sc->n; i++) free(sc->s[i]);
  sc->n = 0;
}

/* A group of differences with one cause. */
typedef struct Cause {
  char key[128];
  long count;
  long first; /* statement index of the first one */
} Cause;

#define MAX_CAUSES 128

typedef struct Run {
  const DiffOptions *o;
  DiffStats *st;
  FILE *out;
  Cause cause[MAX_CAUSES];
  int ncause;
  long tag_count[GT_NTAGS];
  long skipped;
  int minimized;
  long hint_count[16];
} Run;

static void cause_add(Run *run, const char *key, long at) {
  for (int i = 0; i < run->ncause; i++)
    if (!strcmp(run->cause[i].key, key)) {
      run->cause[i].count++;
      return;
    }
  if (run->ncause == MAX_CAUSES) {
    key = "(other causes)";
    for (int i = 0; i < run->ncause; i++)
      if (!strcmp(run->cause[i].key, key)) {
        run->cause[i].count++;
        return;
      }
    run->ncause--;
  }
  Cause *c = &run->cause[run->ncause++];
  snprintf(c->key, sizeof c->key, "%s", key);
  c->count = 1;
  c->first = at;
}

static const char *kind_name(int k) {
  return k == GEN_QUERY ? "query" : k == GEN_WRITE ? "write" : k == GEN_DDL ? "ddl" : "txn";
}

static const char *cmp_name(int m) {
  return m == DIFF_CMP_BAG ? "multiset" : m == DIFF_CMP_LOOSE ? "canonical multiset" : "ordered";
}

/* Run script then stmt on fresh databases of both engines; 1 if stmt's
 * results differ (or an engine cannot open). */
static int reproduces(const DiffOptions *o, char **script, const unsigned char *keep, size_t n,
                      const char *stmt, const GenStmt *gs) {
  void *hr = o->ref->open(), *ht = o->test->open();
  int differ = 1;
  if (hr && ht) {
    DiffResult a, b;
    diff_result_init(&a);
    diff_result_init(&b);
    for (size_t i = 0; i < n; i++) {
      if (!keep[i]) continue;
      diff_result_reset(&a);
      diff_result_reset(&b);
      o->ref->query(hr, script[i], &a);
      o->test->query(ht, script[i], &b);
    }
    diff_result_reset(&a);
    diff_result_reset(&b);
    o->ref->query(hr, stmt, &a);
    o->test->query(ht, stmt, &b);
    if (gs->kind != GEN_WRITE) a.changes = b.changes = 0;
    char why[160];
    differ = diff_compare(&a, &b, gs->cmp, gs->truncated, why, sizeof why);
    diff_result_free(&a);
    diff_result_free(&b);
  }
  if (hr) o->ref->close(hr);
  if (ht) o->test->close(ht);
  return differ;
}

static void print_script(FILE *f, char **s, const unsigned char *keep, size_t n, const char *last) {
  for (size_t i = 0; i < n; i++)
    if (!keep || keep[i]) fprintf(f, "%s;\n", s[i]);
  fprintf(f, "%s;\n", last);
}

/* Cause probes: a rewrite of the minimized script that removes one suspect
 * feature. If the difference goes away, the feature is named as a hint. */
typedef struct Probe {
  const char *from, *to;
  int create_only; /* rewrite only CREATE TABLE statements */
  const char *hint;
} Probe;

static const Probe probes[] = {
    {"-0.0", "0.0", 0, "-0.0 written as 0.0"},
    {"likely(", "(", 0, "likely(x) written as (x)"},
    {" COLLATE NOCASE", "", 0, "no COLLATE NOCASE anywhere"},
    {" COLLATE RTRIM", "", 0, "no COLLATE RTRIM anywhere"},
    {" WITHOUT ROWID", "", 1, "tables with rowids"},
    {"INSERT OR REPLACE", "INSERT OR IGNORE", 0, "OR IGNORE instead of OR REPLACE"},
    {" BLOB", " TEXT", 1, "BLOB columns declared TEXT"},
    {" ANY", " TEXT", 1, "ANY columns declared TEXT"},
    {" UNIQUE", "", 1, "no UNIQUE columns"},
    {"SELECT DISTINCT ", "SELECT ", 0, "no SELECT DISTINCT"},
    {" LEFT JOIN ", " JOIN ", 0, "inner joins instead of LEFT JOIN"},
};

/* s with every from replaced by to (malloc'd). */
static char *replace_all(const char *s, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to), n = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + nf, from)) n++;
  char *out = malloc(strlen(s) + n * (nt > nf ? nt - nf : 0) + 1);
  if (!out) return NULL;
  char *o = out;
  for (const char *p = s;;) {
    const char *q = strstr(p, from);
    if (!q) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, to, nt);
    o += nt;
    p = q + nf;
  }
  return out;
}

#define NPROBES (sizeof probes / sizeof probes[0])
_Static_assert(NPROBES <= 16, "Run.hint_count holds 16 probes");

static void print_hints(FILE *f, const DiffOptions *o, char **script, const unsigned char *keep,
                        size_t n, const GenStmt *gs, long *hint_count) {
  int any = 0;
  for (size_t k = 0; k < NPROBES; k++) {
    const Probe *pr = &probes[k];
    char **mut = calloc(n + 1, sizeof *mut);
    if (!mut) return;
    int changed = 0, ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
      if (!keep[i]) continue;
      if (pr->create_only && strncmp(script[i], "CREATE TABLE", 12))
        mut[i] = strdup(script[i]);
      else
        mut[i] = replace_all(script[i], pr->from, pr->to);
      ok = mut[i] != NULL;
      if (ok && strcmp(mut[i], script[i])) changed = 1;
    }
    char *last =
        ok ? (pr->create_only ? strdup(gs->sql) : replace_all(gs->sql, pr->from, pr->to)) : NULL;
    if (last && strcmp(last, gs->sql)) changed = 1;
    if (last && changed && !reproduces(o, mut, keep, n, last, gs)) {
      fprintf(f, "%s%s", any++ ? "; " : "  hint: the difference goes away with ", pr->hint);
      hint_count[k]++;
    }
    free(last);
    for (size_t i = 0; i < n; i++) free(mut[i]);
    free(mut);
  }
  if (any) fputc('\n', f);
}

static void report(Run *run, long at, long round_at, const GenStmt *gs, const DiffResult *rr,
                   const DiffResult *rt, const char *why, Script *script) {
  const DiffOptions *o = run->o;
  FILE *f = run->out;
  long nth = run->st->diffs;
  if (nth > o->max_details) {
    fprintf(f, "difference %ld: seed %llu statement %ld: %s: %.200s\n", nth,
            (unsigned long long)o->seed, at, why, gs->sql);
    return;
  }
  fprintf(f,
          "\n=== difference %ld: seed %llu, statement %ld (statement %ld of its round), %s, "
          "compared as %s%s\n",
          nth, (unsigned long long)o->seed, at, round_at, kind_name(gs->kind), cmp_name(gs->cmp),
          gs->truncated ? " (LIMIT/OFFSET)" : "");
  fprintf(f, "  why: %s\n  tags:", why);
  for (int i = 0; i < GT_NTAGS; i++)
    if (gs->tags & (1u << i)) fprintf(f, " %s", gen_tag_name(i));
  fprintf(f, "\n  SQL: %s\n  %s:\n", gs->sql, o->ref->name);
  diff_result_print(f, rr, 30);
  fprintf(f, "  %s:\n", o->test->name);
  diff_result_print(f, rt, 30);
  unsigned char *keep = malloc(script->n + 1);
  if (keep) memset(keep, 1, script->n + 1);
  size_t kept = script->n;
  if (keep && run->minimized < o->minimize) {
    run->minimized++;
    if (reproduces(o, script->s, keep, script->n, gs->sql, gs)) {
      for (size_t i = script->n; i-- > 0;) {
        keep[i] = 0;
        if (reproduces(o, script->s, keep, script->n, gs->sql, gs))
          kept--;
        else
          keep[i] = 1;
      }
      print_hints(f, o, script->s, keep, script->n, gs, run->hint_count);
      fprintf(f, "  -- minimized script (%zu of %zu statements; paste into both shells):\n", kept,
              script->n);
    } else {
      fprintf(f, "  -- script (%zu statements; does not reproduce alone on fresh databases):\n",
              script->n);
    }
  } else {
    fprintf(f, "  -- script to reproduce (%zu statements; paste into both shells):\n", script->n);
  }
  print_script(f, script->s, keep, script->n, gs->sql);
  free(keep);
  fflush(f);
}

/* What runs now, for the crash handler: a crash in an engine prints the
 * statement and the script of its round before the process dies. */
/* Seconds one statement may run on one engine before it counts as hung. */
#define DIFF_STMT_TIMEOUT 60

static struct {
  const char *sql;
  const Script *script;
  uint64_t seed;
  long at;
  const char *engine;
} crash;

static void on_crash(int sig) {
  signal(sig, SIG_DFL);
  fprintf(stderr, "\n*** signal %d while %s ran seed %llu statement %ld:\n%s;\n", sig,
          crash.engine ? crash.engine : "?", (unsigned long long)crash.seed, crash.at,
          crash.sql ? crash.sql : "(none)");
  if (crash.script) {
    fprintf(stderr, "*** script of its round (%zu statements) to reproduce:\n", crash.script->n);
    print_script(stderr, crash.script->s, NULL, crash.script->n, crash.sql ? crash.sql : "");
  }
  fflush(stderr);
  raise(sig);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cause_order(const void *a, const void *b) {
  const Cause *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The cause of a row difference, from diff_compare's reason. */
static const char *why_category(const char *why) {
  if (!strncmp(why, "row count", 9)) return "row count differs";
  if (!strncmp(why, "changes()", 9)) return "changes() differs";
  if (!strncmp(why, "column count", 12)) return "column count differs";
  if (strstr(why, "order")) return "values or order differ";
  return "values differ";
}

static void eqp_compare(const DiffOptions *o, void *hr, void *ht, const char *sql, DiffStats *st);
static void order_compare(const DiffResult *ref, const DiffResult *got, int mode, DiffStats *st);

int diff_run(const DiffOptions *o, DiffStats *st) {
  Run run;
  memset(&run, 0, sizeof run);
  memset(st, 0, sizeof *st);
  run.o = o;
  run.st = st;
  run.out = o->out ? o->out : stderr;
  DiffGen *g = gen_new(o->seed);
  if (!g) return -1;
  void *hr = NULL, *ht = NULL;
  DiffResult rr, rt;
  diff_result_init(&rr);
  diff_result_init(&rt);
  Script script = {0};
  int rc = 0, diverged = 0;
  long round_at = 0;
  long msg_printed = 0;
  double t0 = now_s();
  static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM};
  void (*old_handler[6])(int);
  crash.script = &script;
  crash.seed = o->seed;
  for (int k = 0; k < 6; k++) old_handler[k] = signal(sigs[k], on_crash);
  for (long i = 0; i < o->n; i++) {
    GenStmt gs;
    gen_next(g, &gs);
    if (gs.new_round || !hr) {
      if (hr) o->ref->close(hr);
      if (ht) o->test->close(ht);
      hr = o->ref->open();
      ht = o->test->open();
      if (!hr || !ht) {
        fprintf(run.out, "diff: cannot open %s\n", hr ? o->test->name : o->ref->name);
        rc = -1;
        break;
      }
      script_clear(&script);
      st->rounds++;
      diverged = 0;
      round_at = 0;
    }
    round_at++;
    st->stmts++;
    if (gs.kind == GEN_QUERY)
      st->queries++;
    else if (gs.kind == GEN_WRITE)
      st->writes++;
    else
      st->ddl++;
    if (diverged) {
      run.skipped++;
      continue;
    }
    if (o->verbose) fprintf(run.out, "[%ld] %s\n", i, gs.sql);
    diff_result_reset(&rr);
    diff_result_reset(&rt);
    crash.sql = gs.sql;
    crash.at = i;
    alarm(DIFF_STMT_TIMEOUT); /* a hang is reported like a crash */
    crash.engine = o->ref->name;
    o->ref->query(hr, gs.sql, &rr);
    crash.engine = o->test->name;
    o->test->query(ht, gs.sql, &rt);
    crash.engine = NULL;
    alarm(0);
    if (gs.kind != GEN_WRITE) rr.changes = rt.changes = 0; /* stale for non-DML */
    st->rows_total += (long)rr.nrow;
    if (gs.kind == GEN_QUERY && !rr.rc && !rr.nrow) st->empty++;
    if (gs.cmp == DIFF_CMP_ORDERED) st->ordered++;
    if (gs.cmp == DIFF_CMP_LOOSE) st->loose++;
    char why[160];
    if (diff_compare(&rr, &rt, gs.cmp, gs.truncated, why, sizeof why)) {
      st->diffs++;
      char key[128];
      if (rt.rc && !rr.rc)
        snprintf(key, sizeof key, "%s error only: %.90s", o->test->name, rt.err);
      else if (rr.rc && !rt.rc)
        snprintf(key, sizeof key, "%s error only: %.90s", o->ref->name, rr.err);
      else
        snprintf(key, sizeof key, "%s: %s", kind_name(gs.kind), why_category(why));
      cause_add(&run, key, i);
      for (int t = 0; t < GT_NTAGS; t++)
        if (gs.tags & (1u << t)) run.tag_count[t]++;
      report(&run, i, round_at, &gs, &rr, &rt, why, &script);
      if (gs.kind != GEN_QUERY) {
        diverged = 1;
        fprintf(run.out, "  (the databases may now differ: the rest of this round is skipped)\n");
      }
      if (o->max_diffs && st->diffs >= o->max_diffs) break;
    } else if (rr.rc && rt.rc) {
      st->both_error++;
      if (rr.xrc != rt.xrc || strcmp(rr.err ? rr.err : "", rt.err ? rt.err : "")) {
        st->msg_diffs++;
        if (msg_printed++ < 10)
          fprintf(run.out,
                  "message or code differs (seed %llu statement %ld): %s\n  %s: (%d) %s\n"
                  "  %s: (%d) %s\n",
                  (unsigned long long)o->seed, i, gs.sql, o->ref->name, rr.xrc, rr.err,
                  o->test->name, rt.xrc, rt.err);
      }
    }
    if (o->eqp && gs.kind == GEN_QUERY && !rr.rc && !rt.rc) {
      eqp_compare(o, hr, ht, gs.sql, st);
      order_compare(&rr, &rt, gs.cmp, st);
    }
    if (gs.kind != GEN_QUERY) script_add(&script, gs.sql);
  }
  st->seconds = now_s() - t0;
  for (int k = 0; k < 6; k++) signal(sigs[k], old_handler[k]);
  crash.script = NULL;
  crash.sql = NULL;
  if (hr) o->ref->close(hr);
  if (ht) o->test->close(ht);
  diff_result_free(&rr);
  diff_result_free(&rt);
  script_clear(&script);
  free(script.s);
  gen_free(g);
  if (st->diffs) {
    FILE *f = run.out;
    qsort(run.cause, (size_t)run.ncause, sizeof run.cause[0], cause_order);
    fprintf(f,
            "\ndifferences by cause (%ld in all; %ld statements skipped after a write "
            "differed):\n",
            st->diffs, run.skipped);
    for (int i = 0; i < run.ncause; i++)
      fprintf(f, "  %6ld  %s  (first: statement %ld)\n", run.cause[i].count, run.cause[i].key,
              run.cause[i].first);
    if (run.minimized) {
      fprintf(f, "hints (of the %d minimized differences, the rewrite that makes them go away):\n",
              run.minimized);
      for (size_t k = 0; k < NPROBES; k++)
        if (run.hint_count[k]) fprintf(f, "  %6ld  %s\n", run.hint_count[k], probes[k].hint);
    }
    fprintf(f, "differences by feature tag of the statement:\n");
    for (int t = 0; t < GT_NTAGS; t++)
      if (run.tag_count[t]) fprintf(f, "  %6ld  %s\n", run.tag_count[t], gen_tag_name(t));
  }
  return rc;
}

/* EXPLAIN QUERY PLAN rows (id, parent, notused, detail) as text: one line
 * per row, indented by its depth (ids differ between engines, the tree and
 * the details must not). Returns a malloc'd string, or NULL. */
static char *eqp_text(const DiffResult *r) {
  if (r->rc || r->ncol < 4) return NULL;
  size_t cap = 64, n = 0;
  char *z = malloc(cap);
  if (!z) return NULL;
  z[0] = 0;
  for (size_t i = 0; i < r->nrow; i++) {
    const DiffValue *row = &r->v[i * (size_t)r->ncol];
    int depth = 0;
    int64_t par = row[1].i;
    for (int guard = 0; par && guard < 64; guard++) { /* climb to the root */
      size_t k = 0;
      while (k < i && r->v[k * (size_t)r->ncol].i != par) k++;
      if (k == i) break;
      depth++;
      par = r->v[k * (size_t)r->ncol + 1].i;
    }
    const char *d = row[3].type == DIFF_TEXT ? row[3].z : "?";
    size_t need = n + (size_t)depth * 2 + strlen(d) + 2;
    if (need >= cap) {
      while (need >= cap) cap *= 2;
      char *nz = realloc(z, cap);
      if (!nz) {
        free(z);
        return NULL;
      }
      z = nz;
    }
    n += (size_t)sprintf(z + n, "%*s%s\n", depth * 2, "", d);
  }
  return z;
}

/* opts.eqp: for an unordered query whose rows agreed as a multiset, count
 * whether they also came in the reference's order (SQLite's row order where
 * SQL leaves it open: scans, join order, hash vs sort). */
static void order_compare(const DiffResult *ref, const DiffResult *got, int mode, DiffStats *st) {
  if (mode == DIFF_CMP_ORDERED || ref->nrow < 2 || ref->nrow != got->nrow || !ref->ncol ||
      ref->ncol != got->ncol)
    return;
  char why[16];
  if (diff_compare(ref, got, mode, 0, why, sizeof why)) return;
  st->order_total++;
  for (size_t k = 0; k < ref->nrow; k++)
    if (!row_eq(ref, k, got, k, 0)) return;
  st->order_same++;
}

/* EXPLAIN QUERY PLAN of q on engine e (handle h) into a malloc'd text, or
 * NULL; noauto: planned with automatic_index=OFF, the setting put back
 * after. */
static char *eqp_run(const DiffEngine *e, void *h, const char *q, int noauto) {
  DiffResult r;
  int was_on = 0;
  if (noauto) {
    diff_result_init(&r);
    e->query(h, "PRAGMA automatic_index", &r);
    was_on = !r.rc && r.nrow == 1 && r.ncol == 1 && r.v[0].type == DIFF_INTEGER && r.v[0].i;
    diff_result_free(&r);
    if (was_on) e->exec(h, "PRAGMA automatic_index=OFF");
  }
  diff_result_init(&r);
  e->query(h, q, &r);
  if (was_on) e->exec(h, "PRAGMA automatic_index=ON");
  char *z = eqp_text(&r);
  diff_result_free(&r);
  return z;
}

/* opts.eqp: run EXPLAIN QUERY PLAN of sql on both engines and count. The
 * reference runs with automatic_index=OFF (engine_sqlite.c), so the engine
 * under test is planned with the same setting for the comparison that
 * counts (eqp_same), the setting put back afterwards (its results are still
 * computed with automatic indexes); eqp_same_auto counts the plans equal
 * with its automatic indexes as it runs the queries. */
static void eqp_compare(const DiffOptions *o, void *hr, void *ht, const char *sql, DiffStats *st) {
  size_t len = strlen(sql);
  char *q = malloc(len + 24);
  if (!q) return;
  memcpy(q, "EXPLAIN QUERY PLAN ", 19);
  memcpy(q + 19, sql, len + 1);
  char *ta = eqp_run(o->ref, hr, q, 0);
  char *tb = eqp_run(o->test, ht, q, 0);
  char *nb = eqp_run(o->test, ht, q, 1);
  if (ta && tb && nb) {
    st->eqp_total++;
    if (!strcmp(ta, tb)) st->eqp_same_auto++;
    if (!strcmp(ta, nb))
      st->eqp_same++;
    else if (o->eqp > 1)
      fprintf(o->out ? o->out : stderr, "EQP differs: %s\n%s--\n%s", sql, ta, nb);
  }
  free(ta);
  free(tb);
  free(nb);
  free(q);
}

void diff_stats_print(FILE *f, const DiffStats *s) {
  fprintf(f,
          "%ld statements in %ld rounds (%ld queries, %ld writes, %ld ddl/txn; %ld ordered, %ld "
          "canonical, %ld empty), %ld rows, %ld both-error (%ld message/code differences), %ld "
          "differences, %.1f s\n",
          s->stmts, s->rounds, s->queries, s->writes, s->ddl, s->ordered, s->loose, s->empty,
          s->rows_total, s->both_error, s->msg_diffs, s->diffs, s->seconds);
  if (s->eqp_total)
    fprintf(f,
            "EXPLAIN QUERY PLAN equal to the reference's for %ld of %ld queries (%.1f%%), both "
            "with automatic_index=OFF; %ld (%.1f%%) with Shale's automatic indexes on\n",
            s->eqp_same, s->eqp_total, 100.0 * (double)s->eqp_same / (double)s->eqp_total,
            s->eqp_same_auto, 100.0 * (double)s->eqp_same_auto / (double)s->eqp_total);
  if (s->order_total)
    fprintf(f, "unordered row order equal to the reference's for %ld of %ld queries (%.1f%%)\n",
            s->order_same, s->order_total, 100.0 * (double)s->order_same / (double)s->order_total);
}
