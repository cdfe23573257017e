/* mat_load.h: reading a dense matrix as clmatmul, clkmeans, docsim and skyline read
 * one (mat_load), for the dense and npy targets: float32 from the regular file,
 * float64 from the pipe, so that both conversions meet both stored dtypes. */
#include <math.h>
#include <string.h>

#include "dense.h"
#include "fuzz.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Reads path; the values must be finite and, when want (float64) is not NULL, equal
 * to its values as the dtype read. */
static void
mat_load_check(const char *target, const char *path, const struct matrix *want)
{
	struct matrix m;
	mat_load(path, fuzz_pipe ? DT_F64 : DT_F32, 0, &m);
	FUZZ_ASSERT(target, m.rows == 0 || m.data != NULL);
	FUZZ_ASSERT(target, want == NULL || (m.rows == want->rows && m.cols == want->cols));
	for (size_t i = 0; i < m.rows * m.cols; i++) {
		double v = m.dtype == DT_F32 ? ((float *)m.data)[i] : ((double *)m.data)[i];
		FUZZ_ASSERT(target, isfinite(v));
		if (want != NULL) {
			double w = ((const double *)want->data)[i];
			FUZZ_ASSERT(target, m.dtype == DT_F32 ? (float)v == (float)w : v == w);
		}
	}
	fuzz_touch(m.data, m.rows * m.cols * dtype_size(m.dtype));
	mat_free(&m);
}
