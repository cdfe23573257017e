/* err.h: the one family of diagnostics. Every message goes to stderr as
 *   prog: message
 *   prog: FILE:LINE: message          (text input)
 *   prog: FILE: byte N: message       (binary input)
 * die* exit 1 (bad input, I/O, device); usage_error exits 2 with "Try 'prog --help'". */
#ifndef ACCELKIT_ERR_H
#define ACCELKIT_ERR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#else
#define PRINTF_LIKE(f, a)
#define NORETURN
#endif

extern const char *progname;

void warnmsg(const char *fmt, ...) PRINTF_LIKE(1, 2);
void die(const char *fmt, ...) PRINTF_LIKE(1, 2) NORETURN;
void die_errno(const char *what) NORETURN;	/* "prog: what: strerror(errno)" */
void die_at(const char *file, uint64_t line, const char *fmt, ...) PRINTF_LIKE(3, 4) NORETURN;
void die_off(const char *file, uint64_t off, const char *fmt, ...) PRINTF_LIKE(3, 4) NORETURN;
void usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2) NORETURN;

/* A function that die*, usage_error and err_exit call before exiting, with the exit
 * status: cudadev.c uses it so that an error exit waits for a device start-up still
 * running in another thread, instead of tearing CUDA down beneath it; the fuzz harness
 * (tests/fuzz/) to return to itself instead. One hook; NULL removes it. */
void err_before_exit(void (*fn)(int status));

/* Ends the program as die* and usage_error do, after their messages: the hook above,
 * then quick_exit(status) (no atexit handlers; see err.c). For every exit of the
 * library, --help and --version included, so that all of them pass the hook. */
void err_exit(int status) NORETURN;

/* From now on, die* or usage_error called in thread t print nothing and stop that
 * thread alone (it sleeps until the process ends): for a device start-up that the program
 * no longer waits for (cuda_decide). */
void err_abandon_thread(pthread_t t);

/* -v output: "prog: message" on stderr, only when verbose is set. */
extern int verbose;
void vlog(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* Checked allocation: sizes multiply with overflow checks; dies on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xmallocarray(size_t n, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* a*b, dying with "what: size overflow" when it does not fit in size_t */
size_t mul_size(size_t a, size_t b, const char *what);
/* The host's physical memory in bytes (0 when unknown): the bound for sizes that a
 * header declares but the data need not back (MatrixMarket's rows). */
uint64_t host_memory(void);

/* A failed pthread_create (its return value and attributes): "out of memory (a
 * thread's stack, N bytes)" when the stack no longer fits, else "cannot start a
 * thread: REASON"; exit 1. err.c also wraps pthread_create so that libraries which end
 * the process on such a failure (libgomp, PoCL) end it with this message instead. */
void die_no_thread(int rc, const pthread_attr_t *attr) NORETURN;
/* Whether an address-space or data-size limit (ulimit -v, -d) is in force. */
int mem_limited(void);

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#ifdef __cplusplus
}
#endif
#endif
