/* clkmeans_seed.cl: kpp. A part of clkmeans's OpenCL program,
 * after those clkmeans_defs.cl lists before it. */

/* ---- kpp -------------------------------------------------------------------- */

/*
 * k-means++ over the batch's rows, with `closest' each row's squared distance to the
 * nearest centroid chosen so far (float; +inf before the first). For each of the L
 * candidate rows in cand (L x DIM, as real): part[t * ngt + g0 + group] = the sum over the
 * group's rows of min(closest, distance to candidate t), each in fixed point: the float
 * times kscale (a power of two) rounded half even, as the host converts it
 * (kernels/clkmeans_seed.c). Integer sums do not depend on how the rows are split over
 * devices and ranks. With update set (L = 1), closest takes that minimum too.
 */
#if KM_HAS(KM_K_SEED)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
kpp(__global const float *restrict X, int nb, __global const real *restrict cand, int L,
    __global float *restrict closest, long row0, __global long *restrict part, long g0,
    long ngt, int update, float kscale)
{
	__local long l[WG];
	const int tid = get_local_id(0);

	for (int t = 0; t < L; t++) {
		long acc = 0;
		for (int q = 0; q < RG / WG; q++) {
			int r = get_group_id(0) * RG + q * WG + tid;
			if (r >= nb)
				break;
			real s = sqdist(X + (long)r * DIM, cand + (long)t * DIM, 1);
			float m = fmin(closest[row0 + r], (float)s);
			if (update)
				closest[row0 + r] = m;
			acc += convert_long_rte(m * kscale);
		}
		group_sum_l(l, acc, part, (long)t * ngt + g0 + get_group_id(0));
	}
}
#endif
