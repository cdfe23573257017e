/* docsim_exact.cu: dense top-k lists from TF32 products, made exact. The tile loop ranks
 * scores from tensor cores (operands read as TF32, float32 sums) into lists of k +
 * DS_FAST_EXTRA; here, after the last tile, each row's list becomes the k best of the
 * float64 scores, the lines the CPU path prints:
 *   - a TF32 score is within B (ds_fast_bound, docsim.h) of the float64 score of the
 *     same pair;
 *   - a column left out of a full list scored at most the list's last, s_last, so at
 *     most s_last + B in float64; the list's k first scored at least its k-th, s_k, so k
 *     columns score at least s_k - B in float64;
 *   - so when s_last < s_k - 2B, no column outside the list reaches the k best, nor
 *     ties with the k-th once scores are rounded to float (B holds that rounding): the
 *     k best are among the list's candidates, which are rescored in float64 and ranked.
 *     A list not full holds every column its row was offered.
 *   - otherwise (many columns within 2B of the k-th: near-copies, or the dense scores
 *     of a long list) the row is rechecked: gathered with the other such rows, scored
 *     against every column uploaded by a float32 GEMM (IEEE float32, no TF32: DS_MM_F32), whose
 *     error bound B32 (ds_f32_bound) is some 9 times smaller, and ranked into a new
 *     list of k + DS_FAST_EXTRA, which the same rule with B32 makes exact;
 *   - a row whose float32 list still leaves too small a gap (columns within 2 B32 of
 *     the k-th: copies, or a cluster of near-copies larger than the list) is crowded:
 *     the float32 GEMM is run again for the batch's crowded rows, and every column
 *     whose float32 score is at least the list's k-th less 2 B32 is kept as a
 *     candidate (by the same bound no other column can reach the k best), then all of
 *     them are rescored in float64 and ranked. So a corpus of clusters costs two
 *     float32 GEMMs, not a float64 pass over every column for every row (100,000 x
 *     1024 in clusters of 100 on the H200: 42.7 s of rows computed whole before).
 *   - only a crowded row with more candidates than the batch's room for them (a
 *     cluster of copies near the corpus's size) is computed whole in float64.
 * -v counts the rows rechecked, crowded and computed whole.
 * With -t, the tile loop keeps candidates down to the threshold less B, and the exact
 * scores must pass it. Every float64 score here is ds_dot_fd's (docsim.h), the CPU path's
 * own sum in its order, so the GPU's lines are the CPU's bit for bit.
 * For a worker of a divided run, "every column" is a superset of those it was offered,
 * so its lists stay exact over what it covers; but a rechecked row's list then holds
 * pairs that other workers (or ranks) scored and list too, and the merge
 * (ds_merge_lists, docsim_split.c) takes each candidate once. */
#include <math.h>

#include "docsim_dev.cuh"
#include "docsim_wlist.cuh"

#define EXACT_BLOCK 256	/* k_exact's threads a block: 8 warps, each its own dots tile */
#define PAIRS_BLOCK 128	/* k_pairs_exact's: 4 warps, each two tiles (35 KB a block) */

/* A warp's tile for cand_dots: 32 columns' chunks of 32 floats, a row a lane's column,
 * and the row x's chunk (row 32); 33 floats a row, so that a lane reading along its own
 * row and the warp writing along one meet no bank twice. */
struct dots_tile {
	float c[33][33];
};

/* A lane's products xr[e] cr[e] of the 32-column piece from column c0 (those below m)
 * added to ds_dot_fd's four sums in its order: column c to sum c mod 4 while c < m4 (m
 * less m mod 4), the rest to s0. c0 is a multiple of 32, so c mod 4 is e mod 4. */
__device__ static inline void
fd_piece(const float *xr, const float *cr, size_t c0, size_t m, size_t m4, double &s0,
    double &s1, double &s2, double &s3)
{
	for (size_t e = 0; e < 32 && c0 + e < m; e++) {
		double p = (double)xr[e] * cr[e];
		int q = c0 + e < m4 ? (int)(e & 3) : 0;
		if (q == 0)
			s0 += p;
		else if (q == 1)
			s1 += p;
		else if (q == 2)
			s2 += p;
		else
			s3 += p;
	}
}

/* Each lane's ds_dot_fd(x, cols + id * m, m) for its candidate id (DS_NONE: none,
 * -INFINITY returned), the same bits: the warp loads 32 floats of each candidate's
 * column at once (coalesced, where a lane reading its own column touches 32 lines a
 * load), 16 columns' loads in flight, transposed through shared memory, and each lane
 * adds its column's products in ds_dot_fd's order: four running sums by k mod 4 up to
 * m less m mod 4, the rest into the first, then (s0 + s1) + (s2 + s3). */
__device__ static float
cand_dots(const float *x, const float *cols, size_t m, int32_t id, int lane, struct dots_tile *t)
{
	unsigned have = __ballot_sync(FULL, id != DS_NONE);
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t m4 = m - m % 4;
	for (size_t c0 = 0; c0 < m; c0 += 32) {
		bool in = c0 + lane < m;
		/* 16 columns' loads in flight at once: one at a time, each waited for, made
		 * this loop latency-bound (ncu on the H200, 100k rows of 42: 15.4 ms, the
		 * DRAM 15% busy; 11.9 ms with 16) */
		for (int g0 = 0; g0 < 32; g0 += 16) {
			if ((have >> g0 & 0xffffu) == 0)
				continue;
			float v[16];
#pragma unroll
			for (int u = 0; u < 16; u++) {
				int32_t cid = __shfl_sync(FULL, id, g0 + u);
				v[u] = in && (have >> (g0 + u) & 1) ? cols[(size_t)cid * m + c0 + lane] : 0.0f;
			}
#pragma unroll
			for (int u = 0; u < 16; u++)
				t->c[g0 + u][lane] = v[u];
		}
		t->c[32][lane] = in ? x[c0 + lane] : 0.0f;
		__syncwarp();
		if (id != DS_NONE) {
			const float *cr = t->c[lane], *xr = t->c[32];
			if (c0 + 32 <= m4) {
#pragma unroll
				for (int e = 0; e < 32; e += 4) {
					s0 += (double)xr[e] * cr[e];
					s1 += (double)xr[e + 1] * cr[e + 1];
					s2 += (double)xr[e + 2] * cr[e + 2];
					s3 += (double)xr[e + 3] * cr[e + 3];
				}
			} else {
				fd_piece(xr, cr, c0, m, m4, s0, s1, s2, s3);
			}
		}
		__syncwarp();
	}
	return id != DS_NONE ? (float)((s0 + s1) + (s2 + s3)) : -INFINITY;
}

/* List row w (kl entries, best first, unfilled ones DS_NONE) of document i into the k
 * best float64 scores, i's row of fs/fi, by a warp; a lane scores candidates lane and
 * lane + 32 (kl <= 64). Returns 0 when the list's gap is under `gap`, writing nothing
 * but the emptied output: the caller rechecks the row. */
__device__ static int
exact_from_list(size_t w, size_t i, int lane, const float *x, const float *cols, size_t m, const float *tops,
    const int32_t *topi, int k, int kl, double gap, int use_thr, double thr, float *os, int32_t *oi,
    struct dots_tile *tile)
{
	const float *ls = tops + w * (size_t)kl;
	const int32_t *li = topi + w * (size_t)kl;
	int32_t id[2];
	id[0] = lane < kl ? li[lane] : DS_NONE;
	id[1] = lane + 32 < kl ? li[lane + 32] : DS_NONE;
	int filled = __popc(__ballot_sync(FULL, id[0] != DS_NONE)) + __popc(__ballot_sync(FULL, id[1] != DS_NONE));
	if (filled == 0)
		return 1;
	if (filled == kl && (double)ls[kl - 1] >= (double)ls[k - 1] - gap) {
		/* A row of zeros (an empty document) scores 0 with every column, in TF32 too,
		 * so its list is full of ties: none passes a positive threshold (the default,
		 * scores above 0), which spares rechecking it; with -t 0 or less the recheck
		 * lists them. (Asked only here: reading the row costs every decided row.) */
		if (use_thr && thr > 0) {
			bool nz = false;
			for (size_t t = lane; t < m; t += 32)
				nz = nz || x[t] != 0.0f;
			if (!__any_sync(FULL, nz))
				return 1;
		}
		return 0;
	}
	/* the k best are among the candidates: rank their float64 scores */
	float key[2];
	bool pass[2];
	for (int h = 0; h < 2; h++) {
		key[h] = h == 0 || filled > 32 ? cand_dots(x, cols, m, id[h], lane, tile) : -INFINITY;
		pass[h] = id[h] != DS_NONE && ds_passes(key[h], use_thr, thr);
	}
	int rank[2] = {0, 0};
	for (int t = 0; t < filled; t++) {
		int h = t >> 5;
		float kt = __shfl_sync(FULL, key[h], t & 31);
		int32_t it = __shfl_sync(FULL, id[h], t & 31);
		bool pt = __shfl_sync(FULL, (int)pass[h], t & 31) != 0;
		for (int u = 0; u < 2; u++)
			rank[u] += pt && ds_better(kt, it, key[u], id[u]);
	}
	for (int h = 0; h < 2; h++)
		if (pass[h] && rank[h] < k) {
			os[rank[h]] = key[h];
			oi[rank[h]] = id[h];
		}
	return 1;
}

/* Document i's row in float64 against n columns, kept in the warp's registers as
 * k_rowsel_reg keeps a list (k <= 32), into os/oi (emptied by the caller): the columns
 * ids[0, n), or with ids NULL every column [0, n) (i's own left out for all pairs), 32
 * at a time through cand_dots. */
__device__ static void
exact_cols(size_t i, int lane, const float *x, const float *cols, size_t m, const int32_t *ids, size_t n,
    int sym, int k, int use_thr, double thr, float *os, int32_t *oi, struct dots_tile *tile)
{
	wlist l = wlist_load(os, oi, k, lane);
	float ts;
	int32_t ti;
	wlist_last(l, k, &ts, &ti);
	for (size_t base = 0; base < n; base += 32) {
		int32_t j = DS_NONE;
		if (base + lane < n)
			j = ids != NULL ? ids[base + lane] : (int32_t)(base + lane);
		if (sym && (size_t)j == i)
			j = DS_NONE;
		float v = cand_dots(x, cols, m, j, lane, tile);
		bool cand = j != DS_NONE && ds_passes(v, use_thr, thr) && ds_better(v, j, ts, ti);
		wlist_offer(l, k, lane, cand, v, j, &ts, &ti);
	}
	wlist_store(l, os, oi, k, lane);
}

/* A warp a list row w < nrows, the warps striding over them: the row's document is w,
 * or ids[w] for gathered rows. A row whose gap is too small goes on und as its
 * document (when given: the TF32 lists, to be rechecked; counts[0]), or on crowd as w
 * (when given: a batch of float32 lists; counts[3]), or is computed whole (every row
 * when kl is 0; counts[2]). */
__global__ void
k_exact(const float *rows, const float *cols, size_t m, size_t nrows, size_t ncols, int sym,
    const int32_t *ids, const float *tops, const int32_t *topi, int k, int kl, double gap, int use_thr,
    double thr, float *fs, int32_t *fi, int32_t *und, int32_t *crowd, unsigned long long *counts)
{
	__shared__ struct dots_tile tiles[EXACT_BLOCK / 32];
	size_t w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5, nw = ((size_t)gridDim.x * blockDim.x) >> 5;
	int lane = threadIdx.x & 31;
	struct dots_tile *tile = &tiles[threadIdx.x >> 5];
	for (size_t w = w0; w < nrows; w += nw) {
		size_t i = ids != NULL ? (size_t)ids[w] : w;
		const float *x = rows + i * m;
		float *os = fs + i * (size_t)k;
		int32_t *oi = fi + i * (size_t)k;
		for (int t = lane; t < k; t += 32) {
			os[t] = -INFINITY;
			oi[t] = DS_NONE;
		}
		__syncwarp();
		if (kl > 0 && exact_from_list(w, i, lane, x, cols, m, tops, topi, k, kl, gap, use_thr, thr, os, oi, tile))
			continue;
		if (und != NULL) {
			if (lane == 0)
				und[atomicAdd(&counts[0], 1ull)] = (int32_t)i;
			continue;
		}
		if (crowd != NULL) {
			if (lane == 0)
				crowd[atomicAdd(&counts[3], 1ull)] = (int32_t)w;
			continue;
		}
		if (lane == 0)
			atomicAdd(&counts[2], 1ull);
		exact_cols(i, lane, x, cols, m, NULL, ncols, sym, k, use_thr, thr, os, oi, tile);
	}
}

/* The crowded rows' candidates from S (nw x nc: their float32 scores against columns
 * [c0, c0 + nc)): crowd[w2] is row w of the batch (document ids[w], float32 list at
 * tops + w kl), and a column whose score is at least the list's k-th less gap (2 B32),
 * and at least thr_sel (-t less B32) with -t, goes to the row's cr slots at
 * cand + w2 cr; cnt[w2] counts them all, so a count over cr says some were lost. */
__global__ void
k_collect(const float *S, size_t nw, size_t nc, size_t c0, int sym, const int32_t *ids, const int32_t *crowd,
    const float *tops, size_t kl, int k, double gap, int use_thr, double thr_sel, unsigned *cnt, int32_t *cand,
    size_t cr)
{
	for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < nw * nc; t += (size_t)gridDim.x * blockDim.x) {
		size_t w2 = t / nc, j = c0 + t % nc;
		int32_t w = crowd[w2];
		if (sym && j == (size_t)ids[w])
			continue;
		double cut = (double)tops[(size_t)w * kl + k - 1] - gap;
		if (use_thr)
			cut = fmax(cut, thr_sel);
		if ((double)S[t] >= cut) {
			unsigned slot = atomicAdd(&cnt[w2], 1u);
			if (slot < cr)
				cand[w2 * cr + slot] = (int32_t)j;
		}
	}
}

/* The crowded rows' lists (fs/fi emptied by k_exact), a warp a row: from their
 * candidates (k_collect), or, where a row had more than cr (or cnt is NULL: no room
 * for any), from every column [0, ncols), counted in *whole. */
__global__ void
k_crowded(const float *rows, const float *cols, size_t m, size_t ncols, int sym, const int32_t *ids,
    const int32_t *crowd, size_t nw, const unsigned *cnt, const int32_t *cand, size_t cr, int k, int use_thr,
    double thr, float *fs, int32_t *fi, unsigned long long *whole)
{
	__shared__ struct dots_tile tiles[EXACT_BLOCK / 32];
	size_t w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5, nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
	int lane = threadIdx.x & 31;
	struct dots_tile *tile = &tiles[threadIdx.x >> 5];
	for (size_t w2 = w0; w2 < nw; w2 += nwarps) {
		size_t i = (size_t)ids[crowd[w2]], n = cnt != NULL ? cnt[w2] : SIZE_MAX;
		const float *x = rows + i * m;
		float *os = fs + i * (size_t)k;
		int32_t *oi = fi + i * (size_t)k;
		if (n <= cr) {
			exact_cols(i, lane, x, cols, m, cand + w2 * cr, n, sym, k, use_thr, thr, os, oi, tile);
			continue;
		}
		if (lane == 0)
			atomicAdd(whole, 1ull);
		exact_cols(i, lane, x, cols, m, NULL, ncols, sym, k, use_thr, thr, os, oi, tile);
	}
}

/* -k 0: pairs p[0, n) from TF32 tiles (kept down to the threshold less B) get their
 * float64 scores, ds_dot_fd's of the two rows (the same bits either way round: the
 * products are exact), for the host to keep those that pass. A warp takes 32 pairs at a
 * time, their rows loaded coalesced through two shared tiles as cand_dots does; a and b
 * index rows (a query's row for queries) and cols. */
__global__ void
k_pairs_exact(struct ds_pair *p, size_t n, const float *rows, const float *cols, size_t m)
{
	__shared__ struct dots_tile tiles[PAIRS_BLOCK / 32][2];
	int lane = threadIdx.x & 31;
	struct dots_tile *ta = &tiles[threadIdx.x >> 5][0], *tb = &tiles[threadIdx.x >> 5][1];
	size_t w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5, nw = ((size_t)gridDim.x * blockDim.x) >> 5;
	size_t m4 = m - m % 4;
	for (size_t q0 = w0 * 32; q0 < n; q0 += nw * 32) {
		bool have = q0 + lane < n;
		uint32_t ia = have ? p[q0 + lane].a : 0, ib = have ? p[q0 + lane].b : 0;
		unsigned live = __ballot_sync(FULL, have);
		double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		for (size_t c0 = 0; c0 < m; c0 += 32) {
			bool in = c0 + lane < m;
			for (int g0 = 0; g0 < 32; g0 += 8) {
				if ((live >> g0 & 0xffu) == 0)
					continue;
				float va[8], vb[8];
#pragma unroll
				for (int u = 0; u < 8; u++) {
					uint32_t a = __shfl_sync(FULL, ia, g0 + u), b = __shfl_sync(FULL, ib, g0 + u);
					bool on = in && (live >> (g0 + u) & 1);
					va[u] = on ? rows[(size_t)a * m + c0 + lane] : 0.0f;
					vb[u] = on ? cols[(size_t)b * m + c0 + lane] : 0.0f;
				}
#pragma unroll
				for (int u = 0; u < 8; u++) {
					ta->c[g0 + u][lane] = va[u];
					tb->c[g0 + u][lane] = vb[u];
				}
			}
			__syncwarp();
			if (have)
				fd_piece(ta->c[lane], tb->c[lane], c0, m, m4, s0, s1, s2, s3);
			__syncwarp();
		}
		if (have)
			p[q0 + lane].s = (float)((s0 + s1) + (s2 + s3));
	}
}

/* The tile's n pairs at g->pairs given their float64 scores (k_pairs_exact), on sb. */
void
ds_fast_pairs(struct gpu *g, const float *rows, const float *cols, size_t n)
{
	if (n == 0)
		return;
	k_pairs_exact<<<grid_for(CEIL_DIV(n, 32) * 32, PAIRS_BLOCK), PAIRS_BLOCK, 0, g->sb>>>(g->pairs, n, rows, cols,
	    g->K);
	CUDA_LAUNCH_CHECK();
}

/* Rows ids[sel[w]] (sel NULL: ids[w]), w < nr, of rows (m floats each) into q, one
 * after another. */
__global__ void
k_gather(const float *rows, const int32_t *ids, const int32_t *sel, size_t nr, size_t m, float *q)
{
	for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < nr * m; t += (size_t)gridDim.x * blockDim.x) {
		size_t w = t / m;
		q[t] = rows[(size_t)ids[sel != NULL ? sel[w] : w] * m + t % m];
	}
}

/* The nw crowded rows of a batch (k_exact put them on crowd; ids: the batch's
 * documents) made exact from their candidates: gathered into q, their float32 GEMM
 * against tiles of nc columns into S, each tile's candidates kept by k_collect, then
 * ranked by k_crowded. The batch's tile buffer (words of 4 bytes: crowd and the counts
 * at its end) holds the tiles and cr candidates a row, half and half. On sb. */
static void
crowded(struct gpu *g, const float *rows, const float *cols, size_t ncols, const int32_t *ids, size_t nb,
    int32_t *crowd, size_t nw, float *q, double b32)
{
	const struct ds_job *j = g->job;
	size_t m = g->K, kl = g->kl, words = g->BR * g->BC;
	cudaStream_t st = g->sb;
	unsigned *cnt = (unsigned *)crowd - nb;
	size_t room = words > 2 * nb ? words - 2 * nb : 0;
	size_t nc = MIN(ncols, room / MAX(2 * nw, (size_t)1)), cr = nc > 0 ? (room - nw * nc) / nw : 0;
	float *S = (float *)g->Sbuf[0];
	int32_t *cand = (int32_t *)(S + nw * nc);
	k_gather<<<grid_for(nw * m, 256), 256, 0, st>>>(rows, ids, crowd, nw, m, q);
	CUDA_LAUNCH_CHECK();
	if (nc > 0) {
		CUDA_CHECK(cudaMemsetAsync(cnt, 0, nw * sizeof *cnt, st));
		for (size_t c0 = 0; c0 < ncols; c0 += nc) {
			size_t n = MIN(nc, ncols - c0);
			ds_mm(DS_MM_F32, q, cols + c0 * m, nw, n, m, n, S, st);
			k_collect<<<grid_for(nw * n, 256), 256, 0, st>>>(S, nw, n, c0, g->sym, ids, crowd, g->tops, kl,
			    (int)j->k, 2 * b32, j->use_thr, j->thr - b32, cnt, cand, cr);
			CUDA_LAUNCH_CHECK();
		}
	}
	int rb = EXACT_BLOCK;
	k_crowded<<<grid_for(nw * 32, rb), rb, 0, st>>>(rows, cols, m, ncols, g->sym, ids, crowd, nw,
	    nc > 0 ? cnt : NULL, cand, cr, (int)j->k, j->use_thr, j->thr, g->fin_s, g->fin_i, &g->counts[2]);
	CUDA_LAUNCH_CHECK();
}

/* The float32 recheck of the nu rows on g->undecided: a batch of them at a time
 * gathered into one panel (in the second tile buffer), its float32 GEMM against a
 * tile of columns at a time (into the first), ranked into lists in g->tops (whose TF32
 * lists are spent), then made exact by k_exact, or, crowded, by crowded(), whose rows
 * *ncrowd adds up. On sb. */
static void
recheck(struct gpu *g, const float *rows, const float *cols, size_t ncols, size_t nu, unsigned long long *ncrowd)
{
	const struct ds_job *j = g->job;
	size_t m = g->K, kl = g->kl;
	double b32 = ds_f32_bound(m);
	/* rows that fit both tile buffers: BR x BC scores, and their m floats each */
	size_t batch = MIN(g->BR, g->BR * g->BC / MAX(m, (size_t)1));
	int rb = EXACT_BLOCK;
	cudaStream_t st = g->sb;
	if (b32 == 0 || batch == 0) {
		/* no bound worth it, or no room: every such row whole */
		k_exact<<<grid_for(nu * 32, rb), rb, 0, st>>>(rows, cols, m, nu, ncols, g->sym, g->undecided, g->tops,
		    g->topi, (int)j->k, 0, 0, j->use_thr, j->thr, g->fin_s, g->fin_i, NULL, NULL, g->counts);
		CUDA_LAUNCH_CHECK();
		return;
	}
	float *q = (float *)g->Sbuf[1], *S = (float *)g->Sbuf[0];
	/* the batch's crowded rows, at the end of S once its lists are made */
	int32_t *crowd = (int32_t *)S + g->BR * g->BC - batch;
	for (size_t b0 = 0; b0 < nu; b0 += batch) {
		size_t nb = MIN(batch, nu - b0);
		const int32_t *ids = g->undecided + b0;
		k_gather<<<grid_for(nb * m, 256), 256, 0, st>>>(rows, ids, NULL, nb, m, q);
		CUDA_LAUNCH_CHECK();
		ds_fill_state(g, nb * kl, st);
		for (size_t c0 = 0; c0 < ncols; c0 += g->BC) {
			size_t nc = MIN(g->BC, ncols - c0);
			ds_mm(DS_MM_F32, q, cols + c0 * m, nb, nc, m, nc, S, st);
			ds_rank_rows(g, S, nb, c0, nc, g->tops, g->topi, kl, j->thr - b32, g->sym ? ids : NULL);
		}
		CUDA_CHECK(cudaMemsetAsync(&g->counts[3], 0, sizeof *g->counts, st));
		k_exact<<<grid_for(nb * 32, rb), rb, 0, st>>>(rows, cols, m, nb, ncols, g->sym, ids, g->tops, g->topi,
		    (int)j->k, (int)kl, 2 * b32, j->use_thr, j->thr, g->fin_s, g->fin_i, NULL, crowd, g->counts);
		CUDA_LAUNCH_CHECK();
		unsigned long long nw;
		CUDA_CHECK(cudaMemcpyAsync(&nw, &g->counts[3], sizeof nw, cudaMemcpyDeviceToHost, st));
		CUDA_CHECK(cudaStreamSynchronize(st));
		if (nw > 0)
			crowded(g, rows, cols, ncols, ids, batch, crowd, (size_t)nw, q, b32);
		*ncrowd += nw;
	}
}

/* The lists of rows [0, nrows) (their vectors at rows) made exact against the columns
 * [0, ncols) at cols, into g->fin_s and g->fin_i; waits for them. counts: the rows
 * rechecked by the float32 GEMM, those of them crowded, and those computed whole. Every
 * stream's work on the tiles is done (ds_gpu_close), so their buffers and the TF32
 * lists are free. */
void
ds_fast_exact(struct gpu *g, const float *rows, const float *cols, size_t nrows, size_t ncols, size_t counts[3])
{
	const struct ds_job *j = g->job;
	int rb = EXACT_BLOCK;
	unsigned long long c[3] = {0, 0, 0};
	counts[0] = counts[1] = counts[2] = 0;
	if (nrows == 0)
		return;
	CUDA_CHECK(cudaMemsetAsync(g->counts, 0, 4 * sizeof *g->counts, g->sb));
	k_exact<<<grid_for(nrows * 32, rb), rb, 0, g->sb>>>(rows, cols, g->K, nrows, ncols, g->sym, NULL, g->tops,
	    g->topi, (int)j->k, (int)g->kl, 2 * g->bound, j->use_thr, j->thr, g->fin_s, g->fin_i, g->undecided, NULL,
	    g->counts);
	CUDA_LAUNCH_CHECK();
	CUDA_CHECK(cudaMemcpyAsync(c, g->counts, sizeof c, cudaMemcpyDeviceToHost, g->sb));
	CUDA_CHECK(cudaStreamSynchronize(g->sb));
	if (c[0] > 0) {
		recheck(g, rows, cols, ncols, (size_t)c[0], &c[1]);
		CUDA_CHECK(cudaMemcpyAsync(&c[2], &g->counts[2], sizeof c[2], cudaMemcpyDeviceToHost, g->sb));
		CUDA_CHECK(cudaStreamSynchronize(g->sb));
	}
	for (int t = 0; t < 3; t++)
		counts[t] = (size_t)c[t];
}
