/* input.c: buffered input (see input.h). */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decompress.h"
#include "err.h"
#include "ranks.h"

/* One read(2) asks for at least this much. The fuzz build sets a small one (Makefile:
 * FUZZ_CPP), so that small inputs cross the buffer's refills. */
#ifndef IN_CHUNK
#define IN_CHUNK ((size_t)1 << 20)
#endif

struct input {
	const char *name;
	int fd;
	int eof;
	unsigned char *buf;
	size_t cap, start, end;		/* unread bytes are buf[start..end) */
	uint64_t off;			/* input offset of buf[start] */
	uint64_t line;
	int64_t size;			/* regular file size, else -1 */
	uint64_t fpos, limit;		/* bytes read(2) so far; in_range's end */
	uint64_t base;			/* regular file: its offset where the input began */
	int64_t total;			/* regular file: its bytes from there, else -1 */
	void *reader;			/* in_set_reader */
	void (*reader_free)(void *);
	int probe;			/* the first bytes not yet looked at (a stream) */
	int zkind;			/* a compressed regular file's format, found by in_open */
	unz *z;				/* compressed: the bytes come from here */
	int defer;			/* in_defer_errors */
};

static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};

/* A regular file's first bytes, read where it begins without moving it: a compressed
 * one is read as a stream (its size unknown), and a byte-order mark is left out of
 * everything, ranges of lines included. */
static void
open_regular(input *in)
{
	unsigned char h[UNZ_MAGIC_MAX];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof h && (r = pread(in->fd, h + n, sizeof h - n, (off_t)(in->base + n))) != 0) {
		if (r < 0 && errno != EINTR)
			die_errno(in->name);
		n += r > 0 ? (size_t)r : 0;
	}
	int kind = unz_detect(h, n);
	if (kind > UNZ_NONE) {
		in->zkind = kind;
		in->probe = 1;
		in->size = in->total = -1;
	} else if (n >= 3 && memcmp(h, bom, 3) == 0) {
		in->base += 3;
		in->size -= 3;
		in->total -= 3;
		if (lseek(in->fd, (off_t)in->base, SEEK_SET) < 0)
			die_errno(in->name);
	}
}

input *
in_open(const char *path)
{
	input *in = xcalloc(1, sizeof *in);
	struct stat st;

	if (path == NULL || strcmp(path, "-") == 0) {
		in->name = "(standard input)";
		in->fd = 0;
	} else {
		in->name = path;
		if ((in->fd = open(path, O_RDONLY)) < 0)
			die_errno(path);
	}
	in->size = -1;
	in->limit = UINT64_MAX;
	in->total = -1;
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			die("%s: is a directory", in->name);
		if (S_ISREG(st.st_mode)) {
			off_t pos = lseek(in->fd, 0, SEEK_CUR);
			in->size = (int64_t)st.st_size - (pos > 0 ? (int64_t)pos : 0);
			in->base = pos > 0 ? (uint64_t)pos : 0;
			in->total = in->size;
		}
	}
	in->cap = 4 * IN_CHUNK;
	in->buf = xmalloc(in->cap + 1);
	if (in->total >= 0)
		open_regular(in);
	else
		in->probe = 1;
	return in;
}

void
in_close(input *in)
{
	if (in == NULL)
		return;
	if (in->reader_free != NULL)
		in->reader_free(in->reader);
	unz_close(in->z);
	if (in->fd > 0)
		close(in->fd);
	free(in->buf);
	free(in);
}

const char *
in_name(const input *in)
{
	return in->name;
}

/* How much of n bytes a read(2) may ask for: in_range's end is the input's end. */
static size_t
allowed(const input *in, size_t n)
{
	return in->limit - in->fpos < n ? (size_t)(in->limit - in->fpos) : n;
}

/* Up to n bytes from the file or pipe, or decompressed: read(2)'s result. */
static ssize_t
src_read(input *in, void *dst, size_t n)
{
	if (in->z == NULL)
		return read(in->fd, dst, allowed(in, n));
	size_t got = unz_read(in->z, dst, MIN(n, (size_t)SSIZE_MAX));
	if (got == 0 && unz_error(in->z) != NULL && !in->defer)
		die("%s", unz_error(in->z));
	return (ssize_t)got;
}

static void probe(input *in);

/* Reads more; returns 0 at end of input. Keeps room for a NUL after the data. */
static size_t
fill(input *in)
{
	if (in->probe) {
		probe(in);
		if (in->end > in->start)
			return in->end - in->start;
	}
	if (in->eof)
		return 0;
	if (in->start > 0 && (in->cap - in->end < IN_CHUNK || in->start == in->end)) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->cap - in->end < IN_CHUNK) {
		in->cap = in->cap * 2 > in->end + IN_CHUNK ? in->cap * 2 : in->end + IN_CHUNK;
		in->buf = xrealloc(in->buf, in->cap + 1);
	}
	for (;;) {
		ssize_t n = src_read(in, in->buf + in->end, in->cap - in->end);
		if (n > 0) {
			in->end += (size_t)n;
			in->fpos += (uint64_t)n;
			return (size_t)n;
		}
		if (n == 0) {
			in->eof = 1;
			return 0;
		}
		if (errno != EINTR)
			die_errno(in->name);
	}
}

/* A stream's first bytes (and a compressed regular file's): its compression, by magic
 * bytes, and a byte-order mark after it, skipped. Called by the first read. */
static void
probe(input *in)
{
	in->probe = 0;
	int kind = in->zkind;
	if (kind == UNZ_NONE) {
		while (unz_detect(in->buf + in->start, in->end - in->start) < 0 && fill(in) > 0)
			;
		kind = unz_detect(in->buf + in->start, in->end - in->start);
	}
	if (kind > UNZ_NONE) {
		in->z = unz_open(kind, in->fd, in->buf + in->start, in->end - in->start,
		    in->name);
		in->start = in->end = 0;
		in->eof = 0;
	}
	while (in->end - in->start < sizeof bom && fill(in) > 0)
		;
	if (in->end - in->start >= sizeof bom && memcmp(in->buf + in->start, bom, 3) == 0)
		in->start += sizeof bom;
}

const unsigned char *
in_peek(input *in, size_t n, size_t *avail)
{
	while (in->end - in->start < n && fill(in) > 0)
		;
	*avail = MIN(n, in->end - in->start);
	return in->buf + in->start;
}

char *
in_getline(input *in, size_t *len)
{
	size_t scanned = 0;
	unsigned char *nl;

	for (;;) {
		nl = memchr(in->buf + in->start + scanned, '\n', in->end - in->start - scanned);
		if (nl != NULL)
			break;
		scanned = in->end - in->start;
		if (fill(in) == 0) {
			if (in->start == in->end)
				return NULL;
			nl = in->buf + in->end;	/* last line without '\n': room was kept */
			break;
		}
	}
	char *line = (char *)in->buf + in->start;
	size_t n = (size_t)(nl - (in->buf + in->start));
	size_t used = n + (nl < in->buf + in->end);
	in->start += used;
	in->off += used;
	in->line++;
	if (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	if (len != NULL)
		*len = n;
	return line;
}

uint64_t
in_lineno(const input *in)
{
	return in->line;
}

void
in_set_lineno(input *in, uint64_t line)
{
	in->line = line;
}

void
in_set_reader(input *in, void *state, void (*fn)(void *))
{
	in->reader = state;
	in->reader_free = fn;
}

void *
in_reader(const input *in)
{
	return in->reader;
}

const unsigned char *
in_take(input *in, size_t max, size_t *got)
{
	if (in->start == in->end)
		fill(in);
	size_t n = MIN(max, in->end - in->start);
	const unsigned char *p = in->buf + in->start;
	in->start += n;
	in->off += n;
	*got = n;
	return p;
}

/* Whether a read(2) would return at once (data or end of input). */
static int
ready(const input *in)
{
	struct pollfd p = {.fd = in->fd, .events = POLLIN};
	return in->size >= 0 || (in->z != NULL && unz_ready(in->z)) || poll(&p, 1, 0) > 0;
}

/* pread(2) of up to n bytes at off, retried on EINTR; dies on an error. */
static size_t
pread_some(const input *in, void *buf, size_t n, uint64_t off)
{
	for (;;) {
		ssize_t r = pread(in->fd, buf, n, (off_t)(in->base + off));
		if (r >= 0)
			return (size_t)r;
		if (errno != EINTR)
			die_errno(in->name);
	}
}

/* A read this big from a regular file goes in pieces on the -j threads: one read(2)
 * into freshly allocated memory moves about 2 GB/s (the copy out of the page cache and
 * the first touch of each destination page, on one core), and a 1 GB NPY file is read
 * whole before anything else can start. */
#define PAR_READ_MIN ((size_t)64 << 20)
#define PAR_READ_PIECE ((size_t)8 << 20)

/* Up to n bytes at the input's file position into d by preads on the threads; the
 * position moves past them. Fewer only at the end of the file (or of in_range). */
static size_t
par_read(input *in, unsigned char *d, size_t n)
{
	size_t want = allowed(in, n), np = CEIL_DIV(want, PAR_READ_PIECE);
	size_t *got = xcalloc(MAX(np, 1), sizeof *got);
	uint64_t at = in->fpos;

	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t p = 0; p < np; p++) {
		size_t o = p * PAR_READ_PIECE, len = MIN(PAR_READ_PIECE, want - o), k = 0, r;
		while (k < len && (r = pread_some(in, d + o + k, len - k, at + o + k)) > 0)
			k += r;
		got[p] = k;
	}
	/* the bytes up to the first short piece: the file ended there */
	size_t total = 0;
	for (size_t p = 0; p < np; p++) {
		total += got[p];
		if (got[p] < MIN(PAR_READ_PIECE, want - p * PAR_READ_PIECE))
			break;
	}
	free(got);
	in->fpos += total;
	if (lseek(in->fd, (off_t)(in->base + in->fpos), SEEK_SET) < 0)
		die_errno(in->name);
	if (total < want)
		in->eof = 1;
	return total;
}

/* Buffered bytes first, then straight into the caller's memory: up to n bytes, all of
 * them unless at the end of input, or (!all) only while more is ready at once. */
static size_t
read_into(input *in, void *dst, size_t n, int all)
{
	unsigned char *d = dst;
	if (in->probe)
		probe(in);
	size_t done = MIN(n, in->end - in->start);

	memcpy(d, in->buf + in->start, done);
	in->start += done;
	if (all && in->total >= 0 && !in->eof && n - done >= PAR_READ_MIN)
		done += par_read(in, d + done, n - done);
	while (done < n && !in->eof && (all || done == 0 || ready(in))) {
		ssize_t r = src_read(in, d + done, n - done);
		if (r > 0) {
			done += (size_t)r;
			in->fpos += (uint64_t)r;
		} else if (r == 0) {
			in->eof = 1;
		} else if (errno != EINTR) {
			die_errno(in->name);
		}
	}
	in->off += done;
	return done;
}

size_t
in_read(input *in, void *dst, size_t n)
{
	return read_into(in, dst, n, 1);
}

size_t
in_read_avail(input *in, void *dst, size_t n)
{
	return read_into(in, dst, n, 0);
}

uint64_t
in_tell(const input *in)
{
	return in->off;
}

int64_t
in_remaining(const input *in)
{
	if (in->size < 0)
		return -1;
	return in->size - (int64_t)in->off;
}

char *
in_slurp(input *in, size_t *len)
{
	int64_t rem = in_remaining(in);
	size_t cap = rem > 0 ? (size_t)rem + 1 : 4 * IN_CHUNK;
	char *out = xmalloc(cap + 1);
	size_t n = 0;

	for (;;) {
		if (n == cap) {
			cap *= 2;
			out = xrealloc(out, cap + 1);
		}
		size_t got = in_read(in, out + n, cap - n);
		n += got;
		if (got == 0 || in->eof)
			break;
	}
	out[n] = '\0';
	if (len != NULL)
		*len = n;
	return out;
}

/* Whether the regular file at path (NULL or "-": standard input) is compressed; its
 * size is then not the input's. */
static int
compressed(const char *path)
{
	int std = path == NULL || strcmp(path, "-") == 0;
	int fd = std ? 0 : open(path, O_RDONLY);
	unsigned char h[UNZ_MAGIC_MAX];
	off_t at = std ? lseek(0, 0, SEEK_CUR) : 0;
	ssize_t n = fd < 0 || at < 0 ? -1 : pread(fd, h, sizeof h, at);
	if (fd > 0)
		close(fd);
	return n > 0 && unz_detect(h, (size_t)n) > UNZ_NONE;
}

int64_t
in_regular_bytes(const char *const *paths, int n)
{
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		const char *p = paths != NULL ? paths[i] : NULL;
		int ok = p == NULL || strcmp(p, "-") == 0 ? fstat(0, &st) == 0 : stat(p, &st) == 0;
		if (!ok || !S_ISREG(st.st_mode) || compressed(p))
			return -1;
		total += st.st_size;
	}
	return total;
}

int64_t
in_pread_end(const input *in)
{
	return in->total >= 0 && in->z == NULL && !in->probe && in->size >= 0 ? in->size : -1;
}

size_t
in_pread(const input *in, void *dst, size_t n, uint64_t off)
{
	uint64_t end = (uint64_t)in->size;
	size_t done = 0, r;

	if (off >= end)
		return 0;
	n = (size_t)MIN((uint64_t)n, end - off);
	while (done < n && (r = pread_some(in, (char *)dst + done, n - done, off + done)) > 0)
		done += r;
	return done;
}

void
in_skip_to(input *in, uint64_t off)
{
	if (lseek(in->fd, (off_t)(in->base + off), SEEK_SET) < 0)
		die_errno(in->name);
	in->start = in->end = 0;
	in->off = in->fpos = off;
	in->eof = in->size >= 0 && off >= (uint64_t)in->size;
}

void
in_range(input *in, uint64_t start, uint64_t end)
{
	if (in->total < 0 || end < start || end > (uint64_t)in->total)
		die("%s: a range of bytes needs a regular file", in->name);
	if (lseek(in->fd, (off_t)(in->base + start), SEEK_SET) < 0)
		die_errno(in->name);
	in->start = in->end = 0;
	in->eof = start == end;
	in->off = in->fpos = start;
	in->limit = end;
	in->size = (int64_t)end;
}


uint64_t
in_line_start(const input *in, uint64_t off)
{
	static const size_t blk = (size_t)1 << 16;
	char *buf = xmalloc(blk);
	uint64_t at, end = (uint64_t)in->total;
	if (off == 0 || in->total < 0 || off >= end) {
		free(buf);
		return in->total < 0 ? off : MIN(off, end);
	}
	for (at = off - 1; at < end;) {
		size_t got = pread_some(in, buf, (size_t)MIN((uint64_t)blk, end - at), at);
		if (got == 0)
			break;
		const char *nl = memchr(buf, '\n', got);
		if (nl != NULL) {
			uint64_t start = at + (uint64_t)(nl - buf) + 1;
			free(buf);
			return start;
		}
		at += got;
	}
	free(buf);
	return end;
}

uint64_t
in_count_lines(const input *in, uint64_t start, uint64_t end)
{
	static const size_t blk = (size_t)1 << 20;
	char *buf = xmalloc(blk);
	uint64_t lines = 0;
	for (uint64_t at = start; at < end;) {
		size_t got = pread_some(in, buf, (size_t)MIN((uint64_t)blk, end - at), at);
		if (got == 0)
			break;
		for (const char *p = buf, *e = buf + got; (p = memchr(p, '\n', (size_t)(e - p)));
		    p++)
			lines++;
		at += got;
	}
	free(buf);
	return lines;
}

void
in_share_lines(input *in)
{
	if (ranks_size() == 1)
		return;
	uint64_t from = in_tell(in), len = (uint64_t)in_file_size(in) - from;
	uint64_t r = (uint64_t)ranks_rank(), R = (uint64_t)ranks_size();
	uint64_t a = in_line_start(in, from + (uint64_t)((unsigned __int128)len * r / R));
	uint64_t b = in_line_start(in, from + (uint64_t)((unsigned __int128)len * (r + 1) / R));
	uint64_t before = ranks_exscan_u64(in_count_lines(in, a, b));
	uint64_t line = in_lineno(in);
	in_range(in, a, b);
	in_set_lineno(in, line + before);
}

int64_t
in_file_size(const input *in)
{
	return in->total;
}

void
in_need_shares(const input *in, const char *what)
{
	if (in->total >= 0)
		return;
	if (in->zkind != UNZ_NONE || in->z != NULL)
		die("%s: under mpirun each rank reads its share of a FILE; a compressed file "
		    "cannot be shared (decompress it first)", what);
	die("%s: under mpirun each rank reads its share of a FILE; standard input and "
	    "pipes cannot be shared (write it to a file first)", what);
}

void
in_defer_errors(input *in, int on)
{
	in->defer = on;
}

const char *
in_error(const input *in)
{
	return in->z != NULL ? unz_error(in->z) : NULL;
}
