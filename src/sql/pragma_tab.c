/*
 * pragma_tab.c -- the pragmas usable as table-valued functions in FROM
 * (pragma_table_info('t') ...): SQLite 3.40.1's eponymous pragma virtual
 * tables, with their result columns and their hidden argument columns.
 *
 * Owns: a constant table; nothing allocated.
 *
 * Invariants:
 *  1. The list holds the pragmas SQLite 3.40.1 offers as pragma_NAME (its
 *     pragma_table_xinfo('pragma_NAME') answers), restricted to those Shale
 *     runs (src/api/pragma.c) or that helpers add there; a pragma the API
 *     does not know gives no rows.
 *  2. Hidden columns follow the result columns: "arg" when the pragma
 *     takes an argument, then "schema" when it takes a schema name.
 */
#include <string.h>

#include "compile.h"

static const char *const c_table_info[] = {"cid", "name", "type", "notnull", "dflt_value", "pk",
                                           "hidden"};
static const char *const c_index_list[] = {"seq", "name", "unique", "origin", "partial"};
static const char *const c_index_xinfo[] = {"seqno", "cid", "name", "desc", "coll", "key"};
static const char *const c_database_list[] = {"seq", "name", "file"};
static const char *const c_table_list[] = {"schema", "name", "type", "ncol", "wr", "strict"};
static const char *const c_fk_list[] = {"id", "seq", "table", "from", "to", "on_update",
                                        "on_delete", "match"};
static const char *const c_fk_check[] = {"table", "rowid", "parent", "fkid"};
static const char *const c_timeout[] = {"timeout"};
static const char *const c_collation_list[] = {"seq", "name"};
static const char *const c_function_list[] = {"name", "builtin", "type", "enc", "narg", "flags"};
static const char *const c_module_list[] = {"name"};

#define A SQL_PRAGMA_ARG
#define S SQL_PRAGMA_SCHEMA
static const SqlPragmaTab tabs[] = {
    {"application_id", 1, NULL, 0},
    {"auto_vacuum", 1, NULL, S},
    {"busy_timeout", 1, c_timeout, 0},
    {"cache_size", 1, NULL, S},
    {"collation_list", 2, c_collation_list, 0},
    {"compile_options", 1, NULL, 0},
    {"database_list", 3, c_database_list, 0},
    {"defer_foreign_keys", 1, NULL, 0},
    {"encoding", 1, NULL, 0},
    {"foreign_key_check", 4, c_fk_check, A | S},
    {"foreign_key_list", 8, c_fk_list, A | S},
    {"foreign_keys", 1, NULL, 0},
    {"freelist_count", 1, NULL, 0},
    {"function_list", 6, c_function_list, 0},
    {"index_info", 3, c_index_xinfo, A | S},
    {"index_list", 5, c_index_list, A | S},
    {"index_xinfo", 6, c_index_xinfo, A | S},
    {"integrity_check", 1, NULL, A | S},
    {"journal_mode", 1, NULL, S},
    {"locking_mode", 1, NULL, S},
    {"module_list", 1, c_module_list, 0},
    {"optimize", 1, NULL, A},
    {"page_count", 1, NULL, S},
    {"page_size", 1, NULL, S},
    {"quick_check", 1, NULL, A | S},
    {"recursive_triggers", 1, NULL, 0},
    {"reverse_unordered_selects", 1, NULL, 0},
    {"schema_version", 1, NULL, 0},
    {"synchronous", 1, NULL, S},
    {"table_info", 6, c_table_info, A | S},
    {"table_list", 6, c_table_list, A},
    {"table_xinfo", 7, c_table_info, A | S},
    {"temp_store", 1, NULL, 0},
    {"user_version", 1, NULL, 0},
};
#undef A
#undef S

const SqlPragmaTab *sql_pragma_tab(const char *name) {
  for (size_t i = 0; name && i < sizeof tabs / sizeof tabs[0]; i++)
    if (util_stricmp(tabs[i].name, name) == 0) return &tabs[i];
  return NULL;
}

/* ---- SQLite's table-hash order (PRAGMA table_list lists tables so) ---- */

static unsigned hash_name(const char *z) {
  unsigned h = 0;
  for (; *z; z++) {
    unsigned char c = (unsigned char)*z;
    if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
    h += c;
    h *= 0x9e3779b1u;
  }
  return h;
}

/* Insert element e where SQLite's hash puts it: before its bucket's first
 * element, or at the head of the list. */
static void sim_insert(int *list, int *n, int htsize, int *bcount, int *bhead,
                       const char *const *names, int e) {
  int pos = 0;
  if (htsize) {
    int b = (int)(hash_name(names[e]) % (unsigned)htsize);
    if (bcount[b] > 0)
      while (list[pos] != bhead[b]) pos++;
    bcount[b]++;
    bhead[b] = e;
  }
  memmove(&list[pos + 1], &list[pos], sizeof(int) * (size_t)(*n - pos));
  list[pos] = e;
  (*n)++;
}

int *sql_table_hash_order(const char *const *names, int n) {
  int *list = shale_malloc(sizeof(int) * (size_t)(2 * n + 2 + 128));
  if (!list) return NULL;
  int *old = list + n + 1, *bcount = old + n + 1, *bhead = bcount + 64;
  int len = 0, htsize = 0;
  for (int e = 0; e < n; e++) {
    int count = len + 1;
    if (count >= 10 && count > 2 * htsize) { /* SQLite's rehash */
      int size = count * 2 > 64 ? 64 : count * 2;
      int nold = len;
      memcpy(old, list, sizeof(int) * (size_t)nold);
      len = 0;
      htsize = size;
      memset(bcount, 0, sizeof(int) * 64);
      for (int k = 0; k < nold; k++) sim_insert(list, &len, htsize, bcount, bhead, names, old[k]);
    }
    sim_insert(list, &len, htsize, bcount, bhead, names, e);
  }
  return list;
}
