/* skyline_classic.cu: the classic skyline on the GPU.
 *
 * Per chosen column a radix sort gives dense ranks; rows are presorted by their rank
 * sum (a dominating row sorts strictly first) and filtered in batches of growing size.
 * A batch is first tested against the skyline so far (phase a), then its survivors
 * against each other in sorted order (phase b), and what is left is appended to the
 * skyline. Each thread holds one candidate in registers; its block streams the
 * skyline through shared memory in tiles and stops when all of its candidates are
 * settled. Candidates are grouped by their quartile masks (after SkyAlign), so that a
 * warp skips the skyline points that cannot dominate any of its candidates together.
 *
 * Everything runs in one stream: the host launches the whole sequence and waits
 * only for the counts of survivors (which size what follows) and for the result. */
#include <cub/device/device_scan.cuh>

#include "skyline_dev.cuh"

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
    int own, uint8_t *flag, uint8_t *status, const uint32_t *spos, size_t sbase,
    cudaStream_t st)
{
	unsigned g = (unsigned)CEIL_DIV(nmax, NT);
	if constexpr (D == 0)
		k_scan_wide<<<g, NT, 0, st>>>(cv, cm, perm, nmax, ncand, lv, lm, llen, own, d,
		    flag, status, spos, sbase);
	else
		k_scan<D><<<g, NT, 0, st>>>(cv, cm, perm, nmax, ncand, lv, lm, llen, own, flag,
		    status, spos, sbase);
	CUDA_LAUNCH_CHECK();
}

typedef void (*scan_launcher)(int, const uint32_t *, const uint32_t *, const uint32_t *,
    uint32_t, const uint32_t *, const uint32_t *, const uint32_t *, const uint32_t *, int,
    uint8_t *, uint8_t *, const uint32_t *, size_t, cudaStream_t);

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
classic_run(struct sky_gpu *gp, const T *host, size_t n, int d, const unsigned char *maxpref,
    int distinct, const struct sky_tune *tu, uint32_t *keep)
{
	cudaStream_t st = gp->stream;
	Dmem mem;
	Temp tmp;
	int dd;
	scan_launcher scan = pick_width(d, &dd);
	uint32_t bmax = (uint32_t)std::min<size_t>(tu->batch_max, n);

	tmp.need(sort_bytes<K>(n, st));
	tmp.need(sort_bytes<uint64_t>(n, st));
	tmp.need(sort_bytes<uint32_t>(bmax, st));
	tmp.need(select_bytes(n, st));
	{
		size_t b = 0;
		CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, b, (uint32_t *)nullptr,
		    (uint32_t *)nullptr, (int64_t)n, st));
		tmp.need(b);
	}
	tmp.alloc(mem);

	double t0 = now_sec();
	T *raw = mem.get<T>((size_t)n * d);
	sky_upload(gp, raw, host, (size_t)n * d * sizeof(T));
	CUDA_CHECK(cudaStreamSynchronize(st));
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
		k_keys<T, K><<<g, NT, 0, st>>>(raw, n, d, j, maxpref[j], kb.Current(),
		    vb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<K>(tmp, kb, vb, n, 8 * sizeof(K), st);
		k_newvalue<K><<<g, NT, 0, st>>>(kb.Current(), n, u32);
		CUDA_LAUNCH_CHECK();
		size_t b = tmp.bytes;
		CUDA_CHECK(cub::DeviceScan::InclusiveSum(tmp.p, b, u32, u32 + n, (int64_t)n, st));
		k_rank_scatter<<<g, NT, 0, st>>>(u32 + n, vb.Current(), n, r + (size_t)j * n,
		    q + 3 * j);
		CUDA_LAUNCH_CHECK();
	}

	step("gpu rank", &ts, st);

	/* Presort by rank sum. */
	uint32_t *mask = mem.get<uint32_t>(n);
	cub::DoubleBuffer<uint64_t> sk(kbuf, kbuf + n);
	cub::DoubleBuffer<uint32_t> sv(vbuf, vbuf + n);
	k_score<<<g, NT, 0, st>>>(r, n, d, q, sk.Current(), mask, sv.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, sk, sv, n, bits_for((uint64_t)d * n), st);
	const uint32_t *idx = sv.Current();
	uint32_t *v = mem.get<uint32_t>((size_t)n * dd), *vm = mem.get<uint32_t>(n);
	k_gather_rows<<<g, NT, 0, st>>>(r, n, d, dd, idx, mask, v, vm);
	CUDA_LAUNCH_CHECK();
	step("gpu presort", &ts, st);

	/* The batched filter. */
	uint32_t *sky_v = mem.get<uint32_t>((size_t)n * dd), *sky_m = mem.get<uint32_t>(n);
	uint32_t *cv = mem.get<uint32_t>((size_t)bmax * dd), *cm = mem.get<uint32_t>(bmax);
	uint32_t *cpos = mem.get<uint32_t>(bmax), *sel = mem.get<uint32_t>(bmax);
	uint32_t *pk = mem.get<uint32_t>(2 * (size_t)bmax), *pv = mem.get<uint32_t>(2 * (size_t)bmax);
	uint32_t *cnt = mem.get<uint32_t>(3);	/* skyline size, phase a and b survivors */
	uint8_t *flag = mem.get<uint8_t>(std::max<size_t>(n, bmax)), *status = mem.get<uint8_t>(n);
	CUDA_CHECK(cudaMemsetAsync(cnt, 0, 3 * sizeof *cnt, st));
	for (size_t b0 = 0, bs = tu->batch_first; b0 < n;
	    b0 += bs, bs = std::min<size_t>(2 * bs, tu->batch_max)) {
		uint32_t nb = (uint32_t)std::min<size_t>(bs, n - b0);
		unsigned gb = grid_for(nb);
		/* a: the batch, grouped by mask, against the skyline so far */
		cub::DoubleBuffer<uint32_t> pkb(pk, pk + bmax), pvb(pv, pv + bmax);
		k_mask_keys<<<gb, NT, 0, st>>>(vm + b0, nb, nullptr, pkb.Current(), pvb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, pkb, pvb, nb, 32, st);
		scan(d, v + b0 * dd, vm + b0, pvb.Current(), nb, nullptr, sky_v, sky_m, cnt, 0, flag,
		    status, nullptr, b0, st);
		select_flagged(tmp, flag, sel, cnt + 1, nb, st);
		k_take<<<gb, NT, 0, st>>>(sel, cnt + 1, nb, b0, dd, v, vm, cv, cm, cpos);
		CUDA_LAUNCH_CHECK();
		/* b: the survivors against those before them */
		cub::DoubleBuffer<uint32_t> pkb2(pk, pk + bmax), pvb2(pv, pv + bmax);
		k_mask_keys<<<gb, NT, 0, st>>>(cm, nb, cnt + 1, pkb2.Current(), pvb2.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, pkb2, pvb2, nb, 32, st);
		CUDA_CHECK(cudaMemsetAsync(flag, 0, nb, st));
		scan(d, cv, cm, pvb2.Current(), nb, cnt + 1, cv, cm, cnt + 1, 1, flag, status, cpos, 0, st);
		select_flagged(tmp, flag, sel, cnt + 2, nb, st);
		k_append<<<gb, NT, 0, st>>>(sel, cnt + 2, nb, cnt, dd, cv, cm, sky_v, sky_m);
		CUDA_LAUNCH_CHECK();
		bump(cnt, cnt + 2, st);
	}
	step("gpu filter", &ts, st);
	k_keep<<<g, NT, 0, st>>>(status, idx, n, distinct, flag);
	CUDA_LAUNCH_CHECK();
	return finish_run(tmp, flag, u32, cnt + 1, n, keep, t1, st);
}

template <class T>
static size_t
classic_typed(const struct sky_classic *job, struct sky_gpu *gp, size_t fit, uint32_t *keep)
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
			return classic_run<T, uint64_t>(gp, p, n, (int)d, job->maxpref, job->distinct,
			    job->tune, out);
		else
			return classic_run<T, uint32_t>(gp, p, n, (int)d, job->maxpref, job->distinct,
			    job->tune, out);
	};
	return in_parts(job->n, fit, run, keep);
}

extern "C" size_t
sky_classic_fit(const struct sky_classic *job, struct sky_gpu *gp, size_t max_mem)
{
	return fit_rows(budget(gp, max_mem), classic_row_bytes(job->d, job->f64));
}

extern "C" size_t
sky_classic_gpu(const struct sky_classic *job, struct sky_gpu *gp, size_t max_mem,
    uint32_t *keep)
{
	size_t fit = sky_classic_fit(job, gp, max_mem);
	if (job->f64)
		return classic_typed<double>(job, gp, fit, keep);
	return classic_typed<float>(job, gp, fit, keep);
}
