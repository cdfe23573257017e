/* clmatmul_wgmma.cl: --staging wgmma, TF32 on Hopper's warpgroup MMA (sm_90).
 *
 * NVIDIA's OpenCL compiles for sm_90, and ptxas refuses wgmma there: it is an sm_90a
 * instruction. So every sm_90a instruction here is written as a PTX comment that
 * begins "//SM90A:" (SM90A below), which NVVM passes through with its operands
 * substituted; the host (clx_build_sm90a) takes the program's PTX, deletes the marks
 * and retargets it to sm_90a, and builds it again from that PTX. Built any other way
 * (PoCL, an older NVIDIA GPU), the marked lines stay comments; the host never runs
 * this kernel there.
 *
 * op(A) and op(B) are packed first (pack_a, pack_b below): rounded to TF32 (cvt.rna,
 * as gemm_tf32 rounds) and laid out as the kernel's local slices will be, in wgmma's
 * K-major core matrices: a BM x BK block of op(A) (BN x BK of op(B)^T) for each tile
 * and slice, [row / 8][k / 4][row % 8][k % 4], 8 rows of 16 bytes a core matrix. A
 * slice is then two contiguous blocks, which the bulk-copy unit (cp.async.bulk, one
 * work-item starting it) copies into local memory as they are, and wgmma reads their
 * 128-byte core matrices without bank conflicts (no swizzle).
 *
 * A work-group of BM / 64 warpgroups computes a BM x BN tile of C; warpgroup w the
 * rows 64 w .. 64 w + 63, with one wgmma.mma_async m64nBNk8 a depth of 8, its B
 * operand the whole slice of op(B). NSTAGE slices (as many as fit the 48 KB of local
 * memory a work-group may have) are in local memory. The copies are what limits the
 * kernel: at N = 8192 the MMAs alone take half its time, and the copies alone nearly
 * all of it, since few slices fit. So a buffer is refilled as soon as every warpgroup
 * is done with it, before the wait for the next slice, and all NSTAGE slices are on
 * their way while the work-group waits.
 * Accumulators: BN / 2 floats a work-item, as mma.sync's C fragments, one for each
 * 8 columns: work-item lane l of warp q holds rows 16 q + l / 4 (+ 8) and columns
 * 2 (l % 4) (+ 1) of each. */
#if USE_WGMMA

#if USE_DOUBLE || BM % 64 != 0 || BM > 256 || \
    (BN != 64 && BN != 128 && BN != 192 && BN != 256) || BK % 8 != 0 || BK > 32
#error "gemm_wgmma: float32, BM 64 to 256 by 64, BN 64, 128, 192 or 256, BK 8 to 32 by 8"
#endif
#if NSTAGE < 2
#error "gemm_wgmma: two slices at least"
#endif
#define WG_NT (2 * BM)		/* work-items: a warpgroup (128) for each 64 rows */
#define SLICE (BM * BK + BN * BK)	/* floats of a slice of op(A) and op(B) */

#define SM90A(s) "//SM90A:" s

/* The shared-memory descriptor of a K-major operand without swizzle at byte address
 * addr: core matrices adjacent in k are 128 bytes apart (the leading offset), groups
 * of 8 rows 8 BK floats (the stride offset); both are stored divided by 16. */
ulong
wg_desc(uint addr)
{
	return (ulong)((addr & 0x3FFFF) >> 4) | ((ulong)(128 >> 4) << 16) |
	    ((ulong)(32 * BK >> 4) << 32);
}

/* wgmma's operands: the accumulators "%0" to "%(BN/2 - 1)", then the two descriptors
 * (WG_DESC) and the scale-d flag (WG_SCALE). */
#define WG_R0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
	"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_R1 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, " \
	"%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, " \
	"%62, %63"
#define WG_R2 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, " \
	"%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, " \
	"%94, %95"
#define WG_R3 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, " \
	"%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, " \
	"%121, %122, %123, %124, %125, %126, %127"
#define F8(o) "+f"(acc[(o)]), "+f"(acc[(o) + 1]), "+f"(acc[(o) + 2]), "+f"(acc[(o) + 3]), \
	"+f"(acc[(o) + 4]), "+f"(acc[(o) + 5]), "+f"(acc[(o) + 6]), "+f"(acc[(o) + 7])
#define F32(o) F8(o), F8((o) + 8), F8((o) + 16), F8((o) + 24)
#if BN == 64
#define WG_REGS WG_R0
#define WG_DESC "%32, %33"
#define WG_SCALE "%34"
#define WG_ACC F32(0)
#elif BN == 128
#define WG_REGS WG_R0 ", " WG_R1
#define WG_DESC "%64, %65"
#define WG_SCALE "%66"
#define WG_ACC F32(0), F32(32)
#elif BN == 192
#define WG_REGS WG_R0 ", " WG_R1 ", " WG_R2
#define WG_DESC "%96, %97"
#define WG_SCALE "%98"
#define WG_ACC F32(0), F32(32), F32(64)
#else
#define WG_REGS WG_R0 ", " WG_R1 ", " WG_R2 ", " WG_R3
#define WG_DESC "%128, %129"
#define WG_SCALE "%130"
#define WG_ACC F32(0), F32(32), F32(64), F32(96)
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

/* acc += (the 64 x 8 A at descriptor da) (the 8 x BN B at db), asynchronously. */
#define WGMMA(da, db)                                                                 \
	asm volatile(SM90A("{ .reg .pred p; setp.ne.b32 p, " WG_SCALE ", 0; "           \
	    "wgmma.mma_async.sync.aligned.m64n" STR(BN) "k8.f32.tf32.tf32 {" WG_REGS "}, " \
	    WG_DESC ", p, 1, 1; }")                                                    \
	    : WG_ACC : "l"(da), "l"(db), "r"(1) : "memory")
#define WG_FENCE() asm volatile(SM90A("wgmma.fence.sync.aligned;") ::: "memory")
#define WG_COMMIT() asm volatile(SM90A("wgmma.commit_group.sync.aligned;") ::: "memory")
#define WG_WAIT(n)                                                                    \
	asm volatile(SM90A("wgmma.wait_group.sync.aligned %0;") :: "n"(n) : "memory")
/* Keeps the compiler from moving any access to the accumulators across this point
 * (CUTLASS's warpgroup_fence_operand): ptxas serializes the MMAs when it finds an
 * instruction other than wgmma defining their registers while they are in flight. */
#define ACC_FENCE()                                                                   \
	_Pragma("unroll") for (int i_ = 0; i_ < BN / 2; i_++)                        \
		asm volatile("" : "+f"(acc[i_]) :: "memory")
/* The bulk-copy unit: one work-item starts a slice's two copies (op(A)'s block,
 * op(B)'s), and the slice's mbarrier counts their bytes in; the others wait on it. An
 * mbarrier is a 64-bit word in local memory (.shared byte address). */
#define MBAR_INIT(mb)                                                                 \
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mb) : "memory")
#define MBAR_EXPECT(mb, bytes)                                                        \
	asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, "  \
	    "[%0], %1; }" :: "r"(mb), "r"(bytes) : "memory")
#define BULK_COPY(dst, src, bytes, mb)                                                \
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes " \
	    "[%0], [%1], %2, [%3];" :: "r"(dst), "l"(src), "r"(bytes), "r"(mb) : "memory")

/* Whether the mbarrier at mb has completed its phase of the given parity. */
uint
mbar_done(uint mb, uint parity)
{
	uint done;
	asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
	    "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(mb), "r"(parity) : "memory");
	return done;
}

/* Starts the bulk copies of slice kt into local buffer st (by one work-item). */
#define ISSUE_BULK(kt, st)                                                            \
	do {                                                                          \
		const uint d_ = s0 + (uint)((st) * SLICE * 4), m_ = mb0 + 8 * (st);   \
		MBAR_EXPECT(m_, SLICE * 4);                                           \
		BULK_COPY(d_, A + ((size_t)tile_m * nslices + (kt)) * (BM * BK),      \
		    BM * BK * 4, m_);                                                 \
		BULK_COPY(d_ + BM * BK * 4, B + ((size_t)tile_n * nslices + (kt)) * (BN * BK), \
		    BN * BK * 4, m_);                                                 \
	} while (0)

/* Starts this warpgroup's MMAs of slice kt (in buffer kt % NSTAGE): BK / 8 of them,
 * a depth of 8 being two core matrices, 256 bytes further in both operands. */
#define MMA_SLICE(kt)                                                                 \
	do {                                                                          \
		const uint s_ = s0 + (uint)((kt) % NSTAGE * SLICE * 4);              \
		const uint sa_ = s_ + wg * (64 * BK * 4), sb_ = s_ + BM * BK * 4;     \
		ACC_FENCE();                                                          \
		WG_FENCE();                                                           \
		_Pragma("unroll") for (int k8 = 0; k8 < BK / 8; k8++)                 \
			WGMMA(wg_desc(sa_ + 256 * k8), wg_desc(sb_ + 256 * k8));      \
		WG_COMMIT();                                                          \
	} while (0)

/* C = alpha op(A) op(B) + beta C0 (the modes as gemm's), from A and B as pack_a and
 * pack_b made them: lda and ldb are not used, the packing holds the layout. Launch:
 * one dimension, (M/BM)*(N/BN) work-groups of WG_NT. */
__kernel __attribute__((reqd_work_group_size(WG_NT, 1, 1))) void
gemm_wgmma(GEMM_PARAMS(float))
{
	__local float4 S4[NSTAGE * SLICE / 4];
	const uint s0 = (uint)(size_t)(__local float *)S4;
	__local ulong mbar[NSTAGE];	/* slice st has landed: a phase of mbar[st] */
	const uint mb0 = (uint)(size_t)mbar;

	TILE_ORIGIN();
	const int tile_m = bm0 / BM, tile_n = bn0 / BN, nslices = K / BK;
	const int lid = get_local_id(0), wg = lid / 128;
	const int q = lid % 128 / 32, lane = lid % 32, g = lane / 4, t = lane % 4;
	const int row0 = bm0 + 64 * wg + 16 * q + g;	/* and row0 + 8 */

	/* acc[4 j + 2 h + e]: row row0 + 8 h, column bn0 + 8 j + 2 t + e */
	float acc[BN / 2];
	_Pragma("unroll") for (int j = 0; j < BN / 8; j++)
		_Pragma("unroll") for (int h = 0; h < 2; h++) {
			float2 v = (float2)(0.0f);
			if (mode & ACC_IN)
				v = vload2(0, C + (size_t)(row0 + 8 * h) * ldc + bn0 + 8 * j + 2 * t);
			acc[4 * j + 2 * h] = v.x;
			acc[4 * j + 2 * h + 1] = v.y;
		}

	if (lid == 0) {
		for (int st = 0; st < NSTAGE; st++)
			MBAR_INIT(mb0 + 8 * st);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid == 0)
		for (int st = 0; st < NSTAGE - 1 && st < nslices; st++)
			ISSUE_BULK(st, st);
	for (int kt = 0; kt < nslices; kt++) {
		/* After the barrier every warpgroup has waited for its MMAs of slice
		 * kt - 1 (the end of the last turn): its buffer takes slice kt + NSTAGE - 1. */
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid == 0 && kt + NSTAGE - 1 < nslices)
			ISSUE_BULK(kt + NSTAGE - 1, (kt + NSTAGE - 1) % NSTAGE);
		while (!mbar_done(mb0 + 8 * (kt % NSTAGE), (uint)(kt / NSTAGE) & 1))
			;
		MMA_SLICE(kt);
		WG_WAIT(0);
		ACC_FENCE();
	}

	_Pragma("unroll") for (int j = 0; j < BN / 8; j++)
		_Pragma("unroll") for (int h = 0; h < 2; h++) {
			const size_t row = (size_t)(row0 + 8 * h);
			const int col = bn0 + 8 * j + 2 * t;
			float2 v = (float2)(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
			SCALE_OUT(v, float2, vload2(0, C0 + row * ldc0 + col));
			vstore2(v, 0, C + row * ldc + col);
		}
}

/* Packing (before gemm_wgmma): element (r, k) of op(X), r along C's side in tiles of
 * BR rows, to block (r / BR, k / BK) of BR x BK floats, at [r / 8][k / 4][r % 8][k % 4]
 * within it, rounded to TF32. A work-item writes one 16-byte unit; the 32 of a warp
 * read 8 rows (columns) by 64 bytes, or 16 rows of 32 bytes when transposed.
 * Launch: one dimension, BR x K / 4 work-items a tile of rows, every tile. */
#define PACK(X, ld, Xp, K, BR, TRANS)                                                 \
	do {                                                                          \
		const size_t u = get_global_id(0);                                    \
		const size_t blk = u / (BR * BK / 4);                                 \
		const int w = u % (BR * BK / 4);                                      \
		const int r = (int)(blk / ((K) / BK)) * BR + w / (2 * BK) * 8 + w % 8; \
		const int k = (int)(blk % ((K) / BK)) * BK + w / 8 % (BK / 4) * 4;    \
		float4 v;                                                             \
		if (TRANS)                                                            \
			v = (float4)(X[(size_t)k * (ld) + r], X[(size_t)(k + 1) * (ld) + r], \
			    X[(size_t)(k + 2) * (ld) + r], X[(size_t)(k + 3) * (ld) + r]); \
		else                                                                  \
			v = vload4(0, X + (size_t)r * (ld) + k);                      \
		v = (float4)(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z),       \
		    tf32_round(v.w));                                                 \
		vstore4(v, u, Xp);                                                    \
	} while (0)

/* op(A) is A (M x K, lda) or, with TRANS_A, A^T (A stored K x M) */
__kernel void
pack_a(const __global float *A, const int lda, __global float *Ap, const int K)
{
	PACK(A, lda, Ap, K, BM, TRANS_A);
}

/* op(B)^T, the K-major operand: B^T (B stored K x N) or, with TRANS_B, B itself */
__kernel void
pack_b(const __global float *B, const int ldb, __global float *Bp, const int K)
{
	PACK(B, ldb, Bp, K, BN, !TRANS_B);
}
#endif	/* USE_WGMMA */
