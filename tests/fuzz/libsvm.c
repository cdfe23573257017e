/* libsvm.c: SVMlight/libsvm lines (common/sparse.h), read by svm_read, with the
 * labels from the regular file and without them from the pipe. */
#include <math.h>
#include <stdlib.h>

#include "csr_check.h"
#include "fuzz.h"
#include "input.h"
#include "sparse.h"

static void
read_libsvm(const char *path)
{
	input *in = in_open(path);
	struct csr m;
	double *labels = NULL;
	svm_read(in, &m, fuzz_pipe ? NULL : &labels);
	csr_check("libsvm", &m);
	for (size_t i = 0; labels != NULL && i < m.rows; i++)
		FUZZ_ASSERT("libsvm", isnan(labels[i]) || isfinite(labels[i]));
	free(labels);
	csr_free(&m);
	in_close(in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("libsvm", data, size, read_libsvm);
}
