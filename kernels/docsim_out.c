/* docsim_out.c: docsim's result lines: QUERY<TAB>DOC<TAB>SCORE for the top-k lists
 * and for the pairs above a threshold (sorted first), ids from --ids or record numbers,
 * formatted on the -j threads and written in order (out_par); and the similarity
 * matrix through the dense writer. The program's own output, apart from the
 * computation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "docs.h"
#include "docsim.h"
#include "err.h"
#include "output.h"

static size_t
fmt_id(char *b, const struct docs *r, size_t i)
{
	if (r->id != NULL) {
		memcpy(b, r->id[i], r->idlen[i]);
		return r->idlen[i];
	}
	char t[24];
	size_t n = 0;
	uint64_t v = (uint64_t)i + 1 + r->before;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (size_t k = 0; k < n; k++)
		b[k] = t[n - 1 - k];
	return n;
}

static size_t
id_len(const struct docs *r, size_t i)
{
	return r->id ? r->idlen[i] : 20;
}

/* A score as it is printed, in every line and the matrix, on every device: a cosine
 * (unit vectors: every --weight but none) clamped to [-1, 1], which float rounding
 * passes by an ulp (a document against itself can sum to 1.0000001); no -0. */
static float
shown(const struct ds_job *job, float s)
{
	if (job->unit)
		s = s > 1.0f ? 1.0f : s < -1.0f ? -1.0f : s;
	return s + 0.0f;
}

static void
put_line(struct obuf *b, const struct docs *qr, size_t qi, const struct docs *cr, size_t ci, float s)
{
	char *p = obuf_room(b, id_len(qr, qi) + id_len(cr, ci) + 64), *p0 = p;
	double v = s;
	if (fabs(v) < 5e-7)
		v = 0;	/* no "-0.000000" */
	p += fmt_id(p, qr, qi);
	*p++ = '\t';
	p += fmt_id(p, cr, ci);
	*p++ = '\t';
	p += fmt_fixed(p, v, 6);
	*p++ = '\n';
	b->len += (size_t)(p - p0);
}

struct lines {
	const struct ds_job *job;
	const struct docs *qr, *cr;
};

/* out_par's formatter for the top-k lists of rows [first, first + count). */
static void
topk_lines(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct lines *l = ctx;
	size_t k = l->job->k;
	for (size_t r = first; r < first + count; r++) {
		const float *s = l->job->top_s + r * k;
		const int32_t *i = l->job->top_i + r * k;
		for (size_t t = 0; t < k && i[t] != DS_NONE; t++)
			put_line(b, l->qr, r, l->cr, (size_t)i[t], shown(l->job, s[t]));
	}
}

/* out_par's formatter for the (sorted) pairs [first, first + count). */
static void
pair_lines(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct lines *l = ctx;
	for (size_t i = first; i < first + count; i++) {
		const struct ds_pair *p = &l->job->pairs[i];
		put_line(b, l->qr, p->a, l->cr, p->b, shown(l->job, p->s));
	}
}

#define OUT_LINES 16384		/* lines a chunk of out_par, about */

static int
pair_cmp(const void *x, const void *y)
{
	const struct ds_pair *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->s != b->s)
		return a->s > b->s ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

void
ds_write(output *o, struct ds_job *job, const struct docs *qr, const struct docs *cr, int fmt)
{
	if (job->mode == DS_MATRIX) {
		struct matrix m = {job->nq, job->n, DT_F32, job->mat};
		for (size_t i = 0; i < job->nq * job->n; i++)
			job->mat[i] = shown(job, job->mat[i]);
		mat_write(o, &m, fmt);
	} else if (job->mode == DS_PAIRS) {
		struct lines l = {job, qr, cr};
		qsort(job->pairs, job->npairs, sizeof *job->pairs, pair_cmp);
		out_par(o, job->npairs, OUT_LINES, pair_lines, &l);
	} else {
		struct lines l = {job, qr, cr};
		out_par(o, job->nq, MAX(OUT_LINES / MAX(job->k, (size_t)1), (size_t)1), topk_lines, &l);
	}
}
