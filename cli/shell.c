/*
 * shell.c -- build/shale, the SQL shell: a drop-in for the sqlite3 shell.
 *
 *   shale [OPTIONS] [FILE [SQL|.CMD]...]     no FILE: an in-memory database
 *
 * Owns main (the two passes over the options, as sqlite3 makes them), the
 * input loop (lines gathered until sqlite3_complete's rule says a statement
 * ends -- src/parse/complete.c's resumable scan, each line scanned once --,
 * dot-commands at the start of a line), running SQL (every statement of a
 * chunk, rows printed by shell_mode.c) and the error lines sqlite3 prints:
 *   Parse error near line N: MSG            (prepare failed; + context)
 *   Runtime error near line N: MSG (CODE)   (step failed; code > 1)
 * ("Parse error: MSG" on a terminal; "Error: in prepare, MSG" for SQL given
 * as an argument.) The rest of the failing input chunk is skipped.
 *
 * Invariants:
 *  1. Exit codes are sqlite3's: 0; 1 when input read from a file or pipe
 *     had an error (or -bail stopped it); an SQL argument that fails exits
 *     with its result code; .exit N exits with N.
 *  2. A statement's error context (the "^--- error here" lines) is only
 *     printed where the offending token can be located (syntax errors,
 *     unrecognized tokens, unknown or ambiguous columns, unknown functions or
 *     wrong argument counts, tables/views/triggers that exist): the API has
 *     no error offset, so the shell finds the token SQLite would point at.
 *  3. The database is opened before any SQL or dot-command runs; a failed
 *     open at start-up exits with 1 as sqlite3 does.
 */
#include "shell.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "../src/parse/parse.h"

static Shell *g_shell; /* for the SIGINT handler */

void shell_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

char *shell_strdup(const char *z) {
  if (!z) return NULL;
  size_t n = strlen(z);
  char *r = shale_malloc(n + 1);
  if (r) memcpy(r, z, n + 1);
  return r;
}

/* ---- opening ---- */

int shell_open(Shell *sh, const char *name, int readonly, int fresh) {
  const char *path = name && *name ? name : ":memory:";
  if (fresh && strcmp(path, ":memory:") != 0) remove(path);
  shale *db = NULL;
  int flags = readonly ? SHALE_OPEN_READONLY : SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE;
  int rc = shale_open_v2(path, &db, flags, NULL);
  if (rc != SHALE_OK && !readonly) {
    /* a file we may only read: open it read-only, as SQLite's VFS does */
    shale_close(db);
    db = NULL;
    if (access(path, F_OK) == 0) rc = shale_open_v2(path, &db, SHALE_OPEN_READONLY, NULL);
  }
  if (rc != SHALE_OK) {
    shell_error("Error: unable to open database \"%s\": %s", path,
                db ? shale_errmsg(db) : shale_errstr(rc));
    shale_close(db);
    return 1;
  }
  if (sh->db) shale_close_v2(sh->db);
  store_close();
  sh->db = db;
  shale_free(sh->dbname);
  sh->dbname = shell_strdup(name ? name : "");
  return 0;
}

/* ---- error context ---- */

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* "\n  CODE\n  ^--- error here" for the statement at sql (as sqlite3). */
static void print_context(const char *sql, const char *msg) {
  int off = shale_sql_error_offset(sql, msg);
  if (off < 0) return;
  while (off > 50) {
    off--;
    sql++;
    while ((*sql & 0xc0) == 0x80) {
      sql++;
      off--;
    }
  }
  size_t len = strlen(sql);
  if (len > 78) {
    len = 78;
    while ((sql[len] & 0xc0) == 0x80) len--;
  }
  fputs("\n  ", stderr);
  for (size_t i = 0; i < len; i++) fputc(is_space(sql[i]) ? ' ' : sql[i], stderr);
  if (off < 25)
    fprintf(stderr, "\n  %*s^--- error here", off, "");
  else
    fprintf(stderr, "\n  %*serror here ---^", off - 14, "");
}

/* ---- running SQL ---- */

/* How an error is reported: in_file 1: "X error near line N: ", 0: "X error: ",
 * -1 (an argument): "Error: in prepare, " / "Error: stepping, ". */
static void report(Shell *sh, int prepare, const char *stmt, int rc, int line, int in_file) {
  const char *msg = shale_errmsg(sh->db);
  if (in_file < 0)
    fprintf(stderr, "Error: %s, %s", prepare ? "in prepare" : "stepping", msg);
  else if (in_file)
    fprintf(stderr, "%s near line %d: %s", prepare ? "Parse error" : "Runtime error", line, msg);
  else
    fprintf(stderr, "%s: %s", prepare ? "Parse error" : "Runtime error", msg);
  if (rc > 1) fprintf(stderr, " (%d)", rc);
  if (prepare && stmt) print_context(stmt, msg);
  fputc('\n', stderr);
}

static double now_real(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void cpu_times(double *user, double *sys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
  *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Every statement of sql; returns 0, or the result code of the first error
 * (reported). */
static int exec_sql(Shell *sh, const char *sql, int line, int in_file) {
  const char *z = sql;
  while (is_space(*z)) z++;
  while (*z) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    int rc = shale_prepare_v2(sh->db, z, -1, &st, &tail);
    if (rc != SHALE_OK) {
      report(sh, 1, z, shale_errcode(sh->db), line, in_file);
      return rc;
    }
    if (!tail || tail <= z) tail = z + strlen(z);
    if (st) {
      sh->rowcnt = 0;
      rc = mode_exec(sh, st);
      int frc = shale_finalize(st);
      if (rc == SHALE_OK) rc = frc;
      if (rc != SHALE_OK) {
        report(sh, 0, NULL, shale_errcode(sh->db), line, in_file);
        return rc;
      }
    }
    z = tail;
    while (is_space(*z)) z++;
  }
  return 0;
}

int shell_run_sql(Shell *sh, const char *sql, int line, int in_file) {
  double r0 = 0, u0 = 0, s0 = 0;
  if (sh->echo) fprintf(sh->out, "%s\n", sql);
  if (sh->timer) {
    r0 = now_real();
    cpu_times(&u0, &s0);
  }
  int rc = exec_sql(sh, sql, line, in_file);
  if (sh->timer) {
    double u1, s1;
    cpu_times(&u1, &s1);
    fprintf(sh->out, "Run Time: real %.3f user %f sys %f\n", now_real() - r0, u1 - u0, s1 - s0);
  }
  if (rc) return 1;
  if (sh->changes)
    fprintf(sh->out, "changes: %lld   total_changes: %lld\n", (long long)shale_changes64(sh->db),
            (long long)shale_total_changes64(sh->db));
  return 0;
}

/* ---- the input loop ---- */

/* Only white space and comments (semi: ';' counts as white space too). */
static int all_space_semi(const char *z, int semi) {
  for (; *z; z++) {
    if (is_space(*z) || (semi && *z == ';')) continue;
    if (z[0] == '/' && z[1] == '*') {
      z += 2;
      while (*z && !(z[0] == '*' && z[1] == '/')) z++;
      if (!*z) return 0;
      z++;
      continue;
    }
    if (z[0] == '-' && z[1] == '-') {
      while (*z && *z != '\n') z++;
      if (!*z) return 1;
      continue;
    }
    return 0;
  }
  return 1;
}

static int all_space(const char *z) { return all_space_semi(z, 0); }

/* A line that ends the pending statement: ";" alone, "GO" or "/" (sqlite3
 * accepts these as terminators). */
static int is_terminator(const char *z) {
  while (is_space(*z)) z++;
  if (*z == '/' && all_space(z + 1)) return 1;
  if ((z[0] == 'g' || z[0] == 'G') && (z[1] == 'o' || z[1] == 'O') && all_space(z + 2)) return 1;
  return 0;
}

int shell_process(Shell *sh, FILE *in, int interactive) {
  StrBuf sql;
  strbuf_init(&sql, STRBUF_NOLIMIT);
  int lineno = 0, start = 0, errs = 0;
  /* the completeness scan of sql's text so far (each line is scanned once:
   * gathering a statement of N lines takes time linear in its length) */
  SqlCompleteScan scan;
  sql_complete_scan_init(&scan);
  while (!sh->quit && (errs == 0 || !sh->bail || interactive)) {
    fflush(sh->out); /* as sqlite3: output so far goes out before the next line is read */
    char *line = edit_readline(in, sql.n ? "   ...> " : "shale> ", interactive);
    if (!line) break;
    lineno++;
    const char *text = line;
    if (is_terminator(line)) {
      /* "GO" or "/" ends the statement when ';' would (with nothing pending:
       * an empty statement) */
      int ok = sql.n == 0;
      if (!ok) {
        SqlCompleteScan t = scan;
        sql_complete_scan_feed(&t, ";", 1);
        ok = sql_complete_scan_done(&t);
      }
      if (ok) text = ";";
    }
    if (sql.n == 0 && all_space_semi(text, 1)) {
      /* nothing pending: a line of white space, comments and ';' is
       * swallowed, as sqlite3 does */
      if (sh->echo) fprintf(sh->out, "%s\n", text);
      shale_free(line);
      continue;
    }
    if (sql.n == 0 && (line[0] == '.' || line[0] == '#')) {
      if (sh->echo) fprintf(sh->out, "%s\n", line);
      if (line[0] == '.') {
        int rc = dot_command(sh, line);
        if (rc == 2) {
          shale_free(line);
          break;
        }
        if (rc) errs++;
      }
      shale_free(line);
      continue;
    }
    if (sql.n == 0) {
      while (is_space(*text)) text++;
      start = lineno;
      sql_complete_scan_init(&scan);
    } else {
      strbuf_append(&sql, "\n", 1);
      sql_complete_scan_feed(&scan, "\n", 1);
    }
    size_t ntext = strlen(text);
    strbuf_append(&sql, text, (int64_t)ntext);
    if (sql.err) {
      shell_error("Error: out of memory");
      shale_free(line);
      break;
    }
    sql_complete_scan_feed(&scan, text, ntext);
    shale_free(line);
    if (sql_complete_scan_done(&scan)) {
      errs += shell_run_sql(sh, sql.z, start, in != stdin || !interactive);
      strbuf_truncate(&sql, 0);
      if (sh->once) dot_output_reset(sh);
    } else if (sql_complete_scan_blank(&scan)) {
      if (sh->echo) fprintf(sh->out, "%s\n", sql.z);
      strbuf_truncate(&sql, 0);
    }
  }
  if (sql.n && !all_space(sql.z) && !sh->quit && (errs == 0 || !sh->bail)) {
    /* a statement without its ';' at the end of input still runs */
    errs += shell_run_sql(sh, sql.z, start, in != stdin || !interactive);
    if (sh->once) dot_output_reset(sh);
  }
  fflush(sh->out);
  strbuf_reset(&sql);
  sh->nerr += errs;
  return errs > 0;
}

/* ---- main ---- */

static void on_sigint(int sig) {
  (void)sig;
  if (g_shell && g_shell->db) shale_interrupt(g_shell->db);
}

static void usage_error(const char *argv0, const char *opt) {
  fprintf(stderr, "%s: Error: unknown option: %s\nUse -help for a list of options.\n", argv0, opt);
}

static void print_help(const char *argv0) {
  fprintf(stderr,
          "Usage: %s [OPTIONS] FILENAME [SQL]\n"
          "FILENAME is the name of an SQLite database. A new database is created\n"
          "if the file does not previously exist.\n"
          "OPTIONS include:\n"
          "   -ascii               set output mode to 'ascii'\n"
          "   -bail                stop after hitting an error\n"
          "   -batch               force batch I/O\n"
          "   -box                 set output mode to 'box'\n"
          "   -column              set output mode to 'column'\n"
          "   -cmd COMMAND         run \"COMMAND\" before reading stdin\n"
          "   -csv                 set output mode to 'csv'\n"
          "   -echo                print inputs before execution\n"
          "   -init FILENAME       read/process named file\n"
          "   -[no]header          turn headers on or off\n"
          "   -help                show this message\n"
          "   -html                set output mode to HTML\n"
          "   -interactive         force interactive I/O\n"
          "   -json                set output mode to 'json'\n"
          "   -line                set output mode to 'line'\n"
          "   -list                set output mode to 'list'\n"
          "   -markdown            set output mode to 'markdown'\n"
          "   -newline SEP         set output row separator. Default: '\\n'\n"
          "   -nullvalue TEXT      set text string for NULL values. Default ''\n"
          "   -quote               set output mode to 'quote'\n"
          "   -readonly            open the database read-only\n"
          "   -separator SEP       set output column separator. Default: '|'\n"
          "   -table               set output mode to 'table'\n"
          "   -tabs                set output mode to 'tabs'\n"
          "   -version             show SQLite version\n",
          argv0);
}

/* Options that take a value (skipped in the first pass). */
static int takes_value(const char *z) {
  static const char *const v[] = {"separator", "nullvalue", "newline",   "cmd",  "init",    "vfs",
                                  "heap",      "pagecache", "lookaside", "mmap", "maxsize", NULL};
  for (int i = 0; v[i]; i++)
    if (strcmp(z, v[i]) == 0) return 1;
  return 0;
}

static void copy_sep(char *dst, const char *src) { snprintf(dst, SEP_MAX, "%s", src); }

/* Run the init file (-init, else ~/.shalerc when it exists). */
static void run_init(Shell *sh, const char *file) {
  char path[4096];
  if (!file) {
    const char *home = getenv("HOME");
    if (!home) return;
    snprintf(path, sizeof path, "%s/.shalerc", home);
    if (access(path, R_OK) != 0) return;
    file = path;
  }
  FILE *f = fopen(file, "r");
  if (!f) {
    shell_error("cannot open: \"%s\"", file);
    return;
  }
  if (isatty(0) && sh->interactive) fprintf(stderr, "-- Loading resources from %s\n", file);
  shell_process(sh, f, 0);
  fclose(f);
}

static void shell_free(Shell *sh) {
  dot_output_reset(sh);
  store_close();
  if (sh->db) shale_close_v2(sh->db);
  shale_free(sh->dbname);
  shale_free(sh->table);
  shale_free(sh->widths);
  shale_free(sh->outname);
}

int main(int argc, char **argv) {
  Shell shell, *sh = &shell;
  memset(sh, 0, sizeof *sh);
  g_shell = sh;
  sh->out = stdout;
  sh->outname = shell_strdup("stdout");
  copy_sep(sh->colsep, "|");
  copy_sep(sh->rowsep, "\n");
  sh->interactive = isatty(0);
  setvbuf(stderr, NULL, _IONBF, 0);

  /* pass 1: the database name, the SQL arguments, -batch/-interactive */
  const char *dbname = NULL, *init = NULL;
  char **cmds = shale_malloc(sizeof(char *) * (size_t)(argc + 1));
  int ncmd = 0;
  if (!cmds) return 1;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] != '-' || z[1] == 0) {
      if (!dbname)
        dbname = z;
      else
        cmds[ncmd++] = argv[i];
      continue;
    }
    if (z[1] == '-') z++;
    z++;
    if (takes_value(z)) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: Error: missing argument to %s\n", argv[0], argv[i]);
        shale_free(cmds);
        shell_free(sh);
        return 1;
      }
      if (strcmp(z, "init") == 0) init = argv[i + 1];
      i++;
    } else if (strcmp(z, "batch") == 0) {
      sh->interactive = 0;
    } else if (strcmp(z, "interactive") == 0) {
      sh->interactive = 1;
    } else if (strcmp(z, "readonly") == 0) {
      sh->readonly = 1;
    }
  }
  if (ncmd) sh->interactive = 0;
  if (shell_open(sh, dbname, sh->readonly, 0)) {
    shale_free(cmds);
    shell_free(sh);
    return 1;
  }
  run_init(sh, init);

  /* pass 2: every option in order */
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] != '-' || z[1] == 0) continue;
    if (z[1] == '-') z++;
    z++;
    if (strcmp(z, "init") == 0 || strcmp(z, "vfs") == 0 || strcmp(z, "heap") == 0 ||
        strcmp(z, "pagecache") == 0 || strcmp(z, "lookaside") == 0 || strcmp(z, "mmap") == 0 ||
        strcmp(z, "maxsize") == 0) {
      i++;
    } else if (strcmp(z, "html") == 0 || strcmp(z, "list") == 0 || strcmp(z, "quote") == 0 ||
               strcmp(z, "line") == 0 || strcmp(z, "column") == 0 || strcmp(z, "json") == 0 ||
               strcmp(z, "markdown") == 0 || strcmp(z, "table") == 0 || strcmp(z, "box") == 0 ||
               strcmp(z, "csv") == 0 || strcmp(z, "ascii") == 0 || strcmp(z, "tabs") == 0) {
      mode_option(sh, z);
    } else if (strcmp(z, "separator") == 0) {
      copy_sep(sh->colsep, argv[++i]);
    } else if (strcmp(z, "newline") == 0) {
      copy_sep(sh->rowsep, argv[++i]);
    } else if (strcmp(z, "nullvalue") == 0) {
      copy_sep(sh->nullvalue, argv[++i]);
    } else if (strcmp(z, "header") == 0) {
      sh->headers = 1;
      sh->headers_set = 1;
    } else if (strcmp(z, "noheader") == 0) {
      sh->headers = 0;
      sh->headers_set = 1;
    } else if (strcmp(z, "echo") == 0) {
      sh->echo = 1;
    } else if (strcmp(z, "bail") == 0) {
      sh->bail = 1;
    } else if (strcmp(z, "batch") == 0 || strcmp(z, "interactive") == 0 ||
               strcmp(z, "readonly") == 0) {
      /* pass 1 */
    } else if (strcmp(z, "version") == 0) {
      printf("%s (Shale)\n", shale_libversion());
      shale_free(cmds);
      shell_free(sh);
      return 0;
    } else if (strcmp(z, "help") == 0) {
      print_help(argv[0]);
      shale_free(cmds);
      shell_free(sh);
      return 0;
    } else if (strcmp(z, "cmd") == 0) {
      char *c = argv[++i];
      int rc;
      if (c[0] == '.') {
        char *copy = shell_strdup(c);
        rc = copy ? dot_command(sh, copy) : 1;
        shale_free(copy);
        if (rc && sh->bail) {
          shale_free(cmds);
          shell_free(sh);
          return rc == 2 ? 0 : rc;
        }
      } else {
        rc = exec_sql(sh, c, 0, -1);
        if (rc && sh->bail) {
          shale_free(cmds);
          shell_free(sh);
          return rc;
        }
      }
    } else {
      usage_error(argv[0], argv[i]);
      shale_free(cmds);
      shell_free(sh);
      return 1;
    }
  }

  int rc = 0;
  if (ncmd) {
    for (int i = 0; i < ncmd; i++) {
      if (cmds[i][0] == '.') {
        char *copy = shell_strdup(cmds[i]);
        rc = copy ? dot_command(sh, copy) : 1;
        shale_free(copy);
        if (rc) {
          rc = rc == 2 ? 0 : rc;
          break;
        }
      } else {
        if (sh->echo) fprintf(sh->out, "%s\n", cmds[i]);
        rc = exec_sql(sh, cmds[i], 0, -1);
        if (rc) break;
      }
      if (sh->once) dot_output_reset(sh);
    }
    if (sh->quit && sh->exitcode) rc = sh->exitcode;
  } else if (sh->interactive) {
    printf(
        "Shale version %s\n"
        "Enter \".help\" for usage hints.\n",
        shale_libversion());
    if (!dbname)
      printf(
          "Connected to a transient in-memory database.\n"
          "Use \".open FILENAME\" to reopen on a persistent database.\n");
    signal(SIGINT, on_sigint);
    edit_init(1);
    rc = shell_process(sh, stdin, 1);
    edit_done();
    if (sh->quit) rc = sh->exitcode;
  } else {
    rc = shell_process(sh, stdin, 0);
    if (sh->quit && sh->exitcode) rc = sh->exitcode;
  }
  fflush(sh->out);
  shale_free(cmds);
  shell_free(sh);
  return rc;
}
