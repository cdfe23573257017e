/* docsim_topk_tc.cu: dense top-k lists from TF32 products in one kernel: each block's
 * tile of scores goes from its accumulators into the rows' candidate lists (and, for all
 * pairs, the columns'), and no score tile is written to global memory. The lists are the
 * ones docsim_rank.cu's kernels keep (k + DS_FAST_EXTRA, at most 64, best first), which
 * docsim_exact.cu then makes exact in float64; every pair is offered to the same lists
 * as there (a row its columns, for all pairs only j < i, and column j the rows i > j),
 * so the lists hold the same candidates: a list keeps the best of all it was offered,
 * whatever their order.
 *
 * A block (tf32_block, docsim_mma.cuh: 128 x 128 scores) puts its scores in shared
 * memory where its slices were, then its warps take its rows, then its columns, in
 * turn: a warp reads the list's last score from L2 (other blocks' merges raise it), and
 * only where one of the 128 scores reaches it does it take the list's lock, load the
 * list into registers (wlist, docsim_wlist.cuh), offer the scores in lane order against
 * the list's last entry as it now is, store it and let go. Scores under a stale last
 * score are under the current one too: the last entry only rises. The blocks go row
 * block first (the grid's fastest index), so the blocks at work at once share few
 * lists, and most of a row's blocks find its list full and its last score high.
 *
 * The locks, an int a list (0 free, 1 held), are g->undecided, which docsim_exact.cu
 * fills only after the last tile. A lane takes a lock by atomicCAS and spins; a fence
 * after taking it and before letting it go orders the list's loads (from L2, past the
 * SM's cache) and stores against the other SMs'. A warp holds one lock at a time and
 * waits on nothing while it does, so every lock is let go. */
#include <math.h>

#include "docsim_mma.cuh"
#include "docsim_wlist.cuh"

#define TT_LD (TC_BN + 1)	/* the score tile's row in shared memory: a column's rows in 32 banks */

#if TC_BM != 4 * 32 || TC_BN != 4 * 32
#error "docsim_topk_tc.cu: a lane's 4 scores cover a row (and a column) of the tile"
#endif
#if (TC_BM * TT_LD * 4) > (DS_MM_STAGES * (TC_BM + TC_BN) * SLICE_BYTES)
#error "docsim_topk_tc.cu: the score tile must fit where the slices were"
#endif

/* Scores v[u] of candidates id[u] (in[u]: one of the list's to offer) into list (ls, li)
 * of kl entries under its lock, by a warp. */
static __device__ void
offer_list(float *ls, int32_t *li, int kl, int *lock, int lane, const float v[4], const int32_t id[4],
    const bool in[4], int use_thr, double thr)
{
	/* the last score alone: one load, never torn between two lists' states */
	float last = __ldcg(ls + kl - 1);
	bool cand[4], any = false;
#pragma unroll
	for (int u = 0; u < 4; u++) {
		cand[u] = in[u] && ds_passes(v[u], use_thr, thr) && v[u] >= last;
		any = any || cand[u];
	}
	if (!__any_sync(FULL, any))
		return;
	if (lane == 0) {
		while (atomicCAS(lock, 0, 1) != 0)
			;
		__threadfence();
	}
	__syncwarp();
	wlist l = wlist_load_l2(ls, li, kl, lane);
	float ts;
	int32_t ti;
	wlist_last(l, kl, &ts, &ti);
#pragma unroll
	for (int u = 0; u < 4; u++)
		wlist_offer(l, kl, lane, cand[u] && ds_better(v[u], id[u], ts, ti), v[u], id[u], &ts, &ti);
	wlist_store(l, ls, li, kl, lane);
	__threadfence();
	__syncwarp();
	if (lane == 0)
		atomicExch(lock, 0);
}

/* The tile of rows [r0, r0 + nr) (A) against columns [c0, c0 + nc) (B), K deep, into the
 * lists; sym: all pairs, each pair j < i offered to row i's list and to column j's. */
template <bool VEC>
__global__ void __launch_bounds__(TC_THREADS, 2)
k_topk_tf32(const float *A, const float *B, size_t nr, size_t nc, size_t K, size_t r0, size_t c0, int sym,
    float *tops, int32_t *topi, int kl, int use_thr, double thr, int *locks)
{
	extern __shared__ float4 mm_smem[];
	float *sm = (float *)mm_smem;
	const size_t nrb = CEIL_DIV(nr, (size_t)TC_BM);
	const size_t bm0 = blockIdx.x % nrb * TC_BM, bn0 = blockIdx.x / nrb * TC_BN;
	/* all pairs: a block whose least column is not below its last row has no pair */
	if (sym && c0 + bn0 + 1 >= r0 + bm0 + TC_BM)
		return;
	float acc[TC_MT][TC_NT][4];
	tf32_block<VEC>(acc, sm, A, B, nr, nc, K, bm0, bn0);
	/* every warp is done with the slices (no copy is in flight past the last): the
	 * tile goes where they were */
	cp_wait<0>();
	__syncthreads();
#pragma unroll
	for (int i = 0; i < TC_MT; i++)
#pragma unroll
		for (int j = 0; j < TC_NT; j++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				sm[tf32_row(i, q) * TT_LD + tf32_col(j, q)] = acc[i][j][q];
	__syncthreads();

	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const long rows = (long)MIN((size_t)TC_BM, nr - bm0), cols = (long)MIN((size_t)TC_BN, nc - bn0);
	const size_t i0 = r0 + bm0, j0 = c0 + bn0;	/* the block's first row and column ids */
	for (long rr = warp; rr < rows; rr += TC_THREADS / 32) {
		size_t i = i0 + rr;
		long cend = sym ? MIN(cols, (long)i - (long)j0) : cols;	/* j < i for all pairs */
		if (cend <= 0)
			continue;
		float v[4];
		int32_t id[4];
		bool in[4];
#pragma unroll
		for (int u = 0; u < 4; u++) {
			long jj = lane + 32 * u;
			in[u] = jj < cend;
			v[u] = in[u] ? sm[rr * TT_LD + jj] : -INFINITY;
			id[u] = (int32_t)(j0 + jj);
		}
		offer_list(tops + i * kl, topi + i * kl, kl, locks + i, lane, v, id, in, use_thr, thr);
	}
	if (!sym)
		return;
	for (long cc = warp; cc < cols; cc += TC_THREADS / 32) {
		size_t j = j0 + cc;
		long rstart = (long)j + 1 - (long)i0;	/* rows i > j */
		if (rstart >= rows)
			continue;
		float v[4];
		int32_t id[4];
		bool in[4];
#pragma unroll
		for (int u = 0; u < 4; u++) {
			long rr = lane + 32 * u;
			in[u] = rr >= rstart && rr < rows;
			v[u] = in[u] ? sm[rr * TT_LD + cc] : -INFINITY;
			id[u] = (int32_t)(i0 + rr);
		}
		offer_list(tops + j * kl, topi + j * kl, kl, locks + j, lane, v, id, in, use_thr, thr);
	}
}

static const size_t topk_smem = smem_bytes(TC_BM, TC_BN);

void
ds_topk_init(void)
{
	CUDA_CHECK(cudaFuncSetAttribute(k_topk_tf32<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
	    (int)topk_smem));
	CUDA_CHECK(cudaFuncSetAttribute(k_topk_tf32<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
	    (int)topk_smem));
}

void
ds_topk_tile(struct gpu *g, const float *A, const float *B, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
{
	const struct ds_job *j = g->job;
	if (nr == 0 || nc == 0)
		return;
	size_t blocks = CEIL_DIV(nr, (size_t)TC_BM) * CEIL_DIV(nc, (size_t)TC_BN);
	if (blocks > INT32_MAX)
		die("a tile of %zu x %zu is too large for one launch", nr, nc);
	if (vec_ok(A, B, g->K, 4))
		k_topk_tf32<true><<<(unsigned)blocks, TC_THREADS, topk_smem, g->sa>>>(A, B, nr, nc, g->K, r0, c0, sym,
		    g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel, g->undecided);
	else
		k_topk_tf32<false><<<(unsigned)blocks, TC_THREADS, topk_smem, g->sa>>>(A, B, nr, nc, g->K, r0, c0, sym,
		    g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel, g->undecided);
	CUDA_LAUNCH_CHECK();
}
