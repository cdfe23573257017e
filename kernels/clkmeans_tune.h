/* clkmeans_tune.h: clkmeans' kernel parameters per device class, the one place a new
 * device gets its row (see common/tune.h), and their legality checks beside it. The
 * row is picked by the device's description (clx_describe: "gpu nvidia NVIDIA H200",
 * "cpu pocl ..."); CLKMEANS_TUNE overrides its kernel sizes (kernels/clkmeans_dev.c).
 * The columns of a step (tk) follow the data's width, not the device, and are chosen in
 * clkmeans_dev.c. A new row passes clkmeans_tune_illegal below (tests/clkmeans.bats
 * runs it on every row, through tests/tunerows.c).
 *
 * assign's work-group is tmt x tnt work-items; each holds rmv x rnv float4s of
 * distances, 4 rmv rows by 4 rnv centroids, so a group covers 4 tmt rmv rows by
 * 4 tnt rnv centroids. With k at most small_k, the smaller blocks rmv_small x
 * rnv_small keep the work-items busy.
 *
 * Small work never reaches OpenCL: -d auto runs the native host path
 * (kernels/clkmeans_host.c) when its estimate (KM_HOST_COST, below) is within a GPU's
 * start. */
#ifndef CLKMEANS_TUNE_H
#define CLKMEANS_TUNE_H

#include <stddef.h>

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
	 * CLX_GPU_START_SEC). A CPU row's cpu_rate (one compute unit) and cpu_fixed
	 * (PoCL's cached build and first launches) are PoCL's, for the record: auto
	 * weighs the host path's KM_HOST_COST for the CPU. */
	struct cost_model cost;
};

#define KM_UNIT "row-centroid-column products"

/* The native host path's cost model (clkmeans_host.c), what -d auto weighs for the
 * CPU (clkmeans_run.c): a run whose host estimate is within a GPU's start
 * (CLX_GPU_START_SEC and the GPU row's gpu_fixed, 0.40 s) stays on the host without
 * loading OpenCL; above it the host is weighed against the first GPU. PoCL's device is
 * never auto's choice: it computes at about the host path's rate and pays its
 * platform's start (reachable as cpu:N).
 * Measured on the 2-core development machine (AVX-512, shared and loaded), 2026-11-29,
 * 20000 x 32, 10 iterations from random rows, one thread (CPU time): k = 64, 4.5e8
 * products, 0.04 s; k = 256, 1.8e9, 0.17 s; k = 1024, 7.2e9, 0.66 s: 1.1e10 products a
 * second a thread; PoCL's device (both cores) 0.10 s and 0.61 s of CPU for k = 64 and
 * 1024, plus its start: the testdata demos 52-56 ms whole process through PoCL (idle
 * machine), 5-12 ms natively. cpu_rate is half the measured rate, for CPUs without
 * AVX-512 (not measured); cpu_fixed the native demos' whole process. */
#define KM_HOST_COST {.unit = KM_UNIT, .cpu_rate = 5e9, .cpu_fixed = 0.005}

static const struct clkmeans_tune clkmeans_tune_table[] = {
	/* Groups of 128 work-items, 8 x 8 (k <= 32: 4 x 4) a work-item: 128 rows x 64
	 * centroid tiles, three groups an SM on an H200. */
	{.device = "gpu", .local = 1, .tmt = 16, .tnt = 8, .small_k = 32,
	    .rmv = 2, .rnv = 2, .rmv_small = 1, .rnv_small = 1, .db = 0,
	    .wg = 256, .rg = 1024, .exact_cu = 4, .update_cu = 16,
	    .measured = "H200 2026-11-22, bench/clkmeans 1M x 64, k = 1024: 3.75 ms an "
	    "iteration; 256 work-items (128x128 tiles) 4.54, 64x128 tiles 3.94; db=1 slower "
	    "(tk=8: 5.24, without 4.72)",
	    /* 1M x 64 x 1024 in 3.78 ms an iteration: 1.7e13 a second; gpu_fixed
	     * derived, to be checked by bench/e2e */
	    .cost = {.unit = KM_UNIT, .gpu_rate = 1.7e13, .gpu_fixed = 0.10}},
	/* CPUs (PoCL), and any other device: a work-item takes 4 rows x 8 centroids at a
	 * time in vector registers, through every centroid; no local memory, no
	 * barriers. */
	{.device = "", .local = 0, .tmt = 16, .tnt = 1, .small_k = 4,
	    .rmv = 1, .rnv = 2, .rmv_small = 1, .rnv_small = 1, .db = 0,
	    .wg = 64, .rg = 256, .exact_cu = 1, .update_cu = 4,
	    .measured = "reasoned, not swept; 16 Xeon cores (PoCL) 2026-11-22, bench/clkmeans "
	    "1M x 64, k = 1024: 627 ms an iteration",
	    /* 1M x 64 x 1024 in 627 ms an iteration on 16 cores: 6.5e9 a second a core;
	     * cpu_fixed: PoCL's cached build and first launches, 0.10 s with -v on the
	     * 2-core development machine */
	    .cost = {.unit = KM_UNIT, .cpu_rate = 6.5e9, .cpu_fixed = 0.10}},
};

/* The largest work-group a row may ask for: NVIDIA's OpenCL takes 1024 work-items
 * (PoCL 4096); a device that takes fewer is checked when it is opened (choose_tune). */
#define KM_TUNE_MAX_WG 1024

static inline int
km_pow2(int v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

/* Whether one set of kernel sizes (a row's, for one k, or CLKMEANS_TUNE's) can be
 * built and launched on a device whose work-groups hold max_wg work-items: NULL if so,
 * else what is wrong. The kernels index their tiles by shifts and masks (powers of two,
 * clkmeans_defs.cl's TM, TN, B4, A1), step by tk columns (4, 8 or 16: the float4 loads
 * of a step), sum rg rows a group in rg / wg rounds of a work-group (rowdist, kpp), and
 * without local tiles (CPUs) a work-item runs through every centroid alone (tnt 1);
 * with them a group loads its tile rows in one round (tm <= nt). */
static inline const char *
km_tune_legal(int local, int tmt, int tnt, int rmv, int rnv, int tk, int wg, int rg,
    size_t max_wg)
{
	size_t nt = (size_t)tmt * (size_t)tnt, tm = (size_t)tmt * (size_t)rmv * 4;
	if (!km_pow2(tmt) || !km_pow2(tnt) || !km_pow2(rmv) || !km_pow2(rnv))
		return "tmt, tnt, rmv and rnv must be powers of two: assign's tiles are indexed "
		    "by shifts and masks";
	if (tk != 4 && tk != 8 && tk != 16)
		return "tk must be 4, 8 or 16: a step's columns are float4 loads";
	if (!km_pow2(wg) || !km_pow2(rg) || rg % wg != 0)
		return "wg and rg must be powers of two, rg a multiple of wg: rowdist and kpp "
		    "sum rg rows a group in rounds of wg";
	if (nt > max_wg || (size_t)wg > max_wg)
		return "assign's tmt x tnt work-items or wg exceed the device's work-group";
	if (local ? tm > nt : tnt != 1)
		return local ? "with local tiles a group's 4 tmt rmv rows must be at most its "
		    "tmt x tnt work-items (one row a work-item when loading)" :
		    "without local tiles tnt must be 1: a work-item runs through every centroid";
	return NULL;
}

/* What the kernels and -d auto assume of the table's rows: NULL when every row of
 * tab[0..n) may be used, else what is wrong and (*row) where. tests/tunerows.c runs it
 * on clkmeans_tune_table (tests/clkmeans.bats); choose_tune checks the sizes again
 * against the device opened, as CLKMEANS_TUNE may override them. */
static inline const char *
clkmeans_tune_illegal(const struct clkmeans_tune *tab, size_t n, size_t *row)
{
	for (*row = 0; *row < n; (*row)++) {
		const struct clkmeans_tune *t = &tab[*row];
		const char *why;
		/* Both block sizes (k above small_k and at most it), every step width. */
		for (int tk = 4; tk <= 16; tk *= 2) {
			why = km_tune_legal(t->local, t->tmt, t->tnt, t->rmv, t->rnv, tk, t->wg,
			    t->rg, KM_TUNE_MAX_WG);
			if (why == NULL)
				why = km_tune_legal(t->local, t->tmt, t->tnt, t->rmv_small,
				    t->rnv_small, tk, t->wg, t->rg, KM_TUNE_MAX_WG);
			if (why != NULL)
				return why;
		}
		if (t->local != 0 && t->local != 1)
			return "local must be 0 or 1 (the kernels' LOCAL_TILES)";
		if (t->db != 0 && t->db != 1)
			return "db must be 0 or 1 (the kernels' DB)";
		if (t->db && !t->local)
			return "db needs local tiles: it double-buffers the local centroid tiles";
		if (t->small_k < 0)
			return "small_k must be 0 or more";
		/* exact and update launch compute units x these groups: 0 launches none. */
		if (t->exact_cu < 1 || t->update_cu < 1)
			return "exact_cu and update_cu must be 1 or more: 0 launches no groups";
		if (t->measured == NULL)
			return "a row says what measurement chose it (.measured)";
	}
	/* clx_decide weighs the GPU row's gpu_ fields (against KM_HOST_COST); the CPU
	 * row's cpu_ fields are PoCL's, kept whole for the record: cost_pick_gpu divides
	 * by both rates. */
	*row = tune_pick(tab, n, sizeof *tab, "gpu");
	const struct cost_model *g = &tab[*row].cost;
	if (g->unit == NULL || !(g->gpu_rate > 0) || !(g->gpu_fixed >= 0))
		return "the row a GPU takes needs a cost model with gpu_rate above 0 and "
		    "gpu_fixed 0 or more: -d auto weighs with it";
	*row = tune_pick(tab, n, sizeof *tab, "cpu");
	const struct cost_model *c = &tab[*row].cost;
	if (c->unit == NULL || !(c->cpu_rate > 0) || !(c->cpu_fixed >= 0))
		return "the row a CPU takes needs a cost model with cpu_rate above 0 and "
		    "cpu_fixed 0 or more (PoCL's, for the record)";
	return NULL;
}

#endif
