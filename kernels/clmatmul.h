/* clmatmul.h: what cmd/clmatmul.c, the OpenCL engine (clmatmul_ocl.c and the files
 * clmatmul_engine.h names) and the host reference (clmatmul_ref.c) share. */
#ifndef CLMATMUL_H
#define CLMATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "dense.h"
#include "opencl.h"

/* The kernel's tunables (see kernels/clmatmul.cl); 0 in a forced set means "from the
 * table". regs is NVIDIA's register cap per work-item (0: the compiler's choice). */
struct cm_params {
	int bm, bn, bk;		/* work-group tile of C and depth of a local slice */
	int tm, tn;		/* work-item block */
	int vm, vn;		/* vector widths of the work-item's chunks */
	int lw;			/* vector width of global loads */
	int pm, pn;		/* work-item patch (a warp) */
	int gm;			/* tile rows a band of work-groups covers */
	int ku;			/* unrolling of the k loop */
	int staging;		/* CM_LOCAL: slices staged in local memory; CM_DIRECT: none;
				 * CM_ASYNC: gemm_tf32's cp.async copies into local memory;
				 * CM_WGMMA: gemm_wgmma (Hopper) on packed operands */
	int regs;
};

enum { CM_LOCAL = 1, CM_DIRECT = 2, CM_ASYNC = 3, CM_WGMMA = 4 };
enum cm_transfers { CM_XFER_AUTO, CM_XFER_RECT, CM_XFER_PACKED };

struct cm_options {
	enum dtype dt;
	int tf32;			/* --precision tf32: gemm_tf32 on NVIDIA's tensor cores */
	int ta, tb;			/* op(A) = A^T, op(B) = B^T */
	struct cm_params force;		/* nonzero fields override the table */
	size_t max_device_mem;		/* 0: what the device has */
	enum cm_transfers transfers;
};

/* One multiply C = alpha op(A) op(B) + beta C0, all matrices row-major on the host.
 * A is m x k (k x m when ta), B is k x n (n x k when tb), C and C0 are m x n; c0 is
 * read only when beta != 0. */
/* Rows of C as they become final, for a writer that writes them while the rest is
 * computed (clmatmul_write.c): the multiply calls rows_done(ctx, r) each time rows
 * [0, r) of C are all in the host's C, r increasing, one call at a time (from its
 * workers' threads). */
struct cm_sink {
	void (*rows_done)(void *ctx, size_t rows);
	void *ctx;
};

struct cm_problem {
	size_t m, n, k;
	double alpha, beta;
	const void *a, *b, *c0;
	void *c;
	const struct cm_sink *sink;	/* NULL: none */
};

struct cm_engine;

/* The device spec to open for an m x n x k multiply: spec itself, or for -d auto the
 * GPU or the CPU device by the work (clx_decide with the cost column of
 * clmatmul_tune.h). With --precision tf32, auto keeps its plain meaning (the GPU). */
const char *cm_device(const char *spec, const char *filter, const struct cm_options *o,
    size_t m, size_t n, size_t k);

/* The cost model of the tuning row for the device description desc (clx_describe)
 * and o's precision: clx_decide's model. */
const struct cost_model *cm_cost(const char *desc, const struct cm_options *o);

/* Picks the kernel parameters for the device (or the forced ones), checks them and
 * builds the program. Dies with a usage error for forced parameters that cannot work. */
struct cm_engine *cm_open(struct clx *x, const struct cm_options *o);
void cm_close(struct cm_engine *e);
/* Engines for n devices (clx_open_many's): cm_open's for the first, and its kernel
 * parameters forced on the others. */
void cm_open_many(struct clx *xs, int n, const struct cm_options *o, struct cm_engine **es);

/* The multiply, in blocks when the matrices do not fit the device bound. */
void cm_multiply(struct cm_engine *e, const struct cm_problem *p);
/* The same over ne engines (one a device, with the same kernel parameters): blocks of
 * C, cut under the smallest device bound, go to whichever device is free, one host
 * thread a device; C's bytes are those of one engine alone. -v gives each device's
 * blocks, GFLOP, kernel time and busy time. */
void cm_multiply_many(struct cm_engine **e, int ne, const struct cm_problem *p);

/* --bench: reps timed runs after a warm-up of the multiply p describes. When p->a is
 * NULL, op(A), op(B) (and C0) are cm_uniform numbers with seed made on the first
 * device and its kernel alone is timed; else they are p's host matrices and each run
 * is a whole cm_multiply_many over the ne engines, transfers and blocks included. The last result goes to p->c when that
 * is not NULL. */
struct cm_bench_result {
	double ms_median, ms_best;
	int reps, blocks;
};
void cm_bench(struct cm_engine **e, int ne, const struct cm_problem *p, uint64_t seed, int reps,
    struct cm_bench_result *r);

/* The benchmark's data: element i (row-major index of the stored matrix) of matrix
 * `salt`, uniform in [-1, 1) with 2^-23 resolution, so exact in float32. The kernel
 * fill_uniform in clmatmul.cl computes the same numbers. */
static inline float
cm_uniform(uint64_t seed, uint64_t salt, uint64_t i)
{
	uint64_t z = seed ^ (salt * 0xD1B54A32D192ED03ULL);
	z += (i + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (float)(uint32_t)(z >> 40) * 0x1.0p-23f - 1.0f;
}
enum { CM_SALT_A = 1, CM_SALT_B = 2, CM_SALT_C = 3 };

/* Fills a rows x cols matrix of type dt with cm_uniform(seed, salt, .) (OpenMP). */
void cm_fill_host(void *x, size_t rows, size_t cols, enum dtype dt, uint64_t seed, uint64_t salt);

/* --verify: checks c against a float64 reference on the host: every entry when
 * m*n*k is small, else Freivalds' test with random signs plus `samples` entries
 * computed in full. The bound for an entry is (eps_in + (k + 2) * eps) * (|alpha|
 * (|A||B|)_ij + |beta| |C0_ij|), eps that of the sums, eps_in that of the inputs'
 * rounding before the products (0, or CM_TF32_EPS_IN for tf32). Returns 0 when it
 * holds; else describes the first failure in msg. */
int cm_verify(const struct cm_problem *p, int ta, int tb, enum dtype dt, double eps_in,
    double eps, uint64_t seed, char *msg, size_t msgsize);

/* tf32's bound: each input is rounded to 11 significant bits (unit roundoff 2^-11),
 * so a product is off by at most 2 2^-11 + 2^-22 of itself; the tensor cores' float32
 * sums are allowed twice float32's epsilon a term (they may truncate). */
#define CM_TF32_EPS_IN (0x1p-10 + 0x1p-22)
#define CM_TF32_EPS 0x1p-22

#endif
