/* gmmscore_stream.c: gmmscore's streaming pipeline (see gmmscore_stream.h).
 *
 * A reader thread parses the feature files into chunks of frames (several utterances
 * can share a chunk) while the device scores the previous chunk and the calling thread
 * writes the one before that: reading, scoring and writing overlap, and memory stays
 * bounded by a few chunks. Separate from gmmscore_run.c, which chooses what runs,
 * and from gmmscore_out.c, which formats what comes out.
 *
 * Several GPUs (gpu:all, gpu:0,1): the device engine (common/devwork.h) in place of the
 * ring. Its maker reads chunks as the reader thread does, a worker a GPU scores them
 * with its own copy of the parameters and buffers, and this thread writes them in input
 * order: the output is the one-GPU run's, byte for byte (a frame's scores do not depend
 * on the chunk it is scored in, nor on the GPU). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devwork.h"
#include "err.h"
#include "gmmscore.h"
#include "gmmscore_stream.h"
#include "speech.h"
#include "progress.h"
#include "timer.h"
#ifdef ACCELKIT_CUDA
#include "staging.h"
#endif

#define NBUF 3				/* chunks in flight: reading, scoring, writing */
#define HOST_RESULT_MAX ((size_t)128 << 20)	/* bytes of scores a chunk, --all */
#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

struct gmm_stream {
	struct gmm_stream_cfg cfg;
	int dp;
	size_t cap;			/* frames a chunk */
	/* the reader's side */
	struct gmm_chunk buf[NBUF];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	double t_read;
	char *block;			/* every chunk's buffers */
	int pinned;			/* block is pinned (cuda_pin) */
	/* the scorer's side */
	struct gmm_writer *w;
	float *scores;			/* CPU with --top: every score of a chunk */
#ifdef ACCELKIT_CUDA
	struct gmm_gpu *gpu;
	int host_top;			/* the GPU returns every score; the top is taken here */
#endif
	uint64_t frames;
	/* several workers (devwork.h): one a GPU, or ACCELKIT_CPU_WORKERS on the CPU */
	int nw;
	dw *dw;
	struct gmm_chunk *mbuf;		/* dw_slots(nw) chunks */
	void **mslot;
	int nmbuf;
};

/* A worker's own: its GPU's copy of the parameters and buffers, or on the CPU the
 * scores of a chunk (for --top). */
struct gmm_worker {
#ifdef ACCELKIT_CUDA
	struct gmm_gpu *gpu;
#endif
	float *scores;
};

/* ---- the chunk ring ---- */

static struct gmm_chunk *
wait_chunk(struct gmm_stream *st, int i, int full)
{
	struct gmm_chunk *c = &st->buf[i];
	pthread_mutex_lock(&st->mu);
	while (c->full != full)
		pthread_cond_wait(&st->cv, &st->mu);
	pthread_mutex_unlock(&st->mu);
	return c;
}

static void
set_chunk(struct gmm_stream *st, struct gmm_chunk *c, int full)
{
	pthread_mutex_lock(&st->mu);
	c->full = full;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}

static int
chunk_ready(struct gmm_stream *st, int i)
{
	pthread_mutex_lock(&st->mu);
	int full = st->buf[i].full;
	pthread_mutex_unlock(&st->mu);
	return full;
}

static void
add_seg(struct gmm_chunk *c, const char *key, uint64_t first, size_t n)
{
	if (c->nseg > 0) {
		struct gmm_seg *s = &c->seg[c->nseg - 1];
		if (s->key == key && s->first + s->n == first && n > 0) {
			s->n += n;
			return;
		}
	}
	if (c->nseg == c->capseg) {
		c->capseg = c->capseg ? 2 * c->capseg : 16;
		c->seg = xreallocarray(c->seg, c->capseg, sizeof *c->seg);
	}
	c->seg[c->nseg++] = (struct gmm_seg){key, first, n};
}

/* Fills the empty chunk c with the next frames, up to st->cap of them; c->last says
 * whether the input ended. Several utterances can share a chunk, a long one spans
 * several, and an empty one is a segment of no frames. */
static void
fill_chunk(struct gmm_stream *st, struct gmm_chunk *c)
{
	const size_t dp = (size_t)st->dp;
	struct gmm_seg sg;

	c->n = 0;
	c->nseg = 0;
	c->last = 0;
	while (c->n < st->cap) {
		if (!gmm_feats_next(st->cfg.feats, c->x + c->n * dp, st->cap - c->n, &sg)) {
			c->last = 1;
			return;
		}
		add_seg(c, sg.key, sg.first, sg.n);
		c->n += sg.n;
	}
}

/* The reader thread: features into chunks, in order. */
static void *
reader_main(void *arg)
{
	struct gmm_stream *st = arg;
	double t0 = now_sec(), waited = 0;

	for (int bi = 0;; bi = (bi + 1) % NBUF) {
		double tw = now_sec();
		struct gmm_chunk *c = wait_chunk(st, bi, 0);
		waited += now_sec() - tw;
		fill_chunk(st, c);
		if (c->last)
			st->t_read = now_sec() - t0 - waited;
		set_chunk(st, c, 1);
		if (c->last)
			return NULL;
	}
}

/* ---- the scorer's steps ---- */

/* Scores the chunk on the CPU; scores: room for every score of a chunk, for --top. */
static void
cpu_score(struct gmm_stream *st, struct gmm_chunk *c, float *scores)
{
	double t0 = now_sec();
	const struct gmm_params *prm = st->cfg.prm;
	gmm_cpu_score(prm, st->cfg.mode, (size_t)st->cfg.tune->cpu_fblk, c->x, c->n,
	    st->cfg.top ? scores : c->val);
	if (st->cfg.top)
		gmm_top(scores, c->n, prm->nmodels, st->cfg.top, c->idx, c->tv);
	phase_add(PH_COMPUTE, now_sec() - t0);
}

/* Queues the chunk on the GPU, or scores it on the CPU. */
static void
start_chunk(struct gmm_stream *st, int bi, struct gmm_chunk *c)
{
	if (c->n == 0)
		return;
#ifdef ACCELKIT_CUDA
	if (st->gpu != NULL) {
		if (st->cfg.top && !st->host_top)
			gmm_gpu_submit(st->gpu, bi, c->x, c->n, c->idx, c->tv);
		else
			gmm_gpu_submit(st->gpu, bi, c->x, c->n, NULL, c->val);
		return;
	}
#else
	(void)bi;
#endif
	cpu_score(st, c, st->scores);
}

/* Waits for the chunk's results, writes them and hands the chunk back to the reader. */
static void
finish_chunk(struct gmm_stream *st, struct gmm_chunk *c)
{
#ifdef ACCELKIT_CUDA
	if (st->gpu != NULL) {
		gmm_gpu_wait(st->gpu, (int)(c - st->buf));
		if (st->host_top && c->n > 0)
			gmm_top(c->val, c->n, st->cfg.prm->nmodels, st->cfg.top, c->idx, c->tv);
	}
#endif
	gmm_writer_chunk(st->w, c);
	st->frames += c->n;
	progress_add(c->n);
	c->n = 0;
	c->nseg = 0;
	set_chunk(st, c, 0);
}

/* ---- several workers: the device engine (devwork.h) ---- */

static void *
worker_init(void *ctx, int w)
{
	struct gmm_stream *st = ctx;
	const struct gmm_stream_cfg *cfg = &st->cfg;
	struct gmm_worker *wk = xcalloc(1, sizeof *wk);
#ifdef ACCELKIT_CUDA
	if (cfg->dev->gpu) {
		/* The chunk asked for; the GPU may take less (its memory): st->cap is then
		 * lowered to the least of the workers' before any chunk is made. */
		cuda_worker_use(cfg->dev, w);
		wk->gpu = gmm_gpu_init(cfg->prm, cfg->mode, st->host_top ? 0 : cfg->top, st->cap,
		    cfg->max_mem, cfg->dev->ids[w], cfg->tune, cfg->layout);
		return wk;
	}
#else
	(void)w;
#endif
	if (cfg->top)
		wk->scores = xmallocarray(mul_size(st->cap, cfg->prm->nmodels, "chunk"),
		    sizeof(float));
	return wk;
}

static int
worker_make(void *ctx, void *slot, uint64_t k)
{
	struct gmm_stream *st = ctx;
	struct gmm_chunk *c = slot;
	(void)k;
	double t0 = now_sec();
	fill_chunk(st, c);
	st->t_read += now_sec() - t0;	/* the maker's alone: read after the last unit */
	return c->last ? DW_LAST : DW_MORE;
}

/* Scores a chunk on worker w's device, from start to end: the next chunk waits for the
 * engine to hand it over, which costs microseconds next to a chunk's scoring. */
static int
worker_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct gmm_stream *st = ctx;
	struct gmm_worker *wk = state;
	struct gmm_chunk *c = slot;
	(void)w;
	(void)err;
	if (c->n == 0)
		return 0;
#ifdef ACCELKIT_CUDA
	if (wk->gpu != NULL) {
		if (st->cfg.top && !st->host_top)
			gmm_gpu_submit(wk->gpu, 0, c->x, c->n, c->idx, c->tv);
		else
			gmm_gpu_submit(wk->gpu, 0, c->x, c->n, NULL, c->val);
		gmm_gpu_wait(wk->gpu, 0);
		if (st->host_top)
			gmm_top(c->val, c->n, st->cfg.prm->nmodels, st->cfg.top, c->idx, c->tv);
		return 0;
	}
#endif
	cpu_score(st, c, wk->scores);
	return 0;
}

static void
worker_fini(void *ctx, void *state, int w)
{
	struct gmm_worker *wk = state;
	(void)ctx;
	(void)w;
#ifdef ACCELKIT_CUDA
	gmm_gpu_report(wk->gpu);	/* its thread's last act: every chunk waited for */
	gmm_gpu_free(wk->gpu);
#endif
	free(wk->scores);
	free(wk);
}

static double
chunk_frames(void *ctx, const void *slot)
{
	(void)ctx;
	return (double)((const struct gmm_chunk *)slot)->n;
}

static const struct dw_ops gmm_dw_ops = {worker_init, worker_make, worker_process,
	worker_fini, chunk_frames};

/* ---- set-up, the run, clean-up ---- */

/* n chunks of st->cap frames in one allocation, pinned on a GPU in one call rather than
 * one a buffer (each call maps memory for the device): the copies then run at the bus's
 * speed and overlap the scoring. (Pinned with cudaHostRegisterDefault, which under
 * unified addressing is portable: every GPU's copies see it pinned.) */
static void
alloc_chunks(struct gmm_stream *st, struct gmm_chunk *chunks, int n, int need_val)
{
	const size_t dp = (size_t)st->dp, cap = st->cap, top = st->cfg.top;
	const size_t nm = st->cfg.prm->nmodels;
	const size_t xb = ALIGN64(mul_size(mul_size(cap, dp, "chunk"), sizeof(float), "chunk"));
	const size_t vb = need_val ?
	    ALIGN64(mul_size(mul_size(cap, nm, "chunk"), sizeof(float), "chunk")) : 0;
	const size_t tb = top ?
	    ALIGN64(mul_size(mul_size(cap, top, "chunk"), sizeof(float), "chunk")) : 0;
	const size_t each = xb + vb + 2 * tb, total = mul_size(each, (size_t)n, "chunk");
	char *block = xmalloc(total);
#ifdef ACCELKIT_CUDA
	if (st->cfg.dev->gpu) {
		double t0 = now_sec();
		st->pinned = cuda_pin(block, total, "chunk buffers");
		phase_add("pin buffers", now_sec() - t0);
	}
#endif
	st->block = block;
	for (int i = 0; i < n; i++) {
		struct gmm_chunk *c = &chunks[i];
		char *p = block + (size_t)i * each;
		c->x = (float *)p;
		c->val = vb ? (float *)(p + xb) : NULL;
		c->idx = tb ? (uint32_t *)(p + xb + vb) : NULL;
		c->tv = tb ? (float *)(p + xb + vb + tb) : NULL;
		memset(c->x, 0, xb);	/* the padding columns stay 0 */
	}
}

struct gmm_stream *
gmm_stream_open(const struct gmm_stream_cfg *cfg)
{
	struct gmm_stream *st = xcalloc(1, sizeof *st);
	const struct gmm_params *prm = cfg->prm;
	const struct cuda_dev *dev = cfg->dev;
	st->cfg = *cfg;
	st->dp = prm->dp;
	st->nw = cuda_workers(dev);

	/* Chunk size: bounded by the scores a chunk holds on the host. Every score of a
	 * chunk is kept for --all, on the CPU, and for a --top too large for the GPU. */
	const size_t nm = prm->nmodels, top = cfg->top;
	const int host_top = dev->gpu && top > GMM_GPU_TOPMAX;
	const int need_val = top == 0 || host_top;
	const size_t row_bytes = need_val || !dev->gpu ? nm * sizeof(float) :
	    top * (sizeof(uint32_t) + sizeof(float));
	size_t cap = cfg->chunk;
	if (cap == 0)
		cap = MIN((size_t)cfg->tune->chunk, HOST_RESULT_MAX / 2 / row_bytes);
	cap = MAX((size_t)1, MIN(cap, HOST_RESULT_MAX / row_bytes));
#ifdef ACCELKIT_CUDA
	st->host_top = host_top;
#endif
	st->cap = cap;

	if (st->nw > 1) {
		/* Each worker sets up its device in its own thread (the uploads run at once);
		 * the chunks then take the least any of them can hold. */
		st->nmbuf = dw_slots(st->nw);
		st->mbuf = xcalloc((size_t)st->nmbuf, sizeof *st->mbuf);
		st->mslot = xcalloc((size_t)st->nmbuf, sizeof *st->mslot);
		for (int i = 0; i < st->nmbuf; i++)
			st->mslot[i] = &st->mbuf[i];
		st->dw = dw_open(&gmm_dw_ops, st, st->mslot, st->nmbuf, st->nw);
#ifdef ACCELKIT_CUDA
		cuda_worker_use(dev, 0);	/* the buffers are pinned in the first GPU's context */
		for (int w = 0; w < st->nw; w++) {
			const struct gmm_worker *wk = dw_state(st->dw, w);
			if (wk->gpu != NULL)
				st->cap = MIN(st->cap, gmm_gpu_chunk(wk->gpu));
		}
#endif
		alloc_chunks(st, st->mbuf, st->nmbuf, need_val);
	} else {
#ifdef ACCELKIT_CUDA
		if (dev->gpu) {
			st->gpu = gmm_gpu_init(prm, cfg->mode, host_top ? 0 : top, cap, cfg->max_mem,
			    dev->ids[0], cfg->tune, cfg->layout);
			st->cap = gmm_gpu_chunk(st->gpu);
		}
#endif
		alloc_chunks(st, st->buf, NBUF, need_val);
		if (!dev->gpu && top)
			st->scores = xmallocarray(mul_size(st->cap, nm, "chunk"), sizeof(float));
	}
	vlog("scoring %d of %d dimensions, --mode %s, %s, %zu frames a chunk%s", prm->dims,
	    cfg->model_dim, cfg->mode == GMM_SUM ? "sum" : "max", top ? "top models" :
	    "every score", st->cap, st->nw > 1 ? ", over several devices" : "");
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	return st;
}

/* Several workers: the engine makes, scores and hands back the chunks in order. */
static void
run_workers(struct gmm_stream *st, struct gmm_writer *w)
{
	for (struct gmm_chunk *c; (c = dw_next(st->dw, NULL)) != NULL;) {
		gmm_writer_chunk(w, c);
		st->frames += c->n;
		progress_add(c->n);
		if (!c->last && !dw_ready(st->dw))
			gmm_writer_flush(w);	/* a reader downstream sees these results now */
	}
	char names[CUDADEV_MAX][32];
	const char *np[CUDADEV_MAX];
	for (int i = 0; i < st->nw; i++) {
		cuda_worker_name(st->cfg.dev, i, names[i], sizeof names[i]);
		np[i] = names[i];
	}
	dw_report(st->dw, np);
}

uint64_t
gmm_stream_run(struct gmm_stream *st, struct gmm_writer *w)
{
	pthread_t rd_thread;

	st->w = w;
	progress_begin("frames", 0);
	if (st->dw != NULL) {
		run_workers(st, w);
		progress_end();
		phase_add("read (beside)", st->t_read);
		return st->frames;
	}
	int rc = pthread_create(&rd_thread, NULL, reader_main, st);
	if (rc != 0)
		die_no_thread(rc, NULL);
	struct gmm_chunk *prev = NULL;
	for (int bi = 0;; bi = (bi + 1) % NBUF) {
		struct gmm_chunk *c = wait_chunk(st, bi, 1);
		start_chunk(st, bi, c);
		if (prev != NULL)
			finish_chunk(st, prev);
		prev = c;
		if (c->last)
			break;
		if (!chunk_ready(st, (bi + 1) % NBUF)) {
			/* The input is slower than the scoring: out with these results now,
			 * past our buffer too, so a reader downstream sees them at once. */
			finish_chunk(st, prev);
			gmm_writer_flush(w);
			prev = NULL;
		}
	}
	if (prev != NULL)
		finish_chunk(st, prev);
	progress_end();
#ifdef ACCELKIT_CUDA
	gmm_gpu_report(st->gpu);
#endif
	pthread_join(rd_thread, NULL);
	phase_add("read (beside)", st->t_read);
	return st->frames;
}

void
gmm_stream_free(struct gmm_stream *st)
{
	dw_close(st->dw);
#ifdef ACCELKIT_CUDA
	if (st->pinned)
		cuda_unpin(st->block);
	gmm_gpu_free(st->gpu);
#endif
	free(st->block);
	for (int i = 0; i < NBUF; i++)
		free(st->buf[i].seg);
	for (int i = 0; i < st->nmbuf; i++)
		free(st->mbuf[i].seg);
	free(st->mbuf);
	free(st->mslot);
	free(st->scores);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->cv);
	free(st);
}
