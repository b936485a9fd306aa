/* uri.c -- file names and URIs, printed so both libraries can be compared
 * (tests/compat/test_compat.c): SQLITE_CONFIG_URI, SQLITE_OPEN_URI, file:
 * URIs (authority, percent-decoding, mode=ro|rw|rwc|memory, cache=,
 * vfs=, immutable=, unknown parameters), the errors and handles of failed
 * opens, read-only opens creating nothing, shared-cache memory databases
 * (by cache=shared and by sqlite3_enable_shared_cache),
 * the filename objects of sqlite3_db_filename (main, temp, attached) and
 * sqlite3_create_filename, read by uri_parameter/boolean/int64/key and
 * filename_database/journal/wal. Paths are printed relative to the current
 * directory. Runs in a scratch directory it makes (uri.tmp). */
#include <sys/stat.h>
#include <unistd.h>

#include "prog.h"

static char cwd[4096];

static const char *rel(const char *p) {
  if (!p) return "(null)";
  size_t n = strlen(cwd);
  return strncmp(p, cwd, n) == 0 && p[n] == '/' ? p + n + 1 : p;
}

static int exists(const char *f) { return access(f, F_OK) == 0; }

static sqlite3 *open_one(const char *name, int flags) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open_v2(name, &db, flags, NULL);
  printf("open %s flags %#x: rc %d ext %d msg \"%s\"\n", name, flags, rc,
         sqlite3_extended_errcode(db), sqlite3_errmsg(db));
  if (rc != SQLITE_OK) { /* the handle keeps the error; statements on it are misuse */
    sqlite3_stmt *st = NULL;
    printf("  prepare on it: %d, msg \"%s\"\n", sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL),
           sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

static void show_name(sqlite3 *db, const char *schema) {
  const char *f = sqlite3_db_filename(db, schema);
  printf("  db_filename(%s) = \"%s\"", schema, rel(f));
  if (f) {
    printf(" journal \"%s\" wal \"%s\"", rel(sqlite3_filename_journal(f)),
           rel(sqlite3_filename_wal(f)));
    for (int i = 0; sqlite3_uri_key(f, i); i++)
      printf(" [%s=%s]", sqlite3_uri_key(f, i), sqlite3_uri_parameter(f, sqlite3_uri_key(f, i)));
    printf(" db \"%s\"", rel(sqlite3_filename_database(f)));
  }
  printf(" readonly %d\n", sqlite3_db_readonly(db, schema));
}

static void sql(sqlite3 *db, const char *q) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
  printf("  %s ->", q);
  if (rc) {
    printf(" prepare %d %s\n", rc, sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(st); i++) printf(" %s", sqlite3_column_text(st, i));
  if (rc != SQLITE_DONE) printf(" step %d %s", sqlite3_extended_errcode(db), sqlite3_errmsg(db));
  printf("\n");
  sqlite3_finalize(st);
}

int main(void) {
  mkdir("uri.tmp", 0777);
  if (chdir("uri.tmp") || !getcwd(cwd, sizeof cwd)) return 1;
  static const char *const files[] = {"plain.db",     "file:plain.db", "ro.db",  "rw.db", "rwc.db",
                                      "two words.db", "att.db",        "imm.db", "q.db"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) remove(files[i]);
  const int RWC = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

  /* SQLITE_OPEN_URI, and a file: name with URIs on (SQLITE_USE_URI, as
   * Debian builds SQLite; uri_off.c has them off) */
  sqlite3 *db = open_one("file:plain.db?a=1", RWC | SQLITE_OPEN_URI);
  show_name(db, "main");
  sqlite3_close(db);

  /* modes */
  open_one("file:ro.db?mode=ro", RWC);
  printf("  ro.db made: %d\n", exists("ro.db"));
  open_one("file:rw.db?mode=rw", RWC);
  printf("  rw.db made: %d\n", exists("rw.db"));
  db = open_one("file:rwc.db?mode=rwc&cache=private", RWC);
  printf("  rwc.db made: %d\n", exists("rwc.db"));
  sql(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1)");
  sql(db, "INSERT INTO t VALUES(1)");
  sqlite3_close(db);
  db = open_one("file:rwc.db?mode=ro", RWC);
  sql(db, "SELECT count(*) FROM t");
  sql(db, "INSERT INTO t VALUES(2)");
  show_name(db, "main");
  sqlite3_close(db);
  open_one("file:rwc.db?mode=rwc", SQLITE_OPEN_READONLY);
  open_one("file:rwc.db?mode=rw", SQLITE_OPEN_READONLY);
  db = open_one("file:rwc.db?mode=ro", SQLITE_OPEN_READONLY);
  sqlite3_close(db);
  open_one("file:rwc.db?mode=bogus", RWC);
  open_one("file:rwc.db?cache=bogus", RWC);
  open_one("file:rwc.db?vfs=nosuchvfs", RWC);
  db = open_one("file:rwc.db?vfs=unix", RWC);
  sqlite3_close(db);
  open_one("file://otherhost/x.db", RWC);
  db = open_one("file://localhost/rwc.db", RWC); /* an absolute path: /rwc.db */
  sqlite3_close(db);

  /* percent-decoding, parameters, fragments */
  db = open_one("file:two%20words.db?Key=Va%6Cue&flag=yes&n=0x10&neg=-7&e=&dup=1&dup=2#frag", RWC);
  printf("  decoded file made: %d\n", exists("two words.db"));
  show_name(db, "main");
  const char *f = sqlite3_db_filename(db, "main");
  printf("  boolean flag %d missing %d e %d | int64 n %lld neg %lld missing %lld\n",
         sqlite3_uri_boolean(f, "flag", 0), sqlite3_uri_boolean(f, "nope", 1),
         sqlite3_uri_boolean(f, "e", 1), sqlite3_uri_int64(f, "n", 5),
         sqlite3_uri_int64(f, "neg", 5), sqlite3_uri_int64(f, "nope", 5));
  printf("  dup %s key9 %s\n", sqlite3_uri_parameter(f, "dup"),
         sqlite3_uri_key(f, 9) ? sqlite3_uri_key(f, 9) : "(null)");
  sqlite3_close(db);

  /* immutable: no writes */
  db = open_one("imm.db", RWC);
  sql(db, "CREATE TABLE t(a)");
  sqlite3_close(db);
  db = open_one("file:imm.db?immutable=1", RWC);
  sql(db, "SELECT count(*) FROM t");
  sql(db, "INSERT INTO t VALUES(1)");
  show_name(db, "main");
  sqlite3_close(db);

  /* shared-cache memory databases: one per name while a connection has it */
  sqlite3 *a = open_one("file:mem1?mode=memory&cache=shared", RWC);
  sqlite3 *b = open_one("file:mem1?mode=memory&cache=shared", RWC);
  sqlite3 *c = open_one("file:mem2?mode=memory&cache=shared", RWC);
  sqlite3 *d = open_one("file:mem1?mode=memory", RWC);
  sqlite3 *e = open_one("file::memory:?cache=shared", RWC);
  sqlite3 *g = open_one("file::memory:?cache=shared", RWC);
  sql(a, "CREATE TABLE s(x); INSERT INTO s VALUES('shared')");
  sql(b, "SELECT x FROM s");
  sql(c, "SELECT x FROM s");
  sql(d, "SELECT x FROM s");
  sql(e, "CREATE TABLE m(y); INSERT INTO m VALUES('anon shared')");
  sql(g, "SELECT y FROM m");
  show_name(a, "main");
  sqlite3_close(a);
  sql(b, "SELECT x FROM s");
  sqlite3_close(b);
  a = open_one("file:mem1?mode=memory&cache=shared", RWC);
  sql(a, "SELECT x FROM s"); /* the last connection closed: gone */
  sqlite3_close(a);
  sqlite3_close(c);
  sqlite3_close(d);
  sqlite3_close(e);
  sqlite3_close(g);
  /* sqlite3_enable_shared_cache(1): a URI memory database without cache=
   * is shared (not :memory:, not cache=private or SQLITE_OPEN_PRIVATECACHE) */
  for (int on = 0; on < 2; on++) {
    printf("enable_shared_cache(%d) = %d\n", on, sqlite3_enable_shared_cache(on));
    static const char *const names[] = {":memory:", "file::memory:", "file:m3?mode=memory",
                                        "file:m4?mode=memory&cache=private"};
    for (int k = 0; k < 5; k++) {
      const char *name = k < 4 ? names[k] : "file:m5?mode=memory";
      int fl = RWC | (k == 4 ? SQLITE_OPEN_PRIVATECACHE : 0);
      a = open_one(name, fl);
      b = open_one(name, fl);
      sql(a, "CREATE TABLE s(x); INSERT INTO s VALUES('shared')");
      sql(b, "SELECT x FROM s");
      sqlite3_close(a);
      sqlite3_close(b);
    }
  }
  EXPECT_INT(sqlite3_enable_shared_cache(0), SQLITE_OK);

  /* filename objects of attached and temp databases */
  db = open_one("q.db", RWC);
  sql(db, "ATTACH 'att.db' AS aux");
  sql(db, "ATTACH ':memory:' AS mem");
  sql(db, "CREATE TEMP TABLE tt(a)");
  show_name(db, "main");
  show_name(db, "aux");
  show_name(db, "mem");
  show_name(db, "temp");
  printf("  unknown: %s\n", sqlite3_db_filename(db, "nosuch") ? "set" : "(null)");
  for (int i = 0; i < 5; i++)
    printf("  db_name(%d) = %s\n", i, sqlite3_db_name(db, i) ? sqlite3_db_name(db, i) : "(null)");
  sqlite3_close(db);

  /* ATTACH parses its argument as open does, with the connection's flags */
  db = open_one("q.db", RWC);
  sql(db, "CREATE TABLE t(a)");
  sql(db, "INSERT INTO t VALUES(1)");
  sql(db, "ATTACH 'file:q.db?mode=ro&x=7' AS ro");
  show_name(db, "ro");
  sql(db, "INSERT INTO ro.t VALUES(2)");
  sql(db, "ATTACH 'file:att2.db?mode=rw' AS nofile");
  printf("  att2.db made: %d\n", exists("att2.db"));
  sql(db, "ATTACH 'file:att2.db?mode=rwc' AS made");
  printf("  att2.db made: %d\n", exists("att2.db"));
  sql(db, "ATTACH 'file:q.db?mode=bogus' AS e1");
  sql(db, "ATTACH 'file://elsewhere/q.db' AS e2");
  sql(db, "ATTACH 'file:q.db?vfs=nosuch' AS e3");
  sql(db, "ATTACH 'file:q.db?cache=sometimes' AS e4");
  sql(db, "ATTACH 'file:q.db?immutable=1' AS imm");
  sql(db, "SELECT a FROM imm.t");
  sql(db, "INSERT INTO imm.t VALUES(3)");
  sql(db, "ATTACH 'file:%71.db' AS pct");
  sql(db, "SELECT a FROM pct.t");
  sql(db, "ATTACH 'file:shm1?mode=memory&cache=shared' AS sh");
  sql(db, "CREATE TABLE sh.s(x)");
  sql(db, "INSERT INTO sh.s VALUES('from attach')");
  sql(db, "ATTACH 'file:shm1?mode=memory&cache=shared' AS sh2");
  sql(db, "ATTACH 'file::memory:' AS mem");
  show_name(db, "sh");
  show_name(db, "mem");
  sql(db, "SELECT name, file = '' FROM pragma_database_list");
  {
    sqlite3 *other = open_one("file:shm1?mode=memory&cache=shared", RWC);
    if (other) sql(other, "SELECT x FROM s");
    sqlite3_close(other);
  }
  sql(db, "DETACH sh");
  {
    sqlite3 *other = open_one("file:shm1?mode=memory&cache=shared", RWC);
    if (other) sql(other, "SELECT x FROM s"); /* the last reference went with DETACH */
    sqlite3_close(other);
  }
  sqlite3_close(db);
  db = open_one("q.db", SQLITE_OPEN_READONLY);
  sql(db, "ATTACH 'file:q.db?mode=rw' AS rw");
  sql(db, "ATTACH 'q.db' AS plain");
  show_name(db, "plain");
  sqlite3_close(db);
  remove("att2.db");

  /* nolock=1 and immutable=1 take no locks; immutable=1 looks at no
   * journal and no WAL (only the database file's own pages) */
  remove("lk.db");
  remove("wl.db");
  remove("wl.db-wal");
  remove("wl.db-shm");
  db = open_one("lk.db", RWC);
  sql(db, "CREATE TABLE t(a)");
  sql(db, "INSERT INTO t VALUES(1)");
  sql(db, "BEGIN EXCLUSIVE");
  sql(db, "INSERT INTO t VALUES(2)");
  {
    static const char *const readers[] = {"lk.db", "file:lk.db?nolock=1", "file:lk.db?immutable=1",
                                          "file:lk.db?nolock=0"};
    for (int i = 0; i < 4; i++) {
      sqlite3 *r = open_one(readers[i], RWC);
      if (r) sql(r, "SELECT count(*) FROM t");
      if (r) show_name(r, "main");
      sqlite3_close(r);
    }
  }
  sql(db, "COMMIT");
  sqlite3_close(db);
  db = open_one("wl.db", RWC);
  sql(db, "PRAGMA journal_mode=wal");
  sql(db, "CREATE TABLE w(a)");
  sql(db, "INSERT INTO w VALUES(1)");
  {
    sqlite3 *r = open_one("file:wl.db?immutable=1", RWC);
    if (r) sql(r, "SELECT count(*) FROM w");
    if (r) sql(r, "PRAGMA journal_mode");
    sqlite3_close(r);
    r = open_one("file:wl.db?nolock=1", RWC);
    if (r) sql(r, "SELECT count(*) FROM w");
    sqlite3_close(r);
  }
  sql(db, "ATTACH 'file:lk.db?immutable=1' AS im");
  sql(db, "SELECT count(*) FROM im.t");
  sqlite3_close(db);
  remove("lk.db");
  remove("wl.db");
  remove("wl.db-wal");
  remove("wl.db-shm");

  /* sqlite3_create_filename */
  const char *params[] = {"a", "1", "bee", "yes", "", "x"};
  const char *fn = sqlite3_create_filename("/x/db", "/x/db-journal", "/x/db-wal", 3, params);
  printf("create_filename: db %s journal %s wal %s a %s bee %d third-key \"%s\" n %lld\n",
         sqlite3_filename_database(fn), sqlite3_filename_journal(fn), sqlite3_filename_wal(fn),
         sqlite3_uri_parameter(fn, "a"), sqlite3_uri_boolean(fn, "bee", 0),
         sqlite3_uri_key(fn, 2) ? sqlite3_uri_key(fn, 2) : "(null)", sqlite3_uri_int64(fn, "a", 9));
  sqlite3_free_filename(fn);
  sqlite3_free_filename(NULL);

  for (size_t i = 0; i < sizeof files / sizeof *files; i++) remove(files[i]);
  remove("q.db");
  return prog_done();
}
