/*
 * vm_vtab.c -- the VM's virtual-table opcodes (VCreate, VDestroy, VOpen,
 * VFilter, VNext, VColumn, VRowid, VUpdate, VBegin) over src/vtab/, and the
 * virtual tables' part of a transaction's end.
 *
 * Owns: the VtabCur of each VMC_VTAB cursor (closed by vm_cursor_close).
 *
 * Invariants:
 *  1. A module's error message becomes the statement's (v->errmsg); an
 *     error without one gets SQLite's text for the code.
 *  2. A cursor at eof, or after NullRow, reads NULL columns and rowid.
 */
#include <string.h>

#include "../vtab/vtab.h"
#include "vm_int.h"

static int fail(Vm *v, int rc, char *msg) {
  shale_free(v->errmsg);
  v->errmsg = msg ? msg : util_strdup(shale_errstr(rc));
  return rc;
}

/* Drop the list's current value and its conversions. */
static void in_cell_reset(VtabInList *l) {
  vtab_cells_free(&l->cell, 1);
  value_clear(&l->cell.v);
  ShValue v = l->cell.v;
  memset(&l->cell, 0, sizeof l->cell);
  l->cell.v = v;
}

static void in_list_free(VtabInList *l) {
  if (!l) return;
  in_cell_reset(l);
  shale_free(l);
}

void vm_vtab_close(VmCursor *c) {
  vtab_close(c->vc);
  c->vc = NULL;
  in_list_free(c->inl);
  c->inl = NULL;
}

/* VtabInList.step over an IN set's ephemeral index: its keys in order,
 * column 0 of each (a copy: the page may move before the next step). */
static int in_list_step(VtabInList *l, int first) {
  Vm *v = l->owner;
  VmCursor *c = &v->cur[l->cursor];
  in_cell_reset(l);
  if (!c->bc) return SHALE_DONE;
  int end = 0;
  int rc = first ? btree_first(c->bc, &end) : btree_next(c->bc, &end);
  c->cache_ok = 0;
  if (rc) return rc;
  if (end) return SHALE_DONE;
  uint32_t n = btree_payload_size(c->bc);
  uint8_t *rec = shale_malloc(n ? n : 1);
  if (!rec) return SHALE_NOMEM;
  rc = btree_payload_read(c->bc, 0, n, rec);
  ShValue x;
  value_set_null(&x);
  if (rc == SHALE_OK) rc = record_column(rec, n, 0, &x);
  if (rc == SHALE_OK) rc = record_value_make_owned(&x);
  shale_free(rec);
  if (rc == SHALE_OK && v->enc != RECORD_ENC_UTF8) rc = record_text_decode(&x, v->enc);
  if (rc) {
    value_clear(&x);
    return rc;
  }
  l->cell.v = x;
  return SHALE_OK;
}

/* VInitIn: r[p2] carries the list over the IN set of cursor p1. */
static int init_in(Vm *v, const VmOp *op, ShValue *out) {
  VmCursor *c = &v->cur[op->p1];
  if (!c->inl) {
    VtabInList *l = shale_malloc(sizeof *l);
    if (!l) return SHALE_NOMEM;
    memset(l, 0, sizeof *l);
    l->vp = (ValPtr){l, VTAB_IN_TYPE, NULL};
    l->step = in_list_step;
    l->owner = v;
    l->cursor = op->p1;
    c->inl = l;
  }
  value_clear(out);
  out->flags = VAL_POINTER;
  out->z = (const char *)(const void *)&c->inl->vp;
  return SHALE_OK;
}

static VtabReg *reg_of(Vm *v) { return v->hooks ? v->hooks->vtabs : NULL; }

/* VCreate: the text is parsed again for module and arguments (vtab.c). */
static int vcreate(Vm *v, const VmOp *op, ShValue *sqlv) {
  VtabReg *r = reg_of(v);
  if (!r || sqlv->type != SHALE_TEXT) return fail(v, SHALE_INTERNAL, NULL);
  char *sql = shale_malloc((size_t)sqlv->n + 1);
  if (!sql) return SHALE_NOMEM;
  memcpy(sql, sqlv->z, (size_t)sqlv->n);
  sql[sqlv->n] = 0;
  VtabTable *t = NULL;
  char *msg = NULL;
  int rc = vtab_connect_sql(r, 1, op->p1, op->p4.z, sql, &t, &msg);
  shale_free(sql);
  /* the statement rolls back a schema change: SQLite then resets the
   * connection's schemas, which disconnects every virtual table */
  if (rc) vtab_disconnect_db(r, -1);
  if (rc) return fail(v, rc, msg);
  return SHALE_OK;
}

int vm_vtab_next(Vm *v, const VmOp *op) {
  VmCursor *c = &v->cur[op->p1];
  if (!c->vc || c->vc->eof) return 0;
  char *msg = NULL;
  int rc = vtab_next(c->vc, &msg);
  if (rc) return -fail(v, rc, msg);
  return !c->vc->eof;
}

int vm_vtab_rowid(Vm *v, const VmOp *op, ShValue *out) {
  VmCursor *c = &v->cur[op->p1];
  value_clear(out);
  if (c->nullrow || !c->vc || c->vc->eof) return SHALE_OK;
  int64_t rowid = 0;
  char *msg = NULL;
  int rc = vtab_rowid(c->vc, &rowid, &msg);
  if (rc) return fail(v, rc, msg);
  value_set_int(out, rowid);
  return SHALE_OK;
}

int vm_vtab_column(Vm *v, const VmOp *op, ShValue *out) {
  VmCursor *c = &v->cur[op->p1];
  value_clear(out);
  if (c->nullrow || !c->vc || c->vc->eof) return SHALE_OK;
  char *msg = NULL;
  int rc = vtab_column(c->vc, op->p2, op->p5 != 0, out, &msg);
  if (rc) return fail(v, rc, msg);
  return SHALE_OK;
}

int vm_vtab_exec(Vm *v, const VmOp *op, ShValue *reg, int *jump) {
  char *msg = NULL;
  int rc = SHALE_OK;
  switch (op->op) {
    case OP_VCreate:
      return vcreate(v, op, &reg[op->p2]);
    case OP_VDestroy: {
      VtabReg *r = reg_of(v);
      if (!r) return fail(v, SHALE_INTERNAL, NULL);
      rc = vtab_destroy(r, op->p4.vtab, &msg);
      break;
    }
    case OP_VOpen: {
      VmCursor *c = &v->cur[op->p1];
      vm_cursor_close(v, c);
      rc = vtab_open(op->p4.vtab, &c->vc, &msg);
      if (rc == SHALE_OK) {
        c->kind = VMC_VTAB;
        vtab_cursor_ctx(c->vc, v->conn, v->cb, v->hooks ? v->hooks->max_length : 0,
                        v->hooks ? v->hooks->max_like_pattern : 0);
      }
      break;
    }
    case OP_VFilter: {
      VmCursor *c = &v->cur[op->p1];
      if (!c->vc) return fail(v, SHALE_INTERNAL, NULL);
      c->nullrow = 0;
      int argc = (int)reg[op->p3 + 1].i;
      const char *idx = op->p4type == P4_TEXT ? op->p4.z : NULL;
      rc = vtab_filter(c->vc, (int)reg[op->p3].i, idx, argc, &reg[op->p3 + 2], &msg);
      if (rc == SHALE_OK && c->vc->eof) *jump = 1;
      break;
    }
    case OP_VUpdate: {
      VtabTable *t = op->p4.vtab;
      VtabReg *r = reg_of(v);
      if (!r || !t->vt) return fail(v, SHALE_ERROR, util_mprintf("no such table: %s", t->name));
      static const int oe_map[] = {4, 1, 4, 3, 2, 5}; /* VM_OE_* -> SQLite's numbers */
      int oe = op->p5 < 6 ? oe_map[op->p5] : 4;
      int64_t rowid = 0;
      rc = vtab_update(r, t, op->p2, &reg[op->p3], oe, &rowid, &msg);
      if (rc == SHALE_OK) {
        v->nchange++;
        if (op->p1) {
          v->last_rowid = rowid;
          v->last_rowid_set = 1;
        }
      } else if ((rc & 0xff) == SHALE_CONSTRAINT && oe == 2 && t->constraint_support) {
        shale_free(msg); /* OR IGNORE: the row is skipped */
        return SHALE_OK;
      }
      break;
    }
    case OP_VInitIn:
      return init_in(v, op, &reg[op->p2]);
    case OP_VBegin: {
      VtabReg *r = reg_of(v);
      if (!r) return SHALE_OK;
      rc = vtab_begin(r, op->p4.vtab, r->nsavepoint, &msg);
      break;
    }
    case OP_VRename: {
      VtabReg *r = reg_of(v);
      const ShValue *nm = &reg[op->p1];
      if (!r || nm->type != SHALE_TEXT) return fail(v, SHALE_INTERNAL, NULL);
      char *name = util_mprintf("%.*s", (int)nm->n, nm->z);
      if (!name) return SHALE_NOMEM;
      rc = vtab_rename(r, op->p4.vtab, name, &msg);
      shale_free(name);
      break;
    }
    default:
      return fail(v, SHALE_INTERNAL, NULL);
  }
  if (rc) return fail(v, rc, msg);
  if (msg) shale_free(msg); /* a module may leave one on success */
  return SHALE_OK;
}

int vm_vtab_stmt_sp(Vm *v, int op) {
  VtabReg *r = reg_of(v);
  if (!r || (op == 0 && !(v->flags & VM_VTAB_SAVEPOINT)) || (op != 0 && v->vtab_sp < 0))
    return SHALE_OK;
  char *msg = NULL;
  int rc = SHALE_OK;
  if (op == 0) { /* again for each further database the statement writes */
    if (v->vtab_sp < 0) v->vtab_sp = r->nsavepoint++;
    rc = vtab_savepoint(r, 0, v->vtab_sp, &msg);
    if (rc) return fail(v, rc, msg);
    return SHALE_OK;
  }
  /* at the statement's end: its own error, if any, stays the one reported */
  if (op == 2) rc = vtab_savepoint(r, 2, v->vtab_sp, &msg);
  int r2 = vtab_savepoint(r, 1, v->vtab_sp, &msg);
  if (rc == SHALE_OK) rc = r2;
  if (r->nsavepoint > v->vtab_sp) r->nsavepoint = v->vtab_sp;
  v->vtab_sp = -1;
  shale_free(msg);
  return rc;
}

void vm_vtab_stmt_sp_drop(Vm *v) {
  VtabReg *r = reg_of(v);
  if (r && v->vtab_sp >= 0 && r->nsavepoint > v->vtab_sp) r->nsavepoint = v->vtab_sp;
  v->vtab_sp = -1;
}

int vm_vtab_sync(Vm *v) {
  VtabReg *r = reg_of(v);
  if (!r || !vtab_in_txn(r)) return SHALE_OK;
  char *msg = NULL;
  int rc = vtab_sync(r, &msg);
  if (rc) return fail(v, rc, msg);
  return SHALE_OK;
}

void vm_vtab_end(Vm *v, int commit) {
  VtabReg *r = reg_of(v);
  if (!r || !vtab_in_txn(r)) return;
  if (commit)
    vtab_commit(r);
  else
    vtab_rollback(r);
}
