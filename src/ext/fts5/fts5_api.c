/*
 * fts5_api.c -- the fts5_api object of a connection (SQLite's FTS5
 * extension registration interface, fts5_api.h): `SELECT fts5(?1)` with
 * ?1 bound by shale_bind_pointer(..., "fts5_api_ptr") writes the api's
 * address through the pointer; xCreateTokenizer / xFindTokenizer keep the
 * tokenizer modules (the built-ins registered first, unicode61 the
 * default), xCreateFunction adds an auxiliary function as an SQL function
 * whose first argument is the table's hidden column (the cursor id).
 *
 * Invariants:
 *  1. Tokenizer names compare ASCII case-insensitively; the newest module of
 *     a name is the one found. A module's xDestroy runs once, when the
 *     connection closes (fts5_api_free).
 *  2. An auxiliary function's xDestroy runs once, when its SQL function is
 *     replaced or the connection closes.
 */
#include <string.h>

#include "../../util/util.h"
#include "fts5_vtab.h"

static Fts5TokMod *find_mod(Fts5Global *g, const char *name) {
  if (!name) return g->dflt_tok;
  for (Fts5TokMod *m = g->toks; m; m = m->next)
    if (fts5_ci_eq(m->name, name)) return m;
  return NULL;
}

static int api_create_tokenizer(fts5_api *api, const char *name, void *ctx, fts5_tokenizer *tok,
                                void (*destroy)(void *)) {
  Fts5Global *g = (Fts5Global *)api;
  if (!name || !tok) return SHALE_MISUSE;
  Fts5TokMod *m = shale_malloc(sizeof *m);
  char *z = util_mprintf("%s", name);
  if (!m || !z) {
    shale_free(m);
    shale_free(z);
    return SHALE_NOMEM;
  }
  m->name = z;
  m->ctx = ctx;
  m->m = *tok;
  m->destroy = destroy;
  m->next = g->toks;
  g->toks = m;
  if (!g->dflt_tok) g->dflt_tok = m;
  return SHALE_OK;
}

static int api_find_tokenizer(fts5_api *api, const char *name, void **ctx, fts5_tokenizer *tok) {
  Fts5TokMod *m = find_mod((Fts5Global *)api, name);
  if (!m) {
    memset(tok, 0, sizeof *tok);
    return SHALE_ERROR;
  }
  *tok = m->m;
  *ctx = m->ctx;
  return SHALE_OK;
}

/* The SQL function of an auxiliary function: argv[0] names the cursor. */
static void aux_call(shale_context *ctx, int argc, shale_value **argv) {
  const Fts5Aux *aux = shale_user_data(ctx);
  int64_t id = argc > 0 ? shale_value_int64(argv[0]) : 0;
  Fts5Cursor *c = aux->g->cursors;
  while (c && c->id != id) c = c->next;
  if (!c || argc < 1) {
    char *m = util_mprintf("no such cursor: %lld", (long long)id);
    shale_result_error(ctx, m ? m : "out of memory", -1);
    shale_free(m);
    return;
  }
  fts5_aux_invoke(aux, c, ctx, argc - 1, argv + 1);
}

static void aux_destroy(void *p) {
  Fts5Aux *aux = p;
  if (aux->destroy) aux->destroy(aux->ctx);
  shale_free(aux);
}

static int api_create_function(fts5_api *api, const char *name, void *ctx,
                               fts5_extension_function fn, void (*destroy)(void *)) {
  Fts5Global *g = (Fts5Global *)api;
  if (!name || !fn) return SHALE_MISUSE;
  Fts5Aux *aux = shale_malloc(sizeof *aux);
  if (!aux) return SHALE_NOMEM;
  aux->g = g;
  aux->ctx = ctx;
  aux->fn = fn;
  aux->destroy = destroy;
  /* on failure the function's destructor (aux_destroy) has run */
  return shale_create_function_v2(g->db, name, -1, SHALE_UTF8, aux, aux_call, NULL, NULL,
                                  aux_destroy);
}

/* fts5(P): P a pointer of type "fts5_api_ptr" (an fts5_api **). */
static void fn_fts5(shale_context *ctx, int argc, shale_value **argv) {
  Fts5Global *g = shale_user_data(ctx);
  fts5_api **pp = argc == 1 ? shale_value_pointer(argv[0], "fts5_api_ptr") : NULL;
  if (pp) *pp = &g->api;
  shale_result_null(ctx);
}

int fts5_api_init(shale *db, Fts5Global *g) {
  g->api.iVersion = 2;
  g->api.xCreateTokenizer = api_create_tokenizer;
  g->api.xFindTokenizer = api_find_tokenizer;
  g->api.xCreateFunction = api_create_function;
  int rc = fts5_tok_register_builtins(&g->api);
  if (rc == SHALE_OK)
    rc = shale_create_function_v2(db, "fts5", 1, SHALE_UTF8, g, fn_fts5, NULL, NULL, NULL);
  return rc;
}

void fts5_api_free(Fts5Global *g) {
  for (Fts5TokMod *m = g->toks, *next; m; m = next) {
    next = m->next;
    if (m->destroy) m->destroy(m->ctx);
    shale_free(m->name);
    shale_free(m);
  }
  g->toks = g->dflt_tok = NULL;
}

/* ---- a table's tokenizer ---- */
int fts5_tok_new(Fts5Global *g, int argc, const char *const *argv, Fts5Tok **out, char **err) {
  *out = NULL;
  Fts5TokMod *m = find_mod(g, argc > 0 ? argv[0] : NULL);
  if (!m) {
    *err = util_mprintf("no such tokenizer: %s", argc > 0 ? argv[0] : "");
    return SHALE_ERROR;
  }
  Fts5Tok *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->m = m->m;
  int rc = t->m.xCreate(m->ctx, argc > 1 ? (const char **)argv + 1 : NULL, argc > 1 ? argc - 1 : 0,
                        &t->inst);
  if (rc) { /* SQLite's message, the constructor's code (out of memory stays so) */
    *err = util_mprintf("error in tokenizer constructor");
    shale_free(t);
    return rc;
  }
  t->pattern = fts5_tok_pattern(&t->m, t->inst);
  t->builtin = fts5_tok_builtin(&t->m, t->inst);
  *out = t;
  return SHALE_OK;
}

void fts5_tok_free(Fts5Tok *t) {
  if (!t) return;
  if (t->inst) t->m.xDelete(t->inst);
  shale_free(t);
}

int fts5_tokenize(Fts5Tok *t, int flags, const char *text, int n, void *ctx, Fts5TokenCb cb) {
  if (!text) return SHALE_OK;
  return t->m.xTokenize(t->inst, ctx, flags, text, n, cb);
}
