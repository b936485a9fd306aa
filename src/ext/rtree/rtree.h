/*
 * rtree.h -- the R-Tree extension's entry point (src/ext/rtree/): registers
 * the "rtree" and "rtree_i32" virtual-table modules and the functions
 * rtreecheck(), rtreenode(), rtreedepth() on a connection, as SQLite's
 * built-in rtree extension does. A client of include/shale.h only.
 *
 * Invariants:
 *  1. Safe to call once per connection, right after it opened; SHALE_OK or
 *     SHALE_NOMEM (then nothing half-registered is usable: the caller fails
 *     the open).
 */
#ifndef SHALE_EXT_RTREE_H
#define SHALE_EXT_RTREE_H

#include "shale.h"

int rtree_register(shale *db);

#endif /* SHALE_EXT_RTREE_H */
