/* clmatmul_tune.h: clmatmul's kernel parameters per device class and precision, the
 * one place a new device gets its row (see common/tune.h). A row is picked by the
 * device's description (clx_describe: "gpu nvidia NVIDIA H200", "cpu pocl ...") and
 * then by the precision: the first row whose pattern matches and whose precision is
 * the run's. Forced parameters (--tile, --item, ...) replace a row's values.
 *
 * The measurements are bench/README.md's (clmatmul section), 2026-11-22 on the GPU
 * machine: an H200 with NVIDIA's OpenCL, and 16 Xeon cores (skylake-avx512) with PoCL.
 * vn = 0 (the CPU rows) means the device's native vector width, tn twice that and bn
 * four times tn: 48 x 128 tiles with AVX-512, 48 x 64 with AVX2. */
#ifndef CLMATMUL_TUNE_H
#define CLMATMUL_TUNE_H

#include "clmatmul.h"
#include "tune.h"

/* What a row is for: the float32 kernel (the default), float64 (--double), or
 * gemm_tf32 on NVIDIA's tensor cores (--precision tf32). */
enum cm_precision { CM_FP32, CM_FP64, CM_TF32 };

struct clmatmul_tune {
	const char *device;		/* tune_match's pattern */
	enum cm_precision precision;
	struct cm_params p;		/* see clmatmul.h and clmatmul.cl */
	const char *measured;
	/* What -d auto weighs (common/tune.h, opencl.h's clx_decide), in multiply-adds
	 * (m n k): a GPU row gives gpu_rate (transfers from host memory included) and
	 * gpu_fixed (the program's build, its checks and allocations; the context is
	 * CLX_GPU_START_SEC), a CPU row cpu_rate (one compute unit) and cpu_fixed (PoCL's
	 * context and its cached build). The fields of the other kind are not read. */
	struct cost_model cost;
};

#define CM_UNIT "multiply-adds"

/* gemm_tf32's work-item block is its share of a warp's MMA tiles (8 x 16: a warp's
 * 64 x 64 block; 128 work-items, four warps, cover the 128 x 128 tile); slices of 8
 * let four of them (cp.async's stages, --staging async) fit NVIDIA's 48 KB of local
 * memory a work-group, and two work-groups share an SM. Only NVIDIA GPUs run it
 * (anything else is an error before the table is read). */
/* Hopper's tf32 parameters, one set for the H100's row and the H200's (each row keeps
 * its own measurement). */
#define HOPPER_WGMMA {192, 256, 8, 2, 64, 2, 4, 4, 1, 4, 8, 8, CM_WGMMA, 0}

static const struct clmatmul_tune clmatmul_tune_table[] = {
	/* device    precision  bm   bn  bk  tm  tn  vm  vn  lw  pm  pn  gm  ku  staging  regs */
	/* Hopper: gemm_wgmma (clmatmul_wgmma.cl) on packed operands. Its item is fixed by
	 * the tile (2 x bn/4: three warpgroups of 128 for 192 rows); vm ... ku only have to
	 * pass the generic checks. 192 x 256 is the largest tile whose accumulators fit
	 * one work-group's registers, and the kernel is bound by its copies. */
	{"gpu nvidia H100", CM_TF32, HOPPER_WGMMA,
	    "H100 2026-11-26, --staging wgmma sweep at N = 8192 (bench/README.md, TF32 "
	    "with wgmma): 192x256 tiles, slices of 8, 3 in local memory: 223 TFLOP/s with "
	    "the packing; 256x192 220, 128x256 183, 128x128 144; cuBLAS TF32 399",
	    {CM_UNIT, 0, 0, 9.0e12, 0.10}},
	{"gpu nvidia H200", CM_TF32, HOPPER_WGMMA,
	    "H200 2026-11-26, bench run at N = 8192 with the H100's row: 4.83 ms, 227 "
	    "TFLOP/s with the packing; async 10.2; cuBLAS TF32 2.71 (0.56x)",
	    {CM_UNIT, 0, 0, 9.0e12, 0.10}},
	{"gpu nvidia", CM_TF32, {128, 128,  8,  8, 16,  4,  4,  4,  1,  8,  8, 16, CM_ASYNC,  0},
	    "H100 2026-11-26, --staging async sweep at N = 8192 (bench/README.md, TF32 "
	    "with cp.async): 128x128 tiles, 8x16 items, slices of 8, 4 stages: 109.1 "
	    "TFLOP/s; 128x256 (8 warps, 3 stages) 96.8; --staging local at 128x256 96.2; "
	    "cuBLAS TF32 395.6",
	    /* derived: the float32 row's transfers around a kernel twice as fast; to be
	     * checked by bench/e2e */
	    {CM_UNIT, 0, 0, 9.0e12, 0.10}},
	{"gpu nvidia", CM_FP32, {128, 256, 16, 16,  8,  8,  4,  4,  1, 16,  8, 16, CM_LOCAL,  0},
	    "H200 2026-11-26, sweep at N = 8192 (bench/README.md): 16x8 items of 8x4 "
	    "vectors 22.50-22.57 ms, 48.8 TFLOP/s, against 8x16 items of 4x4 23.73-23.79 "
	    "(46.3, the row of 2026-11-22); cuBLAS 21.53-21.75",
	    /* bench/README.md: N = 16384 in core from host, 565 ms with pageable copies,
	     * 7.8e12 multiply-adds/s (pinned copies should bring it near 1.8e13);
	     * gpu_fixed: the build and first launches, to be checked by bench/e2e */
	    {CM_UNIT, 0, 0, 7.8e12, 0.10}},
	{"gpu nvidia", CM_FP64, { 64,  64, 16,  4,  4,  2,  2,  2,  4,  8,  8, 16, CM_LOCAL,  0},
	    "reasoned, not measured",
	    {CM_UNIT, 0, 0, 1.5e12, 0.10}},		/* reasoned */
	{"gpu",        CM_FP32, { 64,  64, 16,  4,  4,  4,  4,  4,  4,  8,  8, 16, CM_LOCAL,  0},
	    "reasoned, not measured",
	    {CM_UNIT, 0, 0, 2.0e12, 0.10}},		/* reasoned */
	{"gpu",        CM_FP64, { 64,  64, 16,  4,  4,  2,  2,  2,  4,  8,  8, 16, CM_LOCAL,  0},
	    "reasoned, not measured",
	    {CM_UNIT, 0, 0, 5.0e11, 0.10}},		/* reasoned */
	/* CPUs (PoCL), and any other device: the direct kernel */
	{"",           CM_FP32, { 48,  64, 128, 6, 16,  1,  0,  4,  1,  4,  4,  8, CM_DIRECT, 0},
	    "16 Xeon cores (PoCL) 2026-11-22, bench/clmatmul sweep at N = 2048: depth 128 "
	    "977 GFLOP/s, 64: 891, 32: 849",
	    /* bench/README.md: 1135 GFLOP/s on 16 Xeon cores at N = 2048, 3.5e10
	     * multiply-adds/s a core; cpu_fixed: PoCL's cached build and context, 0.15 s
	     * with -v on the 2-core development machine */
	    {CM_UNIT, 3.5e10, 0.15, 0, 0}},
	{"",           CM_FP64, { 48,  32, 128, 6,  8,  1,  0,  4,  1,  4,  4,  8, CM_DIRECT, 0},
	    "reasoned, not measured",
	    {CM_UNIT, 1.75e10, 0.15, 0, 0}},		/* reasoned: float32's half */
};

#endif
