/*
 * textenc.c -- the one boundary between the engine's UTF-8 text and the
 * text of a UTF-16 database's records (docs/architecture.md, "Text
 * encodings").
 *
 * Owns: nothing (converted values are VAL_OWNED, released by value_clear).
 *
 * Invariants:
 *  1. Registers, the compiler and the functions see UTF-8 only. TEXT in a
 *     record is in the database's encoding (RECORD_ENC_*): record_text_decode
 *     makes it UTF-8 as a column is read, record_text_encode makes a
 *     register's UTF-8 the database's encoding before it is written into a
 *     record or compared with one (a seek key).
 *  2. Both are no-ops for RECORD_ENC_UTF8 and for non-TEXT values: callers
 *     test the encoding first, so that UTF-8 databases pay one compare.
 *  3. Conversions follow util_utf16_to_utf8 / util_utf8_to_utf16 (SQLite's
 *     handling of bad input).
 */
#include <string.h>

#include "../util/util.h"
#include "record.h"

int record_text_decode(ShValue *v, int enc) {
  if (v->type != SHALE_TEXT || enc == RECORD_ENC_UTF8) return SHALE_OK;
  int n = 0;
  char *z = util_utf16_to_utf8(v->n ? v->z : "", (int)v->n, enc == RECORD_ENC_UTF16BE, &n);
  if (!z) return SHALE_NOMEM;
  int sub = v->flags & ~VAL_OWNED;
  value_clear(v);
  v->type = SHALE_TEXT;
  v->flags = (uint8_t)(VAL_OWNED | sub);
  v->n = (uint32_t)n;
  v->z = z;
  return SHALE_OK;
}

int record_text_encode(ShValue *v, int enc) {
  if (v->type != SHALE_TEXT || enc == RECORD_ENC_UTF8) return SHALE_OK;
  uint8_t *z = shale_malloc((size_t)v->n * 2 + 2);
  if (!z) return SHALE_NOMEM;
  size_t n = util_utf8_to_utf16(v->z, v->n, enc == RECORD_ENC_UTF16BE, z);
  z[n] = z[n + 1] = 0;
  int sub = v->flags & ~VAL_OWNED;
  value_clear(v);
  v->type = SHALE_TEXT;
  v->flags = (uint8_t)(VAL_OWNED | sub);
  v->n = (uint32_t)n;
  v->z = (const char *)z;
  return SHALE_OK;
}

int record_values_encode(const ShValue *in, int n, int enc, ShValue *out) {
  for (int i = 0; i < n; i++) {
    out[i] = in[i];
    out[i].flags &= (uint8_t)~VAL_OWNED; /* borrowed from in[i] */
    if (in[i].type == SHALE_TEXT && record_text_encode(&out[i], enc) != SHALE_OK) {
      record_values_clear(out, i);
      return SHALE_NOMEM;
    }
  }
  return SHALE_OK;
}

void record_values_clear(ShValue *v, int n) {
  for (int i = 0; i < n; i++) value_clear(&v[i]);
}

/* A collation other than BINARY on the text of a UTF-16 record: both sides
 * made UTF-8 first, as SQLite calls a collation registered for UTF-8 only
 * (NOCASE, RTRIM, and user ones: the API converts again for the UTF-16
 * ones). BINARY stays memcmp of the stored bytes, SQLite's order. */
typedef struct EncColl {
  Collation c;
  const Collation *inner;
  int enc;
} EncColl;

static int enc_coll_cmp(void *ctx, int n1, const void *a, int n2, const void *b) {
  const EncColl *e = ctx;
  ShValue va = {.type = SHALE_TEXT, .n = (uint32_t)n1, .z = a},
          vb = {.type = SHALE_TEXT, .n = (uint32_t)n2, .z = b};
  int c;
  if (record_text_decode(&va, e->enc) == SHALE_OK && record_text_decode(&vb, e->enc) == SHALE_OK)
    c = e->inner->cmp(e->inner->ctx, (int)va.n, va.z, (int)vb.n, vb.z);
  else /* out of memory: some total order */
    c = record_coll_binary.cmp(NULL, n1, a, n2, b);
  value_clear(&va);
  value_clear(&vb);
  return c;
}

static int needs_wrap(const Collation *c) { return c && c != &record_coll_binary; }

KeyInfo *record_keyinfo_for_enc(const KeyInfo *ki, int enc, int *rc) {
  *rc = SHALE_OK;
  if (enc == RECORD_ENC_UTF8 || !ki || !ki->coll) return NULL;
  int nwrap = 0;
  for (int i = 0; i < ki->ncol; i++) nwrap += needs_wrap(ki->coll[i]);
  if (!nwrap) return NULL;
  size_t n = (size_t)ki->ncol;
  /* self-contained (the copy outlives ki): collations, then the DESC flags */
  KeyInfo *k = shale_malloc(sizeof *k + n * (sizeof(EncColl) + sizeof(Collation *) + 1));
  if (!k) {
    *rc = SHALE_NOMEM;
    return NULL;
  }
  EncColl *w = (EncColl *)(k + 1);
  const Collation **coll = (const Collation **)(w + n);
  uint8_t *desc = (uint8_t *)(coll + n);
  *k = *ki;
  k->coll = coll;
  if (ki->desc) {
    memcpy(desc, ki->desc, n);
    k->desc = desc;
  }
  for (int i = 0; i < ki->ncol; i++) {
    coll[i] = ki->coll[i];
    if (!needs_wrap(coll[i])) continue;
    /* a copy of a copy wraps the original collation again */
    w[i].inner = coll[i]->cmp == enc_coll_cmp ? ((const EncColl *)coll[i]->ctx)->inner : coll[i];
    w[i].enc = enc;
    w[i].c.name = coll[i]->name;
    w[i].c.cmp = enc_coll_cmp;
    w[i].c.ctx = &w[i];
    coll[i] = &w[i].c;
  }
  return k;
}
