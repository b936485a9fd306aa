/*
 * vm.c -- programs and their builder, the Vm's lifecycle (new, reset,
 * free), parameter bindings, result access and EXPLAIN text.
 *
 * Owns: VmProgram memory (one block: the VmProgram and the first chunk of
 * its arena, which holds the ops array and every p4 value), the Vm's arrays (registers,
 * register buffers, aggregate slots, cursors, parameters, once flags).
 *
 * Invariants:
 *  1. Every array a Vm needs is allocated once by vm_new, sized from the
 *     program, in the Vm's own block (one shale_malloc, freed with the Vm);
 *     reset clears in place and never allocates.
 *  2. Builder errors are sticky (b->rc); finish frees everything on error.
 *  3. A label appears as a negative operand only until finish; after finish
 *     every jump operand is an address in 0..nop; ops[nop] is a Halt
 *     (vm_builder_finish adds it, outside nop), where a program without
 *     a Halt of its own stops.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vm_int.h"

static const char *const op_names[] = {
#define OP(name, jumps, doc) #name,
#include "opcodes.def"
#undef OP
};
static const uint8_t op_jumps[] = {
#define OP(name, jumps, doc) jumps,
#include "opcodes.def"
#undef OP
};

const char *vm_opcode_name(int op) { return op >= 0 && op < OP__COUNT ? op_names[op] : NULL; }
int vm_opcode_jumps(int op) { return op >= 0 && op < OP__COUNT ? op_jumps[op] : 0; }

void vm_program_free(VmProgram *p) { vm_program_free_keep(p, NULL); }

void vm_program_free_keep(VmProgram *p, VmSpare *spare) {
  if (!p) return;
  for (int i = 0; i < p->nsub; i++) vm_program_free(p->subs[i]);
  shale_free(p->subs);
  util_arena_free(&p->arena); /* the ops, p4 values; not its first chunk, in p's block */
  if (spare && !spare->blk) { /* every program block has one size */
    spare->blk = p;
    spare->size = 1;
    return;
  }
  shale_free(p);
}

/* ---- builder ---- */

/* Bytes of a program's block after the VmProgram: the first chunk of its
 * arena (the ops array, p4 values, the text), enough for a short statement. */
#define PROG_FIRST_CHUNK 3072

int vm_builder_init(VmBuilder *b, const char *sql) {
  return vm_builder_init_reuse(b, sql, sql ? (int)strlen(sql) : 0, NULL);
}

int vm_builder_init_reuse(VmBuilder *b, const char *sql, int nsql, VmSpare *spare) {
  memset(b, 0, sizeof *b);
  char *blk;
  if (spare && spare->blk) {
    blk = spare->blk;
    spare->blk = NULL;
    spare->size = 0;
  } else {
    blk = shale_malloc(sizeof *b->prog + PROG_FIRST_CHUNK);
  }
  if (!blk) return b->rc = SHALE_NOMEM;
  b->prog = (VmProgram *)blk;
  memset(b->prog, 0, sizeof *b->prog);
  util_arena_init_buf(&b->prog->arena, 0, blk + sizeof *b->prog, PROG_FIRST_CHUNK);
  if (sql) {
    b->prog->sql = util_arena_strndup(&b->prog->arena, sql, (size_t)nsql);
    if (!b->prog->sql) b->rc = SHALE_NOMEM;
  }
  return b->rc;
}

/* Append the op to p (room for it checked). */
static inline int put_op(VmProgram *p, int op, int p1, int p2, int p3) {
  assert(op >= 0 && op < OP__COUNT);
  VmOp *o = &p->ops[p->nop];
  memset(o, 0, sizeof *o);
  o->op = (uint8_t)op;
  o->p1 = p1;
  o->p2 = p2;
  o->p3 = p3;
  if (op == OP_Variable && p1 > p->nvar) p->nvar = p1;
  if (op == OP_ResultRow && p2 > p->ncolumn) p->ncolumn = p2;
  return p->nop++;
}

/* A builder array (ops, labels) of *cap elements of elem bytes, n in use,
 * doubled (first when empty) in the program's arena: the old one stays
 * there. NULL (b->rc set) when out of memory or past max elements. */
static void *builder_grow(VmBuilder *b, const void *old, int n, int *cap, int first, int max,
                          size_t elem) {
  int ncap = *cap ? *cap * 2 : first;
  void *a = ncap < max ? util_arena_alloc(&b->prog->arena, (size_t)ncap * elem) : NULL;
  if (!a) {
    b->rc = SHALE_NOMEM;
    return NULL;
  }
  if (n) memcpy(a, old, (size_t)n * elem);
  *cap = ncap;
  return a;
}

/* The ops array is full: double it, then append. Out of line, so that
 * vm_builder_add's common path is a leaf. */
static __attribute__((noinline)) int add_grow(VmBuilder *b, int op, int p1, int p2, int p3) {
  VmProgram *p = b->prog;
  VmOp *n = builder_grow(b, p->ops, p->nop, &b->cap, 32, 1 << 26, sizeof *n);
  if (!n) return -1;
  p->ops = n;
  return put_op(p, op, p1, p2, p3);
}

int vm_builder_add(VmBuilder *b, int op, int p1, int p2, int p3) {
  if (b->rc) return -1;
  if (b->prog->nop == b->cap) return add_grow(b, op, p1, p2, p3);
  return put_op(b->prog, op, p1, p2, p3);
}

int vm_builder_add_int64(VmBuilder *b, int op, int p1, int p2, int p3, int64_t v) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  int64_t *x = util_arena_alloc(&b->prog->arena, sizeof *x);
  if (!x) return b->rc = SHALE_NOMEM, -1;
  *x = v;
  b->prog->ops[a].p4type = P4_INT64;
  b->prog->ops[a].p4.pi = x;
  return a;
}

int vm_builder_add_real(VmBuilder *b, int op, int p1, int p2, int p3, double v) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  double *x = util_arena_alloc(&b->prog->arena, sizeof *x);
  if (!x) return b->rc = SHALE_NOMEM, -1;
  *x = v;
  b->prog->ops[a].p4type = P4_REAL;
  b->prog->ops[a].p4.pr = x;
  return a;
}

int vm_builder_add_text(VmBuilder *b, int op, int p1, int p2, int p3, const char *z, int n) {
  if (n < 0) n = z ? (int)strlen(z) : 0;
  if (op == OP_String || op == OP_Blob) p1 = n;
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  char *x = util_arena_strndup(&b->prog->arena, z ? z : "", (size_t)n);
  if (!x) return b->rc = SHALE_NOMEM, -1;
  b->prog->ops[a].p4type = P4_TEXT;
  b->prog->ops[a].p4.z = x;
  return a;
}

int vm_builder_add_value(VmBuilder *b, int op, int p1, int p2, int p3, const ShValue *v) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  ShValue *x = util_arena_alloc(&b->prog->arena, sizeof *x);
  if (!x) return b->rc = SHALE_NOMEM, -1;
  *x = *v;
  x->flags = 0;
  if (v->type == SHALE_TEXT || v->type == SHALE_BLOB) {
    char *z = util_arena_strndup(&b->prog->arena, v->z ? v->z : "", v->n);
    if (!z) return b->rc = SHALE_NOMEM, -1;
    x->z = z;
  }
  b->prog->ops[a].p4type = P4_VALUE;
  b->prog->ops[a].p4.v = x;
  return a;
}

int vm_builder_add_p4(VmBuilder *b, int op, int p1, int p2, int p3, int p4type, const void *p) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  assert(p4type == P4_KEYINFO || p4type == P4_FUNC || p4type == P4_COLL || p4type == P4_WINDOW ||
         p4type == P4_VTAB);
  b->prog->ops[a].p4type = (uint8_t)p4type;
  b->prog->ops[a].p4.p = p;
  return a;
}

int vm_builder_add_i4(VmBuilder *b, int op, int p1, int p2, int p3, int32_t i) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  b->prog->ops[a].p4type = P4_INT32;
  b->prog->ops[a].p4.i = i;
  return a;
}

int vm_builder_add_program(VmBuilder *b, int op, int p1, int p2, int p3, VmProgram *sub) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) {
    vm_program_free(sub);
    return a;
  }
  VmProgram **n = shale_realloc(b->prog->subs, (size_t)(b->prog->nsub + 1) * sizeof *n);
  if (!n) {
    vm_program_free(sub);
    return b->rc = SHALE_NOMEM, -1;
  }
  b->prog->subs = n;
  n[b->prog->nsub++] = sub;
  b->prog->ops[a].p4type = P4_PROGRAM;
  b->prog->ops[a].p4.sub = sub;
  return a;
}

int vm_builder_adopt(VmBuilder *b, VmProgram *sub) {
  if (b->rc) {
    vm_program_free(sub);
    return b->rc;
  }
  VmProgram **n = shale_realloc(b->prog->subs, (size_t)(b->prog->nsub + 1) * sizeof *n);
  if (!n) {
    vm_program_free(sub);
    return b->rc = SHALE_NOMEM;
  }
  b->prog->subs = n;
  n[b->prog->nsub++] = sub;
  return SHALE_OK;
}

int vm_builder_add_program_ref(VmBuilder *b, int op, int p1, int p2, int p3, VmProgram **cell) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  b->prog->ops[a].p4type = P4_SUBREF;
  b->prog->ops[a].p4.ref = cell;
  return a;
}

int vm_builder_add_roots(VmBuilder *b, int op, int p1, int p2, int p3, const BtreeCheckRoot *roots,
                         int n) {
  int a = vm_builder_add(b, op, p1, p2, p3);
  if (a < 0) return a;
  VmRoots *x = util_arena_alloc(&b->prog->arena, sizeof *x + (size_t)n * sizeof x->r[0]);
  if (!x) return b->rc = SHALE_NOMEM, -1;
  x->n = n;
  if (n) memcpy(x->r, roots, (size_t)n * sizeof x->r[0]);
  b->prog->ops[a].p4type = P4_ROOTS;
  b->prog->ops[a].p4.roots = x;
  return a;
}

void vm_builder_set_p5(VmBuilder *b, int addr, int p5) {
  if (b->rc || addr < 0 || addr >= b->prog->nop) return;
  b->prog->ops[addr].p5 = (uint8_t)p5;
}

void vm_builder_set_p2(VmBuilder *b, int addr, int p2) {
  if (b->rc || addr < 0 || addr >= b->prog->nop) return;
  b->prog->ops[addr].p2 = p2;
}

int vm_builder_addr(VmBuilder *b) { return b->prog ? b->prog->nop : 0; }

static int new_label(VmBuilder *b) {
  b->labels[b->nlabel] = -1;
  return -1 - b->nlabel++;
}

/* The labels are full: double them (in the program's arena, as the ops). */
static __attribute__((noinline)) int label_grow(VmBuilder *b) {
  int *n = builder_grow(b, b->labels, b->nlabel, &b->caplabel, 16, 1 << 28, sizeof *n);
  if (!n) return -1;
  b->labels = n;
  return new_label(b);
}

int vm_builder_label(VmBuilder *b) {
  if (b->rc) return -1;
  if (b->nlabel == b->caplabel) return label_grow(b);
  return new_label(b);
}

void vm_builder_resolve(VmBuilder *b, int label) {
  if (b->rc) return;
  int i = -1 - label;
  assert(i >= 0 && i < b->nlabel);
  if (i >= 0 && i < b->nlabel) b->labels[i] = b->prog->nop;
}

int vm_builder_regs(VmBuilder *b, int n) {
  if (!b->prog) return 0;
  int first = b->prog->nreg + 1;
  b->prog->nreg += n;
  return first;
}

int vm_builder_cursor(VmBuilder *b) { return b->prog ? b->prog->ncursor++ : 0; }

static int is_compare(int op) {
  return op == OP_Eq || op == OP_Ne || op == OP_Lt || op == OP_Le || op == OP_Gt || op == OP_Ge;
}

/* 1 for the ops whose jump to p2 the interpreter takes without a check of
 * the target (the per-row ops of a scan: vm_exec.c JUMP_IN): vm_builder_finish
 * checks it instead, against 0..nop (ops[nop] is the Halt it adds). */
static int jumps_unchecked(const VmOp *o) {
  switch (o->op) {
    case OP_Next:
    case OP_Prev:
    case OP_IdxGE:
    case OP_IdxGT:
    case OP_IdxLE:
    case OP_IdxLT:
      return 1;
    default: /* a comparison's p2 with VM_STOREP2 is a register */
      return is_compare(o->op) && !(o->p5 & VM_STOREP2);
  }
}

/* 1 for the ops vm_builder_finish looks at besides those with a label in
 * p2 (op_jumps): Column, the other label operands, the unchecked jumps and
 * the comparisons. Every other op is passed over. */
static const uint8_t op_finish[OP__COUNT] = {
    [OP_Column] = 1, [OP_Jump] = 1,  [OP_InitCoroutine] = 1,
    [OP_Next] = 1,   [OP_Prev] = 1,  [OP_IdxGE] = 1,
    [OP_IdxGT] = 1,  [OP_IdxLE] = 1, [OP_IdxLT] = 1,
    [OP_Eq] = 1,     [OP_Ne] = 1,    [OP_Lt] = 1,
    [OP_Le] = 1,     [OP_Gt] = 1,    [OP_Ge] = 1,
};

static int fix_label(VmBuilder *b, int32_t *x) {
  if (*x >= 0) return SHALE_OK;
  int i = -1 - *x;
  if (i >= b->nlabel || b->labels[i] < 0) return SHALE_INTERNAL;
  *x = b->labels[i];
  return SHALE_OK;
}

void vm_builder_abort(VmBuilder *b) {
  vm_program_free(b->prog); /* and the labels, in its arena */
  memset(b, 0, sizeof *b);
}

/* Each Column's read-ahead (VM_COLUMN_AHEAD): 7 columns, cut at the last
 * column the program reads from the cursor, so a scan reading the first
 * columns of a wide row parses no more of each header than it uses. Without
 * memory for the per-cursor maxima every Column keeps 7. */
static void column_ahead(VmProgram *p, const int *at, int nat) {
  /* at[0..nat): the addresses of the Column ops (NULL: look at every op) */
  int n = at ? nat : p->nop;
  int nc = p->ncursor > 0 ? p->ncursor : 0, few[64];
  int *last = nc <= 64 ? few : shale_malloc((size_t)nc * sizeof *last);
  if (last)
    for (int i = 0; i < nc; i++) last[i] = -1;
  for (int k = 0; last && k < n; k++) {
    const VmOp *o = &p->ops[at ? at[k] : k];
    if (o->op == OP_Column && o->p1 >= 0 && o->p1 < nc && o->p2 > last[o->p1]) last[o->p1] = o->p2;
  }
  for (int k = 0; k < n; k++) {
    VmOp *o = &p->ops[at ? at[k] : k];
    if (o->op != OP_Column) continue;
    int ahead = 7;
    if (last && o->p1 >= 0 && o->p1 < nc && last[o->p1] - o->p2 < ahead)
      ahead = last[o->p1] - o->p2;
    o->p5 = (uint8_t)((o->p5 & ~(7 << 1)) | ahead << 1);
  }
  if (last != few) shale_free(last);
}

int vm_builder_finish(VmBuilder *b, VmProgram **out) {
  *out = NULL;
  int rc = b->rc;
  VmProgram *p = b->prog;
  int columns = 0, colat[128]; /* the Column ops (the first 128 addresses), for column_ahead */
  for (int a = 0; rc == SHALE_OK && a < p->nop; a++) {
    VmOp *o = &p->ops[a];
    if (!op_jumps[o->op] && !op_finish[o->op]) continue;
    if (o->op == OP_Column) { /* no label: only the REAL flag and the read-ahead */
      if (columns < 128) colat[columns] = a;
      columns++;
      if (a + 1 < p->nop && p->ops[a + 1].op == OP_RealAffinity && p->ops[a + 1].p1 == o->p3)
        o->p5 |= VM_COLUMN_REAL;
      continue;
    }
    if (op_jumps[o->op]) rc = fix_label(b, &o->p2);
    if (rc == SHALE_OK && o->op == OP_Jump) {
      rc = fix_label(b, &o->p1);
      if (rc == SHALE_OK) rc = fix_label(b, &o->p2);
      if (rc == SHALE_OK) rc = fix_label(b, &o->p3);
    }
    if (rc == SHALE_OK && o->op == OP_InitCoroutine) rc = fix_label(b, &o->p3);
    if (rc == SHALE_OK && jumps_unchecked(o) && (o->p2 < 0 || o->p2 > p->nop)) rc = SHALE_INTERNAL;
    if (is_compare(o->op)) {
      int slow = (o->p5 & VM_AFF_MASK) == VM_CMP_AFF(AFF_TEXT) || (o->p5 & VM_STOREP2);
      o->p5 = (uint8_t)((o->p5 & ~VM_CMP_SLOW) | (slow ? VM_CMP_SLOW : 0));
    }
  }
  if (rc == SHALE_OK && columns) column_ahead(p, columns <= 128 ? colat : NULL, columns);
  /* a Halt past the last op (not counted in nop): running off the end
   * halts there, so the interpreter checks pc only at jumps */
  if (rc == SHALE_OK && vm_builder_add(b, OP_Halt, 0, 0, 0) < 0) rc = b->rc;
  if (rc) {
    vm_builder_abort(b);
    return rc;
  }
  p->nop--;
  *out = p;
  memset(b, 0, sizeof *b);
  return SHALE_OK;
}

/* ---- Vm lifecycle ---- */

/* Round n up to the 16-byte alignment of the arrays vm_new places behind
 * the Vm in its one block. */
static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

int vm_new(const VmProgram *prog, Btree *bt, int flags, Vm **out) {
  return vm_new_reuse(prog, bt, flags, NULL, out);
}

void vm_spare_free(VmSpare *spare) {
  shale_free(spare->blk);
  spare->blk = NULL;
  spare->size = 0;
}

int vm_new_reuse(const VmProgram *prog, Btree *bt, int flags, VmSpare *spare, Vm **out) {
  *out = NULL;
  /* one allocation: the Vm, then its registers, register buffers, aggregate
   * slots, cursors, variables, variable buffers, Once flags and the cursors'
   * first header caches (freed together by vm_free; none of them is ever
   * reallocated) */
  size_t nr = (size_t)prog->nreg + 1, nv = (size_t)prog->nvar + 1;
  size_t o_reg = align16(sizeof(Vm));
  size_t o_rbuf = o_reg + align16(nr * sizeof(ShValue));
  size_t o_agg = o_rbuf + align16(nr * sizeof(VmBuf));
  size_t o_cur = o_agg + align16(nr * sizeof(VmAgg));
  size_t o_var = o_cur + align16(((size_t)prog->ncursor + 1) * sizeof(VmCursor));
  size_t o_vbuf = o_var + align16(nv * sizeof(ShValue));
  size_t o_once = o_vbuf + align16(nv * sizeof(VmBuf));
  size_t nc = (size_t)prog->ncursor + 1;
  size_t o_hdr = o_once + align16((size_t)prog->nop + 1);
  size_t total = o_hdr + nc * 2 * VM_HDR_FEW * sizeof(uint32_t);
  char *blk;
  if (spare && spare->blk && spare->size >= total) {
    blk = spare->blk;
    total = spare->size;
    spare->blk = NULL;
    spare->size = 0;
  } else {
    blk = shale_malloc(total);
    if (!blk) return SHALE_NOMEM;
  }
  /* zeroed part by part: the padding between the arrays is never read (an
   * all-zero ShValue is NULL) */
  memset(blk, 0, sizeof(Vm));
  memset(blk + o_reg, 0, nr * sizeof(ShValue));
  memset(blk + o_rbuf, 0, nr * sizeof(VmBuf));
  memset(blk + o_agg, 0, nr * sizeof(VmAgg));
  memset(blk + o_cur, 0, ((size_t)prog->ncursor + 1) * sizeof(VmCursor));
  memset(blk + o_var, 0, nv * sizeof(ShValue));
  memset(blk + o_vbuf, 0, nv * sizeof(VmBuf));
  memset(blk + o_once, 0, (size_t)prog->nop + 1);
  Vm *v = (Vm *)blk;
  v->blk_size = total;
  v->prog = prog;
  v->enc = RECORD_ENC_UTF8; /* until vm_set_hooks */
  v->bt = bt;
  v->dbv[0] = bt;
  v->ndb = 1;
  v->stmt_sp = -1;
  v->vtab_sp = -1;
  v->pu_cur = -1;
  v->sorter_budget = VM_SORTER_BUDGET_DEFAULT;
  v->flags = flags;
  v->reg = (ShValue *)(blk + o_reg);
  v->rbuf = (VmBuf *)(blk + o_rbuf);
  v->agg = (VmAgg *)(blk + o_agg);
  v->cur = (VmCursor *)(blk + o_cur);
  v->var = (ShValue *)(blk + o_var);
  v->vbuf = (VmBuf *)(blk + o_vbuf);
  v->once = (uint8_t *)(blk + o_once);
  /* each cursor's header cache starts in the block (not zeroed: written
   * before it is read) */
  uint32_t *hdr = (uint32_t *)(blk + o_hdr);
  for (size_t i = 0; i < nc; i++, hdr += 2 * VM_HDR_FEW) {
    v->cur[i].types = hdr;
    v->cur[i].offsets = hdr + VM_HDR_FEW;
    v->cur[i].capcol = VM_HDR_FEW;
  }
  /* NULLs: the rest of each value is zero already */
  for (size_t i = 0; i < nr; i++) v->reg[i].type = SHALE_NULL;
  for (size_t i = 0; i < nv; i++) v->var[i].type = SHALE_NULL;
  *out = v;
  return SHALE_OK;
}

void vm_set_dbs(Vm *v, Btree *const *dbs, int n) {
  if (n > VM_MAX_DB) n = VM_MAX_DB;
  if (n < 1) return;
  for (int i = 0; i < n; i++) v->dbv[i] = dbs[i];
  for (int i = n; i < v->ndb; i++) v->dbv[i] = NULL;
  v->ndb = n;
  v->bt = dbs[0];
}

/* Roll back every transaction this Vm began (own_mask); the rollback hook
 * runs once when one of them wrote. */
void vm_rollback_owned(Vm *v) {
  int wr = 0;
  for (int i = 0; i < v->ndb; i++) {
    Btree *b = v->dbv[i];
    if (!(v->own_mask & (1u << i)) || !b) continue;
    if (btree_txn_state(b) == PAGER_TXN_WRITE) wr = 1;
    if (btree_txn_state(b) != PAGER_TXN_NONE) btree_rollback(b);
  }
  if (wr && v->hooks && v->hooks->rollback) v->hooks->rollback(v->hooks->ctx);
  v->own_mask = 0;
  v->own_txn = 0;
}

/* End the statement savepoints (undo first when rollback). */
int vm_stmt_sp_end(Vm *v, int rollback) {
  int rc = SHALE_OK;
  for (int i = 0; i < v->ndb; i++) {
    Btree *b = v->dbv[i];
    if (!(v->sp_mask & (1u << i)) || !b || btree_txn_state(b) != PAGER_TXN_WRITE) continue;
    int r2 = rollback ? btree_savepoint_rollback(b, v->sp_db[i]) : SHALE_OK;
    int r3 = btree_savepoint_release(b, v->sp_db[i]);
    if (rc == SHALE_OK) rc = r2 ? r2 : r3;
  }
  v->sp_mask = 0;
  v->stmt_sp = -1;
  int r4 = vm_vtab_stmt_sp(v, rollback ? 2 : 1);
  return rc ? rc : r4;
}

void vm_set_conn(Vm *v, void *conn, const FuncConnCallbacks *cb) {
  v->conn = conn;
  v->cb = cb;
}

static void clear_regs(Vm *v) {
  if (!v->reg) return;
  int n = v->prog->nreg;
  ShValue *reg = v->reg;
  VmAgg *agg = v->agg; /* locals: the stores below cannot alias them */
  for (int i = 0; i <= n; i++) {
    if (reg[i].flags & VAL_OWNED) shale_free((void *)reg[i].z);
    value_set_null(&reg[i]);
    if (agg && agg[i].def) {
      /* an abandoned group: finish it, keeping its block as the spare */
      VmAgg *slot = &v->agg[i];
      FuncCtx ctx;
      func_ctx_init(&ctx, slot->def);
      ctx.conn = v->conn;
      ctx.cb = v->cb;
      ctx.agg = slot->agg;
      ctx.agg_size = slot->agg_size;
      ctx.agg_spare = slot->spare;
      ctx.agg_spare_size = slot->spare_size;
      func_agg_finish_keep(&ctx);
      func_ctx_reset(&ctx);
      slot->agg = NULL;
      slot->spare = ctx.agg_spare;
      slot->spare_size = ctx.agg_spare_size;
      slot->def = NULL;
    }
  }
}

int vm_reset(Vm *v) {
  vm_close_run(v, 0);
  if (v->own_mask) {
    vm_rollback_owned(v);
    if (v->hooks && v->hooks->deferred_fk) *v->hooks->deferred_fk = 0;
    if (v->hooks && v->hooks->deferred_imm_fk) *v->hooks->deferred_imm_fk = 0;
    if (v->hooks && v->hooks->defer_fks) *v->hooks->defer_fks = 0;
  } else if (v->sp_mask) { /* abandoned mid-statement: undo it */
    if (v->hooks && v->hooks->deferred_fk) *v->hooks->deferred_fk = v->stmt_def_fk;
    if (v->hooks && v->hooks->deferred_imm_fk) *v->hooks->deferred_imm_fk = v->stmt_def_imm_fk;
  }
  if (v->sp_mask) vm_stmt_sp_end(v, 1);
  v->stmt_sp = -1;
  v->sp_mask = 0;
  v->oe = 0;
  clear_regs(v);
  memset(v->once, 0, (size_t)v->prog->nop + 1);
  shale_free(v->errmsg);
  v->errmsg = NULL;
  func_auxdata_clear(&v->aux);
  v->pc = 0;
  v->rc = SHALE_OK;
  v->halted = 0;
  v->txn_rolled_back = 0;
  v->gave_txn = v->undo_all = v->undo_vtabs = v->wrote = 0;
  v->res_n = 0;
  v->nchange = 0;
  v->nchange_sub = 0;
  v->last_rowid_set = 0;
  v->nfk = 0;
  v->coll = NULL;
  v->stepped = 0;
  if (v->rowset)
    for (int i = 0; i <= v->prog->nreg; i++) {
      v->rowset[i].n = 0;
      v->rowset[i].pos = 0;
      v->rowset[i].sorted = 0;
    }
  return SHALE_OK;
}

void vm_free(Vm *v) { vm_free_keep(v, NULL); }

void vm_free_keep(Vm *v, VmSpare *spare) {
  if (!v) return;
  if (v->stepped) vm_reset(v);               /* else nothing to close, undo or clear */
  if (v->eph) btree_close(v->eph);           /* kept open across executions (vm_close_run) */
  for (int i = 0; i < v->prog->ncursor; i++) /* cursors parked by the last halt */
    if (v->cur[i].bc) btree_cursor_close(v->cur[i].bc);
  /* most of these buffers were never needed: the tests skip the calls */
  for (int i = 0; i < v->prog->ncursor; i++) {
    VmCursor *c = &v->cur[i];
    if (c->capcol > VM_HDR_FEW) shale_free(c->types); /* and offsets, in its block */
    if (c->buf) shale_free(c->buf);
    if (c->sbuf || c->sent || c->stmp) vm_sorter_release(c);
    if (c->hash) vm_hash_free(v, c->hash);
  }
  for (int i = 0; i <= v->prog->nreg; i++) {
    if (v->rbuf[i].z) shale_free(v->rbuf[i].z);
    if (v->agg[i].spare) shale_free(v->agg[i].spare);
  }
  for (int i = 0; i <= v->prog->nvar; i++) {
    value_clear(&v->var[i]);
    if (v->vbuf[i].z) shale_free(v->vbuf[i].z);
  }
  if (v->scratch.z) shale_free(v->scratch.z);
  if (v->keybuf.z) shale_free(v->keybuf.z);
  if (v->recvals.z) shale_free(v->recvals.z);
  if (v->pu_old.z) shale_free(v->pu_old.z);
  if (v->subvm) {
    for (int i = 0; i < v->prog->nop; i++) vm_free(v->subvm[i]);
    shale_free(v->subvm);
  }
  if (v->rowset) {
    for (int i = 0; i <= v->prog->nreg; i++) shale_free(v->rowset[i].a);
    shale_free(v->rowset);
  }
  if (v->errmsg) shale_free(v->errmsg);
  if (spare && v->blk_size <= VM_SPARE_MAX && v->blk_size > spare->size) {
    shale_free(spare->blk); /* the larger block is the more useful one */
    spare->blk = v;
    spare->size = v->blk_size;
    return;
  }
  shale_free(v); /* and the arrays vm_new placed in its block */
}

const char *vm_errmsg(Vm *v) { return v->errmsg; }
void vm_set_sorter_budget(Vm *v, uint64_t bytes) { v->sorter_budget = bytes ? bytes : 1; }
void vm_set_hooks(Vm *v, const VmConnHooks *hooks) {
  v->hooks = hooks;
  v->enc = hooks && hooks->text_enc ? *hooks->text_enc : RECORD_ENC_UTF8;
}
int64_t vm_fk_count(Vm *v) { return v->nfk; }
int vm_txn_rolled_back(Vm *v) { return v->txn_rolled_back; }
int vm_undo_released_txn(Vm *v) { return v->undo_all; }
void vm_set_sole_writer(Vm *v, int on) { v->sole_writer = on != 0; }
int vm_undo_vtabs(Vm *v) { return v->undo_vtabs; }
int vm_column_count(Vm *v) { return v->res_n; }
int vm_text_terminated(const Vm *v, const char *z, uint32_t n) {
  uintptr_t a = (uintptr_t)z, e = a + n;
  if (!z || e < a) return 0;
  for (int i = 0; i < v->prog->ncursor; i++) {
    const VmCursor *c = &v->cur[i];
    uintptr_t b = (uintptr_t)c->buf;
    if (c->buf && a >= b && e < b + c->bufcap) return z[n] == 0;
  }
  for (int i = 1; i <= v->prog->nvar; i++) {
    uintptr_t b = (uintptr_t)v->vbuf[i].z;
    if (v->vbuf[i].z && a >= b && e < b + v->vbuf[i].cap) return z[n] == 0;
  }
  return 0;
}

const ShValue *vm_column(Vm *v, int i) {
  static const ShValue null_value = {.type = SHALE_NULL};
  if (i < 0 || i >= v->res_n) return &null_value;
  return &v->reg[v->res_base + i];
}
const ShValue *vm_row(Vm *v, int *n) {
  *n = v->res_n;
  return &v->reg[v->res_base];
}
int vm_release_txn(Vm *v) {
  int owned = v->own_mask != 0;
  if (owned && !v->halted) v->gave_txn = 1;
  v->own_txn = 0;
  v->own_mask = 0;
  return owned;
}

int64_t vm_changes(Vm *v) { return v->nchange; }
int64_t vm_total_changes(Vm *v) { return v->nchange + v->nchange_sub; }
int vm_last_rowid_set(Vm *v) { return v->last_rowid_set; }
int64_t vm_last_rowid(Vm *v) { return v->last_rowid; }

char *vm_buf_need(VmBuf *b, uint32_t n) {
  if (n == 0) n = 1;
  if (b->cap < n) {
    uint32_t ncap = b->cap ? b->cap : 32;
    while (ncap < n) ncap = ncap * 2 > ncap ? ncap * 2 : n;
    char *z = shale_realloc(b->z, ncap);
    if (!z) return NULL;
    b->z = z;
    b->cap = ncap;
  }
  return b->z;
}

/* ---- bindings ---- */

int vm_bind_value(Vm *v, int i, const ShValue *x) {
  if (v->pc != 0 && !v->halted) return SHALE_MISUSE; /* a run is in progress */
  if (i < 1 || i > v->prog->nvar) return SHALE_RANGE;
  ShValue *d = &v->var[i];
  value_clear(d);
  if (x->type == SHALE_TEXT || x->type == SHALE_BLOB) {
    char *z = vm_buf_need(&v->vbuf[i], x->n + 1);
    if (!z) return SHALE_NOMEM;
    if (x->n) memcpy(z, x->z, x->n);
    z[x->n] = 0;
    *d = *x;
    d->flags = 0;
    d->z = z;
  } else {
    *d = *x;
    d->flags = x->flags & VAL_POINTER; /* a pointer's owner is the caller's binding */
  }
  return SHALE_OK;
}

int vm_bind_view(Vm *v, int i, const ShValue *x) {
  if (v->pc != 0 && !v->halted) return SHALE_MISUSE; /* a run is in progress */
  if (i < 1 || i > v->prog->nvar) return SHALE_RANGE;
  ShValue *d = &v->var[i];
  value_clear(d);
  *d = *x;
  d->flags &= (uint8_t)~VAL_OWNED;
  return SHALE_OK;
}

int vm_bind_null(Vm *v, int i) {
  ShValue x;
  value_set_null(&x);
  return vm_bind_value(v, i, &x);
}
int vm_bind_int(Vm *v, int i, int64_t n) {
  ShValue x;
  value_set_int(&x, n);
  return vm_bind_value(v, i, &x);
}
int vm_bind_real(Vm *v, int i, double r) {
  ShValue x;
  if (isnan(r))
    value_set_null(&x);
  else
    value_set_real(&x, r);
  return vm_bind_value(v, i, &x);
}
int vm_bind_text(Vm *v, int i, const char *z, int n) {
  ShValue x;
  value_set_text(&x, z, (uint32_t)(n < 0 ? (int)strlen(z) : n));
  return vm_bind_value(v, i, &x);
}
int vm_bind_blob(Vm *v, int i, const void *z, int n) {
  ShValue x;
  value_set_blob(&x, z, (uint32_t)n);
  return vm_bind_value(v, i, &x);
}

/* ---- EXPLAIN ---- */

void vm_explain_p4(const VmOp *o, char *buf, int nbuf) {
  buf[0] = 0;
  switch (o->p4type) {
    case P4_INT32:
      snprintf(buf, (size_t)nbuf, "%d", (int)o->p4.i);
      break;
    case P4_INT64:
      snprintf(buf, (size_t)nbuf, "%lld", (long long)*o->p4.pi);
      break;
    case P4_REAL: {
      char t[32];
      record_real_to_text(*o->p4.pr, t);
      snprintf(buf, (size_t)nbuf, "%s", t);
      break;
    }
    case P4_TEXT:
      snprintf(buf, (size_t)nbuf, "%s", o->p4.z);
      break;
    case P4_VALUE: {
      char t[32];
      const char *z;
      uint32_t n;
      if (!record_value_text_view(o->p4.v, t, &z, &n))
        snprintf(buf, (size_t)nbuf, "NULL");
      else
        snprintf(buf, (size_t)nbuf, "%.*s", (int)n, z);
      break;
    }
    case P4_KEYINFO: {
      const KeyInfo *ki = o->p4.ki;
      int w = snprintf(buf, (size_t)nbuf, "k(%d", ki->ncol);
      for (int i = 0; i < ki->ncol && w > 0 && w < nbuf; i++) {
        const Collation *c = ki->coll ? ki->coll[i] : NULL;
        w += snprintf(buf + w, (size_t)(nbuf - w), ",%s%s", ki->desc && ki->desc[i] ? "-" : "",
                      c ? c->name : "");
      }
      if (w > 0 && w < nbuf) snprintf(buf + w, (size_t)(nbuf - w), ")");
      break;
    }
    case P4_FUNC:
      snprintf(buf, (size_t)nbuf, "%s(%d)", o->p4.func->name, o->p4.func->nargs);
      break;
    case P4_VTAB:
      snprintf(buf, (size_t)nbuf, "vtab:%p", (const void *)o->p4.vtab);
      break;
    case P4_COLL:
      snprintf(buf, (size_t)nbuf, "%s", o->p4.coll ? o->p4.coll->name : "BINARY");
      break;
    case P4_WINDOW:
      snprintf(buf, (size_t)nbuf, "win(%d)", o->p4.win->nfunc);
      break;
    case P4_SUBREF:
      snprintf(buf, (size_t)nbuf, "program");
      break;
    case P4_ROOTS: {
      int w = snprintf(buf, (size_t)nbuf, "roots(");
      for (int i = 0; i < o->p4.roots->n && w > 0 && w < nbuf; i++)
        w += snprintf(buf + w, (size_t)(nbuf - w), "%s%u", i ? "," : "", o->p4.roots->r[i].root);
      if (w > 0 && w < nbuf) snprintf(buf + w, (size_t)(nbuf - w), ")");
      break;
    }
    default:
      break;
  }
}

char *vm_explain(const VmProgram *p) {
  StrBuf b;
  strbuf_init(&b, STRBUF_NOLIMIT);
  for (int a = 0; a < p->nop; a++) {
    const VmOp *o = &p->ops[a];
    char p4[200];
    vm_explain_p4(o, p4, sizeof p4);
    strbuf_printf(&b, "%d\t%s\t%d\t%d\t%d\t%s\t%d\n", a, op_names[o->op], (int)o->p1, (int)o->p2,
                  (int)o->p3, p4, (int)o->p5);
  }
  return strbuf_finish(&b);
}
