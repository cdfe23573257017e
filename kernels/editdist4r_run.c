/* editdist4r_run.c: one run of editdist4r, decided and dispatched (editdist4r_run.h):
 * CUDA started while the pairs are read, -d auto's choice on the work of the pairs read
 * so far (the tuning row's cost model), the device's tuning row and engine, and the
 * batches sent to the CPU, one GPU, or several workers (editdist4r_batch.c). Apart from
 * cmd/editdist4r.c, which reads the options and the pairs and writes the results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "editdist4r.h"
#include "editdist4r_run.h"
#include "editdist4r_tune.h"
#include "err.h"
#include "progress.h"
#include "timer.h"
#include "tune.h"

static const char *const algos[] = {"auto", "4r", "bp", "dp"};
static const char *const engines[] = {"auto", "Four-Russians", "bit-parallel", "plain DP"};

/* What settle weighs and what it sets up: r->settle_ctx. */
struct settle_ctx {
	struct cuda_dev dev;
	int t;			/* -t, 0 when not given */
	size_t max_device_mem;
	int64_t total;		/* the inputs' bytes when every one is a regular file, else -1 */
};

int
ed_default_t(const char *desc)
{
	return TUNE_PICK(editdist4r_tune_table, desc)->t;
}

/* The device is known: its tuning row, and the GPU's state. */
static void
use_device(struct ed_run *r, struct settle_ctx *s)
{
	const struct editdist4r_tune *tune = TUNE_PICK(editdist4r_tune_table, s->dev.desc);
	r->gpu = s->dev.gpu;
	r->eo.auto_algo = tune->auto_algo;
	r->eo.t = s->t > 0 ? s->t : tune->t;
	/* several GPUs (gpu:all, gpu:0,1): a GPU state a worker, made by the engine */
	int multi = !(r->gpu && r->eo.algo == ED_DP) &&
	    ed_run_multi(r, &s->dev, tune, s->max_device_mem);
#ifdef ACCELKIT_CUDA
	if (r->gpu && r->eo.algo != ED_DP && !multi)
		r->g = ed_gpu_open(&s->dev, &r->eo, tune, s->max_device_mem);
#else
	(void)multi;
#endif
	vlog("tuning: %s (%s)", *tune->device != '\0' ? tune->device : "default", tune->measured);
	if (r->gpu && r->eo.algo == ED_DP)
		vlog("--algo dp runs on the CPU");
	else if (r->gpu && r->eo.mode != ED_GLOBAL)
		vlog("--mode %s: the GPU's bit-parallel engines, whatever --algo says%s",
		    r->eo.mode == ED_INFIX ? "infix" : "prefix", r->eo.mode == ED_INFIX ?
		    "; START on the GPU where a thread holds A, else on the CPU" : "");
	char what[32] = "";
	if (r->eo.algo == ED_AUTO)
		snprintf(what, sizeof what, " (%s)", engines[r->eo.auto_algo]);
	vlog("engine: %s%s, block size %d%s", algos[r->eo.algo], what, r->eo.t,
	    r->path ? "; alignments on the CPU" : "");
	r->settled = 1;
}

/* The batches' settle: auto weighs the work of the pairs read so far, scaled to the
 * whole input when its size is known (see the man page's DEVICES). The early look
 * (whole -1) settles only on the CPU; a GPU is waited for at the first full batch, so
 * that reading goes on while CUDA starts. */
static void
settle(struct ed_run *r, int whole)
{
	struct settle_ctx *s = r->settle_ctx;
	struct cost_model cm = TUNE_PICK(editdist4r_tune_table, "gpu nvidia")->cost;
	const struct cost_model *cost = &cm;
	double work = r->work;
	/* the band's pairs: the CPU computes fewer cells than the GPU, whose rate is
	 * scaled so that it is charged its own */
	if (r->gwork > r->work && r->work > 0)
		cm.gpu_rate *= r->work / r->gwork;
	if (whole != 1 && s->total > 0 && r->bytes > 0 && (double)s->total > (double)r->bytes)
		work *= (double)s->total / (double)r->bytes;
	/* a pair is one CPU thread's: fewer pairs than threads leave threads idle */
	int threads = (int)MAX((uint64_t)1, MIN((uint64_t)cli_threads(), r->npairs));
	if (whole < 0) {
		if (cuda_decide_cpu(cost, work, threads, &s->dev))
			use_device(r, s);
		return;
	}
	cuda_decide(cost, work, threads, &s->dev);
	use_device(r, s);
}

void
ed_run_open(struct ed_run *r, const struct ed_job *job)
{
	struct settle_ctx *s = xcalloc(1, sizeof *s);
	/* CUDA starts while the input is read; --algo dp never uses it */
	const char *spec = job->device;
	if (r->eo.algo == ED_DP && strcmp(spec, "auto") == 0)
		spec = "cpu";
	/* --mode infix and prefix: the GPU's bit-parallel engines compute them too
	 * (editdist4r_bp.cuh), and auto weighs them as it does the global distance */
	s->t = job->t;
	s->max_device_mem = job->max_device_mem;
	s->total = job->total;
	cuda_input_size(s->total);
	cuda_decides_early();	/* on the first 8 MiB of pairs (ED_SETTLE_BYTES) */
	/* gpu:all divides the batches; auto stays on one GPU: it settles at the first
	 * batch, and batches already read stay on the GPU that started them */
	cuda_start(spec, CUDA_MULTI_WHEN_ASKED, NULL, &s->dev);
	ed_run_begin(r, job->max_device_mem, s->total >= 0, settle, s);
	/* Nothing to weigh or to wait for; several GPUs are set up before the first pair
	 * (each worker opens its GPU), so CUDA's start is waited for at once. */
	if (strcmp(spec, "cpu") == 0 || !cuda_compiled() || cuda_spec_multi(spec))
		settle(r, 0);
	progress_begin("pairs", 0);	/* counted as written (editdist4r_out.c) */
}

void
ed_run_all(struct ed_run *r, struct ed_recs *A, struct ed_recs *B)
{
	double sa = 0, sb = 0;
	for (size_t i = 0; i < A->n; i++)
		sa += (double)A->len[i];
	for (size_t j = 0; j < B->n; j++)
		sb += (double)B->len[j];
	/* the work: every pair's cells, or with -k at most a band of 2K+1 along the shorter */
	r->work = sa * sb;
	if (r->eo.maxdist >= 0 && r->eo.mode == ED_GLOBAL)	/* as ed_pair_work */
		r->work = MIN(r->work, (2.0 * (double)r->eo.maxdist + 1) *
		    MIN((double)B->n * sa, (double)A->n * sb));
	r->gwork = r->work;
	progress_begin("pairs", (uint64_t)A->n * B->n);
	ed_run_matrix(r, A, B);
}

void
ed_run_close(struct ed_run *r)
{
	struct settle_ctx *s = r->settle_ctx;
	progress_end();
#ifdef ACCELKIT_CUDA
	if (r->g != NULL)
		vlog("GPU engines: %s; kernel time %.3f ms", ed_gpu_engines(r->g),
		    ed_gpu_kernel_ms(r->g));
#endif
	phases_report();
	vlog("%llu cells", (unsigned long long)r->cells);
	if (r->utf8)
		vlog("-u: %llu pairs needed more than 256 codes: plain DP by code point on the CPU",
		    (unsigned long long)r->nwide);
	cuda_finish(&s->dev);
	ed_run_free(r);
	free(s);
}
