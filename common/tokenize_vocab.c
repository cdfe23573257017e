/* tokenize_vocab.c: the vocabulary: parts merged, terms kept, documents counted. The
 * corpus's parts are merged in input order (or the shares of ranks adopted as one),
 * the terms kept by the stop words and the document-frequency limits, and the
 * documents' counts of the kept terms made. */
#include "tokenize_int.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

struct tok_vocab {
	struct tab g;		/* every corpus term, first occurrence first */
	uint32_t *df;		/* per global term, then per kept term */
	size_t dfcap;
	uint32_t *keep;		/* global term -> kept term number, or NOT_FOUND */
	size_t nkept;
	uint32_t *remap;	/* tok_vocab_adopt: the parts' global terms -> g's */
	char *adopted;		/* the bytes of g's terms after tok_vocab_adopt */
};

struct tok_vocab *
tok_vocab_new(void)
{
	struct tok_vocab *v = xcalloc(1, sizeof *v);
	tok_tab_init(&v->g, 4096);
	v->dfcap = 4096;
	v->df = xcalloc(v->dfcap, sizeof *v->df);
	return v;
}

void
tok_vocab_merge(struct tok_vocab *v, struct tok_part *p)
{
	const struct tab *t = &p->tab;
	p->map = xmallocarray(t->n ? t->n : 1, sizeof *p->map);
	p->vocab = v;
	for (size_t l = 0; l < t->n; l++) {
		uint32_t g = tok_tab_get(&v->g, t->p[l], t->len[l], t->hash[l], 1, NULL);
		if (g >= v->dfcap) {
			size_t old = v->dfcap;
			v->dfcap *= 2;
			v->df = xreallocarray(v->df, v->dfcap, sizeof *v->df);
			memset(v->df + old, 0, (v->dfcap - old) * sizeof *v->df);
		}
		v->df[g] += p->df[l];
		p->map[l] = g;
	}
}

/* A pack: for each term, its length and document count (uint32, native order: every
 * rank of a job is the same build) and its bytes. */
void *
tok_vocab_pack(const struct tok_vocab *v, size_t *bytes)
{
	size_t n = 0;
	for (size_t g = 0; g < v->g.n; g++)
		n += 8 + v->g.len[g];
	char *b = xmalloc(MAX(n, 1)), *at = b;
	for (size_t g = 0; g < v->g.n; g++) {
		uint32_t h[2] = {v->g.len[g], v->df[g]};
		memcpy(at, h, 8);
		memcpy(at + 8, v->g.p[g], v->g.len[g]);
		at += 8 + v->g.len[g];
	}
	*bytes = n;
	return b;
}

void
tok_vocab_adopt(struct tok_vocab *v, char *all, size_t bytes)
{
	struct tab g;
	size_t dfcap = 4096;
	uint32_t *df = xcalloc(dfcap, sizeof *df);
	tok_tab_init(&g, v->g.n);
	for (size_t at = 0; at + 8 <= bytes;) {
		uint32_t h[2];
		memcpy(h, all + at, 8);
		const char *p = all + at + 8;
		uint32_t id = tok_tab_get(&g, p, h[0], hash_bytes(p, h[0]), 1, NULL);
		if (id >= dfcap) {
			df = xreallocarray(df, 2 * dfcap, sizeof *df);
			memset(df + dfcap, 0, dfcap * sizeof *df);
			dfcap *= 2;
		}
		df[id] += h[1];
		at += 8 + (size_t)h[0];
	}
	v->remap = xmallocarray(v->g.n ? v->g.n : 1, sizeof *v->remap);
	for (size_t l = 0; l < v->g.n; l++) {
		v->remap[l] = tok_tab_get(&g, v->g.p[l], v->g.len[l], v->g.hash[l], 0, NULL);
		if (v->remap[l] == NOT_FOUND)
			die("a term of this rank's share is missing from the merged vocabulary");
	}
	tok_tab_free(&v->g);
	free(v->df);
	v->g = g;
	v->df = df;
	v->dfcap = dfcap;
	v->adopted = all;
}

void
tok_vocab_finish(struct tok_vocab *v, const struct tok_opts *o, size_t ndocs)
{
	double lo = o->min_df_prop ? o->min_df * (double)ndocs : o->min_df;
	double hi = o->max_df_prop ? o->max_df * (double)ndocs : o->max_df;
	size_t ng = v->g.n;
	unsigned char *drop = xcalloc(ng ? ng : 1, 1);
	struct lexer x;
	memset(&x, 0, sizeof x);
	for (size_t s = 0; s < o->nstop; s++) {
		/* lower-cased as the text is; one that is not all word characters can match
		 * no token */
		if (!tok_lex_lower(&x, o->stop[s], strlen(o->stop[s])) || x.len > UINT32_MAX)
			continue;
		uint32_t g = tok_tab_get(&v->g, x.w, (uint32_t)x.len, hash_bytes(x.w, x.len), 0, NULL);
		if (g != NOT_FOUND)
			drop[g] = 1;
	}
	free(x.w);
	v->keep = xmallocarray(ng ? ng : 1, sizeof *v->keep);
	for (size_t g = 0; g < ng; g++) {
		if (drop[g] || (double)v->df[g] < lo || (double)v->df[g] > hi) {
			v->keep[g] = NOT_FOUND;
			continue;
		}
		v->df[v->nkept] = v->df[g];
		v->keep[g] = (uint32_t)v->nkept++;
	}
	free(drop);
}

struct tc {
	uint32_t t, c;
};

static int
tc_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct tc *)a)->t, y = ((const struct tc *)b)->t;
	return (x > y) - (x < y);
}

/* A part's terms as kept terms (NOT_FOUND: dropped or unknown). */
static uint32_t *
kept_terms(const struct tok_vocab *v, const struct tok_part *p)
{
	const struct tab *t = &p->tab;
	uint32_t *k = xmallocarray(t->n ? t->n : 1, sizeof *k);
	for (size_t l = 0; l < t->n; l++) {
		uint32_t g = p->vocab == v ? p->map[l] :
		    tok_tab_get((struct tab *)&v->g, t->p[l], t->len[l], t->hash[l], 0, NULL);
		if (p->vocab == v && v->remap != NULL)
			g = v->remap[g];
		k[l] = g == NOT_FOUND ? NOT_FOUND : v->keep[g];
	}
	return k;
}

void
tok_count(const struct tok_vocab *v, struct tok_part *const *parts, size_t nparts,
    struct tok_counts *out)
{
	size_t *base = xmallocarray(nparts + 1, sizeof *base);
	uint32_t **kept = xcalloc(nparts ? nparts : 1, sizeof *kept);
	base[0] = 0;
	for (size_t i = 0; i < nparts; i++)
		base[i + 1] = base[i] + parts[i]->ndocs;
	size_t ndocs = base[nparts];
	uint64_t *ptr = xmallocarray(ndocs + 1, sizeof *ptr);
	ptr[0] = 0;

	#pragma omp parallel for schedule(dynamic, 1) if (nparts > 1)
	for (size_t i = 0; i < nparts; i++) {
		const struct tok_part *p = parts[i];
		uint32_t *k = kept[i] = kept_terms(v, p);
		for (size_t d = 0; d < p->ndocs; d++) {
			uint64_t m = 0;
			for (uint64_t e = p->dptr[d]; e < p->dptr[d + 1]; e++)
				m += k[p->term[e]] != NOT_FOUND;
			ptr[base[i] + d + 1] = m;
		}
	}
	for (size_t d = 0; d < ndocs; d++)
		ptr[d + 1] += ptr[d];
	uint64_t nnz = ptr[ndocs];
	out->rows = ndocs;
	out->cols = v->nkept;
	out->ptr = ptr;
	out->idx = xmallocarray(nnz ? nnz : 1, sizeof *out->idx);
	out->cnt = xmallocarray(nnz ? nnz : 1, sizeof *out->cnt);

	#pragma omp parallel if (nparts > 1)
	{
		size_t cap = 64;
		struct tc *buf = xmallocarray(cap, sizeof *buf);
		#pragma omp for schedule(dynamic, 1)
		for (size_t i = 0; i < nparts; i++) {
			const struct tok_part *p = parts[i];
			const uint32_t *k = kept[i];
			for (size_t d = 0; d < p->ndocs; d++) {
				uint64_t at = ptr[base[i] + d];
				size_t m = 0, want = (size_t)(ptr[base[i] + d + 1] - at);
				if (want > cap) {
					cap = 2 * want;
					buf = xreallocarray(buf, cap, sizeof *buf);
				}
				for (uint64_t e = p->dptr[d]; e < p->dptr[d + 1]; e++)
					if (k[p->term[e]] != NOT_FOUND)
						buf[m++] = (struct tc){k[p->term[e]], p->cnt[e]};
				/* kept numbers follow global first occurrence, local ones the
				 * part's: sorted again */
				if (m > 48)
					qsort(buf, m, sizeof *buf, tc_cmp);
				else
					for (size_t a = 1; a < m; a++) {
						struct tc x = buf[a];
						size_t b = a;
						for (; b > 0 && buf[b - 1].t > x.t; b--)
							buf[b] = buf[b - 1];
						buf[b] = x;
					}
				for (size_t a = 0; a < m; a++) {
					out->idx[at + a] = buf[a].t;
					out->cnt[at + a] = buf[a].c;
				}
			}
		}
		free(buf);
	}
	for (size_t i = 0; i < nparts; i++)
		free(kept[i]);
	free(kept);
	free(base);
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
	tok_tab_free(&v->g);
	free(v->keep);
	free(v->df);
	free(v->remap);
	free(v->adopted);
	free(v);
}
