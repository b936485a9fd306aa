/*
 * os_memdb.c -- the "memdb" VFS: files that live in process memory.
 *
 * Owns: the list of named memory files (MemNode) and their bytes, lock state
 * and private shared-memory regions.
 *
 * A path names a file shared by every open of that name in this process;
 * the file lives until it is deleted (like a file on disk), and while open
 * even after (like an unlinked file). A NULL path or ":memory:" gives a
 * private anonymous file each time, freed when closed.
 *
 * Locks follow exactly the rules of the unix VFS (os_lock.c) with no OS
 * underneath, so two connections on one named file behave like two
 * processes on a disk file. sync is a no-op; shm regions are heap memory.
 *
 * Invariants:
 *  1. mem_mu protects the name list and every MemNode (bytes included).
 *  2. node->nref counts open MemFiles; a node is freed when nref == 0 and it
 *     is not in the name list (anonymous, or deleted).
 *  3. node->size <= node->cap; bytes past size are never read.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "os_int.h"

typedef struct MemNode MemNode;
struct MemNode {
  char *name; /* NULL once anonymous */
  int listed; /* in the name list */
  uint8_t *data;
  int64_t size, cap;
  int nref;
  OsLockShared lk;
  /* shm */
  int shm_nref, region_size, nregion;
  void **regions;
  OsShmLocks shm;
  MemNode *next;
};

typedef struct MemFile {
  OsFile base;
  MemNode *node;
  int lock;
  int readonly;
  int shm_attached;
  uint8_t shm_sh, shm_ex;
} MemFile;

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static MemNode *named;

static void node_free(MemNode *n) {
  for (int i = 0; i < n->nregion; i++) shale_free(n->regions[i]);
  shale_free(n->regions);
  shale_free(n->data);
  shale_free(n->name);
  shale_free(n);
}

static void unlist(MemNode *n) {
  for (MemNode **pp = &named; *pp; pp = &(*pp)->next) {
    if (*pp == n) {
      *pp = n->next;
      n->listed = 0;
      return;
    }
  }
}

static MemNode *lookup(const char *name) {
  for (MemNode *n = named; n; n = n->next)
    if (!strcmp(n->name, name)) return n;
  return NULL;
}

static void shm_detach(MemFile *f) {
  MemNode *n = f->node;
  if (!f->shm_attached) return;
  os_shm_lock_apply(&n->shm, &f->shm_sh, &f->shm_ex, 0, OS_SHM_NLOCK, OS_SHM_UNLOCK | OS_SHM_SHARED,
                    NULL, NULL);
  f->shm_attached = 0;
  if (--n->shm_nref == 0) {
    for (int i = 0; i < n->nregion; i++) shale_free(n->regions[i]);
    shale_free(n->regions);
    n->regions = NULL;
    n->nregion = 0;
    n->region_size = 0;
  }
}

static int mem_close(OsFile *pf) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = f->node;
  if (n) {
    shm_detach(f);
    os_lock_down(&n->lk, &f->lock, OS_LOCK_NONE, NULL, NULL);
    if (--n->nref == 0 && !n->listed) node_free(n);
    f->node = NULL;
  }
  pthread_mutex_unlock(&mem_mu);
  f->base.methods = NULL;
  return SHALE_OK;
}

static int mem_read(OsFile *pf, void *buf, int amt, int64_t off) {
  MemFile *f = (MemFile *)pf;
  int rc = SHALE_OK;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = f->node;
  int64_t have = off >= n->size ? 0 : n->size - off;
  if (have >= amt) {
    memcpy(buf, n->data + off, (size_t)amt);
  } else {
    if (have > 0) memcpy(buf, n->data + off, (size_t)have);
    memset((char *)buf + have, 0, (size_t)(amt - have));
    rc = SHALE_IOERR_SHORT_READ;
  }
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

/* Make room for `size` bytes. The new bytes are not cleared: bytes past
 * size are never read (invariant 3), and writes and truncates that extend
 * the file zero the gap they open. Caller holds mem_mu. */
static int grow(MemNode *n, int64_t size) {
  if (size <= n->cap) return SHALE_OK;
  int64_t cap = n->cap ? n->cap : 4096;
  while (cap < size) cap *= 2;
  if ((uint64_t)cap > (uint64_t)SIZE_MAX) return SHALE_FULL;
  uint8_t *d = shale_realloc(n->data, (size_t)cap);
  if (!d) return SHALE_NOMEM;
  n->data = d;
  n->cap = cap;
  return SHALE_OK;
}

static int mem_write(OsFile *pf, const void *buf, int amt, int64_t off) {
  MemFile *f = (MemFile *)pf;
  if (f->readonly) return SHALE_READONLY;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = f->node;
  int rc = grow(n, off + amt);
  if (rc == SHALE_OK) {
    if (off > n->size) memset(n->data + n->size, 0, (size_t)(off - n->size));
    memcpy(n->data + off, buf, (size_t)amt);
    if (off + amt > n->size) n->size = off + amt;
  }
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_truncate(OsFile *pf, int64_t size) {
  MemFile *f = (MemFile *)pf;
  if (f->readonly) return SHALE_READONLY;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = f->node;
  int rc = SHALE_OK;
  if (size > n->size) {
    rc = grow(n, size);
    if (rc == SHALE_OK) memset(n->data + n->size, 0, (size_t)(size - n->size));
  }
  if (rc == SHALE_OK) n->size = size;
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_sync(OsFile *pf, int flags) {
  (void)pf;
  (void)flags;
  return SHALE_OK;
}

static int mem_file_size(OsFile *pf, int64_t *size) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  *size = f->node->size;
  pthread_mutex_unlock(&mem_mu);
  return SHALE_OK;
}

static int mem_lock(OsFile *pf, int level) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  int rc = os_lock_up(&f->node->lk, &f->lock, level, NULL, NULL);
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_unlock(OsFile *pf, int level) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  int rc = os_lock_down(&f->node->lk, &f->lock, level, NULL, NULL);
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_check_reserved(OsFile *pf, int *out) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  *out = f->node->lk.level > OS_LOCK_SHARED;
  pthread_mutex_unlock(&mem_mu);
  return SHALE_OK;
}

static int mem_sector_size(OsFile *pf) {
  (void)pf;
  return 512;
}

static int mem_device_characteristics(OsFile *pf) {
  (void)pf;
  return OS_IOCAP_ATOMIC | OS_IOCAP_POWERSAFE_OVERWRITE | OS_IOCAP_SAFE_APPEND |
         OS_IOCAP_SEQUENTIAL;
}

static int mem_shm_map(OsFile *pf, int region, int region_size, int extend, volatile void **pp) {
  MemFile *f = (MemFile *)pf;
  int rc = SHALE_OK;
  *pp = NULL;
  if (region < 0 || region_size <= 0) return SHALE_IOERR_SHMMAP;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = f->node;
  if (!f->shm_attached) {
    n->shm_nref++;
    f->shm_attached = 1;
  }
  if (n->region_size == 0) n->region_size = region_size;
  if (n->region_size != region_size) {
    rc = SHALE_IOERR_SHMMAP;
  } else if (region >= n->nregion) {
    if (extend) {
      void **nr = shale_realloc(n->regions, sizeof(void *) * (size_t)(region + 1));
      if (!nr) {
        rc = SHALE_NOMEM;
      } else {
        n->regions = nr;
        while (n->nregion <= region) {
          void *p = shale_malloc((size_t)region_size);
          if (!p) {
            rc = SHALE_NOMEM;
            break;
          }
          memset(p, 0, (size_t)region_size);
          n->regions[n->nregion++] = p;
        }
      }
    }
  }
  if (rc == SHALE_OK && region < n->nregion) *pp = n->regions[region];
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_shm_lock(OsFile *pf, int ofst, int n, int flags) {
  MemFile *f = (MemFile *)pf;
  pthread_mutex_lock(&mem_mu);
  int rc = f->shm_attached ? os_shm_lock_apply(&f->node->shm, &f->shm_sh, &f->shm_ex, ofst, n,
                                               flags, NULL, NULL)
                           : SHALE_IOERR_SHMLOCK;
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static void mem_shm_barrier(OsFile *pf) {
  (void)pf;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  pthread_mutex_lock(&mem_mu);
  pthread_mutex_unlock(&mem_mu);
}

static int mem_shm_unmap(OsFile *pf, int delete_flag) {
  MemFile *f = (MemFile *)pf;
  (void)delete_flag; /* the regions go with the last detach either way */
  pthread_mutex_lock(&mem_mu);
  shm_detach(f);
  pthread_mutex_unlock(&mem_mu);
  return SHALE_OK;
}

static const OsFileMethods mem_methods = {
    mem_close,
    mem_read,
    mem_write,
    mem_truncate,
    mem_sync,
    mem_file_size,
    mem_lock,
    mem_unlock,
    mem_check_reserved,
    mem_sector_size,
    mem_device_characteristics,
    mem_shm_map,
    mem_shm_lock,
    mem_shm_barrier,
    mem_shm_unmap,
    NULL, /* map: no mapped reads (the pager uses read) */
    NULL,
    NULL,
    NULL,
    NULL, /* file_control: none */
};

static int mem_open(OsVfs *vfs, const char *path, OsFile *pf, int flags, int *out_flags) {
  MemFile *f = (MemFile *)pf;
  (void)vfs;
  memset(f, 0, sizeof *f);
  if (out_flags) *out_flags = 0;
  int anon = !path || !strcmp(path, ":memory:");
  MemNode *n = NULL;
  int rc = SHALE_OK;
  pthread_mutex_lock(&mem_mu);
  if (!anon) n = lookup(path);
  if (n) {
    if ((flags & SHALE_OPEN_EXCLUSIVE) && (flags & SHALE_OPEN_CREATE)) rc = SHALE_CANTOPEN;
  } else if (!anon && !(flags & SHALE_OPEN_CREATE)) {
    rc = SHALE_CANTOPEN;
  } else {
    n = shale_malloc(sizeof *n);
    if (!n) {
      rc = SHALE_NOMEM;
    } else {
      memset(n, 0, sizeof *n);
      if (!anon) {
        n->name = util_strdup(path);
        if (!n->name) {
          shale_free(n);
          n = NULL;
          rc = SHALE_NOMEM;
        } else {
          n->next = named;
          named = n;
          n->listed = 1;
        }
      }
    }
  }
  if (rc == SHALE_OK) {
    n->nref++;
    if ((flags & SHALE_OPEN_DELETEONCLOSE) && n->listed) unlist(n);
  }
  pthread_mutex_unlock(&mem_mu);
  if (rc != SHALE_OK) return rc;
  if (anon) flags |= SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE;
  f->node = n;
  f->readonly = !(flags & SHALE_OPEN_READWRITE);
  f->base.methods = &mem_methods;
  if (out_flags) *out_flags = flags;
  return SHALE_OK;
}

static int mem_delete(OsVfs *vfs, const char *path, int sync_dir) {
  (void)vfs;
  (void)sync_dir;
  int rc = SHALE_OK;
  pthread_mutex_lock(&mem_mu);
  MemNode *n = lookup(path);
  if (!n) {
    rc = SHALE_IOERR_DELETE_NOENT;
  } else {
    unlist(n);
    if (n->nref == 0) node_free(n);
  }
  pthread_mutex_unlock(&mem_mu);
  return rc;
}

static int mem_access(OsVfs *vfs, const char *path, int flags, int *res) {
  (void)vfs;
  (void)flags;
  pthread_mutex_lock(&mem_mu);
  *res = lookup(path) != NULL;
  pthread_mutex_unlock(&mem_mu);
  return SHALE_OK;
}

static int mem_full_pathname(OsVfs *vfs, const char *path, int nout, char *out) {
  (void)vfs;
  size_t n = strlen(path);
  if ((int)n + 1 > nout) return SHALE_CANTOPEN_FULLPATH;
  memcpy(out, path, n + 1);
  return SHALE_OK;
}

/* Randomness, sleep and time come from the default OS VFS. */
static int mem_randomness(OsVfs *vfs, int n, char *out) {
  (void)vfs;
  OsVfs *u = os_unix_vfs();
  return u->randomness(u, n, out);
}

static int mem_sleep(OsVfs *vfs, int us) {
  (void)vfs;
  OsVfs *u = os_unix_vfs();
  return u->sleep(u, us);
}

static int mem_current_time_ms(OsVfs *vfs, int64_t *out) {
  (void)vfs;
  OsVfs *u = os_unix_vfs();
  return u->current_time_ms(u, out);
}

static OsVfs memdb_vfs = {
    "memdb",
    (int)sizeof(MemFile),
    1024,
    NULL,
    mem_open,
    mem_delete,
    mem_access,
    mem_full_pathname,
    mem_randomness,
    mem_sleep,
    mem_current_time_ms,
};

OsVfs *os_memdb_vfs(void) { return &memdb_vfs; }
