/* docsim: document similarity from raw text or vectors, queries or all pairs.
 *
 *   docsim [options] -q QUERIES [CORPUS]   each query's top-k most similar documents
 *   docsim [options] [CORPUS]              each document's top-k neighbours
 *
 * main reads the inputs (text, libsvm, MatrixMarket or dense), turns them into weighted,
 * normalised vectors, runs the CPU or GPU path and prints QUERY<TAB>DOC<TAB>SCORE. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cudadev.h"
#include "dense.h"
#include "docsim.h"
#include "err.h"
#include "input.h"
#include "numparse.h"
#include "output.h"
#include "sparse.h"
#include "timer.h"

enum { OPT_MATRIX = CLI_OPT_PROG, OPT_IDS, OPT_FORMAT, OPT_WEIGHT, OPT_SUBLINEAR, OPT_MIN_DF,
	OPT_MAX_DF, OPT_STOP, OPT_PRECISION };
enum fmt { F_AUTO, F_TEXT, F_LIBSVM, F_MM, F_DENSE };
static const char *const format_names[] = {"auto", "text", "libsvm", "mm", "dense", NULL};
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
	{"precision", required_argument, NULL, OPT_PRECISION},
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
	    "  -t, --threshold X        only scores >= X\n"
	    "      --matrix             the whole similarity matrix (-O npy for NPY)\n"
	    "      --ids                the first TAB-separated field of a line is its id\n"
	    "      --format F           auto, text, libsvm, mm or dense (default auto)\n"
	    "      --weight W           tfidf, tf, binary or none (default tfidf)\n"
	    "      --sublinear-tf       tf becomes 1 + ln(tf)\n"
	    "      --min-df N           drop terms in fewer documents (N.N: a proportion)\n"
	    "      --max-df F           drop terms in more documents (F.F: a proportion)\n"
	    "      --stop-words FILE    drop the words in FILE\n"
	    "      --precision P        double (default) or single: float32 GEMM on a GPU\n"
	    "      --max-device-mem B   device memory to use at most (e.g. 512M)\n"
	    "  -d, --device SPEC        auto, cpu, gpu or gpu:N (default $ACCELKIT_DEVICE or auto)\n"
	    "  -j, --threads N          CPU threads\n"
	    "  -o, --output FILE        write to FILE\n"
	    "  -O, --output-format F    text or npy (--matrix only)\n"
	    "  -v, --verbose            device, sizes and phase times on stderr\n"
	    "      --list-devices       list the devices and exit\n"
	    "  -h, --help               this help\n"
	    "  -V, --version            the version\n");
}

/* One input's records: their content and, with --ids, their ids. */
struct recs {
	const char *name;
	char *buf;		/* the slurped input (text and libsvm) */
	size_t buflen;
	size_t n;
	char **text;
	size_t *len;
	char **id;		/* --ids */
	size_t *idlen;
	int sparse;
	struct csr sp;
	struct matrix dm;	/* F32 */
};

struct opts {
	const char *qpath;
	long long k;
	int k_given, use_thr, matrix, ids;
	double thr;
	enum fmt format;
	int weight, weight_given, sublinear, precision;
	int min_df_given, max_df_given;
	const char *stop_path;
	struct ds_text_opts text;
};

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

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Whether a line is a row of numbers (blanks or commas between); *width gets their
 * count (0 for a blank or comment line). */
static int
dense_line_ok(const char *s, size_t len, size_t *width)
{
	const char *p = s, *end = s + len;
	size_t n = 0;
	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p == '#')
			break;
		double v;
		const char *e = parse_double(p, &v);
		if (e == p || e > end || !isfinite(v))
			return 0;
		n++;
		p = e;
		while (p < end && is_blank(*p))
			p++;
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p != '#' && e == p)
			return 0;
	}
	*width = n;
	return 1;
}

/* The format of an input from its first bytes. */
static enum fmt
detect(input *in, int ids)
{
	size_t avail, want = (size_t)1 << 16;
	const unsigned char *b = in_peek(in, want, &avail);
	static const unsigned char npy[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

	if (avail >= 6 && memcmp(b, npy, 6) == 0)
		return F_DENSE;
	if (mm_is_banner((const char *)b, avail))
		return F_MM;
	/* a copy, so that every line ends in '\n' or NUL for the parsers */
	char *copy = xmalloc(avail + 1);
	memcpy(copy, b, avail);
	copy[avail] = '\0';
	int first_svm = -1, all_dense = 1, lines = 0;
	size_t width = 0;
	const char *p = copy, *end = p + avail;
	while (p < end && lines < 100) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL && avail == want)
			break;	/* a partial line: leave it out */
		const char *e = nl ? nl : end, *s = p;
		p = nl ? nl + 1 : end;
		if (ids) {
			const char *tab = memchr(s, '\t', (size_t)(e - s));
			if (tab == NULL) {
				first_svm = all_dense = 0;
				break;
			}
			s = tab + 1;
		}
		size_t w = 0;
		int feat, ok = svm_line_ok(s, (size_t)(e - s), &feat);
		if (first_svm < 0 && (feat || !ok))
			first_svm = ok;
		if (!dense_line_ok(s, (size_t)(e - s), &w) || (w && width && w != width))
			all_dense = 0;
		if (w)
			width = w;
		lines++;
	}
	free(copy);
	if (first_svm > 0)
		return F_LIBSVM;
	if (all_dense && width > 0)
		return F_DENSE;
	return F_TEXT;
}

/* Splits the slurped input into line records ('\n' ends a line; a final '\r' goes). */
static void
split_lines(struct recs *r, int ids)
{
	size_t cap = 1024, n = 0, len = r->buflen;
	r->text = xmallocarray(cap, sizeof *r->text);
	r->len = xmallocarray(cap, sizeof *r->len);
	if (ids) {
		r->id = xmallocarray(cap, sizeof *r->id);
		r->idlen = xmallocarray(cap, sizeof *r->idlen);
	}
	for (char *p = r->buf, *end = r->buf + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *e = nl ? nl : end;
		if (e > p && e[-1] == '\r')
			e--;
		if (n == cap) {
			cap *= 2;
			r->text = xreallocarray(r->text, cap, sizeof *r->text);
			r->len = xreallocarray(r->len, cap, sizeof *r->len);
			if (ids) {
				r->id = xreallocarray(r->id, cap, sizeof *r->id);
				r->idlen = xreallocarray(r->idlen, cap, sizeof *r->idlen);
			}
		}
		char *s = p;
		if (ids) {
			char *tab = memchr(p, '\t', (size_t)(e - p));
			if (tab == NULL)
				die_at(r->name, n + 1, "no TAB after the id (--ids)");
			r->id[n] = p;
			r->idlen[n] = (size_t)(tab - p);
			s = tab + 1;
		}
		r->text[n] = s;
		r->len[n++] = (size_t)(e - s);
		p = nl ? nl + 1 : end;
	}
	r->n = n;
}

/* Dense text with ids: "ID<TAB>numbers", blank and comment lines skipped. */
static void
read_dense_ids(input *in, struct recs *r)
{
	size_t cap = 1024, vcap = 64, width = 0, n = 0, len;
	double *vals = xmallocarray(vcap, sizeof *vals);
	float *data = NULL;
	char *line;
	r->id = xmallocarray(cap, sizeof *r->id);
	r->idlen = xmallocarray(cap, sizeof *r->idlen);
	while ((line = in_getline(in, &len)) != NULL) {
		const char *q = line;
		while (is_blank(*q))
			q++;
		if (*q == '\0' || *q == '#')
			continue;
		char *tab = strchr(line, '\t');
		if (tab == NULL) {
			free(vals);
			free(data);
			die_at(r->name, in_lineno(in), "no TAB after the id (--ids)");
		}
		*tab = '\0';
		size_t w = dense_parse_line(tab + 1, vals, vcap, r->name, in_lineno(in), 0);
		if (w > vcap) {
			vcap = w;
			vals = xreallocarray(vals, vcap, sizeof *vals);
			dense_parse_line(tab + 1, vals, vcap, r->name, in_lineno(in), 0);
		}
		if (n == 0)
			width = w;
		if (w != width) {
			free(vals);
			free(data);
			die_at(r->name, in_lineno(in), "%zu numbers where the first row has %zu", w, width);
		}
		if (n == cap || data == NULL) {
			if (data != NULL)
				cap *= 2;
			r->id = xreallocarray(r->id, cap, sizeof *r->id);
			r->idlen = xreallocarray(r->idlen, cap, sizeof *r->idlen);
			data = xreallocarray(data, mul_size(cap, width ? width : 1, "matrix"), sizeof *data);
		}
		r->id[n] = xstrdup(line);
		r->idlen[n] = strlen(line);
		for (size_t j = 0; j < w; j++)
			data[n * width + j] = (float)vals[j];
		n++;
	}
	free(vals);
	r->n = n;
	r->dm.rows = n;
	r->dm.cols = width;
	r->dm.dtype = DT_F32;
	r->dm.data = data;
}

/* Reads one input in the given format (F_AUTO: detected). */
static enum fmt
read_recs(const char *path, enum fmt f, int ids, struct recs *r)
{
	input *in = in_open(path);
	memset(r, 0, sizeof *r);
	r->name = xstrdup(in_name(in));
	if (f == F_AUTO)
		f = detect(in, ids);
	switch (f) {
	case F_TEXT:
	case F_LIBSVM:
		r->buf = in_slurp(in, &r->buflen);
		split_lines(r, ids);
		if (f == F_LIBSVM) {
			r->sparse = 1;
			svm_parse((const char *const *)r->text, r->len, r->n, r->name, 1, &r->sp, NULL);
		}
		break;
	case F_MM:
		if (ids)
			die("%s: --ids needs text, libsvm or dense text input, not MatrixMarket", r->name);
		r->sparse = 1;
		mm_read(in, &r->sp);
		r->n = r->sp.rows;
		break;
	case F_DENSE:
		if (ids) {
			size_t avail;
			const unsigned char *b = in_peek(in, 1, &avail);
			if (avail && b[0] == 0x93)
				die("%s: --ids needs text input; NPY has no id field", r->name);
			read_dense_ids(in, r);
		} else {
			mat_read(in, DT_F32, 0, &r->dm);
			r->n = r->dm.rows;
		}
		break;
	default:
		break;
	}
	in_close(in);
	return f;
}

/* Weighting of given vectors: idf (only when --weight tfidf is given), binary, then
 * L2 normalisation unless --weight none. Columns the corpus lacks are dropped from
 * queries. idf comes from the corpus (rows of c). */
static double *
vector_idf(const struct recs *c, int weight, int given)
{
	size_t dim = c->sparse ? c->sp.cols : c->dm.cols;
	if (!(weight == DS_TFIDF && given))
		return NULL;
	uint64_t *df = xcalloc(dim ? dim : 1, sizeof *df);
	if (c->sparse) {
		for (uint64_t e = 0; e < csr_nnz(&c->sp); e++)
			df[c->sp.idx[e]] += c->sp.val[e] != 0;
	} else {
		const float *x = c->dm.data;
		for (size_t r = 0; r < c->dm.rows; r++)
			for (size_t j = 0; j < dim; j++)
				df[j] += x[r * dim + j] != 0;
	}
	double *idf = xmallocarray(dim ? dim : 1, sizeof *idf);
	for (size_t j = 0; j < dim; j++)
		idf[j] = log((1.0 + (double)c->n) / (1.0 + (double)df[j])) + 1.0;
	free(df);
	return idf;
}

static void
weigh_row(float *v, const uint32_t *idx, size_t m, int weight, const double *idf)
{
	double ss = 0;
	for (size_t i = 0; i < m; i++) {
		double x = v[i];
		if (weight == DS_BINARY)
			x = x != 0;
		if (idf != NULL)
			x *= idf[idx ? idx[i] : i];
		v[i] = (float)x;
		ss += x * x;
	}
	if (weight == DS_NONE_W || ss == 0)
		return;
	double scale = 1 / sqrt(ss);
	for (size_t i = 0; i < m; i++)
		v[i] = (float)(v[i] * scale);
}

static void
weigh_vectors(struct recs *r, size_t dim, int weight, const double *idf)
{
	if (r->sparse) {
		struct csr *m = &r->sp;
		if (m->cols > dim) {
			/* columns the corpus lacks are unknown terms: drop them */
			uint64_t w = 0;
			for (size_t i = 0; i < m->rows; i++) {
				uint64_t a = m->ptr[i], b = m->ptr[i + 1];
				m->ptr[i] = w;
				for (uint64_t e = a; e < b; e++)
					if (m->idx[e] < dim) {
						m->idx[w] = m->idx[e];
						m->val[w++] = m->val[e];
					}
			}
			m->ptr[m->rows] = w;
			m->cols = dim;
		}
		#pragma omp parallel for schedule(dynamic, 256)
		for (size_t i = 0; i < m->rows; i++)
			weigh_row(m->val + m->ptr[i], m->idx + m->ptr[i], (size_t)(m->ptr[i + 1] - m->ptr[i]),
			    weight, idf);
	} else {
		float *x = r->dm.data;
		#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < r->dm.rows; i++)
			weigh_row(x + i * r->dm.cols, NULL, r->dm.cols, weight, idf);
	}
}

/* The words of FILE (blank-separated); *text holds them (free it after). */
static char **
read_stop_words(const char *path, size_t *n, char **text)
{
	input *in = in_open(path);
	char *buf = in_slurp(in, NULL), **w = NULL;
	*text = buf;
	size_t cap = 0;
	*n = 0;
	in_close(in);
	for (char *p = buf; *p;) {
		while (*p && (is_blank(*p) || *p == '\n'))
			p++;
		if (!*p)
			break;
		char *s = p;
		while (*p && !is_blank(*p) && *p != '\n')
			p++;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			w = xreallocarray(w, cap, sizeof *w);
		}
		w[(*n)++] = s;
		if (*p)
			*p++ = '\0';
	}
	return w;
}

/* ------------------------------------------------------------------ output */

static size_t
fmt_id(char *b, const struct recs *r, size_t i)
{
	if (r->id != NULL) {
		memcpy(b, r->id[i], r->idlen[i]);
		return r->idlen[i];
	}
	char t[24];
	size_t n = 0;
	uint64_t v = (uint64_t)i + 1;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (size_t k = 0; k < n; k++)
		b[k] = t[n - 1 - k];
	return n;
}

static size_t
id_len(const struct recs *r, size_t i)
{
	return r->id ? r->idlen[i] : 20;
}

/* A growable text buffer for one thread's lines. */
struct tbuf {
	char *p;
	size_t n, cap;
};

static char *
tb_room(struct tbuf *b, size_t need)
{
	if (b->n + need > b->cap) {
		b->cap = MAX(2 * b->cap, b->n + need + 4096);
		b->p = xrealloc(b->p, b->cap);
	}
	return b->p + b->n;
}

static void
tb_line(struct tbuf *b, const struct recs *qr, size_t qi, const struct recs *cr, size_t ci, float s)
{
	char *p = tb_room(b, id_len(qr, qi) + id_len(cr, ci) + 64), *p0 = p;
	double v = s;
	if (fabs(v) < 5e-7)
		v = 0;	/* no "-0.000000" */
	p += fmt_id(p, qr, qi);
	*p++ = '\t';
	p += fmt_id(p, cr, ci);
	*p++ = '\t';
	p += fmt_fixed(p, v, 6);
	*p++ = '\n';
	b->n += (size_t)(p - p0);
}

#define OUT_BATCH 65536

static void
write_topk(output *o, const struct ds_job *job, const struct recs *qr, const struct recs *cr)
{
	size_t rows = job->nq, k = job->k;
	int nt = omp_get_max_threads();
	struct tbuf *tb = xcalloc((size_t)nt, sizeof *tb);
	for (size_t b0 = 0; b0 < rows; b0 += OUT_BATCH) {
		size_t b1 = MIN(rows, b0 + OUT_BATCH);
		#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num(), T = omp_get_num_threads();
			size_t a = b0 + (b1 - b0) * (size_t)t / (size_t)T;
			size_t z = b0 + (b1 - b0) * (size_t)(t + 1) / (size_t)T;
			tb[t].n = 0;
			for (size_t r = a; r < z; r++)
				for (size_t i = 0; i < k && job->top_i[r * k + i] != DS_NONE; i++)
					tb_line(&tb[t], qr, r, cr, (size_t)job->top_i[r * k + i], job->top_s[r * k + i]);
			#pragma omp barrier
			#pragma omp single
			for (int u = 0; u < T; u++)
				if (tb[u].n > 0)
					out_write(o, tb[u].p, tb[u].n);
		}
	}
	for (int t = 0; t < nt; t++)
		free(tb[t].p);
	free(tb);
}

static int
pair_cmp(const void *x, const void *y)
{
	const struct ds_pair *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->s != b->s)
		return a->s > b->s ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

static void
write_pairs(output *o, struct ds_job *job, const struct recs *qr, const struct recs *cr)
{
	struct tbuf tb = {NULL, 0, 0};
	qsort(job->pairs, job->npairs, sizeof *job->pairs, pair_cmp);
	for (size_t i = 0; i < job->npairs; i++) {
		const struct ds_pair *p = &job->pairs[i];
		tb_line(&tb, qr, p->a, cr, p->b, p->s);
		if (tb.n >= ((size_t)1 << 20)) {
			out_write(o, tb.p, tb.n);
			tb.n = 0;
		}
	}
	if (tb.n > 0)
		out_write(o, tb.p, tb.n);
	free(tb.p);
}

/* ------------------------------------------------------------------ main */

static void
free_recs(struct recs *r)
{
	if (r->id != NULL && r->buf == NULL)
		for (size_t i = 0; i < r->n; i++)
			free(r->id[i]);
	free(r->id);
	free(r->idlen);
	free(r->text);
	free(r->len);
	free(r->buf);
	if (r->sparse)
		csr_free(&r->sp);
	else
		mat_free(&r->dm);
	free((char *)r->name);
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
			o.format = (enum fmt)cli_choice("--format", optarg, format_names);
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
		case OPT_PRECISION:
			o.precision = cli_choice("--precision", optarg, precision_names);
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
		usage_error("one CORPUS at most (got %d)", argc - optind);
	const char *cpath = optind < argc ? argv[optind] : NULL;
	int c_stdin = cpath == NULL || strcmp(cpath, "-") == 0;
	if (o.qpath != NULL && strcmp(o.qpath, "-") == 0 && c_stdin)
		usage_error("QUERIES and CORPUS cannot both be standard input");
	if (o.matrix && (o.k_given || o.use_thr))
		usage_error("--matrix prints every score: it does not take -k or --threshold");
	if (o.k == 0 && !o.use_thr && !o.matrix)
		usage_error("-k 0 (every pair) needs --threshold");
	if (co.out_format == FMT_NPY && !o.matrix)
		usage_error("-O npy needs --matrix (pairs are text lines)");

	/* The device starts up (in a thread) while the input is read and tokenised. */
	struct cuda_dev dev;
#ifdef ACCELKIT_CUDA
	cuda_start(co.device, 0, ds_gpu_init, &dev);
#else
	cuda_start(co.device, 0, NULL, &dev);
#endif

	/* read */
	double t = now_sec();
	struct recs cr, qr;
	enum fmt f = read_recs(cpath, o.format, o.ids, &cr);
	if (o.qpath != NULL)
		read_recs(o.qpath, f, o.ids, &qr);
	phase_add(PH_READ, now_sec() - t);
	vlog("corpus: %zu documents, %s", cr.n, format_names[f]);

	/* vectors */
	t = now_sec();
	struct ds_vocab *vocab = NULL;
	char *stop_text = NULL;
	struct csr cv, qv;
	size_t dim;
	if (f == F_TEXT) {
		if (o.stop_path != NULL)
			o.text.stop = read_stop_words(o.stop_path, &o.text.nstop, &stop_text);
		double lo = o.text.min_df_prop ? o.text.min_df * (double)cr.n : o.text.min_df;
		double hi = o.text.max_df_prop ? o.text.max_df * (double)cr.n : o.text.max_df;
		if (hi < lo && cr.n > 0)
			usage_error("--max-df %g keeps fewer documents than --min-df %g asks for", hi, lo);
		o.text.weight = (enum ds_weight)o.weight;
		o.text.sublinear = o.sublinear;
		struct ds_docs d = {cr.n, cr.text, cr.len};
		vocab = ds_text_fit(&d, &o.text, &cv);
		if (o.qpath != NULL) {
			struct ds_docs q = {qr.n, qr.text, qr.len};
			ds_text_transform(vocab, &q, &qv);
		}
		dim = ds_vocab_size(vocab);
		vlog("vocabulary: %zu terms, %llu entries", dim, (unsigned long long)csr_nnz(&cv));
	} else {
		if (o.sublinear || o.min_df_given || o.max_df_given || o.stop_path != NULL)
			usage_error("--sublinear-tf, --min-df, --max-df and --stop-words apply to text input only");
		dim = cr.sparse ? cr.sp.cols : cr.dm.cols;
		if (o.qpath != NULL && !cr.sparse && qr.n > 0 && cr.n > 0 && qr.dm.cols != dim)
			die("%s: %zu columns where the corpus has %zu", qr.name, qr.dm.cols, dim);
		double *idf = vector_idf(&cr, o.weight, o.weight_given);
		weigh_vectors(&cr, dim, o.weight, idf);
		if (o.qpath != NULL)
			weigh_vectors(&qr, dim, o.weight, idf);
		free(idf);
		vlog("vectors: %zu x %zu%s", cr.n, dim, cr.sparse ? " sparse" : " dense");
	}
	phase_add("vectorise", now_sec() - t);

	/* the job */
	struct ds_job job;
	memset(&job, 0, sizeof job);
	job.sparse = f == F_TEXT || cr.sparse;
	if (f == F_TEXT) {
		job.c = &cv;
		job.q = o.qpath ? &qv : NULL;
	} else if (cr.sparse) {
		job.c = &cr.sp;
		job.q = o.qpath ? &qr.sp : NULL;
	} else {
		job.cd = cr.dm.data;
		job.qd = o.qpath ? qr.dm.data : NULL;
	}
	job.n = cr.n;
	job.sym = o.qpath == NULL;
	job.nq = job.sym ? cr.n : qr.n;
	job.dim = dim;
	job.mode = o.matrix ? DS_MATRIX : o.k == 0 ? DS_PAIRS : DS_TOPK;
	size_t cands = job.sym ? (cr.n ? cr.n - 1 : 0) : cr.n;
	job.k = MIN((size_t)o.k, cands);
	job.use_thr = o.use_thr;
	job.thr = o.thr;
	job.single = o.precision == 1;
	job.max_mem = co.max_device_mem;
	if (job.mode == DS_TOPK) {
		job.top_s = xmallocarray(mul_size(job.nq, job.k ? job.k : 1, "top-k lists"), sizeof *job.top_s);
		job.top_i = xmallocarray(mul_size(job.nq, job.k ? job.k : 1, "top-k lists"), sizeof *job.top_i);
	} else if (job.mode == DS_MATRIX) {
		job.mat = xmallocarray(mul_size(job.nq, job.n ? job.n : 1, "similarity matrix"), sizeof *job.mat);
	}

	/* run */
	cuda_start_wait();
	int work = job.nq > 0 && job.n > 0 && !(job.mode == DS_TOPK && job.k == 0);
	if (work) {
		if (dev.gpu) {
#ifdef ACCELKIT_CUDA
			ds_gpu_run(&job, &dev);
#endif
		} else {
			t = now_sec();
			ds_cpu_run(&job);
			phase_add(PH_COMPUTE, now_sec() - t);
		}
	}

	/* write */
	t = now_sec();
	output *out = out_open(co.output);
	const struct recs *qrec = job.sym ? &cr : &qr;
	if (job.mode == DS_MATRIX) {
		struct matrix m = {job.nq, job.n, DT_F32, job.mat};
		for (size_t i = 0; i < job.nq * job.n; i++)
			job.mat[i] += 0.0f;	/* no "-0" */
		mat_write(out, &m, cli_out_format(&co, co.output));
	} else if (job.mode == DS_PAIRS) {
		if (work)
			write_pairs(out, &job, qrec, &cr);
	} else if (work) {
		write_topk(out, &job, qrec, &cr);
	}
	out_close(out);
	phase_add(PH_WRITE, now_sec() - t);
	phases_report();

	free(job.top_s);
	free(job.top_i);
	free(job.pairs);
	free(job.mat);
	if (f == F_TEXT) {
		csr_free(&cv);
		if (o.qpath != NULL)
			csr_free(&qv);
		ds_vocab_free(vocab);
		free(o.text.stop);
		free(stop_text);
	}
	free_recs(&cr);
	if (o.qpath != NULL)
		free_recs(&qr);
	return 0;
}
