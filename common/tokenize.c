/* tokenize.c: raw text lines into term counts with a vocabulary (see tokenize.h).
 *
 * Documents are split into one chunk a thread; each thread tokenises its chunk into a
 * vocabulary of its own. The chunk vocabularies are then merged in chunk order, so the
 * global term numbers follow the terms' first occurrence in the corpus whatever the
 * thread count, and every document's counts come out in the same order on every run. */
#include "tokenize.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "input.h"

/* A word byte: an ASCII letter, digit or underscore, or any byte >= 0x80. */
static inline int
word_byte(unsigned char c)
{
	return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static inline uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

/* Terms in first-occurrence order and an open-addressing index over them. */
struct tab {
	uint32_t *slot;		/* term number + 1, 0 = empty */
	size_t mask;
	const char **p;
	uint32_t *len;
	uint64_t *hash;
	size_t n, cap;
};

#define NOT_FOUND UINT32_MAX

static void
tab_init(struct tab *t, size_t expect)
{
	size_t c = 64;
	while (c < 2 * expect)
		c *= 2;
	memset(t, 0, sizeof *t);
	t->slot = xcalloc(c, sizeof *t->slot);
	t->mask = c - 1;
	t->cap = 32;
	t->p = xmallocarray(t->cap, sizeof *t->p);
	t->len = xmallocarray(t->cap, sizeof *t->len);
	t->hash = xmallocarray(t->cap, sizeof *t->hash);
}

static void
tab_free(struct tab *t)
{
	free(t->slot);
	free(t->p);
	free(t->len);
	free(t->hash);
}

static void
tab_grow(struct tab *t)
{
	size_t c = 2 * (t->mask + 1);
	uint32_t *s = xcalloc(c, sizeof *s);
	for (size_t i = 0; i < t->n; i++) {
		size_t h = t->hash[i] & (c - 1);
		while (s[h] != 0)
			h = (h + 1) & (c - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->mask = c - 1;
}

/* The term's number; a new term is added when add is set, else NOT_FOUND. */
static uint32_t
tab_get(struct tab *t, const char *p, uint32_t len, uint64_t h, int add)
{
	size_t i = h & t->mask;
	for (;;) {
		uint32_t s = t->slot[i];
		if (s == 0)
			break;
		s--;
		if (t->hash[s] == h && t->len[s] == len && memcmp(t->p[s], p, len) == 0)
			return s;
		i = (i + 1) & t->mask;
	}
	if (!add)
		return NOT_FOUND;
	if (t->n == UINT32_MAX - 1)
		die("more than %u distinct terms", UINT32_MAX - 1);
	if (t->n == t->cap) {
		t->cap *= 2;
		t->p = xreallocarray(t->p, t->cap, sizeof *t->p);
		t->len = xreallocarray(t->len, t->cap, sizeof *t->len);
		t->hash = xreallocarray(t->hash, t->cap, sizeof *t->hash);
	}
	uint32_t id = (uint32_t)t->n++;
	t->p[id] = p;
	t->len[id] = len;
	t->hash[id] = h;
	t->slot[i] = id + 1;
	if (2 * t->n > t->mask + 1)
		tab_grow(t);
	return id;
}

/* One thread's share of the documents, tokenised against its own vocabulary. */
struct chunk {
	size_t d0, d1;
	struct tab tab;
	uint32_t *df;		/* per local term */
	uint64_t *dptr;		/* d1 - d0 + 1 offsets into term/cnt */
	uint32_t *term, *cnt;	/* each document's (local term, count), by local term */
	size_t ne, cap, dfcap;
	uint32_t *map;		/* local term -> kept global term, or NOT_FOUND */
};

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void
sort_u32(uint32_t *a, size_t n)
{
	if (n > 48) {
		qsort(a, n, sizeof *a, u32_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t v = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static void
tokenise_chunk(struct tok_docs *docs, struct chunk *c)
{
	size_t bytes = 0, tcap = 256;
	for (size_t d = c->d0; d < c->d1; d++)
		bytes += docs->len[d];
	tab_init(&c->tab, bytes / 64 + 16);
	c->dfcap = 64;
	c->df = xcalloc(c->dfcap, sizeof *c->df);
	c->dptr = xmallocarray(c->d1 - c->d0 + 1, sizeof *c->dptr);
	c->cap = bytes / 6 + 16;
	c->term = xmallocarray(c->cap, sizeof *c->term);
	c->cnt = xmallocarray(c->cap, sizeof *c->cnt);
	c->ne = 0;
	uint32_t *tok = xmallocarray(tcap, sizeof *tok);

	for (size_t d = c->d0; d < c->d1; d++) {
		char *s = docs->text[d];
		size_t len = docs->len[d], nt = 0, i = 0;
		c->dptr[d - c->d0] = c->ne;
		while (i < len) {
			while (i < len && !word_byte((unsigned char)s[i]))
				i++;
			size_t start = i;
			for (; i < len && word_byte((unsigned char)s[i]); i++)
				if (s[i] >= 'A' && s[i] <= 'Z')
					s[i] = (char)(s[i] + 32);
			if (i - start < 2)
				continue;
			if (i - start > UINT32_MAX)
				die("document %zu: a token of %zu bytes is too long", d + 1, i - start);
			uint32_t id = tab_get(&c->tab, s + start, (uint32_t)(i - start),
			    hash_bytes(s + start, i - start), 1);
			if (nt == tcap) {
				tcap *= 2;
				tok = xreallocarray(tok, tcap, sizeof *tok);
			}
			tok[nt++] = id;
		}
		sort_u32(tok, nt);
		if (c->ne + nt > c->cap) {
			c->cap = MAX(2 * c->cap, c->ne + nt);
			c->term = xreallocarray(c->term, c->cap, sizeof *c->term);
			c->cnt = xreallocarray(c->cnt, c->cap, sizeof *c->cnt);
		}
		if (c->tab.n > c->dfcap) {
			size_t old = c->dfcap;
			while (c->dfcap < c->tab.n)
				c->dfcap *= 2;
			c->df = xreallocarray(c->df, c->dfcap, sizeof *c->df);
			memset(c->df + old, 0, (c->dfcap - old) * sizeof *c->df);
		}
		for (size_t a = 0; a < nt;) {
			size_t b = a + 1;
			while (b < nt && tok[b] == tok[a])
				b++;
			c->term[c->ne] = tok[a];
			c->cnt[c->ne++] = (uint32_t)(b - a);
			c->df[tok[a]]++;
			a = b;
		}
	}
	c->dptr[c->d1 - c->d0] = c->ne;
	free(tok);
}

/* Splits the documents into chunks of about equal bytes and tokenises them. */
static struct chunk *
tokenise(struct tok_docs *docs, size_t *nchunks)
{
	size_t nc = (size_t)omp_get_max_threads(), total = 0;
	if (nc > docs->n)
		nc = docs->n ? docs->n : 1;
	struct chunk *ch = xcalloc(nc, sizeof *ch);
	for (size_t d = 0; d < docs->n; d++)
		total += docs->len[d] + 1;
	size_t d = 0, acc = 0;
	for (size_t c = 0; c < nc; c++) {
		ch[c].d0 = d;
		size_t goal = total / nc * (c + 1);
		while (d < docs->n && (c == nc - 1 || acc < goal))
			acc += docs->len[d++] + 1;
		ch[c].d1 = d;
	}
	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nc; c++)
		tokenise_chunk(docs, &ch[c]);
	*nchunks = nc;
	return ch;
}

static void
chunks_free(struct chunk *ch, size_t nc)
{
	for (size_t c = 0; c < nc; c++) {
		tab_free(&ch[c].tab);
		free(ch[c].df);
		free(ch[c].dptr);
		free(ch[c].term);
		free(ch[c].cnt);
		free(ch[c].map);
	}
	free(ch);
}

struct tok_vocab {
	struct tab g;		/* every corpus term, first occurrence first */
	uint32_t *keep;		/* global term -> kept term number, or NOT_FOUND */
	uint32_t *df;		/* per kept term */
	size_t nkept;
};

struct tc {
	uint32_t t, c;
};

static int
tc_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct tc *)a)->t, y = ((const struct tc *)b)->t;
	return (x > y) - (x < y);
}

/* The counts of tokenised chunks (their maps filled) by kept term. */
static void
build_counts(size_t nkept, struct chunk *ch, size_t nc, size_t ndocs, struct tok_counts *out)
{
	uint64_t *ptr = xmallocarray(ndocs + 1, sizeof *ptr);
	ptr[0] = 0;
	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nc; c++)
		for (size_t d = ch[c].d0; d < ch[c].d1; d++) {
			uint64_t k = 0;
			for (uint64_t e = ch[c].dptr[d - ch[c].d0]; e < ch[c].dptr[d - ch[c].d0 + 1]; e++)
				k += ch[c].map[ch[c].term[e]] != NOT_FOUND;
			ptr[d + 1] = k;
		}
	for (size_t d = 0; d < ndocs; d++)
		ptr[d + 1] += ptr[d];
	uint64_t nnz = ptr[ndocs];
	out->rows = ndocs;
	out->cols = nkept;
	out->ptr = ptr;
	out->idx = xmallocarray(nnz ? nnz : 1, sizeof *out->idx);
	out->cnt = xmallocarray(nnz ? nnz : 1, sizeof *out->cnt);

	#pragma omp parallel
	{
		size_t cap = 64;
		struct tc *buf = xmallocarray(cap, sizeof *buf);
		#pragma omp for schedule(dynamic, 1)
		for (size_t c = 0; c < nc; c++)
			for (size_t d = ch[c].d0; d < ch[c].d1; d++) {
				size_t k = (size_t)(ptr[d + 1] - ptr[d]), m = 0;
				if (k > cap) {
					cap = 2 * k;
					buf = xreallocarray(buf, cap, sizeof *buf);
				}
				for (uint64_t e = ch[c].dptr[d - ch[c].d0]; e < ch[c].dptr[d - ch[c].d0 + 1]; e++) {
					uint32_t t = ch[c].map[ch[c].term[e]];
					if (t != NOT_FOUND)
						buf[m++] = (struct tc){t, ch[c].cnt[e]};
				}
				if (m > 48)
					qsort(buf, m, sizeof *buf, tc_cmp);
				else
					for (size_t i = 1; i < m; i++) {
						struct tc x = buf[i];
						size_t j = i;
						for (; j > 0 && buf[j - 1].t > x.t; j--)
							buf[j] = buf[j - 1];
						buf[j] = x;
					}
				for (size_t i = 0; i < m; i++) {
					out->idx[ptr[d] + i] = buf[i].t;
					out->cnt[ptr[d] + i] = buf[i].c;
				}
			}
		free(buf);
	}
}

struct tok_vocab *
tok_fit(struct tok_docs *docs, const struct tok_opts *o, struct tok_counts *out)
{
	size_t nc, n = docs->n;
	double lo = o->min_df_prop ? o->min_df * (double)n : o->min_df;
	double hi = o->max_df_prop ? o->max_df * (double)n : o->max_df;
	struct chunk *ch = tokenise(docs, &nc);
	struct tok_vocab *v = xcalloc(1, sizeof *v);
	size_t expect = 0;
	for (size_t c = 0; c < nc; c++)
		expect += ch[c].tab.n;
	tab_init(&v->g, expect / 2 + 16);
	size_t dcap = 1024;
	uint32_t *df = xcalloc(dcap, sizeof *df);

	/* merge in chunk order: global numbers by first occurrence */
	for (size_t c = 0; c < nc; c++) {
		ch[c].map = xmallocarray(ch[c].tab.n ? ch[c].tab.n : 1, sizeof *ch[c].map);
		for (size_t l = 0; l < ch[c].tab.n; l++) {
			uint32_t g = tab_get(&v->g, ch[c].tab.p[l], ch[c].tab.len[l], ch[c].tab.hash[l], 1);
			if (g >= dcap) {
				size_t old = dcap;
				dcap *= 2;
				df = xreallocarray(df, dcap, sizeof *df);
				memset(df + old, 0, (dcap - old) * sizeof *df);
			}
			df[g] += ch[c].df[l];
			ch[c].map[l] = g;
		}
	}

	/* which terms stay: stop words and document-frequency limits */
	size_t ng = v->g.n;
	unsigned char *drop = xcalloc(ng ? ng : 1, 1);
	for (size_t s = 0; s < o->nstop; s++) {
		char *w = o->stop[s];
		size_t len = strlen(w);
		for (size_t i = 0; i < len; i++)
			if (w[i] >= 'A' && w[i] <= 'Z')
				w[i] = (char)(w[i] + 32);
		uint32_t g = tab_get(&v->g, w, (uint32_t)len, hash_bytes(w, len), 0);
		if (g != NOT_FOUND)
			drop[g] = 1;
	}
	v->keep = xmallocarray(ng ? ng : 1, sizeof *v->keep);
	v->df = xmallocarray(ng ? ng : 1, sizeof *v->df);
	for (size_t g = 0; g < ng; g++) {
		if (drop[g] || (double)df[g] < lo || (double)df[g] > hi) {
			v->keep[g] = NOT_FOUND;
			continue;
		}
		v->df[v->nkept] = df[g];
		v->keep[g] = (uint32_t)v->nkept++;
	}
	free(drop);
	free(df);
	for (size_t c = 0; c < nc; c++)
		for (size_t l = 0; l < ch[c].tab.n; l++)
			ch[c].map[l] = v->keep[ch[c].map[l]];
	build_counts(v->nkept, ch, nc, n, out);
	chunks_free(ch, nc);
	return v;
}

void
tok_transform(const struct tok_vocab *v, struct tok_docs *docs, struct tok_counts *out)
{
	size_t nc;
	struct chunk *ch = tokenise(docs, &nc);
	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nc; c++) {
		ch[c].map = xmallocarray(ch[c].tab.n ? ch[c].tab.n : 1, sizeof *ch[c].map);
		for (size_t l = 0; l < ch[c].tab.n; l++) {
			uint32_t g = tab_get((struct tab *)&v->g, ch[c].tab.p[l], ch[c].tab.len[l],
			    ch[c].tab.hash[l], 0);
			ch[c].map[l] = g == NOT_FOUND ? NOT_FOUND : v->keep[g];
		}
	}
	build_counts(v->nkept, ch, nc, docs->n, out);
	chunks_free(ch, nc);
}

size_t
tok_vocab_size(const struct tok_vocab *v)
{
	return v->nkept;
}

const uint32_t *
tok_vocab_df(const struct tok_vocab *v)
{
	return v->df;
}

void
tok_vocab_free(struct tok_vocab *v)
{
	if (v == NULL)
		return;
	tab_free(&v->g);
	free(v->keep);
	free(v->df);
	free(v);
}

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

char **
tok_read_words(const char *path, size_t *n, char **text)
{
	input *in = in_open(path);
	char *buf = in_slurp(in, NULL), **w = NULL;
	*text = buf;
	size_t cap = 0;
	*n = 0;
	in_close(in);
	for (char *p = buf; *p;) {
		while (*p && is_space(*p))
			p++;
		if (!*p)
			break;
		char *s = p;
		while (*p && !is_space(*p))
			p++;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			w = xreallocarray(w, cap, sizeof *w);
		}
		w[(*n)++] = s;
		if (*p)
			*p++ = '\0';
	}
	return w;
}
