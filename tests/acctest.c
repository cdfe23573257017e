/* acctest: a driver for the shared library's tests (tests/common.bats); never installed.
 * (Over 800 lines on purpose: one subcommand a library entry point, each a few dozen
 * lines, sharing the option parsing; splitting them would scatter a table of wrappers.)
 *
 *   acctest numcheck COUNT SEED        parse_double against strtod on COUNT numbers of
 *                                     every kind: "N numbers, K differ", exit 1 if K
 *   acctest read [-t f32|f64] [--nonfinite] [--table] [-o FILE] [-O text|npy] [FILE]
 *       read a dense matrix (text or NPY) and write it back; --table: through the
 *       table reader (table.h, default separators, every column) instead
 *   acctest stream [-j N] -n ROWS [FILE]   read in chunks of ROWS, a "--" line between chunks
 *   acctest lines [FILE]              echo lines as "N<TAB>line"
 *   acctest records [-j N] [-r lines|fasta|fastq] [-n MAX] [--slow MS] [FILE]
 *       the chunk engine alone: lines as "N<TAB>line" in input order; a line holding
 *       BAD is an error; -n closes the engine after MAX lines; -v counts the chunks
 *   acctest svm|mm [-j N] [FILE]      read libsvm or MatrixMarket: "ROWS COLS NNZ", then
 *                                     a row a line ("LABEL<TAB>" first for libsvm), i:v
 *   acctest pairs [-j N] [FILE]       A<TAB>B lines as "LINE<TAB>A<TAB>B"
 *   acctest seq [-j N] [FILE]         FASTA, FASTQ or plain records as "LINE<TAB>SEQUENCE"
 *                                     (both write each record at once)
 *   acctest speech [-j N] [--first] [FILE]   speech features (Kaldi text archive, text,
 *                                     NPY, HTK) written back as a Kaldi text archive;
 *                                     --first reads only each utterance's first row
 *   acctest par [-j N] COUNT PER      out_par: lines "I<TAB>I*I<TAB>I/4" for I < COUNT,
 *                                     formatted PER lines a chunk
 *   acctest int|double|size OPT VALUE [MIN MAX]   the checked number parsers
 *   acctest f32|f64 NUMBER...         shortest round-trip formatting
 *   acctest fixed DECIMALS NUMBER...  fixed-point formatting
 *   acctest cuda [-d SPEC]            choose a CUDA device and copy through it
 *   acctest cl [-d SPEC] [--platform TEXT]   build and run a kernel, check its result
 *   acctest stage-cl|stage-cuda [-d SPEC] [-k K] [--chunk BYTES] [--slow MS] FILE OUT
 *       copies FILE through a staging ring (clstaging.h, staging.h) to the device and
 *       back into OUT, K buffers of BYTES, the results written out slowly; prints
 *       "h2d|d2h CHUNK BUFFER" for each copy, and checks that a buffer comes back from
 *       the ring only once its last copy has completed; -v gives each way's GB/s
 *   acctest dies N                    N threads die at once ("thread I: dies"): one
 *                                     message, exit 1 (err.c's first error wins)
 *   acctest devwork [-w WORKERS] [-n UNITS] [--fail K] [--slow-worker W] [--seed S]
 *       [--push | --pool]
 *       the work engine (devwork.h) on CPU threads: unit k's result "k<TAB>k*k+1"
 *       in input order, each unit delayed at random (0-2 ms; 20 ms on worker W);
 *       --push: this thread makes the units (dw_slot, dw_put) instead of make;
 *       --pool: dw_open_threads, as the chunk engine runs (the workers make the
 *       units in turn, no state; one worker runs in this thread);
 *       --fail K fails unit K ("unit K: failed"); checks that every unit runs in the
 *       thread whose init made its worker's state, and that no more units are in
 *       flight than there are slots; -v gives each worker's share
 *   acctest devices                   both device lists
 *   acctest deal N L                  the positions of a list of N devices that each of L
 *                                     ranks of a host takes under mpirun (ranks.h), a line
 *                                     a rank: "R: P P ..."
 *   acctest tune DESC PATTERN...      the index of the first pattern that matches DESC
 *   acctest vocab FILE SHARES         the term counts of FILE's lines ("TERM:COUNT ..." a
 *                                     line, then "df" and each term's document count), its
 *                                     lines tokenised in SHARES consecutive shares of
 *                                     parts of 3 lines, each share's vocabulary packed and
 *                                     all of them adopted as docsim's MPI ranks do it
 *                                     (tokenize.h); 1 share: one vocabulary, no packs */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chunks.h"
#include "cli.h"
#include "clstaging.h"
#include "cudadev.h"
#include "dense.h"
#include "detach.h"
#include "devwork.h"
#include "input.h"
#include "numparse.h"
#include "opencl.h"
#include "output.h"
#include "ranks.h"
#include "rng.h"
#include "seq.h"
#include "sparse.h"
#include "speech.h"
#include "table.h"
#include "timer.h"
#include "tokenize.h"
#include "tune.h"

#ifdef ACCELKIT_CUDA
#include "cuda_check.h"
#include "staging.h"
#endif

extern const char acctest_cl[];
extern const char *const acctest_cl_files[];

static void
usage(FILE *f)
{
	fprintf(f, "usage: acctest read|stream|lines|records|svm|mm|pairs|seq|speech|par|stage-cl|stage-cuda|int|double|size|f32|f64|fixed|cuda|cl|devwork|devices|tune|ptx90a ...\n");
}

static int
cmd_read(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{"type", required_argument, NULL, 't'},
		{"nonfinite", no_argument, NULL, 'N'},
		{"table", no_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	enum dtype dt = DT_F32;
	int flags = 0, table = 0, c;
	static const char *const types[] = {"f32", "f64", NULL};

	argv[0] = (char *)progname;	/* getopt names the program in its messages */
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "t:NT", longopts, NULL)) != -1) {
		if (c == 't')
			dt = cli_choice("--type", optarg, types) ? DT_F64 : DT_F32;
		else if (c == 'N')
			flags |= MAT_ALLOW_NONFINITE;
		else if (c == 'T')
			table = 1;
		else
			cli_common(c, optarg, co, usage);
	}
	if (argc - optind > 1)
		usage_error("too many files");
	struct matrix m;
	struct table tb;
	double t = now_sec();
	if (table) {
		struct table_opts o = {.delim = TABLE_BLANKS, .dt = dt};
		table_read(optind < argc ? argv[optind] : NULL, &o, NULL, &tb);
		m = tb.m;
		memset(&tb.m, 0, sizeof tb.m);
		table_free(&tb);
	} else {
		mat_load(optind < argc ? argv[optind] : NULL, dt, flags, &m);
	}
	phase_add(PH_READ, now_sec() - t);
	vlog("read %zu x %zu", m.rows, m.cols);
	t = now_sec();
	mat_save(co->output, &m, cli_out_format(co, co->output));
	phase_add(PH_WRITE, now_sec() - t);
	phases_report();
	mat_free(&m);
	return 0;
}

static int
cmd_stream(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {CLI_COMMON_LONG, {NULL, 0, NULL, 0}};
	size_t rows = 0, got, chunk = 0;
	int c;

	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "n:", longopts, NULL)) != -1) {
		if (c == 'n')
			rows = (size_t)cli_int("-n", optarg, 1, 1 << 20);
		else
			cli_common(c, optarg, co, usage);
	}
	if (rows == 0)
		usage_error("stream needs -n ROWS");
	input *in = in_open(optind < argc ? argv[optind] : NULL);
	dstream *s = dstream_open(in, 0);
	size_t cols = dstream_cols(s);
	float *buf = xmallocarray(mul_size(rows, MAX(cols, 1), "chunk"), sizeof *buf);
	output *o = out_open(NULL);
	while ((got = dstream_read(s, rows, DT_F32, buf)) > 0) {
		if (chunk++ > 0)
			out_puts(o, "--\n");
		struct matrix m = {got, cols, DT_F32, buf};
		mat_write(o, &m, FMT_TEXT);
		out_flush(o);	/* a chunk's results go out before the next chunk is read */
	}
	out_close(o);
	dstream_close(s);
	in_close(in);
	free(buf);
	return 0;
}

static int
cmd_lines(int argc, char **argv)
{
	input *in = in_open(argc > 1 ? argv[1] : NULL);
	output *o = out_open(NULL);
	char *line;
	size_t len;
	while ((line = in_getline(in, &len)) != NULL) {
		out_u64(o, in_lineno(in));
		out_putc(o, '\t');
		out_write(o, line, len);
		out_putc(o, '\n');
	}
	out_close(o);
	in_close(in);
	return 0;
}

/* A chunk's lines for cmd_records: where each starts, its length and its line. */
struct rec_lines {
	size_t n, cap;
	const char **s;
	size_t *len;
	uint64_t *line;
};

static void
rec_parse(void *ctx, struct chunk *c)
{
	struct rec_lines *r = c->res;
	struct chunk_lines it;
	const char *s;
	size_t len;
	const int *rule = ctx;

	if (r == NULL)
		r = c->res = xcalloc(1, sizeof *r);
	r->n = 0;
	/* The cut rules keep records whole: a FASTA chunk starts at a header, a FASTQ
	 * chunk holds blank lines and groups of four lines, the first starting '@'. */
	if (*rule == 1 && c->index > 0 && c->data[0] != '>')
		return chunk_fail(c, 1, "chunk %llu does not start at a record",
		    (unsigned long long)c->index);
	if (*rule == 2) {
		uint64_t in_rec = 0;
		chunk_lines_init(&it, c);
		while ((s = chunk_line(&it, &len)) != NULL) {
			if (in_rec == 0 && len == 0)
				continue;
			if (in_rec == 0 && s[0] != '@')
				return chunk_fail(c, it.n, "chunk %llu: a record does not start here",
				    (unsigned long long)c->index);
			in_rec = (in_rec + 1) % 4;
		}
		if (in_rec != 0)
			return chunk_fail(c, it.n, "chunk %llu ends inside a record",
			    (unsigned long long)c->index);
	}
	chunk_lines_init(&it, c);
	while ((s = chunk_line(&it, &len)) != NULL) {
		if (memmem(s, len, "BAD", 3) != NULL)
			return chunk_fail(c, it.n, "bad record (line %llu of its chunk)",
			    (unsigned long long)it.n);
		if (r->n == r->cap) {
			r->cap = MAX(64, 2 * r->cap);
			r->s = xreallocarray(r->s, r->cap, sizeof *r->s);
			r->len = xreallocarray(r->len, r->cap, sizeof *r->len);
			r->line = xreallocarray(r->line, r->cap, sizeof *r->line);
		}
		r->s[r->n] = s;
		r->len[r->n] = len;
		r->line[r->n++] = it.n;
	}
	c->lines = it.n;
}

static void
rec_free(void *res)
{
	struct rec_lines *r = res;
	free(r->s);
	free(r->len);
	free(r->line);
	free(r);
}

static int
cmd_records(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{"rule", required_argument, NULL, 'r'},
		{"max", required_argument, NULL, 'n'},
		{"slow", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	static const char *const rules[] = {"lines", "fasta", "fastq", NULL};
	static const chunk_cut_fn cuts[] = {chunk_cut_lines, chunk_cut_fasta, chunk_cut_fastq};
	int c, rule = 0;
	long long max = -1, slow_ms = 0;

	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "r:n:s:", longopts, NULL)) != -1) {
		if (c == 'r')
			rule = cli_choice("--rule", optarg, rules);
		else if (c == 'n')
			max = cli_int("--max", optarg, 0, 1LL << 62);
		else if (c == 's')
			slow_ms = cli_int("--slow", optarg, 0, 10000);
		else
			cli_common(c, optarg, co, usage);
	}
	struct chunk_ops ops = {.cut = cuts[rule], .parse = rec_parse, .free_res = rec_free};
	input *in = in_open(optind < argc ? argv[optind] : NULL);
	chunks *e = chunks_open(in, &ops, &rule);
	output *o = out_open(NULL);
	struct chunk *ch;
	unsigned long long nchunks = 0, done = 0;
	while ((max < 0 || (long long)done < max) && (ch = chunks_next(e)) != NULL) {
		struct rec_lines *r = ch->res;
		nchunks++;
		for (size_t i = 0; i < r->n && (max < 0 || (long long)done < max); i++, done++) {
			out_u64(o, ch->line0 + r->line[i]);
			out_putc(o, '\t');
			out_write(o, r->s[i], r->len[i]);
			out_putc(o, '\n');
		}
		out_flush(o);
		if (ch->err_line != 0 && (max < 0 || (long long)done < max))
			chunk_die(e, ch);
		if (slow_ms > 0)
			nanosleep(&(struct timespec){slow_ms / 1000, slow_ms % 1000 * 1000000}, NULL);
	}
	chunks_close(e);
	vlog("%llu chunks, %llu lines", nchunks, (unsigned long long)in_lineno(in));
	in_close(in);
	out_close(o);
	return 0;
}

/* Options of the commands that take only the common ones, then at most one file. */
static const char *
common_args(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {CLI_COMMON_LONG, {NULL, 0, NULL, 0}};
	int c;
	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1)
		cli_common(c, optarg, co, usage);
	if (argc - optind > 1)
		usage_error("too many files");
	return optind < argc ? argv[optind] : NULL;
}

static int
cmd_sparse(int argc, char **argv, struct common_opts *co)
{
	int svm = strcmp(argv[0], "svm") == 0;
	input *in = in_open(common_args(argc, argv, co));
	struct csr m;
	double *labels = NULL;
	if (svm)
		svm_read(in, &m, &labels);
	else
		mm_read(in, &m);
	output *o = out_open(NULL);
	out_printf(o, "%zu %zu %llu\n", m.rows, m.cols, (unsigned long long)csr_nnz(&m));
	for (size_t i = 0; i < m.rows; i++) {
		if (svm) {
			out_f64(o, labels[i]);
			out_putc(o, '\t');
		}
		for (uint64_t k = m.ptr[i]; k < m.ptr[i + 1]; k++) {
			if (k > m.ptr[i])
				out_putc(o, ' ');
			out_u64(o, m.idx[k]);
			out_putc(o, ':');
			out_f32(o, m.val[k]);
		}
		out_putc(o, '\n');
	}
	out_close(o);
	csr_free(&m);
	free(labels);
	in_close(in);
	return 0;
}

static int
cmd_seq(int argc, char **argv, struct common_opts *co)
{
	int pairs = strcmp(argv[0], "pairs") == 0;
	const char *path = common_args(argc, argv, co);
	output *o = out_open(NULL);
	const unsigned char *a, *b;
	size_t alen, blen;

	if (pairs) {
		input *in = in_open(path);
		while (seq_pair_next(in, &a, &alen, &b, &blen)) {
			out_u64(o, in_lineno(in));
			out_putc(o, '\t');
			out_write(o, a, alen);
			out_putc(o, '\t');
			out_write(o, b, blen);
			out_putc(o, '\n');
			out_flush(o);	/* what came before an error is seen */
		}
		in_close(in);
	} else {
		seqfile *f = seq_open(path);
		while (seq_next(f, &a, &alen)) {
			out_u64(o, seq_lineno(f));
			out_putc(o, '\t');
			out_write(o, a, alen);
			out_putc(o, '\n');
			out_flush(o);
		}
		vlog("%llu records", (unsigned long long)seq_count(f));
		seq_close(f);
	}
	out_close(o);
	return 0;
}

static int
cmd_speech(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG, {"first", no_argument, NULL, 'F'}, {NULL, 0, NULL, 0},
	};
	int c, first = 0;
	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == 'F')
			first = 1;
		else
			cli_common(c, optarg, co, usage);
	}
	speech *s = speech_open(optind < argc ? argv[optind] : NULL, SPEECH_AUTO);
	output *o = out_open(NULL);
	const char *key;
	size_t dims, got;
	int64_t rows;
	float *buf = NULL;
	while (speech_next(s, &key, &dims, &rows)) {
		size_t n = 0;
		buf = xreallocarray(buf, 3 * MAX(dims, 1), sizeof *buf);
		ark_begin(o, key);
		while ((got = speech_read(s, buf, first ? 1 : 3, dims, dims)) > 0) {
			for (size_t r = 0; r < got; r++)
				ark_row(o, buf + r * dims, dims);
			n += got;
			if (first)
				break;
		}
		ark_end(o, n);
	}
	free(buf);
	speech_close(s);
	out_close(o);
	return 0;
}

static void
par_lines(void *ctx, size_t first, size_t count, struct obuf *b)
{
	(void)ctx;
	for (size_t i = first; i < first + count; i++) {
		char *w = obuf_room(b, 100);
		w += sprintf(w, "%zu\t%llu\t", i, (unsigned long long)i * i);
		w += fmt_f64(w, (double)i / 4);
		*w++ = '\n';
		b->len = (size_t)(w - b->p);
	}
}

static int
cmd_par(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {CLI_COMMON_LONG, {NULL, 0, NULL, 0}};
	int c;
	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1)
		cli_common(c, optarg, co, usage);
	if (argc - optind != 2)
		usage_error("par needs COUNT PER");
	size_t n = (size_t)cli_int("COUNT", argv[optind], 0, 1LL << 40);
	size_t per = (size_t)cli_int("PER", argv[optind + 1], 1, 1LL << 40);
	output *o = out_open(co->output);
	out_par(o, n, per, par_lines, NULL);
	out_close(o);
	return 0;
}

static int
cmd_number(int argc, char **argv)
{
	if (argc < 3)
		usage_error("%s needs OPT VALUE", argv[0]);
	if (strcmp(argv[0], "int") == 0)
		printf("%lld\n", cli_int(argv[1], argv[2], argc > 4 ? atoll(argv[3]) : -1000000,
		    argc > 4 ? atoll(argv[4]) : 1000000));
	else if (strcmp(argv[0], "double") == 0)
		printf("%.17g\n", cli_double(argv[1], argv[2], argc > 4 ? atof(argv[3]) : -1e300,
		    argc > 4 ? atof(argv[4]) : 1e300));
	else
		printf("%zu\n", cli_size(argv[1], argv[2]));
	stdout_finish();
	return 0;
}

/* numcheck's pseudo-random numbers (common/rng.h), seeded once */
static struct rng nc_rng;

static uint64_t
nc_next(void)
{
	return rng_next(&nc_rng);
}

/* One number's text of some kind into b (room for 64 bytes and more). */
static void
nc_text(char *b, size_t size)
{
	static const char *const fixed[] = {"inf", "-Infinity", "nan", "-NAN(12ab)", "INFx",
	    "0x1.8p3", "-0X1P-1074", "0x.8", ".5", "5.", "-.e3", "1e", "1e+", "+-1", "-0",
	    "0e999999999", "1e-99999999", "1e99999999", "1.7976931348623157e308",
	    "1.7976931348623158e308", "1.7976931348623159e308", "2.2250738585072014e-308",
	    "2.2250738585072011e-308", "4.9e-324", "2.4703282292062327e-324",
	    "2.4703282292062328e-324", "9007199254740993", "9007199254740992.5e0",
	    "18446744073709551615", "18446744073709551616", "0.000000000000000000000001234",
	    "123456789012345678901234567890e-30", "7e22", "7e23", "1e-342", "1e-343", "1e308",
	    "1e309", "1.e5", "00000000000000000000000000001", "1.0000000000000000000000001"};
	uint64_t r = nc_next(), k = r % 8;
	double d;
	r = nc_next();
	memcpy(&d, &r, sizeof d);	/* any bits: any double, NaN and Inf included */
	switch (k) {
	case 0:
		snprintf(b, size, "%s", fixed[nc_next() % (sizeof fixed / sizeof fixed[0])]);
		break;
	case 1:	/* as numpy.savetxt writes them by default, and other printf forms */
		snprintf(b, size, (const char *const[]){"%.18e", "%.17g", "%.16g", "%.15g",
		    "%.20g", "%a", "%.9g", "%g"}[nc_next() % 8], d);
		break;
	case 2: case 3: {	/* 1 to 25 digits, a point anywhere, an exponent of -400 to 400 */
		int nd = 1 + (int)(nc_next() % 25), dot = (int)(nc_next() % (uint64_t)(nd + 2));
		size_t n = 0;
		if (nc_next() % 2)
			b[n++] = "-+"[nc_next() % 2];
		for (int i = 0; i < nd; i++) {
			if (i == dot)
				b[n++] = '.';
			b[n++] = (char)('0' + nc_next() % 10);
		}
		if (nc_next() % 2)
			snprintf(b + n, size - n, "e%d", (int)(nc_next() % 801) - 400);
		else
			b[n] = '\0';
		break;
	}
	case 4: {	/* a tie between two doubles: 53 bits, then one half, times 10^z/10^z */
		int sh = 1 + (int)(nc_next() % 10), z = (int)(nc_next() % 5);
		uint64_t m = ((nc_next() >> 11) | (uint64_t)1 << 52) << sh | (uint64_t)1 << (sh - 1);
		if (nc_next() % 4 == 0)
			m ^= (uint64_t)1 << (sh - 1) | (nc_next() % 2);	/* or just beside it */
		snprintf(b, size, "%llu%.*se-%d", (unsigned long long)m, z, "00000", z);
		break;
	}
	default:	/* a double near a power of ten or two, or a subnormal, printed long */
		d = ldexp(1.0 + (double)(nc_next() >> 11) / 9007199254740992.0,
		    (int)(nc_next() % 2100) - 1075);
		snprintf(b, size, (const char *const[]){"%.17g", "%.19g", "%.15e",
		    "%.25g"}[nc_next() % 4], d);
		break;
	}
}

/* acctest numcheck COUNT SEED: parse_double against strtod, bit for bit and end for
 * end, on COUNT numbers of every kind; prints the first that differ. */
static int
cmd_numcheck(int argc, char **argv)
{
	if (argc != 3)
		usage_error("numcheck needs COUNT SEED");
	long long count = cli_int("COUNT", argv[1], 1, 1LL << 40);
	rng_seed(&nc_rng, (uint64_t)cli_int("SEED", argv[2], 0, 1LL << 40));
	long long bad = 0;
	char b[256];
	for (long long i = 0; i < count; i++) {
		nc_text(b, sizeof b);
		char *eb;
		double a, w = strtod(b, &eb);
		const char *ea = parse_double(b, &a);
		uint64_t ba, bw;
		memcpy(&ba, &a, sizeof ba);
		memcpy(&bw, &w, sizeof bw);
		if (ea != eb || (ea != b && ba != bw && !(isnan(a) && isnan(w)))) {
			if (bad++ < 10)
				printf("differs: '%s': %.17g (%td bytes) where strtod gives %.17g (%td)\n",
				    b, a, ea - b, w, eb - b);
		}
	}
	printf("%lld numbers, %lld differ\n", count, bad);
	stdout_finish();
	return bad != 0;
}

static int
cmd_format(int argc, char **argv)
{
	output *o = out_open(NULL);
	int fixed = strcmp(argv[0], "fixed") == 0, first = fixed ? 2 : 1;
	int decimals = fixed && argc > 1 ? (int)cli_int("DECIMALS", argv[1], 0, 40) : 0;
	for (int i = first; i < argc; i++) {
		double v = strtod(argv[i], NULL);
		if (fixed)
			out_fixed(o, v, decimals);
		else if (strcmp(argv[0], "f32") == 0)
			out_f32(o, (float)v);
		else
			out_f64(o, v);
		out_putc(o, '\n');
	}
	out_close(o);
	return 0;
}

static int
cmd_cuda(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {CLI_COMMON_LONG, {NULL, 0, NULL, 0}};
	int c;
	argv[0] = (char *)progname;	/* getopt names the program in its messages */
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1)
		cli_common(c, optarg, co, usage);
	cli_finish(co);
	struct cuda_dev d;
	cuda_select(co->device, 0, &d);
	if (!d.gpu) {
		printf("cpu\n");
		stdout_finish();
		return 0;
	}
#ifdef ACCELKIT_CUDA
	enum { N = 1 << 20 };
	float *h = xmallocarray(N, sizeof *h), *back = xmallocarray(N, sizeof *back), *dev;
	for (int i = 0; i < N; i++)
		h[i] = (float)i * 0.5f;
	CUDA_CHECK(cudaMalloc((void **)&dev, N * sizeof *dev));
	CUDA_CHECK(cudaMemcpy(dev, h, N * sizeof *dev, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(back, dev, N * sizeof *dev, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaFree(dev));
	if (memcmp(h, back, N * sizeof *h) != 0)
		die("CUDA round trip changed the data");
	printf("gpu %s\n", d.name);
	free(h);
	free(back);
#endif
	stdout_finish();
	return 0;
}

static int
cmd_cl(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG, CLI_PLATFORM_LONG, {NULL, 0, NULL, 0},
	};
	int c;
	argv[0] = (char *)progname;	/* getopt names the program in its messages */
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT, longopts, NULL)) != -1)
		cli_common(c, optarg, co, usage);
	cli_finish(co);
	struct clx x;
	clx_open(co->device, co->platform, 0, &x);
	cl_program prog = clx_build(&x, "acctest", acctest_cl, acctest_cl_files, "-D SCALE=3.0f");
	cl_kernel k = clx_kernel(prog, "axpy");
	enum { N = 1000 };
	float hx[N], hy[N];
	for (int i = 0; i < N; i++) {
		hx[i] = (float)i;
		hy[i] = 1.0f;
	}
	cl_mem bx = CL_CREATE(clCreateBuffer(x.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
	    sizeof hx, hx, &cl_err_));
	cl_mem by = CL_CREATE(clCreateBuffer(x.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
	    sizeof hy, hy, &cl_err_));
	cl_int n = N;
	CL_CHECK(clSetKernelArg(k, 0, sizeof n, &n));
	CL_CHECK(clSetKernelArg(k, 1, sizeof bx, &bx));
	CL_CHECK(clSetKernelArg(k, 2, sizeof by, &by));
	size_t global = 1024;
	CL_CHECK(clEnqueueNDRangeKernel(x.queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
	CL_CHECK(clEnqueueReadBuffer(x.queue, by, CL_TRUE, 0, sizeof hy, hy, 0, NULL, NULL));
	for (int i = 0; i < N; i++)
		if (hy[i] != 1.0f + 3.0f * (float)i)
			die("OpenCL result wrong at %d: %g", i, hy[i]);
	printf("%s %s\n", x.is_gpu ? "gpu" : "cpu", x.name);
	clReleaseMemObject(bx);
	clReleaseMemObject(by);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clx_close(&x);
	stdout_finish();
	return 0;
}

/* ---- the staging rings: one flow, two back ends ---- */

struct ring {
	size_t cap;
	void *(*acquire)(struct ring *r, int *index);	/* checks the last copy is done */
	void *(*ptr)(void *b);
	void (*h2d)(struct ring *r, void *b, size_t off, size_t n);
	void (*d2h)(struct ring *r, void *b, size_t off, size_t n);
	void (*wait)(void *b);
	void (*release)(void *b);
	void (*sync)(struct ring *r);	/* waits for every copy */
};

/* FILE to the device through the ring, then back into OUT, the oldest result written
 * out (slowly) while the next ones are being copied. */
static void
ring_copy(struct ring *r, int k, input *in, output *out, long long slow_ms)
{
	size_t off = 0, n;
	int idx;
	unsigned seq = 0;
	void *b;
	double t = now_sec();

	for (;;) {
		b = r->acquire(r, &idx);
		if ((n = in_read(in, r->ptr(b), r->cap)) == 0) {
			r->release(b);
			break;
		}
		r->h2d(r, b, off, n);
		printf("h2d %u %d\n", seq++, idx);
		off += n;
	}
	r->sync(r);
	t = now_sec() - t;
	vlog("to the device: %zu bytes in %.1f ms, %.2f GB/s, reading the file included", off,
	    t * 1e3, (double)off / t / 1e9);
	t = now_sec();
	void **q = xcalloc((size_t)k, sizeof *q);
	size_t *qlen = xcalloc((size_t)k, sizeof *qlen), sent = 0;
	int qn = 0;
	seq = 0;
	while (sent < off || qn > 0) {
		while (qn < k && sent < off) {	/* every buffer not waiting to be written */
			q[qn] = r->acquire(r, &idx);
			qlen[qn] = MIN(r->cap, off - sent);
			r->d2h(r, q[qn], sent, qlen[qn]);
			printf("d2h %u %d\n", seq++, idx);
			sent += qlen[qn++];
		}
		r->wait(q[0]);
		out_write(out, r->ptr(q[0]), qlen[0]);
		if (slow_ms > 0)
			nanosleep(&(struct timespec){slow_ms / 1000, slow_ms % 1000 * 1000000}, NULL);
		r->release(q[0]);
		memmove(q, q + 1, (size_t)--qn * sizeof *q);
		memmove(qlen, qlen + 1, (size_t)qn * sizeof *qlen);
	}
	t = now_sec() - t;
	vlog("back: %zu bytes in %.1f ms, %.2f GB/s, writing the file included", off, t * 1e3,
	    (double)off / t / 1e9);
	free(q);
	free(qlen);
}

struct cl_ring {
	struct ring r;
	clstaging *s;
	cl_command_queue queue;
	cl_mem dev;
	cl_event *last;		/* each buffer's last copy, kept to check it */
};

static void *
cl_acquire(struct ring *r, int *index)
{
	struct cl_ring *c = (struct cl_ring *)r;
	struct clstage *b = clstaging_acquire(c->s);
	cl_int st;
	*index = b->index;
	if (c->last[b->index] != NULL) {
		CL_CHECK(clGetEventInfo(c->last[b->index], CL_EVENT_COMMAND_EXECUTION_STATUS,
		    sizeof st, &st, NULL));
		if (st != CL_COMPLETE)
			die("buffer %d came back before its copy completed", b->index);
		CL_CHECK(clReleaseEvent(c->last[b->index]));
		c->last[b->index] = NULL;
	}
	return b;
}

static void *
cl_ptr(void *b)
{
	return ((struct clstage *)b)->p;
}

static void
cl_keep(struct cl_ring *c, struct clstage *b)
{
	CL_CHECK(clRetainEvent(b->done));
	c->last[b->index] = b->done;
}

static void
cl_h2d(struct ring *r, void *b, size_t off, size_t n)
{
	struct cl_ring *c = (struct cl_ring *)r;
	clstaging_h2d(c->s, b, c->dev, off, n);
	cl_keep(c, b);
}

static void
cl_d2h(struct ring *r, void *b, size_t off, size_t n)
{
	struct cl_ring *c = (struct cl_ring *)r;
	clstaging_d2h(c->s, b, c->dev, off, n);
	cl_keep(c, b);
}

static void
cl_wait(void *b)
{
	clstaging_wait(b);
}

static void
cl_release(void *b)
{
	clstaging_release(b);
}

static void
cl_sync(struct ring *r)
{
	CL_CHECK(clFinish(((struct cl_ring *)r)->queue));
}

#ifdef ACCELKIT_CUDA
struct cuda_ring {
	struct ring r;
	staging *s;
	cudaStream_t stream;
	char *dev;
};

static void *
cuda_acquire(struct ring *r, int *index)
{
	struct stage *b = staging_acquire(((struct cuda_ring *)r)->s);
	*index = b->index;
	if (cudaEventQuery(b->done) != cudaSuccess)
		die("buffer %d came back before its copy completed", b->index);
	return b;
}

static void *
cuda_ptr(void *b)
{
	return ((struct stage *)b)->p;
}

static void
cuda_h2d(struct ring *r, void *b, size_t off, size_t n)
{
	struct cuda_ring *c = (struct cuda_ring *)r;
	staging_h2d(c->s, b, c->dev + off, n);
}

static void
cuda_d2h(struct ring *r, void *b, size_t off, size_t n)
{
	struct cuda_ring *c = (struct cuda_ring *)r;
	staging_d2h(c->s, b, c->dev + off, n);
}

static void
cuda_wait(void *b)
{
	staging_wait(b);
}

static void
cuda_release(void *b)
{
	staging_release(b);
}

static void
cuda_sync(struct ring *r)
{
	CUDA_CHECK(cudaStreamSynchronize(((struct cuda_ring *)r)->stream));
}
#endif

static int
cmd_stage(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG, CLI_PLATFORM_LONG,
		{"chunk", required_argument, NULL, 'c'},
		{"slow", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	int cl = strcmp(argv[0], "stage-cl") == 0, c, k = 2;
	size_t chunk = 1 << 20;
	long long slow_ms = 0;

	argv[0] = (char *)progname;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "k:c:s:", longopts, NULL)) != -1) {
		if (c == 'k')
			k = (int)cli_int("-k", optarg, 1, 64);
		else if (c == 'c')
			chunk = cli_size("--chunk", optarg);
		else if (c == 's')
			slow_ms = cli_int("--slow", optarg, 0, 10000);
		else
			cli_common(c, optarg, co, usage);
	}
	if (argc - optind != 2 || chunk == 0)
		usage_error("stage needs FILE OUT");
	cli_finish(co);
	input *in = in_open(argv[optind]);
	int64_t size = in_remaining(in);
	if (size < 0)
		die("%s: the staging test needs a regular file", in_name(in));
	output *out = out_open(argv[optind + 1]);
	if (cl) {
		struct clx x;
		clx_open(co->device, co->platform, 0, &x);
		struct cl_ring r = {.r = {chunk, cl_acquire, cl_ptr, cl_h2d, cl_d2h, cl_wait, cl_release,
		    cl_sync}, .queue = x.queue};
		r.s = clstaging_open(x.ctx, x.queue, k, chunk);
		r.dev = CL_CREATE(clCreateBuffer(x.ctx, CL_MEM_READ_WRITE, MAX((size_t)size, 1),
		    NULL, &cl_err_));
		r.last = xcalloc((size_t)k, sizeof *r.last);
		ring_copy(&r.r, k, in, out, slow_ms);
		for (int i = 0; i < k; i++)
			if (r.last[i] != NULL)
				CL_CHECK(clReleaseEvent(r.last[i]));
		free(r.last);
		clstaging_close(r.s);
		CL_CHECK(clReleaseMemObject(r.dev));
		clx_close(&x);
	} else {
		struct cuda_dev d;
		cuda_select(co->device, 0, &d);
		if (!d.gpu)
			die("stage-cuda needs a GPU");
#ifdef ACCELKIT_CUDA
		struct cuda_ring r = {.r = {chunk, cuda_acquire, cuda_ptr, cuda_h2d, cuda_d2h, cuda_wait,
		    cuda_release, cuda_sync}};
		CUDA_CHECK(cudaStreamCreate(&r.stream));
		r.s = staging_open(k, chunk, r.stream);
		if (!staging_pinned(r.s))
			die("staging: the buffers are not pinned");
		CUDA_CHECK(cudaMalloc((void **)&r.dev, MAX((size_t)size, 1)));
		ring_copy(&r.r, k, in, out, slow_ms);
		staging_close(r.s);
		/* and cuda_pin on memory that exists: a pinned copy there and back */
		char *h = xmalloc(MAX((size_t)size, 1));
		memset(h, 0, MAX((size_t)size, 1));
		if (!cuda_pin(h, MAX((size_t)size, 1), "acctest"))
			die("cuda_pin failed");
		CUDA_CHECK(cudaMemcpy(h, r.dev, (size_t)size, cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(r.dev, h, (size_t)size, cudaMemcpyHostToDevice));
		cuda_unpin(h);
		free(h);
		CUDA_CHECK(cudaFree(r.dev));
		CUDA_CHECK(cudaStreamDestroy(r.stream));
#endif
	}
	out_close(out);
	in_close(in);
	stdout_finish();
	return 0;
}

/* ---- acctest devwork: the device engine on CPU threads ---- */

struct dw_unit {
	uint64_t k, result;
	unsigned delay_us;		/* drawn when made, so that runs differ only in timing */
};

struct dw_test {
	struct rng rng;
	uint64_t fail;			/* the unit that fails, or UINT64_MAX */
	int slow;			/* the slow worker, or -1 */
	int nslots;
	_Atomic uint64_t consumed;	/* units the caller has taken */
	_Atomic int bad;		/* a check failed: its message was printed */
};

struct dw_state {
	pthread_t self;
	int w;
};

static void *
dwt_init(void *ctx, int w)
{
	(void)ctx;
	struct dw_state *s = xcalloc(1, sizeof *s);
	s->self = pthread_self();
	s->w = w;
	return s;
}

static int
dwt_make(void *ctx, void *slot, uint64_t k)
{
	struct dw_test *t = ctx;
	struct dw_unit *u = slot;
	/* Units k - nslots and before must be the caller's already: else more than nslots
	 * would be in flight. */
	if (k >= (uint64_t)t->nslots && t->consumed < k - (uint64_t)t->nslots + 1) {
		warnmsg("unit %llu made while only %llu were taken (%d slots)",
		    (unsigned long long)k, (unsigned long long)t->consumed, t->nslots);
		t->bad = 1;
	}
	u->k = k;
	u->result = 0;
	u->delay_us = (unsigned)(rng_next(&t->rng) % 2000);
	return DW_MORE;
}

static int
dwt_process(void *ctx, void *state, int w, void *slot, char *err)
{
	struct dw_test *t = ctx;
	struct dw_state *s = state;
	struct dw_unit *u = slot;
	if (s != NULL && (s->w != w || !pthread_equal(s->self, pthread_self()))) {
		warnmsg("unit %llu: worker %d's state used in another thread",
		    (unsigned long long)u->k, w);
		t->bad = 1;
	}
	unsigned us = w == t->slow ? 20000 : u->delay_us;
	struct timespec ts = {0, (long)us * 1000};
	nanosleep(&ts, NULL);
	if (u->k == t->fail) {
		snprintf(err, DW_ERR, "unit %llu: failed", (unsigned long long)u->k);
		return 1;
	}
	u->result = u->k * u->k + 1;
	return 0;
}

static void
dwt_fini(void *ctx, void *state, int w)
{
	(void)ctx;
	(void)w;
	free(state);
}

/* The units: a count, made on demand (make returns DW_LAST at the count). */
struct dw_count {
	struct dw_test t;
	uint64_t n;
};

static int
dwc_make(void *ctx, void *slot, uint64_t k)
{
	struct dw_count *c = ctx;
	if (k >= c->n)
		return DW_NONE;
	dwt_make(&c->t, slot, k);
	return k + 1 == c->n ? DW_LAST : DW_MORE;
}

static void
dwt_emit(output *o, const struct dw_unit *u, struct dw_test *t)
{
	out_printf(o, "%llu\t%llu\n", (unsigned long long)u->k, (unsigned long long)u->result);
	out_flush(o);	/* what came before a failed unit is out when it fails */
	t->consumed++;
}

static int
cmd_devwork(int argc, char **argv, struct common_opts *co)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{"fail", required_argument, NULL, 'F'},
		{"slow-worker", required_argument, NULL, 'S'},
		{"seed", required_argument, NULL, 's'},
		{"push", no_argument, NULL, 'P'},
		{"pool", no_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct dw_count c = {.n = 100};
	int workers = 2, ch, push = 0, threads = 0;
	uint64_t seed = 1;

	c.t.fail = UINT64_MAX;
	c.t.slow = -1;
	argv[0] = (char *)progname;
	while ((ch = getopt_long(argc, argv, CLI_COMMON_SHORT "w:n:", longopts, NULL)) != -1) {
		if (ch == 'w')
			workers = (int)cli_int("-w", optarg, 1, 64);
		else if (ch == 'n')
			c.n = (uint64_t)cli_int("-n", optarg, 0, 1 << 24);
		else if (ch == 'F')
			c.t.fail = (uint64_t)cli_int("--fail", optarg, 0, 1 << 24);
		else if (ch == 'S')
			c.t.slow = (int)cli_int("--slow-worker", optarg, 0, 63);
		else if (ch == 's')
			seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX);
		else if (ch == 'P')
			push = 1;
		else if (ch == 'T')
			threads = 1;
		else
			cli_common(ch, optarg, co, usage);
	}
	rng_seed(&c.t.rng, seed);
	if (push && threads)
		usage_error("--push and --pool exclude each other");
	c.t.nslots = threads && workers == 1 ? 1 : dw_slots(workers);
	struct dw_unit *units = xcalloc((size_t)c.t.nslots, sizeof *units);
	void **slots = xcalloc((size_t)c.t.nslots, sizeof *slots);
	for (int i = 0; i < c.t.nslots; i++)
		slots[i] = &units[i];
	static const struct dw_ops ops = {dwt_init, dwc_make, dwt_process, dwt_fini, NULL};
	static const struct dw_ops push_ops = {dwt_init, NULL, dwt_process, dwt_fini, NULL};
	static const struct dw_ops thread_ops = {NULL, dwc_make, dwt_process, NULL, NULL};
	dw *e = threads ? dw_open_threads(&thread_ops, &c, slots, c.t.nslots, workers) :
	    dw_open(push ? &push_ops : &ops, &c, slots, c.t.nslots, workers);
	output *o = out_open(co->output);
	if (push) {
		for (uint64_t k = 0; k < c.n; k++) {
			void *s;
			while ((s = dw_slot(e)) == NULL || dw_ready(e)) {
				if (s != NULL)
					dw_unslot(e, s);	/* results first, where some are ready */
				dwt_emit(o, dw_next(e, NULL), &c.t);
				dw_done(e);
			}
			dwt_make(&c.t, s, k);
			dw_put(e, s);
		}
		dw_end(e);
	}
	for (struct dw_unit *u; (u = dw_next(e, NULL)) != NULL;)
		dwt_emit(o, u, &c.t);
	char (*names)[32] = xcalloc((size_t)workers, sizeof *names);
	const char **np = xcalloc((size_t)workers, sizeof *np);
	for (int w = 0; w < workers; w++) {
		snprintf(names[w], sizeof names[w], "worker:%d", w);
		np[w] = names[w];
	}
	dw_report(e, np);
	dw_close(e);
	out_close(o);
	free(names);
	free(np);
	free(slots);
	free(units);
	return c.t.bad ? 1 : 0;
}

static int
cmd_vocab(int argc, char **argv)
{
	if (argc != 3)
		usage_error("vocab FILE SHARES");
	size_t shares = (size_t)cli_int("SHARES", argv[2], 1, 64), n = 0, cap = 64, len;
	input *in = in_open(argv[1]);
	char **line = xmallocarray(cap, sizeof *line), *l;
	size_t *llen = xmallocarray(cap, sizeof *llen);
	while ((l = in_getline(in, &len)) != NULL) {
		if (n == cap) {
			cap *= 2;
			line = xreallocarray(line, cap, sizeof *line);
			llen = xreallocarray(llen, cap, sizeof *llen);
		}
		line[n] = xstrdup(l);
		llen[n++] = len;
	}
	in_close(in);
	struct tok_vocab **v = xmallocarray(shares, sizeof *v);
	struct tok_part ***parts = xmallocarray(shares, sizeof *parts);
	size_t *np = xcalloc(shares, sizeof *np), total = 0;
	char **pack = xmallocarray(shares, sizeof *pack);
	size_t *plen = xmallocarray(shares, sizeof *plen);
	for (size_t s = 0; s < shares; s++) {
		size_t a = n * s / shares, b = n * (s + 1) / shares;
		v[s] = tok_vocab_new();
		parts[s] = xmallocarray(b - a + 1, sizeof **parts);
		for (size_t i = a; i < b; i++) {
			if ((i - a) % 3 == 0)
				parts[s][np[s]++] = tok_part_new();
			tok_part_add(parts[s][np[s] - 1], line[i], llen[i]);
		}
		for (size_t p = 0; p < np[s]; p++)
			tok_vocab_merge(v[s], parts[s][p]);
		pack[s] = tok_vocab_pack(v[s], &plen[s]);
		total += plen[s];
	}
	struct tok_opts o = {1, 1.0, 0, 1, NULL, 0};
	for (size_t s = 0; s < shares; s++) {
		if (shares > 1) {
			char *all = xmalloc(MAX(total, 1)), *at = all;
			for (size_t t = 0; t < shares; t++) {
				memcpy(at, pack[t], plen[t]);
				at += plen[t];
			}
			tok_vocab_adopt(v[s], all, total);
		}
		tok_vocab_finish(v[s], &o, n);
		struct tok_counts c;
		tok_count(v[s], parts[s], np[s], &c);
		for (size_t d = 0; d < c.rows; d++) {
			for (uint64_t e = c.ptr[d]; e < c.ptr[d + 1]; e++)
				printf("%s%u:%u", e > c.ptr[d] ? " " : "", c.idx[e], c.cnt[e]);
			printf("\n");
		}
		if (s + 1 == shares) {
			const uint32_t *df = tok_vocab_df(v[s]);
			printf("df");
			for (size_t t = 0; t < tok_vocab_size(v[s]); t++)
				printf(" %u", df[t]);
			printf("\n");
		}
		free(c.ptr);
		free(c.idx);
		free(c.cnt);
	}
	for (size_t s = 0; s < shares; s++) {
		tok_vocab_free(v[s]);
		for (size_t p = 0; p < np[s]; p++)
			tok_part_free(parts[s][p]);
		free(parts[s]);
		free(pack[s]);
	}
	for (size_t i = 0; i < n; i++)
		free(line[i]);
	free(line);
	free(llen);
	free(v);
	free(parts);
	free(np);
	free(pack);
	free(plen);
	return 0;
}

/* acctest dies N: N threads released together, each dying with its own message. */
static pthread_barrier_t dies_go;

static void *
dies_main(void *arg)
{
	pthread_barrier_wait(&dies_go);
	die("thread %d: dies", (int)(intptr_t)arg);
	return NULL;
}

static int
cmd_dies(int argc, char **argv)
{
	if (argc != 2)
		usage_error("usage: acctest dies N");
	int n = (int)cli_int("dies", argv[1], 1, 256);
	pthread_t *t = xmallocarray((size_t)n, sizeof *t);
	pthread_barrier_init(&dies_go, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, dies_main, (void *)(intptr_t)i) != 0)
			die("cannot start thread %d", i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* acctest detach KEEP OTHER: both files opened, then detach_teardown(KEEP): once the
 * child has closed OTHER (at most 5 s), which of its files it still holds: "keep" for
 * KEEP, "other" for OTHER, "stdout" for this process's standard output; then the
 * child's pid, and exit at once. */
static int
cmd_detach(int argc, char **argv)
{
	if (argc != 3)
		usage_error("usage: acctest detach KEEP OTHER");
	char keep[PATH_MAX], other[PATH_MAX];
	if (realpath(argv[1], keep) == NULL || realpath(argv[2], other) == NULL)
		die("detach: %s", strerror(errno));
	int fk = open(keep, O_RDONLY), fo = open(other, O_RDONLY);
	if (fk < 0 || fo < 0)
		die("detach: %s", strerror(errno));
	struct stat so;
	char out_link[64];
	if (fstat(1, &so) != 0)
		die("detach: stdout: %s", strerror(errno));
	snprintf(out_link, sizeof out_link, "pipe:[%lu]", (unsigned long)so.st_ino);
	fflush(stdout);
	int pid = detach_teardown(keep);
	if (pid <= 0)
		die("detach: no child");
	int has_keep = 0, has_other = 1, has_out = 0;
	for (int tries = 0; tries < 500 && has_other; tries++) {
		char dir[64];
		snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
		DIR *d = opendir(dir);
		if (d == NULL)
			die("detach: %s: %s", dir, strerror(errno));
		has_keep = has_other = has_out = 0;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			char link[PATH_MAX], path[PATH_MAX];
			snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
			ssize_t n = readlink(link, path, sizeof path - 1);
			if (n <= 0)
				continue;
			path[n] = '\0';
			has_keep |= strcmp(path, keep) == 0;
			has_other |= strcmp(path, other) == 0;
			has_out |= S_ISFIFO(so.st_mode) && strcmp(path, out_link) == 0;
		}
		closedir(d);
		if (has_other)
			usleep(10000);
	}
	printf("%s%s%s\n%d\n", has_keep ? "keep" : "", has_other ? " other" : "", has_out ? " stdout" : "", pid);
	fflush(stdout);
	_exit(0);
}

int
main(int argc, char **argv)
{
	struct common_opts co;
	cli_init(argc, argv, &co);
	if (argc < 2)
		usage_error("missing command");
	char *cmd = argv[1];
	argc--, argv++;
	if (strcmp(cmd, "read") == 0)
		return cmd_read(argc, argv, &co);
	if (strcmp(cmd, "stream") == 0)
		return cmd_stream(argc, argv, &co);
	if (strcmp(cmd, "lines") == 0)
		return cmd_lines(argc, argv);
	if (strcmp(cmd, "records") == 0)
		return cmd_records(argc, argv, &co);
	if (strcmp(cmd, "svm") == 0 || strcmp(cmd, "mm") == 0)
		return cmd_sparse(argc, argv, &co);
	if (strcmp(cmd, "pairs") == 0 || strcmp(cmd, "seq") == 0)
		return cmd_seq(argc, argv, &co);
	if (strcmp(cmd, "speech") == 0)
		return cmd_speech(argc, argv, &co);
	if (strcmp(cmd, "par") == 0)
		return cmd_par(argc, argv, &co);
	if (strcmp(cmd, "stage-cl") == 0 || strcmp(cmd, "stage-cuda") == 0)
		return cmd_stage(argc, argv, &co);
	if (strcmp(cmd, "int") == 0 || strcmp(cmd, "double") == 0 || strcmp(cmd, "size") == 0)
		return cmd_number(argc, argv);
	if (strcmp(cmd, "numcheck") == 0)
		return cmd_numcheck(argc, argv);
	if (strcmp(cmd, "f32") == 0 || strcmp(cmd, "f64") == 0 || strcmp(cmd, "fixed") == 0)
		return cmd_format(argc, argv);
	if (strcmp(cmd, "cuda") == 0)
		return cmd_cuda(argc, argv, &co);
	if (strcmp(cmd, "cl") == 0)
		return cmd_cl(argc, argv, &co);
	if (strcmp(cmd, "dies") == 0)
		return cmd_dies(argc, argv);
	if (strcmp(cmd, "detach") == 0)
		return cmd_detach(argc, argv);
	if (strcmp(cmd, "devwork") == 0)
		return cmd_devwork(argc, argv, &co);
	if (strcmp(cmd, "tune") == 0 && argc >= 2) {
		/* a table of the patterns given, as a program's tuning table holds them */
		struct row { const char *pattern; } *t = xmallocarray((size_t)argc - 2, sizeof *t);
		for (int i = 2; i < argc; i++)
			t[i - 2].pattern = argv[i];
		printf("%zu\n", tune_pick(t, (size_t)argc - 2, sizeof *t, argv[1]));
		free(t);
		return 0;
	}
	if (strcmp(cmd, "vocab") == 0)
		return cmd_vocab(argc, argv);
	if (strcmp(cmd, "deal") == 0 && argc == 3) {
		/* each local rank's positions of a list of N devices, L ranks on the host */
		int n = (int)cli_int("deal", argv[1], 0, 64), l = (int)cli_int("deal", argv[2], 1, 64);
		int *pick = xmallocarray((size_t)MAX(n, 1), sizeof *pick);
		for (int r = 0; r < l; r++) {
			int k = ranks_deal_for(n, r, l, pick);
			printf("%d:", r);
			for (int i = 0; i < k; i++)
				printf(" %d", pick[i]);
			printf("\n");
		}
		free(pick);
		return 0;
	}
	if (strcmp(cmd, "ptx90a") == 0 && argc == 2) {
		/* clx_build_sm90a's rewrite of the PTX in a file */
		input *in = in_open(argv[1]);
		size_t n = 0;
		char *ptx = in_slurp(in, &n);
		in_close(in);
		char *out = clx_ptx_sm90a(ptx);
		if (out == NULL)
			die("%s: not PTX for sm_90", argv[1]);
		fputs(out, stdout);
		free(out);
		free(ptx);
		return 0;
	}
	if (strcmp(cmd, "devices") == 0) {
		cuda_list_devices();
		clx_list_devices(NULL);
		return 0;
	}
	usage_error("unknown command '%s'", cmd);
}
