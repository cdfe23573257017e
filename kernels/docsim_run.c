/* docsim_run.c: one docsim job on the chosen device: -d auto's decision on the job's
 * work (the cost models of the tuning table's row for any GPU, the GPU not known yet),
 * the device's tuning row, and the job handed to one of four ways to run: the ranks'
 * shares under mpirun (docsim_ranks.c), several workers (docsim_split.c: gpu:all,
 * gpu:0,1), one GPU (docsim.cu) or the CPU (docsim_cpu.c). cmd/docsim.c reads the
 * options and the inputs, makes the job and writes its results. */
#include "cli.h"
#include "cudadev.h"
#include "docsim.h"
#include "docsim_tune.h"
#include "progress.h"
#include "err.h"
#include "ranks.h"
#include "timer.h"
#include "tune.h"

int
ds_run(struct ds_job *job, struct cuda_dev *dev)
{
	/* with -d auto, on the GPU only where its start pays (under mpirun, a rank's part
	 * of the work, the same on every rank) */
	double work = ds_work(job) / ranks_size();
	const struct docsim_tune *any_gpu = TUNE_PICK(docsim_tune_table, "gpu");
	cuda_decide(job->sparse ? &any_gpu->cost_sparse : &any_gpu->cost_dense, work,
	    cli_threads(), dev);
	job->tune = TUNE_PICK(docsim_tune_table, dev->desc);
	vlog("tuning: %s (%s)", *job->tune->device ? job->tune->device : "every device",
	    job->tune->measured);
	int nonempty = job->nq > 0 && job->n > 0 && !(job->mode == DS_TOPK && job->k == 0);
	/* the progress line counts pairs scored: a GPU scores all pairs' lower triangle,
	 * the CPU every row against every document; under mpirun, rank 0's share */
	double pairs = job->sym && dev->gpu ? 0.5 * (double)job->n * (double)(job->n + 1) :
	    (double)job->nq * (double)job->n;
	if (nonempty)
		progress_begin("pairs", (uint64_t)(pairs / ranks_size()));
	if (nonempty && ranks_size() > 1) {
		ds_ranks_run(job, dev);
	} else if (nonempty && cuda_workers(dev) > 1) {
		ds_split_run(job, dev, cuda_workers(dev));	/* gpu:all: blocks of rows a GPU */
	} else if (nonempty) {
		if (dev->gpu) {
#ifdef ACCELKIT_CUDA
			ds_gpu_run(job, dev);
#endif
		} else {
			double t = now_sec();
			ds_cpu_run(job);
			phase_add(PH_COMPUTE, now_sec() - t);
		}
	}
	progress_end();
	return nonempty;
}
