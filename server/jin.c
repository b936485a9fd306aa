/*
 * jin.c -- requests parsed: a JSON reader into a read-only tree of JV nodes
 * kept in an arena (JDoc) that is emptied, not freed, between requests, so
 * a request costs no allocation once the arena has grown to its size. It
 * accepts what jansson's json_loadb(..., JSON_ALLOW_NUL) accepts (RFC 8259;
 * "\u0000" allowed inside strings), with the same limits: integers that do
 * not fit 64 bits and reals that overflow are errors, nesting is at most
 * JV_DEPTH deep, strings must be valid UTF-8 (no lone surrogates).
 *
 * Invariants:
 *  1. A node and everything under it live in its JDoc's arena until the
 *     next jdoc_parse or jdoc_free on it: nothing is freed node by node.
 *  2. An array's or object's members are contiguous (u.kids[0..n)); an
 *     object member carries its key; the last of duplicate keys wins.
 *  3. A string node's text is NUL-terminated, its length (n) counts bytes
 *     and may include NULs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define JV_DEPTH 2048

typedef struct JBlock {
  struct JBlock *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char mem[];
} JBlock;

typedef struct {
  JDoc *d;
  const unsigned char *start, *p, *end;
  int depth;
  char *err;
  size_t errn;
} JParse;

static void *arena(JDoc *d, size_t n) {
  n = (n + 15) & ~(size_t)15;
  JBlock *b = d->blocks;
  if (!b || b->used + n > b->cap) {
    size_t cap = b && b->cap * 2 > n ? b->cap * 2 : n > 16384 ? n : 16384;
    JBlock *nb = malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->next = b;
    nb->used = 0;
    nb->cap = cap;
    d->blocks = b = nb;
  }
  void *r = b->mem + b->used;
  b->used += n;
  return r;
}

/* Free every block but the newest (the largest), and empty it. */
static void arena_reset(JDoc *d) {
  JBlock *b = d->blocks;
  if (!b) return;
  for (JBlock *o = b->next, *next; o; o = next) {
    next = o->next;
    free(o);
  }
  b->next = NULL;
  b->used = 0;
  d->n_stack = 0;
}

void jdoc_free(JDoc *d) {
  arena_reset(d);
  free(d->blocks);
  free(d->stack);
  memset(d, 0, sizeof *d);
}

static int fail(JParse *q, const char *what) {
  if (q->err && !q->err[0])
    snprintf(q->err, q->errn, "%s near byte %zu", what, (size_t)(q->p - q->start));
  return -1;
}

static void skip_ws(JParse *q) {
  while (q->p < q->end && (*q->p == ' ' || *q->p == '\n' || *q->p == '\r' || *q->p == '\t')) q->p++;
}

/* A new slot on the member stack. */
static JV *push(JParse *q) {
  JDoc *d = q->d;
  if (d->n_stack == d->cap_stack) {
    size_t cap = d->cap_stack ? d->cap_stack * 2 : 64;
    JV *s = realloc(d->stack, cap * sizeof *s);
    if (!s) return NULL;
    d->stack = s;
    d->cap_stack = cap;
  }
  JV *v = &d->stack[d->n_stack++];
  memset(v, 0, sizeof *v);
  return v;
}

static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i], h = c >= '0' && c <= '9'   ? c - '0'
                           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : 16;
    if (h == 16) return -1;
    v = v << 4 | h;
  }
  *out = v;
  return 0;
}

/* The string at q->p (after its opening quote) into the arena. */
static int parse_string(JParse *q, const char **out, uint32_t *len) {
  const unsigned char *s = q->p, *e = s;
  while (e < q->end && *e != '"') e += *e == '\\' && e + 1 < q->end ? 2 : 1;
  if (e >= q->end) return fail(q, "unterminated string");
  char *dst = arena(q->d, (size_t)(e - s) + 1), *o = dst;
  if (!dst) return fail(q, "out of memory");
  while (s < e) {
    unsigned c = *s;
    if (c == '\\') {
      c = s[1];
      s += 2;
      switch (c) {
        case '"':
          *o++ = '"';
          break;
        case '\\':
          *o++ = '\\';
          break;
        case '/':
          *o++ = '/';
          break;
        case 'b':
          *o++ = '\b';
          break;
        case 'f':
          *o++ = '\f';
          break;
        case 'n':
          *o++ = '\n';
          break;
        case 'r':
          *o++ = '\r';
          break;
        case 't':
          *o++ = '\t';
          break;
        case 'u': {
          unsigned cp, lo;
          if (e - s < 4 || hex4(s, &cp)) return q->p = s, fail(q, "invalid \\u escape");
          s += 4;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return q->p = s, fail(q, "invalid Unicode escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (e - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) || lo < 0xDC00 ||
                lo > 0xDFFF)
              return q->p = s, fail(q, "invalid Unicode surrogate pair");
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          if (cp < 0x80) {
            *o++ = (char)cp;
          } else if (cp < 0x800) {
            *o++ = (char)(0xC0 | cp >> 6);
            *o++ = (char)(0x80 | (cp & 0x3F));
          } else if (cp < 0x10000) {
            *o++ = (char)(0xE0 | cp >> 12);
            *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
            *o++ = (char)(0x80 | (cp & 0x3F));
          } else {
            *o++ = (char)(0xF0 | cp >> 18);
            *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
            *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
            *o++ = (char)(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          return q->p = s, fail(q, "invalid escape");
      }
    } else if (c < 0x20) {
      return q->p = s, fail(q, "control character in a string");
    } else if (c < 0x80) {
      *o++ = (char)c;
      s++;
    } else {
      size_t k = jutf8_len(s, (size_t)(e - s));
      if (!k) return q->p = s, fail(q, "invalid UTF-8 in a string");
      memcpy(o, s, k);
      o += k;
      s += k;
    }
  }
  *o = 0;
  *out = dst;
  *len = (uint32_t)(o - dst);
  q->p = e + 1;
  return 0;
}

static int parse_number(JParse *q, JV *v) {
  const unsigned char *s = q->p, *p = s;
  int is_real = 0;
  if (p < q->end && *p == '-') p++;
  if (p < q->end && *p == '0')
    p++;
  else if (p < q->end && *p >= '1' && *p <= '9')
    while (p < q->end && *p >= '0' && *p <= '9') p++;
  else
    return fail(q, "invalid number");
  if (p < q->end && *p == '.') {
    is_real = 1;
    p++;
    if (p >= q->end || *p < '0' || *p > '9') return fail(q, "invalid number");
    while (p < q->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < q->end && (*p == 'e' || *p == 'E')) {
    is_real = 1;
    p++;
    if (p < q->end && (*p == '+' || *p == '-')) p++;
    if (p >= q->end || *p < '0' || *p > '9') return fail(q, "invalid number");
    while (p < q->end && *p >= '0' && *p <= '9') p++;
  }
  char buf[64], *tmp = buf;
  size_t n = (size_t)(p - s);
  if (n >= sizeof buf && !(tmp = arena(q->d, n + 1))) return fail(q, "out of memory");
  memcpy(tmp, s, n);
  tmp[n] = 0;
  errno = 0;
  if (is_real) {
    v->type = JV_REAL;
    v->u.d = strtod(tmp, NULL);
    if (isinf(v->u.d)) return fail(q, "real number overflow");
  } else {
    v->type = JV_INT;
    v->u.i = strtoll(tmp, NULL, 10);
    if (errno == ERANGE) return fail(q, "too big integer");
  }
  q->p = p;
  return 0;
}

static int parse_value(JParse *q, JV *v);

/* An array or object after its opening bracket: members on the stack, then
 * copied to the arena. */
static int parse_members(JParse *q, JV *v, int is_obj) {
  JDoc *d = q->d;
  size_t base = d->n_stack;
  unsigned char close = is_obj ? '}' : ']';
  if (++q->depth > JV_DEPTH) return fail(q, "maximum parsing depth reached");
  v->type = is_obj ? JV_OBJ : JV_ARR;
  skip_ws(q);
  if (q->p < q->end && *q->p == close) {
    q->p++;
  } else {
    for (;;) {
      const char *key = NULL;
      uint32_t key_n = 0;
      skip_ws(q);
      if (is_obj) {
        if (q->p >= q->end || *q->p != '"') return fail(q, "string or '}' expected");
        q->p++;
        if (parse_string(q, &key, &key_n)) return -1;
        skip_ws(q);
        if (q->p >= q->end || *q->p != ':') return fail(q, "':' expected");
        q->p++;
      }
      JV m;
      memset(&m, 0, sizeof m);
      if (parse_value(q, &m)) return -1;
      m.key = key;
      m.key_n = key_n;
      JV *slot = push(q);
      if (!slot) return fail(q, "out of memory");
      *slot = m;
      skip_ws(q);
      if (q->p < q->end && *q->p == ',') {
        q->p++;
        continue;
      }
      if (q->p < q->end && *q->p == close) {
        q->p++;
        break;
      }
      return fail(q, is_obj ? "',' or '}' expected" : "',' or ']' expected");
    }
  }
  size_t n = d->n_stack - base;
  if (n > UINT32_MAX) return fail(q, "too many members");
  v->n = (uint32_t)n;
  if (n) {
    JV *kids = arena(d, n * sizeof *kids);
    if (!kids) return fail(q, "out of memory");
    memcpy(kids, d->stack + base, n * sizeof *kids);
    v->u.kids = kids;
  }
  d->n_stack = base;
  q->depth--;
  return 0;
}

static int literal(JParse *q, const char *word, size_t n, int type, JV *v) {
  if ((size_t)(q->end - q->p) < n || memcmp(q->p, word, n)) return fail(q, "invalid token");
  q->p += n;
  v->type = (unsigned char)type;
  return 0;
}

static int parse_value(JParse *q, JV *v) {
  skip_ws(q);
  if (q->p >= q->end) return fail(q, "unexpected end of input");
  switch (*q->p) {
    case '{':
      q->p++;
      return parse_members(q, v, 1);
    case '[':
      q->p++;
      return parse_members(q, v, 0);
    case '"':
      q->p++;
      v->type = JV_STR;
      return parse_string(q, &v->u.s, &v->n);
    case 't':
      return literal(q, "true", 4, JV_TRUE, v);
    case 'f':
      return literal(q, "false", 5, JV_FALSE, v);
    case 'n':
      return literal(q, "null", 4, JV_NULL, v);
    default:
      return parse_number(q, v);
  }
}

const JV *jdoc_parse(JDoc *d, const char *text, size_t n, char *err, size_t errn) {
  const unsigned char *t = (const unsigned char *)text;
  JParse q = {d, t, t, t + n, 0, err, errn};
  if (err && errn) err[0] = 0;
  arena_reset(d);
  JV *root = arena(d, sizeof *root);
  if (!root) return fail(&q, "out of memory"), NULL;
  memset(root, 0, sizeof *root);
  if (parse_value(&q, root)) return NULL;
  skip_ws(&q);
  if (q.p != q.end) return fail(&q, "end of input expected"), NULL;
  return root;
}

const JV *jv_get(const JV *o, const char *key) {
  if (!o || o->type != JV_OBJ) return NULL;
  size_t n = strlen(key);
  for (uint32_t i = o->n; i-- > 0;) {
    const JV *m = &o->u.kids[i];
    if (m->key_n == n && !memcmp(m->key, key, n)) return m;
  }
  return NULL;
}

const JV *jv_at(const JV *a, size_t i) {
  return a && a->type == JV_ARR && i < a->n ? &a->u.kids[i] : NULL;
}
