/* clkmeans_dev.h: the OpenCL k-means' state and what its files share (cmd/clkmeans.c
 * sees clkmeans.h only; clkmeans_run.h is the way in). The engine is split by role:
 *   clkmeans_dev.c     device set-up, kernel parameters (clkmeans_tune.h), the build,
 *                      small device helpers, Lloyd's iterations and the whole run
 *   clkmeans_stream.c  the memory plan: rows resident or streamed in batches
 *   clkmeans_assign.c  the passes over the rows: assignment with the exact recheck
 *                      near ties (and the update's sums), and each row's distance
 *   clkmeans_update.c  the fixed-point sums: per-column scales, new centroids from the
 *                      sums, empty clusters relocated
 *   clkmeans_seed.c    initial centroids: random rows, or greedy k-means++
 *   clkmeans_split.c   the rows split over devices and MPI ranks: shares, the sums
 *                      added on the host and over the ranks, rows by global index,
 *                      the exact inertia
 *   clkmeans_host.c    the native host path, which computes what the devices do with
 *                      a struct kmset of no devices (the statistics, seeding, the
 *                      relocation and the inertia are the same functions)
 *
 * A process drives a set of devices (struct kmset), each a struct km with its own
 * contiguous share of the process's rows; under mpirun each rank holds a share of the
 * input's rows. Everything a result depends on is summed in integers (the update's
 * fixed-point sums, the column statistics, k-means++'s weights, the inertia), so the
 * split does not change a byte of it. */
#ifndef CLKMEANS_DEV_H
#define CLKMEANS_DEV_H

#include <math.h>

#include "clkmeans.h"
#include "err.h"
#include "opencl.h"
#include "rng.h"

/* The state buffer's layout (keep in step with kernels/clkmeans_defs.cl). */
enum { SD_INERTIA = 0, SD_SHIFT = 1, SI_MOVED = 4, SI_EMPTY = 5, SI_NLIST = 6,
	SI_NEXACT = 7, SF_CMAX = 8, SI_NLIST2 = 9, STATE_BYTES = 64 };

/* Tunables of the kernels, per device class (CLKMEANS_TUNE overrides them). */
struct tune {
	int tmt, tnt, rmv, rnv, tk, a_res, db, wg, rg;
	int local;		/* assign's tiles through local memory (GPUs), or direct (CPUs) */
	int fp64, atom64;	/* 0 turns the device's float64 or 64-bit atomics off */
	int exact_cu, update_cu;	/* exact's and update's groups a compute unit */
	int tf32;		/* assign's products on NVIDIA's TF32 tensor cores (-1: where
				 * the device and the tiles allow) */
	int areg;		/* TF32 assign's row fragments in registers (-1: where they
				 * fit) */
	int split;		/* the kernels in separate programs built at once on threads
				 * (-1: on GPUs), else one program of those the run needs */
};

struct cset {			/* one set of centroids in the forms the kernels use */
	cl_mem c64, c64T, cT, cn, cnrm;
	cl_mem cTt;			/* with TF32: cT rounded to TF32, for the tensor cores */
};

struct state {
	double inertia, shift;
	int moved, empty, nexact;
	float cmax;
};

/* The programs a device's kernels are built in (clkmeans_dev.c's build): on GPUs each
 * the whole source with the KM_KERNELS of its kernels, so that they compile at once,
 * in threads; on CPUs one; either way only the kernels a run needs. */
enum { KM_PROGS = 5 };

struct km {
	struct clx x;
	size_t first;			/* its first row among the process's */
	double busy;			/* seconds of work, for -v */
	cl_program prog[KM_PROGS];	/* build()'s programs (prog[0] alone unsplit) */
	int built, seed;		/* built; with k-means++'s kernel (kpp) */
	cl_kernel assign, exact, update, finalize, scalars, rowdist, kpp;
	cl_kernel assign_f32;		/* with TF32: the float32 recheck of assign's list */
	struct tune t;
	int fp64, atom64;
	size_t rsz;			/* bytes of the kernels' `real' */
	size_t n, d, k, kpad, dpad, tm;
	size_t batch, nbatch, loaded;	/* rows a batch; batches; the one in X (streaming) */
	size_t ngroups;			/* RG-row groups of partial sums */
	size_t exact_groups, update_groups;
	const float *hx;		/* the rows, on the host */
	const float *fscale;		/* 2^p of each column's fixed point (the set's) */
	cl_mem X, labels, dists, list, state, sums, counts, fscale_m, iscale, shift, empty, part,
	    cand;
	cl_mem list2;			/* with TF32: the rows the recheck leaves to exact */
	cl_mem prev;			/* with delta: the labels the sums were made for */
	int delta;			/* sums kept from one iteration to the next, updated by
					 * the rows that moved (one device, one rank) */
	struct cset set[2];
	int cur;
	int prof;			/* CLKMEANS_PROFILE: time each kernel (-v prints it) */
	int npend;
	struct { cl_event ev; int kernel; } pend[64];
	double kernel_ms[8];
};

/* The devices of one process and the rows of the whole run. */
struct kmset {
	int nd;
	struct km dev[CLX_MAX_MANY];
	size_t n, d, k;			/* this process's rows */
	uint64_t row0, ntotal;		/* its first row among all ranks'; all ranks' rows */
	int ranks;			/* ranks_size() */
	int exchange;			/* several devices or ranks: sums added on the host */
	const float *hx;		/* this process's rows */
	float *fscale;			/* 2^p of each column's fixed point */
	double *iscale;			/* 2^-p */
	double tol_abs;
	float kscale;			/* k-means++'s weights' fixed point */
	int64_t *sums;			/* k x d totals, then k counts, moved, nexact */
	double *dist;			/* n: the rows' distances (relocation, inertia) */
	int *lab;			/* n: their labels (relocation) */
	double t_start;			/* when the devices' work of this step began (-v) */
	int seed;			/* k-means++ seeds the runs: kpp is built */
};
enum { KM_TAIL_MOVED = 0, KM_TAIL_NEXACT = 1 };

/* A float's fixed-point value as the kernels make it (convert_long_rte of the exact
 * float product): v rounded half to even, |v| < 2^62. rint and a cast, not llrint: the
 * compiler makes rint one instruction, llrint a call (the column statistics convert
 * every value twice). */
static inline int64_t
km_fix(double v)
{
	return (int64_t)rint(v);
}

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

void km_column_stats(struct kmset *s, double tol, const double *given);
void km_upload_stats(struct kmset *s, struct km *m);
void km_finalize(struct km *m, int mode, int npart);
void km_set_centroids(struct km *m, const double *C);
int km_relocate(struct kmset *s, int e, int have_dists);
size_t km_relocate_sums(struct kmset *s, int e, uint64_t *row, size_t *to);

/* ---- initial centroids (clkmeans_seed.c) ---- */

void km_init_random(struct kmset *s, struct rng *g, double *C);
void km_init_kpp(struct kmset *s, struct rng *g, double *C);

/* ---- the split (clkmeans_split.c) ---- */

/* The devices' shares of the process's n rows: contiguous, about even, their bounds
 * multiples of align; a share may be empty. */
void km_shares(size_t n, int nd, size_t align, size_t *first, size_t *count);
/* sums[0, k d) + counts + the tail (moved, nexact) of every device, added on the host
 * and over the ranks (one all-reduce), into s->sums; then the totals to every device. */
void km_exchange(struct kmset *s);
/* s->sums to every device's sums and counts (after a relocation edits them). */
void km_push_sums(struct kmset *s);
/* The totals of the one device and rank to s->sums (no exchange). */
void km_pull_sums(struct kmset *s);
/* Every device's labels and dists into s->lab and s->dist. */
void km_pull_rows(struct kmset *s, int labels);
/* The rows of global indexes g[0, L) as float64 into C (L x d), from whichever rank
 * holds each. */
void km_rows(struct kmset *s, const uint64_t *g, int L, double *C);
/* Which of nitem items holds the first running sum that reaches target (int64 weights
 * wt, summed from item 0), skipping items with no rows (cnt[i] 0; cnt NULL: every item
 * has rows), with target less the sums of the items before it in *rest. The last item
 * with rows if none reaches it (*rest then INT64_MAX); -1 if no item has rows. */
int km_search(const int64_t *wt, const uint64_t *cnt, int nitem, int64_t target,
    int64_t *rest);
/* The sum of s->dist[0, n) over all ranks, in 128-bit fixed point: the same whatever
 * the split. */
double km_inertia(struct kmset *s);

#endif
