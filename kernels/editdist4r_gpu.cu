/* editdist4r_gpu.cu: the host side of editdist4r's CUDA path: the device's buffers, a
 * batch's pairs sorted into classes (done on the host, a thread per pair, the
 * wavefront: see editdist4r_dev.cuh), their upload (the strings through a ring of
 * pinned buffers, common/staging.h), the launches, the download, and the kernels'
 * times. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "cudadev.h"
#include "editdist4r.h"
#include "editdist4r_bp.cuh"
#include "editdist4r_dev.cuh"
#include "editdist4r_tune.h"
#include "err.h"
#include "timer.h"

static void *
host_alloc(size_t n)
{
	void *p;
	CUDA_CHECK(cudaMallocHost(&p, n ? n : 1));
	return p;
}

static void
host_free(void *p)
{
	if (p != NULL)
		CUDA_CHECK(cudaFreeHost(p));
}

/* Device buffers grow without keeping their contents; returns whether it moved. */
int
dgrow(void **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	n = MAX(n, *cap + *cap / 2);
	if (*p != NULL)
		CUDA_CHECK(cudaFree(*p));
	if (cudaMalloc(p, n) != cudaSuccess)
		die("GPU: out of memory (%zu bytes)", n);
	*cap = n;
	return 1;
}

/* Pinned host buffers grow keeping their contents. */
void
hgrow(void **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return;
	n = MAX(n, *cap + *cap / 2);
	void *q = host_alloc(n);
	if (*p != NULL)
		memcpy(q, *p, *cap);
	host_free(*p);
	*p = q;
	*cap = n;
}

extern "C" struct ed_gpu *
ed_gpu_open(const struct cuda_dev *d, const struct ed_opts *o,
    const struct editdist4r_tune *tune, size_t max_device_mem)
{
	struct ed_gpu *g = (struct ed_gpu *)xcalloc(1, sizeof *g);
	/* the device is current in the start-up thread that chose it, not yet in this one */
	CUDA_CHECK(cudaSetDevice(d->ids[0]));
	g->o = *o;
	g->sms = d->sm_count;
	g->max_mem = max_device_mem;
	if (tune->tp_short > 8 * 32)
		die("internal error: tuning row \"%s\": bp_tp holds at most 256 rows",
		    tune->device);
	g->tp_short = tune->tp_short;
	g->tp_long = tune->tp_long;
	/* the modes: the bit-parallel engines alone (editdist4r_tp.cu says why) */
	g->wf_algo = o->mode != ED_GLOBAL ? ED_BP : ed_engine(o);
	CUDA_CHECK(cudaStreamCreate(&g->st));
	CUDA_CHECK(cudaEventCreate(&g->e_h2d));
	CUDA_CHECK(cudaEventCreate(&g->e_k0));
	CUDA_CHECK(cudaEventCreate(&g->e_k1));
	CUDA_CHECK(cudaEventCreate(&g->e_d2h));
	const char *rp = getenv("EDITDIST4R_REPEAT");
	g->repeat = rp != NULL ? MAX(1, MIN(16, atoi(rp))) : 1;
	for (int i = 0; i < 2 * (g->repeat - 1); i++)
		CUDA_CHECK(cudaEventCreate(&g->e_rep[i]));
	CUDA_CHECK(cudaMalloc(&g->clk, 4 * sizeof *g->clk));
	g->stg = staging_open(2, ED_STAGE_BYTES, g->st);
	return g;
}

/* Every kernel of a batch, classes laid out in g->hpairs as cnt[] and start[] say. */
static void
launch_all(struct ed_gpu *g, const size_t *cnt, const size_t *start, int nmax)
{
	launch_tp(g, cnt, start, nmax);
	if (cnt[CLS_WF] > 0) {
		launch_wavefront(g, start[CLS_WF], cnt[CLS_WF]);
		g->used[2] = 1;
	}
}

/* The pool's bytes to the device, a staging buffer at a time: filling one (on every
 * core) overlaps the transfer of the last. */
static void
upload_pool(struct ed_gpu *g, const uint8_t *pool, size_t size)
{
	for (size_t off = 0; off < size;) {
		struct stage *s = staging_acquire(g->stg);
		size_t n = MIN(s->cap, size - off);
		ed_host_copy(s->p, pool + off, n);
		staging_h2d(g->stg, s, g->pool + off, n);
		off += n;
	}
}

extern "C" void
ed_gpu_submit(struct ed_gpu *g, const uint8_t *pool, size_t poolsize, int same_pool,
    const struct ed_pair *pairs, const uint8_t *kind, size_t n, int32_t *dist, int32_t *span)
{
	const long long K = g->o.maxdist;
	const int mode = g->o.mode, modes = mode != ED_GLOBAL;
	const int tp_algo = modes ? ED_BP : ed_engine(&g->o);
	size_t cnt[NCLS] = {0};	/* pairs of each class (editdist4r_dev.cuh) */
	int nmax = 1;

	hgrow((void **)&g->hpairs, &g->hpairs_cap, MAX(n, (size_t)1) * sizeof(gpair));
	hgrow((void **)&g->hdist, &g->hdist_cap, 3 * MAX(n, (size_t)1) * sizeof(int32_t));
	if (n > g->cls_cap) {
		g->cls_cap = MAX(n, 2 * g->cls_cap);
		free(g->cls);
		g->cls = (uint8_t *)xmalloc(g->cls_cap);
	}
	/* Classify: trivial pairs here; count the rest per class. */
	uint8_t *cls = g->cls;
	int32_t *hd = g->hdist, *he = g->hdist + n, *hs = g->hdist + 2 * n;
	for (size_t i = 0; i < n; i++) {
		int64_t m = pairs[i].alen, nn = pairs[i].blen, lo = MIN(m, nn), hi = MAX(m, nn);
		struct ed_band bd;
		cls[i] = 0;
		he[i] = hs[i] = -1;	/* START -1: the wavefront's, the caller's to find */
		/* the modes: A the rows, as it is (a thread holds at most tp_short rows) */
		if (modes) {
			lo = m;
			hi = nn;
		}
		if (kind != NULL && kind[i] == ED_WIDE) {
			hd[i] = dist[i];	/* computed on the CPU */
		} else if (modes && mode_trivial((int)m, (int)nn, K, &hd[i], &he[i])) {
			hs[i] = hd[i] < 0 ? -1 : 0;	/* settled here */
		} else if (!modes && !ed_band_make(m, nn, K, &bd)) {
			hd[i] = -1;
		} else if (lo == 0) {
			hd[i] = K >= 0 && hi > K ? -1 : (int32_t)hi;
		} else if (lo <= g->tp_short && hi <= g->tp_long) {
			cls[i] = tp_algo == ED_BP ? (uint8_t)CEIL_DIV(lo, 32) : CLS_FR;
			if (cls[i] == CLS_FR)
				nmax = MAX(nmax, (int)lo);
		} else {
			cls[i] = CLS_WF;
		}
		cnt[cls[i]]++;
	}
	size_t start[NCLS], pos[NCLS];
	start[0] = 0;
	for (int c = 1; c < NCLS; c++)
		start[c] = (c == 1 ? 0 : start[c - 1] + cnt[c - 1]);
	memcpy(pos, start, sizeof pos);
	for (size_t i = 0; i < n; i++) {
		int c = cls[i];
		if (c == 0)
			continue;
		const struct ed_pair *p = &pairs[i];
		gpair q = {p->aoff, p->alen, p->boff, p->blen, (uint32_t)i};
		/* bp_tp: the shorter side as rows; fr_tp: the shorter as columns. */
		bool swap = !modes && ((c <= 8 && p->alen > p->blen) ||
		    (c == CLS_FR && p->alen < p->blen));
		if (swap)
			q = gpair{p->boff, p->blen, p->aoff, p->alen, (uint32_t)i};
		g->hpairs[pos[c]++] = q;
	}
	size_t total = start[CLS_WF] + cnt[CLS_WF];

	/* Upload. */
	if (dgrow((void **)&g->pool, &g->pool_cap, ((poolsize + 15) & ~(size_t)15) + 64))
		g->last_pool = NULL;	/* a new buffer: upload whatever the caller says */
	dgrow((void **)&g->pairs, &g->pairs_cap, MAX(total, (size_t)1) * sizeof(gpair));
	dgrow((void **)&g->dist, &g->dist_cap, 3 * MAX(n, (size_t)1) * sizeof(int32_t));
	g->end = g->dist + n;
	g->start = g->dist + 2 * n;
	CUDA_CHECK(cudaEventRecord(g->e_h2d, g->st));
	if (!(same_pool && pool == g->last_pool && poolsize == g->last_size) && poolsize > 0)
		upload_pool(g, pool, poolsize);
	g->last_pool = pool;
	g->last_size = poolsize;
	if (total > 0)
		CUDA_CHECK(cudaMemcpyAsync(g->pairs, g->hpairs, total * sizeof(gpair),
		    cudaMemcpyHostToDevice, g->st));
	/* the distances (ENDs, STARTs) of the pairs settled here go there and back */
	const size_t nd = modes ? 3 * n : n;
	if (n > 0)
		CUDA_CHECK(cudaMemcpyAsync(g->dist, hd, nd * sizeof(int32_t), cudaMemcpyHostToDevice,
		    g->st));
	CUDA_CHECK(cudaEventRecord(g->e_k0, g->st));

	launch_all(g, cnt, start, nmax);
	CUDA_CHECK(cudaEventRecord(g->e_k1, g->st));
	for (int k = 1; k < g->repeat; k++) {
		CUDA_CHECK(cudaEventRecord(g->e_rep[2 * k - 2], g->st));
		launch_all(g, cnt, start, nmax);
		CUDA_CHECK(cudaEventRecord(g->e_rep[2 * k - 1], g->st));
	}
	/* into pinned memory: a copy to pageable memory would hold this thread until the
	 * kernels are done, and the next batch is read meanwhile */
	if (n > 0)
		CUDA_CHECK(cudaMemcpyAsync(hd, g->dist, nd * sizeof(int32_t), cudaMemcpyDeviceToHost,
		    g->st));
	CUDA_CHECK(cudaEventRecord(g->e_d2h, g->st));
	g->out = dist;
	g->span = span;
	g->kind = kind;
	g->nout = n;
	g->pending = 1;
}

extern "C" void
ed_gpu_wait(struct ed_gpu *g)
{
	float h2d, k, d2h;
	if (!g->pending)
		return;
	CUDA_CHECK(cudaStreamSynchronize(g->st));
	CUDA_CHECK(cudaEventElapsedTime(&h2d, g->e_h2d, g->e_k0));
	CUDA_CHECK(cudaEventElapsedTime(&k, g->e_k0, g->e_k1));
	CUDA_CHECK(cudaEventElapsedTime(&d2h, g->e_k1, g->e_d2h));
	phase_add(PH_H2D, h2d / 1e3);
	phase_add("gpu-kernels", k / 1e3);
	phase_add(PH_D2H, d2h / 1e3);
	g->kernel_ms += k;
	float best = k;
	for (int i = 1; i < g->repeat; i++) {
		float t;
		CUDA_CHECK(cudaEventElapsedTime(&t, g->e_rep[2 * i - 2], g->e_rep[2 * i - 1]));
		best = MIN(best, t);
	}
	g->best_ms += best;
	if (g->repeat > 1)
		vlog("GPU kernels: %.3f ms the first time, %.3f ms the best of %d", k, best, g->repeat);
	if (verbose && g->clk_pending) {
		unsigned long long c[2];
		CUDA_CHECK(cudaMemcpy(c, g->clk, sizeof c, cudaMemcpyDeviceToHost));
		vlog("GPU wavefront: %llu cycles in %.3f ms: %.0f MHz", c[0], c[1] / 1e6,
		    c[1] ? 1e3 * (double)c[0] / (double)c[1] : 0.0);
	}
	g->clk_pending = 0;
	g->pending = 0;
	memcpy(g->out, g->hdist, g->nout * sizeof *g->out);
	/* --mode: START and END from the GPU; START 0 for prefix; an infix match on the
	 * wavefront (START -1) is the caller's to finish (editdist4r_batch.c) */
	if (g->o.mode != ED_GLOBAL)
		for (size_t i = 0; i < g->nout; i++) {
			if (g->kind != NULL && g->kind[i] == ED_WIDE)
				continue;	/* computed on the CPU, START and all */
			const int32_t d = g->hdist[i];
			g->span[2 * i] = d < 0 ? -1 : g->o.mode == ED_PREFIX ? 0 :
			    g->hdist[2 * g->nout + i];
			g->span[2 * i + 1] = d < 0 ? -1 : g->hdist[g->nout + i];
		}
}

extern "C" double
ed_gpu_kernel_ms(const struct ed_gpu *g)
{
	return g->kernel_ms;
}

extern "C" const char *
ed_gpu_engines(const struct ed_gpu *g)
{
	struct ed_gpu *w = (struct ed_gpu *)g;
	w->names[0] = '\0';
	if (g->used[0])
		strcat(w->names, "bit-parallel thread per pair; ");
	if (g->used[1])
		snprintf(w->names + strlen(w->names), 60, "Four-Russians t=%d thread per pair; ", g->o.t);
	if (g->used[2]) {
		if (g->wf_algo == ED_BP)
			strcat(w->names, "bit-parallel wavefront; ");
		else
			snprintf(w->names + strlen(w->names), 60, "Four-Russians t=%d wavefront; ", g->o.t);
	}
	size_t l = strlen(w->names);
	if (l >= 2)
		w->names[l - 2] = '\0';
	else
		strcpy(w->names, "none");
	return w->names;
}
