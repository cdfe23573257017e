/* clkmeans_run.h: the interface between clkmeans_run.c, which decides where a run
 * goes, and the two ways it can go: OpenCL devices (clkmeans_dev.c) or the native host
 * path (clkmeans_host.c). cmd/clkmeans.c sees clkmeans.h only. */
#ifndef CLKMEANS_RUN_H
#define CLKMEANS_RUN_H

#include "clkmeans.h"
#include "opencl.h"

/* The work -d auto weighs, in row-centroid-column products over every pass of the
 * run (n: all ranks' rows). */
double km_work(uint64_t n, size_t d, const struct km_config *cfg);

/* The OpenCL devices spec names opened beside the read (clx_start, one process
 * alone): a thread opens them and, when d (the columns, 0: not known yet) and cfg->k
 * are known, sets their kernel parameters and builds the program. km_dev_run takes
 * them; km_dev_drop waits for them and closes them, unused. */
struct km_dev_start;
/* For auto, work (km_work's estimate) and model (clx_decide's) decide in the thread
 * between the host and a GPU, as km_run would after the read; model NULL: spec as
 * given. km_dev_started waits for the thread and says how many devices it opened and
 * which spec it decided on (0 and "cpu": the host; 0 and "auto": no OpenCL device). */
struct km_dev_start *km_dev_start(const char *spec, const struct km_config *cfg, size_t d,
    double work, clx_model_fn *model);
int km_dev_started(struct km_dev_start *ds, const char **spec);
void km_dev_drop(struct km_dev_start *ds);

/* The run on the OpenCL devices spec names (gpu, cpu:N, P:D, lists; clx_open_many),
 * each rank its own under mpirun, or on those ds holds (NULL: none). */
void km_dev_run(struct clmat *X, const struct km_config *cfg, const char *spec,
    struct km_dev_start *ds, struct km_result *res);

/* The same run on the host's CPU in plain C (OpenMP), loading no OpenCL: the same
 * labels, distances, centroids and inertia, byte for byte, as PoCL's CPU device. */
void km_host_run(struct clmat *X, const struct km_config *cfg, struct km_result *res);

#endif
