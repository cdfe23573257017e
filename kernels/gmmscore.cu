/* gmmscore.cu: the CUDA path of gmmscore.
 *
 * Layout. Components are packed into "slots", 256 to a block of the score kernel, a
 * model's components in consecutive slots; a model that does not fit in what is left
 * of a block starts the next one, and a model larger than a block is split into
 * parts whose scores a second kernel combines. The parameters are interleaved as the
 * paper does it: for each group of 4 dimensions, all slots in order, each slot's 4
 * values of s then 4 of -mu s (two float4), so that the 32 threads of a warp, two
 * slots each, read 2 KB of consecutive bytes.
 *
 * Score kernel. A block takes 256 slots and nsub tiles of FR = 64 frames: it stages
 * the frames in shared memory, and each thread keeps 2 slots x 64 frames of sums in
 * registers, so every parameter loaded serves 64 frames and every feature float4
 * read from shared memory (a broadcast) feeds 16 fused multiply-adds. The component
 * scores then go to shared memory, 32 frames at a time, where each (model, frame) is
 * reduced to its log-sum-exp or maximum on chip; only model scores reach device
 * memory: frames x models, never frames x Gaussians.
 *
 * Top-N kernel: a warp a frame, each lane keeping its best KMAX keys (score, model)
 * in registers, then N rounds of a warp-wide maximum.
 *
 * --top N of small models may go instead through the tensor cores (gmmscore_tc.cu),
 * which rescores its candidates with this file's arithmetic: the same bits. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "err.h"
#include "gmmscore.h"
#include "gmmscore_tc.h"
#include "timer.h"

namespace {

constexpr int NT = GMM_GPU_THREADS;	// threads a block
constexpr int FH = 32;			// frames a reduction pass
// Tile shapes compiled: slots a thread (CPL) x frames a thread (FR), 2 x 64 or 4 x 32;
// which one runs, and how many tiles a block (1 to 16), is the tuning table's choice
// (kernels/gmmscore_tune.h, with the measurements).
constexpr int MAX_DC = 128;		// at most 512 dimensions (shared memory)
constexpr int TOP_WARPS = 4;		// frames a top-N block

// The shared-memory index of (slot, frame) among a block's component scores: rows of
// FH frames, XOR-swizzled by the owning thread, so that a thread's stores of its CPL
// slots (lanes a slot group apart) and the reduction's loads (lanes a frame apart)
// both hit 32 different banks.
template <int CPL>
__device__ __forceinline__ int
sc_index(int slot, int f)
{
	return slot * FH + (f ^ ((slot / CPL) & 31));
}

// One (model part, frame): the log-sum-exp or maximum of its k component scores,
// c0.. in shared memory. With KU >= k the scores are held in registers (read once);
// KU = 0 is the general loop for any k.
template <int MODE, int KU, int CPL>
__device__ __forceinline__ float
reduce_part(const float *sc, int c0, int k, int f)
{
	if constexpr (KU == 0) {
		float m = sc[sc_index<CPL>(c0, f)];
		for (int c = 1; c < k; c++)
			m = fmaxf(m, sc[sc_index<CPL>(c0 + c, f)]);
		if (MODE == GMM_MAX)
			return m;
		float s = 0.0f;
		for (int c = 0; c < k; c++)
			s += __expf(sc[sc_index<CPL>(c0 + c, f)] - m);
		return gmm_lse_finish(m, s);
	} else {
		float v[KU];
#pragma unroll
		for (int c = 0; c < KU; c++)
			v[c] = c < k ? sc[sc_index<CPL>(c0 + c, f)] : -INFINITY;
		float m = v[0];
#pragma unroll
		for (int c = 1; c < KU; c++)
			m = fmaxf(m, v[c]);
		if (MODE == GMM_MAX)
			return m;
		float s = 0.0f;
#pragma unroll
		for (int c = 0; c < KU; c++)
			s += __expf(v[c] - m);	// the padding's -inf adds exactly 0
		return gmm_lse_finish(m, s);
	}
}

// Each block: NT x CPL slots, nsub tiles of FR frames; each thread CPL slots x FR
// frames of sums in registers.
template <int MODE, int FR, int CPL>
__global__ void __launch_bounds__(NT, 2)
score_kernel(const float4 *__restrict__ P, const float *__restrict__ G,
    const float4 *__restrict__ X, int n, int dc, int nslots, int nsub,
    const int *__restrict__ blk_part0, const int *__restrict__ part_slot,
    const int *__restrict__ part_k, int npart, float *__restrict__ out)
{
	constexpr int SL = NT * CPL;
	extern __shared__ float4 smem[];
	float4 *xs = smem;					// FR x dc
	float *sc = reinterpret_cast<float *>(xs + FR * dc);	// SL x FH, swizzled

	const int t = threadIdx.x;
	const int blk = blockIdx.y;
	const int q0 = blk * SL + CPL * t;
	float g[CPL];
#pragma unroll
	for (int j = 0; j < CPL; j++)
		g[j] = G[q0 + j];
	const int p_begin = blk_part0[blk], np = blk_part0[blk + 1] - p_begin;
	const float4 *pp = P + (size_t)q0 * 2;	// slot q0 + j: pp[2j] is s, pp[2j + 1] is -mu s
	const size_t pstride = (size_t)nslots * 2;

	for (int sub = 0; sub < nsub; sub++) {
		const int f0 = (blockIdx.x * nsub + sub) * FR;
		if (f0 >= n)
			break;
		const int nf = min(FR, n - f0);
		__syncthreads();	// the last tile's readers of xs and sc are done
		for (int i = t; i < FR * dc; i += NT) {
			const int f = i / dc;
			xs[i] = f < nf ? X[(size_t)(f0 + f) * dc + (i - f * dc)] : make_float4(0, 0, 0, 0);
		}
		__syncthreads();

		float acc[CPL][FR];
#pragma unroll
		for (int j = 0; j < CPL; j++)
#pragma unroll
			for (int f = 0; f < FR; f++)
				acc[j][f] = 0.0f;
		float4 ps[CPL], pn[CPL];
#pragma unroll
		for (int j = 0; j < CPL; j++) {
			ps[j] = __ldg(pp + 2 * j);
			pn[j] = __ldg(pp + 2 * j + 1);
		}
		for (int k = 0; k < dc; k++) {
			// The next group's parameters are loaded while this one computes.
			const float4 *q = pp + (size_t)min(k + 1, dc - 1) * pstride;
			float4 qs[CPL], qn[CPL];
#pragma unroll
			for (int j = 0; j < CPL; j++) {
				qs[j] = __ldg(q + 2 * j);
				qn[j] = __ldg(q + 2 * j + 1);
			}
#pragma unroll
			for (int f = 0; f < FR; f++) {
				const float4 x = xs[f * dc + k];
#pragma unroll
				for (int j = 0; j < CPL; j++) {
					float a = acc[j][f];
					a = gmm_term(x.x, ps[j].x, pn[j].x, a);
					a = gmm_term(x.y, ps[j].y, pn[j].y, a);
					a = gmm_term(x.z, ps[j].z, pn[j].z, a);
					a = gmm_term(x.w, ps[j].w, pn[j].w, a);
					acc[j][f] = a;
				}
			}
#pragma unroll
			for (int j = 0; j < CPL; j++) {
				ps[j] = qs[j];
				pn[j] = qn[j];
			}
		}

		// Components to models, FH frames at a time, through shared memory.
#pragma unroll
		for (int h = 0; h < FR / FH; h++) {
			if (h > 0)
				__syncthreads();	// the last pass's readers of sc are done
#pragma unroll
			for (int f = 0; f < FH; f++)
#pragma unroll
				for (int j = 0; j < CPL; j++)
					sc[sc_index<CPL>(CPL * t + j, f)] = g[j] - acc[j][h * FH + f];
			__syncthreads();
			const int fb = f0 + h * FH;
			const int nfh = min(FH, n - fb);
			for (int i = t; i < np * FH; i += NT) {
				const int pl = i / FH, f = i - pl * FH;
				if (f >= nfh)
					continue;
				const int p = p_begin + pl;
				const int k = part_k[p], c0 = part_slot[p] - blk * SL;
				// A warp's 32 lanes are one part's 32 frames: k is the same for all.
				const float r = k <= 8 ? reduce_part<MODE, 8, CPL>(sc, c0, k, f) :
				    k <= 16 ? reduce_part<MODE, 16, CPL>(sc, c0, k, f) :
				    k <= 32 ? reduce_part<MODE, 32, CPL>(sc, c0, k, f) :
				    reduce_part<MODE, 0, CPL>(sc, c0, k, f);
				out[(size_t)(fb + f) * npart + p] = r;
			}
		}
	}
}

// Models split into several parts: their score from the parts' scores.
template <int MODE>
__global__ void
combine_kernel(const float *__restrict__ part, int n, int npart,
    const int *__restrict__ model_part0, int nmodels, float *__restrict__ out)
{
	const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t)n * nmodels)
		return;
	const size_t f = i / nmodels;
	const int m = (int)(i - f * nmodels);
	const float *v = part + f * npart;
	const int p0 = model_part0[m], p1 = model_part0[m + 1];
	float mx = v[p0];
	for (int p = p0 + 1; p < p1; p++)
		mx = fmaxf(mx, v[p]);
	float r = mx;
	if (MODE == GMM_SUM) {
		float s = 0.0f;
		for (int p = p0; p < p1; p++)
			s += __expf(v[p] - mx);
		r = gmm_lse_finish(mx, s);
	}
	out[i] = r;
}

template <int KMAX>
__global__ void __launch_bounds__(TOP_WARPS * 32)
top_kernel(const float *__restrict__ S, int n, int nmodels, int k, uint32_t *__restrict__ idx,
    float *__restrict__ val)
{
	const int lane = threadIdx.x & 31;
	const int f = blockIdx.x * TOP_WARPS + threadIdx.x / 32;
	if (f >= n)
		return;
	const float *row = S + (size_t)f * nmodels;
	unsigned long long best[KMAX];
#pragma unroll
	for (int j = 0; j < KMAX; j++)
		best[j] = 0;	// below every real key
	for (int m = lane; m < nmodels; m += 32) {
		unsigned long long key = gmm_key(row[m], (uint32_t)m);
		if (key > best[KMAX - 1]) {
#pragma unroll
			for (int j = 0; j < KMAX; j++) {
				if (key > best[j]) {
					const unsigned long long tmp = best[j];
					best[j] = key;
					key = tmp;
				}
			}
		}
	}
	for (int j = 0; j < k; j++) {
		const unsigned long long h = best[0];
		unsigned long long w = h;
#pragma unroll
		for (int o = 16; o > 0; o >>= 1) {
			const unsigned long long other = __shfl_xor_sync(0xffffffffu, w, o);
			w = other > w ? other : w;
		}
		if (lane == 0) {
			const uint32_t m = gmm_key_model(w);
			idx[(size_t)f * k + j] = m;
			val[(size_t)f * k + j] = row[m];
		}
		if (h == w) {
#pragma unroll
			for (int i = 0; i + 1 < KMAX; i++)
				best[i] = best[i + 1];
			best[KMAX - 1] = 0;
		}
	}
}

}  // namespace

typedef void (*score_fn)(const float4 *, const float *, const float4 *, int, int, int, int,
    const int *, const int *, const int *, int, float *);

// The kernel of a tile shape: CPL 4 x FR 32 or CPL 2 x FR 64.
static score_fn
score_kernel_for(enum gmm_mode mode, int cpl)
{
	if (cpl == 4)
		return mode == GMM_SUM ? score_kernel<GMM_SUM, 32, 4> : score_kernel<GMM_MAX, 32, 4>;
	return mode == GMM_SUM ? score_kernel<GMM_SUM, 64, 2> : score_kernel<GMM_MAX, 64, 2>;
}

struct gmm_gpu {
	enum gmm_mode mode;
	size_t top, nmodels, npart, nblocks, nslots, chunk;
	int dc, cpl, fr, nsub;
	score_fn kernel;
	size_t smem;
	float4 *P;
	float *G;
	int *blk_part0, *part_slot, *part_k, *model_part0;
	float4 *X;
	float *part, *S;
	uint32_t *tidx;
	float *tval;
	struct gmm_tc *tc;	/* the tensor-core path, where it takes the run */
	cudaStream_t st;
	cudaEvent_t ev[GMM_GPU_SLOTS][4];
	size_t pending[GMM_GPU_SLOTS];
};

template <typename T>
static T *
dev_alloc(size_t n)
{
	void *p = NULL;
	if (n == 0)
		n = 1;
	CUDA_CHECK(cudaMalloc(&p, mul_size(n, sizeof(T), "device buffer")));
	return static_cast<T *>(p);
}

extern "C" struct gmm_gpu *
gmm_gpu_init(const struct gmm_params *p, enum gmm_mode mode, size_t top, size_t chunk,
    size_t max_mem, int dev, const struct gmmscore_tune *tune, const struct gmm_layout *pre)
{
	struct gmm_gpu *g = static_cast<struct gmm_gpu *>(xcalloc(1, sizeof *g));
	const size_t nm = p->nmodels;
	double t0 = now_sec();

	CUDA_CHECK(cudaSetDevice(dev));
	if (top > GMM_GPU_TOPMAX)
		die("gmm_gpu_init: top %zu (at most %d)", top, GMM_GPU_TOPMAX);
	g->mode = mode;
	g->top = top;
	g->nmodels = nm;
	// Tile shape: CPL slots x FR frames a thread, NSUB tiles a block, from the tuning
	// table or GMMSCORE_TILE.
	gmm_tile_pick(tune, &g->cpl, &g->nsub);
	g->fr = g->cpl == 4 ? 32 : 64;
	g->kernel = score_kernel_for(mode, g->cpl);
	const size_t slots = (size_t)NT * (size_t)g->cpl;
	g->dc = p->dp / GMM_DVEC;
	if (g->dc > MAX_DC)
		die("the GPU path takes at most %d dimensions (these models use %d); use -d cpu",
		    MAX_DC * GMM_DVEC, p->dims);

	// The layout made while CUDA started, when it was made for this tile shape.
	struct gmm_layout own = {};
	if (pre == NULL || pre->slots != slots)
		gmm_layout_make(p, slots, &own);
	const struct gmm_layout &l = own.slots != 0 ? own : *pre;
	const size_t npart = l.npart, dc = (size_t)g->dc, nslots = l.nslots;
	g->npart = npart;
	g->nblocks = l.nblocks;
	g->nslots = nslots;
	if (g->nblocks > 65535 || nslots > (size_t)INT32_MAX / 2)
		die("too many Gaussians for the GPU path (%zu); use -d cpu", p->ncomp);
	const int tc = gmm_tc_wanted(p, top, npart);
	const size_t pbytes = nslots * dc * 2 * sizeof(float4) + nslots * sizeof(float) +
	    (g->nblocks + 1 + 2 * npart + nm + 1) * sizeof(int) + (tc ? gmm_tc_model_bytes(p) : 0);

	// Frames a call: what the memory left after the parameters holds.
	size_t mem_free = 0, mem_total = 0;
	CUDA_CHECK(cudaMemGetInfo(&mem_free, &mem_total));
	size_t budget = max_mem ? max_mem :
	    mem_free > ((size_t)1 << 30) ? mem_free - ((size_t)1 << 29) : mem_free / 2;
	const int split = npart > nm;
	const size_t per_frame = dc * sizeof(float4) + npart * sizeof(float) +
	    (split ? nm * sizeof(float) : 0) + (top ? top * (sizeof(uint32_t) + sizeof(float)) : 0) +
	    (tc ? gmm_tc_frame_bytes(p) : 0);
	if (budget <= pbytes || (budget - pbytes) / per_frame < 1)
		die("device memory: the models need %zu bytes and a frame %zu more; the limit is %zu "
		    "(--max-device-mem)", pbytes, per_frame, budget);
	// What memory allows, rounded down to whole frame tiles; then what was asked for.
	size_t fit = (budget - pbytes) / per_frame;
	const size_t ftile = (size_t)g->fr * (size_t)g->nsub;
	if (fit > ftile)
		fit -= fit % ftile;
	g->chunk = MIN(MIN(chunk, fit), (size_t)INT32_MAX / 2);

	g->P = dev_alloc<float4>(nslots * dc * 2);
	g->G = dev_alloc<float>(nslots);
	g->blk_part0 = dev_alloc<int>(g->nblocks + 1);
	g->part_slot = dev_alloc<int>(npart);
	g->part_k = dev_alloc<int>(npart);
	g->model_part0 = dev_alloc<int>(nm + 1);
	g->X = dev_alloc<float4>(g->chunk * dc);
	g->part = dev_alloc<float>(g->chunk * npart);
	g->S = split ? dev_alloc<float>(g->chunk * nm) : g->part;
	if (top) {
		g->tidx = dev_alloc<uint32_t>(g->chunk * top);
		g->tval = dev_alloc<float>(g->chunk * top);
	}
	CUDA_CHECK(cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking));
	for (int s = 0; s < GMM_GPU_SLOTS; s++)
		for (int e = 0; e < 4; e++)
			CUDA_CHECK(cudaEventCreate(&g->ev[s][e]));
	CUDA_CHECK(cudaMemcpy(g->P, l.P, nslots * dc * 2 * sizeof(float4), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->G, l.G, nslots * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->blk_part0, l.blk_part0, (g->nblocks + 1) * sizeof(int),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->part_slot, l.part_slot, npart * sizeof(int),
	    cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->part_k, l.part_k, npart * sizeof(int), cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(g->model_part0, l.model_part0, (nm + 1) * sizeof(int),
	    cudaMemcpyHostToDevice));
	gmm_layout_free(&own);
	if (tc)
		g->tc = gmm_tc_open(p, mode, top, g->chunk);

	g->smem = (size_t)g->fr * dc * sizeof(float4) + slots * FH * sizeof(float);
	CUDA_CHECK(cudaFuncSetAttribute(g->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
	    (int)g->smem));
	phase_add("model upload", now_sec() - t0);
	vlog("gpu: %zu blocks of %zu Gaussian slots (%zu parts), %d slots x %d frames a thread, "
	    "%d tiles a block, %zu frames a call, parameters %.1f MB (%zu bytes, %zu bytes a "
	    "frame)", g->nblocks, slots, npart, g->cpl, g->fr, g->nsub, g->chunk, pbytes / 1e6,
	    pbytes, per_frame);
	return g;
}

extern "C" size_t
gmm_gpu_chunk(const struct gmm_gpu *g)
{
	return g->chunk;
}

/* The float32 path's kernels for n frames of g->X: the part scores, the models'
 * combined where they are split, the top N where asked. */
static void
score_f32(struct gmm_gpu *g, size_t n)
{
	const int nn = (int)n, nm = (int)g->nmodels, np = (int)g->npart;

	dim3 grid((unsigned)CEIL_DIV(n, (size_t)g->fr * (size_t)g->nsub), (unsigned)g->nblocks);
	g->kernel<<<grid, NT, g->smem, g->st>>>(g->P, g->G, g->X, nn, g->dc, (int)g->nslots, g->nsub,
	    g->blk_part0, g->part_slot, g->part_k, np, g->part);
	CUDA_LAUNCH_CHECK();
	if (g->S != g->part) {
		const size_t total = n * g->nmodels;
		const unsigned blocks = (unsigned)CEIL_DIV(total, (size_t)256);
		if (g->mode == GMM_SUM)
			combine_kernel<GMM_SUM><<<blocks, 256, 0, g->st>>>(g->part, nn, np,
			    g->model_part0, nm, g->S);
		else
			combine_kernel<GMM_MAX><<<blocks, 256, 0, g->st>>>(g->part, nn, np,
			    g->model_part0, nm, g->S);
		CUDA_LAUNCH_CHECK();
	}
	if (g->top) {
		const unsigned blocks = (unsigned)CEIL_DIV(n, (size_t)TOP_WARPS);
		const int k = (int)g->top;
		if (k == 1)
			top_kernel<1><<<blocks, TOP_WARPS * 32, 0, g->st>>>(g->S, nn, nm, k, g->tidx,
			    g->tval);
		else if (k <= 8)
			top_kernel<8><<<blocks, TOP_WARPS * 32, 0, g->st>>>(g->S, nn, nm, k, g->tidx,
			    g->tval);
		else
			top_kernel<32><<<blocks, TOP_WARPS * 32, 0, g->st>>>(g->S, nn, nm, k, g->tidx,
			    g->tval);
		CUDA_LAUNCH_CHECK();
	}
}

extern "C" void
gmm_gpu_submit(struct gmm_gpu *g, int slot, const float *x, size_t n, uint32_t *idx,
    float *val)
{
	cudaEvent_t *ev = g->ev[slot];
	const int nn = (int)n;

	if (n == 0 || n > g->chunk)
		die("gmm_gpu_submit: %zu frames (chunk %zu)", n, g->chunk);
	CUDA_CHECK(cudaEventRecord(ev[0], g->st));
	CUDA_CHECK(cudaMemcpyAsync(g->X, x, n * g->dc * sizeof(float4), cudaMemcpyHostToDevice,
	    g->st));
	CUDA_CHECK(cudaEventRecord(ev[1], g->st));
	if (g->tc != NULL)	// the fast scores' lower ends into part (unsplit); top N
		gmm_tc_run(g->tc, g->X, nn, g->P, g->G, g->part_slot, g->part_k, (int)g->nslots,
		    g->part, g->tidx, g->tval, g->st);
	else
		score_f32(g, n);
	CUDA_CHECK(cudaEventRecord(ev[2], g->st));
	if (g->top) {
		CUDA_CHECK(cudaMemcpyAsync(idx, g->tidx, n * g->top * sizeof(uint32_t),
		    cudaMemcpyDeviceToHost, g->st));
		CUDA_CHECK(cudaMemcpyAsync(val, g->tval, n * g->top * sizeof(float),
		    cudaMemcpyDeviceToHost, g->st));
	} else {
		CUDA_CHECK(cudaMemcpyAsync(val, g->S, n * g->nmodels * sizeof(float),
		    cudaMemcpyDeviceToHost, g->st));
	}
	CUDA_CHECK(cudaEventRecord(ev[3], g->st));
	g->pending[slot] = n;
}

extern "C" void
gmm_gpu_wait(struct gmm_gpu *g, int slot)
{
	cudaEvent_t *ev = g->ev[slot];
	float ms[3];

	if (g->pending[slot] == 0)
		return;
	CUDA_CHECK(cudaEventSynchronize(ev[3]));
	for (int i = 0; i < 3; i++)
		CUDA_CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
	phase_add(PH_H2D, ms[0] / 1e3);
	phase_add("device compute", ms[1] / 1e3);
	phase_add(PH_D2H, ms[2] / 1e3);
	g->pending[slot] = 0;
}

extern "C" void
gmm_gpu_report(const struct gmm_gpu *g)
{
	if (g != NULL)
		gmm_tc_report(g->tc);
}

extern "C" void
gmm_gpu_free(struct gmm_gpu *g)
{
	if (g == NULL)
		return;
	gmm_tc_close(g->tc);
	for (int s = 0; s < GMM_GPU_SLOTS; s++)
		for (int e = 0; e < 4; e++)
			CUDA_CHECK(cudaEventDestroy(g->ev[s][e]));
	CUDA_CHECK(cudaStreamDestroy(g->st));
	if (g->S != g->part)
		CUDA_CHECK(cudaFree(g->S));
	void *bufs[] = {g->P, g->G, g->blk_part0, g->part_slot, g->part_k, g->model_part0, g->X,
	    g->part, g->tidx, g->tval};
	for (void *b : bufs)
		if (b != NULL)
			CUDA_CHECK(cudaFree(b));
	free(g);
}
