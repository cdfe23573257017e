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
 * clstaging_release once written out.
 *
 * Whole matrices: clhost_alloc gives one such buffer of any size (a matrix the device
 * reads or writes in place of malloc'd memory), and clmat reads a dense matrix
 * (dense.h's formats) into one: an NPY file's data straight from the file, once its
 * header has told the program the work and the device is open. */
#ifndef ACCELKIT_CLSTAGING_H
#define ACCELKIT_CLSTAGING_H

#include <stddef.h>

#include "dense.h"
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

/* The same copies on a queue of the caller's (another in-order queue of the ring's
 * context: uploads and read-backs each on their own), after the nwait events of wait,
 * returning the copy's event with a reference for the caller (clReleaseEvent it, or
 * keep it to order later work). clstaging_h2d and clstaging_d2h are these on the
 * ring's queue, waiting for nothing. */
cl_event clstaging_write(clstaging *s, struct clstage *b, cl_command_queue q, cl_mem dst,
    size_t off, size_t n, cl_uint nwait, const cl_event *wait);
cl_event clstaging_read(clstaging *s, struct clstage *b, cl_command_queue q, cl_mem src,
    size_t off, size_t n, cl_uint nwait, const cl_event *wait);
/* The ring's buffers and the bytes of each. */
int clstaging_count(const clstaging *s);
size_t clstaging_cap(const clstaging *s);

/* Host memory for a whole matrix: a CL_MEM_ALLOC_HOST_PTR buffer of x's context kept
 * mapped, as the ring's are; or, where that cannot be had (larger than the device's
 * largest allocation, the process's pinned memory past half of the machine's, or the
 * driver refuses), malloc'd memory, with a -v line naming `what' and why. Dies only
 * when neither can be had. The buffer keeps x's queue: clhost_free works after
 * clx_close. x NULL (a run without OpenCL): malloc'd memory, quietly.
 * ACCELKIT_PINNED_BYTES replaces the half of the machine's memory (tests set it low
 * to take the pageable way). */
struct clhost {
	void *p;
	size_t bytes;
	cl_mem mem;		/* NULL: p is malloc'd */
	cl_command_queue queue;	/* retained, for the unmap */
};
void *clhost_alloc(struct clx *x, size_t bytes, const char *what, struct clhost *h);
void clhost_free(struct clhost *h);

/* A dense matrix for an OpenCL device. clmat_open reads an NPY file's header only (its
 * data waits for clmat_read, which puts it in a clhost buffer); text, and NPY from a
 * pipe (whose header is not trusted for one allocation: mat_read's growing buffer), are
 * read whole at once into malloc'd memory, as mat_load does. */
struct clmat {
	struct matrix m;	/* rows, cols and dtype from the start; data once read */
	struct clhost host;
	input *in;		/* an NPY file whose data is still to read, or NULL */
	dstream *s;
};
/* path NULL or "-": standard input, its first `header' lines set aside when it is text
 * (--header). Dies on bad input as mat_load does. */
void clmat_open(const char *path, size_t header, enum dtype dt, struct clmat *c);
/* The same on an input already open (clmat_free closes it), without a header. */
void clmat_open_in(input *in, enum dtype dt, struct clmat *c);
/* A matrix already in malloc'd memory, which the clmat takes over. */
void clmat_wrap(struct matrix m, struct clmat *c);
/* Reads what clmat_open left (nothing for text) into pinned memory of x (malloc'd
 * memory for x NULL); -v names it `what' where it falls back to malloc'd memory. */
void clmat_read(struct clmat *c, struct clx *x, const char *what);
void clmat_free(struct clmat *c);

#ifdef __cplusplus
}
#endif
#endif
