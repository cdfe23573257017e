/* kaldi_io.c: Kaldi's rspecifiers, .scp lines and matrix objects (see kaldi_io.h). */
#include "kaldi_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "err.h"

/* Kaldi's arithmetic is float operations one at a time; a fused multiply-add would
 * round differently. gcc -std=c11 contracts nothing; clang is told. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Bytes read at a time where a header's size cannot be checked against the file's
 * (a pipe): a lying header fails at the end of the data, not in malloc. */
#define STEP_BYTES ((size_t)1 << 22)

static int
kspace(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int
fail(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, KALDI_ERR, fmt, ap);
	va_end(ap);
	return -1;
}

static int
mfail(struct kmat *m, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof m->err, fmt, ap);
	va_end(ap);
	m->err_off = off;
	return -1;
}

/* ---- rspecifiers and .scp lines ---- */

int
kaldi_rspec_parse(const char *spec, struct kaldi_rspec *r, char *err)
{
	memset(r, 0, sizeof *r);
	r->file = spec;
	const char *colon = strchr(spec, ':');
	if (colon == NULL)
		return 0;
	/* The words before the colon: plain unless one is ark or scp. */
	int type = KALDI_PLAIN, bad = 0;
	struct kaldi_rspec o = {0};
	for (const char *w = spec; w <= colon;) {
		const char *e = w;
		while (e < colon && *e != ',')
			e++;
		size_t n = (size_t)(e - w);
#define IS(s) (n == sizeof(s) - 1 && memcmp(w, s, n) == 0)
		if (IS("ark") || IS("scp")) {
			if (type != KALDI_PLAIN)
				bad = 1;
			type = IS("ark") ? KALDI_ARK : KALDI_SCP;
		} else if (IS("p") || IS("np")) {
			o.permissive = IS("p");
		} else if (IS("o") || IS("no")) {
			o.once = IS("o");
		} else if (IS("s") || IS("ns")) {
			o.sorted = IS("s");
		} else if (IS("cs") || IS("ncs")) {
			o.called_sorted = IS("cs");
		} else if (IS("bg")) {
			o.background = 1;
		} else if (!IS("b") && !IS("t")) {
			bad = 1;
		}
#undef IS
		w = e + 1;
	}
	if (type == KALDI_PLAIN)
		return 0;
	if (bad)
		return fail(err, "'%s': not an rspecifier Kaldi reads (ark or scp, and the "
		    "options b, t, o, no, p, np, s, ns, cs, ncs, bg, before ':')", spec);
	*r = o;
	r->type = (enum kaldi_rs)type;
	r->file = colon[1] == '\0' || strcmp(colon + 1, "-") == 0 ? NULL : colon + 1;
	return 1;
}

/* "A:B" into *a, *b (or ":" for all: -1, -1); 0, or -1. */
static int
range_part(const char *p, const char *e, int64_t *a, int64_t *b)
{
	*a = *b = -1;
	if (e - p == 1 && *p == ':')
		return 0;
	int64_t v[2];
	for (int i = 0; i < 2; i++) {
		if (p == e || *p < '0' || *p > '9')
			return -1;
		v[i] = 0;
		while (p < e && *p >= '0' && *p <= '9') {
			if (v[i] > (INT32_MAX - 9) / 10)
				return -1;
			v[i] = v[i] * 10 + (*p++ - '0');
		}
		if (i == 0 && (p == e || *p++ != ':'))
			return -1;
	}
	if (p != e)
		return -1;
	*a = v[0];
	*b = v[1];
	return 0;
}

int
kaldi_scp_line(char *line, char **key, char **file, int64_t *offset,
    struct kaldi_range *range, char *err)
{
	char *p = line;
	while (kspace((unsigned char)*p))
		p++;
	*key = p;
	while (*p != '\0' && !kspace((unsigned char)*p))
		p++;
	if (*p != '\0')
		*p++ = '\0';
	while (kspace((unsigned char)*p))
		p++;
	char *e = p + strlen(p);
	while (e > p && kspace((unsigned char)e[-1]))
		*--e = '\0';
	*file = p;
	*offset = -1;
	*range = (struct kaldi_range){0, -1, -1, -1, -1};
	if (e == p)
		return fail(err, "'%s' has no file after its key", *key);
	if (e[-1] == '|')
		return fail(err, "'%s': a pipe ('%s') is not read; run it first", *key, p);
	if (e[-1] == ']') {
		char *open = strrchr(p, '[');
		if (open == NULL || open == p || open + 2 >= e)
			return fail(err, "'%s': '%s' is not a file and a range '[...]'", *key, p);
		char *comma = memchr(open + 1, ',', (size_t)(e - 1 - (open + 1)));
		char *rend = comma ? comma : e - 1;
		range->given = 1;
		if (range_part(open + 1, rend, &range->r1, &range->r2) < 0 ||
		    (comma && range_part(comma + 1, e - 1, &range->c1, &range->c2) < 0) ||
		    range->r1 > range->r2 || range->c1 > range->c2)
			return fail(err, "'%s': '%s' is not a range Kaldi reads ([R1:R2] or "
			    "[R1:R2,C1:C2], ':' for all)", *key, open);
		*open = '\0';
		e = open;
	}
	if (strcmp(p, "-") == 0)
		return fail(err, "'%s': standard input ('-') in an .scp file is not read", *key);
	char *d = e;
	while (d > p && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d < e && d > p && d[-1] == ':') {
		uint64_t v = 0;
		for (char *q = d; q < e; q++) {
			if (v > (uint64_t)(INT64_MAX - 9) / 10)
				return fail(err, "'%s': offset %s is too large", *key, d);
			v = v * 10 + (uint64_t)(*q - '0');
		}
		*offset = (int64_t)v;
		d[-1] = '\0';
	}
	return 0;
}

int
kaldi_read_key(input *in, char **key, size_t *cap, char *err, uint64_t *off)
{
	size_t avail, want = 64, n;
	const unsigned char *p;
	unsigned char c;

	for (;;) {
		p = in_peek(in, 1, &avail);
		if (avail == 0)
			return 0;
		if (!kspace(p[0]))
			break;
		in_read(in, &c, 1);
	}
	*off = in_tell(in);
	for (;;) {
		p = in_peek(in, want, &avail);
		n = 0;
		while (n < avail && !kspace(p[n]))
			n++;
		if (n < avail || avail < want)
			break;
		if (want >= ((size_t)1 << 16))
			return fail(err, "a key longer than %zu bytes (not a Kaldi archive?)", want);
		want *= 2;
	}
	int end = n == avail, after = end ? 0 : p[n];
	if (n + 1 > *cap) {
		*cap = n + 64;
		free(*key);
		*key = xmalloc(*cap);
	}
	in_read(in, *key, n);
	(*key)[n] = '\0';
	if (end)
		return fail(err, "the archive ends after the key '%s'", *key);
	if (after == ' ' || after == '\t')
		in_read(in, &c, 1);
	return 1;
}

/* ---- reading ---- */

const char *
kmat_kind_name(enum kmat_kind k)
{
	static const char *const names[] = {"FM", "DM", "CM", "CM2", "CM3", "text"};
	return names[k];
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float
le_float(const unsigned char *p)
{
	uint32_t u = le32(p);
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static double
le_double(const unsigned char *p)
{
	uint64_t u = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static unsigned char *
raw_room(struct kmat *m, size_t bytes)
{
	if (bytes > m->rawcap) {
		free(m->raw);
		m->rawcap = MAX(bytes, 2 * m->rawcap);
		m->raw = xmalloc(m->rawcap);
	}
	return m->raw;
}

/* Kaldi's ReadBasicType<int32>: the size byte 4, then the value. */
static int
read_int32(struct kmat *m, input *in, const char *what, int32_t *v)
{
	unsigned char b[5];
	uint64_t off = in_tell(in);
	size_t got = in_read(in, b, 5);
	if (got < 5)
		return mfail(m, off + got, "the matrix header ends in its %s", what);
	if (b[0] != 4)
		return mfail(m, off, "expected the size byte 4 of an int32 (%s), found %d", what,
		    (signed char)b[0]);
	*v = (int32_t)le32(b + 1);
	if (*v < 0)
		return mfail(m, off + 1, "negative %s: %d", what, (int)*v);
	return 0;
}

/* The data's bytes against those the input has left, where it knows. */
static int
check_size(struct kmat *m, input *in, uint64_t rows, uint64_t cols, uint64_t esize,
    uint64_t extra)
{
	uint64_t off = in_tell(in);
	if (cols != 0 && rows > (UINT64_MAX / 16 - extra) / cols / esize)
		return mfail(m, off, "%s header: %llu x %llu is too large",
		    kmat_kind_name(m->kind), (unsigned long long)rows, (unsigned long long)cols);
	uint64_t need = rows * cols * esize + extra;
	int64_t rem = in_remaining(in);
	if (rem >= 0 && need > (uint64_t)rem)
		return mfail(m, off, "%s header promises %llu x %llu values (%llu bytes), %lld "
		    "bytes follow", kmat_kind_name(m->kind), (unsigned long long)rows,
		    (unsigned long long)cols, (unsigned long long)need, (long long)rem);
	return 0;
}

static size_t
esize(enum kmat_kind k)
{
	return k == KMAT_DM ? 8 : k == KMAT_FM ? 4 : k == KMAT_CM2 ? 2 : 1;
}

/* Kaldi's CompressedMatrix::Uint16ToFloat and CharToFloat (src/matrix/compressed-matrix.cc),
 * the same expressions: Uint16ToFloat in float with a float constant; CharToFloat's
 * product in float, then times a double constant and the sum in double, rounded to
 * float on return (1/63.0 is not a power of two: float there would round differently). */
static float
u16_to_float(float min_value, float range, uint16_t value)
{
	return min_value + range * 1.52590218966964e-05F * value;
}

static float
char_to_float(float p0, float p25, float p75, float p100, uint8_t value)
{
	if (value <= 64)
		return (float)(p0 + (p25 - p0) * value * (1 / 64.0));
	else if (value <= 192)
		return (float)(p25 + (p75 - p25) * (value - 64) * (1 / 128.0));
	else
		return (float)(p75 + (p100 - p75) * (value - 192) * (1 / 63.0));
}

static int
finite_fail(struct kmat *m, float v, size_t row, size_t col, uint64_t off)
{
	return mfail(m, off, "%s in the %s data (row %zu, column %zu)",
	    isnan(v) ? "NaN" : "Inf", kmat_kind_name(m->kind), row + 1, col + 1);
}

/* Reads need bytes into m->raw in steps that grow with the data that is there, so
 * that a header's size meets the end of a pipe before it meets malloc. */
static int
read_bytes(struct kmat *m, input *in, size_t need)
{
	uint64_t off = in_tell(in);
	size_t have = 0;
	while (have < need) {
		size_t step = MIN(need - have, MAX(have, STEP_BYTES));
		unsigned char *raw = raw_room(m, have + step);
		size_t got = in_read(in, raw + have, step);
		have += got;
		if (got < step)
			return mfail(m, off + have, "the %s data ends after %zu of its %zu bytes",
			    kmat_kind_name(m->kind), have, need);
	}
	return 0;
}

/* Reads everything to the end of a CM matrix (its column headers and columns) and
 * decodes it into m->buf. */
static int
cm_whole(struct kmat *m, input *in, float gmin, float grange)
{
	const size_t rows = m->rows, cols = m->cols;
	uint64_t off = in_tell(in);
	if (read_bytes(m, in, cols * 8 + rows * cols) < 0)
		return -1;
	if (rows == 0) {
		m->rows = m->cols = 0;
		return 0;
	}
	if (rows * cols > m->bufcap) {
		free(m->buf);
		m->bufcap = rows * cols;
		m->buf = xmallocarray(m->bufcap, sizeof *m->buf);
	}
	const unsigned char *hdr = m->raw, *data = m->raw + cols * 8;
	for (size_t j = 0; j < cols; j++) {
		const unsigned char *h = hdr + 8 * j;
		float p0 = u16_to_float(gmin, grange, (uint16_t)(h[0] | h[1] << 8)),
		    p25 = u16_to_float(gmin, grange, (uint16_t)(h[2] | h[3] << 8)),
		    p75 = u16_to_float(gmin, grange, (uint16_t)(h[4] | h[5] << 8)),
		    p100 = u16_to_float(gmin, grange, (uint16_t)(h[6] | h[7] << 8));
		/* a byte's value depends on the byte alone: 256 of them, made once a column */
		float lut[256];
		for (int q = 0; q < 256; q++)
			lut[q] = char_to_float(p0, p25, p75, p100, (uint8_t)q);
		for (size_t i = 0; i < rows; i++) {
			float v = lut[data[j * rows + i]];
			if (!isfinite(v))
				return finite_fail(m, v, i, j, off + cols * 8 + j * rows + i);
			m->buf[i * cols + j] = v;
		}
	}
	m->whole = 1;
	return 0;
}

/* n rows of FM, DM, CM2 or CM3 data at raw (from byte off of the input; direct: raw
 * is dst, FM in place) into dst, the rows from m->done on. */
static size_t
decode(struct kmat *m, const unsigned char *raw, size_t n, float *dst, size_t ncols,
    size_t stride, uint64_t off, int direct)
{
	const size_t cols = m->cols, es = esize(m->kind), rowbytes = cols * es;
	if (m->kind == KMAT_FM || m->kind == KMAT_DM) {
		for (size_t r = 0; r < n; r++) {
			const unsigned char *p = raw + r * rowbytes;
			float *d = dst + r * stride;
			for (size_t j = 0; j < cols; j++) {
				float v;
				if (m->kind == KMAT_FM) {
					v = direct ? d[j] : le_float(p + 4 * j);
				} else {
					double x = le_double(p + 8 * j);
					v = (float)x;
					if (isfinite(x) && !isfinite(v)) {
						mfail(m, off + r * rowbytes + 8 * j, "%g in the DM "
						    "data (row %zu, column %zu) is out of range for "
						    "float32", x, m->done + r + 1, j + 1);
						return SIZE_MAX;
					}
				}
				if (!isfinite(v)) {
					finite_fail(m, v, m->done + r, j, off + r * rowbytes + es * j);
					return SIZE_MAX;
				}
				if (j < ncols && !direct)
					d[j] = v;
			}
		}
	} else {
		/* CompressedMatrix::CopyToMat's float arithmetic, increment made in double */
		const float min_value = m->gmin, increment = m->kind == KMAT_CM2 ?
		    (float)(m->grange * (1.0 / 65535.0)) : (float)(m->grange * (1.0 / 255.0));
		for (size_t r = 0; r < n; r++) {
			const unsigned char *p = raw + r * rowbytes;
			float *d = dst + r * stride;
			for (size_t j = 0; j < ncols; j++) {
				unsigned q = m->kind == KMAT_CM2 ? (unsigned)(p[2 * j] | p[2 * j + 1] << 8)
				    : p[j];
				float v = min_value + q * increment;
				if (!isfinite(v)) {
					finite_fail(m, v, m->done + r, j, off + r * rowbytes + es * j);
					return SIZE_MAX;
				}
				d[j] = v;
			}
		}
	}
	m->done += n;
	return n;
}

/* Rows of a streamed matrix (FM, DM, CM2, CM3) from the input. */
static size_t
stream_read(struct kmat *m, input *in, float *dst, size_t maxrows, size_t ncols,
    size_t stride)
{
	size_t n = MIN(maxrows, m->rows - m->done);
	if (n == 0)
		return 0;
	const size_t rowbytes = m->cols * esize(m->kind), bytes = n * rowbytes;
	const uint64_t off = in_tell(in);
	unsigned char *raw;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	int direct = m->kind == KMAT_FM && ncols == m->cols && stride == m->cols;
	raw = direct ? (unsigned char *)dst : raw_room(m, bytes);
#else
	int direct = 0;
	raw = raw_room(m, bytes);
#endif
	size_t got = in_read(in, raw, bytes);
	if (got < bytes) {
		mfail(m, off + got, "the %s data ends in row %zu of the %zu its header promises",
		    kmat_kind_name(m->kind), m->done + got / rowbytes + 1, m->rows);
		return SIZE_MAX;
	}
	return decode(m, raw, n, dst, ncols, stride, off, direct);
}

/* A text matrix: "[" rows "]", read whole. */
static int
text_whole(struct kmat *m, input *in)
{
	char err[DENSE_ERR];
	size_t nval = 0, len;
	int opened = 0;
	m->rows = m->cols = 0;
	if (m->buf == NULL) {
		m->bufcap = 256;
		m->buf = xmallocarray(m->bufcap, sizeof *m->buf);
	}
	for (;;) {
		uint64_t off = in_tell(in);
		char *line = in_getline(in, &len);
		if (line == NULL)
			return mfail(m, off, opened ? "the text matrix ends without ']'" :
			    "expected '[' to start a text matrix, found the end of the input");
		char *p = line, *e = line + strlen(line);
		if (!opened) {
			while (p < e && kspace((unsigned char)*p))
				p++;
			if (p == e)
				continue;
			if (*p != '[')
				return mfail(m, off + (uint64_t)(p - line), "expected '[' to start "
				    "a text matrix, or \"\\0B\" a binary one");
			p++;
			opened = 1;
		}
		char *close = memchr(p, ']', (size_t)(e - p)), *end = close ? close : e;
		if (close != NULL)
			for (char *t = close + 1; t < e; t++)
				if (!kspace((unsigned char)*t))
					return mfail(m, off + (uint64_t)(t - line), "text after the ']' "
					    "that ends the matrix");
		size_t n;
		while ((n = dense_parse_span(p, end, m->buf + nval, DT_F32, m->bufcap - nval, 0,
		    err)) != SIZE_MAX && n > m->bufcap - nval) {
			m->bufcap = MAX(2 * m->bufcap, nval + n);
			m->buf = xreallocarray(m->buf, m->bufcap, sizeof *m->buf);
		}
		if (n == SIZE_MAX)
			return mfail(m, off, "%s", err);
		if (n > 0) {
			if (m->rows == 0)
				m->cols = n;
			else if (n != m->cols)
				return mfail(m, off, "a row of %zu numbers in a text matrix of %zu "
				    "columns", n, m->cols);
			m->rows++;
			nval += n;
		}
		if (close != NULL)
			break;
	}
	m->whole = 1;
	return 0;
}

int
kmat_begin(struct kmat *m, input *in, int whole)
{
	size_t avail;
	const unsigned char *p = in_peek(in, 2, &avail);
	uint64_t off = in_tell(in);

	m->done = m->rows = m->cols = 0;
	m->whole = 0;
	if (avail < 2 || p[0] != '\0' || p[1] != 'B') {
		m->kind = KMAT_TEXT;
		if (avail > 0 && p[0] == '\0')
			return mfail(m, off, "expected \"\\0B\" to start a binary matrix");
		return text_whole(m, in);
	}
	unsigned char tok[5];
	size_t got;
	in_read(in, tok, 2);
	off += 2;
	p = in_peek(in, 4, &avail);
	size_t n = 0;
	while (n < avail && p[n] != ' ')
		n++;
#define TOK(s) (n == sizeof(s) - 1 && memcmp(p, s, n) == 0)
	if (n == avail)
		return mfail(m, off, avail == 0 ? "the input ends after \"\\0B\"" :
		    "expected a matrix token (FM, DM, CM, CM2 or CM3) and a space");
	else if (TOK("FM"))
		m->kind = KMAT_FM;
	else if (TOK("DM"))
		m->kind = KMAT_DM;
	else if (TOK("CM"))
		m->kind = KMAT_CM;
	else if (TOK("CM2"))
		m->kind = KMAT_CM2;
	else if (TOK("CM3"))
		m->kind = KMAT_CM3;
	else
		return mfail(m, off, "expected a matrix token (FM, DM, CM, CM2 or CM3), found "
		    "'%.*s'", (int)n, (const char *)p);
#undef TOK
	in_read(in, tok, n + 1);
	int32_t rows, cols;
	if (m->kind == KMAT_FM || m->kind == KMAT_DM) {
		if (read_int32(m, in, "row count", &rows) < 0 ||
		    read_int32(m, in, "column count", &cols) < 0)
			return -1;
		if (rows == 0 || cols == 0)
			return 0;	/* Kaldi's Resize: empty */
	} else {
		unsigned char h[16];
		off = in_tell(in);
		if ((got = in_read(in, h, 16)) < 16)
			return mfail(m, off + got, "the %s header ends after %zu of its 16 bytes",
			    kmat_kind_name(m->kind), got);
		m->gmin = le_float(h);
		m->grange = le_float(h + 4);
		rows = (int32_t)le32(h + 8);
		cols = (int32_t)le32(h + 12);
		if (rows < 0 || cols < 0)
			return mfail(m, off + (rows < 0 ? 8 : 12), "negative %s in the %s header: "
			    "%d", rows < 0 ? "row count" : "column count", kmat_kind_name(m->kind),
			    (int)(rows < 0 ? rows : cols));
		if (cols == 0)
			return 0;	/* Kaldi reads no more */
		if (!isfinite(m->gmin) || !isfinite(m->grange))
			return mfail(m, off, "the %s header's minimum or range is not finite",
			    kmat_kind_name(m->kind));
	}
	if (check_size(m, in, (uint64_t)rows, (uint64_t)cols, esize(m->kind),
	    m->kind == KMAT_CM ? 8 * (uint64_t)cols : 0) < 0)
		return -1;
	m->rows = (size_t)rows;
	m->cols = (size_t)cols;
	if (m->kind == KMAT_CM)
		return cm_whole(m, in, m->gmin, m->grange);
	if (m->kind != KMAT_FM && m->kind != KMAT_DM && rows == 0) {
		m->cols = 0;
		return 0;
	}
	m->data_off = in_tell(in);
	if (!whole)
		return 0;
	/* Whole: the bytes first (in steps), then the floats they hold. */
	if (read_bytes(m, in, m->rows * m->cols * esize(m->kind)) < 0)
		return -1;
	if (m->rows * m->cols > m->bufcap) {
		free(m->buf);
		m->bufcap = m->rows * m->cols;
		m->buf = xmallocarray(m->bufcap, sizeof *m->buf);
	}
	if (decode(m, m->raw, m->rows, m->buf, m->cols, m->cols, m->data_off, 0) == SIZE_MAX)
		return -1;
	m->done = 0;
	m->whole = 1;
	return 0;
}

size_t
kmat_read(struct kmat *m, input *in, float *dst, size_t maxrows, size_t ncols, size_t stride)
{
	if (!m->whole)
		return stream_read(m, in, dst, maxrows, ncols, stride);
	size_t n = MIN(maxrows, m->rows - m->done);
	for (size_t r = 0; r < n; r++)
		memcpy(dst + r * stride, m->buf + (m->done + r) * m->cols, ncols * sizeof *dst);
	m->done += n;
	return n;
}

int
kmat_range(struct kmat *m, const struct kaldi_range *r)
{
	if (!r->given)
		return 0;
	int64_t rows = (int64_t)m->rows, cols = (int64_t)m->cols;
	int64_t r1 = r->r1 < 0 ? 0 : r->r1, r2 = r->r1 < 0 ? rows - 1 : r->r2;
	int64_t c1 = r->c1 < 0 ? 0 : r->c1, c2 = r->c1 < 0 ? cols - 1 : r->c2;
	if (r1 >= rows || r2 >= rows + 3 || c2 >= cols)
		return mfail(m, m->err_off, "range [%lld:%lld,%lld:%lld] is outside the matrix "
		    "of %lld x %lld", (long long)r1, (long long)r2, (long long)c1, (long long)c2,
		    (long long)rows, (long long)cols);
	if (r2 >= rows)
		r2 = rows - 1;
	size_t nr = (size_t)(r2 - r1 + 1), nc = (size_t)(c2 - c1 + 1);
	for (size_t i = 0; i < nr; i++)
		memmove(m->buf + i * nc, m->buf + ((size_t)r1 + i) * m->cols + c1, nc * sizeof *m->buf);
	m->rows = nr;
	m->cols = nc;
	m->done = 0;
	return 0;
}

int
kmat_skip(struct kmat *m, input *in)
{
	if (m->whole || m->done == m->rows) {
		m->done = m->rows;
		return 0;
	}
	/* the rows not read, as bytes: what they hold is not used */
	size_t left = (m->rows - m->done) * m->cols * esize(m->kind);
	uint64_t off = in_tell(in);
	unsigned char *raw = raw_room(m, MIN(left, STEP_BYTES));
	while (left > 0) {
		size_t k = MIN(left, STEP_BYTES), got = in_read(in, raw, k);
		if (got < k)
			return mfail(m, in_tell(in), "the %s data ends before its header's %zu "
			    "rows (%llu bytes short)", kmat_kind_name(m->kind), m->rows,
			    (unsigned long long)(left - got));
		left -= k;
	}
	(void)off;
	m->done = m->rows;
	return 0;
}

void
kmat_free(struct kmat *m)
{
	free(m->buf);
	free(m->raw);
	memset(m, 0, sizeof *m);
}

/* ---- writing ---- */

static void
put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

void
kaldi_write_fm(output *o, const char *key, const float *v, size_t rows, size_t cols)
{
	unsigned char h[16] = {' ', '\0', 'B', 'F', 'M', ' ', 4};
	if (rows == 0 || cols == 0)
		rows = cols = 0;
	if (rows > INT32_MAX || cols > INT32_MAX)
		die("%s: a matrix of %zu x %zu is too large for a Kaldi archive", key, rows, cols);
	put_le32(h + 7, (uint32_t)rows);
	h[11] = 4;
	put_le32(h + 12, (uint32_t)cols);
	out_puts(o, key);
	out_write(o, h, sizeof h);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	out_write(o, v, rows * cols * sizeof *v);
#else
	for (size_t i = 0; i < rows * cols; i++) {
		unsigned char b[4];
		uint32_t u;
		memcpy(&u, v + i, 4);
		put_le32(b, u);
		out_write(o, b, 4);
	}
#endif
}
