/* skyline_upload.c: the rows' way to the GPU. A large input goes through a ring of
 * pinned buffers (common/staging.h): the -j threads copy one part into a buffer while
 * the part before crosses the bus, at the bus's speed instead of a pageable copy's
 * (~7 GB/s on the H200 machine: 11.5 ms for the 80 MB of 10M points). Each worker's
 * state (struct sky_gpu) has a ring of its own, on its own stream; the one-GPU run's
 * is allocated by sky_gpu_init in CUDA's start-up thread, beside the reading, and a
 * divided run's by each worker in its thread. A ring lives as long as the process: a
 * GPU run ends in cuda_finish's _exit. A C file, not CUDA, for the OpenMP copy. CUDA
 * builds only. */
#ifdef ACCELKIT_CUDA
#include <string.h>

#include "cuda_check.h"
#include "err.h"
#include "skyline_run.h"
#include "staging.h"

/* 3 x 8 MB: copies of 8 MB run at the bus's full speed (docsim's ring measured the
 * same); a third buffer lets filling wait on neither of the two in flight. */
#define RING_BUFS 3
#define RING_BYTES ((size_t)8 << 20)
/* Smaller uploads are one plain copy: well under a millisecond either way. */
#define RING_MIN ((size_t)1 << 20)
/* What one thread copies at a time. */
#define PIECE ((size_t)1 << 18)

void
sky_upload_open(struct sky_gpu *gp)
{
	if (gp->ring == NULL)
		gp->ring = staging_open(RING_BUFS, RING_BYTES, gp->stream);
}

void
sky_upload(struct sky_gpu *gp, void *dev, const void *host, size_t bytes)
{
	if (bytes < RING_MIN) {
		CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, gp->stream));
		return;
	}
	for (size_t off = 0; off < bytes; off += RING_BYTES) {
		size_t n = MIN(RING_BYTES, bytes - off), pieces = CEIL_DIV(n, PIECE);
		struct stage *b = staging_acquire(gp->ring);
		#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < pieces; i++)
			memcpy((char *)b->p + i * PIECE, (const char *)host + off + i * PIECE,
			    MIN(PIECE, n - i * PIECE));
		staging_h2d(gp->ring, b, (char *)dev + off, n);
	}
}
#endif
