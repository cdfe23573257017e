/* tokenize_drv.c: bench/tokenize's driver. Tokenises FILE's lines as docsim's corpus
 * documents (tok_part_add, common/tokenize.h) on one thread, a part every 4 MiB of
 * text as docsim's reader makes them, and prints "MB/s DOCS": the file's megabytes
 * over the thread's CPU time in the loop (the file is read before), and the documents.
 * Usage: tokenize_drv words|bigrams|charwb FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "input.h"
#include "tokenize.h"

#define PART_BYTES ((size_t)4 << 20)

static double
cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	struct tok_analyzer a = {TOK_WORDS, 1, 1, NULL, 0};
	if (argc != 3)
		die("usage: tokenize_drv words|bigrams|charwb FILE");
	if (strcmp(argv[1], "bigrams") == 0)
		a.nmax = 2;
	else if (strcmp(argv[1], "charwb") == 0)
		a = (struct tok_analyzer){TOK_CHAR_WB, 2, 4, NULL, 0};
	else if (strcmp(argv[1], "words") != 0)
		die("tokenize_drv: no analyzer '%s'", argv[1]);
	tok_set_analyzer(&a);
	input *in = in_open(argv[2]);
	size_t n = 0, docs = 0;
	char *text = in_slurp(in, &n);
	in_close(in);

	const double t0 = cpu_now();
	struct tok_part *p = tok_part_new();
	const char *s = text, *end = text + n, *from = text;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL)
			nl = end;
		if (tok_part_add(p, s, (size_t)(nl - s)) != 0)
			die("%s: a token longer than 4 GiB", argv[2]);
		s = nl + 1;
		if ((size_t)(s - from) >= PART_BYTES) {
			docs += tok_part_docs(p);
			tok_part_free(p);
			p = tok_part_new();
			from = s;
		}
	}
	docs += tok_part_docs(p);
	tok_part_free(p);
	printf("%.1f %zu\n", (double)n / 1e6 / (cpu_now() - t0), docs);
	free(text);
	return 0;
}
