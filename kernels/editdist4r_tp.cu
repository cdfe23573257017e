/* editdist4r_tp.cu: a thread per pair, editdist4r's GPU engine for batches of pairs
 * whose shorter side is short (the tuning row's tp_short), so that a million short pairs
 * fill the GPU. fr_tp keeps the shorter string and the row of h vectors in shared memory
 * (one column per thread) and the Four-Russians table in shared memory (t <= 2) or L2
 * (t = 3); bp_tp keeps the shorter string as bit planes in registers (bp_pair in
 * editdist4r_bp.cuh), or, for --mode infix and prefix, A: the modes run on bp_tp alone,
 * since fr_tp follows only its last column (their last row would need each block's h
 * trits decoded and the sides kept as they are); for infix, bp_tp_start then finds
 * each match's START. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_check.h"
#include "editdist4r.h"
#include "editdist4r_bp.cuh"
#include "editdist4r_dev.cuh"

namespace {

/* ---- thread per pair: Four-Russians ---- */

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

/* bp_pair (editdist4r_bp.cuh) a thread. end: the modes' END, at the same index as the
 * distance (NULL for the global distance). */
template <int NW, int MODE>
__global__ void __launch_bounds__(TPT)
bp_tp(const uint8_t *__restrict__ pool, const gpair *__restrict__ pairs, int np, long long K,
    int32_t *__restrict__ dist, int32_t *__restrict__ end)
{
	int p = blockIdx.x * TPT + threadIdx.x;
	if (p >= np)
		return;
	const gpair q = pairs[p];
	bp_pair<NW, MODE>(pool + q.aoff, (const uint4 *)(pool + q.boff), (int)q.alen,
	    (int)q.blen, K, &dist[q.out], end + q.out);
}

/* --mode infix: each match's START (bp_start), once bp_tp has left its distance and
 * END; -1 for a distance of -1, 0 for the empty match. */
template <int NW>
__global__ void __launch_bounds__(TPT)
bp_tp_start(const uint8_t *__restrict__ pool, const gpair *__restrict__ pairs, int np,
    const int32_t *__restrict__ dist, const int32_t *__restrict__ end,
    int32_t *__restrict__ start)
{
	int p = blockIdx.x * TPT + threadIdx.x;
	if (p >= np)
		return;
	const gpair q = pairs[p];
	const int d = dist[q.out], e = end[q.out];
	start[q.out] = d < 0 ? -1 : e < 0 ? 0 :
	    bp_start<NW>(pool + q.aoff, pool + q.boff, (int)q.alen, e, d);
}

} /* namespace */

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

template <int NW, int MODE>
static void
launch_bp_tp(struct ed_gpu *g, size_t off, int np)
{
	bp_tp<NW, MODE><<<CEIL_DIV(np, TPT), TPT, 0, g->st>>>(g->pool, g->pairs + off, np,
	    g->o.maxdist, g->dist, g->end);
	CUDA_LAUNCH_CHECK();
	if (MODE == ED_INFIX) {
		bp_tp_start<NW><<<CEIL_DIV(np, TPT), TPT, 0, g->st>>>(g->pool, g->pairs + off, np,
		    g->dist, g->end, g->start);
		CUDA_LAUNCH_CHECK();
	}
}

void
launch_tp(struct ed_gpu *g, const size_t *cnt, const size_t *start, int nmax)
{
	typedef void (*bpl)(struct ed_gpu *, size_t, int);
#define BPL(M) {NULL, launch_bp_tp<1, M>, launch_bp_tp<2, M>, launch_bp_tp<3, M>, \
	    launch_bp_tp<4, M>, launch_bp_tp<5, M>, launch_bp_tp<6, M>, launch_bp_tp<7, M>, \
	    launch_bp_tp<8, M>}
	static const bpl bps[3][9] = {BPL(ED_GLOBAL), BPL(ED_INFIX), BPL(ED_PREFIX)};
#undef BPL
	for (int c = 1; c <= 8; c++)
		if (cnt[c] > 0) {
			bps[g->o.mode][c](g, start[c], (int)cnt[c]);
			g->used[0] = 1;
		}
	if (cnt[CLS_FR] > 0) {
		switch (g->o.t) {
		case 1: launch_fr_tp<1>(g, start[CLS_FR], (int)cnt[CLS_FR], nmax); break;
		case 2: launch_fr_tp<2>(g, start[CLS_FR], (int)cnt[CLS_FR], nmax); break;
		default: launch_fr_tp<3>(g, start[CLS_FR], (int)cnt[CLS_FR], nmax); break;
		}
		g->used[1] = 1;
	}
}
