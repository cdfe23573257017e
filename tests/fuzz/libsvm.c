/* libsvm.c: SVMlight/libsvm lines (common/sparse.h), read by svm_read, with the
 * labels from the regular file and without them from the pipe. What svm_read accepts,
 * svm_line_ok (docsim's format detection) must accept line by line, and say which
 * lines have features. The readers skip a UTF-8 byte-order mark, so the line check
 * starts after one; compressed inputs are the unz target's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csr_check.h"
#include "decompress.h"
#include "err.h"
#include "fuzz.h"
#include "input.h"
#include "sparse.h"

static const uint8_t *text;
static size_t text_len;

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
	/* svm_line_ok wants a line followed by '\n', '\r' or NUL: a copy ends in NUL. */
	char *copy = malloc(text_len + 1);
	memcpy(copy, text, text_len);
	copy[text_len] = '\0';
	size_t row = 0;
	for (char *p = copy, *end = copy + text_len; p < end; row++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		int features;
		FUZZ_ASSERT("libsvm", svm_line_ok(p, len, &features));
		FUZZ_ASSERT("libsvm", row < m.rows && features == (m.ptr[row + 1] > m.ptr[row]));
		p = nl ? nl + 1 : end;
	}
	FUZZ_ASSERT("libsvm", row == m.rows);
	free(copy);
	free(labels);
	csr_free(&m);
	in_close(in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (unz_detect(data, MIN(size, (size_t)UNZ_MAGIC_MAX)) > UNZ_NONE)
		return -1;
	size_t bom = size >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	text = data + bom;
	text_len = size - bom;
	return fuzz_input("libsvm", data, size, read_libsvm, FUZZ_CHUNKS);
}
