/* skyline_gpu.cu: the host side that the classic and spatial GPU paths share: the
 * stream and the device's start (with skyline_upload.c's pinned ring), selecting
 * flagged rows, the end of a run, and the device memory a run may use. Apart from skyline_dev.cuh so that it is compiled
 * once; the kernels of each path are in skyline_classic.cu and skyline_spatial.cu. */
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "skyline_dev.cuh"

cudaStream_t sky_stream;

typedef thrust::counting_iterator<uint32_t> Count;

/* out[0..*cnt) = the i < n whose flag is set, ascending. */
void
select_flagged(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n)
{
	size_t b = tmp.bytes;
	CUDA_CHECK(cub::DeviceSelect::Flagged(tmp.p, b, Count(0), flag, out, cnt, (int64_t)n,
	    sky_stream));
}

size_t
select_bytes(size_t n)
{
	size_t b = 0;
	CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, b, Count(0), (const uint8_t *)nullptr,
	    (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)n, sky_stream));
	return b;
}

/* With -v: the time since *t of the named step (waiting for the GPU to finish it). */
void
step(const char *name, double *t)
{
	if (!verbose)
		return;
	CUDA_CHECK(cudaStreamSynchronize(sky_stream));
	double now = now_sec();
	phase_add(name, now - *t);
	*t = now;
}

/* The end of a run: the rows whose flag is set, ascending, through out (room for n)
 * into keep; returns their count. Closes the compute phase begun at t1. */
uint32_t
finish_run(Temp &tmp, const uint8_t *flag, uint32_t *out, uint32_t *cnt, size_t n,
    uint32_t *keep, double t1)
{
	uint32_t m;
	select_flagged(tmp, flag, out, cnt, n);
	CUDA_CHECK(cudaMemcpyAsync(&m, cnt, sizeof m, cudaMemcpyDeviceToHost, sky_stream));
	CUDA_CHECK(cudaStreamSynchronize(sky_stream));
	double t2 = now_sec();
	phase_add(PH_COMPUTE, t2 - t1);
	CUDA_CHECK(cudaMemcpy(keep, out, (size_t)m * sizeof *keep, cudaMemcpyDeviceToHost));
	phase_add(PH_D2H, now_sec() - t2);
	return m;
}

__global__ void
k_bump(uint32_t *sky, const uint32_t *cnt)
{
	*sky += *cnt;
}

void
bump(uint32_t *sky, const uint32_t *cnt)
{
	k_bump<<<1, 1, 0, sky_stream>>>(sky, cnt);
	CUDA_LAUNCH_CHECK();
}

size_t
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

size_t
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
	if (sky_stream == nullptr) {
		CUDA_CHECK(cudaStreamCreateWithFlags(&sky_stream, cudaStreamNonBlocking));
		sky_upload_open(sky_stream);
	}
}
