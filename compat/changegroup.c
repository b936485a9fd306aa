/*
 * changegroup.c -- combining changesets: sqlite3changegroup_new, add
 * (+ _strm), output (+ _strm), delete, and sqlite3changeset_concat
 * (+ _strm), which is a changegroup of two; rebasers (sqlite3rebaser_*),
 * which hold rebase buffers in a changegroup merged the rebase way.
 *
 * A changegroup keeps, per table (in the order first seen), one change per
 * primary key in a hash table like a session's (SQLite's hash and growth,
 * so the output order is SQLite's). A change for a key already held merges
 * with it as SQLite 3.40.1 merges:
 *   INSERT+UPDATE = INSERT with the new values; INSERT+DELETE = nothing;
 *   UPDATE+UPDATE = one UPDATE (nothing if no column ends changed);
 *   UPDATE+DELETE = DELETE of the original values; DELETE+INSERT = UPDATE
 *   (nothing if equal); INSERT+INSERT, UPDATE+INSERT, DELETE+UPDATE and
 *   DELETE+DELETE keep the first and drop the second.
 * The merged change is indirect only if both were.
 *
 * Owns: sqlite3_changegroup and sqlite3_rebaser objects, their tables and
 * changes.
 *
 * Invariants:
 *  1. All input of one changegroup is changesets or all patchsets (else
 *     SQLITE_ERROR); a table's column count and key must not change (else
 *     SQLITE_SCHEMA).
 *  2. A change's record is what a changeset holds after the opcode and
 *     indirect bytes (a patchset DELETE: the key only). Records come from the
 *     iterator, which has bounds-checked them, or from merges of such
 *     records, so the merge code walks them without further length checks.
 */
#include <string.h>

#include "compat_int.h"
#include "session_int.h"
#include "sqlite3session.h"

struct sqlite3_changegroup {
  SessTable *tabs;
  int patch; /* invariant 1, set by the first change */
};

int sqlite3changegroup_new(sqlite3_changegroup **pp) {
  if (!pp) return SQLITE_MISUSE;
  *pp = sqlite3_malloc64(sizeof **pp);
  if (!*pp) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof **pp);
  return SQLITE_OK;
}

void sqlite3changegroup_delete(sqlite3_changegroup *g) {
  if (!g) return;
  SessTable *next;
  for (SessTable *t = g->tabs; t; t = next) {
    next = t->next;
    sess_table_free(t);
  }
  sqlite3_free(g);
}

/* Length of a record of ncol values (only key columns when pk_only). */
static sqlite3_int64 record_len(const SessTable *t, const unsigned char *a, sqlite3_int64 n,
                                int pk_only) {
  sqlite3_int64 at = 0;
  for (int i = 0; i < t->ncol; i++) {
    if (pk_only && !t->pk[i]) continue;
    sqlite3_int64 len = sess_value_len(a + at, n - at);
    if (len < 0) return -1;
    at += len;
  }
  return at;
}

/* Same key in both records (compared as encoded bytes)? */
static int same_key(const SessTable *t, const unsigned char *a, int a_pk_only,
                    const unsigned char *b, int b_pk_only) {
  for (int i = 0; i < t->ncol; i++) {
    if (!t->pk[i]) {
      if (!a_pk_only) a += sess_value_len(a, 1 << 30);
      if (!b_pk_only) b += sess_value_len(b, 1 << 30);
      continue;
    }
    sqlite3_int64 la = sess_value_len(a, 1 << 30), lb = sess_value_len(b, 1 << 30);
    if (la != lb || memcmp(a, b, (size_t)la)) return 0;
    a += la;
    b += lb;
  }
  return 1;
}

/* The value at *pa (advanced past it). */
static const unsigned char *take(const unsigned char **pa, sqlite3_int64 *plen) {
  const unsigned char *v = *pa;
  *plen = sess_value_len(v, 1 << 30);
  *pa += *plen;
  return v;
}

/* Per column: b's value where defined, else a's. */
static void merge_record(SessBuf *out, int ncol, const unsigned char *a, const unsigned char *b) {
  for (int i = 0; i < ncol; i++) {
    sqlite3_int64 la, lb;
    const unsigned char *va = take(&a, &la), *vb = take(&b, &lb);
    if (vb[0])
      sess_buf_bytes(out, vb, lb);
    else
      sess_buf_bytes(out, va, la);
  }
}

/* Value from two records: the second's where it exists and is defined. */
static const unsigned char *pick(const unsigned char **p1, const unsigned char **p2,
                                 sqlite3_int64 *plen) {
  const unsigned char *ret = NULL;
  if (*p2) {
    sqlite3_int64 l2;
    const unsigned char *v2 = take(p2, &l2);
    if (v2[0]) {
      ret = v2;
      *plen = l2;
    }
  }
  sqlite3_int64 l1;
  const unsigned char *v1 = take(p1, &l1);
  if (!ret) {
    ret = v1;
    *plen = l1;
  }
  return ret;
}

/* An UPDATE from two old and two new records (pick(): the second's value
 * where present and defined); 0 when no non-key column ends changed
 * (changesets only). */
static int merge_update(SessBuf *out, const SessTable *t, int patch, const unsigned char *o1,
                        const unsigned char *o2, const unsigned char *n1, const unsigned char *n2) {
  if (!patch) {
    const unsigned char *a1 = o1, *a2 = o2, *b1 = n1, *b2 = n2;
    int needed = 0;
    for (int i = 0; i < t->ncol; i++) {
      sqlite3_int64 lo, ln;
      const unsigned char *vo = pick(&a1, &a2, &lo), *vn = pick(&b1, &b2, &ln);
      if (t->pk[i] || lo != ln || memcmp(vo, vn, (size_t)ln)) {
        if (!t->pk[i]) needed = 1;
        sess_buf_bytes(out, vo, lo);
      } else {
        sess_buf_byte(out, 0);
      }
    }
    if (!needed) return 0;
  }
  const unsigned char *a1 = o1, *a2 = o2, *b1 = n1, *b2 = n2;
  for (int i = 0; i < t->ncol; i++) {
    sqlite3_int64 lo, ln;
    const unsigned char *vo = pick(&a1, &a2, &lo), *vn = pick(&b1, &b2, &ln);
    if (!patch && (t->pk[i] || (lo == ln && !memcmp(vo, vn, (size_t)ln))))
      sess_buf_byte(out, 0);
    else
      sess_buf_bytes(out, vn, ln);
  }
  return 1;
}

static SessChange *new_change(int op, int indirect, const unsigned char *rec, sqlite3_int64 n) {
  SessChange *c = sqlite3_malloc64(sizeof *c);
  unsigned char *r = sqlite3_malloc64(n ? (sqlite3_uint64)n : 1);
  if (!c || !r) {
    sqlite3_free(c);
    sqlite3_free(r);
    return NULL;
  }
  memcpy(r, rec, (size_t)n);
  c->next = NULL;
  c->max_size = 0;
  c->op = op;
  c->indirect = indirect;
  c->rec = r;
  c->nrec = (int)n;
  return c;
}

/* Merges change (op2, rec) into ex (taken out of the hash; NULL if none).
 * *out: the change to put back, or NULL for none. */
static int merge(const SessTable *t, int patch, SessChange *ex, int op2, int indirect,
                 const unsigned char *rec, sqlite3_int64 nrec, SessChange **out) {
  *out = NULL;
  if (!ex) {
    *out = new_change(op2, indirect, rec, nrec);
    return *out ? SQLITE_OK : SQLITE_NOMEM;
  }
  int op1 = ex->op;
  if ((op1 == SQLITE_INSERT && op2 == SQLITE_INSERT) ||
      (op1 == SQLITE_UPDATE && op2 == SQLITE_INSERT) ||
      (op1 == SQLITE_DELETE && op2 == SQLITE_UPDATE) ||
      (op1 == SQLITE_DELETE && op2 == SQLITE_DELETE)) {
    *out = ex;
    return SQLITE_OK;
  }
  SessBuf b = {0};
  int op = 0, keep = 1;
  const unsigned char *old1 = ex->rec;
  if (op1 == SQLITE_INSERT && op2 == SQLITE_DELETE) {
    keep = 0;
  } else if (op1 == SQLITE_INSERT) { /* + UPDATE */
    const unsigned char *a = rec;
    if (!patch) a += record_len(t, rec, nrec, 0);
    op = SQLITE_INSERT;
    merge_record(&b, t->ncol, old1, a);
  } else if (op1 == SQLITE_DELETE) { /* + INSERT */
    op = SQLITE_UPDATE;
    if (patch)
      sess_buf_bytes(&b, rec, nrec);
    else
      keep = merge_update(&b, t, 0, old1, NULL, rec, NULL);
  } else if (op2 == SQLITE_UPDATE) { /* UPDATE + UPDATE */
    const unsigned char *a1 = old1, *a2 = rec;
    if (!patch) {
      a1 += record_len(t, old1, ex->nrec, 0);
      a2 += record_len(t, rec, nrec, 0);
    }
    op = SQLITE_UPDATE;
    keep = merge_update(&b, t, patch, rec, old1, a1, a2);
  } else { /* UPDATE + DELETE */
    op = SQLITE_DELETE;
    if (patch)
      sess_buf_bytes(&b, rec, nrec);
    else
      merge_record(&b, t->ncol, rec, old1);
  }
  int ind = indirect && ex->indirect;
  sqlite3_free(ex->rec);
  sqlite3_free(ex);
  if (b.rc) {
    sqlite3_free(b.a);
    return b.rc;
  }
  if (keep) {
    *out = new_change(op, ind, b.a ? b.a : (const unsigned char *)"", b.n);
    sqlite3_free(b.a);
    return *out ? SQLITE_OK : SQLITE_NOMEM;
  }
  sqlite3_free(b.a);
  return SQLITE_OK;
}

static SessTable *group_table(sqlite3_changegroup *g, const sqlite3_changeset_iter *it, int *rc) {
  for (SessTable *t = g->tabs; t; t = t->next) {
    if (sqlite3_stricmp(t->name, it->tab)) continue;
    if (t->ncol != it->ncol || memcmp(t->pk, it->pk, (size_t)it->ncol)) {
      *rc = SQLITE_SCHEMA;
      return NULL;
    }
    return t;
  }
  SessTable *t = sqlite3_malloc64(sizeof *t);
  if (t) {
    memset(t, 0, sizeof *t);
    t->name = sqlite3_mprintf("%s", it->tab);
    t->pk = sqlite3_malloc64((sqlite3_uint64)it->ncol);
  }
  if (!t || !t->name || !t->pk) {
    if (t) sess_table_free(t);
    *rc = SQLITE_NOMEM;
    return NULL;
  }
  memcpy(t->pk, it->pk, (size_t)it->ncol);
  t->ncol = it->ncol;
  SessTable **pp = &g->tabs;
  while (*pp) pp = &(*pp)->next;
  *pp = t;
  return t;
}

static int rebase_merge(const SessTable *t, SessChange *ex, int op2, int indirect,
                        const unsigned char *rec, sqlite3_int64 nrec, SessChange **out);

/* Adds the changes of a changeset to g, merged the changegroup way or (for a
 * rebaser) the rebase way. */
static int add_changes(sqlite3_changegroup *g, int n, const void *data, int rebase) {
  sqlite3_changeset_iter *it = NULL;
  int rc = sess_iter_start(&it, n, data, 0);
  if (rc) return rc;
  SessTable *t = NULL;
  while (rc == SQLITE_OK && sqlite3changeset_next(it) == SQLITE_ROW) {
    if (!g->tabs)
      g->patch = it->patch;
    else if (it->patch != g->patch) {
      rc = SQLITE_ERROR;
      break;
    }
    if (!t || sqlite3_stricmp(t->name, it->tab)) {
      t = group_table(g, it, &rc);
      if (!t) break;
    }
    if ((rc = sess_table_grow(t, it->patch, NULL)) != SQLITE_OK) break;
    const unsigned char *rec = it->a + it->cur + 2;
    sqlite3_int64 nrec = it->off - it->cur - 2;
    int op = it->a[it->cur], indirect = it->a[it->cur + 1];
    int pk_only = it->patch && op == SQLITE_DELETE;
    unsigned k = sess_hash_record(t, rec, nrec, pk_only) % (unsigned)t->nbucket;
    SessChange *ex = NULL;
    for (SessChange **pp = &t->hash[k]; *pp; pp = &(*pp)->next) {
      int ex_pk_only = it->patch && (*pp)->op == SQLITE_DELETE;
      if (same_key(t, (*pp)->rec, ex_pk_only, rec, pk_only)) {
        ex = *pp;
        *pp = ex->next;
        t->nentry--;
        break;
      }
    }
    SessChange *c;
    if (rebase)
      rc = rebase_merge(t, ex, op, indirect, rec, nrec, &c);
    else
      rc = merge(t, it->patch, ex, op, indirect, rec, nrec, &c);
    if (!rc && c) {
      c->next = t->hash[k];
      t->hash[k] = c;
      t->nentry++;
    }
  }
  int rc2 = sqlite3changeset_finalize(it);
  return rc ? rc : rc2;
}

int sqlite3changegroup_add(sqlite3_changegroup *g, int n, void *data) {
  return g ? add_changes(g, n, data, 0) : SQLITE_MISUSE;
}

int sqlite3changegroup_output(sqlite3_changegroup *g, int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
  if (!g || !pn || !pp) return SQLITE_MISUSE;
  SessBuf b = {0};
  for (SessTable *t = g->tabs; t; t = t->next) {
    if (!t->nentry) continue;
    sess_buf_byte(&b, g->patch ? 'P' : 'T');
    sess_buf_varint(&b, (sqlite3_uint64)t->ncol);
    sess_buf_bytes(&b, t->pk, t->ncol);
    sess_buf_bytes(&b, t->name, (sqlite3_int64)strlen(t->name) + 1);
    for (int i = 0; i < t->nbucket; i++) {
      for (SessChange *c = t->hash[i]; c; c = c->next) {
        sess_buf_byte(&b, c->op);
        sess_buf_byte(&b, c->indirect);
        sess_buf_bytes(&b, c->rec, c->nrec);
      }
    }
  }
  if (b.rc || b.n > 0x7fffffff) {
    sqlite3_free(b.a);
    return b.rc ? b.rc : SQLITE_TOOBIG;
  }
  *pn = (int)b.n;
  *pp = b.a;
  return SQLITE_OK;
}

int sqlite3changegroup_add_strm(sqlite3_changegroup *g, int (*in)(void *, void *, int *),
                                void *arg) {
  int n;
  void *data;
  int rc = sess_read_stream(in, arg, &n, &data);
  if (rc) return rc;
  rc = sqlite3changegroup_add(g, n, data);
  sqlite3_free(data);
  return rc;
}

int sqlite3changegroup_output_strm(sqlite3_changegroup *g, int (*out)(void *, const void *, int),
                                   void *arg) {
  int n;
  void *data;
  int rc = sqlite3changegroup_output(g, &n, &data);
  if (rc == SQLITE_OK && n > 0) rc = out(arg, data, n);
  sqlite3_free(data);
  return rc;
}

int sqlite3changeset_concat(int na, void *a, int nb, void *b, int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
  sqlite3_changegroup *g = NULL;
  int rc = sqlite3changegroup_new(&g);
  if (!rc) rc = sqlite3changegroup_add(g, na, a);
  if (!rc) rc = sqlite3changegroup_add(g, nb, b);
  if (!rc) rc = sqlite3changegroup_output(g, pn, pp);
  sqlite3changegroup_delete(g);
  return rc;
}

int sqlite3changeset_concat_strm(int (*ina)(void *, void *, int *), void *a,
                                 int (*inb)(void *, void *, int *), void *b,
                                 int (*out)(void *, const void *, int), void *oarg) {
  sqlite3_changegroup *g = NULL;
  int rc = sqlite3changegroup_new(&g);
  if (!rc) rc = sqlite3changegroup_add_strm(g, ina, a);
  if (!rc) rc = sqlite3changegroup_add_strm(g, inb, b);
  if (!rc) rc = sqlite3changegroup_output_strm(g, out, oarg);
  sqlite3changegroup_delete(g);
  return rc;
}

/* ---------------------------------------------------------------- rebasers */

/* A rebaser holds the rebase buffers configured into it as a changegroup of
 * INSERT and DELETE changes per key, merged the rebase way (rebase_merge);
 * sqlite3rebaser_rebase then rewrites each change of a changeset that meets
 * one of them (rebase_one), as SQLite 3.40.1 does. A change's record marks a
 * column SESS_REPLACED when a remote change replaced it. */
struct sqlite3_rebaser {
  sqlite3_changegroup grp;
};

int sqlite3rebaser_create(sqlite3_rebaser **pp) {
  if (!pp) return SQLITE_MISUSE;
  *pp = sqlite3_malloc64(sizeof **pp);
  if (!*pp) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof **pp);
  return SQLITE_OK;
}

void sqlite3rebaser_delete(sqlite3_rebaser *r) {
  if (!r) return;
  SessTable *next;
  for (SessTable *t = r->grp.tabs; t; t = next) {
    next = t->next;
    sess_table_free(t);
  }
  sqlite3_free(r);
}

/* A first indirect change keeps only its key and which columns are defined
 * (SESS_REPLACED: replaced); a later one for the same key merges column by column. */
static int rebase_merge(const SessTable *t, SessChange *ex, int op2, int indirect,
                        const unsigned char *rec, sqlite3_int64 nrec, SessChange **out) {
  SessBuf b = {0};
  const unsigned char *a2 = rec;
  if (!ex) {
    if (!indirect) return merge(t, 0, NULL, op2, indirect, rec, nrec, out);
    for (int i = 0; i < t->ncol; i++) {
      sqlite3_int64 l;
      const unsigned char *v = take(&a2, &l);
      if (!v[0])
        sess_buf_byte(&b, 0);
      else if (!t->pk[i])
        sess_buf_byte(&b, SESS_REPLACED);
      else
        sess_buf_bytes(&b, v, l);
    }
  } else if (ex->op == SQLITE_DELETE && ex->indirect) {
    *out = ex;
    return SQLITE_OK;
  } else {
    const unsigned char *a1 = ex->rec;
    for (int i = 0; i < t->ncol; i++) {
      sqlite3_int64 l1, l2;
      const unsigned char *v1 = take(&a1, &l1), *v2 = take(&a2, &l2);
      if (v1[0] == SESS_REPLACED || (!t->pk[i] && indirect))
        sess_buf_byte(&b, SESS_REPLACED);
      else if (!v2[0])
        sess_buf_bytes(&b, v1, l1);
      else
        sess_buf_bytes(&b, v2, l2);
    }
    indirect = indirect || ex->indirect;
    sqlite3_free(ex->rec);
    sqlite3_free(ex);
  }
  *out = b.rc ? NULL : new_change(op2, indirect, b.a ? b.a : (const unsigned char *)"", b.n);
  sqlite3_free(b.a);
  return *out ? SQLITE_OK : b.rc ? b.rc : SQLITE_NOMEM;
}

int sqlite3rebaser_configure(sqlite3_rebaser *r, int n, const void *data) {
  return r ? add_changes(&r->grp, n, data, 1) : SQLITE_MISUSE;
}

/* Per column: a's value unless undefined or replaced, else b's. */
static void merge_defined(SessBuf *out, int ncol, const unsigned char *a, const unsigned char *b) {
  for (int i = 0; i < ncol; i++) {
    sqlite3_int64 la, lb;
    const unsigned char *va = take(&a, &la), *vb = take(&b, &lb);
    if (va[0] == 0 || va[0] == SESS_REPLACED)
      sess_buf_bytes(out, vb, lb);
    else
      sess_buf_bytes(out, va, la);
  }
}

/* A local UPDATE (old and new records at rec) against a remote change c:
 * columns the remote replaced are no longer updated; other updated columns
 * take the remote's value as their old value. Nothing when no column is
 * left updated. */
static void rebase_update(SessBuf *out, const sqlite3_changeset_iter *it, const unsigned char *rec,
                          const SessChange *c) {
  SessBuf b = {0};
  const unsigned char *a1 = rec, *a2 = c->rec;
  int data = 0;
  sess_buf_byte(&b, SQLITE_UPDATE);
  sess_buf_byte(&b, it->indirect);
  for (int i = 0; i < it->ncol; i++) {
    sqlite3_int64 l1, l2;
    const unsigned char *v1 = take(&a1, &l1), *v2 = take(&a2, &l2);
    if (it->pk[i] || !v2[0]) {
      if (!it->pk[i] && v1[0]) data = 1;
      sess_buf_bytes(&b, v1, l1);
    } else if (v2[0] != SESS_REPLACED && v1[0]) {
      data = 1;
      sess_buf_bytes(&b, v2, l2);
    } else {
      sess_buf_byte(&b, 0);
    }
  }
  a2 = c->rec;
  for (int i = 0; i < it->ncol; i++) {
    sqlite3_int64 l1, l2;
    const unsigned char *v1 = take(&a1, &l1), *v2 = take(&a2, &l2);
    if (it->pk[i] || v2[0] != SESS_REPLACED)
      sess_buf_bytes(&b, v1, l1);
    else
      sess_buf_byte(&b, 0);
  }
  if (b.rc) out->rc = b.rc;
  if (data) sess_buf_bytes(out, b.a, b.n);
  sqlite3_free(b.a);
}

/* The current change of it rewritten against c (may be NULL): 1 if handled
 * (written, or dropped), 0 to copy it unchanged. */
static int rebase_one(SessBuf *out, const SessTable *t, const sqlite3_changeset_iter *it,
                      const unsigned char *rec, sqlite3_int64 nrec, const SessChange *c) {
  if (!c) return 0;
  int op = it->a[it->cur];
  if (op == SQLITE_INSERT) {
    if (c->op != SQLITE_INSERT) return 0;
    if (!c->indirect) {
      sess_buf_byte(out, SQLITE_UPDATE);
      sess_buf_byte(out, it->indirect);
      sess_buf_bytes(out, c->rec, c->nrec);
      sess_buf_bytes(out, rec, nrec);
    }
  } else if (op == SQLITE_UPDATE) {
    if (c->op == SQLITE_DELETE) {
      if (!c->indirect) { /* the local new row, completed by the remote's */
        sqlite3_int64 old = record_len(t, rec, nrec, 0);
        sess_buf_byte(out, SQLITE_INSERT);
        sess_buf_byte(out, it->indirect);
        merge_defined(out, it->ncol, rec + old, c->rec);
      }
    } else {
      rebase_update(out, it, rec, c);
    }
  } else if (c->op == SQLITE_INSERT) {
    sess_buf_byte(out, SQLITE_DELETE);
    sess_buf_byte(out, it->indirect);
    merge_defined(out, it->ncol, c->rec, rec);
  }
  return 1;
}

static SessTable *rebase_table(sqlite3_rebaser *r, const char *name) {
  for (SessTable *t = r->grp.tabs; t; t = t->next)
    if (!sqlite3_stricmp(t->name, name)) return t;
  return NULL;
}

int sqlite3rebaser_rebase(sqlite3_rebaser *r, int n, const void *in, int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
  if (!r || !pn || !pp) return SQLITE_MISUSE;
  sqlite3_changeset_iter *it = NULL;
  int rc = sess_iter_start(&it, n, in, 0);
  if (rc) return rc;
  SessBuf b = {0};
  SessTable *t = NULL;
  const char *tab = NULL;
  while (rc == SQLITE_OK && sqlite3changeset_next(it) == SQLITE_ROW) {
    if (it->tab != tab) { /* a new table: its header, as the input has it */
      tab = it->tab;
      t = rebase_table(r, tab);
      if (it->patch) rc = SQLITE_ERROR; /* a patchset cannot be rebased */
      sess_buf_byte(&b, it->patch ? 'P' : 'T');
      sess_buf_varint(&b, (sqlite3_uint64)it->ncol);
      sess_buf_bytes(&b, it->pk, it->ncol);
      sess_buf_bytes(&b, tab, (sqlite3_int64)strlen(tab) + 1);
    }
    if (rc) break;
    const unsigned char *rec = it->a + it->cur + 2;
    sqlite3_int64 nrec = it->off - it->cur - 2;
    const SessChange *c = NULL;
    if (t && t->nbucket) {
      unsigned k = sess_hash_record(t, rec, nrec, 0) % (unsigned)t->nbucket;
      for (c = t->hash[k]; c && !same_key(t, rec, 0, c->rec, 0); c = c->next) {
      }
    }
    if (!rebase_one(&b, t, it, rec, nrec, c)) sess_buf_bytes(&b, it->a + it->cur, nrec + 2);
  }
  int rc2 = sqlite3changeset_finalize(it);
  if (!rc) rc = rc2;
  if (!rc) rc = b.rc;
  if (!rc && b.n > 0x7fffffff) rc = SQLITE_TOOBIG;
  if (rc) {
    sqlite3_free(b.a);
    return rc;
  }
  *pn = (int)b.n;
  *pp = b.a;
  return SQLITE_OK;
}

int sqlite3rebaser_rebase_strm(sqlite3_rebaser *r, int (*in)(void *, void *, int *), void *arg,
                               int (*out)(void *, const void *, int), void *oarg) {
  if (!r) return SQLITE_MISUSE;
  int n, m;
  void *data, *res = NULL;
  int rc = sess_read_stream(in, arg, &n, &data);
  if (rc) return rc;
  rc = sqlite3rebaser_rebase(r, n, data, &m, &res);
  sqlite3_free(data);
  if (rc == SQLITE_OK && m > 0) rc = out(oarg, res, m);
  sqlite3_free(res);
  return rc;
}
