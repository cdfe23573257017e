/* clstaging.c: see clstaging.h. */
#include "clstaging.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "err.h"
#include "input.h"
#include "table.h"
#include "timer.h"

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

cl_event
clstaging_write(clstaging *s, struct clstage *b, cl_command_queue q, cl_mem dst, size_t off,
    size_t n, cl_uint nwait, const cl_event *wait)
{
	(void)s;
	CL_CHECK(clEnqueueWriteBuffer(q, dst, CL_FALSE, off, n, b->p, nwait, nwait ? wait : NULL,
	    &b->done));
	CL_CHECK(clFlush(q));	/* start it now, not at the next blocking call */
	b->held = 0;
	CL_CHECK(clRetainEvent(b->done));
	return b->done;
}

cl_event
clstaging_read(clstaging *s, struct clstage *b, cl_command_queue q, cl_mem src, size_t off,
    size_t n, cl_uint nwait, const cl_event *wait)
{
	(void)s;
	CL_CHECK(clEnqueueReadBuffer(q, src, CL_FALSE, off, n, b->p, nwait, nwait ? wait : NULL,
	    &b->done));
	CL_CHECK(clFlush(q));
	CL_CHECK(clRetainEvent(b->done));
	return b->done;
}

void
clstaging_h2d(clstaging *s, struct clstage *b, cl_mem dst, size_t off, size_t n)
{
	CL_CHECK(clReleaseEvent(clstaging_write(s, b, s->queue, dst, off, n, 0, NULL)));
}

void
clstaging_d2h(clstaging *s, struct clstage *b, cl_mem src, size_t off, size_t n)
{
	CL_CHECK(clReleaseEvent(clstaging_read(s, b, s->queue, src, off, n, 0, NULL)));
}

int
clstaging_count(const clstaging *s)
{
	return s->k;
}

size_t
clstaging_cap(const clstaging *s)
{
	return s->b[0].cap;
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

/* ---- whole matrices ---- */

/* Bytes of pinned host memory the process holds in clhost buffers (devices' workers
 * allocate at once: the check against the cap and the count go under one lock). */
static size_t pinned_total;
static pthread_mutex_t pinned_mu = PTHREAD_MUTEX_INITIALIZER;

static void
pinned_add(size_t n, int sign)
{
	pthread_mutex_lock(&pinned_mu);
	pinned_total = sign > 0 ? pinned_total + n : pinned_total - n;
	pthread_mutex_unlock(&pinned_mu);
}

/* How much it may hold: half of the machine's memory, or ACCELKIT_PINNED_BYTES (tests
 * set it low to take the pageable way). */
static size_t
pinned_cap(void)
{
	const char *v = getenv("ACCELKIT_PINNED_BYTES");
	if (v != NULL && *v != '\0')
		return cli_size("ACCELKIT_PINNED_BYTES", v);
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	return pages > 0 && psize > 0 ? (size_t)pages / 2 * (size_t)psize : SIZE_MAX;
}

void *
clhost_alloc(struct clx *x, size_t bytes, const char *what, struct clhost *h)
{
	const size_t n = MAX(bytes, (size_t)16), cap = pinned_cap();
	const char *why = NULL;
	char bound[64];
	cl_int err = CL_SUCCESS;

	double t0 = now_sec();
	memset(h, 0, sizeof *h);
	h->bytes = bytes;
	if (x == NULL) {	/* a run without OpenCL (clmatmul -d cpu) */
		h->p = xmalloc(n);
		return h->p;
	}
	pthread_mutex_lock(&pinned_mu);
	if (n > x->max_alloc)
		why = "larger than the device's largest allocation";
	else if (n > cap || pinned_total > cap - n) {
		snprintf(bound, sizeof bound, "pinned memory would pass %zu bytes", cap);
		why = bound;
	} else {
		pinned_total += n;	/* held for this buffer; given back if it fails */
	}
	pthread_mutex_unlock(&pinned_mu);
	if (why == NULL)
		h->mem = clCreateBuffer(x->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, NULL,
		    &err);
	if (why == NULL && err == CL_SUCCESS) {
		h->p = clEnqueueMapBuffer(x->queue, h->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
		    n, 0, NULL, NULL, &err);
		if (err != CL_SUCCESS) {
			clReleaseMemObject(h->mem);
			h->p = NULL;
		}
	}
	if (why == NULL && err != CL_SUCCESS) {
		why = cl_errname(err);
		pinned_add(n, -1);
	}
	if (why != NULL) {
		h->mem = NULL;
		vlog("%s: %zu bytes in pageable memory (%s): slower copies", what, bytes, why);
		h->p = xmalloc(n);
		phase_add("host buffers", now_sec() - t0);
		return h->p;
	}
	vlog("%s: %zu bytes in a mapped host buffer (pinned where the driver pins them)", what,
	    bytes);
	CL_CHECK(clRetainCommandQueue(x->queue));
	h->queue = x->queue;
	phase_add("host buffers", now_sec() - t0);	/* pinning is not free: -v shows it */
	return h->p;
}

void
clhost_free(struct clhost *h)
{
	if (h->mem != NULL) {
		CL_CHECK(clEnqueueUnmapMemObject(h->queue, h->mem, h->p, 0, NULL, NULL));
		CL_CHECK(clFinish(h->queue));
		CL_CHECK(clReleaseMemObject(h->mem));
		CL_CHECK(clReleaseCommandQueue(h->queue));
		pinned_add(MAX(h->bytes, (size_t)16), -1);
	} else {
		free(h->p);
	}
	memset(h, 0, sizeof *h);
}

void
clmat_open(const char *path, size_t header, enum dtype dt, struct clmat *c)
{
	input *in = in_open(path);
	table_skip_header(in, header, NULL, NULL);
	clmat_open_in(in, dt, c);
}

void
clmat_open_in(input *in, enum dtype dt, struct clmat *c)
{
	size_t avail;

	memset(c, 0, sizeof *c);
	c->m.dtype = dt;
	const unsigned char *p = in_peek(in, 6, &avail);
	if (avail == 6 && memcmp(p, "\x93NUMPY", 6) == 0 && in_remaining(in) >= 0) {
		/* its size is checked against the file's by dstream_open */
		c->in = in;
		c->s = dstream_open(in, 0);
		c->m.rows = (size_t)dstream_rows_total(c->s);
		c->m.cols = dstream_cols(c->s);
		return;
	}
	mat_read(in, dt, 0, &c->m);
	in_close(in);
}

void
clmat_wrap(struct matrix m, struct clmat *c)
{
	memset(c, 0, sizeof *c);
	c->m = m;
}

void
clmat_read(struct clmat *c, struct clx *x, const char *what)
{
	if (c->s == NULL)
		return;
	size_t rows = c->m.rows;
	void *p = clhost_alloc(x, mul_size(mul_size(rows, c->m.cols, what),
	    dtype_size(c->m.dtype), what), what, &c->host);
	size_t got = rows > 0 ? dstream_read(c->s, rows, c->m.dtype, p) : 0;
	if (got != rows)	/* dstream_read dies on short data: a programming error */
		die("%s: %zu rows read of %zu", in_name(c->in), got, rows);
	c->m.data = p;
	dstream_close(c->s);
	in_close(c->in);
	c->s = NULL;
	c->in = NULL;
}

void
clmat_free(struct clmat *c)
{
	dstream_close(c->s);
	if (c->in != NULL)
		in_close(c->in);
	if (c->host.p != NULL)
		clhost_free(&c->host);
	else
		mat_free(&c->m);
	memset(c, 0, sizeof *c);
}
