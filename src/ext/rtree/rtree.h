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

#include <stdint.h>

#include "shale.h"

int rtree_register(shale *db);

/* A MATCH argument: what a function registered by
 * sqlite3_rtree_geometry_callback (compat/rtree.c) returns, a pointer of
 * type RTREE_MATCH_TYPE. RtreeGeometry has sqlite3_rtree_geometry's layout;
 * geom is called as SQLite calls it, for each cell the search reaches
 * (node bounding boxes and entries), with the cell's coordinates. */
#define RTREE_MATCH_TYPE "RtreeMatchArg"
typedef struct RtreeGeometry {
  void *pContext;
  int nParam;
  double *aParam;
  void *pUser;
  void (*xDelUser)(void *);
} RtreeGeometry;
/* sqlite3_rtree_query_info's layout (a query callback's argument). */
typedef struct RtreeQueryInfo {
  void *pContext;
  int nParam;
  double *aParam;
  void *pUser;
  void (*xDelUser)(void *);
  double *aCoord;
  unsigned int *anQueue;
  int nCoord;
  int iLevel;
  int mxLevel;
  int64_t iRowid;
  double rParentScore;
  int eParentWithin;
  int eWithin;
  double rScore;
  shale_value **apSqlParam;
} RtreeQueryInfo;
typedef struct RtreeMatchArg {
  int (*geom)(RtreeGeometry *, int ncoord, double *coord, int *res); /* or */
  int (*query)(RtreeQueryInfo *);
  void *context;
  int nparam;
  shale_value **values; /* query: copies of the arguments */
  double param[];       /* the function's arguments as numbers */
} RtreeMatchArg;

#endif /* SHALE_EXT_RTREE_H */
