/* npy.c: NPY matrices (common/dense.h); text input belongs to the dense target. */
#include <stdlib.h>

#include "mat_load.h"

static int huge_row;

static void
read_npy(const char *path)
{
	if (fuzz_pipe && huge_row)
		return;
	mat_load_check("npy", path, NULL);
}

/* Known, reported and skipped in tests/fuzz.bats until dense.c is fixed: from a pipe,
 * mat_load allocates one whole row before any data comes, so a header that promises
 * rows of more than 256 MiB (as float64) makes the fuzzer stop on a huge allocation.
 * Such headers are not read from the pipe meanwhile; remove with the fix. */
static int
promises_huge_row(const uint8_t *data, size_t size)
{
	char hdr[4097];
	size_t n = size < sizeof hdr - 1 ? size : sizeof hdr - 1;
	memcpy(hdr, data, n);
	hdr[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (hdr[i] == '\0')
			hdr[i] = ' ';
	const char *p = strstr(hdr, "shape");
	if (p == NULL || (p = strchr(p, '(')) == NULL)
		return 0;
	char *end;
	strtoull(p + 1, &end, 10);
	while (*end == 'L' || *end == ',' || *end == ' ')
		end++;
	return strtoull(end, NULL, 10) > ((unsigned long long)1 << 28) / 8;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < sizeof npy_magic || memcmp(data, npy_magic, sizeof npy_magic) != 0)
		return -1;
	huge_row = promises_huge_row(data, size);
	return fuzz_input("npy", data, size, read_npy);
}
