/* seq.c: sequence readers (see seq.h). */
#include "seq.h"

#include <stdlib.h>
#include <string.h>

#include "chunks.h"
#include "err.h"

/* A record of a chunk: its bytes (joined in place for FASTA) and its first line. */
struct rec {
	size_t off, len;
	uint64_t line;
};

struct recs {
	struct rec *r;
	size_t n, cap;
};

struct seqfile {
	input *in;
	enum seq_format fmt;
	chunks *ch;
	struct chunk *cur;		/* the chunk records come from */
	size_t next;			/* its next record */
	uint64_t lineno;		/* where the last record began */
	uint64_t count;
};

static struct recs *
recs_of(struct chunk *c)
{
	struct recs *r = c->res;
	if (r == NULL)
		r = c->res = xcalloc(1, sizeof *r);
	r->n = 0;
	return r;
}

static void
recs_add(struct recs *r, size_t off, size_t len, uint64_t line)
{
	if (r->n == r->cap) {
		r->cap = MAX(256, 2 * r->cap);
		r->r = xreallocarray(r->r, r->cap, sizeof *r->r);
	}
	r->r[r->n++] = (struct rec){off, len, line};
}

static size_t
recs_count(const struct chunk *c)
{
	return ((const struct recs *)c->res)->n;
}

static void
recs_free(void *res)
{
	struct recs *r = res;
	free(r->r);
	free(r);
}

/* Plain lines: each one a record. */
static void
parse_lines(void *ctx, struct chunk *c)
{
	struct recs *r = recs_of(c);
	struct chunk_lines it;
	const char *s;
	size_t len;

	(void)ctx;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL)
		recs_add(r, (size_t)(s - c->data), len, it.n);
	c->lines = it.n;
}

/* FASTA: a header, then lines joined in place into the record's sequence. A chunk
 * starts at a header (the cut rule's doing), except the input's first, which may start
 * with blank lines, or with data: the error. */
static void
parse_fasta(void *ctx, struct chunk *c)
{
	struct recs *r = recs_of(c);
	struct chunk_lines it;
	const char *s;
	size_t len, off = 0, w = 0;
	uint64_t line = 0;

	(void)ctx;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL) {
		if (line == 0 && len == 0)
			continue;
		if (len > 0 && s[0] == '>') {
			if (line != 0)
				recs_add(r, off, w - off, line);
			line = it.n;
			off = w = (size_t)(it.p - c->data);
			continue;
		}
		if (line == 0)
			return chunk_fail(c, it.n, "sequence data before the first '>' header");
		memmove(c->data + w, s, len);
		w += len;
	}
	if (line != 0)
		recs_add(r, off, w - off, line);
	c->lines = it.n;
}

/* FASTQ: blank lines, then '@' name, sequence, '+', quality of the sequence's length. */
static void
parse_fastq(void *ctx, struct chunk *c)
{
	struct recs *r = recs_of(c);
	struct chunk_lines it;
	const char *s, *seq;
	size_t len, n;

	(void)ctx;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL) {
		if (len == 0)
			continue;
		uint64_t line = it.n;
		if (s[0] != '@')
			return chunk_fail(c, line, "expected a FASTQ record starting with '@'");
		if ((seq = chunk_line(&it, &n)) == NULL)
			return chunk_fail(c, line, "FASTQ record ends before its sequence line");
		if ((s = chunk_line(&it, &len)) == NULL)
			return chunk_fail(c, line, "FASTQ record ends before its '+' line");
		if (len == 0 || s[0] != '+')
			return chunk_fail(c, it.n, "expected the FASTQ '+' line");
		if ((s = chunk_line(&it, &len)) == NULL)
			return chunk_fail(c, line, "FASTQ record ends before its quality line");
		if (len != n)
			return chunk_fail(c, it.n,
			    "quality line has %zu bytes but the sequence has %zu", len, n);
		recs_add(r, (size_t)(seq - c->data), n, line);
	}
	c->lines = it.n;
}

static const struct chunk_ops seq_ops[] = {
	[SEQ_LINES] = {.cut = chunk_cut_lines, .parse = parse_lines, .free_res = recs_free},
	[SEQ_FASTA] = {.cut = chunk_cut_fasta, .parse = parse_fasta, .free_res = recs_free},
	[SEQ_FASTQ] = {.cut = chunk_cut_fastq, .parse = parse_fastq, .free_res = recs_free},
};

/* The first byte that is not a line end decides the format. */
static enum seq_format
sniff(input *in)
{
	for (size_t want = 4096;; want *= 2) {
		size_t avail;
		const unsigned char *p = in_peek(in, want, &avail);
		for (size_t i = 0; i < avail; i++) {
			if (p[i] == '>')
				return SEQ_FASTA;
			if (p[i] == '@')
				return SEQ_FASTQ;
			if (p[i] != '\n' && p[i] != '\r')
				return SEQ_LINES;
		}
		if (avail < want)
			return SEQ_LINES;
	}
}

seqfile *
seq_open(const char *path)
{
	seqfile *f = xcalloc(1, sizeof *f);
	f->in = in_open(path);
	f->fmt = sniff(f->in);
	f->ch = chunks_open(f->in, &seq_ops[f->fmt], NULL);
	return f;
}

void
seq_close(seqfile *f)
{
	if (f == NULL)
		return;
	chunks_close(f->ch);
	in_close(f->in);
	free(f);
}

enum seq_format
seq_format(const seqfile *f)
{
	return f->fmt;
}

const char *
seq_name(const seqfile *f)
{
	return in_name(f->in);
}

uint64_t
seq_lineno(const seqfile *f)
{
	return f->lineno;
}

uint64_t
seq_count(const seqfile *f)
{
	return f->count;
}

int
seq_next(seqfile *f, const unsigned char **s, size_t *len)
{
	/* A chunk's error comes once the records before it are handed out. */
	if (!chunks_take(f->ch, &f->cur, &f->next, recs_count))
		return 0;
	const struct rec *x = &((const struct recs *)f->cur->res)->r[f->next++];
	*s = (const unsigned char *)f->cur->data + x->off;
	*len = x->len;
	f->lineno = f->cur->line0 + x->line;
	f->count++;
	return 1;
}

/* ---- A<TAB>B lines ---- */

struct pair {
	size_t a, alen, b, blen;
	uint64_t line;
};

struct pairs_res {
	struct pair *p;
	size_t n, cap;
};

static void
parse_pairs(void *ctx, struct chunk *c)
{
	struct pairs_res *r = c->res;
	struct chunk_lines it;
	const char *s;
	size_t n;

	(void)ctx;
	if (r == NULL)
		r = c->res = xcalloc(1, sizeof *r);
	r->n = 0;
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &n)) != NULL) {
		const char *tab = memchr(s, '\t', n);
		if (tab == NULL)
			return chunk_fail(c, it.n, "no TAB in the line (expected A<TAB>B)");
		size_t k = (size_t)(tab - s);
		if (memchr(tab + 1, '\t', n - k - 1) != NULL)
			return chunk_fail(c, it.n,
			    "more than one TAB in the line (expected A<TAB>B)");
		if (r->n == r->cap) {
			r->cap = MAX(256, 2 * r->cap);
			r->p = xreallocarray(r->p, r->cap, sizeof *r->p);
		}
		size_t off = (size_t)(s - c->data);
		r->p[r->n++] = (struct pair){off, k, off + k + 1, n - k - 1, it.n};
	}
	c->lines = it.n;
}

static size_t
pairs_count(const struct chunk *c)
{
	return ((const struct pairs_res *)c->res)->n;
}

static void
pairs_free(void *res)
{
	struct pairs_res *r = res;
	free(r->p);
	free(r);
}

static const struct chunk_ops pairs_ops = {.cut = chunk_cut_lines,
    .parse = parse_pairs, .free_res = pairs_free};

/* seq_pair_next's state, kept with the input (in_set_reader). */
struct pairs {
	chunks *ch;
	struct chunk *cur;
	size_t next;
};

static void
pairs_close(void *state)
{
	struct pairs *p = state;
	chunks_close(p->ch);
	free(p);
}

int
seq_pair_next(input *in, const unsigned char **a, size_t *alen,
    const unsigned char **b, size_t *blen)
{
	struct pairs *p = in_reader(in);

	if (p == NULL) {
		p = xcalloc(1, sizeof *p);
		p->ch = chunks_open(in, &pairs_ops, NULL);
		in_set_reader(in, p, pairs_close);
	}
	/* the chunk engine only when this chunk's pairs are all taken */
	if ((p->cur == NULL || p->next == pairs_count(p->cur)) &&
	    !chunks_take(p->ch, &p->cur, &p->next, pairs_count))
		return 0;
	const struct pair *x = &((const struct pairs_res *)p->cur->res)->p[p->next++];
	*a = (const unsigned char *)p->cur->data + x->a;
	*alen = x->alen;
	*b = (const unsigned char *)p->cur->data + x->b;
	*blen = x->blen;
	in_set_lineno(in, p->cur->line0 + x->line);
	return 1;
}
