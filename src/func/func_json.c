/*
 * func_json.c -- SQLite 3.40.1's JSON functions (text JSON in and out):
 * json, json_array, json_object, json_quote, json_extract, -> and ->>,
 * json_type, json_valid, json_array_length, json_insert, json_replace,
 * json_set, json_remove, json_patch, the aggregates json_group_array and
 * json_group_object (with window value/inverse), and the walk behind the
 * json_each and json_tree virtual tables (FuncJsonEach; their module is
 * src/vtab/vtab_json.c).
 *
 * Owns the func_json_defs table.
 *
 * A JSON text is parsed into a flat array of nodes in document order (a
 * container is followed by its subtree; an object's members are a label
 * node then the value's nodes). Edits never move nodes: they set flags
 * (removed, replaced by an SQL argument, patched) or link a container to a
 * continuation container appended at the end of the array, and rendering
 * follows those marks. The node numbering is the `id` column of
 * json_each/json_tree, so it matches SQLite's.
 *
 * Invariants:
 *  1. The parser accepts exactly RFC 8259 JSON (depth <= 2000); anything
 *     else is "malformed JSON". Scalars and labels keep pointers into the
 *     parsed text (owned by the JParse), which is rendered verbatim.
 *  2. Results that are JSON text carry subtype 'J' (JSON_SUBTYPE); a text
 *     argument with that subtype is inserted as JSON, any other text is
 *     quoted as a JSON string.
 *  3. Path errors report the unparsed rest of the path: "JSON path error
 *     near '...'" (single quotes doubled); a path that does not match is
 *     NULL (or no change), never an error.
 */
#include <stdio.h>
#include <string.h>

#include "func_int.h"

#define JSON_SUBTYPE 74 /* 'J' */
#define JSON_MAX_DEPTH 2000

enum { JT_NULL, JT_TRUE, JT_FALSE, JT_INT, JT_REAL, JT_STRING, JT_ARRAY, JT_OBJECT };
static const char *const jtype_names[] = {"null", "true", "false", "integer",
                                          "real", "text", "array", "object"};

#define JF_ESCAPE 0x01  /* string contains backslash escapes */
#define JF_RAW 0x02     /* z[0..n) is unquoted SQL text (a label made by an edit) */
#define JF_REMOVE 0x04  /* removed by json_remove / json_patch */
#define JF_REPLACE 0x08 /* rendered as the SQL argument repl */
#define JF_PATCH 0x10   /* rendered as node patch (another parse) */
#define JF_LABEL 0x20   /* an object member's label */
#define JF_APPEND 0x40  /* more children in the container at index +app */

typedef struct JNode JNode;
struct JNode {
  uint8_t type, flags;
  uint32_t n;    /* scalar: bytes of z; container: nodes in its subtree */
  const char *z; /* scalar text (strings with their quotes, unless JF_RAW) */
  uint32_t app;  /* JF_APPEND: offset of the continuation container */
  int repl;      /* JF_REPLACE: index into the call's arguments */
  JNode *patch;  /* JF_PATCH */
  uint32_t key;  /* json_tree: current array index while iterating */
};

typedef struct JParse {
  JNode *a;
  uint32_t n, cap;
  char *text; /* NUL-terminated copy of the JSON text */
  uint32_t ntext;
  int depth;
  int oom;
  uint32_t *up; /* parent of each node (json_tree), or NULL */
} JParse;

static void jparse_free(JParse *p) {
  shale_free(p->a);
  shale_free(p->text);
  shale_free(p->up);
  memset(p, 0, sizeof *p);
}

static int jadd(JParse *p, int type, uint32_t n, const char *z) {
  if (p->n >= p->cap) {
    uint32_t cap = p->cap ? p->cap * 2 : 16;
    JNode *a = shale_realloc(p->a, sizeof(JNode) * cap);
    if (!a) {
      p->oom = 1;
      return -1;
    }
    p->a = a;
    p->cap = cap;
  }
  JNode *x = &p->a[p->n];
  memset(x, 0, sizeof *x);
  x->type = (uint8_t)type;
  x->n = n;
  x->z = z;
  return (int)p->n++;
}

static int jspace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int jdigit(char c) { return c >= '0' && c <= '9'; }
static int jalnum(char c) { return jdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int jhex(char c) { return jdigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int jhexval(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

static uint32_t jsize(const JNode *x) { return x->type >= JT_ARRAY ? x->n + 1 : 1; }

/* Parse one value at z[i]; returns the index after it, or -1 (error), -2
 * ('}' seen), -3 (']' seen), 0 (end of text). */
static int64_t jparse_value(JParse *p, uint32_t i) {
  const char *z = p->text;
  while (jspace(z[i])) i++;
  char c = z[i];
  if (c == '{' || c == '[') {
    int obj = c == '{';
    int self = jadd(p, obj ? JT_OBJECT : JT_ARRAY, 0, NULL);
    if (self < 0) return -1;
    uint32_t j = i + 1;
    for (;; j++) {
      while (jspace(z[j])) j++;
      if (++p->depth > JSON_MAX_DEPTH) return -1;
      int64_t x = jparse_value(p, j);
      if (x <= 0) {
        p->depth--;
        if (x == (obj ? -2 : -3) && p->n == (uint32_t)self + 1) return j + 1;
        return -1;
      }
      if (p->oom) return -1;
      if (obj) {
        JNode *lab = &p->a[p->n - 1];
        if (lab->type != JT_STRING) return -1;
        lab->flags |= JF_LABEL;
        j = (uint32_t)x;
        while (jspace(z[j])) j++;
        if (z[j] != ':') return -1;
        j++;
        x = jparse_value(p, j);
        if (x <= 0) {
          p->depth--;
          return -1;
        }
      }
      p->depth--;
      j = (uint32_t)x;
      while (jspace(z[j])) j++;
      if (z[j] == ',') continue;
      if (z[j] != (obj ? '}' : ']')) return -1;
      break;
    }
    p->a[self].n = p->n - (uint32_t)self - 1;
    return j + 1;
  }
  if (c == '"') {
    uint8_t fl = 0;
    uint32_t j = i + 1;
    for (;;) {
      c = z[j];
      if ((c & ~0x1f) == 0) return -1; /* control characters and the end */
      if (c == '\\') {
        c = z[++j];
        if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
            c == 't' ||
            (c == 'u' && jhex(z[j + 1]) && jhex(z[j + 2]) && jhex(z[j + 3]) && jhex(z[j + 4])))
          fl = JF_ESCAPE;
        else
          return -1;
      } else if (c == '"') {
        break;
      }
      j++;
    }
    int k = jadd(p, JT_STRING, j + 1 - i, z + i);
    if (k >= 0) p->a[k].flags = fl;
    return j + 1;
  }
  if (c == 'n' && strncmp(z + i, "null", 4) == 0 && !jalnum(z[i + 4])) {
    jadd(p, JT_NULL, 0, NULL);
    return i + 4;
  }
  if (c == 't' && strncmp(z + i, "true", 4) == 0 && !jalnum(z[i + 4])) {
    jadd(p, JT_TRUE, 0, NULL);
    return i + 4;
  }
  if (c == 'f' && strncmp(z + i, "false", 5) == 0 && !jalnum(z[i + 5])) {
    jadd(p, JT_FALSE, 0, NULL);
    return i + 5;
  }
  if (c == '-' || jdigit(c)) {
    int dp = 0, ex = 0;
    uint32_t j;
    if (c <= '0') {
      j = c == '-' ? i + 1 : i;
      if (z[j] == '0' && jdigit(z[j + 1])) return -1;
    }
    for (j = i + 1;; j++) {
      c = z[j];
      if (jdigit(c)) continue;
      if (c == '.') {
        if (z[j - 1] == '-' || dp) return -1;
        dp = 1;
        continue;
      }
      if (c == 'e' || c == 'E') {
        if (z[j - 1] < '0' || ex) return -1;
        dp = ex = 1;
        c = z[j + 1];
        if (c == '+' || c == '-') {
          j++;
          c = z[j + 1];
        }
        if (!jdigit(c)) return -1;
        continue;
      }
      break;
    }
    if (z[j - 1] < '0') return -1;
    jadd(p, dp ? JT_REAL : JT_INT, j - i, z + i);
    return j;
  }
  if (c == '}') return -2;
  if (c == ']') return -3;
  if (c == 0) return 0;
  return -1;
}

/* Parse text z[0..n) (up to a NUL, as SQLite reads it). 0 on success; 1
 * with "malformed JSON" (or out of memory) raised on ctx when ctx != NULL. */
static int jparse(JParse *p, FuncCtx *ctx, const char *z, uint32_t n) {
  memset(p, 0, sizeof *p);
  n = func_cstr_len(z, n);
  p->text = shale_malloc((size_t)n + 1);
  if (!p->text) {
    if (ctx) func_result_error_nomem(ctx);
    return 1;
  }
  if (n) memcpy(p->text, z, n);
  p->text[n] = 0;
  p->ntext = n;
  int64_t i = jparse_value(p, 0);
  if (p->oom) i = -1;
  if (i > 0) {
    while (jspace(p->text[i])) i++;
    if (p->text[i]) i = -1;
  }
  if (i <= 0) {
    if (ctx) {
      if (p->oom)
        func_result_error_nomem(ctx);
      else
        func_result_error(ctx, "malformed JSON", -1);
    }
    jparse_free(p);
    return 1;
  }
  return 0;
}

/* Parse argument v (its text form); NULL is 1 without an error. */
static int jparse_arg(JParse *p, FuncCtx *ctx, const ShValue *v) {
  char buf[32];
  const char *z;
  uint32_t n;
  memset(p, 0, sizeof *p);
  if (v->type == SHALE_NULL) return 1;
  func_arg_text(v, buf, &z, &n);
  return jparse(p, ctx, z ? z : "", n);
}

/* ---- output ---- */

static void jappend_string(StrBuf *b, const char *z, uint32_t n) {
  static const char special[32] = {0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0};
  strbuf_appendchar(b, 1, '"');
  uint32_t s = 0;
  for (uint32_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)z[i];
    if (c != '"' && c != '\\' && c > 0x1f) continue;
    strbuf_append(b, z + s, i - s);
    s = i + 1;
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      strbuf_append(b, esc, 2);
    } else if (special[c]) {
      esc[0] = '\\';
      esc[1] = special[c];
      strbuf_append(b, esc, 2);
    } else {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      strbuf_append(b, esc, 6);
    }
  }
  strbuf_append(b, z + s, n - s);
  strbuf_appendchar(b, 1, '"');
}

/* Append SQL value v as JSON; 1 for a BLOB (the caller raises the error). */
static int jappend_value(StrBuf *b, const ShValue *v) {
  char buf[32];
  switch (v->type) {
    case SHALE_NULL:
      strbuf_append(b, "null", 4);
      return 0;
    case SHALE_INTEGER:
      strbuf_append(b, buf, record_int_to_text(v->i, buf));
      return 0;
    case SHALE_FLOAT:
      strbuf_append(b, buf, record_real_to_text(v->r, buf));
      return 0;
    case SHALE_TEXT:
      if (value_subtype(v) == 'J')
        strbuf_append(b, v->z, v->n);
      else
        jappend_string(b, v->z, v->n);
      return 0;
    default:
      return 1;
  }
}

static void jsep(StrBuf *b) {
  if (b->n > 0 && b->z[b->n - 1] != '[' && b->z[b->n - 1] != '{') strbuf_appendchar(b, 1, ',');
}

/* Render node x (following edits); argv: the arguments JF_REPLACE names.
 * Returns 1 when a replacement was a BLOB. */
static int jrender(const JNode *x, StrBuf *b, const ShValue *argv) {
  if (x->flags & (JF_REPLACE | JF_PATCH)) {
    if (x->flags & JF_REPLACE) return jappend_value(b, &argv[x->repl]);
    x = x->patch;
  }
  switch (x->type) {
    case JT_NULL:
      strbuf_append(b, "null", 4);
      return 0;
    case JT_TRUE:
      strbuf_append(b, "true", 4);
      return 0;
    case JT_FALSE:
      strbuf_append(b, "false", 5);
      return 0;
    case JT_STRING:
      if (x->flags & JF_RAW) {
        jappend_string(b, x->z, x->n);
        return 0;
      }
      /* fall through */
    case JT_INT:
    case JT_REAL:
      strbuf_append(b, x->z, x->n);
      return 0;
    case JT_ARRAY: {
      uint32_t j = 1;
      strbuf_appendchar(b, 1, '[');
      for (;;) {
        while (j <= x->n) {
          if (!(x[j].flags & JF_REMOVE)) {
            jsep(b);
            if (jrender(&x[j], b, argv)) return 1;
          }
          j += jsize(&x[j]);
        }
        if (!(x->flags & JF_APPEND)) break;
        x += x->app;
        j = 1;
      }
      strbuf_appendchar(b, 1, ']');
      return 0;
    }
    default: {
      uint32_t j = 1;
      strbuf_appendchar(b, 1, '{');
      for (;;) {
        while (j <= x->n) {
          if (!(x[j + 1].flags & JF_REMOVE)) {
            jsep(b);
            jrender(&x[j], b, argv);
            strbuf_appendchar(b, 1, ':');
            if (jrender(&x[j + 1], b, argv)) return 1;
          }
          j += 1 + jsize(&x[j + 1]);
        }
        if (!(x->flags & JF_APPEND)) break;
        x += x->app;
        j = 1;
      }
      strbuf_appendchar(b, 1, '}');
      return 0;
    }
  }
}

/* Set the StrBuf's text as the result (JSON subtype when json). */
static void jresult_sb(FuncCtx *ctx, StrBuf *b, int json) {
  int err = b->err;
  char *z = strbuf_finish(b);
  if (!z) {
    func_result_sb_error(ctx, err);
    return;
  }
  func_result_text(ctx, z, -1, FUNC_OWNED);
  if (json && ctx->rc == SHALE_OK) func_result_subtype(ctx, JSON_SUBTYPE);
}

static void jblob_error(FuncCtx *ctx) {
  func_result_error(ctx, "JSON cannot hold BLOB values", -1);
}

/* Render x as the JSON-text result. */
static void jresult_json(FuncCtx *ctx, const JNode *x, const ShValue *argv) {
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  if (jrender(x, &b, argv)) {
    strbuf_reset(&b);
    jblob_error(ctx);
    return;
  }
  jresult_sb(ctx, &b, 1);
}

/* Decode string node text z[0..n) (with quotes) into an owned result. */
static void jresult_string(FuncCtx *ctx, const JNode *x) {
  if (x->flags & JF_RAW) {
    func_result_text(ctx, x->z, x->n, FUNC_TRANSIENT);
    return;
  }
  if (!(x->flags & JF_ESCAPE)) {
    func_result_text(ctx, x->z + 1, x->n - 2, FUNC_TRANSIENT);
    return;
  }
  const char *z = x->z;
  uint32_t n = x->n - 1, j = 0;
  char *out = shale_malloc(n + 1);
  if (!out) {
    func_result_error_nomem(ctx);
    return;
  }
  for (uint32_t i = 1; i < n; i++) {
    char c = z[i];
    if (c != '\\') {
      out[j++] = c;
      continue;
    }
    c = z[++i];
    if (c == 'u') {
      uint32_t v = 0;
      for (int k = 1; k <= 4; k++) v = v * 16 + (uint32_t)jhexval(z[i + k]);
      i += 4;
      if (v == 0) break; /* \u0000 ends the string, as in SQLite */
      if ((v & 0xfc00) == 0xd800 && i < n - 6 && z[i + 1] == '\\' && z[i + 2] == 'u') {
        uint32_t lo = 0;
        for (int k = 3; k <= 6; k++) lo = lo * 16 + (uint32_t)jhexval(z[i + k]);
        if ((lo & 0xfc00) == 0xdc00) {
          v = ((v & 0x3ff) << 10) + (lo & 0x3ff) + 0x10000;
          i += 6;
        }
      }
      j += (uint32_t)func_utf8_write((unsigned char *)out + j, v);
    } else {
      out[j++] = c == 'b'   ? '\b'
                 : c == 'f' ? '\f'
                 : c == 'n' ? '\n'
                 : c == 'r' ? '\r'
                 : c == 't' ? '\t'
                            : c;
    }
  }
  out[j] = 0;
  func_result_text(ctx, out, j, FUNC_OWNED);
}

/* The SQL value of node x (json_extract, ->>, json_each). */
static void jresult_node(FuncCtx *ctx, const JNode *x, const ShValue *argv) {
  switch (x->type) {
    case JT_NULL:
      func_result_null(ctx);
      return;
    case JT_TRUE:
      func_result_int(ctx, 1);
      return;
    case JT_FALSE:
      func_result_int(ctx, 0);
      return;
    case JT_INT: {
      const char *z = x->z, *e = x->z + x->n;
      int neg = z[0] == '-';
      int64_t i = 0;
      if (neg) z++;
      while (z < e && jdigit(*z)) {
        int d = *z++ - '0';
        if (i >= INT64_MAX / 10) {
          if (i > INT64_MAX / 10 || (z < e && jdigit(*z)) || d == 9) goto as_real;
          if (d == 8) {
            if (neg) {
              func_result_int(ctx, INT64_MIN);
              return;
            }
            goto as_real;
          }
        }
        i = i * 10 + d;
      }
      func_result_int(ctx, neg ? -i : i);
      return;
    }
    as_real:
    case JT_REAL: {
      double r;
      record_value_text_to_real(x->z, (int)x->n, &r);
      func_result_real(ctx, r);
      return;
    }
    case JT_STRING:
      jresult_string(ctx, x);
      return;
    default:
      jresult_json(ctx, x, argv);
  }
}

/* ---- paths ---- */

static int jlabel_eq(const JNode *x, const char *key, uint32_t nkey) {
  if (x->flags & JF_RAW) return x->n == nkey && memcmp(x->z, key, nkey) == 0;
  return x->n == nkey + 2 && memcmp(x->z + 1, key, nkey) == 0;
}

static int64_t jlookup_step(JParse *p, uint32_t iroot, const char *path, int *apnd,
                            const char **err);

/* Create the nodes for the rest of path below a missing member/element:
 * the final node is a null the caller replaces. */
static int64_t jlookup_append(JParse *p, const char *path, int *apnd, const char **err) {
  *apnd = 1;
  if (path[0] == 0) {
    int k = jadd(p, JT_NULL, 0, NULL);
    return k < 0 ? -1 : k;
  }
  if (path[0] == '.') {
    jadd(p, JT_OBJECT, 0, NULL);
  } else if (strncmp(path, "[0]", 3) == 0) {
    jadd(p, JT_ARRAY, 0, NULL);
  } else {
    return -1;
  }
  if (p->oom) return -1;
  return jlookup_step(p, p->n - 1, path, apnd, err);
}

/* The node path (after the '$') names below node iroot, or -1. With apnd
 * != NULL, a missing last member or one-past-the-end element is created
 * (*apnd = 1). A syntax error sets *err to the rest of the path. */
static int64_t jlookup_step(JParse *p, uint32_t iroot, const char *path, int *apnd,
                            const char **err) {
  JNode *root = &p->a[iroot];
  if (path[0] == 0) return iroot;
  if (root->flags & JF_REPLACE) return -1;
  if (path[0] == '.') {
    const char *key;
    uint32_t nkey, i;
    if (root->type != JT_OBJECT) return -1;
    path++;
    if (path[0] == '"') {
      key = path + 1;
      for (i = 1; path[i] && path[i] != '"'; i++) {
      }
      nkey = i - 1;
      if (!path[i]) {
        *err = path;
        return -1;
      }
      i++;
    } else {
      key = path;
      for (i = 0; path[i] && path[i] != '.' && path[i] != '['; i++) {
      }
      nkey = i;
      if (nkey == 0) {
        *err = path;
        return -1;
      }
    }
    uint32_t j = 1;
    for (;;) {
      while (j <= root->n) {
        if (jlabel_eq(&root[j], key, nkey))
          return jlookup_step(p, iroot + j + 1, path + i, apnd, err);
        j++;
        j += jsize(&root[j]);
      }
      if (!(root->flags & JF_APPEND)) break;
      iroot += root->app;
      root = &p->a[iroot];
      j = 1;
    }
    if (apnd) {
      int start = jadd(p, JT_OBJECT, 2, NULL);
      int label = jadd(p, JT_STRING, nkey, key);
      int64_t k = jlookup_append(p, path + i, apnd, err);
      if (p->oom || start < 0 || label < 0) return -1;
      if (k >= 0) {
        root = &p->a[iroot];
        root->app = (uint32_t)start - iroot;
        root->flags |= JF_APPEND;
        p->a[label].flags |= JF_RAW | JF_LABEL;
      }
      return k;
    }
    return -1;
  }
  if (path[0] == '[') {
    uint32_t i = 0, j = 1;
    while (jdigit(path[j])) {
      i = i * 10 + (uint32_t)(path[j] - '0');
      j++;
    }
    if (j < 2 || path[j] != ']') {
      if (path[1] != '#') {
        *err = path;
        return -1;
      }
      JNode *base = root;
      uint32_t ibase = iroot;
      if (root->type != JT_ARRAY) return -1;
      for (;;) {
        while (j <= base->n) {
          if (!(base[j].flags & JF_REMOVE)) i++;
          j += jsize(&base[j]);
        }
        if (!(base->flags & JF_APPEND)) break;
        ibase += base->app;
        base = &p->a[ibase];
        j = 1;
      }
      j = 2;
      if (path[2] == '-' && jdigit(path[3])) {
        uint32_t x = 0;
        j = 3;
        do {
          x = x * 10 + (uint32_t)(path[j] - '0');
          j++;
        } while (jdigit(path[j]));
        if (x > i) return -1;
        i -= x;
      }
      if (path[j] != ']') {
        *err = path;
        return -1;
      }
    }
    if (root->type != JT_ARRAY) return -1;
    path += j + 1;
    j = 1;
    for (;;) {
      while (j <= root->n && (i > 0 || (root[j].flags & JF_REMOVE))) {
        if (!(root[j].flags & JF_REMOVE)) i--;
        j += jsize(&root[j]);
      }
      if (!(root->flags & JF_APPEND)) break;
      iroot += root->app;
      root = &p->a[iroot];
      j = 1;
    }
    if (j <= root->n) return jlookup_step(p, iroot + j, path, apnd, err);
    if (i == 0 && apnd) {
      int start = jadd(p, JT_ARRAY, 1, NULL);
      int64_t k = jlookup_append(p, path, apnd, err);
      if (p->oom || start < 0) return -1;
      if (k >= 0) {
        root = &p->a[iroot];
        root->app = (uint32_t)start - iroot;
        root->flags |= JF_APPEND;
      }
      return k;
    }
    return -1;
  }
  *err = path;
  return -1;
}

static void jpath_error(FuncCtx *ctx, const char *rest) {
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  strbuf_append(&b, "JSON path error near '", 22);
  for (const char *q = rest; *q; q++) {
    if (*q == '\'') strbuf_appendchar(&b, 1, '\'');
    strbuf_appendchar(&b, 1, *q);
  }
  strbuf_appendchar(&b, 1, '\'');
  int err = b.err;
  char *m = strbuf_finish(&b);
  if (!m) {
    func_result_sb_error(ctx, err);
    return;
  }
  func_result_error(ctx, m, -1);
  shale_free(m);
}

/* Look path up (a C string from an argument); -1 when missing or on error
 * (then *failed = 1 and the error is raised). */
static int64_t jlookup(JParse *p, const char *path, int *apnd, FuncCtx *ctx, int *failed) {
  const char *err = NULL;
  int64_t k;
  if (!path) return -1;
  if (path[0] != '$') {
    err = path;
  } else {
    k = jlookup_step(p, 0, path + 1, apnd, &err);
    if (p->oom) {
      func_result_error_nomem(ctx);
      *failed = 1;
      return -1;
    }
    if (!err) return k;
  }
  *failed = 1;
  jpath_error(ctx, err);
  return -1;
}

/* An argument's text as a NUL-terminated string (owned copy in *own). */
static const char *jarg_cstr(const ShValue *v, char **own, FuncCtx *ctx) {
  char buf[32];
  const char *z;
  uint32_t n;
  *own = NULL;
  if (v->type == SHALE_NULL) return NULL;
  func_arg_text(v, buf, &z, &n);
  n = func_cstr_len(z, n);
  *own = shale_malloc((size_t)n + 1);
  if (!*own) {
    func_result_error_nomem(ctx);
    return NULL;
  }
  if (n) memcpy(*own, z, n);
  (*own)[n] = 0;
  return *own;
}

/* ---- scalar functions ---- */

static void json_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse p;
  if (jparse_arg(&p, ctx, &argv[0])) return;
  jresult_json(ctx, p.a, argv);
  jparse_free(&p);
}

static void json_quote_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  if (jappend_value(&b, &argv[0])) {
    strbuf_reset(&b);
    jblob_error(ctx);
    return;
  }
  jresult_sb(ctx, &b, 1);
}

static void json_array_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  strbuf_appendchar(&b, 1, '[');
  for (int i = 0; i < argc; i++) {
    jsep(&b);
    if (jappend_value(&b, &argv[i])) {
      strbuf_reset(&b);
      jblob_error(ctx);
      return;
    }
  }
  strbuf_appendchar(&b, 1, ']');
  jresult_sb(ctx, &b, 1);
}

static void json_object_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  if (argc & 1) {
    func_result_error(ctx, "json_object() requires an even number of arguments", -1);
    return;
  }
  StrBuf b;
  strbuf_init(&b, func_max_length(ctx));
  strbuf_appendchar(&b, 1, '{');
  for (int i = 0; i < argc; i += 2) {
    if (argv[i].type != SHALE_TEXT) {
      strbuf_reset(&b);
      func_result_error(ctx, "json_object() labels must be TEXT", -1);
      return;
    }
    jsep(&b);
    jappend_string(&b, argv[i].z, argv[i].n);
    strbuf_appendchar(&b, 1, ':');
    if (jappend_value(&b, &argv[i + 1])) {
      strbuf_reset(&b);
      jblob_error(ctx);
      return;
    }
  }
  strbuf_appendchar(&b, 1, '}');
  jresult_sb(ctx, &b, 1);
}

/* json_extract (flags 0), -> (1: JSON result), ->> (2: SQL result). */
static void json_extract_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int mode = (int)(intptr_t)func_user_data(ctx);
  JParse p;
  char *own = NULL;
  int failed = 0;
  if (argc < 2) return;
  if (jparse_arg(&p, ctx, &argv[0])) return;
  if (argc == 2) {
    const char *path = jarg_cstr(&argv[1], &own, ctx);
    if (path) {
      int64_t k;
      if (mode && path[0] != '$') {
        /* abbreviated paths: 12 -> $[12], name -> $.name, [12] -> $[12] */
        size_t n = strlen(path);
        char *full = shale_malloc(n + 4);
        if (!full) {
          func_result_error_nomem(ctx);
          k = -1;
          failed = 1;
        } else {
          if (jdigit(path[0]))
            snprintf(full, n + 4, "$[%s]", path);
          else
            snprintf(full, n + 4, path[0] == '[' ? "$%s" : "$.%s", path);
          k = jlookup(&p, full, NULL, ctx, &failed);
          shale_free(full);
        }
      } else {
        k = jlookup(&p, path, NULL, ctx, &failed);
      }
      if (!failed && k >= 0) {
        if (mode == 1)
          jresult_json(ctx, &p.a[k], argv);
        else
          jresult_node(ctx, &p.a[k], argv);
        if (mode == 2) func_result_subtype(ctx, 0);
      }
    }
  } else {
    StrBuf b;
    strbuf_init(&b, func_max_length(ctx));
    strbuf_appendchar(&b, 1, '[');
    int i;
    for (i = 1; i < argc; i++) {
      const char *path = jarg_cstr(&argv[i], &own, ctx);
      if (ctx->rc) break;
      int64_t k = jlookup(&p, path, NULL, ctx, &failed);
      shale_free(own);
      own = NULL;
      if (failed) break;
      jsep(&b);
      if (k >= 0)
        jrender(&p.a[k], &b, argv);
      else
        strbuf_append(&b, "null", 4);
    }
    if (i == argc) {
      strbuf_appendchar(&b, 1, ']');
      jresult_sb(ctx, &b, 1);
    } else {
      strbuf_reset(&b);
    }
  }
  shale_free(own);
  jparse_free(&p);
}

static void json_type_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse p;
  char *own = NULL;
  int failed = 0;
  if (jparse_arg(&p, ctx, &argv[0])) return;
  int64_t k = 0;
  if (argc == 2) {
    const char *path = jarg_cstr(&argv[1], &own, ctx);
    k = path ? jlookup(&p, path, NULL, ctx, &failed) : -1;
  }
  if (k >= 0 && !failed) func_result_text(ctx, jtype_names[p.a[k].type], -1, FUNC_STATIC);
  shale_free(own);
  jparse_free(&p);
}

static void json_valid_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse p;
  int bad = jparse_arg(&p, NULL, &argv[0]); /* NULL is 0, as in 3.40 */
  func_result_int(ctx, !bad);
  if (!bad) jparse_free(&p);
}

static void json_array_length_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse p;
  char *own = NULL;
  int failed = 0;
  if (jparse_arg(&p, ctx, &argv[0])) return;
  int64_t k = 0;
  if (argc == 2) {
    const char *path = jarg_cstr(&argv[1], &own, ctx);
    k = jlookup(&p, path, NULL, ctx, &failed);
  }
  if (k >= 0 && !failed) {
    int64_t n = 0;
    const JNode *x = &p.a[k];
    if (x->type == JT_ARRAY)
      for (uint32_t i = 1; i <= x->n; n++) i += jsize(&x[i]);
    func_result_int(ctx, n);
  }
  shale_free(own);
  jparse_free(&p);
}

static void json_remove_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse p;
  if (argc < 1) return;
  if (jparse_arg(&p, ctx, &argv[0])) return;
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    char *own;
    const char *path = jarg_cstr(&argv[i], &own, ctx);
    if (!path) {
      failed = 1;
      break;
    }
    int64_t k = jlookup(&p, path, NULL, ctx, &failed);
    shale_free(own);
    if (failed) break;
    if (k >= 0) p.a[k].flags |= JF_REMOVE;
  }
  if (!failed && !(p.a[0].flags & JF_REMOVE)) jresult_json(ctx, p.a, argv);
  jparse_free(&p);
}

/* json_replace (user data 0), json_set (1), json_insert (2). */
static void json_edit_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  static const char *const names[] = {"replace", "set", "insert"};
  int mode = (int)(intptr_t)func_user_data(ctx);
  JParse p;
  if (argc < 1) return;
  if ((argc & 1) == 0) {
    char msg[64];
    snprintf(msg, sizeof msg, "json_%s() needs an odd number of arguments", names[mode]);
    func_result_error(ctx, msg, -1);
    return;
  }
  if (jparse_arg(&p, ctx, &argv[0])) return;
  /* paths are kept until the end: appended labels point into them */
  char **owns = shale_malloc(sizeof(char *) * (size_t)argc);
  if (!owns) {
    func_result_error_nomem(ctx);
    jparse_free(&p);
    return;
  }
  int failed = 0, i, nown = 0;
  for (i = 1; i < argc; i += 2) {
    const char *path = jarg_cstr(&argv[i], &owns[nown], ctx);
    if (owns[nown]) nown++;
    if (ctx->rc) {
      failed = 1;
      break;
    }
    int apnd = 0;
    int64_t k = jlookup(&p, path, mode ? &apnd : NULL, ctx, &failed);
    if (failed) break;
    if (k >= 0 && (mode == 0 || apnd || mode == 1)) {
      p.a[k].flags |= JF_REPLACE;
      p.a[k].repl = i + 1;
    }
  }
  if (!failed) {
    if (p.a[0].flags & JF_REPLACE)
      func_result_value(ctx, &argv[p.a[0].repl]);
    else
      jresult_json(ctx, p.a, argv);
  }
  for (i = 0; i < nown; i++) shale_free(owns[i]);
  shale_free(owns);
  jparse_free(&p);
}

/* Mark every null member of object x (recursively into objects) removed. */
static void jremove_nulls(JNode *x) {
  for (uint32_t i = 2; i <= x->n; i += jsize(&x[i]) + 1) {
    if (x[i].type == JT_NULL)
      x[i].flags |= JF_REMOVE;
    else if (x[i].type == JT_OBJECT)
      jremove_nulls(&x[i]);
  }
}

/* RFC 7396 merge of patch into node itarget of p; returns the node to
 * render in its place (NULL when out of memory). */
static JNode *jmerge(JParse *p, uint32_t itarget, JNode *patch) {
  if (patch->type != JT_OBJECT) return patch;
  JNode *target = &p->a[itarget];
  if (target->type != JT_OBJECT) {
    jremove_nulls(patch);
    return patch;
  }
  uint32_t iroot = itarget;
  for (uint32_t i = 1; i < patch->n; i += jsize(&patch[i + 1]) + 1) {
    uint32_t nkey = patch[i].n, j;
    const char *key = patch[i].z;
    for (j = 1; j < target->n; j += jsize(&target[j + 1]) + 1) {
      if (target[j].n == nkey && memcmp(target[j].z, key, nkey) == 0) {
        if (target[j + 1].flags & (JF_REMOVE | JF_PATCH)) break;
        if (patch[i + 1].type == JT_NULL) {
          target[j + 1].flags |= JF_REMOVE;
        } else {
          JNode *nw = jmerge(p, itarget + j + 1, &patch[i + 1]);
          if (!nw) return NULL;
          target = &p->a[itarget];
          if (nw != &target[j + 1]) {
            target[j + 1].patch = nw;
            target[j + 1].flags |= JF_PATCH;
          }
        }
        break;
      }
    }
    if (j >= target->n && patch[i + 1].type != JT_NULL) {
      int start = jadd(p, JT_OBJECT, 2, NULL);
      int lab = jadd(p, JT_STRING, nkey, key);
      int val = jadd(p, JT_TRUE, 0, NULL);
      if (p->oom || start < 0 || lab < 0 || val < 0) return NULL;
      p->a[lab].flags = (uint8_t)((patch[i].flags & JF_ESCAPE) | JF_LABEL);
      jremove_nulls(patch);
      target = &p->a[itarget];
      p->a[iroot].flags |= JF_APPEND;
      p->a[iroot].app = (uint32_t)start - iroot;
      iroot = (uint32_t)start;
      p->a[val].flags |= JF_PATCH;
      p->a[val].patch = &patch[i + 1];
    }
  }
  return target;
}

static void json_patch_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  JParse x, y;
  if (jparse_arg(&x, ctx, &argv[0])) return;
  if (jparse_arg(&y, ctx, &argv[1])) {
    jparse_free(&x);
    return;
  }
  JNode *r = jmerge(&x, 0, y.a);
  if (r) {
    /* r may point into x (whose array may have moved: use the index) */
    jresult_json(ctx, r, argv);
  } else {
    func_result_error_nomem(ctx);
  }
  jparse_free(&x);
  jparse_free(&y);
}

/* ---- aggregates ---- */

typedef struct JAgg {
  StrBuf b;
  int started;
} JAgg;

static void jagg_step(FuncCtx *ctx, int argc, ShValue *argv, int obj) {
  JAgg *a = func_aggregate_context(ctx, sizeof(JAgg));
  if (!a) return;
  if (!a->started) {
    strbuf_init(&a->b, func_max_length(ctx));
    strbuf_appendchar(&a->b, 1, obj ? '{' : '[');
    a->started = 1;
  } else if (a->b.n > 1) {
    strbuf_appendchar(&a->b, 1, ',');
  }
  if (obj) {
    char buf[32];
    const char *z = NULL;
    uint32_t n = 0;
    /* a NULL label adds nothing at all (not even quotes), as in 3.40 */
    if (argv[0].type != SHALE_NULL) {
      func_arg_text(&argv[0], buf, &z, &n);
      jappend_string(&a->b, z ? z : "", n);
    }
    strbuf_appendchar(&a->b, 1, ':');
  }
  if (jappend_value(&a->b, &argv[obj])) {
    jblob_error(ctx);
    return;
  }
  if (a->b.err) func_result_sb_error(ctx, a->b.err);
}

static void json_group_array_step(FuncCtx *ctx, int argc, ShValue *argv) {
  jagg_step(ctx, argc, argv, 0);
}
static void json_group_object_step(FuncCtx *ctx, int argc, ShValue *argv) {
  jagg_step(ctx, argc, argv, 1);
}

static void jagg_out(FuncCtx *ctx, int obj, int final) {
  JAgg *a = func_aggregate_context(ctx, 0);
  if (!a || !a->started) {
    func_result_text(ctx, obj ? "{}" : "[]", 2, FUNC_STATIC);
  } else {
    if (a->b.err) {
      func_result_sb_error(ctx, a->b.err);
    } else {
      StrBuf b;
      strbuf_init(&b, func_max_length(ctx));
      strbuf_append(&b, a->b.z, a->b.n);
      strbuf_appendchar(&b, 1, obj ? '}' : ']');
      jresult_sb(ctx, &b, 0);
    }
    if (final) strbuf_reset(&a->b);
  }
  if (ctx->rc == SHALE_OK) func_result_subtype(ctx, JSON_SUBTYPE);
}

static void json_group_array_final(FuncCtx *ctx) { jagg_out(ctx, 0, 1); }
static void json_group_array_value(FuncCtx *ctx) { jagg_out(ctx, 0, 0); }
static void json_group_object_final(FuncCtx *ctx) { jagg_out(ctx, 1, 1); }
static void json_group_object_value(FuncCtx *ctx) { jagg_out(ctx, 1, 0); }

/* Window inverse: drop the first element (up to the first top-level ','). */
static void json_group_inverse(FuncCtx *ctx, int argc, ShValue *argv) {
  JAgg *a = func_aggregate_context(ctx, 0);
  if (!a || !a->started || a->b.err) return;
  char *z = a->b.z;
  int in_str = 0, nest = 0;
  int64_t i;
  char c;
  for (i = 1; i < a->b.n && ((c = z[i]) != ',' || in_str || nest); i++) {
    if (c == '"') {
      in_str = !in_str;
    } else if (c == '\\') {
      i++;
    } else if (!in_str) {
      if (c == '{' || c == '[') nest++;
      if (c == '}' || c == ']') nest--;
    }
  }
  if (i < a->b.n) {
    memmove(&z[1], &z[i + 1], (size_t)(a->b.n - i) - 1);
    strbuf_truncate(&a->b, a->b.n - i);
  } else {
    strbuf_truncate(&a->b, 1);
  }
}

/* ---- json_each / json_tree rows ---- */

static void jfind_parents(JParse *p, uint32_t i, uint32_t parent) {
  JNode *x = &p->a[i];
  p->up[i] = parent;
  if (x->type == JT_ARRAY) {
    for (uint32_t j = 1; j <= x->n; j += jsize(&x[j])) jfind_parents(p, i + j, i);
  } else if (x->type == JT_OBJECT) {
    for (uint32_t j = 1; j <= x->n; j += jsize(&x[j + 1]) + 1) {
      p->up[i + j] = i;
      jfind_parents(p, i + j + 1, i);
    }
  }
}

/* ".label" (bare when it is alphanumeric, else with its quotes as written)
 * or "[n]" for node i under parent iup. */
static void jpath_part(StrBuf *b, const JNode *up, const JNode *x) {
  if (up->type == JT_ARRAY) {
    char tmp[24];
    strbuf_append(b, tmp, snprintf(tmp, sizeof tmp, "[%d]", (int)up->key));
    return;
  }
  if (!(x->flags & JF_LABEL)) x--; /* a member's value: name it by its label */
  const char *z = x->z;
  uint32_t n = x->n;
  if (!(x->flags & JF_RAW) && n > 2 &&
      ((z[1] >= 'a' && z[1] <= 'z') || (z[1] >= 'A' && z[1] <= 'Z'))) {
    uint32_t j = 2;
    while (j < n - 1 && jalnum(z[j])) j++;
    if (j == n - 1) {
      z++;
      n -= 2;
    }
  }
  strbuf_appendchar(b, 1, '.');
  strbuf_append(b, z, n);
}

static void jtree_path(const JParse *p, StrBuf *b, uint32_t i) {
  if (i == 0) {
    strbuf_appendchar(b, 1, '$');
    return;
  }
  uint32_t iup = p->up[i];
  jtree_path(p, b, iup);
  jpath_part(b, &p->a[iup], &p->a[i]);
}

/* ---- json_each / json_tree: the walk behind their module ----
 *
 * A FuncJsonEach walks the nodes of one parse from the root the path names
 * (json_each: its direct children; json_tree: the root and every node
 * below, in document order). A row's columns are computed when read. */

struct FuncJsonEach {
  JParse p;
  int recursive;
  int parsed;     /* p holds a parse */
  uint32_t begin; /* the root node */
  uint32_t i;     /* current node (a label when it names a member) */
  uint32_t end;   /* one past the root's subtree */
  int etype;      /* type of the current node's container */
  int64_t rowid;
  char *rootz; /* the root path (owned), NULL: "$" */
};

FuncJsonEach *func_json_each_new(int recursive) {
  FuncJsonEach *c = shale_malloc(sizeof *c);
  if (c) {
    memset(c, 0, sizeof *c);
    c->recursive = recursive;
  }
  return c;
}

static void jeach_reset(FuncJsonEach *c) {
  if (c->parsed) jparse_free(&c->p);
  c->parsed = 0;
  shale_free(c->rootz);
  c->rootz = NULL;
  c->i = c->end = 0;
  c->rowid = 0;
}

void func_json_each_free(FuncJsonEach *c) {
  if (!c) return;
  jeach_reset(c);
  shale_free(c);
}

int func_json_each_eof(const FuncJsonEach *c) { return c->i >= c->end; }
int64_t func_json_each_rowid(const FuncJsonEach *c) { return c->rowid; }

int func_json_each_start(FuncJsonEach *c, int argc, ShValue *argv, char **errmsg) {
  jeach_reset(c);
  if (argc < 1 || argv[0].type == SHALE_NULL) return SHALE_OK;
  JParse *p = &c->p;
  char buf[32];
  const char *json;
  uint32_t njson;
  func_arg_text(&argv[0], buf, &json, &njson);
  if (jparse(p, NULL, json ? json : "", njson)) {
    if (p->oom) return SHALE_NOMEM;
    *errmsg = util_strdup("malformed JSON");
    return SHALE_ERROR;
  }
  c->parsed = 1;
  if (c->recursive) {
    p->up = shale_malloc(sizeof(uint32_t) * (p->n ? p->n : 1));
    if (!p->up) return SHALE_NOMEM;
    jfind_parents(p, 0, 0);
  }
  int64_t inode = 0;
  if (argc >= 2) {
    if (argv[1].type == SHALE_NULL) return SHALE_OK;
    FuncCtx x;
    func_ctx_init(&x, NULL);
    const char *root = jarg_cstr(&argv[1], &c->rootz, &x);
    func_ctx_reset(&x);
    if (!root) return SHALE_NOMEM;
    const char *err = NULL;
    if (c->rootz[0] != '$')
      err = c->rootz;
    else
      inode = jlookup_step(p, 0, c->rootz + 1, NULL, &err);
    if (err) {
      func_ctx_init(&x, NULL);
      jpath_error(&x, err);
      *errmsg = x.errmsg;
      x.errmsg = NULL;
      int rc = x.rc;
      func_ctx_reset(&x);
      return rc;
    }
    if (inode < 0) return SHALE_OK;
  }
  uint32_t i = (uint32_t)inode;
  c->begin = i;
  c->etype = p->a[i].type;
  if (c->etype >= JT_ARRAY) {
    p->a[i].key = 0;
    c->end = i + p->a[i].n + 1;
    if (c->recursive) {
      c->etype = p->a[p->up[i]].type;
      if (i > 0 && (p->a[i - 1].flags & JF_LABEL)) i--;
    } else {
      i++;
    }
  } else {
    c->end = i + 1;
  }
  c->i = i;
  return SHALE_OK;
}

void func_json_each_next(FuncJsonEach *c) {
  JParse *p = &c->p;
  uint32_t i = c->i;
  c->rowid++;
  if (c->recursive) {
    if (p->a[i].flags & JF_LABEL) i++;
    i++;
    if (i < c->end) {
      uint32_t iup = p->up[i];
      JNode *up = &p->a[iup];
      c->etype = up->type;
      if (up->type == JT_ARRAY) {
        if (iup == i - 1)
          up->key = 0;
        else
          up->key++;
      }
    }
  } else if (c->etype == JT_ARRAY) {
    i += jsize(&p->a[i]);
  } else if (c->etype == JT_OBJECT) {
    i += 1 + jsize(&p->a[i + 1]);
  } else {
    i = c->end;
  }
  c->i = i;
}

/* fullkey (which 0) or path (which 1) of the current row. */
static void jeach_path(FuncJsonEach *c, FuncCtx *ctx, int which) {
  const JParse *p = &c->p;
  const char *rootname = c->rootz ? c->rootz : "$";
  StrBuf b;
  strbuf_init(&b, FUNC_MAX_LENGTH_DEFAULT);
  if (c->recursive) {
    jtree_path(p, &b, which ? p->up[c->i] : c->i);
  } else if (which) {
    func_result_text(ctx, rootname, -1, FUNC_TRANSIENT);
    return;
  } else {
    strbuf_append(&b, rootname, (int64_t)strlen(rootname));
    if (c->etype == JT_ARRAY) {
      char tmp[24];
      strbuf_append(&b, tmp, snprintf(tmp, sizeof tmp, "[%d]", (int)c->rowid));
    } else if (c->etype == JT_OBJECT) {
      JNode fake = *p->a;
      fake.type = JT_OBJECT;
      jpath_part(&b, &fake, &p->a[c->i]);
    }
  }
  jresult_sb(ctx, &b, 0);
}

void func_json_each_column(FuncJsonEach *c, FuncCtx *ctx, int col) {
  const JParse *p = &c->p;
  const JNode *self = &p->a[c->i];
  const JNode *val = (self->flags & JF_LABEL) ? self + 1 : self;
  switch (col) {
    case 0: /* key */
      if (c->i == 0) return;
      if (c->etype == JT_OBJECT)
        jresult_node(ctx, self, NULL);
      else if (c->etype == JT_ARRAY && !c->recursive)
        func_result_int(ctx, c->rowid);
      else if (c->etype == JT_ARRAY && c->rowid != 0)
        func_result_int(ctx, p->a[p->up[c->i]].key);
      return;
    case 1: /* value */
      jresult_node(ctx, val, NULL);
      return;
    case 2: /* type */
      func_result_text(ctx, jtype_names[val->type], -1, FUNC_STATIC);
      return;
    case 3: /* atom */
      if (val->type < JT_ARRAY) jresult_node(ctx, val, NULL);
      return;
    case 4: /* id */
      func_result_int(ctx, (int64_t)c->i + ((self->flags & JF_LABEL) != 0));
      return;
    case 5: /* parent */
      if (c->i > c->begin && c->recursive) func_result_int(ctx, p->up[c->i]);
      return;
    case 6: /* fullkey */
    case 7: /* path */
      jeach_path(c, ctx, col == 7);
      return;
    case 8: /* json */
      func_result_text(ctx, p->text, p->ntext, FUNC_TRANSIENT);
      return;
    default: /* root */
      func_result_text(ctx, c->rootz ? c->rootz : "$", -1, FUNC_TRANSIENT);
      return;
  }
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
#define S(nm, na, fn, ud) \
  { .name = nm, .nargs = na, .flags = DET, .scalar = fn, .user_data = (void *)(intptr_t)(ud) }

const FuncDef func_json_defs[] = {
    S("json", 1, json_fn, 0),
    S("json_array", -1, json_array_fn, 0),
    S("json_array_length", 1, json_array_length_fn, 0),
    S("json_array_length", 2, json_array_length_fn, 0),
    S("json_extract", -1, json_extract_fn, 0),
    S("->", 2, json_extract_fn, 1),
    S("->>", 2, json_extract_fn, 2),
    S("json_insert", -1, json_edit_fn, 2),
    S("json_object", -1, json_object_fn, 0),
    S("json_patch", 2, json_patch_fn, 0),
    S("json_quote", 1, json_quote_fn, 0),
    S("json_remove", -1, json_remove_fn, 0),
    S("json_replace", -1, json_edit_fn, 0),
    S("json_set", -1, json_edit_fn, 1),
    S("json_type", 1, json_type_fn, 0),
    S("json_type", 2, json_type_fn, 0),
    S("json_valid", 1, json_valid_fn, 0),
    {.name = "json_group_array",
     .nargs = 1,
     .flags = FUNC_BUILTIN,
     .step = json_group_array_step,
     .final = json_group_array_final,
     .value = json_group_array_value,
     .inverse = json_group_inverse},
    {.name = "json_group_object",
     .nargs = 2,
     .flags = FUNC_BUILTIN,
     .step = json_group_object_step,
     .final = json_group_object_final,
     .value = json_group_object_value,
     .inverse = json_group_inverse},
};
const int func_json_ndefs = (int)(sizeof func_json_defs / sizeof func_json_defs[0]);
