/* skyline_hull.c: the convex hull of the query points and the choice of arithmetic
 * for the spatial skyline (CPU code that both paths use). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "skyline.h"
#include "skyline_run.h"

static int
cmp_xy(const void *a, const void *b)
{
	const float *p = a, *q = b;
	if (p[0] != q[0])
		return p[0] < q[0] ? -1 : 1;
	if (p[1] != q[1])
		return p[1] < q[1] ? -1 : 1;
	return 0;
}

/* Andrew's monotone chain with the exact orientation test: collinear points are
 * dropped, so a segment keeps its two ends and one repeated point stays one. */
size_t
sky_hull(const float *q, size_t n, float *hull)
{
	float *p = xmallocarray(mul_size(n, 2, "hull"), sizeof *p);
	size_t m = 0, k = 0;

	memcpy(p, q, n * 2 * sizeof *p);
	for (size_t i = 0; i < n; i++)	/* -0 and +0 are one point */
		for (int c = 0; c < 2; c++)
			if (p[2 * i + c] == 0)
				p[2 * i + c] = 0;
	qsort(p, n, 2 * sizeof *p, cmp_xy);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || cmp_xy(p + 2 * (m - 1), p + 2 * i) != 0) {
			p[2 * m] = p[2 * i];
			p[2 * m + 1] = p[2 * i + 1];
			m++;
		}
	if (m <= 2) {
		memcpy(hull, p, m * 2 * sizeof *p);
		free(p);
		return m;
	}
	/* Lower hull left to right, then upper hull right to left (each point is pushed
	 * at most once a pass); the result has at most m vertices. */
	float *h = xmallocarray(mul_size(2 * m + 1, 2, "hull"), sizeof *h);
#define ORIENT(a, b, c) sky_orient(h[2 * (a)], h[2 * (a) + 1], h[2 * (b)], h[2 * (b) + 1], \
	    p[2 * (c)], p[2 * (c) + 1], SKY_TOL)
	for (size_t i = 0; i < m; i++) {
		while (k >= 2 && ORIENT(k - 2, k - 1, i) <= 0)
			k--;
		h[2 * k] = p[2 * i];
		h[2 * k + 1] = p[2 * i + 1];
		k++;
	}
	size_t lower = k + 1;
	for (size_t i = m - 1; i-- > 0;) {
		while (k >= lower && ORIENT(k - 2, k - 1, i) <= 0)
			k--;
		h[2 * k] = p[2 * i];
		h[2 * k + 1] = p[2 * i + 1];
		k++;
	}
#undef ORIENT
	k--;	/* the first point closes the chain */
	memcpy(hull, h, k * 2 * sizeof *h);
	free(h);
	free(p);
	return k;
}

/* The exponent of the lowest set bit and of the highest, for a nonzero float. */
static void
float_bits(float v, int *lo, int *hi)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	u &= 0x7fffffffu;
	int e = (int)(u >> 23);
	uint32_t m = u & 0x7fffffu;
	int base = -149;
	if (e > 0) {
		m |= 0x800000u;
		base = e - 150;
	}
	*lo = base + __builtin_ctz(m);
	*hi = base + 31 - __builtin_clz(m);
}

double
sky_tolerance(const float *xy, size_t n, const float *hull, size_t h)
{
	int lo = 1000, hi = -1000;

	#pragma omp parallel for reduction(min:lo) reduction(max:hi) if (n > 100000)
	for (size_t i = 0; i < 2 * n; i++) {
		if (xy[i] != 0) {
			int l, u;
			float_bits(xy[i], &l, &u);
			lo = MIN(lo, l);
			hi = MAX(hi, u);
		}
	}
	for (size_t i = 0; i < 2 * h; i++) {
		if (hull[i] != 0) {
			int l, u;
			float_bits(hull[i], &l, &u);
			lo = MIN(lo, l);
			hi = MAX(hi, u);
		}
	}
	/* Every coordinate is k * 2^lo with |k| < 2^(hi - lo + 1): with at most 24 bits,
	 * differences take 25, squares 50 and their sums 51, all exact in double. */
	return hi < lo || hi - lo + 1 <= 24 ? 0 : SKY_TOL;
}
