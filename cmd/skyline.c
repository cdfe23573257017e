/* skyline: the rows no other row dominates, classic (in chosen columns) or spatial
 * (2-D points with respect to query points). See man/skyline.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cudadev.h"
#include "dense.h"
#include "err.h"
#include "fields.h"
#include "output.h"
#include "skyline.h"
#include "skyline_tune.h"
#include "table.h"
#include "timer.h"
#include "tune.h"

enum { OPT_DISTINCT = CLI_OPT_PROG, OPT_INDEX, OPT_COUNT };

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] [FILE]\n"
	    "       %s -Q QUERIES [options] [FILE]\n"
	    "Prints the rows of FILE (text or NPY) that no other row dominates.\n"
	    "\n"
	    "  -f, --fields LIST     columns to compare, as cut(1) numbers them (1,3-5,7-);\n"
	    "                        default: every column\n"
	    "  -p, --prefer LIST     min or max for each chosen column, or one for all\n"
	    "                        (default min)\n"
	    "  -Q, --query FILE      spatial skyline: 2-D points nearer to the points of FILE\n"
	    "      --distinct        print one of equal rows (the first)\n"
	    "      --index           print 1-based row numbers instead of rows\n"
	    "      --count           print the number of skyline rows only\n"
	    "  -o, --output FILE     write to FILE (default standard output)\n"
	    "  -O, --output-format F text (default) or npy (float32 rows)\n"
	    "  -d, --device SPEC     auto, cpu, gpu or gpu:N (default $ACCELKIT_DEVICE or auto)\n"
	    "  -j, --threads N       CPU threads\n"
	    "      --max-device-mem BYTES  bound on GPU memory (work is split to fit)\n"
	    "      --list-devices    print the usable devices and exit\n"
	    "  -v, --verbose         device, sizes and phase times on standard error\n"
	    "  -h, --help            this help\n"
	    "  -V, --version         version\n",
	    progname, progname);
}

/* ---- -p LIST ---- */

/* min/max for each chosen column; a single word applies to all. */
struct prefs {
	unsigned char *max;
	size_t n;
	const char *text;
};

static void
parse_prefs(const char *list, struct prefs *p)
{
	const char *s = list;
	free(p->max);
	p->max = NULL;
	p->n = 0;
	p->text = list;
	for (;;) {
		size_t len = strcspn(s, ",");
		int max;
		if (len == 3 && strncmp(s, "min", 3) == 0)
			max = 0;
		else if (len == 3 && strncmp(s, "max", 3) == 0)
			max = 1;
		else
			usage_error("invalid value for --prefer: '%s' (expected min or max for each chosen column)",
			    list);
		p->max = xrealloc(p->max, p->n + 1);
		p->max[p->n++] = (unsigned char)max;
		if (s[len] == '\0')
			return;
		s += len + 1;
	}
}

/* ---- input and the run ---- */

/* table_read, with skyline's bound on rows (its row indexes are 32-bit). */
static void
read_input(const char *path, int flags, struct table *t)
{
	table_read(path, flags, t);
	if (t->m.rows >= UINT32_MAX)
		die("%s: %zu rows is more than skyline handles (%u)", t->name, t->m.rows,
		    UINT32_MAX - 1);
}

/* The points of -Q QUERIES as float pairs: its two columns, else those -f chooses. */
static float *
read_queries(const char *qpath, const struct fields *fields, size_t *qn)
{
	struct table q;
	size_t qcol[2];

	read_input(qpath, 0, &q);
	if (q.m.rows == 0)
		die("%s: no query points", q.name);
	if (q.m.cols == 2 || fields->text == NULL) {
		if (q.m.cols != 2)
			die("%s: query points have %zu columns, expected 2 (x y)", q.name,
			    q.m.cols);
		qcol[0] = 0;
		qcol[1] = 1;
	} else {
		size_t *col = xmallocarray(q.m.cols, sizeof *col);
		size_t k = fields_resolve(fields, q.m.cols, q.name, col);
		if (k != 2)
			die("%s: the field list '%s' chooses %zu columns, a query point has 2",
			    q.name, fields->text, k);
		qcol[0] = col[0];
		qcol[1] = col[1];
		free(col);
	}
	float *qxy = table_columns(&q, qcol, 2, DT_F32, "a coordinate");
	*qn = q.m.rows;
	table_free(&q);
	return qxy;
}

/* The row of skyline_tune.h for the device that computes, said under -v. */
static const struct sky_tune *
tuning(const char *desc)
{
	const struct sky_tune *tu = TUNE_PICK(sky_tune_table, desc);
	vlog("tuning: %s (%s)", *tu->device != '\0' ? tu->device : "default", tu->measured);
	return tu;
}

/* The spatial skyline of t's columns col[0..2) for the query points qxy[0..qn). The
 * hull is found while the device starts; the GPU paths time their own phases. */
static size_t
spatial(const struct table *t, const size_t *col, const float *qxy, size_t qn, int distinct,
    const struct cuda_dev *dev, size_t max_mem, uint32_t *keep)
{
	size_t n = t->m.rows, m;
	float *hull = xmallocarray(mul_size(qn, 2, "hull"), sizeof *hull);
	size_t h = sky_hull(qxy, qn, hull);
	/* float pairs already: used in place */
	int inplace = n && t->m.dtype == DT_F32 && t->m.cols == 2 && col[0] == 0 && col[1] == 1;
	float *xy = inplace ? t->m.data : n ? table_columns(t, col, 2, DT_F32, "a coordinate") :
	    NULL;
	struct sky_spatial job = {n, xy, hull, h, sky_tolerance(xy, n, hull, h), distinct, NULL};
	vlog("%zu query points, %zu on the hull; %s arithmetic", qn, h,
	    job.tol == 0 ? "exact double" : "double with exact fallback");

	cuda_start_wait();
	int gpu = dev->gpu && n > 0;
	if (gpu && h > SKY_GPU_MAXH) {
		vlog("the hull has %zu vertices, more than the GPU path holds (%d): using the CPU",
		    h, SKY_GPU_MAXH);
		gpu = 0;
	}
	job.tune = tuning(gpu ? dev->desc : "cpu");	/* the CPU's row wherever it computes */
	double tc = now_sec();
#ifdef ACCELKIT_CUDA
	if (gpu)
		m = sky_spatial_gpu(&job, dev, max_mem, keep);
	else
#endif
		m = sky_spatial_cpu(&job, keep);
	if (!gpu)
		phase_add(PH_COMPUTE, now_sec() - tc);
	(void)max_mem;		/* without CUDA */
	if (!inplace)
		free(xy);
	free(hull);
	return m;
}

/* The classic skyline of t's columns col[0..d) (n > 0). */
static size_t
classic(const struct table *t, const size_t *col, size_t d, const struct prefs *prefs,
    int distinct, const struct cuda_dev *dev, size_t max_mem, uint32_t *keep)
{
	size_t m;
	unsigned char *maxp = xcalloc(d, 1);
	for (size_t j = 0; j < d && prefs->n > 0; j++)
		maxp[j] = prefs->max[prefs->n == 1 ? 0 : j];
	struct sky_classic job = {t->m.rows, d, t->m.data, t->m.dtype == DT_F64, t->m.cols, col,
	    maxp, distinct, NULL};

	cuda_start_wait();
	job.tune = tuning(dev->desc);
	double tc = now_sec();
#ifdef ACCELKIT_CUDA
	if (dev->gpu)
		m = sky_classic_gpu(&job, dev, max_mem, keep);
	else
#endif
		m = sky_classic_cpu(&job, keep);
	if (!dev->gpu)
		phase_add(PH_COMPUTE, now_sec() - tc);
	(void)max_mem;		/* without CUDA */
	free(maxp);
	return m;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"fields", required_argument, NULL, 'f'},
		{"prefer", required_argument, NULL, 'p'},
		{"query", required_argument, NULL, 'Q'},
		{"distinct", no_argument, NULL, OPT_DISTINCT},
		{"index", no_argument, NULL, OPT_INDEX},
		{"count", no_argument, NULL, OPT_COUNT},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct fields fields = {NULL, 0, NULL};
	struct prefs prefs = {NULL, 0, NULL};
	const char *qpath = NULL;
	enum sky_print what = SKY_ROWS, w;
	int distinct = 0, c;

	cli_init(argc, argv, &co);
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "f:p:Q:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fields_parse("--fields", optarg, &fields);
			break;
		case 'p':
			parse_prefs(optarg, &prefs);
			break;
		case 'Q':
			qpath = optarg;
			break;
		case OPT_DISTINCT:
			distinct = 1;
			break;
		case OPT_INDEX:
		case OPT_COUNT:
			w = c == OPT_INDEX ? SKY_INDEX : SKY_COUNT;
			if (what != SKY_ROWS && what != w)
				usage_error("--index and --count exclude each other");
			what = w;
			break;
		default:
			cli_common(c, optarg, &co, usage);
		}
	}
	cli_finish(&co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	if (argc - optind > 1)
		usage_error("one input FILE at most (got %d)", argc - optind);
	const char *path = optind < argc ? argv[optind] : NULL;
	int fmt = cli_out_format(&co, co.output);
	if (fmt == FMT_NPY && what != SKY_ROWS)
		usage_error("-O npy writes rows; it does not go with --%s",
		    what == SKY_INDEX ? "index" : "count");
	if (qpath != NULL && prefs.text != NULL)
		usage_error("--prefer is for the classic skyline; a spatial one prefers nearness");
	if (qpath != NULL && strcmp(qpath, "-") == 0 && (path == NULL || strcmp(path, "-") == 0))
		usage_error("QUERIES and FILE cannot both be standard input");

	/* CUDA's start-up runs (in a thread) while the input is read. */
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	struct cuda_dev dev;
#ifdef ACCELKIT_CUDA
	cuda_start(co.device, 0, sky_gpu_init, &dev);
#else
	cuda_start(co.device, 0, NULL, &dev);
#endif

	double t0 = now_sec();
	struct table t;
	float *qxy = NULL;
	size_t qn = 0;
	if (qpath != NULL)
		qxy = read_queries(qpath, &fields, &qn);
	read_input(path, fmt == FMT_TEXT && what == SKY_ROWS ? TABLE_KEEP_TEXT : 0, &t);
	phase_add(PH_READ, now_sec() - t0);

	size_t n = t.m.rows, cols = t.m.cols, m = 0;
	size_t *col = xmallocarray(MAX(cols, 1), sizeof *col);
	size_t d = n ? fields_resolve(&fields, cols, t.name, col) : 0;
	vlog("%zu rows of %zu columns, %zu chosen", n, cols, d);
	if (qpath != NULL && n > 0 && d != 2)
		die("%s: a spatial skyline needs 2 columns (x y), %zu are chosen%s", t.name, d,
		    fields.text ? "" : "; choose them with -f");
	if (qpath == NULL && prefs.n != 0 && prefs.n != 1 && prefs.n != d && n > 0)
		usage_error("--prefer '%s' gives %zu preferences for %zu chosen columns",
		    prefs.text, prefs.n, d);
	uint32_t *keep = xmallocarray(MAX(n, 1), sizeof *keep);

	if (qpath != NULL)
		m = spatial(&t, col, qxy, qn, distinct, &dev, co.max_device_mem, keep);
	else if (n > 0)
		m = classic(&t, col, d, &prefs, distinct, &dev, co.max_device_mem, keep);
	cuda_start_wait();
	vlog("%zu rows in the skyline", m);

	double tw = now_sec();
	output *o = out_open(co.output);
	sky_print(o, fmt, what, &t, keep, m);
	out_close(o);
	phase_add(PH_WRITE, now_sec() - tw);
	phases_report();
	if (dev.gpu) {
		/* All is written and checked: skip the CUDA context's teardown, which
		 * costs tens of milliseconds; the system frees everything. */
		fflush(stderr);
		_exit(0);
	}

	free(keep);
	free(col);
	free(qxy);
	table_free(&t);
	fields_free(&fields);
	free(prefs.max);
	return 0;
}
