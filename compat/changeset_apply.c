/*
 * changeset_apply.c -- sqlite3changeset_apply (+ _v2, _strm, _v2_strm):
 * a changeset or patchset applied to the "main" database of a connection,
 * with SQLite 3.40.1's conflict protocol.
 *
 * Per table (after the filter, if any, agrees; a table that is missing,
 * has fewer columns or another PRIMARY KEY is skipped): a DELETE must find
 * the row with every old value (patchset: the key); an UPDATE must find the
 * key and every defined old value, then sets the defined new values; an
 * INSERT inserts. Failures call the conflict handler:
 *   - DELETE/UPDATE matching nothing: DATA if a row with the key exists (its
 *     values readable by sqlite3changeset_conflict), else NOTFOUND;
 *     DATA + REPLACE retries the change by key alone;
 *   - INSERT hitting an existing key: CONFLICT (REPLACE deletes the row and
 *     inserts again);
 *   - any other constraint failure: the change is put aside and retried
 *     after the table's other changes, as long as the retries make progress;
 *     then CONSTRAINT;
 *   - at the end, deferred foreign key violations: FOREIGN_KEY once, with
 *     sqlite3changeset_fk_conflicts giving their count; anything but OMIT
 *     fails the apply with SQLITE_CONSTRAINT.
 * OMIT skips the change, ABORT stops with SQLITE_ABORT, an answer that does
 * not fit SQLITE_MISUSE. Foreign keys are deferred during the apply; the
 * whole apply runs in SAVEPOINT changeset_apply (rolled back on failure)
 * unless SQLITE_CHANGESETAPPLY_NOSAVEPOINT. SQLITE_CHANGESETAPPLY_INVERT
 * applies the inverse. ppRebase receives SQLite's rebase buffer (see
 * rebase_add) after a successful apply of a changeset; otherwise, as in
 * SQLite, *ppRebase and *pnRebase are left as they were.
 *
 * Owns: the statements of the table being applied (freed when the table
 * changes and at the end).
 *
 * Invariants:
 *  1. The conflict handler sees it->conflict set only for DATA and CONFLICT,
 *     and it->nfk >= 0 only for FOREIGN_KEY (a separate iterator).
 *  2. Constraint retries run the put-aside records through an iterator over
 *     a copy of their bytes, with the table's header state copied in.
 */
#include <string.h>

#include "compat_int.h"
#include "session_int.h"
#include "sqlite3session.h"

typedef int (*ConflictFn)(void *, int, sqlite3_changeset_iter *);

typedef struct Apply {
  sqlite3 *db;
  int ncol;
  unsigned char *pk; /* target's key flags */
  char **cols;
  sqlite3_stmt *del, *ins, *sel;
  SessBuf put_aside;               /* records that hit a constraint */
  SessBuf rebase;                  /* the rebase buffer, when the caller asked for it */
  int want_rebase, rebase_started; /* started: this table's header written */
  int defer;                       /* put constraint failures aside (until no progress) */
  int invert;
  ConflictFn conflict;
  void *ctx;
} Apply;

static void apply_reset(Apply *p) {
  sqlite3_finalize(p->del);
  sqlite3_finalize(p->ins);
  sqlite3_finalize(p->sel);
  p->del = p->ins = p->sel = NULL;
  sess_free_cols(p->cols, p->ncol);
  sqlite3_free(p->pk);
  p->cols = NULL;
  p->pk = NULL;
  p->ncol = 0;
  sqlite3_free(p->put_aside.a);
  memset(&p->put_aside, 0, sizeof p->put_aside);
  p->defer = 1;
  p->rebase_started = 0;
}

/* The key condition: "k1" = ?i AND ... (parameter i+1 for column i). */
static void key_where(sqlite3_str *q, const Apply *p, const char *cmp) {
  const char *sep = "";
  for (int i = 0; i < p->ncol; i++) {
    if (!p->pk[i]) continue;
    sqlite3_str_appendf(q, "%s\"%w\" %s ?%d", sep, p->cols[i], cmp, i + 1);
    sep = " AND ";
  }
}

/* DELETE ... WHERE key AND (?ncol+1 OR every other column IS its old value);
 * INSERT INTO ...(columns) VALUES(...); SELECT * ... WHERE key. */
static int apply_statements(Apply *p, const char *tab) {
  sqlite3_str *q = sqlite3_str_new(p->db);
  sqlite3_str_appendf(q, "DELETE FROM main.\"%w\" WHERE ", tab);
  key_where(q, p, "=");
  int npk = 0;
  for (int i = 0; i < p->ncol; i++) npk += p->pk[i] != 0;
  if (npk < p->ncol) {
    sqlite3_str_appendf(q, " AND (?%d OR (", p->ncol + 1);
    const char *sep = "";
    for (int i = 0; i < p->ncol; i++) {
      if (p->pk[i]) continue;
      sqlite3_str_appendf(q, "%s\"%w\" IS ?%d", sep, p->cols[i], i + 1);
      sep = " AND ";
    }
    sqlite3_str_appendall(q, "))");
  }
  int rc = sess_prepare(p->db, q, &p->del);
  if (rc) return rc;
  q = sqlite3_str_new(p->db);
  sqlite3_str_appendf(q, "INSERT INTO main.\"%w\"(", tab);
  for (int i = 0; i < p->ncol; i++) sqlite3_str_appendf(q, "%s\"%w\"", i ? ", " : "", p->cols[i]);
  sqlite3_str_appendall(q, ") VALUES(");
  for (int i = 0; i < p->ncol; i++) sqlite3_str_appendf(q, "%s?%d", i ? ", " : "", i + 1);
  sqlite3_str_appendall(q, ")");
  if ((rc = sess_prepare(p->db, q, &p->ins)) != SQLITE_OK) return rc;
  q = sqlite3_str_new(p->db);
  sqlite3_str_appendf(q, "SELECT * FROM main.\"%w\" WHERE ", tab);
  key_where(q, p, "IS");
  return sess_prepare(p->db, q, &p->sel);
}

/* Binds the iterator's values (old or new side; only the key when pk_only)
 * as parameters 1..ncol; an undefined value needed is corruption. */
static int bind_side(sqlite3_changeset_iter *it, int new_side, const Apply *p, int pk_only,
                     sqlite3_stmt *st) {
  for (int i = 0; i < p->ncol; i++) {
    if (pk_only && !p->pk[i]) continue;
    sqlite3_value *v = it->vals[(new_side ? it->ncol : 0) + i];
    if (!v) return SQLITE_CORRUPT;
    int rc = sqlite3_bind_value(st, i + 1, v);
    if (rc) return rc;
  }
  return SQLITE_OK;
}

/* Positions p->sel on the row with the change's key (new side for an
 * INSERT): SQLITE_ROW, or SQLITE_OK when there is none. */
static int seek_row(sqlite3_changeset_iter *it, Apply *p) {
  int rc = bind_side(it, it->op == SQLITE_INSERT, p, 1, p->sel);
  if (rc) return rc;
  rc = sqlite3_step(p->sel);
  if (rc != SQLITE_ROW) rc = sqlite3_reset(p->sel);
  return rc;
}

/* The rebase buffer records each change the conflict handler answered with
 * OMIT or REPLACE, as SQLite's does: a changeset-like table header, then a
 * DELETE (for a DELETE) or INSERT (otherwise) whose indirect byte says
 * REPLACE, with the old values of a DELETE and an UPDATE's key, the new ones
 * otherwise (undefined where the change has none). */
static int rebase_add(Apply *p, sqlite3_changeset_iter *it, int replaced) {
  if (!p->want_rebase) return SQLITE_OK;
  SessBuf *b = &p->rebase;
  if (!p->rebase_started) {
    sess_buf_byte(b, 'T');
    sess_buf_varint(b, (sqlite3_uint64)p->ncol);
    sess_buf_bytes(b, p->pk, p->ncol);
    sess_buf_bytes(b, it->tab, (sqlite3_int64)strlen(it->tab) + 1);
    p->rebase_started = 1;
  }
  sess_buf_byte(b, it->op == SQLITE_DELETE ? SQLITE_DELETE : SQLITE_INSERT);
  sess_buf_byte(b, replaced);
  for (int i = 0; i < p->ncol; i++) {
    int old = it->op == SQLITE_DELETE || (it->op == SQLITE_UPDATE && p->pk[i]);
    sess_buf_value(b, it->vals[(old ? 0 : it->ncol) + i]);
  }
  return b->rc;
}

/* kind is SQLITE_CHANGESET_DATA or _CONFLICT; retry (when not NULL) asks
 * for the key lookup that tells DATA from NOTFOUND / CONFLICT from a
 * constraint, and receives the REPLACE answer. */
static int on_conflict(int kind, Apply *p, sqlite3_changeset_iter *it, int *retry) {
  int rc = retry ? seek_row(it, p) : SQLITE_OK;
  int res;
  if (rc == SQLITE_ROW) {
    it->conflict = p->sel;
    res = p->conflict(p->ctx, kind, it);
    it->conflict = NULL;
    rc = sqlite3_reset(p->sel);
  } else if (rc == SQLITE_OK) {
    if (p->defer && kind == SQLITE_CHANGESET_CONFLICT) {
      sess_buf_bytes(&p->put_aside, it->a + it->cur, it->off - it->cur);
      return p->put_aside.rc;
    }
    res = p->conflict(p->ctx, kind + 1, it);
    if (res == SQLITE_CHANGESET_REPLACE) rc = SQLITE_MISUSE;
  } else {
    return rc;
  }
  if (rc) return rc;
  if (res == SQLITE_CHANGESET_REPLACE) {
    if (!retry) return SQLITE_MISUSE;
    *retry = 1;
  } else if (res == SQLITE_CHANGESET_ABORT) {
    return SQLITE_ABORT;
  } else if (res != SQLITE_CHANGESET_OMIT) {
    return SQLITE_MISUSE;
  }
  return rebase_add(p, it, res == SQLITE_CHANGESET_REPLACE);
}

/* UPDATE main.tab SET c = ?(2i+1) for each defined new value WHERE key
 * = ?(2i+2) [AND c IS ?(2i+2) for each defined old value]. */
static int update_stmt(sqlite3_changeset_iter *it, Apply *p, const char *tab, int by_key,
                       sqlite3_stmt **pst) {
  sqlite3_str *q = sqlite3_str_new(p->db);
  sqlite3_str_appendf(q, "UPDATE main.\"%w\" SET ", tab);
  const char *sep = "";
  for (int i = 0; i < p->ncol; i++) {
    if (!it->vals[it->ncol + i]) continue;
    sqlite3_str_appendf(q, "%s\"%w\" = ?%d", sep, p->cols[i], 2 * i + 1);
    sep = ", ";
  }
  if (!*sep) { /* nothing set: still match the row, so that NOTFOUND/DATA work */
    for (int i = 0; i < p->ncol; i++)
      if (p->pk[i]) {
        sqlite3_str_appendf(q, "\"%w\" = \"%w\"", p->cols[i], p->cols[i]);
        break;
      }
  }
  sqlite3_str_appendall(q, " WHERE ");
  sep = "";
  for (int i = 0; i < p->ncol; i++) {
    if (p->pk[i]) {
      sqlite3_str_appendf(q, "%s\"%w\" = ?%d", sep, p->cols[i], 2 * i + 2);
      sep = " AND ";
    } else if (!by_key && it->vals[i]) {
      sqlite3_str_appendf(q, "%s\"%w\" IS ?%d", sep, p->cols[i], 2 * i + 2);
      sep = " AND ";
    }
  }
  return sess_prepare(p->db, q, pst);
}

static int changes_zero(sqlite3 *db) { return sqlite3_changes(db) == 0; }

static int is_constraint(int rc) { return (rc & 0xff) == SQLITE_CONSTRAINT; }

/* One change. first: the first attempt (retry/replace answers possible). */
static int apply_op(sqlite3_changeset_iter *it, Apply *p, const char *tab, int *retry,
                    int *replace) {
  int rc;
  if (it->op == SQLITE_DELETE) {
    int pk_only = it->patch;
    rc = bind_side(it, 0, p, pk_only, p->del);
    if (!rc && sqlite3_bind_parameter_count(p->del) > p->ncol)
      rc = sqlite3_bind_int(p->del, p->ncol + 1, retry == NULL || pk_only);
    if (rc) return rc;
    sqlite3_step(p->del);
    rc = sqlite3_reset(p->del);
    sqlite3_clear_bindings(p->del);
    if (rc == SQLITE_OK && changes_zero(p->db))
      return on_conflict(SQLITE_CHANGESET_DATA, p, it, retry);
    if (is_constraint(rc)) return on_conflict(SQLITE_CHANGESET_CONFLICT, p, it, NULL);
    return rc;
  }
  if (it->op == SQLITE_UPDATE) {
    int by_key = retry == NULL || it->patch;
    sqlite3_stmt *up = NULL;
    rc = update_stmt(it, p, tab, by_key, &up);
    for (int i = 0; rc == SQLITE_OK && i < p->ncol; i++) {
      sqlite3_value *o = it->vals[i], *nv = it->vals[it->ncol + i];
      if (p->pk[i] || (!by_key && o)) {
        if (!o)
          rc = SQLITE_CORRUPT;
        else
          rc = sqlite3_bind_value(up, 2 * i + 2, o);
      }
      if (rc == SQLITE_OK && nv) rc = sqlite3_bind_value(up, 2 * i + 1, nv);
    }
    if (rc) {
      sqlite3_finalize(up);
      return rc;
    }
    sqlite3_step(up);
    rc = sqlite3_reset(up);
    sqlite3_finalize(up);
    if (rc == SQLITE_OK && changes_zero(p->db))
      return on_conflict(SQLITE_CHANGESET_DATA, p, it, retry);
    if (is_constraint(rc)) return on_conflict(SQLITE_CHANGESET_CONFLICT, p, it, NULL);
    return rc;
  }
  rc = bind_side(it, 1, p, 0, p->ins);
  if (rc) return rc;
  sqlite3_step(p->ins);
  rc = sqlite3_reset(p->ins);
  if (is_constraint(rc)) return on_conflict(SQLITE_CHANGESET_CONFLICT, p, it, replace);
  return rc;
}

static int apply_one(sqlite3_changeset_iter *it, Apply *p, const char *tab) {
  int retry = 0, replace = 0;
  int rc = apply_op(it, p, tab, &retry, &replace);
  if (rc) return rc;
  if (retry) return apply_op(it, p, tab, NULL, NULL);
  if (!replace) return SQLITE_OK;
  rc = sqlite3_exec(p->db, "SAVEPOINT replace_op", NULL, NULL, NULL);
  if (!rc) rc = bind_side(it, 1, p, 1, p->del);
  if (!rc) rc = sqlite3_bind_int(p->del, p->ncol + 1, 1);
  if (!rc) {
    sqlite3_step(p->del);
    rc = sqlite3_reset(p->del);
    sqlite3_clear_bindings(p->del);
  }
  if (!rc) rc = apply_op(it, p, tab, NULL, NULL);
  if (!rc) rc = sqlite3_exec(p->db, "RELEASE replace_op", NULL, NULL, NULL);
  return rc;
}

/* The put-aside records of the table just applied, again, while each round
 * makes progress; then once more with constraint failures reported. */
static int retry_put_aside(Apply *p, const sqlite3_changeset_iter *hdr, const char *tab) {
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK && p->put_aside.n) {
    SessBuf recs = p->put_aside;
    memset(&p->put_aside, 0, sizeof p->put_aside);
    sqlite3_changeset_iter *it = NULL;
    rc = sess_iter_start(&it, (int)recs.n, recs.a, p->invert);
    if (rc == SQLITE_OK) {
      sqlite3_value **v = sqlite3_malloc64(sizeof *v * 2 * (sqlite3_uint64)hdr->ncol);
      if (!v)
        rc = SQLITE_NOMEM;
      else {
        memset(v, 0, sizeof *v * 2 * (size_t)hdr->ncol);
        it->vals = v;
        it->nvals = 2 * hdr->ncol;
        it->tab = hdr->tab;
        it->ncol = hdr->ncol;
        it->pk = hdr->pk;
        it->patch = hdr->patch;
      }
      while (rc == SQLITE_OK && sqlite3changeset_next(it) == SQLITE_ROW) rc = apply_one(it, p, tab);
      int rc2 = sqlite3changeset_finalize(it);
      if (!rc) rc = rc2;
    }
    if (!rc && p->put_aside.n >= recs.n) p->defer = 0; /* no progress */
    sqlite3_free(recs.a);
  }
  return rc;
}

/* Reads the target table; *fits 0 when it does not fit the changeset's
 * (then skipped, with SQLite's log message). */
static int table_fits(Apply *p, sqlite3_changeset_iter *it, int *fits) {
  *fits = 0;
  int n;
  int rc = sess_table_info(p->db, "main", it->tab, &n, &p->pk, &p->cols);
  if (rc) return rc;
  p->ncol = n;
  int min = 0;
  for (int i = 0; i < n; i++)
    if (p->pk[i]) min = i + 1;
  if (n == 0) {
    sqlite3_log(SQLITE_SCHEMA, "sqlite3changeset_apply(): no such table: %s", it->tab);
  } else if (n < it->ncol) {
    sqlite3_log(SQLITE_SCHEMA,
                "sqlite3changeset_apply(): table %s has %d columns, expected %d or more", it->tab,
                n, it->ncol);
  } else if (it->ncol < min || memcmp(p->pk, it->pk, (size_t)it->ncol)) {
    sqlite3_log(SQLITE_SCHEMA, "sqlite3changeset_apply(): primary key mismatch for table %s",
                it->tab);
  } else {
    *fits = 1;
    for (int i = it->ncol; i < n; i++) sqlite3_free(p->cols[i]);
    p->ncol = it->ncol;
  }
  return SQLITE_OK;
}

static int apply_all(sqlite3 *db, sqlite3_changeset_iter *it, int (*filter)(void *, const char *),
                     ConflictFn conflict, void *ctx, int flags, void **prebase, int *pnrebase) {
  Apply ap;
  memset(&ap, 0, sizeof ap);
  ap.want_rebase = prebase && pnrebase;
  ap.db = db;
  ap.conflict = conflict;
  ap.ctx = ctx;
  ap.defer = 1;
  ap.invert = (flags & SQLITE_CHANGESETAPPLY_INVERT) != 0;
  int save = !(flags & SQLITE_CHANGESETAPPLY_NOSAVEPOINT);
  int rc = SQLITE_OK;
  if (save) rc = sqlite3_exec(db, "SAVEPOINT changeset_apply", NULL, NULL, NULL);
  if (!rc) rc = sqlite3_exec(db, "PRAGMA defer_foreign_keys = 1", NULL, NULL, NULL);
  char *tab = NULL;
  int skip = 0;
  sqlite3_changeset_iter hdr;
  memset(&hdr, 0, sizeof hdr);
  while (rc == SQLITE_OK && sqlite3changeset_next(it) == SQLITE_ROW) {
    if (!tab || strcmp(it->tab, tab)) {
      if (tab && !skip) rc = retry_put_aside(&ap, &hdr, tab);
      if (rc) break;
      apply_reset(&ap);
      sqlite3_free(tab);
      tab = sqlite3_mprintf("%s", it->tab);
      if (!tab) {
        rc = SQLITE_NOMEM;
        break;
      }
      hdr = *it;
      skip = filter && !filter(ctx, it->tab);
      if (!skip) {
        int fits;
        rc = table_fits(&ap, it, &fits);
        if (!rc && fits) rc = apply_statements(&ap, tab);
        skip = !fits;
      }
      if (rc) break;
    }
    if (!skip) rc = apply_one(it, &ap, tab);
  }
  int patch = it->patch;
  int rc2 = sqlite3changeset_finalize(it);
  if (!rc) rc = rc2;
  if (!rc && tab && !skip) rc = retry_put_aside(&ap, &hdr, tab);
  apply_reset(&ap);
  sqlite3_free(tab);
  if (!rc) {
    int nfk = 0, hi = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_DEFERRED_FKS, &nfk, &hi, 0);
    if (nfk) {
      sqlite3_changeset_iter fk;
      memset(&fk, 0, sizeof fk);
      fk.nfk = nfk;
      fk.ncol = nfk;
      if (conflict(ctx, SQLITE_CHANGESET_FOREIGN_KEY, &fk) != SQLITE_CHANGESET_OMIT)
        rc = SQLITE_CONSTRAINT;
    }
  }
  sqlite3_exec(db, "PRAGMA defer_foreign_keys = 0", NULL, NULL, NULL);
  if (save) {
    if (!rc) {
      rc = sqlite3_exec(db, "RELEASE changeset_apply", NULL, NULL, NULL);
    } else {
      sqlite3_exec(db, "ROLLBACK TO changeset_apply", NULL, NULL, NULL);
      sqlite3_exec(db, "RELEASE changeset_apply", NULL, NULL, NULL);
    }
  }
  if (!rc && ap.want_rebase && !patch && ap.rebase.n <= 0x7fffffff) {
    *prebase = ap.rebase.a;
    *pnrebase = (int)ap.rebase.n;
  } else {
    sqlite3_free(ap.rebase.a);
  }
  return rc;
}

int sqlite3changeset_apply_v2(sqlite3 *db, int n, void *data, int (*filter)(void *, const char *),
                              ConflictFn conflict, void *ctx, void **prebase, int *pnrebase,
                              int flags) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  sqlite3_changeset_iter *it = NULL;
  int rc = sess_iter_start(&it, n, data, (flags & SQLITE_CHANGESETAPPLY_INVERT) != 0);
  if (rc) return rc;
  return apply_all(db, it, filter, conflict, ctx, flags, prebase, pnrebase);
}

int sqlite3changeset_apply(sqlite3 *db, int n, void *data, int (*filter)(void *, const char *),
                           ConflictFn conflict, void *ctx) {
  return sqlite3changeset_apply_v2(db, n, data, filter, conflict, ctx, NULL, NULL, 0);
}

int sqlite3changeset_apply_v2_strm(sqlite3 *db, int (*in)(void *, void *, int *), void *arg,
                                   int (*filter)(void *, const char *), ConflictFn conflict,
                                   void *ctx, void **prebase, int *pnrebase, int flags) {
  int n;
  void *data;
  int rc = sess_read_stream(in, arg, &n, &data);
  if (rc) return rc;
  rc = sqlite3changeset_apply_v2(db, n, data, filter, conflict, ctx, prebase, pnrebase, flags);
  sqlite3_free(data);
  return rc;
}

int sqlite3changeset_apply_strm(sqlite3 *db, int (*in)(void *, void *, int *), void *arg,
                                int (*filter)(void *, const char *), ConflictFn conflict,
                                void *ctx) {
  return sqlite3changeset_apply_v2_strm(db, in, arg, filter, conflict, ctx, NULL, NULL, 0);
}
