/* clmatmul_engine.h: the OpenCL engine's state and what its files share (not for
 * cmd/clmatmul.c, which sees clmatmul.h only). The engine is split by role:
 *   clmatmul_ocl.c    kernel parameters (clmatmul_tune.h), the build, set-up, and the
 *                     kernel launches with their argument checks
 *   clmatmul_plan.c   the plan: block sizes under the device memory bound
 *   clmatmul_xfer.c   transfers (rectangles or packed), the three queues and their
 *                     events, and the blocked multiply that pipelines them
 *   clmatmul_bench.c  --bench */
#ifndef CLMATMUL_ENGINE_H
#define CLMATMUL_ENGINE_H

#include "clmatmul.h"
#include "clstaging.h"
#include "err.h"

/* The staging ring of auto transfers (see struct cm_engine): CM_STAGE_BUFFERS mapped
 * buffers of CM_STAGE_BYTES each (fewer bytes when the plan's largest transfer is
 * smaller; ACCELKIT_CLMATMUL_STAGE replaces it, tests set it tiny). Pinning costs about
 * 0.42 ms a MiB on the H200's host (768 MB in 320 ms, issue 35), paid once a device:
 * 3 x 16 MiB is about 20 ms, where pinning the whole matrices of N = 8192 was 320.
 * 16 MiB a copy keeps the 10-20 us of a copy's enqueue and event under 5% of its
 * 0.3 ms at the bus's ~50 GB/s; three buffers: one filled by the host while one
 * travels and one waits its turn. Unmeasured on the GPU yet: the figures are the
 * issue's, the choice to be checked there (bench/README). */
#define CM_STAGE_BUFFERS 3
#define CM_STAGE_BYTES ((size_t)16 << 20)

/* One device's engine: the options, the kernel parameters chosen, the program, its
 * queues and what the device may hold. */
struct cm_engine {
	struct clx *x;
	struct cm_options o;
	struct cm_params p;
	size_t esize;
	char pstr[256];
	cl_program prog;
	cl_kernel gemm, fill, pack_a, pack_b;
	cl_command_queue qh, qd;	/* host-to-device and device-to-host; x->queue computes */
	int rect;			/* transfers through the Rect calls */
	/* auto transfers: host matrices in ordinary memory, every copy through a ring of
	 * mapped buffers (clstaging.h), made in the worker's thread at its first
	 * multiply and kept for the next (--bench) */
	int staged;
	size_t stage_bytes;		/* a buffer's bytes at most (CM_STAGE_BYTES) */
	clstaging *ring;
	double stage_up_sec, stage_down_sec;	/* this multiply's, host time */
	size_t stage_up, stage_down;		/* bytes */
	size_t budget;
	/* -v: the profiled events of a multiply, summed into phases at its end */
	cl_event *ev;
	const char **ev_phase;
	size_t nev, cap_ev;
	/* the last multiply's share (-v with several devices), and its host packing */
	size_t blocks;
	double flops, kernel_sec, pack_sec;
};

/* ---- the plan (clmatmul_plan.c) ---- */

struct plan {
	size_t bm, bn, bk;	/* block extents (multiples of the tile) */
	size_t nbm, nbn, nbk;
	int slots;		/* 1: in core; 2: double-buffered blocks */
	int c0slot;		/* a separate buffer for C0 (beta != 0 with K split) */
};

static inline size_t
round_up(size_t v, size_t m)
{
	return CEIL_DIV(v, m) * m;
}

/* Whether the kernel reads op(A) and op(B) packed (cm_pack) into copies of their own:
 * the direct kernel and gemm_wgmma. */
static inline int
cm_packs(const struct cm_engine *e)
{
	return e->p.staging == CM_DIRECT || e->p.staging == CM_WGMMA;
}

/* Bytes the plan keeps on the device; sets *biggest to its largest buffer. */
size_t cm_footprint(const struct cm_engine *e, const struct plan *pl, size_t *biggest);
/* The blocks of an m x n x k multiply (beta: with C0) under e->budget; dies when not
 * even one tile of C and its panels fit. With stream (C written as its rows become
 * final, cm_sink), a multiply that fits in core is cut into CM_STREAM_BANDS bands of
 * whole rows of C (of CM_STREAM_ROWS rows at least), double-buffered where they fit:
 * a band's rows go home and are written while the next computes, and the next's rows
 * of A travel meanwhile (from host memory at N = 16384 on the H200, blocks took 206.3
 * ms against 252.5 in core: bench/README). Four bands: the write waits for a quarter
 * of the multiply, not all of it. */
#define CM_STREAM_BANDS 4
#define CM_STREAM_ROWS 512
void cm_plan(const struct cm_engine *e, size_t m, size_t n, size_t k, int beta, int stream,
    struct plan *pl);

/* ---- kernel launches (clmatmul_ocl.c) ---- */

/* The packing (cm_packs) of an op(A) (which = 0) or op(B) (1) panel of extent ci
 * along C and ck along K, stored with pitch ld, from src into dst, after wait. */
cl_event cm_pack(struct cm_engine *e, int which, cl_mem src, size_t ld, cl_mem dst,
    size_t ci, size_t ck, cl_uint nwait, const cl_event *wait);
void cm_set_gemm_args(struct cm_engine *e, size_t m, size_t n, size_t k, cl_mem a,
    size_t lda, cl_mem b, size_t ldb, cl_mem c, size_t ldc, cl_mem c0, size_t ldc0,
    double alpha, double beta, int mode);
/* Enqueues gemm over a padded m x n C (arguments set) after the wait events. */
cl_event cm_launch_gemm(struct cm_engine *e, size_t m, size_t n, cl_uint nwait,
    const cl_event *wait);

/* ---- transfers and events (clmatmul_xfer.c) ---- */

int cm_rect_works(struct cm_engine *e);
/* -v's device times: events kept by cm_ev_log, summed into phases by cm_ev_report. */
void cm_ev_log(struct cm_engine *e, const char *phase, cl_event ev);
void cm_ev_report(struct cm_engine *e);

#endif
