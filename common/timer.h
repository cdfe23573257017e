/* timer.h: phase times for -v, and a progress line for long runs on a terminal. */
#ifndef ACCELKIT_TIMER_H
#define ACCELKIT_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The phases every program reports; programs may add their own names. */
#define PH_READ "read"
#define PH_H2D "host-to-device"
#define PH_COMPUTE "compute"
#define PH_D2H "device-to-host"
#define PH_WRITE "write"

double now_sec(void);		/* monotonic clock, seconds */
/* Adds sec to the named phase (a string that lives as long as the program). */
void phase_add(const char *name, double sec);
/* With -v: one line a phase in the order first added, then the wall time since
 * the first phase began. */
void phases_report(void);

/* A progress line on stderr, only when stderr is a terminal and the run has taken
 * over two seconds; progress_end clears it. */
struct progress {
	const char *what;
	double start, last;
	int shown;
};
void progress_begin(struct progress *p, const char *what);
void progress_update(struct progress *p, uint64_t done, uint64_t total);
void progress_end(struct progress *p);

#ifdef __cplusplus
}
#endif
#endif
