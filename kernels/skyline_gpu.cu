/* skyline_gpu.cu: the host side that the classic and spatial GPU paths share: a
 * worker's state (its stream, with skyline_upload.c's pinned ring), selecting flagged
 * rows, the end of a run, and the device memory a run may use. Apart from
 * skyline_dev.cuh so that it is compiled once; the kernels of each path are in
 * skyline_classic.cu and skyline_spatial.cu. */
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "skyline_dev.cuh"

typedef thrust::counting_iterator<uint32_t> Count;

/* out[0..*cnt) = the i < n whose flag is set, ascending. */
void
select_flagged(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    cudaStream_t st)
{
	size_t b = tmp.bytes;
	CUDA_CHECK(cub::DeviceSelect::Flagged(tmp.p, b, Count(0), flag, out, cnt, (int64_t)n,
	    st));
}

size_t
select_bytes(size_t n, cudaStream_t st)
{
	size_t b = 0;
	CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, b, Count(0), (const uint8_t *)nullptr,
	    (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)n, st));
	return b;
}

/* With -v: the time since *t of the named step (waiting for the GPU to finish it). */
void
step(const char *name, double *t, cudaStream_t st)
{
	if (!verbose)
		return;
	CUDA_CHECK(cudaStreamSynchronize(st));
	double now = now_sec();
	phase_add(name, now - *t);
	*t = now;
}

/* The end of a run: the rows whose flag is set, ascending, through out (room for n)
 * into keep; returns their count. Closes the compute phase begun at t1. */
uint32_t
finish_run(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    uint32_t *keep, double t1, cudaStream_t st)
{
	uint32_t m;
	select_flagged(tmp, flag, out, cnt, n, st);
	CUDA_CHECK(cudaMemcpyAsync(&m, cnt, sizeof m, cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaStreamSynchronize(st));
	double t2 = now_sec();
	phase_add(PH_COMPUTE, t2 - t1);
	/* on the worker's stream: a plain cudaMemcpy would wait for every stream of the
	 * device, a second worker's on the same GPU too */
	CUDA_CHECK(cudaMemcpyAsync(keep, out, (size_t)m * sizeof *keep, cudaMemcpyDeviceToHost,
	    st));
	CUDA_CHECK(cudaStreamSynchronize(st));
	phase_add(PH_D2H, now_sec() - t2);
	return m;
}

__global__ void
k_bump(uint32_t *sky, const uint32_t *cnt)
{
	*sky += *cnt;
}

void
bump(uint32_t *sky, const uint32_t *cnt, cudaStream_t st)
{
	k_bump<<<1, 1, 0, st>>>(sky, cnt);
	CUDA_LAUNCH_CHECK();
}

/* 90% of the device's free memory, or --max-device-mem, less a megabyte for cub and
 * the driver; divided among the workers that share the device. */
static size_t
device_bytes(size_t max_mem, int sharers)
{
	size_t fr, tot;
	CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
	size_t b = fr / 10 * 9;
	if (max_mem)
		b = std::min(b, max_mem);
	b /= (size_t)std::max(sharers, 1);
	return b > ((size_t)1 << 20) ? b - ((size_t)1 << 20) : 0;
}

size_t
budget(const struct sky_gpu *gp, size_t max_mem)
{
	return gp->budget ? gp->budget : device_bytes(max_mem, 1);
}

size_t
fit_rows(size_t bytes, size_t per_row)
{
	size_t fit = bytes / per_row;
	if (fit < 1024)
		die("--max-device-mem leaves room for fewer than 1024 rows (%zu bytes a row)", per_row);
	return std::min<size_t>(fit, UINT32_MAX - 1);
}

extern "C" struct sky_gpu *
sky_gpu_open(void)
{
	struct sky_gpu *gp = (struct sky_gpu *)xcalloc(1, sizeof *gp);
	CUDA_CHECK(cudaGetDevice(&gp->id));
	CUDA_CHECK(cudaStreamCreateWithFlags(&gp->stream, cudaStreamNonBlocking));
	sky_upload_open(gp);
	return gp;
}

extern "C" void
sky_gpu_reserve(struct sky_gpu *gp, size_t max_mem, int sharers)
{
	gp->budget = sharers > 0 ? std::max<size_t>(device_bytes(max_mem, sharers), 1) : 0;
}

/* The one-GPU run's state, made in CUDA's start-up thread (cuda_start's init) beside
 * the reading, and used by the main thread afterwards. A divided run (several GPUs)
 * makes none here: each worker makes its own in its thread. */
static struct sky_gpu *one;

extern "C" void
sky_gpu_init(const struct cuda_dev *dev)
{
	if (dev->ngpus > 1)
		return;
	CUDA_CHECK(cudaSetDevice(dev->ids[0]));
	if (one == nullptr)
		one = sky_gpu_open();
}

extern "C" struct sky_gpu *
sky_gpu_one(const struct cuda_dev *dev)
{
	CUDA_CHECK(cudaSetDevice(dev->ids[0]));
	if (one == nullptr)
		one = sky_gpu_open();
	return one;
}
