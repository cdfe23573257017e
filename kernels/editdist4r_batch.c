/* editdist4r_batch.c: editdist4r's pairs in batches and their computation. Two batches
 * in host memory (pinned when a GPU computes, so that copies run at full speed) take
 * turns: one is filled while the other is computed, then finished (with --path, the
 * alignments on the CPU) and written. The sizes come from the tuning row. Separate
 * from cmd/editdist4r.c, which reads the pairs, and from the engines, which compute. */
#include "editdist4r_run.h"

#include <stdlib.h>
#include <string.h>

#include "editdist4r.h"
#include "editdist4r_tune.h"
#include "err.h"
#include "timer.h"

static void *
hmem(const struct ed_run *r, size_t n)
{
#ifdef ACCELKIT_CUDA
	if (r->gpu)
		return ed_host_alloc(n);
#endif
	(void)r;
	return xmalloc(n);
}

static void
hfree(const struct ed_run *r, void *p)
{
#ifdef ACCELKIT_CUDA
	if (r->gpu) {
		ed_host_free(p);
		return;
	}
#endif
	(void)r;
	free(p);
}

/* Buffers start small and grow to the batch limits (pinned memory is slow to get). */
static void
batch_init(struct ed_run *r, struct ed_batch *b, size_t max)
{
	memset(b, 0, sizeof *b);
	b->max = max;
	b->cap = MIN(max, (size_t)1 << 16);
	b->pool = hmem(r, b->cap);
}

void
ed_run_begin(struct ed_run *r, const struct editdist4r_tune *tune, size_t max_device_mem)
{
	size_t cap = tune->batch_bytes;
	if (max_device_mem > 0)
		cap = MAX((size_t)1 << 20, MIN(cap, max_device_mem / 4));
	r->max_pairs = tune->batch_pairs;
	batch_init(r, &r->b[0], cap);
	batch_init(r, &r->b[1], cap);
	if (r->all) {
		r->allpool.cap = 1 << 20;
		r->allpool.pool = hmem(r, r->allpool.cap);
	}
}

/* Room for want pairs. */
static void
batch_grow_pairs(struct ed_run *r, struct ed_batch *b, size_t want)
{
	if (want <= b->ncap)
		return;
	size_t cap = MIN(r->max_pairs, MAX(want, MAX((size_t)1024, 2 * b->ncap)));
	struct ed_pair *p = hmem(r, cap * sizeof *p);
	int32_t *d = hmem(r, cap * sizeof *d);
	if (b->n > 0)
		memcpy(p, b->pairs, b->n * sizeof *p);
	hfree(r, b->pairs);
	hfree(r, b->dist);
	b->pairs = p;
	b->dist = d;
	if (r->path) {
		b->cigar = xreallocarray(b->cigar, cap, sizeof *b->cigar);
		memset(b->cigar + b->ncap, 0, (cap - b->ncap) * sizeof *b->cigar);
	}
	b->ncap = cap;
}

static void
batch_free(struct ed_run *r, struct ed_batch *b)
{
	if (!b->shared_pool)
		hfree(r, b->pool);
	hfree(r, b->pairs);
	hfree(r, b->dist);
	free(b->cigar);
}

void
ed_run_free(struct ed_run *r)
{
	batch_free(r, &r->b[0]);
	batch_free(r, &r->b[1]);
}

static size_t
align16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

/* Room for one more pair of strings of n bytes in all: 0 when the batch is full. */
static int
batch_room(struct ed_run *r, struct ed_batch *b, size_t n)
{
	size_t need = align16(b->used) + n + 32;
	if (b->n == r->max_pairs || (need > b->max && b->n > 0))
		return 0;
	if (need > UINT32_MAX)
		die("a pair of %zu bytes is too long (at most 4 GiB a pair)", n);
	if (need > b->cap) {
		size_t cap = MAX(need, MIN(b->max, 2 * b->cap));
		uint8_t *p = hmem(r, cap);
		memcpy(p, b->pool, b->used);
		hfree(r, b->pool);
		b->pool = p;
		b->cap = cap;
	}
	batch_grow_pairs(r, b, b->n + 1);
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

static void
compute_start(struct ed_run *r, struct ed_batch *b)
{
	double t0 = now_sec();
	for (size_t i = 0; i < b->n; i++)
		r->cells += (uint64_t)b->pairs[i].alen * b->pairs[i].blen;
#ifdef ACCELKIT_CUDA
	if (r->gpu && r->eo.algo != ED_DP) {
		ed_gpu_submit(r->g, b->pool, b->used, b->shared_pool, b->pairs, b->n, b->dist);
		phase_add(PH_COMPUTE, now_sec() - t0);
		return;
	}
#endif
	ed_cpu_batch(b->pool, b->pairs, b->n, &r->eo, b->dist);
	phase_add(PH_COMPUTE, now_sec() - t0);
}

static void
compute_finish(struct ed_run *r, struct ed_batch *b)
{
	double t0 = now_sec();
#ifdef ACCELKIT_CUDA
	if (r->gpu && r->eo.algo != ED_DP)
		ed_gpu_wait(r->g);
#endif
	phase_add(PH_COMPUTE, now_sec() - t0);
	if (!r->path)
		return;
	t0 = now_sec();
	int algo = ed_engine(&r->eo);
	#pragma omp parallel for schedule(dynamic, 1)
	for (size_t i = 0; i < b->n; i++) {
		const struct ed_pair *p = &b->pairs[i];
		int64_t cost;
		if (b->dist[i] < 0)
			continue;
		b->cigar[i] = ed_cpu_align(b->pool + p->aoff, p->alen, b->pool + p->boff, p->blen,
		    algo, r->eo.t, &cost);
		if (cost != b->dist[i])
			die("internal error: pair %zu: alignment costs %lld, distance is %d", i,
			    (long long)cost, b->dist[i]);
	}
	phase_add("path", now_sec() - t0);
}

void
ed_run_flush(struct ed_run *r)
{
	struct ed_batch *b = &r->b[r->cur];
	if (r->pending != NULL) {
		compute_finish(r, r->pending);
		ed_out_batch(r, r->pending);
		r->pending->n = 0;
		if (!r->pending->shared_pool)
			r->pending->used = 0;
		r->pending = NULL;
	}
	if (b->n == 0)
		return;
	compute_start(r, b);
	r->pending = b;
	r->cur ^= 1;
}

void
ed_run_add(struct ed_run *r, const unsigned char *a, size_t alen, const unsigned char *b,
    size_t blen)
{
	struct ed_batch *bt = &r->b[r->cur];
	if (!batch_room(r, bt, alen + blen)) {
		ed_run_flush(r);
		bt = &r->b[r->cur];
		batch_room(r, bt, alen + blen);
	}
	struct ed_pair *p = &bt->pairs[bt->n++];
	p->alen = (uint32_t)alen;
	p->aoff = pool_put(bt, a, alen);
	p->blen = (uint32_t)blen;
	p->boff = pool_put(bt, b, blen);
}

/* ---- --all-vs-all ---- */

int
ed_recs_put(struct ed_run *r, struct ed_recs *rc, const unsigned char *s, size_t n)
{
	struct ed_batch *pool = &r->allpool;
	if (align16(pool->used) + n + 32 > pool->cap) {
		size_t cap = MAX(2 * pool->cap, align16(pool->used) + n + 32);
		if (cap > UINT32_MAX)
			return 0;
		uint8_t *p = hmem(r, cap);
		memcpy(p, pool->pool, pool->used);
		hfree(r, pool->pool);
		pool->pool = p;
		pool->cap = cap;
	}
	if (rc->n == rc->cap) {
		rc->cap = MAX(1024, 2 * rc->cap);
		rc->off = xreallocarray(rc->off, rc->cap, sizeof *rc->off);
		rc->len = xreallocarray(rc->len, rc->cap, sizeof *rc->len);
	}
	rc->len[rc->n] = (uint32_t)n;
	rc->off[rc->n++] = pool_put(pool, s, n);
	return 1;
}

void
ed_run_matrix(struct ed_run *r, struct ed_recs *A, struct ed_recs *B)
{
	/* The matrix in batches of whole or partial rows; both batches share the pool. */
	for (int k = 0; k < 2; k++) {
		hfree(r, r->b[k].pool);
		r->b[k].pool = r->allpool.pool;
		r->b[k].used = r->allpool.used;
		r->b[k].cap = r->allpool.cap;
		r->b[k].shared_pool = 1;
	}
	uint64_t total = (uint64_t)A->n * B->n, k = 0;
	while (k < total) {
		struct ed_batch *b = &r->b[r->cur];
		size_t cnt = (size_t)MIN((uint64_t)r->max_pairs, total - k);
		batch_grow_pairs(r, b, cnt);
		b->n = cnt;
		for (size_t q = 0; q < b->n; q++, k++) {
			struct ed_pair *p = &b->pairs[q];
			size_t i = (size_t)(k / B->n), j = (size_t)(k % B->n);
			p->aoff = A->off[i];
			p->alen = A->len[i];
			p->boff = B->off[j];
			p->blen = B->len[j];
		}
		ed_run_flush(r);
	}
	ed_run_flush(r);
	ed_run_flush(r);
	free(A->off);
	free(A->len);
	free(B->off);
	free(B->len);
	hfree(r, r->allpool.pool);
	r->allpool.pool = NULL;
	for (int k = 0; k < 2; k++)
		r->b[k].pool = NULL;
}
