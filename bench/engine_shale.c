/*
 * engine_shale.c -- the benchmark workloads compiled against Shale's native
 * API (include/shale.h, build/libshale.a).
 */
#include "shale.h"

#define E(x) shale_##x
#define EDB shale
#define ESTMT shale_stmt
#define E_OK SHALE_OK
#define E_ROW SHALE_ROW
#define E_DONE SHALE_DONE
#define E_INTEGER SHALE_INTEGER
#define E_FLOAT SHALE_FLOAT
#define E_TEXT SHALE_TEXT
#define E_BLOB SHALE_BLOB
#define E_NULL SHALE_NULL
#define E_TRANSIENT SHALE_TRANSIENT
#define E_STATIC SHALE_STATIC
#define E_OPEN_RW (SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE)
#define ROWS_NAME bench_rows_shale
#define FINISH_NAME bench_finish_shale
#include "workloads.inc"
