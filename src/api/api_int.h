/*
 * api_int.h -- internals of the native API (src/api/): the connection
 * (struct shale), prepared statements (struct shale_stmt), materialized
 * result sets for PRAGMA/EXPLAIN, and the statement cache.
 *
 * Owns: everything a connection allocated: its Btree, its loaded schemas
 * (reference counted: a statement keeps the schema it was compiled against
 * alive), its function registry, its statements and cached programs.
 *
 * Invariants:
 *  1. db->dbx[0].schema is main's current in-memory schema (NULL until first needed).
 *     A statement compiled against an older ApiSchema is recompiled before
 *     its next run; an ApiSchema is freed when its last reference goes.
 *  2. db->txn.autocommit == 1 unless BEGIN or SAVEPOINT opened a transaction.
 *     In autocommit mode a statement that starts while no transaction is
 *     open runs with VM_AUTOCOMMIT (its Vm ends the transaction); one that
 *     starts while active statements hold a transaction makes the API take it
 *     over (vm_release_txn): db->txn.api_txn, ended when the last active
 *     statement stops.
 *  3. SQL savepoints are db->txn.sp[0..nsp); while the B-tree is in a write
 *     transaction the pager has exactly nsp savepoints open outside a
 *     running statement (missing ones are opened before a writing statement
 *     runs: pager savepoints opened later equal earlier ones when nothing was
 *     written in between).
 *  4. A statement is "active" (counted in db->txn.nactive) from its first step
 *     until it returns DONE/an error or is reset/finalized.
 *  5. Databases: dbx[0] is main (its name is "main" or db_config
 *     MAINDBNAME's, never dbx[0].name), dbx[1] temp, dbx[2..ndb) attached;
 *     every database is reached as dbx[i] and nothing else. A transaction
 *     spans every database its statements touched: transaction ends,
 *     savepoints and statement journals apply to each database in a
 *     transaction (each commits on its own: no super-journal). A statement
 *     compiled when db->xgen differed recompiles (x.gen).
 *  6. Handles (connections, statements, backups, blob handles) begin with an
 *     ApiHandle whose magic says what they are and whether they are live; it
 *     is read without a lock (relaxed atomics) by every entry point, so the
 *     memory of a handle stays a handle of its kind after it is closed:
 *     statements, backups and blob handles go to a free list of their
 *     connection (reused by the next one, freed with the connection),
 *     connections to a process-wide free list (C allocator, reused by the
 *     next open). A statement's db never changes.
 *  7. Every entry point that takes a handle runs with its connection's mutex
 *     (db->mutex, NULL for SHALE_OPEN_NOMUTEX) held, checking the magic again
 *     once it holds it. The mutex is recursive: callbacks may call back into
 *     the API. Nothing else in the library is locked per call.
 */
#ifndef SHALE_API_INT_H
#define SHALE_API_INT_H

#include <pthread.h>

#include "../btree/btree.h"
#include "../compile/compile.h"
#include "../func/func.h"
#include "../schema/schema.h"
#include "../vm/vm.h"
#include "../vtab/vtab.h"
#include "shale.h"

/* The bytes of one TEXT/BLOB binding (vars[i].z points here, not owned by
 * the value): kept across binds so binding a value allocates only when it
 * is longer than any bound to that parameter before. */
typedef struct ApiVarBuf {
  char *z;
  uint32_t cap;
  uint8_t zero; /* bound by bind_zeroblob (expanded_sql writes zeroblob(N)) */
} ApiVarBuf;

/* ---- handles and the connection mutex (invariants 6, 7) ---- */

enum {
  API_DEAD = 0x0dead000u, /* closed, finalized, finished: on a free list */
  API_DB_OPEN = 0x5348db01u,
  API_DB_ZOMBIE = 0x5348db02u, /* shale_close_v2 with statements or handles left */
  API_STMT_LIVE = 0x5348c001u,
  API_BACKUP_LIVE = 0x5348b001u,
  API_BLOB_LIVE = 0x5348b101u,
};

typedef struct ApiHandle {
  uint32_t magic;
  struct ApiHandle *next_free; /* on a free list when dead */
  shale *owner;                /* statements, backups (destination), blobs: their connection */
} ApiHandle;

static inline uint32_t api_magic(const void *h) {
  return h ? __atomic_load_n(&((const ApiHandle *)h)->magic, __ATOMIC_RELAXED) : 0;
}
static inline void api_set_magic(void *h, uint32_t m) {
  __atomic_store_n(&((ApiHandle *)h)->magic, m, __ATOMIC_RELAXED);
}

/* A recursive mutex. state: 0 free, 1 held, 2 held with waiters (they sleep
 * on cv under wm, api_mutex.c); taking and releasing a free one is one
 * atomic operation each. owner is the holding thread (0 when free), read
 * without the lock only to compare with the caller (only the holder can see
 * itself there); depth is touched by the holder only. */
struct shale_mutex {
  int state;
  int depth;
  uintptr_t owner; /* api_thread_self() of the holder */
  uint8_t is_static;
  pthread_mutex_t wm;
  pthread_cond_t cv;
  /* the application's mutex and methods (shale_config_mutex): the lock is
   * taken through them, depth and owner are still kept here */
  void *app;
  const shale_mutex_methods *am;
  unsigned app_gen; /* the shale_config_mutex call that made app */
};

/* The calling thread's identity as a mutex owner: the address of a
 * thread-local byte (distinct for every live thread, as pthread_self is)
 * read with no call, so that the entry points stay small. The initial-exec
 * model reads it without __tls_get_addr; a library loaded by dlopen takes
 * the byte from the static TLS reserve (api_mutex.c defines it). */
extern _Thread_local char api_thread_tag __attribute__((tls_model("initial-exec")));
static inline uintptr_t api_thread_self(void) { return (uintptr_t)&api_thread_tag; }

void api_mutex_wait(shale_mutex *m); /* slow paths (api_mutex.c) */
void api_mutex_wake(shale_mutex *m);

void api_mutex_app_enter(shale_mutex *m);
void api_mutex_app_leave(shale_mutex *m);
static inline void api_mutex_enter(shale_mutex *m) {
  if (__builtin_expect(m->app != NULL, 0)) {
    api_mutex_app_enter(m);
    return;
  }
  uintptr_t self = api_thread_self();
  if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) == self) {
    m->depth++;
    return;
  }
  int zero = 0;
  if (!__atomic_compare_exchange_n(&m->state, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    api_mutex_wait(m);
  __atomic_store_n(&m->owner, self, __ATOMIC_RELAXED);
  m->depth = 1;
}
static inline void api_mutex_leave(shale_mutex *m) {
  if (__builtin_expect(m->app != NULL, 0)) {
    api_mutex_app_leave(m);
    return;
  }
  if (--m->depth) return;
  __atomic_store_n(&m->owner, (uintptr_t)0, __ATOMIC_RELAXED);
  if (__atomic_exchange_n(&m->state, 0, __ATOMIC_RELEASE) == 2) api_mutex_wake(m);
}

typedef struct ApiSchema {
  Schema *s;
  int refs;
} ApiSchema;

/* Databases of a connection: 0 main, 1 temp (opened in memory at first
 * use), 2.. attached (invariant 5). */
#define API_MAX_DB 12
typedef struct ApiDb {
  char *name;        /* "temp" or the ATTACH name */
  char *filename;    /* as given ("" for memory and temp) */
  Btree *bt;         /* NULL: temp not opened yet */
  ApiSchema *schema; /* NULL until loaded */
  int nbackup;       /* backups reading or writing it (DETACH refuses while > 0) */
  uint8_t memory;    /* a memory database in a named VFS: its file name is "" */
  void *cookie;      /* the ATTACH resolver's (shale_attach_resolver) */
  void (*release)(void *);
} ApiDb;

/* References to the schemas of databases 1.. a program was compiled
 * against (they stay alive while it does), and the generation they had. */
typedef struct ApiXRefs {
  ApiSchema *s[API_MAX_DB];
  int n; /* s[n..] are NULL (the number of databases when taken) */
  unsigned gen;
} ApiXRefs;

/* A materialized result (PRAGMA, EXPLAIN, EXPLAIN QUERY PLAN). */
typedef struct ApiRows {
  int ncol, nrow, cap;
  const char **names; /* ncol names (static or arena) */
  ShValue *v;         /* nrow * ncol values, text/blob owned */
} ApiRows;

/* struct shale_value: src/func/func.h (the vtab layer builds them too) */

/* A cached compiled statement (finalized statements' programs). */
typedef struct ApiCached {
  char *key; /* the text given to prepare (exactly nkey bytes) */
  int nkey;
  uint64_t tail8;   /* text_tail8 of the key: compared first (api.c cache_take) */
  uint8_t semi_end; /* the key ends with ';' (it may be a prefix of a longer text) */
  int tail;         /* offset of the tail in key */
  CompiledStmt cs;
  ApiSchema *schema;
  uint8_t in_txn;
  int settings; /* api_settings() it was compiled with */
  ApiXRefs x;
  struct ApiCached *next, *prev; /* most recently used first (prev: toward the front) */
} ApiCached;

#define API_CACHE_MAX 16
#define API_MAX_SCHEMA_RETRY 50

/* A user collation (api_func.c): c.name is its own copy, c.ctx the user's
 * pointer. */
typedef struct ApiColl {
  Collation c;
  void (*destroy)(void *);
  struct ApiColl *next;
} ApiColl;

/* A user function's callbacks (api_func.c): FuncDef.user_data of its entry. */
typedef struct ApiUdf ApiUdf;

typedef struct ApiSavepoint {
  char *name;
  int64_t deferred_fk, deferred_imm_fk; /* the counters when it began (ROLLBACK TO) */
} ApiSavepoint;

/* shale.pflags */
#define API_PF_AUTOMATIC_INDEX 0x0001
#define API_PF_CELL_SIZE_CHECK 0x0002
#define API_PF_CHECKPOINT_FULLFSYNC 0x0004
#define API_PF_COUNT_CHANGES 0x0008
#define API_PF_EMPTY_RESULT_CALLBACKS 0x0010
#define API_PF_FULL_COLUMN_NAMES 0x0020
#define API_PF_FULLFSYNC 0x0040
#define API_PF_IGNORE_CHECKS 0x0080
#define API_PF_LEGACY_ALTER_TABLE 0x0100
#define API_PF_QUERY_ONLY 0x0200
#define API_PF_READ_UNCOMMITTED 0x0400
#define API_PF_SHORT_COLUMN_NAMES 0x0800
#define API_PF_TRUSTED_SCHEMA 0x1000
#define API_PF_WRITABLE_SCHEMA 0x2000
#define API_PF_CACHE_SPILL 0x4000
#define API_PF_DEFENSIVE 0x8000 /* db_config DEFENSIVE (no pragma of its own) */
#define API_PF_DEFAULT \
  (API_PF_AUTOMATIC_INDEX | API_PF_SHORT_COLUMN_NAMES | API_PF_TRUSTED_SCHEMA | API_PF_CACHE_SPILL)

/* The transaction state of a connection (db->txn). */
typedef struct ApiTxn {
  uint8_t autocommit;   /* invariant 2 */
  uint8_t sp_txn;       /* the transaction was opened by SAVEPOINT */
  uint8_t api_txn;      /* the API ends the autocommit transaction (invariant 2) */
  uint8_t schema_dirty; /* reload the schemas after the current statement */
  uint8_t txn_ddl;      /* the open transaction changed the schema */
  int nsp, capsp;       /* invariant 3 */
  ApiSavepoint *sp;
  int nactive;             /* invariant 4 */
  int vtab_syncing;        /* in the xSync calls of a commit (api_hooks.c commit_all) */
  int64_t deferred_fk;     /* deferred FK violations of the open transaction */
  int64_t deferred_imm_fk; /* immediate ones counted under PRAGMA defer_foreign_keys */
} ApiTxn;

/* What the connection counts (db->count). */
typedef struct ApiCounters {
  int64_t changes, total_changes, last_rowid;
  long cache_hits;   /* statement cache */
  long schema_loads; /* schema (re)loads */
  long stat_base[4]; /* pager hits, misses, writes, spills at the last reset */
  int wal_frames;    /* WAL frames when the WAL hook last looked */
} ApiCounters;

/* The last error (db->err). */
typedef struct ApiError {
  int code;  /* extended */
  char *msg; /* NULL: the code's own message */
  char *sql; /* the text of the prepare that failed last (api_erroff.c), or NULL */
  int mask;  /* 0xff, or ~0 with extended result codes */
} ApiError;

/* Settings made by PRAGMA and the busy/limit calls (db->set). */
typedef struct ApiSettings {
  int busy_ms;
  int sync_level;          /* PRAGMA synchronous as set (reported for memory dbs too) */
  int wal_autocheckpoint;  /* PRAGMA wal_autocheckpoint (reported only) */
  int analysis_limit;      /* PRAGMA analysis_limit (reported only: ANALYZE reads every row) */
  uint8_t temp_store;      /* PRAGMA temp_store (reported only) */
  uint32_t next_page_size; /* PRAGMA page_size set on a non-empty database (VACUUM), or 0 */
  uint8_t dflt_lock_mode;  /* PRAGMA locking_mode as last set (SQLite's dfltLockMode) */
  uint8_t foreign_keys, recursive_triggers, case_sensitive_like, reverse_unordered;
  uint8_t defer_foreign_keys; /* PRAGMA defer_foreign_keys: cleared when a transaction ends */
  /* SQLite's flag pragmas (API_PF_*): automatic_index, ignore_check_constraints,
   * writable_schema and query_only act, and so do short_column_names and
   * full_column_names (CompileEnv.col_names); the others are reported only
   * (no effect here either: fullfsync and checkpoint_fullfsync are for macOS,
   * read_uncommitted for shared cache; count_changes and
   * empty_result_callbacks are SQLite's deprecated ones; legacy_alter_table,
   * trusted_schema, cell_size_check) */
  uint32_t pflags;
  uint8_t query_only;         /* API_PF_QUERY_ONLY, read by the VM (hooks.query_only) */
  uint8_t secure_delete;      /* PRAGMA secure_delete: 0, 1, 2 = FAST; reported only */
  int cache_spill;            /* PRAGMA cache_spill=N (SQLite's szSpill; 1 at open) */
  int64_t journal_size_limit; /* PRAGMA journal_size_limit (-1 at open); reported only */
  int limits[12];             /* SHALE_LIMIT_*: current values */
} ApiSettings;

/* Switches made by shale_db_config (db->cfg). */
typedef struct ApiDbConfig {
  uint8_t no_triggers, no_views, no_dqs_dml, no_dqs_ddl; /* (CompileEnv) */
  uint8_t no_ckpt_on_close;  /* NO_CKPT_ON_CLOSE: closing leaves each WAL as it is */
  char *main_name;           /* MAINDBNAME: database 0's name (NULL: "main"), a copy */
  uint8_t reset_database;    /* RESET_DATABASE: VACUUM writes an empty database */
  uint8_t qpsg;              /* ENABLE_QPSG (kept: plans never use bound values) */
  uint8_t trigger_eqp;       /* TRIGGER_EQP (CompileEnv.trigger_eqp) */
  uint8_t legacy_format;     /* LEGACY_FILE_FORMAT (CompileEnv.legacy_file_format) */
  uint8_t no_fts3_tokenizer; /* ENABLE_FTS3_TOKENIZER off (on by default, as
                                Debian's build; kept: no FTS3 here) */
  uint8_t no_load_ext;       /* ENABLE_LOAD_EXTENSION off (the C call; on at open) */
  uint8_t load_ext_func;     /* the load_extension() SQL function allowed (off at open) */
} ApiDbConfig;

/* The user's hooks and handlers (db->cb; api_hooks.c, api_func.c,
 * api_preupdate.c); a NULL callback is none. */
typedef struct ApiCallbacks {
  int (*commit)(void *);
  void *commit_arg;
  void (*rollback)(void *);
  void *rollback_arg;
  void (*update)(void *, int, const char *, const char *, int64_t);
  void *update_arg;
  int (*wal)(void *, shale *, const char *, int);
  void *wal_arg;
  /* sqlite3_autovacuum_pages (every Btree gets it through api_autovac_install) */
  unsigned (*avac)(void *, const char *, unsigned, unsigned, unsigned);
  void *avac_arg;
  void (*avac_destroy)(void *);
  int (*auth)(void *, int, const char *, const char *, const char *, const char *);
  void *auth_arg;
  unsigned auth_gen;   /* bumped by set_authorizer: statements recompile */
  unsigned trace_mask; /* SHALE_TRACE_* for trace */
  int (*trace)(unsigned, void *, void *, void *);
  void *trace_arg;
  void (*trace_legacy)(void *, const char *);
  void *trace_legacy_arg;
  void (*profile)(void *, const char *, uint64_t);
  void *profile_arg;
  int (*progress)(void *);
  void *progress_arg;
  int (*busy)(void *, int); /* sqlite3_busy_handler (set.busy_ms = 0 then) */
  void *busy_arg;
  uint8_t busy_ran; /* the pager ran the handler during this vm_step */
  void (*coll_needed)(void *, shale *, int, const char *);
  void *coll_needed_arg;
  void (*preupdate)(void *, shale *, int, const char *, const char *, int64_t, int64_t);
  void *preupdate_arg;
} ApiCallbacks;

/* The change a preupdate callback is being told about (db->pu, during the
 * call only; api_preupdate.c). */
typedef struct ApiPreupdateCall {
  const struct VmPreupdate *change; /* NULL outside a call */
  const struct Table *tab;          /* its table (NULL: not found) */
  shale_value **vals;               /* 2 * nvals values handed out (old, then new) */
  int nvals;
} ApiPreupdateCall;

struct shale {
  ApiHandle h;        /* invariant 6: API_DB_OPEN / API_DB_ZOMBIE / API_DEAD */
  shale_mutex mu;     /* initialized once per struct, kept across reuse */
  shale_mutex *mutex; /* &mu, NULL with SHALE_OPEN_NOMUTEX */
  void *userptr;      /* shale_db_userptr: the API user's, never read here */
  ApiHandle *free_stmts, *free_backups, *free_blobs; /* retired handles (invariant 6) */
  /* databases (invariant 5): dbx[0] main, dbx[1] temp, dbx[2..ndb) attached */
  ApiDb dbx[API_MAX_DB];
  int ndb;        /* databases (>= 2: main and temp) */
  unsigned xgen;  /* bumped when a schema of database 1.. is replaced, at ATTACH/DETACH */
  char *fullname; /* absolute name of the main file ("" for memory) */
  int open_flags;
  int (*attach_fn)(void *, const char *, shale_attach_target *); /* NULL: none */
  void *attach_arg;
  uint8_t text_enc;   /* main database's text encoding (RECORD_ENC_*), read by the VM */
  int pragma_standin; /* database standing in for main while a PRAGMA runs (pragma.c), or 0 */
  ApiDb standin;      /* main's own Btree and schema while it stands in */
  CompileDb cdbs[API_MAX_DB]; /* compile_env's list */
  VtabReg vtabs;              /* modules and connected virtual tables (api_vtab.c) */
  FuncRegistry funcs;
  uint8_t funcs_ok;
  FuncConnCallbacks conn_cb;
  VmConnHooks hooks;
  ApiColl *colls;            /* user collations (api_func.c) */
  CollationScope coll_scope; /* finds colls (set around prepare/step) */
  void **ext_libs;           /* shared libraries loaded (api_loadext.c), closed last */
  int next_libs;
  ApiTxn txn;
  ApiCounters count;
  ApiError err;
  ApiSettings set;
  ApiDbConfig cfg;
  ApiCallbacks cb;
  ApiPreupdateCall pu;
  volatile int interrupted;
  uint8_t zombie; /* shale_close_v2 with statements open */
  int nhandles;   /* open backups and blob handles using this connection */
  int nblobs;     /* open blob handles (VACUUM counts them as statements in progress) */
  /* statements */
  shale_stmt *stmts;
  ApiCached *cache;
  ApiCached *cache_last; /* the least recently used entry, the list's last */
  int ncache;
  VmSpare vm_spare;     /* a finalized statement's Vm block, for the next one (vm.h) */
  VmSpare prog_spare;   /* a freed program's block, for the next compile (vm.h) */
  shale_stmt *stepping; /* the statement in vm_step (trace of trigger programs) */
};

struct shale_stmt {
  ApiHandle h; /* API_STMT_LIVE or API_DEAD (invariant 6) */
  shale *db;
  void *userptr; /* shale_stmt_userptr: the API user's, never read here */
  char *sql;     /* this statement's text (NUL-terminated) */
  char *key;     /* the whole text given to prepare (cache key) */
  int nkey, tail;
  CompiledStmt cs;
  ApiSchema *schema; /* compiled against */
  uint8_t in_txn;    /* CompileEnv.in_txn it was compiled with */
  int settings;      /* api_settings() it was compiled with */
  ApiXRefs x;        /* schemas of databases 1.. compiled against */
  Vm *vm;
  int vm_flags;
  /* bindings (kept here so a recompiled statement keeps them) */
  int nvar;
  ShValue *vars;
  ApiVarBuf *varbuf; /* [0..nvar]: the bytes of TEXT/BLOB bindings, reused by the next bind */
  /* state */
  uint8_t active; /* invariant 4 */
  uint8_t halted; /* returned DONE or an error: next step resets first */
  uint8_t has_row;
  uint8_t produced;    /* this run returned a row */
  int nbusy;           /* busy handler calls in this run */
  int64_t t_start;     /* os_now_ms() at the first step (profile), 0 when not timing */
  int64_t stat[8];     /* SHALE_STMTSTATUS_* counters not kept by the Vm; VM ones: base */
  uint8_t traced;      /* TRACE_STMT reported for this run */
  int last_rc;         /* code of the last run (for reset/finalize) */
  char *errmsg_copy;   /* its message */
  ApiRows rows;        /* materialized result (PRAGMA/EXPLAIN) */
  uint8_t pragma_vfs;  /* the database file's VFS ran this PRAGMA at prepare (api.c) */
  char *pragma_res;    /* ... its result text (also the column's name), or NULL */
  int rowpos;          /* next row of rows */
  const ShValue *row;  /* current row of rows (row_n values), else NULL */
  const ShValue *vals; /* the current row's values: row, or the Vm's (vm_row) */
  int row_n;
  uint64_t gen;
  shale_value *cells;    /* ncol cells for column_* conversions */
  uint64_t detached_gen; /* gen whose row api_detach_rows copied into cells */
  int ncells;
  shale_stmt *next;
};

static inline void api_enter(shale *db) {
  if (db->mutex) api_mutex_enter(db->mutex);
}
static inline void api_leave(shale *db) {
  if (db->mutex) api_mutex_leave(db->mutex);
}
/* Lock db if it is a live connection (API_DB_OPEN, or also a zombie when
 * zombie_ok): 1 with the mutex held, else 0 (nothing held). */
static inline int api_db_enter2(shale *db, int zombie_ok) {
  uint32_t m = api_magic(db);
  if (m != API_DB_OPEN && (!zombie_ok || m != API_DB_ZOMBIE)) return 0;
  api_enter(db);
  m = api_magic(db);
  if (m == API_DB_OPEN || (zombie_ok && m == API_DB_ZOMBIE)) return 1;
  api_leave(db);
  return 0;
}
static inline int api_db_enter(shale *db) { return api_db_enter2(db, 0); }
/* Lock the connection owning handle h if h is live with this magic: the
 * connection, or NULL (nothing held). */
static inline shale *api_handle_enter(void *h, uint32_t magic) {
  if (api_magic(h) != magic) return NULL;
  shale *db = ((ApiHandle *)h)->owner;
  api_enter(db);
  if (api_magic(h) == magic) return db;
  api_leave(db);
  return NULL;
}
static inline shale *api_stmt_enter(shale_stmt *st) { return api_handle_enter(st, API_STMT_LIVE); }
/* A connection struct from the process-wide free list or new (magic
 * API_DB_OPEN, contents zeroed, db->mutex set unless !with_mutex). */
shale *api_db_alloc(int with_mutex);
/* After its contents were freed: free its handle lists, magic API_DEAD. */
void api_db_retire(shale *db);
/* Leave db's mutex after a call that may have closed it (db_free ran): the
 * struct goes to the free list once nobody holds the mutex. */
void api_leave_maybe_free(shale *db);
/* A handle of kind magic owned by db, from db's free list *fl (or a new one
 * of size bytes), zeroed, with its magic and owner set; NULL on OOM. */
void *api_handle_alloc(shale *db, ApiHandle **fl, size_t size, uint32_t magic);
/* Retire h onto list *fl (its contents already freed). */
void api_handle_retire(ApiHandle **fl, void *h);

/* Run expr with the mutex of db (a live connection) held and return its
 * value; return fail when db is not a live connection. */
#define API_DB_CALL(db, fail, expr)     \
  do {                                  \
    if (!api_db_enter(db)) return fail; \
    __typeof__(expr) r_ = (expr);       \
    api_leave(db);                      \
    return r_;                          \
  } while (0)
/* The same for a statement st (its connection's mutex). */
#define API_ST_CALL(st, fail, expr)   \
  do {                                \
    shale *sdb_ = api_stmt_enter(st); \
    if (!sdb_) return fail;           \
    __typeof__(expr) r_ = (expr);     \
    api_leave(sdb_);                  \
    return r_;                        \
  } while (0)

/* Database i's B-tree (NULL: temp not opened). */
static inline Btree *api_db_bt(const shale *db, int i) { return db->dbx[i].bt; }
/* api.c: databases. Index of the database named name (NULL: main), or -1. */
int api_db_index(shale *db, const char *name);
/* Whether name (NULL: yes) designates database 0: "main" or the name
 * db_config MAINDBNAME gave it. */
int api_is_main(shale *db, const char *name);
/* Index of the database whose B-tree is bt, or -1. */
int api_db_of_bt(const shale *db, const Btree *bt);
const char *api_db_name(shale *db, int i);
/* Database i's file name as PRAGMA database_list shows it ("" for memory),
 * NULL when not open. */
const char *api_db_file(shale *db, int i);
/* Open the temp database (in memory) if it is not open yet. */
int api_temp_open(shale *db);
/* Database i's current schema (loaded when needed; temp's may be empty), or
 * NULL after an error recorded in db. */
Schema *api_db_schema(shale *db, int i);
/* 1 if some database has a transaction at least at level (PAGER_TXN_*). */
int api_any_txn(const shale *db, int level);

/* pragma.c */
/* Column names of a PRAGMA's result (set at prepare time); *ncol = 0 for a
 * pragma that returns nothing. */
void api_pragma_columns(const PragmaReq *req, int *ncol, const char *const **names);
/* Run a PRAGMA, filling out (columns already set by api_pragma_columns). */
int api_pragma_run(shale *db, const PragmaReq *req, ApiRows *out);
/* The environment statements of db are compiled against (api.c). */
void api_compile_env(shale *db, CompileEnv *env);
/* api_pragma_vtab.c: VtabReg.make_module, the pragma_NAME modules made at
 * their first use. */
int api_pragma_vtab_make(VtabReg *r, const char *name);
/* api_stmt_vtab.c: register sqlite_stmt (every connection, at open). */
int api_stmt_vtab_register(VtabReg *r);
/* api_dbstat.c: register dbstat (every connection, at open). */
int api_dbstat_register(VtabReg *r);

/* api.c helpers used by pragma.c */
void api_error(shale *db, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int api_rows_add(ApiRows *r, const ShValue *vals);
/* Make sure db->dbx[0].schema is loaded and matches the file's schema cookie
 * (inside a read transaction when one is open). */
int api_schema_current(shale *db);
/* Begin a transaction of level BTREE_TXN_* for a pragma; *began = 1 when it
 * was started here (end it with api_txn_end). */
int api_txn_begin(shale *db, int level, int *began);
int api_txn_end(shale *db, int began, int rc);

/* api_hooks.c */
/* Install the VM hook trampolines and the default limits on a new connection. */
void api_hooks_init(shale *db);
/* Commit the B-tree's transaction with the commit hook's say (a veto rolls
 * back: SHALE_CONSTRAINT_COMMITHOOK, *errmsg "constraint failed"). */
int api_commit(shale *db, char **errmsg);
/* Roll the B-tree's transaction back; the rollback hook fires when a write
 * transaction (or, explicit, any transaction) ended so. */
void api_rollback(shale *db, int explicit_txn);
/* api_commit for btree_commit_write (other statements still read). */
int api_commit_write(shale *db, char **errmsg);
/* Busy handler for try number count: nonzero = try again. */
int api_busy(shale *db, int count);
/* Tracing: a run starts / a row / a run ends (profile) / the connection closes. */
void api_trace_start(shale_stmt *st);
void api_trace_row(shale_stmt *st);
void api_trace_end(shale_stmt *st);
void api_trace_close(shale *db);
/* Before a Vm of st is freed: keep its counters (stmt_status). */
void api_stmt_keep_stats(shale_stmt *st);
/* Give a B-tree of the connection the autovacuum pages callback (after
 * opening one); api_autovac_free runs its destructor at close. */
void api_autovac_install(shale *db, Btree *bt);
void api_autovac_free(shale *db);
/* The WAL hook after a statement finished in autocommit mode. */
void api_wal_notify(shale *db);
/* Forget the loaded schema and the statement cache (the database content
 * was replaced: backup, deserialize); reloaded when next needed. */
void api_schema_reset(shale *db);
/* The same for database i (0: main): its schema is reloaded at its next use. */
void api_schema_reset_db(shale *db, int i);
/* A backup or blob handle using db went away (db->nhandles--); frees the
 * connection if shale_close_v2 left it a zombie waiting for it. */
void api_handle_release(shale *db);
/* api.c: make every statement recompile before its next run and drop the
 * statement cache (a function or collation was replaced or deleted). */
void api_expire(shale *db);
/* Drop the cache of finalized programs (api.c): a limit that compiling
 * checks changed, so the next prepare of a cached text compiles again. */
void api_cache_clear(shale *db);

/* api.c: before a write by another statement (except) or a blob handle,
 * copy the current rows of db's statements out of the pages they borrow. */
void api_detach_rows(shale *db, shale_stmt *except);

/* api_func.c */
/* Set up db->coll_scope and the MATCH placeholder (at open): SHALE_OK or
 * SHALE_NOMEM. */
int api_func_init(shale *db);
/* Free user collations (at close, after the function registry is freed). */
void api_func_close(shale *db);

/* api_loadext.c: db_config ENABLE_LOAD_EXTENSION (onoff < 0 reads; the
 * state in force), the load_extension() SQL function's callback, the
 * libraries closed at the end of close, the automatic extensions run at the
 * end of an open (SHALE_OK or the failing entry's code, error set). */
int api_loadext_switch(shale *db, int onoff);
int api_loadext_sql(void *conn, const char *file, const char *proc, char **errmsg);
void api_loadext_close(shale *db);
int api_auto_extensions(shale *db);

/* api_backup.c: copy page pgno of sp over page pgno of dp (write
 * transaction open on dp; pages past dst_orig are new). Page 1 bytes 18/19
 * follow dp's journal mode. Shared with VACUUM. */
int api_backup_copy_page(Pager *sp, Pager *dp, uint32_t pgno, uint32_t dst_orig);

/* api_vacuum.c: the VmConnHooks.vacuum hook (ctx = the connection). */
int api_vacuum_hook(void *ctx, int db, const ShValue *into, char **errmsg);

/* For tests: statement cache hits and schema loads since open. */
long api_cache_hits(shale *db);
long api_schema_loads(shale *db);

#endif /* SHALE_API_INT_H */
