/* clmatmul_cpu.c: -d cpu, and -d auto below what pays for an OpenCL platform: the
 * multiply on the host's -j threads in plain C, with no OpenCL loaded. Each entry of C
 * is its K products summed in float64 in the order k = 0, 1, ..., then alpha times the
 * sum plus beta C0 in float64, rounded once to the output's type: within the bound
 * every device's result keeps (clmatmul(1), --verify), and the same bytes whatever
 * the threads (a row of C is one thread's). */
#include <stdlib.h>
#include <string.h>

#include "clmatmul.h"
#include "err.h"

enum { ROWS = 4 };	/* rows of C a pass over op(B) computes */

/* Rows i0 .. i0 + nr - 1 of C, for inputs of type T: op(A)'s rows copied to float64
 * (arow, nr x k), then op(B)'s rows (or, transposed, its stored rows as columns)
 * applied to them. */
#define MM_ROWS(T, name)                                                               \
static void                                                                            \
name(const struct cm_problem *p, int ta, int tb, size_t i0, size_t nr, double *arow,   \
    double *acc)                                                                       \
{                                                                                      \
	const T *a = p->a, *b = p->b, *c0 = p->c0;                                     \
	T *c = p->c;                                                                   \
	const size_t m = p->m, n = p->n, k = p->k;                                     \
	for (size_t r = 0; r < nr; r++)                                                \
		for (size_t q = 0; q < k; q++)                                         \
			arow[r * k + q] = ta ? a[q * m + i0 + r] : a[(i0 + r) * k + q];\
	memset(acc, 0, nr * n * sizeof *acc);                                          \
	if (!tb) {                                                                     \
		for (size_t q = 0; q < k; q++) {                                       \
			const T *brow = b + q * n;                                     \
			for (size_t r = 0; r < nr; r++) {                              \
				const double av = arow[r * k + q];                     \
				double *ac = acc + r * n;                              \
				for (size_t j = 0; j < n; j++)                         \
					ac[j] += av * (double)brow[j];                 \
			}                                                              \
		}                                                                      \
	} else {                                                                       \
		for (size_t j = 0; j < n; j++) {                                       \
			const T *bcol = b + j * k;                                     \
			for (size_t r = 0; r < nr; r++) {                              \
				const double *ar = arow + r * k;                       \
				double s = 0;                                          \
				for (size_t q = 0; q < k; q++)                         \
					s += ar[q] * (double)bcol[q];                  \
				acc[r * n + j] = s;                                    \
			}                                                              \
		}                                                                      \
	}                                                                              \
	for (size_t r = 0; r < nr; r++)                                                \
		for (size_t j = 0; j < n; j++) {                                       \
			const size_t at = (i0 + r) * n + j;                            \
			double v = p->alpha * acc[r * n + j];                          \
			if (p->beta != 0)                                              \
				v += p->beta * (double)c0[at];                         \
			c[at] = (T)v;                                                  \
		}                                                                      \
}
MM_ROWS(float, rows_f32)
MM_ROWS(double, rows_f64)

void
cm_multiply_host(const struct cm_problem *p, int ta, int tb, enum dtype dt)
{
	const size_t groups = CEIL_DIV(p->m, (size_t)ROWS);
	/* threads only where there is work for them: starting them costs milliseconds */
	#pragma omp parallel if ((double)p->m * (double)p->n * (double)p->k > 1e6 && groups > 1)
	{
		double *arow = xmallocarray(mul_size(ROWS, MAX(p->k, (size_t)1), "op(A) rows"),
		    sizeof *arow);
		double *acc = xmallocarray(mul_size(ROWS, MAX(p->n, (size_t)1), "C rows"),
		    sizeof *acc);
		#pragma omp for schedule(dynamic, 1)
		for (size_t g = 0; g < groups; g++) {
			const size_t i0 = g * ROWS, nr = MIN((size_t)ROWS, p->m - i0);
			if (dt == DT_F64)
				rows_f64(p, ta, tb, i0, nr, arow, acc);
			else
				rows_f32(p, ta, tb, i0, nr, arow, acc);
		}
		free(arow);
		free(acc);
	}
}
