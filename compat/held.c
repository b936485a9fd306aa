/*
 * held.c -- memory the sqlite3 API hands out whose life SQLite ties to a
 * handle: UTF-16 column names (until finalize), errmsg16 (until the next
 * call), collation_needed16 adapters, shared memdb references and attached
 * databases' filename objects (until close).
 *
 * Owns: a list of Held blocks, each (owner handle, slot, pointer, release).
 *
 * Invariants:
 *  1. At most one block per (owner, slot): holding again releases the
 *     earlier one; compat_forget(owner) releases all of an owner's blocks
 *     (sqlite3_finalize, sqlite3_close).
 *  2. One mutex guards the list; release functions run outside it.
 */
#include <pthread.h>

#include "compat_int.h"

typedef struct Held {
  const void *owner;
  int slot;
  void *p;
  void (*release)(void *);
  struct Held *next;
} Held;

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static Held *held;

int compat_hold(const void *owner, int slot, void *p, void (*release)(void *)) {
  Held *h = shale_malloc(sizeof *h), *old = NULL;
  if (!h) return 0;
  pthread_mutex_lock(&held_mu);
  for (Held **pp = &held; *pp; pp = &(*pp)->next)
    if ((*pp)->owner == owner && (*pp)->slot == slot) {
      old = *pp;
      *pp = old->next;
      break;
    }
  h->owner = owner;
  h->slot = slot;
  h->p = p;
  h->release = release;
  h->next = held;
  held = h;
  pthread_mutex_unlock(&held_mu);
  if (old) {
    old->release(old->p);
    shale_free(old);
  }
  return 1;
}

void *compat_held(const void *owner, int slot) {
  void *p = NULL;
  pthread_mutex_lock(&held_mu);
  for (Held *h = held; h; h = h->next)
    if (h->owner == owner && h->slot == slot) {
      p = h->p;
      break;
    }
  pthread_mutex_unlock(&held_mu);
  return p;
}

void compat_forget(const void *owner) {
  Held *drop = NULL;
  pthread_mutex_lock(&held_mu);
  for (Held **pp = &held; *pp;) {
    Held *h = *pp;
    if (h->owner == owner) {
      *pp = h->next;
      h->next = drop;
      drop = h;
    } else {
      pp = &h->next;
    }
  }
  pthread_mutex_unlock(&held_mu);
  while (drop) {
    Held *n = drop->next;
    drop->release(drop->p);
    shale_free(drop);
    drop = n;
  }
}
