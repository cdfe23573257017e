/* cudadev.c: see cudadev.h. */
#include "cudadev.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "detach.h"
#include "err.h"
#include "ranks.h"
#include "output.h"
#include "timer.h"
#include "tune.h"

#ifdef ACCELKIT_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.h"

void
cuda_fail(const char *expr, const char *file, int line, int err)
{
	die("%s:%d: %s: %s (%s)", file, line, expr, cudaGetErrorName((cudaError_t)err),
	    cudaGetErrorString((cudaError_t)err));
}

static int
gpu_count(void)
{
	int n = 0;
	/* No driver, no device: both mean "no GPU here", not an error for auto. */
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
}
#else
static int
gpu_count(void)
{
	return 0;
}
#endif

int
cuda_compiled(void)
{
#ifdef ACCELKIT_CUDA
	return 1;
#else
	return 0;
#endif
}

static void
use_cpu(struct cuda_dev *d)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "cpu (%d threads)", omp_get_max_threads());
	tune_describe_cuda(d->desc, sizeof d->desc, NULL, 0, 0);
}

/* "0,2,3" into ids[]; returns the count. */
static int
parse_ids(const char *spec, const char *list, int *ids)
{
	int n = 0;
	const char *p = list;
	for (;;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 1023 || n == CUDADEV_MAX)
			usage_error("invalid device '%s' (expected auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M)", spec);
		ids[n++] = (int)v;
		if (*end == '\0')
			return n;
		if (*end != ',')
			usage_error("invalid device '%s' (expected auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M)", spec);
		p = end + 1;
	}
}

#ifdef ACCELKIT_CUDA
/* A further GPU's context, made in a thread of its own so that the GPUs of gpu:all
 * start side by side (100-150 ms each) rather than one after another. The error is
 * kept for the caller: an exit from this thread could not wait for the start-up. */
struct ctx_start {
	int id;
	cudaError_t err;
};

static void *
ctx_start_main(void *arg)
{
	struct ctx_start *c = arg;
	c->err = cudaSetDevice(c->id);
	if (c->err == cudaSuccess)
		c->err = cudaFree(0);
	return NULL;
}
#endif

/* d->name for several GPUs: "2 GPUs gpu:0,1 MODEL", the model the first's (as is the
 * tuning row: "gpu:0,1" of unlike GPUs runs with the first's). */
static void
name_many(struct cuda_dev *d, const char *model)
{
	char name[sizeof d->name];
	int n = snprintf(name, sizeof name, "%d GPUs gpu:%d", d->ngpus, d->ids[0]);
	for (int i = 1; i < d->ngpus; i++)
		if (n > 0 && (size_t)n < sizeof name)
			n += snprintf(name + n, sizeof name - (size_t)n, ",%d", d->ids[i]);
	if (n > 0 && (size_t)n < sizeof name)
		snprintf(name + n, sizeof name - (size_t)n, " %s", model);
	memcpy(d->name, name, sizeof name);
}

/* cuda_select without its -v line, which it returns instead ("" or a reason), so that
 * the start-up thread leaves the printing to the main thread. */
static const char *
select_device(const char *spec, int allow_multi, struct cuda_dev *d)
{
	int want[CUDADEV_MAX], nwant = 0, all = 0, per_rank = 0;

	if (spec == NULL)
		spec = "auto";
	if (strcmp(spec, "cpu") == 0) {
		use_cpu(d);
		return "";
	}
	if (strcmp(spec, "auto") == 0) {
		if (gpu_count() == 0) {
			use_cpu(d);
			return cuda_compiled() ? " (no usable GPU)" : " (no usable GPU: built without CUDA)";
		}
		want[nwant++] = 0;
		per_rank = 1;
	} else if (strcmp(spec, "gpu") == 0) {
		want[nwant++] = 0;
		per_rank = 1;
	} else if (strncmp(spec, "gpu:", 4) == 0) {
		if (strcmp(spec + 4, "all") == 0)
			all = 1;
		else
			nwant = parse_ids(spec, spec + 4, want);
	} else {
		usage_error("invalid device '%s' (expected auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M)", spec);
	}
	if (!cuda_compiled())
		die("device '%s': GPU support was not compiled in (this build has no CUDA; use -d cpu)", spec);
	int have = gpu_count();
	if (have == 0)
		die("device '%s': no usable CUDA GPU found", spec);
	/* under mpirun, each rank of a host its own GPU (in turn when ranks outnumber them) */
	if (per_rank)
		want[0] = ranks_local() % have;
	if (all) {
		nwant = MIN(have, CUDADEV_MAX);
		for (int i = 0; i < nwant; i++)
			want[i] = i;
	}
	for (int i = 0; i < nwant; i++)
		if (want[i] >= have)
			die("device '%s': there is no GPU %d (%d found)", spec, want[i], have);
	/* under mpirun, a list is the GPUs that the ranks of a host share, dealt out among
	 * them (ranks.h); pick is ascending with pick[i] >= i, so in place */
	if (!per_rank && ranks_size() > 1) {
		int pick[CUDADEV_MAX], k = ranks_deal(nwant, pick);
		for (int i = 0; i < k; i++)
			want[i] = want[pick[i]];
		nwant = k;
	}
	if (nwant > 1 && !allow_multi)
		usage_error("device '%s': this program uses one GPU (give gpu or gpu:N)", spec);

	memset(d, 0, sizeof *d);
	d->gpu = 1;
	d->ngpus = nwant;
	memcpy(d->ids, want, sizeof want);
#ifdef ACCELKIT_CUDA
	/* The other GPUs' contexts are made while the program reads, rather than in the
	 * workers' first calls, each in its own thread; ids[0] stays this thread's device. */
	struct ctx_start more[CUDADEV_MAX];
	pthread_t tid[CUDADEV_MAX];
	int started[CUDADEV_MAX] = {0};
	for (int i = 1; i < nwant; i++) {
		more[i].id = d->ids[i];
		more[i].err = cudaSuccess;
		started[i] = pthread_create(&tid[i], NULL, ctx_start_main, &more[i]) == 0;
		if (!started[i])
			ctx_start_main(&more[i]);
	}
	struct cudaDeviceProp prop;
	CUDA_CHECK(cudaSetDevice(d->ids[0]));
	CUDA_CHECK(cudaGetDeviceProperties(&prop, d->ids[0]));
	CUDA_CHECK(cudaFree(0));	/* create the context now, so its cost is not billed to a phase */
	CUDA_CHECK(cudaMemGetInfo(&d->mem_free, &d->mem_total));
	d->sm_count = prop.multiProcessorCount;
	tune_describe_cuda(d->desc, sizeof d->desc, prop.name, prop.major, prop.minor);
	if (nwant == 1) {
		snprintf(d->name, sizeof d->name, "gpu:%d %s", d->ids[0], prop.name);
	} else {
		for (int i = 1; i < nwant; i++) {
			if (started[i])
				pthread_join(tid[i], NULL);
			if (more[i].err != cudaSuccess)
				cuda_fail("cudaFree(0) on a further GPU", __FILE__, __LINE__,
				    (int)more[i].err);
		}
		name_many(d, prop.name);
	}
#endif
	return "";
}

void
cuda_select(const char *spec, int allow_multi, struct cuda_dev *d)
{
	const char *why = select_device(spec, allow_multi, d);
	vlog("device: %s%s", d->name, why);
}

/* The start-up thread of cuda_start, at most one at a time. It fills a device of its
 * own, copied to the caller's at cuda_start_wait, so that a thread that is abandoned
 * (auto chose the CPU) never writes into memory the program uses. */
static struct {
	pthread_t thread;
	int running;			/* a thread was started and not joined */
	int deferred;			/* auto with small inputs: no thread yet */
	int grace;			/* auto, inputs of unknown size (or early): the
					   thread waits grace_sec() before it starts CUDA */
	int called_off;			/* cuda_decide chose the CPU within the grace */
	int began;			/* the grace is over: CUDA is starting */
	int go_now;			/* the GPU is wanted: the grace ends at once */
	int early;			/* cuda_decides_early: a grace for any input */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t input_bytes;		/* cuda_input_size's, -1 when unknown */
	int abandoned;			/* cuda_decide chose the CPU while it ran */
	_Atomic int done;		/* the thread has returned */
	double t0;			/* when it began */
	const char *spec;
	int allow_multi;
	void (*init)(const struct cuda_dev *);
	struct cuda_dev dev;		/* what the thread chose */
	const char *why;		/* and its -v note */
	struct cuda_dev *d;		/* the caller's */
} start = {.input_bytes = -1, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* How long the grace is (cudadev.h). */
static double
grace_sec(void)
{
	return start.early && start.input_bytes >= 0 ? CUDA_EARLY_GRACE_SEC : CUDA_GRACE_SEC;
}

/* The grace of an input of unknown size (a pipe): a tiny one is read and weighed
 * before CUDA starts, and a start called off costs nothing, where one abandoned
 * inside the driver holds up the exit. Returns whether CUDA is to start. */
static int
grace(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(grace_sec() * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&start.mu);
	while (!start.called_off && !start.go_now &&
	    pthread_cond_timedwait(&start.cv, &start.mu, &until) == 0)
		;
	int go = !start.called_off;
	start.began = 1;
	pthread_mutex_unlock(&start.mu);
	return go;
}

/* Ends the grace at once: CUDA starts (go), or is called off. */
static void
end_grace(int go)
{
	pthread_mutex_lock(&start.mu);
	if (go)
		start.go_now = 1;
	else if (!start.began)
		start.called_off = 1;
	pthread_cond_signal(&start.cv);
	pthread_mutex_unlock(&start.mu);
}

static void *
start_main(void *arg)
{
	(void)arg;
	if (start.grace && !grace()) {
		use_cpu(&start.dev);
		start.why = "";
		start.done = 1;
		return NULL;
	}
	start.why = select_device(start.spec, start.allow_multi, &start.dev);
	if (start.dev.gpu && start.init != NULL)
		start.init(&start.dev);
	start.done = 1;
	return NULL;
}

/* err_before_exit's hook: an exit of another thread waits for the start-up; an
 * error inside the start-up thread itself just exits (the others are not in CUDA).
 * Any exit status alike. */
static void
start_join_on_exit(int status)
{
	(void)status;
	if (start.running && !pthread_equal(pthread_self(), start.thread)) {
		end_grace(0);
		pthread_join(start.thread, NULL);
		start.running = 0;
	}
}

void
cuda_start(const char *spec, int allow_multi, void (*init)(const struct cuda_dev *),
    struct cuda_dev *d)
{
	start.spec = spec;
	start.allow_multi = allow_multi;
	start.init = init;
	start.d = d;
	start.t0 = now_sec();
	memset(d, 0, sizeof *d);
	if (spec == NULL || strcmp(spec, "cpu") == 0 || !cuda_compiled()) {
		start_main(NULL);
		*d = start.dev;
		vlog("device: %s%s", d->name, start.why);
		return;
	}
	if (strcmp(spec, "auto") == 0 && start.input_bytes >= 0 &&
	    start.input_bytes <= CUDA_DEFER_BYTES) {
		start.deferred = 1;
		return;
	}
	start.grace = strcmp(spec, "auto") == 0 && (start.input_bytes < 0 || start.early);
	start.running = 1;
	err_before_exit(start_join_on_exit);
	if (pthread_create(&start.thread, NULL, start_main, NULL) != 0) {
		start.running = 0;
		start.grace = 0;	/* no decision can come while this thread waits */
		err_before_exit(NULL);
		start_main(NULL);
		*d = start.dev;
		vlog("device: %s%s", d->name, start.why);
	}
}

void
cuda_input_size(int64_t bytes)
{
	start.input_bytes = bytes;
}

void
cuda_decides_early(void)
{
	start.early = 1;
}

int
cuda_deferred(void)
{
	return start.deferred;
}

void
cuda_start_wait(void)
{
	if (start.deferred) {
		double t = now_sec();
		start.deferred = 0;
		start_main(NULL);
		*start.d = start.dev;
		phase_add("device start", now_sec() - t);
		vlog("device: %s%s", start.d->name, start.why);
		return;
	}
	if (!start.running || start.abandoned)
		return;
	double t = now_sec();
	end_grace(1);
	pthread_join(start.thread, NULL);
	start.running = 0;
	err_before_exit(NULL);
	*start.d = start.dev;
	phase_add("device start", now_sec() - t);
	vlog("device: %s%s", start.d->name, start.why);
}

/* Seconds the GPU path would still wait for CUDA's start: none once the thread is done,
 * else what is left of its usual cost. */
static double
start_left(void)
{
	if (start.deferred)
		return CUDA_START_SEC;
	if (!start.running || start.done)
		return 0;
	return MAX(0.0, CUDA_START_SEC + (start.grace ? grace_sec() : 0) -
	    (now_sec() - start.t0));
}

static void settle_cpu(struct cuda_dev *d);

/* Whether -d is auto (also when not given). */
static int
spec_auto(void)
{
	return start.spec == NULL || strcmp(start.spec, "auto") == 0;
}

/* Whether -d is gpu:all. */
static int
spec_all(void)
{
	return start.spec != NULL && strcmp(start.spec, "gpu:all") == 0;
}

/* Whether have GPUs sharing work (cost model m) save more than a further GPU costs:
 * the time one GPU would take less its share, against CUDA_EXTRA_GPU_SEC (or
 * ACCELKIT_EXTRA_GPU_SEC) once, as the further GPUs start side by side. -v says which
 * way and why, after "what: ". No model (a rate of 0): they pay. */
static int
others_pay(const struct cost_model *m, double work, int have, const char *what)
{
	if (!(m->gpu_rate > 0))
		return 1;
	double extra = CUDA_EXTRA_GPU_SEC;
	const char *e = getenv("ACCELKIT_EXTRA_GPU_SEC");
	if (e != NULL && *e != '\0')
		extra = cli_double("ACCELKIT_EXTRA_GPU_SEC", e, 0, 1e6);
	const double one = work / m->gpu_rate, saved = one * (1.0 - 1.0 / have);
	if (saved <= extra) {
		vlog("%s: one GPU of %d: %.3f s of work, %d would save %.3f s, not more than "
		    "another GPU's start (%.3f s)", what, have, one, have, saved, extra);
		return 0;
	}
	vlog("%s: all %d GPUs: %.3f s of work on one, %.3f s saved, more than another "
	    "GPU's start (%.3f s)", what, have, one, saved, extra);
	return 1;
}

/* -d auto, the GPU chosen, in a program that divides its work (cuda_start's
 * allow_multi) and not under mpirun (there each rank has a GPU of its own): every GPU of
 * the host, where they pay (others_pay: their contexts made by their workers while the
 * first GPU works, and the program's set-up on them: models, buffers). */
static void
maybe_every_gpu(const struct cost_model *m, double work, struct cuda_dev *d)
{
	if (start.allow_multi != 1 || !d->gpu || d->ngpus != 1 || ranks_size() > 1)
		return;
	const int have = MIN(gpu_count(), CUDADEV_MAX);
	if (have < 2 || !others_pay(m, work, have, "auto"))
		return;
	for (int i = 1; i < have; i++)
		d->ids[i] = (d->ids[0] + i) % have;
	d->ngpus = have;
	/* the one GPU's name is "gpu:N MODEL" */
	const char *model = strchr(d->name, ' ');
	char first[sizeof d->name];
	snprintf(first, sizeof first, "%s", model != NULL ? model + 1 : "");
	name_many(d, first);
	vlog("device: %s", d->name);
}

/* -d gpu:all, not under mpirun (there the ranks deal out the GPUs): the first GPU alone
 * where the others do not pay (others_pay). Their contexts, made during the read, stay
 * unused; what is saved is the program's set-up and copies on them, and dividing and
 * merging the work. A list such as gpu:0,1 is obeyed as given. */
static void
maybe_fewer_gpus(const struct cost_model *m, double work, struct cuda_dev *d)
{
	if (!spec_all() || start.allow_multi != 1 || !d->gpu ||
	    d->ngpus < 2 || ranks_size() > 1 || others_pay(m, work, d->ngpus, "gpu:all"))
		return;
	d->ngpus = 1;
	/* "N GPUs gpu:I,J MODEL" to "gpu:I MODEL" */
	const char *list = strstr(d->name, "gpu:"), *model = list != NULL ? strchr(list, ' ') : NULL;
	char one[sizeof d->name];
	snprintf(one, sizeof one, "gpu:%d %s", d->ids[0], model != NULL ? model + 1 : "");
	memcpy(d->name, one, sizeof one);
	vlog("device: %s", d->name);
}

int
cuda_decide_weighs(void)
{
	return spec_auto() || spec_all();
}

void
cuda_decide(const struct cost_model *m, double work, int threads, struct cuda_dev *d)
{
	int is_auto = spec_auto();
	if (start.deferred) {
		/* the GPU's estimate carries CUDA's whole start; the CPU starts nothing */
		if (cost_pick_gpu(m, work, threads, start_left())) {
			cuda_start_wait();
			maybe_every_gpu(m, work, d);
			return;
		}
		start.deferred = 0;
		use_cpu(d);
		vlog("device: %s", d->name);
		return;
	}
	if (!is_auto || !start.running || start.done) {
		/* forced, or the start-up already knows whether there is a GPU */
		cuda_start_wait();
		if (!is_auto)
			maybe_fewer_gpus(m, work, d);
		if (!is_auto || !d->gpu)
			return;
	}
	if (cost_pick_gpu(m, work, threads, start_left())) {
		cuda_start_wait();
		maybe_every_gpu(m, work, d);
		return;
	}
	settle_cpu(d);
}

int
cuda_decide_cpu(const struct cost_model *m, double work, int threads, struct cuda_dev *d)
{
	int is_auto = spec_auto();
	if (!is_auto || start.deferred || !start.running || start.done)
		return 0;
	if (cost_pick_gpu(m, work, threads, start_left())) {
		end_grace(1);
		return 0;
	}
	settle_cpu(d);
	return 1;
}

/* auto chose the CPU: CUDA's start is called off, or left to itself. */
static void
settle_cpu(struct cuda_dev *d)
{
	if (start.running && start.grace) {
		/* within the grace, CUDA's start is called off and the thread joined */
		end_grace(0);
		if (start.called_off) {
			vlog("auto: CUDA's start called off within its grace (%.0f ms in)",
			    (now_sec() - start.t0) * 1e3);
			pthread_join(start.thread, NULL);
			start.running = 0;
			err_before_exit(NULL);
		}
	}
	if (start.running && !start.done) {
		/* Leave the thread to itself: an error exit no longer waits for it (quick_exit
		 * runs no CUDA teardown), and cuda_finish ends the run with _exit. Said under
		 * -v: the driver's call under way can hold the exit up (100-200 ms). */
		vlog("auto: CUDA's start left to itself, %.0f ms after it was begun (%s)",
		    (now_sec() - start.t0) * 1e3, start.grace ? "past its grace" : "no grace");
		start.abandoned = 1;
		err_abandon_thread(start.thread);
		err_before_exit(NULL);
	} else if (start.running) {
		pthread_join(start.thread, NULL);	/* done already: costs nothing */
		start.running = 0;
		err_before_exit(NULL);
	}
	use_cpu(d);
	vlog("device: %s", d->name);
}

void
cuda_finish(const struct cuda_dev *d)
{
	/* start.dev is read only once its thread is joined (not abandoned) */
	if (d->gpu || start.abandoned || start.dev.gpu) {
		fflush(NULL);
		ranks_finish();		/* _exit skips the atexit that would */
		/* the driver's teardown left to a child (detach.h) with
		 * ACCELKIT_DETACH_TEARDOWN=1 (not yet the default: not yet timed on a GPU, nor
		 * run under the suites and compute-sanitizer); not under mpirun, whose
		 * launcher counts its processes, nor where the start is still inside the
		 * driver */
		if (!start.abandoned && ranks_size() == 1 && cli_env_switch("ACCELKIT_DETACH_TEARDOWN", 0))
			detach_teardown("/dev/nvidia");
		_exit(0);
	}
}

int
cuda_workers(const struct cuda_dev *d)
{
	if (d->gpu)
		return MAX(d->ngpus, 1);
	const char *e = getenv("ACCELKIT_CPU_WORKERS");
	if (e == NULL || *e == '\0')
		return 1;
	char *end;
	long n = strtol(e, &end, 10);
	if (*end != '\0' || n < 1 || n > CUDADEV_MAX)
		die("ACCELKIT_CPU_WORKERS=%s: expected 1 to %d", e, CUDADEV_MAX);
	return (int)n;
}

int
cuda_spec_multi(const char *spec)
{
	return spec != NULL && (strcmp(spec, "gpu:all") == 0 ||
	    (strncmp(spec, "gpu:", 4) == 0 && strchr(spec, ',') != NULL));
}

void
cuda_worker_name(const struct cuda_dev *d, int w, char *buf, size_t n)
{
	int id = d->gpu ? d->ids[w] : 0, nth = 1;
	for (int i = 0; i < w; i++)
		if (!d->gpu || d->ids[i] == id)
			nth++;
	const char *kind = d->gpu ? "gpu:" : "cpu";
	char num[16] = "";
	if (d->gpu)
		snprintf(num, sizeof num, "%d", id);
	if (nth == 1)
		snprintf(buf, n, "%s%s", kind, num);
	else
		snprintf(buf, n, "%s%s#%d", kind, num, nth);
}

void
cuda_worker_use(const struct cuda_dev *d, int w)
{
#ifdef ACCELKIT_CUDA
	if (d->gpu)
		CUDA_CHECK(cudaSetDevice(d->ids[w]));
#else
	(void)d;
	(void)w;
#endif
}

void
cuda_list_devices(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	printf("cpu\t%d threads (%ld cores online)\n", omp_get_max_threads(), ncpu);
#ifdef ACCELKIT_CUDA
	int n = gpu_count();
	for (int i = 0; i < n; i++) {
		struct cudaDeviceProp prop;
		CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
		printf("gpu:%d\t%s (%d SMs, %.1f GiB, compute %d.%d)\n", i, prop.name,
		    prop.multiProcessorCount, (double)prop.totalGlobalMem / (1 << 30), prop.major,
		    prop.minor);
	}
#endif
	stdout_finish();
}
