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
	if (!ok) {
		printf("docsim_mm: failed\n");
		return 1;
	}
	printf("ok: %lu products, %lu entries\n", products, checked);
	return 0;
}
