/*
 * os_unix.c -- the "unix" VFS: POSIX files, SQLite's fcntl locks, -shm.
 *
 * Owns: the process-global inode table (one UnixInode per (st_dev, st_ino)
 * that some connection of this process has open), the descriptors parked
 * there, and the per-inode shared-memory node for "<db>-shm".
 *
 * POSIX record locks belong to the (process, inode) pair, and close() of ANY
 * descriptor of an inode drops all of the process's locks on it
 * (docs/format.md §W5). Hence:
 *   - connections of one process share the OS-level locks through the
 *     inode's OsLockShared (os_lock.c decides; fcntl is called only when the
 *     process-wide state changes);
 *   - a connection closed while other connections still hold locks on the
 *     inode does not close() its descriptor: it parks it on the inode, and
 *     the parked descriptors are closed when the inode's last lock goes;
 *   - the -shm file is opened once per process per database inode and its
 *     mapping and lock slots are shared by all connections (UnixShm).
 *
 * Invariants:
 *  1. unix_mu protects the inode list, every UnixInode and every UnixShm.
 *  2. inode->nref counts open UnixFiles; an inode with nref == 0 has no
 *     locks, no parked descriptors and no shm node, and is freed.
 *  3. A descriptor is close()d only when inode->lk.nshared == 0, i.e. no
 *     connection of this process holds a lock the close would drop.
 *  4. Locks never block (F_SETLK); a conflict is SHALE_BUSY.
 *  5. shm->nref counts connections attached to the shm node; the node, its
 *     mappings and its descriptor go away when it reaches 0.
 *  6. A file's read-only map (unix_map/fetch/unfetch: the pager's mapped
 *     reads) is a UnixMap shared by the connections of the process that
 *     map the same inode: a connection asking for size bytes takes the
 *     inode's newest map if it is at least that large, else makes a new
 *     one (which becomes the inode's; older ones live on while used).
 *     The kernel counts a resident page once per mapping, and maps a whole
 *     neighbourhood of pages at each fault, so 64 connections with maps of
 *     their own held up to 64 copies of the file's hot pages in the
 *     process's resident set. m->nref counts the connections using m (under
 *     unix_mu); it is unmapped when the last one lets go. A connection
 *     moves to another map only while no fetch is out (nfetch == 0). Each
 *     caller keeps its accesses below the size it asked for and the file's
 *     end (os.h).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "os_int.h"

#define SHM_LOCK_BASE 120 /* -shm byte of lock slot 0 */
#define SHM_DMS 128       /* dead-man-switch byte */

typedef struct UnixShm UnixShm;
typedef struct UnixInode UnixInode;
typedef struct UnixFile UnixFile;

/* A descriptor of a closed connection, kept open so that closing it does not
 * drop the locks of the process's other connections on the inode. */
typedef struct Parked {
  int fd;
  int rw; /* opened O_RDWR */
} Parked;

struct UnixShm {
  int fd;
  char *path;
  int nref;        /* attached connections */
  int region_size; /* 0 until the first map */
  int nregion;     /* regions mapped */
  void **regions;
  OsShmLocks locks;
};

/* A read-only map of a file, shared (invariant 6). */
typedef struct UnixMap {
  uint8_t *p;
  int64_t size;
  int nref;               /* connections using it */
  _Atomic int64_t nread;  /* distinct bytes its users read since its pages were last released */
  _Atomic uint64_t *seen; /* a bit per MAP_UNIT read since then (NULL: count every read) */
  size_t nseen;           /* words of seen */
} UnixMap;

struct UnixInode {
  dev_t dev;
  ino_t ino;
  int nref; /* open UnixFiles */
  OsLockShared lk;
  Parked *parked; /* descriptors waiting for lk.nshared == 0 */
  int nparked, cparked;
  UnixShm *shm;
  UnixMap *map; /* the newest map of the file, or NULL (invariant 6) */
  UnixInode *next;
};

struct UnixFile {
  OsFile base;
  int fd;
  UnixInode *inode;
  int lock;     /* this connection's level */
  int flags;    /* SHALE_OPEN_* granted */
  int dir_sync; /* file was created: fsync its directory on first sync */
  char *path;   /* as given (NULL for anonymous files) */
  int shm_attached;
  uint8_t shm_sh, shm_ex; /* this connection's shm lock slots */
  uint8_t *map;           /* read-only map of [0, map_size), or NULL (invariant 6) */
  int64_t map_size;       /* what this connection asked for: <= mobj->size */
  UnixMap *mobj;          /* the shared map behind map */
  int nfetch;             /* fetches not yet released */
};

static pthread_mutex_t unix_mu = PTHREAD_MUTEX_INITIALIZER;

/* Take unix_mu for a lock call. Its holders keep it for one or two fcntl
 * calls (a microsecond or two), so a contender spins for it a while before
 * sleeping: a thread that sleeps on a machine whose CPUs are all busy
 * (readers running flat out beside a writer) waits for a scheduler slice,
 * close to a millisecond, to run again, for a mutex free a microsecond
 * later. Bounded: a holder preempted mid-call costs the spin, then a sleep. */
#define UNIX_MU_SPIN 1000
static void mu_lock(void) {
  for (int i = 0; i < UNIX_MU_SPIN; i++) {
    if (pthread_mutex_trylock(&unix_mu) == 0) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }
  pthread_mutex_lock(&unix_mu);
}
/* The -shm lock keeper (see keeper_main): its wake-up and its state, under
 * unix_mu: 0 not running, 1 polling, 2 asleep, -1 failed to start;
 * keeper_stop asks it to end (keeper_shutdown joins it). */
static pthread_cond_t keeper_cv = PTHREAD_COND_INITIALIZER;
static _Atomic int keeper_state; /* written under unix_mu; read without it by unix_shm_lock */
static int keeper_stop;
static pthread_t keeper_thread;
static UnixInode *inodes;

/* ---------------------------------------------------------------- helpers */

static int xclose(int fd) {
  return close(fd); /* never retried on EINTR: Linux always frees the fd */
}

static int set_lock(int fd, int type, int64_t off, int64_t len) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = (short)(type == OSLK_RD ? F_RDLCK : type == OSLK_WR ? F_WRLCK : F_UNLCK);
  fl.l_whence = SEEK_SET;
  fl.l_start = (off_t)off;
  fl.l_len = (off_t)len;
  for (;;) {
    if (fcntl(fd, F_SETLK, &fl) == 0) return SHALE_OK;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return SHALE_BUSY;
    return type == OSLK_UN ? SHALE_IOERR_UNLOCK : SHALE_IOERR_LOCK;
  }
}

static int raw_db(void *ctx, int type, int64_t off, int64_t len) {
  return set_lock(((UnixFile *)ctx)->fd, type, off, len);
}

/* Close parked descriptors once the process holds no lock on the inode. */
static void flush_parked(UnixInode *in) {
  if (in->lk.nshared > 0) return;
  for (int i = 0; i < in->nparked; i++) xclose(in->parked[i].fd);
  in->nparked = 0;
}

static void inode_release(UnixInode *in) {
  assert(in->nref > 0);
  if (--in->nref > 0) return;
  assert(in->lk.nshared == 0 && in->nparked == 0 && !in->shm);
  for (UnixInode **pp = &inodes; *pp; pp = &(*pp)->next) {
    if (*pp == in) {
      *pp = in->next;
      break;
    }
  }
  shale_free(in->parked);
  shale_free(in);
}

/* Directory part of path into out (nout >= 2 bytes; a longer directory is
 * cut at nout - 1 bytes). A copy, not snprintf: it runs at every commit that
 * creates a rollback journal (fsync_dir_of), where "%.*s" cost ~700
 * instructions. */
static void dir_of(const char *path, char *out, size_t nout) {
  const char *slash = strrchr(path, '/');
  size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (n == 0) {
    out[0] = '.';
    n = 1;
  } else {
    if (n > nout - 1) n = nout - 1;
    memcpy(out, path, n);
  }
  out[n] = 0;
}

/* Make a new or removed directory entry of path durable. fdatasync, as
 * SQLite's unixSync does on the directory: the entries are the directory's
 * data; its times are not needed to find the file again. */
static int fsync_dir_of(const char *path) {
  char dir[PATH_MAX];
  dir_of(path, dir, sizeof dir);
  int fd = open(dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
  if (fd < 0) return SHALE_OK; /* as SQLite: a directory we cannot open is not an error */
  int rc = fdatasync(fd) == 0 ? SHALE_OK : SHALE_IOERR_DIR_FSYNC;
  if (xclose(fd) != 0 && rc == SHALE_OK) rc = SHALE_IOERR_DIR_CLOSE;
  return rc;
}

/* ------------------------------------------------------------- shm (WAL) */

static int raw_shm(void *ctx, int type, int64_t off, int64_t len) {
  return set_lock(((UnixShm *)ctx)->fd, type, SHM_LOCK_BASE + off, len);
}

static void shm_free(UnixShm *shm) {
  for (int i = 0; i < shm->nregion; i++) munmap(shm->regions[i], (size_t)shm->region_size);
  shale_free(shm->regions);
  if (shm->fd >= 0) xclose(shm->fd);
  shale_free(shm->path);
  shale_free(shm);
}

/* Open "<db>-shm" and run the dead-man-switch protocol (§W3.5). */
static int shm_open_node(UnixFile *f, UnixShm **out) {
  UnixShm *shm = shale_malloc(sizeof *shm);
  if (!shm) return SHALE_NOMEM;
  memset(shm, 0, sizeof *shm);
  shm->fd = -1;
  shm->path = util_mprintf("%s-shm", f->path);
  if (!shm->path) {
    shm_free(shm);
    return SHALE_NOMEM;
  }
  struct stat st;
  mode_t mode = 0644;
  if (fstat(f->fd, &st) == 0) mode = st.st_mode & 0777;
  shm->fd = open(shm->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
  if (shm->fd < 0) {
    shm_free(shm);
    return SHALE_IOERR_SHMOPEN;
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = SHM_DMS;
  fl.l_len = 1;
  int rc = SHALE_OK;
  if (fcntl(shm->fd, F_GETLK, &fl) != 0) {
    rc = SHALE_IOERR_LOCK;
  } else if (fl.l_type == F_UNLCK) {
    /* no other user alive: take it exclusively, reset, downgrade */
    rc = set_lock(shm->fd, OSLK_WR, SHM_DMS, 1);
    if (rc == SHALE_OK && ftruncate(shm->fd, 3) != 0) rc = SHALE_IOERR_SHMOPEN;
  } else if (fl.l_type == F_WRLCK) {
    rc = SHALE_BUSY;
  }
  if (rc == SHALE_OK) rc = set_lock(shm->fd, OSLK_RD, SHM_DMS, 1);
  if (rc != SHALE_OK) {
    shm_free(shm);
    return rc;
  }
  shm->locks.linger_ok = keeper_state >= 0 && getenv("SHALE_NO_LOCK_LINGER") == NULL;
  *out = shm;
  return SHALE_OK;
}

static int unix_shm_map(OsFile *pf, int region, int region_size, int extend, volatile void **pp) {
  UnixFile *f = (UnixFile *)pf;
  int rc = SHALE_OK;
  *pp = NULL;
  if (!f->path || region < 0 || region_size <= 0 || region_size % 4096) return SHALE_IOERR_SHMMAP;
  pthread_mutex_lock(&unix_mu);
  UnixInode *in = f->inode;
  if (!f->shm_attached) {
    if (!in->shm) {
      rc = shm_open_node(f, &in->shm);
      if (rc != SHALE_OK) goto out;
    }
    in->shm->nref++;
    f->shm_attached = 1;
  }
  UnixShm *shm = in->shm;
  if (shm->region_size == 0) shm->region_size = region_size;
  if (shm->region_size != region_size) {
    rc = SHALE_IOERR_SHMMAP;
    goto out;
  }
  if (region >= shm->nregion) {
    struct stat st;
    int64_t need = (int64_t)(region + 1) * region_size;
    if (fstat(shm->fd, &st) != 0) {
      rc = SHALE_IOERR_SHMSIZE;
      goto out;
    }
    if (st.st_size < need) {
      if (!extend) goto out; /* not there yet: *pp stays NULL */
      /* grow by writing the last byte of every 4 KiB page (§W2.1) */
      for (int64_t o = (st.st_size / 4096) * 4096 + 4095; o < need; o += 4096) {
        if (o < st.st_size) continue;
        ssize_t w;
        do {
          w = pwrite(shm->fd, "", 1, (off_t)o);
        } while (w < 0 && errno == EINTR);
        if (w != 1) {
          rc = SHALE_IOERR_SHMSIZE;
          goto out;
        }
      }
    }
    void **nr = shale_realloc(shm->regions, sizeof(void *) * (size_t)(region + 1));
    if (!nr) {
      rc = SHALE_NOMEM;
      goto out;
    }
    shm->regions = nr;
    while (shm->nregion <= region) {
      void *p = mmap(NULL, (size_t)region_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm->fd,
                     (off_t)shm->nregion * region_size);
      if (p == MAP_FAILED) {
        rc = SHALE_IOERR_SHMMAP;
        goto out;
      }
      shm->regions[shm->nregion++] = p;
    }
  }
  *pp = shm->regions[region];
out:
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

/* ---- the keeper: drops -shm read locks left lingering (os_int.h) ----
 *
 * One thread per process, started with the first lingering lock. While
 * locks linger it sleeps until the first of them is due (OS_SHM_LINGER_NS
 * after it was let go) and releases what is due then; a lock taken again
 * meanwhile is not due, and its new deadline is waited for. With nothing
 * lingering it looks again every KEEPER_IDLE_TICK_NS for KEEPER_IDLE_NS (a
 * lock let go meanwhile is then dropped at most OS_SHM_LINGER_NS +
 * KEEPER_IDLE_TICK_NS late), then sleeps on keeper_cv until a lock lingers
 * again. So a connection running transactions back to back wakes it about
 * once a millisecond, not at a fixed fast tick: each wake-up takes unix_mu,
 * which the connection's own lock calls then wait for. If the connection
 * holds unix_mu when the keeper wakes, the keeper comes back shortly rather
 * than queue on the mutex. Readers never wait for it and make no system
 * call to hand it work unless it is asleep. The library's destructor
 * (keeper_shutdown: at exit and at dlclose) stops and joins it, releasing
 * what still lingers, so no thread of ours outlives the code it runs (a
 * program that unloads the library, as PHP does at exit, would otherwise
 * crash in it). */
#define KEEPER_IDLE_TICK_NS (OS_SHM_LINGER_NS / 2)
#define KEEPER_IDLE_NS 20000000
#define KEEPER_RETRY_NS 100000
#define KEEPER_MIN_SLEEP_NS 20000

/* Release the due lingering locks of every -shm; returns the time the first
 * of the rest is due, or -1 if none lingers. Caller holds unix_mu. */
static int64_t keeper_expire(int64_t now) {
  int64_t next = -1;
  for (UnixInode *in = inodes; in; in = in->next) {
    OsShmLocks *s = in->shm ? &in->shm->locks : NULL;
    if (!s || !os_shm_lingering(s) || !os_shm_linger_expire(s, now, raw_shm, in->shm)) continue;
    unsigned linger = os_shm_lingering(s);
    for (int i = 0; i < OS_SHM_NLOCK; i++) {
      if (!(linger & (1u << i))) continue;
      int64_t due = s->linger_at[i] + OS_SHM_LINGER_NS;
      if (next < 0 || due < next) next = due;
    }
  }
  return next;
}

/* Whether some lock lingers. Caller holds unix_mu. */
static int keeper_lingering(void) {
  for (UnixInode *in = inodes; in; in = in->next)
    if (in->shm && os_shm_lingering(&in->shm->locks)) return 1;
  return 0;
}

static void keeper_nap(int64_t ns) {
  if (ns < KEEPER_MIN_SLEEP_NS) ns = KEEPER_MIN_SLEEP_NS;
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  nanosleep(&ts, NULL);
}

static void *keeper_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&unix_mu);
  int64_t busy_at = os_mono_ns();
  while (!keeper_stop) {
    int64_t now = os_mono_ns();
    int64_t next = keeper_expire(now);
    if (next >= 0) busy_at = now;
    if (next >= 0 || now - busy_at < KEEPER_IDLE_NS) {
      keeper_state = 1;
      pthread_mutex_unlock(&unix_mu);
      keeper_nap(next >= 0 ? next - now : KEEPER_IDLE_TICK_NS);
      /* a connection in its lock calls: come back soon instead of waiting */
      while (pthread_mutex_trylock(&unix_mu) != 0) keeper_nap(KEEPER_RETRY_NS);
      continue;
    }
    /* A reader lets a lock linger without unix_mu (os_shm_lock_fast) and
     * then looks at keeper_state: announce the sleep first, then look for
     * such a lock once more (both sequentially consistent, so one of the
     * two sees the other). */
    keeper_state = 2;
    if (keeper_lingering()) {
      keeper_state = 1;
      continue;
    }
    pthread_cond_wait(&keeper_cv, &unix_mu);
    keeper_state = 1;
    busy_at = os_mono_ns();
  }
  pthread_mutex_unlock(&unix_mu);
  return NULL;
}

__attribute__((destructor)) static void keeper_shutdown(void) {
  pthread_mutex_lock(&unix_mu);
  int running = keeper_state > 0;
  keeper_stop = 1;
  if (running) pthread_cond_signal(&keeper_cv);
  pthread_mutex_unlock(&unix_mu);
  if (running) pthread_join(keeper_thread, NULL);
  pthread_mutex_lock(&unix_mu);
  keeper_state = -1; /* no keeper from now on: nothing lingers */
  for (UnixInode *in = inodes; in; in = in->next) {
    if (!in->shm) continue;
    in->shm->locks.linger_ok = 0;
    os_shm_linger_expire(&in->shm->locks, -1, raw_shm, in->shm);
  }
  pthread_mutex_unlock(&unix_mu);
}

/* fork(): the child gets no keeper thread and none of the parent's fcntl
 * locks, and unix_mu must not be copied while the keeper holds it. So the
 * fork waits for unix_mu, and the child forgets lingering locks (they are
 * the parent's) and starts its own keeper when it needs one. */
static void atfork_prepare(void) { pthread_mutex_lock(&unix_mu); }
static void atfork_parent(void) { pthread_mutex_unlock(&unix_mu); }
static void atfork_child(void) {
  if (keeper_state > 0) keeper_state = 0;
  for (UnixInode *in = inodes; in; in = in->next)
    if (in->shm) os_shm_linger_forget(&in->shm->locks);
  pthread_mutex_unlock(&unix_mu);
}

/* A lock of shm now lingers: make sure the keeper will see it. Caller holds
 * unix_mu. Without a keeper (thread creation failed) nothing lingers. */
static void keeper_notify(UnixShm *shm) {
  if (keeper_state == 1) return;
  if (keeper_state == 2) {
    /* polling again from now on: until it runs (it may wait for a CPU),
     * the other connections' fast lingers need not come here too */
    keeper_state = 1;
    pthread_cond_signal(&keeper_cv);
    return;
  }
  if (keeper_state == 0) {
    static int atfork_done;
    if (!atfork_done)
      atfork_done = pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0;
    int ok =
        atfork_done && !keeper_stop && pthread_create(&keeper_thread, NULL, keeper_main, NULL) == 0;
    if (ok) {
      keeper_state = 1;
      return;
    }
    keeper_state = -1;
  }
  /* no keeper: stop lingering everywhere, release at once */
  for (UnixInode *in = inodes; in; in = in->next) {
    if (!in->shm) continue;
    in->shm->locks.linger_ok = 0;
    os_shm_linger_expire(&in->shm->locks, -1, raw_shm, in->shm);
  }
  (void)shm;
}

static int unix_shm_lock(OsFile *pf, int ofst, int n, int flags) {
  UnixFile *f = (UnixFile *)pf;
  if (f->shm_attached) {
    /* a slot the process already holds: no unix_mu (os_shm_lock_fast);
     * f's shm node stays while f is attached, and only f detaches it */
    int r = os_shm_lock_fast(&f->inode->shm->locks, &f->shm_sh, &f->shm_ex, ofst, n, flags);
    if (r == SHALE_BUSY) return r;
    if (r == 1 || (r == OS_SHM_FAST_LINGER && keeper_state == 1)) return SHALE_OK;
    if (r == OS_SHM_FAST_LINGER) {
      mu_lock();
      keeper_notify(f->inode->shm);
      pthread_mutex_unlock(&unix_mu);
      return SHALE_OK;
    }
  }
  mu_lock();
  UnixShm *shm = f->shm_attached ? f->inode->shm : NULL;
  int rc =
      shm ? os_shm_lock_apply(&shm->locks, &f->shm_sh, &f->shm_ex, ofst, n, flags, raw_shm, shm)
          : SHALE_IOERR_SHMLOCK;
  if (shm && os_shm_lingering(&shm->locks)) keeper_notify(shm);
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

/* A full fence orders this thread's -shm loads and stores against the other
 * threads' and processes' (they share the mapped pages). SQLite also takes
 * and drops its global mutex here; unix_mu is taken by the keeper thread at
 * each of its wake-ups, so here it would only make a reader wait for it. */
static void unix_shm_barrier(OsFile *pf) {
  (void)pf;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Detach f from the shm node; caller holds unix_mu. */
static int shm_detach(UnixFile *f, int delete_flag) {
  UnixShm *shm = f->inode->shm;
  if (!f->shm_attached) return SHALE_OK;
  os_shm_lock_apply(&shm->locks, &f->shm_sh, &f->shm_ex, 0, OS_SHM_NLOCK,
                    OS_SHM_UNLOCK | OS_SHM_SHARED, raw_shm, shm);
  f->shm_attached = 0;
  if (--shm->nref == 0) {
    if (delete_flag) unlink(shm->path);
    f->inode->shm = NULL;
    shm_free(shm);
  }
  return SHALE_OK;
}

static int unix_shm_unmap(OsFile *pf, int delete_flag) {
  UnixFile *f = (UnixFile *)pf;
  pthread_mutex_lock(&unix_mu);
  int rc = shm_detach(f, delete_flag);
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

/* ------------------------------------------------------------- file I/O */

static void map_drop(UnixFile *f);

static int unix_close(OsFile *pf) {
  UnixFile *f = (UnixFile *)pf;
  int rc = SHALE_OK;
  pthread_mutex_lock(&unix_mu);
  map_drop(f);
  UnixInode *in = f->inode;
  if (in) {
    shm_detach(f, 0);
    if (f->flags & SHALE_OPEN_NOLOCK)
      f->lock = OS_LOCK_NONE; /* its levels were never taken */
    else if (f->lock > OS_LOCK_NONE)
      os_lock_down(&in->lk, &f->lock, OS_LOCK_NONE, raw_db, f);
    if (in->lk.nshared > 0) {
      /* closing now would drop other connections' locks: park the fd */
      if (in->nparked == in->cparked) {
        int n = in->cparked ? in->cparked * 2 : 4;
        Parked *np = shale_realloc(in->parked, sizeof(Parked) * (size_t)n);
        if (np) {
          in->parked = np;
          in->cparked = n;
        }
      }
      if (in->nparked < in->cparked) {
        in->parked[in->nparked].fd = f->fd;
        in->parked[in->nparked].rw = (f->flags & SHALE_OPEN_READWRITE) != 0;
        in->nparked++;
      }
      /* else (out of memory): leak the descriptor rather than drop locks */
      f->fd = -1;
    }
    if (f->fd >= 0 && xclose(f->fd) != 0) rc = SHALE_IOERR_CLOSE;
    f->fd = -1;
    flush_parked(in);
    inode_release(in);
    f->inode = NULL;
  } else if (f->fd >= 0) {
    xclose(f->fd);
    f->fd = -1;
  }
  pthread_mutex_unlock(&unix_mu);
  shale_free(f->path);
  f->path = NULL;
  f->base.methods = NULL;
  return rc;
}

static int unix_read(OsFile *pf, void *buf, int amt, int64_t off) {
  UnixFile *f = (UnixFile *)pf;
  char *p = buf;
  int got = 0;
  assert(amt >= 0 && off >= 0);
  while (got < amt) {
    ssize_t r = pread(f->fd, p + got, (size_t)(amt - got), (off_t)(off + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return SHALE_IOERR_READ;
    }
    if (r == 0) break;
    got += (int)r;
  }
  if (got < amt) {
    memset(p + got, 0, (size_t)(amt - got));
    return SHALE_IOERR_SHORT_READ;
  }
  return SHALE_OK;
}

static int unix_write(OsFile *pf, const void *buf, int amt, int64_t off) {
  UnixFile *f = (UnixFile *)pf;
  const char *p = buf;
  int done = 0;
  assert(amt >= 0 && off >= 0);
  while (done < amt) {
    ssize_t w = pwrite(f->fd, p + done, (size_t)(amt - done), (off_t)(off + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      return (errno == ENOSPC || errno == EDQUOT) ? SHALE_FULL : SHALE_IOERR_WRITE;
    }
    if (w == 0) return SHALE_FULL;
    done += (int)w;
  }
  return SHALE_OK;
}

static int unix_truncate(OsFile *pf, int64_t size) {
  UnixFile *f = (UnixFile *)pf;
  int r;
  do {
    r = ftruncate(f->fd, (off_t)size);
  } while (r != 0 && errno == EINTR);
  return r == 0 ? SHALE_OK : SHALE_IOERR_TRUNCATE;
}

static int unix_sync(OsFile *pf, int flags) {
  UnixFile *f = (UnixFile *)pf;
  int r;
  /* fdatasync writes the data and the metadata needed to read it back
   * (including the size); FULL asks for everything. */
  if ((flags & 0x0f) == OS_SYNC_FULL)
    r = fsync(f->fd);
  else
    r = fdatasync(f->fd);
  if (r != 0) return SHALE_IOERR_FSYNC;
  if (f->dir_sync) {
    int rc = fsync_dir_of(f->path);
    if (rc != SHALE_OK) return rc;
    f->dir_sync = 0;
  }
  return SHALE_OK;
}

static int unix_file_size(OsFile *pf, int64_t *size) {
  UnixFile *f = (UnixFile *)pf;
  struct stat st;
  if (fstat(f->fd, &st) != 0) return SHALE_IOERR_FSTAT;
  *size = (int64_t)st.st_size;
  return SHALE_OK;
}

/* A request that changes nothing (this connection is at the level already)
 * returns without unix_mu: f->lock changes only in calls on f, which its
 * connection makes one at a time (a WAL commit asks for SHARED again). */
static int unix_lock(OsFile *pf, int level) {
  UnixFile *f = (UnixFile *)pf;
  if (f->lock >= level) return SHALE_OK;
  if (f->flags & SHALE_OPEN_NOLOCK) { /* nolock=1: every lock is granted, none is taken */
    f->lock = level;
    return SHALE_OK;
  }
  mu_lock();
  int rc = os_lock_up(&f->inode->lk, &f->lock, level, raw_db, f);
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

static int unix_unlock(OsFile *pf, int level) {
  UnixFile *f = (UnixFile *)pf;
  if (f->lock <= level) return SHALE_OK; /* nothing to drop, nothing to flush */
  if (f->flags & SHALE_OPEN_NOLOCK) {
    f->lock = level;
    return SHALE_OK;
  }
  mu_lock();
  int rc = os_lock_down(&f->inode->lk, &f->lock, level, raw_db, f);
  flush_parked(f->inode);
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

static int unix_check_reserved(OsFile *pf, int *out) {
  UnixFile *f = (UnixFile *)pf;
  int rc = SHALE_OK;
  *out = 0;
  if (f->flags & SHALE_OPEN_NOLOCK) return SHALE_OK; /* no other process is looked at */
  mu_lock();
  if (f->inode->lk.level > OS_LOCK_SHARED) {
    *out = 1;
  } else {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = OS_RESERVED_BYTE;
    fl.l_len = 1;
    if (fcntl(f->fd, F_GETLK, &fl) != 0)
      rc = SHALE_IOERR_CHECKRESERVEDLOCK;
    else if (fl.l_type != F_UNLCK)
      *out = 1;
  }
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

static int unix_sector_size(OsFile *pf) {
  (void)pf;
  return 512;
}

static int unix_device_characteristics(OsFile *pf) {
  (void)pf;
  return OS_IOCAP_POWERSAFE_OVERWRITE;
}

/* ------------------------------------------------------ mapped reads */

/* New maps are made a multiple of this size (invariant 6). */
#define MAP_GRANULE ((int64_t)1 << 20)
/* The unit of a map's resident-set count (unix_map_read): a page. */
#define MAP_UNIT ((int64_t)4096)

/* Let go of f's map (invariant 6); caller holds unix_mu. */
static void map_drop(UnixFile *f) {
  UnixMap *m = f->mobj;
  f->map = NULL;
  f->map_size = 0;
  f->mobj = NULL;
  if (!m || --m->nref > 0) return;
  if (f->inode && f->inode->map == m) f->inode->map = NULL;
  munmap(m->p, (size_t)m->size);
  os_map_resident(-atomic_load_explicit(&m->nread, memory_order_relaxed));
  shale_free((void *)m->seen);
  shale_free(m);
}

/* The inode's newest map if it covers size bytes, else a new one that
 * becomes the inode's; caller holds unix_mu. */
static UnixMap *map_get(UnixFile *f, int64_t size) {
  UnixMap *m = f->inode ? f->inode->map : NULL;
  if (m && m->size >= size) {
    m->nref++;
    return m;
  }
  m = shale_malloc(sizeof *m);
  if (!m) return NULL;
  /* room to grow: a log or database growing a page at a time does not
   * make a map per page (nothing past the file's end is touched) */
  int64_t room = (size + MAP_GRANULE - 1) / MAP_GRANULE * MAP_GRANULE;
  if ((uint64_t)room <= (uint64_t)SIZE_MAX) size = room;
  void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, f->fd, 0);
  if (p == MAP_FAILED) {
    shale_free(m);
    return NULL;
  }
  m->p = p;
  m->size = size;
  m->nref = 1;
  atomic_init(&m->nread, 0);
  /* (without the bits every read counts, as if each mapped a unit in) */
  m->nseen = (size_t)((size / MAP_UNIT + 63) / 64);
  m->seen = shale_malloc(m->nseen * sizeof *m->seen);
  if (m->seen)
    for (size_t i = 0; i < m->nseen; i++) atomic_init(&m->seen[i], 0);
  if (f->inode) f->inode->map = m;
  return m;
}

static int unix_map(OsFile *pf, int64_t size) {
  UnixFile *f = (UnixFile *)pf;
  if (size < 0 || (uint64_t)size > (uint64_t)SIZE_MAX) return SHALE_MISUSE;
  if (size == f->map_size) return SHALE_OK;
  if (f->nfetch > 0) return SHALE_BUSY;
  mu_lock();
  int rc = SHALE_OK;
  if (size > 0 && f->mobj && f->mobj->size >= size) {
    f->map_size = size; /* our map covers it already */
  } else {
    map_drop(f);
    UnixMap *m = size > 0 ? map_get(f, size) : NULL;
    if (m) {
      f->mobj = m;
      f->map = m->p;
      f->map_size = size;
    } else if (size > 0) {
      rc = SHALE_IOERR_MMAP;
    }
  }
  pthread_mutex_unlock(&unix_mu);
  return rc;
}

static int unix_fetch(OsFile *pf, int64_t off, int amt, void **pp) {
  UnixFile *f = (UnixFile *)pf;
  *pp = NULL;
  if (off < 0 || amt < 0 || off + amt > f->map_size) return SHALE_OK;
  *pp = f->map + off;
  f->nfetch++;
  return SHALE_OK;
}

static void unix_unfetch(OsFile *pf, int64_t off, void *p) {
  UnixFile *f = (UnixFile *)pf;
  (void)off;
  if (p) {
    assert(f->nfetch > 0);
    f->nfetch--;
  }
}

/* Release m's pages from the resident set, its count back to the process's
 * budget. The bits are cleared after the madvise, so a unit read in between
 * counts again (over, never under, the resident bytes). */
static void map_release(UnixMap *m) {
  int64_t n = atomic_exchange_explicit(&m->nread, 0, memory_order_relaxed);
  if (n == 0) return; /* nothing read since the last release */
  os_map_resident(-n);
  /* A shared file map: the pages stay in the page cache, only the page
   * table entries go; later reads fault them back with the same bytes. */
  madvise(m->p, (size_t)m->size, MADV_DONTNEED);
  if (m->seen)
    for (size_t i = 0; i < m->nseen; i++)
      atomic_store_explicit(&m->seen[i], 0, memory_order_relaxed);
}

/* Only units read for the first time since their map's last release count
 * (the bits of seen): a page read again is mapped in already and adds
 * nothing to the resident set. Counting every read released a map whose
 * pages a reader's cache kept evicting and reading again (random seeks over
 * a table larger than the cache). The reads of every user of a map count
 * once, so connections sharing it release it as often as one reader would;
 * the budget is the process's (os.h), so a read that passes it releases
 * every file's newest map (unix_mu held for the walk), not only its own:
 * the maps other readers filled are the resident bytes too. No lock on the
 * count: m stays while f uses it (only f's own calls move f to another
 * map), and two users passing the budget at once release each map once
 * (the exchange in map_release). */
static void unix_map_read(OsFile *pf, int64_t off, int amt) {
  UnixFile *f = (UnixFile *)pf;
  UnixMap *m = f->mobj;
  if (!m || amt <= 0 || off < 0) return;
  int64_t bytes = 0;
  if (m->seen) {
    for (int64_t u = off / MAP_UNIT, end = (off + amt - 1) / MAP_UNIT; u <= end; u++) {
      if ((size_t)(u / 64) >= m->nseen) break;
      uint64_t bit = (uint64_t)1 << (u % 64);
      _Atomic uint64_t *w = &m->seen[u / 64];
      if (atomic_load_explicit(w, memory_order_relaxed) & bit) continue;
      if (!(atomic_fetch_or_explicit(w, bit, memory_order_relaxed) & bit)) bytes += MAP_UNIT;
    }
    if (bytes == 0) return;
  } else {
    bytes = amt;
  }
  atomic_fetch_add_explicit(&m->nread, bytes, memory_order_relaxed);
  if (os_map_resident(bytes) < OS_MAP_WINDOW) return;
  pthread_mutex_lock(&unix_mu);
  map_release(m);
  for (UnixInode *in = inodes; in; in = in->next)
    if (in->map) map_release(in->map);
  pthread_mutex_unlock(&unix_mu);
}

/* As SQLite's unix VFS answers them: the lock level, the VFS's name, and
 * whether the file was renamed or deleted since it was opened. */
static int unix_file_control(OsFile *pf, int op, void *arg) {
  UnixFile *f = (UnixFile *)pf;
  switch (op) {
    case OS_FCNTL_LOCKSTATE:
      *(int *)arg = f->lock;
      return SHALE_OK;
    case OS_FCNTL_VFSNAME: {
      char *z = shale_malloc(5);
      if (!z) return SHALE_NOMEM;
      memcpy(z, "unix", 5);
      *(char **)arg = z;
      return SHALE_OK;
    }
    case OS_FCNTL_HAS_MOVED: {
      struct stat a, b;
      *(int *)arg = f->path && (stat(f->path, &a) != 0 || fstat(f->fd, &b) != 0 ||
                                a.st_ino != b.st_ino || a.st_dev != b.st_dev);
      return SHALE_OK;
    }
    default:
      return SHALE_NOTFOUND;
  }
}

static const OsFileMethods unix_methods = {
    unix_close,
    unix_read,
    unix_write,
    unix_truncate,
    unix_sync,
    unix_file_size,
    unix_lock,
    unix_unlock,
    unix_check_reserved,
    unix_sector_size,
    unix_device_characteristics,
    unix_shm_map,
    unix_shm_lock,
    unix_shm_barrier,
    unix_shm_unmap,
    unix_map,
    unix_fetch,
    unix_unfetch,
    unix_map_read,
    unix_file_control,
};

/* ------------------------------------------------------------- the VFS */

static const char *temp_dir(void) {
  const char *d = getenv("TMPDIR");
  struct stat st;
  if (d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0) return d;
  return "/tmp";
}

/* A parked descriptor of path's inode opened with the same access mode, or
 * -1. Reusing it instead of opening a new one keeps the number of parked
 * descriptors bounded while another connection holds locks. */
static int take_parked(const char *path, int rw) {
  struct stat st;
  int fd = -1;
  if (stat(path, &st) != 0) return -1;
  pthread_mutex_lock(&unix_mu);
  for (UnixInode *in = inodes; in && fd < 0; in = in->next) {
    if (in->dev != st.st_dev || in->ino != st.st_ino) continue;
    for (int i = 0; i < in->nparked; i++) {
      if (in->parked[i].rw == rw) {
        fd = in->parked[i].fd;
        in->parked[i] = in->parked[--in->nparked];
        break;
      }
    }
  }
  pthread_mutex_unlock(&unix_mu);
  return fd;
}

/* Mode for a new file: a journal or WAL gets its database's permission
 * bits (as SQLite does), anything else 0644 (both before the umask). */
static mode_t create_mode(const char *path, int flags) {
  static const char *const sfx[] = {"-journal", "-wal"};
  if (!(flags & (SHALE_OPEN_MAIN_JOURNAL | SHALE_OPEN_WAL))) return 0644;
  size_t n = strlen(path);
  for (int i = 0; i < 2; i++) {
    size_t k = strlen(sfx[i]);
    if (n > k && n - k < PATH_MAX && !strcmp(path + n - k, sfx[i])) {
      char db[PATH_MAX];
      struct stat st;
      memcpy(db, path, n - k);
      db[n - k] = 0;
      if (stat(db, &st) == 0) return st.st_mode & 0777;
    }
  }
  return 0644;
}

/* Open, creating exclusively when allowed so that we learn whether we
 * made the file. A file that is usually there (there != 0: a main
 * database) is opened as it is first, and created only if missing; the
 * others (journals, logs) are created exclusively first. Returns fd or -1
 * with errno; *created set. */
static int open_file(const char *path, int oflags, int create, int excl, int there, mode_t mode,
                     int *created) {
  *created = 0;
  for (int tries = 0; tries < 100; tries++) {
    int fd;
    if (create && there && !excl) {
      fd = open(path, oflags, mode);
      if (fd >= 0) return fd;
      if (errno == EINTR) continue;
      if (errno != ENOENT) return -1;
    }
    if (create) {
      fd = open(path, oflags | O_CREAT | O_EXCL, mode);
      if (fd >= 0) {
        *created = 1;
        return fd;
      }
      if (errno == EINTR) continue;
      if (errno != EEXIST || excl) return -1;
    }
    /* O_CREAT again (without O_EXCL) for a file deleted between the two
     * opens, or a dangling symlink, where O_EXCL reports EEXIST */
    fd = open(path, oflags | (create ? O_CREAT : 0), mode);
    if (fd >= 0) return fd;
    if (errno == EINTR) continue;
    return -1;
  }
  return -1;
}

static int unix_open(OsVfs *vfs, const char *path, OsFile *pf, int flags, int *out_flags) {
  UnixFile *f = (UnixFile *)pf;
  int fd = -1, created = 0;
  (void)vfs;
  memset(f, 0, sizeof *f);
  f->fd = -1;
  if (out_flags) *out_flags = 0;
  int rw = (flags & SHALE_OPEN_READWRITE) != 0;
  int create = (flags & SHALE_OPEN_CREATE) != 0;
  int excl = (flags & SHALE_OPEN_EXCLUSIVE) != 0;
  int del = (flags & SHALE_OPEN_DELETEONCLOSE) != 0;
  int oflags = O_CLOEXEC | O_LARGEFILE;
  if (flags & SHALE_OPEN_NOFOLLOW) oflags |= O_NOFOLLOW;

  if (!path) {
    /* anonymous temp file: created, unlinked at once */
    const char *dir = temp_dir();
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
      uint64_t r;
      util_random(&r, sizeof r);
      char *name = util_mprintf("%s/shale_tmp_%016llx", dir, (unsigned long long)r);
      if (!name) return SHALE_NOMEM;
      fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd >= 0) unlink(name);
      int e = errno;
      shale_free(name);
      if (fd < 0 && e != EEXIST) return SHALE_CANTOPEN_NOTEMPDIR;
    }
    if (fd < 0) return SHALE_CANTOPEN;
    flags = (flags & ~SHALE_OPEN_READONLY) | SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE |
            SHALE_OPEN_DELETEONCLOSE;
  } else {
    if (!del) {
      f->path = util_strdup(path);
      if (!f->path) return SHALE_NOMEM;
    }
    fd = excl ? -1 : take_parked(path, rw);
    if (fd < 0) {
      fd = open_file(path, oflags | (rw ? O_RDWR : O_RDONLY), create && rw, excl,
                     (flags & SHALE_OPEN_MAIN_DB) != 0, create_mode(path, flags), &created);
      if (fd < 0 && rw && (errno == EACCES || errno == EROFS)) {
        /* fall back to read-only and say so */
        fd = take_parked(path, 0);
        if (fd < 0) fd = open_file(path, oflags | O_RDONLY, 0, 0, 1, 0644, &created);
        if (fd >= 0)
          flags = (flags & ~(SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE)) | SHALE_OPEN_READONLY;
      }
    }
    if (fd < 0) {
      int e = errno;
      shale_free(f->path);
      f->path = NULL;
      if (e == EISDIR) return SHALE_CANTOPEN_ISDIR;
      if (e == ELOOP && (flags & SHALE_OPEN_NOFOLLOW)) return SHALE_CANTOPEN_SYMLINK;
      return SHALE_CANTOPEN;
    }
    if (del) unlink(path);
  }

  struct stat st;
  int stat_ok = fstat(fd, &st) == 0;
  if (!stat_ok || S_ISDIR(st.st_mode)) {
    int isdir = stat_ok && S_ISDIR(st.st_mode);
    xclose(fd);
    shale_free(f->path);
    f->path = NULL;
    return isdir ? SHALE_CANTOPEN_ISDIR : SHALE_IOERR_FSTAT;
  }
  pthread_mutex_lock(&unix_mu);
  UnixInode *in;
  for (in = inodes; in; in = in->next)
    if (in->dev == st.st_dev && in->ino == st.st_ino) break;
  if (!in) {
    in = shale_malloc(sizeof *in);
    if (!in) {
      pthread_mutex_unlock(&unix_mu);
      xclose(fd);
      shale_free(f->path);
      f->path = NULL;
      if (created) unlink(path);
      return SHALE_NOMEM;
    }
    memset(in, 0, sizeof *in);
    in->dev = st.st_dev;
    in->ino = st.st_ino;
    in->next = inodes;
    inodes = in;
  }
  in->nref++;
  pthread_mutex_unlock(&unix_mu);

  f->fd = fd;
  f->inode = in;
  f->flags = flags;
  f->dir_sync = created && !del;
  f->base.methods = &unix_methods;
  if (out_flags) *out_flags = flags;
  return SHALE_OK;
}

static int unix_delete(OsVfs *vfs, const char *path, int sync_dir) {
  (void)vfs;
  if (unlink(path) != 0) return errno == ENOENT ? SHALE_IOERR_DELETE_NOENT : SHALE_IOERR_DELETE;
  return sync_dir ? fsync_dir_of(path) : SHALE_OK;
}

static int unix_access(OsVfs *vfs, const char *path, int flags, int *res) {
  (void)vfs;
  int mode = flags == OS_ACCESS_READWRITE ? (R_OK | W_OK) : flags == OS_ACCESS_READ ? R_OK : F_OK;
  *res = access(path, mode) == 0;
  return SHALE_OK;
}

/* Collapse "//", "/./" and "/../" of an absolute path in place. */
static void normalize(char *p) {
  char *out = p;
  const char *in = p;
  while (*in) {
    while (*in == '/') in++;
    const char *seg = in;
    while (*in && *in != '/') in++;
    size_t n = (size_t)(in - seg);
    if (n == 0 || (n == 1 && seg[0] == '.')) continue;
    if (n == 2 && seg[0] == '.' && seg[1] == '.') {
      while (out > p && *--out != '/') {
      }
      continue;
    }
    *out++ = '/';
    memmove(out, seg, n);
    out += n;
  }
  if (out == p) *out++ = '/';
  *out = 0;
}

static int unix_full_pathname(OsVfs *vfs, const char *path, int nout, char *out) {
  char abs[PATH_MAX * 2], res[PATH_MAX];
  (void)vfs;
  if (path[0] == '/') {
    if (strlen(path) >= sizeof abs) return SHALE_CANTOPEN_FULLPATH;
    strcpy(abs, path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return SHALE_CANTOPEN_FULLPATH;
    if ((size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, path) >= sizeof abs)
      return SHALE_CANTOPEN_FULLPATH;
  }
  normalize(abs);
  const char *result = abs;
  if (realpath(abs, res)) {
    result = res; /* the file exists: follow every symlink, the file's too */
  } else {
    char dir[PATH_MAX * 2], rdir[PATH_MAX];
    const char *slash = strrchr(abs, '/');
    dir_of(abs, dir, sizeof dir);
    if (realpath(dir, rdir)) {
      int n = snprintf(res, sizeof res, "%s%s", strcmp(rdir, "/") ? rdir : "", slash);
      if (n > 0 && (size_t)n < sizeof res) result = res;
    }
  }
  if ((int)strlen(result) + 1 > nout) return SHALE_CANTOPEN_FULLPATH;
  strcpy(out, result);
  return SHALE_OK;
}

static int unix_randomness(OsVfs *vfs, int n, char *out) {
  (void)vfs;
  int got = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, (size_t)(n - got), 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (int)r;
  }
  if (got < n) util_random(out + got, n - got);
  return n;
}

static int unix_sleep(OsVfs *vfs, int us) {
  (void)vfs;
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  return us;
}

static int unix_current_time_ms(OsVfs *vfs, int64_t *out) {
  (void)vfs;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  /* the Unix epoch is Julian day 2440587.5 */
  *out = INT64_C(210866760000000) + (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  return SHALE_OK;
}

static OsVfs unix_vfs = {
    "unix",
    (int)sizeof(UnixFile),
    PATH_MAX,
    NULL,
    unix_open,
    unix_delete,
    unix_access,
    unix_full_pathname,
    unix_randomness,
    unix_sleep,
    unix_current_time_ms,
};

OsVfs *os_unix_vfs(void) { return &unix_vfs; }
