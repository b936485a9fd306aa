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
    if (*x == *y) { /* the common case: same byte */
      if (!*x) return 0;
      continue;
    }
    int d = lower(*x) - lower(*y);
    if (d) return d;
  }
  return 0;
}

int util_stricmp(const char *a, const char *b) { return util_strnicmp(a, b, 0x7fffffff); }

/* The text of each primary code, as SQLite words it (index = code), and of
 * the extended codes SQLite words apart: both from result_codes.def. */
static const char *const rc_text[] = {
#define PRIMARY(name, num, text) [SHALE_##name] = text,
#define EXTENDED(name, prim, detail, text)
#include "result_codes.def"
#undef PRIMARY
#undef EXTENDED
};

const char *shale_errstr(int rc) {
  switch (rc) {
#define PRIMARY(name, num, text)
#define EXTENDED(name, prim, detail, text) \
  case SHALE_##name:                       \
    if (text) return text;                 \
    break;
#include "result_codes.def"
#undef PRIMARY
#undef EXTENDED
    default:
      break;
  }
  rc &= 0xff;
  if (rc >= 0 && rc < (int)(sizeof rc_text / sizeof rc_text[0]) && rc_text[rc]) return rc_text[rc];
  return "unknown error";
}

const char *shale_libversion(void) { return SHALE_VERSION; }
int shale_libversion_number(void) { return SHALE_VERSION_NUMBER; }
