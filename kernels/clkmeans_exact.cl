/* clkmeans_exact.cl: exact. A part of clkmeans's OpenCL program,
 * after those clkmeans_defs.cl lists before it. */

/* ---- exact ------------------------------------------------------------------ */

/* ||x - c||^2 in `real', directly, c's i-th value at c[i * stride]. */
static inline real
sqdist(__global const float *x, __global const real *c, long stride)
{
	real s = 0;
#pragma unroll 8
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
#if USE_FP64 && EX_LOCAL / (DIM * 4) >= 4
#define EX_TWO 1	/* float32 first, float64 near the least (see exact below) */
#else
#define EX_TWO 0
#endif
#define EX_RSZ (EX_TWO ? 4 : USE_FP64 ? 8 : 4)
#define EX_FIT (EX_LOCAL / (DIM * EX_RSZ))
#if EX_TWO	/* ER a multiple of 4; the bounds' tree, ER x WG doubles, within 2 EX_LOCAL */
#if EX_FIT >= 8 && 8 * WG * 8 <= 2 * EX_LOCAL
#define ER 8
#else
#define ER 4
#endif
#elif EX_FIT >= 8
#define ER 8
#elif EX_FIT >= 1
#define ER EX_FIT
#else
#define ER 1
#endif

#define EX_CH 16	/* two-stage exact: centroid values a work-item loads at once */

/* Rows a group takes at once: ER when the list is long, 1 when it is short, so that a
 * short list still spreads over every group. */
static inline int
ex_per(int count)
{
	const int ng = get_num_groups(0);
	return min(ER, max(1, (count + ng - 1) / ng));
}

/* The group's least (bv, bi) of row f0 + q (each work-item's best[q], bj[q]; lowest index
 * among equal values) as its label; counts the labels that changed and the rows. */
static void
ex_label(__local real *bv, __local int *bi, real best, int bj, int f0, int q,
    __global int *labels, long row0, __global const int *list, __global int *si)
{
	const int tid = get_local_id(0);
	bv[tid] = best;
	bi[tid] = bj;
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

#if EX_TWO
/*
 * float32's error in f = sum (x_i - c32_i)^2 (c32 the float centroid, fma sums of DIM
 * terms, u = 2^-24) against D, the exact ||x - c||^2 of the float64 centroid c:
 *   |f - D| <= u ((DIM + 2) D + 2 ||c|| sqrt(D)) + O(u^2),
 * taken with f for D (D <= f (1 + (DIM + 2) u) + ...: the factor SAFETY and DIM + 4 cover
 * it and the u^2 terms), plus a term for float underflow. The float64 sums exact prints
 * are within DIM 2^-53 D of D: SAFETY's eighth covers them too.
 */
/* component c of a float4, c known when the loop around it is unrolled */
#define F4(v, c) ((c) == 0 ? (v).x : (c) == 1 ? (v).y : (c) == 2 ? (v).z : (v).w)

static inline float
ex_bound(float f, float cnorm)
{
	return SAFETY * U32 * ((DIM + 4) * f + 2.0f * cnorm * sqrt(f)) + DIM * 1e-36f;
}

/*
 * Labels the rows `assign' listed: the least float64 (x - c)^2 summed over the columns in
 * order (sqdist's arithmetic), the lowest index among equals. Groups take the listed rows
 * in turn, up to ER at once, in two stages. First every centroid's distance in float32,
 * from the float centroids (cT), with ex_bound: T, the least upper bound over the
 * centroids, bounds the row's least distance, and only a centroid whose lower bound is at
 * most T can be the least. Each work-item keeps its two least lower bounds and the third's
 * value; then, in float64, only those of the two at most T (mostly one or two centroids a
 * row), or every centroid for a row where some work-item's third is at most T too. Half
 * the float64 work's time per flop, a 32-bit centroid column, and far fewer float64
 * distances than the k a row of the one-stage kernel (below) computes.
 */
#if KM_HAS(KM_K_EXACT)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
exact(__global const float *restrict X, __global const real *restrict c64,
    __global const real *restrict c64T, __global const float *restrict cT,
    __global const float *restrict cnrm, int k, int kpad,
    __global int *restrict labels, long row0, __global const int *restrict list, int slot,
    __global ulong *restrict state)
{
	__local float4 xl[DIM][ER / 4];	/* column i of the group's rows */
	__local real red[ER][WG];	/* each row's upper bounds, then its float64 minima */
	__local int ri[ER][WG];		/* the minima's indices */
	__local int wide[ER];		/* rows that take every centroid in float64 */
	__local float tl[ER];		/* each row's T */
	__global int *si = (__global int *)state;
	const int tid = get_local_id(0);
	const int count = si[slot];	/* the list's length */
	const int ng = get_num_groups(0), per = ex_per(count);

	for (int f0 = get_group_id(0) * per; f0 < count; f0 += ng * per) {
		const int nr = min(per, count - f0);
		float up[ER], l1[ER], l2[ER], l3[ER];
		int j1[ER], j2[ER];
#pragma unroll
		for (int q = 0; q < ER; q++) {
			up[q] = l1[q] = l2[q] = l3[q] = INFINITY;
			j1[q] = j2[q] = -1;
		}
		/* the rows into local memory, outside any branch (PoCL wants its barriers
		 * unconditional) */
		__local float *xs = (__local float *)xl;
		for (int e = tid; e < ER * DIM; e += WG) {
			const int q = e / DIM, i = e - q * DIM;
			xs[i * ER + q] = q < nr ? X[(long)list[f0 + q] * DIM + i] : 0.0f;
		}
		if (tid < ER)
			wide[tid] = 0;
		barrier(CLK_LOCAL_MEM_FENCE);

		for (int j = tid; j < k; j += WG) {
			float4 f[ER / 4];
#pragma unroll
			for (int v = 0; v < ER / 4; v++)
				f[v] = (float4)(0.0f);
			/* EX_CH values of the centroid's column loaded at once, then used: one
			 * wait on L2 a chunk, not one every column or two */
			__global const float *cj0 = cT + j;
			for (int i0 = 0; i0 < DIM; i0 += EX_CH) {
				float cc[EX_CH];
#pragma unroll
				for (int u = 0; u < EX_CH; u++)
					cc[u] = i0 + u < DIM ? cj0[(long)(i0 + u) * kpad] : 0.0f;
#pragma unroll
				for (int u = 0; u < EX_CH; u++) {
					if (i0 + u >= DIM)
						break;
					const float4 c = (float4)(cc[u]);
#pragma unroll
					for (int v = 0; v < ER / 4; v++) {
						const float4 t = xl[i0 + u][v] - c;
						f[v] = fma(t, t, f[v]);
					}
				}
			}
			const float cj = cnrm[j];
#pragma unroll
			for (int q = 0; q < ER; q++) {
				const float fq = F4(f[q / 4], q % 4);
				const float e = ex_bound(fq, cj);
				/* an overflowed distance bounds nothing: its centroid stays in */
				const float lo = fq < INFINITY ? fq - e : -INFINITY;
				up[q] = fmin(up[q], fq + e);
				if (lo < l2[q]) {
					l3[q] = l2[q];
					if (lo < l1[q]) {
						l2[q] = l1[q];
						j2[q] = j1[q];
						l1[q] = lo;
						j1[q] = j;
					} else {
						l2[q] = lo;
						j2[q] = j;
					}
				} else {
					l3[q] = fmin(l3[q], lo);
				}
			}
		}

		/* T of every row at once: a tree over the work-items, ER rows a level */
#pragma unroll
		for (int q = 0; q < ER; q++)
			red[q][tid] = up[q];
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int w = WG / 2; w > 0; w >>= 1) {
			for (int e = tid; e < ER * w; e += WG) {
				const int q = e / w, o = e - q * w;
				red[q][o] = fmin(red[q][o], red[q][o + w]);
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		/* rows where some work-item's third lower bound is at most T take every
		 * centroid; T kept apart from the tree, which ex_label reuses */
#pragma unroll
		for (int q = 0; q < ER; q++)
			if (q < nr && l3[q] <= (float)red[q][0])
				wide[q] = 1;
		if (tid < ER)
			tl[tid] = (float)red[tid][0];
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int q = 0; q < nr; q++) {
			/* row q's candidates, picked out of the registers without indexing them
			 * by a variable (that would put the arrays in memory) */
			float c1 = l1[0], c2 = l2[0];
			int i1 = j1[0], i2 = j2[0];
#pragma unroll
			for (int p = 1; p < ER; p++)
				if (p == q) {
					c1 = l1[p];
					c2 = l2[p];
					i1 = j1[p];
					i2 = j2[p];
				}
			const float T = tl[q];
			__global const float *x = X + (long)list[f0 + q] * DIM;
			real best = INFINITY;
			int bj = INT_MAX;
			/* one work-item's candidate: its centroid's row (c64), whose values
			 * share cache lines, not its column (c64T), whose do not */
			if (i1 >= 0 && c1 <= T) {
				best = sqdist(x, c64 + (long)i1 * DIM, 1);
				bj = i1;
			}
			if (i2 >= 0 && c2 <= T) {
				const real s = sqdist(x, c64 + (long)i2 * DIM, 1);
				if (s < best || (s == best && i2 < bj)) {
					best = s;
					bj = i2;
				}
			}
			if (wide[q])	/* every centroid, the columns read together */
				for (int j = tid; j < k; j += WG) {
					const real s = sqdist(x, c64T + j, kpad);
					if (s < best || (s == best && j < bj)) {
						best = s;
						bj = j;
					}
				}
			red[q][tid] = best;
			ri[q][tid] = bj;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		/* every row's least, the lowest index among equals: one tree for all rows */
		for (int w = WG / 2; w > 0; w >>= 1) {
			for (int e = tid; e < nr * w; e += WG) {
				const int q = e / w, o = e - q * w;
				const real v = red[q][o + w];
				const int vi = ri[q][o + w];
				if (v < red[q][o] || (v == red[q][o] && vi < ri[q][o])) {
					red[q][o] = v;
					ri[q][o] = vi;
				}
			}
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		if (tid < nr) {
			const long r = list[f0 + tid];
			const int old = labels[row0 + r];
			if (old != ri[tid][0])
				atomic_inc(&si[SI_MOVED]);
			labels[row0 + r] = ri[tid][0];
			atomic_inc(&si[SI_NEXACT]);
		}
		barrier(CLK_LOCAL_MEM_FENCE);	/* before the next rows overwrite the tree */
	}
}
#endif
#else	/* !EX_TWO */
/* Labels the rows `assign' listed in one stage, `real' (x - c)^2 summed over the columns
 * in order (sqdist's arithmetic) for every centroid: without float64 (float32's bound is
 * no narrower than the sums it would check), or for rows too wide for local memory. c64,
 * cT and cnrm are unused. */
#if KM_HAS(KM_K_EXACT)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
exact(__global const float *restrict X, __global const real *restrict c64,
    __global const real *restrict c64T, __global const float *restrict cT,
    __global const float *restrict cnrm, int k, int kpad,
    __global int *restrict labels, long row0, __global const int *restrict list, int slot,
    __global ulong *restrict state)
{
#if EX_FIT >= 1
	__local real xl[ER][DIM];
#endif
	__local real bv[WG];
	__local int bi[WG];
	__global int *si = (__global int *)state;
	const int tid = get_local_id(0);
	const int count = si[slot];	/* the list's length */
	const int ng = get_num_groups(0), per = ex_per(count);

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
		for (int q = 0; q < nr; q++)
			ex_label(bv, bi, best[q], bj[q], f0, q, labels, row0, list, si);
	}
}
#endif
#endif	/* EX_TWO */
