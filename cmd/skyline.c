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
#include "input.h"
#include "output.h"
#include "ranks.h"
#include "skyline_run.h"
#include "table.h"
#include "timer.h"

enum { OPT_DISTINCT = CLI_OPT_PROG, OPT_INDEX, OPT_COUNT, OPT_HEADER, OPT_LAYERS };

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] [FILE]\n"
	    "       %s -Q QUERIES [options] [FILE]\n"
	    "Prints the rows of FILE (text or NPY) that no other row dominates.\n"
	    "\n"
	    "  -f, --fields LIST     columns to compare, as cut(1) numbers them (1,3-5,7-);\n"
	    "                        default: every column; the others are carried along\n"
	    "  -p, --prefer LIST     min or max for each chosen column, or one for all\n"
	    "                        (default min)\n"
	    "  -Q, --query FILE      spatial skyline: 2-D points nearer to the points of FILE\n"
	    "  -t, --delimiter C     fields are separated by C (a tab: -t '\\t'), not blanks\n"
	    "      --header[=N]      the first N lines (1) are a header: printed first\n"
	    "      --distinct        print one of equal rows (the first)\n"
	    "      --index           print 1-based row numbers instead of rows\n"
	    "      --count           print the number of skyline rows only\n"
	    "      --layers[=N]      every row (the first N layers') as LAYER<TAB>row, 1 the skyline\n"
	    "  -o, --output FILE     write to FILE (default standard output)\n"
	    "  -O, --output-format F text (default) or npy (float32 rows)\n"
	    "  -d, --device SPEC     auto, cpu, gpu, gpu:N, or several: gpu:all, gpu:0,1\n"
	    "                        (default $ACCELKIT_DEVICE or auto)\n"
	    "  -j, --threads N       CPU threads\n"
	    "      --max-device-mem BYTES  bound on GPU memory (work is split to fit)\n"
	    "      --list-devices    print the usable devices and exit\n"
	    "  -v, --verbose         device, sizes and phase times on standard error\n"
	    "      --progress        a progress line on stderr (a terminal's, by default)\n"
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

/* table_read's steps, with skyline's bound on rows (its row indexes are 32-bit). */
static void
load_input(struct table *t, const size_t *col, size_t k)
{
	table_load(t, col, k);
	if (t->m.rows >= UINT32_MAX)
		die("%s: %zu rows is more than skyline handles (%u)", t->name, t->m.rows,
		    UINT32_MAX - 1);
}

/* The points of -Q QUERIES as float pairs: its two columns, else those -f chooses. */
static float *
read_queries(const char *qpath, const struct table_opts *to, const struct fields *fields,
    size_t *qn)
{
	struct table q;
	struct table_opts qo = *to;
	size_t qcol[2] = {0, 1};
	int owned;

	qo.share = 0;		/* every rank needs every query point */
	table_open(qpath, &qo, &q);
	if (q.cols == 0)
		die("%s: no query points", q.name);
	if (q.cols != 2 || fields->text != NULL) {
		if (fields->text == NULL)
			die("%s: query points have %zu columns, expected 2 (x y)", q.name, q.cols);
		if (q.cols != 2) {
			size_t *col = xmallocarray(q.cols, sizeof *col);
			size_t k = fields_resolve(fields, q.cols, q.name, col);
			if (k != 2)
				die("%s: the field list '%s' chooses %zu columns, a query point has 2",
				    q.name, fields->text, k);
			qcol[0] = col[0];
			qcol[1] = col[1];
			free(col);
		}
	}
	load_input(&q, qcol, 2);
	if (q.m.rows == 0)
		die("%s: no query points", q.name);
	float *qxy = table_columns(&q, NULL, 2, DT_F32, "a coordinate", &owned);
	if (!owned)
		q.m.data = NULL;	/* now the caller's */
	*qn = q.m.rows;
	table_free(&q);
	return qxy;
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
		{"delimiter", required_argument, NULL, 't'},
		{"header", optional_argument, NULL, OPT_HEADER},
		{"distinct", no_argument, NULL, OPT_DISTINCT},
		{"index", no_argument, NULL, OPT_INDEX},
		{"count", no_argument, NULL, OPT_COUNT},
		{"layers", optional_argument, NULL, OPT_LAYERS},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct fields fields = {NULL, 0, NULL};
	struct prefs prefs = {NULL, 0, NULL};
	struct table_opts to = {TABLE_BLANKS, 0, 0, DT_F64, NULL, 1};
	const char *qpath = NULL;
	enum sky_print what = SKY_ROWS, w;
	int distinct = 0, c;
	uint32_t layers = UINT32_MAX;	/* --layers N (0: all), UINT32_MAX: not given */

	cli_init(argc, argv, &co);
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "f:p:Q:t:", longopts, NULL)) != -1) {
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
		case 't':
			to.delim = table_delim_arg("--delimiter", optarg);
			break;
		case OPT_HEADER:
			to.header = table_header_arg("--header", optarg);
			break;
		case OPT_DISTINCT:
			distinct = 1;
			break;
		case OPT_LAYERS:
			layers = optarg == NULL ? 0 : (uint32_t)cli_int("--layers", optarg, 1,
			    UINT32_MAX - 1);
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
	ranks_init(&argc, &argv);	/* under mpirun: each rank reads its share */
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
	if (layers != UINT32_MAX && (qpath != NULL || distinct || fmt == FMT_NPY))
		usage_error("--layers sorts rows of a classic skyline into layers: it does not "
		    "go with %s", qpath != NULL ? "-Q" : distinct ? "--distinct" : "-O npy");
	if (layers != UINT32_MAX && ranks_size() > 1)
		usage_error("--layers runs in one process, not under mpirun");
	if (qpath != NULL && prefs.text != NULL)
		usage_error("--prefer is for the classic skyline; a spatial one prefers nearness");
	if (qpath != NULL && strcmp(qpath, "-") == 0 && (path == NULL || strcmp(path, "-") == 0))
		usage_error("QUERIES and FILE cannot both be standard input");
	if (fmt == FMT_NPY)
		to.hint = " (-O npy writes every column as a number)";
	else if (fields.text == NULL)
		to.hint = " (choose the numeric columns with -f)";

	/* CUDA's start-up runs (in a thread) while the input is read. */
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	struct cuda_dev dev;
	const char *ins[2] = {path, qpath};
	cuda_input_size(in_regular_bytes(ins, qpath != NULL ? 2 : 1));
#ifdef ACCELKIT_CUDA
	cuda_start(co.device, 1, sky_gpu_init, &dev);	/* gpu:all divides the rows */
#else
	cuda_start(co.device, 1, NULL, &dev);
#endif

	double t0 = now_sec();
	struct table t;
	float *qxy = NULL;
	size_t qn = 0;
	if (qpath != NULL)
		qxy = read_queries(qpath, &to, &fields, &qn);
	to.keep_text = fmt == FMT_TEXT && what == SKY_ROWS;
	table_open(path, &to, &t);
	/* the compared columns; -O npy writes every column, so every one is a number */
	size_t *cmp = xmallocarray(MAX(t.cols, 1), sizeof *cmp), *pos = NULL;
	size_t d = t.cols > 0 ? fields_resolve(&fields, t.cols, t.name, cmp) : 0;
	if (fmt == FMT_NPY) {
		size_t *all = xmallocarray(MAX(t.cols, 1), sizeof *all);
		for (size_t j = 0; j < t.cols; j++)
			all[j] = j;
		load_input(&t, all, t.cols);
		free(all);
	} else {
		load_input(&t, cmp, d);
	}
	phase_add(PH_READ, now_sec() - t0);

	/* where each compared column is among the parsed ones, and in t.m */
	size_t n = t.m.rows, m = 0, *mcol = xmallocarray(MAX(d, 1), sizeof *mcol);
	pos = xmallocarray(MAX(d, 1), sizeof *pos);
	for (size_t j = 0, p = 0; j < d; j++) {
		while (t.col[p] != cmp[j])
			p++;
		pos[j] = p;
		mcol[j] = t.mcol[p];
	}
	vlog("%zu rows of %zu columns, %zu chosen", n, t.cols, d);
	if (qpath != NULL && n > 0 && d != 2)
		die("%s: a spatial skyline needs 2 columns (x y), %zu are chosen%s", t.name, d,
		    fields.text ? "" : "; choose them with -f");
	if (qpath == NULL && prefs.n != 0 && prefs.n != 1 && prefs.n != d && n > 0)
		usage_error("--prefer '%s' gives %zu preferences for %zu chosen columns",
		    prefs.text, prefs.n, d);
	if (t.rows_total >= UINT32_MAX)
		die("%s: %llu rows is more than skyline handles (%u)", t.name,
		    (unsigned long long)t.rows_total, UINT32_MAX - 1);
	uint32_t *keep = xmallocarray(MAX(n, 1), sizeof *keep);
	uint64_t *index = NULL;
	struct sky_job job = {pos, mcol, d, qxy, qn, prefs.max, prefs.n, distinct,
	    co.max_device_mem};
	uint32_t found = 0;	/* --layers: keep[i] is row i's layer */
	if (layers != UINT32_MAX) {
		found = sky_layers(&t, &job, layers, 1, &dev, keep);
		vlog("%u layers", found);
	} else {
		m = sky_run(&t, &job, 1, &dev, keep);
		if (ranks_size() > 1) {
			m = sky_merge_ranks(&t, &job, &dev, &keep, m, &index);
			if (what == SKY_INDEX)
				for (size_t i = 0; i < m; i++)
					keep[i] = (uint32_t)index[keep[i]];	/* rows of the input */
		}
		vlog("%zu rows in the skyline", m);
	}

	double tw = now_sec();
	if (ranks_rank() == 0) {	/* the one writer of a run under mpirun */
		output *o = out_open(co.output);
		if (layers != UINT32_MAX)
			sky_print_layers(o, what, &t, keep, n, found);
		else
			sky_print(o, fmt, what, &t, keep, m);
		out_close(o);
	}
	phase_add(PH_WRITE, now_sec() - tw);
	phases_report();
	cuda_finish(&dev);

	free(keep);
	free(index);
	free(cmp);
	free(pos);
	free(mcol);
	free(qxy);
	table_free(&t);
	fields_free(&fields);
	free(prefs.max);
	return 0;
}
