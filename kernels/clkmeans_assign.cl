/* clkmeans_assign.cl: assign. A part of clkmeans's OpenCL program,
 * after those clkmeans_defs.cl lists before it. */

/* ---- assign ---------------------------------------------------------------- */

/* Keeps the smallest and second smallest value and the smallest one's index. */
#define KEEP(b1, b2, i1, v, j)                                  \
	do {                                                    \
		int lt_ = (v) < (b1);                           \
		(b2) = lt_ ? (b1) : fmin((b2), (v));            \
		(i1) = lt_ ? (j) : (i1);                        \
		(b1) = lt_ ? (v) : (b1);                        \
	} while (0)

/* No minima yet for RM rows. */
static inline void
minima_reset(float *b1, float *b2, int *i1)
{
#pragma unroll
	for (int i = 0; i < RM; i++) {
		b1[i] = INFINITY;
		b2[i] = INFINITY;
		i1[i] = 0;
	}
}

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
 * The label of batch row r from its smallest values m1 (at index mi) and m2, unless
 * they lie within twice the expansion's error bound: then r goes to the list (its count
 * at the state's int `slot') for the next, closer look. The bound, for float32 rows x
 * and centroids c64 rounded to float c32, fma accumulation over DIM terms, u = 2^-24:
 *   |computed - exact| <= u ((2 DIM + 4) ||x|| ||c|| + 4 ||c||^2) + O(u^2)
 * taken with ||c|| <= cmax and a factor SAFETY, plus a term for float underflow; tc:
 * the products came from the tensor cores, so TF32's rounding too. Returns whether the
 * label changed.
 */
static inline int
finish_row(float m1, float m2, int mi, float xn, float cmax, int r, long row0,
    __global int *labels, __global int *list, int slot, int tc, __global ulong *state)
{
	float xnorm = sqrt(xn);
	float bound = SAFETY * U32 * ((2 * DIM + 8) * xnorm * cmax + 4.0f * cmax * cmax) +
	    DIM * 1e-36f;
	if (tc)
		bound += SAFETY * 2.0f * TF32_REL * xnorm * cmax;	/* the -2 x.c term's */
	if (!(m2 - m1 > 2.0f * bound)) {
		list[atomic_inc(&((__global int *)state)[slot])] = r;
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
store_tile(__local float *Bc, const float4 *pb, int tc)
{
#pragma unroll
	for (int q = 0; q < B4; q++) {
		int e = get_local_id(0) + q * NT;
		if (e >= TK * TN / 4)
			continue;
#if TF32
		if (tc) {
			/* rows of BST, rounded for the tensor cores */
			float4 v = pb[q];
			v = (float4)(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z),
			    tf32_round(v.w));
			((__local float4 *)(Bc + (e / (TN / 4)) * BST))[e % (TN / 4)] = v;
			continue;
		}
#endif
		((__local float4 *)Bc)[e] = pb[q];
	}
}

/* One chunk of nd columns from d0 of the group's rows into As (column-major); with
 * `in', batch row in[r] for the group's r-th. */
static void
load_rows(__local float *As, __global const float *X, int nb, int r0, int d0, int nd,
    __global const int *in)
{
	for (int e = get_local_id(0); e < TM * nd; e += NT) {
		int lr = e / nd, kk = e - lr * nd;
		int r = r0 + lr, c = d0 + kk;
		As[kk * AST + lr] = r < nb && c < DIM ?
		    X[(long)(in ? in[r] : r) * DIM + c] : 0.0f;
	}
}

/* Where each of a work-item's float4s of a centroid chunk lies from the chunk's start
 * (kp4: a centroid column's float4s, kpad / 4). */
static inline void
chunk_offsets(long *off, long kp4)
{
#pragma unroll
	for (int q = 0; q < B4; q++) {
		int e = get_local_id(0) + q * NT;
		off[q] = (e / (TN / 4)) * kp4 + e % (TN / 4);
	}
}

/* Step s's centroid chunk (TK columns of a tile of TN centroids) into registers. */
static inline void
prefetch_tile(float4 *pb, __global const float4 *cT4, long kp4, const long *off, int s)
{
	const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
	__global const float4 *p = cT4 + ds * TK * kp4 + tile * (TN / 4);
#pragma unroll
	for (int q = 0; q < B4; q++)
		if (get_local_id(0) + q * NT < TK * TN / 4)
			pb[q] = p[off[q]];
}

/* Each row's minima from the `sharers' work-items that hold parts of it (rb1, rb2, ri1:
 * sharer t's at t * TM + row), merged in a fixed order, then finish_row; the group's
 * moved labels added to the state's count. Work-item r takes row r. */
static void
merge_rows(__local float *rb1, __local float *rb2, __local int *ri1, int sharers, float xn,
    float cmax, int r0, int nb, long row0, __global int *labels, __global int *list,
    int slot, int tc, __global const int *in, __global ulong *state, __local int *moved_l)
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
		const int r = in ? in[r0 + tid] : r0 + tid;
		mine = finish_row(m1, m2, mi, xn, cmax, r, row0, labels, list, slot, tc, state);
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
 *
 * With TF32 this kernel is assign_f32, the float32 recheck of the rows the tensor cores'
 * assign (below) could not decide: rows in[0, count), count the state's SI_NLIST (nb only
 * sizes the launch), those still near a tie to `list' with their count at SI_NLIST2, for
 * `exact'. Its bound is float32's, some 2^13 times narrower than TF32's, so of the
 * rows TF32 leaves (5% of the benchmark's in its first iterations) float64 sees a few
 * hundred, and at the float32 GEMM's rate rather than exact's. `in' is unused otherwise.
 */
#if TF32
#define F32_ASSIGN assign_f32
#define RECHECK 1
#else
#define F32_ASSIGN assign
#define RECHECK 0
#endif
#if KM_HAS(TF32 ? KM_K_RECHECK : KM_K_ASSIGN)
__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
F32_ASSIGN(__global const float *restrict X, int nb, __global const float *restrict cT,
    __global const float *restrict cn, int kpad, __global int *restrict labels, long row0,
    __global int *restrict list, __global ulong *restrict state,
    __global const int *restrict in)
{
	const float cmax = ((__global const float *)state)[SF_CMAX];
	__global const int *gin = RECHECK ? in : 0;	/* rows by the list, or direct */
	const int slot = RECHECK ? SI_NLIST2 : SI_NLIST;
#if RECHECK
	nb = ((__global const int *)state)[SI_NLIST];
#endif
	float4 acc[RM][RNV];	/* rows x centroids, four centroids a vector */
	float b1[RM], b2[RM];
	int i1[RM];

#if LOCAL_TILES
	__local float4 smem4[(SMEM_SIZE + 3) / 4];	/* float4: 16-byte aligned */
	__local int moved_l;
	__local float *smem = (__local float *)smem4;
	__local float *As = smem, *Bs = smem + AS_SIZE;
	const int tid = get_local_id(0), tx = tid % TNT, ty = tid / TNT;
	const int nsteps = kpad / TN * DSTEPS;
	__global const float4 *cT4 = (__global const float4 *)cT;
	float4 pb[B4];
	const long kp4 = kpad / 4;	/* kpad: a multiple of TN */
	long off[B4];

	chunk_offsets(off, kp4);
	/* groups take the row tiles in turn: one each, unless (a recheck) the launch is
	 * smaller than the list */
	for (int r0 = get_group_id(0) * TM; r0 < nb; r0 += get_num_groups(0) * TM) {
		float xn = 0.0f;	/* squared norm of row tid (tid < TM) */
		minima_reset(b1, b2, i1);
		if (tid == 0)
			moved_l = 0;
#if A_RES
		load_rows(As, X, nb, r0, 0, DPAD, gin);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (tid < TM)
			for (int kk = 0; kk < DPAD; kk++)
				xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
#endif
		prefetch_tile(pb, cT4, kp4, off, 0);	/* the first centroid chunk */
		for (int s = 0; s < nsteps; s++) {
			const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
#if NBUF == 2
			/* Step s reads buffer s & 1 and fills the other, which every work-item
			 * finished reading before the barrier that ended step s - 1. */
			__local float *Bc = Bs + (s & 1) * BS_SIZE;
			if (s == 0) {
				store_tile(Bc, pb, 0);
				barrier(CLK_LOCAL_MEM_FENCE);
			}
#else
			__local float *Bc = Bs;
			barrier(CLK_LOCAL_MEM_FENCE);
			store_tile(Bc, pb, 0);
#if !A_RES
			load_rows(As, X, nb, r0, ds * TK, TK, gin);
#endif
			barrier(CLK_LOCAL_MEM_FENCE);
#if !A_RES
			if (tile == 0 && tid < TM)
				for (int kk = 0; kk < TK; kk++)
					xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
#endif
#endif
			if (s + 1 < nsteps)
				prefetch_tile(pb, cT4, kp4, off, s + 1);
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
				store_tile(Bs + ((s + 1) & 1) * BS_SIZE, pb, 0);
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
		merge_rows(rb1, rb2, ri1, TNT, xn, cmax, r0, nb, row0, labels, list, slot, 0, gin,
		    state, &moved_l);
	}
#else
	/* TNT is 1: RM consecutive rows a work-item, RN consecutive centroids a tile. */
	minima_reset(b1, b2, i1);
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
			    list, slot, 0, state);
	if (moved)
		atomic_add(&((__global int *)state)[SI_MOVED], moved);
#endif
}
#endif

#if TF32

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
#if !LOCAL_TILES || !A_RES || TK % 8 != 0 || NT % 32 != 0 || \
    TM % (TF_WARPS * 16) != 0 || TN % 8 != 0 || TM > NT
#error "TF32 assign: local tiles, resident rows, TK 8 or 16, whole warps, 16 rows a warp's tile"
#endif

#if NBUF == 2
/* Step s's centroid chunk copied straight into local memory (cp.async, 16 bytes a
 * work-item at a time, no registers on the way), rows of BST as store_tile lays them;
 * cT is the TF32-rounded copy (cTt), so nothing is left to round. The copy is one
 * commit group. A __local pointer converted to an integer is its .shared address
 * (clmatmul.cl says why). */
static inline void
copy_tile(__local float *Bc, __global const float4 *cT4, long kp4, const long *off, int s)
{
	const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
	__global const float4 *p = cT4 + ds * TK * kp4 + tile * (TN / 4);
#pragma unroll
	for (int q = 0; q < B4; q++) {
		const int e = get_local_id(0) + q * NT;
		if (e < TK * TN / 4) {
			__local float *dst = Bc + (e / (TN / 4)) * BST + e % (TN / 4) * 4;
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
			    :: "r"((uint)(size_t)dst), "l"(p + off[q]) : "memory");
		}
	}
	asm volatile("cp.async.commit_group;" ::: "memory");
}
#endif

/* D = A B + D on one 16 x 8 tile, k = 8: d float[4], a uint[4], b0 and b1 uint. */
#define MMA_TF32(d, a, b0, b1)                                                        \
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "           \
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"      \
	    : "=f"((d)[0]), "=f"((d)[1]), "=f"((d)[2]), "=f"((d)[3])                   \
	    : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1),    \
	      "f"((d)[0]), "f"((d)[1]), "f"((d)[2]), "f"((d)[3]))

/* A lane's sums of a centroid tile, zero. */
static inline void
acc_zero(float acc[TF_MT][TF_NT][4])
{
#pragma unroll
	for (int i = 0; i < TF_MT; i++)
#pragma unroll
		for (int j = 0; j < TF_NT; j++)
#pragma unroll
			for (int q = 0; q < 4; q++)
				acc[i][j][q] = 0.0f;
}

/* Folds a centroid tile's products (acc: the lane's TF_MT x TF_NT fragments) into the
 * lane's running minima, columns in increasing order: tiles of 8, then 2t, 2t + 1;
 * value ||c||^2 - 2 x.c. */
static inline void
fold_tf32(float acc[TF_MT][TF_NT][4], int tile, int t, __global const float *cn,
    float b1[TF_MT][2], float b2[TF_MT][2], int i1[TF_MT][2])
{
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

#if A_REG
#if NT % (TN / 4) != 0 || (DPAD * TN / 4) % NT != 0
#error "A_REG: a whole centroid tile must be whole rounds of 16-byte copies"
#endif
/* Centroid tile `tile', all DPAD columns, straight into local memory (cp.async, 16 bytes
 * a work-item at a time, one commit group), rows of BST as the fragments read them;
 * cT is the TF32-rounded copy (cTt). */
static inline void
copy_whole_tile(__local float *Bc, __global const float4 *cT4, long kp4, int tile)
{
	const int tid = get_local_id(0), kr = NT / (TN / 4);	/* columns a round */
	__global const float4 *p = cT4 + (tid / (TN / 4)) * kp4 + tile * (TN / 4) +
	    tid % (TN / 4);
	__local float *dst = Bc + (tid / (TN / 4)) * BST + tid % (TN / 4) * 4;
#pragma unroll
	for (int q = 0; q < DPAD * TN / 4 / NT; q++)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
		    :: "r"((uint)(size_t)(dst + q * kr * BST)), "l"(p + q * kr * kp4)
		    : "memory");
	asm volatile("cp.async.commit_group;" ::: "memory");
}
#endif

#if KM_HAS(KM_K_ASSIGN)
__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
assign(__global const float *restrict X, int nb, __global const float *restrict cT,
    __global const float *restrict cn, int kpad, __global int *restrict labels, long row0,
    __global int *restrict list, __global ulong *restrict state)
{
	const float cmax = ((__global const float *)state)[SF_CMAX];
	__local float4 smem4[(TF_SMEM_SIZE + 3) / 4];	/* float4: 16-byte aligned */
	__local int moved_l;
	__local float *smem = (__local float *)smem4;
	__local float *As = smem, *Bs = smem + AS_SIZE;
	const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
	const int g = lane / 4, t = lane % 4;
	const int r0 = get_group_id(0) * TM, wr0 = warp * TF_MT * 16;
	__global const float4 *cT4 = (__global const float4 *)cT;
	float xn = 0.0f;	/* squared norm of row tid (tid < TM), before rounding */
	const long kp4 = kpad / 4;	/* kpad: a multiple of TN */
#if !A_REG
	const int nsteps = kpad / TN * DSTEPS;
#if NBUF != 2
	float4 pb[B4];	/* the next centroid chunk, on its way to local memory */
#endif
	long off[B4];
#endif
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
	load_rows(As, X, nb, r0, 0, DPAD, 0);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (tid < TM)
		for (int kk = 0; kk < DPAD; kk++)
			xn = fma(As[kk * AST + tid], As[kk * AST + tid], xn);
#if A_REG
	/* The lane's fragments of its rows for every step of 8 columns, rounded to TF32,
	 * held for the whole pass: each centroid fragment read from local memory is then
	 * the only load an MMA waits on. The rows' local memory then takes two whole
	 * centroid tiles, one barrier a tile. */
	uint a[DPAD / 8][TF_MT][4];
#pragma unroll
	for (int kq = 0; kq < DPAD / 8; kq++)
#pragma unroll
		for (int i = 0; i < TF_MT; i++) {
			__local const float *ap = As + (kq * 8 + t) * AST + wr0 + i * 16 + g;
			a[kq][i][0] = as_uint(tf32_round(ap[0]));
			a[kq][i][1] = as_uint(tf32_round(ap[8]));
			a[kq][i][2] = as_uint(tf32_round(ap[4 * AST]));
			a[kq][i][3] = as_uint(tf32_round(ap[4 * AST + 8]));
		}
	barrier(CLK_LOCAL_MEM_FENCE);	/* every fragment and norm read: As is free */
	const int ntiles = kpad / TN;
	copy_whole_tile(smem, cT4, kp4, 0);
	for (int tile = 0; tile < ntiles; tile++) {
		/* tile reads buffer tile & 1 and copies tile + 1 into the other, which every
		 * work-item finished reading before this barrier */
		__local const float *Bc = smem + (tile & 1) * BT_SIZE;
		asm volatile("cp.async.wait_group 0;" ::: "memory");
		barrier(CLK_LOCAL_MEM_FENCE);
		if (tile + 1 < ntiles)
			copy_whole_tile(smem + ((tile + 1) & 1) * BT_SIZE, cT4, kp4, tile + 1);
		acc_zero(acc);
#pragma unroll
		for (int kq = 0; kq < DPAD / 8; kq++)
#pragma unroll
			for (int j = 0; j < TF_NT; j++) {
				__local const float *bp = Bc + (kq * 8 + t) * BST + j * 8 + g;
				const uint bb0 = as_uint(bp[0]), bb1 = as_uint(bp[4 * BST]);
#pragma unroll
				for (int i = 0; i < TF_MT; i++)
					MMA_TF32(acc[i][j], a[kq][i], bb0, bb1);
			}
		fold_tf32(acc, tile, t, cn, b1, b2, i1);
	}
#else
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int e = tid; e < DPAD * TM; e += NT) {
		int kk = e / TM, lr = e - kk * TM;
		As[kk * AST + lr] = tf32_round(As[kk * AST + lr]);
	}
	chunk_offsets(off, kp4);
#if NBUF == 2
	copy_tile(Bs, cT4, kp4, off, 0);	/* the first centroid chunk */
#else
	prefetch_tile(pb, cT4, kp4, off, 0);	/* the first centroid chunk */
#endif
	for (int s = 0; s < nsteps; s++) {
		const int tile = s / DSTEPS, ds = s - tile * DSTEPS;
#if NBUF == 2
		/* step s reads buffer s & 1 and copies chunk s + 1 into the other, which
		 * every work-item finished reading in step s - 1, before this barrier: one
		 * barrier a step, the copy under step s's products */
		__local float *Bc = Bs + (s & 1) * BS_SIZE;
		asm volatile("cp.async.wait_group 0;" ::: "memory");
		barrier(CLK_LOCAL_MEM_FENCE);	/* (also: the rows' rounding is done) */
		if (s + 1 < nsteps)
			copy_tile(Bs + ((s + 1) & 1) * BS_SIZE, cT4, kp4, off, s + 1);
#else
		__local float *Bc = Bs;
		barrier(CLK_LOCAL_MEM_FENCE);	/* (also: the rows' rounding is done) */
		store_tile(Bc, pb, 1);
		barrier(CLK_LOCAL_MEM_FENCE);
		if (s + 1 < nsteps)
			prefetch_tile(pb, cT4, kp4, off, s + 1);
#endif
		if (ds == 0)
			acc_zero(acc);
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
		if (ds == DSTEPS - 1)
			fold_tf32(acc, tile, t, cn, b1, b2, i1);
	}
#endif	/* A_REG */

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
	merge_rows(rb1, rb2, ri1, 4, xn, cmax, r0, nb, row0, labels, list, SI_NLIST, 1, 0, state,
	    &moved_l);
}
#endif
#endif	/* TF32 */

