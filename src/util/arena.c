/*
 * arena.c -- bump allocator for objects that die together (a parse tree, a
 * compiled program). Owns its chunks; hands out 8-byte-aligned pieces.
 *
 * Invariants:
 *  1. Chunks form a singly linked list from a->head; the head is the chunk
 *     being bumped. A large allocation (> chunk_size/4) gets a dedicated
 *     chunk that is linked *behind* the head, so the head keeps its free room.
 *  2. 0 <= chunk->used <= chunk->size and chunk->used is a multiple of 8.
 *  3. Out-of-memory returns NULL and leaves the arena consistent: whatever was
 *     allocated before is still owned and freed by util_arena_free.
 */
#include <string.h>

#include "util.h"

struct UtilArenaChunk {
  UtilArenaChunk *next;
  size_t size; /* payload bytes */
  size_t used; /* bytes handed out from payload */
  uint64_t payload[];
};

#define ARENA_DEFAULT 4096

void util_arena_init(UtilArena *a, size_t chunk_size) {
  a->head = NULL;
  a->chunk_size = chunk_size ? (chunk_size + 7) & ~(size_t)7 : ARENA_DEFAULT;
  a->used = 0;
}

static UtilArenaChunk *new_chunk(size_t size) {
  if (size > (size_t)0x7ffff000 - sizeof(UtilArenaChunk)) return NULL;
  UtilArenaChunk *c = shale_malloc(sizeof(UtilArenaChunk) + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  return c;
}

void *util_arena_alloc(UtilArena *a, size_t n) {
  size_t need = (n + 7) & ~(size_t)7;
  if (need < n) return NULL; /* overflow */
  UtilArenaChunk *h = a->head;
  if (h && h->size - h->used >= need) {
    void *p = (char *)h->payload + h->used;
    h->used += need;
    a->used += need;
    return p;
  }
  if (need > a->chunk_size / 4) {
    UtilArenaChunk *c = new_chunk(need);
    if (!c) return NULL;
    c->used = need;
    if (h) {
      c->next = h->next;
      h->next = c;
    } else {
      a->head = c;
    }
    a->used += need;
    return c->payload;
  }
  UtilArenaChunk *c = new_chunk(a->chunk_size);
  if (!c) return NULL;
  c->next = h;
  a->head = c;
  c->used = need;
  a->used += need;
  return c->payload;
}

void *util_arena_zalloc(UtilArena *a, size_t n) {
  void *p = util_arena_alloc(a, n);
  if (p) memset(p, 0, n);
  return p;
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
  while (c) {
    UtilArenaChunk *next = c->next;
    if (!keep && c->size == a->chunk_size) {
      keep = c;
    } else {
      shale_free(c);
    }
    c = next;
  }
  if (keep) {
    keep->next = NULL;
    keep->used = 0;
  }
  a->head = keep;
  a->used = 0;
}

void util_arena_free(UtilArena *a) {
  UtilArenaChunk *c = a->head;
  while (c) {
    UtilArenaChunk *next = c->next;
    shale_free(c);
    c = next;
  }
  a->head = NULL;
  a->used = 0;
}
