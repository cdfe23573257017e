/* clmatmul_run.h: one run of clmatmul(1), between cmd/clmatmul.c (options, reading
 * the matrices' headers and text, writing C) and kernels/clmatmul_run.c, which decides
 * where the multiply runs and sends it there: the host (-d cpu, or auto below what
 * pays for an OpenCL platform; clmatmul_cpu.c) or OpenCL devices (the engine of
 * clmatmul.h), opened beside the read when cm_start can tell they will be used. */
#ifndef CLMATMUL_RUN_H
#define CLMATMUL_RUN_H

#include "clmatmul.h"
#include "clstaging.h"

/* Below this many multiply-adds, -d auto multiplies on the host without loading
 * OpenCL. Measured on the 2-core development machine (no GPU), 2026-11-29, whole
 * process, NPY square matrices, best of 2-3, -d cpu against -d cpu:0 (PoCL, its
 * program cached): N = 384 19 against 73 ms, 512 31/75, 640 36/46, 768 52/94, 1024
 * 91/74, 1536 299/152, 2048 644/217. PoCL's start and cached build cost 40-50 ms, the
 * native path runs 7.9e9 multiply-adds/s a thread: they cross near N = 800. A host of
 * more cores moves both sides alike. */
#define CM_HOST_WORK 5e8

struct cm_job {
	/* what cmd/clmatmul.c asked for */
	const char *device, *platform;	/* -d (NULL: auto), --platform */
	struct cm_options o;
	struct cm_problem p;		/* m, n, k, alpha and beta; a, b, c0 and c cm_run's */
	struct clmat *a, *b, *c0;	/* the matrices (headers read), or NULL for --bench */
	int bench, verify, reps;
	uint64_t seed;
	const char *output;		/* where C goes (NULL: standard output) */
	int out_fmt;			/* FMT_TEXT or FMT_NPY */
	/* what cm_run gives back */
	struct matrix c;		/* C, when not --bench */
	struct cm_bench_result r;	/* --bench */
	const char *device_name;	/* --bench's device= */
	int host;			/* computed on the host, without OpenCL */
	int read;			/* A, B (and C0) read */
	/* cm_run's own */
	struct clx_start *start;
	struct clx xs[CLX_MAX_MANY];
	struct cm_engine *eng[CLX_MAX_MANY];
	int nd;
	struct clhost hc, ha, hb, hc0;
};

/* Before the matrices are read: opens the OpenCL platform in a thread (clx_start) when
 * a named OpenCL device is asked for, or auto's estimate of the work from the inputs'
 * bytes (input_bytes, -1 when unknown: nothing started) or --bench's shape says the
 * host will not do; else nothing. */
void cm_start(struct cm_job *j, int64_t input_bytes);
/* Decides the device (-d cpu: the host; auto: the host below CM_HOST_WORK, else
 * clx_decide's choice), reads the rest of the matrices, multiplies (or --bench's
 * runs), checks C under --verify, and writes C to j->output: by rows as the multiply
 * makes them final, on a thread beside it (after --verify's check, whole). Dies on any
 * failure. */
void cm_run(struct cm_job *j);
/* After C is written: the phases (-v), then the end of a GPU run (clx_finish) or the
 * release of everything. */
void cm_run_end(struct cm_job *j);

/* C written by rows as they become final (clmatmul_write.c): opened with C's shape
 * (NPY's header written at once), fed through its sink (cm_writer_sink, for the
 * multiply's cm_problem), closed once C is whole, which writes what is left, waits for
 * it and closes the output. c is where C's data will be, set before any row is said. */
struct cm_writer;
struct cm_writer *cm_writer_open(const char *path, int fmt, size_t rows, size_t cols,
    enum dtype dt, const struct matrix *c);
const struct cm_sink *cm_writer_sink(struct cm_writer *w);
void cm_writer_close(struct cm_writer *w);

/* The native path (clmatmul_cpu.c): C = alpha op(A) op(B) + beta C0 on the -j
 * threads, float64 sums rounded once. */
void cm_multiply_host(const struct cm_problem *p, int ta, int tb, enum dtype dt);

#endif
