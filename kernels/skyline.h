/* skyline.h: what the CPU and CUDA paths of skyline share.
 *
 * Classic skyline: each chosen column is replaced by its dense rank (equal values get
 * equal ranks, a max column is ranked in reverse), so dominance is an exact integer
 * comparison whatever the input's precision. Rows are filtered in the order of their
 * rank sum, which is strictly monotone under dominance: a dominating row always comes
 * first (sort-filter skyline). Two bit masks against each column's quartiles prune
 * most comparisons.
 *
 * Spatial skyline: coordinates are float32, widened to double. p dominates p' when it
 * is no farther from every hull vertex of Q and nearer to one. Squared distances are
 * compared in double with an error bound; inside the bound the sign is computed
 * exactly with floating-point expansions (Shewchuk). When every coordinate lies on a
 * grid small enough for double arithmetic to be exact, the bound is zero.
 *
 * Here only what both compute, static inline and HOSTDEV; the jobs and the interface
 * between skyline's files are in skyline_run.h. */
#ifndef SKYLINE_H
#define SKYLINE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hostdev.h"

#ifdef __CUDACC__
#define SKY_NOINLINE __noinline__
#else
#define SKY_NOINLINE __attribute__((noinline, unused))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A row's state during the filter. */
enum { SKY_ALIVE = 0, SKY_DOMINATED = 1, SKY_DUP = 2 };

/* Relative error bound for a squared distance or an orientation computed in double
 * from float32 coordinates (about 9 units in the last place; the analysis gives 4). */
#define SKY_TOL 1e-15

/* The first SKY_MASKDIMS columns take part in the quartile masks. */
#define SKY_MASKDIMS 16

/* Hull vertices the GPU path holds in constant memory; a larger hull runs on the CPU. */
#define SKY_GPU_MAXH 2048

/* ---- order-preserving keys ---- */

/* Unsigned keys that sort as the numbers do, with -0 equal to +0. */
static inline HOSTDEV uint32_t
sky_key32(float v)
{
	uint32_t u;
	if (v == 0)
		v = 0;
	memcpy(&u, &v, 4);
	return (u >> 31) ? ~u : u | 0x80000000u;
}

static inline HOSTDEV uint64_t
sky_key64(double v)
{
	uint64_t u;
	if (v == 0)
		v = 0;
	memcpy(&u, &v, 8);
	return (u >> 63) ? ~u : u | 0x8000000000000000ull;
}

/* ---- quartile masks ---- */

/* Bit j: the rank is above column j's median; bit 16+j: above the quartile of its
 * half. s can dominate p only if sky_mask_ok(mask(s), mask(p)). */
static inline HOSTDEV uint32_t
sky_mask_bits(uint32_t r, uint32_t q1, uint32_t med, uint32_t q3, int j)
{
	uint32_t hi = r > med;
	uint32_t lo2 = r > (hi ? q3 : q1);
	return (hi << j) | (lo2 << (16 + j));
}

static inline HOSTDEV int
sky_mask_ok(uint32_t ms, uint32_t mp)
{
	uint32_t x = ms & ~mp;
	uint32_t same = ~(ms ^ mp) & 0xffffu;
	return ((x & 0xffffu) | ((x >> 16) & same)) == 0;
}

/* ---- exact arithmetic (floating-point expansions) ---- */

static inline HOSTDEV void
sky_two_sum(double a, double b, double *x, double *y)
{
	double s = a + b;
	double bv = s - a;
	double av = s - bv;
	*x = s;
	*y = (a - av) + (b - bv);
}

static inline HOSTDEV void
sky_two_diff(double a, double b, double *x, double *y)
{
	double s = a - b;
	double bv = a - s;
	double av = s + bv;
	*x = s;
	*y = (a - av) + (bv - b);
}

static inline HOSTDEV void
sky_two_prod(double a, double b, double *x, double *y)
{
	double p = a * b;
	*x = p;
	*y = fma(a, b, -p);
}

/* Adds b to the nonoverlapping expansion e[0..m) (smallest first), dropping zeros. */
static inline HOSTDEV int
sky_grow(double *e, int m, double b)
{
	double q = b;
	int k = 0;
	for (int i = 0; i < m; i++) {
		double h;
		sky_two_sum(q, e[i], &q, &h);
		if (h != 0)
			e[k++] = h;
	}
	if (q != 0)
		e[k++] = q;
	return k;
}

/* The exact sign of sum over k < nt of sg[k] * (a[k] - b[k]) * (c[k] - d[k]), for
 * doubles that came from float32 (nothing overflows or underflows). nt <= 4. */
static SKY_NOINLINE HOSTDEV int
sky_exact_sign(int nt, const double *a, const double *b, const double *c, const double *d,
    const int *sg)
{
	double e[4 * 8 + 1];
	int m = 0;
	for (int k = 0; k < nt; k++) {
		double xh, xl, yh, yl, p, q;
		sky_two_diff(a[k], b[k], &xh, &xl);
		sky_two_diff(c[k], d[k], &yh, &yl);
		double f[4][2] = {{xh, yh}, {xh, yl}, {xl, yh}, {xl, yl}};
		for (int i = 0; i < 4; i++) {
			sky_two_prod(f[i][0], f[i][1], &p, &q);
			if (sg[k] < 0) {
				p = -p;
				q = -q;
			}
			m = sky_grow(e, m, q);
			m = sky_grow(e, m, p);
		}
	}
	return m == 0 ? 0 : (e[m - 1] > 0 ? 1 : -1);
}

/* Squared distance from (px, py) to (vx, vy), rounded. */
static inline HOSTDEV double
sky_d2(double px, double py, double vx, double vy)
{
	double dx = px - vx, dy = py - vy;
	return dx * dx + dy * dy;
}

/* Sign of d2(s, v) - d2(p, v) given their rounded values ds and dp: decided in double
 * when outside the error bound, else exactly. */
static inline HOSTDEV int
sky_cmp_d2(double ds, double dp, double tol, double sx, double sy, double px, double py,
    double vx, double vy)
{
	double diff = ds - dp, bnd = tol * (ds + dp);
	if (diff > bnd)
		return 1;
	if (diff < -bnd)
		return -1;
	if (tol == 0)
		return 0;
	double a[4] = {sx, sy, px, py}, b[4] = {vx, vy, vx, vy};
	int sg[4] = {1, 1, -1, -1};
	return sky_exact_sign(4, a, b, a, b, sg);
}

/* Orientation of (a, b, c): > 0 counter-clockwise, 0 collinear, < 0 clockwise. */
static inline HOSTDEV int
sky_orient(double ax, double ay, double bx, double by, double cx, double cy, double tol)
{
	double l = (bx - ax) * (cy - ay), r = (by - ay) * (cx - ax);
	double det = l - r, bnd = tol * (fabs(l) + fabs(r));
	if (det > bnd)
		return 1;
	if (det < -bnd)
		return -1;
	if (tol == 0)
		return 0;
	double A[2] = {bx, by}, B[2] = {ax, ay}, C[2] = {cy, cx}, D[2] = {ay, ax};
	int sg[2] = {1, -1};
	return sky_exact_sign(2, A, B, C, D, sg);
}

/* Whether (px, py) lies in the closed hull (h >= 1 vertices as float pairs). */
static inline HOSTDEV int
sky_inside(const float *hull, int h, double px, double py)
{
	if (h == 1)
		return px == hull[0] && py == hull[1];
	if (h == 2) {
		double ax = hull[0], ay = hull[1], bx = hull[2], by = hull[3];
		if (px < fmin(ax, bx) || px > fmax(ax, bx) || py < fmin(ay, by) ||
		    py > fmax(ay, by))
			return 0;
		return sky_orient(ax, ay, bx, by, px, py, SKY_TOL) == 0;
	}
	for (int i = 0; i < h; i++) {
		int j = i + 1 == h ? 0 : i + 1;
		if (sky_orient(hull[2 * i], hull[2 * i + 1], hull[2 * j], hull[2 * j + 1], px, py,
		    SKY_TOL) < 0)
			return 0;
	}
	return 1;
}

/* A grid of g x g cells over points (the spatial filter's, skyline_cpu.c and
 * skyline_spatial.cu): cell (x, y) holds the points whose coordinates fall in it by
 * sky_grid_cell, those beyond the box in the cells at its edge. */
struct sky_grid {
	double x0, y0, sx, sy;
	int g;
};

/* The grid's side for m points: about per_cell points a cell, at most side_max cells
 * a side (skyline_tune.h chooses both). */
static inline int
sky_grid_side(size_t m, unsigned per_cell, unsigned side_max)
{
	return (int)fmin((double)side_max, fmax(1.0, sqrt((double)m / per_cell)));
}

static inline HOSTDEV int
sky_grid_cell(const struct sky_grid *gr, double t, double o, double s)
{
	double c = floor((t - o) * s);
	return (int)fmin(fmax(c, 0.0), (double)(gr->g - 1));
}

/* A point s dominates p only where s is no farther than p from every hull vertex: in
 * the intersection of the disks about the vertices through p (its dominator region;
 * p is on each disk's circle, and a point of the skyline has no other point inside).
 * The helpers below find where that region can be, with room for rounding: each
 * radius a little larger than p's computed distance, each end of an interval widened
 * by more than its rounding, so that no dominator falls outside (the dominance test
 * itself decides exactly). sky_region_r2: the squared radius of vertex (vx, vy)'s disk. */
static inline HOSTDEV double
sky_region_r2(double px, double py, double vx, double vy)
{
	return sky_d2(px, py, vx, vy) * (1 + 0x1p-40);
}

/* The half-width of the disk of squared radius r2 about a vertex at coordinate c, at
 * distance d from it across (its chord's half), widened; negative where the disk
 * does not reach. */
static inline HOSTDEV double
sky_region_half(double r2, double d, double c)
{
	double w2 = r2 - d * d;
	if (w2 < 0)
		return -1;
	double w = sqrt(w2);
	return w + (fabs(c) + w) * 0x1p-40;
}

/* The y-range [*ylo, *yhi] of p's dominator region: where every disk's lies. */
static inline HOSTDEV void
sky_region_rows(const float *hull, int h, double px, double py, double *ylo, double *yhi)
{
	double a = -INFINITY, b = INFINITY;
	for (int v = 0; v < h; v++) {
		double vx = hull[2 * v], vy = hull[2 * v + 1];
		double r = sky_region_half(sky_region_r2(px, py, vx, vy), 0, vy);
		a = fmax(a, vy - r);
		b = fmin(b, vy + r);
	}
	*ylo = a;
	*yhi = b;
}

/* The x-interval [*lo, *hi] of the band ya <= y <= yb that meets every disk of p's
 * dominator region; 0 when there is none. */
static inline HOSTDEV int
sky_region_row(const float *hull, int h, double px, double py, double ya, double yb,
    double *lo, double *hi)
{
	double a = -INFINITY, b = INFINITY;
	for (int v = 0; v < h; v++) {
		double vx = hull[2 * v], vy = hull[2 * v + 1];
		double w = sky_region_half(sky_region_r2(px, py, vx, vy),
		    fmax(0.0, fmax(ya - vy, vy - yb)), vx);
		if (w < 0)
			return 0;
		a = fmax(a, vx - w);
		b = fmin(b, vx + w);
		if (a > b)
			return 0;
	}
	*lo = a;
	*hi = b;
	return 1;
}

/* The y-range of the points of grid row r: the rows cut at floor((y - y0) * sy), the
 * first and last taking all below and above; widened for the rounding of the cut. */
static inline HOSTDEV void
sky_grid_row_band(const struct sky_grid *gr, int r, double *ya, double *yb)
{
	double a = gr->y0 + r / gr->sy, b = gr->y0 + (r + 1) / gr->sy;
	double e = 0x1p-30 / gr->sy + (fabs(a) + fabs(b)) * 0x1p-40;
	*ya = r == 0 ? -INFINITY : a - e;
	*yb = r == gr->g - 1 ? INFINITY : b + e;
}

#ifdef __cplusplus
}
#endif
#endif
