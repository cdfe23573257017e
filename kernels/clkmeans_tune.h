/* clkmeans_tune.h: clkmeans' kernel parameters per device class, the one place a new
 * device gets its row (see common/tune.h). The row is picked by the device's
 * description (clx_describe: "gpu nvidia NVIDIA H200", "cpu pocl ..."); CLKMEANS_TUNE
 * overrides its kernel sizes (kernels/clkmeans_dev.c). The columns of a step (tk)
 * follow the data's width, not the device, and are chosen in clkmeans_dev.c.
 *
 * assign's work-group is tmt x tnt work-items; each holds rmv x rnv float4s of
 * distances, 4 rmv rows by 4 rnv centroids, so a group covers 4 tmt rmv rows by
 * 4 tnt rnv centroids. With k at most small_k, the smaller blocks rmv_small x
 * rnv_small keep the work-items busy. */
#ifndef CLKMEANS_TUNE_H
#define CLKMEANS_TUNE_H

#include "tune.h"

struct clkmeans_tune {
	const char *device;		/* tune_match's pattern */
	int local;			/* assign's tiles through local memory, or direct */
	int tmt, tnt;			/* assign's work-group: work-items along rows, centroids */
	int small_k;			/* k up to this takes the small blocks */
	int rmv, rnv;			/* a work-item's float4s along rows, centroids */
	int rmv_small, rnv_small;	/* the same when k <= small_k */
	int db;				/* double-buffered centroid tiles (local, rows resident) */
	int wg;				/* work-items of the other kernels' groups */
	int rg;				/* rows of a group of partial sums */
	int exact_cu, update_cu;	/* exact's and update's work-groups a compute unit */
	const char *measured;
	/* What -d auto weighs (common/tune.h, opencl.h's clx_decide), in rows x
	 * centroids x columns of every pass over the rows: a GPU row gives gpu_rate and
	 * gpu_fixed (the build, the column statistics, the upload; the context is
	 * CLX_GPU_START_SEC), a CPU row cpu_rate (one compute unit) and cpu_fixed (PoCL's
	 * cached build and first launches). The fields of the other kind are not read. */
	struct cost_model cost;
};

#define KM_UNIT "row-centroid-column products"

static const struct clkmeans_tune clkmeans_tune_table[] = {
	/* Groups of 128 work-items, 8 x 8 (k <= 32: 4 x 4) a work-item: 128 rows x 64
	 * centroid tiles, three groups an SM on an H200. */
	/* device local tmt tnt small_k rmv rnv small db  wg    rg  exact update */
	{"gpu",     1,   16,  8,  32,    2,  2, 1, 1, 0, 256, 1024, 4,   16,
	    "H200 2026-11-22, bench/clkmeans 1M x 64, k = 1024: 3.75 ms an iteration; "
	    "256 work-items (128x128 tiles) 4.54, 64x128 tiles 3.94; db=1 slower (tk=8: "
	    "5.24, without 4.72)",
	    /* 1M x 64 x 1024 in 3.78 ms an iteration: 1.7e13 a second; gpu_fixed
	     * derived, to be checked by bench/e2e */
	    {KM_UNIT, 0, 0, 1.7e13, 0.10}},
	/* CPUs (PoCL), and any other device: a work-item takes 4 rows x 8 centroids at a
	 * time in vector registers, through every centroid; no local memory, no
	 * barriers. */
	{"",        0,   16,  1,   4,    1,  2, 1, 1, 0,  64,  256, 1,    4,
	    "reasoned, not swept; 16 Xeon cores (PoCL) 2026-11-22, bench/clkmeans 1M x 64, "
	    "k = 1024: 627 ms an iteration",
	    /* 1M x 64 x 1024 in 627 ms an iteration on 16 cores: 6.5e9 a second a core;
	     * cpu_fixed: PoCL's cached build and first launches, 0.10 s with -v on the
	     * 2-core development machine */
	    {KM_UNIT, 6.5e9, 0.10, 0, 0}},
};

#endif
