/*
 * func.h -- the SQL function library: the interface the VM calls, the
 * registry of functions, and the LIKE/GLOB matchers.
 *
 * A function is a FuncDef (scalar, or aggregate with step/final and for
 * window use value/inverse). The VM fills a FuncCtx for each call, passes the
 * arguments as an array of ShValue, and reads the result (or error) back out
 * of the ctx. The built-ins reproduce SQLite 3.40.1 exactly, including its
 * conversions (record.h "casts") and error messages.
 *
 * Invariants:
 *  1. A function never keeps pointers into its arguments past its return
 *     (except through a result it copied); results are owned by the ctx
 *     (ctx->result, freed with func_ctx_reset) unless they are static.
 *  2. After any callback, ctx->rc is SHALE_OK or the error to raise;
 *     ctx->errmsg is shale_malloc'ed (or NULL: use the code's text).
 *  3. An aggregate context is allocated zeroed by the first
 *     func_aggregate_context call that asks for bytes, lives until the final
 *     callback returns, and is then released by func_agg_finish; the final
 *     callback frees whatever the aggregate hung off it. The VM calls
 *     func_agg_finish exactly once per aggregate, also when abandoning it.
 *  4. Registry lookups are by ASCII-case-insensitive name and exact arity,
 *     falling back to a variadic (nargs = -1) definition whose nargs_min
 *     allows the count.
 */
#ifndef SHALE_FUNC_H
#define SHALE_FUNC_H

#include <stdint.h>

#include "../record/record.h"

/* What sqlite_source_id() returns (also shale_sourceid()). */
#define FUNC_SOURCE_ID "2026-11-30 00:00:00 shale-0.1.0 (SQLite 3.40.1 compatible)"

/* ---- definitions ---- */

typedef struct FuncCtx FuncCtx;
typedef struct FuncDef FuncDef;

typedef void (*FuncScalarFn)(FuncCtx *ctx, int argc, ShValue *argv);
typedef void (*FuncFinalFn)(FuncCtx *ctx);

/* FuncDef.flags */
#define FUNC_DETERMINISTIC 0x0001 /* same args, same result (within a statement) */
#define FUNC_NEEDCOLL 0x0002      /* compares text: the VM sets ctx->coll */
#define FUNC_CONSTANT 0x0004      /* no args dependence at all (sqlite_version) */
#define FUNC_LIKE 0x0008          /* like(): candidate for the LIKE optimization */
#define FUNC_CASE 0x0010          /* with FUNC_LIKE: case-sensitive (GLOB) */
#define FUNC_MINMAX 0x0020        /* min()/max() aggregate: index optimization */
#define FUNC_COUNT 0x0040         /* count(*): table-count optimization */
#define FUNC_INLINE                                                           \
  0x0080                       /* coalesce/ifnull/iif/likelihood...: the code \
                                  generator may short-circuit the arguments */
#define FUNC_DIRECTONLY 0x0100 /* not from triggers/views */
#define FUNC_INNOCUOUS 0x0200
#define FUNC_SLOWCHANGE 0x0400 /* changes()/last_insert_rowid(): per statement */
#define FUNC_UNLIKELY 0x0800   /* likelihood/likely/unlikely: planner hint */
#define FUNC_WINDOW                                                                  \
  0x1000                    /* a built-in window function (row_number .. nth_value): \
                               only with OVER; user_data holds its FUNC_WIN_* kind */
#define FUNC_BUILTIN 0x8000 /* set on built-ins */

/* The built-in window functions (FuncDef.user_data of FUNC_WINDOW defs). The
 * VM computes them itself from the partition's rows (src/vm/vm_window.c). */
enum {
  FUNC_WIN_ROW_NUMBER = 1,
  FUNC_WIN_RANK,
  FUNC_WIN_DENSE_RANK,
  FUNC_WIN_PERCENT_RANK,
  FUNC_WIN_CUME_DIST,
  FUNC_WIN_NTILE,
  FUNC_WIN_LAG,
  FUNC_WIN_LEAD,
  FUNC_WIN_FIRST_VALUE,
  FUNC_WIN_LAST_VALUE,
  FUNC_WIN_NTH_VALUE
};

struct FuncDef {
  const char *name; /* as registered; lookups ignore ASCII case */
  int nargs;        /* exact arity, or -1 for any */
  int nargs_min;    /* with nargs = -1: fewest arguments accepted */
  unsigned flags;
  FuncScalarFn scalar;  /* scalar function, or NULL for an aggregate */
  FuncScalarFn step;    /* aggregate step */
  FuncFinalFn final;    /* aggregate final: sets the result */
  FuncFinalFn value;    /* window: current value without finishing (or NULL) */
  FuncScalarFn inverse; /* window: remove a row (or NULL) */
  /* aggregate step on the state block a first `step` made (or NULL): the VM
   * calls it instead of `step` once the block exists. It reads no context
   * (no collation, no auxdata) and cannot fail or set a result. */
  void (*step_state)(void *state, int argc, ShValue *argv);
  void *user_data;
  void (*destroy)(void *user_data); /* user functions: called on replacement/free */
};

static inline int func_is_aggregate(const FuncDef *d) { return d->step != NULL; }

/* ---- the call context ---- */

/* Connection-level data a function may read; the VM/API provides it. */
typedef struct FuncConnCallbacks {
  int64_t (*last_insert_rowid)(void *conn);
  int64_t (*changes)(void *conn);
  int64_t (*total_changes)(void *conn);
  /* load_extension(file, proc): SHALE_OK, or an error code with *errmsg
   * (shale_malloc'ed, may be NULL) set; NULL callback: "not authorized". */
  int (*load_extension)(void *conn, const char *file, const char *proc, char **errmsg);
} FuncConnCallbacks;

/* Per-statement cached data keyed by (call site, argument index). The VM
 * owns the list head (one per statement) and frees it with
 * func_auxdata_clear. */
typedef struct FuncAux {
  int site; /* the VM's id of the call site (e.g. the instruction index) */
  int iarg;
  void *p;
  void (*destroy)(void *);
  struct FuncAux *next;
} FuncAux;

/* How results may hand over text/blob memory. */
#define FUNC_STATIC 0    /* lives longer than the result: borrowed */
#define FUNC_TRANSIENT 1 /* copied now */
#define FUNC_OWNED 2     /* shale_malloc memory: the result takes it (freed on error too) */

#define FUNC_MAX_LENGTH_DEFAULT 1000000000 /* SQLITE_MAX_LENGTH */
#define FUNC_LIKE_PATTERN_DEFAULT 50000    /* SQLITE_MAX_LIKE_PATTERN_LENGTH */

/* The API's shale_value (include/shale.h): a value handed to user code
 * (functions, virtual-table modules) with its text form. Defined here so
 * the layers that call user code (api, vtab) build them alike. */
struct shale_value {
  ShValue v;
  char *buf; /* NUL-terminated text form (shale_malloc'ed, reused) */
  size_t cap;
  uint8_t buf16; /* buf holds the UTF-16 form instead: 1 LE, 2 BE (shale_value_text16) */
  uint32_t n16;  /* its length in bytes */
  uint64_t gen;  /* row generation the value belongs to */
};

struct FuncCtx {
  /* Set by the VM before the call. */
  const FuncDef *def;
  const Collation *coll; /* FUNC_NEEDCOLL functions compare text with it (NULL = BINARY) */
  void *conn;
  const FuncConnCallbacks *cb; /* may be NULL: the functions then return 0 */
  int64_t max_length;          /* SQLITE_LIMIT_LENGTH; 0 = default */
  int max_like_pattern;        /* SQLITE_LIMIT_LIKE_PATTERN_LENGTH; 0 = default */
  FuncAux **aux;               /* the statement's auxdata list (NULL: none kept) */
  int aux_site;
  int64_t *now_ms;    /* 'now' cached per VM step (Julian day in ms, 0 = not read
                         yet), or NULL: the date functions read the clock */
  uint8_t pure;       /* the call is in a CHECK constraint (1), a generated column (2) or
                         an index (3): the date functions fail on 'now', localtime, utc */
  void *agg;          /* aggregate context (func_aggregate_context) */
  int agg_size;       /* its size in bytes */
  void *agg_spare;    /* a finished context's block offered for reuse (or NULL) */
  int agg_spare_size; /* its size */
  /* Outputs. */
  ShValue result;          /* NULL unless set; VAL_OWNED text/blob freed by func_ctx_reset */
  uint8_t subtype;         /* result subtype (0 = none) */
  int rc;                  /* SHALE_OK or the error */
  char *errmsg;            /* shale_malloc'ed message or NULL */
  uint8_t skip_accum_load; /* min/max: this row did not become the new best */
};

/* Prepare ctx for calling def: zeroes it and sets def. */
void func_ctx_init(FuncCtx *ctx, const FuncDef *def);
/* Release the result and message (not the aggregate context); result NULL,
 * rc OK. Call before reusing a ctx for the next call. */
void func_ctx_reset(FuncCtx *ctx);
/* Take the result out of ctx (ownership passes to *out); ctx->result NULL. */
void func_ctx_take_result(FuncCtx *ctx, ShValue *out);

/* Memory for an aggregate's state: zeroed on the first call with nbytes > 0
 * and the same block on every later call. With nbytes = 0 before the first
 * allocation it returns NULL (final on an empty group). NULL with
 * rc = SHALE_NOMEM on allocation failure. */
void *func_aggregate_context(FuncCtx *ctx, int nbytes);
/* Call def->final (which frees what hangs off the state) and free the
 * aggregate context. Leaves the result in ctx. */
void func_agg_finish(FuncCtx *ctx);
/* As func_agg_finish, but the context's block is kept in ctx->agg_spare
 * (when no spare is held yet; else freed) for the next group to reuse: a
 * re-run statement then allocates no aggregate state. The caller frees
 * ctx->agg_spare in the end. */
void func_agg_finish_keep(FuncCtx *ctx);

/* Auxdata: cached per call site and argument. get returns NULL if none. set
 * replaces (destroying the old); when it cannot keep p (no list, OOM) it
 * destroys p at once. */
void *func_get_auxdata(FuncCtx *ctx, int iarg);
void func_set_auxdata(FuncCtx *ctx, int iarg, void *p, void (*destroy)(void *));
void func_auxdata_clear(FuncAux **list);
/* The result: a NULL carrying p (sqlite3_result_pointer). The pointer lives
 * in the statement's auxdata list (as an entry of site -1 - the call site)
 * until func_pointers_drop: destroy(p) runs then. Without a list
 * (aggregates) the result is a plain NULL and destroy(p) runs at once. */
void func_result_pointer(FuncCtx *ctx, void *p, const char *type, void (*destroy)(void *));
/* Release the pointer results of call site site (its result register is
 * about to be overwritten, as SQLite releases a register's pointer), or all
 * of them when site < 0 (the statement halts). */
void func_pointers_drop(FuncAux **list, int site);
/* After a call at site: drop (destroying) the site's auxdata for arguments
 * that are not constant (bit iarg of const_mask clear, or iarg > 31), as
 * SQLite does: only constant arguments keep auxdata from row to row. */
void func_auxdata_drop(FuncAux **list, int site, uint32_t const_mask);

/* ---- results ---- */
void func_result_null(FuncCtx *ctx);
void func_result_int(FuncCtx *ctx, int64_t i);
/* NaN becomes NULL, as in SQLite. */
void func_result_real(FuncCtx *ctx, double r);
/* n < 0: z is NUL-terminated. mode FUNC_STATIC/TRANSIENT/OWNED. Longer than
 * the length limit: SHALE_TOOBIG error. */
void func_result_text(FuncCtx *ctx, const char *z, int64_t n, int mode);
void func_result_blob(FuncCtx *ctx, const void *z, int64_t n, int mode);
/* n zero bytes. */
void func_result_zeroblob(FuncCtx *ctx, int64_t n);
/* A copy of v (text/blob copied). */
void func_result_value(FuncCtx *ctx, const ShValue *v);
/* Error with message z (n < 0: NUL-terminated); rc SHALE_ERROR. */
void func_result_error(FuncCtx *ctx, const char *z, int n);
void func_result_error_nomem(FuncCtx *ctx);
void func_result_error_toobig(FuncCtx *ctx); /* "string or blob too big" */
static inline void func_result_subtype(FuncCtx *ctx, unsigned st) { ctx->subtype = (uint8_t)st; }
static inline void *func_user_data(FuncCtx *ctx) { return ctx->def ? ctx->def->user_data : 0; }
static inline int64_t func_max_length(const FuncCtx *ctx) {
  return ctx->max_length > 0 ? ctx->max_length : FUNC_MAX_LENGTH_DEFAULT;
}

/* ---- the registry ---- */

typedef struct FuncEntry FuncEntry;
typedef struct FuncRegistry {
  FuncEntry **slots;
  int nslot;
  int count;
} FuncRegistry;

/* An empty registry loaded with every built-in. SHALE_OK or SHALE_NOMEM
 * (reg is then empty and may be freed). */
int func_registry_init(FuncRegistry *reg);
/* Free all entries (calling user destroy hooks). */
void func_registry_free(FuncRegistry *reg);
/* Add or replace (same name, case-insensitively, and nargs) a user function;
 * def is copied (name too). A def with neither scalar nor step deletes the
 * existing function, leaving a tombstone that hides any other definition
 * for that arity (SQLite's behaviour; its destroy runs when it is replaced
 * or the registry freed); with no existing function it is a no-op. On error
 * def->destroy is not called. SHALE_OK, SHALE_NOMEM, SHALE_MISUSE (bad
 * name/nargs). */
int func_register(FuncRegistry *reg, const FuncDef *def);
/* Validate the registry's structure (slots, counts, one entry per name and
 * arity, every entry scalar xor aggregate). SHALE_OK or SHALE_INTERNAL. */
int func_registry_check(const FuncRegistry *reg);
/* PRAGMA case_sensitive_like: make like() (2 and 3 args) case-sensitive
 * (on) or ASCII case-insensitive again (off), replacing any user override.
 * SHALE_OK or SHALE_NOMEM. */
int func_set_case_sensitive_like(FuncRegistry *reg, int on);
/* The function to call for name(nargs args), or NULL. */
const FuncDef *func_find(const FuncRegistry *reg, const char *name, int nargs);
/* The entry registered for exactly (name, nargs), tombstones included
 * (neither scalar nor step), or NULL. */
const FuncDef *func_find_exact(const FuncRegistry *reg, const char *name, int nargs);
/* 1 if some function called name exists with any arity. When func_find
 * fails the resolver reports "wrong number of arguments to function
 * name()" if this is 1, else "no such function: name" (SQLite's wording). */
int func_exists_name(const FuncRegistry *reg, const char *name);

/* 1 if d is deterministic in SQLite's sense (its SQLITE_FUNC_CONSTANT):
 * what index expressions, generated columns and partial-index WHEREs may
 * call. Not: aggregates, user functions registered without
 * SHALE_DETERMINISTIC, and the built-ins whose answer changes over time
 * (random, changes, current_date, sqlite_version, compile options, ...). */
int func_is_deterministic(const FuncDef *d);
/* 1 if a call of d coming from the schema (views and triggers outside TEMP,
 * DEFAULT, and deterministic calls in CHECK, generated columns and indexes)
 * is "unsafe use of d()": d is direct-only, or untrusted (db_config
 * TRUSTED_SCHEMA off) and d is an application function not marked
 * innocuous. */
int func_unsafe_in_schema(const FuncDef *d, int untrusted);

/* ---- json_each / json_tree (func_json.c) ----
 * The walk their virtual-table module (src/vtab/vtab_json.c) runs: one per
 * cursor. Columns: FUNC_JSON_EACH_DECL's, 0 key .. 9 root. */
#define FUNC_JSON_EACH_DECL \
  "CREATE TABLE x(key,value,type,atom,id,parent,fullkey,path,json HIDDEN,root HIDDEN)"
#define FUNC_JSON_EACH_JSON 8 /* the first hidden column; root follows */
typedef struct FuncJsonEach FuncJsonEach;
/* A walk of json_each (recursive 0) or json_tree (1); NULL on OOM. */
FuncJsonEach *func_json_each_new(int recursive);
void func_json_each_free(FuncJsonEach *);
/* Start on JSON argv[0] below root path argv[1] (argc 0..2; none or NULL:
 * no rows). SHALE_OK, or an error with *errmsg (shale_malloc'ed) set:
 * "malformed JSON", a path error. Values read later borrow nothing from
 * argv. */
int func_json_each_start(FuncJsonEach *, int argc, ShValue *argv, char **errmsg);
int func_json_each_eof(const FuncJsonEach *);
void func_json_each_next(FuncJsonEach *);
int64_t func_json_each_rowid(const FuncJsonEach *);
/* Column col of the current row as ctx's result (value: JSON subtype for
 * an array or object). */
void func_json_each_column(FuncJsonEach *, FuncCtx *ctx, int col);

/* ---- LIKE and GLOB ---- */

/* GLOB: '*', '?', '[...]' sets with ranges and '^'; case-sensitive. 1 if
 * str matches pat. Each text ends at its length or at a NUL byte. */
int func_glob_match(const char *pat, int npat, const char *str, int nstr);
/* LIKE: '%', '_', optional escape character esc (0 = none), nocase = ASCII
 * case folding (SQLite's default LIKE). */
int func_like_match(const char *pat, int npat, const char *str, int nstr, uint32_t esc, int nocase);

/* ---- printf ---- */

/* SQLite's printf over SQL values: the engine behind format()/printf() and
 * quote(). Appends to a growable buffer; args are consumed in order (missing
 * ones read as NULL). Returns SHALE_OK, SHALE_NOMEM or SHALE_TOOBIG (output
 * longer than max_len). *out is shale_malloc'ed, NUL-terminated (NULL on
 * error; also NULL with SHALE_OK when the format produced nothing at all:
 * no text and no conversion, which printf() returns as NULL), *nout its
 * length. */
int func_printf(const char *fmt, int nfmt, int argc, ShValue *argv, int64_t max_len, char **out,
                int64_t *nout);

/* The build's compile options (sqlite_compileoption_used/get and the C
 * API's sqlite3_compileoption_used/get): used tests name z[0..n) (an
 * optional "SQLITE_" prefix, any case, may stop before "=value"); get
 * returns option i or NULL. */
int func_compileoption_used(const char *z, uint32_t n);
const char *func_compileoption_get(int64_t i);

/* Call fn(arg, def) for every function of the registry (deleted user
 * entries skipped), in no particular order; stops at and returns the first
 * non-zero result. */
int func_registry_each(const FuncRegistry *reg, int (*fn)(void *arg, const FuncDef *def),
                       void *arg);

#endif /* SHALE_FUNC_H */
