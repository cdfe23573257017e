/* gmmscore_tc.cu: gmmscore's top-N from TF32 products on the tensor cores, with the
 * float32 path's answers (issue 15).
 *
 * For --top N (N <= TC_TOPMAX) of models of at most 32 Gaussians over at most TC_MAXDP
 * dimensions, every (frame, model) first gets a fast score F from the tensor cores and
 * a bound BM on how far the float32 path's score can be from it; then only the models
 * the bounds cannot rule out of a frame's top N are scored again, by score_kernel's
 * own arithmetic (gmmscore.cu), so the printed models and scores are its bits.
 *
 * tc_fast: a warp a model, its P' (gmmscore.h, struct gmm_tc_params) held as the B
 * fragments of mma.m16n8k8 in registers, a block of TC_WARPS models walking frames 32
 * at a time through a shared tile of X' = [y^2, y] rounded to TF32. Each product is
 * taken twice, on the values and on their absolute values (the sign bits cleared, the
 * same registers), the second giving A = sum |X'||P'|, from which each Gaussian's
 * bound. The epilogue combines a frame's 32 slots into F (log-sum-exp or maximum) and
 * BM, and stores the interval's ends, LO = F - BM rounded down and HI = F + BM rounded
 * up, model-major (a warp's 32 frames are one coalesced store); each pass of tc_select
 * then reads one of them.
 *
 * The bound of a Gaussian c (gmm_tc_gauss, gmmscore.h), against the real value of its
 * score from the same float32 parameters:
 *   fast:  A_c x rel(K) + 2^-23 (|q_c| + |cst_c|), q_c = acc_c + cst_c,
 *          rel(K) = (2^-10 + 2^-21 + K 2^-22) / (1 - 2^-9):
 *          TF32 operands (2^-11 each, to nearest), X' and P' within 2^-21 of the real
 *          (x - ctr)^2, x - ctr, s^2, 2 s na', float32 sums of K products (2^-22 an
 *          addition, twice the truncating unit), over 1 - 2^-9 as A is itself computed
 *          from rounded operands; cst and the addition rounded once each;
 *   exact: (dp + 4) 2^-23 (2 |g_c| + |fast_c| + fast bound): score_kernel's fma chain
 *          (2^-24 a term's square and a sum's step) and g - acc, against
 *          Q = g - score <= |g| + |score|;
 * and of a model (gmm_tc_model_bound), BM = the largest of its Gaussians' (fast +
 * exact) (log-sum-exp and maximum move by at most their arguments' largest change) +
 * 2^-15 + 2^-21 (|F| + it), the two log-sum-exps' own rounding (__expf, logf; s >= 1).
 *
 * tc_select: a thread a frame: L = the N-th largest LO over the models; the candidates
 * are the models with HI >= L. Each of the N
 * best by the float32 path's score has it >= L, so is one, and so is any model tied
 * with the N-th. Up to TC_CAP are listed a frame; more, and the frame is scored whole.
 *
 * tc_rescore: a warp a frame, a lane a Gaussian: each candidate's score as score_kernel
 * and reduce_part compute it (the same fma chain over the dimensions in order, g - acc,
 * the maximum, the sum of __expf in Gaussian order, gmm_lse_finish), the top N by
 * gmm_key, as top_kernel orders them. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "err.h"
#include "gmmscore_tc.h"

namespace {

constexpr int TC_WARPS = 8;		// models a tc_fast block
constexpr int TC_KS = 2 * TC_MAXDP / 8;	// mma k-steps at most
// The X' tile's row stride in floats: 100 = 4 mod 32, so that a fragment's 32 loads
// (rows g = lane / 4, columns t = lane % 4) hit 32 different banks.
constexpr int TC_LDX = 2 * TC_MAXDP + 4;
constexpr int TC_FT = 64;		// tiles of 32 frames a block: a model's fragments,
					// loaded once a block, serve 2048 frames
constexpr int TC_CAP = 64;		// candidates listed a frame
constexpr int TC_SEL = 128;		// threads (frames) a tc_select block
constexpr int TC_RES_WARPS = 4;		// frames a tc_rescore block
constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ uint32_t
tf32(float x)
{
	uint32_t r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return r;
}

// d += a b on one 16 x 8 tile, k = 8 (PTX's fragment layout: a rows g, g + 8 and
// columns t, t + 4; b rows t, t + 4 and column g; d rows g, g + 8, columns 2t, 2t + 1).
__device__ __forceinline__ void
mma_tf32(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int MODE>
__global__ void __launch_bounds__(TC_WARPS * 32, 1)
tc_fast(const float *__restrict__ X, int n, int dp, int ks, const float2 *__restrict__ pf,
    const float *__restrict__ cst_in, const float *__restrict__ gab_in,
    const float *__restrict__ ctr, int nm, size_t ld, float *__restrict__ LO,
    float *__restrict__ HI)
{
	__shared__ float xs[32 * TC_LDX];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
	const int model = blockIdx.y * TC_WARPS + warp;
	const bool live = model < nm;

	uint32_t bf[TC_KS][4][2];
	float cst[8], gab[8];	// slots 8 j + 2 t + e at [2 j + e]
#pragma unroll
	for (int s = 0; s < TC_KS; s++)
#pragma unroll
		for (int j = 0; j < 4; j++) {
			float2 v = make_float2(0.0f, 0.0f);
			if (live && s < ks)
				v = __ldg(pf + (((size_t)model * ks + s) * 4 + j) * 32 + lane);
			bf[s][j][0] = __float_as_uint(v.x);
			bf[s][j][1] = __float_as_uint(v.y);
		}
#pragma unroll
	for (int i = 0; i < 8; i++) {
		const int slot = (i >> 1) * 8 + 2 * t + (i & 1);
		cst[i] = live ? cst_in[(size_t)model * 32 + slot] : 0.0f;
		gab[i] = live ? gab_in[(size_t)model * 32 + slot] : -1.0f;
	}

	const int ntiles = (n + 31) / 32;
	const int tile_end = min(ntiles, (int)(blockIdx.x + 1) * TC_FT);
	for (int tile = blockIdx.x * TC_FT; tile < tile_end; tile++) {
		const int f0 = tile * 32;
		__syncthreads();	// the last tile's readers of xs are done
		for (int i = threadIdx.x; i < 32 * dp; i += blockDim.x) {
			const int r = i / dp, d = i - r * dp;
			const float y = f0 + r < n ? X[(size_t)(f0 + r) * dp + d] - ctr[d] : 0.0f;
			xs[r * TC_LDX + d] = __uint_as_float(tf32(y * y));
			xs[r * TC_LDX + dp + d] = __uint_as_float(tf32(y));
		}
		__syncthreads();
		if (!live)
			continue;

		float acc[2][4][4], bnd[2][4][4];
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
#pragma unroll
			for (int j = 0; j < 4; j++)
#pragma unroll
				for (int q = 0; q < 4; q++)
					acc[mt][j][q] = bnd[mt][j][q] = 0.0f;
#pragma unroll
		for (int s = 0; s < TC_KS; s++) {
			if (s >= ks)
				break;
			uint32_t a[2][4], aa[2][4];
#pragma unroll
			for (int mt = 0; mt < 2; mt++) {
				const float *xa = xs + (mt * 16 + g) * TC_LDX + s * 8 + t;
				a[mt][0] = __float_as_uint(xa[0]);
				a[mt][1] = __float_as_uint(xa[8 * TC_LDX]);
				a[mt][2] = __float_as_uint(xa[4]);
				a[mt][3] = __float_as_uint(xa[8 * TC_LDX + 4]);
#pragma unroll
				for (int q = 0; q < 4; q++)
					aa[mt][q] = a[mt][q] & 0x7fffffffu;
			}
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const uint32_t b0 = bf[s][j][0], b1 = bf[s][j][1];
#pragma unroll
				for (int mt = 0; mt < 2; mt++) {
					mma_tf32(acc[mt][j], a[mt], b0, b1);
					mma_tf32(bnd[mt][j], aa[mt], b0 & 0x7fffffffu, b1 & 0x7fffffffu);
				}
			}
		}

		// Frame row 16 mt + 8 h + g: this lane's 8 slots, then the quad's 32.
		float fr[4], br[4];
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
#pragma unroll
			for (int h = 0; h < 2; h++) {
				float fv[8], mx = -INFINITY, bmax = 0.0f;
#pragma unroll
				for (int i = 0; i < 8; i++) {
					const int j = i >> 1, q = 2 * h + (i & 1);
					fv[i] = -INFINITY;
					if (gab[i] >= 0.0f) {
						float b;
						const float fast = gmm_tc_gauss(acc[mt][j][q], bnd[mt][j][q],
						    cst[i], gab[i], dp, &b);
						fv[i] = fast;
						mx = fmaxf(mx, fast);
						bmax = fmaxf(bmax, b);
					}
				}
#pragma unroll
				for (int o = 1; o <= 2; o <<= 1) {
					mx = fmaxf(mx, __shfl_xor_sync(FULL, mx, o));
					bmax = fmaxf(bmax, __shfl_xor_sync(FULL, bmax, o));
				}
				float fm = mx;
				if (MODE == GMM_SUM) {
					float sum = 0.0f;
#pragma unroll
					for (int i = 0; i < 8; i++)
						sum += mx == -INFINITY ? 0.0f : __expf(fv[i] - mx);
#pragma unroll
					for (int o = 1; o <= 2; o <<= 1)
						sum += __shfl_xor_sync(FULL, sum, o);
					fm = mx == -INFINITY ? -INFINITY : mx + logf(sum);
				}
				fr[2 * mt + h] = fm;
				br[2 * mt + h] = mx == -INFINITY ? 0.0f : gmm_tc_model_bound(fm, bmax);
			}
		// Lane (g, t) stores row 8 t + g (mt = t / 2, h = t % 2): the warp's 32
		// frames in one store.
		const float myf = t == 0 ? fr[0] : t == 1 ? fr[1] : t == 2 ? fr[2] : fr[3];
		const float myb = t == 0 ? br[0] : t == 1 ? br[1] : t == 2 ? br[2] : br[3];
		const int f = f0 + 8 * t + g;
		if (f < n) {
			LO[(size_t)model * ld + f] = __fsub_rd(myf, myb);
			HI[(size_t)model * ld + f] = __fadd_ru(myf, myb);
		}
	}
}

__global__ void __launch_bounds__(TC_SEL)
tc_select(const float *__restrict__ LO, const float *__restrict__ HI, size_t ld, int n,
    int nm, int top, int *__restrict__ cand, int *__restrict__ count,
    unsigned long long *__restrict__ stats)
{
	const int f = blockIdx.x * TC_SEL + threadIdx.x;
	if (f >= n)
		return;
	float best[TC_TOPMAX];
#pragma unroll
	for (int i = 0; i < TC_TOPMAX; i++)
		best[i] = -INFINITY;
	for (int m = 0; m < nm; m++) {
		float v = LO[(size_t)m * ld + f];
#pragma unroll
		for (int i = 0; i < TC_TOPMAX; i++)
			if (i < top && v > best[i]) {
				const float tmp = best[i];
				best[i] = v;
				v = tmp;
			}
	}
	float L = best[0];
#pragma unroll
	for (int i = 1; i < TC_TOPMAX; i++)
		if (i == top - 1)
			L = best[i];
	int cnt = 0;
	for (int m = 0; m < nm; m++)
		if (HI[(size_t)m * ld + f] >= L) {
			if (cnt < TC_CAP)
				cand[(size_t)f * TC_CAP + cnt] = m;
			cnt++;
		}
	count[f] = cnt;
	atomicAdd(&stats[0], (unsigned long long)cnt);
	if (cnt > TC_CAP)
		atomicAdd(&stats[1], 1ull);
}

template <int MODE>
__global__ void __launch_bounds__(TC_RES_WARPS * 32)
tc_rescore(const float4 *__restrict__ X, int n, int dc, const float4 *__restrict__ P,
    const float *__restrict__ G, const int *__restrict__ part_slot,
    const int *__restrict__ part_k, int nslots, int nm, int top,
    const int *__restrict__ cand, const int *__restrict__ count, uint32_t *__restrict__ idx,
    float *__restrict__ val)
{
	const int lane = threadIdx.x & 31;
	const int f = blockIdx.x * TC_RES_WARPS + threadIdx.x / 32;
	if (f >= n)
		return;
	const int cnt = count[f];
	const bool whole = cnt > TC_CAP;
	const int nc = whole ? nm : cnt;
	const float4 *x = X + (size_t)f * dc;
	const size_t pstride = (size_t)nslots * 2;
	unsigned long long bk[TC_TOPMAX];
	float bv[TC_TOPMAX];
#pragma unroll
	for (int j = 0; j < TC_TOPMAX; j++) {
		bk[j] = 0;	// below every real key
		bv[j] = -INFINITY;
	}
	for (int i = 0; i < nc; i++) {
		const int m = whole ? i : cand[(size_t)f * TC_CAP + i];
		const int s0 = part_slot[m], k = part_k[m];
		float v = -INFINITY;
		if (lane < k) {
			const float4 *pp = P + (size_t)(s0 + lane) * 2;
			float a = 0.0f;
			for (int kk = 0; kk < dc; kk++) {
				const float4 ps = __ldg(pp + kk * pstride), pn = __ldg(pp + kk * pstride + 1);
				const float4 xv = x[kk];
				a = gmm_term(xv.x, ps.x, pn.x, a);
				a = gmm_term(xv.y, ps.y, pn.y, a);
				a = gmm_term(xv.z, ps.z, pn.z, a);
				a = gmm_term(xv.w, ps.w, pn.w, a);
			}
			v = G[s0 + lane] - a;
		}
		float mx = v;
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
			mx = fmaxf(mx, __shfl_xor_sync(FULL, mx, o));
		float r = mx;
		if (MODE == GMM_SUM) {
			// reduce_part's sum, in its order; its padding's terms add exactly 0
			float s = 0.0f;
			for (int c = 0; c < k; c++)
				s += __expf(__shfl_sync(FULL, v, c) - mx);
			r = gmm_lse_finish(mx, s);
		}
		unsigned long long key = gmm_key(r, (uint32_t)m);
		float kv = r;
#pragma unroll
		for (int j = 0; j < TC_TOPMAX; j++)
			if (j < top && key > bk[j]) {
				const unsigned long long tk = bk[j];
				const float tv = bv[j];
				bk[j] = key;
				bv[j] = kv;
				key = tk;
				kv = tv;
			}
	}
#pragma unroll
	for (int j = 0; j < TC_TOPMAX; j++)
		if (j < top && lane == j) {
			idx[(size_t)f * top + j] = gmm_key_model(bk[j]);
			val[(size_t)f * top + j] = bv[j];
		}
}

template <typename T>
T *
dev_alloc(size_t n)
{
	void *p = NULL;
	CUDA_CHECK(cudaMalloc(&p, mul_size(n ? n : 1, sizeof(T), "device buffer")));
	return static_cast<T *>(p);
}

}  // namespace

struct gmm_tc {
	enum gmm_mode mode;
	int top, nm, dp, ks;
	size_t chunk;
	float2 *pf;
	float *cst, *gab, *ctr, *HI;	/* HI: chunk x nmodels (LO is the caller's F) */
	int *cand, *count;
	unsigned long long *stats;	/* candidates, frames scored whole */
	unsigned long long *hstats;	/* pinned: stats as of the last call's end */
	size_t frames;
};

int
gmm_tc_wanted(const struct gmm_params *p, size_t top, size_t npart)
{
	const char *v = getenv("ACCELKIT_GMMSCORE_TC");
	if (v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
		die("ACCELKIT_GMMSCORE_TC must be 0 or 1, not '%s'", v);
	if (v != NULL && strcmp(v, "0") == 0)
		return 0;
	return top >= 1 && top <= TC_TOPMAX && p->maxcomp <= TC_MAXCOMP && p->dp <= TC_MAXDP &&
	    npart == p->nmodels && p->nmodels <= (size_t)65535 * TC_WARPS;
}

size_t
gmm_tc_model_bytes(const struct gmm_params *p)
{
	const size_t ks = (size_t)p->dp * 2 / 8;
	return p->nmodels * (ks * 4 * 32 * sizeof(float2) + 32 * 2 * sizeof(float)) +
	    (size_t)p->dp * sizeof(float) + 2 * sizeof(unsigned long long);
}

size_t
gmm_tc_frame_bytes(const struct gmm_params *p)
{
	return p->nmodels * sizeof(float) + (TC_CAP + 1) * sizeof(int);
}

struct gmm_tc *
gmm_tc_open(const struct gmm_params *p, enum gmm_mode mode, size_t top, size_t chunk)
{
	struct gmm_tc *t = static_cast<struct gmm_tc *>(xcalloc(1, sizeof *t));
	struct gmm_tc_params h;
	gmm_tc_pack(p, &h);
	t->mode = mode;
	t->top = (int)top;
	t->nm = (int)p->nmodels;
	t->dp = p->dp;
	t->ks = h.ks;
	t->chunk = chunk;
	const size_t npf = p->nmodels * (size_t)h.ks * 4 * 32;
	t->pf = dev_alloc<float2>(npf);
	t->cst = dev_alloc<float>(p->nmodels * 32);
	t->gab = dev_alloc<float>(p->nmodels * 32);
	t->ctr = dev_alloc<float>((size_t)p->dp);
	t->HI = dev_alloc<float>(mul_size(chunk, p->nmodels, "device buffer"));
	t->cand = dev_alloc<int>(mul_size(chunk, TC_CAP, "device buffer"));
	t->count = dev_alloc<int>(chunk);
	t->stats = dev_alloc<unsigned long long>(2);
	CUDA_CHECK(cudaMallocHost(&t->hstats, 2 * sizeof(unsigned long long)));
	t->hstats[0] = t->hstats[1] = 0;
	CUDA_CHECK(cudaMemcpy(t->pf, h.pf, npf * sizeof(float2), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->cst, h.cst, p->nmodels * 32 * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->gab, h.gab, p->nmodels * 32 * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->ctr, h.ctr, (size_t)p->dp * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemset(t->stats, 0, 2 * sizeof(unsigned long long)));
	gmm_tc_params_free(&h);
	vlog("gpu: top %zu from TF32 products on the tensor cores (%d k-steps of 8), the "
	    "candidates rescored in float32 as the score kernel does", top, t->ks);
	return t;
}

void
gmm_tc_run(struct gmm_tc *t, const float4 *X, int n, const float4 *P, const float *G,
    const int *part_slot, const int *part_k, int nslots, float *F, uint32_t *idx, float *val,
    cudaStream_t st)
{
	if (n <= 0 || (size_t)n > t->chunk)
		die("gmm_tc_run: %d frames (chunk %zu)", n, t->chunk);
	const int ntiles = (n + 31) / 32;
	const dim3 grid((unsigned)CEIL_DIV(ntiles, TC_FT), (unsigned)CEIL_DIV(t->nm, TC_WARPS));
	const float *x = reinterpret_cast<const float *>(X);
	if (t->mode == GMM_SUM)
		tc_fast<GMM_SUM><<<grid, TC_WARPS * 32, 0, st>>>(x, n, t->dp, t->ks, t->pf, t->cst,
		    t->gab, t->ctr, t->nm, t->chunk, F, t->HI);
	else
		tc_fast<GMM_MAX><<<grid, TC_WARPS * 32, 0, st>>>(x, n, t->dp, t->ks, t->pf, t->cst,
		    t->gab, t->ctr, t->nm, t->chunk, F, t->HI);
	CUDA_LAUNCH_CHECK();
	tc_select<<<(unsigned)CEIL_DIV(n, TC_SEL), TC_SEL, 0, st>>>(F, t->HI, t->chunk, n, t->nm,
	    t->top, t->cand, t->count, t->stats);
	CUDA_LAUNCH_CHECK();
	const unsigned rb = (unsigned)CEIL_DIV(n, TC_RES_WARPS);
	const int dc = t->dp / GMM_DVEC;
	if (t->mode == GMM_SUM)
		tc_rescore<GMM_SUM><<<rb, TC_RES_WARPS * 32, 0, st>>>(X, n, dc, P, G, part_slot,
		    part_k, nslots, t->nm, t->top, t->cand, t->count, idx, val);
	else
		tc_rescore<GMM_MAX><<<rb, TC_RES_WARPS * 32, 0, st>>>(X, n, dc, P, G, part_slot,
		    part_k, nslots, t->nm, t->top, t->cand, t->count, idx, val);
	CUDA_LAUNCH_CHECK();
	/* The totals so far, for -v: read once the caller has waited for this call, as the
	 * program ends with _exit (cuda_finish) before any close. */
	CUDA_CHECK(cudaMemcpyAsync(t->hstats, t->stats, 2 * sizeof(unsigned long long),
	    cudaMemcpyDeviceToHost, st));
	t->frames += (size_t)n;
}

void
gmm_tc_report(const struct gmm_tc *t)
{
	if (t == NULL)
		return;
	vlog("gpu: tensor cores: %llu candidates rescored for %zu frames (%.2f a frame), %llu "
	    "frames scored whole (over %d candidates)", t->hstats[0], t->frames,
	    t->frames ? (double)t->hstats[0] / (double)t->frames : 0.0, t->hstats[1], TC_CAP);
}

void
gmm_tc_close(struct gmm_tc *t)
{
	if (t == NULL)
		return;
	void *bufs[] = {t->pf, t->cst, t->gab, t->ctr, t->HI, t->cand, t->count, t->stats};
	for (void *b : bufs)
		CUDA_CHECK(cudaFree(b));
	CUDA_CHECK(cudaFreeHost(t->hstats));
	free(t);
}
