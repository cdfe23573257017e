/* skyline_out.c: skyline's result: the kept rows as they came (text input, after its
 * header lines), as numbers (NPY input printed as text), as a float32 NPY matrix, or
 * their numbers or count; with --layers each row after its layer. Apart from cmd/skyline.c because printing a large skyline is
 * work of its own: rows and numbers are formatted on the -j threads and written in
 * order (out_par), NPY's floats with a printer faster than fmt_f32 for the usual
 * magnitudes (same text). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dense.h"
#include "err.h"
#include "output.h"
#include "skyline_run.h"
#include "table.h"

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

/* out_par's formatters: rows of keep[] as NPY input's numbers or as text input's lines,
 * and their numbers. */
struct rows {
	const struct table *t;
	const uint32_t *keep;
	const uint32_t *layer;	/* --layers: each row's layer, printed first; else NULL */
};

/* v in decimal at s; returns the end. */
static char *
put_u64(char *s, uint64_t v)
{
	char t[24];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*s++ = t[--n];
	return s;
}

/* --layers: "LAYER<TAB>" before row keep[k]'s line. */
static void
put_layer(const struct rows *r, size_t k, struct obuf *b)
{
	if (r->layer == NULL)
		return;
	char *s = put_u64(obuf_room(b, 24), r->layer[r->keep[k]]);
	*s++ = '\t';
	b->len = (size_t)(s - b->p);
}

static void
format_npy_rows(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct rows *r = ctx;
	const struct table *t = r->t;
	size_t cols = t->m.cols;

	for (size_t k = first; k < first + count; k++) {
		put_layer(r, k, b);
		char *s = obuf_room(b, cols * 49 + 1);
		for (size_t j = 0; j < cols; j++) {
			if (j > 0)
				*s++ = '\t';
			s += t->m.dtype == DT_F64 ? fmt_f64(s, table_npy_cell(t, r->keep[k], j)) :
			    fast_f32(s, (float)table_npy_cell(t, r->keep[k], j));
		}
		*s++ = '\n';
		b->len = (size_t)(s - b->p);
	}
}

static void
format_text_rows(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct rows *r = ctx;

	for (size_t k = first; k < first + count; k++) {
		size_t len;
		const char *s = table_row_text(r->t, r->keep[k], &len);
		put_layer(r, k, b);
		memcpy(obuf_room(b, len), s, len);
		b->len += len;
	}
}

static void
format_index(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct rows *r = ctx;

	for (size_t k = first; k < first + count; k++) {
		put_layer(r, k, b);
		char *s = put_u64(obuf_room(b, 24), (uint64_t)r->keep[k] + 1);
		*s++ = '\n';
		b->len = (size_t)(s - b->p);
	}
}

/* The kept rows, every column, as a float32 NPY matrix. */
static void
print_rows_f32(output *o, const struct table *t, const uint32_t *keep, size_t m)
{
	size_t k = t->k;
	float *row = xmallocarray(MAX(k, 1), sizeof *row);
	npy_write_header(o, DT_F32, m, k);
	for (size_t i = 0; i < m; i++) {
		for (size_t j = 0; j < k; j++)
			row[j] = (float)table_cell(t, keep[i], j);
		out_write(o, row, k * sizeof *row);
	}
	free(row);
}

void
sky_print(output *o, int fmt, enum sky_print what, const struct table *t,
    const uint32_t *keep, size_t m)
{
	struct rows r = {t, keep, NULL};

	if (what == SKY_COUNT) {
		out_u64(o, m);
		out_putc(o, '\n');
	} else if (what == SKY_INDEX) {
		out_par(o, m, 1 << 14, format_index, &r);
	} else if (fmt == FMT_NPY) {
		print_rows_f32(o, t, keep, m);
	} else if (t->npy) {
		out_par(o, m, MAX((size_t)1, ((size_t)1 << 16) / MAX(t->m.cols, (size_t)1)),
		    format_npy_rows, &r);
	} else {
		out_write(o, t->head, t->head_len);
		out_par(o, m, 1 << 12, format_text_rows, &r);
	}
}

void
sky_print_layers(output *o, enum sky_print what, const struct table *t,
    const uint32_t *layer, size_t n, uint32_t layers)
{
	if (what == SKY_COUNT) {
		uint64_t *count = xcalloc((size_t)layers + 1, sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[layer[i]]++;
		for (uint32_t l = 1; l <= layers; l++) {
			out_u64(o, l);
			out_putc(o, '\t');
			out_u64(o, count[l]);
			out_putc(o, '\n');
		}
		free(count);
		return;
	}
	uint32_t *keep = xmallocarray(MAX(n, 1), sizeof *keep);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (layer[i] != 0)
			keep[m++] = (uint32_t)i;
	struct rows r = {t, keep, layer};
	if (what == SKY_INDEX) {
		out_par(o, m, 1 << 14, format_index, &r);
	} else if (t->npy) {
		out_par(o, m, MAX((size_t)1, ((size_t)1 << 16) / MAX(t->m.cols, (size_t)1)),
		    format_npy_rows, &r);
	} else {
		out_write(o, t->head, t->head_len);
		out_par(o, m, 1 << 12, format_text_rows, &r);
	}
	free(keep);
}
