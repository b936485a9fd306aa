/*
 * util.h -- the lowest layer: allocator hooks, byte order, varints, strings,
 * the string builder (StrBuf).
 *
 * Every other layer may include this header; it includes only libc and the
 * public shale.h (for result codes).
 *
 * Invariants:
 *  1. All library memory comes from shale_malloc/shale_realloc and goes back
 *     through shale_free; util_alloc_outstanding() counts live blocks, so a
 *     test can assert that nothing leaked.
 *  2. util_fault_alloc(n) makes the n-th allocation from now fail (once, or
 *     every time from then on with persist=1); allocation failure is always
 *     a clean SHALE_NOMEM for the caller, never an abort.
 *  3. Varints are SQLite's: 1..9 bytes, big-endian groups of 7 bits, the 9th
 *     byte contributes all 8 bits.
 */
#ifndef SHALE_UTIL_H
#define SHALE_UTIL_H

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "shale.h"

/* Executable invariants. Debug builds (make DEBUG=1; SANITIZE=1 implies it)
 * define SHALE_DEBUG and NDEBUG is off: SHALE_VALIDATE runs a validator
 * (pager_check, btree_cursor_check, btree_page_check_cells, schema_check, ...)
 * where its invariants must hold and asserts it found no broken invariant of
 * Shale's own (SHALE_INTERNAL, or any code but OK): damage in the file
 * itself (SHALE_CORRUPT) is an error the normal paths report, never an
 * assert. Release builds compile it away. */
#ifdef SHALE_DEBUG
#define SHALE_VALIDATE(expr)                                           \
  do {                                                                 \
    int validate_rc_ = (expr);                                         \
    assert(validate_rc_ == SHALE_OK || validate_rc_ == SHALE_CORRUPT); \
    (void)validate_rc_;                                                \
  } while (0)
#else
#define SHALE_VALIDATE(expr) ((void)0)
#endif

/* ---- allocator test hooks (alloc.c) ---- */

/* Make the n-th allocation from now fail (n >= 1); n = 0 disables. With
 * persist != 0 every allocation after that one fails too. Process-wide. */
void util_fault_alloc(long n, int persist);
/* Number of allocations that failed because of the hook since it was set. */
long util_fault_alloc_hits(void);
/* The system allocator under shale_malloc (sqlite3_config(SQLITE_CONFIG_
 * MALLOC)): blocks of n bytes (the header included), resized and freed; ctx
 * is passed back. NULL puts libc's back. The table must live as long as the
 * process (blocks it made go back to it: alloc.c invariant 3); at most 8
 * distinct tables (-1 past that, else 0). Process-wide. */
typedef struct UtilSysAlloc {
  void *(*malloc)(void *ctx, size_t n);
  void *(*realloc)(void *ctx, void *p, size_t n);
  void (*free)(void *ctx, void *p);
  void *ctx;
} UtilSysAlloc;
int util_alloc_set_system(const UtilSysAlloc *a);
/* Live blocks handed out by shale_malloc and not yet freed. */
long util_alloc_outstanding(void);
/* Bytes currently allocated (payload bytes, not counting headers). */
int64_t util_alloc_bytes(void);
/* Allocations made so far (shale_malloc, and shale_realloc that grew a
 * block), process-wide: tests and benchmarks count allocations per
 * operation with it. */
long util_alloc_count(void);
/* High-water marks (sqlite3_status): bytes allocated, live blocks, and the
 * largest single request; reset != 0 restarts them from the current value
 * (0 for the largest request). */
int64_t util_alloc_highwater(int reset);
long util_alloc_blocks_highwater(int reset);
int64_t util_alloc_max_request(int reset);
/* SQLite's heap limit rules (sqlite3_hard/soft_heap_limit64, also behind
 * PRAGMA hard_heap_limit / soft_heap_limit), n < 0 only queries, both
 * return the previous value. hard: allocations that would take
 * util_alloc_bytes() past n fail (0: no limit), and the soft limit comes down to it when above it
 * or unset. soft: advisory (Shale's caches are per connection and sized by cache_size), kept to be
 * reported; not above a hard limit, 0 meaning the hard limit when one is
 * set. */
int64_t util_alloc_hard_limit(int64_t n);
int64_t util_alloc_soft_limit(int64_t n);

/* ---- byte order ---- */
static inline uint32_t util_get4(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline void util_put4(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
/* 1 on a little-endian host (a constant the compiler folds): code that
 * loads words in host order and byte-swaps them to read big-endian data
 * runs only where that is right. */
static inline int util_host_le(void) {
  const union {
    uint16_t u;
    uint8_t b[2];
  } x = {1};
  return x.b[0] == 1;
}
/* Eight bytes as a little-endian word: byte p[i] is bits 8i..8i+7 on any
 * host (compilers make it one load where the host is little-endian), so a
 * word-at-a-time scan finds its first match in memory order at the lowest
 * set bit. */
static inline uint64_t util_get8le(const uint8_t *p) {
  return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
         ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) |
         ((uint64_t)p[7] << 56);
}
static inline uint32_t util_get2(const uint8_t *p) { return ((uint32_t)p[0] << 8) | p[1]; }
static inline void util_put2(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

/* ---- varints (varint.c) ---- */

/* Decode a varint at p into *v; returns its length 1..9. Reads at most 9
 * bytes: the caller guarantees they are addressable. */
int util_get_varint(const uint8_t *p, uint64_t *v);
/* As util_get_varint but never reads at or past end; returns 0 if the varint
 * does not fit before end (corruption). */
int util_get_varint_safe(const uint8_t *p, const uint8_t *end, uint64_t *v);
/* Decode a varint known to fit in 32 bits; larger values are clamped to
 * 0xffffffff. Returns the length. */
int util_get_varint32(const uint8_t *p, uint32_t *v);
/* Encode v at p (room for 9 bytes); returns the length written. */
int util_put_varint(uint8_t *p, uint64_t v);
/* Length util_put_varint would write for v. */
int util_varint_len(uint64_t v);

/* ---- strings (str.c) ---- */

/* printf into fresh shale_malloc memory; NULL on out-of-memory. */
char *util_mprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *util_vmprintf(const char *fmt, va_list ap);
/* Copy of s (NUL-terminated) in shale_malloc memory; NULL if s is NULL or OOM. */
char *util_strdup(const char *s);
/* ASCII case-insensitive compare, like SQLite's sqlite3_stricmp. */
int util_stricmp(const char *a, const char *b);
int util_strnicmp(const char *a, const char *b, int n);

/* ---- StrBuf (strbuf.c): the growable string builder ---- */

/* No length limit beyond memory (a max for strbuf_init). */
#define STRBUF_NOLIMIT ((int64_t)1 << 62)

typedef struct StrBuf {
  char *z;             /* the text (shale_malloc'ed), or NULL while empty */
  int64_t n, cap, max; /* bytes of text, bytes allocated, the length limit */
  int err;             /* SHALE_OK, SHALE_NOMEM or SHALE_TOOBIG (sticky) */
} StrBuf;

/* An empty buffer whose text may not pass max bytes (STRBUF_NOLIMIT). A
 * zeroed StrBuf with max set is the same. */
void strbuf_init(StrBuf *, int64_t max);
/* Make room for k more bytes (plus a NUL); 0 on success, else 1 with err
 * set (it stays set: every later append is ignored). */
int strbuf_reserve(StrBuf *, int64_t k);
void strbuf_append(StrBuf *, const char *z, int64_t n);
void strbuf_appendz(StrBuf *, const char *z);            /* a C string */
void strbuf_appendchar(StrBuf *, int64_t count, char c); /* c, count times */
void strbuf_printf(StrBuf *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The NUL-terminated text (the caller shale_free's it; "" when nothing was
 * appended) or NULL after an error; the buffer is left empty either way
 * (an error stays). */
char *strbuf_finish(StrBuf *);
/* Free the text and empty the buffer (max and err stay). */
void strbuf_reset(StrBuf *);
/* Keep only the first n bytes (n <= the length; the text stays a C string). */
void strbuf_truncate(StrBuf *, int64_t n);

/* ---- UTF-16 <-> UTF-8 (utf16.c), with SQLite's rules for bad input ---- */

/* UTF-16 (big_endian 0: little-endian) of nbytes bytes (-1: up to a zero
 * code unit; an odd count drops the last byte) as UTF-8: shale_malloc'ed,
 * NUL-terminated, *nout (if given) its length. NULL on out-of-memory. */
char *util_utf16_to_utf8(const void *z, int nbytes, int big_endian, int *nout);
/* UTF-8 (n bytes) as UTF-16 into out, which has room for 2 * n + 2 bytes;
 * returns the bytes written (no terminator). */
size_t util_utf8_to_utf16(const char *z, size_t n, int big_endian, uint8_t *out);
/* Bytes of a zero-terminated UTF-16 string (without the terminator). */
size_t util_utf16_len(const void *z);

/* ---- randomness (random.c) ---- */
/* Fill buf with n pseudo-random bytes (seeded from the clock and an address
 * on first use). Thread-safe. */
void util_random(void *buf, int n);

/* ---- keyed hash (hash.c) ---- */
/* SipHash-1-3 of data[0..n) under a 128-bit key: a 64-bit value nobody can
 * aim at without the key. util_hash_key_new draws a key from util_random. */
typedef struct UtilHashKey {
  uint64_t k0, k1;
} UtilHashKey;
uint64_t util_hash_keyed(const UtilHashKey *key, const void *data, size_t n);
void util_hash_key_new(UtilHashKey *key);

/* ---- bump arena (arena.c) ---- */

/* Memory for things that die together (a parse, a compiled program). Chunks
 * come from shale_malloc (or, for the first one, from the caller: see
 * util_arena_init_buf); util_arena_free returns them all at once. Every
 * pointer handed out is 8-byte aligned and stays valid until reset/free.
 * The free room of the current chunk is [cur, end): the common allocation is
 * the inline bump below, anything else goes to util_arena_alloc_slow. */
typedef struct UtilArenaChunk UtilArenaChunk;
typedef struct UtilArena {
  UtilArenaChunk *head; /* current chunk (front of the list); NULL if none */
  size_t chunk_size;    /* payload size of ordinary chunks */
  char *cur, *end;      /* free room of head (8-aligned, a multiple of 8); NULL, NULL if none */
} UtilArena;

/* Prepare an empty arena; chunk_size 0 picks a default (4 KiB). No allocation. */
void util_arena_init(UtilArena *a, size_t chunk_size);
/* As util_arena_init, with buf[0..n) as the first chunk: the arena never
 * frees it (the caller owns it and it must outlive the arena: typically a
 * stack buffer of the function that frees the arena). n below 64 bytes
 * leaves the arena as util_arena_init does. No allocation. */
void util_arena_init_buf(UtilArena *a, size_t chunk_size, void *buf, size_t n);
/* The out-of-line part of util_arena_alloc (a new chunk, n == 0). */
void *util_arena_alloc_slow(UtilArena *a, size_t n);
/* n bytes (n may be 0), 8-byte aligned, uninitialised; NULL on out-of-memory.
 * Requests larger than a quarter chunk get a chunk of their own. */
static inline void *util_arena_alloc(UtilArena *a, size_t n) {
  if (n - 1 < (size_t)(a->end - a->cur)) { /* 0 < n <= room (room is a multiple of 8) */
    void *p = a->cur;
    a->cur += (n + 7) & ~(size_t)7;
    return p;
  }
  return util_arena_alloc_slow(a, n);
}
/* As util_arena_alloc but zero-filled. */
static inline void *util_arena_zalloc(UtilArena *a, size_t n) {
  void *p = util_arena_alloc(a, n);
  if (p) __builtin_memset(p, 0, n);
  return p;
}
/* Copy of the n bytes at s plus a NUL terminator; NULL on out-of-memory. */
char *util_arena_strndup(UtilArena *a, const char *s, size_t n);
/* Forget everything handed out; keeps the caller's first chunk, or else the
 * first ordinary chunk, for reuse. */
void util_arena_reset(UtilArena *a);
/* Return every chunk to shale_free (not the caller's buffer); the arena is
 * empty (re-usable) after. */
void util_arena_free(UtilArena *a);

#endif /* SHALE_UTIL_H */
