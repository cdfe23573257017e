/* editdist4r_bp.cuh: the bit-parallel engines of editdist4r's GPU path as plain
 * arithmetic, __host__ __device__, so that tests/editdist4r_bp.cu runs the very code of the
 * kernels on the CPU against edlib: a pair of thread-per-pair bp_tp (bp_pair), the
 * wavefront's strip engine (BpEng), and what --mode infix and prefix add to both.
 *
 * The modes (edlib's HW and SHW; A, the query, is always the rows, never swapped with
 * B): the left column is D[i][0] = i in every mode, so a strip starts at the same value
 * as in the global distance. infix frees B's start: D[0][j] = 0, so the h value
 * entering the top row of every column is 0 instead of +1 (bp_top). Both free B's
 * end: the answer is the least D[m][j] over j = 0..n, its first column j the END
 * (0-based j - 1); the last row is followed as D[m][0] = m plus the bottom row's h
 * values, column by column (best_see, best_chunk). Column 0 comes first, so a least
 * value of m is the empty match (END -1), as the CPU path and edlib have it. The
 * band of --max-dist is the global distance's (|A| - |B| bounds nothing here): the
 * modes compute the whole table and drop a best above K at the end (best_out). */
#ifndef EDITDIST4R_BP_CUH
#define EDITDIST4R_BP_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "editdist4r.h"
#include "editdist4r_tune.h"

/* Loops unrolled on the device; the host's compiler, which compiles these too (for
 * tests/editdist4r_bp.cu), has no such pragma. */
#ifdef __CUDA_ARCH__
#define ED_UNROLL _Pragma("unroll")
#else
#define ED_UNROLL
#endif

__host__ __device__ __forceinline__ int
popc32(uint32_t x)
{
#ifdef __CUDA_ARCH__
	return __popc(x);
#else
	return __builtin_popcount(x);
#endif
}

/* The last row's least value so far and its column (1..n; 0 for D[m][0]). */
struct ed_best {
	int d, col;
};

__host__ __device__ __forceinline__ void
best_init(ed_best &b, int m)
{
	b.d = m;
	b.col = 0;
}

/* Column col's D[m][col]: strictly less, so that the first of equal ones stays. */
__host__ __device__ __forceinline__ void
best_see(ed_best &b, int score, int col)
{
	if (score < b.d) {
		b.d = score;
		b.col = col;
	}
}

/* A chunk of X columns from col0 + 1 on, whose bottom-row h values are the bits of op
 * (+1) and om (-1), after D[m][col0] = score: each column seen; returns D[m] at its
 * last column. A chunk that cannot go below the best (every -1 taken first) is added
 * at once. */
__host__ __device__ __forceinline__ int
best_chunk(ed_best &b, int score, uint32_t op, uint32_t om, int X, int col0)
{
	if (score - popc32(om) >= b.d)
		return score + popc32(op) - popc32(om);
	for (int x = 0; x < X; x++) {
		score += (int)((op >> x) & 1u) - (int)((om >> x) & 1u);
		best_see(b, score, col0 + x + 1);
	}
	return score;
}

/* The modes' answer: the distance and END (0-based, -1 for the empty match), both -1
 * above K. */
__host__ __device__ __forceinline__ void
best_out(const ed_best &b, long long K, int32_t *dist, int32_t *end)
{
	const bool over = K >= 0 && b.d > K;
	*dist = over ? -1 : b.d;
	*end = over ? -1 : b.col - 1;
}

/* The h value (1 for +1) entering the top row of every column: 0 where B's start is
 * free (infix). */
__host__ __device__ __forceinline__ uint32_t
bp_top(int mode)
{
	return mode == ED_INFIX ? 0u : 1u;
}

/* Pairs the host settles without an engine, in the modes: an empty A (cost 0, the
 * empty match) or B (cost |A|). Returns whether the pair was one. */
__host__ __device__ __forceinline__ bool
mode_trivial(int m, int n, long long K, int32_t *dist, int32_t *end)
{
	if (m > 0 && n > 0)
		return false;
	ed_best b;
	best_init(b, m);
	best_out(b, K, dist, end);
	return true;
}

/* ---- a thread per pair: bp_tp's pair ---- */

/* A's m <= 32 NW bytes as the rows of a column, in registers: as bit planes (only the
 * bits that vary among its bytes; a byte that differs from all of them in a constant
 * bit matches nowhere), and the column's v vectors. REV: A reversed, A[m - 1] first. */
template <int NW>
struct bp_rows {
	uint32_t plane[8][NW], pv[NW], mv[NW], vary, fixmask, fixval;
	int ob;

	template <bool REV>
	__host__ __device__ __forceinline__ void
	init(const uint8_t *A, int m)
	{
		uint32_t orv = 0, andv = 0xff;
		ob = (m - 1) & 31;
ED_UNROLL
		for (int w = 0; w < NW; w++) {
ED_UNROLL
			for (int b = 0; b < 8; b++)
				plane[b][w] = 0;
			for (int y = 0; y < 32 && w * 32 + y < m; y++) {
				uint32_t c = A[REV ? m - 1 - (w * 32 + y) : w * 32 + y];
				orv |= c;
				andv &= c;
ED_UNROLL
				for (int b = 0; b < 8; b++)
					plane[b][w] |= ((c >> b) & 1u) << y;
			}
			pv[w] = ~0u;
			mv[w] = 0;
		}
		vary = orv ^ andv;
		fixmask = ~vary & 0xffu;
		fixval = andv & fixmask;
	}

	/* The next column, of byte c, with h = top (1: +1; 0: 0) entering its top row:
	 * returns the h value leaving its bottom row. */
	__host__ __device__ __forceinline__ int
	col(uint32_t c, uint32_t top)
	{
		uint32_t eq[NW];
		uint32_t none = (c & fixmask) != fixval ? 0u : ~0u;
ED_UNROLL
		for (int w = 0; w < NW; w++)
			eq[w] = none;
ED_UNROLL
		for (int b = 0; b < 8; b++) {
			if (vary & (1u << b)) {
				uint32_t kb = ((c >> b) & 1u) - 1u;	/* 0 where the bit is set */
ED_UNROLL
				for (int w = 0; w < NW; w++)
					eq[w] &= plane[b][w] ^ kb;
			}
		}
		uint32_t hp = top, hm = 0;
		int h = 0;
ED_UNROLL
		for (int w = 0; w < NW; w++) {
			uint32_t ph, mh;
			ed_bp_step32(&pv[w], &mv[w], eq[w], hp, hm, &ph, &mh);
			if (w < NW - 1) {
				hp = ph >> 31;
				hm = mh >> 31;
			} else {
				h = (int)((ph >> ob) & 1u) - (int)((mh >> ob) & 1u);
			}
		}
		return h;
	}
};

/* Rows: A, 32(NW-1) < m <= 32 NW (bp_rows). Columns: B, 16 bytes a load (16-byte
 * aligned, readable 16 bytes past n). MODE: enum ed_mode; end is written only for
 * infix and prefix. The global distance swaps the sides so that the shorter is A; the
 * modes never do. */
template <int NW, int MODE>
__host__ __device__ __forceinline__ void
bp_pair(const uint8_t *A, const uint4 *B, int m, int n, long long K, int32_t *dist,
    int32_t *end)
{
	bp_rows<NW> R;
	R.template init<false>(A, m);
	const uint32_t top = bp_top(MODE);
	int score = m;
	ed_best best;
	best_init(best, m);

	for (int j0 = 0; j0 < n; j0 += 16) {
		uint4 v4 = B[j0 >> 4];
		uint32_t wv[4] = {v4.x, v4.y, v4.z, v4.w};
ED_UNROLL
		for (int k = 0; k < 16; k++) {
			if (j0 + k >= n)
				break;
			score += R.col((wv[k >> 2] >> ((k & 3) * 8)) & 0xffu, top);
			if constexpr (MODE != ED_GLOBAL)
				best_see(best, score, j0 + k + 1);
		}
	}
	if constexpr (MODE == ED_GLOBAL)
		*dist = K >= 0 && score > K ? -1 : score;
	else
		best_out(best, K, dist, end);
}

/* --mode infix: the START of the match of cost d < m that ends at END e (>= 0), as the
 * CPU path and edlib choose it: the start of the longest match ending there at that
 * cost. A reversed against B[e], B[e - 1], ... from the global top row (a prefix), over
 * the m + d bytes that can hold a match of cost d; the last column of the least value
 * (which is d, the best of all) is the longest match. A byte a load: the piece is short
 * beside B. */
template <int NW>
__host__ __device__ __forceinline__ int
bp_start(const uint8_t *A, const uint8_t *B, int m, int e, int d)
{
	bp_rows<NW> R;
	R.template init<true>(A, m);
	const int span = e + 1 < m + d ? e + 1 : m + d;
	int score = m, least = m, col = 0;
	for (int j = 0; j < span; j++) {
		score += R.col(B[e - j], 1u);
		if (score <= least) {
			least = score;
			col = j + 1;
		}
	}
	return e + 1 - col;
}

/* ---- the wavefront's bit-parallel strips ---- */

/* Strips of 32 rows; a chunk is 32 columns, its h values two bit masks. Each thread
 * keeps its strip's Peq table in shared memory, a word a byte, THREADS words apart. */
struct BpEng {
	static constexpr int S = 32, W = 32, THREADS = ED_WF_BP_THREADS;
	static constexpr size_t SMEM = 256 * THREADS * 4;	/* Peq[byte][thread] */
	static constexpr bool MODES = true;	/* the last row can be followed: step's h */
	typedef uint2 H;

	uint32_t *peq, pv, mv;
	int ob;

	/* h entering from outside the band: an over-estimate, +1 */
	__host__ __device__ static H top(int) { return make_uint2(~0u, 0u); }
	/* h entering the first strip's top row (bp_top) */
	__host__ __device__ static H
	first(int, int mode)
	{
		return make_uint2(bp_top(mode) ? ~0u : 0u, 0u);
	}
	__host__ __device__ static void prologue(uint8_t *, const uint16_t *) {}

	/* p: this thread's column of the Peq table */
	__host__ __device__ void
	init_at(uint32_t *p, const uint8_t *A, int i0, int R)
	{
		peq = p;
		for (int c = 0; c < 256; c++)
			peq[c * THREADS] = 0;
		for (int y = 0; y < R; y++)
			peq[A[i0 + y] * THREADS] |= 1u << y;
		ob = R - 1;
	}

#ifdef __CUDA_ARCH__
	__device__ void
	init(const uint8_t *A, int i0, int R, uint8_t *esm, const uint16_t *)
	{
		init_at((uint32_t *)esm + threadIdx.x, A, i0, R);
	}
#endif

	__host__ __device__ void
	left()
	{
		pv = ~0u;
		mv = 0;
	}

	__host__ __device__ __forceinline__ void
	col(uint32_t c, int x, uint32_t ip, uint32_t im, uint32_t &op, uint32_t &om)
	{
		uint32_t ph, mh;
		ed_bp_step32(&pv, &mv, peq[c * THREADS], (ip >> x) & 1u, (im >> x) & 1u, &ph, &mh);
		op |= ((ph >> ob) & 1u) << x;
		om |= ((mh >> ob) & 1u) << x;
	}

	/* X columns of bytes bc (16-byte aligned when X is 32) under h, which becomes the
	 * bottom row's h values; returns their sum. */
	__host__ __device__ int
	step(const uint8_t *bc, int X, H &h)
	{
		uint32_t op = 0, om = 0;
		if (X == 32) {
			const uint4 *b4 = (const uint4 *)bc;
ED_UNROLL
			for (int k = 0; k < 2; k++) {
				uint4 v4 = b4[k];
				uint32_t wv[4] = {v4.x, v4.y, v4.z, v4.w};
ED_UNROLL
				for (int x = 0; x < 16; x++)
					col((wv[x >> 2] >> ((x & 3) * 8)) & 0xffu, k * 16 + x, h.x, h.y, op, om);
			}
		} else {
			for (int x = 0; x < X; x++)
				col(bc[x], x, h.x, h.y, op, om);
		}
		h = make_uint2(op, om);
		return popc32(op) - popc32(om);
	}
};

#endif
