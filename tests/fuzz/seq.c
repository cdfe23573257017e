/* seq.c: sequence record files (common/seq.h: FASTA, FASTQ, one sequence a line),
 * read record by record as editdist4r's -a/-b and --all-vs-all read them. */
#include "fuzz.h"
#include "seq.h"

static void
read_seq(const char *path)
{
	seqfile *f = seq_open(path);
	const unsigned char *s;
	size_t n;
	uint64_t count = 0;
	while (seq_next(f, &s, &n)) {
		fuzz_touch(s, n);
		FUZZ_ASSERT("seq", ++count == seq_count(f));
	}
	seq_close(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_input("seq", data, size, read_seq, FUZZ_CHUNKS);
}
