/*
 * fts5_api.h -- the FTS5 extension interface (SQLite's fts5.h) in the
 * native API's types: the fts5_api object that `SELECT fts5(?1)` hands out
 * (sqlite3_bind_pointer with type "fts5_api_ptr"), custom tokenizers
 * (fts5_tokenizer) and the Fts5ExtensionApi an auxiliary function calls.
 *
 * include/sqlite3.h declares the same structs with the sqlite3_* names, as
 * SQLite 3.40.1's sqlite3.h does (shale_context is sqlite3_context,
 * shale_value is sqlite3_value): the member order, the types of the
 * arguments and the constants are SQLite's, since applications fill and call
 * these tables (tests/unit/compat/test_sqlite3_h.c compares that header's
 * layouts with the reference's).
 *
 * Invariants:
 *  1. fts5_api.iVersion is 2 and Fts5ExtensionApi.iVersion 3 (3.40.1's).
 *  2. A Fts5Context is the cursor an auxiliary function was called for; it
 *     and the values it returns (column text, phrase iterators) stay valid
 *     until the cursor moves to another row.
 */
#ifndef SHALE_FTS5_API_H
#define SHALE_FTS5_API_H

#include "shale.h"

typedef struct Fts5ExtensionApi Fts5ExtensionApi;
typedef struct Fts5Context Fts5Context;
typedef struct Fts5PhraseIter Fts5PhraseIter;

typedef void (*fts5_extension_function)(const Fts5ExtensionApi *pApi, Fts5Context *pFts,
                                        shale_context *pCtx, int nVal, shale_value **apVal);

struct Fts5PhraseIter {
  const unsigned char *a;
  const unsigned char *b;
};

struct Fts5ExtensionApi {
  int iVersion; /* 3 */
  void *(*xUserData)(Fts5Context *);
  int (*xColumnCount)(Fts5Context *);
  int (*xRowCount)(Fts5Context *, shale_int64 *pnRow);
  int (*xColumnTotalSize)(Fts5Context *, int iCol, shale_int64 *pnToken);
  int (*xTokenize)(Fts5Context *, const char *pText, int nText, void *pCtx,
                   int (*xToken)(void *, int, const char *, int, int, int));
  int (*xPhraseCount)(Fts5Context *);
  int (*xPhraseSize)(Fts5Context *, int iPhrase);
  int (*xInstCount)(Fts5Context *, int *pnInst);
  int (*xInst)(Fts5Context *, int iIdx, int *piPhrase, int *piCol, int *piOff);
  shale_int64 (*xRowid)(Fts5Context *);
  int (*xColumnText)(Fts5Context *, int iCol, const char **pz, int *pn);
  int (*xColumnSize)(Fts5Context *, int iCol, int *pnToken);
  int (*xQueryPhrase)(Fts5Context *, int iPhrase, void *pUserData,
                      int (*)(const Fts5ExtensionApi *, Fts5Context *, void *));
  int (*xSetAuxdata)(Fts5Context *, void *pAux, void (*xDelete)(void *));
  void *(*xGetAuxdata)(Fts5Context *, int bClear);
  int (*xPhraseFirst)(Fts5Context *, int iPhrase, Fts5PhraseIter *, int *, int *);
  void (*xPhraseNext)(Fts5Context *, Fts5PhraseIter *, int *piCol, int *piOff);
  int (*xPhraseFirstColumn)(Fts5Context *, int iPhrase, Fts5PhraseIter *, int *);
  void (*xPhraseNextColumn)(Fts5Context *, Fts5PhraseIter *, int *piCol);
};

typedef struct Fts5Tokenizer Fts5Tokenizer;
typedef struct fts5_tokenizer fts5_tokenizer;
struct fts5_tokenizer {
  int (*xCreate)(void *, const char **azArg, int nArg, Fts5Tokenizer **ppOut);
  void (*xDelete)(Fts5Tokenizer *);
  int (*xTokenize)(Fts5Tokenizer *, void *pCtx, int flags, const char *pText, int nText,
                   int (*xToken)(void *pCtx, int tflags, const char *pToken, int nToken, int iStart,
                                 int iEnd));
};

#define FTS5_TOKENIZE_QUERY 0x0001
#define FTS5_TOKENIZE_PREFIX 0x0002
#define FTS5_TOKENIZE_DOCUMENT 0x0004
#define FTS5_TOKENIZE_AUX 0x0008
#define FTS5_TOKEN_COLOCATED 0x0001

typedef struct fts5_api fts5_api;
struct fts5_api {
  int iVersion; /* 2 */
  int (*xCreateTokenizer)(fts5_api *pApi, const char *zName, void *pContext,
                          fts5_tokenizer *pTokenizer, void (*xDestroy)(void *));
  int (*xFindTokenizer)(fts5_api *pApi, const char *zName, void **ppContext,
                        fts5_tokenizer *pTokenizer);
  int (*xCreateFunction)(fts5_api *pApi, const char *zName, void *pContext,
                         fts5_extension_function xFunction, void (*xDestroy)(void *));
};

#endif /* SHALE_FTS5_API_H */
