/* decompress.c: gzip, zstd, xz and bzip2 input through their libraries (decompress.h).
 * One loop drives every format; a format supplies a step (consume some compressed
 * bytes, produce some output) and what a new stream after the end of one needs. */
#include "decompress.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

#ifndef ACCELKIT_ZLIB
#define ACCELKIT_ZLIB 0
#endif
#ifndef ACCELKIT_ZSTD
#define ACCELKIT_ZSTD 0
#endif
#ifndef ACCELKIT_XZ
#define ACCELKIT_XZ 0
#endif
#ifndef ACCELKIT_BZIP2
#define ACCELKIT_BZIP2 0
#endif
#ifndef ACCELKIT_ISAL
#define ACCELKIT_ISAL 0
#endif
/* gzip through ISA-L's igzip where the build has it: 2.5 times zlib's speed on one
 * core (bench/README, compressed input), streaming as zlib does; else through zlib. */
#if ACCELKIT_ISAL
#include <isa-l/igzip_lib.h>
#undef ACCELKIT_ZLIB
#define ACCELKIT_ZLIB 0
#elif ACCELKIT_ZLIB
#include <zlib.h>
#endif
#if ACCELKIT_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif
#if ACCELKIT_XZ
#include <lzma.h>
#endif
#if ACCELKIT_BZIP2
#include <bzlib.h>
#endif

/* Compressed bytes are read this much at a time. */
#define UNZ_IN ((size_t)256 << 10)
/* A thread of its own decompresses ahead of the reader, into a ring of blocks, so that
 * decompressing and parsing overlap (bench/compressed); without it (the fuzz build's
 * UNZ_THREAD=0, or a thread that cannot start) unz_read decompresses in place. */
#ifndef UNZ_THREAD
#define UNZ_THREAD 1
#endif
#define UNZ_BLOCKS 4
#define UNZ_BLOCK ((size_t)1 << 20)

/* The ring the decompressing thread fills: blocks [tail, head) (mod UNZ_BLOCKS) are
 * full, the reader at pos in blk[tail]. */
struct ring {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *blk[UNZ_BLOCKS];
	size_t len[UNZ_BLOCKS], pos;
	unsigned head, tail;
	int done;			/* the thread ended: the input's end, or its error */
	int stop;			/* unz_close: end now */
};
/* zlib's and libbz2's counts are unsigned int: one step produces at most this. */
#define UNZ_STEP_MAX ((size_t)1 << 30)

/* '?' in bzip2's: its block size, '1' to '9'. */
static const struct {
	const char *m;
	size_t n;
	int kind;
} magics[] = {
	{"\x1f\x8b\x08", 3, UNZ_GZIP},
	{"\x28\xb5\x2f\xfd", 4, UNZ_ZSTD},
	{"\xfd" "7zXZ\0", 6, UNZ_XZ},
	{"BZh?1AY&SY", 10, UNZ_BZIP2},		/* a stream's first block */
	{"BZh?\x17\x72\x45\x38\x50\x90", 10, UNZ_BZIP2},	/* an empty stream */
	{"\x04\x22\x4d\x18", 4, UNZ_LZ4},
};

int
unz_detect(const unsigned char *p, size_t n)
{
	int partial = 0;
	for (size_t k = 0; k < sizeof magics / sizeof magics[0]; k++) {
		size_t i, len = MIN(n, magics[k].n);
		for (i = 0; i < len; i++) {
			unsigned char want = (unsigned char)magics[k].m[i];
			if (want == '?' && magics[k].kind == UNZ_BZIP2 ?
			    p[i] < '1' || p[i] > '9' : p[i] != want)
				break;
		}
		if (i == magics[k].n)
			return magics[k].kind;
		if (i == len)
			partial = 1;
	}
	return partial ? -1 : UNZ_NONE;
}

const char *
unz_kind_name(int kind)
{
	static const char *const names[] = {"plain", "gzip", "zstd", "xz", "bzip2", "lz4"};
	return kind >= 0 && kind <= UNZ_LZ4 ? names[kind] : "compressed";
}

struct unz {
	int kind, fd, in_eof;
	int in_stream;			/* inside a stream: its end not yet seen */
	const char *name;
	unsigned char *buf;		/* compressed bytes buf[pos..len), room for cap */
	size_t pos, len, cap;
	char err[512];			/* what failed: the input ends there (unz_error) */
	struct ring *ring;		/* NULL: decompressed in unz_read */
#if ACCELKIT_ISAL
	struct inflate_state gz;
#elif ACCELKIT_ZLIB
	z_stream gz;
#endif
#if ACCELKIT_ZSTD
	ZSTD_DStream *zs;
#endif
#if ACCELKIT_XZ
	lzma_stream xz;
#endif
#if ACCELKIT_BZIP2
	bz_stream bz;
#endif
};

static void NORETURN
oom(const unz *z)
{
	die("out of memory (the %s decompressor of %s)", unz_kind_name(z->kind), z->name);
}

/* Records the input's error (the first stands); returns -1 for the caller to pass on. */
static int PRINTF_LIKE(2, 3)
fail(unz *z, const char *fmt, ...)
{
	if (z->err[0] == '\0') {
		char what[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		snprintf(z->err, sizeof z->err, "%s: %s", z->name, what);
	}
	return -1;
}

static int
corrupt(unz *z, const char *why)
{
	return fail(z, "corrupt %s data (%s)", unz_kind_name(z->kind), why);
}

#if ACCELKIT_ISAL
/* ISA-L's error codes in zlib's words, where zlib has them. */
static const char *
isal_reason(int r)
{
	switch (r) {
	case ISAL_INVALID_BLOCK:
		return "invalid block type";
	case ISAL_INVALID_SYMBOL:
		return "invalid code";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM:
		return "incorrect data check";
	default:
		return "bad deflate data";
	}
}
#endif

/* Starts (or, after a stream's end, starts again) the format's decoder; -1 when it
 * cannot (unz_error says why). */
static int
codec_start(unz *z, int again)
{
	switch (z->kind) {
#if ACCELKIT_ISAL
	case UNZ_GZIP:
		if (again)
			isal_inflate_reset(&z->gz);
		else
			isal_inflate_init(&z->gz);
		z->gz.crc_flag = ISAL_GZIP;	/* the gzip wrapper, its CRC-32 checked */
		return 0;
#endif
#if ACCELKIT_ZLIB
	case UNZ_GZIP: {
		/* 15 + 16: a gzip wrapper, with a window of up to 32 KiB */
		int r = again ? inflateReset(&z->gz) : inflateInit2(&z->gz, 15 + 16);
		if (r == Z_MEM_ERROR)
			oom(z);
		return r == Z_OK ? 0 : fail(z, "zlib cannot start (%d)", r);
	}
#endif
#if ACCELKIT_ZSTD
	case UNZ_ZSTD:
		/* frames follow one another inside the decoder */
		if (!again && (z->zs = ZSTD_createDStream()) == NULL)
			oom(z);
		return 0;
#endif
#if ACCELKIT_XZ
	case UNZ_XZ: {
		/* LZMA_CONCATENATED: streams one after another, with padding, as xz -d */
		lzma_ret r = lzma_stream_decoder(&z->xz, UINT64_MAX, LZMA_CONCATENATED);
		if (r == LZMA_MEM_ERROR)
			oom(z);
		return r == LZMA_OK ? 0 : fail(z, "liblzma cannot start (%d)", (int)r);
	}
#endif
#if ACCELKIT_BZIP2
	case UNZ_BZIP2: {
		if (again)
			BZ2_bzDecompressEnd(&z->bz);
		int r = BZ2_bzDecompressInit(&z->bz, 0, 0);
		if (r == BZ_MEM_ERROR)
			oom(z);
		return r == BZ_OK ? 0 : fail(z, "libbz2 cannot start (%d)", r);
	}
#endif
	case UNZ_LZ4:
		return fail(z, "lz4-compressed input is not read; decompress it first (lz4 -dc)");
	default:
		return fail(z, "%s-compressed input, and this build has no %s library "
		    "(rebuild accelkit with it: make deps)", unz_kind_name(z->kind),
		    unz_kind_name(z->kind));
	}
}

/* One step of the decoder over in[0..*used) into out[0..*made): 1 when a stream ended
 * there, 0 when not, -1 on corrupt data. last: no compressed bytes follow those given. */
static int
codec_step(unz *z, const unsigned char *in, size_t nin, unsigned char *out, size_t nout,
    int last, size_t *used, size_t *made)
{
	nout = MIN(nout, UNZ_STEP_MAX);
	nin = MIN(nin, UNZ_STEP_MAX);
	switch (z->kind) {
#if ACCELKIT_ISAL
	case UNZ_GZIP: {
		z->gz.next_in = (uint8_t *)in;
		z->gz.avail_in = (uint32_t)nin;
		z->gz.next_out = out;
		z->gz.avail_out = (uint32_t)nout;
		int r = isal_inflate(&z->gz);
		*used = nin - z->gz.avail_in;
		*made = nout - z->gz.avail_out;
		if (r < 0)
			return corrupt(z, isal_reason(r));
		return z->gz.block_state == ISAL_BLOCK_FINISH;
	}
#endif
#if ACCELKIT_ZLIB
	case UNZ_GZIP: {
		z->gz.next_in = (unsigned char *)in;
		z->gz.avail_in = (unsigned)nin;
		z->gz.next_out = out;
		z->gz.avail_out = (unsigned)nout;
		int r = inflate(&z->gz, Z_NO_FLUSH);
		*used = nin - z->gz.avail_in;
		*made = nout - z->gz.avail_out;
		if (r == Z_MEM_ERROR)
			oom(z);
		if (r == Z_DATA_ERROR || r == Z_NEED_DICT || r == Z_STREAM_ERROR)
			return corrupt(z, z->gz.msg != NULL ? z->gz.msg : "bad deflate data");
		return r == Z_STREAM_END;
	}
#endif
#if ACCELKIT_ZSTD
	case UNZ_ZSTD: {
		ZSTD_inBuffer ib = {in, nin, 0};
		ZSTD_outBuffer ob = {out, nout, 0};
		size_t r = ZSTD_decompressStream(z->zs, &ob, &ib);
		*used = ib.pos;
		*made = ob.pos;
		if (ZSTD_isError(r)) {
			if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
				oom(z);
			return corrupt(z, ZSTD_getErrorName(r));
		}
		/* 0: a frame is whole and flushed; another may follow */
		return r == 0;
	}
#endif
#if ACCELKIT_XZ
	case UNZ_XZ: {
		z->xz.next_in = in;
		z->xz.avail_in = nin;
		z->xz.next_out = out;
		z->xz.avail_out = nout;
		lzma_ret r = lzma_code(&z->xz, last ? LZMA_FINISH : LZMA_RUN);
		*used = nin - z->xz.avail_in;
		*made = nout - z->xz.avail_out;
		if (r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR)
			oom(z);
		if (r == LZMA_FORMAT_ERROR || r == LZMA_OPTIONS_ERROR || r == LZMA_DATA_ERROR)
			return corrupt(z, r == LZMA_DATA_ERROR ? "bad block" : "bad stream header");
		return r == LZMA_STREAM_END;
	}
#endif
#if ACCELKIT_BZIP2
	case UNZ_BZIP2: {
		z->bz.next_in = (char *)in;
		z->bz.avail_in = (unsigned)nin;
		z->bz.next_out = (char *)out;
		z->bz.avail_out = (unsigned)nout;
		int r = BZ2_bzDecompress(&z->bz);
		*used = nin - z->bz.avail_in;
		*made = nout - z->bz.avail_out;
		if (r == BZ_MEM_ERROR)
			oom(z);
		if (r != BZ_OK && r != BZ_STREAM_END)
			return corrupt(z, r == BZ_DATA_ERROR_MAGIC ? "bad magic" : "bad block");
		return r == BZ_STREAM_END;
	}
#endif
	default:
		(void)in, (void)out, (void)used, (void)made, (void)last;
		return fail(z, "no decoder");
	}
}

/* Reads more compressed bytes after those held; sets in_eof at the end of the file. */
static void
refill(unz *z)
{
	if (z->pos > 0) {
		memmove(z->buf, z->buf + z->pos, z->len - z->pos);
		z->len -= z->pos;
		z->pos = 0;
	}
	for (;;) {
		/* the one place the ring's thread may be cancelled (unz_close): a read from a
		 * pipe that may never end, with nothing held */
		if (z->ring != NULL)
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		ssize_t r = read(z->fd, z->buf + z->len, z->cap - z->len);
		if (z->ring != NULL)
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (r > 0) {
			z->len += (size_t)r;
			return;
		}
		if (r == 0) {
			z->in_eof = 1;
			return;
		}
		if (errno != EINTR) {
			fail(z, "%s", strerror(errno));
			z->in_eof = 1;
			z->pos = z->len;
			return;
		}
	}
}

/* Bytes after the end of a stream: gzip and bzip2 streams may follow one another
 * (cat, pigz, pbzip2), each with its magic; anything else there is an error. zstd's
 * frames follow one another inside its decoder, and liblzma reads xz's concatenated
 * streams and padding itself. */
static int
next_stream(unz *z)
{
	z->in_stream = 1;
	if (z->kind != UNZ_GZIP && z->kind != UNZ_BZIP2)
		return 0;
	while (z->len - z->pos < UNZ_MAGIC_MAX && !z->in_eof)
		refill(z);
	if (unz_detect(z->buf + z->pos, z->len - z->pos) != z->kind)
		return fail(z, "data after the end of the %s stream", unz_kind_name(z->kind));
	return codec_start(z, 1);
}

static void ring_start(unz *z);

unz *
unz_open(int kind, int fd, const unsigned char *head, size_t n, const char *name)
{
	unz *z = xcalloc(1, sizeof *z);
	z->kind = kind;
	z->fd = fd;
	z->name = name;
	z->cap = MAX(UNZ_IN, n);
	z->buf = xmalloc(z->cap);
	memcpy(z->buf, head, n);
	z->len = n;
	z->in_stream = 1;
	if (codec_start(z, 0) < 0)
		z->kind = UNZ_NONE;	/* nothing to end in unz_close */
	else if (UNZ_THREAD)
		ring_start(z);
	return z;
}

/* Up to n bytes decompressed into dst, as unz_read promises (the reader's thread, or
 * the ring's). */
static size_t
decode(unz *z, void *dst, size_t n)
{
	unsigned char *out = dst;
	size_t done = 0;

	while (done < n && z->err[0] == '\0') {
		if (z->pos == z->len && !z->in_eof) {
			if (done > 0)
				break;	/* what there is now, rather than wait on the file */
			refill(z);
			continue;
		}
		if (z->pos == z->len && !z->in_stream)
			break;		/* the end of the last stream */
		if (!z->in_stream && next_stream(z) < 0)
			break;
		size_t used = 0, made = 0;
		int end = codec_step(z, z->buf + z->pos, z->len - z->pos, out + done, n - done,
		    z->in_eof, &used, &made);
		z->pos += used;
		done += made;
		if (end < 0)
			break;
		if (end)
			z->in_stream = 0;
		else if (used == 0 && made == 0) {
			if (z->pos == z->len && z->in_eof)
				fail(z, "the %s data ends before its stream does (a truncated or "
				    "corrupt file)", unz_kind_name(z->kind));
			else if (z->pos < z->len && z->len - z->pos < z->cap && !z->in_eof)
				refill(z);	/* the decoder needs more than is held */
			else if (z->pos < z->len)
				corrupt(z, "no progress");
		}
	}
	return z->err[0] != '\0' ? 0 : done;
}

const char *
unz_error(const unz *z)
{
	return z->err[0] != '\0' ? z->err : NULL;
}

/* The ring's thread: decodes block after block until the input ends or fails, or
 * unz_close says stop. */
static void *
ring_main(void *arg)
{
	unz *z = arg;
	struct ring *r = z->ring;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->head - r->tail == UNZ_BLOCKS && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		int stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (stop)
			return NULL;
		unsigned b = r->head % UNZ_BLOCKS;
		size_t got = decode(z, r->blk[b], UNZ_BLOCK);
		pthread_mutex_lock(&r->mu);
		r->len[b] = got;
		if (got > 0)
			r->head++;
		else
			r->done = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (got == 0)
			return NULL;
	}
}

/* Starts the ring's thread; without one, unz_read decodes in place. */
static void
ring_start(unz *z)
{
	struct ring *r = xcalloc(1, sizeof *r);
	for (int i = 0; i < UNZ_BLOCKS; i++)
		r->blk[i] = xmalloc(UNZ_BLOCK);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	z->ring = r;
	if (pthread_create(&r->th, NULL, ring_main, z) != 0) {
		z->ring = NULL;
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		for (int i = 0; i < UNZ_BLOCKS; i++)
			free(r->blk[i]);
		free(r);
	}
}

size_t
unz_read(unz *z, void *dst, size_t n)
{
	struct ring *r = z->ring;
	if (r == NULL)
		return decode(z, dst, n);
	unsigned char *out = dst;
	size_t done = 0;
	pthread_mutex_lock(&r->mu);
	while (r->tail == r->head && !r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	/* what is decoded now, as read(2) gives what a pipe holds */
	while (done < n && r->tail != r->head) {
		unsigned b = r->tail % UNZ_BLOCKS;
		size_t c = MIN(n - done, r->len[b] - r->pos);
		memcpy(out + done, r->blk[b] + r->pos, c);
		done += c;
		if ((r->pos += c) == r->len[b]) {
			r->pos = 0;
			r->tail++;
			pthread_cond_broadcast(&r->cv);
		}
	}
	pthread_mutex_unlock(&r->mu);
	return done;
}

int
unz_ready(const unz *z)
{
	struct ring *r = z->ring;
	if (r == NULL)
		return z->pos < z->len || z->in_eof;
	pthread_mutex_lock(&r->mu);
	int ready = r->tail != r->head || r->done;
	pthread_mutex_unlock(&r->mu);
	return ready;
}

void
unz_close(unz *z)
{
	if (z == NULL)
		return;
	struct ring *r = z->ring;
	if (r != NULL) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_cancel(r->th);	/* takes effect only in its read(2) */
		pthread_join(r->th, NULL);
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		for (int i = 0; i < UNZ_BLOCKS; i++)
			free(r->blk[i]);
		free(r);
	}
	switch (z->kind) {
#if ACCELKIT_ZLIB
	case UNZ_GZIP:
		inflateEnd(&z->gz);
		break;
#endif
#if ACCELKIT_ZSTD
	case UNZ_ZSTD:
		ZSTD_freeDStream(z->zs);
		break;
#endif
#if ACCELKIT_XZ
	case UNZ_XZ:
		lzma_end(&z->xz);
		break;
#endif
#if ACCELKIT_BZIP2
	case UNZ_BZIP2:
		BZ2_bzDecompressEnd(&z->bz);
		break;
#endif
	default:
		break;
	}
	free(z->buf);
	free(z);
}
