/* chunks.c: the chunked record reader (see chunks.h), on devwork.h's -j threads
 * (dw_open_threads): making a unit reads a chunk (one thread at a time, in order),
 * processing it parses it. */
#include "chunks.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "devwork.h"

#define CHUNK_DEFAULT ((size_t)1 << 20)

struct chunks {
	input *in;
	const struct chunk_ops *ops;
	void *ctx;
	dw *o;
	struct chunk *slot;
	void **slotp;
	int nslots;
	size_t target;		/* bytes a chunk starts with */
	/* the reading side (the engine's make: one thread at a time) */
	char *tail;		/* bytes after the last cut: the next chunk's start */
	size_t tail_len, tail_cap;
	int tail_hint;
	int eof;
	/* an uncompressed regular file cut at lines: make only finds where the chunk
	 * from pos ends, and the thread that parses it reads it */
	int pread;
	uint64_t pos, end;
	uint64_t over;		/* what make's buffer would hold past the last cut */
	char *win;		/* where the line end is looked for */
	/* the caller's side */
	uint64_t lines;		/* lines up to the end of the last chunk handed out */
	chunks *prev, *next;	/* the engines open (chunks_close_all) */
};

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static chunks *open_list;

size_t
chunk_cut_lines(const char *p, size_t len, int *hint)
{
	(void)hint;
	const char *nl = memrchr(p, '\n', len);
	return nl != NULL ? (size_t)(nl - p) + 1 : 0;
}

size_t
chunk_cut_fasta(const char *p, size_t len, int *hint)
{
	(void)hint;
	/* The last '>' that starts a line, other than the chunk's own first one. */
	for (size_t i = len; i > 1;) {
		const char *g = memrchr(p + 1, '>', i - 1);
		if (g == NULL)
			return 0;
		i = (size_t)(g - p);
		if (p[i - 1] == '\n')
			return i;
	}
	return 0;
}

size_t
chunk_cut_fastq(const char *p, size_t len, int *hint)
{
	size_t pos = 0, cut = 0;

	(void)hint;
	/* Records as the reader walks them: blank lines (a lone '\r' is blank), then
	 * four lines whatever they hold. A malformed record is cut like any other, so
	 * the parser meets it whole and reports its first fault. */
	for (;;) {
		const char *nl;
		for (;;) {
			nl = memchr(p + pos, '\n', len - pos);
			if (nl == NULL)
				return cut;
			size_t l = (size_t)(nl - (p + pos));
			if (l > 1 || (l == 1 && p[pos] != '\r'))
				break;
			pos += l + 1;
		}
		size_t q = (size_t)(nl - p) + 1;
		for (int i = 0; i < 3; i++) {
			nl = memchr(p + q, '\n', len - q);
			if (nl == NULL)
				return cut;
			q = (size_t)(nl - p) + 1;
		}
		pos = cut = q;
	}
}

static void
chunk_reset(struct chunk *c, uint64_t k)
{
	c->index = k;
	c->lines = UINT64_MAX;
	c->err_line = 0;
	c->err[0] = '\0';
}

#define WIN ((size_t)1 << 16)

/* The offset just past the last '\n' in [lo, hi), else 0: read backwards in windows of
 * 4 KiB, then larger ones for a long line. */
static uint64_t
last_line_end(chunks *e, uint64_t lo, uint64_t hi)
{
	for (size_t w = 4096; hi > lo; w = WIN) {
		size_t n = (size_t)MIN((uint64_t)w, hi - lo);
		n = in_pread(e->in, e->win, n, hi - n);
		const char *nl = memrchr(e->win, '\n', n);
		if (nl != NULL)
			return hi - n + (uint64_t)(nl - e->win) + 1;
		if (n == 0)
			return 0;	/* the file shrank */
		hi -= n;
	}
	return 0;
}

/* make for a file read at any offset: the chunk's place, which its thread reads. The
 * cuts are the ones make finds reading the same file (so chunks hold the same lines):
 * the last line end within the bytes its buffer would hold, a chunk's size or twice
 * the bytes left over from the last cut, doubled while no line ends in them. */
static int
make_at(chunks *e, struct chunk *c, uint64_t k)
{
	uint64_t start = e->pos, cut = 0, cap = MAX(e->target, 2 * e->over), seen = start;

	if (start >= e->end)
		return DW_NONE;
	for (;; cap *= 2) {
		uint64_t wend = start + cap;
		if (wend >= e->end) {
			cut = e->end;
			e->over = 0;
			break;
		}
		if ((cut = last_line_end(e, seen, wend)) != 0) {
			e->over = wend - cut;
			break;
		}
		seen = wend;
	}
	c->at = start;
	c->len = (size_t)(cut - start);
	c->hint = 0;
	c->read_err = NULL;
	chunk_reset(c, k);
	e->pos = cut;
	if (cut < e->end)
		return DW_MORE;
	in_skip_to(e->in, cut);
	return DW_LAST;
}

/* The bytes of a chunk from make_at, on its thread. */
static void
read_at(chunks *e, struct chunk *c)
{
	size_t want = MAX(e->target, c->len);
	if (c->data == NULL || c->cap < c->len || c->cap > 8 * want) {
		free(c->data);
		c->cap = want;
		c->data = xmalloc(c->cap + 1 + CHUNK_PAD);
	}
	c->len = in_pread(e->in, c->data, c->len, c->at);	/* short: the file shrank */
	memset(c->data + c->len, 0, 1 + CHUNK_PAD);
}

/* The engine's make: the next chunk, from the tail of the last one and fresh input. */
static int
make(void *ctx, void *slot, uint64_t k)
{
	chunks *e = ctx;
	struct chunk *c = slot;
	size_t want = MAX(e->target, 2 * e->tail_len), len, cut;

	if (e->pread)
		return make_at(e, c, k);
	if (e->eof && e->tail_len == 0)
		return DW_NONE;
	if (c->data == NULL || c->cap < want || c->cap > 8 * want) {
		/* a chunk that grew for a long record shrinks back when reused */
		free(c->data);
		c->cap = want;
		c->data = xmalloc(c->cap + 1 + CHUNK_PAD);
	}
	if (e->tail_len > 0)
		memcpy(c->data, e->tail, e->tail_len);
	len = e->tail_len;
	c->hint = e->tail_hint;
	e->tail_len = 0;
	for (;;) {
		if (!e->eof) {
			if (len == c->cap) {
				/* a record longer than the chunk: the chunk grows */
				c->cap = mul_size(c->cap, 2, "chunk");
				c->data = xrealloc(c->data, c->cap + 1 + CHUNK_PAD);
			}
			size_t n = in_read_avail(e->in, c->data + len, c->cap - len);
			if (n == 0 || in_remaining(e->in) == 0)
				e->eof = 1;
			len += n;
		}
		if (e->eof) {
			cut = len;
			break;
		}
		int hint = 0;
		cut = e->ops->cut != NULL ? e->ops->cut(c->data, len, &hint) :
		    e->ops->cut_ctx(e->ctx, c->data, len, &hint);
		if (cut > 0) {
			e->tail_len = len - cut;
			if (e->tail == NULL || e->tail_len > e->tail_cap) {
				e->tail_cap = MAX(MAX(e->tail_len, 2 * e->tail_cap), 64);
				free(e->tail);
				e->tail = xmalloc(e->tail_cap);
			}
			memcpy(e->tail, c->data + cut, e->tail_len);
			e->tail_hint = hint;
			break;
		}
	}
	/* corrupt compressed input ends it, and the caller's thread says so (chunks_next) */
	const char *read_err = e->eof ? in_error(e->in) : NULL;
	if (cut == 0 && read_err == NULL)
		return DW_NONE;
	c->read_err = read_err;
	memset(c->data + cut, 0, 1 + CHUNK_PAD);
	c->len = cut;
	chunk_reset(c, k);
	return e->eof && e->tail_len == 0 ? DW_LAST : DW_MORE;
}

/* The engine's process: parse, and count the lines when the parser did not or stopped
 * at an error (the next chunk's lines are numbered from them, even if the caller parses
 * this one again). A parse error never fails the unit: it waits in the chunk for the
 * caller, which meets it in input order. */
static int
process(void *ctx, void *state, int w, void *slot, char *err)
{
	chunks *e = ctx;
	struct chunk *c = slot;

	if (e->pread)
		read_at(e, c);
	e->ops->parse(e->ctx, c);
	if (c->err_line != 0 || c->lines == UINT64_MAX) {
		uint64_t n = 0;
		for (const char *p = c->data, *end = p + c->len;
		    (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
			n++;
		c->lines = n + (c->len > 0 && c->data[c->len - 1] != '\n');
	}
	(void)state;
	(void)w;
	(void)err;
	return 0;
}

static const struct dw_ops chunk_ops = {NULL, make, process, NULL, NULL};

static size_t
chunk_bytes(void)
{
	const char *v = getenv("ACCELKIT_CHUNK_BYTES");
	return v != NULL && *v != '\0' ? MAX(cli_size("ACCELKIT_CHUNK_BYTES", v), 1) :
	    CHUNK_DEFAULT;
}

int
chunks_slots(void)
{
	int nthreads = MAX(cli_threads(), 1);
	return nthreads > 1 ? dw_slots(nthreads) : 1;
}

chunks *
chunks_open(input *in, const struct chunk_ops *ops, void *ctx)
{
	chunks *e = xcalloc(1, sizeof *e);
	int nthreads = MAX(cli_threads(), 1);

	e->in = in;
	e->ops = ops;
	e->ctx = ctx;
	e->target = chunk_bytes();
	e->lines = in_lineno(in);
	in_defer_errors(in, 1);
	int64_t end = in_pread_end(in);
	if (end >= 0 && ops->cut == chunk_cut_lines) {
		e->pread = 1;
		e->pos = in_tell(in);
		e->end = (uint64_t)end;
		e->win = xmalloc(WIN);
	}
	e->nslots = chunks_slots();
	e->slot = xcalloc((size_t)e->nslots, sizeof *e->slot);
	e->slotp = xcalloc((size_t)e->nslots, sizeof *e->slotp);
	for (int i = 0; i < e->nslots; i++)
		e->slotp[i] = &e->slot[i];
	e->o = dw_open_threads(&chunk_ops, e, e->slotp, e->nslots, nthreads);
	pthread_mutex_lock(&open_mu);
	if ((e->next = open_list) != NULL)
		open_list->prev = e;
	open_list = e;
	pthread_mutex_unlock(&open_mu);
	return e;
}

struct chunk *
chunks_next(chunks *e)
{
	struct chunk *c = dw_next(e->o, NULL);
	if (c == NULL)
		return NULL;
	if (c->read_err != NULL)
		die("%s", c->read_err);
	c->line0 = e->lines;
	e->lines += c->lines;
	return c;
}

int
chunks_take(chunks *e, struct chunk **cur, size_t *next,
    size_t (*count)(const struct chunk *c))
{
	while (*cur == NULL || *next == count(*cur)) {
		if (*cur != NULL && (*cur)->err_line != 0)
			chunk_die(e, *cur);
		if ((*cur = chunks_next(e)) == NULL)
			return 0;
		*next = 0;
	}
	return 1;
}

void
chunks_close(chunks *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&open_mu);
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		open_list = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	pthread_mutex_unlock(&open_mu);
	dw_close(e->o);
	if (e->pread && e->pos < e->end)
		in_skip_to(e->in, e->pos);
	in_defer_errors(e->in, 0);
	in_set_lineno(e->in, e->lines);
	for (int i = 0; i < e->nslots; i++) {
		if (e->ops->free_res != NULL && e->slot[i].res != NULL)
			e->ops->free_res(e->slot[i].res);
		free(e->slot[i].data);
	}
	free(e->slot);
	free(e->slotp);
	free(e->tail);
	free(e->win);
	free(e);
}

void
chunks_close_all(void)
{
	for (;;) {
		pthread_mutex_lock(&open_mu);
		chunks *e = open_list;
		pthread_mutex_unlock(&open_mu);
		if (e == NULL)
			return;
		chunks_close(e);
	}
}

uint64_t
chunks_lines(const chunks *e)
{
	return e->lines;
}

const char *
chunks_name(const chunks *e)
{
	return in_name(e->in);
}

void
chunk_fail(struct chunk *c, uint64_t line, const char *fmt, ...)
{
	va_list ap;
	if (c->err_line != 0)
		return;		/* the first error stands */
	c->err_line = line;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
}

void
chunk_die(const chunks *e, const struct chunk *c)
{
	die_at(in_name(e->in), c->line0 + c->err_line, "%s", c->err);
}
