/*
 * os_dl.c -- shared libraries: open, look a symbol up, close, and the
 * platform's message for the last failure (loadable extensions,
 * src/api/api_loadext.c; the compat VFS's xDlOpen family).
 *
 * Owns: nothing (the handles are the dynamic linker's).
 *
 * Invariants:
 *  1. A library opens as SQLite's unix VFS opens one: dlopen with
 *     RTLD_NOW | RTLD_GLOBAL, so every symbol resolves at once and later
 *     libraries see its symbols.
 *  2. os_dl_error copies the dynamic linker's message for the last failed
 *     call (dlerror, which clears it) into buf, truncated to n-1 bytes;
 *     with no message it leaves buf as it is.
 */
#include <dlfcn.h>
#include <string.h>

#include "os.h"

void *os_dl_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_GLOBAL); }

void *os_dl_sym(void *lib, const char *name) { return lib ? dlsym(lib, name) : NULL; }

void os_dl_close(void *lib) {
  if (lib) dlclose(lib);
}

void os_dl_error(char *buf, int n) {
  const char *e = dlerror();
  if (!e || n <= 0) return;
  size_t k = strlen(e);
  if (k > (size_t)n - 1) k = (size_t)n - 1;
  memcpy(buf, e, k);
  buf[k] = 0;
}
