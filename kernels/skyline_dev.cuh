/* skyline_dev.cuh: what the CUDA files of skyline share (skyline_classic.cu,
 * skyline_spatial.cu and skyline_gpu.cu): the block and tile sizes,
 * device buffers, cub's sort wrappers, the end of a run, and the split of an input
 * too large for the device into parts. C++, for nvcc only. */
#ifndef SKYLINE_DEV_CUH
#define SKYLINE_DEV_CUH

#include <algorithm>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "cuda_check.h"
#include "cudadev.h"
#include "err.h"
#include "skyline.h"
#include "skyline_run.h"
#include "skyline_tune.h"
#include "timer.h"

#define NT SKY_NT		/* threads a block */
#define TILE SKY_TILE		/* skyline points a shared-memory tile */

/* Every launch and copy of a run goes into its worker's one stream (struct sky_gpu,
 * passed down as st): the host waits only for the counts that size what follows, and
 * for the result. No state of a run is global: several workers, one a GPU or two on
 * one GPU, run at once (skyline_divide.c). */

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

static inline unsigned
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

template <class K>
static size_t
sort_bytes(size_t n, cudaStream_t st)
{
	size_t b = 0;
	cub::DoubleBuffer<K> k(nullptr, nullptr);
	cub::DoubleBuffer<uint32_t> v(nullptr, nullptr);
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b, k, v, (int64_t)n, 0,
	    (int)(8 * sizeof(K)), st));
	return b;
}

template <class K>
static void
sort_pairs(Temp &tmp, cub::DoubleBuffer<K> &k, cub::DoubleBuffer<uint32_t> &v, size_t n,
    int bits, cudaStream_t st)
{
	size_t b = tmp.bytes;
	if (bits > 0)
		CUDA_CHECK(cub::DeviceRadixSort::SortPairs(tmp.p, b, k, v, (int64_t)n, 0, bits,
		    st));
}

static inline int
bits_for(uint64_t max)
{
	return max == 0 ? 0 : 64 - __builtin_clzll(max);
}

/* skyline_gpu.cu: the flagged i < n (out[0..*cnt), ascending) and cub's temporary
 * bytes for them; -v's time of a step; the end of a run (finish_run); *sky += *cnt
 * on the device; the device bytes a run may use (the worker's share, or what is free
 * now, under --max-device-mem); the rows of per_row bytes that fit in them. Each on
 * stream st, of the current device. */
void select_flagged(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    cudaStream_t st);
size_t select_bytes(size_t n, cudaStream_t st);
void step(const char *name, double *t, cudaStream_t st);
uint32_t finish_run(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    uint32_t *keep, double t1, cudaStream_t st);
void bump(uint32_t *sky, const uint32_t *cnt, cudaStream_t st);
size_t budget(const struct sky_gpu *gp, size_t max_mem);
size_t fit_rows(size_t bytes, size_t per_row);

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

#endif
