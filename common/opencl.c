/* opencl.c: see opencl.h. */
#include "opencl.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"
#include "output.h"
#include "ranks.h"
#include "timer.h"
#include "tune.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

/* ---- libOpenCL, loaded when a run first calls OpenCL ----
 *
 * Not linked: the programs define the OpenCL entry points themselves (below, from
 * clapi.h), each a call through a table that clx_load fills with dlopen and dlsym at
 * the first call. A run that never calls OpenCL (clmatmul -d cpu, a small auto run)
 * never maps libOpenCL, the ICD loader's platforms, or anything they load. An entry
 * point the installed libOpenCL lacks is an error naming it, when called. */
static struct {
#define X(ret, name, params, args) ret (CL_API_CALL *name) params;
#include "clapi.h"
#undef X
} clapi;
static void *cl_lib;
static char cl_lib_error[512];
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;

static void
cl_load_once(void)
{
	static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so"};
	/* An OpenCL library already in the process, preloaded (Oclgrind's runtime,
	 * LD_PRELOAD) or linked by another library, is the one to use: its entry points
	 * are found in the global scope (the program's own, these, are not exported). */
	if (dlsym(RTLD_DEFAULT, "clGetPlatformIDs") != NULL)
		cl_lib = dlopen(NULL, RTLD_NOW);
	for (size_t i = 0; cl_lib == NULL && i < sizeof names / sizeof names[0]; i++) {
		cl_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (cl_lib == NULL && i == 0)
			snprintf(cl_lib_error, sizeof cl_lib_error, "%s", dlerror());
	}
	if (cl_lib == NULL)
		return;
#define X(ret, name, params, args) *(void **)&clapi.name = dlsym(cl_lib, #name);
#include "clapi.h"
#undef X
}

int
clx_load(void)
{
	pthread_once(&cl_once, cl_load_once);
	return cl_lib != NULL;
}

static void NORETURN
cl_missing(const char *name)
{
	if (cl_lib == NULL)
		die("OpenCL: libOpenCL.so.1 cannot be loaded (%s); install an ICD loader "
		    "(ocl-icd-libopencl1) and a platform", cl_lib_error);
	die("OpenCL: the installed libOpenCL has no %s", name);
}

/* clGetPlatformIDs without libOpenCL is "no platform" (enumerate says what follows;
 * the cast serves the other entry points' types, which never take that branch); every
 * other entry point is only reached with a platform. */
#define X(ret, name, params, args) \
	CL_API_ENTRY ret CL_API_CALL name params \
	{ \
		if (!clx_load() && strcmp(#name, "clGetPlatformIDs") == 0) \
			return (ret)(intptr_t)-1001;	/* CL_PLATFORM_NOT_FOUND_KHR */ \
		if (clapi.name == NULL) \
			cl_missing(#name); \
		return clapi.name args; \
	}
#include "clapi.h"
#undef X

/* ---- which platforms the ICD loader opens ----
 *
 * The ICD loader loads every platform installed (/etc/OpenCL/vendors/ *.icd) at the
 * first call, and NVIDIA's starts CUDA (a few hundred ms, the GPU's memory touched)
 * even for a run that then takes a CPU device. A spec of CPU devices only (cpu, cpu:N,
 * cpu:all, cpu:N,M) cannot name one of NVIDIA's, whose platform has none; there the
 * loader is pointed at the other platforms' .icd files alone: when one is left,
 * OCL_ICD_VENDORS is set to a folder of ours holding a copy of it alone
 * ($XDG_CACHE_HOME/accelkit/icd-cpu, else ~/.cache/...: a folder, which both ocl-icd
 * and Khronos's loader read), and nothing is changed when several are left, when the
 * user set OCL_ICD_VENDORS, or when OpenCL is loaded already. A user's
 * OCL_ICD_FILENAMES is narrowed instead (icd_narrow_filenames): its GPU vendors'
 * entries left out for CPU specs, and for P:D those after entry P. P:D specs name
 * platforms by their place among all of them, and gpu and auto may need NVIDIA's: the
 * folder is left as it is for them. */
static char icd_kept[4200];
static int contains_nocase(const char *hay, const char *needle);
static int accelkit_dir(const char *sub, char *buf, size_t size);
static int read_all(int fd, void *buf, size_t n);
static int write_all(int fd, const void *buf, size_t n);

/* The copy of the .icd file `from' in folder (written, under a temporary name and
 * renamed, unless it is there already with the same line): 1 with its path in path. */
static int
icd_copy(const char *from, const char *folder, char *path, size_t size)
{
	char line[1024] = "", have[1024] = "", tmp[4300];
	const char *base = strrchr(from, '/');
	base = base != NULL ? base + 1 : from;
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	if (snprintf(path, size, "%s/%s", folder, base) >= (int)size)
		return 0;
	/* only this one there: another's copy (a platform since removed) would load too */
	DIR *d = opendir(folder);
	for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
		char other[4400];
		size_t len = strlen(e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".icd") == 0 &&
		    strcmp(e->d_name, base) != 0) {
			snprintf(other, sizeof other, "%s/%s", folder, e->d_name);
			unlink(other);
		}
	}
	if (d != NULL)
		closedir(d);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t m = read(fd, have, sizeof have - 1);
		close(fd);
		if (m == n && memcmp(have, line, (size_t)n) == 0)
			return 1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return 0;
	int ok = write_all(fd, line, (size_t)n);
	ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	return ok;
}

int
clx_spec_cpu_only(const char *spec)
{
	return spec != NULL && strncmp(spec, "cpu", 3) == 0 && (spec[3] == '\0' ||
	    spec[3] == ':');
}

/* Whether an ICD library's name is a GPU vendor's: NVIDIA's (which starts CUDA, and
 * crashed under a tight ulimit -v), AMD's, Intel's GPU runtime (NEO's libigdrcl; its
 * CPU runtime, libintelocl, is kept), Mesa's Clover and Rusticl. */
static int
icd_gpu_library(const char *lib, size_t len)
{
	static const char *const gpu[] = {"nvidia", "amdocl", "igdrcl", "mesaopencl",
	    "rusticl"};
	char name[512];
	const char *base = lib;
	for (size_t i = 0; i < len; i++)
		if (lib[i] == '/')
			base = lib + i + 1;
	snprintf(name, sizeof name, "%.*s", (int)(len - (size_t)(base - lib)), base);
	for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
		if (contains_nocase(name, gpu[i]))
			return 1;
	return 0;
}

/* The platform index a P:D spec (or a list of one platform's P:D items) names, else
 * -1. */
static int
spec_platform(const char *spec)
{
	char *end;
	if (spec == NULL || *spec < '0' || *spec > '9')
		return -1;
	long p = strtol(spec, &end, 10);
	return *end == ':' && p < MAX_PLATFORMS ? (int)p : -1;
}

/* The user's OCL_ICD_FILENAMES (a list of ICD libraries, ':' between them, that
 * Khronos's loader opens before /etc/OpenCL/vendors' and in their order; the lent GPU
 * machine's image sets libpocl.so.2:libnvidia-opencl.so.1) narrowed for a spec that
 * cannot need a GPU vendor's library: for CPU devices (cpu:N, cpu:all), every GPU
 * vendor's entry left out; for P:D, those after entry P, which leaves P where it was
 * among the platforms (the loader keeps their order). Done for this process alone,
 * before libOpenCL is loaded; -v says what was left out. With every entry a GPU
 * vendor's, a CPU spec leaves the variable out (the vendors folder's platforms, as
 * without it) and 1 is returned so that the folder is narrowed too. */
static int
icd_narrow_filenames(const char *spec, const char *files)
{
	const int p = spec_platform(spec);
	if (!clx_spec_cpu_only(spec) && p < 0)
		return 0;
	size_t n = strlen(files);
	char *kept = xmalloc(n + 1), *out = xmalloc(n + 64);
	size_t k = 0;
	int index = 0, left = 0;
	out[0] = '\0';
	for (const char *e = files;; index++) {
		const char *colon = strchr(e, ':');
		size_t len = colon != NULL ? (size_t)(colon - e) : strlen(e);
		if (len > 0 && index > p && icd_gpu_library(e, len)) {
			size_t o = strlen(out);
			snprintf(out + o, n + 64 - o, "%s%.*s", left++ ? ", " : "", (int)len, e);
		} else if (len > 0) {
			if (k > 0)
				kept[k++] = ':';
			memcpy(kept + k, e, len);
			k += len;
		}
		if (colon == NULL)
			break;
		e = colon + 1;
	}
	kept[k] = '\0';
	int all = 0;
	if (left > 0 && k > 0) {
		setenv("OCL_ICD_FILENAMES", kept, 1);
		vlog("OpenCL: %s: OCL_ICD_FILENAMES narrowed to %s (left out: %s)", spec, kept,
		    out);
	} else if (left > 0) {
		unsetenv("OCL_ICD_FILENAMES");
		vlog("OpenCL: %s: OCL_ICD_FILENAMES left out (only GPU vendors' libraries: %s)",
		    spec, out);
		all = 1;
	}
	free(kept);
	free(out);
	return all;
}

static void
icd_restrict(const char *spec)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static const char dirname[] = "/etc/OpenCL/vendors";
	const char *files = getenv("OCL_ICD_FILENAMES");
	pthread_mutex_lock(&mu);
	int narrowed = cl_lib == NULL && files != NULL && icd_narrow_filenames(spec, files);
	pthread_mutex_unlock(&mu);
	if (!clx_spec_cpu_only(spec) || getenv("OCL_ICD_VENDORS") != NULL ||
	    (files != NULL && !narrowed))
		return;
	pthread_mutex_lock(&mu);
	DIR *dir = cl_lib == NULL ? opendir(dirname) : NULL;
	char keep[512] = "";
	int kept = 0, dropped = 0;
	for (struct dirent *e; dir != NULL && (e = readdir(dir)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n <= 4 || strcmp(e->d_name + n - 4, ".icd") != 0)
			continue;
		char path[512], lib[512] = "";
		snprintf(path, sizeof path, "%s/%s", dirname, e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL || fgets(lib, sizeof lib, f) == NULL)
			lib[0] = '\0';
		if (f != NULL)
			fclose(f);
		if (contains_nocase(lib, "nvidia") || contains_nocase(e->d_name, "nvidia")) {
			dropped++;
		} else {
			kept++;
			snprintf(keep, sizeof keep, "%s", path);
		}
	}
	if (dir != NULL)
		closedir(dir);
	char folder[4096];
	if (kept == 1 && accelkit_dir("icd-cpu", folder, sizeof folder) &&
	    icd_copy(keep, folder, icd_kept, sizeof icd_kept))
		setenv("OCL_ICD_VENDORS", folder, 1);
	else
		icd_kept[0] = '\0';
	pthread_mutex_unlock(&mu);
	if (icd_kept[0] != '\0')
		vlog("OpenCL: CPU devices only: the ICD loader reads %s alone (%d NVIDIA "
		    "ICD%s left out)", icd_kept, dropped, dropped == 1 ? "" : "s");
}

const char *
cl_errname(cl_int err)
{
	switch (err) {
#define E(x) case x: return #x;
	E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
	E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
	E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE)
	E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
	E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
	E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
	E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
	E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
	E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
	E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
	E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
	E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
	E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
	E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
	E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
	E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
	E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
	E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
	E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
	E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
	E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
	case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
	default: return "unknown OpenCL error";
	}
}

void
cl_fail(const char *expr, const char *file, int line, cl_int err)
{
	/* the errors that stand for a failed allocation (CL_OUT_OF_RESOURCES is also a
	 * launch beyond the device's registers: out of memory only under a limit) */
	if (err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
	    (err == CL_OUT_OF_RESOURCES && mem_limited()))
		die("out of memory (%s: %s, %s:%d)", expr, cl_errname(err), file, line);
	die("%s:%d: %s: %s (%d)", file, line, expr, cl_errname(err), (int)err);
}

static int
contains_nocase(const char *hay, const char *needle)
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

static void
platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t n)
{
	buf[0] = '\0';
	if (clGetPlatformInfo(p, what, n, buf, NULL) != CL_SUCCESS)
		snprintf(buf, n, "?");
	buf[n - 1] = '\0';
}

static void
device_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
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

/* what the platform does for us now, for its out-of-memory message */
static const char *_Atomic platform_doing;

static void NORETURN
platform_out_of_memory(void)
{
	const char *doing = platform_doing;
	die("out of memory (in the OpenCL platform%s%s)", doing ? ", " : "", doing ? doing : "");
}

static void NORETURN
llvm_out_of_memory(void *data, const char *reason, bool crash_diag)
{
	(void)data, (void)reason, (void)crash_diag;
	platform_out_of_memory();
}

/* the path of a loaded library whose name has `part` (dl_iterate_phdr's walk) */
struct lib_find {
	const char *part;
	char path[4096];
};

static int
lib_find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_find *f = arg;
	(void)size;
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, f->part) == NULL)
		return 0;
	snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
	return 1;
}

/* The loaded library whose name has part, or NULL; dlclose it after (the reference
 * RTLD_NOLOAD takes; the platform keeps its own). */
static void *
loaded_lib(const char *part)
{
	struct lib_find f = {part, ""};
	if (!dl_iterate_phdr(lib_find_one, &f))
		return NULL;
	return dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
}

/* PoCL, and the LLVM inside it, are C++: an allocation that fails there throws
 * std::bad_alloc, which nothing catches, and the process aborts; LLVM's own
 * allocations (safe_malloc) print "LLVM ERROR: out of memory" and abort. The C++
 * runtime calls its new-handler before it throws, and LLVM its bad-alloc handler
 * before it aborts: ours say so and exit 1. Set through the C ABI once the platforms
 * are loaded (their libraries with them; a platform without them needs neither), the
 * new-handler only if nothing else has set one. Once: a dlopen and a dlsym or two. */
static void
catch_platform_bad_alloc(void)
{
	typedef void handler(void);
	typedef void llvm_handler(void *, const char *, bool);
	static int done;
	if (done)
		return;
	done = 1;
	void *lib = loaded_lib("/libstdc++.so");
	if (lib != NULL) {
		handler *(*set)(handler *) = (handler *(*)(handler *))dlsym(lib,
		    "_ZSt15set_new_handlerPFvvE");
		if (set != NULL) {
			handler *old = set(platform_out_of_memory);
			if (old != NULL)
				set(old);
		}
		dlclose(lib);
	}
	if ((lib = loaded_lib("/libLLVM")) != NULL) {
		void (*install)(llvm_handler *, void *) = (void (*)(llvm_handler *, void *))dlsym(lib,
		    "_ZN4llvm31install_bad_alloc_error_handlerEPFvPvPKcbES0_");
		if (install != NULL)
			install(llvm_out_of_memory, NULL);
		dlclose(lib);
	}
}

/* Whether an OpenCL platform is installed for the ICD loader (ocl-icd's places). */
static int
icd_installed(void)
{
	const char *env = getenv("OCL_ICD_VENDORS");
	if (env != NULL && *env != '\0')
		return 1;
	DIR *dir = opendir("/etc/OpenCL/vendors");
	int found = 0;
	if (dir == NULL)
		return 0;
	for (struct dirent *e; !found && (e = readdir(dir)) != NULL;) {
		size_t n = strlen(e->d_name);
		found = n > 4 && strcmp(e->d_name + n - 4, ".icd") == 0;
	}
	closedir(dir);
	return found;
}

/* No device found (or none at all) where a platform had none under a memory limit:
 * out of memory (see enumerate); otherwise returns. */
static void
devices_out_of_memory(const struct cl_all *a)
{
	if (a->empty < 0)
		return;
	char name[256];
	platform_str(a->plat[a->empty], CL_PLATFORM_NAME, name, sizeof name);
	die("out of memory (starting the devices of OpenCL platform %s)", name);
}

static void
enumerate(const char *filter, struct cl_all *a)
{
	cl_uint np = 0;
	memset(a, 0, sizeof *a);
	cl_int err = clGetPlatformIDs(MAX_PLATFORMS, a->plat, &np);
	catch_platform_bad_alloc();
	/* Under a memory limit (ulimit -v), a platform's library that cannot be mapped is
	 * left out by the ICD loader without a word, and PoCL leaves out a device whose
	 * start failed (and, asked again, hands out that device half made: its first
	 * command aborts). So there, no platform where one is installed, or no device
	 * where a platform has none, is out of memory, said before anything is asked
	 * again; a device another platform has is used as before. */
	int limited = mem_limited();
	a->empty = -1;
	if (err == -1001 || np == 0) {	/* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */
		if (limited && icd_installed())
			die("out of memory (loading the OpenCL platform)");
		return;
	}
	CL_CHECK(err);
	a->nplat = (int)MIN(np, (cl_uint)MAX_PLATFORMS);
	cl_uint kept_devices = 0;
	for (int i = 0; i < a->nplat; i++) {
		char name[256], vendor[256];
		platform_str(a->plat[i], CL_PLATFORM_NAME, name, sizeof name);
		platform_str(a->plat[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
		a->keep[i] = filter == NULL || contains_nocase(name, filter) ||
		    contains_nocase(vendor, filter);
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
	platform_str(p, CL_PLATFORM_NAME, name, sizeof name);
	platform_str(p, CL_PLATFORM_VENDOR, vendor, sizeof vendor);
	if (contains_nocase(name, "NVIDIA") || contains_nocase(vendor, "NVIDIA"))
		return CLX_NVIDIA;
	if (contains_nocase(name, "Portable Computing Language") || contains_nocase(name, "pocl"))
		return CLX_POCL;
	if (contains_nocase(vendor, "Advanced Micro Devices") || contains_nocase(vendor, "AMD"))
		return CLX_AMD;
	if (contains_nocase(vendor, "Intel"))
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
	platform_str(x->platform, CL_PLATFORM_NAME, x->platform_name, sizeof x->platform_name);
	device_str(x->device, CL_DEVICE_NAME, x->name, sizeof x->name);
	device_str(x->device, CL_DEVICE_VERSION, x->version, sizeof x->version);
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
	icd_restrict(spec);
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
	icd_restrict(spec);
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
			platform_str(a.plat[pl[0]], CL_PLATFORM_NAME, p0, sizeof p0);
			platform_str(a.plat[pl[i]], CL_PLATFORM_NAME, pi, sizeof pi);
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
	device_str(a.dev[gp][gd], CL_DEVICE_NAME, name, sizeof name);
	describe(gdesc, sizeof gdesc, CL_DEVICE_TYPE_GPU, vendor_of(a.plat[gp]), name);
	device_str(a.dev[cp][cd], CL_DEVICE_NAME, name, sizeof name);
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
		platform_str(a.plat[p], CL_PLATFORM_NAME, pname, sizeof pname);
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
			device_str(a.dev[p][d], CL_DEVICE_NAME, name, sizeof name);
			clGetDeviceInfo(a.dev[p][d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
			clGetDeviceInfo(a.dev[p][d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
			printf("%d:%u\t%s\t%s\t%s (%u compute units, %.1f GiB)\n", p, d, alias, pname,
			    name, cu, (double)mem / (1 << 30));
		}
	}
	stdout_finish();
}

/* Builds prog for x's device; a failure prints the build log and exits 1, and -v
 * prints a log that says anything. */
static void
build_or_die(struct clx *x, cl_program prog, const char *name, const char *opts)
{
	char doing[300];
	snprintf(doing, sizeof doing, "building %s.cl", name);
	platform_doing = doing;
	cl_int err = clBuildProgram(prog, 1, &x->device, opts, NULL, NULL);
	platform_doing = NULL;
	if (err != CL_SUCCESS || verbose) {
		size_t n = 0;
		clGetProgramBuildInfo(prog, x->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
		char *log = xmalloc(n + 1);
		log[0] = '\0';
		clGetProgramBuildInfo(prog, x->device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
		log[n] = '\0';
		int empty = strspn(log, " \t\r\n") == strlen(log);
		/* A compiler's log names an error; a build that failed under a memory limit
		 * with none (PoCL: an empty log, or its "failed to build" line alone) ran
		 * out of memory in the compiler. */
		if (err != CL_SUCCESS && mem_limited() && !contains_nocase(log, "error"))
			die("out of memory (building %s.cl on %s: %s)", name, x->name,
			    cl_errname(err));
		if (err != CL_SUCCESS) {
			fprintf(stderr, "%s: %s.cl: build log:\n%s\n", progname, name, log);
			die("%s.cl: build failed on %s: %s (options: %s)", name, x->name,
			    cl_errname(err), opts);
		}
		if (!empty)
			vlog("%s.cl: build log:\n%s", name, log);
		free(log);
	}
}

/* ---- the program cache ----
 *
 * A built program's binary (CL_PROGRAM_BINARIES) is kept in a file of the cache
 * folder, $XDG_CACHE_HOME/accelkit/cl (else ~/.cache/accelkit/cl), named after the
 * program and a 128-bit hash of its key: the platform's name and version, the device's
 * name and version, the driver's version, the build options and the source. The file
 * holds the key itself (a hash that collides, or a stale entry, reads as a miss), the
 * binary's length and an FNV-1a checksum of it. A file that cannot be read, is short,
 * fails its checks or is refused by the driver is a miss: the program is built from
 * its source and the file written again. Files are written under a temporary name of
 * this process and thread and renamed into place, so that runs at once each read a
 * whole entry or none; a write that fails costs nothing but the next run's build.
 * ACCELKIT_CL_CACHE=0 turns the cache off. */
#define CACHE_MAGIC "ACCLBIN1"

static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

/* The cache folder in buf, made if needed; 0 when there is none (off, no home). */
static int
cache_dir(char *buf, size_t size)
{
	const char *off = getenv("ACCELKIT_CL_CACHE");
	if (off != NULL && strcmp(off, "0") == 0)
		return 0;
	return accelkit_dir("cl", buf, size);
}

/* $XDG_CACHE_HOME/accelkit/SUB (else ~/.cache/accelkit/SUB) in buf, made if needed;
 * 0 when it cannot be (no home, not writable). */
static int
accelkit_dir(const char *sub, char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, size, "%s/accelkit/%s", xdg, sub);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/accelkit/%s", home, sub);
	else
		return 0;
	if (n < 0 || (size_t)n >= size)
		return 0;
	/* each level in turn: mkdir -p */
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

/* The key of a build: what makes its binary this device's and this source's. */
static char *
cache_key(const struct clx *x, const char *opts, const char *src, size_t *len)
{
	char pver[256], dver[256], drv[256];
	platform_str(x->platform, CL_PLATFORM_VERSION, pver, sizeof pver);
	device_str(x->device, CL_DEVICE_VERSION, dver, sizeof dver);
	device_str(x->device, CL_DRIVER_VERSION, drv, sizeof drv);
	size_t n = strlen(x->platform_name) + strlen(pver) + strlen(x->name) + strlen(dver) +
	    strlen(drv) + strlen(opts) + strlen(src) + 16;
	char *k = xmalloc(n);
	*len = (size_t)snprintf(k, n, "%s\n%s\n%s\n%s\n%s\n%s\n%s", x->platform_name, pver,
	    x->name, dver, drv, opts, src);
	return k;
}

static int
read_all(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return 0;
		got += (size_t)r;
	}
	return 1;
}

static int
write_all(int fd, const void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);
		if (w <= 0)
			return 0;
		done += (size_t)w;
	}
	return 1;
}

/* The entry's binary (a new buffer, its length in *blen), or NULL with why. */
static unsigned char *
cache_read(const char *path, const char *key, size_t klen, size_t *blen, const char **why)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *bin = NULL;
	char *k = NULL;
	uint64_t head[3];	/* key length, binary length, checksum */
	char magic[8];
	*why = "none";
	if (fd < 0)
		return NULL;
	*why = "unreadable or short";
	if (fstat(fd, &st) != 0 || !read_all(fd, magic, sizeof magic) ||
	    !read_all(fd, head, sizeof head))
		goto out;
	*why = "not an entry of this cache";
	if (memcmp(magic, CACHE_MAGIC, sizeof magic) != 0 || head[0] != klen ||
	    head[1] == 0 || (uint64_t)st.st_size != sizeof magic + sizeof head + head[0] +
	    head[1])
		goto out;
	k = xmalloc(klen);
	*why = "unreadable or short";
	if (!read_all(fd, k, klen))
		goto out;
	*why = "stale (another source, options, device or driver)";
	if (memcmp(k, key, klen) != 0)
		goto out;
	bin = xmalloc(head[1]);
	*why = "unreadable or short";
	if (!read_all(fd, bin, head[1]))
		goto out;
	*why = "corrupt (its checksum is wrong)";
	if (fnv1a(0xcbf29ce484222325ULL, bin, head[1]) != head[2])
		goto out;
	*blen = head[1];
	free(k);
	close(fd);
	return bin;
out:
	free(k);
	free(bin);
	close(fd);
	return NULL;
}

/* Writes the entry under a temporary name and renames it into place; 0 on failure. */
static int
cache_write(const char *path, const char *key, size_t klen, const unsigned char *bin,
    size_t blen)
{
	static _Atomic unsigned serial;
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), serial++);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return 0;
	uint64_t head[3] = {klen, blen, fnv1a(0xcbf29ce484222325ULL, bin, blen)};
	int ok = write_all(fd, CACHE_MAGIC, 8) && write_all(fd, head, sizeof head) &&
	    write_all(fd, key, klen) && write_all(fd, bin, blen);
	ok = close(fd) == 0 && ok;
	if (ok && rename(tmp, path) == 0)
		return 1;
	unlink(tmp);
	return 0;
}

/* prog's binary for x's device (the program may belong to several devices of the
 * context; it was built for x's), a new buffer, its length in *len; NULL when the
 * platform gives none. */
static unsigned char *
program_binary(cl_program prog, const struct clx *x, size_t *len)
{
	cl_uint nd = 0, at;
	if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL) != CL_SUCCESS ||
	    nd == 0)
		return NULL;
	cl_device_id *devs = xcalloc(nd, sizeof *devs);
	size_t *sizes = xcalloc(nd, sizeof *sizes);
	unsigned char **bins = xcalloc(nd, sizeof *bins), *bin = NULL;
	if (clGetProgramInfo(prog, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL) ==
	    CL_SUCCESS) {
		for (at = 0; at < nd && devs[at] != x->device; at++)
			;
		if (at < nd && clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, nd *
		    sizeof *sizes, sizes, NULL) == CL_SUCCESS && sizes[at] > 0) {
			bin = bins[at] = xmalloc(sizes[at] + 1);
			if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins,
			    NULL) == CL_SUCCESS) {
				bin[sizes[at]] = '\0';
				*len = sizes[at];
			} else {
				free(bin);
				bin = NULL;
			}
		}
	}
	free(devs);
	free(sizes);
	free(bins);
	return bin;
}

/* The program from the cache, built (from its binary); NULL on a miss, after -v says
 * why an entry there was not used. */
static cl_program
cache_load(struct clx *x, const char *path, const char *key, size_t klen, const char *opts)
{
	size_t blen = 0;
	const char *why;
	unsigned char *bin = cache_read(path, key, klen, &blen, &why);
	if (bin == NULL) {
		vlog("program cache: %s: %s", path, why);
		return NULL;
	}
	cl_int status = CL_SUCCESS, err = CL_SUCCESS;
	const unsigned char *b = bin;
	cl_program prog = clCreateProgramWithBinary(x->ctx, 1, &x->device, &blen, &b, &status,
	    &err);
	free(bin);
	if (err == CL_SUCCESS && status == CL_SUCCESS &&
	    clBuildProgram(prog, 1, &x->device, opts, NULL, NULL) == CL_SUCCESS) {
		vlog("program cache: %s: used", path);
		return prog;
	}
	if (err == CL_SUCCESS)
		clReleaseProgram(prog);
	vlog("program cache: %s: refused by the driver (%s), built again", path,
	    cl_errname(err != CL_SUCCESS ? err : status != CL_SUCCESS ? status :
	    CL_BUILD_PROGRAM_FAILURE));
	return NULL;
}

cl_program
clx_build(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options)
{
	const char *dir = getenv("ACCELKIT_KERNEL_DIR");
	char *loaded = NULL;
	const char *src = embedded_src;

	if (dir != NULL && *dir != '\0') {
		/* the files the embedded source was made from, read again in their order */
		size_t len = 0;
		loaded = xcalloc(1, 1);
		for (size_t i = 0; files[i] != NULL; i++) {
			char path[4096];
			size_t n = 0;
			snprintf(path, sizeof path, "%s/%s", dir, files[i]);
			input *in = in_open(path);
			char *part = in_slurp(in, &n);
			in_close(in);
			loaded = xrealloc(loaded, len + n + 1);
			memcpy(loaded + len, part, n);
			loaded[len += n] = '\0';
			free(part);
			vlog("kernel source: %s", path);
		}
		src = loaded;
	}
	/* PoCL 5's CPU drivers keep one cache of loaded kernel binaries for all devices,
	 * keyed by the program's build and the work-group size. A kernel run on two devices
	 * at once with grids of different widths makes two entries of one key, and the
	 * release after a run decrements the first it finds, not its own: the count goes
	 * below zero and PoCL aborts (its common.c, pocl_release_dlhandle_cache). A define
	 * per device makes each device's build, and so its key, its own. */
	char slot[32] = "";
	if (x->vendor == CLX_POCL && x->slot > 0)
		snprintf(slot, sizeof slot, " -D CLX_SLOT=%d", x->slot);
	char opts[2048];
	snprintf(opts, sizeof opts, "-cl-std=CL1.2 %s%s", options ? options : "", slot);
	vlog("building %s.cl: %s", name, opts);
	char cdir[4096], path[4200];
	size_t klen = 0;
	char *key = NULL;
	cl_program prog = NULL;
	if (cache_dir(cdir, sizeof cdir)) {
		key = cache_key(x, opts, src, &klen);
		uint64_t h1 = fnv1a(0xcbf29ce484222325ULL, key, klen);
		uint64_t h2 = fnv1a(0x84222325cbf29ce4ULL ^ klen, key, klen);
		snprintf(path, sizeof path, "%s/%s-%016llx%016llx.bin", cdir, name,
		    (unsigned long long)h1, (unsigned long long)h2);
		prog = cache_load(x, path, key, klen, opts);
	}
	if (prog == NULL) {
		prog = CL_CREATE(clCreateProgramWithSource(x->ctx, 1, &src, NULL, &cl_err_));
		build_or_die(x, prog, name, opts);
		size_t blen = 0;
		unsigned char *bin = key != NULL ? program_binary(prog, x, &blen) : NULL;
		if (bin != NULL)
			vlog("program cache: %s: %s", path, cache_write(path, key, klen, bin,
			    blen) ? "written" : "could not be written");
		free(bin);
	}
	free(key);
	free(loaded);
	return prog;
}

/* text with every `from` replaced by `to` (a new string) */
static char *
replace_all(const char *text, const char *from, const char *to)
{
	const size_t fl = strlen(from), tl = strlen(to);
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, from)) != NULL; p += fl)
		n++;
	char *out = xmalloc(strlen(text) + n * tl + 1), *o = out;
	for (const char *p = text;;) {
		const char *hit = strstr(p, from);
		if (hit == NULL) {
			strcpy(o, p);
			return out;
		}
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, to, tl);
		o += tl;
		p = hit + fl;
	}
}

char *
clx_ptx_sm90a(const char *ptx)
{
	/* NVVM writes ".target sm_90, texmode_independent" (or without the suffix) */
	const char *target = strstr(ptx, ".target sm_90");
	if (target == NULL || (target[13] != ',' && target[13] != '\n' && target[13] != '\r' &&
	    target[13] != ' ' && target[13] != '\t' && target[13] != '\0'))
		return NULL;
	char *live = replace_all(ptx, CLX_SM90A_MARK, "");
	char *sm90a = replace_all(live, ".target sm_90", ".target sm_90a");
	free(live);
	return sm90a;
}

int
clx_has_sm90a(const struct clx *x)
{
	unsigned major = 0, minor = 0;
	return clx_nv_cc(x, &major, &minor) && major == 9 && minor == 0;
}

cl_program
clx_build_sm90a(struct clx *x, const char *name, const char *embedded_src,
    const char *const *files, const char *options)
{
	if (!clx_has_sm90a(x))
		die("%s.cl: sm_90a code needs an NVIDIA GPU of compute capability 9.0; %s is "
		    "not one", name, x->name);
	cl_program first = clx_build(x, name, embedded_src, files, options);
	/* The program belongs to every device of the context (gpu:all shares one) and was
	 * built for this one: its binary is this device's entry of the lists. */
	cl_uint nd = 0, at;
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL));
	cl_device_id *devs = xcalloc(MAX(nd, 1), sizeof *devs);
	size_t *sizes = xcalloc(MAX(nd, 1), sizeof *sizes);
	unsigned char **bins = xcalloc(MAX(nd, 1), sizeof *bins);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL));
	for (at = 0; at < nd && devs[at] != x->device; at++)
		;
	if (at == nd)
		die("%s.cl: the program built on %s does not list it", name, x->name);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_BINARY_SIZES, nd * sizeof *sizes, sizes,
	    NULL));
	unsigned char *ptx = bins[at] = xmalloc(sizes[at] + 1);
	CL_CHECK(clGetProgramInfo(first, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins, NULL));
	ptx[sizes[at]] = '\0';
	free(devs);
	free(sizes);
	free(bins);
	clReleaseProgram(first);
	char *sm90a = clx_ptx_sm90a((char *)ptx);
	if (sm90a == NULL)
		die("%s.cl: the program binary on %s is not PTX for sm_90, which sm_90a code "
		    "needs", name, x->name);
	free(ptx);

	/* the build options NVIDIA's PTX compiler reads (register cap, verbose) */
	char opts[512] = "";
	for (const char *p = options; (p = strstr(p, "-cl-nv-")) != NULL; p++) {
		size_t len = strcspn(p, " ");
		size_t at = strlen(opts);
		if (at + len + 2 < sizeof opts)
			snprintf(opts + at, sizeof opts - at, "%s%.*s", at ? " " : "", (int)len, p);
	}
	size_t len = strlen(sm90a);
	const unsigned char *bin = (const unsigned char *)sm90a;
	cl_int status = CL_SUCCESS, err = CL_SUCCESS;
	cl_program prog = clCreateProgramWithBinary(x->ctx, 1, &x->device, &len, &bin, &status,
	    &err);
	if (err != CL_SUCCESS || status != CL_SUCCESS)
		die("%s.cl: %s refused its own PTX retargeted to sm_90a: %s", name, x->name,
		    cl_errname(err != CL_SUCCESS ? err : status));
	vlog("building %s.cl again from its PTX for sm_90a: %s", name, opts);
	build_or_die(x, prog, name, opts);
	free(sm90a);
	return prog;
}

cl_kernel
clx_kernel(cl_program prog, const char *kernel_name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(prog, kernel_name, &err);
	if (err != CL_SUCCESS)
		die("kernel %s: %s", kernel_name, cl_errname(err));
	return k;
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

/* ---- the platform opened beside the read ----
 *
 * The thread does not end once its work is done: it says so and then waits for the
 * process's end. A platform's compiler may change the thread's state beneath us (LLVM
 * in PoCL sets an alternate signal stack on the thread that builds), and a thread
 * ending after that trips AddressSanitizer's teardown (make check SANITIZE=1); one
 * parked thread costs nothing. Its state stays reachable (kept) for the leak checker. */

struct clx_start {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int done;
	char *spec, *filter;
	const char *decided;	/* the spec opened, for clx_start_spec */
	int flags, max, n;
	double work;
	clx_model_fn *model;
	clx_prep_fn *prep;
	void *ctx;
	struct clx *xs;
	struct clx_start *next;	/* the list of starts, kept */
};
static struct clx_start *_Atomic starts_kept;

static void *
start_main(void *arg)
{
	struct clx_start *st = arg;
	const char *spec = st->model != NULL ? clx_decide(st->spec, st->filter, st->work,
	    st->model, st->ctx) : st->spec;
	double t0 = now_sec();
	st->decided = spec;
	if (st->model != NULL && (strcmp(spec, "auto") == 0 ||
	    ((st->flags & CLX_CPU_IS_HOST) && strcmp(spec, "cpu") == 0))) {
		st->n = 0;	/* no OpenCL device, or the CPU, which is the caller's host */
	} else {
		st->n = clx_open_many(spec, st->filter, st->flags & ~CLX_CPU_IS_HOST, st->xs,
		    st->max);
		phase_add("open device", now_sec() - t0);
		if (st->prep != NULL)
			st->prep(st->xs, st->n, st->ctx);
	}
	pthread_mutex_lock(&st->mu);
	st->done = 1;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->mu);
	for (;;)
		pause();
	return NULL;
}

struct clx_start *
clx_start(const char *spec, const char *filter, int flags, double work, clx_model_fn *model,
    clx_prep_fn *prep, void *ctx, struct clx *xs, int max)
{
	struct clx_start *st = xcalloc(1, sizeof *st);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->spec = xstrdup(spec != NULL ? spec : "auto");
	st->filter = filter != NULL ? xstrdup(filter) : NULL;
	st->flags = flags;
	st->max = MIN(max, CLX_MAX_MANY);
	st->work = work;
	st->model = model;
	st->prep = prep;
	st->ctx = ctx;
	st->xs = xs;
	st->next = starts_kept;
	starts_kept = st;
	icd_restrict(st->spec);
	int err = pthread_create(&st->thread, NULL, start_main, st);
	if (err != 0)
		die_no_thread(err, NULL);	/* out of memory under a limit, said so */
	pthread_detach(st->thread);
	return st;
}

int
clx_start_wait(struct clx_start *st)
{
	double t0 = now_sec();
	pthread_mutex_lock(&st->mu);
	while (!st->done)
		pthread_cond_wait(&st->cond, &st->mu);
	pthread_mutex_unlock(&st->mu);
	phase_add("open device (waited)", now_sec() - t0);
	return st->n;
}

const char *
clx_start_spec(const struct clx_start *st)
{
	return st->decided;
}
