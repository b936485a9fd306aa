/*
 * shell.h -- the state shared by the parts of build/shale, the SQL shell.
 *
 * The shell is a drop-in for the sqlite3 command-line shell (3.40.1): the
 * same options, dot-commands, output modes, error lines and exit codes.
 *   shell.c         main: options, the input loop, running SQL, error lines
 *   shell_mode.c    the output modes (list csv column table box markdown json
 *                   line insert quote tabs html tcl ascii)
 *   shell_dot.c     the dot-commands
 *   shell_import.c  .import (CSV/ASCII reader, progress bar on a terminal)
 *   shell_dump.c    .dump, .schema, .tables, .indexes (sqlite_schema readers)
 *   shell_store.c   .dbinfo and the storage-level extras .rows .count .check
 *   shell_edit.c    line reading: libedit (prompt, editing, history) or fgets
 *
 * Invariants:
 *  1. Everything the shell prints as results goes to sh->out (stdout unless
 *     .output/.once says otherwise); errors go to stderr.
 *  2. The shell talks to the database only through the native API
 *     (include/shale.h), except shell_store.c, which reads trees directly.
 *  3. Every function that reports an error returns non-zero; the caller
 *     counts it (sh->nerr) and -bail stops at the first one.
 */
#ifndef SHALE_SHELL_H
#define SHALE_SHELL_H

#include <stdio.h>

#include "../src/util/util.h"
#include "shale.h"

enum {
  MODE_LIST,
  MODE_LINE,
  MODE_COLUMN,
  MODE_TABLE,
  MODE_BOX,
  MODE_MARKDOWN,
  MODE_CSV,
  MODE_JSON,
  MODE_INSERT,
  MODE_QUOTE,
  MODE_TABS, /* printed as list; .show/.mode say "tabs" */
  MODE_HTML,
  MODE_TCL,
  MODE_ASCII
};

#define SEP_MAX 20 /* sqlite3 keeps separators and the null text in 20 bytes */

typedef struct Shell {
  shale *db;
  char *dbname; /* as given ("" = in-memory, shown as such by .show) */
  int readonly; /* -readonly: open read-only */
  int mode;
  char *table; /* insert mode's table, already quoted when it needs to be */
  int headers;
  int headers_set; /* .headers or -header/-noheader seen: columnar modes keep it */
  char colsep[SEP_MAX], rowsep[SEP_MAX], nullvalue[SEP_MAX];
  int *widths; /* .width */
  int nwidths;
  FILE *out;
  char *outname; /* "stdout" or the file of .output/.once */
  int outpipe;   /* out came from popen */
  int once;      /* .once: output goes back to stdout after the next command */
  int echo, bail, timer, changes;
  int interactive; /* the prompt loop on a terminal */
  int nerr;        /* errors seen so far */
  int quit;        /* .quit/.exit seen */
  int exitcode;    /* .exit CODE */
  int rowcnt;      /* rows printed by the current statement */
} Shell;

/* shell.c */
int shell_open(Shell *sh, const char *name, int readonly, int fresh);
int shell_run_sql(Shell *sh, const char *sql, int line, int in_file);
int shell_process(Shell *sh, FILE *in, int interactive);
void shell_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *shell_strdup(const char *z);

/* shell_mode.c: print the rows of a prepared statement in sh->mode. SHALE_OK
 * or the error rc of shale_step (the caller reports it). */
int mode_exec(Shell *sh, shale_stmt *st);
int mode_parse(Shell *sh, int argc, char **argv);
void mode_option(Shell *sh, const char *name);
void mode_describe(Shell *sh, char *buf, size_t n);
const char *mode_name(int mode);
/* Quoted for SQL text in insert mode: "x y" -> "\"x y\"" (malloc'ed). */
char *mode_quote_name(const char *name);
int mode_needs_quote(const char *name);
/* Text of a real as quote/insert/json modes print it (%!.20g, n.0, 1e999). */
void mode_real(double r, char *buf, size_t n);
void mode_quoted_string(FILE *out, const char *z, int escape_newlines);

/* shell_dot.c: run one dot-command line; 0 ok, 1 error, 2 quit. */
int dot_command(Shell *sh, char *line);
void dot_output_reset(Shell *sh);

/* shell_import.c */
int import_command(Shell *sh, int argc, char **argv);

/* shell_dump.c */
int dump_command(Shell *sh, int argc, char **argv);
int schema_command(Shell *sh, int argc, char **argv);
int tables_command(Shell *sh, int argc, char **argv, int indexes);

/* shell_store.c */
int store_dbinfo(Shell *sh);
int store_rows(Shell *sh, const char *table);
int store_count(Shell *sh, const char *table);
int store_check(Shell *sh);
void store_close(void);

/* shell_edit.c */
void edit_init(int interactive);
/* The next input line without its '\n' (malloc'ed), NULL at end of input. */
char *edit_readline(FILE *in, const char *prompt, int interactive);
void edit_add_history(const char *line);
void edit_done(void);

#endif /* SHALE_SHELL_H */
