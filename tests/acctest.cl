/* acctest.cl: a kernel for the shared library's own tests (tests/common.bats). */
#ifndef SCALE
#define SCALE 1.0f	/* multiplier, overridden with -D SCALE=... to prove options reach the compiler */
#endif

__kernel void
axpy(const int n, __global const float *x, __global float *y)
{
	int i = get_global_id(0);
	if (i < n)
		y[i] += SCALE * x[i];
}
