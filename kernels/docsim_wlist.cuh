/* docsim_wlist.cuh: a top-k list of up to 64 entries held by a warp in registers, two a
 * lane, for docsim's CUDA kernels (k_rowsel_reg and k_colsel_blk in docsim_rank.cu,
 * k_exact's whole rows in docsim_exact.cu, k_topk_tf32's epilogue in docsim_topk_tc.cu). */
#ifndef DOCSIM_WLIST_CUH
#define DOCSIM_WLIST_CUH

#include "docsim.h"

#define FULL 0xffffffffu

/* Lists of up to 64 (every TF32 list, k + 32) held by a warp in registers: entries lane
 * and lane + 32, best first. A candidate goes in by shuffles: its place is the count of
 * entries before it, and those after it move up one; a few warp instructions, where
 * ds_insert is one lane shifting the list in global memory. */
struct wlist {
	float e0, e1;
	int32_t j0, j1;
};

__device__ __forceinline__ wlist
wlist_load(const float *ls, const int32_t *li, int k, int lane)
{
	wlist w;
	w.e0 = lane < k ? ls[lane] : -INFINITY;
	w.e1 = lane + 32 < k ? ls[lane + 32] : -INFINITY;
	w.j0 = lane < k ? li[lane] : DS_NONE;
	w.j1 = lane + 32 < k ? li[lane + 32] : DS_NONE;
	return w;
}

/* wlist_load from L2 (ld.global.cg), past the SM's own cache: for a list that blocks on
 * other SMs update under a lock (docsim_topk_tc.cu). */
__device__ __forceinline__ wlist
wlist_load_l2(const float *ls, const int32_t *li, int k, int lane)
{
	wlist w;
	w.e0 = lane < k ? __ldcg(ls + lane) : -INFINITY;
	w.e1 = lane + 32 < k ? __ldcg(ls + lane + 32) : -INFINITY;
	w.j0 = lane < k ? __ldcg(li + lane) : DS_NONE;
	w.j1 = lane + 32 < k ? __ldcg(li + lane + 32) : DS_NONE;
	return w;
}

__device__ __forceinline__ void
wlist_store(const wlist &w, float *ls, int32_t *li, int k, int lane)
{
	if (lane < k) {
		ls[lane] = w.e0;
		li[lane] = w.j0;
	}
	if (lane + 32 < k) {
		ls[lane + 32] = w.e1;
		li[lane + 32] = w.j1;
	}
}

/* The list's last entry, in every lane. */
__device__ __forceinline__ void
wlist_last(const wlist &w, int k, float *ts, int32_t *ti)
{
	*ts = __shfl_sync(FULL, k > 32 ? w.e1 : w.e0, (k - 1) & 31);
	*ti = __shfl_sync(FULL, k > 32 ? w.j1 : w.j0, (k - 1) & 31);
}

/* (cs, cj), the same in every lane, into the list; the caller has checked that it
 * beats the last entry. */
__device__ __forceinline__ void
wlist_insert(wlist &w, int k, int lane, float cs, int32_t cj)
{
	int pos = __popc(__ballot_sync(FULL, lane < k && ds_better(w.e0, w.j0, cs, cj))) +
	    __popc(__ballot_sync(FULL, lane + 32 < k && ds_better(w.e1, w.j1, cs, cj)));
	float u0 = __shfl_up_sync(FULL, w.e0, 1), u1 = __shfl_up_sync(FULL, w.e1, 1);
	int32_t v0 = __shfl_up_sync(FULL, w.j0, 1), v1 = __shfl_up_sync(FULL, w.j1, 1);
	float c31 = __shfl_sync(FULL, w.e0, 31);
	int32_t d31 = __shfl_sync(FULL, w.j0, 31);
	if (lane == 0) {
		u1 = c31;
		v1 = d31;
	}
	if (lane > pos) {
		w.e0 = u0;
		w.j0 = v0;
	} else if (lane == pos) {
		w.e0 = cs;
		w.j0 = cj;
	}
	if (lane + 32 > pos) {
		w.e1 = u1;
		w.j1 = v1;
	} else if (lane + 32 == pos) {
		w.e1 = cs;
		w.j1 = cj;
	}
}

/* Each lane's (v, j), where cand, in lane order: take(cs, cj) for each that beats a
 * list's last entry (ts, ti, the same in every lane), which take inserts and keeps
 * ts, ti up to date. The one walk for the register list (wlist_offer) and the global
 * one (docsim_rank.cu's glist_offer). */
template <typename Take>
__device__ __forceinline__ void
offer_each(bool cand, float v, int32_t j, const float *ts, const int32_t *ti, Take take)
{
	unsigned m = __ballot_sync(FULL, cand);
	while (m != 0) {
		int src = __ffs(m) - 1;
		m &= m - 1;
		float cs = __shfl_sync(FULL, v, src);
		int32_t cj = __shfl_sync(FULL, j, src);
		if (ds_better(cs, cj, *ts, *ti))
			take(cs, cj);
	}
}

/* Each lane's (v, j), where cand, offered to the list in lane order: those that beat
 * the list's last entry (ts, ti, the same in every lane, kept up to date) go in. */
__device__ __forceinline__ void
wlist_offer(wlist &l, int k, int lane, bool cand, float v, int32_t j, float *ts, int32_t *ti)
{
	offer_each(cand, v, j, ts, ti, [&](float cs, int32_t cj) {
		wlist_insert(l, k, lane, cs, cj);
		wlist_last(l, k, ts, ti);
	});
}

#endif
