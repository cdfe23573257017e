/* cli.c: shared option handling and checked number parsing (see cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output.h"
#include "progress.h"
#include "ranks.h"

void
cli_init(int argc, char **argv, struct common_opts *co)
{
	(void)argc;
	if (argv[0] != NULL && argv[0][0] != '\0') {
		const char *slash = strrchr(argv[0], '/');
		progname = slash ? slash + 1 : argv[0];
		argv[0] = (char *)progname;
	}
	setlocale(LC_ALL, "C");
	signal(SIGPIPE, SIG_DFL);
	memset(co, 0, sizeof *co);
	co->out_format = FMT_DEFAULT;
	/* Under mpirun every rank parses the same options: rank 0 alone names a bad one. */
	opterr = ranks_launch_rank() == 0;
}

static void
print_version(void)
{
	printf("%s (accelkit) %s\n", progname, ACCELKIT_VERSION);
}

void
cli_common(int c, const char *arg, struct common_opts *co, void (*usage)(FILE *))
{
	static const char *const formats[] = {"text", "npy", NULL};

	switch (c) {
	case 'h':
		usage(stdout);
		stdout_finish();
		err_exit(0);
	case 'V':
		print_version();
		stdout_finish();
		err_exit(0);
	case 'v':
		verbose = 1;
		break;
	case 'o':
		co->output = arg;
		break;
	case 'O':
		co->out_format = cli_choice("--output-format", arg, formats);
		break;
	case 'd':
		co->device = arg;
		break;
	case 'j':
		co->threads = (int)cli_int("--threads", arg, 1, 4096);
		omp_set_num_threads(co->threads);
		break;
	case OPT_LIST_DEVICES:
		co->list_devices = 1;
		break;
	case OPT_PROGRESS:
		co->progress = 1;
		break;
	case OPT_PLATFORM:
		co->platform = arg;
		break;
	case OPT_MAX_DEVICE_MEM:
		co->max_device_mem = cli_size("--max-device-mem", arg);
		if (co->max_device_mem == 0)
			usage_error("invalid value for --max-device-mem: '%s' (must be positive)", arg);
		break;
	default:
		/* getopt already named the unknown option or the missing argument
		 * (on rank 0 alone: cli_init). */
		ranks_quiet_unless_first();
		fprintf(stderr, "Try '%s --help' for more information.\n", progname);
		err_exit(2);
	}
}

void
cli_finish(struct common_opts *co)
{
	if (co->device == NULL) {
		const char *env = getenv("ACCELKIT_DEVICE");
		co->device = env && *env ? env : "auto";
	}
	/* under mpirun only rank 0 draws it (every rank would draw over it) */
	progress_mode(ranks_rank() != 0 ? PROGRESS_OFF : co->progress ? PROGRESS_ON :
	    PROGRESS_AUTO, co->output == NULL);
	ranks_refuse_undivided();	/* mpirun -np 2 of a program that would not divide */
}

int
cli_out_format(const struct common_opts *co, const char *path)
{
	if (co->out_format != FMT_DEFAULT)
		return co->out_format;
	if (path != NULL) {
		size_t n = strlen(path);
		if (n >= 4 && strcasecmp(path + n - 4, ".npy") == 0)
			return FMT_NPY;
	}
	return FMT_TEXT;
}

long long
cli_int(const char *opt, const char *s, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE || v < min || v > max)
		usage_error("invalid value for %s: '%s' (expected an integer from %lld to %lld)",
		    opt, s, min, max);
	return v;
}

int
cli_env_switch(const char *name, int dflt)
{
	const char *v = getenv(name);
	if (v == NULL || *v == '\0')
		return dflt;
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
		die("%s must be 0 or 1, not '%s'", name, v);
	return v[0] == '1';
}

double
cli_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* ERANGE with a finite result is underflow: the nearest double (0 or subnormal) is
	 * the value, like any rounded one; only overflow (HUGE_VAL) is out of range. */
	if (end == s || *end != '\0' || (errno == ERANGE && isinf(v)) || isnan(v) || v < min ||
	    v > max)
		usage_error("invalid value for %s: '%s' (expected a number from %g to %g)",
		    opt, s, min, max);
	return v;
}

size_t
cli_size(const char *opt, const char *s)
{
	char *end;
	const char *p = s;
	unsigned long long v, mult = 1;

	/* strtoull skips blanks and takes a minus sign, negating: " -5" is 2^64 - 5 */
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-')
		goto bad;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (end == p || errno == ERANGE)
		goto bad;
	switch (*end) {
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	case 't': case 'T': mult = 1ULL << 40; end++; break;
	}
	if (mult > 1 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0' || v > (unsigned long long)SIZE_MAX / mult)
		goto bad;
	return (size_t)(v * mult);
bad:
	usage_error("invalid value for %s: '%s' (expected a byte count such as 512M or 2G)",
	    opt, s);
}

int
cli_choice(const char *opt, const char *s, const char *const *choices)
{
	char list[512] = "";
	size_t used = 0;

	for (int i = 0; choices[i] != NULL; i++)
		if (strcmp(s, choices[i]) == 0)
			return i;
	for (int i = 0; choices[i] != NULL && used < sizeof list; i++)
		used += snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
	usage_error("invalid value for %s: '%s' (expected one of: %s)", opt, s, list);
}

int
cli_threads(void)
{
	return omp_get_max_threads();
}
