/* tokenize.c: docsim's text documents (common/docs.h, DOC_TEXT, tokenised by
 * common/tokenize.h), read as docsim reads a corpus: into a vocabulary, finished and
 * counted; then the same bytes again as queries (no vocabulary), counted against it.
 * From the regular file without ids and every term kept; from the pipe with ids
 * (--ids: "ID<TAB>text") and the terms of at least 2 documents and at most 3/4 of them.
 *
 * What must hold: a record a line; with ids, the bytes before the first TAB are the id,
 * and a line without one is an error; the counts are a CSR of kept terms ascending,
 * counts positive, each term's document frequency that of its column and within the
 * limits, and terms numbered by their first document; the queries' counts are the
 * corpus's. A line of ASCII is checked against a tokeniser written from the pattern
 * (runs of two or more of [A-Za-z0-9_], lower-cased): its counts, and when the whole
 * input is ASCII, the whole matrix and the vocabulary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "docs.h"
#include "fuzz.h"
#include "tokenize.h"

static const uint8_t *text;
static size_t text_len;
static char qpath[64];		/* the same bytes, for the queries */
#define NSTOP 3
static char *stop_words[NSTOP] = {"The", "of", "a-b"};	/* "a-b": not a token */

/* ---- the reference: a line's tokens, numbered by first occurrence ---- */

struct line {
	size_t start, len;	/* the text, past the id */
	size_t id_len;		/* ids: the id's length; SIZE_MAX when there is no TAB */
	int ascii;
};

struct ref {
	char *low;		/* the input lower-cased (ASCII letters) */
	struct line *line;
	size_t nlines;
	/* tokens in order: their term, and each line's first token */
	size_t *tterm, *lfirst, ntok;
	/* terms: where their first occurrence is, its length, df, and the kept number */
	size_t *tpos, *tlen, *df, *kept, nterm;
	size_t *slot, nslot;	/* a hash of the terms: index + 1, 0 empty */
};

static int
is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_';
}

static size_t
term_of(struct ref *r, size_t pos, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)r->low[pos + i]) * 1099511628211ull;
	size_t s = (size_t)h & (r->nslot - 1);
	for (; r->slot[s] != 0; s = (s + 1) & (r->nslot - 1)) {
		size_t t = r->slot[s] - 1;
		if (r->tlen[t] == len && memcmp(r->low + r->tpos[t], r->low + pos, len) == 0)
			return t;
	}
	size_t t = r->nterm++;
	r->tpos[t] = pos;
	r->tlen[t] = len;
	r->df[t] = 0;
	r->slot[s] = t + 1;
	return t;
}

/* Whether token a is its term's first in the line whose tokens start at from. */
static int
first_in_line(const struct ref *r, size_t from, size_t a)
{
	for (size_t b = from; b < a; b++)
		if (r->tterm[b] == r->tterm[a])
			return 0;
	return 1;
}

static void
ref_make(struct ref *r, int ids)
{
	size_t n = text_len;
	memset(r, 0, sizeof *r);
	r->low = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		r->low[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32 : text[i]);
	r->line = malloc((n + 1) * sizeof *r->line);
	for (size_t p = 0; p < n;) {
		const uint8_t *nl = memchr(text + p, '\n', n - p);
		size_t e = nl ? (size_t)(nl - text) : n, next = nl ? e + 1 : n;
		if (e > p && text[e - 1] == '\r')
			e--;
		struct line *l = &r->line[r->nlines++];
		l->start = p;
		l->id_len = 0;
		if (ids) {
			const uint8_t *tab = memchr(text + p, '\t', e - p);
			l->id_len = tab ? (size_t)(tab - text) - p : SIZE_MAX;
			if (tab)
				l->start = (size_t)(tab - text) + 1;
		}
		l->len = e - l->start;
		l->ascii = 1;
		for (size_t i = l->start; i < e; i++)
			l->ascii &= text[i] < 0x80;
		p = next;
	}
	/* at most n / 2 tokens, and as many terms */
	size_t cap = n / 2 + 1;
	r->tterm = malloc(cap * sizeof *r->tterm);
	r->lfirst = malloc((r->nlines + 1) * sizeof *r->lfirst);
	r->tpos = malloc(cap * sizeof *r->tpos);
	r->tlen = malloc(cap * sizeof *r->tlen);
	r->df = malloc(cap * sizeof *r->df);
	r->kept = malloc(cap * sizeof *r->kept);
	for (r->nslot = 16; r->nslot < 2 * cap; r->nslot *= 2)
		;
	r->slot = calloc(r->nslot, sizeof *r->slot);
	for (size_t i = 0; i < r->nlines; i++) {
		const struct line *l = &r->line[i];
		r->lfirst[i] = r->ntok;
		for (size_t p = l->start, e = l->start + l->len; p < e;) {
			if (!is_word(text[p])) {
				p++;
				continue;
			}
			size_t s = p;
			while (p < e && is_word(text[p]))
				p++;
			if (p - s >= 2)
				r->tterm[r->ntok++] = term_of(r, s, p - s);
		}
		for (size_t a = r->lfirst[i]; a < r->ntok; a++)
			r->df[r->tterm[a]] += first_in_line(r, r->lfirst[i], a);
	}
	r->lfirst[r->nlines] = r->ntok;
}

static void
ref_free(struct ref *r)
{
	free(r->low);
	free(r->line);
	free(r->tterm);
	free(r->lfirst);
	free(r->tpos);
	free(r->tlen);
	free(r->df);
	free(r->kept);
	free(r->slot);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Line i's reference counts of its terms, ascending, into sorted; returns how many. */
static size_t
ref_line_counts(const struct ref *r, size_t i, uint32_t *sorted)
{
	size_t m = 0;
	for (size_t a = r->lfirst[i]; a < r->lfirst[i + 1]; a++) {
		size_t t = r->tterm[a];
		if (!first_in_line(r, r->lfirst[i], a))
			continue;
		uint32_t c = 0;
		for (size_t b = a; b < r->lfirst[i + 1]; b++)
			c += r->tterm[b] == t;
		sorted[m++] = c;
	}
	qsort(sorted, m, sizeof *sorted, cmp_u32);
	return m;
}

/* Whether a lower-cased term is one of the stop words. */
static int
is_stop(const char *w, size_t n)
{
	return (n == 3 && memcmp(w, "the", 3) == 0) || (n == 2 && memcmp(w, "of", 2) == 0);
}

/* ---- the target ---- */

static void
counts_same(const struct tok_counts *a, const struct tok_counts *b)
{
	FUZZ_ASSERT("tokenize", a->rows == b->rows && a->cols == b->cols);
	FUZZ_ASSERT("tokenize", memcmp(a->ptr, b->ptr, (a->rows + 1) * sizeof *a->ptr) == 0);
	FUZZ_ASSERT("tokenize", memcmp(a->idx, b->idx, a->ptr[a->rows] * sizeof *a->idx) == 0);
	FUZZ_ASSERT("tokenize", memcmp(a->cnt, b->cnt, a->ptr[a->rows] * sizeof *a->cnt) == 0);
}

static void
counts_free(struct tok_counts *c)
{
	free(c->ptr);
	free(c->idx);
	free(c->cnt);
}

static void
read_text(const char *path)
{
	const int ids = fuzz_pipe;
	struct ref r;
	ref_make(&r, ids);

	struct tok_vocab *v = tok_vocab_new();
	struct docs c, q;
	docs_read(path, DOC_TEXT, ids, v, &c);
	FUZZ_ASSERT("tokenize", c.n == r.nlines);
	for (size_t i = 0; ids && i < c.n; i++) {
		FUZZ_ASSERT("tokenize", r.line[i].id_len != SIZE_MAX);
		FUZZ_ASSERT("tokenize", c.idlen[i] == r.line[i].id_len &&
		    memcmp(c.id[i], text + (r.line[i].start - r.line[i].id_len - 1),
		    c.idlen[i]) == 0);
		fuzz_touch(c.id[i], c.idlen[i]);
	}

	/* pipe: terms of 2 documents up to 3/4 of them, but stop words */
	struct tok_opts o = {.min_df = 1, .max_df = 1, .max_df_prop = 1};
	if (fuzz_pipe)
		o = (struct tok_opts){.min_df = 2, .max_df = 0.75, .max_df_prop = 1,
		    .stop = stop_words, .nstop = NSTOP};
	const double lo = o.min_df, hi = o.max_df * (double)c.n;
	tok_vocab_finish(v, &o, c.n);
	struct tok_counts cc, qc;
	tok_count(v, c.parts, c.nparts, &cc);
	const size_t nkept = tok_vocab_size(v);
	const uint32_t *df = tok_vocab_df(v);
	FUZZ_ASSERT("tokenize", cc.rows == c.n && cc.cols == nkept && cc.ptr[0] == 0);
	size_t *seen = calloc(nkept + 1, sizeof *seen), *first = malloc((nkept + 1) * sizeof *first);
	for (size_t i = 0; i < cc.rows; i++) {
		FUZZ_ASSERT("tokenize", cc.ptr[i] <= cc.ptr[i + 1]);
		for (uint64_t k = cc.ptr[i]; k < cc.ptr[i + 1]; k++) {
			FUZZ_ASSERT("tokenize", cc.idx[k] < nkept && cc.cnt[k] > 0);
			FUZZ_ASSERT("tokenize", k == cc.ptr[i] || cc.idx[k - 1] < cc.idx[k]);
			if (seen[cc.idx[k]]++ == 0)
				first[cc.idx[k]] = i;
		}
	}
	for (size_t t = 0; t < nkept; t++) {
		FUZZ_ASSERT("tokenize", seen[t] == df[t] && df[t] >= lo && df[t] <= hi);
		FUZZ_ASSERT("tokenize", t == 0 || first[t - 1] <= first[t]);
	}
	free(seen);
	free(first);
	fuzz_touch(df, nkept * sizeof *df);
	fuzz_touch(cc.ptr, (cc.rows + 1) * sizeof *cc.ptr);
	fuzz_touch(cc.idx, cc.ptr[cc.rows] * sizeof *cc.idx);
	fuzz_touch(cc.cnt, cc.ptr[cc.rows] * sizeof *cc.cnt);

	/* the reference: line by line (every term kept), and whole */
	int all_ascii = 1;
	uint32_t *want = malloc((r.ntok + 1) * sizeof *want);
	uint32_t *got = malloc((r.ntok + 1) * sizeof *got);
	for (size_t i = 0; i < r.nlines; i++) {
		all_ascii &= r.line[i].ascii;
		if (!r.line[i].ascii || fuzz_pipe)
			continue;
		size_t m = ref_line_counts(&r, i, want), k = cc.ptr[i + 1] - cc.ptr[i];
		FUZZ_ASSERT("tokenize", k == m);
		memcpy(got, cc.cnt + cc.ptr[i], k * sizeof *got);
		qsort(got, k, sizeof *got, cmp_u32);
		FUZZ_ASSERT("tokenize", memcmp(got, want, m * sizeof *got) == 0);
	}
	if (all_ascii) {
		size_t nk = 0;
		for (size_t t = 0; t < r.nterm; t++)
			r.kept[t] = r.df[t] >= lo && (double)r.df[t] <= hi &&
			    !(fuzz_pipe && is_stop(r.low + r.tpos[t], r.tlen[t])) ? nk++ : SIZE_MAX;
		FUZZ_ASSERT("tokenize", nk == nkept);
		for (size_t i = 0; i < r.nlines; i++) {
			/* the line's kept terms ascending, each with its count */
			size_t m = 0;
			for (size_t a = r.lfirst[i]; a < r.lfirst[i + 1]; a++)
				if (r.kept[r.tterm[a]] != SIZE_MAX)
					want[m++] = (uint32_t)r.kept[r.tterm[a]];
			qsort(want, m, sizeof *want, cmp_u32);
			uint64_t k = cc.ptr[i];
			for (size_t a = 0; a < m; k++) {
				size_t b = a;
				while (b < m && want[b] == want[a])
					b++;
				FUZZ_ASSERT("tokenize", k < cc.ptr[i + 1] && cc.idx[k] == want[a] &&
				    cc.cnt[k] == b - a);
				a = b;
			}
			FUZZ_ASSERT("tokenize", k == cc.ptr[i + 1]);
		}
	}
	free(want);
	free(got);

	/* the same bytes as queries */
	docs_read(qpath, DOC_TEXT, ids, NULL, &q);
	FUZZ_ASSERT("tokenize", q.n == c.n);
	tok_count(v, q.parts, q.nparts, &qc);
	counts_same(&cc, &qc);
	counts_free(&qc);
	counts_free(&cc);
	docs_free(&q);
	tok_vocab_free(v);
	docs_free(&c);
	ref_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int qfd = -1;
	if (fuzz_not_plain(data, size))
		return -1;
	if (qfd < 0) {
		if ((qfd = memfd_create("fuzz-queries", MFD_CLOEXEC)) < 0) {
			perror("tokenize: memfd_create");
			abort();
		}
		snprintf(qpath, sizeof qpath, "/proc/self/fd/%d", qfd);
	}
	if (ftruncate(qfd, 0) != 0 || (size > 0 && pwrite(qfd, data, size, 0) != (ssize_t)size)) {
		perror("tokenize: the queries' copy");
		abort();
	}
	text = data;
	text_len = size;
	fuzz_input("tokenize", data, size, read_text, FUZZ_CHUNKS);
	/* without ids never an error; with them, exactly when a line has no TAB */
	FUZZ_ASSERT("tokenize", fuzz_ended[0] == FUZZ_RETURNED);
	int tabless = 0;
	for (size_t p = 0; p < size;) {
		const uint8_t *nl = memchr(data + p, '\n', size - p);
		size_t e = nl ? (size_t)(nl - data) : size;
		if (e > p && data[e - 1] == '\r')
			e--;
		tabless |= memchr(data + p, '\t', e - p) == NULL;
		p = nl ? (size_t)(nl - data) + 1 : size;
	}
	FUZZ_ASSERT("tokenize", (fuzz_ended[1] == 1) == tabless &&
	    (fuzz_ended[1] == FUZZ_RETURNED) == !tabless);
	return 0;
}
