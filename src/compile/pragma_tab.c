/*
 * pragma_tab.c -- the pragmas usable as table-valued functions in FROM
 * (pragma_table_info('t') ...): SQLite 3.40.1's eponymous pragma virtual
 * tables, with their result columns and their hidden argument columns.
 *
 * Owns: a constant table; nothing allocated.
 *
 * Invariants:
 *  1. The list is pragma.def's (the one list of pragmas, shared with
 *     src/api/pragma.c): an entry with tab -1 is not offered as pragma_NAME,
 *     every other one is, as SQLite 3.40.1 offers them (its
 *     pragma_table_xinfo('pragma_NAME') answers).
 *  2. Hidden columns follow the result columns: "arg" when the pragma
 *     takes an argument, then "schema" when it takes a schema name.
 */
#include <string.h>

#include "compile.h"

#define PRAGMA_COLS(id, ...) static const char *const id[] = {__VA_ARGS__};
#include "pragma.def"

#define PT_ARG SQL_PRAGMA_ARG
#define PT_SCHEMA SQL_PRAGMA_SCHEMA
static const SqlPragmaTab tabs[] = {
#define PRAGMA(name, id, ncol, cols, when_set, needs_arg, tab) {#name, ncol, cols, tab},
#include "pragma.def"
};
#undef PT_ARG
#undef PT_SCHEMA

const SqlPragmaTab *compile_sql_pragma_tab(const char *name) {
  for (size_t i = 0; name && i < sizeof tabs / sizeof tabs[0]; i++)
    if (tabs[i].hidden >= 0 && util_stricmp(tabs[i].name, name) == 0) return &tabs[i];
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

int *compile_sql_table_hash_order(const char *const *names, int n) {
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
