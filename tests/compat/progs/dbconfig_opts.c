/* dbconfig_opts.c -- what each sqlite3_db_config option of 3.40.1 does, shown
 * by its effect on SQL: TRUSTED_SCHEMA (functions not marked innocuous, and
 * direct-only ones, used from views, triggers, CHECK, DEFAULT, generated
 * columns and indexes; TEMP objects exempt), RESET_DATABASE (VACUUM empties
 * the database, also a corrupt one), TRIGGER_EQP (EXPLAIN QUERY PLAN lists
 * trigger programs), ENABLE_QPSG (Shale's plans never
 * depend on bound values), ENABLE_FTS3_TOKENIZER (kept; Shale has no
 * FTS3), LEGACY_FILE_FORMAT (schema format 1, DESC ignored in indexes) and
 * DEFENSIVE (journal_mode=OFF and schema_version writes become no-ops,
 * writable_schema has no effect).
 * Every statement's
 * outcome and rows are printed; tests/compat/test_compat.c requires the
 * same output from both libraries. */
#include "prog.h"

static int row_cb(void *arg, int n, char **v, char **names) {
  printf("   ");
  for (int i = 0; i < n; i++) printf(" %s", v[i] ? v[i] : "NULL");
  printf("\n");
  return 0;
}

/* Run sql, print it, its rows and its outcome. */
static void run(sqlite3 *db, const char *sql) {
  char *err = NULL;
  printf("> %s\n", sql);
  int rc = sqlite3_exec(db, sql, row_cb, NULL, &err);
  if (rc) printf("  rc=%d %s\n", rc, err ? err : "");
  sqlite3_free(err);
}

static void opt(sqlite3 *db, int op, int onoff) {
  int v = -1;
  int rc = sqlite3_db_config(db, op, onoff, &v);
  printf("db_config %d %d -> rc=%d now=%d\n", op, onoff, rc, v);
}

static void f_plain(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_int64(c, sqlite3_value_int64(v[0]) * 2);
}

static sqlite3 *open_mem(void) {
  sqlite3 *db = NULL;
  sqlite3_open(":memory:", &db);
  const int det = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  sqlite3_create_function(db, "unsafe2", 1, det, NULL, f_plain, NULL, NULL);
  sqlite3_create_function(db, "safe2", 1, det | SQLITE_INNOCUOUS, NULL, f_plain, NULL, NULL);
  sqlite3_create_function(db, "direct2", 1, det | SQLITE_DIRECTONLY, NULL, f_plain, NULL, NULL);
  sqlite3_create_function(db, "nondet2", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, f_plain, NULL,
                          NULL);
  return db;
}

/* The statements each function goes through: "%s" is the function. */
static const char *const trusted_steps[] = {
    "CREATE TABLE t(a, b)",
    "INSERT INTO t VALUES(1, 2)",
    "CREATE VIEW v AS SELECT %s(a) FROM t",
    "SELECT * FROM v",
    "CREATE TEMP VIEW tv AS SELECT %s(a) FROM t",
    "SELECT * FROM tv",
    "CREATE TABLE log(x)",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES(%s(new.a)); END",
    "INSERT INTO t VALUES(3, 4)",
    "DROP TRIGGER IF EXISTS tr",
    "CREATE TEMP TRIGGER ttr AFTER INSERT ON t BEGIN INSERT INTO log VALUES(%s(new.a)); END",
    "INSERT INTO t VALUES(5, 6)",
    "SELECT * FROM log",
    "CREATE TABLE c1(a CHECK (%s(a) > 0))",
    "INSERT INTO c1 VALUES(1)",
    "CREATE TABLE d1(a, b DEFAULT (%s(3)))",
    "INSERT INTO d1(a) VALUES(1)",
    "SELECT * FROM d1",
    "CREATE TABLE g1(a, b AS (%s(a)))",
    "INSERT INTO g1(a) VALUES(4)",
    "SELECT * FROM g1",
    "CREATE INDEX ix ON t(%s(a))",
    "INSERT INTO t VALUES(7, 8)",
    "CREATE INDEX px ON t(b) WHERE %s(a) > 2",
    "SELECT %s(a) FROM t ORDER BY 1",
    "PRAGMA trusted_schema",
};

static void trusted(void) {
  static const char *const fn[] = {"unsafe2", "safe2", "direct2", "nondet2"};
  for (int trust = 1; trust >= 0; trust--) {
    for (int k = 0; k < 4; k++) {
      sqlite3 *db = open_mem();
      printf("-- trusted_schema %d, %s\n", trust, fn[k]);
      opt(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, trust);
      for (size_t i = 0; i < sizeof trusted_steps / sizeof trusted_steps[0]; i++) {
        char sql[400];
        snprintf(sql, sizeof sql, trusted_steps[i], fn[k]);
        run(db, sql);
      }
      sqlite3_close(db);
    }
  }
  sqlite3 *db = open_mem();
  run(db, "PRAGMA trusted_schema");
  run(db, "PRAGMA trusted_schema = 0");
  opt(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1);
  run(db, "PRAGMA trusted_schema");
  run(db, "CREATE TABLE t(a); CREATE VIEW v AS SELECT unsafe2(a) FROM t");
  run(db, "PRAGMA trusted_schema = 1");
  run(db, "CREATE VIEW v AS SELECT unsafe2(a) FROM t");
  run(db, "PRAGMA trusted_schema = 0");
  run(db, "SELECT * FROM v");
  sqlite3_close(db);
}

/* A file database: its schema is read back from the file by a second
 * connection, which is where schema objects get checked again. */
static sqlite3 *open_udf(const char *path, int trust) {
  sqlite3 *a = NULL;
  sqlite3_open(path, &a);
  sqlite3_create_function(a, "unsafe2", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, f_plain, NULL,
                          NULL);
  if (trust >= 0) opt(a, SQLITE_DBCONFIG_TRUSTED_SCHEMA, trust);
  return a;
}

/* A new file at path holding the schema objects obj (made with unsafe2
 * registered, trusted) and one row in u. */
static void make_file(const char *path, const char *obj) {
  remove(path);
  sqlite3 *a = open_udf(path, -1);
  run(a, obj);
  run(a, "INSERT INTO u(a) VALUES(1)");
  sqlite3_close(a);
}

/* File databases: the schema is read back from the file by a new
 * connection, which is where schema objects get checked again; one file
 * per kind of object (a failing one makes the whole schema unusable). */
static void trusted_reload(const char *dir) {
  static const char *const objs[] = {
      "CREATE TABLE u(a CHECK (unsafe2(a) > 0), b)",
      "CREATE TABLE u(a, b DEFAULT (unsafe2(2)))",
      "CREATE TABLE u(a, b AS (unsafe2(a)))",
      "CREATE TABLE u(a, b); CREATE INDEX ux ON u(unsafe2(a))",
      "CREATE TABLE u(a, b); CREATE INDEX ux ON u(a) WHERE unsafe2(a) > 0",
      "CREATE TABLE u(a, b); CREATE VIEW v AS SELECT unsafe2(a) FROM u",
      "CREATE TABLE u(a, b); CREATE TABLE log(x);"
      "CREATE TRIGGER tr AFTER INSERT ON u BEGIN INSERT INTO log VALUES(unsafe2(new.a)); END",
  };
  char path[512];
  snprintf(path, sizeof path, "%s/trust.db", dir);
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
    printf("-- read back with trusted_schema 0: %s\n", objs[i]);
    make_file(path, objs[i]);
    sqlite3 *a = open_udf(path, 0);
    run(a, "SELECT count(*) FROM sqlite_schema");
    run(a, "INSERT INTO u(a) VALUES(3)");
    run(a, "UPDATE u SET a = 5 WHERE a = 3");
    run(a, "SELECT a FROM u WHERE unsafe2(a) > 0 ORDER BY a");
    run(a, "DELETE FROM u WHERE a = 5");
    if (strstr(objs[i], "VIEW")) run(a, "SELECT * FROM v");
    opt(a, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 1);
    run(a, "SELECT * FROM u");
    sqlite3_close(a);
  }
  remove(path);
}

/* Schema expressions naming a function the reading connection does not
 * have: "unknown function: g()" for DEFAULT, CHECK, generated columns and
 * indexes, "no such function: g" for views and triggers, each at prepare. */
static void unknown_functions(const char *dir) {
  static const char *const objs[] = {
      "CREATE TABLE u(a CHECK (unsafe2(a) > 0))",
      "CREATE TABLE u(a, b DEFAULT (unsafe2(2)))",
      "CREATE TABLE u(a, b AS (unsafe2(a)))",
      "CREATE TABLE u(a, b AS (unsafe2(a)) STORED)",
      "CREATE TABLE u(a); CREATE INDEX x ON u(unsafe2(a))",
      "CREATE TABLE u(a); CREATE INDEX x ON u(a) WHERE unsafe2(a) > 0",
      "CREATE TABLE u(a); CREATE VIEW w AS SELECT unsafe2(a) FROM u",
      "CREATE TABLE u(a); CREATE TABLE l(x);"
      "CREATE TRIGGER tr AFTER INSERT ON u BEGIN INSERT INTO l VALUES(unsafe2(new.a)); END",
  };
  char path[512];
  snprintf(path, sizeof path, "%s/unknown.db", dir);
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
    printf("-- read back without the function: %s\n", objs[i]);
    make_file(path, objs[i]);
    sqlite3 *db = NULL;
    sqlite3_open(path, &db);
    run(db, "SELECT count(*) FROM sqlite_schema");
    run(db, "INSERT INTO u(a) VALUES(3)");
    run(db, "SELECT * FROM u");
    run(db, "UPDATE u SET a = 4");
    run(db, "DELETE FROM u");
    if (strstr(objs[i], "VIEW")) run(db, "SELECT * FROM w");
    sqlite3_close(db);
  }
  remove(path);
}

static void reset_database(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/reset.db", dir);
  remove(path);
  sqlite3 *db = NULL;
  sqlite3_open(path, &db);
  printf("-- reset_database\n");
  run(db,
      "PRAGMA page_size=1024; CREATE TABLE t(a); CREATE INDEX i ON t(a);"
      "INSERT INTO t VALUES(1),(2),(3); PRAGMA user_version=7");
  run(db, "VACUUM");
  run(db, "SELECT count(*) FROM t; PRAGMA page_count");
  opt(db, SQLITE_DBCONFIG_RESET_DATABASE, 1);
  run(db, "VACUUM");
  opt(db, SQLITE_DBCONFIG_RESET_DATABASE, 0);
  run(db, "SELECT name FROM sqlite_schema");
  run(db, "PRAGMA page_count; PRAGMA page_size; PRAGMA user_version; PRAGMA integrity_check");
  run(db, "CREATE TABLE u(x); INSERT INTO u VALUES(9); SELECT * FROM u");
  sqlite3_close(db);
  sqlite3_open(path, &db);
  run(db, "SELECT name FROM sqlite_schema; PRAGMA integrity_check");
  sqlite3_close(db);
  /* a corrupt database (garbage over its schema page and a table's root) */
  remove(path);
  sqlite3_open(path, &db);
  run(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1)");
  sqlite3_close(db);
  FILE *f = fopen(path, "r+b");
  if (f) {
    unsigned char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    fseek(f, 100, SEEK_SET);
    fwrite(junk, 1, 4096 - 100, f);
    fwrite(junk, 1, 4096, f);
    fclose(f);
  }
  sqlite3_open(path, &db);
  printf("select from the corrupt file: rc=%d\n",
         sqlite3_exec(db, "SELECT * FROM t", NULL, NULL, NULL));
  opt(db, SQLITE_DBCONFIG_RESET_DATABASE, 1);
  run(db, "VACUUM");
  opt(db, SQLITE_DBCONFIG_RESET_DATABASE, 0);
  run(db, "SELECT name FROM sqlite_schema; PRAGMA integrity_check; PRAGMA page_count");
  run(db, "CREATE TABLE u(x); INSERT INTO u VALUES(9); SELECT * FROM u");
  sqlite3_close(db);
  remove(path);
}

/* EXPLAIN QUERY PLAN rows as a tree shape without SQLite's ids (which are
 * its program addresses): each row's detail and whether its parent is the
 * top (0), an earlier row, or no row at all. */
static void eqp(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  printf("> %s\n", sql);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL)) {
    printf("  rc %s\n", sqlite3_errmsg(db));
    return;
  }
  int ids[64], n = 0;
  while (sqlite3_step(st) == SQLITE_ROW && n < 64) {
    int id = sqlite3_column_int(st, 0), parent = sqlite3_column_int(st, 1);
    const char *where = parent == 0 ? "top" : "none";
    for (int i = 0; i < n; i++)
      if (ids[i] == parent) where = "under";
    ids[n++] = id;
    printf("    [%s] %s\n", where, (const char *)sqlite3_column_text(st, 3));
  }
  sqlite3_finalize(st);
}

static void trigger_eqp(void) {
  for (int on = 0; on <= 1; on++) {
    sqlite3 *db = open_mem();
    printf("-- trigger_eqp %d\n", on);
    opt(db, SQLITE_DBCONFIG_TRIGGER_EQP, on);
    run(db,
        "CREATE TABLE t(a, b); CREATE TABLE log(x); CREATE INDEX lx ON log(x);"
        "CREATE TABLE log2(y);"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
        "  UPDATE log SET x = 3 WHERE rowid > 1; "
        "  DELETE FROM log WHERE x = 7; INSERT INTO log2 SELECT b FROM t; END;"
        "CREATE TRIGGER tr0 BEFORE INSERT ON t BEGIN INSERT INTO log2 SELECT a FROM t; END;"
        "CREATE TRIGGER tl AFTER UPDATE ON log BEGIN INSERT INTO log2 SELECT a FROM t; END");
    eqp(db, "EXPLAIN QUERY PLAN INSERT INTO t VALUES(1, 2)");
    eqp(db, "EXPLAIN QUERY PLAN INSERT INTO t SELECT b, a FROM t WHERE a > 3");
    eqp(db, "EXPLAIN QUERY PLAN UPDATE log SET x = 2");
    eqp(db, "EXPLAIN QUERY PLAN DELETE FROM t");
    run(db, "INSERT INTO t VALUES(1, 2)");
    sqlite3_close(db);
  }
}

static void others(void) {
  sqlite3 *db = open_mem();
  printf("-- qpsg, fts3_tokenizer\n");
  opt(db, SQLITE_DBCONFIG_ENABLE_QPSG, 1);
  run(db, "CREATE TABLE t(a, b); CREATE INDEX ta ON t(a); INSERT INTO t VALUES(1,2),(3,4)");
  run(db, "SELECT * FROM t WHERE a = 3");
  opt(db, SQLITE_DBCONFIG_ENABLE_QPSG, -1);
  opt(db, SQLITE_DBCONFIG_ENABLE_QPSG, 0);
  opt(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, -1); /* on: Debian's default */
  opt(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 1);
  opt(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, -1);
  opt(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0);
  sqlite3_close(db);
}

/* DEFENSIVE on a file and in memory: journal_mode=OFF keeps the mode (in
 * every mode, qualified too), schema_version=N does nothing, user_version
 * still writes, writable_schema is set but the schema table stays read-only. */
static void defensive(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/defensive.db", dir);
  remove(path);
  for (int mem = 0; mem < 2; mem++) {
    sqlite3 *db = NULL;
    if (sqlite3_open(mem ? ":memory:" : path, &db) != SQLITE_OK) return;
    printf("-- defensive %s\n", mem ? "memory" : "file");
    opt(db, SQLITE_DBCONFIG_DEFENSIVE, 1);
    run(db, "CREATE TABLE t(a)");
    run(db, "PRAGMA journal_mode=OFF");
    run(db, "PRAGMA journal_mode=MEMORY");
    run(db, "PRAGMA journal_mode=OFF");
    if (!mem) {
      run(db, "PRAGMA journal_mode=WAL");
      run(db, "PRAGMA main.journal_mode=OFF");
      run(db, "PRAGMA journal_mode=DELETE");
    }
    run(db, "PRAGMA schema_version");
    run(db, "PRAGMA schema_version=100");
    run(db, "PRAGMA schema_version");
    run(db, "PRAGMA user_version=7; PRAGMA user_version");
    run(db, "PRAGMA writable_schema=ON; PRAGMA writable_schema");
    run(db, "UPDATE sqlite_master SET sql='x' WHERE name='t'");
    opt(db, SQLITE_DBCONFIG_DEFENSIVE, 0);
    run(db, "PRAGMA journal_mode=OFF");
    run(db, "PRAGMA schema_version=100; PRAGMA schema_version");
    sqlite3_close(db);
  }
}

/* The schema format number of a file (header offset 44). */
static int file_format(const char *path) {
  unsigned char h[48];
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t n = fread(h, 1, sizeof h, f);
  fclose(f);
  return n == sizeof h ? h[44] << 24 | h[45] << 16 | h[46] << 8 | h[47] : -1;
}

/* LEGACY_FILE_FORMAT: new files get schema format 1, whose indexes ignore
 * DESC (also when such a file is opened again without the option); a file
 * made without it keeps format 4 and DESC. */
static void legacy_format(const char *dir) {
  printf("-- legacy_file_format\n");
  char path[600];
  for (int legacy = 1; legacy >= 0; legacy--) {
    snprintf(path, sizeof path, "%s/legacy%d.db", dir, legacy);
    remove(path);
    sqlite3 *db = NULL;
    sqlite3_open(path, &db);
    opt(db, SQLITE_DBCONFIG_LEGACY_FILE_FORMAT, -1);
    opt(db, SQLITE_DBCONFIG_LEGACY_FILE_FORMAT, legacy);
    run(db, "PRAGMA user_version = 7");
    run(db,
        "CREATE TABLE t(a, b); CREATE INDEX ta ON t(a DESC, b); "
        "INSERT INTO t VALUES (1, 0), (2, 1), (3, 2)");
    run(db, "SELECT name, desc FROM pragma_index_xinfo('ta')");
    run(db, "SELECT a FROM t ORDER BY a DESC");
    sqlite3_close(db);
    printf("format: %d\n", file_format(path));
    sqlite3_open(path, &db); /* the option is off: the file decides */
    run(db, "CREATE INDEX tb ON t(b DESC)");
    run(db, "SELECT name, desc FROM pragma_index_xinfo('tb') WHERE cid >= 0");
    run(db, "SELECT b FROM t ORDER BY b DESC");
    run(db, "PRAGMA integrity_check");
    sqlite3_close(db);
    remove(path);
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "dbconfig_opts.tmp";
  char mk[600];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
  if (system(mk) != 0) return 1;
  trusted();
  trusted_reload(dir);
  unknown_functions(dir);
  reset_database(dir);
  trigger_eqp();
  others();
  legacy_format(dir);
  defensive(dir);
  return 0;
}
