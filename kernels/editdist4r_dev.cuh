/* editdist4r_dev.cuh: what the CUDA files of editdist4r share: the pairs and jobs as
 * the kernels read them, the device helpers of more than one kernel family, and the
 * host's state of the GPU path (struct ed_gpu) with the launchers each file exports.
 *
 * The CUDA path, a file a role (all kernels in one stream, one batch at a time):
 *   editdist4r_gpu.cu    the host side: buffers, sorting a batch's pairs into classes,
 *                        upload, launches, download, timing
 *   editdist4r_table.cu  the Four-Russians table, built on the GPU (fr_build)
 *   editdist4r_tp.cu     a thread per pair (fr_tp, bp_tp), for pairs whose shorter side
 *                        is short, so that a million short pairs fill the GPU
 *   editdist4r_wf.cu     the anti-diagonal wavefront over strips of rows (wf, with its
 *                        Four-Russians and bit-parallel strip engines), for the rest
 *   editdist4r_bp.cuh    the bit-parallel engines' arithmetic and --mode's, also run
 *                        on the CPU by tests/editdist4r_bp.cu
 * The kernels' shapes (TPT, WF_G, the wavefront's THREADS) are in editdist4r_tune.h. */
#ifndef EDITDIST4R_DEV_CUH
#define EDITDIST4R_DEV_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_check.h"
#include "editdist4r.h"
#include "editdist4r_tune.h"
#include "staging.h"

constexpr int TPT = ED_TP_THREADS;	/* threads of a thread-per-pair block */
constexpr int WF_G = ED_WF_HANDOFF;	/* wavefront steps between handoffs */

/* A batch's pairs fall into classes, each computed by one kernel: 1..8 bp_tp with that
 * many words of rows, CLS_FR fr_tp, CLS_WF the wavefront; 0 is done on the host. */
constexpr int CLS_FR = 9, CLS_WF = 10, NCLS = 11;

__host__ __device__ constexpr uint32_t
pow3c(int k)
{
	return k == 0 ? 1u : 3u * pow3c(k - 1);
}

struct gpair {
	uint32_t aoff, alen, boff, blen, out;
};

struct wjob {
	uint32_t pair, group;
};

/* The match bits of a block: column x's byte against the strip's rows a[y]. */
template <int T>
__device__ __forceinline__ uint32_t
fr_match(const uint32_t (&a)[T], uint32_t bc, int x, int R)
{
	uint32_t m = 0;
#pragma unroll
	for (int y = 0; y < T; y++)
		if (y < R)
			m |= (uint32_t)(a[y] == bc) << (x * R + y);
	return m;
}

/* ---- host side ---- */

struct ed_gpu {
	struct ed_opts o;
	int sms;
	size_t max_mem;
	cudaStream_t st;
	cudaEvent_t e_h2d, e_k0, e_k1, e_d2h;
	uint16_t *tab[FR_TMAX + 1];
	uint8_t *pool;
	size_t pool_cap;
	const void *last_pool;
	size_t last_size;
	gpair *pairs, *hpairs;
	size_t pairs_cap, hpairs_cap;
	wjob *jobs, *hjobs;
	size_t jobs_cap, hjobs_cap;
	int32_t *dist, *hdist;		/* on the device; pinned, the way there and back:
					 * n distances, then (--mode) n ENDs and n STARTs */
	int32_t *end, *start;		/* dist + n, dist + 2n: the kernels' (--mode) */
	size_t dist_cap, hdist_cap;
	int32_t *out;			/* the caller's distances, filled at ed_gpu_wait */
	int32_t *span;			/* --mode: the caller's START and END of each pair */
	const uint8_t *kind;		/* the caller's kinds (NULL: all bytes) */
	size_t nout;
	uint8_t *cls;			/* each pair's class, on the host */
	size_t cls_cap;
	staging *stg;			/* the pool's way to the device */
	uint8_t *slots;
	size_t slots_cap;
	unsigned long long *flag, *beat;
	unsigned *freed, *cflag;
	int *corner, *ticket;
	int flags_cap;
	double kernel_ms, best_ms;
	int pending, used[3];		/* engines used: bp_tp, fr_tp, wavefront */
	int repeat;			/* $EDITDIST4R_REPEAT: kernels run again, for benchmarks */
	cudaEvent_t e_rep[2 * 16];
	unsigned long long *clk;
	int clk_pending;
	int wf_algo;			/* the wavefront's engine: ED_BP or ED_4R (--mode:
					 * ED_BP, see editdist4r_bp.cuh) */
	int tp_short, tp_long;		/* the tuning row's: which pairs get a thread each */
	char names[160];
};

/* Buffers (editdist4r_gpu.cu): device ones grow without keeping their contents
 * (returning whether they moved), pinned host ones keeping them (they are few and
 * small: the pairs as the kernels read them, the jobs, the distances). */
int dgrow(void **p, size_t *cap, size_t n);
void hgrow(void **p, size_t *cap, size_t n);

template <class K>
static void
allow_smem(K kernel, size_t bytes)
{
	if (bytes > 48 * 1024)
		CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
		    (int)bytes));
}

/* The Four-Russians table for block size t on the device, built at its first use
 * (editdist4r_table.cu). */
const uint16_t *gpu_table(struct ed_gpu *g, int t);
/* The thread-per-pair classes of a batch, laid out in g->hpairs as cnt[] and start[]
 * say (editdist4r_tp.cu); nmax: the longest short side of class CLS_FR. */
void launch_tp(struct ed_gpu *g, const size_t *cnt, const size_t *start, int nmax);
/* The np pairs from g->hpairs[off] on the wavefront (editdist4r_wf.cu). */
void launch_wavefront(struct ed_gpu *g, size_t off, size_t np);

#endif
