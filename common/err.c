/* err.c: diagnostics and checked allocation (see err.h). */
#include "err.h"
#include "progress.h"
#include "ranks.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

const char *progname = "accelkit";
int verbose;
static void (*before_exit)(int);
static pthread_t abandoned;
static _Atomic int has_abandoned;

void
err_abandon_thread(pthread_t t)
{
	abandoned = t;
	has_abandoned = 1;
}

/* An error in a thread whose work the program no longer wants (a device start-up that
 * auto left behind) must neither print nor end the process: the thread sleeps until
 * the process ends. Unwinding it instead would run through the device runtime's frames. */
static void
abandoned_self_stops(void)
{
	if (has_abandoned && pthread_equal(pthread_self(), abandoned))
		for (;;)
			pause();
}

/* One error message a process: the first thread to die says it and exits; another
 * that dies meanwhile (a device thread's error beside the reader's) waits for that
 * exit, so that the user reads one line, the first. The same thread may die again
 * (in the exit hook, say) and goes on. Every die* and usage_error calls this first. */
static _Atomic int dying;
static pthread_t dier;

static void
die_once(void)
{
	int none = 0;
	abandoned_self_stops();
	if (atomic_compare_exchange_strong(&dying, &none, 1)) {
		dier = pthread_self();
		return;
	}
	if (pthread_equal(pthread_self(), dier))
		return;
	for (;;)
		pause();
}

void
err_before_exit(void (*fn)(int status))
{
	before_exit = fn;
}

/* Error exits skip the atexit handlers (quick_exit): another thread may be inside
 * CUDA or OpenCL, and their runtimes' teardown at exit can crash beneath it. What must
 * run (removing an unfinished -o file) is registered with at_quick_exit too. */
void
err_exit(int status)
{
	void (*fn)(int) = before_exit;
	before_exit = NULL;	/* once, even if the hook itself fails */
	if (fn != NULL)
		fn(status);
	quick_exit(status);
}

static void
vmsg(const char *place, const char *fmt, va_list ap)
{
	/* One write of the whole line, so messages of threads do not interleave. */
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "%s: %s", progname, place ? place : "");
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	int m = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	size_t len = m < 0 ? (size_t)n : MIN((size_t)n + (size_t)m, sizeof buf - 2);
	buf[len++] = '\n';
	fflush(stdout);
	progress_clear();
	fwrite(buf, 1, len, stderr);
}

void
warnmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void
vlog(const char *fmt, ...)
{
	va_list ap;
	if (!verbose)
		return;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void
die(const char *fmt, ...)
{
	die_once();
	va_list ap;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
	err_exit(1);
}

void
die_errno(const char *what)
{
	die_once();
	const char *e = strerror(errno);
	die("%s: %s", what, e);
}

void
die_at(const char *file, uint64_t line, const char *fmt, ...)
{
	die_once();
	char place[1100];
	va_list ap;
	snprintf(place, sizeof place, "%.1024s:%llu: ", file, (unsigned long long)line);
	va_start(ap, fmt);
	vmsg(place, fmt, ap);
	va_end(ap);
	err_exit(1);
}

void
die_off(const char *file, uint64_t off, const char *fmt, ...)
{
	die_once();
	char place[1100];
	va_list ap;
	snprintf(place, sizeof place, "%.1024s: byte %llu: ", file, (unsigned long long)off);
	va_start(ap, fmt);
	vmsg(place, fmt, ap);
	va_end(ap);
	err_exit(1);
}

void
usage_error(const char *fmt, ...)
{
	die_once();
	ranks_quiet_unless_first();	/* every rank parses the same options */
	va_list ap;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	err_exit(2);
}

size_t
mul_size(size_t a, size_t b, const char *what)
{
	size_t r;
	if (__builtin_mul_overflow(a, b, &r))
		die("%s: size overflow (%zu x %zu)", what, a, b);
	return r;
}

uint64_t
host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (q == NULL)
		die("out of memory (%zu bytes)", n);
	return q;
}

void *
xmallocarray(size_t n, size_t size)
{
	return xmalloc(mul_size(n, size, "allocation"));
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	return xrealloc(p, mul_size(n, size, "allocation"));
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

int
mem_limited(void)
{
	struct rlimit as, data;
	return (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) ||
	    (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY);
}

/* Whether a thread's stack (attr's size, else the default) no longer fits: glibc's
 * pthread_create says EAGAIN both for a stack it cannot map and for too many threads. */
static int
stack_unmappable(const pthread_attr_t *attr, size_t *size)
{
	pthread_attr_t def;
	*size = 0;
	if (attr != NULL)
		pthread_attr_getstacksize(attr, size);
	else if (pthread_getattr_default_np(&def) == 0) {
		pthread_attr_getstacksize(&def, size);
		pthread_attr_destroy(&def);
	}
	if (*size == 0)
		*size = 8 << 20;
	/* mapped as glibc maps a stack, so that the same limits and accounting apply;
	 * never touched, so no memory is used. glibc's mapping also holds a guard page and
	 * the thread's static TLS (every loaded library's: an OpenCL driver's can be large),
	 * hence the room beside it */
	size_t room = *size + ((size_t)4 << 20);
	void *p = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
	    -1, 0);
	if (p == MAP_FAILED)
		return errno == ENOMEM;
	munmap(p, room);
	return 0;
}

void
die_no_thread(int rc, const pthread_attr_t *attr)
{
	size_t size;
	/* under an address-space limit EAGAIN is memory even where the probe still fits:
	 * what glibc maps beside the stack, or another thread's allocation in between */
	if ((rc == EAGAIN || rc == ENOMEM) && (stack_unmappable(attr, &size) || mem_limited()))
		die("out of memory (a thread's stack, %zu bytes)", size);
	die("cannot start a thread: %s", strerror(rc));
}

/* Sanitizers intercept pthread_create to register each thread; an interposer of ours
 * would hide the threads from them (LeakSanitizer then reports what only a thread
 * holds as leaked), so their builds go without it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ERR_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ERR_SANITIZED 1
#endif

#ifndef ERR_SANITIZED
/* pthread_create for the whole process, libraries included (the executable's symbol
 * comes first): libgomp (gomp_fatal: "libgomp: Thread creation failed", exit 1) and
 * PoCL (PTHREAD_CHECK: abort) end the process themselves when a thread cannot start,
 * without our name; for them a failure ends here instead, as die_no_thread says.
 * Every other caller, ours included, gets the error back. */
typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int
pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static pthread_create_fn *_Atomic real;
	pthread_create_fn *f = real;
	if (f == NULL) {
		f = (pthread_create_fn *)dlsym(RTLD_NEXT, "pthread_create");
		if (f == NULL)
			return EAGAIN;
		real = f;
	}
	int rc = f(t, attr, fn, arg);
	Dl_info in;
	if (rc != 0 && dladdr(__builtin_return_address(0), &in) != 0 && in.dli_fname != NULL &&
	    (strstr(in.dli_fname, "libgomp") != NULL || strstr(in.dli_fname, "pocl") != NULL))
		die_no_thread(rc, attr);
	return rc;
}
#endif
