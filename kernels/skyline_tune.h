/* skyline_tune.h: skyline's choices per device, in one table (common/tune.h says how
 * a row is picked). skyline_run.c picks a row once, from the device's description
 * ("cpu" for the CPU path), and hands it to both paths in their jobs; -v prints it.
 * A new kind of GPU means a row here, above the catch-all, with its measurement, that
 * passes sky_tune_illegal below (tests/skyline.bats runs it on every row).
 *
 * What is measured so far (bench/README.md, skyline): bench/skyline on an H200 and
 * its machine's 16 CPU threads, 2026-11-22, with the values below. They are the
 * values the paths were written with; no sweep of other values has been run. */
#ifndef SKYLINE_TUNE_H
#define SKYLINE_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "tune.h"

/* Compiled into the CUDA kernels (their __launch_bounds__ and shared-memory arrays
 * are sized by them), so one value for every row: a GPU that wants others needs the
 * kernels built for them. H200 2026-11-22, bench/skyline run 2 (commit 11a7cca):
 * classic filter 161.4 ms for anti-correlated 1M x 8, spatial filter 34.6 ms for 10M
 * points; no other value tried. */
#define SKY_NT 256		/* threads a block */
#define SKY_TILE 256		/* skyline rows a shared-memory tile of the scans */
/* The spatial pass reduces a warp at a time (skyline_spatial.cu k_sp_prep's red[NT /
 * 32]) and its first 17 threads load the pivots; CUDA's blocks hold 1024 threads. */
#if SKY_NT % 32 != 0 || SKY_NT < 32 || SKY_NT > 1024
#error "SKY_NT: whole warps, 32 to 1024 threads a block"
#endif
/* k_scan's tile (skyline_classic.cu) holds 16 ranks and a mask a row in the 48 KB of
 * static shared memory a block may have. */
#if SKY_TILE < 1 || SKY_TILE * (16 + 1) * 4 > 48 * 1024
#error "SKY_TILE: a tile of 17 words a row must fit 48 KB of shared memory"
#endif

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
	{.device = "cpu",
	    .batch_first = 1024, .batch_max = (size_t)1 << 16, .pivot_blocks = 0,
	    .grid_per_cell = 4, .grid_side_max = 2048,
	    .cost_classic = {NULL, 0, 0, 0, 0}, .cost_spatial = {NULL, 0, 0, 0, 0},
	    .measured = "16 threads of the H200 machine 2026-11-22, bench/skyline: anti-corr. "
	    "1M x 8 in 5,776 ms, spatial 10M in 616 ms (before the region filter), whole runs; "
	    "not swept"},
	/* every GPU (the CUDA path describes no other device); 132 * 16: 16 blocks for
	 * each of the H200's 132 SMs */
	{.device = "",
	    .batch_first = 4096, .batch_max = (size_t)1 << 18, .pivot_blocks = 132 * 16,
	    .grid_per_cell = 4, .grid_side_max = 2048,
	    /* bench/README.md, H200 and its 16 CPU threads, 2026-11-22. CPU: anti-corr.
	     * 1M x 8, 9.3e11 estimated comparisons in 5,776 ms on 16 threads (1e10 a
	     * thread-second); GPU: the same in 163.3 ms compute + 3.9 ms upload (5.5e12/s)
	     * and indep. 10M x 4, 1.1e11 in 14.8 + 24.5 ms (2.8e12/s). Fixed costs derived,
	     * to be checked by bench/e2e: the CPU's thread start, the GPU's allocations and
	     * first launches (100k-row runs end 5-10 ms above a one-row run) */
	    .cost_classic = {.unit = "comparisons", .cpu_rate = 1e10, .cpu_fixed = 0.002,
	    .gpu_rate = 4e12, .gpu_fixed = 0.008},
	    /* spatial 10M, |Q| = 16 (5 on the hull): 5e7 point-vertex pairs; CPU 616 ms
	     * whole less its 58 ms read on 16 threads (5.6e6 a thread-second); GPU 36.8 ms
	     * compute + 11.5 ms upload (1e9/s). Measured before the region filter (CPU
	     * 2.6x faster or more on the development machine): to recalibrate by bench/e2e */
	    .cost_spatial = {.unit = "point-vertex pairs", .cpu_rate = 5.6e6,
	    .cpu_fixed = 0.002, .gpu_rate = 1e9, .gpu_fixed = 0.008},
	    .measured = "H200 2026-11-22, bench/skyline: compute anti-corr. 1M x 8 163.3 ms, "
	    "spatial 10M 36.8 ms, both before the region filter; not swept"},
};

/* What the paths assume of the table's rows, said where a row is added: NULL when
 * every row of tab[0..n) may be used, else what is wrong and (*row) where.
 * tests/tunerows.c runs it on sky_tune_table (tests/skyline.bats); the paths do not
 * check again. */
static inline const char *
sky_tune_illegal(const struct sky_tune *tab, size_t n, size_t *row)
{
	for (*row = 0; *row < n; (*row)++) {
		const struct sky_tune *t = &tab[*row];
		/* Both sort-filters (skyline_cpu.c sort_filter, skyline_classic.cu
		 * classic_run) take batches from batch_first, doubling: 0 never advances. */
		if (t->batch_first == 0)
			return "batch_first is 0: the sort-filter would take empty batches forever";
		/* Their candidate buffers hold batch_max rows, and the first batch must fit. */
		if (t->batch_max < t->batch_first)
			return "batch_max is below batch_first: the first batch would overflow "
			    "the buffers sized for batch_max";
		/* The GPU counts a batch's candidates in 32 bits (classic_run's bmax). */
		if (t->batch_max > UINT32_MAX)
			return "batch_max is over 2^32 - 1: the GPU counts a batch in 32 bits";
		/* sky_grid_side divides by grid_per_cell; a grid has a cell a side at least. */
		if (t->grid_per_cell == 0 || t->grid_side_max == 0)
			return "grid_per_cell and grid_side_max must be 1 or more (sky_grid_side)";
		/* Cells are numbered in 32 bits: the GPU's sort keys and the CPU's start[]. */
		if (t->grid_side_max > 65535)
			return "grid_side_max is over 65535: cells are numbered in 32 bits";
		/* A row a GPU can take (its pattern does not name the CPU) launches
		 * min(blocks, pivot_blocks) blocks to find the pivots (skyline_spatial.cu):
		 * 0 is an empty grid, a launch error. */
		if (!tune_match("cpu", t->device) && t->pivot_blocks == 0)
			return "pivot_blocks is 0 in a row a GPU can take: no pivot blocks launch";
		const char *why = cost_model_illegal(&t->cost_classic);
		if (why != NULL || (why = cost_model_illegal(&t->cost_spatial)) != NULL)
			return why;
	}
	/* -d auto weighs with the row that "gpu" picks (skyline_run.c cost_row,
	 * skyline_divide.c), before the device is known. */
	*row = tune_pick(tab, n, sizeof *tab, "gpu");
	if (tab[*row].cost_classic.unit == NULL || tab[*row].cost_spatial.unit == NULL)
		return "the row that \"gpu\" picks needs both cost models: -d auto weighs with it";
	return NULL;
}

#endif
