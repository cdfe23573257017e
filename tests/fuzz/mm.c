/* mm.c: MatrixMarket coordinate files (common/sparse.h), read by mm_read as docsim
 * reads them. */
#include "csr_check.h"
#include "fuzz.h"
#include "input.h"
#include "sparse.h"

static void
read_mm(const char *path)
{
	input *in = in_open(path);
	struct csr m;
	mm_read(in, &m);
	csr_check("mm", &m);
	csr_free(&m);
	in_close(in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("mm", data, size, read_mm, FUZZ_CHUNKS);
}
