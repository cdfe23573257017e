/* skyline_cpu.c: the native CPU path (OpenMP) of the classic and spatial skylines.
 * Classic, the same steps as the CUDA path: ranks, a presort by a monotone score, then
 * a sort-filter skyline in growing batches (each batch is filtered against the skyline
 * so far, then its survivors against each other). Spatial, as the CUDA path does: what
 * a few pivots dominate is out, then each survivor is tested against the survivors in
 * its dominator region (region_filter). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "skyline.h"
#include "skyline_run.h"
#include "skyline_tune.h"
#include "timer.h"

/* ---- parallel LSD radix sort of (key, value) pairs; stable ---- */

static void
sort_pairs(uint64_t *key, uint32_t *val, size_t n, int bits)
{
	int nt = n < ((size_t)1 << 16) ? 1 : omp_get_max_threads();
	uint64_t *k2 = xmallocarray(n, sizeof *k2), *ka = key, *kb = k2;
	uint32_t *v2 = xmallocarray(n, sizeof *v2), *va = val, *vb = v2;
	size_t *hist = xcalloc(mul_size((size_t)nt, 256, "sort"), sizeof *hist);

	for (int shift = 0; shift < bits; shift += 8) {
		#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num();
			size_t lo = n * t / nt, hi = n * (t + 1) / nt, *h = hist + 256 * t;
			memset(h, 0, 256 * sizeof *h);
			for (size_t i = lo; i < hi; i++)
				h[(ka[i] >> shift) & 255]++;
		}
		size_t sum = 0, skip = 0;
		for (int b = 0; b < 256 && !skip; b++) {
			size_t tot = 0;
			for (int t = 0; t < nt; t++)
				tot += hist[256 * t + b];
			skip = tot == n;
		}
		if (skip)
			continue;
		for (int b = 0; b < 256; b++)
			for (int t = 0; t < nt; t++) {
				size_t c = hist[256 * t + b];
				hist[256 * t + b] = sum;
				sum += c;
			}
		#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num();
			size_t lo = n * t / nt, hi = n * (t + 1) / nt, *h = hist + 256 * t;
			for (size_t i = lo; i < hi; i++) {
				size_t o = h[(ka[i] >> shift) & 255]++;
				kb[o] = ka[i];
				vb[o] = va[i];
			}
		}
		uint64_t *tk = ka;
		ka = kb;
		kb = tk;
		uint32_t *tv = va;
		va = vb;
		vb = tv;
	}
	if (ka != key) {
		memcpy(key, ka, n * sizeof *key);
		memcpy(val, va, n * sizeof *val);
	}
	free(hist);
	free(k2);
	free(v2);
}

static int
bits_for(uint64_t max)
{
	return max == 0 ? 0 : 64 - __builtin_clzll(max);
}

/* ---- the sort-filter driver ---- */

/* The skyline so far (or a batch's survivors): each entry's values (esz bytes), mask
 * and sorted position, contiguous so that scans stream through memory. */
struct list {
	unsigned char *v;
	uint32_t *m;
	size_t n;
};

struct filter {
	size_t n, esz;
	const unsigned char *vals;	/* esz bytes a sorted position */
	const uint32_t *mask;		/* NULL: no masks */
	/* SKY_ALIVE, SKY_DOMINATED or SKY_DUP for the row at sorted position cand,
	 * against the first len entries of l */
	int (*scan)(const struct filter *f, size_t cand, const struct list *l, size_t len);
	const void *ctx;
};

static void
list_push(struct list *l, const struct filter *f, size_t pos)
{
	memcpy(l->v + l->n * f->esz, f->vals + pos * f->esz, f->esz);
	l->m[l->n] = f->mask ? f->mask[pos] : 0;
	l->n++;
}

static struct list
list_new(size_t cap, size_t esz)
{
	struct list l = {xmallocarray(MAX(cap, 1), esz), xmallocarray(MAX(cap, 1), 4), 0};
	return l;
}

static void
list_free(struct list *l)
{
	free(l->v);
	free(l->m);
}

/* Fills status[] (by sorted position). */
static void
sort_filter(const struct filter *f, const struct sky_tune *tune, unsigned char *status)
{
	const size_t bmax = tune->batch_max;
	struct list sky = list_new(f->n, f->esz), c = list_new(MIN(f->n, bmax), f->esz);
	uint32_t *cpos = xmallocarray(MAX(MIN(f->n, bmax), 1), sizeof *cpos);

	for (size_t b0 = 0, bs = tune->batch_first; b0 < f->n; b0 += bs, bs = MIN(2 * bs, bmax)) {
		size_t b1 = MIN(f->n, b0 + bs);
		#pragma omp parallel for schedule(dynamic, 16)
		for (size_t k = b0; k < b1; k++)
			status[k] = (unsigned char)f->scan(f, k, &sky, sky.n);
		c.n = 0;
		for (size_t k = b0; k < b1; k++)
			if (status[k] == SKY_ALIVE) {
				cpos[c.n] = (uint32_t)k;
				list_push(&c, f, k);
			}
		#pragma omp parallel for schedule(dynamic, 16)
		for (size_t t = 0; t < c.n; t++)
			status[cpos[t]] = (unsigned char)f->scan(f, cpos[t], &c, t);
		for (size_t t = 0; t < c.n; t++)
			if (status[cpos[t]] == SKY_ALIVE)
				list_push(&sky, f, cpos[t]);
	}
	free(cpos);
	list_free(&c);
	list_free(&sky);
}

/* Ascending row indexes whose flag is set. */
static size_t
flags_to_list(const unsigned char *flag, size_t n, uint32_t *keep)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (flag[i])
			keep[m++] = (uint32_t)i;
	return m;
}

/* ---- classic ---- */

/* Dense ranks of column j into r (reversed for a max column), and the ranks at the
 * quartiles (q[0..2]). */
static void
rank_column(const struct sky_classic *job, size_t j, uint64_t *key, uint32_t *idx,
    uint32_t *r, uint32_t *q)
{
	size_t n = job->n;
	int nt = omp_get_max_threads();

	#pragma omp parallel for if (n > 100000)
	for (size_t i = 0; i < n; i++) {
		uint64_t k = sky_key64(sky_value(job, i, j));
		key[i] = job->maxpref[j] ? ~k : k;
		idx[i] = (uint32_t)i;
	}
	sort_pairs(key, idx, n, 64);
	/* Each thread counts the new values in its part, then numbers them. */
	size_t *cnt = xcalloc((size_t)nt + 1, sizeof *cnt);
	#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		size_t lo = n * t / nt, hi = n * (t + 1) / nt, c = 0;
		for (size_t k = MAX(lo, 1); k < hi; k++)
			c += key[k] != key[k - 1];
		cnt[t + 1] = c;
		#pragma omp barrier
		#pragma omp single
		for (int u = 0; u < nt; u++)
			cnt[u + 1] += cnt[u];
		uint32_t rk = (uint32_t)cnt[t];
		for (size_t k = lo; k < hi; k++) {
			if (k > 0 && key[k] != key[k - 1])
				rk++;
			r[idx[k]] = rk;
		}
	}
	free(cnt);
	for (int u = 0; u < 3; u++)
		q[u] = n ? r[idx[n * (u + 1) / 4]] : 0;
}

struct classic_ctx {
	size_t d;
};

static int
scan_classic(const struct filter *f, size_t cand, const struct list *l, size_t len)
{
	size_t d = ((const struct classic_ctx *)f->ctx)->d;
	const uint32_t *p = (const uint32_t *)f->vals + cand * d, *sv = (const uint32_t *)l->v;
	uint32_t mp = f->mask[cand];

	for (size_t t = 0; t < len; t++) {
		if (!sky_mask_ok(l->m[t], mp))
			continue;
		const uint32_t *s = sv + t * d;
		size_t j;
		int eq = 1;
		for (j = 0; j < d && s[j] <= p[j]; j++)
			eq &= s[j] == p[j];
		if (j == d)
			return eq ? SKY_DUP : SKY_DOMINATED;
	}
	return SKY_ALIVE;
}

size_t
sky_classic_cpu(const struct sky_classic *job, uint32_t *keep)
{
	size_t n = job->n, d = job->d;
	if (n == 0)
		return 0;
	uint32_t *r = xmallocarray(mul_size(n, d, "ranks"), sizeof *r);
	uint64_t *key = xmallocarray(n, sizeof *key);
	uint32_t *idx = xmallocarray(n, sizeof *idx), *mask = xcalloc(n, sizeof *mask);
	uint32_t q[3];
	double t0 = now_sec();

	for (size_t j = 0; j < d; j++) {
		rank_column(job, j, key, idx, r + j * n, q);
		if (j < SKY_MASKDIMS) {
			const uint32_t *rj = r + j * n;
			#pragma omp parallel for if (n > 100000)
			for (size_t i = 0; i < n; i++)
				mask[i] |= sky_mask_bits(rj[i], q[0], q[1], q[2], (int)j);
		}
	}
	double t1 = now_sec();
	phase_add("rank", t1 - t0);
	/* The rank sum: a dominating row has a strictly smaller one. */
	uint64_t maxs = 0;
	#pragma omp parallel for reduction(max:maxs) if (n > 100000)
	for (size_t i = 0; i < n; i++) {
		uint64_t s = 0;
		for (size_t j = 0; j < d; j++)
			s += r[j * n + i];
		key[i] = s;
		idx[i] = (uint32_t)i;
		maxs = MAX(maxs, s);
	}
	sort_pairs(key, idx, n, bits_for(maxs));
	free(key);
	uint32_t *v = xmallocarray(mul_size(n, d, "rows"), sizeof *v);
	uint32_t *smask = xmallocarray(n, sizeof *smask);
	#pragma omp parallel for if (n > 100000)
	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < d; j++)
			v[k * d + j] = r[j * n + idx[k]];
		smask[k] = mask[idx[k]];
	}
	free(r);
	free(mask);

	struct classic_ctx ctx = {d};
	struct filter f = {n, d * sizeof *v, (const unsigned char *)v, smask, scan_classic, &ctx};
	unsigned char *status = xmalloc(n), *flag = xcalloc(n, 1);
	double t2 = now_sec();
	phase_add("presort", t2 - t1);
	sort_filter(&f, job->tune, status);
	phase_add("filter", now_sec() - t2);
	for (size_t k = 0; k < n; k++)
		flag[idx[k]] = status[k] == SKY_ALIVE || (status[k] == SKY_DUP && !job->distinct);
	size_t m = flags_to_list(flag, n, keep);
	free(flag);
	free(status);
	free(v);
	free(smask);
	free(idx);
	return m;
}

void
sky_pack_rows(const struct sky_classic *job, const uint32_t *rows, size_t n, void *out)
{
	size_t d = job->d;
	#pragma omp parallel for if (n > 100000)
	for (size_t i = 0; i < n; i++) {
		size_t o = (rows ? rows[i] : i) * job->stride;
		for (size_t j = 0; j < d; j++) {
			if (job->f64)
				((double *)out)[i * d + j] = ((const double *)job->data)[o + job->col[j]];
			else
				((float *)out)[i * d + j] = ((const float *)job->data)[o + job->col[j]];
		}
	}
}

/* ---- spatial ---- */

void
sky_pack_points(const struct sky_spatial *job, const uint32_t *rows, size_t n, float *out)
{
	#pragma omp parallel for if (n > 100000)
	for (size_t i = 0; i < n; i++) {
		size_t o = 2 * (size_t)(rows ? rows[i] : i);
		out[2 * i] = job->xy[o];
		out[2 * i + 1] = job->xy[o + 1];
	}
}

static void
dists(const float *hull, int h, double px, double py, double *dp)
{
	for (int v = 0; v < h; v++)
		dp[v] = sky_d2(px, py, hull[2 * v], hull[2 * v + 1]);
}

/* Whether s dominates p, given p's squared distances dp. */
static int
dominates(const float *hull, int h, double tol, const float *s, const float *p,
    const double *dp)
{
	int lt = 0;
	for (int v = 0; v < h; v++) {
		double vx = hull[2 * v], vy = hull[2 * v + 1];
		double ds = sky_d2(s[0], s[1], vx, vy);
		int c = sky_cmp_d2(ds, dp[v], tol, s[0], s[1], p[0], p[1], vx, vy);
		if (c > 0)
			return 0;
		lt |= c < 0;
	}
	return lt;
}

static int
same_xy(const float *a, const float *b)
{
	return a[0] == b[0] && a[1] == b[1];
}

/* Which of the distinct points pts[0..m) no other dominates (alive[k] = 1): each
 * point outside the hull is tested against the points of the grid cells that meet its
 * dominator region (skyline.h: sky_region_rows, sky_region_row), a thin sliver beside
 * it, rather than against the whole skyline so far, so that a spatial skyline of
 * millions of points costs about its size times the few points near each, not its
 * square. The CUDA path (skyline_spatial.cu) does the same. */
static void
region_filter(const float *xy, const uint32_t *pts, size_t m, const unsigned char *inside,
    const float *hull, int h, double tol, const struct sky_tune *tune, double *dbuf,
    unsigned char *alive)
{
	double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
	for (size_t k = 0; k < m; k++) {
		const float *p = xy + 2 * (size_t)pts[k];
		x0 = fmin(x0, p[0]);
		x1 = fmax(x1, p[0]);
		y0 = fmin(y0, p[1]);
		y1 = fmax(y1, p[1]);
	}
	int g = sky_grid_side(m, tune->grid_per_cell, tune->grid_side_max);
	struct sky_grid gr = {x0, y0, x1 > x0 ? g / (x1 - x0) : 1, y1 > y0 ? g / (y1 - y0) : 1, g};
	size_t nc = (size_t)g * g;
	uint32_t *cell = xmallocarray(MAX(m, 1), sizeof *cell);
	uint32_t *start = xcalloc(nc + 1, sizeof *start);
	uint32_t *order = xmallocarray(MAX(m, 1), sizeof *order);
	uint32_t *fill = xmallocarray(nc, sizeof *fill);
	for (size_t k = 0; k < m; k++) {
		const float *p = xy + 2 * (size_t)pts[k];
		cell[k] = (uint32_t)(sky_grid_cell(&gr, p[1], gr.y0, gr.sy) * g +
		    sky_grid_cell(&gr, p[0], gr.x0, gr.sx));
		start[cell[k] + 1]++;
	}
	for (size_t c = 0; c < nc; c++)
		start[c + 1] += start[c];
	memcpy(fill, start, nc * sizeof *fill);
	for (size_t k = 0; k < m; k++)
		order[fill[cell[k]]++] = pts[k];
	free(fill);
	#pragma omp parallel
	{
		double *dp = dbuf + (size_t)omp_get_thread_num() * h;
		#pragma omp for schedule(dynamic, 256)
		for (size_t k = 0; k < m; k++) {
			uint32_t i = pts[k];
			const float *p = xy + 2 * (size_t)i;
			int out = 0;
			if (!inside[i]) {
				double ylo, yhi;
				dists(hull, h, p[0], p[1], dp);
				sky_region_rows(hull, h, p[0], p[1], &ylo, &yhi);
				int ra = sky_grid_cell(&gr, ylo, gr.y0, gr.sy);
				int rb = sky_grid_cell(&gr, yhi, gr.y0, gr.sy);
				for (int r = ra; r <= rb && !out; r++) {
					double ya, yb, lo, hi;
					sky_grid_row_band(&gr, r, &ya, &yb);
					if (!sky_region_row(hull, h, p[0], p[1], ya, yb, &lo, &hi))
						continue;
					/* a row's cells are neighbours in order */
					size_t c0 = (size_t)r * g + sky_grid_cell(&gr, lo, gr.x0, gr.sx);
					size_t c1 = (size_t)r * g + sky_grid_cell(&gr, hi, gr.x0, gr.sx);
					for (uint32_t j = start[c0]; j < start[c1 + 1]; j++)
						if (order[j] != i &&
						    dominates(hull, h, tol, xy + 2 * (size_t)order[j], p, dp)) {
							out = 1;
							break;
						}
				}
			}
			alive[k] = (unsigned char)!out;
		}
	}
	free(order);
	free(start);
	free(cell);
}

/* The skyline of the survivors keep[0..m) (ascending rows), into keep: the filter runs
 * on the first of each run of equal points (sorted by coordinates, stably, so a run is
 * in input order), and the rest of the run share its fate; with distinct, only the
 * first stays. The survivors hold every point of the skyline, and dominance is
 * transitive, so a point that no survivor dominates is in it. */
static size_t
spatial_filter(const struct sky_spatial *job, uint32_t *keep, size_t m,
    const unsigned char *inside, double *dbuf, unsigned char *flag)
{
	const float *xy = job->xy;
	uint64_t *key = xmallocarray(MAX(m, 1), sizeof *key);
	uint32_t *idx = xmallocarray(MAX(m, 1), sizeof *idx);
	for (size_t k = 0; k < m; k++) {
		const float *p = xy + 2 * (size_t)keep[k];
		key[k] = (uint64_t)sky_key32(p[0]) << 32 | sky_key32(p[1]);
		idx[k] = keep[k];
	}
	sort_pairs(key, idx, m, 64);
	free(key);
	uint32_t *run = xmallocarray(MAX(m, 1) + 1, sizeof *run), *head = keep;
	size_t nh = 0;
	for (size_t k = 0; k < m; k++)
		if (k == 0 || !same_xy(xy + 2 * (size_t)idx[k], xy + 2 * (size_t)idx[k - 1])) {
			run[nh] = (uint32_t)k;
			head[nh++] = idx[k];
		}
	run[nh] = (uint32_t)m;
	unsigned char *alive = xmalloc(MAX(nh, 1));
	region_filter(xy, head, nh, inside, job->hull, (int)job->h, job->tol, job->tune, dbuf,
	    alive);
	memset(flag, 0, job->n);
	for (size_t t = 0; t < nh; t++)
		for (size_t k = run[t]; k < run[t + 1] && alive[t]; k++)
			flag[idx[k]] = k == run[t] || !job->distinct;
	free(alive);
	free(run);
	free(idx);
	return flags_to_list(flag, job->n, keep);
}

size_t
sky_spatial_cpu(const struct sky_spatial *job, uint32_t *keep)
{
	size_t n = job->n;
	int h = (int)job->h, nt = omp_get_max_threads();
	const float *xy = job->xy, *hull = job->hull;
	double tol = job->tol;
	if (n == 0)
		return 0;

	/* Pass 1: inside the hull, the score (sum of squared distances), and pivots:
	 * the point of least score and the point nearest each of the first vertices. */
	int npv = 1 + MIN(h, 16);
	unsigned char *inside = xmalloc(n);
	double *score = xmallocarray(n, sizeof *score);
	double *best = xmallocarray(mul_size((size_t)nt, (size_t)npv, "pivots"), sizeof *best);
	size_t *bidx = xmallocarray((size_t)nt * (size_t)npv, sizeof *bidx);
	double *dbuf = xmallocarray(mul_size((size_t)nt, (size_t)h, "distances"), sizeof *dbuf);
	#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		double *bt = best + (size_t)t * npv, *dp = dbuf + (size_t)t * h;
		size_t *it = bidx + (size_t)t * npv;
		for (int u = 0; u < npv; u++) {
			bt[u] = INFINITY;
			it[u] = 0;
		}
		#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			double px = xy[2 * i], py = xy[2 * i + 1], s = 0;
			inside[i] = (unsigned char)sky_inside(hull, h, px, py);
			dists(hull, h, px, py, dp);
			for (int v = 0; v < h; v++) {
				s += dp[v];
				if (v + 1 < npv && dp[v] < bt[v + 1]) {
					bt[v + 1] = dp[v];
					it[v + 1] = i;
				}
			}
			score[i] = s;
			if (s < bt[0]) {
				bt[0] = s;
				it[0] = i;
			}
		}
	}
	size_t piv[17];
	for (int u = 0; u < npv; u++) {
		double b = INFINITY;
		piv[u] = 0;
		for (int t = 0; t < nt; t++)	/* threads hold ascending parts: ties go low */
			if (best[(size_t)t * npv + u] < b) {
				b = best[(size_t)t * npv + u];
				piv[u] = bidx[(size_t)t * npv + u];
			}
	}
	free(best);
	free(bidx);

	/* Pass 2: what a pivot dominates is out. */
	unsigned char *flag = xcalloc(n, 1);
	#pragma omp parallel num_threads(nt)
	{
		double *dp = dbuf + (size_t)omp_get_thread_num() * h;
		#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			const float *p = xy + 2 * i;
			int out = 0;
			if (!inside[i]) {
				dists(hull, h, p[0], p[1], dp);
				for (int u = 0; u < npv && !out; u++)
					out = dominates(hull, h, tol, xy + 2 * piv[u], p, dp);
			}
			flag[i] = (unsigned char)!out;
		}
	}
	size_t m = flags_to_list(flag, n, keep);
	vlog("%zu points left after the pivots", m);

	free(score);
	m = spatial_filter(job, keep, m, inside, dbuf, flag);
	free(inside);
	free(flag);
	free(dbuf);
	return m;
}
