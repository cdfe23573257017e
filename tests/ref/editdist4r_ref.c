/* editdist4r_ref.c: the test suite's independent reference for editdist4r, built by
 * the suite itself (cc -O2). Nothing here is shared with the program.
 *
 *   ref dist [K] < PAIRS        textbook O(mn) DP of each "A<TAB>B" line; with K, -1
 *                               for distances above K
 *   ref check PAIRS OUT         OUT holds "D<TAB>CIGAR" lines: each CIGAR must turn A
 *                               into B, cost D, and D must be the distance
 *   ref gen SEED N MAXLEN KIND  N random pairs, lengths 0..MAXLEN; KIND dna, ascii,
 *                               high (bytes >= 0x80) or bytes (any but TAB, CR, LF);
 *                               B is a mutated copy of A or an unrelated string
 *   ref sizes SEED N KIND L... [/ LB...]
 *                               N random pairs whose A has a length drawn from L...;
 *                               B a mutated copy of A or a string of a length drawn
 *                               from L... (lengths at the edges of words and blocks);
 *                               with / LB..., B unrelated, of a length drawn from LB
 *   ref matrix FA FB            the distance matrix of two one-sequence-a-line files
 *   ref trickle FILE            FILE to standard output one byte a write(2), so that a
 *                               reader of the pipe gets it a few bytes at a time */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *
readline(FILE *f, size_t *n)
{
	static char *buf;
	static size_t cap;
	ssize_t k = getline(&buf, &cap, f);
	if (k < 0)
		return NULL;
	if (k > 0 && buf[k - 1] == '\n')
		buf[--k] = '\0';
	*n = (size_t)k;
	return buf;
}

static long
dist(const unsigned char *a, size_t m, const unsigned char *b, size_t n)
{
	long *row = malloc((n + 1) * sizeof *row);
	for (size_t j = 0; j <= n; j++)
		row[j] = (long)j;
	for (size_t i = 1; i <= m; i++) {
		long diag = row[0];
		row[0] = (long)i;
		for (size_t j = 1; j <= n; j++) {
			long best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = row[j];
			row[j] = best;
		}
	}
	long d = row[n];
	free(row);
	return d;
}

static int
split(char *line, size_t n, unsigned char **a, size_t *m, unsigned char **b, size_t *bn)
{
	char *tab = memchr(line, '\t', n);
	if (tab == NULL)
		return 0;
	*a = (unsigned char *)line;
	*m = (size_t)(tab - line);
	*b = (unsigned char *)tab + 1;
	*bn = n - *m - 1;
	return 1;
}

static int
cmd_dist(long K)
{
	char *line;
	size_t n, m, bn;
	unsigned char *a, *b;
	while ((line = readline(stdin, &n)) != NULL) {
		if (!split(line, n, &a, &m, &b, &bn))
			return fprintf(stderr, "ref: no TAB\n"), 1;
		long d = dist(a, m, b, bn);
		printf("%ld\n", K >= 0 && d > K ? -1 : d);
	}
	return 0;
}

static int
cmd_check(const char *pairs, const char *out)
{
	FILE *fp = fopen(pairs, "r"), *fo = fopen(out, "r");
	char *line;
	size_t n, m, bn, k = 0;
	if (fp == NULL || fo == NULL)
		return perror("ref check"), 1;
	while ((line = readline(fp, &n)) != NULL) {
		unsigned char *a, *b;
		k++;
		if (!split(line, n, &a, &m, &b, &bn))
			return fprintf(stderr, "ref: pair %zu: no TAB\n", k), 1;
		unsigned char *A = malloc(m + 1), *B = malloc(bn + 1);
		memcpy(A, a, m);
		memcpy(B, b, bn);
		long want = dist(A, m, B, bn);
		char *o = readline(fo, &n);
		if (o == NULL)
			return fprintf(stderr, "ref: pair %zu: no output line\n", k), 1;
		char *end;
		long d = strtol(o, &end, 10);
		if (*end != '\t')
			return fprintf(stderr, "ref: pair %zu: bad line '%s'\n", k, o), 1;
		if (d != want)
			return fprintf(stderr, "ref: pair %zu: distance %ld, want %ld\n", k, d, want), 1;
		/* Apply the CIGAR to A. */
		size_t i = 0, j = 0;
		long cost = 0;
		for (char *p = end + 1; *p;) {
			long run = strtol(p, &end, 10);
			if (end == p || run <= 0)
				return fprintf(stderr, "ref: pair %zu: bad CIGAR at '%s'\n", k, p), 1;
			char op = *end;
			p = end + 1;
			for (long r = 0; r < run; r++) {
				switch (op) {
				case '=':
				case 'X':
					if (i >= m || j >= bn || (op == '=') != (A[i] == B[j]))
						return fprintf(stderr, "ref: pair %zu: '%c' wrong at A %zu B %zu\n", k, op, i, j), 1;
					cost += op == 'X';
					i++, j++;
					break;
				case 'I':
					if (j >= bn)
						return fprintf(stderr, "ref: pair %zu: I past B\n", k), 1;
					cost++, j++;
					break;
				case 'D':
					if (i >= m)
						return fprintf(stderr, "ref: pair %zu: D past A\n", k), 1;
					cost++, i++;
					break;
				default:
					return fprintf(stderr, "ref: pair %zu: op '%c'\n", k, op), 1;
				}
			}
		}
		if (i != m || j != bn)
			return fprintf(stderr, "ref: pair %zu: CIGAR covers %zu/%zu of A, %zu/%zu of B\n", k, i, m, j, bn), 1;
		if (cost != d)
			return fprintf(stderr, "ref: pair %zu: CIGAR costs %ld, distance %ld\n", k, cost, d), 1;
		free(A);
		free(B);
	}
	if (readline(fo, &n) != NULL)
		return fprintf(stderr, "ref: more output lines than pairs\n"), 1;
	printf("ok %zu\n", k);
	return 0;
}

static uint64_t state;

static uint64_t
rnd(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
rbyte(const char *kind)
{
	if (strcmp(kind, "dna") == 0)
		return "ACGT"[rnd() % 4];
	if (strcmp(kind, "ascii") == 0)
		return 0x21 + (int)(rnd() % 94);
	if (strcmp(kind, "high") == 0)
		return 0x80 + (int)(rnd() % 128);
	for (;;) {
		int c = (int)(rnd() % 256);
		if (c != '\t' && c != '\n' && c != '\r')
			return c;
	}
}

/* N pairs: A's length from lens (nlens of them) when given, else 0..maxlen; B's from
 * blens when given (B unrelated), else like A's. */
static int
gen_pairs(long npairs, long maxlen, const char *kind, const long *lens, int nlens,
    const long *blens, int nblens)
{
	unsigned char *a = malloc((size_t)maxlen + 1), *b = malloc(2 * (size_t)maxlen + 2);
	for (long p = 0; p < npairs; p++) {
		size_t m = nlens ? (size_t)lens[rnd() % (uint64_t)nlens] :
		    (size_t)(rnd() % (uint64_t)(maxlen + 1)), n = 0;
		for (size_t i = 0; i < m; i++)
			a[i] = (unsigned char)rbyte(kind);
		unsigned mode = nblens ? 0 : (unsigned)(rnd() % 8);
		if (mode == 0) {			/* unrelated */
			n = nblens ? (size_t)blens[rnd() % (uint64_t)nblens] :
			    nlens ? (size_t)lens[rnd() % (uint64_t)nlens] :
			    (size_t)(rnd() % (uint64_t)(maxlen + 1));
			for (size_t j = 0; j < n; j++)
				b[j] = (unsigned char)rbyte(kind);
		} else {				/* edits at a rate of 1/2^mode */
			for (size_t i = 0; i <= m; i++) {
				if (rnd() % (1u << mode) == 0) {
					switch (rnd() % 3) {
					case 0: b[n++] = (unsigned char)rbyte(kind); break;	/* insert */
					case 1: if (i < m) b[n++] = (unsigned char)rbyte(kind); continue; /* substitute */
					default: continue;					/* delete */
					}
				}
				if (i < m)
					b[n++] = a[i];
				if (n > (size_t)maxlen)
					break;
			}
		}
		fwrite(a, 1, m, stdout);
		putchar('\t');
		fwrite(b, 1, n, stdout);
		putchar('\n');
	}
	free(a);
	free(b);
	return 0;
}

static int
cmd_gen(uint64_t seed, long npairs, long maxlen, const char *kind)
{
	state = seed;
	return gen_pairs(npairs, maxlen, kind, NULL, 0, NULL, 0);
}

static int
cmd_sizes(uint64_t seed, long npairs, const char *kind, char **lv, int nv)
{
	long *lens = malloc((size_t)nv * sizeof *lens), maxlen = 0;
	int nlens = nv, nb = 0;
	for (int i = 0; i < nv; i++) {
		if (strcmp(lv[i], "/") == 0) {
			nlens = i;
			continue;
		}
		lens[i > nlens ? i - 1 : i] = atol(lv[i]);
		if (atol(lv[i]) > maxlen)
			maxlen = atol(lv[i]);
	}
	if (nlens < nv)
		nb = nv - nlens - 1;
	state = seed;
	int rc = gen_pairs(npairs, maxlen, kind, lens, nlens, lens + nlens, nb);
	free(lens);
	return rc;
}

static int
cmd_trickle(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c;
	if (f == NULL)
		return perror(path), 1;
	while ((c = getc(f)) != EOF) {
		unsigned char byte = (unsigned char)c;
		if (write(1, &byte, 1) != 1)
			return perror("ref trickle"), 1;
		sched_yield();
	}
	fclose(f);
	return 0;
}

static char **
slurp_lines(const char *path, size_t *count, size_t **lens)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, *line;
	size_t n, k = 0;
	*lens = NULL;
	if (f == NULL)
		return perror(path), exit(1), NULL;
	while ((line = readline(f, &n)) != NULL) {
		v = realloc(v, (k + 1) * sizeof *v);
		*lens = realloc(*lens, (k + 1) * sizeof **lens);
		v[k] = malloc(n + 1);
		memcpy(v[k], line, n);
		(*lens)[k++] = n;
	}
	fclose(f);
	*count = k;
	return v;
}

static int
cmd_matrix(const char *fa, const char *fb)
{
	size_t na, nb, *la, *lb;
	char **A = slurp_lines(fa, &na, &la), **B = slurp_lines(fb, &nb, &lb);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			printf("%ld%c", dist((unsigned char *)A[i], la[i], (unsigned char *)B[j], lb[j]),
			    j + 1 < nb ? '\t' : '\n');
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "dist") == 0)
		return cmd_dist(argc > 2 ? atol(argv[2]) : -1);
	if (argc == 4 && strcmp(argv[1], "check") == 0)
		return cmd_check(argv[2], argv[3]);
	if (argc == 6 && strcmp(argv[1], "gen") == 0)
		return cmd_gen(strtoull(argv[2], NULL, 10), atol(argv[3]), atol(argv[4]), argv[5]);
	if (argc >= 6 && strcmp(argv[1], "sizes") == 0)
		return cmd_sizes(strtoull(argv[2], NULL, 10), atol(argv[3]), argv[4], argv + 5,
		    argc - 5);
	if (argc == 4 && strcmp(argv[1], "matrix") == 0)
		return cmd_matrix(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "trickle") == 0)
		return cmd_trickle(argv[2]);
	fprintf(stderr, "usage: see the comment at the top of editdist4r_ref.c\n");
	return 2;
}
