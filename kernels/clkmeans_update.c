/* clkmeans_update.c: the fixed-point sums behind the update: each column's scale, new
 * centroids from the sums (finalize), and empty clusters relocated on the host by
 * editing the sums as scikit-learn's rule says. Apart because they share one
 * contract: the fixed-point scales that make the sums exact and the order free. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"

/* Fixed point per column: sums of n values below 2^62 in magnitude; per column the
 * tolerance (mean variance times tol). Deterministic: blocks of rows summed in order. */
void
km_column_stats(struct km *m, double tol)
{
	const size_t n = m->n, d = m->d, blk = 4096, nb = CEIL_DIV(n, blk);
	double *sum = xcalloc(nb * d, sizeof *sum), *sq = xcalloc(nb * d, sizeof *sq);
	float *mx = xcalloc(nb * d, sizeof *mx);
	double *mean = xcalloc(d, sizeof *mean);
	const float *X = m->hx;

	#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++) {
				sum[b * d + i] += X[r * d + i];
				mx[b * d + i] = fmaxf(mx[b * d + i], fabsf(X[r * d + i]));
			}
	for (size_t b = 0; b < nb; b++)
		for (size_t i = 0; i < d; i++)
			mean[i] += sum[b * d + i];
	for (size_t i = 0; i < d; i++)
		mean[i] /= (double)n;
	#pragma omp parallel for schedule(static)
	for (size_t b = 0; b < nb; b++)
		for (size_t r = b * blk; r < MIN(n, (b + 1) * blk); r++)
			for (size_t i = 0; i < d; i++) {
				double t = X[r * d + i] - mean[i];
				sq[b * d + i] += t * t;
			}
	double var = 0;
	int lg = 0;
	while (lg < 63 && ((uint64_t)1 << lg) < (uint64_t)n + 1)
		lg++;
	m->fscale = xmallocarray(d, sizeof *m->fscale);
	double *iscale = xmallocarray(d, sizeof *iscale);
	for (size_t i = 0; i < d; i++) {
		double v = 0;
		float big = 0;
		for (size_t b = 0; b < nb; b++) {
			v += sq[b * d + i];
			big = fmaxf(big, mx[b * d + i]);
		}
		var += v / (double)n;
		int e = 0;
		frexpf(big, &e);	/* big < 2^e */
		int p = big > 0 ? 62 - lg - e : 0;
		p = MAX(-126, MIN(127, p));
		m->fscale[i] = ldexpf(1.0f, p);
		iscale[i] = ldexp(1.0, -p);
	}
	m->tol_abs = var / (double)d * tol;
	m->fscale_m = km_buf(m, d * 4);
	m->iscale = km_buf(m, d * m->rsz);
	km_write_buf(m, m->fscale_m, 0, d * 4, m->fscale);
	km_write_real(m, m->iscale, d, iscale);
	free(iscale);
	free(sum);
	free(sq);
	free(mx);
	free(mean);
}

/* New centroids into the other set (mode 1: from the sums), or the current set from
 * its own c64 (mode 0); then the scalars of the set written. */
void
km_finalize(struct km *m, int mode, int npart)
{
	struct cset *from = &m->set[m->cur], *to = &m->set[mode ? 1 - m->cur : m->cur];
	cl_int k = (cl_int)m->k, kpad = (cl_int)m->kpad, md = mode;
	cl_long np = npart ? (cl_long)m->ngroups : 0;
	km_args(m->finalize, 14, A(md), A(k), A(kpad), A(m->sums), A(m->counts), A(m->iscale),
	    A(from->c64), A(to->c64), A(to->c64T), A(to->cT), A(to->cn), A(to->cnrm), A(m->shift),
	    A(m->empty));
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
static void
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
	while (h > 1) {
		size_t top = out[0];
		h--;
		sift_down(dist, out, h, 0, out[h]);
		out[h] = top;
	}
}

/*
 * scikit-learn's rule: the e empty clusters, in increasing order, take the e rows
 * farthest from their centroids (farthest first; the lower row among equals): the
 * row's values leave its cluster's sum and become the empty cluster's. Labels stay.
 * Nothing moves when every row sits on its centroid. Returns whether anything moved.
 */
int
km_relocate(struct km *m, int e, int have_dists)
{
	const size_t n = m->n, d = m->d, k = m->k;
	if (!have_dists)
		km_rowdist_pass(m);
	double *dist = xmallocarray(n, sizeof *dist);
	int *lab = xmallocarray(n, sizeof *lab);
	km_read_real(m, m->dists, 0, n, dist);
	km_read_buf(m, m->labels, 0, n * 4, lab);
	double big = 0;
	for (size_t r = 0; r < n; r++)
		big = fmax(big, dist[r]);
	int moved = 0;
	if (big > 0) {
		size_t *far = xmallocarray((size_t)e, sizeof *far);
		int64_t *sums = xmallocarray(k * d, sizeof *sums);
		int *counts = xmallocarray(k, sizeof *counts);
		farthest(dist, n, (size_t)e, far);
		km_read_buf(m, m->sums, 0, k * d * 8, sums);
		km_read_buf(m, m->counts, 0, k * 4, counts);
		size_t idx = 0;
		for (size_t j = 0; j < k && idx < (size_t)e; j++) {
			if (counts[j] != 0)
				continue;
			size_t r = far[idx++];
			size_t old = (size_t)lab[r];
			for (size_t i = 0; i < d; i++) {
				/* The kernel's conversion: an exact float product, rounded half even. */
				int64_t q = llrint((double)(m->hx[r * d + i] * m->fscale[i]));
				sums[old * d + i] = (int64_t)((uint64_t)sums[old * d + i] - (uint64_t)q);
				sums[j * d + i] = q;
			}
			counts[j] = 1;
			counts[old]--;
		}
		km_write_buf(m, m->sums, 0, k * d * 8, sums);
		km_write_buf(m, m->counts, 0, k * 4, counts);
		vlog("relocated %d empty cluster%s", e, e == 1 ? "" : "s");
		moved = 1;
		free(far);
		free(sums);
		free(counts);
	}
	free(dist);
	free(lab);
	return moved;
}

