/* clmatmul_ref.c: the host side of --verify (a float64 reference, full or by
 * Freivalds' test and sampled entries) and the benchmark's data on the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clmatmul.h"
#include "err.h"
#include "rng.h"

void
cm_fill_host(void *x, size_t rows, size_t cols, enum dtype dt, uint64_t seed, uint64_t salt)
{
	const size_t n = rows * cols;
	#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++) {
		float v = cm_uniform(seed, salt, i);
		if (dt == DT_F64)
			((double *)x)[i] = v;
		else
			((float *)x)[i] = v;
	}
}

/* Element (i, j) of a stored rows x cols matrix, or of its transpose. */
static inline double
get(const void *x, enum dtype dt, size_t cols, int trans, size_t i, size_t j)
{
	size_t at = trans ? j * cols + i : i * cols + j;
	return dt == DT_F64 ? ((const double *)x)[at] : (double)((const float *)x)[at];
}

/* op(X) as a float64 matrix, r x c, row-major. */
static double *
to_f64(const void *x, enum dtype dt, size_t r, size_t c, int trans)
{
	double *d = xmallocarray(mul_size(r, c, "verify"), sizeof *d);
	const size_t scols = trans ? r : c;	/* columns of the stored matrix */
	#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < r; i++)
		for (size_t j = 0; j < c; j++)
			d[i * c + j] = get(x, dt, scols, trans, i, j);
	return d;
}

/* The entry check: |got - ref| <= tol, where the caller's bound mag is the sum of
 * absolute terms. NaN anywhere fails. */
static int
entry_ok(double got, double ref, double tol)
{
	return fabs(got - ref) <= tol;
}

/* Reference value and magnitude of entry (i, j) from op(A) (m x k, row-major f64) and
 * op(B)^T (n x k, row-major f64). */
static void
dot(const double *ar, const double *bt, size_t k, double *val, double *mag)
{
	double s = 0, g = 0;
	for (size_t l = 0; l < k; l++) {
		double t = ar[l] * bt[l];
		s += t;
		g += fabs(t);
	}
	*val = s;
	*mag = g;
}

int
cm_verify(const struct cm_problem *p, int ta, int tb, enum dtype dt, double eps_in, double eps,
    uint64_t seed, char *msg, size_t msgsize)
{
	const size_t m = p->m, n = p->n, k = p->k;
	const double factor = eps_in + ((double)k + 2) * eps;
	const double alpha = p->alpha, beta = p->beta;
	/* op(A) rows and op(B) columns in float64, both k-contiguous */
	double *a = to_f64(p->a, dt, m, k, ta);
	double *bt = to_f64(p->b, dt, n, k, !tb);
	int bad = 0;
	double worst = 0;

#define C_AT(i, j) get(p->c, dt, n, 0, (i), (j))
#define C0_AT(i, j) (beta != 0 ? get(p->c0, dt, n, 0, (i), (j)) : 0.0)
	/* Each entry against the bound: full when the product is small, else a sample. */
	int full = (double)m * (double)n * (double)k <= 1 << 27;
	size_t samples = full ? m * n : 16384;
	struct rng r;
	rng_seed(&r, seed ^ 0x5EEDF00DULL);
	size_t *si = xmallocarray(samples, sizeof *si), *sj = xmallocarray(samples, sizeof *sj);
	for (size_t s = 0; s < samples; s++) {
		if (full) {
			si[s] = s / n;
			sj[s] = s % n;
		} else if (s < 256) {	/* the last row and column: the edge tiles */
			si[s] = s % 2 ? m - 1 : rng_below(&r, m);
			sj[s] = s % 2 ? rng_below(&r, n) : n - 1;
		} else {
			si[s] = rng_below(&r, m);
			sj[s] = rng_below(&r, n);
		}
	}
	size_t first_bad = samples;
	#pragma omp parallel for schedule(dynamic, 64) reduction(max : worst)
	for (size_t s = 0; s < samples; s++) {
		size_t i = si[s], j = sj[s];
		double v, g;
		dot(a + i * k, bt + j * k, k, &v, &g);
		double c0 = C0_AT(i, j);
		double ref = alpha * v + beta * c0;
		double tol = factor * (fabs(alpha) * g + fabs(beta * c0));
		double got = C_AT(i, j);
		if (!entry_ok(got, ref, tol)) {
			#pragma omp critical(cm_verify_bad)
			if (s < first_bad) {
				first_bad = s;
				snprintf(msg, msgsize, "C[%zu][%zu] = %.9g, reference %.9g "
				    "(tolerance %.3g)", i, j, got, ref, tol);
			}
		} else if (tol > 0) {
			worst = MAX(worst, fabs(got - ref) / tol);
		}
	}
	bad = first_bad < samples;
	free(si);
	free(sj);

	/* Freivalds: C x against alpha op(A) (op(B) x) + beta C0 x for random signs x,
	 * each row within the sum of its entries' bounds. */
	if (!bad && !full) {
		double *x = xmallocarray(n, sizeof *x), *bx = xmallocarray(k, sizeof *bx);
		double *bxa = xmallocarray(k, sizeof *bxa);
		for (size_t j = 0; j < n; j++)
			x[j] = rng_next(&r) >> 63 ? 1.0 : -1.0;
		/* op(B) x and |op(B)| |x|, a band of k at a time (bt is k-contiguous) */
		#pragma omp parallel for schedule(static)
		for (size_t l0 = 0; l0 < k; l0 += 256) {
			const size_t l1 = MIN(k, l0 + 256);
			for (size_t l = l0; l < l1; l++)
				bx[l] = bxa[l] = 0;
			for (size_t j = 0; j < n; j++)
				for (size_t l = l0; l < l1; l++) {
					bx[l] += bt[j * k + l] * x[j];
					bxa[l] += fabs(bt[j * k + l]);
				}
		}
		size_t row_bad = m;
		#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < m; i++) {
			double y = 0, z = 0, g = 0, cabs = 0;
			for (size_t j = 0; j < n; j++) {
				double cij = C_AT(i, j);
				y += cij * x[j];
				cabs += fabs(cij);
				if (beta != 0) {
					double c0 = C0_AT(i, j);
					z += beta * c0 * x[j];
					g += fabs(beta * c0);
				}
			}
			double ab = 0, aba = 0;
			for (size_t l = 0; l < k; l++) {
				ab += a[i * k + l] * bx[l];
				aba += fabs(a[i * k + l]) * bxa[l];
			}
			z += alpha * ab;
			g += fabs(alpha) * aba;
			/* float64 sums of n and k terms add their own (tiny) rounding */
			double tol = factor * g + 4 * (double)(n + k) * 0x1p-53 * (g + cabs);
			if (!(fabs(y - z) <= tol)) {
				#pragma omp critical(cm_verify_bad)
				if (i < row_bad) {
					row_bad = i;
					snprintf(msg, msgsize, "row %zu: C x = %.9g, but alpha A (B x) "
					    "+ beta C0 x = %.9g (tolerance %.3g; Freivalds' test)", i,
					    y, z, tol);
				}
			}
		}
		bad = row_bad < m;
		free(x);
		free(bx);
		free(bxa);
	}
	free(a);
	free(bt);
	if (!bad)
		snprintf(msg, msgsize, "%s, largest error %.3g of the tolerance",
		    full ? "every entry" : "Freivalds' test and 16384 sampled entries", worst);
	return bad;
#undef C_AT
#undef C0_AT
}
