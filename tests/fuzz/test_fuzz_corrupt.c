/*
 * test_fuzz_corrupt.c -- hostile database files against the b-tree, the
 * integrity check and the record decoder.
 *
 * Seeds are made by the reference SQLite (tables, indexes, WITHOUT ROWID,
 * overflow rows and keys, freelist, page sizes 512/1024/4096/65536, one
 * auto-vacuum file, one with 40 reserved bytes per page). Each mutant is a seed with 1-3 targeted
 * mutations (header fields, page type bytes, cell pointers, cell varints, freeblocks, child and
 * overflow page numbers, freelist trunks, byte flips, truncation, whole tree pages copied over
 * others, child pointers making cycles), chosen by a PRNG seeded from (SHALE_TEST_SEED, seed,
 * mutant index), so a failure is reproducible from its index alone. For each mutant, through Shale:
 * btree_open, a read transaction, a walk of every tree (first/next with full payload reads and a
 * decode of every record column, last/prev, seeks, count), btree_integrity_check, then a write
 * transaction (insert, delete, sometimes clear) committed or rolled back.
 *
 * Mutants run in a forked child (batches), each under alarm(), so a crash or
 * a hang is caught, attributed to its mutant, and saved as a file for
 * reproduction; the run then resumes after it. The child also checks every
 * result code (must be a SHALE_* code, never INTERNAL/MISUSE) and that each
 * mutant leaves no shale_malloc block behind.
 *
 * Default: FUZZ_DEFAULT mutants in total (about a minute under ASan);
 * SHALE_TEST_LONG=1 runs 10x more, SHALE_FUZZ_N=<n> exactly n.
 *
 * Invariants:
 *  1. Mutant i of seed s is a pure function of (test_seed(), s, i).
 *  2. Any crash, hang, leak or bad result code fails the case, naming the
 *     seed, the mutant index and the saved file.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/btree/btree.h"
#include "../../src/record/record.h"
#include "../../src/util/util.h"
#include "../test.h"

#define FUZZ_DEFAULT 10000
#define MAX_ROOTS 32
#define MAX_PAGES 4096
#define WALK_CAP 20000     /* entries visited per tree */
#define READ_CAP (1 << 16) /* payload bytes read per entry (seeds hold at most ~6000) */
#define ALARM_S 20

/* ---- seeds ---- */

typedef struct Seed {
  const char *name;
  const char *sql;
  uint8_t *bytes;
  long size;
  uint32_t ps, usable;
  BtreeCheckRoot roots[MAX_ROOTS];
  int nroot;
  /* page roles in the clean seed, for targeted mutations */
  uint32_t btree[MAX_PAGES], nbtree;
  uint32_t ovfl[MAX_PAGES], novfl;
  uint32_t trunk[MAX_PAGES], ntrunk;
} Seed;

static KeyInfo ki_binary;

static const char *const seed_sql[][2] = {
    {"s512",
     "pragma page_size=512; create table t(a integer primary key, b, c); create index tb on t(b);"
     "insert into t select value, printf('%.*c', value%50+5, 'k')||value,"
     "  case when value%9=0 then zeroblob(700+value) else cast(substr(printf('%.60c','z')||value, "
     "1, value%60) as blob) end"
     "  from generate_series(1,150);"
     "delete from t where a%4=0;"
     "create table u(x); insert into u select zeroblob(300) from generate_series(1,30);"
     "drop table u;"},
    {"s1024",
     "pragma page_size=1024; create table w(k text primary key, v) without rowid;"
     "create index wv on w(v);"
     "insert into w select printf('%.*c', (value*37)%400+1, 'w')||value, value%13"
     "  from generate_series(1,120);"
     "create table t2(x, y); insert into t2 select value, zeroblob(value*30) from "
     "generate_series(1,60);"
     "delete from t2 where x%3=0;"},
    {"s4096",
     "pragma page_size=4096; create table t(a, b, c); create index ta on t(a);"
     "create index tbc on t(b, c);"
     "insert into t select value, printf('%.*c', value%200*2, 'h')||value, "
     "  case when value%25=0 then zeroblob(6000) else value*1.5 end from generate_series(1,400);"
     "delete from t where rowid%7=0;"},
    {"s512av",
     "pragma page_size=512; pragma auto_vacuum=incremental; create table t(a); "
     "create index ti on t(a);"
     "insert into t select printf('%.*c', 110, 'a')||value from generate_series(1,40);"
     "insert into t values(zeroblob(1500)); delete from t where rowid between 5 and 12;"},
    {"s65536",
     "pragma page_size=65536; create table t(a, b); create index tb on t(b);"
     "insert into t select value, printf('%.*c', value*97%20000, 'q') from generate_series(1,12);"
     "insert into t values(0, zeroblob(70000)); delete from t where a=3;"},
    /* the "r" suffix: 40 reserved bytes per page (file control before creating) */
    {"s1024r",
     "pragma page_size=1024; create table t(a integer primary key, b); create index tb on t(b);"
     "insert into t select value, printf('%.*c', value%900, 'r') from generate_series(1,150);"
     "delete from t where a%6=0;"},
};
#define NSEED ((int)(sizeof seed_sql / sizeof seed_sql[0]))
static Seed seeds[NSEED];

static int mkdb(const char *path, const char *sql, int reserve) {
  unlink(path);
  sqlite3 *db;
  if (sqlite3_open(path, &db)) return 1;
  if (reserve) sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
  int rc = sqlite3_exec(db,
                        "create temp table gs(value integer primary key);"
                        "with recursive c(v) as (select 1 union all select v+1 from c where v<5000)"
                        " insert into temp.gs select v from c;",
                        NULL, NULL, NULL);
  size_t n = strlen(sql);
  char *q = malloc(n * 4 + 64), *o = q;
  for (const char *t = sql; *t;) {
    if (!strncmp(t, "generate_series(1,", 18)) {
      o += sprintf(o, "(select value from temp.gs where value<=%d)", atoi(t + 18));
      t = strchr(t, ')') + 1;
    } else {
      *o++ = *t++;
    }
  }
  *o = 0;
  char *err = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, q, NULL, NULL, &err);
  if (rc) fprintf(stderr, "seed sql: %s\n", err ? err : "?");
  sqlite3_free(err);
  free(q);
  sqlite3_close(db);
  return rc;
}

/* Roots in SQLite's integrity_check order (see test_check.c). */
static int seed_roots(const char *path, BtreeCheckRoot *r) {
  sqlite3 *db;
  sqlite3_stmt *st;
  int n = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL)) return 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT rootpage, type='table' AND upper(sql) NOT LIKE '%WITHOUT ROWID%'"
                         " FROM sqlite_schema WHERE rootpage>0 ORDER BY rowid DESC",
                         -1, &st, NULL) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW && n < MAX_ROOTS - 1) {
      int intkey = sqlite3_column_int(st, 1);
      r[n++] = (BtreeCheckRoot){(uint32_t)sqlite3_column_int64(st, 0), intkey,
                                intkey ? NULL : record_compare, &ki_binary};
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  r[n++] = (BtreeCheckRoot){1, 1, NULL, NULL};
  return n;
}

/* Record the roles of the clean seed's pages (trusted input). */
static void map_tree(Seed *s, uint32_t pgno, int depth) {
  if (pgno == 0 || pgno > s->size / s->ps || depth > 20 || s->nbtree >= MAX_PAGES) return;
  const uint8_t *d = s->bytes + (size_t)(pgno - 1) * s->ps;
  uint32_t h = pgno == 1 ? 100 : 0, t = d[h], n = util_get2(d + h + 3);
  s->btree[s->nbtree++] = pgno;
  int leaf = (t & 8) != 0;
  uint32_t U = s->usable;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t pc = util_get2(d + h + (leaf ? 8 : 12) + 2 * i);
    const uint8_t *c = d + pc;
    if (!leaf) map_tree(s, util_get4(c), depth + 1);
    if (t == 0x05) continue;
    uint32_t off = leaf ? 0 : 4, P;
    off += (uint32_t)util_get_varint32(c + off, &P);
    if (t == 0x0d) {
      uint64_t rowid;
      off += (uint32_t)util_get_varint(c + off, &rowid);
    }
    uint32_t X = t == 0x0d ? U - 35 : (U - 12) * 64 / 255 - 23, M = (U - 12) * 32 / 255 - 23;
    if (P <= X) continue;
    uint32_t K = M + (P - M) % (U - 4), local = K <= X ? K : M;
    uint32_t ov = util_get4(c + off + local);
    for (int g = 0; ov && g < 10000 && s->novfl < MAX_PAGES; g++) {
      s->ovfl[s->novfl++] = ov;
      ov = util_get4(s->bytes + (size_t)(ov - 1) * s->ps);
    }
  }
  if (!leaf) map_tree(s, util_get4(d + h + 8), depth + 1);
}

static void build_seeds(void) {
  for (int i = 0; i < NSEED; i++) {
    Seed *s = &seeds[i];
    if (s->bytes) continue;
    s->name = seed_sql[i][0];
    s->sql = seed_sql[i][1];
    const char *p = test_path("seed.db");
    size_t nl = strlen(s->name);
    CHECK_OK(mkdb(p, s->sql, s->name[nl - 1] == 'r' ? 40 : 0));
    FILE *f = fopen(p, "rb");
    CHECK(f != NULL);
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    s->size = ftell(f);
    fseek(f, 0, SEEK_SET);
    s->bytes = malloc((size_t)s->size);
    CHECK_EQ(fread(s->bytes, 1, (size_t)s->size, f), s->size);
    fclose(f);
    s->ps = util_get2(s->bytes + 16);
    if (s->ps == 1) s->ps = 65536;
    s->usable = s->ps - s->bytes[20];
    s->nroot = seed_roots(p, s->roots);
    for (int r = 0; r < s->nroot; r++) map_tree(s, s->roots[r].root, 0);
    uint32_t tr = util_get4(s->bytes + 32);
    for (int g = 0; tr && g < 1000 && s->ntrunk < MAX_PAGES; g++) {
      s->trunk[s->ntrunk++] = tr;
      tr = util_get4(s->bytes + (size_t)(tr - 1) * s->ps);
    }
    CHECK(s->nbtree >= 3);
  }
}

/* ---- mutations ---- */

static uint32_t pick(uint64_t *r, uint32_t n) { return n ? (uint32_t)(test_rand(r) % n) : 0; }

/* An "interesting" value of the given width. */
static uint32_t nasty(uint64_t *r, int width, uint32_t npage) {
  static const uint32_t v[] = {0,       1,          2,           3,          4,     0x7f,
                               0x80,    0xff,       0x100,       0x1ff,      0x200, 0xffff,
                               0x10000, 0x7fffffff, 0x80000000u, 0xffffffffu};
  uint32_t x;
  switch (pick(r, 4)) {
    case 0:
      x = v[pick(r, sizeof v / sizeof v[0])];
      break;
    case 1:
      x = pick(r, npage + 3);
      break; /* a page number, maybe just past the end */
    default:
      x = (uint32_t)test_rand(r);
      break;
  }
  if (width == 1) return x & 0xff;
  if (width == 2) return x & 0xffff;
  return x;
}

static void put(uint8_t *b, long sz, long at, int width, uint32_t v) {
  if (at < 0 || at + width > sz) return;
  if (width == 1) b[at] = (uint8_t)v;
  if (width == 2) util_put2(b + at, v);
  if (width == 4) util_put4(b + at, v);
}

/* Apply 1-3 mutations to b (a copy of the seed); returns the new size. */
static long mutate(const Seed *s, uint8_t *b, long sz, uint64_t *r) {
  uint32_t npage = (uint32_t)(s->size / s->ps);
  int nmut = 1 + (int)pick(r, 3);
  for (int m = 0; m < nmut; m++) {
    uint32_t pg = s->btree[pick(r, s->nbtree)];
    long base = (long)(pg - 1) * s->ps;
    uint32_t h = pg == 1 ? 100 : 0;
    uint8_t t = s->bytes[base + h];
    uint32_t hl = (t & 8) ? 8 : 12;
    uint32_t nc = util_get2(s->bytes + base + h + 3);
    uint32_t ci = pick(r, nc ? nc : 1);
    long cp = base + h + hl + 2 * ci;            /* cell pointer */
    long cell = base + util_get2(s->bytes + cp); /* cell (in the seed) */
    switch (pick(r, 14)) {
      case 12: { /* copy one tree page over another: duplicate references */
        uint32_t src = s->btree[pick(r, s->nbtree)];
        if (src != 1 && pg != 1 && (long)pg * s->ps <= sz) {
          memcpy(b + base, s->bytes + (long)(src - 1) * s->ps, s->ps);
        }
        break;
      }
      case 13: /* a child pointer to the root or another tree page: cycles */
        if (!(t & 8)) {
          uint32_t to = pick(r, 2) ? s->btree[0] : s->btree[pick(r, s->nbtree)];
          if (pick(r, 2))
            put(b, sz, base + h + 8, 4, to);
          else
            put(b, sz, cell, 4, to);
        }
        break;
      case 0: { /* header field */
        static const int off[] = {16, 18, 19, 20, 21, 22, 23, 24, 28, 32, 36, 40, 44, 52, 56, 64};
        static const int wid[] = {2, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4};
        int k = (int)pick(r, 16);
        put(b, sz, off[k], wid[k], nasty(r, wid[k], npage));
        break;
      }
      case 1: { /* page type */
        static const uint8_t ty[] = {0, 2, 5, 10, 13, 1, 0x0f, 0x85, 0xff};
        put(b, sz, base + h, 1, ty[pick(r, sizeof ty)]);
        break;
      }
      case 2: /* cell pointer: random, nudged, or another cell's */
        switch (pick(r, 3)) {
          case 0:
            put(b, sz, cp, 2, nasty(r, 2, npage));
            break;
          case 1:
            put(b, sz, cp, 2, util_get2(s->bytes + cp) + pick(r, 9) - 4);
            break;
          default:
            put(b, sz, cp, 2, util_get2(s->bytes + base + h + hl + 2 * pick(r, nc ? nc : 1)));
        }
        break;
      case 3: /* cell content: varints and payload start */
        for (int k = 0, n = 1 + (int)pick(r, 4); k < n; k++) {
          long at = cell + (long)pick(r, 12);
          put(b, sz, at, 1, pick(r, 2) ? 0xff : nasty(r, 1, npage));
        }
        break;
      case 4: { /* page header: freeblock, ncell, content start, fragments */
        static const int off[] = {1, 3, 5, 7};
        static const int wid[] = {2, 2, 2, 1};
        int k = (int)pick(r, 4);
        put(b, sz, base + h + off[k], wid[k],
            pick(r, 2) ? nasty(r, wid[k], npage)
                       : util_get2(s->bytes + base + h + off[k]) + pick(r, 5) - 2);
        break;
      }
      case 5: /* child page numbers */
        if (!(t & 8)) {
          if (pick(r, 2))
            put(b, sz, base + h + 8, 4, nasty(r, 4, npage));
          else
            put(b, sz, cell, 4, nasty(r, 4, npage));
        } else {
          put(b, sz, cell + (long)pick(r, 8), 1, nasty(r, 1, npage));
        }
        break;
      case 6: /* overflow page numbers (chain links) */
        if (s->novfl) {
          uint32_t ov = s->ovfl[pick(r, s->novfl)];
          put(b, sz, (long)(ov - 1) * s->ps, 4, nasty(r, 4, npage));
        }
        break;
      case 7: /* freelist: header, trunk next/count/leaves */
        if (s->ntrunk && pick(r, 4)) {
          long tb = (long)(s->trunk[pick(r, s->ntrunk)] - 1) * s->ps;
          long at = tb + 4 * (long)pick(r, 6);
          put(b, sz, at, 4, nasty(r, 4, npage));
        } else {
          put(b, sz, 32 + 4 * (long)pick(r, 2), 4, nasty(r, 4, npage));
        }
        break;
      case 8: /* random bit flips anywhere */
        for (int k = 0, n = 1 + (int)pick(r, 8); k < n; k++) {
          long at = (long)pick(r, (uint32_t)sz);
          b[at] ^= (uint8_t)(1u << pick(r, 8));
        }
        break;
      case 9: /* random bytes in one page */
        for (int k = 0, n = 1 + (int)pick(r, 16); k < n; k++) {
          long at = base + (long)pick(r, s->ps);
          if (at < sz) b[at] = (uint8_t)test_rand(r);
        }
        break;
      case 10: /* truncation */
        if (pick(r, 3) == 0) {
          sz = (long)pick(r, (uint32_t)sz);
        } else {
          sz = (long)s->ps * (1 + (long)pick(r, npage));
          if (sz > s->size) sz = s->size;
        }
        break;
      default: /* overflow pointer at the end of a cell with overflow */
        if (s->novfl) {
          /* cheap: scan cells of this page for 4-byte values naming overflow pages */
          long at = cell + (long)pick(r, 64);
          put(b, sz, at, 4, s->ovfl[pick(r, s->novfl)]);
        }
        break;
    }
  }
  return sz;
}

/* ---- shared state between the parent and the child ---- */

typedef struct Failure {
  int seed, idx;
  char what[200];
} Failure;

typedef struct Shared {
  volatile int cur; /* mutant running now */
  int nfail;
  Failure fail[32];
  long mutants, opened, corrupt_rc, entries, check_msgs, writes_ok;
} Shared;

static Shared *sh;
static int cur_seed;

static void fail_child(int idx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_child(int idx, const char *fmt, ...) {
  if (sh->nfail >= 32) return;
  Failure *f = &sh->fail[sh->nfail++];
  f->seed = cur_seed;
  f->idx = idx;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->what, sizeof f->what, fmt, ap);
  va_end(ap);
}

static int cur_idx;
/* Every call must return a SHALE_* code; INTERNAL and MISUSE are bugs. */
#define RC(expr) rc_check((expr), #expr, __LINE__)
static int rc_check(int rc, const char *what, int line) {
  int prim = rc & 0xff;
  int known = (prim >= 0 && prim <= 28) || prim == 100 || prim == 101;
  if (!known || prim == SHALE_INTERNAL || prim == SHALE_MISUSE) {
    fail_child(cur_idx, "line %d: %s returned %d", line, what, rc);
  }
  if (prim == SHALE_CORRUPT) sh->corrupt_rc++;
  return rc;
}

/* ---- one mutant ---- */

static volatile uint64_t sink;

static void decode_record(const uint8_t *p, uint32_t n) {
  int ncol = 0;
  if (record_column_count(p, n, &ncol) != SHALE_OK) return;
  if (ncol > 300) ncol = 300;
  for (int c = 0; c < ncol; c++) {
    ShValue v;
    if (record_column(p, n, c, &v) != SHALE_OK) continue;
    if (v.type == SHALE_TEXT || v.type == SHALE_BLOB) {
      const uint8_t *z = (const uint8_t *)v.z;
      for (uint32_t k = 0; k < v.n; k += 61) sink += z[k];
      if (v.n) sink += z[v.n - 1];
    } else {
      sink += (uint64_t)v.i;
    }
  }
}

/* Read the entry under the cursor fully (capped) and decode it. */
static uint8_t readbuf[READ_CAP];
static void read_entry(BtCursor *c, int intkey) {
  uint32_t n = btree_payload_size(c);
  uint32_t navail = 0;
  const uint8_t *loc = btree_payload_fetch(c, &navail);
  if (loc && navail) sink += loc[0] + loc[navail - 1];
  if (intkey) sink += (uint64_t)btree_rowid(c);
  uint32_t want = n > READ_CAP ? READ_CAP : n;
  if (want && RC(btree_payload_read(c, 0, want, readbuf)) == SHALE_OK) decode_record(readbuf, want);
  if (n > 8) RC(btree_payload_read(c, n - 8, 8, readbuf)); /* the tail, through the chain */
  /* past the end: an error (not counted), never a read */
  if (btree_payload_read(c, n, 1, readbuf) == SHALE_OK)
    fail_child(cur_idx, "read past payload end");
}

static void walk_tree(Btree *bt, const BtreeCheckRoot *root, uint64_t *r) {
  BtCursor *c = NULL;
  if (RC(btree_cursor_open(bt, root->root, 0, root->cmp, root->cmp_ctx, &c)) != SHALE_OK) return;
  static uint8_t key[4096];
  uint32_t nkey = 0;
  int have_key = 0;
  int64_t rowids[3] = {0, 0, 0};
  int empty = 1, eof = 0, rc;
  long steps = 0;
  if (RC(btree_first(c, &empty)) == SHALE_OK && !empty) {
    do {
      read_entry(c, root->intkey);
      if (root->intkey && !btree_eof(c)) rowids[steps % 3] = btree_rowid(c);
      if (!root->intkey && !have_key && !btree_eof(c)) {
        uint32_t n = btree_payload_size(c);
        if (n <= sizeof key && RC(btree_payload_read(c, 0, n, key)) == SHALE_OK) {
          nkey = n;
          have_key = 1;
        }
      }
      steps++;
      sh->entries++;
      rc = RC(btree_next(c, &eof));
    } while (rc == SHALE_OK && !eof && steps < WALK_CAP);
  }
  /* backwards a little */
  if (RC(btree_last(c, &empty)) == SHALE_OK && !empty) {
    for (int k = 0; k < 20; k++) {
      read_entry(c, root->intkey);
      if (RC(btree_prev(c, &eof)) != SHALE_OK || eof) break;
    }
  }
  int res;
  if (root->intkey) {
    for (int k = 0; k < 3; k++) {
      if (RC(btree_seek_rowid(c, rowids[k], &res)) == SHALE_OK && !btree_eof(c)) {
        read_entry(c, 1);
      }
    }
    RC(btree_seek_rowid(c, (int64_t)test_rand(r), &res));
    RC(btree_seek_rowid(c, -1, &res));
  } else if (have_key) {
    if (RC(btree_seek_key(c, key, nkey, &res)) == SHALE_OK && !btree_eof(c)) read_entry(c, 0);
  }
  int64_t cnt;
  RC(btree_count(c, &cnt));
  btree_cursor_close(c);
}

/* Schema roots as Shale reads them from page 1, merged with the seed's. */
static int mutant_roots(Btree *bt, const Seed *s, BtreeCheckRoot *out) {
  int n = 0;
  for (int i = 0; i < s->nroot - 1; i++) out[n++] = s->roots[i];
  BtCursor *c = NULL;
  if (RC(btree_cursor_open(bt, 1, 0, NULL, NULL, &c)) != SHALE_OK) goto done;
  int empty = 1, eof = 0, steps = 0;
  if (RC(btree_first(c, &empty)) == SHALE_OK && !empty) {
    do {
      uint32_t sz = btree_payload_size(c);
      if (sz < 100000) {
        uint8_t *p = malloc(sz ? sz : 1);
        if (p && RC(btree_payload_read(c, 0, sz, p)) == SHALE_OK) {
          ShValue v;
          decode_record(p, sz);
          if (record_column(p, sz, 3, &v) == SHALE_OK && v.type == SHALE_INTEGER && v.i > 1 &&
              v.i < 100000 && n < MAX_ROOTS - 1) {
            int dup = 0;
            for (int k = 0; k < n; k++) dup |= out[k].root == (uint32_t)v.i;
            ShValue ty;
            int idx = record_column(p, sz, 0, &ty) == SHALE_OK && ty.type == SHALE_TEXT &&
                      ty.n == 5 && !memcmp(ty.z, "index", 5);
            if (!dup) {
              out[n++] =
                  (BtreeCheckRoot){(uint32_t)v.i, !idx, idx ? record_compare : NULL, &ki_binary};
            }
          }
        }
        free(p);
      }
    } while (++steps < 1000 && RC(btree_next(c, &eof)) == SHALE_OK && !eof);
  }
  btree_cursor_close(c);
done:
  out[n++] = (BtreeCheckRoot){1, 1, NULL, NULL};
  return n;
}

static void run_mutant(const Seed *s, int si, int idx, const char *path, uint8_t *b) {
  uint64_t r = test_seed() ^ ((uint64_t)(si + 1) * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)(idx + 1) * 0xD1B54A32D192ED03ULL);
  if (!r) r = 1; /* xorshift never leaves 0 */
  test_rand(&r);
  memcpy(b, s->bytes, (size_t)s->size);
  long sz = mutate(s, b, s->size, &r);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(b, 1, (size_t)sz, f);
  fclose(f);
  char j[600];
  snprintf(j, sizeof j, "%s-journal", path);
  unlink(j);

  long base = util_alloc_outstanding();
  cur_idx = idx;
  sh->mutants++;
  Btree *bt = NULL;
  if (RC(btree_open(os_vfs_find(NULL), path, SHALE_OPEN_READWRITE, &bt)) != SHALE_OK) goto leak;
  /* speed: durability is not what is tested here */
  pager_set_synchronous(btree_pager(bt), PAGER_SYNC_OFF);
  if (idx % 8) pager_set_journal_mode(btree_pager(bt), PAGER_JOURNAL_MEMORY);
  if (RC(btree_begin(bt, BTREE_TXN_READ)) == SHALE_OK) {
    sh->opened++;
    uint32_t meta;
    for (int k = 0; k <= BTREE_META_APPLICATION_ID; k++) RC(btree_get_meta(bt, k, &meta));
    BtreeCheckRoot roots[MAX_ROOTS];
    int nroot = mutant_roots(bt, s, roots);
    for (int k = 0; k < nroot; k++) walk_tree(bt, &roots[k], &r);
    char *rep = NULL;
    int nerr = 0;
    if (RC(btree_integrity_check(bt, roots, nroot, 100, &rep, &nerr)) == SHALE_OK) {
      sh->check_msgs += nerr;
      if ((nerr == 0) != (rep == NULL))
        fail_child(idx, "integrity_check: nerr %d rep %p", nerr, (void *)rep);
    }
    shale_free(rep);
    RC(btree_commit(bt));

    /* write: insert and delete in a table, sometimes clear an index */
    if (RC(btree_begin(bt, BTREE_TXN_WRITE)) == SHALE_OK) {
      const BtreeCheckRoot *t = NULL;
      for (int k = 0; k < nroot && !t; k++) {
        if (roots[k].intkey && roots[k].root != 1) t = &roots[k];
      }
      BtCursor *c = NULL;
      int ok = 1;
      if (t && RC(btree_cursor_open(bt, t->root, 1, NULL, NULL, &c)) == SHALE_OK) {
        static uint8_t data[5000];
        uint32_t n = pick(&r, sizeof data);
        for (uint32_t k = 0; k < n; k++) data[k] = (uint8_t)k;
        if (n > 2) {
          data[0] = 2; /* a one-column blob record header, roughly */
        }
        ok &= RC(btree_insert(c, (int64_t)pick(&r, 1000), data, n, pick(&r, 2) ? 0 : 100, 0)) ==
              SHALE_OK;
        int empty = 1, res;
        if (RC(btree_first(c, &empty)) == SHALE_OK && !empty) ok &= RC(btree_delete(c)) == SHALE_OK;
        if (RC(btree_seek_rowid(c, (int64_t)pick(&r, 200), &res)) == SHALE_OK && res == 0) {
          ok &= RC(btree_delete(c)) == SHALE_OK;
        }
        if (RC(btree_first(c, &empty)) == SHALE_OK && !empty) {
          uint32_t n2 = btree_payload_size(c);
          RC(btree_payload_write(c, 0, n2 < 16 ? n2 : 16, data));
          if (n2 > 16) RC(btree_payload_write(c, n2 - 8, 8, data));
        }
        btree_cursor_close(c);
      }
      /* an index: insert a (blob, integer) key, delete the first entry */
      for (int k = 0; k < nroot; k++) {
        if (roots[k].intkey) continue;
        if (RC(btree_cursor_open(bt, roots[k].root, 1, record_compare, &ki_binary, &c)) ==
            SHALE_OK) {
          static uint8_t blob[1500], rec[1600];
          ShValue v[2];
          uint32_t bn = pick(&r, sizeof blob);
          memset(blob, (int)pick(&r, 256), bn);
          value_set_blob(&v[0], blob, bn);
          value_set_int(&v[1], (int64_t)pick(&r, 100000));
          size_t rn = record_encode(v, 2, rec);
          ok &= RC(btree_insert(c, 0, rec, (uint32_t)rn, 0, 0)) == SHALE_OK;
          int empty = 1;
          if (RC(btree_first(c, &empty)) == SHALE_OK && !empty)
            ok &= RC(btree_delete(c)) == SHALE_OK;
          btree_cursor_close(c);
        }
        break;
      }
      if (pick(&r, 8) == 0) {
        for (int k = 0; k < nroot; k++) {
          if (!roots[k].intkey) {
            RC(btree_drop_table(bt, roots[k].root));
            break;
          }
        }
      } else if (pick(&r, 4) == 0) {
        for (int k = 0; k < nroot; k++) {
          if (!roots[k].intkey) {
            int64_t nrows;
            RC(btree_clear_table(bt, roots[k].root, &nrows));
            break;
          }
        }
      }
      if (ok && pick(&r, 2)) {
        if (RC(btree_commit(bt)) == SHALE_OK)
          sh->writes_ok++;
        else
          RC(btree_rollback(bt));
      } else {
        RC(btree_rollback(bt));
      }
    }
  }
  RC(btree_rollback(bt));
  /* the checker on whatever the writes left */
  if (RC(btree_begin(bt, BTREE_TXN_READ)) == SHALE_OK) {
    BtreeCheckRoot roots[MAX_ROOTS];
    int nroot = mutant_roots(bt, s, roots);
    char *rep = NULL;
    int nerr = 0;
    RC(btree_integrity_check(bt, roots, nroot, 50, &rep, &nerr));
    shale_free(rep);
    RC(btree_commit(bt));
  }
  RC(btree_close(bt));
leak:
  if (util_alloc_outstanding() != base) {
    fail_child(idx, "leaked %ld shale_malloc blocks", util_alloc_outstanding() - base);
  }
}

/* Save mutant idx of seed si for reproduction; returns the path. */
static const char *save_mutant(int si, int idx) {
  static char name[64];
  snprintf(name, sizeof name, "crash_%s_%d.db", seeds[si].name, idx);
  const char *p = test_path(name);
  uint8_t *b = malloc((size_t)seeds[si].size);
  uint64_t r = test_seed() ^ ((uint64_t)(si + 1) * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)(idx + 1) * 0xD1B54A32D192ED03ULL);
  if (!r) r = 1; /* xorshift never leaves 0 */
  test_rand(&r);
  memcpy(b, seeds[si].bytes, (size_t)seeds[si].size);
  long sz = mutate(&seeds[si], b, seeds[si].size, &r);
  FILE *f = fopen(p, "wb");
  if (f) {
    fwrite(b, 1, (size_t)sz, f);
    fclose(f);
  }
  free(b);
  return p;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "fuzz: mutant timed out\n";
  if (write(2, m, sizeof m - 1) < 0) _exit(3);
  _exit(3);
}

/* Run mutants [0, n) of seed si in forked children; a crash or hang is
 * recorded and the run resumes after the mutant that caused it. */
static void fuzz_seed(int si, int n) {
  const Seed *s = &seeds[si];
  cur_seed = si;
  const char *path = test_path("mutant.db");
  int next = 0, crashes = 0;
  while (next < n && crashes < 10) {
    sh->cur = -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
      signal(SIGALRM, on_alarm);
      uint8_t *b = malloc((size_t)s->size);
      for (int i = next; i < n; i++) {
        sh->cur = i;
        alarm(ALARM_S);
        run_mutant(s, si, i, path, b);
      }
      alarm(0);
      free(b);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) break;
    crashes++;
    int at = sh->cur;
    const char *saved = at >= 0 ? save_mutant(si, at) : "?";
    test_fail(__FILE__, __LINE__, "seed %s mutant %d: %s %d; saved as %s", s->name, at,
              WIFSIGNALED(st) ? "killed by signal" : "exit status",
              WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), saved);
    next = at < 0 ? n : at + 1;
  }
}

static int fuzz_count(void) {
  const char *e = getenv("SHALE_FUZZ_N");
  if (e && atoi(e) > 0) return atoi(e);
  return test_long() ? FUZZ_DEFAULT * 10 : FUZZ_DEFAULT;
}

/* SHALE_FUZZ_REPLAY=<seed name>:<index> runs that one mutant in this process
 * (under a debugger or ASan) and saves it as replay.db. */
static int replay(void) {
  const char *e = getenv("SHALE_FUZZ_REPLAY");
  if (!e) return 0;
  const char *colon = strchr(e, ':');
  for (int si = 0; colon && si < NSEED; si++) {
    if (strncmp(seeds[si].name, e, (size_t)(colon - e)) || seeds[si].name[colon - e]) continue;
    int idx = atoi(colon + 1);
    printf("replaying %s mutant %d (saved as %s)\n", seeds[si].name, idx, save_mutant(si, idx));
    fflush(stdout);
    uint8_t *b = malloc((size_t)seeds[si].size);
    cur_seed = si;
    run_mutant(&seeds[si], si, idx, test_path("mutant.db"), b);
    free(b);
    for (int i = 0; i < sh->nfail; i++) printf("failure: %s\n", sh->fail[i].what);
  }
  return 1;
}

TEST(fuzz_corrupt_files) {
  build_seeds();
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(sh != MAP_FAILED);
  if (sh == MAP_FAILED) return;
  memset(sh, 0, sizeof *sh);
  int total = fuzz_count();
  if (replay()) total = 0;
  for (int si = 0; si < NSEED && total; si++) fuzz_seed(si, total / NSEED);
  for (int i = 0; i < sh->nfail; i++) {
    Failure *f = &sh->fail[i];
    test_fail(__FILE__, __LINE__, "seed %s mutant %d: %s (saved as %s)", seeds[f->seed].name,
              f->idx, f->what, save_mutant(f->seed, f->idx));
  }
  printf(
      "fuzz: %ld mutants, %ld opened, %ld entries read, %ld SHALE_CORRUPT results, "
      "%ld check messages, %ld writes committed\n",
      sh->mutants, sh->opened, sh->entries, sh->corrupt_rc, sh->check_msgs, sh->writes_ok);
  CHECK(sh->mutants >= (long)total - 10);
  munmap(sh, sizeof *sh);
  for (int i = 0; i < NSEED; i++) {
    free(seeds[i].bytes);
    seeds[i].bytes = NULL;
  }
}
