/* skyline_divide.c: one skyline over several workers (skyline_run.h: sky_divided).
 *
 * A row of the whole skyline is in the skyline of any set of rows that holds it: no
 * row of the set dominates it. So the rows are cut into units of contiguous rows, each
 * unit's skyline is found on its own, and the union of those skylines, in input order,
 * is filtered once more: a row of the union that some row dominates is dominated by a
 * row of the skyline (dominance is transitive), which is in the union too. What is
 * left is the whole skyline: the same rows, in the same order, as one device finds.
 * --distinct keeps the first of equal rows; that row is the first of them in its unit
 * too, so it reaches the union ahead of the others, and the last filter keeps it alone.
 * (skyline_run.c merges the shares of MPI ranks by the same argument.) A spatial
 * skyline's units' skylines nearly reach the whole skyline's size, so their last
 * filter is about as much work as one GPU's filter of the whole: on several GPUs it is
 * divided too, each GPU deciding a share of the union's points against the whole
 * union (spatial_on_gpus).
 *
 * The units go through common/devwork.h: a worker a GPU, whose state (stream, pinned
 * ring, its share of the device's memory, and for a spatial skyline the hull in the
 * device's constant memory) is made in its own thread before any unit runs; a unit goes
 * to whichever worker is free, so a faster GPU takes more. On the CPU
 * (ACCELKIT_CPU_WORKERS, for the tests) each worker runs the CPU path. A unit writes
 * its skyline into keep at its first row (it has no more rows than that leaves room
 * for), and the units come back in input order, each moved down to the end of the
 * union so far. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "devwork.h"
#include "err.h"
#include "skyline_run.h"
#include "skyline_tune.h"
#include "timer.h"
#include "tune.h"

/* Units a worker: enough that a GPU that is faster, or less loaded, takes more and the
 * last units end close together; few enough that each keeps a GPU busy (a unit's fixed
 * cost is a few milliseconds of allocations and launches). ACCELKIT_SKY_UNITS=N (1 to
 * 1024) overrides this, for a benchmark's sweep (bench/scale's SCALE_SKY_UNITS). */
enum { UNITS_A_WORKER = 4 };
/* The least rows of a GPU's unit, unless its memory holds fewer: a unit smaller than
 * this is mostly fixed cost. The CPU's workers (tests) take units of any size. */
#define GPU_UNIT_MIN ((size_t)1 << 16)

struct unit {
	size_t r0, n;		/* rows r0 .. r0 + n */
	size_t m;		/* its skyline's rows, at keep + r0 */
};

/* A worker's own. */
struct worker {
#ifdef ACCELKIT_CUDA
	struct sky_gpu *gp;	/* NULL: the CPU */
	size_t fit;		/* rows its GPU takes in one run */
#endif
	size_t rows, kept;	/* of its units, for -v */
};

struct divide {
	const struct sky_divide *dv;
	size_t n, per;		/* rows, and rows a unit (set before the first unit) */
	uint32_t *keep;
	int nw;
};

static void *
worker_init(void *ctx, int w)
{
	struct divide *c = ctx;
	struct worker *wk = xcalloc(1, sizeof *wk);
#ifdef ACCELKIT_CUDA
	const struct sky_divide *dv = c->dv;
	const struct cuda_dev *dev = dv->dev;
	if (dev->gpu) {
		int sharers = 0;
		for (int i = 0; i < c->nw; i++)
			sharers += dev->ids[i] == dev->ids[w];
		cuda_worker_use(dev, w);
		wk->gp = sky_gpu_open();
		/* --max-device-mem bounds each GPU: workers listed on one share it */
		sky_gpu_reserve(wk->gp, dv->max_mem, sharers);
		if (dv->sp != NULL) {
			/* every worker of a GPU writes the same hull, all before any unit */
			sky_gpu_hull(wk->gp, dv->sp->hull, dv->sp->h);
			wk->fit = sky_spatial_fit(wk->gp, dv->max_mem);
		} else {
			wk->fit = sky_classic_fit(dv->cl, wk->gp, dv->max_mem);
		}
	}
#else
	(void)c;
	(void)w;
#endif
	return wk;
}

static int
unit_make(void *ctx, void *slot, uint64_t k)
{
	struct divide *c = ctx;
	struct unit *u = slot;
	u->r0 = (size_t)k * c->per;
	u->n = MIN(c->per, c->n - u->r0);
	u->m = 0;
	return u->r0 + u->n >= c->n ? DW_LAST : DW_MORE;
}

/* A unit's skyline on worker w, as row numbers of the whole input at keep + r0. */
static int
unit_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct divide *c = ctx;
	const struct sky_divide *dv = c->dv;
	struct worker *wk = state;
	struct unit *u = slot;
	uint32_t *out = c->keep + u->r0;
	double t0 = now_sec();
	int on_gpu = 0;
	(void)w;
	(void)err;
#ifdef ACCELKIT_CUDA
	on_gpu = wk->gp != NULL;
#endif
	if (dv->cl != NULL) {
		struct sky_classic job = *dv->cl;
		job.n = u->n;
		job.data = (const char *)job.data + u->r0 * job.stride * (job.f64 ? 8 : 4);
#ifdef ACCELKIT_CUDA
		if (on_gpu)
			u->m = sky_classic_gpu(&job, wk->gp, dv->max_mem, out);
		else
#endif
			u->m = sky_classic_cpu(&job, out);
	} else {
		struct sky_spatial job = *dv->sp;
		job.n = u->n;
		job.xy += 2 * u->r0;
#ifdef ACCELKIT_CUDA
		if (on_gpu)
			u->m = sky_spatial_gpu(&job, wk->gp, dv->max_mem, out);
		else
#endif
			u->m = sky_spatial_cpu(&job, out);
	}
	if (!on_gpu)
		phase_add(PH_COMPUTE, now_sec() - t0);	/* the GPU paths time their own */
	for (size_t i = 0; i < u->m; i++)
		out[i] += (uint32_t)u->r0;
	wk->rows += u->n;
	wk->kept += u->m;
	return 0;
}

static double
unit_rows(void *ctx, const void *slot)
{
	(void)ctx;
	return (double)((const struct unit *)slot)->n;
}

/* No fini: the states outlive the workers, for -v and for the last filter on the first
 * GPU. A GPU's state is never freed (the run ends in cuda_finish's _exit). */
static const struct dw_ops sky_dw_ops = {worker_init, unit_make, unit_process, NULL,
	unit_rows};

/* Whether the cost model gives work to the GPU, as -d auto weighs it once CUDA has
 * started (tune.h's cost_pick_gpu, without its "auto:" line). */
static int
gpu_pays(const struct cost_model *m, double work, double *cpu, double *gpu)
{
	*cpu = m->cpu_fixed + work / (m->cpu_rate * MAX(cli_threads(), 1));
	*gpu = m->gpu_fixed + work / m->gpu_rate;
	return *gpu < *cpu;
}

/* Where the last filter runs: ACCELKIT_SKY_MERGE=gpu or cpu decides, whatever the cost
 * model says (for the tests: their unions are small); otherwise -1. */
static int
merge_forced(void)
{
	const char *v = getenv("ACCELKIT_SKY_MERGE");
	if (v == NULL || *v == '\0')
		return -1;
	if (strcmp(v, "gpu") == 0 || strcmp(v, "cpu") == 0)
		return v[0] == 'g';
	die("ACCELKIT_SKY_MERGE must be gpu or cpu, not '%s'", v);
}

/* Units a worker: ACCELKIT_SKY_UNITS, or UNITS_A_WORKER. */
static size_t
units_a_worker(void)
{
	const char *v = getenv("ACCELKIT_SKY_UNITS");
	if (v == NULL || *v == '\0')
		return UNITS_A_WORKER;
	char *end;
	long n = strtol(v, &end, 10);
	if (*end != '\0' || n < 1 || n > 1024)
		die("ACCELKIT_SKY_UNITS must be a number of units from 1 to 1024, not '%s'", v);
	return (size_t)n;
}

#ifdef ACCELKIT_CUDA
/* A worker's share of the last spatial filter, in a thread of its own with its GPU
 * current. */
struct share {
	const struct sky_divide *dv;
	const struct sky_spatial *job;
	struct sky_gpu *gp;
	int w, nw;
	uint8_t *flag;
	double sec;		/* its time, for -v */
};

static void *
share_main(void *arg)
{
	struct share *s = arg;
	double t0 = now_sec();
	cuda_worker_use(s->dv->dev, s->w);
	sky_spatial_gpu_share(s->job, s->gp, s->w, s->nw, s->flag);
	s->sec = now_sec() - t0;
	return NULL;
}

/* The skyline of job's points (the union) on every worker's GPU at once, each deciding
 * a share of the points against all of them (sky_spatial_gpu_share): the kept points'
 * indexes into sub, ascending; returns their count. */
static size_t
spatial_on_gpus(const struct sky_divide *dv, dw *e, int nw, const struct sky_spatial *job,
    uint32_t *sub)
{
	size_t u = job->n;
	struct share *sh = xcalloc((size_t)nw, sizeof *sh);
	pthread_t *tid = xcalloc((size_t)nw, sizeof *tid);
	int *started = xcalloc((size_t)nw, sizeof *started);
	uint8_t *flags = xmallocarray(mul_size((size_t)nw, MAX(u, 1), "skyline union"), 1);
	for (int w = 0; w < nw; w++) {
		struct share s = {dv, job, ((struct worker *)dw_state(e, w))->gp, w, nw,
		    flags + (size_t)w * u, 0};
		sh[w] = s;
		started[w] = pthread_create(&tid[w], NULL, share_main, &sh[w]) == 0;
	}
	for (int w = 0; w < nw; w++) {
		if (started[w])
			pthread_join(tid[w], NULL);
		else
			share_main(&sh[w]);	/* no thread to be had: in turn, here */
	}
	for (int w = 0; w < nw; w++) {
		char name[32];
		cuda_worker_name(dv->dev, w, name, sizeof name);
		vlog("%s: its share of the last filter in %.2f s", name, sh[w].sec);
	}
	size_t m = 0;
	for (size_t i = 0; i < u; i++) {
		uint8_t f = 0;
		for (int w = 0; w < nw; w++)
			f |= flags[(size_t)w * u + i];
		if (f)
			sub[m++] = (uint32_t)i;
	}
	free(flags);
	free(started);
	free(tid);
	free(sh);
	return m;
}
#endif

/* The skyline of the union keep[0..u) (rows of the input, ascending) into keep[0..):
 * returns its size. On the GPUs or on the CPU, as the cost model picks for the union's
 * size, with the path and tuning row of either: a classic union on the first GPU; a
 * spatial one divided over every worker's GPU when there are several and each holds
 * the union whole, else on the first. */
static size_t
filter_union(const struct sky_divide *dv, dw *e, int nw, uint32_t *keep, size_t u)
{
	const struct sky_tune *cost = TUNE_PICK(sky_tune_table, "gpu");
	uint32_t *sub = xmallocarray(MAX(u, 1), sizeof *sub);
	double tc = now_sec(), est_cpu = 0, est_gpu = 0;
	int gpu = 0, forced = merge_forced(), on = 1;
	size_t m;
#ifdef ACCELKIT_CUDA
	struct worker *w0 = dw_state(e, 0);
#else
	(void)e;
	(void)nw;
#endif

	if (dv->cl != NULL) {
		const struct sky_classic *cl = dv->cl;
		size_t d = cl->d, *col = xmallocarray(MAX(d, 1), sizeof *col);
		for (size_t j = 0; j < d; j++)
			col[j] = j;
		void *rows = xmallocarray(mul_size(u, d, "skyline union"), cl->f64 ? 8 : 4);
		sky_pack_rows(cl, keep, u, rows);
		struct sky_classic job = {u, d, rows, cl->f64, d, col, cl->maxpref, cl->distinct,
		    NULL};
		gpu = dv->dev->gpu && gpu_pays(&cost->cost_classic, sky_classic_work(&job), &est_cpu,
		    &est_gpu);
		if (forced >= 0)
			gpu = dv->dev->gpu && forced;
		job.tune = gpu ? cl->tune : dv->cpu_tune;
#ifdef ACCELKIT_CUDA
		if (gpu) {
			cuda_worker_use(dv->dev, 0);
			sky_gpu_reserve(w0->gp, dv->max_mem, 0);	/* the whole GPU now */
			m = sky_classic_gpu(&job, w0->gp, dv->max_mem, sub);
		} else
#endif
			m = sky_classic_cpu(&job, sub);
		free(rows);
		free(col);
	} else {
		float *xy = xmallocarray(mul_size(u, 2, "skyline union"), sizeof *xy);
		sky_pack_points(dv->sp, keep, u, xy);
		struct sky_spatial job = *dv->sp;
		job.n = u;
		job.xy = xy;
		gpu = dv->dev->gpu && gpu_pays(&cost->cost_spatial, (double)u * (double)job.h,
		    &est_cpu, &est_gpu);
		if (forced >= 0)
			gpu = dv->dev->gpu && forced;
		job.tune = gpu ? dv->sp->tune : dv->cpu_tune;
#ifdef ACCELKIT_CUDA
		int whole = nw > 1;
		for (int w = 0; w < nw && whole; w++)
			whole = u <= ((const struct worker *)dw_state(e, w))->fit;
		if (gpu && whole) {
			on = nw;
			m = spatial_on_gpus(dv, e, nw, &job, sub);
		} else if (gpu) {
			cuda_worker_use(dv->dev, 0);
			sky_gpu_reserve(w0->gp, dv->max_mem, 0);
			m = sky_spatial_gpu(&job, w0->gp, dv->max_mem, sub);
		} else
#endif
			m = sky_spatial_cpu(&job, sub);
		free(xy);
	}
	if (dv->dev->gpu && on > 1)
		vlog("the units' skylines: %zu rows, filtered once more on %d GPUs at once "
		    "(estimated %.3g s on one against %.3g s on the CPU)", u, on, est_gpu, est_cpu);
	else if (dv->dev->gpu)
		vlog("the units' skylines: %zu rows, filtered once more on the %s (estimated %.3g s "
		    "against %.3g s)", u, gpu ? "first GPU" : "CPU", gpu ? est_gpu : est_cpu,
		    gpu ? est_cpu : est_gpu);
	else
		vlog("the units' skylines: %zu rows, filtered once more on the CPU", u);
	/* sub is ascending and sub[i] >= i: keep is rewritten in place, front to back */
	for (size_t i = 0; i < m; i++)
		keep[i] = keep[sub[i]];
	free(sub);
	phase_add("merge", now_sec() - tc);
	return m;
}

size_t
sky_divided(const struct sky_divide *dv, uint32_t *keep)
{
	const struct cuda_dev *dev = dv->dev;
	struct divide c = {dv, dv->cl != NULL ? dv->cl->n : dv->sp->n, 0, keep,
	    cuda_workers(dev)};
	int ns = dw_slots(c.nw);
	struct unit *units = xcalloc((size_t)ns, sizeof *units);
	void **slots = xcalloc((size_t)ns, sizeof *slots);
	for (int i = 0; i < ns; i++)
		slots[i] = &units[i];

	dw *e = dw_open(&sky_dw_ops, &c, slots, ns, c.nw);
	/* The workers are set up: the units' size, from what their GPUs hold. */
	size_t per = CEIL_DIV(c.n, units_a_worker() * (size_t)c.nw);
#ifdef ACCELKIT_CUDA
	if (dev->gpu) {
		per = MAX(per, GPU_UNIT_MIN);
		for (int w = 0; w < c.nw; w++)
			per = MIN(per, ((const struct worker *)dw_state(e, w))->fit);
	}
#endif
	c.per = per;
	vlog("%zu rows in %zu units of at most %zu rows over %d %s", c.n, CEIL_DIV(c.n, per), per, c.nw,
	    dev->gpu ? "GPUs" : "CPU workers");

	size_t u = 0;
	for (struct unit *s; (s = dw_next(e, NULL)) != NULL;) {
		memmove(keep + u, keep + s->r0, s->m * sizeof *keep);
		u += s->m;
	}
	dw_join(e);

	char names[CUDADEV_MAX][32];
	const char *np[CUDADEV_MAX];
	for (int w = 0; w < c.nw; w++) {
		cuda_worker_name(dev, w, names[w], sizeof names[w]);
		np[w] = names[w];
	}
	dw_report(e, np);
	for (int w = 0; w < c.nw; w++) {
		const struct worker *wk = dw_state(e, w);
		vlog("%s rows %zu, in its units' skylines %zu", names[w], wk->rows, wk->kept);
	}

	size_t m = filter_union(dv, e, c.nw, keep, u);
	for (int w = 0; w < c.nw; w++)
		free(dw_state(e, w));
	dw_close(e);
	free(slots);
	free(units);
	return m;
}
