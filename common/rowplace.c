/* rowplace.c: rows written at their places by the threads that parsed them (see
 * rowplace.h).
 *
 * Locks: mu guards the ring, the counts and cap; rw guards data against its growth (a
 * thread writing rows holds it shared, the caller growing data holds it alone). A
 * thread never waits for rw while it holds mu, and the caller takes mu inside rw only,
 * so the two cannot wait for each other. */
#include "rowplace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

enum { S_NONE, S_PARSED, S_PLACED, S_WRITING, S_DONE, S_CALLER };

struct entry {
	uint64_t k;		/* the chunk whose entry this is */
	int st;
	size_t rows, row_bytes;
	const void *src;
	size_t off;		/* its first row's place (S_PLACED and after) */
};

struct rowplace {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a chunk is written */
	pthread_rwlock_t rw;
	struct entry *ring;	/* chunk k at k % n */
	size_t n;
	size_t row_bytes;	/* 0: not known yet */
	uint64_t next;		/* the first chunk whose place is not known */
	size_t counted;		/* the rows of the chunks before it */
	char *data;
	size_t cap;		/* rows data has room for */
	size_t taken;		/* rows the caller has taken (its side only) */
};

rowplace *
rp_new(int inflight)
{
	rowplace *rp = xcalloc(1, sizeof *rp);
	pthread_rwlockattr_t a;

	rp->n = (size_t)MAX(inflight, 1) + 1;
	rp->ring = xcalloc(rp->n, sizeof *rp->ring);
	for (size_t i = 0; i < rp->n; i++)
		rp->ring[i].k = UINT64_MAX;
	pthread_mutex_init(&rp->mu, NULL);
	pthread_cond_init(&rp->cv, NULL);
	/* the caller's growth must not wait behind a stream of writers */
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rp->rw, &a);
	pthread_rwlockattr_destroy(&a);
	return rp;
}

void
rp_width(rowplace *rp, size_t row_bytes)
{
	pthread_mutex_lock(&rp->mu);
	rp->row_bytes = row_bytes;
	pthread_mutex_unlock(&rp->mu);
}

void
rp_parsed(rowplace *rp, uint64_t k, size_t rows, const void *src, size_t row_bytes)
{
	struct entry *e = &rp->ring[k % rp->n], *mine[64];
	size_t nmine = 0;

	pthread_mutex_lock(&rp->mu);
	*e = (struct entry){k, S_PARSED, rows, row_bytes, src, 0};
	/* every chunk whose rows before it are now all counted gets its place; those of
	 * the width for which there is room are written here */
	for (;;) {
		struct entry *f = &rp->ring[rp->next % rp->n];
		if (f->k != rp->next || f->st != S_PARSED)
			break;
		f->off = rp->counted;
		rp->counted += f->rows;
		rp->next++;
		f->st = S_PLACED;
		if (f->rows == 0)
			f->st = S_DONE;
		else if (rp->row_bytes > 0 && f->row_bytes == rp->row_bytes &&
		    f->off + f->rows <= rp->cap && nmine < sizeof mine / sizeof *mine) {
			f->st = S_WRITING;
			mine[nmine++] = f;
		}
	}
	pthread_mutex_unlock(&rp->mu);
	if (nmine == 0)
		return;
	pthread_rwlock_rdlock(&rp->rw);
	for (size_t i = 0; i < nmine; i++)	/* entries in S_WRITING are this thread's */
		memcpy(rp->data + mine[i]->off * rp->row_bytes, mine[i]->src,
		    mine[i]->rows * mine[i]->row_bytes);
	pthread_rwlock_unlock(&rp->rw);
	pthread_mutex_lock(&rp->mu);
	for (size_t i = 0; i < nmine; i++)
		mine[i]->st = S_DONE;
	pthread_cond_broadcast(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
}

/* The caller's: room for `rows` rows at least, and for a quarter more than the rows
 * counted so far, so that the threads can place what comes next. */
static void
grow(rowplace *rp, size_t rows, size_t counted)
{
	size_t want = MAX(rows, counted + counted / 4);
	if (want <= rp->cap)
		return;
	size_t cap = MAX(MAX(want, 2 * rp->cap), (size_t)1024);
	pthread_rwlock_wrlock(&rp->rw);
	char *data = xreallocarray(rp->data, cap, rp->row_bytes);
	pthread_mutex_lock(&rp->mu);
	rp->data = data;
	rp->cap = cap;
	pthread_mutex_unlock(&rp->mu);
	pthread_rwlock_unlock(&rp->rw);
}

void
rp_take(rowplace *rp, uint64_t k, size_t rows, const void *src)
{
	struct entry *e = &rp->ring[k % rp->n];
	int written = 0;

	pthread_mutex_lock(&rp->mu);
	if (e->k == k) {
		while (e->st == S_WRITING)
			pthread_cond_wait(&rp->cv, &rp->mu);
		written = e->st == S_DONE && e->rows > 0;
		if (!written)
			e->st = S_CALLER;
	}
	size_t counted = rp->counted;
	pthread_mutex_unlock(&rp->mu);
	if (written) {
		/* a thread wrote it where the caller would have: every row before it is in */
		if (e->off != rp->taken || e->rows != rows)
			die("rowplace: chunk %llu placed at row %zu with %zu rows, taken at %zu with %zu",
			    (unsigned long long)k, e->off, e->rows, rp->taken, rows);
	} else if (rows > 0) {
		grow(rp, rp->taken + rows, counted);
		memcpy(rp->data + rp->taken * rp->row_bytes, src, rows * rp->row_bytes);
	}
	rp->taken += rows;
	grow(rp, rp->taken, counted);
}

void *
rp_finish(rowplace *rp, size_t *rows)
{
	void *data = rp->data;
	*rows = rp->taken;
	if (data != NULL && rp->taken < rp->cap)
		data = xreallocarray(data, MAX(rp->taken, 1), rp->row_bytes);
	pthread_rwlock_destroy(&rp->rw);
	pthread_cond_destroy(&rp->cv);
	pthread_mutex_destroy(&rp->mu);
	free(rp->ring);
	free(rp);
	return data;
}
