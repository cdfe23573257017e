/* progress.c: the progress line of long runs (see progress.h). */
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "timer.h"

#define SHOW_AFTER 2.0		/* seconds: a short run shows nothing */
#define TICK_NS 250000000L	/* redraws a second on a terminal: 4 */
#define LOG_EVERY 10.0		/* --progress into a file or pipe: a line this often */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int started;		/* the drawing thread runs */
	int mode, stdout_used;
	const char *unit;	/* NULL: no count running */
	uint64_t total;
	double start, logged;
	int drawn;		/* a line is on the terminal */
	int tty;
} pg = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, PROGRESS_AUTO, 1,
	NULL, 0, 0, 0, 0, -1};
static _Atomic uint64_t done;

void
progress_mode(int mode, int stdout_used)
{
	pthread_mutex_lock(&pg.lock);
	pg.mode = mode;
	pg.stdout_used = stdout_used;
	pthread_mutex_unlock(&pg.lock);
}

/* Whether a count should be drawn at all. */
static int
wanted(void)
{
	if (pg.tty < 0)
		pg.tty = isatty(2);
	if (pg.mode == PROGRESS_OFF)
		return 0;
	if (pg.mode == PROGRESS_ON)
		return 1;
	return pg.tty && !(pg.stdout_used && isatty(1));
}

/* n with thousands separators into b. */
static const char *
grouped(char *b, size_t size, uint64_t n)
{
	char t[32];
	int len = snprintf(t, sizeof t, "%llu", (unsigned long long)n), o = 0;
	for (int i = 0; i < len && (size_t)o + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			b[o++] = ',';
		b[o++] = t[i];
	}
	b[o] = '\0';
	return b;
}

/* The line for the count now (lock held). */
static void
draw(double t)
{
	char line[256], a[32], b[32], r[32];
	uint64_t d = atomic_load_explicit(&done, memory_order_relaxed);
	if (pg.total > 0 && d > pg.total)
		d = pg.total;	/* a count that can only be estimated (docsim's GPU tiles) */
	double el = t - pg.start, rate = el > 0 ? (double)d / el : 0;
	int n;
	if (pg.total > 0) {
		n = snprintf(line, sizeof line, "%s: %s of %s %s (%.1f%%), %s %s/s", progname,
		    grouped(a, sizeof a, d), grouped(b, sizeof b, pg.total), pg.unit,
		    100.0 * (double)d / (double)pg.total, grouped(r, sizeof r, (uint64_t)rate),
		    pg.unit);
		if (rate > 0 && d < pg.total && n > 0 && (size_t)n < sizeof line) {
			long left = (long)((double)(pg.total - d) / rate + 0.5);
			if (left >= 3600)
				snprintf(line + n, sizeof line - (size_t)n, ", %ld:%02ld:%02ld left",
				    left / 3600, left / 60 % 60, left % 60);
			else
				snprintf(line + n, sizeof line - (size_t)n, ", %ld:%02ld left",
				    left / 60, left % 60);
		}
	} else {
		n = snprintf(line, sizeof line, "%s: %s %s, %s %s/s", progname,
		    grouped(a, sizeof a, d), pg.unit, grouped(r, sizeof r, (uint64_t)rate), pg.unit);
	}
	if (n < 0)
		return;
	if (pg.tty) {
		fprintf(stderr, "\r%s\033[K", line);
		pg.drawn = 1;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

static void
erase(void)
{
	if (pg.drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		pg.drawn = 0;
	}
}

static void *
ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pg.lock);
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TICK_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pg.wake, &pg.lock, &ts);
		double t = now_sec();
		if (pg.unit == NULL || t - pg.start < SHOW_AFTER)
			continue;
		if (!pg.tty && t - pg.logged < LOG_EVERY)
			continue;
		pg.logged = t;
		draw(t);
	}
	return NULL;
}

static void
at_exit_erase(void)
{
	progress_clear();
}

void
progress_begin(const char *unit, uint64_t total)
{
	pthread_mutex_lock(&pg.lock);
	if (!wanted()) {
		pthread_mutex_unlock(&pg.lock);
		return;
	}
	erase();
	pg.unit = unit;
	pg.total = total;
	pg.start = now_sec();
	pg.logged = pg.start + SHOW_AFTER - LOG_EVERY;
	atomic_store(&done, 0);
	if (!pg.started) {
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		/* no line is no failure: a run that cannot start the thread goes on without */
		if (pthread_create(&pg.thread, &at, ticker, NULL) == 0) {
			pg.started = 1;
			atexit(at_exit_erase);
			at_quick_exit(at_exit_erase);
		}
		pthread_attr_destroy(&at);
	}
	pthread_mutex_unlock(&pg.lock);
}

void
progress_add(uint64_t n)
{
	atomic_fetch_add_explicit(&done, n, memory_order_relaxed);
}

void
progress_set(uint64_t d)
{
	atomic_store_explicit(&done, d, memory_order_relaxed);
}

void
progress_end(void)
{
	pthread_mutex_lock(&pg.lock);
	pg.unit = NULL;
	erase();
	pthread_mutex_unlock(&pg.lock);
}

void
progress_clear(void)
{
	/* a message from the drawing thread's own stack never comes: it only prints */
	pthread_mutex_lock(&pg.lock);
	erase();
	pthread_mutex_unlock(&pg.lock);
}
