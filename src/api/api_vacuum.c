/*
 * api_vacuum.c -- VACUUM and VACUUM INTO (the connection's vacuum hook, run
 * by the Vacuum op).
 *
 * Owns: while it runs, a second Btree (the compact copy: an in-memory
 * database for VACUUM, the output file for VACUUM INTO) and the source's
 * transaction it began.
 *
 * How: inside a transaction on the source (write for VACUUM, read for
 * INTO) the copy gets the source's header values (text encoding, user
 * version, application id, default cache size; schema format 4 (0 without
 * tables) as SQLite's copy; schema cookie
 * + 1; auto_vacuum: the mode PRAGMA auto_vacuum asked for, else the
 * source's) and its sqlite_schema rows in SQLite's VACUUM order, each tree
 * created where SQLite would create it and filled by the bulk loader
 * (btree_bulk_*: entries in key order, pages packed full, rowids kept).
 * Order, as SQLite's VACUUM: every table with a b-tree except
 * sqlite_sequence, each followed by its automatic indexes (and by
 * sqlite_sequence after the first AUTOINCREMENT table); then the other
 * indexes; then views, triggers and b-tree-less tables, all in the source's
 * rowid order. A sqlite_sequence no AUTOINCREMENT table needs is dropped
 * (as SQLite). VACUUM then copies the copy's pages over the source's
 * inside the source's write transaction (journal or WAL make it atomic),
 * cuts the file to the new size and commits; the schema is reloaded.
 *
 * Invariants:
 *  1. The source is never written before the copy is complete; any error
 *     before the page copy leaves it untouched, any error during it rolls
 *     the source's transaction back.
 *  2. The page copy is api_backup.c's (api_backup_copy_page): same page 1
 *     rules (bytes 18/19 follow the destination's journal mode).
 *  3. VACUUM INTO writes only to a file that is missing or empty ("output
 *     file already exists" otherwise), with no journal; the result is in
 *     rollback-journal mode (bytes 18/19 = 1) whatever the source's mode.
 *  4. Page size: the copy takes the pending PRAGMA page_size
 *     (db->next_page_size) unless the source is in WAL mode or in memory
 *     (VACUUM INTO always takes it). In place, a new page size is committed
 *     by pager_commit_replace (the original journalled at the old size,
 *     the file rewritten at the new one); the same size goes through
 *     api_backup_copy_page.
 *  5. With db_config RESET_DATABASE on, the source is read as if it were
 *     empty (as SQLite's reset mode): neither its schema nor its header
 *     values are looked at (a corrupt database can be reset), and the copy
 *     is an empty database of the same page size whose schema cookie is
 *     the source's + 1 when that can be read (so other connections reload).
 *  6. The authorizer is asked once, at run time, about the ATTACH SQLite's
 *     VACUUM performs (DENY: SHALE_AUTH "authorization denied"; any other
 *     answer but OK: "SQL logic error", as 3.40.1 for a malfunction -- its
 *     IGNORE crashes); the statements SQLite then runs internally (and
 *     authorizes one by one) do not exist here.
 */
#include <string.h>

#include "../record/record.h"
#include "api_int.h"

/* One row of the source's sqlite_schema. */
typedef struct VacRow {
  uint8_t *rec; /* the record (owned); v[] point into it */
  uint32_t nrec;
  ShValue v[5]; /* type, name, tbl_name, rootpage, sql */
  int done;     /* already placed in the copy */
} VacRow;

typedef struct Vac {
  shale *db;
  Btree *src, *dst;
  VacRow *rows;
  int nrow, caprow;
  uint8_t *buf; /* payload buffer */
  uint32_t nbuf;
  int64_t next_rowid;   /* next sqlite_schema rowid in the copy */
  BtCursor *schema_cur; /* write cursor on the copy's sqlite_schema */
  char *errmsg;
  int ntree;      /* trees created in the copy */
  int into;       /* VACUUM INTO (rowids all kept) */
  Schema *schema; /* the source database's loaded schema */
  int enc;        /* the source's text encoding (RECORD_ENC_*), the copy's too */
} Vac;

static int vac_err(Vac *v, int rc, const char *msg) {
  if (!v->errmsg) v->errmsg = util_strdup(msg ? msg : shale_errstr(rc));
  return rc;
}

static int is_text(const ShValue *x, const char *z) {
  return x->type == SHALE_TEXT && x->n == strlen(z) && !memcmp(x->z, z, x->n);
}

static int text_ieq(const ShValue *a, const ShValue *b) {
  if (a->type != SHALE_TEXT || b->type != SHALE_TEXT || a->n != b->n) return 0;
  for (uint32_t i = 0; i < a->n; i++) {
    unsigned char x = (unsigned char)a->z[i], y = (unsigned char)b->z[i];
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
    if (y >= 'A' && y <= 'Z') y = (unsigned char)(y + 32);
    if (x != y) return 0;
  }
  return 1;
}

static int64_t row_root(const VacRow *r) { return r->v[3].type == SHALE_INTEGER ? r->v[3].i : 0; }

static int buf_room(Vac *v, uint32_t n) {
  if (n <= v->nbuf) return SHALE_OK;
  uint32_t want = n < 4096 ? 4096 : n;
  uint8_t *b = shale_realloc(v->buf, want);
  if (!b) return SHALE_NOMEM;
  v->buf = b;
  v->nbuf = want;
  return SHALE_OK;
}

/* Read the source's sqlite_schema into v->rows (rowid order). */
static int read_schema(Vac *v) {
  BtCursor *c;
  int rc = btree_cursor_open(v->src, 1, 0, NULL, NULL, &c);
  if (rc) return rc;
  int eof;
  rc = btree_first(c, &eof);
  while (rc == SHALE_OK && !eof) {
    if (v->nrow == v->caprow) {
      int cap = v->caprow ? v->caprow * 2 : 16;
      VacRow *nr = shale_realloc(v->rows, sizeof *nr * (size_t)cap);
      if (!nr) {
        rc = SHALE_NOMEM;
        break;
      }
      v->rows = nr;
      v->caprow = cap;
    }
    VacRow *r = &v->rows[v->nrow];
    memset(r, 0, sizeof *r);
    r->nrec = btree_payload_size(c);
    r->rec = shale_malloc(r->nrec ? r->nrec : 1);
    if (!r->rec) {
      rc = SHALE_NOMEM;
      break;
    }
    v->nrow++;
    rc = btree_payload_read(c, 0, r->nrec, r->rec);
    for (int i = 0; rc == SHALE_OK && i < 5; i++) rc = record_column(r->rec, r->nrec, i, &r->v[i]);
    /* the names and SQL of a UTF-16 file made UTF-8 (owned copies) */
    for (int i = 0; rc == SHALE_OK && i < 5; i++) rc = record_text_decode(&r->v[i], v->enc);
    if (rc == SHALE_OK) rc = btree_next(c, &eof);
  }
  btree_cursor_close(c);
  return rc;
}

/* Append row r to the copy's sqlite_schema with rootpage root. */
static int put_schema_row(Vac *v, const VacRow *r, int64_t root) {
  ShValue vals[5];
  int rc = record_values_encode(r->v, 5, v->enc, vals); /* text in the file's encoding */
  if (rc) return rc;
  if (r->v[3].type == SHALE_INTEGER) value_set_int(&vals[3], root);
  size_t n = record_encoded_size(vals, 5);
  rc = buf_room(v, (uint32_t)n);
  if (rc == SHALE_OK) record_encode(vals, 5, v->buf);
  record_values_clear(vals, 5);
  if (rc) return rc;
  return btree_insert(v->schema_cur, v->next_rowid++, v->buf, (uint32_t)n, 0, BTREE_APPEND);
}

/* Copy every entry of the source tree at sroot into the new tree at droot. */
static int copy_tree(Vac *v, uint32_t sroot, uint32_t droot, int kind, int renumber) {
  BtCursor *c;
  int rc = btree_cursor_open(v->src, sroot, 0, NULL, NULL, &c);
  if (rc) return rc;
  BtBulk *bk;
  rc = btree_bulk_open(v->dst, droot, kind, &bk);
  if (rc) {
    btree_cursor_close(c);
    return rc;
  }
  int eof;
  long k = 0;
  rc = btree_first(c, &eof);
  while (rc == SHALE_OK && !eof) {
    if ((++k & 1023) == 0 && v->db->interrupted) { /* k: entries so far */
      rc = SHALE_INTERRUPT;
      break;
    }
    /* a payload wholly on its page is passed in place (no copy); one with
     * overflow pages is gathered into v->buf */
    const void *p;
    uint32_t n, avail;
    rc = btree_payload(c, &p, &n, &avail);
    if (rc == SHALE_OK && (!p || avail < n)) {
      n = btree_payload_size(c);
      rc = buf_room(v, n);
      if (rc == SHALE_OK) rc = btree_payload_read(c, 0, n, v->buf);
      p = v->buf;
    }
    if (rc == SHALE_OK)
      rc = btree_bulk_add(bk, kind != BTREE_INTKEY ? 0 : renumber ? k : btree_rowid(c), p, n);
    if (rc == SHALE_OK) rc = btree_next(c, &eof);
  }
  btree_cursor_close(c);
  if (rc == SHALE_OK)
    rc = btree_bulk_finish(bk);
  else
    btree_bulk_free(bk);
  return rc;
}

/* The kind of the source tree at root (from its root page). */
static int tree_kind(Vac *v, uint32_t root, int *kind) {
  BtCursor *c;
  int rc = btree_cursor_open(v->src, root, 0, NULL, NULL, &c);
  if (rc) return rc;
  int empty;
  rc = btree_first(c, &empty);
  if (rc == SHALE_OK) *kind = btree_cursor_is_intkey(c) ? BTREE_INTKEY : BTREE_BLOBKEY;
  btree_cursor_close(c);
  return rc;
}

/* Place row r in the copy: a new tree (filled later), its schema row. The
 * new root goes into *droot. */
static int place(Vac *v, VacRow *r, uint32_t *droot) {
  int kind;
  uint32_t sroot = (uint32_t)row_root(r);
  int rc = tree_kind(v, sroot, &kind);
  if (rc == SHALE_OK) rc = btree_create_table(v->dst, kind, droot);
  if (rc == SHALE_OK) rc = put_schema_row(v, r, *droot);
  r->done = 1;
  return rc;
}

typedef struct VacTree {
  uint32_t sroot, droot;
  int renumber; /* table whose rowids become 1, 2, ... */
} VacTree;

/* The loaded schema's table for row r, or NULL. */
static Table *row_table(Vac *v, const VacRow *r) {
  Schema *s = v->schema;
  if (!s || r->v[1].type != SHALE_TEXT) return NULL;
  char name[256];
  if (r->v[1].n >= sizeof name) return NULL;
  memcpy(name, r->v[1].z, r->v[1].n);
  name[r->v[1].n] = 0;
  return schema_find_table(s, name);
}

static int is_autoinc(Vac *v, const VacRow *r) {
  Table *t = row_table(v, r);
  return t && t->autoincrement;
}

/* As SQLite's VACUUM (not INTO): a rowid table with neither an INTEGER
 * PRIMARY KEY nor any index gets new rowids 1, 2, ... in rowid order. */
static int renumbers(Vac *v, const VacRow *r) {
  if (v->into || !is_text(&r->v[0], "table")) return 0;
  Table *t = row_table(v, r);
  return !t || (!t->without_rowid && t->rowid_alias < 0 && !t->indexes);
}

/* Build the whole copy in v->dst (its write transaction open). */
static int build_copy(Vac *v) {
  v->enc = btree_text_encoding(v->src);
  int rc = read_schema(v);
  if (rc) return rc;
  VacTree *trees = shale_malloc(sizeof *trees * (size_t)(v->nrow + 1));
  if (!trees) return SHALE_NOMEM;
  memset(trees, 0, sizeof *trees * (size_t)(v->nrow + 1));
  int ntree = 0;
  rc = btree_cursor_open(v->dst, 1, 1, NULL, NULL, &v->schema_cur);
  if (rc) {
    shale_free(trees);
    return rc;
  }
  v->next_rowid = 1;
  VacRow *seq = NULL;
  for (int i = 0; i < v->nrow; i++)
    if (is_text(&v->rows[i].v[0], "table") && is_text(&v->rows[i].v[1], "sqlite_sequence"))
      seq = &v->rows[i];
  /* tables with their automatic indexes (and sqlite_sequence) */
  for (int i = 0; rc == SHALE_OK && i < v->nrow; i++) {
    VacRow *r = &v->rows[i];
    if (!is_text(&r->v[0], "table") || r == seq || row_root(r) <= 0) continue;
    rc = place(v, r, &trees[ntree].droot);
    trees[ntree].renumber = renumbers(v, r);
    trees[ntree++].sroot = (uint32_t)row_root(r);
    for (int j = 0; rc == SHALE_OK && j < v->nrow; j++) {
      VacRow *x = &v->rows[j];
      if (x->done || !is_text(&x->v[0], "index") || x->v[4].type != SHALE_NULL ||
          !text_ieq(&x->v[2], &r->v[1]) || row_root(x) <= 0)
        continue;
      rc = place(v, x, &trees[ntree].droot);
      trees[ntree++].sroot = (uint32_t)row_root(x);
    }
    if (rc == SHALE_OK && seq && !seq->done && row_root(seq) > 0 && is_autoinc(v, r)) {
      rc = place(v, seq, &trees[ntree].droot);
      trees[ntree].renumber = renumbers(v, seq);
      trees[ntree++].sroot = (uint32_t)row_root(seq);
    }
  }
  /* the other indexes */
  for (int i = 0; rc == SHALE_OK && i < v->nrow; i++) {
    VacRow *r = &v->rows[i];
    if (r->done || !is_text(&r->v[0], "index") || r->v[4].type == SHALE_NULL || row_root(r) <= 0)
      continue;
    rc = place(v, r, &trees[ntree].droot);
    trees[ntree++].sroot = (uint32_t)row_root(r);
  }
  /* the content */
  for (int i = 0; rc == SHALE_OK && i < ntree; i++) {
    int kind;
    rc = tree_kind(v, trees[i].sroot, &kind);
    if (rc == SHALE_OK) rc = copy_tree(v, trees[i].sroot, trees[i].droot, kind, trees[i].renumber);
  }
  /* views, triggers, tables without a b-tree */
  for (int i = 0; rc == SHALE_OK && i < v->nrow; i++) {
    VacRow *r = &v->rows[i];
    if (r->done) continue;
    if (is_text(&r->v[0], "view") || is_text(&r->v[0], "trigger") ||
        (is_text(&r->v[0], "table") && r->v[3].type == SHALE_INTEGER && r->v[3].i == 0)) {
      rc = put_schema_row(v, r, 0);
      r->done = 1;
      /* SQLite copies these rows with an INSERT ... SELECT of its own, which
       * leaves last_insert_rowid at the last row's new rowid */
      if (rc == SHALE_OK) v->db->count.last_rowid = v->next_rowid - 1;
    }
  }
  btree_cursor_close(v->schema_cur);
  v->schema_cur = NULL;
  shale_free(trees);
  v->ntree = ntree;
  return rc;
}

/* Header values the copy takes from the source (schema cookie + 1). The
 * schema format is not the source's: 4 once the copy has a table, else 0
 * (as SQLite's copy, where only CREATE sets it). */
static int copy_meta(Vac *v) {
  static const int keep[] = {BTREE_META_DEFAULT_CACHE, BTREE_META_TEXT_ENCODING,
                             BTREE_META_USER_VERSION, BTREE_META_APPLICATION_ID};
  uint32_t x;
  int rc = btree_get_meta(v->src, BTREE_META_SCHEMA_COOKIE, &x);
  if (rc == SHALE_OK) rc = btree_update_meta(v->dst, BTREE_META_SCHEMA_COOKIE, x + 1);
  for (size_t i = 0; rc == SHALE_OK && i < sizeof keep / sizeof keep[0]; i++) {
    rc = btree_get_meta(v->src, keep[i], &x);
    if (rc == SHALE_OK) rc = btree_update_meta(v->dst, keep[i], x);
  }
  return rc;
}

static void vac_free(Vac *v) {
  if (v->schema_cur) btree_cursor_close(v->schema_cur);
  for (int i = 0; i < v->nrow; i++) {
    record_values_clear(v->rows[i].v, 5);
    shale_free(v->rows[i].rec);
  }
  shale_free(v->rows);
  shale_free(v->buf);
}

/* The copy's pages over the source's (write transaction open on both). */
static int replace_source(Vac *v) {
  Pager *sp = btree_pager(v->dst), *dp = btree_pager(v->src);
  uint32_t n = pager_db_size(sp), orig = pager_db_size(dp);
  int rc = SHALE_OK;
  for (uint32_t pg = 1; rc == SHALE_OK && pg <= n; pg++)
    rc = api_backup_copy_page(sp, dp, pg, orig);
  if (rc == SHALE_OK && orig > n) rc = pager_truncate(dp, n);
  return rc;
}

/* pager_commit_replace's source of pages: page pgno of the copy. */
static int read_copy_page(void *ctx, uint32_t pgno, uint8_t *buf) {
  Pager *cp = ctx;
  PgPage *pg;
  int rc = pager_get(cp, pgno, 0, &pg);
  if (rc) return rc;
  memcpy(buf, pager_data(pg), pager_page_size(cp));
  pager_unref(pg);
  return SHALE_OK;
}

/* Open the output file of VACUUM INTO (missing or empty: invariant 3). */
static int open_output(Vac *v, const char *path) {
  Pager *sp = btree_pager(v->src);
  OsVfs *vfs = pager_is_memory(sp) ? NULL : pager_vfs(sp);
  int rc = btree_open(vfs, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &v->dst);
  if (rc) return vac_err(v, rc, "unable to open database file");
  rc = btree_begin(v->dst, BTREE_TXN_READ);
  if (rc == SHALE_OK) {
    uint32_t n = btree_page_count(v->dst);
    btree_commit(v->dst);
    if (n > 0) return vac_err(v, SHALE_ERROR, "output file already exists");
  } else if (rc == SHALE_NOTADB || rc == SHALE_CORRUPT) {
    return vac_err(v, SHALE_ERROR, "output file already exists");
  } else {
    return vac_err(v, rc, NULL);
  }
  pager_set_journal_mode(btree_pager(v->dst), PAGER_JOURNAL_OFF);
  pager_set_synchronous(btree_pager(v->dst), pager_synchronous(sp)); /* as SQLite */
  return SHALE_OK;
}

int api_vacuum_hook(void *ctx, int idb, const ShValue *into, char **errmsg) {
  shale *db = ctx;
  Vac v;
  memset(&v, 0, sizeof v);
  v.db = db;
  v.src = api_db_bt(db, idb); /* NULL: temp, not opened yet */
  v.into = into != NULL;
  *errmsg = NULL;
  if (into && into->type != SHALE_TEXT) {
    *errmsg = util_strdup("non-text filename");
    return SHALE_ERROR;
  }
  if (db->cb.auth) {
    /* SQLite's VACUUM first attaches its copy (file name, "" in place): the
     * authorizer sees that ATTACH at run time (invariant 5) */
    char *name = into ? shale_malloc((size_t)into->n + 1) : NULL;
    if (into && !name) return SHALE_NOMEM;
    if (name) {
      memcpy(name, into->z, into->n);
      name[into->n] = 0;
    }
    int a = db->cb.auth(db->cb.auth_arg, AUTH_ATTACH, name ? name : "", NULL, NULL, NULL);
    shale_free(name);
    if (a == SHALE_DENY) {
      *errmsg = util_strdup("authorization denied");
      return SHALE_AUTH;
    }
    if (a != SHALE_OK) {
      *errmsg = util_strdup("SQL logic error");
      return SHALE_ERROR;
    }
  }
  if (idb == 1 || !v.src) return SHALE_OK; /* temp: as SQLite, nothing (not compiled) */
  int rc = SHALE_OK, src_began = 0;
  Pager *sp = btree_pager(v.src);
  if (!into && pager_readonly(sp)) {
    rc = vac_err(&v, SHALE_READONLY, "attempt to write a readonly database");
    goto out;
  }
  if (btree_txn_state(v.src) == PAGER_TXN_NONE) src_began = 1;
  rc = btree_begin(v.src, into ? BTREE_TXN_READ : BTREE_TXN_WRITE);
  if (rc) {
    vac_err(&v, rc, NULL);
    goto out;
  }
  int reset = db->cfg.reset_database; /* invariant 5 */
  if (!reset && idb == 0 && (rc = api_schema_current(db)) != SHALE_OK) goto out;
  v.schema = reset ? NULL : api_db_schema(db, idb);
  if (!v.schema && !reset) {
    rc = db->err.code & 0xff ? db->err.code : SHALE_ERROR;
    vac_err(&v, rc, db->err.msg);
    goto out;
  }
  /* INTO from a database with no page yet, or reset */
  int empty = reset || btree_page_count(v.src) == 0;
  uint32_t ps = pager_page_size(sp);
  int reserve = (int)(ps - pager_usable_size(sp));
  uint32_t want = ps; /* invariant 4 */
  if (db->set.next_page_size &&
      (into || (!pager_is_memory(sp) && pager_journal_mode(sp) != PAGER_JOURNAL_WAL)))
    want = db->set.next_page_size;
  if (into) {
    char *path = shale_malloc((size_t)into->n + 1);
    if (!path) {
      rc = SHALE_NOMEM;
      goto out;
    }
    memcpy(path, into->z, into->n);
    path[into->n] = 0;
    rc = open_output(&v, path);
    shale_free(path);
    if (rc) goto out;
  } else {
    rc = btree_open(NULL, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &v.dst);
    if (rc) goto out;
  }
  btree_set_page_size(v.dst, want, reserve);
  /* auto_vacuum: the mode PRAGMA auto_vacuum asked for, else the source's */
  int avmode = btree_next_auto_vacuum(v.src);
  if (avmode < 0) avmode = reset ? 0 : btree_get_auto_vacuum(v.src);
  btree_set_auto_vacuum(v.dst, avmode);
  rc = btree_begin(v.dst, BTREE_TXN_WRITE);
  if (rc == SHALE_OK && !reset) rc = copy_meta(&v);
  if (rc == SHALE_OK && reset) {
    uint32_t cookie = 0;
    if (btree_get_meta(v.src, BTREE_META_SCHEMA_COOKIE, &cookie) != SHALE_OK) cookie = 0;
    rc = btree_update_meta(v.dst, BTREE_META_SCHEMA_COOKIE, cookie + 1);
  }
  if (rc == SHALE_OK && !empty) rc = build_copy(&v);
  /* as SQLite's copy: schema format 4 once a table was created, else 0 */
  if (rc == SHALE_OK && v.ntree == 0) rc = btree_update_meta(v.dst, BTREE_META_SCHEMA_FORMAT, 0);
  if (rc == SHALE_OK && into) rc = btree_commit(v.dst);
  if (rc == SHALE_OK && !into) {
    if (want == ps)
      rc = replace_source(&v);
    else /* invariant 4: the pager rewrites the file at the new size */
      rc = pager_commit_replace(sp, want, pager_db_size(btree_pager(v.dst)), read_copy_page,
                                btree_pager(v.dst));
    if (rc == SHALE_OK) rc = btree_commit(v.src);
    if (rc == SHALE_OK) {
      src_began = 0;
      db->txn.schema_dirty = 1; /* every schema reloaded after this statement (new roots) */
    }
  }
out:
  if (rc && !v.errmsg) {
    const char *m = v.src ? btree_errmsg(v.src) : NULL;
    if (!m && v.dst) m = btree_errmsg(v.dst);
    vac_err(&v, rc, rc == SHALE_CORRUPT && m ? m : NULL);
  }
  if (v.dst) btree_close(v.dst); /* rolls back what was not committed */
  if (src_began && btree_txn_state(v.src) != PAGER_TXN_NONE) {
    if (rc)
      btree_rollback(v.src);
    else
      btree_commit(v.src);
  }
  vac_free(&v);
  if (rc) {
    *errmsg = v.errmsg;
    return rc;
  }
  shale_free(v.errmsg);
  return SHALE_OK;
}
