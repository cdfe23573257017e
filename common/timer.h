/* timer.h: phase times for -v (progress.h has the progress line of long runs). */
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

#ifdef __cplusplus
}
#endif
#endif
