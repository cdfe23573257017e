/* editdist4r_wf.cu: the anti-diagonal wavefront (the paper's Fig. 4), editdist4r's GPU
 * engine for long and medium pairs, in one persistent launch a batch. A thread owns a
 * strip of rows (t rows for Four-Russians, 32 for bit-parallel: the strip engines FrEng
 * and BpEng, the latter in editdist4r_bp.cuh and the only one of --mode infix and
 * prefix, whose last strip follows the last row) and at step s computes chunk s - r of
 * its strip, taking the h vector of the strip above from shared memory; a job is a
 * block's run over THREADS consecutive strips, jobs are taken in order from a ticket,
 * and consecutive jobs of a pair hand their boundary row over through global memory
 * every WF_G steps (a slot per job, reused once its reader has released it), so one
 * launch covers a whole batch of long or medium pairs and never waits on a job that
 * has not started. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_check.h"
#include "editdist4r.h"
#include "editdist4r_bp.cuh"
#include "editdist4r_dev.cuh"
#include "err.h"

namespace {

__device__ __forceinline__ unsigned long long
ld_acquire64(const unsigned long long *p)
{
	unsigned long long v;
	asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void
st_release64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned
ld_acquire32(const unsigned *p)
{
	unsigned v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void
st_release32(unsigned *p, unsigned v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* A wait on another block of the launch. With every block resident and jobs taken in
 * order it always ends; should it not, trap (a launch failure) instead of hanging. What
 * counts as stuck is 10 s in which no block of the launch finished a round (BEAT, bumped
 * once a round by every block), not 10 s of this wait: a GPU time-shared by many
 * processes, or slowed a thousandfold by compute-sanitizer's racecheck, makes waits of
 * many seconds while the launch still moves (ten racecheck runs at once on one H200
 * trapped on the old 10 s of waiting; each alone passed, its kernel taking 4.5 s). */
__device__ __forceinline__ unsigned long long
globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

#define WAIT_UNTIL(cond, beat)                                                    \
	do {                                                                      \
		unsigned long long t0_ = globaltimer(), b0_ = ld_acquire64(beat); \
		while (!(cond)) {                                                 \
			__nanosleep(64);                                          \
			const unsigned long long t_ = globaltimer();              \
			if (t_ - t0_ > 10000000000ull) {                          \
				const unsigned long long b_ = ld_acquire64(beat); \
				if (b_ == b0_)                                    \
					__trap();                                 \
				t0_ = t_;                                         \
				b0_ = b_;                                         \
			}                                                         \
		}                                                                 \
	} while (0)


struct wfargs {
	const uint8_t *pool;
	const gpair *pairs;
	const wjob *jobs;
	int njobs;
	int32_t *dist;
	int32_t *end;			/* --mode: each pair's END */
	long long K;
	int mode;			/* enum ed_mode; not ED_GLOBAL only with BpEng */
	const uint16_t *tab;
	uint8_t *slots;			/* ns slots of stride bytes: a job's bottom row */
	size_t stride;
	int ns;
	unsigned long long *flag;	/* per slot: (writer job + 1) << 32 | chunks out */
	unsigned *freed;		/* per slot: reader job, once it has read all */
	unsigned *cflag;		/* per slot: writer job + 1, once corner is set */
	int *corner;			/* per slot: D at the next strip's first column */
	int *ticket;
	unsigned long long *beat;	/* rounds finished by all blocks (WAIT_UNTIL) */
	unsigned long long *clk;	/* block 0's cycles and nanoseconds (-v), its start */
};

/* Four-Russians strips of T rows; a chunk is one t-block. */
template <int T>
struct FrEng {
	static constexpr int S = T, W = T, THREADS = ED_WF_FR_THREADS;
	static constexpr bool MODES = false;	/* the last row is not followed */
	static constexpr uint32_t P = pow3c(T), TT = T * T;
	static constexpr size_t SMEM = T <= 2 ? ((size_t)(P * P) << TT) * 2 : 0;
	typedef uint8_t H;

	const uint16_t *tab;
	uint32_t a[T], v;
	int R;

	__device__ static H top(int X) { return (H)fr_allplus(X); }
	__device__ static H first(int X, int) { return top(X); }

	/* Once a launch: the table into shared memory. */
	__device__ static void
	prologue(uint8_t *esm, const uint16_t *gtab)
	{
		if constexpr (SMEM > 0)
			for (size_t i = threadIdx.x; i < SMEM / 2; i += THREADS)
				((uint16_t *)esm)[i] = gtab[i];
	}

	__device__ void
	init(const uint8_t *A, int i0, int R_, uint8_t *esm, const uint16_t *gtab)
	{
		tab = T <= 2 ? (const uint16_t *)esm : gtab;
		R = R_;
#pragma unroll
		for (int y = 0; y < T; y++)
			a[y] = y < R ? A[i0 + y] : 0x100u;
	}

	__device__ void left() { v = fr_allplus(R); }

	__device__ int
	step(const uint8_t *bc, int X, H &h)
	{
		uint32_t match = 0, e;
		if (R == T && X == T) {
#pragma unroll
			for (int x = 0; x < T; x++)
				match |= fr_match<T>(a, bc[x], x, T);
			e = tab[((h * P + v) << TT) | match];
		} else {
			for (int x = 0; x < X; x++)
				match |= fr_match<T>(a, bc[x], x, R);
			e = fr_cells(h, v, match, R, X);
		}
		h = (H)FR_HOUT(e);
		v = FR_VOUT(e);
		return FR_HSUM(e) - X;
	}
};

template <class E>
__host__ __device__ constexpr size_t
wf_off(int part)
{
	/* esm, hbuf, inbuf, outbuf, s_chi, s_corner, sB, end: each 16-byte aligned */
	size_t sizes[7] = {E::SMEM, 2 * E::THREADS * sizeof(typename E::H), WF_G * sizeof(typename E::H),
	    WF_G * sizeof(typename E::H), E::THREADS * sizeof(int), E::THREADS * sizeof(int),
	    (size_t)(WF_G + E::THREADS) * E::W};
	size_t off = 0;
	for (int i = 0; i <= part; i++)
		off += (sizes[i] + 15) & ~(size_t)15;
	return off;
}

template <class E>
__global__ void __launch_bounds__(E::THREADS)
wf(wfargs g)
{
	constexpr int NT = E::THREADS, S = E::S, W = E::W;
	typedef typename E::H H;
	extern __shared__ __align__(16) uint8_t smem[];
	uint8_t *esm = smem;
	H *hbuf = (H *)(smem + wf_off<E>(0));		/* [2][NT] */
	H *inbuf = (H *)(smem + wf_off<E>(1));		/* [WF_G] */
	H *outbuf = (H *)(smem + wf_off<E>(2));		/* [WF_G] */
	int *s_chi = (int *)(smem + wf_off<E>(3));	/* [NT] */
	int *s_corner = (int *)(smem + wf_off<E>(4));	/* [NT] */
	uint8_t *sB = smem + wf_off<E>(5);		/* [(WF_G + NT) * W] */
	__shared__ int s_job, s_cin, s_cout, s_cset;
	const int tid = threadIdx.x, lane = tid & 31, r = tid;

	if (blockIdx.x == 0 && tid == 0) {
		g.clk[2] = clock64();
		g.clk[3] = globaltimer();
	}
	E::prologue(esm, g.tab);
	for (;;) {
		if (tid == 0) {
			s_job = atomicAdd(g.ticket, 1);
			s_cset = 0;
		}
		__syncthreads();
		const int j = s_job;
		if (j >= g.njobs)
			break;
		const wjob jb = g.jobs[j];
		const gpair q = g.pairs[jb.pair];
		const int m = (int)q.alen, n = (int)q.blen;
		const int nstrips = (m + S - 1) / S, nch = (n + W - 1) / W;
		const int first = (int)jb.group * NT, nst = min(NT, nstrips - first);
		const bool has_pred = jb.group > 0, has_succ = first + nst < nstrips;
		/* the band is the global distance's (editdist4r_bp.cuh): the modes' K
		 * drops a best above it at the end */
		const long long KB = g.mode == ED_GLOBAL ? g.K : -1;
		const bool banded = KB >= 0;
		/* the last strip follows the last row (the modes) */
		const bool track = E::MODES && g.mode != ED_GLOBAL && !has_succ;
		const uint8_t *Bg = g.pool + q.boff;
		struct ed_band bd;
		ed_band_make(m, n, KB, &bd);
		ed_best best;

		const int i0 = (first + r) * S, i1 = min(i0 + S, m), R = i1 - i0;
		int64_t lclo = 0, lchi = -1, lnclo = 0, lnchi = 0;
		E eng;
		if (r < nst) {
			ed_band_chunks(&bd, i0, i1, n, W, &lclo, &lchi);
			if (i1 < m)
				ed_band_chunks(&bd, i1, min(i1 + S, m), n, W, &lnclo, &lnchi);
			else
				lnclo = lchi + 1;
			eng.init(g.pool + q.aoff, i0, R, esm, g.tab);
			s_chi[r] = (int)lchi;
		}
		const int clo = (int)lclo, chi = (int)lchi, nclo = (int)lnclo;
		__syncthreads();
		const int chi_up = r > 0 && r < nst ? s_chi[r - 1] : -1;	/* the strip above's last chunk */
		int chi_pred = -1;
		if (has_pred) {
			int64_t pl, pc;
			ed_band_chunks(&bd, (long long)(first - 1) * S, (long long)first * S, n, W, &pl, &pc);
			chi_pred = (int)pc;
		}
		const int slot_in = (j + g.ns - 1) % g.ns, slot_out = j % g.ns;
		const H *sin = (const H *)(g.slots + (size_t)slot_in * g.stride);
		H *sout = (H *)(g.slots + (size_t)slot_out * g.stride);
		if (!has_succ && tid == 0)
			st_release32(&g.freed[slot_out], (unsigned)j + 1);	/* no reader */
		__syncthreads();
		int64_t c0l, c0h, cll, clh;
		ed_band_chunks(&bd, (long long)first * S, min((first + 1) * S, m), n, W, &c0l, &c0h);
		ed_band_chunks(&bd, (long long)(first + nst - 1) * S, min((first + nst) * S, m), n, W, &cll, &clh);
		const int s_begin = (int)c0l, s_end = (int)clh + nst - 1;
		const int need0 = min((int)c0h, chi_pred);	/* thread 0's last chunk from above */
		int corner = banded ? 0 : i0, score = 0, flushed = (int)cll;
		bool slot_ok = !has_succ || j < g.ns, cpub = false, released = !has_pred;

		for (int s0 = s_begin; s0 <= s_end; s0 += WF_G) {
			/* B's bytes for the chunks of this round, and thread 0's input. */
			const int wlo = max(0, s0 - (nst - 1)), whi = min(nch - 1, s0 + WF_G - 1);
			const int blo = wlo * W, bhi = min(n, (whi + 1) * W);
			for (int k = tid; k < bhi - blo; k += NT)
				sB[k] = Bg[blo + k];
			if (has_pred && tid < 32) {
				int lo = max(s0, (int)c0l), hi = min(s0 + WF_G - 1, need0);
				/* The corner first: the slot may be reused once it is released. */
				if (banded && s0 == s_begin && lane == 0) {
					WAIT_UNTIL(ld_acquire32(&g.cflag[slot_in]) == (unsigned)j, g.beat);
					s_cin = __ldcg(&g.corner[slot_in]);
				}
				if (lo <= hi) {
					unsigned long long want = ((unsigned long long)j << 32) | (unsigned)(hi + 1);
					if (lane == 0)
						WAIT_UNTIL(ld_acquire64(&g.flag[slot_in]) >= want, g.beat);
					__syncwarp();
					__threadfence();
					for (int c = lo + lane; c <= hi; c += 32)
						inbuf[c - s0] = __ldcg(&sin[c]);
					if (hi == need0) {
						__syncwarp();
						if (lane == 0)
							st_release32(&g.freed[slot_in], (unsigned)j);
						released = true;
					}
				}
			}
			__syncthreads();
			for (int s = s0; s < s0 + WF_G && s <= s_end; s++) {
				const int c = s - r;
				if (r < nst && c >= clo && c <= chi) {
					const int X = min(W, n - c * W);
					if (c == clo) {
						if (banded)
							corner = r > 0 ? s_corner[r - 1] : has_pred ? s_cin : 0;
						score = corner + R;
						eng.left();
						best_init(best, score);	/* D[m][0] = m */
					}
					int cout = 0;
					bool cset = false;
					if (c == clo && nclo <= clo) {
						cout = score;
						cset = true;
					}
					H h;
					if (r == 0)
						h = has_pred && c <= chi_pred ? inbuf[c - s0] :
						    has_pred ? E::top(X) : E::first(X, g.mode);
					else
						h = c <= chi_up ? hbuf[((s - 1) & 1) * NT + r - 1] : E::top(X);
					const int before = score;
					score += eng.step(sB + (c * W - blo), X, h);
					if constexpr (E::MODES)
						if (track && r == nst - 1)
							best_chunk(best, before, h.x, h.y, X, c * W);
					if (c + 1 == nclo) {
						cout = score;
						cset = true;
					}
					if (cset) {
						if (r < nst - 1)
							s_corner[r] = cout;
						else {
							s_cout = cout;
							s_cset = 1;
						}
					}
					if (r < nst - 1) {
						hbuf[(s & 1) * NT + r] = h;
					} else {
						if (has_succ)
							outbuf[c % WF_G] = h;
						else if (c == chi && track)
							best_out(best, g.K, &g.dist[q.out], &g.end[q.out]);
						else if (c == chi)
							g.dist[q.out] = g.K >= 0 && score > g.K ? -1 : score;
					}
				}
				__syncthreads();
			}
			/* The last strip's new h vectors (and the corner) to the next job. */
			if (has_succ && tid < 32) {
				const int hi = min((int)clh, s0 + WF_G - 1 - (nst - 1));
				const bool pubc = banded && s_cset && !cpub;
				if (hi >= flushed || pubc) {
					if (!slot_ok) {
						if (lane == 0)
							WAIT_UNTIL(ld_acquire32(&g.freed[slot_out]) >=
							    (unsigned)(j - g.ns + 1), g.beat);
						__syncwarp();
						slot_ok = true;
					}
					for (int c = flushed + lane; c <= hi; c += 32)
						sout[c] = outbuf[c % WF_G];
					__threadfence();
					__syncwarp();
					if (lane == 0) {
						if (pubc) {
							g.corner[slot_out] = s_cout;
							__threadfence();
							st_release32(&g.cflag[slot_out], (unsigned)j + 1);
						}
						if (hi >= flushed)
							st_release64(&g.flag[slot_out],
							    ((unsigned long long)(j + 1) << 32) | (unsigned)(hi + 1));
					}
					cpub = cpub || pubc;
					flushed = max(flushed, hi + 1);
				}
			}
			if (tid == 0)
				atomicAdd(g.beat, 1ull);
		}
		if (!released && tid == 0)
			st_release32(&g.freed[slot_in], (unsigned)j);
		__syncthreads();
	}
	if (blockIdx.x == 0 && tid == 0) {
		g.clk[0] = clock64() - g.clk[2];
		g.clk[1] = globaltimer() - g.clk[3];
	}
}

template <class E>
size_t
wf_smem(void)
{
	return wf_off<E>(6);
}

} /* namespace */

template <class E>
static void
launch_wf(struct ed_gpu *g, size_t off, size_t np, const uint16_t *tab)
{
	const int S = E::S, NT = E::THREADS;
	size_t nj = 0, cmax = 1;
	for (size_t i = 0; i < np; i++)
		nj += CEIL_DIV(CEIL_DIV((size_t)g->hpairs[off + i].alen, (size_t)S), (size_t)NT);
	hgrow((void **)&g->hjobs, &g->hjobs_cap, MAX(nj, (size_t)1) * sizeof(wjob));
	nj = 0;
	for (size_t i = 0; i < np; i++) {
		const gpair *p = &g->hpairs[off + i];
		size_t ng = CEIL_DIV(CEIL_DIV((size_t)p->alen, (size_t)S), (size_t)NT);
		cmax = MAX(cmax, CEIL_DIV((size_t)p->blen, (size_t)E::W));
		for (size_t k = 0; k < ng; k++) {
			g->hjobs[nj].pair = (uint32_t)i;
			g->hjobs[nj++].group = (uint32_t)k;
		}
	}
	if (nj > INT32_MAX)
		die("GPU: too many wavefront jobs in one batch");
	size_t smem = wf_smem<E>();
	allow_smem(wf<E>, smem);
	int per_sm = 0;
	CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wf<E>, NT, smem));
	if (per_sm < 1)
		die("GPU: the wavefront kernel does not fit on a multiprocessor");
	int grid = (int)MIN(nj, (size_t)per_sm * g->sms);
	int ns = (int)MIN(nj, (size_t)2 * grid);
	size_t stride = (cmax * sizeof(typename E::H) + 127) & ~(size_t)127;

	dgrow((void **)&g->jobs, &g->jobs_cap, nj * sizeof(wjob));
	dgrow((void **)&g->slots, &g->slots_cap, (size_t)ns * stride);
	if (g->flags_cap < ns) {
		void *bufs[] = {g->flag, g->freed, g->cflag, g->corner, g->ticket, g->beat};
		for (size_t i = 0; i < 6; i++)
			if (bufs[i] != NULL)
				CUDA_CHECK(cudaFree(bufs[i]));
		CUDA_CHECK(cudaMalloc(&g->flag, (size_t)ns * sizeof *g->flag));
		CUDA_CHECK(cudaMalloc(&g->freed, (size_t)ns * sizeof *g->freed));
		CUDA_CHECK(cudaMalloc(&g->cflag, (size_t)ns * sizeof *g->cflag));
		CUDA_CHECK(cudaMalloc(&g->corner, (size_t)ns * sizeof *g->corner));
		CUDA_CHECK(cudaMalloc(&g->ticket, sizeof *g->ticket));
		CUDA_CHECK(cudaMalloc(&g->beat, sizeof *g->beat));
		g->flags_cap = ns;
	}
	CUDA_CHECK(cudaMemcpyAsync(g->jobs, g->hjobs, nj * sizeof(wjob), cudaMemcpyHostToDevice, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->flag, 0, (size_t)ns * sizeof *g->flag, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->freed, 0, (size_t)ns * sizeof *g->freed, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->cflag, 0, (size_t)ns * sizeof *g->cflag, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->ticket, 0, sizeof *g->ticket, g->st));
	CUDA_CHECK(cudaMemsetAsync(g->beat, 0, sizeof *g->beat, g->st));

	wfargs a;
	a.pool = g->pool;
	a.pairs = g->pairs + off;
	a.jobs = g->jobs;
	a.njobs = (int)nj;
	a.dist = g->dist;
	a.end = g->end;
	a.K = g->o.maxdist;
	a.mode = g->o.mode;
	a.tab = tab;
	a.slots = g->slots;
	a.stride = stride;
	a.ns = ns;
	a.flag = g->flag;
	a.freed = g->freed;
	a.cflag = g->cflag;
	a.corner = g->corner;
	a.ticket = g->ticket;
	a.beat = g->beat;
	a.clk = g->clk;
	wf<E><<<grid, NT, smem, g->st>>>(a);
	g->clk_pending = 1;
	CUDA_LAUNCH_CHECK();
	vlog("GPU wavefront: %zu pairs, %zu jobs, %d blocks of %d, %d slots", np, nj, grid, NT, ns);
}

void
launch_wavefront(struct ed_gpu *g, size_t off, size_t np)
{
	/* the modes: BpEng alone (ed_gpu_open) */
	if (g->wf_algo == ED_BP) {
		launch_wf<BpEng>(g, off, np, NULL);
	} else {
		/* t = 1 runs as t = 2 (the same distances): with -k 31 and more, FrEng<1>'s
		 * wavefront waits on a handoff that never comes and traps (found by
		 * editdist4r.bats's GPU property test; the man page's BUGS) */
		static int said;
		if (g->o.t == 1 && !said) {
			vlog("GPU wavefront: block size 2 (its block size 1 is not used; see BUGS)");
			said = 1;
		}
		switch (g->o.t) {
		case 1:
		case 2: launch_wf<FrEng<2>>(g, off, np, gpu_table(g, 2)); break;
		default: launch_wf<FrEng<3>>(g, off, np, gpu_table(g, 3)); break;
		}
	}
}
