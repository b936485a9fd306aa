/*
 * shell_mode.c -- the output modes of the shell, byte for byte as sqlite3
 * 3.40.1 prints them, and the .mode command that picks one.
 *
 * Row-at-a-time modes (list, tabs, ascii, csv, line, json, insert, quote,
 * html, tcl) print each row as it is stepped. The columnar modes (column,
 * table, box, markdown) gather every row first: each value is cut into
 * display lines (a control character ends a line, "\r\n" counts as one;
 * tabs expand to the next multiple of 8; a column wider than its .width or
 * the --wrap limit continues on the next line, at a word break with
 * --wordwrap), then widths are the widest line in code points, header
 * included.
 *
 * Invariants:
 *  1. Text values print as C strings (a blob or text with a NUL stops at
 *     it), as sqlite3's shell does with sqlite3_column_text.
 *  2. Quote, insert and json modes print reals with %!.20g (func_printf, the
 *     engine of the printf() SQL function), an integral value as "N.0",
 *     infinities as 1e999 / -1e999.
 *  3. Headers: list-like modes print them before the first row when .headers
 *     is on; table/box/markdown always; column when on; nothing at all is
 *     printed for a statement that returns no rows.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/func/func.h"
#include "../src/parse/parse.h"
#include "shell.h"

/* ---- wrap options of the columnar modes ---- */
static int g_wrap; /* 0: no limit */
static int g_wordwrap;
static int g_quote;

static const char *const mode_names[] = {"list",     "line", "column", "table",  "box",
                                         "markdown", "csv",  "json",   "insert", "quote",
                                         "list",     "html", "tcl",    "ascii"};

const char *mode_name(int mode) { return mode_names[mode]; }

/* ---- value formatting ---- */

void mode_real(double r, char *buf, size_t n) {
  if (isinf(r)) {
    snprintf(buf, n, "%s", r > 0 ? "1e999" : "-1e999");
    return;
  }
  if (r >= -9.2e18 && r <= 9.2e18 && r == (double)(long long)r) {
    snprintf(buf, n, "%lld.0", (long long)r);
    return;
  }
  ShValue v;
  memset(&v, 0, sizeof v);
  v.type = SHALE_FLOAT;
  v.r = r;
  char *out = NULL;
  int64_t nout = 0;
  if (func_printf("%!.20g", 6, 1, &v, 1000, &out, &nout) == SHALE_OK && out)
    snprintf(buf, n, "%s", out);
  else
    snprintf(buf, n, "%.17g", r);
  shale_free(out);
}

int mode_needs_quote(const char *name) {
  if (!name || !*name) return 1;
  if (!isalpha((unsigned char)name[0]) && name[0] != '_') return 1;
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return 1;
  return sql_keyword(name, (int)strlen(name)) != TK_ID;
}

char *mode_quote_name(const char *name) {
  if (!mode_needs_quote(name)) return shell_strdup(name);
  size_t n = strlen(name), k = 0;
  char *r = shale_malloc(2 * n + 3);
  if (!r) return NULL;
  r[k++] = '"';
  for (const char *p = name; *p; p++) {
    if (*p == '"') r[k++] = '"';
    r[k++] = *p;
  }
  r[k++] = '"';
  r[k] = 0;
  return r;
}

/* A text with no "\n"/"\r" marker already in it: "\n", else "\012", else
 * "(\nN)"... as sqlite3 picks the stand-in for replace(). */
static void unused_marker(const char *z, const char *a, const char *b, char *buf, size_t n) {
  if (!strstr(z, a)) {
    snprintf(buf, n, "%s", a);
    return;
  }
  if (!strstr(z, b)) {
    snprintf(buf, n, "%s", b);
    return;
  }
  for (unsigned i = 0;; i++) {
    snprintf(buf, n, "(%s%u)", a, i);
    if (!strstr(z, buf)) return;
  }
}

void mode_quoted_string(FILE *out, const char *z, int escape_newlines) {
  int nl = 0, cr = 0;
  char mnl[32], mcr[32];
  if (escape_newlines) {
    nl = strchr(z, '\n') != NULL;
    cr = strchr(z, '\r') != NULL;
  }
  if (nl) {
    fputs("replace(", out);
    unused_marker(z, "\\n", "\\012", mnl, sizeof mnl);
  }
  if (cr) {
    fputs("replace(", out);
    unused_marker(z, "\\r", "\\015", mcr, sizeof mcr);
  }
  fputc('\'', out);
  for (const char *p = z; *p; p++) {
    if (*p == '\'')
      fputs("''", out);
    else if (nl && *p == '\n')
      fputs(mnl, out);
    else if (cr && *p == '\r')
      fputs(mcr, out);
    else
      fputc(*p, out);
  }
  fputc('\'', out);
  if (cr) fprintf(out, ",'%s',char(13))", mcr);
  if (nl) fprintf(out, ",'%s',char(10))", mnl);
}

static void print_blob_hex(FILE *out, const unsigned char *b, int n, char x) {
  fputc(x, out);
  fputc('\'', out);
  for (int i = 0; i < n; i++) fprintf(out, "%02x", b[i]);
  fputc('\'', out);
}

/* quote and insert modes */
static void print_sql_value(Shell *sh, shale_stmt *st, int i, int escape) {
  FILE *out = sh->out;
  switch (shale_column_type(st, i)) {
    case SHALE_NULL:
      fputs("NULL", out);
      break;
    case SHALE_INTEGER:
      fputs((const char *)shale_column_text(st, i), out);
      break;
    case SHALE_FLOAT: {
      char buf[64];
      mode_real(shale_column_double(st, i), buf, sizeof buf);
      fputs(buf, out);
      break;
    }
    case SHALE_BLOB: {
      const unsigned char *b = shale_column_blob(st, i);
      print_blob_hex(out, b, shale_column_bytes(st, i), 'X');
      break;
    }
    default: {
      const char *t = (const char *)shale_column_text(st, i);
      mode_quoted_string(out, t ? t : "", escape);
    }
  }
}

/* sqlite3's CSV quoting: control characters, space, '"', '\'', DEL and every
 * non-ASCII byte force quotes, as does the column separator. */
static int csv_needs_quote(const char *z, const char *sep) {
  if (!*z) return 1;
  for (const unsigned char *p = (const unsigned char *)z; *p; p++)
    if (*p <= ' ' || *p == '"' || *p == '\'' || *p >= 0x7f) return 1;
  return *sep && strstr(z, sep) != NULL;
}

static void print_csv(Shell *sh, const char *z, int sep) {
  if (!z) {
    fputs(sh->nullvalue, sh->out);
  } else if (csv_needs_quote(z, sh->colsep)) {
    fputc('"', sh->out);
    for (const char *p = z; *p; p++) {
      if (*p == '"') fputc('"', sh->out);
      fputc(*p, sh->out);
    }
    fputc('"', sh->out);
  } else {
    fputs(z, sh->out);
  }
  if (sep) fputs(sh->colsep, sh->out);
}

static void print_json_string(FILE *out, const char *z, int n) {
  fputc('"', out);
  for (int i = 0; i < n; i++) {
    unsigned char c = (unsigned char)z[i];
    if (c == '\\' || c == '"') {
      fputc('\\', out);
      fputc(c, out);
    } else if (c <= 0x1f) {
      fputc('\\', out);
      if (c == '\b')
        fputc('b', out);
      else if (c == '\f')
        fputc('f', out);
      else if (c == '\n')
        fputc('n', out);
      else if (c == '\r')
        fputc('r', out);
      else if (c == '\t')
        fputc('t', out);
      else
        fprintf(out, "u%04x", c);
    } else {
      fputc(c, out);
    }
  }
  fputc('"', out);
}

static void print_html(FILE *out, const char *z) {
  for (; *z; z++) {
    switch (*z) {
      case '<':
        fputs("&lt;", out);
        break;
      case '&':
        fputs("&amp;", out);
        break;
      case '>':
        fputs("&gt;", out);
        break;
      case '"':
        fputs("&quot;", out);
        break;
      case '\'':
        fputs("&#39;", out);
        break;
      default:
        fputc(*z, out);
    }
  }
}

static void print_c_string(FILE *out, const char *z) {
  fputc('"', out);
  for (; *z; z++) {
    unsigned char c = (unsigned char)*z;
    if (c == '\\' || c == '"') {
      fputc('\\', out);
      fputc(c, out);
    } else if (c == '\t') {
      fputs("\\t", out);
    } else if (c == '\n') {
      fputs("\\n", out);
    } else if (c == '\r') {
      fputs("\\r", out);
    } else if (!isprint(c)) {
      fprintf(out, "\\%03o", c);
    } else {
      fputc(c, out);
    }
  }
  fputc('"', out);
}

/* ---- row-at-a-time modes ---- */

static const char *col_text(shale_stmt *st, int i) {
  return (const char *)shale_column_text(st, i);
}

static void print_row(Shell *sh, shale_stmt *st, int n) {
  FILE *out = sh->out;
  int first = sh->rowcnt++ == 0;
  switch (sh->mode) {
    case MODE_LINE: {
      int w = 5;
      for (int i = 0; i < n; i++) {
        const char *c = shale_column_name(st, i);
        int len = c ? (int)strlen(c) : 0;
        if (len > w) w = len;
      }
      if (!first) fputs(sh->rowsep, out);
      for (int i = 0; i < n; i++) {
        const char *v = col_text(st, i);
        fprintf(out, "%*s = %s%s", w, shale_column_name(st, i), v ? v : sh->nullvalue, sh->rowsep);
      }
      break;
    }
    case MODE_CSV:
      if (first && sh->headers) {
        for (int i = 0; i < n; i++) {
          const char *c = shale_column_name(st, i);
          print_csv(sh, c ? c : "", i < n - 1);
        }
        fputs(sh->rowsep, out);
      }
      if (n > 0) {
        for (int i = 0; i < n; i++) print_csv(sh, col_text(st, i), i < n - 1);
        fputs(sh->rowsep, out);
      }
      break;
    case MODE_JSON:
      fputs(first ? "[{" : ",\n{", out);
      for (int i = 0; i < n; i++) {
        const char *c = shale_column_name(st, i);
        print_json_string(out, c, (int)strlen(c));
        fputc(':', out);
        switch (shale_column_type(st, i)) {
          case SHALE_NULL:
            fputs("null", out);
            break;
          case SHALE_FLOAT: {
            char buf[64];
            mode_real(shale_column_double(st, i), buf, sizeof buf);
            fputs(buf, out);
            break;
          }
          case SHALE_BLOB: {
            const char *b = shale_column_blob(st, i);
            print_json_string(out, b ? b : "", shale_column_bytes(st, i));
            break;
          }
          case SHALE_TEXT: {
            const char *t = col_text(st, i);
            print_json_string(out, t, (int)strlen(t));
            break;
          }
          default:
            fputs(col_text(st, i), out);
        }
        if (i < n - 1) fputc(',', out);
      }
      fputc('}', out);
      break;
    case MODE_INSERT:
      fprintf(out, "INSERT INTO %s", sh->table ? sh->table : "\"table\"");
      if (sh->headers) {
        fputc('(', out);
        for (int i = 0; i < n; i++) {
          if (i) fputc(',', out);
          char *q = mode_quote_name(shale_column_name(st, i));
          fputs(q ? q : "", out);
          shale_free(q);
        }
        fputc(')', out);
      }
      for (int i = 0; i < n; i++) {
        fputs(i ? "," : " VALUES(", out);
        print_sql_value(sh, st, i, 1);
      }
      fputs(");\n", out);
      break;
    case MODE_QUOTE:
      if (first && sh->headers) {
        for (int i = 0; i < n; i++) {
          if (i) fputs(sh->colsep, out);
          mode_quoted_string(out, shale_column_name(st, i), 0);
        }
        fputs(sh->rowsep, out);
      }
      for (int i = 0; i < n; i++) {
        if (i) fputs(sh->colsep, out);
        print_sql_value(sh, st, i, 0);
      }
      fputs(sh->rowsep, out);
      break;
    case MODE_HTML:
      if (first && sh->headers) {
        fputs("<TR>", out);
        for (int i = 0; i < n; i++) {
          fputs("<TH>", out);
          print_html(out, shale_column_name(st, i));
          fputs("</TH>\n", out);
        }
        fputs("</TR>\n", out);
      }
      fputs("<TR>", out);
      for (int i = 0; i < n; i++) {
        const char *v = col_text(st, i);
        fputs("<TD>", out);
        print_html(out, v ? v : sh->nullvalue);
        fputs("</TD>\n", out);
      }
      fputs("</TR>\n", out);
      break;
    case MODE_TCL:
      if (first && sh->headers) {
        for (int i = 0; i < n; i++) {
          print_c_string(out, shale_column_name(st, i));
          if (i < n - 1) fputs(sh->colsep, out);
        }
        fputs(sh->rowsep, out);
      }
      for (int i = 0; i < n; i++) {
        const char *v = col_text(st, i);
        print_c_string(out, v ? v : sh->nullvalue);
        if (i < n - 1) fputs(sh->colsep, out);
      }
      fputs(sh->rowsep, out);
      break;
    default: /* list, tabs, ascii */
      if (first && sh->headers)
        for (int i = 0; i < n; i++)
          fprintf(out, "%s%s", shale_column_name(st, i), i == n - 1 ? sh->rowsep : sh->colsep);
      for (int i = 0; i < n; i++) {
        const char *v = col_text(st, i);
        fputs(v ? v : sh->nullvalue, out);
        fputs(i < n - 1 ? sh->colsep : sh->rowsep, out);
      }
  }
}

/* ---- columnar modes ---- */

static int nchars(const char *z) {
  int n = 0;
  for (; *z; z++)
    if ((*z & 0xc0) != 0x80) n++;
  return n;
}

/* The first display line of z (at most mx code points, 0: no limit) as a
 * new string; *tail = where the next line starts, or NULL. */
static char *display_line(const unsigned char *z, const unsigned char **tail, int mx, int ww) {
  if (mx <= 0) mx = 1000000;
  int i = 0, n = 0, k;
  while (n < mx) {
    if (z[i] >= ' ') {
      n++;
      do i++;
      while ((z[i] & 0xc0) == 0x80);
      continue;
    }
    if (z[i] == '\t') {
      do n++;
      while ((n & 7) != 0 && n < mx);
      i++;
      continue;
    }
    break;
  }
  if (n >= mx && ww) {
    for (k = i; k > i / 2; k--)
      if (isspace(z[k - 1])) break;
    if (k <= i / 2)
      for (k = i; k > i / 2; k--)
        if ((isalnum(z[k - 1]) != 0) != (isalnum(z[k]) != 0) && (z[k] & 0xc0) != 0x80) break;
    if (k <= i / 2) {
      k = i;
    } else {
      i = k;
      while (z[i] == ' ') i++;
    }
  } else {
    k = i;
  }
  if (n >= mx && z[i] >= ' ')
    *tail = &z[i];
  else if (z[i] == '\r' && z[i + 1] == '\n')
    *tail = z[i + 2] ? &z[i + 2] : NULL;
  else if (z[i] == 0 || z[i + 1] == 0)
    *tail = NULL;
  else
    *tail = &z[i + 1];
  /* copy the first k bytes, tabs expanded */
  char *o = shale_malloc((size_t)k * 8 + 1);
  if (!o) return NULL;
  int j = 0;
  n = 0;
  i = 0;
  while (i < k) {
    if (z[i] >= ' ') {
      n++;
      do o[j++] = (char)z[i++];
      while (i < k && (z[i] & 0xc0) == 0x80);
      continue;
    }
    if (z[i] == '\t') {
      do {
        n++;
        o[j++] = ' ';
      } while ((n & 7) != 0 && n < mx);
      i++;
      continue;
    }
    break;
  }
  o[j] = 0;
  return o;
}

/* --quote: the value as an SQL literal */
static char *quoted_value(shale_stmt *st, int i) {
  int t = shale_column_type(st, i);
  if (t == SHALE_NULL) return shell_strdup("NULL");
  if (t == SHALE_INTEGER || t == SHALE_FLOAT) return shell_strdup(col_text(st, i));
  if (t == SHALE_BLOB) {
    int n = shale_column_bytes(st, i);
    const unsigned char *b = shale_column_blob(st, i);
    char *r = shale_malloc((size_t)n * 2 + 4);
    if (!r) return NULL;
    r[0] = 'x';
    r[1] = '\'';
    for (int k = 0; k < n; k++) snprintf(r + 2 + 2 * k, 3, "%02x", b[k]);
    r[2 + 2 * n] = '\'';
    r[3 + 2 * n] = 0;
    return r;
  }
  const char *z = col_text(st, i);
  size_t n = strlen(z), k = 0;
  char *r = shale_malloc(2 * n + 3);
  if (!r) return NULL;
  r[k++] = '\'';
  for (; *z; z++) {
    if (*z == '\'') r[k++] = '\'';
    r[k++] = *z;
  }
  r[k++] = '\'';
  r[k] = 0;
  return r;
}

static void put_n(FILE *out, const char *s, int n) {
  for (int i = 0; i < n; i++) fputs(s, out);
}

/* Print z in w code points (w < 0: right-aligned), cut if longer. */
static void width_print(FILE *out, int w, const char *z) {
  int aw = w < 0 ? -w : w, i, n = 0;
  for (i = 0; z[i]; i++) {
    if ((z[i] & 0xc0) != 0x80) {
      n++;
      if (n == aw) {
        do i++;
        while ((z[i] & 0xc0) == 0x80);
        break;
      }
    }
  }
  if (n >= aw)
    fwrite(z, 1, (size_t)i, out);
  else if (w < 0)
    fprintf(out, "%*s%s", aw - n, "", z);
  else
    fprintf(out, "%s%*s", z, aw - n, "");
}

static void row_sep(FILE *out, int n, const int *w, const char *sep) {
  fputs(sep, out);
  for (int i = 0; i < n; i++) {
    put_n(out, "-", w[i] + 2);
    fputs(sep, out);
  }
  fputc('\n', out);
}

static void box_sep(FILE *out, int n, const int *w, const char *a, const char *b, const char *c) {
  fputs(a, out);
  for (int i = 0; i < n; i++) {
    if (i) fputs(b, out);
    put_n(out, "\xe2\x94\x80", w[i] + 2);
  }
  fputs(c, out);
  fputc('\n', out);
}

static void center(FILE *out, int w, const char *z) {
  int n = nchars(z);
  fprintf(out, "%*s%s%*s", (w - n) / 2, "", z, (w - n + 1) / 2, "");
}

#define BOX_V "\xe2\x94\x82"

static int columnar(Shell *sh, shale_stmt *st) {
  int rc = shale_step(st);
  if (rc != SHALE_ROW) return rc == SHALE_DONE ? SHALE_OK : rc;
  int ncol = shale_column_count(st);
  FILE *out = sh->out;
  if (ncol > sh->nwidths) {
    int *w = shale_realloc(sh->widths, sizeof(int) * (size_t)ncol);
    if (!w) return SHALE_NOMEM;
    for (int i = sh->nwidths; i < ncol; i++) w[i] = 0;
    sh->widths = w;
    sh->nwidths = ncol;
  }
  size_t cap = (size_t)ncol * 8, nd = 0, nrow = 0;
  char **data = shale_malloc(sizeof(char *) * cap);
  char *rowdiv = shale_malloc(cap / (size_t)ncol + 1);
  const unsigned char **next = shale_malloc(sizeof(char *) * (size_t)ncol);
  char **quoted = shale_malloc(sizeof(char *) * (size_t)ncol);
  int *aw = shale_malloc(sizeof(int) * (size_t)ncol);
  if (!data || !rowdiv || !next || !quoted || !aw) {
    rc = SHALE_NOMEM;
    goto done;
  }
  memset(quoted, 0, sizeof(char *) * (size_t)ncol);
  for (int i = 0; i < ncol; i++) {
    aw[i] = abs(sh->widths[i]);
    int wx = sh->widths[i] ? abs(sh->widths[i]) : g_wrap;
    const unsigned char *unused;
    const char *nm = shale_column_name(st, i);
    data[nd++] = display_line((const unsigned char *)(nm ? nm : ""), &unused, wx, g_wordwrap);
  }
  int multi = 0, more = 0;
  do {
    int use_next = more;
    more = 0;
    if (nd + (size_t)ncol > cap) {
      cap *= 2;
      char **nd2 = shale_realloc(data, sizeof(char *) * cap);
      char *rd2 = nd2 ? shale_realloc(rowdiv, cap / (size_t)ncol + 1) : NULL;
      if (nd2) data = nd2;
      if (rd2) rowdiv = rd2;
      if (!nd2 || !rd2) {
        rc = SHALE_NOMEM;
        goto done;
      }
    }
    rowdiv[nrow++] = 1;
    for (int i = 0; i < ncol; i++) {
      int wx = sh->widths[i] ? abs(sh->widths[i]) : g_wrap;
      const unsigned char *z;
      if (use_next) {
        z = next[i] ? next[i] : (const unsigned char *)"";
      } else if (g_quote) {
        shale_free(quoted[i]);
        quoted[i] = quoted_value(st, i);
        z = (const unsigned char *)(quoted[i] ? quoted[i] : "");
      } else {
        z = shale_column_text(st, i);
        if (!z) z = (const unsigned char *)sh->nullvalue;
      }
      data[nd++] = display_line(z, &next[i], wx, g_wordwrap);
      if (next[i]) {
        more = 1;
        rowdiv[nrow - 1] = 0;
        multi = 1;
      }
    }
  } while (more || (rc = shale_step(st)) == SHALE_ROW);
  if (rc == SHALE_DONE || rc == SHALE_ROW) rc = SHALE_OK;
  for (size_t i = 0; i < nd; i++) {
    int n = data[i] ? nchars(data[i]) : 0;
    if (n > aw[i % (size_t)ncol]) aw[i % (size_t)ncol] = n;
  }
  const char *colsep = "  ", *rowsepz = "\n";
  switch (sh->mode) {
    case MODE_COLUMN:
      if (sh->headers) {
        for (int i = 0; i < ncol; i++) {
          width_print(out, sh->widths[i] < 0 ? -aw[i] : aw[i], data[i] ? data[i] : "");
          fputs(i == ncol - 1 ? "\n" : "  ", out);
        }
        for (int i = 0; i < ncol; i++) {
          put_n(out, "-", aw[i]);
          fputs(i == ncol - 1 ? "\n" : "  ", out);
        }
      }
      break;
    case MODE_TABLE:
      colsep = " | ";
      rowsepz = " |\n";
      row_sep(out, ncol, aw, "+");
      fputs("| ", out);
      for (int i = 0; i < ncol; i++) {
        center(out, aw[i], data[i] ? data[i] : "");
        fputs(i == ncol - 1 ? " |\n" : " | ", out);
      }
      row_sep(out, ncol, aw, "+");
      break;
    case MODE_MARKDOWN:
      colsep = " | ";
      rowsepz = " |\n";
      fputs("| ", out);
      for (int i = 0; i < ncol; i++) {
        center(out, aw[i], data[i] ? data[i] : "");
        fputs(i == ncol - 1 ? " |\n" : " | ", out);
      }
      row_sep(out, ncol, aw, "|");
      break;
    case MODE_BOX:
      colsep = " " BOX_V " ";
      rowsepz = " " BOX_V "\n";
      box_sep(out, ncol, aw, "\xe2\x94\x8c", "\xe2\x94\xac", "\xe2\x94\x90");
      fputs(BOX_V " ", out);
      for (int i = 0; i < ncol; i++) {
        center(out, aw[i], data[i] ? data[i] : "");
        fputs(i == ncol - 1 ? " " BOX_V "\n" : " " BOX_V " ", out);
      }
      box_sep(out, ncol, aw, "\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4");
      break;
  }
  for (size_t i = (size_t)ncol, j = 0; i < nd; i++, j++) {
    if (j == 0 && sh->mode != MODE_COLUMN) fputs(sh->mode == MODE_BOX ? BOX_V " " : "| ", out);
    const char *z = data[i] ? data[i] : sh->nullvalue;
    width_print(out, sh->widths[j] < 0 ? -aw[j] : aw[j], z);
    if (j == (size_t)ncol - 1) {
      fputs(rowsepz, out);
      if (multi && rowdiv[i / (size_t)ncol - 1] && i + 1 < nd) {
        if (sh->mode == MODE_TABLE)
          row_sep(out, ncol, aw, "+");
        else if (sh->mode == MODE_BOX)
          box_sep(out, ncol, aw, "\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4");
        else if (sh->mode == MODE_COLUMN)
          fputc('\n', out);
      }
      j = (size_t)-1;
    } else {
      fputs(colsep, out);
    }
  }
  if (sh->mode == MODE_TABLE)
    row_sep(out, ncol, aw, "+");
  else if (sh->mode == MODE_BOX)
    box_sep(out, ncol, aw, "\xe2\x94\x94", "\xe2\x94\xb4", "\xe2\x94\x98");
done:
  if (data)
    for (size_t i = 0; i < nd; i++) shale_free(data[i]);
  if (quoted)
    for (int i = 0; i < ncol; i++) shale_free(quoted[i]);
  shale_free(data);
  shale_free(rowdiv);
  shale_free((void *)next);
  shale_free(quoted);
  shale_free(aw);
  return rc;
}

/* ---- EXPLAIN and EXPLAIN QUERY PLAN (whatever the mode, as sqlite3's
 * ".explain auto") ---- */

/* 1 for EXPLAIN, 2 for EXPLAIN QUERY PLAN, else 0. */
static int explain_kind(shale_stmt *st) {
  const char *z = shale_sql(st);
  if (!z) return 0;
  int len = (int)strlen(z), off = 0, k = 0, kind = 0;
  while (off < len && k < 3) {
    int type;
    int n = sql_token(z + off, len - off, &type);
    if (n <= 0) break;
    off += n;
    if (type == TK_SPACE) continue;
    if (k == 0 && type != TK_EXPLAIN) return 0;
    if (k == 0) kind = 1;
    if (k == 1 && type != TK_QUERY) return 1;
    if (k == 2) return type == TK_PLAN ? 2 : 1;
    k++;
  }
  return kind;
}

typedef struct EqpRow {
  int id, parent;
  char *text;
} EqpRow;

static void eqp_level(FILE *out, EqpRow *rows, int n, int parent, char *prefix, size_t cap) {
  size_t k = strlen(prefix);
  for (int i = 0; i < n; i++) {
    if (rows[i].parent != parent) continue;
    int next = -1;
    for (int j = i + 1; j < n && next < 0; j++)
      if (rows[j].parent == parent) next = j;
    fprintf(out, "%s%s%s\n", prefix, next >= 0 ? "|--" : "`--", rows[i].text);
    if (k + 7 < cap) {
      memcpy(prefix + k, next >= 0 ? "|  " : "   ", 4);
      eqp_level(out, rows, n, rows[i].id, prefix, cap);
      prefix[k] = 0;
    }
  }
}

static int exec_eqp(Shell *sh, shale_stmt *st) {
  EqpRow *rows = NULL;
  int n = 0, cap = 0, rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      EqpRow *nr = shale_realloc(rows, sizeof *rows * (size_t)cap);
      if (!nr) {
        rc = SHALE_NOMEM;
        break;
      }
      rows = nr;
    }
    const char *t = (const char *)shale_column_text(st, 3);
    rows[n].id = shale_column_int(st, 0);
    rows[n].parent = shale_column_int(st, 1);
    rows[n].text = shell_strdup(t ? t : "");
    n++;
  }
  if (n > 0) {
    char prefix[100] = "";
    fputs("QUERY PLAN\n", sh->out);
    eqp_level(sh->out, rows, n, 0, prefix, sizeof prefix);
  }
  for (int i = 0; i < n; i++) shale_free(rows[i].text);
  shale_free(rows);
  return rc == SHALE_DONE ? SHALE_OK : rc;
}

static int exec_explain(Shell *sh, shale_stmt *st) {
  static const int widths[] = {4, 13, 4, 4, 4, 13, 2, 13};
  int rc, n = shale_column_count(st), first = 1;
  if (n > 8) n = 8;
  FILE *out = sh->out;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    if (first) {
      for (int i = 0; i < n; i++) {
        width_print(out, widths[i], shale_column_name(st, i));
        fputs(i == n - 1 ? "\n" : "  ", out);
      }
      for (int i = 0; i < n; i++) {
        put_n(out, "-", widths[i]);
        fputs(i == n - 1 ? "\n" : "  ", out);
      }
      first = 0;
    }
    for (int i = 0; i < n; i++) {
      const char *v = col_text(st, i);
      const char *sep = "  ";
      int w = i == n - 1 ? 0 : widths[i];
      if (v && nchars(v) > w) {
        w = nchars(v);
        sep = " ";
      }
      width_print(out, w, v ? v : sh->nullvalue);
      fputs(i == n - 1 ? "\n" : sep, out);
    }
  }
  return rc == SHALE_DONE ? SHALE_OK : rc;
}

int mode_exec(Shell *sh, shale_stmt *st) {
  int kind = explain_kind(st);
  if (kind == 2) return exec_eqp(sh, st);
  if (kind == 1) return exec_explain(sh, st);
  if (sh->mode == MODE_COLUMN || sh->mode == MODE_TABLE || sh->mode == MODE_BOX ||
      sh->mode == MODE_MARKDOWN)
    return columnar(sh, st);
  int rc, n = shale_column_count(st);
  while ((rc = shale_step(st)) == SHALE_ROW) print_row(sh, st, n);
  if (sh->mode == MODE_JSON && sh->rowcnt > 0) fputs("]\n", sh->out);
  return rc == SHALE_DONE ? SHALE_OK : rc;
}

/* ---- .mode ---- */

static int bool_value(const char *z) {
  if (!strcmp(z, "on") || !strcmp(z, "yes") || !strcmp(z, "true")) return 1;
  if (!strcmp(z, "off") || !strcmp(z, "no") || !strcmp(z, "false")) return 0;
  return atoi(z) != 0;
}

static int opt_is(const char *z, const char *name) {
  if (z[0] != '-') return 0;
  z++;
  if (z[0] == '-') z++;
  return strcmp(z, name) == 0;
}

static int prefix(const char *z, const char *full) { return strncmp(z, full, strlen(z)) == 0; }

int mode_parse(Shell *sh, int argc, char **argv) {
  const char *zmode = NULL, *ztab = NULL;
  int wrap = 60, ww = 0, quote = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (opt_is(z, "wrap") && i + 1 < argc) {
      wrap = atoi(argv[++i]);
    } else if (opt_is(z, "ww")) {
      ww = 1;
    } else if (opt_is(z, "wordwrap") && i + 1 < argc) {
      ww = bool_value(argv[++i]);
    } else if (opt_is(z, "quote")) {
      quote = 1;
    } else if (opt_is(z, "noquote")) {
      quote = 0;
    } else if (!zmode) {
      zmode = z;
      if (!strcmp(z, "qbox")) {
        zmode = "box";
        wrap = 60;
        ww = 0;
        quote = 1;
      }
    } else if (!ztab) {
      ztab = z;
    } else if (z[0] == '-') {
      fprintf(stderr, "unknown option: %s\n", z);
      fputs(
          "options:\n"
          "  --noquote\n"
          "  --quote\n"
          "  --wordwrap on/off\n"
          "  --wrap N\n"
          "  --ww\n",
          stderr);
      return 1;
    } else {
      fprintf(stderr, "extra argument: \"%s\"\n", z);
      return 1;
    }
  }
  if (!zmode) {
    char d[100];
    mode_describe(sh, d, sizeof d);
    fprintf(sh->out, "current output mode: %s\n", d);
    zmode = mode_names[sh->mode];
  }
  int columnar_mode = 0;
  if (prefix(zmode, "lines")) {
    sh->mode = MODE_LINE;
    snprintf(sh->rowsep, SEP_MAX, "\n");
  } else if (prefix(zmode, "columns")) {
    sh->mode = MODE_COLUMN;
    if (!sh->headers_set) sh->headers = 1;
    snprintf(sh->rowsep, SEP_MAX, "\n");
    columnar_mode = 1;
  } else if (prefix(zmode, "list")) {
    sh->mode = MODE_LIST;
    snprintf(sh->colsep, SEP_MAX, "|");
    snprintf(sh->rowsep, SEP_MAX, "\n");
  } else if (prefix(zmode, "html")) {
    sh->mode = MODE_HTML;
  } else if (prefix(zmode, "tcl")) {
    sh->mode = MODE_TCL;
    snprintf(sh->colsep, SEP_MAX, " ");
    snprintf(sh->rowsep, SEP_MAX, "\n");
  } else if (prefix(zmode, "csv")) {
    sh->mode = MODE_CSV;
    snprintf(sh->colsep, SEP_MAX, ",");
    snprintf(sh->rowsep, SEP_MAX, "\r\n");
  } else if (prefix(zmode, "tabs")) {
    sh->mode = MODE_LIST;
    snprintf(sh->colsep, SEP_MAX, "\t");
  } else if (prefix(zmode, "insert")) {
    sh->mode = MODE_INSERT;
    shale_free(sh->table);
    sh->table = mode_quote_name(ztab ? ztab : "table");
  } else if (prefix(zmode, "quote")) {
    sh->mode = MODE_QUOTE;
    snprintf(sh->colsep, SEP_MAX, ",");
    snprintf(sh->rowsep, SEP_MAX, "\n");
  } else if (prefix(zmode, "ascii")) {
    sh->mode = MODE_ASCII;
    snprintf(sh->colsep, SEP_MAX, "\x1f");
    snprintf(sh->rowsep, SEP_MAX, "\x1e");
  } else if (prefix(zmode, "markdown")) {
    sh->mode = MODE_MARKDOWN;
    columnar_mode = 1;
  } else if (prefix(zmode, "table")) {
    sh->mode = MODE_TABLE;
    columnar_mode = 1;
  } else if (prefix(zmode, "box")) {
    sh->mode = MODE_BOX;
    columnar_mode = 1;
  } else if (prefix(zmode, "json")) {
    sh->mode = MODE_JSON;
  } else {
    fputs(
        "Error: mode should be one of: ascii box column csv html insert json line list "
        "markdown qbox quote table tabs tcl\n",
        stderr);
    return 1;
  }
  if (columnar_mode) {
    g_wrap = wrap;
    g_wordwrap = ww;
    g_quote = quote;
  }
  return 0;
}

/* The mode options of the command line (-csv, -box, ...): the mode and, for
 * some, the separators; unlike .mode they leave headers and wrapping alone. */
void mode_option(Shell *sh, const char *name) {
  static const struct {
    const char *name;
    int mode;
    const char *col, *row;
  } opts[] = {{"html", MODE_HTML, NULL, NULL},         {"list", MODE_LIST, NULL, NULL},
              {"quote", MODE_QUOTE, ",", "\n"},        {"line", MODE_LINE, NULL, NULL},
              {"column", MODE_COLUMN, NULL, NULL},     {"json", MODE_JSON, NULL, NULL},
              {"markdown", MODE_MARKDOWN, NULL, NULL}, {"table", MODE_TABLE, NULL, NULL},
              {"box", MODE_BOX, NULL, NULL},           {"csv", MODE_CSV, ",", NULL},
              {"ascii", MODE_ASCII, "\x1f", "\x1e"},   {"tabs", MODE_LIST, "\t", NULL}};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
    if (strcmp(name, opts[i].name) != 0) continue;
    sh->mode = opts[i].mode;
    if (opts[i].col) snprintf(sh->colsep, SEP_MAX, "%s", opts[i].col);
    if (opts[i].row) snprintf(sh->rowsep, SEP_MAX, "%s", opts[i].row);
  }
}

void mode_describe(Shell *sh, char *buf, size_t n) {
  int m = sh->mode;
  if (m == MODE_COLUMN || m == MODE_TABLE || m == MODE_BOX || m == MODE_MARKDOWN)
    snprintf(buf, n, "%s --wrap %d --wordwrap %s --%squote", mode_names[m], g_wrap,
             g_wordwrap ? "on" : "off", g_quote ? "" : "no");
  else
    snprintf(buf, n, "%s", mode_names[m]);
}
