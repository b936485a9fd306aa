/*
 * shell_dot.c -- the dot-commands of the shell: argument splitting, the
 * command table (unique prefixes accepted, as sqlite3 does) and the simple
 * commands; .import, .dump/.schema/.tables/.indexes and .dbinfo live in
 * their own files.
 *
 * Invariants:
 *  1. Arguments split at white space; "double quoted" ones resolve
 *     backslash escapes (\t \n \r \\ \" \' \a \b \v \f \NNN octal), 'single
 *     quoted' ones are literal, bare ones resolve escapes too.
 *  2. dot_command returns 0 (ok), 1 (error: counted, -bail stops) or 2
 *     (.quit/.exit: stop reading this input).
 *  3. .once redirects the output of exactly the next command (SQL or dot);
 *     after it, output goes back to stdout (dot_output_reset).
 */
#include <stdlib.h>
#include <string.h>

#include "shell.h"

#define MAX_ARGS 50

static void resolve_backslashes(char *z) {
  int i, j;
  char c;
  for (i = j = 0; (c = z[i]) != 0; i++, j++) {
    if (c == '\\' && z[i + 1] != 0) {
      c = z[++i];
      if (c == 'a')
        c = '\a';
      else if (c == 'b')
        c = '\b';
      else if (c == 't')
        c = '\t';
      else if (c == 'n')
        c = '\n';
      else if (c == 'v')
        c = '\v';
      else if (c == 'f')
        c = '\f';
      else if (c == 'r')
        c = '\r';
      else if (c >= '0' && c <= '7') {
        c -= '0';
        if (z[i + 1] >= '0' && z[i + 1] <= '7') {
          i++;
          c = (char)((c << 3) + z[i] - '0');
          if (z[i + 1] >= '0' && z[i + 1] <= '7') {
            i++;
            c = (char)((c << 3) + z[i] - '0');
          }
        }
      }
    }
    z[j] = c;
  }
  z[j] = 0;
}

static int split_args(char *line, char **argv) {
  int n = 0, h = 1; /* past the '.' */
  while (line[h] && n < MAX_ARGS - 1) {
    while (line[h] == ' ' || line[h] == '\t' || line[h] == '\n' || line[h] == '\r') h++;
    if (!line[h]) break;
    if (line[h] == '\'' || line[h] == '"') {
      char delim = line[h++];
      argv[n++] = &line[h];
      while (line[h] && line[h] != delim) {
        if (line[h] == '\\' && delim == '"' && line[h + 1]) h++;
        h++;
      }
      if (line[h] == delim) line[h++] = 0;
      if (delim == '"') resolve_backslashes(argv[n - 1]);
    } else {
      argv[n++] = &line[h];
      while (line[h] && line[h] != ' ' && line[h] != '\t' && line[h] != '\n' && line[h] != '\r')
        h++;
      if (line[h]) line[h++] = 0;
      resolve_backslashes(argv[n - 1]);
    }
  }
  argv[n] = NULL;
  return n;
}

static int bool_arg(const char *z) {
  if (z[0] >= '0' && z[0] <= '9') return atoi(z) != 0;
  if (!util_stricmp(z, "on") || !util_stricmp(z, "yes")) return 1;
  if (!util_stricmp(z, "off") || !util_stricmp(z, "no")) return 0;
  fprintf(stderr, "ERROR: Not a boolean value: \"%s\". Assuming \"no\".\n", z);
  return 0;
}

static int onoff(int argc, char **argv, int *flag, const char *usage) {
  if (argc != 2) {
    fprintf(stderr, "Usage: %s\n", usage);
    return 1;
  }
  *flag = bool_arg(argv[1]);
  return 0;
}

void dot_output_reset(Shell *sh) {
  if (sh->out && sh->out != stdout) {
    if (sh->outpipe)
      pclose(sh->out);
    else
      fclose(sh->out);
  }
  sh->out = stdout;
  sh->outpipe = 0;
  sh->once = 0;
  shale_free(sh->outname);
  sh->outname = shell_strdup("stdout");
}

static const char output_usage[] =
    ".output ?FILE?           Send output to FILE or stdout if FILE is omitted\n"
    "   If FILE begins with '|' then open it as a pipe.\n"
    "   Options:\n"
    "     --bom                 Prefix output with a UTF8 byte-order mark\n"
    "     -e                    Send output to the system text editor\n"
    "     -x                    Send output as CSV to a spreadsheet\n";
static const char once_usage[] =
    ".once ?OPTIONS? ?FILE?   Output for the next SQL command only to FILE\n"
    "     If FILE begins with '|' then open as a pipe\n"
    "       --bom  Put a UTF8 byte-order mark at the beginning\n"
    "       -e     Send output to the system text editor\n"
    "       -x     Send output as CSV to a spreadsheet (same as \".excel\")\n";

static int cmd_output(Shell *sh, int argc, char **argv, int once) {
  const char *file = NULL;
  int bom = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] == '-') {
      if (z[1] == '-') z++;
      if (!strcmp(z, "-bom")) {
        bom = 1;
      } else {
        fprintf(sh->out, "ERROR: unknown option: \"%s\".  Usage:\n%s", argv[i],
                once ? once_usage : output_usage);
        return 1;
      }
    } else if (!file) {
      file = z;
    } else {
      fprintf(sh->out, "ERROR: extra parameter: \"%s\".  Usage:\n%s", z,
              once ? once_usage : output_usage);
      return 1;
    }
  }
  dot_output_reset(sh);
  if (!file) {
    if (once) sh->once = 1;
    return 0;
  }
  FILE *f;
  if (file[0] == '|') {
    fflush(stdout);
    f = popen(file + 1, "w");
    if (!f) {
      fprintf(stderr, "Error: cannot open pipe \"%s\"\n", file + 1);
      return 1;
    }
    sh->outpipe = 1;
  } else {
    f = fopen(file, "wb");
    if (!f) {
      fprintf(stderr, "Error: cannot open \"%s\"\n", file);
      fprintf(stderr, "Error: cannot write to \"%s\"\n", file);
      return 1;
    }
  }
  if (bom) fputs("\xef\xbb\xbf", f);
  sh->out = f;
  shale_free(sh->outname);
  sh->outname = shell_strdup(file);
  sh->once = once ? 2 : 0;
  return 0;
}

static int cmd_read(Shell *sh, int argc, char **argv) {
  if (argc != 2) {
    fputs("Usage: .read FILE\n", stderr);
    return 1;
  }
  FILE *f;
  int pipe = argv[1][0] == '|';
  if (pipe)
    f = popen(argv[1] + 1, "r");
  else
    f = fopen(argv[1], "rb");
  if (!f) {
    fprintf(stderr, "Error: cannot open \"%s\"\n", argv[1]);
    return 1;
  }
  int rc = shell_process(sh, f, 0);
  if (pipe)
    pclose(f);
  else
    fclose(f);
  return rc;
}

static int cmd_open(Shell *sh, int argc, char **argv) {
  const char *file = NULL;
  int fresh = 0, ro = 0;
  for (int i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] == '-') {
      if (z[1] == '-') z++;
      if (!strcmp(z, "-new"))
        fresh = 1;
      else if (!strcmp(z, "-readonly"))
        ro = 1;
      else {
        fprintf(stderr, "unknown option: %s\n", argv[i]);
        return 1;
      }
    } else if (file) {
      fprintf(stderr, "extra argument: \"%s\"\n", z);
      return 1;
    } else {
      file = z;
    }
  }
  if (shell_open(sh, file, ro, fresh)) {
    /* as sqlite3: carry on with an in-memory database under that name */
    shell_open(sh, NULL, 0, 0);
    shale_free(sh->dbname);
    sh->dbname = shell_strdup(file);
    return 1;
  }
  return 0;
}

static void show_c_string(FILE *out, const char *z) {
  fputc('"', out);
  for (; *z; z++) {
    unsigned char c = (unsigned char)*z;
    if (c == '\\' || c == '"')
      fprintf(out, "\\%c", c);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\r')
      fputs("\\r", out);
    else if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\%03o", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static int cmd_show(Shell *sh, int argc) {
  FILE *out = sh->out;
  if (argc != 1) {
    fputs("Usage: .show\n", stderr);
    return 1;
  }
  fprintf(out, "%12.12s: %s\n", "echo", sh->echo ? "on" : "off");
  fprintf(out, "%12.12s: %s\n", "eqp", "off");
  fprintf(out, "%12.12s: %s\n", "explain", "auto");
  fprintf(out, "%12.12s: %s\n", "headers", sh->headers ? "on" : "off");
  char mode[100];
  mode_describe(sh, mode, sizeof mode);
  fprintf(out, "%12.12s: %s\n", "mode", mode);
  fprintf(out, "%12.12s: ", "nullvalue");
  show_c_string(out, sh->nullvalue);
  fputc('\n', out);
  fprintf(out, "%12.12s: %s\n", "output", sh->outname ? sh->outname : "stdout");
  fprintf(out, "%12.12s: ", "colseparator");
  show_c_string(out, sh->colsep);
  fputc('\n', out);
  fprintf(out, "%12.12s: ", "rowseparator");
  show_c_string(out, sh->rowsep);
  fputc('\n', out);
  fprintf(out, "%12.12s: %s\n", "stats", "off");
  fprintf(out, "%12.12s: ", "width");
  for (int i = 0; i < sh->nwidths; i++) fprintf(out, "%d ", sh->widths[i]);
  fputc('\n', out);
  fprintf(out, "%12.12s: %s\n", "filename",
          sh->dbname && *sh->dbname ? sh->dbname : (sh->dbname ? ":memory:" : ""));
  return 0;
}

static const char help_text[] =
    ".bail on|off             Stop after hitting an error.  Default OFF\n"
    ".changes on|off          Show number of rows changed by SQL\n"
    ".check                   Run the B-tree integrity check over every tree (Shale)\n"
    ".count TABLE             Number of rows in TABLE (Shale)\n"
    ".dbinfo ?DB?             Show status information about the database\n"
    ".dump ?OBJECTS?          Render database content as SQL\n"
    ".echo on|off             Turn command echo on or off\n"
    ".exit ?CODE?             Exit this program with return-code CODE\n"
    ".headers on|off          Turn display of headers on or off\n"
    ".help ?-all? ?PATTERN?   Show help text for PATTERN\n"
    ".import FILE TABLE       Import data from FILE into TABLE\n"
    ".indexes ?TABLE?         Show names of indexes\n"
    ".mode MODE ?OPTIONS?     Set output mode\n"
    ".nullvalue STRING        Use STRING in place of NULL values\n"
    ".once ?OPTIONS? ?FILE?   Output for the next SQL command only to FILE\n"
    ".open ?OPTIONS? ?FILE?   Close existing database and reopen FILE\n"
    ".output ?FILE?           Send output to FILE or stdout if FILE is omitted\n"
    ".print STRING...         Print literal STRING\n"
    ".quit                    Exit this program\n"
    ".read FILE               Read input from FILE or command output\n"
    ".rows TABLE              Print every row of TABLE from its b-tree (Shale)\n"
    ".schema ?PATTERN?        Show the CREATE statements matching PATTERN\n"
    ".separator COL ?ROW?     Change the column and row separators\n"
    ".show                    Show the current values for various settings\n"
    ".tables ?TABLE?          List names of tables matching LIKE pattern TABLE\n"
    ".timer on|off            Turn SQL timer on or off\n"
    ".width NUM1 NUM2 ...     Set minimum column widths for columnar output\n";

static int cmd_help(Shell *sh, int argc, char **argv) {
  if (argc < 2) {
    fputs(help_text, sh->out);
    return 0;
  }
  /* lines whose command starts with PATTERN */
  const char *pat = argv[1][0] == '.' ? argv[1] + 1 : argv[1];
  int found = 0;
  for (const char *p = help_text; *p;) {
    const char *e = strchr(p, '\n');
    if (strncmp(p + 1, pat, strlen(pat)) == 0) {
      fwrite(p, 1, (size_t)(e - p + 1), sh->out);
      found = 1;
    }
    p = e + 1;
  }
  if (!found) fprintf(sh->out, "Nothing matches '%s'\n", argv[1]);
  return 0;
}

typedef struct DotCmd {
  const char *name;
  int min; /* shortest prefix accepted */
  int id;
} DotCmd;

enum {
  D_BAIL,
  D_CHANGES,
  D_CHECK,
  D_COUNT,
  D_DBINFO,
  D_DUMP,
  D_ECHO,
  D_EXIT,
  D_HEADERS,
  D_HELP,
  D_IMPORT,
  D_INDEXES,
  D_INDICES,
  D_MODE,
  D_NULLVALUE,
  D_ONCE,
  D_OPEN,
  D_OUTPUT,
  D_PRINT,
  D_QUIT,
  D_READ,
  D_ROWS,
  D_SCHEMA,
  D_SEPARATOR,
  D_SHOW,
  D_TABLES,
  D_TIMER,
  D_WIDTH
};

static const DotCmd cmds[] = {
    {"bail", 2, D_BAIL},       {"changes", 3, D_CHANGES}, {"check", 3, D_CHECK},
    {"count", 3, D_COUNT},     {"dbinfo", 2, D_DBINFO},   {"dump", 2, D_DUMP},
    {"echo", 2, D_ECHO},       {"exit", 2, D_EXIT},       {"headers", 1, D_HEADERS},
    {"help", 2, D_HELP},       {"import", 2, D_IMPORT},   {"indexes", 3, D_INDEXES},
    {"indices", 3, D_INDICES}, {"mode", 1, D_MODE},       {"nullvalue", 1, D_NULLVALUE},
    {"once", 2, D_ONCE},       {"open", 2, D_OPEN},       {"output", 2, D_OUTPUT},
    {"print", 2, D_PRINT},     {"quit", 1, D_QUIT},       {"read", 3, D_READ},
    {"rows", 2, D_ROWS},       {"schema", 2, D_SCHEMA},   {"separator", 3, D_SEPARATOR},
    {"show", 2, D_SHOW},       {"tables", 2, D_TABLES},   {"timer", 2, D_TIMER},
    {"width", 1, D_WIDTH},
};

static int run_cmd(Shell *sh, int argc, char **argv) {
  const char *c = argv[0];
  size_t n = strlen(c);
  int id = -1;
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (n >= (size_t)cmds[i].min && strncmp(cmds[i].name, c, n) == 0) {
      id = cmds[i].id;
      break;
    }
  switch (id) {
    case D_BAIL:
      return onoff(argc, argv, &sh->bail, ".bail on|off");
    case D_CHANGES:
      return onoff(argc, argv, &sh->changes, ".changes on|off");
    case D_ECHO:
      return onoff(argc, argv, &sh->echo, ".echo on|off");
    case D_TIMER:
      return onoff(argc, argv, &sh->timer, ".timer on|off");
    case D_HEADERS: {
      int rc = onoff(argc, argv, &sh->headers, ".headers on|off");
      if (!rc) sh->headers_set = 1;
      return rc;
    }
    case D_CHECK:
      return store_check(sh);
    case D_COUNT:
      if (argc != 2) {
        fputs("Error: usage: .count TABLE\n", stderr);
        return 1;
      }
      return store_count(sh, argv[1]);
    case D_ROWS:
      if (argc != 2) {
        fputs("Error: usage: .rows TABLE\n", stderr);
        return 1;
      }
      return store_rows(sh, argv[1]);
    case D_DBINFO:
      return store_dbinfo(sh);
    case D_DUMP:
      return dump_command(sh, argc, argv);
    case D_SCHEMA:
      return schema_command(sh, argc, argv);
    case D_TABLES:
      return tables_command(sh, argc, argv, 0);
    case D_INDEXES:
    case D_INDICES:
      return tables_command(sh, argc, argv, 1);
    case D_IMPORT:
      return import_command(sh, argc, argv);
    case D_EXIT:
      if (argc > 1 && atoi(argv[1]) != 0) {
        sh->quit = 1;
        sh->exitcode = atoi(argv[1]);
      }
      return 2;
    case D_QUIT:
      return 2;
    case D_HELP:
      return cmd_help(sh, argc, argv);
    case D_MODE:
      return mode_parse(sh, argc, argv);
    case D_NULLVALUE:
      if (argc != 2) {
        fputs("Usage: .nullvalue STRING\n", stderr);
        return 1;
      }
      snprintf(sh->nullvalue, SEP_MAX, "%s", argv[1]);
      return 0;
    case D_SEPARATOR:
      if (argc < 2 || argc > 3) {
        fputs("Usage: .separator COL ?ROW?\n", stderr);
        return 1;
      }
      snprintf(sh->colsep, SEP_MAX, "%s", argv[1]);
      if (argc == 3) snprintf(sh->rowsep, SEP_MAX, "%s", argv[2]);
      return 0;
    case D_ONCE:
      return cmd_output(sh, argc, argv, 1);
    case D_OUTPUT:
      return cmd_output(sh, argc, argv, 0);
    case D_OPEN:
      return cmd_open(sh, argc, argv);
    case D_READ:
      return cmd_read(sh, argc, argv);
    case D_SHOW:
      return cmd_show(sh, argc);
    case D_PRINT:
      for (int i = 1; i < argc; i++) fprintf(sh->out, "%s%s", i > 1 ? " " : "", argv[i]);
      fputc('\n', sh->out);
      return 0;
    case D_WIDTH: {
      int *w = shale_malloc(sizeof(int) * (size_t)(argc > 1 ? argc - 1 : 1));
      if (!w) return 1;
      for (int i = 1; i < argc; i++) w[i - 1] = atoi(argv[i]);
      shale_free(sh->widths);
      sh->widths = w;
      sh->nwidths = argc - 1;
      return 0;
    }
    default:
      fprintf(stderr,
              "Error: unknown command or invalid arguments:  \"%s\". Enter \".help\" for help\n",
              c);
      return 1;
  }
}

int dot_command(Shell *sh, char *line) {
  char *argv[MAX_ARGS + 1];
  int argc = split_args(line, argv);
  if (argc == 0) return 0;
  int rc = run_cmd(sh, argc, argv);
  if (sh->once) {
    sh->once--;
    if (sh->once == 0) dot_output_reset(sh);
  }
  return rc;
}
