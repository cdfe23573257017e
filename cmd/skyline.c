/* skyline: the rows no other row dominates, classic (in chosen columns) or spatial
 * (2-D points with respect to query points). See man/skyline.1. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cudadev.h"
#include "dense.h"
#include "err.h"
#include "input.h"
#include "output.h"
#include "skyline.h"
#include "timer.h"

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

/* ---- -f LIST and -p LIST ---- */

struct range {
	size_t lo, hi;		/* 1-based, inclusive; hi = 0: to the last column */
};

struct fields {
	struct range *r;
	size_t n;
	const char *text;	/* NULL: every column */
};

static size_t
field_number(const char *list, const char *s, char **end)
{
	if (*s < '0' || *s > '9')
		usage_error("invalid field list '%s' (expected numbers and ranges like 1,3-5,7-)",
		    list);
	unsigned long long v = strtoull(s, end, 10);
	if (v == 0)
		usage_error("invalid field list '%s': fields are numbered from 1", list);
	if (v > ((size_t)1 << 31))
		usage_error("invalid field list '%s': field number too large", list);
	return (size_t)v;
}

/* Parses -f LIST into f (a later -f replaces an earlier one). */
static void
parse_fields(const char *list, struct fields *f)
{
	const char *s = list;
	free(f->r);
	f->r = NULL;
	f->n = 0;
	f->text = list;
	for (;;) {
		struct range r = {1, 0};
		char *end = (char *)s;
		if (*s == '-') {
			r.hi = field_number(list, s + 1, &end);
		} else {
			r.lo = field_number(list, s, &end);
			r.hi = r.lo;
			if (*end == '-') {
				r.hi = 0;
				if (end[1] >= '0' && end[1] <= '9') {
					r.hi = field_number(list, end + 1, &end);
					if (r.hi < r.lo)
						usage_error("invalid field list '%s': decreasing range", list);
				} else {
					end++;
				}
			}
		}
		f->r = xreallocarray(f->r, f->n + 1, sizeof *f->r);
		f->r[f->n++] = r;
		if (*end == '\0')
			return;
		if (*end != ',')
			usage_error("invalid field list '%s' (expected numbers and ranges like 1,3-5,7-)",
			    list);
		s = end + 1;
	}
}

/* The chosen columns of a table of `cols` columns, 0-based and ascending (cut's
 * rule: a column is chosen once, in its place). Returns the count. */
static size_t
resolve_fields(const struct fields *f, size_t cols, const char *name, size_t *col)
{
	size_t n = 0;
	if (f->text == NULL) {
		for (size_t j = 0; j < cols; j++)
			col[n++] = j;
		return n;
	}
	for (size_t k = 0; k < f->n; k++)
		if (f->r[k].hi != 0 && f->r[k].hi > cols)
			die("%s: column %zu does not exist (rows have %zu)", name, f->r[k].hi, cols);
	for (size_t j = 0; j < cols; j++)
		for (size_t k = 0; k < f->n; k++)
			if (j + 1 >= f->r[k].lo && (f->r[k].hi == 0 || j + 1 <= f->r[k].hi)) {
				col[n++] = j;
				break;
			}
	if (n == 0)
		die("%s: the field list '%s' chooses none of its %zu columns", name, f->text, cols);
	return n;
}

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

/* ---- input ---- */

struct table {
	const char *name;
	struct matrix m;	/* every column: float (NPY <f4) or double */
	int npy;
	char *text;		/* text input whose rows are printed: each row's line, */
	uint64_t *line;		/* NUL-terminated, at text + line[i] */
	uint64_t *lineno;	/* text input: row i's line number */
};

/* The element type an NPY input holds, so that <f4 stays float in memory. The
 * reader checks the header itself; this only looks for '<f8'. */
static enum dtype
npy_dtype(input *in)
{
	size_t avail;
	const unsigned char *p = in_peek(in, 12, &avail);
	if (avail < 12)
		return DT_F32;
	size_t pre = p[6] == 1 ? 10 : 12;
	size_t hlen = p[8] | (size_t)p[9] << 8;
	if (pre == 12)
		hlen |= (size_t)p[10] << 16 | (size_t)p[11] << 24;
	if (hlen > ((size_t)1 << 20))
		return DT_F32;
	p = in_peek(in, pre + hlen, &avail);
	for (size_t i = pre; i + 3 <= avail; i++)
		if (memcmp(p + i, "<f8", 3) == 0)
			return DT_F64;
	return DT_F32;
}

static void
read_text(input *in, int keep_text, struct table *t)
{
	const char *name = in_name(in);
	size_t cap_row = 64, cols = 0, rows = 0, cap = 0, tlen = 0, tcap = 0;
	double *row = xmallocarray(cap_row, sizeof *row), *vals = NULL;
	uint64_t first = 0;
	char *line;
	size_t len;

	while ((line = in_getline(in, &len)) != NULL) {
		uint64_t ln = in_lineno(in);
		size_t k = dense_parse_line(line, row, cap_row, name, ln, 0);
		if (k == 0)
			continue;
		if (cols == 0) {
			if (k > cap_row) {
				cap_row = k;
				row = xreallocarray(row, cap_row, sizeof *row);
				dense_parse_line(line, row, cap_row, name, ln, 0);
			}
			cols = k;
			first = ln;
		} else if (k != cols) {
			die_at(name, ln, "row has %zu columns, expected %zu as on line %llu", k, cols,
			    (unsigned long long)first);
		}
		if (rows == cap) {
			cap = cap ? mul_size(cap, 2, "rows") : 1024;
			vals = xreallocarray(vals, mul_size(cap, cols, "rows"), sizeof *vals);
			t->lineno = xreallocarray(t->lineno, cap, sizeof *t->lineno);
			if (keep_text)
				t->line = xreallocarray(t->line, cap, sizeof *t->line);
		}
		memcpy(vals + rows * cols, row, cols * sizeof *vals);
		t->lineno[rows] = ln;
		if (keep_text) {
			if (tlen + len + 1 > tcap) {
				tcap = MAX(mul_size(tcap, 2, "text"), tlen + len + 1 + 65536);
				t->text = xrealloc(t->text, tcap);
			}
			memcpy(t->text + tlen, line, len + 1);
			t->line[rows] = tlen;
			tlen += len + 1;
		}
		rows++;
	}
	free(row);
	t->m.rows = rows;
	t->m.cols = cols;
	t->m.dtype = DT_F64;
	t->m.data = vals;
}

static void
read_table(const char *path, int keep_text, struct table *t)
{
	input *in = in_open(path);
	size_t avail;
	const unsigned char *p = in_peek(in, 6, &avail);

	memset(t, 0, sizeof *t);
	if (avail == 6 && memcmp(p, "\x93NUMPY", 6) == 0) {
		t->npy = 1;
		mat_read(in, npy_dtype(in), 0, &t->m);
	} else {
		read_text(in, keep_text, t);
	}
	t->name = xstrdup(in_name(in));
	in_close(in);
	if (t->m.rows >= UINT32_MAX)
		die("%s: %zu rows is more than skyline handles (%u)", t->name, t->m.rows,
		    UINT32_MAX - 1);
}

static double
cell(const struct table *t, size_t i, size_t j)
{
	size_t o = i * t->m.cols + j;
	return t->m.dtype == DT_F64 ? ((const double *)t->m.data)[o] :
	    ((const float *)t->m.data)[o];
}

/* Two chosen columns as float pairs; a value beyond float32 is an error at its row. */
static float *
points(const struct table *t, const size_t *col)
{
	size_t n = t->m.rows;
	float *xy = xmallocarray(mul_size(n, 2, "points"), sizeof *xy);
	size_t bad = SIZE_MAX;
	#pragma omp parallel for reduction(min:bad) if (n > 100000)
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < 2; c++) {
			xy[2 * i + c] = (float)cell(t, i, col[c]);
			if (isinf(xy[2 * i + c]))
				bad = MIN(bad, i);
		}
	if (bad != SIZE_MAX) {
		if (t->npy)
			die("%s: row %zu: a coordinate is beyond the float32 range", t->name, bad + 1);
		die_at(t->name, t->lineno[bad], "a coordinate is beyond the float32 range");
	}
	return xy;
}

/* ---- output ---- */

/* fmt_f32's text, faster for the usual magnitudes: candidate digits come from double
 * arithmetic and are kept only when they read back to v exactly (the decimal is
 * rounded to double once, by Clinger's fast path, and the double lies on no float
 * midpoint, so rounding on to float is the decimal's own rounding). */
static int
fast_f32(char *buf, float v)
{
	static const double p10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	double x = fabs((double)v);
	if (!(x >= 1e-13 && x < 1e13))
		return fmt_f32(buf, v);
	char *b = buf;
	if (v < 0)
		*b++ = '-';
	if (x < 16777216.0 && x == floor(x)) {
		char t[12];
		int n = 0;
		for (uint32_t u = (uint32_t)x; u > 0 || n == 0; u /= 10)
			t[n++] = (char)('0' + u % 10);
		while (n > 0)
			*b++ = t[--n];
		*b = '\0';
		return (int)(b - buf);
	}
	int e = (int)floor(log10(x));
	for (int p = 6; p <= 9; p++) {
		uint64_t d = 0;
		for (int tries = 0; tries < 3; tries++) {
			int k = p - 1 - e;
			double sc = k >= 0 ? x * p10[k] : x / p10[-k];
			d = (uint64_t)llround(sc);
			if (d >= (uint64_t)p10[p])
				e++;
			else if (d < (uint64_t)p10[p - 1])
				e--;
			else
				break;
		}
		if (d < (uint64_t)p10[p - 1] || d >= (uint64_t)p10[p])
			break;
		int q = e - p + 1;
		double val = q >= 0 ? (double)d * p10[q] : (double)d / p10[-q];
		uint64_t bits;
		memcpy(&bits, &val, 8);
		if ((bits & 0x1fffffffu) == 0x10000000u)	/* a float midpoint */
			break;
		if ((float)val != (float)x)
			continue;
		char dig[12];
		int len = p;
		for (int i = p - 1; i >= 0; i--, d /= 10)
			dig[i] = (char)('0' + d % 10);
		while (len > 1 && dig[len - 1] == '0')
			len--;
		/* laid out as fmt_f32 does: plain from 1e-5 to 1e16, else scientific */
		if (e < -5 || e >= 16)
			break;
		if (e < 0) {
			*b++ = '0';
			*b++ = '.';
			for (int i = -1; i > e; i--)
				*b++ = '0';
			memcpy(b, dig, (size_t)len);
			b += len;
		} else {
			for (int i = 0; i <= e || i < len; i++) {
				if (i == e + 1)
					*b++ = '.';
				*b++ = i < len ? dig[i] : '0';
			}
		}
		*b = '\0';
		return (int)(b - buf);
	}
	return fmt_f32(buf, v);
}

/* NPY input printed as text: rows formatted in parallel, written in order. */
static void
print_rows_npy(output *o, const struct table *t, const uint32_t *keep, size_t m)
{
	size_t cols = t->m.cols, per = cols * 49 + 1;
	size_t chunk = MAX((size_t)1, ((size_t)1 << 20) / per);
	int nt = omp_get_max_threads();
	char **buf = xcalloc((size_t)nt, sizeof *buf);
	size_t *len = xcalloc((size_t)nt, sizeof *len);

	for (int u = 0; u < nt; u++)
		buf[u] = xmalloc(mul_size(chunk, per, "output"));
	for (size_t b = 0; b < m; b += chunk * nt) {
		#pragma omp parallel num_threads(nt)
		{
			int u = omp_get_thread_num();
			size_t lo = b + chunk * u, hi = MIN(m, lo + chunk);
			char *s = buf[u];
			for (size_t k = lo; k < hi; k++) {
				for (size_t j = 0; j < cols; j++) {
					if (j > 0)
						*s++ = '\t';
					s += t->m.dtype == DT_F64 ? fmt_f64(s, cell(t, keep[k], j)) :
					    fast_f32(s, (float)cell(t, keep[k], j));
				}
				*s++ = '\n';
			}
			len[u] = (size_t)(s - buf[u]);
		}
		for (int u = 0; u < nt; u++)
			out_write(o, buf[u], len[u]);
	}
	for (int u = 0; u < nt; u++)
		free(buf[u]);
	free(buf);
	free(len);
}

static void
print_result(output *o, int fmt, int what, const struct table *t, const uint32_t *keep, size_t m)
{
	if (what == OPT_COUNT) {
		out_u64(o, m);
		out_putc(o, '\n');
	} else if (what == OPT_INDEX) {
		for (size_t k = 0; k < m; k++) {
			out_u64(o, (uint64_t)keep[k] + 1);
			out_putc(o, '\n');
		}
	} else if (fmt == FMT_NPY) {
		size_t cols = t->m.cols;
		float *row = xmallocarray(MAX(cols, 1), sizeof *row);
		npy_write_header(o, DT_F32, m, cols);
		for (size_t k = 0; k < m; k++) {
			for (size_t j = 0; j < cols; j++)
				row[j] = (float)cell(t, keep[k], j);
			out_write(o, row, cols * sizeof *row);
		}
		free(row);
	} else if (t->npy) {
		print_rows_npy(o, t, keep, m);
	} else {
		for (size_t k = 0; k < m; k++) {
			const char *s = t->text + t->line[keep[k]];
			out_write(o, s, strlen(s));
			out_putc(o, '\n');
		}
	}
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
	int distinct = 0, what = 0, c;

	cli_init(argc, argv, &co);
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORT "f:p:Q:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			parse_fields(optarg, &fields);
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
			if (what != 0 && what != c)
				usage_error("--index and --count exclude each other");
			what = c;
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
	if (fmt == FMT_NPY && what != 0)
		usage_error("-O npy writes rows; it does not go with --%s",
		    what == OPT_INDEX ? "index" : "count");
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
	struct table q = {0}, t;
	float *qxy = NULL;
	size_t qn = 0, qcol[2];
	if (qpath != NULL) {
		read_table(qpath, 0, &q);
		if (q.m.rows == 0)
			die("%s: no query points", q.name);
		if (q.m.cols == 2 || fields.text == NULL) {
			if (q.m.cols != 2)
				die("%s: query points have %zu columns, expected 2 (x y)", q.name,
				    q.m.cols);
			qcol[0] = 0;
			qcol[1] = 1;
		} else {
			size_t *col = xmallocarray(q.m.cols, sizeof *col);
			size_t k = resolve_fields(&fields, q.m.cols, q.name, col);
			if (k != 2)
				die("%s: the field list '%s' chooses %zu columns, a query point has 2",
				    q.name, fields.text, k);
			qcol[0] = col[0];
			qcol[1] = col[1];
			free(col);
		}
		qxy = points(&q, qcol);
		qn = q.m.rows;
	}
	read_table(path, fmt == FMT_TEXT && what == 0, &t);
	phase_add(PH_READ, now_sec() - t0);

	size_t n = t.m.rows, cols = t.m.cols, m = 0;
	size_t *col = xmallocarray(MAX(cols, 1), sizeof *col);
	size_t d = n ? resolve_fields(&fields, cols, t.name, col) : 0;
	vlog("%zu rows of %zu columns, %zu chosen", n, cols, d);
	if (qpath != NULL && n > 0 && d != 2)
		die("%s: a spatial skyline needs 2 columns (x y), %zu are chosen%s", t.name, d,
		    fields.text ? "" : "; choose them with -f");
	if (qpath == NULL && prefs.n != 0 && prefs.n != 1 && prefs.n != d && n > 0)
		usage_error("--prefer '%s' gives %zu preferences for %zu chosen columns",
		    prefs.text, prefs.n, d);
	uint32_t *keep = xmallocarray(MAX(n, 1), sizeof *keep);

	if (qpath != NULL) {
		float *hull = xmallocarray(mul_size(qn, 2, "hull"), sizeof *hull);
		size_t h = sky_hull(qxy, qn, hull);
		/* float pairs already: used in place */
		int inplace = n && t.m.dtype == DT_F32 && cols == 2 && col[0] == 0 && col[1] == 1;
		float *xy = inplace ? t.m.data : n ? points(&t, col) : NULL;
		struct sky_spatial job = {n, xy, hull, h, sky_tolerance(xy, n, hull, h), distinct};
		vlog("%zu query points, %zu on the hull; %s arithmetic", qn, h,
		    job.tol == 0 ? "exact double" : "double with exact fallback");
		cuda_start_wait();
		double tc = now_sec();
#ifdef ACCELKIT_CUDA
		if (dev.gpu && n > 0)
			m = sky_spatial_gpu(&job, &dev, co.max_device_mem, keep);
		else
#endif
			m = sky_spatial_cpu(&job, keep);
		if (!dev.gpu)
			phase_add(PH_COMPUTE, now_sec() - tc);
		if (!inplace)
			free(xy);
		free(hull);
	} else if (n > 0) {
		unsigned char *maxp = xcalloc(d, 1);
		for (size_t j = 0; j < d && prefs.n > 0; j++)
			maxp[j] = prefs.max[prefs.n == 1 ? 0 : j];
		struct sky_classic job = {n, d, t.m.data, t.m.dtype == DT_F64, cols, col, maxp,
		    distinct};
		cuda_start_wait();
		double tc = now_sec();
#ifdef ACCELKIT_CUDA
		if (dev.gpu)
			m = sky_classic_gpu(&job, &dev, co.max_device_mem, keep);
		else
#endif
			m = sky_classic_cpu(&job, keep);
		if (!dev.gpu)
			phase_add(PH_COMPUTE, now_sec() - tc);
		free(maxp);
	}
	cuda_start_wait();
	vlog("%zu rows in the skyline", m);

	double tw = now_sec();
	output *o = out_open(co.output);
	print_result(o, fmt, what, &t, keep, m);
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
	mat_free(&q.m);
	mat_free(&t.m);
	free(t.text);
	free(t.line);
	free(t.lineno);
	free(q.lineno);
	free((char *)t.name);
	free((char *)q.name);
	free(fields.r);
	free(prefs.max);
	return 0;
}
