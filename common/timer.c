/* timer.c: see timer.h. */
#include "timer.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

#define MAX_PHASES 32

static struct {
	const char *name;
	double sec;
} phases[MAX_PHASES];
static int nphases;
static double t_first = -1;

double
now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void
phase_add(const char *name, double sec)
{
	int i;
	#pragma omp critical(accelkit_phases)
	{
		if (t_first < 0)
			t_first = now_sec() - sec;
		for (i = 0; i < nphases && strcmp(phases[i].name, name) != 0; i++)
			;
		if (i < MAX_PHASES) {
			if (i == nphases) {
				phases[i].name = name;
				phases[i].sec = 0;
				nphases++;
			}
			phases[i].sec += sec;
		}
	}
}

void
phases_report(void)
{
	if (!verbose)
		return;
	for (int i = 0; i < nphases; i++)
		vlog("time %-16s %10.3f ms", phases[i].name, 1e3 * phases[i].sec);
	if (t_first >= 0)
		vlog("time %-16s %10.3f ms", "wall", 1e3 * (now_sec() - t_first));
}
