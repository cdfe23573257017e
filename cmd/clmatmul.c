/* clmatmul: C = alpha op(A) op(B) + beta C0 on an OpenCL device (GPU, or CPU through
 * PoCL), in blocks when the matrices do not fit its memory, or on the host without
 * OpenCL (-d cpu, small work on auto). Options, reading and writing; the run is
 * decided and dispatched in kernels/clmatmul_run.c. See clmatmul(1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clmatmul_run.h"
#include "dense.h"
#include "err.h"
#include "input.h"
#include "opencl.h"
#include "output.h"
#include "table.h"
#include "timer.h"

enum {
	OPT_TA = CLI_OPT_PROG, OPT_TB, OPT_ALPHA, OPT_BETA, OPT_DOUBLE, OPT_VERIFY, OPT_BENCH,
	OPT_REPEAT, OPT_SEED, OPT_TILE, OPT_TILE_K, OPT_ITEM, OPT_VECTOR, OPT_LOAD_VECTOR,
	OPT_PATCH, OPT_BAND, OPT_UNROLL, OPT_STAGING, OPT_MAX_REGS, OPT_TRANSFERS, OPT_PRECISION,
	OPT_HEADER
};

static const struct option longopts[] = {
	CLI_COMMON_LONG,
	CLI_PLATFORM_LONG,
	CLI_MAXMEM_LONG,
	{"transpose-a", no_argument, NULL, OPT_TA},
	{"transpose-b", no_argument, NULL, OPT_TB},
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"beta", required_argument, NULL, OPT_BETA},
	{"c0", required_argument, NULL, 'c'},
	{"double", no_argument, NULL, OPT_DOUBLE},
	{"precision", required_argument, NULL, OPT_PRECISION},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{"bench", required_argument, NULL, OPT_BENCH},
	{"repeat", required_argument, NULL, OPT_REPEAT},
	{"seed", required_argument, NULL, OPT_SEED},
	{"tile", required_argument, NULL, OPT_TILE},
	{"tile-k", required_argument, NULL, OPT_TILE_K},
	{"item", required_argument, NULL, OPT_ITEM},
	{"vector", required_argument, NULL, OPT_VECTOR},
	{"load-vector", required_argument, NULL, OPT_LOAD_VECTOR},
	{"patch", required_argument, NULL, OPT_PATCH},
	{"band", required_argument, NULL, OPT_BAND},
	{"unroll", required_argument, NULL, OPT_UNROLL},
	{"staging", required_argument, NULL, OPT_STAGING},
	{"max-regs", required_argument, NULL, OPT_MAX_REGS},
	{"transfers", required_argument, NULL, OPT_TRANSFERS},
	{"header", optional_argument, NULL, OPT_HEADER},
	{NULL, 0, NULL, 0},
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: clmatmul [options] A B\n"
	    "       clmatmul --bench M[xNxK] [options]\n"
	    "C = alpha op(A) op(B) + beta C0 on an OpenCL device, written to standard output.\n"
	    "  --transpose-a, --transpose-b  op(A) = A^T, op(B) = B^T\n"
	    "  --alpha X                    scale of the product (1)\n"
	    "  -c, --c0 FILE                add beta C0 (C0 read like A)\n"
	    "  --beta X                     scale of C0 (1 with -c, else 0)\n"
	    "  --header[=N]                 text matrices begin with N header lines (1)\n"
	    "  --double                     compute in float64 (needs cl_khr_fp64)\n"
	    "  --precision fp32|tf32        tf32: NVIDIA's tensor cores, inputs rounded to\n"
	    "                               10-bit mantissas (fp32, the default: float32)\n"
	    "  --verify                     check C against a float64 reference on the host\n"
	    "  --bench M[xNxK]              time random matrices made on the device; GFLOP/s\n"
	    "  --repeat N                   timed runs of --bench (10)\n"
	    "  --seed N                     seed of --bench's matrices and --verify (1)\n"
	    "  --max-device-mem BYTES       multiply in blocks above this bound\n"
	    "  --transfers auto|rect|packed how blocks travel (auto: rectangles where correct)\n"
	    "  --tile T|MxN, --tile-k K, --item R|RxC, --vector W|WMxWN, --load-vector W,\n"
	    "  --patch RxC, --band G, --unroll U, --staging local|direct|async|wgmma,\n"
	    "  --max-regs N                 force kernel parameters\n"
	    "  -d, --device SPEC            auto, cpu (the host, no OpenCL), cpu:N, gpu, gpu:N\n"
	    "                               or P:D ($ACCELKIT_DEVICE); several: gpu:all,\n"
	    "                               cpu:all, gpu:0,1, 0:0,0:1\n"
	    "  --platform TEXT              only platforms whose name contains TEXT\n"
	    "  --list-devices               list the OpenCL devices and exit\n"
	    "  -o, --output FILE            write C to FILE\n"
	    "  -O, --output-format FMT      text or npy\n"
	    "  -j, --threads N              host threads (reading, --verify)\n"
	    "  -v, --verbose                device, kernel parameters, plan and phase times\n"
	    "      --progress               a progress line on stderr (a terminal's, by default)\n"
	    "  -h, --help                   this help\n"
	    "  -V, --version                the version\n");
}

/* "A" or "AxB" (both from 1 to max) for option opt; "A" sets both. */
static void
parse_pair(const char *opt, const char *s, int max, int *a, int *b)
{
	char buf[64];
	if (strlen(s) >= sizeof buf)
		usage_error("invalid value for %s: '%s'", opt, s);
	strcpy(buf, s);
	char *x = strchr(buf, 'x');
	if (x != NULL)
		*x++ = '\0';
	*a = (int)cli_int(opt, buf, 1, max);
	*b = x != NULL ? (int)cli_int(opt, x, 1, max) : *a;
}

/* --bench M or MxNxK */
static void
parse_shape(const char *s, size_t *m, size_t *n, size_t *k)
{
	char buf[96];
	long long v[3];
	int nv = 0;
	if (strlen(s) >= sizeof buf)
		usage_error("invalid value for --bench: '%s'", s);
	strcpy(buf, s);
	for (char *tok = strtok(buf, "x"); tok != NULL; tok = strtok(NULL, "x")) {
		if (nv == 3)
			usage_error("invalid value for --bench: '%s' (expected N or MxNxK)", s);
		v[nv++] = cli_int("--bench", tok, 1, 1LL << 30);
	}
	if (nv != 1 && nv != 3)
		usage_error("invalid value for --bench: '%s' (expected N or MxNxK)", s);
	*m = (size_t)v[0];
	*n = (size_t)v[nv == 3 ? 1 : 0];
	*k = (size_t)v[nv == 3 ? 2 : 0];
}

/* An NPY file's header (its data is read into pinned memory once the device is open),
 * or a whole text matrix, its header lines (--header) set aside. */
static void
load(const char *path, size_t header, enum dtype dt, struct clmat *c)
{
	clmat_open(path, header, dt, c);
	if (c->m.rows == 0 || c->m.cols == 0)
		die("%s: empty matrix (%zu x %zu)", path && strcmp(path, "-") ? path :
		    "(standard input)", c->m.rows, c->m.cols);
}

/* For a shape error: which change of --transpose-a and --transpose-b would make the
 * inner sizes match ("" when none would). */
static void
transpose_hint(char *buf, size_t size, const struct matrix *a, const struct matrix *b, int ta,
    int tb)
{
	static const char *const flag[2][2] = {
		{"--transpose-a", "without --transpose-a"},
		{"--transpose-b", "without --transpose-b"},
	};
	const char *fix[3];
	int n = 0;
	for (int f = 1; f <= 3 && (n == 0 || f < 3); f++) {
		int fa = f & 1, fb = f >> 1;
		size_t k = (ta ^ fa) ? a->rows : a->cols, kb = (tb ^ fb) ? b->cols : b->rows;
		if (k != kb)
			continue;
		if (f == 3) {
			snprintf(buf, size, "; %s and %s would make them match", flag[0][ta],
			    flag[1][tb]);
			return;
		}
		fix[n++] = flag[f - 1][f == 1 ? ta : tb];
	}
	if (n == 0)
		*buf = '\0';
	else if (n == 1)
		snprintf(buf, size, "; %s would make them match", fix[0]);
	else
		snprintf(buf, size, "; %s or %s would make them match", fix[0], fix[1]);
}

int
main(int argc, char **argv)
{
	struct common_opts co;
	struct cm_options o;
	const char *c0path = NULL, *bench = NULL;
	double alpha = 1, beta = NAN;
	int verify = 0, reps = 10, c;
	size_t header = 0;
	uint64_t seed = 1;
	static const char *const transfers[] = {"auto", "rect", "packed", NULL};
	static const char *const stagings[] = {"local", "direct", "async", "wgmma", NULL};
	static const char *const precisions[] = {"fp32", "tf32", NULL};

	cli_init(argc, argv, &co);
	memset(&o, 0, sizeof o);
	o.dt = DT_F32;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "c:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TA: o.ta = 1; break;
		case OPT_TB: o.tb = 1; break;
		case OPT_ALPHA: alpha = cli_double("--alpha", optarg, -HUGE_VAL, HUGE_VAL); break;
		case OPT_BETA: beta = cli_double("--beta", optarg, -HUGE_VAL, HUGE_VAL); break;
		case 'c': c0path = optarg; break;
		case OPT_DOUBLE: o.dt = DT_F64; break;
		case OPT_PRECISION: o.tf32 = cli_choice("--precision", optarg, precisions); break;
		case OPT_VERIFY: verify = 1; break;
		case OPT_BENCH: bench = optarg; break;
		case OPT_REPEAT: reps = (int)cli_int("--repeat", optarg, 1, 100000); break;
		case OPT_SEED: seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_TILE: parse_pair("--tile", optarg, 1024, &o.force.bm, &o.force.bn); break;
		case OPT_TILE_K: o.force.bk = (int)cli_int("--tile-k", optarg, 1, 1024); break;
		case OPT_ITEM: parse_pair("--item", optarg, 64, &o.force.tm, &o.force.tn); break;
		case OPT_VECTOR: parse_pair("--vector", optarg, 16, &o.force.vm, &o.force.vn); break;
		case OPT_LOAD_VECTOR: o.force.lw = (int)cli_int("--load-vector", optarg, 1, 16); break;
		case OPT_PATCH: parse_pair("--patch", optarg, 1024, &o.force.pm, &o.force.pn); break;
		case OPT_BAND: o.force.gm = (int)cli_int("--band", optarg, 1, 1 << 20); break;
		case OPT_UNROLL: o.force.ku = (int)cli_int("--unroll", optarg, 1, 1024); break;
		case OPT_STAGING:
			o.force.staging = 1 + cli_choice("--staging", optarg, stagings);
			break;
		case OPT_MAX_REGS: o.force.regs = (int)cli_int("--max-regs", optarg, 16, 255); break;
		case OPT_HEADER: header = table_header_arg("--header", optarg); break;
		case OPT_TRANSFERS:
			o.transfers = (enum cm_transfers)cli_choice("--transfers", optarg, transfers);
			break;
		default: cli_common(c, optarg, &co, usage);
		}
	}
	cli_finish(&co);
	if (co.list_devices) {
		clx_list_devices(co.platform);
		return 0;
	}
	int nfiles = argc - optind;
	if (bench != NULL && nfiles != 0)
		usage_error("--bench makes its own matrices; no files are read");
	if (bench == NULL && nfiles != 2)
		usage_error(nfiles < 2 ? "two matrices are needed: A and B" : "too many files");
	if (bench != NULL && c0path != NULL)
		usage_error("--bench makes its own C0 (with --beta); -c does not apply");
	if (o.tf32 && o.dt == DT_F64)
		usage_error("--precision tf32 rounds float32 inputs; it does not go with --double");
	if (isnan(beta))
		beta = c0path != NULL ? 1 : 0;
	if (bench == NULL && beta != 0 && c0path == NULL)
		usage_error("--beta needs the matrix C0 (-c FILE)");
	if (bench == NULL) {
		int stdin_uses = !strcmp(argv[optind], "-") + !strcmp(argv[optind + 1], "-") +
		    (c0path != NULL && !strcmp(c0path, "-"));
		if (stdin_uses > 1)
			usage_error("only one of the matrices can come from standard input");
	}
	o.max_device_mem = co.max_device_mem;
	struct clmat A = {0}, B = {0}, C0 = {0};
	struct cm_job j = {
		.device = co.device, .platform = co.platform, .o = o,
		.p = {.alpha = alpha, .beta = beta},
		.bench = bench != NULL, .verify = verify, .reps = reps, .seed = seed,
	};
	struct cm_problem *p = &j.p;

	if (bench == NULL) {
		const char *pa = argv[optind], *pb = argv[optind + 1];
		const char *paths[3] = {pa, pb, c0path};
		cm_start(&j, in_regular_bytes(paths, beta != 0 ? 3 : 2));
		double t0 = now_sec();
		load(pa, header, o.dt, &A);
		load(pb, header, o.dt, &B);
		p->m = o.ta ? A.m.cols : A.m.rows;
		p->k = o.ta ? A.m.rows : A.m.cols;
		p->n = o.tb ? B.m.rows : B.m.cols;
		size_t kb = o.tb ? B.m.cols : B.m.rows;
		if (kb != p->k) {
			char hint[160];
			transpose_hint(hint, sizeof hint, &A.m, &B.m, o.ta, o.tb);
			die("shapes do not match: op(A) is %zu x %zu (%s%s) but op(B) is %zu x %zu "
			    "(%s%s)%s", p->m, p->k, pa, o.ta ? ", transposed" : "", kb, p->n, pb,
			    o.tb ? ", transposed" : "", hint);
		}
		if (beta != 0) {
			load(c0path, header, o.dt, &C0);
			if (C0.m.rows != p->m || C0.m.cols != p->n)
				die("%s: C0 is %zu x %zu but op(A) op(B) is %zu x %zu", c0path,
				    C0.m.rows, C0.m.cols, p->m, p->n);
		}
		phase_add(PH_READ, now_sec() - t0);
		j.a = &A;
		j.b = &B;
		j.c0 = &C0;
	} else {
		parse_shape(bench, &p->m, &p->n, &p->k);
	}
	if (p->m > INT32_MAX / 2 || p->n > INT32_MAX / 2 || p->k > INT32_MAX / 2)
		die("op(A) op(B) is %zu x %zu x %zu: sides of 2^30 and more are not supported",
		    p->m, p->k, p->n);
	if (bench != NULL)
		cm_start(&j, -1);

	j.output = co.output;
	j.out_fmt = cli_out_format(&co, co.output);
	cm_run(&j);	/* C written as it is made */
	if (bench != NULL) {
		const struct cm_bench_result *r = &j.r;
		double gflops = 2e-6 * (double)p->m * (double)p->n * (double)p->k / r->ms_median;
		printf("m=%zu n=%zu k=%zu type=%s blocks=%d reps=%d ms=%.3f best_ms=%.3f "
		    "gflops=%.1f source=%s device=%s\n", p->m, p->n, p->k,
		    o.dt == DT_F64 ? "float64" : o.tf32 ? "tf32" : "float32", r->blocks, r->reps,
		    r->ms_median, r->ms_best, gflops, co.max_device_mem || j.host ? "host" :
		    "device", j.device_name);
		stdout_finish();
	}
	cm_run_end(&j);
	return 0;
}
