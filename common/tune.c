/* tune.c: device patterns of the tuning tables (see tune.h). */
#include "tune.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "err.h"

/* Whether the n bytes at w occur in desc, ignoring case. */
static int
has_word(const char *desc, const char *w, size_t n)
{
	for (const char *p = desc; *p != '\0'; p++)
		if (strncasecmp(p, w, n) == 0)
			return 1;
	return 0;
}

int
tune_match(const char *pattern, const char *desc)
{
	const char *p = pattern;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return 1;
		const char *w = p;
		while (*p != '\0' && !isspace((unsigned char)*p))
			p++;
		if (!has_word(desc, w, (size_t)(p - w)))
			return 0;
	}
}

size_t
tune_pick(const void *table, size_t n, size_t stride, const char *desc)
{
	for (size_t i = 0; i < n; i++) {
		const char *pattern = *(const char *const *)((const char *)table + i * stride);
		if (tune_match(pattern, desc))
			return i;
	}
	die("tuning table without a catch-all row: nothing matches \"%s\"", desc);
}

void
tune_describe_cuda(char *buf, size_t size, const char *name, int major, int minor)
{
	if (name == NULL)
		snprintf(buf, size, "cpu");
	else
		snprintf(buf, size, "gpu nvidia %s sm_%d%d", name, major, minor);
}

const char *
cost_model_illegal(const struct cost_model *m)
{
	if (m->unit != NULL && (!(m->cpu_rate > 0) || !(m->gpu_rate > 0) ||
	    !(m->cpu_fixed >= 0) || !(m->gpu_fixed >= 0)))
		return "a cost model needs rates above 0 and fixed costs of 0 or more";
	return NULL;
}

int
cost_pick_gpu(const struct cost_model *m, double work, int threads, double start_left)
{
	threads = MAX(threads, 1);
	double cpu = m->cpu_fixed + work / (m->cpu_rate * threads);
	double gpu = start_left + m->gpu_fixed + work / m->gpu_rate;
	const char *s = threads == 1 ? "" : "s";
	if (gpu < cpu)
		vlog("auto: gpu, estimated %.3g s (%.3g s start left, %.3g s set-up, %.3g %s) "
		    "against %.3g s on %d CPU thread%s", gpu, start_left, m->gpu_fixed, work, m->unit,
		    cpu, threads, s);
	else
		vlog("auto: cpu, estimated %.3g s on %d thread%s (%.3g %s) against %.3g s on the "
		    "GPU (%.3g s start left, %.3g s set-up)", cpu, threads, s, work, m->unit, gpu,
		    start_left, m->gpu_fixed);
	return gpu < cpu;
}
