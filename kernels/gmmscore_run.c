/* gmmscore_run.c: one run of gmmscore once its models and features are open: -d auto's
 * decision on the frames there are, the GPU's layout of the parameters made while CUDA
 * starts, the tuning row, and the stream opened on the device chosen: one GPU, several
 * (gpu:all) or the CPU (gmmscore_stream.c). cmd/gmmscore.c reads the options, the
 * models and the features, and writes the results. */
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "err.h"
#include "gmmscore.h"
#include "gmmscore_stream.h"
#include "gmmscore_tune.h"
#include "timer.h"
#include "tune.h"

struct gmm_stream *
gmm_run_open(const struct gmm_run *r, struct cuda_dev *dev)
{
	/* auto and gpu:all: the work, from the frames there are (man/gmmscore.1, DEVICES,
	 * says how they are counted), weighed by the cost model; where the GPU may run, its
	 * layout of the parameters is made now, while CUDA starts. */
	const struct gmm_params *prm = r->prm;
	const struct gmmscore_tune *arow = TUNE_PICK(gmmscore_tune_table, GMMSCORE_AUTO_ROW);
	double work = 0, t0;
	if (cuda_decide_weighs()) {
		int exact;
		uint64_t n = gmm_feats_ahead(r->feats, r->chunk ? r->chunk : GMMSCORE_AUTO_FRAMES,
		    &exact);
		work = (double)n * (double)prm->ncomp * prm->dims;
		vlog("%s: %s%llu frames", r->device, exact ? "" : "at least ", (unsigned long long)n);
	}
	struct gmm_layout layout = {0};
	if (cuda_compiled() && strcmp(r->device, "cpu") != 0) {
		int cpl, nsub;
		t0 = now_sec();
		gmm_tile_pick(arow, &cpl, &nsub);
		gmm_layout_make(prm, (size_t)GMM_GPU_THREADS * (size_t)cpl, &layout);
		phase_add("gpu layout", now_sec() - t0);
	}
	cuda_decide(&arow->cost, work, cli_threads(), dev);
	const struct gmmscore_tune *tune = TUNE_PICK(gmmscore_tune_table, dev->desc);
	vlog("tuning: %s (%s)", tune->device[0] != '\0' ? tune->device : "any device",
	    tune->measured);

	struct gmm_stream_cfg cfg = {.prm = prm, .mode = r->mode, .top = r->top,
	    .model_dim = r->model_dim, .chunk = r->chunk,
	    .max_mem = r->max_mem, .dev = dev, .tune = tune, .layout = &layout,
	    .feats = r->feats};
	struct gmm_stream *st = gmm_stream_open(&cfg);
	gmm_layout_free(&layout);
	return st;
}
