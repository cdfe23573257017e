/* clkmeans_defs.cl: the first part of clkmeans's OpenCL program (Lloyd's k-means), one
 * source for every OpenCL device. The program is these files concatenated in this
 * order (the Makefile's clkmeans_CL_PARTS; tools/embed builds them in as one string),
 * each using what the ones before it define:
 *   clkmeans_defs.cl    the tunables' defaults, the state buffer's layout, the bounds'
 *                       constants
 *   clkmeans_assign.cl  assign (float32 and TF32)
 *   clkmeans_exact.cl   exact
 *   clkmeans_update.cl  update, finalize, scalars, rowdist
 *   clkmeans_seed.cl    kpp
 * kernels/clkmeans_dev.c builds it with -D options chosen per device class; each
 * tunable below has its default, so the program also compiles alone.
 *
 *   assign     rows x centroids distances as a register-blocked GEMM (tiles shared in
 *              local memory on GPUs, read directly on CPUs) fused with the arg-min; rows
 *              whose best and second-best values lie within the expansion's error bound
 *              go to a list for `exact'; with TF32 (NVIDIA, compute capability 8.0 and
 *              later), the GEMM on the tensor cores (mma.sync, inline PTX) and the bound
 *              widened by TF32's rounding, and the float32 kernel (assign_f32) rechecks
 *              the rows that bound leaves, listing for `exact' the few float32 cannot
 *              decide
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
			   A_RES, TK 8 or 16) */
#endif
#ifndef A_REG
#define A_REG 0		/* TF32 assign: each warp's row fragments in registers for the whole
			   pass, a centroid tile's DPAD columns a step (the host checks
			   that they fit: clkmeans_dev.c) */
#endif
#ifndef KM_KERNELS
#define KM_KERNELS 31	/* the kernels this build holds, KM_K_* bits: all. The host builds
			   them as separate programs, in threads at once, and only those a
			   run needs (clkmeans_dev.c); helpers are shared, so each program is
			   this whole source */
#endif
#define KM_K_ASSIGN 1	/* assign (with TF32, the tensor cores' one) */
#define KM_K_RECHECK 2	/* assign_f32, with TF32 only */
#define KM_K_EXACT 4	/* exact */
#define KM_K_UPDATE 8	/* update, finalize, scalars, rowdist */
#define KM_K_SEED 16	/* kpp, for k-means++ */
#define KM_HAS(k) ((KM_KERNELS & (k)) != 0)

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
#if A_REG
/* The TF32 assign's local memory with A_REG: the rows (rounded into registers, then
 * free) or two whole centroid tiles, or the merge. */
#define BT_SIZE (DPAD * BST)
#define TF_SMEM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define TF_SMEM_SIZE TF_SMEM_MAX(TF_SMEM_MAX(AS_SIZE, 2 * BT_SIZE), RED_SIZE)
#else
#define TF_SMEM_SIZE SMEM_SIZE
#endif
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
#define SI_NLIST2 9	/* with TF32: rows the float32 recheck leaves to exact */

/* Unit roundoff of float and the factor of safety on the error bound. */
#define U32 5.9604644775390625e-8f
#define SAFETY 1.125f
/* TF32's error in x.c, relative to sum |x_i||c_i| <= ||x|| ||c||: operands rounded to
 * nearest TF32 (2^-11 each), float32 sums of DIM products (2^-22 an addition, twice the
 * truncating unit), over 1 - 2^-9 for the rounded operands the norms come from. */
#define TF32_REL ((0x1p-10f + 0x1p-21f + DIM * 0x1p-22f) / (1.0f - 0x1p-9f))

