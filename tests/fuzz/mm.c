/* mm.c: MatrixMarket coordinate files (common/sparse.h), read by mm_read as docsim
 * reads them. */
#include "csr_check.h"
#include "fuzz.h"
#include "input.h"
#include "sparse.h"

#include <stdint.h>

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

/* The rows the size line declares (after the header and comments), or 0 where it cannot
 * be told here. */
static uint64_t
declared_rows(const uint8_t *data, size_t size)
{
	size_t i = 0;
	while (i < size && data[i] == '%') {	/* the header and comment lines */
		while (i < size && data[i] != '\n')
			i++;
		i++;
	}
	while (i < size && (data[i] == ' ' || data[i] == '\t'))
		i++;
	uint64_t rows = 0;
	for (; i < size && data[i] >= '0' && data[i] <= '9' && rows < ((uint64_t)1 << 40); i++)
		rows = rows * 10 + (uint64_t)(data[i] - '0');
	return rows;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Millions of empty rows are a legal matrix, read in time and memory of their
	 * number (CI's fuzzer once timed out under ASan on 39,112,556 rows of two
	 * entries: four runs of the reader and the checks): not a finding. */
	if (declared_rows(data, size) > ((uint64_t)1 << 20))
		return -1;
	return fuzz_input("mm", data, size, read_mm, FUZZ_CHUNKS);
}
