/*
 * spatialite.c -- a third-party extension of real size through the library:
 * Debian's mod_spatialite (libsqlite3-mod-spatialite) loaded with
 * sqlite3_load_extension, then spatial metadata, a geometry column, an
 * R-Tree spatial index and a few spatial functions. The output is compared
 * with the reference library's (test_compat.c, run_same).
 *
 * Invariants:
 *  1. Without mod_spatialite installed it prints "no mod_spatialite" and
 *     exits 0 on both libraries (tests/deps.sh installs it).
 */
#include "prog.h"

static int print_row(void *arg, int n, char **v, char **names) {
  (void)arg, (void)names;
  for (int i = 0; i < n; i++) printf("%s%s", i ? "|" : "", v[i] ? v[i] : "NULL");
  printf("\n");
  return 0;
}

static const char *const script[] = {
    "SELECT InitSpatialMetadata(1)",
    "CREATE TABLE parcels(id INTEGER PRIMARY KEY, name TEXT)",
    "SELECT AddGeometryColumn('parcels', 'geom', 4326, 'POLYGON', 'XY')",
    "INSERT INTO parcels(id, name, geom) VALUES"
    " (1, 'a', GeomFromText('POLYGON((0 0, 4 0, 4 3, 0 3, 0 0))', 4326)),"
    " (2, 'b', GeomFromText('POLYGON((2 1, 6 1, 6 5, 2 5, 2 1))', 4326)),"
    " (3, 'c', GeomFromText('POLYGON((10 10, 11 10, 11 12, 10 10))', 4326))",
    "SELECT id, name, ST_Area(geom), AsText(ST_Centroid(geom)), ST_IsValid(geom) FROM parcels"
    " ORDER BY id",
    "SELECT a.id, b.id, ST_Intersects(a.geom, b.geom), ST_Area(ST_Intersection(a.geom, b.geom))"
    " FROM parcels a, parcels b WHERE a.id < b.id ORDER BY 1, 2",
    "SELECT CreateSpatialIndex('parcels', 'geom')",
    "SELECT id FROM parcels WHERE ROWID IN (SELECT ROWID FROM SpatialIndex"
    " WHERE f_table_name = 'parcels' AND search_frame = BuildMbr(3, 2, 5, 4)) ORDER BY id",
    "UPDATE parcels SET geom = ST_Translate(geom, 100, 0, 0) WHERE id = 2",
    "SELECT id, AsText(ST_Envelope(geom)) FROM parcels ORDER BY id",
    "SELECT count(*) FROM idx_parcels_geom WHERE xmin > 50",
    "SELECT rtreecheck('idx_parcels_geom')",
    "DELETE FROM parcels WHERE id = 1",
    "SELECT f_table_name, f_geometry_column, geometry_type, srid, spatial_index_enabled"
    " FROM geometry_columns",
    "SELECT ST_Distance(MakePoint(0, 0), MakePoint(3, 4)), AsText(ST_Buffer(MakePoint(1, 1), 0))",
    "SELECT count(*) FROM spatial_ref_sys WHERE srid = 4326",
    "PRAGMA integrity_check",
};

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_enable_load_extension(db, 1), SQLITE_OK);
  char *err = NULL;
  if (sqlite3_load_extension(db, "mod_spatialite", NULL, &err) != SQLITE_OK) {
    printf("no mod_spatialite (%s)\n", err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 0;
  }
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
    printf("-- %.60s\n", script[i]);
    if (sqlite3_exec(db, script[i], print_row, NULL, &err) != SQLITE_OK) {
      printf("error: %s\n", err ? err : "?");
      sqlite3_free(err);
      err = NULL;
    }
  }
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_failed ? 1 : 0;
}
