/* unz.c: compressed input (common/decompress.c under common/input.c), as every
 * program meets it: lines through the chunk engine, on reader threads. Whatever the
 * bytes, a run ends in the bytes or in one error, the same for a file and a pipe and
 * for one thread and two (fuzz_input). Where zlib, read here independently, decodes
 * the whole input as gzip members one after another, the reader must give exactly its
 * bytes. */
#include <stdlib.h>
#include <string.h>
#if ACCELKIT_ZLIB
#include <zlib.h>
#endif

#include "chunks.h"
#include "decompress.h"
#include "fuzz.h"
#include "input.h"

/* The reader's bytes as a length and an FNV-1a hash: no allocation inside a run (an
 * error exit frees what the run allocated). want: zlib's, allocated outside the runs. */
static uint64_t got_hash, got_len;
static unsigned char *want;
static size_t want_len;

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *b = p; n--; b++)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

static void
keep(const void *p, size_t n)
{
	got_hash = fnv(got_hash, p, n);
	got_len += n;
}

static void
parse(void *ctx, struct chunk *c)
{
	(void)ctx;
	(void)c;
}

static const struct chunk_ops ops = {.cut = chunk_cut_lines, .parse = parse};

static void
read_all(const char *path)
{
	input *in = in_open(path);
	chunks *e = chunks_open(in, &ops, NULL);
	got_len = 0;
	got_hash = 0xcbf29ce484222325ull;
	for (struct chunk *c; (c = chunks_next(e)) != NULL;) {
		/* line by line: the digest must not depend on where the chunks were cut */
		for (const char *p = c->data, *end = p + c->len; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			fuzz_touch(p, n);
			keep(p, n);
			p += n;
		}
	}
	chunks_close(e);
	in_close(in);
}

#if ACCELKIT_ZLIB
/* zlib's reading of data as gzip members, one after another to its end, into want:
 * 1 when that is the whole of it, else 0. */
static int
zlib_gunzip(const uint8_t *data, size_t size)
{
	z_stream s;
	size_t at = 0, cap = 1 << 16;
	want = realloc(want, cap);
	want_len = 0;
	while (at < size) {
		memset(&s, 0, sizeof s);
		if (size - at < 3 || unz_detect(data + at, 3) != UNZ_GZIP ||
		    inflateInit2(&s, 15 + 16) != Z_OK)
			return 0;
		s.next_in = (unsigned char *)data + at;
		s.avail_in = (unsigned)(size - at);
		int r;
		do {
			if (want_len == cap)
				want = realloc(want, cap *= 2);
			s.next_out = want + want_len;
			s.avail_out = (unsigned)(cap - want_len);
			r = inflate(&s, Z_NO_FLUSH);
			want_len = cap - s.avail_out;
		} while (r == Z_OK || (r == Z_BUF_ERROR && s.avail_out == 0));
		at = size - s.avail_in;
		inflateEnd(&s);
		if (r != Z_STREAM_END || want_len > (size_t)64 << 20)
			return 0;
	}
	return size > 0;
}
#else
static int
zlib_gunzip(const uint8_t *data, size_t size)
{
	(void)data, (void)size;
	return 0;	/* a build without zlib: no reference */
}
#endif

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (unz_detect(data, size < UNZ_MAGIC_MAX ? size : UNZ_MAGIC_MAX) <= UNZ_NONE)
		return -1;	/* plain: the other targets' */
	int whole = zlib_gunzip(data, size);
	fuzz_input("unz", data, size, read_all, FUZZ_CHUNKS | FUZZ_STREAM);
	if (whole) {
		/* a byte-order mark at the start is the readers' to skip */
		size_t skip = want_len >= 3 && memcmp(want, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
		FUZZ_ASSERT("unz", fuzz_ended[0] == FUZZ_RETURNED && fuzz_ended[1] == FUZZ_RETURNED);
		FUZZ_ASSERT("unz", got_len == want_len - skip &&
		    got_hash == fnv(0xcbf29ce484222325ull, want + skip, want_len - skip));
	}
	return 0;
}
