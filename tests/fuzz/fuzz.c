/* fuzz.c: the harness layer of the fuzz targets (see fuzz.h). */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <omp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "err.h"

int fuzz_pipe;
int fuzz_ended[2];

/* ---- what one run allocates ----
 * The sanitizers call these hooks on every malloc and free of any thread; only the
 * allocations of the thread inside fuzz_call are kept, in an open-addressing set
 * (linear probing, deletion by backward shift, so it needs no malloc of its own).
 * Declared weak: without a sanitizer (the plain regression driver) there is no hook,
 * and what a failed run leaves is simply not freed. */
int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
    void (*)(const volatile void *)) __attribute__((weak));

#define SLOTS ((size_t)1 << 15)
static uintptr_t slot[SLOTS];
static size_t live;
static _Thread_local int tracking;

static size_t
slot_of(uintptr_t p)
{
	return (size_t)(((uint64_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 49) & (SLOTS - 1);
}

static void
track(const volatile void *vp, size_t size)
{
	uintptr_t p = (uintptr_t)vp;
	(void)size;
	if (!tracking || p == 0)
		return;
	if (live >= SLOTS / 4 * 3) {
		static const char msg[] = "fuzz: more live allocations than the harness tracks\n";
		write(2, msg, sizeof msg - 1);
		abort();
	}
	size_t i = slot_of(p);
	while (slot[i] != 0)
		i = (i + 1) & (SLOTS - 1);
	slot[i] = p;
	live++;
}

static void
untrack(const volatile void *vp)
{
	uintptr_t p = (uintptr_t)vp;
	if (!tracking || p == 0 || live == 0)
		return;
	size_t i = slot_of(p);
	while (slot[i] != p) {
		if (slot[i] == 0)
			return;		/* allocated before the run */
		i = (i + 1) & (SLOTS - 1);
	}
	/* Entries after the hole move back unless their home lies cyclically in (i, j]. */
	for (size_t j = i;;) {
		j = (j + 1) & (SLOTS - 1);
		if (slot[j] == 0)
			break;
		size_t home = slot_of(slot[j]);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		slot[i] = slot[j];
		i = j;
	}
	slot[i] = 0;
	live--;
}

/* After a run that exited: free what it left. After one that returned: forget it (what
 * is still allocated is a leak, for LeakSanitizer to report). */
static void
release(int do_free)
{
	for (size_t i = 0; live > 0 && i < SLOTS; i++)
		if (slot[i] != 0) {
			if (do_free)
				free((void *)slot[i]);
			slot[i] = 0;
			live--;
		}
}

/* ---- set-up, once ---- */

static int memfd = -1;

static void
setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	/* Whatever the libraries allocate once and keep must be allocated before the first
	 * run, or a failed run would free it: OpenMP's state, stdout's buffer, the locale. */
	omp_set_num_threads(1);
	(void)omp_get_max_threads();
	static char outbuf[BUFSIZ];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	setlocale(LC_ALL, "C");
	signal(SIGPIPE, SIG_IGN);	/* the pipe's writer sees EPIPE when the reader stops */
	if ((memfd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0) {
		perror("fuzz: memfd_create");
		exit(1);
	}
	if (__sanitizer_install_malloc_and_free_hooks != NULL)
		__sanitizer_install_malloc_and_free_hooks(track, untrack);
}

/* ---- running a function that may exit ---- */

static jmp_buf back;
static volatile int exit_status;

static void
err_jump(int status)
{
	exit_status = status;
	longjmp(back, 1);
}

int
fuzz_call(void (*fn)(void *), void *arg)
{
	setup();
	exit_status = FUZZ_RETURNED;
	if (setjmp(back) == 0) {
		err_before_exit(err_jump);
		tracking = 1;
		fn(arg);
	}
	tracking = 0;
	err_before_exit(NULL);
	release(exit_status != FUZZ_RETURNED);
	return exit_status;
}

/* ---- standard input: a regular file, or a pipe ---- */

static void
write_all(int fd, const uint8_t *p, size_t n, off_t off)
{
	while (n > 0) {
		ssize_t w = off >= 0 ? pwrite(fd, p, n, off) : write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				return;		/* the reader stopped early */
			perror("fuzz: writing the input");
			abort();
		}
		p += w;
		n -= (size_t)w;
		if (off >= 0)
			off += w;
	}
}

static void
stdin_file(const uint8_t *data, size_t size)
{
	if (ftruncate(memfd, 0) != 0 || dup2(memfd, 0) < 0) {
		perror("fuzz: standard input");
		abort();
	}
	write_all(memfd, data, size, 0);
	lseek(0, 0, SEEK_SET);
}

struct writer {
	int fd;
	const uint8_t *data;
	size_t size;
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	write_all(w->fd, w->data, w->size, -1);
	close(w->fd);
	return NULL;
}

/* Inputs that fit the pipe are written at once; larger ones by a thread, which
 * returns *thread to be joined (after standard input is closed). */
static int
stdin_pipe(const uint8_t *data, size_t size, struct writer *w, pthread_t *thread)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		perror("fuzz: pipe");
		abort();
	}
	int cap = fcntl(p[1], F_SETPIPE_SZ, size < ((size_t)1 << 20) ? (int)size : 1 << 20);
	if (cap < 0)
		cap = fcntl(p[1], F_GETPIPE_SZ);
	dup2(p[0], 0);
	close(p[0]);
	if (cap >= 0 && size <= (size_t)cap) {
		write_all(p[1], data, size, -1);
		close(p[1]);
		return 0;
	}
	*w = (struct writer){p[1], data, size};
	if (pthread_create(thread, NULL, writer_main, w) != 0) {
		perror("fuzz: pthread_create");
		abort();
	}
	return 1;
}

struct read_call {
	void (*read)(const char *path);
};

static void
call_read(void *arg)
{
	((struct read_call *)arg)->read("-");
}

int
fuzz_input(const char *target, const uint8_t *data, size_t size,
    void (*read)(const char *path))
{
	static char name[64];
	struct read_call rc = {read};

	setup();
	for (fuzz_pipe = 0; fuzz_pipe < 2; fuzz_pipe++) {
		struct writer w;
		pthread_t thread;
		int threaded = 0;
		snprintf(name, sizeof name, "%s[%s]", target, fuzz_pipe ? "pipe" : "file");
		progname = name;
		if (fuzz_pipe)
			threaded = stdin_pipe(data, size, &w, &thread);
		else
			stdin_file(data, size);
		fuzz_ended[fuzz_pipe] = fuzz_call(call_read, &rc);
		dup2(memfd, 0);		/* closes the pipe: a writer still going sees EPIPE */
		if (threaded)
			pthread_join(thread, NULL);
	}
	fuzz_pipe = 0;
	return 0;
}

void
fuzz_fail(const char *target, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: property violated: ", target);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

unsigned
fuzz_touch(const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * 31 + b[i];
	return h;
}
