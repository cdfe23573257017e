/* decompress.h: compressed input read as its decompressed bytes (input.c's source).
 * gzip (zlib), zstd, xz (liblzma) and bzip2 (libbz2), each through its own library,
 * recognised by magic bytes, never by a file's name; concatenated streams (cat a.gz
 * b.gz, pigz, pbzip2, zstd -T) read as one. A build without a library says so when it
 * meets that format. */
#ifndef ACCELKIT_DECOMPRESS_H
#define ACCELKIT_DECOMPRESS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum unz_kind { UNZ_NONE, UNZ_GZIP, UNZ_ZSTD, UNZ_XZ, UNZ_BZIP2, UNZ_LZ4 };

/* The longest magic: unz_detect is sure with this many bytes (or all of a shorter input). */
#define UNZ_MAGIC_MAX 10

/* What the first n bytes of an input show: an enum unz_kind, or -1 when they are the
 * start of a magic and more bytes (up to UNZ_MAGIC_MAX) would tell. */
int unz_detect(const unsigned char *p, size_t n);
/* "gzip", "zstd", ... for messages. */
const char *unz_kind_name(int kind);

typedef struct unz unz;

/* A decompressor of kind reading fd, whose first bytes (already read) are head[0..n):
 * they are copied. name is for messages and must outlive it. */
unz *unz_open(int kind, int fd, const unsigned char *head, size_t n, const char *name);
/* Up to n decompressed bytes into dst; 0 at the end of the last stream, or when the
 * input failed: corrupt or truncated data, data after the last stream, a format this
 * build does not read (unz_error then says so). Reads fd only while nothing has been
 * produced, so that a pipe's data flows on as it comes. Never exits but for memory
 * (xmalloc's message), so a reader's thread can leave the error to the caller's. */
size_t unz_read(unz *z, void *dst, size_t n);
/* "FILE: what is wrong" once the input failed, else NULL. */
const char *unz_error(const unz *z);
/* Whether unz_read would return without waiting for fd: compressed bytes are held. */
int unz_ready(const unz *z);
void unz_close(unz *z);

#ifdef __cplusplus
}
#endif
#endif
