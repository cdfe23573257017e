/* docsim_tune.h: docsim's tuning table, one row a device class (struct docsim_tune in
 * docsim.h). docsim_run.c picks the row once with TUNE_PICK on the device's description
 * (common/tune.h) and hands it to both paths in the job; -v names it. Most specific rows
 * first; the last row (pattern "") matches every device. A new GPU means a new row,
 * which passes docsim_tune_illegal below (tests/docsim.bats runs it on every row).
 *
 * The values are the ones the first version chose (git log -p -- kernels/docsim.cu):
 * none was swept. The H200 run of bench/docsim measured them as they are (bench/README.md,
 * "docsim"): the dense case was bound by cuBLAS DGEMM itself (249.7 ms busy of 259.2; the
 * products are docsim_mma.cu's since issue 37, not yet measured here), and
 * on the apt corpus only 77 terms are frequent, so dense_terms_max does not bind there.
 *   tile_rows 4096        a tile's rows, at most; its columns grow to the memory budget
 *   diag_block 512        rows a GEMM beside the diagonal of an all-pairs tile: smaller
 *                         wastes less of the upper triangle, larger makes fuller GEMMs
 *   dense_terms_max 65536 frequent terms by DGEMM, at most (raised from 2048 in 9cdfcf6,
 *                         which records no measurement)
 *   dense_df_divisor 50   frequent: in more than n/50 documents; the rarer terms' postings
 *                         are short, so k_scatter's warp a row is cheap for them (reasoned)
 *   rank_block 256, colsel_block 128, scatter_block 256   threads a block (k_rowsel,
 *                         k_rowpairs and k_scatter work a warp a row, k_colsel a thread
 *                         a column)
 *   cpu_rows 8            dense CPU path: rows that share each corpus row's load
 *   cost_dense, cost_sparse   what `auto` weighs (common/tune.h), in multiply-adds as
 *                         ds_work counts them (docsim.h). It decides before the GPU is
 *                         known, so docsim_run.c takes them from the row for any GPU
 *                         (pattern ""), which holds the H200's; DS_COST below says
 *                         which figures each number comes from.
 * Not in the table, as no per-device choice: the element-wise kernels' 256 threads (fill,
 * convert, densify: memory-bound copies), the unroll depths of k_rowsel (4) and k_colsel
 * (8), which size register arrays at compile time (docsim_rank.cu), and the device memory
 * left aside for the runtime (92% of what is free, less 256 MB, docsim.cu), the GEMM
 * kernels' tiles (fixed at compile time in docsim_mma.cu), and the pinned
 * staging ring for dense uploads (4 buffers of 8 MB, docsim_dev.cuh: host-side).
 *
 * Include it in docsim_run.c only (and the test, tests/tunerows.c): the table is
 * defined here. */
#ifndef DOCSIM_TUNE_H
#define DOCSIM_TUNE_H

#include <stdint.h>

#include "docsim.h"
#include "tune.h"

/* The cost models, {unit, cpu_rate (a thread), cpu_fixed, gpu_rate, gpu_fixed}:
 *   dense  CPU: 3000 x 256 all-pairs top-10 (2.3e9 multiply-adds) in 0.59 s of CPU time
 *          on one thread of the development machine's Xeon (2026-11-24): 3.9e9/s.
 *          GPU: 100,000 x 1024 all-pairs on the H200 (bench/README.md, "docsim"): 1.02e13
 *          (counting the whole n x n product, as the CPU does) in 259.2 ms of device
 *          time plus the 58 ms upload: 3.2e13/s.
 *   sparse CPU: 20,000 apt descriptions (bench/docsim_corpus) all-pairs top-10, 3.58e8
 *          multiply-adds in 1.04 s of CPU time on one thread, less tokenising: 3.4e8/s.
 *          GPU: the 63,666 apt descriptions on the H200, 3.64e9 multiply-adds in 17.8 ms
 *          host-to-device + 84.0 compute + 4.1 device-to-host: 3.4e10/s.
 *   gpu_fixed 0.15 s: loading cuBLAS and the first calls when it was measured (docsim on
 *          two documents took ~150 ms above a bare CUDA process in issue 12's table;
 *          docsim loads no cuBLAS since issue 37: to be measured again); cpu_fixed 2 ms.
 * The CPU rates were measured on the development machine, not the H200's host, and
 * the fixed costs derived: all to be checked by bench/e2e. */
#define DS_COST \
	.cost_dense = {.unit = "multiply-adds", .cpu_rate = 3.9e9, .cpu_fixed = 0.002, \
	    .gpu_rate = 3.2e13, .gpu_fixed = 0.15}, \
	.cost_sparse = {.unit = "multiply-adds", .cpu_rate = 3.4e8, .cpu_fixed = 0.002, \
	    .gpu_rate = 3.4e10, .gpu_fixed = 0.15}

static const struct docsim_tune docsim_tune_table[] = {
	{.device = "H200", .tile_rows = 4096, .diag_block = 512, .dense_terms_max = 65536,
	    .dense_df_divisor = 50, .rank_block = 256, .colsel_block = 128, .scatter_block = 256,
	    .cpu_rows = 8,
	    .measured = "H200 2026-11-22, bench/docsim at these values (not a sweep): dense "
	    "100,000 x 1024 all-pairs top-10 259.2 ms device, DGEMM-bound; 63,666 texts end to "
	    "end 560.1 ms",
	    DS_COST},
	{.device = "cpu", .tile_rows = 4096, .diag_block = 512, .dense_terms_max = 65536,
	    .dense_df_divisor = 50, .rank_block = 256, .colsel_block = 128, .scatter_block = 256,
	    .cpu_rows = 8,
	    .measured = "reasoned, not measured: 8 rows a block against each corpus row",
	    DS_COST},
	{.device = "", .tile_rows = 4096, .diag_block = 512, .dense_terms_max = 65536,
	    .dense_df_divisor = 50, .rank_block = 256, .colsel_block = 128, .scatter_block = 256,
	    .cpu_rows = 8,
	    .measured = "reasoned, not measured: the values measured on the H200",
	    DS_COST},
};

/* What the paths assume of the table's rows, said where a row is added: NULL when
 * every row of tab[0..n) may be used, else what is wrong and (*row) where.
 * tests/tunerows.c runs it on docsim_tune_table (tests/docsim.bats); the paths do not
 * check again. Every field of every row is checked, the GPU's in the CPU's row too:
 * the rows so far hold the same values. */
static inline const char *
docsim_tune_illegal(const struct docsim_tune *tab, size_t n, size_t *row)
{
	for (*row = 0; *row < n; (*row)++) {
		const struct docsim_tune *t = &tab[*row];
		/* A tile has rows, and the launches pass a tile's rows as int
		 * (docsim_rank.cu, docsim_sparse.cu); the plan halves tile_rows down to 1
		 * (docsim_gemm.cu). */
		if (t->tile_rows < 1 || t->tile_rows > INT32_MAX)
			return "tile_rows must be 1 to 2^31 - 1: launches take a tile's rows as int";
		/* The GEMMs beside the diagonal step by diag_block rows: 0 never advances. */
		if (t->diag_block < 1)
			return "diag_block is 0: the GEMMs beside the diagonal would never advance";
		/* Frequent: df above n / dense_df_divisor (docsim_sparse.cu). */
		if (t->dense_df_divisor < 1)
			return "dense_df_divisor is 0: the frequent terms' cut divides by it";
		/* The frequent terms are the width of the dense panels, which k_densify
		 * takes as int and numbers in int32_t (docsim_sparse.cu). */
		if (t->dense_terms_max > INT32_MAX)
			return "dense_terms_max is over 2^31 - 1: the dense panels' width is an int";
		/* k_rowsel, k_rowpairs and k_scatter work a warp a row, the warp found from
		 * the thread's index (docsim_rank.cu, docsim_sparse.cu): blocks of whole
		 * warps, at most CUDA's 1024 threads. */
		if (t->rank_block < 32 || t->rank_block > 1024 || t->rank_block % 32 != 0 ||
		    t->scatter_block < 32 || t->scatter_block > 1024 || t->scatter_block % 32 != 0)
			return "rank_block and scatter_block must be whole warps, 32 to 1024 "
			    "threads: their kernels work a warp a row";
		/* k_colsel works a thread a column: any block CUDA launches. */
		if (t->colsel_block < 1 || t->colsel_block > 1024)
			return "colsel_block must be 1 to 1024 threads";
		/* The dense CPU path takes blocks of cpu_rows query rows (docsim_cpu.c). */
		if (t->cpu_rows < 1)
			return "cpu_rows is 0: the dense CPU path takes blocks of cpu_rows rows";
		const char *why = cost_model_illegal(&t->cost_dense);
		if (why != NULL || (why = cost_model_illegal(&t->cost_sparse)) != NULL)
			return why;
	}
	/* -d auto weighs with the row that "gpu" picks, before the GPU is known. */
	*row = tune_pick(tab, n, sizeof *tab, "gpu");
	if (tab[*row].cost_dense.unit == NULL || tab[*row].cost_sparse.unit == NULL)
		return "the row that \"gpu\" picks needs both cost models: -d auto weighs with it";
	return NULL;
}

#endif
