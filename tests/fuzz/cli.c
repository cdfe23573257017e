/* cli.c: option parsing (common/cli.h) as every program does it: getopt_long over a
 * table of the common options and some of each checked parser's kind, cli_common in
 * the default branch, then cli_finish and cli_out_format. The input is the argument
 * list, one argument a line. Each value a checked parser accepts is compared with a
 * reference written from cli.h's promises, and each it refuses must be refused by the
 * reference too. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "fuzz.h"

#define MAXARGS 64

enum { OPT_SEED = CLI_OPT_PROG, OPT_BAND, OPT_SCALE, OPT_CHUNK };

/* What the parser now running is expected to do: refuse (ok = 0), or return value. */
static struct {
	int active, ok;
} expect;

static void
usage(FILE *f)
{
	fputs("usage: cli [-hVv] [-k N] [-t X] [-p P] [--chunk BYTES] [FILE ...]\n", f);
}

/* Reference: optional blanks and sign, then decimal digits to the end, in [min, max]. */
static int
ref_int(const char *s, long long min, long long max, long long *v)
{
	__int128 x = 0;
	int neg = 0;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++)
		if ((x = x * 10 + (*s - '0')) > (__int128)1 << 64)
			return 0;
	if (*s != '\0')
		return 0;
	x = neg ? -x : x;
	if (x < min || x > max)
		return 0;
	*v = (long long)x;
	return 1;
}

/* Reference: a count of bytes, so never negative: optional blanks and '+', digits, an
 * optional K/M/G/T (with an optional 'i'), an optional 'B'; the product fits size_t. */
static int
ref_size(const char *s, size_t *v)
{
	unsigned __int128 x = 0, mult = 1;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++)
		if ((x = x * 10 + (unsigned)(*s - '0')) > (unsigned __int128)1 << 64)
			return 0;
	const char *units = "kmgt", *u = *s ? strchr(units, tolower((unsigned char)*s)) : NULL;
	if (u != NULL) {
		mult = (unsigned __int128)1 << (10 * (u - units + 1));
		if (*++s == 'i')
			s++;
	}
	if (*s == 'B')
		s++;
	if (*s != '\0' || x * mult > SIZE_MAX)
		return 0;
	*v = (size_t)(x * mult);
	return 1;
}

static void
check_int(const char *opt, const char *s, long long min, long long max)
{
	long long want = 0;
	expect.ok = ref_int(s, min, max, &want);
	expect.active = 1;
	long long v = cli_int(opt, s, min, max);
	expect.active = 0;
	FUZZ_ASSERT("cli", expect.ok && v == want);
}

static void
check_double(const char *opt, const char *s, double min, double max)
{
	/* strtod's language is not restated here, only what cli.h adds: the whole string,
	 * not NaN, in [min, max]; a number too large for a double (strtod's HUGE_VAL with
	 * ERANGE) is not in any range, one too small is its nearest double, 0 or not */
	char *end;
	errno = 0;
	double want = strtod(s, &end);
	expect.ok = end != s && *end == '\0' && !isnan(want) && want >= min && want <= max &&
	    !(errno == ERANGE && isinf(want));
	expect.active = 1;
	double v = cli_double(opt, s, min, max);
	expect.active = 0;
	FUZZ_ASSERT("cli", expect.ok && v == want);
}

static void
check_size(const char *opt, const char *s)
{
	size_t want = 0;
	expect.ok = ref_size(s, &want);
	expect.active = 1;
	size_t v = cli_size(opt, s);
	expect.active = 0;
	FUZZ_ASSERT("cli", expect.ok && v == want);
}

static void
check_choice(const char *opt, const char *s, const char *const *choices)
{
	expect.ok = 0;
	for (int i = 0; choices[i] != NULL; i++)
		expect.ok |= strcmp(s, choices[i]) == 0;
	expect.active = 1;
	int i = cli_choice(opt, s, choices);
	expect.active = 0;
	FUZZ_ASSERT("cli", expect.ok && strcmp(s, choices[i]) == 0);
}

struct args {
	int argc;
	char **argv;
};

static void
parse(void *arg)
{
	struct args *a = arg;
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_PLATFORM_LONG,
		CLI_MAXMEM_LONG,
		{"top", required_argument, NULL, 'k'},
		{"tol", required_argument, NULL, 't'},
		{"precision", required_argument, NULL, 'p'},
		{"seed", required_argument, NULL, OPT_SEED},
		{"band", required_argument, NULL, OPT_BAND},
		{"scale", required_argument, NULL, OPT_SCALE},
		{"chunk", required_argument, NULL, OPT_CHUNK},
		{NULL, 0, NULL, 0},
	};
	static const char *const precisions[] = {"float32", "tf32", "fp16", NULL};
	struct common_opts co;
	size_t maxmem = 0;
	int c;

	cli_init(a->argc, a->argv, &co);
	optind = 0;		/* glibc: start over, forgetting the last argument list */
	while ((c = getopt_long(a->argc, a->argv, CLI_COMMON_SHORT "k:t:p:", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'k':
			check_int("--top", optarg, 1, 1000000);
			break;
		case OPT_SEED:
			check_int("--seed", optarg, 0, LLONG_MAX);
			break;
		case OPT_BAND:
			check_int("--band", optarg, LLONG_MIN, -1);
			break;
		case 't':
			check_double("--tol", optarg, 0, 1);
			break;
		case OPT_SCALE:
			check_double("--scale", optarg, -HUGE_VAL, HUGE_VAL);
			break;
		case 'p':
			check_choice("--precision", optarg, precisions);
			break;
		case OPT_CHUNK:
			check_size("--chunk", optarg);
			break;
		case OPT_MAX_DEVICE_MEM:
			/* cli_common adds: more than 0 */
			expect.ok = ref_size(optarg, &maxmem) && maxmem > 0;
			expect.active = 1;
			cli_common(c, optarg, &co, usage);
			expect.active = 0;
			FUZZ_ASSERT("cli", expect.ok && co.max_device_mem == maxmem);
			break;
		default:
			cli_common(c, optarg, &co, usage);
			FUZZ_ASSERT("cli", co.out_format >= FMT_DEFAULT && co.out_format <= FMT_NPY);
			FUZZ_ASSERT("cli", co.threads >= 0 && co.threads <= 4096);
			break;
		}
	}
	cli_finish(&co);
	FUZZ_ASSERT("cli", co.device != NULL);
	int fmt = cli_out_format(&co, co.output);
	size_t n = co.output ? strlen(co.output) : 0;
	int npy = n >= 4 && strcasecmp(co.output + n - 4, ".npy") == 0;
	FUZZ_ASSERT("cli", fmt == (co.out_format != FMT_DEFAULT ? co.out_format :
	    npy ? FMT_NPY : FMT_TEXT));
	for (int i = optind; i < a->argc; i++)
		fuzz_touch(a->argv[i], strlen(a->argv[i]));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *argv[MAXARGS + 2];
	struct args a = {1, argv};

	memcpy(text, data, size);
	text[size] = '\0';
	argv[0] = "cli";
	for (char *p = text; a.argc <= MAXARGS;) {
		argv[a.argc++] = p;
		if ((p = strchr(p, '\n')) == NULL)
			break;
		*p++ = '\0';
	}
	argv[a.argc] = NULL;
	expect.active = 0;
	int status = fuzz_call(parse, &a);
	/* A checked parser that refuses ends in a usage error, and one that accepts
	 * returns; --help and --version exit 0, an unknown option or a missing argument
	 * 2; nothing in option parsing is an error of status 1. */
	if (expect.active)
		FUZZ_ASSERT("cli", expect.ok ? status == FUZZ_RETURNED : status == 2);
	FUZZ_ASSERT("cli", status == FUZZ_RETURNED || status == 0 || status == 2);
	omp_set_num_threads(1);		/* -j changed it */
	free(text);
	return 0;
}
