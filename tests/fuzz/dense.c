/* dense.c: dense text matrices (common/dense.h); NPY input belongs to the npy target. */
#include "mat_load.h"

static void
read_dense(const char *path)
{
	mat_load_check("dense", path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= sizeof npy_magic && memcmp(data, npy_magic, sizeof npy_magic) == 0)
		return -1;
	return fuzz_input("dense", data, size, read_dense);
}
