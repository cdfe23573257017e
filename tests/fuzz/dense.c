/* dense.c: dense text matrices (common/dense.h), read by mat_load as clmatmul,
 * clkmeans, docsim and skyline read them: float32 from the regular file, float64 from
 * the pipe. NPY input belongs to the npy target. */
#include <math.h>
#include <string.h>

#include "dense.h"
#include "fuzz.h"

static void
read_dense(const char *path)
{
	struct matrix m;
	mat_load(path, fuzz_pipe ? DT_F64 : DT_F32, 0, &m);
	FUZZ_ASSERT("dense", m.rows == 0 || m.data != NULL);
	for (size_t i = 0; i < m.rows * m.cols; i++) {
		double v = m.dtype == DT_F32 ? ((float *)m.data)[i] : ((double *)m.data)[i];
		FUZZ_ASSERT("dense", m.dtype == DT_F32 ? fuzz_f32_ok((float)v) : isfinite(v));
	}
	mat_free(&m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0)
		return -1;
	return fuzz_input("dense", data, size, read_dense);
}
