/* exports.c -- every function issue 4 lists is exported by the library the
 * program loaded (looked up at run time with dlsym). Shale only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

#include "prog.h"

static const char *const names[] = {
    "aggregate_context", "backup_finish", "backup_init", "backup_pagecount", "backup_remaining",
    "backup_step", "bind_blob", "bind_blob64", "bind_double", "bind_int", "bind_int64",
    "bind_null", "bind_parameter_count", "bind_parameter_index", "bind_parameter_name",
    "bind_text", "bind_text64", "bind_value", "bind_zeroblob", "blob_bytes", "blob_close",
    "blob_open", "blob_read", "blob_reopen", "blob_write", "busy_handler", "busy_timeout",
    "changes", "changes64", "clear_bindings", "close", "close_v2", "column_blob",
    "column_bytes", "column_count", "column_database_name", "column_decltype", "column_double",
    "column_int", "column_int64", "column_name", "column_origin_name", "column_table_name",
    "column_text", "column_type", "column_value", "commit_hook", "complete", "config",
    "context_db_handle", "create_collation", "create_collation_v2", "create_function",
    "create_function_v2", "create_window_function", "data_count", "db_config", "db_filename",
    "db_handle", "db_readonly", "db_status", "deserialize", "enable_load_extension",
    "enable_shared_cache", "errcode", "errmsg", "errstr", "exec", "expanded_sql",
    "extended_errcode", "extended_result_codes", "file_control", "finalize", "free",
    "get_autocommit", "get_auxdata", "initialize", "interrupt", "last_insert_rowid",
    "libversion", "libversion_number", "limit", "load_extension", "malloc", "malloc64",
    "memory_used", "mprintf", "next_stmt", "open", "open_v2", "prepare", "prepare_v2",
    "prepare_v3", "progress_handler", "randomness", "realloc", "realloc64", "reset",
    "result_blob", "result_blob64", "result_double", "result_error", "result_error_code",
    "result_error_nomem", "result_error_toobig", "result_int", "result_int64", "result_null",
    "result_text", "result_text64", "result_value", "result_zeroblob", "rollback_hook",
    "serialize", "set_authorizer", "set_auxdata", "shutdown", "sleep", "snprintf",
    "soft_heap_limit64", "sourceid", "sql", "status", "status64", "step", "stmt_busy",
    "stmt_readonly", "stmt_status", "stricmp", "strnicmp", "table_column_metadata",
    "threadsafe", "total_changes", "total_changes64", "trace_v2", "update_hook", "user_data",
    "value_blob", "value_bytes", "value_double", "value_dup", "value_free", "value_int",
    "value_int64", "value_nochange", "value_numeric_type", "value_subtype", "value_text",
    "value_type", "vfs_find", "vmprintf", "wal_autocheckpoint", "wal_checkpoint",
    "wal_checkpoint_v2"};

int main(void) {
  EXPECT(strstr(sqlite3_sourceid(), "shale") != NULL);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char sym[64];
    snprintf(sym, sizeof sym, "sqlite3_%s", names[i]);
    void *p = dlsym(RTLD_DEFAULT, sym);
    if (!p) fprintf(stderr, "missing %s\n", sym);
    EXPECT(p != NULL);
    Dl_info info;
    if (p && dladdr(p, &info)) EXPECT(strstr(info.dli_fname, "/compat/libsqlite3.so") != NULL);
  }
  return prog_done();
}
