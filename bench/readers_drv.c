/* readers_drv.c: bench/readers' driver. Reads FILE with one of the shared readers
 * (dense: mat_read as float32; pairs: seq_pair_next; table: table_read, every column)
 * on -j threads and prints "SECONDS CHECKSUM" on stdout: the read alone, from opening
 * the file to the last record, and a sum over what was read, so that runs at different
 * -j can be checked against each other.
 * Usage: readers_drv dense|pairs|table [-j N] FILE
 * It also writes the inputs, to standard output (a fixed pseudo-random sequence):
 *   readers_drv gen-dense ROWS COLS	numbers as %.7g, tab-separated
 *   readers_drv gen-dense18 ROWS COLS	as %.18e, blank-separated: numpy.savetxt's default
 *   readers_drv gen-pairs N LEN		A<TAB>B lines of ACGT, LEN bytes each */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dense.h"
#include "input.h"
#include "rng.h"
#include "seq.h"
#include "table.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: readers_drv dense|pairs|table [-j N] FILE\n");
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t
mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static struct rng rng;	/* seeded in main */

static uint64_t
next(void)
{
	return rng_next(&rng);
}

static int
gen(const char *mode, long long n, long long k)
{
	if (strcmp(mode, "gen-dense") == 0 || strcmp(mode, "gen-dense18") == 0) {
		int e18 = mode[9] == '1';
		for (long long i = 0; i < n; i++)
			for (long long j = 0; j < k; j++) {
				/* a spread of magnitudes and signs, 7 significant digits (or 19) */
				double v = ((double)(next() >> 11) / 9007199254740992.0 - 0.5) *
				    (double)(1 << (next() % 12));
				if (e18)
					printf("%.18e%c", v, j + 1 < k ? ' ' : '\n');
				else
					printf("%.7g%c", v, j + 1 < k ? '\t' : '\n');
			}
		return 0;
	}
	if (strcmp(mode, "gen-pairs") == 0) {
		char *l = malloc((size_t)(2 * k + 2));
		for (long long i = 0; i < n; i++) {
			for (long long j = 0; j < 2 * k; j++)
				l[j + (j >= k)] = "ACGT"[next() >> 62];
			l[k] = '\t';
			l[2 * k + 1] = '\n';
			fwrite(l, 1, (size_t)(2 * k + 2), stdout);
		}
		free(l);
		return 0;
	}
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {CLI_COMMON_LONG, {NULL, 0, NULL, 0}};
	struct common_opts co;
	int c;

	cli_init(argc, argv, &co);
	rng_seed(&rng, 1);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *mode = argv[1];
	if (strncmp(mode, "gen-", 4) == 0)
		return argc == 4 ? gen(mode, atoll(argv[2]), atoll(argv[3])) : 2;
	argv[1] = argv[0];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1)
		cli_common(c, optarg, &co, usage);
	cli_finish(&co);
	const char *path = optind < argc ? argv[optind] : NULL;
	uint64_t h = 14695981039346656037ULL;
	double t0 = now();

	if (strcmp(mode, "dense") == 0) {
		struct matrix m;
		mat_load(path, DT_F32, 0, &m);
		double t = now() - t0;
		h = mix(h, m.data, m.rows * m.cols * sizeof(float));
		printf("%.6f %016llx %zu\n", t, (unsigned long long)h, m.rows);
		mat_free(&m);
	} else if (strcmp(mode, "pairs") == 0) {
		input *in = in_open(path);
		const unsigned char *a, *b;
		size_t alen, blen, n = 0;
		uint64_t s = 0;
		while (seq_pair_next(in, &a, &alen, &b, &blen)) {
			/* touch the ends, as a consumer copying them would */
			s += alen * 31 + blen + (alen ? a[alen - 1] : 0) + (blen ? b[0] : 0);
			n++;
		}
		in_close(in);
		double t = now() - t0;
		printf("%.6f %016llx %zu\n", t, (unsigned long long)mix(h, &s, sizeof s), n);
	} else if (strcmp(mode, "table") == 0) {
		struct table t;
		struct table_opts o = {.delim = TABLE_BLANKS, .dt = DT_F64};
		table_read(path, &o, NULL, &t);
		double el = now() - t0;
		h = mix(h, t.m.data, t.m.rows * t.m.cols * dtype_size(t.m.dtype));
		printf("%.6f %016llx %zu\n", el, (unsigned long long)h, t.m.rows);
		table_free(&t);
	} else {
		usage(stderr);
		return 2;
	}
	return 0;
}
