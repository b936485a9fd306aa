/*
 * shale-inspect.c -- print the structure of an SQLite/Shale database file.
 *
 *   shale-inspect FILE [--header] [--pages] [--freelist] [--ptrmap] [--page N]... [--schema]
 *
 * Reads the file directly with pread (no pager, no locks), so it works on
 * damaged files and while another process has it open. With no option it
 * prints the header.
 *
 * Invariants:
 *  1. Every byte read is bounds-checked against the page or the file: any
 *     corruption is reported as a line starting "corrupt:" and the tool goes
 *     on; it never crashes or loops (each page is visited at most once per
 *     walk, and chains are cut at the page count).
 *  2. Page roles come only from walking the structure: sqlite_schema (page 1)
 *     and every rootpage it names, their overflow chains, the freelist, plus
 *     the lock-byte and pointer-map pages computed from the header.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/record/record.h"

#define MAX_DEPTH 40
#define MAX_GATHER (1u << 20) /* payload bytes gathered for display */

enum {
  R_UNUSED,
  R_TABLE_LEAF,
  R_TABLE_INTERIOR,
  R_INDEX_LEAF,
  R_INDEX_INTERIOR,
  R_BAD_BTREE,
  R_OVERFLOW,
  R_FREE_TRUNK,
  R_FREE_LEAF,
  R_LOCK_BYTE,
  R_PTRMAP,
  R_HEADER_ONLY
};
static const char *const role_name[] = {"unused",     "table-leaf",     "table-interior",
                                        "index-leaf", "index-interior", "bad-btree-page",
                                        "overflow",   "freelist-trunk", "freelist-leaf",
                                        "lock-byte",  "ptrmap",         "?"};

typedef struct Db {
  int fd;
  uint64_t file_size;
  uint8_t hdr[100];
  uint32_t page_size, usable, npages;
  uint8_t *role;     /* per page (1-based), R_* */
  int *owner;        /* per page: index into tree names, or -1 */
  uint8_t *ptype;    /* per page: the pointer-map type it should have (1-5), 0 unknown */
  uint32_t *pparent; /* per page: the pointer-map parent it should have */
  char **names;      /* tree names (owner index) */
  int nnames;
  int ncorrupt;
} Db;

static void corrupt(Db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void corrupt(Db *db, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("corrupt: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  db->ncorrupt++;
}

/* Read page pgno into buf (page_size bytes); 0 on success. */
static int read_page(Db *db, uint32_t pgno, uint8_t *buf) {
  if (pgno < 1 || pgno > db->npages) return -1;
  off_t off = (off_t)(pgno - 1) * db->page_size;
  ssize_t n = pread(db->fd, buf, db->page_size, off);
  return n == (ssize_t)db->page_size ? 0 : -1;
}

/* ---- header ---- */

static int valid_page_size(uint32_t ps) { return ps >= 512 && ps <= 65536 && (ps & (ps - 1)) == 0; }

static void print_header(Db *db) {
  const uint8_t *h = db->hdr;
  static const char magic[16] = "SQLite format 3";
  printf("magic: %s\n", memcmp(h, magic, 16) == 0 ? "\"SQLite format 3\" (ok)" : "BAD");
  uint32_t raw = util_get2(h + 16);
  printf("page_size: %u%s\n", raw == 1 ? 65536 : raw,
         valid_page_size(raw == 1 ? 65536 : raw) ? "" : " (invalid)");
  printf("write_version: %u%s\n", h[18], h[18] == 2 ? " (WAL)" : h[18] == 1 ? " (legacy)" : "");
  printf("read_version: %u%s\n", h[19], h[19] == 2 ? " (WAL)" : h[19] == 1 ? " (legacy)" : "");
  printf("reserved_bytes: %u\n", h[20]);
  printf("max_payload_fraction: %u\n", h[21]);
  printf("min_payload_fraction: %u\n", h[22]);
  printf("leaf_payload_fraction: %u\n", h[23]);
  printf("file_change_counter: %u\n", util_get4(h + 24));
  uint32_t hsize = util_get4(h + 28);
  int size_valid = hsize != 0 && memcmp(h + 24, h + 92, 4) == 0;
  printf("database_size: %u (%s)\n", hsize, size_valid ? "valid" : "not valid: file size used");
  printf("first_freelist_trunk: %u\n", util_get4(h + 32));
  printf("freelist_count: %u\n", util_get4(h + 36));
  printf("schema_cookie: %u\n", util_get4(h + 40));
  printf("schema_format: %u\n", util_get4(h + 44));
  printf("default_cache_size: %d\n", (int32_t)util_get4(h + 48));
  printf("largest_root_page: %u%s\n", util_get4(h + 52), util_get4(h + 52) ? " (auto-vacuum)" : "");
  uint32_t enc = util_get4(h + 56);
  printf("text_encoding: %u%s\n", enc,
         enc == 1   ? " (UTF-8)"
         : enc == 2 ? " (UTF-16le)"
         : enc == 3 ? " (UTF-16be)"
                    : "");
  printf("user_version: %d\n", (int32_t)util_get4(h + 60));
  printf("incremental_vacuum: %u\n", util_get4(h + 64));
  printf("application_id: %d\n", (int32_t)util_get4(h + 68));
  int zero = 1;
  for (int i = 72; i < 92; i++) zero &= h[i] == 0;
  printf("reserved_for_expansion: %s\n", zero ? "all zero" : "NON-ZERO");
  printf("version_valid_for: %u\n", util_get4(h + 92));
  printf("sqlite_version_number: %u\n", util_get4(h + 96));
  printf("usable_size: %u\n", db->usable);
  printf("file_pages: %llu (file size %llu)\n",
         (unsigned long long)(db->page_size ? db->file_size / db->page_size : 0),
         (unsigned long long)db->file_size);
  printf("page_count: %u\n", db->npages);
}

/* ---- cells ---- */

typedef struct Cell {
  uint32_t child;      /* interior: left child */
  int64_t rowid;       /* table cells */
  uint64_t payload;    /* total payload bytes (P) */
  uint32_t local;      /* bytes on the page */
  uint32_t ovfl;       /* first overflow page or 0 */
  const uint8_t *data; /* local payload */
  uint32_t size;       /* cell bytes on the page */
} Cell;

static int is_btree_type(int t) { return t == 0x02 || t == 0x05 || t == 0x0a || t == 0x0d; }
static int hdr_off(uint32_t pgno) { return pgno == 1 ? 100 : 0; }

static uint32_t local_size(Db *db, int type, uint64_t p) {
  uint32_t u = db->usable;
  uint32_t x = type == 0x0d ? u - 35 : (u - 12) * 64 / 255 - 23;
  uint32_t m = (u - 12) * 32 / 255 - 23;
  if (p <= x) return (uint32_t)p;
  uint32_t k = m + (uint32_t)((p - m) % (u - 4));
  return k <= x ? k : m;
}

/* Parse the cell at offset off of page pg (type t); NULL or an error. */
static const char *parse_cell(Db *db, const uint8_t *pg, int t, uint32_t off, Cell *c) {
  const uint8_t *end = pg + db->usable, *p = pg + off;
  uint64_t v;
  int k;
  memset(c, 0, sizeof *c);
  if (off < 8 || off >= db->usable) return "cell offset out of range";
  if (t == 0x02 || t == 0x05) {
    if (p + 4 > end) return "cell runs past the page";
    c->child = util_get4(p);
    p += 4;
  }
  if (t == 0x05) {
    if (!(k = util_get_varint_safe(p, end, &v))) return "bad rowid varint";
    c->rowid = (int64_t)v;
    c->size = (uint32_t)(p + k - (pg + off));
    return NULL;
  }
  if (!(k = util_get_varint_safe(p, end, &v))) return "bad payload-size varint";
  p += k;
  c->payload = v;
  if (t == 0x0d) {
    if (!(k = util_get_varint_safe(p, end, &v))) return "bad rowid varint";
    c->rowid = (int64_t)v;
    p += k;
  }
  if (c->payload > 0x7fffffffu) return "payload size too large";
  c->local = local_size(db, t, c->payload);
  if ((uint64_t)(end - p) < c->local) return "local payload runs past the page";
  c->data = p;
  p += c->local;
  if (c->local < c->payload) {
    if (p + 4 > end) return "overflow pointer runs past the page";
    c->ovfl = util_get4(p);
    p += 4;
    if (c->ovfl == 0) return "payload spills but overflow page is 0";
  }
  c->size = (uint32_t)(p - (pg + off));
  return NULL;
}

/* Gather up to cap payload bytes of c into out (following overflow);
 * returns the count gathered. Reports a broken chain. */
static uint32_t gather(Db *db, const Cell *c, uint8_t *out, uint32_t cap, uint8_t *scratch) {
  uint32_t want = c->payload < cap ? (uint32_t)c->payload : cap;
  uint32_t n = c->local < want ? c->local : want;
  memcpy(out, c->data, n);
  uint32_t next = c->ovfl, steps = 0;
  while (n < want && next) {
    if (++steps > db->npages || read_page(db, next, scratch)) {
      corrupt(db, "overflow chain broken at page %u", next);
      break;
    }
    uint32_t take = db->usable - 4;
    if (take > want - n) take = want - n;
    memcpy(out + n, scratch + 4, take);
    n += take;
    next = util_get4(scratch);
  }
  return n;
}

/* ---- values ---- */

static void print_value(const ShValue *v) {
  char buf[32];
  switch (v->type) {
    case SHALE_INTEGER:
      printf("%lld", (long long)v->i);
      break;
    case SHALE_FLOAT:
      record_real_to_text(v->r, buf);
      printf("%s", buf);
      break;
    case SHALE_TEXT: {
      uint32_t n = v->n > 40 ? 40 : v->n;
      putchar('\'');
      for (uint32_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v->z[i];
        if (ch == '\'')
          printf("''");
        else if (ch < 0x20)
          printf("\\x%02x", ch);
        else
          putchar(ch);
      }
      printf("'%s", v->n > 40 ? "..." : "");
      if (v->n > 40) printf("(%u bytes)", v->n);
      break;
    }
    case SHALE_BLOB: {
      uint32_t n = v->n > 20 ? 20 : v->n;
      printf("X'");
      for (uint32_t i = 0; i < n; i++) printf("%02x", (unsigned char)v->z[i]);
      printf("'%s", v->n > 20 ? "..." : "");
      if (v->n > 20) printf("(%u bytes)", v->n);
      break;
    }
    default:
      printf("NULL");
      break;
  }
}

/* Print the record rec[0..n) (n may be a prefix of total bytes). */
static void print_record(const uint8_t *rec, uint32_t n, uint64_t total) {
  enum { MAXC = 2000 };
  static uint32_t types[MAXC], offs[MAXC];
  int ncol;
  if (n < total) {
    printf("(record not fully gathered)");
    return;
  }
  if (record_parse_header(rec, n, types, offs, MAXC, &ncol) != SHALE_OK) {
    printf("(malformed record)");
    return;
  }
  putchar('(');
  for (int i = 0; i < ncol; i++) {
    ShValue v;
    record_decode_value(types[i], rec + offs[i], &v);
    if (i) printf(", ");
    print_value(&v);
  }
  putchar(')');
}

/* ---- walking ---- */

static int add_name(Db *db, const char *name) {
  char **nn = realloc(db->names, sizeof(char *) * (size_t)(db->nnames + 1));
  if (!nn) return -1;
  db->names = nn;
  db->names[db->nnames] = strdup(name);
  return db->nnames++;
}

/* Claim page pgno for role r of tree owner; 0 if it was already claimed. */
static int claim(Db *db, uint32_t pgno, int r, int owner, const char *what, int ptype,
                 uint32_t parent) {
  if (pgno < 1 || pgno > db->npages) {
    corrupt(db, "%s refers to page %u, outside the file (%u pages)", what, pgno, db->npages);
    return 0;
  }
  if (db->role[pgno] != R_UNUSED) {
    corrupt(db, "page %u: 2nd reference (%s; already %s)", pgno, what, role_name[db->role[pgno]]);
    return 0;
  }
  db->role[pgno] = (uint8_t)r;
  db->owner[pgno] = owner;
  db->ptype[pgno] = (uint8_t)ptype;
  db->pparent[pgno] = parent;
  return 1;
}

static void claim_overflow(Db *db, const Cell *c, int owner, uint32_t cellpage, uint8_t *scratch) {
  uint64_t remain = c->payload - c->local;
  uint32_t next = c->ovfl, prev = 0;
  while (remain > 0 && next) {
    if (!claim(db, next, R_OVERFLOW, owner, "overflow chain", prev ? 4 : 3, prev ? prev : cellpage))
      return;
    prev = next;
    if (read_page(db, next, scratch)) return;
    uint32_t take = db->usable - 4;
    remain = remain > take ? remain - take : 0;
    next = util_get4(scratch);
    if (remain == 0 && next) corrupt(db, "overflow page %u: chain longer than the payload", next);
  }
  if (remain > 0) corrupt(db, "overflow chain of tree %s ends early", db->names[owner]);
}

/* Called for every table-leaf row while walking (schema reading). */
typedef void (*RowFn)(Db *, int64_t rowid, const uint8_t *rec, uint32_t n, uint64_t total,
                      void *ctx);

/* Walk the tree at pgno. claim != 0 records page roles. fn (optional) gets
 * each table row. seen guards against cycles when not claiming. */
static void walk(Db *db, uint32_t pgno, uint32_t parent, int owner, int depth, int do_claim,
                 uint8_t *seen, RowFn fn, void *ctx) {
  if (depth > MAX_DEPTH) {
    corrupt(db, "tree %s deeper than %d", db->names[owner], MAX_DEPTH);
    return;
  }
  if (pgno < 1 || pgno > db->npages) {
    corrupt(db, "tree %s: child page %u outside the file", db->names[owner], pgno);
    return;
  }
  if (seen) {
    if (seen[pgno]) {
      corrupt(db, "tree %s: page %u reached twice", db->names[owner], pgno);
      return;
    }
    seen[pgno] = 1;
  }
  uint8_t *pg = malloc(db->page_size), *scratch = malloc(db->page_size);
  uint8_t *rec = NULL;
  if (!pg || !scratch) goto done;
  if (read_page(db, pgno, pg)) {
    corrupt(db, "page %u unreadable", pgno);
    goto done;
  }
  int ho = hdr_off(pgno), t = pg[ho];
  int r = t == 0x0d   ? R_TABLE_LEAF
          : t == 0x05 ? R_TABLE_INTERIOR
          : t == 0x0a ? R_INDEX_LEAF
          : t == 0x02 ? R_INDEX_INTERIOR
                      : R_BAD_BTREE;
  if (do_claim && !claim(db, pgno, r, owner, "b-tree", parent ? 5 : 1, parent)) goto done;
  if (r == R_BAD_BTREE) {
    corrupt(db, "page %u (tree %s): bad page type 0x%02x", pgno, db->names[owner], t);
    goto done;
  }
  int interior = t == 0x02 || t == 0x05;
  uint32_t ncell = util_get2(pg + ho + 3), cpa = (uint32_t)ho + (interior ? 12 : 8);
  if (cpa + 2 * ncell > db->usable) {
    corrupt(db, "page %u: %u cells do not fit", pgno, ncell);
    goto done;
  }
  for (uint32_t i = 0; i < ncell; i++) {
    Cell c;
    uint32_t off = util_get2(pg + cpa + 2 * i);
    const char *err = parse_cell(db, pg, t, off, &c);
    if (err) {
      corrupt(db, "page %u cell %u: %s", pgno, i, err);
      continue;
    }
    if (interior) walk(db, c.child, pgno, owner, depth + 1, do_claim, seen, fn, ctx);
    if (do_claim && c.ovfl) claim_overflow(db, &c, owner, pgno, scratch);
    if (fn && t == 0x0d) {
      if (!rec) rec = malloc(MAX_GATHER);
      if (!rec) continue;
      uint32_t n = gather(db, &c, rec, MAX_GATHER, scratch);
      fn(db, c.rowid, rec, n, c.payload, ctx);
    }
  }
  if (interior) walk(db, util_get4(pg + ho + 8), pgno, owner, depth + 1, do_claim, seen, fn, ctx);
done:
  free(rec);
  free(pg);
  free(scratch);
}

typedef struct SchemaRow {
  char type[16], name[256], tbl[256];
  int64_t root;
  char *sql;
} SchemaRow;

typedef struct Schema {
  SchemaRow *rows;
  int n;
} Schema;

static void text_field(const uint8_t *rec, uint32_t n, int col, char *out, size_t cap) {
  ShValue v;
  out[0] = 0;
  if (record_column(rec, n, col, &v) == SHALE_OK && v.type == SHALE_TEXT) {
    size_t k = v.n < cap - 1 ? v.n : cap - 1;
    memcpy(out, v.z, k);
    out[k] = 0;
  }
}

static void schema_row(Db *db, int64_t rowid, const uint8_t *rec, uint32_t n, uint64_t total,
                       void *ctx) {
  Schema *s = ctx;
  (void)rowid;
  if (n < total) {
    corrupt(db, "sqlite_schema row %lld too large to read", (long long)rowid);
    return;
  }
  int ncol;
  if (record_column_count(rec, n, &ncol) != SHALE_OK) {
    corrupt(db, "sqlite_schema row %lld: malformed record", (long long)rowid);
    return;
  }
  SchemaRow *rows = realloc(s->rows, sizeof *rows * (size_t)(s->n + 1));
  if (!rows) return;
  s->rows = rows;
  SchemaRow *r = &rows[s->n++];
  memset(r, 0, sizeof *r);
  text_field(rec, n, 0, r->type, sizeof r->type);
  text_field(rec, n, 1, r->name, sizeof r->name);
  text_field(rec, n, 2, r->tbl, sizeof r->tbl);
  ShValue v;
  if (record_column(rec, n, 3, &v) == SHALE_OK && v.type == SHALE_INTEGER) r->root = v.i;
  if (record_column(rec, n, 4, &v) == SHALE_OK && v.type == SHALE_TEXT) {
    r->sql = malloc(v.n + 1);
    if (r->sql) {
      memcpy(r->sql, v.z, v.n);
      r->sql[v.n] = 0;
    }
  }
}

static void load_schema(Db *db, Schema *s) {
  uint8_t *seen = calloc((size_t)db->npages + 1, 1);
  if (!seen) return;
  walk(db, 1, 0, 0, 0, 0, seen, schema_row, s);
  free(seen);
}

static void free_schema(Schema *s) {
  for (int i = 0; i < s->n; i++) free(s->rows[i].sql);
  free(s->rows);
}

static uint32_t lock_byte_page(Db *db) { return (uint32_t)(1073741824u / db->page_size) + 1; }

/* Work out every page's role. */
static void find_roles(Db *db, Schema *s) {
  walk(db, 1, 0, 0, 0, 1, NULL, NULL, NULL);
  for (int i = 0; i < s->n; i++) {
    if (s->rows[i].root <= 0) continue;
    if (s->rows[i].root > db->npages) {
      corrupt(db, "%s %s: rootpage %lld outside the file", s->rows[i].type, s->rows[i].name,
              (long long)s->rows[i].root);
      continue;
    }
    int owner = add_name(db, s->rows[i].name);
    if (owner >= 0) walk(db, (uint32_t)s->rows[i].root, 0, owner, 0, 1, NULL, NULL, NULL);
  }
  /* freelist */
  int fl = add_name(db, "freelist");
  uint32_t trunk = util_get4(db->hdr + 32), count = 0, steps = 0;
  uint8_t *pg = malloc(db->page_size);
  while (pg && trunk && steps++ <= db->npages) {
    if (!claim(db, trunk, R_FREE_TRUNK, fl, "freelist trunk", 2, 0)) break;
    count++;
    if (read_page(db, trunk, pg)) break;
    uint32_t nleaf = util_get4(pg + 4);
    if (nleaf > db->usable / 4 - 2) {
      corrupt(db, "freelist trunk %u: %u leaves (max %u)", trunk, nleaf, db->usable / 4 - 2);
      nleaf = db->usable / 4 - 2;
    }
    for (uint32_t i = 0; i < nleaf; i++)
      if (claim(db, util_get4(pg + 8 + 4 * i), R_FREE_LEAF, fl, "freelist leaf", 2, 0)) count++;
    trunk = util_get4(pg);
  }
  free(pg);
  if (count != util_get4(db->hdr + 36))
    corrupt(db, "freelist has %u pages, header says %u", count, util_get4(db->hdr + 36));
  uint32_t lb = lock_byte_page(db);
  if (lb <= db->npages) {
    if (db->role[lb] != R_UNUSED)
      corrupt(db, "lock-byte page %u is in use", lb);
    else
      db->role[lb] = R_LOCK_BYTE;
  }
  if (util_get4(db->hdr + 52)) {
    uint32_t j = db->usable / 5;
    for (uint64_t p = 2; p <= db->npages; p += j + 1) {
      uint32_t pm = (uint32_t)p == lb ? lb + 1 : (uint32_t)p;
      if (pm > db->npages) break;
      if (db->role[pm] != R_UNUSED)
        corrupt(db, "pointer-map page %u is in use", pm);
      else
        db->role[pm] = R_PTRMAP;
    }
  }
}

/* The pointer-map page holding the entry of page p (docs/format.md §8). */
static uint32_t ptrmap_page_for(Db *db, uint32_t p) {
  uint32_t j = db->usable / 5;
  uint32_t pm = 2 + ((p - 2) / (j + 1)) * (j + 1);
  return pm == lock_byte_page(db) ? pm + 1 : pm;
}

/* Every pointer-map entry against what the structure says it should be. */
static void print_ptrmap(Db *db) {
  if (!util_get4(db->hdr + 52)) {
    printf("ptrmap: none (not an auto-vacuum database)\n");
    return;
  }
  uint8_t *pg = malloc(db->page_size);
  uint32_t cached = 0, checked = 0, bad = 0, lb = lock_byte_page(db);
  for (uint32_t p = 3; pg && p <= db->npages; p++) {
    uint32_t pm = ptrmap_page_for(db, p);
    if (pm == p || p == lb || pm > db->npages) continue;
    if (pm != cached) {
      if (read_page(db, pm, pg)) break;
      cached = pm;
    }
    uint32_t idx = p - pm - 1, off = 5 * idx;
    if (off + 5 > db->usable) {
      corrupt(db, "ptrmap entry for page %u beyond page %u", p, pm);
      continue;
    }
    int t = pg[off];
    uint32_t parent = util_get4(pg + off + 1);
    printf("ptrmap page %u: type %d parent %u\n", p, t, parent);
    checked++;
    int et = db->ptype[p];
    uint32_t ep = db->pparent[p];
    if (et && (et != t || ep != parent)) {
      corrupt(db, "ptrmap entry for page %u is (%d, %u), expected (%d, %u)", p, t, parent, et, ep);
      bad++;
    }
  }
  printf("ptrmap: %u entries, %u wrong\n", checked, bad);
  free(pg);
}

static void print_pages(Db *db) {
  for (uint32_t p = 1; p <= db->npages; p++) {
    int r = db->role[p];
    printf("page %u: %s", p, role_name[r]);
    if (r >= R_TABLE_LEAF && r <= R_OVERFLOW && db->owner[p] >= 0)
      printf(" (%s)", db->names[db->owner[p]]);
    printf("\n");
  }
}

static void print_freelist(Db *db) {
  uint32_t trunk = util_get4(db->hdr + 32), total = 0, steps = 0;
  uint8_t *pg = malloc(db->page_size);
  printf("freelist: first trunk %u, header count %u\n", trunk, util_get4(db->hdr + 36));
  while (pg && trunk && steps++ <= db->npages) {
    if (read_page(db, trunk, pg)) {
      corrupt(db, "freelist trunk %u unreadable", trunk);
      break;
    }
    uint32_t nleaf = util_get4(pg + 4), next = util_get4(pg);
    printf("trunk %u: next %u, %u leaves:", trunk, next, nleaf);
    if (nleaf > db->usable / 4 - 2) {
      printf(" (too many)");
      nleaf = db->usable / 4 - 2;
    }
    for (uint32_t i = 0; i < nleaf; i++) printf(" %u", util_get4(pg + 8 + 4 * i));
    printf("\n");
    total += 1 + nleaf;
    trunk = next;
  }
  printf("freelist total: %u pages\n", total);
  free(pg);
}

static void print_page(Db *db, uint32_t pgno) {
  uint8_t *pg = malloc(db->page_size), *scratch = malloc(db->page_size);
  uint8_t *rec = malloc(MAX_GATHER);
  if (!pg || !scratch || !rec) goto done;
  if (read_page(db, pgno, pg)) {
    printf("page %u: outside the file (%u pages)\n", pgno, db->npages);
    goto done;
  }
  int r = db->role[pgno];
  printf("page %u: %s", pgno, role_name[r]);
  if (db->owner[pgno] >= 0) printf(" (%s)", db->names[db->owner[pgno]]);
  printf("\n");
  if (r == R_OVERFLOW) {
    printf("  next overflow page: %u\n", util_get4(pg));
    goto done;
  }
  if (r == R_FREE_TRUNK) {
    printf("  next trunk: %u\n  leaves: %u\n", util_get4(pg), util_get4(pg + 4));
    goto done;
  }
  int ho = hdr_off(pgno), t = pg[ho];
  if (!is_btree_type(t)) {
    if (r != R_UNUSED && r != R_BAD_BTREE) goto done;
    printf("  not a b-tree page (type byte 0x%02x)\n", t);
    goto done;
  }
  int interior = t == 0x02 || t == 0x05;
  uint32_t ncell = util_get2(pg + ho + 3), cstart = util_get2(pg + ho + 5);
  uint32_t cpa = (uint32_t)ho + (interior ? 12 : 8);
  printf("  type: 0x%02x\n", t);
  printf("  first_freeblock: %u\n", util_get2(pg + ho + 1));
  printf("  cells: %u\n", ncell);
  printf("  content_start: %u\n", cstart ? cstart : 65536);
  printf("  fragmented_bytes: %u\n", pg[ho + 7]);
  if (interior) printf("  right_child: %u\n", util_get4(pg + ho + 8));
  uint32_t fb = util_get2(pg + ho + 1), nfb = 0;
  while (fb) {
    if (fb + 4 > db->usable || ++nfb > db->usable / 4) {
      corrupt(db, "page %u: freeblock at %u out of range", pgno, fb);
      break;
    }
    uint32_t size = util_get2(pg + fb + 2), next = util_get2(pg + fb);
    printf("  freeblock @%u: %u bytes\n", fb, size);
    if (next && next <= fb) {
      corrupt(db, "page %u: freeblock list not ascending", pgno);
      break;
    }
    fb = next;
  }
  if (cpa + 2 * ncell > db->usable) {
    corrupt(db, "page %u: %u cells do not fit", pgno, ncell);
    goto done;
  }
  for (uint32_t i = 0; i < ncell; i++) {
    Cell c;
    uint32_t off = util_get2(pg + cpa + 2 * i);
    const char *err = parse_cell(db, pg, t, off, &c);
    printf("  cell %u @%u:", i, off);
    if (err) {
      printf(" %s\n", err);
      db->ncorrupt++;
      continue;
    }
    if (interior) printf(" child %u", c.child);
    if (t == 0x05) {
      printf(" rowid %lld\n", (long long)c.rowid);
      continue;
    }
    if (t == 0x0d) printf(" rowid %lld", (long long)c.rowid);
    printf(" payload %llu local %u", (unsigned long long)c.payload, c.local);
    if (c.ovfl) printf(" overflow %u", c.ovfl);
    printf(": ");
    uint32_t n = gather(db, &c, rec, MAX_GATHER, scratch);
    print_record(rec, n, c.payload);
    printf("\n");
  }
done:
  free(pg);
  free(scratch);
  free(rec);
}

static void print_schema(Schema *s) {
  for (int i = 0; i < s->n; i++)
    printf("%s|%s|%s|%lld|%s\n", s->rows[i].type, s->rows[i].name, s->rows[i].tbl,
           (long long)s->rows[i].root, s->rows[i].sql ? s->rows[i].sql : "");
}

static void usage(void) {
  fprintf(stderr,
          "usage: shale-inspect FILE [--header] [--pages] [--freelist] [--ptrmap] [--page N]... "
          "[--schema]\n");
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int o_header = 0, o_pages = 0, o_free = 0, o_schema = 0, o_ptrmap = 0;
  long o_page[64];
  int npage = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--header"))
      o_header = 1;
    else if (!strcmp(argv[i], "--pages"))
      o_pages = 1;
    else if (!strcmp(argv[i], "--freelist"))
      o_free = 1;
    else if (!strcmp(argv[i], "--schema"))
      o_schema = 1;
    else if (!strcmp(argv[i], "--ptrmap"))
      o_ptrmap = 1;
    else if (!strcmp(argv[i], "--page") && i + 1 < argc && npage < 64)
      o_page[npage++] = strtol(argv[++i], NULL, 10);
    else if (argv[i][0] == '-' || path) {
      usage();
      return 2;
    } else
      path = argv[i];
  }
  if (!path) {
    usage();
    return 2;
  }
  if (!o_pages && !o_free && !o_schema && !o_ptrmap && npage == 0) o_header = 1;

  Db db;
  memset(&db, 0, sizeof db);
  db.fd = open(path, O_RDONLY);
  if (db.fd < 0) {
    perror(path);
    return 1;
  }
  struct stat st;
  if (fstat(db.fd, &st) != 0) {
    perror(path);
    return 1;
  }
  db.file_size = (uint64_t)st.st_size;
  if (pread(db.fd, db.hdr, 100, 0) != 100) {
    printf("corrupt: file shorter than the 100-byte header (%llu bytes)\n",
           (unsigned long long)db.file_size);
    close(db.fd);
    return 1;
  }
  uint32_t raw = util_get2(db.hdr + 16);
  db.page_size = raw == 1 ? 65536 : raw;
  int ok = valid_page_size(db.page_size) && db.page_size - db.hdr[20] >= 480;
  if (ok) {
    db.usable = db.page_size - db.hdr[20];
    uint64_t nfile = db.file_size / db.page_size;
    uint32_t hsize = util_get4(db.hdr + 28);
    int size_valid = hsize != 0 && memcmp(db.hdr + 24, db.hdr + 92, 4) == 0;
    db.npages = size_valid ? hsize : (uint32_t)(nfile > 0xffffffffu ? 0xffffffffu : nfile);
    if (db.npages > nfile) {
      printf("corrupt: header claims %u pages, the file has %llu\n", db.npages,
             (unsigned long long)nfile);
      db.ncorrupt++;
      db.npages = (uint32_t)nfile;
    }
  } else {
    db.page_size = 0;
  }
  if (o_header) print_header(&db);
  if (!ok) {
    if (o_pages || o_free || o_schema || o_ptrmap || npage > 0)
      printf("corrupt: invalid page size / reserved bytes; cannot read pages\n");
    close(db.fd);
    return 1;
  }
  db.role = calloc((size_t)db.npages + 1, 1);
  db.owner = malloc(sizeof(int) * ((size_t)db.npages + 1));
  db.ptype = calloc((size_t)db.npages + 1, 1);
  db.pparent = calloc((size_t)db.npages + 1, sizeof(uint32_t));
  if (!db.role || !db.owner || !db.ptype || !db.pparent) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (uint32_t p = 0; p <= db.npages; p++) db.owner[p] = -1;
  add_name(&db, "sqlite_schema");
  Schema schema = {NULL, 0};
  int need_roles = o_pages || o_ptrmap || npage > 0;
  if (db.npages >= 1 && (o_schema || need_roles)) load_schema(&db, &schema);
  if (o_schema) print_schema(&schema);
  if (need_roles) find_roles(&db, &schema);
  if (o_pages) print_pages(&db);
  if (o_ptrmap) print_ptrmap(&db);
  if (o_free) print_freelist(&db);
  for (int i = 0; i < npage; i++) {
    if (o_page[i] < 1 || o_page[i] > (long)db.npages)
      printf("page %ld: outside the file (%u pages)\n", o_page[i], db.npages);
    else
      print_page(&db, (uint32_t)o_page[i]);
  }
  free_schema(&schema);
  for (int i = 0; i < db.nnames; i++) free(db.names[i]);
  free(db.names);
  free(db.role);
  free(db.owner);
  free(db.ptype);
  free(db.pparent);
  close(db.fd);
  return db.ncorrupt ? 3 : 0;
}
