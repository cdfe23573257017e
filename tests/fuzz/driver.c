/* driver.c: a main() for a fuzz target without libFuzzer, so that make check runs the
 * regression cases with the normal compiler (and under SANITIZE=1, with ASan and UBSan):
 *
 *	fuzz-TARGET FILE...
 *
 * feeds each file to LLVMFuzzerTestOneInput in turn, as libFuzzer does when it is given
 * files. What the readers say goes to stderr; a crash ends the process (the sanitizer's
 * report, or the signal); otherwise the exit status is 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	for (;;) {
		if (buf == NULL) {
			fprintf(stderr, "fuzz driver: %s: out of memory\n", path);
			exit(1);
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		buf = realloc(buf, cap);
	}
	if (ferror(f)) {
		fprintf(stderr, "fuzz driver: %s: read error\n", path);
		exit(1);
	}
	fclose(f);
	*len = n;
	return buf;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		size_t len;
		unsigned char *data = slurp(argv[i], &len);
		/* libFuzzer hands the target a buffer of exactly the input's size. */
		unsigned char *copy = malloc(len ? len : 1);
		memcpy(copy, data, len);
		free(data);
		LLVMFuzzerTestOneInput(copy, len);
		free(copy);
	}
	return 0;
}
