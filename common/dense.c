/* dense.c: dense matrix reading and writing (see dense.h). */
#include "dense.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunks.h"
#include "cli.h"
#include "err.h"
#include "numparse.h"
#include "ranks.h"
#include "rowplace.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
#define NPY_HEADER_TOTAL 128	/* what we write: magic, version, length, dict, padding */

/* The element types of NPY data read: little-endian floats, integers and bools. */
enum npy_type { NPY_F4, NPY_F8, NPY_I1, NPY_I2, NPY_I4, NPY_I8, NPY_U1, NPY_U2, NPY_U4,
	NPY_U8, NPY_B1 };
static const struct {
	const char *descr;
	enum npy_type type;
	size_t size;
} npy_types[] = {
	{"<f4", NPY_F4, 4}, {"<f8", NPY_F8, 8},
	{"<i1", NPY_I1, 1}, {"|i1", NPY_I1, 1}, {"<i2", NPY_I2, 2}, {"<i4", NPY_I4, 4},
	{"<i8", NPY_I8, 8},
	{"<u1", NPY_U1, 1}, {"|u1", NPY_U1, 1}, {"<u2", NPY_U2, 2}, {"<u4", NPY_U4, 4},
	{"<u8", NPY_U8, 8},
	{"|b1", NPY_B1, 1},
};

struct dense_ctx {
	int flags;
	enum dtype dt;		/* how the chunks keep their numbers */
	rowplace *rp;		/* mat_read: the threads write the rows into the matrix */
};

struct dstream {
	input *in;
	int flags;
	int npy;
	size_t cols;
	/* NPY */
	enum npy_type ftype;	/* the file's element type */
	size_t fsize;		/* its size in bytes */
	uint64_t rows_total;
	uint64_t elems_done;	/* elements read */
	uint64_t data_off;	/* input offset of the first element */
	/* text */
	chunks *chunks;
	struct dense_ctx ctx;
	struct chunk *cur;	/* the chunk rows are read from */
	size_t ri, vi;		/* its next row, and that row's first number */
	uint64_t lineno, first_lineno;
};

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A number that float32 cannot hold (it would round to Inf): Inf is an error unless
 * the caller allows it, so this is one too. */
static void
f32_range_msg(char *err, size_t col, double v)
{
	char num[32];
	fmt_f64(num, v);
	snprintf(err, DENSE_ERR, "column %zu: %s is out of range for float32", col, num);
}

/* The bytes that may follow a number in a row. */
static const unsigned char field_end[256] = {
	[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1, [','] = 1, ['#'] = 1,
	['\0'] = 1, ['\n'] = 1,
};

/* A number that is not a plain decimal (numparse.h's parse_plain), as strtod reads it,
 * field n + 1 of a row ending at end: its end and value, or NULL and the error in err. */
static __attribute__((noinline)) const char *
number_slow(const char *p, const char *end, size_t n, enum dtype dt, int flags, double *out,
    char *err)
{
	double v;
	const char *e = parse_double(p, &v);
	if (e == p || e > end || !(e == end || *e == '\0' || *e == ',' || *e == '#' ||
	    is_blank(*e))) {
		size_t len = 0;
		while (p + len < end && p[len] != '\0' && strchr(" \t\r,#", p[len]) == NULL)
			len++;
		snprintf(err, DENSE_ERR, "column %zu: not a number: '%.*s'%s", n + 1,
		    (int)MIN(len, 40), p, len > 40 ? "..." : "");
		return NULL;
	}
	if (!(flags & MAT_ALLOW_NONFINITE) && !isfinite(v)) {
		snprintf(err, DENSE_ERR, "column %zu: %s is not allowed", n + 1,
		    isnan(v) ? "NaN" : "Inf");
		return NULL;
	}
	if (dt == DT_F32 && !(flags & MAT_ALLOW_NONFINITE) && isinf((float)v)) {
		f32_range_msg(err, n + 1, v);
		return NULL;
	}
	*out = v;
	return e;
}

size_t
dense_parse_span(const char *p, const char *end, void *vals, enum dtype dt, size_t cap,
    int flags, char *err)
{
	size_t n = 0;

	while (p < end && is_blank(*p))
		p++;
	if (p < end && *p == ',') {
		snprintf(err, DENSE_ERR, "empty field in column 1");
		return SIZE_MAX;
	}
	/* p is at a number, or at the line's end, a NUL or a comment; after each number
	 * the separators are taken, so that it is there again */
	while (p < end && *p != '\0' && *p != '#') {
		double v, sv;
		const char *e = parse_plain(p, end, field_end, &v);
		if (__builtin_expect(e == NULL, 0)) {
			/* sv: v stays out of memory on the plain path */
			if ((e = number_slow(p, end, n, dt, flags, &sv, err)) == NULL)
				return SIZE_MAX;
			v = sv;
		}
		if (n < cap) {
			if (dt == DT_F32)
				((float *)vals)[n] = (float)v;
			else
				((double *)vals)[n] = v;
		}
		n++;
		p = e;
		while (p < end && is_blank(*p))
			p++;
		if (p < end && *p == ',') {
			p++;
			while (p < end && is_blank(*p))
				p++;
			if (p == end || *p == '\0' || *p == '#' || *p == ',') {
				snprintf(err, DENSE_ERR, "empty field in column %zu", n + 1);
				return SIZE_MAX;
			}
		}
	}
	return n;
}

size_t
dense_parse_line(char *line, double *vals, size_t cap, const char *file, uint64_t lineno,
    int flags)
{
	char err[DENSE_ERR];
	size_t n = dense_parse_span(line, line + strlen(line), vals, DT_F64, cap, flags, err);
	if (n == SIZE_MAX)
		die_at(file, lineno, "%s", err);
	return n;
}

/* ---- text in chunks (chunks.h) ---- */

struct drow {
	uint64_t line;		/* within the chunk */
	size_t width;
};

/* A chunk's data rows: their numbers one after another, as dt. */
struct dense_res {
	char *val;
	size_t nval, capval;
	struct drow *row;
	size_t nrows, caprows;
};

static void
dense_parse_chunk(void *ctx, struct chunk *c)
{
	const struct dense_ctx *x = ctx;
	struct dense_res *r = c->res;
	size_t esz = dtype_size(x->dt);
	const char *p = c->data, *end = p + c->len;
	uint64_t line = 0;
	char err[DENSE_ERR];

	if (r == NULL) {
		r = c->res = xcalloc(1, sizeof *r);
		r->capval = c->len / 6 + 64;	/* a number takes 6 bytes or more, mostly */
		r->val = xmallocarray(r->capval, esz);
		r->caprows = 64;
		r->row = xmallocarray(r->caprows, sizeof *r->row);
	}
	r->nval = r->nrows = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl != NULL ? nl : end;
		size_t room = r->capval - r->nval, n;
		line++;
		while ((n = dense_parse_span(p, e, r->val + r->nval * esz, x->dt, room, x->flags, err)) > room &&
		    n != SIZE_MAX) {
			/* more numbers than room: grow and parse the line again */
			r->capval = MAX(2 * r->capval, r->nval + n);
			r->val = xreallocarray(r->val, r->capval, esz);
			room = r->capval - r->nval;
		}
		if (n == SIZE_MAX)
			return chunk_fail(c, line, "%s", err);
		if (n > 0) {
			if (r->nrows == r->caprows) {
				r->caprows *= 2;
				r->row = xreallocarray(r->row, r->caprows, sizeof *r->row);
			}
			r->row[r->nrows].line = line;
			r->row[r->nrows++].width = n;
			r->nval += n;
		}
		p = e + (nl != NULL);
	}
	c->lines = line;
	if (x->rp != NULL) {
		size_t w = r->nrows > 0 ? r->row[0].width : 0;
		for (size_t i = 1; i < r->nrows && w != 0; i++)
			if (r->row[i].width != w)
				w = 0;
		rp_parsed(x->rp, c->index, r->nrows, r->val, w * esz);
	}
}

static void
dense_free_res(void *res)
{
	struct dense_res *r = res;
	free(r->val);
	free(r->row);
	free(r);
}

static const struct chunk_ops dense_ops = {.cut = chunk_cut_lines,
    .parse = dense_parse_chunk, .free_res = dense_free_res};

static size_t
dense_rows(const struct chunk *c)
{
	return ((const struct dense_res *)c->res)->nrows;
}

/* Makes the current chunk one with a row left to read; 0 at the end of the input.
 * A chunk's error is reported once the rows before it are read. */
static int
text_rows_left(dstream *s)
{
	if (!chunks_take(s->chunks, &s->cur, &s->ri, dense_rows))
		return 0;
	if (s->ri == 0)
		s->vi = 0;	/* a new chunk (its slot may be the last one's) */
	return 1;
}

/* ---- NPY header ---- */

/* Finds 'key': in the header dict and returns a pointer past the colon. */
static const char *
npy_key(const char *hdr, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof pat, "'%s'", key);
	const char *p = strstr(hdr, pat);
	if (p == NULL) {
		snprintf(pat, sizeof pat, "\"%s\"", key);
		p = strstr(hdr, pat);
	}
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static void
npy_open(dstream *s)
{
	input *in = s->in;
	const char *name = in_name(in);
	unsigned char pre[12];
	size_t got = in_read(in, pre, 10);
	uint32_t hlen;
	size_t pre_len = 10;

	if (got < 10)
		die_off(name, got, "NPY header is truncated");
	int major = pre[6];
	if (major == 1) {
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
	} else if (major == 2 || major == 3) {
		if (in_read(in, pre + 10, 2) < 2)
			die_off(name, 10, "NPY header is truncated");
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
		    (uint32_t)pre[11] << 24;
		pre_len = 12;
	} else {
		die_off(name, 6, "unsupported NPY version %d", major);
	}
	if (hlen > (1u << 20))
		die_off(name, 8, "NPY header length %u is implausible", hlen);
	int64_t rem = in_remaining(in);
	if (rem >= 0 && (uint64_t)rem < hlen)
		die_off(name, pre_len, "NPY header is truncated (%u bytes promised)", hlen);
	char *hdr = xmalloc(hlen + 1);
	if (in_read(in, hdr, hlen) < hlen)
		die_off(name, pre_len, "NPY header is truncated (%u bytes promised)", hlen);
	hdr[hlen] = '\0';

	const char *d = npy_key(hdr, "descr");
	if (d == NULL || (*d != '\'' && *d != '"'))
		die_off(name, pre_len, "NPY header has no 'descr'");
	char descr[16] = "";
	size_t dl = strcspn(d + 1, "'\""), t = 0;
	snprintf(descr, sizeof descr, "%.*s", (int)MIN(dl, 15), d + 1);
	while (t < sizeof npy_types / sizeof npy_types[0] && strcmp(descr, npy_types[t].descr) != 0)
		t++;
	if (t == sizeof npy_types / sizeof npy_types[0])
		die_off(name, pre_len, "unsupported NPY dtype '%s' (expected <f4, <f8, a "
		    "little-endian integer such as <i8, or |b1)", descr);
	s->ftype = npy_types[t].type;
	s->fsize = npy_types[t].size;

	const char *f = npy_key(hdr, "fortran_order");
	if (f == NULL)
		die_off(name, pre_len, "NPY header has no 'fortran_order'");
	if (strncmp(f, "True", 4) == 0)
		die_off(name, pre_len, "Fortran-order NPY is not supported (save it in C order)");

	const char *sh = npy_key(hdr, "shape");
	if (sh == NULL || *sh != '(')
		die_off(name, pre_len, "NPY header has no 'shape'");
	uint64_t dims[8];
	int nd = 0;
	const char *p = sh + 1;
	for (;;) {
		while (isspace((unsigned char)*p) || *p == ',')
			p++;
		if (*p == ')')
			break;
		if (!isdigit((unsigned char)*p) || nd == 8)
			die_off(name, pre_len, "NPY shape is malformed");
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (v > ((uint64_t)1 << 62))
			die_off(name, pre_len, "NPY shape is too large");
		dims[nd++] = v;
		p = end;
		while (*p == 'L')	/* Python 2 longs */
			p++;
	}
	if (nd > 2)
		die_off(name, pre_len, "NPY array has %d dimensions (expected 1 or 2)", nd);
	uint64_t rows = nd == 0 ? 1 : dims[0];
	uint64_t cols = nd == 2 ? dims[1] : 1;
	free(hdr);

	uint64_t elems, bytes;
	if (__builtin_mul_overflow(rows, cols, &elems) ||
	    __builtin_mul_overflow(elems, (uint64_t)s->fsize, &bytes) ||
	    bytes > (uint64_t)SIZE_MAX / 2)
		die_off(name, pre_len, "NPY shape (%llu, %llu) is too large",
		    (unsigned long long)rows, (unsigned long long)cols);
	s->data_off = in_tell(in);
	rem = in_remaining(in);
	if (rem >= 0 && (uint64_t)rem < bytes)
		die_off(name, s->data_off,
		    "NPY data is truncated: shape (%llu, %llu) needs %llu bytes, the file has %lld",
		    (unsigned long long)rows, (unsigned long long)cols,
		    (unsigned long long)bytes, (long long)rem);
	s->rows_total = rows;
	s->cols = rows == 0 ? (size_t)cols : (size_t)cols;
	if (cols == 0 && rows > 0)
		s->rows_total = 0;	/* n x 0: no data at all */
}

/* dstream_open with the element type text chunks keep their numbers in: the type the
 * caller reads, so that copying them out is a memcpy; place: the rows of text go into
 * one matrix (mat_read), written by the threads that parse them (rowplace.h). */
static dstream *
dstream_open_dt(input *in, int flags, enum dtype dt, int place)
{
	dstream *s = xcalloc(1, sizeof *s);
	size_t avail;
	const unsigned char *p = in_peek(in, 6, &avail);

	s->in = in;
	s->flags = flags;
	if (avail == 6 && memcmp(p, npy_magic, 6) == 0) {
		s->npy = 1;
		npy_open(s);
		return s;
	}
	/* Text: the first data row fixes the width. */
	s->ctx.flags = flags;
	s->ctx.dt = dt;
	s->ctx.rp = place ? rp_new(chunks_slots()) : NULL;
	s->chunks = chunks_open(in, &dense_ops, &s->ctx);
	if (text_rows_left(s)) {
		const struct drow *first = &((struct dense_res *)s->cur->res)->row[s->ri];
		s->cols = first->width;
		s->first_lineno = s->cur->line0 + first->line;
	}
	return s;
}

dstream *
dstream_open(input *in, int flags)
{
	return dstream_open_dt(in, flags, DT_F64, 0);
}

void
dstream_close(dstream *s)
{
	if (s == NULL)
		return;
	chunks_close(s->chunks);
	free(s);
}

size_t
dstream_cols(const dstream *s)
{
	return s->cols;
}

int
dstream_is_npy(const dstream *s)
{
	return s->npy;
}

int64_t
dstream_rows_total(const dstream *s)
{
	return s->npy ? (int64_t)s->rows_total : -1;
}

uint64_t
dstream_lineno(const dstream *s)
{
	return s->lineno;
}

/* Whether element i of NPY float data may not be read: NaN or Inf, or (narrow: read
 * as float32) a float64 beyond float32's range, which would become Inf. */
static inline int
npy_bad(const void *raw, size_t i, int f8, int narrow)
{
	if (!f8)
		return !isfinite(((const float *)raw)[i]);
	double v = ((const double *)raw)[i];
	return !isfinite(v) || (narrow && isinf((float)v));
}

/* Dies at the first element of raw[0..nelem) (elements first.. of the data) that may
 * not be read as dt, unless MAT_ALLOW_NONFINITE. Integers and bools always may. */
static void
npy_check(const dstream *s, const void *raw, size_t nelem, uint64_t first, enum dtype dt)
{
	int f8 = s->ftype == NPY_F8, narrow = f8 && dt == DT_F32, any = 0;

	if ((s->flags & MAT_ALLOW_NONFINITE) || (s->ftype != NPY_F4 && !f8))
		return;
	/* A parallel scan finds whether anything is bad; the first bad element is
	 * then located in order, so the message does not depend on thread timing. */
	#pragma omp parallel for reduction(|:any) if (nelem > (1 << 20))
	for (size_t i = 0; i < nelem; i++)
		any |= npy_bad(raw, i, f8, narrow);
	if (!any)
		return;
	size_t bad = 0;
	while (!npy_bad(raw, bad, f8, narrow))
		bad++;
	uint64_t e = first + bad, row = e / s->cols + 1, col = e % s->cols + 1;
	uint64_t off = s->data_off + e * s->fsize;
	double v = f8 ? ((const double *)raw)[bad] : ((const float *)raw)[bad];
	if (isfinite(v)) {
		char num[32];
		fmt_f64(num, v);
		die_off(in_name(s->in), off, "%s in NPY data is out of range for float32 "
		    "(row %llu, column %llu)", num, (unsigned long long)row,
		    (unsigned long long)col);
	}
	die_off(in_name(s->in), off, "%s in NPY data (row %llu, column %llu)",
	    isnan(v) ? "NaN" : "Inf", (unsigned long long)row, (unsigned long long)col);
}

/* n elements of NPY data of type t at raw into dst as dt. Integers round to the
 * nearest float as C's conversions (and numpy's astype) do; a bool is 0 or 1. */
static void
npy_convert(const unsigned char *raw, enum npy_type t, size_t n, enum dtype dt, void *dst)
{
	float *f = dst;
	double *d = dst;

#define CONVERT(T)							\
	_Pragma("omp parallel for if (n > (1 << 20))")			\
	for (size_t i = 0; i < n; i++) {				\
		T x;							\
		memcpy(&x, raw + i * sizeof x, sizeof x);		\
		if (dt == DT_F32)					\
			f[i] = (float)x;				\
		else							\
			d[i] = (double)x;				\
	}								\
	break
	switch (t) {
	case NPY_F4: CONVERT(float);
	case NPY_F8: CONVERT(double);
	case NPY_I1: CONVERT(int8_t);
	case NPY_I2: CONVERT(int16_t);
	case NPY_I4: CONVERT(int32_t);
	case NPY_I8: CONVERT(int64_t);
	case NPY_U1: CONVERT(uint8_t);
	case NPY_U2: CONVERT(uint16_t);
	case NPY_U4: CONVERT(uint32_t);
	case NPY_U8: CONVERT(uint64_t);
	case NPY_B1:	/* any byte but 0 is true, as numpy reads it */
		for (size_t i = 0; i < n; i++)
			if (dt == DT_F32)
				f[i] = raw[i] != 0;
			else
				d[i] = raw[i] != 0;
		break;
	}
#undef CONVERT
}

/* The next nelem elements of the data into dst as dt. */
static void
npy_read_elems(dstream *s, size_t nelem, enum dtype dt, void *dst)
{
	size_t bytes = nelem * s->fsize;	/* within the size npy_open checked */
	uint64_t first = s->elems_done;
	int same = (s->ftype == NPY_F4 && dt == DT_F32) || (s->ftype == NPY_F8 && dt == DT_F64);
	void *raw = same ? dst : xmalloc(bytes);
	size_t got = in_read(s->in, raw, bytes);

	if (got < bytes)
		die_off(in_name(s->in), s->data_off + first * s->fsize + got,
		    "NPY data is truncated: the header promises %llu rows of %zu, the data ends in row %llu",
		    (unsigned long long)s->rows_total, s->cols,
		    (unsigned long long)((first + got / s->fsize) / s->cols + 1));
	npy_check(s, raw, nelem, first, dt);
	if (!same) {
		npy_convert(raw, s->ftype, nelem, dt, dst);
		free(raw);
	}
	s->elems_done += nelem;
}

static size_t
npy_read_rows(dstream *s, size_t maxrows, enum dtype dt, void *dst)
{
	uint64_t done = s->cols > 0 ? s->elems_done / s->cols : 0;
	size_t rows = (size_t)MIN((uint64_t)maxrows, s->rows_total - done);

	if (rows > 0)
		npy_read_elems(s, rows * s->cols, dt, dst);
	return rows;
}

/* Up to maxrows text rows into dst as dt; stops at the end of the current chunk. */
static size_t
text_read_rows(dstream *s, size_t maxrows, enum dtype dt, void *dst)
{
	const struct dense_res *r = s->cur->res;
	const struct drow *row = r->row + s->ri;
	size_t take = MIN(maxrows, r->nrows - s->ri), k, cols = s->cols;

	for (k = 0; k < take && row[k].width == cols; k++)
		;
	size_t n = k * cols;
	if (dt == s->ctx.dt) {
		memcpy(dst, r->val + s->vi * dtype_size(dt), n * dtype_size(dt));
	} else if (dt == DT_F32) {
		const double *v = (const double *)r->val + s->vi;
		for (size_t i = 0; i < n; i++) {
			float f = (float)v[i];
			if (isinf(f) && isfinite(v[i]) && !(s->flags & MAT_ALLOW_NONFINITE)) {
				char err[DENSE_ERR];
				f32_range_msg(err, i % cols + 1, v[i]);
				die_at(in_name(s->in), s->cur->line0 + row[i / cols].line, "%s", err);
			}
			((float *)dst)[i] = f;
		}
	} else {
		const float *v = (const float *)r->val + s->vi;
		for (size_t i = 0; i < n; i++)
			((double *)dst)[i] = v[i];
	}
	s->ri += k;
	s->vi += n;
	if (k > 0)
		s->lineno = s->cur->line0 + row[k - 1].line;
	if (k < take)
		die_at(in_name(s->in), s->cur->line0 + row[k].line,
		    "row has %zu columns, expected %zu as on line %llu", row[k].width, cols,
		    (unsigned long long)s->first_lineno);
	return k;
}

size_t
dstream_read(dstream *s, size_t maxrows, enum dtype dt, void *dst)
{
	if (s->npy)
		return npy_read_rows(s, maxrows, dt, dst);
	size_t r = 0;
	while (r < maxrows && s->cols > 0 && text_rows_left(s))
		r += text_read_rows(s, maxrows - r, dt, (char *)dst + r * s->cols * dtype_size(dt));
	return r;
}

void
mat_read(input *in, enum dtype dt, int flags, struct matrix *m)
{
	dstream *s = dstream_open_dt(in, flags, dt, 1);
	size_t esz = dtype_size(dt), cols = s->cols;
	rowplace *rp = s->ctx.rp;

	memset(m, 0, sizeof *m);
	m->dtype = dt;
	m->cols = cols;
	if (s->npy) {
		size_t rows = (size_t)s->rows_total;
		if (in_remaining(in) >= 0) {
			/* Size already checked against the file: read at once. */
			m->data = xmallocarray(mul_size(rows, cols, "matrix"), esz);
			m->rows = npy_read_rows(s, rows, dt, m->data);
		} else {
			/* A pipe: the header is not trusted for any allocation; the matrix
			 * grows as the data arrives, so a lying header fails at the data's
			 * end ("truncated"), not in malloc, even for one huge row. */
			size_t total = rows * cols, cap = MIN(total, ((size_t)1 << 20) / esz);
			m->data = xmallocarray(cap, esz);
			for (size_t done = 0; done < total; done = cap) {
				if (done == cap) {
					cap = MIN(total, mul_size(cap, 2, "matrix"));
					m->data = xreallocarray(m->data, cap, esz);
				}
				npy_read_elems(s, cap - done, dt, (char *)m->data + done * esz);
			}
			m->rows = rows;
		}
	} else if (cols > 0) {
		/* Chunk by chunk in order: the rows of the width go in (most of them written
		 * already by the thread that parsed them), then a row of another width or
		 * the chunk's error ends the read, as with one thread. */
		rp_width(rp, mul_size(cols, esz, "matrix row"));
		for (struct chunk *c = s->cur; c != NULL; c = chunks_next(s->chunks)) {
			const struct dense_res *r = c->res;
			size_t k = 0;
			while (k < r->nrows && r->row[k].width == cols)
				k++;
			rp_take(rp, c->index, k, r->val);
			if (k < r->nrows)
				die_at(in_name(s->in), c->line0 + r->row[k].line,
				    "row has %zu columns, expected %zu as on line %llu", r->row[k].width,
				    cols, (unsigned long long)s->first_lineno);
			if (c->err_line != 0)
				chunk_die(s->chunks, c);
		}
	}
	if (m->rows == 0)
		m->cols = cols;
	dstream_close(s);	/* the threads end: then the matrix is the caller's */
	if (rp != NULL) {
		m->data = rp_finish(rp, &m->rows);
		m->cols = cols;
	}
}

void
mat_read_share(input *in, enum dtype dt, int flags, struct matrix *m, uint64_t *first,
    uint64_t *total)
{
	if (ranks_size() == 1) {
		mat_read(in, dt, flags, m);
		*first = 0;
		*total = m->rows;
		return;
	}
	ranks_serial_begin();	/* a bad header: rank 0 says so, once */
	in_need_shares(in, in_name(in));
	dstream *s = dstream_open_dt(in, flags, dt, 0);
	if (!s->npy)
		die("%s: not NPY", in_name(in));
	ranks_serial_end();
	uint64_t count;
	ranks_share(s->rows_total, first, &count);
	*total = s->rows_total;
	memset(m, 0, sizeof *m);
	m->dtype = dt;
	m->cols = s->cols;
	uint64_t row = (uint64_t)s->cols * s->fsize;
	s->elems_done = *first * s->cols;
	in_range(in, s->data_off + *first * row, s->data_off + (*first + count) * row);
	m->data = xmallocarray(mul_size(MAX((size_t)count, 1), MAX(s->cols, 1), "matrix"),
	    dtype_size(dt));
	m->rows = count > 0 ? npy_read_rows(s, (size_t)count, dt, m->data) : 0;
	dstream_close(s);
}

void
mat_load(const char *path, enum dtype dt, int flags, struct matrix *m)
{
	input *in = in_open(path);
	mat_read(in, dt, flags, m);
	in_close(in);
}

void
mat_free(struct matrix *m)
{
	free(m->data);
	memset(m, 0, sizeof *m);
}

static int
npy_header_text(char *buf, enum dtype dt, size_t rows, size_t cols)
{
	/* magic, version 1.0, header length, dict padded with blanks to the fixed total */
	memcpy(buf, npy_magic, 6);
	buf[6] = 1;
	buf[7] = 0;
	const int hlen = NPY_HEADER_TOTAL - 10;
	buf[8] = (char)(hlen & 0xff);
	buf[9] = (char)(hlen >> 8);
	int n = snprintf(buf + 10, (size_t)hlen + 1,
	    "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }",
	    dt == DT_F64 ? "<f8" : dt == DT_I32 ? "<i4" : "<f4", rows, cols);
	memset(buf + 10 + n, ' ', (size_t)(hlen - n));
	buf[NPY_HEADER_TOTAL - 1] = '\n';
	return NPY_HEADER_TOTAL;
}

void
npy_write_header(output *o, enum dtype dt, size_t rows, size_t cols)
{
	char buf[NPY_HEADER_TOTAL + 1];
	out_write(o, buf, (size_t)npy_header_text(buf, dt, rows, cols));
}

void
npy_patch_header(output *o, uint64_t header_offset, enum dtype dt, size_t rows, size_t cols)
{
	char buf[NPY_HEADER_TOTAL + 1];
	out_pwrite(o, header_offset, buf, (size_t)npy_header_text(buf, dt, rows, cols));
}

/* out_par's formatter for mat_write: rows tab-separated, shortest round-trip numbers. */
static void
format_rows(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct matrix *m = ctx;

	for (size_t i = first; i < first + count; i++) {
		char *w = obuf_room(b, m->cols * 49 + 1);
		for (size_t j = 0; j < m->cols; j++) {
			if (j > 0)
				*w++ = '\t';
			if (m->dtype == DT_F32)
				w += fmt_f32(w, ((const float *)m->data)[i * m->cols + j]);
			else if (m->dtype == DT_I32)
				w += sprintf(w, "%" PRId32, ((const int32_t *)m->data)[i * m->cols + j]);
			else
				w += fmt_f64(w, ((const double *)m->data)[i * m->cols + j]);
		}
		*w++ = '\n';
		b->len = (size_t)(w - b->p);
	}
}

void
mat_write(output *o, const struct matrix *m, int fmt)
{
	if (fmt == FMT_NPY) {
		npy_write_header(o, m->dtype, m->rows, m->cols);
		out_write(o, m->data, m->rows * m->cols * dtype_size(m->dtype));
		return;
	}
	/* chunks of about 64K numbers, formatted on the threads */
	out_par(o, m->rows, MAX((size_t)1, ((size_t)1 << 16) / MAX(m->cols, (size_t)1)),
	    format_rows, (void *)m);
}

void
mat_save(const char *path, const struct matrix *m, int fmt)
{
	output *o = out_open(path);
	mat_write(o, m, fmt);
	out_close(o);
}
