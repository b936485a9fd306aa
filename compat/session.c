/*
 * session.c -- SQLite's session objects (sqlite3session_*): a session
 * watches the row changes of one database of a connection through the
 * preupdate hook (compat/preupdate.c) and writes them out as a changeset or
 * patchset in SQLite's binary format (compat/session_int.h describes it).
 *
 * How a session accumulates (as SQLite 3.40.1 does, so that the output is
 * the same byte for byte): each attached table keeps a hash table of the
 * rows changed since the session began, keyed by PRIMARY KEY. The first
 * change to a row stores the row's original values (all of them for an
 * UPDATE or DELETE; only the key for an INSERT) and its opcode; later changes
 * to the row store nothing but may clear the indirect flag. An UPDATE is
 * recorded as a change to the old key and an INSERT at the new key. Only at
 * output time is the current row read back (SELECT by key): a row first
 * inserted becomes an INSERT if it still exists; a row that existed becomes
 * an UPDATE of the changed columns if it still exists (nothing if none
 * changed) or a DELETE if it is gone. Tables are written in the order they
 * were attached, rows in hash-bucket order, newest first in a bucket, with
 * SQLite's hash (below) and its table sizes (256 buckets, doubled when half
 * full), so the row order matches SQLite's too. sqlite3session_diff feeds the
 * same recording from queries comparing two databases instead of the hook
 * (a RowSource says where a change's values come from).
 *
 * Owns: sqlite3_session objects and their tables and changes; the
 * connection's preupdate hook while a session exists on it (the sessions of
 * one connection form a list whose head is the hook's argument).
 *
 * Invariants:
 *  1. A SessTable's hash holds one SessChange per primary key; a key with a
 *     NULL in it is never recorded; nentry counts the changes.
 *  2. A change's record is nCol encoded values: every old value for a row
 *     that existed, the key values (others undefined, 0x00) for an insert.
 *  3. A table with no PRIMARY KEY (tab->npk == 0 once loaded) records
 *     nothing; its columns are read once, at its first change.
 *  4. An error while recording is kept in s->rc; recording stops and the
 *     changeset calls return it.
 */
#include <string.h>

#include "compat_int.h"
#include "session_int.h"
#include "sqlite3session.h"

/* ---------------------------------------------------------------- encoding */

static void buf_reserve(SessBuf *b, sqlite3_int64 more) {
  if (b->rc || b->n + more <= b->cap) return;
  sqlite3_int64 cap = b->cap ? b->cap * 2 : 128;
  while (cap < b->n + more) cap *= 2;
  unsigned char *a = sqlite3_realloc64(b->a, (sqlite3_uint64)cap);
  if (!a) {
    b->rc = SQLITE_NOMEM;
    return;
  }
  b->a = a;
  b->cap = cap;
}

void sess_buf_bytes(SessBuf *b, const void *p, sqlite3_int64 n) {
  buf_reserve(b, n);
  if (b->rc || n == 0) return;
  memcpy(b->a + b->n, p, (size_t)n);
  b->n += n;
}

void sess_buf_byte(SessBuf *b, int c) {
  unsigned char u = (unsigned char)c;
  sess_buf_bytes(b, &u, 1);
}

void sess_buf_varint(SessBuf *b, sqlite3_uint64 v) {
  unsigned char t[10];
  int n = 0;
  if (v > 0x00ffffffffffffffULL) { /* nine bytes: the last holds eight bits */
    unsigned char out[9];
    out[8] = (unsigned char)v;
    v >>= 8;
    for (int i = 7; i >= 0; i--, v >>= 7) out[i] = (unsigned char)((v & 0x7f) | 0x80);
    sess_buf_bytes(b, out, 9);
    return;
  }
  do {
    t[n++] = (unsigned char)((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  t[0] &= 0x7f;
  unsigned char out[10];
  for (int i = 0; i < n; i++) out[i] = t[n - 1 - i];
  sess_buf_bytes(b, out, n);
}

void sess_buf_i64(SessBuf *b, sqlite3_int64 v) {
  unsigned char out[8];
  sqlite3_uint64 u = (sqlite3_uint64)v;
  for (int i = 7; i >= 0; i--, u >>= 8) out[i] = (unsigned char)u;
  sess_buf_bytes(b, out, 8);
}

void sess_buf_value(SessBuf *b, sqlite3_value *v) {
  if (!v) {
    sess_buf_byte(b, 0);
    return;
  }
  int t = sqlite3_value_type(v);
  sess_buf_byte(b, t);
  if (t == SQLITE_INTEGER) {
    sess_buf_i64(b, sqlite3_value_int64(v));
  } else if (t == SQLITE_FLOAT) {
    double d = sqlite3_value_double(v);
    sqlite3_int64 bits;
    memcpy(&bits, &d, 8);
    sess_buf_i64(b, bits);
  } else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
    const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);
    int n = sqlite3_value_bytes(v);
    if (!p && n > 0) {
      b->rc = SQLITE_NOMEM;
      return;
    }
    sess_buf_varint(b, (sqlite3_uint64)n);
    sess_buf_bytes(b, p, n);
  }
}

int sess_get_varint(const unsigned char *p, sqlite3_int64 n, sqlite3_uint64 *v) {
  sqlite3_uint64 x = 0;
  for (int i = 0; i < 9; i++) {
    if (i >= n) return 0;
    if (i == 8) {
      *v = (x << 8) | p[i];
      return 9;
    }
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

sqlite3_int64 sess_get_i64(const unsigned char *p) {
  sqlite3_uint64 u = 0;
  for (int i = 0; i < 8; i++) u = (u << 8) | p[i];
  return (sqlite3_int64)u;
}

sqlite3_int64 sess_value_len(const unsigned char *p, sqlite3_int64 n) {
  if (n < 1) return -1;
  switch (p[0]) {
    case 0:
    case SQLITE_NULL:
    case SESS_REPLACED:
      return 1;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      return n >= 9 ? 9 : -1;
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      sqlite3_uint64 len;
      int k = sess_get_varint(p + 1, n - 1, &len);
      if (!k || len > (sqlite3_uint64)(n - 1 - k)) return -1;
      return 1 + k + (sqlite3_int64)len;
    }
    default:
      return -1;
  }
}

/* ---------------------------------------------------------------- objects */

/* Where a change's values come from: the preupdate hook, or a row of
 * sqlite3session_diff's queries. */
typedef struct RowSource {
  int (*get_old)(void *ctx, int i, sqlite3_value **out);
  int (*get_new)(void *ctx, int i, sqlite3_value **out);
  int (*count)(void *ctx);
  int (*depth)(void *ctx);
  void *ctx;
} RowSource;

static int pu_old(void *db, int i, sqlite3_value **out) {
  return sqlite3_preupdate_old(db, i, out);
}
static int pu_new(void *db, int i, sqlite3_value **out) {
  return sqlite3_preupdate_new(db, i, out);
}
static int pu_count(void *db) { return sqlite3_preupdate_count(db); }
static int pu_depth(void *db) { return sqlite3_preupdate_depth(db); }

static int get_value(const RowSource *src, int use_new, int i, sqlite3_value **out) {
  return use_new ? src->get_new(src->ctx, i, out) : src->get_old(src->ctx, i, out);
}

struct sqlite3_session {
  sqlite3 *db;
  char *zdb;
  int enabled, indirect, autoattach, size_on;
  int rc; /* invariant 4 */
  int (*filter)(void *, const char *);
  void *filter_ctx;
  SessTable *tabs;
  sqlite3_int64 mem;      /* bytes allocated for tables and changes */
  sqlite3_int64 max_size; /* changeset_size: SQLite's running upper bound */
  sqlite3_session *next;  /* the connection's next session */
};

static char *dup_str(const char *z) {
  size_t n = strlen(z) + 1;
  char *c = sqlite3_malloc64(n);
  if (c) memcpy(c, z, n);
  return c;
}

/* SQLite's session hash: each key column in order, its type then its value
 * (an integer or a double's bits, low word then high; text and blob bytes). */
#define HASH_APPEND(h, add) (((h) << 3) ^ (h) ^ (unsigned)(add))

static unsigned hash_i64(unsigned h, sqlite3_int64 i) {
  h = HASH_APPEND(h, (sqlite3_uint64)i & 0xffffffffu);
  return HASH_APPEND(h, ((sqlite3_uint64)i >> 32) & 0xffffffffu);
}

static unsigned hash_bytes(unsigned h, const unsigned char *p, sqlite3_int64 n) {
  for (sqlite3_int64 i = 0; i < n; i++) h = HASH_APPEND(h, p[i]);
  return h;
}

unsigned sess_hash_record(const SessTable *t, const unsigned char *a, sqlite3_int64 n,
                          int pk_only) {
  unsigned h = 0;
  const unsigned char *end = a + n;
  for (int i = 0; i < t->ncol; i++) {
    if (pk_only && !t->pk[i]) continue;
    sqlite3_int64 len = sess_value_len(a, end - a);
    if (len < 0) break;
    if (t->pk[i]) {
      h = HASH_APPEND(h, a[0]);
      if (a[0] == SQLITE_INTEGER || a[0] == SQLITE_FLOAT) {
        h = hash_i64(h, sess_get_i64(a + 1));
      } else {
        sqlite3_uint64 m;
        int k = sess_get_varint(a + 1, end - a - 1, &m);
        h = hash_bytes(h, a + 1 + k, (sqlite3_int64)m);
      }
    }
    a += len;
  }
  return h;
}

/* Hash of the row the preupdate hook reports (old key, or new for use_new);
 * *null_pk set when a key column is NULL. */
static int hash_row(const RowSource *src, const SessTable *t, int use_new, unsigned *out,
                    int *null_pk) {
  unsigned h = 0;
  for (int i = 0; i < t->ncol; i++) {
    if (!t->pk[i]) continue;
    sqlite3_value *v = NULL;
    int rc = get_value(src, use_new, i, &v);
    if (rc) return rc;
    int ty = sqlite3_value_type(v);
    h = HASH_APPEND(h, ty);
    if (ty == SQLITE_INTEGER) {
      h = hash_i64(h, sqlite3_value_int64(v));
    } else if (ty == SQLITE_FLOAT) {
      double d = sqlite3_value_double(v);
      sqlite3_int64 bits;
      memcpy(&bits, &d, 8);
      h = hash_i64(h, bits);
    } else if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) {
      const unsigned char *p = ty == SQLITE_TEXT ? sqlite3_value_text(v) : sqlite3_value_blob(v);
      int n = sqlite3_value_bytes(v);
      if (!p && n > 0) return SQLITE_NOMEM;
      h = hash_bytes(h, p, n);
    } else {
      *null_pk = 1;
    }
  }
  *out = h;
  return SQLITE_OK;
}

/* Does change c hold the key of the reported row? */
static int same_key(const RowSource *src, const SessTable *t, const SessChange *c, int use_new) {
  const unsigned char *a = c->rec, *end = c->rec + c->nrec;
  for (int i = 0; i < t->ncol; i++) {
    sqlite3_int64 len = sess_value_len(a, end - a);
    if (len < 0) return 0;
    if (t->pk[i]) {
      sqlite3_value *v = NULL;
      if (get_value(src, use_new, i, &v)) return 0;
      int ty = sqlite3_value_type(v);
      if (ty != a[0]) return 0;
      if (ty == SQLITE_INTEGER) {
        if (sess_get_i64(a + 1) != sqlite3_value_int64(v)) return 0;
      } else if (ty == SQLITE_FLOAT) {
        sqlite3_int64 bits = sess_get_i64(a + 1);
        double d;
        memcpy(&d, &bits, 8);
        if (d != sqlite3_value_double(v)) return 0;
      } else {
        sqlite3_uint64 m;
        int k = sess_get_varint(a + 1, end - a - 1, &m);
        const void *p =
            ty == SQLITE_TEXT ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);
        if ((sqlite3_uint64)sqlite3_value_bytes(v) != m) return 0;
        if (m && memcmp(a + 1 + k, p, (size_t)m)) return 0;
      }
    }
    a += len;
  }
  return 1;
}

int sess_table_info(sqlite3 *db, const char *zdb, const char *name, int *pncol, unsigned char **ppk,
                    char ***pcols) {
  char *sql = sqlite3_mprintf("PRAGMA \"%w\".table_info(\"%w\")", zdb, name);
  if (!sql) return SQLITE_NOMEM;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  sqlite3_free(sql);
  int n = 0, cap = 0;
  unsigned char *pk = NULL;
  char **cols = NULL;
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      unsigned char *p2 = sqlite3_realloc64(pk, (sqlite3_uint64)cap);
      if (p2) pk = p2;
      char **c2 = sqlite3_realloc64(cols, sizeof *cols * (sqlite3_uint64)cap);
      if (c2) cols = c2;
      if (!p2 || !c2) {
        rc = SQLITE_NOMEM;
        break;
      }
    }
    const char *cn = (const char *)sqlite3_column_text(st, 1);
    cols[n] = dup_str(cn ? cn : "");
    pk[n] = (unsigned char)sqlite3_column_int(st, 5);
    if (!cols[n]) rc = SQLITE_NOMEM;
    n++;
  }
  int rc2 = sqlite3_finalize(st);
  if (rc == SQLITE_OK) rc = rc2;
  if (rc) {
    for (int i = 0; i < n; i++) sqlite3_free(cols ? cols[i] : NULL);
    sqlite3_free(cols);
    sqlite3_free(pk);
    return rc;
  }
  *pncol = n;
  *ppk = pk;
  *pcols = cols;
  return SQLITE_OK;
}

void sess_free_cols(char **cols, int n) {
  for (int i = 0; i < n && cols; i++) sqlite3_free(cols[i]);
  sqlite3_free(cols);
}

static int varint_len(sqlite3_uint64 v) {
  int n = 1;
  while (n < 9 && (v >>= 7) != 0) n++;
  return n;
}

/* Bytes of v encoded (NULL: undefined, one byte). */
static sqlite3_int64 value_size(sqlite3_value *v) {
  if (!v) return 1;
  int t = sqlite3_value_type(v);
  if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) return 9;
  if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
    int n = sqlite3_value_bytes(v);
    return 1 + varint_len((sqlite3_uint64)n) + n;
  }
  return 1;
}

/* SQLite's bound on what change c can add to the changeset, after a change
 * of kind op to its row (the new values from src): the bound only grows. */
static int update_max_size(sqlite3_session *s, const RowSource *src, const SessTable *t,
                           SessChange *c, int op) {
  sqlite3_int64 n = 2;
  if (c->op == SQLITE_INSERT) {
    for (int i = 0; op != SQLITE_DELETE && i < t->ncol; i++) {
      sqlite3_value *v = NULL;
      src->get_new(src->ctx, i, &v);
      n += value_size(v);
    }
  } else if (op == SQLITE_DELETE) {
    n += c->nrec;
  } else {
    const unsigned char *a = c->rec, *end = c->rec + c->nrec;
    for (int i = 0; i < t->ncol; i++) {
      sqlite3_value *v = NULL;
      src->get_new(src->ctx, i, &v);
      if (!v) return SQLITE_NOMEM;
      sqlite3_int64 len = sess_value_len(a, end - a);
      if (len < 0) return SQLITE_CORRUPT;
      int changed = 1, ty = a[0];
      sqlite3_int64 old_body = 0; /* the stored value's bytes after its type */
      if (ty == SQLITE_NULL) {
        changed = sqlite3_value_type(v) != SQLITE_NULL;
      } else if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
        if (ty == sqlite3_value_type(v)) {
          sqlite3_int64 bits = sess_get_i64(a + 1);
          if (ty == SQLITE_INTEGER) {
            changed = bits != sqlite3_value_int64(v);
          } else {
            double d;
            memcpy(&d, &bits, 8);
            changed = d != sqlite3_value_double(v);
          }
        }
        old_body = 8;
      } else {
        sqlite3_uint64 m;
        int k = sess_get_varint(a + 1, len - 1, &m);
        old_body = k + (sqlite3_int64)m;
        if (ty == sqlite3_value_type(v) && (sqlite3_uint64)sqlite3_value_bytes(v) == m &&
            (m == 0 || !memcmp(a + 1 + k, sqlite3_value_blob(v), (size_t)m)))
          changed = 0;
      }
      a += len;
      if (changed && t->pk[i]) {
        n = c->nrec + 2;
        break;
      }
      if (changed)
        n += 1 + old_body + value_size(v);
      else if (t->pk[i])
        n += 2 + old_body;
      else
        n += 2;
    }
  }
  if (n > c->max_size) {
    s->max_size += n - c->max_size;
    c->max_size = n;
  }
  return SQLITE_OK;
}

static int table_load(sqlite3_session *s, SessTable *t) {
  if (t->loaded) return SQLITE_OK;
  int rc = sess_table_info(s->db, s->zdb, t->name, &t->ncol, &t->pk, &t->cols);
  if (rc) return rc;
  t->loaded = 1;
  for (int i = 0; i < t->ncol; i++) t->npk += t->pk[i] != 0;
  if (s->size_on) /* a table header */
    s->max_size +=
        1 + varint_len((sqlite3_uint64)t->ncol) + t->ncol + (sqlite3_int64)strlen(t->name) + 1;
  s->mem += t->ncol * 9;
  return SQLITE_OK;
}

/* The hash grows (from 256 buckets, doubling) whenever it is half full;
 * changes move bucket by bucket, each chain from its head, to the head of
 * their new bucket -- the order SQLite's own rehash leaves. In a patchset a
 * DELETE's record holds only the key. */
int sess_table_grow(SessTable *t, int patch, sqlite3_int64 *mem) {
  if (t->nbucket && t->nentry < t->nbucket / 2) return SQLITE_OK;
  int nb = 2 * (t->nbucket ? t->nbucket : 128);
  SessChange **h = sqlite3_malloc64(sizeof *h * (sqlite3_uint64)nb);
  if (!h) return t->nbucket ? SQLITE_OK : SQLITE_NOMEM;
  memset(h, 0, sizeof *h * (size_t)nb);
  for (int i = 0; i < t->nbucket; i++) {
    SessChange *next;
    for (SessChange *c = t->hash[i]; c; c = next) {
      next = c->next;
      int pk_only = patch && c->op == SQLITE_DELETE;
      unsigned k = sess_hash_record(t, c->rec, c->nrec, pk_only) % (unsigned)nb;
      c->next = h[k];
      h[k] = c;
    }
  }
  sqlite3_free(t->hash);
  if (mem) *mem += (sqlite3_int64)sizeof *h * (nb - t->nbucket);
  t->hash = h;
  t->nbucket = nb;
  return SQLITE_OK;
}

void sess_table_free(SessTable *t) {
  for (int i = 0; i < t->nbucket; i++) {
    SessChange *cn;
    for (SessChange *c = t->hash[i]; c; c = cn) {
      cn = c->next;
      sqlite3_free(c->rec);
      sqlite3_free(c);
    }
  }
  sqlite3_free(t->hash);
  sess_free_cols(t->cols, t->ncol);
  sqlite3_free(t->pk);
  sqlite3_free(t->name);
  sqlite3_free(t);
}

static SessChange *new_row_change(sqlite3_session *s, const RowSource *src, SessTable *t, int op,
                                  unsigned k, int indirect);

/* One row change (op as the hook reports it, or SQLITE_INSERT for the new
 * key of an UPDATE). */
static void record_change(sqlite3_session *s, const RowSource *src, SessTable *t, int op) {
  if (s->rc) return;
  int rc = table_load(s, t);
  if (rc || t->npk == 0) {
    s->rc = rc;
    return;
  }
  if (t->ncol != src->count(src->ctx)) {
    s->rc = SQLITE_SCHEMA;
    return;
  }
  if ((rc = sess_table_grow(t, 0, &s->mem)) != SQLITE_OK) {
    s->rc = rc;
    return;
  }
  int use_new = op == SQLITE_INSERT, null_pk = 0;
  unsigned h;
  if ((rc = hash_row(src, t, use_new, &h, &null_pk)) != SQLITE_OK) {
    s->rc = rc;
    return;
  }
  if (null_pk) return;
  unsigned k = h % (unsigned)t->nbucket;
  int indirect = s->indirect || src->depth(src->ctx) > 0;
  SessChange *c;
  for (c = t->hash[k]; c; c = c->next)
    if (same_key(src, t, c, use_new)) break;
  if (c) {
    if (c->indirect && !indirect) c->indirect = 0;
  } else {
    c = new_row_change(s, src, t, op, k, indirect);
    if (!c) return;
  }
  if (s->size_on && (rc = update_max_size(s, src, t, c, op)) != SQLITE_OK) s->rc = rc;
}

/* The first change to a row (invariant 2), into bucket k. */
static SessChange *new_row_change(sqlite3_session *s, const RowSource *src, SessTable *t, int op,
                                  unsigned k, int indirect) {
  int rc = SQLITE_OK;
  SessChange *c;
  SessBuf b = {0};
  for (int i = 0; i < t->ncol; i++) {
    sqlite3_value *v = NULL;
    if (op != SQLITE_INSERT) {
      rc = src->get_old(src->ctx, i, &v);
    } else if (t->pk[i]) {
      rc = src->get_new(src->ctx, i, &v);
    }
    if (rc) break;
    sess_buf_value(&b, v);
  }
  if (!rc) rc = b.rc;
  c = rc ? NULL : sqlite3_malloc64(sizeof *c);
  if (!c) {
    sqlite3_free(b.a);
    s->rc = rc ? rc : SQLITE_NOMEM;
    return NULL;
  }
  c->op = op;
  c->indirect = indirect;
  c->rec = b.a;
  c->nrec = (int)b.n;
  c->max_size = 0;
  c->next = t->hash[k];
  t->hash[k] = c;
  t->nentry++;
  s->mem += (sqlite3_int64)sizeof *c + b.cap;
  return c;
}

/* Finds the session's table of that name, attaching it when the session
 * watches every table (and the filter, if any, agrees). */
static SessTable *find_table(sqlite3_session *s, const char *name);

static void on_preupdate(void *arg, sqlite3 *db, int op, const char *zdb, const char *tab,
                         sqlite3_int64 k1, sqlite3_int64 k2) {
  (void)k1;
  (void)k2;
  for (sqlite3_session *s = arg; s; s = s->next) {
    if (!s->enabled || s->rc || sqlite3_stricmp(zdb, s->zdb)) continue;
    SessTable *t = find_table(s, tab);
    if (!t) continue;
    RowSource src = {pu_old, pu_new, pu_count, pu_depth, db};
    record_change(s, &src, t, op);
    if (op == SQLITE_UPDATE) record_change(s, &src, t, SQLITE_INSERT);
  }
}

static SessTable *add_table(sqlite3_session *s, const char *name) {
  SessTable *t = sqlite3_malloc64(sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  if (!(t->name = dup_str(name))) {
    sqlite3_free(t);
    return NULL;
  }
  SessTable **pp = &s->tabs;
  while (*pp) pp = &(*pp)->next;
  *pp = t;
  s->mem += (sqlite3_int64)sizeof *t + (sqlite3_int64)strlen(name) + 1;
  return t;
}

static SessTable *lookup_table(sqlite3_session *s, const char *name) {
  for (SessTable *t = s->tabs; t; t = t->next)
    if (!sqlite3_stricmp(t->name, name)) return t;
  return NULL;
}

static SessTable *find_table(sqlite3_session *s, const char *name) {
  SessTable *t = lookup_table(s, name);
  if (t || !s->autoattach) return t;
  if (s->filter && !s->filter(s->filter_ctx, name)) return NULL;
  t = add_table(s, name);
  if (!t) s->rc = SQLITE_NOMEM;
  return t;
}

/* ---------------------------------------------------------------- sessions */

int sqlite3session_create(sqlite3 *db, const char *zdb, sqlite3_session **pp) {
  if (!pp) return SQLITE_MISUSE;
  *pp = NULL;
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  if (!zdb) zdb = "main";
  sqlite3_session *s = sqlite3_malloc64(sizeof *s);
  if (!s) return SQLITE_NOMEM;
  memset(s, 0, sizeof *s);
  s->db = db;
  s->enabled = 1;
  if (!(s->zdb = dup_str(zdb))) {
    sqlite3_free(s);
    return SQLITE_NOMEM;
  }
  s->next = sqlite3_preupdate_hook(db, on_preupdate, s);
  *pp = s;
  return SQLITE_OK;
}

void sqlite3session_delete(sqlite3_session *s) {
  if (!s) return;
  sqlite3 *db = s->db;
  if (shale_db_live((shale *)db)) {
    sqlite3_session *head = sqlite3_preupdate_hook(db, NULL, NULL);
    for (sqlite3_session **pp = &head; *pp; pp = &(*pp)->next) {
      if (*pp == s) {
        *pp = s->next;
        break;
      }
    }
    if (head) sqlite3_preupdate_hook(db, on_preupdate, head);
  }
  SessTable *tn;
  for (SessTable *t = s->tabs; t; t = tn) {
    tn = t->next;
    sess_table_free(t);
  }
  sqlite3_free(s->zdb);
  sqlite3_free(s);
}

int sqlite3session_object_config(sqlite3_session *s, int op, void *arg) {
  if (!s) return SQLITE_MISUSE;
  if (op != SQLITE_SESSION_OBJCONFIG_SIZE) return SQLITE_MISUSE;
  int v = *(int *)arg;
  if (v >= 0) {
    if (s->tabs) return SQLITE_MISUSE;
    s->size_on = v != 0;
  }
  *(int *)arg = s->size_on;
  return SQLITE_OK;
}

int sqlite3session_enable(sqlite3_session *s, int on) {
  if (on >= 0) s->enabled = on != 0;
  return s->enabled;
}

int sqlite3session_indirect(sqlite3_session *s, int on) {
  if (on >= 0) s->indirect = on != 0;
  return s->indirect;
}

int sqlite3session_attach(sqlite3_session *s, const char *tab) {
  if (!tab) {
    s->autoattach = 1;
    return SQLITE_OK;
  }
  if (lookup_table(s, tab)) return SQLITE_OK;
  return add_table(s, tab) ? SQLITE_OK : SQLITE_NOMEM;
}

void sqlite3session_table_filter(sqlite3_session *s, int (*filter)(void *, const char *),
                                 void *ctx) {
  s->autoattach = 1;
  s->filter = filter;
  s->filter_ctx = ctx;
}

int sqlite3session_isempty(sqlite3_session *s) {
  for (SessTable *t = s->tabs; t; t = t->next)
    if (t->nentry) return 0;
  return 1;
}

sqlite3_int64 sqlite3session_memory_used(sqlite3_session *s) { return s->mem; }

/* Bytes per xOutput call of the streaming forms (SQLite's default, 1024). */
static int g_strm_chunk = 1024;

int sqlite3session_config(int op, void *arg) {
  if (op != SQLITE_SESSION_CONFIG_STRMSIZE) return SQLITE_MISUSE;
  int *v = arg;
  if (*v > 0) g_strm_chunk = *v;
  *v = g_strm_chunk;
  return SQLITE_OK;
}

/* ---------------------------------------------------------------- output */

/* The current value of column i of the row st stands on, encoded. */
static void put_column(SessBuf *b, sqlite3_stmt *st, int i) {
  sess_buf_value(b, sqlite3_column_value(st, i));
}

/* Column i's current value equal to the stored one at a (same type too)? */
static int column_same(sqlite3_stmt *st, int i, const unsigned char *a, sqlite3_int64 len) {
  int ty = sqlite3_column_type(st, i);
  if (a[0] == SQLITE_NULL) return ty == SQLITE_NULL;
  if (ty != a[0]) return 0;
  if (ty == SQLITE_INTEGER) return sess_get_i64(a + 1) == sqlite3_column_int64(st, i);
  if (ty == SQLITE_FLOAT) {
    sqlite3_int64 bits = sess_get_i64(a + 1);
    double d;
    memcpy(&d, &bits, 8);
    return d == sqlite3_column_double(st, i);
  }
  sqlite3_uint64 m;
  int k = sess_get_varint(a + 1, len - 1, &m);
  if ((sqlite3_uint64)sqlite3_column_bytes(st, i) != m) return 0;
  const void *p =
      ty == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, i) : sqlite3_column_blob(st, i);
  return m == 0 || !memcmp(a + 1 + k, p, (size_t)m);
}

/* An UPDATE record: old values of the key and the changed columns (the rest
 * undefined; no old record in a patchset), then new values of the changed
 * columns (and of the key, in a patchset). Nothing when no column changed. */
static void put_update(SessBuf *b, int patch, sqlite3_stmt *st, const SessTable *t,
                       const SessChange *c) {
  SessBuf nb = {0};
  sqlite3_int64 start = b->n;
  int changed_any = 0;
  const unsigned char *a = c->rec, *end = c->rec + c->nrec;
  sess_buf_byte(b, SQLITE_UPDATE);
  sess_buf_byte(b, c->indirect);
  for (int i = 0; i < t->ncol; i++) {
    sqlite3_int64 len = sess_value_len(a, end - a);
    if (len < 0) {
      b->rc = SQLITE_CORRUPT;
      break;
    }
    int changed = !column_same(st, i, a, len);
    changed_any |= changed;
    if (!patch) {
      if (changed || t->pk[i])
        sess_buf_bytes(b, a, len);
      else
        sess_buf_byte(b, 0);
    }
    if (changed || (patch && t->pk[i]))
      put_column(&nb, st, i);
    else
      sess_buf_byte(&nb, 0);
    a += len;
  }
  if (nb.rc && !b->rc) b->rc = nb.rc;
  if (!changed_any) {
    if (!b->rc) b->n = start;
  } else {
    sess_buf_bytes(b, nb.a, nb.n);
  }
  sqlite3_free(nb.a);
}

/* A DELETE record: every old value (the key only, in a patchset). */
static void put_delete(SessBuf *b, int patch, const SessTable *t, const SessChange *c) {
  sess_buf_byte(b, SQLITE_DELETE);
  sess_buf_byte(b, c->indirect);
  if (!patch) {
    sess_buf_bytes(b, c->rec, c->nrec);
    return;
  }
  const unsigned char *a = c->rec, *end = c->rec + c->nrec;
  for (int i = 0; i < t->ncol; i++) {
    sqlite3_int64 len = sess_value_len(a, end - a);
    if (len < 0) {
      b->rc = SQLITE_CORRUPT;
      return;
    }
    if (t->pk[i]) sess_buf_bytes(b, a, len);
    a += len;
  }
}

/* SELECT * FROM "db"."tab" WHERE k1 IS ?1 AND ... (key columns in order). */
static int select_stmt(sqlite3 *db, const char *zdb, const SessTable *t, sqlite3_stmt **pst) {
  sqlite3_str *q = sqlite3_str_new(db);
  sqlite3_str_appendf(q, "SELECT * FROM \"%w\".\"%w\" WHERE ", zdb, t->name);
  const char *sep = "";
  for (int i = 0; i < t->ncol; i++) {
    if (!t->pk[i]) continue;
    sqlite3_str_appendf(q, "%s\"%w\" IS ?%d", sep, t->cols[i], i + 1);
    sep = " AND ";
  }
  return sess_prepare(db, q, pst);
}

int sess_prepare(sqlite3 *db, sqlite3_str *q, sqlite3_stmt **pst) {
  char *sql = sqlite3_str_finish(q);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v2(db, sql, -1, pst, NULL);
  sqlite3_free(sql);
  return rc;
}

/* Binds a change's stored key to the select. */
static int bind_key(sqlite3_stmt *st, const SessTable *t, const SessChange *c) {
  const unsigned char *a = c->rec, *end = c->rec + c->nrec;
  int rc = SQLITE_OK;
  for (int i = 0; i < t->ncol && rc == SQLITE_OK; i++) {
    sqlite3_int64 len = sess_value_len(a, end - a);
    if (len < 0) return SQLITE_CORRUPT;
    if (t->pk[i]) {
      if (a[0] == SQLITE_INTEGER) {
        rc = sqlite3_bind_int64(st, i + 1, sess_get_i64(a + 1));
      } else if (a[0] == SQLITE_FLOAT) {
        sqlite3_int64 bits = sess_get_i64(a + 1);
        double d;
        memcpy(&d, &bits, 8);
        rc = sqlite3_bind_double(st, i + 1, d);
      } else {
        sqlite3_uint64 m;
        int k = sess_get_varint(a + 1, len - 1, &m);
        if (a[0] == SQLITE_TEXT)
          rc = sqlite3_bind_text(st, i + 1, (const char *)a + 1 + k, (int)m, SQLITE_TRANSIENT);
        else
          rc = sqlite3_bind_blob(st, i + 1, a + 1 + k, (int)m, SQLITE_TRANSIENT);
      }
    }
    a += len;
  }
  return rc;
}

/* One table's header and records into b; the header is taken back when no
 * record follows it. */
static int put_table(sqlite3_session *s, SessTable *t, int patch, SessBuf *b) {
  int ncol;
  unsigned char *pk;
  char **cols;
  int rc = sess_table_info(s->db, s->zdb, t->name, &ncol, &pk, &cols);
  if (rc) return rc;
  if (ncol != t->ncol || memcmp(pk, t->pk, (size_t)ncol)) rc = SQLITE_SCHEMA;
  sess_free_cols(cols, ncol);
  sqlite3_free(pk);
  if (rc) return rc;
  sqlite3_int64 rewind = b->n;
  sess_buf_byte(b, patch ? 'P' : 'T');
  sess_buf_varint(b, (sqlite3_uint64)t->ncol);
  sess_buf_bytes(b, t->pk, t->ncol);
  sess_buf_bytes(b, t->name, (sqlite3_int64)strlen(t->name) + 1);
  sqlite3_int64 header_end = b->n;
  sqlite3_stmt *st = NULL;
  rc = select_stmt(s->db, s->zdb, t, &st);
  for (int i = 0; i < t->nbucket && rc == SQLITE_OK; i++) {
    for (SessChange *c = t->hash[i]; c && rc == SQLITE_OK; c = c->next) {
      rc = bind_key(st, t, c);
      if (rc) break;
      int step = sqlite3_step(st);
      if (step == SQLITE_ROW) {
        if (c->op == SQLITE_INSERT) {
          sess_buf_byte(b, SQLITE_INSERT);
          sess_buf_byte(b, c->indirect);
          for (int k = 0; k < t->ncol; k++) put_column(b, st, k);
        } else {
          put_update(b, patch, st, t, c);
        }
      } else if (step != SQLITE_DONE) {
        rc = sqlite3_reset(st);
        if (!rc) rc = SQLITE_ERROR;
        break;
      } else if (c->op != SQLITE_INSERT) {
        put_delete(b, patch, t, c);
      }
      rc = sqlite3_reset(st);
      if (!rc) rc = b->rc;
    }
  }
  sqlite3_finalize(st);
  if (!rc && b->n == header_end) b->n = rewind;
  return rc;
}

static int generate(sqlite3_session *s, int patch, int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
  if (!s || !pn || !pp) return SQLITE_MISUSE;
  if (s->rc) return s->rc;
  int rc = sqlite3_exec(s->db, "SAVEPOINT changeset", NULL, NULL, NULL);
  if (rc) return rc;
  SessBuf b = {0};
  for (SessTable *t = s->tabs; t && rc == SQLITE_OK; t = t->next)
    if (t->nentry) rc = put_table(s, t, patch, &b);
  if (!rc) rc = b.rc;
  int rc2 = sqlite3_exec(s->db, "RELEASE changeset", NULL, NULL, NULL);
  if (!rc) rc = rc2;
  if (rc || b.n > 0x7fffffff) {
    sqlite3_free(b.a);
    return rc ? rc : SQLITE_TOOBIG;
  }
  *pn = (int)b.n;
  *pp = b.a;
  return SQLITE_OK;
}

int sqlite3session_changeset(sqlite3_session *s, int *pn, void **pp) {
  return generate(s, 0, pn, pp);
}

int sqlite3session_patchset(sqlite3_session *s, int *pn, void **pp) {
  return generate(s, 1, pn, pp);
}

/* The streaming forms hand the output to out() in pieces of g_strm_chunk
 * bytes (where SQLite cuts them differently, the bytes are the same). */
static int generate_strm(sqlite3_session *s, int patch, int (*out)(void *, const void *, int),
                         void *arg) {
  int n;
  void *p;
  int rc = generate(s, patch, &n, &p);
  for (int at = 0; rc == SQLITE_OK && at < n; at += g_strm_chunk)
    rc = out(arg, (const char *)p + at, n - at < g_strm_chunk ? n - at : g_strm_chunk);
  sqlite3_free(p);
  return rc;
}

int sqlite3session_changeset_strm(sqlite3_session *s, int (*out)(void *, const void *, int),
                                  void *arg) {
  return generate_strm(s, 0, out, arg);
}

int sqlite3session_patchset_strm(sqlite3_session *s, int (*out)(void *, const void *, int),
                                 void *arg) {
  return generate_strm(s, 1, out, arg);
}

sqlite3_int64 sqlite3session_changeset_size(sqlite3_session *s) { return s ? s->max_size : 0; }

/* ---------------------------------------------------------------- diff */

/* A row of a diff query: new values in columns 0..ncol-1, old ones from
 * column old_off (0 when the row is only old or only new). */
typedef struct DiffRow {
  sqlite3_stmt *st;
  int old_off, ncol;
} DiffRow;

static int diff_old(void *ctx, int i, sqlite3_value **out) {
  DiffRow *d = ctx;
  *out = sqlite3_column_value(d->st, i + d->old_off);
  return SQLITE_OK;
}
static int diff_new(void *ctx, int i, sqlite3_value **out) {
  DiffRow *d = ctx;
  *out = sqlite3_column_value(d->st, i);
  return SQLITE_OK;
}
static int diff_count(void *ctx) {
  DiffRow *d = ctx;
  return d->old_off ? d->old_off : sqlite3_column_count(d->st);
}
static int diff_depth(void *ctx) { return 0; }

/* "a"."t"."k" IS "b"."t"."k" AND ... over the key (or, with others, "a"."t"."c"
 * IS NOT "b"."t"."c" OR ... over the other columns; "0" if none). */
static void compare_expr(sqlite3_str *q, const SessTable *t, const char *a, const char *b,
                         int others) {
  const char *sep = "";
  for (int i = 0; i < t->ncol; i++) {
    if ((t->pk[i] != 0) == others) continue;
    sqlite3_str_appendf(q, "%s\"%w\".\"%w\".\"%w\" %s \"%w\".\"%w\".\"%w\"", sep, a, t->name,
                        t->cols[i], others ? "IS NOT" : "IS", b, t->name, t->cols[i]);
    sep = others ? " OR " : " AND ";
  }
  if (!*sep) sqlite3_str_appendall(q, "0");
}

/* Records every row the query returns as a change of kind op. */
static int diff_rows(sqlite3_session *s, SessTable *t, sqlite3_str *q, int op, int old_off) {
  sqlite3_stmt *st = NULL;
  int rc = sess_prepare(s->db, q, &st);
  if (rc) return rc;
  DiffRow d = {st, old_off, t->ncol};
  RowSource src = {diff_old, diff_new, diff_count, diff_depth, &d};
  while (sqlite3_step(st) == SQLITE_ROW) record_change(s, &src, t, op);
  rc = sqlite3_finalize(st);
  return rc ? rc : s->rc;
}

/* Rows in db1 whose key is not in db2, as op (the key compared between the
 * session's database and from). */
static int diff_missing(sqlite3_session *s, SessTable *t, const char *from, const char *db1,
                        const char *db2, int op) {
  sqlite3_str *q = sqlite3_str_new(s->db);
  sqlite3_str_appendf(
      q, "SELECT * FROM \"%w\".\"%w\" WHERE NOT EXISTS (SELECT 1 FROM \"%w\".\"%w\" WHERE ", db1,
      t->name, db2, t->name);
  compare_expr(q, t, s->zdb, from, 0);
  sqlite3_str_appendall(q, ")");
  return diff_rows(s, t, q, op, 0);
}

/* SQLite's diff: the table of the session's database against the same table
 * in from, recorded as if from had been changed into it -- rows only here
 * are INSERTs, rows only there DELETEs, rows with the same key and another
 * value UPDATEs (found in that order). */
int sqlite3session_diff(sqlite3_session *s, const char *from, const char *tab, char **err) {
  if (err) *err = NULL;
  if (!s || !from || !tab) return SQLITE_MISUSE;
  if (s->rc) return s->rc;
  SessTable *t = find_table(s, tab);
  if (!t) return s->rc;
  int rc = table_load(s, t);
  if (rc) return s->rc = rc;
  if (t->npk == 0) return SQLITE_OK; /* never recorded */
  int ncol;
  unsigned char *pk;
  char **cols;
  rc = sess_table_info(s->db, from, tab, &ncol, &pk, &cols);
  if (rc) return rc;
  int mismatch = ncol != t->ncol, has_pk = 0;
  for (int i = 0; !mismatch && i < ncol; i++) {
    if (pk[i] != t->pk[i] || sqlite3_stricmp(cols[i], t->cols[i])) mismatch = 1;
    if (pk[i]) has_pk = 1;
  }
  sess_free_cols(cols, ncol);
  sqlite3_free(pk);
  if (mismatch) {
    if (err) *err = sqlite3_mprintf("table schemas do not match");
    return SQLITE_SCHEMA;
  }
  if (!has_pk) return SQLITE_OK;
  rc = diff_missing(s, t, from, s->zdb, from, SQLITE_INSERT);
  if (!rc) rc = diff_missing(s, t, from, from, s->zdb, SQLITE_DELETE);
  if (!rc) {
    sqlite3_str *q = sqlite3_str_new(s->db);
    sqlite3_str_appendf(q, "SELECT * FROM \"%w\".\"%w\", \"%w\".\"%w\" WHERE ", s->zdb, t->name,
                        from, t->name);
    compare_expr(q, t, s->zdb, from, 0);
    sqlite3_str_appendall(q, " AND (");
    compare_expr(q, t, s->zdb, from, 1);
    sqlite3_str_appendall(q, ")");
    rc = diff_rows(s, t, q, SQLITE_UPDATE, t->ncol);
  }
  return rc;
}
