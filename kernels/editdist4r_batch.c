/* editdist4r_batch.c: editdist4r's pairs in batches and their computation. A ring of
 * ED_BATCH_QUEUE batches: the device is chosen (auto) once ED_SETTLE_BYTES of pairs are
 * read from regular files, or the first batch from a pipe, or at the end; from then on
 * a batch is computed as
 * soon as it is full: on a GPU while the next one is read, and finished (with --path,
 * the alignments on the CPU) and written while the GPU computes the one after. Batches
 * live in ordinary memory, reused from batch to batch; the GPU path copies them through
 * pinned staging buffers. Separate from cmd/editdist4r.c, which reads the pairs and
 * chooses the device, and from the engines, which compute.
 *
 * Several GPUs (ed_run_multi): the batches are units of the device engine
 * (common/devwork.h), made by ed_run_add as pairs come; a worker a GPU computes a batch
 * (and its --path alignments) when it frees up, and this thread writes them in input
 * order. A batch is bounded by bytes of strings, so batches of like pairs hold like
 * cells, and a GPU that draws the long ones simply takes fewer; a pair is never split,
 * so a long pair stays on one GPU. */
#include "editdist4r_run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "editdist4r.h"
#include "err.h"
#include "timer.h"

/* memcpy (src) or memset to 0 (src NULL) in pieces of 1 MiB on the OpenMP threads. */
static void
par_copy(void *dst, const void *src, size_t n)
{
	const size_t piece = (size_t)1 << 20;
	const size_t k = CEIL_DIV(n, piece);
	#pragma omp parallel for schedule(static) if (k > 1)
	for (size_t i = 0; i < k; i++) {
		char *d = (char *)dst + i * piece;
		size_t len = MIN(piece, n - i * piece);
		if (src != NULL)
			memcpy(d, (const char *)src + i * piece, len);
		else
			memset(d, 0, len);
	}
}

void
ed_host_copy(void *dst, const void *src, size_t n)
{
	par_copy(dst, src, n);
}

double
ed_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
ed_run_begin(struct ed_run *r, size_t max_device_mem, int sized, ed_settle_fn settle,
    void *ctx)
{
	r->settle_bytes = sized ? ED_SETTLE_BYTES : 0;
	r->max_bytes = ED_BATCH_BYTES;
	if (max_device_mem > 0)
		r->max_bytes = MAX((size_t)1 << 20, MIN(r->max_bytes, max_device_mem / 4));
	r->settle = settle;
	r->settle_ctx = ctx;
}

/* Room for want pairs. */
static void
grow_pairs(struct ed_run *r, struct ed_batch *b, size_t want)
{
	if (want <= b->ncap)
		return;
	size_t cap = MIN(ED_BATCH_PAIRS, MAX(want, MAX((size_t)1024, 2 * b->ncap)));
	b->pairs = xreallocarray(b->pairs, cap, sizeof *b->pairs);
	b->dist = xreallocarray(b->dist, cap, sizeof *b->dist);
	if (r->eo.mode != ED_GLOBAL)
		b->span = xreallocarray(b->span, cap, 2 * sizeof *b->span);
	if (r->path) {
		b->cigar = xreallocarray(b->cigar, cap, sizeof *b->cigar);
		memset(b->cigar + b->ncap, 0, (cap - b->ncap) * sizeof *b->cigar);
	}
	if (r->utf8)
		b->kind = xreallocarray(b->kind, cap, sizeof *b->kind);
	b->ncap = cap;
}

static void
batch_free(struct ed_batch *b)
{
	if (!b->shared_pool)
		free(b->pool);
	free(b->pairs);
	free(b->dist);
	free(b->span);
	free(b->cigar);
	free(b->kind);
	free(b->wide);
}

void
ed_run_free(struct ed_run *r)
{
	dw_close(r->dw);
	ed_bws_free(r->bws);
	for (int k = 0; k < ED_BATCH_QUEUE; k++)
		batch_free(&r->b[k]);
	for (int k = 0; k < r->nmb; k++)
		batch_free(&r->mb[k]);
	free(r->mb);
	free(r->mslot);
}

/* A written batch, ready to be filled again. */
static void
batch_reset(struct ed_batch *b)
{
	b->n = 0;
	b->nutf8 = 0;
	b->nwide = 0;
	b->wused = 0;
	if (!b->shared_pool)
		b->used = 0;
}

static size_t
align16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

/* Room for one more pair of strings of n bytes in all: 0 when the batch is full. The
 * pool grows as pairs come (a batch of a few pairs stays small), up to the bound, which
 * one pair alone may pass. */
static inline int
batch_room(struct ed_run *r, struct ed_batch *b, size_t n)
{
	/* 32: room for the GPU's 16-byte loads past a string's end */
	size_t need = align16(b->used) + n + 32;
	/* the common case first, a pair a call: room in the pool and the pairs' arrays */
	if (need <= b->cap && need <= r->max_bytes && b->n < b->ncap)
		return 1;
	if (b->n == ED_BATCH_PAIRS || (need > r->max_bytes && b->n > 0))
		return 0;
	if (need > UINT32_MAX)
		die("a pair of %zu bytes is too long (at most 4 GiB a pair)", n);
	if (need > b->cap) {
		size_t cap = MAX(need, MIN(r->max_bytes, MAX(2 * b->cap, (size_t)1 << 16)));
		b->pool = xrealloc(b->pool, cap);
		/* The new pages' first touch (a fault and zeroing each 4 KiB) on every core
		 * now, rather than on the reading thread as it copies: it cost that thread
		 * more than the copying. */
		par_copy(b->pool + b->cap, NULL, cap - b->cap);
		b->cap = cap;
	}
	grow_pairs(r, b, b->n + 1);
	return 1;
}

static uint32_t
pool_put(struct ed_batch *b, const unsigned char *s, size_t n)
{
	size_t off = align16(b->used);
	memcpy(b->pool + off, s, n);
	b->used = off + n;
	return (uint32_t)off;
}

/* ---- computing ---- */

/* Whether batches are computed asynchronously (on a GPU). */
static int
on_gpu(const struct ed_run *r)
{
	return r->gpu && r->g != NULL;
}

#ifdef ACCELKIT_CUDA
/* The pairs of kind ED_WIDE, which only the CPU computes, before the GPU the rest. */
static void
wide_on_cpu(struct ed_run *r, struct ed_batch *b)
{
	struct ed_pair *p = xmallocarray(b->nwide, sizeof *p);
	uint8_t *kind = xmalloc(b->nwide);
	int32_t *d = xmallocarray(b->nwide, sizeof *d);
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->kind[i] == ED_WIDE)
			p[k++] = b->pairs[i];
	memset(kind, ED_WIDE, b->nwide);
	int32_t *sp = r->eo.mode != ED_GLOBAL ? xmallocarray(b->nwide, 2 * sizeof *sp) : NULL;
	ed_cpu_batch(b->pool, p, b->nwide, &r->eo, kind, b->wide, d, sp);
	k = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->kind[i] == ED_WIDE) {
			if (sp != NULL)
				memcpy(&b->span[2 * i], &sp[2 * k], 2 * sizeof *sp);
			b->dist[i] = d[k++];
		}
	free(p);
	free(kind);
	free(d);
	free(sp);
}

/* --mode infix on a GPU, for the matches the wavefront found (START -1; a thread per
 * pair finds its own): START on the CPU, by the CPU path's own rule (ed_band_dist)
 * over the piece of B that can hold the match: a match of cost d spans at most
 * |A| + d bytes, and no end in that piece comes before END at cost d (END is the
 * first in all of B), so the piece's best is the match. */
static void
infix_starts(struct ed_batch *b)
{
	double t0 = now_sec();
	#pragma omp parallel if (b->n > 64)
	{
		struct ed_bws *w = ed_bws_new();
		#pragma omp for schedule(dynamic, 64)
		for (size_t i = 0; i < b->n; i++) {
			const struct ed_pair *p = &b->pairs[i];
			int64_t d = b->dist[i], e = b->span[2 * i + 1], s, e2;
			if (d < 0 || e < 0 || b->span[2 * i] >= 0)
				continue;
			int64_t w0 = MAX((int64_t)0, e + 1 - ((int64_t)p->alen + d));
			int64_t d2 = ed_band_dist(w, b->pool + p->aoff, p->alen, b->pool + p->boff + w0,
			    e + 1 - w0, ED_INFIX, d, &s, &e2);
			if (d2 != d || e2 != e - w0)
				die("internal error: pair %zu: the GPU's match costs %lld and ends at "
				    "%lld, the CPU's %lld at %lld", i, (long long)d, (long long)e,
				    (long long)d2, (long long)(e2 + w0));
			b->span[2 * i] = (int32_t)(w0 + s);
		}
		ed_bws_free(w);
	}
	phase_add("starts", now_sec() - t0);
}
#endif

/* A batch computed on a GPU, finished on the CPU: --mode infix's STARTs, except in a
 * matrix (--all-vs-all prints distances only). */
static void
gpu_finish(struct ed_run *r, struct ed_batch *b)
{
#ifdef ACCELKIT_CUDA
	if (r->eo.mode == ED_INFIX && !r->all)
		infix_starts(b);
#else
	(void)r;
	(void)b;
#endif
}

/* The cells of a batch's pairs: the work -v counts and a GPU's share of it. */
static uint64_t
batch_cells(const struct ed_batch *b)
{
	uint64_t c = 0;
	for (size_t i = 0; i < b->n; i++)
		c += (uint64_t)b->pairs[i].alen * b->pairs[i].blen;
	return c;
}

/* Starts batch b's distances: its characters coded first (-u); then on g, a GPU
 * (submitted: ed_gpu_wait ends it), or, where g is NULL, on the CPU (done on return).
 * The one-GPU pipeline and each worker of several run batches through it. */
static void
batch_start(struct ed_run *r, struct ed_gpu *g, struct ed_batch *b)
{
	double t0 = now_sec();
	if (b->nutf8 > 0) {
		ed_sym_batch(b);
		phase_add("characters", now_sec() - t0);
		t0 = now_sec();
	}
#ifdef ACCELKIT_CUDA
	if (g != NULL) {
		if (b->nwide > 0)
			wide_on_cpu(r, b);
		ed_gpu_submit(g, b->pool, b->used, b->shared_pool, b->pairs, b->kind, b->n,
		    b->dist, b->span);
		phase_add(PH_COMPUTE, now_sec() - t0);
		return;
	}
#else
	(void)g;
#endif
	ed_cpu_batch(b->pool, b->pairs, b->n, &r->eo, b->kind, b->wide, b->dist, b->span);
	phase_add(PH_COMPUTE, now_sec() - t0);
}

static void
compute_start(struct ed_run *r, struct ed_batch *b)
{
	batch_start(r, on_gpu(r) ? r->g : NULL, b);
	r->nwide += b->nwide;
	r->cells += batch_cells(b);
}

/* --path: each pair's alignment, on the CPU whatever computed the distances. */
static void
align_batch(struct ed_run *r, struct ed_batch *b)
{
	double t0 = now_sec();
	/* auto: long pairs by the band (ed_cpu_align) */
	int algo = r->eo.algo == ED_AUTO ? ED_AUTO : ed_engine(&r->eo);
	#pragma omp parallel for schedule(dynamic, 1) if (b->n > 1)
	for (size_t i = 0; i < b->n; i++) {
		const struct ed_pair *p = &b->pairs[i];
		int z = b->kind != NULL && b->kind[i] == ED_WIDE ? 4 : 1;
		const uint8_t *base = z == 4 ? (const uint8_t *)b->wide : b->pool;
		size_t bo = p->boff, bn = p->blen;
		int64_t cost;
		if (b->dist[i] < 0)
			continue;
		if (r->eo.mode != ED_GLOBAL) {	/* the match's piece of B */
			bo += (size_t)b->span[2 * i];
			bn = (size_t)(b->span[2 * i + 1] - b->span[2 * i] + 1);
		}
		b->cigar[i] = ed_cpu_align(base + (size_t)p->aoff * z, p->alen,
		    base + bo * z, bn, z, algo, r->eo.t, b->dist[i], &cost);
		if (cost != b->dist[i])
			die("internal error: pair %zu: alignment costs %lld, distance is %d", i,
			    (long long)cost, b->dist[i]);
	}
	phase_add("path", now_sec() - t0);
}

static void
compute_finish(struct ed_run *r)
{
#ifdef ACCELKIT_CUDA
	if (on_gpu(r)) {
		double t0 = now_sec();
		ed_gpu_wait(r->g);
		phase_add(PH_COMPUTE, now_sec() - t0);
	}
#else
	(void)r;
#endif
}

/* Computes and writes the batches handed over, in order. keep: on a GPU, leave the last
 * one computing (the caller reads the next batch meanwhile). Aligning (--path) and
 * writing a batch overlap the GPU's work on the next. */
static void
drain(struct ed_run *r, int keep)
{
	keep = keep && on_gpu(r);
	while (r->nfull > 0) {
		struct ed_batch *b = &r->b[r->head];
		if (!r->inflight) {
			compute_start(r, b);
			r->inflight = 1;
		}
		if (r->nfull == 1 && keep)
			return;
		compute_finish(r);
		r->inflight = 0;
		r->head = (r->head + 1) % ED_BATCH_QUEUE;
		r->nfull--;
		if (r->nfull > 0) {
			compute_start(r, &r->b[r->head]);
			r->inflight = 1;
		}
		if (on_gpu(r))
			gpu_finish(r, b);
		if (r->path)
			align_batch(r, b);
		ed_out_batch(r, b);
		batch_reset(b);
	}
}

static struct ed_batch *
filling(struct ed_run *r)
{
	if (r->dw != NULL)
		return r->fill;
	return &r->b[(r->head + r->nfull) % ED_BATCH_QUEUE];
}

static void multi_handover(struct ed_run *r);

/* The batch being filled is full: it joins the queue, the device is chosen if it was
 * not yet, and the queue is computed, all but its last on a GPU. */
static void
handover(struct ed_run *r)
{
	if (r->dw != NULL) {
		multi_handover(r);
		return;
	}
	r->nfull++;
	if (!r->settled)
		r->settle(r, 0);
	drain(r, 1);
}

/* A pair's work, for auto's choice (settle): the cells of each device, the bytes read
 * (the early look comes after ED_SETTLE_BYTES of them) and the pairs. */
static void
weigh(struct ed_run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen)
{
	double cells = ed_pair_work(alen, blen, r->eo.maxdist, r->eo.mode);
	r->gwork += cells;
	/* --algo auto computes long pairs on the CPU by the band (editdist4r_cpu.c): each
	 * one of ED_BAND_SAMPLE_CELLS or more sampled, the others of ED_BAND_SHARE_CELLS
	 * or more, once they add up to as much, by the band's share in a few of them */
	if (r->eo.algo == ED_AUTO && r->eo.mode == ED_GLOBAL &&
	    MIN(alen, blen) > ED_BAND_MIN && cells >= ED_BAND_SHARE_CELLS) {
		int big = cells >= ED_BAND_SAMPLE_CELLS;
		if (!big && r->share_pairs == 0 && r->share_wait + cells < ED_BAND_SAMPLE_CELLS)
			r->share_wait += cells;		/* weighed whole for now */
		else if (big || r->share_pairs < ED_BAND_SHARE_PAIRS) {
			if (r->bws == NULL)
				r->bws = ed_bws_new();
			double band = MIN(cells, ed_band_work(r->bws, a, (int64_t)alen, b,
			    (int64_t)blen));
			if (!big) {
				r->share_band += band;
				r->share_table += cells;
				r->share_pairs++;
				/* the pairs weighed whole, at the first share known */
				r->work -= r->share_wait * (1 - r->share_band / r->share_table);
				r->share_wait = 0;
			}
			cells = band;
		} else
			cells *= r->share_band / r->share_table;
	}
	r->work += cells;
	r->bytes += alen + blen + 2;
	r->npairs++;
	if (r->settle_bytes > 0 && r->bytes >= r->settle_bytes) {
		r->settle_bytes = 0;	/* one early look */
		r->settle(r, -1);
	}
}

void
ed_run_add(struct ed_run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen, int kind)
{
	struct ed_batch *bt = filling(r);
	if (!batch_room(r, bt, alen + blen)) {
		double t0 = now_sec(), c0 = ed_thread_cpu();
		handover(r);
		r->handover += now_sec() - t0;
		r->handover_cpu += ed_thread_cpu() - c0;
		bt = filling(r);
		batch_room(r, bt, alen + blen);
	}
	struct ed_pair *p = &bt->pairs[bt->n];
	p->alen = (uint32_t)alen;
	p->aoff = pool_put(bt, a, alen);
	p->blen = (uint32_t)blen;
	p->boff = pool_put(bt, b, blen);
	if (r->utf8) {
		bt->kind[bt->n] = (uint8_t)kind;
		bt->nutf8 += kind == ED_UTF8;
	}
	bt->n++;
	/* only settle reads the work weighed; once the device is chosen, a pair costs
	 * the copy alone */
	if (!r->settled)
		weigh(r, a, alen, b, blen);
}

static void multi_end(struct ed_run *r);

void
ed_run_end(struct ed_run *r)
{
	if (r->dw != NULL) {
		multi_end(r);
		return;
	}
	if (filling(r)->n > 0)
		r->nfull++;
	if (!r->settled)
		r->settle(r, 1);
	drain(r, 0);
}

/* ---- --all-vs-all ---- */

int
ed_recs_put(struct ed_run *r, struct ed_recs *rc, const unsigned char *s, size_t n, int kind)
{
	struct ed_batch *pool = &r->allpool;
	if (align16(pool->used) + n + 32 > pool->cap) {
		size_t cap = MAX(2 * pool->cap, align16(pool->used) + n + 32);
		if (cap > UINT32_MAX)
			return 0;
		pool->pool = xrealloc(pool->pool, cap);
		pool->cap = cap;
	}
	if (rc->n == rc->cap) {
		rc->cap = MAX(1024, 2 * rc->cap);
		rc->off = xreallocarray(rc->off, rc->cap, sizeof *rc->off);
		rc->len = xreallocarray(rc->len, rc->cap, sizeof *rc->len);
	}
	rc->len[rc->n] = (uint32_t)n;
	rc->off[rc->n++] = pool_put(pool, s, n);
	rc->nutf8 += kind == ED_UTF8;
	return 1;
}

/* The matrix's pairs in batches of whole or partial rows, every batch's pool the
 * allpool (sent to a GPU once). */
static void
matrix_shared(struct ed_run *r, const struct ed_recs *A, const struct ed_recs *B)
{
	/* the batches of the ring, or of the device engine */
	struct ed_batch *bs = r->dw != NULL ? r->mb : r->b;
	const int nb = r->dw != NULL ? r->nmb : ED_BATCH_QUEUE;
	for (int k = 0; k < nb; k++) {
		free(bs[k].pool);
		bs[k].pool = r->allpool.pool;
		bs[k].used = r->allpool.used;
		bs[k].cap = r->allpool.cap;
		bs[k].shared_pool = 1;
	}
	uint64_t total = (uint64_t)A->n * B->n, k = 0;
	while (k < total) {
		struct ed_batch *b = filling(r);
		size_t cnt = (size_t)MIN((uint64_t)ED_BATCH_PAIRS, total - k);
		grow_pairs(r, b, cnt);
		b->n = cnt;
		for (size_t q = 0; q < b->n; q++, k++) {
			struct ed_pair *p = &b->pairs[q];
			size_t i = (size_t)(k / B->n), j = (size_t)(k % B->n);
			p->aoff = A->off[i];
			p->alen = A->len[i];
			p->boff = B->off[j];
			p->blen = B->len[j];
		}
		if (r->utf8)
			memset(b->kind, ED_BYTES, b->n);
		if (r->dw != NULL) {
			multi_handover(r);
		} else {
			r->nfull++;
			drain(r, 1);
		}
	}
	if (r->dw != NULL)
		multi_end(r);
	else
		drain(r, 0);
	for (int q = 0; q < nb; q++) {
		bs[q].pool = NULL;
		bs[q].shared_pool = 0;
	}
}

void
ed_run_matrix(struct ed_run *r, struct ed_recs *A, struct ed_recs *B)
{
	if (!r->settled)
		r->settle(r, 1);
	if (A->nutf8 + B->nutf8 == 0 || ed_sym_records(r->allpool.pool, A, B)) {
		matrix_shared(r, A, B);
	} else {
		/* -u, too many characters for one coding: each pair is coded on its own */
		for (size_t i = 0; i < A->n; i++)
			for (size_t j = 0; j < B->n; j++)
				ed_run_add(r, r->allpool.pool + A->off[i], A->len[i],
				    r->allpool.pool + B->off[j], B->len[j], ED_UTF8);
		ed_run_end(r);
	}
	free(A->off);
	free(A->len);
	free(B->off);
	free(B->len);
	free(r->allpool.pool);
	r->allpool.pool = NULL;
}

/* ---- several GPUs: the device engine ---- */

struct ed_worker {
	struct ed_gpu *g;	/* NULL: the CPU (ACCELKIT_CPU_WORKERS) */
};

static void *
multi_init(void *ctx, int w)
{
	struct ed_run *r = ctx;
	struct ed_worker *wk = xcalloc(1, sizeof *wk);
#ifdef ACCELKIT_CUDA
	if (r->mdev.gpu) {
		/* ed_gpu_open takes its device's ids[0] (and makes it this thread's) */
		struct cuda_dev one = r->mdev;
		one.ids[0] = r->mdev.ids[w];
		one.ngpus = 1;
		wk->g = ed_gpu_open(&one, &r->eo, r->mtune, r->mmax);
	}
#else
	(void)r;
	(void)w;
#endif
	return wk;
}

/* A batch on worker w, start to end: its characters coded (-u), its distances, and its
 * alignments (--path), so that workers align at the same time as they compute. */
static int
multi_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct ed_run *r = ctx;
	struct ed_worker *wk = state;
	struct ed_batch *b = slot;
	(void)w;
	(void)err;
	batch_start(r, wk->g, b);
#ifdef ACCELKIT_CUDA
	if (wk->g != NULL) {
		double t0 = now_sec();
		ed_gpu_wait(wk->g);
		phase_add(PH_COMPUTE, now_sec() - t0);
		gpu_finish(r, b);
	}
#endif
	if (r->path)
		align_batch(r, b);
	return 0;
}

static void
multi_fini(void *ctx, void *state, int w)
{
	(void)ctx;
	(void)w;
	free(state);	/* an ed_gpu is never closed (editdist4r.h): the run ends in _exit */
}

static double
multi_weight(void *ctx, const void *slot)
{
	(void)ctx;
	return (double)batch_cells(slot);
}

static const struct dw_ops ed_dw_ops = {multi_init, NULL, multi_process, multi_fini,
	multi_weight};

/* A computed batch out, in order, and back to the engine. */
static void
multi_write(struct ed_run *r, struct ed_batch *b)
{
	r->cells += batch_cells(b);
	r->nwide += b->nwide;
	ed_out_batch(r, b);
	batch_reset(b);
	dw_done(r->dw);
}

/* A free batch to fill; the batches computed meanwhile are written first, and while
 * every batch is taken, the next in order is waited for. */
static void
multi_fill(struct ed_run *r)
{
	void *s;
	while ((s = dw_slot(r->dw)) == NULL || dw_ready(r->dw)) {
		if (s != NULL)
			dw_unslot(r->dw, s);
		multi_write(r, dw_next(r->dw, NULL));
	}
	r->fill = s;
}

static void
multi_handover(struct ed_run *r)
{
	dw_put(r->dw, r->fill);
	r->fill = NULL;
	multi_fill(r);
}

static void
multi_end(struct ed_run *r)
{
	if (r->fill->n > 0)
		dw_put(r->dw, r->fill);
	else
		dw_unslot(r->dw, r->fill);
	r->fill = NULL;
	dw_end(r->dw);
	for (struct ed_batch *b; (b = dw_next(r->dw, NULL)) != NULL;)
		multi_write(r, b);
	char names[CUDADEV_MAX][32];
	const char *np[CUDADEV_MAX];
	for (int i = 0; i < r->nw; i++) {
		cuda_worker_name(&r->mdev, i, names[i], sizeof names[i]);
		np[i] = names[i];
	}
	dw_report(r->dw, np);
}

int
ed_run_multi(struct ed_run *r, const struct cuda_dev *d, const struct editdist4r_tune *tune,
    size_t max_mem)
{
	int nw = cuda_workers(d);
	/* once only, before any pair: a batch already in the ring stays on one device */
	if (nw <= 1 || r->dw != NULL || r->nfull > 0 || filling(r)->n > 0)
		return 0;
	r->mdev = *d;
	r->mtune = tune;
	r->mmax = max_mem;
	r->nw = nw;
	r->nmb = dw_slots(nw);
	r->mb = xcalloc((size_t)r->nmb, sizeof *r->mb);
	r->mslot = xcalloc((size_t)r->nmb, sizeof *r->mslot);
	for (int i = 0; i < r->nmb; i++)
		r->mslot[i] = &r->mb[i];
	r->dw = dw_open(&ed_dw_ops, r, r->mslot, r->nmb, nw);
	multi_fill(r);
	vlog("batches over %d %s", nw, d->gpu ? "GPUs" : "CPU workers");
	return 1;
}
