/* clmatmul.cl: C = alpha * op(A) * op(B) + beta * C for clmatmul(1).
 *
 * One source for GPUs and CPUs (PoCL); the host picks the tunables below per device
 * class and passes them as -D options. Every buffer is padded on the device to whole
 * tiles (zeros outside the user's data), so the kernel runs without edge checks:
 * M % BM == 0, N % BN == 0, K % BK == 0, and every leading dimension is a multiple of
 * the vector widths.
 *
 * A work-group computes a BM x BN tile of C. It stages BK-deep slices of op(A) and
 * op(B) in local memory (k-major, so both are read as vectors), double-buffered: the
 * next slice is loaded from global memory into registers while the current one is
 * multiplied, then stored into the other local buffer, one barrier a slice. Each
 * work-item accumulates a TM x TN block of C in registers, made of TM/VM x TN/VN
 * vector chunks spread BM/(TM/VM) rows and BN/(TN/VN) columns apart, so that the
 * work-items of a warp read neighbouring local addresses and write whole lines of C. */

#ifndef USE_DOUBLE
#define USE_DOUBLE 0	/* 1: float64 throughout (needs cl_khr_fp64) */
#endif
#ifndef TRANS_A
#define TRANS_A 0	/* 1: A is stored K x M (op(A) = A^T) */
#endif
#ifndef TRANS_B
#define TRANS_B 0	/* 1: B is stored N x K */
#endif
#ifndef BM
#define BM 64		/* rows of C a work-group computes */
#endif
#ifndef BN
#define BN 64		/* columns of C a work-group computes */
#endif
#ifndef BK
#define BK 16		/* depth of the slices of A and B staged in local memory */
#endif
#ifndef TM
#define TM 4		/* rows of C a work-item accumulates */
#endif
#ifndef TN
#define TN 4		/* columns of C a work-item accumulates */
#endif
#ifndef VM
#define VM 4		/* vector width of a work-item's row chunks (divides TM) */
#endif
#ifndef VN
#define VN 4		/* vector width of a work-item's column chunks (divides TN) */
#endif
#ifndef LW
#define LW 4		/* vector width of the loads from global memory */
#endif
#ifndef PM
#define PM 1		/* work-items arranged in PM x PN patches (a warp, on GPUs) */
#endif
#ifndef PN
#define PN (BN / TN)
#endif
#ifndef GM
#define GM 8		/* tile rows a band of consecutive work-groups covers (L2 reuse) */
#endif
#ifndef PAD
#define PAD 0		/* extra elements at the end of each local row (multiple of VM, VN, LW) */
#endif
#ifndef KU
#define KU BK		/* unrolling of the loop over k */
#endif
#ifndef USE_LOCAL
#define USE_LOCAL 1	/* 0: no local memory, no barriers (for CPUs) */
#endif
#ifndef USE_FMA
#define USE_FMA 1	/* 1: fused multiply-add (where the device has it in hardware) */
#endif
#ifndef USE_TF32
#define USE_TF32 0	/* 1: gemm_tf32 on NVIDIA's tensor cores instead of gemm (sm_80+) */
#endif
#ifndef TF32_ASYNC
#define TF32_ASYNC 0	/* 1: gemm_tf32 copies slices with cp.async (--staging async) */
#endif
#ifndef NSTAGE
#define NSTAGE 3	/* TF32_ASYNC, USE_WGMMA: local buffers of slices (the host fits them) */
#endif
#ifndef USE_WGMMA
#define USE_WGMMA 0	/* 1: gemm_wgmma (clmatmul_wgmma.cl) instead of gemm (sm_90) */
#endif

#if USE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double2 real2;
typedef double4 real4;
typedef double8 real8;
typedef double16 real16;
#else
typedef float real;
typedef float2 real2;
typedef float4 real4;
typedef float8 real8;
typedef float16 real16;
#endif

/* realV(n): the vector type of width n (1: the scalar). */
#define VTYPE_1 real
#define VTYPE_2 real2
#define VTYPE_4 real4
#define VTYPE_8 real8
#define VTYPE_16 real16
#define VTYPE_(n) VTYPE_##n
#define VTYPE(n) VTYPE_(n)
typedef VTYPE(VM) realM;
typedef VTYPE(VN) realN;
typedef VTYPE(LW) realL;

#define PRAGMA_(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_(x)
#if USE_FMA
#define MAD(a, b, c) fma((a), (b), (c))
#else
#define MAD(a, b, c) mad((a), (b), (c))
#endif

/* Scatters a vector into consecutive elements of a private array. */
#define SPLIT_1(v, p) ((p)[0] = (v))
#define SPLIT_2(v, p) vstore2((v), 0, (p))
#define SPLIT_4(v, p) vstore4((v), 0, (p))
#define SPLIT_8(v, p) vstore8((v), 0, (p))
#define SPLIT_16(v, p) vstore16((v), 0, (p))
#define SPLIT_(n, v, p) SPLIT_##n(v, p)
#define SPLIT(n, v, p) SPLIT_(n, v, p)
/* and gathers them back */
#define VLOAD_1(p) ((p)[0])
#define VLOAD_2(p) vload2(0, (p))
#define VLOAD_4(p) vload4(0, (p))
#define VLOAD_8(p) vload8(0, (p))
#define VLOAD_16(p) vload16(0, (p))
#define VLOAD_(n, p) VLOAD_##n(p)
#define VLOAD(n, p) VLOAD_(n, p)

#define NTM (BM / TM)		/* work-items along M */
#define NTN (BN / TN)		/* work-items along N */
#define NT (NTM * NTN)		/* work-group size */
#define RM (TM / VM)		/* row chunks a work-item holds */
#define RN (TN / VN)		/* column chunks */
#define LDSA (BM + PAD)		/* local row lengths */
#define LDSB (BN + PAD)
#define LA (BM * BK / LW / NT)	/* global vector loads a work-item does a slice, for A */
#define LB (BN * BK / LW / NT)	/* and for B */

#if USE_LOCAL && !TF32_ASYNC && !USE_WGMMA && ((BM * BK / LW) % NT != 0 || (BN * BK / LW) % NT != 0 || LA < 1 || LB < 1)
#error "a slice of A and of B must divide evenly into vector loads over the work-group"
#endif
#if TM % VM != 0 || TN % VN != 0 || BM % TM != 0 || BN % TN != 0 || BK % LW != 0
#error "inconsistent tile sizes"
#endif
#if NT % (PM * PN) != 0 || NTN % PN != 0 || NTM % PM != 0
#error "the work-item patch must tile the work-group"
#endif

/* Loads slice kt of op(A) and op(B) (tile origin bm0, bn0) into registers. The
 * layouts whose contiguous direction is k are read with consecutive work-items on
 * consecutive rows, so that their transposing stores into local memory hit distinct
 * banks; the others are read and stored as vectors along the row. */
#define LOAD_SLICE(kt)                                                                \
	do {                                                                          \
		const int k0_ = (kt) * BK;                                            \
		_Pragma("unroll") for (int i = 0; i < LA; i++) {                      \
			const int f = lid + i * NT;                                   \
			if (TRANS_A) {                                                \
				const int mv = f % (BM / LW), k = f / (BM / LW);      \
				ra[i] = *(const __global realL *)(A + (size_t)(k0_ + k) * lda + bm0 + mv * LW); \
			} else {                                                      \
				const int m = f % BM, kv = f / BM;                    \
				ra[i] = *(const __global realL *)(A + (size_t)(bm0 + m) * lda + k0_ + kv * LW); \
			}                                                             \
		}                                                                     \
		_Pragma("unroll") for (int i = 0; i < LB; i++) {                      \
			const int f = lid + i * NT;                                   \
			if (TRANS_B) {                                                \
				const int n = f % BN, kv = f / BN;                    \
				rb[i] = *(const __global realL *)(B + (size_t)(bn0 + n) * ldb + k0_ + kv * LW); \
			} else {                                                      \
				const int nv = f % (BN / LW), k = f / (BN / LW);      \
				rb[i] = *(const __global realL *)(B + (size_t)(k0_ + k) * ldb + bn0 + nv * LW); \
			}                                                             \
		}                                                                     \
	} while (0)

/* Stores the registers of LOAD_SLICE into local buffer b (k-major). */
#define STORE_SLICE(b)                                                                \
	do {                                                                          \
		__local real *as_ = As + (b) * (BK * LDSA);                           \
		__local real *bs_ = Bs + (b) * (BK * LDSB);                           \
		_Pragma("unroll") for (int i = 0; i < LA; i++) {                      \
			const int f = lid + i * NT;                                   \
			if (TRANS_A) {                                                \
				const int mv = f % (BM / LW), k = f / (BM / LW);      \
				*(__local realL *)(as_ + k * LDSA + mv * LW) = ra[i]; \
			} else {                                                      \
				const int m = f % BM, kv = f / BM;                    \
				real t_[LW];                                          \
				SPLIT(LW, ra[i], t_);                                 \
				_Pragma("unroll") for (int e = 0; e < LW; e++)        \
					as_[(kv * LW + e) * LDSA + m] = t_[e];        \
			}                                                             \
		}                                                                     \
		_Pragma("unroll") for (int i = 0; i < LB; i++) {                      \
			const int f = lid + i * NT;                                   \
			if (TRANS_B) {                                                \
				const int n = f % BN, kv = f / BN;                    \
				real t_[LW];                                          \
				SPLIT(LW, rb[i], t_);                                 \
				_Pragma("unroll") for (int e = 0; e < LW; e++)        \
					bs_[(kv * LW + e) * LDSB + n] = t_[e];        \
			} else {                                                      \
				const int nv = f % (BN / LW), k = f / (BN / LW);      \
				*(__local realL *)(bs_ + k * LDSB + nv * LW) = rb[i]; \
			}                                                             \
		}                                                                     \
	} while (0)

/* Declares bm0 and bn0, the origin of the work-group's tile of C (M x N). Work-groups
 * go in bands of GM tile rows, column by column within a band, so that the groups
 * running at once share panels of A and B in the cache. */
#define TILE_ORIGIN()                                                                 \
	const int tiles_m = M / BM, tiles_n = N / BN;                                 \
	const int gid = get_group_id(0);                                              \
	const int band = gid / (GM * tiles_n), in_band = gid % (GM * tiles_n);        \
	const int band_rows = min(GM, tiles_m - band * GM);                           \
	const int bm0 = (band * GM + in_band % band_rows) * BM;                       \
	const int bn0 = (in_band / band_rows) * BN

/* Modes of gemm, for products whose K is split into panels (blocked runs): the
 * accumulators start from C's values (the previous panel's raw sums) and/or are
 * stored raw, so a split product rounds exactly as the whole one does. */
#define ACC_IN 1
#define RAW_OUT 2

/* The parameters of every gemm kernel (gemm, gemm_tf32, gemm_wgmma), elements of type
 * T, in the order cm_set_gemm_args sets them: C (M x N, leading dimension ldc) =
 * alpha op(A) op(B) + beta C0 under the modes. */
#define GEMM_PARAMS(T)                                                                \
	const int M, const int N, const int K, const __global T *restrict A,          \
	const int lda, const __global T *restrict B, const int ldb, __global T *C,    \
	const int ldc, const __global T *C0, const int ldc0, const T alpha,           \
	const T beta, const int mode

/* Unless the output is raw (RAW_OUT), v of vector type T becomes alpha v + beta c0;
 * c0 is not read when beta is 0. */
#define SCALE_OUT(v, T, c0)                                                           \
	if (!(mode & RAW_OUT)) {                                                      \
		v *= alpha;                                                           \
		if (beta != 0.0f)                                                     \
			v = mad((T)(beta), c0, v);                                    \
	}

#if USE_TF32 || USE_WGMMA
/* x rounded to TF32, as a float whose low 13 mantissa bits are zero. */
float
tf32_round(float x)
{
	uint r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return as_float(r);
}

/* Copies 16 bytes from global to local memory (.shared byte address dst), in the
 * background: a commit group ends the copies a wait_group can wait for. */
#define CP_ASYNC16(dst, src)                                                          \
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"                     \
	    :: "r"(dst), "l"(src) : "memory")
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#endif

#if USE_WGMMA
/* gemm_wgmma and its packing: clmatmul_wgmma.cl */
#elif !USE_TF32
/* C (M x N, leading dimension ldc) = alpha * op(A) * op(B) + beta * C0, where C0 may
 * be C itself and is not read when beta is 0. A is M x K (lda) or, with TRANS_A, K x M;
 * B is K x N or N x K. Launch: one dimension, (M/BM)*(N/BN) work-groups of NT. */
__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
gemm(GEMM_PARAMS(real))
{
#if USE_LOCAL
	/* Declared as the widest vector type, so that the vector reads and writes of
	 * the tiles are aligned (a plain real array may start at any 4-byte address). */
	__local real16 As16[(2 * BK * LDSA + 15) / 16], Bs16[(2 * BK * LDSB + 15) / 16];
	__local real *As = (__local real *)As16, *Bs = (__local real *)Bs16;
#endif

	TILE_ORIGIN();

	const int lid = get_local_id(0);
	const int patch = lid / (PM * PN), in_patch = lid % (PM * PN);
	const int tm = (patch / (NTN / PN)) * PM + in_patch / PN;
	const int tn = (patch % (NTN / PN)) * PN + in_patch % PN;

	realN acc[TM][RN];
	_Pragma("unroll") for (int q = 0; q < RM; q++)
		_Pragma("unroll") for (int e = 0; e < VM; e++) {
			const int row = bm0 + q * (BM / RM) + tm * VM + e;
			const __global real *crow = C + (size_t)row * ldc + bn0 + tn * VN;
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				acc[q * VM + e][c] = (mode & ACC_IN) ?
				    *(const __global realN *)(crow + c * (BN / RN)) : (realN)(0);
		}

#if !USE_LOCAL
	/* A and B come packed (pack_a, pack_b): each work-item's rows of A and columns
	 * of B, k-major and contiguous. K goes in chunks of BK with a barrier between:
	 * on CPUs the work-group then runs chunk by chunk over its work-items, whose
	 * operands for the chunk stay in the caches, each work-item with its block in
	 * registers for the chunk. */
	const __global real *ap = A + (size_t)(bm0 / BM * NTM + tm) * (size_t)K * TM;
	const __global real *bp = B + (size_t)(bn0 / BN * NTN + tn) * (size_t)K * TN;
	for (int k0 = 0; k0 < K; k0 += BK) {
		realN r[TM][RN];
		_Pragma("unroll") for (int i = 0; i < TM; i++)
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				r[i][c] = acc[i][c];
		PRAGMA(unroll KU) for (int k = k0; k < k0 + BK; k++) {
			realN b[RN];
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				b[c] = *(const __global realN *)(bp + (size_t)k * TN + c * VN);
			_Pragma("unroll") for (int i = 0; i < TM; i++) {
				const realN a = (realN)(ap[(size_t)k * TM + i]);
				_Pragma("unroll") for (int c = 0; c < RN; c++)
					r[i][c] = MAD(a, b[c], r[i][c]);
			}
		}
		_Pragma("unroll") for (int i = 0; i < TM; i++)
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				acc[i][c] = r[i][c];
		barrier(CLK_GLOBAL_MEM_FENCE);
	}
#else
	realL ra[LA], rb[LB];
	const int nslices = K / BK;
	LOAD_SLICE(0);
	STORE_SLICE(0);
	barrier(CLK_LOCAL_MEM_FENCE);

	for (int kt = 0; kt < nslices; kt++) {
		const int cur = kt & 1;
		if (kt + 1 < nslices)
			LOAD_SLICE(kt + 1);

		/* The accumulators in a block-local copy: on CPUs, where the compiler
		 * keeps what lives across a barrier in memory, this keeps them in
		 * registers for the whole slice; GPUs' compilers drop the copy. */
		realN r[TM][RN];
		_Pragma("unroll") for (int i = 0; i < TM; i++)
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				r[i][c] = acc[i][c];
		const __local real *as = As + cur * (BK * LDSA) + tm * VM;
		const __local real *bs = Bs + cur * (BK * LDSB) + tn * VN;
		PRAGMA(unroll KU) for (int kk = 0; kk < BK; kk++) {
			real a[TM];
			realN b[RN];
			_Pragma("unroll") for (int q = 0; q < RM; q++)
				SPLIT(VM, *(const __local realM *)(as + kk * LDSA + q * (BM / RM)), a + q * VM);
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				b[c] = *(const __local realN *)(bs + kk * LDSB + c * (BN / RN));
			_Pragma("unroll") for (int i = 0; i < TM; i++)
				_Pragma("unroll") for (int c = 0; c < RN; c++)
					r[i][c] = MAD((realN)(a[i]), b[c], r[i][c]);
		}
		_Pragma("unroll") for (int i = 0; i < TM; i++)
			_Pragma("unroll") for (int c = 0; c < RN; c++)
				acc[i][c] = r[i][c];

		if (kt + 1 < nslices)
			STORE_SLICE(cur ^ 1);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
#endif

	_Pragma("unroll") for (int q = 0; q < RM; q++)
		_Pragma("unroll") for (int e = 0; e < VM; e++) {
			const int row = bm0 + q * (BM / RM) + tm * VM + e;
			const int col = bn0 + tn * VN;
			__global real *crow = C + (size_t)row * ldc + col;
			const __global real *c0row = C0 + (size_t)row * ldc0 + col;
			_Pragma("unroll") for (int c = 0; c < RN; c++) {
				realN v = acc[q * VM + e][c];
				if (!(mode & RAW_OUT)) {
					v *= alpha;
					if (beta != (real)0)
						v = mad((realN)(beta),
						    *(const __global realN *)(c0row + c * (BN / RN)), v);
				}
				*(__global realN *)(crow + c * (BN / RN)) = v;
			}
		}
}
#else
/* gemm_tf32: gemm's contract (arguments, padding, modes, launch) with the products on
 * NVIDIA's tensor cores, through inline PTX (sm_80 and later): op(A) and op(B) are
 * rounded to TF32 (cvt.rna: 10-bit mantissas, to nearest, ties away) and
 * mma.sync.aligned.m16n8k8 multiplies them exactly and sums in float32.
 * A warp computes an (8 TM) x (4 TN) block of the tile as (TM/2) x (TN/2) MMA tiles
 * of 16 x 8, so a work-item still holds TM x TN sums: in each MMA tile, rows g and
 * g + 8 and columns 2t and 2t + 1, where g = lane / 4 and t = lane % 4 (PTX's
 * fragment layout). Two ways to stage the slices, the host's choice (--staging):
 * - local (TF32_ASYNC 0): as gemm does, through registers into two k-major local
 *   buffers, rounded on the way; rows padded by PAD (the host passes 8), so that a
 *   fragment read, 4 rows of k by 8 columns, hits 32 different banks.
 * - async (TF32_ASYNC 1, the default on NVIDIA): cp.async copies 16 bytes at a time
 *   from global to local memory, NSTAGE slices in flight, in the layout each operand
 *   is stored in; fragments are rounded as they are read (below, before gemm_tf32).
 * The two give the same bytes: the same rounded inputs, the same MMAs in the same
 * order into each sum. */
#define WTM (8 * TM)		/* a warp's rows of the tile */
#define WTN (4 * TN)		/* and its columns */
#define FM (TM / 2)		/* its MMA tiles along M */
#define FN (TN / 2)		/* and along N */

#if USE_DOUBLE || !USE_LOCAL || TM % 2 != 0 || TN % 2 != 0 || BM % WTM != 0 || \
    BN % WTN != 0 || BK % 8 != 0
#error "gemm_tf32: float32 with local staging, even TM and TN, BM % (8 TM) == 0, BN % (4 TN) == 0, BK % 8 == 0"
#endif

/* D = A B + D on one 16 x 8 tile, k = 8: d float[4], a uint[4], b uint[2]. */
#define MMA_TF32(d, a, b)                                                             \
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "           \
	    "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"      \
	    : "=f"((d)[0]), "=f"((d)[1]), "=f"((d)[2]), "=f"((d)[3])                   \
	    : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]),         \
	      "r"((b)[1]), "f"((d)[0]), "f"((d)[1]), "f"((d)[2]), "f"((d)[3]))

/* Declares bm0 and bn0 (TILE_ORIGIN), the work-item's lid, warp, lane, and g and t
 * (PTX's fragment layout: lane = 4 g + t), and wm0, wn0, its warp's tile within the
 * group's: the opening of both gemm_tf32 kernels. */
#define WARP_ORIGIN()                                                                 \
	TILE_ORIGIN();                                                                \
	const int lid = get_local_id(0);                                              \
	const int warp = lid / 32, lane = lid % 32, g = lane / 4, t = lane % 4;       \
	const int wm0 = warp / (BN / WTN) * WTM, wn0 = warp % (BN / WTN) * WTN

#if !TF32_ASYNC
realL
tf32_round_vec(realL v)
{
	real t[LW];
	SPLIT(LW, v, t);
	_Pragma("unroll") for (int e = 0; e < LW; e++)
		t[e] = tf32_round(t[e]);
	return VLOAD(LW, t);
}

/* Rounds the registers of LOAD_SLICE to TF32. */
#define ROUND_SLICE()                                                                 \
	do {                                                                          \
		_Pragma("unroll") for (int i = 0; i < LA; i++)                        \
			ra[i] = tf32_round_vec(ra[i]);                                \
		_Pragma("unroll") for (int i = 0; i < LB; i++)                        \
			rb[i] = tf32_round_vec(rb[i]);                                \
	} while (0)

__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
gemm_tf32(GEMM_PARAMS(float))
{
	__local float16 As16[(2 * BK * LDSA + 15) / 16], Bs16[(2 * BK * LDSB + 15) / 16];
	__local float *As = (__local float *)As16, *Bs = (__local float *)Bs16;

	WARP_ORIGIN();

	/* acc[i][j][q]: MMA tile (i, j), row g + 8 (q / 2), column 2t + q % 2 */
	float acc[FM][FN][4];
	_Pragma("unroll") for (int i = 0; i < FM; i++)
		_Pragma("unroll") for (int j = 0; j < FN; j++)
			_Pragma("unroll") for (int h = 0; h < 2; h++) {
				const int row = bm0 + wm0 + i * 16 + g + 8 * h;
				const int col = bn0 + wn0 + j * 8 + 2 * t;
				float2 v = (mode & ACC_IN) ? vload2(0, C + (size_t)row * ldc + col) :
				    (float2)(0);
				acc[i][j][2 * h] = v.x;
				acc[i][j][2 * h + 1] = v.y;
			}

	realL ra[LA], rb[LB];
	const int nslices = K / BK;
	LOAD_SLICE(0);
	ROUND_SLICE();
	STORE_SLICE(0);
	barrier(CLK_LOCAL_MEM_FENCE);

	for (int kt = 0; kt < nslices; kt++) {
		const int cur = kt & 1;
		if (kt + 1 < nslices)
			LOAD_SLICE(kt + 1);

		const __local float *as = As + cur * (BK * LDSA) + wm0 + g;
		const __local float *bs = Bs + cur * (BK * LDSB) + wn0 + g;
		_Pragma("unroll") for (int k8 = 0; k8 < BK; k8 += 8) {
			const __local float *a0 = as + (k8 + t) * LDSA, *a4 = a0 + 4 * LDSA;
			const __local float *b0 = bs + (k8 + t) * LDSB, *b4 = b0 + 4 * LDSB;
			uint af[FM][4], bf[FN][2];
			_Pragma("unroll") for (int i = 0; i < FM; i++) {
				af[i][0] = as_uint(a0[i * 16]);
				af[i][1] = as_uint(a0[i * 16 + 8]);
				af[i][2] = as_uint(a4[i * 16]);
				af[i][3] = as_uint(a4[i * 16 + 8]);
			}
			_Pragma("unroll") for (int j = 0; j < FN; j++) {
				bf[j][0] = as_uint(b0[j * 8]);
				bf[j][1] = as_uint(b4[j * 8]);
			}
			_Pragma("unroll") for (int i = 0; i < FM; i++)
				_Pragma("unroll") for (int j = 0; j < FN; j++)
					MMA_TF32(acc[i][j], af[i], bf[j]);
		}

		if (kt + 1 < nslices) {
			ROUND_SLICE();
			STORE_SLICE(cur ^ 1);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}

	_Pragma("unroll") for (int i = 0; i < FM; i++)
		_Pragma("unroll") for (int j = 0; j < FN; j++)
			_Pragma("unroll") for (int h = 0; h < 2; h++) {
				const int row = bm0 + wm0 + i * 16 + g + 8 * h;
				const int col = bn0 + wn0 + j * 8 + 2 * t;
				float2 v = (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
				SCALE_OUT(v, float2, vload2(0, C0 + (size_t)row * ldc0 + col));
				vstore2(v, 0, C + (size_t)row * ldc + col);
			}
}
#else
/* The async kernel (--staging async). Each operand is staged in the layout it is
 * stored in, since cp.async copies and cannot transpose:
 * - k-contiguous (op(A) without TRANS_A, op(B) with TRANS_B): a row of BK floats for
 *   each row of op(A) (column of op(B)), with no padding; its 16-byte units are
 *   XOR-swizzled by the row (KC_AT), so that the 8 rows an ldmatrix phase reads, one
 *   unit each, fall in 8 different 16-byte bank groups, and a warp's copies of 32
 *   consecutive units stay conflict-free. Fragments come from
 *   ldmatrix.sync.aligned.m8n8.x4.shared.b16: for 32-bit data, lane L gets the float
 *   at row L/4, column L%4 of each 8 x 4 matrix, which is the m16n8k8 TF32 fragment
 *   (a0-a3 of a 16 x 8 A tile; b0, b1 of two 8 x 8 B tiles).
 * - tile-contiguous (op(A) with TRANS_A, op(B) without): BK rows of BM (BN) floats,
 *   padded by 8 (LDA_S, LDB_S), as the local kernel's. A fragments are scalar reads
 *   (4 k rows by 8 columns: 32 banks). B fragments are vector reads of BVB floats: a
 *   work-item's value of n-tile j, column c, is the stored column
 *   BVB (8 (j / BVB) + c) + j % BVB of the warp's block (with BVB = 1, the natural
 *   one), so that work-item g finds its BVB n-tiles side by side; with rows 8 floats
 *   past a multiple of 32 banks, the 8 work-items of a quarter warp (g = 2p, 2p + 1,
 *   t = 0..3) read 8 different 16-byte groups. The columns of C a work-item holds
 *   follow the same map (C_COL), and so its stores are BVB wide.
 * The modes that take which path: A as stored (no --transpose-a) and B transposed
 * (--transpose-b) read fragments by ldmatrix; --transpose-a's A and plain B by
 * local loads; all four combinations run this kernel.
 *
 * cp.async and ldmatrix take a .shared address. A __local pointer is NVVM's
 * addrspace(3) pointer, and converting it to an integer (ptrtoint) gives its offset
 * in the .shared window, as CUDA's __cvta_generic_to_shared does (it casts a generic
 * pointer to addrspace(3), then to an integer): so (uint)(size_t)p is the "r" operand
 * (32 bits hold any .shared address). Not cvta.to.shared: that expects a generic
 * address, which a __local pointer is not. */
#define KUNITS (BK / 4)		/* 16-byte units in a k-contiguous row */
/* the unit swizzle of row r: rows 8/KUNITS apart (a 128-byte line) differ */
#define SWZ(r) ((KUNITS & (KUNITS - 1)) ? 0 :                                        \
	((r) / (KUNITS >= 8 ? 1 : 8 / KUNITS)) % (KUNITS >= 8 ? 8 : KUNITS))
#define KC_AT(r, u) ((r) * BK + 4 * ((u) ^ SWZ(r)))	/* float offset of unit u, row r */
#define LDA_S (BM + 8)		/* tile-contiguous row lengths */
#define LDB_S (BN + 8)
#define SA (TRANS_A ? BK * LDA_S : BM * BK)	/* floats of a slice of op(A) */
#define SB (TRANS_B ? BN * BK : BK * LDB_S)	/* and of op(B) */
#if TRANS_B			/* B fragments' vector width (a literal: VTYPE pastes it) */
#define BVB 1
#elif (TN / 2) % 4 == 0
#define BVB 4
#elif (TN / 2) % 2 == 0
#define BVB 2
#else
#define BVB 1
#endif
#define C_COL(j, c) (BVB * (8 * ((j) / BVB) + (c)) + (j) % BVB)
#define CHUNKS_A (BM * BK / 4)	/* 16-byte copies a slice */
#define CHUNKS_B (BN * BK / 4)

#if NSTAGE < 2 || NSTAGE > 4
#error "gemm_tf32 (async): NSTAGE from 2 to 4"
#endif

/* x's bits rounded to TF32. */
uint
tf32_bits(uint x)
{
	return as_uint(tf32_round(as_float(x)));
}

/* Waits until at most NSTAGE - 2 groups are in flight: the oldest slice has landed. */
#if NSTAGE == 2
#define CP_WAIT() asm volatile("cp.async.wait_group 0;" ::: "memory")
#elif NSTAGE == 3
#define CP_WAIT() asm volatile("cp.async.wait_group 1;" ::: "memory")
#else
#define CP_WAIT() asm volatile("cp.async.wait_group 2;" ::: "memory")
#endif
#define LDSM_X4(r, addr)                                                              \
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" \
	    : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3]) : "r"(addr) : "memory")
#define LDSM_X2(r, addr)                                                              \
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"       \
	    : "=r"((r)[0]), "=r"((r)[1]) : "r"(addr) : "memory")

/* Starts the copies of slice kt of op(A) and op(B) into local buffer st (byte
 * addresses sa, sb of buffer 0): each work-item copies every NT-th 16-byte unit. */
#define ISSUE_SLICE(kt, st)                                                           \
	do {                                                                          \
		const int k0_ = (kt) * BK;                                            \
		const uint as_ = sa + (uint)((st) * SA * 4);                          \
		const uint bs_ = sb + (uint)((st) * SB * 4);                          \
		_Pragma("unroll") for (int i = 0; i < (CHUNKS_A + NT - 1) / NT; i++) { \
			const int f = lid + i * NT;                                   \
			if (CHUNKS_A % NT == 0 || f < CHUNKS_A) {                     \
				const __global float *src_;                           \
				uint dst_;                                            \
				if (TRANS_A) {                                        \
					const int k = f / (BM / 4), u = f % (BM / 4); \
					src_ = A + (size_t)(k0_ + k) * lda + bm0 + 4 * u; \
					dst_ = as_ + 4 * (k * LDA_S + 4 * u);         \
				} else {                                              \
					const int r = f / KUNITS, u = f % KUNITS;     \
					src_ = A + (size_t)(bm0 + r) * lda + k0_ + 4 * u; \
					dst_ = as_ + 4 * KC_AT(r, u);                 \
				}                                                     \
				CP_ASYNC16(dst_, src_);                               \
			}                                                             \
		}                                                                     \
		_Pragma("unroll") for (int i = 0; i < (CHUNKS_B + NT - 1) / NT; i++) { \
			const int f = lid + i * NT;                                   \
			if (CHUNKS_B % NT == 0 || f < CHUNKS_B) {                     \
				const __global float *src_;                           \
				uint dst_;                                            \
				if (TRANS_B) {                                        \
					const int r = f / KUNITS, u = f % KUNITS;     \
					src_ = B + (size_t)(bn0 + r) * ldb + k0_ + 4 * u; \
					dst_ = bs_ + 4 * KC_AT(r, u);                 \
				} else {                                              \
					const int k = f / (BN / 4), u = f % (BN / 4); \
					src_ = B + (size_t)(k0_ + k) * ldb + bn0 + 4 * u; \
					dst_ = bs_ + 4 * (k * LDB_S + 4 * u);         \
				}                                                     \
				CP_ASYNC16(dst_, src_);                               \
			}                                                             \
		}                                                                     \
	} while (0)

__kernel __attribute__((reqd_work_group_size(NT, 1, 1))) void
gemm_tf32(GEMM_PARAMS(float))
{
	/* float4s, so that every 16-byte unit is aligned */
	__local float4 As4[NSTAGE * SA / 4], Bs4[NSTAGE * SB / 4];
	const __local float *As = (const __local float *)As4, *Bs = (const __local float *)Bs4;
	const uint sa = (uint)(size_t)As, sb = (uint)(size_t)Bs;

	WARP_ORIGIN();

	/* acc[i][j][q]: MMA tile (i, j), row g + 8 (q / 2), column C_COL(j, 2t + q % 2) */
	float acc[FM][FN][4];
	_Pragma("unroll") for (int i = 0; i < FM; i++)
		_Pragma("unroll") for (int j = 0; j < FN; j++)
			_Pragma("unroll") for (int q = 0; q < 4; q++) {
				const int row = bm0 + wm0 + i * 16 + g + 8 * (q / 2);
				const int col = bn0 + wn0 + C_COL(j, 2 * t + q % 2);
				acc[i][j][q] = (mode & ACC_IN) ? C[(size_t)row * ldc + col] : 0.0f;
			}

	/* One commit group a slice (empty past the last), so that the wait below always
	 * means "slice kt has landed". */
	const int nslices = K / BK;
	_Pragma("unroll") for (int st = 0; st < NSTAGE - 1; st++) {
		if (st < nslices)
			ISSUE_SLICE(st, st);
		CP_COMMIT();
	}

	int rd = 0, wr = NSTAGE - 1;	/* the buffers of slices kt and kt + NSTAGE - 1 */
	for (int kt = 0; kt < nslices; kt++) {
		/* This work-item's copies of slice kt are done; after the barrier, everyone's
		 * are, and everyone is done with slice kt - 1, whose buffer (wr) is refilled. */
		CP_WAIT();
		barrier(CLK_LOCAL_MEM_FENCE);
		if (kt + NSTAGE - 1 < nslices)
			ISSUE_SLICE(kt + NSTAGE - 1, wr);
		CP_COMMIT();

		const uint as_ = sa + (uint)(rd * SA * 4), bs_ = sb + (uint)(rd * SB * 4);
		const __local float *asf = As + rd * SA, *bsf = Bs + rd * SB;
		_Pragma("unroll") for (int k8 = 0; k8 < BK; k8 += 8) {
			uint af[FM][4], bf[FN][2];
			_Pragma("unroll") for (int i = 0; i < FM; i++) {
#if !TRANS_A
				/* lanes 8p..8p+7 address matrix p: rows +8 for p odd, k +4 for p >= 2 */
				const int r = wm0 + i * 16 + lane % 8 + 8 * (lane / 8 % 2);
				LDSM_X4(af[i], as_ + 4 * KC_AT(r, k8 / 4 + lane / 16));
#else
				const __local float *a0 = asf + (k8 + t) * LDA_S + wm0 + i * 16 + g;
				af[i][0] = as_uint(a0[0]);
				af[i][1] = as_uint(a0[8]);
				af[i][2] = as_uint(a0[4 * LDA_S]);
				af[i][3] = as_uint(a0[4 * LDA_S + 8]);
#endif
				_Pragma("unroll") for (int q = 0; q < 4; q++)
					af[i][q] = tf32_bits(af[i][q]);
			}
#if TRANS_B
			/* lanes 8p..8p+7 address matrix p: k +4 for p odd, the next n-tile for p >= 2 */
			_Pragma("unroll") for (int j = 0; j + 1 < FN; j += 2) {
				const int r = wn0 + j * 8 + lane % 8 + 8 * (lane / 16);
				uint v[4];
				LDSM_X4(v, bs_ + 4 * KC_AT(r, k8 / 4 + lane / 8 % 2));
				bf[j][0] = v[0];
				bf[j][1] = v[1];
				bf[j + 1][0] = v[2];
				bf[j + 1][1] = v[3];
			}
			if (FN % 2) {
				const int r = wn0 + (FN - 1) * 8 + lane % 8;
				LDSM_X2(bf[FN - 1], bs_ + 4 * KC_AT(r, k8 / 4 + lane / 8 % 2));
			}
#else
			_Pragma("unroll") for (int h = 0; h < FN / BVB; h++) {
				const __local float *b0 = bsf + (k8 + t) * LDB_S + wn0 + BVB * (8 * h + g);
				float v0[BVB], v1[BVB];
				SPLIT(BVB, *(const __local VTYPE(BVB) *)b0, v0);
				SPLIT(BVB, *(const __local VTYPE(BVB) *)(b0 + 4 * LDB_S), v1);
				_Pragma("unroll") for (int e = 0; e < BVB; e++) {
					bf[h * BVB + e][0] = as_uint(v0[e]);
					bf[h * BVB + e][1] = as_uint(v1[e]);
				}
			}
#endif
			_Pragma("unroll") for (int j = 0; j < FN; j++) {
				bf[j][0] = tf32_bits(bf[j][0]);
				bf[j][1] = tf32_bits(bf[j][1]);
			}
			_Pragma("unroll") for (int i = 0; i < FM; i++)
				_Pragma("unroll") for (int j = 0; j < FN; j++)
					MMA_TF32(acc[i][j], af[i], bf[j]);
		}
		rd = rd == NSTAGE - 1 ? 0 : rd + 1;
		wr = wr == NSTAGE - 1 ? 0 : wr + 1;
	}

	/* C's columns of a work-item come in runs of BVB (n-tiles side by side) or, with
	 * BVB 1, of 2 (the pair of an MMA tile). */
	_Pragma("unroll") for (int i = 0; i < FM; i++)
		_Pragma("unroll") for (int h = 0; h < 2; h++) {
			const int row = bm0 + wm0 + i * 16 + g + 8 * h;
			__global float *crow = C + (size_t)row * ldc + bn0 + wn0;
			const __global float *c0row = C0 + (size_t)row * ldc0 + bn0 + wn0;
#if BVB == 1
			_Pragma("unroll") for (int j = 0; j < FN; j++) {
				const int col = C_COL(j, 2 * t);
				float2 v = (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
				SCALE_OUT(v, float2, vload2(0, c0row + col));
				vstore2(v, 0, crow + col);
			}
#else
			_Pragma("unroll") for (int jb = 0; jb < FN; jb += BVB)
				_Pragma("unroll") for (int e = 0; e < 2; e++) {
					const int col = C_COL(jb, 2 * t + e);
					float w[BVB];
					_Pragma("unroll") for (int q = 0; q < BVB; q++)
						w[q] = acc[i][jb + q][2 * h + e];
					VTYPE(BVB) v = VLOAD(BVB, w);
					SCALE_OUT(v, VTYPE(BVB),
					    *(const __global VTYPE(BVB) *)(c0row + col));
					*(__global VTYPE(BVB) *)(crow + col) = v;
				}
#endif
		}
}
#endif	/* TF32_ASYNC */
#endif

#if !USE_WGMMA
/* Packing for the direct kernel (USE_LOCAL 0). Xp holds, for each work-item slot
 * of each tile, its TM rows of op(A) (its TN columns of op(B)) k-major: element i of
 * step k of slot g at (g * K + k) * TM + i, in the order the kernel's chunks use.
 * Launch: (the source's contiguous extent, the other one), as the source is stored. */
/* Where element (i, k) of op(X) goes: i along C's side, whose tiles of bx hold nt
 * work-item slots of r chunks of v (t = r * v elements a slot). */
size_t
packed_at(int i, int k, int K, int bx, int nt, int r, int v, int t)
{
	const int ii = i % bx, q = ii / (bx / r), w = ii % (bx / r) / v, e = ii % v;
	return (((size_t)(i / bx) * nt + w) * K + k) * t + q * v + e;
}

__kernel void
pack_a(const __global real *A, const int lda, __global real *Ap, const int K)
{
	const int row = TRANS_A ? get_global_id(0) : get_global_id(1);
	const int k = TRANS_A ? get_global_id(1) : get_global_id(0);
	Ap[packed_at(row, k, K, BM, NTM, RM, VM, TM)] = TRANS_A ? A[(size_t)k * lda + row] :
	    A[(size_t)row * lda + k];
}

__kernel void
pack_b(const __global real *B, const int ldb, __global real *Bp, const int K)
{
	const int col = TRANS_B ? get_global_id(1) : get_global_id(0);
	const int k = TRANS_B ? get_global_id(0) : get_global_id(1);
	Bp[packed_at(col, k, K, BN, NTN, RN, VN, TN)] = TRANS_B ? B[(size_t)col * ldb + k] :
	    B[(size_t)k * ldb + col];
}
#endif	/* !USE_WGMMA */

/* The benchmark's data, the same numbers as cm_uniform() in clmatmul.h: element
 * (r, c) of a rows x cols matrix is uniform in [-1, 1) from a hash of (seed, salt,
 * r * cols + c). The buffer has leading dimension ld and is padded to padded_rows;
 * the padding is zero. Launch: (ld, padded_rows). */
__kernel void
fill_uniform(__global real *X, const int rows, const int cols, const int ld,
    const ulong seed, const ulong salt)
{
	const int c = get_global_id(0), r = get_global_id(1);
	real v = 0;
	if (r < rows && c < cols) {
		ulong z = seed ^ (salt * 0xD1B54A32D192ED03UL);
		z += ((ulong)r * (ulong)cols + (ulong)c + 1) * 0x9E3779B97F4A7C15UL;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
		z ^= z >> 31;
		v = (real)((float)(uint)(z >> 40) * 0x1.0p-23f - 1.0f);
	}
	X[(size_t)r * ld + c] = v;
}
