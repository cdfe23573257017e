/* cli.h: the options every program shares, and one checked number parser.
 *
 * A program's option table starts with CLI_COMMON_LONG (plus CLI_PLATFORM_LONG and
 * CLI_MAXMEM_LONG where they apply), its short string with CLI_COMMON_SHORT, and the
 * default branch of its getopt switch calls cli_common(), which handles -h, -V, -v, -o,
 * -O, -d, -j, --list-devices, --progress, --platform, --max-device-mem and usage errors. */
#ifndef ACCELKIT_CLI_H
#define ACCELKIT_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum out_format { FMT_DEFAULT = -1, FMT_TEXT = 0, FMT_NPY = 1 };

struct common_opts {
	const char *output;		/* -o FILE, NULL for stdout */
	int out_format;			/* -O: FMT_DEFAULT until given */
	const char *device;		/* -d, else $ACCELKIT_DEVICE, else "auto" (after cli_finish) */
	const char *platform;		/* --platform TEXT (OpenCL programs) */
	int threads;			/* -j N, 0 = every core */
	int list_devices;		/* --list-devices */
	int progress;			/* --progress: the progress line wherever stderr goes */
	size_t max_device_mem;		/* --max-device-mem BYTES, 0 = what the device has */
};

/* Long-only options get codes from here up; a program's own start at CLI_OPT_PROG. */
enum { OPT_LIST_DEVICES = 0x1000, OPT_PLATFORM, OPT_MAX_DEVICE_MEM, OPT_PROGRESS,
	CLI_OPT_PROG = 0x1100 };

#define CLI_COMMON_SHORT "hVvo:O:d:j:"
#define CLI_COMMON_LONG                                              \
	{"help", no_argument, NULL, 'h'},                            \
	{"version", no_argument, NULL, 'V'},                         \
	{"verbose", no_argument, NULL, 'v'},                         \
	{"output", required_argument, NULL, 'o'},                    \
	{"output-format", required_argument, NULL, 'O'},             \
	{"device", required_argument, NULL, 'd'},                    \
	{"threads", required_argument, NULL, 'j'},                   \
	{"list-devices", no_argument, NULL, OPT_LIST_DEVICES},       \
	{"progress", no_argument, NULL, OPT_PROGRESS}
#define CLI_PLATFORM_LONG {"platform", required_argument, NULL, OPT_PLATFORM}
#define CLI_MAXMEM_LONG {"max-device-mem", required_argument, NULL, OPT_MAX_DEVICE_MEM}

/* First thing in main: sets progname (and argv[0], so getopt's own messages use it),
 * the C locale for numbers, and the default SIGPIPE action (a closed pipe ends quietly). */
void cli_init(int argc, char **argv, struct common_opts *co);

/* Handles a common option; any other code is a usage error. usage() prints the
 * program's synopsis and options to the stream it is given. */
void cli_common(int c, const char *arg, struct common_opts *co, void (*usage)(FILE *));

/* After the getopt loop: fills co->device from the environment and sets the progress
 * line's mode (progress.h). */
void cli_finish(struct common_opts *co);

/* The output format to use: -O if given, else NPY when path ends in .npy, else text. */
int cli_out_format(const struct common_opts *co, const char *path);

/* Checked number parsers: the whole string must be a number in [min, max], else a
 * usage error naming the option ("--top"), exit 2. */
long long cli_int(const char *opt, const char *s, long long min, long long max);
double cli_double(const char *opt, const char *s, double min, double max);
/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
size_t cli_size(const char *opt, const char *s);
/* The index of s in the NULL-terminated list, else a usage error listing them. */
int cli_choice(const char *opt, const char *s, const char *const *choices);

/* An environment switch: 0 or 1, dflt when unset or empty, else an error naming it
 * (exit 1). */
int cli_env_switch(const char *name, int dflt);

/* Number of threads the CPU paths use (-j, else OpenMP's default). */
int cli_threads(void);

#ifdef __cplusplus
}
#endif
#endif
