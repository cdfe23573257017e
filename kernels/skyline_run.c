/* skyline_run.c: one skyline of a table on the chosen device (skyline_run.h): -d auto's
 * decision on the work, the tuning row, the classic or spatial job handed to the CPU or
 * GPU path, or to several workers (skyline_divide.c: gpu:all, gpu:0,1); and, under
 * mpirun, the shares' skylines merged on rank 0. Apart from
 * cmd/skyline.c, which reads the options and the input and writes the result. */
#include <stdlib.h>

#include "cli.h"
#include "cudadev.h"
#include "err.h"
#include "progress.h"
#include "ranks.h"
#include "skyline_run.h"
#include "skyline_tune.h"
#include "table.h"
#include "timer.h"
#include "tune.h"

/* The row of skyline_tune.h for the device that computes, said under -v. */
static const struct sky_tune *
tuning(const char *desc)
{
	const struct sky_tune *tu = TUNE_PICK(sky_tune_table, desc);
	vlog("tuning: %s (%s)", *tu->device != '\0' ? tu->device : "default", tu->measured);
	return tu;
}

/* What -d auto weighs: the row that a GPU of any name gets. */
static const struct sky_tune *
cost_row(void)
{
	return TUNE_PICK(sky_tune_table, "gpu");
}

/* The spatial skyline of the points xy[0..n) for the query points qxy[0..qn). The
 * hull is found while the device starts; the GPU paths time their own phases. */
static size_t
spatial(size_t n, const float *xy, const float *qxy, size_t qn, int distinct, int decide,
    struct cuda_dev *dev, size_t max_mem, uint32_t *keep)
{
	size_t m;
	float *hull = xmallocarray(mul_size(qn, 2, "hull"), sizeof *hull);
	size_t h = sky_hull(qxy, qn, hull);
	struct sky_spatial job = {n, xy, hull, h, sky_tolerance(xy, n, hull, h), distinct, NULL};
	vlog("%zu query points, %zu on the hull; %s arithmetic", qn, h,
	    job.tol == 0 ? "exact double" : "double with exact fallback");

	/* a hull the GPU cannot hold is no work for it */
	if (decide)
		cuda_decide(&cost_row()->cost_spatial, h > SKY_GPU_MAXH ? 0 :
		    (double)n * (double)h, cli_threads(), dev);
	int gpu = dev->gpu && n > 0;
	if (gpu && h > SKY_GPU_MAXH) {
		vlog("the hull has %zu vertices, more than the GPU path holds (%d): using the CPU",
		    h, SKY_GPU_MAXH);
		gpu = 0;
	}
	job.tune = tuning(gpu ? dev->desc : "cpu");	/* the CPU's row wherever it computes */
	double tc = now_sec();
	int timed = gpu;	/* the GPU path times its own phases */
	/* several workers where each computes on its own device: a hull too large for
	 * the GPU keeps the whole skyline on the CPU, as on one GPU */
	if (n > 0 && cuda_workers(dev) > 1 && gpu == dev->gpu) {
		struct sky_divide dv = {NULL, &job, TUNE_PICK(sky_tune_table, "cpu"), dev, max_mem};
		m = sky_divided(&dv, keep);
		timed = 1;	/* and so does the division */
	} else
#ifdef ACCELKIT_CUDA
	if (gpu)
		m = sky_spatial_gpu(&job, sky_gpu_one(dev), max_mem, keep);
	else
#endif
		m = sky_spatial_cpu(&job, keep);
	if (!timed)
		phase_add(PH_COMPUTE, now_sec() - tc);
	(void)max_mem;		/* without CUDA */
	free(hull);
	return m;
}

/* The classic skyline of job (its row chosen) on the device chosen. */
static size_t
classic_on(const struct sky_classic *job, const struct cuda_dev *dev, size_t max_mem,
    uint32_t *keep)
{
	size_t m;
	double tc = now_sec();
	int timed = dev->gpu;	/* the GPU path times its own phases */
	if (cuda_workers(dev) > 1) {
		struct sky_divide dv = {job, NULL, TUNE_PICK(sky_tune_table, "cpu"), dev, max_mem};
		m = sky_divided(&dv, keep);
		timed = 1;	/* and so does the division */
	} else
#ifdef ACCELKIT_CUDA
	if (dev->gpu)
		m = sky_classic_gpu(job, sky_gpu_one(dev), max_mem, keep);
	else
#endif
		m = sky_classic_cpu(job, keep);
	if (!timed)
		phase_add(PH_COMPUTE, now_sec() - tc);
	(void)max_mem;		/* without CUDA */
	return m;
}

/* The classic skyline of t's columns col[0..d) of m (n > 0). */
static size_t
classic(const struct table *t, const size_t *col, size_t d, const unsigned char *pref_max,
    size_t pref_n,
    int distinct, int decide, struct cuda_dev *dev, size_t max_mem,
    uint32_t *keep)
{
	size_t m;
	unsigned char *maxp = xcalloc(d, 1);
	for (size_t j = 0; j < d && pref_n > 0; j++)
		maxp[j] = pref_max[pref_n == 1 ? 0 : j];
	struct sky_classic job = {t->m.rows, d, t->m.data, t->m.dtype == DT_F64, t->m.cols, col,
	    maxp, distinct, NULL};

	if (decide)
		cuda_decide(&cost_row()->cost_classic, cuda_decide_weighs() ? sky_classic_work(&job) : 0,
		    cli_threads(), dev);
	job.tune = tuning(dev->desc);
	m = classic_on(&job, dev, max_mem, keep);
	free(maxp);
	return m;
}

size_t
sky_run(const struct table *t, const struct sky_job *j, int decide, struct cuda_dev *dev,
    uint32_t *keep)
{
	size_t n = t->m.rows, m = 0;

	if (j->qxy != NULL) {
		int owned = 0;
		float *xy = n > 0 ? table_columns(t, j->pos, 2, DT_F32, "a coordinate", &owned) :
		    NULL;
		m = spatial(n, xy, j->qxy, j->qn, j->distinct, decide, dev, j->max_mem, keep);
		if (owned)
			free(xy);
	} else if (n > 0) {
		m = classic(t, j->mcol, j->d, j->pref_max, j->pref_n, j->distinct, decide, dev, j->max_mem, keep);
	} else if (decide) {
		cuda_decide(&cost_row()->cost_classic, 0, cli_threads(), dev);
	}
	return m;
}

/* Two columns (or one): every row's layer by one sort and a sweep, O(n log n). Rows
 * taken in order of (x, y), least first (a dominator always comes first), each goes to
 * the first layer none of whose rows so far dominates it, found by bisection: a row
 * dominated by layer k is dominated by every layer before it. Within a layer the rows
 * so far have distinct y (of two with one y, the one of less x would dominate), the
 * least of them, ly, the last added; it dominates (x, y) when ly < y, or ly == y with
 * a lesser x (lx). */
struct pt {
	double x, y;
	uint32_t i;
};

static int
pt_cmp(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	if (p->y != q->y)
		return p->y < q->y ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

static uint32_t
layers_2d(const struct sky_classic *job, uint32_t max_layers, uint32_t *layer)
{
	size_t n = job->n;
	struct pt *p = xmallocarray(MAX(n, 1), sizeof *p);
	for (size_t i = 0; i < n; i++) {
		/* a column that prefers the larger value compares negated (exactly) */
		double x = sky_value(job, i, 0), y = job->d > 1 ? sky_value(job, i, 1) : 0;
		p[i] = (struct pt){job->maxpref[0] ? -x : x,
		    job->d > 1 && job->maxpref[1] ? -y : y, (uint32_t)i};
	}
	qsort(p, n, sizeof *p, pt_cmp);
	double *ly = xmallocarray(MAX(n, 1), sizeof *ly), *lx = xmallocarray(MAX(n, 1),
	    sizeof *lx);
	uint32_t layers = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t lo = 0, hi = layers;	/* the first layer not dominating p[k] */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (ly[mid] < p[k].y || (ly[mid] == p[k].y && lx[mid] < p[k].x))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == layers)
			layers++;
		ly[lo] = p[k].y;
		lx[lo] = p[k].x;
		layer[p[k].i] = max_layers == 0 || lo < max_layers ? lo + 1 : 0;
	}
	free(p);
	free(ly);
	free(lx);
	return max_layers != 0 ? MIN(layers, max_layers) : layers;
}

uint32_t
sky_layers(const struct table *t, const struct sky_job *j, uint32_t max_layers, int decide,
    struct cuda_dev *dev, uint32_t *layer)
{
	size_t n = t->m.rows, d = j->d, esz = t->m.dtype == DT_F64 ? 8 : 4;
	unsigned char *maxp = xcalloc(MAX(d, 1), 1);
	for (size_t c = 0; c < d && j->pref_n > 0; c++)
		maxp[c] = j->pref_max[j->pref_n == 1 ? 0 : c];
	struct sky_classic job = {n, d, t->m.data, t->m.dtype == DT_F64, t->m.cols, j->mcol,
	    maxp, 0, NULL};
	if (decide)	/* the first layer's work: the rest is less each time */
		cuda_decide(&cost_row()->cost_classic, cuda_decide_weighs() && n > 0 ?
		    sky_classic_work(&job) : 0, cli_threads(), dev);
	job.tune = tuning(dev->desc);
	if (d <= 2) {
		/* whatever the device: one sort beats a skyline a layer */
		double tc = now_sec();
		uint32_t layers = layers_2d(&job, max_layers, layer);
		phase_add(PH_COMPUTE, now_sec() - tc);
		free(maxp);
		return layers;
	}

	/* Peeling: each layer is the skyline of the rows no layer has taken yet, found on
	 * a copy of their compared columns (the same values, so the same dominance). The
	 * sweep of layers_2d generalised (Zhang et al.'s ENS-BS, a layer's rows scanned for
	 * a dominator) measured 19.7 s against 26.3 for this on 200,000 x 4 independent
	 * points, 65.6 against 36.7 anti-correlated (2 cores): peeling stays. */
	uint32_t *rest = xmallocarray(MAX(n, 1), sizeof *rest), *keep = xmallocarray(MAX(n, 1),
	    sizeof *keep), layers = 0;
	void *pack = xmallocarray(mul_size(MAX(n, 1), MAX(d, 1), "rows"), esz);
	size_t *idc = xmallocarray(MAX(d, 1), sizeof *idc), nr = n;
	for (size_t i = 0; i < n; i++) {
		rest[i] = (uint32_t)i;
		layer[i] = 0;
	}
	for (size_t c = 0; c < d; c++)
		idc[c] = c;
	progress_begin("rows", n);
	while (nr > 0 && (max_layers == 0 || layers < max_layers)) {
		sky_pack_rows(&job, rest, nr, pack);
		struct sky_classic sub = {nr, d, pack, job.f64, d, idc, maxp, 0, job.tune};
		size_t m = classic_on(&sub, dev, j->max_mem, keep);
		if (m == 0)
			die("layer %u of %zu rows is empty", layers + 1, nr);	/* cannot be */
		layers++;
		size_t w = 0;
		for (size_t i = 0, k = 0; i < nr; i++)
			if (k < m && keep[k] == i) {
				layer[rest[i]] = layers;
				k++;
			} else {
				rest[w++] = rest[i];
			}
		nr = w;
		progress_set(n - nr);
	}
	progress_end();
	free(rest);
	free(keep);
	free(pack);
	free(idc);
	free(maxp);
	return layers;
}

/* Under mpirun each rank has found the skyline of its share of the rows. A row of the
 * whole skyline is in the skyline of its share (dominance is transitive), so the union
 * of the shares' skylines, gathered on rank 0 in input order, filtered once more, is the
 * whole skyline; --distinct keeps the first of equal rows there as in one process. */
size_t
sky_merge_ranks(struct table *t, const struct sky_job *j, struct cuda_dev *dev,
    uint32_t **keep, size_t m, uint64_t **index)
{
	double tg = now_sec();
	table_gather_rows(t, *keep, m, index);
	vlog("rank %d of %d: %zu of its rows in its skyline; %zu gathered", ranks_rank(),
	    ranks_size(), m, t->m.rows);
	free(*keep);
	*keep = xmallocarray(MAX(t->m.rows, 1), sizeof **keep);
	if (ranks_rank() != 0)
		return 0;
	phase_add("gather", now_sec() - tg);
	return sky_run(t, j, 0, dev, *keep);
}
