/* editdist4r_gen.c: seeded data for bench/editdist4r (common/rng.h, so the same data
 * on every machine).
 *   gen random LEN SEED            one random DNA sequence as FASTA
 *   gen mutate RATE SEED < FASTA   the first record with random edits at RATE (a third
 *                                  each substitutions, insertions, deletions), as FASTA
 *   gen reads N LEN RATE SEED      N "A<TAB>B" lines: random DNA of LEN, B A with edits
 *   gen windows N LEN WIN RATE SEED   N "READ<TAB>WINDOW" lines (--mode infix): a
 *                                  random DNA window of WIN, the read a piece of it
 *                                  of LEN from a random place, with edits at RATE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static struct rng R;

static char
base(void)
{
	return "ACGT"[rng_below(&R, 4)];
}

/* B = A with edits at rate p; returns B's length. */
static size_t
mutate(const char *a, size_t m, double p, char *b)
{
	size_t n = 0;
	for (size_t i = 0; i < m; i++) {
		if (rng_uniform(&R) < p) {
			switch (rng_below(&R, 3)) {
			case 0: b[n++] = base(); break;			/* substitution */
			case 1: b[n++] = base(); b[n++] = a[i]; break;	/* insertion */
			default: break;					/* deletion */
			}
		} else {
			b[n++] = a[i];
		}
	}
	return n;
}

static void
fasta(const char *name, const char *s, size_t n)
{
	printf(">%s\n", name);
	for (size_t i = 0; i < n; i += 70)
		printf("%.*s\n", (int)(n - i < 70 ? n - i : 70), s + i);
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "random") == 0) {
		size_t n = strtoul(argv[2], NULL, 10);
		char *s = malloc(n + 1);
		rng_seed(&R, strtoull(argv[3], NULL, 10));
		for (size_t i = 0; i < n; i++)
			s[i] = base();
		fasta("random", s, n);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "mutate") == 0) {
		size_t cap = 1 << 20, m = 0;
		char *a = malloc(cap), line[4096];
		int rec = 0;
		rng_seed(&R, strtoull(argv[3], NULL, 10));
		while (fgets(line, sizeof line, stdin)) {
			size_t k = strcspn(line, "\r\n");
			if (line[0] == '>') {
				if (rec++)
					break;
				continue;
			}
			if (m + k > cap)
				a = realloc(a, cap *= 2);
			memcpy(a + m, line, k);
			m += k;
		}
		char *b = malloc(2 * m + 1);
		size_t n = mutate(a, m, atof(argv[2]), b);
		fasta("mutated", b, n);
		return 0;
	}
	if (argc == 6 && strcmp(argv[1], "reads") == 0) {
		long np = atol(argv[2]);
		size_t len = strtoul(argv[3], NULL, 10);
		double p = atof(argv[4]);
		char *a = malloc(len + 1), *b = malloc(2 * len + 2);
		rng_seed(&R, strtoull(argv[5], NULL, 10));
		for (long k = 0; k < np; k++) {
			for (size_t i = 0; i < len; i++)
				a[i] = base();
			size_t n = mutate(a, len, p, b);
			fwrite(a, 1, len, stdout);
			putchar('\t');
			fwrite(b, 1, n, stdout);
			putchar('\n');
		}
		return 0;
	}
	if (argc == 7 && strcmp(argv[1], "windows") == 0) {
		long np = atol(argv[2]);
		size_t len = strtoul(argv[3], NULL, 10), win = strtoul(argv[4], NULL, 10);
		double p = atof(argv[5]);
		if (len == 0 || len > win) {
			fprintf(stderr, "gen windows: LEN must be 1 to WIN\n");
			return 2;
		}
		char *w = malloc(win + 1), *r = malloc(2 * len + 2);
		rng_seed(&R, strtoull(argv[6], NULL, 10));
		for (long k = 0; k < np; k++) {
			for (size_t i = 0; i < win; i++)
				w[i] = base();
			size_t at = rng_below(&R, win - len + 1);
			size_t n = mutate(w + at, len, p, r);
			fwrite(r, 1, n, stdout);
			putchar('\t');
			fwrite(w, 1, win, stdout);
			putchar('\n');
		}
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of editdist4r_gen.c\n");
	return 2;
}
