/*
 * str.c -- small string helpers on shale_malloc memory, result-code text and
 * the library's version.
 */
#include <stdio.h>
#include <string.h>

#include "util.h"

char *util_vmprintf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *s = shale_malloc((size_t)n + 1);
  if (!s) return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *util_mprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = util_vmprintf(fmt, ap);
  va_end(ap);
  return s;
}

char *util_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = shale_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

int util_strnicmp(const char *a, const char *b, int n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n > 0; n--, x++, y++) {
    int d = lower(*x) - lower(*y);
    if (d || !*x) return d;
  }
  return 0;
}

int util_stricmp(const char *a, const char *b) { return util_strnicmp(a, b, 0x7fffffff); }

/* The text of each primary code, as SQLite words it (index = code). */
static const char *const rc_text[] = {
    [SHALE_OK] = "not an error",
    [SHALE_ERROR] = "SQL logic error",
    [SHALE_INTERNAL] = 0,
    [SHALE_PERM] = "access permission denied",
    [SHALE_ABORT] = "query aborted",
    [SHALE_BUSY] = "database is locked",
    [SHALE_LOCKED] = "database table is locked",
    [SHALE_NOMEM] = "out of memory",
    [SHALE_READONLY] = "attempt to write a readonly database",
    [SHALE_INTERRUPT] = "interrupted",
    [SHALE_IOERR] = "disk I/O error",
    [SHALE_CORRUPT] = "database disk image is malformed",
    [SHALE_NOTFOUND] = "unknown operation",
    [SHALE_FULL] = "database or disk is full",
    [SHALE_CANTOPEN] = "unable to open database file",
    [SHALE_PROTOCOL] = "locking protocol",
    [SHALE_EMPTY] = 0,
    [SHALE_SCHEMA] = "database schema has changed",
    [SHALE_TOOBIG] = "string or blob too big",
    [SHALE_CONSTRAINT] = "constraint failed",
    [SHALE_MISMATCH] = "datatype mismatch",
    [SHALE_MISUSE] = "bad parameter or other API misuse",
    [SHALE_NOLFS] = 0,
    [SHALE_AUTH] = "authorization denied",
    [SHALE_FORMAT] = 0,
    [SHALE_RANGE] = "column index out of range",
    [SHALE_NOTADB] = "file is not a database",
    [SHALE_NOTICE] = "notification message",
    [SHALE_WARNING] = "warning message",
};

const char *shale_errstr(int rc) {
  switch (rc) {
    case SHALE_ABORT_ROLLBACK: return "abort due to ROLLBACK";
    case SHALE_ROW: return "another row available";
    case SHALE_DONE: return "no more rows available";
    default: break;
  }
  rc &= 0xff;
  if (rc >= 0 && rc < (int)(sizeof rc_text / sizeof rc_text[0]) && rc_text[rc]) return rc_text[rc];
  return "unknown error";
}

const char *shale_libversion(void) { return SHALE_VERSION; }
int shale_libversion_number(void) { return SHALE_VERSION_NUMBER; }
