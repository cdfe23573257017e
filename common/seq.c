/* seq.c: sequence readers (see seq.h). */
#include "seq.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

struct seqfile {
	input *in;
	enum seq_format fmt;
	unsigned char *buf;		/* a record joined from several lines */
	size_t cap;
	uint64_t lineno;		/* where the last record began */
	uint64_t count;
	int pending;			/* FASTA: a header line was read ahead */
	uint64_t pending_line;
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
	return f;
}

void
seq_close(seqfile *f)
{
	if (f == NULL)
		return;
	in_close(f->in);
	free(f->buf);
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

static void
reserve(seqfile *f, size_t n)
{
	if (n <= f->cap)
		return;
	f->cap = MAX(n, 2 * f->cap);
	f->buf = xrealloc(f->buf, f->cap);
}

/* The next line that is not empty; NULL at the end. */
static char *
next_nonblank(input *in, size_t *len)
{
	char *line;
	while ((line = in_getline(in, len)) != NULL && *len == 0)
		;
	return line;
}

static int
next_fasta(seqfile *f, const unsigned char **s, size_t *len)
{
	size_t n = 0, ln;
	char *line;

	if (!f->pending) {
		if ((line = next_nonblank(f->in, &ln)) == NULL)
			return 0;
		if (line[0] != '>')
			die_at(in_name(f->in), in_lineno(f->in),
			    "sequence data before the first '>' header");
		f->pending_line = in_lineno(f->in);
	}
	f->pending = 0;
	f->lineno = f->pending_line;
	while ((line = in_getline(f->in, &ln)) != NULL) {
		if (ln > 0 && line[0] == '>') {
			f->pending = 1;
			f->pending_line = in_lineno(f->in);
			break;
		}
		reserve(f, n + ln);
		memcpy(f->buf + n, line, ln);
		n += ln;
	}
	*s = f->buf;
	*len = n;
	return 1;
}

static int
next_fastq(seqfile *f, const unsigned char **s, size_t *len)
{
	size_t ln, n;
	char *line;
	const char *name = in_name(f->in);

	if ((line = next_nonblank(f->in, &ln)) == NULL)
		return 0;
	f->lineno = in_lineno(f->in);
	if (line[0] != '@')
		die_at(name, f->lineno, "expected a FASTQ record starting with '@'");
	if ((line = in_getline(f->in, &n)) == NULL)
		die_at(name, f->lineno, "FASTQ record ends before its sequence line");
	reserve(f, n);
	memcpy(f->buf, line, n);
	if ((line = in_getline(f->in, &ln)) == NULL)
		die_at(name, f->lineno, "FASTQ record ends before its '+' line");
	if (ln == 0 || line[0] != '+')
		die_at(name, in_lineno(f->in), "expected the FASTQ '+' line");
	if ((line = in_getline(f->in, &ln)) == NULL)
		die_at(name, f->lineno, "FASTQ record ends before its quality line");
	if (ln != n)
		die_at(name, in_lineno(f->in),
		    "quality line has %zu bytes but the sequence has %zu", ln, n);
	*s = f->buf;
	*len = n;
	return 1;
}

int
seq_next(seqfile *f, const unsigned char **s, size_t *len)
{
	int got;

	switch (f->fmt) {
	case SEQ_FASTA:
		got = next_fasta(f, s, len);
		break;
	case SEQ_FASTQ:
		got = next_fastq(f, s, len);
		break;
	default: {
		char *line = in_getline(f->in, len);
		got = line != NULL;
		if (got) {
			*s = (const unsigned char *)line;
			f->lineno = in_lineno(f->in);
		}
		break;
	}
	}
	f->count += (uint64_t)got;
	return got;
}

int
seq_pair_next(input *in, const unsigned char **a, size_t *alen,
    const unsigned char **b, size_t *blen)
{
	size_t n;
	char *line = in_getline(in, &n);
	if (line == NULL)
		return 0;
	char *tab = memchr(line, '\t', n);
	if (tab == NULL)
		die_at(in_name(in), in_lineno(in), "no TAB in the line (expected A<TAB>B)");
	size_t k = (size_t)(tab - line);
	if (memchr(tab + 1, '\t', n - k - 1) != NULL)
		die_at(in_name(in), in_lineno(in), "more than one TAB in the line (expected A<TAB>B)");
	*a = (const unsigned char *)line;
	*alen = k;
	*b = (const unsigned char *)tab + 1;
	*blen = n - k - 1;
	return 1;
}
