/* clkmeans_host.c: the native host path: Lloyd's k-means in plain C on the host's CPU
 * (OpenMP threads over the rows), loading no OpenCL. It computes what the OpenCL
 * program computes, in the same arithmetic, so its output is PoCL's byte for byte:
 *
 *   labels     each row's nearest centroid by float64 direct distances, summed column
 *              by column as the kernels' sqdist does (a fused multiply-add a column,
 *              as PoCL's compiler contracts it), the lowest index among equals: the
 *              label the exact kernel gives a row near a tie, and the one the float32
 *              assign's error bound proves for every other row
 *   update     the same 64-bit fixed-point sums (km_column_stats' scales), so the
 *              centroids are the same float64 values
 *   shift      each centroid's squared move, added over the centroids in the scalars
 *              kernel's order (a tree over the work-group of the CPU row of
 *              clkmeans_tune.h), so the tolerance stops at the same iteration
 *   seeding    the same generator and the same integer k-means++ weights
 *   empty      km_relocate_sums, the devices' rule itself
 *   inertia    km_inertia, the devices' 128-bit fixed point
 *
 * The devices' code keeps what is shared (clkmeans_update.c, clkmeans_seed.c,
 * clkmeans_split.c); here a struct kmset with no devices holds the rows, the scales and
 * the sums. Under mpirun each rank computes its share and the ranks add their integers,
 * as the devices' split does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clkmeans_dev.h"
#include "clkmeans_run.h"
#include "clkmeans_tune.h"
#include "input.h"
#include "ranks.h"
#include "rng.h"
#include "progress.h"
#include "timer.h"

/* The least products of a pass that are worth OpenMP's threads: below it a pass runs on
 * this thread alone, as waking the others costs more (tens of milliseconds on a
 * machine whose cores are busy: OpenMP's workers spin, then sleep). */
#define KM_HOST_PAR_WORK (1 << 18)

/* The kernels' sqdist: float64, column by column; PoCL contracts t * t + s into one
 * fused multiply-add (OpenCL C's FP_CONTRACT is on), and so does this. */
static inline double
sqdist(const float *x, const double *c, size_t d)
{
	double s = 0;
	for (size_t i = 0; i < d; i++) {
		double t = (double)x[i] - c[i];
		s = fma(t, t, s);
	}
	return s;
}

/* What clmat_open left unread (an NPY file's data), into malloc'd memory. */
static void
read_rows(struct clmat *X)
{
	if (X->s == NULL)
		return;
	size_t rows = X->m.rows;
	void *p = xmallocarray(MAX(rows * X->m.cols, (size_t)1), dtype_size(X->m.dtype));
	size_t got = rows > 0 ? dstream_read(X->s, rows, X->m.dtype, p) : 0;
	if (got != rows)	/* dstream_read dies on short data: a programming error */
		die("%s: %zu rows read of %zu", in_name(X->in), got, rows);
	X->m.data = p;
	dstream_close(X->s);
	in_close(X->in);
	X->s = NULL;
	X->in = NULL;
}

/* Centroids a block of assign: each its own sum, column by column in sqdist's order,
 * so the compiler computes a block's sums side by side in vector registers. 64: eight
 * AVX-512 registers of sums in flight hide the multiply-adds' latency; on the
 * development machine (20000 x 32, 10 iterations, one thread) k = 256 took 0.68 s of
 * CPU with blocks of 16, 0.25 with 32, 0.17 with 64 and 128, 1.05 with 8. */
enum { KM_HOST_KB = 64 };

/* Labels every row with its nearest centroid of C; returns how many changed. */
static int64_t
assign(struct kmset *s, const double *C)
{
	const size_t n = s->n, d = s->d, k = s->k;
	double *CT = xmallocarray(k * d, sizeof *CT);	/* column-major: CT[i k + j] */
	for (size_t j = 0; j < k; j++)
		for (size_t i = 0; i < d; i++)
			CT[i * k + j] = C[j * d + i];
	int64_t moved = 0;
	#pragma omp parallel for schedule(static) reduction(+:moved) \
	    if ((double)n * k * d >= KM_HOST_PAR_WORK)
	for (size_t r = 0; r < n; r++) {
		const float *x = s->hx + r * d;
		double best = INFINITY, acc[KM_HOST_KB];
		int bj = 0;
		for (size_t j0 = 0; j0 < k; j0 += KM_HOST_KB) {
			const size_t m = MIN((size_t)KM_HOST_KB, k - j0);
			for (size_t q = 0; q < KM_HOST_KB; q++)
				acc[q] = 0;
			for (size_t i = 0; i < d; i++) {
				const double xi = x[i], *c = CT + i * k + j0;
				if (m == KM_HOST_KB) {
					for (size_t q = 0; q < KM_HOST_KB; q++) {
						double t = xi - c[q];
						acc[q] = fma(t, t, acc[q]);
					}
				} else {
					for (size_t q = 0; q < m; q++) {
						double t = xi - c[q];
						acc[q] = fma(t, t, acc[q]);
					}
				}
			}
			/* the lowest index among equals (the first centroid always taken) */
			for (size_t q = 0; q < m; q++)
				if (acc[q] < best || j0 + q == 0) {
					best = acc[q];
					bj = (int)(j0 + q);
				}
		}
		moved += s->lab[r] != bj;
		s->lab[r] = bj;
	}
	free(CT);
	return moved;
}

/* Each row's squared distance to its centroid of C, into s->dist; returns their sum
 * (for -v only: not exact). */
static double
rowdist(struct kmset *s, const double *C)
{
	const size_t n = s->n, d = s->d;
	double sum = 0;
	#pragma omp parallel for schedule(static) reduction(+:sum) \
	    if ((double)n * d >= KM_HOST_PAR_WORK)
	for (size_t r = 0; r < n; r++) {
		s->dist[r] = sqdist(s->hx + r * d, C + (size_t)s->lab[r] * d, d);
		sum += s->dist[r];
	}
	return sum;
}

/* The update's fixed-point sums and counts of the labels into s->sums (then moved in
 * its tail), added over the ranks. */
static void
sums(struct kmset *s, int64_t moved)
{
	const size_t n = s->n, d = s->d, k = s->k, kd = k * d;
	uint64_t *sm = (uint64_t *)s->sums;
	memset(s->sums, 0, (kd + k + 2) * sizeof *s->sums);
	for (size_t r = 0; r < n; r++) {
		size_t l = (size_t)s->lab[r];
		const float *x = s->hx + r * d;
		for (size_t i = 0; i < d; i++)
			sm[l * d + i] += (uint64_t)km_fix((double)(x[i] * s->fscale[i]));
		s->sums[kd + l]++;
	}
	s->sums[kd + k + KM_TAIL_MOVED] = moved;
	if (s->ranks > 1)
		ranks_sum_i64(s->sums, kd + k + 2);
}

/* The finalize kernel (mode 1): new centroids Cn from the sums, an empty cluster's
 * kept from C; returns the total squared shift as the scalars kernel adds it (wg
 * work-items, each every wg-th centroid, then a tree), with *empty the clusters
 * without rows. */
static double
finalize(struct kmset *s, const double *C, double *Cn, int wg, int *empty)
{
	const size_t d = s->d, k = s->k;
	const int64_t *counts = s->sums + k * d;
	double *shift = xmallocarray(k, sizeof *shift), *ls = xcalloc((size_t)wg, sizeof *ls);
	*empty = 0;
	for (size_t j = 0; j < k; j++) {
		const int64_t cnt = counts[j];
		double sh = 0;
		for (size_t i = 0; i < d; i++) {
			const double old = C[j * d + i];
			const double c = cnt > 0 ? (double)s->sums[j * d + i] * s->iscale[i] /
			    (double)cnt : old;
			sh = fma(c - old, c - old, sh);
			Cn[j * d + i] = c;
		}
		shift[j] = sh;
		*empty += cnt == 0;
	}
	for (int t = 0; t < wg; t++)
		for (size_t j = (size_t)t; j < k; j += (size_t)wg)
			ls[t] += shift[j];
	for (int w = wg / 2; w > 0; w >>= 1)
		for (int t = 0; t < w; t++)
			ls[t] += ls[t + w];
	double total = ls[0];
	free(shift);
	free(ls);
	return total;
}

/* Lloyd's iterations from the centroids in C, which end as the final ones; leaves the
 * labels and distances in s->lab and s->dist and returns the inertia. The devices'
 * lloyd (clkmeans_dev.c), step for step. */
static double
lloyd(struct kmset *s, double *C, int max_iter, int tol_on, int wg, int *n_iter)
{
	const size_t k = s->k, d = s->d;
	double *Cn = xmallocarray(k * d, sizeof *Cn);
	uint64_t *row = xmallocarray(k, sizeof *row);
	size_t *to = xmallocarray(k, sizeof *to);
	int it, strict = 0;

	for (size_t r = 0; r < s->n; r++)
		s->lab[r] = -1;
	for (it = 0; it < max_iter; it++) {
		int64_t moved = assign(s, C);
		double inertia = verbose ? rowdist(s, C) : 0;
		sums(s, moved);
		moved = s->sums[k * d + k + KM_TAIL_MOVED];
		int empty;
		double shift = finalize(s, C, Cn, wg, &empty);
		if (empty > 0) {
			if (!verbose)
				rowdist(s, C);
			if (km_relocate_sums(s, empty, row, to) > 0)
				shift = finalize(s, C, Cn, wg, &empty);
		}
		memcpy(C, Cn, k * d * sizeof *C);
		progress_add(1);
		if (verbose) {
			if (s->ranks > 1)
				ranks_sum_f64(&inertia, 1);	/* -v's only: not exact */
			vlog("iteration %d: inertia %.10g, moved %lld, shift %.6g", it + 1, inertia,
			    (long long)moved, shift);
		}
		if (tol_on && moved == 0) {
			strict = 1;
			vlog("converged at iteration %d: no label changed", it + 1);
			it++;
			break;
		}
		if (tol_on && shift <= s->tol_abs) {
			vlog("converged at iteration %d: shift %.6g within tolerance %.6g", it + 1,
			    shift, s->tol_abs);
			it++;
			break;
		}
	}
	*n_iter = it;
	if (!strict)
		assign(s, C);	/* labels that match the final centroids */
	rowdist(s, C);
	free(Cn);
	free(row);
	free(to);
	return km_inertia(s);
}

/* ---- k-means++ ---- */

/* A row's weight: kpp's conversion, an exact float product rounded half even. */
static inline int64_t
weight(float closest, float kscale)
{
	return km_fix((double)(closest * kscale));
}

/* The total weight of the rows' min(closest, distance to c), each kept in closest
 * when update is set. */
static int64_t
kpp_pass(struct kmset *s, float *closest, const double *c, int update)
{
	const size_t n = s->n, d = s->d;
	uint64_t tot = 0;
	#pragma omp parallel for schedule(static) reduction(+:tot) \
	    if ((double)n * d >= KM_HOST_PAR_WORK)
	for (size_t r = 0; r < n; r++) {
		float m = fminf(closest[r], (float)sqdist(s->hx + r * d, c, d));
		if (update)
			closest[r] = m;
		tot += (uint64_t)weight(m, s->kscale);
	}
	return (int64_t)tot;
}

/* The global index of the first row whose running weight reaches target over every
 * rank's rows (the last row if none does): kpp_find of clkmeans_seed.c. */
static uint64_t
kpp_find(struct kmset *s, const float *closest, const int64_t *rank_w,
    const uint64_t *rank_n, int64_t target)
{
	int64_t rest;
	int owner = km_search(rank_w, rank_n, s->ranks, target, &rest);
	int64_t found = 0;	/* the row + 1, on its rank */
	if (owner == (s->ranks == 1 ? 0 : ranks_rank())) {
		int64_t cum = 0;
		size_t r;
		for (r = 0; r + 1 < s->n; r++) {
			cum += weight(closest[r], s->kscale);
			if (cum >= rest)
				break;
		}
		found = (int64_t)(s->row0 + r) + 1;
	}
	if (s->ranks > 1)
		ranks_sum_i64(&found, 1);
	return (uint64_t)(found - 1);
}

/* Greedy k-means++ as km_init_kpp does it on the devices. */
static void
init_kpp(struct kmset *s, struct rng *g, double *C)
{
	const int L = 2 + (int)log((double)s->k);
	const size_t d = s->d;
	const int me = s->ranks == 1 ? 0 : ranks_rank();
	float *closest = xmallocarray(MAX(s->n, (size_t)1), sizeof *closest);
	int64_t *rank_w = xcalloc((size_t)s->ranks, sizeof *rank_w);
	uint64_t *rank_n = xcalloc((size_t)s->ranks, sizeof *rank_n);
	double *cand = xmallocarray((size_t)L * d, sizeof *cand);
	int64_t pot_t[64];
	uint64_t rows[64];

	for (size_t r = 0; r < s->n; r++)
		closest[r] = INFINITY;
	rank_n[me] = s->n;
	if (s->ranks > 1)
		ranks_sum_i64((int64_t *)rank_n, (size_t)s->ranks);
	rows[0] = rng_below(g, s->ntotal);
	km_rows(s, rows, 1, C);
	rank_w[me] = kpp_pass(s, closest, C, 1);
	if (s->ranks > 1)
		ranks_sum_i64(rank_w, (size_t)s->ranks);
	int64_t pot = 0;
	for (int r = 0; r < s->ranks; r++)
		pot += rank_w[r];
	for (size_t c = 1; c < s->k; c++) {
		for (int t = 0; t < L; t++) {
			double v = rng_uniform(g) * (double)pot;
			rows[t] = kpp_find(s, closest, rank_w, rank_n, (int64_t)ceil(v));
		}
		km_rows(s, rows, L, cand);
		for (int t = 0; t < L; t++)
			pot_t[t] = kpp_pass(s, closest, cand + (size_t)t * d, 0);
		if (s->ranks > 1)
			ranks_sum_i64(pot_t, (size_t)L);
		int best = 0;
		for (int t = 1; t < L; t++)
			if (pot_t[t] < pot_t[best])
				best = t;
		pot = pot_t[best];
		memcpy(C + c * d, cand + (size_t)best * d, d * sizeof *C);
		memset(rank_w, 0, (size_t)s->ranks * sizeof *rank_w);
		rank_w[me] = kpp_pass(s, closest, C + c * d, 1);
		if (s->ranks > 1)
			ranks_sum_i64(rank_w, (size_t)s->ranks);
	}
	free(closest);
	free(rank_w);
	free(rank_n);
	free(cand);
}

/* ---- the whole run ---- */

void
km_host_run(struct clmat *X, const struct km_config *cfg, struct km_result *res)
{
	struct kmset s;
	memset(&s, 0, sizeof s);
	double t = now_sec();
	read_rows(X);
	phase_add(PH_READ, now_sec() - t);
	vlog("device: the host's CPU, native C (no OpenCL), %d thread%s", cli_threads(),
	    cli_threads() == 1 ? "" : "s");
	s.ranks = ranks_size();
	s.n = X->m.rows;
	s.d = X->m.cols;
	s.k = (size_t)cfg->k;
	s.row0 = cfg->row0;
	s.ntotal = cfg->ntotal ? cfg->ntotal : s.n;
	s.hx = X->m.data;
	const size_t n = s.n, d = s.d, k = s.k;
	if (s.ranks > 1)	/* as the devices' split says each rank's share */
		vlog("rank %d of %d: device 0 (the host's CPU): rows %llu to %llu, %zu rows",
		    ranks_rank(), s.ranks, (unsigned long long)s.row0,
		    (unsigned long long)(s.row0 + n), n);
	s.sums = xcalloc(k * d + k + 2, sizeof *s.sums);
	s.dist = xmallocarray(MAX(n, (size_t)1), sizeof *s.dist);
	s.lab = xmallocarray(MAX(n, (size_t)1), sizeof *s.lab);
	res->labels = xmallocarray(MAX(n, (size_t)1), sizeof *res->labels);
	res->dists = xmallocarray(MAX(n, (size_t)1), sizeof *res->dists);
	res->centroids = xmallocarray(k * d, sizeof *res->centroids);
	res->inertia = INFINITY;
	res->iterations = 0;
	/* the scalars kernel's work-group on PoCL's CPU device, whose shifts we add alike */
	const int wg = TUNE_PICK(clkmeans_tune_table, "cpu")->wg;
	double *C = xmallocarray(k * d, sizeof *C);

	if (cfg->assign_only) {
		t = now_sec();
		memcpy(C, cfg->centroids, k * d * sizeof *C);
		for (size_t r = 0; r < n; r++)
			s.lab[r] = -1;
		assign(&s, C);
		rowdist(&s, C);
		res->inertia = km_inertia(&s);
		memcpy(res->labels, s.lab, n * sizeof *res->labels);
		memcpy(res->dists, s.dist, n * sizeof *res->dists);
		memcpy(res->centroids, C, k * d * sizeof *C);
		phase_add(PH_COMPUTE, now_sec() - t);
		vlog("inertia %.10g", res->inertia);
		goto done;
	}

	t = now_sec();
	km_column_stats(&s, cfg->tol, cfg->init == KM_INIT_GIVEN ? cfg->centroids : NULL);
	phase_add("stats", now_sec() - t);
	struct rng g;
	rng_seed(&g, cfg->seed);
	int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
	for (int run = 0; run < runs; run++) {
		t = now_sec();
		if (cfg->init == KM_INIT_GIVEN)
			memcpy(C, cfg->centroids, k * d * sizeof *C);
		else if (cfg->init == KM_INIT_RANDOM)
			km_init_random(&s, &g, C);
		else
			init_kpp(&s, &g, C);
		phase_add("init", now_sec() - t);
		t = now_sec();
		int n_iter;
		double inertia = lloyd(&s, C, cfg->max_iter, cfg->tol > 0, wg, &n_iter);
		double t_all = now_sec() - t;
		phase_add(PH_COMPUTE, t_all);
		vlog("run %d: %d iterations in %.6f s, %.6f ms each, inertia %.10g", run + 1,
		    n_iter, t_all, 1e3 * t_all / MAX(n_iter, 1), inertia);
		if (run == 0 || inertia < res->inertia) {
			res->inertia = inertia;
			res->iterations = n_iter;
			memcpy(res->labels, s.lab, n * sizeof *res->labels);
			memcpy(res->dists, s.dist, n * sizeof *res->dists);
			memcpy(res->centroids, C, k * d * sizeof *C);
		}
	}
done:
	free(C);
	free(s.fscale);
	free(s.iscale);
	free(s.sums);
	free(s.dist);
	free(s.lab);
}
