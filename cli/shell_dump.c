/*
 * shell_dump.c -- the commands that read sqlite_schema through SQL: .dump,
 * .schema, .tables and .indexes, with sqlite3's exact text.
 *
 * .dump prints "PRAGMA foreign_keys=OFF;", "BEGIN TRANSACTION;", every table
 * (rowid order, sqlite_sequence last) with its rows as INSERT statements in
 * insert mode (newlines as replace(...,'\n',char(10))), sqlite_sequence as
 * "DELETE FROM sqlite_sequence;" plus its rows, then the indexes, triggers
 * and views in sqlite_schema order, then "COMMIT;". The text reloads in
 * sqlite3.
 *
 * Invariants:
 *  1. A CREATE TABLE whose name is quoted prints as "CREATE TABLE IF NOT
 *     EXISTS ..." (as sqlite3's .schema and .dump do); a view in .schema is
 *     followed by a comment naming its columns: "/ * v(a,b) * /".
 *  2. Patterns are LIKE patterns (GLOB when they hold * ? or [ in .schema),
 *     bound as parameters, never pasted into SQL text.
 *  3. Names printed into SQL are quoted with "" when they are not plain
 *     identifiers or are keywords (mode_quote_name).
 */
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static int sql_error(Shell *sh) {
  fprintf(stderr, "Error: %s\n", shale_errmsg(sh->db));
  return 1;
}

static int prepare(Shell *sh, const char *sql, shale_stmt **st) {
  if (shale_prepare_v2(sh->db, sql, -1, st, NULL) != SHALE_OK) {
    *st = NULL;
    return sql_error(sh);
  }
  return 0;
}

/* "SELECT ... FROM pragma_X('name')": the name as a string literal (the
 * table-valued pragmas take literal arguments only). */
static int prepare_pragma(Shell *sh, const char *cols, const char *pragma, const char *name,
                          shale_stmt **st) {
  size_t n = strlen(name), k = 0;
  char *lit = shale_malloc(2 * n + 3);
  if (!lit) return 1;
  lit[k++] = '\'';
  for (const char *p = name; *p; p++) {
    if (*p == '\'') lit[k++] = '\'';
    lit[k++] = *p;
  }
  lit[k++] = '\'';
  lit[k] = 0;
  char *sql = shale_malloc(k + strlen(cols) + strlen(pragma) + 40);
  int rc = 1;
  if (sql) {
    sprintf(sql, "SELECT %s FROM pragma_%s(%s)", cols, pragma, lit);
    rc = shale_prepare_v2(sh->db, sql, -1, st, NULL) != SHALE_OK;
  }
  shale_free(sql);
  shale_free(lit);
  if (rc) {
    shale_finalize(*st);
    *st = NULL;
  }
  return rc;
}

/* ---- .tables / .indexes ---- */

int tables_command(Shell *sh, int argc, char **argv, int indexes) {
  if (indexes && argc > 2) {
    fputs("Usage: .indexes ?LIKE-PATTERN?\n", stderr);
    return 1;
  }
  shale_stmt *st;
  const char *sql = indexes ? "SELECT name FROM sqlite_schema WHERE type='index' AND tbl_name "
                              "LIKE ?1 ORDER BY 1"
                            : "SELECT name FROM sqlite_schema WHERE type IN ('table','view') AND "
                              "name NOT LIKE 'sqlite_%' AND name LIKE ?1 ORDER BY 1";
  if (prepare(sh, sql, &st)) return 1;
  shale_bind_text(st, 1, argc > 1 ? argv[1] : "%", -1, SHALE_TRANSIENT);
  char **names = NULL;
  int n = 0, cap = 0, maxlen = 0, rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    const char *z = (const char *)shale_column_text(st, 0);
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nn = shale_realloc(names, sizeof(char *) * (size_t)cap);
      if (!nn) break;
      names = nn;
    }
    names[n] = shell_strdup(z ? z : "");
    if (names[n] && (int)strlen(names[n]) > maxlen) maxlen = (int)strlen(names[n]);
    n++;
  }
  int err = rc != SHALE_DONE && rc != SHALE_ROW;
  if (err) sql_error(sh);
  shale_finalize(st);
  if (!err && n > 0) {
    int ncols = 80 / (maxlen + 2);
    if (ncols < 1) ncols = 1;
    int nrows = (n + ncols - 1) / ncols;
    for (int i = 0; i < nrows; i++) {
      for (int j = i; j < n; j += nrows)
        fprintf(sh->out, "%s%-*s", j < nrows ? "" : "  ", maxlen, names[j] ? names[j] : "");
      fputc('\n', sh->out);
    }
  }
  for (int i = 0; i < n; i++) shale_free(names[i]);
  shale_free(names);
  return err;
}

/* ---- schema text ---- */

static int starts_with_ci(const char *z, const char *p) {
  return util_strnicmp(z, p, (int)strlen(p)) == 0;
}

/* "v(a,b,"odd name")" from PRAGMA table_info, or NULL. */
static char *view_columns(Shell *sh, const char *name) {
  shale_stmt *st = NULL;
  if (prepare_pragma(sh, "name", "table_info", name, &st)) return NULL;
  size_t cap = 256, n = 0;
  char *r = shale_malloc(cap);
  int nrow = 0;
  char *q = mode_quote_name(name);
  if (!r || !q) goto fail;
  n = (size_t)snprintf(r, cap, "%s", q);
  shale_free(q);
  q = NULL;
  while (shale_step(st) == SHALE_ROW) {
    const char *c = (const char *)shale_column_text(st, 0);
    char *qc = mode_quote_name(c ? c : "");
    if (!qc) goto fail;
    size_t k = strlen(qc);
    if (n + k + 4 > cap) {
      cap = (n + k + 4) * 2;
      char *nr = shale_realloc(r, cap);
      if (!nr) {
        shale_free(qc);
        goto fail;
      }
      r = nr;
    }
    r[n++] = nrow++ ? ',' : '(';
    memcpy(r + n, qc, k + 1);
    n += k;
    shale_free(qc);
  }
  shale_finalize(st);
  if (nrow == 0) {
    shale_free(r);
    return NULL;
  }
  r[n++] = ')';
  r[n] = 0;
  return r;
fail:
  shale_free(q);
  shale_free(r);
  shale_finalize(st);
  return NULL;
}

/* Print a schema statement followed by tail, as sqlite3's printSchemaLine. */
static void print_schema_line(Shell *sh, const char *z, const char *tail) {
  char *fixed = NULL;
  if (tail[0] == ';' && (strstr(z, "/*") || strstr(z, "--"))) {
    static const char *const term[] = {"", "*/", "\n"};
    for (int i = 0; i < 3; i++) {
      size_t n = strlen(z), k = strlen(term[i]);
      char *t = shale_malloc(n + k + 2);
      if (!t) break;
      memcpy(t, z, n);
      memcpy(t + n, term[i], k);
      t[n + k] = ';';
      t[n + k + 1] = 0;
      if (shale_complete(t)) {
        t[n + k] = 0;
        fixed = t;
        z = t;
        break;
      }
      shale_free(t);
    }
  }
  if (strncmp(z, "CREATE TABLE ", 13) == 0 && (z[13] == '\'' || z[13] == '"'))
    fprintf(sh->out, "CREATE TABLE IF NOT EXISTS %s%s", z + 13, tail);
  else
    fprintf(sh->out, "%s%s", z, tail);
  shale_free(fixed);
}

/* print_schema_line for the first n bytes of z. */
static void print_schema_line_n(Shell *sh, char *z, size_t n, const char *tail) {
  char c = z[n];
  z[n] = 0;
  print_schema_line(sh, z, tail);
  z[n] = c;
}

static int is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Only white space (or a "--" comment) up to the end of the line. */
static int ws_to_eol(const char *z) {
  for (int i = 0; z[i]; i++) {
    if (z[i] == '\n') return 1;
    if (is_ws(z[i])) continue;
    if (z[i] == '-' && z[i + 1] == '-') return 1;
    return 0;
  }
  return 1;
}

/* .schema --indent: white space collapsed; a statement of 79 bytes or more
 * gets one line per top-level item of its parenthesized list, indented by
 * two spaces. Views and triggers print as stored. The quote tracking is
 * sqlite3's, quirks included (parentheses inside quotes still count; a
 * quote of another kind inside quotes takes over), to print the same text. */
static void print_pretty(Shell *sh, const char *sql) {
  if (starts_with_ci(sql, "CREATE VIEW") || starts_with_ci(sql, "CREATE TRIG")) {
    fprintf(sh->out, "%s;\n", sql);
    return;
  }
  char *z = shell_strdup(sql);
  if (!z) return;
  size_t i = 0, j = 0;
  char c;
  while (is_ws(z[i])) i++;
  for (; (c = z[i]) != 0; i++) {
    if (is_ws(c)) {
      if (j > 0 && z[j - 1] == '\r') z[j - 1] = '\n';
      if (j > 0 && (is_ws(z[j - 1]) || z[j - 1] == '(')) continue;
    } else if ((c == '(' || c == ')') && j > 0 && is_ws(z[j - 1])) {
      j--;
    }
    z[j++] = c;
  }
  while (j > 0 && is_ws(z[j - 1])) j--;
  z[j] = 0;
  if (strlen(z) >= 79) {
    int paren = 0, lines = 0;
    char end = 0;
    for (i = j = 0; (c = z[i]) != 0; i++) {
      if (c == end) {
        end = 0;
      } else if (c == '"' || c == '\'' || c == '`') {
        end = c;
      } else if (c == '[') {
        end = ']';
      } else if (c == '-' && z[i + 1] == '-') {
        end = '\n';
      } else if (c == '(') {
        paren++;
      } else if (c == ')') {
        paren--;
        if (lines > 0 && paren == 0 && j > 0) {
          print_schema_line_n(sh, z, j, "\n");
          j = 0;
        }
      }
      z[j++] = c;
      if (paren == 1 && end == 0 &&
          (c == '(' || c == '\n' || (c == ',' && !ws_to_eol(z + i + 1)))) {
        if (c == '\n') j--;
        print_schema_line_n(sh, z, j, "\n  ");
        j = 0;
        lines++;
        while (is_ws(z[i + 1])) i++;
      }
    }
    z[j] = 0;
  }
  print_schema_line(sh, z, ";\n");
  shale_free(z);
}

/* ---- .schema ---- */

int schema_command(Shell *sh, int argc, char **argv) {
  const char *pat = NULL;
  int nosys = 0, indent = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] == '-' && (!strcmp(z, "--indent") || !strcmp(z, "-indent"))) {
      indent = 1;
      continue;
    }
    if (z[0] == '-' && (!strcmp(z, "--nosys") || !strcmp(z, "-nosys"))) {
      nosys = 1;
    } else if (z[0] == '-') {
      fprintf(stderr, "Unknown option: \"%s\"\n", z);
      return 1;
    } else if (pat) {
      fputs("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?\n", stderr);
      return 1;
    } else {
      pat = z;
    }
  }
  if (pat && (!util_stricmp(pat, "sqlite_master") || !util_stricmp(pat, "sqlite_schema"))) {
    fprintf(sh->out,
            "CREATE TABLE %s (\n  type text,\n  name text,\n  tbl_name text,\n"
            "  rootpage integer,\n  sql text\n);\n",
            pat);
    return 0;
  }
  char sql[400];
  int glob = pat && (strchr(pat, '*') || strchr(pat, '?') || strchr(pat, '['));
  snprintf(
      sql, sizeof sql,
      "SELECT sql, type, name FROM sqlite_schema WHERE %s %s sql IS NOT NULL ORDER BY rowid",
      pat ? (glob ? "lower(tbl_name) GLOB ?1 AND" : "lower(tbl_name) LIKE ?1 ESCAPE '\\' AND") : "",
      nosys ? "name NOT LIKE 'sqlite_%' AND" : "");
  shale_stmt *st;
  if (prepare(sh, sql, &st)) return 1;
  if (pat) shale_bind_text(st, 1, pat, -1, SHALE_TRANSIENT);
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    const char *z = (const char *)shale_column_text(st, 0);
    const char *name = (const char *)shale_column_text(st, 2);
    char *view = NULL, *with = NULL;
    if (starts_with_ci(z, "CREATE VIEW ") && name) view = view_columns(sh, name);
    if (view) {
      with = shale_malloc(strlen(z) + strlen(view) + 10);
      if (with) sprintf(with, "%s\n/* %s */", z, view);
    }
    if (indent)
      print_pretty(sh, with ? with : z);
    else
      print_schema_line(sh, with ? with : z, ";\n");
    shale_free(with);
    shale_free(view);
  }
  int err = rc != SHALE_DONE;
  if (err) sql_error(sh);
  shale_finalize(st);
  return err;
}

/* ---- .dump ---- */

/* The rows of table name as INSERT statements. */
/* z with its single quotes doubled (the inside of an SQL string). */
static void put_sql_string(FILE *out, const char *z) {
  for (; *z; z++) {
    if (*z == '\'') fputc('\'', out);
    fputc(*z, out);
  }
}

static int dump_rows(Shell *sh, const char *name) {
  char *q = mode_quote_name(name);
  if (!q) return 1;
  /* the stored columns (generated ones excluded), as sqlite3 lists them */
  shale_stmt *st = NULL;
  int rc = prepare_pragma(sh, "name, hidden", "table_xinfo", name, &st);
  size_t cap = 256, n = 0;
  char *cols = shale_malloc(cap);
  int ncol = 0;
  if (rc == 0 && cols) {
    cols[0] = 0;
    while (shale_step(st) == SHALE_ROW) {
      int hidden = shale_column_int(st, 1);
      if (hidden == 2 || hidden == 3) continue; /* generated: not dumped */
      char *qc = mode_quote_name((const char *)shale_column_text(st, 0));
      if (!qc) break;
      size_t k = strlen(qc);
      if (n + k + 2 > cap) {
        cap = (n + k + 2) * 2;
        char *nc = shale_realloc(cols, cap);
        if (!nc) {
          shale_free(qc);
          break;
        }
        cols = nc;
      }
      if (ncol++) cols[n++] = ',';
      memcpy(cols + n, qc, k + 1);
      n += k;
      shale_free(qc);
    }
  }
  shale_finalize(st);
  st = NULL;
  char *sql = NULL;
  if (cols && ncol > 0) {
    sql = shale_malloc(strlen(cols) + strlen(q) + 32);
    if (sql) sprintf(sql, "SELECT %s FROM %s", cols, q);
  }
  int err = 0;
  if (!sql) {
    err = 1;
  } else if (shale_prepare_v2(sh->db, sql, -1, &st, NULL) != SHALE_OK) {
    err = sql_error(sh);
  } else {
    int nc = shale_column_count(st);
    while ((rc = shale_step(st)) == SHALE_ROW) {
      fprintf(sh->out, "INSERT INTO %s", q);
      for (int i = 0; i < nc; i++) {
        fputs(i ? "," : " VALUES(", sh->out);
        switch (shale_column_type(st, i)) {
          case SHALE_NULL:
            fputs("NULL", sh->out);
            break;
          case SHALE_INTEGER:
            fputs((const char *)shale_column_text(st, i), sh->out);
            break;
          case SHALE_FLOAT: {
            char buf[64];
            mode_real(shale_column_double(st, i), buf, sizeof buf);
            fputs(buf, sh->out);
            break;
          }
          case SHALE_BLOB: {
            const unsigned char *b = shale_column_blob(st, i);
            int nb = shale_column_bytes(st, i);
            fputs("X'", sh->out);
            for (int k = 0; k < nb; k++) fprintf(sh->out, "%02x", b[k]);
            fputc('\'', sh->out);
            break;
          }
          default:
            mode_quoted_string(sh->out, (const char *)shale_column_text(st, i), 1);
        }
      }
      fputs(");\n", sh->out);
    }
    if (rc != SHALE_DONE) err = sql_error(sh);
  }
  shale_finalize(st);
  shale_free(sql);
  shale_free(cols);
  shale_free(q);
  return err;
}

int dump_command(Shell *sh, int argc, char **argv) {
  /* WHERE clause: name LIKE ?1 OR name LIKE ?2 ... */
  char where[2048] = "";
  int npat = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] == '-') {
      const char *o = z[1] == '-' ? z + 2 : z + 1;
      if (!strcmp(o, "preserve-rowids") || !strcmp(o, "newlines") || !strcmp(o, "data-only") ||
          !strcmp(o, "nosys"))
        continue; /* accepted; the default text is what sqlite3 prints */
      fprintf(stderr, "Unknown option \"%s\" on \".dump\"\n", z);
      return 1;
    }
    if (npat >= 40) break;
    npat++;
    size_t k = strlen(where);
    snprintf(where + k, sizeof where - k, "%sname LIKE ?%d ESCAPE '\\'", npat > 1 ? " OR " : "",
             npat);
  }
  if (!npat) snprintf(where, sizeof where, "1");
  char sql[2600];
  FILE *out = sh->out;
  fputs("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n", out);
  int err = 0, writable = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0)
      snprintf(sql, sizeof sql,
               "SELECT name, type, sql FROM sqlite_schema WHERE (%s) AND type=='table' AND sql "
               "NOT NULL ORDER BY tbl_name='sqlite_sequence', rowid",
               where);
    else
      snprintf(sql, sizeof sql,
               "SELECT sql, type, name FROM sqlite_schema WHERE (%s) AND sql NOT NULL AND type IN "
               "('index','trigger','view') ORDER BY rowid",
               where);
    shale_stmt *st;
    if (prepare(sh, sql, &st)) {
      err = 1;
      break;
    }
    for (int i = 1, k = 1; i < argc; i++)
      if (argv[i][0] != '-' && k <= npat) shale_bind_text(st, k++, argv[i], -1, SHALE_TRANSIENT);
    int rc;
    while ((rc = shale_step(st)) == SHALE_ROW) {
      if (pass == 1) {
        const char *z = (const char *)shale_column_text(st, 0);
        fputs(z, out);
        fputs(strstr(z, "--") ? "\n;\n" : ";\n", out);
        continue;
      }
      char *name = shell_strdup((const char *)shale_column_text(st, 0));
      char *text = shell_strdup((const char *)shale_column_text(st, 2));
      if (!name || !text) {
        shale_free(name);
        shale_free(text);
        err = 1;
        break;
      }
      int data = 1;
      if (!strcmp(name, "sqlite_sequence")) {
        fputs("DELETE FROM sqlite_sequence;\n", out);
      } else if (!strncmp(name, "sqlite_stat", 11) && strlen(name) == 12) {
        fputs("ANALYZE sqlite_schema;\n", out);
      } else if (!strncmp(name, "sqlite_", 7)) {
        data = 0;
      } else if (!strncmp(text, "CREATE VIRTUAL TABLE", 20)) {
        /* as sqlite3: the row itself, since the module may be missing */
        if (!writable) fputs("PRAGMA writable_schema=ON;\n", out);
        writable = 1;
        fputs("INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','", out);
        put_sql_string(out, name);
        fputs("','", out);
        put_sql_string(out, name);
        fputs("',0,'", out);
        put_sql_string(out, text);
        fputs("');\n", out);
        data = 0;
      } else if (strncmp(text, "CREATE TABLE ", 13) == 0 && (text[13] == '\'' || text[13] == '"')) {
        fprintf(out, "CREATE TABLE IF NOT EXISTS %s;\n", text + 13);
      } else {
        print_schema_line(sh, text, ";\n");
      }
      if (data) err |= dump_rows(sh, name);
      shale_free(name);
      shale_free(text);
    }
    if (rc != SHALE_DONE && rc != SHALE_ROW) err = sql_error(sh);
    shale_finalize(st);
  }
  if (writable) fputs("PRAGMA writable_schema=OFF;\n", out);
  fputs(err ? "ROLLBACK; -- due to errors\n" : "COMMIT;\n", out);
  return err;
}
