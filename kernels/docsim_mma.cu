/* docsim_mma.cu: docsim's own products C = A B^T, so that no BLAS is loaded: C (nr x nc
 * floats or doubles, row stride ldc) from rows of K elements, A's nr and B's nc, every
 * operand k-contiguous (row-major A, B as stored: the "row.col" of mma.sync). Three kinds
 * (enum ds_mm_kind, docsim_dev.cuh), one kernel each:
 *   DS_MM_TF32  tensor cores, mma.sync.aligned.m16n8k8 on operands rounded to TF32 by
 *               cvt.rna (to nearest, ties away), float32 sums: the dense top-k lists and
 *               -k 0 pairs that docsim_exact.cu makes exact (ds_fast_bound says by how
 *               much a score may be off, for this kernel's order of sums);
 *   DS_MM_F32   IEEE float32 on the SIMT cores, a fused multiply-add chain per entry in
 *               k order: --precision single, and the float32 recheck (ds_f32_bound);
 *   DS_MM_F64   float64 on the tensor cores (DMMA, mma.sync.aligned.m8n8k4, IEEE
 *               products and sums): the default for sparse and dense input.
 * The three share their staging: a block's slices of A and B (BK elements of each row,
 * 128 bytes) go from global to shared memory by cp.async, DS_MM_STAGES slices in flight
 * (the one computed on, the next ones landing), each row's eight 16-byte units swizzled
 * by the row (unit u of row r at u ^ (r mod 8)), so that the 8 rows a fragment read
 * touches fall in 8 different 16-byte bank groups. Elements past nr, nc or K are zeros
 * (cp.async's zero fill), which add nothing; entries past nr or nc are not stored.
 * Rows go up in 16-byte copies when K and the operands allow (VEC), else an element a
 * copy. The tensor-core instructions need sm_80 or later (the build's sm_90). */
#include "docsim_mma.cuh"

/* TF32: the block's tf32_block, stored. */
template <bool VEC>
__global__ void __launch_bounds__(TC_THREADS, 2)
k_mm_tf32(const float *A, const float *B, size_t nr, size_t nc, size_t K, size_t ldc, float *C)
{
	extern __shared__ float4 mm_smem[];
	const size_t bm0 = (size_t)blockIdx.y * TC_BM, bn0 = (size_t)blockIdx.x * TC_BN;
	float acc[TC_MT][TC_NT][4];
	tf32_block<VEC>(acc, (float *)mm_smem, A, B, nr, nc, K, bm0, bn0);
#pragma unroll
	for (int i = 0; i < TC_MT; i++)
#pragma unroll
		for (int j = 0; j < TC_NT; j++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				put(C, ldc, nr, nc, bm0 + tf32_row(i, q), bn0 + tf32_col(j, q), acc[i][j][q]);
}

/* F32: thread (ty, tx) = (tid / 16, tid % 16) sums rows ty + 16 i against columns
 * tx + 16 j, i, j < 8, each entry a chain of fmaf in k order: recursive summation, one
 * rounding a step (IEEE float32, to nearest). */
template <bool VEC>
__global__ void __launch_bounds__(F32_THREADS, 2)
k_mm_f32(const float *A, const float *B, size_t nr, size_t nc, size_t K, size_t ldc, float *C)
{
	extern __shared__ float4 mm_smem[];
	const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
	const size_t bm0 = (size_t)blockIdx.y * TC_BM, bn0 = (size_t)blockIdx.x * TC_BN;
	float acc[8][8];
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			acc[i][j] = 0.0f;
	staged_loop<float, TC_BM, TC_BN, F32_THREADS, VEC>((float *)mm_smem, A, B, nr, nc, K, bm0, bn0,
	    [&](const float *As, const float *Bs) {
#pragma unroll 1
		    for (int k = 0; k < 32; k++) {
			    /* rows ty + 16 i are all ty mod 8, columns tx + 16 j all tx mod 8 */
			    const int ca = sw<float>(ty, k), cb = sw<float>(tx, k);
			    float a[8], b[8];
#pragma unroll
			    for (int i = 0; i < 8; i++)
				    a[i] = As[16 * i * 32 + ca];
#pragma unroll
			    for (int j = 0; j < 8; j++)
				    b[j] = Bs[16 * j * 32 + cb];
#pragma unroll
			    for (int i = 0; i < 8; i++)
#pragma unroll
				    for (int j = 0; j < 8; j++)
					    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
		    }
	    });
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			put(C, ldc, nr, nc, bm0 + ty + 16 * i, bn0 + tx + 16 * j, acc[i][j]);
}

/* F64: warp w's 32 x 32 part of the block's tile, at rows 32 (w / 2), columns 32 (w % 2),
 * a DMMA a 4-wide step of k for each of its 4 x 4 tiles of 8 x 8. */
template <bool VEC>
__global__ void __launch_bounds__(F64_THREADS)
k_mm_f64(const double *A, const double *B, size_t nr, size_t nc, size_t K, size_t ldc, double *C)
{
	extern __shared__ float4 mm_smem[];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int wm = warp / 2 * 32, wn = warp % 2 * 32;
	const size_t bm0 = (size_t)blockIdx.y * F64_BM, bn0 = (size_t)blockIdx.x * F64_BN;
	double acc[4][4][2];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			acc[i][j][0] = acc[i][j][1] = 0.0;
	staged_loop<double, F64_BM, F64_BN, F64_THREADS, VEC>((double *)mm_smem, A, B, nr, nc, K, bm0, bn0,
	    [&](const double *As, const double *Bs) {
#pragma unroll
		    for (int k4 = 0; k4 < 16; k4 += 4) {
			    /* rows wm + 8 i + g of A and wn + 8 j + g of B: all g mod 8 */
			    const int c = sw<double>(g, k4 + t);
			    double a[4], b[4];
#pragma unroll
			    for (int i = 0; i < 4; i++)
				    a[i] = As[(wm + i * 8) * 16 + c];
#pragma unroll
			    for (int j = 0; j < 4; j++)
				    b[j] = Bs[(wn + j * 8) * 16 + c];
#pragma unroll
			    for (int i = 0; i < 4; i++)
#pragma unroll
				    for (int j = 0; j < 4; j++)
					    mma_f64(acc[i][j], a[i], b[j]);
		    }
	    });
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int q = 0; q < 2; q++)
				put(C, ldc, nr, nc, bm0 + wm + i * 8 + g, bn0 + wn + j * 8 + 2 * t + q, acc[i][j][q]);
}

void
ds_mm_init(void)
{
	/* over the 48 KB a block gets unasked: allowed once a device (the kernels load
	 * here, in the start-up thread, rather than at their first launch) */
	const int tc = (int)smem_bytes(TC_BM, TC_BN), f64 = (int)smem_bytes(F64_BM, F64_BN);
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_tf32<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, tc));
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_tf32<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, tc));
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_f32<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, tc));
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_f32<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, tc));
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_f64<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, f64));
	CUDA_CHECK(cudaFuncSetAttribute(k_mm_f64<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, f64));
}

void
ds_mm(enum ds_mm_kind kind, const void *A, const void *B, size_t nr, size_t nc, size_t K, size_t ldc, void *C,
    cudaStream_t st)
{
	size_t esz = kind == DS_MM_F64 ? 8 : 4;
	if (nr == 0 || nc == 0)
		return;
	if (K == 0) {
		CUDA_CHECK(cudaMemset2DAsync(C, ldc * esz, 0, nc * esz, nr, st));
		return;
	}
	int bm = kind == DS_MM_F64 ? F64_BM : TC_BM, bn = kind == DS_MM_F64 ? F64_BN : TC_BN;
	size_t gy = CEIL_DIV(nr, (size_t)bm), gx = CEIL_DIV(nc, (size_t)bn);
	if (gy > 65535 || gx > INT32_MAX)
		die("a product of %zu x %zu is too large for one launch", nr, nc);
	dim3 grid((unsigned)gx, (unsigned)gy);
	bool vec = vec_ok(A, B, K, esz);
	size_t sm = smem_bytes(bm, bn);
	const float *Af = (const float *)A, *Bf = (const float *)B;
	float *Cf = (float *)C;
	switch (kind) {
	case DS_MM_TF32:
		if (vec)
			k_mm_tf32<true><<<grid, TC_THREADS, sm, st>>>(Af, Bf, nr, nc, K, ldc, Cf);
		else
			k_mm_tf32<false><<<grid, TC_THREADS, sm, st>>>(Af, Bf, nr, nc, K, ldc, Cf);
		break;
	case DS_MM_F32:
		if (vec)
			k_mm_f32<true><<<grid, F32_THREADS, sm, st>>>(Af, Bf, nr, nc, K, ldc, Cf);
		else
			k_mm_f32<false><<<grid, F32_THREADS, sm, st>>>(Af, Bf, nr, nc, K, ldc, Cf);
		break;
	case DS_MM_F64:
		if (vec)
			k_mm_f64<true><<<grid, F64_THREADS, sm, st>>>((const double *)A, (const double *)B, nr, nc, K,
			    ldc, (double *)C);
		else
			k_mm_f64<false><<<grid, F64_THREADS, sm, st>>>((const double *)A, (const double *)B, nr, nc, K,
			    ldc, (double *)C);
		break;
	}
	CUDA_LAUNCH_CHECK();
}
