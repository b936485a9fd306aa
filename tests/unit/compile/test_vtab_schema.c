/*
 * test_vtab_schema.c -- database files holding virtual tables whose module
 * Shale does not have (FTS5, FTS4, R-Tree, an unknown module), made by the
 * reference SQLite. Shale must load the schema (the virtual table and its
 * shadow tables, which are ordinary tables), run everything on the plain
 * tables, and answer every use of the virtual table as SQLite does when the
 * module is missing: the reference connection on a copy of the same file
 * drops its modules (sqlite3_drop_modules; Shale's connection drops its
 * built-in R-Tree the same way), so both engines face the same
 * file without the module and are compared statement by statement
 * (dml_harness.h).
 *
 * Invariants:
 *  1. Each file is written by the reference alone; Shale and the
 *     module-less reference then work on byte-identical copies.
 *  2. Every statement of the scripts runs on both engines, in order.
 */
#include "dml_harness.h"

#define SCRIPT(p, ...)                                   \
  do {                                                   \
    static const char *const s_[] = {__VA_ARGS__, NULL}; \
    dh_script(p, s_);                                    \
  } while (0)

/* Copy file a to b (both paths in the scratch folder). */
static void copy_file(const char *a, const char *b) {
  FILE *in = fopen(a, "rb"), *out = fopen(b, "wb");
  CHECK(in && out);
  char buf[8192];
  size_t n;
  while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  if (in) fclose(in);
  if (out) fclose(out);
}

/* A file made by the reference with `vtab_sql` (and plain tables around it);
 * both engines opened on copies of it, the reference without modules. */
static int open_with_vtab(DhPair *p, const char *name, const char *vtab_sql, int writable) {
  if (!dh_open(p, name)) return 0;
  dh_close(p);
  sqlite3 *mk = NULL;
  CHECK_OK(sqlite3_open(p->qpath, &mk));
  char *err = NULL;
  const char *plain =
      "CREATE TABLE p(a INTEGER PRIMARY KEY, b TEXT UNIQUE);"
      "INSERT INTO p VALUES(1, 'one'), (2, 'two'), (3, 'three');"
      "CREATE INDEX pb ON p(b DESC);"
      "CREATE VIEW pv AS SELECT a, b FROM p WHERE a > 1;"
      "CREATE TABLE log(x);"
      "CREATE TRIGGER pt AFTER INSERT ON p BEGIN INSERT INTO log VALUES(new.a); END;";
  if (sqlite3_exec(mk, plain, NULL, NULL, &err) != SQLITE_OK)
    test_fail(__FILE__, __LINE__, "reference: %s", err);
  sqlite3_free(err);
  err = NULL;
  if (writable) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "PRAGMA writable_schema=ON;"
             "INSERT INTO sqlite_schema VALUES('table', 'f', 'f', 0, '%s');"
             "PRAGMA writable_schema=OFF;",
             vtab_sql);
    if (sqlite3_exec(mk, sql, NULL, NULL, &err) != SQLITE_OK)
      test_fail(__FILE__, __LINE__, "reference: %s", err);
  } else if (sqlite3_exec(mk, vtab_sql, NULL, NULL, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "reference: %s: %s", vtab_sql, err);
  }
  sqlite3_free(err);
  err = NULL;
  if (!writable && sqlite3_exec(mk, "INSERT INTO f VALUES(1, 2, 3)", NULL, NULL, NULL) != SQLITE_OK)
    sqlite3_exec(mk, "INSERT INTO f VALUES('hello world')", NULL, NULL, NULL);
  sqlite3_close(mk);
  copy_file(p->qpath, p->spath);
  CHECK_OK(shale_open(p->spath, &p->s));
  CHECK_OK(sqlite3_open(p->qpath, &p->q));
  shale_extended_result_codes(p->s, 1);
  sqlite3_extended_result_codes(p->q, 1);
  static const char *const keep[] = {"json_each", "json_tree", NULL};
  CHECK_OK(sqlite3_drop_modules(p->q, (const char **)keep));
  CHECK_OK(shale_drop_modules(p->s, (const char **)keep)); /* Shale's built-in rtree too */
  return 1;
}

/* What a file with the virtual table f must do on both engines. */
static void vtab_script(DhPair *p) {
  SCRIPT(
      p, "SELECT * FROM p ORDER BY a", "SELECT * FROM pv",
      "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid",
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      "INSERT INTO p VALUES(4, 'four')", "SELECT * FROM log", "SELECT * FROM f",
      "SELECT * FROM main.f", "SELECT rowid FROM f WHERE f MATCH 'x'", "SELECT count(*) FROM p, f",
      "SELECT (SELECT 1 FROM f)", "SELECT f.x FROM p", "INSERT INTO f VALUES(1)",
      "INSERT INTO f SELECT b FROM p", "UPDATE f SET x = 1", "DELETE FROM f",
      "PRAGMA table_info(f)", "PRAGMA table_xinfo(f)", "PRAGMA main.table_info(f)",
      "SELECT * FROM pragma_table_info('f')", "SELECT count(*) FROM pragma_table_info('p')",
      "PRAGMA index_list(f)", "PRAGMA index_info(f)", "PRAGMA foreign_key_list(f)",
      "PRAGMA foreign_key_check", "PRAGMA table_list", "PRAGMA integrity_check",
      "PRAGMA quick_check", "PRAGMA integrity_check(f)", "CREATE INDEX fi ON f(x)",
      "ALTER TABLE f ADD COLUMN z", "ALTER TABLE f RENAME TO g",
      "ALTER TABLE f RENAME COLUMN x TO y", "ALTER TABLE f DROP COLUMN x", "CREATE TABLE f(z)",
      "CREATE TABLE IF NOT EXISTS f(z)", "CREATE VIEW f AS SELECT 1", "CREATE INDEX f ON p(b)",
      "CREATE VIRTUAL TABLE f USING fts5(a)", "CREATE VIRTUAL TABLE IF NOT EXISTS f USING fts5(a)",
      "CREATE VIRTUAL TABLE g USING fts5(a)",
      "CREATE TRIGGER ft AFTER INSERT ON f BEGIN SELECT 1; END",
      "CREATE TRIGGER pf AFTER DELETE ON p BEGIN DELETE FROM f; END", "DELETE FROM p WHERE a = 4",
      "DROP TRIGGER pf", "CREATE VIEW fv AS SELECT * FROM f", "SELECT * FROM fv", "DROP VIEW fv",
      "DROP VIEW f", "DROP INDEX f", "DROP TABLE f", "DROP TABLE IF EXISTS f", "REINDEX", "ANALYZE",
      "SELECT * FROM sqlite_stat1 ORDER BY 1, 2", "ANALYZE f", "ALTER TABLE p RENAME TO p2",
      "ALTER TABLE p2 RENAME COLUMN b TO bb", "ALTER TABLE p2 ADD COLUMN c DEFAULT 7",
      "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid", "VACUUM",
      "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid",
      "SELECT * FROM p2 ORDER BY a", "SELECT * FROM f", "PRAGMA integrity_check",
      "CREATE TEMP TRIGGER tt AFTER INSERT ON f BEGIN SELECT 1; END", "SELECT * FROM temp.f",
      "SELECT * FROM temp.sqlite_schema");
}

TEST(vtab_unknown_module) {
  DhPair p;
  if (!open_with_vtab(&p, "vt_unknown.db", "CREATE VIRTUAL TABLE f USING nosuchmod(x, y)", 1))
    return;
  vtab_script(&p);
  shale_blob *sb = NULL;
  sqlite3_blob *qb = NULL;
  CHECK(shale_blob_open(p.s, "main", "f", "x", 1, 0, &sb) == SHALE_ERROR);
  CHECK(sqlite3_blob_open(p.q, "main", "f", "x", 1, 0, &qb) == SQLITE_ERROR);
  CHECK_STR(shale_errmsg(p.s), sqlite3_errmsg(p.q));
  dh_close(&p);
}

TEST(vtab_fts5) {
  DhPair p;
  if (!open_with_vtab(&p, "vt_fts5.db", "CREATE VIRTUAL TABLE f USING fts5(x)", 0)) return;
  vtab_script(&p);
  SCRIPT(&p, "SELECT * FROM f_data ORDER BY id", "SELECT * FROM f_config",
         "SELECT * FROM f_content", "PRAGMA table_info(f_idx)",
         "INSERT INTO f_docsize VALUES(9, x'00')", "SELECT * FROM f_docsize ORDER BY id");
  dh_same_files(&p); /* read by the reference with its modules */
  dh_close(&p);
}

TEST(vtab_fts4) {
  DhPair p;
  if (!open_with_vtab(&p, "vt_fts4.db", "CREATE VIRTUAL TABLE f USING fts4(x)", 0)) return;
  vtab_script(&p);
  SCRIPT(&p, "SELECT * FROM f_content", "SELECT * FROM f_segdir", "PRAGMA index_list(f_segdir)",
         "SELECT * FROM f_stat");
  dh_close(&p);
}

TEST(vtab_rtree) {
  DhPair p;
  if (!open_with_vtab(&p, "vt_rtree.db", "CREATE VIRTUAL TABLE f USING rtree(id, x0, x1)", 0))
    return;
  vtab_script(&p);
  SCRIPT(&p, "SELECT * FROM f_rowid", "SELECT nodeno, length(data) FROM f_node",
         "SELECT * FROM f_parent");
  dh_close(&p);
}

/* The file attached to a connection of each engine. */
TEST(vtab_attached) {
  DhPair p;
  if (!open_with_vtab(&p, "vt_att.db", "CREATE VIRTUAL TABLE f USING fts5(x)", 0)) return;
  char att[1200];
  snprintf(att, sizeof att, "ATTACH '%s' AS aux", p.spath);
  shale_close(p.s);
  CHECK_OK(shale_open(":memory:", &p.s));
  DhOut o;
  dh_run_shale(p.s, att, &o);
  CHECK(o.rc == 0);
  free(o.rows.z);
  snprintf(att, sizeof att, "ATTACH '%s' AS aux", p.qpath);
  sqlite3_close(p.q);
  CHECK_OK(sqlite3_open(":memory:", &p.q));
  static const char *const keep[] = {NULL};
  CHECK_OK(sqlite3_drop_modules(p.q, (const char **)keep));
  CHECK_OK(shale_drop_modules(p.s, (const char **)keep));
  CHECK_OK(sqlite3_exec(p.q, att, NULL, NULL, NULL));
  SCRIPT(&p, "SELECT * FROM aux.p ORDER BY a", "SELECT * FROM aux.f", "SELECT * FROM f",
         "PRAGMA aux.table_info(f)", "INSERT INTO aux.f VALUES(1)", "DROP TABLE aux.f",
         "SELECT name FROM aux.sqlite_schema ORDER BY rowid");
  dh_close(&p);
}
