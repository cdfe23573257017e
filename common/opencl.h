/* opencl.h: device choice, context and queue, and program building for the OpenCL
 * programs (clmatmul, clkmeans). Targets the OpenCL 1.2 API so PoCL and NVIDIA both work.
 *
 * Device specs (-d / $ACCELKIT_DEVICE), indexes as --list-devices shows them:
 *   auto    by the work (clx_decide): the first GPU of any platform or the first CPU
 *           device; clx_open alone takes the GPU, else the CPU device
 *   cpu, cpu:N, gpu, gpu:N   the first (or N-th) device of that type over all platforms
 *   P:D     device D of platform P
 *   gpu:all, cpu:all, gpu:N,M,..., cpu:N,M,..., P:D,P:D,...   several devices of one
 *           platform (clx_open_many); a bare number repeats the item before it with
 *           another last index: gpu:0,1 and 0:0,1
 * --platform TEXT keeps only platforms whose name or vendor contains TEXT (any case). */
#ifndef ACCELKIT_OPENCL_H
#define ACCELKIT_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "err.h"
#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libOpenCL is loaded (dlopen) by the first OpenCL call a run makes, not linked: a
 * run that makes none maps no OpenCL library (common/clapi.h lists the entry points).
 * clx_load loads it now; 0 when it cannot be loaded (the first call then finds no
 * platform, and any other call is an error naming libOpenCL). */
int clx_load(void);

enum clx_vendor { CLX_OTHER, CLX_NVIDIA, CLX_POCL, CLX_AMD, CLX_INTEL };

struct clx {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	int platform_index, device_index;
	int is_gpu, is_cpu;
	enum clx_vendor vendor;
	char name[256], platform_name[256], version[128];
	cl_ulong global_mem, max_alloc, local_mem;
	cl_uint compute_units;
	size_t max_wg;
	int has_fp64;
	int slot;	/* its place among the devices clx_open_many opened (0 for one) */
};

/* flags for clx_open: a profiling queue; for clx_start with a model, auto's choice of
 * the CPU is the caller's own host path, not an OpenCL CPU device: nothing is opened
 * (clkmeans, whose host path is PoCL's bytes without its platform) */
enum { CLX_PROFILE = 1, CLX_CPU_IS_HOST = 2 };

/* Opens the device that spec names; dies (exit 1) if there is none, usage error for a
 * malformed spec. -v names the device. */
void clx_open(const char *spec, const char *platform_filter, int flags, struct clx *x);
void clx_close(struct clx *x);
/* The end of a run whose output is written: where a GPU was opened, the process ends
 * here (exit status 0) without the driver's teardown at exit; on a CPU it returns. */
void clx_finish(void);

/* Whether spec names several devices (a list, or gpu:all / cpu:all). */
int clx_is_many(const char *spec);
/* Opens what spec names into xs (at most max, and CLX_MAX_MANY): one device as clx_open
 * does, or several of one platform, which share one context (each clx holds a reference
 * to it, so clx_close works on each) with a queue each. Returns how many. A device
 * named twice is opened twice (two workers share it); devices of different
 * platforms are an error that says so. */
enum { CLX_MAX_MANY = 16 };
int clx_open_many(const char *spec, const char *platform_filter, int flags, struct clx *xs,
    int max);

/* -d auto by the work (issue 12): the spec clx_open is to open, decided from the
 * platform and device lists alone, before any context is made, so that a run that
 * stays on the CPU never pays the GPU's start. Unless spec is auto (or NULL) it is
 * returned as given. With a GPU and a CPU device both there (after --platform),
 * model(desc, ctx) gives the cost model of the program's tuning row for each device's
 * description (clx_describe's form): the CPU's row gives cpu_rate and cpu_fixed, the
 * GPU's row gpu_rate and gpu_fixed; cost_pick_gpu (tune.h) weighs work on the CPU
 * device's compute units against the GPU with CLX_GPU_START_SEC, its context, charged
 * to it, and -v prints both estimates. "gpu" or "cpu" comes back. With one kind only,
 * that one, and -v says why ("auto: cpu (no usable GPU)"). */
typedef const struct cost_model *clx_model_fn(const char *desc, void *ctx);
const char *clx_decide(const char *spec, const char *filter, double work,
    clx_model_fn *model, void *ctx);
/* An OpenCL GPU's start: NVIDIA's OpenCL makes a CUDA context beneath its own, and a
 * bare CUDA process takes 300 ms on the lent H200 (issue 12); to be checked by
 * bench/e2e against clmatmul -d gpu -v's "open device". */
#define CLX_GPU_START_SEC 0.30
/* The platform opened beside the read (as cuda_start does for CUDA): clx_start, before
 * the input is read, starts a thread that decides the device (spec, or for auto
 * clx_decide on work, the caller's estimate of it, with model and ctx; model NULL: spec
 * as given), opens it into xs (clx_open_many, with flags, at most max devices: xs is
 * the caller's and must stay where it is until the end of the run) and then runs
 * prep(xs, n, ctx) there when prep is not NULL: the program's own set-up, such as its
 * build. ICDs are restricted (CPU-only specs) in the caller's thread, before the
 * thread starts. clx_start_wait joins it and returns how many devices xs holds (their
 * queues and context made in the thread, used from any thread after); the seconds it
 * waited go to the phase "open device (waited)". With a model, an auto that finds no
 * OpenCL device at all (no platform, none of a usable type) opens nothing and
 * clx_start_wait returns 0: the caller runs on the host, as its auto would without
 * starting early; so does an auto that chooses the CPU under CLX_CPU_IS_HOST.
 * An error in the thread is the process's (its message, exit 1), as it would be on
 * the caller's thread.
 *
 *	static struct clx xs[CLX_MAX_MANY];
 *	struct clx_start *st = clx_start(spec, filter, 0, est, model, prep, &ctx, xs,
 *	    CLX_MAX_MANY);
 *	read the input ...
 *	int n = clx_start_wait(st);
 */
struct clx_start;
typedef void clx_prep_fn(struct clx *xs, int n, void *ctx);
struct clx_start *clx_start(const char *spec, const char *filter, int flags, double work,
    clx_model_fn *model, clx_prep_fn *prep, void *ctx, struct clx *xs, int max);
int clx_start_wait(struct clx_start *st);
/* After clx_start_wait: the spec the thread decided on and opened ("gpu", "cpu", or
 * "auto" where it found no OpenCL device; the spec as given without a model). */
const char *clx_start_spec(const struct clx_start *st);
/* Whether spec names OpenCL CPU devices only (cpu:N, cpu:all, cpu:N,M; "cpu" alone
 * too: what it means is the program's, clmatmul's native host path). */
int clx_spec_cpu_only(const char *spec);

/* How many GPU devices the kept platforms have (0 with no OpenCL at all): for a rank
 * under mpirun that takes the GPU of its place on the host. */
int clx_count_gpus(const char *platform_filter);
/* --list-devices: one device a line on stdout. */
void clx_list_devices(const char *platform_filter);
/* The device's description for the tuning tables (tune.h): "gpu nvidia NAME",
 * "cpu pocl NAME", "gpu amd NAME", ... */
void clx_describe(const struct clx *x, char *buf, size_t size);
/* An NVIDIA GPU's compute capability (cl_nv_device_attribute_query): 1 and *major,
 * *minor where the device is one and says; 0 otherwise. */
int clx_nv_cc(const struct clx *x, unsigned *major, unsigned *minor);

/* Builds the program `name` from its embedded source (or, when $ACCELKIT_KERNEL_DIR is
 * set, development only, from the files it was made of, `files` as tools/embed lists
 * them, read from that folder in order) with the given -D options. A failed build
 * prints the build log to stderr and exits 1; -v prints the options used.
 * The program cache (clbuild.c): a build's binary is kept under
 * $XDG_CACHE_HOME/accelkit/cl (else ~/.cache/accelkit/cl), keyed by platform, device,
 * driver version, options and source, and a later build of the same loads it
 * (clCreateProgramWithBinary) instead of compiling; a bad or stale entry is rebuilt
 * and written again (temporary name, rename: runs at once are safe);
 * ACCELKIT_CL_CACHE=0 turns it off. Nothing changes for the caller: every program
 * built through clx_build (clmatmul's, clkmeans's) is cached. */
cl_program clx_build(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options);
/* clx_build for a program with Hopper's sm_90a instructions (wgmma), which NVIDIA's
 * OpenCL compiler refuses: it targets sm_90. The source writes each as a PTX comment
 * that begins CLX_SM90A_MARK; the program is built as clx_build does, its PTX (the
 * program binary NVIDIA gives) taken, the marks deleted and the target made sm_90a,
 * and the program built again from that PTX. Only for NVIDIA devices of compute
 * capability 9.0; anything else, or a failed build, exits 1 with the reason. */
#define CLX_SM90A_MARK "//SM90A:"
/* Whether x runs sm_90a code: an NVIDIA GPU of compute capability 9.0 (Hopper). */
int clx_has_sm90a(const struct clx *x);
/* clx_build_sm90a's rewrite of a program's PTX: the marks deleted and the target
 * sm_90a (a new string), or NULL when the PTX's target is not sm_90. */
char *clx_ptx_sm90a(const char *ptx);
cl_program clx_build_sm90a(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options);
cl_kernel clx_kernel(cl_program prog, const char *kernel_name);

/* Milliseconds between an event's start and end (needs a CLX_PROFILE queue). */
double clx_event_ms(cl_event ev);

const char *cl_errname(cl_int err);
void cl_fail(const char *expr, const char *file, int line, cl_int err) NORETURN;

#ifdef __cplusplus
}
#endif

/* CL_CHECK(clFinish(q)): reports the expression, place and the error by name, exit 1. */
#define CL_CHECK(expr)                                                   \
	do {                                                             \
		cl_int cl_check_err_ = (expr);                           \
		if (cl_check_err_ != CL_SUCCESS)                         \
			cl_fail(#expr, __FILE__, __LINE__, cl_check_err_); \
	} while (0)
/* For calls that return an object and report through an errcode pointer: the call
 * names &cl_err_ as that pointer. buf = CL_CREATE(clCreateBuffer(ctx, f, n, NULL, &cl_err_)); */
#define CL_CREATE(call)                                                      \
	__extension__({                                                      \
		cl_int cl_err_ = CL_SUCCESS;                                 \
		__typeof__(call) cl_obj_ = (call);                           \
		if (cl_err_ != CL_SUCCESS)                                   \
			cl_fail(#call, __FILE__, __LINE__, cl_err_);         \
		cl_obj_;                                                     \
	})

#endif
