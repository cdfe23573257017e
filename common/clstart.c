/* clstart.c: the OpenCL device opened on a thread while the input is read.
 * clx_start (opencl.h), as cuda_start does for CUDA: the thread decides the device,
 * opens it and runs the program's set-up (its build) while the caller reads.
 *
 * The thread does not end once its work is done: it says so and then waits for the
 * process's end. A platform's compiler may change the thread's state beneath us (LLVM
 * in PoCL sets an alternate signal stack on the thread that builds), and a thread
 * ending after that trips AddressSanitizer's teardown (make check SANITIZE=1); one
 * parked thread costs nothing. Its state stays reachable (kept) for the leak checker. */
#include "opencl_int.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "timer.h"

struct clx_start {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int done;
	char *spec, *filter;
	const char *decided;	/* the spec opened, for clx_start_spec */
	int flags, max, n;
	double work;
	clx_model_fn *model;
	clx_prep_fn *prep;
	void *ctx;
	struct clx *xs;
	struct clx_start *next;	/* the list of starts, kept */
};
static struct clx_start *_Atomic starts_kept;

static void *
start_main(void *arg)
{
	struct clx_start *st = arg;
	const char *spec = st->model != NULL ? clx_decide(st->spec, st->filter, st->work,
	    st->model, st->ctx) : st->spec;
	double t0 = now_sec();
	st->decided = spec;
	if (st->model != NULL && (strcmp(spec, "auto") == 0 ||
	    ((st->flags & CLX_CPU_IS_HOST) && strcmp(spec, "cpu") == 0))) {
		st->n = 0;	/* no OpenCL device, or the CPU, which is the caller's host */
	} else {
		st->n = clx_open_many(spec, st->filter, st->flags & ~CLX_CPU_IS_HOST, st->xs,
		    st->max);
		phase_add("open device", now_sec() - t0);
		if (st->prep != NULL)
			st->prep(st->xs, st->n, st->ctx);
	}
	pthread_mutex_lock(&st->mu);
	st->done = 1;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->mu);
	for (;;)
		pause();
	return NULL;
}

struct clx_start *
clx_start(const char *spec, const char *filter, int flags, double work, clx_model_fn *model,
    clx_prep_fn *prep, void *ctx, struct clx *xs, int max)
{
	struct clx_start *st = xcalloc(1, sizeof *st);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->spec = xstrdup(spec != NULL ? spec : "auto");
	st->filter = filter != NULL ? xstrdup(filter) : NULL;
	st->flags = flags;
	st->max = MIN(max, CLX_MAX_MANY);
	st->work = work;
	st->model = model;
	st->prep = prep;
	st->ctx = ctx;
	st->xs = xs;
	st->next = starts_kept;
	starts_kept = st;
	clx_icd_restrict(st->spec);
	int err = pthread_create(&st->thread, NULL, start_main, st);
	if (err != 0)
		die_no_thread(err, NULL);	/* out of memory under a limit, said so */
	pthread_detach(st->thread);
	return st;
}

int
clx_start_wait(struct clx_start *st)
{
	double t0 = now_sec();
	pthread_mutex_lock(&st->mu);
	while (!st->done)
		pthread_cond_wait(&st->cond, &st->mu);
	pthread_mutex_unlock(&st->mu);
	phase_add("open device (waited)", now_sec() - t0);
	return st->n;
}

const char *
clx_start_spec(const struct clx_start *st)
{
	return st->decided;
}
