/* docsim.h: what the CPU (docsim_cpu.c) and CUDA (docsim*.cu) paths share: the job, the
 * ranking rule and the top-k list update; and the weighting of the vectors.
 *
 * Scores are dot products of the prepared (weighted, normalised) float32 vectors,
 * accumulated in float64 (float products are exact in double) and ranked as float32:
 * a higher score first, equal scores by the lower row index. */
#ifndef DOCSIM_H
#define DOCSIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "hostdev.h"
#include "sparse.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DS_NONE INT32_MAX	/* id of an empty top-k slot: below every real candidate */

/* The float64 dot product of float32 vectors, in one order on every device: four
 * running sums, then (s0 + s1) + (s2 + s3). The products are exact in double, so a fused
 * multiply-add gives the same sums, and the CPU path's dense scores and the GPU's
 * rescored TF32 candidates (docsim_exact.cu) are the same bits. */
static inline HOSTDEV double
ds_dot_fd(const float *a, const float *b, size_t m)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t k = 0;
	for (; k + 4 <= m; k += 4) {
		s0 += (double)a[k] * b[k];
		s1 += (double)a[k + 1] * b[k + 1];
		s2 += (double)a[k + 2] * b[k + 2];
		s3 += (double)a[k + 3] * b[k + 3];
	}
	for (; k < m; k++)
		s0 += (double)a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

/* The most a score of the TF32 product (DS_MM_TF32, docsim_mma.cu) of float32 unit rows
 * of m dimensions differs from its float64 value, after both are rounded to float.
 *   - Operands: cvt.rna rounds each to TF32 (10 fraction bits, to nearest), within a
 *     relative u = 2^-11, so a product of two is within (2u + u^2) |x_i y_i|, and is
 *     exact in float32 (11-bit significands); sum |x_i y_i| <= |x| |y| <= 1 + 2^-20 for
 *     rows normalised in float32 (Cauchy-Schwarz).
 *   - Sums: each mma.sync adds 8 such products into the float32 accumulator, ceil(m/8)
 *     steps in k order (zeros past m). The tensor cores' addition is not IEEE's: taken
 *     at its worst, each of the 9 addends aligned to the largest and truncated to 24
 *     bits, then the sum truncated (measured behaviour has guard bits and so errs less:
 *     Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021), a step errs by
 *     at most 10 2^-23 times the magnitude summed so far, which is at most
 *     (1 + u)^2 (1 + 2^-20) < 1 + 2^-8.
 *   - 2^-22: the TF32 score's rounding to float in the list and the float64 score's
 *     (2^-24 each, for |s| <= 1), and room for products flushed or rounded below
 *     float's normal range (each under 2^-126).
 * For m = 1024, 1.13e-3; the largest error cuBLAS's TF32 GEMM was measured at on
 * Gaussian vectors was 1.3e-4. */
static inline double
ds_fast_bound(size_t m)
{
	const double u = ldexp(1, -11);
	return (2 * u + u * u) * (1 + ldexp(1, -20)) + (double)((m + 7) / 8) * 10 * ldexp(1, -23) * (1 + ldexp(1, -8)) +
	    ldexp(1, -22);
}

/* The same for a float32 product (DS_MM_F32: IEEE float32, a fused multiply-add chain a
 * score). Each of the m steps rounds once, by a relative 2^-23 at worst (to nearest
 * halves it), in any order: within gamma = n u / (1 - n u), n = m + 1, of sum |x_i y_i|
 * <= 1 + 2^-20; then 2^-22 for the two scores' rounding to float, as above. 1.22e-4 for
 * m = 1024. 0 when m is too long for the bound to help (n u >= 1/16): such rows are
 * computed whole. */
static inline double
ds_f32_bound(size_t m)
{
	double nu = (double)(m + 1) * ldexp(1, -23);
	if (nu >= 1.0 / 16)
		return 0;
	return nu / (1 - nu) * (1 + ldexp(1, -20)) + ldexp(1, -22);
}

/* Whether candidate (s, i) ranks before (t, j). */
static inline HOSTDEV int
ds_better(float s, int32_t i, float t, int32_t j)
{
	return s > t || (s == t && i < j);
}

/* Puts (s, i) into the list of k entries kept best first, dropping the last. The
 * caller has checked ds_better(s, i, ls[k-1], li[k-1]). */
static inline HOSTDEV void
ds_insert(float *ls, int32_t *li, size_t k, float s, int32_t i)
{
	size_t p = k - 1;
	while (p > 0 && ds_better(s, i, ls[p - 1], li[p - 1])) {
		ls[p] = ls[p - 1];
		li[p] = li[p - 1];
		p--;
	}
	ls[p] = s;
	li[p] = i;
}

/* Whether a score passes the threshold. */
static inline HOSTDEV int
ds_passes(float s, int use_thr, double thr)
{
	return !use_thr || (double)s >= thr;
}

enum ds_mode { DS_TOPK, DS_PAIRS, DS_MATRIX };

/* A pair found in DS_PAIRS mode: a is the query (or, for all pairs, the lower index). */
struct ds_pair {
	uint32_t a, b;
	float s;
};

/* A row of docsim's tuning table (docsim_tune.h): the per-device choices of both paths. */
struct docsim_tune {
	const char *device;		/* tune_pick's pattern (common/tune.h) */
	size_t tile_rows;		/* GPU: rows of a score tile, at most */
	size_t diag_block;		/* GPU, all pairs: rows a GEMM beside the diagonal */
	size_t dense_terms_max;		/* GPU, sparse: frequent terms done by DGEMM, at most */
	size_t dense_df_divisor;	/* GPU, sparse: frequent when df exceeds n / this */
	int rank_block;			/* GPU: threads a block of k_rowsel and k_rowpairs */
	int colsel_block;		/* GPU: threads a block of k_colsel */
	int scatter_block;		/* GPU: threads a block of k_scatter */
	size_t cpu_rows;		/* CPU, dense: query rows a block against each corpus row */
	const char *measured;		/* what chose the row */
	/* what `auto` weighs (tune.h), work in multiply-adds as ds_work counts them */
	struct cost_model cost_dense, cost_sparse;
};

struct ds_job {
	/* the prepared vectors: sparse (c, q) or dense (cd, qd, dim columns, row-major) */
	int sparse;
	const struct csr *c, *q;
	const float *cd, *qd;
	size_t n, nq, dim;	/* corpus rows, query rows (n for all pairs), columns */
	int sym;		/* all pairs within the corpus: no queries, no self pairs */
	enum ds_mode mode;
	size_t k;		/* DS_TOPK: list length (at most the candidates a row has) */
	int use_thr;
	double thr;
	int single;		/* --precision single: float32 GEMM for dense input on a GPU */
	int unit;		/* the vectors are L2-normalised (all but --weight none): the
				 * bound of TF32 products (docsim_exact.cu) holds */
	size_t max_mem;		/* device bytes to use, 0: what is free */
	const struct docsim_tune *tune;	/* the device's row of the tuning table */
	size_t r0, r1;		/* the CPU path computes rows [r0, r1) of nq (r1 0: every row) */
	/* results */
	float *top_s;		/* DS_TOPK: nq x k, best first */
	int32_t *top_i;		/* DS_NONE where a row has fewer than k */
	struct ds_pair *pairs;	/* DS_PAIRS, unsorted */
	size_t npairs;
	float *mat;		/* DS_MATRIX: nq x n */
};

void ds_cpu_run(struct ds_job *job);
/* The job's work in multiply-adds, as the CPU path does them: dense, queries x corpus
 * rows x columns (all pairs: n x n x columns); sparse, what the inverted index does,
 * each query entry of term t against t's postings (the sum over terms of their
 * document frequencies in the queries and in the corpus; all pairs: of df squared). */
double ds_work(const struct ds_job *job);

struct cuda_dev;
/* The GPU path (docsim.cu). ds_gpu_init, cuda_start's init, sets the device, makes the
 * streams and the pinned staging ring and readies the GEMM kernels (docsim_mma.cu),
 * beside the reading; it may run in another thread than ds_gpu_run. */
void ds_gpu_init(const struct cuda_dev *dev);
void ds_gpu_run(struct ds_job *job, const struct cuda_dev *dev);
/* ds_gpu_run in steps, for a worker a GPU (docsim_split.c). ds_gpu_open, in worker w's
 * thread: its device, streams and staging ring (worker 0 takes
 * ds_gpu_init's), the sparse vectors uploaded; *budget the device bytes it may use
 * (--max-device-mem, else what is free). ds_gpu_plan: the tiles for budget, the same on
 * every worker given the same budget (any thread; say: -v names them); returns the
 * rows of a tile, which the worker's row ranges start at multiples of.
 * ds_gpu_rows, in the worker's thread: rows [a, b) of the pair matrix (all pairs: the
 * lower triangle's rows a to b, whose scores also go to their columns' lists) or of
 * the queries, on the tiles the one-GPU run computes them in; the pairs found (-k 0) in
 * *pairs; returns with at most the work of this call and the last one on the device.
 * ds_gpu_close, in the worker's thread: waits for its work, copies its top-k lists (every
 * row's, nq x k) into top_s and top_i, frees what it holds. */
struct ds_gpu;
struct ds_gpu *ds_gpu_open(const struct ds_job *job, const struct cuda_dev *dev, int w,
    size_t *budget);
size_t ds_gpu_plan(struct ds_gpu *d, size_t budget, int say);
void ds_gpu_rows(struct ds_gpu *d, size_t a, size_t b, struct ds_pair **pairs, size_t *npairs);
void ds_gpu_close(struct ds_gpu *d, float *top_s, int32_t *top_i);
/* Copies n bytes on the -j threads (docsim_copy.c): filling pinned buffers from the
 * vectors at the memory's speed rather than one core's. */
void ds_host_copy(void *dst, const void *src, size_t n);

struct docs;
struct output;
/* The result lines (docsim_out.c), or the matrix in format fmt (cli_out_format); ids
 * of queries from qr, of documents from cr. */
void ds_write(struct output *o, struct ds_job *job, const struct docs *qr, const struct docs *cr,
    int fmt);

/* Under mpirun (docsim_ranks.c; ranks.h). ds_ranks_csr: every rank's rows of m, in
 * rank order, on every rank (the corpus weighed in shares). ds_ranks_ids: every rank's
 * ids of d, in rank order, on rank 0 (the writer). ds_ranks_run: this rank's part of
 * the job on dev, its results in job on rank 0 as the one-process run leaves them there:
 * with -q (and --matrix) a block of the query rows against the whole corpus; all pairs
 * (top-k, pairs) the units of ds_split_share, each pair scored once. */
void ds_ranks_csr(struct csr *m);
void ds_ranks_ids(struct docs *d);
void ds_ranks_run(struct ds_job *job, const struct cuda_dev *dev);

/* Several workers in one process (docsim_split.c; common/devwork.h): -d gpu:all,
 * gpu:0,1 (a worker a GPU), or ACCELKIT_CPU_WORKERS on the CPU (the tests). Blocks of
 * rows of the pair matrix (all pairs) or of the queries go to the workers as they free
 * up; each worker's top-k lists are merged, its pairs gathered: the results in job are
 * the one-worker run's. */
void ds_split_run(struct ds_job *job, const struct cuda_dev *dev, int nworkers);
/* ds_split_run's share of rank of nranks under mpirun (collective: every rank calls it
 * with the same job): the same units on every rank, this rank's every nranks-th; its
 * results in job as ds_split_run leaves them (top-k: lists for every row, empty for the
 * rows no unit of this rank scored), for docsim_ranks.c to merge. ds_merge_lists: row
 * by row, the k best distinct candidates of n sets of lists (each nq x k, best first;
 * a candidate may be in several, a rechecked GPU row's) into job's. */
void ds_split_share(struct ds_job *job, const struct cuda_dev *dev, int nworkers, int rank,
    int nranks);
void ds_merge_lists(struct ds_job *job, const float *const *ls, const int32_t *const *li,
    int n);

/* One job on dev, as cuda_start began it (docsim_run.c): -d auto decides on the job's
 * work, job->tune becomes the device's row (-v names it), and the job runs under
 * mpirun on the ranks (ds_ranks_run), on several workers (ds_split_run), on one GPU
 * (ds_gpu_run) or on the CPU (ds_cpu_run). Returns 0 where there was nothing to
 * compute (no queries, no corpus, or -k 0 lists): nothing ran, and only --matrix has
 * results to write. */
int ds_run(struct ds_job *job, struct cuda_dev *dev);

/* The weighting (docsim_weight.c), then L2 normalisation unless DS_NONE_W. */
enum ds_weight { DS_TFIDF, DS_TF, DS_BINARY, DS_NONE_W };

struct tok_counts;
/* idf of the terms of a text corpus of ndocs documents, from their document counts. */
double *ds_text_idf(const uint32_t *df, size_t nterms, size_t ndocs);
/* The weighted, normalised vectors of term counts; out takes over tc's arrays. */
void ds_weigh_counts(struct tok_counts *tc, const double *idf, enum ds_weight weight,
    int sublinear, struct csr *out);
/* idf of given vectors (rows x dim, sparse sp or else dense x): df counts nonzeros. */
double *ds_vector_idf(const struct csr *sp, const float *x, size_t rows, size_t dim);
/* Given vectors weighted in place (idf may be NULL); columns >= dim are dropped. */
void ds_weigh_csr(struct csr *m, size_t dim, enum ds_weight weight, const double *idf);
void ds_weigh_dense(float *x, size_t rows, size_t cols, enum ds_weight weight, const double *idf);

#ifdef __cplusplus
}
#endif
#endif
