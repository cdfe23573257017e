/* clkmeans_exact.cl: exact. A part of clkmeans's OpenCL program,
 * after those clkmeans_defs.cl lists before it. */

/* ---- exact ------------------------------------------------------------------ */

/* ||x - c||^2 in `real', directly, c's i-th value at c[i * stride]. */
static inline real
sqdist(__global const float *x, __global const real *c, long stride)
{
	real s = 0;
	for (int i = 0; i < DIM; i++) {
		real t = (real)x[i] - c[i * stride];
		s += t * t;
	}
	return s;
}

/* exact takes ER listed rows at once, each centroid's column read once for all of them
 * (one row at a time, every listed row read all k x DIM centroid values from L2: the
 * kernel was L2-bound). The rows sit in local memory, EX_LOCAL bytes at most; wider
 * rows than that are read from global memory, one at a time. */
#define EX_LOCAL 16384
#define EX_RSZ (USE_FP64 ? 8 : 4)
#define EX_FIT (EX_LOCAL / (DIM * EX_RSZ))
#if EX_FIT >= 8
#define ER 8
#elif EX_FIT >= 1
#define ER EX_FIT
#else
#define ER 1
#endif

/* Labels the rows `assign' listed: float64 (x - c)^2 summed over the columns in order
 * (sqdist's arithmetic), the smallest, the lowest index among equals. Groups take the
 * listed rows in turn, up to ER at once. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
exact(__global const float *restrict X, __global const real *restrict c64T, int k, int kpad,
    __global int *restrict labels, long row0, __global const int *restrict list,
    __global ulong *restrict state)
{
#if EX_FIT >= 1
	__local real xl[ER][DIM];
#endif
	__local real bv[WG];
	__local int bi[WG];
	__global int *si = (__global int *)state;
	const int tid = get_local_id(0);
	const int count = si[SI_NLIST];

	/* Rows a group takes at once: ER when the list is long, 1 when it is short, so that
	 * a short list still spreads over every group. */
	const int ng = get_num_groups(0);
	const int per = min(ER, max(1, (count + ng - 1) / ng));
	for (int f0 = get_group_id(0) * per; f0 < count; f0 += ng * per) {
		const int nr = min(per, count - f0);
		real best[ER];
		int bj[ER];
		for (int q = 0; q < ER; q++) {
			best[q] = INFINITY;
			bj[q] = INT_MAX;
		}
#if EX_FIT >= 1
		/* the rows into local memory, outside any branch (PoCL wants its barriers
		 * unconditional) */
		for (int e = tid; e < ER * DIM; e += WG) {
			const int q = e / DIM, i = e - q * DIM;
			xl[q][i] = q < nr ? (real)X[(long)list[f0 + q] * DIM + i] : 0;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
#define XV(q, i) xl[q][i]
#else
		__global const float *x0 = X + (long)list[f0] * DIM;	/* per is 1 */
#define XV(q, i) ((real)x0[i])
#endif
		if (per == 1) {
			for (int j = tid; j < k; j += WG) {
				real s = 0;
				for (int i = 0; i < DIM; i++) {
					real t = XV(0, i) - c64T[j + (long)i * kpad];	/* sqdist's */
					s += t * t;
				}
				if (s < best[0]) {
					best[0] = s;
					bj[0] = j;
				}
			}
		} else {
			for (int j = tid; j < k; j += WG) {
				real s[ER];
				for (int q = 0; q < ER; q++)
					s[q] = 0;
				for (int i = 0; i < DIM; i++) {
					const real c = c64T[j + (long)i * kpad];
					for (int q = 0; q < ER; q++) {
						real t = XV(q, i) - c;	/* sqdist's arithmetic */
						s[q] += t * t;
					}
				}
				for (int q = 0; q < ER; q++)
					if (s[q] < best[q]) {
						best[q] = s[q];
						bj[q] = j;
					}
			}
		}
#undef XV
		for (int q = 0; q < nr; q++) {
			bv[tid] = best[q];
			bi[tid] = bj[q];
			barrier(CLK_LOCAL_MEM_FENCE);
			for (int w = WG / 2; w > 0; w >>= 1) {
				if (tid < w) {
					real o = bv[tid + w];
					int oi = bi[tid + w];
					if (o < bv[tid] || (o == bv[tid] && oi < bi[tid])) {
						bv[tid] = o;
						bi[tid] = oi;
					}
				}
				barrier(CLK_LOCAL_MEM_FENCE);
			}
			if (tid == 0) {
				const long r = list[f0 + q];
				int old = labels[row0 + r];
				if (old != bi[0])
					atomic_inc(&si[SI_MOVED]);
				labels[row0 + r] = bi[0];
				atomic_inc(&si[SI_NEXACT]);
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
	}
}

