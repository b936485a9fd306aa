/*
 * os_fault.c -- the fault-injecting VFS, for tests.
 *
 * os_fault_vfs_create(name, base) makes a VFS that forwards everything to
 * `base`, and can (a) fail the n-th read/write/sync/truncate from now, once
 * or persistently, and (b) simulate a power loss.
 *
 * Power-loss model (what "durable" means here):
 *  - Each path opened through this VFS has a FaultNode holding an undo log:
 *    for every write and truncate since the last successful sync of that
 *    path (through any handle), the bytes it overwrote and the size before.
 *    Handles of one path share the node, so a sync through one handle makes
 *    every handle's earlier writes durable, as fsync does for an inode.
 *    Nodes are keyed by the path string as given to open(); anonymous files
 *    (NULL path) get a private node.
 *  - A successful sync empties the log. Deleting a path counts as durable
 *    (the directory was synced) and drops the path's log; files created but
 *    never synced keep their directory entry (only content is modeled).
 *  - A closed file keeps its log until power loss or until the path is
 *    synced again or deleted, so unsynced writes of closed files are lost too.
 *  - os_fault_power_loss(keep, tear) undoes, newest first, every logged
 *    operation of each node except its oldest `keep` ones (writes and
 *    truncates both count as operations, and os_fault_unsynced counts the
 *    same operations). With `tear`, the newest kept operation, if a write,
 *    keeps only its first (amt/2 rounded down to a multiple of 512) bytes;
 *    the rest of its range gets its old bytes back, and the size is what it
 *    was before that write or just past the kept part, whichever is larger.
 *    The undo is applied to the base files (through an open handle, or by
 *    reopening the path on the base VFS). Every handle open at that moment
 *    then fails every operation with SHALE_IOERR except close ("the machine
 *    is off"); handles opened afterwards work normally.
 *
 * Invariants:
 *  1. fv->mu protects the counters, the arming state, the node list and
 *     every undo log; it is held across the forwarded write/truncate/sync so
 *     a log always matches the base file.
 *  2. node->nopen counts open handles; a node with nopen == 0 and an empty
 *     log is freed.
 *  3. An injected failure does not reach the base VFS: the operation has no
 *     effect at all.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "os_int.h"

typedef struct Undo {
  int64_t off;      /* first byte changed */
  int amt;          /* bytes written (0 for a truncate) */
  int64_t old_size; /* file size before */
  uint8_t *old;     /* old bytes of [off, off + nold) */
  int64_t nold;
} Undo;

typedef struct FaultNode FaultNode;
struct FaultNode {
  char *path; /* NULL for anonymous files */
  int nopen;
  Undo *undo;
  int nundo, cundo;
  FaultNode *next;
};

typedef struct FaultFile FaultFile;
typedef struct FaultVfs FaultVfs;

struct FaultFile {
  OsFile base;
  FaultVfs *fv;
  FaultNode *node;
  OsFile *real;
  int dead; /* open at a power loss */
  FaultFile *next;
};

struct FaultVfs {
  OsVfs vfs; /* first: an OsVfs* is a FaultVfs* */
  OsVfs *base;
  char *name;
  pthread_mutex_t mu;
  long count[OS_FAULT_NKIND];
  long countdown[OS_FAULT_NKIND];
  int persist[OS_FAULT_NKIND];
  int failing[OS_FAULT_NKIND]; /* persistent failure has started */
  FaultNode *nodes;
  FaultFile *files;
};

/* Count an operation of `kind`; nonzero if it must fail. Caller holds mu. */
static int tick(FaultVfs *fv, int kind) {
  fv->count[kind]++;
  if (fv->failing[kind]) return 1;
  if (fv->countdown[kind] > 0 && --fv->countdown[kind] == 0) {
    if (fv->persist[kind]) fv->failing[kind] = 1;
    return 1;
  }
  return 0;
}

static void log_clear(FaultNode *n) {
  for (int i = 0; i < n->nundo; i++) shale_free(n->undo[i].old);
  n->nundo = 0;
}

static void node_maybe_free(FaultVfs *fv, FaultNode *n) {
  if (n->nopen > 0 || n->nundo > 0) return;
  for (FaultNode **pp = &fv->nodes; *pp; pp = &(*pp)->next) {
    if (*pp == n) {
      *pp = n->next;
      break;
    }
  }
  shale_free(n->undo);
  shale_free(n->path);
  shale_free(n);
}

/* Append an undo record for a change of [off, off+len) (len = bytes the
 * change may overwrite) on `real`. Caller holds mu. */
static int log_change(FaultNode *n, OsFile *real, int64_t off, int amt, int64_t len) {
  int64_t size;
  int rc = real->methods->file_size(real, &size);
  if (rc != SHALE_OK) return rc;
  if (n->nundo == n->cundo) {
    int c = n->cundo ? n->cundo * 2 : 16;
    Undo *u = shale_realloc(n->undo, sizeof(Undo) * (size_t)c);
    if (!u) return SHALE_NOMEM;
    n->undo = u;
    n->cundo = c;
  }
  Undo *u = &n->undo[n->nundo];
  memset(u, 0, sizeof *u);
  u->off = off;
  u->amt = amt;
  u->old_size = size;
  int64_t end = off + len < size ? off + len : size;
  if (end > off) {
    if (end - off > INT32_MAX) return SHALE_NOMEM; /* beyond what a test needs */
    u->nold = end - off;
    u->old = shale_malloc((size_t)u->nold);
    if (!u->old) return SHALE_NOMEM;
    rc = real->methods->read(real, u->old, (int)u->nold, off);
    if (rc != SHALE_OK && rc != SHALE_IOERR_SHORT_READ) {
      shale_free(u->old);
      return rc;
    }
  }
  n->nundo++;
  return SHALE_OK;
}

/* ---------------------------------------------------------------- files */

static int f_close(OsFile *pf) {
  FaultFile *f = (FaultFile *)pf;
  FaultVfs *fv = f->fv;
  int rc = os_close_free(f->real);
  f->real = NULL;
  pthread_mutex_lock(&fv->mu);
  for (FaultFile **pp = &fv->files; *pp; pp = &(*pp)->next) {
    if (*pp == f) {
      *pp = f->next;
      break;
    }
  }
  FaultNode *n = f->node;
  n->nopen--;
  if (!n->path) log_clear(n); /* an anonymous file is gone for good */
  node_maybe_free(fv, n);
  pthread_mutex_unlock(&fv->mu);
  f->base.methods = NULL;
  return rc;
}

#define DEAD_CHECK(f)                                                      \
  do {                                                                     \
    if (__atomic_load_n(&(f)->dead, __ATOMIC_ACQUIRE)) return SHALE_IOERR; \
  } while (0)
/* The same, holding fv->mu: an operation that passed DEAD_CHECK and then
 * waited for the mutex while os_fault_power_loss ran must fail too, or a
 * write or sync would land after the crash image was made. */
#define DEAD_CHECK_LOCKED(f, fv)                         \
  do {                                                   \
    if (__atomic_load_n(&(f)->dead, __ATOMIC_ACQUIRE)) { \
      pthread_mutex_unlock(&(fv)->mu);                   \
      return SHALE_IOERR;                                \
    }                                                    \
  } while (0)

static int f_read(OsFile *pf, void *buf, int amt, int64_t off) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  pthread_mutex_lock(&f->fv->mu);
  int fail = tick(f->fv, OS_FAULT_READ);
  pthread_mutex_unlock(&f->fv->mu);
  if (fail) return SHALE_IOERR_READ;
  return f->real->methods->read(f->real, buf, amt, off);
}

static int f_write(OsFile *pf, const void *buf, int amt, int64_t off) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  FaultVfs *fv = f->fv;
  pthread_mutex_lock(&fv->mu);
  DEAD_CHECK_LOCKED(f, fv);
  int rc = tick(fv, OS_FAULT_WRITE) ? SHALE_IOERR_WRITE : SHALE_OK;
  if (rc == SHALE_OK) rc = log_change(f->node, f->real, off, amt, amt);
  if (rc == SHALE_OK) rc = f->real->methods->write(f->real, buf, amt, off);
  pthread_mutex_unlock(&fv->mu);
  return rc;
}

static int f_truncate(OsFile *pf, int64_t size) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  FaultVfs *fv = f->fv;
  pthread_mutex_lock(&fv->mu);
  DEAD_CHECK_LOCKED(f, fv);
  int rc = tick(fv, OS_FAULT_TRUNCATE) ? SHALE_IOERR_TRUNCATE : SHALE_OK;
  if (rc == SHALE_OK) rc = log_change(f->node, f->real, size, 0, INT64_MAX / 2 - size);
  if (rc == SHALE_OK) rc = f->real->methods->truncate(f->real, size);
  pthread_mutex_unlock(&fv->mu);
  return rc;
}

static int f_sync(OsFile *pf, int flags) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  FaultVfs *fv = f->fv;
  pthread_mutex_lock(&fv->mu);
  DEAD_CHECK_LOCKED(f, fv);
  int rc = tick(fv, OS_FAULT_SYNC) ? SHALE_IOERR_FSYNC : SHALE_OK;
  if (rc == SHALE_OK) rc = f->real->methods->sync(f->real, flags);
  if (rc == SHALE_OK) log_clear(f->node);
  pthread_mutex_unlock(&fv->mu);
  return rc;
}

static int f_file_size(OsFile *pf, int64_t *size) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  return f->real->methods->file_size(f->real, size);
}

static int f_lock(OsFile *pf, int level) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  return f->real->methods->lock(f->real, level);
}

static int f_unlock(OsFile *pf, int level) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  return f->real->methods->unlock(f->real, level);
}

static int f_check_reserved(OsFile *pf, int *out) {
  FaultFile *f = (FaultFile *)pf;
  *out = 0;
  DEAD_CHECK(f);
  return f->real->methods->check_reserved(f->real, out);
}

static int f_sector_size(OsFile *pf) {
  FaultFile *f = (FaultFile *)pf;
  return f->real->methods->sector_size(f->real);
}

static int f_device_characteristics(OsFile *pf) {
  FaultFile *f = (FaultFile *)pf;
  return f->real->methods->device_characteristics(f->real);
}

static int f_shm_map(OsFile *pf, int region, int size, int extend, volatile void **pp) {
  FaultFile *f = (FaultFile *)pf;
  *pp = NULL;
  DEAD_CHECK(f);
  return f->real->methods->shm_map(f->real, region, size, extend, pp);
}

static int f_shm_lock(OsFile *pf, int ofst, int n, int flags) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  return f->real->methods->shm_lock(f->real, ofst, n, flags);
}

static void f_shm_barrier(OsFile *pf) {
  FaultFile *f = (FaultFile *)pf;
  f->real->methods->shm_barrier(f->real);
}

static int f_shm_unmap(OsFile *pf, int delete_flag) {
  FaultFile *f = (FaultFile *)pf;
  DEAD_CHECK(f);
  return f->real->methods->shm_unmap(f->real, delete_flag);
}

static const OsFileMethods fault_methods = {
    f_close,
    f_read,
    f_write,
    f_truncate,
    f_sync,
    f_file_size,
    f_lock,
    f_unlock,
    f_check_reserved,
    f_sector_size,
    f_device_characteristics,
    f_shm_map,
    f_shm_lock,
    f_shm_barrier,
    f_shm_unmap,
    NULL, /* map: no mapped reads (the pager uses read) */
    NULL,
    NULL,
    NULL,
    NULL, /* file_control: none */
};

/* ------------------------------------------------------------------ vfs */

static int v_open(OsVfs *vfs, const char *path, OsFile *pf, int flags, int *out_flags) {
  FaultVfs *fv = (FaultVfs *)vfs;
  FaultFile *f = (FaultFile *)pf;
  memset(f, 0, sizeof *f);
  OsFile *real = NULL;
  int rc = os_open_alloc(fv->base, path, flags, out_flags, &real);
  if (rc != SHALE_OK) return rc;
  pthread_mutex_lock(&fv->mu);
  FaultNode *n = NULL;
  if (path && !(flags & SHALE_OPEN_DELETEONCLOSE)) {
    for (n = fv->nodes; n; n = n->next)
      if (n->path && !strcmp(n->path, path)) break;
  }
  if (!n) {
    n = shale_malloc(sizeof *n);
    if (n) {
      memset(n, 0, sizeof *n);
      if (path && !(flags & SHALE_OPEN_DELETEONCLOSE)) {
        n->path = util_strdup(path);
        if (!n->path) {
          shale_free(n);
          n = NULL;
        }
      }
    }
    if (n) {
      n->next = fv->nodes;
      fv->nodes = n;
    }
  }
  if (!n) {
    pthread_mutex_unlock(&fv->mu);
    os_close_free(real);
    return SHALE_NOMEM;
  }
  n->nopen++;
  f->fv = fv;
  f->node = n;
  f->real = real;
  f->next = fv->files;
  fv->files = f;
  pthread_mutex_unlock(&fv->mu);
  f->base.methods = &fault_methods;
  return SHALE_OK;
}

static int v_delete(OsVfs *vfs, const char *path, int sync_dir) {
  FaultVfs *fv = (FaultVfs *)vfs;
  int rc = fv->base->delete (fv->base, path, sync_dir);
  if (rc == SHALE_OK) {
    pthread_mutex_lock(&fv->mu);
    for (FaultNode *n = fv->nodes; n; n = n->next) {
      if (n->path && !strcmp(n->path, path)) {
        /* the name is gone; open handles now point at an unnamed file */
        log_clear(n);
        shale_free(n->path);
        n->path = NULL;
        node_maybe_free(fv, n);
        break;
      }
    }
    pthread_mutex_unlock(&fv->mu);
  }
  return rc;
}

static int v_access(OsVfs *vfs, const char *path, int flags, int *res) {
  FaultVfs *fv = (FaultVfs *)vfs;
  return fv->base->access(fv->base, path, flags, res);
}

static int v_full_pathname(OsVfs *vfs, const char *path, int nout, char *out) {
  FaultVfs *fv = (FaultVfs *)vfs;
  return fv->base->full_pathname(fv->base, path, nout, out);
}

static int v_randomness(OsVfs *vfs, int n, char *out) {
  FaultVfs *fv = (FaultVfs *)vfs;
  return fv->base->randomness(fv->base, n, out);
}

static int v_sleep(OsVfs *vfs, int us) {
  FaultVfs *fv = (FaultVfs *)vfs;
  return fv->base->sleep(fv->base, us);
}

static int v_current_time_ms(OsVfs *vfs, int64_t *out) {
  FaultVfs *fv = (FaultVfs *)vfs;
  return fv->base->current_time_ms(fv->base, out);
}

OsVfs *os_fault_vfs_create(const char *name, OsVfs *base) {
  if (!name || !base) return NULL;
  FaultVfs *fv = shale_malloc(sizeof *fv);
  if (!fv) return NULL;
  memset(fv, 0, sizeof *fv);
  fv->name = util_strdup(name);
  if (!fv->name) {
    shale_free(fv);
    return NULL;
  }
  pthread_mutex_init(&fv->mu, NULL);
  fv->base = base;
  fv->vfs.name = fv->name;
  fv->vfs.file_size = (int)sizeof(FaultFile);
  fv->vfs.max_pathname = base->max_pathname;
  fv->vfs.open = v_open;
  fv->vfs.delete = v_delete;
  fv->vfs.access = v_access;
  fv->vfs.full_pathname = v_full_pathname;
  fv->vfs.randomness = v_randomness;
  fv->vfs.sleep = v_sleep;
  fv->vfs.current_time_ms = v_current_time_ms;
  if (os_vfs_register(&fv->vfs, 0) != SHALE_OK) {
    shale_free(fv->name);
    pthread_mutex_destroy(&fv->mu);
    shale_free(fv);
    return NULL;
  }
  return &fv->vfs;
}

void os_fault_vfs_destroy(OsVfs *vfs) {
  FaultVfs *fv = (FaultVfs *)vfs;
  if (!fv) return;
  assert(fv->files == NULL); /* every file closed first */
  os_vfs_unregister(vfs);
  while (fv->nodes) {
    FaultNode *n = fv->nodes;
    fv->nodes = n->next;
    log_clear(n);
    shale_free(n->undo);
    shale_free(n->path);
    shale_free(n);
  }
  pthread_mutex_destroy(&fv->mu);
  shale_free(fv->name);
  shale_free(fv);
}

void os_fault_arm(OsVfs *vfs, int kind, long n, int persist) {
  FaultVfs *fv = (FaultVfs *)vfs;
  if (kind < 0 || kind >= OS_FAULT_NKIND) return;
  pthread_mutex_lock(&fv->mu);
  fv->countdown[kind] = n > 0 ? n : 0;
  fv->persist[kind] = n > 0 && persist;
  fv->failing[kind] = 0;
  pthread_mutex_unlock(&fv->mu);
}

long os_fault_count(OsVfs *vfs, int kind) {
  FaultVfs *fv = (FaultVfs *)vfs;
  if (kind < 0 || kind >= OS_FAULT_NKIND) return 0;
  pthread_mutex_lock(&fv->mu);
  long c = fv->count[kind];
  pthread_mutex_unlock(&fv->mu);
  return c;
}

long os_fault_unsynced(OsVfs *vfs) {
  FaultVfs *fv = (FaultVfs *)vfs;
  long total = 0;
  pthread_mutex_lock(&fv->mu);
  for (FaultNode *n = fv->nodes; n; n = n->next) total += n->nundo;
  pthread_mutex_unlock(&fv->mu);
  return total;
}

/* Put back the old bytes of u and its old size. */
static void undo_one(OsFile *real, const Undo *u) {
  real->methods->truncate(real, u->old_size);
  if (u->nold > 0) real->methods->write(real, u->old, (int)u->nold, u->off);
}

/* Keep only the first half (rounded down to 512) of write u. */
static void tear_one(OsFile *real, const Undo *u) {
  int64_t keep = (u->amt / 2) & ~(int64_t)511;
  if (u->nold > keep)
    real->methods->write(real, u->old + keep, (int)(u->nold - keep), u->off + keep);
  int64_t size = keep > 0 && u->off + keep > u->old_size ? u->off + keep : u->old_size;
  int64_t cur;
  if (real->methods->file_size(real, &cur) == SHALE_OK && cur > size)
    real->methods->truncate(real, size);
}

void os_fault_power_loss(OsVfs *vfs, int keep_unsynced, int tear) {
  FaultVfs *fv = (FaultVfs *)vfs;
  if (keep_unsynced < 0) keep_unsynced = 0;
  pthread_mutex_lock(&fv->mu);
  for (FaultNode *n = fv->nodes; n; n = n->next) {
    if (n->nundo == 0) continue;
    /* a fresh read-write handle on the path (an open handle may be
     * read-only); anonymous files only have their own handle */
    OsFile *real = NULL, *own = NULL;
    if (n->path && os_open_alloc(fv->base, n->path, SHALE_OPEN_READWRITE, NULL, &own) == SHALE_OK)
      real = own;
    for (FaultFile *f = fv->files; f && !real; f = f->next)
      if (f->node == n) real = f->real;
    if (real) {
      int keep = keep_unsynced < n->nundo ? keep_unsynced : n->nundo;
      for (int i = n->nundo - 1; i >= keep; i--) undo_one(real, &n->undo[i]);
      if (tear && keep > 0 && n->undo[keep - 1].amt > 0) tear_one(real, &n->undo[keep - 1]);
    }
    os_close_free(own);
    log_clear(n);
  }
  for (FaultFile *f = fv->files; f; f = f->next) __atomic_store_n(&f->dead, 1, __ATOMIC_RELEASE);
  /* nodes of closed files are no longer needed */
  for (FaultNode *n = fv->nodes, *next; n; n = next) {
    next = n->next;
    node_maybe_free(fv, n);
  }
  pthread_mutex_unlock(&fv->mu);
}
