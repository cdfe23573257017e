/* editdist4r: edit (Levenshtein) distances of byte-string pairs by the Four-Russians
 * method, on a CUDA GPU or the CPU. Options and orchestration: the pairs are read here
 * (common/seq.h) and handed to the batches (kernels/editdist4r_batch.c), which compute
 * them and write them (kernels/editdist4r_out.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "editdist4r.h"
#include "editdist4r_run.h"
#include "editdist4r_tune.h"
#include "err.h"
#include "input.h"
#include "seq.h"
#include "timer.h"
#include "tune.h"

#define MAX_LEN ((size_t)INT32_MAX)

enum { OPT_ALL = CLI_OPT_PROG, OPT_ALGO };

static const char *const algos[] = {"auto", "4r", "bp", "dp", NULL};
static const char *const engines[] = {"auto", "Four-Russians", "bit-parallel", "plain DP"};

/* The Four-Russians block size without -t on a device so described (tune.h). */
static int
default_t(const char *desc)
{
	return TUNE_PICK(editdist4r_tune_table, desc)->t;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] [FILE ...]\n"
	    "       %s [options] -a FA -b FB\n"
	    "Edit distances of byte-string pairs by the Four-Russians method.\n"
	    "Each line of FILE is a pair \"A<TAB>B\"; with -a and -b the records of two FASTA,\n"
	    "FASTQ or one-sequence-a-line files pair up by position. One line per pair.\n"
	    "\n"
	    "  -a, --seqs-a FA        first sequences (FASTA, FASTQ or one a line)\n"
	    "  -b, --seqs-b FB        second sequences\n"
	    "      --all-vs-all       every record of FA against every record of FB (a matrix)\n"
	    "  -k, --max-dist K       print -1 for distances above K (computes only the band)\n"
	    "  -p, --path             add a CIGAR of =, X, I, D that turns A into B\n"
	    "  -t, --block T          Four-Russians block size 1..%d (default %d on the CPU,\n"
	    "                         %d on a GPU); selects --algo 4r unless --algo is given\n"
	    "      --algo ALGO        auto (default), 4r (Four-Russians), bp (bit-parallel),\n"
	    "                         dp (plain dynamic programming, on the CPU)\n"
	    "  -o, --output FILE      write to FILE instead of standard output\n"
	    "  -O, --output-format F  text (default) or npy (float32 distances)\n"
	    "  -d, --device SPEC      auto, cpu, gpu or gpu:N (default $ACCELKIT_DEVICE or auto)\n"
	    "  -j, --threads N        CPU threads\n"
	    "      --max-device-mem B limit GPU memory use (e.g. 512M)\n"
	    "      --list-devices     list the devices and exit\n"
	    "  -v, --verbose          device, engine and phase times on standard error\n"
	    "  -h, --help             this help\n"
	    "  -V, --version          version\n",
	    progname, progname, FR_TMAX, default_t("cpu"), default_t("gpu nvidia"));
}

static void
check_len(const char *file, uint64_t line, size_t n)
{
	if (n > MAX_LEN)
		die_at(file, line, "a sequence of %zu bytes is too long (at most %zu)", n, MAX_LEN);
}

/* ---- the three input modes ---- */

static void
run_lines(struct ed_run *r, const char *path)
{
	input *in = in_open(path);
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec();

	while (seq_pair_next(in, &a, &alen, &b, &blen)) {
		check_len(in_name(in), in_lineno(in), MAX(alen, blen));
		ed_run_add(r, a, alen, b, blen);
	}
	in_close(in);
	phase_add(PH_READ, now_sec() - t0);
}

static void
run_records(struct ed_run *r, const char *fa, const char *fb)
{
	seqfile *A = seq_open(fa), *B = seq_open(fb);
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec();

	for (;;) {
		int ga = seq_next(A, &a, &alen), gb = seq_next(B, &b, &blen);
		if (ga != gb) {
			seqfile *more = ga ? A : B, *fewer = ga ? B : A;
			die_at(seq_name(more), seq_lineno(more),
			    "record %llu has no partner: %s has %llu records",
			    (unsigned long long)seq_count(more), seq_name(fewer),
			    (unsigned long long)seq_count(fewer));
		}
		if (!ga)
			break;
		check_len(seq_name(A), seq_lineno(A), alen);
		check_len(seq_name(B), seq_lineno(B), blen);
		ed_run_add(r, a, alen, b, blen);
	}
	seq_close(A);
	seq_close(B);
	phase_add(PH_READ, now_sec() - t0);
}

/* Every record of a file into the run's record pool. */
static void
read_all(struct ed_run *r, const char *path, struct ed_recs *rc)
{
	seqfile *f = seq_open(path);
	const unsigned char *s;
	size_t n;

	memset(rc, 0, sizeof *rc);
	while (seq_next(f, &s, &n)) {
		check_len(seq_name(f), seq_lineno(f), n);
		if (!ed_recs_put(r, rc, s, n))
			die("%s: the sequences of --all-vs-all exceed 4 GiB", seq_name(f));
	}
	seq_close(f);
}

static void
run_all(struct ed_run *r, const char *fa, const char *fb)
{
	struct ed_recs A, B;
	double t0 = now_sec();

	read_all(r, fa, &A);
	read_all(r, fb, &B);
	phase_add(PH_READ, now_sec() - t0);
	ed_out_matrix(r, A.n, B.n);
	ed_run_matrix(r, &A, &B);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"seqs-a", required_argument, NULL, 'a'},
		{"seqs-b", required_argument, NULL, 'b'},
		{"all-vs-all", no_argument, NULL, OPT_ALL},
		{"max-dist", required_argument, NULL, 'k'},
		{"path", no_argument, NULL, 'p'},
		{"block", required_argument, NULL, 't'},
		{"algo", required_argument, NULL, OPT_ALGO},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct ed_run r;
	const char *fa = NULL, *fb = NULL;
	int all = 0, t = 0, algo = -1, c;

	cli_init(argc, argv, &co);
	memset(&r, 0, sizeof r);
	r.eo.maxdist = -1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "a:b:k:pt:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': fa = optarg; break;
		case 'b': fb = optarg; break;
		case OPT_ALL: all = 1; break;
		case 'k': r.eo.maxdist = cli_int("--max-dist", optarg, 0, INT32_MAX); break;
		case 'p': r.path = 1; break;
		case 't': t = (int)cli_int("--block", optarg, 1, FR_TMAX); break;
		case OPT_ALGO: algo = cli_choice("--algo", optarg, algos); break;
		default: cli_common(c, optarg, &co, usage);
		}
	}
	cli_finish(&co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	if ((fa != NULL) != (fb != NULL))
		usage_error("-a and -b go together");
	if (fa != NULL && optind < argc)
		usage_error("FILE arguments cannot be combined with -a and -b");
	if (all && fa == NULL)
		usage_error("--all-vs-all needs -a FA and -b FB");
	if (all && r.path)
		usage_error("--path cannot be combined with --all-vs-all");
	r.fmt = cli_out_format(&co, co.output);
	if (r.fmt == FMT_NPY && r.path)
		usage_error("--path writes text; it cannot be combined with -O npy");
	r.all = all;
	r.eo.algo = algo >= 0 ? algo : t > 0 ? ED_4R : ED_AUTO;

	struct cuda_dev dev;
	cuda_select(co.device, 0, &dev);
	const struct editdist4r_tune *tune = TUNE_PICK(editdist4r_tune_table, dev.desc);
	r.gpu = dev.gpu;
	r.eo.auto_algo = tune->auto_algo;
	r.eo.t = t > 0 ? t : tune->t;
#ifdef ACCELKIT_CUDA
	if (r.gpu && r.eo.algo != ED_DP)
		r.g = ed_gpu_open(&dev, &r.eo, tune, co.max_device_mem);
#endif
	vlog("tuning: %s (%s)", *tune->device != '\0' ? tune->device : "default", tune->measured);
	if (r.gpu && r.eo.algo == ED_DP)
		vlog("--algo dp runs on the CPU");
	char what[32] = "";
	if (r.eo.algo == ED_AUTO)
		snprintf(what, sizeof what, " (%s)", engines[r.eo.auto_algo]);
	vlog("engine: %s%s, block size %d%s", algos[r.eo.algo], what, r.eo.t,
	    r.path ? "; alignments on the CPU" : "");

	ed_run_begin(&r, tune, co.max_device_mem);
	ed_out_begin(&r, co.output);

	if (all) {
		run_all(&r, fa, fb);
	} else if (fa != NULL) {
		run_records(&r, fa, fb);
	} else if (optind == argc) {
		run_lines(&r, NULL);
	} else {
		for (int i = optind; i < argc; i++)
			run_lines(&r, argv[i]);
	}
	ed_run_flush(&r);
	ed_run_flush(&r);
	ed_out_end(&r);
	ed_run_free(&r);
#ifdef ACCELKIT_CUDA
	if (r.g != NULL) {
		vlog("GPU engines: %s; kernel time %.3f ms", ed_gpu_engines(r.g),
		    ed_gpu_kernel_ms(r.g));
		ed_gpu_close(r.g);
	}
#endif
	phases_report();
	vlog("%llu cells", (unsigned long long)r.cells);
	return 0;
}
