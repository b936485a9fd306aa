/*
 * test_sqlite3_h.c -- include/sqlite3.h against the reference SQLite header.
 *
 * Our sqlite3.h and the system <sqlite3.h> cannot share a translation unit,
 * so this test writes small C programs into its scratch directory, compiles
 * them with the system `cc`, runs them and compares what they print:
 *  - every integer `#define SQLITE_*` and `FTS5_*` in our header, evaluated once with our
 *    header and once with the system header: same name, same value;
 *  - sizeof/offsetof of the structs callers fill in (sqlite3_vfs,
 *    sqlite3_io_methods, sqlite3_file, sqlite3_mem_methods, sqlite3_mutex_methods,
 *    sqlite3_module, sqlite3_index_info and its parts, sqlite3_vtab,
 *    sqlite3_vtab_cursor, sqlite3_snapshot, and FTS5's fts5_api, fts5_tokenizer,
 *    Fts5ExtensionApi, Fts5PhraseIter) under both headers;
 *  - every prototype of ours, pasted after the system header: the compiler
 *    rejects a conflicting redeclaration, so each type must match;
 *  - our header alone compiles under -Wall -Wextra -pedantic -Werror and the
 *    address of each declared function can be taken;
 *  - every function named in issue 4's list is declared;
 *  - every macro the reference defines is defined by us too, apart from the
 *    test-control opcodes and the session extension (kNotOurs).
 *
 * Invariants:
 *  1. A missing `cc` or system header is a failure with a clear message,
 *     never a silent pass.
 *  2. The macro and prototype lists are parsed from our header's text, so a
 *     constant added later is checked without touching this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../test.h"

#define MAXN 2048
#define CCFLAGS "-Werror -Wall -Wextra -std=c11 -pedantic"

static char g_root[4096]; /* repository root */
static char g_hdr[4200];  /* absolute path of include/sqlite3.h */

/* Macros we define that the reference lacks, or that are not integers. */
static const char *const kSkipMacros[] = {"SQLITE_API",          "SQLITE_EXTERN",
                                          "SQLITE_CDECL",        "SQLITE_APICALL",
                                          "SQLITE_STDCALL",      "SQLITE_CALLBACK",
                                          "SQLITE_SYSAPI",       "SQLITE_DEPRECATED",
                                          "SQLITE_EXPERIMENTAL", "SQLITE_STATIC",
                                          "SQLITE_TRANSIENT",    "SQLITE_VERSION",
                                          "SQLITE_SOURCE_ID",    NULL};

/* Every function issue 4 requires (without the sqlite3_ prefix). */
static const char *const kIssueFns[] = {"aggregate_context",
                                        "backup_finish",
                                        "backup_init",
                                        "backup_pagecount",
                                        "backup_remaining",
                                        "backup_step",
                                        "bind_blob",
                                        "bind_blob64",
                                        "bind_double",
                                        "bind_int",
                                        "bind_int64",
                                        "bind_null",
                                        "bind_parameter_count",
                                        "bind_parameter_index",
                                        "bind_parameter_name",
                                        "bind_text",
                                        "bind_text64",
                                        "bind_value",
                                        "bind_zeroblob",
                                        "blob_bytes",
                                        "blob_close",
                                        "blob_open",
                                        "blob_read",
                                        "blob_reopen",
                                        "blob_write",
                                        "busy_handler",
                                        "busy_timeout",
                                        "changes",
                                        "changes64",
                                        "clear_bindings",
                                        "close",
                                        "close_v2",
                                        "column_blob",
                                        "column_bytes",
                                        "column_count",
                                        "column_database_name",
                                        "column_decltype",
                                        "column_double",
                                        "column_int",
                                        "column_int64",
                                        "column_name",
                                        "column_origin_name",
                                        "column_table_name",
                                        "column_text",
                                        "column_type",
                                        "column_value",
                                        "commit_hook",
                                        "complete",
                                        "config",
                                        "context_db_handle",
                                        "create_collation",
                                        "create_collation_v2",
                                        "create_function",
                                        "create_function_v2",
                                        "create_window_function",
                                        "data_count",
                                        "db_config",
                                        "db_filename",
                                        "db_handle",
                                        "db_readonly",
                                        "db_status",
                                        "deserialize",
                                        "enable_load_extension",
                                        "enable_shared_cache",
                                        "errcode",
                                        "errmsg",
                                        "errstr",
                                        "exec",
                                        "expanded_sql",
                                        "extended_errcode",
                                        "extended_result_codes",
                                        "file_control",
                                        "finalize",
                                        "free",
                                        "get_autocommit",
                                        "get_auxdata",
                                        "initialize",
                                        "interrupt",
                                        "last_insert_rowid",
                                        "libversion",
                                        "libversion_number",
                                        "limit",
                                        "load_extension",
                                        "malloc",
                                        "malloc64",
                                        "memory_used",
                                        "mprintf",
                                        "next_stmt",
                                        "open",
                                        "open_v2",
                                        "prepare",
                                        "prepare_v2",
                                        "prepare_v3",
                                        "progress_handler",
                                        "randomness",
                                        "realloc",
                                        "realloc64",
                                        "reset",
                                        "result_blob",
                                        "result_blob64",
                                        "result_double",
                                        "result_error",
                                        "result_error_code",
                                        "result_error_nomem",
                                        "result_error_toobig",
                                        "result_int",
                                        "result_int64",
                                        "result_null",
                                        "result_text",
                                        "result_text64",
                                        "result_value",
                                        "result_zeroblob",
                                        "rollback_hook",
                                        "serialize",
                                        "set_authorizer",
                                        "set_auxdata",
                                        "shutdown",
                                        "sleep",
                                        "snprintf",
                                        "soft_heap_limit64",
                                        "sourceid",
                                        "sql",
                                        "status",
                                        "status64",
                                        "step",
                                        "stmt_busy",
                                        "stmt_readonly",
                                        "stmt_status",
                                        "stricmp",
                                        "strnicmp",
                                        "table_column_metadata",
                                        "threadsafe",
                                        "total_changes",
                                        "total_changes64",
                                        "trace_v2",
                                        "update_hook",
                                        "user_data",
                                        "value_blob",
                                        "value_bytes",
                                        "value_double",
                                        "value_dup",
                                        "value_free",
                                        "value_int",
                                        "value_int64",
                                        "value_nochange",
                                        "value_numeric_type",
                                        "value_subtype",
                                        "value_text",
                                        "value_type",
                                        "vfs_find",
                                        "vmprintf",
                                        "wal_autocheckpoint",
                                        "wal_checkpoint",
                                        "wal_checkpoint_v2",
                                        NULL};

/* Struct fields whose offsets must match (struct, field). */
static const char *const kFields[][2] = {
    {"sqlite3_file", "pMethods"},
    {"sqlite3_io_methods", "iVersion"},
    {"sqlite3_io_methods", "xClose"},
    {"sqlite3_io_methods", "xRead"},
    {"sqlite3_io_methods", "xWrite"},
    {"sqlite3_io_methods", "xTruncate"},
    {"sqlite3_io_methods", "xSync"},
    {"sqlite3_io_methods", "xFileSize"},
    {"sqlite3_io_methods", "xLock"},
    {"sqlite3_io_methods", "xUnlock"},
    {"sqlite3_io_methods", "xCheckReservedLock"},
    {"sqlite3_io_methods", "xFileControl"},
    {"sqlite3_io_methods", "xSectorSize"},
    {"sqlite3_io_methods", "xDeviceCharacteristics"},
    {"sqlite3_io_methods", "xShmMap"},
    {"sqlite3_io_methods", "xShmLock"},
    {"sqlite3_io_methods", "xShmBarrier"},
    {"sqlite3_io_methods", "xShmUnmap"},
    {"sqlite3_io_methods", "xFetch"},
    {"sqlite3_io_methods", "xUnfetch"},
    {"sqlite3_vfs", "iVersion"},
    {"sqlite3_vfs", "szOsFile"},
    {"sqlite3_vfs", "mxPathname"},
    {"sqlite3_vfs", "pNext"},
    {"sqlite3_vfs", "zName"},
    {"sqlite3_vfs", "pAppData"},
    {"sqlite3_vfs", "xOpen"},
    {"sqlite3_vfs", "xDelete"},
    {"sqlite3_vfs", "xAccess"},
    {"sqlite3_vfs", "xFullPathname"},
    {"sqlite3_vfs", "xDlOpen"},
    {"sqlite3_vfs", "xDlError"},
    {"sqlite3_vfs", "xDlSym"},
    {"sqlite3_vfs", "xDlClose"},
    {"sqlite3_vfs", "xRandomness"},
    {"sqlite3_vfs", "xSleep"},
    {"sqlite3_vfs", "xCurrentTime"},
    {"sqlite3_vfs", "xGetLastError"},
    {"sqlite3_vfs", "xCurrentTimeInt64"},
    {"sqlite3_vfs", "xSetSystemCall"},
    {"sqlite3_vfs", "xGetSystemCall"},
    {"sqlite3_vfs", "xNextSystemCall"},
    {"sqlite3_mem_methods", "xMalloc"},
    {"sqlite3_mem_methods", "xFree"},
    {"sqlite3_mem_methods", "xRealloc"},
    {"sqlite3_mem_methods", "xSize"},
    {"sqlite3_mem_methods", "xRoundup"},
    {"sqlite3_mem_methods", "xInit"},
    {"sqlite3_mem_methods", "xShutdown"},
    {"sqlite3_mem_methods", "pAppData"},
    {"sqlite3_mutex_methods", "xMutexInit"},
    {"sqlite3_mutex_methods", "xMutexNotheld"},
    {"sqlite3_module", "iVersion"},
    {"sqlite3_module", "xCreate"},
    {"sqlite3_module", "xConnect"},
    {"sqlite3_module", "xBestIndex"},
    {"sqlite3_module", "xDisconnect"},
    {"sqlite3_module", "xDestroy"},
    {"sqlite3_module", "xOpen"},
    {"sqlite3_module", "xClose"},
    {"sqlite3_module", "xFilter"},
    {"sqlite3_module", "xNext"},
    {"sqlite3_module", "xEof"},
    {"sqlite3_module", "xColumn"},
    {"sqlite3_module", "xRowid"},
    {"sqlite3_module", "xUpdate"},
    {"sqlite3_module", "xBegin"},
    {"sqlite3_module", "xSync"},
    {"sqlite3_module", "xCommit"},
    {"sqlite3_module", "xRollback"},
    {"sqlite3_module", "xFindFunction"},
    {"sqlite3_module", "xRename"},
    {"sqlite3_module", "xSavepoint"},
    {"sqlite3_module", "xRelease"},
    {"sqlite3_module", "xRollbackTo"},
    {"sqlite3_module", "xShadowName"},
    {"sqlite3_index_info", "nConstraint"},
    {"sqlite3_index_info", "aConstraint"},
    {"sqlite3_index_info", "nOrderBy"},
    {"sqlite3_index_info", "aOrderBy"},
    {"sqlite3_index_info", "aConstraintUsage"},
    {"sqlite3_index_info", "idxNum"},
    {"sqlite3_index_info", "idxStr"},
    {"sqlite3_index_info", "needToFreeIdxStr"},
    {"sqlite3_index_info", "orderByConsumed"},
    {"sqlite3_index_info", "estimatedCost"},
    {"sqlite3_index_info", "estimatedRows"},
    {"sqlite3_index_info", "idxFlags"},
    {"sqlite3_index_info", "colUsed"},
    {"Fts5ExtensionApi", "iVersion"},
    {"Fts5ExtensionApi", "xUserData"},
    {"Fts5ExtensionApi", "xColumnCount"},
    {"Fts5ExtensionApi", "xRowCount"},
    {"Fts5ExtensionApi", "xColumnTotalSize"},
    {"Fts5ExtensionApi", "xTokenize"},
    {"Fts5ExtensionApi", "xPhraseCount"},
    {"Fts5ExtensionApi", "xPhraseSize"},
    {"Fts5ExtensionApi", "xInstCount"},
    {"Fts5ExtensionApi", "xInst"},
    {"Fts5ExtensionApi", "xRowid"},
    {"Fts5ExtensionApi", "xColumnText"},
    {"Fts5ExtensionApi", "xColumnSize"},
    {"Fts5ExtensionApi", "xQueryPhrase"},
    {"Fts5ExtensionApi", "xSetAuxdata"},
    {"Fts5ExtensionApi", "xGetAuxdata"},
    {"Fts5ExtensionApi", "xPhraseFirst"},
    {"Fts5ExtensionApi", "xPhraseNext"},
    {"Fts5ExtensionApi", "xPhraseFirstColumn"},
    {"Fts5ExtensionApi", "xPhraseNextColumn"},
    {"Fts5PhraseIter", "a"},
    {"Fts5PhraseIter", "b"},
    {"fts5_tokenizer", "xCreate"},
    {"fts5_tokenizer", "xDelete"},
    {"fts5_tokenizer", "xTokenize"},
    {"fts5_api", "iVersion"},
    {"fts5_api", "xCreateTokenizer"},
    {"fts5_api", "xFindTokenizer"},
    {"fts5_api", "xCreateFunction"},
    {"struct sqlite3_index_constraint", "iColumn"},
    {"struct sqlite3_index_constraint", "op"},
    {"struct sqlite3_index_constraint", "usable"},
    {"struct sqlite3_index_constraint", "iTermOffset"},
    {"struct sqlite3_index_orderby", "iColumn"},
    {"struct sqlite3_index_orderby", "desc"},
    {"struct sqlite3_index_constraint_usage", "argvIndex"},
    {"struct sqlite3_index_constraint_usage", "omit"},
    {"sqlite3_vtab", "pModule"},
    {"sqlite3_vtab", "nRef"},
    {"sqlite3_vtab", "zErrMsg"},
    {"sqlite3_vtab_cursor", "pVtab"},
    {"sqlite3_snapshot", "hidden"},
};

/* What we parsed out of our header. */
static char *g_macros[MAXN];
static int g_nmacro;
static char *g_protos[MAXN]; /* full prototype text, "SQLITE_API" ... ";" */
static char *g_fnames[MAXN]; /* function name of each prototype */
static int g_nproto;
static int g_parsed;

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n < 2) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

static int find_root(void) {
  if (g_root[0]) return 1;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = 0;
  /* exe = <root>/<builddir>/tests/<binary>: strip three components. */
  for (int i = 0; i < 3; i++) {
    char *s = strrchr(exe, '/');
    if (!s) return 0;
    *s = 0;
  }
  snprintf(g_root, sizeof g_root, "%s", exe);
  snprintf(g_hdr, sizeof g_hdr, "%s/include/sqlite3.h", g_root);
  return access(g_hdr, R_OK) == 0;
}

static int skipped_macro(const char *name) {
  for (int i = 0; kSkipMacros[i]; i++)
    if (!strcmp(kSkipMacros[i], name)) return 1;
  return 0;
}

/* Parse macro names and prototypes from our header (once). */
static int parse_header(void) {
  if (g_parsed) return g_parsed > 0;
  g_parsed = -1;
  if (!find_root()) return 0;
  char *text = read_all(g_hdr);
  if (!text) return 0;
  for (char *line = text; line && *line;) {
    char *eol = strchr(line, '\n');
    if (eol) *eol = 0;
    const char *d = "#define SQLITE", *d2 = "#define FTS5_";
    if (!strncmp(line, d, strlen(d)) || !strncmp(line, d2, strlen(d2))) {
      char *name = line + 8, *p = name;
      while (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) p++;
      if (*p == ' ') { /* object-like macro with a value */
        char *val = p + 1;
        *p = 0;
        int ok = *val && !strchr(val, '"') && !strstr(val, "sqlite3_") && !strstr(val, "extern");
        if (ok && !skipped_macro(name) && g_nmacro < MAXN) g_macros[g_nmacro++] = strdup(name);
      }
    }
    line = eol ? eol + 1 : NULL;
  }
  free(text);
  /* Prototypes: re-read, since the macro pass cut lines apart. */
  text = read_all(g_hdr);
  if (!text) return 0;
  for (char *p = text; (p = strstr(p, "\nSQLITE_API ")) != NULL;) {
    p++;
    char *end = strchr(p, ';');
    if (!end) break;
    char *paren = memchr(p, '(', (size_t)(end - p));
    if (paren && g_nproto < MAXN) { /* a function (globals have no parenthesis) */
      char *e = paren;
      while (e > p && e[-1] == ' ') e--;
      char *b = e;
      while (b > p &&
             (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= '0' && b[-1] <= '9')))
        b--;
      g_fnames[g_nproto] = strndup(b, (size_t)(e - b));
      g_protos[g_nproto] = strndup(p, (size_t)(end - p + 1));
      g_nproto++;
    }
    p = end;
  }
  free(text);
  g_parsed = 1;
  return 1;
}

static int have_cc(void) { return system("command -v cc >/dev/null 2>&1") == 0; }

/* Run a shell command, return its exit status (nonzero also if it died). */
static int run(const char *cmd) {
  int st = system(cmd);
  return st == -1 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) : 128);
}

/* The printer program: NAME VALUE lines and struct offsets for header HDR. */
static void write_printer(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "#include <stddef.h>\n#include <stdio.h>\n#include HDR\nint main(void) {\n");
  for (int i = 0; i < g_nmacro; i++) {
    fprintf(f,
            "#ifdef %s\n  printf(\"%s %%lld\\n\", (long long)(%s));\n#else\n"
            "  printf(\"%s MISSING\\n\");\n#endif\n",
            g_macros[i], g_macros[i], g_macros[i], g_macros[i]);
  }
  const char *structs[] = {"sqlite3_file",
                           "sqlite3_io_methods",
                           "sqlite3_vfs",
                           "sqlite3_mem_methods",
                           "sqlite3_mutex_methods",
                           "sqlite3_module",
                           "sqlite3_index_info",
                           "sqlite3_vtab",
                           "sqlite3_vtab_cursor",
                           "sqlite3_snapshot",
                           "struct sqlite3_index_constraint",
                           "struct sqlite3_index_orderby",
                           "struct sqlite3_index_constraint_usage",
                           "fts5_api",
                           "fts5_tokenizer",
                           "Fts5ExtensionApi",
                           "Fts5PhraseIter"};
  for (size_t i = 0; i < sizeof structs / sizeof structs[0]; i++)
    fprintf(f, "  printf(\"sizeof(%s) %%zu\\n\", sizeof(%s));\n", structs[i], structs[i]);
  for (size_t i = 0; i < sizeof kFields / sizeof kFields[0]; i++)
    fprintf(f, "  printf(\"offsetof(%s,%s) %%zu\\n\", offsetof(%s, %s));\n", kFields[i][0],
            kFields[i][1], kFields[i][0], kFields[i][1]);
  fprintf(f, "  return 0;\n}\n");
  fclose(f);
}

/* Build and run the printer with header spec `hdr`; output into `out`. */
static int build_and_print(const char *src, const char *hdr, const char *bin, const char *out) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "cc " CCFLAGS " -DHDR='%s' -o '%s' '%s' 2>'%s.err'", hdr, bin, src,
           bin);
  if (run(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "%s.err", bin);
    char *err = read_all(cmd);
    test_fail(__FILE__, __LINE__, "compiling the printer against %s failed:\n%.3000s", hdr,
              err ? err : "");
    free(err);
    return 0;
  }
  snprintf(cmd, sizeof cmd, "'%s' >'%s'", bin, out);
  if (run(cmd) != 0) {
    test_fail(__FILE__, __LINE__, "running %s failed", bin);
    return 0;
  }
  return 1;
}

static int setup(void) {
  if (!have_cc()) {
    test_fail(__FILE__, __LINE__, "no C compiler: `cc` is required by this test");
    return 0;
  }
  if (!parse_header()) {
    test_fail(__FILE__, __LINE__, "cannot read include/sqlite3.h (looked at %s)", g_hdr);
    return 0;
  }
  return 1;
}

TEST(header_parse_finds_enough) {
  if (!setup()) return;
  /* Several hundred constants and a couple of hundred functions. */
  CHECK(g_nmacro > 350);
  CHECK(g_nproto > 200);
}

TEST(macros_and_layouts_match_reference) {
  if (!setup()) return;
  if (access("/usr/include/sqlite3.h", R_OK) != 0) {
    test_fail(__FILE__, __LINE__, "the reference /usr/include/sqlite3.h is not installed");
    return;
  }
  char src[512], ours[512], sys[512], obin[512], sbin[512], hdrspec[4400];
  snprintf(src, sizeof src, "%s", test_path("printer.c"));
  snprintf(ours, sizeof ours, "%s", test_path("ours.txt"));
  snprintf(sys, sizeof sys, "%s", test_path("sys.txt"));
  snprintf(obin, sizeof obin, "%s", test_path("printer_ours"));
  snprintf(sbin, sizeof sbin, "%s", test_path("printer_sys"));
  write_printer(src);
  snprintf(hdrspec, sizeof hdrspec, "\"%s\"", g_hdr);
  if (!build_and_print(src, hdrspec, obin, ours)) return;
  if (!build_and_print(src, "<sqlite3.h>", sbin, sys)) return;
  char *a = read_all(ours), *b = read_all(sys);
  CHECK(a && b);
  if (a && b) {
    int lines = 0, bad = 0;
    /* Same program text, so the lines correspond one to one. */
    char *sa, *sb;
    char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
    while (la && lb) {
      lines++;
      if (strcmp(la, lb)) {
        if (bad++ < 30) test_fail(__FILE__, __LINE__, "ours: %s   reference: %s", la, lb);
      }
      la = strtok_r(NULL, "\n", &sa);
      lb = strtok_r(NULL, "\n", &sb);
    }
    CHECK(la == NULL && lb == NULL);
    CHECK_EQ(bad, 0);
    CHECK(lines >= g_nmacro + 4);
  }
  free(a);
  free(b);
}

TEST(prototypes_agree_with_reference) {
  if (!setup()) return;
  const char *src = test_path("protos.c");
  FILE *f = fopen(src, "w");
  CHECK(f != NULL);
  if (!f) return;
  /* Redeclaring a function with a different type is a constraint violation. */
  fprintf(f, "#include <sqlite3.h>\n");
  for (int i = 0; i < g_nproto; i++) fprintf(f, "%s\n", g_protos[i]);
  fclose(f);
  char cmd[8192];
  const char *err = test_path("protos.err");
  snprintf(cmd, sizeof cmd, "cc " CCFLAGS " -fsyntax-only '%s' 2>'%s'", src, err);
  if (run(cmd) != 0) {
    char *e = read_all(err);
    test_fail(__FILE__, __LINE__, "our prototypes conflict with the reference:\n%.4000s",
              e ? e : "");
    free(e);
  }
}

TEST(header_alone_is_pedantic_clean_and_declares_all) {
  if (!setup()) return;
  const char *src = test_path("addr.c");
  FILE *f = fopen(src, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "#include \"%s\"\n#include <stdio.h>\ntypedef void (*AnyFn)(void);\n", g_hdr);
  fprintf(f, "static const AnyFn fns[] = {\n");
  for (int i = 0; i < g_nproto; i++) fprintf(f, "  (AnyFn)%s,\n", g_fnames[i]);
  fprintf(f,
          "};\nint main(void) {\n  sqlite3_destructor_type d = SQLITE_TRANSIENT;\n"
          "  sqlite3_file file = {0};\n  sqlite3_vfs vfs = {0};\n"
          "  (void)d; (void)file; (void)vfs;\n"
          "  printf(\"%%d %%s %%s\\n\", SQLITE_VERSION_NUMBER, SQLITE_VERSION,"
          " SQLITE_SOURCE_ID);\n  return fns[0] == 0;\n}\n");
  fclose(f);
  char cmd[8192];
  const char *err = test_path("addr.err");
  snprintf(cmd, sizeof cmd, "cc " CCFLAGS " -fsyntax-only '%s' 2>'%s'", src, err);
  if (run(cmd) != 0) {
    char *e = read_all(err);
    test_fail(__FILE__, __LINE__, "our header alone does not compile cleanly:\n%.4000s",
              e ? e : "");
    free(e);
  }
  /* Every function issue 4 names is declared. */
  for (int i = 0; kIssueFns[i]; i++) {
    char want[128];
    snprintf(want, sizeof want, "sqlite3_%s", kIssueFns[i]);
    int found = 0;
    for (int j = 0; j < g_nproto && !found; j++) found = !strcmp(g_fnames[j], want);
    if (!found) test_fail(__FILE__, __LINE__, "%s is not declared", want);
  }
}

/* Reference macro families we deliberately leave out. */
static const char *const kNotOurs[] = {"SQLITE_TESTCTRL_", "SQLITE_CHANGESET", "SQLITE_SESSION_",
                                       "SQLITE3_H", NULL};

TEST(reference_macros_all_defined) {
  if (!setup()) return;
  char *ref = read_all("/usr/include/sqlite3.h");
  char *ours = read_all(g_hdr);
  CHECK(ref != NULL && ours != NULL);
  int n = 0, missing = 0;
  for (char *p = ref; ref && ours && (p = strstr(p, "define SQLITE")) != NULL; p++) {
    /* only preprocessor lines: "#define" or "# define" at a line start */
    char *q = p;
    while (q > ref && q[-1] == ' ') q--;
    if (q == ref || q[-1] != '#' || (q - 1 > ref && q[-2] != '\n')) continue;
    char name[128];
    size_t k = 0;
    const char *s = p + 7;
    while (k < sizeof name - 1 &&
           (*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
      name[k++] = *s++;
    name[k] = 0;
    int skip = 0;
    for (int i = 0; kNotOurs[i] && !skip; i++)
      skip = !strncmp(name, kNotOurs[i], strlen(kNotOurs[i]));
    if (skip) continue;
    n++;
    char want[160];
    snprintf(want, sizeof want, "#define %s", name);
    char *hit = strstr(ours, want);
    int ok =
        hit && (hit[strlen(want)] == ' ' || hit[strlen(want)] == '\n' || hit[strlen(want)] == '(');
    if (!ok) {
      /* a second occurrence may be the exact one (prefix clash) */
      while (hit && !ok) {
        hit = strstr(hit + 1, want);
        ok = hit && (hit[strlen(want)] == ' ' || hit[strlen(want)] == '\n');
      }
    }
    if (!ok && missing++ < 30) test_fail(__FILE__, __LINE__, "reference macro %s missing", name);
  }
  CHECK_EQ(missing, 0);
  CHECK(n > 350);
  free(ref);
  free(ours);
}

TEST(header_compiles_as_cxx) {
  if (!setup()) return;
  if (system("command -v c++ >/dev/null 2>&1") != 0) return; /* C++ is optional */
  const char *src = test_path("cxx.cc");
  FILE *f = fopen(src, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f,
          "#include \"%s\"\nint main() {\n"
          "  const char *(*f)(void) = sqlite3_libversion;\n  return f() == 0;\n}\n",
          g_hdr);
  fclose(f);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "c++ -Werror -Wall -Wextra -pedantic -fsyntax-only '%s' 2>'%s'", src,
           test_path("cxx.err"));
  CHECK_EQ(run(cmd), 0);
}
