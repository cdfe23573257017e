/* clkmeans.h: what cmd/clkmeans.c asks of the k-means (kernels/clkmeans_run.c, which
 * decides where it runs: the files clkmeans_dev.h names, or clkmeans_host.c) and of its
 * writer (kernels/clkmeans_out.c). */
#ifndef CLKMEANS_H
#define CLKMEANS_H

#include <stddef.h>
#include <stdint.h>

#include "clstaging.h"
#include "dense.h"

enum km_init { KM_INIT_PLUSPLUS, KM_INIT_RANDOM, KM_INIT_GIVEN };

struct km_config {
	const char *device, *platform;	/* as clx_open takes them */
	size_t max_device_mem;		/* bytes; 0: what the device has */
	int k;
	enum km_init init;
	const double *centroids;	/* k x d: KM_INIT_GIVEN, or the centroids to assign to */
	int assign_only;		/* label the rows with `centroids', nothing more */
	uint64_t seed;
	int n_init, max_iter;
	double tol;			/* relative to the mean column variance; 0: all iterations */
	uint64_t row0, ntotal;		/* under mpirun: X is rows [row0, row0 + rows) of
					   ntotal (0: X is every row) */
};

struct km_result {
	int *labels;		/* n */
	double *dists;		/* n: squared distance of each row to its centroid */
	double *centroids;	/* k x d */
	double inertia;		/* sum of dists */
	int iterations;		/* of the run kept */
};

/* Clusters the rows of X (float32, n x d, 1 <= k <= n) as cfg says, on the OpenCL device
 * it names (for auto, by the work: clx_decide with clkmeans_tune.h's cost column), or
 * the devices (gpu:all, ...) among which the rows are divided; under mpirun each rank
 * calls it with its share of the rows, and every rank gets the same centroids and
 * inertia, with labels and dists of its own rows. Dies (exit 1) on device errors.
 * Data that clmat_open left unread is read here, into pinned memory, once the device
 * is open. */
void km_run(struct clmat *X, const struct km_config *cfg, struct km_result *res);
/* Before the rows are read (one process alone): opens the OpenCL devices cfg->device
 * names (cpu:N, gpu, gpu:N, P:D, lists) in a thread (clx_start) while the rows are
 * read; with d (the columns, when an NPY header gave them; else 0) and cfg->k known,
 * the thread builds the program too, else km_run builds it. For auto, elems (the
 * input's rows x columns: an NPY header's, or a text file's estimate from its bytes;
 * 0 when unknown) weighs the work: above what the host ends within a GPU's start,
 * the thread decides between the host and a GPU and opens the GPU; below, nothing
 * (no OpenCL loaded). Nothing for cpu, nor under mpirun. */
void km_start(const struct km_config *cfg, size_t d, double elems);
/* No run after all (no rows): what km_start opened is waited for and closed. */
void km_start_cancel(void);
void km_result_free(struct km_result *res);

/* The labels of n rows (with dist, each row's squared distance too) to path (NULL or
 * "-": standard output) in format fmt (FMT_TEXT or FMT_NPY); the k x d centroids as
 * float32 likewise (kernels/clkmeans_out.c). */
void km_write_labels(const char *path, int fmt, const struct km_result *res, size_t n,
    int dist);
void km_write_centroids(const char *path, int fmt, const double *C, size_t k, size_t d);
/* --with-rows: each row of t as it came (NPY rows as tab-separated numbers), then delim
 * and its label (and distance), after t's header lines, the last of which names the
 * added columns ("cluster", "distance"). */
struct table;
void km_write_rows(const char *path, const struct km_result *res, const struct table *t,
    int delim, int dist);

#endif
