/* clmatmul_clblast: bench/clmatmul's CLBlast peer. Times CLBlastSgemm (row-major,
 * no transposes, C = A B) on the first OpenCL device of a type on a platform whose
 * name contains TEXT, with the same data sizes and timing as clmatmul --bench: one
 * warm-up call (CLBlast compiles its kernels then), then REPS calls each waited for,
 * the median reported.
 *
 *   clmatmul_clblast PLATFORM_TEXT gpu|cpu M N K REPS
 *   -> m=M n=N k=K reps=REPS ms=MEDIAN best_ms=BEST gflops=G device=NAME
 *
 * Build: cc -O2 -o clmatmul_clblast clmatmul_clblast.c -lclblast -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void
fail(const char *what, int code)
{
	fprintf(stderr, "clmatmul_clblast: %s failed (%d)\n", what, code);
	exit(1);
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: clmatmul_clblast PLATFORM_TEXT gpu|cpu M N K REPS\n");
		return 2;
	}
	const char *want = argv[1];
	cl_device_type type = strcmp(argv[2], "cpu") == 0 ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
	size_t m = strtoul(argv[3], NULL, 10), n = strtoul(argv[4], NULL, 10);
	size_t k = strtoul(argv[5], NULL, 10);
	int reps = atoi(argv[6]);
	if (m == 0 || n == 0 || k == 0 || reps < 1) {
		fprintf(stderr, "clmatmul_clblast: bad sizes\n");
		return 2;
	}

	cl_platform_id plats[16];
	cl_uint np = 0;
	cl_device_id dev = NULL;
	clGetPlatformIDs(16, plats, &np);
	for (cl_uint i = 0; i < np && dev == NULL; i++) {
		char name[256] = "";
		clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
		if (strstr(name, want) == NULL)
			continue;
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[i], type, 1, &dev, &nd) != CL_SUCCESS || nd == 0)
			dev = NULL;
	}
	if (dev == NULL) {
		fprintf(stderr, "clmatmul_clblast: no %s device on a platform matching '%s'\n",
		    argv[2], want);
		return 1;
	}
	char dname[256] = "";
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);

	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		fail("clCreateContext", err);
	cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
	if (err != CL_SUCCESS)
		fail("clCreateCommandQueue", err);

	/* uniform [-1, 1) data, as clmatmul --bench makes */
	size_t sa = m * k, sb = k * n, sc = m * n;
	float *h = malloc(sizeof(float) * (sa > sb ? sa : sb));
	if (h == NULL)
		fail("malloc", 0);
	unsigned long long s = 88172645463325252ULL;
	cl_mem buf[3];
	size_t sizes[3] = {sa, sb, sc};
	for (int b = 0; b < 3; b++) {
		buf[b] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(float) * sizes[b], NULL, &err);
		if (err != CL_SUCCESS)
			fail("clCreateBuffer", err);
		if (b == 2)
			break;
		for (size_t i = 0; i < sizes[b]; i++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			h[i] = (float)(s >> 40) * 0x1p-23f - 1.0f;
		}
		err = clEnqueueWriteBuffer(q, buf[b], CL_TRUE, 0, sizeof(float) * sizes[b], h, 0,
		    NULL, NULL);
		if (err != CL_SUCCESS)
			fail("clEnqueueWriteBuffer", err);
	}
	free(h);

	double *ms = malloc(sizeof(double) * (size_t)reps);
	for (int r = -1; r < reps; r++) {
		double t0 = now();
		CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
		    CLBlastTransposeNo, m, n, k, 1.0f, buf[0], 0, k, buf[1], 0, n, 0.0f, buf[2], 0,
		    n, &q, NULL);
		if (st != CLBlastSuccess)
			fail("CLBlastSgemm", st);
		err = clFinish(q);
		if (err != CL_SUCCESS)
			fail("clFinish", err);
		if (r >= 0)
			ms[r] = 1e3 * (now() - t0);
	}
	qsort(ms, (size_t)reps, sizeof *ms, cmp);
	double med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
	printf("m=%zu n=%zu k=%zu reps=%d ms=%.3f best_ms=%.3f gflops=%.1f device=%s\n", m, n, k,
	    reps, med, ms[0], 2e-6 * (double)m * (double)n * (double)k / med, dname);
	free(ms);
	for (int b = 0; b < 3; b++)
		clReleaseMemObject(buf[b]);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	return 0;
}
