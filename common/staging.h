/* staging.h: pinned host memory for CUDA copies (CUDA builds only: ACCELKIT_CUDA).
 *
 * Copies from pageable memory run at a fraction of the bus's speed (the driver copies
 * them through a pinned bounce buffer of its own, and cannot overlap them with work).
 * Two ways around it:
 *
 * A ring of k pinned buffers (cudaHostAlloc), each with an event. Take the next buffer
 * in turn, fill it (read input straight into it), and submit it: the copy is queued on
 * the ring's stream and the buffer comes back to the ring when its copy's event has
 * completed. Reading the next buffer, the copy of this one and the work on the one
 * before all overlap, with k buffers of memory whatever the input's size:
 *
 *	staging *s = staging_open(2, 64 << 20, stream);
 *	for (size_t off = 0;; off += n) {
 *		struct stage *b = staging_acquire(s);
 *		size_t n = in_read(in, b->p, b->cap);	// waits only for b's last copy
 *		if (n == 0)
 *			break;
 *		staging_h2d(s, b, dev + off, n);	// returns at once
 *		launch_on(stream, dev + off, n);	// runs after the copy
 *	}
 *	staging_close(s);			// waits for the copies in flight
 *
 * Results come back the same way: staging_d2h into an acquired buffer, staging_wait
 * before reading it, staging_release once written out.
 *
 * Or pin a large buffer that exists already (cuda_pin: cudaHostRegister), such as a
 * whole input read into memory; when the driver refuses, copies stay pageable and -v
 * says so. */
#ifndef ACCELKIT_STAGING_H
#define ACCELKIT_STAGING_H

#ifdef ACCELKIT_CUDA
#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

struct stage {
	void *p;		/* host memory: pinned unless pinning failed */
	size_t cap;		/* bytes at p */
	int index;		/* the buffer's place in the ring, 0..k-1 */
	cudaEvent_t done;	/* recorded after the buffer's last copy */
	int copying;		/* a copy was submitted since the buffer was taken */
	int held;		/* the caller's: taken and not yet given back */
};

typedef struct staging staging;

/* k buffers of bytes each for copies on stream. When pinned memory cannot be had, the
 * buffers are pageable (-v says so): everything still works, only slower. */
staging *staging_open(int k, size_t bytes, cudaStream_t stream);
/* Waits for the copies in flight and frees the buffers. */
void staging_close(staging *s);
/* Whether the buffers are pinned. */
int staging_pinned(const staging *s);

/* The next buffer of the ring, in turn, once its last copy has completed. A buffer
 * still held (staging_d2h without staging_release) is a programming error. */
struct stage *staging_acquire(staging *s);
/* Queues the copy of b's first n bytes to dev and returns at once; b goes back to the
 * ring, to be reused once the copy is done. */
void staging_h2d(staging *s, struct stage *b, void *dev, size_t n);
/* Queues the copy of n bytes at dev into b and returns at once; b stays the caller's:
 * staging_wait(b) before reading it, staging_release(b) after. */
void staging_d2h(staging *s, struct stage *b, const void *dev, size_t n);
void staging_wait(struct stage *b);
void staging_release(struct stage *b);

/* Pins [p, p + n) with cudaHostRegister so that copies from and to it run at full
 * speed; 1 when pinned. When that fails, the copies stay pageable: -v names what
 * and why, and 0 is returned. cuda_unpin(p) before freeing what was pinned. */
int cuda_pin(void *p, size_t n, const char *what);
void cuda_unpin(void *p);

#ifdef __cplusplus
}
#endif
#endif /* ACCELKIT_CUDA */
#endif
