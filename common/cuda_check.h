/* cuda_check.h: CUDA_CHECK(expr) reports the failed expression, file, line and the
 * error's name, then exits 1. CUDA_LAUNCH_CHECK() after every kernel launch. */
#ifndef ACCELKIT_CUDA_CHECK_H
#define ACCELKIT_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

void cuda_fail(const char *expr, const char *file, int line, int err) NORETURN;

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(expr)                                                   \
	do {                                                               \
		cudaError_t cuda_err_ = (expr);                            \
		if (cuda_err_ != cudaSuccess)                              \
			cuda_fail(#expr, __FILE__, __LINE__, (int)cuda_err_); \
	} while (0)
#define CUDA_LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())
#endif
