/* editdist4r_out.c: editdist4r's results as it writes them: a distance a line (with
 * --path, a TAB and the CIGAR), a tab-separated matrix for --all-vs-all, or float32
 * NPY, a column or the matrix. Separate from the batches that compute them
 * (editdist4r_batch.c), which hand each computed batch over in input order. */
#include "editdist4r_run.h"

#include <stdlib.h>

#include "cli.h"
#include "dense.h"
#include "err.h"
#include "output.h"
#include "timer.h"

void
ed_out_begin(struct ed_run *r, const char *path)
{
	r->out = out_open(path);
	if (r->fmt == FMT_NPY && !r->all) {
		if (!out_seekable(r->out))
			die("-O npy needs a file to write to (-o FILE)");
		npy_write_header(r->out, DT_F32, 0, 1);
	}
}

void
ed_out_matrix(struct ed_run *r, uint64_t rows, uint64_t cols)
{
	if (r->fmt == FMT_NPY)
		npy_write_header(r->out, DT_F32, rows, cols);
	r->cols = cols;
	if (cols == 0 && r->fmt == FMT_TEXT)
		for (uint64_t i = 0; i < rows; i++)
			out_putc(r->out, '\n');
}

static void
put_dist(struct ed_run *r, int32_t d)
{
	if (r->fmt == FMT_NPY) {
		float f = (float)d;
		out_write(r->out, &f, sizeof f);
	} else {
		out_i64(r->out, d);
		/* --all-vs-all: a matrix row is r->cols distances */
		out_putc(r->out, r->cols > 0 && (r->written + 1) % r->cols != 0 ? '\t' : '\n');
	}
	r->written++;
}

void
ed_out_batch(struct ed_run *r, struct ed_batch *b)
{
	double t0 = now_sec();
	for (size_t i = 0; i < b->n; i++) {
		if (!r->path) {
			put_dist(r, b->dist[i]);
			continue;
		}
		out_i64(r->out, b->dist[i]);
		out_putc(r->out, '\t');
		out_puts(r->out, b->dist[i] < 0 ? "*" : b->cigar[i]);
		out_putc(r->out, '\n');
		free(b->cigar[i]);
		b->cigar[i] = NULL;
		r->written++;
	}
	phase_add(PH_WRITE, now_sec() - t0);
}

void
ed_out_end(struct ed_run *r)
{
	if (r->fmt == FMT_NPY && !r->all)
		npy_patch_header(r->out, 0, DT_F32, r->written, 1);
	out_close(r->out);
}
