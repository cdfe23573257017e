/* gmmscore_tune.h: gmmscore's tuning table, one row a device class, most specific
 * first (tune_pick in common/tune.h chooses the row by the device's description; the
 * fields are struct gmmscore_tune in gmmscore.h). A new GPU means a new row, above the
 * one that covers it now, with its own measurement, that passes gmmscore_tune_illegal
 * below (tests/gmmscore.bats runs it on every row).
 *
 * GPU: the score kernel's tile, Gaussians x frames a thread (its template parameters
 * CPL and FR: compiled for 2 x 64 and 4 x 32, and a row picks one by cpl) and tiles of
 * frames a block; and the frames a chunk. bench/gmmscore sweeps the tiles
 * (GMMSCORE_TILE=cpl,nsub overrides the row for one run); bench/README.md has the
 * results.
 * CPU: the frames a task of the OpenMP loop, and the frames a chunk.
 * auto: the cost model (struct cost_model, common/tune.h) of a GPU row, in frames x
 * Gaussians x dimensions scored. auto weighs before the device's name is known (CUDA is
 * still starting), so it takes the row GMMSCORE_AUTO_ROW matches: any NVIDIA GPU. It
 * decides once it knows the frames, or GMMSCORE_AUTO_FRAMES of them (man/gmmscore.1,
 * DEVICES, says the rule).
 *
 * Fixed in the code, not tuned here: gmmscore.cu's 128 threads a block, 32 frames a
 * reduction pass and 4 warps a top-N block (launch bounds and shared-memory shapes);
 * gmmscore_cpu.c's 16 frames a SIMD group and 4 components a pass (the shapes of its
 * register arrays); gmmscore_stream.c's 3 chunks in flight and 128 MB of host scores at
 * most a chunk (bounds on memory, not choices of speed). */
#ifndef GMMSCORE_TUNE_H
#define GMMSCORE_TUNE_H

#include "gmmscore.h"
#include "tune.h"

/* The description auto picks its row by, before the device is known. */
#define GMMSCORE_AUTO_ROW "gpu nvidia"
/* The frames auto waits for, from a pipe or a text file, when --chunk does not say: a
 * GPU chunk (the row below). The frames of an NPY or HTK file come from its header. */
#define GMMSCORE_AUTO_FRAMES 16384

static const struct gmmscore_tune gmmscore_tune_table[] = {
	/* From an H200's sweep, 2026-11-22 (bench/gmmscore: 6647 models x 32 Gaussians x
	 * 39 dimensions, 100,000 frames, --mode sum, device time): 2 x 64 with 4 tiles a
	 * block 115.1 ms; 4 x 32 with 4 tiles 138.2 ms, with 1, 2 or 8 tiles 140.5, 138.7
	 * and 137.8 ms. Halving the feature reads from shared memory (4 x 32) did not pay
	 * for halving the reuse of each parameter read. Not measured on other NVIDIA GPUs;
	 * the chunk of 16384 frames was not swept. */
	/* The cost model, from bench/README.md's final run (H200 and a 16-core Xeon,
	 * 100,000 frames x 212,704 Gaussians x 39 dimensions = 8.30e11): the GPU 115.1 ms
	 * device time for --mode sum, 7.2e12 a second (the features' copies overlap the
	 * kernels); the CPU path 5,176 ms whole on 16 threads, 1.0e10 a second a thread.
	 * The GPU's fixed cost, 30 ms, is derived, not measured: the parameters' upload
	 * (bench/README.md's 18 ms "model upload" less the layout, now made while CUDA
	 * starts), the allocations and the first launch. To be checked by bench/e2e. */
	{.device = "gpu nvidia", .cpl = 2, .nsub = 4, .chunk = 16384,
	    .measured = "H200 2026-11-22, bench/gmmscore --mode sum: 2x64 tiles 115 ms, "
	    "4x32 138 ms",
	    .cost = {.unit = "frames x Gaussians x dims", .cpu_rate = 1.0e10, .cpu_fixed = 0.001,
	    .gpu_rate = 7.2e12, .gpu_fixed = 0.030}},
	/* 128 frames a task keep a model's parameters in L1 (32 Gaussians of 39 dimensions:
	 * 10 KB) while the frames stream from L2; 4096 frames a chunk, the first version's
	 * choice. Neither was swept. */
	{.device = "cpu", .chunk = 4096, .cpu_fblk = 128, .measured = "reasoned, not measured"},
	/* No other device reaches a CUDA program (its descriptions are "cpu" and
	 * "gpu nvidia ..."); the catch-all that tune_pick requires holds values that both
	 * paths accept. */
	{.device = "", .cpl = 2, .nsub = 4, .chunk = 4096, .cpu_fblk = 128,
	    .measured = "no row for this device: defaults, not measured"},
};

/* What the paths assume of the table's rows, said where a row is added: NULL when
 * every row of tab[0..n) may be used, else what is wrong and (*row) where.
 * tests/tunerows.c runs it on gmmscore_tune_table (tests/gmmscore.bats). The paths
 * check the tile and the CPU's task again where they take them (gmm_tile_pick,
 * gmm_cpu_score), as $GMMSCORE_TILE may override the row. */
static inline const char *
gmmscore_tune_illegal(const struct gmmscore_tune *tab, size_t n, size_t *row)
{
	for (*row = 0; *row < n; (*row)++) {
		const struct gmmscore_tune *t = &tab[*row];
		/* A row a GPU can take (its pattern does not name the CPU): the score kernel
		 * is compiled for 2 x 64 and 4 x 32 Gaussians x frames a thread, and for 1
		 * to 16 tiles a block (gmmscore.cu score_kernel_for, gmm_tile_pick). */
		if (!tune_match("cpu", t->device) && ((t->cpl != 2 && t->cpl != 4) ||
		    t->nsub < 1 || t->nsub > 16))
			return "a row a GPU can take needs cpl 2 or 4 and nsub 1 to 16: the score "
			    "kernel is compiled for those";
		/* A row the CPU can take: its tasks are of whole SIMD groups of 16 frames
		 * (gmmscore_cpu.c's FB, the shape of its register arrays). */
		if (tune_match(t->device, "cpu") && (t->cpu_fblk < 16 || t->cpu_fblk % 16 != 0))
			return "a row the CPU can take needs cpu_fblk a multiple of 16: a task is "
			    "whole SIMD groups of 16 frames";
		/* The chunk stands in for --chunk, and takes its range (1 to 2^24 frames):
		 * 0 would stream nothing. */
		if (t->chunk < 1 || t->chunk > 1 << 24)
			return "chunk must be 1 to 2^24 frames, as --chunk";
		if (cost_model_illegal(&t->cost) != NULL)
			return cost_model_illegal(&t->cost);
	}
	/* -d auto weighs with the row GMMSCORE_AUTO_ROW picks, before the device is known
	 * (gmmscore_run.c), and lays out the parameters for its tile. */
	*row = tune_pick(tab, n, sizeof *tab, GMMSCORE_AUTO_ROW);
	if (tab[*row].cost.unit == NULL)
		return "the row that GMMSCORE_AUTO_ROW picks needs a cost model: -d auto weighs "
		    "with it";
	return NULL;
}

#endif
