/*
 * btree.h -- table and index B-trees on SQLite's page format.
 *
 * A Btree is one database file opened by one connection (it owns a Pager).
 * Table trees (BTREE_INTKEY) are keyed by a signed 64-bit rowid and carry a
 * payload (the record); index trees (BTREE_BLOBKEY) carry only a key (the
 * record), ordered by a comparator supplied by the layer above (which knows
 * collations and sort orders); WITHOUT ROWID tables are index trees.
 * Page 1 holds the 100-byte header and the root of sqlite_schema.
 *
 * Invariants:
 *  1. Every page written obeys docs/format.md §4-§5: cell pointers in key
 *     order, freeblocks sorted and >= 4 bytes, fragments <= 60, payload
 *     spill by the X/M/K rule, overflow chains exact.
 *  2. Interior table cells hold the largest rowid of their left subtree (or
 *     any key separating the subtrees after deletes).
 *  3. No page is reachable twice; every page is in exactly one tree, one
 *     overflow chain or the freelist (checked by btree_integrity_check).
 *  4. Corruption found while reading returns SHALE_CORRUPT and sets
 *     btree_errmsg() to a message naming the page; it never crashes.
 *  5. A cursor whose tree was modified through another cursor of the same
 *     Btree is saved (it remembers its key) and restored transparently by
 *     seeking on its next use; a cursor whose entry was deleted is left so
 *     that next() yields the entry after it and prev() the one before.
 *  6. Files with auto_vacuum (header offset 52 != 0) keep their pointer
 *     maps exact through every change; new roots go right after the largest
 *     root and a dropped root's page takes the largest root (sqlite_schema
 *     is patched); with auto_vacuum=FULL (offset 64 == 0) every commit
 *     leaves an empty freelist.
 */
#ifndef SHALE_BTREE_H
#define SHALE_BTREE_H

#include <stdint.h>

#include "../pager/pager.h"

typedef struct Btree Btree;
typedef struct BtCursor BtCursor;

/* Tree kinds for btree_create_table. */
#define BTREE_INTKEY 1  /* table: rowid -> payload (page types 0x05/0x0d) */
#define BTREE_BLOBKEY 2 /* index / WITHOUT ROWID: key only (0x02/0x0a) */

/* Header meta values: idx i is the u32 at file offset 36 + 4*i. */
#define BTREE_META_FREE_COUNT 0 /* 36: read-only, maintained by the btree */
#define BTREE_META_SCHEMA_COOKIE 1
#define BTREE_META_SCHEMA_FORMAT 2
#define BTREE_META_DEFAULT_CACHE 3
#define BTREE_META_LARGEST_ROOT 4 /* auto-vacuum; read-only here */
#define BTREE_META_TEXT_ENCODING 5
#define BTREE_META_USER_VERSION 6
#define BTREE_META_INCR_VACUUM 7
#define BTREE_META_APPLICATION_ID 8

/* Transaction levels for btree_begin. */
#define BTREE_TXN_READ 0
#define BTREE_TXN_WRITE 1
#define BTREE_TXN_EXCLUSIVE 2

/* Compare two keys of an index tree: <0, 0, >0 as a sorts before, equal to,
 * after b. Keys are whole records (overflow already gathered). */
typedef int (*BtreeKeyCmp)(void *ctx, const void *a, uint32_t na, const void *b, uint32_t nb);

/* Open (and create, with SHALE_OPEN_CREATE) the database at path; NULL or
 * ":memory:" gives an in-memory database. Nothing is read until the first
 * transaction. Errors: SHALE_CANTOPEN, SHALE_NOMEM. */
int btree_open(OsVfs *vfs, const char *path, int open_flags, Btree **out);
/* Close every cursor, roll back any transaction, close the file. */
int btree_close(Btree *);
Pager *btree_pager(Btree *);
/* Last corruption message ("database corruption: page 7: cell 3 overflows
 * the page (btree_cell.c:123)"), or NULL. Valid until the next call. */
const char *btree_errmsg(Btree *);

/* Before the file has content: page size (512..65536) and reserved bytes. */
int btree_set_page_size(Btree *, uint32_t page_size, int reserve);
uint32_t btree_page_size(Btree *);
uint32_t btree_page_count(Btree *); /* within a transaction */

/* Begin a read or write transaction (see BTREE_TXN_*); a read transaction
 * may be upgraded by calling again with a write level. The first write
 * transaction on an empty file writes page 1: the header (page size,
 * 64/32/32 fractions, schema format 4, UTF-8) and an empty sqlite_schema
 * leaf. Validates the header on first read: SHALE_NOTADB or SHALE_CORRUPT.
 * SHALE_BUSY if locked out; a write level that fails leaves no transaction
 * (and no lock) behind when the call had to start the read transaction. */
int btree_begin(Btree *, int level);
/* Commit the write transaction (if any) and end the transaction. Every
 * cursor must have been closed first, else SHALE_BUSY. */
int btree_commit(Btree *);
/* Commit the write transaction (if any) but keep the read transaction:
 * cursors stay open and valid (they now read the committed data), as when
 * SQLite commits while other statements of the connection still read. On
 * error the write transaction is still open. */
int btree_commit_write(Btree *);
/* A commit in two phases over several files tied by a super-journal
 * (pager_commit_phase1/2): phase one finishes auto-vacuum work, records
 * super in the journal and writes the file; phase two ends the write
 * transaction (and the read one unless keep_read). */
int btree_commit_phase1(Btree *bt, const char *super);
int btree_commit_phase2(Btree *bt, int keep_read);
/* SQLite's atomic commit over several files. When two or more of bts[0..n)
 * (bts[0] the main database, a file; NULL entries skipped) have write
 * transactions with changes to commit through journal files, a
 * super-journal ("<main>-mjXXXXXXXX") lists their journals, each journal
 * records its name, and each file is written and synced (phase one);
 * deleting the super-journal is the commit point; then the journals are
 * finalized (phase two). A crash before the delete leaves hot journals
 * naming a live super-journal: every file rolls back; after it, journals
 * naming a missing super-journal are not hot. *done = 1 when it took this
 * path (those databases are then committed, or rolled back on failure);
 * the caller commits the others. */
int btree_commit_super(Btree *const *bts, int n, int keep_read, int *done);
/* Roll back and end the transaction; cursors are invalidated (they return
 * SHALE_ABORT_ROLLBACK on next use) but must still be closed. */
int btree_rollback(Btree *);
int btree_txn_state(Btree *); /* PAGER_TXN_NONE / READ / WRITE */

/* Savepoints: see pager_savepoint_*. Cursors are restored after a
 * savepoint rollback by re-seeking. */
int btree_savepoint_open(Btree *, int n);
int btree_savepoint_release(Btree *, int idx);
int btree_savepoint_rollback(Btree *, int idx);

/* Create an empty tree of kind BTREE_INTKEY or BTREE_BLOBKEY; *root gets its
 * root page number. Write transaction; no cursor may be open on it yet. */
int btree_create_table(Btree *, int kind, uint32_t *root);
/* Free every page of the tree rooted at root (root 1 may not be dropped).
 * No cursor may be open on it. In an auto-vacuum file the largest root
 * then moves into the dropped root's page and the sqlite_schema row (tree
 * 1, column 3) that named it is updated, as SQLite's DROP does. */
int btree_drop_table(Btree *, uint32_t root);
/* Delete every entry of the tree, keeping its root; *nrows (may be NULL)
 * gets the number of entries removed. Other cursors on it are invalidated. */
int btree_clear_table(Btree *, uint32_t root, int64_t *nrows);

int btree_get_meta(Btree *, int idx, uint32_t *out);

/* ---- auto-vacuum ---- */

/* Set the auto-vacuum mode (0 none, 1 full, 2 incremental; other values
 * mean 0) of a database that has no content yet: it is written into page
 * 1 when the file is created (called outside a transaction, it applies if
 * the file turns out to be empty). On a file with content a change between
 * none and full/incremental returns SHALE_READONLY and changes nothing
 * (switching full <-> incremental is btree_update_meta(INCR_VACUUM)); the
 * mode asked for is remembered either way (btree_next_auto_vacuum) for
 * VACUUM, which builds a new file in that mode. */
int btree_set_auto_vacuum(Btree *, int mode);
/* The mode in force (from the header of a file with content), 0/1/2. */
int btree_get_auto_vacuum(Btree *);
/* The mode last passed to btree_set_auto_vacuum, or -1 if none. */
int btree_next_auto_vacuum(Btree *);
/* The text encoding of the database (header offset 56: 1 UTF-8, 2
 * UTF-16le, 3 UTF-16be): the header's within a transaction on a file with
 * content, else the one a new database gets (btree_set_new_encoding, 1 by
 * default). */
int btree_text_encoding(Btree *);
void btree_set_new_encoding(Btree *, int enc);
/* One incremental-vacuum step (write transaction): the last page of the
 * file is freed (moved to a free slot if in use) and the file shrinks.
 * SHALE_DONE when the freelist is empty or the file is not auto-vacuum. */
int btree_incr_vacuum(Btree *);
/* sqlite3_autovacuum_pages: at each commit of a write transaction on an
 * auto_vacuum=FULL file, fn says how many of its nfree free pages the
 * commit gives back (0: none, nfree or more: all); npages is the file's
 * size in pages. NULL (the default): all. */
typedef uint32_t (*BtreeAutovacPages)(void *arg, Btree *bt, uint32_t npages, uint32_t nfree,
                                      uint32_t page_size);
void btree_set_autovac_pages(Btree *, BtreeAutovacPages fn, void *arg);
int btree_update_meta(Btree *, int idx, uint32_t value); /* write txn */

/* ---- cursors ---- */

/* Open a cursor on the tree at root. wrflag != 0 allows insert/delete (needs
 * a write transaction). For index trees, cmp/cmp_ctx order the keys (NULL
 * cmp = memcmp, then shorter first); ignored for table trees. The cursor
 * starts unpositioned (btree_eof() == 1). */
int btree_cursor_open(Btree *, uint32_t root, int wrflag, BtreeKeyCmp cmp, void *cmp_ctx,
                      BtCursor **out);
void btree_cursor_close(BtCursor *);
/* Park a cursor at the end of a statement run whose transaction goes on: it
 * stays open with its position and page references, and is saved and
 * restored like any cursor when its tree changes, for the next run of the
 * statement to take back with btree_cursor_unpark (an insert after the last
 * row then needs no descent). The Btree itself closes every parked cursor
 * when the transaction ends (commit, commit_write, rollback), before a tree
 * is dropped and at btree_close, and then stores NULL in *slot: the owner
 * keeps *slot == the cursor while it is parked, and closes it itself
 * (btree_cursor_close) when it goes away first. */
/* Returns 0 (and parks nothing) for a cursor in an error state. */
int btree_cursor_park(BtCursor *, BtCursor **slot);
void btree_cursor_unpark(BtCursor *);
/* Is this a table (intkey) tree? Known after the first positioning call. */
int btree_cursor_is_intkey(BtCursor *);

/* Position on the first / last entry; *empty = 1 if the tree has none. */
int btree_first(BtCursor *, int *empty);
int btree_last(BtCursor *, int *empty);
/* Move to the next / previous entry; *eof = 1 (cursor unpositioned) when
 * there is none. */
int btree_next(BtCursor *, int *eof);
int btree_prev(BtCursor *, int *eof);
/* btree_next / btree_prev with the end in the result: SHALE_OK on an entry,
 * SHALE_DONE past the last (first), else the error (a scan's step pays no
 * out-parameter). */
int btree_next_row(BtCursor *);
int btree_prev_row(BtCursor *);
/* 1 if the cursor is on no entry. */
int btree_eof(BtCursor *);

/* Seek in a table tree. *res = 0: on the entry with that rowid; < 0: on the
 * entry just before where it would be; > 0: just after. An empty tree gives
 * *res = -1 and btree_eof() == 1. */
int btree_seek_rowid(BtCursor *, int64_t rowid, int *res);
/* Seek in an index tree with the cursor's comparator; *res as above. */
int btree_seek_key(BtCursor *, const void *key, uint32_t nkey, int *res);
/* Seek with a caller's comparison: cmp(ctx, cellkey, n) returns the sign of
 * (cell key - search key). The full key is passed (overflow gathered). */
int btree_seek_cmp(BtCursor *, int (*cmp)(void *ctx, const void *key, uint32_t n), void *ctx,
                   int *res);

/* The number of index seeks made through the cursor so far (it changes
 * with every btree_seek_cmp / btree_seek_key): a caller remembers it after
 * a seek to tell, before a BTREE_SEEKRESULT insert, that no other seek
 * came between. */
uint32_t btree_seek_count(const BtCursor *);

/* The entry under the cursor. */
int64_t btree_rowid(BtCursor *); /* table trees */
/* btree_eof and btree_rowid in one call (a Rowid op's): 0 if the cursor is
 * on no entry, else 1 and *rowid = btree_rowid. */
int btree_rowid_here(BtCursor *, int64_t *rowid);
uint32_t btree_payload_size(BtCursor *); /* data (table) or key (index) bytes */
/* The part of the payload stored on the page: valid until the cursor moves
 * or the tree is modified. *navail gets its length (<= payload size). */
const void *btree_payload_fetch(BtCursor *, uint32_t *navail);
/* Both at once (one cell parse), for a row read: *p the local part, *n the
 * payload size, *navail the local length. A cursor on no entry (at the end,
 * or its saved position lost, as btree_eof) gives *p = NULL and SHALE_OK; a
 * cell that does not parse gives its error. */
int btree_payload(BtCursor *, const void **p, uint32_t *n, uint32_t *navail);
/* btree_payload for a reader that handles only a payload wholly on its page:
 * {p, n} then, else {NULL, 0} (no entry, overflow pages, or a cell that does
 * not parse: btree_payload then tells which). Returned in registers, so a
 * row fetch pays no stores and reloads of out-parameters. Valid as
 * btree_payload_fetch's. */
typedef struct BtLocal {
  const uint8_t *p;
  uint32_t n;
} BtLocal;
BtLocal btree_payload_local(BtCursor *);
/* Copy n payload bytes from offset, following overflow pages.
 * SHALE_CORRUPT if the chain is broken or offset+n exceeds the payload. */
int btree_payload_read(BtCursor *, uint32_t offset, uint32_t n, void *buf);

/* Insert into a table tree: (rowid, data[0..n) followed by nzero zero
 * bytes), replacing any entry with that rowid. Into an index tree: key =
 * data (rowid ignored), replacing an entry that compares equal. Afterwards
 * the cursor is on the new entry (saved there after a rebalance: sought
 * again on its next read or move, as a saved cursor is). BTREE_APPEND hints
 * that the rowid/key is larger than any present. */
#define BTREE_APPEND 0x01
/* For an index insert: the cursor's last seek (btree_seek_cmp, counted by
 * btree_seek_count) was for a prefix of the key, found no entry equal to
 * it, and the cursor has not moved since (as after a UNIQUE check that
 * passed: the key then goes exactly where that seek ended). The insert
 * takes that place without seeking again; when the cursor moved or its
 * tree was written since, it seeks as usual. */
#define BTREE_SEEKRESULT 0x02
int btree_insert(BtCursor *, int64_t rowid, const void *data, uint32_t n, uint32_t nzero,
                 int flags);
/* btree_insert of key[0..n) into an index tree, the seek for its place
 * made with cmp(ctx, cellkey, ncell) = sign of (cell key - key) as in
 * btree_seek_cmp, e.g. against the key unpacked once instead of parsed on
 * every probe. cmp must order entries as the cursor's comparator does and
 * return 0 exactly where it would (an equal entry is replaced). */
int btree_insert_cmp(BtCursor *, const void *key, uint32_t n,
                     int (*cmp)(void *ctx, const void *key, uint32_t n), void *ctx, int flags);
/* Delete the entry under the cursor (see invariant 5 for where it is left). */
int btree_delete(BtCursor *);
/* Number of entries in the tree. */
int btree_count(BtCursor *, int64_t *n);
/* Overwrite n payload bytes at offset in place (no size change), for
 * incremental blob I/O. */
int btree_payload_write(BtCursor *, uint32_t offset, uint32_t n, const void *buf);

/* Check a cursor's internal consistency (its page stack: each level's
 * child pointer leads to the next level's page, indexes in range, parses
 * valid; a positioned cursor is on an entry). SHALE_OK or SHALE_INTERNAL.
 * For tests. */
int btree_cursor_check(BtCursor *);

/* ---- bulk loading (btree_bulk.c; VACUUM) ---- */

/* Fill the empty tree at root (kind BTREE_INTKEY/BLOBKEY, just created by
 * btree_create_table, no cursor on it) with entries given in strictly
 * increasing key order: pages packed full and allocated in order, the top
 * page written to root by btree_bulk_finish. Write transaction. */
typedef struct BtBulk BtBulk;
int btree_bulk_open(Btree *, uint32_t root, int kind, BtBulk **out);
/* Append an entry: table trees (rowid, data[0..n)); index trees key = data. */
int btree_bulk_add(BtBulk *, int64_t rowid, const void *data, uint32_t n);
/* Write the remaining pages and free the loader (also on error: the tree is
 * then unusable and the transaction must be rolled back). */
int btree_bulk_finish(BtBulk *);
/* Free without finishing (after an error). */
void btree_bulk_free(BtBulk *);

/* ---- integrity ---- */

typedef struct BtreeCheckRoot {
  uint32_t root;
  int intkey;      /* 1 table tree, 0 index tree */
  BtreeKeyCmp cmp; /* index key order (NULL = memcmp) */
  void *cmp_ctx;
} BtreeCheckRoot;

/* Check the trees listed plus the freelist and page accounting (every page
 * used exactly once), as SQLite's integrity_check does, with its message
 * wording ("Page 5 is never used", "2nd reference to page 7", ...). Needs a
 * read transaction. *report gets NULL if all is well, else shale_malloc'ed
 * text, one problem per line (at most maxerr of them); *nerr the count. */
int btree_integrity_check(Btree *, const BtreeCheckRoot *roots, int nroot, int maxerr,
                          char **report, int *nerr);
/* As btree_integrity_check, and for each index tree roots[i] checked with
 * a cmp, sums[i] gets the number of its entries and the sum (mod 2^64) of
 * util_hash_keyed(key, record) over their records (count -1 when some
 * record could not be read, or the tree was not walked). */
typedef struct BtreeCheckSum {
  uint64_t hash;
  int64_t count;
} BtreeCheckSum;
int btree_integrity_check_sums(Btree *, const BtreeCheckRoot *roots, int nroot, int maxerr,
                               char **report, int *nerr, const UtilHashKey *key,
                               BtreeCheckSum *sums);

/* ---- page statistics (btree_stat.c): the walk behind dbstat ---- */
/* One page of a tree's walk, in SQLite's dbstat order (btree_stat.c). */
#define BTREE_STAT_INTERNAL 0
#define BTREE_STAT_LEAF 1
#define BTREE_STAT_OVERFLOW 2
typedef struct BtreeStatPage {
  uint32_t pgno;
  int type; /* BTREE_STAT_* */
  int ncell;
  int64_t payload;    /* payload bytes on the page */
  int64_t unused;     /* free bytes (gap, freeblocks, fragments; overflow: past the payload) */
  int64_t mx_payload; /* the largest whole payload of a cell on the page */
  const char *path;   /* "/", "/000/", "/000/002+000001"...: valid until the next call */
} BtreeStatPage;
typedef struct BtreeStat BtreeStat;
/* Walk the tree rooted at root (within a read transaction, for as long as
 * the walk lasts). btree_stat_next gives SHALE_ROW with *out filled, then
 * SHALE_DONE, or an error (SHALE_CORRUPT for a damaged tree). */
int btree_stat_open(Btree *, uint32_t root, BtreeStat **out);
int btree_stat_next(BtreeStat *, BtreeStatPage *out);
void btree_stat_close(BtreeStat *);

#endif /* SHALE_BTREE_H */
