/*
 * changeset.c -- reading changesets and patchsets (sqlite3changeset_start,
 * next, op, pk, old, new, conflict, fk_conflicts, finalize) and inverting
 * them (sqlite3changeset_invert); the format is described in
 * compat/session_int.h. Rebasing is in compat/changegroup.c.
 *
 * What the iterator shows, as SQLite's does: an INSERT has only new values,
 * a DELETE only old ones; an UPDATE's undefined columns read as NULL
 * pointers. In a patchset a DELETE carries only its key, and an UPDATE's key
 * is moved to the old side (its new side holding the changed columns).
 * SQLITE_CHANGESETSTART_INVERT shows each change inverted (INSERT <-> DELETE,
 * an UPDATE's sides swapped but for the key, which stays on the old side).
 *
 * Owns: iterators and the values of their current record.
 *
 * Invariants:
 *  1. Every read is bounds-checked: a truncated or malformed changeset makes
 *     next() return SQLITE_CORRUPT (and keep returning it), never read past
 *     the end.
 *  2. it->vals holds 2*ncol values of the current record, freed when the
 *     iterator moves on; a value returned to the caller lives until then.
 *  3. Outputs are zeroed before any failure.
 */
#include <string.h>

#include "compat_int.h"
#include "session_int.h"
#include "sqlite3session.h"

static void clear_out(int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
}

/* ---------------------------------------------------------------- iterators */

int sess_iter_start(sqlite3_changeset_iter **pp, int n, const void *a, int invert) {
  if (!pp) return SQLITE_MISUSE;
  *pp = NULL;
  if (n < 0 || (n > 0 && !a)) return SQLITE_MISUSE;
  sqlite3_changeset_iter *it = sqlite3_malloc64(sizeof *it);
  if (!it) return SQLITE_NOMEM;
  memset(it, 0, sizeof *it);
  it->a = a;
  it->n = n;
  it->invert = invert;
  it->nfk = -1;
  *pp = it;
  return SQLITE_OK;
}

int sess_read_stream(int (*in)(void *, void *, int *), void *arg, int *pn, void **pp) {
  SessBuf b = {0};
  *pn = 0;
  *pp = NULL;
  for (;;) {
    unsigned char chunk[1024];
    int k = (int)sizeof chunk;
    int rc = in(arg, chunk, &k);
    if (rc) {
      sqlite3_free(b.a);
      return rc;
    }
    if (k <= 0) break;
    sess_buf_bytes(&b, chunk, k);
  }
  if (b.rc || b.n > 0x7fffffff) {
    sqlite3_free(b.a);
    return b.rc ? b.rc : SQLITE_TOOBIG;
  }
  *pn = (int)b.n;
  *pp = b.a;
  return SQLITE_OK;
}

int sqlite3changeset_start(sqlite3_changeset_iter **pp, int n, void *data) {
  return sess_iter_start(pp, n, data, 0);
}

int sqlite3changeset_start_v2(sqlite3_changeset_iter **pp, int n, void *data, int flags) {
  return sess_iter_start(pp, n, data, (flags & SQLITE_CHANGESETSTART_INVERT) != 0);
}

static int start_strm(sqlite3_changeset_iter **pp, int (*in)(void *, void *, int *), void *arg,
                      int invert) {
  if (pp) *pp = NULL;
  int n;
  void *data;
  int rc = sess_read_stream(in, arg, &n, &data);
  if (rc == SQLITE_OK) rc = sess_iter_start(pp, n, data, invert);
  if (rc == SQLITE_OK)
    (*pp)->owned = data;
  else
    sqlite3_free(data);
  return rc;
}

int sqlite3changeset_start_strm(sqlite3_changeset_iter **pp, int (*in)(void *, void *, int *),
                                void *arg) {
  return start_strm(pp, in, arg, 0);
}

int sqlite3changeset_start_v2_strm(sqlite3_changeset_iter **pp, int (*in)(void *, void *, int *),
                                   void *arg, int flags) {
  return start_strm(pp, in, arg, (flags & SQLITE_CHANGESETSTART_INVERT) != 0);
}

static void free_vals(sqlite3_changeset_iter *it) {
  for (int i = 0; i < it->nvals; i++) {
    sqlite3_value_free(it->vals[i]);
    it->vals[i] = NULL;
  }
}

/* One encoded value at it->off as a standalone value (NULL for undefined);
 * advances it->off. */
static int read_value(sqlite3_changeset_iter *it, sqlite3_value **out) {
  const unsigned char *p = it->a + it->off;
  sqlite3_int64 len = sess_value_len(p, it->n - it->off);
  *out = NULL;
  if (len < 0 || p[0] == SESS_REPLACED) return SQLITE_CORRUPT;
  it->off += len;
  shale_value *v = NULL;
  switch (p[0]) {
    case 0:
      return SQLITE_OK;
    case SQLITE_NULL:
      v = shale_value_make(SHALE_NULL, 0, 0, NULL, 0);
      break;
    case SQLITE_INTEGER:
      v = shale_value_make(SHALE_INTEGER, sess_get_i64(p + 1), 0, NULL, 0);
      break;
    case SQLITE_FLOAT: {
      sqlite3_int64 bits = sess_get_i64(p + 1);
      double d;
      memcpy(&d, &bits, 8);
      v = shale_value_make(SHALE_FLOAT, 0, d, NULL, 0);
      break;
    }
    default: {
      sqlite3_uint64 m;
      int k = sess_get_varint(p + 1, len - 1, &m);
      v = shale_value_make(p[0] == SQLITE_TEXT ? SHALE_TEXT : SHALE_BLOB, 0, 0, p + 1 + k, (int)m);
    }
  }
  if (!v) return SQLITE_NOMEM;
  *out = (sqlite3_value *)v;
  return SQLITE_OK;
}

/* A record of ncol values into vals (only the key columns when pk_only). */
static int read_record(sqlite3_changeset_iter *it, sqlite3_value **vals, int pk_only) {
  for (int i = 0; i < it->ncol; i++) {
    if (pk_only && !it->pk[i]) continue;
    int rc = read_value(it, &vals[i]);
    if (rc) return rc;
  }
  return SQLITE_OK;
}

static int read_header(sqlite3_changeset_iter *it) {
  it->patch = it->a[it->off] == 'P';
  it->off++;
  sqlite3_uint64 ncol;
  int k = sess_get_varint(it->a + it->off, it->n - it->off, &ncol);
  if (!k || ncol == 0 || ncol > 65536 || (sqlite3_int64)ncol > it->n - it->off - k)
    return SQLITE_CORRUPT;
  it->off += k;
  it->pk = it->a + it->off;
  it->off += (sqlite3_int64)ncol;
  const unsigned char *z = it->a + it->off;
  const unsigned char *nul = memchr(z, 0, (size_t)(it->n - it->off));
  if (!nul) return SQLITE_CORRUPT;
  it->tab = (const char *)z;
  it->off += nul - z + 1;
  if ((int)ncol * 2 > it->nvals) {
    free_vals(it);
    sqlite3_value **v = sqlite3_realloc64(it->vals, sizeof *v * 2 * ncol);
    if (!v) return SQLITE_NOMEM;
    memset(v, 0, sizeof *v * 2 * ncol);
    it->vals = v;
    it->nvals = (int)ncol * 2;
  }
  it->ncol = (int)ncol;
  return SQLITE_OK;
}

static int next_record(sqlite3_changeset_iter *it) {
  free_vals(it);
  if (it->off >= it->n) return SQLITE_DONE;
  if (it->a[it->off] == 'T' || it->a[it->off] == 'P') {
    int rc = read_header(it);
    if (rc) return rc;
    if (it->off >= it->n) return SQLITE_DONE;
  }
  if (!it->ncol || it->n - it->off < 2) return SQLITE_CORRUPT;
  it->cur = it->off;
  int op = it->a[it->off], indirect = it->a[it->off + 1];
  it->off += 2;
  if (op != SQLITE_INSERT && op != SQLITE_UPDATE && op != SQLITE_DELETE) return SQLITE_CORRUPT;
  sqlite3_value **oldv = it->vals, **newv = it->vals + it->ncol;
  int rc;
  if (op == SQLITE_INSERT) {
    rc = read_record(it, newv, 0);
  } else if (op == SQLITE_DELETE) {
    rc = read_record(it, oldv, it->patch);
  } else if (!it->patch) {
    rc = read_record(it, oldv, 0);
    if (!rc) rc = read_record(it, newv, 0);
  } else {
    rc = read_record(it, newv, 0);
    for (int i = 0; !rc && i < it->ncol; i++) {
      if (!it->pk[i]) continue;
      oldv[i] = newv[i];
      newv[i] = NULL;
    }
  }
  if (rc) return rc;
  if (it->invert) {
    if (op == SQLITE_UPDATE) { /* as sqlite3changeset_invert writes it */
      for (int i = 0; i < it->ncol; i++) {
        if (it->pk[i]) {
          sqlite3_value_free(newv[i]);
          newv[i] = NULL;
        } else {
          sqlite3_value *t = oldv[i];
          oldv[i] = newv[i];
          newv[i] = t;
        }
      }
    } else {
      op = op == SQLITE_INSERT ? SQLITE_DELETE : SQLITE_INSERT;
      for (int i = 0; i < it->ncol; i++) {
        sqlite3_value *t = oldv[i];
        oldv[i] = newv[i];
        newv[i] = t;
      }
    }
  }
  it->op = op;
  it->indirect = indirect;
  return SQLITE_ROW;
}

int sqlite3changeset_next(sqlite3_changeset_iter *it) {
  if (!it) return SQLITE_MISUSE;
  if (it->rc) return it->rc;
  int rc = next_record(it);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) it->rc = rc;
  return rc;
}

int sqlite3changeset_op(sqlite3_changeset_iter *it, const char **ptab, int *pncol, int *pop,
                        int *pindirect) {
  if (ptab) *ptab = it->tab;
  if (pncol) *pncol = it->ncol;
  if (pop) *pop = it->op;
  if (pindirect) *pindirect = it->indirect;
  return SQLITE_OK;
}

int sqlite3changeset_pk(sqlite3_changeset_iter *it, unsigned char **ppk, int *pncol) {
  if (ppk) *ppk = (unsigned char *)it->pk;
  if (pncol) *pncol = it->ncol;
  return SQLITE_OK;
}

int sqlite3changeset_old(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  if (it->op != SQLITE_UPDATE && it->op != SQLITE_DELETE) return SQLITE_MISUSE;
  if (i < 0 || i >= it->ncol) return SQLITE_RANGE;
  *pv = it->vals[i];
  return SQLITE_OK;
}

int sqlite3changeset_new(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  if (it->op != SQLITE_UPDATE && it->op != SQLITE_INSERT) return SQLITE_MISUSE;
  if (i < 0 || i >= it->ncol) return SQLITE_RANGE;
  *pv = it->vals[it->ncol + i];
  return SQLITE_OK;
}

int sqlite3changeset_conflict(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  if (!it->conflict) return SQLITE_MISUSE;
  if (i < 0 || i >= it->ncol) return SQLITE_RANGE;
  *pv = sqlite3_column_value(it->conflict, i);
  return SQLITE_OK;
}

int sqlite3changeset_fk_conflicts(sqlite3_changeset_iter *it, int *pn) {
  if (it->nfk < 0) return SQLITE_MISUSE;
  *pn = it->nfk;
  return SQLITE_OK;
}

int sqlite3changeset_finalize(sqlite3_changeset_iter *it) {
  if (!it) return SQLITE_OK;
  int rc = it->rc;
  free_vals(it);
  sqlite3_free(it->vals);
  sqlite3_free(it->owned);
  sqlite3_free(it);
  return rc;
}

/* ---------------------------------------------------------------- invert */

/* The encoded values of one record at p: their offsets into starts[0..ncol]. */
static int record_spans(const unsigned char *p, sqlite3_int64 n, int ncol, sqlite3_int64 *starts) {
  sqlite3_int64 at = 0;
  for (int i = 0; i < ncol; i++) {
    starts[i] = at;
    sqlite3_int64 len = sess_value_len(p + at, n - at);
    if (len < 0 || p[at] == SESS_REPLACED) return SQLITE_CORRUPT;
    at += len;
  }
  starts[ncol] = at;
  return SQLITE_OK;
}

/* Inverts a changeset into b: INSERT <-> DELETE; an UPDATE's new old record
 * is the old key plus the new values, its new record the old values with
 * the key undefined. Patchsets cannot be inverted (SQLITE_CORRUPT). */
static int invert_into(SessBuf *b, const unsigned char *a, sqlite3_int64 n) {
  sqlite3_int64 off = 0, *sp = NULL;
  int ncol = 0;
  const unsigned char *pk = NULL;
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK && off < n) {
    int c = a[off];
    if (c == 'T' || c == 'P') {
      if (c == 'P') {
        rc = SQLITE_CORRUPT;
        break;
      }
      sqlite3_uint64 nc;
      int k = sess_get_varint(a + off + 1, n - off - 1, &nc);
      if (!k || nc == 0 || nc > 65536 || (sqlite3_int64)nc > n - off - 1 - k) {
        rc = SQLITE_CORRUPT;
        break;
      }
      const unsigned char *z = a + off + 1 + k + nc;
      const unsigned char *nul = memchr(z, 0, (size_t)(n - (z - a)));
      if (!nul) {
        rc = SQLITE_CORRUPT;
        break;
      }
      pk = a + off + 1 + k;
      ncol = (int)nc;
      sqlite3_int64 end = nul - a + 1;
      sess_buf_bytes(b, a + off, end - off);
      off = end;
      sqlite3_free(sp);
      sp = sqlite3_malloc64(sizeof *sp * 2 * (ncol + 1));
      if (!sp) rc = SQLITE_NOMEM;
      continue;
    }
    if (!ncol || n - off < 2) {
      rc = SQLITE_CORRUPT;
      break;
    }
    int indirect = a[off + 1];
    off += 2;
    const unsigned char *r1 = a + off;
    if ((rc = record_spans(r1, n - off, ncol, sp)) != SQLITE_OK) break;
    off += sp[ncol];
    if (c == SQLITE_INSERT || c == SQLITE_DELETE) {
      sess_buf_byte(b, c == SQLITE_INSERT ? SQLITE_DELETE : SQLITE_INSERT);
      sess_buf_byte(b, indirect);
      sess_buf_bytes(b, r1, sp[ncol]);
    } else if (c == SQLITE_UPDATE) {
      const unsigned char *r2 = a + off;
      sqlite3_int64 *sp2 = sp + ncol + 1;
      if ((rc = record_spans(r2, n - off, ncol, sp2)) != SQLITE_OK) break;
      off += sp2[ncol];
      sess_buf_byte(b, SQLITE_UPDATE);
      sess_buf_byte(b, indirect);
      for (int i = 0; i < ncol; i++) {
        if (pk[i])
          sess_buf_bytes(b, r1 + sp[i], sp[i + 1] - sp[i]);
        else
          sess_buf_bytes(b, r2 + sp2[i], sp2[i + 1] - sp2[i]);
      }
      for (int i = 0; i < ncol; i++) {
        if (pk[i])
          sess_buf_byte(b, 0);
        else
          sess_buf_bytes(b, r1 + sp[i], sp[i + 1] - sp[i]);
      }
    } else {
      rc = SQLITE_CORRUPT;
    }
  }
  sqlite3_free(sp);
  if (!rc) rc = b->rc;
  return rc;
}

int sqlite3changeset_invert(int n, const void *in, int *pn, void **pp) {
  clear_out(pn, pp);
  if (!pn || !pp || n < 0 || (n > 0 && !in)) return SQLITE_MISUSE;
  SessBuf b = {0};
  int rc = invert_into(&b, in, n);
  if (rc || b.n > 0x7fffffff) {
    sqlite3_free(b.a);
    return rc ? rc : SQLITE_TOOBIG;
  }
  *pn = (int)b.n;
  *pp = b.a;
  return SQLITE_OK;
}

int sqlite3changeset_invert_strm(int (*in)(void *, void *, int *), void *arg,
                                 int (*out)(void *, const void *, int), void *oarg) {
  int n, m;
  void *data, *inv;
  int rc = sess_read_stream(in, arg, &n, &data);
  if (rc) return rc;
  rc = sqlite3changeset_invert(n, data, &m, &inv);
  sqlite3_free(data);
  if (rc == SQLITE_OK && m > 0) rc = out(oarg, inv, m);
  sqlite3_free(inv);
  return rc;
}
