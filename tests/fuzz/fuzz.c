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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chunks.h"
#include "decompress.h"
#include "err.h"

int fuzz_pipe;
int fuzz_ended[2];

/* ---- what one run allocates ----
 * The sanitizers call these hooks on every malloc and free of any thread. During a
 * run, the allocations of every thread are kept, in an open-addressing set (linear
 * probing, deletion by backward shift, so it needs no malloc of its own), and frees
 * of any thread remove them (the engine's threads free and grow the chunks the
 * caller's thread allocated). What the engine holds when an error exit closes it
 * (chunks_close_all) it frees itself; what its threads made and handed to the caller
 * (docs.c's tokenised parts) is the caller's, left to the release after the exit.
 * Declared weak: without a sanitizer (the plain regression driver) there is no hook,
 * and what a failed run leaves is simply not freed. */
int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
    void (*)(const volatile void *)) __attribute__((weak));

#define SLOTS ((size_t)1 << 15)
static uintptr_t slot[SLOTS];
static size_t live;
static atomic_flag slot_lock = ATOMIC_FLAG_INIT;
static atomic_int tracking;		/* a run is on */
static _Thread_local int run_thread;	/* this thread is the one inside fuzz_call */

static void
lock(void)
{
	while (atomic_flag_test_and_set_explicit(&slot_lock, memory_order_acquire))
		;
}

static void
unlock(void)
{
	atomic_flag_clear_explicit(&slot_lock, memory_order_release);
}

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
	lock();
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
	unlock();
}

static void
untrack(const volatile void *vp)
{
	uintptr_t p = (uintptr_t)vp;
	if (!tracking || p == 0)
		return;
	lock();
	size_t i = slot_of(p);
	while (live > 0 && slot[i] != p) {
		if (slot[i] == 0) {
			unlock();
			return;		/* allocated before the run, or by another thread */
		}
		i = (i + 1) & (SLOTS - 1);
	}
	if (live == 0) {
		unlock();
		return;
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
	unlock();
}

/* After a run that exited: free what it left. After one that returned: forget it (what
 * is still allocated is a leak, for LeakSanitizer to report). No other thread runs. */
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
static FILE *real_stderr, *capture;	/* see capture_begin */
static char capbuf[16384];

static void *
idle(void *arg)
{
	pause();	/* a cancellation point: the thread ends in it */
	return arg;
}

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
	/* Threads: glibc gives a new thread's stack a TLS vector from malloc and keeps both
	 * in a cache for the next thread, and loads libgcc_s at the first cancellation
	 * (ord_close cancels a thread waiting for input). Threads started, cancelled and
	 * joined now leave stacks in the cache for the engine's two and the pipe's writer. */
	/* Their stacks small: ASan clears a thread's stack shadow when it starts and ends,
	 * 1 MiB of it for glibc's default 8 MiB stack, the most of a run's time. */
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 1 << 19) != 0 ||
	    pthread_setattr_default_np(&attr) != 0) {
		perror("fuzz: thread attributes");
		exit(1);
	}
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, idle, NULL) != 0) {
			perror("fuzz: pthread_create");
			exit(1);
		}
	for (int i = 0; i < 4; i++)
		pthread_cancel(t[i]);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* An unbuffered stream: stdio allocates no buffer for it in a run. */
	real_stderr = stderr;
	if ((memfd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0 ||
	    (capture = fmemopen(capbuf, sizeof capbuf, "w")) == NULL ||
	    setvbuf(capture, NULL, _IONBF, 0) != 0) {
		perror("fuzz: set-up");
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
	if (!run_thread) {
		/* An engine's thread: the readers promise errors come in the caller's. */
		static const char msg[] = "fuzz: an error exit in a thread of the reader's\n";
		write(2, msg, sizeof msg - 1);
		abort();
	}
	chunks_close_all();	/* with tracking on: what it frees is forgotten */
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
		run_thread = 1;
		tracking = 1;
		fn(arg);
	}
	tracking = 0;
	run_thread = 0;
	err_before_exit(NULL);
	release(exit_status != FUZZ_RETURNED);
	return exit_status;
}

/* ---- what a run says and hands out ----
 * While a reader runs, stdio's stderr is a stream into capbuf, so that fuzz_input can
 * compare what the runs with one and two threads say; the sanitizers write to file
 * descriptor 2 themselves, so their reports are not caught. */

static uint64_t digest;		/* fuzz_touch's, of this run */

static void
capture_begin(void)
{
	rewind(capture);
	stderr = capture;
}

/* The run's messages: capbuf[0..return) */
static size_t
capture_end(void)
{
	if (stderr != capture)
		return 0;
	fflush(capture);
	stderr = real_stderr;
	long n = ftell(capture);
	return n < 0 ? 0 : (size_t)n;
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

/* What one run did. */
struct run {
	int ended;
	uint64_t digest;
	char *said;		/* its messages (malloc'd) */
	size_t said_len;
};

/* With one thread, chunks of this size: an input of a size the fuzzers make is one
 * chunk, as with the default 1 MiB, which would cost ASan an mmap(2) per chunk. */
#define ONE_CHUNK (1 << 16)

/* Runs read on data from standard input: a regular file or (fuzz_pipe) a pipe;
 * with 1 thread, or with more and chunks of chunk_bytes bytes. */
static void
run_once(const uint8_t *data, size_t size, struct read_call *rc, int threads,
    size_t chunk_bytes, struct run *r)
{
	struct writer w;
	pthread_t thread;
	int threaded = 0;

	char v[32];
	snprintf(v, sizeof v, "%zu", threads > 1 ? chunk_bytes : (size_t)ONE_CHUNK);
	setenv("ACCELKIT_CHUNK_BYTES", v, 1);
	omp_set_num_threads(threads);
	if (fuzz_pipe)
		threaded = stdin_pipe(data, size, &w, &thread);
	else
		stdin_file(data, size);
	digest = 0;
	capture_begin();
	r->ended = fuzz_call(call_read, rc);
	r->said_len = capture_end();
	r->said = malloc(r->said_len + 1);
	memcpy(r->said, capbuf, r->said_len);
	r->said[r->said_len] = '\0';
	r->digest = digest;
	dup2(memfd, 0);		/* closes the pipe: a writer still going sees EPIPE */
	if (threaded)
		pthread_join(thread, NULL);
	omp_set_num_threads(1);
}

int
fuzz_input(const char *target, const uint8_t *data, size_t size,
    void (*read)(const char *path), int flags)
{
	static char name[64];
	struct read_call rc = {read};

	if (!(flags & FUZZ_STREAM) &&
	    unz_detect(data, MIN(size, (size_t)UNZ_MAGIC_MAX)) > UNZ_NONE)
		return -1;
	setup();
	for (fuzz_pipe = 0; fuzz_pipe < 2; fuzz_pipe++) {
		struct run one, two;
		snprintf(name, sizeof name, "%s[%s]", target, fuzz_pipe ? "pipe" : "file");
		progname = name;
		run_once(data, size, &rc, 1, 0, &one);
		fputs(one.said, stderr);
		fuzz_ended[fuzz_pipe] = one.ended;
		if (flags & (FUZZ_CHUNKS | FUZZ_SHARES)) {
			/* The input in 2 to 16 chunks (records longer than a chunk make
			 * fewer), as many for all inputs of one size: each chunk costs the
			 * threads' hand-overs. Shares: as many, their threads not started. */
			size_t chunk = MAX(size / (2 + size % 15), 1);
			int threads = flags & FUZZ_SHARES ? 2 + (int)(size % 15) : 2;
			run_once(data, size, &rc, threads, chunk, &two);
			int partial = (flags & FUZZ_STREAM) && one.ended != FUZZ_RETURNED;
			if (two.ended != one.ended || (two.digest != one.digest && !partial) ||
			    strcmp(two.said, one.said) != 0) {
				fprintf(stderr, "%s with %d threads and chunks of %zu bytes:\n%s",
				    name, threads, chunk, two.said);
				fuzz_fail(target, "with %d threads the reader %s than with 1 "
				    "(exit %d, not %d)", threads, two.ended != one.ended ?
				    "ended otherwise" : two.digest != one.digest ?
				    "handed out other bytes" : "said otherwise", two.ended,
				    one.ended);
			}
			free(two.said);
		}
		free(one.said);
	}
	fuzz_pipe = 0;
	return 0;
}

void
fuzz_fail(const char *target, const char *fmt, ...)
{
	va_list ap;
	size_t n = capture_end();	/* in a run: what it said so far, then this */
	fwrite(capbuf, 1, n, stderr);
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
	digest = digest * 0x100000001b3ull ^ h ^ n;
	return h;
}

int
fuzz_not_plain(const uint8_t *data, size_t size)
{
	return unz_detect(data, MIN(size, (size_t)UNZ_MAGIC_MAX)) > UNZ_NONE ||
	    (size >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0);
}
