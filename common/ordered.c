/* ordered.c: see ordered.h.
 *
 * A slot is FREE, BUSY (its item is being made or processed), DONE (processed, waiting
 * for its turn) or HELD (the caller's). One mutex guards the slots; a second one lets
 * a single thread make at a time, so items are made in order. A thread makes an item,
 * then processes it: the making (reading input) is spread over the threads rather
 * than given to one of its own, and no thread idles while there is work. */
#include "ordered.h"

#include <pthread.h>
#include <stdlib.h>

#include "err.h"

enum { FREE, BUSY, DONE, HELD };

struct ord {
	const struct ord_ops *ops;
	void *ctx;
	void **slots;
	int *state;
	uint64_t *idx;		/* the item in each slot */
	int nslots, nthreads, nstarted;
	pthread_t *tid;
	pthread_mutex_t mu;	/* state, idx, want, ended, total, stop */
	pthread_cond_t cv;	/* any change of those */
	pthread_mutex_t make_mu;	/* one make at a time; guards next */
	uint64_t next;		/* the next item to make */
	uint64_t want;		/* the next item to hand out */
	uint64_t total;		/* the number of items, once ended */
	int ended, stop;
	int held;		/* the slot the caller holds, or -1 */
};

ord *
ord_open(const struct ord_ops *ops, void *ctx, void **slots, int nslots, int nthreads)
{
	ord *o = xcalloc(1, sizeof *o);
	o->ops = ops;
	o->ctx = ctx;
	o->slots = slots;
	o->nslots = MAX(nslots, 1);
	o->nthreads = nslots > 1 ? MAX(nthreads, 1) : 1;
	o->state = xcalloc((size_t)o->nslots, sizeof *o->state);
	o->idx = xcalloc((size_t)o->nslots, sizeof *o->idx);
	o->tid = xcalloc((size_t)o->nthreads, sizeof *o->tid);
	o->held = -1;
	pthread_mutex_init(&o->mu, NULL);
	pthread_mutex_init(&o->make_mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	return o;
}

static int
free_slot(const ord *o)
{
	for (int s = 0; s < o->nslots; s++)
		if (o->state[s] == FREE)
			return s;
	return -1;
}

static void
unlock_mutex(void *m)
{
	pthread_mutex_unlock(m);
}

/* make, with cancellation allowed only while it runs: ord_close cancels a thread that
 * waits in read(2) for input that may never come. The make lock is then released. */
static int
make_cancellable(ord *o, int s, uint64_t k)
{
	int r;
	pthread_cleanup_push(unlock_mutex, &o->make_mu);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	r = o->ops->make(o->ctx, o->slots[s], k);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_pop(0);
	return r;
}

static void *
worker(void *arg)
{
	ord *o = arg;
	int s;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		pthread_mutex_lock(&o->make_mu);
		pthread_mutex_lock(&o->mu);
		while (!o->stop && !o->ended && (s = free_slot(o)) < 0)
			pthread_cond_wait(&o->cv, &o->mu);
		if (o->stop || o->ended) {
			pthread_mutex_unlock(&o->mu);
			pthread_mutex_unlock(&o->make_mu);
			return NULL;
		}
		o->state[s] = BUSY;
		pthread_mutex_unlock(&o->mu);

		uint64_t k = o->next;
		int r = make_cancellable(o, s, k);
		pthread_mutex_lock(&o->mu);
		if (r == ORD_NONE) {
			o->state[s] = FREE;
			o->ended = 1;
			o->total = k;
			pthread_cond_broadcast(&o->cv);
			pthread_mutex_unlock(&o->mu);
			pthread_mutex_unlock(&o->make_mu);
			return NULL;
		}
		o->idx[s] = k;
		o->next = k + 1;
		if (r == ORD_LAST) {
			o->ended = 1;
			o->total = k + 1;
			pthread_cond_broadcast(&o->cv);
		}
		pthread_mutex_unlock(&o->mu);
		pthread_mutex_unlock(&o->make_mu);

		o->ops->process(o->ctx, o->slots[s]);
		pthread_mutex_lock(&o->mu);
		o->state[s] = DONE;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
	}
}

/* The caller's thread makes and processes the item itself: always with one thread,
 * and for the first item with more (the threads start once there is a second). */
static void *
next_inline(ord *o)
{
	if (o->ended && o->want >= o->total)
		return NULL;
	int r = o->ops->make(o->ctx, o->slots[0], o->want);
	if (r == ORD_NONE) {
		o->ended = 1;
		o->total = o->want;
		return NULL;
	}
	if (r == ORD_LAST) {
		o->ended = 1;
		o->total = o->want + 1;
	}
	o->next = o->want + 1;
	o->state[0] = HELD;
	o->held = 0;
	o->want++;
	if (r == ORD_MORE && o->nthreads > 1) {
		for (int t = 0; t < o->nthreads; t++)
			if (pthread_create(&o->tid[o->nstarted], NULL, worker, o) == 0)
				o->nstarted++;
		if (o->nstarted == 0)
			o->nthreads = 1;	/* no thread to be had: go on alone */
	}
	o->ops->process(o->ctx, o->slots[0]);
	return o->slots[0];
}

void *
ord_next(ord *o)
{
	int s = -1;

	if (o->held >= 0) {
		pthread_mutex_lock(&o->mu);
		o->state[o->held] = FREE;
		o->held = -1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
	}
	if (o->nstarted == 0)
		return next_inline(o);
	pthread_mutex_lock(&o->mu);
	for (;;) {
		for (int i = 0; i < o->nslots && s < 0; i++)
			if (o->state[i] == DONE && o->idx[i] == o->want)
				s = i;
		if (s >= 0 || (o->ended && o->want >= o->total))
			break;
		pthread_cond_wait(&o->cv, &o->mu);
	}
	if (s >= 0) {
		o->state[s] = HELD;
		o->held = s;
		o->want++;
	}
	pthread_mutex_unlock(&o->mu);
	return s >= 0 ? o->slots[s] : NULL;
}

void
ord_close(ord *o)
{
	if (o == NULL)
		return;
	pthread_mutex_lock(&o->mu);
	o->stop = 1;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	for (int t = 0; t < o->nstarted; t++)
		pthread_cancel(o->tid[t]);
	for (int t = 0; t < o->nstarted; t++)
		pthread_join(o->tid[t], NULL);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	pthread_mutex_destroy(&o->make_mu);
	free(o->state);
	free(o->idx);
	free(o->tid);
	free(o);
}
