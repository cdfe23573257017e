/* docsim_tune.h: docsim's tuning table, one row a device class (struct docsim_tune in
 * docsim.h). cmd/docsim.c picks the row once with TUNE_PICK on the device's description
 * (common/tune.h) and hands it to both paths in the job; -v names it. Most specific rows
 * first; the last row (pattern "") matches every device. A new GPU means a new row.
 *
 * The values are the ones the first version chose (git log -p -- kernels/docsim.cu):
 * none was swept. The H200 run of bench/docsim measured them as they are (bench/README.md,
 * "docsim"): the dense case is bound by cuBLAS DGEMM itself (249.7 ms busy of 259.2), and
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
 *                         known, so cmd/docsim.c takes them from the row for any GPU
 *                         (pattern ""), which holds the H200's; DS_COST below says
 *                         which figures each number comes from.
 * Not in the table, as no per-device choice: the element-wise kernels' 256 threads (fill,
 * convert, densify: memory-bound copies), the unroll depths of k_rowsel (4) and k_colsel
 * (8), which size register arrays at compile time (docsim_rank.cu), and the device memory
 * left aside for cuBLAS (92% of what is free, less 256 MB, docsim.cu), and the pinned
 * staging ring for dense uploads (4 buffers of 8 MB, docsim_dev.cuh: host-side).
 *
 * Include it in one file only: the table is defined here. */
#ifndef DOCSIM_TUNE_H
#define DOCSIM_TUNE_H

#include "docsim.h"

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
 *   gpu_fixed 0.15 s: loading cuBLAS and the first calls (docsim on two documents took
 *          ~150 ms above a bare CUDA process in issue 12's table); cpu_fixed 2 ms.
 * The CPU rates were measured on the development machine, not the H200's host, and
 * the fixed costs derived: all to be checked by bench/e2e. */
#define DS_COST \
	.cost_dense = {"multiply-adds", 3.9e9, 0.002, 3.2e13, 0.15}, \
	.cost_sparse = {"multiply-adds", 3.4e8, 0.002, 3.4e10, 0.15}

static const struct docsim_tune docsim_tune_table[] = {
	{"H200", 4096, 512, 65536, 50, 256, 128, 256, 8,
	    "H200 2026-11-22, bench/docsim at these values (not a sweep): dense 100,000 x 1024 "
	    "all-pairs top-10 259.2 ms device, DGEMM-bound; 63,666 texts end to end 560.1 ms",
	    DS_COST},
	{"cpu", 4096, 512, 65536, 50, 256, 128, 256, 8,
	    "reasoned, not measured: 8 rows a block against each corpus row", DS_COST},
	{"", 4096, 512, 65536, 50, 256, 128, 256, 8,
	    "reasoned, not measured: the values measured on the H200", DS_COST},
};

#endif
