/* staging.c: see staging.h. CUDA builds only. */
#include "staging.h"

#ifdef ACCELKIT_CUDA
#include <stdlib.h>

#include "cuda_check.h"
#include "err.h"

struct staging {
	struct stage *b;
	int k, next, pinned;
	cudaStream_t stream;
};

staging *
staging_open(int k, size_t bytes, cudaStream_t stream)
{
	staging *s = xcalloc(1, sizeof *s);
	int i;

	s->k = MAX(k, 1);
	s->stream = stream;
	s->b = xcalloc((size_t)s->k, sizeof *s->b);
	for (i = 0; i < s->k; i++)
		if (cudaHostAlloc(&s->b[i].p, bytes, cudaHostAllocDefault) != cudaSuccess)
			break;
	s->pinned = i == s->k;
	if (!s->pinned) {
		cudaGetLastError();
		vlog("staging: no pinned memory for %d x %zu bytes: copies from pageable memory",
		    s->k, bytes);
		while (i-- > 0)
			CUDA_CHECK(cudaFreeHost(s->b[i].p));
	}
	for (i = 0; i < s->k; i++) {
		struct stage *b = &s->b[i];
		if (!s->pinned)
			b->p = xmalloc(bytes);
		b->index = i;
		b->cap = bytes;
		CUDA_CHECK(cudaEventCreateWithFlags(&b->done, cudaEventDisableTiming));
	}
	return s;
}

void
staging_close(staging *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->k; i++) {
		struct stage *b = &s->b[i];
		CUDA_CHECK(cudaEventSynchronize(b->done));
		CUDA_CHECK(cudaEventDestroy(b->done));
		if (s->pinned)
			CUDA_CHECK(cudaFreeHost(b->p));
		else
			free(b->p);
	}
	free(s->b);
	free(s);
}

int
staging_pinned(const staging *s)
{
	return s->pinned;
}

struct stage *
staging_acquire(staging *s)
{
	struct stage *b = &s->b[s->next];
	if (b->held)
		die("staging: buffer %d is still held (staging_release it first)", b->index);
	s->next = (s->next + 1) % s->k;
	if (b->copying)
		CUDA_CHECK(cudaEventSynchronize(b->done));
	b->copying = 0;
	b->held = 1;
	return b;
}

void
staging_h2d(staging *s, struct stage *b, void *dev, size_t n)
{
	CUDA_CHECK(cudaMemcpyAsync(dev, b->p, n, cudaMemcpyHostToDevice, s->stream));
	CUDA_CHECK(cudaEventRecord(b->done, s->stream));
	b->copying = 1;
	b->held = 0;
}

void
staging_d2h(staging *s, struct stage *b, const void *dev, size_t n)
{
	CUDA_CHECK(cudaMemcpyAsync(b->p, dev, n, cudaMemcpyDeviceToHost, s->stream));
	CUDA_CHECK(cudaEventRecord(b->done, s->stream));
	b->copying = 1;
}

void
staging_wait(struct stage *b)
{
	if (b->copying)
		CUDA_CHECK(cudaEventSynchronize(b->done));
	b->copying = 0;
}

void
staging_release(struct stage *b)
{
	b->held = 0;
}

int
cuda_pin(void *p, size_t n, const char *what)
{
	cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterDefault);
	if (e != cudaSuccess) {
		cudaGetLastError();
		vlog("%s: pinning %zu bytes failed (%s): copies from pageable memory", what, n,
		    cudaGetErrorString(e));
		return 0;
	}
	return 1;
}

void
cuda_unpin(void *p)
{
	CUDA_CHECK(cudaHostUnregister(p));
}
#endif /* ACCELKIT_CUDA */
