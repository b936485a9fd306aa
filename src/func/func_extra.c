/*
 * func_extra.c -- the remaining core functions of SQLite 3.40.1 that are
 * about the build rather than values: sqlite_compileoption_used,
 * sqlite_compileoption_get and load_extension (through the connection's
 * FuncConnCallbacks.load_extension, src/api/api_loadext.c, which decides
 * whether it is allowed; "not authorized" without a connection).
 *
 * Owns the func_extra_defs table and the compile-option list.
 *
 * Invariants:
 *  1. The option list describes Shale's own limits and behaviour, in the
 *     spelling SQLite uses (without the SQLITE_ prefix), sorted by name.
 *  2. An option name matches as in sqlite3_compileoption_used: an optional
 *     "SQLITE_" prefix is ignored, the comparison ignores ASCII case, and
 *     the name may stop where an option continues with "=value".
 */
#include <string.h>

#include "func_int.h"

static const char *const compile_opts[] = {
    "DEFAULT_CACHE_SIZE=-2000",
    "DEFAULT_FILE_FORMAT=4",
    "DEFAULT_PAGE_SIZE=4096",
    "ENABLE_MATH_FUNCTIONS",
    "MAX_ATTACHED=10",
    "MAX_COLUMN=2000",
    "MAX_LENGTH=1000000000",
    "MAX_LIKE_PATTERN_LENGTH=50000",
    "MAX_SQL_LENGTH=1000000000",
    "MAX_VARIABLE_NUMBER=250000",
    "SOUNDEX",
    "SYSTEM_MALLOC",
    "TEMP_STORE=1",
    "THREADSAFE=1",
};
#define NOPTS ((int)(sizeof compile_opts / sizeof compile_opts[0]))

static int is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (unsigned char)c >= 0x80;
}

int func_compileoption_used(const char *z, uint32_t n) {
  if (n >= 7 && util_strnicmp(z, "SQLITE_", 7) == 0) {
    z += 7;
    n -= 7;
  }
  int used = 0;
  for (int i = 0; i < NOPTS && !used; i++)
    used = strlen(compile_opts[i]) >= n && util_strnicmp(z, compile_opts[i], n) == 0 &&
           !is_id_char(compile_opts[i][n]);
  return used;
}

const char *func_compileoption_get(int64_t i) {
  return i >= 0 && i < NOPTS ? compile_opts[i] : NULL;
}

static void compileoption_used_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  char buf[32];
  const char *z;
  uint32_t n;
  if (argv[0].type == SHALE_NULL) return;
  func_arg_text(&argv[0], buf, &z, &n);
  func_result_int(ctx, func_compileoption_used(z, func_cstr_len(z, n)));
}

static void compileoption_get_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  const char *z = func_compileoption_get(record_value_int64(&argv[0]));
  if (z) func_result_text(ctx, z, -1, FUNC_STATIC);
}

/* An argument's text, NUL-terminated (shale_malloc), as the C call wants it;
 * NULL on out-of-memory. */
static char *arg_cstr(const ShValue *v) {
  char buf[32];
  const char *z;
  uint32_t n;
  func_arg_text(v, buf, &z, &n);
  return util_mprintf("%.*s", (int)func_cstr_len(z, n), z ? z : "");
}

/* As SQLite's: NULL for a NULL file or a load that worked, else the
 * loader's message as the error (a NULL proc is the default entry point). */
static void load_extension_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  if (!ctx->cb || !ctx->cb->load_extension) {
    func_result_error(ctx, "not authorized", -1);
    return;
  }
  if (argv[0].type == SHALE_NULL) return;
  char *file = arg_cstr(&argv[0]);
  char *proc = argc == 2 && argv[1].type != SHALE_NULL ? arg_cstr(&argv[1]) : NULL;
  char *err = NULL;
  int rc = !file || (argc == 2 && argv[1].type != SHALE_NULL && !proc)
               ? SHALE_NOMEM
               : ctx->cb->load_extension(ctx->conn, file, proc, &err);
  if (rc == SHALE_NOMEM && !err)
    func_result_error_nomem(ctx);
  else if (rc != SHALE_OK)
    func_result_error(ctx, err ? err : "", -1);
  shale_free(err);
  shale_free(file);
  shale_free(proc);
}

const FuncDef func_extra_defs[] = {
    {.name = "sqlite_compileoption_used",
     .nargs = 1,
     .flags = FUNC_BUILTIN,
     .scalar = compileoption_used_fn},
    {.name = "sqlite_compileoption_get",
     .nargs = 1,
     .flags = FUNC_BUILTIN,
     .scalar = compileoption_get_fn},
    {.name = "load_extension",
     .nargs = 1,
     .flags = FUNC_BUILTIN | FUNC_DIRECTONLY,
     .scalar = load_extension_fn},
    {.name = "load_extension",
     .nargs = 2,
     .flags = FUNC_BUILTIN | FUNC_DIRECTONLY,
     .scalar = load_extension_fn},
};
const int func_extra_ndefs = (int)(sizeof func_extra_defs / sizeof func_extra_defs[0]);
