/*
 * tscratch.h -- TEST SCAFFOLDING: scratch files on a memory file system.
 *
 * The crash tests and the hot-journal interop test sync thousands of times;
 * what they check is the order of writes and syncs as seen through the
 * fault VFS (or a killed process), not the disk, so their files may live on
 * tmpfs (/dev/shm) where fsync costs nothing. Falls back to test_path() when /dev/shm is not
 * usable.
 *
 * Invariants:
 *  1. The directory is removed at exit by the process that made it (not by
 *     forked children, which leave through _exit or SIGKILL), unless
 *     tscratch_keep() was called or SHALE_KEEP_SCRATCH is set (then it is
 *     kept for inspection and its path printed).
 */
#ifndef SHALE_TESTS_TSCRATCH_H
#define SHALE_TESTS_TSCRATCH_H

/* Path of `name` in the scratch directory (static buffer, 8 rotating). */
const char *tscratch_path(const char *name);
/* Keep the directory at exit. */
void tscratch_keep(void);

#endif
