/* gmmscore_stream.c: gmmscore's streaming pipeline (see gmmscore_stream.h).
 *
 * A reader thread parses the feature files into chunks of frames (several utterances
 * can share a chunk) while the device scores the previous chunk and the calling thread
 * writes the one before that: reading, scoring and writing overlap, and memory stays
 * bounded by a few chunks. Separate from cmd/gmmscore.c, which only chooses what runs,
 * and from gmmscore_out.c, which formats what comes out. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gmmscore.h"
#include "gmmscore_stream.h"
#include "speech.h"
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
	struct progress prog;
	uint64_t frames;
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

/* The reader thread: features into chunks, in order. */
static void *
reader_main(void *arg)
{
	struct gmm_stream *st = arg;
	const size_t dp = (size_t)st->dp;
	int bi = 0;
	struct gmm_chunk *c = wait_chunk(st, bi, 0);
	double t0 = now_sec(), waited = 0;
	struct gmm_seg sg;

	for (;;) {
		if (c->n == st->cap) {
			set_chunk(st, c, 1);
			bi = (bi + 1) % NBUF;
			double tw = now_sec();
			c = wait_chunk(st, bi, 0);
			waited += now_sec() - tw;
		}
		if (!gmm_feats_next(st->cfg.feats, c->x + c->n * dp, st->cap - c->n, &sg))
			break;
		add_seg(c, sg.key, sg.first, sg.n);
		c->n += sg.n;
	}
	c->last = 1;
	st->t_read = now_sec() - t0 - waited;
	set_chunk(st, c, 1);
	return NULL;
}

/* ---- the scorer's steps ---- */

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
	double t0 = now_sec();
	const struct gmm_params *prm = st->cfg.prm;
	gmm_cpu_score(prm, st->cfg.mode, (size_t)st->cfg.tune->cpu_fblk, c->x, c->n,
	    st->cfg.top ? st->scores : c->val);
	if (st->cfg.top)
		gmm_top(st->scores, c->n, prm->nmodels, st->cfg.top, c->idx, c->tv);
	phase_add(PH_COMPUTE, now_sec() - t0);
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
	progress_update(&st->prog, st->frames, 0);
	c->n = 0;
	c->nseg = 0;
	set_chunk(st, c, 0);
}

/* ---- set-up, the run, clean-up ---- */

struct gmm_stream *
gmm_stream_open(const struct gmm_stream_cfg *cfg)
{
	struct gmm_stream *st = xcalloc(1, sizeof *st);
	const struct gmm_params *prm = cfg->prm;
	const struct cuda_dev *dev = cfg->dev;
	st->cfg = *cfg;
	st->dp = prm->dp;

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
	struct gmm_gpu *gpu = NULL;
	if (dev->gpu) {
		gpu = gmm_gpu_init(prm, cfg->mode, host_top ? 0 : top, cap, cfg->max_mem,
		    dev->ids[0], cfg->tune, cfg->layout);
		cap = gmm_gpu_chunk(gpu);
	}
	st->gpu = gpu;
	st->host_top = host_top;
#endif
	vlog("scoring %d of %d dimensions, --mode %s, %s, %zu frames a chunk", prm->dims,
	    cfg->model_dim, cfg->mode == GMM_SUM ? "sum" : "max", top ? "top models" :
	    "every score", cap);
	st->cap = cap;
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv, NULL);
	/* One allocation holds every chunk's buffers, pinned on a GPU in one call rather
	 * than one a buffer (each call maps memory for the device): the copies then run at
	 * the bus's speed and overlap the scoring. */
	const size_t dp = (size_t)prm->dp;
	const size_t xb = ALIGN64(mul_size(mul_size(cap, dp, "chunk"), sizeof(float), "chunk"));
	const size_t vb = need_val ?
	    ALIGN64(mul_size(mul_size(cap, nm, "chunk"), sizeof(float), "chunk")) : 0;
	const size_t tb = top ?
	    ALIGN64(mul_size(mul_size(cap, top, "chunk"), sizeof(float), "chunk")) : 0;
	const size_t each = xb + vb + 2 * tb, total = mul_size(each, NBUF, "chunk");
	char *block = xmalloc(total);
#ifdef ACCELKIT_CUDA
	if (gpu != NULL) {
		double t0 = now_sec();
		st->pinned = cuda_pin(block, total, "chunk buffers");
		phase_add("pin buffers", now_sec() - t0);
	}
#endif
	st->block = block;
	for (int i = 0; i < NBUF; i++) {
		struct gmm_chunk *c = &st->buf[i];
		char *p = block + (size_t)i * each;
		c->x = (float *)p;
		c->val = vb ? (float *)(p + xb) : NULL;
		c->idx = tb ? (uint32_t *)(p + xb + vb) : NULL;
		c->tv = tb ? (float *)(p + xb + vb + tb) : NULL;
		memset(c->x, 0, xb);	/* the padding columns stay 0 */
	}
	if (!dev->gpu && top)
		st->scores = xmallocarray(mul_size(cap, nm, "chunk"), sizeof(float));
	return st;
}

uint64_t
gmm_stream_run(struct gmm_stream *st, struct gmm_writer *w)
{
	pthread_t rd_thread;

	st->w = w;
	if (pthread_create(&rd_thread, NULL, reader_main, st) != 0)
		die("cannot start a thread");
	progress_begin(&st->prog, "frames");
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
	progress_end(&st->prog);
	pthread_join(rd_thread, NULL);
	phase_add("read (beside)", st->t_read);
	return st->frames;
}

void
gmm_stream_free(struct gmm_stream *st)
{
#ifdef ACCELKIT_CUDA
	if (st->pinned)
		cuda_unpin(st->block);
	gmm_gpu_free(st->gpu);
#endif
	free(st->block);
	for (int i = 0; i < NBUF; i++)
		free(st->buf[i].seg);
	free(st->scores);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->cv);
	free(st);
}
