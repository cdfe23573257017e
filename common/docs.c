/* docs.c: docsim's inputs as records (see docs.h): format detection, and the
 * reading of each format into records with their ids. */
#include "docs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "input.h"
#include "numparse.h"

const char *const doc_format_names[] = {"auto", "text", "libsvm", "mm", "dense", NULL};

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
static enum doc_format
detect(input *in, int ids)
{
	size_t avail, want = (size_t)1 << 16;
	const unsigned char *b = in_peek(in, want, &avail);
	static const unsigned char npy[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

	if (avail >= 6 && memcmp(b, npy, 6) == 0)
		return DOC_DENSE;
	if (mm_is_banner((const char *)b, avail))
		return DOC_MM;
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
		return DOC_LIBSVM;
	if (all_dense && width > 0)
		return DOC_DENSE;
	return DOC_TEXT;
}

/* Splits the slurped input into line records ('\n' ends a line; a final '\r' goes). */
static void
split_lines(struct docs *r, int ids)
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
read_dense_ids(input *in, struct docs *r)
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

enum doc_format
docs_read(const char *path, enum doc_format f, int ids, struct docs *r)
{
	input *in = in_open(path);
	memset(r, 0, sizeof *r);
	r->name = xstrdup(in_name(in));
	if (f == DOC_AUTO)
		f = detect(in, ids);
	switch (f) {
	case DOC_TEXT:
	case DOC_LIBSVM:
		r->buf = in_slurp(in, &r->buflen);
		split_lines(r, ids);
		if (f == DOC_LIBSVM) {
			r->sparse = 1;
			svm_parse((const char *const *)r->text, r->len, r->n, r->name, 1, &r->sp, NULL);
		}
		break;
	case DOC_MM:
		if (ids)
			die("%s: --ids needs text, libsvm or dense text input, not MatrixMarket", r->name);
		r->sparse = 1;
		mm_read(in, &r->sp);
		r->n = r->sp.rows;
		break;
	case DOC_DENSE:
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

void
docs_free(struct docs *r)
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
