/*
 * changeset.c -- the parts of SQLite's session extension that read
 * changesets (sqlite3changeset_*), combine them (sqlite3changegroup_*) and
 * rebase them (sqlite3rebaser_*). Not built yet: each entry point fails
 * cleanly (docs/compat.md, "not supported yet").
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. No iterator, changegroup or rebaser object is ever made: the
 *     constructors set *pp = NULL and return SQLITE_ERROR (apply returns
 *     "the session extension is not supported by Shale yet" on a live
 *     connection); a function given such an object returns SQLITE_MISUSE, or
 *     does nothing when it returns void; NULL passed to a destructor is OK.
 *  2. Output arguments (sizes, buffers, rebase blobs) are zeroed before any
 *     failure, so a caller never frees garbage.
 */
#include <string.h>

#include "compat_int.h"
#include "sqlite3session.h"

#define WHAT "the session extension"

static void clear_out(int *pn, void **pp) {
  if (pn) *pn = 0;
  if (pp) *pp = NULL;
}

/* ---------------------------------------------------------------- changeset iterators */

int sqlite3changeset_start(sqlite3_changeset_iter **pp, int n, void *data) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3changeset_start_v2(sqlite3_changeset_iter **pp, int n, void *data, int flags) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3changeset_start_strm(sqlite3_changeset_iter **pp,
                                int (*in)(void *, void *, int *), void *arg) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3changeset_start_v2_strm(sqlite3_changeset_iter **pp,
                                   int (*in)(void *, void *, int *), void *arg, int flags) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3changeset_next(sqlite3_changeset_iter *it) { return SQLITE_MISUSE; }
int sqlite3changeset_op(sqlite3_changeset_iter *it, const char **ptab, int *pncol, int *pop,
                        int *pindirect) {
  if (ptab) *ptab = NULL;
  if (pncol) *pncol = 0;
  if (pop) *pop = 0;
  if (pindirect) *pindirect = 0;
  return SQLITE_MISUSE;
}
int sqlite3changeset_pk(sqlite3_changeset_iter *it, unsigned char **ppk, int *pncol) {
  if (ppk) *ppk = NULL;
  if (pncol) *pncol = 0;
  return SQLITE_MISUSE;
}
static int no_value(sqlite3_value **pv) {
  if (pv) *pv = NULL;
  return SQLITE_MISUSE;
}
int sqlite3changeset_old(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  return no_value(pv);
}
int sqlite3changeset_new(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  return no_value(pv);
}
int sqlite3changeset_conflict(sqlite3_changeset_iter *it, int i, sqlite3_value **pv) {
  return no_value(pv);
}
int sqlite3changeset_fk_conflicts(sqlite3_changeset_iter *it, int *pn) {
  if (pn) *pn = 0;
  return SQLITE_MISUSE;
}
int sqlite3changeset_finalize(sqlite3_changeset_iter *it) {
  return it ? SQLITE_MISUSE : SQLITE_OK;
}

/* ---------------------------------------------------------------- changeset transforms */

int sqlite3changeset_invert(int n, const void *in, int *pn, void **pp) {
  clear_out(pn, pp);
  return SQLITE_ERROR;
}
int sqlite3changeset_invert_strm(int (*in)(void *, void *, int *), void *arg,
                                 int (*out)(void *, const void *, int), void *oarg) {
  return SQLITE_ERROR;
}
int sqlite3changeset_concat(int na, void *a, int nb, void *b, int *pn, void **pp) {
  clear_out(pn, pp);
  return SQLITE_ERROR;
}
int sqlite3changeset_concat_strm(int (*ina)(void *, void *, int *), void *a,
                                 int (*inb)(void *, void *, int *), void *b,
                                 int (*out)(void *, const void *, int), void *oarg) {
  return SQLITE_ERROR;
}

static int no_apply(sqlite3 *db, void **prebase, int *pnrebase) {
  clear_out(pnrebase, prebase);
  return compat_refuse(db, WHAT);
}
int sqlite3changeset_apply(sqlite3 *db, int n, void *data, int (*filter)(void *, const char *),
                           int (*conflict)(void *, int, sqlite3_changeset_iter *), void *ctx) {
  return no_apply(db, NULL, NULL);
}
int sqlite3changeset_apply_v2(sqlite3 *db, int n, void *data,
                              int (*filter)(void *, const char *),
                              int (*conflict)(void *, int, sqlite3_changeset_iter *), void *ctx,
                              void **prebase, int *pnrebase, int flags) {
  return no_apply(db, prebase, pnrebase);
}
int sqlite3changeset_apply_strm(sqlite3 *db, int (*in)(void *, void *, int *), void *arg,
                                int (*filter)(void *, const char *),
                                int (*conflict)(void *, int, sqlite3_changeset_iter *),
                                void *ctx) {
  return no_apply(db, NULL, NULL);
}
int sqlite3changeset_apply_v2_strm(sqlite3 *db, int (*in)(void *, void *, int *), void *arg,
                                   int (*filter)(void *, const char *),
                                   int (*conflict)(void *, int, sqlite3_changeset_iter *),
                                   void *ctx, void **prebase, int *pnrebase, int flags) {
  return no_apply(db, prebase, pnrebase);
}

/* ---------------------------------------------------------------- changegroups, rebasers */

int sqlite3changegroup_new(sqlite3_changegroup **pp) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3changegroup_add(sqlite3_changegroup *g, int n, void *data) { return SQLITE_MISUSE; }
int sqlite3changegroup_add_strm(sqlite3_changegroup *g, int (*in)(void *, void *, int *),
                                void *arg) {
  return SQLITE_MISUSE;
}
int sqlite3changegroup_output(sqlite3_changegroup *g, int *pn, void **pp) {
  clear_out(pn, pp);
  return SQLITE_MISUSE;
}
int sqlite3changegroup_output_strm(sqlite3_changegroup *g, int (*out)(void *, const void *, int),
                                   void *arg) {
  return SQLITE_MISUSE;
}
void sqlite3changegroup_delete(sqlite3_changegroup *g) {}

int sqlite3rebaser_create(sqlite3_rebaser **pp) {
  if (pp) *pp = NULL;
  return SQLITE_ERROR;
}
int sqlite3rebaser_configure(sqlite3_rebaser *r, int n, const void *data) {
  return SQLITE_MISUSE;
}
int sqlite3rebaser_rebase(sqlite3_rebaser *r, int n, const void *in, int *pn, void **pp) {
  clear_out(pn, pp);
  return SQLITE_MISUSE;
}
int sqlite3rebaser_rebase_strm(sqlite3_rebaser *r, int (*in)(void *, void *, int *), void *arg,
                               int (*out)(void *, const void *, int), void *oarg) {
  return SQLITE_MISUSE;
}
void sqlite3rebaser_delete(sqlite3_rebaser *r) {}
