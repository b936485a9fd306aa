/*
 * api_dbstat.c -- dbstat, the virtual table of the pages each table and
 * index uses (SQLite's SQLITE_ENABLE_DBSTAT_VTAB, which Debian's build
 * has): eponymous, and also made with CREATE VIRTUAL TABLE x USING
 * dbstat(schema). One row per page (path, type, cells, payload, free bytes,
 * offset, size), or with aggregate = 1 one row per tree with the sums.
 * The walk of a tree is btree_stat (src/btree/btree_stat.c).
 *
 * Owns: each cursor's statement over the schema table and its tree walk.
 *
 * Invariants:
 *  1. The trees are sqlite_schema's own (root 1) then every schema row with
 *     a root page, in the schema table's order, as SQLite lists them; a
 *     database without pages (or a temp database never opened) has no rows.
 *  2. The cursor reads the schema table through a statement of its own
 *     that stays on a row while the cursor walks that row's tree: the
 *     statement's read transaction keeps the walk on one snapshot, on
 *     whichever database the walk is of.
 *  3. pgoffset of a page row is (pgno - 1) * page size and pgsize the page
 *     size, where the page size is that of the table's default database
 *     (CREATE VIRTUAL TABLE's argument, else main), even when the query
 *     names another one to walk; an
 *     overflow page's row shows the offset of the page of the row before it:
 *     all as SQLite 3.40.1's dbstat. The rowid is the page number
 *     (aggregate rows: the tree's last non-overflow page).
 *  4. A schema named by the query (schema = ?, dbstat('x')) that is NULL or
 *     no database gives no rows; CREATE VIRTUAL TABLE's argument must name
 *     a database ("no such database: X", X as written), as in SQLite, and
 *     one that went since (DETACH) fails the query the same way.
 */
#include <string.h>

#include "api_int.h"

enum {
  DS_NAME,
  DS_PATH,
  DS_PAGENO,
  DS_PAGETYPE,
  DS_NCELL,
  DS_PAYLOAD,
  DS_UNUSED,
  DS_MX_PAYLOAD,
  DS_PGOFFSET,
  DS_PGSIZE,
  DS_SCHEMA,
  DS_AGGREGATE
};

/* idxNum bits: which constraints xFilter's argv holds, in this order */
#define DS_BY_SCHEMA 1
#define DS_BY_NAME 2
#define DS_BY_AGG 4

typedef struct StatTab {
  shale_vtab base; /* first */
  shale *db;
  char *schema; /* CREATE VIRTUAL TABLE's argument, or NULL (main) */
} StatTab;

typedef struct StatCur {
  shale_vtab_cursor base; /* first */
  shale_stmt *trees;      /* (name, root) of each tree (invariant 2) */
  Btree *bt;
  BtreeStat *walk;
  char *only;    /* name = ?, or NULL */
  int aggregate; /* one row per tree */
  int eof;
  int idb; /* the database walked */
  uint32_t page_size;
  uint32_t last_pgno; /* the page of the row before (invariant 3) */
  /* the current row */
  char *name;
  BtreeStatPage pg;
  int64_t pageno, pgoffset, pgsize, rowid;
} StatCur;

static int ds_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg) {
  (void)aux;
  int rc = vtab_declare(&db->vtabs,
                        "CREATE TABLE x(name TEXT, path TEXT, pageno INTEGER, pagetype TEXT,"
                        " ncell INTEGER, payload INTEGER, unused INTEGER, mx_payload INTEGER,"
                        " pgoffset INTEGER, pgsize INTEGER, schema TEXT HIDDEN,"
                        " aggregate BOOLEAN HIDDEN)",
                        errmsg);
  if (rc) return rc;
  StatTab *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  if (argc > 3 && api_db_index(db, argv[3]) < 0) { /* as written: SQLite does not unquote it */
    *errmsg = util_mprintf("no such database: %s", argv[3]);
    shale_free(t);
    return SHALE_ERROR;
  }
  if (argc > 3) {
    t->schema = util_mprintf("%s", argv[3]);
    if (!t->schema) {
      shale_free(t);
      return SHALE_NOMEM;
    }
  }
  *out = &t->base;
  return SHALE_OK;
}

static int ds_disconnect(shale_vtab *vt) {
  shale_free(((StatTab *)vt)->schema);
  shale_free(vt);
  return SHALE_OK;
}

static int ds_best_index(shale_vtab *vt, shale_index_info *info) {
  (void)vt;
  static const int cols[] = {DS_SCHEMA, DS_NAME, DS_AGGREGATE};
  int at[3] = {-1, -1, -1};
  for (int i = 0; i < info->nConstraint; i++) {
    const struct shale_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->op != SHALE_INDEX_CONSTRAINT_EQ) continue;
    for (int k = 0; k < 3; k++)
      if (c->iColumn == cols[k]) at[k] = i;
  }
  int argn = 0;
  info->idxNum = 0;
  for (int k = 0; k < 3; k++) {
    if (at[k] < 0) continue;
    info->aConstraintUsage[at[k]].argvIndex = ++argn;
    /* schema and name are kept to exactly by xFilter (schema: under any
     * case of the name, as SQLite); aggregate is tested again on the rows,
     * so that only 0 and 1 match, as in SQLite */
    info->aConstraintUsage[at[k]].omit = cols[k] != DS_AGGREGATE;
    info->idxNum |= 1 << k;
  }
  /* a scan of one tree is cheaper than one of every tree */
  info->estimatedCost = (info->idxNum & DS_BY_NAME) ? 10.0 : 1000.0;
  return SHALE_OK;
}

static int ds_open(shale_vtab *vt, shale_vtab_cursor **out) {
  (void)vt;
  StatCur *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SHALE_OK;
}

static void ds_reset(StatCur *c) {
  btree_stat_close(c->walk);
  c->walk = NULL;
  shale_finalize(c->trees);
  c->trees = NULL;
  shale_free(c->only);
  shale_free(c->name);
  c->only = c->name = NULL;
  c->bt = NULL;
  c->eof = 1;
}

static int ds_close(shale_vtab_cursor *cur) {
  ds_reset((StatCur *)cur);
  shale_free(cur);
  return SHALE_OK;
}

static int ds_error(StatCur *c, int rc, const char *msg) {
  shale_free(c->base.pVtab->zErrMsg);
  c->base.pVtab->zErrMsg = util_mprintf("%s", msg);
  return rc;
}

/* Move to the next tree to walk (the schema statement's next row, or the
 * schema table itself first); *done when none is left. */
static int ds_next_tree(StatCur *c, int *done) {
  shale *db = ((StatTab *)c->base.pVtab)->db;
  for (;;) {
    btree_stat_close(c->walk);
    c->walk = NULL;
    int rc = shale_step(c->trees);
    if (rc == SHALE_DONE) {
      *done = 1;
      return SHALE_OK;
    }
    if (rc != SHALE_ROW) return ds_error(c, rc, shale_errmsg(db));
    const char *name = (const char *)shale_column_text(c->trees, 0);
    int64_t root = shale_column_int64(c->trees, 1);
    if (!name) name = "";
    if (c->only && strcmp(c->only, name) != 0) continue;
    c->bt = api_db_bt(db, c->idb);
    if (!c->bt || btree_page_count(c->bt) == 0) continue; /* invariant 1 */
    if (root < 1 || root > UINT32_MAX) continue;
    shale_free(c->name);
    c->name = util_mprintf("%s", name);
    if (!c->name) return SHALE_NOMEM;
    rc = btree_stat_open(c->bt, (uint32_t)root, &c->walk);
    if (rc) return rc;
    const char *home = ((StatTab *)c->base.pVtab)->schema;
    int ih = home ? api_db_index(db, home) : 0;
    Btree *hb = ih >= 0 ? api_db_bt(db, ih) : NULL;
    c->page_size = btree_page_size(hb ? hb : c->bt); /* invariant 3 */
    *done = 0;
    return SHALE_OK;
  }
}

/* The walk's next page into the row; SHALE_DONE at the tree's end. */
static int ds_walk_step(StatCur *c) {
  int rc = btree_stat_next(c->walk, &c->pg);
  if (rc == SHALE_ROW) return SHALE_OK;
  if (rc == SHALE_DONE) return rc;
  const char *m = btree_errmsg(c->bt);
  return ds_error(c, rc, m && *m ? m : shale_errstr(rc));
}

static int ds_next(shale_vtab_cursor *cur) {
  StatCur *c = (StatCur *)cur;
  for (;;) {
    if (!c->walk) {
      int done, rc = ds_next_tree(c, &done);
      if (rc) return rc;
      if (done) {
        c->eof = 1;
        return SHALE_OK;
      }
      c->last_pgno = 0;
    }
    int rc = ds_walk_step(c);
    if (rc == SHALE_DONE) {
      btree_stat_close(c->walk);
      c->walk = NULL;
      continue;
    }
    if (rc) return rc;
    if (!c->aggregate) {
      uint32_t at = c->pg.type == BTREE_STAT_OVERFLOW ? c->last_pgno : c->pg.pgno;
      c->pgoffset = (int64_t)c->page_size * ((int64_t)at - 1);
      c->pageno = c->rowid = c->pg.pgno;
      c->pgsize = c->page_size;
      c->last_pgno = c->pg.pgno;
      return SHALE_OK;
    }
    /* aggregate: the whole tree's sums in one row */
    BtreeStatPage sum = c->pg;
    int64_t pages = 1;
    c->rowid = sum.pgno;
    for (;;) {
      rc = ds_walk_step(c);
      if (rc == SHALE_DONE) break;
      if (rc) return rc;
      pages++;
      sum.ncell += c->pg.ncell;
      sum.payload += c->pg.payload;
      sum.unused += c->pg.unused;
      if (c->pg.mx_payload > sum.mx_payload) sum.mx_payload = c->pg.mx_payload;
      if (c->pg.type != BTREE_STAT_OVERFLOW) c->rowid = c->pg.pgno;
    }
    btree_stat_close(c->walk);
    c->walk = NULL;
    c->pg = sum;
    c->pageno = pages;
    c->pgsize = pages * c->page_size;
    return SHALE_OK;
  }
}

static int ds_filter(shale_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     shale_value **argv) {
  (void)idx_str;
  StatCur *c = (StatCur *)cur;
  StatTab *t = (StatTab *)cur->pVtab;
  shale *db = t->db;
  ds_reset(c);
  const char *schema = t->schema;
  int argn = 0, given = 0;
  if ((idx_num & DS_BY_SCHEMA) && argn < argc) {
    schema = (const char *)shale_value_text(argv[argn++]);
    if (!schema) return SHALE_OK; /* schema = NULL: no row */
    given = 1;
  }
  if ((idx_num & DS_BY_NAME) && argn < argc) {
    const char *name = (const char *)shale_value_text(argv[argn++]);
    if (!name) return SHALE_OK; /* name = NULL: no row */
    c->only = util_mprintf("%s", name);
    if (!c->only) return SHALE_NOMEM;
  }
  if ((idx_num & DS_BY_AGG) && argn < argc) c->aggregate = shale_value_int(argv[argn++]) != 0;
  c->idb = schema ? api_db_index(db, schema) : 0;
  if (c->idb < 0 && given) return SHALE_OK; /* an unknown schema asked for: no row */
  if (c->idb < 0) {
    shale_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = util_mprintf("no such database: %s", schema);
    return SHALE_ERROR;
  }
  StrBuf b; /* the database's name as a quoted identifier */
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "SELECT 'sqlite_schema', 1 UNION ALL SELECT name, rootpage FROM \"");
  for (const char *z = api_db_name(db, c->idb); *z; z++) {
    if (*z == '"') strbuf_append(&b, "\"", 1); /* doubled */
    strbuf_append(&b, z, 1);
  }
  strbuf_appendz(&b, "\".sqlite_schema WHERE rootpage!=0");
  char *sql = strbuf_finish(&b);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_prepare_v2(db, sql, -1, &c->trees, NULL);
  shale_free(sql);
  if (rc) return ds_error(c, rc, shale_errmsg(db));
  c->eof = 0;
  return ds_next(cur);
}

static int ds_eof(shale_vtab_cursor *cur) { return ((const StatCur *)cur)->eof; }

static int ds_column(shale_vtab_cursor *cur, shale_context *ctx, int col) {
  const StatCur *c = (const StatCur *)cur;
  FuncCtx *f = (FuncCtx *)ctx;
  static const char *const types[] = {"internal", "leaf", "overflow"};
  int agg = c->aggregate;
  switch (col) {
    case DS_NAME:
      func_result_text(f, c->name, -1, FUNC_TRANSIENT);
      break;
    case DS_PATH:
      if (agg)
        func_result_null(f);
      else
        func_result_text(f, c->pg.path, -1, FUNC_TRANSIENT); /* the walk's, until the next row */
      break;
    case DS_PAGENO:
      func_result_int(f, c->pageno);
      break;
    case DS_PAGETYPE:
      if (agg)
        func_result_null(f);
      else
        func_result_text(f, types[c->pg.type], -1, FUNC_STATIC);
      break;
    case DS_NCELL:
      func_result_int(f, c->pg.ncell);
      break;
    case DS_PAYLOAD:
      func_result_int(f, c->pg.payload);
      break;
    case DS_UNUSED:
      func_result_int(f, c->pg.unused);
      break;
    case DS_MX_PAYLOAD:
      func_result_int(f, c->pg.mx_payload);
      break;
    case DS_PGOFFSET:
      if (agg)
        func_result_null(f);
      else
        func_result_int(f, c->pgoffset);
      break;
    case DS_PGSIZE:
      func_result_int(f, c->pgsize);
      break;
    case DS_SCHEMA:
      func_result_text(f, api_db_name(((StatTab *)cur->pVtab)->db, c->idb), -1, FUNC_TRANSIENT);
      break;
    case DS_AGGREGATE:
      func_result_int(f, agg);
      break;
    default:
      break;
  }
  return SHALE_OK;
}

static int ds_rowid(shale_vtab_cursor *cur, shale_int64 *rowid) {
  *rowid = ((const StatCur *)cur)->rowid;
  return SHALE_OK;
}

static const shale_module dbstat_module = {
    .xCreate = ds_connect,
    .xConnect = ds_connect,
    .xBestIndex = ds_best_index,
    .xDisconnect = ds_disconnect,
    .xDestroy = ds_disconnect,
    .xOpen = ds_open,
    .xClose = ds_close,
    .xFilter = ds_filter,
    .xNext = ds_next,
    .xEof = ds_eof,
    .xColumn = ds_column,
    .xRowid = ds_rowid,
};

int api_dbstat_register(VtabReg *r) {
  return vtab_module_set(r, "dbstat", &dbstat_module, NULL, NULL);
}
