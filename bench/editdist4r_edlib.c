/* editdist4r_edlib.c: edlib (libedlib) over "A<TAB>B" lines for bench/editdist4r:
 * global (NW) distances only, OpenMP over pairs, as editdist4r computes them.
 *   editdist4r_edlib FILE [MAXPAIRS]
 * prints the distances' sum, the pairs, the threads and the compute seconds (reading
 * the file is not timed). */
#include <edlib.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	long max = argc > 2 ? atol(argv[2]) : -1;
	if (f == NULL) {
		fprintf(stderr, "usage: editdist4r_edlib FILE [MAXPAIRS]\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)size + 1);
	if (fread(buf, 1, (size_t)size, f) != (size_t)size)
		return perror(argv[1]), 1;
	buf[size] = '\0';
	long n = 0, cap = 1 << 20;
	char **a = malloc(cap * sizeof *a), **b = malloc(cap * sizeof *b);
	int *la = malloc(cap * sizeof *la), *lb = malloc(cap * sizeof *lb);
	for (char *p = buf; *p && (max < 0 || n < max);) {
		char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
		if (tab == NULL || nl == NULL || tab > nl)
			return fprintf(stderr, "bad line %ld\n", n + 1), 1;
		if (n == cap) {
			cap *= 2;
			a = realloc(a, cap * sizeof *a), b = realloc(b, cap * sizeof *b);
			la = realloc(la, cap * sizeof *la), lb = realloc(lb, cap * sizeof *lb);
		}
		a[n] = p, la[n] = (int)(tab - p), b[n] = tab + 1, lb[n] = (int)(nl - tab - 1);
		n++;
		p = nl + 1;
	}
	long long sum = 0;
	double t0 = omp_get_wtime();
	#pragma omp parallel for schedule(dynamic, 256) reduction(+:sum)
	for (long i = 0; i < n; i++) {
		EdlibAlignResult r = edlibAlign(a[i], la[i], b[i], lb[i],
		    edlibNewAlignConfig(-1, EDLIB_MODE_NW, EDLIB_TASK_DISTANCE, NULL, 0));
		sum += r.editDistance;
		edlibFreeAlignResult(r);
	}
	double t = omp_get_wtime() - t0;
	printf("%lld %ld %d %.6f\n", sum, n, omp_get_max_threads(), t);
	return 0;
}
