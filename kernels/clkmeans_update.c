/* clkmeans_update.c: the fixed-point sums behind the update: each column's scale, new
 * centroids from the sums (finalize), and empty clusters relocated on the host by
 * editing the sums as scikit-learn's rule says. Apart because they share one
 * contract: the fixed-point scales that make the sums exact and the order free. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "ranks.h"

/* Fixed point per column: sums of n values below 2^62 in magnitude; per column the
 * tolerance (mean variance times tol). Every sum here is of integers (each value
 * rounded to fixed point alone), so neither the threads nor the devices nor the ranks
 * that hold the rows change a bit of it: the mean in the update's own fixed point, the
 * squared deviations in one of their own, scaled by the column's largest value. given:
 * k x d centroids from the user (or NULL), whose values bound the scale of k-means++'s
 * weights too. */
void
km_column_stats(struct kmset *s, double tol, const double *given)
{
	const size_t n = s->n, d = s->d, blk = 4096, nb = CEIL_DIV(n, blk);
	const float *X = s->hx;
	double *big = xcalloc(d, sizeof *big);
	float *mx = xcalloc(MAX(nb, (size_t)1) * d, sizeof *mx);
	uint64_t *part = xcalloc(MAX(nb, (size_t)1) * d, sizeof *part);
	int64_t *acc = xcalloc(d, sizeof *acc);

	/* blocks of rows, row-major as the rows lie; each block's integers (and maxima)
	 * apart, added after: any order gives the same. One block runs on this thread:
	 * waking the others costs more (milliseconds on a busy machine). */
	#pragma omp parallel for schedule(static) if (nb > 1)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++)
				mx[b * d + i] = fmaxf(mx[b * d + i], fabsf(X[r * d + i]));
	for (size_t b = 0; b < nb; b++)
		for (size_t i = 0; i < d; i++)
			big[i] = fmax(big[i], mx[b * d + i]);
	ranks_max_f64(big, d);
	int lg = 0;
	while (lg < 63 && ((uint64_t)1 << lg) < s->ntotal + 1)
		lg++;
	s->fscale = xmallocarray(d, sizeof *s->fscale);
	s->iscale = xmallocarray(d, sizeof *s->iscale);
	double *sc = xmallocarray(d, sizeof *sc);
	for (size_t i = 0; i < d; i++) {
		int e = 0;
		frexpf((float)big[i], &e);	/* big < 2^e */
		int p = big[i] > 0 ? 62 - lg - e : 0;
		p = MAX(-126, MIN(127, p));
		s->fscale[i] = ldexpf(1.0f, p);
		s->iscale[i] = ldexp(1.0, -p);
		/* squared deviations below (2 big)^2 < 2^(2e + 2), n of them below 2^62 */
		sc[i] = ldexp(1.0, 62 - lg - 2 * e - 2);
	}
	/* the mean: the update's conversion of each value, summed */
	const float *fs = s->fscale;
	#pragma omp parallel for schedule(static) if (nb > 1)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++)
				part[b * d + i] += (uint64_t)km_fix((double)(X[r * d + i] * fs[i]));
	for (size_t b = 0; b < nb; b++)
		for (size_t i = 0; i < d; i++)
			acc[i] = (int64_t)((uint64_t)acc[i] + part[b * d + i]);
	ranks_sum_i64(acc, d);
	double *mean = xmallocarray(d, sizeof *mean);
	for (size_t i = 0; i < d; i++)
		mean[i] = (double)acc[i] * s->iscale[i] / (double)s->ntotal;
	memset(part, 0, MAX(nb, (size_t)1) * d * sizeof *part);
	#pragma omp parallel for schedule(static) if (nb > 1)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++) {
				double v = X[r * d + i] - mean[i];
				part[b * d + i] += (uint64_t)km_fix(v * v * sc[i]);
			}
	memset(acc, 0, d * sizeof *acc);
	for (size_t b = 0; b < nb; b++)
		for (size_t i = 0; i < d; i++)
			acc[i] = (int64_t)((uint64_t)acc[i] + part[b * d + i]);
	ranks_sum_i64(acc, d);
	double var = 0, bound = 0;
	for (size_t i = 0; i < d; i++) {
		var += (double)acc[i] / sc[i] / (double)s->ntotal;
		double c = big[i];
		for (size_t j = 0; given != NULL && j < s->k; j++)
			c = fmax(c, fabs(given[j * d + i]));
		bound += (big[i] + c) * (big[i] + c);
	}
	s->tol_abs = var / (double)d * tol;
	/* k-means++'s weights: a row's squared distance to a centroid (a row, or a given
	 * one) is at most bound, a little more in float; n of them below 2^62 */
	int e = 0;
	frexp(bound * 1.01, &e);
	s->kscale = ldexpf(1.0f, MAX(-126, MIN(127, 62 - lg - e)));
	free(big);
	free(mx);
	free(part);
	free(acc);
	free(sc);
	free(mean);
}

/* The set's column scales to device m. */
void
km_upload_stats(struct kmset *s, struct km *m)
{
	m->fscale = s->fscale;
	m->fscale_m = km_buf(m, s->d * 4);
	m->iscale = km_buf(m, s->d * m->rsz);
	km_write_buf(m, m->fscale_m, 0, s->d * 4, s->fscale);
	km_write_real(m, m->iscale, s->d, s->iscale);
}

/* New centroids into the other set (mode 1: from the sums), or the current set from
 * its own c64 (mode 0); then the scalars of the set written. */
void
km_finalize(struct km *m, int mode, int npart)
{
	struct cset *from = &m->set[m->cur], *to = &m->set[mode ? 1 - m->cur : m->cur];
	cl_int k = (cl_int)m->k, kpad = (cl_int)m->kpad, md = mode;
	cl_long np = npart ? (cl_long)m->ngroups : 0;
	cl_mem cTt = to->cTt ? to->cTt : to->cT;	/* written with TF32 only */
	km_args(m->finalize, 15, A(md), A(k), A(kpad), A(m->sums), A(m->counts), A(m->iscale),
	    A(from->c64), A(to->c64), A(to->c64T), A(to->cT), A(cTt), A(to->cn), A(to->cnrm),
	    A(m->shift), A(m->empty));
	km_launch(m, m->finalize, CEIL_DIV(m->kpad, (size_t)64) * 64, 64);
	km_args(m->scalars, 7, A(k), A(m->shift), A(m->empty), A(to->cnrm), A(m->part), A(np),
	    A(m->state));
	km_launch(m, m->scalars, m->t.wg, m->t.wg);
}

/* Uploads k x d centroids as the current set. */
void
km_set_centroids(struct km *m, const double *C)
{
	km_write_real(m, m->set[m->cur].c64, m->k * m->d, C);
	km_finalize(m, 0, 0);
}

/* ---- empty clusters ---- */

/* Whether row a lies farther from its centroid than row b (the lower index first
 * among equals). */
static int
farther(const double *dist, size_t a, size_t b)
{
	return dist[a] > dist[b] || (dist[a] == dist[b] && a < b);
}

/* Puts row r at position i of the heap of h rows (the nearest on top) and moves it
 * down to its place. */
static void
sift_down(const double *dist, size_t *heap, size_t h, size_t i, size_t r)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h)
			break;
		if (c + 1 < h && farther(dist, heap[c], heap[c + 1]))
			c++;
		if (!farther(dist, r, heap[c]))
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = r;
}

/* The m rows farthest from their centroids, farthest first (a heap of m). */
static size_t
farthest(const double *dist, size_t n, size_t mcount, size_t *out)
{
	size_t h = 0;
	for (size_t r = 0; r < n; r++) {
		if (h < mcount) {
			size_t i = h++;
			while (i > 0 && farther(dist, out[(i - 1) / 2], r)) {
				out[i] = out[(i - 1) / 2];
				i = (i - 1) / 2;
			}
			out[i] = r;
		} else if (farther(dist, r, out[0])) {
			sift_down(dist, out, h, 0, r);
		}
	}
	/* The nearest on top to the end, in turn: farthest-first order. */
	size_t got = h;
	while (h > 1) {
		size_t top = out[0];
		h--;
		sift_down(dist, out, h, 0, out[h]);
		out[h] = top;
	}
	return got;
}

/* Orders candidates (distance, global row) farthest first, the lower row among equals. */
static int
cmp_far(const void *a, const void *b)
{
	const double *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] > y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The e rows farthest from their centroids over all ranks, as global indexes into g:
 * each rank's own e farthest, gathered, and the e farthest of those. Returns how many
 * (fewer than e only when there are fewer rows). */
static size_t
farthest_all(struct kmset *s, size_t e, uint64_t *g)
{
	size_t *far = xmallocarray(e, sizeof *far);
	size_t got = farthest(s->dist, s->n, e, far);
	if (s->ranks == 1) {
		for (size_t i = 0; i < got; i++)
			g[i] = far[i];
		free(far);
		return got;
	}
	const size_t R = (size_t)s->ranks, me = (size_t)ranks_rank();
	int64_t *v = xcalloc(R * e * 2, sizeof *v);
	for (size_t i = 0; i < got; i++) {
		memcpy(&v[(me * e + i) * 2], &s->dist[far[i]], 8);
		v[(me * e + i) * 2 + 1] = (int64_t)(s->row0 + far[i] + 1);	/* 0: none */
	}
	ranks_sum_i64(v, R * e * 2);
	double *c = xmallocarray(R * e * 2, sizeof *c);
	size_t nc = 0;
	for (size_t i = 0; i < R * e; i++)
		if (v[i * 2 + 1] != 0) {
			memcpy(&c[nc * 2], &v[i * 2], 8);
			c[nc * 2 + 1] = (double)(v[i * 2 + 1] - 1);
			nc++;
		}
	qsort(c, nc, 2 * sizeof *c, cmp_far);
	got = MIN(nc, e);
	for (size_t i = 0; i < got; i++)
		g[i] = (uint64_t)c[i * 2 + 1];
	free(c);
	free(v);
	free(far);
	return got;
}

/*
 * scikit-learn's rule: the e empty clusters, in increasing order, take the e rows
 * farthest from their centroids (farthest first; the lower row among equals): the
 * row's values leave its cluster's sum and become the empty cluster's. Labels stay.
 * Nothing moves when every row sits on its centroid. The sums are the totals of every
 * device and rank (s->sums), edited alike on every rank from s->dist and s->lab: each
 * relocated row's fixed-point values and label come from the rank that holds it.
 * Returns how many rows moved (0: none); row[t] (global) now makes cluster to[t]. One
 * rule for the devices (km_relocate) and the host path (kernels/clkmeans_host.c).
 */
size_t
km_relocate_sums(struct kmset *s, int e, uint64_t *row, size_t *to)
{
	const size_t n = s->n, d = s->d, k = s->k;
	double big = 0;
	for (size_t r = 0; r < n; r++)
		big = fmax(big, s->dist[r]);
	ranks_max_f64(&big, 1);
	if (!(big > 0))
		return 0;
	uint64_t *g = xmallocarray((size_t)e, sizeof *g);
	size_t got = farthest_all(s, (size_t)e, g);
	/* each row's fixed-point values and its label, from its holder */
	int64_t *q = xcalloc(got * (d + 1), sizeof *q);
	for (size_t t = 0; t < got; t++) {
		if (g[t] < s->row0 || g[t] >= s->row0 + n)
			continue;
		size_t r = g[t] - s->row0;
		for (size_t i = 0; i < d; i++)
			/* The kernel's conversion: an exact float product, rounded half even. */
			q[t * (d + 1) + i] = km_fix((double)(s->hx[r * d + i] * s->fscale[i]));
		q[t * (d + 1) + d] = s->lab[r];
	}
	if (s->ranks > 1)
		ranks_sum_i64(q, got * (d + 1));
	int64_t *sums = s->sums, *counts = s->sums + k * d;
	size_t idx = 0;
	for (size_t j = 0; j < k && idx < got; j++) {
		if (counts[j] != 0)
			continue;
		const int64_t *v = q + idx * (d + 1);
		size_t old = (size_t)v[d];
		row[idx] = g[idx];
		to[idx] = j;
		idx++;
		for (size_t i = 0; i < d; i++) {
			sums[old * d + i] = (int64_t)((uint64_t)sums[old * d + i] - (uint64_t)v[i]);
			sums[j * d + i] = v[i];
		}
		counts[j] = 1;
		counts[old]--;
	}
	vlog("relocated %d empty cluster%s", e, e == 1 ? "" : "s");
	free(g);
	free(q);
	return idx;
}

/* km_relocate_sums on the devices' rows and sums. Returns whether anything moved. */
int
km_relocate(struct kmset *s, int e, int have_dists)
{
	if (!have_dists)
		for (int i = 0; i < s->nd; i++)
			km_rowdist_pass(&s->dev[i]);
	km_pull_rows(s, 1);
	if (!s->exchange)
		km_pull_sums(s);
	uint64_t *row = xmallocarray((size_t)e, sizeof *row);
	size_t *to = xmallocarray((size_t)e, sizeof *to);
	size_t moved = km_relocate_sums(s, e, row, to);
	/* with delta (one device, one rank: it holds the rows), the sums must stay those
	 * of the labels in prev: each relocated row is its new cluster's now */
	struct km *m0 = &s->dev[0];
	for (size_t t = 0; t < moved && m0->delta; t++) {
		const cl_int jv = (cl_int)to[t];
		km_write_buf(m0, m0->prev, (row[t] - s->row0) * 4, 4, &jv);
	}
	if (moved > 0)
		km_push_sums(s);
	free(row);
	free(to);
	return moved > 0;
}
