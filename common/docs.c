/* docs.c: docsim's inputs as records (see docs.h): format detection, and the
 * reading of each format into records with their ids (text: tokenised in chunks on
 * the -j threads as it is read). */
#include "docs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunks.h"
#include "err.h"
#include "input.h"
#include "numparse.h"
#include "ranks.h"

const char *const doc_format_names[] = {"auto", "text", "libsvm", "mm", "dense", NULL};

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Whether a line is a row of numbers (blanks or commas between); *width gets their
 * count (0 for a blank or comment line). */
static int
dense_line_ok(const char *s, size_t len, size_t *width)
{
	const char *p = s, *end = s + len;
	size_t n = 0;
	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p == '#')
			break;
		double v;
		const char *e = parse_double(p, &v);
		if (e == p || e > end || !isfinite(v))
			return 0;
		n++;
		p = e;
		while (p < end && is_blank(*p))
			p++;
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p != '#' && e == p)
			return 0;
	}
	*width = n;
	return 1;
}

/* Whether a line cut short (the bytes s to end, no '\n' among them) may still be a row
 * of numbers or a libsvm line once whole: its bytes to the last blank or comma (so
 * that no number is cut) are one. A text line is known by its first word. */
static int
partial_numeric(const char *s, const char *end, int ids)
{
	if (ids) {
		const char *tab = memchr(s, '\t', (size_t)(end - s));
		if (tab == NULL)
			return 1;	/* still in the id */
		s = tab + 1;
	}
	while (end > s && !is_blank(end[-1]) && end[-1] != ',')
		end--;
	size_t w;
	int feat;
	return dense_line_ok(s, (size_t)(end - s), &w) || svm_line_ok(s, (size_t)(end - s), &feat);
}

/* The format from the first whole lines (up to 100) of the n bytes at b (whole: the
 * input ends there); *more set, and nothing decided, when b ends inside a line that
 * may be numbers before any line with content (not blank, not a comment). */
static enum doc_format
detect_lines(const unsigned char *b, size_t n, int whole, int ids, int *more)
{
	/* a copy, so that every line ends in '\n' or NUL for the parsers */
	char *copy = xmalloc(n + 1);
	memcpy(copy, b, n);
	copy[n] = '\0';
	int first_svm = -1, all_dense = 1, lines = 0, content = 0;
	size_t width = 0;
	const char *p = copy, *end = p + n;
	*more = 0;
	while (p < end && lines < 100) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL && !whole) {
			/* a partial line: left out, unless nothing is known yet and whole it
			 * may be a row (of 20,000 numbers, say: 64 KB of them or more) */
			*more = content == 0 && partial_numeric(p, end, ids);
			break;
		}
		const char *e = nl ? nl : end, *s = p;
		p = nl ? nl + 1 : end;
		if (ids) {
			const char *tab = memchr(s, '\t', (size_t)(e - s));
			if (tab == NULL) {
				first_svm = all_dense = 0;
				break;
			}
			s = tab + 1;
		}
		size_t w = 0;
		int feat, ok = svm_line_ok(s, (size_t)(e - s), &feat);
		if (first_svm < 0 && (feat || !ok))
			first_svm = ok;
		int dense = dense_line_ok(s, (size_t)(e - s), &w);
		if (!dense || (w && width && w != width))
			all_dense = 0;
		content += !dense || w > 0;
		if (w)
			width = w;
		lines++;
	}
	free(copy);
	if (first_svm > 0)
		return DOC_LIBSVM;
	if (all_dense && width > 0)
		return DOC_DENSE;
	return DOC_TEXT;
}

/* The format of an input from its first bytes: 64 KB, or twice as many until they
 * hold a whole line to tell by (so no line is too long to be told apart). */
static enum doc_format
detect(input *in, int ids)
{
	static const unsigned char npy[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
	size_t want = (size_t)1 << 16;
	for (;;) {
		size_t avail;
		const unsigned char *b = in_peek(in, want, &avail);
		if (avail >= 6 && memcmp(b, npy, 6) == 0)
			return DOC_DENSE;
		if (mm_is_banner((const char *)b, avail))
			return DOC_MM;
		int more;
		enum doc_format f = detect_lines(b, avail, avail < want, ids, &more);
		if (!more || want > SIZE_MAX / 2)
			return f;
		want *= 2;
	}
}

/* Ids as they are read: their bytes in one buffer, by offset. */
struct idlist {
	char *buf;
	size_t len, cap;
	size_t *off, *n;
	size_t count, ncap;
};

static void
ids_add(struct idlist *l, const char *s, size_t n)
{
	if (l->buf == NULL || l->len + n > l->cap) {	/* an empty first id too */
		l->cap = MAX(2 * l->cap, l->len + n + 4096);
		l->buf = xrealloc(l->buf, l->cap);
	}
	if (l->count == l->ncap) {
		l->ncap = MAX(2 * l->ncap, (size_t)256);
		l->off = xreallocarray(l->off, l->ncap, sizeof *l->off);
		l->n = xreallocarray(l->n, l->ncap, sizeof *l->n);
	}
	memcpy(l->buf + l->len, s, n);
	l->off[l->count] = l->len;
	l->n[l->count++] = n;
	l->len += n;
}

/* Appends l's ids to r's (r->n counting the records before them) and takes its buffer. */
static void
ids_take(struct docs *r, struct idlist *l, size_t *cap)
{
	size_t need = r->n + l->count;
	if (need > *cap) {
		*cap = MAX(2 * *cap, need + 1024);
		r->id = xreallocarray(r->id, *cap, sizeof *r->id);
		r->idlen = xreallocarray(r->idlen, *cap, sizeof *r->idlen);
	}
	for (size_t i = 0; i < l->count; i++) {
		r->id[r->n + i] = l->buf + l->off[i];
		r->idlen[r->n + i] = l->n[i];
	}
	r->idbuf = xreallocarray(r->idbuf, r->nidbuf + 1, sizeof *r->idbuf);
	r->idbuf[r->nidbuf++] = l->buf;
	free(l->off);
	free(l->n);
	memset(l, 0, sizeof *l);
}

/* Text, on the chunk engine: each chunk's lines are tokenised (and their ids kept) on
 * one of the threads, into a part of their own. */
struct text_res {
	struct tok_part *part;
	struct idlist ids;
};

static void
text_res_free(void *p)
{
	struct text_res *t = p;
	tok_part_free(t->part);
	free(t->ids.buf);
	free(t->ids.off);
	free(t->ids.n);
	free(t);
}

static void
parse_text(void *ctx, struct chunk *c)
{
	const int *ids = ctx;
	struct chunk_lines it;
	size_t len;
	if (c->res != NULL)
		text_res_free(c->res);
	struct text_res *t = c->res = xcalloc(1, sizeof *t);
	t->part = tok_part_new();
	chunk_lines_init(&it, c);
	for (const char *s; (s = chunk_line(&it, &len)) != NULL;) {
		if (*ids) {
			const char *tab = memchr(s, '\t', len);
			if (tab == NULL) {
				chunk_fail(c, it.n, "no TAB after the id (--ids)");
				return;
			}
			ids_add(&t->ids, s, (size_t)(tab - s));
			len -= (size_t)(tab + 1 - s);
			s = tab + 1;
		}
		if (tok_part_add(t->part, s, len) != 0) {
			chunk_fail(c, it.n, "a token of more than 4 GiB");
			return;
		}
	}
	c->lines = it.n;
}

/* A bad line kept for later (docs_read_share): its number in the input, and why. */
struct text_err {
	uint64_t line;	/* 0: none */
	char msg[CHUNK_ERR];
};

/* err NULL: a bad line is an error at once; else it is kept in *err and reading stops. */
static void
read_text(input *in, int ids, struct tok_vocab *vocab, struct docs *r, struct text_err *err)
{
	static const struct chunk_ops ops = {.cut = chunk_cut_lines,
	    .parse = parse_text, .free_res = text_res_free};
	chunks *e = chunks_open(in, &ops, &ids);
	size_t pcap = 0, idcap = 0;
	for (struct chunk *c; (c = chunks_next(e)) != NULL;) {
		if (c->err_line != 0 && err == NULL)
			chunk_die(e, c);
		if (c->err_line != 0) {
			err->line = c->line0 + c->err_line;
			memcpy(err->msg, c->err, sizeof err->msg);
			break;
		}
		struct text_res *t = c->res;
		c->res = NULL;
		if (vocab != NULL)
			tok_vocab_merge(vocab, t->part);	/* while the next chunks parse */
		if (r->nparts == pcap) {
			pcap = MAX(2 * pcap, (size_t)16);
			r->parts = xreallocarray(r->parts, pcap, sizeof *r->parts);
		}
		r->parts[r->nparts++] = t->part;
		if (ids)
			ids_take(r, &t->ids, &idcap);
		r->n += tok_part_docs(t->part);
		t->part = NULL;
		text_res_free(t);
	}
	chunks_close(e);
}

/* libsvm with ids: the slurped input split into lines, each line's id kept. */
static void
read_libsvm_ids(input *in, struct docs *r)
{
	size_t buflen, cap = 1024, n = 0, idcap = 0;
	char *buf = in_slurp(in, &buflen);
	char **text = xmallocarray(cap, sizeof *text);
	size_t *len = xmallocarray(cap, sizeof *len);
	struct idlist ids;
	memset(&ids, 0, sizeof ids);
	for (char *p = buf, *end = buf + buflen; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *e = nl ? nl : end;
		if (e > p && e[-1] == '\r')
			e--;
		char *tab = memchr(p, '\t', (size_t)(e - p));
		if (tab == NULL)
			die_at(r->name, n + 1, "no TAB after the id (--ids)");
		if (n == cap) {
			cap *= 2;
			text = xreallocarray(text, cap, sizeof *text);
			len = xreallocarray(len, cap, sizeof *len);
		}
		ids_add(&ids, p, (size_t)(tab - p));
		text[n] = tab + 1;
		len[n++] = (size_t)(e - tab - 1);
		p = nl ? nl + 1 : end;
	}
	svm_parse((const char *const *)text, len, n, r->name, 1, &r->sp, NULL);
	ids_take(r, &ids, &idcap);
	r->n = n;
	free(text);
	free(len);
	free(buf);
}

/* Dense text with ids: "ID<TAB>numbers", blank and comment lines skipped. */
static void
read_dense_ids(input *in, struct docs *r)
{
	size_t cap = 1024, vcap = 64, width = 0, n = 0, len, idcap = 0;
	double *vals = xmallocarray(vcap, sizeof *vals);
	float *data = NULL;
	char *line;
	struct idlist ids;
	memset(&ids, 0, sizeof ids);
	while ((line = in_getline(in, &len)) != NULL) {
		const char *q = line;
		while (is_blank(*q))
			q++;
		if (*q == '\0' || *q == '#')
			continue;
		char *tab = strchr(line, '\t');
		if (tab == NULL) {
			free(vals);
			free(data);
			die_at(r->name, in_lineno(in), "no TAB after the id (--ids)");
		}
		*tab = '\0';
		size_t w = dense_parse_line(tab + 1, vals, vcap, r->name, in_lineno(in), 0);
		if (w > vcap) {
			vcap = w;
			vals = xreallocarray(vals, vcap, sizeof *vals);
			dense_parse_line(tab + 1, vals, vcap, r->name, in_lineno(in), 0);
		}
		if (n == 0)
			width = w;
		if (w != width) {
			free(vals);
			free(data);
			die_at(r->name, in_lineno(in), "%zu numbers where the first row has %zu", w, width);
		}
		if (n == cap || data == NULL) {
			if (data != NULL)
				cap *= 2;
			data = xreallocarray(data, mul_size(cap, width ? width : 1, "matrix"), sizeof *data);
		}
		ids_add(&ids, line, (size_t)(tab - line));
		for (size_t j = 0; j < w; j++)
			data[n * width + j] = (float)vals[j];
		n++;
	}
	free(vals);
	ids_take(r, &ids, &idcap);
	r->n = n;
	r->dm.rows = n;
	r->dm.cols = width;
	r->dm.dtype = DT_F32;
	r->dm.data = data;
}

/* The records of in, in format f (not DOC_AUTO). */
static void
read_format(input *in, enum doc_format f, int ids, struct tok_vocab *vocab, struct docs *r)
{
	switch (f) {
	case DOC_TEXT:
		read_text(in, ids, vocab, r, NULL);
		break;
	case DOC_LIBSVM:
		r->sparse = 1;
		if (ids) {
			read_libsvm_ids(in, r);
		} else {
			svm_read(in, &r->sp, NULL);
			r->n = r->sp.rows;
		}
		break;
	case DOC_MM:
		if (ids)
			die("%s: --ids needs text, libsvm or dense text input, not MatrixMarket", r->name);
		r->sparse = 1;
		mm_read(in, &r->sp);
		r->n = r->sp.rows;
		break;
	case DOC_DENSE:
		if (ids) {
			size_t avail;
			const unsigned char *b = in_peek(in, 1, &avail);
			if (avail && b[0] == 0x93)
				die("%s: --ids needs text input; NPY has no id field", r->name);
			read_dense_ids(in, r);
		} else {
			mat_read(in, DT_F32, 0, &r->dm);
			r->n = r->dm.rows;
		}
		break;
	default:
		break;
	}
}

enum doc_format
docs_read(const char *path, enum doc_format f, int ids, struct tok_vocab *vocab, struct docs *r)
{
	input *in = in_open(path);
	memset(r, 0, sizeof *r);
	r->name = xstrdup(in_name(in));
	if (f == DOC_AUTO)
		f = detect(in, ids);
	read_format(in, f, ids, vocab, r);
	in_close(in);
	return f;
}

/* The first bad line of the ranks' shares, in input order, said once: by the rank
 * whose share it is in. The others wait for mpirun to end them as that rank exits 1. */
static void
share_errors(const char *name, const struct text_err *err)
{
	int64_t first = err->line ? (int64_t)err->line : INT64_MAX;
	ranks_min_i64(&first, 1);
	if (first == INT64_MAX)
		return;
	int64_t who = err->line && (int64_t)err->line == first ? ranks_rank() : INT64_MAX;
	ranks_min_i64(&who, 1);
	if (who == ranks_rank())
		die_at(name, err->line, "%s", err->msg);
	for (;;)
		pause();
}

enum doc_format
docs_read_share(const char *path, enum doc_format f, int ids, struct tok_vocab *vocab,
    struct docs *r, uint64_t *row0, uint64_t *total)
{
	if (ranks_size() == 1) {
		f = docs_read(path, f, ids, vocab, r);
		*row0 = 0;
		*total = r->n;
		return f;
	}
	ranks_serial_begin();	/* a file that cannot be opened: said once, by rank 0 */
	input *in = in_open(path);
	memset(r, 0, sizeof *r);
	r->name = xstrdup(in_name(in));
	in_need_shares(in, r->name);
	if (f == DOC_AUTO)
		f = detect(in, ids);
	size_t avail;
	const unsigned char *magic = in_peek(in, 1, &avail);
	if (f == DOC_DENSE && !ids && avail && magic[0] == 0x93) {
		/* NPY: each rank reads its share of the rows, then every rank gets all */
		uint64_t first, rows;
		mat_read_share(in, DT_F32, 0, &r->dm, &first, &rows);
		ranks_serial_end();
		in_close(in);
		size_t bytes;
		void *all = ranks_allgather(r->dm.data, r->dm.rows * r->dm.cols * sizeof(float),
		    &bytes, NULL);
		free(r->dm.data);
		r->dm.data = all;
		r->dm.rows = r->n = (size_t)rows;
		*row0 = 0;
		*total = rows;
		return f;
	}
	if (f != DOC_TEXT) {
		/* vectors: every rank reads them all (each needs the whole corpus), rank 0
		 * first, so that a bad line is said once */
		read_format(in, f, ids, vocab, r);
		ranks_serial_end();
		in_close(in);
		*row0 = 0;
		*total = r->n;
		return f;
	}
	ranks_serial_end();
	in_share_lines(in);
	struct text_err err = {0, ""};
	read_text(in, ids, vocab, r, &err);
	in_close(in);
	share_errors(r->name, &err);
	*row0 = ranks_exscan_u64(r->n);
	int64_t n = (int64_t)r->n;
	ranks_sum_i64(&n, 1);
	*total = (uint64_t)n;
	return f;
}

void
docs_free(struct docs *r)
{
	for (size_t i = 0; i < r->nparts; i++)
		tok_part_free(r->parts[i]);
	free(r->parts);
	for (size_t i = 0; i < r->nidbuf; i++)
		free(r->idbuf[i]);
	free(r->idbuf);
	free(r->id);
	free(r->idlen);
	if (r->sparse)
		csr_free(&r->sp);
	else
		mat_free(&r->dm);
	free((char *)r->name);
}
