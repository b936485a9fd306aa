/*
 * vtab_ext.c -- the rest of the virtual-table contract (issue 15), on the
 * reference and on Shale (test_compat.c compares the output): a module
 * ("lst": ten rows a = 1..10, b = 'r' || a) that prints what xBestIndex is
 * offered and what xFilter gets, then
 *   - IN constraints: one xFilter per value unless xBestIndex takes the IN
 *     whole with sqlite3_vtab_in(info, i, 1) and gives it an argvIndex;
 *     the list then comes as one argument read with sqlite3_vtab_in_first /
 *     _in_next (distinct values in the set's order, the column's affinity
 *     applied); sqlite3_vtab_in on other constraints says 0, and
 *     sqlite3_vtab_in_first on a plain value is SQLITE_MISUSE;
 *   - sqlite3_vtab_nochange in xColumn during an UPDATE, and
 *     sqlite3_value_nochange of the xUpdate arguments left unset;
 *   - xFindFunction: functions overloaded on a column (the first argument,
 *     the left operand of LIKE and MATCH) with the module's user data, and
 *     function constraints (xFindFunction >= SQLITE_INDEX_CONSTRAINT_FUNCTION)
 *     offered to xBestIndex, omitted or tested again;
 *   - SQLITE_DBCONFIG_DEFENSIVE: the shadow tables of a version-3 module
 *     with xShadowName ("shd", and R-Tree's and FTS5's) refuse INSERT,
 *     UPDATE, DELETE and DROP from ordinary SQL, but not from the module's
 *     own statements (xCreate, xUpdate); writable_schema has no effect;
 *   - sqlite3_rtree_geometry_callback: "circle" (and a failing "bad")
 *     registered and used through MATCH on rtree and rtree_i32 tables,
 *     with the parameters, the context and pUser/xDelUser as SQLite hands
 *     them over, the calls counted per query.
 *
 * Invariants:
 *  1. Output depends only on the calls the engine makes and their
 *     arguments (no pointers, no timing).
 */
#include "prog.h"

/* How xBestIndex treats an IN on column a (in_mode):
 * 0 ignores sqlite3_vtab_in, 1 takes the IN whole, 2 takes it but gives no
 * argvIndex, 3 takes it and then gives it back (handle 0). */
static int in_mode;
static int omit_mode;

typedef struct {
  sqlite3_vtab base;
  int rows[11]; /* rows[a]: 1 present; b of a changed: its new text */
  char b[11][16];
} LstTab;

typedef struct {
  sqlite3_vtab_cursor base;
  int a;     /* current row */
  int nwant; /* -1: every row */
  long long want[16];
} LstCur;

static int lst_init(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                    char **err) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(a INTEGER, b TEXT)");
  if (rc != SQLITE_OK) return rc;
  LstTab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  for (int a = 1; a <= 10; a++) {
    t->rows[a] = 1;
    snprintf(t->b[a], sizeof t->b[a], "r%d", a);
  }
  *out = &t->base;
  return SQLITE_OK;
}
static int lst_disconnect(sqlite3_vtab *vt) {
  sqlite3_free(vt);
  return SQLITE_OK;
}

static int lst_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  int used = 0, fn_used = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    int in = sqlite3_vtab_in(info, i, -1);
    printf("  best c%d col=%d op=%d usable=%d in=%d\n", i, c->iColumn, c->op, c->usable, in);
    if (c->op >= SQLITE_INDEX_CONSTRAINT_FUNCTION && c->usable && !fn_used) {
      fn_used = 1 + used;
      info->aConstraintUsage[i].argvIndex = fn_used;
      info->aConstraintUsage[i].omit = (unsigned char)omit_mode;
      continue;
    }
    if (used || !c->usable || c->iColumn != 0 || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (in && in_mode) {
      sqlite3_vtab_in(info, i, 1);
      if (in_mode == 3) sqlite3_vtab_in(info, i, 0);
      if (in_mode == 2) continue;
    }
    info->aConstraintUsage[i].argvIndex = 1 + (fn_used != 0);
    info->aConstraintUsage[i].omit = (unsigned char)omit_mode;
    used = 1;
  }
  printf("  best in(-1 constraint)=%d in(nConstraint)=%d\n", sqlite3_vtab_in(info, -1, -1),
         sqlite3_vtab_in(info, info->nConstraint, -1));
  info->idxNum = used + 2 * (fn_used != 0);
  info->estimatedCost = used ? 10 : fn_used ? 100 : 1000;
  return SQLITE_OK;
}

static int lst_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  LstCur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}
static int lst_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

static int wanted(LstCur *c, int a) {
  if (c->nwant < 0) return 1;
  for (int i = 0; i < c->nwant; i++)
    if (c->want[i] == a) return 1;
  return 0;
}
static void advance(LstCur *c) {
  LstTab *t = (LstTab *)c->base.pVtab;
  while (c->a <= 10 && (!t->rows[c->a] || !wanted(c, c->a))) c->a++;
}

static void print_value(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      printf(" int:%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      printf(" real:%g", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT:
      printf(" text:%s", (const char *)sqlite3_value_text(v));
      break;
    case SQLITE_BLOB:
      printf(" blob:%d", sqlite3_value_bytes(v));
      break;
    default:
      printf(" null");
  }
}

static void want_add(LstCur *c, sqlite3_value *v) {
  if (c->nwant < 16 && sqlite3_value_type(v) == SQLITE_INTEGER)
    c->want[c->nwant++] = sqlite3_value_int64(v);
}

static int lst_filter(sqlite3_vtab_cursor *cur, int idx, const char *s, int argc,
                      sqlite3_value **argv) {
  LstCur *c = (LstCur *)cur;
  c->a = 1;
  c->nwant = idx & 1 ? 0 : -1;
  printf("  filter idx=%d argc=%d", idx, argc);
  for (int k = idx & 1 ? 1 : 0; k < argc; k++) {
    printf(" arg%d:", k);
    print_value(argv[k]);
  }
  if (idx & 1) {
    sqlite3_value *v = NULL;
    int rc = sqlite3_vtab_in_first(argv[0], &v);
    if (rc == SQLITE_OK) {
      printf(" list:");
      for (; rc == SQLITE_OK; rc = sqlite3_vtab_in_next(argv[0], &v)) {
        print_value(v);
        want_add(c, v);
      }
      printf(" end=%d null=%d", rc, v == NULL);
    } else {
      printf(" in_first=%d null=%d value:", rc, v == NULL);
      print_value(argv[0]);
      want_add(c, argv[0]);
    }
  }
  printf("\n");
  advance(c);
  return SQLITE_OK;
}
static int lst_next(sqlite3_vtab_cursor *cur) {
  LstCur *c = (LstCur *)cur;
  c->a++;
  advance(c);
  return SQLITE_OK;
}
static int lst_eof(sqlite3_vtab_cursor *cur) { return ((LstCur *)cur)->a > 10; }
static int lst_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  LstCur *c = (LstCur *)cur;
  LstTab *t = (LstTab *)cur->pVtab;
  int nc = sqlite3_vtab_nochange(ctx);
  if (nc) printf("  column %d of row %d: nochange\n", col, c->a);
  if (nc && col == 1) return SQLITE_OK; /* left unset: b is not changed */
  if (col == 0)
    sqlite3_result_int(ctx, c->a);
  else
    sqlite3_result_text(ctx, t->b[c->a], -1, SQLITE_TRANSIENT);
  return SQLITE_OK;
}
static int lst_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *r) {
  *r = ((LstCur *)cur)->a;
  return SQLITE_OK;
}

static int lst_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  LstTab *t = (LstTab *)vt;
  printf("  update argc=%d", argc);
  for (int i = 0; i < argc; i++) {
    print_value(argv[i]);
    if (sqlite3_value_nochange(argv[i])) printf("(nochange)");
  }
  printf("\n");
  if (argc == 1) {
    long long a = sqlite3_value_int64(argv[0]);
    if (a >= 1 && a <= 10) t->rows[a] = 0;
    return SQLITE_OK;
  }
  long long a = sqlite3_value_int64(argv[0]);
  if (a < 1 || a > 10 || sqlite3_value_type(argv[0]) != SQLITE_INTEGER) return SQLITE_OK;
  if (!sqlite3_value_nochange(argv[3]))
    snprintf(t->b[a], sizeof t->b[a], "%s", (const char *)sqlite3_value_text(argv[3]));
  return SQLITE_OK;
}

/* The overloading functions: each prints its name, user data and
 * arguments. */
static void fn_print(sqlite3_context *ctx, int argc, sqlite3_value **argv, const char *what) {
  printf("  %s[%s]", what, (const char *)sqlite3_user_data(ctx));
  for (int i = 0; i < argc; i++) print_value(argv[i]);
  printf("\n");
}
static void fn_upper(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  fn_print(ctx, argc, argv, "upper");
  sqlite3_result_text(ctx, sqlite3_mprintf("U:%s", sqlite3_value_text(argv[0])), -1, sqlite3_free);
}
/* like(pattern, b): b ends with the pattern's first character */
static void fn_like(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  fn_print(ctx, argc, argv, "like");
  const char *pat = (const char *)sqlite3_value_text(argv[0]);
  const char *b = (const char *)sqlite3_value_text(argv[1]);
  size_t n = b ? strlen(b) : 0;
  sqlite3_result_int(ctx, pat && n && b[n - 1] == pat[0]);
}
static void fn_match(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  fn_print(ctx, argc, argv, "match");
  const char *q = (const char *)sqlite3_value_text(argv[0]);
  const char *b = (const char *)sqlite3_value_text(argv[1]);
  sqlite3_result_int(ctx, q && b && !strcmp(q, b));
}
/* near(a, x): |a - x| <= 1 */
static void fn_near(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  fn_print(ctx, argc, argv, "near");
  long long d = sqlite3_value_int64(argv[0]) - sqlite3_value_int64(argv[1]);
  sqlite3_result_int(ctx, d >= -1 && d <= 1);
}

static int lst_find(sqlite3_vtab *vt, int nargs, const char *name,
                    void (**fn)(sqlite3_context *, int, sqlite3_value **), void **arg) {
  if (!strcmp(name, "upper") && nargs == 1) {
    *fn = fn_upper;
    *arg = "up";
    return 1;
  }
  if (!strcmp(name, "like") && nargs == 2) {
    *fn = fn_like;
    *arg = "lk";
    return 1;
  }
  if (!strcmp(name, "match") && nargs == 2) {
    *fn = fn_match;
    *arg = "mt";
    return 1;
  }
  if (!sqlite3_stricmp(name, "near") && nargs == 2) {
    *fn = fn_near;
    *arg = "nr";
    return SQLITE_INDEX_CONSTRAINT_FUNCTION;
  }
  if (!sqlite3_stricmp(name, "far") && nargs == 2) {
    *fn = fn_near;
    *arg = "fr";
    return SQLITE_INDEX_CONSTRAINT_FUNCTION + 7;
  }
  return 0;
}

static sqlite3_module lst_module = {
    .iVersion = 1,
    .xCreate = lst_init,
    .xConnect = lst_init,
    .xBestIndex = lst_best,
    .xDisconnect = lst_disconnect,
    .xDestroy = lst_disconnect,
    .xOpen = lst_open,
    .xClose = lst_close,
    .xFilter = lst_filter,
    .xNext = lst_next,
    .xEof = lst_eof,
    .xColumn = lst_column,
    .xRowid = lst_rowid,
    .xUpdate = lst_update,
    .xFindFunction = lst_find,
};

static int print_row(void *u, int n, char **v, char **names) {
  printf("   ");
  for (int i = 0; i < n; i++) printf(" %s", v[i] ? v[i] : "NULL");
  printf("\n");
  return 0;
}

static void run(sqlite3 *db, const char *sql) {
  printf("%s\n", sql);
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, print_row, NULL, &err);
  if (rc) printf("  rc=%d %s\n", rc, err ? err : "");
  sqlite3_free(err);
}

static void in_lists(sqlite3 *db) {
  static const char *q[] = {
      "SELECT a, b FROM t WHERE a IN (7, 3, 1, 3)",
      "SELECT a FROM t WHERE a IN ('2', 5, 2.0, 'x')",
      "SELECT a FROM t WHERE a IN (SELECT v FROM n)",
      "SELECT a FROM t WHERE a = 4",
      "SELECT a FROM t WHERE b IN ('r1', 'r2')",
      "SELECT n.v, t.b FROM n CROSS JOIN t WHERE t.a IN (n.v, n.v + 1) ORDER BY 1, 2",
      "SELECT a FROM t WHERE a IN (1, 2) AND a IN (2, 3)",
  };
  for (int mode = 0; mode <= 3; mode++) {
    for (int om = 0; om <= 1; om++) {
      in_mode = mode;
      omit_mode = om;
      printf("-- in_mode %d omit %d\n", mode, om);
      for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) run(db, q[i]);
    }
  }
  in_mode = omit_mode = 0;
}

static void nochange(sqlite3 *db) {
  printf("-- nochange\n");
  run(db, "UPDATE t SET a = a WHERE a = 2");
  run(db, "UPDATE t SET b = 'new' WHERE a = 3");
  run(db, "UPDATE t SET a = 4, b = b || '!' WHERE a = 4");
  run(db, "UPDATE t SET rowid = rowid WHERE a = 5");
  run(db, "DELETE FROM t WHERE a = 6");
  run(db, "SELECT a, b FROM t WHERE a BETWEEN 2 AND 6");
}

/* ---- "shd": keeps its rows in the shadow table NAME_data ---- */

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
  char name[64];
} ShdTab;

static int shd_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(v)");
  char *sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w_data\"(v)", argv[2]);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, err);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) return rc;
  ShdTab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  snprintf(t->name, sizeof t->name, "%s", argv[2]);
  *out = &t->base;
  return SQLITE_OK;
}
static int shd_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  info->estimatedCost = 100;
  return SQLITE_OK;
}
static int shd_filter(sqlite3_vtab_cursor *cur, int idx, const char *s, int argc,
                      sqlite3_value **argv) {
  return SQLITE_OK;
}
static int shd_filter_next(sqlite3_vtab_cursor *cur) { return SQLITE_OK; }
static int shd_eof(sqlite3_vtab_cursor *cur) { return 1; }
static int shd_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) { return SQLITE_OK; }
static int shd_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  ShdTab *t = (ShdTab *)vt;
  if (argc < 3) return SQLITE_OK;
  char *sql = sqlite3_mprintf("INSERT INTO \"%w_data\" VALUES (%Q)", t->name,
                              (const char *)sqlite3_value_text(argv[2]));
  int rc = sqlite3_exec(t->db, sql, NULL, NULL, &vt->zErrMsg);
  sqlite3_free(sql);
  return rc;
}
/* (when SQLite and Shale ask differs: SQLite marks the table at CREATE) */
static int shd_shadow(const char *suffix) { return !strcmp(suffix, "data"); }

static sqlite3_module shd_module = {
    .iVersion = 3,
    .xCreate = shd_create,
    .xConnect = shd_create,
    .xBestIndex = shd_best,
    .xDisconnect = lst_disconnect,
    .xDestroy = lst_disconnect,
    .xOpen = lst_open,
    .xClose = lst_close,
    .xFilter = shd_filter,
    .xNext = shd_filter_next,
    .xEof = shd_eof,
    .xColumn = shd_column,
    .xRowid = lst_rowid,
    .xUpdate = shd_update,
    .xShadowName = shd_shadow,
};

static void defensive(sqlite3 *db) {
  static const char *q[] = {
      "INSERT INTO s_data VALUES ('direct')",
      "UPDATE s_data SET v = v || '+'",
      "DELETE FROM s_data WHERE v = 'none'",
      "INSERT INTO s VALUES ('via module')",
      "INSERT INTO s_other VALUES (1)",
      "INSERT INTO r VALUES (1, 0, 1)",
      "INSERT INTO r_node VALUES (99, x'')",
      "UPDATE r_rowid SET nodeno = nodeno",
      "DELETE FROM r_parent",
      "INSERT INTO f VALUES ('hello world')",
      "INSERT INTO f_data VALUES (99, x'')",
      "DELETE FROM f_docsize WHERE id = 99",
      "PRAGMA writable_schema = ON",
      "PRAGMA writable_schema",
      "UPDATE sqlite_schema SET sql = sql WHERE name = 's_other'",
      "PRAGMA writable_schema = OFF",
      "SELECT count(*) FROM s_data",
      "SELECT count(*) FROM r_node",
  };
  printf("-- defensive\n");
  EXPECT_INT(sqlite3_create_module(db, "shd", &shd_module, NULL), SQLITE_OK);
  run(db, "CREATE VIRTUAL TABLE s USING shd");
  run(db, "CREATE TABLE s_other(x)");
  run(db, "CREATE VIRTUAL TABLE r USING rtree(id, x0, x1)");
  run(db, "CREATE VIRTUAL TABLE f USING fts5(body)");
  for (int on = 0; on <= 1; on++) {
    int v = -1;
    EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, &v), SQLITE_OK);
    EXPECT_INT(v, on);
    printf("-- DEFENSIVE %d\n", on);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) run(db, q[i]);
    v = -1;
    EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, &v), SQLITE_OK);
    run(db, "UPDATE sqlite_schema SET sql = sql WHERE name = 's_other'");
    EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 0, &v), SQLITE_OK);
    run(db, "BEGIN; INSERT INTO s VALUES ('in txn'); INSERT INTO f VALUES ('more'); COMMIT");
  }
  run(db, "DROP TABLE s_data");
  run(db, "DROP TABLE r_node");
  run(db, "DROP TABLE s_other");
  run(db, "DROP TABLE s");
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL), SQLITE_OK);
  run(db, "DROP TABLE s_data");
}

/* ---- R-Tree geometry callbacks ---- */

typedef struct {
  int calls;
} CircleUser;

static void circle_user_free(void *p) {
  printf("  circle: %d calls\n", ((CircleUser *)p)->calls);
  sqlite3_free(p);
}

/* circle(x, y, r): the box (2 dimensions) overlaps the circle's bounding
 * square */
static int circle_geom(sqlite3_rtree_geometry *g, int n, sqlite3_rtree_dbl *a, int *res) {
  if (g->nParam != 3 || n != 4) return SQLITE_ERROR;
  if (!g->pUser) {
    CircleUser *u = sqlite3_malloc(sizeof *u);
    if (!u) return SQLITE_NOMEM;
    u->calls = 0;
    g->pUser = u;
    g->xDelUser = circle_user_free;
    printf("  circle: context %s, params %g %g %g\n", (const char *)g->pContext, g->aParam[0],
           g->aParam[1], g->aParam[2]);
  }
  ((CircleUser *)g->pUser)->calls++;
  double x = g->aParam[0], y = g->aParam[1], r = g->aParam[2];
  *res = a[0] <= x + r && a[1] >= x - r && a[2] <= y + r && a[3] >= y - r;
  return SQLITE_OK;
}

/* near(x, y, r): a query callback scoring cells by the distance of their
 * centre from (x, y); boxes outside the square of side 2r are out, inside
 * it fully within. Entries at an odd rowid score half (a level-dependent
 * rule, so that the order is the queue's). */
static int near_query(sqlite3_rtree_query_info *q) {
  if (q->nParam != 3 || q->nCoord != 4) return SQLITE_ERROR;
  if (!q->pUser) {
    CircleUser *u = sqlite3_malloc(sizeof *u);
    if (!u) return SQLITE_NOMEM;
    u->calls = 0;
    q->pUser = u;
    q->xDelUser = circle_user_free;
    printf("  near: context %s, params %g %g %g (sql %s), mxLevel %d, first level %d\n",
           (const char *)q->pContext, q->aParam[0], q->aParam[1], q->aParam[2],
           sqlite3_value_text(q->apSqlParam[2]), q->mxLevel, q->iLevel);
  }
  ((CircleUser *)q->pUser)->calls++;
  double x = q->aParam[0], y = q->aParam[1], r = q->aParam[2];
  const sqlite3_rtree_dbl *a = q->aCoord;
  if (a[0] > x + r || a[1] < x - r || a[2] > y + r || a[3] < y - r) {
    q->eWithin = NOT_WITHIN;
    return SQLITE_OK;
  }
  int inside = a[0] >= x - r && a[1] <= x + r && a[2] >= y - r && a[3] <= y + r;
  if (q->eParentWithin != FULLY_WITHIN) q->eWithin = inside ? FULLY_WITHIN : PARTLY_WITHIN;
  double dx = (a[0] + a[1]) / 2 - x, dy = (a[2] + a[3]) / 2 - y;
  q->rScore = dx * dx + dy * dy;
  if (q->iLevel == 0 && (q->iRowid & 1)) q->rScore /= 2;
  return SQLITE_OK;
}

static void rtree_query(sqlite3 *db) {
  static const char *q[] = {
      "SELECT id FROM g WHERE id MATCH near(50, 50, 10)",
      "SELECT id, x0 FROM g WHERE id MATCH near(20, 30, 12) AND x0 >= 15",
      "SELECT id FROM g WHERE id MATCH near(50, 50, 10) AND id MATCH circle(52, 52, 3)",
      "SELECT id FROM gi WHERE id MATCH near(70, 20, 8) LIMIT 4",
      "SELECT n.v, g.id FROM n CROSS JOIN g WHERE g.id MATCH near(n.v * 10, 50, 4)",
      "SELECT count(*) FROM g WHERE id MATCH near(0, 0, 1000)",
      "SELECT id FROM g WHERE id MATCH near(1, 2)",
  };
  printf("-- rtree query\n");
  EXPECT_INT(sqlite3_rtree_query_callback(db, "near", near_query, "qctx", NULL), SQLITE_OK);
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) run(db, q[i]);
  /* a deeper tree: three levels */
  run(db, "CREATE VIRTUAL TABLE g3 USING rtree(id, x0, x1, y0, y1)");
  run(db,
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 6000) "
      "INSERT INTO g3 SELECT i, (i * 7919) % 1000 / 10.0, (i * 7919) % 1000 / 10.0 + 0.5, "
      "(i * 104729) % 1000 / 10.0, (i * 104729) % 1000 / 10.0 + 0.75 FROM c");
  run(db, "SELECT rtreedepth(data) FROM g3_node WHERE nodeno = 1");
  run(db, "SELECT id FROM g3 WHERE id MATCH near(40, 60, 2.5)");
  run(db, "SELECT id FROM g3 WHERE id MATCH circle(40, 60, 1.5)");
  run(db, "SELECT count(*), sum(id) FROM g3 WHERE id MATCH near(30, 30, 20) AND y0 < 40");
}

static void rtree_geometry(sqlite3 *db) {
  static const char *q[] = {
      "SELECT id FROM g WHERE id MATCH circle(50, 50, 8)",
      "SELECT count(*) FROM g WHERE id MATCH circle(20, 20, 15) AND x0 > 10",
      "SELECT id, x0 FROM g WHERE x0 MATCH circle(0, 0, 9) AND id > 100",
      "SELECT id FROM g WHERE id MATCH circle(50, 50, 8) AND id MATCH circle(48, 48, 2)",
      "SELECT n.v, g.id FROM n CROSS JOIN g WHERE g.id MATCH circle(n.v * 10, n.v * 10, 3)",
      "SELECT id FROM gi WHERE id MATCH circle(30, 70, 6)",
      "SELECT id FROM g WHERE id = 5 AND id MATCH circle(0, 0, 100)",
      "SELECT id FROM g WHERE id MATCH circle(1, 2)",
      "SELECT id FROM g WHERE id MATCH 5",
      "SELECT circle(1, 2, 3) IS NULL, typeof(circle(1, 2, 3))",
  };
  printf("-- rtree geometry\n");
  EXPECT_INT(sqlite3_rtree_geometry_callback(db, "circle", circle_geom, "ctx"), SQLITE_OK);
  run(db, "CREATE VIRTUAL TABLE g USING rtree(id, x0, x1, y0, y1)");
  run(db, "CREATE VIRTUAL TABLE gi USING rtree_i32(id, x0, x1, y0, y1)");
  run(db,
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
      "INSERT INTO g SELECT i, (i * 37) % 100, (i * 37) % 100 + 2.5, (i * 53) % 100, "
      "(i * 53) % 100 + 3.25 FROM c");
  run(db, "INSERT INTO gi SELECT * FROM g");
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) run(db, q[i]);
}

static void find_function(sqlite3 *db) {
  static const char *q[] = {
      "SELECT upper(b), upper('x'), lower(b) FROM t WHERE a <= 2",
      "SELECT a FROM t WHERE b LIKE 'r1%'",
      "SELECT a FROM t WHERE b NOT LIKE '0'",
      "SELECT a FROM t WHERE like('3', b)",
      "SELECT a FROM t WHERE 'r1' LIKE b",
      "SELECT a FROM t WHERE b MATCH 'r5'",
      "SELECT a FROM t WHERE near(a, 5)",
      "SELECT a FROM t WHERE NEAR(a, 5) AND a = 4",
      "SELECT a FROM t WHERE far(a, 9)",
      "SELECT a FROM t WHERE near(5, a)",
      "SELECT near(a, 2) FROM t WHERE a < 4",
      "SELECT a FROM n CROSS JOIN t WHERE near(t.a, n.v) AND n.v = 9",
      "SELECT a FROM t WHERE b NOT LIKE 'r1%'",
  };
  EXPECT_INT(sqlite3_overload_function(db, "near", 2), SQLITE_OK);
  EXPECT_INT(sqlite3_overload_function(db, "far", 2), SQLITE_OK);
  for (int om = 0; om <= 1; om++) {
    omit_mode = om;
    printf("-- xFindFunction omit %d\n", om);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) run(db, q[i]);
  }
  omit_mode = 0;
}

int main(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_create_module(db, "lst", &lst_module, NULL), SQLITE_OK);
  EXEC_OK(db, "CREATE VIRTUAL TABLE t USING lst");
  EXEC_OK(db, "CREATE TABLE n(v INTEGER); INSERT INTO n VALUES (2), (9), (2), (5)");
  in_lists(db);
  nochange(db);
  find_function(db);
  defensive(db);
  rtree_geometry(db);
  rtree_query(db);
  sqlite3_close(db);
  return prog_done();
}
