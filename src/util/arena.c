/*
 * arena.c -- bump allocator for objects that die together (a parse tree, a
 * compiled program). Owns its chunks; hands out 8-byte-aligned pieces.
 *
 * Invariants:
 *  1. Chunks form a singly linked list from a->head; the head is the chunk
 *     being bumped, its free room is [a->cur, a->end). A large allocation
 *     (> chunk_size/4) gets a dedicated, full chunk that is linked *behind*
 *     the head, so the head keeps its free room.
 *  2. a->cur and a->end are 8-byte aligned, cur <= end, both inside the
 *     head's payload (both NULL when there is no head): the inline
 *     util_arena_alloc relies on end - cur being a multiple of 8.
 *  3. A chunk with borrowed set is the caller's buffer (util_arena_init_buf):
 *     it is never passed to shale_free, and reset keeps it.
 *  4. Out-of-memory returns NULL and leaves the arena consistent: whatever was
 *     allocated before is still owned and freed by util_arena_free.
 */
#include <string.h>

#include "util.h"

struct UtilArenaChunk {
  UtilArenaChunk *next;
  size_t size;     /* payload bytes (a multiple of 8) */
  size_t borrowed; /* 1: the caller's buffer (invariant 3) */
  uint64_t payload[];
};

#define ARENA_DEFAULT 4096

void util_arena_init(UtilArena *a, size_t chunk_size) {
  a->head = NULL;
  a->chunk_size = chunk_size ? (chunk_size + 7) & ~(size_t)7 : ARENA_DEFAULT;
  a->cur = a->end = NULL;
}

void util_arena_init_buf(UtilArena *a, size_t chunk_size, void *buf, size_t n) {
  util_arena_init(a, chunk_size);
  uintptr_t p = ((uintptr_t)buf + 7) & ~(uintptr_t)7;
  size_t skip = (size_t)(p - (uintptr_t)buf);
  if (!buf || n < 64 + skip + sizeof(UtilArenaChunk)) return;
  UtilArenaChunk *c = (UtilArenaChunk *)p;
  c->next = NULL;
  c->size = (n - skip - sizeof(UtilArenaChunk)) & ~(size_t)7;
  c->borrowed = 1;
  a->head = c;
  a->cur = (char *)c->payload;
  a->end = a->cur + c->size;
}

static UtilArenaChunk *new_chunk(size_t size) {
  if (size > (size_t)0x7ffff000 - sizeof(UtilArenaChunk)) return NULL;
  UtilArenaChunk *c = shale_malloc(sizeof(UtilArenaChunk) + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->borrowed = 0;
  return c;
}

void *util_arena_alloc_slow(UtilArena *a, size_t n) {
  size_t need = n ? (n + 7) & ~(size_t)7 : 8;
  if (need < n) return NULL;               /* overflow */
  if ((size_t)(a->end - a->cur) >= need) { /* n == 0 with room */
    void *p = a->cur;
    a->cur += need;
    return p;
  }
  if (need > a->chunk_size / 4) {
    UtilArenaChunk *c = new_chunk(need);
    if (!c) return NULL;
    if (a->head) {
      c->next = a->head->next;
      a->head->next = c;
    } else { /* the head must have room bounds: an empty one of its own */
      a->head = c;
      a->cur = a->end = (char *)c->payload + need;
    }
    return c->payload;
  }
  UtilArenaChunk *c = new_chunk(a->chunk_size);
  if (!c) return NULL;
  c->next = a->head;
  a->head = c;
  a->cur = (char *)c->payload + need;
  a->end = (char *)c->payload + c->size;
  return c->payload;
}

char *util_arena_strndup(UtilArena *a, const char *s, size_t n) {
  char *p = util_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void util_arena_reset(UtilArena *a) {
  UtilArenaChunk *keep = NULL, *c = a->head;
  for (UtilArenaChunk *x = c; x; x = x->next)
    if (x->borrowed) keep = x;
  while (c) {
    UtilArenaChunk *next = c->next;
    if (c == keep || c->borrowed) {
      /* the caller's buffer (at most one) */
    } else if (!keep && c->size == a->chunk_size) {
      keep = c;
    } else {
      shale_free(c);
    }
    c = next;
  }
  a->head = keep;
  a->cur = a->end = NULL;
  if (keep) {
    keep->next = NULL;
    a->cur = (char *)keep->payload;
    a->end = a->cur + keep->size;
  }
}

void util_arena_free(UtilArena *a) {
  UtilArenaChunk *c = a->head;
  while (c) {
    UtilArenaChunk *next = c->next;
    if (!c->borrowed) shale_free(c);
    c = next;
  }
  a->head = NULL;
  a->cur = a->end = NULL;
}
