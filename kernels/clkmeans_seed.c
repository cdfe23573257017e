/* clkmeans_seed.c: the initial centroids: k distinct random rows, or greedy k-means++
 * with its distances and potentials on the devices. Apart because seeding runs once
 * a run, before Lloyd's iterations, with a kernel of its own (kpp).
 *
 * Both pick rows by their global index (all ranks' rows in input order) and draw from
 * one generator that every rank steps alike, so the rows picked do not depend on how
 * the rows are split. k-means++'s weights are fixed-point integers (kpp's kscale):
 * their running sums, and the potentials the candidates are compared by, are exact,
 * whatever the order in which devices and ranks add them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clkmeans_dev.h"
#include "ranks.h"
#include "rng.h"

/* k distinct rows, uniformly (a partial Fisher-Yates shuffle of the global indexes). */
void
km_init_random(struct kmset *s, struct rng *g, double *C)
{
	const uint64_t n = s->ntotal;
	uint64_t *idx = xmallocarray(n, sizeof *idx);
	for (uint64_t i = 0; i < n; i++)
		idx[i] = i;
	for (size_t j = 0; j < s->k; j++) {
		uint64_t r = j + rng_below(g, n - j), t = idx[j];
		idx[j] = idx[r];
		idx[r] = t;
	}
	km_rows(s, idx, (int)s->k, C);
	free(idx);
}

/* One k-means++ pass on device m: L candidates (L x d in cand) against its rows. */
static void
kpp_pass(struct km *m, const double *cand, int L, int update, float kscale)
{
	if (m->n == 0)
		return;
	km_write_real(m, m->cand, (size_t)L * m->d, cand);
	cl_int cl_L = L, upd = update;
	cl_long ngt = (cl_long)m->ngroups;
	for (size_t b = 0; b < m->nbatch; b++) {
		cl_long row0;
		cl_int nb = km_bind(m, b, &row0);
		cl_long g0 = row0 / m->t.rg;
		km_args(m->kpp, 11, A(m->X), A(nb), A(m->cand), A(cl_L), A(m->dists), A(row0),
		    A(m->part), A(g0), A(ngt), A(upd), A(kscale));
		km_launch(m, m->kpp, CEIL_DIV((size_t)nb, (size_t)m->t.rg) * m->t.wg, m->t.wg);
	}
}

/* The weight of a row: kpp's conversion, an exact float product rounded half even. */
static int64_t
weight(float closest, float kscale)
{
	return km_fix((double)(closest * kscale));
}

/* numpy's searchsorted(cumsum(closest), v) over the rows of every rank: the first row
 * whose running sum reaches target, the last row if none does. Ranks, then devices,
 * then groups of rows by their partial sums, then the rows of one group. pc[i]: device
 * i's group sums; rank_w, rank_n: every rank's total weight and rows. Returns the
 * global index, on every rank. */
static uint64_t
kpp_find(struct kmset *s, int64_t **pc, const int64_t *rank_w, const uint64_t *rank_n,
    int64_t target)
{
	int64_t rest;
	int owner = km_search(rank_w, rank_n, s->ranks, target, &rest);
	int64_t found = 0;	/* the row + 1, on its rank */
	if (owner == (s->ranks == 1 ? 0 : ranks_rank())) {
		int64_t dw[CLX_MAX_MANY] = {0};
		uint64_t dn[CLX_MAX_MANY];
		for (int i = 0; i < s->nd; i++) {
			dn[i] = s->dev[i].n;
			for (size_t j = 0; j < s->dev[i].ngroups; j++)
				dw[i] += pc[i][j];
		}
		int di = km_search(dw, dn, s->nd, rest, &rest);
		struct km *m = &s->dev[di];
		const size_t rg = (size_t)m->t.rg;
		int grp = km_search(pc[di], NULL, (int)m->ngroups, rest, &rest);
		size_t first = (size_t)grp * rg, cnt = MIN(rg, m->n - first), r;
		float *vals = xmallocarray(cnt, sizeof *vals);
		km_read_buf(m, m->dists, first * 4, cnt * 4, vals);
		int64_t cum = 0;
		for (r = 0; r < cnt - 1; r++) {
			cum += weight(vals[r], s->kscale);
			if (cum >= rest)
				break;
		}
		free(vals);
		found = (int64_t)(s->row0 + m->first + first + r) + 1;
	}
	if (s->ranks > 1)
		ranks_sum_i64(&found, 1);
	return (uint64_t)(found - 1);
}

/* Every rank's total weight (this rank's from its devices' group sums) and, once,
 * every rank's rows. */
static void
rank_totals(struct kmset *s, int64_t **pc, int64_t *rank_w)
{
	int me = s->ranks == 1 ? 0 : ranks_rank();
	memset(rank_w, 0, (size_t)s->ranks * sizeof *rank_w);
	for (int i = 0; i < s->nd; i++)
		for (size_t j = 0; j < s->dev[i].ngroups; j++)
			rank_w[me] += pc[i][j];
	if (s->ranks > 1)
		ranks_sum_i64(rank_w, (size_t)s->ranks);
}

/* Greedy k-means++ as scikit-learn does it: the first centroid a uniform row, then for
 * each next one 2 + ln k candidates drawn with probability proportional to the squared
 * distance, keeping the one that lowers the potential most (the first among equals).
 * The distances and potentials are computed on the devices; each device's `dists'
 * holds its rows' closest distance. */
void
km_init_kpp(struct kmset *s, struct rng *g, double *C)
{
	const int L = 2 + (int)log((double)s->k);
	const size_t d = s->d;
	const float inf = INFINITY;
	int64_t *pc[CLX_MAX_MANY], *part[CLX_MAX_MANY];
	int64_t *rank_w = xcalloc((size_t)s->ranks, sizeof *rank_w);
	uint64_t *rank_n = xcalloc((size_t)s->ranks, sizeof *rank_n);
	int64_t pot_t[64];
	uint64_t rows[64];
	double *cand = xmallocarray((size_t)L * d, sizeof *cand);

	rank_n[s->ranks == 1 ? 0 : ranks_rank()] = s->n;
	if (s->ranks > 1)
		ranks_sum_i64((int64_t *)rank_n, (size_t)s->ranks);
	for (int i = 0; i < s->nd; i++) {
		struct km *m = &s->dev[i];
		pc[i] = xcalloc(MAX(m->ngroups, (size_t)1), sizeof *pc[i]);
		part[i] = xcalloc(MAX(m->ngroups, (size_t)1) * (size_t)L, sizeof *part[i]);
		if (m->n > 0)
			CL_CHECK(clEnqueueFillBuffer(m->x.queue, m->dists, &inf, sizeof inf, 0,
			    m->n * 4, 0, NULL, NULL));
	}
	rows[0] = rng_below(g, s->ntotal);
	km_rows(s, rows, 1, C);
	for (int i = 0; i < s->nd; i++)
		kpp_pass(&s->dev[i], C, 1, 1, s->kscale);
	for (int i = 0; i < s->nd; i++)
		km_read_buf(&s->dev[i], s->dev[i].part, 0, s->dev[i].ngroups * 8, pc[i]);
	rank_totals(s, pc, rank_w);
	int64_t pot = 0;
	for (int r = 0; r < s->ranks; r++)
		pot += rank_w[r];
	for (size_t c = 1; c < s->k; c++) {
		for (int t = 0; t < L; t++) {
			double v = rng_uniform(g) * (double)pot;
			rows[t] = kpp_find(s, pc, rank_w, rank_n, (int64_t)ceil(v));
		}
		km_rows(s, rows, L, cand);
		for (int i = 0; i < s->nd; i++)
			kpp_pass(&s->dev[i], cand, L, 0, s->kscale);
		memset(pot_t, 0, sizeof pot_t);
		for (int i = 0; i < s->nd; i++) {
			struct km *m = &s->dev[i];
			km_read_buf(m, m->part, 0, m->ngroups * (size_t)L * 8, part[i]);
			for (int t = 0; t < L; t++)
				for (size_t j = 0; j < m->ngroups; j++)
					pot_t[t] += part[i][(size_t)t * m->ngroups + j];
		}
		if (s->ranks > 1)
			ranks_sum_i64(pot_t, (size_t)L);
		int best = 0;
		for (int t = 1; t < L; t++)
			if (pot_t[t] < pot_t[best])
				best = t;
		pot = pot_t[best];
		for (int i = 0; i < s->nd; i++)
			memcpy(pc[i], part[i] + (size_t)best * s->dev[i].ngroups,
			    s->dev[i].ngroups * sizeof *pc[i]);
		rank_totals(s, pc, rank_w);
		memcpy(C + c * d, cand + (size_t)best * d, d * sizeof *C);
		for (int i = 0; i < s->nd; i++)
			kpp_pass(&s->dev[i], C + c * d, 1, 1, s->kscale);
	}
	for (int i = 0; i < s->nd; i++) {
		free(pc[i]);
		free(part[i]);
	}
	free(rank_w);
	free(rank_n);
	free(cand);
}
