/*
 * held.c -- memory the sqlite3 API hands out whose life SQLite ties to a
 * handle: UTF-16 column names (until finalize), errmsg16 (until the next
 * call), collation_needed16 adapters, the connection's filename object,
 * shared memdb references and attached databases' filename objects (until
 * close).
 *
 * Owns: per handle, a list of Held blocks (slot, pointer, release), whose
 * head is the handle's user pointer (shale_db_userptr / shale_stmt_userptr).
 *
 * Invariants:
 *  1. At most one block per (handle, slot): holding again releases the
 *     earlier one; compat_forget_stmt releases all of a statement's blocks
 *     (sqlite3_finalize); a connection's are taken off it before it closes
 *     (compat_take_db), released after (compat_release) or given back when
 *     the close fails.
 *  2. A slot >= 0 is a statement's, < 0 a connection's (compat_int.h).
 *  3. No process-wide lock: a handle's list is changed under its connection's
 *     mutex (SQLite's serialized mode; none with SQLITE_OPEN_NOMUTEX, where
 *     the program serializes its own calls). finalize and close of a handle
 *     that holds nothing touch no lock at all.
 */
#include "compat_int.h"

typedef struct Held {
  int slot;
  void *p;
  void (*release)(void *);
  struct Held *next;
} Held;

static shale *conn_of(const void *owner, int slot) {
  return slot >= 0 ? shale_db_handle((shale_stmt *)owner) : (shale *)owner;
}
static Held *list_of(const void *owner, int slot) {
  return slot >= 0 ? shale_stmt_userptr((shale_stmt *)owner) : shale_db_userptr((shale *)owner);
}
static void set_list(const void *owner, int slot, Held *h) {
  if (slot >= 0)
    shale_stmt_set_userptr((shale_stmt *)owner, h);
  else
    shale_db_set_userptr((shale *)owner, h);
}

int compat_hold(const void *owner, int slot, void *p, void (*release)(void *)) {
  Held *h = shale_malloc(sizeof *h), *old = NULL;
  if (!h) return 0;
  shale_mutex *mu = shale_db_mutex(conn_of(owner, slot));
  shale_mutex_enter(mu);
  Held *head = list_of(owner, slot);
  for (Held **pp = &head; *pp; pp = &(*pp)->next)
    if ((*pp)->slot == slot) {
      old = *pp;
      *pp = old->next;
      break;
    }
  h->slot = slot;
  h->p = p;
  h->release = release;
  h->next = head;
  set_list(owner, slot, h);
  shale_mutex_leave(mu);
  if (old) {
    old->release(old->p);
    shale_free(old);
  }
  return 1;
}

void *compat_held(const void *owner, int slot) {
  void *p = NULL;
  shale_mutex *mu = shale_db_mutex(conn_of(owner, slot));
  shale_mutex_enter(mu);
  for (Held *h = list_of(owner, slot); h; h = h->next)
    if (h->slot == slot) {
      p = h->p;
      break;
    }
  shale_mutex_leave(mu);
  return p;
}

static void release_all(Held *h) {
  while (h) {
    Held *n = h->next;
    h->release(h->p);
    shale_free(h);
    h = n;
  }
}

void *compat_take_db(sqlite3 *db) {
  shale *d = (shale *)db;
  if (!shale_db_userptr(d)) return NULL; /* holds nothing: no lock */
  shale_mutex *mu = shale_db_mutex(d);
  shale_mutex_enter(mu);
  Held *h = shale_db_userptr(d);
  shale_db_set_userptr(d, NULL);
  shale_mutex_leave(mu);
  return h;
}

void compat_give_back_db(sqlite3 *db, void *list) {
  if (list) shale_db_set_userptr((shale *)db, list); /* nothing was held meanwhile */
}

void compat_release(void *list) { release_all(list); }

void compat_forget_stmt(sqlite3_stmt *st) {
  shale_stmt *s = (shale_stmt *)st;
  if (!shale_stmt_userptr(s)) return;
  shale_mutex *mu = shale_db_mutex(shale_db_handle(s));
  shale_mutex_enter(mu);
  Held *h = shale_stmt_userptr(s);
  shale_stmt_set_userptr(s, NULL);
  shale_mutex_leave(mu);
  release_all(h);
}
