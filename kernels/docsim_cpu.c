/* docsim_cpu.c: the native CPU path (OpenMP over query rows: all of them, or the
 * job's rows [r0, r1) for a worker of docsim_split.c; a row's arithmetic is its own).
 *
 * Sparse vectors: an inverted index of the corpus; each row adds its terms' postings
 * into a float64 accumulator, in ascending term order, so score(i,j) and score(j,i) are
 * the same sum. Dense vectors: blocks of rows against each corpus row, float64 dots.
 * Every row then goes through one selection (top-k, threshold pairs or matrix row). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "docsim.h"
#include "err.h"
#include "progress.h"

/* Less work (multiply-adds, ds_work) runs on one thread: a millisecond or so, less than
 * waking the others can cost on a busy machine. */
#define PAR_WORK 1e6

/* Pairs found by one thread. */
struct pairvec {
	struct ds_pair *p;
	size_t n, cap;
};

static void
pv_push(struct pairvec *v, uint32_t a, uint32_t b, float s)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 1024;
		v->p = xreallocarray(v->p, v->cap, sizeof *v->p);
	}
	v->p[v->n++] = (struct ds_pair){a, b, s};
}

/* A row's top-k list. Up to HEAP_K entries it is kept sorted (ds_insert, as the GPU
 * does); beyond, a candidate costs O(k) there, so the list is a binary heap with its
 * worst entry at the root, and is sorted once at the end: the same list, as ds_better
 * orders every candidate strictly. */
#define HEAP_K 32

struct topk {
	float *s;
	int32_t *i;
	size_t k;
	int heap;
};

/* The entry a candidate must beat to get in. */
static inline float *
topk_worst(struct topk *l)
{
	return l->heap ? &l->s[0] : &l->s[l->k - 1];
}

/* Offers (s, j); whether it got in. */
static int
topk_offer(struct topk *l, float s, int32_t j)
{
	size_t k = l->k;
	if (!l->heap) {
		if (!ds_better(s, j, l->s[k - 1], l->i[k - 1]))
			return 0;
		ds_insert(l->s, l->i, k, s, j);
		return 1;
	}
	if (!ds_better(s, j, l->s[0], l->i[0]))
		return 0;
	size_t p = 0;
	for (;;) {	/* sift the new root down below every worse child */
		size_t c = 2 * p + 1, w = p;
		float ws = s;
		int32_t wi = j;
		if (c < k && ds_better(ws, wi, l->s[c], l->i[c]))
			w = c, ws = l->s[c], wi = l->i[c];
		if (c + 1 < k && ds_better(ws, wi, l->s[c + 1], l->i[c + 1]))
			w = c + 1;
		if (w == p)
			break;
		l->s[p] = l->s[w];
		l->i[p] = l->i[w];
		p = w;
	}
	l->s[p] = s;
	l->i[p] = j;
	return 1;
}

struct cand {
	float s;
	int32_t i;
};

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return ds_better(x->s, x->i, y->s, y->i) ? -1 : ds_better(y->s, y->i, x->s, x->i);
}

/* The heap into ds_better's order, the empty entries last. */
static void
topk_finish(struct topk *l)
{
	if (!l->heap)
		return;
	struct cand *c = xmallocarray(l->k, sizeof *c);
	for (size_t t = 0; t < l->k; t++)
		c[t] = (struct cand){l->s[t], l->i[t]};
	qsort(c, l->k, sizeof *c, cand_cmp);
	for (size_t t = 0; t < l->k; t++) {
		l->s[t] = c[t].s;
		l->i[t] = c[t].i;
	}
	free(c);
}

/* One row's scores: acc[j] for every corpus row j. touched (nt of them), when not NULL,
 * lists the j that were written; every other acc[j] is exactly 0. mark[j] is set for
 * the touched ones. */
static void
finish_row(struct ds_job *job, size_t r, const double *acc, const uint32_t *touched, size_t nt,
    const unsigned char *mark, struct pairvec *pv)
{
	size_t n = job->n;
	int sym = job->sym;

	if (job->mode == DS_MATRIX) {
		float *row = job->mat + r * n;
		for (size_t j = 0; j < n; j++)
			row[j] = (float)acc[j] + 0.0f;
		return;
	}
	if (job->mode == DS_PAIRS) {
		/* all pairs: each once, from the lower index */
		size_t j0 = sym ? r + 1 : 0;
		if (touched == NULL || ds_passes(0.0f, job->use_thr, job->thr)) {
			for (size_t j = j0; j < n; j++) {
				float s = (float)acc[j];
				if (ds_passes(s, job->use_thr, job->thr))
					pv_push(pv, (uint32_t)r, (uint32_t)j, s);
			}
			return;
		}
		for (size_t t = 0; t < nt; t++) {
			size_t j = touched[t];
			float s = (float)acc[j];
			if (j >= j0 && ds_passes(s, job->use_thr, job->thr))
				pv_push(pv, (uint32_t)r, (uint32_t)j, s);
		}
		return;
	}
	size_t k = job->k;
	if (k == 0)
		return;
	struct topk l = {job->top_s + r * k, job->top_i + r * k, k, k > HEAP_K};
	for (size_t t = 0; t < k; t++) {
		l.s[t] = -INFINITY;
		l.i[t] = DS_NONE;
	}
	size_t cnt = touched ? nt : n;
	for (size_t t = 0; t < cnt; t++) {
		size_t j = touched ? touched[t] : t;
		if (sym && j == r)
			continue;
		float s = (float)acc[j];
		if (ds_passes(s, job->use_thr, job->thr))
			topk_offer(&l, s, (int32_t)j);
	}
	/* rows never touched score exactly 0: they fill the list when 0 still ranks */
	if (touched != NULL && ds_passes(0.0f, job->use_thr, job->thr) && !(*topk_worst(&l) > 0.0f)) {
		for (size_t j = 0; j < n; j++) {
			if (mark[j] || (sym && j == r))
				continue;
			if (!topk_offer(&l, 0.0f, (int32_t)j))
				break;	/* later rows have higher indexes: none ranks either */
		}
	}
	topk_finish(&l);
}

static void
collect_pairs(struct ds_job *job, struct pairvec *pv, int nthreads)
{
	size_t total = 0;
	for (int t = 0; t < nthreads; t++)
		total += pv[t].n;
	job->pairs = xmallocarray(total ? total : 1, sizeof *job->pairs);
	job->npairs = 0;
	for (int t = 0; t < nthreads; t++) {
		if (pv[t].n)
			memcpy(job->pairs + job->npairs, pv[t].p, pv[t].n * sizeof *pv[t].p);
		job->npairs += pv[t].n;
		free(pv[t].p);
	}
}

static void
cpu_sparse(struct ds_job *job)
{
	const struct csr *c = job->c, *q = job->sym ? job->c : job->q;
	size_t n = job->n, dim = c->cols;
	uint64_t nnz = csr_nnz(c);

	/* the inverted index: postings by term, rows ascending */
	uint64_t *cp = xcalloc(dim + 1, sizeof *cp);
	uint32_t *cdoc = xmallocarray(nnz ? nnz : 1, sizeof *cdoc);
	float *cval = xmallocarray(nnz ? nnz : 1, sizeof *cval);
	for (uint64_t e = 0; e < nnz; e++)
		cp[c->idx[e] + 1]++;
	for (size_t t = 0; t < dim; t++)
		cp[t + 1] += cp[t];
	uint64_t *fill = xmallocarray(dim + 1, sizeof *fill);
	memcpy(fill, cp, (dim + 1) * sizeof *fill);
	for (size_t r = 0; r < n; r++)
		for (uint64_t e = c->ptr[r]; e < c->ptr[r + 1]; e++) {
			uint64_t at = fill[c->idx[e]]++;
			cdoc[at] = (uint32_t)r;
			cval[at] = c->val[e];
		}
	free(fill);

	int nthreads = omp_get_max_threads();
	struct pairvec *pv = xcalloc((size_t)nthreads, sizeof *pv);
	size_t first = job->r0, end = job->r1 ? job->r1 : job->nq;
	#pragma omp parallel if (ds_work(job) > PAR_WORK)
	{
		double *acc = xcalloc(n ? n : 1, sizeof *acc);
		unsigned char *mark = xcalloc(n ? n : 1, 1);
		uint32_t *touched = xmallocarray(n ? n : 1, sizeof *touched);
		struct pairvec *mine = &pv[omp_get_thread_num()];
		#pragma omp for schedule(dynamic, 16)
		for (size_t r = first; r < end; r++) {
			size_t nt = 0;
			for (uint64_t e = q->ptr[r]; e < q->ptr[r + 1]; e++) {
				uint32_t t = q->idx[e];
				if (t >= dim)
					continue;
				double w = q->val[e];
				for (uint64_t p = cp[t]; p < cp[t + 1]; p++) {
					uint32_t j = cdoc[p];
					if (!mark[j]) {
						mark[j] = 1;
						touched[nt++] = j;
					}
					acc[j] += w * (double)cval[p];
				}
			}
			finish_row(job, r, acc, touched, nt, mark, mine);
			progress_add(n);
			for (size_t t = 0; t < nt; t++) {
				acc[touched[t]] = 0;
				mark[touched[t]] = 0;
			}
		}
		free(acc);
		free(mark);
		free(touched);
	}
	if (job->mode == DS_PAIRS)
		collect_pairs(job, pv, nthreads);
	free(pv);
	free(cp);
	free(cdoc);
	free(cval);
}

/* Fewer blocks of query rows than threads (a few queries against a large corpus, as a
 * search asks): the threads share each block's corpus rows instead, which would
 * otherwise leave all but one idle (one query against 999 x 100,000: 120 ms on one
 * thread of 16). Every acc[j] is still one ds_dot_fd, so the bytes are the same. */
static void
dense_few_rows(struct ds_job *job, const float *qx, size_t first, size_t end, struct pairvec *pv)
{
	size_t n = job->n, m = job->dim, rows = job->tune->cpu_rows;
	const float *x = job->cd;
	double *acc = xmallocarray(mul_size(rows, n ? n : 1, "scores"), sizeof *acc);
	for (size_t r0 = first; r0 < end; r0 += rows) {
		size_t r1 = MIN(end, r0 + rows);
		#pragma omp parallel for schedule(static)
		for (size_t j = 0; j < n; j++)
			for (size_t r = r0; r < r1; r++)
				acc[(r - r0) * n + j] = ds_dot_fd(qx + r * m, x + j * m, m);
		#pragma omp parallel for schedule(dynamic, 1)
		for (size_t r = r0; r < r1; r++)
			finish_row(job, r, acc + (r - r0) * n, NULL, 0, NULL, &pv[omp_get_thread_num()]);
		progress_add((r1 - r0) * n);
	}
	free(acc);
}

static void
cpu_dense(struct ds_job *job)
{
	size_t n = job->n, nq = job->nq, m = job->dim;
	const float *x = job->cd, *qx = job->sym ? job->cd : job->qd;
	int nthreads = omp_get_max_threads();
	struct pairvec *pv = xcalloc((size_t)nthreads, sizeof *pv);
	size_t first = job->r0, end = job->r1 ? job->r1 : nq;
	size_t rows = job->tune->cpu_rows, nblocks = CEIL_DIV(end - first, rows);
	const int par = ds_work(job) > PAR_WORK;

	if (par && nblocks < (size_t)nthreads) {
		dense_few_rows(job, qx, first, end, pv);
		nblocks = 0;	/* done */
	}
	#pragma omp parallel if (par && nblocks > 0)
	{
		double *acc = xmallocarray(mul_size(rows, n ? n : 1, "scores"), sizeof *acc);
		struct pairvec *mine = &pv[omp_get_thread_num()];
		#pragma omp for schedule(dynamic, 1)
		for (size_t b = 0; b < nblocks; b++) {
			size_t r0 = first + b * rows, r1 = MIN(end, r0 + rows);
			for (size_t j = 0; j < n; j++)
				for (size_t r = r0; r < r1; r++)
					acc[(r - r0) * n + j] = ds_dot_fd(qx + r * m, x + j * m, m);
			for (size_t r = r0; r < r1; r++)
				finish_row(job, r, acc + (r - r0) * n, NULL, 0, NULL, mine);
			progress_add((r1 - r0) * n);
		}
		free(acc);
	}
	if (job->mode == DS_PAIRS)
		collect_pairs(job, pv, nthreads);
	free(pv);
}

void
ds_cpu_run(struct ds_job *job)
{
	if (job->sparse)
		cpu_sparse(job);
	else
		cpu_dense(job);
}

double
ds_work(const struct ds_job *job)
{
	if (!job->sparse)
		return (double)job->nq * (double)job->n * (double)job->dim;
	const struct csr *c = job->c, *q = job->sym ? job->c : job->q;
	size_t dim = c->cols;
	uint64_t *df = xcalloc(dim + 1, sizeof *df);
	double w = 0;
	for (uint64_t e = 0; e < csr_nnz(c); e++)
		df[c->idx[e]]++;
	for (uint64_t e = 0; e < csr_nnz(q); e++)
		if (q->idx[e] < dim)
			w += (double)df[q->idx[e]];
	free(df);
	return w;
}
