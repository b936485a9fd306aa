/*
 * rtree_func.c -- the R-Tree extension's SQL functions, with SQLite's
 * results and messages:
 *   rtreecheck([schema,] table)  'ok' or the problems found, one a line
 *   rtreenode(ndim, blob)        a node's cells as "{id c1 c2 ...} ..."
 *   rtreedepth(blob)             the depth field of a root node
 *
 * Invariants:
 *  1. rtreecheck reads the shadow tables through SQL only (it never trusts
 *     a node blob: sizes and counts are checked before a cell is read) and
 *     reports at most 100 problems, in SQLite's order: each node depth
 *     first (its cells' coordinates, then the mapping of each cell, then
 *     the child), then the row counts of NAME_rowid and NAME_parent.
 *  2. rtreenode reads a blob only within its length.
 */
#include <string.h>

#include "../../util/util.h"
#include "rtree_int.h"

typedef struct Check {
  shale *db;
  const char *zdb, *ztab;
  int rc, nerr, ndim, is_int;
  int64_t nleaf, nnonleaf;
  StrBuf report;
  shale_stmt *get_node, *map[2];
} Check;

static void check_msg(Check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check_msg(Check *c, const char *fmt, ...) {
  if (c->rc != SHALE_OK || c->nerr >= 100) return;
  va_list ap;
  va_start(ap, fmt);
  char *z = util_vmprintf(fmt, ap);
  va_end(ap);
  if (!z) {
    c->rc = SHALE_NOMEM;
    return;
  }
  if (c->nerr++) strbuf_appendchar(&c->report, 1, '\n');
  strbuf_appendz(&c->report, z);
  shale_free(z);
}

/* Prepare sql_head "db"."TABLEsuffix" tail. */
static shale_stmt *check_prepare(Check *c, const char *sql_head, const char *suffix,
                                 const char *tail) {
  if (c->rc) return NULL;
  char *name = util_mprintf("%s%s", c->ztab, suffix);
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  strbuf_appendz(&b, sql_head);
  rtree_quote(&b, c->zdb);
  strbuf_appendchar(&b, 1, '.');
  if (name)
    rtree_quote(&b, name);
  else
    b.err = SHALE_NOMEM;
  shale_free(name);
  strbuf_appendz(&b, tail);
  char *sql = strbuf_finish(&b);
  shale_stmt *s = NULL;
  if (!sql)
    c->rc = SHALE_NOMEM;
  else if (shale_prepare_v2(c->db, sql, -1, &s, NULL) != SHALE_OK) {
    c->rc = shale_errcode(c->db);
    s = NULL;
  }
  shale_free(sql);
  return s;
}

static uint8_t *check_get_node(Check *c, int64_t no, int *n) {
  if (!c->get_node) c->get_node = check_prepare(c, "SELECT data FROM ", "_node", " WHERE nodeno=?");
  if (!c->get_node) return NULL;
  uint8_t *out = NULL;
  shale_bind_int64(c->get_node, 1, no);
  if (shale_step(c->get_node) == SHALE_ROW) {
    int k = shale_column_bytes(c->get_node, 0);
    const void *p = shale_column_blob(c->get_node, 0);
    /* SQLite asks for a copy of exactly k bytes, and 0 bytes gives NULL,
     * which it reports as out of memory: the same answer here */
    out = k ? shale_malloc((size_t)k + 1) : NULL;
    if (!out)
      c->rc = SHALE_NOMEM;
    else if (k)
      memcpy(out, p, (size_t)k);
    *n = k;
  }
  int rc = shale_reset(c->get_node);
  if (c->rc == SHALE_OK) c->rc = rc;
  if (!out && c->rc == SHALE_OK) check_msg(c, "Node %lld missing from database", (long long)no);
  return out;
}

static void check_mapping(Check *c, int leaf, int64_t key, int64_t val) {
  if (!c->map[leaf])
    c->map[leaf] = leaf
                       ? check_prepare(c, "SELECT nodeno FROM ", "_rowid", " WHERE rowid=?1")
                       : check_prepare(c, "SELECT parentnode FROM ", "_parent", " WHERE nodeno=?1");
  shale_stmt *s = c->map[leaf];
  if (!s) return;
  shale_bind_int64(s, 1, key);
  int rc = shale_step(s);
  const char *tab = leaf ? "%_rowid" : "%_parent";
  if (rc == SHALE_DONE) {
    check_msg(c, "Mapping (%lld -> %lld) missing from %s table", (long long)key, (long long)val,
              tab);
  } else if (rc == SHALE_ROW) {
    int64_t got = shale_column_int64(s, 0);
    if (got != val)
      check_msg(c, "Found (%lld -> %lld) in %s table, expected (%lld -> %lld)", (long long)key,
                (long long)got, tab, (long long)key, (long long)val);
  }
  rc = shale_reset(s);
  if (c->rc == SHALE_OK) c->rc = rc;
}

static RtCoord read_coord(const uint8_t *p) {
  uint32_t v = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
  RtCoord x;
  memcpy(&x, &v, 4);
  return x;
}

static int coord_lt(const Check *c, RtCoord a, RtCoord b) {
  return c->is_int ? a.i < b.i : a.f < b.f;
}

static void check_coords(Check *c, int64_t node, int cell, const uint8_t *p,
                         const uint8_t *parent) {
  for (int i = 0; i < c->ndim; i++) {
    RtCoord c1 = read_coord(p + 8 * i), c2 = read_coord(p + 8 * i + 4);
    if (coord_lt(c, c2, c1))
      check_msg(c, "Dimension %d of cell %d on node %lld is corrupt", i, cell, (long long)node);
    if (parent) {
      RtCoord p1 = read_coord(parent + 8 * i), p2 = read_coord(parent + 8 * i + 4);
      if (coord_lt(c, c1, p1) || coord_lt(c, p2, c2))
        check_msg(c, "Dimension %d of cell %d on node %lld is corrupt relative to parent", i, cell,
                  (long long)node);
    }
  }
}

static void check_node(Check *c, int depth, const uint8_t *parent, int64_t no, int guard) {
  int n = 0;
  uint8_t *node = check_get_node(c, no, &n);
  if (!node) return;
  if (n < 4) {
    check_msg(c, "Node %lld is too small (%d bytes)", (long long)no, n);
  } else {
    if (!parent) {
      depth = rt_get2(node);
      if (depth > RT_MAX_DEPTH) {
        check_msg(c, "Rtree depth out of range (%d)", depth);
        shale_free(node);
        return;
      }
    }
    int ncell = rt_get2(node + 2), csize = 8 + c->ndim * 8;
    if (4 + ncell * csize > n) {
      check_msg(c, "Node %lld is too small for cell count of %d (%d bytes)", (long long)no, ncell,
                n);
    } else {
      for (int i = 0; i < ncell && c->rc == SHALE_OK; i++) {
        const uint8_t *p = node + 4 + i * csize;
        int64_t id = 0;
        for (int k = 0; k < 8; k++) id = (int64_t)(((uint64_t)id << 8) | p[k]);
        check_coords(c, no, i, p + 8, parent);
        if (depth > 0) {
          check_mapping(c, 0, id, no);
          if (guard < RT_MAX_DEPTH) check_node(c, depth - 1, p + 8, id, guard + 1);
          c->nnonleaf++;
        } else {
          check_mapping(c, 1, id, no);
          c->nleaf++;
        }
      }
    }
  }
  shale_free(node);
}

static void check_count(Check *c, const char *suffix, int64_t expect) {
  shale_stmt *s = check_prepare(c, "SELECT count(*) FROM ", suffix, "");
  if (!s) return;
  if (shale_step(s) == SHALE_ROW) {
    int64_t got = shale_column_int64(s, 0);
    if (got != expect)
      check_msg(c, "Wrong number of entries in %%%s table - expected %lld, actual %lld", suffix,
                (long long)expect, (long long)got);
  }
  c->rc = shale_finalize(s);
}

static void rtreecheck_fn(shale_context *ctx, int argc, shale_value **argv) {
  if (argc != 1 && argc != 2) {
    shale_result_error(ctx, "wrong number of arguments to function rtreecheck()", -1);
    return;
  }
  Check c;
  memset(&c, 0, sizeof c);
  strbuf_init(&c.report, STRBUF_NOLIMIT);
  c.db = shale_context_db_handle(ctx);
  c.zdb = argc == 1 ? "main" : (const char *)shale_value_text(argv[0]);
  c.ztab = (const char *)shale_value_text(argv[argc - 1]);
  if (!c.zdb || !c.ztab) c.ztab = c.zdb = "";
  int naux = 0;
  shale_stmt *s = check_prepare(&c, "SELECT * FROM ", "_rowid", "");
  if (s)
    naux = shale_column_count(s) - 2;
  else if (c.rc != SHALE_NOMEM)
    c.rc = SHALE_OK;
  shale_finalize(s);
  s = check_prepare(&c, "SELECT * FROM ", "", "");
  if (s) {
    c.ndim = (shale_column_count(s) - 1 - naux) / 2;
    if (c.ndim < 1)
      check_msg(&c, "Schema corrupt or not an rtree");
    else if (shale_step(s) == SHALE_ROW)
      c.is_int = shale_column_type(s, 1) == SHALE_INTEGER;
    int rc = shale_finalize(s);
    if ((rc & 0xff) != SHALE_CORRUPT) c.rc = rc;
  }
  if (c.ndim >= 1) {
    if (c.rc == SHALE_OK) check_node(&c, 0, NULL, 1, 0);
    shale_finalize(c.get_node);
    shale_finalize(c.map[0]);
    shale_finalize(c.map[1]);
    c.get_node = c.map[0] = c.map[1] = NULL;
    if (c.rc == SHALE_OK) check_count(&c, "_rowid", c.nleaf);
    if (c.rc == SHALE_OK) check_count(&c, "_parent", c.nnonleaf);
  }
  char *report = strbuf_finish(&c.report);
  if (c.rc != SHALE_OK)
    shale_result_error_code(ctx, c.rc);
  else if (!report && c.nerr)
    shale_result_error_nomem(ctx);
  else
    shale_result_text64(ctx, c.nerr ? report : "ok", -1, SHALE_TRANSIENT);
  shale_free(report);
}

static void rtreenode_fn(shale_context *ctx, int argc, shale_value **argv) {
  (void)argc;
  int ndim = shale_value_int(argv[0]);
  if (ndim < 1 || ndim > RT_MAX_DIM) return;
  const uint8_t *p = shale_value_blob(argv[1]);
  if (!p) return;
  int n = shale_value_bytes(argv[1]), csize = 8 + 8 * ndim;
  if (n < 4) return;
  int ncell = rt_get2(p + 2);
  if (n < ncell * csize) return;
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  for (int i = 0; i < ncell; i++) {
    const uint8_t *q = p + 4 + i * csize;
    if (q + csize > p + n) break; /* invariant 2 (SQLite's own check admits 4 bytes more) */
    int64_t id = 0;
    for (int k = 0; k < 8; k++) id = (int64_t)(((uint64_t)id << 8) | q[k]);
    strbuf_printf(&b, "%s{%lld", i ? " " : "", (long long)id);
    for (int k = 0; k < 2 * ndim; k++)
      strbuf_printf(&b, " %g", (double)read_coord(q + 8 + 4 * k).f);
    strbuf_appendchar(&b, 1, '}');
  }
  int err = b.err;
  char *z = strbuf_finish(&b);
  if (err)
    shale_result_error_nomem(ctx);
  else
    shale_result_text64(ctx, z ? z : "", -1, SHALE_TRANSIENT);
  shale_free(z);
}

static void rtreedepth_fn(shale_context *ctx, int argc, shale_value **argv) {
  (void)argc;
  if (shale_value_type(argv[0]) != SHALE_BLOB || shale_value_bytes(argv[0]) < 2) {
    shale_result_error(ctx, "Invalid argument to rtreedepth()", -1);
    return;
  }
  const uint8_t *p = shale_value_blob(argv[0]);
  if (!p)
    shale_result_error_nomem(ctx);
  else
    shale_result_int64(ctx, rt_get2(p));
}

int rtree_register_functions(shale *db) {
  int rc = shale_create_function_v2(db, "rtreenode", 2, SHALE_UTF8, NULL, rtreenode_fn, NULL, NULL,
                                    NULL);
  if (rc == SHALE_OK)
    rc = shale_create_function_v2(db, "rtreedepth", 1, SHALE_UTF8, NULL, rtreedepth_fn, NULL, NULL,
                                  NULL);
  if (rc == SHALE_OK)
    rc = shale_create_function_v2(db, "rtreecheck", -1, SHALE_UTF8, NULL, rtreecheck_fn, NULL, NULL,
                                  NULL);
  return rc;
}
