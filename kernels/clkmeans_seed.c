/* clkmeans_seed.c: the initial centroids: k distinct random rows, or greedy k-means++
 * with its distances and potentials on the device. Apart because seeding runs once
 * a run, before Lloyd's iterations, with a kernel of its own (kpp). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "rng.h"

static void
copy_row(const struct km *m, size_t r, double *dst)
{
	for (size_t i = 0; i < m->d; i++)
		dst[i] = m->hx[r * m->d + i];
}

/* k distinct rows, uniformly (a partial Fisher-Yates shuffle). */
void
km_init_random(struct km *m, struct rng *g, double *C)
{
	size_t *idx = xmallocarray(m->n, sizeof *idx);
	for (size_t i = 0; i < m->n; i++)
		idx[i] = i;
	for (size_t j = 0; j < m->k; j++) {
		size_t r = j + (size_t)rng_below(g, m->n - j), t = idx[j];
		idx[j] = idx[r];
		idx[r] = t;
		copy_row(m, idx[j], C + j * m->d);
	}
	free(idx);
}

/* One k-means++ pass: L candidate rows against every row. */
static void
kpp_pass(struct km *m, const size_t *rows, int L, int update)
{
	double *cand = xmallocarray((size_t)L * m->d, sizeof *cand);
	for (int t = 0; t < L; t++)
		copy_row(m, rows[t], cand + (size_t)t * m->d);
	km_write_real(m, m->cand, (size_t)L * m->d, cand);
	free(cand);
	cl_int cl_L = L, upd = update;
	cl_long ngt = (cl_long)m->ngroups;
	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = km_bind(m, b, &row0);
		cl_long g0 = row0 / m->t.rg;
		km_args(m->kpp, 10, A(m->X), A(nb), A(m->cand), A(cl_L), A(m->dists), A(row0),
		    A(m->part), A(g0), A(ngt), A(upd));
		km_launch(m, m->kpp, CEIL_DIV((size_t)nb, (size_t)m->t.rg) * m->t.wg, m->t.wg);
	}
}

/* numpy's searchsorted(cumsum(closest), v): the first row whose running sum reaches
 * v, through the groups' partial sums pc; the last row if none does. */
static void
kpp_search(struct km *m, const double *pc, const double *v, int L, size_t *rows)
{
	const size_t rg = (size_t)m->t.rg;
	size_t *grp = xmallocarray((size_t)L, sizeof *grp);
	double *before = xmallocarray((size_t)L, sizeof *before);
	float *vals = xmallocarray((size_t)L * rg, sizeof *vals);

	for (int t = 0; t < L; t++) {
		double cum = 0;
		size_t g;
		for (g = 0; g < m->ngroups && cum + pc[g] < v[t]; g++)
			cum += pc[g];
		grp[t] = g;
		before[t] = cum;
		if (g < m->ngroups) {
			size_t first = g * rg, cnt = MIN(rg, m->n - first);
			CL_CHECK(clEnqueueReadBuffer(m->x.queue, m->dists, CL_FALSE, first * 4,
			    cnt * 4, vals + (size_t)t * rg, 0, NULL, NULL));
		}
	}
	CL_CHECK(clFinish(m->x.queue));
	for (int t = 0; t < L; t++) {
		if (grp[t] == m->ngroups) {
			rows[t] = m->n - 1;
			continue;
		}
		size_t first = grp[t] * rg, cnt = MIN(rg, m->n - first), r;
		double cum = before[t];
		for (r = 0; r < cnt - 1; r++) {
			cum += vals[(size_t)t * rg + r];
			if (cum >= v[t])
				break;
		}
		rows[t] = first + r;
	}
	free(grp);
	free(before);
	free(vals);
}

/* Greedy k-means++ as scikit-learn does it: the first centroid a uniform row, then for
 * each next one 2 + ln k candidates drawn with probability proportional to the squared
 * distance, keeping the one that lowers the potential most. The distances and
 * potentials are computed on the device; `dists' holds each row's closest distance. */
void
km_init_kpp(struct km *m, struct rng *g, double *C)
{
	const size_t ng = m->ngroups;
	const int L = 2 + (int)log((double)m->k);
	double *part = xmallocarray(ng * (size_t)L, sizeof *part);
	double *pc = xmallocarray(ng, sizeof *pc), *v = xmallocarray((size_t)L, sizeof *v);
	size_t rows[64];
	const float inf = INFINITY;

	CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->dists, &inf, sizeof inf, 0, m->n * 4, 0, NULL,
	    NULL));
	rows[0] = (size_t)rng_below(g, m->n);
	copy_row(m, rows[0], C);
	kpp_pass(m, rows, 1, 1);
	km_read_real(m, m->part, 0, ng, pc);
	double pot = 0;
	for (size_t i = 0; i < ng; i++)
		pot += pc[i];
	for (size_t c = 1; c < m->k; c++) {
		for (int t = 0; t < L; t++)
			v[t] = rng_uniform(g) * pot;
		kpp_search(m, pc, v, L, rows);
		kpp_pass(m, rows, L, 0);
		km_read_real(m, m->part, 0, ng * (size_t)L, part);
		int best = 0;
		double bestpot = INFINITY;
		for (int t = 0; t < L; t++) {
			double s = 0;
			for (size_t i = 0; i < ng; i++)
				s += part[(size_t)t * ng + i];
			if (s < bestpot) {
				bestpot = s;
				best = t;
			}
		}
		pot = bestpot;
		memcpy(pc, part + (size_t)best * ng, ng * sizeof *pc);
		copy_row(m, rows[best], C + c * m->d);
		kpp_pass(m, rows + best, 1, 1);
	}
	free(part);
	free(pc);
	free(v);
}

