/*
 * slt.c -- sqllogictest script runner: parsing, rendering, sorting, hashing.
 *
 * Owns: the record loop of one script, the label table, value rendering.
 * Follows the record format of ../shared/slt/README.md rule by rule (the
 * rule numbers below refer to that README's "Record format" list).
 *
 * Invariants:
 *  1. Lines are split on LF, one trailing CR removed; '#' lines are dropped
 *     anywhere; blank lines (only " \t\n\v\f\r") end a record (rules 1-2).
 *  2. A query's values are rendered into one arena (SltBuf) as NUL-ended
 *     strings and addressed by offset; sorting permutes offsets (rule 7).
 *  3. Hashes are MD5 over every rendered value followed by "\n" (rule 8).
 *  4. The first query (or skipped query) with a label fixes its MD5; the
 *     label key is its first 20 characters (rule 9).
 */
#include "slt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "md5.h"

int slt_max_details = 10;
void (*slt_fail_hook)(const char *path, int line);

/* ---------------------------------------------------------------- buffers */

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "slt: out of memory\n");
    abort();
  }
  return q;
}

static void buf_reserve(SltBuf *b, size_t extra) {
  if (b->n + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra) cap *= 2;
  b->z = xrealloc(b->z, cap);
  b->cap = cap;
}

static void buf_append(SltBuf *b, const char *z, size_t n) {
  buf_reserve(b, n);
  if (n) memcpy(b->z + b->n, z, n);
  b->n += n;
}

static int is_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* -------------------------------------------------------------- rendering */

int64_t slt_text_to_i64(const char *z, size_t n) {
  size_t i = 0;
  int neg = 0;
  while (i < n && is_space((unsigned char)z[i])) i++;
  if (i < n && (z[i] == '+' || z[i] == '-')) neg = z[i++] == '-';
  uint64_t v = 0;
  int big = 0;
  for (; i < n && z[i] >= '0' && z[i] <= '9'; i++) {
    if (v > (UINT64_MAX - 9) / 10)
      big = 1;
    else
      v = v * 10 + (uint64_t)(z[i] - '0');
  }
  if (neg) return (big || v > (uint64_t)INT64_MAX + 1) ? INT64_MIN : (int64_t)(0 - v);
  return (big || v > (uint64_t)INT64_MAX) ? INT64_MAX : (int64_t)v;
}

double slt_text_to_real(const char *z, size_t n) {
  size_t i = 0, start, nd = 0;
  while (i < n && is_space((unsigned char)z[i])) i++;
  start = i;
  if (i < n && (z[i] == '+' || z[i] == '-')) i++;
  while (i < n && isdigit((unsigned char)z[i])) i++, nd++;
  if (i < n && z[i] == '.') {
    size_t j = i + 1, nf = 0;
    while (j < n && isdigit((unsigned char)z[j])) j++, nf++;
    if (nd || nf) {
      i = j;
      nd += nf;
    }
  }
  if (!nd) return 0.0;
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    size_t j = i + 1, ne = 0;
    if (j < n && (z[j] == '+' || z[j] == '-')) j++;
    while (j < n && isdigit((unsigned char)z[j])) j++, ne++;
    if (ne) i = j;
  }
  char small[64], *tmp = i - start < sizeof small ? small : xrealloc(NULL, i - start + 1);
  memcpy(tmp, z + start, i - start);
  tmp[i - start] = 0;
  double r = strtod(tmp, NULL);
  if (tmp != small) free(tmp);
  return r;
}

static int64_t real_to_i64(double r) {
  if (r != r) return 0;
  if (r <= -9.223372036854775808e18) return INT64_MIN;
  if (r >= 9.223372036854775808e18) return INT64_MAX;
  return (int64_t)r;
}

size_t slt_fmt_real(double r, char *out, size_t cap) {
  if (r != r) return (size_t)snprintf(out, cap, "NaN");
  if (isinf(r)) return (size_t)snprintf(out, cap, r > 0 ? "Inf" : "-Inf");
  if (r == 0.0) return (size_t)snprintf(out, cap, "0.000");
  /* glibc prints the exact binary value with enough decimals (1074 covers
   * every double). D = integer digits then fraction digits; p = point. */
  char d[SLT_REAL_MAX];
  int len = snprintf(d + 1, sizeof d - 1, "%.1074f", fabs(r));
  if (len <= 0 || (size_t)len >= sizeof d - 1) return (size_t)snprintf(out, cap, "?");
  d[0] = '0'; /* room for a carry out of the first digit */
  char *dot = strchr(d + 1, '.');
  int p = (int)(dot - d); /* digits before the point, with the spare 0 */
  memmove(dot, dot + 1, strlen(dot + 1) + 1);
  int nd = (int)strlen(d);
  int s = 0;
  while (s < nd && d[s] == '0') s++;
  int cut = p + 2;                /* index of the 3rd decimal */
  if (s + 15 < cut) cut = s + 15; /* the 16th significant digit */
  if (cut + 1 < nd && d[cut + 1] >= '5') {
    int k = cut;
    while (d[k] == '9') d[k--] = '0';
    d[k]++;
  }
  for (int k = cut + 1; k < p + 3; k++) d[k] = '0';
  /* print: sign, integer digits without leading zeros, point, 3 decimals */
  size_t o = 0;
  char tmp[SLT_REAL_MAX];
  if (r < 0) tmp[o++] = '-';
  int k = 0;
  while (k < p - 1 && d[k] == '0') k++;
  for (; k < p; k++) tmp[o++] = d[k];
  tmp[o++] = '.';
  for (k = p; k < p + 3; k++) tmp[o++] = d[k];
  tmp[o] = 0;
  return (size_t)snprintf(out, cap, "%s", tmp);
}

size_t slt_render(char type, const SltValue *v, SltBuf *out) {
  size_t at = out->n;
  char tmp[SLT_REAL_MAX];
  if (v->type == SLT_NULL) {
    buf_append(out, "NULL", 5);
    return at;
  }
  if (type == 'I') {
    int64_t x;
    if (v->type == SLT_INT)
      x = v->i;
    else if (v->type == SLT_REAL)
      x = real_to_i64(v->r);
    else
      x = slt_text_to_i64(v->z ? v->z : "", v->n);
    int32_t w = (int32_t)(uint32_t)(uint64_t)x; /* low 32 bits, as column_int */
    int n = snprintf(tmp, sizeof tmp, "%d", (int)w);
    buf_append(out, tmp, (size_t)n + 1);
  } else if (type == 'R') {
    double r;
    if (v->type == SLT_REAL)
      r = v->r;
    else if (v->type == SLT_INT)
      r = (double)v->i;
    else
      r = slt_text_to_real(v->z ? v->z : "", v->n);
    size_t n = slt_fmt_real(r, tmp, sizeof tmp);
    buf_append(out, tmp, n + 1);
  } else { /* 'T' */
    const char *z;
    size_t n;
    if (v->type == SLT_INT) {
      n = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v->i);
      z = tmp;
    } else if (v->type == SLT_REAL) {
      /* SQLite's text form of a REAL: 15 significant digits, ".0" added
       * to integral values. Not reached by the corpus (README rule 6). */
      n = (size_t)snprintf(tmp, sizeof tmp, "%.15g", v->r);
      if (!strpbrk(tmp, ".eEin")) {
        memcpy(tmp + n, ".0", 3);
        n += 2;
      }
      z = tmp;
    } else {
      z = v->z;
      n = v->n;
    }
    if (n == 0) {
      buf_append(out, "(empty)", 8);
      return at;
    }
    size_t start = out->n;
    buf_append(out, z, n);
    buf_append(out, "", 1);
    for (size_t i = start; i < start + n; i++) {
      unsigned char c = (unsigned char)out->z[i];
      if (c < 0x20 || c > 0x7e) out->z[i] = '@';
    }
  }
  return at;
}

/* ------------------------------------------------------------- the script */

typedef struct Line {
  char *z; /* NUL-terminated, CR removed */
  int no;  /* 1-based line number */
} Line;

/* Up to four white-space separated tokens of z, copied into t[k]. */
typedef struct Toks {
  int n;
  char t[4][256];
} Toks;

static void tokenize(const char *z, Toks *tk) {
  tk->n = 0;
  while (tk->n < 4) {
    while (*z && is_space((unsigned char)*z)) z++;
    if (!*z) break;
    size_t k = 0;
    while (*z && !is_space((unsigned char)*z)) {
      if (k < sizeof tk->t[0] - 1) tk->t[tk->n][k++] = *z;
      z++;
    }
    tk->t[tk->n][k] = 0;
    tk->n++;
  }
}

static long leading_int(const char *z) {
  while (*z && is_space((unsigned char)*z)) z++;
  return strtol(z, NULL, 10);
}

/* "<count> values hashing to <md5>": the md5 token (1..32 non-space chars)
 * into h; 0 when the line has another form. */
static int hash_line(const char *z, char h[33]) {
  while (is_space((unsigned char)*z)) z++;
  if (*z == '+' || *z == '-') z++;
  if (!isdigit((unsigned char)*z)) return 0;
  while (isdigit((unsigned char)*z)) z++;
  static const char mid[] = " values hashing to ";
  if (strncmp(z, mid, sizeof mid - 1)) return 0;
  z += sizeof mid - 1;
  size_t k = 0;
  while (z[k] && !is_space((unsigned char)z[k]) && k < 32) h[k] = z[k], k++;
  h[k] = 0;
  return k > 0;
}

/* ---- label table: open addressing, key = first 20 chars of the label */

typedef struct Label {
  char key[21];
  char md5[33];
} Label;

typedef struct Labels {
  Label *v;
  size_t n, cap; /* cap is a power of two or 0 */
} Labels;

static uint64_t fnv(const char *z) {
  uint64_t h = 1469598103934665603ULL;
  while (*z) h = (h ^ (unsigned char)*z++) * 1099511628211ULL;
  return h;
}

/* Register md5 for label; returns 1 when it agrees with the first one. */
static int label_check(Labels *L, const char *label, const char *md5) {
  char key[21];
  snprintf(key, sizeof key, "%s", label);
  if ((L->n + 1) * 2 > L->cap) {
    size_t ncap = L->cap ? L->cap * 2 : 64;
    Label *nv = calloc(ncap, sizeof *nv);
    if (!nv) abort();
    for (size_t i = 0; i < L->cap; i++) {
      if (!L->v[i].key[0]) continue;
      size_t j = fnv(L->v[i].key) & (ncap - 1);
      while (nv[j].key[0]) j = (j + 1) & (ncap - 1);
      nv[j] = L->v[i];
    }
    free(L->v);
    L->v = nv;
    L->cap = ncap;
  }
  size_t j = fnv(key) & (L->cap - 1);
  while (L->v[j].key[0]) {
    if (!strcmp(L->v[j].key, key)) return !strcmp(L->v[j].md5, md5);
    j = (j + 1) & (L->cap - 1);
  }
  memcpy(L->v[j].key, key, sizeof key);
  snprintf(L->v[j].md5, sizeof L->v[j].md5, "%s", md5);
  L->n++;
  return 1;
}

/* ---- one query's result */

typedef struct Result {
  SltBuf arena; /* rendered values, NUL-ended */
  size_t *off;  /* offset of each value in arena */
  size_t n, cap;
  const char *types;
  int ntypes;
  int bad_ncol; /* engine's column count differs from the type string */
  int ncol;
} Result;

static int on_row(void *ctx, int ncol, const SltValue *row) {
  Result *R = ctx;
  if (ncol != R->ntypes) {
    R->bad_ncol = 1;
    R->ncol = ncol;
    return 1;
  }
  if (R->n + (size_t)ncol > R->cap) {
    R->cap = R->cap ? R->cap * 2 : 64;
    while (R->cap < R->n + (size_t)ncol) R->cap *= 2;
    R->off = xrealloc(R->off, R->cap * sizeof *R->off);
  }
  for (int i = 0; i < ncol; i++) R->off[R->n++] = slt_render(R->types[i], &row[i], &R->arena);
  return 0;
}

static const char *sort_base;
static int sort_width;

static int cmp_value(const void *a, const void *b) {
  return strcmp(sort_base + *(const size_t *)a, sort_base + *(const size_t *)b);
}

static int cmp_row(const void *a, const void *b) {
  const size_t *x = a, *y = b;
  for (int i = 0; i < sort_width; i++) {
    int c = strcmp(sort_base + x[i], sort_base + y[i]);
    if (c) return c;
  }
  return 0;
}

/* ---- the record loop */

typedef struct Run {
  const char *path;
  SltStats *st;
  int shown;
} Run;

static void print_sql(const char *sql) {
  printf("    SQL: ");
  int k = 0;
  for (const char *p = sql; *p && k < 400; p++, k++) {
    putchar(*p);
    if (*p == '\n') printf("         ");
  }
  printf("%s\n", k >= 400 ? "..." : "");
}

static void fail(Run *run, int line, const char *sql, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static void fail(Run *run, int line, const char *sql, const char *fmt, ...) {
  run->st->failed++;
  if (slt_fail_hook) slt_fail_hook(run->path, line);
  if (run->shown >= slt_max_details) return;
  run->shown++;
  va_list ap;
  va_start(ap, fmt);
  printf("%s:%d: ", run->path, line);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (sql) print_sql(sql);
}

static char *join_lines(Line *l, int n) {
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(l[i].z) + 1;
  char *s = xrealloc(NULL, len), *o = s;
  for (int i = 0; i < n; i++) {
    size_t k = strlen(l[i].z);
    memcpy(o, l[i].z, k);
    o += k;
    if (i + 1 < n) *o++ = '\n';
  }
  *o = 0;
  return s;
}

static void md5_values(const char *base, const size_t *off, size_t n, char hex[33]) {
  SltMd5 m;
  slt_md5_init(&m);
  for (size_t i = 0; i < n; i++) {
    slt_md5_update(&m, base + off[i], strlen(base + off[i]));
    slt_md5_update(&m, "\n", 1);
  }
  slt_md5_hex(&m, hex);
}

static void md5_lines(Line *l, int n, char hex[33]) {
  SltMd5 m;
  slt_md5_init(&m);
  for (int i = 0; i < n; i++) {
    slt_md5_update(&m, l[i].z, strlen(l[i].z));
    slt_md5_update(&m, "\n", 1);
  }
  slt_md5_hex(&m, hex);
}

static void do_query(const SltEngine *e, void *h, Run *run, Labels *labels, int hash_threshold,
                     Toks *tk, int lineno, Line *body, int nbody) {
  const char *types = tk->n > 1 ? tk->t[1] : "";
  const char *sortmode = tk->n > 2 ? tk->t[2] : "nosort";
  const char *label = tk->n > 3 ? tk->t[3] : NULL;
  if (strspn(types, "ITR") != strlen(types)) {
    fail(run, lineno, NULL, "unknown type character in type string '%s'", types);
    return;
  }
  int cut = nbody;
  for (int i = 0; i < nbody; i++)
    if (!strcmp(body[i].z, "----")) {
      cut = i;
      break;
    }
  char *sql = join_lines(body, cut);
  Line *exp = body + (cut < nbody ? cut + 1 : nbody);
  int nexp = cut < nbody ? nbody - cut - 1 : 0;

  Result R;
  memset(&R, 0, sizeof R);
  R.types = types;
  R.ntypes = (int)strlen(types);
  int ncol = -1;
  int rc = e->query(h, sql, &ncol, on_row, &R);
  if (rc == SLT_ERROR) {
    fail(run, lineno, sql, "query failed: %s", e->errmsg(h));
    goto done;
  }
  if (R.bad_ncol || ncol != R.ntypes) {
    fail(run, lineno, sql, "wrong number of result columns: expected %d but got %d", R.ntypes,
         R.bad_ncol ? R.ncol : ncol);
    goto done;
  }
  if (rc == SLT_STEP_ERROR) run->st->step_errors++;
  sort_base = R.arena.z;
  if (!strcmp(sortmode, "rowsort")) {
    sort_width = R.ntypes;
    if (R.n) qsort(R.off, R.n / (size_t)R.ntypes, sizeof(size_t) * (size_t)R.ntypes, cmp_row);
  } else if (!strcmp(sortmode, "valuesort")) {
    if (R.n) qsort(R.off, R.n, sizeof(size_t), cmp_value);
  } else if (strcmp(sortmode, "nosort")) {
    fail(run, lineno, sql, "unknown sort method: '%s'", sortmode);
    goto done;
  }
  int hashed = hash_threshold > 0 && R.n > (size_t)hash_threshold;
  char digest[33] = "";
  if (hashed || label) md5_values(R.arena.z, R.off, R.n, digest);
  int ok = 1;
  if (hashed) {
    char got[80];
    snprintf(got, sizeof got, "%zu values hashing to %s", R.n, digest);
    const char *want = nexp ? exp[0].z : "<no expected result>";
    if (strcmp(want, got)) {
      ok = 0;
      fail(run, lineno, sql, "wrong result hash: expected [%s] got [%s]", want, got);
    }
  } else {
    size_t i;
    for (i = 0; i < R.n && i < (size_t)nexp; i++)
      if (strcmp(exp[i].z, R.arena.z + R.off[i])) break;
    if (i < R.n && i < (size_t)nexp) {
      ok = 0;
      fail(run, lineno, sql, "wrong result: value %zu of %zu: expected [%s] got [%s]", i + 1, R.n,
           exp[i].z, R.arena.z + R.off[i]);
    } else if (R.n != (size_t)nexp) {
      char hx[33];
      ok = 0;
      fail(run, lineno, sql, "wrong number of result values: expected %d got %zu%s", nexp, R.n,
           nexp && hash_line(exp[0].z, hx) ? " (expected a hash: check hash-threshold)" : "");
    }
  }
  if (label && !label_check(labels, label, digest)) {
    if (ok)
      fail(run, lineno, sql, "labeled result [%.20s] does not agree with previous values", label);
    ok = 0;
  }
  if (ok) run->st->passed++;
done:
  free(sql);
  free(R.arena.z);
  free(R.off);
}

static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  SltBuf b = {0};
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&b, chunk, k);
  fclose(f);
  buf_append(&b, "", 1);
  *n = b.n - 1;
  return b.z;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int slt_run_file(const SltEngine *e, const char *path, SltStats *st) {
  memset(st, 0, sizeof *st);
  double t0 = now();
  Run run = {path, st, 0};
  size_t size;
  char *data = read_file(path, &size);
  if (!data) {
    st->status = SLT_IO_ERROR;
    fail(&run, 0, NULL, "cannot read file: %s", strerror(errno));
    return 1;
  }
  /* split into lines (invariant 1) */
  size_t nlines = 1;
  for (size_t i = 0; i < size; i++) nlines += data[i] == '\n';
  Line *lines = xrealloc(NULL, nlines * sizeof *lines);
  size_t nl = 0;
  for (char *p = data, *end = data + size; p <= end;) {
    char *q = memchr(p, '\n', (size_t)(end - p));
    if (!q) q = end;
    *q = 0;
    if (q > p && q[-1] == '\r') q[-1] = 0;
    lines[nl].z = p;
    lines[nl].no = (int)nl + 1;
    nl++;
    p = q + 1;
  }
  /* scratch directory and database (slt.h invariant 1) */
  const char *tmp = getenv("TMPDIR");
  char dir[4096], dbpath[4200];
  snprintf(dir, sizeof dir, "%s/shale-slt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  void *h = NULL;
  if (!mkdtemp(dir)) {
    st->status = SLT_IO_ERROR;
    fail(&run, 0, NULL, "cannot make scratch directory: %s", strerror(errno));
    goto out;
  }
  snprintf(dbpath, sizeof dbpath, "%s/test.db", dir);
  h = e->open(dbpath);
  if (!h) {
    st->status = SLT_IO_ERROR;
    fail(&run, 0, NULL, "cannot open %s", dbpath);
    goto cleanup;
  }
  e->exec(h, "PRAGMA synchronous=OFF"); /* errors ignored, as the reference */

  int hash_threshold = 8;
  Labels labels = {0};
  Line *rec = xrealloc(NULL, nl * sizeof *rec);
  size_t i = 0;
  while (i < nl) {
    /* gather one record: consecutive non-blank lines, comments dropped */
    int nrec = 0;
    for (; i < nl; i++) {
      const char *z = lines[i].z;
      if (z[0] == '#') continue;
      const char *p = z;
      while (*p && is_space((unsigned char)*p)) p++;
      if (!*p) {
        if (nrec) break;
        continue;
      }
      rec[nrec++] = lines[i];
    }
    if (!nrec) break;
    /* conditions (rule 3) */
    Toks tk;
    int k = 0, skip = 0;
    tokenize(rec[0].z, &tk);
    while (tk.n && (!strcmp(tk.t[0], "skipif") || !strcmp(tk.t[0], "onlyif"))) {
      int match = tk.n > 1 && !strcasecmp(tk.t[1], e->name);
      if (tk.t[0][0] == 's' ? match : !match) skip = 1;
      k++;
      if (k < nrec)
        tokenize(rec[k].z, &tk);
      else
        tk.n = 0;
    }
    int lineno = k < nrec ? rec[k].no : rec[0].no;
    Line *body = rec + k + 1;
    int nbody = nrec - k - 1 > 0 ? nrec - k - 1 : 0;
    const char *kind = tk.n ? tk.t[0] : "";

    if (skip) {
      st->skipped++;
      if (!strcmp(kind, "query") && tk.n > 3) {
        for (int j = 0; j < nbody; j++) {
          if (strcmp(body[j].z, "----")) continue;
          if (j + 1 < nbody) {
            char hx[33];
            if (!hash_line(body[j + 1].z, hx)) md5_lines(body + j + 1, nbody - j - 1, hx);
            if (!label_check(&labels, tk.t[3], hx))
              fail(&run, lineno, NULL,
                   "labeled result [%.20s] does not agree with previous values (skipped record)",
                   tk.t[3]);
          }
          break;
        }
      }
      continue;
    }
    if (!strcmp(kind, "statement")) {
      char *sql = join_lines(body, nbody);
      const char *mode = tk.n > 1 ? tk.t[1] : "";
      int err = e->exec(h, sql);
      if (!strcmp(mode, "ok")) {
        if (!err)
          st->passed++;
        else
          fail(&run, lineno, sql, "statement ok failed: %s", e->errmsg(h));
      } else if (!strcmp(mode, "error")) {
        if (err)
          st->passed++;
        else
          fail(&run, lineno, sql, "statement error succeeded");
      } else {
        fail(&run, lineno, sql, "statement argument should be 'ok' or 'error'");
      }
      free(sql);
    } else if (!strcmp(kind, "query")) {
      if (tk.n < 2) {
        fail(&run, lineno, NULL, "missing type string");
        st->status = SLT_BAD_SCRIPT;
        break;
      }
      do_query(e, h, &run, &labels, hash_threshold, &tk, lineno, body, nbody);
    } else if (!strcmp(kind, "hash-threshold")) {
      hash_threshold = (int)leading_int(tk.n > 1 ? tk.t[1] : "");
    } else if (!strcmp(kind, "halt")) {
      st->status = SLT_HALT;
      break;
    } else {
      fail(&run, lineno, NULL, "unknown record type: '%s'", kind);
      st->status = SLT_BAD_SCRIPT;
      break;
    }
  }
  free(rec);
  free(labels.v);
  if (e->close(h)) fail(&run, 0, NULL, "close failed");
cleanup : {
  static const char *suffix[] = {"", "-journal", "-wal", "-shm"};
  for (int s = 0; s < 4; s++) {
    char f[4300];
    snprintf(f, sizeof f, "%s%s", dbpath, suffix[s]);
    unlink(f);
  }
  rmdir(dir);
}
out:
  free(lines);
  free(data);
  st->seconds = now() - t0;
  return st->failed != 0;
}

/* Default subset: every small file plus one of each generated kind. */
int slt_in_quick_subset(const char *rel) {
  static const char *pick[] = {
      "evidence/",
      "select1.test",
      "select2.test",
      "select3.test",
      "select5.test",
      "index/between/10/slt_good_1.test",
      "index/commute/10/slt_good_0.test",
      "index/delete/10/slt_good_0.test",
      "index/in/10/slt_good_3.test",
      "index/orderby/10/slt_good_0.test",
      "index/orderby_nosort/10/slt_good_0.test",
      "index/random/10/slt_good_0.test",
      "index/random/1000/slt_good_2.test",
      "index/view/10/slt_good_1.test",
      "random/aggregates/slt_good_0.test",
      "random/expr/slt_good_0.test",
      "random/groupby/slt_good_0.test",
      "random/select/slt_good_0.test",
  };
  for (size_t i = 0; i < sizeof pick / sizeof pick[0]; i++)
    if (!strncmp(rel, pick[i], strlen(pick[i]))) return 1;
  return 0;
}
