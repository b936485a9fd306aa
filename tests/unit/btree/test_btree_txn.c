/*
 * test_btree_txn.c -- transaction edges: a write transaction that cannot
 * start (another connection holds RESERVED) leaves no lock behind when the
 * call started the read transaction itself, and keeps the read transaction
 * when one was already open.
 */
#include "../../../src/btree/btree.h"
#include "../../test.h"

static Btree *open_bt(const char *path) {
  Btree *bt = NULL;
  CHECK_OK(btree_open(os_vfs_find(NULL), path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  return bt;
}

TEST(failed_write_begin_releases_lock) {
  const char *path = test_path("txn.db");
  Btree *a = open_bt(path), *b = open_bt(path);
  uint32_t root;
  CHECK_OK(btree_begin(a, BTREE_TXN_WRITE));
  CHECK_OK(btree_create_table(a, BTREE_INTKEY, &root));
  CHECK_OK(btree_commit(a));

  /* a holds RESERVED: b cannot start writing. */
  CHECK_OK(btree_begin(a, BTREE_TXN_WRITE));
  CHECK_EQ(btree_begin(b, BTREE_TXN_WRITE) & 0xff, SHALE_BUSY);
  CHECK_EQ(btree_txn_state(b), PAGER_TXN_NONE);
  /* With no lock left by b, a can commit (needs EXCLUSIVE: no SHARED around). */
  CHECK_OK(btree_update_meta(a, BTREE_META_USER_VERSION, 5));
  CHECK_OK(btree_commit(a));

  /* b already reading: the failed upgrade keeps its read transaction. */
  CHECK_OK(btree_begin(a, BTREE_TXN_WRITE));
  CHECK_OK(btree_begin(b, BTREE_TXN_READ));
  CHECK_EQ(btree_begin(b, BTREE_TXN_WRITE) & 0xff, SHALE_BUSY);
  CHECK_EQ(btree_txn_state(b), PAGER_TXN_READ);
  uint32_t uv = 0;
  CHECK_OK(btree_get_meta(b, BTREE_META_USER_VERSION, &uv));
  CHECK_EQ(uv, 5);
  CHECK_OK(btree_commit(b));
  CHECK_OK(btree_rollback(a));
  btree_close(a);
  btree_close(b);
}
