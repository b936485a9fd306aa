/*
 * gen.c -- the differential tester's seeded SQL generator (see gen.h).
 *
 * Owns: the schema model of the current round (GTab/GCol), the scopes of the
 * statement being written (Scope/Src/SCol) and the value "props" that keep
 * every result deterministic (invariant 2 of gen.h).
 *
 * Invariants:
 *  1. Every random choice goes through rnd() on the generator's own state.
 *  2. Props.k is the value class of an expression: K_NONE (only NULL),
 *     K_TEXT (text/blob only), K_INT (never an integral real), K_REAL (never
 *     an integer), K_MIX (may hold both 2 and 2.0). Props.coll is set when a
 *     non-BINARY collation may be attached. An expression is "safe" (its
 *     equal values are identical) when k != K_MIX and !coll; only safe
 *     expressions are de-duplicated (DISTINCT, GROUP BY output, UNION, ...)
 *     in strict comparisons, in subqueries, or fed to min()/max().
 *  3. Columns marked wide hold extreme integers and inexact reals; they
 *     never reach sum()/avg()/total() or abs(), so no aggregate or function
 *     result depends on the order rows are visited.
 *  4. Unique, primary-key and INTEGER PRIMARY KEY columns are only ever
 *     updated to constants, and INSERT ... SELECT targets only tables
 *     without an INTEGER PRIMARY KEY, so writes do not depend on visit order.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

#define MAXTAB 4
#define MAXCOL 6
#define MAXSRC 8
#define NEST_MAXSRC                                                             \
  6 /* sources of a FROM list with a parenthesized join (row counts stay small) \
     */
#define MAXSCOL 16

enum { AFF_NONE, AFF_TEXT, AFF_NUM, AFF_INT, AFF_REAL };
enum { K_NONE, K_TEXT, K_INT, K_REAL, K_MIX };

typedef struct Buf {
  char *z;
  size_t n, cap;
} Buf;

typedef struct GCol {
  char name[16];
  int aff, coll; /* coll: 0 BINARY, 1 NOCASE, 2 RTRIM */
  int ipk, pk, unique, notnull, wide;
  int any;     /* a STRICT table's ANY column of AFF_NUM: keeps 2 and 2.0 apart */
  int gen;     /* a generated column (never written): 1 VIRTUAL, 2 STORED */
  int indexed; /* named by an index this round (never dropped) */
} GCol;

typedef struct GTab {
  char name[16];
  int ncol, norowid, has_ipk, strict;
  int has_gen; /* has a generated column (its columns are never dropped) */
  int db;      /* 0 main, 1 temp, 2 aux (attach rounds) */
  GCol col[MAXCOL];
} GTab;

typedef struct GVt {
  char name[16];
  int i32, ndim, naux; /* rtree_i32; dimensions 1-3; aux columns p, q */
} GVt;

typedef struct Props {
  int k, coll;
} Props;

typedef struct SCol {
  char name[16];
  Props p;
  int wide;
  int ipk; /* the INTEGER PRIMARY KEY of a table source */
} SCol;

typedef struct Src {
  char alias[16];
  int ncol;
  SCol col[MAXSCOL];
} Src;

typedef struct Scope {
  Src src[MAXSRC];
  int nsrc;
  const struct Scope *outer;
} Scope;

struct DiffGen {
  uint64_t s;
  Buf out;
  int ntab;
  GTab tab[MAXTAB];
  int in_round;   /* statements left in this round */
  int phase;      /* 0 create tables, 1 early indexes, 2 data, 3 late indexes, 4 mixed */
  int phase_left; /* statements left in the phase */
  int next_tab;   /* for phase 0 / 2 */
  int nidx;       /* indexes created this round (names i1..) */
  int txn;        /* 0 none, 1 BEGIN, 2 savepoint too */
  int has_view;   /* v1 exists this round (its columns in view) */
  Src view;
  int nsub; /* subquery alias counter within a statement */
  uint32_t tags;
  uint64_t ws;       /* the window queries' own stream (window_turn) */
  int in_rhs;        /* the next subselect_one is the right side of IN */
  uint64_t fs;       /* the issue-7 feature statements' own stream (feature_*_turn) */
  int nren;          /* RENAME COLUMN targets so far (names r1, r2, ...) */
  int fk;            /* this round: 1 PRAGMA foreign_keys=ON still to come, 2 on */
  int no_order_coll; /* order_all: no COLLATE on the terms */
  uint64_t as;       /* the ATTACH/TEMP statements' own stream (attach rounds) */
  int att;        /* this round attaches ':memory:' AS aux and spreads tables over main/temp/aux */
  int att_pre;    /* attach-round statements written so far before the data */
  int att_tail;   /* attach-round closing statements written so far */
  int trig_tab;   /* the table tr1..tr3 watch (-1: none) */
  uint64_t ns;    /* the parenthesized joins' own stream (nested_joins) */
  int nnest;      /* parenthesized-join alias counter (g1, g2, ...) */
  int nest_right; /* this FROM list has a RIGHT or FULL JOIN so far */
  int nest_noright; /* ... and may get none (USING/NATURAL follow) */
  int nest_free;    /* a join without a condition was written in the parenthesized part */
  int no_real_cast; /* expr: no CAST(... AS REAL/NUMERIC) */
  uint64_t vs;      /* the virtual tables' own stream (vtab_*_turn) */
  int vt;           /* R-Tree tables this round (0-2) */
  int vt_pre;       /* their CREATE and first INSERTs (and triggers) written so far */
  int vt_trig;      /* this round: triggers on a main table write vtab[0] */
  int vt_trig_col;
  GVt vtab[2];
  char tref_buf[2][32];
  int tref_i;
};

static const char *const tag_names[GT_NTAGS] = {
    "join",     "left-join", "subquery",  "correlated", "aggregate", "group-by",    "compound",
    "distinct", "order-by",  "limit",     "cast",       "collate",   "like/glob",   "in",
    "case",     "derived",   "exists",    "function",   "using",     "error",       "conflict",
    "window",   "cte",       "returning", "alter",      "feature",   "nested-join", "vtab"};

const char *gen_tag_name(int i) { return i >= 0 && i < GT_NTAGS ? tag_names[i] : "?"; }

/* ---- buffers and randomness ---- */

static void bgrow(Buf *b, size_t need) {
  if (b->n + need + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + need + 1) cap *= 2;
  char *z = realloc(b->z, cap);
  if (!z) {
    fprintf(stderr, "gen: out of memory\n");
    exit(2);
  }
  b->z = z;
  b->cap = cap;
}

__attribute__((format(printf, 2, 3))) static void bp(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  bgrow(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->z + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

static void bs(Buf *b, const char *s) { bp(b, "%s", s); }

/* Insert s at byte offset at of b. */
static void binsert(Buf *b, size_t at, const char *s) {
  size_t n = strlen(s);
  bgrow(b, n);
  memmove(b->z + at + n, b->z + at, b->n - at + 1);
  memcpy(b->z + at, s, n);
  b->n += n;
}

static uint64_t rnd64(DiffGen *g) {
  g->s ^= g->s >> 12;
  g->s ^= g->s << 25;
  g->s ^= g->s >> 27;
  return g->s * 2685821657736338717ULL;
}

/* Uniform in [0, n). */
static int rnd(DiffGen *g, int n) { return n <= 1 ? 0 : (int)((rnd64(g) >> 33) % (uint64_t)n); }
/* 1 with probability pct percent. */
static int ch(DiffGen *g, int pct) { return rnd(g, 100) < pct; }
static const char *pick(DiffGen *g, const char *const *a, int n) { return a[rnd(g, n)]; }
#define PICK(g, a) pick(g, a, (int)(sizeof(a) / sizeof((a)[0])))

/* ---- attach rounds: choices from their own stream (g->as), so the other
 * streams of every seed stay what they were ---- */
static int ach(DiffGen *g, int pct) {
  uint64_t main_s = g->s;
  g->s = g->as;
  int r = ch(g, pct);
  g->as = g->s;
  g->s = main_s;
  return r;
}
static int arnd(DiffGen *g, int n) {
  uint64_t main_s = g->s;
  g->s = g->as;
  int r = rnd(g, n);
  g->as = g->s;
  g->s = main_s;
  return r;
}
static const char *const db_names[] = {"main", "temp", "aux"};

/* A table's name for FROM / INSERT / UPDATE / DELETE: in attach rounds
 * sometimes qualified with its database (names are unique over all three). */
static const char *tref(DiffGen *g, const GTab *t) {
  if (!g->att || !ach(g, 50)) return t->name;
  char *z = g->tref_buf[g->tref_i++ & 1];
  snprintf(z, sizeof g->tref_buf[0], "%s.%s", db_names[t->db], t->name);
  return z;
}

static int kjoin(int a, int b) {
  if (a == K_NONE) return b;
  if (b == K_NONE) return a;
  if (a == b) return a;
  if (a == K_TEXT) return b;
  if (b == K_TEXT) return a;
  return K_MIX;
}

static Props pjoin(Props a, Props b) {
  Props r = {kjoin(a.k, b.k), a.coll || b.coll};
  return r;
}

static int psafe(Props p) { return p.k != K_MIX && !p.coll; }

static const Props P_INT = {K_INT, 0}, P_TEXT = {K_TEXT, 0}, P_REAL = {K_REAL, 0},
                   P_MIX = {K_MIX, 0}, P_NULL = {K_NONE, 0};

/* ---- literals ---- */

static const char *const texts[] = {
    "'abc'",      "'ABC'",      "'Abc'", "'abc '", "'a'",   "'A'",    "'b'",   "'B'",
    "''",         "'  '",       "'12'",  "'12.0'", "'1e3'", "'0x1A'", "'-0'",  "'+5'",
    "'12abc'",    "'3.25'",     "'-7'",  "' 4'",   "'b%c'", "'a_c'",  "'xyz'", "'x''y'",
    "'\xc3\xa9'", "'\xc3\x89'", "'b '",  "'10'",   "'2'"};
static const char *const wide_texts[] = {"'9223372036854775808'", "'1e400'",
                                         "'-9223372036854775809'", "'0.1'", "'1.0e-5'"};
static const char *const blobs[] = {"x''", "x'00'", "x'616263'", "x'3132'", "x'ff'", "x'41'"};
static const char *const extremes[] = {
    "9223372036854775807", "-9223372036854775808", "4294967296", "-4294967297",
    "9007199254740993",    "-9223372036854775807", "2147483648"};
static const char *const wide_reals[] = {"0.1",
                                         "1e300",
                                         "-2.5e-5",
                                         "1.7976931348623157e308",
                                         "3.141592653589793",
                                         "1e18",
                                         "9.2233720368547758e18",
                                         "-0.0",
                                         "1e-300",
                                         "123456789.123"};

/* A literal; narrow: no extremes or inexact reals. */
static Props lit(DiffGen *g, Buf *b, int narrow) {
  int r = rnd(g, 100);
  if (r < 8) {
    bs(b, "NULL");
    return P_NULL;
  }
  if (r < 45) {
    bp(b, "%d", rnd(g, 36) - 5);
    return P_INT;
  }
  if (r < 52 && !narrow) {
    bs(b, PICK(g, extremes));
    return P_INT;
  }
  if (r < 62) {
    int q = rnd(g, 160) - 40;
    bp(b, "%.2f", q / 4.0);
    return P_REAL;
  }
  if (r < 66 && !narrow) {
    bs(b, PICK(g, wide_reals));
    return P_REAL;
  }
  if (r < 92) {
    bs(b, PICK(g, texts));
    return P_TEXT;
  }
  bs(b, PICK(g, blobs));
  return P_TEXT;
}

/* A value to store in column c. */
static void colval(DiffGen *g, Buf *b, const GCol *c) {
  if (c->ipk) {
    if (ch(g, 15))
      bs(b, "NULL");
    else
      bp(b, "%d", rnd(g, 45) - 3);
    return;
  }
  if (ch(g, c->pk ? 2 : 14)) {
    bs(b, "NULL");
    return;
  }
  int r = rnd(g, 100);
  /* Bias toward the declared affinity, but store every type anywhere. */
  int bias = c->aff == AFF_TEXT ? 0 : c->aff == AFF_REAL ? 1 : c->aff == AFF_NONE ? 2 : 3;
  if (r < 40) r = bias == 0 ? 70 : bias == 1 ? 45 : bias == 2 ? rnd(g, 100) : 10;
  if (r < 30) {
    bp(b, "%d", c->unique || c->pk ? rnd(g, 30) - 5 : rnd(g, 12) - 2);
  } else if (r < 38 && c->wide) {
    bs(b, PICK(g, extremes));
  } else if (r < 52) {
    bp(b, "%.2f", (rnd(g, 48) - 8) / 4.0);
  } else if (r < 58 && c->wide) {
    bs(b, PICK(g, wide_reals));
  } else if (r < 62 && c->wide) {
    bs(b, PICK(g, wide_texts));
  } else if (r < 92) {
    bs(b, PICK(g, texts));
  } else {
    bs(b, PICK(g, blobs));
  }
}

/* ---- schema ---- */

static const char *const colnames[] = {"a", "b", "c", "d", "e", "f"};

static void decltype_of(DiffGen *g, int aff, Buf *b) {
  static const char *const ti[] = {"INTEGER", "INT", "BIGINT", "TINYINT"};
  static const char *const tt[] = {"TEXT", "VARCHAR(10)", "CLOB", "CHARACTER(3)"};
  static const char *const tn[] = {"", "BLOB", "ANY"};
  static const char *const tr[] = {"REAL", "DOUBLE", "FLOAT"};
  static const char *const tm[] = {"NUMERIC", "DECIMAL(10,2)", "BOOLEAN", "DATE"};
  switch (aff) {
    case AFF_INT:
      bs(b, PICK(g, ti));
      break;
    case AFF_TEXT:
      bs(b, PICK(g, tt));
      break;
    case AFF_NONE:
      bs(b, PICK(g, tn));
      break;
    case AFF_REAL:
      bs(b, PICK(g, tr));
      break;
    default:
      bs(b, PICK(g, tm));
      break;
  }
}

/* STRICT tables take only INT, INTEGER, REAL, TEXT, BLOB and ANY. */
static void strict_decltype_of(DiffGen *g, int aff, Buf *b) {
  static const char *const ti[] = {"INTEGER", "INT"};
  static const char *const tn[] = {"BLOB", "ANY"};
  switch (aff) {
    case AFF_INT:
      bs(b, PICK(g, ti));
      break;
    case AFF_TEXT:
      bs(b, "TEXT");
      break;
    case AFF_NONE:
      bs(b, PICK(g, tn));
      break;
    case AFF_REAL:
      bs(b, "REAL");
      break;
    default:
      bs(b, "ANY");
      break;
  }
}

static void gen_create_table(DiffGen *g, int ti, Buf *b) {
  GTab *t = &g->tab[ti];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "t%d", ti + 1);
  t->ncol = 2 + rnd(g, 4);
  int used = 0;
  for (int i = 0; i < t->ncol; i++) {
    GCol *c = &t->col[i];
    int k;
    do k = rnd(g, 6);
    while (used & (1 << k));
    used |= 1 << k;
    snprintf(c->name, sizeof c->name, "%s", colnames[k]);
    c->aff = rnd(g, 5);
    c->wide = ch(g, 30);
  }
  t->norowid = ch(g, 20);
  t->strict = ch(g, 12);
  int pkcols = 0;
  if (t->norowid) {
    pkcols = 1 + (t->ncol > 2 && ch(g, 30));
    for (int i = 0; i < pkcols; i++) t->col[i].pk = 1;
  } else if (ch(g, 35)) {
    t->col[0].ipk = 1;
    t->col[0].aff = AFF_INT;
    t->col[0].wide = 0;
    t->has_ipk = 1;
  } else if (ch(g, 15)) {
    t->col[0].pk = 1;
    pkcols = 1;
  }
  /* issue-7 choices come from the feature stream (the main one stays) */
  uint64_t main_s = g->s;
  g->s = g->fs;
  int autoinc = t->has_ipk && ch(g, 30);
  int gen = t->ncol < MAXCOL && ch(g, 20);
  int gsrc = rnd(g, t->ncol), gform = rnd(g, 5), gstored = ch(g, 40), gshort = ch(g, 50);
  /* a foreign key: one plain column referencing an earlier table's key */
  Buf fkc = {0};
  int fkcol = -1;
  if (g->fk && ti > 0 && ch(g, 70)) {
    const GTab *pt = &g->tab[rnd(g, ti)];
    int pc = -1, npk = 0;
    for (int i = 0; i < pt->ncol; i++) npk += pt->col[i].pk;
    for (int i = 0; i < pt->ncol && pc < 0; i++)
      if (pt->col[i].ipk || (pt->col[i].pk && npk == 1) || pt->col[i].unique) pc = i;
    int from = rnd(g, t->ncol);
    for (int i = 0; i < t->ncol && fkcol < 0; i++) {
      const GCol *c = &t->col[(from + i) % t->ncol];
      /* SQLite 3.40.1 finds no INTEGER PRIMARY KEY parent for a REAL
       * child value (9.0 never matches 9; seed 11) */
      if (pc >= 0 && pt->col[pc].ipk && c->aff == AFF_REAL) continue;
      if (!c->ipk && !c->pk) fkcol = (from + i) % t->ncol;
    }
    if (pc >= 0 && fkcol >= 0) {
      bp(&fkc, " REFERENCES %s", pt->name);
      if (!pt->col[pc].ipk || ch(g, 50)) bp(&fkc, "(%s)", pt->col[pc].name);
      static const char *const act[] = {"CASCADE", "SET NULL", "SET DEFAULT", "RESTRICT",
                                        "NO ACTION"};
      if (ch(g, 60)) bp(&fkc, " ON DELETE %s", PICK(g, act));
      if (ch(g, 40)) bp(&fkc, " ON UPDATE %s", PICK(g, act));
      if (ch(g, 20)) bs(&fkc, " DEFERRABLE INITIALLY DEFERRED");
      t->col[fkcol].indexed = 1; /* never dropped */
    } else {
      fkcol = -1;
    }
  }
  g->fs = g->s;
  g->s = main_s;
  if (g->att) {
    int r = arnd(g, 10);
    t->db = r < 4 ? 0 : r < 7 ? 1 : 2;
  }
  if (t->db == 1 && ach(g, 50))
    bp(b, "CREATE TEMP TABLE %s(", t->name);
  else if (t->db)
    bp(b, "CREATE TABLE %s.%s(", db_names[t->db], t->name);
  else
    bp(b, "CREATE TABLE %s(", t->name);
  for (int i = 0; i < t->ncol; i++) {
    GCol *c = &t->col[i];
    if (i) bs(b, ", ");
    bp(b, "%s", c->name);
    if (c->ipk) {
      bs(b, autoinc ? " INTEGER PRIMARY KEY AUTOINCREMENT" : " INTEGER PRIMARY KEY");
      continue;
    }
    Buf d = {0};
    if (t->strict)
      strict_decltype_of(g, c->aff, &d);
    else
      decltype_of(g, c->aff, &d);
    if (d.n) bp(b, " %s", d.z);
    free(d.z);
    c->any = t->strict && c->aff == AFF_NUM;
    if (c->aff != AFF_NONE || ch(g, 30)) {
      int r = rnd(g, 100);
      c->coll = r < 15 ? 1 : r < 22 ? 2 : 0;
      if (c->coll)
        bs(b, c->coll == 1 ? " COLLATE NOCASE" : " COLLATE RTRIM");
      else if (r < 26)
        bs(b, " COLLATE BINARY");
    }
    if (!c->pk && ch(g, 12)) {
      c->unique = 1;
      bs(b, " UNIQUE");
    }
    if (!c->pk && ch(g, 6)) {
      c->notnull = 1;
      bs(b, " NOT NULL");
    }
    if (ch(g, 8)) bp(b, " DEFAULT %d", rnd(g, 5));
    if (i == fkcol) bs(b, fkc.z);
  }
  free(fkc.z);
  if (gen) {
    /* a generated column over one earlier column, with a deterministic
     * expression whose value class is known */
    const GCol *src = &t->col[gsrc];
    int k = 0; /* the first name no column has (used: the names taken) */
    while (k < 6 && (used & (1 << k))) k++;
    GCol *c = &t->col[t->ncol];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", colnames[k]);
    c->gen = gstored ? 2 : 1; /* 2: STORED */
    if (gform == 4 && (src->wide || src->ipk)) gform = 0;
    static const char *const forms[] = {"length(%s)", "typeof(%s)", "(%s || 'g')", "(%s IS NULL)",
                                        "(%s + 1)"};
    static const char *const sdecl[] = {" INT", " TEXT", " TEXT", " INTEGER", " ANY"};
    static const char *const decl[] = {" INT", "", " TEXT", "", ""};
    static const int aff[] = {AFF_INT, AFF_TEXT, AFF_TEXT, AFF_INT, AFF_NONE};
    c->aff = aff[gform];
    /* (x || 'g') of an extreme value reads as a huge number: wide too */
    c->wide = gform == 2 && src->wide;
    bp(b, ", %s%s ", c->name, t->strict ? sdecl[gform] : decl[gform]);
    if (!gshort) bs(b, "GENERATED ALWAYS ");
    bs(b, "AS (");
    bp(b, forms[gform], src->name);
    bs(b, gstored ? ") STORED" : ch(g, 50) ? ") VIRTUAL" : ")");
    t->ncol++;
    t->has_gen = 1;
  }
  if (pkcols) {
    bs(b, ", PRIMARY KEY(");
    for (int i = 0; i < pkcols; i++) bp(b, "%s%s", i ? ", " : "", t->col[i].name);
    bs(b, ")");
  }
  bs(b, ")");
  if (t->norowid) bs(b, " WITHOUT ROWID");
  if (t->strict) bs(b, t->norowid ? ", STRICT" : " STRICT");
}

static Props col_props(const GCol *c) {
  Props p;
  p.k = c->any               ? K_MIX
        : c->aff == AFF_TEXT ? K_TEXT
        : c->aff == AFF_REAL ? K_REAL
        : c->aff == AFF_NONE ? K_MIX
                             : K_INT;
  p.coll = c->coll != 0;
  return p;
}

static void src_from_table(Src *s, const GTab *t, const char *alias) {
  snprintf(s->alias, sizeof s->alias, "%s", alias);
  s->ncol = t->ncol;
  for (int i = 0; i < t->ncol; i++) {
    memcpy(s->col[i].name, t->col[i].name, sizeof s->col[i].name);
    s->col[i].p = col_props(&t->col[i]);
    s->col[i].wide = t->col[i].wide;
    s->col[i].ipk = t->col[i].ipk;
  }
}

static void gen_index(DiffGen *g, Buf *b) {
  GTab *t = &g->tab[rnd(g, g->ntab)];
  int uniq = ch(g, 15);
  if (t->db == 2 || (t->db == 1 && ach(g, 50)))
    bp(b, "CREATE %sINDEX %s.i%d ON %s(", uniq ? "UNIQUE " : "", db_names[t->db], ++g->nidx,
       t->name);
  else
    bp(b, "CREATE %sINDEX i%d ON %s(", uniq ? "UNIQUE " : "", ++g->nidx, t->name);
  int n = 1 + (t->ncol > 1 && ch(g, 40)) + (t->ncol > 2 && ch(g, 15));
  /* no VIRTUAL generated column: after ANALYZE SQLite 3.40.1 probes an
   * index on one through a Bloom filter that drops every match (seed 1;
   * FINDINGS.md, "Not Shale's") */
  int used = 0, avail = t->ncol;
  for (int i = 0; i < t->ncol; i++)
    if (t->col[i].gen == 1) used |= 1 << i, avail--;
  if (n > avail) n = avail;
  for (int i = 0; i < n; i++) {
    int k;
    do k = rnd(g, t->ncol);
    while (used & (1 << k));
    used |= 1 << k;
    /* Whether or not the index gets built, its columns are now treated as
     * unique: updates set them to constants only (invariant 4). */
    if (uniq) t->col[k].unique = 1;
    t->col[k].indexed = 1;
    if (i) bs(b, ", ");
    bs(b, t->col[k].name);
    if (ch(g, 12)) bs(b, ch(g, 50) ? " COLLATE NOCASE" : " COLLATE BINARY");
    /* SQLite 3.40.1 answers "x IN (SELECT c ...)" wrongly from an index
     * whose first column is c DESC: NOT IN misses the NULLs in c, and with
     * "SELECT c COLLATE NOCASE" against an indexed x matches go missing
     * (FINDINGS.md, "Not Shale's"): an index's first column stays ASC. */
    if (ch(g, 20) && i) bs(b, " DESC");
  }
  bs(b, ")");
  if (ch(g, 15)) {
    const GCol *c = &t->col[rnd(g, t->ncol)];
    if (ch(g, 50))
      bp(b, " WHERE %s IS NOT NULL", c->name);
    else
      bp(b, " WHERE %s > %d", c->name, rnd(g, 6));
  }
}

/* ---- expressions ---- */

#define M_AGG 1    /* aggregates allowed (select list / HAVING of an aggregate query) */
#define M_NARROW 2 /* inside an aggregate argument: narrow columns, exact arithmetic */
/* The result column of an IN subquery: no COLLATE. SQLite 3.40.1 answers
 * "x IN (SELECT c COLLATE BINARY ...)" from an index on x with another
 * collation and returns the rows of x twice (FINDINGS.md, "Not Shale's"). */
#define M_NOCOLL 4

static Props expr(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode);
static Props bool_expr(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode);
static void subselect_one(DiffGen *g, Buf *b, const Scope *outer, int safe_needed, Props *out);

/* A column reference from the scope (or, sometimes, an outer scope). */
static Props colref(DiffGen *g, Buf *b, const Scope *sc, int narrow, int *wide) {
  const Scope *use = sc;
  if (sc->outer && ch(g, 25)) {
    use = sc->outer;
    g->tags |= GT_CORR;
  }
  for (int tries = 0; tries < 8; tries++) {
    const Src *s = &use->src[rnd(g, use->nsrc)];
    const SCol *c = &s->col[rnd(g, s->ncol)];
    if (narrow && (c->wide || c->p.k == K_MIX)) continue;
    bp(b, "%s.%s", s->alias, c->name);
    if (wide) *wide = c->wide;
    return c->p;
  }
  if (wide) *wide = 0;
  return lit(g, b, 1);
}

static void like_pattern(DiffGen *g, Buf *b, int glob) {
  static const char *const lp[] = {"'a%'", "'%b%'", "'A_'", "'1%'",   "'%'",     "'_'",
                                   "'%c'", "'ab%'", "'%1'", "'x''%'", "'b\\%%'", "''"};
  static const char *const gp[] = {"'a*'", "'*b*'",   "'A?'", "'[a-c]*'", "'*'",
                                   "'?'",  "'[^a]*'", "'1*'", "'*[0-9]'", "'ab*'"};
  bs(b, glob ? PICK(g, gp) : PICK(g, lp));
}

/* A safe-column reference (for min/max and DISTINCT in subqueries), or a
 * literal when the scope has none. */
static Props safe_colref(DiffGen *g, Buf *b, const Scope *sc) {
  for (int tries = 0; tries < 10; tries++) {
    const Src *s = &sc->src[rnd(g, sc->nsrc)];
    const SCol *c = &s->col[rnd(g, s->ncol)];
    if (!psafe(c->p)) continue;
    bp(b, "%s.%s", s->alias, c->name);
    return c->p;
  }
  bp(b, "%d", rnd(g, 5));
  return P_INT;
}

/* An aggregate call (over sc's sources). Its arguments never reference an
 * outer query: that would make it an aggregate of the outer query. */
static Props agg_call(DiffGen *g, Buf *b, const Scope *outer_sc) {
  g->tags |= GT_AGG;
  Scope local = *outer_sc;
  local.outer = NULL;
  const Scope *sc = &local;
  int r = rnd(g, 100);
  if (r < 18) {
    bs(b, "count(*)");
    return P_INT;
  }
  if (r < 28) {
    bs(b, ch(g, 30) ? "count(DISTINCT " : "count(");
    expr(g, b, sc, 1, 0);
    bs(b, ")");
    return P_INT;
  }
  if (r < 58) {
    static const char *const fn[] = {"sum", "total", "avg"};
    const char *f = PICK(g, fn);
    bp(b, "%s(", f);
    expr(g, b, sc, rnd(g, 2), M_NARROW);
    bs(b, ")");
    return f[0] == 's' ? P_MIX : P_REAL;
  }
  if (r < 82) {
    bs(b, ch(g, 50) ? "min(" : "max(");
    Props p = safe_colref(g, b, sc);
    bs(b, ")");
    return p;
  }
  /* length() of text stops at a NUL (x'00' values): measure bytes. */
  bs(b, "length(CAST(group_concat(");
  if (ch(g, 25)) {
    bs(b, "DISTINCT ");
    safe_colref(g, b, sc);
  } else {
    expr(g, b, sc, 1, 0);
    if (ch(g, 30)) bs(b, ", '-'");
  }
  bs(b, ") AS BLOB))");
  return P_INT;
}

static const char *const cmpops[] = {"=",
                                     "==",
                                     "!=",
                                     "<>",
                                     "<",
                                     "<=",
                                     ">",
                                     ">=",
                                     "IS",
                                     "IS NOT",
                                     "=",
                                     "<",
                                     "IS NOT DISTINCT FROM",
                                     "IS DISTINCT FROM"};

/* 1 if b[from..] is exactly "alias.col" naming a column in scope. SQLite
 * 3.40.1 applies its LIKE optimization to an INTEGER PRIMARY KEY as a rowid
 * range, or to a column through a NOCASE index, and in a LEFT JOIN's ON
 * clause that drops the left rows that find no match (`t1 AS a LEFT JOIN t1
 * AS b ON b.ipk LIKE 'a%'` returns no row; the same with GLOB, or `+b.ipk`,
 * is right): the LIKE operand then gets a unary + (FINDINGS.md, "Not
 * Shale's"). */
static int like_ipk(const Buf *b, size_t from, const Scope *sc) {
  const char *z = b->z + from;
  /* also "(alias.col COLLATE X)" (seed 8) */
  int paren = z[0] == '(';
  if (paren) z++;
  for (const Scope *s = sc; s; s = s->outer)
    for (int i = 0; i < s->nsrc; i++) {
      size_t na = strlen(s->src[i].alias);
      if (strncmp(z, s->src[i].alias, na) || z[na] != '.') continue;
      /* seed 10 found the same with a NOCASE index on any column: every
       * column now gets the + */
      for (int c = 0; c < s->src[i].ncol; c++) {
        const char *nm = s->src[i].col[c].name, *rest = z + na + 1;
        size_t nl = strlen(nm);
        if (strncmp(rest, nm, nl)) continue;
        if (!paren && !rest[nl]) return 1;
        if (paren && !strncmp(rest + nl, " COLLATE ", 9)) return 1;
      }
    }
  return 0;
}

static Props bool_expr(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode) {
  int r = rnd(g, 100);
  if (depth <= 0) r = rnd(g, 40);
  if (r < 28) {
    expr(g, b, sc, depth - 1, mode);
    const char *op = PICK(g, cmpops);
    bp(b, " %s ", op);
    size_t at = b->n;
    expr(g, b, sc, depth - 1, mode);
    /* SQLite 3.40.1 folds a constant "(x IS [NOT] NULL)" on the right of
     * IS [NOT] [DISTINCT FROM] into TRUE/FALSE inside a window query and
     * then reads the IS as a truth test (FINDINGS.md, "Not Shale's"). */
    if (!strncmp(op, "IS", 2) && b->z[at] == '(' && b->n - at >= 5 &&
        !strcmp(b->z + b->n - 5, "NULL)"))
      binsert(b, at, "+");
  } else if (r < 34) {
    expr(g, b, sc, depth - 1, mode);
    bs(b, ch(g, 50) ? " IS NULL" : ch(g, 50) ? " IS NOT NULL" : " NOTNULL");
  } else if (r < 40) {
    g->tags |= GT_IN;
    expr(g, b, sc, depth - 1, mode);
    bs(b, ch(g, 20) ? " NOT IN (" : " IN (");
    int n = ch(g, 4) ? 0 : 1 + rnd(g, 4); /* "IN ()" is SQLite's too */
    for (int i = 0; i < n; i++) {
      if (i) bs(b, ", ");
      if (ch(g, 80))
        lit(g, b, 0);
      else
        expr(g, b, sc, 0, mode);
    }
    bs(b, ")");
  } else if (r < 48) {
    expr(g, b, sc, depth - 1, mode);
    bs(b, ch(g, 15) ? " NOT BETWEEN " : " BETWEEN ");
    expr(g, b, sc, 0, mode);
    bs(b, " AND ");
    expr(g, b, sc, 0, mode);
  } else if (r < 54) {
    g->tags |= GT_LIKE;
    int glob = ch(g, 35);
    size_t at = b->n;
    expr(g, b, sc, depth - 1, mode);
    if (!glob && like_ipk(b, at, sc)) binsert(b, at, "+");
    bs(b, ch(g, 15) ? " NOT" : "");
    bs(b, glob ? " GLOB " : " LIKE ");
    like_pattern(g, b, glob);
  } else if (r < 64) {
    bs(b, "(");
    bool_expr(g, b, sc, depth - 1, mode);
    bs(b, ch(g, 40) ? " AND " : " OR ");
    bool_expr(g, b, sc, depth - 1, mode);
    bs(b, ")");
  } else if (r < 68) {
    bs(b, "NOT (");
    bool_expr(g, b, sc, depth - 1, mode);
    bs(b, ")");
  } else if (r < 76 && !(mode & M_NARROW)) {
    g->tags |= GT_IN | GT_SUBQ;
    expr(g, b, sc, 0, mode);
    bs(b, ch(g, 20) ? " NOT IN (" : " IN (");
    g->in_rhs = 1;
    subselect_one(g, b, sc, 0, NULL);
    bs(b, ")");
  } else if (r < 83 && !(mode & M_NARROW)) {
    g->tags |= GT_EXISTS | GT_SUBQ;
    bs(b, ch(g, 20) ? "NOT EXISTS (" : "EXISTS (");
    subselect_one(g, b, sc, 0, NULL);
    bs(b, ")");
  } else {
    expr(g, b, sc, depth - 1, mode);
    bp(b, " %s ", PICK(g, cmpops));
    lit(g, b, 0);
  }
  return P_INT;
}

/* A scalar subquery that returns exactly one row: an aggregate. */
static Props scalar_subquery(DiffGen *g, Buf *b, const Scope *outer) {
  g->tags |= GT_SUBQ;
  Scope sc = {.nsrc = 1, .outer = outer};
  char alias[16];
  snprintf(alias, sizeof alias, "s%d", ++g->nsub);
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  src_from_table(&sc.src[0], t, alias);
  bs(b, "(SELECT ");
  Props p = agg_call(g, b, &sc);
  bp(b, " FROM %s AS %s", t->name, alias);
  if (ch(g, 75)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1, 0);
  }
  bs(b, ")");
  p.coll = 1; /* a subquery's collation: be conservative */
  return p;
}

/* A JSON function argument that is never a BLOB nor infinite: (E || '')
 * or E + 0 clamped (JSON text holding Inf is malformed, and whether that
 * error shows depends on which rows the plan evaluates). */
static void json_arg(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode) {
  int text = ch(g, 50);
  bs(b, text ? "(" : "max(min((");
  expr(g, b, sc, depth - 1, mode);
  bs(b, text ? " || '')" : " + 0), 1e300), -1e300)");
}

static Props func_call(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode) {
  g->tags |= GT_FUNC;
  Props p, q;
  int narrow = mode & M_NARROW;
  const char *one = NULL; /* a one-argument function, */
  Props ret = P_TEXT;     /* and its result class */
  switch (rnd(g, 20)) {
    case 0:
      bs(b, "abs(");
      colref(g, b, sc, 1, NULL);
      bs(b, ")");
      return P_MIX;
    case 1:
      bs(b, ch(g, 50) ? "coalesce(" : "ifnull(");
      p = expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      q = expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      p = pjoin(p, q);
      p.coll = 1;
      return p;
    case 2:
      bs(b, "nullif(");
      p = expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      p.coll = 1;
      return p;
    case 3:
      one = "length", ret = P_INT;
      break;
    case 4:
      one = ch(g, 50) ? "lower" : "upper";
      break;
    case 5:
      one = "typeof";
      break;
    case 6:
      if (narrow) {
        one = "length", ret = P_INT;
        break;
      }
      bs(b, "substr(");
      expr(g, b, sc, depth - 1, mode);
      bp(b, ", %d", rnd(g, 5) - 1);
      if (ch(g, 60)) bp(b, ", %d", rnd(g, 4) - 1);
      bs(b, ")");
      return P_TEXT;
    case 7:
      bs(b, "instr(");
      expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      return P_INT;
    case 8:
      if (narrow) {
        one = "lower";
        break;
      }
      bs(b, "replace(");
      expr(g, b, sc, depth - 1, mode);
      bs(b, ", 'a', 'xy')");
      return P_TEXT;
    case 9:
      one = ch(g, 50) ? "trim" : ch(g, 50) ? "ltrim" : "rtrim";
      break;
    case 10: /* hex() text like '362E3235' is a huge number: not in exact sums */
      if (narrow)
        one = "length", ret = P_INT;
      else
        one = "hex";
      break;
    case 11:
      one = "quote";
      break;
    case 12:
      bs(b, "round(");
      expr(g, b, sc, depth - 1, mode);
      if (!narrow && ch(g, 40)) bp(b, ", %d", rnd(g, 3)); /* inexact */
      bs(b, ")");
      return P_REAL;
    case 13:
      bs(b, "iif(");
      bool_expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      p = expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      q = expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      p = pjoin(p, q);
      p.coll = 1;
      return p;
    case 14:
      bs(b, ch(g, 50) ? "min(" : "max(");
      p = expr(g, b, sc, depth - 1, mode);
      bs(b, ", ");
      q = expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      p = pjoin(p, q);
      p.coll = 1;
      return p;
    case 15:
      if (narrow) {
        one = "length", ret = P_INT;
        break;
      }
      return scalar_subquery(g, b, sc);
    case 16:
      bs(b, "likely(");
      p = expr(g, b, sc, depth - 1, mode);
      bs(b, ")");
      return p;
    case 17: { /* date and time functions (never 'now') */
      static const char *const fmts[] = {"%Y-%m-%d", "%H:%M:%f", "%j %W %w", "%s", "%J"};
      static const char *const mods[] = {"'+1 day'",         "'-3 months'", "'start of year'",
                                         "'weekday 2'",      "'unixepoch'", "'+1.5 hours'",
                                         "'start of month'", "'auto'"};
      int k = rnd(g, 4), f = rnd(g, 5);
      /* narrow: no julian day numbers (inexact reals under sum()) */
      if (narrow && k == 3) k = 1;
      if (narrow && f == 4) f = 3;
      if (k == 0)
        bp(b, "strftime('%s', ", fmts[f]);
      else
        bs(b, k == 1 ? "date(" : k == 2 ? "datetime(" : "julianday(");
      expr(g, b, sc, depth - 1, mode);
      if (ch(g, 60)) bp(b, ", %s", mods[rnd(g, 8)]);
      bs(b, ")");
      return k == 3 ? P_REAL : P_TEXT;
    }
    case 18: /* JSON functions; arguments made non-BLOB (a BLOB error would depend on
                which rows the plan evaluates) */
      switch (rnd(g, 5)) {
        case 0:
          bs(b, "json_array(");
          json_arg(g, b, sc, depth, mode);
          bs(b, ", ");
          json_arg(g, b, sc, depth, mode);
          bs(b, ")");
          return P_TEXT;
        case 1:
          bs(b, "json_object('k', ");
          json_arg(g, b, sc, depth, mode);
          bs(b, ")");
          return P_TEXT;
        case 2:
          bs(b, "json_extract(json_array(");
          json_arg(g, b, sc, depth, mode);
          bp(b, "), '$[%d]')", rnd(g, 2));
          return P_MIX;
        case 3:
          bs(b, "json_type(json_quote(");
          json_arg(g, b, sc, depth, mode);
          bs(b, "))");
          return P_TEXT;
        default:
          bs(b, "(json_set('{\"a\":[1,2]}', '$.b', ");
          json_arg(g, b, sc, depth, mode);
          bs(b, ") ->> 'b')");
          return P_MIX;
      }
    default:
      one = "unicode", ret = P_INT;
      break;
  }
  bp(b, "%s(", one);
  expr(g, b, sc, depth - 1, mode);
  bs(b, ")");
  return ret;
}

static Props expr(DiffGen *g, Buf *b, const Scope *sc, int depth, int mode) {
  int narrow = mode & M_NARROW;
  if (depth <= 0 || ch(g, 25)) {
    if (ch(g, 72)) return colref(g, b, sc, narrow, NULL);
    return lit(g, b, narrow);
  }
  int r = rnd(g, 100);
  Props p, q;
  if (r < 22) {
    static const char *const ar[] = {"+", "-", "*", "/", "%"};
    static const char *const exact[] = {"+", "-", "*", "%"}; /* no inexact quotients */
    static const char *const bit[] = {"&", "|", "<<", ">>"};
    bs(b, "(");
    expr(g, b, sc, depth - 1, mode);
    if (narrow)
      bp(b, " %s ", PICK(g, exact));
    else if (ch(g, 15))
      bp(b, " %s ", PICK(g, bit));
    else
      bp(b, " %s ", PICK(g, ar));
    expr(g, b, sc, depth - 1, mode);
    bs(b, ")");
    return P_MIX;
  }
  if (r < 28 && !narrow) {
    bs(b, "(");
    expr(g, b, sc, depth - 1, mode);
    bs(b, " || ");
    expr(g, b, sc, depth - 1, mode);
    bs(b, ")");
    return P_TEXT;
  }
  if (r < 36) {
    g->tags |= GT_CAST;
    static const char *const ty[] = {"INTEGER", "REAL", "TEXT", "NUMERIC", "BLOB", "INT"};
    const char *t = PICK(g, ty);
    if (g->no_real_cast && (t[0] == 'R' || t[0] == 'N')) t = "INT"; /* see nested_joins */
    bs(b, "CAST(");
    p = expr(g, b, sc, depth - 1, mode);
    bp(b, " AS %s)", t);
    /* NUMERIC keeps -0.0 a real but makes 0.0 an integer; REAL makes both
     * 0.0 and -0.0 (equal, printed apart): either way not safe to dedup */
    p.k = t[0] == 'I' ? K_INT : t[0] == 'N' || t[0] == 'R' ? K_MIX : K_TEXT;
    return p;
  }
  if (r < 44) {
    g->tags |= GT_CASE;
    bs(b, "CASE");
    int simple = ch(g, 40);
    if (simple) {
      bs(b, " ");
      expr(g, b, sc, depth - 1, mode);
    }
    int n = 1 + rnd(g, 2);
    p = P_NULL;
    for (int i = 0; i < n; i++) {
      bs(b, " WHEN ");
      if (simple)
        lit(g, b, 0);
      else
        bool_expr(g, b, sc, depth - 1, mode);
      bs(b, " THEN ");
      p = pjoin(p, expr(g, b, sc, depth - 1, mode));
    }
    if (ch(g, 70)) {
      bs(b, " ELSE ");
      p = pjoin(p, expr(g, b, sc, depth - 1, mode));
    }
    bs(b, " END");
    p.coll = 1;
    return p;
  }
  if (r < 50 && !(mode & M_NOCOLL)) {
    g->tags |= GT_COLLATE;
    static const char *const co[] = {"NOCASE", "RTRIM", "BINARY"};
    const char *c = PICK(g, co);
    bs(b, "(");
    p = expr(g, b, sc, depth - 1, mode);
    bp(b, " COLLATE %s)", c);
    p.coll = c[0] != 'B';
    return p;
  }
  if (r < 56) {
    bs(b, ch(g, 60) ? "-" : ch(g, 50) ? "+" : "~");
    char op = b->z[b->n - 1];
    bs(b, "(");
    p = expr(g, b, sc, depth - 1, mode);
    bs(b, ")");
    if (op == '~') return P_INT;
    if (op == '+') return p;
    return P_MIX;
  }
  if (r < 78) return func_call(g, b, sc, depth, mode);
  bs(b, "(");
  p = bool_expr(g, b, sc, depth - 1, mode);
  bs(b, ")");
  (void)q;
  return p;
}

/* ---- subqueries and FROM clauses ---- */

/* SELECT <one column> FROM t AS sN [WHERE ...] for IN / EXISTS. When the
 * result is de-duplicated (DISTINCT, UNION) its column is safe. */
static void subselect_one(DiffGen *g, Buf *b, const Scope *outer, int safe_needed, Props *out) {
  Scope sc = {.nsrc = 1, .outer = outer};
  char alias[16];
  snprintf(alias, sizeof alias, "s%d", ++g->nsub);
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  src_from_table(&sc.src[0], t, alias);
  int nocoll = g->in_rhs;
  g->in_rhs = 0;
  int distinct = ch(g, 15);
  bp(b, "SELECT %s", distinct ? "DISTINCT " : "");
  Props p;
  if (distinct || safe_needed || ch(g, 10))
    p = safe_colref(g, b, &sc);
  else
    p = expr(g, b, &sc, rnd(g, 2), nocoll ? M_NOCOLL : 0);
  bp(b, " FROM %s AS %s", t->name, alias);
  if (ch(g, 70)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
  }
  if (ch(g, 12)) {
    /* A compound of safe columns of one class. */
    Scope s2 = {.nsrc = 1, .outer = outer};
    char a2[16];
    snprintf(a2, sizeof a2, "s%d", ++g->nsub);
    const GTab *t2 = &g->tab[rnd(g, g->ntab)];
    src_from_table(&s2.src[0], t2, a2);
    g->tags |= GT_COMPOUND;
    size_t at = b->n;
    static const char *const ops[] = {"UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
    bp(b, " %s SELECT ", PICK(g, ops));
    Props q = safe_colref(g, b, &s2);
    if (kjoin(p.k, q.k) == K_MIX || p.coll || q.coll) {
      b->n = at; /* classes would mix: drop the compound */
      b->z[b->n] = 0;
    } else {
      bp(b, " FROM %s AS %s", t2->name, a2);
    }
  } else if (ch(g, 8) && psafe(p)) {
    g->tags |= GT_ORDER | GT_LIMIT;
    bp(b, " ORDER BY 1%s LIMIT %d", ch(g, 50) ? " DESC" : "", 1 + rnd(g, 3));
  }
  if (out) *out = p;
}

/* A derived table (SELECT ... ) AS dN, added to sc as a source. */
static void derived(DiffGen *g, Buf *b, Scope *sc) {
  g->tags |= GT_DERIVED | GT_SUBQ;
  Scope in = {.nsrc = 1, .outer = NULL};
  char alias[16];
  snprintf(alias, sizeof alias, "s%d", ++g->nsub);
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  src_from_table(&in.src[0], t, alias);
  Src *d = &sc->src[sc->nsrc++];
  snprintf(d->alias, sizeof d->alias, "d%d", sc->nsrc);
  if (ch(g, 8)) {
    /* (VALUES ...): columns column1, column2, ... */
    int nc = 1 + rnd(g, 2), rows = 1 + rnd(g, 3);
    Props p[2] = {P_NULL, P_NULL};
    bs(b, "(VALUES ");
    for (int r = 0; r < rows; r++) {
      bs(b, r ? ", (" : "(");
      for (int i = 0; i < nc; i++) {
        if (i) bs(b, ", ");
        p[i] = pjoin(p[i], lit(g, b, 0));
      }
      bs(b, ")");
    }
    d->ncol = nc;
    for (int i = 0; i < nc; i++) {
      snprintf(d->col[i].name, sizeof d->col[i].name, "column%d", i + 1);
      d->col[i].p = p[i];
      d->col[i].wide = 1;
    }
    bp(b, ") AS %s", d->alias);
    return;
  }
  int grouped = ch(g, 30);
  int n = 1 + rnd(g, 3);
  bs(b, "(SELECT ");
  if (grouped) {
    g->tags |= GT_GROUP | GT_AGG;
    Buf key = {0};
    Props kp = safe_colref(g, &key, &in);
    bp(b, "%s AS x1, ", key.z);
    Props ap = agg_call(g, b, &in);
    bs(b, " AS x2");
    bp(b, " FROM %s AS %s", t->name, alias);
    if (ch(g, 40)) {
      bs(b, " WHERE ");
      bool_expr(g, b, &in, 1, 0);
    }
    bp(b, " GROUP BY %s", key.z);
    free(key.z);
    d->ncol = 2;
    snprintf(d->col[0].name, sizeof d->col[0].name, "x1");
    d->col[0].p = kp;
    d->col[0].wide = 1;
    snprintf(d->col[1].name, sizeof d->col[1].name, "x2");
    d->col[1].p = ap;
    d->col[1].wide = 1;
  } else {
    int distinct = ch(g, 15);
    if (distinct) bs(b, "DISTINCT ");
    for (int i = 0; i < n; i++) {
      if (i) bs(b, ", ");
      Props p;
      int wide = 1;
      if (distinct)
        p = safe_colref(g, b, &in);
      else if (ch(g, 60))
        p = colref(g, b, &in, 0, &wide);
      else
        p = expr(g, b, &in, 1, 0);
      bp(b, " AS x%d", i + 1);
      snprintf(d->col[i].name, sizeof d->col[i].name, "x%d", i + 1);
      d->col[i].p = p;
      d->col[i].wide = wide;
    }
    d->ncol = n;
    bp(b, " FROM %s AS %s", t->name, alias);
    if (ch(g, 60)) {
      bs(b, " WHERE ");
      bool_expr(g, b, &in, 1 + rnd(g, 2), 0);
    }
  }
  bp(b, ") AS %s", d->alias);
}

/* Names common to the two sources (for USING). */
static int common_cols(const Src *a, const Src *b, const char **names) {
  int n = 0;
  for (int i = 0; i < a->ncol; i++)
    for (int j = 0; j < b->ncol; j++)
      if (!strcmp(a->col[i].name, b->col[j].name)) names[n++] = a->col[i].name;
  return n;
}

/* Count of result columns of "*" (USING columns once). */
typedef struct FromInfo {
  int star_cols;
  Props star_props;
  int nested; /* a parenthesized join was added (nested_joins): its sources are
                 sc->src[sc->nsrc .. nsrc_all), hidden from the main stream */
  int nsrc_all;
  int on_and;           /* an ON clause of its own joins has an extra AND term */
  int cross;            /* its own joins have a CROSS or comma join */
  char star_list[1024]; /* the columns "*" stands for, as alias.col, before it */
} FromInfo;

/* Append the columns of s to fi->star_list, but skip's (a USING/NATURAL
 * join's merged columns: names, n of them). */
static void star_list_add(FromInfo *fi, const Src *s, const char *const *skip, int n) {
  for (int i = 0; i < s->ncol; i++) {
    int k = 0;
    while (k < n && strcmp(skip[k], s->col[i].name)) k++;
    if (k < n) continue;
    size_t len = strlen(fi->star_list);
    snprintf(fi->star_list + len, sizeof fi->star_list - len, "%s%s.%s", len ? ", " : "", s->alias,
             s->col[i].name);
  }
}

static void add_table_src(DiffGen *g, Buf *b, Scope *sc) {
  char alias[16];
  snprintf(alias, sizeof alias, "j%d", sc->nsrc + 1);
  if (g->has_view && ch(g, 12)) {
    Src *v = &sc->src[sc->nsrc++];
    *v = g->view;
    snprintf(v->alias, sizeof v->alias, "%s", alias);
    bp(b, "v1 AS %s", alias);
    return;
  }
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  src_from_table(&sc->src[sc->nsrc++], t, alias);
  bp(b, "%s AS %s", tref(g, t), alias);
}

/* CREATE VIEW v1 AS SELECT ... FROM one table: its columns are modelled
 * like a derived table's. */
static void gen_view(DiffGen *g, Buf *b) {
  Scope in = {.nsrc = 1};
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  src_from_table(&in.src[0], t, "s1");
  g->nsub = 1;
  Src *v = &g->view;
  memset(v, 0, sizeof *v);
  int n = 1 + rnd(g, 3);
  /* a view over a temp or attached table is a TEMP view */
  int temp = t->db || (g->att && ach(g, 40));
  bs(b, temp ? "CREATE TEMP VIEW v1 AS SELECT " : "CREATE VIEW v1 AS SELECT ");
  for (int i = 0; i < n; i++) {
    if (i) bs(b, ", ");
    int wide = 1;
    /* no subqueries (M_NARROW): SQLite 3.40.1 gives a view's constant
     * scalar subquery column its value on a LEFT JOIN's NULL row too (seed
     * 12; FINDINGS.md, "Not Shale's") */
    Props p = ch(g, 65) ? colref(g, b, &in, 0, &wide) : expr(g, b, &in, 1, M_NARROW);
    bp(b, " AS x%d", i + 1);
    snprintf(v->col[i].name, sizeof v->col[i].name, "x%d", i + 1);
    v->col[i].p = p;
    v->col[i].wide = wide;
  }
  v->ncol = n;
  bp(b, " FROM %s AS s1", tref(g, t));
  if (ch(g, 50)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &in, 1, 0);
  }
  g->has_view = 1;
}

/* ---- parenthesized joins (issue 19): every choice from their own stream
 * (g->ns, swapped in by nested_joins), so the other streams stay as they were.
 * A group is "(operand kw operand cond [kw operand cond])" with operands
 * tables, derived tables or groups (two levels deep), kw any join kind
 * (RIGHT and FULL too), cond ON / USING / NATURAL / none. Inner ON clauses
 * see only the group's own sources (and the enclosing query's). ---- */

static const char *const nest_kws[] = {" JOIN ",       " LEFT JOIN ",       " RIGHT JOIN ",
                                       " FULL JOIN ",  " CROSS JOIN ",      ", ",
                                       " INNER JOIN ", " LEFT OUTER JOIN ", " FULL OUTER JOIN "};

/* A join keyword. SQLite 3.40.1 matches a NULL USING key through a
 * UNIQUE index after a FULL JOIN padded the left side (`t3 FULL JOIN (SELECT
 * ...) AS d3 ON ... LEFT JOIN t2 USING (a)` finds t2's row whose a is NULL,
 * `ON t3.a = t2.a` does not; FINDINGS.md, "Not Shale's"): so no USING or
 * NATURAL after a RIGHT/FULL JOIN of the same list. */
static const char *nest_kw(DiffGen *g) {
  const char *kw = PICK(g, nest_kws);
  if (strstr(kw, "RIGHT") || strstr(kw, "FULL")) {
    if (g->nest_noright) return " LEFT JOIN ";
    g->nest_right = 1;
  }
  return kw;
}

/* A scope of the sources idx[0..n) of sc (outer kept). */
static void sub_scope(const Scope *sc, const int *idx, int n, Scope *out) {
  out->nsrc = n;
  out->outer = sc->outer;
  for (int i = 0; i < n; i++) out->src[i] = sc->src[idx[i]];
}

/* The join condition of kw between left sources l[0..nl) and right sources
 * r[0..nr) of sc into cb; *natural set when the caller must write NATURAL
 * before the join keyword. */
static void nest_cond(DiffGen *g, Buf *cb, const Scope *sc, const int *l, int nl, const int *r,
                      int nr, const char *kw, int *natural) {
  *natural = 0;
  /* at most one join without a condition in the parenthesized part (the
   * row counts of cross products grow fast); CROSS and comma joins may
   * have an ON too */
  int cross = kw[1] == 'C' || kw[0] == ',';
  if (!g->nest_free && (cross ? ch(g, 40) : !strcmp(kw, " JOIN ") && ch(g, 6))) {
    g->nest_free = 1;
    return;
  }
  if (nr == 1 && !cross && ch(g, 30) && !g->nest_right) {
    const Src *rs = &sc->src[r[0]];
    const char *names[MAXSCOL * MAXSRC];
    int nc = 0;
    for (int i = 0; i < rs->ncol; i++)
      for (int k = 0; k < nl; k++) {
        const Src *ls = &sc->src[l[k]];
        int hit = 0;
        for (int c = 0; c < ls->ncol; c++)
          if (!strcmp(ls->col[c].name, rs->col[i].name)) hit = 1;
        if (hit) {
          names[nc++] = rs->col[i].name;
          break;
        }
      }
    if (nc) {
      g->tags |= GT_USING;
      if (ch(g, 35)) {
        *natural = 1;
      } else {
        int u = rnd(g, nc);
        bp(cb, " USING (%s", names[u]);
        if (nc > 1 && ch(g, 20)) bp(cb, ", %s", names[(u + 1 + rnd(g, nc - 1)) % nc]);
        bs(cb, ")");
      }
      return;
    }
  }
  const Src *ls = &sc->src[l[rnd(g, nl)]];
  const Src *rs = &sc->src[r[rnd(g, nr)]];
  const SCol *lc = &ls->col[rnd(g, ls->ncol)];
  const SCol *rc = &rs->col[rnd(g, rs->ncol)];
  for (int k = 0; k < 4 && rc->p.k != lc->p.k; k++) rc = &rs->col[rnd(g, rs->ncol)];
  /* an equality (or IS) keeps the joined row counts small: the other-plans
   * engine (optimizations off) ran over 60 s on an inequality chain */
  bp(cb, " ON %s.%s %s %s.%s", ls->alias, lc->name, ch(g, 90) ? "=" : "IS", rs->alias, rc->name);
  if (ch(g, 30)) {
    int all[MAXSRC];
    for (int i = 0; i < nl; i++) all[i] = l[i];
    for (int i = 0; i < nr; i++) all[nl + i] = r[i];
    Scope both;
    sub_scope(sc, all, nl + nr, &both);
    /* SQLite 3.40.1 drops the unmatched rows of a RIGHT/FULL JOIN when an
     * inner join on its left has a constant false ON term (`t2 AS a JOIN t2
     * AS b ON 0 FULL JOIN t1 ON ...`: no row; `ON b.e < 0`: t1's rows;
     * FINDINGS.md, "Not Shale's"): unless no RIGHT/FULL JOIN may follow,
     * the term also reads a column */
    bs(cb, " AND (");
    bool_expr(g, cb, &both, 1, 0);
    if (!g->nest_noright) bp(cb, " OR %s.%s IS NULL", ls->alias, lc->name);
    bs(cb, ")");
  }
}

static void nest_group(DiffGen *g, Buf *b, Scope *sc, int depth);

static void nest_operand(DiffGen *g, Buf *b, Scope *sc, int depth) {
  if (depth < 2 && sc->nsrc <= NEST_MAXSRC - 3 && ch(g, 25))
    nest_group(g, b, sc, depth + 1);
  else if (ch(g, 15))
    derived(g, b, sc);
  else
    add_table_src(g, b, sc);
}

static void range_idx(int lo, int hi, int *idx) {
  for (int i = lo; i < hi; i++) idx[i - lo] = i;
}

/* kw + operand + condition joined to the sources [lo, mid) of sc. */
static void nest_join(DiffGen *g, Buf *b, Scope *sc, int lo, int depth) {
  int mid = sc->nsrc;
  const char *kw = nest_kw(g);
  size_t kwpos = b->n;
  bs(b, kw);
  nest_operand(g, b, sc, depth);
  int l[MAXSRC], r[MAXSRC], natural;
  range_idx(lo, mid, l);
  range_idx(mid, sc->nsrc, r);
  Buf cb = {0};
  nest_cond(g, &cb, sc, l, mid - lo, r, sc->nsrc - mid, kw, &natural);
  if (natural) binsert(b, kwpos + 1, "NATURAL ");
  if (cb.z) bs(b, cb.z);
  free(cb.z);
}

static void nest_group(DiffGen *g, Buf *b, Scope *sc, int depth) {
  int first = sc->nsrc;
  bs(b, "(");
  nest_operand(g, b, sc, depth);
  int n = 1 + ch(g, 30);
  for (int j = 0; j < n && sc->nsrc < NEST_MAXSRC; j++) nest_join(g, b, sc, first, depth);
  bs(b, ")");
  if (ch(g, 15)) bp(b, " AS g%d", ++g->nnest);
}

/* After from_clause's own joins (first_end: where its first source's text
 * ends): sometimes a parenthesized join on the right, one on the left of the
 * first source, or the whole list parenthesized and joined on. */
static void nested_joins(DiffGen *g, Buf *b, Scope *sc, FromInfo *fi, size_t first_end) {
  /* the other streams too stay as they were (tref, expressions and
   * derived tables draw from them) */
  uint64_t main_s = g->s, ws = g->ws, fs = g->fs, as = g->as;
  int main_nsrc = sc->nsrc;
  g->s = g->ns;
  /* SQLite 3.40.1 reads CAST(x AS NUMERIC/REAL) of an integral real back
   * as an integer from a subquery it materializes (9.0 becomes 9), and it
   * materializes parenthesized joins under outer joins, RIGHT/FULL JOIN
   * operands, ... (FINDINGS.md, "Not Shale's", the CTE case): no such
   * casts in or around a parenthesized join */
  int casts = strstr(b->z, " AS NUMERIC)") || strstr(b->z, " AS REAL)");
  g->no_real_cast = 1;
  g->nest_right = g->nest_free = 0;
  /* see nest_cond: the list's own ON terms may be constant */
  g->nest_noright = fi->on_and;
  /* one join without a condition at most (cross products grow fast) */
  if (fi->cross || sc->nsrc > 1) g->nest_free = 1;
  if (ch(g, 20) && sc->nsrc <= NEST_MAXSRC - 3 && !casts) {
    g->tags |= GT_JOIN | GT_NESTED;
    fi->nested = 1; /* "*" is written as star_list: SQLite's nested-FROM rules for its columns */
    int how = rnd(g, 3);
    if (how == 0) {
      nest_join(g, b, sc, 0, 0);
    } else if (how == 1) {
      /* (group) kw <first source> cond <the rest as it was> */
      Buf gb = {0}, cb = {0};
      int gfirst = sc->nsrc;
      /* the list's own joins follow the group */
      if (strstr(b->z, " USING (") || strstr(b->z, "NATURAL ")) g->nest_noright = 1;
      nest_group(g, &gb, sc, 1);
      const char *kw = nest_kw(g);
      int l[MAXSRC], r[1] = {0}, natural;
      range_idx(gfirst, sc->nsrc, l);
      nest_cond(g, &cb, sc, l, sc->nsrc - gfirst, r, 1, kw, &natural);
      if (cb.z) binsert(b, first_end, cb.z);
      Buf pb = {0};
      bs(&pb, gb.z);
      if (natural) bs(&pb, " NATURAL");
      bs(&pb, kw);
      binsert(b, 0, pb.z);
      free(pb.z);
      free(gb.z);
      free(cb.z);
    } else {
      binsert(b, 0, "(");
      bs(b, ")");
      nest_join(g, b, sc, 0, 0);
    }
  }
  g->no_real_cast = 0;
  g->ns = g->s;
  g->s = main_s;
  g->ws = ws;
  g->fs = fs;
  g->as = as;
  /* the main stream's choices (rnd over sc->nsrc) see only its own sources */
  fi->nsrc_all = sc->nsrc;
  if (fi->nested) sc->nsrc = main_nsrc;
}

/* A WHERE term over every source, the parenthesized joins' too (from their
 * stream); where: a WHERE was written already. */
static void nested_where(DiffGen *g, Buf *b, Scope *sc, const FromInfo *fi, int where) {
  if (!fi->nested) return;
  uint64_t main_s = g->s, ws = g->ws, fs = g->fs, as = g->as;
  g->s = g->ns;
  if (ch(g, 70)) {
    int n = sc->nsrc;
    sc->nsrc = fi->nsrc_all;
    bs(b, where ? " AND (" : " WHERE (");
    bool_expr(g, b, sc, 1 + rnd(g, 2), 0);
    bs(b, ")");
    sc->nsrc = n;
  }
  g->ns = g->s;
  g->s = main_s;
  g->ws = ws;
  g->fs = fs;
  g->as = as;
}

static void from_clause(DiffGen *g, Buf *b, Scope *sc, FromInfo *fi) {
  sc->nsrc = 0;
  if (ch(g, 12))
    derived(g, b, sc);
  else
    add_table_src(g, b, sc);
  size_t first_end = b->n;
  fi->star_cols = sc->src[0].ncol;
  fi->star_props = P_NULL;
  fi->nested = 0;
  fi->nsrc_all = 0;
  fi->on_and = fi->cross = 0;
  fi->star_list[0] = 0;
  star_list_add(fi, &sc->src[0], NULL, 0);
  for (int i = 0; i < sc->src[0].ncol; i++)
    fi->star_props = pjoin(fi->star_props, sc->src[0].col[i].p);
  int joins = ch(g, 45) ? 1 + ch(g, 15) : 0;
  for (int j = 0; j < joins; j++) {
    g->tags |= GT_JOIN;
    int r = rnd(g, 100);
    const char *kw = r < 45   ? " JOIN "
                     : r < 55 ? " INNER JOIN "
                     : r < 80 ? " LEFT JOIN "
                     : r < 90 ? " CROSS JOIN "
                              : ", ";
    if (r >= 55 && r < 80) g->tags |= GT_LEFT;
    size_t kwpos = b->n;
    bs(b, kw);
    if (ch(g, 8))
      derived(g, b, sc);
    else
      add_table_src(g, b, sc);
    const Src *rs = &sc->src[sc->nsrc - 1];
    int star = rs->ncol;
    const char *merged[MAXSCOL];
    int nmerged = 0;
    if (kw[1] != 'C' && kw[0] != ',') {
      const char *names[MAXSCOL];
      int nc = common_cols(&sc->src[sc->nsrc - 2], rs, names);
      if (nc && ch(g, 12)) {
        /* NATURAL: every right column whose name is on the left. */
        g->tags |= GT_USING;
        int common = 0;
        for (int i = 0; i < rs->ncol; i++) {
          int found = 0;
          for (int k = 0; k < sc->nsrc - 1 && !found; k++)
            for (int c = 0; c < sc->src[k].ncol; c++)
              if (!strcmp(sc->src[k].col[c].name, rs->col[i].name)) found = 1;
          common += found;
          if (found) merged[nmerged++] = rs->col[i].name;
        }
        star -= common;
        binsert(b, kwpos + 1, "NATURAL ");
      } else if (nc && ch(g, 25)) {
        g->tags |= GT_USING;
        const char *u = names[rnd(g, nc)];
        bp(b, " USING (%s)", u);
        star--;
        merged[nmerged++] = u;
      } else {
        /* ON: mostly an equality between the new source and an earlier one. */
        const Src *ls = &sc->src[rnd(g, sc->nsrc - 1)];
        const SCol *lc = &ls->col[rnd(g, ls->ncol)];
        const SCol *rc = &rs->col[rnd(g, rs->ncol)];
        for (int k = 0; k < 4 && rc->p.k != lc->p.k; k++) rc = &rs->col[rnd(g, rs->ncol)];
        bp(b, " ON %s.%s %s %s.%s", ls->alias, lc->name, ch(g, 80) ? "=" : PICK(g, cmpops),
           rs->alias, rc->name);
        if (ch(g, 25)) {
          bs(b, " AND ");
          bool_expr(g, b, sc, 1, 0);
          fi->on_and = 1;
        }
      }
    } else {
      fi->cross = 1;
    }
    fi->star_cols += star;
    star_list_add(fi, rs, merged, nmerged);
    for (int i = 0; i < rs->ncol; i++) fi->star_props = pjoin(fi->star_props, rs->col[i].p);
  }
  nested_joins(g, b, sc, fi, first_end);
}

/* ---- queries ---- */

/* ORDER BY over every output column (so the order is determined up to
 * ties), optionally LIMIT/OFFSET (only when strict). */
static void order_all(DiffGen *g, Buf *b, int ncol, int allow_limit, GenStmt *st) {
  g->tags |= GT_ORDER;
  bs(b, " ORDER BY ");
  int perm[32];
  for (int i = 0; i < ncol; i++) perm[i] = i + 1;
  for (int i = ncol - 1; i > 0; i--) {
    int j = rnd(g, i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < ncol; i++) {
    if (i) bs(b, ", ");
    bp(b, "%d", perm[i]);
    if (ch(g, 10) && !g->no_order_coll) bs(b, ch(g, 50) ? " COLLATE NOCASE" : " COLLATE BINARY");
    if (ch(g, 35)) bs(b, " DESC");
    if (ch(g, 8)) bs(b, ch(g, 50) ? " NULLS FIRST" : " NULLS LAST");
  }
  st->cmp = DIFF_CMP_ORDERED;
  if (allow_limit && ch(g, 45)) {
    g->tags |= GT_LIMIT;
    st->truncated = 1;
    bp(b, " LIMIT %d", rnd(g, 8));
    if (ch(g, 30)) bp(b, " OFFSET %d", rnd(g, 4));
  }
}

static void simple_query(DiffGen *g, Buf *b, GenStmt *st) {
  Scope sc = {0};
  Buf from = {0};
  FromInfo fi;
  from_clause(g, &from, &sc, &fi);
  int distinct = ch(g, 12);
  if (distinct) g->tags |= GT_DISTINCT;
  bp(b, "SELECT %s", distinct ? "DISTINCT " : "");
  int ncol;
  int loose = 0;
  if (ch(g, 8) && fi.star_cols <= 12) {
    bs(b, fi.nested ? fi.star_list : "*");
    ncol = fi.star_cols;
    if (distinct && !psafe(fi.star_props)) loose = 1;
  } else {
    ncol = 1 + rnd(g, 4);
    for (int i = 0; i < ncol; i++) {
      if (i) bs(b, ", ");
      Props p = expr(g, b, &sc, rnd(g, 3), 0);
      if (distinct && !psafe(p)) loose = 1;
      if (ch(g, 10)) bp(b, " AS r%d", i + 1);
    }
  }
  bp(b, " FROM %s", from.z);
  free(from.z);
  int where = ch(g, 75);
  if (where) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
  }
  nested_where(g, b, &sc, &fi, where);
  st->cmp = loose ? DIFF_CMP_LOOSE : DIFF_CMP_BAG;
  if (ch(g, 40)) {
    order_all(g, b, ncol, !loose, st);
    if (loose) st->cmp = DIFF_CMP_LOOSE;
  }
}

static void agg_query(DiffGen *g, Buf *b, GenStmt *st) {
  Scope sc = {0};
  Buf from = {0};
  FromInfo fi;
  from_clause(g, &from, &sc, &fi);
  g->tags |= GT_AGG;
  int nkey = ch(g, 25) ? 0 : 1 + ch(g, 30);
  Buf keys[2] = {{0}, {0}};
  int loose = 0;
  for (int i = 0; i < nkey; i++) {
    Props p;
    if (ch(g, 70))
      p = colref(g, &keys[i], &sc, 0, NULL);
    else
      p = expr(g, &keys[i], &sc, 1, 0);
    char c0 = keys[i].z[0];
    if ((c0 >= '0' && c0 <= '9') || c0 == '-') {
      /* GROUP BY <integer> names an output column: use a column instead */
      keys[i].n = 0;
      p = colref(g, &keys[i], &sc, 0, NULL);
    }
    if (!psafe(p)) loose = 1;
  }
  int show_keys = nkey && ch(g, 85);
  int distinct = ch(g, 6);
  if (distinct) g->tags |= GT_DISTINCT;
  bp(b, "SELECT %s", distinct ? "DISTINCT " : "");
  int ncol = 0;
  if (show_keys)
    for (int i = 0; i < nkey; i++) bp(b, "%s%s", ncol++ ? ", " : "", keys[i].z);
  else
    loose = 0;
  int nagg = 1 + rnd(g, 3);
  for (int i = 0; i < nagg; i++) {
    if (ncol++) bs(b, ", ");
    Props p;
    int r = rnd(g, 100);
    if (r < 75)
      p = agg_call(g, b, &sc);
    else if (r < 88) {
      bs(b, "(");
      agg_call(g, b, &sc);
      bp(b, " %s %d)", ch(g, 50) ? "+" : "*", rnd(g, 4));
      p = P_MIX;
    } else {
      bs(b, "coalesce(");
      p = agg_call(g, b, &sc);
      bs(b, ", 0)");
      p.k = kjoin(p.k, K_INT);
    }
    if (distinct && !psafe(p)) loose = 1;
  }
  bp(b, " FROM %s", from.z);
  free(from.z);
  if (ch(g, 60)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
  }
  if (nkey) {
    g->tags |= GT_GROUP;
    bs(b, " GROUP BY ");
    for (int i = 0; i < nkey; i++) bp(b, "%s%s", i ? ", " : "", keys[i].z);
    if (ch(g, 30)) {
      bs(b, " HAVING ");
      if (ch(g, 70)) {
        agg_call(g, b, &sc);
        bp(b, " %s ", PICK(g, cmpops));
        lit(g, b, 1);
      } else {
        /* Only group keys outside aggregates: a bare column is arbitrary. */
        bp(b, "%s %s ", keys[rnd(g, nkey)].z, PICK(g, cmpops));
        lit(g, b, 0);
      }
    }
  }
  for (int i = 0; i < nkey; i++) free(keys[i].z);
  st->cmp = loose ? DIFF_CMP_LOOSE : DIFF_CMP_BAG;
  if (ch(g, 45)) {
    order_all(g, b, ncol, !loose, st);
    if (loose) st->cmp = DIFF_CMP_LOOSE;
  }
}

/* ---- window queries (issue 7) ---- */

/* A window: PARTITION BY, ORDER BY and a RANGE/GROUPS frame (whole peer
 * groups, so no value depends on the order of tied rows). */
static void win_spec(DiffGen *g, Buf *b, const Scope *sc, int allow_frame) {
  int np = ch(g, 50) ? 1 + ch(g, 30) : 0;
  if (np) {
    bs(b, "PARTITION BY ");
    for (int i = 0; i < np; i++) {
      if (i) bs(b, ", ");
      if (ch(g, 75))
        colref(g, b, sc, 0, NULL);
      else
        expr(g, b, sc, 1, M_NARROW);
    }
  }
  int no = ch(g, 75) ? 1 + ch(g, 25) : 0;
  if (no) {
    bs(b, np ? " ORDER BY " : "ORDER BY ");
    for (int i = 0; i < no; i++) {
      if (i) bs(b, ", ");
      /* narrow: a RANGE offset added to an extreme integer rounds, and
       * SQLite's rounding there is its own (see tests/sql/README.md) */
      if (ch(g, 80))
        colref(g, b, sc, 1, NULL);
      else
        expr(g, b, sc, 1, M_NARROW);
      if (ch(g, 8)) bs(b, " COLLATE NOCASE");
      if (ch(g, 35)) bs(b, " DESC");
      if (ch(g, 10)) bs(b, ch(g, 50) ? " NULLS FIRST" : " NULLS LAST");
    }
  }
  if (!allow_frame || !ch(g, 60)) return;
  int range = no == 1 ? ch(g, 60) : 0;
  int offsets = range || no > 0;
  bs(b, np || no ? (range ? " RANGE " : " GROUPS ") : (range ? "RANGE " : "GROUPS "));
  static const char *const roff[] = {"0", "1", "2", "3", "0.5", "1.5", "10"};
  static const char *const goff[] = {"0", "1", "2"};
  const char *const *off = range ? roff : goff;
  int noff = range ? 7 : 3;
  /* start: 0 UNBOUNDED PRECEDING, 1 N PRECEDING, 2 CURRENT ROW, 3 N FOLLOWING */
  int s = rnd(g, offsets ? 4 : 3);
  if (!offsets && s == 1) s = 0;
  int e = s == 3 ? 3 + rnd(g, 2) : (s == 2 ? 2 + rnd(g, 3) : 1 + rnd(g, 4));
  /* end: 1 N PRECEDING, 2 CURRENT ROW, 3 N FOLLOWING, 4 UNBOUNDED FOLLOWING */
  if (!offsets && (e == 1 || e == 3)) e = ch(g, 50) ? 2 : 4;
  bs(b, "BETWEEN ");
  if (s == 0)
    bs(b, "UNBOUNDED PRECEDING");
  else if (s == 1)
    bp(b, "%s PRECEDING", off[rnd(g, noff)]);
  else if (s == 2)
    bs(b, "CURRENT ROW");
  else
    bp(b, "%s FOLLOWING", off[rnd(g, noff)]);
  bs(b, " AND ");
  if (e == 1)
    bp(b, "%s PRECEDING", off[rnd(g, noff)]);
  else if (e == 2)
    bs(b, "CURRENT ROW");
  else if (e == 3)
    bp(b, "%s FOLLOWING", off[rnd(g, noff)]);
  else
    bs(b, "UNBOUNDED FOLLOWING");
  if (ch(g, 25)) {
    static const char *const ex[] = {" EXCLUDE NO OTHERS", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP",
                                     " EXCLUDE TIES"};
    bs(b, PICK(g, ex));
  }
}

/* A window call: a ranking function, or an aggregate (count, sum, total,
 * avg, min, max; sometimes with FILTER) over the window. */
static void win_call(DiffGen *g, Buf *b, const Scope *sc, const char *named) {
  Scope local = *sc;
  local.outer = NULL;
  int agg = 1;
  int r = rnd(g, 100);
  if (r < 25) {
    static const char *const rk[] = {"rank()", "dense_rank()", "percent_rank()", "cume_dist()"};
    bs(b, PICK(g, rk));
    agg = 0;
  } else if (r < 40) {
    bs(b, "count(*)");
  } else if (r < 50) {
    bs(b, "count(");
    expr(g, b, &local, 1, 0);
    bs(b, ")");
  } else if (r < 75) {
    static const char *const fn[] = {"sum", "total", "avg"};
    bp(b, "%s(", PICK(g, fn));
    expr(g, b, &local, rnd(g, 2), M_NARROW);
    bs(b, ")");
  } else {
    bs(b, ch(g, 50) ? "min(" : "max(");
    safe_colref(g, b, &local);
    bs(b, ")");
  }
  if (agg && ch(g, 15)) {
    bs(b, " FILTER (WHERE ");
    bool_expr(g, b, &local, 1, 0);
    bs(b, ")");
  }
  if (named && ch(g, 50)) {
    bp(b, " OVER %s", named);
    return;
  }
  bs(b, " OVER (");
  win_spec(g, b, &local, 1);
  bs(b, ")");
}

static void window_query(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_WINDOW;
  Scope sc = {0};
  Buf from = {0};
  FromInfo fi;
  from_clause(g, &from, &sc, &fi);
  /* at most two sources: frames with EXCLUDE cost the square of a
   * partition, and three joined tables made SQLite run past 60 s */
  for (int tries = 0; sc.nsrc > 2 && tries < 8; tries++) {
    from.n = 0;
    from_clause(g, &from, &sc, &fi);
  }
  Buf wdef = {0};
  int named = ch(g, 25);
  if (named) win_spec(g, &wdef, &sc, 1);
  bs(b, "SELECT ");
  int ncol = 0;
  int nplain = rnd(g, 3);
  for (int i = 0; i < nplain; i++) {
    if (ncol++) bs(b, ", ");
    expr(g, b, &sc, rnd(g, 2), 0);
  }
  int nwin = 1 + rnd(g, 3);
  for (int i = 0; i < nwin; i++) {
    if (ncol++) bs(b, ", ");
    if (ch(g, 15)) {
      bs(b, "coalesce(");
      win_call(g, b, &sc, named ? "w" : NULL);
      bs(b, ", -1)");
    } else {
      win_call(g, b, &sc, named ? "w" : NULL);
    }
  }
  bp(b, " FROM %s", from.z);
  free(from.z);
  if (ch(g, 50)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
  }
  if (named) bp(b, " WINDOW w AS (%s)", wdef.z ? wdef.z : "");
  free(wdef.z);
  st->cmp = DIFF_CMP_BAG;
  if (ch(g, 40)) order_all(g, b, ncol, 1, st);
}

/* One query in ten becomes a window query, written from the generator's
 * second stream: the main stream (every other statement, hence every seed's
 * database history) stays what it was before window queries existed. */
static void window_turn(DiffGen *g, Buf *b, GenStmt *st) {
  uint64_t main_s = g->s;
  g->s = g->ws;
  if (ch(g, 10)) {
    int nr = st->new_round;
    b->n = 0;
    b->z[0] = 0;
    memset(st, 0, sizeof *st);
    st->kind = GEN_QUERY;
    st->new_round = nr;
    g->tags = 0;
    g->nsub = 0;
    window_query(g, b, st);
  }
  g->ws = g->s;
  g->s = main_s;
}

static void compound_query(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_COMPOUND;
  int ncol = 1 + rnd(g, 3);
  int arms = 2 + ch(g, 25);
  Props pos[4] = {P_NULL, P_NULL, P_NULL, P_NULL};
  int dedup = 0;
  for (int a = 0; a < arms; a++) {
    if (a) {
      static const char *const ops[] = {"UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
      const char *op = PICK(g, ops);
      if (strcmp(op, "UNION ALL")) dedup = 1;
      bp(b, " %s ", op);
    }
    Scope sc = {0};
    Buf from = {0};
    FromInfo fi;
    from_clause(g, &from, &sc, &fi);
    int distinct = ch(g, 8);
    if (distinct) dedup = 1;
    bp(b, "SELECT %s", distinct ? "DISTINCT " : "");
    for (int i = 0; i < ncol; i++) {
      if (i) bs(b, ", ");
      Props p = ch(g, 70) ? colref(g, b, &sc, 0, NULL) : expr(g, b, &sc, 1, 0);
      pos[i] = pjoin(pos[i], p);
    }
    bp(b, " FROM %s", from.z);
    free(from.z);
    if (ch(g, 60)) {
      bs(b, " WHERE ");
      bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
    }
  }
  int loose = 0;
  for (int i = 0; i < ncol; i++)
    if (dedup && !psafe(pos[i])) loose = 1;
  st->cmp = loose ? DIFF_CMP_LOOSE : DIFF_CMP_BAG;
  if (ch(g, 45)) {
    /* SQLite 3.40.1 merges a compound sorted by "ORDER BY n COLLATE X"
     * with X, not the column's collation: a UNION keeps 'b' and 'B' twice,
     * a DISTINCT arm loses a NULL (FINDINGS.md, "Not Shale's", seed 28) */
    g->no_order_coll = 1;
    order_all(g, b, ncol, !loose, st);
    g->no_order_coll = 0;
    if (loose) st->cmp = DIFF_CMP_LOOSE;
  }
}

/* A statement written to fail (name, arity, misuse or syntax errors). */
static void error_stmt(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_ERROR;
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  const GTab *u = &g->tab[rnd(g, g->ntab)];
  st->kind = GEN_QUERY;
  switch (rnd(g, 12)) {
    case 0:
      bp(b, "SELECT zz FROM %s", t->name);
      break;
    case 1:
      bp(b, "SELECT %s FROM nosuch", t->col[0].name);
      break;
    case 2:
      bp(b, "SELECT nofunc(%s) FROM %s", t->col[0].name, t->name);
      break;
    case 3:
      bp(b, "SELECT abs(1, 2) FROM %s", t->name);
      break;
    case 4:
      bp(b, "SELECT * FROM %s WHERE count(*) > 0", t->name);
      break;
    case 5:
      bp(b, "SELECT %s FROM %s, %s", t->col[0].name, t->name, u->name);
      break;
    case 6:
      bp(b, "SELECT %s, %s FROM %s UNION SELECT %s FROM %s", t->col[0].name, t->col[1].name,
         t->name, u->col[0].name, u->name);
      break;
    case 7:
      bp(b, "SELECT %s FROM %s ORDER BY 9", t->col[0].name, t->name);
      break;
    case 8:
      st->kind = GEN_WRITE;
      bp(b, "INSERT INTO %s VALUES (1)", t->ncol > 1 ? t->name : "nosuch");
      break;
    case 9:
      bp(b, "SELEC %s FROM %s", t->col[0].name, t->name);
      break;
    case 10:
      bp(b, "SELECT %s.%s FROM %s AS q", t->name, t->col[0].name, t->name);
      break;
    default:
      bp(b, "SELECT substr() FROM %s", t->name);
      break;
  }
}

/* ---- writes ---- */

static void insert_values(DiffGen *g, Buf *b, const GTab *t, int rows) {
  int conflict = rnd(g, 100);
  const char *how = conflict < 12 ? " OR IGNORE" : conflict < 24 ? " OR REPLACE" : "";
  /* SQLite 3.40.1 deletes a rowid REPLACE victim's index entries before a
   * STRICT type check that then fails, and keeps the row: a corrupt index
   * (FINDINGS.md, "Not Shale's"). */
  if (t->strict && t->has_ipk && conflict >= 12 && conflict < 24) how = " OR IGNORE";
  if (*how) g->tags |= GT_CONFLICT;
  bp(b, "INSERT%s INTO %s", how, tref(g, t));
  int cols[MAXCOL], n = 0;
  for (int i = 0; i < t->ncol; i++)
    if (!t->col[i].gen) cols[n++] = i;
  int list = ch(g, 40);
  if (list) {
    /* A subset of the columns, in a random order. */
    for (int i = n - 1; i > 0; i--) {
      int j = rnd(g, i + 1), x = cols[i];
      cols[i] = cols[j];
      cols[j] = x;
    }
    if (n > 1 && ch(g, 40)) n--;
    bs(b, "(");
    for (int i = 0; i < n; i++) bp(b, "%s%s", i ? ", " : "", t->col[cols[i]].name);
    bs(b, ")");
  }
  bs(b, " VALUES ");
  for (int r = 0; r < rows; r++) {
    bs(b, r ? ", (" : "(");
    for (int i = 0; i < n; i++) {
      if (i) bs(b, ", ");
      colval(g, b, &t->col[cols[i]]);
    }
    bs(b, ")");
  }
  if (!*how && ch(g, 12)) {
    /* UPSERT: rows are taken in order, so the outcome is determined. */
    g->tags |= GT_CONFLICT;
    int u = -1, v = -1, npk = 0;
    for (int i = 0; i < t->ncol; i++) npk += t->col[i].pk;
    for (int i = 0; i < t->ncol; i++) {
      const GCol *c = &t->col[i];
      if (c->ipk || (c->pk && npk == 1) || c->unique)
        u = u < 0 || ch(g, 50) ? i : u;
      else if (!c->pk && !c->gen)
        v = i;
    }
    if (u < 0 || v < 0 || ch(g, 25)) {
      bs(b, " ON CONFLICT DO NOTHING");
    } else {
      bp(b, " ON CONFLICT(%s) DO UPDATE SET %s = excluded.%s", t->col[u].name, t->col[v].name,
         t->col[v].name);
      if (ch(g, 40)) bp(b, " WHERE %s IS NOT NULL", t->col[v].name);
    }
  }
}

/* ALTER TABLE ADD COLUMN (outside transactions, so the model stays true). */
static void alter_add(DiffGen *g, Buf *b, GTab *t) {
  int used = 0;
  for (int i = 0; i < t->ncol; i++)
    for (int k = 0; k < 6; k++)
      if (!strcmp(t->col[i].name, colnames[k])) used |= 1 << k;
  int k = 0;
  while (k < 6 && (used & (1 << k))) k++;
  GCol *c = &t->col[t->ncol++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", colnames[k]);
  c->aff = rnd(g, 5);
  c->wide = ch(g, 30);
  bp(b, "ALTER TABLE %s ADD COLUMN %s", t->name, c->name);
  Buf d = {0};
  if (t->strict)
    strict_decltype_of(g, c->aff, &d);
  else
    decltype_of(g, c->aff, &d);
  if (d.n) bp(b, " %s", d.z);
  free(d.z);
  c->any = t->strict && c->aff == AFF_NUM;
  if (ch(g, 20)) {
    c->coll = 1;
    bs(b, " COLLATE NOCASE");
  }
  if (ch(g, 50)) bp(b, " DEFAULT %d", rnd(g, 8) - 2);
}

static void insert_select(DiffGen *g, Buf *b, const GTab *t) {
  const GTab *s = &g->tab[rnd(g, g->ntab)];
  bp(b, "INSERT INTO %s SELECT ", tref(g, t));
  Scope sc = {.nsrc = 1};
  src_from_table(&sc.src[0], s, "s1");
  g->nsub = 1;
  int nv = 0;
  for (int i = 0; i < t->ncol; i++) {
    int narrow = !t->col[i].wide; /* keep narrow columns narrow (invariant 3) */
    if (t->col[i].gen) continue;  /* generated: no value */
    if (nv++) bs(b, ", ");
    if (ch(g, 75) || narrow)
      colref(g, b, &sc, narrow, NULL);
    else
      expr(g, b, &sc, 1, 0);
  }
  bp(b, " FROM %s AS s1", s->name);
  if (ch(g, 80)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1 + rnd(g, 2), 0);
  }
  /* Insert in a determined order, so the first constraint to fail is too. */
  bs(b, " ORDER BY ");
  for (int i = 0; i < nv; i++) bp(b, "%s%d", i ? ", " : "", i + 1);
}

/* Does the SQL text sql read table t in a subquery? */
static int reads_table(const char *sql, const GTab *t) {
  char pat[32];
  snprintf(pat, sizeof pat, "FROM %s AS", t->name);
  if (strstr(sql, pat)) return 1;
  snprintf(pat, sizeof pat, ".%s AS", t->name); /* FROM db.t AS (attach rounds) */
  return strstr(sql, pat) != NULL;
}

static void update_stmt(DiffGen *g, Buf *b, const GTab *t) {
  bp(b, "UPDATE %s SET ", tref(g, t));
  Scope sc = {.nsrc = 1};
  src_from_table(&sc.src[0], t, t->name);
  int n = 1 + ch(g, 30), used = 0;
  for (int i = 0; i < n; i++) {
    int k = rnd(g, t->ncol);
    if (t->col[k].gen) k = (k + 1) % t->ncol; /* the generated column is never col 0 */
    if (used & (1 << k)) continue;
    used |= 1 << k;
    const GCol *c = &t->col[k];
    if (i) bs(b, ", ");
    bp(b, "%s = ", c->name);
    if (c->ipk || c->pk || c->unique) {
      colval(g, b, c);
    } else if (ch(g, 50)) {
      colval(g, b, c);
    } else if (!c->wide) {
      /* Narrow columns stay small: no products of products over time. */
      switch (rnd(g, 4)) {
        case 0:
          bp(b, "%s + 1", c->name);
          break;
        case 1:
          bp(b, "-%s", c->name);
          break;
        case 2:
          bp(b, "abs(%s) - 2", c->name);
          break;
        default:
          bs(b, "CASE WHEN ");
          bool_expr(g, b, &sc, 1, M_NARROW);
          bp(b, " THEN %s ELSE ", c->name);
          colval(g, b, c);
          bs(b, " END");
          break;
      }
    } else {
      /* Row-local expressions only: no subquery may read the table being
       * changed (its visit order would show). */
      Scope local = sc;
      local.outer = NULL;
      Buf e = {0};
      uint32_t saved = g->tags;
      expr(g, &e, &local, 1 + rnd(g, 2), 0);
      if (reads_table(e.z, t)) {
        free(e.z);
        e = (Buf){0};
        colref(g, &e, &local, 0, NULL);
        bs(&e, " || 'u'");
        g->tags = saved;
      }
      bs(b, e.z);
      free(e.z);
    }
  }
  if (ch(g, 85)) {
    Buf w = {0};
    bool_expr(g, &w, &sc, 1 + rnd(g, 2), 0);
    bs(b, " WHERE ");
    if (reads_table(w.z, t)) {
      free(w.z);
      w = (Buf){0};
      colref(g, &w, &sc, 0, NULL);
      bp(&w, " > %d", rnd(g, 8));
    }
    bs(b, w.z);
    free(w.z);
  }
}

static void delete_stmt(DiffGen *g, Buf *b, const GTab *t) {
  bp(b, "DELETE FROM %s", tref(g, t));
  Scope sc = {.nsrc = 1};
  src_from_table(&sc.src[0], t, t->name);
  if (ch(g, 92)) {
    Buf w = {0};
    bool_expr(g, &w, &sc, 1 + rnd(g, 2), 0);
    if (reads_table(w.z, t)) {
      free(w.z);
      w = (Buf){0};
      colref(g, &w, &sc, 0, NULL);
      bs(&w, " IS NULL");
    }
    bp(b, " WHERE %s", w.z);
    free(w.z);
  }
}

static void write_stmt(DiffGen *g, Buf *b) {
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  int r = rnd(g, 100);
  if (r < 45)
    insert_values(g, b, t, 1 + rnd(g, 3));
  else if (r < 55 && !t->has_ipk)
    insert_select(g, b, t);
  else if (r < 85)
    update_stmt(g, b, t);
  else
    delete_stmt(g, b, t);
}

/* ---- issue 7 features (CTEs, total-order windows, functions, RETURNING,
 * UPDATE FROM, UPSERT chains, ALTER TABLE, AUTOINCREMENT, generated
 * columns), written from the generator's third stream (feature_turn) ---- */

/* Start over: st and b describe a new statement of kind. */
static void restart(DiffGen *g, Buf *b, GenStmt *st, int kind) {
  int nr = st->new_round;
  b->n = 0;
  b->z[0] = 0;
  memset(st, 0, sizeof *st);
  st->kind = kind;
  st->new_round = nr;
  st->cmp = DIFF_CMP_BAG;
  g->tags = 0;
  g->nsub = 0;
}

/* Does any table of the round have a REAL column? */
static int round_has_real(const DiffGen *g) {
  for (int i = 0; i < g->ntab; i++)
    for (int j = 0; j < g->tab[i].ncol; j++)
      if (g->tab[i].col[j].aff == AFF_REAL) return 1;
  return 0;
}

/* WITH q AS [NOT] [MATERIALIZED] (a query) and a use of q. */
static void cte_query(DiffGen *g, Buf *b, GenStmt *st) {
  Buf in = {0};
  GenStmt inner;
  memset(&inner, 0, sizeof inner);
  inner.cmp = DIFF_CMP_BAG;
  int k = rnd(g, 10);
  if (k < 5)
    simple_query(g, &in, &inner);
  else if (k < 8)
    agg_query(g, &in, &inner);
  else
    compound_query(g, &in, &inner);
  g->tags |= GT_CTE;
  if (inner.truncated) { /* LIMIT inside: keep the query as it is */
    bs(b, in.z);
    st->cmp = inner.cmp;
    st->truncated = 1;
    free(in.z);
    return;
  }
  static const char *const hint[] = {"", "", "MATERIALIZED ", "NOT MATERIALIZED "};
  const char *h = PICK(g, hint);
  int cmp = inner.cmp == DIFF_CMP_LOOSE ? DIFF_CMP_LOOSE : DIFF_CMP_BAG;
  int form = rnd(g, 5);
  /* SQLite 3.40.1 applies a compound's column affinities (its leftmost
   * arm's) to the rows only when it materializes the compound (a CTE used
   * twice or MATERIALIZED): a compound is used once, never materialized
   * (FINDINGS.md, "Not Shale's") */
  /* Nor does a CTE that SQLite materializes keep a REAL column's integral
   * values real (they are stored as integers; seed 9), nor those of CAST(x
   * AS NUMERIC/REAL) (seeds 23, 24): only rounds without REAL columns and
   * queries without such casts use q twice or MATERIALIZED */
  if (k >= 8 || round_has_real(g) || strstr(in.z, " AS NUMERIC)") || strstr(in.z, " AS REAL)")) {
    form = form % 2;
    if (h[0] == 'M') h = "";
  }
  switch (form) {
    case 0:
      bp(b, "WITH q AS %s(%s) SELECT * FROM q", h, in.z);
      break;
    case 1:
      bp(b, "WITH q AS %s(%s) SELECT count(*) FROM q", h, in.z);
      cmp = DIFF_CMP_BAG;
      break;
    case 2:
      bp(b, "WITH q AS %s(%s) SELECT * FROM q UNION ALL SELECT * FROM q", h, in.z);
      break;
    case 3:
      bp(b,
         "WITH q AS %s(%s), r AS (SELECT * FROM q) SELECT * FROM r WHERE EXISTS (SELECT 1 FROM q)",
         h, in.z);
      break;
    default:
      bp(b, "WITH q AS %s(%s) SELECT (SELECT count(*) FROM q), * FROM q", h, in.z);
      break;
  }
  free(in.z);
  st->cmp = cmp;
}

/* WITH RECURSIVE: a counter probing a table, or rows of a table walked a
 * few steps. */
static void rec_cte_query(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_CTE;
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  st->cmp = DIFF_CMP_BAG;
  if (ch(g, 50)) {
    int lim = ch(g, 30);
    bp(b, "WITH RECURSIVE r(n, m) AS %s(SELECT %d, 'x' UNION ALL SELECT n + 1, m || n FROM r",
       ch(g, 20) ? "MATERIALIZED " : "", rnd(g, 3) - 1);
    if (lim)
      bp(b, " LIMIT %d)", 1 + rnd(g, 6));
    else
      bp(b, " WHERE n < %d)", 1 + rnd(g, 6));
    Scope sc = {.nsrc = 1};
    src_from_table(&sc.src[0], t, "s1");
    Scope outer = {.nsrc = 1};
    Src *r = &outer.src[0];
    snprintf(r->alias, sizeof r->alias, "r");
    r->ncol = 2;
    snprintf(r->col[0].name, sizeof r->col[0].name, "n");
    r->col[0].p = P_INT;
    snprintf(r->col[1].name, sizeof r->col[1].name, "m");
    r->col[1].p = P_TEXT;
    sc.outer = &outer;
    bp(b, " SELECT r.n, r.m, (SELECT count(*) FROM %s AS s1 WHERE ", t->name);
    Buf w = {0};
    bool_expr(g, &w, &sc, 1, 0);
    int c = rnd(g, t->ncol);
    bp(b, "%s OR s1.%s > r.n) FROM r", w.z, t->col[c].name);
    free(w.z);
    return;
  }
  int c = rnd(g, t->ncol);
  const GCol *col = &t->col[c];
  Props p = col_props(col);
  int uni = psafe(p) && ch(g, 40);
  bp(b, "WITH RECURSIVE r(x, d) AS (SELECT s1.%s, 0 FROM %s AS s1", col->name, t->name);
  if (ch(g, 60)) {
    Scope sc = {.nsrc = 1};
    src_from_table(&sc.src[0], t, "s1");
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1, 0);
  }
  bp(b, " %s SELECT x, d + 1 FROM r WHERE d < %d) SELECT x, d FROM r", uni ? "UNION" : "UNION ALL",
     1 + rnd(g, 3));
  if (ch(g, 40)) order_all(g, b, 2, 1, st);
}

/* A table whose primary key orders its rows totally (INTEGER PRIMARY KEY or
 * a WITHOUT ROWID key), or NULL. */
static const GTab *total_order_table(DiffGen *g) {
  int start = rnd(g, g->ntab);
  for (int i = 0; i < g->ntab; i++) {
    const GTab *t = &g->tab[(start + i) % g->ntab];
    if (t->has_ipk || t->norowid) return t;
  }
  return NULL;
}

/* ORDER BY the key of t (alias j1): a total order. */
static void key_order(DiffGen *g, Buf *b, const GTab *t) {
  bs(b, "ORDER BY ");
  int n = 0;
  for (int i = 0; i < t->ncol; i++) {
    if (!t->col[i].ipk && !t->col[i].pk) continue;
    bp(b, "%sj1.%s", n++ ? ", " : "", t->col[i].name);
    if (ch(g, 30)) bs(b, " DESC");
  }
}

/* Window functions whose values depend on the order of rows (row_number,
 * ntile, lag, lead, first/last/nth_value, group_concat, json_group_array,
 * ROWS frames): ordered by a key, so the order is total. */
static void total_window_query(DiffGen *g, Buf *b, GenStmt *st) {
  const GTab *t = total_order_table(g);
  if (!t) {
    window_query(g, b, st);
    return;
  }
  g->tags |= GT_WINDOW;
  Scope sc = {.nsrc = 1};
  src_from_table(&sc.src[0], t, "j1");
  Buf part = {0};
  if (ch(g, 50)) {
    bs(&part, "PARTITION BY ");
    if (ch(g, 70))
      colref(g, &part, &sc, 0, NULL);
    else
      expr(g, &part, &sc, 1, M_NARROW);
    bs(&part, " ");
  }
  Buf ord = {0};
  key_order(g, &ord, t);
  int named = ch(g, 30);
  bs(b, "SELECT ");
  int ncol = 0;
  for (int i = rnd(g, 2); i > 0; i--) {
    bp(b, "%s", ncol++ ? ", " : "");
    colref(g, b, &sc, 0, NULL);
  }
  int nwin = 1 + rnd(g, 3);
  for (int i = 0; i < nwin; i++) {
    if (ncol++) bs(b, ", ");
    int agg = 0;
    switch (rnd(g, 12)) {
      case 0:
        bs(b, "row_number()");
        break;
      case 1:
        bp(b, "ntile(%d)", 1 + rnd(g, 4));
        break;
      case 2:
      case 3:
        bs(b, ch(g, 50) ? "lag(" : "lead(");
        expr(g, b, &sc, 1, M_NOCOLL);
        if (ch(g, 60)) {
          bp(b, ", %d", rnd(g, 3));
          if (ch(g, 50)) {
            bs(b, ", ");
            lit(g, b, 0);
          }
        }
        bs(b, ")");
        break;
      case 4:
        bs(b, ch(g, 50) ? "first_value(" : "last_value(");
        expr(g, b, &sc, 1, 0);
        bs(b, ")");
        break;
      case 5:
        bs(b, "nth_value(");
        expr(g, b, &sc, 1, 0);
        bp(b, ", %d)", 1 + rnd(g, 3));
        break;
      case 6:
      case 7:
        /* never an empty string: SQLite 3.40.1's sliding group_concat
         * drops the separator after one (and then a value) */
        bs(b, "group_concat((");
        expr(g, b, &sc, 1, 0);
        bs(b, ") || '~'");
        if (ch(g, 50)) bs(b, ", '.'");
        bs(b, ")");
        agg = 1;
        break;
      case 8:
        bs(b, "json_group_array(");
        json_arg(g, b, &sc, 1, 0);
        bs(b, ")");
        agg = 1;
        break;
      case 9:
        bs(b, ch(g, 50) ? "sum(" : "total(");
        expr(g, b, &sc, rnd(g, 2), M_NARROW);
        bs(b, ")");
        agg = 1;
        break;
      case 10:
        bs(b, ch(g, 50) ? "count(" : "count(*");
        if (b->z[b->n - 1] == '(') expr(g, b, &sc, 1, 0);
        bs(b, ")");
        agg = 1;
        break;
      default:
        bs(b, ch(g, 50) ? "min(" : "max(");
        safe_colref(g, b, &sc);
        bs(b, ")");
        agg = 1;
        break;
    }
    if (agg && ch(g, 15)) {
      bs(b, " FILTER (WHERE ");
      bool_expr(g, b, &sc, 1, 0);
      bs(b, ")");
    }
    if (named && ch(g, 50)) {
      bs(b, " OVER w");
      continue;
    }
    bs(b, named ? " OVER (w" : " OVER (");
    if (!named) bp(b, "%s%s", part.z ? part.z : "", ord.z);
    if (ch(g, 60)) {
      /* ROWS (or GROUPS: the same over a unique key), with any bounds */
      static const char *const st_b[] = {"UNBOUNDED PRECEDING", "1 PRECEDING", "2 PRECEDING",
                                         "CURRENT ROW", "1 FOLLOWING"};
      static const char *const en_b[] = {"1 PRECEDING", "CURRENT ROW", "1 FOLLOWING", "2 FOLLOWING",
                                         "UNBOUNDED FOLLOWING"};
      int s = rnd(g, 5), e = rnd(g, 5);
      bp(b, " %s BETWEEN %s AND %s", ch(g, 80) ? "ROWS" : "GROUPS", st_b[s], en_b[e]);
      if (ch(g, 25)) {
        static const char *const ex[] = {" EXCLUDE NO OTHERS", " EXCLUDE CURRENT ROW",
                                         " EXCLUDE GROUP", " EXCLUDE TIES"};
        bs(b, PICK(g, ex));
      }
    }
    bs(b, ")");
  }
  bp(b, " FROM %s AS j1", t->name);
  if (ch(g, 40)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1, 0);
  }
  if (named) bp(b, " WINDOW w AS (%s%s)", part.z ? part.z : "", ord.z);
  free(part.z);
  free(ord.z);
  st->cmp = DIFF_CMP_BAG;
  if (ch(g, 30)) order_all(g, b, ncol, 1, st);
}

/* printf/format, math and date functions, JSON documents and json_each /
 * json_tree over a table's values. */
static void func_probe_query(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_FUNC;
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  Scope sc = {.nsrc = 1};
  src_from_table(&sc.src[0], t, "j1");
  st->cmp = DIFF_CMP_BAG;
  if (ch(g, 25)) {
    /* json_each / json_tree (never the id and parent columns: SQLite's own
     * numbering) */
    static const char *const docs[] = {
        "'{\"a\":[1,2.5,{\"b\":null,\"c\":\"x\"}],\"d\":true,\"e\":-0.0}'",
        "'[[],{},[1,[2,[3]]],\"s\",1e300,-9223372036854775808]'",
        "'{\"k\":{\"k\":{\"k\":\"deep\"}},\"\":\"empty key\",\"a b\":1}'", "'5'", "'\"str\"'"};
    int tree = ch(g, 50);
    bs(b, "SELECT je.key, je.value, je.type, je.atom, je.fullkey, je.path");
    if (ch(g, 50)) {
      bp(b, " FROM %s(%s", tree ? "json_tree" : "json_each", PICK(g, docs));
      if (ch(g, 30)) bs(b, ch(g, 50) ? ", '$.a'" : ", '$[2]'");
      bs(b, ") AS je");
    } else {
      bp(b, ", j1.%s FROM %s AS j1, %s(", t->col[rnd(g, t->ncol)].name, t->name,
         tree ? "json_tree" : "json_each");
      if (ch(g, 50)) {
        bs(b, "json_array(");
        json_arg(g, b, &sc, 1, 0);
        bs(b, ", ");
        json_arg(g, b, &sc, 1, 0);
        bs(b, ")");
      } else {
        bs(b, "json_object('k', ");
        json_arg(g, b, &sc, 1, 0);
        bs(b, ", 'l', json_array(1, ");
        json_arg(g, b, &sc, 1, 0);
        bs(b, "))");
      }
      bs(b, ") AS je");
    }
    if (ch(g, 30)) bs(b, ch(g, 50) ? " WHERE je.type <> 'null'" : " WHERE je.atom IS NOT NULL");
    return;
  }
  bs(b, "SELECT ");
  int n = 1 + rnd(g, 3);
  for (int i = 0; i < n; i++) {
    if (i) bs(b, ", ");
    int r = rnd(g, 4);
    if (r == 0) {
      static const char *const fmts[] = {
          "'%d'",        "'%5d|%-5d|'", "'%x %X %o'", "'%.3s|%-6s|%6s'",
          "'%10.4f'",    "'%e|%.2e'",   "'%g|%.3g'",  "'%q'",
          "'%Q'",        "'%c'",        "'%+d % d'",  "'%05d|%-05d'",
          "'%.2f%%'",    "'%s-%s'",     "'%,d'",      "'%#x %#o'",
          "'%.0f|%.1f'", "'%i'",        "'%20.10s|'", "'%.*d'"};
      const char *f = PICK(g, fmts);
      bp(b, "%s(%s", ch(g, 50) ? "printf" : "format", f);
      int nargs = 0;
      for (const char *z = f; *z; z++)
        if (*z == '%' && z[1] != '%')
          nargs += z[1] == '.' && z[2] == '*' ? 2 : 1;
        else if (*z == '%')
          z++;
      for (int a = 0; a < nargs; a++) {
        bs(b, ", ");
        if (ch(g, 40))
          lit(g, b, 0);
        else
          expr(g, b, &sc, 0, 0);
      }
      bs(b, ")");
    } else if (r == 1) {
      static const char *const m1[] = {"sqrt",    "exp",     "ln",  "log10",   "log2", "ceil",
                                       "floor",   "trunc",   "sin", "cos",     "atan", "acos",
                                       "degrees", "radians", "log", "ceiling", "tanh", "asinh"};
      int two = ch(g, 25);
      if (two) {
        static const char *const m2[] = {"pow", "atan2", "mod", "log", "power"};
        bp(b, "%s(", PICK(g, m2));
        expr(g, b, &sc, 0, 0);
        bp(b, ", %d)", rnd(g, 5) - 1);
      } else {
        bp(b, "%s(", PICK(g, m1));
        expr(g, b, &sc, 0, 0);
        bs(b, ")");
      }
    } else if (r == 2) {
      static const char *const dates[] = {
          "'2024-01-31'", "'2000-02-29 23:59:59.999'", "'1970-01-01'", "'2023-12-31T12:30'",
          "'0000-01-01'", "'9999-12-31 23:59:59'",     "2451545.5",    "'12:34:56'",
          "1700000000",   "'2024-03-10 01:02:03.5'"};
      static const char *const mods[] = {
          "'+1 month'",      "'-1 month'",     "'+1 year'",     "'start of month'",
          "'start of year'", "'start of day'", "'weekday 0'",   "'weekday 3'",
          "'+36 hours'",     "'-90 minutes'",  "'+2.5 days'",   "'unixepoch'",
          "'julianday'",     "'auto'",         "'+10 seconds'", "'-1.5 years'"};
      static const char *const fns[] = {"date(",
                                        "time(",
                                        "datetime(",
                                        "julianday(",
                                        "unixepoch(",
                                        "strftime('%Y-%m-%d %H:%M:%f %j %w %W %s', ",
                                        "strftime('%J|%%|%d/%m', "};
      bs(b, PICK(g, fns));
      if (ch(g, 75))
        bs(b, PICK(g, dates));
      else
        expr(g, b, &sc, 0, 0);
      for (int k = rnd(g, 3); k > 0; k--) bp(b, ", %s", PICK(g, mods));
      bs(b, ")");
    } else {
      static const char *const docs[] = {"'{\"a\":[1,2,3],\"b\":{\"c\":null}}'", "'[1,\"x\",2.5]'",
                                         "'{\"a\":\"b\"}'", "'not json'"};
      const char *d = PICK(g, docs);
      switch (rnd(g, 8)) {
        case 0:
          bp(b, "json_extract(%s, '$.a[1]', '$.b')", d);
          break;
        case 1:
          bp(b, "json_set(%s, '$.z', ", d);
          json_arg(g, b, &sc, 1, 0);
          bs(b, ")");
          break;
        case 2:
          bp(b, "json_remove(%s, '$.a[0]', '$[1]')", d);
          break;
        case 3:
          bp(b, "json_patch(%s, '{\"b\":null,\"n\":1}')", d);
          break;
        case 4:
          bp(b, "json_array_length(%s, '$.a')", d);
          break;
        case 5:
          bp(b, "(%s -> '$.a') || (%s ->> 'a')", d, d);
          break;
        case 6:
          bp(b, "json_valid(%s), json_type(%s, '$.a')", d, d);
          break;
        default:
          bp(b, "json_insert(json_replace(%s, '$.a', ", d);
          json_arg(g, b, &sc, 1, 0);
          bs(b, "), '$.new', json('[1]'))");
          break;
      }
    }
  }
  bp(b, " FROM %s AS j1", t->name);
  if (ch(g, 40)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &sc, 1, 0);
  }
}

static void sequence_query(DiffGen *g, Buf *b, GenStmt *st) {
  g->tags |= GT_FEATURE;
  if (ch(g, 50))
    bs(b, "SELECT name, seq FROM sqlite_sequence");
  else
    bs(b, "SELECT tbl, idx, stat FROM sqlite_stat1"); /* after ANALYZE */
  st->cmp = DIFF_CMP_BAG;
}

/* One query in eight becomes a feature query. */
static void feature_query_turn(DiffGen *g, Buf *b, GenStmt *st) {
  uint64_t main_s = g->s;
  g->s = g->fs;
  if (ch(g, 12)) {
    restart(g, b, st, GEN_QUERY);
    int r = rnd(g, 100);
    if (r < 25)
      cte_query(g, b, st);
    else if (r < 40)
      rec_cte_query(g, b, st);
    else if (r < 65)
      total_window_query(g, b, st);
    else if (r < 94)
      func_probe_query(g, b, st);
    else
      sequence_query(g, b, st);
  }
  g->fs = g->s;
  g->s = main_s;
}

/* ---- feature writes ---- */

/* " RETURNING ..." for a write to t (its columns by name). */
static void returning(DiffGen *g, Buf *b, const GTab *t) {
  /* SQLite 3.40.1 returns a REAL column's integral values as integers
   * (and sometimes a neighbour's as reals) in RETURNING: not on such
   * tables (FINDINGS.md, "Not Shale's") */
  for (int i = 0; i < t->ncol; i++)
    if (t->col[i].aff == AFF_REAL && !t->col[i].gen) return;
  /* and on an UPDATE of a WITHOUT ROWID table `e NOTNULL` can be 1 for a
   * NULL e there (seed 20) */
  if (t->norowid) return;
  /* and an ON DELETE/UPDATE action converts the parent key's OLD value in
   * place to the child's affinity, which RETURNING then shows (seed 3) */
  if (g->fk) return;
  g->tags |= GT_RETURNING;
  if (ch(g, 40)) {
    bs(b, " RETURNING *");
    return;
  }
  /* columns only: in RETURNING expressions SQLite 3.40.1 compares a TEXT
   * column with a number without its affinity but two columns with it
   * (seeds 2, 5, 8; FINDINGS.md, "Not Shale's") */
  bs(b, " RETURNING ");
  int n = 1 + rnd(g, 3);
  for (int i = 0; i < n; i++) {
    if (i) bs(b, ", ");
    bs(b, t->col[rnd(g, t->ncol)].name);
    if (ch(g, 20)) bp(b, " AS o%d", i + 1);
  }
}

/* A column UPDATE may set to a computed value: not a key, not generated. */
static int plain_col(const GTab *t, int from) {
  for (int i = 0; i < t->ncol; i++) {
    const GCol *c = &t->col[(from + i) % t->ncol];
    if (!c->ipk && !c->pk && !c->unique && !c->gen) return (from + i) % t->ncol;
  }
  return -1;
}

/* UPDATE t SET c = s.x FROM (one aggregate row of another table) AS s. */
static void update_from(DiffGen *g, Buf *b, const GTab *t) {
  g->tags |= GT_FEATURE | GT_JOIN;
  int c = plain_col(t, rnd(g, t->ncol));
  const GTab *u = &g->tab[rnd(g, g->ntab)];
  if (c < 0 || u == t) {
    delete_stmt(g, b, t);
    return;
  }
  Scope su = {.nsrc = 1};
  src_from_table(&su.src[0], u, "s1");
  bp(b, "UPDATE %s SET %s = s.x FROM (SELECT count(*) AS x, coalesce(max(", t->name,
     t->col[c].name);
  colref(g, b, &su, 1, NULL); /* narrow: narrow columns stay narrow */
  bp(b, "), 0) AS y FROM %s AS s1", u->name);
  if (ch(g, 60)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &su, 1, 0);
  }
  bs(b, ") AS s");
  Scope st = {.nsrc = 1};
  src_from_table(&st.src[0], t, t->name);
  if (ch(g, 70)) {
    bs(b, " WHERE ");
    Buf w = {0};
    bool_expr(g, &w, &st, 1, M_NARROW);
    bs(b, w.z);
    free(w.z);
    if (ch(g, 40)) bp(b, " AND %s.%s IS NOT s.y", t->name, t->col[rnd(g, t->ncol)].name);
  }
}

/* INSERT with a chain of ON CONFLICT clauses. */
static void upsert_chain(DiffGen *g, Buf *b, const GTab *t) {
  g->tags |= GT_CONFLICT;
  int targets[MAXCOL], nt = 0, npk = 0;
  for (int i = 0; i < t->ncol; i++) npk += t->col[i].pk;
  for (int i = 0; i < t->ncol; i++) {
    const GCol *c = &t->col[i];
    if (c->ipk || (c->pk && npk == 1) || c->unique) targets[nt++] = i;
  }
  int v = plain_col(t, rnd(g, t->ncol));
  bp(b, "INSERT INTO %s(", t->name);
  int n = 0;
  for (int i = 0; i < t->ncol; i++)
    if (!t->col[i].gen) bp(b, "%s%s", n++ ? ", " : "", t->col[i].name);
  bs(b, ") VALUES ");
  int rows = 1 + rnd(g, 3);
  for (int r = 0; r < rows; r++) {
    bs(b, r ? ", (" : "(");
    n = 0;
    for (int i = 0; i < t->ncol; i++) {
      if (t->col[i].gen) continue;
      if (n++) bs(b, ", ");
      colval(g, b, &t->col[i]);
    }
    bs(b, ")");
  }
  /* a VALUES list would make "ON CONFLICT" ambiguous only after a SELECT */
  int used = 0;
  for (int k = 0; k < nt && k < 3; k++) {
    int i = targets[rnd(g, nt)];
    if (used & (1 << i)) continue;
    used |= 1 << i;
    bp(b, " ON CONFLICT(%s)", t->col[i].name);
    if (v < 0 || ch(g, 25)) {
      bs(b, " DO NOTHING");
    } else {
      const GCol *vc = &t->col[v];
      if (vc->wide || ch(g, 60))
        bp(b, " DO UPDATE SET %s = excluded.%s", vc->name, vc->name);
      else
        bp(b, " DO UPDATE SET %s = coalesce(excluded.%s, %s.%s)", vc->name, vc->name, t->name,
           vc->name);
      if (ch(g, 30)) bp(b, " WHERE excluded.%s IS NOT NULL", vc->name);
    }
  }
  if (ch(g, 60)) bs(b, " ON CONFLICT DO NOTHING");
}

/* WITH c AS (...) DELETE / UPDATE / INSERT. */
static void cte_write(DiffGen *g, Buf *b, const GTab *t) {
  g->tags |= GT_CTE;
  const GTab *u = &g->tab[rnd(g, g->ntab)];
  int k = rnd(g, 3);
  if (k == 2) {
    int c = rnd(g, t->ncol);
    if (t->col[c].gen) c = plain_col(t, 0);
    if (c < 0) c = 0;
    bp(b, "WITH c(x) AS (VALUES (");
    colval(g, b, &t->col[c]);
    bs(b, "), (");
    colval(g, b, &t->col[c]);
    bp(b, ")) INSERT INTO %s(%s) SELECT x FROM c", t->name, t->col[c].name);
    return;
  }
  if (u == t) {
    delete_stmt(g, b, t);
    return;
  }
  Scope su = {.nsrc = 1};
  src_from_table(&su.src[0], u, "s1");
  bp(b, "WITH c AS %s(SELECT ", ch(g, 30) ? "MATERIALIZED " : "");
  colref(g, b, &su, 0, NULL);
  bp(b, " AS x FROM %s AS s1", u->name);
  if (ch(g, 60)) {
    bs(b, " WHERE ");
    bool_expr(g, b, &su, 1, 0);
  }
  bs(b, ") ");
  int col = rnd(g, t->ncol);
  if (k == 0) {
    bp(b, "DELETE FROM %s WHERE %s %sIN (SELECT x FROM c)", t->name, t->col[col].name,
       ch(g, 20) ? "NOT " : "");
  } else {
    int c = plain_col(t, rnd(g, t->ncol));
    if (c < 0) {
      bp(b, "DELETE FROM %s WHERE %s IN (SELECT x FROM c)", t->name, t->col[col].name);
      return;
    }
    bp(b, "UPDATE %s SET %s = ", t->name, t->col[c].name);
    colval(g, b, &t->col[c]);
    bp(b, " WHERE %s IN (SELECT x FROM c)", t->col[col].name);
  }
}

/* One write in five becomes a feature write. */
static void feature_write_turn(DiffGen *g, Buf *b, GenStmt *st) {
  uint64_t main_s = g->s;
  g->s = g->fs;
  if (ch(g, 20)) {
    restart(g, b, st, GEN_WRITE);
    const GTab *t = &g->tab[rnd(g, g->ntab)];
    int r = rnd(g, 100);
    if (r < 40) {
      int w = rnd(g, 3);
      if (w == 0)
        insert_values(g, b, t, 1 + rnd(g, 3));
      else if (w == 1)
        update_stmt(g, b, t);
      else
        delete_stmt(g, b, t);
      returning(g, b, t);
    } else if (r < 60) {
      update_from(g, b, t);
      if (ch(g, 30)) returning(g, b, t);
    } else if (r < 80) {
      upsert_chain(g, b, t);
      if (ch(g, 30)) returning(g, b, t);
    } else {
      cte_write(g, b, t);
    }
  }
  g->fs = g->s;
  g->s = main_s;
}

/* ---- ALTER TABLE RENAME TO / RENAME COLUMN / DROP COLUMN ---- */

static void feature_ddl_turn(DiffGen *g, Buf *b, GenStmt *st) {
  if (g->txn) return; /* a ROLLBACK would undo it behind the model's back */
  uint64_t main_s = g->s;
  g->s = g->fs;
  if (ch(g, 60)) {
    GTab *t = &g->tab[rnd(g, g->ntab)];
    int r = rnd(g, 5);
    /* attach rounds: no RENAME TO / RENAME COLUMN / DROP COLUMN (Shale does
     * not rewrite TEMP triggers and views on the renamed table; FINDINGS.md) */
    if (g->att && r < 3) r = 3 + (r & 1);
    int drop = -1;
    if (r == 2 && !g->has_view && t->ncol > 2 && !t->has_gen) {
      int from = rnd(g, t->ncol);
      for (int i = 0; i < t->ncol && drop < 0; i++) {
        const GCol *c = &t->col[(from + i) % t->ncol];
        if (!c->ipk && !c->pk && !c->unique && !c->indexed) drop = (from + i) % t->ncol;
      }
    }
    restart(g, b, st, GEN_DDL);
    g->tags |= GT_ALTER;
    if (r == 3) { /* VACUUM (rowids of tables without an INTEGER PRIMARY KEY
                     may change: the generator never shows them) */
      g->tags = GT_FEATURE;
      bs(b, "VACUUM");
    } else if (r == 4) {
      g->tags = GT_FEATURE;
      if (ch(g, 50))
        bs(b, "ANALYZE");
      else
        bp(b, "ANALYZE %s", t->name);
    } else if (drop >= 0) {
      bp(b, "ALTER TABLE %s DROP COLUMN %s", t->name, t->col[drop].name);
      memmove(&t->col[drop], &t->col[drop + 1], sizeof(GCol) * (size_t)(t->ncol - drop - 1));
      t->ncol--;
    } else if (r == 1) {
      GCol *c = &t->col[rnd(g, t->ncol)];
      char nm[16];
      snprintf(nm, sizeof nm, "r%d", ++g->nren);
      bp(b, "ALTER TABLE %s RENAME %s%s TO %s", t->name, ch(g, 50) ? "COLUMN " : "", c->name, nm);
      snprintf(c->name, sizeof c->name, "%s", nm);
    } else {
      char nm[16];
      size_t len = strlen(t->name);
      if (len > 2 && t->name[len - 2] == '_')
        snprintf(nm, sizeof nm, "%.*s", (int)(len - 2), t->name);
      else
        snprintf(nm, sizeof nm, "%s_r", t->name);
      bp(b, "ALTER TABLE %s RENAME TO %s", t->name, nm);
      snprintf(t->name, sizeof t->name, "%s", nm);
    }
  }
  g->fs = g->s;
  g->s = main_s;
}

/* ---- attach rounds: ATTACH ':memory:' AS aux, tables spread over main,
 * temp and aux, TEMP triggers logging into temp.tlog, DETACH/re-ATTACH at
 * the round's end ---- */

/* Statements of an attach round around the generated ones; 0 if none now. */
static int attach_turn(DiffGen *g, Buf *b, GenStmt *st) {
  if (!g->att) return 0;
  if (g->att_pre == 0 && g->phase == 0) {
    g->att_pre++;
    st->kind = GEN_DDL;
    bs(b, ach(g, 50) ? "ATTACH ':memory:' AS aux" : "ATTACH DATABASE ':memory:' AS aux");
    return 1;
  }
  if (g->phase >= 1 && g->att_pre >= 1 && g->att_pre < 5) {
    st->kind = GEN_DDL;
    g->tags |= GT_FEATURE;
    if (g->att_pre == 1) {
      bs(b, ach(g, 50) ? "CREATE TEMP TABLE tlog(k TEXT, v)" : "CREATE TABLE temp.tlog(k TEXT, v)");
      g->trig_tab = arnd(g, g->ntab);
      g->att_pre++;
      return 1;
    }
    static const char *const ev[] = {"INSERT", "UPDATE", "DELETE"};
    int e = g->att_pre - 2;
    g->att_pre++;
    GTab *t = &g->tab[g->trig_tab];
    GCol *c = &t->col[arnd(g, t->ncol)];
    c->indexed = 1; /* named by a trigger: never dropped */
    bp(b, "CREATE %s TRIGGER tr%d AFTER %s ON %s BEGIN INSERT INTO tlog VALUES('%c', %s.%s); END",
       ach(g, 50) ? "TEMP" : "TEMPORARY", e + 1, ev[e], tref(g, t), "iud"[e],
       e == 2 ? "old" : "new", c->name);
    return 1;
  }
  if (g->phase == 4 && g->in_round <= 3 && g->att_tail < 4) {
    int k = g->att_tail++;
    if (k == 0 && g->txn) {
      st->kind = GEN_TXN;
      bs(b, "COMMIT");
      g->txn = 0;
    } else if (k == 0) {
      st->kind = GEN_QUERY;
      bs(b, "SELECT type, name, tbl_name FROM temp.sqlite_schema");
    } else if (k == 1) {
      st->kind = GEN_DDL;
      bs(b, ach(g, 50) ? "DETACH aux" : "DETACH DATABASE aux");
    } else if (k == 2) {
      st->kind = GEN_DDL;
      bs(b, "ATTACH ':memory:' AS aux");
    } else {
      st->kind = GEN_QUERY;
      bs(b, "SELECT count(*) FROM aux.sqlite_schema");
    }
    g->tags |= GT_FEATURE;
    return 1;
  }
  return 0;
}

/* One attach-round query in twenty reads temp.tlog (alone or joined). */
static void attach_query_turn(DiffGen *g, Buf *b, GenStmt *st) {
  if (!g->att || g->att_pre < 5 || !ach(g, 5)) return;
  restart(g, b, st, GEN_QUERY);
  g->tags |= GT_FEATURE;
  int r = arnd(g, 4);
  if (r == 0) {
    bs(b, ach(g, 50) ? "SELECT k, v FROM tlog" : "SELECT k, v FROM temp.tlog");
  } else if (r == 1) {
    bs(b, "SELECT k, count(*), count(v) FROM temp.tlog GROUP BY k");
  } else {
    const GTab *t = &g->tab[arnd(g, g->ntab)];
    const GCol *c = &t->col[arnd(g, t->ncol)];
    bp(b, "SELECT l.k, %s, count(*) FROM temp.tlog AS l %sJOIN %s AS j ON j.%s = l.v GROUP BY 1",
       r == 2 ? "count(l.v)" : "max(l.v)", r == 2 ? "" : "LEFT ", tref(g, t), c->name);
  }
}

/* ---- virtual tables (issue 15): R-Tree tables (rtree, rtree_i32, 1-3
 * dimensions, aux columns) in about a third of the rounds, and the tests'
 * own table-valued function tseries (series_vt.h) in any round, written
 * from a sixth random stream (g->vs) so the other streams stay as they
 * were. Plan independence (gen.h invariant 2): R-Tree constraints only ever
 * compare with numbers (the module reads any value as a number where SQL
 * would compare types), rows come out ordered by id or are compared as a
 * multiset, and tseries gets integer or NULL arguments only. ---- */

/* Run the main-stream helpers on the vtab stream: between vs_enter and
 * vs_leave, g->s is g->vs. */
static uint64_t vs_enter(DiffGen *g) {
  uint64_t main_s = g->s;
  g->s = g->vs;
  return main_s;
}
static void vs_leave(DiffGen *g, uint64_t main_s) {
  g->vs = g->s;
  g->s = main_s;
}

static const char *const vt_lo[] = {"x0", "y0", "z0"};
static const char *const vt_hi[] = {"x1", "y1", "z1"};

/* A coordinate: a small number mostly, sometimes one float32 cannot hold
 * exactly (rtree rounds bounds outward) or an i32 edge. */
static void vt_num(DiffGen *g, Buf *b, const GVt *v) {
  static const char *const wide_f[] = {"0.1", "-0.3", "1e10", "123456.789", "-2.5e-7", "16777217"};
  static const char *const wide_i[] = {"2147483647", "-2147483648", "2.5", "-3.75", "1e3"};
  if (ch(g, 8)) {
    bs(b, v->i32 ? PICK(g, wide_i) : PICK(g, wide_f));
  } else if (!v->i32 && ch(g, 40)) {
    bp(b, "%.2f", (rnd(g, 200) - 100) / 4.0);
  } else {
    bp(b, "%d", rnd(g, 61) - 30);
  }
}

/* lo, hi of one dimension: hi = lo + extent (sometimes lo - 1: invalid). */
static void vt_pair(DiffGen *g, Buf *b, const GVt *v, int invalid) {
  size_t at = b->n;
  vt_num(g, b, v);
  char lo[40];
  snprintf(lo, sizeof lo, "%s", b->z + at);
  if (invalid)
    bp(b, ", %s - 1", lo);
  else if (ch(g, 10))
    bp(b, ", %s", lo);
  else
    bp(b, ", %s + %d", lo, rnd(g, 12));
}

static void vt_row(DiffGen *g, Buf *b, const GVt *v) {
  bs(b, "(");
  if (ch(g, 15))
    bs(b, "NULL");
  else
    bp(b, "%d", 1 + rnd(g, 80));
  int bad = ch(g, 4) ? rnd(g, v->ndim) : -1;
  for (int d = 0; d < v->ndim; d++) {
    bs(b, ", ");
    vt_pair(g, b, v, d == bad);
  }
  for (int a = 0; a < v->naux; a++) {
    bs(b, ", ");
    lit(g, b, 0);
  }
  bs(b, ")");
}

static void vt_create(DiffGen *g, Buf *b, GVt *v, int i) {
  snprintf(v->name, sizeof v->name, "rt%d", i + 1);
  v->i32 = ch(g, 35);
  v->ndim = 1 + rnd(g, 3);
  v->naux = rnd(g, 3);
  bp(b, "CREATE VIRTUAL TABLE %s USING %s(id", v->name, v->i32 ? "rtree_i32" : "rtree");
  for (int d = 0; d < v->ndim; d++) bp(b, ", %s, %s", vt_lo[d], vt_hi[d]);
  static const char *const aux[] = {"p", "q"};
  for (int a = 0; a < v->naux; a++) bp(b, ", +%s", aux[a]);
  bs(b, ")");
}

static void vt_insert(DiffGen *g, Buf *b, const GVt *v, int rows) {
  static const char *const verbs[] = {"INSERT", "INSERT", "INSERT OR IGNORE", "INSERT OR REPLACE",
                                      "REPLACE"};
  bp(b, "%s INTO %s VALUES ", PICK(g, verbs), v->name);
  for (int r = 0; r < rows; r++) {
    if (r) bs(b, ", ");
    vt_row(g, b, v);
  }
}

/* A numeric expression over column c of table t (never NULL, never text):
 * what an R-Tree constraint may compare with on any plan. */
static void vt_colnum(Buf *b, const char *alias, const GCol *c, int integer) {
  bp(b, "ifnull(CAST(%s.%s AS %s), 0)", alias, c->name, integer ? "INTEGER" : "REAL");
}

/* A WHERE condition on R-Tree v (alias al): window overlap or containment
 * over some dimensions, id ranges, equality, aux tests; or "1". */
static void vt_cond(DiffGen *g, Buf *b, const GVt *v, const char *al) {
  int r = rnd(g, 100), n = 0;
  if (r < 60) {
    int contain = ch(g, 30);
    for (int d = 0; d < v->ndim; d++) {
      if (d && ch(g, 30)) continue;
      Buf lo = {0};
      bgrow(&lo, 1);
      vt_num(g, &lo, v);
      int ext = rnd(g, 20);
      if (n++) bs(b, " AND ");
      if (contain)
        bp(b, "%s.%s >= %s AND %s.%s <= %s + %d", al, vt_lo[d], lo.z, al, vt_hi[d], lo.z, ext);
      else
        bp(b, "%s.%s <= %s + %d AND %s.%s >= %s", al, vt_lo[d], lo.z, ext, al, vt_hi[d], lo.z);
      free(lo.z);
    }
  } else if (r < 70) {
    int k = 1 + rnd(g, 80);
    bp(b, ch(g, 50) ? "%s.id = %d" : "%s.id BETWEEN %d AND %d", al, k, k + rnd(g, 20));
    n++;
  } else if (r < 76) {
    bp(b, "%s.id IN (%d, %d, %d)", al, 1 + rnd(g, 80), 1 + rnd(g, 80), 1 + rnd(g, 80));
    n++;
  } else if (r < 84) {
    int d = rnd(g, v->ndim);
    static const char *const ops[] = {"=", "<", "<=", ">", ">="};
    bp(b, "%s.%s %s ", al, ch(g, 50) ? vt_lo[d] : vt_hi[d], PICK(g, ops));
    vt_num(g, b, v);
    n++;
  } else if (r < 90 && v->naux) {
    bp(b, "%s.p IS %sNULL", al, ch(g, 50) ? "NOT " : "");
    n++;
  }
  if (!n) bs(b, "1");
}

static const GVt *vt_pick(DiffGen *g) { return &g->vtab[rnd(g, g->vt)]; }

/* A table of the round and one of its columns, for joins. */
static const GTab *vt_other(DiffGen *g, const GCol **c) {
  const GTab *t = &g->tab[rnd(g, g->ntab)];
  *c = &t->col[rnd(g, t->ncol)];
  return t;
}

/* tseries(...) with integer or NULL arguments (sometimes from table t). */
static void vt_series(DiffGen *g, Buf *b, const char *alias, const GCol *c) {
  int nargs = rnd(g, 4), start = rnd(g, 21) - 10;
  if (nargs == 0 && ch(g, 50)) {
    bs(b, "tseries");
    return;
  }
  bs(b, "tseries(");
  for (int i = 0; i < nargs; i++) {
    if (i) bs(b, ", ");
    if (ch(g, 4))
      bs(b, "NULL");
    else if (c && ch(g, 40)) {
      vt_colnum(b, alias, c, 1);
      bp(b, " %% %d", 3 + rnd(g, 8));
    } else if (i == 0)
      bp(b, "%d", start);
    else if (i == 1)
      bp(b, "%d", start + rnd(g, 30) - 5);
    else
      bp(b, "%d", rnd(g, 9) - 4);
  }
  bs(b, ")");
}

static void vt_series_query(DiffGen *g, Buf *b, GenStmt *st) {
  int r = rnd(g, 100);
  if (r < 40) {
    bs(b, ch(g, 50) ? "SELECT value FROM " : "SELECT value, start, stop, step FROM ");
    vt_series(g, b, NULL, NULL);
    if (ch(g, 25)) bp(b, " WHERE value %% %d = 0", 2 + rnd(g, 3));
    if (ch(g, 60)) {
      st->cmp = DIFF_CMP_ORDERED;
      bs(b, ch(g, 50) ? " ORDER BY value" : " ORDER BY value DESC");
      if (ch(g, 50)) {
        st->truncated = 1;
        bp(b, " LIMIT %d", rnd(g, 12));
        if (ch(g, 30)) bp(b, " OFFSET %d", rnd(g, 5));
      }
    }
  } else if (r < 50) {
    int s = rnd(g, 11) - 5;
    bp(b, "SELECT value FROM tseries WHERE start = %d AND stop = %d", s, s + rnd(g, 15));
    if (ch(g, 50)) bp(b, " AND step = %d", 1 + rnd(g, 3));
  } else if (r < 62) {
    bs(b, "SELECT count(*), min(value), max(value) FROM ");
    vt_series(g, b, NULL, NULL);
  } else {
    const GCol *c;
    const GTab *t = vt_other(g, &c);
    bp(b, "SELECT t.%s, s.value FROM %s AS t %sJOIN ", c->name, t->name, ch(g, 30) ? "LEFT " : "");
    vt_series(g, b, "t", c);
    bs(b, " AS s");
    if (ch(g, 30)) bs(b, " WHERE s.value > 0");
  }
}

static void vt_rtree_query(DiffGen *g, Buf *b, GenStmt *st) {
  const GVt *v = vt_pick(g);
  int r = rnd(g, 100);
  if (r < 40) {
    static const char *const cols[] = {"*", "id", "id, x0, x1", "r.*, r.id + 0"};
    bp(b, "SELECT %s FROM %s AS r WHERE ", PICK(g, cols), v->name);
    vt_cond(g, b, v, "r");
    if (ch(g, 50)) {
      st->cmp = DIFF_CMP_ORDERED;
      bs(b, ch(g, 50) ? " ORDER BY id" : " ORDER BY r.id DESC");
      if (ch(g, 40)) {
        st->truncated = 1;
        bp(b, " LIMIT %d", rnd(g, 6));
      }
    }
  } else if (r < 52) {
    bp(b, "SELECT count(*), min(x0), max(x1), count(DISTINCT x0) FROM %s AS r WHERE ", v->name);
    vt_cond(g, b, v, "r");
  } else if (r < 75) {
    const GCol *c;
    const GTab *t = vt_other(g, &c);
    g->tags |= GT_JOIN;
    int k = rnd(g, 4);
    if (k == 0) {
      bp(b, "SELECT r.id, t.%s FROM %s AS r JOIN %s AS t ON r.x0 <= ", c->name, v->name, t->name);
      vt_colnum(b, "t", c, 0);
      bs(b, " AND r.x1 >= ");
      vt_colnum(b, "t", c, 0);
    } else if (k == 1) {
      bp(b, "SELECT t.%s, r.id, r.x1 FROM %s AS t LEFT JOIN %s AS r ON r.id = ", c->name, t->name,
         v->name);
      vt_colnum(b, "t", c, 1);
    } else if (k == 2) {
      bp(b, "SELECT t.%s FROM %s AS t WHERE EXISTS (SELECT 1 FROM %s AS r WHERE r.x0 <= ", c->name,
         t->name, v->name);
      vt_colnum(b, "t", c, 0);
      bs(b, " AND ");
      vt_cond(g, b, v, "r");
      bs(b, ")");
    } else {
      bp(b, "SELECT r.id, count(t.%s) FROM %s AS r, %s AS t WHERE ", c->name, v->name, t->name);
      vt_cond(g, b, v, "r");
      bs(b, " AND r.x1 >= ");
      vt_colnum(b, "t", c, 0);
      bs(b, " GROUP BY r.id");
    }
  } else if (r < 85) {
    bs(b, "SELECT s.value, count(r.id) FROM ");
    vt_series(g, b, NULL, NULL);
    bp(b, " AS s LEFT JOIN %s AS r ON r.x0 <= s.value AND r.x1 >= s.value GROUP BY s.value",
       v->name);
  } else if (r < 93) {
    bp(b, "SELECT id FROM %s WHERE id IN (SELECT value FROM ", v->name);
    vt_series(g, b, NULL, NULL);
    bs(b, ")");
  } else {
    /* the shadow tables: Shale's trees are SQLite's, byte for byte */
    static const char *const sh[] = {"SELECT nodeno, hex(data) FROM %s_node",
                                     "SELECT rowid, nodeno FROM %s_rowid",
                                     "SELECT nodeno, parentnode FROM %s_parent"};
    bp(b, PICK(g, sh), v->name);
  }
}

static void vt_write(DiffGen *g, Buf *b) {
  const GVt *v = vt_pick(g);
  int r = rnd(g, 100);
  if (r < 35) {
    vt_insert(g, b, v, 1 + rnd(g, 4));
  } else if (r < 42) {
    /* ids from tseries: explicit, so the rows do not depend on the order */
    bp(b, "INSERT OR %s INTO %s SELECT value", ch(g, 50) ? "IGNORE" : "REPLACE", v->name);
    for (int d = 0; d < v->ndim; d++) bp(b, ", value, value + %d", rnd(g, 5));
    for (int a = 0; a < v->naux; a++) bs(b, ", 'k' || value");
    bs(b, " FROM ");
    vt_series(g, b, NULL, NULL);
  } else if (r < 70) {
    int d = rnd(g, v->ndim), k = rnd(g, 5);
    bp(b, "UPDATE %s%s AS r SET ", ch(g, 15) ? "OR REPLACE " : "", v->name);
    if (k == 0)
      bp(b, "%s = %s + %d", vt_hi[d], vt_hi[d], rnd(g, 6));
    else if (k == 1)
      bp(b, "%s = %s - %s", vt_lo[d], vt_lo[d], v->i32 ? "3" : "0.1");
    else if (k == 2 && v->naux) {
      bs(b, "p = ");
      lit(g, b, 0);
    } else if (k == 3) {
      bp(b, "%s = ", vt_lo[d]);
      vt_num(g, b, v);
      bp(b, ", %s = ", vt_hi[d]);
      vt_num(g, b, v);
      bp(b, " WHERE id = %d", 1 + rnd(g, 80));
      return;
    } else {
      bp(b, "id = %d WHERE id = %d", 1 + rnd(g, 100), 1 + rnd(g, 80));
      return;
    }
    bs(b, " WHERE ");
    vt_cond(g, b, v, "r");
  } else if (r < 92) {
    bp(b, "DELETE FROM %s AS r WHERE ", v->name);
    if (ch(g, 25)) {
      bs(b, "id IN (SELECT value FROM ");
      vt_series(g, b, NULL, NULL);
      bs(b, ")");
    } else {
      vt_cond(g, b, v, "r");
    }
  } else {
    const GCol *c;
    const GTab *t = vt_other(g, &c);
    bp(b, "DELETE FROM %s WHERE id IN (SELECT CAST(%s AS INTEGER) FROM %s)", v->name, c->name,
       t->name);
  }
}

/* Trigger e (0 INSERT, 1 UPDATE, 2 DELETE) on ordinary table t writing
 * R-Tree v from NEW / OLD column c: ids 101..199 from c, constant boxes and
 * +1 steps, so the rows written do not depend on the order rows change. */
static void vt_trigger(Buf *b, const GTab *t, GCol *c, const GVt *v, int e) {
  static const char *const ev[] = {"INSERT", "UPDATE", "DELETE"};
  c->indexed = 1; /* named by a trigger: never dropped */
  bp(b, "CREATE TRIGGER vtr%d AFTER %s ON %s BEGIN ", e + 1, ev[e], t->name);
  char id[64];
  snprintf(id, sizeof id, "ifnull(CAST(%s.%s AS INTEGER), 0) %% 50 + 150", e ? "OLD" : "NEW",
           c->name);
  if (e == 0) {
    bp(b, "INSERT OR REPLACE INTO %s VALUES (%s", v->name, id);
    for (int d = 0; d < v->ndim; d++) bs(b, ", 0, 1");
    for (int a = 0; a < v->naux; a++) bs(b, ", NULL");
    bs(b, ")");
  } else if (e == 1) {
    bp(b, "UPDATE %s SET x1 = x1 + 1 WHERE id = %s", v->name, id);
  } else {
    bp(b, "DELETE FROM %s WHERE id = %s", v->name, id);
  }
  bs(b, "; END");
}

/* A table of main (the triggers' table: one in another database could not
 * write the R-Tree), or -1. */
static int vt_main_table(const DiffGen *g) {
  for (int i = 0; i < g->ntab; i++)
    if (g->tab[i].db == 0) return i;
  return -1;
}

/* CREATE VIRTUAL TABLE and the first rows, once the round's tables exist,
 * then in half the R-Tree rounds three triggers on a table writing the
 * first R-Tree; 0 if none now. */
static int vtab_pre_turn(DiffGen *g, Buf *b, GenStmt *st) {
  if (g->phase < 1 || g->vt_pre >= 4 * g->vt + 3 * g->vt_trig) return 0;
  uint64_t main_s = vs_enter(g);
  g->tags |= GT_VTAB;
  if (g->vt_pre >= 4 * g->vt) {
    int e = g->vt_pre++ - 4 * g->vt, ti = vt_main_table(g);
    st->kind = GEN_DDL;
    if (ti < 0) {
      g->vt_trig = 0;
      st->kind = GEN_QUERY;
      bs(b, "SELECT 1");
    } else {
      GTab *t = &g->tab[ti];
      if (e == 0) g->vt_trig_col = rnd(g, t->ncol);
      vt_trigger(b, t, &t->col[g->vt_trig_col], &g->vtab[0], e);
    }
    vs_leave(g, main_s);
    return 1;
  }
  GVt *v = &g->vtab[g->vt_pre / 4];
  if (g->vt_pre++ % 4 == 0) {
    st->kind = GEN_DDL;
    vt_create(g, b, v, (int)(v - g->vtab));
  } else {
    st->kind = GEN_WRITE;
    vt_insert(g, b, v, 3 + rnd(g, 6));
  }
  vs_leave(g, main_s);
  return 1;
}

/* One query in eight of an R-Tree round reads an R-Tree, one in thirty of
 * any round tseries; one write in four of an R-Tree round writes one. */
static void vtab_turn(DiffGen *g, Buf *b, GenStmt *st) {
  uint64_t main_s = vs_enter(g);
  int made = g->vt && g->vt_pre >= 4 * g->vt + 3 * g->vt_trig;
  if (st->kind == GEN_QUERY && made && ch(g, 12)) {
    restart(g, b, st, GEN_QUERY);
    g->tags |= GT_VTAB;
    vt_rtree_query(g, b, st);
  } else if (st->kind == GEN_QUERY && ch(g, 3)) {
    restart(g, b, st, GEN_QUERY);
    g->tags |= GT_VTAB;
    vt_series_query(g, b, st);
  } else if (st->kind == GEN_WRITE && made && ch(g, 25)) {
    restart(g, b, st, GEN_WRITE);
    g->tags |= GT_VTAB;
    vt_write(g, b);
  }
  vs_leave(g, main_s);
}

/* ---- the stream ---- */

DiffGen *gen_new(uint64_t seed) {
  DiffGen *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->s = seed * 0x9E3779B97F4A7C15ULL + 0x5851F42D4C957F2DULL;
  if (!g->s) g->s = 1;
  for (int i = 0; i < 4; i++) rnd64(g);
  g->ws = (seed + 1) * 0xD1B54A32D192ED03ULL ^ 0x2545F4914F6CDD1DULL;
  if (!g->ws) g->ws = 1;
  g->fs = (seed + 7) * 0xA0761D6478BD642FULL ^ 0xE7037ED1A0B428DBULL;
  if (!g->fs) g->fs = 1;
  g->as = (seed + 13) * 0x9FB21C651E98DF25ULL ^ 0x94D049BB133111EBULL;
  if (!g->as) g->as = 1;
  g->ns = (seed + 19) * 0xBF58476D1CE4E5B9ULL ^ 0x94D049BB133111EBULL;
  if (!g->ns) g->ns = 1;
  g->vs = (seed + 29) * 0xC2B2AE3D27D4EB4FULL ^ 0x165667B19E3779F9ULL;
  if (!g->vs) g->vs = 1;
  return g;
}

void gen_free(DiffGen *g) {
  if (!g) return;
  free(g->out.z);
  free(g);
}

void gen_next(DiffGen *g, GenStmt *st) {
  Buf *b = &g->out;
  b->n = 0;
  bgrow(b, 1);
  b->z[0] = 0;
  memset(st, 0, sizeof *st);
  g->tags = 0;
  g->nsub = 0;
  st->cmp = DIFF_CMP_BAG;
  if (g->in_round <= 0) {
    g->in_round = 150 + rnd(g, 150);
    g->ntab = 2 + rnd(g, 3);
    g->phase = 0;
    g->next_tab = 0;
    g->nidx = 0;
    g->txn = 0;
    g->has_view = 0;
    st->new_round = 1;
    uint64_t main_s = g->s;
    g->s = g->fs;
    g->fk = ch(g, 25); /* a foreign-key round */
    g->fs = g->s;
    g->s = main_s;
    /* an attach round (never with foreign keys: REFERENCES stay in one database) */
    g->att = ach(g, 30) && !g->fk;
    g->att_pre = g->att_tail = 0;
    g->trig_tab = -1;
    uint64_t ms = vs_enter(g);
    g->vt = ch(g, 35) ? 1 + rnd(g, 2) : 0; /* an R-Tree round */
    g->vt_trig = g->vt && ch(g, 50);
    vs_leave(g, ms);
    g->vt_pre = 0;
  }
  g->in_round--;
  if (attach_turn(g, b, st)) goto done;
  if (vtab_pre_turn(g, b, st)) goto done;
  if (g->phase == 0 && g->fk == 1) {
    st->kind = GEN_DDL;
    g->fk = 2;
    g->tags |= GT_FEATURE;
    bs(b, "PRAGMA foreign_keys = ON");
    goto done;
  }
  if (g->phase == 0) {
    st->kind = GEN_DDL;
    if (g->next_tab == g->ntab) {
      gen_view(g, b); /* after the tables, when this round has a view */
      g->phase = 1;
      g->phase_left = ch(g, 40) ? rnd(g, 3) : 0;
      goto done;
    }
    gen_create_table(g, g->next_tab++, b);
    if (g->next_tab == g->ntab && !ch(g, 35)) {
      g->phase = 1;
      g->phase_left = ch(g, 40) ? rnd(g, 3) : 0;
    }
    goto done;
  }
  if (g->phase == 1) {
    if (g->phase_left-- > 0) {
      st->kind = GEN_DDL;
      gen_index(g, b);
      goto done;
    }
    g->phase = 2;
    g->phase_left = g->ntab * (3 + rnd(g, 3));
  }
  if (g->phase == 2) {
    if (g->phase_left-- > 0) {
      st->kind = GEN_WRITE;
      const GTab *t = &g->tab[g->phase_left % g->ntab];
      insert_values(g, b, t, 2 + rnd(g, 5));
      goto done;
    }
    g->phase = 3;
    g->phase_left = ch(g, 50) ? 1 + rnd(g, 3) : 0;
  }
  if (g->phase == 3) {
    if (g->phase_left-- > 0) {
      st->kind = GEN_DDL;
      gen_index(g, b);
      goto done;
    }
    g->phase = 4;
  }
  int r = rnd(g, 1000);
  if (r < 30) {
    error_stmt(g, b, st);
  } else if (r < 200) {
    st->kind = GEN_WRITE;
    write_stmt(g, b);
    feature_write_turn(g, b, st);
    vtab_turn(g, b, st);
  } else if (r < 215) {
    st->kind = GEN_DDL;
    feature_ddl_turn(g, b, st);
    if (b->n) goto done;
    GTab *t = &g->tab[rnd(g, g->ntab)];
    if (!g->txn && t->ncol < MAXCOL && ch(g, 20))
      alter_add(g, b, t);
    else if (g->nidx && ch(g, 40))
      bp(b, "DROP INDEX IF EXISTS i%d", 1 + rnd(g, g->nidx));
    else
      gen_index(g, b);
  } else if (r < 235) {
    st->kind = GEN_TXN;
    if (g->txn == 0) {
      bs(b, "BEGIN");
      g->txn = 1;
    } else if (g->txn == 1) {
      int x = rnd(g, 3);
      if (x == 0) {
        bs(b, "SAVEPOINT sp");
        g->txn = 2;
      } else {
        bs(b, x == 1 ? "COMMIT" : "ROLLBACK");
        g->txn = 0;
      }
    } else {
      int x = rnd(g, 3);
      bs(b, x == 0 ? "ROLLBACK TO sp" : x == 1 ? "RELEASE sp" : "COMMIT");
      g->txn = x == 0 ? 2 : x == 1 ? 1 : 0;
    }
  } else {
    st->kind = GEN_QUERY;
    int q = rnd(g, 100);
    if (q < 58)
      simple_query(g, b, st);
    else if (q < 85)
      agg_query(g, b, st);
    else
      compound_query(g, b, st);
    window_turn(g, b, st);
    feature_query_turn(g, b, st);
    attach_query_turn(g, b, st);
    vtab_turn(g, b, st);
  }
done:
  st->sql = b->z;
  st->tags = g->tags;
}
