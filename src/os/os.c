/*
 * os.c -- the VFS registry and the helpers every VFS user needs.
 *
 * Owns: the list of registered VFSes (a fixed-size table protected by a
 * mutex), the default VFS, os_open_alloc/os_close_free and os_now_ms.
 *
 * Invariants:
 *  1. The built-in "unix" (default) and "memdb" VFSes are registered lazily
 *     on the first registry call, exactly once (pthread_once).
 *  2. A VFS appears in the table at most once; the default, if any, is in
 *     the table.
 *  3. os_open_alloc hands back either an open file or nothing: on failure the
 *     memory is already freed and *out is NULL.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "os_int.h"

#define MAX_VFS 32

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static OsVfs *reg[MAX_VFS];
static int nreg;
static OsVfs *dflt;

static void reg_init(void) {
  pthread_mutex_lock(&reg_mu);
  reg[nreg++] = os_unix_vfs();
  reg[nreg++] = os_memdb_vfs();
  dflt = reg[0];
  pthread_mutex_unlock(&reg_mu);
}

static int find_locked(const OsVfs *v) {
  for (int i = 0; i < nreg; i++)
    if (reg[i] == v) return i;
  return -1;
}

OsVfs *os_vfs_find(const char *name) {
  OsVfs *v = NULL;
  pthread_once(&reg_once, reg_init);
  pthread_mutex_lock(&reg_mu);
  if (!name) {
    v = dflt;
  } else {
    for (int i = 0; i < nreg; i++) {
      if (!strcmp(reg[i]->name, name)) {
        v = reg[i];
        break;
      }
    }
  }
  pthread_mutex_unlock(&reg_mu);
  return v;
}

int os_vfs_register(OsVfs *v, int make_default) {
  int rc = SHALE_OK;
  if (!v || !v->name) return SHALE_MISUSE;
  pthread_once(&reg_once, reg_init);
  pthread_mutex_lock(&reg_mu);
  if (find_locked(v) < 0) {
    if (nreg == MAX_VFS) {
      rc = SHALE_FULL;
    } else {
      /* newest first, so a new VFS shadows an older one of the same name */
      memmove(reg + 1, reg, sizeof reg[0] * (size_t)nreg);
      reg[0] = v;
      nreg++;
    }
  }
  if (rc == SHALE_OK && make_default) dflt = v;
  pthread_mutex_unlock(&reg_mu);
  return rc;
}

int os_vfs_unregister(OsVfs *v) {
  pthread_once(&reg_once, reg_init);
  pthread_mutex_lock(&reg_mu);
  int i = find_locked(v);
  if (i >= 0) {
    memmove(reg + i, reg + i + 1, sizeof reg[0] * (size_t)(nreg - i - 1));
    nreg--;
    if (dflt == v) dflt = nreg > 0 ? reg[0] : NULL;
  }
  pthread_mutex_unlock(&reg_mu);
  return SHALE_OK;
}

int os_open_alloc(OsVfs *vfs, const char *path, int flags, int *out_flags, OsFile **out) {
  *out = NULL;
  OsFile *f = shale_malloc((size_t)vfs->file_size);
  if (!f) return SHALE_NOMEM;
  memset(f, 0, (size_t)vfs->file_size);
  int rc = vfs->open(vfs, path, f, flags, out_flags);
  if (rc != SHALE_OK) {
    if (f->methods) f->methods->close(f);
    shale_free(f);
    return rc;
  }
  *out = f;
  return SHALE_OK;
}

int os_close_free(OsFile *f) {
  int rc = SHALE_OK;
  if (!f) return SHALE_OK;
  if (f->methods) rc = f->methods->close(f);
  shale_free(f);
  return rc;
}

int64_t os_now_ms(void) { return os_now_us() / 1000; }

int64_t os_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
