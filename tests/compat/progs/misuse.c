/* misuse.c -- handles used after finalize/close, NULL handles, indexes out
 * of range: Shale's library answers SQLITE_MISUSE / SQLITE_RANGE / 0 / NULL
 * and never crashes, for every entry point that takes a handle (statements,
 * connections, backups, blob handles: NULL, finalized/closed/finished), and
 * a backup or blob handle keeps its connections from closing (close_v2:
 * zombie until the handle goes). Shale only: with SQLite, using a finalized
 * statement or a NULL handle is undefined behaviour (it crashes on many of
 * these); misuse_sqlite.c holds the cases SQLite defines. */
#include "prog.h"

static sqlite3_blob *bl2_dummy;

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?1, 'a'", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_int(st, 2, 1), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_text(st, -1, "x", -1, SQLITE_STATIC), SQLITE_RANGE);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_type(st, 5), SQLITE_NULL);
  EXPECT(sqlite3_column_text(st, -1) == NULL);
  EXPECT_INT(sqlite3_column_int(st, 9), 0);
  EXPECT(sqlite3_column_name(st, 2) == NULL);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);

  /* the finalized statement */
  EXPECT_INT(sqlite3_step(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_reset(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_int(st, 1, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_text(st, 1, "x", -1, SQLITE_TRANSIENT), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_clear_bindings(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_column_count(st), 0);
  EXPECT_INT(sqlite3_data_count(st), 0);
  EXPECT(sqlite3_column_text(st, 0) == NULL);
  EXPECT(sqlite3_column_value(st, 0) == NULL);
  EXPECT(sqlite3_sql(st) == NULL);
  EXPECT(sqlite3_expanded_sql(st) == NULL);
  EXPECT(sqlite3_db_handle(st) == NULL);
  EXPECT_INT(sqlite3_bind_parameter_count(st), 0);

  /* NULL everywhere */
  EXPECT_INT(sqlite3_exec(NULL, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(NULL, "SELECT 1", -1, &st, NULL), SQLITE_MISUSE);
  EXPECT(st == NULL);
  EXPECT_INT(sqlite3_prepare_v3(db, "SELECT 1", -1, 0, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_open(":memory:", NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(db, NULL, -1, &st, NULL), SQLITE_MISUSE);
  EXPECT(st == NULL);
  EXPECT_INT(sqlite3_busy_timeout(NULL, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_changes(NULL), 0);
  EXPECT_INT(sqlite3_last_insert_rowid(NULL), 0);
  EXPECT(sqlite3_next_stmt(NULL, NULL) == NULL);
  sqlite3_interrupt(NULL);
  EXPECT_INT(sqlite3_wal_checkpoint(NULL, NULL), SQLITE_MISUSE);
  EXPECT(sqlite3_db_filename(NULL, "main") == NULL);
  EXPECT_INT(sqlite3_value_type(NULL), SQLITE_NULL);
  EXPECT(sqlite3_value_text(NULL) == NULL);
  EXPECT(sqlite3_value_dup(NULL) == NULL);
  sqlite3_value_free(NULL);
  EXPECT_INT(sqlite3_complete(NULL), 0);

  /* the closed connection */
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_MISUSE);
  EXPECT_STR(sqlite3_errmsg(db), "bad parameter or other API misuse");
  EXPECT_INT(sqlite3_get_autocommit(db), 0);
  EXPECT_INT(sqlite3_create_function(db, "f", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL),
             SQLITE_MISUSE);

  /* ---- every other entry point with NULL / dead handles ---- */
  sqlite3 *live = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &live), SQLITE_OK);
  EXEC_OK(live, "CREATE TABLE b(x); INSERT INTO b VALUES(x'0102')");
  sqlite3_stmt *dead = NULL;
  EXPECT_INT(sqlite3_prepare_v2(live, "SELECT ?", -1, &dead, NULL), SQLITE_OK);
  sqlite3_finalize(dead);
  sqlite3_stmt *nul = NULL;
  sqlite3_stmt *stmts[2] = {nul, dead};
  for (int k = 0; k < 2; k++) {
    sqlite3_stmt *s = stmts[k];
    EXPECT_INT(sqlite3_bind_null(s, 1), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_int64(s, 1, 1), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_double(s, 1, 1.0), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_blob(s, 1, "x", 1, SQLITE_STATIC), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_blob64(s, 1, "x", 1, SQLITE_STATIC), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_text64(s, 1, "x", 1, SQLITE_STATIC, SQLITE_UTF8), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_zeroblob(s, 1, 5), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_bind_value(s, 1, NULL), SQLITE_MISUSE);
    EXPECT(sqlite3_bind_parameter_name(s, 1) == NULL);
    EXPECT_INT(sqlite3_bind_parameter_index(s, "?1"), 0);
    EXPECT_INT(sqlite3_column_bytes(s, 0), 0);
    EXPECT_INT(sqlite3_column_int64(s, 0), 0);
    EXPECT(sqlite3_column_double(s, 0) == 0.0);
    EXPECT(sqlite3_column_blob(s, 0) == NULL);
    EXPECT(sqlite3_column_name(s, 0) == NULL);
    EXPECT(sqlite3_column_decltype(s, 0) == NULL);
    EXPECT(sqlite3_column_table_name(s, 0) == NULL);
    EXPECT(sqlite3_column_origin_name(s, 0) == NULL);
    EXPECT(sqlite3_column_database_name(s, 0) == NULL);
    EXPECT_INT(sqlite3_stmt_readonly(s), 1); /* as SQLite for NULL */
    EXPECT_INT(sqlite3_stmt_busy(s), 0);
    EXPECT_INT(sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 0), 0);
  }
  EXPECT_INT(sqlite3_reset(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_finalize(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(NULL), SQLITE_MISUSE);
  EXPECT(sqlite3_value_blob(NULL) == NULL);
  EXPECT_INT(sqlite3_value_bytes(NULL), 0);
  EXPECT_INT(sqlite3_value_int64(NULL), 0);
  EXPECT(sqlite3_value_double(NULL) == 0.0);

  sqlite3 *gone = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &gone), SQLITE_OK);
  EXPECT_INT(sqlite3_close(gone), SQLITE_OK);
  sqlite3 *dbs[2] = {NULL, gone};
  for (int k = 0; k < 2; k++) {
    sqlite3 *d = dbs[k];
    EXPECT_INT(sqlite3_extended_errcode(d), k ? SQLITE_MISUSE : SQLITE_NOMEM);
    EXPECT_INT(sqlite3_extended_result_codes(d, 1), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_changes64(d), 0);
    EXPECT_INT(sqlite3_total_changes(d), 0);
    EXPECT_INT(sqlite3_total_changes64(d), 0);
    EXPECT(sqlite3_next_stmt(d, NULL) == NULL);
    EXPECT(sqlite3_db_filename(d, "main") == NULL);
    EXPECT_INT(sqlite3_db_readonly(d, "main"), -1);
    EXPECT_INT(sqlite3_limit(d, SQLITE_LIMIT_LENGTH, -1), -1);
    EXPECT_INT(sqlite3_wal_autocheckpoint(d, 10), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_wal_checkpoint_v2(d, NULL, 0, NULL, NULL), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_busy_handler(d, NULL, NULL), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_set_authorizer(d, NULL, NULL), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_trace_v2(d, 0, NULL, NULL), SQLITE_MISUSE);
    EXPECT(sqlite3_commit_hook(d, NULL, NULL) == NULL);
    EXPECT(sqlite3_rollback_hook(d, NULL, NULL) == NULL);
    EXPECT(sqlite3_update_hook(d, NULL, NULL) == NULL);
    sqlite3_progress_handler(d, 0, NULL, NULL);
    EXPECT_INT(sqlite3_create_collation(d, "c", SQLITE_UTF8, NULL, NULL), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_enable_load_extension(d, 0), SQLITE_MISUSE);
    int cur = 0, hi = 0;
    EXPECT_INT(sqlite3_db_status(d, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0), SQLITE_MISUSE);
    EXPECT_INT(sqlite3_table_column_metadata(d, NULL, "b", "x", NULL, NULL, NULL, NULL, NULL),
               SQLITE_MISUSE);
    EXPECT_INT(sqlite3_file_control(d, NULL, SQLITE_FCNTL_DATA_VERSION, &cur), SQLITE_MISUSE);
    /* backup, blob and serialize with a NULL or closed connection */
    EXPECT(sqlite3_backup_init(d, "main", live, "main") == NULL);
    EXPECT(sqlite3_backup_init(live, "main", d, "main") == NULL);
    sqlite3_blob *bl = (sqlite3_blob *)&bl;
    EXPECT_INT(sqlite3_blob_open(d, "main", "b", "x", 1, 0, &bl), SQLITE_MISUSE);
    EXPECT(bl == NULL);
    sqlite3_int64 sz = 0;
    EXPECT(sqlite3_serialize(d, "main", &sz, 0) == NULL);
    EXPECT_INT(sz, -1);
    unsigned char *img = sqlite3_malloc(100);
    EXPECT_INT(sqlite3_deserialize(d, "main", img, 100, 100, SQLITE_DESERIALIZE_FREEONCLOSE),
               SQLITE_MISUSE);
  }
  EXPECT_STR(sqlite3_errmsg(NULL), "out of memory");
  EXPECT_INT(sqlite3_errcode(NULL), SQLITE_NOMEM);

  /* backup handles: NULL and finished */
  EXPECT_INT(sqlite3_backup_step(NULL, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_backup_remaining(NULL), 0);
  EXPECT_INT(sqlite3_backup_pagecount(NULL), 0);
  sqlite3 *other = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &other), SQLITE_OK);
  sqlite3_backup *bk = sqlite3_backup_init(other, "main", live, "main");
  EXPECT(bk != NULL);
  EXPECT_INT(sqlite3_backup_step(bk, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_OK);
  EXPECT_INT(sqlite3_backup_step(bk, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_backup_remaining(bk), 0);
  EXPECT_INT(sqlite3_backup_pagecount(bk), 0);
  EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_MISUSE);
  /* a backup keeps both connections open; close_v2 leaves zombies that
   * finish frees */
  bk = sqlite3_backup_init(other, "main", live, "main");
  EXPECT_INT(sqlite3_backup_step(bk, 1), SQLITE_OK);
  EXPECT_INT(sqlite3_close(other), SQLITE_BUSY);
  EXPECT_INT(sqlite3_close_v2(other), SQLITE_OK);
  EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(other, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);

  /* blob handles: NULL and closed */
  char buf[4];
  EXPECT_INT(sqlite3_blob_open(live, "main", "b", "x", 1, 0, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_open(live, "main", NULL, "x", 1, 0, &bl2_dummy), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_reopen(NULL, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_bytes(NULL), 0);
  EXPECT_INT(sqlite3_blob_write(NULL, buf, 1, 0), SQLITE_MISUSE);
  sqlite3_blob *bl = NULL;
  EXPECT_INT(sqlite3_blob_open(live, "main", "b", "x", 1, 1, &bl), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_read(bl, NULL, 0, 0), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_close(bl), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_read(bl, buf, 1, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_write(bl, buf, 1, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_reopen(bl, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_blob_bytes(bl), 0);
  EXPECT_INT(sqlite3_blob_close(bl), SQLITE_MISUSE);
  /* a blob handle keeps the connection open too */
  EXPECT_INT(sqlite3_blob_open(live, "main", "b", "x", 1, 0, &bl), SQLITE_OK);
  EXPECT_INT(sqlite3_close(live), SQLITE_BUSY);
  EXPECT_INT(sqlite3_close_v2(live), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_bytes(bl), 2);
  EXPECT_INT(sqlite3_blob_close(bl), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(live, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);

  /* status and VFS misuse */
  EXPECT_INT(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, NULL, NULL, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_status(SQLITE_STATUS_MEMORY_USED, NULL, NULL, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_status64(99, NULL, NULL, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_vfs_register(NULL, 0), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_vfs_unregister(NULL), SQLITE_OK);

  /* DETACH of a database a backup uses is refused until the backup finishes
   * (SQLite detaches it and the next step crashes) */
  sqlite3 *a = NULL, *b = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &a), SQLITE_OK);
  EXPECT_INT(sqlite3_open(":memory:", &b), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(a, "ATTACH ':memory:' AS aux; CREATE TABLE aux.t(x)", NULL, NULL, NULL),
             SQLITE_OK);
  sqlite3_backup *bkd = sqlite3_backup_init(b, "main", a, "aux");
  EXPECT(bkd != NULL);
  EXPECT_INT(sqlite3_exec(a, "DETACH aux", NULL, NULL, NULL), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(a), "database aux is locked");
  EXPECT_INT(sqlite3_backup_step(bkd, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(bkd), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(a, "DETACH aux", NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_close(a), SQLITE_OK);
  EXPECT_INT(sqlite3_close(b), SQLITE_OK);
  return prog_done();
}
