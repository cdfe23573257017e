/* clkmeans: k-means clustering of dense rows with OpenCL (GPUs, and CPUs through PoCL),
 * or natively on the host for small work and -d cpu (kernels/clkmeans_run.c decides).
 *
 *   clkmeans -k K [options] [FILE]          cluster the rows; labels to stdout
 *   clkmeans --assign CENTROIDS [FILE]      label the rows with the nearest centroid
 *
 * Several devices (-d gpu:all) divide the rows; under mpirun each rank reads its share
 * of FILE, and rank 0 gathers the labels and writes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clkmeans.h"
#include "clstaging.h"
#include "dense.h"
#include "fields.h"
#include "opencl.h"
#include "ranks.h"
#include "table.h"
#include "timer.h"

enum {
	OPT_ASSIGN = CLI_OPT_PROG, OPT_DISTANCES, OPT_INIT, OPT_SEED, OPT_N_INIT, OPT_MAX_ITER,
	OPT_TOL, OPT_HEADER, OPT_WITH_ROWS,
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s -k K [options] [FILE]\n"
	    "       %s --assign CENTROIDS [options] [FILE]\n"
	    "Clusters the rows of FILE (text or NPY; standard input by default) with Lloyd's\n"
	    "k-means on an OpenCL device (or natively on the CPU) and prints each row's\n"
	    "cluster (0-based).\n"
	    "\n"
	    "  -k, --clusters K        number of clusters\n"
	    "  -f, --fields LIST       the feature columns, as cut(1) numbers them (1,3-5,7-);\n"
	    "                          default: every column\n"
	    "  -t, --delimiter C       fields are separated by C (a tab: -t '\\t'), not blanks\n"
	    "      --header[=N]        the first N lines (1) are a header, not rows\n"
	    "      --with-rows         print each row as it came, then its cluster\n"
	    "      --assign CENTROIDS  only label each row with its nearest centroid\n"
	    "  -C, --centroids FILE    write the final centroids to FILE (text, or NPY for *.npy)\n"
	    "      --distances         add each row's squared distance to its centroid\n"
	    "      --init METHOD       k-means++ (default), random, or a FILE of k centroids\n"
	    "      --seed N            seed of the random choices (default 0)\n"
	    "      --n-init R          runs from different starts; the lowest inertia is kept (1)\n"
	    "      --max-iter N        most iterations of a run (300)\n"
	    "      --tol X             stop when the centroids' squared shift is at most X times\n"
	    "                          the mean column variance (1e-4); 0 runs every iteration\n"
	    "      --max-device-mem BYTES  device memory to use (rows beyond it are streamed)\n"
	    "  -d, --device SPEC       auto, cpu (native, no OpenCL), cpu:N (PoCL), gpu, gpu:N\n"
	    "                          or P:D (see --list-devices);\n"
	    "                          several divide the rows: gpu:all, cpu:all, gpu:0,1\n"
	    "      --platform TEXT     only OpenCL platforms whose name contains TEXT\n"
	    "      --list-devices      list the OpenCL devices and exit\n"
	    "  -o, --output FILE       write the labels to FILE\n"
	    "  -O, --output-format F   text or npy (labels and centroids)\n"
	    "  -j, --threads N         host threads\n"
	    "  -v, --verbose           device, sizes, each iteration, phase times\n"
	    "      --progress          a progress line on stderr (a terminal's, by default)\n"
	    "  -h, --help              this help\n"
	    "  -V, --version           version\n",
	    progname, progname);
}

/* The centroids of --assign or --init FILE, read as float64 before the rows (a few
 * rows: their count is k, which auto weighs beside the read): k from their count. */
static void
load_centroids(const char *path, struct km_config *cfg, struct matrix *C)
{
	mat_load(path, DT_F64, 0, C);
	if (C->rows == 0)
		die("%s: no centroids", path);
	if (cfg->k != 0 && (size_t)cfg->k != C->rows)
		die("%s: %zu centroids, but -k %d", path, C->rows, cfg->k);
	cfg->k = (int)C->rows;
	cfg->centroids = C->data;
}

/* Their width against the data's (the columns -f chooses, when given). */
static void
check_centroids(const char *path, const struct matrix *C, size_t cols, const struct fields *f)
{
	if (C->cols != cols)
		die("%s: centroids have %zu column%s, %s %zu", path, C->cols,
		    C->cols == 1 ? "" : "s", f->text != NULL ? "-f chooses" : "the data has", cols);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_PLATFORM_LONG,
		CLI_MAXMEM_LONG,
		{"clusters", required_argument, NULL, 'k'},
		{"centroids", required_argument, NULL, 'C'},
		{"assign", required_argument, NULL, OPT_ASSIGN},
		{"distances", no_argument, NULL, OPT_DISTANCES},
		{"init", required_argument, NULL, OPT_INIT},
		{"seed", required_argument, NULL, OPT_SEED},
		{"n-init", required_argument, NULL, OPT_N_INIT},
		{"max-iter", required_argument, NULL, OPT_MAX_ITER},
		{"tol", required_argument, NULL, OPT_TOL},
		{"fields", required_argument, NULL, 'f'},
		{"delimiter", required_argument, NULL, 't'},
		{"header", optional_argument, NULL, OPT_HEADER},
		{"with-rows", no_argument, NULL, OPT_WITH_ROWS},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct km_config cfg = {
		.init = KM_INIT_PLUSPLUS, .n_init = 1, .max_iter = 300, .tol = 1e-4,
	};
	const char *assign = NULL, *cent_out = NULL, *init_file = NULL;
	struct fields fields = {NULL, 0, NULL};
	struct table_opts to = {TABLE_BLANKS, 0, 0, DT_F32, NULL, 0};
	int dist = 0, with_rows = 0, c;

	cli_init(argc, argv, &co);
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "k:C:f:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			cfg.k = (int)cli_int("--clusters", optarg, 1, 1 << 30);
			break;
		case 'C':
			cent_out = optarg;
			break;
		case OPT_ASSIGN:
			assign = optarg;
			break;
		case OPT_DISTANCES:
			dist = 1;
			break;
		case OPT_INIT:
			if (strcmp(optarg, "k-means++") == 0) {
				cfg.init = KM_INIT_PLUSPLUS;
			} else if (strcmp(optarg, "random") == 0) {
				cfg.init = KM_INIT_RANDOM;
			} else if (strcmp(optarg, "-") == 0 || access(optarg, R_OK) == 0) {
				cfg.init = KM_INIT_GIVEN;
				init_file = optarg;
			} else {
				/* a misspelt method (kmeans++) is not a missing file */
				usage_error("invalid value for --init: '%s' (expected k-means++, "
				    "random or a readable FILE of centroids)", optarg);
			}
			break;
		case OPT_SEED:
			cfg.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX);
			break;
		case OPT_N_INIT:
			cfg.n_init = (int)cli_int("--n-init", optarg, 1, 1 << 20);
			break;
		case OPT_MAX_ITER:
			cfg.max_iter = (int)cli_int("--max-iter", optarg, 1, 1 << 30);
			break;
		case OPT_TOL:
			cfg.tol = cli_double("--tol", optarg, 0, HUGE_VAL);
			break;
		case 'f':
			fields_parse("--fields", optarg, &fields);
			break;
		case 't':
			to.delim = table_delim_arg("--delimiter", optarg);
			break;
		case OPT_HEADER:
			to.header = table_header_arg("--header", optarg);
			break;
		case OPT_WITH_ROWS:
			with_rows = 1;
			break;
		default:
			cli_common(c, optarg, &co, usage);
		}
	}
	ranks_init(&argc, &argv);	/* under mpirun: each rank reads its share of the rows */
	cli_finish(&co);
	if (co.list_devices) {
		clx_list_devices(co.platform);
		return 0;
	}
	if (argc - optind > 1)
		usage_error("one input FILE at most");
	if (assign == NULL && cfg.k == 0 && init_file == NULL)
		usage_error("the number of clusters is missing (-k K)");
	if (assign != NULL && init_file != NULL)
		usage_error("--assign and --init FILE both give centroids; use one");
	const char *path = optind < argc ? argv[optind] : NULL;
	const char *cpath = assign ? assign : init_file;
	int data_stdin = path == NULL || strcmp(path, "-") == 0;
	if (cpath != NULL && strcmp(cpath, "-") == 0 && data_stdin)
		usage_error("the centroids and the data cannot both come from standard input");
	int fmt = cli_out_format(&co, co.output);
	if (with_rows && fmt == FMT_NPY)
		usage_error("--with-rows prints text rows; it does not go with -O npy");
	if (fields.text == NULL)
		to.hint = " (choose the feature columns with -f)";
	to.keep_text = with_rows;
	const int many = ranks_size() > 1;
	if (many && (with_rows || (cpath != NULL && strcmp(cpath, "-") == 0))) {
		ranks_serial_begin();	/* said once, by rank 0 */
		usage_error(with_rows ? "--with-rows under mpirun is not supported: each rank "
		    "holds only its own rows' text" : "under mpirun the centroids come from a "
		    "FILE, not standard input");
	}
	to.share = many;

	/* An NPY file of features alone waits for the device, which reads it into pinned
	 * memory (km_run); anything else is a table of rows. */
	struct clmat X;
	struct matrix C = {0, 0, DT_F64, NULL};
	struct table tab = {0};
	int owned = 1;		/* X's data is not the table's */
	double t = now_sec();
	const char *name = data_stdin ? "(standard input)" : path;
	cfg.device = co.device;
	cfg.platform = co.platform;
	cfg.max_device_mem = co.max_device_mem;
	cfg.assign_only = assign != NULL;
	/* the OpenCL devices opened beside the read where they will be used (km_start) */
	input *in = many ? NULL : in_open(path);
	if (cpath != NULL)
		load_centroids(cpath, &cfg, &C);
	if (!many && table_is_npy(in) && fields.text == NULL && !with_rows) {
		clmat_open_in(in, DT_F32, &X);
		km_start(&cfg, X.m.cols, (double)X.m.rows * (double)X.m.cols);
	} else {
		/* a text file's values, about: 8 bytes a value at least ("-0.1234\t"), so
		 * the estimate errs towards the host (not known where -f picks columns) */
		const char *one[1] = {path};
		int64_t bytes = data_stdin || fields.text != NULL ? -1 :
		    in_regular_bytes(one, 1);
		if (!many)
			km_start(&cfg, 0, bytes > 0 ? (double)bytes / 8 : 0);
		/* under mpirun this rank's share: rows [tab.row0, + rows) of tab.rows_total */
		if (many)
			table_read(path, &to, &fields, &tab);
		else
			table_read_in(in, &to, &fields, &tab);
		void *cols = table_columns(&tab, NULL, tab.k, DT_F32, "a value", &owned);
		clmat_wrap((struct matrix){tab.m.rows, tab.k, DT_F32, cols}, &X);
	}
	if (cpath != NULL)
		check_centroids(cpath, &C, X.m.cols, &fields);
	phase_add(PH_READ, now_sec() - t);
	uint64_t ntotal = many ? tab.rows_total : X.m.rows;
	if (assign == NULL && (uint64_t)cfg.k > ntotal) {
		ranks_serial_begin();	/* said once, by rank 0 */
		die("%s: %llu row%s, fewer than the %d clusters asked for", name,
		    (unsigned long long)ntotal, ntotal == 1 ? "" : "s", cfg.k);
	}

	struct km_result res = {0};
	if (ntotal > 0) {
		cfg.row0 = many ? tab.row0 : 0;
		cfg.ntotal = ntotal;
		km_run(&X, &cfg, &res);
	} else {
		km_start_cancel();
		res.centroids = xmallocarray((size_t)cfg.k * X.m.cols, sizeof *res.centroids);
		memcpy(res.centroids, C.data, (size_t)cfg.k * X.m.cols * sizeof *res.centroids);
	}

	t = now_sec();
	size_t nout = X.m.rows;
	if (many) {
		/* the ranks' labels (and distances) in input order, on rank 0, which writes */
		size_t bytes;
		int *lab = ranks_gather(res.labels, X.m.rows * sizeof *res.labels, &bytes);
		double *dst = dist ? ranks_gather(res.dists, X.m.rows * sizeof *res.dists, &bytes) :
		    NULL;
		free(res.labels);
		free(res.dists);
		res.labels = lab;
		res.dists = dst;
		nout = (size_t)ntotal;
		if (ranks_rank() != 0)
			goto done;
	}
	if (cent_out != NULL)
		km_write_centroids(cent_out, cli_out_format(&co, cent_out), res.centroids,
		    (size_t)cfg.k, X.m.cols);
	if (with_rows)
		km_write_rows(co.output, &res, &tab, to.delim == TABLE_BLANKS ? '\t' : to.delim,
		    dist);
	else
		km_write_labels(co.output, fmt, &res, nout, dist);
done:
	phase_add(PH_WRITE, now_sec() - t);
	phases_report();
	clx_finish();	/* a GPU run ends here; what follows frees a CPU run's memory */
	km_result_free(&res);
	if (!owned)
		X.m.data = NULL;	/* the table frees it */
	clmat_free(&X);
	table_free(&tab);
	fields_free(&fields);
	mat_free(&C);
	return 0;
}
