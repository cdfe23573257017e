/* opencl.c: OpenCL platforms and devices: found, listed, chosen, opened, described.
 * Found under --platform, chosen by spec or by the work (clx_decide), opened with a
 * context and queues, described for the tuning tables. The other roles are files of
 * their own: clload.c (libOpenCL, loaded at the first call), clicd.c (the ICDs a CPU
 * spec loads), clstart.c (the device opened beside the read), clbuild.c (programs
 * built and cached), clerr.c (error names); opencl_int.h is what they share. */
#include "opencl_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "output.h"
#include "ranks.h"
#include "tune.h"

#define MAX_DEVICES 64

int
clx_contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

struct cl_all {
	int nplat;
	cl_platform_id plat[MAX_PLATFORMS];
	int keep[MAX_PLATFORMS];		/* passes --platform */
	cl_uint ndev[MAX_PLATFORMS];
	cl_device_id dev[MAX_PLATFORMS][MAX_DEVICES];
	int empty;	/* a kept platform without devices under a memory limit, else -1 */
};

void
clx_platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t n)
{
	buf[0] = '\0';
	if (clGetPlatformInfo(p, what, n, buf, NULL) != CL_SUCCESS)
		snprintf(buf, n, "?");
	buf[n - 1] = '\0';
}

void
clx_device_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
{
	buf[0] = '\0';
	if (clGetDeviceInfo(d, what, n, buf, NULL) != CL_SUCCESS)
		snprintf(buf, n, "?");
	buf[n - 1] = '\0';
	/* Some drivers pad names with blanks. */
	size_t len = strlen(buf);
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
}

/* No device found (or none at all) where a platform had none under a memory limit:
 * out of memory (see enumerate); otherwise returns. */
static void
devices_out_of_memory(const struct cl_all *a)
{
	if (a->empty < 0)
		return;
	char name[256];
	clx_platform_str(a->plat[a->empty], CL_PLATFORM_NAME, name, sizeof name);
	die("out of memory (starting the devices of OpenCL platform %s)", name);
}

static void
enumerate(const char *filter, struct cl_all *a)
{
	cl_uint np = 0;
	memset(a, 0, sizeof *a);
	cl_int err = clGetPlatformIDs(MAX_PLATFORMS, a->plat, &np);
	clx_catch_platform_bad_alloc();
	/* Under a memory limit (ulimit -v), a platform's library that cannot be mapped is
	 * left out by the ICD loader without a word, and PoCL leaves out a device whose
	 * start failed (and, asked again, hands out that device half made: its first
	 * command aborts). So there, no platform where one is installed, or no device
	 * where a platform has none, is out of memory, said before anything is asked
	 * again; a device another platform has is used as before. */
	int limited = mem_limited();
	a->empty = -1;
	if (err == -1001 || np == 0) {	/* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */
		if (limited && clx_icd_installed())
			die("out of memory (loading the OpenCL platform)");
		return;
	}
	CL_CHECK(err);
	a->nplat = (int)MIN(np, (cl_uint)MAX_PLATFORMS);
	cl_uint kept_devices = 0;
	for (int i = 0; i < a->nplat; i++) {
		char name[256], vendor[256];
		clx_platform_str(a->plat[i], CL_PLATFORM_NAME, name, sizeof name);
		clx_platform_str(a->plat[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
		a->keep[i] = filter == NULL || clx_contains_nocase(name, filter) ||
		    clx_contains_nocase(vendor, filter);
		cl_uint nd = 0;
		if (clGetDeviceIDs(a->plat[i], CL_DEVICE_TYPE_ALL, MAX_DEVICES, a->dev[i], &nd) != CL_SUCCESS)
			nd = 0;
		if (nd == 0 && a->keep[i] && limited && a->empty < 0)
			a->empty = i;
		a->ndev[i] = MIN(nd, (cl_uint)MAX_DEVICES);
		kept_devices += a->keep[i] ? a->ndev[i] : 0;
	}
	if (kept_devices == 0)
		devices_out_of_memory(a);
}

static cl_device_type
dev_type(cl_device_id d)
{
	cl_device_type t = 0;
	clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
	return t;
}

static enum clx_vendor
vendor_of(cl_platform_id p)
{
	char name[256], vendor[256];
	clx_platform_str(p, CL_PLATFORM_NAME, name, sizeof name);
	clx_platform_str(p, CL_PLATFORM_VENDOR, vendor, sizeof vendor);
	if (clx_contains_nocase(name, "NVIDIA") || clx_contains_nocase(vendor, "NVIDIA"))
		return CLX_NVIDIA;
	if (clx_contains_nocase(name, "Portable Computing Language") || clx_contains_nocase(name, "pocl"))
		return CLX_POCL;
	if (clx_contains_nocase(vendor, "Advanced Micro Devices") || clx_contains_nocase(vendor, "AMD"))
		return CLX_AMD;
	if (clx_contains_nocase(vendor, "Intel"))
		return CLX_INTEL;
	return CLX_OTHER;
}

/* The tuning tables' description (see clx_describe) of a device of type t. */
static void
describe(char *buf, size_t size, cl_device_type t, enum clx_vendor v, const char *name)
{
	static const char *const vendor[] = {
		[CLX_OTHER] = "other", [CLX_NVIDIA] = "nvidia", [CLX_POCL] = "pocl",
		[CLX_AMD] = "amd", [CLX_INTEL] = "intel",
	};
	snprintf(buf, size, "%s %s %s", (t & CL_DEVICE_TYPE_GPU) ? "gpu" :
	    (t & CL_DEVICE_TYPE_CPU) ? "cpu" : "accelerator", vendor[v], name);
}

/* The n-th device (over kept platforms, in order) of the given type. */
static int
nth_of_type(const struct cl_all *a, cl_device_type type, int n, int *pi, int *di)
{
	for (int p = 0; p < a->nplat; p++) {
		if (!a->keep[p])
			continue;
		for (cl_uint d = 0; d < a->ndev[p]; d++)
			if ((dev_type(a->dev[p][d]) & type) && n-- == 0) {
				*pi = p;
				*di = (int)d;
				return 1;
			}
	}
	return 0;
}

static void
bad_spec(const char *spec)
{
	usage_error("invalid device '%s' (expected auto, cpu, cpu:N, gpu, gpu:N or P:D, or "
	    "several: gpu:all, cpu:all, gpu:N,M or P:D,P:D)", spec);
}

static int
parse_index(const char *spec, const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || v < 0 || v > 1000)
		bad_spec(spec);
	return (int)v;
}

/* What clx_open learns of device d of platform p, before any context. */
static void
fill_info(const struct cl_all *a, int p, int d, struct clx *x)
{
	x->platform = a->plat[p];
	x->device = a->dev[p][d];
	x->platform_index = p;
	x->device_index = d;
	cl_device_type t = dev_type(x->device);
	x->is_gpu = (t & CL_DEVICE_TYPE_GPU) != 0;
	x->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
	clx_platform_str(x->platform, CL_PLATFORM_NAME, x->platform_name, sizeof x->platform_name);
	clx_device_str(x->device, CL_DEVICE_NAME, x->name, sizeof x->name);
	clx_device_str(x->device, CL_DEVICE_VERSION, x->version, sizeof x->version);
	x->vendor = vendor_of(x->platform);
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof x->global_mem, &x->global_mem, NULL));
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof x->max_alloc, &x->max_alloc, NULL));
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof x->local_mem, &x->local_mem, NULL));
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof x->compute_units, &x->compute_units, NULL));
	CL_CHECK(clGetDeviceInfo(x->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof x->max_wg, &x->max_wg, NULL));
	cl_device_fp_config fp64 = 0;
	clGetDeviceInfo(x->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
	x->has_fp64 = fp64 != 0;
}

/* Whether a device other than a CPU has a queue: clx_finish then ends the process. */
static int opened_gpu;

/* The device's queue in x->ctx; -v names the device. */
static void
open_queue(struct clx *x, int flags)
{
	cl_command_queue_properties qp = (flags & CLX_PROFILE) ? CL_QUEUE_PROFILING_ENABLE : 0;
	x->queue = CL_CREATE(clCreateCommandQueue(x->ctx, x->device, qp, &cl_err_));
	if (!x->is_cpu)
		opened_gpu = 1;
	vlog("device: %d:%d %s / %s (%s, %u compute units, %.1f GiB)", x->platform_index,
	    x->device_index, x->platform_name, x->name, x->is_gpu ? "gpu" : x->is_cpu ? "cpu" :
	    "other", x->compute_units, (double)x->global_mem / (1 << 30));
}

void
clx_open(const char *spec, const char *filter, int flags, struct clx *x)
{
	struct cl_all a;
	int p = -1, d = -1, found = 0;

	if (spec == NULL)
		spec = "auto";
	if (clx_is_many(spec))
		die("device '%s': %s takes one OpenCL device at a time", spec,
		    progname);
	memset(x, 0, sizeof *x);
	clx_icd_restrict(spec);
	enumerate(filter, &a);
	if (strcmp(spec, "auto") == 0) {
		found = nth_of_type(&a, CL_DEVICE_TYPE_GPU, 0, &p, &d) ||
		    nth_of_type(&a, CL_DEVICE_TYPE_CPU, 0, &p, &d) ||
		    nth_of_type(&a, CL_DEVICE_TYPE_ALL, 0, &p, &d);
	} else if (strncmp(spec, "cpu", 3) == 0 || strncmp(spec, "gpu", 3) == 0) {
		cl_device_type t = spec[0] == 'c' ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
		int n = 0;
		if (spec[3] == ':')
			n = parse_index(spec, spec + 4);
		else if (spec[3] != '\0')
			bad_spec(spec);
		found = nth_of_type(&a, t, n, &p, &d);
	} else {
		const char *colon = strchr(spec, ':');
		if (colon == NULL)
			bad_spec(spec);
		char pl[16];
		snprintf(pl, sizeof pl, "%.*s", (int)MIN((size_t)(colon - spec), sizeof pl - 1), spec);
		p = parse_index(spec, pl);
		d = parse_index(spec, colon + 1);
		found = p < a.nplat && a.keep[p] && (cl_uint)d < a.ndev[p];
	}
	if (!found) {
		devices_out_of_memory(&a);
		if (a.nplat == 0)
			die("device '%s': no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)", spec);
		die("device '%s': no such OpenCL device%s%s (see --list-devices)", spec,
		    filter ? " on platforms matching " : "", filter ? filter : "");
	}

	fill_info(&a, p, d, x);
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)x->platform, 0};
	x->ctx = CL_CREATE(clCreateContext(props, 1, &x->device, NULL, NULL, &cl_err_));
	open_queue(x, flags);
}

int
clx_is_many(const char *spec)
{
	if (spec == NULL)
		return 0;
	size_t n = strlen(spec);
	return strchr(spec, ',') != NULL || (n > 4 && strcmp(spec + n - 4, ":all") == 0);
}

/* No device at item of spec: the message clx_open gives. */
static void NORETURN
no_device(const struct cl_all *a, const char *spec, const char *item, const char *filter)
{
	devices_out_of_memory(a);
	if (a->nplat == 0)
		die("device '%s': no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)", spec);
	die("device '%s': no such OpenCL device '%s'%s%s (see --list-devices)", spec, item,
	    filter ? " on platforms matching " : "", filter ? filter : "");
}

int
clx_open_many(const char *spec, const char *filter, int flags, struct clx *xs, int max)
{
	struct cl_all a;
	int pl[CLX_MAX_MANY] = {0}, dl[CLX_MAX_MANY] = {0}, n = 0;

	if (!clx_is_many(spec)) {
		clx_open(spec, filter, flags, &xs[0]);
		return 1;
	}
	max = MIN(max, CLX_MAX_MANY);
	clx_icd_restrict(spec);
	enumerate(filter, &a);
	size_t len = strlen(spec);
	if (strcmp(spec, "gpu:all") == 0 || strcmp(spec, "cpu:all") == 0) {
		cl_device_type t = spec[0] == 'c' ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
		while (n < max && nth_of_type(&a, t, n, &pl[n], &dl[n]))
			n++;
		if (n == 0)
			no_device(&a, spec, spec, filter);
	} else {
		/* Items TYPE:N or P:D; a bare number takes the item before it as its
		 * pattern: gpu:0,1 is gpu:0 and gpu:1, 0:0,1 is 0:0 and 0:1. */
		char *buf = xstrdup(spec), *save = NULL, prefix[32] = "";
		int typed = 0;
		if (len == 0 || spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,"))
			bad_spec(spec);
		for (char *it = strtok_r(buf, ",", &save); it != NULL; it = strtok_r(NULL, ",", &save)) {
			char item[64];
			const char *colon = strchr(it, ':');
			if (strlen(it) > 40)
				bad_spec(spec);
			if (colon == NULL) {
				if (n == 0)
					bad_spec(spec);
				snprintf(item, sizeof item, "%s%.20s", prefix, it);
			} else {
				snprintf(item, sizeof item, "%.40s", it);
				snprintf(prefix, sizeof prefix, "%.*s", (int)MIN((size_t)(colon - it + 1),
				    sizeof prefix - 1), it);
				typed = strncmp(it, "cpu:", 4) == 0 || strncmp(it, "gpu:", 4) == 0;
			}
			if (n == max)
				die("device '%s': more than %d devices", spec, max);
			const char *num = strchr(item, ':') + 1;
			int found;
			if (typed) {
				cl_device_type t = item[0] == 'c' ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
				found = nth_of_type(&a, t, parse_index(spec, num), &pl[n], &dl[n]);
			} else {
				char ps[16];
				snprintf(ps, sizeof ps, "%.*s", (int)MIN((size_t)(num - 1 - item),
				    sizeof ps - 1), item);
				pl[n] = parse_index(spec, ps);
				dl[n] = parse_index(spec, num);
				found = pl[n] < a.nplat && a.keep[pl[n]] && (cl_uint)dl[n] < a.ndev[pl[n]];
			}
			if (!found)
				no_device(&a, spec, item, filter);
			n++;
		}
		free(buf);
	}
	/* under mpirun, the list is the devices that the ranks of a host share, dealt out
	 * among them (ranks.h); pick is ascending with pick[i] >= i, so in place */
	if (ranks_size() > 1) {
		int pick[CLX_MAX_MANY], k = ranks_deal(n, pick);
		for (int i = 0; i < k; i++) {
			pl[i] = pl[pick[i]];
			dl[i] = dl[pick[i]];
		}
		n = k;
	}
	/* One context holds them all, and a context is of one platform. */
	for (int i = 1; i < n; i++)
		if (pl[i] != pl[0]) {
			char p0[256], pi[256];
			clx_platform_str(a.plat[pl[0]], CL_PLATFORM_NAME, p0, sizeof p0);
			clx_platform_str(a.plat[pl[i]], CL_PLATFORM_NAME, pi, sizeof pi);
			die("device '%s': %d:%d (%s) and %d:%d (%s) are on different OpenCL "
			    "platforms; several devices must be of one platform (--platform TEXT "
			    "keeps one)", spec, pl[0], dl[0], p0, pl[i], dl[i], pi);
		}
	/* A device named twice is opened twice, a queue each, in a context that lists it
	 * once: two workers share it (the dividing code runs on a machine of one GPU). */
	cl_device_id ids[CLX_MAX_MANY];
	cl_uint nids = 0;
	for (int i = 0; i < n; i++) {
		memset(&xs[i], 0, sizeof xs[i]);
		fill_info(&a, pl[i], dl[i], &xs[i]);
		int seen = 0;
		for (cl_uint j = 0; j < nids; j++)
			seen |= ids[j] == xs[i].device;
		if (!seen)
			ids[nids++] = xs[i].device;
	}
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)a.plat[pl[0]], 0};
	cl_context ctx = CL_CREATE(clCreateContext(props, nids, ids, NULL, NULL, &cl_err_));
	for (int i = 0; i < n; i++) {
		/* Each clx holds a reference, so that clx_close works on each. */
		if (i > 0)
			CL_CHECK(clRetainContext(ctx));
		xs[i].ctx = ctx;
		xs[i].slot = i;
		open_queue(&xs[i], flags);
	}
	return n;
}

const char *
clx_decide(const char *spec, const char *filter, double work, clx_model_fn *model, void *ctx)
{
	struct cl_all a;
	int gp, gd, cp, cd;

	if (spec != NULL && strcmp(spec, "auto") != 0)
		return spec;
	enumerate(filter, &a);
	int gpu = nth_of_type(&a, CL_DEVICE_TYPE_GPU, 0, &gp, &gd);
	int cpu = nth_of_type(&a, CL_DEVICE_TYPE_CPU, 0, &cp, &cd);
	if (gpu != cpu) {
		vlog("auto: %s", gpu ? "gpu (no CPU device)" : "cpu (no usable GPU)");
		return gpu ? "gpu" : "cpu";
	}
	if (!gpu)
		return "auto";	/* clx_open says what is missing */
	char gdesc[384], cdesc[384], name[256];
	clx_device_str(a.dev[gp][gd], CL_DEVICE_NAME, name, sizeof name);
	describe(gdesc, sizeof gdesc, CL_DEVICE_TYPE_GPU, vendor_of(a.plat[gp]), name);
	clx_device_str(a.dev[cp][cd], CL_DEVICE_NAME, name, sizeof name);
	describe(cdesc, sizeof cdesc, CL_DEVICE_TYPE_CPU, vendor_of(a.plat[cp]), name);
	const struct cost_model *g = model(gdesc, ctx), *c = model(cdesc, ctx);
	struct cost_model m = {g->unit, c->cpu_rate, c->cpu_fixed, g->gpu_rate, g->gpu_fixed};
	cl_uint units = 1;
	clGetDeviceInfo(a.dev[cp][cd], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
	return cost_pick_gpu(&m, work, (int)MAX(units, 1u), CLX_GPU_START_SEC) ? "gpu" : "cpu";
}

void
clx_finish(void)
{
	/* NVIDIA's OpenCL driver spends hundreds of milliseconds at exit tearing down its
	 * contexts (clkmeans on 2 H200s: ~600 ms after its last phase; bench/README.md),
	 * as CUDA's runtime does; cuda_finish skips it the same way. A CPU run returns,
	 * so that its exit runs the leak check of make check SANITIZE=1. */
	if (!opened_gpu)
		return;
	stdout_finish();
	fflush(NULL);
	ranks_finish();		/* _exit skips the atexit that would */
	_exit(0);
}

void
clx_close(struct clx *x)
{
	if (x->queue)
		clReleaseCommandQueue(x->queue);
	if (x->ctx)
		clReleaseContext(x->ctx);
	memset(x, 0, sizeof *x);
}

int
clx_count_gpus(const char *filter)
{
	struct cl_all a;
	int n = 0, p, d;
	enumerate(filter, &a);
	while (nth_of_type(&a, CL_DEVICE_TYPE_GPU, n, &p, &d))
		n++;
	return n;
}

void
clx_list_devices(const char *filter)
{
	struct cl_all a;
	int gpu_n = 0, cpu_n = 0;

	enumerate(filter, &a);
	for (int p = 0; p < a.nplat; p++) {
		char pname[256];
		clx_platform_str(a.plat[p], CL_PLATFORM_NAME, pname, sizeof pname);
		for (cl_uint d = 0; d < a.ndev[p]; d++) {
			cl_device_type t = dev_type(a.dev[p][d]);
			char alias[16] = "-";
			if (a.keep[p] && (t & CL_DEVICE_TYPE_GPU))
				snprintf(alias, sizeof alias, "gpu:%d", gpu_n++);
			else if (a.keep[p] && (t & CL_DEVICE_TYPE_CPU))
				snprintf(alias, sizeof alias, "cpu:%d", cpu_n++);
			if (!a.keep[p])
				continue;
			char name[256];
			cl_uint cu = 0;
			cl_ulong mem = 0;
			clx_device_str(a.dev[p][d], CL_DEVICE_NAME, name, sizeof name);
			clGetDeviceInfo(a.dev[p][d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
			clGetDeviceInfo(a.dev[p][d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
			printf("%d:%u\t%s\t%s\t%s (%u compute units, %.1f GiB)\n", p, d, alias, pname,
			    name, cu, (double)mem / (1 << 30));
		}
	}
	stdout_finish();
}

double
clx_event_ms(cl_event ev)
{
	cl_ulong t0 = 0, t1 = 0;
	CL_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
	CL_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
	return 1e-6 * (double)(t1 - t0);
}

#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000	/* cl_nv_device_attribute_query */
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif

int
clx_nv_cc(const struct clx *x, unsigned *major, unsigned *minor)
{
	cl_uint ma = 0, mi = 0;
	if (x->vendor != CLX_NVIDIA || !x->is_gpu ||
	    clGetDeviceInfo(x->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof ma, &ma,
	    NULL) != CL_SUCCESS || clGetDeviceInfo(x->device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV,
	    sizeof mi, &mi, NULL) != CL_SUCCESS)
		return 0;
	*major = ma;
	*minor = mi;
	return 1;
}

void
clx_describe(const struct clx *x, char *buf, size_t size)
{
	describe(buf, size, x->is_gpu ? CL_DEVICE_TYPE_GPU : x->is_cpu ? CL_DEVICE_TYPE_CPU : 0,
	    x->vendor, x->name);
}
