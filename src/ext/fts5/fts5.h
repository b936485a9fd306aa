/*
 * fts5.h -- the FTS5 extension's entry point: fts5_register() adds the
 * "fts5" module and the bm25/highlight/snippet functions to a connection
 * (shale_open calls it for every connection, as SQLite's built-in FTS5).
 */
#ifndef SHALE_FTS5_H
#define SHALE_FTS5_H

#include "shale.h"

int fts5_register(shale *db);

#endif /* SHALE_FTS5_H */
