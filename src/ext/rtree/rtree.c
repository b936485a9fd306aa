/*
 * rtree.c -- the "rtree" and "rtree_i32" virtual-table modules (SQLite's
 * R-Tree extension): creating and connecting tables (argument checks and
 * messages as SQLite's), the shadow-table statements, planning
 * (xBestIndex), the search cursor, and xUpdate. The tree algorithms are
 * rtree_tree.c, the SQL functions rtree_func.c.
 *
 * Planning, as SQLite's module: a usable `rowid = ?` (id column or rowid)
 * gives idxNum 1 (one row, cost 30); otherwise idxNum 2 with idxStr the
 * pairs (operator letter, coordinate digit) of every usable =, <, <=, >,
 * >= on a coordinate column (A =, B <=, C <, D >=, E >) and of every MATCH
 * (F, on any column: a geometry function's value), costing
 * 6 * (row estimate >> constraints used); <=, >= and MATCH are omitted from
 * the engine's checks, the others are checked again (rounded bounds). A
 * MATCH anywhere keeps the rowid lookup out, as in SQLite.
 *
 * Invariants:
 *  1. A cursor keeps its own copy of each node on its path (root to the
 *     current leaf), so writes to the table while it is open cannot make it
 *     read freed memory; it walks depth first in cell order, as SQLite's
 *     queue does for these constraints (the scan order of both engines).
 *  2. A constraint value that is not a number makes < and <= always true
 *     (text and blobs sort after numbers) and the other operators always
 *     false; NULL is always false.
 *  3. Every xUpdate ends with rtree_cache_end (rtree_int.h invariant 1).
 *  4. Bounds are stored rounded outward: a min to the largest float SQLite
 *     computes not above it, a max to the smallest not below (its
 *     arithmetic, below), an rtree_i32 bound as its integer value.
 *  5. A MATCH constraint's geometry (its parameters copied, the callback's
 *     pUser) belongs to the cursor until the next xFilter or xClose, which
 *     run its xDelUser.
 *  6. With a query callback's MATCH the search is SQLite's instead
 *     (qmode): a priority queue of points by (score, level), the best one
 *     kept aside in spt, so entries come in the order SQLite returns them.
 */
#include "rtree.h"

#include <string.h>

#include "../../util/util.h"
#include "rtree_int.h"

/* ---- names and statements ---- */

void rtree_quote(StrBuf *b, const char *z) {
  strbuf_appendchar(b, 1, '"');
  for (; *z; z++) {
    if (*z == '"') strbuf_appendchar(b, 1, '"');
    strbuf_appendchar(b, 1, *z);
  }
  strbuf_appendchar(b, 1, '"');
}

/* "db"."NAMEsuffix" */
static void shadow(StrBuf *b, const Rtree *t, const char *suffix) {
  rtree_quote(b, t->zdb);
  strbuf_appendchar(b, 1, '.');
  char *n = util_mprintf("%s%s", t->zname, suffix);
  if (!n) {
    b->err = SHALE_NOMEM;
    return;
  }
  rtree_quote(b, n);
  shale_free(n);
}

static char *stmt_sql(const Rtree *t, int st) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  switch (st) {
    case RT_ST_READ_NODE:
      strbuf_appendz(&b, "SELECT data FROM ");
      shadow(&b, t, "_node");
      strbuf_appendz(&b, " WHERE nodeno=?1");
      break;
    case RT_ST_WRITE_NODE:
      strbuf_appendz(&b, "INSERT OR REPLACE INTO ");
      shadow(&b, t, "_node");
      strbuf_appendz(&b, " VALUES(?1,?2)");
      break;
    case RT_ST_DEL_NODE:
      strbuf_appendz(&b, "DELETE FROM ");
      shadow(&b, t, "_node");
      strbuf_appendz(&b, " WHERE nodeno=?1");
      break;
    case RT_ST_READ_ROWID:
      strbuf_appendz(&b, "SELECT nodeno FROM ");
      shadow(&b, t, "_rowid");
      strbuf_appendz(&b, " WHERE rowid=?1");
      break;
    case RT_ST_WRITE_ROWID:
      strbuf_appendz(&b, "INSERT INTO ");
      shadow(&b, t, "_rowid");
      strbuf_appendz(
          &b, "(rowid,nodeno)VALUES(?1,?2)ON CONFLICT(rowid)DO UPDATE SET nodeno=excluded.nodeno");
      break;
    case RT_ST_DEL_ROWID:
      strbuf_appendz(&b, "DELETE FROM ");
      shadow(&b, t, "_rowid");
      strbuf_appendz(&b, " WHERE rowid=?1");
      break;
    case RT_ST_READ_PARENT:
      strbuf_appendz(&b, "SELECT parentnode FROM ");
      shadow(&b, t, "_parent");
      strbuf_appendz(&b, " WHERE nodeno=?1");
      break;
    case RT_ST_WRITE_PARENT:
      strbuf_appendz(&b, "INSERT OR REPLACE INTO ");
      shadow(&b, t, "_parent");
      strbuf_appendz(&b, " VALUES(?1,?2)");
      break;
    case RT_ST_DEL_PARENT:
      strbuf_appendz(&b, "DELETE FROM ");
      shadow(&b, t, "_parent");
      strbuf_appendz(&b, " WHERE nodeno=?1");
      break;
    case RT_ST_WRITE_AUX:
      strbuf_appendz(&b, "UPDATE ");
      shadow(&b, t, "_rowid");
      strbuf_appendz(&b, " SET ");
      for (int i = 0; i < t->naux; i++) strbuf_printf(&b, "%sa%d=?%d", i ? "," : "", i, i + 2);
      strbuf_appendz(&b, " WHERE rowid=?1");
      break;
    default:
      strbuf_appendz(&b, "SELECT * FROM ");
      shadow(&b, t, "_rowid");
      strbuf_appendz(&b, " WHERE rowid=?1");
      break;
  }
  return strbuf_finish(&b);
}

int rtree_stmt(Rtree *t, int st, shale_stmt **out) {
  if (!t->st[st]) {
    char *sql = stmt_sql(t, st);
    if (!sql) return SHALE_NOMEM;
    int rc = shale_prepare_v2(t->db, sql, -1, &t->st[st], NULL);
    shale_free(sql);
    if (rc) {
      t->st[st] = NULL;
      return rc;
    }
  }
  *out = t->st[st];
  return SHALE_OK;
}

static void stmts_free(Rtree *t) {
  for (int i = 0; i < RT_ST_COUNT; i++) {
    shale_finalize(t->st[i]);
    t->st[i] = NULL;
  }
}

int rtree_run2(Rtree *t, int st, int64_t a, int64_t b) {
  shale_stmt *s;
  int rc = rtree_stmt(t, st, &s);
  if (rc) return rc;
  shale_bind_int64(s, 1, a);
  if (shale_bind_parameter_count(s) >= 2) shale_bind_int64(s, 2, b);
  shale_step(s);
  return shale_reset(s);
}

int rtree_lookup(Rtree *t, int st, int64_t key, int *found, int64_t *val) {
  shale_stmt *s;
  int rc = rtree_stmt(t, st, &s);
  if (rc) return rc;
  shale_bind_int64(s, 1, key);
  *found = shale_step(s) == SHALE_ROW;
  if (*found) *val = shale_column_int64(s, 0);
  return shale_reset(s);
}

int rtree_read_blob(Rtree *t, int64_t no, uint8_t *buf) {
  shale_stmt *s;
  int rc = rtree_stmt(t, RT_ST_READ_NODE, &s);
  if (rc) return rc;
  shale_bind_int64(s, 1, no);
  int bad = 1;
  /* SQLite reads nodes through a blob handle, which takes text as well */
  int type = shale_step(s) == SHALE_ROW ? shale_column_type(s, 0) : SHALE_NULL;
  if (type == SHALE_BLOB || type == SHALE_TEXT) {
    const void *p = shale_column_blob(s, 0);
    if (p && shale_column_bytes(s, 0) == t->node_size) {
      memcpy(buf, p, (size_t)t->node_size);
      bad = 0;
    }
  }
  rc = shale_reset(s);
  if (rc == SHALE_OK && bad) rc = SHALE_CORRUPT_VTAB;
  return rc;
}

void rtree_set_error(Rtree *t, const char *msg) {
  shale_free(t->base.zErrMsg);
  t->base.zErrMsg = msg ? util_strdup(msg) : NULL;
}

static char *colname(Rtree *t, shale_stmt *s, int i) {
  (void)t;
  const char *n = shale_column_name(s, i);
  return n ? util_strdup(n) : NULL;
}

int rtree_constraint_error(Rtree *t, int icol) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "SELECT * FROM ");
  rtree_quote(&b, t->zdb);
  strbuf_appendchar(&b, 1, '.');
  rtree_quote(&b, t->zname);
  char *sql = strbuf_finish(&b);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *s = NULL;
  int rc = shale_prepare_v2(t->db, sql, -1, &s, NULL);
  shale_free(sql);
  if (rc == SHALE_OK) {
    char *a = colname(t, s, icol), *c = icol ? colname(t, s, icol + 1) : NULL;
    shale_free(t->base.zErrMsg);
    t->base.zErrMsg = icol == 0
                          ? util_mprintf("UNIQUE constraint failed: %s.%s", t->zname, a ? a : "")
                          : util_mprintf("rtree constraint failed: %s.(%s<=%s)", t->zname,
                                         a ? a : "", c ? c : "");
    shale_free(a);
    shale_free(c);
  }
  shale_finalize(s);
  return rc == SHALE_OK ? SHALE_CONSTRAINT : rc;
}

/* ---- create / connect ---- */

/* Length of the first token of a column argument (its name). */
static int token_len(const char *z) {
  char q = z[0] == '[' ? ']' : z[0];
  if (q == '"' || q == '\'' || q == '`' || q == ']') {
    int i = 1;
    for (; z[i]; i++) {
      if (z[i] == q) {
        if (q != ']' && z[i + 1] == q)
          i++;
        else
          return i + 1;
      }
    }
    return i;
  }
  int i = 0;
  while (z[i] && z[i] != ' ' && z[i] != '\t' && z[i] != '\n' && z[i] != '\r' && z[i] != '\f' &&
         z[i] != '(' && z[i] != ')' && z[i] != ',')
    i++;
  return i ? i : 1;
}

static int exec_sql(shale *db, char *sql) {
  if (!sql) return SHALE_NOMEM;
  int rc = shale_exec(db, sql, NULL, NULL, NULL);
  shale_free(sql);
  return rc;
}

static int get_int(shale *db, char *sql, int64_t *v, int *found) {
  if (!sql) return SHALE_NOMEM;
  shale_stmt *s = NULL;
  int rc = shale_prepare_v2(db, sql, -1, &s, NULL);
  shale_free(sql);
  if (rc) return rc;
  *found = shale_step(s) == SHALE_ROW;
  if (*found) *v = shale_column_int64(s, 0);
  return shale_finalize(s);
}

static char *shadow_sql(Rtree *t, const char *head, const char *suffix, const char *tail) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, head);
  shadow(&b, t, suffix);
  strbuf_appendz(&b, tail);
  return strbuf_finish(&b);
}

static int create_shadows(Rtree *t) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "CREATE TABLE ");
  shadow(&b, t, "_rowid");
  strbuf_appendz(&b, "(rowid INTEGER PRIMARY KEY,nodeno");
  for (int i = 0; i < t->naux; i++) strbuf_printf(&b, ",a%d", i);
  strbuf_appendz(&b, ");CREATE TABLE ");
  shadow(&b, t, "_node");
  strbuf_appendz(&b, "(nodeno INTEGER PRIMARY KEY,data);CREATE TABLE ");
  shadow(&b, t, "_parent");
  strbuf_appendz(&b, "(nodeno INTEGER PRIMARY KEY,parentnode);INSERT INTO ");
  shadow(&b, t, "_node");
  strbuf_printf(&b, "VALUES(1,zeroblob(%d))", t->node_size);
  return exec_sql(t->db, strbuf_finish(&b));
}

static void rtree_free(Rtree *t) {
  stmts_free(t);
  rtree_cache_end(t, SHALE_ERROR);
  shale_free(t->base.zErrMsg);
  shale_free(t->zdb);
  shale_free(t->zname);
  shale_free(t);
}

static int rt_init(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                   char **errmsg, int create) {
  static const char *const msgs[] = {
      NULL, "Wrong number of columns for an rtree table", "Too few columns for an rtree table",
      "Too many columns for an rtree table", "Auxiliary rtree columns must be last"};
  int is_int = aux != NULL;
  if (argc < 6 || argc > RT_MAX_AUX + 3) {
    *errmsg = util_strdup(msgs[2 + (argc >= 6)]);
    return SHALE_ERROR;
  }
  shale_vtab_config(db, SHALE_VTAB_CONSTRAINT_SUPPORT, 1);
  Rtree *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->is_int = is_int;
  t->zdb = util_strdup(argv[1]);
  t->zname = util_strdup(argv[2]);
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_printf(&b, "CREATE TABLE x(%.*s INT", token_len(argv[3]), argv[3]);
  int i;
  for (i = 4; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] == '+') {
      t->naux++;
      strbuf_printf(&b, ",%.*s", token_len(a + 1), a + 1);
    } else if (t->naux > 0) {
      break;
    } else {
      t->ndim2++;
      strbuf_printf(&b, ",%.*s %s", token_len(a), a, is_int ? "INT" : "REAL");
    }
  }
  strbuf_appendz(&b, ");");
  char *decl = strbuf_finish(&b);
  int rc = SHALE_OK;
  if (!decl || !t->zdb || !t->zname)
    rc = SHALE_NOMEM;
  else if (i < argc) {
    *errmsg = util_strdup(msgs[4]);
    rc = SHALE_ERROR;
  } else if ((rc = shale_declare_vtab(db, decl)) != SHALE_OK) {
    *errmsg = util_strdup(shale_errmsg(db));
  }
  shale_free(decl);
  if (rc) goto fail;
  t->ndim = t->ndim2 / 2;
  int err = t->ndim < 1 ? 2 : t->ndim2 > RT_MAX_DIM * 2 ? 3 : t->ndim2 % 2 ? 1 : 0;
  if (err) {
    *errmsg = util_strdup(msgs[err]);
    rc = SHALE_ERROR;
    goto fail;
  }
  t->cell_size = 8 + t->ndim2 * 4;
  int64_t v = 0;
  int found = 0;
  if (create) {
    rc = get_int(db, util_mprintf("PRAGMA \"%s\".page_size", t->zdb), &v, &found);
    if (rc == SHALE_OK) {
      t->node_size = (int)v - 64;
      if (4 + t->cell_size * RT_MAX_CELLS < t->node_size)
        t->node_size = 4 + t->cell_size * RT_MAX_CELLS;
    }
  } else {
    rc = get_int(db, shadow_sql(t, "SELECT length(data) FROM ", "_node", " WHERE nodeno = 1"), &v,
                 &found);
    if (rc == SHALE_OK) {
      t->node_size = found ? (int)v : 0;
      if (t->node_size < 512 - 64) {
        rc = SHALE_CORRUPT_VTAB;
        *errmsg = util_mprintf("undersize RTree blobs in \"%s_node\"", t->zname);
      }
    }
  }
  if (rc && !*errmsg) *errmsg = util_strdup(shale_errmsg(db));
  if (rc) goto fail;
  /* the planner's row estimate: sqlite_stat1 of NAME_rowid */
  t->nrow_est = 1048576;
  StrBuf qb;
  strbuf_init(&qb, STRBUF_NOLIMIT);
  strbuf_appendz(&qb, "SELECT stat FROM ");
  rtree_quote(&qb, t->zdb);
  strbuf_appendz(&qb, ".sqlite_stat1 WHERE tbl = '");
  for (const char *z = t->zname; *z; z++) { /* a string literal: quotes doubled */
    if (*z == '\'') strbuf_appendchar(&qb, 1, '\'');
    strbuf_appendchar(&qb, 1, *z);
  }
  strbuf_appendz(&qb, "_rowid'");
  char *q = strbuf_finish(&qb);
  shale_stmt *s = NULL;
  if (q && shale_prepare_v2(db, q, -1, &s, NULL) == SHALE_OK) {
    int64_t n = shale_step(s) == SHALE_ROW ? shale_column_int64(s, 0) : 0;
    t->nrow_est = n < 100 ? 100 : n;
  }
  shale_finalize(s);
  shale_free(q);
  if (create && (rc = create_shadows(t)) != SHALE_OK) {
    *errmsg = util_strdup(shale_errmsg(db));
    goto fail;
  }
  *out = &t->base;
  return SHALE_OK;
fail:
  rtree_free(t);
  return rc;
}

static int x_create(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                    char **errmsg) {
  return rt_init(db, aux, argc, argv, out, errmsg, 1);
}

static int x_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                     char **errmsg) {
  return rt_init(db, aux, argc, argv, out, errmsg, 0);
}

static int x_disconnect(shale_vtab *vt) {
  rtree_free((Rtree *)vt);
  return SHALE_OK;
}

static int x_destroy(shale_vtab *vt) {
  Rtree *t = (Rtree *)vt;
  stmts_free(t);
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, "DROP TABLE ");
  shadow(&b, t, "_node");
  strbuf_appendz(&b, ";DROP TABLE ");
  shadow(&b, t, "_rowid");
  strbuf_appendz(&b, ";DROP TABLE ");
  shadow(&b, t, "_parent");
  int rc = exec_sql(t->db, strbuf_finish(&b));
  if (rc == SHALE_OK) rtree_free(t);
  return rc;
}

static int x_rename(shale_vtab *vt, const char *name) {
  Rtree *t = (Rtree *)vt;
  stmts_free(t);
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  static const char *const sfx[] = {"_node", "_rowid", "_parent"};
  for (int i = 0; i < 3; i++) {
    strbuf_appendz(&b, "ALTER TABLE ");
    shadow(&b, t, sfx[i]);
    strbuf_appendz(&b, " RENAME TO ");
    char *n = util_mprintf("%s%s", name, sfx[i]);
    if (n)
      rtree_quote(&b, n);
    else
      b.err = SHALE_NOMEM;
    shale_free(n);
    strbuf_appendz(&b, ";");
  }
  int rc = exec_sql(t->db, strbuf_finish(&b));
  if (rc == SHALE_OK) {
    char *z = util_strdup(name);
    if (!z) return SHALE_NOMEM;
    shale_free(t->zname);
    t->zname = z;
  }
  return rc;
}

static int x_shadow_name(const char *suffix) {
  return !util_stricmp(suffix, "node") || !util_stricmp(suffix, "parent") ||
         !util_stricmp(suffix, "rowid");
}

/* ---- planning ---- */

enum {
  OP_EQ = 'A',
  OP_LE = 'B',
  OP_LT = 'C',
  OP_GE = 'D',
  OP_GT = 'E',
  OP_MATCH = 'F',
  OP_QUERY = 'G', /* a MATCH whose function is a query callback's (set by xFilter) */
  OP_TRUE = '?',
  OP_FALSE = '@'
};

static int x_best_index(shale_vtab *vt, shale_index_info *info) {
  Rtree *t = (Rtree *)vt;
  char idx[RT_MAX_DIM * 8 + 1];
  int n = 0, match = 0;
  for (int i = 0; i < info->nConstraint; i++)
    match |= info->aConstraint[i].op == SHALE_INDEX_CONSTRAINT_MATCH;
  for (int i = 0; i < info->nConstraint && n < (int)sizeof idx - 1; i++) {
    const struct shale_index_constraint *p = &info->aConstraint[i];
    if (!match && p->usable && p->iColumn <= 0 && p->op == SHALE_INDEX_CONSTRAINT_EQ) {
      for (int j = 0; j < i; j++) {
        info->aConstraintUsage[j].argvIndex = 0;
        info->aConstraintUsage[j].omit = 0;
      }
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->idxNum = 1;
      info->estimatedCost = 30.0;
      info->estimatedRows = 1;
      info->idxFlags = SHALE_INDEX_SCAN_UNIQUE;
      return SHALE_OK;
    }
    int is_match = p->op == SHALE_INDEX_CONSTRAINT_MATCH;
    if (!p->usable || (!is_match && (p->iColumn <= 0 || p->iColumn > t->ndim2))) continue;
    char op = 0;
    int omit = 1;
    switch (p->op) {
      case SHALE_INDEX_CONSTRAINT_EQ:
        op = OP_EQ, omit = 0;
        break;
      case SHALE_INDEX_CONSTRAINT_GT:
        op = OP_GT, omit = 0;
        break;
      case SHALE_INDEX_CONSTRAINT_LE:
        op = OP_LE;
        break;
      case SHALE_INDEX_CONSTRAINT_LT:
        op = OP_LT, omit = 0;
        break;
      case SHALE_INDEX_CONSTRAINT_GE:
        op = OP_GE;
        break;
      case SHALE_INDEX_CONSTRAINT_MATCH:
        op = OP_MATCH;
        break;
      default:
        break;
    }
    if (!op) continue;
    idx[n++] = op;
    idx[n++] = (char)(p->iColumn - 1 + '0');
    info->aConstraintUsage[i].argvIndex = n / 2;
    info->aConstraintUsage[i].omit = (unsigned char)omit;
  }
  idx[n] = 0;
  info->idxNum = 2;
  info->needToFreeIdxStr = 1;
  if (n > 0 && !(info->idxStr = util_strdup(idx))) return SHALE_NOMEM;
  int64_t rows = t->nrow_est >> (n / 2);
  info->estimatedCost = 6.0 * (double)rows;
  info->estimatedRows = rows;
  return SHALE_OK;
}

/* ---- cursor (invariant 1) ---- */

typedef struct RtCons {
  char op;
  int coord;
  double v;
  /* OP_MATCH / OP_QUERY: the callback and its argument (invariant 5); a
   * geometry callback gets qi's first members, as SQLite's */
  int (*geom)(RtreeGeometry *, int ncoord, double *coord, int *res);
  int (*query)(RtreeQueryInfo *);
  RtreeQueryInfo qi;
} RtCons;

/* A coordinate constraint as a test on a cell's bytes: the coordinate at
 * byte off of the cell (past its id) op v. Built by xFilter when no MATCH
 * is given, one list for leaves and one for inner nodes (SQLite's
 * rtreeLeafConstraint / rtreeNonleafConstraint as comparisons on one
 * coordinate each: an inner cell passes LE, LT and EQ when its min <= v,
 * GE, GT and EQ when its max >= v). */
typedef struct RtTest {
  int off;
  char op;
  double v;
} RtTest;

typedef struct RtFrame {
  int64_t no;
  int ncell, icell;
  uint8_t *data;
} RtFrame;

typedef struct RtPoint {
  double score;
  int64_t id; /* node (level > 0), or the leaf holding the entry */
  int level;  /* 0: an entry, cell icell of node id */
  int icell;
  uint8_t within;
} RtPoint;

typedef struct RtCursor {
  shale_vtab_cursor base;
  int eof;
  int ncons;
  RtCons cons[RT_MAX_DIM * 4];
  int nframe, depth; /* frame i holds the node at level depth - i */
  RtFrame frame[RT_MAX_DEPTH + 1];
  uint8_t *buf; /* (RT_MAX_DEPTH + 1) nodes, allocated at the first filter */
  RtCell cell;  /* the current entry */
  /* no MATCH: the constraints as byte tests (RtTest); never: one is always
   * false (a NULL or text right-hand side) */
  int tests, never, ntleaf, ntnode;
  RtTest tleaf[RT_MAX_DIM * 4], tnode[RT_MAX_DIM * 8];
  shale_stmt *aux; /* NAME_rowid row of the current entry, or NULL */
  int aux_ok;
  /* with a query callback: SQLite's priority queue of search points */
  int qmode;
  RtPoint *pts, spt; /* the heap, and the point kept ahead of it (bpt) */
  int npt, cappt, bpt;
  unsigned anq[RT_MAX_DEPTH + 2]; /* points queued per level (anQueue) */
  int64_t qnode_id;               /* node in qnode (0: none) */
  int qncell;
} RtCursor;

static int x_open(shale_vtab *vt, shale_vtab_cursor **out) {
  RtCursor *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  c->base.pVtab = vt;
  c->eof = 1;
  *out = &c->base;
  return SHALE_OK;
}

/* Release the MATCH geometries of the last filter (invariant 5). */
static void cons_free(RtCursor *c) {
  for (int i = 0; i < c->ncons; i++) {
    RtCons *k = &c->cons[i];
    if (!k->geom && !k->query) continue;
    if (k->qi.xDelUser) k->qi.xDelUser(k->qi.pUser);
    shale_free(k->qi.aParam);
    memset(&k->qi, 0, sizeof k->qi);
    k->geom = NULL;
    k->query = NULL;
  }
  c->ncons = 0;
}

static int x_close(shale_vtab_cursor *vc) {
  RtCursor *c = (RtCursor *)vc;
  cons_free(c);
  shale_free(c->pts);
  shale_finalize(c->aux);
  shale_free(c->buf);
  shale_free(c);
  return SHALE_OK;
}

/* Read node no into frame i (checked: size, cell count, depth). */
static int load_frame(RtCursor *c, int i, int64_t no) {
  Rtree *t = (Rtree *)c->base.pVtab;
  RtFrame *f = &c->frame[i];
  for (int k = 0; k < i; k++)
    if (c->frame[k].no == no) return SHALE_CORRUPT_VTAB;
  f->data = c->buf + (size_t)i * (size_t)t->node_size;
  int rc = rtree_read_blob(t, no, f->data);
  if (rc) return rc;
  f->no = no;
  f->ncell = rt_get2(f->data + 2);
  f->icell = 0;
  if (f->ncell > rtree_max_cells(t)) return SHALE_CORRUPT_VTAB;
  return SHALE_OK;
}

/* The geometry callback's answer for cell x: 1 in, 0 out, or -1 - its
 * error code. */
static int geometry_matches(const Rtree *t, RtCons *k, const RtCell *x) {
  double coord[RT_MAX_DIM * 2];
  for (int j = 0; j < t->ndim2; j++) coord[j] = rtree_coord(t, x->c[j]);
  int res = 0;
  int rc = k->geom((RtreeGeometry *)(void *)&k->qi, t->ndim2, coord, &res);
  if (rc != SHALE_OK) return -1 - rc;
  return res != 0;
}

/* 1 if the subtree (level > 0) or entry (level 0) of cell may match, 0 if
 * not, -1 - the error code of a geometry callback that failed. */
/* Coordinate constraint k on cell x: 1 may match, 0 not. */
static int coord_matches(const Rtree *t, const RtCons *k, const RtCell *x, int leaf) {
  if (k->op == OP_TRUE) return 1;
  if (k->op == OP_FALSE) return 0;
  if (leaf) {
    double v = rtree_coord(t, x->c[k->coord]);
    return k->op == OP_EQ   ? v == k->v
           : k->op == OP_LE ? v <= k->v
           : k->op == OP_LT ? v < k->v
           : k->op == OP_GE ? v >= k->v
                            : v > k->v;
  }
  double lo = rtree_coord(t, x->c[k->coord & ~1]), hi = rtree_coord(t, x->c[k->coord | 1]);
  if ((k->op == OP_LE || k->op == OP_LT || k->op == OP_EQ) && !(k->v >= lo)) return 0;
  if ((k->op == OP_GE || k->op == OP_GT || k->op == OP_EQ) && !(k->v <= hi)) return 0;
  return 1;
}

static int cell_matches(const Rtree *t, RtCursor *c, const RtCell *x, int leaf) {
  for (int i = 0; i < c->ncons; i++) {
    RtCons *k = &c->cons[i];
    if (k->op == OP_MATCH) {
      int in = geometry_matches(t, k, x);
      if (in <= 0) return in;
      continue;
    }
    if (!coord_matches(t, k, x, leaf)) return 0;
  }
  return 1;
}

/* The constraints of the last filter as byte tests (RtTest): 0 when one is
 * a MATCH (cell_matches then runs). */
static int tests_build(RtCursor *c) {
  c->never = c->ntleaf = c->ntnode = 0;
  for (int i = 0; i < c->ncons; i++) {
    const RtCons *k = &c->cons[i];
    if (k->op == OP_MATCH || k->op == OP_QUERY) return 0;
    if (k->op == OP_TRUE) continue;
    if (k->op == OP_FALSE) {
      c->never = 1;
      continue;
    }
    c->tleaf[c->ntleaf++] = (RtTest){8 + 4 * k->coord, k->op, k->v};
    if (k->op == OP_LE || k->op == OP_LT || k->op == OP_EQ)
      c->tnode[c->ntnode++] = (RtTest){8 + 4 * (k->coord & ~1), OP_LE, k->v};
    if (k->op == OP_GE || k->op == OP_GT || k->op == OP_EQ)
      c->tnode[c->ntnode++] = (RtTest){8 + 4 * (k->coord | 1), OP_GE, k->v};
  }
  return 1;
}

/* 1 if the cell at p passes every test of ts[0..n). */
static int tests_pass(const Rtree *t, const RtTest *ts, int n, const uint8_t *p) {
  for (int i = 0; i < n; i++) {
    uint32_t b = rt_get4(p + ts[i].off);
    RtCoord x;
    memcpy(&x, &b, 4);
    double v = rtree_coord(t, x), k = ts[i].v;
    int in;
    switch (ts[i].op) {
      case OP_LE:
        in = v <= k;
        break;
      case OP_GE:
        in = v >= k;
        break;
      case OP_LT:
        in = v < k;
        break;
      case OP_GT:
        in = v > k;
        break;
      default:
        in = v == k;
        break;
    }
    if (!in) return 0;
  }
  return 1;
}

/* step() over byte tests: a cell is decoded only when it passes (an entry
 * whole, a subtree its child number). */
static int step_tests(RtCursor *c) {
  Rtree *t = (Rtree *)c->base.pVtab;
  if (c->never) c->nframe = 0;
  while (c->nframe > 0) {
    int i = c->nframe - 1, leaf = c->depth == i;
    RtFrame *f = &c->frame[i];
    const RtTest *ts = leaf ? c->tleaf : c->tnode;
    int nt = leaf ? c->ntleaf : c->ntnode, icell = -1;
    while (f->icell < f->ncell) {
      const uint8_t *p = f->data + 4 + t->cell_size * f->icell++;
      if (tests_pass(t, ts, nt, p)) {
        icell = f->icell - 1;
        break;
      }
    }
    if (icell < 0) {
      c->nframe--;
      continue;
    }
    if (leaf) {
      rtree_cell_get(t, f->data, icell, &c->cell);
      return SHALE_OK;
    }
    if (i + 1 > RT_MAX_DEPTH) return SHALE_CORRUPT_VTAB;
    int rc = load_frame(c, i + 1, rtree_cell_id(t, f->data, icell));
    if (rc) return rc;
    c->nframe++;
  }
  c->eof = 1;
  return SHALE_OK;
}

/* Advance to the next matching entry, depth first. */
static int step(RtCursor *c) {
  Rtree *t = (Rtree *)c->base.pVtab;
  c->aux_ok = 0;
  if (c->tests) return step_tests(c);
  while (c->nframe > 0) {
    int i = c->nframe - 1, level = c->depth - i;
    RtFrame *f = &c->frame[i];
    if (f->icell >= f->ncell) {
      c->nframe--;
      continue;
    }
    RtCell x;
    rtree_cell_get(t, f->data, f->icell++, &x);
    int in = cell_matches(t, c, &x, level == 0);
    if (in < 0) return -1 - in;
    if (!in) continue;
    if (level == 0) {
      c->cell = x;
      return SHALE_OK;
    }
    if (i + 1 > RT_MAX_DEPTH) return SHALE_CORRUPT_VTAB;
    int rc = load_frame(c, i + 1, x.id);
    if (rc) return rc;
    c->nframe++;
  }
  c->eof = 1;
  return SHALE_OK;
}

/* ---- searches with a query callback: SQLite's priority queue ---- */

enum { NOT_WITHIN = 0, PARTLY_WITHIN = 1, FULLY_WITHIN = 2 };

/* SQLite's rtreeSearchPointCompare: by score, then level. */
static int pt_cmp(const RtPoint *a, const RtPoint *b) {
  if (a->score < b->score) return -1;
  if (a->score > b->score) return 1;
  if (a->level < b->level) return -1;
  if (a->level > b->level) return 1;
  return 0;
}

static void pt_swap(RtCursor *c, int i, int j) {
  RtPoint x = c->pts[i];
  c->pts[i] = c->pts[j];
  c->pts[j] = x;
}

static RtPoint *pt_first(RtCursor *c) { return c->bpt ? &c->spt : c->npt ? c->pts : NULL; }

/* Into the heap (rtreeEnqueue). */
static RtPoint *pt_enqueue(RtCursor *c, double score, int level) {
  if (c->npt >= c->cappt) {
    int n = c->cappt ? c->cappt * 2 + 8 : 8;
    RtPoint *a = shale_realloc(c->pts, sizeof *a * (size_t)n);
    if (!a) return NULL;
    c->pts = a;
    c->cappt = n;
  }
  int i = c->npt++;
  RtPoint *p = &c->pts[i];
  p->score = score;
  p->level = level;
  while (i > 0) {
    int j = (i - 1) / 2;
    if (pt_cmp(p, &c->pts[j]) >= 0) break;
    pt_swap(c, j, i);
    i = j;
    p = &c->pts[j];
  }
  return p;
}

/* A new point (rtreeSearchPointNew): one that sorts first is kept aside
 * in spt, the one there before going into the heap. */
static RtPoint *pt_new(RtCursor *c, double score, int level) {
  RtPoint *first = pt_first(c);
  c->anq[level]++;
  if (!first || first->score > score || (first->score == score && first->level > level)) {
    if (c->bpt) {
      RtPoint *p = pt_enqueue(c, score, level);
      if (!p) return NULL;
      *p = c->spt;
    }
    c->spt.score = score;
    c->spt.level = level;
    c->bpt = 1;
    return &c->spt;
  }
  return pt_enqueue(c, score, level);
}

/* Drop the first point (rtreeSearchPointPop). */
static void pt_pop(RtCursor *c) {
  if (c->bpt) {
    c->anq[c->spt.level]--;
    c->bpt = 0;
    return;
  }
  if (!c->npt) return;
  c->anq[c->pts[0].level]--;
  int n = --c->npt;
  c->pts[0] = c->pts[n];
  int i = 0, j;
  while ((j = i * 2 + 1) < n) {
    int k = j + 1;
    int m = k < n && pt_cmp(&c->pts[k], &c->pts[j]) < 0 ? k : j;
    if (pt_cmp(&c->pts[m], &c->pts[i]) >= 0) break;
    pt_swap(c, i, m);
    i = m;
  }
}

/* Node id into the cursor's node buffer (c->buf), checked. */
static int qnode_load(RtCursor *c, int64_t id) {
  if (c->qnode_id == id) return SHALE_OK;
  Rtree *t = (Rtree *)c->base.pVtab;
  c->qnode_id = 0;
  int rc = rtree_read_blob(t, id, c->buf);
  if (rc) return rc;
  c->qncell = rt_get2(c->buf + 2);
  if (c->qncell > rtree_max_cells(t)) return SHALE_CORRUPT_VTAB;
  c->qnode_id = id;
  return SHALE_OK;
}

/* A callback constraint on cell x of point p (rtreeCallbackConstraint). */
static int callback_cons(const Rtree *t, RtCursor *c, RtCons *k, const RtCell *x, const RtPoint *p,
                         double *score, int *within) {
  if (k->op == OP_MATCH) {
    int in = geometry_matches(t, k, x);
    if (in < 0) return -1 - in;
    if (!in) *within = NOT_WITHIN;
    *score = 0.0;
    return SHALE_OK;
  }
  double coord[RT_MAX_DIM * 2];
  for (int j = 0; j < t->ndim2; j++) coord[j] = rtree_coord(t, x->c[j]);
  RtreeQueryInfo *q = &k->qi;
  if (p->level == 1) q->iRowid = x->id;
  q->aCoord = coord;
  q->nCoord = t->ndim2;
  q->anQueue = c->anq;
  q->mxLevel = c->depth + 1;
  q->iLevel = p->level - 1;
  q->rScore = q->rParentScore = p->score;
  q->eWithin = q->eParentWithin = p->within;
  int rc = k->query(q);
  q->aCoord = NULL;
  if (q->eWithin < *within) *within = q->eWithin;
  if (q->rScore < *score || *score < 0.0) *score = q->rScore;
  return rc;
}

/* To the next entry in score order (rtreeStepToLeaf). */
static int step_query(RtCursor *c) {
  Rtree *t = (Rtree *)c->base.pVtab;
  RtPoint *p;
  c->aux_ok = 0;
  while ((p = pt_first(c)) != NULL && p->level > 0) {
    int rc = qnode_load(c, p->id);
    if (rc) return rc;
    int ncell = c->qncell;
    while (p->icell < ncell) {
      double score = -1.0;
      int within = FULLY_WITHIN;
      RtCell x;
      rtree_cell_get(t, c->buf, p->icell, &x);
      for (int i = 0; i < c->ncons && within != NOT_WITHIN; i++) {
        RtCons *k = &c->cons[i];
        if (k->op == OP_MATCH || k->op == OP_QUERY) {
          rc = callback_cons(t, c, k, &x, p, &score, &within);
          if (rc) return rc;
        } else if (!coord_matches(t, k, &x, p->level == 1)) {
          within = NOT_WITHIN;
        }
      }
      p->icell++;
      if (within == NOT_WITHIN) continue;
      RtPoint nx = {.level = p->level - 1};
      if (nx.level) {
        nx.id = x.id;
        for (int i = 0; i < c->npt; i++)
          if (c->pts[i].id == nx.id) return SHALE_CORRUPT_VTAB;
      } else {
        nx.id = p->id;
        nx.icell = p->icell - 1;
      }
      if (p->icell >= ncell) pt_pop(c);
      if (score < 0.0) score = 0.0;
      if (nx.level > RT_MAX_DEPTH + 1) return SHALE_CORRUPT_VTAB;
      p = pt_new(c, score, nx.level);
      if (!p) return SHALE_NOMEM;
      p->within = (uint8_t)within;
      p->id = nx.id;
      p->icell = nx.icell;
      break;
    }
    if (p->icell >= ncell) pt_pop(c);
  }
  c->eof = p == NULL;
  if (!p) return SHALE_OK;
  int rc = qnode_load(c, p->id);
  if (rc) return rc;
  if (p->icell >= c->qncell) return SHALE_CORRUPT_VTAB;
  rtree_cell_get(t, c->buf, p->icell, &c->cell);
  return SHALE_OK;
}

/* Start a search in score order from the root (depth already read). */
static int start_query(RtCursor *c) {
  c->qmode = 1;
  c->npt = c->bpt = 0;
  c->qnode_id = 0;
  memset(c->anq, 0, sizeof c->anq);
  RtPoint *p = pt_new(c, 0.0, c->depth + 1);
  if (!p) return SHALE_NOMEM;
  p->id = 1;
  p->icell = 0;
  p->within = PARTLY_WITHIN;
  return step_query(c);
}

/* The geometry of a MATCH argument v (SQLite's deserializeGeometry): not a
 * geometry function's value is SHALE_ERROR. */
static int match_arg(RtCons *k, shale_value *v) {
  const RtreeMatchArg *m = shale_value_pointer(v, RTREE_MATCH_TYPE);
  if (!m) return SHALE_ERROR;
  memset(&k->qi, 0, sizeof k->qi);
  k->geom = m->geom;
  k->query = m->query;
  if (m->query) k->op = OP_QUERY;
  k->qi.apSqlParam = m->values;
  k->qi.pContext = m->context;
  k->qi.nParam = m->nparam;
  k->qi.aParam = shale_malloc(sizeof(double) * (size_t)(m->nparam > 0 ? m->nparam : 1));
  if (!k->qi.aParam) return SHALE_NOMEM;
  if (m->nparam > 0) memcpy(k->qi.aParam, m->param, sizeof(double) * (size_t)m->nparam);
  return SHALE_OK;
}

static int x_filter(shale_vtab_cursor *vc, int idx_num, const char *idx_str, int argc,
                    shale_value **argv) {
  RtCursor *c = (RtCursor *)vc;
  Rtree *t = (Rtree *)vc->pVtab;
  c->eof = 1;
  c->nframe = 0;
  c->tests = 0;
  cons_free(c);
  c->aux_ok = 0;
  c->qmode = 0;
  if (!c->buf) {
    c->buf = shale_malloc((size_t)t->node_size * (RT_MAX_DEPTH + 1));
    if (!c->buf) return SHALE_NOMEM;
  }
  if (idx_num == 1) {
    int type = argc > 0 ? shale_value_numeric_type(argv[0]) : SHALE_NULL;
    int64_t id = argc > 0 ? shale_value_int64(argv[0]) : 0;
    if (type != SHALE_INTEGER &&
        !(type == SHALE_FLOAT && shale_value_double(argv[0]) == (double)id))
      return SHALE_OK;
    int found;
    int64_t leaf;
    int rc = rtree_lookup(t, RT_ST_READ_ROWID, id, &found, &leaf);
    if (rc || !found) return rc;
    c->depth = 0;
    rc = load_frame(c, 0, leaf);
    if (rc) return rc;
    for (int i = 0; i < c->frame[0].ncell; i++)
      if (rtree_cell_id(t, c->frame[0].data, i) == id) {
        rtree_cell_get(t, c->frame[0].data, i, &c->cell);
        c->eof = 0;
        return SHALE_OK;
      }
    return SHALE_CORRUPT_VTAB;
  }
  int n = idx_str ? (int)strlen(idx_str) / 2 : 0;
  if (n > argc) n = argc;
  if (n > (int)(sizeof c->cons / sizeof c->cons[0])) n = (int)(sizeof c->cons / sizeof c->cons[0]);
  for (int i = 0; i < n; i++) {
    RtCons *k = &c->cons[i];
    k->op = idx_str[2 * i];
    k->coord = idx_str[2 * i + 1] - '0';
    c->ncons = i + 1; /* cons_free sees the geometries made so far */
    if (k->op == OP_MATCH) {
      int rc = match_arg(k, argv[i]);
      if (rc) return rc;
      continue;
    }
    if (k->coord < 0 || k->coord >= t->ndim2) return SHALE_ERROR;
    int type = shale_value_numeric_type(argv[i]); /* invariant 2 */
    if (type == SHALE_INTEGER || type == SHALE_FLOAT)
      k->v = shale_value_double(argv[i]);
    else if (type == SHALE_NULL)
      k->op = OP_FALSE;
    else
      k->op = (k->op == OP_LT || k->op == OP_LE) ? OP_TRUE : OP_FALSE;
  }
  c->ncons = n;
  int rc = load_frame(c, 0, 1);
  if (rc) return rc;
  c->depth = rt_get2(c->frame[0].data);
  if (c->depth > RT_MAX_DEPTH) return SHALE_CORRUPT_VTAB;
  for (int i = 0; i < n; i++)
    if (c->cons[i].op == OP_QUERY) return start_query(c);
  c->tests = tests_build(c);
  c->nframe = 1;
  c->eof = 0;
  return step(c);
}

static int x_next(shale_vtab_cursor *vc) {
  RtCursor *c = (RtCursor *)vc;
  if (c->qmode) {
    pt_pop(c);
    return step_query(c);
  }
  if (c->nframe == 0) {
    c->eof = 1;
    return SHALE_OK;
  }
  return step(c);
}

static int x_eof(shale_vtab_cursor *vc) { return ((RtCursor *)vc)->eof; }

static int x_rowid(shale_vtab_cursor *vc, shale_int64 *rowid) {
  *rowid = ((RtCursor *)vc)->cell.id;
  return SHALE_OK;
}

static int x_column(shale_vtab_cursor *vc, shale_context *ctx, int col) {
  RtCursor *c = (RtCursor *)vc;
  Rtree *t = (Rtree *)vc->pVtab;
  if (col == 0) {
    shale_result_int64(ctx, c->cell.id);
    return SHALE_OK;
  }
  if (col <= t->ndim2) {
    if (t->is_int)
      shale_result_int64(ctx, c->cell.c[col - 1].i);
    else
      shale_result_double(ctx, c->cell.c[col - 1].f);
    return SHALE_OK;
  }
  if (!c->aux_ok) {
    if (!c->aux) {
      char *sql = stmt_sql(t, RT_ST_READ_AUX);
      if (!sql) return SHALE_NOMEM;
      int rc = shale_prepare_v2(t->db, sql, -1, &c->aux, NULL);
      shale_free(sql);
      if (rc) {
        c->aux = NULL;
        return rc;
      }
    }
    shale_reset(c->aux);
    shale_bind_int64(c->aux, 1, c->cell.id);
    int rc = shale_step(c->aux);
    if (rc != SHALE_ROW) {
      rc = shale_reset(c->aux);
      if (rc) return rc;
      shale_result_null(ctx);
      return SHALE_OK;
    }
    c->aux_ok = 1;
  }
  shale_result_value(ctx, shale_column_value(c->aux, col - t->ndim2 + 1));
  return SHALE_OK;
}

/* ---- writes ---- */

/* SQLite's outward rounding of a double to float (invariant 4). */
static float round_down(double d) {
  float f = (float)d;
  if (f > d) f = (float)(d * (d < 0 ? 1.0 + 1.0 / 8388608.0 : 1.0 - 1.0 / 8388608.0));
  return f;
}
static float round_up(double d) {
  float f = (float)d;
  if (f < d) f = (float)(d * (d < 0 ? 1.0 - 1.0 / 8388608.0 : 1.0 + 1.0 / 8388608.0));
  return f;
}

static int new_rowid(Rtree *t, int64_t *out) {
  shale_stmt *s;
  int rc = rtree_stmt(t, RT_ST_WRITE_ROWID, &s);
  if (rc) return rc;
  shale_bind_null(s, 1);
  shale_bind_null(s, 2);
  shale_step(s);
  rc = shale_reset(s);
  *out = shale_last_insert_rowid(t->db);
  return rc;
}

static int x_update(shale_vtab *vt, int argc, shale_value **argv, shale_int64 *rowid) {
  Rtree *t = (Rtree *)vt;
  RtCell cell;
  memset(&cell, 0, sizeof cell);
  int rc = SHALE_OK, have_id = 0;
  if (argc > 1) {
    int n = argc - 4;
    if (n > t->ndim2) n = t->ndim2;
    for (int i = 0; i < n; i += 2) {
      if (t->is_int) {
        cell.c[i].i = shale_value_int(argv[i + 3]);
        cell.c[i + 1].i = shale_value_int(argv[i + 4]);
        if (cell.c[i].i > cell.c[i + 1].i) return rtree_constraint_error(t, i + 1);
      } else {
        cell.c[i].f = round_down(shale_value_double(argv[i + 3]));
        cell.c[i + 1].f = round_up(shale_value_double(argv[i + 4]));
        if (cell.c[i].f > cell.c[i + 1].f) return rtree_constraint_error(t, i + 1);
      }
    }
    if (shale_value_type(argv[2]) != SHALE_NULL) {
      cell.id = shale_value_int64(argv[2]);
      if (shale_value_type(argv[0]) == SHALE_NULL || shale_value_int64(argv[0]) != cell.id) {
        int found;
        int64_t ignored;
        rc = rtree_lookup(t, RT_ST_READ_ROWID, cell.id, &found, &ignored);
        if (rc == SHALE_OK && found) {
          if (shale_vtab_on_conflict(t->db) == 5 /* REPLACE */)
            rc = rtree_delete(t, cell.id);
          else
            rc = rtree_constraint_error(t, 0);
        }
      }
      have_id = 1;
    }
  }
  if (rc == SHALE_OK && shale_value_type(argv[0]) != SHALE_NULL)
    rc = rtree_delete(t, shale_value_int64(argv[0]));
  if (rc == SHALE_OK && argc > 1) {
    if (!have_id) rc = new_rowid(t, &cell.id);
    *rowid = cell.id;
    if (rc == SHALE_OK) rc = rtree_insert(t, &cell);
    if (rc == SHALE_OK && t->naux) {
      shale_stmt *s;
      rc = rtree_stmt(t, RT_ST_WRITE_AUX, &s);
      if (rc == SHALE_OK) {
        shale_bind_int64(s, 1, cell.id);
        for (int j = 0; j < t->naux; j++) shale_bind_value(s, j + 2, argv[t->ndim2 + 3 + j]);
        shale_step(s);
        rc = shale_reset(s);
      }
    }
  }
  return rtree_cache_end(t, rc);
}

static int x_savepoint(shale_vtab *vt, int n) {
  (void)vt;
  (void)n;
  return SHALE_OK;
}

static const shale_module rtree_module = {
    .iVersion = 3,
    .xCreate = x_create,
    .xConnect = x_connect,
    .xBestIndex = x_best_index,
    .xDisconnect = x_disconnect,
    .xDestroy = x_destroy,
    .xOpen = x_open,
    .xClose = x_close,
    .xFilter = x_filter,
    .xNext = x_next,
    .xEof = x_eof,
    .xColumn = x_column,
    .xRowid = x_rowid,
    .xUpdate = x_update,
    .xRename = x_rename,
    .xSavepoint = x_savepoint,
    .xRelease = x_savepoint,
    .xRollbackTo = x_savepoint,
    .xShadowName = x_shadow_name,
};

int rtree_register(shale *db) {
  int rc = shale_create_module_v2(db, "rtree", &rtree_module, NULL, NULL);
  if (rc == SHALE_OK) rc = shale_create_module_v2(db, "rtree_i32", &rtree_module, (void *)1, NULL);
  if (rc == SHALE_OK) rc = rtree_register_functions(db);
  return rc;
}
