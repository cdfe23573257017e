/* clstaging.c: see clstaging.h. */
#include "clstaging.h"

#include <stdlib.h>

#include "err.h"

struct clstaging {
	struct clstage *b;
	int k, next;
	cl_command_queue queue;
};

clstaging *
clstaging_open(cl_context ctx, cl_command_queue queue, int k, size_t bytes)
{
	clstaging *s = xcalloc(1, sizeof *s);

	s->k = MAX(k, 1);
	s->queue = queue;
	s->b = xcalloc((size_t)s->k, sizeof *s->b);
	for (int i = 0; i < s->k; i++) {
		struct clstage *b = &s->b[i];
		b->index = i;
		b->cap = bytes;
		b->host = CL_CREATE(clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
		    bytes, NULL, &cl_err_));
		b->p = CL_CREATE(clEnqueueMapBuffer(queue, b->host, CL_TRUE,
		    CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &cl_err_));
	}
	return s;
}

/* Waits for b's last copy and forgets its event. */
static void
settle(struct clstage *b)
{
	if (b->done == NULL)
		return;
	CL_CHECK(clWaitForEvents(1, &b->done));
	CL_CHECK(clReleaseEvent(b->done));
	b->done = NULL;
}

void
clstaging_close(clstaging *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->k; i++) {
		struct clstage *b = &s->b[i];
		settle(b);
		CL_CHECK(clEnqueueUnmapMemObject(s->queue, b->host, b->p, 0, NULL, NULL));
	}
	CL_CHECK(clFinish(s->queue));
	for (int i = 0; i < s->k; i++)
		CL_CHECK(clReleaseMemObject(s->b[i].host));
	free(s->b);
	free(s);
}

struct clstage *
clstaging_acquire(clstaging *s)
{
	struct clstage *b = &s->b[s->next];
	if (b->held)
		die("clstaging: buffer %d is still held (clstaging_release it first)", b->index);
	s->next = (s->next + 1) % s->k;
	settle(b);
	b->held = 1;
	return b;
}

void
clstaging_h2d(clstaging *s, struct clstage *b, cl_mem dst, size_t off, size_t n)
{
	CL_CHECK(clEnqueueWriteBuffer(s->queue, dst, CL_FALSE, off, n, b->p, 0, NULL,
	    &b->done));
	CL_CHECK(clFlush(s->queue));	/* start it now, not at the next blocking call */
	b->held = 0;
}

void
clstaging_d2h(clstaging *s, struct clstage *b, cl_mem src, size_t off, size_t n)
{
	CL_CHECK(clEnqueueReadBuffer(s->queue, src, CL_FALSE, off, n, b->p, 0, NULL,
	    &b->done));
	CL_CHECK(clFlush(s->queue));
}

void
clstaging_wait(struct clstage *b)
{
	settle(b);
}

void
clstaging_release(struct clstage *b)
{
	b->held = 0;
}
