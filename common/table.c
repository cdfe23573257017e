/* table.c: tables of rows read whole (see table.h). */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

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

void
table_read(const char *path, int flags, struct table *t)
{
	input *in = in_open(path);
	size_t avail;
	const unsigned char *p = in_peek(in, 6, &avail);

	memset(t, 0, sizeof *t);
	if (avail == 6 && memcmp(p, "\x93NUMPY", 6) == 0) {
		t->npy = 1;
		mat_read(in, npy_dtype(in), 0, &t->m);
	} else {
		read_text(in, flags & TABLE_KEEP_TEXT, t);
	}
	t->name = xstrdup(in_name(in));
	in_close(in);
}

void
table_free(struct table *t)
{
	mat_free(&t->m);
	free(t->text);
	free(t->line);
	free(t->lineno);
	free((char *)t->name);
	memset(t, 0, sizeof *t);
}

void
table_die_row(const struct table *t, size_t i, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (t->npy)
		die("%s: row %zu: %s", t->name, i + 1, msg);
	die_at(t->name, t->lineno[i], "%s", msg);
}

void *
table_columns(const struct table *t, const size_t *col, size_t k, enum dtype dt,
    const char *what)
{
	size_t n = t->m.rows;
	void *out = xmallocarray(mul_size(n, k, "columns"), dtype_size(dt));

	if (dt == DT_F64) {
		double *d = out;
		#pragma omp parallel for if (n > 100000)
		for (size_t i = 0; i < n; i++)
			for (size_t c = 0; c < k; c++)
				d[k * i + c] = table_cell(t, i, col[c]);
		return out;
	}
	float *f = out;
	size_t bad = SIZE_MAX;
	#pragma omp parallel for reduction(min:bad) if (n > 100000)
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < k; c++) {
			f[k * i + c] = (float)table_cell(t, i, col[c]);
			if (isinf(f[k * i + c]))
				bad = MIN(bad, i);
		}
	if (bad != SIZE_MAX)
		table_die_row(t, bad, "%s is beyond the float32 range", what);
	return out;
}
