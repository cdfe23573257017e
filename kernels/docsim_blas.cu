/* docsim_blas.cu: cuBLAS, loaded with dlopen when the GPU path starts (ds_gpu_init, in
 * the device start-up thread) rather than linked. Linked, it was mapped by every run:
 * `docsim -d cpu` on two documents took 60-310 ms and ~200 MB, and under `ulimit -v
 * 200000` could not start at all (issue 12). The few functions docsim calls come through
 * a table of pointers whose types cublas_v2.h still gives. */
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "docsim_dev.cuh"

#define STR_(x) #x
#define STR(x) STR_(x)

struct ds_cublas ds_cublas;

/* The cuBLAS of the headers we were built with, by its soname through the loader's
 * path, then by the development name, then where the build found it. */
static const char *const libnames[] = {
	"libcublas.so." STR(CUBLAS_VER_MAJOR),
	"libcublas.so",
#ifdef ACCELKIT_CUDA_LIBDIR
	ACCELKIT_CUDA_LIBDIR "/libcublas.so." STR(CUBLAS_VER_MAJOR),
#endif
};

/* Maps and binds the library, which ds_cublas_load's dlopen then finds done. */
static void *
preload(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < sizeof libnames / sizeof libnames[0]; i++)
		if (dlopen(libnames[i], RTLD_NOW | RTLD_LOCAL) != NULL)
			break;
	return NULL;
}

/* Loading cuBLAS (its libraries are some 700 MB to map and bind) followed CUDA's start in
 * the start-up thread; in a thread of its own it runs beside it. Started after CUDA's
 * start-up thread, so that the driver's own dlopen usually goes first (the loader does one
 * at a time), and only where an NVIDIA driver is: elsewhere nothing would use the library,
 * and a CPU run's exit() would wait for the loader to finish with it. The GPU path loads
 * it whether or not this thread ran or finished. */
extern "C" void
ds_gpu_preload(void)
{
	pthread_t t;
	pthread_attr_t a;
	if (access("/dev/nvidiactl", F_OK) != 0 || pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	(void)pthread_create(&t, &a, preload, NULL);
	pthread_attr_destroy(&a);
}

static void *
sym(void *lib, const char *lname, const char *name)
{
	void *p = dlsym(lib, name);
	if (p == NULL)
		die("%s: no function %s in this cuBLAS (the GPU path needs CUDA %d's)", lname, name,
		    CUBLAS_VER_MAJOR);
	return p;
}

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

void
ds_cublas_load(void)
{
	/* the workers of several GPUs start at once */
	pthread_mutex_lock(&load_mu);
	if (loaded) {
		pthread_mutex_unlock(&load_mu);
		return;
	}
	size_t n = sizeof libnames / sizeof libnames[0], i;
	void *lib = NULL;
	const char *why = "";
	for (i = 0; i < n && lib == NULL; i++) {
		lib = dlopen(libnames[i], RTLD_NOW | RTLD_LOCAL);
		if (lib == NULL)
			why = dlerror();
	}
	if (lib == NULL)
		die("cannot load cuBLAS (%s), which the GPU path needs: %s (use -d cpu)", libnames[0], why);
	const char *lname = libnames[i - 1];
	ds_cublas.create = (decltype(ds_cublas.create))sym(lib, lname, "cublasCreate_v2");
	ds_cublas.destroy = (decltype(ds_cublas.destroy))sym(lib, lname, "cublasDestroy_v2");
	ds_cublas.set_stream = (decltype(ds_cublas.set_stream))sym(lib, lname, "cublasSetStream_v2");
	ds_cublas.dgemm = (decltype(ds_cublas.dgemm))sym(lib, lname, "cublasDgemm_v2");
	ds_cublas.sgemm = (decltype(ds_cublas.sgemm))sym(lib, lname, "cublasSgemm_v2");
	ds_cublas.gemm_ex = (decltype(ds_cublas.gemm_ex))sym(lib, lname, "cublasGemmEx");
	ds_cublas.status_name = (decltype(ds_cublas.status_name))sym(lib, lname, "cublasGetStatusName");
	ds_cublas.status_string = (decltype(ds_cublas.status_string))sym(lib, lname, "cublasGetStatusString");
	loaded = 1;
	pthread_mutex_unlock(&load_mu);
}

cublasHandle_t
ds_cublas_new(void)
{
	cublasHandle_t h;
	BLAS_CHECK(ds_cublas.create(&h));
	return h;
}

void
ds_cublas_fail(const char *expr, const char *file, int line, int status)
{
	die("%s:%d: %s: %s (%s)", file, line, expr, ds_cublas.status_name((cublasStatus_t)status),
	    ds_cublas.status_string((cublasStatus_t)status));
}
