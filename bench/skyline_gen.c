/* skyline_gen: the standard skyline benchmark data (Borzsonyi, Kossmann, Stocker,
 * "The Skyline Operator", ICDE 2001: independent, correlated and anti-correlated
 * points in [0,1]^d), drawn with accelkit's seeded PRNG and written as float32 NPY.
 *
 *   cc -O2 -Icommon -o skyline_gen bench/skyline_gen.c
 *   skyline_gen [-s SEED] [-a LO] [-b HI] indep|corr|anti N D > FILE.npy
 *
 * -a and -b map [0,1] onto [LO,HI] (e.g. query points in a small square). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"

static struct rng rng;

static double
uniform(double lo, double hi)
{
	return lo + (hi - lo) * rng_uniform(&rng);
}

/* The mean of k uniforms on [lo, hi]: the generator's bell-shaped "peak". */
static double
peak(double lo, double hi, int k)
{
	double s = 0;
	for (int i = 0; i < k; i++)
		s += rng_uniform(&rng);
	return lo + (hi - lo) * s / k;
}

static double
normal(double med, double var)
{
	return peak(med - var, med + var, 12);
}

static int
in_unit(const double *x, int d)
{
	for (int j = 0; j < d; j++)
		if (x[j] < 0 || x[j] > 1)
			return 0;
	return 1;
}

/* Points on a plane x_1 + ... + x_d = d v, spread within it by moving mass between
 * neighbouring coordinates: little spread (correlated) or much (anti-correlated). */
static void
point(int kind, double *x, int d)
{
	if (kind == 0) {
		for (int j = 0; j < d; j++)
			x[j] = rng_uniform(&rng);
		return;
	}
	do {
		double v = kind == 1 ? peak(0, 1, d) : normal(0.5, 0.25);
		double l = v <= 0.5 ? v : 1 - v;
		for (int j = 0; j < d; j++)
			x[j] = v;
		for (int j = 0; j < d; j++) {
			double h = kind == 1 ? normal(0, l) : uniform(-l, l);
			x[j] += h;
			x[(j + 1) % d] -= h;
		}
	} while (!in_unit(x, d));
}

int
main(int argc, char **argv)
{
	unsigned long long seed = 1;
	double lo = 0, hi = 1;
	int c;

	while ((c = getopt(argc, argv, "s:a:b:")) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'a': lo = atof(optarg); break;
		case 'b': hi = atof(optarg); break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: skyline_gen [-s SEED] [-a LO] [-b HI] indep|corr|anti N D\n");
		return 2;
	}
	const char *dist = argv[optind];
	int kind = strcmp(dist, "indep") == 0 ? 0 : strcmp(dist, "corr") == 0 ? 1 :
	    strcmp(dist, "anti") == 0 ? 2 : -1;
	long long n = atoll(argv[optind + 1]);
	int d = atoi(argv[optind + 2]);
	if (kind < 0 || n < 0 || d < 1 || d > 1024) {
		fprintf(stderr, "skyline_gen: bad distribution, count or dimension\n");
		return 2;
	}
	rng_seed(&rng, seed);

	char hdr[128];
	int len = snprintf(hdr + 10, sizeof hdr - 10,
	    "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %d), }", n, d);
	memcpy(hdr, "\x93NUMPY\x01\x00", 8);
	hdr[8] = 118;
	hdr[9] = 0;
	memset(hdr + 10 + len, ' ', (size_t)(117 - len));
	hdr[127] = '\n';
	fwrite(hdr, 1, 128, stdout);

	double x[1024];
	float row[1024];
	for (long long i = 0; i < n; i++) {
		point(kind, x, d);
		for (int j = 0; j < d; j++)
			row[j] = (float)(lo + (hi - lo) * x[j]);
		fwrite(row, sizeof *row, (size_t)d, stdout);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("skyline_gen");
		return 1;
	}
	return 0;
}
