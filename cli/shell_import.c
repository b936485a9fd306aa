/*
 * shell_import.c -- .import FILE TABLE: CSV/TSV/ASCII-separated text into a
 * new or existing table, as sqlite3 3.40.1 does it.
 *
 * The reader: a field ends at the column separator, the row separator or
 * the end of input; in CSV a field may be "quoted" ("" inside is one ");
 * a '\r' before the row separator '\n' is dropped; a UTF-8 BOM at the start
 * is skipped. Without --csv/--ascii the separators of the current mode are
 * used (in csv mode a "\r\n" row separator reads as "\n", and stays so).
 *
 * A missing table is created from the first row: every column TEXT,
 * duplicate names renamed NAME_POS (reported on stderr), an empty name is
 * "?". All rows go in under one transaction (when none is open); rows with
 * too few fields are NULL-filled, extra fields ignored, each reported as
 * "FILE:LINE: expected N columns but found M - ...".
 *
 * Invariants:
 *  1. Values are bound as text (parameters), never pasted into SQL.
 *  2. A failed INSERT is reported ("FILE:LINE: INSERT failed: MSG") and the
 *     import goes on; the command then returns 1.
 *  3. On a terminal (stderr a tty) a file larger than 1 MiB shows a progress
 *     bar on stderr, erased at the end; nothing of it appears otherwise.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell.h"

typedef struct Reader {
  FILE *in;
  const char *file;
  char *z; /* the field (allocated before the first read) */
  size_t n, cap;
  int line; /* current line (1-based) */
  int term; /* what ended the last field: csep, rsep or EOF */
  int csep, rsep;
  int not_first;
  int nomem;
  long long size, done; /* for the progress bar */
  int progress, shown;
} Reader;

static void add_char(Reader *r, int c) {
  if (r->n + 1 >= r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 100;
    char *z = shale_realloc(r->z, cap);
    if (!z) {
      r->nomem = 1;
      return;
    }
    r->z = z;
    r->cap = cap;
  }
  r->z[r->n++] = (char)c;
}

static int next_char(Reader *r) {
  int c = getc(r->in);
  if (c != EOF && r->progress && (++r->done & 0xffff) == 0) {
    int pct = (int)(r->done * 100 / (r->size ? r->size : 1));
    if (pct > 100) pct = 100;
    fprintf(stderr, "\r%s [%-40.*s] %3d%%", r->file, pct * 40 / 100,
            "########################################", pct);
    r->shown = 1;
  }
  return c;
}

static char *csv_field(Reader *r) {
  r->n = 0;
  int c = next_char(r);
  if (c == EOF) {
    r->term = EOF;
    return NULL;
  }
  if (c == '"') {
    int pc = 0, ppc = 0, start = r->line, q = c;
    for (;;) {
      c = next_char(r);
      if (c == r->rsep) r->line++;
      if (c == q && pc == q) {
        pc = 0;
        continue;
      }
      if ((c == r->csep && pc == q) || (c == r->rsep && pc == q) ||
          (c == r->rsep && pc == '\r' && ppc == q) || (c == EOF && pc == q)) {
        do r->n--;
        while (r->z[r->n] != q);
        r->term = c;
        break;
      }
      if (pc == q && c != '\r')
        fprintf(stderr, "%s:%d: unescaped %c character\n", r->file, r->line, q);
      if (c == EOF) {
        fprintf(stderr, "%s:%d: unterminated %c-quoted field\n", r->file, start, q);
        r->term = c;
        break;
      }
      add_char(r, c);
      ppc = pc;
      pc = c;
    }
  } else {
    if ((c & 0xff) == 0xef && !r->not_first) {
      add_char(r, c);
      c = next_char(r);
      if ((c & 0xff) == 0xbb) {
        add_char(r, c);
        c = next_char(r);
        if ((c & 0xff) == 0xbf) {
          r->not_first = 1;
          return csv_field(r);
        }
      }
    }
    while (c != EOF && c != r->csep && c != r->rsep) {
      add_char(r, c);
      c = next_char(r);
    }
    if (c == r->rsep) {
      r->line++;
      if (r->n > 0 && r->z[r->n - 1] == '\r') r->n--;
    }
    r->term = c;
  }
  if (r->z) r->z[r->n] = 0;
  r->not_first = 1;
  return r->z;
}

static char *ascii_field(Reader *r) {
  r->n = 0;
  int c = next_char(r);
  if (c == EOF) {
    r->term = EOF;
    return NULL;
  }
  while (c != EOF && c != r->csep && c != r->rsep) {
    add_char(r, c);
    c = next_char(r);
  }
  if (c == r->rsep) r->line++;
  r->term = c;
  if (r->z) r->z[r->n] = 0;
  return r->z;
}

static const char import_usage[] =
    ".import FILE TABLE       Import data from FILE into TABLE\n"
    "   Options:\n"
    "     --ascii               Use \\037 and \\036 as column and row separators\n"
    "     --csv                 Use , and \\n as column and row separators\n"
    "     --skip N              Skip the first N rows of input\n"
    "     --schema S            Target table to be S.TABLE\n"
    "     -v                    \"Verbose\" - increase auxiliary output\n"
    "   Notes:\n"
    "     *  If TABLE does not exist, it is created.  The first row of input\n"
    "        determines the column names.\n"
    "     *  If neither --csv or --ascii are used, the input mode is derived\n"
    "        from the \".mode\" output mode\n"
    "     *  If FILE begins with \"|\" then it is a command that generates the\n"
    "        input text.\n";

/* "name" with "" doubled. */
static void append_quoted(StrBuf *b, const char *name) {
  strbuf_appendz(b, "\"");
  for (const char *p = name; *p; p++) {
    char c[3] = {*p, *p == '"' ? '"' : 0, 0};
    strbuf_appendz(b, c);
  }
  strbuf_appendz(b, "\"");
}

static int table_exists(Shell *sh, const char *schema, const char *table, int *ncol) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "SELECT * FROM ");
  if (schema) {
    append_quoted(&b, schema);
    strbuf_appendz(&b, ".");
  }
  append_quoted(&b, table);
  shale_stmt *st = NULL;
  int rc = b.err ? SHALE_NOMEM : shale_prepare_v2(sh->db, b.z, -1, &st, NULL);
  strbuf_reset(&b);
  *ncol = st ? shale_column_count(st) : 0;
  shale_finalize(st);
  return rc == SHALE_OK;
}

/* Create the table from the names of the first row. */
static int create_table(Shell *sh, Reader *r, char *(*read)(Reader *), const char *schema,
                        const char *table) {
  char **names = NULL;
  int n = 0, cap = 0;
  char *z;
  while ((z = read(r)) != NULL) {
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nn = shale_realloc(names, sizeof(char *) * (size_t)cap);
      if (!nn) break;
      names = nn;
    }
    names[n++] = shell_strdup(z && *z ? z : "?");
    if (r->term != r->csep) break;
  }
  if (n == 0) {
    shale_free(names);
    fprintf(stderr, "%s: empty file\n", r->file);
    return 1;
  }
  /* duplicates become NAME_POS */
  char **final = shale_malloc(sizeof(char *) * (size_t)n);
  int renamed = 0;
  for (int i = 0; final && i < n; i++) {
    int dup = 0;
    for (int j = 0; j < n; j++)
      if (j != i && names[i] && names[j] && util_stricmp(names[i], names[j]) == 0) dup = 1;
    if (dup) {
      size_t k = strlen(names[i]) + 16;
      final[i] = shale_malloc(k);
      if (final[i]) snprintf(final[i], k, "%s_%d", names[i], i + 1);
      renamed++;
    } else {
      final[i] = shell_strdup(names[i]);
    }
  }
  if (renamed && final) {
    fprintf(stderr, "Columns renamed during .import %s due to duplicates:\n", r->file);
    int k = 0;
    for (int i = 0; i < n; i++)
      if (final[i] && names[i] && strcmp(final[i], names[i]) != 0)
        fprintf(stderr, "\"%s\" to \"%s\"%s\n", names[i], final[i], ++k < renamed ? "," : "");
  }
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "CREATE TABLE ");
  if (schema) {
    append_quoted(&b, schema);
    strbuf_appendz(&b, ".");
  }
  append_quoted(&b, table);
  strbuf_appendz(&b, "(\n");
  for (int i = 0; i < n; i++) {
    if (i) strbuf_appendz(&b, i % 4 ? ", " : ",\n ");
    append_quoted(&b, final && final[i] ? final[i] : "?");
    strbuf_appendz(&b, " TEXT");
  }
  strbuf_appendz(&b, ")");
  int rc = 1;
  if (!b.err && final) {
    char *err = NULL;
    rc = shale_exec(sh->db, b.z, NULL, NULL, &err);
    if (rc != SHALE_OK) {
      fprintf(stderr, "CREATE TABLE \"%s\"(...) failed: %s\n", table, err ? err : "");
      rc = 1;
    }
    shale_free(err);
  }
  for (int i = 0; i < n; i++) {
    shale_free(names[i]);
    if (final) shale_free(final[i]);
  }
  shale_free(names);
  shale_free(final);
  strbuf_reset(&b);
  return rc;
}

int import_command(Shell *sh, int argc, char **argv) {
  const char *file = NULL, *table = NULL, *schema = NULL;
  int skip = 0, verbose = 0, csv = 0, ascii = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] == '-' && z[1] == '-') z++;
    if (z[0] != '-') {
      if (!file)
        file = z;
      else if (!table)
        table = z;
      else {
        fprintf(sh->out, "ERROR: extra argument: \"%s\".  Usage:\n%s", z, import_usage);
        return 1;
      }
    } else if (!strcmp(z, "-v")) {
      verbose++;
    } else if (!strcmp(z, "-schema") && i + 1 < argc) {
      schema = argv[++i];
    } else if (!strcmp(z, "-skip") && i + 1 < argc) {
      skip = atoi(argv[++i]);
    } else if (!strcmp(z, "-ascii")) {
      ascii = 1;
      csv = 0;
    } else if (!strcmp(z, "-csv")) {
      csv = 1;
      ascii = 0;
    } else {
      fprintf(sh->out, "ERROR: unknown option: \"%s\".  Usage:\n%s", z, import_usage);
      return 1;
    }
  }
  if (!file || !table) {
    fprintf(sh->out, "ERROR: missing %s argument. Usage:\n%s", file ? "TABLE" : "FILE",
            import_usage);
    return 1;
  }
  Reader r;
  memset(&r, 0, sizeof r);
  r.file = file;
  r.line = 1;
  char *(*read)(Reader *) = csv_field;
  if (ascii) {
    r.csep = 0x1f;
    r.rsep = 0x1e;
    read = ascii_field;
  } else if (csv) {
    r.csep = ',';
    r.rsep = '\n';
  } else {
    if (strlen(sh->colsep) == 0) {
      fputs("Error: non-null column separator required for import\n", stderr);
      return 1;
    }
    if (strlen(sh->colsep) > 1) {
      fputs("Error: multi-character column separators not allowed for import\n", stderr);
      return 1;
    }
    if (strlen(sh->rowsep) == 0) {
      fputs("Error: non-null row separator required for import\n", stderr);
      return 1;
    }
    if (sh->mode == MODE_CSV && strcmp(sh->rowsep, "\r\n") == 0)
      snprintf(sh->rowsep, SEP_MAX, "\n");
    if (strlen(sh->rowsep) > 1) {
      fputs("Error: multi-character row separators not allowed for import\n", stderr);
      return 1;
    }
    r.csep = (unsigned char)sh->colsep[0];
    r.rsep = (unsigned char)sh->rowsep[0];
    if (sh->mode == MODE_ASCII) read = ascii_field;
  }
  r.cap = 100;
  r.z = shale_malloc(r.cap); /* an empty field reads as "", never NULL */
  if (!r.z) return 1;
  int pipe = file[0] == '|';
  if (pipe) {
    fflush(stdout);
    r.in = popen(file + 1, "r");
    r.file = "<pipe>";
  } else {
    r.in = fopen(file, "rb");
  }
  if (!r.in) {
    fprintf(stderr, "Error: cannot open \"%s\"\n", file);
    shale_free(r.z);
    return 1;
  }
  struct stat stt;
  if (!pipe && isatty(2) && fstat(fileno(r.in), &stt) == 0 && stt.st_size > (1 << 20)) {
    r.progress = 1;
    r.size = (long long)stt.st_size;
  }
  int nerr = 0, nrow = 0, ncol = 0, rc = 0;
  shale_stmt *st = NULL;
  while (skip-- > 0)
    while (read(&r) && r.term == r.csep) {
    }
  if (!table_exists(sh, schema, table, &ncol)) {
    if (create_table(sh, &r, read, schema, table) || !table_exists(sh, schema, table, &ncol)) {
      rc = 1;
      goto done;
    }
  }
  if (ncol == 0) goto done;
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "INSERT INTO ");
  if (schema) {
    append_quoted(&b, schema);
    strbuf_appendz(&b, ".");
  }
  append_quoted(&b, table);
  strbuf_appendz(&b, " VALUES(");
  for (int i = 0; i < ncol; i++) strbuf_appendz(&b, i ? ",?" : "?");
  strbuf_appendz(&b, ")");
  if (b.err || shale_prepare_v2(sh->db, b.z, -1, &st, NULL) != SHALE_OK) {
    fprintf(stderr, "Error: %s\n", shale_errmsg(sh->db));
    strbuf_reset(&b);
    rc = 1;
    goto done;
  }
  strbuf_reset(&b);
  int need_commit = shale_get_autocommit(sh->db);
  if (need_commit) shale_exec(sh->db, "BEGIN", NULL, NULL, NULL);
  do {
    int start = r.line, i;
    for (i = 0; i < ncol; i++) {
      char *z = read(&r);
      if (!z && i == 0) break;
      if (sh->mode == MODE_ASCII && (!z || !z[0]) && i == 0) break;
      if (z)
        shale_bind_text(st, i + 1, z, -1, SHALE_TRANSIENT);
      else
        shale_bind_null(st, i + 1);
      if (i < ncol - 1 && r.term != r.csep) {
        fprintf(stderr, "%s:%d: expected %d columns but found %d - filling the rest with NULL\n",
                r.file, start, ncol, i + 1);
        i += 2;
        while (i <= ncol) shale_bind_null(st, i++);
      }
    }
    if (r.term == r.csep) {
      do {
        read(&r);
        i++;
      } while (r.term == r.csep);
      fprintf(stderr, "%s:%d: expected %d columns but found %d - extras ignored\n", r.file, start,
              ncol, i);
    }
    if (i >= ncol) {
      shale_step(st);
      if (shale_reset(st) != SHALE_OK) {
        fprintf(stderr, "%s:%d: INSERT failed: %s\n", r.file, start, shale_errmsg(sh->db));
        nerr++;
      } else {
        nrow++;
      }
    }
  } while (r.term != EOF && !r.nomem);
  shale_finalize(st);
  st = NULL;
  if (need_commit) shale_exec(sh->db, "COMMIT", NULL, NULL, NULL);
  if (verbose)
    fprintf(sh->out, "Added %d rows with %d errors using %d lines of input\n", nrow, nerr,
            r.line - 1);
  if (nerr) rc = 1;
done:
  if (r.shown) fprintf(stderr, "\r%*s\r", (int)strlen(r.file) + 50, "");
  shale_finalize(st);
  shale_free(r.z);
  if (pipe)
    pclose(r.in);
  else
    fclose(r.in);
  return rc;
}
