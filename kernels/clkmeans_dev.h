/* clkmeans_dev.h: the OpenCL k-means' state and what its files share (cmd/clkmeans.c
 * sees clkmeans.h only). The engine is split by role:
 *   clkmeans_dev.c     device set-up, kernel parameters (clkmeans_tune.h), the build,
 *                      small device helpers, Lloyd's iterations and the whole run
 *   clkmeans_stream.c  the memory plan: rows resident or streamed in batches
 *   clkmeans_assign.c  the passes over the rows: assignment with the exact recheck
 *                      near ties (and the update's sums), and each row's distance
 *   clkmeans_update.c  the fixed-point sums: per-column scales, new centroids from the
 *                      sums, empty clusters relocated
 *   clkmeans_seed.c    initial centroids: random rows, or greedy k-means++ */
#ifndef CLKMEANS_DEV_H
#define CLKMEANS_DEV_H

#include "clkmeans.h"
#include "err.h"
#include "opencl.h"
#include "rng.h"

/* The state buffer's layout (keep in step with kernels/clkmeans.cl). */
enum { SD_INERTIA = 0, SD_SHIFT = 1, SI_MOVED = 4, SI_EMPTY = 5, SI_NLIST = 6,
	SI_NEXACT = 7, SF_CMAX = 8, STATE_BYTES = 64 };

/* Tunables of the kernels, per device class (CLKMEANS_TUNE overrides them). */
struct tune {
	int tmt, tnt, rmv, rnv, tk, a_res, db, wg, rg;
	int local;		/* assign's tiles through local memory (GPUs), or direct (CPUs) */
	int fp64, atom64;	/* 0 turns the device's float64 or 64-bit atomics off */
	int exact_cu, update_cu;	/* exact's and update's groups a compute unit */
};

struct cset {			/* one set of centroids in the forms the kernels use */
	cl_mem c64, c64T, cT, cn, cnrm;
};

struct state {
	double inertia, shift;
	int moved, empty, nexact;
	float cmax;
};

struct km {
	struct clx x;
	cl_program prog;
	cl_kernel assign, exact, update, finalize, scalars, rowdist, kpp;
	struct tune t;
	int fp64, atom64;
	size_t rsz;			/* bytes of the kernels' `real' */
	size_t n, d, k, kpad, dpad, tm;
	size_t batch, nbatch, loaded;	/* rows a batch; batches; the one in X (streaming) */
	size_t ngroups;			/* RG-row groups of partial sums */
	size_t exact_groups, update_groups;
	const float *hx;		/* the rows, on the host */
	float *fscale;			/* 2^p of each column's fixed point */
	double tol_abs;
	cl_mem X, labels, dists, list, state, sums, counts, fscale_m, iscale, shift, empty, part,
	    cand;
	struct cset set[2];
	int cur;
	int prof;			/* CLKMEANS_PROFILE: time each kernel (-v prints it) */
	int npend;
	struct { cl_event ev; int kernel; } pend[64];
	double kernel_ms[7];
	double t_iter;			/* seconds in Lloyd iterations, for -v */
	double t_vdist;			/* of which -v's inertia of each iteration */
	int n_iter;
};

/* ---- device helpers (clkmeans_dev.c) ---- */

cl_mem km_buf(struct km *m, size_t bytes);
void km_args(cl_kernel k, int n, ...);
#define A(v) sizeof(v), (const void *)&(v)
void km_launch(struct km *m, cl_kernel k, size_t global, size_t local);
void km_fill_zero(struct km *m, cl_mem b, size_t off, size_t bytes);
void km_read_buf(struct km *m, cl_mem b, size_t off, size_t bytes, void *dst);
void km_write_buf(struct km *m, cl_mem b, size_t off, size_t bytes, const void *src);
void km_read_real(struct km *m, cl_mem b, size_t off, size_t n, double *dst);
void km_write_real(struct km *m, cl_mem b, size_t n, const double *src);

/* ---- the memory plan and batches (clkmeans_stream.c) ---- */

void km_plan_memory(struct km *m, size_t max_device_mem);
int km_bind(struct km *m, size_t b, cl_long *row0);

/* ---- passes over the rows (clkmeans_assign.c) ---- */

void km_assign_pass(struct km *m, int update);
void km_rowdist_pass(struct km *m);

/* ---- the fixed-point sums and the centroids (clkmeans_update.c) ---- */

void km_column_stats(struct km *m, double tol);
void km_finalize(struct km *m, int mode, int npart);
void km_set_centroids(struct km *m, const double *C);
int km_relocate(struct km *m, int e, int have_dists);

/* ---- initial centroids (clkmeans_seed.c) ---- */

void km_init_random(struct km *m, struct rng *g, double *C);
void km_init_kpp(struct km *m, struct rng *g, double *C);

#endif
