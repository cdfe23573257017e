/* cudadev.h: device choice for the CUDA programs (docsim, skyline, gmmscore,
 * editdist4r) from -d / $ACCELKIT_DEVICE:
 *   auto     the first usable CUDA device, else the CPU
 *   cpu      the native C implementation (OpenMP threads)
 *   gpu      CUDA device 0; gpu:N device N; gpu:all or gpu:0,1 several (when allowed)
 * In a build without nvcc, gpu says plainly that GPU support was not compiled in. */
#ifndef ACCELKIT_CUDADEV_H
#define ACCELKIT_CUDADEV_H

#include <stddef.h>
#include <stdint.h>

#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUDADEV_MAX 16

struct cuda_dev {
	int gpu;			/* 0: the CPU path; 1: CUDA */
	int ngpus;			/* how many of ids[] to use (1 unless multi) */
	int ids[CUDADEV_MAX];
	char name[320];			/* for -v: "gpu:0 NVIDIA H200" or "cpu (16 threads)" */
	char desc[384];			/* for the tuning tables (tune.h): "gpu nvidia NVIDIA H200 sm_90" or "cpu" */
	size_t mem_total, mem_free;	/* of ids[0], bytes (GPU only) */
	int sm_count;			/* of ids[0] */
};

/* Parses spec and opens the device (cudaSetDevice on ids[0]). allow_multi: whether
 * the program can divide its work over several GPUs. Bad specs are usage errors
 * (exit 2); a GPU that is asked for but unusable is exit 1. -v names the device. */
void cuda_select(const char *spec, int allow_multi, struct cuda_dev *d);

/* cuda_select in a thread of its own, so that CUDA's start-up (context creation takes
 * a few hundred milliseconds) overlaps the program's reading and parsing. init, when
 * not NULL, runs in that thread after a GPU is chosen (the program's own set-up:
 * streams, handles, constant tables). Until cuda_start_wait returns, an error exit
 * (die*, usage_error) first waits for the start-up to end. The program must call
 * cuda_start_wait before it uses d, and before any other exit. With spec "cpu", or
 * without CUDA, everything happens at once in the calling thread. allow_multi as for
 * cuda_select; CUDA_MULTI_WHEN_ASKED: several GPUs where the spec names them, but -d
 * auto never takes more than one (a program that cannot divide work already begun). */
#define CUDA_MULTI_WHEN_ASKED 2
void cuda_start(const char *spec, int allow_multi, void (*init)(const struct cuda_dev *),
    struct cuda_dev *d);
/* Before cuda_start: the inputs' bytes when known (in_regular_bytes), else -1. Under
 * -d auto, inputs of at most CUDA_DEFER_BYTES are read before CUDA starts, and CUDA
 * starts only if the work then chooses the GPU (its whole start charged to it): the
 * read is too short for the start to hide behind, and a start that is abandoned slows
 * the CPU run's exit (its thread is inside the driver). */
#define CUDA_DEFER_BYTES ((int64_t)32 << 20)
/* Inputs of unknown size (a pipe): CUDA's start waits this long for cuda_decide, and a
 * decision for the CPU meanwhile calls it off (printf ... | prog answers at once). */
#define CUDA_GRACE_SEC 0.030
void cuda_input_size(int64_t bytes);
/* Before cuda_start: the program calls cuda_decide within a few milliseconds of
 * reading, on a sample of its input, so CUDA's start waits for it whatever the input's
 * size (editdist4r): CUDA_GRACE_SEC, or CUDA_EARLY_GRACE_SEC for inputs of known size,
 * whose sample can take longer to come than a pipe's first bytes and ends the grace
 * the moment it is weighed (editdist4r's first 8 MiB of 1M pairs came 25-35 ms in on
 * the H200 host, and a start left to itself past the 30 ms grace held the exit up
 * ~200 ms in one run of two). */
#define CUDA_EARLY_GRACE_SEC 0.100
void cuda_decides_early(void);
/* Whether cuda_start left CUDA's start for later (see cuda_input_size). */
int cuda_deferred(void);

/* Waits for cuda_start's thread; the wait is the phase "device start" under -v. */
void cuda_start_wait(void);

/* CUDA's own start (driver and primary context), measured on the lent machines as a bare
 * process doing cudaFree(0): 300 ms. What is left of it is charged to the GPU. */
#define CUDA_START_SEC 0.30
/* What -d auto charges each GPU past the first when it weighs using every GPU of the
 * host (cuda_decide): a context made beside the first GPU's work (100-150 ms), the
 * program's set-up on it, and its share of the host's copies. Reasoned from bench/scale
 * on 2 x H100 (gmmscore 1M frames: 1.16 s on one GPU, 0.59 s on two, the whole process
 * 0.50 s faster): a guess to be measured, not yet swept. */
#define CUDA_EXTRA_GPU_SEC 0.25

/* Settles the device once the work is known. With -d auto, cost_pick (tune.h) weighs
 * the program's cost model with what is left of CUDA's start charged to the GPU, and -v
 * says both estimates; where the GPU wins and the program divides its work, every GPU
 * of the host where they save more than they cost (CUDA_EXTRA_GPU_SEC a GPU past the
 * first), which d->ngpus then says. Choosing the CPU abandons the start-up thread: it
 * is never waited for, at work or at exit (end the run with cuda_finish). gpu:all keeps
 * only the first GPU where the others would not pay by the same rule (-v says so). Any
 * other spec (cpu, gpu, gpu:N, gpu:N,M) is obeyed as given. Returns with d filled as
 * cuda_start_wait does; d->gpu says which path to run. threads is the CPU path's thread
 * count. */
void cuda_decide(const struct cost_model *m, double work, int threads, struct cuda_dev *d);

/* Whether cuda_decide weighs the work (-d auto, gpu:all): where it does not, a caller
 * may pass 0 rather than estimate it. */
int cuda_decide_weighs(void);

/* An early look (-d auto, CUDA still starting), on an estimate of the whole work: where
 * the CPU wins, settles on it as cuda_decide does and returns 1; else ends CUDA's grace
 * (it starts now) and returns 0 without waiting, and cuda_decide settles later. */
int cuda_decide_cpu(const struct cost_model *m, double work, int threads, struct cuda_dev *d);

/* The end of a successful run, after the output is closed and checked: a GPU run, or a run
 * whose start-up thread was abandoned, ends the process here (_exit(0)), skipping CUDA's
 * teardown (tens of milliseconds, and unsafe beneath a thread still inside cuInit).
 * Otherwise it returns, and main frees what it holds and returns 0. */
void cuda_finish(const struct cuda_dev *d);

/* The workers a program that divides its work (common/devwork.h) runs: one a GPU of
 * d->ids[0..ngpus) on a GPU (gpu:0,0 lists one GPU twice: two workers share it, which
 * tries the several-GPU paths on a machine with one). On the CPU, 1; for tests only,
 * ACCELKIT_CPU_WORKERS=N runs N workers on the CPU, so that the dividing code runs
 * without a GPU (each worker's CPU path still uses every -j thread). */
int cuda_workers(const struct cuda_dev *d);
/* Whether spec names several GPUs (gpu:all, or a list gpu:N,M): the program may set
 * up its workers before reading. */
int cuda_spec_multi(const char *spec);
/* Worker w's name under -v: "gpu:1" ("gpu:0#2" for a GPU listed twice; "cpu#2"). */
void cuda_worker_name(const struct cuda_dev *d, int w, char *buf, size_t n);
/* In worker w's thread, before it touches its GPU: makes d->ids[w] the thread's device. */
void cuda_worker_use(const struct cuda_dev *d, int w);

/* --list-devices: "cpu ..." then "gpu:N ..." lines on stdout. */
void cuda_list_devices(void);

/* Whether this build has CUDA at all. */
int cuda_compiled(void);

#ifdef __cplusplus
}
#endif
#endif
