/* pairs.c: "A<TAB>B" pair lines (common/seq.h), read as editdist4r reads them. */
#include <string.h>

#include "fuzz.h"
#include "input.h"
#include "seq.h"

static void
read_pairs(const char *path)
{
	input *in = in_open(path);
	const unsigned char *a, *b;
	size_t alen, blen;
	while (seq_pair_next(in, &a, &alen, &b, &blen)) {
		fuzz_touch(a, alen);
		fuzz_touch(b, blen);
		FUZZ_ASSERT("pairs", memchr(a, '\t', alen) == NULL && memchr(b, '\t', blen) == NULL);
		FUZZ_ASSERT("pairs", memchr(a, '\n', alen) == NULL && memchr(b, '\n', blen) == NULL);
	}
	in_close(in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("pairs", data, size, read_pairs, FUZZ_CHUNKS);
}
