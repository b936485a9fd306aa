/*
 * vm_preupdate.c -- the preupdate hook's calls (VmConnHooks.preupdate), made
 * by the Insert, Delete, IdxDelete and Clear opcodes just before they change
 * a row of a table, as SQLite's sqlite3_preupdate_hook sees the change:
 *   - Insert whose p4 names the table: INSERT (new row) or, with
 *     VM_OPFLAG_ISUPDATE, UPDATE (old and new row);
 *   - Delete whose p4 names the table (DELETE statements, REPLACE victims,
 *     trigger and foreign key actions): DELETE (old row);
 *   - a Delete without p4 on a table cursor (an UPDATE that changes the rowid
 *     deletes the old row first): reports nothing, keeps a copy of the old
 *     row for the Insert that follows;
 *   - Clear whose p4 names the table (DELETE without WHERE): DELETE for every
 *     row, in key order, before the tree is emptied.
 * A WITHOUT ROWID table's row is its PRIMARY KEY index entry (the cursor is
 * an index cursor, the record its key): the same calls with keys 0, as
 * SQLite reports them; an UPDATE deletes the old entry by IdxDelete with
 * VM_OPFLAG_ISUPDATE (its copy is kept as above) before the Insert of the
 * new one.
 *
 * Owns: Vm.pu_old (the copy of an old row), freed by vm_free.
 *
 * Invariants:
 *  1. Called only when v->hooks->preupdate is set: a connection without the
 *     hook pays one NULL test per Insert/Delete/Clear.
 *  2. The records handed to the hook are the stored payloads, complete
 *     (overflow pages read), valid only during the call; the cursor is left
 *     where the opcode needs it (Insert seeks again itself).
 *  3. The kept old row (pu_cur >= 0) is used by the next UPDATE Insert on
 *     the same cursor whose rowid is not in the table, and dropped by every
 *     UPDATE Insert.
 */
#include <string.h>

#include "vm_int.h"

/* Copy the cursor's whole payload into v->pu_old. */
static int copy_row(Vm *v, BtCursor *bc, uint32_t *pn) {
  uint32_t n = btree_payload_size(bc);
  if (!vm_buf_need(&v->pu_old, n ? n : 1)) return SHALE_NOMEM;
  *pn = n;
  return n ? btree_payload_read(bc, 0, n, v->pu_old.z) : SHALE_OK;
}

static void call(Vm *v, VmPreupdate *pu) {
  pu->depth = v->depth;
  v->hooks->preupdate(v->hooks->ctx, pu);
}

int vm_preupdate_insert(Vm *v, const VmOp *op, VmCursor *c, int64_t rowid, const ShValue *rec) {
  VmPreupdate pu;
  memset(&pu, 0, sizeof pu);
  int keyed = c->kind == VMC_INDEX; /* a WITHOUT ROWID row */
  pu.db = c->db;
  pu.table = op->p4.z;
  pu.key1 = pu.key2 = keyed ? 0 : rowid;
  pu.new_rec = rec->type == SHALE_NULL ? (const uint8_t *)"" : (const uint8_t *)rec->z;
  pu.new_n = rec->type == SHALE_NULL ? 0 : rec->n;
  if (!(op->p5 & VM_OPFLAG_ISUPDATE)) {
    pu.op = VM_HOOK_INSERT;
    call(v, &pu);
    return SHALE_OK;
  }
  pu.op = VM_HOOK_UPDATE;
  int res = 1, rc = keyed ? SHALE_OK : btree_seek_rowid(c->bc, rowid, &res);
  if (rc) return rc;
  if (res == 0) { /* the rowid is unchanged: the old row is still there */
    rc = copy_row(v, c->bc, &pu.old_n);
    if (rc) return rc;
  } else if (v->pu_cur == (int)(c - v->cur)) {
    pu.old_n = v->pu_n;
    pu.key1 = v->pu_key;
  } else {
    v->pu_cur = -1;
    return SHALE_OK; /* no old row known: nothing to report */
  }
  v->pu_cur = -1;
  pu.old_rec = (const uint8_t *)v->pu_old.z;
  call(v, &pu);
  return SHALE_OK;
}

int vm_preupdate_delete(Vm *v, const VmOp *op, VmCursor *c) {
  if (!c->bc || btree_eof(c->bc)) return SHALE_OK;
  int keyed = c->kind == VMC_INDEX;
  if (keyed && op->p4type != P4_TEXT) return SHALE_OK; /* an index entry, not a row */
  uint32_t n;
  int rc = copy_row(v, c->bc, &n);
  if (rc) return rc;
  int64_t rowid = keyed ? 0 : btree_rowid(c->bc);
  if (op->p4type != P4_TEXT) { /* an UPDATE moving the row to a new rowid */
    v->pu_cur = (int)(c - v->cur);
    v->pu_n = n;
    v->pu_key = rowid;
    return SHALE_OK;
  }
  VmPreupdate pu;
  memset(&pu, 0, sizeof pu);
  pu.op = VM_HOOK_DELETE;
  pu.db = c->db;
  pu.table = op->p4.z;
  pu.key1 = pu.key2 = rowid;
  pu.old_rec = (const uint8_t *)v->pu_old.z;
  pu.old_n = n;
  call(v, &pu);
  return SHALE_OK;
}

int vm_preupdate_keep(Vm *v, VmCursor *c) {
  int rc = copy_row(v, c->bc, &v->pu_n);
  v->pu_cur = rc ? -1 : (int)(c - v->cur);
  v->pu_key = 0;
  return rc;
}

int vm_preupdate_clear(Vm *v, const VmOp *op, Btree *dbt) {
  BtCursor *bc = NULL;
  int rc = btree_cursor_open(dbt, (uint32_t)op->p1, 0, NULL, NULL, &bc);
  if (rc) return rc;
  int eof = 1;
  rc = btree_first(bc, &eof);
  while (rc == SHALE_OK && !eof) {
    VmPreupdate pu;
    memset(&pu, 0, sizeof pu);
    pu.op = VM_HOOK_DELETE;
    pu.db = op->p2;
    pu.table = op->p4.z;
    pu.key1 = pu.key2 = btree_cursor_is_intkey(bc) ? btree_rowid(bc) : 0;
    rc = copy_row(v, bc, &pu.old_n);
    if (rc) break;
    pu.old_rec = (const uint8_t *)v->pu_old.z;
    call(v, &pu);
    rc = btree_next(bc, &eof);
  }
  btree_cursor_close(bc);
  return rc;
}
