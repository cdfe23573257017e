/* skyline_work.c: how much work a classic skyline is, for -d auto (skyline_run.h).
 *
 * The sort-filter compares each row with the skyline found so far, so its work grows
 * as n times the skyline's size s, and s depends on the data far more than on n
 * (hundreds of rows for a million independent ones, a third of them when the columns
 * are anti-correlated). s is estimated from the skylines of evenly spaced samples of
 * 128 and 512 rows: s(n) = s(512) (n / 512)^a, where a = log4(s(512) / s(128)) is how
 * fast the skyline grew between them (a few thousand comparisons; exact for n <= 512).
 * The ranking adds SKY_WORK_RANK comparisons a value (skyline_tune.h). */
#include <math.h>
#include <stdlib.h>

#include "err.h"
#include "skyline_run.h"
#include "skyline_tune.h"

enum { SAMPLE = 512 };

/* Whether a is no worse than b everywhere and better somewhere (smaller is better). */
static int
dominates(const double *a, const double *b, size_t d)
{
	int lt = 0;
	for (size_t j = 0; j < d; j++) {
		if (a[j] > b[j])
			return 0;
		lt |= a[j] < b[j];
	}
	return lt;
}

/* The size of the skyline of the m rows at v (d values each), by a window of the rows
 * not dominated so far (block-nested loops). */
static size_t
skyline_size(const double *v, size_t m, size_t d)
{
	size_t *win = xmallocarray(MAX(m, 1), sizeof *win), w = 0;

	for (size_t i = 0; i < m; i++) {
		const double *p = v + i * d;
		size_t k, kept = 0;
		for (k = 0; k < w && !dominates(v + win[k] * d, p, d); k++)
			;
		if (k < w)
			continue;
		for (k = 0; k < w; k++)
			if (!dominates(p, v + win[k] * d, d))
				win[kept++] = win[k];
		win[kept++] = i;
		w = kept;
	}
	free(win);
	return w;
}

double
sky_classic_work(const struct sky_classic *job)
{
	size_t n = job->n, d = job->d, m = MIN(n, (size_t)SAMPLE);
	if (n == 0)
		return 0;
	/* the sample, each column turned so that smaller is better */
	double *v = xmallocarray(mul_size(m, d, "sample"), sizeof *v);
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < d; j++) {
			double x = sky_value(job, i * n / m, j);
			v[i * d + j] = job->maxpref[j] ? -x : x;
		}
	double s = (double)skyline_size(v, m, d);
	if (n > m) {
		/* every fourth row of the sample: 128 rows */
		size_t q = m / 4;
		for (size_t i = 0; i < q; i++)
			for (size_t j = 0; j < d; j++)
				v[i * d + j] = v[4 * i * d + j];
		double s4 = (double)skyline_size(v, q, d);
		double a = fmin(1.0, fmax(0.0, log(s / s4) / log(4.0)));
		s = fmin((double)n, s * pow((double)n / (double)m, a));
	}
	free(v);
	return (double)n * s + SKY_WORK_RANK * (double)n * (double)d;
}
