/* editdist4r.cu: the CUDA path of editdist4r.
 *
 * Three kernels, chosen per pair by its size (all in one stream, one batch at a time):
 *   - fr_tp / bp_tp: a thread per pair, for pairs whose shorter side is at most
 *     TP_SHORT bytes, so that a million short pairs fill the GPU. fr_tp keeps the
 *     shorter string and the row of h vectors in shared memory (one column per thread)
 *     and the Four-Russians table in shared memory (t <= 2) or L2 (t = 3); bp_tp keeps
 *     the shorter string as bit planes in registers.
 *   - wf: the anti-diagonal wavefront (the paper's Fig. 4) in one persistent launch.
 *     A thread owns a strip of rows (t rows for Four-Russians, 32 for bit-parallel) and
 *     at step s computes chunk s - r of its strip, taking the h vector of the strip
 *     above from shared memory; a job is a block's run over THREADS consecutive strips,
 *     jobs are taken in order from a ticket, and consecutive jobs of a pair hand their
 *     boundary row over through global memory every WF_G steps (a slot per job, reused
 *     once its reader has released it), so one launch covers a whole batch of long or
 *     medium pairs and never waits on a job that has not started.
 * The Four-Russians table is built on the GPU (fr_build). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "cudadev.h"
#include "editdist4r.h"
#include "err.h"
#include "timer.h"

namespace {

constexpr int TPT = 128;		/* threads of a thread-per-pair block */
constexpr int TP_SHORT = 256;		/* thread per pair when the shorter side fits this */
constexpr int TP_LONG = 1 << 16;	/* ... and the longer this */
constexpr int WF_G = 32;		/* wavefront steps between handoffs */

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

__device__ __forceinline__ unsigned long long
ld_acquire64(const unsigned long long *p)
{
	unsigned long long v;
	asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void
st_release64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned
ld_acquire32(const unsigned *p)
{
	unsigned v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void
st_release32(unsigned *p, unsigned v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* A wait on another block of the launch: with every block resident and jobs taken in
 * order it always ends; should it not, trap (a launch failure) instead of hanging. */
__device__ __forceinline__ unsigned long long
globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

#define WAIT_UNTIL(cond)                                                          \
	do {                                                                      \
		unsigned long long t0_ = globaltimer();                           \
		while (!(cond)) {                                                 \
			__nanosleep(64);                                          \
			if (globaltimer() - t0_ > 10000000000ull)                 \
				__trap();                                         \
		}                                                                 \
	} while (0)

/* ---- the Four-Russians table ---- */

__global__ void
fr_build(uint16_t *tab, int t, uint32_t len)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= len)
		return;
	uint32_t P = fr_pow3(t), tt = (uint32_t)(t * t), hv = k >> tt;
	tab[k] = (uint16_t)fr_cells(hv / P, hv % P, k & ((1u << tt) - 1), t, t);
}

/* ---- thread per pair: Four-Russians ---- */

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

/* Rows: the longer string, read from global memory t bytes a strip. Columns: the
 * shorter, in shared memory as sb[j][thread], with the h vector of each chunk of the
 * row above in sh[c][thread]. */
template <int T>
__global__ void __launch_bounds__(TPT)
fr_tp(const uint8_t *__restrict__ pool, const gpair *__restrict__ pairs, int np,
    const uint16_t *__restrict__ gtab, int nmax, long long K, int32_t *__restrict__ dist)
{
	extern __shared__ __align__(16) uint8_t smem[];
	constexpr uint32_t P = pow3c(T), TT = T * T;
	constexpr uint32_t TLEN = T <= 2 ? (P * P) << TT : 0;
	uint16_t *stab = (uint16_t *)smem;
	uint8_t *sb = smem + ((TLEN * 2 + 15) & ~15u);
	uint8_t *sh = sb + (size_t)nmax * TPT;
	const int tid = threadIdx.x;

	for (uint32_t i = tid; T <= 2 && i < TLEN; i += TPT)
		stab[i] = gtab[i];
	__syncthreads();
	const uint16_t *tab = T <= 2 ? stab : gtab;
	int p = blockIdx.x * TPT + tid;
	if (p >= np)
		return;
	const gpair q = pairs[p];
	const uint8_t *A = pool + q.aoff, *B = pool + q.boff;
	const int m = (int)q.alen, n = (int)q.blen, nst = (m + T - 1) / T, nfull = n / T;
	for (int j = 0; j < n; j++)
		sb[j * TPT + tid] = B[j];

	struct ed_band bd;
	ed_band_make(m, n, K, &bd);
	int64_t clo, chi, nclo, nchi;
	int prev_chi = -1, corner = 0, score = 0;
	ed_band_chunks(&bd, 0, min(T, m), n, T, &clo, &chi);
	for (int r = 0; r < nst; r++) {
		int i0 = r * T, i1 = min(i0 + T, m), R = i1 - i0, ncorner = 0;
		nclo = chi + 1;
		nchi = chi;
		if (i1 < m)
			ed_band_chunks(&bd, i1, min(i1 + T, m), n, T, &nclo, &nchi);
		for (int c = prev_chi + 1; c <= (int)chi; c++)
			sh[c * TPT + tid] = (uint8_t)fr_allplus(min(T, n - c * T));
		uint32_t a[T];
#pragma unroll
		for (int y = 0; y < T; y++)
			a[y] = y < R ? A[i0 + y] : 0x100u;
		uint32_t v = fr_allplus(R);
		score = corner + R;
		int cf = R == T ? min((int)chi, nfull - 1) : (int)clo - 1;
		for (int c = (int)clo; c <= cf; c++) {
			if (c == (int)nclo)
				ncorner = score;
			uint32_t match = 0;
#pragma unroll
			for (int x = 0; x < T; x++)
				match |= fr_match<T>(a, sb[(c * T + x) * TPT + tid], x, T);
			uint32_t e = tab[((sh[c * TPT + tid] * P + v) << TT) | match];
			sh[c * TPT + tid] = (uint8_t)FR_HOUT(e);
			v = FR_VOUT(e);
			score += FR_HSUM(e) - T;
		}
		for (int c = max((int)clo, cf + 1); c <= (int)chi; c++) {
			if (c == (int)nclo)
				ncorner = score;
			int X = min(T, n - c * T);
			uint32_t match = 0;
			for (int x = 0; x < X; x++)
				match |= fr_match<T>(a, sb[(c * T + x) * TPT + tid], x, R);
			uint32_t e = fr_cells(sh[c * TPT + tid], v, match, R, X);
			sh[c * TPT + tid] = (uint8_t)FR_HOUT(e);
			v = FR_VOUT(e);
			score += FR_HSUM(e) - X;
		}
		if (nclo > chi)
			ncorner = score;
		corner = ncorner;
		prev_chi = (int)chi;
		clo = nclo;
		chi = nchi;
	}
	dist[q.out] = K >= 0 && score > K ? -1 : score;
}

/* ---- thread per pair: bit-parallel ---- */

/* Rows: the shorter string, 32(NW-1) < m <= 32 NW, as bit planes in registers (only
 * the bits that vary among its bytes; a byte that differs from all of them in a
 * constant bit matches nowhere). Columns: the longer, 16 bytes a load. */
template <int NW>
__global__ void __launch_bounds__(TPT)
bp_tp(const uint8_t *__restrict__ pool, const gpair *__restrict__ pairs, int np, long long K,
    int32_t *__restrict__ dist)
{
	int p = blockIdx.x * TPT + threadIdx.x;
	if (p >= np)
		return;
	const gpair q = pairs[p];
	const uint8_t *A = pool + q.aoff;
	const uint4 *B = (const uint4 *)(pool + q.boff);
	const int m = (int)q.alen, n = (int)q.blen, ob = (m - 1) & 31;
	uint32_t plane[8][NW], pv[NW], mv[NW], orv = 0, andv = 0xff;

#pragma unroll
	for (int w = 0; w < NW; w++) {
#pragma unroll
		for (int b = 0; b < 8; b++)
			plane[b][w] = 0;
		for (int y = 0; y < 32 && w * 32 + y < m; y++) {
			uint32_t c = A[w * 32 + y];
			orv |= c;
			andv &= c;
#pragma unroll
			for (int b = 0; b < 8; b++)
				plane[b][w] |= ((c >> b) & 1u) << y;
		}
		pv[w] = ~0u;
		mv[w] = 0;
	}
	const uint32_t vary = orv ^ andv, fixmask = ~vary & 0xffu, fixval = andv & fixmask;
	int score = m;

	for (int j0 = 0; j0 < n; j0 += 16) {
		uint4 v4 = B[j0 >> 4];
		uint32_t wv[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
		for (int k = 0; k < 16; k++) {
			if (j0 + k >= n)
				break;
			uint32_t c = (wv[k >> 2] >> ((k & 3) * 8)) & 0xffu;
			uint32_t eq[NW];
			uint32_t none = (c & fixmask) != fixval ? 0u : ~0u;
#pragma unroll
			for (int w = 0; w < NW; w++)
				eq[w] = none;
#pragma unroll
			for (int b = 0; b < 8; b++) {
				if (vary & (1u << b)) {
					uint32_t kb = ((c >> b) & 1u) - 1u;	/* 0 where the bit is set */
#pragma unroll
					for (int w = 0; w < NW; w++)
						eq[w] &= plane[b][w] ^ kb;
				}
			}
			uint32_t hp = 1, hm = 0;
#pragma unroll
			for (int w = 0; w < NW; w++) {
				uint32_t ph, mh;
				ed_bp_step32(&pv[w], &mv[w], eq[w], hp, hm, &ph, &mh);
				if (w < NW - 1) {
					hp = ph >> 31;
					hm = mh >> 31;
				} else {
					score += (int)((ph >> ob) & 1u) - (int)((mh >> ob) & 1u);
				}
			}
		}
	}
	dist[q.out] = K >= 0 && score > K ? -1 : score;
}

/* ---- the wavefront over strips ---- */

struct wfargs {
	const uint8_t *pool;
	const gpair *pairs;
	const wjob *jobs;
	int njobs;
	int32_t *dist;
	long long K;
	const uint16_t *tab;
	uint8_t *slots;			/* ns slots of stride bytes: a job's bottom row */
	size_t stride;
	int ns;
	unsigned long long *flag;	/* per slot: (writer job + 1) << 32 | chunks out */
	unsigned *freed;		/* per slot: reader job, once it has read all */
	unsigned *cflag;		/* per slot: writer job + 1, once corner is set */
	int *corner;			/* per slot: D at the next strip's first column */
	int *ticket;
	unsigned long long *clk;	/* block 0's cycles and nanoseconds (-v), its start */
};

/* Four-Russians strips of T rows; a chunk is one t-block. */
template <int T>
struct FrEng {
	static constexpr int S = T, W = T, THREADS = 256;
	static constexpr uint32_t P = pow3c(T), TT = T * T;
	static constexpr size_t SMEM = T <= 2 ? ((size_t)(P * P) << TT) * 2 : 0;
	typedef uint8_t H;

	const uint16_t *tab;
	uint32_t a[T], v;
	int R;

	__device__ static H top(int X) { return (H)fr_allplus(X); }

	/* Once a launch: the table into shared memory. */
	__device__ static void
	prologue(uint8_t *esm, const uint16_t *gtab)
	{
		if constexpr (SMEM > 0)
			for (size_t i = threadIdx.x; i < SMEM / 2; i += THREADS)
				((uint16_t *)esm)[i] = gtab[i];
	}

	__device__ void
	init(const uint8_t *A, int i0, int R_, uint8_t *esm, const uint16_t *gtab)
	{
		tab = T <= 2 ? (const uint16_t *)esm : gtab;
		R = R_;
#pragma unroll
		for (int y = 0; y < T; y++)
			a[y] = y < R ? A[i0 + y] : 0x100u;
	}

	__device__ void left() { v = fr_allplus(R); }

	__device__ int
	step(const uint8_t *bc, int X, H &h)
	{
		uint32_t match = 0, e;
		if (R == T && X == T) {
#pragma unroll
			for (int x = 0; x < T; x++)
				match |= fr_match<T>(a, bc[x], x, T);
			e = tab[((h * P + v) << TT) | match];
		} else {
			for (int x = 0; x < X; x++)
				match |= fr_match<T>(a, bc[x], x, R);
			e = fr_cells(h, v, match, R, X);
		}
		h = (H)FR_HOUT(e);
		v = FR_VOUT(e);
		return FR_HSUM(e) - X;
	}
};

/* Bit-parallel strips of 32 rows; a chunk is 32 columns, its h values two bit masks. */
struct BpEng {
	static constexpr int S = 32, W = 32, THREADS = 64;
	static constexpr size_t SMEM = 256 * THREADS * 4;	/* Peq[byte][thread] */
	typedef uint2 H;

	uint32_t *peq, pv, mv;
	int ob;

	__device__ static H top(int) { return make_uint2(~0u, 0u); }
	__device__ static void prologue(uint8_t *, const uint16_t *) {}

	__device__ void
	init(const uint8_t *A, int i0, int R, uint8_t *esm, const uint16_t *)
	{
		peq = (uint32_t *)esm + threadIdx.x;
		for (int c = 0; c < 256; c++)
			peq[c * THREADS] = 0;
		for (int y = 0; y < R; y++)
			peq[A[i0 + y] * THREADS] |= 1u << y;
		ob = R - 1;
	}

	__device__ void
	left()
	{
		pv = ~0u;
		mv = 0;
	}

	__device__ __forceinline__ void
	col(uint32_t c, int x, uint32_t ip, uint32_t im, uint32_t &op, uint32_t &om)
	{
		uint32_t ph, mh;
		ed_bp_step32(&pv, &mv, peq[c * THREADS], (ip >> x) & 1u, (im >> x) & 1u, &ph, &mh);
		op |= ((ph >> ob) & 1u) << x;
		om |= ((mh >> ob) & 1u) << x;
	}

	__device__ int
	step(const uint8_t *bc, int X, H &h)
	{
		uint32_t op = 0, om = 0;
		if (X == 32) {
			const uint4 *b4 = (const uint4 *)bc;
#pragma unroll
			for (int k = 0; k < 2; k++) {
				uint4 v4 = b4[k];
				uint32_t wv[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
				for (int x = 0; x < 16; x++)
					col((wv[x >> 2] >> ((x & 3) * 8)) & 0xffu, k * 16 + x, h.x, h.y, op, om);
			}
		} else {
			for (int x = 0; x < X; x++)
				col(bc[x], x, h.x, h.y, op, om);
		}
		h = make_uint2(op, om);
		return __popc(op) - __popc(om);
	}
};

template <class E>
__host__ __device__ constexpr size_t
wf_off(int part)
{
	/* esm, hbuf, inbuf, outbuf, s_chi, s_corner, sB, end: each 16-byte aligned */
	size_t sizes[7] = {E::SMEM, 2 * E::THREADS * sizeof(typename E::H), WF_G * sizeof(typename E::H),
	    WF_G * sizeof(typename E::H), E::THREADS * sizeof(int), E::THREADS * sizeof(int),
	    (size_t)(WF_G + E::THREADS) * E::W};
	size_t off = 0;
	for (int i = 0; i <= part; i++)
		off += (sizes[i] + 15) & ~(size_t)15;
	return off;
}

template <class E>
__global__ void __launch_bounds__(E::THREADS)
wf(wfargs g)
{
	constexpr int NT = E::THREADS, S = E::S, W = E::W;
	typedef typename E::H H;
	extern __shared__ __align__(16) uint8_t smem[];
	uint8_t *esm = smem;
	H *hbuf = (H *)(smem + wf_off<E>(0));		/* [2][NT] */
	H *inbuf = (H *)(smem + wf_off<E>(1));		/* [WF_G] */
	H *outbuf = (H *)(smem + wf_off<E>(2));		/* [WF_G] */
	int *s_chi = (int *)(smem + wf_off<E>(3));	/* [NT] */
	int *s_corner = (int *)(smem + wf_off<E>(4));	/* [NT] */
	uint8_t *sB = smem + wf_off<E>(5);		/* [(WF_G + NT) * W] */
	__shared__ int s_job, s_cin, s_cout, s_cset;
	const int tid = threadIdx.x, lane = tid & 31, r = tid;

	if (blockIdx.x == 0 && tid == 0) {
		g.clk[2] = clock64();
		g.clk[3] = globaltimer();
	}
	E::prologue(esm, g.tab);
	for (;;) {
		if (tid == 0) {
			s_job = atomicAdd(g.ticket, 1);
			s_cset = 0;
		}
		__syncthreads();
		const int j = s_job;
		if (j >= g.njobs)
			break;
		const wjob jb = g.jobs[j];
		const gpair q = g.pairs[jb.pair];
		const int m = (int)q.alen, n = (int)q.blen;
		const int nstrips = (m + S - 1) / S, nch = (n + W - 1) / W;
		const int first = (int)jb.group * NT, nst = min(NT, nstrips - first);
		const bool has_pred = jb.group > 0, has_succ = first + nst < nstrips;
		const bool banded = g.K >= 0;
		const uint8_t *Bg = g.pool + q.boff;
		struct ed_band bd;
		ed_band_make(m, n, g.K, &bd);

		const int i0 = (first + r) * S, i1 = min(i0 + S, m), R = i1 - i0;
		int64_t lclo = 0, lchi = -1, lnclo = 0, lnchi = 0;
		E eng;
		if (r < nst) {
			ed_band_chunks(&bd, i0, i1, n, W, &lclo, &lchi);
			if (i1 < m)
				ed_band_chunks(&bd, i1, min(i1 + S, m), n, W, &lnclo, &lnchi);
			else
				lnclo = lchi + 1;
			eng.init(g.pool + q.aoff, i0, R, esm, g.tab);
			s_chi[r] = (int)lchi;
		}
		const int clo = (int)lclo, chi = (int)lchi, nclo = (int)lnclo;
		__syncthreads();
		const int chi_up = r > 0 && r < nst ? s_chi[r - 1] : -1;	/* the strip above's last chunk */
		int chi_pred = -1;
		if (has_pred) {
			int64_t pl, pc;
			ed_band_chunks(&bd, (long long)(first - 1) * S, (long long)first * S, n, W, &pl, &pc);
			chi_pred = (int)pc;
		}
		const int slot_in = (j + g.ns - 1) % g.ns, slot_out = j % g.ns;
		const H *sin = (const H *)(g.slots + (size_t)slot_in * g.stride);
		H *sout = (H *)(g.slots + (size_t)slot_out * g.stride);
		if (!has_succ && tid == 0)
			st_release32(&g.freed[slot_out], (unsigned)j + 1);	/* no reader */
		__syncthreads();
		int64_t c0l, c0h, cll, clh;
		ed_band_chunks(&bd, (long long)first * S, min((first + 1) * S, m), n, W, &c0l, &c0h);
		ed_band_chunks(&bd, (long long)(first + nst - 1) * S, min((first + nst) * S, m), n, W, &cll, &clh);
		const int s_begin = (int)c0l, s_end = (int)clh + nst - 1;
		const int need0 = min((int)c0h, chi_pred);	/* thread 0's last chunk from above */
		int corner = banded ? 0 : i0, score = 0, flushed = (int)cll;
		bool slot_ok = !has_succ || j < g.ns, cpub = false, released = !has_pred;

		for (int s0 = s_begin; s0 <= s_end; s0 += WF_G) {
			/* B's bytes for the chunks of this round, and thread 0's input. */
			const int wlo = max(0, s0 - (nst - 1)), whi = min(nch - 1, s0 + WF_G - 1);
			const int blo = wlo * W, bhi = min(n, (whi + 1) * W);
			for (int k = tid; k < bhi - blo; k += NT)
				sB[k] = Bg[blo + k];
			if (has_pred && tid < 32) {
				int lo = max(s0, (int)c0l), hi = min(s0 + WF_G - 1, need0);
				/* The corner first: the slot may be reused once it is released. */
				if (banded && s0 == s_begin && lane == 0) {
					WAIT_UNTIL(ld_acquire32(&g.cflag[slot_in]) == (unsigned)j);
					s_cin = __ldcg(&g.corner[slot_in]);
				}
				if (lo <= hi) {
					unsigned long long want = ((unsigned long long)j << 32) | (unsigned)(hi + 1);
					if (lane == 0)
						WAIT_UNTIL(ld_acquire64(&g.flag[slot_in]) >= want);
					__syncwarp();
					__threadfence();
					for (int c = lo + lane; c <= hi; c += 32)
						inbuf[c - s0] = __ldcg(&sin[c]);
					if (hi == need0) {
						__syncwarp();
						if (lane == 0)
							st_release32(&g.freed[slot_in], (unsigned)j);
						released = true;
					}
				}
			}
			__syncthreads();
			for (int s = s0; s < s0 + WF_G && s <= s_end; s++) {
				const int c = s - r;
				if (r < nst && c >= clo && c <= chi) {
					const int X = min(W, n - c * W);
					if (c == clo) {
						if (banded)
							corner = r > 0 ? s_corner[r - 1] : has_pred ? s_cin : 0;
						score = corner + R;
						eng.left();
					}
					int cout = 0;
					bool cset = false;
					if (c == clo && nclo <= clo) {
						cout = score;
						cset = true;
					}
					H h;
					if (r == 0)
						h = has_pred && c <= chi_pred ? inbuf[c - s0] : E::top(X);
					else
						h = c <= chi_up ? hbuf[((s - 1) & 1) * NT + r - 1] : E::top(X);
					score += eng.step(sB + (c * W - blo), X, h);
					if (c + 1 == nclo) {
						cout = score;
						cset = true;
					}
					if (cset) {
						if (r < nst - 1)
							s_corner[r] = cout;
						else {
							s_cout = cout;
							s_cset = 1;
						}
					}
					if (r < nst - 1) {
						hbuf[(s & 1) * NT + r] = h;
					} else {
						if (has_succ)
							outbuf[c % WF_G] = h;
						else if (c == chi)
							g.dist[q.out] = g.K >= 0 && score > g.K ? -1 : score;
					}
				}
				__syncthreads();
			}
			/* The last strip's new h vectors (and the corner) to the next job. */
			if (has_succ && tid < 32) {
				const int hi = min((int)clh, s0 + WF_G - 1 - (nst - 1));
				const bool pubc = banded && s_cset && !cpub;
				if (hi >= flushed || pubc) {
					if (!slot_ok) {
						if (lane == 0)
							WAIT_UNTIL(ld_acquire32(&g.freed[slot_out]) >=
							    (unsigned)(j - g.ns + 1));
						__syncwarp();
						slot_ok = true;
					}
					for (int c = flushed + lane; c <= hi; c += 32)
						sout[c] = outbuf[c % WF_G];
					__threadfence();
					__syncwarp();
					if (lane == 0) {
						if (pubc) {
							g.corner[slot_out] = s_cout;
							__threadfence();
							st_release32(&g.cflag[slot_out], (unsigned)j + 1);
						}
						if (hi >= flushed)
							st_release64(&g.flag[slot_out],
							    ((unsigned long long)(j + 1) << 32) | (unsigned)(hi + 1));
					}
					cpub = cpub || pubc;
					flushed = max(flushed, hi + 1);
				}
			}
		}
		if (!released && tid == 0)
			st_release32(&g.freed[slot_in], (unsigned)j);
		__syncthreads();
	}
	if (blockIdx.x == 0 && tid == 0) {
		g.clk[0] = clock64() - g.clk[2];
		g.clk[1] = globaltimer() - g.clk[3];
	}
}

template <class E>
size_t
wf_smem(void)
{
	return wf_off<E>(6);
}

} /* namespace */

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
	int32_t *dist, *hdist;
	size_t dist_cap, npairs;
	uint8_t *slots;
	size_t slots_cap;
	unsigned long long *flag;
	unsigned *freed, *cflag;
	int *corner, *ticket;
	int flags_cap;
	double kernel_ms, best_ms;
	int pending, used[3];		/* engines used: bp_tp, fr_tp, wavefront */
	int repeat;			/* $EDITDIST4R_REPEAT: kernels run again, for benchmarks */
	cudaEvent_t e_rep[2 * 16];
	unsigned long long *clk;
	int clk_pending;
	int wf_algo;
	char names[160];
};

extern "C" void *
ed_host_alloc(size_t n)
{
	void *p;
	CUDA_CHECK(cudaMallocHost(&p, n ? n : 1));
	return p;
}

extern "C" void
ed_host_free(void *p)
{
	if (p != NULL)
		CUDA_CHECK(cudaFreeHost(p));
}

/* Device buffers grow without keeping their contents; returns whether it moved. */
static int
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
static void
hgrow(void **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return;
	n = MAX(n, *cap + *cap / 2);
	void *q = ed_host_alloc(n);
	if (*p != NULL)
		memcpy(q, *p, *cap);
	ed_host_free(*p);
	*p = q;
	*cap = n;
}

static const uint16_t *
gpu_table(struct ed_gpu *g, int t)
{
	if (g->tab[t] == NULL) {
		uint32_t len = (uint32_t)fr_table_len(t);
		CUDA_CHECK(cudaMalloc(&g->tab[t], len * sizeof(uint16_t)));
		fr_build<<<CEIL_DIV(len, 256u), 256, 0, g->st>>>(g->tab[t], t, len);
		CUDA_LAUNCH_CHECK();
	}
	return g->tab[t];
}

template <class K>
static void
allow_smem(K kernel, size_t bytes)
{
	if (bytes > 48 * 1024)
		CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
		    (int)bytes));
}

extern "C" struct ed_gpu *
ed_gpu_open(const struct cuda_dev *d, const struct ed_opts *o, size_t max_device_mem)
{
	struct ed_gpu *g = (struct ed_gpu *)xcalloc(1, sizeof *g);
	g->o = *o;
	g->sms = d->sm_count;
	g->max_mem = max_device_mem;
	/* --algo auto: bit-parallel, measured faster than Four-Russians on the wavefront
	 * and a thread per pair alike (bench/editdist4r.md). */
	g->wf_algo = o->algo == ED_AUTO ? ED_BP : o->algo;
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
	return g;
}

extern "C" void
ed_gpu_close(struct ed_gpu *g)
{
	if (g == NULL)
		return;
	for (int t = 0; t <= FR_TMAX; t++)
		if (g->tab[t] != NULL)
			CUDA_CHECK(cudaFree(g->tab[t]));
	void *dev[] = {g->pool, g->pairs, g->jobs, g->dist, g->slots, g->flag, g->freed, g->cflag,
	    g->corner, g->ticket};
	for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
		if (dev[i] != NULL)
			CUDA_CHECK(cudaFree(dev[i]));
	ed_host_free(g->hpairs);
	ed_host_free(g->hjobs);
	CUDA_CHECK(cudaEventDestroy(g->e_h2d));
	CUDA_CHECK(cudaEventDestroy(g->e_k0));
	CUDA_CHECK(cudaEventDestroy(g->e_k1));
	CUDA_CHECK(cudaEventDestroy(g->e_d2h));
	for (int i = 0; i < 2 * (g->repeat - 1); i++)
		CUDA_CHECK(cudaEventDestroy(g->e_rep[i]));
	CUDA_CHECK(cudaFree(g->clk));
	CUDA_CHECK(cudaStreamDestroy(g->st));
	free(g);
}

template <int T>
static void
launch_fr_tp(struct ed_gpu *g, size_t off, int np, int nmax)
{
	constexpr uint32_t P = pow3c(T);
	size_t tlen = T <= 2 ? ((size_t)(P * P) << (T * T)) * 2 : 0;
	size_t smem = ((tlen + 15) & ~(size_t)15) + (size_t)nmax * TPT + (size_t)CEIL_DIV(nmax, T) * TPT;
	const uint16_t *tab = gpu_table(g, T);
	allow_smem(fr_tp<T>, smem);
	fr_tp<T><<<CEIL_DIV(np, TPT), TPT, smem, g->st>>>(g->pool, g->pairs + off, np, tab, nmax,
	    g->o.maxdist, g->dist);
	CUDA_LAUNCH_CHECK();
}

template <int NW>
static void
launch_bp_tp(struct ed_gpu *g, size_t off, int np)
{
	bp_tp<NW><<<CEIL_DIV(np, TPT), TPT, 0, g->st>>>(g->pool, g->pairs + off, np, g->o.maxdist,
	    g->dist);
	CUDA_LAUNCH_CHECK();
}

template <class E>
static void
launch_wf(struct ed_gpu *g, size_t off, size_t np, const uint16_t *tab)
{
	const int S = E::S, NT = E::THREADS;
	size_t nj = 0, cmax = 1;
	for (size_t i = 0; i < np; i++)
		nj += CEIL_DIV(CEIL_DIV((size_t)g->hpairs[off + i].alen, (size_t)S), (size_t)NT);
	hgrow((void **)&g->hjobs, &g->hjobs_cap, MAX(nj, (size_t)1) * sizeof(wjob));
	nj = 0;
	for (size_t i = 0; i < np; i++) {
		const gpair *p = &g->hpairs[off + i];
		size_t ng = CEIL_DIV(CEIL_DIV((size_t)p->alen, (size_t)S), (size_t)NT);
		cmax = MAX(cmax, CEIL_DIV((size_t)p->blen, (size_t)E::W));
		for (size_t k = 0; k < ng; k++) {
			g->hjobs[nj].pair = (uint32_t)i;
			g->hjobs[nj++].group = (uint32_t)k;
		}
	}
	if (nj > INT32_MAX)
		die("GPU: too many wavefront jobs in one batch");
	size_t smem = wf_smem<E>();
	allow_smem(wf<E>, smem);
	int per_sm = 0;
	CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wf<E>, NT, smem));
	if (per_sm < 1)
		die("GPU: the wavefront kernel does not fit on a multiprocessor");
	int grid = (int)MIN(nj, (size_t)per_sm * g->sms);
	int ns = (int)MIN(nj, (size_t)2 * grid);
	size_t stride = (cmax * sizeof(typename E::H) + 127) & ~(size_t)127;

	dgrow((void **)&g->jobs, &g->jobs_cap, nj * sizeof(wjob));
	dgrow((void **)&g->slots, &g->slots_cap, (size_t)ns * stride);
	if (g->flags_cap < ns) {
		void *bufs[] = {g->flag, g->freed, g->cflag, g->corner, g->ticket};
		for (size_t i = 0; i < 5; i++)
			if (bufs[i] != NULL)
				CUDA_CHECK(cudaFree(bufs[i]));
		CUDA_CHECK(cudaMalloc(&g->flag, (size_t)ns * sizeof *g->flag));
		CUDA_CHECK(cudaMalloc(&g->freed, (size_t)ns * sizeof *g->freed));
		CUDA_CHECK(cudaMalloc(&g->cflag, (size_t)ns * sizeof *g->cflag));
		CUDA_CHECK(cudaMalloc(&g->corner, (size_t)ns * sizeof *g->corner));
		CUDA_CHECK(cudaMalloc(&g->ticket, sizeof *g->ticket));
		g->flags_cap = ns;
	}
	CUDA_CHECK(cudaMemcpyAsync(g->jobs, g->hjobs, nj * sizeof(wjob), cudaMemcpyHostToDevice, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->flag, 0, (size_t)ns * sizeof *g->flag, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->freed, 0, (size_t)ns * sizeof *g->freed, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->cflag, 0, (size_t)ns * sizeof *g->cflag, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->ticket, 0, sizeof *g->ticket, g->st));

	wfargs a;
	a.pool = g->pool;
	a.pairs = g->pairs + off;
	a.jobs = g->jobs;
	a.njobs = (int)nj;
	a.dist = g->dist;
	a.K = g->o.maxdist;
	a.tab = tab;
	a.slots = g->slots;
	a.stride = stride;
	a.ns = ns;
	a.flag = g->flag;
	a.freed = g->freed;
	a.cflag = g->cflag;
	a.corner = g->corner;
	a.ticket = g->ticket;
	a.clk = g->clk;
	wf<E><<<grid, NT, smem, g->st>>>(a);
	g->clk_pending = 1;
	CUDA_LAUNCH_CHECK();
	vlog("GPU wavefront: %zu pairs, %zu jobs, %d blocks of %d, %d slots", np, nj, grid, NT, ns);
}

/* Every kernel of a batch, classes laid out in g->hpairs as cnt[] and start[] say. */
static void
launch_all(struct ed_gpu *g, const size_t *cnt, const size_t *start, int nmax)
{
	typedef void (*bpl)(struct ed_gpu *, size_t, int);
	static const bpl bps[9] = {NULL, launch_bp_tp<1>, launch_bp_tp<2>, launch_bp_tp<3>,
	    launch_bp_tp<4>, launch_bp_tp<5>, launch_bp_tp<6>, launch_bp_tp<7>, launch_bp_tp<8>};
	for (int c = 1; c <= 8; c++)
		if (cnt[c] > 0) {
			bps[c](g, start[c], (int)cnt[c]);
			g->used[0] = 1;
		}
	if (cnt[9] > 0) {
		switch (g->o.t) {
		case 1: launch_fr_tp<1>(g, start[9], (int)cnt[9], nmax); break;
		case 2: launch_fr_tp<2>(g, start[9], (int)cnt[9], nmax); break;
		default: launch_fr_tp<3>(g, start[9], (int)cnt[9], nmax); break;
		}
		g->used[1] = 1;
	}
	if (cnt[10] > 0) {
		if (g->wf_algo == ED_BP) {
			launch_wf<BpEng>(g, start[10], cnt[10], NULL);
		} else {
			switch (g->o.t) {
			case 1: launch_wf<FrEng<1>>(g, start[10], cnt[10], gpu_table(g, 1)); break;
			case 2: launch_wf<FrEng<2>>(g, start[10], cnt[10], gpu_table(g, 2)); break;
			default: launch_wf<FrEng<3>>(g, start[10], cnt[10], gpu_table(g, 3)); break;
			}
		}
		g->used[2] = 1;
	}
}

extern "C" void
ed_gpu_submit(struct ed_gpu *g, const uint8_t *pool, size_t poolsize, int same_pool,
    const struct ed_pair *pairs, size_t n, int32_t *dist)
{
	const long long K = g->o.maxdist;
	const int tp_algo = g->o.algo == ED_AUTO ? ED_BP : g->o.algo;
	size_t cnt[11] = {0};	/* classes: bp_tp NW=1..8 (1..8), fr_tp (9), wavefront (10) */
	int nmax = 1;

	hgrow((void **)&g->hpairs, &g->hpairs_cap, MAX(n, (size_t)1) * sizeof(gpair));
	/* Classify: trivial pairs here; count the rest per class. */
	uint8_t *cls = (uint8_t *)xmalloc(MAX(n, (size_t)1));
	for (size_t i = 0; i < n; i++) {
		int64_t m = pairs[i].alen, nn = pairs[i].blen, lo = MIN(m, nn), hi = MAX(m, nn);
		struct ed_band bd;
		cls[i] = 0;
		if (!ed_band_make(m, nn, K, &bd)) {
			dist[i] = -1;
		} else if (lo == 0) {
			dist[i] = K >= 0 && hi > K ? -1 : (int32_t)hi;
		} else if (lo <= TP_SHORT && hi <= TP_LONG) {
			cls[i] = tp_algo == ED_BP ? (uint8_t)CEIL_DIV(lo, 32) : 9;
			if (cls[i] == 9)
				nmax = MAX(nmax, (int)lo);
		} else {
			cls[i] = 10;
		}
		cnt[cls[i]]++;
	}
	size_t start[11], pos[11];
	start[0] = 0;
	for (int c = 1; c < 11; c++)
		start[c] = (c == 1 ? 0 : start[c - 1] + cnt[c - 1]);
	memcpy(pos, start, sizeof pos);
	for (size_t i = 0; i < n; i++) {
		int c = cls[i];
		if (c == 0)
			continue;
		const struct ed_pair *p = &pairs[i];
		gpair q = {p->aoff, p->alen, p->boff, p->blen, (uint32_t)i};
		/* bp_tp: the shorter side as rows; fr_tp: the shorter as columns. */
		bool swap = (c <= 8 && p->alen > p->blen) || (c == 9 && p->alen < p->blen);
		if (swap)
			q = gpair{p->boff, p->blen, p->aoff, p->alen, (uint32_t)i};
		g->hpairs[pos[c]++] = q;
	}
	free(cls);
	size_t total = start[10] + cnt[10];

	/* Upload. */
	if (dgrow((void **)&g->pool, &g->pool_cap, ((poolsize + 15) & ~(size_t)15) + 64))
		g->last_pool = NULL;	/* a new buffer: upload whatever the caller says */
	dgrow((void **)&g->pairs, &g->pairs_cap, MAX(total, (size_t)1) * sizeof(gpair));
	dgrow((void **)&g->dist, &g->dist_cap, MAX(n, (size_t)1) * sizeof(int32_t));
	CUDA_CHECK(cudaEventRecord(g->e_h2d, g->st));
	if (!(same_pool && pool == g->last_pool && poolsize == g->last_size) && poolsize > 0)
		CUDA_CHECK(cudaMemcpyAsync(g->pool, pool, poolsize, cudaMemcpyHostToDevice, g->st));
	g->last_pool = pool;
	g->last_size = poolsize;
	if (total > 0)
		CUDA_CHECK(cudaMemcpyAsync(g->pairs, g->hpairs, total * sizeof(gpair),
		    cudaMemcpyHostToDevice, g->st));
	if (n > 0)
		CUDA_CHECK(cudaMemcpyAsync(g->dist, dist, n * sizeof(int32_t), cudaMemcpyHostToDevice,
		    g->st));
	CUDA_CHECK(cudaEventRecord(g->e_k0, g->st));

	launch_all(g, cnt, start, nmax);
	CUDA_CHECK(cudaEventRecord(g->e_k1, g->st));
	for (int k = 1; k < g->repeat; k++) {
		CUDA_CHECK(cudaEventRecord(g->e_rep[2 * k - 2], g->st));
		launch_all(g, cnt, start, nmax);
		CUDA_CHECK(cudaEventRecord(g->e_rep[2 * k - 1], g->st));
	}
	if (n > 0)
		CUDA_CHECK(cudaMemcpyAsync(dist, g->dist, n * sizeof(int32_t), cudaMemcpyDeviceToHost,
		    g->st));
	CUDA_CHECK(cudaEventRecord(g->e_d2h, g->st));
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
