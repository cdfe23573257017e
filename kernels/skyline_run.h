/* skyline_run.h: skyline's jobs and the interface between its files: the classic and
 * spatial jobs, the CPU path (skyline_cpu.c), the GPU path (skyline_gpu.cu,
 * skyline_classic.cu, skyline_spatial.cu, skyline_upload.c), the hull
 * (skyline_hull.c), the work for -d auto (skyline_work.c), the result's printing
 * (skyline_out.c), one run on the chosen device (skyline_run.c) and several workers
 * (skyline_divide.c). The formulas both paths compute are in skyline.h; the tuning
 * table in skyline_tune.h. */
#ifndef SKYLINE_RUN_H
#define SKYLINE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "skyline.h"

#ifdef ACCELKIT_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct sky_tune;		/* skyline_tune.h: the row chosen for the device */

/* Classic skyline job. Rows are row-major with `stride` values each; col[] names the
 * chosen columns (0-based), maxpref[j] says column col[j] prefers larger values. */
struct sky_classic {
	size_t n, d;
	const void *data;
	int f64;			/* data is double, else float */
	size_t stride;
	const size_t *col;
	const unsigned char *maxpref;
	int distinct;
	const struct sky_tune *tune;
};

/* Spatial skyline job: n points as float pairs, the hull of Q as h float pairs in
 * counter-clockwise order (h = 1: one point, h = 2: a segment). */
struct sky_spatial {
	size_t n;
	const float *xy;
	const float *hull;
	size_t h;
	double tol;			/* SKY_TOL, or 0 when double arithmetic is exact */
	int distinct;
	const struct sky_tune *tune;
};

/* Row i's value in chosen column j. */
static inline double
sky_value(const struct sky_classic *job, size_t i, size_t j)
{
	size_t o = i * job->stride + job->col[j];
	return job->f64 ? ((const double *)job->data)[o] : ((const float *)job->data)[o];
}

/* skyline_work.c: the work of a classic skyline in the unit of its cost model
 * (skyline_tune.h), for -d auto: n times the skyline's size, estimated from the
 * skylines of two samples, plus the ranking. */
double sky_classic_work(const struct sky_classic *job);

/* Both paths return the kept rows as 0-based indexes in ascending order (keep has
 * room for n) and their count. */
size_t sky_classic_cpu(const struct sky_classic *job, uint32_t *keep);
size_t sky_spatial_cpu(const struct sky_spatial *job, uint32_t *keep);
/* The chosen columns of rows[0..n) (NULL: rows 0..n) packed into out, n x d of the
 * input's type; the points of rows[0..n) into out (n pairs). */
void sky_pack_rows(const struct sky_classic *job, const uint32_t *rows, size_t n, void *out);
void sky_pack_points(const struct sky_spatial *job, const uint32_t *rows, size_t n,
    float *out);
#ifdef ACCELKIT_CUDA
struct cuda_dev;
struct staging;
/* What a GPU run needs of its own, one a worker (a GPU, or a share of one): no state of
 * a run is global, so that several run at once, each in its worker's thread with its
 * device current (cuda_worker_use). */
struct sky_gpu {
	int id;				/* the CUDA device */
	cudaStream_t stream;		/* every launch and copy of its runs */
	struct staging *ring;		/* pinned buffers for the uploads (skyline_upload.c) */
	size_t budget;			/* device bytes a run may use; 0: what is free at
					   each run, under --max-device-mem */
	size_t h;			/* the hull this device's constant memory holds */
	float hull[2 * SKY_GPU_MAXH];
};
/* skyline_gpu.cu. sky_gpu_open: a state on the current device (its stream and ring).
 * sky_gpu_reserve: its runs' device bytes fixed now at its share of the free memory
 * (sharers workers on one GPU) under max_mem, or (sharers 0) taken at each run.
 * sky_gpu_init: cuda_start's init, the one-GPU run's state made in the start-up
 * thread (none for several GPUs); sky_gpu_one: that state, with its device made the
 * calling thread's. */
struct sky_gpu *sky_gpu_open(void);
void sky_gpu_reserve(struct sky_gpu *gp, size_t max_mem, int sharers);
void sky_gpu_init(const struct cuda_dev *dev);
struct sky_gpu *sky_gpu_one(const struct cuda_dev *dev);
/* skyline_upload.c: sky_upload_open makes gp's pinned ring for copies on its stream
 * (once; sky_gpu_open calls it). sky_upload queues the copy of bytes at host to dev on
 * that stream, through the ring when large; host may be reused once sky_upload
 * returns, dev read once the stream has passed the copy. */
void sky_upload_open(struct sky_gpu *gp);
void sky_upload(struct sky_gpu *gp, void *dev, const void *host, size_t bytes);
/* The GPU paths on gp's device and stream, within max_mem bytes of it (or gp's budget);
 * larger inputs are taken in parts of the rows that fit (sky_*_fit: at least 1024, else
 * an error). sky_gpu_hull puts the hull in the device's constant memory, unless gp
 * put the same there already (sky_spatial_gpu calls it). */
size_t sky_classic_fit(const struct sky_classic *job, struct sky_gpu *gp, size_t max_mem);
size_t sky_spatial_fit(struct sky_gpu *gp, size_t max_mem);
size_t sky_classic_gpu(const struct sky_classic *job, struct sky_gpu *gp, size_t max_mem,
    uint32_t *keep);
size_t sky_spatial_gpu(const struct sky_spatial *job, struct sky_gpu *gp, size_t max_mem,
    uint32_t *keep);
void sky_gpu_hull(struct sky_gpu *gp, const float *hull, size_t h);
/* One GPU's share of a spatial filter that several GPUs divide (skyline_divide.c):
 * share w of nw of deciding each of job's points against all of them, which the GPU
 * holds whole (job->n <= sky_spatial_fit). flag[i] = 1 for each point of the share that
 * is kept, 0 for every other point: the shares' flags ORed are the skyline. */
void sky_spatial_gpu_share(const struct sky_spatial *job, struct sky_gpu *gp, int w, int nw,
    uint8_t *flag);
#endif

/* skyline_hull.c: the convex hull of q (n float pairs) into hull (room for n pairs),
 * counter-clockwise with no three vertices collinear; returns the vertex count. */
size_t sky_hull(const float *q, size_t n, float *hull);
/* SKY_TOL, or 0 when every coordinate of xy and hull is an integer multiple of one
 * power of two with at most 24 significant bits: then squared distances and
 * orientations are exact in double. */
double sky_tolerance(const float *xy, size_t n, const float *hull, size_t h);

/* skyline_out.c: the result, as SKY_ROWS (the kept rows of t as they came, or as
 * numbers when t is NPY; float32 NPY with fmt FMT_NPY), SKY_INDEX (their 1-based
 * numbers) or SKY_COUNT (how many); keep[0..m) as the paths return them. */
enum sky_print { SKY_ROWS, SKY_INDEX, SKY_COUNT };
struct output;
struct table;
void sky_print(struct output *o, int fmt, enum sky_print what, const struct table *t,
    const uint32_t *keep, size_t m);
/* --layers: each row of t whose layer[i] is not 0, in input order, as "LAYER<TAB>" and
 * the row (or its number, SKY_INDEX); SKY_COUNT: "LAYER<TAB>ROWS" for layers 1 to
 * layers. */
void sky_print_layers(struct output *o, enum sky_print what, const struct table *t,
    const uint32_t *layer, size_t n, uint32_t layers);

/* skyline_run.c: a skyline of a table's rows, as cmd/skyline.c asks for it. */
struct sky_job {
	const size_t *pos, *mcol;	/* the compared columns among the parsed, and in m */
	size_t d;
	const float *qxy;		/* spatial: the query points (NULL: classic) */
	size_t qn;
	const unsigned char *pref_max;	/* --prefer: 1 for max, a column (or one for all) */
	size_t pref_n;
	int distinct;
	size_t max_mem;
};
struct cuda_dev;
/* The skyline of t's rows into keep (ascending row indexes, room for t's rows); decide:
 * -d auto weighs this work (the first skyline of a run only: the device is chosen once). */
size_t sky_run(const struct table *t, const struct sky_job *j, int decide,
    struct cuda_dev *dev, uint32_t *keep);
/* Non-dominated sorting (--layers): each row's layer of the classic skyline of j's
 * columns into layer[0..t's rows): 1 for the skyline, 2 for the skyline of the rows
 * left, and so on; 0 for a row past max_layers (0: no limit). Returns the number of
 * layers found. Each layer is a skyline on the chosen device (the first decides it). */
uint32_t sky_layers(const struct table *t, const struct sky_job *j, uint32_t max_layers,
    int decide, struct cuda_dev *dev, uint32_t *layer);
/* Under mpirun, after sky_run on each rank's share: the shares' skylines gathered on
 * rank 0 in input order and filtered once more. Returns the skyline's size on rank 0 (0
 * elsewhere); keep is reallocated to hold its rows of the gathered t, and *index (freed
 * by the caller) their rows in the input. */
size_t sky_merge_ranks(struct table *t, const struct sky_job *j, struct cuda_dev *dev,
    uint32_t **keep, size_t m, uint64_t **index);

/* skyline_divide.c: one skyline over several workers (common/devwork.h): a GPU each
 * (gpu:all, gpu:0,1, gpu:0,0), or ACCELKIT_CPU_WORKERS on the CPU. The rows are cut
 * into units of contiguous rows, each unit's skyline found on whichever worker is
 * free, and their union filtered once more (on the GPUs or the CPU, as the cost
 * model picks for its size; ACCELKIT_SKY_MERGE=gpu or cpu decides for the tests). Exactly one of cl and sp is given; its tune is the
 * workers' row, cpu_tune the CPU's. keep as sky_run's. */
struct sky_divide {
	const struct sky_classic *cl;
	const struct sky_spatial *sp;
	const struct sky_tune *cpu_tune;
	const struct cuda_dev *dev;
	size_t max_mem;
};
size_t sky_divided(const struct sky_divide *dv, uint32_t *keep);

#ifdef __cplusplus
}
#endif
#endif
