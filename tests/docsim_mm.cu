/* tests/docsim_mm.cu: docsim's GEMM kernels (kernels/docsim_mma.cu) against a product
 * computed here on the CPU in long double, shape by shape (tests/docsim.bats, GPU only).
 *
 *   docsim_mm              every shape and kind; prints "ok: N products" or names the
 *                          first entry off by more than its kind allows, exit 1
 *   docsim_mm -v           the same, and each product's worst error as a share of its bound
 *   docsim_mm --bench      times each kind on docsim's tile shapes (cudaEvent), prints
 *                          ms and TFLOP/s
 *
 * What each kind must meet, entry by entry, against the reference r = sum x_i y_i:
 *   TF32  unit rows: |c - r| <= ds_fast_bound(K) (docsim.h), the bound docsim_exact.cu
 *         makes its lists exact by;
 *   F32   unit rows: |c - r| <= ds_f32_bound(K);
 *   F64   rows of any doubles (not floats widened): |c - r| <= 2 (K + 1) 2^-53 sum |x_i y_i|.
 * Then the lists k_topk_tf32 (kernels/docsim_topk_tc.cu) ranks straight from the TF32
 * product, over docsim's tile loop, against float64 scores (topk_case says what).
 * Shapes: K of 1, 3, 7, 8, 63, 64, 1000 and 1024 (16-byte copies and element copies),
 * rows and columns from 1 to past a block's tile (127, 128, 129, 1000), operands one
 * element past an aligned start (element copies with K a multiple of 4), and C a block
 * inside a wider one (ldc > nc): every entry outside it must keep its sentinel. The
 * inputs are seeded, so a failure repeats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docsim_dev.cuh"

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

/* splitmix64: uniform in [0, 1) */
static double
urand(void)
{
	unsigned long long z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

static double
gauss(void)
{
	double u = urand(), v = urand();
	return sqrt(-2 * log(u + 0x1.0p-60)) * cos(2 * M_PI * v);
}

/* n rows of m floats, each normalised in float32 as docsim's are (a row of zeros
 * stays zeros); every fifth row is a near-copy of the one before, for ties. */
static void
unit_rows(float *x, size_t n, size_t m)
{
	for (size_t i = 0; i < n; i++) {
		double s = 0;
		for (size_t k = 0; k < m; k++) {
			double v = i % 5 == 4 ? x[(i - 1) * m + k] + 1e-4 * gauss() : gauss();
			x[i * m + k] = (float)v;
		}
		for (size_t k = 0; k < m; k++)
			s += (double)x[i * m + k] * x[i * m + k];
		float inv = s > 0 ? (float)(1 / sqrt(s)) : 0.0f;
		for (size_t k = 0; k < m; k++)
			x[i * m + k] *= inv;
	}
}

static void
any_rows(double *x, size_t n, size_t m)
{
	for (size_t i = 0; i < n * m; i++)
		x[i] = gauss() * ldexp(1, (int)(urand() * 8) - 4);
}

#define SENTINEL 12345.0

static unsigned long checked;
static int verbose_cases;

/* One product of kind on the device: A (nr x K), B (nc x K) at an offset of off elements
 * from aligned memory, C at column c0 of rows ldc wide; each entry checked. */
static int
case_one(enum ds_mm_kind kind, size_t nr, size_t nc, size_t K, size_t off, size_t c0, size_t ldc)
{
	size_t esz = kind == DS_MM_F64 ? 8 : 4;
	size_t na = nr * K + off, nb = nc * K + off, ncm = nr * ldc;
	void *ha = xmalloc(na * esz), *hb = xmalloc(nb * esz), *hc = xmalloc(ncm * esz);
	if (kind == DS_MM_F64) {
		any_rows((double *)ha + off, nr, K);
		any_rows((double *)hb + off, nc, K);
	} else {
		unit_rows((float *)ha + off, nr, K);
		unit_rows((float *)hb + off, nc, K);
	}
	for (size_t i = 0; i < ncm; i++) {
		if (esz == 8)
			((double *)hc)[i] = SENTINEL;
		else
			((float *)hc)[i] = (float)SENTINEL;
	}
	void *da, *db, *dc;
	CUDA_CHECK(cudaMalloc(&da, na * esz));
	CUDA_CHECK(cudaMalloc(&db, nb * esz));
	CUDA_CHECK(cudaMalloc(&dc, ncm * esz));
	CUDA_CHECK(cudaMemcpy(da, ha, na * esz, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(db, hb, nb * esz, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(dc, hc, ncm * esz, cudaMemcpyHostToDevice));
	ds_mm(kind, (char *)da + off * esz, (char *)db + off * esz, nr, nc, K, ldc, (char *)dc + c0 * esz, 0);
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaMemcpy(hc, dc, ncm * esz, cudaMemcpyDeviceToHost));
	const char *name = kind == DS_MM_TF32 ? "tf32" : kind == DS_MM_F32 ? "f32" : "f64";
	int bad = 0;
	double worst = 0;
	for (size_t i = 0; i < nr && !bad; i++)
		for (size_t j = 0; j < ldc && !bad; j++) {
			double c = esz == 8 ? ((double *)hc)[i * ldc + j] : ((float *)hc)[i * ldc + j];
			if (j < c0 || j >= c0 + nc) {
				if (c != (esz == 8 ? SENTINEL : (double)(float)SENTINEL)) {
					printf("%s %zu x %zu x %zu (off %zu, ldc %zu): C[%zu][%zu] outside the block written: %.9g\n",
					    name, nr, nc, K, off, ldc, i, j, c);
					bad = 1;
				}
				continue;
			}
			size_t jj = j - c0;
			long double r = 0, mag = 0;
			for (size_t k = 0; k < K; k++) {
				long double x, y;
				if (esz == 8) {
					x = ((double *)ha)[off + i * K + k];
					y = ((double *)hb)[off + jj * K + k];
				} else {
					x = ((float *)ha)[off + i * K + k];
					y = ((float *)hb)[off + jj * K + k];
				}
				r += x * y;
				mag += fabsl(x * y);
			}
			double tol = kind == DS_MM_TF32 ? ds_fast_bound(K)
			    : kind == DS_MM_F32 ? ds_f32_bound(K)
			    : 2 * (double)(K + 1) * ldexp(1, -53) * (double)mag + 1e-300;
			double err = fabs(c - (double)r);
			if (!(err <= tol)) {
				printf("%s %zu x %zu x %zu (off %zu, ldc %zu): C[%zu][%zu] = %.17g, float64 %.17Lg: off by %.3g, "
				       "over the bound %.3g\n",
				    name, nr, nc, K, off, ldc, i, jj, c, r, err, tol);
				bad = 1;
			}
			if (err / tol > worst)
				worst = err / tol;
			checked++;
		}
	if (verbose_cases)
		printf("%s %zu x %zu x %zu off %zu ldc %zu: worst error %.3f of the bound\n", name, nr, nc, K, off, ldc,
		    worst);
	CUDA_CHECK(cudaFree(da));
	CUDA_CHECK(cudaFree(db));
	CUDA_CHECK(cudaFree(dc));
	free(ha);
	free(hb);
	free(hc);
	return !bad;
}

static double
dot64(const float *a, const float *b, size_t m)
{
	double s = 0;
	for (size_t k = 0; k < m; k++)
		s += (double)a[k] * b[k];
	return s;
}

/* k_topk_tf32 (kernels/docsim_topk_tc.cu) over docsim's tile loop with tiles of br x bc:
 * all pairs of n unit rows of m (sym), or nq query rows against them; lists of kl. Each
 * list is then checked against float64 scores computed here, for what docsim_exact.cu
 * relies on: entries best first, distinct, none the row itself, each TF32 score within
 * B = ds_fast_bound(m) of its pair's float64 score; a list not full holds every
 * candidate (those passing the threshold less B, as the tile loop keeps them, with
 * their float64 score at least the threshold: B to spare), and a full one leaves out
 * no column whose float64 score is over its last score plus B. */
static int
topk_case(size_t n, size_t nq, size_t m, int kl, int sym, int use_thr, double thr, size_t br, size_t bc)
{
	size_t rows = sym ? n : nq;
	float *x = (float *)xmallocarray(n * m, 4), *q = sym ? x : (float *)xmallocarray(nq * m, 4);
	unit_rows(x, n, m);
	if (!sym)
		unit_rows(q, nq, m);
	float *ls = (float *)xmallocarray(rows * kl, 4);
	int32_t *li = (int32_t *)xmallocarray(rows * kl, 4);
	for (size_t e = 0; e < rows * (size_t)kl; e++) {
		ls[e] = -INFINITY;
		li[e] = DS_NONE;
	}
	float *dx, *dq, *dls;
	int32_t *dli, *locks;
	CUDA_CHECK(cudaMalloc(&dx, n * m * 4));
	CUDA_CHECK(cudaMalloc(&dq, (sym ? 1 : nq) * m * 4));
	CUDA_CHECK(cudaMalloc(&dls, rows * kl * 4));
	CUDA_CHECK(cudaMalloc(&dli, rows * kl * 4));
	CUDA_CHECK(cudaMalloc(&locks, rows * 4));
	CUDA_CHECK(cudaMemcpy(dx, x, n * m * 4, cudaMemcpyHostToDevice));
	if (!sym)
		CUDA_CHECK(cudaMemcpy(dq, q, nq * m * 4, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(dls, ls, rows * kl * 4, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(dli, li, rows * kl * 4, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemset(locks, 0, rows * 4));
	double B = ds_fast_bound(m);
	struct ds_job job;
	struct gpu g;
	memset(&job, 0, sizeof job);
	memset(&g, 0, sizeof g);
	job.use_thr = use_thr;
	job.thr = thr;
	g.job = &job;
	g.K = m;
	g.kl = (size_t)kl;
	g.thr_sel = thr - B;
	g.tops = dls;
	g.topi = dli;
	g.undecided = locks;
	g.sa = 0;
	if (sym) {
		for (size_t r0 = 0; r0 < n; r0 += br) {
			size_t r1 = MIN(n, r0 + br);
			for (size_t c0 = 0; c0 < r1; c0 += bc)
				ds_topk_tile(&g, dx + r0 * m, dx + c0 * m, r0, r1 - r0, c0, MIN(r1, c0 + bc) - c0, 1);
		}
	} else {
		for (size_t c0 = 0; c0 < n; c0 += bc)
			for (size_t r0 = 0; r0 < nq; r0 += br)
				ds_topk_tile(&g, dq + r0 * m, dx + c0 * m, r0, MIN(nq, r0 + br) - r0, c0, MIN(n, c0 + bc) - c0, 0);
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaMemcpy(ls, dls, rows * kl * 4, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(li, dli, rows * kl * 4, cudaMemcpyDeviceToHost));
	int bad = 0;
	char *in = (char *)xmalloc(n);
	for (size_t i = 0; i < rows && !bad; i++) {
		const float *s = ls + i * kl;
		const int32_t *id = li + i * kl;
		const float *xi = (sym ? x : q) + i * m;
		int filled = 0;
		memset(in, 0, n);
		for (int e = 0; e < kl && !bad; e++) {
			if (id[e] == DS_NONE) {
				if (s[e] != -INFINITY)
					bad = printf("row %zu: entry %d has no id but a score\n", i, e) > 0;
				continue;
			}
			if (e > filled)
				bad = printf("row %zu: entry %d after an empty one\n", i, e) > 0;
			filled++;
			if (id[e] < 0 || (size_t)id[e] >= n || (sym && (size_t)id[e] == i) || in[id[e]])
				bad = printf("row %zu: entry %d has id %d (itself, repeated or outside)\n", i, e, id[e]) > 0;
			else
				in[id[e]] = 1;
			if (e > 0 && !ds_better(s[e - 1], id[e - 1], s[e], id[e]))
				bad = printf("row %zu: entries %d and %d out of order\n", i, e - 1, e) > 0;
			double d = dot64(xi, x + (size_t)id[e] * m, m);
			if (!bad && !(fabs(s[e] - d) <= B))
				bad = printf("row %zu: column %d scored %.9g, float64 %.17g: over the bound %.3g\n", i, id[e],
				    s[e], d, B) > 0;
			if (!bad && use_thr && !((double)s[e] >= thr - B))
				bad = printf("row %zu: column %d under the threshold less B\n", i, id[e]) > 0;
		}
		for (size_t j = 0; j < n && !bad; j++) {
			if (in[j] || (sym && j == i))
				continue;
			double d = dot64(xi, x + j * m, m);
			if (use_thr && d < thr)
				continue;	/* need not be kept */
			if (filled < kl)
				bad = printf("row %zu: list of %d not full, but column %zu (float64 %.9g) is left out\n", i,
				    filled, j, d) > 0;
			else if (d > (double)s[kl - 1] + B)
				bad = printf("row %zu: column %zu (float64 %.9g) left out above the last score %.9g plus B\n",
				    i, j, d, s[kl - 1]) > 0;
		}
	}
	if (bad)
		printf("in the lists of %s %zu x %zu (m %zu, kl %d, -t %s%g, tiles %zu x %zu)\n", sym ? "all pairs of" : "queries against",
		    sym ? n : nq, n, m, kl, use_thr ? "" : "none ", thr, br, bc);
	CUDA_CHECK(cudaFree(dx));
	CUDA_CHECK(cudaFree(dq));
	CUDA_CHECK(cudaFree(dls));
	CUDA_CHECK(cudaFree(dli));
	CUDA_CHECK(cudaFree(locks));
	free(in);
	free(ls);
	free(li);
	if (!sym)
		free(q);
	free(x);
	return !bad;
}

/* ms of one product of kind, nr x nc x K, the best of 5 after a warm-up. */
static void
bench_one(enum ds_mm_kind kind, size_t nr, size_t nc, size_t K)
{
	size_t esz = kind == DS_MM_F64 ? 8 : 4;
	void *da, *db, *dc;
	CUDA_CHECK(cudaMalloc(&da, nr * K * esz));
	CUDA_CHECK(cudaMalloc(&db, nc * K * esz));
	CUDA_CHECK(cudaMalloc(&dc, nr * nc * esz));
	CUDA_CHECK(cudaMemset(da, 0, nr * K * esz));
	CUDA_CHECK(cudaMemset(db, 0, nc * K * esz));
	cudaEvent_t e0, e1;
	CUDA_CHECK(cudaEventCreate(&e0));
	CUDA_CHECK(cudaEventCreate(&e1));
	float best = INFINITY;
	for (int rep = 0; rep < 6; rep++) {
		float ms;
		CUDA_CHECK(cudaEventRecord(e0, 0));
		ds_mm(kind, da, db, nr, nc, K, nc, dc, 0);
		CUDA_CHECK(cudaEventRecord(e1, 0));
		CUDA_CHECK(cudaEventSynchronize(e1));
		CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
		if (rep > 0 && ms < best)
			best = ms;
	}
	const char *name = kind == DS_MM_TF32 ? "tf32" : kind == DS_MM_F32 ? "f32" : "f64";
	printf("%-5s %6zu x %6zu x %5zu: %8.3f ms, %6.1f TFLOP/s\n", name, nr, nc, K, best,
	    2.0 * nr * nc * K / (best * 1e-3) / 1e12);
	CUDA_CHECK(cudaEventDestroy(e0));
	CUDA_CHECK(cudaEventDestroy(e1));
	CUDA_CHECK(cudaFree(da));
	CUDA_CHECK(cudaFree(db));
	CUDA_CHECK(cudaFree(dc));
}

int
main(int argc, char **argv)
{
	progname = "docsim_mm";
	CUDA_CHECK(cudaSetDevice(0));
	ds_mm_init();
	if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
		/* the 100,000 x 1024 all-pairs run's tiles: 4096 rows against every column */
		bench_one(DS_MM_TF32, 4096, 100000, 1024);
		bench_one(DS_MM_F32, 4096, 100000, 1024);
		bench_one(DS_MM_F64, 4096, 25000, 1024);
		return 0;
	}
	verbose_cases = argc > 1 && strcmp(argv[1], "-v") == 0;
	if (argc > 2 || (argc > 1 && !verbose_cases)) {
		fprintf(stderr, "usage: docsim_mm [-v | --bench]\n");
		return 2;
	}
	static const size_t Ks[] = {1, 3, 7, 8, 63, 64, 1000, 1024};
	static const size_t sizes[][2] = {{1, 1}, {15, 17}, {16, 16}, {17, 15}, {1, 129}, {129, 1},
	    {127, 128}, {128, 129}, {200, 70}, {1000, 1000}};
	static const enum ds_mm_kind kinds[] = {DS_MM_TF32, DS_MM_F32, DS_MM_F64};
	int ok = 1;
	unsigned long products = 0;
	for (size_t q = 0; q < 3; q++)
		for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++)
			for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
				size_t K = Ks[a], nr = sizes[b][0], nc = sizes[b][1];
				/* the big shapes at the big K only once: the reference is O(n^2 K) */
				if (nr * nc * K > (size_t)300 * 1000 * 1000)
					continue;
				ok &= case_one(kinds[q], nr, nc, K, 0, 0, nc);
				products++;
				if (nr * nc <= 128 * 129) {
					/* unaligned operands, and C inside a wider block */
					ok &= case_one(kinds[q], nr, nc, K, 1, 0, nc);
					ok &= case_one(kinds[q], nr, nc, K, 0, 3, nc + 7);
					products += 2;
				}
			}
	/* one product nearer docsim's size: 200 rows against 3000 columns, K 1024 */
	for (size_t q = 0; q < 3; q++, products++)
		ok &= case_one(kinds[q], 200, 3000, 1024, 0, 0, 3000);
	/* TF32 lists straight from the product: all pairs and queries, one tile and many
	 * (edges off the blocks'), lists of 1 to 64, K 3 and 100, with and without -t */
	ds_topk_init();
	static const struct {
		size_t n, nq, m;
		int kl, sym, use_thr;
		double thr;
		size_t br, bc;
	} tk[] = {
		{2000, 0, 100, 42, 1, 0, 0, 4096, 2000}, {2000, 0, 100, 42, 1, 0, 0, 300, 700},
		{1500, 0, 3, 33, 1, 0, 0, 257, 1500}, {1000, 0, 100, 64, 1, 1, 0.1, 1000, 129},
		{900, 0, 64, 1, 1, 0, 0, 128, 128}, {3000, 200, 100, 42, 0, 0, 0, 4096, 3000},
		{3000, 333, 64, 40, 0, 1, 0.05, 100, 513}, {50, 7, 8, 64, 0, 0, 0, 4096, 50},
	};
	unsigned long lists = 0;
	for (size_t c = 0; c < sizeof tk / sizeof tk[0]; c++) {
		ok &= topk_case(tk[c].n, tk[c].nq, tk[c].m, tk[c].kl, tk[c].sym, tk[c].use_thr, tk[c].thr, tk[c].br,
		    tk[c].bc);
		lists += tk[c].sym ? tk[c].n : tk[c].nq;
	}
	if (!ok) {
		printf("docsim_mm: failed\n");
		return 1;
	}
	printf("ok: %lu products, %lu entries\n", products, checked);
	printf("ok: %lu TF32 lists ranked by the product\n", lists);
	return 0;
}
