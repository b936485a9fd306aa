/*
 * func_registry.c -- the plumbing of the function library: call contexts and
 * result setters, aggregate contexts, auxdata, the name/arity registry, and
 * the small shared helpers (UTF-8 stepping).
 *
 * Owns: FuncCtx results and errors, aggregate context blocks, the registry's
 * entries (copies of user FuncDefs; built-ins are referenced, not copied).
 *
 * Invariants:
 *  1. ctx->result is NULL, a number, static/borrowed text, or VAL_OWNED
 *     memory; every setter first releases what was there.
 *  2. The registry is a chained hash on the lowercased name; an entry is
 *     unique per (name, nargs). nslot is a power of two.
 *  3. Registry entries for user functions own a copy of the name and call
 *     def.destroy(user_data) exactly once, when replaced, deleted or freed.
 *  4. Deleting a user function (or a built-in) leaves a tombstone: a user
 *     entry with neither scalar nor step, which func_find treats as "not
 *     callable" without falling back to a variadic definition, as SQLite's
 *     deleted entries behave ("wrong number of arguments" while another
 *     definition of the name or the built-in it hides exists). A user entry
 *     that replaced a built-in keeps it (shadow, outside the chains) only so
 *     that the name still counts as existing.
 */
#include <string.h>

#include "func_int.h"

/* ---- UTF-8 ---- */

uint32_t func_utf8_read(const unsigned char **pz, const unsigned char *end) {
  const unsigned char *z = *pz;
  uint32_t c = *z++;
  if (c >= 0xc0) {
    /* The lead byte's payload bits: 5 for 110xxxxx, 4, 3, then 2, 1, 0 for
     * the invalid 0xf8.. leads (SQLite keeps decoding those too). */
    if (c < 0xe0)
      c &= 0x1f;
    else if (c < 0xf0)
      c &= 0x0f;
    else if (c < 0xf8)
      c &= 0x07;
    else if (c < 0xfc)
      c &= 0x03;
    else if (c < 0xfe)
      c &= 0x01;
    else
      c = 0;
    while (z < end && (*z & 0xc0) == 0x80) c = (c << 6) + (0x3f & *z++);
    if (c < 0x80 || (c & 0xfffff800) == 0xd800 || (c & 0xfffffffe) == 0xfffe) c = 0xfffd;
  }
  *pz = z;
  return c;
}

int func_utf8_write(unsigned char *out, uint32_t c) {
  if (c < 0x80) {
    out[0] = (unsigned char)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (unsigned char)(0xc0 + (c >> 6));
    out[1] = (unsigned char)(0x80 + (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (unsigned char)(0xe0 + (c >> 12));
    out[1] = (unsigned char)(0x80 + ((c >> 6) & 0x3f));
    out[2] = (unsigned char)(0x80 + (c & 0x3f));
    return 3;
  }
  out[0] = (unsigned char)(0xf0 + ((c >> 18) & 0x07));
  out[1] = (unsigned char)(0x80 + ((c >> 12) & 0x3f));
  out[2] = (unsigned char)(0x80 + ((c >> 6) & 0x3f));
  out[3] = (unsigned char)(0x80 + (c & 0x3f));
  return 4;
}

/* ---- contexts and results ---- */

void func_ctx_init(FuncCtx *ctx, const FuncDef *def) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->def = def;
  value_set_null(&ctx->result);
}

void func_ctx_reset(FuncCtx *ctx) {
  value_clear(&ctx->result);
  shale_free(ctx->errmsg);
  ctx->errmsg = NULL;
  ctx->rc = SHALE_OK;
  ctx->subtype = 0;
  ctx->skip_accum_load = 0;
}

void func_ctx_take_result(FuncCtx *ctx, ShValue *out) {
  *out = ctx->result;
  if (ctx->subtype) {
    out->flags |= VAL_SUBTYPE;
    out->subtype = ctx->subtype;
  }
  value_set_null(&ctx->result);
}

void *func_aggregate_context(FuncCtx *ctx, int nbytes) {
  if (!ctx->agg && nbytes > 0) {
    if (ctx->agg_spare && ctx->agg_spare_size >= nbytes) {
      ctx->agg = ctx->agg_spare;
      ctx->agg_size = ctx->agg_spare_size;
      ctx->agg_spare = NULL;
      ctx->agg_spare_size = 0;
    } else {
      ctx->agg = shale_malloc((size_t)nbytes);
      if (!ctx->agg) {
        func_result_error_nomem(ctx);
        return NULL;
      }
      ctx->agg_size = nbytes;
    }
    memset(ctx->agg, 0, (size_t)nbytes);
  }
  return ctx->agg;
}

void func_agg_finish(FuncCtx *ctx) {
  if (ctx->def && ctx->def->final) ctx->def->final(ctx);
  shale_free(ctx->agg);
  ctx->agg = NULL;
  ctx->agg_size = 0;
}

void func_agg_finish_keep(FuncCtx *ctx) {
  if (ctx->def && ctx->def->final) ctx->def->final(ctx);
  if (ctx->agg && !ctx->agg_spare) {
    ctx->agg_spare = ctx->agg;
    ctx->agg_spare_size = ctx->agg_size;
  } else {
    shale_free(ctx->agg);
  }
  ctx->agg = NULL;
  ctx->agg_size = 0;
}

void *func_get_auxdata(FuncCtx *ctx, int iarg) {
  if (!ctx->aux) return NULL;
  for (FuncAux *a = *ctx->aux; a; a = a->next) {
    if (a->site == ctx->aux_site && a->iarg == iarg) return a->p;
  }
  return NULL;
}

void func_set_auxdata(FuncCtx *ctx, int iarg, void *p, void (*destroy)(void *)) {
  if (!ctx->aux) {
    if (destroy) destroy(p);
    return;
  }
  FuncAux *a;
  for (a = *ctx->aux; a; a = a->next) {
    if (a->site == ctx->aux_site && a->iarg == iarg) break;
  }
  if (!a) {
    a = shale_malloc(sizeof(*a));
    if (!a) {
      if (destroy) destroy(p);
      return;
    }
    a->site = ctx->aux_site;
    a->iarg = iarg;
    a->next = *ctx->aux;
    *ctx->aux = a;
  } else if (a->destroy && a->p != p) {
    a->destroy(a->p);
  }
  a->p = p;
  a->destroy = destroy;
}

void func_auxdata_clear(FuncAux **list) {
  FuncAux *a = *list;
  while (a) {
    FuncAux *next = a->next;
    if (a->destroy) a->destroy(a->p);
    shale_free(a);
    a = next;
  }
  *list = NULL;
}

void func_auxdata_drop(FuncAux **list, int site, uint32_t const_mask) {
  FuncAux **pp = list;
  while (*pp) {
    FuncAux *a = *pp;
    if (a->site == site && (a->iarg > 31 || !(const_mask & (1u << a->iarg)))) {
      *pp = a->next;
      if (a->destroy) a->destroy(a->p);
      shale_free(a);
    } else {
      pp = &a->next;
    }
  }
}

/* A pointer result's auxdata entry: site -1 - the call site, never matched
 * by the auxdata of a call site. */
typedef struct PtrAux {
  FuncAux a;
  ValPtr vp;
} PtrAux;

static void ptr_aux_release(void *x) {
  ValPtr *vp = x;
  if (vp->destroy) vp->destroy(vp->p);
}

void func_result_pointer(FuncCtx *ctx, void *p, const char *type, void (*destroy)(void *)) {
  value_clear(&ctx->result);
  value_set_null(&ctx->result);
  PtrAux *e = ctx->aux && type ? shale_malloc(sizeof *e) : NULL;
  if (!e) {
    if (destroy) destroy(p);
    if (ctx->aux && type) func_result_error_nomem(ctx);
    return;
  }
  e->vp = (ValPtr){p, type, destroy};
  e->a = (FuncAux){.site = -1 - ctx->aux_site, .p = &e->vp, .destroy = ptr_aux_release};
  e->a.next = *ctx->aux;
  *ctx->aux = &e->a;
  ctx->result.flags = VAL_POINTER;
  ctx->result.z = (const char *)(const void *)&e->vp;
}

void func_pointers_drop(FuncAux **list, int site) {
  FuncAux **pp = list;
  while (*pp) {
    FuncAux *a = *pp;
    if (a->site < 0 && (site < 0 || a->site == -1 - site)) {
      *pp = a->next;
      a->destroy(a->p);
      shale_free(a);
    } else {
      pp = &a->next;
    }
  }
}

void func_result_null(FuncCtx *ctx) { value_clear(&ctx->result); }

void func_result_int(FuncCtx *ctx, int64_t i) {
  value_clear(&ctx->result);
  value_set_int(&ctx->result, i);
}

void func_result_real(FuncCtx *ctx, double r) {
  value_clear(&ctx->result);
  if (r == r) value_set_real(&ctx->result, r);
}

static void result_bytes(FuncCtx *ctx, int type, const char *z, int64_t n, int mode) {
  value_clear(&ctx->result);
  if (n > func_max_length(ctx) || n > (int64_t)UINT32_MAX - 1) {
    if (mode == FUNC_OWNED) shale_free((void *)z);
    func_result_error_toobig(ctx);
    return;
  }
  ShValue *r = &ctx->result;
  r->type = (uint8_t)type;
  r->n = (uint32_t)n;
  r->z = z;
  r->flags = 0;
  if (mode == FUNC_OWNED) {
    r->flags = VAL_OWNED;
  } else if (mode == FUNC_TRANSIENT) {
    if (record_value_make_owned(r)) {
      value_set_null(r);
      func_result_error_nomem(ctx);
    }
  }
}

void func_result_text(FuncCtx *ctx, const char *z, int64_t n, int mode) {
  if (!z) {
    func_result_null(ctx);
    return;
  }
  if (n < 0) n = (int64_t)strlen(z);
  result_bytes(ctx, SHALE_TEXT, z, n, mode);
}

void func_result_blob(FuncCtx *ctx, const void *z, int64_t n, int mode) {
  if (!z && n == 0) z = "";
  result_bytes(ctx, SHALE_BLOB, z, n, mode);
}

void func_result_zeroblob(FuncCtx *ctx, int64_t n) {
  if (n < 0) n = 0;
  if (n > func_max_length(ctx)) {
    func_result_error_toobig(ctx);
    return;
  }
  char *z = shale_malloc((size_t)n + 1);
  if (!z) {
    func_result_error_nomem(ctx);
    return;
  }
  memset(z, 0, (size_t)n + 1);
  func_result_blob(ctx, z, n, FUNC_OWNED);
}

void func_result_value(FuncCtx *ctx, const ShValue *v) {
  switch (v->type) {
    case SHALE_INTEGER:
      func_result_int(ctx, v->i);
      break;
    case SHALE_FLOAT:
      func_result_real(ctx, v->r);
      break;
    case SHALE_TEXT:
      result_bytes(ctx, SHALE_TEXT, v->n ? v->z : "", v->n, FUNC_TRANSIENT);
      break;
    case SHALE_BLOB:
      result_bytes(ctx, SHALE_BLOB, v->n ? v->z : "", v->n, FUNC_TRANSIENT);
      break;
    default:
      func_result_null(ctx);
      /* a pointer goes along (its owner outlives the statement's registers) */
      if (v->flags & VAL_POINTER) ctx->result = *v;
  }
  ctx->subtype = (uint8_t)value_subtype(v); /* the subtype goes along */
}

void func_result_error(FuncCtx *ctx, const char *z, int n) {
  shale_free(ctx->errmsg);
  ctx->errmsg = NULL;
  ctx->rc = SHALE_ERROR;
  if (n < 0) n = (int)strlen(z);
  char *m = shale_malloc((size_t)n + 1);
  if (!m) {
    ctx->rc = SHALE_NOMEM;
    return;
  }
  memcpy(m, z, (size_t)n);
  m[n] = 0;
  ctx->errmsg = m;
}

static void func_result_error_code(FuncCtx *ctx, int rc) {
  shale_free(ctx->errmsg);
  ctx->errmsg = NULL;
  ctx->rc = rc;
}

void func_result_error_nomem(FuncCtx *ctx) {
  value_clear(&ctx->result);
  func_result_error_code(ctx, SHALE_NOMEM);
}

void func_result_error_toobig(FuncCtx *ctx) {
  value_clear(&ctx->result);
  func_result_error(ctx, "string or blob too big", -1);
  if (ctx->rc == SHALE_ERROR) ctx->rc = SHALE_TOOBIG;
}

void func_result_sb_error(FuncCtx *ctx, int err) {
  if (err == SHALE_TOOBIG)
    func_result_error_toobig(ctx);
  else
    func_result_error_nomem(ctx);
}

/* ---- the registry ---- */

struct FuncEntry {
  FuncDef def;
  int owned;         /* def.name is ours and def.destroy applies */
  FuncEntry *shadow; /* the built-in this user entry overrides (restored on delete) */
  FuncEntry *next;
};

static unsigned name_hash(const char *z) {
  unsigned h = 2166136261u;
  for (; *z; z++) {
    unsigned char c = (unsigned char)*z;
    if (c >= 'A' && c <= 'Z') c += 32;
    h = (h ^ c) * 16777619u;
  }
  return h;
}

static void entry_free(FuncEntry *e) {
  if (e->shadow) entry_free(e->shadow);
  if (e->owned) {
    if (e->def.destroy) e->def.destroy(e->def.user_data);
    shale_free((void *)e->def.name);
  }
  shale_free(e);
}

void func_registry_free(FuncRegistry *reg) {
  for (int i = 0; i < reg->nslot; i++) {
    FuncEntry *e = reg->slots[i];
    while (e) {
      FuncEntry *next = e->next;
      entry_free(e);
      e = next;
    }
  }
  shale_free(reg->slots);
  reg->slots = NULL;
  reg->nslot = reg->count = 0;
}

static int grow(FuncRegistry *reg) {
  int n = reg->nslot ? reg->nslot * 2 : 128;
  FuncEntry **s = shale_malloc(sizeof(*s) * (size_t)n);
  if (!s) return SHALE_NOMEM;
  memset(s, 0, sizeof(*s) * (size_t)n);
  for (int i = 0; i < reg->nslot; i++) {
    FuncEntry *e = reg->slots[i];
    while (e) {
      FuncEntry *next = e->next;
      unsigned h = name_hash(e->def.name) & (unsigned)(n - 1);
      e->next = s[h];
      s[h] = e;
      e = next;
    }
  }
  shale_free(reg->slots);
  reg->slots = s;
  reg->nslot = n;
  return SHALE_OK;
}

/* Insert/replace/delete. A new entry takes def as is (owned decides whether
 * the name is copied). */
static int put(FuncRegistry *reg, const FuncDef *def, int owned) {
  if (reg->count + 1 > reg->nslot && grow(reg)) return SHALE_NOMEM;
  unsigned h = name_hash(def->name) & (unsigned)(reg->nslot - 1);
  FuncEntry **pp = &reg->slots[h];
  for (; *pp; pp = &(*pp)->next) {
    if ((*pp)->def.nargs == def->nargs && !util_stricmp((*pp)->def.name, def->name)) break;
  }
  int del = !def->scalar && !def->step;
  if (del && (!*pp || !owned)) {
    if (*pp) {
      FuncEntry *e = *pp;
      *pp = e->next;
      reg->count--;
      entry_free(e);
    }
    return SHALE_OK;
  }
  FuncEntry *e = shale_malloc(sizeof(*e));
  if (!e) return SHALE_NOMEM;
  e->def = *def;
  e->owned = owned;
  e->shadow = NULL;
  if (owned) {
    e->def.name = util_strdup(def->name);
    if (!e->def.name) {
      shale_free(e);
      return SHALE_NOMEM;
    }
  }
  if (*pp) { /* replace in place */
    FuncEntry *old = *pp;
    e->next = old->next;
    *pp = e;
    if (owned) { /* a user function keeps the built-in it overrides */
      e->shadow = old->owned ? old->shadow : old;
      if (old->owned)
        old->shadow = NULL;
      else
        old = NULL;
    }
    if (old) entry_free(old);
  } else {
    e->next = reg->slots[h];
    reg->slots[h] = e;
    reg->count++;
  }
  return SHALE_OK;
}

int func_registry_init(FuncRegistry *reg) {
  memset(reg, 0, sizeof(*reg));
  static const struct {
    const FuncDef *defs;
    const int *n;
  } tables[] = {{func_core_defs, &func_core_ndefs},     {func_text_defs, &func_text_ndefs},
                {func_math_defs, &func_math_ndefs},     {func_agg_defs, &func_agg_ndefs},
                {func_window_defs, &func_window_ndefs}, {func_printf_defs, &func_printf_ndefs},
                {func_date_defs, &func_date_ndefs},     {func_json_defs, &func_json_ndefs},
                {func_extra_defs, &func_extra_ndefs}};
  for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
    for (int i = 0; i < *tables[t].n; i++) {
      if (put(reg, &tables[t].defs[i], 0)) {
        func_registry_free(reg);
        return SHALE_NOMEM;
      }
    }
  }
  return SHALE_OK;
}

int func_register(FuncRegistry *reg, const FuncDef *def) {
  if (!def || !def->name || !def->name[0] || def->nargs < -1 || def->nargs > 127 ||
      strlen(def->name) > 255) {
    return SHALE_MISUSE;
  }
  if (def->scalar && def->step) return SHALE_MISUSE;
  if (def->step && !def->final) return SHALE_MISUSE;
  return put(reg, def, 1);
}

static const FuncEntry *lookup(const FuncRegistry *reg, const char *name, int nargs) {
  if (!reg->nslot) return NULL;
  unsigned h = name_hash(name) & (unsigned)(reg->nslot - 1);
  for (const FuncEntry *e = reg->slots[h]; e; e = e->next) {
    if (e->def.nargs == nargs && !util_stricmp(e->def.name, name)) return e;
  }
  return NULL;
}

static int is_tombstone(const FuncDef *d) { return !d->scalar && !d->step; }

const FuncDef *func_find(const FuncRegistry *reg, const char *name, int nargs) {
  const FuncEntry *e = lookup(reg, name, nargs);
  if (e) return is_tombstone(&e->def) ? NULL : &e->def; /* invariant 4 */
  e = lookup(reg, name, -1);
  if (e && nargs >= e->def.nargs_min && !is_tombstone(&e->def)) return &e->def;
  return NULL;
}

int func_registry_each(const FuncRegistry *reg, int (*fn)(void *arg, const FuncDef *def),
                       void *arg) {
  for (int h = 0; h < reg->nslot; h++)
    for (const FuncEntry *e = reg->slots[h]; e; e = e->next) {
      if (is_tombstone(&e->def)) continue;
      int rc = fn(arg, &e->def);
      if (rc) return rc;
    }
  return 0;
}

const FuncDef *func_find_exact(const FuncRegistry *reg, const char *name, int nargs) {
  const FuncEntry *e = lookup(reg, name, nargs);
  return e ? &e->def : NULL;
}

int func_is_deterministic(const FuncDef *d) {
  if (!d || !(d->flags & FUNC_DETERMINISTIC) || func_is_aggregate(d)) return 0;
  if (!(d->flags & FUNC_BUILTIN)) return 1;
  /* built-ins flagged deterministic for the code generator (same answer
   * within a statement) that SQLite does not let into the schema */
  return util_strnicmp(d->name, "current_", 8) && util_stricmp(d->name, "sqlite_version") &&
         util_stricmp(d->name, "sqlite_source_id");
}

int func_unsafe_in_schema(const FuncDef *d, int untrusted) {
  if (d->flags & FUNC_DIRECTONLY) return 1;
  return untrusted && !(d->flags & (FUNC_BUILTIN | FUNC_INNOCUOUS));
}

int func_exists_name(const FuncRegistry *reg, const char *name) {
  if (!reg->nslot) return 0;
  unsigned h = name_hash(name) & (unsigned)(reg->nslot - 1);
  for (const FuncEntry *e = reg->slots[h]; e; e = e->next) {
    if (!util_stricmp(e->def.name, name) && (!is_tombstone(&e->def) || e->shadow)) return 1;
  }
  return 0;
}

int func_set_case_sensitive_like(FuncRegistry *reg, int on) {
  for (int nargs = 2; nargs <= 3; nargs++) {
    int rc = put(reg, func_like_variant(on, nargs), 0);
    if (rc) return rc;
  }
  return SHALE_OK;
}

int func_registry_check(const FuncRegistry *reg) {
  if (reg->nslot == 0) return reg->slots == NULL && reg->count == 0 ? SHALE_OK : SHALE_INTERNAL;
  if (reg->nslot & (reg->nslot - 1)) return SHALE_INTERNAL;
  int n = 0;
  for (int i = 0; i < reg->nslot; i++) {
    for (const FuncEntry *e = reg->slots[i]; e; e = e->next) {
      n++;
      if ((int)(name_hash(e->def.name) & (unsigned)(reg->nslot - 1)) != i) return SHALE_INTERNAL;
      if (e->def.scalar && e->def.step) return SHALE_INTERNAL; /* at most one kind */
      if (!e->def.scalar && !e->def.step && !e->owned) return SHALE_INTERNAL;
      if (e->def.step && !e->def.final) return SHALE_INTERNAL;
      for (const FuncEntry *f = e->next; f; f = f->next) {
        if (f->def.nargs == e->def.nargs && !util_stricmp(f->def.name, e->def.name)) {
          return SHALE_INTERNAL; /* duplicate (name, nargs) */
        }
      }
    }
  }
  return n == reg->count ? SHALE_OK : SHALE_INTERNAL;
}
