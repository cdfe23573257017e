/* docsim_rank.cu: what a score tile gives, on the ranking stream: each row's top-k list
 * (k_rowsel, a warp a row; for all pairs also each column's, k_colsel), every pair at or
 * above the threshold (k_rowpairs), or the tile as float32 rows of the similarity matrix
 * (k_d2f). Apart from the GEMM and the postings that compute the tile, as the machinery
 * every input shares. */
#include <math.h>

#include "docsim_dev.cuh"
#include "docsim_wlist.cuh"

#define ROWSEL_UNROLL 4
#define COLSEL_UNROLL 8
/* k_rowsel_reg's depth, measured by ncu on the H200 (100k x 1024 -k 10, its 25 launches
 * added up): 14.2 ms at 4 columns a lane, 13.3 at 8. */
#define ROWSEL_REG_UNROLL 8

__global__ void
k_fill_state(float *s, int32_t *id, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		s[i] = -INFINITY;
		id[i] = DS_NONE;
	}
}

__global__ void
k_d2f(const double *in, float *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = (float)in[i] + 0.0f;
}

/* The columns a warp's row i = r0 + w of the tile ranks: [0, return value) of the tile,
 * all nc of them, or for all pairs only j < i (0 or less: none). */
__device__ static long
row_columns(size_t r0, int w, size_t c0, int nc, int sym)
{
	long cend = nc, below = (long)(r0 + w) - (long)c0;
	return sym && below < cend ? below : cend;
}

/* Row `row' of a tile offers its columns [0, cend) (ids c0 + jj) to its list through
 * offer(cand, v, j), U columns a lane at a time, the loads first: those that pass the
 * threshold, are not `own' (-1: none) and beat the list's last entry (*ts, *ti, which
 * offer keeps up to date) are candidates. The scan of k_rowsel and k_rowsel_reg, whose
 * lists differ. */
template <int U, typename T, typename Offer>
__device__ __forceinline__ void
rowsel_scan(const T *row, long cend, size_t c0, int lane, int32_t own, int use_thr, double thr,
    const float *ts, const int32_t *ti, Offer offer)
{
	for (long base = 0; base < cend; base += 32 * U) {
		float v[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long jj = base + u * 32 + lane;
			v[u] = jj < cend ? (float)row[jj] : -INFINITY;
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long jj = base + u * 32 + lane;
			int32_t j = (int32_t)(c0 + jj);
			bool cand = jj < cend && j != own && ds_passes(v[u], use_thr, thr) &&
			    ds_better(v[u], j, *ts, *ti);
			offer(cand, v[u], j);
		}
	}
}

/* wlist_offer for a list in global memory (ls, li, k entries): lane 0 inserts each
 * candidate that still beats the last entry, and every lane reads the new last. */
__device__ static void
glist_offer(float *ls, int32_t *li, int k, int lane, bool cand, float v, int32_t j, float *ts,
    int32_t *ti)
{
	offer_each(cand, v, j, ts, ti, [&](float cs, int32_t cj) {
		if (lane == 0)
			ds_insert(ls, li, (size_t)k, cs, cj);
		__syncwarp();
		*ts = ls[k - 1];
		*ti = li[k - 1];
		__syncwarp();
	});
}

/* Each row i of the tile offers its columns j (j < i for all pairs) to its own list.
 * A warp a row; the list in global memory (k over 64). */
template <typename T>
__global__ void
k_rowsel(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, int sym,
    float *tops, int32_t *topi, int k, int use_thr, double thr)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w;
	long cend = row_columns(r0, w, c0, nc, sym);
	if (cend <= 0)
		return;
	float *ls = tops + i * (size_t)k;
	int32_t *li = topi + i * (size_t)k;
	float ts = ls[k - 1];
	int32_t ti = li[k - 1];
	rowsel_scan<ROWSEL_UNROLL>(S + (size_t)w * ldS, cend, c0, lane, -1, use_thr, thr, &ts, &ti,
	    [&](bool cand, float v, int32_t j) { glist_offer(ls, li, k, lane, cand, v, j, &ts, &ti); });
}

/* k_rowsel for lists of up to 64: the row's list in the warp's registers, read and
 * written once a tile. With self (a gathered row's own index, ds_rank_rows), that
 * column is left out. */
template <typename T>
__global__ void
k_rowsel_reg(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, int sym,
    float *tops, int32_t *topi, int k, int use_thr, double thr, const int32_t *self)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w;
	long cend = row_columns(r0, w, c0, nc, sym);
	if (cend <= 0)
		return;
	float *ls = tops + i * (size_t)k;
	int32_t *li = topi + i * (size_t)k;
	wlist l = wlist_load(ls, li, k, lane);
	float ts;
	int32_t ti;
	wlist_last(l, k, &ts, &ti);
	int32_t own = self != NULL ? self[w] : -1;
	rowsel_scan<ROWSEL_REG_UNROLL>(S + (size_t)w * ldS, cend, c0, lane, own, use_thr, thr, &ts,
	    &ti, [&](bool cand, float v, int32_t j) { wlist_offer(l, k, lane, cand, v, j, &ts, &ti); });
	wlist_store(l, ls, li, k, lane);
}

/* All pairs: each column j of the tile takes the rows i > j as candidates for its own
 * list. A thread a column, reading down the column (coalesced across the warp). */
template <typename T>
__global__ void
k_colsel(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, float *tops,
    int32_t *topi, int k, int use_thr, double thr)
{
	int jj = (int)(blockIdx.x * (size_t)blockDim.x + threadIdx.x);
	if (jj >= nc)
		return;
	size_t j = c0 + jj;
	long ii0 = (long)j + 1 - (long)r0;
	if (ii0 < 0)
		ii0 = 0;
	if (ii0 >= nr)
		return;
	float *ls = tops + j * (size_t)k;
	int32_t *li = topi + j * (size_t)k;
	float ts = ls[k - 1];
	int32_t ti = li[k - 1];
	for (long ii = ii0; ii < nr; ii += COLSEL_UNROLL) {
		float v[COLSEL_UNROLL];
#pragma unroll
		for (int u = 0; u < COLSEL_UNROLL; u++)
			v[u] = ii + u < nr ? (float)S[(size_t)(ii + u) * ldS + jj] : -INFINITY;
#pragma unroll
		for (int u = 0; u < COLSEL_UNROLL; u++) {
			int32_t i = (int32_t)(r0 + ii + u);
			if (ii + u < nr && ds_passes(v[u], use_thr, thr) && ds_better(v[u], i, ts, ti)) {
				ds_insert(ls, li, (size_t)k, v[u], i);
				ts = ls[k - 1];
				ti = li[k - 1];
			}
		}
	}
}

/* k_colsel for lists of up to 64: a block of CB_WARPS warps a group of 32 columns (a lane
 * a column). Each step the warps read CB_ROWS rows each (coalesced across the lanes), so
 * the block goes down the tile CB_WARPS x CB_ROWS rows at a time, each lane comparing
 * against its column's last entry as the step began (in shared memory); then warp 0
 * puts each flagged column's candidates into the column's list, loaded into its
 * registers and inserted by shuffles, and the next step sees the new last entries.
 * Before it, k_colsel_reg had one warp walk down its 32 columns 8 rows at a time, and
 * ncu on the H200 found each of its launches 1.2 ms or more however few its columns
 * (100k x 1024 -k 10: 32.7 ms over 25 launches; 43.4 at 32 rows a step). On an H100,
 * the 11th launch of each (ncu): k_colsel_reg 1.20 ms at 16% achieved occupancy,
 * k_colsel_blk 0.56 ms at 64%. */
#define CB_WARPS 8
#define CB_ROWS 8
template <typename T>
__global__ void __launch_bounds__(CB_WARPS * 32)
k_colsel_blk(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, float *tops,
    int32_t *topi, int k, int use_thr, double thr)
{
	__shared__ float sts[32];
	__shared__ int32_t sti[32];
	__shared__ float sv[CB_WARPS * CB_ROWS][32];	/* the step's scores, row by row */
	__shared__ unsigned flag[CB_WARPS][32];	/* a lane's candidate rows in its warp's part */
	int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
	for (long wj = (long)blockIdx.x * 32; wj < nc; wj += (long)gridDim.x * 32) {
		int jj = (int)wj + lane;
		bool live = jj < nc;
		size_t j = c0 + (size_t)jj;
		long ii0 = live ? (long)j + 1 - (long)r0 : nr;	/* rows below the diagonal */
		if (ii0 < 0)
			ii0 = 0;
		long start = (long)(c0 + (size_t)wj) + 1 - (long)r0;	/* the group's least */
		if (start < 0)
			start = 0;
		if (wp == 0) {
			bool some = live && ii0 < nr;
			sts[lane] = some ? tops[j * (size_t)k + k - 1] : -INFINITY;
			sti[lane] = some ? topi[j * (size_t)k + k - 1] : DS_NONE;
		}
		__syncthreads();
		for (long base = start; base < nr; base += CB_WARPS * CB_ROWS) {
			float ts = sts[lane];
			int32_t ti = sti[lane];
			unsigned bits = 0;
#pragma unroll
			for (int u = 0; u < CB_ROWS; u++) {
				long ii = base + wp * CB_ROWS + u;
				bool in = live && ii >= ii0 && ii < nr;
				float v = in ? (float)S[(size_t)ii * ldS + jj] : -INFINITY;
				sv[wp * CB_ROWS + u][lane] = v;
				if (in && ds_passes(v, use_thr, thr) && ds_better(v, (int32_t)(r0 + ii), ts, ti))
					bits |= 1u << u;
			}
			flag[wp][lane] = bits;
			__syncthreads();
			if (wp == 0) {
				unsigned long long all = 0;
				for (int w = 0; w < CB_WARPS; w++)
					all |= (unsigned long long)flag[w][lane] << (w * CB_ROWS);
				unsigned m = __ballot_sync(FULL, all != 0);
				while (m != 0) {
					int src = __ffs(m) - 1;
					m &= m - 1;
					size_t jc = c0 + (size_t)wj + src;
					float *ls = tops + jc * (size_t)k;
					int32_t *li = topi + jc * (size_t)k;
					wlist l = wlist_load(ls, li, k, lane);
					float lt;
					int32_t lti;
					wlist_last(l, k, &lt, &lti);
					/* the same in every lane: the loop and the shuffles stay whole */
					for (unsigned long long b = __shfl_sync(FULL, all, src); b != 0; b &= b - 1) {
						int r = __ffsll((long long)b) - 1;
						float cs = sv[r][src];
						int32_t ci = (int32_t)(r0 + base + r);
						if (ds_better(cs, ci, lt, lti)) {
							wlist_insert(l, k, lane, cs, ci);
							wlist_last(l, k, &lt, &lti);
						}
					}
					wlist_store(l, ls, li, k, lane);
					if (lane == src) {
						sts[lane] = lt;
						sti[lane] = lti;
					}
				}
			}
			__syncthreads();
		}
	}
}

/* -k 0: every pair of the tile at or above the threshold (j < i for all pairs, then
 * written lower index first). Warp-aggregated appends; the count goes on past cap so
 * the caller can grow the buffer and run the tile again. */
template <typename T>
__global__ void
k_rowpairs(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, int sym, double thr,
    struct ds_pair *out, unsigned long long *count, unsigned long long cap)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w;
	long cend = row_columns(r0, w, c0, nc, sym);
	const T *row = S + (size_t)w * ldS;
	for (long base = 0; base < cend; base += 32) {
		long jj = base + lane;
		float s = jj < cend ? (float)row[jj] : 0.0f;
		bool pass = jj < cend && ds_passes(s, 1, thr);
		unsigned m = __ballot_sync(FULL, pass);
		if (m == 0)
			continue;
		int leader = __ffs(m) - 1;
		unsigned long long at = 0;
		if (lane == leader)
			at = atomicAdd(count, (unsigned long long)__popc(m));
		at = __shfl_sync(FULL, at, leader) + __popc(m & ((1u << lane) - 1));
		if (pass && at < cap) {
			uint32_t a = (uint32_t)i, b = (uint32_t)(c0 + jj);
			out[at] = sym ? ds_pair{b, a, s} : ds_pair{a, b, s};
		}
	}
}

template <typename T>
static void
select_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
{
	const struct ds_job *j = g->job;
	const T *S = (const T *)g->S;
	int rb = j->tune->rank_block, cb = j->tune->colsel_block;
	if (j->mode == DS_TOPK) {
		if (j->k == 0)
			return;
		if (g->kl <= 64)
			k_rowsel_reg<T><<<grid_for(nr * 32, rb), rb, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc,
			    sym, g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel, NULL);
		else
			k_rowsel<T><<<grid_for(nr * 32, rb), rb, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc, sym,
			    g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel);
		CUDA_LAUNCH_CHECK();
		if (sym) {
			if (g->kl <= 64)
				k_colsel_blk<T><<<grid_for(nc, 32), CB_WARPS * 32, 0, g->sb>>>(S, nc, r0, (int)nr, c0,
				    (int)nc, g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel);
			else
				k_colsel<T><<<grid_for(nc, cb), cb, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc,
				    g->tops, g->topi, (int)g->kl, j->use_thr, g->thr_sel);
			CUDA_LAUNCH_CHECK();
		}
	} else {
		k_rowpairs<T><<<grid_for(nr * 32, rb), rb, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc, sym,
		    g->thr_sel, g->pairs, g->count, g->cap);
		CUDA_LAUNCH_CHECK();
	}
}

/* The first n entries of the top-k lists emptied (score -inf, id DS_NONE), on st. */
void
ds_fill_state(struct gpu *g, size_t n, cudaStream_t st)
{
	k_fill_state<<<grid_for(n, 256), 256, 0, st>>>(g->tops, g->topi, n);
	CUDA_LAUNCH_CHECK();
}

/* The tile g->S of rows [r0, r0+nr) and columns [c0, c0+nc) into the lists or pairs. */
void
ds_rank_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
{
	if (g->esz == 8)
		select_tile<double>(g, r0, nr, c0, nc, sym);
	else
		select_tile<float>(g, r0, nr, c0, nc, sym);
}

/* Gathered rows' float32 scores S (nr x nc, row stride nc) against columns [c0, c0+nc)
 * into their lists (nr x kl, kl <= 64), each row's own column (self[w]) left out, on sb:
 * the float32 recheck of rows the TF32 lists could not decide (docsim_exact.cu). */
void
ds_rank_rows(struct gpu *g, const float *S, size_t nr, size_t c0, size_t nc, float *tops, int32_t *topi,
    size_t kl, double thr, const int32_t *self)
{
	int rb = g->job->tune->rank_block;
	k_rowsel_reg<float><<<grid_for(nr * 32, rb), rb, 0, g->sb>>>(S, nc, 0, (int)nr, c0, (int)nc, 0, tops, topi,
	    (int)kl, g->job->use_thr, thr, self);
	CUDA_LAUNCH_CHECK();
}

/* Matrix mode: the tile into its rows and columns of the matrix on the host. */
void
ds_matrix_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc)
{
	const struct ds_job *j = g->job;
	const float *src = (const float *)g->S;
	if (g->esz == 8) {
		k_d2f<<<grid_for(nr * nc, 256), 256, 0, g->sb>>>((const double *)g->S, g->conv, nr * nc);
		CUDA_LAUNCH_CHECK();
		src = g->conv;
	}
	CUDA_CHECK(cudaMemcpy2DAsync(j->mat + r0 * j->n + c0, j->n * 4, src, nc * 4, nc * 4, nr,
	    cudaMemcpyDeviceToHost, g->sb));
}
