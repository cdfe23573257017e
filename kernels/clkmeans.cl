/* clkmeans.cl: the kernels of clkmeans (Lloyd's k-means), one source for every OpenCL
 * device. kernels/clkmeans_dev.c builds it with -D options chosen per device class;
 * each tunable below has its default, so the file also compiles alone.
 *
 *   assign     rows x centroids distances as a register-blocked GEMM (tiles shared in
 *              local memory on GPUs, read directly on CPUs) fused with the arg-min; rows
 *              whose best and second-best values lie within the expansion's error bound
 *              go to a list for `exact'; with TF32 (NVIDIA, compute capability 8.0 and
 *              later), the GEMM on the tensor cores (mma.sync, inline PTX) and the bound
 *              widened by TF32's rounding
 *   exact      float64 direct distances of the listed rows to every centroid
 *   update     per-cluster sums as 64-bit fixed point (integer atomics: exact, so the
 *              result never depends on the order of the additions) and counts
 *   finalize   new centroids from the sums (float64), their float32 copy for assign,
 *              squared norms and each centroid's squared shift
 *   scalars    one group: total shift, empty clusters, largest centroid norm, inertia
 *   rowdist    each row's float64 squared distance to its centroid, partial sums
 *   kpp        k-means++ (greedy): distances to candidate centroids, partial potentials
 */

#ifndef DIM
#define DIM 2		/* columns of the data */
#endif
#ifndef USE_FP64
#define USE_FP64 1	/* accumulate in double (cl_khr_fp64); 0: float */
#endif
#ifndef HAVE_ATOM64
#define HAVE_ATOM64 1	/* cl_khr_int64_base_atomics; 0: 64-bit sums from 32-bit atomics */
#endif
#ifndef TMT
#define TMT 16		/* assign: work-items of a group along rows */
#endif
#ifndef TNT
#define TNT 8		/* assign: work-items of a group along centroids */
#endif
#ifndef RMV
#define RMV 2		/* assign: float4s of rows a work-item holds */
#endif
#ifndef RNV
#define RNV 2		/* assign: float4s of centroids a work-item holds */
#endif
#ifndef TK
#define TK 16		/* assign: columns a local-memory step holds (4, 8 or 16) */
#endif
#ifndef A_RES
#define A_RES 1		/* assign: keep a group's rows in local memory for all centroid tiles */
#endif
#ifndef DB
#define DB 0		/* assign, with A_RES: two centroid tiles in local memory, one barrier
			   a step instead of two */
#endif
#ifndef LOCAL_TILES
#define LOCAL_TILES 1	/* assign: tiles shared through local memory (GPUs); 0: each work-item
			   reads its rows and the centroids from global memory (CPUs, TNT 1) */
#endif
#ifndef WG
#define WG 256		/* work-items of a group of the other kernels (a power of two) */
#endif
#ifndef RG
#define RG 1024		/* rows a group of rowdist and kpp sums up (a multiple of WG) */
#endif
#ifndef TF32
#define TF32 0		/* assign: products on NVIDIA's TF32 tensor cores (needs LOCAL_TILES,
			   A_RES, no DB, TK 8 or 16) */
#endif

#if USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif
#if HAVE_ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define RM (4 * RMV)			/* rows a work-item holds */
#define RN (4 * RNV)			/* centroids a work-item holds */
#define TM (TMT * RM)			/* rows of a group */
#define TN (TNT * RN)			/* centroids of a tile */
#define NT (TMT * TNT)			/* work-items of an assign group */
#define DPAD ((DIM + TK - 1) / TK * TK)	/* columns padded to whole steps */
#define DSTEPS (DPAD / TK)
#define AST (TM + 4)			/* row stride of the rows in local memory */
#if A_RES
#define AS_SIZE (DPAD * AST)
#else
#define AS_SIZE (TK * AST)
#endif
#if TF32
#define BST (TN + 8)			/* centroid tile row stride: conflict-free fragments */
#else
#define BST TN
#endif
#define BS_SIZE (TK * BST)
#if DB && A_RES
#define NBUF 2
#else
#define NBUF 1
#endif
#if TF32
#define RED_SIZE (3 * (TNT > 4 ? TNT : 4) * TM)	/* TF32 merges the 4 lanes of a quad */
#else
#define RED_SIZE (3 * TNT * TM)
#endif
#define SMEM_SIZE (AS_SIZE + NBUF * BS_SIZE > RED_SIZE ? AS_SIZE + NBUF * BS_SIZE : RED_SIZE)
#define B4 ((TK * TN / 4 + NT - 1) / NT)	/* float4s of a centroid tile a work-item loads */
#define A1 ((TM * TK + NT - 1) / NT)	/* floats of a row chunk a work-item loads */

/* The small state buffer the host reads once an iteration (keep in step with
 * kernels/clkmeans_dev.h): doubles, then ints, then a float. */
#define SD_INERTIA 0
#define SD_SHIFT 1
#define SI_MOVED 4
#define SI_EMPTY 5
#define SI_NLIST 6
#define SI_NEXACT 7
#define SF_CMAX 8

/* Unit roundoff of float and the factor of safety on the error bound. */
#define U32 5.9604644775390625e-8f
#define SAFETY 1.125f
/* TF32's error in x.c, relative to sum |x_i||c_i| <= ||x|| ||c||: operands rounded to
 * nearest TF32 (2^-11 each), float32 sums of DIM products (2^-22 an addition, twice the
 * truncating unit), over 1 - 2^-9 for the rounded operands the norms come from. */
#define TF32_REL ((0x1p-10f + 0x1p-21f + DIM * 0x1p-22f) / (1.0f - 0x1p-9f))

/* ---- assign ---------------------------------------------------------------- */

/* Keeps the smallest and second smallest value and the smallest one's index. */
#define KEEP(b1, b2, i1, v, j)                                  \
	do {                                                    \
		int lt_ = (v) < (b1);                           \
		(b2) = lt_ ? (b1) : fmin((b2), (v));            \
		(i1) = lt_ ? (j) : (i1);                        \
		(b1) = lt_ ? (v) : (b1);                        \
	} while (0)

/* Folds a tile of dot products (rows x RNV float4s of centroids, the v-th starting at
 * column n0 + tx * 4 + v * TNT * 4) into the running minima, columns in increasing
 * order: value ||c||^2 - 2 x.c. */
static inline void
fold(float4 acc[RM][RNV], int n0, int tx, __global const float *cn, float *b1, float *b2,
    int *i1)
{
#pragma unroll
	for (int v = 0; v < RNV; v++) {
		int col = n0 + tx * 4 + v * (TN / RNV);
		float4 c = vload4(0, cn + col);
#pragma unroll
		for (int i = 0; i < RM; i++) {
			float4 d = fma((float4)(-2.0f), acc[i][v], c);
			KEEP(b1[i], b2[i], i1[i], d.x, col);
			KEEP(b1[i], b2[i], i1[i], d.y, col + 1);
			KEEP(b1[i], b2[i], i1[i], d.z, col + 2);
			KEEP(b1[i], b2[i], i1[i], d.w, col + 3);
		}
	}
}

/*
 * The label of batch row r (of nb) from its smallest values m1 (at index mi) and m2,
 * unless they lie within twice the expansion's error bound: then r goes to the list
 * for `exact'. The bound, for float32 rows x and centroids c64 rounded to float c32,
 * fma accumulation over DIM terms, u = 2^-24:
 *   |computed - exact| <= u ((2 DIM + 4) ||x|| ||c|| + 4 ||c||^2) + O(u^2)
 * taken with ||c|| <= cmax and a factor SAFETY, plus a term for float underflow.
 * Returns whether the label changed.
 */
static inline int
finish_row(float m1, float m2, int mi, float xn, float cmax, int r, long row0,
    __global int *labels, __global int *list, __global ulong *state)
{
	float xnorm = sqrt(xn);
	float bound = SAFETY * U32 * ((2 * DIM + 8) * xnorm * cmax + 4.0f * cmax * cmax) +
	    DIM * 1e-36f;
#if TF32
	bound += SAFETY * 2.0f * TF32_REL * xnorm * cmax;	/* the -2 x.c term's */
#endif
	if (!(m2 - m1 > 2.0f * bound)) {
		list[atomic_inc(&((__global int *)state)[SI_NLIST])] = r;
		return 0;
	}
	int changed = labels[row0 + r] != mi;
	labels[row0 + r] = mi;
	return changed;
}

#if LOCAL_TILES
/* The prefetched centroid chunk, from registers into local memory. */
#if TF32
/* x rounded to TF32 (10-bit mantissa, to nearest, ties away), as a float. */
static inline float
tf32_round(float x)
{
	uint r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return as_float(r);
}
#endif

static inline void
store_tile(__local float *Bc, const float4 *pb)
{
#pragma unroll
	for (int q = 0; q < B4; q++) {
		int e = get_local_id(0) + q * NT;
		if (e < TK * TN / 4) {
#if TF32
			/* rows of BST, rounded for the tensor cores */
			float4 v = pb[q];
			v = (float4)(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z),
			    tf32_round(v.w));
			((__local float4 *)(Bc + (e / (TN / 4)) * BST))[e % (TN / 4)] = v;
#else
			((__local float4 *)Bc)[e] = pb[q];
#endif
		}
	}
}

/* One chunk of nd columns from d0 of the group's rows into As (column-major). */
static void
load_rows(__local float *As, __global const float *X, int nb, int r0, int d0, int nd)
{
	for (int e = get_local_id(0); e < TM * nd; e += NT) {
		int lr = e / nd, kk = e - lr * nd;
		int r = r0 + lr, c = d0 + kk;
		As[kk * AST + lr] = r < nb && c < DIM ? X[(long)r * DIM + c] : 0.0f;
	}
}

/* Step s's centroid chunk (TK columns of a tile of TN centroids) into registers. */
static inline void
prefetch_tile(float4 *pb, __global const float4 *cT4, int kpad, int s)
{
	const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
#pragma unroll
	for (int q = 0; q < B4; q++) {
		int e = get_local_id(0) + q * NT;
		if (e < TK * TN / 4)
			pb[q] = cT4[((ds * TK + e / (TN / 4)) * (long)kpad + tile * TN) / 4 +
			    e % (TN / 4)];
	}
}

/* Each row's minima from the `sharers' work-items that hold parts of it (rb1, rb2, ri1:
 * sharer t's at t * TM + row), merged in a fixed order, then finish_row; the group's
 * moved labels added to the state's count. Work-item r takes row r. */
static void
merge_rows(__local float *rb1, __local float *rb2, __local int *ri1, int sharers, float xn,
    float cmax, int r0, int nb, long row0, __global int *labels, __global int *list,
    __global ulong *state, __local int *moved_l)
{
	const int tid = get_local_id(0);
	barrier(CLK_LOCAL_MEM_FENCE);
	int mine = 0;
	if (tid < TM && r0 + tid < nb) {
		float m1 = rb1[tid], m2 = rb2[tid];
		int mi = ri1[tid];
		for (int t = 1; t < sharers; t++) {
			float o1 = rb1[t * TM + tid], o2 = rb2[t * TM + tid];
			int oi = ri1[t * TM + tid];
			if (o1 < m1 || (o1 == m1 && oi < mi)) {
				m2 = fmin(m1, o2);
				m1 = o1;
				mi = oi;
			} else {
				m2 = fmin(m2, o1);
			}
		}
		mine = finish_row(m1, m2, mi, xn, cmax, r0 + tid, row0, labels, list, state);
	}
	if (mine)
		atomic_inc(moved_l);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (tid == 0 && *moved_l)
		atomic_add(&((__global int *)state)[SI_MOVED], *moved_l);
}
#endif

/*
 * Labels rows [0, nb) of this batch (see finish_row); `moved' counts the labels that
 * changed. Distances are ||c||^2 - 2 x.c (||x||^2 is the same for every centroid of a
 * row), computed like a GEMM with register blocks of RM rows x RN centroids.
 * LOCAL_TILES (GPUs): a group of TMT x TNT work-items shares its TM rows and each
 * centroid tile through local memory, the next tile prefetched into registers; the
 * TNT work-items of a row merge their minima at the end.
 * Otherwise (CPUs): each work-item takes RM rows against every centroid, from global
 * memory (cached), without barriers.
 */
#if !TF32
__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
assign(__global const float *restrict X, int nb, __global const float *restrict cT,
    __global const float *restrict cn, int kpad, __global int *restrict labels, long row0,
    __global int *restrict list, __global ulong *restrict state)
{
	const float cmax = ((__global const float *)state)[SF_CMAX];
	float4 acc[RM][RNV];	/* rows x centroids, four centroids a vector */
	float b1[RM], b2[RM];
	int i1[RM];

#pragma unroll
	for (int i = 0; i < RM; i++) {
		b1[i] = INFINITY;
		b2[i] = INFINITY;
		i1[i] = 0;
	}
#if LOCAL_TILES
	__local float4 smem4[(SMEM_SIZE + 3) / 4];	/* float4: 16-byte aligned */
	__local int moved_l;
	__local float *smem = (__local float *)smem4;
	__local float *As = smem, *Bs = smem + AS_SIZE;
	const int tid = get_local_id(0), tx = tid % TNT, ty = tid / TNT;
	const int r0 = get_group_id(0) * TM;
	const int nsteps = kpad / TN * DSTEPS;
	__global const float4 *cT4 = (__global const float4 *)cT;
	float xn = 0.0f;	/* squared norm of row tid (tid < TM) */
	float4 pb[B4];

	if (tid == 0)
		moved_l = 0;
#if A_RES
	load_rows(As, X, nb, r0, 0, DPAD);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (tid < TM)
		for (int kk = 0; kk < DPAD; kk++)
			xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
#endif
	prefetch_tile(pb, cT4, kpad, 0);	/* the first centroid chunk */
	for (int s = 0; s < nsteps; s++) {
		const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
#if NBUF == 2
		/* Step s reads buffer s & 1 and fills the other, which every work-item
		 * finished reading before the barrier that ended step s - 1. */
		__local float *Bc = Bs + (s & 1) * BS_SIZE;
		if (s == 0) {
			store_tile(Bc, pb);
			barrier(CLK_LOCAL_MEM_FENCE);
		}
#else
		__local float *Bc = Bs;
		barrier(CLK_LOCAL_MEM_FENCE);
		store_tile(Bc, pb);
#if !A_RES
		load_rows(As, X, nb, r0, ds * TK, TK);
#endif
		barrier(CLK_LOCAL_MEM_FENCE);
#if !A_RES
		if (tile == 0 && tid < TM)
			for (int kk = 0; kk < TK; kk++)
				xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
#endif
#endif
		if (s + 1 < nsteps)
			prefetch_tile(pb, cT4, kpad, s + 1);
		if (ds == 0) {
#pragma unroll
			for (int i = 0; i < RM; i++)
#pragma unroll
				for (int v = 0; v < RNV; v++)
					acc[i][v] = (float4)(0.0f);
		}
#if A_RES
		__local const float *Ak = As + ds * TK * AST;
#else
		__local const float *Ak = As;
#endif
#pragma unroll
		for (int kk = 0; kk < TK; kk++) {
			float a[RM];
			float4 b[RNV];
			/* float4 pointers: 16-byte aligned, so 128-bit local loads. */
			__local const float4 *a4 = (__local const float4 *)(Ak + kk * AST);
			__local const float4 *b4 = (__local const float4 *)(Bc + kk * TN);
#pragma unroll
			for (int v = 0; v < RMV; v++) {
				float4 t = a4[ty + v * (TM / RMV / 4)];
				a[4 * v] = t.x;
				a[4 * v + 1] = t.y;
				a[4 * v + 2] = t.z;
				a[4 * v + 3] = t.w;
			}
#pragma unroll
			for (int v = 0; v < RNV; v++)
				b[v] = b4[tx + v * (TN / RNV / 4)];
#pragma unroll
			for (int i = 0; i < RM; i++)
#pragma unroll
				for (int v = 0; v < RNV; v++)
					acc[i][v] = fma((float4)(a[i]), b[v], acc[i][v]);
		}
#if NBUF == 2
		if (s + 1 < nsteps)
			store_tile(Bs + ((s + 1) & 1) * BS_SIZE, pb);
		barrier(CLK_LOCAL_MEM_FENCE);
#endif
		if (ds == DSTEPS - 1)
			fold(acc, tile * TN, tx, cn, b1, b2, i1);
	}

	/* Merge the TNT work-items that share each row, in a fixed order. */
	__local float *rb1 = smem, *rb2 = smem + TNT * TM;
	__local int *ri1 = (__local int *)(smem + 2 * TNT * TM);
	barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
	for (int i = 0; i < RM; i++) {
		int lr = ty * 4 + (i / 4) * (TM / RMV) + i % 4;
		rb1[tx * TM + lr] = b1[i];
		rb2[tx * TM + lr] = b2[i];
		ri1[tx * TM + lr] = i1[i];
	}
	merge_rows(rb1, rb2, ri1, TNT, xn, cmax, r0, nb, row0, labels, list, state, &moved_l);
#else
	/* TNT is 1: RM consecutive rows a work-item, RN consecutive centroids a tile. */
	const int rb = get_group_id(0) * TM + get_local_id(0) * RM;
	float xn[RM];
	__global const float *x[RM];
	int moved = 0;

#pragma unroll
	for (int i = 0; i < RM; i++) {
		x[i] = X + (long)min(rb + i, nb - 1) * DIM;
		xn[i] = 0.0f;
		for (int c = 0; c < DIM; c++)
			xn[i] = fma(x[i][c], x[i][c], xn[i]);
	}
	for (int n0 = 0; n0 < kpad; n0 += TN) {
#pragma unroll
		for (int i = 0; i < RM; i++)
#pragma unroll
			for (int v = 0; v < RNV; v++)
				acc[i][v] = (float4)(0.0f);
		for (int c = 0; c < DIM; c++) {
			float4 b[RNV];
			__global const float *bc = cT + (long)c * kpad + n0;
#pragma unroll
			for (int v = 0; v < RNV; v++)
				b[v] = vload4(v, bc);
#pragma unroll
			for (int i = 0; i < RM; i++) {
				float4 a = (float4)(x[i][c]);
#pragma unroll
				for (int v = 0; v < RNV; v++)
					acc[i][v] = fma(a, b[v], acc[i][v]);
			}
		}
		fold(acc, n0, 0, cn, b1, b2, i1);
	}
#pragma unroll
	for (int i = 0; i < RM; i++)
		if (rb + i < nb)
			moved += finish_row(b1[i], b2[i], i1[i], xn[i], cmax, rb + i, row0, labels,
			    list, state);
	if (moved)
		atomic_add(&((__global int *)state)[SI_MOVED], moved);
#endif
}
#else	/* TF32 */

/*
 * assign with the products on the tensor cores: the same contract, tiles, local memory
 * and merge as above, but each warp takes TF_MT tiles of 16 rows of the group against
 * the whole centroid tile (TF_NT tiles of 8) with mma.sync.m16n8k8 on TF32 operands,
 * rounded on their way into local memory; a lane holds rows g and g + 8 of each of its
 * tiles and columns 2t, 2t + 1 of each tile of 8 (g = lane / 4, t = lane % 4, PTX's
 * fragment layout), so the four lanes of a quad share a row and merge as the TNT
 * work-items do above. finish_row's bound takes TF32's rounding (TF32_REL).
 */
#define TF_WARPS (NT / 32)
#define TF_MT (TM / (TF_WARPS * 16))	/* tiles of 16 rows a warp */
#define TF_NT (TN / 8)			/* tiles of 8 centroids a warp: the whole tile */
#if !LOCAL_TILES || !A_RES || DB || TK % 8 != 0 || NT % 32 != 0 || \
    TM % (TF_WARPS * 16) != 0 || TN % 8 != 0 || TM > NT
#error "TF32 assign: local tiles, resident rows, no DB, TK 8 or 16, whole warps, 16 rows a warp's tile"
#endif

/* D = A B + D on one 16 x 8 tile, k = 8: d float[4], a uint[4], b0 and b1 uint. */
#define MMA_TF32(d, a, b0, b1)                                                        \
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "           \
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"      \
	    : "=f"((d)[0]), "=f"((d)[1]), "=f"((d)[2]), "=f"((d)[3])                   \
	    : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1),    \
	      "f"((d)[0]), "f"((d)[1]), "f"((d)[2]), "f"((d)[3]))

__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
assign(__global const float *restrict X, int nb, __global const float *restrict cT,
    __global const float *restrict cn, int kpad, __global int *restrict labels, long row0,
    __global int *restrict list, __global ulong *restrict state)
{
	const float cmax = ((__global const float *)state)[SF_CMAX];
	__local float4 smem4[(SMEM_SIZE + 3) / 4];	/* float4: 16-byte aligned */
	__local int moved_l;
	__local float *smem = (__local float *)smem4;
	__local float *As = smem, *Bs = smem + AS_SIZE;
	const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
	const int g = lane / 4, t = lane % 4;
	const int r0 = get_group_id(0) * TM, wr0 = warp * TF_MT * 16;
	const int nsteps = kpad / TN * DSTEPS;
	__global const float4 *cT4 = (__global const float4 *)cT;
	float xn = 0.0f;	/* squared norm of row tid (tid < TM), before rounding */
	float4 pb[B4];
	float acc[TF_MT][TF_NT][4];
	float b1[TF_MT][2], b2[TF_MT][2];
	int i1[TF_MT][2];

#pragma unroll
	for (int i = 0; i < TF_MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			b1[i][h] = INFINITY;
			b2[i][h] = INFINITY;
			i1[i][h] = 0;
		}
	if (tid == 0)
		moved_l = 0;
	load_rows(As, X, nb, r0, 0, DPAD);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (tid < TM)
		for (int kk = 0; kk < DPAD; kk++)
			xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int e = tid; e < DPAD * TM; e += NT) {
		int kk = e / TM, lr = e - kk * TM;
		As[kk * AST + lr] = tf32_round(As[kk * AST + lr]);
	}
	prefetch_tile(pb, cT4, kpad, 0);	/* the first centroid chunk */
	for (int s = 0; s < nsteps; s++) {
		const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
		__local float *Bc = Bs;
		barrier(CLK_LOCAL_MEM_FENCE);	/* (also: the rows' rounding is done) */
		store_tile(Bc, pb);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (s + 1 < nsteps)
			prefetch_tile(pb, cT4, kpad, s + 1);
		if (ds == 0) {
#pragma unroll
			for (int i = 0; i < TF_MT; i++)
#pragma unroll
				for (int j = 0; j < TF_NT; j++)
#pragma unroll
					for (int q = 0; q < 4; q++)
						acc[i][j][q] = 0.0f;
		}
		__local const float *Ak = As + ds * TK * AST;
#pragma unroll
		for (int kq = 0; kq < TK; kq += 8) {
			uint a[TF_MT][4];
#pragma unroll
			for (int i = 0; i < TF_MT; i++) {
				/* rows g, g + 8 of the tile; columns t, t + 4 of the step */
				__local const float *ap = Ak + (kq + t) * AST + wr0 + i * 16 + g;
				a[i][0] = as_uint(ap[0]);
				a[i][1] = as_uint(ap[8]);
				a[i][2] = as_uint(ap[4 * AST]);
				a[i][3] = as_uint(ap[4 * AST + 8]);
			}
#pragma unroll
			for (int j = 0; j < TF_NT; j++) {
				__local const float *bp = Bc + (kq + t) * BST + j * 8 + g;
				const uint bb0 = as_uint(bp[0]), bb1 = as_uint(bp[4 * BST]);
#pragma unroll
				for (int i = 0; i < TF_MT; i++)
					MMA_TF32(acc[i][j], a[i], bb0, bb1);
			}
		}
		if (ds == DSTEPS - 1) {
			/* columns in increasing order: tiles of 8, then 2t, 2t + 1 */
#pragma unroll
			for (int j = 0; j < TF_NT; j++)
#pragma unroll
				for (int e = 0; e < 2; e++) {
					const int col = tile * TN + j * 8 + 2 * t + e;
					const float c = cn[col];
#pragma unroll
					for (int i = 0; i < TF_MT; i++)
#pragma unroll
						for (int h = 0; h < 2; h++) {
							float d = fma(-2.0f, acc[i][j][2 * h + e], c);
							KEEP(b1[i][h], b2[i][h], i1[i][h], d, col);
						}
				}
		}
	}

	/* Merge the four lanes (t) that share each row, in a fixed order. */
	__local float *rb1 = smem, *rb2 = smem + 4 * TM;
	__local int *ri1 = (__local int *)(smem + 8 * TM);
	barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
	for (int i = 0; i < TF_MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int lr = wr0 + i * 16 + h * 8 + g;
			rb1[t * TM + lr] = b1[i][h];
			rb2[t * TM + lr] = b2[i][h];
			ri1[t * TM + lr] = i1[i][h];
		}
	merge_rows(rb1, rb2, ri1, 4, xn, cmax, r0, nb, row0, labels, list, state, &moved_l);
}
#endif	/* TF32 */

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

/* ---- update ----------------------------------------------------------------- */

/* sums[l][i] += round(x[i] * 2^p_i) as 64-bit integers; counts[l] += 1, also 64-bit:
 * one device streaming billions of rows can put more than 2^32 in one cluster. */
__kernel void
update(__global const float *restrict X, long nelem, __global const int *restrict labels,
    long row0, __global const float *restrict fscale, __global ulong *restrict sums,
    __global ulong *restrict counts)
{
	for (long e = get_global_id(0); e < nelem; e += get_global_size(0)) {
		long r = e / DIM;
		int i = (int)(e - r * DIM);
		int l = labels[row0 + r];
		long q = convert_long_rte(X[e] * fscale[i]);
		__global ulong *p = sums + (long)l * DIM + i;
#if HAVE_ATOM64
		atom_add((volatile __global ulong *)p, (ulong)q);
#else
		/* Two 32-bit halves, the carry of the low one added to the high one: the
		 * total is exact modulo 2^64 whatever the order. */
		__global uint *p32 = (__global uint *)p;
		uint lo = (uint)q, hi = (uint)((ulong)q >> 32);
		uint old = atomic_add(p32, lo);
		hi += (uint)(old + lo < old);
		if (hi)
			atomic_add(p32 + 1, hi);
#endif
		if (i == 0) {
#if HAVE_ATOM64
			atom_inc((volatile __global ulong *)&counts[l]);
#else
			/* the low half's wrap carries one into the high half, once */
			__global uint *c32 = (__global uint *)&counts[l];
			if (atomic_inc(c32) == 0xffffffffu)
				atomic_inc(c32 + 1);
#endif
		}
	}
}

/* ---- finalize --------------------------------------------------------------- */

/*
 * One work-item a centroid j < kpad. mode 1: c = sum * 2^-p / count (an empty cluster
 * keeps its centroid); mode 0: c = the centroid given in c64old. Writes the float64
 * centroids row-major (c64) and column-major (c64T), the float32 ones column-major and
 * padded (cT), squared norms (cn: +inf past k, so padding never wins), norms, squared
 * shifts and whether the cluster is empty.
 */
__kernel void
finalize(int mode, int k, int kpad, __global const ulong *restrict sums,
    __global const ulong *restrict counts, __global const real *restrict iscale,
    __global const real *c64old, __global real *c64, __global real *restrict c64T,
    __global float *restrict cT, __global float *restrict cn, __global float *restrict cnrm,
    __global real *restrict shift, __global int *restrict empty)
{
	const int j = get_global_id(0);
	if (j >= kpad)
		return;
	if (j >= k) {
		for (int i = 0; i < DPAD; i++)
			cT[(long)i * kpad + j] = 0.0f;
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
	}
	for (int i = DIM; i < DPAD; i++)
		cT[(long)i * kpad + j] = 0.0f;
	cn[j] = (float)nrm;
	cnrm[j] = (float)sqrt(nrm);
	shift[j] = sh;
	empty[j] = mode && cnt == 0;
}

/* ---- scalars ---------------------------------------------------------------- */

/* One group of WG: the total squared shift, the number of empty clusters, the largest
 * centroid norm (for assign's bound) and, when npart > 0, the inertia from rowdist's
 * partial sums; each summed in a fixed order. */
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
