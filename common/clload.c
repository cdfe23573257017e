/* clload.c: libOpenCL, loaded at the first OpenCL call (a table of entry points).
 * Also the handlers that make a platform's failed allocation our out-of-memory
 * message, set once the platforms are loaded.
 *
 * Not linked: the programs define the OpenCL entry points themselves (below, from
 * clapi.h), each a call through a table that clx_load fills with dlopen and dlsym at
 * the first call. A run that never calls OpenCL (clmatmul -d cpu, a small auto run)
 * never maps libOpenCL, the ICD loader's platforms, or anything they load. An entry
 * point the installed libOpenCL lacks is an error naming it, when called. */
#include "opencl_int.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

int
clx_lib_loaded(void)
{
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

/* ---- a platform's failed allocation, said as ours ---- */

const char *_Atomic clx_platform_doing;

static void NORETURN
platform_out_of_memory(void)
{
	const char *doing = clx_platform_doing;
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
void
clx_catch_platform_bad_alloc(void)
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
