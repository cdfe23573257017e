/* clkmeans_run.c: one clkmeans run, decided and dispatched (km_run): -d cpu on the
 * native host path (clkmeans_host.c), other specs (cpu:N, gpu, P:D, lists) on the
 * OpenCL devices they name (clkmeans_dev.c), and auto by the work: on the host,
 * without loading OpenCL, when the host's estimate (KM_HOST_COST, clkmeans_tune.h) is
 * within a GPU's start; else the host against the first GPU (clx_decide with the
 * host's cost model and the GPU's row), or the host where there is no OpenCL device.
 * km_start makes that choice beside the read where the input's size already says the
 * work is above the host's share, and opens the GPU it chooses there. */
#include <string.h>

#include "cli.h"
#include "clkmeans_run.h"
#include "clkmeans_tune.h"
#include "opencl.h"
#include "progress.h"
#include "ranks.h"
#include "timer.h"
#include "tune.h"

/* Iterations auto expects of a run that stops at the tolerance: runs of Lloyd with the
 * default tolerance on the suites' blobs end within 5 to 20; a guess, not a bound. */
enum { KM_ITER_GUESS = 20 };

/* A run makes one pass over the rows a Lloyd iteration, one for its final labels and
 * distances, and with k-means++ about one more for the seeding (each of k picks
 * measures every row). */
double
km_work(uint64_t n, size_t d, const struct km_config *cfg)
{
	double passes = 1;
	if (!cfg->assign_only) {
		int iters = cfg->tol > 0 ? MIN(cfg->max_iter, (int)KM_ITER_GUESS) : cfg->max_iter;
		int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
		passes = (double)runs * (iters + 1 + (cfg->init == KM_INIT_PLUSPLUS));
	}
	return passes * (double)n * (double)cfg->k * (double)d;
}

/* clx_decide's model: a GPU's row of the tuning table against the native host path
 * (KM_HOST_COST), which is what auto runs on the CPU: PoCL's device is no faster at
 * this work and costs its platform's start (clkmeans_tune.h). */
static const struct cost_model *
row_cost(const char *desc, void *ctx)
{
	static const struct cost_model host = KM_HOST_COST;
	(void)ctx;
	if (tune_match("cpu", desc))
		return &host;
	return &TUNE_PICK(clkmeans_tune_table, desc)->cost;
}

/* The host's threads for auto's estimate: under mpirun the fewest of any rank, so
 * that every rank decides alike. */
static int
host_threads(void)
{
	int64_t t = cli_threads();
	if (ranks_size() > 1)
		ranks_min_i64(&t, 1);
	return (int)MAX(t, 1);
}

/* Whether the host ends work before any GPU could have started: auto then runs it
 * natively, loading no OpenCL; -v says why when say is 1. */
static int
host_within_start(double work, int say)
{
	const struct cost_model host = KM_HOST_COST;
	const struct cost_model *gpu = &TUNE_PICK(clkmeans_tune_table, "gpu")->cost;
	const int threads = host_threads();
	const double t_host = host.cpu_fixed + work / (host.cpu_rate * threads);
	const double t_start = CLX_GPU_START_SEC + gpu->gpu_fixed;
	if (t_host > t_start)
		return 0;
	if (say)
			vlog("auto: the host's CPU, natively: %.3g %s, estimated %.3g s on %d thread%s, "
		    "within a GPU's start (%.2f s): no OpenCL loaded", work, KM_UNIT, t_host,
		    threads, threads == 1 ? "" : "s", t_start);
	return 1;
}

/* The devices km_start opened beside the read, until km_run takes them. */
static struct km_dev_start *started;

void
km_start(const struct km_config *cfg, size_t d, double elems)
{
	const char *spec = cfg->device != NULL ? cfg->device : "auto";
	/* the host opens nothing; under mpirun each rank's spec comes after the read */
	if (strcmp(spec, "cpu") == 0 || ranks_size() > 1)
		return;
	if (strcmp(spec, "auto") != 0) {
		started = km_dev_start(spec, cfg, d, 0, NULL);
		return;
	}
	/* auto: where the input's size says the host will not do (an NPY header's rows
	 * and columns, exact; a text file's bytes, about), the thread weighs the host
	 * against a GPU as km_run would and opens the GPU it chooses beside the read.
	 * Small work, an unknown size or k (centroids from a text run's file) wait for
	 * the read, so that small work loads no OpenCL. */
	if (elems <= 0 || cfg->k <= 0)
		return;
	const double work = km_work((uint64_t)elems, 1, cfg);
	if (work <= 0 || host_within_start(work, 0))
		return;
	vlog("auto: about %.3g %s from the input's size: OpenCL opened beside the read",
	    work, KM_UNIT);
	started = km_dev_start(spec, cfg, d, work, row_cost);
}

void
km_start_cancel(void)
{
	if (started != NULL)
		km_dev_drop(started);
	started = NULL;
}

void
km_run(struct clmat *X, const struct km_config *cfg, struct km_result *res)
{
	uint64_t ntotal = cfg->ntotal ? cfg->ntotal : X->m.rows;
	const char *spec = cfg->device != NULL ? cfg->device : "auto";
	/* auto weighs the whole run's rows: every rank decides alike */
	const double work = km_work(ntotal, X->m.cols, cfg);
	struct km_dev_start *ds = started;
	started = NULL;
	/* An NPY file's rows, read while the device opened beside the read starts, into
	 * ordinary memory, from which the device's copy is made once (1M x 64 on the
	 * H200, issue 35: read after the start, into pinned memory, they cost a 116 ms
	 * read and 103 ms of pinning after NVIDIA's 232 ms start). Not under
	 * --max-device-mem, which streams the rows every pass, where pinned memory pays. */
	if (ds != NULL && X->s != NULL && cfg->max_device_mem == 0) {
		double t0 = now_sec();
		clmat_read(X, NULL, "the rows");
		phase_add(PH_READ, now_sec() - t0);
		vlog("the rows: %zu bytes read beside the device's start, in ordinary memory",
		    X->m.rows * X->m.cols * dtype_size(X->m.dtype));
	}
	if (strcmp(spec, "auto") == 0 && ds != NULL) {
		/* decided beside the read, on the input's size: the host or a GPU */
		const char *chose;
		if (km_dev_started(ds, &chose) == 0) {
			vlog("auto: the host's CPU, natively: %s", strcmp(chose, "auto") == 0 ?
			    "no OpenCL device" : "chosen beside the read");
			km_dev_drop(ds);
			ds = NULL;
			spec = "cpu";
		}
	} else if (strcmp(spec, "auto") == 0 && host_within_start(work, 1)) {
		spec = "cpu";	/* no OpenCL loaded */
	}
	/* --progress: Lloyd's iterations over every run, their number known with --tol 0
	 * (each path's lloyd adds one an iteration) */
	const int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
	if (!cfg->assign_only)
		progress_begin("iterations", cfg->tol > 0 ? 0 :
		    (uint64_t)runs * (uint64_t)cfg->max_iter);
	const char *dev = spec;
	if (strcmp(spec, "cpu") != 0 && ds == NULL) {
		dev = clx_decide(spec, cfg->platform, work, row_cost, NULL);
		/* auto without any OpenCL device: the host, as the CUDA programs' auto
		 * without a GPU */
		if (strcmp(dev, "auto") == 0) {
			vlog("auto: the host's CPU, natively: no OpenCL device");
			dev = "cpu";
		}
	}
	if (strcmp(dev, "cpu") == 0)
		km_host_run(X, cfg, res);
	else
		km_dev_run(X, cfg, dev, ds, res);
	progress_end();
}
