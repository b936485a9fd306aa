/*
 * test_interop_schema.c -- automatic indexes, UNIQUE constraints and
 * WITHOUT ROWID layouts, Shale against the reference SQLite.
 *
 * The same CREATE statements go through tdb (Shale) into one file and
 * through SQLite into another; sqlite_schema must list the same objects with
 * the same names (sqlite_autoindex_<t>_<N> numbered as SQLite does: the PK,
 * unless INTEGER PRIMARY KEY, then each UNIQUE; a WITHOUT ROWID PK takes its
 * number without a tree) and the same sql (NULL for automatic indexes).
 * Rows written by either engine are read and changed by the other; SQLite's
 * integrity_check (which also checks UNIQUE indexes for duplicates and every
 * index against its table) must say "ok", and look-ups through each
 * automatic index (INDEXED BY) must find the rows. A final case breaks an
 * index on purpose and checks that both integrity checks notice.
 *
 * Invariants:
 *  1. UNIQUE and PRIMARY KEY values are unique by construction (they embed
 *     the key), never NULL.
 */
#include <string.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../test.h"
#include "interop_rows.h"

#define NT 4
static const TdbTableDef defs[NT] = {
    {.name = "u1",
     .sql = "CREATE TABLE u1(k PRIMARY KEY, u UNIQUE, v, UNIQUE(v, u))",
     .ncols = 3,
     .npk = 1,
     .pk = {0},
     .nunique = 2,
     .unique_ncols = {1, 2},
     .unique_cols = {{1}, {2, 1}}},
    {.name = "u2",
     .sql = "CREATE TABLE u2(k INTEGER PRIMARY KEY, u COLLATE NOCASE UNIQUE, v)",
     .ncols = 3,
     .coll = {TDB_BINARY, TDB_NOCASE, TDB_BINARY},
     .npk = 1,
     .pk = {0},
     .ipk = 1,
     .nunique = 1,
     .unique_ncols = {1},
     .unique_cols = {{1}}},
    {.name = "u3",
     .sql = "CREATE TABLE u3(k PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID",
     .ncols = 3,
     .without_rowid = 1,
     .npk = 1,
     .pk = {0},
     .nunique = 1,
     .unique_ncols = {1},
     .unique_cols = {{1}}},
    {.name = "u4",
     .sql = "CREATE TABLE u4(a, b COLLATE NOCASE, c, PRIMARY KEY(c, a), UNIQUE(b)) WITHOUT ROWID",
     .ncols = 3,
     .coll = {TDB_BINARY, TDB_NOCASE, TDB_BINARY},
     .without_rowid = 1,
     .npk = 2,
     .pk = {2, 0},
     .nunique = 1,
     .unique_ncols = {1},
     .unique_cols = {{1}}},
};
static const TdbIndexDef u4_ab = {.name = "u4_ab",
                                  .table = "u4",
                                  .sql = "CREATE INDEX u4_ab ON u4(a, b)",
                                  .ncols = 2,
                                  .cols = {0, 1}};

/* Every automatic index with a probe on its columns. */
static const struct {
  int t;
  const char *sql;
  int n;
  int cols[2];
} probes[] = {
    {0, "SELECT count(*) FROM u1 INDEXED BY sqlite_autoindex_u1_1 WHERE k = ?1", 1, {0}},
    {0, "SELECT count(*) FROM u1 INDEXED BY sqlite_autoindex_u1_2 WHERE u = ?1", 1, {1}},
    {0,
     "SELECT count(*) FROM u1 INDEXED BY sqlite_autoindex_u1_3 WHERE v = ?1 AND u = ?2",
     2,
     {2, 1}},
    {1, "SELECT count(*) FROM u2 INDEXED BY sqlite_autoindex_u2_1 WHERE u = ?1", 1, {1}},
    {2, "SELECT count(*) FROM u3 INDEXED BY sqlite_autoindex_u3_2 WHERE u = ?1", 1, {1}},
    {2, "SELECT count(*) FROM u3 WHERE k = ?1", 1, {0}},
    {3, "SELECT count(*) FROM u4 INDEXED BY sqlite_autoindex_u4_2 WHERE b = ?1", 1, {1}},
    {3, "SELECT count(*) FROM u4 INDEXED BY u4_ab WHERE a = ?1 AND b = ?2", 2, {0, 1}},
    {3, "SELECT count(*) FROM u4 WHERE c = ?1 AND a = ?2", 2, {2, 0}},
};

typedef struct Row {
  char s[3][64];
  TdbValue v[3];
} Row;

/* Row `key` at version `ver` of table t (unique columns embed key). */
static void gen(int t, int key, int ver, Row *r) {
  switch (t) {
    case 0:
      snprintf(r->s[0], 64, "k%05d", key);
      r->v[0] = tdb_text(r->s[0], (uint32_t)strlen(r->s[0]));
      r->v[1] = tdb_int((int64_t)key * 1000 + ver);
      r->v[2] = ver & 1 ? tdb_real(key / 4.0)
                        : tdb_text(r->s[2], (uint32_t)snprintf(r->s[2], 64, "v%d", key % 50));
      break;
    case 1:
      r->v[0] = tdb_int(key);
      snprintf(r->s[1], 64, "%sUser%d-%d", key & 1 ? "" : "x", key, ver);
      for (char *p = r->s[1]; *p; p++)
        if ((p - r->s[1] + key) % 3 == 0 && *p >= 'a' && *p <= 'z') *p -= 32;
      r->v[1] = tdb_text(r->s[1], (uint32_t)strlen(r->s[1]));
      r->v[2] = tdb_real(key * 1.5 + ver);
      break;
    case 2:
      r->v[0] = tdb_int((int64_t)key * 7);
      for (int i = 0; i < 40; i++) r->s[1][i] = (char)(key * 31 + i * ver);
      memcpy(r->s[1], &key, sizeof key);
      r->v[1] = tdb_blob(r->s[1], 40);
      r->v[2] = tdb_text(r->s[2], (uint32_t)snprintf(r->s[2], 64, "value %d/%d", key, ver));
      break;
    default:
      r->v[0] = tdb_int(key % 10);
      snprintf(r->s[1], 64, "B%d-%d", key, ver);
      r->v[1] = tdb_text(r->s[1], (uint32_t)strlen(r->s[1]));
      r->v[2] = tdb_int(key / 10);
  }
}

static const char *const sel[NT] = {
    "SELECT k, u, v FROM u1 ORDER BY rowid", "SELECT k, u, v FROM u2 ORDER BY k",
    "SELECT k, u, v FROM u3 ORDER BY k", "SELECT a, b, c FROM u4 ORDER BY c, a"};
static const char *const ins[NT] = {"INSERT INTO u1(rowid, k, u, v) VALUES(?4, ?1, ?2, ?3)",
                                    "INSERT INTO u2(k, u, v) VALUES(?1, ?2, ?3)",
                                    "INSERT INTO u3(k, u, v) VALUES(?1, ?2, ?3)",
                                    "INSERT INTO u4(a, b, c) VALUES(?1, ?2, ?3)"};

#define NKEYS 1500
static int ver[NT][NKEYS + 1];

/* Insert (or, with update, replace) row key of table t through tdb. */
static int tdb_put(Tdb *db, int t, int key, int v, int update) {
  Row r;
  gen(t, key, v, &r);
  int rc = update ? tdb_update(db, defs[t].name, key, r.v) : tdb_insert(db, defs[t].name, key, r.v);
  if (rc == SHALE_OK) ver[t][key] = v;
  return rc;
}

static int tdb_del(Tdb *db, int t, int key) {
  Row r;
  gen(t, key, ver[t][key], &r);
  int rc = defs[t].without_rowid ? tdb_delete_pk(db, defs[t].name, r.v)
                                 : tdb_delete(db, defs[t].name, key);
  if (rc == SHALE_OK) ver[t][key] = 0;
  return rc;
}

/* SQLite's view equals ver[][]: rows, values, index look-ups, integrity. */
static void verify(const char *path, const char *what) {
  char msg[512];
  if (!tsql_integrity(path, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "%s: %s", what, msg);
  sqlite3 *db = tsql_open(path);
  if (!db) return;
  for (int t = 0; t < NT; t++) {
    sqlite3_stmt *st;
    int live = 0, seen = 0;
    for (int k = 1; k <= NKEYS; k++) live += ver[t][k] != 0;
    CHECK_EQ(sqlite3_prepare_v2(db, sel[t], -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      /* Identify the key from the row, then compare it all. */
      int key = t == 0   ? atoi((const char *)sqlite3_column_text(st, 0) + 1)
                : t == 1 ? sqlite3_column_int(st, 0)
                : t == 2 ? sqlite3_column_int(st, 0) / 7
                         : sqlite3_column_int(st, 2) * 10 + sqlite3_column_int(st, 0);
      seen++;
      if (key < 1 || key > NKEYS || !ver[t][key]) {
        test_fail(__FILE__, __LINE__, "%s: %s: unexpected key %d", what, defs[t].name, key);
        continue;
      }
      Row r;
      gen(t, key, ver[t][key], &r);
      for (int i = 0; i < 3; i++) {
        TdbValue got = tsql_column(st, i);
        if (!tdb_value_same(&got, &r.v[i]))
          test_fail(__FILE__, __LINE__, "%s: %s key %d column %d differs", what, defs[t].name, key,
                    i);
      }
    }
    sqlite3_finalize(st);
    if (seen != live)
      test_fail(__FILE__, __LINE__, "%s: %s has %d rows, expected %d", what, defs[t].name, seen,
                live);
  }
  for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
    sqlite3_stmt *st;
    int t = probes[p].t;
    CHECK_EQ(sqlite3_prepare_v2(db, probes[p].sql, -1, &st, NULL), SQLITE_OK);
    for (int k = 1 + (int)p; k <= NKEYS; k += 13) {
      if (!ver[t][k]) continue;
      Row r;
      gen(t, k, ver[t][k], &r);
      sqlite3_reset(st);
      for (int i = 0; i < probes[p].n; i++) tsql_bind(st, i + 1, &r.v[probes[p].cols[i]]);
      if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0) != 1)
        test_fail(__FILE__, __LINE__, "%s: %s: key %d not found exactly once", what, probes[p].sql,
                  k);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
}

static void schema_listing(const char *path, char *out, size_t n) {
  sqlite3 *db = tsql_open(path);
  sqlite3_stmt *st;
  size_t used = 0;
  out[0] = 0;
  if (!db) return;
  if (sqlite3_prepare_v2(
          db, "SELECT type, name, tbl_name, coalesce(sql, 'NULL') FROM sqlite_schema ORDER BY name",
          -1, &st, NULL) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW && used < n - 200)
      used += (size_t)snprintf(out + used, n - used, "%s|%s|%s|%s\n", sqlite3_column_text(st, 0),
                               sqlite3_column_text(st, 1), sqlite3_column_text(st, 2),
                               sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
}

static int tdb_make_schema(Tdb *db, int create) {
  int rc = SHALE_OK;
  for (int t = 0; t < NT && rc == SHALE_OK; t++)
    rc = create ? tdb_create_table(db, &defs[t]) : tdb_bind_table(db, &defs[t]);
  if (rc == SHALE_OK) rc = create ? tdb_create_index(db, &u4_ab) : tdb_bind_index(db, &u4_ab);
  return rc;
}

/* Shale: deletes every 3rd live row, updates every 4th, reinserts. */
static void tdb_apply_changes(Tdb *db) {
  CHECK_OK(tdb_begin(db));
  for (int t = 0; t < NT; t++)
    for (int k = 1; k <= NKEYS; k++) {
      if (!ver[t][k]) continue;
      if (k % 3 == 0)
        CHECK_OK(tdb_del(db, t, k));
      else if (k % 4 == 0)
        CHECK_OK(tdb_put(db, t, k, ver[t][k] + 1, 1));
    }
  CHECK_OK(tdb_commit(db));
  CHECK_OK(tdb_begin(db));
  for (int t = 0; t < NT; t++)
    for (int k = 3; k <= NKEYS; k += 6) CHECK_OK(tdb_put(db, t, k, 5, 0));
  CHECK_OK(tdb_commit(db));
  char *rep = NULL;
  CHECK_OK(tdb_check(db, &rep));
  if (rep) {
    test_fail(__FILE__, __LINE__, "Shale integrity: %.300s", rep);
    shale_free(rep);
  }
}

TEST(interop_schema_shale_writes) {
  const char *a = tscratch_path("schema-shale.db"), *b = tscratch_path("schema-sqlite.db");
  char la[4096], lb[4096];
  Tdb *db;
  memset(ver, 0, sizeof ver);
  CHECK_OK(tdb_open(NULL, a, 4096, &db));
  CHECK_OK(tdb_make_schema(db, 1));
  CHECK_OK(tdb_begin(db));
  for (int t = 0; t < NT; t++)
    for (int k = 1; k <= NKEYS; k++)
      if (k % 2 || t != 0) CHECK_OK(tdb_put(db, t, k, 1, 0));
  CHECK_OK(tdb_commit(db));
  CHECK_OK(tdb_close(db));
  sqlite3 *sdb = tsql_open(b);
  CHECK(sdb != NULL);
  for (int t = 0; t < NT && sdb; t++) CHECK_EQ(tsql_exec(sdb, defs[t].sql), SQLITE_OK);
  if (sdb) CHECK_EQ(tsql_exec(sdb, u4_ab.sql), SQLITE_OK);
  if (sdb) CHECK_EQ(tsql_int(sdb, "PRAGMA schema_version"), NT + 1);
  sqlite3_close(sdb);
  schema_listing(a, la, sizeof la);
  schema_listing(b, lb, sizeof lb);
  CHECK_STR(la, lb);
  CHECK(strstr(la, "sqlite_autoindex_u3_2") && !strstr(la, "sqlite_autoindex_u3_1"));
  CHECK(strstr(la, "sqlite_autoindex_u2_1") && !strstr(la, "sqlite_autoindex_u2_2"));
  CHECK(strstr(la, "sqlite_autoindex_u1_3"));
  sdb = tsql_open(a);
  CHECK_EQ(tsql_int(sdb, "PRAGMA schema_version"), NT + 1);
  sqlite3_close(sdb);
  verify(a, "Shale's file");
  CHECK_OK(tdb_open(NULL, a, 0, &db));
  CHECK_OK(tdb_make_schema(db, 0));
  tdb_apply_changes(db);
  CHECK_OK(tdb_close(db));
  verify(a, "Shale's file after changes");
}

TEST(interop_schema_sqlite_writes) {
  const char *b = tscratch_path("schema-sqlite2.db");
  Tdb *db;
  memset(ver, 0, sizeof ver);
  sqlite3 *sdb = tsql_open(b);
  CHECK(sdb != NULL);
  if (!sdb) return;
  CHECK_EQ(tsql_exec(sdb, "PRAGMA page_size=1024; BEGIN"), SQLITE_OK);
  for (int t = 0; t < NT; t++) CHECK_EQ(tsql_exec(sdb, defs[t].sql), SQLITE_OK);
  CHECK_EQ(tsql_exec(sdb, u4_ab.sql), SQLITE_OK);
  for (int t = 0; t < NT; t++) {
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(sdb, ins[t], -1, &st, NULL), SQLITE_OK);
    for (int k = 1; k <= NKEYS; k++) {
      Row r;
      gen(t, k, 1, &r);
      sqlite3_reset(st);
      for (int i = 0; i < 3; i++) tsql_bind(st, i + 1, &r.v[i]);
      sqlite3_bind_int(st, 4, k);
      CHECK_EQ(sqlite3_step(st), SQLITE_DONE);
      ver[t][k] = 1;
    }
    sqlite3_finalize(st);
  }
  CHECK_EQ(tsql_exec(sdb, "COMMIT"), SQLITE_OK);
  sqlite3_close(sdb);
  verify(b, "SQLite's file");
  CHECK_OK(tdb_open(NULL, b, 0, &db));
  CHECK_OK(tdb_make_schema(db, 0));
  char *rep = NULL;
  CHECK_OK(tdb_check(db, &rep)); /* Shale reads SQLite's autoindexes in its own order */
  if (rep) {
    test_fail(__FILE__, __LINE__, "Shale integrity on SQLite's file: %.300s", rep);
    shale_free(rep);
  }
  tdb_apply_changes(db);
  CHECK_OK(tdb_close(db));
  verify(b, "SQLite's file after Shale's changes");
}

/* The checks can fail: remove one index entry behind tdb's back. */
TEST(interop_schema_broken_index_is_noticed) {
  const char *a = tscratch_path("schema-broken.db");
  char msg[512], *rep = NULL;
  Tdb *db;
  memset(ver, 0, sizeof ver);
  CHECK_OK(tdb_open(NULL, a, 1024, &db));
  CHECK_OK(tdb_make_schema(db, 1));
  CHECK_OK(tdb_begin(db));
  for (int k = 1; k <= 300; k++) CHECK_OK(tdb_put(db, 0, k, 1, 0));
  CHECK_OK(tdb_commit(db));
  CHECK_OK(tdb_check(db, &rep));
  CHECK(rep == NULL);
  shale_free(rep);
  CHECK_OK(tdb_close(db));
  CHECK(tsql_integrity(a, msg, sizeof msg));
  /* Delete the first entry of sqlite_autoindex_u1_2 directly. */
  sqlite3 *sdb = tsql_open(a);
  int64_t root =
      tsql_int(sdb, "SELECT rootpage FROM sqlite_schema WHERE name='sqlite_autoindex_u1_2'");
  sqlite3_close(sdb);
  Btree *bt;
  BtCursor *c;
  int empty = 1;
  CHECK_OK(btree_open(NULL, a, SHALE_OPEN_READWRITE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_OK(btree_cursor_open(bt, (uint32_t)root, 1, NULL, NULL, &c));
  CHECK_OK(btree_first(c, &empty));
  CHECK(!empty);
  CHECK_OK(btree_delete(c));
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK(!tsql_integrity(a, msg, sizeof msg));
  CHECK(strstr(msg, "sqlite_autoindex_u1_2") != NULL);
  CHECK_OK(tdb_open(NULL, a, 0, &db));
  CHECK_OK(tdb_make_schema(db, 0));
  CHECK_OK(tdb_check(db, &rep));
  CHECK(rep && strstr(rep, "missing from index sqlite_autoindex_u1_2"));
  shale_free(rep);
  CHECK_OK(tdb_close(db));
}
