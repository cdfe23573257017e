/* skyline_tune.h: skyline's choices per device, in one table (common/tune.h says how
 * a row is picked). cmd/skyline.c picks a row once, from the device's description
 * ("cpu" for the CPU path), and hands it to both paths in their jobs; -v prints it.
 * A new kind of GPU means a row here, above the catch-all, with its measurement.
 *
 * What is measured so far (bench/README.md, skyline): bench/skyline on an H200 and
 * its machine's 16 CPU threads, 2026-11-22, with the values below. They are the
 * values the paths were written with; no sweep of other values has been run. */
#ifndef SKYLINE_TUNE_H
#define SKYLINE_TUNE_H

#include <stddef.h>

#include "tune.h"

/* Compiled into the CUDA kernels (their __launch_bounds__ and shared-memory arrays
 * are sized by them), so one value for every row: a GPU that wants others needs the
 * kernels built for them. H200 2026-11-22, bench/skyline run 2 (commit 11a7cca):
 * classic filter 161.4 ms for anti-correlated 1M x 8, spatial filter 34.6 ms for 10M
 * points; no other value tried. */
#define SKY_NT 256		/* threads a block */
#define SKY_TILE 256		/* skyline rows a shared-memory tile of the scans */

struct sky_tune {
	const char *device;	/* words of the device's description (tune.h) */
	/* the sort-filter's batches of candidates: the first, then doubling up to max */
	size_t batch_first, batch_max;
	/* GPU: most blocks of the spatial pass that finds the pivots (each block ends in
	 * atomics on the same 17 words) */
	unsigned pivot_blocks;
	/* the spatial filter's grid of the points that survive the pivots: about
	 * grid_per_cell points a cell, at most grid_side_max cells a side (the values of
	 * the grid pruning it replaced; not swept for it) */
	unsigned grid_per_cell, grid_side_max;
	/* what -d auto weighs (tune.h), before the device is known: the row a GPU of
	 * any name gets ("gpu") holds it. Classic: estimated comparisons (skyline_work.c);
	 * spatial: points x hull vertices */
	struct cost_model cost_classic, cost_spatial;
	const char *measured;
};

/* The classic skyline's work in comparisons: n * s (s the skyline's size, estimated
 * from samples) for the filter, plus SKY_WORK_RANK for each of the n * d values ranked
 * (radix sorts and the presort). Fitted to bench/README.md's CPU figures (16 threads,
 * 2026-11-22): anti-correlated 1M x 8 (filter-bound, 5,776 ms) and independent 10M x 4
 * (ranking-bound, 822 ms less its 107 ms read); to be checked by bench/e2e. */
#define SKY_WORK_RANK 2500.0

static const struct sky_tune sky_tune_table[] = {
	/* no cost model: auto decides before the device is known, with the GPU row's */
	{"cpu", 1024, (size_t)1 << 16, 0, 4, 2048, {NULL, 0, 0, 0, 0}, {NULL, 0, 0, 0, 0},
	    "16 threads of the H200 machine 2026-11-22, bench/skyline: anti-corr. 1M x 8 "
	    "in 5,776 ms, spatial 10M in 616 ms (before the region filter), whole runs; not swept"},
	/* every GPU (the CUDA path describes no other device); 132 * 16: 16 blocks for
	 * each of the H200's 132 SMs */
	{"", 4096, (size_t)1 << 18, 132 * 16, 4, 2048,
	    /* bench/README.md, H200 and its 16 CPU threads, 2026-11-22. CPU: anti-corr.
	     * 1M x 8, 9.3e11 estimated comparisons in 5,776 ms on 16 threads (1e10 a
	     * thread-second); GPU: the same in 163.3 ms compute + 3.9 ms upload (5.5e12/s)
	     * and indep. 10M x 4, 1.1e11 in 14.8 + 24.5 ms (2.8e12/s). Fixed costs derived,
	     * to be checked by bench/e2e: the CPU's thread start, the GPU's allocations and
	     * first launches (100k-row runs end 5-10 ms above a one-row run) */
	    {"comparisons", 1e10, 0.002, 4e12, 0.008},
	    /* spatial 10M, |Q| = 16 (5 on the hull): 5e7 point-vertex pairs; CPU 616 ms
	     * whole less its 58 ms read on 16 threads (5.6e6 a thread-second); GPU 36.8 ms
	     * compute + 11.5 ms upload (1e9/s). Measured before the region filter (CPU
	     * 2.6x faster or more on the development machine): to recalibrate by bench/e2e */
	    {"point-vertex pairs", 5.6e6, 0.002, 1e9, 0.008},
	    "H200 2026-11-22, bench/skyline: compute anti-corr. 1M x 8 163.3 ms, spatial "
	    "10M 36.8 ms, both before the region filter; not swept"},
};

#endif
