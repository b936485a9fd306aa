/*
 * ext.c -- the list of extensions built into the library (ext.h): each
 * one's registration entry point, called in order on a new connection.
 *
 * Invariants:
 *  1. The first failing registration's code is returned; the connection's
 *     open then fails (ext.h invariant 1).
 */
#include "ext.h"

#include "fts3/fts3.h"
#include "fts5/fts5.h"
#include "rtree/rtree.h"

int ext_builtin_register(shale *db) {
  static int (*const builtins[])(shale *) = {rtree_register, fts3_register, fts5_register};
  int rc = SHALE_OK;
  for (unsigned i = 0; rc == SHALE_OK && i < sizeof builtins / sizeof builtins[0]; i++)
    rc = builtins[i](db);
  return rc;
}
