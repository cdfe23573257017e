/* docsim.cu: the CUDA path.
 *
 * Scores come in tiles S = A B^T of rows [r0,r1) (queries, or the corpus itself) against
 * corpus rows [c0,c1), and are ranked inside the tile loop, so memory stays
 * O(rows x k + tile) whatever the corpus size.
 *   - Dense input: A and B are panels of the vectors; S by cuBLAS (DGEMM: float64
 *     accumulation, the default; SGEMM with --precision single).
 *   - Sparse input: the frequent terms (document frequency above n/50, at most 65536 of
 *     them) form dense panels and go through DGEMM; every other term is added into S
 *     from its postings by k_scatter, a warp a row.
 *   - All pairs: only the lower triangle (columns below the row) is computed; each score
 *     is offered to its row (k_rowsel, a warp a row) and to its column's row (k_colsel,
 *     a thread a column), each pair once.
 * Vectors stay resident when they fit the device budget (--max-device-mem, else what is
 * free); otherwise panels are uploaded or built tile by tile. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "cudadev.h"
#include "docsim.h"
#include "err.h"
#include "timer.h"

#define FULL 0xffffffffu
#define ROWSEL_UNROLL 4
#define COLSEL_UNROLL 8
#define TILE_ROWS 4096		/* rows of a tile, at most */
#define DENSE_TERMS_MAX 65536	/* sparse input: frequent terms done by DGEMM, at most */
#define DENSE_DF_DIVISOR 50	/* a term is frequent when its df exceeds n / this */

static cublasHandle_t blas;

/* ---------------------------------------------------------------- kernels */

__global__ void
k_fill_state(float *s, int32_t *id, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		s[i] = -INFINITY;
		id[i] = DS_NONE;
	}
}

__global__ void
k_f2d(const float *in, double *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

__global__ void
k_d2f(const double *in, float *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = (float)in[i] + 0.0f;
}

/* Rows [r0, r0+nr) of a CSR whose columns are dense indexes, into out (nr x F, zeroed). */
__global__ void
k_densify(const uint64_t *ptr, const uint32_t *col, const float *val, size_t r0, int nr,
    double *out, int F)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nr)
		return;
	for (uint64_t e = ptr[r0 + i]; e < ptr[r0 + i + 1]; e++)
		out[(size_t)i * F + col[e]] = val[e];
}

__device__ static uint64_t
lower_bound(const uint32_t *a, uint64_t lo, uint64_t hi, uint64_t key)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* S[i - r0][j - c0] += w_it w_jt over the rare terms t of row i and the corpus rows j
 * in [c0, c1) (j < i as well for all pairs). A warp a row; the lanes share a term's
 * postings, so within a term no two lanes touch the same j. */
__global__ void
k_scatter(const uint64_t *rptr, const uint32_t *rcol, const float *rval,
    const uint64_t *cptr, const uint32_t *cdoc, const float *cval,
    size_t r0, int nr, size_t c0, size_t c1, int sym, double *S, size_t ldS)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w, hi = c1;
	if (sym && i < hi)
		hi = i;
	if (hi <= c0)
		return;
	double *row = S + (size_t)w * ldS;
	for (uint64_t e = rptr[i]; e < rptr[i + 1]; e++) {
		uint32_t t = rcol[e];
		double wt = rval[e];
		uint64_t lo = lower_bound(cdoc, cptr[t], cptr[t + 1], c0);
		uint64_t up = lower_bound(cdoc, lo, cptr[t + 1], hi);
		for (uint64_t p = lo + lane; p < up; p += 32)
			row[cdoc[p] - c0] += wt * (double)cval[p];
		__syncwarp();
	}
}

/* The columns a warp's row i = r0 + w of the tile ranks: [0, return value) of the tile,
 * all nc of them, or for all pairs only j < i (0 or less: none). */
__device__ static long
row_columns(size_t r0, int w, size_t c0, int nc, int sym)
{
	long cend = nc, below = (long)(r0 + w) - (long)c0;
	return sym && below < cend ? below : cend;
}

/* Each row i of the tile offers its columns j (j < i for all pairs) to its own list.
 * A warp a row; candidates that beat the list's last entry go in one at a time. */
template <typename T>
__global__ void
k_rowsel(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, int sym,
    float *tops, int32_t *topi, int k, int use_thr, double thr)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w;
	long cend = row_columns(r0, w, c0, nc, sym);
	if (cend <= 0)
		return;
	float *ls = tops + i * (size_t)k;
	int32_t *li = topi + i * (size_t)k;
	float ts = ls[k - 1];
	int32_t ti = li[k - 1];
	const T *row = S + (size_t)w * ldS;
	for (long base = 0; base < cend; base += 32 * ROWSEL_UNROLL) {
		float v[ROWSEL_UNROLL];
#pragma unroll
		for (int u = 0; u < ROWSEL_UNROLL; u++) {
			long jj = base + u * 32 + lane;
			v[u] = jj < cend ? (float)row[jj] : -INFINITY;
		}
#pragma unroll
		for (int u = 0; u < ROWSEL_UNROLL; u++) {
			long jj = base + u * 32 + lane;
			int32_t j = (int32_t)(c0 + jj);
			bool cand = jj < cend && ds_passes(v[u], use_thr, thr) && ds_better(v[u], j, ts, ti);
			unsigned m = __ballot_sync(FULL, cand);
			while (m != 0) {
				int src = __ffs(m) - 1;
				m &= m - 1;
				float cs = __shfl_sync(FULL, v[u], src);
				int32_t cj = (int32_t)(c0 + base + u * 32 + src);
				if (ds_better(cs, cj, ts, ti)) {
					if (lane == 0)
						ds_insert(ls, li, (size_t)k, cs, cj);
					__syncwarp();
					ts = ls[k - 1];
					ti = li[k - 1];
					__syncwarp();
				}
			}
		}
	}
}

/* All pairs: each column j of the tile takes the rows i > j as candidates for its own
 * list. A thread a column, reading down the column (coalesced across the warp). */
template <typename T>
__global__ void
k_colsel(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, float *tops,
    int32_t *topi, int k, int use_thr, double thr)
{
	int jj = (int)(blockIdx.x * (size_t)blockDim.x + threadIdx.x);
	if (jj >= nc)
		return;
	size_t j = c0 + jj;
	long ii0 = (long)j + 1 - (long)r0;
	if (ii0 < 0)
		ii0 = 0;
	if (ii0 >= nr)
		return;
	float *ls = tops + j * (size_t)k;
	int32_t *li = topi + j * (size_t)k;
	float ts = ls[k - 1];
	int32_t ti = li[k - 1];
	for (long ii = ii0; ii < nr; ii += COLSEL_UNROLL) {
		float v[COLSEL_UNROLL];
#pragma unroll
		for (int u = 0; u < COLSEL_UNROLL; u++)
			v[u] = ii + u < nr ? (float)S[(size_t)(ii + u) * ldS + jj] : -INFINITY;
#pragma unroll
		for (int u = 0; u < COLSEL_UNROLL; u++) {
			int32_t i = (int32_t)(r0 + ii + u);
			if (ii + u < nr && ds_passes(v[u], use_thr, thr) && ds_better(v[u], i, ts, ti)) {
				ds_insert(ls, li, (size_t)k, v[u], i);
				ts = ls[k - 1];
				ti = li[k - 1];
			}
		}
	}
}

/* -k 0: every pair of the tile at or above the threshold (j < i for all pairs, then
 * written lower index first). Warp-aggregated appends; the count goes on past cap so
 * the caller can grow the buffer and run the tile again. */
template <typename T>
__global__ void
k_rowpairs(const T *S, size_t ldS, size_t r0, int nr, size_t c0, int nc, int sym, double thr,
    struct ds_pair *out, unsigned long long *count, unsigned long long cap)
{
	int w = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
	if (w >= nr)
		return;
	size_t i = r0 + w;
	long cend = row_columns(r0, w, c0, nc, sym);
	const T *row = S + (size_t)w * ldS;
	for (long base = 0; base < cend; base += 32) {
		long jj = base + lane;
		float s = jj < cend ? (float)row[jj] : 0.0f;
		bool pass = jj < cend && ds_passes(s, 1, thr);
		unsigned m = __ballot_sync(FULL, pass);
		if (m == 0)
			continue;
		int leader = __ffs(m) - 1;
		unsigned long long at = 0;
		if (lane == leader)
			at = atomicAdd(count, (unsigned long long)__popc(m));
		at = __shfl_sync(FULL, at, leader) + __popc(m & ((1u << lane) - 1));
		if (pass && at < cap) {
			uint32_t a = (uint32_t)i, b = (uint32_t)(c0 + jj);
			out[at] = sym ? ds_pair{b, a, s} : ds_pair{a, b, s};
		}
	}
}

/* ---------------------------------------------------------------- host side */

template <typename T>
static T *
dalloc(size_t n)
{
	void *p = NULL;
	CUDA_CHECK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
	return (T *)p;
}

template <typename T>
static T *
upload(const T *h, size_t n)
{
	T *d = dalloc<T>(n);
	if (n)
		CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
	return d;
}

static int
grid_for(size_t n, int block)
{
	size_t g = CEIL_DIV(n, (size_t)block);
	return (int)(g < 65535 * 16 ? (g ? g : 1) : 65535 * 16);
}

/* A CSR split by a column map: entries whose column maps to a dense index (freq) and
 * the others (rare, original columns). */
struct split {
	uint64_t *fptr, *rptr;
	uint32_t *fcol, *rcol;
	float *fval, *rval;
};

static void
split_csr(const struct csr *m, const int32_t *dense_of, size_t dim, struct split *s)
{
	size_t n = m->rows;
	s->fptr = (uint64_t *)xcalloc(n + 1, sizeof(uint64_t));
	s->rptr = (uint64_t *)xcalloc(n + 1, sizeof(uint64_t));
	for (size_t r = 0; r < n; r++) {
		uint64_t f = 0, q = 0;
		for (uint64_t e = m->ptr[r]; e < m->ptr[r + 1]; e++) {
			uint32_t t = m->idx[e];
			if (t >= dim)
				continue;
			if (dense_of[t] >= 0)
				f++;
			else
				q++;
		}
		s->fptr[r + 1] = s->fptr[r] + f;
		s->rptr[r + 1] = s->rptr[r] + q;
	}
	s->fcol = (uint32_t *)xmallocarray(s->fptr[n] + 1, sizeof(uint32_t));
	s->fval = (float *)xmallocarray(s->fptr[n] + 1, sizeof(float));
	s->rcol = (uint32_t *)xmallocarray(s->rptr[n] + 1, sizeof(uint32_t));
	s->rval = (float *)xmallocarray(s->rptr[n] + 1, sizeof(float));
	for (size_t r = 0; r < n; r++) {
		uint64_t f = s->fptr[r], q = s->rptr[r];
		for (uint64_t e = m->ptr[r]; e < m->ptr[r + 1]; e++) {
			uint32_t t = m->idx[e];
			if (t >= dim)
				continue;
			if (dense_of[t] >= 0) {
				s->fcol[f] = (uint32_t)dense_of[t];
				s->fval[f++] = m->val[e];
			} else {
				s->rcol[q] = t;
				s->rval[q++] = m->val[e];
			}
		}
	}
}

static void
dfree(void *p)
{
	cudaFree(p);
}

/* Frees a split in host (free) or device (dfree) memory. */
static void
split_free(struct split *s, void (*release)(void *))
{
	release(s->fptr);
	release(s->rptr);
	release(s->fcol);
	release(s->rcol);
	release(s->fval);
	release(s->rval);
}

static size_t
split_bytes(const struct split *s, size_t n)
{
	return (2 * (n + 1)) * 8 + (s->fptr[n] + s->rptr[n]) * 8;
}

/* The device copy of a split: the dense-index part (for panels) and the rare part. */
static void
split_upload(const struct split *s, size_t n, struct split *d)
{
	d->fptr = upload(s->fptr, n + 1);
	d->rptr = upload(s->rptr, n + 1);
	d->fcol = upload(s->fcol, s->fptr[n]);
	d->fval = upload(s->fval, s->fptr[n]);
	d->rcol = upload(s->rcol, s->rptr[n]);
	d->rval = upload(s->rval, s->rptr[n]);
}

/* One side of the product (the corpus, or the queries): where its panels come from. */
struct side {
	size_t rows;
	const float *host;	/* dense input: normalised rows, host memory */
	struct split sp;	/* sparse input, on the device */
	void *res;		/* resident panels (rows x K of the GEMM type), or NULL */
};

struct gpu {
	const struct ds_job *job;
	int sparse, dbl, sym;
	size_t K;		/* GEMM depth: dim (dense) or F (sparse) */
	size_t esz;		/* bytes of a GEMM element */
	size_t BR, BC;		/* tile rows and columns */
	int resident;
	void *pa, *pb;		/* panel buffers (streaming) */
	float *stage;		/* float staging for double panels of dense input */
	void *S;		/* the tile being computed: Sbuf[cur] */
	void *Sbuf[2];		/* top-k: two, so one is ranked while the next is computed */
	int nbuf, cur, used[2];
	cudaStream_t sa, sb;	/* sa: panels, GEMM, scatter; sb: ranking and results */
	cudaEvent_t gstart[2], gdone[2], sstart[2], sdone[2];
	double gemm_ms, rank_ms;	/* -v: the busy time of each stream */
	float *conv;		/* matrix mode: the tile as float */
	/* sparse: the corpus's rare postings */
	uint64_t *cptr;
	uint32_t *cdoc;
	float *cval;
	/* selection state */
	float *tops;
	int32_t *topi;
	struct ds_pair *pairs;
	unsigned long long *count, cap;
};

/* Rows [r0, r1) of a side as a GEMM panel: a pointer into the resident copy, or built
 * in buf. */
static const void *
panel(struct gpu *g, struct side *s, size_t r0, size_t r1, void *buf)
{
	size_t nr = r1 - r0, K = g->K;
	if (s->res != NULL)
		return (const char *)s->res + r0 * K * g->esz;
	if (g->sparse) {
		if (K == 0)
			return buf;
		CUDA_CHECK(cudaMemsetAsync(buf, 0, nr * K * 8, g->sa));
		k_densify<<<grid_for(nr, 256), 256, 0, g->sa>>>(s->sp.fptr, s->sp.fcol, s->sp.fval, r0,
		    (int)nr, (double *)buf, (int)K);
		CUDA_LAUNCH_CHECK();
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
static size_t
stage_floats(const struct gpu *g, int resident, size_t BR, size_t BC, size_t rows)
{
	if (g->sparse || !g->dbl)
		return 0;
	if (!resident)
		return MAX(BR, BC) * g->K;
	size_t chunk = MAX((size_t)1, ((size_t)16 << 20) / MAX(g->K, (size_t)1));
	return MIN(chunk, MAX(rows, (size_t)1)) * g->K;
}

/* The whole side, resident. */
static void
make_resident(struct gpu *g, struct side *s)
{
	size_t K = g->K, n = s->rows;
	s->res = dalloc<char>(mul_size(n * g->esz, K ? K : 1, "device panel"));
	if (n == 0 || K == 0)
		return;
	if (g->sparse) {
		CUDA_CHECK(cudaMemset(s->res, 0, n * K * 8));
		k_densify<<<grid_for(n, 256), 256>>>(s->sp.fptr, s->sp.fcol, s->sp.fval, 0, (int)n,
		    (double *)s->res, (int)K);
		CUDA_LAUNCH_CHECK();
	} else if (g->dbl) {
		size_t chunk = stage_floats(g, 1, 0, 0, n) / K;
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
		CUBLAS_CHECK(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (const double *)B, k,
		    (const double *)A, k, &zero, (double *)C, (int)ldc));
	} else {
		const float one = 1, zero = 0;
		CUBLAS_CHECK(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (const float *)B, k,
		    (const float *)A, k, &zero, (float *)C, (int)ldc));
	}
}

#define DIAG_BLOCK 512	/* rows a GEMM of the diagonal part of an all-pairs tile */

/* The tile S (nr x nc) = A B^T of rows [r0, r0+nr) and columns [c0, c0+nc). For all
 * pairs only S[i][j] with j < i is used: the columns below r0 in one GEMM, and the part
 * beside the diagonal in row blocks that stop at their last row, so most of the upper
 * triangle is not computed (and never read). */
static void
gemm(struct gpu *g, const void *A, const void *B, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
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
	size_t esz = g->esz, K = g->K;
	if (c0 < r0)
		gemm_block(g, A, B, nr, r0 - c0, nc, g->S);
	size_t d0 = MAX(c0, r0);	/* the first column beside the diagonal */
	for (size_t a = 0; a < nr; a += DIAG_BLOCK) {
		size_t rb = MIN(nr, a + DIAG_BLOCK), end = MIN(c1, r0 + rb);
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
	return b + 4 * stage_floats(g, resident, BR, BC, MAX(j->n, rows_q));
}

/* The tiles: resident vectors if they fit, then the largest tile area that fits
 * (rows at most TILE_ROWS), so a tight budget still gets tiles of a useful shape. */
static void
choose_plan(struct gpu *g, size_t budget, size_t fixed, size_t rows_side, size_t rows_q)
{
	size_t n = g->job->n;
	for (int res = 1; res >= 0; res--) {
		size_t best = 0;
		for (size_t BR = MIN(rows_side, (size_t)TILE_ROWS); BR >= 1; BR = BR == 1 ? 0 : CEIL_DIV(BR, 2))
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

struct dfterm {
	uint64_t df;
	uint32_t t;
};

static int
dfterm_cmp(const void *a, const void *b)
{
	const struct dfterm *x = (const struct dfterm *)a, *y = (const struct dfterm *)b;
	if (x->df != y->df)
		return x->df > y->df ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* The frequent terms of a sparse corpus: dense_of[t] = their dense index, by df. */
static size_t
frequent_terms(const struct csr *c, size_t dim, int32_t *dense_of)
{
	size_t n = c->rows;
	uint64_t *df = (uint64_t *)xcalloc(dim ? dim : 1, sizeof(uint64_t));
	for (uint64_t e = 0; e < csr_nnz(c); e++)
		df[c->idx[e]] += c->val[e] != 0;
	uint64_t cut = MAX((uint64_t)1, (uint64_t)(n / DENSE_DF_DIVISOR));
	size_t F = 0;
	uint32_t *cand = (uint32_t *)xmallocarray(dim ? dim : 1, sizeof(uint32_t));
	for (size_t t = 0; t < dim; t++) {
		dense_of[t] = -1;
		if (df[t] > cut)
			cand[F++] = (uint32_t)t;
	}
	/* most frequent first (then by term), at most DENSE_TERMS_MAX */
	struct dfterm *byf = (struct dfterm *)xmallocarray(F ? F : 1, sizeof(struct dfterm));
	for (size_t f = 0; f < F; f++)
		byf[f] = dfterm{df[cand[f]], cand[f]};
	qsort(byf, F, sizeof *byf, dfterm_cmp);
	F = MIN(F, (size_t)DENSE_TERMS_MAX);
	for (size_t f = 0; f < F; f++)
		dense_of[byf[f].t] = (int32_t)f;
	free(byf);
	free(cand);
	free(df);
	return F;
}

/* The corpus's rare entries by term: postings with rows ascending. */
static void
rare_postings(const struct split *s, size_t n, size_t dim, struct gpu *g, size_t *bytes)
{
	uint64_t nnz = s->rptr[n];
	uint64_t *cp = (uint64_t *)xcalloc(dim + 1, sizeof(uint64_t));
	uint32_t *doc = (uint32_t *)xmallocarray(nnz + 1, sizeof(uint32_t));
	float *val = (float *)xmallocarray(nnz + 1, sizeof(float));
	for (uint64_t e = 0; e < nnz; e++)
		cp[s->rcol[e] + 1]++;
	for (size_t t = 0; t < dim; t++)
		cp[t + 1] += cp[t];
	uint64_t *fill = (uint64_t *)xmallocarray(dim + 1, sizeof(uint64_t));
	memcpy(fill, cp, (dim + 1) * sizeof(uint64_t));
	for (size_t r = 0; r < n; r++)
		for (uint64_t e = s->rptr[r]; e < s->rptr[r + 1]; e++) {
			uint64_t at = fill[s->rcol[e]]++;
			doc[at] = (uint32_t)r;
			val[at] = s->rval[e];
		}
	g->cptr = upload(cp, dim + 1);
	g->cdoc = upload(doc, nnz);
	g->cval = upload(val, nnz);
	*bytes = (dim + 1) * 8 + nnz * 8;
	free(fill);
	free(cp);
	free(doc);
	free(val);
}

template <typename T>
static void
select_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc, int sym)
{
	const struct ds_job *j = g->job;
	const T *S = (const T *)g->S;
	if (j->mode == DS_TOPK) {
		if (j->k == 0)
			return;
		k_rowsel<T><<<grid_for(nr * 32, 256), 256, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc, sym,
		    g->tops, g->topi, (int)j->k, j->use_thr, j->thr);
		CUDA_LAUNCH_CHECK();
		if (sym) {
			k_colsel<T><<<grid_for(nc, 128), 128, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc, g->tops,
			    g->topi, (int)j->k, j->use_thr, j->thr);
			CUDA_LAUNCH_CHECK();
		}
	} else {
		k_rowpairs<T><<<grid_for(nr * 32, 256), 256, 0, g->sb>>>(S, nc, r0, (int)nr, c0, (int)nc, sym,
		    j->thr, g->pairs, g->count, g->cap);
		CUDA_LAUNCH_CHECK();
	}
}

/* Host-side list of pairs found so far. */
struct hpairs {
	struct ds_pair *p;
	size_t n, cap;
};

/* -v: adds the last use of buffer b to the streams' busy times. */
static void
busy_time(struct gpu *g, int b)
{
	float ms;
	CUDA_CHECK(cudaEventSynchronize(g->sdone[b]));
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->gstart[b], g->gdone[b]));
	g->gemm_ms += ms;
	CUDA_CHECK(cudaEventElapsedTime(&ms, g->sstart[b], g->sdone[b]));
	g->rank_ms += ms;
}

static void
tile(struct gpu *g, const void *A, const void *B, size_t r0, size_t nr, size_t c0, size_t nc,
    int sym, struct side *rows_side, struct hpairs *hp, double *d2h)
{
	const struct ds_job *j = g->job;
	int b = g->cur;

	/* sa computes the tile once sb is done with the buffer's last one */
	g->S = g->Sbuf[b];
	if (g->used[b]) {
		if (verbose)
			busy_time(g, b);
		CUDA_CHECK(cudaStreamWaitEvent(g->sa, g->sdone[b], 0));
	}
	CUDA_CHECK(cudaEventRecord(g->gstart[b], g->sa));
	gemm(g, A, B, r0, nr, c0, nc, sym);
	if (g->sparse) {
		k_scatter<<<grid_for(nr * 32, 256), 256, 0, g->sa>>>(rows_side->sp.rptr, rows_side->sp.rcol,
		    rows_side->sp.rval, g->cptr, g->cdoc, g->cval, r0, (int)nr, c0, c0 + nc, sym,
		    (double *)g->S, nc);
		CUDA_LAUNCH_CHECK();
	}
	CUDA_CHECK(cudaEventRecord(g->gdone[b], g->sa));
	CUDA_CHECK(cudaStreamWaitEvent(g->sb, g->gdone[b], 0));
	CUDA_CHECK(cudaEventRecord(g->sstart[b], g->sb));
	g->used[b] = 1;
	g->cur = (b + 1) % g->nbuf;

	if (j->mode == DS_MATRIX) {
		const float *src = (const float *)g->S;
		if (g->esz == 8) {
			k_d2f<<<grid_for(nr * nc, 256), 256, 0, g->sb>>>((const double *)g->S, g->conv, nr * nc);
			CUDA_LAUNCH_CHECK();
			src = g->conv;
		}
		CUDA_CHECK(cudaMemcpy2DAsync(j->mat + r0 * j->n + c0, j->n * 4, src, nc * 4, nc * 4, nr,
		    cudaMemcpyDeviceToHost, g->sb));
	} else {
		if (j->mode == DS_PAIRS)
			CUDA_CHECK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->sb));
		if (g->esz == 8)
			select_tile<double>(g, r0, nr, c0, nc, sym);
		else
			select_tile<float>(g, r0, nr, c0, nc, sym);
	}
	CUDA_CHECK(cudaEventRecord(g->sdone[b], g->sb));
	if (j->mode == DS_TOPK)
		return;

	double t = now_sec();
	CUDA_CHECK(cudaStreamSynchronize(g->sb));
	*d2h += now_sec() - t;
	if (j->mode != DS_PAIRS)
		return;
	unsigned long long cnt;
	CUDA_CHECK(cudaMemcpy(&cnt, g->count, sizeof cnt, cudaMemcpyDeviceToHost));
	if (cnt > g->cap) {
		/* too many for the buffer: grow it and go through the tile again */
		CUDA_CHECK(cudaFree(g->pairs));
		g->cap = cnt + cnt / 4;
		g->pairs = dalloc<struct ds_pair>(g->cap);
		CUDA_CHECK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->sb));
		if (g->esz == 8)
			select_tile<double>(g, r0, nr, c0, nc, sym);
		else
			select_tile<float>(g, r0, nr, c0, nc, sym);
		CUDA_CHECK(cudaStreamSynchronize(g->sb));
	}
	if (hp->n + cnt > hp->cap) {
		hp->cap = MAX(2 * hp->cap, hp->n + cnt);
		hp->p = (struct ds_pair *)xreallocarray(hp->p, hp->cap, sizeof *hp->p);
	}
	t = now_sec();
	if (cnt)
		CUDA_CHECK(cudaMemcpy(hp->p + hp->n, g->pairs, cnt * sizeof *hp->p, cudaMemcpyDeviceToHost));
	hp->n += cnt;
	*d2h += now_sec() - t;
}

extern "C" void
ds_gpu_init(const struct cuda_dev *dev)
{
	CUDA_CHECK(cudaSetDevice(dev->ids[0]));
	if (blas == NULL)
		CUBLAS_CHECK(cublasCreate(&blas));
}

extern "C" void
ds_gpu_run(struct ds_job *job, const struct cuda_dev *dev)
{
	struct gpu g;
	ds_gpu_init(dev);
	double t0 = now_sec();
	memset(&g, 0, sizeof g);
	g.job = job;
	g.sparse = job->sparse;
	g.sym = job->sym && job->mode != DS_MATRIX;
	g.dbl = g.sparse || !job->single;
	g.esz = g.dbl ? 8 : 4;

	size_t n = job->n, nq = job->nq, rows_side = g.sym ? n : nq;
	if (n >= (size_t)INT32_MAX || nq >= (size_t)INT32_MAX)
		die("more than %d documents are too many for the GPU path (use -d cpu)", INT32_MAX - 1);
	const struct csr *qc = job->sym ? job->c : job->q;
	const float *qh = job->sym ? job->cd : job->qd;
	struct side cs, qs;
	memset(&cs, 0, sizeof cs);
	memset(&qs, 0, sizeof qs);
	cs.rows = n;
	qs.rows = nq;
	size_t fixed = 0, rows_q = job->sym ? 0 : nq;	/* rows_q: queries of their own */

	if (g.sparse) {
		size_t dim = job->c->cols;
		int32_t *dense_of = (int32_t *)xmallocarray(dim ? dim : 1, sizeof(int32_t));
		g.K = frequent_terms(job->c, dim, dense_of);
		struct split sc, sq;
		split_csr(job->c, dense_of, dim, &sc);
		split_upload(&sc, n, &cs.sp);
		fixed += split_bytes(&sc, n);
		size_t pb;
		rare_postings(&sc, n, dim, &g, &pb);
		fixed += pb;
		if (job->sym) {
			qs.sp = cs.sp;
		} else {
			split_csr(qc, dense_of, dim, &sq);
			split_upload(&sq, nq, &qs.sp);
			fixed += split_bytes(&sq, nq);
			split_free(&sq, free);
		}
		split_free(&sc, free);
		free(dense_of);
		vlog("gpu: %zu frequent terms by DGEMM, the rest of %zu by postings", g.K, dim);
	} else {
		g.K = job->dim;
		cs.host = job->cd;
		qs.host = qh;
	}
	if (job->mode == DS_TOPK)
		fixed += rows_side * job->k * 8;
	size_t budget = job->max_mem;
	if (budget == 0) {
		size_t fr, tot, margin = (size_t)256 << 20;	/* cuBLAS workspace and the like */
		CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
		budget = fr / 100 * 92 > margin ? fr / 100 * 92 - margin : 0;
	}
	if (job->mode == DS_PAIRS) {
		g.cap = MIN((unsigned long long)1 << 20, MAX((unsigned long long)1024,
		    (unsigned long long)(budget / 16 / sizeof(struct ds_pair))));
		fixed += g.cap * sizeof(struct ds_pair) + 8;
	}
	choose_plan(&g, budget, fixed, rows_side, rows_q);
	vlog("gpu: tiles of %zu x %zu, vectors %s, %s", g.BR, g.BC,
	    g.resident ? "resident" : "streamed by panel", g.dbl ? "float64 accumulation" : "float32 GEMM");

	g.nbuf = job->mode == DS_TOPK ? 2 : 1;
	for (int b = 0; b < g.nbuf; b++) {
		g.Sbuf[b] = dalloc<char>(g.BR * g.BC * g.esz);
		CUDA_CHECK(cudaEventCreate(&g.gstart[b]));
		CUDA_CHECK(cudaEventCreate(&g.gdone[b]));
		CUDA_CHECK(cudaEventCreate(&g.sstart[b]));
		CUDA_CHECK(cudaEventCreate(&g.sdone[b]));
	}
	/* ranking at the higher priority: its blocks go first as GEMM blocks retire */
	int lo_prio, hi_prio;
	CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo_prio, &hi_prio));
	CUDA_CHECK(cudaStreamCreateWithPriority(&g.sa, cudaStreamNonBlocking, lo_prio));
	CUDA_CHECK(cudaStreamCreateWithPriority(&g.sb, cudaStreamNonBlocking, hi_prio));
	CUBLAS_CHECK(cublasSetStream(blas, g.sa));
	if (job->mode == DS_MATRIX && g.esz == 8)
		g.conv = dalloc<float>(g.BR * g.BC);
	if (!g.sparse && g.dbl)
		g.stage = dalloc<float>(stage_floats(&g, g.resident, g.BR, g.BC, MAX(n, rows_q)));
	if (g.resident) {
		make_resident(&g, &cs);
		if (rows_q)
			make_resident(&g, &qs);
		else
			qs.res = cs.res;
	} else {
		g.pa = dalloc<char>(g.BR * g.K * g.esz);
		g.pb = dalloc<char>(g.BC * g.K * g.esz);
	}
	if (job->mode == DS_TOPK && job->k > 0) {
		g.tops = dalloc<float>(rows_side * job->k);
		g.topi = dalloc<int32_t>(rows_side * job->k);
		k_fill_state<<<grid_for(rows_side * job->k, 256), 256>>>(g.tops, g.topi, rows_side * job->k);
		CUDA_LAUNCH_CHECK();
	}
	if (job->mode == DS_PAIRS) {
		g.pairs = dalloc<struct ds_pair>(g.cap);
		g.count = dalloc<unsigned long long>(1);
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	double t1 = now_sec(), d2h = 0;
	phase_add(PH_H2D, t1 - t0);

	struct hpairs hp = {NULL, 0, 0};
	if (g.sym) {
		/* the lower triangle: row panel I against the columns below its last row */
		for (size_t r0 = 0; r0 < n; r0 += g.BR) {
			size_t r1 = MIN(n, r0 + g.BR);
			const void *A = panel(&g, &cs, r0, r1, g.pa);
			for (size_t c0 = 0; c0 < r1; c0 += g.BC) {
				size_t c1 = MIN(r1, c0 + g.BC);
				const void *B = panel(&g, &cs, c0, c1, g.pb);
				tile(&g, A, B, r0, r1 - r0, c0, c1 - c0, 1, &qs, &hp, &d2h);
			}
		}
	} else {
		for (size_t c0 = 0; c0 < n; c0 += g.BC) {
			size_t c1 = MIN(n, c0 + g.BC);
			const void *B = panel(&g, &cs, c0, c1, g.pb);
			for (size_t r0 = 0; r0 < nq; r0 += g.BR) {
				size_t r1 = MIN(nq, r0 + g.BR);
				const void *A = panel(&g, &qs, r0, r1, g.pa);
				tile(&g, A, B, r0, r1 - r0, c0, c1 - c0, 0, &qs, &hp, &d2h);
			}
		}
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	double t2 = now_sec();
	phase_add(PH_COMPUTE, t2 - t1 - d2h);
	if (verbose) {
		for (int b = 0; b < g.nbuf; b++)
			if (g.used[b])
				busy_time(&g, b);
		vlog("gpu: GEMM%s %.1f ms, ranking %.1f ms (on two streams, overlapping)",
		    g.sparse ? " and postings" : "", g.gemm_ms, g.rank_ms);
	}

	if (job->mode == DS_TOPK && job->k > 0) {
		CUDA_CHECK(cudaMemcpy(job->top_s, g.tops, rows_side * job->k * 4, cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(job->top_i, g.topi, rows_side * job->k * 4, cudaMemcpyDeviceToHost));
	}
	if (job->mode == DS_PAIRS) {
		job->pairs = hp.p;
		job->npairs = hp.n;
	}
	phase_add(PH_D2H, now_sec() - t2 + d2h);

	if (g.resident) {
		cudaFree(cs.res);
		if (qs.res != cs.res)
			cudaFree(qs.res);
	}
	if (g.sparse) {
		if (qs.sp.fptr != cs.sp.fptr)
			split_free(&qs.sp, dfree);
		split_free(&cs.sp, dfree);
		cudaFree(g.cptr);
		cudaFree(g.cdoc);
		cudaFree(g.cval);
	}
	cudaFree(g.pa);
	cudaFree(g.pb);
	cudaFree(g.stage);
	for (int b = 0; b < g.nbuf; b++) {
		cudaFree(g.Sbuf[b]);
		cudaEventDestroy(g.gstart[b]);
		cudaEventDestroy(g.gdone[b]);
		cudaEventDestroy(g.sstart[b]);
		cudaEventDestroy(g.sdone[b]);
	}
	CUBLAS_CHECK(cublasSetStream(blas, NULL));
	cudaStreamDestroy(g.sa);
	cudaStreamDestroy(g.sb);
	cudaFree(g.conv);
	cudaFree(g.tops);
	cudaFree(g.topi);
	cudaFree(g.pairs);
	cudaFree(g.count);
}
