/* gmmscore_tc.cu: gmmscore's top-N from TF32 products on the tensor cores, with the
 * float32 path's answers (issue 15).
 *
 * For --top N (N <= TC_TOPMAX) of models of at most 32 Gaussians over at most TC_MAXDP
 * dimensions, every (frame, model) first gets a fast score F from the tensor cores and
 * a bound BM on how far the float32 path's score can be from it; then only the models
 * the bounds cannot rule out of a frame's top N are scored again, by score_kernel's
 * own arithmetic (gmmscore.cu), so the printed models and scores are its bits.
 *
 * tc_prep, once a chunk: X' = [y^2, y] rounded to TF32, laid out as mma.m16n8k8's A
 * fragments (16 frames a tile, a uint4 a lane a k-step, so a warp's load of a step is
 * 512 contiguous bytes), and each frame's norms of X''s halves, y2 = ||y'^2|| and
 * y1 = ||y'||, rounded up.
 *
 * tc_fast: a warp pair a model, each warp holding half its P' (gmmscore.h, struct
 * gmm_tc_params: 16 of the 32 slots) as the B fragments in registers, a block of
 * TC_MODELS models walking their frames 16 at a time, each warp loading the A fragments
 * itself (L1 serves the block's other warps). The epilogue combines a frame's 32 slots
 * into F (log-sum-exp or maximum; the odd warp hands its half to the even one through
 * shared memory) and stores the interval's ends, LO = F - BM rounded down and HI = F +
 * BM rounded up, model-major; each pass of tc_select then reads one.
 *
 * The bound (gmm_tc_bound, gmmscore.h), against the real value of a Gaussian c's score
 * from the same float32 parameters, with A_c = sum_k |X'_k||P'_kc|:
 *   fast:  A_c rel(K) + 2^-23 (|q_c| + |cst_c|), q_c = acc_c + cst_c,
 *          rel(K) = (2^-10 + 2^-21 + K 2^-22) / (1 - 2^-9):
 *          TF32 operands (2^-11 each, to nearest), X' and P' within 2^-21 of the real
 *          (x - ctr)^2, x - ctr, s^2, 2 s na', float32 sums of K products (2^-22 an
 *          addition, twice the truncating unit), over 1 - 2^-9 as A is itself computed
 *          from rounded operands; cst and the addition rounded once each;
 *   exact: (dp + 4) 2^-23 (2 |g_c| + |fast_c| + fast bound): score_kernel's fma chain
 *          (2^-24 a term's square and a sum's step) and g - acc, against
 *          Q = g - score <= |g| + |score|.
 * Each is increasing in A_c, |q_c|, |cst_c| and |g_c|, so one bound serves every
 * Gaussian of a model with them replaced by upper bounds: A_c <= y2 S + y1 W by
 * Cauchy-Schwarz on each half (X''s first half and P''s are >= 0), weighted a dimension
 * by sig_d (sum_d a_d b_d = sum_d (a_d / sig_d)(b_d sig_d)), so that dimensions of large
 * y and small s pair as they do in the sum (unweighted, the bench's MFCC-like frames
 * gave a bound 70 times the sum's); y2 and y1 the frame's weighted norms, S and W the
 * model's largest of P''s halves; |q_c| <= A_c (1 + 2^-9) + C; C and G the model's largest
 * |cst| and |g|. So the epilogue takes no bound a Gaussian, and the tensor cores no
 * second product. A model's BM (gmm_tc_model_bound) adds the two log-sum-exps' own
 * rounding (__expf, logf; s >= 1) and 2^-21 (|F| + it); the maximum and log-sum-exp
 * move by at most their arguments' largest change.
 *
 * tc_select: L = a frame's N-th largest LO over the models; the candidates are the
 * models with HI >= L. Each of the N
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

constexpr int TC_WARPS = 8;		// warps a tc_fast block
constexpr int TC_MODELS = TC_WARPS / 2;	// and models: a warp pair each
constexpr int TC_KS = 2 * TC_MAXDP / 8;	// mma k-steps at most
constexpr int TC_FT = 128;		// tiles of 16 frames a block: a model's fragments,
					// loaded once a block, serve 2048 frames
constexpr int TC_CAP = 64;		// candidates listed a frame
constexpr int TC_SEL_WARPS = 8;	// warps a tc_select block (of 32 frames)
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

// A thread a (16-frame tile, k-step, lane): its A fragment, X' rows g and g + 8,
// columns t and t + 4 of the step; and a thread a frame: its norms, rounded up.
__global__ void
tc_prep(const float *__restrict__ X, int n, int dp, int ks, const float *__restrict__ ctr,
    const float *__restrict__ sig, uint4 *__restrict__ XF, float2 *__restrict__ YN)
{
	const int ntiles = (n + 15) / 16;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < ntiles * ks * 32) {
		const int lane = i & 31, s = (i >> 5) % ks, tile = (i >> 5) / ks;
		const int g = lane >> 2, t = lane & 3;
		uint32_t v[4];
#pragma unroll
		for (int q = 0; q < 4; q++) {
			const int f = tile * 16 + g + 8 * (q & 1), c = 8 * s + t + 4 * (q >> 1);
			const int d = c < dp ? c : c - dp;
			const float y = f < n ? X[(size_t)f * dp + d] - ctr[d] : 0.0f;
			v[q] = tf32(c < dp ? y * y : y);
		}
		XF[i] = make_uint4(v[0], v[1], v[2], v[3]);
	}
	if (i < n) {
		double n2 = 0, n1 = 0;
		for (int d = 0; d < dp; d++) {
			const float y = X[(size_t)i * dp + d] - ctr[d];
			const double sg = sig[d];
			const double r2 = __uint_as_float(tf32(y * y)) / (sg * sg);
			const double r1 = __uint_as_float(tf32(y)) / sg;
			n2 += r2 * r2;
			n1 += r1 * r1;
		}
		YN[i] = make_float2(__double2float_ru(sqrt(n2) * (1 + 0x1p-40)),
		    __double2float_ru(sqrt(n1) * (1 + 0x1p-40)));
	}
}

// The bar.sync of warp pair q (ids 1 to TC_MODELS; 0 is __syncthreads'), 64 threads.
// Immediate ids: with an id in a register, ptxas reserves all 16 barriers of a block,
// and the SM's barriers then limit how many blocks it holds.
__device__ __forceinline__ void
pair_sync(int q)
{
	static_assert(TC_WARPS / 2 == 4, "pair_sync names 4 barriers");
	switch (q) {
	case 0:
		asm volatile("bar.sync 1, 64;" : : : "memory");
		break;
	case 1:
		asm volatile("bar.sync 2, 64;" : : : "memory");
		break;
	case 2:
		asm volatile("bar.sync 3, 64;" : : : "memory");
		break;
	default:
		asm volatile("bar.sync 4, 64;" : : : "memory");
		break;
	}
}

// A warp pair a model: warp 2 q + h takes its slots 16 h to 16 h + 15 (n8 tiles
// j = 2 h, 2 h + 1), so each holds half the B fragments (40 registers at 10 k-steps, not
// 80) and the block keeps more warps on the SM. The odd warp hands its half's maximum
// and sum (of __expf(v - its maximum)) for each frame to the even one through shared
// memory, double-buffered by tile, one pair barrier a tile; the even warp combines them
// (m = the larger maximum, s = s0 __expf(m0 - m) + s1 __expf(m1 - m): two more __expf
// roundings, well inside gmm_tc_model_bound's 2^-15) and stores LO and HI.
template <int MODE, int KS>
__global__ void __launch_bounds__(TC_WARPS * 32, 3)
tc_fast(const uint4 *__restrict__ XF, const float2 *__restrict__ YN, int n, int dp,
    const float2 *__restrict__ pf, const float *__restrict__ cst_in,
    const float4 *__restrict__ mb_in, int nm, size_t ld, float *__restrict__ LO,
    float *__restrict__ HI)
{
	__shared__ float2 xch[TC_MODELS][2][16];	// (maximum, sum) of the odd halves
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
	const int q = warp >> 1, half = warp & 1;
	const int model = blockIdx.y * TC_MODELS + q;
	if (model >= nm)
		return;	// both warps of the pair: no barrier of theirs is left waiting

	uint32_t bf[KS][2][2];
	float cst[4];	// slots 16 half + 8 jj + 2 t + e at [2 jj + e]
#pragma unroll
	for (int s = 0; s < KS; s++)
#pragma unroll
		for (int jj = 0; jj < 2; jj++) {
			const float2 v = __ldg(pf + (((size_t)model * KS + s) * 4 + 2 * half + jj) * 32 +
			    lane);
			bf[s][jj][0] = __float_as_uint(v.x);
			bf[s][jj][1] = __float_as_uint(v.y);
		}
#pragma unroll
	for (int i = 0; i < 4; i++)
		cst[i] = cst_in[(size_t)model * 32 + 16 * half + (i >> 1) * 8 + 2 * t + (i & 1)];
	const float4 mb = __ldg(mb_in + model);

	const int ntiles = (n + 15) / 16;
	const int tile_end = min(ntiles, (int)(blockIdx.x + 1) * TC_FT);
	for (int tile = blockIdx.x * TC_FT; tile < tile_end; tile++) {
		float acc[2][4];
#pragma unroll
		for (int jj = 0; jj < 2; jj++)
#pragma unroll
			for (int r = 0; r < 4; r++)
				acc[jj][r] = 0.0f;
		const uint4 *xf = XF + (size_t)tile * KS * 32 + lane;
#pragma unroll
		for (int s = 0; s < KS; s++) {
			const uint4 v = __ldg(xf + s * 32);
			const uint32_t a[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
			for (int jj = 0; jj < 2; jj++)
				mma_tf32(acc[jj], a, bf[s][jj][0], bf[s][jj][1]);
		}

		// Frame row 8 h + g: this lane's 4 slots (-inf where none), then the quad's 16.
		float mxr[2], smr[2];
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float fv[4], mx = -INFINITY;
#pragma unroll
			for (int i = 0; i < 4; i++) {
				fv[i] = -(acc[i >> 1][2 * h + (i & 1)] + cst[i]);
				mx = fmaxf(mx, fv[i]);
			}
#pragma unroll
			for (int o = 1; o <= 2; o <<= 1)
				mx = fmaxf(mx, __shfl_xor_sync(FULL, mx, o));
			float sum = 0.0f;
			if (MODE == GMM_SUM) {
#pragma unroll
				for (int i = 0; i < 4; i++)
					sum += mx == -INFINITY ? 0.0f : __expf(fv[i] - mx);
#pragma unroll
				for (int o = 1; o <= 2; o <<= 1)
					sum += __shfl_xor_sync(FULL, sum, o);
			}
			mxr[h] = mx;
			smr[h] = sum;
		}
		float2 *buf = xch[q][tile & 1];
		if (half == 1 && t == 0) {
			buf[g] = make_float2(mxr[0], smr[0]);
			buf[8 + g] = make_float2(mxr[1], smr[1]);
		}
		pair_sync(q);
		// The even warp's lanes t = 0 and 1 of each quad finish rows g and 8 + g: 16
		// frames in one store.
		const int f = tile * 16 + g + 8 * t;
		if (half == 0 && t < 2 && f < n) {
			const float m0 = t == 0 ? mxr[0] : mxr[1], s0 = t == 0 ? smr[0] : smr[1];
			const float2 o = buf[8 * t + g];
			const float m = fmaxf(m0, o.x);
			float myf = m;
			if (MODE == GMM_SUM && m != -INFINITY)
				myf = m + logf(s0 * __expf(m0 - m) + o.y * __expf(o.x - m));
			const float2 y = __ldg(YN + f);
			const float b = gmm_tc_bound(y.x, y.y, mb.x, mb.y, mb.z, mb.w, dp);
			const float bm = myf == -INFINITY ? 0.0f : gmm_tc_model_bound(myf, b);
			LO[(size_t)model * ld + f] = __fsub_rd(myf, bm);
			HI[(size_t)model * ld + f] = __fadd_ru(myf, bm);
		}
	}
}

// v into best, the top largest so far in decreasing order, equal values kept apart (so
// best[top - 1] is the top-th largest counted with multiplicity).
__device__ __forceinline__ void
topn_offer(float best[TC_TOPMAX], int top, float v)
{
#pragma unroll
	for (int i = 0; i < TC_TOPMAX; i++)
		if (i < top && v > best[i]) {
			const float tmp = best[i];
			best[i] = v;
			v = tmp;
		}
}

// A block a 32 frames (a lane a frame), its TC_SEL_WARPS warps taking every
// TC_SEL_WARPS-th model (a warp's read of a model is 32 contiguous floats): each warp's
// N largest LO, merged in shared memory into the frame's L; then each warp lists its
// models with HI >= L (a shared counter a frame: the list's order does not matter, as
// tc_rescore ranks by gmm_key, which no two models share).
__global__ void __launch_bounds__(TC_SEL_WARPS * 32)
tc_select(const float *__restrict__ LO, const float *__restrict__ HI, size_t ld, int n,
    int nm, int top, int *__restrict__ cand, int *__restrict__ count,
    unsigned long long *__restrict__ stats)
{
	__shared__ float sb[TC_SEL_WARPS][TC_TOPMAX][32];
	__shared__ float sL[32];
	__shared__ int scnt[32];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int f = blockIdx.x * 32 + lane;
	const bool live = f < n;

	float best[TC_TOPMAX];
#pragma unroll
	for (int i = 0; i < TC_TOPMAX; i++)
		best[i] = -INFINITY;
	for (int m = warp; live && m < nm; m += TC_SEL_WARPS)
		topn_offer(best, top, LO[(size_t)m * ld + f]);
#pragma unroll
	for (int i = 0; i < TC_TOPMAX; i++)
		sb[warp][i][lane] = best[i];
	if (warp == 0)
		scnt[lane] = 0;
	__syncthreads();
	if (warp == 0) {
		// the N largest of the warps' lists, counted with multiplicity: best holds
		// warp 0's already
		for (int w = 1; w < TC_SEL_WARPS; w++)
#pragma unroll
			for (int j = 0; j < TC_TOPMAX; j++)
				topn_offer(best, top, j < top ? sb[w][j][lane] : -INFINITY);
		float L = best[0];
#pragma unroll
		for (int i = 1; i < TC_TOPMAX; i++)
			if (i == top - 1)
				L = best[i];
		sL[lane] = L;
	}
	__syncthreads();
	const float L = sL[lane];
	for (int m = warp; live && m < nm; m += TC_SEL_WARPS)
		if (HI[(size_t)m * ld + f] >= L) {
			const int at = atomicAdd(&scnt[lane], 1);
			if (at < TC_CAP)
				cand[(size_t)f * TC_CAP + at] = m;
		}
	__syncthreads();
	if (warp == 0 && live) {
		const int cnt = scnt[lane];
		count[f] = cnt;
		atomicAdd(&stats[0], (unsigned long long)cnt);
		if (cnt > TC_CAP)
			atomicAdd(&stats[1], 1ull);
	}
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
	float *cst, *ctr, *sig, *HI;	/* HI: chunk x nmodels (LO is the caller's F) */
	float4 *mb;
	uint4 *XF;			/* tc_prep's A fragments: chunk / 16 x ks x 32 */
	float2 *YN;			/* and each frame's norms */
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
	    npart == p->nmodels && p->nmodels <= (size_t)65535 * TC_MODELS;
}

size_t
gmm_tc_model_bytes(const struct gmm_params *p)
{
	const size_t ks = (size_t)p->dp * 2 / 8;
	return p->nmodels * (ks * 4 * 32 * sizeof(float2) + 32 * sizeof(float) + sizeof(float4)) +
	    2 * (size_t)p->dp * sizeof(float) + 2 * sizeof(unsigned long long) +
	    15 * ks * 32 * sizeof(uint4);	/* XF's last tile's padding */
}

size_t
gmm_tc_frame_bytes(const struct gmm_params *p)
{
	const size_t ks = (size_t)p->dp * 2 / 8;
	return p->nmodels * sizeof(float) + (TC_CAP + 1) * sizeof(int) + ks * 2 * sizeof(uint4) +
	    sizeof(float2);
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
	t->mb = dev_alloc<float4>(p->nmodels);
	t->XF = dev_alloc<uint4>(mul_size(CEIL_DIV(chunk, 16), (size_t)h.ks * 32, "device buffer"));
	t->YN = dev_alloc<float2>(chunk);
	t->ctr = dev_alloc<float>((size_t)p->dp);
	t->sig = dev_alloc<float>((size_t)p->dp);
	t->HI = dev_alloc<float>(mul_size(chunk, p->nmodels, "device buffer"));
	t->cand = dev_alloc<int>(mul_size(chunk, TC_CAP, "device buffer"));
	t->count = dev_alloc<int>(chunk);
	t->stats = dev_alloc<unsigned long long>(2);
	CUDA_CHECK(cudaMallocHost(&t->hstats, 2 * sizeof(unsigned long long)));
	t->hstats[0] = t->hstats[1] = 0;
	CUDA_CHECK(cudaMemcpy(t->pf, h.pf, npf * sizeof(float2), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->cst, h.cst, p->nmodels * 32 * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->mb, h.mb, p->nmodels * sizeof(float4), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->ctr, h.ctr, (size_t)p->dp * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(t->sig, h.sig, (size_t)p->dp * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemset(t->stats, 0, 2 * sizeof(unsigned long long)));
	gmm_tc_params_free(&h);
	vlog("gpu: top %zu from TF32 products on the tensor cores (%d k-steps of 8), the "
	    "candidates rescored in float32 as the score kernel does", top, t->ks);
	return t;
}

// tc_fast for the run's mode and k-steps (dp / 4 of them: 1 to TC_KS), so that the
// B fragments take only the registers they need.
template <int MODE, int KS>
static void
fast_launch_ks(struct gmm_tc *t, dim3 grid, int n, float *F, cudaStream_t st)
{
	if (KS == t->ks) {
		tc_fast<MODE, KS><<<grid, TC_WARPS * 32, 0, st>>>(t->XF, t->YN, n, t->dp, t->pf,
		    t->cst, t->mb, t->nm, t->chunk, F, t->HI);
		CUDA_LAUNCH_CHECK();
	} else if constexpr (KS < TC_KS) {
		fast_launch_ks<MODE, KS + 1>(t, grid, n, F, st);
	} else {
		die("gmm_tc_run: %d k-steps", t->ks);
	}
}

static void
fast_launch(struct gmm_tc *t, dim3 grid, int n, float *F, cudaStream_t st)
{
	if (t->mode == GMM_SUM)
		fast_launch_ks<GMM_SUM, 1>(t, grid, n, F, st);
	else
		fast_launch_ks<GMM_MAX, 1>(t, grid, n, F, st);
}

void
gmm_tc_run(struct gmm_tc *t, const float4 *X, int n, const float4 *P, const float *G,
    const int *part_slot, const int *part_k, int nslots, float *F, uint32_t *idx, float *val,
    cudaStream_t st)
{
	if (n <= 0 || (size_t)n > t->chunk)
		die("gmm_tc_run: %d frames (chunk %zu)", n, t->chunk);
	const int ntiles = (n + 15) / 16;
	const int nprep = max(ntiles * t->ks * 32, n);
	tc_prep<<<(unsigned)CEIL_DIV(nprep, 256), 256, 0, st>>>(reinterpret_cast<const float *>(X),
	    n, t->dp, t->ks, t->ctr, t->sig, t->XF, t->YN);
	CUDA_LAUNCH_CHECK();
	const dim3 grid((unsigned)CEIL_DIV(ntiles, TC_FT), (unsigned)CEIL_DIV(t->nm, TC_MODELS));
	fast_launch(t, grid, n, F, st);
	tc_select<<<(unsigned)CEIL_DIV(n, 32), TC_SEL_WARPS * 32, 0, st>>>(F, t->HI, t->chunk, n, t->nm,
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
	void *bufs[] = {t->pf, t->cst, t->mb, t->ctr, t->sig, t->XF, t->YN, t->HI, t->cand, t->count,
	    t->stats};
	for (void *b : bufs)
		CUDA_CHECK(cudaFree(b));
	CUDA_CHECK(cudaFreeHost(t->hstats));
	free(t);
}
