/* skyline_spatial.cu: the spatial skyline on the GPU (after Hwang, Son, Ahn).
 *
 * The hull of Q sits in constant memory; one pass marks points inside the hull
 * (always in the skyline) and finds pivots (the point of least score and the points
 * nearest the first vertices); a second pass drops what a pivot dominates, and a grid
 * over the survivors (for Son et al.'s R-tree) drops what a point of a neighbouring
 * cell dominates; the rest go through the batched filter of skyline_classic.cu's
 * design, each testing the skyline found so far from its end, then a short window
 * check makes up for the rounded presort scores.
 *
 * Everything runs in one stream: the host launches the whole sequence and waits
 * only for the counts of survivors (which size what follows) and for the result. */
#include <cub/device/device_scan.cuh>
#include <cuda/functional>

#include <cmath>
#include <type_traits>

#include "skyline_dev.cuh"

__constant__ float2 c_hull[SKY_GPU_MAXH];

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

/* The points surv[0..m) in score order: their indexes, points, inside flags and scores. */
struct sorted {
	const uint32_t *idx;
	float2 *xy;
	uint8_t *in;
	double *score;
};

/* Sorted by score, then coordinates (stable: equal points stay in input order, next to
 * each other). tmp holds sort_bytes<uint64_t>(m). */
static struct sorted
presort(Dmem &mem, Temp &tmp, const uint32_t *surv, size_t m, const float2 *xy,
    const uint8_t *inside, const double *score, cudaStream_t st)
{
	uint64_t *kbuf = mem.get<uint64_t>(2 * m);
	uint32_t *vbuf = mem.get<uint32_t>(2 * m);
	cub::DoubleBuffer<uint64_t> kb(kbuf, kbuf + m);
	cub::DoubleBuffer<uint32_t> vb(vbuf, vbuf + m);
	unsigned g = grid_for(m);
	k_sp_xykey<<<g, NT, 0, st>>>(surv, m, xy, kb.Current(), vb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, kb, vb, m, 64, st);
	k_sp_scorekey<<<g, NT, 0, st>>>(vb.Current(), m, score, kb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, kb, vb, m, 63, st);
	struct sorted so = {vb.Current(), mem.get<float2>(m), mem.get<uint8_t>(m),
	    mem.get<double>(m)};
	k_sp_gather<<<g, NT, 0, st>>>(so.idx, m, xy, inside, score, so.xy, so.in, so.score);
	CUDA_LAUNCH_CHECK();
	return so;
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

/* ---- the union of units' skylines, filtered by several GPUs at once ----
 *
 * Each GPU holds the whole union in score order and decides a share of it: a point is
 * kept unless a point that could dominate it does (every point sorted before it, and
 * the window of rounded scores after: sky_window). The BNL filter above is sequential
 * in its batches; this test of each point against a fixed set is not, so the GPUs
 * divide it. Point c tests about c others, and a far point's tests run through more
 * vertices before one rejects, so the cost grows along the order faster than the
 * count: the shares are blocks of NT consecutive points dealt out in turn (block b to
 * GPU b % nw), which gives every GPU the same mix. Equal points test the same others,
 * so they share a fate, as in spatial_run; --distinct keeps the first of them, which
 * sorts first. */

template <int H>
__global__ void __launch_bounds__(NT)
k_sp_against(const float2 *__restrict__ sxy, const uint8_t *__restrict__ sin,
    const double *__restrict__ ssc, uint32_t m, int w, int nw, int h, double tol,
    double win, uint8_t *__restrict__ alive)
{
	constexpr int DH = H > 0 ? H : 1;
	__shared__ float2 tile[TILE];
	__shared__ uint32_t top;
	uint32_t c = ((uint32_t)blockIdx.x * (uint32_t)nw + (uint32_t)w) * NT + threadIdx.x;
	bool mine = c < m, done = !mine || sin[c], dom = false;	/* inside: kept */
	float2 p = mine ? sxy[c] : make_float2(0, 0);
	uint32_t lim = 0;
	if (!done) {
		/* the first point past the window: no dominator sorts there or later */
		double s = ssc[c] * (1 + win);
		uint32_t lo = c + 1, hi = m;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (ssc[mid] <= s)
				lo = mid + 1;
			else
				hi = mid;
		}
		lim = lo;
	}
	double dp[DH];
	vertex_dists(p, h, dp);
	if (threadIdx.x == 0)
		top = 0;
	__syncthreads();
	if (!done)
		atomicMax(&top, lim);
	__syncthreads();
	uint32_t end = top;
	for (uint32_t lo = 0; lo < end; lo += TILE) {
		uint32_t hi = min(lo + TILE, end);
		for (uint32_t i = lo + threadIdx.x; i < hi; i += NT)
			tile[i - lo] = sxy[i];
		__syncthreads();
		if (!done) {
			for (uint32_t k = lo, e = min(hi, lim); k < e; k++) {
				float2 s = tile[k - lo];
				if (same(s, p))
					continue;
				if (dominates<H>(s, p, dp, h, tol)) {
					dom = done = true;
					break;
				}
			}
			done |= lim <= hi;
		}
		/* also the barrier before the next tile overwrites this one */
		if (__syncthreads_and(done))
			break;
	}
	if (mine)
		alive[c] = !dom;
}

/* The share's verdicts onto the union's rows (flag, zeroed before). */
__global__ void
k_sp_mark(const uint8_t *__restrict__ alive, const float2 *__restrict__ sxy,
    const uint32_t *__restrict__ idx, size_t m, int w, int nw, int distinct, uint8_t *flag)
{
	GRID_STRIDE(k, m)
		if ((k / NT) % nw == (size_t)w)
			flag[idx[k]] = alive[k] && (!distinct || k == 0 || !same(sxy[k], sxy[k - 1]));
}

__global__ void
k_sp_iota(uint32_t *v, size_t n)
{
	GRID_STRIDE(i, n)
		v[i] = (uint32_t)i;
}

/* Share w of nw of the work of filtering the n points
 * at host: flag[i] = 1 for each kept point i of the share, 0 elsewhere. */
template <int H>
static void
spatial_share(struct sky_gpu *gp, const float *host, size_t n, int h, double tol,
    int distinct, int w, int nw, uint8_t *flag_host)
{
	cudaStream_t st = gp->stream;
	Dmem mem;
	Temp tmp;
	tmp.need(sort_bytes<uint64_t>(n, st));
	tmp.alloc(mem);
	float2 *xy = mem.get<float2>(n);
	sky_upload(gp, xy, host, n * sizeof *xy);
	uint8_t *inside = mem.get<uint8_t>(n), *alive = mem.get<uint8_t>(n);
	uint8_t *flag = mem.get<uint8_t>(n);
	double *score = mem.get<double>(n);
	unsigned long long *piv = mem.get<unsigned long long>(17);
	uint32_t *all = mem.get<uint32_t>(n);
	unsigned g = grid_for(n);
	k_sp_iota<<<g, NT, 0, st>>>(all, n);
	CUDA_LAUNCH_CHECK();
	CUDA_CHECK(cudaMemsetAsync(piv, 0xff, 17 * sizeof *piv, st));
	k_sp_prep<H><<<g, NT, 0, st>>>(xy, n, h, inside, score, piv);
	CUDA_LAUNCH_CHECK();
	struct sorted so = presort(mem, tmp, all, n, xy, inside, score, st);
	size_t blocks = CEIL_DIV(n, NT), mine = blocks > (size_t)w ? CEIL_DIV(blocks - w, nw) : 0;
	CUDA_CHECK(cudaMemsetAsync(flag, 0, n, st));
	if (mine > 0) {
		k_sp_against<H><<<(unsigned)mine, NT, 0, st>>>(so.xy, so.in, so.score, (uint32_t)n,
		    w, nw, h, tol, sky_window(h), alive);
		CUDA_LAUNCH_CHECK();
		k_sp_mark<<<grid_for(n), NT, 0, st>>>(alive, so.xy, so.idx, n, w, nw, distinct,
		    flag);
		CUDA_LAUNCH_CHECK();
	}
	/* on the worker's stream, as finish_run's copies */
	CUDA_CHECK(cudaMemcpyAsync(flag_host, flag, n, cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaStreamSynchronize(st));
}

template <int H>
static size_t
spatial_run(struct sky_gpu *gp, const float *host, size_t n, int h, double tol, int distinct,
    const struct sky_tune *tu, uint32_t *keep)
{
	cudaStream_t st = gp->stream;
	Dmem mem;
	Temp tmp;
	uint32_t bmax = (uint32_t)std::min<size_t>(tu->batch_max, n);

	tmp.need(sort_bytes<uint64_t>(n, st));
	tmp.need(sort_bytes<uint32_t>(n, st));
	tmp.need(select_bytes(n, st));
	{
		size_t b = 0;
		CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, b, (uint32_t *)nullptr,
		    (uint32_t *)nullptr, cuda::maximum<>{}, (int64_t)n, st));
		tmp.need(b);
	}
	tmp.alloc(mem);

	double t0 = now_sec();
	float2 *xy = mem.get<float2>(n);
	sky_upload(gp, xy, host, n * sizeof *xy);
	CUDA_CHECK(cudaStreamSynchronize(st));
	double t1 = now_sec();
	phase_add(PH_H2D, t1 - t0);

	uint8_t *inside = mem.get<uint8_t>(n), *flag = mem.get<uint8_t>(n);
	double *score = mem.get<double>(n);
	unsigned long long *piv = mem.get<unsigned long long>(17);
	uint32_t *surv = mem.get<uint32_t>(n), *cnt = mem.get<uint32_t>(4);
	CUDA_CHECK(cudaMemsetAsync(piv, 0xff, 17 * sizeof *piv, st));
	CUDA_CHECK(cudaMemsetAsync(cnt, 0, 4 * sizeof *cnt, st));
	unsigned gpiv = (unsigned)std::min<size_t>(CEIL_DIV(n, NT), tu->pivot_blocks);
	k_sp_prep<H><<<gpiv, NT, 0, st>>>(xy, n, h, inside, score, piv);
	CUDA_LAUNCH_CHECK();
	k_sp_prune<H><<<grid_for(n), NT, 0, st>>>(xy, n, h, tol, inside, piv, flag);
	CUDA_LAUNCH_CHECK();
	select_flagged(tmp, flag, surv, cnt + 3, n, st);
	uint32_t m;
	CUDA_CHECK(cudaMemcpyAsync(&m, cnt + 3, sizeof m, cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaStreamSynchronize(st));
	vlog("%u points left after the pivots", m);
	if (m > tu->grid_min) {
		int g = sky_grid_side(m, tu->grid_per_cell, tu->grid_side_max);
		size_t nc = (size_t)g * g;
		struct sky_grid *box = mem.get<struct sky_grid>(1);
		uint32_t *ck = mem.get<uint32_t>(2 * (size_t)m), *cv = mem.get<uint32_t>(2 * (size_t)m);
		uint32_t *cs = mem.get<uint32_t>(nc), *ce = mem.get<uint32_t>(nc);
		cub::DoubleBuffer<uint32_t> kb(ck, ck + m), vb(cv, cv + m);
		k_sp_gridbox<<<1, 1, 0, st>>>(xy, piv, h, g, box);
		CUDA_LAUNCH_CHECK();
		k_sp_gridcell<<<grid_for(m), NT, 0, st>>>(surv, m, xy, box, kb.Current(),
		    vb.Current());
		CUDA_LAUNCH_CHECK();
		sort_pairs<uint32_t>(tmp, kb, vb, m, bits_for(nc - 1), st);
		CUDA_CHECK(cudaMemsetAsync(cs, 0, nc * sizeof *cs, st));
		CUDA_CHECK(cudaMemsetAsync(ce, 0, nc * sizeof *ce, st));
		k_sp_gridbounds<<<grid_for(m), NT, 0, st>>>(kb.Current(), m, cs, ce);
		CUDA_LAUNCH_CHECK();
		k_sp_gridprune<H><<<grid_for(m), NT, 0, st>>>(kb.Current(), vb.Current(), m, g, cs,
		    ce, xy, inside, h, tol, flag);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, surv, cnt + 3, n, st);
		CUDA_CHECK(cudaMemcpyAsync(&m, cnt + 3, sizeof m, cudaMemcpyDeviceToHost, st));
		CUDA_CHECK(cudaStreamSynchronize(st));
		vlog("%u points left after the grid", m);
	}
	double ts = now_sec();
	phase_add("gpu prune", ts - t1);

	struct sorted so = presort(mem, tmp, surv, m, xy, inside, score, st);
	const uint32_t *idx = so.idx;
	float2 *sxy = so.xy;
	uint8_t *sin = so.in, *status = mem.get<uint8_t>(m);
	double *ssc = so.score;
	unsigned g = grid_for(m);
	step("gpu presort", &ts, st);

	/* The batched filter. */
	float2 *lxy = mem.get<float2>(m), *cxy = mem.get<float2>(bmax);
	uint32_t *lpos = mem.get<uint32_t>(m), *cpos = mem.get<uint32_t>(bmax);
	uint32_t *sel = mem.get<uint32_t>(bmax);
	uint8_t *cin = mem.get<uint8_t>(bmax);
	for (size_t b0 = 0, bs = tu->batch_first; b0 < m;
	    b0 += bs, bs = std::min<size_t>(2 * bs, tu->batch_max)) {
		uint32_t nb = (uint32_t)std::min<size_t>(bs, m - b0);
		unsigned gb = (unsigned)CEIL_DIV(nb, NT);
		k_sp_scan<H><<<gb, NT, 0, st>>>(sxy + b0, sin + b0, nb, nullptr, sxy, lxy, cnt,
		    0, h, tol, flag, status, nullptr, b0);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, sel, cnt + 1, nb, st);
		k_sp_take<<<gb, NT, 0, st>>>(sel, cnt + 1, nb, b0, sxy, sin, cxy, cin, cpos);
		CUDA_LAUNCH_CHECK();
		CUDA_CHECK(cudaMemsetAsync(flag, 0, nb, st));
		k_sp_scan<H><<<gb, NT, 0, st>>>(cxy, cin, nb, cnt + 1, nullptr, cxy, cnt + 1, 1,
		    h, tol, flag, status, cpos, 0);
		CUDA_LAUNCH_CHECK();
		select_flagged(tmp, flag, sel, cnt + 2, nb, st);
		k_sp_append<<<gb, NT, 0, st>>>(sel, cnt + 2, nb, cnt, cxy, cpos, lxy, lpos);
		CUDA_LAUNCH_CHECK();
		bump(cnt, cnt + 2, st);
	}
	step("gpu filter", &ts, st);
	k_sp_window<H><<<g, NT, 0, st>>>(lpos, cnt, m, sxy, sin, ssc, h, tol, sky_window(h),
	    status);
	CUDA_LAUNCH_CHECK();
	step("gpu window", &ts, st);
	uint32_t *start = mem.get<uint32_t>(m), *head = mem.get<uint32_t>(m);
	k_sp_runstart<<<g, NT, 0, st>>>(sxy, m, start);
	CUDA_LAUNCH_CHECK();
	{
		size_t b = tmp.bytes;
		CUDA_CHECK(cub::DeviceScan::InclusiveScan(tmp.p, b, start, head, cuda::maximum<>{},
		    (int64_t)m, st));
	}
	CUDA_CHECK(cudaMemsetAsync(flag, 0, n, st));
	k_sp_keep<<<g, NT, 0, st>>>(head, status, idx, m, distinct, flag);
	CUDA_LAUNCH_CHECK();
	return finish_run(tmp, flag, surv, cnt + 1, n, keep, t1, st);
}

/* The hull into this device's constant memory, unless it holds it already: the workers
 * of a divided run set it in their inits (before any of them launches a kernel), so
 * that two workers on one GPU never write it under each other's kernels. */
extern "C" void
sky_gpu_hull(struct sky_gpu *gp, const float *hull, size_t h)
{
	size_t bytes = h * sizeof(float2);
	if (gp->h == h && memcmp(gp->hull, hull, bytes) == 0)
		return;
	CUDA_CHECK(cudaMemcpyToSymbolAsync(c_hull, hull, bytes, 0, cudaMemcpyHostToDevice,
	    gp->stream));
	CUDA_CHECK(cudaStreamSynchronize(gp->stream));
	memcpy(gp->hull, hull, bytes);
	gp->h = h;
}

extern "C" size_t
sky_spatial_fit(struct sky_gpu *gp, size_t max_mem)
{
	return fit_rows(budget(gp, max_mem), 140);
}

/* f(std::integral_constant<int, H>) for the kernels made for hulls of up to H
 * vertices (H == 0: any number). */
template <class F>
static auto
by_hull(int h, F f)
{
	if (h <= 1)
		return f(std::integral_constant<int, 1>());
	if (h <= 2)
		return f(std::integral_constant<int, 2>());
	if (h <= 4)
		return f(std::integral_constant<int, 4>());
	if (h <= 8)
		return f(std::integral_constant<int, 8>());
	if (h <= 12)
		return f(std::integral_constant<int, 12>());
	if (h <= 16)
		return f(std::integral_constant<int, 16>());
	return f(std::integral_constant<int, 0>());
}

extern "C" size_t
sky_spatial_gpu(const struct sky_spatial *job, struct sky_gpu *gp, size_t max_mem,
    uint32_t *keep)
{
	int h = (int)job->h;	/* <= SKY_GPU_MAXH: skyline_run.c gives larger hulls to the CPU */
	sky_gpu_hull(gp, job->hull, job->h);
	size_t fit = sky_spatial_fit(gp, max_mem);
	std::vector<float> buf;
	auto run = [&](const uint32_t *rows, size_t n, uint32_t *out) -> size_t {
		const float *p = job->xy;
		if (rows != nullptr) {
			buf.resize(2 * n);
			sky_pack_points(job, rows, n, buf.data());
			p = buf.data();
		}
		return by_hull(h, [&](auto hc) {
			return spatial_run<decltype(hc)::value>(gp, p, n, h, job->tol, job->distinct,
			    job->tune, out);
		});
	};
	return in_parts(job->n, fit, run, keep);
}

extern "C" void
sky_spatial_gpu_share(const struct sky_spatial *job, struct sky_gpu *gp, int w, int nw,
    uint8_t *flag)
{
	int h = (int)job->h;
	sky_gpu_hull(gp, job->hull, job->h);
	by_hull(h, [&](auto hc) {
		spatial_share<decltype(hc)::value>(gp, job->xy, job->n, h, job->tol, job->distinct,
		    w, nw, flag);
		return 0;
	});
}
