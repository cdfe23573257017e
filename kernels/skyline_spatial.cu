/* skyline_spatial.cu: the spatial skyline on the GPU (after Hwang, Son, Ahn).
 *
 * The hull of Q sits in constant memory; one pass marks points inside the hull
 * (always in the skyline) and finds pivots (the point of least score and the points
 * nearest the first vertices); a second pass drops what a pivot dominates; then each
 * survivor is tested against the survivors in its dominator region (region_filter,
 * below), a grid of them making that a search of the few cells near it.
 *
 * Everything runs in one stream: the host launches the whole sequence and waits
 * only for the counts of survivors (which size what follows) and for the result. */
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

/* ---- the filter: each survivor against the survivors of its dominator region ----
 * The survivors go into a grid of about grid_per_cell points a cell over their own
 * bounding box, and each point outside the hull is tested against the points of the
 * cells that meet its dominator region (skyline.h: sky_region_rows, sky_region_row),
 * a thin sliver beside it: a thread a point, in cell order, so that a warp's points
 * share their cells. What no survivor dominates is in the skyline, since the
 * survivors hold all of it and dominance is transitive. The CPU path
 * (skyline_cpu.c: region_filter) does the same. */

static __device__ __forceinline__ float
key_float(unsigned k)
{
	return __uint_as_float((k >> 31) ? (k & 0x7fffffffu) : ~k);	/* sky_key32 undone */
}

static __device__ __forceinline__ unsigned
warp_reduce(unsigned x, bool least)
{
	for (int o = 16; o > 0; o >>= 1) {
		unsigned y = __shfl_down_sync(0xffffffffu, x, o);
		x = least ? min(x, y) : max(x, y);
	}
	return x;
}

/* The survivors' bounding box as sky_key32 keys: lo = the least x, y (set to ~0
 * before), hi = the greatest (set to 0). */
__global__ void __launch_bounds__(NT)
k_sp_bounds(const uint32_t *__restrict__ surv, size_t m, const float2 *__restrict__ xy,
    unsigned *lo, unsigned *hi)
{
	unsigned ax = ~0u, ay = ~0u, bx = 0, by = 0;
	GRID_STRIDE(k, m) {
		float2 p = xy[surv[k]];
		unsigned kx = sky_key32(p.x), ky = sky_key32(p.y);
		ax = min(ax, kx);
		ay = min(ay, ky);
		bx = max(bx, kx);
		by = max(by, ky);
	}
	ax = warp_reduce(ax, true);
	ay = warp_reduce(ay, true);
	bx = warp_reduce(bx, false);
	by = warp_reduce(by, false);
	if ((threadIdx.x & 31) == 0) {
		atomicMin(lo, ax);
		atomicMin(lo + 1, ay);
		atomicMax(hi, bx);
		atomicMax(hi + 1, by);
	}
}

/* The grid of g x g cells over that box (as skyline_cpu.c's region_filter makes it). */
__global__ void
k_sp_regionbox(const unsigned *__restrict__ lo, const unsigned *__restrict__ hi, int g,
    struct sky_grid *box)
{
	double x0 = key_float(lo[0]), y0 = key_float(lo[1]);
	double x1 = key_float(hi[0]), y1 = key_float(hi[1]);
	struct sky_grid gr = {x0, y0, x1 > x0 ? g / (x1 - x0) : 1, y1 > y0 ? g / (y1 - y0) : 1, g};
	*box = gr;
}

/* The distinct points at cell-sorted positions k (val[k]; start and end each cell's
 * range) of share w of nw (blocks of NT positions dealt out in turn): flag[i] = 1 for
 * each point i that no other dominates, the rest left as they are. */
template <int H>
__global__ void __launch_bounds__(NT)
k_sp_region(const uint32_t *__restrict__ val, size_t m,
    const struct sky_grid *__restrict__ box, const uint32_t *__restrict__ start,
    const uint32_t *__restrict__ end, const float2 *__restrict__ xy,
    const uint8_t *__restrict__ inside, int h, double tol, int w, int nw, uint8_t *flag)
{
	constexpr int DH = H > 0 ? H : 1;
	const struct sky_grid gr = *box;
	const float *hull = (const float *)c_hull;
	GRID_STRIDE(k, m) {
		if ((k / NT) % nw != (size_t)w)
			continue;
		uint32_t i = val[k];
		float2 p = xy[i];
		bool out = false;
		if (!inside[i]) {
			double dp[DH], ylo, yhi;
			vertex_dists(p, h, dp);
			sky_region_rows(hull, h, p.x, p.y, &ylo, &yhi);
			int ra = sky_grid_cell(&gr, ylo, gr.y0, gr.sy);
			int rb = sky_grid_cell(&gr, yhi, gr.y0, gr.sy);
			for (int r = ra; r <= rb && !out; r++) {
				double ya, yb, lo, hi;
				sky_grid_row_band(&gr, r, &ya, &yb);
				if (!sky_region_row(hull, h, p.x, p.y, ya, yb, &lo, &hi))
					continue;
				int ca = sky_grid_cell(&gr, lo, gr.x0, gr.sx);
				int cb = sky_grid_cell(&gr, hi, gr.x0, gr.sx);
				for (int cx = ca; cx <= cb && !out; cx++) {
					uint32_t cc = (uint32_t)r * (uint32_t)gr.g + (uint32_t)cx;
					for (uint32_t j = start[cc]; j < end[cc]; j++) {
						uint32_t zi = val[j];
						float2 q = xy[zi];
						if (zi != i && dominates<H>(q, p, dp, h, tol)) {
							out = true;
							break;
						}
					}
				}
			}
		}
		flag[i] = !out;
	}
}

__global__ void
k_sp_iota(uint32_t *v, size_t n)
{
	GRID_STRIDE(i, n)
		v[i] = (uint32_t)i;
}

/* Temporary bytes the filter's cub calls take for m points. */
static size_t
region_bytes(size_t m, cudaStream_t st)
{
	return sort_bytes<uint32_t>(m, st);
}

/* Share w of nw of the filter of the distinct points pts[0..m) of xy (inside: their
 * inside flags): flag[i] = 1 for each point i of the share that no other dominates
 * (flag zeroed before). tmp holds region_bytes(m). */
template <int H>
static void
region_filter(Dmem &mem, Temp &tmp, const uint32_t *pts, size_t m, const float2 *xy,
    const uint8_t *inside, int h, double tol, const struct sky_tune *tu, int w, int nw,
    uint8_t *flag, cudaStream_t st)
{
	if (m == 0)
		return;
	int g = sky_grid_side(m, tu->grid_per_cell, tu->grid_side_max);
	size_t nc = (size_t)g * g;
	unsigned *lohi = mem.get<unsigned>(4);
	struct sky_grid *box = mem.get<struct sky_grid>(1);
	uint32_t *ck = mem.get<uint32_t>(2 * m), *cv = mem.get<uint32_t>(2 * m);
	uint32_t *cs = mem.get<uint32_t>(nc), *ce = mem.get<uint32_t>(nc);
	cub::DoubleBuffer<uint32_t> kb(ck, ck + m), vb(cv, cv + m);
	CUDA_CHECK(cudaMemsetAsync(lohi, 0xff, 2 * sizeof *lohi, st));
	CUDA_CHECK(cudaMemsetAsync(lohi + 2, 0, 2 * sizeof *lohi, st));
	k_sp_bounds<<<grid_for(m), NT, 0, st>>>(pts, m, xy, lohi, lohi + 2);
	CUDA_LAUNCH_CHECK();
	k_sp_regionbox<<<1, 1, 0, st>>>(lohi, lohi + 2, g, box);
	CUDA_LAUNCH_CHECK();
	k_sp_gridcell<<<grid_for(m), NT, 0, st>>>(pts, m, xy, box, kb.Current(), vb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint32_t>(tmp, kb, vb, m, bits_for(nc - 1), st);
	CUDA_CHECK(cudaMemsetAsync(cs, 0, nc * sizeof *cs, st));
	CUDA_CHECK(cudaMemsetAsync(ce, 0, nc * sizeof *ce, st));
	k_sp_gridbounds<<<grid_for(m), NT, 0, st>>>(kb.Current(), m, cs, ce);
	CUDA_LAUNCH_CHECK();
	k_sp_region<H><<<grid_for(m), NT, 0, st>>>(vb.Current(), m, box, cs, ce,
	    xy, inside, h, tol, w, nw, flag);
	CUDA_LAUNCH_CHECK();
}

/* Survivors' keys by coordinates, for runs of equal points. */
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

/* hf[k] = 1 where a run of equal points begins (idx sorted by coordinates). */
__global__ void
k_sp_runhead(const uint32_t *__restrict__ idx, size_t m, const float2 *__restrict__ xy,
    uint8_t *hf)
{
	GRID_STRIDE(k, m)
		hf[k] = k == 0 || !same(xy[idx[k]], xy[idx[k - 1]]);
}

__global__ void
k_sp_pick(const uint32_t *__restrict__ pos, size_t nh, const uint32_t *__restrict__ idx,
    uint32_t *out)
{
	GRID_STRIDE(t, nh)
		out[t] = idx[pos[t]];
}

/* Each run of equal points (run t: idx[pos[t]] .. before pos[t + 1], or m) takes its
 * first point's verdict; with distinct, the first alone stays. */
__global__ void
k_sp_runs(const uint32_t *__restrict__ pos, size_t nh, size_t m,
    const uint32_t *__restrict__ idx, int distinct, uint8_t *flag)
{
	GRID_STRIDE(t, nh) {
		uint8_t v = flag[idx[pos[t]]] && !distinct;
		size_t e = t + 1 < nh ? pos[t + 1] : m;
		for (size_t k = pos[t] + 1; k < e; k++)
			flag[idx[k]] = v;
	}
}

/* Temporary bytes spatial_filter takes for m points. */
static size_t
spatial_filter_bytes(size_t m, cudaStream_t st)
{
	return std::max({region_bytes(m, st), sort_bytes<uint64_t>(m, st), select_bytes(m, st)});
}

/* Share w of nw of the skyline of the survivors surv[0..m) (all of the skyline's
 * points among them; dominance is transitive, so what no survivor dominates is in
 * it): flag[i] = 1 for each kept point i of the share, 0 for the rest of the n. The
 * filter runs on the first of each run of equal points (sorted by coordinates, stably,
 * so in input order), whose fate the rest share. cnt: a device counter. */
template <int H>
static void
spatial_filter(Dmem &mem, Temp &tmp, const uint32_t *surv, size_t m, size_t n,
    const float2 *xy, const uint8_t *inside, int h, double tol, int distinct,
    const struct sky_tune *tu, int w, int nw, uint8_t *flag, uint32_t *cnt, cudaStream_t st)
{
	CUDA_CHECK(cudaMemsetAsync(flag, 0, n, st));
	if (m == 0)
		return;
	uint64_t *kbuf = mem.get<uint64_t>(2 * m);
	uint32_t *vbuf = mem.get<uint32_t>(2 * m), *pos = mem.get<uint32_t>(m);
	uint8_t *hf = mem.get<uint8_t>(m);
	cub::DoubleBuffer<uint64_t> kb(kbuf, kbuf + m);
	cub::DoubleBuffer<uint32_t> vb(vbuf, vbuf + m);
	k_sp_xykey<<<grid_for(m), NT, 0, st>>>(surv, m, xy, kb.Current(), vb.Current());
	CUDA_LAUNCH_CHECK();
	sort_pairs<uint64_t>(tmp, kb, vb, m, 64, st);
	const uint32_t *idx = vb.Current();
	k_sp_runhead<<<grid_for(m), NT, 0, st>>>(idx, m, xy, hf);
	CUDA_LAUNCH_CHECK();
	select_flagged(tmp, hf, pos, cnt, m, st);
	uint32_t nh;
	CUDA_CHECK(cudaMemcpyAsync(&nh, cnt, sizeof nh, cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaStreamSynchronize(st));
	uint32_t *head = mem.get<uint32_t>(nh);
	k_sp_pick<<<grid_for(nh), NT, 0, st>>>(pos, nh, idx, head);
	CUDA_LAUNCH_CHECK();
	region_filter<H>(mem, tmp, head, nh, xy, inside, h, tol, tu, w, nw, flag, st);
	k_sp_runs<<<grid_for(nh), NT, 0, st>>>(pos, nh, m, idx, distinct, flag);
	CUDA_LAUNCH_CHECK();
}

/* ---- the union of units' skylines, filtered by several GPUs at once ----
 * Each GPU takes share w of nw of the union's points (skyline_divide.c), tested against
 * all of them, and returns its verdicts; the host ORs them. */
template <int H>
static void
spatial_share(struct sky_gpu *gp, const float *host, size_t n, int h, double tol,
    int distinct, const struct sky_tune *tu, int w, int nw, uint8_t *flag_host)
{
	cudaStream_t st = gp->stream;
	Dmem mem;
	Temp tmp;
	tmp.need(spatial_filter_bytes(n, st));
	tmp.alloc(mem);
	float2 *xy = mem.get<float2>(n);
	sky_upload(gp, xy, host, n * sizeof *xy);
	uint8_t *inside = mem.get<uint8_t>(n), *flag = mem.get<uint8_t>(n);
	double *score = mem.get<double>(n);
	unsigned long long *piv = mem.get<unsigned long long>(17);
	uint32_t *all = mem.get<uint32_t>(n), *cnt = mem.get<uint32_t>(1);
	k_sp_iota<<<grid_for(n), NT, 0, st>>>(all, n);
	CUDA_LAUNCH_CHECK();
	CUDA_CHECK(cudaMemsetAsync(piv, 0xff, 17 * sizeof *piv, st));
	k_sp_prep<H><<<grid_for(n), NT, 0, st>>>(xy, n, h, inside, score, piv);	/* inside */
	CUDA_LAUNCH_CHECK();
	spatial_filter<H>(mem, tmp, all, n, n, xy, inside, h, tol, distinct, tu, w, nw, flag, cnt,
	    st);
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

	tmp.need(spatial_filter_bytes(n, st));
	tmp.need(select_bytes(n, st));
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
	double ts = now_sec();
	phase_add("gpu prune", ts - t1);

	spatial_filter<H>(mem, tmp, surv, m, n, xy, inside, h, tol, distinct, tu, 0, 1, flag,
	    cnt + 2, st);
	step("gpu filter", &ts, st);
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
		    job->tune, w, nw, flag);
		return 0;
	});
}
