/*
 * md5.h -- MD5 message digest (RFC 1321) for the sqllogictest runner.
 *
 * Owns: nothing global; the caller keeps an SltMd5 context.
 * Invariants:
 *  1. slt_md5_update may be called any number of times with any lengths;
 *     the digest equals MD5 of the concatenation of all the bytes.
 *  2. slt_md5_hex writes 32 lowercase hex digits and a NUL (33 bytes).
 */
#ifndef SHALE_SLT_MD5_H
#define SHALE_SLT_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct SltMd5 {
  uint32_t h[4];   /* state A, B, C, D */
  uint64_t nbytes; /* total bytes fed */
  uint8_t buf[64]; /* pending partial block */
  size_t nbuf;     /* bytes in buf */
} SltMd5;

void slt_md5_init(SltMd5 *m);
void slt_md5_update(SltMd5 *m, const void *data, size_t n);
void slt_md5_final(SltMd5 *m, uint8_t out[16]);
/* Finish m and write the digest as lowercase hex into hex[33]. */
void slt_md5_hex(SltMd5 *m, char hex[33]);
/* MD5 of one buffer, as lowercase hex. */
void slt_md5_str(const void *data, size_t n, char hex[33]);

#endif
