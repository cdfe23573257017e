/* skyline.cu: the CUDA path of skyline.
 *
 * Classic: per chosen column a radix sort gives dense ranks; rows are presorted by
 * their rank sum (a dominating row sorts strictly first) and filtered in batches of
 * growing size. A batch is first tested against the skyline so far (phase a), then
 * its survivors against each other in sorted order (phase b), and what is left is
 * appended to the skyline. Each thread holds one candidate in registers; its block
 * streams the skyline through shared memory in tiles and stops when all of its
 * candidates are settled. Candidates are grouped by their quartile masks (after
 * SkyAlign), so that a warp skips the skyline points that cannot dominate any of
 * its candidates together.
 *
 * Spatial (after Hwang, Son, Ahn): the hull of Q sits in constant memory; one pass
 * marks points inside the hull (always in the skyline) and finds pivots (the point
 * of least score and the points nearest the first vertices); a second pass drops
 * what a pivot dominates, and a grid over the survivors (for Son et al.'s R-tree)
 * drops what a point of a neighbouring cell dominates; the rest go through the same
 * batched filter, each testing the skyline found so far from its end, then a short
 * window check makes up for the rounded presort scores.
 *
 * Everything runs in one stream: the host launches the whole sequence and waits
 * only for the counts of survivors (which size what follows) and for the result. */
#include <algorithm>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>

#include "cuda_check.h"
#include "cudadev.h"
#include "err.h"
#include "skyline.h"
#include "timer.h"

#define NT 256			/* threads a block */
#define TILE 256		/* skyline points a shared-memory tile */
#define BFIRST 4096u		/* the first batch; each next one doubles */
#define BMAX (1u << 18)		/* the largest batch */
#define MAXH 2048		/* hull vertices in constant memory */

__constant__ float2 c_hull[MAXH];

static cudaStream_t stream;

/* ---- small helpers ---- */

/* Device buffers of one run, freed together. */
struct Dmem {
	std::vector<void *> ptrs;
	template <class T> T *get(size_t n)
	{
		void *p;
		CUDA_CHECK(cudaMalloc(&p, std::max(n, (size_t)1) * sizeof(T)));
		ptrs.push_back(p);
		return (T *)p;
	}
	~Dmem()
	{
		for (void *p : ptrs)
			cudaFree(p);
	}
};

static unsigned
grid_for(size_t n)
{
	return (unsigned)std::max<size_t>(1, std::min<size_t>(CEIL_DIV(n, NT), 1u << 20));
}

#define GRID_STRIDE(i, n) \
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); \
	    i += (size_t)gridDim.x * blockDim.x)

/* cub's temporary storage, sized once for the largest call of a run. */
struct Temp {
	void *p = nullptr;
	size_t bytes = 0;
	void need(size_t b) { bytes = std::max(bytes, b); }
	void alloc(Dmem &m) { p = m.get<unsigned char>(bytes); }
};

typedef thrust::counting_iterator<uint32_t> Count;

/* out[0..*cnt) = the i < n whose flag is set, ascending. */
static void
select_flagged(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n)
{
	size_t b = tmp.bytes;
	CUDA_CHECK(cub::DeviceSelect::Flagged(tmp.p, b, Count(0), flag, out, cnt, (int64_t)n,
	    stream));
}

static size_t
select_bytes(size_t n)
{
	size_t b = 0;
	CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, b, Count(0), (const uint8_t *)nullptr,
	    (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)n, stream));
	return b;
}

template <class K>
static size_t
sort_bytes(size_t n)
{
	size_t b = 0;
	cub::DoubleBuffer<K> k(nullptr, nullptr);
	cub::DoubleBuffer<uint32_t> v(nullptr, nullptr);
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b, k, v, (int64_t)n, 0,
	    (int)(8 * sizeof(K)), stream));
	return b;
}

template <class K>
static void
sort_pairs(Temp &tmp, cub::DoubleBuffer<K> &k, cub::DoubleBuffer<uint32_t> &v, size_t n,
    int bits)
{
	size_t b = tmp.bytes;
	if (bits > 0)
		CUDA_CHECK(cub::DeviceRadixSort::SortPairs(tmp.p, b, k, v, (int64_t)n, 0, bits,
		    stream));
}

/* With -v: the time since *t of the named step (waiting for the GPU to finish it). */
static void
step(const char *name, double *t)
{
	if (!verbose)
		return;
	CUDA_CHECK(cudaStreamSynchronize(stream));
	double now = now_sec();
	phase_add(name, now - *t);
	*t = now;
}

static int
bits_for(uint64_t max)
{
	return max == 0 ? 0 : 64 - __builtin_clzll(max);
}

/* The end of a run: the rows whose flag is set, ascending, through out (room for n)
 * into keep; returns their count. Closes the compute phase begun at t1. */
static uint32_t
finish_run(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    uint32_t *keep, double t1)
{
	uint32_t m;
	select_flagged(tmp, flag, out, cnt, n);
	CUDA_CHECK(cudaMemcpyAsync(&m, cnt, sizeof m, cudaMemcpyDeviceToHost, stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	double t2 = now_sec();
	phase_add(PH_COMPUTE, t2 - t1);
	CUDA_CHECK(cudaMemcpy(keep, out, (size_t)m * sizeof *keep, cudaMemcpyDeviceToHost));
	phase_add(PH_D2H, now_sec() - t2);
	return m;
}

/* ---- classic: ranks, presort, gather ---- */

static __device__ __forceinline__ uint32_t keyof(float v) { return sky_key32(v); }
static __device__ __forceinline__ uint64_t keyof(double v) { return sky_key64(v); }

template <class T, class K>
__global__ void
k_keys(const T *__restrict__ raw, size_t n, int d, int j, int rev, K *key, uint32_t *idx)
{
	GRID_STRIDE(i, n) {
		K k = keyof(raw[i * d + j]);
		key[i] = rev ? (K)~k : k;
		idx[i] = (uint32_t)i;
	}
}

template <class K>
__global__ void
k_newvalue(const K *__restrict__ ks, size_t n, uint32_t *f)
{
	GRID_STRIDE(i, n)
		f[i] = i > 0 && ks[i] != ks[i - 1];
}

/* Column ranks by row, and the ranks at the quartiles. */
__global__ void
k_rank_scatter(const uint32_t *__restrict__ rk, const uint32_t *__restrict__ idx, size_t n,
    uint32_t *r, uint32_t *q)
{
	GRID_STRIDE(i, n) {
		r[idx[i]] = rk[i];
		for (int u = 0; u < 3; u++)
			if (i == n * (u + 1) / 4)
				q[u] = rk[i];
	}
}

__global__ void
k_score(const uint32_t *__restrict__ r, size_t n, int d, const uint32_t *__restrict__ q,
    uint64_t *score, uint32_t *mask, uint32_t *idx)
{
	GRID_STRIDE(i, n) {
		uint64_t s = 0;
		uint32_t m = 0;
		for (int j = 0; j < d; j++) {
			uint32_t v = r[(size_t)j * n + i];
			s += v;
			if (j < SKY_MASKDIMS)
				m |= sky_mask_bits(v, q[3 * j], q[3 * j + 1], q[3 * j + 2], j);
		}
		score[i] = s;
		mask[i] = m;
		idx[i] = (uint32_t)i;
	}
}

/* Rows in score order, dd words each (zeros past d: they never decide). */
__global__ void
k_gather_rows(const uint32_t *__restrict__ r, size_t n, int d, int dd,
    const uint32_t *__restrict__ idx, const uint32_t *__restrict__ mask, uint32_t *v,
    uint32_t *m)
{
	GRID_STRIDE(k, n) {
		uint32_t src = idx[k];
		for (int j = 0; j < dd; j++)
			v[k * dd + j] = j < d ? r[(size_t)j * n + src] : 0;
		m[k] = mask[src];
	}
}

/* ---- the classic filter ---- */

/* Whether the row at s (in shared memory) is <= p everywhere (le) and equal (eq). */
template <int D>
static __device__ __forceinline__ void
compare_row(const uint32_t *s, const uint32_t (&p)[D], bool &le, bool &eq)
{
	le = true;
	eq = true;
	if (D % 4 == 0) {
#pragma unroll
		for (int q = 0; q < D / 4; q++) {
			uint4 w = reinterpret_cast<const uint4 *>(s)[q];
			le &= w.x <= p[4 * q] && w.y <= p[4 * q + 1] && w.z <= p[4 * q + 2] &&
			    w.w <= p[4 * q + 3];
			eq &= w.x == p[4 * q] && w.y == p[4 * q + 1] && w.z == p[4 * q + 2] &&
			    w.w == p[4 * q + 3];
		}
	} else {
#pragma unroll
		for (int j = 0; j < D; j++) {
			le &= s[j] <= p[j];
			eq &= s[j] == p[j];
		}
	}
}

/* Candidates cv/cm (index c = perm[t], or t) against the list lv/lm: all of it, or
 * (own) the entries before c. flag[c]: still alive; status[spos[c] or sbase + c]. */
template <int D>
__global__ void __launch_bounds__(NT)
k_scan(const uint32_t *__restrict__ cv, const uint32_t *__restrict__ cm,
    const uint32_t *__restrict__ perm, uint32_t nmax, const uint32_t *__restrict__ ncand,
    const uint32_t *__restrict__ lv, const uint32_t *__restrict__ lm,
    const uint32_t *__restrict__ llen_p, int own, uint8_t *__restrict__ flag,
    uint8_t *__restrict__ status, const uint32_t *__restrict__ spos, size_t sbase)
{
	__shared__ __align__(16) uint32_t sv[TILE * D];
	__shared__ uint32_t sm[TILE];
	uint32_t nc = ncand ? min(*ncand, nmax) : nmax;
	uint32_t t = blockIdx.x * NT + threadIdx.x;
	bool active = t < nc;
	uint32_t c = active ? (perm ? perm[t] : t) : 0;
	uint32_t p[D], pm = 0;
	if (active) {
#pragma unroll
		for (int j = 0; j < D; j++)
			p[j] = cv[(size_t)c * D + j];
		pm = cm[c];
	} else {
#pragma unroll
		for (int j = 0; j < D; j++)
			p[j] = 0;
	}
	uint32_t llen = *llen_p;
	uint32_t lim = active ? (own ? c : llen) : 0;
	int st = SKY_ALIVE;
	bool done = !active;
	for (uint32_t base = 0;; base += TILE) {
		bool idle = done || base >= lim;
		if (__syncthreads_and(idle))
			break;
		uint32_t cnt = min((uint32_t)TILE, llen - base);
		if (D % 4 == 0) {
			const uint4 *src = reinterpret_cast<const uint4 *>(lv + (size_t)base * D);
			for (uint32_t i = threadIdx.x; i < cnt * (D / 4); i += NT)
				reinterpret_cast<uint4 *>(sv)[i] = src[i];
		} else {
			for (uint32_t i = threadIdx.x; i < cnt * D; i += NT)
				sv[i] = lv[(size_t)base * D + i];
		}
		for (uint32_t i = threadIdx.x; i < cnt; i += NT)
			sm[i] = lm[base + i];
		__syncthreads();
		if (!idle) {
			uint32_t kend = min(cnt, lim - base);
			for (uint32_t k = 0; k < kend; k++) {
				if (!sky_mask_ok(sm[k], pm))
					continue;
				bool le, eq;
				compare_row<D>(sv + k * D, p, le, eq);
				if (le) {
					st = eq ? SKY_DUP : SKY_DOMINATED;
					done = true;
					break;
				}
			}
		}
	}
	if (active) {
		flag[c] = st == SKY_ALIVE;
		status[spos ? spos[c] : sbase + c] = (uint8_t)st;
	}
}

/* The same for rows wider than 16 columns, straight from global memory. */
__global__ void __launch_bounds__(NT)
k_scan_wide(const uint32_t *__restrict__ cv, const uint32_t *__restrict__ cm,
    const uint32_t *__restrict__ perm, uint32_t nmax, const uint32_t *__restrict__ ncand,
    const uint32_t *__restrict__ lv, const uint32_t *__restrict__ lm,
    const uint32_t *__restrict__ llen_p, int own, int d, uint8_t *__restrict__ flag,
    uint8_t *__restrict__ status, const uint32_t *__restrict__ spos, size_t sbase)
{
	uint32_t nc = ncand ? min(*ncand, nmax) : nmax;
	uint32_t t = blockIdx.x * NT + threadIdx.x;
	if (t >= nc)
		return;
	uint32_t c = perm ? perm[t] : t;
	const uint32_t *p = cv + (size_t)c * d;
	uint32_t pm = cm[c], lim = own ? c : *llen_p;
	int st = SKY_ALIVE;
	for (uint32_t k = 0; k < lim; k++) {
		if (!sky_mask_ok(lm[k], pm))
			continue;
		const uint32_t *s = lv + (size_t)k * d;
		bool le = true, eq = true;
		for (int j = 0; j < d && le; j++) {
			le = s[j] <= p[j];
			eq &= s[j] == p[j];
		}
		if (le) {
			st = eq ? SKY_DUP : SKY_DOMINATED;
			break;
		}
	}
	flag[c] = st == SKY_ALIVE;
	status[spos ? spos[c] : sbase + c] = (uint8_t)st;
}

/* Candidates ordered by their masks (median bits first): key ~0 past the count. */
__global__ void
k_mask_keys(const uint32_t *__restrict__ cm, uint32_t nmax, const uint32_t *__restrict__ ncand,
    uint32_t *key, uint32_t *val)
{
	uint32_t nc = ncand ? min(*ncand, nmax) : nmax;
	GRID_STRIDE(t, nmax) {
		uint32_t m = cm[t];
		key[t] = t < nc ? (m << 16 | m >> 16) : ~0u;
		val[t] = (uint32_t)t;
	}
}

/* Phase a's survivors (sel) copied into a contiguous batch. */
__global__ void
k_take(const uint32_t *__restrict__ sel, const uint32_t *__restrict__ cnt, uint32_t nmax,
    size_t b0, int dd, const uint32_t *__restrict__ v, const uint32_t *__restrict__ m,
    uint32_t *cv, uint32_t *cmk, uint32_t *cpos)
{
	uint32_t n = min(*cnt, nmax);
	GRID_STRIDE(t, n) {
		size_t src = b0 + sel[t];
		for (int j = 0; j < dd; j++)
			cv[t * dd + j] = v[src * dd + j];
		cmk[t] = m[src];
		cpos[t] = (uint32_t)src;
	}
}

/* Phase b's survivors appended to the skyline at *sky. */
__global__ void
k_append(const uint32_t *__restrict__ sel, const uint32_t *__restrict__ cnt, uint32_t nmax,
    const uint32_t *__restrict__ sky, int dd, const uint32_t *__restrict__ cv,
    const uint32_t *__restrict__ cmk, uint32_t *sv, uint32_t *sm)
{
	uint32_t n = min(*cnt, nmax);
	size_t at = *sky;
	GRID_STRIDE(t, n) {
		uint32_t src = sel[t];
		for (int j = 0; j < dd; j++)
			sv[(at + t) * dd + j] = cv[(size_t)src * dd + j];
		sm[at + t] = cmk[src];
	}
}

__global__ void
k_bump(uint32_t *sky, const uint32_t *cnt)
{
	*sky += *cnt;
}

__global__ void
k_keep(const uint8_t *__restrict__ status, const uint32_t *__restrict__ idx, size_t n,
    int distinct, uint8_t *flag)
{
	GRID_STRIDE(k, n) {
		int st = status[k];
		flag[idx[k]] = st == SKY_ALIVE || (st == SKY_DUP && !distinct);
	}
}

/* ---- one classic run on packed rows (n x d, float or double) ---- */

template <int D>
static void
launch_scan(int d, const uint32_t *cv, const uint32_t *cm, const uint32_t *perm, uint32_t nmax,
    const uint32_t *ncand, const uint32_t *lv, const uint32_t *lm, const uint32_t *llen,
    int own, uint8_t *flag, uint8_t *status, const uint32_t *spos, size_t sbase)
{
	unsigned g = (unsigned)CEIL_DIV(nmax, NT);
	if constexpr (D == 0)
		k_scan_wide<<<g, NT, 0, stream>>>(cv, cm, perm, nmax, ncand, lv, lm, llen, own, d,
		    flag, status, spos, sbase);
	else
		k_scan<D><<<g, NT, 0, stream>>>(cv, cm, perm, nmax, ncand, lv, lm, llen, own, flag,
		    status, spos, sbase);
	CUDA_LAUNCH_CHECK();
}

typedef void (*scan_launcher)(int, const uint32_t *, const uint32_t *, const uint32_t *,
    uint32_t, const uint32_t *, const uint32_t *, const uint32_t *, const uint32_t *, int,
    uint8_t *, uint8_t *, const uint32_t *, size_t);

/* The padded width for d columns and its scan. */
static scan_launcher
pick_width(int d, int *dd)
{
	if (d <= 2) { *dd = 2; return launch_scan<2>; }
	if (d <= 4) { *dd = 4; return launch_scan<4>; }
	if (d <= 8) { *dd = 8; return launch_scan<8>; }
	if (d <= 12) { *dd = 12; return launch_scan<12>; }
	if (d <= 16) { *dd = 16; return launch_scan<16>; }
	*dd = d;
	return launch_scan<0>;
}

/* Device bytes a row of a classic run needs, at most. */
static size_t
classic_row_bytes(size_t d, int f64)
{
	int dd;
	pick_width((int)d, &dd);
	return (f64 ? 8 : 4) * d + 4 * d + 8 * (size_t)dd + 100;
}

template <class T, class K>
static size_t
classic_run(const T *host, size_t n, int d, const unsigned char *maxpref, int distinct,
    uint32_t *keep)
{
	Dmem mem;
	Temp tmp;
	int dd;
	scan_launcher scan = pick_width(d, &dd);
	uint32_t bmax = (uint32_t)std::min<size_t>(BMAX, n);

	tmp.need(sort_bytes<K>(n));
	tmp.need(sort_bytes<uint64_t>(n));
	tmp.need(sort_bytes<uint32_t>(bmax));
	tmp.need(select_bytes(n));
	{
		size_t b = 0;
		CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, b, (uint32_t *)nullptr,
		    (uint32_t *)nullptr, (int64_t)n, stream));
		tmp.need(b);
	}
	tmp.alloc(mem);

	double t0 = now_sec();
	T *raw = mem.get<T>((size_t)n * d);
	CUDA_CHECK(cudaMemcpyAsync(raw, host, (size_t)n * d * sizeof(T), cudaMemcpyHostToDevice,
	    stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	double t1 = now_sec();
	phase_add(PH_H2D, t1 - t0);

	/* Ranks, column by column. */
	double ts = t1;
	uint32_t *r = mem.get<uint32_t>((size_t)n * d), *q = mem.get<uint32_t>(3 * (size_t)d);
	uint64_t *kbuf = mem.get<uint64_t>(2 * n);
	uint32_t *vbuf = mem.get<uint32_t>(2 * n), *u32 = mem.get<uint32_t>(2 * n);
	unsigned g = grid_for(n);
	for (int j = 0; j < d; j++) {
		cub::DoubleBuffer<K> kb((K *)kbuf, (K *)kbuf + n);
		cub::DoubleBuffer<uint32_t> vb(vbuf, vbuf + n);
		k_keys<T, K><<<g, NT, 0, stream>>>(raw, n, d, j, maxpref[j], kb.Current(),
		    vb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<K>(tmp, kb, vb, n, 8 * sizeof(K));
		k_newvalue<K><<<g, NT, 0, stream>>>(kb.Current(), n, u32);
		CUDA_LAUNCH_CHECK();
		size_t b = tmp.bytes;
		CUDA_CHECK(cub::DeviceScan::InclusiveSum(tmp.p, b, u32, u32 + n, (int64_t)n, stream));
		k_rank_scatter<<<g, NT, 0, stream>>>(u32 + n, vb.Current(), n, r + (size_t)j * n,
		    q + 3 * j);
		CUDA_LAUNCH_CHECK();
	}

	step("gpu rank", &ts);

	/* Presort by rank sum. */
	uint32_t *mask = mem.get<uint32_t>(n);
	cub::DoubleBuffer<uint64_t> sk(kbuf, kbuf + n);
	cub::DoubleBuffer<uint32_t> sv(vbuf, vbuf + n);
	k_score<<<g, NT, 0, stream>>>(r, n, d, q, sk.Current(), mask, sv.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, sk, sv, n, bits_for((uint64_t)d * n));
	const uint32_t *idx = sv.Current();
	uint32_t *v = mem.get<uint32_t>((size_t)n * dd), *vm = mem.get<uint32_t>(n);
	k_gather_rows<<<g, NT, 0, stream>>>(r, n, d, dd, idx, mask, v, vm);
	CUDA_LAUNCH_CHECK();
	step("gpu presort", &ts);

	/* The batched filter. */
	uint32_t *sky_v = mem.get<uint32_t>((size_t)n * dd), *sky_m = mem.get<uint32_t>(n);
	uint32_t *cv = mem.get<uint32_t>((size_t)bmax * dd), *cm = mem.get<uint32_t>(bmax);
	uint32_t *cpos = mem.get<uint32_t>(bmax), *sel = mem.get<uint32_t>(bmax);
	uint32_t *pk = mem.get<uint32_t>(2 * (size_t)bmax), *pv = mem.get<uint32_t>(2 * (size_t)bmax);
	uint32_t *cnt = mem.get<uint32_t>(3);	/* skyline size, phase a and b survivors */
	uint8_t *flag = mem.get<uint8_t>(std::max<size_t>(n, bmax)), *status = mem.get<uint8_t>(n);
	CUDA_CHECK(cudaMemsetAsync(cnt, 0, 3 * sizeof *cnt, stream));
	for (size_t b0 = 0, bs = BFIRST; b0 < n; b0 += bs, bs = std::min<size_t>(2 * bs, BMAX)) {
		uint32_t nb = (uint32_t)std::min<size_t>(bs, n - b0);
		unsigned gb = grid_for(nb);
		/* a: the batch, grouped by mask, against the skyline so far */
		cub::DoubleBuffer<uint32_t> pkb(pk, pk + bmax), pvb(pv, pv + bmax);
		k_mask_keys<<<gb, NT, 0, stream>>>(vm + b0, nb, nullptr, pkb.Current(), pvb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, pkb, pvb, nb, 32);
		scan(d, v + b0 * dd, vm + b0, pvb.Current(), nb, nullptr, sky_v, sky_m, cnt, 0, flag,
		    status, nullptr, b0);
		select_flagged(tmp, flag, sel, cnt + 1, nb);
		k_take<<<gb, NT, 0, stream>>>(sel, cnt + 1, nb, b0, dd, v, vm, cv, cm, cpos);
		CUDA_LAUNCH_CHECK();
		/* b: the survivors against those before them */
		cub::DoubleBuffer<uint32_t> pkb2(pk, pk + bmax), pvb2(pv, pv + bmax);
		k_mask_keys<<<gb, NT, 0, stream>>>(cm, nb, cnt + 1, pkb2.Current(), pvb2.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, pkb2, pvb2, nb, 32);
		CUDA_CHECK(cudaMemsetAsync(flag, 0, nb, stream));
		scan(d, cv, cm, pvb2.Current(), nb, cnt + 1, cv, cm, cnt + 1, 1, flag, status, cpos, 0);
		select_flagged(tmp, flag, sel, cnt + 2, nb);
		k_append<<<gb, NT, 0, stream>>>(sel, cnt + 2, nb, cnt, dd, cv, cm, sky_v, sky_m);
		CUDA_LAUNCH_CHECK();
		k_bump<<<1, 1, 0, stream>>>(cnt, cnt + 2);
		CUDA_LAUNCH_CHECK();
	}
	step("gpu filter", &ts);
	k_keep<<<g, NT, 0, stream>>>(status, idx, n, distinct, flag);
	CUDA_LAUNCH_CHECK();
	return finish_run(tmp, flag, u32, cnt + 1, n, keep, t1);
}

/* ---- spatial ---- */

/* Vertex v of the hull, for a kernel made for up to H of them (H == 0: any number). */
template <int H>
static __device__ __forceinline__ float2
vertex(int v, int h)
{
	return c_hull[H == 0 ? v : min(v, h - 1)];
}

/* Whether s dominates p (p's squared distances in dp; H == 0: computed here). */
template <int H>
static __device__ __forceinline__ bool
dominates(float2 s, float2 p, const double *dp, int h, double tol)
{
	bool lt = false;
	constexpr int NV = H == 0 ? 1 : H;
#pragma unroll
	for (int v = 0; v < (H == 0 ? h : NV); v++) {
		if (H != 0 && v >= h)
			break;
		float2 w = c_hull[v];
		double ds = sky_d2(s.x, s.y, w.x, w.y);
		double dpv = H == 0 ? sky_d2(p.x, p.y, w.x, w.y) : dp[v];
		int c = sky_cmp_d2(ds, dpv, tol, s.x, s.y, p.x, p.y, w.x, w.y);
		if (c > 0)
			return false;
		lt |= c < 0;
	}
	return lt;
}

/* p's squared distances to the (padded) vertices. */
template <int DH>
static __device__ __forceinline__ void
vertex_dists(float2 p, int h, double (&dp)[DH])
{
#pragma unroll
	for (int v = 0; v < DH; v++) {
		float2 w = vertex<DH>(v, h);
		dp[v] = sky_d2(p.x, p.y, w.x, w.y);
	}
}

static __device__ __forceinline__ bool
same(float2 a, float2 b)
{
	return a.x == b.x && a.y == b.y;
}

static __device__ __forceinline__ uint64_t
pack_min(double v, size_t i)
{
	return (uint64_t)__float_as_uint((float)v) << 32 | (uint32_t)i;
}

static __device__ __forceinline__ uint64_t
warp_min(uint64_t x)
{
	for (int o = 16; o > 0; o >>= 1)
		x = min(x, (uint64_t)__shfl_down_sync(0xffffffffu, x, o));
	return x;
}

/* Pass 1: inside flags, scores and the pivots (least score; nearest each of the first
 * 16 vertices) as packed (value, index) minima in piv[0..17). */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_prep(const float2 *__restrict__ xy, size_t n, int h, uint8_t *inside, double *score,
    unsigned long long *piv)
{
	constexpr int NP = 1 + (H == 0 ? 16 : H);
	__shared__ uint64_t red[NT / 32][NP];
	uint64_t best[NP];
	int npv = 1 + min(h, 16);
#pragma unroll
	for (int u = 0; u < NP; u++)
		best[u] = ~0ull;
	GRID_STRIDE(i, n) {
		float2 p = xy[i];
		inside[i] = (uint8_t)sky_inside((const float *)c_hull, h, p.x, p.y);
		double s = 0;
		constexpr int NV = H == 0 ? 16 : H;
#pragma unroll
		for (int v = 0; v < NV; v++) {
			if (v < h) {
				float2 w = c_hull[v];
				double dv = sky_d2(p.x, p.y, w.x, w.y);
				s += dv;
				best[v + 1] = min(best[v + 1], pack_min(dv, i));
			}
		}
		for (int v = NV; v < h; v++) {
			float2 w = c_hull[v];
			s += sky_d2(p.x, p.y, w.x, w.y);
		}
		score[i] = s;
		best[0] = min(best[0], pack_min(s, i));
	}
	int lane = threadIdx.x % 32, w = threadIdx.x / 32;
#pragma unroll
	for (int u = 0; u < NP; u++) {
		uint64_t x = warp_min(best[u]);
		if (lane == 0)
			red[w][u] = x;
	}
	__syncthreads();
	if (threadIdx.x < npv) {
		uint64_t x = ~0ull;
		for (int k = 0; k < NT / 32; k++)
			x = min(x, red[k][threadIdx.x]);
		atomicMin(piv + threadIdx.x, (unsigned long long)x);
	}
}

/* Pass 2: survivors are the points inside the hull and those no pivot dominates. */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_prune(const float2 *__restrict__ xy, size_t n, int h, double tol,
    const uint8_t *__restrict__ inside, const unsigned long long *__restrict__ piv,
    uint8_t *flag)
{
	__shared__ float2 pz[17];
	int npv = 1 + min(h, 16);
	if (threadIdx.x < npv)
		pz[threadIdx.x] = xy[(uint32_t)piv[threadIdx.x]];
	__syncthreads();
	constexpr int DH = H > 0 ? H : 1;
	GRID_STRIDE(i, n) {
		bool keep = inside[i];
		if (!keep) {
			float2 p = xy[i];
			double dp[DH];
			vertex_dists(p, h, dp);
			keep = true;
			for (int u = 0; u < npv && keep; u++)
				keep = !dominates<H>(pz[u], p, dp, h, tol);
		}
		flag[i] = keep;
	}
}

/* The local pruning's grid (sky_grid_box) around the pivot of least score. */
__global__ void
k_sp_gridbox(const float2 *__restrict__ xy, const unsigned long long *__restrict__ piv, int h,
    int g, struct sky_grid *box)
{
	float2 z = xy[(uint32_t)piv[0]];
	sky_grid_box((const float *)c_hull, h, z.x, z.y, g, box);
}

__global__ void
k_sp_gridcell(const uint32_t *__restrict__ surv, size_t m, const float2 *__restrict__ xy,
    const struct sky_grid *__restrict__ box, uint32_t *key, uint32_t *val)
{
	struct sky_grid gr = *box;
	GRID_STRIDE(k, m) {
		float2 p = xy[surv[k]];
		key[k] = (uint32_t)(sky_grid_cell(&gr, p.y, gr.y0, gr.sy) * gr.g +
		    sky_grid_cell(&gr, p.x, gr.x0, gr.sx));
		val[k] = surv[k];
	}
}

/* [start, end) of each cell's points in cell order (empty cells stay 0, 0). */
__global__ void
k_sp_gridbounds(const uint32_t *__restrict__ key, size_t m, uint32_t *start, uint32_t *end)
{
	GRID_STRIDE(k, m) {
		uint32_t c = key[k];
		if (k == 0 || key[k - 1] != c)
			start[c] = (uint32_t)k;
		if (k + 1 == m || key[k + 1] != c)
			end[c] = (uint32_t)k + 1;
	}
}

/* A point that a point of its own or a neighbouring cell dominates is out. */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_gridprune(const uint32_t *__restrict__ key, const uint32_t *__restrict__ val, size_t m,
    int g, const uint32_t *__restrict__ start, const uint32_t *__restrict__ end,
    const float2 *__restrict__ xy, const uint8_t *__restrict__ inside, int h, double tol,
    uint8_t *flag)
{
	constexpr int DH = H > 0 ? H : 1;
	GRID_STRIDE(k, m) {
		uint32_t i = val[k];
		if (inside[i])
			continue;
		float2 p = xy[i];
		double dp[DH];
		vertex_dists(p, h, dp);
		int cx = (int)(key[k] % (uint32_t)g), cy = (int)(key[k] / (uint32_t)g);
		bool out = false;
		for (int y = max(cy - 1, 0); y <= min(cy + 1, g - 1) && !out; y++)
			for (int x = max(cx - 1, 0); x <= min(cx + 1, g - 1) && !out; x++) {
				uint32_t c = (uint32_t)(y * g + x);
				for (uint32_t j = start[c]; j < end[c]; j++) {
					uint32_t zi = val[j];
					if (zi != i && dominates<H>(xy[zi], p, dp, h, tol)) {
						out = true;
						break;
					}
				}
			}
		if (out)
			flag[i] = 0;
	}
}

/* Survivors' sort keys: coordinates (first), then score. */
__global__ void
k_sp_xykey(const uint32_t *__restrict__ surv, size_t m, const float2 *__restrict__ xy,
    uint64_t *key, uint32_t *val)
{
	GRID_STRIDE(k, m) {
		float2 p = xy[surv[k]];
		key[k] = (uint64_t)sky_key32(p.x) << 32 | sky_key32(p.y);
		val[k] = surv[k];
	}
}

__global__ void
k_sp_scorekey(const uint32_t *__restrict__ val, size_t m, const double *__restrict__ score,
    uint64_t *key)
{
	GRID_STRIDE(k, m)
		key[k] = (uint64_t)__double_as_longlong(score[val[k]]);
}

__global__ void
k_sp_gather(const uint32_t *__restrict__ idx, size_t m, const float2 *__restrict__ xy,
    const uint8_t *__restrict__ inside, const double *__restrict__ score, float2 *sxy,
    uint8_t *sin, double *ssc)
{
	GRID_STRIDE(k, m) {
		uint32_t i = idx[k];
		sxy[k] = xy[i];
		sin[k] = inside[i];
		ssc[k] = score[i];
	}
}

/* Candidates (cxy, cin; index c) against the list lxy, scanned from its end: all of it,
 * or (own) the entries before c. In phase a (sxy given), a point inside the hull is
 * alive, or equal to the point sorted before it. */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_scan(const float2 *__restrict__ cxy, const uint8_t *__restrict__ cin, uint32_t nmax,
    const uint32_t *__restrict__ ncand, const float2 *__restrict__ sxy,
    const float2 *__restrict__ lxy, const uint32_t *__restrict__ llen_p, int own, int h,
    double tol, uint8_t *__restrict__ flag, uint8_t *__restrict__ status,
    const uint32_t *__restrict__ spos, size_t sbase)
{
	constexpr int DH = H > 0 ? H : 1;
	__shared__ float2 tile[TILE];
	__shared__ uint32_t top;
	uint32_t nc = ncand ? min(*ncand, nmax) : nmax;
	uint32_t c = blockIdx.x * NT + threadIdx.x;
	bool active = c < nc;
	float2 p = active ? cxy[c] : make_float2(0, 0);
	int st = SKY_ALIVE;
	bool done = !active;
	if (active && cin[c]) {
		if (sxy && sbase + c > 0 && same(p, sxy[sbase + c - 1]))
			st = SKY_DUP;
		done = true;
	}
	double dp[DH];
	vertex_dists(p, h, dp);
	uint32_t llen = *llen_p, lim = done ? 0 : (own ? c : llen);
	if (threadIdx.x == 0)
		top = 0;
	__syncthreads();
	atomicMax(&top, lim);
	__syncthreads();
	for (uint32_t hi = top; hi > 0;) {
		uint32_t lo = hi > TILE ? hi - TILE : 0;
		for (uint32_t i = lo + threadIdx.x; i < hi; i += NT)
			tile[i - lo] = lxy[i];
		__syncthreads();
		if (!done) {
			for (uint32_t k = min(hi, lim); k-- > lo;) {
				float2 s = tile[k - lo];
				if (same(s, p)) {
					st = SKY_DUP;
					done = true;
					break;
				}
				if (dominates<H>(s, p, dp, h, tol)) {
					st = SKY_DOMINATED;
					done = true;
					break;
				}
			}
			if (lo == 0)
				done = true;
		}
		hi = lo;
		if (__syncthreads_and(done))
			break;
	}
	if (active) {
		flag[c] = st == SKY_ALIVE;
		status[spos ? spos[c] : sbase + c] = (uint8_t)st;
	}
}

__global__ void
k_sp_take(const uint32_t *__restrict__ sel, const uint32_t *__restrict__ cnt, uint32_t nmax,
    size_t b0, const float2 *__restrict__ sxy, const uint8_t *__restrict__ sin, float2 *cxy,
    uint8_t *cin, uint32_t *cpos)
{
	uint32_t n = min(*cnt, nmax);
	GRID_STRIDE(t, n) {
		size_t src = b0 + sel[t];
		cxy[t] = sxy[src];
		cin[t] = sin[src];
		cpos[t] = (uint32_t)src;
	}
}

__global__ void
k_sp_append(const uint32_t *__restrict__ sel, const uint32_t *__restrict__ cnt, uint32_t nmax,
    const uint32_t *__restrict__ sky, const float2 *__restrict__ cxy,
    const uint32_t *__restrict__ cpos, float2 *lxy, uint32_t *lpos)
{
	uint32_t n = min(*cnt, nmax);
	size_t at = *sky;
	GRID_STRIDE(t, n) {
		lxy[at + t] = cxy[sel[t]];
		lpos[at + t] = cpos[sel[t]];
	}
}

/* Rounded scores: a dominator may sort just after the point it dominates; each
 * skyline point outside the hull checks the window of scores it could hide in. */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_window(const uint32_t *__restrict__ lpos, const uint32_t *__restrict__ sky, size_t m,
    const float2 *__restrict__ sxy, const uint8_t *__restrict__ sin,
    const double *__restrict__ ssc, int h, double tol, double win, uint8_t *status)
{
	constexpr int DH = H > 0 ? H : 1;
	uint32_t ns = *sky;
	GRID_STRIDE(t, ns) {
		uint32_t k = lpos[t];
		if (sin[k])
			continue;
		float2 p = sxy[k];
		double dp[DH];
		vertex_dists(p, h, dp);
		double lim = ssc[k] * (1 + win);
		for (size_t j = k + 1; j < m && ssc[j] <= lim; j++) {
			float2 s = sxy[j];
			if (same(s, p) || same(s, sxy[j - 1]))
				continue;
			if (dominates<H>(s, p, dp, h, tol)) {
				status[k] = SKY_DOMINATED;
				break;
			}
		}
	}
}

/* Equal points are neighbours: each takes the fate of the first of its run. */
__global__ void
k_sp_runstart(const float2 *__restrict__ sxy, size_t m, uint32_t *start)
{
	GRID_STRIDE(k, m)
		start[k] = k == 0 || !same(sxy[k], sxy[k - 1]) ? (uint32_t)k : 0;
}

__global__ void
k_sp_keep(const uint32_t *__restrict__ head, const uint8_t *__restrict__ status,
    const uint32_t *__restrict__ idx, size_t m, int distinct, uint8_t *flag)
{
	GRID_STRIDE(k, m) {
		uint32_t hd = head[k];
		flag[idx[k]] = status[hd] == SKY_ALIVE && (hd == k || !distinct);
	}
}

template <int H>
static size_t
spatial_run(const float *host, size_t n, int h, double tol, int distinct, uint32_t *keep)
{
	Dmem mem;
	Temp tmp;
	uint32_t bmax = (uint32_t)std::min<size_t>(BMAX, n);

	tmp.need(sort_bytes<uint64_t>(n));
	tmp.need(sort_bytes<uint32_t>(n));
	tmp.need(select_bytes(n));
	{
		size_t b = 0;
		CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, b, (uint32_t *)nullptr,
		    (uint32_t *)nullptr, cuda::maximum<>{}, (int64_t)n, stream));
		tmp.need(b);
	}
	tmp.alloc(mem);

	double t0 = now_sec();
	float2 *xy = mem.get<float2>(n);
	CUDA_CHECK(cudaMemcpyAsync(xy, host, n * sizeof *xy, cudaMemcpyHostToDevice, stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	double t1 = now_sec();
	phase_add(PH_H2D, t1 - t0);

	uint8_t *inside = mem.get<uint8_t>(n), *flag = mem.get<uint8_t>(n);
	double *score = mem.get<double>(n);
	unsigned long long *piv = mem.get<unsigned long long>(17);
	uint32_t *surv = mem.get<uint32_t>(n), *cnt = mem.get<uint32_t>(4);
	CUDA_CHECK(cudaMemsetAsync(piv, 0xff, 17 * sizeof *piv, stream));
	CUDA_CHECK(cudaMemsetAsync(cnt, 0, 4 * sizeof *cnt, stream));
	unsigned gp = (unsigned)std::min<size_t>(CEIL_DIV(n, NT), 132 * 16);
	k_sp_prep<H><<<gp, NT, 0, stream>>>(xy, n, h, inside, score, piv);
	CUDA_LAUNCH_CHECK();
	k_sp_prune<H><<<grid_for(n), NT, 0, stream>>>(xy, n, h, tol, inside, piv, flag);
	CUDA_LAUNCH_CHECK();
	select_flagged(tmp, flag, surv, cnt + 3, n);
	uint32_t m;
	CUDA_CHECK(cudaMemcpyAsync(&m, cnt + 3, sizeof m, cudaMemcpyDeviceToHost, stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	vlog("%u points left after the pivots", m);
	if (m > SKY_GRID_MIN) {
		int g = (int)std::min(2048.0, std::max(1.0, sqrt((double)m / 4)));
		size_t nc = (size_t)g * g;
		struct sky_grid *box = mem.get<struct sky_grid>(1);
		uint32_t *ck = mem.get<uint32_t>(2 * (size_t)m), *cv = mem.get<uint32_t>(2 * (size_t)m);
		uint32_t *cs = mem.get<uint32_t>(nc), *ce = mem.get<uint32_t>(nc);
		cub::DoubleBuffer<uint32_t> kb(ck, ck + m), vb(cv, cv + m);
		k_sp_gridbox<<<1, 1, 0, stream>>>(xy, piv, h, g, box);
		CUDA_LAUNCH_CHECK();
		k_sp_gridcell<<<grid_for(m), NT, 0, stream>>>(surv, m, xy, box, kb.Current(),
		    vb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, kb, vb, m, bits_for(nc - 1));
		CUDA_CHECK(cudaMemsetAsync(cs, 0, nc * sizeof *cs, stream));
		CUDA_CHECK(cudaMemsetAsync(ce, 0, nc * sizeof *ce, stream));
		k_sp_gridbounds<<<grid_for(m), NT, 0, stream>>>(kb.Current(), m, cs, ce);
		CUDA_LAUNCH_CHECK();
		k_sp_gridprune<H><<<grid_for(m), NT, 0, stream>>>(kb.Current(), vb.Current(), m, g, cs,
		    ce, xy, inside, h, tol, flag);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, surv, cnt + 3, n);
		CUDA_CHECK(cudaMemcpyAsync(&m, cnt + 3, sizeof m, cudaMemcpyDeviceToHost, stream));
		CUDA_CHECK(cudaStreamSynchronize(stream));
		vlog("%u points left after the grid", m);
	}
	double ts = now_sec();
	phase_add("gpu prune", ts - t1);

	/* Sort the survivors by score, then coordinates (stable: equal points stay in
	 * input order, next to each other). */
	uint64_t *kbuf = mem.get<uint64_t>(2 * (size_t)m);
	uint32_t *vbuf = mem.get<uint32_t>(2 * (size_t)m);
	cub::DoubleBuffer<uint64_t> kb(kbuf, kbuf + m);
	cub::DoubleBuffer<uint32_t> vb(vbuf, vbuf + m);
	unsigned g = grid_for(m);
	k_sp_xykey<<<g, NT, 0, stream>>>(surv, m, xy, kb.Current(), vb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, kb, vb, m, 64);
	k_sp_scorekey<<<g, NT, 0, stream>>>(vb.Current(), m, score, kb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, kb, vb, m, 63);
	const uint32_t *idx = vb.Current();
	float2 *sxy = mem.get<float2>(m);
	uint8_t *sin = mem.get<uint8_t>(m), *status = mem.get<uint8_t>(m);
	double *ssc = mem.get<double>(m);
	k_sp_gather<<<g, NT, 0, stream>>>(idx, m, xy, inside, score, sxy, sin, ssc);
	CUDA_LAUNCH_CHECK();
	step("gpu presort", &ts);

	/* The batched filter. */
	float2 *lxy = mem.get<float2>(m), *cxy = mem.get<float2>(bmax);
	uint32_t *lpos = mem.get<uint32_t>(m), *cpos = mem.get<uint32_t>(bmax);
	uint32_t *sel = mem.get<uint32_t>(bmax);
	uint8_t *cin = mem.get<uint8_t>(bmax);
	for (size_t b0 = 0, bs = BFIRST; b0 < m; b0 += bs, bs = std::min<size_t>(2 * bs, BMAX)) {
		uint32_t nb = (uint32_t)std::min<size_t>(bs, m - b0);
		unsigned gb = (unsigned)CEIL_DIV(nb, NT);
		k_sp_scan<H><<<gb, NT, 0, stream>>>(sxy + b0, sin + b0, nb, nullptr, sxy, lxy, cnt,
		    0, h, tol, flag, status, nullptr, b0);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, sel, cnt + 1, nb);
		k_sp_take<<<gb, NT, 0, stream>>>(sel, cnt + 1, nb, b0, sxy, sin, cxy, cin, cpos);
		CUDA_LAUNCH_CHECK();
		CUDA_CHECK(cudaMemsetAsync(flag, 0, nb, stream));
		k_sp_scan<H><<<gb, NT, 0, stream>>>(cxy, cin, nb, cnt + 1, nullptr, cxy, cnt + 1, 1,
		    h, tol, flag, status, cpos, 0);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, sel, cnt + 2, nb);
		k_sp_append<<<gb, NT, 0, stream>>>(sel, cnt + 2, nb, cnt, cxy, cpos, lxy, lpos);
		CUDA_LAUNCH_CHECK();
		k_bump<<<1, 1, 0, stream>>>(cnt, cnt + 2);
		CUDA_LAUNCH_CHECK();
	}
	step("gpu filter", &ts);
	k_sp_window<H><<<g, NT, 0, stream>>>(lpos, cnt, m, sxy, sin, ssc, h, tol, sky_window(h),
	    status);
	CUDA_LAUNCH_CHECK();
	step("gpu window", &ts);
	uint32_t *start = mem.get<uint32_t>(m), *head = mem.get<uint32_t>(m);
	k_sp_runstart<<<g, NT, 0, stream>>>(sxy, m, start);
	CUDA_LAUNCH_CHECK();
	{
		size_t b = tmp.bytes;
		CUDA_CHECK(cub::DeviceScan::InclusiveScan(tmp.p, b, start, head, cuda::maximum<>{},
		    (int64_t)m, stream));
	}
	CUDA_CHECK(cudaMemsetAsync(flag, 0, n, stream));
	k_sp_keep<<<g, NT, 0, stream>>>(head, status, idx, m, distinct, flag);
	CUDA_LAUNCH_CHECK();
	return finish_run(tmp, flag, surv, cnt + 1, n, keep, t1);
}

/* ---- bounded memory: the skyline of the skylines of parts ---- */

/* run(rows, count, keep) computes the skyline of the given rows (NULL: rows 0..count)
 * into local indexes. Parts of `fit` rows each carry the skyline so far; the skyline
 * of the union is the skyline of the parts' skylines. */
template <class Run>
static size_t
in_parts(size_t n, size_t fit, Run run, uint32_t *keep)
{
	if (n <= fit)
		return run((const uint32_t *)nullptr, n, keep);
	std::vector<uint32_t> rows, cand, local;
	vlog("the input is split into parts of at most %zu rows", fit);
	for (size_t c0 = 0; c0 < n;) {
		if (cand.size() > fit / 2)
			die("the skyline so far (%zu rows) leaves too little device memory for the rest; "
			    "raise --max-device-mem", cand.size());
		size_t take = std::min(n - c0, fit - cand.size());
		rows = cand;
		for (size_t i = c0; i < c0 + take; i++)
			rows.push_back((uint32_t)i);
		local.resize(rows.size());
		size_t m = run(rows.data(), rows.size(), local.data());
		cand.resize(m);
		for (size_t k = 0; k < m; k++)
			cand[k] = rows[local[k]];
		c0 += take;
	}
	std::copy(cand.begin(), cand.end(), keep);
	return cand.size();
}

static size_t
budget(const struct cuda_dev *dev, size_t max_mem)
{
	size_t fr, tot;
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	(void)dev;
	size_t b = fr / 10 * 9;
	if (max_mem)
		b = std::min(b, max_mem);
	return b > ((size_t)1 << 20) ? b - ((size_t)1 << 20) : 0;
}

static size_t
fit_rows(size_t bytes, size_t per_row)
{
	size_t fit = bytes / per_row;
	if (fit < 1024)
		die("--max-device-mem leaves room for fewer than 1024 rows (%zu bytes a row)", per_row);
	return std::min<size_t>(fit, UINT32_MAX - 1);
}

extern "C" void
sky_gpu_init(const struct cuda_dev *dev)
{
	CUDA_CHECK(cudaSetDevice(dev->ids[0]));
	if (stream == nullptr)
		CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
}

template <class T>
static size_t
classic_typed(const struct sky_classic *job, size_t fit, uint32_t *keep)
{
	size_t d = job->d;
	bool packed = job->stride == d;
	for (size_t j = 0; j < d && packed; j++)
		packed = job->col[j] == j;
	std::vector<T> buf;
	auto run = [&](const uint32_t *rows, size_t n, uint32_t *out) -> size_t {
		const T *p = (const T *)job->data;
		if (rows != nullptr || !packed) {
			buf.resize(n * d);
			sky_pack_rows(job, rows, n, buf.data());
			p = buf.data();
		}
		if constexpr (sizeof(T) == 8)
			return classic_run<T, uint64_t>(p, n, (int)d, job->maxpref, job->distinct, out);
		else
			return classic_run<T, uint32_t>(p, n, (int)d, job->maxpref, job->distinct, out);
	};
	return in_parts(job->n, fit, run, keep);
}

extern "C" size_t
sky_classic_gpu(const struct sky_classic *job, const struct cuda_dev *dev, size_t max_mem,
    uint32_t *keep)
{
	sky_gpu_init(dev);
	size_t fit = fit_rows(budget(dev, max_mem), classic_row_bytes(job->d, job->f64));
	if (job->f64)
		return classic_typed<double>(job, fit, keep);
	return classic_typed<float>(job, fit, keep);
}

extern "C" size_t
sky_spatial_gpu(const struct sky_spatial *job, const struct cuda_dev *dev, size_t max_mem,
    uint32_t *keep)
{
	int h = (int)job->h;
	if (h > MAXH) {
		vlog("the hull has %d vertices, more than the GPU path holds (%d): using the CPU",
		    h, MAXH);
		return sky_spatial_cpu(job, keep);
	}
	sky_gpu_init(dev);
	CUDA_CHECK(cudaMemcpyToSymbolAsync(c_hull, job->hull, (size_t)h * sizeof(float2), 0,
	    cudaMemcpyHostToDevice, stream));
	size_t fit = fit_rows(budget(dev, max_mem), 140);
	std::vector<float> buf;
	auto run = [&](const uint32_t *rows, size_t n, uint32_t *out) -> size_t {
		const float *p = job->xy;
		if (rows != nullptr) {
			buf.resize(2 * n);
			sky_pack_points(job, rows, n, buf.data());
			p = buf.data();
		}
		if (h <= 1)
			return spatial_run<1>(p, n, h, job->tol, job->distinct, out);
		if (h <= 2)
			return spatial_run<2>(p, n, h, job->tol, job->distinct, out);
		if (h <= 4)
			return spatial_run<4>(p, n, h, job->tol, job->distinct, out);
		if (h <= 8)
			return spatial_run<8>(p, n, h, job->tol, job->distinct, out);
		if (h <= 12)
			return spatial_run<12>(p, n, h, job->tol, job->distinct, out);
		if (h <= 16)
			return spatial_run<16>(p, n, h, job->tol, job->distinct, out);
		return spatial_run<0>(p, n, h, job->tol, job->distinct, out);
	};
	return in_parts(job->n, fit, run, keep);
}
