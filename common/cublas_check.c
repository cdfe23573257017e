/* cublas_check.c: the report behind CUBLAS_CHECK (cuda_check.h). A file of its own
 * so that only programs that use cuBLAS link it. */
#ifdef ACCELKIT_CUDA
#include <cublas_api.h>

#include "cuda_check.h"

void
cublas_fail(const char *expr, const char *file, int line, int status)
{
	die("%s:%d: %s: %s (%s)", file, line, expr, cublasGetStatusName((cublasStatus_t)status),
	    cublasGetStatusString((cublasStatus_t)status));
}
#else
typedef int cublas_check_unused;	/* ISO C wants something in a translation unit */
#endif
