/* clstaging.h: the OpenCL twin of staging.h, a ring of host buffers for copies.
 *
 * Each buffer is an OpenCL buffer made with CL_MEM_ALLOC_HOST_PTR and kept mapped, its
 * host pointer given out: NVIDIA's OpenCL allocates such buffers in pinned memory (its
 * OpenCL best practices guide says so), so copies from and to them run at the bus's
 * speed, and input can be read straight into them. Elsewhere (PoCL) they are plain
 * host memory and everything works the same. Copies go through clEnqueueWriteBuffer and
 * clEnqueueReadBuffer from the mapped pointer, without blocking, with an event each:
 *
 *	clstaging *s = clstaging_open(x.ctx, x.queue, 2, 64 << 20);
 *	for (size_t off = 0;; off += n) {
 *		struct clstage *b = clstaging_acquire(s);	// waits for b's last copy
 *		size_t n = in_read(in, b->p, b->cap);
 *		if (n == 0)
 *			break;
 *		clstaging_h2d(s, b, dev, off, n);		// returns at once
 *	}
 *	clstaging_close(s);
 *
 * Results: clstaging_d2h into an acquired buffer, clstaging_wait before reading it,
 * clstaging_release once written out. */
#ifndef ACCELKIT_CLSTAGING_H
#define ACCELKIT_CLSTAGING_H

#include <stddef.h>

#include "opencl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct clstage {
	void *p;		/* the mapped host pointer */
	size_t cap;		/* bytes at p */
	int index;		/* the buffer's place in the ring, 0..k-1 */
	cl_mem host;		/* the CL_MEM_ALLOC_HOST_PTR buffer p maps */
	cl_event done;		/* of the buffer's last copy, or NULL */
	int held;		/* the caller's: taken and not yet given back */
};

typedef struct clstaging clstaging;

/* k buffers of bytes each, for copies on queue (an in-order queue of ctx). */
clstaging *clstaging_open(cl_context ctx, cl_command_queue queue, int k, size_t bytes);
/* Waits for the copies in flight, unmaps and frees the buffers. */
void clstaging_close(clstaging *s);

/* The next buffer of the ring, in turn, once its last copy has completed. A buffer
 * still held (clstaging_d2h without clstaging_release) is a programming error. */
struct clstage *clstaging_acquire(clstaging *s);
/* Queues the copy of b's first n bytes to dst at offset off and returns at once; b goes
 * back to the ring, to be reused once the copy is done. */
void clstaging_h2d(clstaging *s, struct clstage *b, cl_mem dst, size_t off, size_t n);
/* Queues the copy of n bytes of src at offset off into b; b stays the caller's:
 * clstaging_wait(b) before reading it, clstaging_release(b) after. */
void clstaging_d2h(clstaging *s, struct clstage *b, cl_mem src, size_t off, size_t n);
void clstaging_wait(struct clstage *b);
void clstaging_release(struct clstage *b);

#ifdef __cplusplus
}
#endif
#endif
