/*
 * api_hooks.c -- a connection's hooks and handlers, as SQLite's C API has
 * them: commit/rollback/update/WAL hooks, the authorizer's registration,
 * tracing (trace_v2, legacy trace and profile), the progress handler, the
 * busy handler, db_status/stmt_status, run-time limits and
 * table_column_metadata.
 *
 * Owns: the callback fields of struct shale (api_int.h) and the trampolines
 * in db->hooks that the Vm calls (vm.h VmConnHooks).
 *
 * Invariants:
 *  1. A db->hooks observer pointer (commit, rollback, update, progress) is
 *     non-NULL exactly when the user's callback is set, so a connection
 *     without hooks pays one NULL test per event.
 *  2. Every transaction end goes through the Vm's halt (which calls the
 *     trampolines) or api_commit/api_rollback here, so a hook sees each
 *     commit and rollback of a write transaction once.
 *  3. sqlite3_busy_handler and sqlite3_busy_timeout replace each other: at
 *     most one of busy_cb / busy_ms is set; api_busy serves both for read
 *     locks (the pager's handler) and write locks (the step loop's retry).
 *  4. Limits: limits[] holds the current values, each within [0, the hard
 *     maximum] (SQLite's clamping); the compile environment and the places
 *     that enforce them read it.
 *  5. The progress handler counts Shale's VM ops (vm.h), not SQLite's.
 */
#include <string.h>

#include "../os/os.h"
#include "api_int.h"

/* ------------------------------------------------------- VM trampolines */

static int tramp_commit(void *ctx) {
  shale *db = ctx;
  return db->cb.commit ? db->cb.commit(db->cb.commit_arg) : 0;
}
static void tramp_rollback(void *ctx) {
  shale *db = ctx;
  if (db->cb.rollback) db->cb.rollback(db->cb.rollback_arg);
}
static void tramp_update(void *ctx, int op, int idb, const char *tab, int64_t rowid) {
  shale *db = ctx;
  if (db->cb.update) db->cb.update(db->cb.update_arg, op, api_db_name(db, idb), tab, rowid);
}
static void tramp_trace(void *ctx, const char *text) {
  shale *db = ctx;
  if ((db->cb.trace_mask & SHALE_TRACE_STMT) && db->cb.trace)
    db->cb.trace(SHALE_TRACE_STMT, db->cb.trace_arg, db->stepping, (void *)text);
  else if (db->cb.trace_legacy)
    db->cb.trace_legacy(db->cb.trace_legacy_arg, text);
}

/* Trigger programs report to the trace hook only while someone listens. */
static void trace_hook_update(shale *db) {
  int on = ((db->cb.trace_mask & SHALE_TRACE_STMT) && db->cb.trace) || db->cb.trace_legacy;
  db->hooks.trace = on ? tramp_trace : NULL;
}

static int tramp_progress(void *ctx) {
  shale *db = ctx;
  return db->cb.progress ? db->cb.progress(db->cb.progress_arg) : 0;
}

/* Hard maxima (SQLite 3.40.1's compile-time SQLITE_MAX_*) and defaults. */
static const int limit_max[SHALE_LIMIT_WORKER_THREADS + 1] = {
    1000000000, 1000000000, 2000, 1000, 500, 250000000, 127, 10, 50000, 250000, 1000, 8};
static const int limit_default[SHALE_LIMIT_WORKER_THREADS + 1] = {
    1000000000, 1000000000, 2000, 1000, 500, 250000000, 127, 10, 50000, 250000, 1000, 0};

void api_hooks_init(shale *db) {
  db->hooks.interrupt = &db->interrupted;
  db->hooks.check_gen++;
  memcpy(db->set.limits, limit_default, sizeof db->set.limits);
}

/* ---------------------------------------------------------- registration */

static void *commit_hook_impl(shale *db, int (*cb)(void *), void *arg) {
  if (!db) return NULL;
  void *old = db->cb.commit_arg;
  db->cb.commit = cb;
  db->cb.commit_arg = arg;
  db->hooks.commit = cb ? tramp_commit : NULL;
  return old;
}

static void *rollback_hook_impl(shale *db, void (*cb)(void *), void *arg) {
  if (!db) return NULL;
  void *old = db->cb.rollback_arg;
  db->cb.rollback = cb;
  db->cb.rollback_arg = arg;
  db->hooks.rollback = cb ? tramp_rollback : NULL;
  return old;
}

static void *update_hook_impl(shale *db,
                              void (*cb)(void *, int, const char *, const char *, int64_t),
                              void *arg) {
  if (!db) return NULL;
  void *old = db->cb.update_arg;
  db->cb.update = cb;
  db->cb.update_arg = arg;
  db->hooks.update = cb ? tramp_update : NULL;
  return old;
}

static void *wal_hook_impl(shale *db, int (*cb)(void *, shale *, const char *, int), void *arg) {
  if (!db) return NULL;
  /* SQLite's autocheckpoint is a WAL hook whose argument is its N */
  void *old = db->cb.wal ? db->cb.wal_arg : (void *)(intptr_t)db->set.wal_autocheckpoint;
  db->cb.wal = cb;
  db->cb.wal_arg = arg;
  if (cb && db->dbx[0].bt) db->count.wal_frames = pager_wal_frames(btree_pager(db->dbx[0].bt));
  return old;
}

static int set_authorizer_impl(shale *db,
                               int (*cb)(void *, int, const char *, const char *, const char *,
                                         const char *),
                               void *arg) {
  if (!db) return SHALE_MISUSE;
  db->cb.auth = cb;
  db->cb.auth_arg = cb ? arg : NULL;
  /* statements compiled under another authorizer are recompiled (as SQLite
   * expires them) */
  db->cb.auth_gen++;
  return SHALE_OK;
}

static void progress_handler_impl(shale *db, int n, int (*cb)(void *), void *arg) {
  if (!db) return;
  if (n > 0 && cb) {
    db->cb.progress = cb;
    db->cb.progress_arg = arg;
    db->hooks.progress_n = n;
    db->hooks.progress = tramp_progress;
  } else {
    db->cb.progress = NULL;
    db->cb.progress_arg = NULL;
    db->hooks.progress_n = 0;
    db->hooks.progress = NULL;
  }
  db->hooks.check_gen++; /* running statements reschedule their checks */
}

/* ----------------------------------------------------- commit / rollback */

/* A failed super-journal commit: every database's transaction is rolled
 * back (the journals are intact), as SQLite does after a failed commit. */
static void rollback_all_failed(shale *db) {
  for (int i = 0; i < db->ndb; i++) {
    Btree *b = api_db_bt(db, i);
    if (b && btree_txn_state(b) != PAGER_TXN_NONE) btree_rollback(b);
  }
  if (db->cb.rollback) db->cb.rollback(db->cb.rollback_arg);
}

/* Several journal files commit atomically through a super-journal
 * (btree_commit_super); the others are committed by the caller. */
static int commit_super(shale *db, int write_only, int *done) {
  Btree *bts[API_MAX_DB];
  for (int i = 0; i < db->ndb; i++) bts[i] = api_db_bt(db, i);
  int rc = btree_commit_super(bts, db->ndb, write_only, done);
  if (!*done) return SHALE_OK;
  if (rc != SHALE_OK) {
    rollback_all_failed(db);
    return rc;
  }
  for (int i = 0; i < db->ndb; i++) {
    Btree *b = bts[i];
    if (!b || btree_txn_state(b) == PAGER_TXN_NONE) continue;
    if (write_only && btree_txn_state(b) != PAGER_TXN_WRITE) continue;
    int r2 = write_only ? btree_commit_write(b) : btree_commit(b);
    if (rc == SHALE_OK) rc = r2;
  }
  return rc;
}

/* Commit (write_only: btree_commit_write) every database in a transaction,
 * after the commit hook's say when one of them writes. Several journal
 * files commit atomically through a super-journal (commit_super); otherwise
 * each database commits on its own, and after a failure the rest are
 * rolled back. */
static int commit_files(shale *db, char **errmsg, int write_only);

static int commit_all(shale *db, char **errmsg, int write_only) {
  if (vtab_in_txn(&db->vtabs)) { /* virtual tables: xSync first, as SQLite */
    char *m = NULL;
    /* Statements a module runs in xSync (fts5 writes its shadow tables)
     * belong to this transaction: counted active, none of them ends it. */
    int saved_txn = db->txn.api_txn;
    db->txn.nactive++;
    db->txn.vtab_syncing++;
    int vrc = vtab_sync(&db->vtabs, &m);
    db->txn.vtab_syncing--;
    db->txn.nactive--;
    db->txn.api_txn = saved_txn;
    if (vrc != SHALE_OK) {
      if (errmsg)
        *errmsg = m ? m : util_strdup(shale_errstr(vrc));
      else
        shale_free(m);
      return vrc;
    }
  }
  int rc = commit_files(db, errmsg, write_only);
  if (rc == SHALE_OK)
    vtab_commit(&db->vtabs); /* xCommit after the files */
  else
    vtab_rollback(&db->vtabs);
  return rc;
}

static int commit_files(shale *db, char **errmsg, int write_only) {
  if (api_any_txn(db, PAGER_TXN_WRITE) && db->cb.commit && db->cb.commit(db->cb.commit_arg)) {
    /* the readers' cursors now fail with ABORT_ROLLBACK, as SQLite */
    for (int i = 0; i < db->ndb; i++) {
      Btree *b = api_db_bt(db, i);
      if (b && btree_txn_state(b) != PAGER_TXN_NONE &&
          (!write_only || btree_txn_state(b) == PAGER_TXN_WRITE))
        btree_rollback(b);
    }
    if (db->cb.rollback) db->cb.rollback(db->cb.rollback_arg);
    if (errmsg) *errmsg = util_strdup("constraint failed");
    return SHALE_CONSTRAINT_COMMITHOOK;
  }
  int done = 0;
  int rc = commit_super(db, write_only, &done);
  if (done) {
    if (rc != SHALE_OK && errmsg) *errmsg = util_strdup(shale_errstr(rc));
    if (rc == SHALE_OK) api_wal_notify(db);
    return rc;
  }
  for (int i = 0; i < db->ndb; i++) {
    Btree *b = api_db_bt(db, i);
    if (!b) continue;
    int st = btree_txn_state(b);
    if (st == PAGER_TXN_NONE || (write_only && st != PAGER_TXN_WRITE && i > 0)) continue;
    if (rc != SHALE_OK) {
      btree_rollback(b);
      continue;
    }
    rc = write_only ? btree_commit_write(b) : btree_commit(b);
    if (rc != SHALE_OK && errmsg) *errmsg = util_strdup(shale_errstr(rc));
  }
  if (rc != SHALE_OK) return rc;
  api_wal_notify(db);
  return SHALE_OK;
}

int api_commit(shale *db, char **errmsg) { return commit_all(db, errmsg, 0); }

int api_commit_write(shale *db, char **errmsg) { return commit_all(db, errmsg, 1); }

void api_rollback(shale *db, int explicit_txn) {
  int wr = 0;
  for (int i = 0; i < db->ndb; i++) {
    Btree *b = api_db_bt(db, i);
    if (!b) continue;
    if (btree_txn_state(b) == PAGER_TXN_WRITE) wr = 1;
    if (btree_txn_state(b) != PAGER_TXN_NONE) btree_rollback(b);
  }
  vtab_rollback(&db->vtabs); /* xRollback of the virtual tables in the transaction */
  if ((wr || explicit_txn) && db->cb.rollback) db->cb.rollback(db->cb.rollback_arg);
}

void api_wal_notify(shale *db) {
  if (!db->cb.wal || !db->dbx[0].bt) return;
  int n = pager_wal_frames(btree_pager(db->dbx[0].bt));
  if (n == db->count.wal_frames) return;
  db->count.wal_frames = n;
  if (n > 0) db->cb.wal(db->cb.wal_arg, db, api_db_name(db, 0), n);
}

/* ------------------------------------------------------------------ busy */

int api_busy(shale *db, int count) {
  if (db->cb.busy) return db->cb.busy(db->cb.busy_arg, count);
  if (db->set.busy_ms > 0) return pager_busy_wait(&db->set.busy_ms, count);
  return 0;
}

/* The pager's handler (read locks): its own retry loop counts. */
static int busy_tramp(void *arg, int count) {
  shale *db = arg;
  db->cb.busy_ran = 1;
  return api_busy(db, count);
}

static int busy_handler_impl(shale *db, int (*cb)(void *, int), void *arg) {
  if (!db) return SHALE_MISUSE;
  db->cb.busy = cb;
  db->cb.busy_arg = cb ? arg : NULL;
  db->set.busy_ms = 0;
  if (db->dbx[0].bt)
    pager_set_busy_handler(btree_pager(db->dbx[0].bt), cb ? busy_tramp : NULL, cb ? db : NULL);
  return SHALE_OK;
}

static int busy_timeout_impl(shale *db, int ms) {
  if (!db) return SHALE_MISUSE;
  db->cb.busy = NULL;
  db->cb.busy_arg = NULL;
  db->set.busy_ms = ms > 0 ? ms : 0;
  if (db->dbx[0].bt)
    pager_set_busy_handler(btree_pager(db->dbx[0].bt), ms > 0 ? busy_tramp : NULL,
                           ms > 0 ? db : NULL);
  return SHALE_OK;
}

/* --------------------------------------------------------------- tracing */

static int trace_v2_impl(shale *db, unsigned mask, int (*cb)(unsigned, void *, void *, void *),
                         void *arg) {
  if (!db) return SHALE_MISUSE;
  if (!cb) mask = 0;
  db->cb.trace_mask = mask;
  db->cb.trace = mask ? cb : NULL;
  db->cb.trace_arg = mask ? arg : NULL;
  db->cb.trace_legacy = NULL; /* one trace slot, as SQLite */
  db->cb.trace_legacy_arg = NULL;
  trace_hook_update(db);
  return SHALE_OK;
}

static void *trace_impl(shale *db, void (*cb)(void *, const char *), void *arg) {
  if (!db) return NULL;
  void *old = db->cb.trace_legacy_arg;
  db->cb.trace_mask = 0;
  db->cb.trace = NULL;
  db->cb.trace_arg = NULL;
  db->cb.trace_legacy = cb;
  db->cb.trace_legacy_arg = arg;
  trace_hook_update(db);
  return old;
}

static void *profile_impl(shale *db, void (*cb)(void *, const char *, uint64_t), void *arg) {
  if (!db) return NULL;
  void *old = db->cb.profile_arg;
  db->cb.profile = cb;
  db->cb.profile_arg = arg;
  return old;
}

static int tracing(shale *db) { return db->cb.trace_mask || db->cb.trace_legacy || db->cb.profile; }

void api_trace_start(shale_stmt *st) {
  shale *db = st->db;
  if (!tracing(db)) return;
  st->t_start = 0;
  if ((db->cb.trace_mask & SHALE_TRACE_PROFILE) || db->cb.profile) {
    st->t_start = os_now_ms();
    if (st->t_start == 0) st->t_start = 1;
  }
  if ((db->cb.trace_mask & SHALE_TRACE_STMT) && db->cb.trace) {
    db->cb.trace(SHALE_TRACE_STMT, db->cb.trace_arg, st, (void *)(st->sql ? st->sql : ""));
  } else if (db->cb.trace_legacy) {
    char *z = shale_expanded_sql(st);
    db->cb.trace_legacy(db->cb.trace_legacy_arg, z ? z : (st->sql ? st->sql : ""));
    shale_free(z);
  }
}

void api_trace_row(shale_stmt *st) {
  shale *db = st->db;
  if ((db->cb.trace_mask & SHALE_TRACE_ROW) && db->cb.trace)
    db->cb.trace(SHALE_TRACE_ROW, db->cb.trace_arg, st, NULL);
}

void api_trace_end(shale_stmt *st) {
  shale *db = st->db;
  if (!st->t_start) return;
  int64_t ns = (os_now_ms() - st->t_start) * 1000000;
  if (ns < 0) ns = 0;
  st->t_start = 0;
  if ((db->cb.trace_mask & SHALE_TRACE_PROFILE) && db->cb.trace)
    db->cb.trace(SHALE_TRACE_PROFILE, db->cb.trace_arg, st, &ns);
  else if (db->cb.profile)
    db->cb.profile(db->cb.profile_arg, st->sql ? st->sql : "", (uint64_t)ns);
}

void api_trace_close(shale *db) {
  if ((db->cb.trace_mask & SHALE_TRACE_CLOSE) && db->cb.trace)
    db->cb.trace(SHALE_TRACE_CLOSE, db->cb.trace_arg, db, NULL);
}

/* ---------------------------------------------------------------- status */

static int db_status_impl(shale *db, int op, int *cur, int *hi, int reset) {
  if (!db || !cur || !hi) return SHALE_MISUSE;
  PagerStats ps;
  memset(&ps, 0, sizeof ps);
  if (db->dbx[0].bt) pager_stats(btree_pager(db->dbx[0].bt), &ps);
  int psz = db->dbx[0].bt ? (int)pager_page_size(btree_pager(db->dbx[0].bt)) : 4096;
  *hi = 0;
  switch (op) {
    case SHALE_DBSTATUS_LOOKASIDE_USED:
    case SHALE_DBSTATUS_LOOKASIDE_HIT:
    case SHALE_DBSTATUS_LOOKASIDE_MISS_SIZE:
    case SHALE_DBSTATUS_LOOKASIDE_MISS_FULL:
      *cur = 0; /* Shale has no lookaside allocator */
      return SHALE_OK;
    case SHALE_DBSTATUS_CACHE_USED:
    case SHALE_DBSTATUS_CACHE_USED_SHARED:
      /* page plus its header, roughly, and the pager's own page-sized
       * buffer (as SQLite counts its pager's) */
      *cur = db->dbx[0].bt ? ps.cached * (psz + 200) + psz : 0;
      return SHALE_OK;
    case SHALE_DBSTATUS_SCHEMA_USED: {
      long n = 0;
      if (db->dbx[0].schema) {
        const SchemaMap *m = &db->dbx[0].schema->s->tables;
        for (int i = 0; i < m->cap; i++) {
          const Table *t = m->slots[i].key ? m->slots[i].val : NULL;
          if (t) n += 400 + 64L * t->ncol;
        }
        n += 200L * (db->dbx[0].schema->s->indexes.n + db->dbx[0].schema->s->views.n +
                     db->dbx[0].schema->s->triggers.n);
      }
      *cur = (int)n;
      return SHALE_OK;
    }
    case SHALE_DBSTATUS_STMT_USED: {
      long n = 0;
      for (shale_stmt *s = db->stmts; s; s = s->next)
        n += (long)sizeof *s + (s->cs.prog ? (long)s->cs.prog->nop * (long)sizeof(VmOp) : 0);
      *cur = (int)n;
      return SHALE_OK;
    }
    case SHALE_DBSTATUS_CACHE_HIT:
    case SHALE_DBSTATUS_CACHE_MISS:
    case SHALE_DBSTATUS_CACHE_WRITE:
    case SHALE_DBSTATUS_CACHE_SPILL: {
      int k = op == SHALE_DBSTATUS_CACHE_HIT     ? 0
              : op == SHALE_DBSTATUS_CACHE_MISS  ? 1
              : op == SHALE_DBSTATUS_CACHE_WRITE ? 2
                                                 : 3;
      long v = k == 0 ? ps.hits : k == 1 ? ps.misses : k == 2 ? ps.writes : ps.spills;
      *cur = (int)(v - db->count.stat_base[k]);
      if (reset) db->count.stat_base[k] = v;
      return SHALE_OK;
    }
    case SHALE_DBSTATUS_DEFERRED_FKS:
      *cur = db->txn.deferred_fk > 0 || db->txn.deferred_imm_fk > 0;
      return SHALE_OK;
    default:
      return SHALE_ERROR;
  }
}

void api_stmt_keep_stats(shale_stmt *st) {
  if (!st->vm) return;
  for (int k = SHALE_STMTSTATUS_FULLSCAN_STEP; k <= SHALE_STMTSTATUS_VM_STEP; k++)
    st->stat[k] += vm_stat(st->vm, k);
}

static int stmt_status_impl(shale_stmt *st, int op, int reset) {
  if (!st) return 0;
  int64_t v = 0;
  switch (op) {
    case SHALE_STMTSTATUS_FULLSCAN_STEP:
    case SHALE_STMTSTATUS_SORT:
    case SHALE_STMTSTATUS_AUTOINDEX:
    case SHALE_STMTSTATUS_VM_STEP: {
      int64_t live = st->vm ? vm_stat(st->vm, op) : 0;
      v = st->stat[op] + live;
      if (reset) st->stat[op] = -live;
      break;
    }
    case SHALE_STMTSTATUS_REPREPARE:
    case SHALE_STMTSTATUS_RUN:
      v = st->stat[op == SHALE_STMTSTATUS_RUN ? 6 : 5];
      if (reset) st->stat[op == SHALE_STMTSTATUS_RUN ? 6 : 5] = 0;
      break;
    case SHALE_STMTSTATUS_FILTER_MISS:
    case SHALE_STMTSTATUS_FILTER_HIT:
      v = 0; /* Shale has no Bloom filters */
      break;
    case SHALE_STMTSTATUS_MEMUSED:
      v = (int64_t)sizeof *st + (st->sql ? (int64_t)strlen(st->sql) + 1 : 0) +
          (st->cs.prog ? (int64_t)st->cs.prog->nop * (int64_t)sizeof(VmOp) +
                             (int64_t)st->cs.prog->nreg * (int64_t)sizeof(ShValue)
                       : 0);
      break;
    default:
      return 0;
  }
  return v > INT32_MAX ? INT32_MAX : (int)v;
}

/* ---------------------------------------------------------------- limits */

static int limit_impl(shale *db, int id, int newval) {
  if (!db || id < 0 || id > SHALE_LIMIT_WORKER_THREADS) return -1;
  int old = db->set.limits[id];
  if (newval >= 0) {
    if (newval > limit_max[id]) newval = limit_max[id];
    if (id == SHALE_LIMIT_WORKER_THREADS && newval > 8) newval = 8;
    /* a cached program was checked against the old value (SQL length,
     * columns, depth, compound terms, arguments, variables, trigger depth) */
    if (newval != old) api_cache_clear(db);
    db->set.limits[id] = newval;
    db->hooks.max_length = db->set.limits[SHALE_LIMIT_LENGTH];
    db->hooks.max_like_pattern = db->set.limits[SHALE_LIMIT_LIKE_PATTERN_LENGTH];
  }
  return old;
}

/* ------------------------------------------------------ column metadata */

static int table_column_metadata_impl(shale *db, const char *zdb, const char *table,
                                      const char *col, char const **type, char const **coll,
                                      int *notnull, int *pk, int *autoinc) {
  if (!db || !table) return SHALE_MISUSE;
  const char *ztype = NULL, *zcoll = NULL;
  int nn = 0, ispk = 0, ai = 0;
  int rc = api_schema_current(db);
  if (rc != SHALE_OK) return rc;
  Table *t = NULL;
  if (api_is_main(db, zdb)) t = schema_find_table(db->dbx[0].schema->s, table);
  if (!t) {
    api_error(db, SHALE_ERROR, "no such table column: %s.%s", table, col ? col : "");
    return SHALE_ERROR;
  }
  if (col) {
    int i = 0;
    while (i < t->ncol && util_stricmp(t->cols[i].name, col)) i++;
    if (i < t->ncol) {
      const Column *c = &t->cols[i];
      ztype = c->type;
      zcoll = c->coll;
      nn = c->notnull != 0;
      ispk = c->pk != 0;
      ai = ispk && t->autoincrement;
    } else if (!t->without_rowid && (!util_stricmp(col, "rowid") || !util_stricmp(col, "oid") ||
                                     !util_stricmp(col, "_rowid_"))) {
      if (t->rowid_alias >= 0) {
        const Column *c = &t->cols[t->rowid_alias];
        ztype = c->type;
        zcoll = c->coll;
        nn = c->notnull != 0;
        ai = t->autoincrement;
      } else {
        ztype = "INTEGER";
      }
      ispk = 1;
    } else {
      api_error(db, SHALE_ERROR, "no such table column: %s.%s", table, col);
      return SHALE_ERROR;
    }
  }
  if (!zcoll) zcoll = "BINARY";
  if (t->is_schema && ztype) /* SQLite declares its schema table's columns in upper case */
    ztype = !util_stricmp(ztype, "text") ? "TEXT" : !util_stricmp(ztype, "int") ? "INT" : ztype;
  if (type) *type = ztype;
  if (coll) *coll = zcoll;
  if (notnull) *notnull = nn;
  if (pk) *pk = ispk;
  if (autoinc) *autoinc = ai;
  api_error(db, SHALE_OK, NULL);
  return SHALE_OK;
}

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

void *shale_commit_hook(shale *db, int (*cb)(void *), void *arg) {
  API_DB_CALL(db, NULL, commit_hook_impl(db, cb, arg));
}

void *shale_rollback_hook(shale *db, void (*cb)(void *), void *arg) {
  API_DB_CALL(db, NULL, rollback_hook_impl(db, cb, arg));
}

void *shale_update_hook(shale *db, void (*cb)(void *, int, const char *, const char *, int64_t),
                        void *arg) {
  API_DB_CALL(db, NULL, update_hook_impl(db, cb, arg));
}

/* The schema name of bt, also while a PRAGMA lets another database stand
 * in for main (pragma.c); NULL if bt is none of the connection's. */
static const char *autovac_schema(shale *db, Btree *bt) {
  if (db->pragma_standin) {
    if (bt == db->dbx[0].bt) return api_db_name(db, db->pragma_standin);
    if (bt == db->standin.bt) return api_db_name(db, 0);
  }
  int i = api_db_of_bt(db, bt);
  return i < 0 ? NULL : api_db_name(db, i);
}

/* The B-tree layer asks with its Btree: the callback gets the schema's
 * name. */
static uint32_t autovac_tramp(void *arg, Btree *bt, uint32_t npages, uint32_t nfree,
                              uint32_t page_size) {
  shale *db = arg;
  const char *name = autovac_schema(db, bt);
  if (!name || !db->cb.avac) return nfree;
  return db->cb.avac(db->cb.avac_arg, name, npages, nfree, page_size);
}

void api_autovac_install(shale *db, Btree *bt) {
  if (bt) btree_set_autovac_pages(bt, db->cb.avac ? autovac_tramp : NULL, db);
}

void api_autovac_free(shale *db) {
  if (db->cb.avac_destroy) db->cb.avac_destroy(db->cb.avac_arg);
  db->cb.avac_destroy = NULL;
}

/* As SQLite: the previous destructor runs, and the new one is kept even
 * with a NULL callback (it runs at close or at the next replacement). */
static int autovac_pages_impl(shale *db,
                              unsigned (*cb)(void *, const char *, unsigned, unsigned, unsigned),
                              void *arg, void (*destroy)(void *)) {
  api_autovac_free(db);
  db->cb.avac = cb;
  db->cb.avac_arg = arg;
  db->cb.avac_destroy = destroy;
  for (int i = 0; i < db->ndb; i++) api_autovac_install(db, api_db_bt(db, i));
  return SHALE_OK;
}

int shale_autovacuum_pages(shale *db,
                           unsigned (*cb)(void *, const char *, unsigned, unsigned, unsigned),
                           void *arg, void (*destroy)(void *)) {
  API_DB_CALL(db, SHALE_MISUSE, autovac_pages_impl(db, cb, arg, destroy));
}

void *shale_wal_hook(shale *db, int (*cb)(void *, shale *, const char *, int), void *arg) {
  API_DB_CALL(db, NULL, wal_hook_impl(db, cb, arg));
}

int shale_set_authorizer(shale *db,
                         int (*cb)(void *, int, const char *, const char *, const char *,
                                   const char *),
                         void *arg) {
  API_DB_CALL(db, SHALE_MISUSE, set_authorizer_impl(db, cb, arg));
}

void shale_progress_handler(shale *db, int n, int (*cb)(void *), void *arg) {
  if (!api_db_enter(db)) return;
  progress_handler_impl(db, n, cb, arg);
  api_leave(db);
}

int shale_busy_handler(shale *db, int (*cb)(void *, int), void *arg) {
  API_DB_CALL(db, SHALE_MISUSE, busy_handler_impl(db, cb, arg));
}

int shale_busy_timeout(shale *db, int ms) {
  API_DB_CALL(db, SHALE_MISUSE, busy_timeout_impl(db, ms));
}

int shale_trace_v2(shale *db, unsigned mask, int (*cb)(unsigned, void *, void *, void *),
                   void *arg) {
  API_DB_CALL(db, SHALE_MISUSE, trace_v2_impl(db, mask, cb, arg));
}

void *shale_trace(shale *db, void (*cb)(void *, const char *), void *arg) {
  API_DB_CALL(db, NULL, trace_impl(db, cb, arg));
}

void *shale_profile(shale *db, void (*cb)(void *, const char *, uint64_t), void *arg) {
  API_DB_CALL(db, NULL, profile_impl(db, cb, arg));
}

int shale_db_status(shale *db, int op, int *cur, int *hi, int reset) {
  API_DB_CALL(db, SHALE_MISUSE, db_status_impl(db, op, cur, hi, reset));
}

int shale_stmt_status(shale_stmt *st, int op, int reset) {
  API_ST_CALL(st, 0, stmt_status_impl(st, op, reset));
}

int shale_limit(shale *db, int id, int newval) { API_DB_CALL(db, -1, limit_impl(db, id, newval)); }

int shale_table_column_metadata(shale *db, const char *zdb, const char *table, const char *col,
                                char const **type, char const **coll, int *notnull, int *pk,
                                int *autoinc) {
  API_DB_CALL(db, SHALE_MISUSE,
              table_column_metadata_impl(db, zdb, table, col, type, coll, notnull, pk, autoinc));
}
