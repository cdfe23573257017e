/* err.c: diagnostics and checked allocation (see err.h). */
#include "err.h"
#include "ranks.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	abandoned_self_stops();
	va_list ap;
	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
	err_exit(1);
}

void
die_errno(const char *what)
{
	abandoned_self_stops();
	const char *e = strerror(errno);
	die("%s: %s", what, e);
}

void
die_at(const char *file, uint64_t line, const char *fmt, ...)
{
	abandoned_self_stops();
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
	abandoned_self_stops();
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
	abandoned_self_stops();
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
