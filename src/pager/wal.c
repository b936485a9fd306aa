/*
 * wal.c -- the write-ahead log: -wal file frames and checksums, the -shm
 * wal-index (header copies, index blocks, read marks), recovery, readers,
 * the writer and checkpoints, following docs/format.md Part II (§Wn).
 *
 * Owns: the Wal struct, its -wal file handle and its view of the -shm
 * regions (mapped through the database file's shm_map).
 *
 * Invariants:
 *  1. w->hdr is this connection's snapshot of the 48-byte index header; while
 *     writing, its mxFrame/aFrameCksum run ahead of the shared copy by the
 *     uncommitted frames, which wal_undo drops by re-reading the shared copy.
 *  2. The shared header is written only while holding WRITE (or during
 *     recovery, which holds WRITE+CKPT+RECOVER): copy 2 first, barrier,
 *     copy 1. Readers read copy 1, barrier, copy 2 and accept only equal,
 *     initialised, checksummed copies.
 *  3. aReadMark[i] changes only under READ(i) exclusive; nBackfill rises only
 *     under CKPT and is reset only by a restart under WRITE.
 *  4. Index block k holds frames Z(k)+1 ... Z(k)+n (n = 4062 for k = 0, else
 *     4096); a hash slot holds F - Z(k); entries above the published mxFrame
 *     are junk that readers ignore and the next writer clears.
 *  5. Group commit: WRITE is taken only while holding the group's writer
 *     token (os_group.c), and the token is given back with WRITE. A commit
 *     at WAL_SYNC_GROUP is published before its sync and announced to the
 *     group (sync_seq); the caller makes it durable with wal_sync_commit
 *     after releasing WRITE, so that one sync covers the commits of every
 *     writer that published meanwhile. At WAL_SYNC_FULL, or without a group
 *     (SHALE_NO_GROUP_COMMIT set in the environment), the sync happens
 *     before publishing, as SQLite's. The token alone (no WRITE) may be
 *     kept past wal_end_write and wal_end_read for the auto-checkpoint
 *     (token_kept, wal_hold_token), never past the next wal_hold_token(0).
 *
 *  6. Mapped frame reads (wal_set_map; the pager's mapped reads, a Shale
 *     departure): a reader on READ(i > 0) reads frames 1..map_frames from a
 *     read-only map of the log fetched at begin_read and released at
 *     end_read, where every mapped frame is within the snapshot (<= its
 *     mxFrame) and within the log's size at its last fstat; READ(i) keeps
 *     any restart or truncation of the log from cutting them. The map may
 *     extend past the end of the log (never touched there).
 *  7. `changed` of wal_begin_read compares the header with `seen`, the one
 *     of this connection's last snapshot -- or of its own last commit or
 *     restart, which change nothing this connection has cached (SQLite's
 *     pager keeps its cache across its own commits the same way). So a
 *     writer's cache survives its commits; another connection's commit (or
 *     a recovery) still drops it.
 *  8. A header Shale publishes carries commit_tag(iChange, yield) in its
 *     unused word (SQLite writes 0 there, carries the word over unchanged
 *     when it commits, and reads nothing from it): wal_last_commit tells a
 *     waiting writer whether the last commit was a Shale process's and
 *     whether it ended that writer's run (pager_fair.c).
 *  9. Snapshots (wal_snapshot_*, SQLite's SQLITE_ENABLE_SNAPSHOT): a
 *     snapshot is a copy of the index header. A read transaction opened at
 *     one (wal_begin_read_at) holds a read mark no higher than its mxFrame
 *     (snap_cap is the cap while the mark is chosen, UINT32_MAX otherwise),
 *     reads frames 1..mxFrame (min_frame 1: a checkpoint may have skipped an
 *     early frame whose page has a later frame past the snapshot), and is
 *     refused (SHALE_ERROR_SNAPSHOT) once the log restarted (other salts)
 *     or a checkpoint attempted frames past it (nBackfillAttempted). CKPT
 *     is held shared from the check to the new read mark, so that no
 *     checkpoint runs in between.
 * 10. durable_mx/durable_salt: frames 1..durable_mx of the log whose salts
 *     are durable_salt were committed (published) before a sync of the log
 *     by this connection completed, so they are on disk: a checkpoint that
 *     copies no frame past them skips its sync of the log (a log's frames
 *     up to a published mxFrame are never rewritten; a restart changes the
 *     salts). A run of partial checkpoints next to readers (each copying up
 *     to the oldest reader's mark, which lags the last commit) then syncs
 *     the log about once per reader generation instead of at every commit,
 *     and at FULL the commits' own syncs already cover what is copied.
 * 11. Frames past the shared header's mxFrame (the last commit, invariant
 *     2) are this transaction's: a page written again before the commit
 *     overwrites its frame in place, as SQLite's walFrames (3.11 on), except
 *     the commit frame, which is always new. The chain of frame checksums is
 *     then wrong from the first overwritten frame (recksum) on; the commit
 *     makes it again before its own frames (rewrite_cksums). Until then a
 *     recovery stops at that frame, which is past the last commit, so no
 *     committed frame is lost. Savepoint rollbacks need no old frame
 *     contents (the pager restores pages from its savepoint copies).
 * 12. An automatic checkpoint (WAL_CKPT_AUTO) that could copy only part of
 *     the log (readers' marks lag the last commit) and would need a sync of
 *     the log for it copies nothing unless AUTO_MIN_COPY frames or more are
 *     ready: next to busy readers the marks trail the last commit by a few
 *     frames at each commit, and every such copy would cost the committing
 *     writer one fdatasync for a handful of frames. The frames wait for the
 *     next copy (at most AUTO_MIN_COPY - 1 more of them), whose one sync
 *     covers them; a copy that completes the log is never put off.
 *
 * Not done yet (differences from SQLite 3.40, docs/format.md):
 *  - no sector padding (POWERSAFE_OVERWRITE assumed), no journal_size_limit
 *    truncation, no directory sync at the first sync of the -wal;
 *  - no read-only -shm modes;
 *  - no auto-checkpoint (the pager's job: call wal_checkpoint after a
 *    commit when wal_max_frame() >= 1000);
 *  - a new log always takes salt-1 + 1 and a random salt-2 (SQLite draws
 *    both at random on a connection's first restart; only "different from
 *    the previous log" matters);
 *  - wal_close's checkpoint under EXCLUSIVE still takes the -shm locks;
 *  - a log with valid frames of another page size than wal_open's is
 *    SHALE_CORRUPT (the pager must pass the database's page size);
 *  - reader retries follow SQLite's schedule (1 us after the 6th to 9th
 *    try, then (n-9)^2 * 39 us, ~10 s in all before SHALE_PROTOCOL), with
 *    each sleep capped at 0.3 s.
 */
#include "wal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/shale.h"

#define WAL_MAGIC 0x377f0682u
#define WAL_VERSION 3007000u
#define WAL_HDRSIZE 32
#define FRAME_HDRSIZE 24
#define REGION_SIZE 32768
#define HASH_SLOTS 8192
#define HASH_BYTES (HASH_SLOTS * 2)
#define PGNO_PER_BLOCK 4096
#define SHM_HDR_BYTES 136
#define BLOCK0_FRAMES (PGNO_PER_BLOCK - SHM_HDR_BYTES / 4) /* 4062 */
#define READMARK_NOT_USED 0xffffffffu
#define NREADER 5

/* lock slots (§W3.4) */
#define SLOT_WRITE 0
#define SLOT_CKPT 1
#define SLOT_RECOVER 2
#define SLOT_READ(i) (3 + (i))

/* The 48-byte index header, host-endian except salt (§W2.2). */
typedef struct IdxHdr {
  uint32_t version;
  uint32_t unused;
  uint32_t change;
  uint8_t is_init;
  uint8_t big_end;
  uint16_t sz_page;
  uint32_t mx_frame;
  uint32_t n_page;
  uint32_t frame_cksum[2];
  uint8_t salt[8];
  uint32_t cksum[2];
} IdxHdr;
_Static_assert(sizeof(IdxHdr) == 48, "index header is 48 bytes");

/* Word offsets (u32) of the checkpoint info in region 0. */
#define W_BACKFILL 24            /* byte 96 */
#define W_READMARK(i) (25 + (i)) /* bytes 100.. */
#define W_ATTEMPTED 32           /* byte 128 */

struct Wal {
  OsVfs *vfs;
  OsFile *db;
  OsFile *wf;
  char *path;
  uint32_t page_size;
  int sync_level;
  int nregion;
  volatile uint32_t **regions;
  IdxHdr hdr;  /* snapshot (invariant 1) */
  IdxHdr seen; /* header of the last read transaction begun */
  IdxHdr own;  /* header this connection last published (own_valid) */
  uint8_t own_valid;
  uint8_t ext_changed; /* wal_read_changed_by_others() */
  int read_lock;       /* -1 none, else slot i of READ(i) */
  int write_lock;
  uint32_t min_frame; /* nBackfill + 1 at read start */
  uint32_t ckpt_seq;  /* private checkpoint sequence (§W1.6) */
  int ever_read;
  int heap;         /* wal-index in heap memory (wal_use_heap_memory) */
  uint8_t *buf;     /* FRAME_HDRSIZE + page_size scratch */
  uint32_t recksum; /* first frame overwritten since the last commit, 0 none (invariant 11) */
  uint8_t spilled;  /* frames appended since the last commit (invariant 11) */
  /* group commit (wal_group_* below; invariant 5) */
  OsGroup *group;          /* shared with this process's other users of the log */
  int token;               /* this Wal holds the group's writer token */
  int write_busy;          /* the last wal_begin_write found WRITE held by another process */
  uint64_t sync_seq;       /* commit announced but not yet synced (0 = none) */
  int yield_next;          /* the next published header carries the yield flag */
  uint32_t hold_frames;    /* wal_hold_token: keep the token from this log size on */
  uint32_t durable_mx;     /* invariant 10: frames known to be on disk ... */
  uint8_t durable_salt[8]; /* ... of the log with these salts */
  int token_kept;          /* wal_end_write kept the token (hold_frames) */
  /* mapped frame reads (invariant 6) */
  int map_on;          /* wal_set_map */
  uint8_t *map;        /* fetched for the read transaction, or NULL */
  uint32_t map_frames; /* frames 1..map_frames are read from map */
  int64_t map_len;     /* bytes last given to os_map */
  int64_t wf_known;    /* the log's size at its last fstat (0 = unknown) */
  uint32_t map_mx;     /* mxFrame at the last map_begin (a drop: restart) */
  /* snapshots (invariant 9) */
  uint32_t snap_cap; /* while wal_begin_read_at: read marks above it do not fit */
  uint8_t snap_ckpt; /* this Wal holds CKPT shared for a snapshot */
};

/* ------------------------------------------------------------ helpers */

static int host_le(void) {
  uint16_t x = 1;
  uint8_t b;
  memcpy(&b, &x, 1);
  return b == 1;
}

/* §W1.3: n % 8 == 0; be selects big-endian input words. */
/* The words as the host reads them (one load each); bswap turns them. */
static inline uint32_t host4(const uint8_t *p) {
  uint32_t x;
  memcpy(&x, p, 4);
  return x;
}
static void cksum(const uint8_t *p, size_t n, int be, uint32_t s[2]) {
  assert(n % 8 == 0);
  uint32_t s0 = s[0], s1 = s[1];
  const uint16_t probe = 1;
  int host_le = *(const uint8_t *)&probe == 1;
#define CKSUM_STEP(get, q) (s0 += get(q) + s1, s1 += get((q) + 4) + s0)
#define CKSUM_SWAP(q) __builtin_bswap32(host4(q))
  size_t i = 0, n32 = n & ~(size_t)31; /* four steps per turn, then the rest */
  if (host_le != !be) {                /* the words are in the other order than the host's */
    for (; i < n32; i += 32) {
      CKSUM_STEP(CKSUM_SWAP, p + i);
      CKSUM_STEP(CKSUM_SWAP, p + i + 8);
      CKSUM_STEP(CKSUM_SWAP, p + i + 16);
      CKSUM_STEP(CKSUM_SWAP, p + i + 24);
    }
    for (; i < n; i += 8) CKSUM_STEP(CKSUM_SWAP, p + i);
  } else {
    for (; i < n32; i += 32) {
      CKSUM_STEP(host4, p + i);
      CKSUM_STEP(host4, p + i + 8);
      CKSUM_STEP(host4, p + i + 16);
      CKSUM_STEP(host4, p + i + 24);
    }
    for (; i < n; i += 8) CKSUM_STEP(host4, p + i);
  }
#undef CKSUM_STEP
#undef CKSUM_SWAP
  s[0] = s0;
  s[1] = s1;
}

static int lock_shm(Wal *w, int slot, int n, int flags) {
  if (w->heap) return SHALE_OK; /* EXCLUSIVE on the db file stands for every lock */
  return w->db->methods->shm_lock(w->db, slot, n, OS_SHM_LOCK | flags);
}
static void unlock_shm(Wal *w, int slot, int n, int flags) {
  if (w->heap) return;
  w->db->methods->shm_lock(w->db, slot, n, OS_SHM_UNLOCK | flags);
}
static void barrier(Wal *w) { w->db->methods->shm_barrier(w->db); }

/* Exclusive lock, retrying through the busy handler while it says so. */
static int lock_busy(Wal *w, int slot, int n, WalBusy busy, void *arg) {
  int rc, count = 0;
  while ((rc = lock_shm(w, slot, n, OS_SHM_EXCLUSIVE)) == SHALE_BUSY && busy &&
         busy(arg, count++)) {
  }
  return rc;
}

/* Region k, mapping it (and creating it if extend) on first use. *out is
 * NULL if it does not exist and !extend. */
static int region(Wal *w, int k, int extend, volatile uint32_t **out) {
  if (k >= w->nregion) {
    volatile uint32_t **nr = shale_realloc((void *)w->regions, sizeof(*nr) * (size_t)(k + 1));
    if (!nr) return SHALE_NOMEM;
    for (int i = w->nregion; i <= k; i++) nr[i] = NULL;
    w->regions = nr;
    w->nregion = k + 1;
  }
  if (!w->regions[k] && w->heap) {
    if (!extend) {
      *out = NULL;
      return SHALE_OK;
    }
    void *m = shale_malloc(REGION_SIZE);
    if (!m) return SHALE_NOMEM;
    memset(m, 0, REGION_SIZE);
    w->regions[k] = (volatile uint32_t *)m;
  }
  if (!w->regions[k]) {
    volatile void *p = NULL;
    int rc = w->db->methods->shm_map(w->db, k, REGION_SIZE, extend, &p);
    if (rc != SHALE_OK) return rc;
    w->regions[k] = (volatile uint32_t *)p;
  }
  *out = w->regions[k];
  return SHALE_OK;
}

static volatile uint32_t *info(Wal *w) {
  assert(w->nregion > 0 && w->regions[0]);
  return w->regions[0];
}

/* One copy of the 48 bytes (a volatile word loop cost six times as much at
 * every read transaction's start): the callers read the header between
 * calls the compiler cannot move loads across (region, the shm barrier)
 * and believe it only when two copies agree or its checksum holds, so a
 * torn read is caught as SQLite's copy of its header catches it. */
static void hdr_load(volatile const uint32_t *src, IdxHdr *h) {
  memcpy(h, (const void *)(uintptr_t)src, sizeof *h);
}

static void hdr_store(volatile uint32_t *dst, const IdxHdr *h) {
  uint32_t tmp[12];
  memcpy(tmp, h, sizeof tmp);
  for (int i = 0; i < 12; i++) dst[i] = tmp[i];
}

static void hdr_cksum(const IdxHdr *h, uint32_t out[2]) {
  uint8_t b[48];
  memcpy(b, h, sizeof b);
  out[0] = out[1] = 0;
  cksum(b, 40, !host_le(), out);
}

static uint32_t page_size_of(uint16_t v) {
  return (uint32_t)(v & 0xfe00) + ((uint32_t)(v & 1) << 16);
}

/* The word Shale writes into the header's unused field (invariant 8): a
 * function of the change counter, so that a writer that copies the field
 * without knowing it (SQLite carries it over) leaves a header whose tag no
 * longer matches; bit 0 is the yield flag. */
static uint32_t commit_tag(uint32_t change, int yield) {
  return (((change * 0x9e3779b1u) ^ 0x5348414cu) & ~1u) | (yield ? 1u : 0u);
}

/* Publish w->hdr as the shared header (holding WRITE), invariant 2. */
static void hdr_publish(Wal *w) {
  volatile uint32_t *r0 = info(w);
  w->hdr.is_init = 1;
  w->hdr.version = WAL_VERSION;
  w->hdr.unused = commit_tag(w->hdr.change, w->yield_next);
  w->hdr.sz_page = (uint16_t)((w->page_size & 0xff00) | (w->page_size >> 16));
  hdr_cksum(&w->hdr, w->hdr.cksum);
  hdr_store(r0 + 12, &w->hdr);
  barrier(w);
  hdr_store(r0, &w->hdr);
  w->own = w->hdr;
  w->own_valid = 1;
}

int wal_read_changed_by_others(Wal *w) { return w->ext_changed; }

/* Read the shared header into *h. Returns 1 if usable, 0 if not (an
 * unmapped region 0 counts as unusable). *rc is SHALE_OK unless mapping
 * failed, or the header is valid but of another version (SHALE_CANTOPEN)
 * or has frames of another page size (SHALE_CORRUPT). */
static int hdr_try(Wal *w, IdxHdr *h, int *rc) {
  volatile uint32_t *r0;
  IdxHdr h2;
  *rc = region(w, 0, 0, &r0);
  if (*rc != SHALE_OK || !r0) return 0;
  hdr_load(r0, h);
  barrier(w);
  hdr_load(r0 + 12, &h2);
  if (memcmp(h, &h2, sizeof h2) != 0 || !h->is_init) return 0;
  /* the very header of our last snapshot (or own commit): checked then,
   * and the same bytes pass the same checks (SQLite skips them too) */
  if (w->ever_read && memcmp(h, &w->seen, sizeof *h) == 0) return 1;
  uint32_t c[2];
  hdr_cksum(h, c);
  if (c[0] != h->cksum[0] || c[1] != h->cksum[1]) return 0;
  if (h->version != WAL_VERSION) {
    *rc = SHALE_CANTOPEN;
    return 0;
  }
  /* szPage is meaningful only with frames: SQLite recovering an empty log
   * stores its pager's default page size, not the database's */
  if (h->mx_frame && page_size_of(h->sz_page) != w->page_size) {
    *rc = SHALE_CORRUPT;
    return 0;
  }
  return 1;
}

static int hdr_same_as_live(Wal *w) {
  IdxHdr live;
  hdr_load(info(w), &live);
  return memcmp(&live, &w->hdr, sizeof live) == 0;
}

/* ------------------------------------------------------- index blocks */

static int block_of(uint32_t frame) { return (int)((frame + 33) / PGNO_PER_BLOCK); }
static uint32_t block_base(int k) {
  return k == 0 ? 0 : BLOCK0_FRAMES + PGNO_PER_BLOCK * (uint32_t)(k - 1);
}
static uint32_t hash_of(uint32_t pgno) { return (pgno * 383u) & (HASH_SLOTS - 1); }

typedef struct Block {
  volatile uint32_t *pgno; /* aPgno[idx-1] */
  volatile uint16_t *hash;
  uint32_t base;
} Block;

static int block_get(Wal *w, int k, int extend, Block *b) {
  volatile uint32_t *r;
  int rc = region(w, k, extend, &r);
  if (rc != SHALE_OK) return rc;
  if (!r) return SHALE_CORRUPT; /* a frame the header says exists has no block */
  b->pgno = r + (k == 0 ? SHM_HDR_BYTES / 4 : 0);
  b->hash = (volatile uint16_t *)((volatile uint8_t *)r + REGION_SIZE - HASH_BYTES);
  b->base = block_base(k);
  return SHALE_OK;
}

/* Remove index entries above mx in mx's block (§W2.4, rollback). */
static void index_truncate(Wal *w, uint32_t mx) {
  if (mx == 0) return;
  Block b;
  if (block_get(w, block_of(mx), 0, &b) != SHALE_OK) return;
  uint32_t limit = mx - b.base;
  for (int i = 0; i < HASH_SLOTS; i++)
    if (b.hash[i] > limit) b.hash[i] = 0;
  uint32_t n = (b.base == 0 ? BLOCK0_FRAMES : PGNO_PER_BLOCK);
  for (uint32_t i = limit; i < n; i++) b.pgno[i] = 0;
}

/* Clear block k (if mapped). */
static void block_zero(Wal *w, int k) {
  Block b;
  if (block_get(w, k, 0, &b) != SHALE_OK) return;
  uint32_t n = (k == 0 ? BLOCK0_FRAMES : PGNO_PER_BLOCK);
  for (uint32_t i = 0; i < n; i++) b.pgno[i] = 0;
  for (int i = 0; i < HASH_SLOTS; i++) b.hash[i] = 0;
}

/* Add frame -> pgno (holding WRITE or recovering). */
static int index_append(Wal *w, uint32_t frame, uint32_t pgno) {
  Block b;
  int k = block_of(frame);
  int rc = block_get(w, k, 1, &b);
  if (rc != SHALE_OK) return rc;
  uint32_t idx = frame - b.base;
  if (idx == 1) block_zero(w, k);
  if (b.pgno[idx - 1] != 0) index_truncate(w, frame - 1);
  uint32_t h = hash_of(pgno);
  int probes = 0;
  while (b.hash[h]) {
    if (++probes > HASH_SLOTS) return SHALE_CORRUPT;
    h = (h + 1) & (HASH_SLOTS - 1);
  }
  b.pgno[idx - 1] = pgno;
  b.hash[h] = (uint16_t)idx;
  return SHALE_OK;
}

/* Newest frame in [min_frame, mx] holding pgno, 0 if none. */
static int index_find(Wal *w, uint32_t pgno, uint32_t min_frame, uint32_t mx, uint32_t *out) {
  *out = 0;
  if (mx == 0 || min_frame > mx) return SHALE_OK;
  for (int k = block_of(mx); k >= block_of(min_frame); k--) {
    Block b;
    int rc = block_get(w, k, 0, &b);
    if (rc != SHALE_OK) return rc;
    uint32_t best = 0;
    uint32_t h = hash_of(pgno);
    int probes = 0;
    uint16_t v;
    while ((v = b.hash[h]) != 0) {
      uint32_t f = b.base + v;
      if (f >= min_frame && f <= mx && v <= PGNO_PER_BLOCK && b.pgno[v - 1] == pgno && f > best)
        best = f;
      if (++probes > HASH_SLOTS) return SHALE_CORRUPT;
      h = (h + 1) & (HASH_SLOTS - 1);
    }
    if (best) {
      *out = best;
      return SHALE_OK;
    }
  }
  return SHALE_OK;
}

/* --------------------------------------------------------------- open */

int wal_open(OsVfs *vfs, OsFile *db, const char *wal_path, uint32_t page_size, Wal **out) {
  *out = NULL;
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1))) return SHALE_MISUSE;
  if (!db->methods->shm_map) return SHALE_CANTOPEN;
  Wal *w = shale_malloc(sizeof *w);
  if (!w) return SHALE_NOMEM;
  memset(w, 0, sizeof *w);
  w->vfs = vfs;
  w->db = db;
  w->page_size = page_size;
  w->sync_level = WAL_SYNC_FULL;
  w->read_lock = -1;
  w->snap_cap = UINT32_MAX;
  w->path = util_strdup(wal_path);
  w->buf = shale_malloc(FRAME_HDRSIZE + page_size);
  int rc = (w->path && w->buf) ? SHALE_OK : SHALE_NOMEM;
  if (rc == SHALE_OK && !getenv("SHALE_NO_GROUP_COMMIT"))
    rc = os_group_attach(vfs, wal_path, &w->group);
  if (rc == SHALE_OK)
    rc = os_open_alloc(vfs, wal_path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE | SHALE_OPEN_WAL,
                       NULL, &w->wf);
  if (rc != SHALE_OK) {
    os_group_detach(w->group);
    shale_free(w->path);
    shale_free(w->buf);
    shale_free(w);
    return rc;
  }
  *out = w;
  return SHALE_OK;
}

void wal_set_sync(Wal *w, int level) { w->sync_level = level; }

void wal_use_heap_memory(Wal *w) {
  assert(w->nregion == 0);
  w->heap = 1;
}

static int sync_wal(Wal *w, int level) {
  if (level == WAL_SYNC_OFF) return SHALE_OK;
  return os_sync(w->wf, OS_SYNC_NORMAL);
}

/* Invariant 10: frames 1..mx of the log with w->hdr's salts were written
 * before a sync that has just completed. */
static void note_durable(Wal *w, uint32_t mx) {
  if (memcmp(w->durable_salt, w->hdr.salt, 8) != 0) {
    memcpy(w->durable_salt, w->hdr.salt, 8);
    w->durable_mx = 0;
  }
  if (mx > w->durable_mx) w->durable_mx = mx;
}

static int is_durable(const Wal *w, uint32_t mx) {
  return mx <= w->durable_mx && memcmp(w->durable_salt, w->hdr.salt, 8) == 0;
}

/* ----------------------------------------------------------- recovery */

/* Rebuild the index from the log (§W1.7). Caller holds WRITE. */
static int recover(Wal *w) {
  int rc = lock_shm(w, SLOT_CKPT, 2, OS_SHM_EXCLUSIVE);
  if (rc != SHALE_OK) return rc;
  volatile uint32_t *r0;
  rc = region(w, 0, 1, &r0);
  if (rc != SHALE_OK) goto out;

  IdxHdr h;
  memset(&h, 0, sizeof h);
  int64_t size = 0;
  rc = os_file_size(w->wf, &size);
  if (rc != SHALE_OK) goto out;
  /* Block 0 must be zeroed even when the log is empty, as junk may remain. */
  w->hdr.mx_frame = 0;
  if (size > WAL_HDRSIZE) {
    uint8_t wh[WAL_HDRSIZE];
    rc = os_read(w->wf, wh, WAL_HDRSIZE, 0);
    if (rc != SHALE_OK) goto out;
    uint32_t magic = util_get4(wh), ps = util_get4(wh + 8);
    uint32_t c[2] = {0, 0};
    int be = (int)(magic & 1);
    if ((magic & ~1u) == WAL_MAGIC && ps >= 512 && ps <= 65536 && !(ps & (ps - 1))) {
      cksum(wh, 24, be, c);
      if (c[0] == util_get4(wh + 24) && c[1] == util_get4(wh + 28)) {
        if (util_get4(wh + 4) != WAL_VERSION) {
          rc = SHALE_CANTOPEN;
          goto out;
        }
        memcpy(h.salt, wh + 16, 8);
        h.big_end = (uint8_t)be;
        w->ckpt_seq = util_get4(wh + 12);
        uint32_t nframe = (uint32_t)((size - WAL_HDRSIZE) / (FRAME_HDRSIZE + ps));
        uint8_t *fb = w->buf;
        if (ps != w->page_size) { /* only acceptable if no frame is valid */
          fb = shale_malloc(FRAME_HDRSIZE + ps);
          if (!fb) {
            rc = SHALE_NOMEM;
            goto out;
          }
        }
        for (uint32_t f = 1; f <= nframe; f++) {
          rc = os_read(w->wf, fb, (int)(FRAME_HDRSIZE + ps),
                       WAL_HDRSIZE + (int64_t)(f - 1) * (FRAME_HDRSIZE + ps));
          if (rc != SHALE_OK) break;
          uint32_t pg = util_get4(fb), commit = util_get4(fb + 4);
          if (pg == 0 || memcmp(fb + 8, h.salt, 8) != 0) break;
          cksum(fb, 8, be, c);
          cksum(fb + FRAME_HDRSIZE, ps, be, c);
          if (c[0] != util_get4(fb + 16) || c[1] != util_get4(fb + 20)) break;
          if (ps != w->page_size) {
            rc = SHALE_CORRUPT; /* valid frames of another page size */
            break;
          }
          rc = index_append(w, f, pg);
          if (rc != SHALE_OK) break;
          if (commit) {
            h.mx_frame = f;
            h.n_page = commit;
            h.frame_cksum[0] = c[0];
            h.frame_cksum[1] = c[1];
          }
        }
        if (fb != w->buf) shale_free(fb);
        if (rc != SHALE_OK) goto out;
      }
    }
  }
  if (h.mx_frame == 0) {
    block_zero(w, 0);
    /* the next log must not share salts with whatever the file holds */
    util_put4(h.salt, util_get4(h.salt) + 1);
    util_random(h.salt + 4, 4);
  } else {
    index_truncate(w, h.mx_frame);
  }
  h.change = 0;
  w->hdr = h;
  hdr_publish(w);
  r0[W_BACKFILL] = 0;
  r0[W_ATTEMPTED] = h.mx_frame;
  r0[W_READMARK(0)] = 0;
  for (int i = 1; i < NREADER; i++) {
    if (lock_shm(w, SLOT_READ(i), 1, OS_SHM_EXCLUSIVE) == SHALE_OK) {
      r0[W_READMARK(i)] = (i == 1 && h.mx_frame) ? h.mx_frame : READMARK_NOT_USED;
      unlock_shm(w, SLOT_READ(i), 1, OS_SHM_EXCLUSIVE);
    }
  }
  rc = SHALE_OK;
out:
  unlock_shm(w, SLOT_CKPT, 2, OS_SHM_EXCLUSIVE);
  return rc;
}

/* Get a usable header into w->hdr, recovering if needed (§W4.1 step 1).
 * Returns SHALE_OK, SHALE_BUSY (retry), SHALE_BUSY_RECOVERY or an error. */
static int read_hdr(Wal *w) {
  int rc;
  IdxHdr h;
  if (hdr_try(w, &h, &rc)) {
    w->hdr = h;
    return SHALE_OK;
  }
  if (rc != SHALE_OK) return rc;
  if (w->write_lock) {
    rc = recover(w);
    return rc;
  }
  rc = lock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
  if (rc == SHALE_OK) {
    if (hdr_try(w, &h, &rc)) {
      w->hdr = h;
    } else if (rc == SHALE_OK) {
      rc = recover(w);
    }
    unlock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
    return rc;
  }
  if (rc != SHALE_BUSY) return rc;
  rc = lock_shm(w, SLOT_RECOVER, 1, OS_SHM_SHARED);
  if (rc == SHALE_OK) {
    unlock_shm(w, SLOT_RECOVER, 1, OS_SHM_SHARED);
    return SHALE_BUSY;
  }
  return rc == SHALE_BUSY ? SHALE_BUSY_RECOVERY : rc;
}

/* ------------------------------------------------------------ readers */

/* One attempt at §W4.1 steps 2-4. force_wal: never use READ(0). */
static int try_begin_read(Wal *w, int force_wal) {
  volatile uint32_t *r0 = info(w);
  uint32_t mx = w->hdr.mx_frame;
  int rc;
  if (w->snap_cap < mx) mx = w->snap_cap; /* invariant 9 */
  if (!force_wal && r0[W_BACKFILL] == mx) {
    rc = lock_shm(w, SLOT_READ(0), 1, OS_SHM_SHARED);
    if (rc == SHALE_OK) {
      barrier(w);
      if (hdr_same_as_live(w)) {
        w->read_lock = 0;
        return SHALE_OK;
      }
      unlock_shm(w, SLOT_READ(0), 1, OS_SHM_SHARED);
      return SHALE_BUSY;
    }
    if (rc != SHALE_BUSY) return rc;
  }
  uint32_t best = 0;
  int bi = 0;
  for (int i = 1; i < NREADER; i++) {
    uint32_t m = r0[W_READMARK(i)];
    if (m <= mx && m >= best && m != READMARK_NOT_USED) {
      best = m;
      bi = i;
    }
  }
  if (bi == 0 || best < mx) {
    for (int i = 1; i < NREADER; i++) {
      rc = lock_shm(w, SLOT_READ(i), 1, OS_SHM_EXCLUSIVE);
      if (rc == SHALE_OK) {
        r0[W_READMARK(i)] = mx;
        unlock_shm(w, SLOT_READ(i), 1, OS_SHM_EXCLUSIVE);
        best = mx;
        bi = i;
        break;
      }
      if (rc != SHALE_BUSY) return rc;
    }
  }
  if (bi == 0) return SHALE_BUSY;
  rc = lock_shm(w, SLOT_READ(bi), 1, OS_SHM_SHARED);
  if (rc != SHALE_OK) return rc;
  w->min_frame = r0[W_BACKFILL] + 1;
  barrier(w);
  if (r0[W_READMARK(bi)] != best || !hdr_same_as_live(w)) {
    unlock_shm(w, SLOT_READ(bi), 1, OS_SHM_SHARED);
    return SHALE_BUSY;
  }
  w->read_lock = bi;
  return SHALE_OK;
}

static void backoff(Wal *w, int cnt) {
  if (cnt > 5) {
    /* a retry lost a race with another connection's header or read-mark
     * update, usually over within microseconds: the first sleeps are
     * short (a writer waiting here holds the process's writer token) */
    int us = cnt < 10 ? 1 : (cnt - 9) * (cnt - 9) * 39;
    if (us > 300000) us = 300000;
    w->vfs->sleep(w->vfs, us);
  }
}

static int begin_read(Wal *w, int force_wal, int *changed) {
  int rc = SHALE_PROTOCOL;
  assert(w->read_lock < 0);
  for (int cnt = 0; cnt < 100; cnt++) {
    backoff(w, cnt);
    rc = read_hdr(w);
    if (rc == SHALE_BUSY) continue;
    if (rc != SHALE_OK) return rc;
    rc = try_begin_read(w, force_wal);
    if (rc == SHALE_BUSY) continue;
    if (rc != SHALE_OK) return rc;
    int ch = !w->ever_read || memcmp(&w->seen, &w->hdr, sizeof w->seen) != 0;
    if (changed) *changed = ch;
    w->ext_changed =
        ch && w->ever_read && !(w->own_valid && memcmp(&w->own, &w->hdr, sizeof w->own) == 0);
    w->seen = w->hdr;
    w->ever_read = 1;
    return SHALE_OK;
  }
  return SHALE_PROTOCOL;
}

/* Invariant 6: fetch the frames of the snapshot from the log's map. */
static void map_begin(Wal *w) {
  if (!w->map_on || w->read_lock <= 0 || !os_can_map(w->wf)) return;
  uint32_t mx = w->hdr.mx_frame;
  if (mx == 0) return;
  if (mx < w->map_mx) w->wf_known = 0; /* the log restarted: look again */
  w->map_mx = mx;
  int64_t fsz = (int64_t)FRAME_HDRSIZE + w->page_size;
  int64_t need = WAL_HDRSIZE + (int64_t)mx * fsz;
  if (need > w->wf_known) {
    int64_t sz;
    if (os_file_size(w->wf, &sz) != SHALE_OK) return;
    w->wf_known = sz;
  }
  if (need > w->wf_known) need = w->wf_known; /* a short log: read() reports it */
  uint32_t n = need > WAL_HDRSIZE ? (uint32_t)((need - WAL_HDRSIZE) / fsz) : 0;
  if (n == 0) return;
  need = WAL_HDRSIZE + (int64_t)n * fsz;
  if (need > 0x7fff0000) return;
  if (need > w->map_len) {
    /* grow in 4 MiB steps past the end, so that a growing log remaps
     * rarely */
    int64_t len = (need + (4 << 20)) & ~(int64_t)((4 << 20) - 1);
    if (len > 0x7fff0000) len = 0x7fff0000;
    if (os_map(w->wf, len) != SHALE_OK) {
      w->map_len = 0;
      return;
    }
    w->map_len = len;
  }
  void *base = NULL;
  if (os_fetch(w->wf, 0, (int)need, &base) != SHALE_OK || !base) return;
  w->map = base;
  w->map_frames = n;
}

static void map_end(Wal *w) {
  if (!w->map) return;
  os_unfetch(w->wf, 0, w->map);
  w->map = NULL;
  w->map_frames = 0;
}

void wal_set_map(Wal *w, int on) {
  w->map_on = on != 0;
  if (!on && !w->map && w->map_len > 0 && os_can_map(w->wf)) {
    os_map(w->wf, 0);
    w->map_len = 0;
  }
}

int wal_begin_read(Wal *w, int *changed) {
  int rc = begin_read(w, 0, changed);
  if (rc == SHALE_OK) map_begin(w);
  return rc;
}

void wal_end_read(Wal *w) {
  map_end(w);
  if (w->read_lock < 0) return;
  wal_end_write(w);
  unlock_shm(w, SLOT_READ(w->read_lock), 1, OS_SHM_SHARED);
  w->read_lock = -1;
}

int wal_find_frame(Wal *w, uint32_t pgno, uint32_t *frame) {
  assert(w->read_lock >= 0);
  *frame = 0;
  if (w->read_lock == 0) return SHALE_OK; /* db-only reader (§W2.5) */
  return index_find(w, pgno, w->min_frame, w->hdr.mx_frame, frame);
}

int wal_read_frame(Wal *w, uint32_t frame, uint8_t *buf) {
  assert(frame >= 1);
  int64_t off = WAL_HDRSIZE + (int64_t)(frame - 1) * (FRAME_HDRSIZE + w->page_size) + FRAME_HDRSIZE;
  if (frame <= w->map_frames) {
    memcpy(buf, w->map + off, w->page_size);
    os_map_read(w->wf, off, (int)w->page_size); /* a bounded resident set, as the pager's map */
    return SHALE_OK;
  }
  int rc = os_read(w->wf, buf, (int)w->page_size, off);
  if (rc == SHALE_IOERR_SHORT_READ) rc = SHALE_CORRUPT;
  return rc;
}

uint32_t wal_db_size(Wal *w) { return w->read_lock >= 0 && w->hdr.mx_frame ? w->hdr.n_page : 0; }
uint32_t wal_max_frame(Wal *w) { return w->hdr.mx_frame; }

/* ------------------------------------------------------------- writer */

int wal_begin_write(Wal *w) {
  assert(w->read_lock >= 0 && !w->write_lock);
  int rc = wal_queue_enter(w, NULL, NULL);
  if (rc != SHALE_OK) return rc;
  rc = lock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
  w->write_busy = rc == SHALE_BUSY && !os_shm_busy_in_process(); /* another process's */
  if (rc != SHALE_OK) {
    wal_queue_leave(w);
    return rc;
  }
  if (!hdr_same_as_live(w)) {
    unlock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
    wal_queue_leave(w);
    return SHALE_BUSY_SNAPSHOT;
  }
  w->write_lock = 1;
  return SHALE_OK;
}

int wal_log_moved(Wal *w) { return !hdr_same_as_live(w); }

void wal_set_yield(Wal *w, int yield) { w->yield_next = yield; }

int wal_last_commit(Wal *w, uint32_t *change) {
  if (w->nregion == 0 || !w->regions[0]) {
    *change = 0;
    return WAL_BY_OTHER;
  }
  volatile uint32_t *r0 = w->regions[0];
  uint32_t tag = r0[1], chg = r0[2]; /* copy 1: unused, iChange */
  *change = chg;
  if ((tag & ~1u) != (commit_tag(chg, 0) & ~1u)) return WAL_BY_OTHER;
  return tag & 1u ? WAL_BY_SHALE_YIELD : WAL_BY_SHALE;
}
int wal_write_lock_busy(Wal *w) { return w->write_busy; }

/* New log from frame 1 (§W1.6), holding WRITE. */
static void restart_hdr(Wal *w) {
  volatile uint32_t *r0 = info(w);
  w->ckpt_seq++;
  util_put4(w->hdr.salt, util_get4(w->hdr.salt) + 1);
  util_random(w->hdr.salt + 4, 4);
  w->hdr.mx_frame = 0;
  w->hdr.change++;
  hdr_publish(w);
  w->seen = w->hdr; /* invariant 7: the content is the same */
  r0[W_BACKFILL] = 0;
  r0[W_ATTEMPTED] = 0;
  r0[W_READMARK(1)] = 0;
  for (int i = 2; i < NREADER; i++) r0[W_READMARK(i)] = READMARK_NOT_USED;
}

/* §W4.2 step 3, before the first frame. */
static int maybe_restart(Wal *w) {
  if (w->read_lock != 0) return SHALE_OK;
  int rc;
  volatile uint32_t *r0 = info(w);
  if (r0[W_BACKFILL] > 0) {
    rc = lock_shm(w, SLOT_READ(1), NREADER - 1, OS_SHM_EXCLUSIVE);
    if (rc == SHALE_OK) {
      restart_hdr(w);
      unlock_shm(w, SLOT_READ(1), NREADER - 1, OS_SHM_EXCLUSIVE);
    } else if (rc != SHALE_BUSY) {
      return rc;
    }
  }
  unlock_shm(w, SLOT_READ(0), 1, OS_SHM_SHARED);
  w->read_lock = -1;
  /* we hold WRITE so the header cannot move under us */
  IdxHdr keep = w->hdr;
  for (int cnt = 0; cnt < 100; cnt++) {
    backoff(w, cnt);
    rc = try_begin_read(w, 1);
    if (rc != SHALE_BUSY) break;
  }
  assert(rc != SHALE_OK || memcmp(&keep, &w->hdr, sizeof keep) == 0);
  (void)keep;
  return rc == SHALE_BUSY ? SHALE_PROTOCOL : rc;
}

static int write_wal_header(Wal *w, int sync_level) {
  uint8_t wh[WAL_HDRSIZE];
  uint32_t c[2] = {0, 0};
  /* salts come from the shared header: a restart or recovery made them
   * differ from the previous log's (§W1.6) */
  util_put4(wh, WAL_MAGIC | (host_le() ? 0 : 1));
  util_put4(wh + 4, WAL_VERSION);
  util_put4(wh + 8, w->page_size);
  util_put4(wh + 12, w->ckpt_seq);
  memcpy(wh + 16, w->hdr.salt, 8);
  w->hdr.big_end = (uint8_t)(!host_le());
  cksum(wh, 24, w->hdr.big_end, c);
  util_put4(wh + 24, c[0]);
  util_put4(wh + 28, c[1]);
  int rc = os_write(w->wf, wh, WAL_HDRSIZE, 0);
  if (rc == SHALE_OK) rc = sync_wal(w, sync_level);
  w->hdr.frame_cksum[0] = c[0];
  w->hdr.frame_cksum[1] = c[1];
  return rc;
}

static int64_t frame_offset(const Wal *w, uint32_t frame) {
  return WAL_HDRSIZE + (int64_t)(frame - 1) * (FRAME_HDRSIZE + w->page_size);
}

/* The checksum of frame fb (header and page), chained on from c, into its
 * header; c becomes it. */
static void frame_cksum(const Wal *w, uint8_t *fb, uint32_t c[2]) {
  cksum(fb, 8, w->hdr.big_end, c);
  cksum(fb + FRAME_HDRSIZE, w->page_size, w->hdr.big_end, c);
  util_put4(fb + 16, c[0]);
  util_put4(fb + 20, c[1]);
}

/* Overwrite in place the pages of pages[0..n-1] that already have a frame
 * of this transaction (invariant 11), all but a commit's last; done[i] = 1
 * for those, in stack (nstack bytes) when n fits, else allocated. A failed
 * allocation of done just leaves every page to be appended. */
static int overwrite_frames(Wal *w, const WalPage *pages, int n, int commit, uint8_t *stack,
                            int nstack, uint8_t **done) {
  *done = NULL;
  if (!w->spilled) return SHALE_OK; /* nothing of ours before this call */
  IdxHdr live;
  hdr_load(info(w), &live);
  if (w->hdr.mx_frame <= live.mx_frame) return SHALE_OK; /* nothing of ours yet */
  int last = commit ? n - 1 : n;
  for (int i = 0; i < last; i++) {
    uint32_t f;
    int rc = index_find(w, pages[i].pgno, live.mx_frame + 1, w->hdr.mx_frame, &f);
    if (rc != SHALE_OK) return rc;
    if (!f) continue;
    if (!*done) {
      *done = n <= nstack ? stack : shale_malloc((size_t)n);
      if (!*done) return SHALE_OK; /* before any overwrite */
      memset(*done, 0, (size_t)n);
    }
    rc = os_write(w->wf, pages[i].data, (int)w->page_size, frame_offset(w, f) + FRAME_HDRSIZE);
    if (rc != SHALE_OK) return rc;
    (*done)[i] = 1;
    if (!w->recksum || f < w->recksum) w->recksum = f;
  }
  return SHALE_OK;
}

/* The checksum chain again from frame w->recksum to the last (invariant
 * 11); c ends as the last frame's checksum. */
static int rewrite_cksums(Wal *w, uint32_t c[2]) {
  uint32_t ps = w->page_size, f = w->recksum;
  uint8_t *fb = w->buf;
  int rc = f == 1 ? os_read(w->wf, fb, 8, 24) : os_read(w->wf, fb, 8, frame_offset(w, f - 1) + 16);
  c[0] = util_get4(fb);
  c[1] = util_get4(fb + 4);
  for (; rc == SHALE_OK && f <= w->hdr.mx_frame; f++) {
    rc = os_read(w->wf, fb, (int)(FRAME_HDRSIZE + ps), frame_offset(w, f));
    if (rc != SHALE_OK) break;
    frame_cksum(w, fb, c);
    rc = os_write(w->wf, fb + 16, 8, frame_offset(w, f) + 16);
  }
  if (rc == SHALE_IOERR_SHORT_READ) rc = SHALE_CORRUPT;
  if (rc == SHALE_OK) w->recksum = 0;
  return rc;
}

int wal_append(Wal *w, const WalPage *pages, int n, uint32_t commit_db_size, int sync_level) {
  assert(w->write_lock && n >= 1);
  int rc = maybe_restart(w);
  if (rc != SHALE_OK) return rc;
  if (w->hdr.mx_frame == 0) {
    rc = write_wal_header(w, sync_level);
    if (rc != SHALE_OK) return rc;
  }
  uint8_t stack[64], *done;
  rc = overwrite_frames(w, pages, n, commit_db_size != 0, stack, (int)sizeof stack, &done);
  uint8_t *heap = done == stack ? NULL : done; /* to free */
  uint32_t ps = w->page_size;
  uint32_t c[2] = {w->hdr.frame_cksum[0], w->hdr.frame_cksum[1]};
  if (rc == SHALE_OK && commit_db_size && w->recksum) rc = rewrite_cksums(w, c);
  if (rc != SHALE_OK) {
    shale_free(heap);
    return rc;
  }
  uint32_t f = w->hdr.mx_frame;
  uint8_t *fb = w->buf;
  for (int i = 0; i < n; i++) {
    if (done && done[i]) continue;
    f++;
    util_put4(fb, pages[i].pgno);
    util_put4(fb + 4, (i == n - 1) ? commit_db_size : 0);
    memcpy(fb + 8, w->hdr.salt, 8);
    memcpy(fb + FRAME_HDRSIZE, pages[i].data, ps);
    frame_cksum(w, fb, c);
    rc = os_write(w->wf, fb, (int)(FRAME_HDRSIZE + ps), frame_offset(w, f));
    if (rc != SHALE_OK) {
      shale_free(heap);
      return rc;
    }
  }
  /* the log now holds these frames: our next read needs no fstat for them
   * (invariant 6) */
  int64_t end = WAL_HDRSIZE + (int64_t)f * (FRAME_HDRSIZE + ps);
  if (end > w->wf_known) w->wf_known = end;
  int defer = sync_level == WAL_SYNC_GROUP && w->group; /* invariant 5 */
  if (commit_db_size && sync_level >= WAL_SYNC_FULL && !defer) {
    rc = sync_wal(w, sync_level);
    if (rc != SHALE_OK) {
      shale_free(heap);
      return rc;
    }
    note_durable(w, f);
  }
  uint32_t next = w->hdr.mx_frame + 1;
  for (int i = 0; i < n && rc == SHALE_OK; i++)
    if (!done || !done[i]) rc = index_append(w, next++, pages[i].pgno);
  shale_free(heap);
  if (rc != SHALE_OK) return rc;
  w->hdr.mx_frame = f;
  w->hdr.frame_cksum[0] = c[0];
  w->hdr.frame_cksum[1] = c[1];
  w->spilled = !commit_db_size;
  if (commit_db_size) {
    w->hdr.n_page = commit_db_size;
    w->hdr.change++;
    hdr_publish(w);
    w->seen = w->hdr; /* invariant 7: our own commit changes nothing we cached */
    if (defer) w->sync_seq = os_group_commit(w->group);
  }
  return SHALE_OK;
}

int wal_undo(Wal *w) {
  assert(w->write_lock);
  IdxHdr live;
  hdr_load(info(w), &live);
  if (live.mx_frame != w->hdr.mx_frame) index_truncate(w, live.mx_frame);
  if (live.mx_frame == 0) block_zero(w, 0); /* nothing committed: all junk */
  w->hdr = live;
  w->recksum = 0;
  w->spilled = 0;
  return SHALE_OK;
}

void wal_end_write(Wal *w) {
  if (!w->write_lock) {
    if (!w->token_kept) wal_queue_leave(w); /* a token taken by wal_queue_enter alone */
    return;
  }
  if (!hdr_same_as_live(w)) wal_undo(w);
  unlock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
  w->write_lock = 0;
  if (w->token && w->hold_frames && w->hdr.mx_frame >= w->hold_frames)
    w->token_kept = 1; /* for the checkpoint (wal_hold_token) */
  else
    wal_queue_leave(w);
}

/* ------------------------------------------------------- group commit */

int wal_queue_enter(Wal *w, WalBusy busy, void *busy_arg) {
  if (!w->group || w->token) return SHALE_OK;
  int rc = os_group_enter(w->group, busy, busy_arg);
  if (rc == SHALE_OK) w->token = 1;
  return rc;
}

void wal_queue_leave(Wal *w) {
  w->token_kept = 0;
  if (!w->token) return;
  w->token = 0;
  os_group_leave(w->group);
}

void wal_hold_token(Wal *w, uint32_t frames) {
  w->hold_frames = frames;
  if (!frames && w->token_kept) wal_queue_leave(w);
}

int wal_sync_commit(Wal *w) {
  if (!w->sync_seq) return SHALE_OK;
  uint64_t seq = w->sync_seq;
  w->sync_seq = 0;
  int rc = os_group_sync(w->group, seq, w->wf, OS_SYNC_NORMAL);
  if (rc == SHALE_OK) note_durable(w, w->hdr.mx_frame); /* our commit's frames */
  return rc;
}

/* --------------------------------------------------------- checkpoint */

typedef struct PgFrame {
  uint32_t pgno, frame;
} PgFrame;

static int cmp_pgframe(const void *a, const void *b) {
  const PgFrame *x = a, *y = b;
  if (x->pgno != y->pgno) return x->pgno < y->pgno ? -1 : 1;
  return x->frame < y->frame ? -1 : (x->frame > y->frame);
}

/* Invariant 12: the smallest partial copy an automatic checkpoint pays a
 * log sync for (an eighth of wal_autocheckpoint's 1000 frames). */
#define AUTO_MIN_COPY 128u

/* Copy frames nbackfill+1..mx_safe into the db (§W4.3 step 3). */
static int backfill(Wal *w, uint32_t nbackfill, uint32_t mx_safe) {
  volatile uint32_t *r0 = info(w);
  uint32_t n = mx_safe - nbackfill;
  PgFrame *list = shale_malloc(sizeof(PgFrame) * n);
  if (!list) return SHALE_NOMEM;
  uint32_t cnt = 0;
  int rc = SHALE_OK;
  for (uint32_t f = nbackfill + 1; f <= mx_safe; f++) {
    Block b;
    rc = block_get(w, block_of(f), 0, &b);
    if (rc != SHALE_OK) goto out;
    uint32_t pg = b.pgno[f - b.base - 1];
    if (pg == 0) {
      rc = SHALE_CORRUPT;
      goto out;
    }
    if (pg <= w->hdr.n_page) list[cnt++] = (PgFrame){pg, f};
  }
  qsort(list, cnt, sizeof *list, cmp_pgframe);
  r0[W_ATTEMPTED] = mx_safe;
  if (w->sync_level != WAL_SYNC_OFF && !is_durable(w, mx_safe)) {
    rc = sync_wal(w, w->sync_level);
    if (rc != SHALE_OK) goto out;
    note_durable(w, w->hdr.mx_frame); /* every frame published before the sync */
  }
  for (uint32_t i = 0; i < cnt; i++) {
    if (i + 1 < cnt && list[i + 1].pgno == list[i].pgno) continue; /* keep the newest */
    rc = wal_read_frame(w, list[i].frame, w->buf);
    if (rc == SHALE_OK)
      rc = os_write(w->db, w->buf, (int)w->page_size, (int64_t)(list[i].pgno - 1) * w->page_size);
    if (rc != SHALE_OK) goto out;
  }
  if (mx_safe == w->hdr.mx_frame) {
    rc = os_truncate(w->db, (int64_t)w->hdr.n_page * w->page_size);
    if (rc == SHALE_OK && w->sync_level != WAL_SYNC_OFF) rc = os_sync(w->db, OS_SYNC_NORMAL);
    if (rc != SHALE_OK) goto out;
  }
  r0[W_BACKFILL] = mx_safe;
out:
  shale_free(list);
  return rc;
}

int wal_checkpoint(Wal *w, int mode, WalBusy busy, void *busy_arg, int *nlog, int *nckpt) {
  assert(w->read_lock < 0 && !w->write_lock);
  if (nlog) *nlog = -1;
  if (nckpt) *nckpt = -1;
  /* a usable header first (may recover) */
  int rc = SHALE_PROTOCOL;
  for (int cnt = 0; cnt < 100; cnt++) {
    backoff(w, cnt);
    rc = read_hdr(w);
    if (rc != SHALE_BUSY) break;
  }
  if (rc != SHALE_OK) return rc;
  rc = lock_shm(w, SLOT_CKPT, 1, OS_SHM_EXCLUSIVE);
  if (rc != SHALE_OK) return rc;
  int is_busy = 0, have_write = 0;
  if (mode >= WAL_CKPT_FULL) {
    rc = lock_busy(w, SLOT_WRITE, 1, busy, busy_arg);
    if (rc == SHALE_OK) {
      have_write = 1;
      w->write_lock = 1; /* so read_hdr below never takes WRITE again */
    } else if (rc == SHALE_BUSY) {
      is_busy = 1;
      mode = WAL_CKPT_PASSIVE;
    } else {
      goto out;
    }
  }
  IdxHdr h;
  if (!hdr_try(w, &h, &rc)) {
    rc = rc != SHALE_OK ? rc : SHALE_BUSY;
    goto out;
  }
  w->hdr = h;
  volatile uint32_t *r0 = info(w);
  uint32_t mx_safe = h.mx_frame;
  uint32_t nb = r0[W_BACKFILL];
  for (int i = 1; i < NREADER; i++) {
    uint32_t m = r0[W_READMARK(i)];
    if (mx_safe > m) {
      rc = lock_busy(w, SLOT_READ(i), 1, mode >= WAL_CKPT_FULL ? busy : NULL, busy_arg);
      if (rc == SHALE_OK) {
        r0[W_READMARK(i)] = i == 1 ? mx_safe : READMARK_NOT_USED;
        unlock_shm(w, SLOT_READ(i), 1, OS_SHM_EXCLUSIVE);
      } else if (rc == SHALE_BUSY) {
        mx_safe = m;
      } else {
        goto out;
      }
    }
  }
  rc = SHALE_OK;
  if (mode == WAL_CKPT_AUTO && nb < mx_safe && mx_safe < h.mx_frame &&
      mx_safe - nb < AUTO_MIN_COPY && w->sync_level != WAL_SYNC_OFF && !is_durable(w, mx_safe))
    mx_safe = nb; /* invariant 12 */
  if (nb < mx_safe) {
    rc = lock_busy(w, SLOT_READ(0), 1, mode >= WAL_CKPT_FULL ? busy : NULL, busy_arg);
    if (rc == SHALE_OK) {
      IdxHdr live;
      hdr_load(r0, &live);
      if (memcmp(live.salt, h.salt, 8) == 0) rc = backfill(w, nb, mx_safe);
      unlock_shm(w, SLOT_READ(0), 1, OS_SHM_EXCLUSIVE);
    }
    if (rc == SHALE_BUSY) {
      is_busy = 1;
      rc = SHALE_OK;
    }
    if (rc != SHALE_OK) goto out;
  }
  nb = r0[W_BACKFILL];
  if (mode >= WAL_CKPT_FULL && nb < h.mx_frame) is_busy = 1;
  if (!is_busy && mode >= WAL_CKPT_RESTART) {
    rc = lock_busy(w, SLOT_READ(1), NREADER - 1, busy, busy_arg);
    if (rc == SHALE_OK) {
      if (mode == WAL_CKPT_TRUNCATE) {
        restart_hdr(w);
        w->wf_known = 0; /* invariant 6 */
        rc = os_truncate(w->wf, 0);
        nb = 0;
      }
      unlock_shm(w, SLOT_READ(1), NREADER - 1, OS_SHM_EXCLUSIVE);
    } else if (rc == SHALE_BUSY) {
      is_busy = 1;
      rc = SHALE_OK;
    }
    if (rc != SHALE_OK) goto out;
  }
  if (nlog) *nlog = (int)w->hdr.mx_frame;
  if (nckpt) *nckpt = (int)nb;
  rc = is_busy ? SHALE_BUSY : SHALE_OK;
out:
  if (have_write) {
    unlock_shm(w, SLOT_WRITE, 1, OS_SHM_EXCLUSIVE);
    w->write_lock = 0;
  }
  unlock_shm(w, SLOT_CKPT, 1, OS_SHM_EXCLUSIVE);
  return rc;
}

/* -------------------------------------------------------------- close */

int wal_close(Wal *w, int flags) {
  if (!w) return SHALE_OK;
  int rc = SHALE_OK, del = 0;
  wal_end_read(w);
  if (!(flags & WAL_CLOSE_KEEP)) {
    int r = os_lock(w->db, OS_LOCK_EXCLUSIVE);
    if (r == SHALE_OK) {
      int nlog = 0, nckpt = 0;
      rc = wal_checkpoint(w, WAL_CKPT_PASSIVE, NULL, NULL, &nlog, &nckpt);
      if (rc == SHALE_OK && nlog == nckpt) del = 1;
    }
  }
  if (w->heap) {
    for (int k = 0; k < w->nregion; k++) shale_free((void *)w->regions[k]);
  } else if (w->nregion > 0) {
    int r = w->db->methods->shm_unmap(w->db, del);
    if (rc == SHALE_OK) rc = r;
  }
  int r = os_close_free(w->wf);
  if (rc == SHALE_OK) rc = r;
  if (del) {
    r = w->vfs->delete (w->vfs, w->path, 0);
    if (rc == SHALE_OK) rc = r;
  }
  /* EXCLUSIVE is kept until -shm and -wal are gone (as SQLite's): a
   * connection that took SHARED earlier would open the old log and index
   * and write to them after their unlink, while the next one opening made
   * a new empty log under the same index -- its reads of frames the index
   * lists then came up short (SHALE_CORRUPT) */
  if (!(flags & WAL_CLOSE_KEEP)) os_unlock(w->db, OS_LOCK_SHARED);
  wal_queue_leave(w);
  os_group_detach(w->group);
  shale_free((void *)w->regions);
  shale_free(w->path);
  shale_free(w->buf);
  shale_free(w);
  return rc;
}

/* ---------------------------------------------------------- snapshots */

_Static_assert(sizeof(IdxHdr) == WAL_SNAPSHOT_SIZE, "a snapshot is an index header");

int wal_snapshot_get(Wal *w, uint8_t out[WAL_SNAPSHOT_SIZE]) {
  if (w->read_lock < 0 || w->write_lock) return SHALE_ERROR;
  /* no log header since the index was built: nothing was ever written to
   * this log (SQLite: zero salts and frame checksums) */
  if (w->hdr.mx_frame == 0 && w->hdr.frame_cksum[0] == 0 && w->hdr.frame_cksum[1] == 0)
    return SHALE_ERROR;
  memcpy(out, &w->hdr, sizeof w->hdr);
  return SHALE_OK;
}

/* The snapshot is still in the log: same salts, and no checkpoint has
 * attempted frames past it. Needs a mapped region 0. */
static int snap_usable(Wal *w, const IdxHdr *s) {
  return memcmp(s->salt, w->hdr.salt, 8) == 0 && s->mx_frame >= info(w)[W_ATTEMPTED];
}

static int snap_lock(Wal *w) {
  if (w->snap_ckpt) return SHALE_OK;
  int rc = lock_shm(w, SLOT_CKPT, 1, OS_SHM_SHARED);
  if (rc == SHALE_OK) w->snap_ckpt = 1;
  return rc;
}

void wal_snapshot_unlock(Wal *w) {
  if (!w->snap_ckpt) return;
  unlock_shm(w, SLOT_CKPT, 1, OS_SHM_SHARED);
  w->snap_ckpt = 0;
}

int wal_snapshot_check(Wal *w, const uint8_t snap[WAL_SNAPSHOT_SIZE]) {
  if (w->read_lock < 0) return SHALE_ERROR;
  IdxHdr s;
  memcpy(&s, snap, sizeof s);
  int rc = snap_lock(w);
  if (rc != SHALE_OK) return rc;
  if (!snap_usable(w, &s)) {
    wal_snapshot_unlock(w);
    return SHALE_ERROR_SNAPSHOT;
  }
  return SHALE_OK;
}

int wal_begin_read_at(Wal *w, const uint8_t snap[WAL_SNAPSHOT_SIZE], int *changed) {
  IdxHdr s, prev = w->seen;
  memcpy(&s, snap, sizeof s);
  int ever = w->ever_read, held = w->snap_ckpt;
  int rc = snap_lock(w);
  if (rc != SHALE_OK) return rc;
  w->snap_cap = s.mx_frame;
  rc = begin_read(w, 1, NULL);
  w->snap_cap = UINT32_MAX;
  if (rc == SHALE_OK && memcmp(&s, &w->hdr, sizeof s) != 0) {
    if (snap_usable(w, &s)) {
      w->hdr = s;
      w->min_frame = 1;
    } else {
      wal_end_read(w);
      rc = SHALE_ERROR_SNAPSHOT;
    }
  }
  if (!held) wal_snapshot_unlock(w);
  if (rc != SHALE_OK) {
    w->seen = prev; /* nothing was read: the cache still holds prev's pages */
    w->ever_read = ever;
    return rc;
  }
  int ch = !ever || memcmp(&prev, &s, sizeof s) != 0;
  if (changed) *changed = ch;
  w->ext_changed = ch && ever;
  w->seen = s;
  map_begin(w);
  return SHALE_OK;
}

/* The page of frame f, from its index block. */
static int frame_pgno(Wal *w, uint32_t f, uint32_t *pgno) {
  Block b;
  int rc = block_get(w, block_of(f), 0, &b);
  if (rc == SHALE_OK) *pgno = b.pgno[f - b.base - 1];
  return rc;
}

int wal_snapshot_recover(Wal *w) {
  if (w->read_lock < 0) return SHALE_ERROR;
  int rc = snap_lock(w);
  if (rc != SHALE_OK) return rc;
  volatile uint32_t *r0 = info(w);
  int64_t db_bytes = 0;
  uint8_t *page = shale_malloc(w->page_size);
  rc = page ? os_file_size(w->db, &db_bytes) : SHALE_NOMEM;
  /* Going down from the last frame a checkpoint attempted: a frame whose
   * page in the database file differs was not copied, so snapshots from
   * before it are still whole; the first frame found copied stops. */
  for (uint32_t f = r0[W_ATTEMPTED]; rc == SHALE_OK && f > r0[W_BACKFILL]; f--) {
    uint32_t pg = 0;
    rc = frame_pgno(w, f, &pg);
    if (rc != SHALE_OK) break;
    int64_t off = (int64_t)(pg - 1) * w->page_size;
    if (pg != 0 && off + w->page_size <= db_bytes) {
      rc = wal_read_frame(w, f, w->buf);
      if (rc == SHALE_OK) rc = os_read(w->db, page, (int)w->page_size, off);
      if (rc != SHALE_OK || memcmp(page, w->buf, w->page_size) == 0) break;
    }
    r0[W_ATTEMPTED] = f - 1;
  }
  shale_free(page);
  wal_snapshot_unlock(w);
  return rc;
}

int wal_snapshot_cmp(const uint8_t a[WAL_SNAPSHOT_SIZE], const uint8_t b[WAL_SNAPSHOT_SIZE]) {
  IdxHdr x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  /* salt-1 grows by one at each restart of the log (restart_hdr) */
  uint32_t sx = util_get4(x.salt), sy = util_get4(y.salt);
  if (sx != sy) return sx < sy ? -1 : 1;
  if (x.mx_frame != y.mx_frame) return x.mx_frame < y.mx_frame ? -1 : 1;
  return 0;
}

OsFile *wal_file(Wal *w) { return w->wf; }
