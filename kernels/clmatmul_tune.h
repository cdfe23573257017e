/* clmatmul_tune.h: clmatmul's kernel parameters per device class and precision, the
 * one place a new device gets its row (see common/tune.h). A row is picked by the
 * device's description (clx_describe: "gpu nvidia NVIDIA H200", "cpu pocl ...") and
 * then by the precision: the first row whose pattern matches and whose precision is
 * the run's. Forced parameters (--tile, --item, ...) replace a row's values.
 *
 * The measurements are bench/README.md's (clmatmul section), 2026-11-22 on the GPU
 * machine: an H200 with NVIDIA's OpenCL, and 16 Xeon cores (skylake-avx512) with PoCL.
 * vn = 0 (the CPU rows) means the device's native vector width, tn twice that and bn
 * four times tn: 48 x 128 tiles with AVX-512, 48 x 64 with AVX2.
 *
 * Every row passes cm_tune_illegal (below the table; tests/clmatmul.bats runs it
 * through tests/tunerows): the kernel's own checks (cm_params_problem, which cm_open
 * also runs on the parameters it takes, forced ones included) on the limits of the
 * devices the row can meet, and the cost model -d auto weighs. */
#ifndef CLMATMUL_TUNE_H
#define CLMATMUL_TUNE_H

#include <stdio.h>
#include <string.h>

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
 * its own measurement). gemm_wgmma (clmatmul_wgmma.cl) on packed operands: its item
 * is fixed by the tile (2 x bn/4: three warpgroups of 128 for 192 rows); vm ... ku only
 * have to pass the generic checks. 192 x 256 is the largest tile whose accumulators
 * fit one work-group's registers, and the kernel is bound by its copies. */
#define HOPPER_WGMMA {.bm = 192, .bn = 256, .bk = 8, .tm = 2, .tn = 64, .vm = 2, .vn = 4, \
	.lw = 4, .pm = 1, .pn = 4, .gm = 8, .ku = 8, .staging = CM_WGMMA, .regs = 0}

static const struct clmatmul_tune clmatmul_tune_table[] = {
	{
		.device = "gpu nvidia H100", .precision = CM_TF32,
		.p = HOPPER_WGMMA,
		.measured = "H100 2026-11-26, --staging wgmma sweep at N = 8192 "
		    "(bench/README.md, TF32 with wgmma): 192x256 tiles, slices of 8, 3 in "
		    "local memory: 223 TFLOP/s with the packing; 256x192 220, 128x256 183, "
		    "128x128 144; cuBLAS TF32 399",
		.cost = {.unit = CM_UNIT, .gpu_rate = 9.0e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu nvidia H200", .precision = CM_TF32,
		.p = HOPPER_WGMMA,
		.measured = "H200 2026-11-26, bench run at N = 8192 with the H100's row: "
		    "4.83 ms, 227 TFLOP/s with the packing; async 10.2; cuBLAS TF32 2.71 "
		    "(0.56x)",
		.cost = {.unit = CM_UNIT, .gpu_rate = 9.0e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu nvidia", .precision = CM_TF32,
		.p = {.bm = 128, .bn = 128, .bk = 8, .tm = 8, .tn = 16, .vm = 4, .vn = 4,
		    .lw = 4, .pm = 1, .pn = 8, .gm = 8, .ku = 16, .staging = CM_ASYNC},
		.measured = "H100 2026-11-26, --staging async sweep at N = 8192 "
		    "(bench/README.md, TF32 with cp.async): 128x128 tiles, 8x16 items, slices "
		    "of 8, 4 stages: 109.1 TFLOP/s; 128x256 (8 warps, 3 stages) 96.8; "
		    "--staging local at 128x256 96.2; cuBLAS TF32 395.6",
		/* derived: the float32 row's transfers around a kernel twice as fast; to be
		 * checked by bench/e2e */
		.cost = {.unit = CM_UNIT, .gpu_rate = 9.0e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu nvidia", .precision = CM_FP32,
		.p = {.bm = 128, .bn = 256, .bk = 16, .tm = 16, .tn = 8, .vm = 8, .vn = 4,
		    .lw = 4, .pm = 1, .pn = 16, .gm = 8, .ku = 16, .staging = CM_LOCAL},
		.measured = "H200 2026-11-26, sweep at N = 8192 (bench/README.md): 16x8 "
		    "items of 8x4 vectors 22.50-22.57 ms, 48.8 TFLOP/s, against 8x16 items of "
		    "4x4 23.73-23.79 (46.3, the row of 2026-11-22); cuBLAS 21.53-21.75",
		/* bench/README.md: N = 16384 in core from host, 565 ms with pageable copies,
		 * 7.8e12 multiply-adds/s (pinned copies should bring it near 1.8e13);
		 * gpu_fixed: the build and first launches, to be checked by bench/e2e */
		.cost = {.unit = CM_UNIT, .gpu_rate = 7.8e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu nvidia", .precision = CM_FP64,
		.p = {.bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .vm = 2, .vn = 2,
		    .lw = 2, .pm = 4, .pn = 8, .gm = 8, .ku = 16, .staging = CM_LOCAL},
		.measured = "reasoned, not measured",
		.cost = {.unit = CM_UNIT, .gpu_rate = 1.5e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu", .precision = CM_FP32,
		.p = {.bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .vm = 4, .vn = 4,
		    .lw = 4, .pm = 4, .pn = 8, .gm = 8, .ku = 16, .staging = CM_LOCAL},
		.measured = "reasoned, not measured",
		.cost = {.unit = CM_UNIT, .gpu_rate = 2.0e12, .gpu_fixed = 0.10},
	},
	{
		.device = "gpu", .precision = CM_FP64,
		.p = {.bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .vm = 2, .vn = 2,
		    .lw = 2, .pm = 4, .pn = 8, .gm = 8, .ku = 16, .staging = CM_LOCAL},
		.measured = "reasoned, not measured",
		.cost = {.unit = CM_UNIT, .gpu_rate = 5.0e11, .gpu_fixed = 0.10},
	},
	/* CPUs (PoCL), and any other device: the direct kernel. vn = 0: the device's
	 * native width (cm_row_params). */
	{
		.device = "", .precision = CM_FP32,
		.p = {.bm = 48, .bn = 64, .bk = 128, .tm = 6, .tn = 16, .vm = 1, .vn = 0,
		    .lw = 4, .pm = 1, .pn = 4, .gm = 4, .ku = 8, .staging = CM_DIRECT},
		.measured = "16 Xeon cores (PoCL) 2026-11-22, bench/clmatmul sweep at N = "
		    "2048: depth 128 977 GFLOP/s, 64: 891, 32: 849",
		/* bench/README.md: 1135 GFLOP/s on 16 Xeon cores at N = 2048, 3.5e10
		 * multiply-adds/s a core; cpu_fixed: PoCL's cached build and context, 0.15 s
		 * with -v on the 2-core development machine */
		.cost = {.unit = CM_UNIT, .cpu_rate = 3.5e10, .cpu_fixed = 0.15},
	},
	{
		.device = "", .precision = CM_FP64,
		.p = {.bm = 48, .bn = 32, .bk = 128, .tm = 6, .tn = 8, .vm = 1, .vn = 0,
		    .lw = 4, .pm = 1, .pn = 4, .gm = 4, .ku = 8, .staging = CM_DIRECT},
		.measured = "reasoned, not measured",
		/* reasoned: float32's half */
		.cost = {.unit = CM_UNIT, .cpu_rate = 1.75e10, .cpu_fixed = 0.15},
	},
};

/* ---- what a set of kernel parameters must be (the table's rows, forced ones) ---- */

/* What of a device the checks read (cm_open gives the device's; cm_tune_illegal the
 * least a row's devices have). */
struct cm_limits {
	size_t max_wg;			/* work-items a work-group */
	unsigned long long local_mem;	/* bytes of local memory a work-group */
	int sm90a;			/* Hopper's wgmma (clx_has_sm90a) */
};

/* gemm_tf32's local slices have rows padded by CM_TF32_PAD (conflict-free fragment
 * reads): all of them with --staging local, those stored tile-contiguous with async. */
enum { CM_TF32_PAD = 8 };

/* --staging async: the local bytes of one slice of op(A) and op(B) (clmatmul.cl's SA
 * and SB: rows of BK floats without padding where the operand is stored k-contiguous,
 * else BK rows of the tile padded by CM_TF32_PAD), and the slices in flight the kernel
 * gets: as many as fit the device's local memory, from 2 to 4 (0: not 2). */
static inline size_t
cm_async_slice_bytes(const struct cm_params *p, int ta, int tb)
{
	size_t a = ta ? (size_t)p->bk * (size_t)(p->bm + CM_TF32_PAD) : (size_t)p->bm * p->bk;
	size_t b = tb ? (size_t)p->bn * p->bk : (size_t)p->bk * (size_t)(p->bn + CM_TF32_PAD);
	return (a + b) * sizeof(float);
}

static inline int
cm_async_stages(const struct cm_params *p, int ta, int tb, const struct cm_limits *l)
{
	size_t n = l->local_mem / cm_async_slice_bytes(p, ta, tb);
	return n < 2 ? 0 : n > 4 ? 4 : (int)n;
}

/* --staging wgmma: the slices of op(A) and op(B) that fit the device's local memory
 * (at most 8; fewer than 2 cannot work), beside their mbarriers (8 bytes each). */
static inline int
cm_wgmma_stages(const struct cm_params *p, const struct cm_limits *l)
{
	size_t n = (l->local_mem - 64) / ((size_t)(p->bm + p->bn) * (size_t)p->bk *
	    sizeof(float));
	return n > 8 ? 8 : (int)n;
}

static inline int
cm_is_pow2_le16(int v)
{
	return v == 1 || v == 2 || v == 4 || v == 8 || v == 16;
}

/* Whether a slice of op(A)'s and of op(B)'s tile (--staging local) is the same whole
 * number of load vectors for every work-item. */
static inline int
cm_loads_divide(const struct cm_params *p)
{
	const long nt = (long)(p->bm / (p->tm > 1 ? p->tm : 1)) * (p->bn / (p->tn > 1 ?
	    p->tn : 1));
	const long a = (long)p->bm * p->bk / p->lw, b = (long)p->bn * p->bk / p->lw;
	if (nt < 1)
		return 1;	/* an item larger than the tile: cm_params_problem says so */
	return a >= nt && b >= nt && a % nt == 0 && b % nt == 0;
}

/* A row's parameters on a device whose native vector width is `native' (vn = 0 rows:
 * that width, tn twice it, bn four times tn). */
static inline struct cm_params
cm_row_params(const struct clmatmul_tune *row, int native)
{
	struct cm_params p = row->p;
	if (p.vn == 0) {
		p.vn = cm_is_pow2_le16(native) && native >= 2 ? native : 4;
		p.tn = 2 * p.vn;
		p.bn = 4 * p.tn;
	}
	return p;
}

/* Why p cannot work on a device of limits l (esize bytes an element, tf32, op(A) and
 * op(B) transposed or not), or NULL. Mirrors the #error checks in clmatmul.cl; the
 * message is the user's when they forced p. why holds the numbers of a message. */
static inline const char *
cm_params_problem(const struct cm_params *p, const struct cm_limits *l, size_t esize,
    int tf32, int ta, int tb, char *why, size_t whysize)
{
	if (p->bm < 1 || p->bn < 1 || p->bk < 1 || p->tm < 1 || p->tn < 1 || p->pm < 1 ||
	    p->pn < 1 || p->gm < 1 || p->ku < 1)
		return "every size must be positive";
	if (p->staging < CM_LOCAL || p->staging > CM_WGMMA)
		return "staging must be local, direct, async or wgmma";
	if (tf32 && p->staging == CM_DIRECT)
		return "--precision tf32 stages slices in local memory (--staging async or local)";
	if (!tf32 && p->staging == CM_ASYNC)
		return "--staging async is --precision tf32's (use local or direct)";
	if (p->staging == CM_WGMMA) {
		if (!tf32)
			return "--staging wgmma is --precision tf32's (use local or direct)";
		if (!l->sm90a)
			return "--staging wgmma needs Hopper's wgmma (an NVIDIA GPU of compute "
			    "capability 9.0; use --staging async)";
		if (p->bm % 64 || p->bm > 256 || (p->bn != 64 && p->bn != 128 &&
		    p->bn != 192 && p->bn != 256) || p->bk % 8 || p->bk > 32)
			return "--staging wgmma takes tiles of 64, 128, 192 or 256 rows by 64, 128, "
			    "192 or 256 columns, and a depth of 8, 16, 24 or 32";
		if (p->tm != 2 || p->tn != p->bn / 4)
			return "--staging wgmma's item is 2 x (tile columns / 4): a work-item's "
			    "share of its warpgroup's 64 rows";
		if (cm_wgmma_stages(p, l) < 2) {
			snprintf(why, whysize, "%zu bytes of local memory for two slices, the "
			    "device has %llu", 2 * (size_t)(p->bm + p->bn) * (size_t)p->bk *
			    sizeof(float), l->local_mem);
			return why;
		}
	}
	if (tf32 && (p->tm % 2 || p->tn % 2 || p->bm % (8 * p->tm) || p->bn % (4 * p->tn) ||
	    p->bk % 8))
		return "--precision tf32 needs an even item R x C, a tile that is a multiple of "
		    "8R x 4C (a warp's MMA tiles) and a depth that is a multiple of 8";
	if (tf32 && p->lw > CM_TF32_PAD)
		return "--precision tf32 loads vectors of at most 8 (its local rows are padded by 8)";
	if (!cm_is_pow2_le16(p->vm) || !cm_is_pow2_le16(p->vn) || !cm_is_pow2_le16(p->lw))
		return "vector widths must be 1, 2, 4, 8 or 16";
	if (p->tm % p->vm || p->tn % p->vn)
		return "the item must be a multiple of the vector widths";
	if (p->bm % p->tm || p->bn % p->tn)
		return "the tile must be a multiple of the item";
	long ntm = p->bm / p->tm, ntn = p->bn / p->tn, nt = ntm * ntn;
	if (p->staging == CM_LOCAL) {
		if (p->bk % p->lw || p->bm % p->lw || p->bn % p->lw)
			return "the tile and its depth must be multiples of the load vector width";
		if (!cm_loads_divide(p))
			return "a slice of the tile must divide evenly into vector loads over the "
			    "work-group";
	}
	if (ntn % p->pn || ntm % p->pm || nt % ((long)p->pm * p->pn))
		return "the patch must divide the work-items of the tile";
	if ((size_t)nt > l->max_wg) {
		snprintf(why, whysize, "%ld work-items a work-group, the device allows %zu",
		    nt, l->max_wg);
		return why;
	}
	size_t pad = tf32 ? CM_TF32_PAD : 0;
	size_t local = 2 * (size_t)p->bk * (size_t)(p->bm + p->bn + 2 * pad) * esize;
	if (p->staging == CM_LOCAL && local > l->local_mem) {
		snprintf(why, whysize, "%zu bytes of local memory, the device has %llu", local,
		    l->local_mem);
		return why;
	}
	if (p->staging == CM_ASYNC && cm_async_stages(p, ta, tb, l) == 0) {
		snprintf(why, whysize, "%zu bytes of local memory for two slices, the device "
		    "has %llu", 2 * cm_async_slice_bytes(p, ta, tb), l->local_mem);
		return why;
	}
	return NULL;
}

/* Why a row of tab (n rows) is wrong, or NULL; *row is its index. A GPU row ("gpu"
 * first in its pattern) must work on the least of the GPUs it serves (1024 work-items
 * a work-group and NVIDIA's 48 KB of local memory; a row for the H100 or H200 with
 * wgmma), a row any device may take on a CPU of PoCL (4096 work-items, its native
 * width 4, 8 or 16), both transposes of each operand; every precision needs a row
 * that matches any device (tune_row falls back to it), and the cost model -d auto
 * reads (clx_decide) positive rates for the kind of device the row is for. */
static inline const char *
cm_tune_illegal(const struct clmatmul_tune *tab, size_t n, size_t *row)
{
	static char why[192];
	int catch_all[3] = {0, 0, 0};
	for (*row = 0; *row < n; (*row)++) {
		const struct clmatmul_tune *t = &tab[*row];
		const int gpu = strncmp(t->device, "gpu", 3) == 0;
		const struct cm_limits l = {gpu ? 1024 : 4096, 48 * 1024,
		    strstr(t->device, "H100") != NULL || strstr(t->device, "H200") != NULL};
		const size_t esize = t->precision == CM_FP64 ? 8 : 4;
		if (t->precision < CM_FP32 || t->precision > CM_TF32)
			return "precision must be CM_FP32, CM_FP64 or CM_TF32";
		if (t->measured == NULL || *t->measured == '\0')
			return "a row says what measured it (or \"reasoned, not measured\")";
		if (gpu && t->p.vn == 0)
			return "vn = 0 (the device's native width) is for rows a CPU takes";
		for (int native = 4; native <= (gpu ? 4 : 16); native *= 2) {
			struct cm_params p = cm_row_params(t, native);
			for (int tr = 0; tr < 4; tr++) {
				const char *w = cm_params_problem(&p, &l, esize,
				    t->precision == CM_TF32, tr & 1, tr >> 1, why, sizeof why);
				if (w != NULL)
					return w;
			}
		}
		const struct cost_model *c = &t->cost;
		if (c->unit == NULL || !(c->cpu_fixed >= 0) || !(c->gpu_fixed >= 0) ||
		    (gpu ? !(c->gpu_rate > 0) : !(c->cpu_rate > 0)))
			return "the cost model needs its unit, a rate above 0 for the row's kind "
			    "of device (gpu_rate for a GPU row, cpu_rate else) and fixed costs "
			    "of 0 or more";
		if (*t->device == '\0')
			catch_all[t->precision] = 1;
	}
	*row = n - 1;
	if (!catch_all[CM_FP32] || !catch_all[CM_FP64])
		return "float32 and float64 each need a row of pattern \"\" (any device)";
	return NULL;
}

#endif
