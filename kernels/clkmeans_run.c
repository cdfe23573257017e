/* clkmeans_run.c: one clkmeans run, decided and dispatched (km_run): -d cpu on the
 * native host path (clkmeans_host.c), other specs (cpu:N, gpu, P:D, lists) on the
 * OpenCL devices they name (clkmeans_dev.c), and auto by the work: at most
 * KM_HOST_MAX_WORK (clkmeans_tune.h) on the host, without loading OpenCL, else the
 * device the work pays for (clx_decide with the tuning table's cost column), or the
 * host where there is no OpenCL device. */
#include <string.h>

#include "clkmeans_run.h"
#include "clkmeans_tune.h"
#include "opencl.h"
#include "progress.h"
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

/* clx_decide's model: the cost column of the tuning table's row for desc. */
static const struct cost_model *
row_cost(const char *desc, void *ctx)
{
	(void)ctx;
	return &TUNE_PICK(clkmeans_tune_table, desc)->cost;
}

void
km_run(struct clmat *X, const struct km_config *cfg, struct km_result *res)
{
	uint64_t ntotal = cfg->ntotal ? cfg->ntotal : X->m.rows;
	const char *spec = cfg->device != NULL ? cfg->device : "auto";
	/* auto weighs the whole run's rows: every rank decides alike */
	const double work = km_work(ntotal, X->m.cols, cfg);
	if (strcmp(spec, "auto") == 0 && work <= KM_HOST_MAX_WORK) {
		vlog("auto: the host's CPU, natively: %.3g %s, at most %.3g (KM_HOST_MAX_WORK: "
		    "less than an OpenCL device's start costs)", work, KM_UNIT, KM_HOST_MAX_WORK);
		spec = "cpu";
	}
	/* --progress: Lloyd's iterations over every run, their number known with --tol 0
	 * (each path's lloyd adds one an iteration) */
	const int runs = cfg->init == KM_INIT_GIVEN ? 1 : cfg->n_init;
	if (!cfg->assign_only)
		progress_begin("iterations", cfg->tol > 0 ? 0 :
		    (uint64_t)runs * (uint64_t)cfg->max_iter);
	const char *dev = spec;
	if (strcmp(spec, "cpu") != 0) {
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
		km_dev_run(X, cfg, dev, res);
	progress_end();
}
