/* docsim_gemm.cu: the score tile as a GEMM, S = A B^T, through cuBLAS (DGEMM: float64
 * accumulation, the default; SGEMM with --precision single): the panels A and B
 * (resident, or uploaded or built a tile at a time), the product (for all pairs only the
 * lower triangle and blocks beside the diagonal), and the plan that sizes the tiles to
 * the device's memory budget. */
#include "docsim_dev.cuh"

__global__ void
k_f2d(const float *in, double *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

/* Rows [r0, r1) of a side as a GEMM panel: a pointer into the resident copy, or built
 * in buf. */
const void *
ds_panel(struct gpu *g, struct side *s, size_t r0, size_t r1, void *buf)
{
	size_t nr = r1 - r0, K = g->K;
	if (s->res != NULL)
		return (const char *)s->res + r0 * K * g->esz;
	if (g->sparse) {
		if (K == 0)
			return buf;
		CUDA_CHECK(cudaMemsetAsync(buf, 0, nr * K * 8, g->sa));
		ds_densify(&s->sp, r0, nr, (double *)buf, K, g->sa);
	} else if (g->dbl) {
		CUDA_CHECK(cudaMemcpyAsync(g->stage, s->host + r0 * K, nr * K * 4, cudaMemcpyHostToDevice, g->sa));
		k_f2d<<<grid_for(nr * K, 256), 256, 0, g->sa>>>(g->stage, (double *)buf, nr * K);
		CUDA_LAUNCH_CHECK();
	} else {
		CUDA_CHECK(cudaMemcpyAsync(buf, s->host + r0 * K, nr * K * 4, cudaMemcpyHostToDevice, g->sa));
	}
	return buf;
}

/* Floats of the staging buffer that dense float64 panels are converted through: a
 * chunk of rows (at most 64 MB) when resident, else the larger panel. */
size_t
ds_stage_floats(const struct gpu *g, int resident, size_t BR, size_t BC, size_t rows)
{
	if (g->sparse || !g->dbl)
		return 0;
	if (!resident)
		return MAX(BR, BC) * g->K;
	size_t chunk = MAX((size_t)1, ((size_t)16 << 20) / MAX(g->K, (size_t)1));
	return MIN(chunk, MAX(rows, (size_t)1)) * g->K;
}

/* The whole side, resident. */
void
ds_make_resident(struct gpu *g, struct side *s)
{
	size_t K = g->K, n = s->rows;
	s->res = dalloc<char>(mul_size(n * g->esz, K ? K : 1, "device panel"));
	if (n == 0 || K == 0)
		return;
	if (g->sparse) {
		CUDA_CHECK(cudaMemset(s->res, 0, n * K * 8));
		ds_densify(&s->sp, 0, n, (double *)s->res, K, 0);
	} else if (g->dbl) {
		size_t chunk = ds_stage_floats(g, 1, 0, 0, n) / K;
		for (size_t r0 = 0; r0 < n; r0 += chunk) {
			size_t nr = MIN(chunk, n - r0);
			CUDA_CHECK(cudaMemcpy(g->stage, s->host + r0 * K, nr * K * 4, cudaMemcpyHostToDevice));
			k_f2d<<<grid_for(nr * K, 256), 256>>>(g->stage, (double *)s->res + r0 * K, nr * K);
			CUDA_LAUNCH_CHECK();
		}
	} else {
		CUDA_CHECK(cudaMemcpy(s->res, s->host, n * K * 4, cudaMemcpyHostToDevice));
	}
}

/* C (nr x nc, row stride ldc) = A (nr x K) B (nc x K)^T. */
static void
gemm_block(struct gpu *g, const void *A, const void *B, size_t nr, size_t nc, size_t ldc, void *C)
{
	int m = (int)nc, n = (int)nr, k = (int)g->K;
	if (nr == 0 || nc == 0)
		return;
	if (g->dbl) {
		const double one = 1, zero = 0;
		BLAS_CHECK(ds_cublas.dgemm(ds_cublas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (const double *)B, k,
		    (const double *)A, k, &zero, (double *)C, (int)ldc));
	} else {
		const float one = 1, zero = 0;
		BLAS_CHECK(ds_cublas.sgemm(ds_cublas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (const float *)B, k,
		    (const float *)A, k, &zero, (float *)C, (int)ldc));
	}
}

/* The tile S (nr x nc) = A B^T of rows [r0, r0+nr) and columns [c0, c0+nc). For all
 * pairs only S[i][j] with j < i is used: the columns below r0 in one GEMM, and the part
 * beside the diagonal in row blocks (tune->diag_block rows) that stop at their last row, so most of the upper
 * triangle is not computed (and never read). */
void
ds_gemm(struct gpu *g, const void *A, const void *B, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
{
	if (g->K == 0) {
		CUDA_CHECK(cudaMemsetAsync(g->S, 0, nr * nc * g->esz, g->sa));
		return;
	}
	size_t c1 = c0 + nc;
	if (!sym || c1 <= r0) {
		gemm_block(g, A, B, nr, nc, nc, g->S);
		return;
	}
	size_t esz = g->esz, K = g->K, diag = g->job->tune->diag_block;
	if (c0 < r0)
		gemm_block(g, A, B, nr, r0 - c0, nc, g->S);
	size_t d0 = MAX(c0, r0);	/* the first column beside the diagonal */
	for (size_t a = 0; a < nr; a += diag) {
		size_t rb = MIN(nr, a + diag), end = MIN(c1, r0 + rb);
		if (end <= d0)
			continue;
		gemm_block(g, (const char *)A + a * K * esz, (const char *)B + (d0 - c0) * K * esz,
		    rb - a, end - d0, nc, (char *)g->S + (a * nc + (d0 - c0)) * esz);
	}
}

/* Bytes the plan needs beyond the fixed part. */
static size_t
plan_bytes(const struct gpu *g, int resident, size_t BR, size_t BC, size_t rows_q)
{
	const struct ds_job *j = g->job;
	size_t b = BR * BC * g->esz * (j->mode == DS_TOPK ? 2 : 1);
	if (j->mode == DS_MATRIX && g->esz == 8)
		b += BR * BC * 4;
	if (resident)
		b += (j->n + rows_q) * g->K * g->esz;
	else
		b += (BR + BC) * g->K * g->esz;
	return b + 4 * ds_stage_floats(g, resident, BR, BC, MAX(j->n, rows_q));
}

/* The tiles: resident vectors if they fit, then the largest tile area that fits
 * (rows at most tune->tile_rows), so a tight budget still gets tiles of a useful shape. */
void
ds_choose_plan(struct gpu *g, size_t budget, size_t fixed, size_t rows_side, size_t rows_q)
{
	size_t n = g->job->n, tile_rows = g->job->tune->tile_rows;
	for (int res = 1; res >= 0; res--) {
		size_t best = 0;
		for (size_t BR = MIN(rows_side, tile_rows); BR >= 1; BR = BR == 1 ? 0 : CEIL_DIV(BR, 2))
			for (size_t BC = n; BC >= 1; BC = BC == 1 ? 0 : CEIL_DIV(BC, 2))
				if (fixed + plan_bytes(g, res, BR, BC, rows_q) <= budget) {
					if (BR * BC > best) {
						best = BR * BC;
						g->resident = res;
						g->BR = BR;
						g->BC = BC;
					}
					break;
				}
		if (best > 0)
			return;
	}
	die("device memory of %zu bytes is too small for this input (it needs at least %zu; see --max-device-mem)",
	    budget, fixed + plan_bytes(g, 0, 1, 1, rows_q));
}
