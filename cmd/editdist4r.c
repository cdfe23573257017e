/* editdist4r: edit (Levenshtein) distances of string pairs by the Four-Russians method,
 * on a CUDA GPU or the CPU. Options, reading and writing: the pairs are read here
 * (common/seq.h) and handed to the run (kernels/editdist4r_run.c), which starts CUDA
 * while they are read, chooses the device once the first batches show the work, and
 * sends the batches (kernels/editdist4r_batch.c) to it; they are written in input
 * order (kernels/editdist4r_out.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "editdist4r.h"
#include "editdist4r_run.h"
#include "err.h"
#include "input.h"
#include "seq.h"
#include "timer.h"

#define MAX_LEN ((size_t)INT32_MAX)

enum { OPT_ALL = CLI_OPT_PROG, OPT_ALGO, OPT_FORMAT, OPT_MODE };
enum { F_AUTO, F_LINES, F_FASTA, F_FASTQ };

static const char *const algos[] = {"auto", "4r", "bp", "dp", NULL};
static const char *const formats[] = {"auto", "lines", "fasta", "fastq", NULL};
static const char *const modes[] = {"global", "infix", "prefix", NULL};	/* enum ed_mode */

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] [FILE ...]\n"
	    "       %s [options] -a FA -b FB\n"
	    "Edit distances of string pairs by the Four-Russians method.\n"
	    "Each line of FILE is a pair \"A<TAB>B\"; with -a and -b the records of two FASTA,\n"
	    "FASTQ or one-sequence-a-line files pair up by position. One line per pair.\n"
	    "\n"
	    "  -a, --seqs-a FA        first sequences (FASTA, FASTQ or one a line)\n"
	    "  -b, --seqs-b FB        second sequences\n"
	    "      --format F         what FA and FB hold: auto (default: by the first byte),\n"
	    "                         lines, fasta or fastq\n"
	    "      --all-vs-all       every record of FA against every record of FB (a matrix)\n"
	    "  -u, --utf8             strings are UTF-8: count characters, not bytes\n"
	    "  -k, --max-dist K       print -1 for distances above K (computes only the band)\n"
	    "      --mode M           global (default: A against all of B), infix (A against\n"
	    "                         the best piece of B) or prefix (against a start of B);\n"
	    "                         infix and prefix add the match's START and END in B\n"
	    "  -p, --path             add a CIGAR of =, X, I, D that turns A into B\n"
	    "  -t, --block T          Four-Russians block size 1..%d (default %d on the CPU,\n"
	    "                         %d on a GPU); selects --algo 4r unless --algo is given\n"
	    "      --algo ALGO        auto (default), 4r (Four-Russians), bp (bit-parallel),\n"
	    "                         dp (plain dynamic programming, on the CPU)\n"
	    "  -o, --output FILE      write to FILE instead of standard output\n"
	    "  -O, --output-format F  text (default) or npy (float32 distances)\n"
	    "  -d, --device SPEC      auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M (default $ACCELKIT_DEVICE\n"
	    "                         or auto)\n"
	    "  -j, --threads N        CPU threads\n"
	    "      --max-device-mem B limit GPU memory use (e.g. 512M)\n"
	    "      --list-devices     list the devices and exit\n"
	    "  -v, --verbose          device, engine and phase times on standard error\n"
	    "      --progress         a progress line on stderr (a terminal's, by default)\n"
	    "  -h, --help             this help\n"
	    "  -V, --version          version\n",
	    progname, progname, FR_TMAX, ed_default_t("cpu"), ed_default_t("gpu nvidia"));
}

static void
check_len(const char *file, uint64_t line, size_t n)
{
	if (n > MAX_LEN)
		die_at(file, line, "a sequence of %zu bytes is too long (at most %zu)", n, MAX_LEN);
}

/* -u: ED_UTF8 when s is UTF-8 beyond ASCII, ED_BYTES when ASCII; else an error. */
static int
utf8_kind(const char *file, uint64_t line, const char *what, const unsigned char *s, size_t n)
{
	size_t count, bad;
	if (!ed_utf8_check(s, n, &count, &bad))
		die_at(file, line, "%s is not UTF-8 (byte %zu is 0x%02x); without -u, strings are "
		    "compared as bytes", what, bad + 1, s[bad]);
	return count == n ? ED_BYTES : ED_UTF8;
}

/* ---- records of -a and -b ---- */

/* A file of records: a sequence file as seq.h reads it, or with --format lines every
 * line a record, as it stands (a final '\r' goes). */
struct recs_in {
	seqfile *sq;
	input *lines;		/* --format lines */
	const char *name;
	uint64_t lineno, count;
};

static void
recs_open(struct recs_in *f, const char *path, int format)
{
	memset(f, 0, sizeof *f);
	if (format == F_LINES) {
		f->lines = in_open(path);
		f->name = in_name(f->lines);
		return;
	}
	f->sq = seq_open(path);
	f->name = seq_name(f->sq);
	enum seq_format got = seq_format(f->sq);
	int want = format == F_FASTA ? SEQ_FASTA : format == F_FASTQ ? SEQ_FASTQ : (int)got;
	if ((int)got != want)
		die("%s: not %s: the first line that is not blank does not start with '%c' "
		    "(--format %s)", f->name, want == SEQ_FASTA ? "FASTA" : "FASTQ",
		    want == SEQ_FASTA ? '>' : '@', formats[format]);
}

/* The next record, valid until the next call on f. */
static int
recs_next(struct recs_in *f, const unsigned char **s, size_t *len)
{
	if (f->lines != NULL) {
		char *l = in_getline(f->lines, len);
		if (l == NULL)
			return 0;
		*s = (const unsigned char *)l;
		f->lineno = in_lineno(f->lines);
		f->count++;
		return 1;
	}
	if (!seq_next(f->sq, s, len))
		return 0;
	f->lineno = seq_lineno(f->sq);
	f->count++;
	return 1;
}

static void
recs_close(struct recs_in *f)
{
	if (f->lines != NULL)
		in_close(f->lines);
	else
		seq_close(f->sq);
}

/* ---- the three input modes ---- */

/* The read phase since t0 (wall) and c0 (this thread's CPU), less the hand-overs'
 * (r->handover, r->handover_cpu since h0 and hc0); its part off the CPU, waiting for
 * the reader's threads, is "read (waited)", so that -v tells the reader's speed from
 * the hand-over's (issue 37). */
static void
read_phase(const struct ed_run *r, double t0, double h0, double c0, double hc0)
{
	double wall = now_sec() - t0 - (r->handover - h0);
	double cpu = ed_thread_cpu() - c0 - (r->handover_cpu - hc0);
	phase_add(PH_READ, wall);
	phase_add("read (waited)", MAX(0.0, wall - cpu));
}

static void
run_lines(struct ed_run *r, const char *path)
{
	input *in = in_open(path);
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec(), h0 = r->handover, c0 = ed_thread_cpu(), hc0 = r->handover_cpu;

	/* a pair a call: the file's name and the pair's line are looked up only for -u and
	 * for errors, since this loop runs once a pair, on one thread */
	while (seq_pair_next(in, &a, &alen, &b, &blen)) {
		int kind = ED_BYTES;
		if (MAX(alen, blen) > MAX_LEN)
			check_len(in_name(in), in_lineno(in), MAX(alen, blen));
		if (r->utf8) {
			const char *name = in_name(in);
			uint64_t line = in_lineno(in);
			kind = utf8_kind(name, line, "A", a, alen) | utf8_kind(name, line, "B", b, blen);
		}
		ed_run_add(r, a, alen, b, blen, kind);
	}
	in_close(in);
	read_phase(r, t0, h0, c0, hc0);
}

static void
run_records(struct ed_run *r, const char *fa, const char *fb, int format)
{
	struct recs_in A, B;
	const unsigned char *a, *b;
	size_t alen, blen;
	double t0 = now_sec(), h0 = r->handover, c0 = ed_thread_cpu(), hc0 = r->handover_cpu;

	recs_open(&A, fa, format);
	recs_open(&B, fb, format);
	for (;;) {
		int ga = recs_next(&A, &a, &alen), gb = recs_next(&B, &b, &blen);
		if (ga != gb) {
			struct recs_in *more = ga ? &A : &B, *fewer = ga ? &B : &A;
			die_at(more->name, more->lineno, "record %llu has no partner: %s has %llu records",
			    (unsigned long long)more->count, fewer->name,
			    (unsigned long long)fewer->count);
		}
		if (!ga)
			break;
		int kind = ED_BYTES;
		check_len(A.name, A.lineno, alen);
		check_len(B.name, B.lineno, blen);
		if (r->utf8)
			kind = utf8_kind(A.name, A.lineno, "the sequence", a, alen) |
			    utf8_kind(B.name, B.lineno, "the sequence", b, blen);
		ed_run_add(r, a, alen, b, blen, kind);
	}
	recs_close(&A);
	recs_close(&B);
	read_phase(r, t0, h0, c0, hc0);
}

/* Every record of a file into the run's record pool. */
static void
read_all(struct ed_run *r, const char *path, int format, struct ed_recs *rc)
{
	struct recs_in f;
	const unsigned char *s;
	size_t n;

	recs_open(&f, path, format);
	memset(rc, 0, sizeof *rc);
	while (recs_next(&f, &s, &n)) {
		check_len(f.name, f.lineno, n);
		int kind = r->utf8 ? utf8_kind(f.name, f.lineno, "the sequence", s, n) : ED_BYTES;
		if (!ed_recs_put(r, rc, s, n, kind))
			die("%s: the sequences of --all-vs-all exceed 4 GiB", f.name);
	}
	recs_close(&f);
}

static void
run_all(struct ed_run *r, const char *fa, const char *fb, int format)
{
	struct ed_recs A, B;
	double t0 = now_sec();

	read_all(r, fa, format, &A);
	read_all(r, fb, format, &B);
	phase_add(PH_READ, now_sec() - t0);
	ed_out_matrix(r, A.n, B.n);
	ed_run_all(r, &A, &B);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		CLI_MAXMEM_LONG,
		{"seqs-a", required_argument, NULL, 'a'},
		{"seqs-b", required_argument, NULL, 'b'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"all-vs-all", no_argument, NULL, OPT_ALL},
		{"utf8", no_argument, NULL, 'u'},
		{"max-dist", required_argument, NULL, 'k'},
		{"path", no_argument, NULL, 'p'},
		{"block", required_argument, NULL, 't'},
		{"algo", required_argument, NULL, OPT_ALGO},
		{"mode", required_argument, NULL, OPT_MODE},
		{NULL, 0, NULL, 0},
	};
	struct common_opts co;
	struct ed_run r;
	struct ed_job job;
	const char *fa = NULL, *fb = NULL;
	int all = 0, t = 0, algo = -1, format = -1, c;

	cli_init(argc, argv, &co);
	memset(&r, 0, sizeof r);
	memset(&job, 0, sizeof job);
	r.eo.maxdist = -1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "a:b:k:pt:u", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': fa = optarg; break;
		case 'b': fb = optarg; break;
		case OPT_FORMAT: format = cli_choice("--format", optarg, formats); break;
		case OPT_ALL: all = 1; break;
		case 'u': r.utf8 = 1; break;
		case 'k': r.eo.maxdist = cli_int("--max-dist", optarg, 0, INT32_MAX); break;
		case 'p': r.path = 1; break;
		case 't': t = (int)cli_int("--block", optarg, 1, FR_TMAX); break;
		case OPT_ALGO: algo = cli_choice("--algo", optarg, algos); break;
		case OPT_MODE: r.eo.mode = cli_choice("--mode", optarg, modes); break;
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
	if (format >= 0 && fa == NULL)
		usage_error("--format is for the records of -a FA and -b FB");
	if (all && fa == NULL)
		usage_error("--all-vs-all needs -a FA and -b FB");
	if (all && r.path)
		usage_error("--path cannot be combined with --all-vs-all");
	r.fmt = cli_out_format(&co, co.output);
	if (r.fmt == FMT_NPY && r.path)
		usage_error("--path writes text; it cannot be combined with -O npy");
	if (r.eo.mode != ED_GLOBAL && r.fmt == FMT_NPY && !all)
		usage_error("--mode %s writes START and END as text; -O npy is for its "
		    "--all-vs-all matrix", modes[r.eo.mode]);
	r.all = all;
	r.eo.algo = algo >= 0 ? algo : t > 0 ? ED_4R : ED_AUTO;
	format = MAX(format, F_AUTO);

	job.device = co.device;
	job.t = t;
	job.max_device_mem = co.max_device_mem;
	if (fa != NULL) {
		const char *ab[2] = {fa, fb};
		job.total = in_regular_bytes(ab, 2);
	} else {
		job.total = optind == argc ? in_regular_bytes(NULL, 1) :
		    in_regular_bytes((const char *const *)argv + optind, argc - optind);
	}
	ed_run_open(&r, &job);
	ed_out_begin(&r, co.output);

	if (all) {
		run_all(&r, fa, fb, format);
	} else if (fa != NULL) {
		run_records(&r, fa, fb, format);
		ed_run_end(&r);
	} else if (optind == argc) {
		run_lines(&r, NULL);
		ed_run_end(&r);
	} else {
		for (int i = optind; i < argc; i++)
			run_lines(&r, argv[i]);
		ed_run_end(&r);
	}
	ed_out_end(&r);
	ed_run_close(&r);
	return 0;
}
