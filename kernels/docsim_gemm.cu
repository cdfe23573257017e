/* docsim_gemm.cu: the score tile as a GEMM, S = A B^T, by docsim_mma.cu's kernels
 * (float64, the default; TF32 tensor cores for dense top-k lists, which
 * docsim_exact.cu makes exact; float32 with --precision single): the panels A and B
 * (resident, or uploaded or built a tile at a time; dense rows go up as float32 through
 * the pinned staging ring and are widened on the device), the product (for all pairs
 * only the lower triangle and blocks beside the diagonal), and the plan that sizes the
 * tiles to the device's memory budget. */
#include "docsim_dev.cuh"
#include "timer.h"

__global__ void
k_f2d(const float *in, double *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

/* n floats of host memory into dst on the device (widened to doubles when g->dbl),
 * through the pinned ring on su: the host fills one buffer (on the -j threads) while the
 * bus carries the one before, beside the GPU's work on sa. Work queued on sa after it
 * waits for the copies; with in_use, the copies wait for the work queued before (dst is
 * a panel buffer that work still reads). Returns once the last copy is queued. Widening
 * goes through the one device stage, each copy into it after the last widening on su. */
static void
upload_rows(struct gpu *g, const float *host, size_t n, void *dst, int in_use)
{
	size_t chunk = DS_RING_BYTES / 4;
	if (n == 0)
		return;
	double t = now_sec();
	if (g->dbl)
		chunk = MIN(chunk, g->stage_floats);
	if (in_use) {
		CUDA_CHECK(cudaEventRecord(g->ev_work, g->sa));
		CUDA_CHECK(cudaStreamWaitEvent(g->su, g->ev_work, 0));
	}
	for (size_t off = 0; off < n; off += chunk) {
		size_t m = MIN(chunk, n - off);
		struct stage *b = staging_acquire(g->ring);
		ds_host_copy(b->p, host + off, m * 4);
		if (g->dbl) {
			staging_h2d(g->ring, b, g->stage, m * 4);
			k_f2d<<<grid_for(m, 256), 256, 0, g->su>>>(g->stage, (double *)dst + off, m);
			CUDA_LAUNCH_CHECK();
		} else {
			staging_h2d(g->ring, b, (float *)dst + off, m * 4);
		}
	}
	CUDA_CHECK(cudaEventRecord(g->ev_up, g->su));
	CUDA_CHECK(cudaStreamWaitEvent(g->sa, g->ev_up, 0));
	g->up_bytes += (double)n * 4;
	g->up_sec += now_sec() - t;
}

/* Rows [r0, r1) of a side as a GEMM panel: a pointer into the resident copy (whose
 * rows the caller made ready), or built in buf. */
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
	} else {
		upload_rows(g, s->host + r0 * K, nr * K, buf, 1);
	}
	return buf;
}

/* Floats of the device stage that dense float64 panels are widened from: a ring
 * buffer's worth at most, and no more than the rows it serves. */
size_t
ds_stage_floats(const struct gpu *g, int resident, size_t BR, size_t BC, size_t rows)
{
	if (g->sparse || !g->dbl)
		return 0;
	size_t rows_at_once = resident ? MAX(rows, (size_t)1) : MAX(BR, BC);
	return MIN(DS_RING_BYTES / 4, rows_at_once * g->K);
}

/* The whole side, resident: sparse panels built at once; dense rows uploaded as the
 * tile loop comes to them (ds_side_ready), so the upload overlaps the work. */
void
ds_make_resident(struct gpu *g, struct side *s)
{
	size_t K = g->K, n = s->rows;
	s->res = dalloc<char>(mul_size(n * g->esz, K ? K : 1, "device panel"));
	s->ready = 0;
	if (n == 0 || K == 0 || !g->sparse)
		return;
	CUDA_CHECK(cudaMemset(s->res, 0, n * K * 8));
	ds_densify(&s->sp, 0, n, (double *)s->res, K, 0);
}

/* Rows [0, r1) of a resident dense side on the device, for the work queued after. */
void
ds_side_ready(struct gpu *g, struct side *s, size_t r1)
{
	if (g->sparse || s->res == NULL || s->ready >= r1)
		return;
	size_t K = g->K;
	upload_rows(g, s->host + s->ready * K, (r1 - s->ready) * K, (char *)s->res + s->ready * K * g->esz, 0);
	s->ready = r1;
}

/* C (nr x nc, row stride ldc) = A (nr x K) B (nc x K)^T. */
static void
gemm_block(struct gpu *g, const void *A, const void *B, size_t nr, size_t nc, size_t ldc, void *C)
{
	/* fast: float32 operands read as TF32 by the tensor cores, float32 sums: the error
	 * ds_fast_bound allows for */
	ds_mm(g->fast ? DS_MM_TF32 : g->dbl ? DS_MM_F64 : DS_MM_F32, A, B, nr, nc, g->K, ldc, C, g->sa);
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
 * (rows at most tune->tile_rows), so a tight budget still gets tiles of a useful shape.
 * 0 when not even 1 x 1 tiles fit (ds_plan_least then says what would).
 *
 * It ends: BR takes the values min(rows_side, tile_rows), then each halved rounding up,
 * down to 1, after which the update gives 0 and the loop stops: at most
 * ceil(log2 tile_rows) + 1 values. BC likewise from n: at most ceil(log2 n) + 1. So at
 * most 2 x 13 x 33 calls of plan_bytes for tile_rows 4096 and n < 2^32. And it finds a
 * plan whenever the least one (ds_plan_least) fits: plan_bytes grows with BR and BC,
 * and both loops, resident and streamed, end at BR = BC = 1. */
int
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
			return 1;
	}
	return 0;
}

/* The bytes of the least plan, beyond the fixed part: 1 x 1 tiles, streamed or, for a
 * lone document (its one row against a tile's two), resident. */
size_t
ds_plan_least(const struct gpu *g, size_t rows_q)
{
	return MIN(plan_bytes(g, 0, 1, 1, rows_q), plan_bytes(g, 1, 1, 1, rows_q));
}

/* The least plan with the vectors resident (the TF32 products' only plan). */
size_t
ds_plan_least_resident(const struct gpu *g, size_t rows_q)
{
	return plan_bytes(g, 1, 1, 1, rows_q);
}
