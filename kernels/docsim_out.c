/* docsim_out.c: docsim's result lines: QUERY<TAB>DOC<TAB>SCORE for the top-k lists
 * (formatted on every thread, written in row order) and for the pairs above a
 * threshold (sorted first), ids from --ids or record numbers; and the similarity
 * matrix through the dense writer. The program's own output, apart from the
 * computation. */
#include <math.h>
#include <omp.h>
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
	uint64_t v = (uint64_t)i + 1;
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

/* A growable text buffer for one thread's lines. */
struct tbuf {
	char *p;
	size_t n, cap;
};

static char *
tb_room(struct tbuf *b, size_t need)
{
	if (b->n + need > b->cap) {
		b->cap = MAX(2 * b->cap, b->n + need + 4096);
		b->p = xrealloc(b->p, b->cap);
	}
	return b->p + b->n;
}

static void
tb_line(struct tbuf *b, const struct docs *qr, size_t qi, const struct docs *cr, size_t ci, float s)
{
	char *p = tb_room(b, id_len(qr, qi) + id_len(cr, ci) + 64), *p0 = p;
	double v = s;
	if (fabs(v) < 5e-7)
		v = 0;	/* no "-0.000000" */
	p += fmt_id(p, qr, qi);
	*p++ = '\t';
	p += fmt_id(p, cr, ci);
	*p++ = '\t';
	p += fmt_fixed(p, v, 6);
	*p++ = '\n';
	b->n += (size_t)(p - p0);
}

#define OUT_BATCH 65536

static void
write_topk(output *o, const struct ds_job *job, const struct docs *qr, const struct docs *cr)
{
	size_t rows = job->nq, k = job->k;
	int nt = omp_get_max_threads();
	struct tbuf *tb = xcalloc((size_t)nt, sizeof *tb);
	for (size_t b0 = 0; b0 < rows; b0 += OUT_BATCH) {
		size_t b1 = MIN(rows, b0 + OUT_BATCH);
		#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num(), T = omp_get_num_threads();
			size_t a = b0 + (b1 - b0) * (size_t)t / (size_t)T;
			size_t z = b0 + (b1 - b0) * (size_t)(t + 1) / (size_t)T;
			tb[t].n = 0;
			for (size_t r = a; r < z; r++)
				for (size_t i = 0; i < k && job->top_i[r * k + i] != DS_NONE; i++)
					tb_line(&tb[t], qr, r, cr, (size_t)job->top_i[r * k + i], job->top_s[r * k + i]);
			#pragma omp barrier
			#pragma omp single
			for (int u = 0; u < T; u++)
				if (tb[u].n > 0)
					out_write(o, tb[u].p, tb[u].n);
		}
	}
	for (int t = 0; t < nt; t++)
		free(tb[t].p);
	free(tb);
}

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

static void
write_pairs(output *o, struct ds_job *job, const struct docs *qr, const struct docs *cr)
{
	struct tbuf tb = {NULL, 0, 0};
	qsort(job->pairs, job->npairs, sizeof *job->pairs, pair_cmp);
	for (size_t i = 0; i < job->npairs; i++) {
		const struct ds_pair *p = &job->pairs[i];
		tb_line(&tb, qr, p->a, cr, p->b, p->s);
		if (tb.n >= ((size_t)1 << 20)) {
			out_write(o, tb.p, tb.n);
			tb.n = 0;
		}
	}
	if (tb.n > 0)
		out_write(o, tb.p, tb.n);
	free(tb.p);
}

void
ds_write(output *o, struct ds_job *job, const struct docs *qr, const struct docs *cr, int fmt)
{
	if (job->mode == DS_MATRIX) {
		struct matrix m = {job->nq, job->n, DT_F32, job->mat};
		for (size_t i = 0; i < job->nq * job->n; i++)
			job->mat[i] += 0.0f;	/* no "-0" */
		mat_write(o, &m, fmt);
	} else if (job->mode == DS_PAIRS) {
		write_pairs(o, job, qr, cr);
	} else {
		write_topk(o, job, qr, cr);
	}
}
