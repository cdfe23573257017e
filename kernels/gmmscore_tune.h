/* gmmscore_tune.h: gmmscore's tuning table, one row a device class, most specific
 * first (tune_pick in common/tune.h chooses the row by the device's description; the
 * fields are struct gmmscore_tune in gmmscore.h). A new GPU means a new row, above the
 * one that covers it now, with its own measurement.
 *
 * GPU: the score kernel's tile, Gaussians x frames a thread (its template parameters
 * CPL and FR: compiled for 2 x 64 and 4 x 32, and a row picks one by cpl) and tiles of
 * frames a block; and the frames a chunk. bench/gmmscore sweeps the tiles
 * (GMMSCORE_TILE=cpl,nsub overrides the row for one run); bench/README.md has the
 * results.
 * CPU: the frames a task of the OpenMP loop, and the frames a chunk.
 *
 * Fixed in the code, not tuned here: gmmscore.cu's 128 threads a block, 32 frames a
 * reduction pass and 4 warps a top-N block (launch bounds and shared-memory shapes);
 * gmmscore_cpu.c's 16 frames a SIMD group and 4 components a pass (the shapes of its
 * register arrays); gmmscore_stream.c's 3 chunks in flight and 128 MB of host scores at
 * most a chunk (bounds on memory, not choices of speed). */
#ifndef GMMSCORE_TUNE_H
#define GMMSCORE_TUNE_H

#include "gmmscore.h"

static const struct gmmscore_tune gmmscore_tune_table[] = {
	/* From an H200's sweep, 2026-11-22 (bench/gmmscore: 6647 models x 32 Gaussians x
	 * 39 dimensions, 100,000 frames, --mode sum, device time): 2 x 64 with 4 tiles a
	 * block 115.1 ms; 4 x 32 with 4 tiles 138.2 ms, with 1, 2 or 8 tiles 140.5, 138.7
	 * and 137.8 ms. Halving the feature reads from shared memory (4 x 32) did not pay
	 * for halving the reuse of each parameter read. Not measured on other NVIDIA GPUs;
	 * the chunk of 16384 frames was not swept. */
	{"gpu nvidia", .cpl = 2, .nsub = 4, .chunk = 16384,
	    .measured = "H200 2026-11-22, bench/gmmscore --mode sum: 2x64 tiles 115 ms, "
	    "4x32 138 ms"},
	/* 128 frames a task keep a model's parameters in L1 (32 Gaussians of 39 dimensions:
	 * 10 KB) while the frames stream from L2; 4096 frames a chunk, the first version's
	 * choice. Neither was swept. */
	{"cpu", .chunk = 4096, .cpu_fblk = 128, .measured = "reasoned, not measured"},
	/* No other device reaches a CUDA program (its descriptions are "cpu" and
	 * "gpu nvidia ..."); the catch-all that tune_pick requires holds values that both
	 * paths accept. */
	{"", .cpl = 2, .nsub = 4, .chunk = 4096, .cpu_fblk = 128,
	    .measured = "no row for this device: defaults, not measured"},
};

#endif
