/* csr_check.h: what sparse.h promises of a CSR matrix, for the libsvm and mm targets. */
#include <math.h>

#include "fuzz.h"
#include "sparse.h"

static void
csr_check(const char *target, const struct csr *m)
{
	FUZZ_ASSERT(target, m->ptr[0] == 0);
	for (size_t r = 0; r < m->rows; r++) {
		FUZZ_ASSERT(target, m->ptr[r] <= m->ptr[r + 1]);
		for (uint64_t k = m->ptr[r]; k < m->ptr[r + 1]; k++) {
			FUZZ_ASSERT(target, m->idx[k] < m->cols);
			FUZZ_ASSERT(target, k == m->ptr[r] || m->idx[k - 1] < m->idx[k]);
			FUZZ_ASSERT(target, isfinite(m->val[k]));
		}
	}
	fuzz_touch(m->ptr, (m->rows + 1) * sizeof *m->ptr);
	fuzz_touch(m->idx, m->ptr[m->rows] * sizeof *m->idx);
	fuzz_touch(m->val, m->ptr[m->rows] * sizeof *m->val);
}
