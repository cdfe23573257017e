/* docsim_dev.cuh: what docsim's CUDA files share on the host side: the state of a run
 * (struct gpu), where a side's GEMM panels come from (struct side, struct split), the
 * device allocation helpers, and the functions each file offers the others:
 *   docsim.cu         the driver: plan, streams, the tile loop, results back
 *   docsim_gemm.cu    the tile as a GEMM, its panels and the memory plan
 *   docsim_mma.cu     the GEMM kernels themselves: TF32, float32 and float64 (ds_mm)
 *   docsim_topk_tc.cu dense top-k lists from TF32 products that rank as they end
 *   docsim_sparse.cu  sparse input: frequent terms into dense panels, the rest by postings
 *   docsim_rank.cu    what a tile gives: top-k lists, pairs above a threshold, matrix rows
 *   docsim_exact.cu   TF32 products' lists made exact: candidates rescored in float64
 * Each kernel lives in its file beside its launcher; no kernel calls across files. */
#ifndef DOCSIM_DEV_CUH
#define DOCSIM_DEV_CUH

#include <cuda_runtime.h>

#include "cuda_check.h"
#include "docsim.h"
#include "err.h"
#include "staging.h"

/* The pinned staging ring that dense vectors go up through (common/staging.h): buffers
 * of DS_RING_BYTES, DS_RING_K of them, so the host fills one (ds_host_copy, on the -j
 * threads) while the bus carries another and the GPU works. 8 MB copies run at the
 * bus's full speed; 32 MB of pinned memory is allocated in the start-up thread. */
#define DS_RING_K 4
#define DS_RING_BYTES ((size_t)8 << 20)

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

static inline int
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

/* One side of the product (the corpus, or the queries): where its panels come from. */
struct side {
	size_t rows;
	const float *host;	/* dense input: normalised rows, host memory */
	struct split sp;	/* sparse input, on the device */
	void *res;		/* resident panels (rows x K of the GEMM type), or NULL */
	size_t ready;		/* dense and resident: rows uploaded so far */
};

/* Dense top-k lists (and -k 0 pairs) from TF32 products (docsim_exact.cu): the lists keep DS_FAST_EXTRA
 * candidates beyond k, which must leave a gap of twice the products' error bound below
 * the k-th, for k up to DS_FAST_KMAX (a warp holds a list of up to 64 in two registers
 * a lane). */
#define DS_FAST_EXTRA 32
#define DS_FAST_KMAX 32

struct gpu {
	const struct ds_job *job;
	int sparse, dbl, sym;
	int fast;		/* TF32 products, lists made exact at the end (docsim_exact.cu) */
	int fused;		/* fast top-k lists ranked in the product's epilogue, no tile */
	size_t kl;		/* entries a top-k list keeps: k, or k + DS_FAST_EXTRA when fast */
	double bound;		/* fast: the most a TF32 score can be off (ds_fast_bound) */
	double thr_sel;		/* the threshold candidates are kept at: -t's, less bound when fast */
	float *fin_s;		/* fast: the exact lists (rows x k) */
	int32_t *fin_i;
	int32_t *undecided;	/* fast: rows whose TF32 list left too small a gap; during the
				 * tile loop, the lists' locks (docsim_topk_tc.cu) */
	unsigned long long *counts;	/* fast: [0] those rows, [2] rows computed whole, [3] a
					 * batch's crowded rows; [1] unused (ds_fast_exact adds up
					 * the crowded rows on the host) */
	const float *fast_rows, *fast_cols;	/* fast: the resident float32 rows of each side */
	size_t pairs_cand, pairs_kept;	/* fast -k 0: pairs rescored, and those that passed */
	size_t K;		/* GEMM depth: dim (dense) or F (sparse) */
	size_t esz;		/* bytes of a GEMM element */
	size_t BR, BC;		/* tile rows and columns */
	int resident;
	void *pa, *pb;		/* panel buffers (streaming) */
	staging *ring;		/* pinned host buffers for dense uploads, copies on su */
	float *stage;		/* device floats that double panels are widened from */
	size_t stage_floats;
	double up_bytes, up_sec;	/* -v and the phases: uploaded, and the host's time at it */
	void *S;		/* the tile being computed: Sbuf[cur] */
	void *Sbuf[2];		/* top-k: two, so one is ranked while the next is computed */
	int nbuf, cur, used[2];
	cudaStream_t sa, sb;	/* sa: panels, GEMM, scatter; sb: ranking and results */
	cudaStream_t su;	/* dense uploads and their widening */
	cudaEvent_t ev_work, ev_up;	/* su after sa's work; sa after su's uploads */
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

/* docsim_gemm.cu */
const void *ds_panel(struct gpu *g, struct side *s, size_t r0, size_t r1, void *buf);
size_t ds_stage_floats(const struct gpu *g, int resident, size_t BR, size_t BC, size_t rows);
void ds_make_resident(struct gpu *g, struct side *s);
void ds_side_ready(struct gpu *g, struct side *s, size_t r1);
void ds_gemm(struct gpu *g, const void *A, const void *B, size_t r0, size_t nr, size_t c0, size_t nc,
    int sym);
int ds_choose_plan(struct gpu *g, size_t budget, size_t fixed, size_t rows_side, size_t rows_q);
size_t ds_plan_least(const struct gpu *g, size_t rows_q);
size_t ds_plan_least_resident(const struct gpu *g, size_t rows_q);

/* docsim_mma.cu: C (nr x nc, row stride ldc) = A (nr x K) B (nc x K)^T, rows
 * k-contiguous, on st. DS_MM_TF32: float32 operands rounded to TF32, float32 sums on the
 * tensor cores (within ds_fast_bound of the float64 value for unit rows); DS_MM_F32: IEEE
 * float32, a fused multiply-add chain in k order (within ds_f32_bound); DS_MM_F64: float64
 * operands and sums. ds_mm_init, once a device (in its thread): what the kernels need set
 * before their first launch. */
enum ds_mm_kind { DS_MM_TF32, DS_MM_F32, DS_MM_F64 };
void ds_mm_init(void);
void ds_mm(enum ds_mm_kind kind, const void *A, const void *B, size_t nr, size_t nc, size_t K, size_t ldc, void *C,
    cudaStream_t st);

/* docsim_topk_tc.cu: dense top-k lists (g->fast, DS_TOPK) straight from TF32 products,
 * no score tile: the tile of rows [r0, r0 + nr) (A) against columns [c0, c0 + nc) (B)
 * into g->tops and g->topi on sa, with g->undecided as the lists' locks (zeros between
 * launches). ds_topk_init as ds_mm_init. */
void ds_topk_init(void);
void ds_topk_tile(struct gpu *g, const float *A, const float *B, size_t r0, size_t nr, size_t c0, size_t nc, int sym);

/* docsim_sparse.cu */
size_t ds_sparse_upload(struct gpu *g, struct side *cs, struct side *qs);
void ds_sparse_free(struct gpu *g, struct side *cs, struct side *qs);
void ds_densify(const struct split *sp, size_t r0, size_t nr, double *out, size_t K, cudaStream_t st);
void ds_scatter(struct gpu *g, const struct side *rows_side, size_t r0, size_t nr, size_t c0, size_t nc,
    int sym);

/* docsim_exact.cu */
void ds_fast_exact(struct gpu *g, const float *rows, const float *cols, size_t nrows, size_t ncols,
    size_t counts[3]);
void ds_fast_pairs(struct gpu *g, const float *rows, const float *cols, size_t n);

/* docsim_rank.cu */
void ds_fill_state(struct gpu *g, size_t n, cudaStream_t st);
void ds_rank_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc, int sym);
void ds_matrix_tile(struct gpu *g, size_t r0, size_t nr, size_t c0, size_t nc);
void ds_rank_rows(struct gpu *g, const float *S, size_t nr, size_t c0, size_t nc, float *tops, int32_t *topi,
    size_t kl, double thr, const int32_t *self);

#endif
