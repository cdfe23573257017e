/* docsim_split.c: docsim over several workers in one process, on the one work engine
 * (common/devwork.h): -d gpu:all or gpu:0,1 (a worker a GPU), or, for the tests, the CPU
 * path as ACCELKIT_CPU_WORKERS workers.
 *
 * As under mpirun (docsim_ranks.c), every worker holds the whole prepared corpus and a
 * unit of work is a block of rows: of the pair matrix for all pairs, of the queries with
 * -q. The units go to the workers as they free up; the results come together here as
 * the one-worker run leaves them in the job, and main writes them as ever.
 *
 * What keeps the bytes the one-worker run's:
 *   - CPU: a row's scores are its own arithmetic whatever rows run beside it (the job's
 *     rows [r0, r1) of docsim_cpu.c), so each worker's rows are the whole run's.
 *   - GPU: every worker takes the one plan (ds_gpu_plan, for the least budget of the
 *     workers) and blocks start at multiples of its tile rows, so each score comes from
 *     the tile, and the kernel launch, that the one-GPU run computes it in. All pairs
 *     compute only the lower triangle there: a score also goes to its column's list,
 *     which may be another worker's row, so each worker keeps lists for every row.
 *   - Lists are merged row by row (ds_merge_lists): the k best distinct candidates of
 *     the workers' lists by ds_better, which orders candidates strictly, are the one
 *     list's k best. The lists need not be disjoint: a GPU worker whose TF32 list of a
 *     row leaves too small a gap rechecks that row against every column it holds
 *     (docsim_exact.cu), pairs other workers scored too, so one candidate can come in
 *     two lists (with the same float64 score, ds_dot_fd's either way round) and is
 *     taken once. Each list is the k best of a set of columns, and every column is in
 *     some worker's set, so the k best distinct of all are the one run's.
 *     Pairs (-k 0) are scored once, on one worker; they are gathered, and ds_write
 *     sorts them. --matrix rows are written in place, each by the one worker that had
 *     them.
 * Units: blocks of whole tiles, about eight a worker (several, to balance; on a GPU at
 * least one tile of up to the tuning table's tile_rows rows). All pairs hand out the
 * last rows first: their rows of the triangle are the longest.
 *
 * Under mpirun, all pairs divide the same way (ds_split_share): every rank makes the
 * same units, on the tile plan of the least budget of all ranks' GPUs, and runs those
 * whose number is its rank modulo the ranks (so each gets long and short rows of the
 * triangle); docsim_ranks.c merges the ranks' lists on rank 0 as ds_merge_lists merges
 * the workers'. A pair goes to the lists as on one process (rechecked rows may hold
 * other ranks' pairs too: ds_merge_lists takes each candidate once). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudadev.h"
#include "devwork.h"
#include "docsim.h"
#include "err.h"
#include "ranks.h"
#include "timer.h"

/* Units a worker, about: enough that the last ones even out the workers' finish. */
#define UNITS_A_WORKER 8

struct unit {
	size_t a, b;		/* rows [a, b) */
	struct ds_pair *pairs;	/* -k 0: the pairs found */
	size_t npairs;
};

struct worker {
	struct ds_gpu *gpu;	/* a GPU's run, or NULL on the CPU */
	float *top_s;		/* top-k: lists for every row (nq x k), those of this */
	int32_t *top_i;		/* worker's units (and, all pairs on a GPU, their columns) */
	size_t budget;		/* GPU: the device bytes it may use */
};

struct split {
	struct ds_job *job;
	const struct cuda_dev *dev;
	size_t rows, step, nunits;	/* nunits: of every rank */
	int reverse;
	int rank, nranks;		/* this rank runs units rank, rank + nranks, ... */
	size_t mine;			/* how many that is (0: one empty unit) */
};

static void *
w_init(void *ctx, int w)
{
	struct split *sp = ctx;
	const struct ds_job *job = sp->job;
	struct worker *wk = xcalloc(1, sizeof *wk);
	if (job->mode == DS_TOPK) {
		size_t cells = mul_size(job->nq, job->k, "top-k lists");
		wk->top_s = xmallocarray(MAX(cells, 1), sizeof *wk->top_s);
		wk->top_i = xmallocarray(MAX(cells, 1), sizeof *wk->top_i);
		for (size_t i = 0; i < cells; i++) {	/* rows no unit of this worker had */
			wk->top_s[i] = -INFINITY;
			wk->top_i[i] = DS_NONE;
		}
	}
#ifdef ACCELKIT_CUDA
	if (sp->dev->gpu)
		wk->gpu = ds_gpu_open(job, sp->dev, w, &wk->budget);
#else
	(void)w;
#endif
	return wk;
}

static int
w_make(void *ctx, void *slot, uint64_t k)
{
	struct split *sp = ctx;
	struct unit *u = slot;
	size_t g = (size_t)k * (size_t)sp->nranks + (size_t)sp->rank;
	size_t i = sp->reverse ? sp->nunits - 1 - g : g;
	u->pairs = NULL;
	u->npairs = 0;
	if (sp->mine == 0) {	/* a rank with no unit: the engine still wants one */
		u->a = u->b = 0;
		return DW_LAST;
	}
	u->a = i * sp->step;
	u->b = MIN(sp->rows, u->a + sp->step);
	return k + 1 < sp->mine ? DW_MORE : DW_LAST;
}

static int
w_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct split *sp = ctx;
	struct worker *wk = state;
	struct unit *u = slot;
	(void)w;
	(void)err;
	if (u->a == u->b)
		return 0;	/* rows [0, 0): ds_cpu_run would read r1 = 0 as "to the end" */
#ifdef ACCELKIT_CUDA
	if (wk->gpu != NULL) {
		ds_gpu_rows(wk->gpu, u->a, u->b, &u->pairs, &u->npairs);
		return 0;
	}
#endif
	struct ds_job j = *sp->job;
	j.r0 = u->a;
	j.r1 = u->b;
	j.top_s = wk->top_s;
	j.top_i = wk->top_i;
	j.pairs = NULL;
	j.npairs = 0;
	ds_cpu_run(&j);
	u->pairs = j.pairs;
	u->npairs = j.npairs;
	return 0;
}

static void
w_fini(void *ctx, void *state, int w)
{
	struct worker *wk = state;
	(void)ctx;
	(void)w;
#ifdef ACCELKIT_CUDA
	if (wk->gpu != NULL)
		ds_gpu_close(wk->gpu, wk->top_s, wk->top_i);	/* waits for its device */
	wk->gpu = NULL;
#else
	(void)wk;
#endif
}

/* -v's shares: rows. */
static double
w_weight(void *ctx, const void *slot)
{
	const struct unit *u = slot;
	(void)ctx;
	return (double)(u->b - u->a);
}

static const struct dw_ops split_ops = {w_init, w_make, w_process, w_fini, w_weight};

void
ds_merge_lists(struct ds_job *job, const float *const *ls, const int32_t *const *li, int nw)
{
	size_t k = job->k;
	size_t *at = xcalloc((size_t)nw, sizeof *at);
	/* took[i]: 1 + the last row whose merged list took candidate i */
	size_t *took = xcalloc(MAX(job->n, (size_t)1), sizeof *took);
	for (size_t r = 0; r < job->nq; r++) {
		float *os = job->top_s + r * k;
		int32_t *oi = job->top_i + r * k;
		size_t t = 0;
		for (int w = 0; w < nw; w++)
			at[w] = 0;
		while (t < k) {
			int best = -1;
			float bs = -INFINITY;
			int32_t bi = DS_NONE;
			for (int w = 0; w < nw; w++) {
				if (at[w] >= k)
					continue;
				float s = ls[w][r * k + at[w]];
				int32_t i = li[w][r * k + at[w]];
				if (best < 0 || ds_better(s, i, bs, bi)) {
					best = w;
					bs = s;
					bi = i;
				}
			}
			if (best < 0 || bi == DS_NONE)
				break;	/* every list spent */
			at[best]++;
			if (took[bi] == r + 1)
				continue;	/* a pair that another list holds too (see above) */
			took[bi] = r + 1;
			os[t] = bs;
			oi[t] = bi;
			t++;
		}
		for (; t < k; t++) {
			os[t] = -INFINITY;
			oi[t] = DS_NONE;
		}
	}
	free(took);
	free(at);
}

void
ds_split_run(struct ds_job *job, const struct cuda_dev *dev, int nworkers)
{
	ds_split_share(job, dev, nworkers, 0, 1);
}

void
ds_split_share(struct ds_job *job, const struct cuda_dev *dev, int nworkers, int rank,
    int nranks)
{
	struct split sp = {job, dev, job->nq, 1, 0, job->sym, rank, nranks, 0};
	double t = now_sec();
	int nslots = dw_slots(nworkers);
	struct unit *units = xcalloc((size_t)nslots, sizeof *units);
	void **slots = xmallocarray((size_t)nslots, sizeof *slots);
	for (int i = 0; i < nslots; i++)
		slots[i] = &units[i];
	dw *e = dw_open(&split_ops, &sp, slots, nslots, nworkers);
	struct worker *wk[CUDADEV_MAX];
	for (int w = 0; w < nworkers; w++)
		wk[w] = dw_state(e, w);

	/* The units: whole tiles of the one plan (the least budget of the workers' and,
	 * under mpirun, of every rank's; a GPU listed twice shares its memory), about
	 * UNITS_A_WORKER a worker of all ranks. */
	size_t tile = 1, budget = SIZE_MAX;
#ifdef ACCELKIT_CUDA
	if (dev->gpu) {
		for (int w = 0; w < nworkers; w++) {
			size_t b = wk[w]->budget;
			int same = 0;
			for (int v = 0; v < nworkers; v++)
				same += dev->ids[v] == dev->ids[w];
			if (job->max_mem == 0)
				b /= (size_t)same;
			budget = MIN(budget, b);
		}
	}
#endif
	int64_t least = (int64_t)MIN(budget, (size_t)INT64_MAX), workers = nworkers;
	if (nranks > 1) {	/* collective: every rank calls these */
		ranks_min_i64(&least, 1);
		ranks_sum_i64(&workers, 1);
	}
#ifdef ACCELKIT_CUDA
	if (dev->gpu)
		for (int w = 0; w < nworkers; w++)
			tile = ds_gpu_plan(wk[w]->gpu, (size_t)least, w == 0);
#endif
	size_t tiles = CEIL_DIV(sp.rows, tile);
	int64_t step = (int64_t)(tile * MAX((size_t)1, tiles / ((size_t)UNITS_A_WORKER *
	    (size_t)workers)));
	/* Ranks must cut the rows alike to cover each once: unlike GPUs may plan unlike
	 * tiles, so the largest step (whole tiles of that rank's plan) is every rank's. */
	if (nranks > 1)
		ranks_max_i64(&step, 1);
	sp.step = (size_t)step;
	sp.nunits = CEIL_DIV(sp.rows, sp.step);
	sp.mine = sp.nunits > (size_t)rank ? CEIL_DIV(sp.nunits - (size_t)rank, (size_t)nranks) : 0;
	if (nranks > 1)
		vlog("rank %d of %d: %zu of the %zu units of %zu %s, over %d workers", rank, nranks,
		    sp.mine, sp.nunits, sp.step, job->sym ? "rows" : "queries", nworkers);
	else
		vlog("%zu %s in %zu units of %zu over %d workers", sp.rows,
		    job->sym ? "rows" : "queries", sp.nunits, sp.step, nworkers);
	phase_add("worker set-up", now_sec() - t);

	t = now_sec();
	size_t npairs = 0, cap = 0;
	for (struct unit *u; (u = dw_next(e, NULL)) != NULL;) {
		if (u->npairs > 0) {
			if (npairs + u->npairs > cap) {
				cap = MAX(2 * cap, npairs + u->npairs);
				job->pairs = xreallocarray(job->pairs, cap, sizeof *job->pairs);
			}
			memcpy(job->pairs + npairs, u->pairs, u->npairs * sizeof *u->pairs);
			npairs += u->npairs;
		}
		free(u->pairs);
		u->pairs = NULL;
	}
	dw_join(e);	/* the GPUs drain in their fini: their busy time counts it */
	phase_add(PH_COMPUTE, now_sec() - t);
	if (job->mode == DS_PAIRS) {
		if (job->pairs == NULL)
			job->pairs = xmalloc(sizeof *job->pairs);	/* as the CPU path leaves it */
		job->npairs = npairs;
	}
	char names[CUDADEV_MAX][32];
	const char *np[CUDADEV_MAX];
	for (int w = 0; w < nworkers; w++) {
		cuda_worker_name(dev, w, names[w], sizeof names[w]);
		np[w] = names[w];
	}
	dw_report(e, np);

	t = now_sec();
	if (job->mode == DS_TOPK && job->k > 0) {
		const float *ls[CUDADEV_MAX] = {0};
		const int32_t *li[CUDADEV_MAX] = {0};
		for (int w = 0; w < nworkers; w++) {
			ls[w] = wk[w]->top_s;
			li[w] = wk[w]->top_i;
		}
		ds_merge_lists(job, ls, li, nworkers);
	}
	dw_close(e);
	for (int w = 0; w < nworkers; w++) {
		free(wk[w]->top_s);
		free(wk[w]->top_i);
		free(wk[w]);
	}
	phase_add("merge", now_sec() - t);
	free(units);
	free(slots);
}
