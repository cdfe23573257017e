/* clkmeans_update.cl: update, finalize, scalars and rowdist. A part of clkmeans's OpenCL
 * program, after those clkmeans_defs.cl lists before it. */

/* ---- update ----------------------------------------------------------------- */

/* *p += q modulo 2^64, atomically. */
static inline void
add64(__global ulong *p, long q)
{
#if HAVE_ATOM64
	atom_add((volatile __global ulong *)p, (ulong)q);
#else
	/* Two 32-bit halves, the carry of the low one added to the high one: the total is
	 * exact modulo 2^64 whatever the order. */
	__global uint *p32 = (__global uint *)p;
	uint lo = (uint)q, hi = (uint)((ulong)q >> 32);
	uint old = atomic_add(p32, lo);
	hi += (uint)(old + lo < old);
	if (hi)
		atomic_add(p32 + 1, hi);
#endif
}

/*
 * sums[l][i] += round(x[i] * 2^p_i) as 64-bit integers; counts[l] += 1, also 64-bit:
 * one device streaming billions of rows can put more than 2^32 in one cluster.
 * With delta, the sums and counts are the last iteration's, made for the labels in
 * prev: only a row whose label changed moves, its values taken from its old cluster
 * (prev; -1: none) and added to its new one. Integers, so the totals are the bytes a
 * sum from zero gives, and an iteration that moves few rows costs few atomics.
 */
#if KM_HAS(KM_K_UPDATE)
__kernel void
update(__global const float *restrict X, long nelem, __global const int *restrict labels,
    __global const int *restrict prev, int delta, long row0,
    __global const float *restrict fscale, __global ulong *restrict sums,
    __global ulong *restrict counts)
{
	for (long e = get_global_id(0); e < nelem; e += get_global_size(0)) {
		long r = e / DIM;
		int i = (int)(e - r * DIM);
		int l = labels[row0 + r], was = delta ? prev[row0 + r] : -1;
		if (l == was)
			continue;
		long q = convert_long_rte(X[e] * fscale[i]);
		add64(sums + (long)l * DIM + i, q);
		if (was >= 0)
			add64(sums + (long)was * DIM + i, -q);
		if (i == 0) {
			add64(counts + l, 1);
			if (was >= 0)
				add64(counts + was, -1);
		}
	}
}
#endif

/* ---- finalize --------------------------------------------------------------- */

/*
 * One work-item a centroid j < kpad. mode 1: c = sum * 2^-p / count (an empty cluster
 * keeps its centroid); mode 0: c = the centroid given in c64old. Writes the float64
 * centroids row-major (c64) and column-major (c64T), the float32 ones column-major and
 * padded (cT; with TF32 also rounded to TF32, cTt, which the tensor cores' assign copies
 * as it is), squared norms (cn: +inf past k, so padding never wins), norms, squared
 * shifts and whether the cluster is empty.
 */
#if KM_HAS(KM_K_UPDATE)
__kernel void
finalize(int mode, int k, int kpad, __global const ulong *restrict sums,
    __global const ulong *restrict counts, __global const real *restrict iscale,
    __global const real *c64old, __global real *c64, __global real *restrict c64T,
    __global float *restrict cT, __global float *restrict cTt, __global float *restrict cn,
    __global float *restrict cnrm, __global real *restrict shift, __global int *restrict empty)
{
	const int j = get_global_id(0);
	if (j >= kpad)
		return;
	if (j >= k) {
		for (int i = 0; i < DPAD; i++) {
			cT[(long)i * kpad + j] = 0.0f;
#if TF32
			cTt[(long)i * kpad + j] = 0.0f;
#endif
		}
		for (int i = 0; i < DIM; i++)
			c64T[(long)i * kpad + j] = 0;
		cn[j] = INFINITY;
		cnrm[j] = 0.0f;
		shift[j] = 0;
		empty[j] = 0;
		return;
	}
	const long cnt = mode ? (long)counts[j] : 0;
	real nrm = 0, sh = 0;
	for (int i = 0; i < DIM; i++) {
		long ji = (long)j * DIM + i;
		real old = c64old[ji];
		real c = cnt > 0 ? (real)(long)sums[ji] * iscale[i] / (real)cnt : old;
		sh += (c - old) * (c - old);
		nrm += c * c;
		c64[ji] = c;
		c64T[(long)i * kpad + j] = c;
		cT[(long)i * kpad + j] = (float)c;
#if TF32
		cTt[(long)i * kpad + j] = tf32_round((float)c);
#endif
	}
	for (int i = DIM; i < DPAD; i++) {
		cT[(long)i * kpad + j] = 0.0f;
#if TF32
		cTt[(long)i * kpad + j] = 0.0f;
#endif
	}
	cn[j] = (float)nrm;
	cnrm[j] = (float)sqrt(nrm);
	shift[j] = sh;
	empty[j] = mode && cnt == 0;
}
#endif

/* ---- scalars ---------------------------------------------------------------- */

/* One group of WG: the total squared shift, the number of empty clusters, the largest
 * centroid norm (for assign's bound) and, when npart > 0, the inertia from rowdist's
 * partial sums; each summed in a fixed order. */
#if KM_HAS(KM_K_UPDATE)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
scalars(int k, __global const real *restrict shift, __global const int *restrict empty,
    __global const float *restrict cnrm, __global const real *restrict part, long npart,
    __global ulong *restrict state)
{
	__local real ls[WG], lp[WG];
	__local int le[WG];
	__local float lm[WG];
	const int tid = get_local_id(0);
	real s = 0, p = 0;
	int e = 0;
	float m = 0.0f;

	for (int j = tid; j < k; j += WG) {
		s += shift[j];
		e += empty[j];
		m = fmax(m, cnrm[j]);
	}
	for (long g = tid; g < npart; g += WG)
		p += part[g];
	ls[tid] = s;
	lp[tid] = p;
	le[tid] = e;
	lm[tid] = m;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int w = WG / 2; w > 0; w >>= 1) {
		if (tid < w) {
			ls[tid] += ls[tid + w];
			lp[tid] += lp[tid + w];
			le[tid] += le[tid + w];
			lm[tid] = fmax(lm[tid], lm[tid + w]);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (tid == 0) {
		__global double *sd = (__global double *)state;
		sd[SD_SHIFT] = ls[0];
		if (npart > 0)
			sd[SD_INERTIA] = lp[0];
		((__global int *)state)[SI_EMPTY] = le[0];
		((__global float *)state)[SF_CMAX] = lm[0];
	}
}
#endif

/* ---- rowdist ---------------------------------------------------------------- */

/* NAME(l, v, part, g): sums a group's per-work-item values of type T in a fixed
 * order (a tree over the work-items) into part[g]. One body for the float64 sums
 * (group_sum) and the integer ones (group_sum_l: order-free). */
#define GROUP_SUM(NAME, T)						\
static void								\
NAME(__local T *l, T v, __global T *part, long g)			\
{									\
	const int tid = get_local_id(0);				\
	l[tid] = v;							\
	barrier(CLK_LOCAL_MEM_FENCE);					\
	for (int w = WG / 2; w > 0; w >>= 1) {				\
		if (tid < w)						\
			l[tid] += l[tid + w];				\
		barrier(CLK_LOCAL_MEM_FENCE);				\
	}								\
	if (tid == 0)							\
		part[g] = l[0];						\
	barrier(CLK_LOCAL_MEM_FENCE);					\
}
GROUP_SUM(group_sum, real)
GROUP_SUM(group_sum_l, long)

/* dists[r] = float64 ||x_r - c_label||^2 for the batch's rows; part[g0 + group] the
 * sum over each group's RG rows. */
#if KM_HAS(KM_K_UPDATE)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rowdist(__global const float *restrict X, int nb, __global const real *restrict c64,
    __global const int *restrict labels, long row0, __global real *restrict dists,
    __global real *restrict part, long g0)
{
	__local real l[WG];
	const int tid = get_local_id(0);
	real acc = 0;

	for (int q = 0; q < RG / WG; q++) {
		int r = get_group_id(0) * RG + q * WG + tid;
		if (r >= nb)
			break;
		real s = sqdist(X + (long)r * DIM, c64 + (long)labels[row0 + r] * DIM, 1);
		dists[row0 + r] = s;
		acc += s;
	}
	group_sum(l, acc, part, g0 + get_group_id(0));
}
#endif

