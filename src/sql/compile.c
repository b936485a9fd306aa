/*
 * compile.c -- placeholder until the core part lands (see compile.h): the
 * error and arena helpers only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

static void verror(Parse *p, int rc, const char *fmt, va_list ap) {
  if (p->rc) return;
  p->rc = rc;
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  p->errmsg = util_strdup(buf);
}
void parse_error(Parse *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, SHALE_ERROR, fmt, ap);
  va_end(ap);
}
void parse_error_code(Parse *p, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, rc, fmt, ap);
  va_end(ap);
}
void parse_nomem(Parse *p) {
  if (!p->rc) p->rc = SHALE_NOMEM;
}
void *parse_alloc(Parse *p, size_t n) {
  void *r = util_arena_zalloc(&p->arena, n);
  if (!r) parse_nomem(p);
  return r;
}
char *parse_strdup(Parse *p, const char *z) {
  char *r = util_arena_strndup(&p->arena, z, strlen(z));
  if (!r) parse_nomem(p);
  return r;
}
