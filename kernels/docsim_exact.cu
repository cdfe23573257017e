/* docsim_exact.cu: dense top-k lists from TF32 products, made exact. The tile loop ranks
 * scores from tensor cores (operands read as TF32, float32 sums) into lists of k +
 * DS_FAST_EXTRA; here, after the last tile, each row's list becomes the k best of the
 * float64 scores, the lines the CPU path prints:
 *   - a TF32 score is within B (ds_fast_bound) of the float64 score of the same pair;
 *   - a column left out of a full list scored at most the list's last, s_last, so at
 *     most s_last + B in float64; the list's k first scored at least its k-th, s_k, so k
 *     columns score at least s_k - B in float64;
 *   - so when s_last < s_k - 2B, no column outside the list reaches the k best, nor
 *     ties with the k-th once scores are rounded to float (B holds that rounding): the
 *     k best are among the list's candidates, which are rescored in float64 and ranked.
 *     A list not full holds every column its row was offered.
 *   - otherwise (many columns within 2B of the k-th: near-copies) the row is computed
 *     whole in float64 against every column uploaded, and counted for -v.
 * With -t, the tile loop keeps candidates down to the threshold less B, and the exact
 * scores must pass it. Every float64 score here is ds_dot_fd's (docsim.h), the CPU path's
 * own sum in its order, so the GPU's lines are the CPU's bit for bit.
 * For a worker of a divided run, "every column" is a superset of those it was offered,
 * so its lists stay exact over what it covers, which is what the merge needs. */
#include <math.h>

#include "docsim_dev.cuh"

#define FULL 0xffffffffu

/* The most a TF32 product of float32 unit rows of m dimensions differs from its float64
 * value. TF32 keeps 10 of float32's 23 fraction bits: an operand is within a relative
 * u = 2^-10 of its float32 value (truncated; rounding halves it), so a product is
 * within (2u + u^2) |x_i y_i|, and sum |x_i y_i| <= |x| |y| <= 1 + 2^-20 for rows
 * normalised in float32 (Cauchy-Schwarz). The float32 sums of m terms, in whatever
 * order and rounding (truncation at worst) the tensor cores use, add at most m 2^-23
 * times the terms' magnitude, below 1 + 2^-8. Then 2^-22: the TF32 score's rounding to
 * float in the list and the float64 score's (2^-24 each, for |s| <= 1), with room. For
 * m = 1024, 2.08e-3; the largest error measured on Gaussian vectors was 1.3e-4. */
double
ds_fast_bound(size_t m)
{
	const double u = ldexp(1, -10);
	return (2 * u + u * u) * (1 + ldexp(1, -20)) + (double)m * ldexp(1, -23) * (1 + ldexp(1, -8)) +
	    ldexp(1, -22);
}

/* Row i's list (kl entries, best first, unfilled ones DS_NONE) into the k best float64
 * scores, os/oi, by a warp. A lane scores candidates lane and lane + 32 (kl <= 64). */
__device__ static void
exact_row(size_t i, int lane, const float *rows, const float *cols, size_t m, size_t ncols, int sym,
    const float *tops, const int32_t *topi, int k, int kl, double gap, int use_thr, double thr,
    float *fs, int32_t *fi, unsigned long long *redone)
{
	const float *ls = tops + i * (size_t)kl;
	const int32_t *li = topi + i * (size_t)kl;
	float *os = fs + i * (size_t)k;
	int32_t *oi = fi + i * (size_t)k;
	for (int t = lane; t < k; t += 32) {
		os[t] = -INFINITY;
		oi[t] = DS_NONE;
	}
	int32_t id[2];
	id[0] = lane < kl ? li[lane] : DS_NONE;
	id[1] = lane + 32 < kl ? li[lane + 32] : DS_NONE;
	int filled = __popc(__ballot_sync(FULL, id[0] != DS_NONE)) + __popc(__ballot_sync(FULL, id[1] != DS_NONE));
	if (filled == 0)
		return;
	const float *x = rows + i * m;
	/* A row of zeros (an empty document) scores 0 with every column, in TF32 too, so its
	 * list is full of ties: none passes a positive threshold (the default, scores above
	 * 0), which spares computing it whole; with -t 0 or less the path below lists them. */
	if (use_thr && thr > 0) {
		bool nz = false;
		for (size_t t = lane; t < m; t += 32)
			nz = nz || x[t] != 0.0f;
		if (!__any_sync(FULL, nz))
			return;
	}
	__syncwarp();
	if (filled < kl || (double)ls[kl - 1] < (double)ls[k - 1] - gap) {
		/* the k best are among the candidates: rank their float64 scores */
		float key[2];
		bool pass[2];
		for (int h = 0; h < 2; h++) {
			pass[h] = id[h] != DS_NONE;
			key[h] = pass[h] ? (float)ds_dot_fd(x, cols + (size_t)id[h] * m, m) : -INFINITY;
			pass[h] = pass[h] && ds_passes(key[h], use_thr, thr);
		}
		int rank[2] = {0, 0};
		for (int t = 0; t < filled; t++) {
			int h = t >> 5;
			float kt = __shfl_sync(FULL, key[h], t & 31);
			int32_t it = __shfl_sync(FULL, id[h], t & 31);
			bool pt = __shfl_sync(FULL, (int)pass[h], t & 31) != 0;
			for (int u = 0; u < 2; u++)
				rank[u] += pt && ds_better(kt, it, key[u], id[u]);
		}
		for (int h = 0; h < 2; h++)
			if (pass[h] && rank[h] < k) {
				os[rank[h]] = key[h];
				oi[rank[h]] = id[h];
			}
		return;
	}
	/* too many columns near the k-th: the row whole, a lane a column, kept as k_rowsel
	 * keeps a list */
	if (lane == 0)
		atomicAdd(redone, 1ull);
	float ts = -INFINITY;
	int32_t ti = DS_NONE;
	for (size_t base = 0; base < ncols; base += 32) {
		size_t j = base + lane;
		bool cand = j < ncols && !(sym && j == i);
		float v = cand ? (float)ds_dot_fd(x, cols + j * m, m) : -INFINITY;
		cand = cand && ds_passes(v, use_thr, thr) && ds_better(v, (int32_t)j, ts, ti);
		unsigned mask = __ballot_sync(FULL, cand);
		while (mask != 0) {
			int src = __ffs(mask) - 1;
			mask &= mask - 1;
			float cs = __shfl_sync(FULL, v, src);
			int32_t cj = (int32_t)(base + src);
			if (ds_better(cs, cj, ts, ti)) {
				if (lane == 0)
					ds_insert(os, oi, (size_t)k, cs, cj);
				__syncwarp();
				ts = os[k - 1];
				ti = oi[k - 1];
				__syncwarp();
			}
		}
	}
}

/* A warp a row, the warps striding over the rows. */
__global__ void
k_exact(const float *rows, const float *cols, size_t m, size_t nrows, size_t ncols, int sym,
    const float *tops, const int32_t *topi, int k, int kl, double gap, int use_thr, double thr,
    float *fs, int32_t *fi, unsigned long long *redone)
{
	size_t w = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5, nw = ((size_t)gridDim.x * blockDim.x) >> 5;
	for (size_t i = w; i < nrows; i += nw)
		exact_row(i, threadIdx.x & 31, rows, cols, m, ncols, sym, tops, topi, k, kl, gap, use_thr, thr, fs,
		    fi, redone);
}

/* The lists of rows [0, nrows) (their vectors at rows) made exact against the columns
 * [0, ncols) at cols, into g->fin_s and g->fin_i; waits for them. */
void
ds_fast_exact(struct gpu *g, const float *rows, const float *cols, size_t nrows, size_t ncols)
{
	const struct ds_job *j = g->job;
	int rb = j->tune->rank_block;
	if (nrows == 0)
		return;
	k_exact<<<grid_for(nrows * 32, rb), rb, 0, g->sb>>>(rows, cols, g->K, nrows, ncols, g->sym, g->tops,
	    g->topi, (int)j->k, (int)g->kl, 2 * g->bound, j->use_thr, j->thr, g->fin_s, g->fin_i, g->redone);
	CUDA_LAUNCH_CHECK();
	CUDA_CHECK(cudaStreamSynchronize(g->sb));
}
