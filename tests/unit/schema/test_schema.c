/*
 * test_schema.c -- the schema layer (src/schema) and its loader
 * (src/compile/schema_load.c) against the reference sqlite3.
 *
 * A corpus of CREATE statements is run by sqlite3 into a file; compile_schema_load
 * reads it back and every table, column, index, view and trigger is compared
 * with what sqlite3 reports (PRAGMA table_xinfo, index_xlist, index_xinfo,
 * sqlite_schema rootpages, and the affinity seen by storing '12'). CREATE
 * errors are compared message for message; a damaged sqlite_schema must give
 * sqlite3's "malformed database schema" error, never a crash; and every
 * allocation failure during compile_schema_load is a clean SHALE_NOMEM without leaks.
 *
 * Invariants:
 *  1. Every corpus statement succeeds in sqlite3 (checked) before Shale reads
 *     the file, so a mismatch is always Shale's.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/btree/btree.h"
#include "../../../src/compile/schema_load.h"
#include "../../../src/parse/ast.h"
#include "../../../src/schema/schema.h"
#include "../../test.h"

/* ---- the corpus ---- */

static const char *const corpus[] = {
    /* rowid alias quirks */
    "CREATE TABLE a1(id INTEGER PRIMARY KEY, x)",
    "CREATE TABLE a2(id integer primary key desc, x)",
    "CREATE TABLE a3(id INT PRIMARY KEY, x)",
    "CREATE TABLE a4(id INTEGER, x, PRIMARY KEY(id DESC))",
    "CREATE TABLE a5(id InTeGeR PRIMARY KEY ASC AUTOINCREMENT, x)",
    "CREATE TABLE a6(id \"INTEGER\" PRIMARY KEY, x)",
    "CREATE TABLE a7(id INTEGER(10) PRIMARY KEY, x)",
    "CREATE TABLE a8(x, id INTEGER, PRIMARY KEY(id))",
    "CREATE TABLE a9(id INTEGER NOT NULL PRIMARY KEY ON CONFLICT REPLACE, x UNIQUE)",
    "CREATE TABLE a10(id UNSIGNED INTEGER PRIMARY KEY, x)",
    "CREATE TABLE a11(id BIGINT PRIMARY KEY, x)",
    "CREATE TABLE a12(a INTEGER, b INTEGER, PRIMARY KEY(a, b))",
    "CREATE TABLE a13(a INTEGER PRIMARY KEY, b INTEGER UNIQUE, c TEXT UNIQUE COLLATE NOCASE)",
    /* affinities and declared types */
    "CREATE TABLE t1(a INT, b VARCHAR(10), c CLOB, d BLOB, e, f REAL, g FLOATING POINT,"
    " h DOUBLE PRECISION, i NUMERIC, j DECIMAL(10,5), k BOOLEAN, l DATE, m CHARINT,"
    " n \"weird type\", o [bracket type], p `tick`, q STRING, r TEXT(5), s BIGINT UNSIGNED)",
    "CREATE TABLE t2(\"quoted name\", [b c], `d`, 'e' text, \"Mixed\" Integer)",
    "CREATE TABLE t3(x int not null default 5, y text default 'abc', z default (1+2),"
    " w real default -1.5, v default x'00ff', u default CURRENT_TIMESTAMP, q default NULL,"
    " r default +7, s default TRUE, tt default ( 'x' || 'y' ))",
    "CREATE TABLE t4(a NOT NULL ON CONFLICT IGNORE, b NULL, c CHECK(c > 0), d"
    " CONSTRAINT dn NOT NULL, CONSTRAINT ck CHECK (a <> b))",
    /* collations */
    "CREATE TABLE c1(a TEXT COLLATE NOCASE, b TEXT COLLATE RTRIM, c COLLATE binary, d)",
    "CREATE INDEX c1i1 ON c1(a)",
    "CREATE INDEX c1i2 ON c1(a COLLATE BINARY, b DESC, d COLLATE NOCASE ASC)",
    "CREATE UNIQUE INDEX c1i3 ON c1(b, c)",
    "CREATE TABLE c2(a UNIQUE COLLATE NOCASE, b, UNIQUE(b COLLATE RTRIM, a), UNIQUE(a, b))",
    /* PK / UNIQUE table constraints */
    "CREATE TABLE k1(a, b, c, PRIMARY KEY(b, a))",
    "CREATE TABLE k2(a PRIMARY KEY, b UNIQUE, c, UNIQUE(b, c), UNIQUE(c))",
    "CREATE TABLE k3(a TEXT PRIMARY KEY, b UNIQUE, UNIQUE(b), UNIQUE(a))",
    "CREATE TABLE k4(a, b, PRIMARY KEY(a DESC, b ASC) ON CONFLICT FAIL)",
    "CREATE TABLE k5(a UNIQUE ON CONFLICT REPLACE, b UNIQUE ON CONFLICT IGNORE)",
    "CREATE TABLE k6(a, b, UNIQUE(a, b), UNIQUE(b, a), UNIQUE(a DESC, b))",
    "CREATE TABLE k7(id text primary key, a unique, b, unique(a,b))",
    "CREATE TABLE k8(a, b, c, CONSTRAINT pk PRIMARY KEY(c), CONSTRAINT u1 UNIQUE(a))",
    "CREATE TABLE k9(a INTEGER UNIQUE PRIMARY KEY, b)",
    "CREATE TABLE k10(a, b, c, PRIMARY KEY('a', \"b\"))",
    "CREATE TABLE k11(a, b, PRIMARY KEY(a, a), UNIQUE(b, b))",
    "CREATE TABLE k12(a INTEGER PRIMARY KEY, b, UNIQUE(a))",
    "CREATE TABLE k13(a PRIMARY KEY COLLATE NOCASE, b UNIQUE COLLATE RTRIM, c UNIQUE)",
    "CREATE TABLE k14(a, b AS (a) STORED NOT NULL UNIQUE, c AS (a * 2) UNIQUE)",
    "CREATE TABLE k15(a DEFAULT (1) COLLATE NOCASE, b TEXT, c AS (b COLLATE NOCASE))",
    /* WITHOUT ROWID */
    "CREATE TABLE w1(a, b, c, PRIMARY KEY(c, a)) WITHOUT ROWID",
    "CREATE INDEX w1i ON w1(b, a)",
    "CREATE INDEX w1j ON w1(b)",
    "CREATE TABLE w2(k PRIMARY KEY, u UNIQUE) WITHOUT ROWID",
    "CREATE TABLE w3(k INTEGER PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID",
    "CREATE TABLE w4(x TEXT COLLATE NOCASE, y INT, z, PRIMARY KEY(y DESC, x)) WITHOUT ROWID",
    "CREATE INDEX w4i ON w4(z COLLATE RTRIM DESC)",
    "CREATE INDEX w4j ON w4(x COLLATE BINARY, z)",
    "CREATE TABLE w5(a, b, PRIMARY KEY(a, b), UNIQUE(b, a), UNIQUE(a, b)) WITHOUT ROWID",
    "CREATE TABLE w6(a PRIMARY KEY, b, c AS (b + 1) VIRTUAL, d AS (a || b) STORED) WITHOUT ROWID",
    "CREATE TABLE w7(a, b, PRIMARY KEY(a, b, a)) WITHOUT ROWID",
    "CREATE TABLE w8(a INT, b TEXT, c ANY, PRIMARY KEY(b), UNIQUE(c)) WITHOUT ROWID, STRICT",
    /* STRICT */
    "CREATE TABLE s1(a INT, b INTEGER, c REAL, d TEXT, e BLOB, f ANY) STRICT",
    "CREATE TABLE s2(id INTEGER PRIMARY KEY, v any NOT NULL, t text) STRICT",
    /* generated columns */
    "CREATE TABLE g1(a, b AS (a * 2), c INT GENERATED ALWAYS AS (a + b) STORED, d TEXT AS"
    " (upper(a)) VIRTUAL, e)",
    "CREATE TABLE g2(a INTEGER PRIMARY KEY, b AS (a) STORED, c UNIQUE AS (b + 1))",
    "CREATE TABLE g3(x TEXT, y INT GENERATED ALWAYS AS (length(x)), z NOT NULL AS (y*2))",
    "CREATE INDEX g3i ON g3(y, z)",
    /* expression and partial indexes */
    "CREATE TABLE e1(a, b TEXT COLLATE NOCASE, c)",
    "CREATE INDEX e1i1 ON e1(a + b)",
    "CREATE INDEX e1i2 ON e1(lower(b) COLLATE BINARY DESC, a)",
    "CREATE INDEX e1i3 ON e1(a) WHERE a IS NOT NULL",
    "CREATE UNIQUE INDEX e1i4 ON e1(b, c) WHERE c > 10 AND b <> 'x'",
    "CREATE INDEX e1i5 ON e1(abs(a), \"b\", c || 'x')",
    "CREATE INDEX IF NOT EXISTS e1i6 ON e1(c DESC) WHERE b IN ('a', 'b')",
    "CREATE INDEX e1i7 ON e1(c, a, c)",
    "CREATE INDEX e1i8 ON e1('a', \"zz\", 'b' DESC)",
    "CREATE INDEX e1i9 ON e1(a) WHERE e1.a > 0",
    "CREATE INDEX e1i10 ON e1(+b, (b), b || 'x', (a COLLATE RTRIM) || b, CAST(b AS TEXT))",
    "CREATE INDEX e1i11 ON e1(a || (b COLLATE RTRIM), -b, b = 'x', (b))",
    /* foreign keys */
    "CREATE TABLE p1(id INTEGER PRIMARY KEY, u UNIQUE, v, w, UNIQUE(v, w))",
    "CREATE TABLE f1(a REFERENCES p1, b REFERENCES p1(u) ON DELETE CASCADE ON UPDATE SET NULL,"
    " c, d, e REFERENCES p1(id) MATCH SIMPLE ON DELETE RESTRICT NOT DEFERRABLE,"
    " FOREIGN KEY(c, d) REFERENCES p1(v, w) ON DELETE SET DEFAULT DEFERRABLE INITIALLY DEFERRED)",
    "CREATE TABLE f2(x INTEGER PRIMARY KEY REFERENCES f2(x) ON UPDATE NO ACTION, y)",
    /* autoincrement, names, misc */
    "CREATE TABLE ai(id INTEGER PRIMARY KEY AUTOINCREMENT, v)",
    "CREATE TABLE IF NOT EXISTS \"Odd Name\"(\"col one\" TEXT PRIMARY KEY, [col two] UNIQUE)",
    "CREATE INDEX \"odd idx\" ON \"Odd Name\"(\"col two\" DESC)",
    "create   table   lower_case ( a  integer  primary key , b )",
    "CREATE TABLE big(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16,"
    " c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, UNIQUE(c29, c0, c15))",
    "CREATE TABLE ck(a CHECK(a > 0) CHECK(a < 100), b, CHECK(a + b > 0), CHECK(typeof(b) ="
    " 'text'))",
    "CREATE TABLE nul(a PRIMARY KEY NOT NULL, b NOT NULL UNIQUE, c NOT NULL ON CONFLICT ABORT)",
    "CREATE TABLE temp_like(temp, key, without, rowid, strict)",
    "CREATE INDEX tl_i ON temp_like(key, rowid)",
    "CREATE TABLE d1(a DEFAULT 'it''s', b DEFAULT -0x10, c DEFAULT 1e3, d DEFAULT (-2.5),"
    " e DEFAULT CURRENT_DATE, f DEFAULT (random()))",
    "CREATE TABLE r1(rowid, oid TEXT, _rowid_ INTEGER PRIMARY KEY)",
    "CREATE TABLE r2(a INTEGER PRIMARY KEY ON CONFLICT IGNORE, b INTEGER NOT NULL ON CONFLICT FAIL"
    " DEFAULT 0 CHECK (b >= 0) REFERENCES r1 ON DELETE CASCADE, c TEXT UNIQUE ON CONFLICT"
    " ROLLBACK COLLATE NOCASE)",
    "CREATE INDEX r2i ON r2(c COLLATE RTRIM, b DESC) WHERE c LIKE 'a%' AND b BETWEEN 1 AND 9",
    "CREATE TABLE x1(a BLOB PRIMARY KEY DESC, b VARCHAR(5) COLLATE NOCASE, c DOUBLE,"
    " UNIQUE(c DESC, b)) WITHOUT ROWID",
    "CREATE INDEX x1i ON x1(c, a)",
    "CREATE INDEX x1j ON x1(b || c, a DESC)",
    "CREATE TABLE x2(a INT NOT NULL, b REAL, c TEXT, d BLOB, e ANY, PRIMARY KEY(e, a))"
    " STRICT, WITHOUT ROWID",
    "CREATE TABLE x3(a, b GENERATED ALWAYS AS (a + 1) VIRTUAL, c, PRIMARY KEY(c, a))"
    " WITHOUT ROWID",
    "CREATE INDEX x3i ON x3(b)",
    "CREATE TABLE x4(a, b, c, PRIMARY KEY(a DESC, b), UNIQUE(c), UNIQUE(c, a)) WITHOUT ROWID",
    "CREATE INDEX x4i ON x4(c)",
    "CREATE TABLE d2(a DEFAULT -  1, b DEFAULT +  'x', c DEFAULT ( 1 ), d DEFAULT(-(2)),"
    " e /* c */ VARCHAR ( 10 , 2 ) DEFAULT - 0.5e1, f \"Foo\"\"Bar\" DEFAULT 'a''b',"
    " g INT DEFAULT ((1)), h DEFAULT -9223372036854775808)",
    /* views and triggers */
    "CREATE VIEW v1 AS SELECT a, b FROM e1 WHERE c > 0",
    "CREATE VIEW v2(x, y) AS SELECT 1, 2",
    "CREATE VIEW v3 AS WITH r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5)"
    " SELECT n FROM r",
    "CREATE TRIGGER tr1 AFTER INSERT ON e1 BEGIN UPDATE p1 SET v = 1 WHERE id = new.rowid; END",
    "CREATE TRIGGER tr2 BEFORE UPDATE OF a, b ON e1 FOR EACH ROW WHEN new.a > 0 BEGIN SELECT"
    " RAISE(ABORT, 'no'); DELETE FROM t1; END",
    "CREATE TRIGGER tr3 INSTEAD OF DELETE ON v1 BEGIN INSERT INTO e1(a) VALUES (old.a); END",
    "CREATE TRIGGER tr4 DELETE ON e1 BEGIN SELECT 1; END",
    "CREATE TRIGGER IF NOT EXISTS tr5 AFTER UPDATE ON r2 WHEN old.b <> new.b BEGIN INSERT INTO"
    " r1(rowid) VALUES (new.b); UPDATE r1 SET oid = 'x' WHERE rowid = old.b; END",
    "CREATE VIEW v4 AS SELECT r2.a, r1.oid FROM r2 LEFT JOIN r1 ON r1._rowid_ = r2.a"
    " ORDER BY 1 LIMIT 5",
};

static int ncorpus(void) { return (int)(sizeof corpus / sizeof corpus[0]); }

/* ---- helpers ---- */

/* Create path with sqlite3 running the statements. 0 on success. */
static int make_db(const char *path, const char *const *stmts, int n) {
  remove(path);
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
  sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    char *err = NULL;
    if (sqlite3_exec(db, stmts[i], NULL, NULL, &err) != SQLITE_OK) {
      test_fail(__FILE__, __LINE__, "sqlite3 refused %s: %s", stmts[i], err ? err : "?");
      bad = 1;
    }
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return bad ? -1 : 0;
}

static int load(const char *path, Btree **bt, Schema **s, char **err) {
  *s = NULL;
  *err = NULL;
  int rc = btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, bt);
  if (rc != SHALE_OK) return rc;
  return compile_schema_load(*bt, s, err);
}

static const char *str_or(const unsigned char *z) { return z ? (const char *)z : ""; }

static const char *aff_typeof(char aff) {
  return aff == AFF_INTEGER || aff == AFF_NUMERIC ? "integer" : aff == AFF_REAL ? "real" : "text";
}

static int naff_checked; /* affinities compared by storing '12' */

/* Compare one table with sqlite3's view of it. */
static void compare_table(sqlite3 *db, const Schema *s, const char *name, int64_t root) {
  Table *t = schema_find_table(s, name);
  if (!t) {
    test_fail(__FILE__, __LINE__, "table %s not loaded", name);
    return;
  }
  if ((int64_t)t->root != root)
    test_fail(__FILE__, __LINE__, "%s: root %u, sqlite3 %lld", name, t->root, (long long)root);
  sqlite3_stmt *st;
  char *q = sqlite3_mprintf(
      "SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden FROM"
      " pragma_table_xinfo(%Q)",
      name);
  CHECK_OK(sqlite3_prepare_v2(db, q, -1, &st, NULL));
  sqlite3_free(q);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    int cid = sqlite3_column_int(st, 0);
    if (cid >= t->ncol) {
      test_fail(__FILE__, __LINE__, "%s: too few columns", name);
      break;
    }
    const Column *c = &t->cols[cid];
    const char *what = c->name;
    if (strcmp(c->name, str_or(sqlite3_column_text(st, 1))) ||
        strcmp(c->type ? c->type : "", str_or(sqlite3_column_text(st, 2))) ||
        c->notnull != sqlite3_column_int(st, 3) ||
        strcmp(c->dflt_sql ? c->dflt_sql : "", str_or(sqlite3_column_text(st, 4))) ||
        c->pk != sqlite3_column_int(st, 5) || c->hidden != sqlite3_column_int(st, 6))
      test_fail(__FILE__, __LINE__,
                "%s.%s: got (%s, %s, nn %d, dflt %s, pk %d, hidden %d), sqlite3 (%s, %s, %d, %s,"
                " %d, %d)",
                name, what, c->name, c->type ? c->type : "", c->notnull,
                c->dflt_sql ? c->dflt_sql : "", c->pk, c->hidden,
                str_or(sqlite3_column_text(st, 1)), str_or(sqlite3_column_text(st, 2)),
                sqlite3_column_int(st, 3), str_or(sqlite3_column_text(st, 4)),
                sqlite3_column_int(st, 5), sqlite3_column_int(st, 6));
    n++;
  }
  sqlite3_finalize(st);
  CHECK_EQ(n, t->ncol);

  /* affinity: store '12' in each ordinary column and read its type back */
  for (int i = 0; i < t->ncol; i++) {
    if (t->cols[i].hidden) continue;
    sqlite3_exec(db, "SAVEPOINT aff", NULL, NULL, NULL);
    char *ins = sqlite3_mprintf("DELETE FROM \"%w\"; INSERT INTO \"%w\"(\"%w\") VALUES('12')", name,
                                name, t->cols[i].name);
    int ok = sqlite3_exec(db, ins, NULL, NULL, NULL) == SQLITE_OK;
    naff_checked += ok;
    sqlite3_free(ins);
    if (ok) {
      char *sel = sqlite3_mprintf("SELECT typeof(\"%w\") FROM \"%w\"", t->cols[i].name, name);
      if (sqlite3_prepare_v2(db, sel, -1, &st, NULL) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        const char *ty = str_or(sqlite3_column_text(st, 0));
        if (strcmp(ty, aff_typeof(t->cols[i].affinity)))
          test_fail(__FILE__, __LINE__, "%s.%s: affinity %c, sqlite3 stored '12' as %s", name,
                    t->cols[i].name, t->cols[i].affinity, ty);
      }
      sqlite3_finalize(st);
      sqlite3_free(sel);
    }
    sqlite3_exec(db, "ROLLBACK TO aff; RELEASE aff", NULL, NULL, NULL);
  }

  /* indexes: PRAGMA index_xlist */
  q = sqlite3_mprintf("SELECT name, \"unique\", origin, partial FROM pragma_index_list(%Q)", name);
  CHECK_OK(sqlite3_prepare_v2(db, q, -1, &st, NULL));
  sqlite3_free(q);
  int nidx = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *iname = str_or(sqlite3_column_text(st, 0));
    nidx++;
    const Index *idx = NULL;
    for (const Index *i = t->indexes; i; i = i->next)
      if (!strcmp(i->name, iname)) idx = i;
    if (!idx) {
      test_fail(__FILE__, __LINE__, "%s: index %s missing", name, iname);
      continue;
    }
    if (schema_find_index(s, iname) != idx)
      test_fail(__FILE__, __LINE__, "%s: index %s not in the map", name, iname);
    if (idx->unique != sqlite3_column_int(st, 1) ||
        strcmp(schema_index_origin_name(idx), str_or(sqlite3_column_text(st, 2))) ||
        (idx->where != NULL) != sqlite3_column_int(st, 3))
      test_fail(__FILE__, __LINE__, "%s: index %s: unique %d origin %s partial %d vs %d %s %d",
                name, iname, idx->unique, schema_index_origin_name(idx), idx->where != NULL,
                sqlite3_column_int(st, 1), str_or(sqlite3_column_text(st, 2)),
                sqlite3_column_int(st, 3));
    sqlite3_stmt *xi;
    char *q2 = sqlite3_mprintf(
        "SELECT seqno, cid, name, desc, coll, key FROM"
        " pragma_index_xinfo(%Q)",
        iname);
    CHECK_OK(sqlite3_prepare_v2(db, q2, -1, &xi, NULL));
    sqlite3_free(q2);
    int k = 0;
    while (sqlite3_step(xi) == SQLITE_ROW) {
      if (k >= idx->ncol) {
        test_fail(__FILE__, __LINE__, "%s: index %s has too few columns", name, iname);
        k++;
        continue;
      }
      const IndexColumn *ic = &idx->cols[k];
      const char *cname = ic->col >= 0 ? t->cols[ic->col].name : "";
      int key = k < idx->nkey;
      if (sqlite3_column_int(xi, 0) != k || sqlite3_column_int(xi, 1) != ic->col ||
          strcmp(cname, str_or(sqlite3_column_text(xi, 2))) ||
          sqlite3_column_int(xi, 3) != ic->desc ||
          util_stricmp(ic->coll, str_or(sqlite3_column_text(xi, 4))) ||
          sqlite3_column_int(xi, 5) != key)
        test_fail(__FILE__, __LINE__,
                  "%s: index %s col %d: got (cid %d, %s, desc %d, %s, key %d), sqlite3 (%d, %s, "
                  "%d, %s, %d)",
                  name, iname, k, ic->col, cname, ic->desc, ic->coll, key,
                  sqlite3_column_int(xi, 1), str_or(sqlite3_column_text(xi, 2)),
                  sqlite3_column_int(xi, 3), str_or(sqlite3_column_text(xi, 4)),
                  sqlite3_column_int(xi, 5));
      k++;
    }
    sqlite3_finalize(xi);
    if (k != idx->ncol)
      test_fail(__FILE__, __LINE__, "%s: index %s: %d columns, sqlite3 %d", name, iname, idx->ncol,
                k);
  }
  sqlite3_finalize(st);
  int mine = 0;
  for (const Index *i = t->indexes; i; i = i->next) mine++;
  if (mine != nidx) test_fail(__FILE__, __LINE__, "%s: %d indexes, sqlite3 %d", name, mine, nidx);
}

static void compare_all(const char *path) {
  Btree *bt = NULL;
  Schema *s = NULL;
  char *err = NULL;
  int rc = load(path, &bt, &s, &err);
  if (rc != SHALE_OK)
    test_fail(__FILE__, __LINE__, "compile_schema_load: %d %s", rc, err ? err : "");
  shale_free(err);
  if (s) CHECK_OK(schema_check(s));
  sqlite3 *db;
  CHECK_OK(sqlite3_open(path, &db));
  sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  sqlite3_stmt *st;
  CHECK_OK(sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, rootpage FROM sqlite_schema", -1,
                              &st, NULL));
  int ntab = 0, nview = 0, ntrig = 0;
  while (s && sqlite3_step(st) == SQLITE_ROW) {
    const char *type = str_or(sqlite3_column_text(st, 0));
    const char *name = str_or(sqlite3_column_text(st, 1));
    const char *tbl = str_or(sqlite3_column_text(st, 2));
    int64_t root = sqlite3_column_int64(st, 3);
    if (!strcmp(type, "table")) {
      ntab++;
      compare_table(db, s, name, root);
    } else if (!strcmp(type, "index")) {
      Index *idx = schema_find_index(s, name);
      if (!idx || (int64_t)idx->root != root || util_stricmp(idx->table->name, tbl))
        test_fail(__FILE__, __LINE__, "index %s: root %u, sqlite3 %lld", name, idx ? idx->root : 0,
                  (long long)root);
    } else if (!strcmp(type, "view")) {
      nview++;
      View *v = schema_find_view(s, name);
      CHECK(v && v->select && v->sql);
    } else if (!strcmp(type, "trigger")) {
      ntrig++;
      Trigger *g = schema_find_trigger(s, name);
      CHECK(g && !util_stricmp(g->table, tbl) && g->nstmts > 0);
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (s) {
    int pos = 0, n = 0;
    while (schema_map_next(&s->tables, &pos)) n++;
    CHECK_EQ(n, ntab + 2); /* + sqlite_schema under both names */
    pos = n = 0;
    while (schema_map_next(&s->views, &pos)) n++;
    CHECK_EQ(n, nview);
    pos = n = 0;
    while (schema_map_next(&s->triggers, &pos)) n++;
    CHECK_EQ(n, ntrig);
  }
  schema_free(s);
  btree_close(bt);
}

/* ---- tests ---- */

TEST(schema_corpus_matches_sqlite) {
  const char *path = test_path("corpus.db");
  if (make_db(path, corpus, ncorpus()) != 0) return;
  naff_checked = 0;
  compare_all(path);
  if (naff_checked < 150)
    test_fail(__FILE__, __LINE__, "only %d affinities compared", naff_checked);
}

/* Each corpus statement alone in its file (numbering of automatic indexes
 * and root pages then differ from the combined file). */
TEST(schema_corpus_one_by_one) {
  const char *path = test_path("one.db");
  for (int i = 0; i < ncorpus(); i++) {
    if (!strncmp(corpus[i], "CREATE TABLE", 12) || !strncmp(corpus[i], "create", 6)) {
      if (make_db(path, &corpus[i], 1) != 0) continue;
      compare_all(path);
    }
  }
}

TEST(schema_specific_fields) {
  const char *path = test_path("fields.db");
  if (make_db(path, corpus, ncorpus()) != 0) return;
  Btree *bt;
  Schema *s;
  char *err;
  CHECK_OK(load(path, &bt, &s, &err));
  if (!s) return;
  Table *t;
  CHECK((t = schema_find_table(s, "A1")) && t->rowid_alias == 0 && t->npk == 1);
  CHECK((t = schema_find_table(s, "a2")) && t->rowid_alias == -1 && t->indexes);
  CHECK((t = schema_find_table(s, "a3")) && t->rowid_alias == -1);
  CHECK((t = schema_find_table(s, "a4")) && t->rowid_alias == 0 && !t->indexes);
  CHECK((t = schema_find_table(s, "a5")) && t->rowid_alias == 0 && t->autoincrement);
  CHECK((t = schema_find_table(s, "a8")) && t->rowid_alias == 1);
  CHECK((t = schema_find_table(s, "a9")) && t->rowid_alias == 0 &&
        t->pk_conflict == SCHEMA_OE_REPLACE);
  CHECK((t = schema_find_table(s, "ai")) && t->autoincrement);
  CHECK(schema_find_table(s, "sqlite_sequence"));
  CHECK((t = schema_find_table(s, "sqlite_master")) && t->root == 1 && t->ncol == 5 &&
        t == schema_find_table(s, "SQLITE_SCHEMA") &&
        schema_table_column_index(t, "RootPage") == 3);
  CHECK((t = schema_find_table(s, "w1")) && t->without_rowid && t->npk == 2 && t->pk_cols[0] == 2 &&
        t->pk_cols[1] == 0 && t->cols[2].storage == 0 && t->cols[0].storage == 1 &&
        t->cols[1].storage == 2 && t->pk_index && t->pk_index->root == t->root);
  CHECK((t = schema_find_table(s, "w4")) && t->npk == 2 && t->pk_desc[0] == 1 &&
        t->pk_desc[1] == 0);
  CHECK((t = schema_find_table(s, "s1")) && t->strict && t->cols[5].affinity == AFF_BLOB &&
        t->cols[0].affinity == AFF_INTEGER);
  CHECK((t = schema_find_table(s, "g1")) && t->has_generated && t->cols[1].storage == -1 &&
        t->cols[2].storage == 1 && t->cols[4].storage == 2 && t->nstored == 3 && t->cols[1].gen);
  CHECK((t = schema_find_table(s, "ck")) && t->ncheck == 4 &&
        !strcmp(t->checks[2].sql, "a + b > 0"));
  CHECK((t = schema_find_table(s, "t4")) && t->ncheck == 2 && t->checks[1].name &&
        !strcmp(t->checks[1].name, "ck") && t->cols[0].notnull_conflict == SCHEMA_OE_IGNORE);
  CHECK((t = schema_find_table(s, "c1")) && t->cols[0].coll &&
        !util_stricmp(t->cols[0].coll, "nocase"));
  CHECK((t = schema_find_table(s, "f1")) && t->nfk == 4);
  if (t && t->nfk == 4) {
    CHECK(t->fks[0].ncol == 1 && t->fks[0].cols[0] == 0 && !t->fks[0].parent_cols &&
          !strcmp(t->fks[0].parent, "p1"));
    CHECK(t->fks[1].on_delete == SCHEMA_FK_CASCADE && t->fks[1].on_update == SCHEMA_FK_SET_NULL &&
          !strcmp(t->fks[1].parent_cols[0], "u"));
    /* column constraints are met first: e (column) before FOREIGN KEY(c, d) */
    CHECK(t->fks[2].cols[0] == 4 && t->fks[2].on_delete == SCHEMA_FK_RESTRICT &&
          !t->fks[2].deferred && t->fks[2].match);
    CHECK(t->fks[3].ncol == 2 && t->fks[3].cols[0] == 2 && t->fks[3].cols[1] == 3 &&
          t->fks[3].deferred && t->fks[3].on_delete == SCHEMA_FK_SET_DEFAULT);
  }
  Index *i;
  CHECK((i = schema_find_index(s, "e1i1")) && i->nkey == 1 && i->cols[0].col == INDEX_COL_EXPR &&
        i->cols[0].expr && i->ncol == 2 && i->cols[1].col == INDEX_COL_ROWID);
  CHECK((i = schema_find_index(s, "e1i3")) && i->where && i->sql);
  CHECK((i = schema_find_index(s, "sqlite_autoindex_k7_3")) && i->nkey == 2 && !i->sql &&
        i->is_autoindex && i->origin == INDEX_ORIGIN_UNIQUE);
  View *v;
  CHECK((v = schema_find_view(s, "v2")) && v->ncol == 2 && !strcmp(v->cols[1], "y"));
  Trigger *g;
  CHECK((g = schema_find_trigger(s, "tr2")) && g->timing == TRIGGER_BEFORE &&
        g->event == TRIGGER_UPDATE && g->nupdate_of == 2 && g->when && g->nstmts == 2);
  CHECK((g = schema_find_trigger(s, "TR3")) && g->timing == TRIGGER_INSTEAD_OF &&
        g->event == TRIGGER_DELETE);
  CHECK((g = schema_find_trigger(s, "tr4")) && g->timing == TRIGGER_BEFORE &&
        g->event == TRIGGER_DELETE);
  /* KeyInfo of w4j: x BINARY, z, then the PK columns y DESC and x NOCASE (the
   * key's x has another collation, so it does not stand for the PK's) */
  i = schema_find_index(s, "w4j");
  CHECK(i && i->ncol == 4);
  if (i) {
    int unknown = 1;
    KeyInfo *ki = schema_index_keyinfo(i, &unknown);
    CHECK(ki && ki->ncol == 4 && !unknown && ki->desc[2] == 1 && ki->desc[0] == 0);
    CHECK(ki && ki->coll[0] == record_collation_find("BINARY") &&
          ki->coll[3] == record_collation_find("NOCASE"));
    shale_free(ki);
  }
  /* schema_check notices broken invariants */
  CHECK_OK(schema_check(s));
  t = schema_find_table(s, "t1");
  if (t) {
    int old = t->cols[1].storage;
    t->cols[1].storage = t->cols[0].storage;
    CHECK_RC(schema_check(s), SHALE_INTERNAL);
    t->cols[1].storage = old;
    t->rowid_alias = 0; /* t1.a is INT, not INTEGER */
    CHECK_RC(schema_check(s), SHALE_INTERNAL);
    t->rowid_alias = -1;
  }
  i = schema_find_index(s, "c1i1");
  if (i) {
    i->ncol = i->nkey; /* the trailing rowid lost */
    CHECK_RC(schema_check(s), SHALE_INTERNAL);
    i->ncol = i->nkey + 1;
  }
  CHECK_OK(schema_check(s));
  /* removal keeps the maps and the table's list consistent */
  t = schema_find_table(s, "e1");
  int before = 0, after = 0;
  for (Index *x = t ? t->indexes : NULL; x; x = x->next) before++;
  schema_remove_index(s, "E1I2");
  for (Index *x = t ? t->indexes : NULL; x; x = x->next) after++;
  CHECK(!schema_find_index(s, "e1i2") && after == before - 1 && schema_find_index(s, "e1i3"));
  schema_remove_table(s, "e1");
  CHECK(!schema_find_table(s, "e1") && schema_find_table(s, "t1"));
  schema_free(s);
  btree_close(bt);
}

TEST(schema_empty_database) {
  const char *path = test_path("empty.db");
  remove(path);
  Btree *bt;
  Schema *s;
  char *err;
  CHECK_OK(load(path, &bt, &s, &err));
  CHECK(s && schema_find_table(s, "sqlite_master") && !schema_find_table(s, "t"));
  CHECK(s && s->cookie == 0);
  schema_free(s);
  btree_close(bt);
  const char *one[] = {"CREATE TABLE t(a)", "CREATE TABLE u(b)", "DROP TABLE u",
                       "PRAGMA user_version=7"};
  if (make_db(path, one, 4) != 0) return;
  CHECK_OK(load(path, &bt, &s, &err));
  CHECK(s && s->cookie == 3 && s->file_format == 4 && schema_find_table(s, "t") &&
        !schema_find_table(s, "u"));
  schema_free(s);
  btree_close(bt);
}

/* ---- CREATE-time errors against sqlite3 ---- */

/* setup statements (run in both) followed by the statement under test */
static const char *const setup_sql[] = {
    "CREATE TABLE base(a, b TEXT, c INT)",
    "CREATE VIEW vw AS SELECT 1",
};

static const char *const error_corpus[] = {
    "CREATE TABLE t(a, a)",
    "CREATE TABLE t(a, b, A)",
    "CREATE TABLE t(a PRIMARY KEY, b PRIMARY KEY)",
    "CREATE TABLE t(a, b, PRIMARY KEY(a), PRIMARY KEY(b))",
    "CREATE TABLE t(a INTEGER PRIMARY KEY, PRIMARY KEY(a))",
    "CREATE TABLE t(a INT PRIMARY KEY AUTOINCREMENT)",
    "CREATE TABLE t(a INTEGER PRIMARY KEY DESC AUTOINCREMENT)",
    "CREATE TABLE t(a INT, PRIMARY KEY(a AUTOINCREMENT))",
    "CREATE TABLE t(a INTEGER, PRIMARY KEY(a AUTOINCREMENT))",
    "CREATE TABLE t(a, b) WITHOUT ROWID",
    "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT) WITHOUT ROWID",
    "CREATE TABLE t(a foo) STRICT",
    "CREATE TABLE t(a INT, b) STRICT",
    "CREATE TABLE t(a INT, b VARCHAR(10)) STRICT",
    "CREATE TABLE t(a INT, b \"text\") STRICT",
    "CREATE TABLE t(a integer, b Any, c rEaL, d blob, e TEXT, f INT) STRICT",
    "CREATE TABLE t(a AS (1))",
    "CREATE TABLE t(a AS (b), b AS (a) STORED)",
    "CREATE TABLE t(a, b AS (a) STORED, PRIMARY KEY(b))",
    "CREATE TABLE t(a, b AS (c))",
    "CREATE TABLE t(a, b AS ((SELECT 1)))",
    "CREATE TABLE t(a DEFAULT (b))",
    "CREATE TABLE t(a DEFAULT (?))",
    "CREATE TABLE t(a DEFAULT (abs(b)))",
    "CREATE TABLE t(a DEFAULT ((SELECT 1)))",
    "CREATE TABLE t(a DEFAULT (random()))",
    "CREATE TABLE t(a DEFAULT (\"str\"))",
    "CREATE TABLE t(a, PRIMARY KEY(b))",
    "CREATE TABLE t(a, UNIQUE(b))",
    "CREATE TABLE t(a, UNIQUE(a + 1))",
    "CREATE TABLE t(a, PRIMARY KEY(a || 'x'))",
    "CREATE TABLE t(a, PRIMARY KEY(b)) WITHOUT ROWID",
    "CREATE TABLE t(a, FOREIGN KEY(b) REFERENCES p(x))",
    "CREATE TABLE t(a REFERENCES p(x, y))",
    "CREATE TABLE t(a, b, FOREIGN KEY(a, b) REFERENCES p(x))",
    "CREATE TABLE t(a, b, FOREIGN KEY(a, b) REFERENCES p(x, y))",
    "CREATE TABLE t(a UNIQUE ON CONFLICT REPLACE, UNIQUE(a) ON CONFLICT IGNORE)",
    "CREATE TABLE t(a UNIQUE ON CONFLICT REPLACE, UNIQUE(a))",
    "CREATE TABLE t(a CHECK (a > (SELECT 1)))",
    "CREATE TABLE t(a CHECK (b > 0))",
    "CREATE TABLE t(a, CHECK (t.a > 0), CHECK(x.a > 0))",
    "CREATE TABLE t(a COLLATE foo)",
    "CREATE TABLE t(a COLLATE nocase, b COLLATE RTRIM, c COLLATE Binary)",
    "CREATE TABLE sqlite_t(a)",
    "CREATE TABLE t(a, b AS (a) STORED, c AS (b) VIRTUAL, CHECK (c > 0))",
    "CREATE TABLE t(a PRIMARY KEY, b, PRIMARY KEY(b)) WITHOUT ROWID",
    "CREATE INDEX i ON nosuch(a)",
    "CREATE INDEX i ON base(d)",
    "CREATE INDEX i ON base(a) WHERE d > 0",
    "CREATE INDEX i ON base(a) WHERE a > (SELECT 1)",
    "CREATE INDEX i ON base(random())",
    "CREATE INDEX i ON base(a + ?)",
    "CREATE INDEX i ON base(a) WHERE ?",
    "CREATE INDEX i ON base(a COLLATE foo)",
    "CREATE INDEX i ON base((SELECT 1))",
    "CREATE INDEX i ON vw(a)",
    "CREATE INDEX i ON sqlite_master(name)",
    "CREATE INDEX i ON base(a) WHERE random() > 0",
    "CREATE INDEX i ON base(base.a)",
    "CREATE INDEX i ON base(a) WHERE base.a > 0",
    "CREATE INDEX i ON base('a', \"zz\")",
    "CREATE TABLE t(a, b AS (c + 1))",
    "CREATE TABLE t(a AS (1) DEFAULT 2)",
    "CREATE TABLE t(a GENERATED ALWAYS AS (1) STORED)",
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b, UNIQUE(a))",
    "CREATE TABLE t(a, b, UNIQUE(a, a), PRIMARY KEY(b, b))",
    "CREATE TRIGGER tr BEFORE INSERT ON nosuch BEGIN SELECT 1; END",
    "CREATE TRIGGER tr BEFORE INSERT ON vw BEGIN SELECT 1; END",
    "CREATE TRIGGER tr AFTER DELETE ON vw BEGIN SELECT 1; END",
    "CREATE TRIGGER tr INSTEAD OF UPDATE ON vw BEGIN SELECT 1; END",
    "CREATE TRIGGER tr INSTEAD OF INSERT ON base BEGIN SELECT 1; END",
    "CREATE TRIGGER tr UPDATE OF zz ON base BEGIN SELECT 1; END",
    "CREATE TRIGGER tr BEFORE INSERT ON sqlite_master BEGIN SELECT 1; END",
    "CREATE TRIGGER sqlite_tr BEFORE INSERT ON base BEGIN SELECT 1; END",
    "CREATE VIEW sqlite_v AS SELECT 1",
    "CREATE VIEW v2(a, a) AS SELECT 1, 2",
    "CREATE INDEX sqlite_i ON base(a)",
    "CREATE INDEX i ON base(a, b DESC, c COLLATE NOCASE)",
    "CREATE INDEX i ON base(a + b, \"c\")",
    "CREATE INDEX i ON base(a) WHERE b IS NOT NULL AND c > 5",
    "CREATE INDEX i ON base(abs(c)) WHERE randomblob(2) > 0",
};

/* Our CREATE-time checks for one statement; *msg gets the error or NULL. */
static int our_create(Schema *s, UtilArena *arena, const char *sql, char **msg) {
  SqlStmt *st = NULL;
  *msg = NULL;
  int rc = sql_parse(arena, sql, -1, &st, NULL, msg);
  if (rc != SHALE_OK || !st) return rc ? rc : SHALE_ERROR;
  if (st->kind == SQL_STMT_CREATE_TABLE) {
    Table *t;
    rc = compile_schema_table_from_create(s, st, sql, &t, msg);
    if (rc == SHALE_OK) {
      CHECK_OK(schema_add_table(s, t));
      for (Index *i = t->indexes; i; i = i->next) CHECK_OK(schema_add_index(s, i));
    }
  } else if (st->kind == SQL_STMT_CREATE_INDEX) {
    Index *idx;
    rc = compile_schema_index_from_create(s, st, sql, &idx, msg);
    if (rc == SHALE_OK) CHECK_OK(schema_add_index(s, idx));
  } else if (st->kind == SQL_STMT_CREATE_VIEW) {
    View *v;
    rc = compile_schema_view_from_create(s, st, sql, &v, msg);
    if (rc == SHALE_OK) CHECK_OK(schema_add_view(s, v));
  } else if (st->kind == SQL_STMT_CREATE_TRIGGER) {
    Trigger *g;
    rc = compile_schema_trigger_from_create(s, st, sql, &g, msg);
    if (rc == SHALE_OK) CHECK_OK(schema_add_trigger(s, g));
  }
  return rc;
}

TEST(schema_create_errors_match_sqlite) {
  int n = (int)(sizeof error_corpus / sizeof error_corpus[0]);
  int nerr = 0;
  for (int i = 0; i < n; i++) {
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    Schema *s = schema_new();
    UtilArena arena;
    util_arena_init(&arena, 0);
    char *msg = NULL;
    for (size_t k = 0; k < sizeof setup_sql / sizeof setup_sql[0]; k++) {
      CHECK_OK(sqlite3_exec(db, setup_sql[k], NULL, NULL, NULL));
      CHECK_OK(our_create(s, &arena, setup_sql[k], &msg));
      shale_free(msg);
    }
    int src = sqlite3_exec(db, error_corpus[i], NULL, NULL, NULL);
    const char *want = src == SQLITE_OK ? NULL : sqlite3_errmsg(db);
    int rc = our_create(s, &arena, error_corpus[i], &msg);
    if ((src == SQLITE_OK) != (rc == SHALE_OK) || (want && (!msg || strcmp(msg, want))))
      test_fail(__FILE__, __LINE__, "%s: got %d \"%s\", sqlite3 \"%s\"", error_corpus[i], rc,
                msg ? msg : "", want ? want : "ok");
    nerr += src != SQLITE_OK;
    shale_free(msg);
    util_arena_free(&arena);
    schema_free(s);
    sqlite3_close(db);
  }
  CHECK(nerr > 40);
}

/* ---- malformed sqlite_schema ---- */

/* Make t.db, then overwrite sqlite_schema rows with edit (writable_schema). */
static int damaged(const char *path, const char *setup, const char *edit) {
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  char *sql =
      sqlite3_mprintf("PRAGMA synchronous=OFF; %s; PRAGMA writable_schema=ON; %s", setup, edit);
  int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_free(sql);
  sqlite3_close(db);
  return rc;
}

static char *sqlite_load_error(const char *path) {
  sqlite3 *db;
  sqlite3_open(path, &db);
  char *err = NULL;
  sqlite3_exec(db, "SELECT * FROM sqlite_schema", NULL, NULL, &err);
  char *out = err ? strdup(err) : NULL;
  sqlite3_free(err);
  sqlite3_close(db);
  return out;
}

TEST(schema_malformed_matches_sqlite) {
  static const char *const cases[][2] = {
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='garbage' WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='CREATE TABLE t(a,a)' WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='create tabl x' WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql=NULL WHERE name='t'"},
      {"CREATE TABLE t(a)",
       "UPDATE sqlite_schema SET sql='CREATE INDEX i ON nosuch(a)' WHERE name='t'"},
      {"CREATE TABLE t(a)",
       "UPDATE sqlite_schema SET sql='CREATE TABLE t(a, b) without rowid' WHERE name='t'"},
      {"CREATE TABLE t(a); CREATE INDEX i ON t(a)",
       "UPDATE sqlite_schema SET rootpage=99 WHERE name='i'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage=99 WHERE name='t'"},
      {"CREATE TABLE t(a)",
       "INSERT INTO sqlite_schema VALUES('index','sqlite_autoindex_t_1','t',2,NULL)"},
      {"CREATE TABLE t(a)",
       "INSERT INTO sqlite_schema VALUES('index','i2','t',2,'create index i2 on t(b)')"},
      {"CREATE TABLE t(a)", "INSERT INTO sqlite_schema VALUES('table','t2','t2',2,'select 1')"},
      {"CREATE TABLE t(a)",
       "INSERT INTO sqlite_schema VALUES('table','t2','t2',2,'create table t(b)')"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='CREATE TABLE t(a' WHERE name='t'"},
      {"CREATE TABLE t(a)",
       "UPDATE sqlite_schema SET sql='CREATE TABLE t(a INT PRIMARY KEY AUTOINCREMENT)'"},
      {"CREATE TABLE t(a)",
       "INSERT INTO sqlite_schema VALUES('trigger','tr','nosuch',0,"
       "'create trigger tr before insert on nosuch begin select 1; end')"},
      {"CREATE TABLE t(a)",
       "INSERT INTO sqlite_schema VALUES('view','v','v',0,"
       "'create view v as select * from nosuch')"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage=1 WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage=-5 WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage='abc' WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage=NULL WHERE name='t'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET rootpage=0 WHERE name='t'"},
      {"CREATE TABLE t(a); CREATE INDEX i ON t(a)",
       "UPDATE sqlite_schema SET rootpage=1 WHERE name='i'"},
      {"CREATE TABLE t(a); CREATE INDEX i ON t(a)",
       "UPDATE sqlite_schema SET rootpage=2.0 WHERE name='i'"},
      {"CREATE TABLE t(a); CREATE INDEX i ON t(a)",
       "UPDATE sqlite_schema SET rootpage='3' WHERE name='i'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET rootpage=7 WHERE name='v'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET type='index' WHERE name='t'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET type='bogus' WHERE name='v'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET name='zzz' WHERE name='t'"},
      {"CREATE TABLE t(a); CREATE INDEX i ON t(a)",
       "UPDATE sqlite_schema SET tbl_name='zzz' WHERE name='i'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET sql='CREATE VIEW v AS SELECT 1;'"},
      {"CREATE VIEW v AS SELECT 1",
       "UPDATE sqlite_schema SET sql='CREATE VIEW v AS SELECT 1; CREATE TABLE q(a)'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET sql='  CREATE VIEW v AS SELECT 1'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET sql='cReAtE VIEW v AS SELECT 1'"},
      {"CREATE VIEW v AS SELECT 1",
       "UPDATE sqlite_schema SET sql='CREATE TEMP VIEW v AS SELECT 1'"},
      {"CREATE VIEW v AS SELECT 1",
       "UPDATE sqlite_schema SET sql='CREATE VIRTUAL TABLE v USING fts5(a)'"},
      {"CREATE VIEW v AS SELECT 1", "UPDATE sqlite_schema SET sql='CREATE TABLE v(a) '"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='CREATE TABLE t(a) AS SELECT 1'"},
      {"CREATE TABLE t(a)", "UPDATE sqlite_schema SET sql='CREATE TABLE t AS SELECT 1'"},
      {"CREATE TABLE t(a UNIQUE)",
       "UPDATE sqlite_schema SET rootpage=1 WHERE name LIKE 'sqlite_auto%'"},
      {"CREATE TABLE t(a UNIQUE)",
       "UPDATE sqlite_schema SET rootpage=99 WHERE name LIKE 'sqlite_auto%'"},
      {"CREATE TABLE t(a UNIQUE)",
       "UPDATE sqlite_schema SET sql='' WHERE name LIKE 'sqlite_auto%'"},
      {"CREATE TABLE t(a UNIQUE)",
       "UPDATE sqlite_schema SET sql='x' WHERE name LIKE 'sqlite_auto%'"},
  };
  const char *path = test_path("bad.db");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (damaged(path, cases[i][0], cases[i][1]) != SQLITE_OK) {
      test_fail(__FILE__, __LINE__, "could not damage: %s", cases[i][1]);
      continue;
    }
    char *want = sqlite_load_error(path);
    Btree *bt;
    Schema *s;
    char *err;
    int rc = load(path, &bt, &s, &err);
    if (!want ? rc != SHALE_OK : (rc != SHALE_CORRUPT || !err || strcmp(err, want)))
      test_fail(__FILE__, __LINE__, "%s: got %d \"%s\", sqlite3 \"%s\"", cases[i][1], rc,
                err ? err : "", want ? want : "ok");
    CHECK(!want == (s != NULL));
    free(want);
    shale_free(err);
    schema_free(s);
    btree_close(bt);
  }
}

/* Random damage to the CREATE texts: an error or a schema, never a crash. */
TEST(schema_mutated_sql_no_crash) {
  const char *path = test_path("mut.db");
  if (make_db(path, corpus, ncorpus()) != 0) return;
  uint64_t seed = test_seed() | 1;
  int rounds = test_long() ? 3000 : 300;
  int nok = 0, nbad = 0;
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_exec(db, "PRAGMA writable_schema=ON; PRAGMA synchronous=OFF", NULL, NULL, NULL);
  for (int r = 0; r < rounds; r++) {
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT rowid, sql FROM sqlite_schema WHERE sql IS NOT NULL", -1, &st,
                       NULL);
    int nrow = 0;
    int64_t rowids[200];
    while (sqlite3_step(st) == SQLITE_ROW && nrow < 200)
      rowids[nrow++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    int64_t victim = rowids[test_rand(&seed) % (uint64_t)nrow];
    sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_schema WHERE rowid=?", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, victim);
    char text[4096] = "";
    if (sqlite3_step(st) == SQLITE_ROW)
      snprintf(text, sizeof text, "%s", str_or(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    size_t len = strlen(text);
    int nm = 1 + (int)(test_rand(&seed) % 3);
    for (int m = 0; m < nm && len > 0; m++) {
      size_t at = test_rand(&seed) % len;
      static const char pool[] = "(),'\"`[] aAzZ0129-+*/.;=<>|";
      switch (test_rand(&seed) % 3) {
        case 0:
          text[at] = pool[test_rand(&seed) % (sizeof pool - 1)];
          break;
        case 1:
          len = at; /* truncate */
          text[len] = 0;
          break;
        default:
          memmove(text + at, text + at + 1, len - at);
          len--;
          break;
      }
    }
    sqlite3_prepare_v2(db, "UPDATE sqlite_schema SET sql=? WHERE rowid=?", -1, &st, NULL);
    sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, victim);
    sqlite3_step(st);
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    Btree *bt;
    Schema *s;
    char *err;
    int rc = load(path, &bt, &s, &err);
    CHECK(rc == SHALE_OK || rc == SHALE_CORRUPT);
    CHECK((rc == SHALE_OK) == (s != NULL));
    if (rc == SHALE_CORRUPT) CHECK(err && !strncmp(err, "malformed database schema (", 27));
    if (s) CHECK_OK(schema_check(s));
    nok += rc == SHALE_OK;
    nbad += rc != SHALE_OK;
    shale_free(err);
    schema_free(s);
    btree_close(bt);
    if (r % 20 == 19) { /* start over from the intact corpus now and then */
      sqlite3_close(db);
      if (make_db(path, corpus, ncorpus()) != 0) return;
      sqlite3_open(path, &db);
      sqlite3_exec(db, "PRAGMA writable_schema=ON; PRAGMA synchronous=OFF", NULL, NULL, NULL);
    }
  }
  sqlite3_close(db);
  CHECK(nbad > 0);
}

/* Every allocation of compile_schema_load failing in turn: SHALE_NOMEM, no leak. */
TEST(schema_load_oom_sweep) {
  const char *path = test_path("oom.db");
  if (make_db(path, corpus, ncorpus()) != 0) return;
  int done = 0;
  for (long n = 1; n < 100000 && !done; n++) {
    long before = util_alloc_outstanding();
    Btree *bt;
    CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
    Schema *s = NULL;
    char *err = NULL;
    util_fault_alloc(n, 0);
    int rc = compile_schema_load(bt, &s, &err);
    int hit = util_fault_alloc_hits() > 0;
    util_fault_alloc(0, 0);
    if (rc == SHALE_OK) {
      CHECK(s != NULL);
      if (s) CHECK_OK(schema_check(s));
      done = !hit;
    } else {
      if (rc != SHALE_NOMEM) {
        test_fail(__FILE__, __LINE__, "fault %ld: rc %d %s", n, rc, err ? err : "");
        done = 1;
      }
      CHECK(!s);
    }
    shale_free(err);
    schema_free(s);
    btree_close(bt);
    if (util_alloc_outstanding() != before)
      test_fail(__FILE__, __LINE__, "fault %ld: %ld blocks leaked", n,
                util_alloc_outstanding() - before),
          done = 1;
  }
  CHECK(done);
}

/* ---- KeyInfo against the order of keys sqlite3 stored ---- */

/* Fill every corpus table with rows full of ties (small domains, case and
 * trailing-space variants, numbers of both kinds), then walk every index
 * tree (and WITHOUT ROWID table) and check that consecutive keys are in
 * strictly increasing order under schema_index_keyinfo. */
TEST(schema_keyinfo_orders_sqlite_indexes) {
  const char *path = test_path("keys.db");
  if (make_db(path, corpus, ncorpus()) != 0) return;
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_exec(db, "PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
  static const char *const vals[] = {"1",    "2",   "2.0",   "-3.5",  "'a'",     "'A'",
                                     "'a '", "'b'", "'B  '", "x'00'", "x'0001'", "NULL",
                                     "'10'", "1e3", "'abc'", "'ABC'"};
  int nv = (int)(sizeof vals / sizeof vals[0]);
  uint64_t seed = test_seed() ^ 0x4e75;
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db,
                     "SELECT name FROM sqlite_schema WHERE type='table' AND name NOT LIKE"
                     " 'sqlite%'",
                     -1, &st, NULL);
  char names[200][64];
  int ntab = 0;
  while (sqlite3_step(st) == SQLITE_ROW && ntab < 200)
    snprintf(names[ntab++], 64, "%s", str_or(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  for (int t = 0; t < ntab; t++) {
    char *q = sqlite3_mprintf("SELECT name FROM pragma_table_xinfo(%Q) WHERE hidden = 0", names[t]);
    char cols[64][64];
    int ncol = 0;
    sqlite3_prepare_v2(db, q, -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW && ncol < 64)
      snprintf(cols[ncol++], 64, "%s", str_or(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_free(q);
    for (int r = 0; r < 300; r++) {
      sqlite3_str *q2 = sqlite3_str_new(NULL);
      sqlite3_str_appendf(q2, "INSERT OR IGNORE INTO \"%w\"(", names[t]);
      for (int c = 0; c < ncol; c++) sqlite3_str_appendf(q2, "%s\"%w\"", c ? "," : "", cols[c]);
      sqlite3_str_appendf(q2, ") VALUES(");
      for (int c = 0; c < ncol; c++)
        sqlite3_str_appendf(q2, "%s%s", c ? "," : "", vals[test_rand(&seed) % (uint64_t)nv]);
      sqlite3_str_appendf(q2, ")");
      char *ins = sqlite3_str_finish(q2);
      sqlite3_exec(db, ins, NULL, NULL, NULL);
      sqlite3_free(ins);
    }
  }
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close(db);

  Btree *bt;
  Schema *s;
  char *err;
  CHECK_OK(load(path, &bt, &s, &err));
  if (!s) return;
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  int pos = 0, checked = 0, entries = 0;
  Index *idx;
  while ((idx = schema_map_next(&s->indexes, &pos)) != NULL) {
    if (!idx->root) continue;
    int unknown;
    KeyInfo *ki = schema_index_keyinfo(idx, &unknown);
    CHECK(ki && !unknown);
    BtCursor *cur;
    CHECK_OK(btree_cursor_open(bt, idx->root, 0, record_compare, ki, &cur));
    int done;
    uint8_t *prev = NULL;
    uint32_t nprev = 0;
    int bad = 0;
    for (int rc = btree_first(cur, &done); rc == SHALE_OK && !done; rc = btree_next(cur, &done)) {
      uint32_t n = btree_payload_size(cur);
      uint8_t *key = malloc(n ? n : 1);
      CHECK_OK(btree_payload_read(cur, 0, n, key));
      if (prev && record_compare(ki, prev, nprev, key, n) >= 0 && !bad) {
        bad = 1;
        test_fail(__FILE__, __LINE__, "index %s: keys out of order under its KeyInfo", idx->name);
      }
      free(prev);
      prev = key;
      nprev = n;
      entries++;
    }
    free(prev);
    CHECK(!ki->corrupt);
    btree_cursor_close(cur);
    shale_free(ki);
    checked++;
  }
  btree_commit(bt);
  CHECK(checked > 30 && entries > 3000);
  schema_free(s);
  btree_close(bt);
}

/* Every allocation of the CREATE-time builders failing in turn (after the
 * parse): SHALE_NOMEM or success, never a crash or a leak. */
TEST(schema_from_create_oom_sweep) {
  int n = ncorpus();
  int swept = 0;
  for (int i = 0; i < n; i++) {
    for (long k = 1; k < 10000; k++) {
      Schema *s = schema_new();
      CHECK(s != NULL);
      if (!s) return;
      UtilArena arena;
      util_arena_init(&arena, 0);
      char *msg = NULL;
      /* the tables the statement may refer to, built without faults */
      for (int j = 0; j < i; j++) {
        if (strncmp(corpus[j], "CREATE TABLE", 12) && strncmp(corpus[j], "CREATE VIEW", 11))
          continue;
        our_create(s, &arena, corpus[j], &msg);
        shale_free(msg);
        msg = NULL;
      }
      SqlStmt *st = NULL;
      CHECK_OK(sql_parse(&arena, corpus[i], -1, &st, NULL, &msg));
      util_fault_alloc(k, 1); /* (leaks: the harness checks the whole case) */
      int rc = SHALE_OK;
      if (st && st->kind == SQL_STMT_CREATE_TABLE) {
        Table *t;
        rc = compile_schema_table_from_create(s, st, corpus[i], &t, &msg);
      } else if (st && st->kind == SQL_STMT_CREATE_INDEX) {
        Index *x;
        rc = compile_schema_index_from_create(s, st, corpus[i], &x, &msg);
      } else if (st && st->kind == SQL_STMT_CREATE_TRIGGER) {
        Trigger *g;
        rc = compile_schema_trigger_from_create(s, st, corpus[i], &g, &msg);
      } else if (st && st->kind == SQL_STMT_CREATE_VIEW) {
        View *v;
        rc = compile_schema_view_from_create(s, st, corpus[i], &v, &msg);
      }
      int hit = util_fault_alloc_hits() > 0;
      util_fault_alloc(0, 0);
      if (rc != SHALE_OK && rc != SHALE_NOMEM)
        test_fail(__FILE__, __LINE__, "%s: fault %ld: rc %d %s", corpus[i], k, rc, msg ? msg : "");
      shale_free(msg);
      util_arena_free(&arena);
      schema_free(s);
      swept++;
      if (!hit) break;
    }
  }
  CHECK(swept > 100);
}

TEST(schema_too_many_columns) {
  for (int ncol = 1999; ncol <= 2001; ncol++) {
    size_t cap = 16 * (size_t)ncol + 64;
    char *sql = malloc(cap);
    int n = snprintf(sql, cap, "CREATE TABLE t(");
    for (int i = 0; i < ncol; i++)
      n += snprintf(sql + n, cap - (size_t)n, "%sc%d", i ? "," : "", i);
    snprintf(sql + n, cap - (size_t)n, ")");
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    int src = sqlite3_exec(db, sql, NULL, NULL, NULL);
    Schema *s = schema_new();
    UtilArena arena;
    util_arena_init(&arena, 0);
    char *msg = NULL;
    int rc = our_create(s, &arena, sql, &msg);
    CHECK_EQ(rc == SHALE_OK, src == SQLITE_OK);
    if (src != SQLITE_OK) CHECK_STR(msg, sqlite3_errmsg(db));
    shale_free(msg);
    util_arena_free(&arena);
    schema_free(s);
    sqlite3_close(db);
    free(sql);
  }
}

/* The name maps: many objects, lookups in any ASCII case, removal with
 * tombstones, re-adding, iteration sees each live object once. */
TEST(schema_maps_many_names) {
  Schema *s = schema_new();
  CHECK(s != NULL);
  if (!s) return;
  UtilArena *a = schema_arena(s);
  enum { N = 3000 };
  for (int i = 0; i < N; i++) {
    Table *t = util_arena_zalloc(a, sizeof *t);
    char name[32];
    snprintf(name, sizeof name, "Tab_%d", i);
    t->name = util_arena_strndup(a, name, strlen(name));
    t->rowid_alias = -1;
    CHECK_OK(schema_add_table(s, t));
  }
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, i % 2 ? "TAB_%d" : "tab_%d", i);
    Table *t = schema_find_table(s, name);
    if (!t || util_stricmp(t->name, name)) test_fail(__FILE__, __LINE__, "lookup %s", name);
  }
  for (int i = 0; i < N; i += 3) {
    char name[32];
    snprintf(name, sizeof name, "tAB_%d", i);
    schema_remove_table(s, name);
  }
  int live = 0, pos = 0;
  Table *t;
  while ((t = schema_map_next(&s->tables, &pos)) != NULL) live++;
  CHECK_EQ(live, N - (N + 2) / 3 + 2); /* + sqlite_schema under two names */
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "tab_%d", i);
    CHECK((schema_find_table(s, name) != NULL) == (i % 3 != 0));
  }
  /* re-add a removed name; replace a live one */
  Table *r = util_arena_zalloc(a, sizeof *r);
  r->name = "TAB_0";
  CHECK_OK(schema_add_table(s, r));
  CHECK(schema_find_table(s, "tab_0") == r);
  Table *r2 = util_arena_zalloc(a, sizeof *r2);
  r2->name = "tab_1";
  CHECK_OK(schema_add_table(s, r2));
  CHECK(schema_find_table(s, "TAB_1") == r2);
  CHECK(!schema_find_table(s, "tab_") && !schema_find_table(s, "") && !schema_find_index(s, "x"));
  /* non-ASCII bytes are compared exactly (no folding beyond ASCII) */
  Table *u = util_arena_zalloc(a, sizeof *u);
  u->name = "\xc3\xa9t\xc3\xa9";
  CHECK_OK(schema_add_table(s, u));
  CHECK(schema_find_table(s, "\xc3\xa9T\xc3\xa9") == u &&
        !schema_find_table(s, "\xc3\x89t\xc3\xa9"));
  schema_free(s);
}

/* ---- random CREATE statements against sqlite3 ---- */

static const char *pick(uint64_t *seed, const char *const *a, int n) {
  return a[test_rand(seed) % (uint64_t)n];
}
#define PICK(seed, arr) pick(seed, arr, (int)(sizeof arr / sizeof arr[0]))

/* A random CREATE TABLE t<k>(...) text in buf. */
static void random_table(uint64_t *seed, int k, char *buf, size_t cap) {
  static const char *const types[] = {"",       "INTEGER", "INT",    "integer",     "TEXT",
                                      "REAL",   "BLOB",    "ANY",    "NUMERIC",     "VARCHAR(9)",
                                      "DOUBLE", "foo",     "BIGINT", "\"INTEGER\"", "CLOB"};
  static const char *const ccons[] = {"",
                                      "",
                                      "",
                                      " NOT NULL",
                                      " UNIQUE",
                                      " PRIMARY KEY",
                                      " PRIMARY KEY DESC",
                                      " PRIMARY KEY AUTOINCREMENT",
                                      " COLLATE NOCASE",
                                      " COLLATE RTRIM",
                                      " DEFAULT 3",
                                      " DEFAULT 'x'",
                                      " CHECK (c0 > 0)",
                                      " AS (c0 + 1)",
                                      " AS (c0) STORED",
                                      " UNIQUE ON CONFLICT REPLACE",
                                      " REFERENCES p(x)",
                                      " DEFAULT (c0)",
                                      " COLLATE bogus",
                                      " PRIMARY KEY ON CONFLICT IGNORE"};
  static const char *const orders[] = {
      "", "", " DESC", " ASC", " COLLATE NOCASE", " COLLATE BINARY DESC"};
  int ncol = 1 + (int)(test_rand(seed) % 5);
  size_t n = (size_t)snprintf(buf, cap, "CREATE TABLE t%d(", k);
  for (int i = 0; i < ncol; i++) {
    int same = test_rand(seed) % 25 == 0 && i > 0; /* a duplicate column name now and then */
    n += (size_t)snprintf(buf + n, cap - n, "%sc%d %s", i ? ", " : "", same ? i - 1 : i,
                          PICK(seed, types));
    int ncons = (int)(test_rand(seed) % 3);
    for (int c = 0; c < ncons; c++)
      n += (size_t)snprintf(buf + n, cap - n, "%s", PICK(seed, ccons));
  }
  int ntc = (int)(test_rand(seed) % 3);
  for (int c = 0; c < ntc; c++) {
    int kind = (int)(test_rand(seed) % 4);
    int a = (int)(test_rand(seed) % (uint64_t)(ncol + 1)),
        b = (int)(test_rand(seed) % (uint64_t)ncol);
    if (kind <= 1)
      n += (size_t)snprintf(buf + n, cap - n, ", %s(c%d%s, c%d%s)", kind ? "UNIQUE" : "PRIMARY KEY",
                            a, PICK(seed, orders), b, PICK(seed, orders));
    else if (kind == 2)
      n += (size_t)snprintf(buf + n, cap - n, ", %s(c%d%s)",
                            test_rand(seed) % 2 ? "UNIQUE" : "PRIMARY KEY", a, PICK(seed, orders));
    else
      n += (size_t)snprintf(buf + n, cap - n, ", CHECK (c%d IS NOT NULL)", a);
  }
  static const char *const opts[] = {
      "", "", "", " WITHOUT ROWID", " STRICT", " WITHOUT ROWID, STRICT"};
  snprintf(buf + n, cap - n, ")%s", PICK(seed, opts));
}

static void random_index(uint64_t *seed, int k, int ntab, char *buf, size_t cap) {
  static const char *const terms[] = {"c0",
                                      "c1",
                                      "c2",
                                      "c0 DESC",
                                      "c1 COLLATE NOCASE",
                                      "c0 + c1",
                                      "lower(c0)",
                                      "c9",
                                      "c2 COLLATE RTRIM DESC",
                                      "'c1'",
                                      "(c0)"};
  static const char *const wheres[] = {
      "", "", "", " WHERE c0 > 0", " WHERE c1 IS NOT NULL", " WHERE c7 > 1"};
  int t = (int)(test_rand(seed) % (uint64_t)(ntab + 1));
  size_t n = (size_t)snprintf(buf, cap, "CREATE %sINDEX i%d ON t%d(%s",
                              test_rand(seed) % 3 ? "" : "UNIQUE ", k, t, PICK(seed, terms));
  if (test_rand(seed) % 2) n += (size_t)snprintf(buf + n, cap - n, ", %s", PICK(seed, terms));
  snprintf(buf + n, cap - n, ")%s", PICK(seed, wheres));
}

/* Errors the parser itself raises while parsing CREATE TABLE. */
static int parser_checked(const char *msg) {
  static const char *const m[] = {"has more than one primary key", "AUTOINCREMENT is only allowed",
                                  "cannot use DEFAULT on a generated column",
                                  "error in generated column",
                                  "generated columns cannot be part of the PRIMARY KEY"};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
    if (strstr(msg, m[i])) return 1;
  return 0;
}

TEST(schema_random_creates_match_sqlite) {
  const char *path = test_path("random.db");
  remove(path);
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  Schema *s = schema_new();
  UtilArena arena;
  util_arena_init(&arena, 0);
  uint64_t seed = test_seed() ^ 0x7ab1e;
  int rounds = test_long() ? 3000 : 400, ntab = 0, nidx = 0, agree_ok = 0, agree_err = 0;
  int nordered = 0;
  for (int r = 0; r < rounds; r++) {
    char sql[1024];
    if (r % 3 == 2)
      random_index(&seed, nidx, ntab, sql, sizeof sql);
    else
      random_table(&seed, ntab, sql, sizeof sql);
    int src = sqlite3_exec(db, sql, NULL, NULL, NULL);
    char *msg = NULL;
    int rc = our_create(s, &arena, sql, &msg);
    const char *want = src == SQLITE_OK ? NULL : sqlite3_errmsg(db);
    /* A statement with several errors: sqlite3 reports the first met in
     * the text; our parser (src/sql) makes some of these checks itself
     * while parsing, so they can come first. Those differences are counted,
     * not failed. Anything else must agree exactly. */
    int parser_first = msg && want && strcmp(msg, want) && parser_checked(msg) && rc == SHALE_ERROR;
    nordered += parser_first;
    if (!parser_first &&
        ((src == SQLITE_OK) != (rc == SHALE_OK) || (want && (!msg || strcmp(msg, want)))))
      test_fail(__FILE__, __LINE__, "%s: got %d \"%s\", sqlite3 \"%s\"", sql, rc, msg ? msg : "",
                want ? want : "ok");
    agree_ok += src == SQLITE_OK && rc == SHALE_OK;
    agree_err += src != SQLITE_OK && rc != SHALE_OK;
    if (src == SQLITE_OK && getenv("SHALE_TEST_VERBOSE")) fprintf(stderr, "%s\n", sql);
    if (src == SQLITE_OK) {
      if (r % 3 == 2)
        nidx++;
      else
        ntab++;
    }
    shale_free(msg);
  }
  sqlite3_close(db);
  util_arena_free(&arena);
  schema_free(s);
  CHECK(agree_ok > rounds / 10 && agree_err > rounds / 10);
  CHECK(nordered < rounds / 10);
  compare_all(path);
}

/* compile_schema_load inside the caller's transaction leaves it open; without one
 * it opens and ends its own. */
TEST(schema_load_transactions) {
  const char *path = test_path("txn.db");
  const char *one[] = {"CREATE TABLE t(a PRIMARY KEY, b)"};
  if (make_db(path, one, 1) != 0) return;
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE, &bt));
  Schema *s = NULL;
  char *err = NULL;
  CHECK_OK(compile_schema_load(bt, &s, &err));
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_NONE);
  schema_free(s);
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_OK(compile_schema_load(bt, &s, &err));
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_READ);
  CHECK(s && schema_find_index(s, "sqlite_autoindex_t_1") &&
        schema_find_index(s, "sqlite_autoindex_t_1")->root > 1);
  CHECK_OK(btree_commit(bt));
  schema_free(s);
  btree_close(bt);
}
