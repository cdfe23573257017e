/* devwork.c: see devwork.h.
 *
 * A slot is FREE, MAKING (its unit is being made), MADE (waiting for a worker), BUSY (a
 * worker processes it), DONE (waiting for its turn in order) or HELD (the caller's).
 * One mutex guards every slot's state and one condition variable signals any change:
 * the units are large (a megabyte of text, a chunk of a device's work), so a broadcast
 * a change costs nothing next to them and keeps the waiting rules plain.
 *
 * Who makes the units is the one thing the three ways of opening differ in: a maker
 * thread of its own (dw_open: reading overlaps the devices' work), the workers in turn
 * (dw_open_threads: on the CPU the reading is spread over the same threads that parse,
 * none idles while there is work), or the caller (make NULL: dw_slot, dw_put). Units
 * are made in order, one at a time, whoever makes them.
 *
 * No deadlock: units are made in order, so while the caller waits for unit `want`,
 * every occupied slot holds a unit >= want, and want itself is made (a slot is free,
 * or want is already made); workers take the lowest MADE unit first, so want is
 * processed before any unit that was made after it. */
#include "devwork.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "timer.h"

enum { FREE, MAKING, MADE, BUSY, DONE, HELD };

/* Who makes the units. */
enum { BY_MAKER, BY_WORKERS, BY_CALLER };

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
	int by;			/* BY_* */
	int threads;		/* devices' workers: the opener's OpenMP threads (-j) */
	int *state;
	uint64_t *idx;		/* the unit in each slot */
	int *who;		/* the worker that processed it */
	int *failed;		/* process returned nonzero: the message is in err */
	char (*err)[DW_ERR];
	struct worker *wk;
	void **state_of;	/* each worker's, from init */
	int ninit;		/* workers whose init has run */
	int nstarted;		/* worker threads started */
	int start_rc;		/* pthread_create's error when one did not start */
	pthread_t maker;
	int maker_started;
	int joined;		/* dw_join has run */
	pthread_mutex_t mu;	/* everything above and below */
	pthread_cond_t cv;	/* any change of it */
	uint64_t next;		/* the next unit to make */
	int making;		/* a unit is being made (BY_WORKERS: by whom does not matter) */
	uint64_t want;		/* the next unit to hand out */
	uint64_t total;		/* the number of units, once ended */
	int ended;		/* the last unit is made */
	int stop;		/* dw_join: every thread ends */
	int held;		/* the slot the caller holds, or -1 */
};

static int
free_slot(const dw *e)
{
	for (int i = 0; i < e->nslots; i++)
		if (e->state[i] == FREE)
			return i;
	return -1;
}

/* Records what make said of unit e->next in slot s (mu held). */
static void
made(dw *e, int s, int r)
{
	if (r == DW_NONE) {
		e->state[s] = FREE;
		e->total = e->next;
	} else {
		e->state[s] = MADE;
		e->idx[s] = e->next;
		e->failed[s] = 0;
		e->total = ++e->next;
	}
	e->ended = r != DW_MORE;
	pthread_cond_broadcast(&e->cv);
}

/* make, with cancellation allowed only while it runs (BY_WORKERS): dw_join cancels a
 * worker that waits in read(2) for input that may never come. No lock is held. */
static int
make_cancellable(dw *e, int s, uint64_t k)
{
	int r;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	r = e->ops->make(e->ctx, e->slots[s], k);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	return r;
}

static void *
maker_main(void *arg)
{
	dw *e = arg;

	pthread_mutex_lock(&e->mu);
	while (!e->ended) {
		int s;
		while ((s = free_slot(e)) < 0 && !e->stop)
			pthread_cond_wait(&e->cv, &e->mu);
		if (s < 0)
			break;
		e->state[s] = MAKING;
		const uint64_t k = e->next;
		pthread_mutex_unlock(&e->mu);
		int r = e->ops->make(e->ctx, e->slots[s], k);
		pthread_mutex_lock(&e->mu);
		made(e, s, r);
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

/* Processes the unit in slot s on worker wk (mu held on entry and on return). */
static void
process(dw *e, struct worker *wk, void *state, int s)
{
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

static void *
worker_main(void *arg)
{
	struct worker *wk = arg;
	dw *e = wk->e;
	/* -j is a setting of the thread that made it (omp_set_num_threads); a new thread
	 * starts from OpenMP's default, every core: a worker's CPU work keeps to -j */
	if (e->threads > 0)
		omp_set_num_threads(e->threads);
	void *state = e->ops->init != NULL ? e->ops->init(e->ctx, wk->w) : NULL;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&e->mu);
	e->state_of[wk->w] = state;
	e->ninit++;
	pthread_cond_broadcast(&e->cv);
	while (!e->stop) {
		int s = -1;
		for (int i = 0; i < e->nslots; i++)
			if (e->state[i] == MADE && (s < 0 || e->idx[i] < e->idx[s]))
				s = i;
		if (s >= 0) {
			process(e, wk, state, s);
			continue;
		}
		if (e->ended)
			break;	/* nothing made is left, and nothing more comes */
		if (e->by == BY_WORKERS && !e->making && (s = free_slot(e)) >= 0) {
			/* Nothing to process: this worker makes the next unit. */
			e->making = 1;
			e->state[s] = MAKING;
			const uint64_t k = e->next;
			pthread_mutex_unlock(&e->mu);
			int r = make_cancellable(e, s, k);
			pthread_mutex_lock(&e->mu);
			e->making = 0;
			made(e, s, r);
			continue;
		}
		pthread_cond_wait(&e->cv, &e->mu);
	}
	pthread_mutex_unlock(&e->mu);
	if (e->ops->fini != NULL) {
		double t0 = now_sec();
		e->ops->fini(e->ctx, state, wk->w);
		wk->busy += now_sec() - t0;	/* read after the join only */
	}
	return NULL;
}

static dw *
dw_new(const struct dw_ops *ops, void *ctx, void **slots, int nslots, int nworkers, int by)
{
	dw *e = xcalloc(1, sizeof *e);
	e->ops = ops;
	e->ctx = ctx;
	e->slots = slots;
	e->nslots = nslots;
	e->nworkers = nworkers;
	e->by = by;
	/* A device's worker may run OpenMP (the CPU path under ACCELKIT_CPU_WORKERS, its
	 * copies); readers (BY_WORKERS) do not, and an OpenMP call there would give the
	 * thread OpenMP's state, allocated and freed at the thread's exit. */
	e->threads = by == BY_WORKERS ? 0 : omp_get_max_threads();
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
	}
	return e;
}

/* Starts the worker threads; returns how many started. */
static int
start_workers(dw *e)
{
	for (int w = 0; w < e->nworkers; w++)
		if ((e->start_rc = pthread_create(&e->wk[w].tid, NULL, worker_main, &e->wk[w])) == 0)
			e->nstarted++;
		else
			break;
	return e->nstarted;
}

dw *
dw_open(const struct dw_ops *ops, void *ctx, void **slots, int nslots, int nworkers)
{
	if (nworkers < 1 || nslots < nworkers + 2)
		die("dw_open: %d slots for %d workers", nslots, nworkers);
	dw *e = dw_new(ops, ctx, slots, nslots, nworkers, ops->make != NULL ? BY_MAKER :
	    BY_CALLER);
	if (start_workers(e) < nworkers)
		die_no_thread(e->start_rc, NULL);
	pthread_mutex_lock(&e->mu);
	while (e->ninit < nworkers)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return e;
}

dw *
dw_open_threads(const struct dw_ops *ops, void *ctx, void **slots, int nslots, int nthreads)
{
	if (ops->make == NULL || ops->init != NULL || ops->fini != NULL || nslots < 1)
		die("dw_open_threads: a make, no state, a slot at least");
	return dw_new(ops, ctx, slots, nslots, nslots > 1 ? MAX(nthreads, 1) : 1, BY_WORKERS);
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

/* BY_WORKERS before its threads start: the caller's thread makes and processes the
 * next unit itself, in slot 0. Always with one thread; with more, until a second unit
 * turns out to exist (then the threads start, and make from it on while the caller
 * processes the first): a small input starts no thread. */
static void *
next_inline(dw *e)
{
	if (e->ended && e->want >= e->total)
		return NULL;
	e->state[0] = MAKING;
	int r = e->ops->make(e->ctx, e->slots[0], e->next);
	pthread_mutex_lock(&e->mu);
	made(e, 0, r);
	if (r == DW_NONE) {
		pthread_mutex_unlock(&e->mu);
		return NULL;
	}
	e->state[0] = HELD;
	e->held = 0;
	e->want++;
	pthread_mutex_unlock(&e->mu);
	if (r == DW_MORE && e->nworkers > 1 && start_workers(e) == 0)
		e->nworkers = 1;	/* no thread to be had: go on alone */

	struct worker *wk = &e->wk[0];
	double t0 = now_sec();
	int failed = e->ops->process(e->ctx, NULL, 0, e->slots[0], e->err[0]);
	double t = now_sec() - t0, wt = e->ops->weight != NULL ?
	    e->ops->weight(e->ctx, e->slots[0]) : 1;
	pthread_mutex_lock(&e->mu);
	wk->busy += t;
	wk->weight += wt;
	wk->units++;
	pthread_mutex_unlock(&e->mu);
	if (failed)
		die("%s", e->err[0]);
	return e->slots[0];
}

void *
dw_next(dw *e, int *worker)
{
	int s = -1;

	if (!e->maker_started && e->by == BY_MAKER) {
		int rc = pthread_create(&e->maker, NULL, maker_main, e);
		if (rc != 0)
			die_no_thread(rc, NULL);
		e->maker_started = 1;
	}
	pthread_mutex_lock(&e->mu);
	if (e->held >= 0) {
		e->state[e->held] = FREE;
		e->held = -1;
		pthread_cond_broadcast(&e->cv);
	}
	if (e->by == BY_WORKERS && e->nstarted == 0) {
		pthread_mutex_unlock(&e->mu);
		if (worker != NULL)
			*worker = 0;
		return next_inline(e);
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
	int s;
	pthread_mutex_lock(&e->mu);
	if ((s = free_slot(e)) >= 0)
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
	made(e, s, DW_MORE);
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
	e->total = e->next;
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
	/* A worker may wait in make for input that never comes (a caller that stops
	 * early); cancellation reaches it only there. */
	for (int w = 0; e->by == BY_WORKERS && w < e->nstarted; w++)
		pthread_cancel(e->wk[w].tid);
	for (int w = 0; w < e->nstarted; w++)
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
