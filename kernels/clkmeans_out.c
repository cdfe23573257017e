/* clkmeans_out.c: clkmeans' results as it writes them: each row's label (and squared
 * distance) one a line, beside the row (--with-rows) or as an NPY matrix, and the
 * centroids. Kept out of cmd/clkmeans.c, which only orchestrates. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clkmeans.h"
#include "err.h"
#include "output.h"
#include "table.h"

/* Labels (and distances) one a line, or as NPY: the labels alone as int32 (as
 * scikit-learn's labels_ are integers), with distances one float32 matrix of two
 * columns (NPY has one dtype an array; labels below 2^24 are exact as float32). */
void
km_write_labels(const char *path, int fmt, const struct km_result *res, size_t n, int dist)
{
	output *o = out_open(path);
	if (fmt == FMT_NPY && !dist) {
		int32_t *v = xmallocarray(MAX(n, (size_t)1), sizeof *v);
		for (size_t r = 0; r < n; r++)
			v[r] = res->labels[r];
		mat_write(o, &(struct matrix){n, 1, DT_I32, v}, FMT_NPY);
		free(v);
	} else if (fmt == FMT_NPY) {
		float *v = xmallocarray(MAX(n * 2, (size_t)1), sizeof *v);
		for (size_t r = 0; r < n; r++) {
			v[r * 2] = (float)res->labels[r];
			v[r * 2 + 1] = (float)res->dists[r];
		}
		mat_write(o, &(struct matrix){n, 2, DT_F32, v}, FMT_NPY);
		free(v);
	} else {
		for (size_t r = 0; r < n; r++) {
			out_u64(o, (uint64_t)res->labels[r]);
			if (dist) {
				out_putc(o, '\t');
				out_f32(o, (float)res->dists[r]);
			}
			out_putc(o, '\n');
		}
	}
	out_close(o);
}

void
km_write_centroids(const char *path, int fmt, const double *C, size_t k, size_t d)
{
	float *v = xmallocarray(k * d, sizeof *v);
	for (size_t i = 0; i < k * d; i++)
		v[i] = (float)C[i];
	struct matrix m = {k, d, DT_F32, v};
	mat_save(path, &m, fmt);
	free(v);
}

/* out_par's formatter for km_write_rows. */
struct rows {
	const struct km_result *res;
	const struct table *t;
	char delim;
	int dist;
};

static void
format_rows(void *ctx, size_t first, size_t count, struct obuf *b)
{
	const struct rows *r = ctx;
	const struct table *t = r->t;

	for (size_t i = first; i < first + count; i++) {
		size_t len = 0;
		const char *s = t->npy ? NULL : table_row_text(t, i, &len);
		char *w = obuf_room(b, len + t->m.cols * 49 + 2 * 49 + 3);
		if (t->npy) {
			for (size_t j = 0; j < t->m.cols; j++) {
				if (j > 0)
					*w++ = '\t';
				w += t->m.dtype == DT_F64 ? fmt_f64(w, table_npy_cell(t, i, j)) :
				    fmt_f32(w, (float)table_npy_cell(t, i, j));
			}
		} else {
			memcpy(w, s, len - 1);	/* without its '\n' */
			w += len - 1;
		}
		*w++ = r->delim;
		w += snprintf(w, 24, "%d", r->res->labels[i]);
		if (r->dist) {
			*w++ = r->delim;
			w += fmt_f32(w, (float)r->res->dists[i]);
		}
		*w++ = '\n';
		b->len = (size_t)(w - b->p);
	}
}

void
km_write_rows(const char *path, const struct km_result *res, const struct table *t,
    int delim, int dist)
{
	struct rows r = {res, t, (char)delim, dist};
	output *o = out_open(path);

	if (t->head_len > 0) {
		/* the header's last line names the columns: add the new ones to it */
		out_write(o, t->head, t->head_len - 1);
		out_putc(o, delim);
		out_puts(o, "cluster");
		if (dist) {
			out_putc(o, delim);
			out_puts(o, "distance");
		}
		out_putc(o, '\n');
	}
	out_par(o, t->m.rows, 4096, format_rows, &r);
	out_close(o);
}
