/*
 * sqlite3session.h -- Shale's declarations of SQLite 3.40.1's session
 * extension (sessions, changesets, patchsets, changegroups, rebasers), which
 * Debian's libsqlite3.so.0 exports (SQLITE_ENABLE_SESSION) and its sqlite3
 * shell imports.
 *
 * Built over compat/: sessions (session.c), iterators and invert
 * (changeset.c), apply (changeset_apply.c), changegroups and concat
 * (changegroup.c); sqlite3session_diff and the rebaser refuse cleanly
 * (docs/compat.md). Kept out of sqlite3.h,
 * which, like SQLite's header without SQLITE_ENABLE_SESSION, does not declare
 * them.
 *
 * Invariants:
 *  1. Each prototype and constant matches SQLite's (checked by
 *     tests/compat/test_compat.c against the system header compiled with
 *     SQLITE_ENABLE_SESSION).
 */
#ifndef SHALE_COMPAT_SQLITE3SESSION_H
#define SHALE_COMPAT_SQLITE3SESSION_H

#include "sqlite3.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sqlite3_session sqlite3_session;
typedef struct sqlite3_changeset_iter sqlite3_changeset_iter;
typedef struct sqlite3_changegroup sqlite3_changegroup;
typedef struct sqlite3_rebaser sqlite3_rebaser;

#define SQLITE_SESSION_OBJCONFIG_SIZE 1
#define SQLITE_CHANGESETSTART_INVERT 0x0002
#define SQLITE_CHANGESETAPPLY_NOSAVEPOINT 0x0001
#define SQLITE_CHANGESETAPPLY_INVERT 0x0002
#define SQLITE_CHANGESET_DATA 1
#define SQLITE_CHANGESET_NOTFOUND 2
#define SQLITE_CHANGESET_CONFLICT 3
#define SQLITE_CHANGESET_CONSTRAINT 4
#define SQLITE_CHANGESET_FOREIGN_KEY 5
#define SQLITE_CHANGESET_OMIT 0
#define SQLITE_CHANGESET_REPLACE 1
#define SQLITE_CHANGESET_ABORT 2
#define SQLITE_SESSION_CONFIG_STRMSIZE 1

SQLITE_API int sqlite3session_create(sqlite3 *db, const char *zDb, sqlite3_session **ppSession);
SQLITE_API void sqlite3session_delete(sqlite3_session *pSession);
SQLITE_API int sqlite3session_object_config(sqlite3_session *, int op, void *pArg);
SQLITE_API int sqlite3session_enable(sqlite3_session *pSession, int bEnable);
SQLITE_API int sqlite3session_indirect(sqlite3_session *pSession, int bIndirect);
SQLITE_API int sqlite3session_attach(sqlite3_session *pSession, const char *zTab);
SQLITE_API void sqlite3session_table_filter(sqlite3_session *pSession,
                                            int (*xFilter)(void *pCtx, const char *zTab),
                                            void *pCtx);
SQLITE_API int sqlite3session_changeset(sqlite3_session *pSession, int *pnChangeset,
                                        void **ppChangeset);
SQLITE_API sqlite3_int64 sqlite3session_changeset_size(sqlite3_session *pSession);
SQLITE_API int sqlite3session_diff(sqlite3_session *pSession, const char *zFromDb, const char *zTbl,
                                   char **pzErrMsg);
SQLITE_API int sqlite3session_patchset(sqlite3_session *pSession, int *pnPatchset,
                                       void **ppPatchset);
SQLITE_API int sqlite3session_isempty(sqlite3_session *pSession);
SQLITE_API sqlite3_int64 sqlite3session_memory_used(sqlite3_session *pSession);
SQLITE_API int sqlite3changeset_start(sqlite3_changeset_iter **pp, int nChangeset,
                                      void *pChangeset);
SQLITE_API int sqlite3changeset_start_v2(sqlite3_changeset_iter **pp, int nChangeset,
                                         void *pChangeset, int flags);
SQLITE_API int sqlite3changeset_next(sqlite3_changeset_iter *pIter);
SQLITE_API int sqlite3changeset_op(sqlite3_changeset_iter *pIter, const char **pzTab, int *pnCol,
                                   int *pOp, int *pbIndirect);
SQLITE_API int sqlite3changeset_pk(sqlite3_changeset_iter *pIter, unsigned char **pabPK,
                                   int *pnCol);
SQLITE_API int sqlite3changeset_old(sqlite3_changeset_iter *pIter, int iVal,
                                    sqlite3_value **ppValue);
SQLITE_API int sqlite3changeset_new(sqlite3_changeset_iter *pIter, int iVal,
                                    sqlite3_value **ppValue);
SQLITE_API int sqlite3changeset_conflict(sqlite3_changeset_iter *pIter, int iVal,
                                         sqlite3_value **ppValue);
SQLITE_API int sqlite3changeset_fk_conflicts(sqlite3_changeset_iter *pIter, int *pnOut);
SQLITE_API int sqlite3changeset_finalize(sqlite3_changeset_iter *pIter);
SQLITE_API int sqlite3changeset_invert(int nIn, const void *pIn, int *pnOut, void **ppOut);
SQLITE_API int sqlite3changeset_concat(int nA, void *pA, int nB, void *pB, int *pnOut,
                                       void **ppOut);
SQLITE_API int sqlite3changegroup_new(sqlite3_changegroup **pp);
SQLITE_API int sqlite3changegroup_add(sqlite3_changegroup *, int nData, void *pData);
SQLITE_API int sqlite3changegroup_output(sqlite3_changegroup *, int *pnData, void **ppData);
SQLITE_API void sqlite3changegroup_delete(sqlite3_changegroup *);
SQLITE_API int sqlite3changeset_apply(
    sqlite3 *db, int nChangeset, void *pChangeset, int (*xFilter)(void *pCtx, const char *zTab),
    int (*xConflict)(void *pCtx, int eConflict, sqlite3_changeset_iter *p), void *pCtx);
SQLITE_API int sqlite3changeset_apply_v2(sqlite3 *db, int nChangeset, void *pChangeset,
                                         int (*xFilter)(void *pCtx, const char *zTab),
                                         int (*xConflict)(void *pCtx, int eConflict,
                                                          sqlite3_changeset_iter *p),
                                         void *pCtx, void **ppRebase, int *pnRebase, int flags);
SQLITE_API int sqlite3rebaser_create(sqlite3_rebaser **ppNew);
SQLITE_API int sqlite3rebaser_configure(sqlite3_rebaser *, int nRebase, const void *pRebase);
SQLITE_API int sqlite3rebaser_rebase(sqlite3_rebaser *, int nIn, const void *pIn, int *pnOut,
                                     void **ppOut);
SQLITE_API void sqlite3rebaser_delete(sqlite3_rebaser *p);
SQLITE_API int sqlite3changeset_apply_strm(
    sqlite3 *db, int (*xInput)(void *pIn, void *pData, int *pnData), void *pIn,
    int (*xFilter)(void *pCtx, const char *zTab),
    int (*xConflict)(void *pCtx, int eConflict, sqlite3_changeset_iter *p), void *pCtx);
SQLITE_API int sqlite3changeset_apply_v2_strm(
    sqlite3 *db, int (*xInput)(void *pIn, void *pData, int *pnData), void *pIn,
    int (*xFilter)(void *pCtx, const char *zTab),
    int (*xConflict)(void *pCtx, int eConflict, sqlite3_changeset_iter *p), void *pCtx,
    void **ppRebase, int *pnRebase, int flags);
SQLITE_API int sqlite3changeset_concat_strm(
    int (*xInputA)(void *pIn, void *pData, int *pnData), void *pInA,
    int (*xInputB)(void *pIn, void *pData, int *pnData), void *pInB,
    int (*xOutput)(void *pOut, const void *pData, int nData), void *pOut);
SQLITE_API int sqlite3changeset_invert_strm(
    int (*xInput)(void *pIn, void *pData, int *pnData), void *pIn,
    int (*xOutput)(void *pOut, const void *pData, int nData), void *pOut);
SQLITE_API int sqlite3changeset_start_strm(sqlite3_changeset_iter **pp,
                                           int (*xInput)(void *pIn, void *pData, int *pnData),
                                           void *pIn);
SQLITE_API int sqlite3changeset_start_v2_strm(sqlite3_changeset_iter **pp,
                                              int (*xInput)(void *pIn, void *pData, int *pnData),
                                              void *pIn, int flags);
SQLITE_API int sqlite3session_changeset_strm(sqlite3_session *pSession,
                                             int (*xOutput)(void *pOut, const void *pData,
                                                            int nData),
                                             void *pOut);
SQLITE_API int sqlite3session_patchset_strm(sqlite3_session *pSession,
                                            int (*xOutput)(void *pOut, const void *pData,
                                                           int nData),
                                            void *pOut);
SQLITE_API int sqlite3changegroup_add_strm(sqlite3_changegroup *,
                                           int (*xInput)(void *pIn, void *pData, int *pnData),
                                           void *pIn);
SQLITE_API int sqlite3changegroup_output_strm(
    sqlite3_changegroup *, int (*xOutput)(void *pOut, const void *pData, int nData), void *pOut);
SQLITE_API int sqlite3rebaser_rebase_strm(sqlite3_rebaser *pRebaser,
                                          int (*xInput)(void *pIn, void *pData, int *pnData),
                                          void *pIn,
                                          int (*xOutput)(void *pOut, const void *pData, int nData),
                                          void *pOut);
SQLITE_API int sqlite3session_config(int op, void *pArg);

#ifdef __cplusplus
}
#endif

#endif /* SHALE_COMPAT_SQLITE3SESSION_H */
