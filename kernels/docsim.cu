/* docsim.cu: the CUDA path, and its driver.
 *
 * Scores come in tiles S = A B^T of rows [r0,r1) (queries, or the corpus itself) against
 * corpus rows [c0,c1), and are ranked inside the tile loop, so memory stays
 * O(rows x k + tile) whatever the corpus size.
 *   - Dense input: A and B are panels of the vectors; S by our GEMM kernels
 *     (docsim_mma.cu: float64, the default; float32 with --precision single; TF32
 *     tensor cores for top-k lists made exact after, docsim_exact.cu).
 *   - Sparse input: the frequent terms (document frequency above n/50, at most 65536 of
 *     them) form dense panels and go through the float64 GEMM; every other term is added into S
 *     from its postings by k_scatter, a warp a row.
 *   - All pairs: only the lower triangle (columns below the row) is computed; each score
 *     is offered to its row (k_rowsel, a warp a row) and to its column's row (k_colsel,
 *     a thread a column), each pair once.
 *   - Dense top-k lists from TF32 products: ranked from the tile as above, or with
 *     ACCELKIT_DOCSIM_FUSED=1 by the product as it ends (docsim_topk_tc.cu), into the
 *     same lists, with no score tile.
 * Vectors stay resident when they fit the device budget (--max-device-mem, else what is
 * free); otherwise panels are uploaded or built tile by tile. Dense vectors go up as
 * float32 through a ring of pinned buffers, filled on the -j threads, on a stream of their
 * own (su), and are widened on the device; resident ones go up as the tile loop first
 * needs their rows, so the upload of the next rows overlaps the work on these. The streams, the ring and
 * the GEMM kernels are set up in the device's start-up thread, beside the reading.
 *
 * This file is the driver (the plan, the two streams, the tile loop, the results back);
 * the kernels live by role in docsim_gemm.cu, docsim_mma.cu, docsim_sparse.cu and docsim_rank.cu (see
 * docsim_dev.cuh). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "docsim_dev.cuh"
#include "progress.h"
#include "timer.h"

/* Host-side list of pairs found so far. */
struct hpairs {
	struct ds_pair *p;
	size_t n, cap;
};

/* Device bytes for the pairs found in a tile (-k 0), under a budget: a sixteenth of it,
 * between 1024 and 2^20 pairs, and the count. What it leaves, budget - pairs_bytes(budget),
 * never falls as the budget grows, so every budget from pairs_least's on fits. (The
 * buffer grows beyond it when a tile finds more pairs.) */
static size_t
pairs_bytes(size_t budget)
{
	size_t lo = 1024 * sizeof(struct ds_pair), hi = ((size_t)1 << 20) * sizeof(struct ds_pair);
	return MIN(hi, MAX(lo, budget / 16)) + 8;
}

/* The least budget that leaves need bytes beside the pairs' buffer: a bisection, as
 * what a budget leaves never falls as it grows (and is none below pairs_bytes). */
static size_t
pairs_least(size_t need)
{
	size_t lo = need, hi = need + pairs_bytes(SIZE_MAX);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mid >= pairs_bytes(mid) && mid - pairs_bytes(mid) >= need)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* -v: adds the last use of buffer b to the streams' busy times. */
static void
busy_time(struct gpu *g, int b)
{
	float ms;
	CUDA_CHECK(cudaEventSynchronize(g->sdone[b]));
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->gstart[b], g->gdone[b]));
	g->gemm_ms += ms;
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->sstart[b], g->sdone[b]));
	g->rank_ms += ms;
}

static void
tile(struct gpu *g, const void *A, const void *B, size_t r0, size_t nr, size_t c0, size_t nc,
    int sym, struct side *rows_side, struct hpairs *hp, double *d2h)
{
	const struct ds_job *j = g->job;
	int b = g->cur;

	/* sa computes the tile once sb is done with the buffer's last one */
	g->S = g->Sbuf[b];
	if (g->used[b]) {
		if (verbose)
			busy_time(g, b);
		CUDA_CHECK(cudaStreamWaitEvent(g->sa, g->sdone[b], 0));
	}
	CUDA_CHECK(cudaEventRecord(g->gstart[b], g->sa));
	if (g->fused) {
		/* the product ranks as it ends: nothing for sb but to follow it (the -v
		 * ranking time is then ~0: the GEMM's includes it) */
		ds_topk_tile(g, (const float *)A, (const float *)B, r0, nr, c0, nc, sym);
		CUDA_CHECK(cudaEventRecord(g->gdone[b], g->sa));
		CUDA_CHECK(cudaStreamWaitEvent(g->sb, g->gdone[b], 0));
		CUDA_CHECK(cudaEventRecord(g->sstart[b], g->sb));
		CUDA_CHECK(cudaEventRecord(g->sdone[b], g->sb));
		g->used[b] = 1;
		g->cur = (b + 1) % g->nbuf;
		return;
	}
	ds_gemm(g, A, B, r0, nr, c0, nc, sym);
	if (g->sparse)
		ds_scatter(g, rows_side, r0, nr, c0, nc, sym);
	CUDA_CHECK(cudaEventRecord(g->gdone[b], g->sa));
	CUDA_CHECK(cudaStreamWaitEvent(g->sb, g->gdone[b], 0));
	CUDA_CHECK(cudaEventRecord(g->sstart[b], g->sb));
	g->used[b] = 1;
	g->cur = (b + 1) % g->nbuf;

	if (j->mode == DS_MATRIX) {
		ds_matrix_tile(g, r0, nr, c0, nc);
	} else {
		if (j->mode == DS_PAIRS)
			CUDA_CHECK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->sb));
		ds_rank_tile(g, r0, nr, c0, nc, sym);
	}
	CUDA_CHECK(cudaEventRecord(g->sdone[b], g->sb));
	if (j->mode == DS_TOPK)
		return;

	double t = now_sec();
	CUDA_CHECK(cudaStreamSynchronize(g->sb));
	*d2h += now_sec() - t;
	if (j->mode != DS_PAIRS)
		return;
	unsigned long long cnt;
	CUDA_CHECK(cudaMemcpy(&cnt, g->count, sizeof cnt, cudaMemcpyDeviceToHost));
	if (cnt > g->cap) {
		/* too many for the buffer: grow it and go through the tile again */
		CUDA_CHECK(cudaFree(g->pairs));
		g->cap = cnt + cnt / 4;
		g->pairs = dalloc<struct ds_pair>(g->cap);
		CUDA_CHECK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->sb));
		ds_rank_tile(g, r0, nr, c0, nc, sym);
		CUDA_CHECK(cudaStreamSynchronize(g->sb));
	}
	if (g->fast && cnt) {
		/* TF32 scores: the pairs kept down to the threshold less the bound get their
		 * float64 scores, and only those that pass stay */
		ds_fast_pairs(g, g->fast_rows, g->fast_cols, cnt);
		CUDA_CHECK(cudaStreamSynchronize(g->sb));
	}
	if (hp->n + cnt > hp->cap) {
		hp->cap = MAX(2 * hp->cap, hp->n + cnt);
		hp->p = (struct ds_pair *)xreallocarray(hp->p, hp->cap, sizeof *hp->p);
	}
	t = now_sec();
	if (cnt)
		CUDA_CHECK(cudaMemcpy(hp->p + hp->n, g->pairs, cnt * sizeof *hp->p, cudaMemcpyDeviceToHost));
	if (g->fast) {
		size_t kept = 0;
		for (size_t q = 0; q < cnt; q++)
			if (ds_passes(hp->p[hp->n + q].s, 1, j->thr))
				hp->p[hp->n + kept++] = hp->p[hp->n + q];
		g->pairs_cand += cnt;
		g->pairs_kept += kept;
		cnt = kept;
	}
	hp->n += cnt;
	*d2h += now_sec() - t;
}

/* A device's streams and staging ring: a worker's own (several GPUs:
 * each worker makes its own in its thread, on its device; nothing here is shared). */
struct ds_ctx {
	cudaStream_t sa, sb, su;	/* see struct gpu */
	cudaEvent_t ev_work, ev_up;
	staging *ring;		/* pinned, for copies on su */
};

/* The one-GPU run's (and the first worker's), made once by ds_gpu_init in the start-up
 * thread, beside the reading. */
static struct ds_ctx ds_dev;
static int ds_dev_ready;

/* A context on the calling thread's device, its GEMM kernels readied. */
static void
ctx_open(struct ds_ctx *c)
{
	ds_mm_init();
	ds_topk_init();
	/* ranking at the higher priority: its blocks go first as GEMM blocks retire */
	int lo_prio, hi_prio;
	CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo_prio, &hi_prio));
	CUDA_CHECK(cudaStreamCreateWithPriority(&c->sa, cudaStreamNonBlocking, lo_prio));
	CUDA_CHECK(cudaStreamCreateWithPriority(&c->sb, cudaStreamNonBlocking, hi_prio));
	CUDA_CHECK(cudaStreamCreateWithFlags(&c->su, cudaStreamNonBlocking));
	CUDA_CHECK(cudaEventCreateWithFlags(&c->ev_work, cudaEventDisableTiming));
	CUDA_CHECK(cudaEventCreateWithFlags(&c->ev_up, cudaEventDisableTiming));
	c->ring = staging_open(DS_RING_K, DS_RING_BYTES, c->su);
}

static void
ctx_close(struct ds_ctx *c)
{
	staging_close(c->ring);
	CUDA_CHECK(cudaEventDestroy(c->ev_work));
	CUDA_CHECK(cudaEventDestroy(c->ev_up));
	CUDA_CHECK(cudaStreamDestroy(c->sa));
	CUDA_CHECK(cudaStreamDestroy(c->sb));
	CUDA_CHECK(cudaStreamDestroy(c->su));
}

extern "C" void
ds_gpu_init(const struct cuda_dev *dev)
{
	CUDA_CHECK(cudaSetDevice(dev->ids[0]));
	if (ds_dev_ready)
		return;
	ctx_open(&ds_dev);
	ds_dev_ready = 1;
}

/* A run on one device: the one-GPU run, or a worker's share of a divided one. */
struct ds_gpu {
	struct gpu g;
	struct ds_ctx *ctx;
	int own_ctx;		/* a worker's own context, closed with it */
	int phases;		/* the one-GPU run: -v's phases are its own */
	struct side cs, qs;
	size_t rows_side, rows_q;	/* rows_q: queries of their own */
	size_t fixed;		/* device bytes of the sparse vectors and the top-k lists */
	size_t lists;		/* of which the lists' */
	int allocated;		/* the plan's buffers are made (at the first rows) */
	struct hpairs hp;
	cudaEvent_t rows_done[2];	/* the last two ds_gpu_rows calls' work */
	unsigned long calls;
	double t0, t1, d2h;
};

/* Switches for comparing paths (cli_env_switch); the printed lines are the same either
 * way. ACCELKIT_DOCSIM_TF32=0 keeps dense top-k lists on the float64 GEMM; 1, the
 * default, lets them come from TF32 products. ACCELKIT_DOCSIM_FUSED=1 ranks those
 * products in the product's own epilogue (docsim_topk_tc.cu); 0, the default, from a
 * score tile on the second stream (docsim_rank.cu), which measured faster on the H200
 * (100k x 1024 top-10: GEMM 127 ms with the ranking's 34 beside it, whole process
 * 538-572 ms, against 151 ms fused, 586-749 whole; 2026-11-29). Read in fast_set and
 * ds_gpu_open. */

/* Whether the GEMM accumulates in float64 without TF32 products: always but for dense
 * input with --precision single. */
static int
float64_gemm(const struct ds_job *job)
{
	return job->sparse || !job->single;
}

/* The fast path (TF32 products, docsim_exact.cu) on or off: the GEMM's type, the lists'
 * length and bytes, the threshold candidates are kept at. */
static void
fast_set(struct ds_gpu *d, int on)
{
	struct gpu *g = &d->g;
	const struct ds_job *job = g->job;
	g->fast = on;
	g->fused = on && job->mode == DS_TOPK && cli_env_switch("ACCELKIT_DOCSIM_FUSED", 0);
	g->dbl = !on && float64_gemm(job);
	g->esz = g->dbl ? 8 : 4;
	g->kl = job->k + (on ? DS_FAST_EXTRA : 0);
	g->bound = on ? ds_fast_bound(g->K) : 0;
	g->thr_sel = job->thr - g->bound;
	d->fixed -= d->lists;
	/* the lists; when fast also the exact ones, the rows to recheck and two counts */
	d->lists = job->mode == DS_TOPK ? d->rows_side * (g->kl + (on ? job->k : 0)) * 8 : 0;
	if (on && job->mode == DS_TOPK)
		d->lists += d->rows_side * 4 + 4 * sizeof(unsigned long long);
	d->fixed += d->lists;
}

extern "C" struct ds_gpu *
ds_gpu_open(const struct ds_job *job, const struct cuda_dev *dev, int w, size_t *budget)
{
	struct ds_gpu *d = (struct ds_gpu *)xcalloc(1, sizeof *d);
	struct gpu *g = &d->g;
	if (w == 0) {
		ds_gpu_init(dev);	/* made in the start-up thread: the device is ids[0] */
		d->ctx = &ds_dev;
	} else {
		cuda_worker_use(dev, w);
		d->ctx = (struct ds_ctx *)xcalloc(1, sizeof *d->ctx);
		ctx_open(d->ctx);
		d->own_ctx = 1;
	}
	d->t0 = now_sec();
	g->job = job;
	g->sparse = job->sparse;
	g->sa = d->ctx->sa;
	g->sb = d->ctx->sb;
	g->su = d->ctx->su;
	g->ev_work = d->ctx->ev_work;
	g->ev_up = d->ctx->ev_up;
	g->ring = d->ctx->ring;
	g->sym = job->sym && job->mode != DS_MATRIX;
	g->dbl = float64_gemm(job);
	g->esz = g->dbl ? 8 : 4;

	size_t n = job->n, nq = job->nq;
	d->rows_side = g->sym ? n : nq;
	if (n >= (size_t)INT32_MAX || nq >= (size_t)INT32_MAX)
		die("more than %d documents are too many for the GPU path (use -d cpu)", INT32_MAX - 1);
	d->cs.rows = n;
	d->qs.rows = nq;
	d->rows_q = job->sym ? 0 : nq;
	if (g->sparse) {
		d->fixed += ds_sparse_upload(g, &d->cs, &d->qs);
	} else {
		g->K = job->dim;
		d->cs.host = job->cd;
		d->qs.host = job->sym ? job->cd : job->qd;
	}
	/* dense top-k lists and -k 0 pairs in float64 come from TF32 products when the plan
	 * allows (ds_gpu_plan) and the vectors are unit (the bound is for unit vectors: raw
	 * ones, --weight none, stay float64); ACCELKIT_DOCSIM_TF32=0 keeps them float64 */
	fast_set(d, !g->sparse && g->dbl && job->unit &&
	    ((job->mode == DS_TOPK && job->k >= 1 && job->k <= DS_FAST_KMAX) || (job->mode == DS_PAIRS && job->use_thr)) &&
	    cli_env_switch("ACCELKIT_DOCSIM_TF32", 1));
	*budget = job->max_mem;
	if (*budget == 0) {
		size_t fr, tot, margin = (size_t)256 << 20;	/* the runtime's own allocations */
		CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
		*budget = fr / 100 * 92 > margin ? fr / 100 * 92 - margin : 0;
	}
	for (int b = 0; b < 2; b++)
		CUDA_CHECK(cudaEventCreateWithFlags(&d->rows_done[b], cudaEventDisableTiming));
	return d;
}

extern "C" size_t
ds_gpu_plan(struct ds_gpu *d, size_t budget, int say)
{
	struct gpu *g = &d->g;
	const struct ds_job *job = g->job;
	/* -k 0's pairs buffer grows with the budget; the least budget is found from the
	 * bytes beside it (pairs_least) */
	size_t pairs = job->mode == DS_PAIRS ? pairs_bytes(budget) : 0;
	if (job->mode == DS_PAIRS)
		g->cap = (pairs - 8) / sizeof(struct ds_pair);
	/* TF32 products need the vectors resident, to rescore the candidates from; their
	 * least plan (1 x 1 tiles) may need less than float64's, and the least that works
	 * is the smaller */
	size_t fast_need = SIZE_MAX;
	if (g->fast && !(ds_choose_plan(g, budget, d->fixed + pairs, d->rows_side, d->rows_q) && g->resident)) {
		fast_need = d->fixed + ds_plan_least_resident(g, d->rows_q);
		fast_set(d, 0);
	}
	if (!ds_choose_plan(g, budget, d->fixed + pairs, d->rows_side, d->rows_q)) {
		size_t need = MIN(fast_need, d->fixed + ds_plan_least(g, d->rows_q));
		die("device memory of %zu bytes is too small for this input (it needs at least %zu; see --max-device-mem)",
		    budget, job->mode == DS_PAIRS ? pairs_least(need) : need);
	}
	if (say)
		vlog("gpu: tiles of %zu x %zu, vectors %s, %s", g->BR, g->BC,
		    g->resident ? "resident" : "streamed by panel",
		    g->fast ? (job->mode == DS_PAIRS ? "TF32 products, the pairs near the threshold rescored in float64"
		    : "TF32 products, the lists' candidates rescored in float64")
		    : g->dbl ? "float64 accumulation" : "float32 GEMM");
	return g->BR;
}

/* The plan's buffers, the resident vectors and the top-k lists: made at the worker's
 * first rows, in its thread. */
static void
gpu_alloc(struct ds_gpu *d)
{
	struct gpu *g = &d->g;
	const struct ds_job *job = g->job;
	size_t n = job->n;
	g->nbuf = job->mode == DS_TOPK ? 2 : 1;
	for (int b = 0; b < g->nbuf; b++) {
		g->Sbuf[b] = dalloc<char>(g->BR * g->BC * g->esz);
		CUDA_CHECK(cudaEventCreate(&g->gstart[b]));
		CUDA_CHECK(cudaEventCreate(&g->gdone[b]));
		CUDA_CHECK(cudaEventCreate(&g->sstart[b]));
		CUDA_CHECK(cudaEventCreate(&g->sdone[b]));
	}
	if (job->mode == DS_MATRIX && g->esz == 8)
		g->conv = dalloc<float>(g->BR * g->BC);
	if (!g->sparse && g->dbl) {
		g->stage_floats = ds_stage_floats(g, g->resident, g->BR, g->BC, MAX(n, d->rows_q));
		g->stage = dalloc<float>(g->stage_floats);
	}
	if (g->resident) {
		ds_make_resident(g, &d->cs);
		if (d->rows_q)
			ds_make_resident(g, &d->qs);
		else
			d->qs.res = d->cs.res;
	} else {
		g->pa = dalloc<char>(g->BR * g->K * g->esz);
		g->pb = dalloc<char>(g->BC * g->K * g->esz);
	}
	if (job->mode == DS_TOPK && job->k > 0) {
		g->tops = dalloc<float>(d->rows_side * g->kl);
		g->topi = dalloc<int32_t>(d->rows_side * g->kl);
		ds_fill_state(g, d->rows_side * g->kl, 0);
	}
	if (g->fast) {
		g->fast_rows = (const float *)d->qs.res;
		g->fast_cols = (const float *)d->cs.res;
	}
	if (g->fast && job->mode == DS_TOPK) {
		g->fin_s = dalloc<float>(d->rows_side * job->k);
		g->fin_i = dalloc<int32_t>(d->rows_side * job->k);
		g->undecided = dalloc<int32_t>(d->rows_side);
		/* the lists' locks until the last tile (docsim_topk_tc.cu): all free */
		CUDA_CHECK(cudaMemset(g->undecided, 0, d->rows_side * sizeof(int32_t)));
		g->counts = dalloc<unsigned long long>(4);
	}
	if (job->mode == DS_PAIRS) {
		g->pairs = dalloc<struct ds_pair>(g->cap);
		g->count = dalloc<unsigned long long>(1);
	}
	/* this thread's device: the default stream's set-up (ds_fill_state, the sparse
	 * panels) and the uploads before the streams use them */
	CUDA_CHECK(cudaDeviceSynchronize());
	d->allocated = 1;
	d->t1 = now_sec();
	if (d->phases)
		phase_add(PH_H2D, d->t1 - d->t0);
}

extern "C" void
ds_gpu_rows(struct ds_gpu *d, size_t a, size_t b, struct ds_pair **pairs, size_t *npairs)
{
	struct gpu *g = &d->g;
	const struct ds_job *job = g->job;
	size_t n = job->n;
	struct side *cs = &d->cs, *qs = &d->qs;
	if (!d->allocated)
		gpu_alloc(d);
	/* the host's time filling the ring (g.up_sec) is host-to-device time; the copies
	 * themselves overlap the work queued before them. Tiles start at multiples of BR
	 * (a is one), so each is the one-GPU run's, computed by the same GEMM. */
	if (g->sym) {
		/* the lower triangle: row panel I against the columns below its last row */
		for (size_t r0 = a; r0 < b; r0 += g->BR) {
			size_t r1 = MIN(n, r0 + g->BR);
			ds_side_ready(g, cs, r1);
			const void *A = ds_panel(g, cs, r0, r1, g->pa);
			for (size_t c0 = 0; c0 < r1; c0 += g->BC) {
				size_t c1 = MIN(r1, c0 + g->BC);
				const void *B = ds_panel(g, cs, c0, c1, g->pb);
				tile(g, A, B, r0, r1 - r0, c0, c1 - c0, 1, qs, &d->hp, &d->d2h);
				progress_add((r1 - r0) * (c1 - c0));
			}
		}
	} else {
		/* every query row is needed from the first column panel on (all of the corpus
		 * when the queries are the corpus, for --matrix) */
		ds_side_ready(g, qs->res == cs->res ? cs : qs, b);
		for (size_t c0 = 0; c0 < n; c0 += g->BC) {
			size_t c1 = MIN(n, c0 + g->BC);
			ds_side_ready(g, cs, c1);
			const void *B = ds_panel(g, cs, c0, c1, g->pb);
			for (size_t r0 = a; r0 < b; r0 += g->BR) {
				size_t r1 = MIN(b, r0 + g->BR);
				const void *A = ds_panel(g, qs, r0, r1, g->pa);
				tile(g, A, B, r0, r1 - r0, c0, c1 - c0, 0, qs, &d->hp, &d->d2h);
				progress_add((r1 - r0) * (c1 - c0));
			}
		}
	}
	*pairs = d->hp.p;
	*npairs = d->hp.n;
	memset(&d->hp, 0, sizeof d->hp);
	/* At most this call's work and the last one's stay queued (sb's last event follows
	 * every GEMM it ranked), so a worker takes its next rows as its device frees up,
	 * not all of them at once. */
	CUDA_CHECK(cudaEventRecord(d->rows_done[d->calls % 2], g->sb));
	if (d->calls > 0)
		CUDA_CHECK(cudaEventSynchronize(d->rows_done[(d->calls - 1) % 2]));
	d->calls++;
}

static void gpu_free(struct ds_gpu *d);

extern "C" void
ds_gpu_close(struct ds_gpu *d, float *top_s, int32_t *top_i)
{
	struct gpu *g = &d->g;
	const struct ds_job *job = g->job;
	if (!d->allocated) {
		/* a worker that was given no rows: empty lists, as ds_fill_state makes them */
		for (size_t i = 0; job->mode == DS_TOPK && i < d->rows_side * job->k; i++) {
			top_s[i] = -INFINITY;
			top_i[i] = DS_NONE;
		}
		gpu_free(d);
		return;
	}
	CUDA_CHECK(cudaStreamSynchronize(g->su));
	CUDA_CHECK(cudaStreamSynchronize(g->sa));
	CUDA_CHECK(cudaStreamSynchronize(g->sb));
	double t2 = now_sec();
	if (d->phases) {
		phase_add(PH_H2D, g->up_sec);
		phase_add(PH_COMPUTE, t2 - d->t1 - d->d2h - g->up_sec);
	}
	if (verbose) {
		if (g->up_bytes > 0)
			vlog("gpu: %.1f MB of vectors up through %s buffers, the host %.1f ms filling them",
			    g->up_bytes / 1e6, staging_pinned(g->ring) ? "pinned" : "pageable", g->up_sec * 1e3);
		for (int b = 0; b < g->nbuf; b++)
			if (g->used[b])
				busy_time(g, b);
		if (g->fused)
			vlog("gpu: TF32 products ranked into the lists as they end, no score tile: %.1f ms", g->gemm_ms);
		else
			vlog("gpu: GEMM%s %.1f ms, ranking %.1f ms (on two streams, overlapping)",
			    g->sparse ? " and postings" : "", g->gemm_ms, g->rank_ms);
	}
	if (g->fast && job->mode == DS_PAIRS)
		vlog("gpu: %zu pairs at or above the threshold less the TF32 bound (%.3g) rescored in float64, %zu passed",
		    g->pairs_cand, g->bound, g->pairs_kept);
	if (g->fast && job->mode == DS_TOPK) {
		double t = now_sec();
		size_t counts[3];
		ds_fast_exact(g, (const float *)d->qs.res, (const float *)d->cs.res, d->rows_side, d->cs.ready, counts);
		t = now_sec() - t;
		t2 += t;
		if (d->phases)
			phase_add(PH_COMPUTE, t);
		vlog("gpu: lists of %zu made exact in %.1f ms: %zu rows' candidates rescored; %zu rows (a gap under "
		     "twice the TF32 bound, %.3g) rechecked by a float32 GEMM, of which %zu crowded (rescored from "
		     "every column near their k-th) and %zu computed whole",
		    g->kl, t * 1e3, d->rows_side - counts[0], counts[0], g->bound, counts[1], counts[2]);
	}
	if (job->mode == DS_TOPK && job->k > 0) {
		CUDA_CHECK(cudaMemcpy(top_s, g->fast ? g->fin_s : g->tops, d->rows_side * job->k * 4,
		    cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(top_i, g->fast ? g->fin_i : g->topi, d->rows_side * job->k * 4,
		    cudaMemcpyDeviceToHost));
	}
	if (d->phases)
		phase_add(PH_D2H, now_sec() - t2 + d->d2h);
	gpu_free(d);
}

/* Everything d holds, and d. */
static void
gpu_free(struct ds_gpu *d)
{
	struct gpu *g = &d->g;
	if (g->resident) {
		cudaFree(d->cs.res);
		if (d->qs.res != d->cs.res)
			cudaFree(d->qs.res);
	}
	if (g->sparse)
		ds_sparse_free(g, &d->cs, &d->qs);
	cudaFree(g->pa);
	cudaFree(g->pb);
	cudaFree(g->stage);
	for (int b = 0; b < g->nbuf; b++) {
		cudaFree(g->Sbuf[b]);
		cudaEventDestroy(g->gstart[b]);
		cudaEventDestroy(g->gdone[b]);
		cudaEventDestroy(g->sstart[b]);
		cudaEventDestroy(g->sdone[b]);
	}
	cudaFree(g->conv);
	cudaFree(g->tops);
	cudaFree(g->topi);
	cudaFree(g->fin_s);
	cudaFree(g->fin_i);
	cudaFree(g->undecided);
	cudaFree(g->counts);
	cudaFree(g->pairs);
	cudaFree(g->count);
	for (int b = 0; b < 2; b++)
		cudaEventDestroy(d->rows_done[b]);
	free(d->hp.p);
	if (d->own_ctx) {
		ctx_close(d->ctx);
		free(d->ctx);
	}
	free(d);
}

extern "C" void
ds_gpu_run(struct ds_job *job, const struct cuda_dev *dev)
{
	size_t budget;
	struct ds_gpu *d = ds_gpu_open(job, dev, 0, &budget);
	d->phases = 1;
	ds_gpu_plan(d, budget, 1);
	struct ds_pair *pairs;
	size_t npairs;
	ds_gpu_rows(d, 0, d->rows_side, &pairs, &npairs);
	if (job->mode == DS_PAIRS) {
		job->pairs = pairs;
		job->npairs = npairs;
	}
	ds_gpu_close(d, job->top_s, job->top_i);
}
