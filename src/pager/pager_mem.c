/*
 * pager_mem.c -- the page store of an in-memory database (":memory:", and
 * the private databases sqlite3_deserialize and VACUUM's copy make; not a
 * temporary database, whose pages go to spill files).
 *
 * Owns: the transaction's saved page images (p->mimg) and a few spare image
 * buffers kept for the next transactions (p->mspare).
 *
 * Invariants:
 *  1. The cache is the database: every page 1..db_size that ever held
 *     content is cached (the budget is unbounded, nothing is evicted or
 *     spilled) and the memdb file behind p->fd stays empty; a page missing
 *     from the cache reads as zeros.
 *  2. No journal file, no lock call: the first pager_write of a page
 *     <= orig_size in a write transaction saves its image once (p->mimg,
 *     pgno in p->journaled); commit only marks the dirty pages clean and
 *     drops the images (their buffers go to the spare list); ROLLBACK copies
 *     each image back into its page and drops the pages the transaction
 *     added. Savepoints use the pager's sub-journal as for any database.
 *  3. journal_mode=OFF saves nothing: ROLLBACK keeps the changes (and the
 *     size), as SQLite's :memory: does.
 */
#include <string.h>

#include "pager_int.h"

/* Spare image buffers kept between transactions. */
#define MEM_SPARE_MAX 32

int pager_mem_save(Pager *p, PgPage *pg) {
  int rc = pager_pgset_reserve(&p->journaled, 1);
  if (rc != SHALE_OK) return rc;
  if (p->nmimg == p->mimgcap) {
    int cap = p->mimgcap ? p->mimgcap * 2 : 16;
    SubRec *a = shale_realloc(p->mimg, (size_t)cap * sizeof(SubRec));
    if (!a) return SHALE_NOMEM;
    p->mimg = a;
    p->mimgcap = cap;
  }
  uint8_t *d = p->nmspare > 0 ? p->mspare[--p->nmspare] : shale_malloc(p->page_size);
  if (!d) return SHALE_NOMEM;
  memcpy(d, pg->v.data, p->page_size);
  SubRec *r = &p->mimg[p->nmimg++];
  r->pgno = pg->pgno;
  r->data = d;
  r->off = 0;
  pager_pgset_add(&p->journaled, pg->pgno);
  return SHALE_OK;
}

/* Drop the saved images, keeping a few buffers. */
static void release_images(Pager *p) {
  for (int i = 0; i < p->nmimg; i++) {
    if (p->nmspare < MEM_SPARE_MAX)
      p->mspare[p->nmspare++] = p->mimg[i].data;
    else
      shale_free(p->mimg[i].data);
  }
  p->nmimg = 0;
}

void pager_mem_commit(Pager *p) {
  while (p->dirty_head) pager_cache_make_clean(p, p->dirty_head);
  release_images(p);
}

void pager_mem_rollback(Pager *p) {
  if (p->journal_mode == PAGER_JOURNAL_OFF) {
    /* nothing saved: the changes stay (invariant 3) */
    p->orig_size = p->db_size;
    while (p->dirty_head) pager_cache_make_clean(p, p->dirty_head);
    release_images(p);
    return;
  }
  if (p->db_size > p->orig_size) pager_cache_drop_above(p, p->orig_size);
  p->db_size = p->orig_size;
  for (int i = 0; i < p->nmimg; i++) {
    SubRec *r = &p->mimg[i];
    PgPage *pg = pager_cache_find(p, r->pgno);
    if (!pg) {
      /* cut off by pager_truncate: put it back (room was there before) */
      if (pager_cache_alloc(p, r->pgno, &pg) != SHALE_OK) continue; /* reads as zeros */
      pager_cache_insert(p, pg);
    }
    pager_page_own(p, pg, 0);
    memcpy(pg->v.data, r->data, p->page_size);
    memset(pg->v.extra, 0, (size_t)p->extra_size);
    pager_cache_make_clean(p, pg);
  }
  /* Pages neither saved nor past orig_size were never changed (or are the
   * lock-byte page): just clean. */
  while (p->dirty_head) pager_cache_make_clean(p, p->dirty_head);
  release_images(p);
}

void pager_mem_free(Pager *p) {
  release_images(p);
  for (int i = 0; i < p->nmspare; i++) shale_free(p->mspare[i]);
  p->nmspare = 0;
  shale_free(p->mimg);
  p->mimg = NULL;
  p->mimgcap = 0;
}
