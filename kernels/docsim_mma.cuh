/* docsim_mma.cuh: the device code docsim's GEMM kernels share (docsim_mma.cu, the plain
 * products; docsim_topk_tc.cu, the TF32 product that ranks as it ends): the staging of
 * row slices by cp.async, the MMA instructions and their fragments, and the TF32 block
 * product both TF32 kernels run (tf32_block). See docsim_mma.cu for the scheme. */
#ifndef DOCSIM_MMA_CUH
#define DOCSIM_MMA_CUH

#include "docsim_dev.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "docsim_mma.cu: mma.sync on TF32 and float64 needs sm_80 or later (CUDA_ARCHS)"
#endif

#define DS_MM_STAGES 3		/* slices in flight: double buffering and one more */
#define SLICE_BYTES 128		/* a row's slice: 8 units of 16 bytes */

/* The block tiles, (rows of C) x (columns of C), and their threads:
 *   TF32  128 x 128, 4 warps of TC_WM x TC_WN = 64 x 64 (4 x 8 MMA tiles of 16 x 8), the
 *         shape CUTLASS's sm80 TF32 kernels take: a warp's step of k reads 64 + 64 rows
 *         of fragments for 32 MMAs (64 x 32: 64 + 32 rows for 16); 96 KB staged, two
 *         blocks an SM. TC_WN 32 gives 8 warps of 64 x 32 (the first version's).
 *   F32   128 x 128, 256 threads of 8 x 8 entries (rows ty + 16 i, columns tx + 16 j)
 *   F64    64 x  64, 4 warps of 32 x 32 (4 x 4 MMA tiles of 8 x 8); 48 KB staged
 * None of these was measured against another yet (no GPU where they were written). */
#define TC_BM 128
#define TC_BN 128
#define TC_WM 64
#define TC_WN 64
#define TC_MT (TC_WM / 16)	/* a warp's MMA tiles along M */
#define TC_NT (TC_WN / 8)	/* and along N */
#define TC_WARPS_N (TC_BN / TC_WN)
#define TC_THREADS (32 * (TC_BM / TC_WM) * TC_WARPS_N)
#define F32_THREADS 256
#define F64_BM 64
#define F64_BN 64
#define F64_THREADS 128

/* Element k of row r of a staged slice (E elements a 16-byte unit, 8 units a row).
 * The swizzle depends on r only through r mod 8, so element k of row r is also element
 * sw(r mod 8, k) of the rows from r - r mod 8: the fragment reads below find a
 * thread's rows (all r = g mod 8) at fixed offsets from one swizzled column. */
template <typename T>
static __device__ __forceinline__ int
sw(int r, int k)
{
	constexpr int E = 16 / sizeof(T);
	return r * (SLICE_BYTES / (int)sizeof(T)) + ((((k / E) ^ r) & 7) * E) + k % E;
}

static __device__ __forceinline__ unsigned
smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* n bytes (4, 8 or 16) from src to shared dst, of which the first `have' are read and
 * the rest zeros (have 0: src is not read). */
template <int N>
__device__ __forceinline__ void
cp_async(unsigned dst, const void *src, int have)
{
	if (N == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(have) : "memory");
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src), "n"(N), "r"(have)
		    : "memory");
}

static __device__ __forceinline__ void
cp_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Until at most N of this thread's groups are in flight. */
template <int N>
__device__ __forceinline__ void
cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* Rows [r0, r0 + R) of M (rows x K) at columns [k0, k0 + BK) into the slice s, by NT
 * threads; what lies outside M is zeros. VEC: K is a multiple of a unit's elements and
 * M 16-byte aligned, so a unit is all inside or all outside. */
template <typename T, int R, int NT, bool VEC>
__device__ __forceinline__ void
load_slice(T *s, const T *M, size_t rows, size_t K, size_t r0, size_t k0, int tid)
{
	constexpr int BK = SLICE_BYTES / sizeof(T), E = 16 / sizeof(T);
	if (VEC) {
#pragma unroll
		for (int f = tid; f < R * (BK / E); f += NT) {
			int r = f / (BK / E), k = f % (BK / E) * E;
			bool in = r0 + r < rows && k0 + k < K;
			cp_async<16>(smem_addr(s + sw<T>(r, k)), in ? M + (r0 + r) * K + k0 + k : M, in ? 16 : 0);
		}
	} else {
#pragma unroll 4
		for (int f = tid; f < R * BK; f += NT) {
			int r = f / BK, k = f % BK;
			bool in = r0 + r < rows && k0 + k < K;
			cp_async<sizeof(T)>(smem_addr(s + sw<T>(r, k)), in ? M + (r0 + r) * K + k0 + k : M,
			    in ? (int)sizeof(T) : 0);
		}
	}
}

/* The loop every kernel runs: slices of A (BM rows) and B (BN rows) staged DS_MM_STAGES
 * at a time, compute(As, Bs) on each in k order. One commit group a slice (empty past
 * the last), so that waiting for all but DS_MM_STAGES - 2 groups means "slice kt has
 * landed"; the barrier after it also says every thread is done with slice kt - 1,
 * whose buffer the next copies refill. */
template <typename T, int BM, int BN, int NT, bool VEC, typename Compute>
__device__ __forceinline__ void
staged_loop(T *sm, const T *A, const T *B, size_t nr, size_t nc, size_t K, size_t bm0, size_t bn0,
    Compute compute)
{
	constexpr int BK = SLICE_BYTES / sizeof(T), SLICE = (BM + BN) * BK;
	const int tid = threadIdx.x;
	const size_t nk = CEIL_DIV(K, (size_t)BK);
#pragma unroll
	for (int s = 0; s < DS_MM_STAGES - 1; s++) {
		if ((size_t)s < nk) {
			load_slice<T, BM, NT, VEC>(sm + s * SLICE, A, nr, K, bm0, s * BK, tid);
			load_slice<T, BN, NT, VEC>(sm + s * SLICE + BM * BK, B, nc, K, bn0, s * BK, tid);
		}
		cp_commit();
	}
	int rd = 0, wr = DS_MM_STAGES - 1;
	for (size_t kt = 0; kt < nk; kt++) {
		cp_wait<DS_MM_STAGES - 2>();
		__syncthreads();
		size_t next = kt + DS_MM_STAGES - 1;
		if (next < nk) {
			load_slice<T, BM, NT, VEC>(sm + wr * SLICE, A, nr, K, bm0, next * BK, tid);
			load_slice<T, BN, NT, VEC>(sm + wr * SLICE + BM * BK, B, nc, K, bn0, next * BK, tid);
		}
		cp_commit();
		compute(sm + rd * SLICE, sm + rd * SLICE + BM * BK);
		rd = rd + 1 == DS_MM_STAGES ? 0 : rd + 1;
		wr = wr + 1 == DS_MM_STAGES ? 0 : wr + 1;
	}
}

static __device__ __forceinline__ uint32_t
tf32(float x)
{
	uint32_t r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return r;
}

/* C/D += A B on one 16 x 8 tile, k = 8. PTX's fragments, g = lane / 4, t = lane % 4:
 * a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) of A (row, k); b0 (k t,
 * column g), b1 (k t + 4, column g); d0, d1 (g, 2t and 2t + 1), d2, d3 (g + 8, ...). */
static __device__ __forceinline__ void
mma_tf32(float d[4], const uint32_t a[4], const uint32_t b[2])
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d += a b on one 8 x 8 tile, k = 4, float64: a (g, t) of A, b (k t, column g) of B,
 * d0, d1 (g, 2t and 2t + 1). */
static __device__ __forceinline__ void
mma_f64(double d[2], double a, double b)
{
	asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
		     : "+d"(d[0]), "+d"(d[1])
		     : "d"(a), "d"(b));
}

/* Entry (row, col) of C, if it is one. */
template <typename T>
static __device__ __forceinline__ void
put(T *C, size_t ldc, size_t nr, size_t nc, size_t row, size_t col, T v)
{
	if (row < nr && col < nc)
		C[row * ldc + col] = v;
}

/* The TF32 product of a TC_BM x TC_BN block of C at rows bm0, columns bn0, into acc, by
 * TC_THREADS threads: warp w's TC_WM x TC_WN part, at rows TC_WM (w / TC_WARPS_N),
 * columns TC_WN (w % TC_WARPS_N), as TC_MT x TC_NT MMA tiles of 16 x 8; acc[i][j][q] is
 * the entry at tf32_row(i, q), tf32_col(j, q) of the block. Each 8-wide step of k adds 8 exact products (TF32 operands have 11-bit
 * significands) into each float32 accumulator, one mma a step, in k order: the sums
 * ds_fast_bound (docsim.h) bounds. sm: smem_bytes(TC_BM, TC_BN) of shared memory. */
static __device__ __forceinline__ int
tf32_row(int i, int q)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	return warp / TC_WARPS_N * TC_WM + i * 16 + (lane >> 2) + 8 * (q / 2);
}

static __device__ __forceinline__ int
tf32_col(int j, int q)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	return warp % TC_WARPS_N * TC_WN + j * 8 + 2 * (lane & 3) + q % 2;
}

template <bool VEC>
static __device__ __forceinline__ void
tf32_block(float acc[TC_MT][TC_NT][4], float *sm, const float *A, const float *B, size_t nr, size_t nc, size_t K,
    size_t bm0, size_t bn0)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int wm = warp / TC_WARPS_N * TC_WM, wn = warp % TC_WARPS_N * TC_WN;
#pragma unroll
	for (int i = 0; i < TC_MT; i++)
#pragma unroll
		for (int j = 0; j < TC_NT; j++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				acc[i][j][q] = 0.0f;
	staged_loop<float, TC_BM, TC_BN, TC_THREADS, VEC>(sm, A, B, nr, nc, K, bm0, bn0,
	    [&](const float *As, const float *Bs) {
		    /* every row this thread reads is g mod 8 (wm, wn and the tiles' offsets
		     * are multiples of 8): rows wm + 16 i + g (+ 8) of A, wn + 8 j + g of B */
		    const float *Ar = As + wm * 32, *Br = Bs + wn * 32;
#pragma unroll 1
		    for (int k8 = 0; k8 < 32; k8 += 8) {
			    const int c0 = sw<float>(g, k8 + t), c4 = sw<float>(g, k8 + t + 4);
			    uint32_t af[TC_MT][4], bf[TC_NT][2];
#pragma unroll
			    for (int i = 0; i < TC_MT; i++) {
				    const float *a = Ar + i * 16 * 32;
				    af[i][0] = tf32(a[c0]);
				    af[i][1] = tf32(a[8 * 32 + c0]);
				    af[i][2] = tf32(a[c4]);
				    af[i][3] = tf32(a[8 * 32 + c4]);
			    }
#pragma unroll
			    for (int j = 0; j < TC_NT; j++) {
				    const float *b = Br + j * 8 * 32;
				    bf[j][0] = tf32(b[c0]);
				    bf[j][1] = tf32(b[c4]);
			    }
#pragma unroll
			    for (int i = 0; i < TC_MT; i++)
#pragma unroll
				    for (int j = 0; j < TC_NT; j++)
					    mma_tf32(acc[i][j], af[i], bf[j]);
		    }
	    });
}

/* The shared bytes of a kernel: DS_MM_STAGES slices of BM + BN rows of 128 bytes. */
static constexpr size_t
smem_bytes(int bm, int bn)
{
	return (size_t)DS_MM_STAGES * (bm + bn) * SLICE_BYTES;
}

/* Whether rows of K elements of size esz at A and B may go up in 16-byte units. */
static inline bool
vec_ok(const void *A, const void *B, size_t K, size_t esz)
{
	return K * esz % 16 == 0 && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0;
}

#endif
