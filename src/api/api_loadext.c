/*
 * api_loadext.c -- loadable extensions: shale_load_extension (SQLite's
 * sqlite3_load_extension rules), the load_extension() SQL function's
 * callback, the two switches, and automatic extensions.
 *
 * Owns: db->ext_libs (the libraries a connection loaded; closed by
 * api_loadext_close after everything else at close, since the functions,
 * collations and modules they registered point into them) and the
 * process-wide list of automatic entry points.
 *
 * Invariants:
 *  1. The texts are SQLite's 3.40.1 ones: "not authorized"; the dynamic
 *     linker's message for a file that does not open or an entry point that
 *     is missing (SQLite's own "unable to open shared library [...]" / "no
 *     entry point [...] in shared library [...]" only when the linker gives
 *     none), cut to SQLite's buffer size; "error during initialization: %s";
 *     "automatic extension loading failed: %s" for an automatic one.
 *  2. A load never touches the connection's error state (SQLite's does not):
 *     the result is the return code and *errmsg.
 *  3. An entry point that returns SHALE_OK_LOAD_PERMANENTLY leaves its library
 *     open for the life of the process (not in ext_libs); one that fails has
 *     its library closed again.
 *  4. The automatic list holds each entry point once, in registration order,
 *     under auto_mu; the entries run at open without the lock held (an entry
 *     may register or cancel others), each read fresh by index.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../os/os.h"
#include "api_int.h"

typedef int (*ExtEntry)(shale *db, char **errmsg, const void *api);

static const void *ext_api; /* shale_set_extension_api */

void shale_set_extension_api(const void *api) { __atomic_store_n(&ext_api, api, __ATOMIC_RELEASE); }

static const void *api_table(void) { return __atomic_load_n(&ext_api, __ATOMIC_ACQUIRE); }

/* "sqlite3_X_init" from the file name (header comment of shale.h). */
static char *derived_entry(const char *file) {
  size_t n = strlen(file), i = n;
  while (i > 0 && file[i - 1] != '/') i--;
  if (!util_strnicmp(file + i, "lib", 3)) i += 3;
  char *z = shale_malloc(n + 30);
  if (!z) return NULL;
  memcpy(z, "sqlite3_", 8);
  size_t k = 8;
  for (; file[i] && file[i] != '.'; i++) {
    char c = file[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) z[k++] = (char)(c | 0x20);
  }
  memcpy(z + k, "_init", 6);
  return z;
}

/* SQLite's message: its own text, replaced by the linker's when it has one,
 * in a buffer of cap bytes. */
static char *dl_message(size_t cap, const char *fmt, const char *a, const char *b) {
  char *m = shale_malloc(cap);
  if (!m) return NULL;
  snprintf(m, cap, fmt, a, b);
  os_dl_error(m, (int)cap - 1);
  return m;
}

static int keep_lib(shale *db, void *lib) {
  void **a = shale_realloc(db->ext_libs, sizeof *a * (size_t)(db->next_libs + 1));
  if (!a) return SHALE_NOMEM;
  a[db->next_libs++] = lib;
  db->ext_libs = a;
  return SHALE_OK;
}

static int load_impl(shale *db, const char *file, const char *proc, char **errmsg) {
  if (errmsg) *errmsg = NULL;
  if (db->cfg.no_load_ext) {
    if (errmsg) *errmsg = util_strdup("not authorized");
    return SHALE_ERROR;
  }
  size_t cap = 300 + strlen(file);
  void *lib = os_dl_open(file);
  if (!lib) {
    char *alt = util_mprintf("%s.so", file);
    if (!alt) return SHALE_NOMEM;
    lib = os_dl_open(alt);
    shale_free(alt);
  }
  if (!lib) {
    if (errmsg) *errmsg = dl_message(cap, "unable to open shared library [%s]", file, NULL);
    return SHALE_ERROR;
  }
  const char *entry = proc ? proc : "sqlite3_extension_init";
  ExtEntry fn = (ExtEntry)os_dl_sym(lib, entry);
  char *alt = NULL;
  if (!fn && !proc) {
    alt = derived_entry(file);
    if (!alt) {
      os_dl_close(lib);
      return SHALE_NOMEM;
    }
    entry = alt;
    fn = (ExtEntry)os_dl_sym(lib, entry);
  }
  if (!fn) {
    if (errmsg)
      *errmsg = dl_message(cap + strlen(entry), "no entry point [%s] in shared library [%s]", entry,
                           file);
    shale_free(alt);
    os_dl_close(lib);
    return SHALE_ERROR;
  }
  shale_free(alt);
  char *err = NULL;
  int rc = fn(db, &err, api_table());
  if (rc == SHALE_OK_LOAD_PERMANENTLY) {
    shale_free(err);
    return SHALE_OK;
  }
  if (rc != SHALE_OK) {
    if (errmsg) *errmsg = util_mprintf("error during initialization: %s", err ? err : "");
    shale_free(err);
    os_dl_close(lib);
    return SHALE_ERROR;
  }
  shale_free(err);
  if (keep_lib(db, lib) != SHALE_OK) {
    os_dl_close(lib);
    return SHALE_NOMEM;
  }
  return SHALE_OK;
}

int shale_load_extension(shale *db, const char *file, const char *proc, char **errmsg) {
  if (errmsg) *errmsg = NULL;
  if (!file) return shale_db_live(db) ? SHALE_ERROR : SHALE_MISUSE;
  API_DB_CALL(db, SHALE_MISUSE, load_impl(db, file, proc, errmsg));
}

static int enable_impl(shale *db, int onoff) {
  db->cfg.no_load_ext = onoff == 0;
  db->cfg.load_ext_func = onoff != 0;
  return SHALE_OK;
}

int shale_enable_load_extension(shale *db, int onoff) {
  API_DB_CALL(db, SHALE_MISUSE, enable_impl(db, onoff));
}

/* db_config ENABLE_LOAD_EXTENSION: the C call's switch (api_ext.c). */
int api_loadext_switch(shale *db, int onoff) {
  if (onoff >= 0) db->cfg.no_load_ext = onoff == 0;
  return !db->cfg.no_load_ext;
}

/* FuncConnCallbacks.load_extension: the SQL function, allowed only by
 * shale_enable_load_extension. */
int api_loadext_sql(void *conn, const char *file, const char *proc, char **errmsg) {
  shale *db = conn;
  if (!db->cfg.load_ext_func) {
    *errmsg = util_strdup("not authorized");
    return SHALE_ERROR;
  }
  return load_impl(db, file, proc, errmsg);
}

void api_loadext_close(shale *db) {
  for (int i = db->next_libs - 1; i >= 0; i--) os_dl_close(db->ext_libs[i]);
  shale_free(db->ext_libs);
  db->ext_libs = NULL;
  db->next_libs = 0;
}

/* ------------------------------------------------------------ automatic */

static pthread_mutex_t auto_mu = PTHREAD_MUTEX_INITIALIZER;
static void (**auto_list)(void);
static int auto_n;

int shale_auto_extension(void (*entry)(void)) {
  if (!entry) return SHALE_OK; /* as SQLite without API armor: nothing to run */
  int rc = SHALE_OK;
  pthread_mutex_lock(&auto_mu);
  int i = 0;
  while (i < auto_n && auto_list[i] != entry) i++;
  if (i == auto_n) {
    void (**a)(void) = shale_realloc(auto_list, sizeof *a * (size_t)(auto_n + 1));
    if (a) {
      a[auto_n++] = entry;
      auto_list = a;
    } else {
      rc = SHALE_NOMEM;
    }
  }
  pthread_mutex_unlock(&auto_mu);
  return rc;
}

int shale_cancel_auto_extension(void (*entry)(void)) {
  int found = 0;
  pthread_mutex_lock(&auto_mu);
  for (int i = 0; i < auto_n; i++) {
    if (auto_list[i] != entry) continue;
    memmove(auto_list + i, auto_list + i + 1, sizeof *auto_list * (size_t)(auto_n - i - 1));
    auto_n--;
    found = 1;
    break;
  }
  pthread_mutex_unlock(&auto_mu);
  return found;
}

void shale_reset_auto_extension(void) {
  pthread_mutex_lock(&auto_mu);
  shale_free(auto_list);
  auto_list = NULL;
  auto_n = 0;
  pthread_mutex_unlock(&auto_mu);
}

/* At the end of an open (invariant 4): the first failure stops the rest. */
int api_auto_extensions(shale *db) {
  for (int i = 0;; i++) {
    pthread_mutex_lock(&auto_mu);
    void (*e)(void) = i < auto_n ? auto_list[i] : NULL;
    pthread_mutex_unlock(&auto_mu);
    if (!e) return SHALE_OK;
    char *err = NULL;
    int rc = ((ExtEntry)e)(db, &err, api_table());
    if (rc != SHALE_OK) {
      api_error(db, rc, "automatic extension loading failed: %s", err ? err : "");
      shale_free(err);
      return rc;
    }
    shale_free(err);
  }
}
