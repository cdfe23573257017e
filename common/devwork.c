/* devwork.c: see devwork.h.
 *
 * A slot is FREE, MAKING (the maker fills it), MADE (waiting for a worker), BUSY (a
 * worker processes it), DONE (waiting for its turn in order) or HELD (the caller's).
 * One mutex guards every slot's state and one condition variable signals any change:
 * the units are large (a chunk of a device's work), so a broadcast a change costs
 * nothing next to them and keeps the waiting rules plain.
 *
 * No deadlock: units are made in order, so while the caller waits for unit `want`,
 * every occupied slot holds a unit >= want, and want itself is made (a slot is free,
 * or want is already made); workers take the lowest MADE unit first, so want is
 * processed before any unit that was made after it. */
#include "devwork.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "timer.h"

enum { FREE, MAKING, MADE, BUSY, DONE, HELD };

struct worker {
	dw *e;
	int w;
	pthread_t tid;
	double busy, weight;
	uint64_t units;
};

struct dw {
	const struct dw_ops *ops;
	void *ctx;
	void **slots;
	int nslots, nworkers;
	int *state;
	uint64_t *idx;		/* the unit in each slot */
	int *who;		/* the worker that processed it */
	int *failed;		/* process returned nonzero: the message is in err */
	char (*err)[DW_ERR];
	struct worker *wk;
	void **state_of;	/* each worker's, from init */
	int ninit;		/* workers whose init has run */
	pthread_t maker;
	int maker_started;
	int joined;		/* dw_join has run */
	pthread_mutex_t mu;	/* everything above and below */
	pthread_cond_t cv;	/* any change of it */
	uint64_t want;		/* the next unit to hand out */
	uint64_t nput;		/* the caller's units (make NULL): the next one's index */
	uint64_t total;		/* the number of units, once ended */
	int ended;		/* the maker has made its last unit */
	int stop;		/* dw_close: every thread ends */
	int held;		/* the slot the caller holds, or -1 */
};

static void *
maker_main(void *arg)
{
	dw *e = arg;

	for (uint64_t k = 0;; k++) {
		int s = -1;
		pthread_mutex_lock(&e->mu);
		for (;;) {
			for (int i = 0; i < e->nslots && s < 0; i++)
				if (e->state[i] == FREE)
					s = i;
			if (s >= 0 || e->stop)
				break;
			pthread_cond_wait(&e->cv, &e->mu);
		}
		if (s < 0) {
			pthread_mutex_unlock(&e->mu);
			return NULL;
		}
		e->state[s] = MAKING;
		pthread_mutex_unlock(&e->mu);

		int r = e->ops->make(e->ctx, e->slots[s], k);

		pthread_mutex_lock(&e->mu);
		if (r == DW_NONE) {
			e->state[s] = FREE;
			e->total = k;
		} else {
			e->state[s] = MADE;
			e->idx[s] = k;
			e->failed[s] = 0;
			e->total = k + 1;
		}
		e->ended = r != DW_MORE;
		pthread_cond_broadcast(&e->cv);
		pthread_mutex_unlock(&e->mu);
		if (r != DW_MORE)
			return NULL;
	}
}

static void *
worker_main(void *arg)
{
	struct worker *wk = arg;
	dw *e = wk->e;
	void *state = e->ops->init != NULL ? e->ops->init(e->ctx, wk->w) : NULL;

	pthread_mutex_lock(&e->mu);
	e->state_of[wk->w] = state;
	e->ninit++;
	pthread_cond_broadcast(&e->cv);
	for (;;) {
		int s = -1;
		for (int i = 0; i < e->nslots; i++)
			if (e->state[i] == MADE && (s < 0 || e->idx[i] < e->idx[s]))
				s = i;
		if (s < 0) {
			if (e->stop || e->ended)
				break;	/* nothing made is left, and nothing more comes */
			pthread_cond_wait(&e->cv, &e->mu);
			continue;
		}
		e->state[s] = BUSY;
		pthread_mutex_unlock(&e->mu);

		double t0 = now_sec();
		int r = e->ops->process(e->ctx, state, wk->w, e->slots[s], e->err[s]);
		double t = now_sec() - t0;
		double wt = e->ops->weight != NULL ? e->ops->weight(e->ctx, e->slots[s]) : 1;

		pthread_mutex_lock(&e->mu);
		wk->busy += t;
		wk->weight += wt;
		wk->units++;
		e->who[s] = wk->w;
		e->failed[s] = r != 0;
		e->state[s] = DONE;
		pthread_cond_broadcast(&e->cv);
	}
	pthread_mutex_unlock(&e->mu);
	if (e->ops->fini != NULL) {
		double t0 = now_sec();
		e->ops->fini(e->ctx, state, wk->w);
		wk->busy += now_sec() - t0;	/* read after the join only */
	}
	return NULL;
}

dw *
dw_open(const struct dw_ops *ops, void *ctx, void **slots, int nslots, int nworkers)
{
	if (nworkers < 1 || nslots < nworkers + 2)
		die("dw_open: %d slots for %d workers", nslots, nworkers);
	dw *e = xcalloc(1, sizeof *e);
	e->ops = ops;
	e->ctx = ctx;
	e->slots = slots;
	e->nslots = nslots;
	e->nworkers = nworkers;
	e->state = xcalloc((size_t)nslots, sizeof *e->state);
	e->idx = xcalloc((size_t)nslots, sizeof *e->idx);
	e->who = xcalloc((size_t)nslots, sizeof *e->who);
	e->failed = xcalloc((size_t)nslots, sizeof *e->failed);
	e->err = xcalloc((size_t)nslots, sizeof *e->err);
	e->wk = xcalloc((size_t)nworkers, sizeof *e->wk);
	e->state_of = xcalloc((size_t)nworkers, sizeof *e->state_of);
	e->held = -1;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	for (int w = 0; w < nworkers; w++) {
		e->wk[w].e = e;
		e->wk[w].w = w;
		if (pthread_create(&e->wk[w].tid, NULL, worker_main, &e->wk[w]) != 0)
			die("cannot start a thread");
	}
	pthread_mutex_lock(&e->mu);
	while (e->ninit < nworkers)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return e;
}

void *
dw_state(const dw *e, int w)
{
	return e->state_of[w];
}

int
dw_ready(dw *e)
{
	int ready = 0;
	pthread_mutex_lock(&e->mu);
	for (int i = 0; i < e->nslots && !ready; i++)
		ready = e->state[i] == DONE && e->idx[i] == e->want;
	pthread_mutex_unlock(&e->mu);
	return ready;
}

void *
dw_next(dw *e, int *worker)
{
	int s = -1;

	if (!e->maker_started && e->ops->make != NULL) {
		if (pthread_create(&e->maker, NULL, maker_main, e) != 0)
			die("cannot start a thread");
		e->maker_started = 1;
	}
	pthread_mutex_lock(&e->mu);
	if (e->held >= 0) {
		e->state[e->held] = FREE;
		e->held = -1;
		pthread_cond_broadcast(&e->cv);
	}
	for (;;) {
		for (int i = 0; i < e->nslots && s < 0; i++)
			if (e->state[i] == DONE && e->idx[i] == e->want)
				s = i;
		if (s >= 0 || (e->ended && e->want >= e->total))
			break;
		pthread_cond_wait(&e->cv, &e->mu);
	}
	if (s < 0) {
		pthread_mutex_unlock(&e->mu);
		return NULL;
	}
	e->state[s] = HELD;
	e->held = s;
	e->want++;
	int failed = e->failed[s];
	pthread_mutex_unlock(&e->mu);
	if (failed)
		die("%s", e->err[s]);
	if (worker != NULL)
		*worker = e->who[s];
	return e->slots[s];
}

void *
dw_slot(dw *e)
{
	int s = -1;
	pthread_mutex_lock(&e->mu);
	for (int i = 0; i < e->nslots && s < 0; i++)
		if (e->state[i] == FREE)
			s = i;
	if (s >= 0)
		e->state[s] = MAKING;
	pthread_mutex_unlock(&e->mu);
	return s >= 0 ? e->slots[s] : NULL;
}

/* The index of a slot the caller holds (it names it by pointer). */
static int
slot_index(const dw *e, const void *slot)
{
	for (int i = 0; i < e->nslots; i++)
		if (e->slots[i] == slot)
			return i;
	die("devwork: %p is not a slot", slot);
}

void
dw_put(dw *e, void *slot)
{
	int s = slot_index(e, slot);
	pthread_mutex_lock(&e->mu);
	e->idx[s] = e->nput++;
	e->failed[s] = 0;
	e->state[s] = MADE;
	e->total = e->nput;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

void
dw_unslot(dw *e, void *slot)
{
	int s = slot_index(e, slot);
	pthread_mutex_lock(&e->mu);
	e->state[s] = FREE;
	pthread_mutex_unlock(&e->mu);
}

void
dw_end(dw *e)
{
	pthread_mutex_lock(&e->mu);
	e->total = e->nput;
	e->ended = 1;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

void
dw_done(dw *e)
{
	pthread_mutex_lock(&e->mu);
	if (e->held >= 0) {
		e->state[e->held] = FREE;
		e->held = -1;
		pthread_cond_broadcast(&e->cv);
	}
	pthread_mutex_unlock(&e->mu);
}

double
dw_busy(const dw *e, int w)
{
	return e->wk[w].busy;
}

double
dw_share(const dw *e, int w)
{
	double sum = 0;
	for (int i = 0; i < e->nworkers; i++)
		sum += e->wk[i].weight;
	return sum > 0 ? e->wk[w].weight / sum : 0;
}

void
dw_report(const dw *e, const char *const *names)
{
	for (int w = 0; w < e->nworkers; w++)
		vlog("%s share %.0f%% busy %.2f s (units %llu)", names[w], 100 * dw_share(e, w),
		    dw_busy(e, w), (unsigned long long)e->wk[w].units);
}

void
dw_join(dw *e)
{
	if (e->joined)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = 1;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	if (e->maker_started)
		pthread_join(e->maker, NULL);
	for (int w = 0; w < e->nworkers; w++)
		pthread_join(e->wk[w].tid, NULL);
	e->joined = 1;
}

void
dw_close(dw *e)
{
	if (e == NULL)
		return;
	dw_join(e);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e->state);
	free(e->idx);
	free(e->who);
	free(e->failed);
	free(e->err);
	free(e->wk);
	free(e->state_of);
	free(e);
}
