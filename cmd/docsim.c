/* docsim: document similarity from raw text or vectors, queries or all pairs.
 *
 *   docsim [options] -q QUERIES [CORPUS]   each query's top-k most similar documents
 *   docsim [options] [CORPUS]              each document's top-k neighbours
 *
 * main reads the inputs (text, libsvm, MatrixMarket or dense: common/docs.c), turns them
 * into weighted, normalised vectors (common/tokenize.c, kernels/docsim_weight.c), runs
 * the job on the device kernels/docsim_run.c settles (the CPU, one GPU, several, or
 * the ranks' shares) and prints QUERY<TAB>DOC<TAB>SCORE (kernels/docsim_out.c).
 *
 * Under mpirun (common/ranks.h) each rank tokenises its share of a text corpus, the
 * vocabularies merge into the one a single process would build, every rank gathers
 * the whole weighted corpus and computes its block of rows (kernels/docsim_ranks.c),
 * and rank 0 writes the results. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "docs.h"
#include "docsim.h"
#include "err.h"
#include "input.h"
#include "output.h"
#include "ranks.h"
#include "timer.h"
#include "tokenize.h"

enum { OPT_MATRIX = CLI_OPT_PROG, OPT_IDS, OPT_FORMAT, OPT_WEIGHT, OPT_SUBLINEAR, OPT_MIN_DF,
	OPT_MAX_DF, OPT_STOP, OPT_PRECISION, OPT_FIRST, OPT_NGRAM, OPT_CHAR_NGRAM };
static const char *const weight_names[] = {"tfidf", "tf", "binary", "none", NULL};
static const char *const precision_names[] = {"double", "single", NULL};

static const struct option longopts[] = {
	CLI_COMMON_LONG,
	CLI_MAXMEM_LONG,
	{"queries", required_argument, NULL, 'q'},
	{"top", required_argument, NULL, 'k'},
	{"threshold", required_argument, NULL, 't'},
	{"matrix", no_argument, NULL, OPT_MATRIX},
	{"ids", no_argument, NULL, OPT_IDS},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"weight", required_argument, NULL, OPT_WEIGHT},
	{"sublinear-tf", no_argument, NULL, OPT_SUBLINEAR},
	{"min-df", required_argument, NULL, OPT_MIN_DF},
	{"max-df", required_argument, NULL, OPT_MAX_DF},
	{"stop-words", required_argument, NULL, OPT_STOP},
	{"ngram", required_argument, NULL, OPT_NGRAM},
	{"char-ngram", required_argument, NULL, OPT_CHAR_NGRAM},
	{"precision", required_argument, NULL, OPT_PRECISION},
	{"first-record", required_argument, NULL, OPT_FIRST},
	{NULL, 0, NULL, 0},
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: docsim [options] -q QUERIES [CORPUS]\n"
	    "       docsim [options] [CORPUS]\n"
	    "Each query's (or each document's) most similar documents by cosine similarity,\n"
	    "as lines QUERY<TAB>DOC<TAB>SCORE. Documents are lines of raw text, libsvm lines,\n"
	    "a MatrixMarket coordinate file or a dense matrix (text or NPY).\n"
	    "\n"
	    "  -q, --queries FILE       rank the corpus for each query in FILE\n"
	    "  -k, --top N              neighbours a row (default 10); 0 with -t: every pair\n"
	    "  -t, --threshold X        only scores >= X (default: only scores > 0)\n"
	    "      --matrix             the whole similarity matrix (-O npy for NPY)\n"
	    "      --ids                the first TAB-separated field of a line is its id\n"
	    "      --first-record N     number the queries from N (a piece of a split run)\n"
	    "      --format F           auto, text, libsvm, mm or dense (default auto)\n"
	    "      --weight W           tfidf, tf, binary or none (default tfidf)\n"
	    "      --sublinear-tf       tf becomes 1 + ln(tf)\n"
	    "      --min-df N           drop terms in fewer documents (N.N: a proportion)\n"
	    "      --max-df F           drop terms in more documents (F.F: a proportion)\n"
	    "      --stop-words FILE    drop the words in FILE\n"
	    "      --ngram MIN,MAX      terms are runs of MIN to MAX words (default 1,1)\n"
	    "      --char-ngram MIN,MAX terms are MIN to MAX characters from inside words\n"
	    "      --precision P        double (default) or single: float32 GEMM on a GPU\n"
	    "      --max-device-mem B   device memory to use at most (e.g. 512M)\n"
	    "  -d, --device SPEC        auto, cpu, gpu, gpu:N, gpu:all or gpu:N,M ($ACCELKIT_DEVICE)\n"
	    "  -j, --threads N          CPU threads\n"
	    "  -o, --output FILE        write to FILE\n"
	    "  -O, --output-format F    text or npy (--matrix only)\n"
	    "  -v, --verbose            device, sizes and phase times on stderr\n"
	    "      --progress           a progress line on stderr (a terminal's, by default)\n"
	    "      --list-devices       list the devices and exit\n"
	    "  -h, --help               this help\n"
	    "  -V, --version            the version\n");
}

struct opts {
	const char *qpath;
	long long k;
	long long first;		/* --first-record: the first query's number */
	int k_given, use_thr, matrix, ids;
	double thr;
	enum doc_format format;
	int weight, weight_given, sublinear, precision;
	int min_df_given, max_df_given;
	const char *stop_path;
	char *stop_text;		/* the stop words' file, read (o->text.stop) */
	struct tok_opts text;
	struct tok_analyzer an;		/* --ngram, --char-ngram */
	int an_given;
};

/* --ngram and --char-ngram: "MIN,MAX", or "N" for N,N. */
static void
parse_ngram(const char *opt, const char *s, enum tok_kind kind, struct opts *o)
{
	const char *comma = strchr(s, ',');
	char lo[32];
	if (comma != NULL && (size_t)(comma - s) < sizeof lo) {
		memcpy(lo, s, (size_t)(comma - s));
		lo[comma - s] = '\0';
	}
	o->an.kind = kind;
	o->an.nmin = (int)cli_int(opt, comma != NULL ? lo : s, 1, 64);
	o->an.nmax = comma != NULL ? (int)cli_int(opt, comma + 1, 1, 64) : o->an.nmin;
	if (o->an.nmax < o->an.nmin)
		usage_error("invalid value for %s: '%s' (MIN,MAX with MIN <= MAX)", opt, s);
	o->an_given++;
}

/* A df limit: an integer is a count, a number with '.' or an exponent a proportion. */
static void
parse_df(const char *opt, const char *s, double *v, int *prop)
{
	*prop = strpbrk(s, ".eE") != NULL;
	if (*prop)
		*v = cli_double(opt, s, 0.0, 1.0);
	else
		*v = (double)cli_int(opt, s, 0, INT64_MAX);
}

/* Under mpirun: the vocabularies of the ranks' shares of the corpus, merged on every
 * rank into the whole corpus's, numbered as one process numbers it. */
static void
share_vocab(struct tok_vocab *vocab)
{
	if (ranks_size() == 1)
		return;
	size_t bytes, total;
	void *mine = tok_vocab_pack(vocab, &bytes);
	char *all = ranks_allgather(mine, bytes, &total, NULL);
	free(mine);
	tok_vocab_adopt(vocab, all, total);
}

/* Text: the vocabulary (the corpus's terms, merged as it was read) finished over the
 * corpus's ndocs documents, and the weighted vectors of the corpus and the queries (q
 * NULL: none) in cv and qv; returns the dimension. Under mpirun c is this rank's share
 * of the corpus, and cv gets every rank's. */
static size_t
text_vectors(struct opts *o, struct tok_vocab *vocab, struct docs *c, size_t ndocs,
    struct docs *q, struct csr *cv, struct csr *qv)
{
	if (o->stop_path != NULL && o->text.stop == NULL)
		o->text.stop = tok_read_words(o->stop_path, &o->text.nstop, &o->stop_text);
	double lo = o->text.min_df_prop ? o->text.min_df * (double)ndocs : o->text.min_df;
	double hi = o->text.max_df_prop ? o->text.max_df * (double)ndocs : o->text.max_df;
	if (hi < lo && ndocs > 0)
		usage_error("--max-df %g keeps fewer documents than --min-df %g asks for", hi, lo);
	struct tok_counts counts;
	share_vocab(vocab);
	tok_vocab_finish(vocab, &o->text, ndocs);
	tok_count(vocab, c->parts, c->nparts, &counts);
	size_t dim = tok_vocab_size(vocab);
	double *idf = ds_text_idf(tok_vocab_df(vocab), dim, ndocs);
	ds_weigh_counts(&counts, idf, (enum ds_weight)o->weight, o->sublinear, cv);
	ds_ranks_csr(cv);
	if (q != NULL) {
		tok_count(vocab, q->parts, q->nparts, &counts);
		ds_weigh_counts(&counts, idf, (enum ds_weight)o->weight, o->sublinear, qv);
	}
	vlog("vocabulary: %zu terms, %llu entries", dim, (unsigned long long)csr_nnz(cv));
	free(idf);
	free(o->text.stop);
	free(o->stop_text);
	return dim;
}

static void
weigh_docs(struct docs *r, size_t dim, enum ds_weight weight, const double *idf)
{
	if (r->sparse)
		ds_weigh_csr(&r->sp, dim, weight, idf);
	else
		ds_weigh_dense(r->dm.data, r->dm.rows, r->dm.cols, weight, idf);
}

/* Given vectors: weighted in place, idf (only when --weight tfidf is given) from the
 * corpus; columns the corpus lacks are dropped from the queries. Returns the dimension. */
static size_t
given_vectors(const struct opts *o, struct docs *c, struct docs *q)
{
	if (o->sublinear || o->min_df_given || o->max_df_given || o->stop_path != NULL ||
	    o->an_given)
		usage_error("--sublinear-tf, --min-df, --max-df, --stop-words, --ngram and "
		    "--char-ngram apply to text input only");
	size_t dim = c->sparse ? c->sp.cols : c->dm.cols;
	if (q != NULL && !c->sparse && q->n > 0 && c->n > 0 && q->dm.cols != dim)
		die("%s: %zu columns where the corpus has %zu", q->name, q->dm.cols, dim);
	double *idf = NULL;
	if (o->weight == DS_TFIDF && o->weight_given)
		idf = ds_vector_idf(c->sparse ? &c->sp : NULL, c->dm.data, c->n, dim);
	weigh_docs(c, dim, (enum ds_weight)o->weight, idf);
	if (q != NULL)
		weigh_docs(q, dim, (enum ds_weight)o->weight, idf);
	free(idf);
	vlog("vectors: %zu x %zu%s", c->n, dim, c->sparse ? " sparse" : " dense");
	return dim;
}

/* The job: the vectors (c and q when sparse, else cr's and qr's dense rows), what to
 * compute, and room for the results. */
static void
make_job(struct ds_job *job, const struct opts *o, const struct common_opts *co,
    const struct csr *c, const struct csr *q, const struct docs *cr, const struct docs *qr,
    size_t dim)
{
	memset(job, 0, sizeof *job);
	job->sparse = c != NULL;
	job->c = c;
	job->q = o->qpath ? q : NULL;
	if (c == NULL) {
		job->cd = cr->dm.data;
		job->qd = o->qpath ? qr->dm.data : NULL;
	}
	job->n = cr->n;
	job->sym = o->qpath == NULL;
	job->nq = job->sym ? cr->n : qr->n;
	job->dim = dim;
	job->mode = o->matrix ? DS_MATRIX : o->k == 0 ? DS_PAIRS : DS_TOPK;
	size_t cands = job->sym ? (cr->n ? cr->n - 1 : 0) : cr->n;
	job->k = MIN((size_t)o->k, cands);
	job->use_thr = o->use_thr;
	job->thr = o->thr;
	if (!o->use_thr && job->mode == DS_TOPK) {
		/* Only related documents: a score above 0 (for text, a term in common). A
		 * float passes ds_passes' s >= thr exactly when it is > 0. */
		job->use_thr = 1;
		job->thr = FLT_TRUE_MIN;
	}
	job->single = o->precision == 1;
	job->unit = o->weight != DS_NONE_W;
	job->max_mem = co->max_device_mem;
	if (ranks_rank() != 0)
		return;	/* under mpirun the results are gathered on rank 0 */
	if (job->mode == DS_TOPK) {
		size_t cells = mul_size(job->nq, job->k ? job->k : 1, "top-k lists");
		job->top_s = xmallocarray(cells, sizeof *job->top_s);
		job->top_i = xmallocarray(cells, sizeof *job->top_i);
	} else if (job->mode == DS_MATRIX) {
		job->mat = xmallocarray(mul_size(job->nq, job->n ? job->n : 1, "similarity matrix"),
		    sizeof *job->mat);
	}
}

int
main(int argc, char **argv)
{
	struct common_opts co;
	struct opts o;
	int c;

	cli_init(argc, argv, &co);
	memset(&o, 0, sizeof o);
	o.k = 10;
	o.first = 1;
	o.text.max_df = 1.0;
	o.text.max_df_prop = 1;
	o.text.min_df = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "q:k:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.qpath = optarg;
			break;
		case 'k':
			o.k = cli_int("--top", optarg, 0, INT32_MAX - 1);
			o.k_given = 1;
			break;
		case 't':
			o.thr = cli_double("--threshold", optarg, -1e300, 1e300);
			o.use_thr = 1;
			break;
		case OPT_MATRIX:
			o.matrix = 1;
			break;
		case OPT_IDS:
			o.ids = 1;
			break;
		case OPT_FORMAT:
			o.format = (enum doc_format)cli_choice("--format", optarg, doc_format_names);
			break;
		case OPT_WEIGHT:
			o.weight = cli_choice("--weight", optarg, weight_names);
			o.weight_given = 1;
			break;
		case OPT_SUBLINEAR:
			o.sublinear = 1;
			break;
		case OPT_MIN_DF:
			parse_df("--min-df", optarg, &o.text.min_df, &o.text.min_df_prop);
			o.min_df_given = 1;
			break;
		case OPT_MAX_DF:
			parse_df("--max-df", optarg, &o.text.max_df, &o.text.max_df_prop);
			o.max_df_given = 1;
			break;
		case OPT_STOP:
			o.stop_path = optarg;
			break;
		case OPT_NGRAM:
			parse_ngram("--ngram", optarg, TOK_WORDS, &o);
			break;
		case OPT_CHAR_NGRAM:
			parse_ngram("--char-ngram", optarg, TOK_CHAR_WB, &o);
			break;
		case OPT_FIRST:
			o.first = cli_int("--first-record", optarg, 1, INT64_MAX);
			break;
		case OPT_PRECISION:
			o.precision = cli_choice("--precision", optarg, precision_names);
			break;
		default:
			cli_common(c, optarg, &co, usage);
		}
	}
	ranks_init(&argc, &argv);	/* under mpirun: each rank its block of rows */
	cli_finish(&co);
	if (co.list_devices) {
		cuda_list_devices();
		return 0;
	}
	if (argc - optind > 1)
		usage_error("one CORPUS at most (got %d)", argc - optind);
	const char *cpath = optind < argc ? argv[optind] : NULL;
	int c_stdin = cpath == NULL || strcmp(cpath, "-") == 0;
	if (o.qpath != NULL && strcmp(o.qpath, "-") == 0 && c_stdin)
		usage_error("QUERIES and CORPUS cannot both be standard input");
	if (o.matrix && (o.k_given || o.use_thr))
		usage_error("--matrix prints every score: it does not take -k or --threshold");
	if (o.first != 1 && o.qpath == NULL)
		usage_error("--first-record numbers queries: it needs -q (a corpus is not split)");
	if (o.k == 0 && !o.use_thr && !o.matrix)
		usage_error("-k 0 (every pair) needs --threshold");
	if (co.out_format == FMT_NPY && !o.matrix)
		usage_error("-O npy needs --matrix (pairs are text lines)");
	if (o.an_given > 1)
		usage_error("one of --ngram and --char-ngram, once");
	if (o.an.kind == TOK_CHAR_WB && o.stop_path != NULL)
		usage_error("--stop-words drops words: it does not apply to --char-ngram");
	if (o.an_given) {
		/* word n-grams are formed after the stop words are dropped */
		if (o.stop_path != NULL)
			o.text.stop = tok_read_words(o.stop_path, &o.text.nstop, &o.stop_text);
		o.an.stop = o.text.stop;
		o.an.nstop = o.text.nstop;
		tok_set_analyzer(&o.an);
	}

	/* The device starts up (in a thread) while the input is read and tokenised. */
	struct cuda_dev dev;
	const char *ins[2] = {cpath, o.qpath};
	cuda_input_size(in_regular_bytes(ins, o.qpath != NULL ? 2 : 1));
#ifdef ACCELKIT_CUDA
	cuda_start(co.device, 1, ds_gpu_init, &dev);	/* gpu:all divides the rows */
#else
	cuda_start(co.device, 1, NULL, &dev);
#endif

	/* read */
	double t = now_sec();
	struct docs cr, qr;
	struct tok_vocab *vocab = tok_vocab_new();
	uint64_t row0, total;
	enum doc_format f = docs_read_share(cpath, o.format, o.ids, vocab, &cr, &row0, &total);
	if (o.qpath != NULL) {
		/* every rank reads every query (rank 0 first: an error said once) */
		ranks_serial_begin();
		if (ranks_size() > 1 && in_regular_bytes(&o.qpath, 1) < 0)
			die("%s: under mpirun every rank reads the queries: they must be a FILE",
			    strcmp(o.qpath, "-") == 0 ? "(standard input)" : o.qpath);
		docs_read(o.qpath, f, o.ids, NULL, &qr);
		ranks_serial_end();
		qr.before = (uint64_t)o.first - 1;
	}
	phase_add(PH_READ, now_sec() - t);
	vlog("corpus: %llu documents, %s", (unsigned long long)total, doc_format_names[f]);
	if (ranks_size() > 1 && f == DOC_TEXT)
		vlog("rank %d of %d: read documents %llu to %llu", ranks_rank(), ranks_size(),
		    (unsigned long long)row0 + 1, (unsigned long long)(row0 + cr.n));

	/* vectors */
	t = now_sec();
	struct csr cv, qv;
	size_t dim = f == DOC_TEXT ?
	    text_vectors(&o, vocab, &cr, total, o.qpath ? &qr : NULL, &cv, &qv) :
	    given_vectors(&o, &cr, o.qpath ? &qr : NULL);
	if (f == DOC_TEXT) {
		ds_ranks_ids(&cr);	/* the shares' ids, for rank 0 to write */
		cr.n = total;
	}
	phase_add("vectorise", now_sec() - t);

	/* the job */
	struct ds_job job;
	make_job(&job, &o, &co, f == DOC_TEXT ? &cv : cr.sparse ? &cr.sp : NULL,
	    f == DOC_TEXT ? &qv : cr.sparse ? &qr.sp : NULL, &cr, &qr, dim);

	/* run: the device settled, and the job on it (kernels/docsim_run.c) */
	int nonempty = ds_run(&job, &dev);

	/* write */
	t = now_sec();
	if (ranks_rank() == 0) {	/* the one writer of a run under mpirun */
		output *out = out_open(co.output);
		if (nonempty || job.mode == DS_MATRIX)
			ds_write(out, &job, job.sym ? &cr : &qr, &cr, cli_out_format(&co, co.output));
		out_close(out);
	}
	phase_add(PH_WRITE, now_sec() - t);
	phases_report();
	cuda_finish(&dev);	/* a GPU run, or an abandoned start, ends here */

	free(job.top_s);
	free(job.top_i);
	free(job.pairs);
	free(job.mat);
	if (f == DOC_TEXT) {
		csr_free(&cv);
		if (o.qpath != NULL)
			csr_free(&qv);
	}
	if (o.qpath != NULL)
		docs_free(&qr);
	tok_vocab_free(vocab);		/* its terms are in the corpus's parts */
	docs_free(&cr);
	return 0;
}
