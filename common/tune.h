/* tune.h: picking a row of a program's tuning table.
 *
 * Each program keeps its kernel parameters per device class in one table,
 * kernels/PROG_tune.h, as CLBlast keeps its database: one row a device class, each row
 * with the parameters and the measurement that chose them, most specific rows first
 * and a catch-all row last. A new GPU means adding a row.
 *
 * A row's first member is its device pattern: words that must all appear, in any
 * case, in the device's description. Descriptions are built by tune_describe_*:
 *   "gpu nvidia NVIDIA H200 sm_90"        (CUDA: kind, vendor, name, architecture)
 *   "gpu nvidia NVIDIA H200"              (OpenCL: kind, vendor class, device name)
 *   "cpu pocl cpu-haswell-Intel(R) Xeon(R) ..."
 * so "gpu nvidia" is any NVIDIA GPU, "H200" that chip, "sm_90" any Hopper, "cpu" any
 * CPU, and "" every device. */
#ifndef ACCELKIT_TUNE_H
#define ACCELKIT_TUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether every blank-separated word of pattern occurs in desc, ignoring case. */
int tune_match(const char *pattern, const char *desc);

/* The index of the first row of table (n rows of stride bytes, each starting with its
 * `const char *` pattern) that matches desc. The last row must match everything
 * (pattern ""): a table without one is a programming error, reported and exit 1. */
size_t tune_pick(const void *table, size_t n, size_t stride, const char *desc);
#define TUNE_PICK(table, desc) \
	(&(table)[tune_pick((table), sizeof(table) / sizeof((table)[0]), sizeof((table)[0]), (desc))])

/* What `auto` weighs (issue 12): a program's cost model, a column of its tuning table,
 * calibrated from its benchmarks. Work is counted in the program's own unit (cells,
 * multiply-adds, point comparisons, ...). */
struct cost_model {
	const char *unit;	/* for -v: "cells" */
	double cpu_rate;	/* units a second on one CPU thread */
	double cpu_fixed;	/* seconds the CPU path pays whatever the work */
	double gpu_rate;	/* units a second on the GPU, transfers included */
	double gpu_fixed;	/* seconds the GPU path pays beyond the device's start: set-up,
				   allocations, first launches */
};

/* Why m cannot be weighed, or NULL: cost_pick_gpu divides by both rates, so each must be
 * above 0, and the fixed costs 0 or more. A model without a unit (none) passes. For the
 * tuning tables' legality checks. */
const char *cost_model_illegal(const struct cost_model *m);

/* Whether the GPU pays for work units, given the seconds of the device's start still to
 * wait for (start_left):
 *   cpu = cpu_fixed + work / (cpu_rate * threads)
 *   gpu = start_left + gpu_fixed + work / gpu_rate
 * 1 when gpu < cpu. Prints both estimates under -v, as "auto: cpu, estimated ... against
 * ..." (the device's own line follows from the caller). */
int cost_pick_gpu(const struct cost_model *m, double work, int threads, double start_left);

/* The description of CUDA device `name` of compute capability major.minor, or of the
 * CPU path (name NULL), in buf (at least 384 bytes). */
void tune_describe_cuda(char *buf, size_t size, const char *name, int major, int minor);

#ifdef __cplusplus
}
#endif
#endif
