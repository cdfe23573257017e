/* npy.c: NPY matrices (common/dense.h); text input belongs to the dense target. */
#include "mat_load.h"

static void
read_npy(const char *path)
{
	mat_load_check("npy", path, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < sizeof npy_magic || memcmp(data, npy_magic, sizeof npy_magic) != 0)
		return -1;
	return fuzz_input("npy", data, size, read_npy, 0);
}
