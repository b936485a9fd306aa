/*
 * fts3.h -- the FTS3/FTS4 extension's entry point (src/ext/fts3/):
 * registers the "fts3" and "fts4" virtual-table modules on a connection,
 * reading the index SQLite's FTS3/FTS4 write. A client of include/shale.h.
 *
 * Invariants:
 *  1. Called once per connection right after it opened; SHALE_OK or
 *     SHALE_NOMEM.
 */
#ifndef SHALE_EXT_FTS3_H
#define SHALE_EXT_FTS3_H

#include "shale.h"

int fts3_register(shale *db);

#endif /* SHALE_EXT_FTS3_H */
